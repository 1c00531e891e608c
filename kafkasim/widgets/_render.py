"""Figure → PNG bytes for ``ipywidgets.Image``: one widget redrawn in place, no pyplot state."""

from __future__ import annotations

import io

from matplotlib.figure import Figure

DPI = 72


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
