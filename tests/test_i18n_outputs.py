"""The Korean notebooks' saved outputs carry no English prose from the course layer.

Code cells are the same in both editions, so a Korean notebook prints what the English one does,
except the prose ``kafkasim.course`` and ``kafkasim.widgets`` print: that goes through
``tr()`` and ``kafkasim/course/locale/ko.po``. This test reads every saved output of
``notebooks/ko/`` and finds English sentences in it (runs of four or more English words). Each
must come from somewhere that stays English on purpose:

* the notebook's own code (a ``print("...")`` in a code cell: identical in both editions);
* the simulator below the course layer: Kafka's error messages, the trace's event details, the
  invariant checkers' messages, the scenario files, the sweeps' validation errors (English, as
  Kafka's own logs are), but not ``kafkasim/experiments/notebook.py`` (notebook 90's captions
  and checks, translated);
* a cell that prints source code (``show_source``), or an error's traceback.

Prose found in the course or widget code, or nowhere, fails: it should go through ``tr()``.
"""

from __future__ import annotations

import ast
import re
import sys
from functools import cache
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import i18n  # noqa: E402

PACKAGE = REPO / "kafkasim"
TRANSLATED_LAYERS = (PACKAGE / "course", PACKAGE / "widgets")
TRANSLATED_FILES = (PACKAGE / "experiments" / "notebook.py",)   # notebook 90's captions, checks
HANGUL = re.compile(r"[\uac00-\ud7a3]")
# four or more English words in a row: a sentence, not a table header or a config key
_WORD = r"\b[A-Za-z][a-z]+(?:'[a-z]+)?\b"
SENTENCE = re.compile(_WORD + r"(?:[,;:]? " + _WORD + r"){3,}")
# cells that print source code (the notebooks' "read Kafka's rule" cells)
SOURCE_LISTING = re.compile(r"\bshow_source\(|getsource\(")
PENDING: set[str] = set()              # notebooks whose translation is in progress


def _literal_text(path: Path) -> str:
    """Every string constant of a Python file (f-string parts included), newline separated."""
    parts = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            parts.append(node.value)
    return "\n".join(parts)


@cache
def simulator_text() -> str:
    """The literal text of the simulator below the course layer, and its scenario files."""
    texts = [_literal_text(p) for p in sorted(PACKAGE.rglob("*.py"))
             if not any(layer in p.parents for layer in TRANSLATED_LAYERS)
             and p not in TRANSLATED_FILES]
    texts += [p.read_text(encoding="utf-8") for p in sorted(PACKAGE.rglob("*.toml"))]
    return _norm("\n".join(texts))


def _norm(text: str) -> str:
    return re.sub(r"[ \t]+", " ", text)


def sentences(text: str) -> list[str]:
    """The English sentences of ``text``'s lines without Hangul (a translated line may quote an
    English name or a checker's message)."""
    out = []
    for line in text.splitlines():
        if HANGUL.search(line):
            continue
        out += [m.group(0) for m in SENTENCE.finditer(line)]
    return out


def _outputs(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            parts.append(out.get("text", ""))
        elif "text/plain" in out.get("data", {}):
            parts.append(out["data"]["text/plain"])
    return "\n".join(parts)


def english_prose(nb) -> list[tuple[str, str]]:
    """(cell id, sentence) for every English sentence in the notebook's outputs that neither its
    code nor the simulator's own messages explain."""
    code = _norm("\n".join(c.source for c in nb.cells if c.cell_type == "code"))
    found = []
    for cell in nb.cells:
        if cell.cell_type != "code" or SOURCE_LISTING.search(cell.source):
            continue
        for s in sentences(_outputs(cell)):
            if s in code or s in simulator_text():
                continue
            found.append((cell.get("id"), s))
    return found


def test_the_scan_finds_course_prose_and_passes_code_and_simulator_text():
    nb = nbformat.v4.new_notebook()
    cell = nbformat.v4.new_code_cell('print("the leader shrinks the ISR", x)')
    cell["id"] = "c1"
    cell.outputs = [nbformat.v4.new_output("stream", text=(
        "the leader shrinks the ISR 3\n"                    # the cell's own print
        "no violation, nothing lost at all here\n"          # course prose left in English
        "위반 없음, 잃은 것 없음: the checker's own words stay\n"    # translated line
        "process killed; page cache survives\n"))]          # a trace detail (core/events.py)
    nb.cells.append(cell)
    assert english_prose(nb) == [("c1", "no violation, nothing lost at all here")]


@pytest.mark.parametrize("path", i18n.english_notebooks(), ids=lambda p: p.name[:2])
def test_korean_outputs_have_no_english_prose_from_the_course(path):
    if path.name[:2] in PENDING:
        pytest.skip("translation pending")
    target = i18n.translated_path("ko", path)
    if not target.exists():
        pytest.skip("no Korean notebook yet")
    found = english_prose(nbformat.read(target, as_version=4))
    assert not found, (f"{target.name}: English prose in the outputs (route it through tr() and "
                       f"kafkasim/course/locale/ko.po): {found[:5]}")


def test_every_message_the_widgets_print_is_collected_for_the_catalog():
    """The player's readout is prose too: i18n.py collects kafkasim/widgets' tr() calls and the
    N_() marks of the course tables, so they get catalog entries (translated: test_i18n)."""
    ids = {m for _c, m in i18n.course_messages()}
    assert "First invariant violation: none (checked {start} .. {end} ms)" in ids
    assert "A still image of the widget: run the cell for the interactive version." in ids
    assert "leads partitions" in ids                   # N_("leads partitions"): a header


def test_the_player_readout_speaks_the_course_language(monkeypatch):
    from kafkasim.course import i18n as rt
    from kafkasim.runtime.cluster import Cluster
    from kafkasim.widgets import Player

    c = Cluster(brokers=3, seed=1)
    c.create_topic("t", 1, 3)
    c.run(500)
    player = Player(c, topic="t")
    try:
        rt.set_language("en")
        assert "First invariant violation: none (checked" in player.readout_text()
        rt.set_language("ko")
        text = Player(c, topic="t").readout_text()
        assert "첫 불변식 위반: 없음" in text and "클러스터, seed 1" in text
        assert "Topic: t" in text                      # kafka-topics' own output stays
    finally:
        rt.set_language(None)


def test_unanswered_checks_share_one_style_and_speak_korean(capsys):
    from kafkasim.course import elections, rebalance
    from kafkasim.course import i18n as rt

    try:
        rt.set_language("ko")
        todo = elections.check_zk_election([1, 2, 3], [1], [2, 3], False, ...)
        assert todo.message == ("아직 답하지 않았습니다: ...을 브로커 id(리더가 없으면 None) "
                                "값으로 바꾸고 다시 실행하세요.")
        assert "#777777" in todo._repr_html_()             # "not answered", not a wrong answer
        number = rebalance.check_imbalance_count(...)
        assert number.message == "아직 답하지 않았습니다: ...을 숫자 값으로 바꾸고 다시 실행하세요."
        assert "#777777" in number._repr_html_()
        rt.set_language("en")
        todo = elections.check_zk_election([1, 2, 3], [1], [2, 3], False, ...)
        assert todo.message == ("Not answered yet: replace ... with a broker id (or None for no "
                                "leader) and run again.")
        assert "#777777" in todo._repr_html_() and "#cc3311" not in todo._repr_html_()
    finally:
        rt.set_language(None)
    capsys.readouterr()
