"""Generate the course's navigation: the README table of contents and prev/next links.

    .venv/bin/python scripts/make_toc.py           # rewrite what is out of date
    .venv/bin/python scripts/make_toc.py --check   # exit 1 (and say what) if anything is

The course is the numbered notebooks (``NN-slug.ipynb``) that git tracks: a notebook still being
written (untracked) joins the navigation once it is committed and the script is run again
(``--include-untracked`` takes it in at once).

Titles come from each notebook's first heading (``# 01 · Replication basics: ...``; the part
before the first colon is the short title used in links). The README line also gets a summary:
the notebook's ``metadata.kafkasim.summary`` if it has one, else the text that line already has.

Only two places are written, and only when their content changes (so the script is idempotent):

- README.md between ``<!-- toc -->`` and ``<!-- /toc -->``;
- one markdown cell per notebook, marked ``<!-- nav -->``, kept as the notebook's last cell.
  Any older nav cell is removed first; no other cell is touched.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import nbformat

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
README = REPO / "README.md"
TOC_START = "<!-- toc -->"
TOC_END = "<!-- /toc -->"
NAV_MARK = "<!-- nav -->"
NOTEBOOK_RE = re.compile(r"^\d\d-[\w-]+\.ipynb$")
WIDTH = 100


def notebooks(folder: Path = NOTEBOOKS, include_untracked: bool = False) -> list[Path]:
    found = sorted(p for p in folder.iterdir() if NOTEBOOK_RE.match(p.name))
    if include_untracked:
        return found
    try:
        out = subprocess.run(["git", "ls-files", "--", str(folder)], cwd=folder, check=True,
                             capture_output=True, text=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return found            # not a git checkout: every notebook counts
    tracked = {Path(line).name for line in out.splitlines()}
    return [p for p in found if p.name in tracked]


def title_of(nb) -> str:
    """The text of the first level-1 heading of the notebook."""
    for cell in nb.cells:
        if cell.cell_type != "markdown":
            continue
        for line in cell.source.splitlines():
            if line.startswith("# "):
                return line[2:].strip()
    raise ValueError("notebook has no '# ' heading")


def short_title(title: str) -> str:
    return title.split(":", 1)[0].strip()


def is_nav(cell) -> bool:
    return cell.cell_type == "markdown" and cell.source.lstrip().startswith(NAV_MARK)


def nav_source(prev: tuple[str, str] | None, nxt: tuple[str, str] | None) -> str:
    parts = []
    if prev:
        parts.append(f"[← {prev[0]}]({prev[1]})")
    parts.append("[Contents](../README.md#course-contents)")
    if nxt:
        parts.append(f"[{nxt[0]} →]({nxt[1]})")
    return NAV_MARK + "\n---\n" + " · ".join(parts)


def update_nav(path: Path, source: str, check: bool) -> bool:
    """Make ``source`` the notebook's last cell (dropping older nav cells). True if changed."""
    nb = nbformat.read(path, as_version=4)
    cells = nb.cells
    if cells and is_nav(cells[-1]) and cells[-1].source == source and \
            sum(1 for c in cells if is_nav(c)) == 1:
        return False
    if check:
        return True
    nb.cells = [c for c in cells if not is_nav(c)]
    cell = nbformat.v4.new_markdown_cell(source)
    cell["id"] = "nav"
    nb.cells.append(cell)
    nbformat.validate(nb)
    nbformat.write(nb, path)
    return True


def existing_summaries(readme: str) -> dict[str, str]:
    """notebook file name -> the summary text of its current TOC line."""
    out = {}
    block = _toc_block(readme)
    if block is None:
        return out
    entries = re.split(r"\n(?=\d+\. )", block.strip())
    for e in entries:
        flat = " ".join(line.strip() for line in e.splitlines())
        m = re.match(r"\d+\. \[[^\]]*\]\(notebooks/([^)]+)\)(?::\s*(.*))?$", flat)
        if m and m.group(2):
            out[m.group(1)] = m.group(2).strip()
    return out


def _toc_block(readme: str) -> str | None:
    i = readme.find(TOC_START)
    j = readme.find(TOC_END)
    if i < 0 or j < i:
        return None
    return readme[i + len(TOC_START):j]


def toc_lines(entries: list[tuple[str, str, str | None]]) -> str:
    lines = []
    for n, (title, name, summary) in enumerate(entries, start=1):
        text = f"{n}. [{title}](notebooks/{name})" + (f": {summary}" if summary else "")
        lines.extend(textwrap.wrap(text, WIDTH, subsequent_indent="   ",
                                   break_long_words=False, break_on_hyphens=False))
    return "\n".join(lines)


def update_readme(entries, check: bool, readme_path: Path = README) -> bool:
    text = readme_path.read_text(encoding="utf-8")
    if _toc_block(text) is None:
        raise SystemExit(f"{readme_path}: no {TOC_START} ... {TOC_END} markers")
    old = existing_summaries(text)
    full = [(t, name, summ or old.get(name)) for t, name, summ in entries]
    i = text.index(TOC_START) + len(TOC_START)
    j = text.index(TOC_END)
    new = text[:i] + "\n" + toc_lines(full) + "\n" + text[j:]
    if new == text:
        return False
    if not check:
        readme_path.write_text(new, encoding="utf-8")
    return True


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true",
                    help="change nothing; exit 1 if the README or a nav cell is out of date")
    ap.add_argument("--include-untracked", action="store_true",
                    help="also take in numbered notebooks git does not track yet")
    args = ap.parse_args(argv)
    paths = notebooks(include_untracked=args.include_untracked)
    info = []
    for p in paths:
        nb = nbformat.read(p, as_version=4)
        summary = nb.metadata.get("kafkasim", {}).get("summary")
        info.append((short_title(title_of(nb)), p.name, summary))
    stale = []
    for k, p in enumerate(paths):
        prev = (info[k - 1][0], info[k - 1][1]) if k > 0 else None
        nxt = (info[k + 1][0], info[k + 1][1]) if k + 1 < len(paths) else None
        if update_nav(p, nav_source(prev, nxt), args.check):
            stale.append(str(p.relative_to(REPO)))
    if update_readme(info, args.check):
        stale.append("README.md (table of contents)")
    verb = "out of date" if args.check else "updated"
    for s in stale:
        print(f"{verb}: {s}")
    if not stale:
        print("navigation is up to date")
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
