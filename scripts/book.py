"""The readable static edition: an offline HTML site of the course, English and Korean.

    .venv/bin/python scripts/book.py                   # -> build/book/index.html
    .venv/bin/python scripts/book.py --out /tmp/book --lang en

Each numbered notebook becomes ``<out>/<lang>/NN-slug.html`` with its saved outputs (tables,
figures, and the static pictures the course's widgets save beside themselves), converted by
nbconvert's ``lab`` template with images embedded. Links between notebooks point at the HTML
pages, "Contents" links at the language's ``index.html``, which lists the course in its parts
(the same parts as ``scripts/make_toc.py``). ``<out>/index.html`` offers both languages.

Why nbconvert and not Jupyter Book / MyST: the site must work offline and build offline. nbconvert
is already installed with JupyterLab and renders the saved outputs exactly as nbval checked them;
Jupyter Book 2 / MyST needs its Node.js toolchain and theme packages fetched from npm at build
time, and both load scripts from CDNs. Here no page refers to anything outside the site: scripts
that would come from a CDN (require.js, MathJax, the widget manager) are left out, so the pages
carry no live widgets, only their saved pictures and text (a test checks that nothing external is
referenced and that every link resolves).
"""

from __future__ import annotations

import argparse
import html
import re
import shutil
import sys
from pathlib import Path

import nbformat
from nbconvert import HTMLExporter

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
from make_toc import PARTS, title_of  # noqa: E402

NOTEBOOKS = REPO / "notebooks"
# NN-slug.ipynb, or NNa-slug.ipynb for a notebook taught in parts (02a, 02b)
NOTEBOOK_RE = re.compile(r"^\d\d[a-h]?-[\w-]+\.ipynb$")
LANGS = {"en": ("English", NOTEBOOKS), "ko": ("한국어", NOTEBOOKS / "ko")}
HEADINGS = {
    "en": {"title": "kafkasim courseware", "lead": "How Apache Kafka replicates data: an "
           "interactive course, read offline. Run it in JupyterLab to use the widgets.",
           "glossary": None},
    "ko": {"title": "kafkasim 코스웨어", "lead": "Apache Kafka가 데이터를 복제하는 방법: 대화형 "
           "코스의 읽기 전용판입니다. 위젯을 쓰려면 JupyterLab에서 실행하세요.",
           "glossary": "용어집 (한국어 ↔ Kafka)"},
}
PARTS_KO = {"Part 1 · How replication works": "1부 · 복제가 동작하는 방식",
            "Part 2 · When things fail": "2부 · 장애가 났을 때",
            "Experiments at scale": "대규모 실험"}


def exporter() -> HTMLExporter:
    e = HTMLExporter(template_name="lab", embed_images=True)
    e.mathjax_url = ""
    e.require_js_url = ""
    e.widget_renderer_url = ""
    e.jupyter_widgets_base_url = ""
    return e


def relink(page: str) -> str:
    """Notebook links -> HTML pages; the README's contents -> this language's index."""
    page = re.sub(r'href="(?:\.\./)?(\d\d[a-h]?-[\w-]+)\.ipynb(#[^"]*)?"',
                  lambda m: f'href="{m.group(1)}.html{m.group(2) or ""}"', page)
    page = re.sub(r'href="(?:\.\./)+README\.md(#[^"]*)?"', 'href="index.html"', page)
    return re.sub(r'<script src="">\s*</script>', "", page)


def notebooks(folder: Path) -> list[Path]:
    if not folder.is_dir():
        return []
    return sorted(p for p in folder.iterdir() if NOTEBOOK_RE.match(p.name))


def index_page(lang: str, entries: list[tuple[str, str, str]], langs: list[str]) -> str:
    h = HEADINGS[lang]
    parts = []
    for heading, first, last in PARTS:
        rows = [(t, n, s) for t, n, s in entries if first <= int(n[:2]) <= last or
                (first == 1 and n.startswith("00"))]
        if not rows:
            continue
        name = PARTS_KO.get(heading, heading) if lang == "ko" else heading
        items = "\n".join(f'<li><a href="{n[:-6]}.html">{html.escape(t)}</a>'
                          f'{"<br><small>" + html.escape(s) + "</small>" if s else ""}</li>'
                          for t, n, s in rows)
        parts.append(f"<h2>{html.escape(name)}</h2>\n<ol>\n{items}\n</ol>")
    other = " · ".join(f'<a href="../{x}/index.html">{LANGS[x][0]}</a>' for x in langs if x != lang)
    glossary = (f'<p><a href="glossary.html">{html.escape(h["glossary"])}</a></p>'
                if h["glossary"] else "")
    return (f'<!DOCTYPE html>\n<html lang="{lang}"><head><meta charset="utf-8">'
            f'<title>{html.escape(h["title"])}</title>{STYLE}</head><body>'
            f'<h1>{html.escape(h["title"])}</h1><p>{html.escape(h["lead"])}</p>'
            f'<p>{other}</p>{glossary}{"".join(parts)}</body></html>\n')


STYLE = ("<style>body{font-family:sans-serif;max-width:52rem;margin:2rem auto;padding:0 1rem;"
         "line-height:1.5}li{margin:.4rem 0}small{color:#444}</style>")


def glossary_page() -> str:
    from nbconvert.filters.markdown_mistune import markdown2html_mistune

    text = (REPO / "docs" / "glossary-ko.md").read_text(encoding="utf-8")
    return (f'<!DOCTYPE html>\n<html lang="ko"><head><meta charset="utf-8"><title>용어집</title>'
            f'{STYLE}<style>table{{border-collapse:collapse}}td,th{{border:1px solid #aaa;'
            f'padding:.2rem .4rem}}</style></head><body><p><a href="index.html">← 목차</a></p>'
            f'{markdown2html_mistune(text)}</body></html>\n')


def build(out: Path, langs: list[str]) -> list[Path]:
    e = exporter()
    present = [lang for lang in langs if notebooks(LANGS[lang][1])]
    if out.exists():
        shutil.rmtree(out)
    written = []
    for lang in present:
        folder = LANGS[lang][1]
        target = out / lang
        target.mkdir(parents=True)
        entries = []
        for path in notebooks(folder):
            nb = nbformat.read(path, as_version=4)
            body, _res = e.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
            page = target / f"{path.stem}.html"
            page.write_text(relink(body), encoding="utf-8")
            written.append(page)
            entries.append((title_of(nb), path.name,
                            nb.metadata.get("kafkasim", {}).get("summary", "")))
        (target / "index.html").write_text(index_page(lang, entries, present), encoding="utf-8")
        if lang != "en":          # a link to a page not translated yet: the English page
            for page in target.glob("*.html"):
                text = page.read_text(encoding="utf-8")
                fixed = re.sub(r'href="(?:\.\./)?(\d\d[a-h]?-[\w-]+\.html)([#"])',
                               lambda m, here=target: m.group(0)
                               if (here / m.group(1)).exists()
                               else f'href="../en/{m.group(1)}{m.group(2)}', text)
                if fixed != text:
                    page.write_text(fixed, encoding="utf-8")
        if lang == "ko":
            (target / "glossary.html").write_text(glossary_page(), encoding="utf-8")
    links = " · ".join(f'<a href="{x}/index.html">{LANGS[x][0]}</a>' for x in present)
    (out / "index.html").write_text(
        f'<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>kafkasim courseware</title>'
        f'{STYLE}</head><body><h1>kafkasim courseware</h1><p>{links}</p></body></html>\n',
        encoding="utf-8")
    return written


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, default=REPO / "build" / "book")
    ap.add_argument("--lang", action="append", choices=sorted(LANGS),
                    help="only these languages (default: every language with notebooks)")
    args = ap.parse_args(argv)
    written = build(args.out, args.lang or sorted(LANGS))
    print(f"wrote {len(written)} pages; open {args.out / 'index.html'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
