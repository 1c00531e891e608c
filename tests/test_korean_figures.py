"""The Korean edition's figures: their words come from the Korean catalog and matplotlib draws
them with a Hangul font (no missing-glyph warning, no boxes). Needs a font with Hangul glyphs
(``scripts/check-fonts.sh`` installs Debian's fonts-nanum); skipped without one."""

from __future__ import annotations

import copy
import io
import logging
import re
import shutil
import warnings

import matplotlib as mpl
import pytest
from matplotlib import font_manager

from kafkasim.course import i18n
from kafkasim.scenarios.scenario import Scenario
from kafkasim.viz import cluster_map, isr_timeline, style

HANGUL = re.compile(r"[\uac00-\ud7a3]")
VIZ = style.I18N_CONTEXT


def _need_hangul_font() -> str:
    family = style.hangul_font()
    if family is None:
        pytest.skip("no font with Hangul glyphs is installed (fc-list :lang=ko is empty): "
                    "install fonts-nanum (scripts/check-fonts.sh does it as root)")
    return family


@pytest.fixture(scope="module")
def cluster():
    return Scenario.named("seed-isr-shrink-expand").run().cluster


@pytest.fixture
def korean():
    i18n.set_language("ko")
    try:
        yield i18n.catalog("ko")
    finally:
        i18n.set_language(None)


def _draw(fig, caplog) -> list[str]:
    """Render ``fig`` to PNG; the missing-glyph warnings and font-lookup log lines it caused."""
    with warnings.catch_warnings(record=True) as caught, \
            caplog.at_level(logging.WARNING, logger="matplotlib"):
        warnings.simplefilter("always")
        fig.savefig(io.BytesIO(), format="png")
    found = [str(w.message) for w in caught if "missing from font" in str(w.message)]
    return found + [r.getMessage() for r in caplog.records if r.name.startswith("matplotlib")]


def _texts(fig) -> dict[str, object]:
    ax = fig.axes[0]
    return {"title": ax.get_title(), "xlabel": ax.get_xlabel(),
            "legend": [t.get_text() for t in ax.get_legend().get_texts()],
            "yticks": [t.get_text() for t in ax.get_yticklabels()]}


def test_isr_timeline_in_korean_uses_the_catalog_and_draws_every_glyph(cluster, korean, caplog):
    family = _need_hangul_font()
    ko = {msgid: msgstr for (ctxt, msgid), msgstr in korean.items() if ctxt == VIZ}
    with mpl.rc_context():
        assert style.use_hangul_fallback() == family
        assert mpl.rcParams["font.family"][-1] == family
        fig = isr_timeline(cluster, "isr-demo", 0)
        texts = _texts(fig)
        problems = _draw(fig, caplog)
    want_title = ko["{topic}-{partition}: ISR membership over time"].format(
        topic="isr-demo", partition=0)
    assert texts["title"] == want_title
    assert texts["xlabel"] == ko["time (ms)"]
    assert texts["legend"] == [ko[m] for m in ("in ISR", "out of ISR", "leader", "broker stopped",
                                               "broker paused", "leader change")]
    assert sorted(texts["yticks"]) == [ko["broker {b}"].format(b=b) for b in (1, 2, 3)]
    for text in [texts["title"], texts["xlabel"], *texts["legend"], *texts["yticks"]]:
        assert HANGUL.search(text), f"not Korean: {text!r}"
    assert problems == [], problems


def test_bold_korean_text_draws_without_a_font_weight_note(cluster, korean, caplog):
    """fonts-nanum's bold faces weigh 600: matplotlib's "Failed to find font weight bold" note
    for the fallback font is filtered, so no cell prints it under a bold title."""
    _need_hangul_font()
    with mpl.rc_context():
        style.use_hangul_fallback()
        fig = cluster_map(cluster)
        problems = _draw(fig, caplog)
    heads = [t.get_text() for t in fig.axes[0].texts if t.get_fontweight() == "bold"]
    assert heads and all(HANGUL.search(h) for h in heads if h.startswith(("★", "브")))
    assert HANGUL.search(fig._suptitle.get_text())
    assert problems == [], problems


def test_without_the_hangul_fallback_the_same_figure_misses_glyphs(cluster, korean, caplog):
    """The check above can fail: drawn with the course font alone, Hangul is missing."""
    _need_hangul_font()
    with mpl.rc_context({"font.family": ["DejaVu Sans"]}):
        fig = isr_timeline(cluster, "isr-demo", 0)
        problems = _draw(fig, caplog)
    assert any("missing from font" in p for p in problems), problems


def test_english_figure_words_are_unchanged(cluster):
    i18n.set_language("en")
    try:
        fig = isr_timeline(cluster, "isr-demo", 0)
    finally:
        i18n.set_language(None)
    texts = _texts(fig)
    assert texts["title"] == "isr-demo-0: ISR membership over time"
    assert texts["xlabel"] == "time (ms)"
    assert texts["legend"][:3] == ["in ISR", "out of ISR", "leader"]


def test_a_font_installed_after_matplotlib_cached_its_font_list_is_found(monkeypatch):
    """fonts-nanum installed by the set-up after matplotlib wrote fontlist-v*.json: the font
    files fontconfig lists for Korean are added to the font manager and the cache rewritten."""
    family = _need_hangul_font()
    if shutil.which("fc-list") is None:
        pytest.skip("fontconfig's fc-list is not installed")
    stale = copy.deepcopy(font_manager.fontManager)
    hangul_files = set(style._fc_list_hangul())
    stale.ttflist = [f for f in stale.ttflist if f.fname not in hangul_files]
    assert family not in {f.name for f in stale.ttflist}
    dumped = []
    monkeypatch.setattr(font_manager, "fontManager", stale)
    monkeypatch.setattr(font_manager, "json_dump", lambda fm, path: dumped.append(path))
    style.hangul_font.cache_clear()
    try:
        assert style.hangul_font() == family
        assert family in {f.name for f in stale.ttflist}
        assert len(dumped) == 1 and re.search(r"fontlist-v[\d.]+\.json$", str(dumped[0]))
    finally:
        style.hangul_font.cache_clear()


def test_no_hangul_font_changes_nothing(monkeypatch):
    monkeypatch.setattr(style, "hangul_font", lambda: None)
    with mpl.rc_context({"font.family": ["sans-serif"]}), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert style.use_hangul_fallback() is None
        assert mpl.rcParams["font.family"] == ["sans-serif"]
