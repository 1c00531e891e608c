"""The course's explorations: ``kafkasim.widgets.Explorer`` over the notebooks' plain functions.

``explore(fn, {"lag_ms": [10000, 30000, 60000], "pause_ms": (0, 30000, 1000)})`` shows one
control per keyword argument of ``fn`` and re-runs ``fn(**values)`` whenever a control changes.
``fn`` returns what to show: text, a matplotlib Figure, or a list of both (the text is shown
right under the controls, the first Figure under it; text alone shows no figure at all).
``fn`` stays a plain function, so a cell (and pytest) can call it directly: nbval never
renders widgets. ``explorer.update(lag_ms=30000)`` does exactly what moving that control does.

Controls: a list -> dropdown; a ``(min, max, step)`` tuple -> slider (``kafkasim.widgets``).
"""

from __future__ import annotations

from collections.abc import Callable

from matplotlib.figure import Figure

from kafkasim.course.i18n import tr
from kafkasim.widgets import Explorer


def show(value) -> None:
    """Display a function's result in a notebook: Figures as images, text as text."""
    from IPython.display import display

    for part in parts(value):
        if isinstance(part, Figure):
            display(part)
        elif isinstance(part, str):
            print(part)
        else:
            display(part)


def parts(value) -> list:
    """The displayable pieces of a result: a list/tuple is flattened, None dropped."""
    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        return [p for v in value for p in parts(v)]
    return [value]


def _draw(result, fig: Figure):
    # the first Figure the function returned; none: nothing drawn (``fig`` stays empty), so the
    # explorer shows its text answer under the controls and no blank image
    for part in parts(result):
        if isinstance(part, Figure):
            return part
    return None


def _summary(result) -> str:
    # every part but the figures, so a function returning a number (notebook 07's
    # failover_after: ms until a new leader) shows it rather than an unchanging blank
    return "\n\n".join(str(p) for p in parts(result) if not isinstance(p, Figure))


class CourseExplorer(Explorer):
    """An ``Explorer`` whose ``build`` returns text and/or figures, with an optional title."""

    def __init__(self, fn: Callable, controls: dict, *, values: dict | None = None,
                 title: str | None = None, precompute: bool = False) -> None:
        super().__init__(fn, controls, _draw, summary=_summary, values=values,
                         precompute=precompute)
        self.title = tr(title) if title else title   # a notebook's title: scripts/i18n.py
        self._titled = None                          # collects it (notebook_titles)

    @property
    def widget(self):
        box = Explorer.widget.fget(self)
        if not self.title:
            return box
        if self._titled is None:
            import html

            import ipywidgets as w

            self._titled = w.VBox([w.HTML(f"<b>{html.escape(self.title)}</b>"), box])
            if "kafkasim-projector" in box._dom_classes:     # the title in large type too
                self._titled.add_class("kafkasim-projector")
        return self._titled


def explore(fn: Callable, controls: dict, *, values: dict | None = None,
            title: str | None = None, precompute: bool = False) -> CourseExplorer:
    """Controls for ``fn``'s keyword arguments, re-running ``fn`` on every change (see module
    docstring). Returns the explorer; as a cell's last value it shows as the widget.
    ``precompute=True`` (dropdowns only) renders every combination when the widget is built:
    a slower cell, then instant changes."""
    return CourseExplorer(fn, controls, values=values, title=title, precompute=precompute)
