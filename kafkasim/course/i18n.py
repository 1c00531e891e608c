"""The language of the prose ``kafkasim.course`` prints (exercise feedback, hints, verdicts).

The English text in the code is the message id. A translated edition reads its messages from the
gettext catalog ``kafkasim/course/locale/<lang>.po``, kept by ``scripts/i18n.py`` beside the
notebook catalogs, so a change in an English message shows up there as untranslated or fuzzy.

The language is, in order: ``set_language(...)`` if called; the ``KAFKASIM_LANG`` environment
variable; ``ko`` when the kernel runs in ``notebooks/ko/`` (a Korean notebook's own folder, which is
where JupyterLab starts its kernel); else English. Messages with values use ``str.format`` fields,
translated as a whole: ``tr("the leader is broker {b}.", b=2)``. A message kept in a table and
translated where it is printed is marked ``N_("...")`` (a table header: ``text_table`` translates
its headers). A module whose short words must not take the course's translation of the same
word (the player's "broker" button is not a table's "broker" header) names its own gettext
``msgctxt`` in ``I18N_CONTEXT`` and passes it as ``tr(..., _context=...)``; ``scripts/i18n.py``
files that module's messages under it. ``kafkasim.widgets`` prints the player's readout, its
controls' labels and tooltips and the broker tiles through this ``tr`` too, once the course is
loaded (``kafkasim.widgets._render.tr``); so do notebook 90's helpers
(``kafkasim.experiments.notebook``: captions, checks, the Spark start line), and the drawings'
titles, axis labels and legends (``kafkasim.viz.style.tr``, msgctxt ``kafkasim.viz``), which
matplotlib draws in Hangul with the font ``kafkasim.viz.style.use_hangul_fallback`` adds.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

LOCALE = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "ko")
CONTEXT = "kafkasim.course"      # the msgctxt of a message with no module context of its own

_chosen: str | None = None


def set_language(lang: str | None) -> None:
    """Force the language of course messages (``None``: back to automatic)."""
    global _chosen
    if lang is not None and lang not in LANGUAGES:
        raise ValueError(f"unknown course language {lang!r}; known: {', '.join(LANGUAGES)}")
    _chosen = lang


def language() -> str:
    if _chosen is not None:
        return _chosen
    env = os.environ.get("KAFKASIM_LANG", "").strip().lower()
    if env:
        return env if env in LANGUAGES else "en"
    cwd = Path.cwd()
    if cwd.name in LANGUAGES and cwd.parent.name == "notebooks":
        return cwd.name
    return "en"


@cache
def catalog(lang: str) -> dict[tuple[str, str], str]:
    """(msgctxt, msgid) -> msgstr of the translated, non-fuzzy entries of ``locale/<lang>.po``."""
    path = LOCALE / f"{lang}.po"
    if lang == "en" or not path.exists():
        return {}
    import polib

    po = polib.pofile(str(path), encoding="utf-8")
    return {(e.msgctxt or CONTEXT, e.msgid): e.msgstr for e in po.translated_entries()
            if "fuzzy" not in e.flags}


def N_(message: str, /) -> str:
    """Mark a message kept in a table for translation where it is printed (``tr(TABLE[k])``):
    returns it unchanged, and ``scripts/i18n.py`` collects it as it does ``tr("...")``."""
    return message


def tr(message: str, /, *, _context: str = CONTEXT, **fields) -> str:
    """``message`` in the course language, with ``fields`` filled in (``str.format``);
    ``_context``: the msgctxt of the module printing it (its ``I18N_CONTEXT``)."""
    text = catalog(language()).get((_context, message), message)
    return text.format(**fields) if fields else text
