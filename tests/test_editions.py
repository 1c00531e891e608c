"""scripts/editions.py: learner copies carry no solutions and no exercise outputs, and run top to
bottom with every check reporting "not answered yet"; instructor copies carry the guide."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import editions  # noqa: E402

from kafkasim.course.checks import NO_ANSWER  # noqa: E402


def test_editions_build_and_pass_their_own_check(tmp_path):
    written = editions.build(tmp_path)
    numbered = editions.numbered(editions.NOTEBOOKS)
    assert len([p for p in written if "/learner/en/" in str(p)]) == len(numbered)
    assert editions.check(tmp_path) == []
    guide = editions.guide_for(REPO / "notebooks" / "09-leader-epoch-and-truncation.ipynb")
    inst = nbformat.read(tmp_path / "instructor" / "en" / "09-leader-epoch-and-truncation.ipynb",
                         as_version=4)
    assert inst.cells[1].source.startswith(editions.INSTRUCTOR_MARK)
    assert guide.read_text(encoding="utf-8") in inst.cells[1].source
    assert (tmp_path / "instructor" / "en" / "instructor-notes" / guide.name).exists()


def test_a_leaked_solution_is_found(tmp_path):
    editions.build(tmp_path)
    path = tmp_path / "learner" / "en" / "09-leader-epoch-and-truncation.ipynb"
    nb = nbformat.read(path, as_version=4)
    guide = editions.guide_for(path)
    solution = editions.solution_blocks(guide)[0]
    nb.cells.append(nbformat.v4.new_code_cell("# my answer\n" + solution))
    nbformat.write(nb, path)
    problems = editions.check(tmp_path)
    assert len(problems) == 1 and "leaked" in problems[0] and path.name in problems[0]


def test_a_learner_copy_runs_and_its_checks_wait_for_answers(tmp_path):
    editions.build(tmp_path)
    path = tmp_path / "learner" / "en" / "11-racks-and-placement.ipynb"
    nb = nbformat.read(path, as_version=4)
    NotebookClient(nb, timeout=300, kernel_name="python3",
                   resources={"metadata": {"path": str(editions.NOTEBOOKS)}}).execute()
    exercise_out = "".join(o.get("text", "") + str(o.get("data", {}).get("text/plain", ""))
                           for i in editions.exercise_cells(nb) for o in nb.cells[i].outputs)
    # 11's exercises hold `answer=...`: the note says what replaces the `...` (issue 33)
    assert exercise_out.count("Not answered yet: replace ... with") >= 3
    assert NO_ANSWER not in exercise_out and "✘" not in exercise_out
    assert not any(o.output_type == "error" for c in nb.cells if c.cell_type == "code"
                   for o in c.outputs)
