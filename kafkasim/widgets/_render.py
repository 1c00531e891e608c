"""Figure → PNG bytes for ``ipywidgets.Image``: one widget redrawn in place, no pyplot state."""

from __future__ import annotations

import io

from matplotlib.figure import Figure

from kafkasim.viz import style

DPI = 72
TICK_CHOICES = (1, 10, 50, 100, 250, 1000, 5000)   # simulated ms per Play tick (the dropdown)


def N_(message: str, /) -> str:
    """Marks a message kept in a table, translated where it is shown: ``scripts/i18n.py`` collects
    every ``N_("...")`` under the calling module's ``I18N_CONTEXT``."""
    return message


def tr(message: str, /, *, _context: str | None = None, **fields) -> str:
    """``kafkasim.viz.style.tr`` (the course's language once the course is loaded, English
    without it); ``_context``: the calling module's ``I18N_CONTEXT`` (None: the course's)."""
    return style.tr(message, _context=_context, **fields)


def narrate(text: str) -> str:
    """``kafkasim.viz.style.narrate``: a simulator message in the course language."""
    return style.narrate(text)


def text_width(text: str) -> int:
    """``kafkasim.viz.style.text_width``: monospace columns (Hangul takes two)."""
    return style.text_width(text)


def png(fig: Figure, dpi: int = DPI) -> bytes:
    """The figure as PNG bytes (Agg), at ``dpi`` (72: small and fast enough for a redraw)."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=dpi, pil_kwargs={"compress_level": 1})  # fast zlib
    return buf.getvalue()


def pre(text: str) -> str:
    """Text as an HTML <pre> block (escaped), for an ``ipywidgets.HTML`` readout."""
    import html

    return ("<pre style='font-size:12px;line-height:1.3;margin:0'>"
            f"{html.escape(text)}</pre>")


def img_tag(data: bytes, alt: str) -> str:
    """PNG bytes as an inline <img> (a data: URI), for a static HTML rendition."""
    import base64
    import html

    return (f"<img alt='{html.escape(alt, quote=True)}' style='max-width:100%' "
            f"src='data:image/png;base64,{base64.b64encode(data).decode('ascii')}'/>")


def widget_bundle(widget, text: str, static_html: str) -> dict:
    """The widget's own mime bundle plus a readable ``text/plain`` and a static ``text/html``:
    where the widget cannot be shown (a notebook not yet run or not trusted, GitHub,
    nbviewer) the front-end falls back to these instead of ``VBox(children=(...``."""
    data = dict(widget._repr_mimebundle_() or {})
    data["text/plain"] = text
    data["text/html"] = ("<div class='kafkasim-static'>" + static_html +
                         "<div style='font-size:11px;color:#666'>"
                         + tr("A still image of the widget: run the cell for the interactive "
                              "version.") + "</div></div>")
    return data


class WithFallback:
    """Shows ``widget`` in a notebook, with ``text`` (and ``static_html``, default: the text) as
    what GitHub, nbviewer or a not-yet-run notebook shows instead (``widget_bundle``)."""

    def __init__(self, widget, text: str, static_html: str | None = None) -> None:
        self.widget = widget
        self.text = text
        self.static_html = static_html

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs) -> dict:
        return widget_bundle(self.widget, self.text, self.static_html or pre(self.text))


def with_fallback(widget, text: str, static_html: str | None = None) -> WithFallback:
    """``widget`` with a readable fallback: ``with_fallback(box, "what it shows now")``."""
    return WithFallback(widget, text, static_html)
