"""Move nbval's markers out of the learner's code: ``# NBVAL_CHECK_OUTPUT`` → a cell tag.

    .venv/bin/python scripts/nbval_tags.py notebooks/NN-slug.ipynb [...]
    .venv/bin/python scripts/nbval_tags.py --check notebooks/*.ipynb   # exit 1 if a comment is left

nbval reads the same instruction from the cell's metadata tags (``nbval-check-output``,
``nbval-ignore-output``, ``nbval-skip``, ``nbval-raises-exception``), so a learner sees only the
code. A marker comment on a line of its own anywhere in a code cell is removed and turned into
its tag; nothing else in the notebook changes.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import nbformat

MARKERS = {
    "NBVAL_CHECK_OUTPUT": "nbval-check-output",
    "NBVAL_IGNORE_OUTPUT": "nbval-ignore-output",
    "NBVAL_SKIP": "nbval-skip",
    "NBVAL_RAISES_EXCEPTION": "nbval-raises-exception",
}


def marker_of(line: str) -> str | None:
    text = line.strip()
    if not text.startswith("#"):
        return None
    return MARKERS.get(text.lstrip("#").strip())


def convert(nb) -> int:
    """Turn every marker comment of ``nb`` into a tag; returns how many cells changed."""
    changed = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        lines = cell.source.splitlines()
        tags = [marker_of(line) for line in lines]
        found = [t for t in tags if t]
        if not found:
            continue
        cell.source = "\n".join(line for line, t in zip(lines, tags, strict=True) if not t)
        have = list(cell.metadata.get("tags", []))
        cell.metadata["tags"] = have + [t for t in found if t not in have]
        changed += 1
    return changed


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("notebooks", nargs="+", type=Path)
    ap.add_argument("--check", action="store_true", help="change nothing; exit 1 if a marker "
                    "comment is left in a code cell")
    args = ap.parse_args(argv)
    left = 0
    for path in args.notebooks:
        nb = nbformat.read(path, as_version=4)
        n = convert(nb)
        if n and args.check:
            print(f"{path}: {n} cell(s) carry nbval marker comments; run scripts/nbval_tags.py")
            left += n
        elif n:
            nbformat.validate(nb)
            nbformat.write(nb, path)
            print(f"{path}: {n} cell(s) now tagged")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
