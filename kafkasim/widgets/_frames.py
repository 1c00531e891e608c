"""Reused figures and a cache of rendered frames: how the player redraws fast.

A widget redraw that builds a new Figure pays for the axes, the ticks and (with
``layout="constrained"``) a layout pass that measures every text: 150-250 ms per drawing on this
kind of machine, several drawings per click. A ``Panel`` keeps one Figure and one Axes, lets the
drawing function redraw into those Axes (``viz.replica_logs(..., ax=ax)``,
``viz.isr_timeline(..., ax=ax)``...), sets the margins from the texts it drew (``fit_margins``,
no layout engine), and keeps the PNG of each frame it rendered under a key that says what it
showed, so going back to a time already seen costs a dictionary look-up.
"""

from __future__ import annotations

import unicodedata
from collections import OrderedDict

from kafkasim.viz import style
from kafkasim.widgets._render import png

FRAMES_KEPT = 64


def fit_margins(fig, ax, *, top_in: float = 0.8, bottom_in: float = 0.8) -> None:
    """Room for the y tick labels (left), a legend right of the axes, the title (``top_in``
    inches) and the x axis (``bottom_in``): a layout estimated from the texts, much cheaper
    than matplotlib's constrained layout."""
    w, h = fig.get_size_inches()

    def longest(texts, size):
        n = max((_ems(line) for t in texts for line in t.get_text().splitlines()), default=0)
        return 0.62 * size / 72 * n

    left = 0.35 + longest(ax.get_yticklabels(), style.FONT)
    legend = ax.get_legend()
    right = 0.9 + longest(legend.get_texts(), style.SMALL) if legend is not None else 0.3
    fig.subplots_adjust(left=min(left / w, 0.45), right=max(1 - right / w, 0.5),
                        top=1 - top_in / h, bottom=min(bottom_in / h, 0.4))


def _ems(line: str) -> float:
    """A line's width in average Latin characters: a wide character (Hangul, CJK) takes about
    1.6 of them, so a Korean legend is not clipped at the figure's edge (issue 34)."""
    return sum(1.6 if unicodedata.east_asian_width(ch) in ("W", "F") else 1.0 for ch in line)


class Panel:
    """One Figure and Axes redrawn in place; PNG frames cached by key (``FRAMES_KEPT``)."""

    def __init__(self, width: float = 13.0, *, top_in: float = 0.8) -> None:
        self.width = width
        self.top_in = top_in
        self.fig = None
        self.ax = None
        self.frames: OrderedDict = OrderedDict()
        self.renders = 0          # frames drawn (cache misses)

    def clear(self) -> None:
        """Forget every cached frame (the branch they showed is gone)."""
        self.frames.clear()

    def render(self, key, height, draw) -> bytes:
        """The PNG of the frame ``key``: cached, or ``draw(ax)`` into the reused Axes, the
        figure ``height`` inches high (a number, or a function called only on a miss)."""
        if key is not None and key in self.frames:
            self.frames.move_to_end(key)
            return self.frames[key]
        size = (self.width, float(height() if callable(height) else height))
        if self.fig is None:
            self.fig = style.new_figure(*size, layout=None)
            self.ax = self.fig.add_subplot()
        elif tuple(self.fig.get_size_inches()) != size:
            self.fig.set_size_inches(*size)
        draw(self.ax)
        fit_margins(self.fig, self.ax, top_in=self.top_in)
        data = png(self.fig)
        self.renders += 1
        if key is not None:
            self.frames[key] = data
            while len(self.frames) > FRAMES_KEPT:
                self.frames.popitem(last=False)
        return data
