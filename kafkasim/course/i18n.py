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

A Korean particle right after a value must agree with how the value is read ("브로커 3은",
"브로커 2는"; "47을", "45를"), so a translation names the particle as the field's format spec and
``tr`` writes the value with the particle that fits: ``"{b:는} 리더입니다"`` prints "3은 리더입니다"
for b=3 and "2는 리더입니다" for b=2. Either form of a pair names it (``{b:은}`` = ``{b:는}``);
after another spec it follows a colon (``{t:.1f:로}``). ``particle(text, pair)`` is the choice.
"""

from __future__ import annotations

import os
import re
import string
from functools import cache
from pathlib import Path

LOCALE = Path(__file__).resolve().parent / "locale"
LANGUAGES = ("en", "ko")
CONTEXT = "kafkasim.course"      # the msgctxt of a message with no module context of its own

_chosen: str | None = None

# Korean particle pairs: (after a final consonant, after a vowel); 으로/로 also takes 로 after ㄹ.
PARTICLES = (("은", "는"), ("이", "가"), ("을", "를"), ("과", "와"), ("으로", "로"),
             ("이나", "나"), ("이며", "며"), ("이고", "고"), ("이면", "면"), ("이라", "라"),
             ("이다", "다"), ("이에요", "예요"), ("이었습니다", "였습니다"))
_PAIR = {form: pair for pair in PARTICLES for form in pair}
# How a digit is read at the end of a number (일 이 삼 사 오 육 칠 팔 구): final consonant or not,
# and whether it is ㄹ (which takes 로, not 으로). A trailing 0 is read 영 after a point or alone,
# else as 십, 백, 천, 만…, which all end in a consonant other than ㄹ.
_DIGIT_FINAL = {"1": "ㄹ", "2": "", "3": "ㅁ", "4": "", "5": "", "6": "ㄱ", "7": "ㄹ", "8": "ㄹ",
                "9": ""}
# Latin letters read by name (에이, 비, 씨 … 엘, 엠, 엔, 알): those ending in a consonant.
_LETTER_FINAL = {"L": "ㄹ", "M": "ㅁ", "N": "ㄴ", "R": "ㄹ"}
_HANGUL_FINALS = "_ㄱㄲㄳㄴㄵㄶㄷㄹㄺㄻㄼㄽㄾㄿㅀㅁㅂㅄㅅㅆㅇㅈㅊㅋㅌㅍㅎ"


def _final(text: str) -> str | None:
    """The final consonant ("" for none, None when unknown) of ``text`` read aloud in Korean:
    a Hangul syllable's own, a number's last spoken digit or unit, a Latin word's last sound."""
    word = re.sub(r"[^0-9A-Za-z가-힣.]+$", "", text).rstrip(".")
    if not word:
        return None
    last = word[-1]
    if "가" <= last <= "힣":
        final = (ord(last) - ord("가")) % 28
        return _HANGUL_FINALS[final] if final else ""
    if last.isdigit():
        digits = re.search(r"[0-9.]*$", word).group(0)
        zeros = len(digits) - len(digits.rstrip("0"))
        if not zeros:
            return _DIGIT_FINAL[last]
        return "ㅇ" if digits.rstrip("0").endswith(".") or not digits.rstrip("0") else "ㄴ"
    tail = re.search(r"[A-Za-z]+$", word).group(0)
    if tail.isupper():
        return _LETTER_FINAL.get(tail[-1], "")
    tail = tail.lower()
    if tail.endswith("l"):
        return "ㄹ"
    if tail.endswith(("m", "n", "ng", "ck", "k", "p")) or re.search(r"[aeiou]t$", tail):
        return "ㅁ"     # some final consonant other than ㄹ
    return ""


def particle(text: str, pair: str) -> str:
    """The form of the particle ``pair`` (either form: "은" or "는", "로" or "으로"...) that
    follows ``text`` when read aloud; both forms, "은(는)", when the reading is unknown."""
    consonant, vowel = _PAIR[pair]
    final = _final(text)
    if final is None:
        return f"{consonant}({vowel})"
    if consonant == "으로":
        return "로" if final in ("", "ㄹ") else "으로"
    return consonant if final else vowel


def split_particle(spec: str) -> tuple[str, str | None]:
    """A format spec's own part and its particle: "는" -> ("", "는"), ".1f:로" -> (".1f", "로")."""
    head, _, tail = spec.rpartition(":")
    return (head, tail) if tail in _PAIR else (spec, None)


class _ParticleFormatter(string.Formatter):
    def format_field(self, value, format_spec):
        spec, pair = split_particle(format_spec)
        text = format(value, spec)
        return text + particle(text, pair) if pair else text


_FORMATTER = _ParticleFormatter()


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
    return _FORMATTER.vformat(text, (), fields) if fields else text
