"""Translated editions of the course notebooks, from gettext catalogs beside the English source.

    .venv/bin/python scripts/i18n.py update ko     # English notebooks -> notebooks/locale/ko/*.po
    .venv/bin/python scripts/i18n.py build ko      # catalogs -> notebooks/ko/*.ipynb (no outputs)
    .venv/bin/python scripts/i18n.py check ko      # exit 1 on an untranslated/fuzzy entry or a
                                                   # notebooks/ko file that is not up to date
    .venv/bin/python scripts/i18n.py stats ko      # entries per catalog: translated/fuzzy/missing

The English notebooks in ``notebooks/`` are the one source. Every markdown cell is cut into
paragraphs (blank-line separated; a fenced code block stays whole, and one with nothing but code is
not translated). Each paragraph is a catalog entry: ``msgctxt`` is the cell's id, ``msgid`` the
English paragraph, ``msgstr`` its translation. ``update`` works like ``msgmerge``: an entry whose
English text is unchanged keeps its translation; a changed paragraph becomes a new entry, *fuzzy*,
carrying the old translation of the most similar paragraph of the same cell (so a translator sees
what changed), or untranslated if nothing is similar; entries no longer used become obsolete.
``build`` writes the translated notebook: markdown from the catalog, code cells identical to the
English ones (their outputs come from running the translated notebook, so prose printed by
``kafkasim.course`` is in the reader's language), links out of ``notebooks/`` re-rooted one level
deeper. A fuzzy or missing entry is built in English, and ``check`` fails on it.

``update`` also collects the prose the code prints at run time into
``kafkasim/course/locale/<lang>.po``: every ``tr("...")`` / ``N_("...")`` with a literal message in
``kafkasim/course``, ``kafkasim/widgets``, ``kafkasim/experiments`` and ``kafkasim/viz``
(``course_messages``), filed under the module's ``I18N_CONTEXT`` msgctxt when it names one (the
player's controls and tiles: ``kafkasim.player``; notebook 90's helpers: ``kafkasim.experiments``;
the drawings' titles, axis labels and legends: ``kafkasim.viz``), else ``kafkasim.course``.
"""

from __future__ import annotations

import argparse
import difflib
import re
import sys
from pathlib import Path

import nbformat
import polib

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
COURSE_CODE = REPO / "kafkasim" / "course"
WIDGETS_CODE = REPO / "kafkasim" / "widgets"     # the player's readout speaks the course's language
EXPERIMENTS_CODE = REPO / "kafkasim" / "experiments"   # notebook 90's captions, checks, Spark line
VIZ_CODE = REPO / "kafkasim" / "viz"     # the drawings' titles, axis labels and legends
RUNTIME_CTXT = "kafkasim.course"
# NN-slug.ipynb, or NNa-slug.ipynb for a notebook taught in parts (02a, 02b)
NOTEBOOK_RE = re.compile(r"^\d\d[a-h]?-[\w-]+\.ipynb$")
LANGUAGES = {"ko": "Korean"}
FUZZY_SIMILARITY = 0.5


# -- paragraphs ----------------------------------------------------------------------------------
def paragraphs(markdown: str) -> list[str]:
    """The markdown's blocks: split at blank lines, never inside a fenced code block."""
    blocks: list[list[str]] = [[]]
    fence = None
    for line in markdown.splitlines():
        stripped = line.strip()
        if fence is None and not stripped:
            if blocks[-1]:
                blocks.append([])
            continue
        blocks[-1].append(line)
        m = re.match(r"^(```+|~~~+)", stripped)
        if m:
            if fence is None:
                fence = m.group(1)[0] * 3
            elif stripped.startswith(fence):
                fence = None
    return ["\n".join(b) for b in blocks if b]


def translatable(block: str) -> bool:
    """False for a block that is only a fenced code block, or has no letters at all."""
    lines = [line.strip() for line in block.splitlines()]
    fences = ("```", "~~~")
    if len(lines) > 1 and lines[0].startswith(fences) and lines[-1].startswith(fences):
        return False
    return re.search(r"[^\W\d_]", block) is not None


def english_entries(nb) -> list[tuple[str, str]]:
    """(cell id, paragraph) for every translatable paragraph of the notebook, in order, then
    (cell id, comment) for every code comment (``code_comments``): a catalog keeps its markdown
    first and gains comments at its end."""
    out = []
    for cell in nb.cells:
        if cell.cell_type == "markdown":
            out.extend((cell["id"], p) for p in paragraphs(cell.source) if translatable(p))
    for cell in nb.cells:
        if cell.cell_type == "code":
            for _start, _end, text in code_comments(cell.source):
                if (cell["id"], text) not in out:
                    out.append((cell["id"], text))
    return out


# -- code comments -------------------------------------------------------------------------------
# A code cell is the same in every edition except its comments: each ``# comment`` is a catalog
# entry (msgctxt: the cell's id, msgid: the comment's text after "# "), and ``build`` writes the
# translation in its place. Tool directives stay: noqa, type: ignore, fmt:, pragma.
_DIRECTIVE = re.compile(r"^\s*(?:noqa|type:\s*ignore|fmt:|pragma|ruff:|!)", re.IGNORECASE)


def code_comments(source: str) -> list[tuple[tuple[int, int], tuple[int, int], str]]:
    """(start, end, text) of each translatable comment of a code cell's source, in order:
    positions as ``tokenize`` gives them (row from 1), text without the "#" and the spaces
    around it. A cell that does not tokenize (a magic, a shell line) has none."""
    import io
    import tokenize

    out = []
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT:
                text = tok.string.lstrip("#").strip()
                if re.search(r"[^\W\d_]", text) and not _DIRECTIVE.match(text):
                    out.append((tok.start, tok.end, text))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return []
    return out


def translate_comments(source: str, ctxt: str, table: dict[tuple[str, str], str]) -> str:
    """``source`` with each comment that has a translation in ``table`` replaced by it (the
    "#" and the space after it kept); everything else as it is."""
    lines = source.split("\n")
    for (row, col), (_erow, ecol), text in reversed(code_comments(source)):
        said = table.get((ctxt, text))
        if not said:
            continue
        line = lines[row - 1]
        lead = re.match(r"#+\s*", line[col:ecol]).group(0)
        lines[row - 1] = line[:col] + lead + " ".join(said.split()) + line[ecol:]
    return "\n".join(lines)


def without_comments(source: str) -> str:
    """``source`` with every translatable comment blanked: two editions' code cells are the same
    code when this is equal."""
    lines = source.split("\n")
    for (row, col), (_erow, ecol), _text in reversed(code_comments(source)):
        lines[row - 1] = lines[row - 1][:col] + "#" + lines[row - 1][ecol:]
    return "\n".join(lines)


# -- catalogs ------------------------------------------------------------------------------------
def catalog_path(lang: str, notebook: Path) -> Path:
    return notebook.parent / "locale" / lang / (notebook.stem + ".po")


def new_catalog(lang: str, notebook: Path) -> polib.POFile:
    po = polib.POFile(wrapwidth=0)
    po.metadata = {
        "Project-Id-Version": f"kafkasim courseware {notebook.stem}",
        "Language": lang,
        "MIME-Version": "1.0",
        "Content-Type": "text/plain; charset=UTF-8",
        "Content-Transfer-Encoding": "8bit",
    }
    return po


def load_catalog(path: Path) -> polib.POFile:
    try:
        po = polib.pofile(str(path), wrapwidth=0, encoding="utf-8")
    except (OSError, ValueError) as exc:   # polib raises IOError/ValueError with the line
        raise SystemExit(f"{path}: not a readable gettext catalog: {exc}") from exc
    return po


def _entries(source) -> list[tuple[str, str]]:
    return source.entries if isinstance(source, _Messages) else english_entries(source)


def update_catalog(nb, po: polib.POFile, *, append: bool = False) -> dict[str, int]:
    """Merge the notebook's paragraphs (or a ``_Messages``) into ``po`` (msgmerge-like).
    ``append``: the entries kept stay in the catalog's order and new ones go at the end (the
    runtime catalog, which several branches add to at once, merges cleanly that way).
    Returns counts by outcome."""
    current = {(e.msgctxt, e.msgid): e for e in po if not e.obsolete}
    for e in po:               # an obsolete entry wanted again comes back (as msgmerge does)
        if e.obsolete and e.msgstr and (e.msgctxt, e.msgid) not in current:
            e.obsolete = False
            current[(e.msgctxt, e.msgid)] = e
    by_cell: dict[str, list[polib.POEntry]] = {}
    for e in po:
        if e.msgstr and not e.obsolete:
            by_cell.setdefault(e.msgctxt, []).append(e)
    wanted = _entries(nb)
    keys = set(wanted)
    counts = {"kept": 0, "fuzzy": 0, "new": 0, "obsolete": 0}
    reused: set[tuple[str, str]] = set()
    fresh = polib.POFile(wrapwidth=0)
    fresh.metadata = po.metadata
    for ctxt, text in wanted:
        if (ctxt, text) in current:
            fresh.append(current.pop((ctxt, text)))
            counts["kept"] += 1
            continue
        if any(e.msgctxt == ctxt and e.msgid == text for e in fresh):
            continue          # the same paragraph twice in one cell: one entry
        entry = polib.POEntry(msgctxt=ctxt, msgid=text, msgstr="")
        old = [e for e in by_cell.get(ctxt, []) if (e.msgctxt, e.msgid) not in keys]
        best = max(old, default=None, key=lambda e: _similarity(e.msgid, text))
        if best is not None and _similarity(best.msgid, text) >= FUZZY_SIMILARITY:
            entry.msgstr = best.msgstr
            entry.flags.append("fuzzy")
            entry.previous_msgid = best.msgid
            reused.add((best.msgctxt, best.msgid))
            counts["fuzzy"] += 1
        else:
            counts["new"] += 1
        fresh.append(entry)
    for key, e in current.items():
        if e.msgstr and key not in reused:
            e.obsolete = True
            fresh.append(e)
            counts["obsolete"] += 1
    if append:
        order = {(e.msgctxt, e.msgid): k for k, e in enumerate(po)}
        fresh = sorted(fresh, key=lambda e: order.get((e.msgctxt, e.msgid), len(order)))
    po[:] = list(fresh)
    return counts


def _similarity(a: str, b: str) -> float:
    return difflib.SequenceMatcher(None, a, b, autojunk=False).ratio()


def problems(nb, po: polib.POFile) -> list[str]:
    """Untranslated, fuzzy or missing entries for the notebook's current paragraphs."""
    entries = {(e.msgctxt, e.msgid): e for e in po if not e.obsolete}
    out = []
    for ctxt, text in _entries(nb):
        e = entries.get((ctxt, text))
        first = text.splitlines()[0][:60]
        if e is None:
            out.append(f"missing (run `i18n.py update`): [{ctxt}] {first}")
        elif "fuzzy" in e.flags:
            out.append(f"fuzzy (line {e.linenum}): [{ctxt}] {first}")
        elif not e.msgstr.strip():
            out.append(f"untranslated (line {e.linenum}): [{ctxt}] {first}")
        elif _block_kind(text) != _block_kind(e.msgstr):
            out.append(f"the translation is not the same kind of block ({_block_kind(text)} "
                       f"translated as {_block_kind(e.msgstr)}; line {e.linenum}): [{ctxt}] "
                       f"{first}")
    return out


#: Markdown block starts a translation must keep: a heading stays a heading, a quote a quote...
_BLOCK_MARKS = (("heading", "#"), ("quote", ">"), ("list item", "- "), ("table", "|"),
                ("details", "<details>"), ("end of details", "</details>"))


def _block_kind(text: str) -> str:
    """What kind of Markdown block ``text`` is, by how it starts."""
    for kind, mark in _BLOCK_MARKS:
        if text.lstrip().startswith(mark):
            return kind
    return "paragraph"


# -- messages printed by kafkasim.course ---------------------------------------------------------
def module_context(tree) -> str:
    """The msgctxt of a module's runtime messages: its ``I18N_CONTEXT = "..."`` (a module whose
    one-word labels must not share the course's translation of the same word), else
    ``kafkasim.course``."""
    import ast

    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "I18N_CONTEXT"
                                                for t in node.targets) and \
                isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            return node.value.value
    return RUNTIME_CTXT


def course_messages(*folders: Path) -> list[tuple[str, str]]:
    """(context, message) for every ``tr("...")`` or ``N_("...")`` (a message translated where it
    is printed) with a literal message in the course code, the widgets, the experiments' notebook
    helpers and the drawings (or in ``folders``), in file order: the prose the notebooks print
    and draw, translated at run time. The context is the module's ``I18N_CONTEXT``
    (``module_context``)."""
    import ast

    out: list[tuple[str, str]] = []
    default = (COURSE_CODE, WIDGETS_CODE, EXPERIMENTS_CODE, VIZ_CODE)
    paths = [p for folder in (folders or default)
             for p in sorted(folder.glob("*.py"))]
    for path in paths:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        ctxt = module_context(tree)
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("tr", "N_") and \
                    node.args and isinstance(node.args[0], ast.Constant) and \
                    isinstance(node.args[0].value, str):
                key = (ctxt, node.args[0].value)
                if key not in out:
                    out.append(key)
    return out


def notebook_titles() -> list[tuple[str, str]]:
    """(context, title) for every literal ``title="..."`` of an ``explore(...)`` call in the English
    notebooks' code: the explorer prints it through ``tr`` (``kafkasim.course.explore``), so a
    translated edition shows it translated while the code stays the same."""
    import ast

    out: list[tuple[str, str]] = []
    for path in english_notebooks():
        for cell in nbformat.read(path, as_version=4).cells:
            if cell.cell_type != "code":
                continue
            try:
                tree = ast.parse(cell.source)
            except SyntaxError:
                continue
            for node in ast.walk(tree):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "explore":
                    out += [(RUNTIME_CTXT, k.value.value) for k in node.keywords
                            if k.arg == "title" and isinstance(k.value, ast.Constant)
                            and isinstance(k.value.value, str)
                            and (RUNTIME_CTXT, k.value.value) not in out]
    return out


class _Messages:
    """Adapter so the course messages go through the same merge as a notebook's paragraphs."""

    def __init__(self, entries: list[tuple[str, str]]):
        self.entries = entries


def runtime_catalog_path(lang: str) -> Path:
    return COURSE_CODE / "locale" / f"{lang}.po"


# -- building ------------------------------------------------------------------------------------
def translate_markdown(source: str, ctxt: str, table: dict[tuple[str, str], str]) -> str:
    out = []
    for p in paragraphs(source):
        out.append(table.get((ctxt, p), p) if translatable(p) else p)
    return _reroot("\n\n".join(out))


def _reroot(markdown: str) -> str:
    """Links out of notebooks/ (``../README.md``) from one folder deeper (notebooks/<lang>/)."""
    return re.sub(r"\]\(\.\./", "](../../", markdown)


NAV_LINK = re.compile(r"\[([^\]]*)\]\((\d\d[a-h]?-[\w-]+\.ipynb)\)")


def translated_titles(lang: str) -> dict[str, str]:
    """Notebook file name -> its translated title (the catalog's entry for its ``# NN · ``
    heading), for every notebook whose title is translated."""
    out = {}
    for path in english_notebooks():
        cat = catalog_path(lang, path)
        if not cat.exists():
            continue
        for e in load_catalog(cat):
            if not e.obsolete and e.msgid.startswith(f"# {path.name.split('-', 1)[0]} · ") and \
                    e.msgstr.strip() and "fuzzy" not in e.flags:
                out[path.name] = e.msgstr.strip().removeprefix("# ").strip()
                break
    return out


def _retitle(source: str, titles: dict[str, str]) -> str:
    """In a generated nav or road map cell, each notebook link's text becomes that notebook's
    translated title (the short one, before the colon, in nav links), so every notebook names
    the others the same way; a link to a notebook not translated yet goes to the English one."""
    nav = source.lstrip().startswith("<!-- nav -->")

    def repl(m):
        target = m.group(2)
        title = titles.get(target)
        if title is None:            # not translated yet: link the English notebook
            return f"[{m.group(1)}](../{target})"
        if nav:
            title = re.split(r"\s*[:：]\s*", title, maxsplit=1)[0]
            text = m.group(1)
            title = ("← " if text.startswith("←") else "") + title + \
                (" →" if text.endswith("→") else "")
        return f"[{title}]({target})"

    return NAV_LINK.sub(repl, source)


def build_notebook(nb, po: polib.POFile, lang: str, name: str,
                   titles: dict[str, str] | None = None):
    """The translated copy of ``nb`` (file ``name``): markdown from ``po`` (nav and road map links
    named by ``titles``), code identical, outputs cleared."""
    table = {(e.msgctxt, e.msgid): e.msgstr for e in po
             if not e.obsolete and e.msgstr.strip() and "fuzzy" not in e.flags}
    out = nbformat.reads(nbformat.writes(nb), as_version=4)
    for cell in out.cells:
        if cell.cell_type == "markdown":
            cell.source = translate_markdown(cell.source, cell["id"], table)
            if titles and cell.source.lstrip().startswith(("<!-- nav -->", "<!-- roadmap -->")):
                cell.source = _retitle(cell.source, titles)
        elif cell.cell_type == "code":
            cell.source = translate_comments(cell.source, cell["id"], table)
            cell.outputs = []
            cell.execution_count = None
    meta = out.metadata.setdefault("kafkasim", {})
    meta["language"] = lang
    meta["translated_from"] = f"../{name}"
    out.metadata.pop("widgets", None)
    return out


def english_notebooks() -> list[Path]:
    return sorted(p for p in NOTEBOOKS.iterdir() if NOTEBOOK_RE.match(p.name))


def translated_path(lang: str, notebook: Path) -> Path:
    return notebook.parent / lang / notebook.name


def same_except_outputs(a, b) -> bool:
    """True if two notebooks have the same cells and sources (outputs and counts ignored)."""
    if len(a.cells) != len(b.cells):
        return False
    return all(x.cell_type == y.cell_type and x.source == y.source and x.get("id") == y.get("id")
               for x, y in zip(a.cells, b.cells, strict=True))


def code_differs(english, translated) -> list[str]:
    """Ids of the code cells whose code (comments aside) is not the English notebook's."""
    theirs = {c.get("id"): c.source for c in translated.cells if c.cell_type == "code"}
    return [c.get("id") for c in english.cells if c.cell_type == "code" and
            without_comments(theirs.get(c.get("id"), "")) != without_comments(c.source)]


# -- commands ------------------------------------------------------------------------------------
def cmd_update(lang: str) -> int:
    for path in english_notebooks():
        nb = nbformat.read(path, as_version=4)
        cat = catalog_path(lang, path)
        po = load_catalog(cat) if cat.exists() else new_catalog(lang, path)
        counts = update_catalog(nb, po)
        cat.parent.mkdir(parents=True, exist_ok=True)
        po.save(str(cat))
        print(f"{cat.relative_to(REPO)}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    cat = runtime_catalog_path(lang)
    po = load_catalog(cat) if cat.exists() else new_catalog(lang, Path("kafkasim.course"))
    messages = course_messages()
    messages += [m for m in notebook_titles() if m not in messages]
    counts = update_catalog(_Messages(messages), po, append=True)
    cat.parent.mkdir(parents=True, exist_ok=True)
    po.save(str(cat))
    print(f"{cat.relative_to(REPO)}: " + ", ".join(f"{v} {k}" for k, v in counts.items()))
    return 0


def keep_outputs(old, new) -> int:
    """Copy the executed outputs of ``old``'s code cells into ``new``'s cells with the same id
    and source (a markdown-only change needs no re-run). Returns how many code cells lack them."""
    before = {c.get("id"): c for c in old.cells if c.cell_type == "code"}
    missing = 0
    for cell in new.cells:
        if cell.cell_type != "code":
            continue
        prev = before.get(cell.get("id"))
        if prev is not None and without_comments(prev.source) == without_comments(cell.source) \
                and prev.execution_count is not None:      # a comment changes no output
            cell.outputs = prev.outputs
            cell.execution_count = prev.execution_count
        else:
            missing += 1
    return missing


def cmd_build(lang: str) -> int:
    titles = translated_titles(lang)
    for path in english_notebooks():
        nb = nbformat.read(path, as_version=4)
        cat = catalog_path(lang, path)
        po = load_catalog(cat) if cat.exists() else new_catalog(lang, path)
        out = build_notebook(nb, po, lang, path.name, titles)
        target = translated_path(lang, path)
        missing = sum(c.cell_type == "code" for c in out.cells)
        if target.exists():
            old = nbformat.read(target, as_version=4)
            if same_except_outputs(old, out) and old.metadata.get("kafkasim") == \
                    out.metadata.get("kafkasim"):
                continue      # keep the executed outputs of an unchanged translation
            missing = keep_outputs(old, out)
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.validate(out)
        nbformat.write(out, target)
        rerun = f"; {missing} code cell(s) to run: scripts/execute-notebooks.py" if missing else ""
        print(f"built {target.relative_to(REPO)}{rerun}")
    return 0


def cmd_check(lang: str) -> int:
    bad = 0
    titles = translated_titles(lang)
    for path in english_notebooks():
        nb = nbformat.read(path, as_version=4)
        cat = catalog_path(lang, path)
        if not cat.exists():
            print(f"{cat.relative_to(REPO)}: missing catalog (run `i18n.py update {lang}`)")
            bad += 1
            continue
        po = load_catalog(cat)
        for p in problems(nb, po):
            print(f"{cat.relative_to(REPO)}: {p}")
            bad += 1
        target = translated_path(lang, path)
        want = build_notebook(nb, po, lang, path.name, titles)
        if not target.exists():
            print(f"{target.relative_to(REPO)}: missing (run `i18n.py build {lang}`)")
            bad += 1
        elif not same_except_outputs(nbformat.read(target, as_version=4), want):
            print(f"{target.relative_to(REPO)}: out of date (run `i18n.py build {lang}`)")
            bad += 1
        else:
            for cell in code_differs(nb, nbformat.read(target, as_version=4)):
                print(f"{target.relative_to(REPO)}: code cell {cell} differs from the English "
                      "one beyond its comments")
                bad += 1
    cat = runtime_catalog_path(lang)
    entries = course_messages()
    messages = _Messages(entries + [m for m in notebook_titles() if m not in entries])
    if messages.entries and not cat.exists():
        print(f"{cat.relative_to(REPO)}: missing catalog (run `i18n.py update {lang}`)")
        bad += 1
    elif messages.entries:
        for p in problems(messages, load_catalog(cat)):
            print(f"{cat.relative_to(REPO)}: {p}")
            bad += 1
    if not bad:
        print(f"{LANGUAGES.get(lang, lang)}: every catalog complete, every notebook up to date")
    return 1 if bad else 0


def cmd_stats(lang: str) -> int:
    for path in english_notebooks():
        cat = catalog_path(lang, path)
        if not cat.exists():
            print(f"{path.name}: no catalog")
            continue
        po = load_catalog(cat)
        live = [e for e in po if not e.obsolete]
        fuzzy = sum("fuzzy" in e.flags for e in live)
        done = sum(bool(e.msgstr.strip()) and "fuzzy" not in e.flags for e in live)
        print(f"{path.name}: {done}/{len(live)} translated, {fuzzy} fuzzy, "
              f"{len(live) - done - fuzzy} untranslated")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=["update", "build", "check", "stats"])
    ap.add_argument("lang", choices=sorted(LANGUAGES))
    args = ap.parse_args(argv)
    return {"update": cmd_update, "build": cmd_build, "check": cmd_check,
            "stats": cmd_stats}[args.command](args.lang)


if __name__ == "__main__":
    sys.exit(main())
