"""Small ipywidgets front-end for the course's plain functions.

``explore(fn, {"lag_ms": [10000, 30000, 60000], "pause_ms": (0, 30000, 1000)})`` shows one
control per keyword argument and re-runs ``fn(**values)`` whenever a control changes, showing what
it returns: a matplotlib Figure, text, or anything IPython can display. The function stays a
plain function, so a cell (and pytest) can call it directly: nbval never renders widgets.

Controls: a list -> dropdown; a ``(min, max, step)`` tuple -> slider; a bool -> checkbox.
"""

from __future__ import annotations

from collections.abc import Callable


def _control(name: str, spec, value):
    import ipywidgets as W

    desc = name.replace("_", " ")
    style = {"description_width": "initial"}
    layout = W.Layout(width="420px")
    if isinstance(spec, bool):
        return W.Checkbox(value=spec if value is None else value, description=desc, style=style)
    if isinstance(spec, list):
        options = [(str(o), o) for o in spec]
        return W.Dropdown(options=options, value=spec[0] if value is None else value,
                          description=desc, style=style, layout=layout)
    if isinstance(spec, tuple) and len(spec) == 3:
        lo, hi, step = spec
        cls = W.FloatSlider if any(isinstance(x, float) for x in spec) else W.IntSlider
        return cls(min=lo, max=hi, step=step, value=lo if value is None else value,
                   description=desc, continuous_update=False, style=style, layout=layout)
    raise TypeError(f"control {name!r}: use a list (dropdown), a (min, max, step) tuple "
                    f"(slider) or a bool (checkbox), not {spec!r}")


def show(value) -> None:
    """Display a function's result: a Figure as an image, text as preformatted text."""
    from IPython.display import display
    from matplotlib.figure import Figure

    if value is None:
        return
    if isinstance(value, Figure):
        display(value)
    elif isinstance(value, str):
        print(value)
    elif isinstance(value, (tuple, list)) and all(isinstance(v, (Figure, str)) for v in value):
        for v in value:
            show(v)
    else:
        display(value)


def _parts(value) -> list:
    """The displayable pieces of a result: Figures and strings (anything else as its repr)."""
    if value is None:
        return []
    if isinstance(value, (tuple, list)):
        return [p for v in value for p in _parts(v)]
    return [value]


def _png(fig, dpi: int = 80) -> bytes:
    import io

    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, bbox_inches="tight")
    return buf.getvalue()


def _render(value) -> list:
    """Widgets showing ``value``: ipywidgets.Image for figures, HTML <pre> for text. (No
    Output widget: its captured output does not survive headless execution.)"""
    import html

    import ipywidgets as W
    from matplotlib.figure import Figure

    out = []
    for part in _parts(value):
        if isinstance(part, Figure):
            out.append(W.Image(value=_png(part), format="png", layout=W.Layout(max_width="100%")))
            if part.canvas.manager is not None:      # made with pyplot: do not leak it
                import matplotlib.pyplot as plt

                plt.close(part)
        else:
            text = part if isinstance(part, str) else repr(part)
            out.append(W.HTML("<pre style='font-size:12px;line-height:1.3;margin:0'>"
                              f"{html.escape(text)}</pre>"))
    return out


def explore(fn: Callable, controls: dict, *, values: dict | None = None,
            title: str | None = None):
    """Controls for ``fn``'s keyword arguments and an area that shows ``fn(**values)``.

    ``values`` gives starting values (default: the first option / the slider's minimum)."""
    import ipywidgets as W

    values = values or {}
    widgets = {k: _control(k, spec, values.get(k)) for k, spec in controls.items()}
    result = W.VBox()
    status = W.HTML()

    def update(_change=None) -> None:
        kwargs = {k: w.value for k, w in widgets.items()}
        status.value = "<i>running the simulation…</i>"
        try:
            result.children = _render(fn(**kwargs))
            status.value = ""
        except Exception as exc:  # show the error in place: the widget must stay usable
            status.value = f"<b>Error:</b> {type(exc).__name__}: {exc}"

    for w in widgets.values():
        w.observe(update, names="value")
    header = [W.HTML(f"<b>{title}</b>")] if title else []
    box = W.VBox([*header, *widgets.values(), status, result])
    update()
    return box
