"""scripts/i18n.py: translated editions are built from catalogs kept beside the English source,
and a change in the English text shows up as a fuzzy or untranslated entry, never silent drift."""

from __future__ import annotations

import re
import sys
from pathlib import Path

import nbformat
import polib
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import i18n  # noqa: E402


def _nb(*markdown: str, code: str = "print(1)"):
    nb = nbformat.v4.new_notebook()
    for k, text in enumerate(markdown):
        cell = nbformat.v4.new_markdown_cell(text)
        cell["id"] = f"m{k}"
        nb.cells.append(cell)
    cell = nbformat.v4.new_code_cell(code)
    cell["id"] = "c0"
    cell.outputs = [nbformat.v4.new_output("stream", text="1\n")]
    nb.cells.append(cell)
    return nb


def test_paragraphs_keep_fenced_code_whole_and_skip_pure_code():
    text = "# Title\n\nOne\ntwo\n\n```python\nx = 1\n\ny = 2\n```\n\n| a | b |\n|---|---|\n\n---"
    blocks = i18n.paragraphs(text)
    assert blocks == ["# Title", "One\ntwo", "```python\nx = 1\n\ny = 2\n```",
                      "| a | b |\n|---|---|", "---"]
    assert [i18n.translatable(b) for b in blocks] == [True, True, False, True, False]


def test_update_keeps_translations_marks_changes_fuzzy_and_retires_old_entries():
    po = polib.POFile(wrapwidth=0)
    nb = _nb("# Replicas\n\nThe leader takes writes.", "Followers fetch.")
    assert i18n.update_catalog(nb, po) == {"kept": 0, "fuzzy": 0, "new": 3, "obsolete": 0}
    korean = ["# 복제본", "리더가 쓰기를 받습니다.", "팔로워가 가져옵니다."]
    for e, ko in zip(po, korean, strict=True):
        e.msgstr = ko
    assert i18n.problems(nb, po) == []
    # the English changes: one paragraph edited, one removed, one added
    nb2 = _nb("# Replicas\n\nThe leader takes all writes.", "A new paragraph about racks.")
    counts = i18n.update_catalog(nb2, po)
    assert counts == {"kept": 1, "fuzzy": 1, "new": 1, "obsolete": 1}
    fuzzy = [e for e in po if "fuzzy" in e.flags]
    assert len(fuzzy) == 1 and fuzzy[0].msgstr == "리더가 쓰기를 받습니다."
    assert fuzzy[0].previous_msgid == "The leader takes writes."
    issues = i18n.problems(nb2, po)
    assert len(issues) == 2
    assert issues[0].startswith("fuzzy") and issues[1].startswith("untranslated")


def test_a_heading_must_stay_a_heading():
    # notebook 07's "## 8." heading was once translated as the paragraph after it: the Korean
    # edition lost its section 8 heading and showed that paragraph twice
    po = polib.POFile(wrapwidth=0)
    nb = _nb("## 8. Watch it\n\n> **Note** a quote", "<details><summary>Why</summary>")
    i18n.update_catalog(nb, po)
    for e, ko in zip(po, ["지켜보기", "> **참고** 인용", "<details><summary>왜</summary>"],
                     strict=True):
        e.msgstr = ko
    (issue,) = i18n.problems(nb, po)
    assert "heading translated as paragraph" in issue and "## 8. Watch it" in issue
    po[0].msgstr = "## 8. 지켜보기"
    assert i18n.problems(nb, po) == []


def test_build_translates_markdown_keeps_code_and_reroots_links():
    nb = _nb("# Replicas\n\nSee [the README](../README.md) and [02](02-in-sync-replicas.ipynb).",
             code="c = Cluster(3)\nc.run(1000)")
    po = polib.POFile(wrapwidth=0)
    i18n.update_catalog(nb, po)
    po[0].msgstr = "# 복제본"
    po[1].msgstr = "[README](../README.md)와 [02](02-in-sync-replicas.ipynb)를 보세요."
    out = i18n.build_notebook(nb, po, "ko", "01-x.ipynb")
    assert out.cells[0].source == ("# 복제본\n\n[README](../../README.md)와 "
                                   "[02](02-in-sync-replicas.ipynb)를 보세요.")
    assert out.cells[1].source == nb.cells[1].source            # code identical
    assert out.cells[1].outputs == [] and out.cells[1].execution_count is None
    assert out.metadata["kafkasim"] == {"language": "ko", "translated_from": "../01-x.ipynb"}
    assert i18n.same_except_outputs(out, i18n.build_notebook(nb, po, "ko", "01-x.ipynb"))


def test_a_fuzzy_entry_is_built_in_english():
    nb = _nb("Old text here.")
    po = polib.POFile(wrapwidth=0)
    i18n.update_catalog(nb, po)
    po[0].msgstr = "옛 글"
    po[0].flags.append("fuzzy")
    assert i18n.build_notebook(nb, po, "ko", "x.ipynb").cells[0].source == "Old text here."


def test_a_malformed_catalog_names_the_file(tmp_path):
    bad = tmp_path / "x.po"
    bad.write_text('msgid "a"\nmsgstr "b"\nnot po syntax\n', encoding="utf-8")
    with pytest.raises(SystemExit, match=r"x\.po.*line 3"):
        i18n.load_catalog(bad)


def test_every_notebook_has_a_catalog_with_every_paragraph():
    """The catalogs follow the English notebooks (`i18n.py update ko` was run after each edit)."""
    for path in i18n.english_notebooks():
        cat = i18n.catalog_path("ko", path)
        assert cat.exists(), f"{cat} missing: run scripts/i18n.py update ko"
        po = i18n.load_catalog(cat)
        keys = {(e.msgctxt, e.msgid) for e in po if not e.obsolete}
        missing = [p[:50] for c, p in i18n.english_entries(nbformat.read(path, as_version=4))
                   if (c, p) not in keys]
        assert not missing, f"{cat.name} lacks {len(missing)} paragraph(s), e.g. {missing[:2]}"


# -- the prose kafkasim.course prints -----------------------------------------------------------
def test_course_messages_are_extracted_from_tr_calls(tmp_path):
    (tmp_path / "mod.py").write_text(
        'from kafkasim.course.i18n import tr\n'
        'def f(b):\n'
        '    return tr("the leader is broker {b}.", b=b) + tr("PASS") + tr(name) + other("x") \\\n'
        '        + N_("leads partitions")\n',
        encoding="utf-8")
    assert sorted(i18n.course_messages(tmp_path)) == [(i18n.RUNTIME_CTXT, "PASS"),
                                                      (i18n.RUNTIME_CTXT, "leads partitions"),
                                                      (i18n.RUNTIME_CTXT,
                                                       "the leader is broker {b}.")]


def test_a_module_context_keeps_a_label_apart_from_the_same_word_elsewhere(tmp_path,
                                                                         monkeypatch):
    """The player's "broker" button (msgctxt kafkasim.player, its module's I18N_CONTEXT) does not
    translate the course tables' "broker" header (kafkasim.course), nor the other way round:
    adding a label never changes a saved table."""
    from kafkasim.course import i18n as rt

    (tmp_path / "ui.py").write_text('I18N_CONTEXT = "kafkasim.player"\nx = tr("broker")\n',
                                    encoding="utf-8")
    (tmp_path / "table.py").write_text('x = N_("broker")\n', encoding="utf-8")
    assert sorted(i18n.course_messages(tmp_path)) == [("kafkasim.course", "broker"),
                                                      ("kafkasim.player", "broker")]
    po = polib.POFile(wrapwidth=0)
    po.append(polib.POEntry(msgctxt="kafkasim.player", msgid="broker", msgstr="브로커"))
    po.save(str(tmp_path / "ko.po"))
    monkeypatch.setattr(rt, "LOCALE", tmp_path)
    rt.catalog.cache_clear()
    try:
        rt.set_language("ko")
        assert rt.tr("broker", _context="kafkasim.player") == "브로커"
        assert rt.tr("broker") == "broker"
    finally:
        rt.set_language(None)
        rt.catalog.cache_clear()


def test_tr_reads_the_catalog_of_the_course_language(tmp_path, monkeypatch):
    from kafkasim.course import i18n as rt

    po = polib.POFile(wrapwidth=0)
    po.append(polib.POEntry(msgctxt=i18n.RUNTIME_CTXT, msgid="the leader is broker {b}.",
                            msgstr="리더는 브로커 {b}입니다."))
    po.append(polib.POEntry(msgctxt=i18n.RUNTIME_CTXT, msgid="old", msgstr="옛", flags=["fuzzy"]))
    po.save(str(tmp_path / "ko.po"))
    monkeypatch.setattr(rt, "LOCALE", tmp_path)
    rt.catalog.cache_clear()
    try:
        rt.set_language("ko")
        assert rt.tr("the leader is broker {b}.", b=2) == "리더는 브로커 2입니다."
        assert rt.tr("old") == "old"                       # fuzzy: not trusted
        assert rt.tr("not in the catalog") == "not in the catalog"
        rt.set_language("en")
        assert rt.tr("the leader is broker {b}.", b=2) == "the leader is broker 2."
        with pytest.raises(ValueError, match="unknown course language 'fr'"):
            rt.set_language("fr")
    finally:
        rt.set_language(None)
        rt.catalog.cache_clear()


def test_the_language_follows_the_environment_and_the_notebook_folder(tmp_path, monkeypatch):
    from kafkasim.course import i18n as rt

    monkeypatch.delenv("KAFKASIM_LANG", raising=False)
    ko = tmp_path / "notebooks" / "ko"
    ko.mkdir(parents=True)
    monkeypatch.chdir(ko)
    assert rt.language() == "ko"
    monkeypatch.chdir(tmp_path / "notebooks")
    assert rt.language() == "en"
    monkeypatch.setenv("KAFKASIM_LANG", "ko")
    assert rt.language() == "ko"


# notebooks whose Korean translation is still to come (its English source is being changed)
TRANSLATION_PENDING: set[str] = set()


@pytest.mark.parametrize("path", i18n.english_notebooks(), ids=lambda p: p.name.split("-")[0])
def test_the_korean_edition_is_complete_and_up_to_date(path):
    """No untranslated or fuzzy entry, and notebooks/ko/ is what the catalogs build (code cells
    identical to the English ones, executed)."""
    if path.name.split("-")[0] in TRANSLATION_PENDING:
        pytest.skip("translation pending")
    nb = nbformat.read(path, as_version=4)
    po = i18n.load_catalog(i18n.catalog_path("ko", path))
    assert i18n.problems(nb, po) == []
    target = i18n.translated_path("ko", path)
    assert target.exists(), f"{target} missing: run scripts/i18n.py build ko"
    ko = nbformat.read(target, as_version=4)
    want = i18n.build_notebook(nb, po, "ko", path.name, i18n.translated_titles("ko"))
    assert i18n.same_except_outputs(ko, want), f"{target.name} is out of date: i18n.py build ko"
    assert all(c.execution_count is not None for c in ko.cells if c.cell_type == "code"), \
        f"{target.name} has cells never run: scripts/execute-notebooks.py"


def test_nav_links_use_the_translated_titles_and_fall_back_to_english():
    titles = {"02-x.ipynb": "02 · 동기화된 복제본: 어떤 복제본"}
    nav = "<!-- nav -->\n---\n[← 02 · In-sync](02-x.ipynb) · [90 · Exp →](90-y.ipynb)"
    assert i18n._retitle(nav, titles) == ("<!-- nav -->\n---\n[← 02 · 동기화된 복제본](02-x.ipynb)"
                                          " · [90 · Exp →](../90-y.ipynb)")


HANGUL = re.compile(r"[\uac00-\ud7a3]")
NUMBER = re.compile(r"\d+(?:\.\d+)?")


def _text_outputs(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            parts.append(out.get("text", ""))
        elif "text/plain" in out.get("data", {}):
            parts.append(out["data"]["text/plain"])
    return "".join(parts)


@pytest.mark.parametrize("path", i18n.english_notebooks(), ids=lambda p: p.name.split("-")[0])
def test_korean_notebooks_print_the_same_results_where_the_output_is_not_prose(path):
    """Code is identical, so every nbval-checked output without Korean in it (tables, numbers,
    traces) must be the English notebook's, character for character; one with Korean in it
    (translated prose or table headers) must print the same numbers (in any order: Korean puts
    words, and so numbers, in another order)."""
    target = i18n.translated_path("ko", path)
    if not target.exists():
        pytest.skip("no Korean notebook yet")
    en = {c.get("id"): c for c in nbformat.read(path, as_version=4).cells}
    ko = nbformat.read(target, as_version=4)
    for cell in ko.cells:
        if cell.cell_type != "code" or "nbval-check-output" not in cell.metadata.get("tags", []):
            continue
        mine, theirs = _text_outputs(cell), _text_outputs(en[cell.get("id")])
        where = f"{target.name} cell {cell.get('id')}"
        if HANGUL.search(mine):       # words from kafkasim/course/locale/ko.po
            assert sorted(NUMBER.findall(mine)) == sorted(NUMBER.findall(theirs)), \
                f"{where} prints other numbers than the English"
        else:
            assert mine == theirs, f"{where} differs from the English"


def test_korean_outputs_are_compared_by_their_numbers():
    assert sorted(NUMBER.findall("브로커 3의 ISR [1, 2], 0.5 s")) == \
        sorted(NUMBER.findall("ISR [1, 2] of broker 3, 0.5 s"))
    assert sorted(NUMBER.findall("리더 2")) != sorted(NUMBER.findall("leader 3"))


def test_check_feedback_is_korean_with_set_language_and_english_by_default(monkeypatch, capsys):
    from kafkasim.course import checks
    from kafkasim.course import i18n as rt

    monkeypatch.delenv("KAFKASIM_LANG", raising=False)
    monkeypatch.chdir(REPO)
    leos, isr = {1: 5, 2: 4, 3: 2}, [1, 2]
    try:
        assert rt.language() == "en"
        assert checks.check_hw(leos, isr, 4).message == (
            "PASS: HW 4: the smallest LEO in the ISR. Offsets 0..3 are committed.")
        assert capsys.readouterr().out.startswith("PASS: HW 4")
        rt.set_language("ko")
        ok = checks.check_hw(leos, isr, 4)
        assert ok and ok.message == ("통과: HW 4: ISR에서 가장 작은 LEO입니다. "
                                     "오프셋 0부터 3까지 커밋되었습니다.")
        assert capsys.readouterr().out == ok.message + "\n"
        wrong = checks.check_hw(leos, isr, 1)
        assert not wrong and wrong.message == "아쉽습니다: ISR 멤버 중 가장 작은 LEO를 고르세요."
        form = checks.check_hw(leos, isr, "4").message
        assert form.startswith("아쉽습니다(형식): ") and "4를 따옴표 없이 쓰세요." in form
        todo = checks.check_hw(leos, isr, None)
        assert todo.message.startswith("아직 답하지 않았습니다: ")
        assert "#777777" in todo._repr_html_()            # styled as "not answered", not "fail"
        assert "<b style='color:#17601f'>✔ 통과</b>: " in ok._repr_html_()
    finally:
        rt.set_language(None)
    assert checks.check_hw(leos, isr, 1).message == (
        "Not quite: take the smallest LEO among the ISR members.")


def test_every_course_message_has_a_korean_translation_with_the_same_fields():
    import string

    from kafkasim.course import i18n as rt

    po = polib.pofile(str(i18n.runtime_catalog_path("ko")), wrapwidth=0)
    by_id = {(e.msgctxt, e.msgid): e for e in po if not e.obsolete}
    fmt = string.Formatter()

    def fields(text: str) -> set[tuple[str, str | None, str | None]]:
        # a translation may add a Korean particle to a field's spec ("{b:는}", "{t:.1f:로}")
        return {(f, c, rt.split_particle(s)[0]) for _lit, f, s, c in fmt.parse(text)
                if f is not None}

    for ctxt, msgid in i18n.course_messages():
        entry = by_id.get((ctxt, msgid))
        assert entry is not None and entry.msgstr and "fuzzy" not in entry.flags, msgid
        try:
            want = fields(msgid)
        except ValueError:   # not a template (no fields): printed as it is, braces and all
            assert entry.msgstr.count("{") == msgid.count("{"), msgid
        else:
            assert fields(entry.msgstr) == want, msgid
        assert entry.msgstr.startswith("\n") == msgid.startswith("\n"), msgid


def test_text_tables_align_translated_headers_by_display_width():
    from kafkasim.course.common import text_table

    lines = str(text_table([{"record": "o0", "리더 1에서": "yes"}])).splitlines()
    assert lines[0] == "record  리더 1에서"
    assert lines[1] == "------  ----------"          # 10 columns: 4 Hangul (2 each) + 2
    assert lines[2] == "o0      yes"
    ascii_only = str(text_table([{"a": "xyz"}])).splitlines()
    assert ascii_only == ["a", "---", "xyz"]


def test_the_notebooks_own_table_headers_read_in_korean():
    """Headers the notebooks' code cells and isr_changes give text_table (02a, 05, 07, 08, 12)
    are catalog words: a Korean table shows no English header."""
    from kafkasim.course import i18n as rt
    from kafkasim.course.common import text_table

    row = {"time_ms": 1, "live": [2, 3], "error": "NONE", "answer": "NONE",
           "you (acks=all)": "ok"}
    assert str(text_table([row])).splitlines()[0].split() == \
        ["time_ms", "live", "error", "answer", "you", "(acks=all)"]
    try:
        rt.set_language("ko")
        head = str(text_table([row])).splitlines()[0]
    finally:
        rt.set_language(None)
    assert not re.search(r"time_ms|live|error|answer|you", head), head
    assert head.split("  ")[0] == "시각(ms)"


def test_every_tr_call_in_kafkasim_is_collected_for_the_catalog():
    """Whatever module prints through tr() (or marks a message N_()), i18n.py collects it, so the
    completeness test above covers every message kafkasim can print in a course language."""
    import ast

    collected = set(i18n.course_messages())
    missed = []
    for path in sorted((REPO / "kafkasim").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        ctxt = i18n.module_context(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("tr", "N_") \
                    and node.args and isinstance(node.args[0], ast.Constant):
                if (ctxt, node.args[0].value) not in collected:
                    missed.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not missed, f"tr() messages i18n.py does not collect: {missed}"


# -- code comments (issue 34): the code is the same in both editions, its comments are not ------
def test_code_comments_are_catalog_entries_after_the_markdown():
    code = ('x = "# not a comment"   # the leader dies\n'
            'import os  # noqa: F401\n'
            '# ---\n'
            'c.run(100)  # one more simulated second')
    assert [t for _s, _e, t in i18n.code_comments(code)] == ["the leader dies",
                                                               "one more simulated second"]
    nb = _nb("# Title", code=code)
    assert i18n.english_entries(nb) == [("m0", "# Title"), ("c0", "the leader dies"),
                                        ("c0", "one more simulated second")]
    assert i18n.code_comments("%%time\nx = (") == []          # does not tokenize: no comments


def test_build_translates_comments_and_keeps_the_code():
    code = 'c.crash(1)        # the leader dies\nc.run(100)  # one more simulated second'
    nb = _nb("# Title", code=code)
    po = polib.POFile(wrapwidth=0)
    i18n.update_catalog(nb, po)
    po[0].msgstr = "# 제목"
    po[1].msgstr = "리더가 죽습니다"                 # the second comment left untranslated
    out = i18n.build_notebook(nb, po, "ko", "x.ipynb")
    assert out.cells[1].source == ('c.crash(1)        # 리더가 죽습니다\n'
                                   'c.run(100)  # one more simulated second')
    assert i18n.code_differs(nb, out) == []
    out.cells[1].source = out.cells[1].source.replace("crash(1)", "crash(2)")
    assert i18n.code_differs(nb, out) == ["c0"]
    assert [e.msgid for e in po if not e.msgstr] == ["one more simulated second"]


def test_a_changed_comment_keeps_the_saved_outputs():
    old = _nb("# Title", code="c.run(100)  # the old words")
    old.cells[1].execution_count = 1
    new = _nb("# Title", code="c.run(100)  # 새 주석")
    assert i18n.keep_outputs(old, new) == 0 and new.cells[1].outputs == old.cells[1].outputs


def test_an_obsolete_entry_wanted_again_comes_back_with_its_translation():
    nb = _nb("# Title", code="c.run(100)  # the leader dies")
    po = polib.POFile(wrapwidth=0)
    i18n.update_catalog(nb, po)
    for e, ko in zip(po, ["# 제목", "리더가 죽습니다"], strict=True):
        e.msgstr = ko
    i18n.update_catalog(_nb("# Title", code="c.run(100)"), po)     # an old script: no comments
    assert [e.obsolete for e in po] == [False, True]
    counts = i18n.update_catalog(nb, po)
    assert counts["kept"] == 2 and i18n.problems(nb, po) == []


def test_explorer_titles_in_the_notebooks_are_collected_and_translated():
    """``explore(..., title="...")`` in a code cell: the code is the same in both editions, the
    title reads in the course language (kafkasim.course.explore passes it through tr)."""
    from kafkasim.course import i18n as rt
    from kafkasim.course.explore import explore

    titles = {m for _c, m in i18n.notebook_titles()}
    assert "Where do the replicas go?" in titles
    table = rt.catalog("ko")
    assert all(("kafkasim.course", t) in table for t in titles)
    try:
        rt.set_language("ko")
        ex = explore(lambda n=1: f"n={n}", {"n": [1, 2]}, title="Where do the replicas go?")
        assert ex.title == "복제본은 어디에 놓일까요?"
    finally:
        rt.set_language(None)
