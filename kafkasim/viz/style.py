"""Shared look of every drawing: large fonts for projection, colour-blind-safe palettes, a Hangul
fallback font for the Korean edition, the drawings' words in the course language (``tr``), and a
Figure made without pyplot (so widgets can redraw without touching global state)."""

from __future__ import annotations

import io
import logging
import shutil
import subprocess
import sys
import unicodedata
from functools import cache

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

# Sizes in points: readable on a projector at the back of a room.
FONT = 14
SMALL = 12
TITLE = 16
_NORMAL = (FONT, SMALL, TITLE)
_PROJECTOR = (20, 17, 23)      # projector mode: the back row of a workshop room
PRESENTATION = False

#: CSS for the widgets in projector mode (large type, high contrast; rows wrap to 1280 px)
PROJECTOR_CSS = """<style>
.kafkasim-projector, .kafkasim-projector .widget-label, .kafkasim-projector .widget-readout,
.kafkasim-projector button, .kafkasim-projector select, .kafkasim-projector pre,
.kafkasim-projector .widget-html-content { font-size: 20px !important; line-height: 1.35; }
.kafkasim-projector button { min-height: 40px; font-weight: 600; border: 2px solid #000; }
.kafkasim-projector { color: #000; background: #fff; max-width: 1260px; }
.kafkasim-projector pre { color: #000; }
.kafkasim-projector .kafkasim-details button { font-size: 15px !important; min-height: 30px;
                                               padding: 0 8px; }
.kafkasim-projector .kafkasim-kind { max-width: 250px; }
.kafkasim-projector .kafkasim-time { min-width: 160px !important; }
.kafkasim-projector .kafkasim-topic .widget-label,
.kafkasim-projector .kafkasim-partition .widget-label { display: none; }
</style>"""


def set_presentation(on: bool = True) -> None:
    """Projector mode for every drawing made from now on (large type: ``FONT`` 20 pt instead of
    14) and for the widgets built from now on (``PROJECTOR_CSS``). ``set_presentation(False)``
    switches back. Course-wide, because a workshop projects the whole notebook."""
    global FONT, SMALL, TITLE, PRESENTATION
    PRESENTATION = bool(on)
    FONT, SMALL, TITLE = _PROJECTOR if PRESENTATION else _NORMAL

# Paul Tol's "bright" scheme: distinct for the common colour-vision deficiencies; one per broker.
BRIGHT = ("#4477AA", "#EE6677", "#228833", "#CCBB44", "#66CCEE", "#AA3377", "#BBBBBB")
# Paul Tol's "light" scheme: pale enough for black text on top; one per leader epoch.
EPOCH_COLORS = ("#77AADD", "#EE8866", "#EEDD88", "#FFAABB", "#99DDFF", "#44BB99", "#BBCC33",
                "#AAAA00")
GREY = "#DDDDDD"        # cells and boxes of a stopped broker
DARK_GREY = "#777777"   # text on a stopped broker
COMMITTED = "#E8E8E8"   # background behind offsets below the leader's HW
HW_COLOR = "#000000"
LEO_COLOR = "#AA3377"
IN_ISR = "#4477AA"
OUT_OF_ISR = "#EE6677"
LEADER = "#CCBB44"
PAUSED = "#EEDD88"

# Okabe-Ito colours for the Kafka APIs of the space-time diagram (requests solid, responses dashed).
API_COLORS = {
    "Produce": "#0072B2",
    "Fetch": "#009E73",
    "OffsetsForLeaderEpoch": "#56B4E9",
    "LeaderAndIsr": "#CC79A7",
    "UpdateMetadata": "#E69F00",
    "AlterPartition": "#D55E00",
    "AlterIsr": "#D55E00",          # AlterPartition's name before Kafka 3.2 (KIP-497 / KIP-841)
    "StopReplica": "#882255",
    "ControlledShutdown": "#332288",
    "Metadata": "#000000",
    "ListOffsets": "#117733",
    "OffsetCommit": "#44AA99",
    "ZkPing": "#999999",
}
OTHER_API = "#666666"


#: gettext msgctxt of the drawings' words (titles, axis labels, legends), kept apart from the
#: course's so a legend's "leader" is not the course table's "leader" header.
I18N_CONTEXT = "kafkasim.viz"

# Families with Hangul glyphs, best first: Debian's fonts-nanum (scripts/check-fonts.sh installs
# it), Noto CJK (matplotlib reads a .ttc's first face, JP, which has Hangul too), macOS, Windows.
HANGUL_FAMILIES = ("NanumGothic", "NanumBarunGothic", "Noto Sans CJK KR", "Noto Sans KR",
                   "Noto Sans CJK JP", "Source Han Sans KR", "UnDotum", "Baekmuk Gulim",
                   "Apple SD Gothic Neo", "AppleGothic", "Malgun Gothic")


def tr(message: str, /, *, _context: str | None = I18N_CONTEXT, **fields) -> str:
    """``message`` in the course language, once the course is loaded (a Korean notebook imports
    it); English without it. Looked up, not imported: the course package imports the drawings
    and the widgets. ``_context``: the gettext msgctxt, the drawings' by default (None: the
    course's own); the widgets' ``tr`` (``kafkasim.widgets._render``) is this one."""
    course = sys.modules.get("kafkasim.course.i18n")
    if course is not None:
        if _context is not None:
            return course.tr(message, _context=_context, **fields)
        return course.tr(message, **fields)
    return message.format(**fields) if fields else message


def narrate(text: str) -> str:
    """A simulator message (a checker's message, a trace event, a table header) in the course
    language, once the course is loaded: ``kafkasim.course.narration.narrate``, looked up like
    ``tr``; the text unchanged without it."""
    course = sys.modules.get("kafkasim.course.narration")
    return course.narrate(text) if course is not None else text


def text_width(text: str) -> int:
    """Columns ``text`` takes in a monospace font: a wide character (Hangul, CJK) takes two, so a
    translated header keeps a text table aligned (ASCII text: ``len``)."""
    if text.isascii():
        return len(text)
    return sum(2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1 for ch in text)


def _fc_list_hangul() -> list[str]:
    """Font files fontconfig says cover Korean (``fc-list :lang=ko file``); [] without fc-list."""
    fc_list = shutil.which("fc-list")
    if fc_list is None:
        return []
    try:
        out = subprocess.run([fc_list, ":lang=ko", "file"], capture_output=True, text=True,
                             timeout=20, check=False).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return sorted(line.strip().rstrip(":") for line in out.splitlines() if line.strip())


@cache
def hangul_font() -> str | None:
    """The family name of an installed font with Hangul glyphs, or None.

    matplotlib caches its font list (``fontlist-v*.json`` in its cache dir) and does not see a font
    installed after the cache was written, e.g. by ``scripts/check-fonts.sh`` on a machine where
    matplotlib already ran. Then the font files fontconfig lists for Korean are added to the running
    font manager, and the cache is written again so the next kernel finds them at once."""
    from matplotlib import font_manager

    manager = font_manager.fontManager
    known = {f.name for f in manager.ttflist}
    for family in HANGUL_FAMILIES:
        if family in known:
            return family
    have = {f.fname for f in manager.ttflist}
    added = []
    for path in _fc_list_hangul():
        if path in have or not path.lower().endswith((".ttf", ".otf", ".ttc")):
            continue
        try:
            manager.addfont(path)
        except (OSError, RuntimeError, ValueError):
            continue
        added.append(manager.ttflist[-1].name)
    if not added:
        return None
    try:
        import matplotlib as mpl

        cache_file = f"fontlist-v{font_manager.FontManager.__version__}.json"
        font_manager.json_dump(manager, f"{mpl.get_cachedir()}/{cache_file}")
    except Exception:  # noqa: BLE001 - a read-only cache only costs the next kernel this search
        pass
    return next((f for f in HANGUL_FAMILIES if f in added), added[0])


class _HangulWeightNote(logging.Filter):
    """Drops matplotlib's "findfont: Failed to find font weight bold for NanumGothic, now using
    600" (fonts-nanum's bold faces are 600): for the fallback font that substitute is what a bold
    title should get, and the note would print under every cell drawing bold text."""

    def __init__(self, family: str):
        super().__init__()
        self.family = family

    def filter(self, record: logging.LogRecord) -> bool:
        return not (str(record.msg).startswith("findfont: Failed to find font weight")
                    and len(record.args or ()) == 3 and record.args[1] == self.family)


def use_hangul_fallback() -> str | None:
    """Add the Hangul font (``hangul_font``) after the current families in ``font.family``, so
    matplotlib (3.6+: per-glyph fallback) draws Latin text as before and Hangul with that font.
    Returns the family, or None (nothing changed, nothing warned) without a Hangul font."""
    import matplotlib as mpl

    family = hangul_font()
    if family is None:
        return None
    current = mpl.rcParams["font.family"]
    current = [current] if isinstance(current, str) else list(current)
    if family not in current:
        mpl.rcParams["font.family"] = [*current, family]
    log = logging.getLogger("matplotlib.font_manager")
    if not any(isinstance(f, _HangulWeightNote) and f.family == family for f in log.filters):
        log.addFilter(_HangulWeightNote(family))
    return family


class CourseFigure(Figure):
    """A Figure that shows itself as a PNG in Jupyter even if pyplot was never imported (only
    pyplot's inline backend registers a display formatter for Figures)."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png")
        return buf.getvalue()


def new_figure(width: float, height: float, *, layout: str | None = "constrained") -> Figure:
    """A Figure with an Agg canvas and no pyplot registration (nothing global to close)."""
    fig = CourseFigure(figsize=(width, height), layout=layout)
    FigureCanvasAgg(fig)
    return fig


def clear_contents(ax) -> None:
    """Remove what the axes draw, keeping the axes and their ticks: much cheaper than
    ``ax.clear()``, which builds every tick again (a widget redraws into the same axes)."""
    for artist in [*ax.collections, *ax.lines, *ax.patches, *ax.texts]:
        artist.remove()
    if ax.get_legend() is not None:
        ax.get_legend().remove()


def epoch_color(epoch: int) -> str:
    """Fill colour of a record written in leader epoch ``epoch`` (cycles after 8 epochs)."""
    return EPOCH_COLORS[epoch % len(EPOCH_COLORS)]


def broker_color(index: int) -> str:
    return BRIGHT[index % len(BRIGHT)]


def api_color(api: str) -> str:
    return API_COLORS.get(api, OTHER_API)


def node_label(node) -> str:
    """How a trace node is named on an axis: "broker 1", "zookeeper", or the client's name."""
    return tr("broker {b}", b=node) if isinstance(node, int) else str(node)
