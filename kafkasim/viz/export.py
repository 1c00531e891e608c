"""Exports: figures to PNG/SVG/PDF, the event trace to CSV or Parquet for pandas users."""

from __future__ import annotations

from pathlib import Path

FORMATS = ("png", "svg", "pdf")


def save(fig, path, *, dpi: int = 150) -> Path:
    """Write ``fig`` in the format its extension names (.png, .svg or .pdf); returns the path."""
    path = Path(path)
    fmt = path.suffix.lower().lstrip(".")
    if fmt not in FORMATS:
        raise ValueError(f"cannot save a figure as {path.name!r}: the extension must be one of "
                         f"{', '.join('.' + f for f in FORMATS)}")
    fig.savefig(path, format=fmt, dpi=dpi)
    return path


def trace_frame(cluster):
    """The trace as a DataFrame (time_ms, event, node, topic, partition, detail) with ``node``
    and ``detail`` as text, so every column has one type (Parquet needs that)."""
    frame = cluster.trace.to_frame()
    frame["detail"] = frame["detail"].map(lambda d: None if d is None else str(d)) \
        .astype("string")
    frame["topic"] = frame["topic"].astype("string")
    frame["node"] = frame["node"].astype("string")
    return frame


def trace_to_csv(cluster, path) -> Path:
    """Write the trace as CSV (one row per event, header line first); returns the path."""
    path = Path(path)
    trace_frame(cluster).to_csv(path, index=False)
    return path


def trace_to_parquet(cluster, path) -> Path:
    """Write the trace as Parquet (needs pyarrow); returns the path."""
    path = Path(path)
    trace_frame(cluster).to_parquet(path, index=False)
    return path
