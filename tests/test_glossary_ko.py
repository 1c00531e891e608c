"""The Korean edition keeps to docs/glossary-ko.md: no discouraged form ("쓰지 않음" in its
term-decision table) in any catalog translation (notebooks/locale/ko/*.po), runtime message
(kafkasim/course/locale/ko.po) or Korean string in the package, except where ALLOWED says the word
is right in context."""
from __future__ import annotations

import re
from pathlib import Path

import polib
import pytest

REPO = Path(__file__).resolve().parents[1]
GLOSSARY = REPO / "docs" / "glossary-ko.md"

# (catalog file name prefix, discouraged form, text around it, why it is right there)
ALLOWED = [
    ("00-", "사본", "데이터의 사본", "a copy of the data in general, before replicas are named"),
    ("00-", "사본", "개의 사본으로 저장하며, 이 사본을 *복제본*이라",
     "the sentence that introduces 복제본 as the name of these copies"),
]


def decisions() -> list[tuple[str, list[str]]]:
    """(use, [discouraged forms]) from the glossary's drift table."""
    text = GLOSSARY.read_text(encoding="utf-8")
    table = text.split("<!-- drift-table -->")[1].split("<!-- /drift-table -->")[0]
    rows = []
    for line in table.strip().splitlines()[2:]:
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        rows.append((cells[1], [f.strip() for f in cells[2].split(",") if f.strip()]))
    return rows


def pattern(forms: list[str]) -> re.Pattern:
    """The row's forms, longest first (가져오기 요청 is one finding, not two), each starting a
    word: 사본 is not found inside 복사본 (listed on its own), 그를 not inside 로그를."""
    alternatives = "|".join(re.escape(f) for f in sorted(forms, key=len, reverse=True))
    return re.compile(r"(?<![가-힣])(?:" + alternatives + ")")


def korean_texts() -> list[tuple[str, str]]:
    """(where, text) for every translation the Korean learner reads."""
    out = []
    for path in sorted((REPO / "notebooks/locale/ko").glob("*.po")) + \
            [REPO / "kafkasim/course/locale/ko.po"]:
        for entry in polib.pofile(str(path), wrapwidth=0):
            if not entry.obsolete and entry.msgstr:
                out.append((path.name, entry.msgstr))
    for path in sorted((REPO / "kafkasim").rglob("*.py")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if re.search("[가-힣]", line) and path.name != "i18n.py":
                out.append((str(path.relative_to(REPO)), line))
    return out


def allowed(where: str, form: str, text: str, at: int) -> bool:
    return any(where.startswith(prefix) and form == f and
               any(m.start() <= at < m.end()
                   for m in re.finditer(re.escape(context), text))
               for prefix, f, context, _why in ALLOWED)


def drift(texts: list[tuple[str, str]]) -> list[str]:
    found = []
    for use, forms in decisions():
        rx = pattern(forms)
        for where, text in texts:
            for m in rx.finditer(text):
                form = m.group(0)
                if not allowed(where, form, text, m.start()):
                    around = text[max(0, m.start() - 20):m.end() + 20].replace("\n", " ")
                    found.append(f"{where}: {form!r} (use {use}): …{around}…")
    return found


def test_the_glossary_has_a_decision_table():
    rows = decisions()
    assert len(rows) >= 10
    fetch = ("Fetch 요청, Fetch 응답, Fetch",
             ["가져오기 요청", "가져오기 응답", "가져오기", "페치"])
    assert fetch in rows
    assert all(forms for _use, forms in rows)


def test_the_drift_check_flags_a_discouraged_form_and_honours_the_allow_list():
    texts = [("05-x.po", "팔로워의 가져오기 요청이 도착합니다"),
             ("05-x.po", "로그를 자릅니다"),                        # not 그를
             ("00-x.po", "브로커마다 데이터의 사본을 둡니다"),     # allowed here
             ("05-x.po", "메타데이터 사본으로부터")]               # not allowed in 05
    found = drift(texts)
    assert len(found) == 2, found
    assert "'가져오기 요청'" in found[0] and "사본" in found[1]


@pytest.mark.parametrize("allow", ALLOWED, ids=lambda a: f"{a[0]}{a[1]}")
def test_every_allow_list_entry_is_still_needed(allow):
    prefix, form, context, _why = allow
    assert any(where.startswith(prefix) and context in text and form in context
               for where, text in korean_texts()), allow


def test_no_catalog_or_message_drifts_from_the_glossary():
    found = drift(korean_texts())
    assert not found, f"{len(found)} drifting term(s):\n" + "\n".join(found[:60])
