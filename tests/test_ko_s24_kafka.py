"""The Korean edition's review of this sitting (s24, area "ko"): what it fixed, pinned.

Kafka test class: none. This area is the Korean text the learner reads (the catalogs
notebooks/locale/ko/*.po and kafkasim/course/locale/ko.po, the built notebooks/ko/), not a
Kafka behaviour, so no Kafka unit test applies and none is ported. What is tested instead:

* the Korean road map in notebook 00 names every notebook by its own Korean heading, as
  make_toc.py does for the English one (tests/test_course.py) -- four titles had drifted apart;
* notebook 10's restart line and check messages say the fault in Korean (크래시, 전원 상실,
  정상 종료), English keeping kafkasim's action name;
* the player's header line says 시드 and 이야기, not "seed" and 스토리;
* the Korean catalogs use no pronoun calque of "it" the review removed (그것을/그것들을 + a verb
  of having, fetching or reading), and no "appear by name" calque (이름을 밝히고/밝힌).
"""
from __future__ import annotations

import re
from pathlib import Path

import nbformat
import polib
import pytest

from kafkasim.course import i18n as rt

REPO = Path(__file__).resolve().parents[1]
KO = REPO / "notebooks" / "ko"
CATALOGS = sorted((REPO / "notebooks" / "locale" / "ko").glob("*.po")) + \
    [REPO / "kafkasim" / "course" / "locale" / "ko.po"]


def _heading(path: Path) -> str:
    for cell in nbformat.read(path, as_version=4).cells:
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("# "):
                    return line[2:].strip()
    raise AssertionError(f"{path.name} has no '# ' heading")


def test_korean_road_map_repeats_each_notebooks_heading():
    """00's road map links every notebook with the title the notebook itself shows."""
    road = [c.source for c in nbformat.read(KO / "00-start-here.ipynb", as_version=4).cells
            if c.source.startswith("<!-- roadmap -->")]
    assert len(road) == 1
    links = re.findall(r"\[([^\]]+)\]\((\d\d[a-h]?-[\w-]+\.ipynb)\)", road[0])
    assert len(links) >= 15
    for label, name in links:
        assert label == _heading(KO / name), f"road map says {label!r} for {name}"


@pytest.fixture
def korean():
    rt.set_language("ko")
    yield
    rt.set_language(None)


def test_restart_view_says_the_fault_in_korean(korean):
    from kafkasim.course.checkpoints import restart_view

    assert str(restart_view("crash", kafka_version="4.3")).startswith("팔로워 크래시 후 재시작: ")
    rt.set_language("en")
    assert str(restart_view("crash", kafka_version="4.3")).startswith("crash of a follower, ")


@pytest.mark.parametrize("fault, korean_word", [("power_loss", "전원 상실"), ("crash", "크래시")])
def test_allowed_loss_check_names_the_fault_in_korean(korean, fault, korean_word):
    from kafkasim.course.checkpoints import check_allowed_loss

    message = check_allowed_loss(fault, kafka_version="4.3").message
    assert korean_word in message and fault not in message


def test_player_header_says_seed_and_story_in_korean(korean):
    assert rt.tr("cluster, seed {seed}", seed=7) == "클러스터, 시드 7"
    assert rt.tr("story {name}, seed {seed}", name="'x'", seed=3) == "이야기 'x', 시드 3"


def _translations() -> list[tuple[str, str]]:
    return [(p.name, e.msgstr) for p in CATALOGS
            for e in polib.pofile(str(p), wrapwidth=0) if e.msgstr and not e.obsolete]


@pytest.mark.parametrize("calque", [
    r"그것들?을 (?:가지|가졌|갖고|복사|읽|가져)",      # "had it", "copied it", "read it"
    r"그것들?에 ACK",                                   # "acknowledge them"
    r"이름을 밝(?:히고|힌|혀)",                          # "appears by name"
    r"말을 들었",                                       # "was told"
])
def test_no_calque_the_review_removed_comes_back(calque):
    found = [f"{where}: …{text[max(0, m.start() - 20):m.end() + 20]}…"
             for where, text in _translations() for m in re.finditer(calque, text)]
    assert not found, found
