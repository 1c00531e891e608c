"""scripts/book.py: the static edition works offline: no page loads anything from outside the site,
and every link between its pages resolves."""

from __future__ import annotations

import re
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import book  # noqa: E402


def test_the_book_is_self_contained_and_its_links_resolve(tmp_path):
    written = book.build(tmp_path, ["en", "ko"])
    assert len([p for p in written if p.parent.name == "en"]) == len(book.notebooks(book.NOTEBOOKS))
    pages = sorted(tmp_path.rglob("*.html"))
    assert tmp_path / "index.html" in pages and tmp_path / "en" / "index.html" in pages
    for page in pages:
        text = page.read_text(encoding="utf-8")
        external = re.findall(r'<(?:script|img|link|iframe)[^>]*(?:src|href)="(?:https?:)?//[^"]*"',
                              text)
        assert not external, f"{page.name} loads from outside the site: {external[:2]}"
        assert '<script src="">' not in text
        for href in re.findall(r'href="([^"#:]+\.html)(?:#[^"]*)?"', text):
            assert (page.parent / href).resolve().exists(), f"{page.name}: broken link {href}"
        assert ".ipynb\"" not in text, f"{page.name} still links a notebook file"
    index = (tmp_path / "en" / "index.html").read_text(encoding="utf-8")
    assert "Part 2 · When things fail" in index and "09-leader-epoch-and-truncation.html" in index


def test_relink_rewrites_notebook_and_contents_links():
    page = ('<a href="02b-isr-shrink-expand-and-causes.ipynb#s2">x</a> '
            '<a href="../README.md#course-contents">c</a> <a href="../../README.md">k</a>'
            '<script src=""></script>')
    assert book.relink(page) == ('<a href="02b-isr-shrink-expand-and-causes.html#s2">x</a> '
                                 '<a href="index.html">c</a> <a href="index.html">k</a>')
