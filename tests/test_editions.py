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


def _questionnaire_with_self_check():
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# 99 · Test"),
                nbformat.v4.new_markdown_cell("## Questionnaire\n\n1. Which replicas?"),
                nbformat.v4.new_markdown_cell("<details><summary>Check your answers</summary>\n\n"
                                              "1. The leader and the caught-up followers.\n\n"
                                              "</details>"),
                nbformat.v4.new_markdown_cell("## Further reading")]
    nb.cells[2].metadata["tags"] = [editions.SELF_CHECK_TAG]
    return nb


def test_the_learner_copy_drops_self_checks_and_the_instructor_copy_keeps_them():
    nb = _questionnaire_with_self_check()
    learner = editions.learner_copy(nb)
    assert [c.source.splitlines()[0] for c in learner.cells] == \
        ["# 99 · Test", "## Questionnaire", "## Further reading"]
    assert "Check your answers" not in "".join(c.source for c in learner.cells)
    assert len(nb.cells) == 4, "the source notebook is left unchanged"
    instructor = editions.instructor_copy(nb, None)
    assert editions.self_check_cells(instructor) == [2]


def test_a_self_check_left_in_a_learner_copy_is_reported(tmp_path):
    editions.build(tmp_path)
    path = tmp_path / "learner" / "en" / "01-replication-basics.ipynb"
    nb = nbformat.read(path, as_version=4)
    nb.cells.append(_questionnaire_with_self_check().cells[2])
    nbformat.write(nb, path)
    problems = editions.check(tmp_path)
    assert len(problems) == 1 and "self-check" in problems[0] and path.name in problems[0]
