"""Issue 33, "less to read, more to do": per notebook, the markdown a learner reads before the first
thing that runs (words before the first code cell with a saved output) stays at or under 150, and
the notebook's total markdown is down by a third from the count recorded before the cut.

Words are ``len(re.findall(r"\\S+", markdown))`` with fenced code blocks left out; collapsed
``<details>`` blocks count too (folding moves a passage after the result, it does not shorten it).
A notebook split in two (02 and 02b) is held to its former whole's budget, summed over the parts.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
BEFORE_FIRST_OUTPUT = 150
KEEP = 2 / 3

# Total markdown words per English notebook on 2026-12-04, before the cut (main at 3400a2e).
BASELINE = {
    "00": 1384, "01": 2429, "02": 3755, "03": 2683, "04": 1596, "05": 2349, "06": 1462,
    "07": 3029, "08": 2930, "09": 2994, "10": 1516, "11": 1091, "12": 1770, "13": 1228,
    "14": 396, "90": 3033,
}
# Notebooks whose total is not yet down by a third (all meet the 150 words before the first
# output). None left: on 2026-12-04 06-12 and 90 were cut to 06 958/1462, 07 1996/3029,
# 08 1952/2930, 09 1976/2994, 10 1007/1516, 11 725/1091, 12 1170/1770, 90 2005/3033 (words now /
# baseline).
PENDING: set[str] = set()

FENCE = re.compile(r"```.*?```", re.S)


def words(markdown: str) -> int:
    return len(re.findall(r"\S+", FENCE.sub("", markdown)))


def load(nb) -> tuple[int, int]:
    """(markdown words before the first code cell with an output, total markdown words)."""
    before, total, seen = 0, 0, False
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            n = words(cell.source)
            total += n
            before += 0 if seen else n
        elif cell.cell_type == "code" and cell.get("outputs"):
            seen = True
    return before, total


def number(path: Path) -> str:
    return path.name.split("-", 1)[0]


def english() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]*-*.ipynb"))


def test_words_are_counted_without_code_fences():
    assert words("Two words\n\n```python\nprint('not counted')\n```\n") == 2
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("one two three"),
                nbformat.v4.new_code_cell("x = 1"),
                nbformat.v4.new_code_cell("x", outputs=[nbformat.v4.new_output(
                    "execute_result", data={"text/plain": "1"}, execution_count=1)]),
                nbformat.v4.new_markdown_cell("<details><summary>Why?</summary> 4 5 </details>")]
    assert load(nb) == (3, 7)


def test_every_notebook_has_a_baseline():
    assert {number(p).rstrip("abcdefgh") for p in english()} == set(BASELINE)


@pytest.mark.parametrize("path", english(), ids=number)
def test_at_most_150_words_before_the_first_output(path):
    before, _ = load(nbformat.read(path, as_version=4))
    assert before <= BEFORE_FIRST_OUTPUT, f"{path.name}: {before} words before the first output"


@pytest.mark.parametrize("num", sorted(BASELINE))
def test_total_markdown_down_by_a_third(num):
    if num in PENDING:
        pytest.skip("not cut by a third yet (issue 33): the questionnaires, self-checks and "
                    "stories added this session outweigh the cuts")
    parts = [p for p in english() if number(p).rstrip("abcdefgh") == num]
    total = sum(load(nbformat.read(p, as_version=4))[1] for p in parts)
    assert total <= BASELINE[num] * KEEP, \
        f"notebook {num}: {total} words, budget {int(BASELINE[num] * KEEP)} (was {BASELINE[num]})"
