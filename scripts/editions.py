"""Learner and instructor editions of the course, built from the one source in ``notebooks/``.

    .venv/bin/python scripts/editions.py                 # both editions, every language
    .venv/bin/python scripts/editions.py --out build/editions --check   # build, then verify

Writes ``<out>/learner/<lang>/`` and ``<out>/instructor/<lang>/`` (``en`` from ``notebooks/``,
``ko`` from ``notebooks/ko/`` when it exists):

- **learner**: every numbered notebook with the saved outputs of its exercise cells cleared (the
  code cells between ``## Exercises`` and the next ``## `` heading), so a learner meets each check
  as "not answered yet", and the outputs of every predict-first experiment cleared (from the
  ``predict(...)`` cell through its run to the cell that scores it, ``prediction_cells``), so the
  answer is not right under the question; and every markdown cell tagged ``self-check`` (the
  collapsible answers placed right after a questionnaire) dropped, as the guides are. The notebooks
  hold no solutions in the first place: they live in ``docs/instructor/`` only.
- **instructor**: every notebook with its instructor guide (``docs/instructor/NN-*.md``: goal,
  timing, what to demo, where learners get stuck, the solutions) inserted after the title cell,
  plus the guide files themselves and ``docs/instructor-guide.md`` when present.

Why not nbgrader: its ``generate_assignment`` strips ``### BEGIN SOLUTION`` blocks out of notebooks
that contain them, and brings a database, a server extension and its own pins of the Jupyter stack.
Our notebooks never contain solutions (a test keeps it so), so the learner build only has to clear
exercise outputs, which nbformat does in a few lines; ``--check`` then proves that no solution text
from the guides reached a learner copy.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
GUIDES = REPO / "docs" / "instructor"
# NN-slug.ipynb, or NNa-slug.ipynb for a notebook taught in parts (02a, 02b)
NOTEBOOK_RE = re.compile(r"^\d\d[a-h]?-[\w-]+\.ipynb$")
INSTRUCTOR_MARK = "<!-- instructor -->"
SELF_CHECK_TAG = "self-check"


def sources() -> dict[str, Path]:
    """Language -> folder of its notebooks."""
    out = {"en": NOTEBOOKS}
    for lang_dir in sorted(NOTEBOOKS.iterdir()):
        if lang_dir.is_dir() and re.fullmatch(r"[a-z]{2}", lang_dir.name) and \
                any(NOTEBOOK_RE.match(p.name) for p in lang_dir.iterdir()):
            out[lang_dir.name] = lang_dir
    return out


def numbered(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if NOTEBOOK_RE.match(p.name))


def exercise_cells(nb) -> list[int]:
    """Indexes of the code cells of the ``## Exercises`` section (up to the next ``## ``)."""
    out, inside = [], False
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "markdown":
            for line in cell.source.splitlines():
                if line.startswith("## "):
                    inside = line.strip().startswith("## Exercises") or \
                        line.strip().startswith("## 연습")
        elif inside:
            out.append(i)
    return out


PREDICT_RE = re.compile(r"\bpredict\(")
SCORE_RE = re.compile(r"\.score\(")


def prediction_cells(nb) -> list[int]:
    """Indexes of the code cells of every predict-first experiment: from a cell that makes a
    prediction (``predict(``) through the run cell(s) to the cell(s) that score it (``.score(``);
    their saved outputs (an example answer, the result, its score) would give the answer away."""
    out: list[int] = []
    start = None
    code = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"]
    for n, i in enumerate(code):
        source = nb.cells[i].source
        if start is None and PREDICT_RE.search(source):
            start = i
        if start is not None and SCORE_RE.search(source):
            following = code[n + 1] if n + 1 < len(code) else None
            if following is None or not SCORE_RE.search(nb.cells[following].source) or \
                    PREDICT_RE.search(nb.cells[following].source):
                out += [j for j in code if start <= j <= i]
                start = None
    return out


def self_check_cells(nb) -> list[int]:
    """Indexes of the cells tagged ``self-check`` (a questionnaire's answers, shown on request)."""
    return [i for i, cell in enumerate(nb.cells)
            if SELF_CHECK_TAG in cell.get("metadata", {}).get("tags", [])]


def learner_copy(nb):
    nb = nbformat.reads(nbformat.writes(nb), as_version=4)
    for i in sorted({*exercise_cells(nb), *prediction_cells(nb)}):
        nb.cells[i].outputs = []
        nb.cells[i].execution_count = None
    for i in reversed(self_check_cells(nb)):
        del nb.cells[i]
    return nb


def guide_for(path: Path) -> Path | None:
    found = sorted(GUIDES.glob(f"{path.name.split('-', 1)[0]}-*.md"))
    return found[0] if found else None


def instructor_copy(nb, guide: Path | None):
    nb = nbformat.reads(nbformat.writes(nb), as_version=4)
    if guide is not None:
        text = guide.read_text(encoding="utf-8")
        cell = nbformat.v4.new_markdown_cell(f"{INSTRUCTOR_MARK}\n> **Instructor notes** "
                                             f"(from `docs/instructor/{guide.name}`)\n\n{text}")
        cell["id"] = "instructor-notes"
        nb.cells.insert(1, cell)
    return nb


def solution_blocks(guide: Path) -> list[str]:
    """The fenced code blocks of a guide's solutions, normalised (for the leak check)."""
    text = guide.read_text(encoding="utf-8")
    blocks = re.findall(r"```(?:python)?\n(.*?)```", text, re.S)
    return [_norm(b) for b in blocks if len(_norm(b).splitlines()) >= 3]


def _norm(code: str) -> str:
    return "\n".join(line.split("#")[0].rstrip() for line in code.strip().splitlines()
                     if line.split("#")[0].strip())


def leaks(learner_nb, guide: Path | None) -> list[str]:
    """Solution code blocks of ``guide`` found in the learner notebook (sources or outputs)."""
    if guide is None:
        return []
    seen = []
    for cell in learner_nb.cells:
        seen.append(_norm(cell.source))
        for out in cell.get("outputs", []):
            seen.append(_norm(out.get("text", "") or str(out.get("data", {}).get("text/plain",
                                                                                   ""))))
    haystack = "\n".join(seen)
    return [b.splitlines()[0] for b in solution_blocks(guide) if b in haystack]


def build(out: Path) -> list[Path]:
    written = []
    for lang, folder in sources().items():
        for kind in ("learner", "instructor"):
            target = out / kind / lang
            if target.exists():
                shutil.rmtree(target)
            target.mkdir(parents=True)
            for path in numbered(folder):
                nb = nbformat.read(path, as_version=4)
                copy = learner_copy(nb) if kind == "learner" else \
                    instructor_copy(nb, guide_for(path))
                nbformat.validate(copy)
                nbformat.write(copy, target / path.name)
                written.append(target / path.name)
            if kind == "instructor" and GUIDES.exists():
                shutil.copytree(GUIDES, target / "instructor-notes")
    return written


def check(out: Path) -> list[str]:
    problems = []
    for lang, folder in sources().items():
        for path in numbered(folder):
            learner = out / "learner" / lang / path.name
            if not learner.exists():
                problems.append(f"{learner}: missing")
                continue
            nb = nbformat.read(learner, as_version=4)
            for first_line in leaks(nb, guide_for(path)):
                problems.append(f"{learner}: solution from the instructor guide leaked: "
                                f"{first_line!r}")
            for i in exercise_cells(nb):
                if nb.cells[i].outputs:
                    problems.append(f"{learner}: exercise cell {i} keeps its outputs")
            for i in prediction_cells(nb):
                if nb.cells[i].outputs:
                    problems.append(f"{learner}: predict-first cell {i} keeps its outputs")
            for i in self_check_cells(nb):
                problems.append(f"{learner}: cell {i} keeps a questionnaire's self-check")
    return problems


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "build" / "editions")
    ap.add_argument("--check", action="store_true", help="verify the learner copies afterwards")
    args = ap.parse_args(argv)
    written = build(args.out)
    print(f"wrote {len(written)} notebooks under {args.out}")
    if args.check:
        problems = check(args.out)
        for p in problems:
            print(p)
        if problems:
            return 1
        print("learner editions: no solution text, no exercise or predict-first outputs")
    return 0


if __name__ == "__main__":
    sys.exit(main())
