"""Summaries of a results table: one row per combination of the varied parameters."""

from __future__ import annotations

from kafkasim.experiments.runner import RESULT_COLUMNS

__all__ = ["param_columns", "summary", "summary_text"]

_RESULT_NAMES = {name for name, _kind in RESULT_COLUMNS}


def param_columns(results) -> list[str]:
    """The columns a sweep varied: its parameters (``scenario`` and ``kafka_version`` are
    result columns, named here when the sweep varied them)."""
    varied = results.attrs.get("params")
    if varied is not None:
        return [c for c in varied if c in results.columns]
    return [c for c in results.columns if c not in _RESULT_NAMES and c not in ("run_id", "seed")]


def summary(results, by: list[str] | None = None):
    """Per combination of ``by`` (default: every varied parameter): runs, errors, mean acked,
    lost acknowledged records (total, and the fraction of runs that lost any), mean offline and
    unavailable ms, mean ISR shrinks, median produce->HW p99, runs with an invariant violation."""
    import pandas as pd

    by = param_columns(results) if by is None else list(by)
    frame = results.copy()
    frame["_error"] = frame["status"] != "ok"
    frame["_lost_any"] = frame["lost_acked"] > 0
    frame["_violated"] = frame["first_violation"].notna()
    aggs = {
        "runs": ("run_id", "count"),
        "errors": ("_error", "sum"),
        "acked_mean": ("acked", "mean"),
        "lost_acked": ("lost_acked", "sum"),
        "p_loss": ("_lost_any", "mean"),
        "offline_ms_mean": ("offline_ms", "mean"),
        "unavailable_ms_mean": ("unavailable_ms", "mean"),
        "isr_shrinks_mean": ("isr_shrinks", "mean"),
        "hw_p99_ms_median": ("hw_p99_ms", "median"),
        "violated": ("_violated", "sum"),
    }
    if not by:
        return pd.DataFrame({name: [_aggregate(frame[col], fn)] for name, (col, fn) in
                             aggs.items()})
    return frame.groupby(by, dropna=False, sort=False).agg(**aggs).reset_index()


def _aggregate(column, fn: str):
    """``column.<fn>()``; NaN for the mean or median of a column with no value (all runs
    failed, or no record reached the HW) without numpy's 'Mean of empty slice' warning."""
    if fn in ("mean", "median") and not column.notna().any():
        return float("nan")
    return getattr(column, fn)()


def summary_text(results) -> str:
    """The summary as text, with a header naming the mode, runs and wall time."""
    import pandas as pd

    attrs = results.attrs
    head = (f"{attrs.get('sweep', 'sweep')}: {len(results)} runs"
            + (f" ({attrs['mode']}, {attrs['wall_s']:.1f} s wall)" if "mode" in attrs else ""))
    errors = results[results["status"] != "ok"]
    lines = [head]
    if len(errors):
        lines.append(f"{len(errors)} run(s) failed; first: run {errors['run_id'].iloc[0]} "
                     f"seed {errors['seed'].iloc[0]}: {errors['error'].iloc[0]}")
    with pd.option_context("display.width", 200, "display.max_columns", 30,
                           "display.float_format", "{:.4g}".format):
        lines.append(summary(results).to_string(index=False))
    return "\n".join(lines)
