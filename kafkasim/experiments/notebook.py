"""Tables, plots and exercise checks for notebooks/90-experiments-at-scale.ipynb.

Every function takes a results table from ``run_sweep`` (one row per run) and aggregates it;
nothing here runs simulations except what the checks are given. The prose it prints (captions,
the Spark start line, the checks' feedback) speaks the course's language: ``tr()`` of
``kafkasim.course.i18n``, catalog ``kafkasim/course/locale/<lang>.po`` (``scripts/i18n.py``
collects the messages of ``kafkasim/experiments`` too); the checks grade in the course's style
(``kafkasim.course.checks``: PASS / Not quite / Not answered yet). The course sits above the
experiments package and never imports it, so importing it from here makes no cycle.
Column names, config keys and fault kinds stay English in the data; a table shows its headers
and labels translated (``shown``), and a figure draws its caption (``figure_caption``) in the
course language too.
"""

from __future__ import annotations

import json
import math

from kafkasim.course.checks import _result, unanswered
from kafkasim.course.common import error_line, text_table
from kafkasim.course.i18n import N_, language
from kafkasim.course.i18n import tr as _tr
from kafkasim.course.narration import narrate

#: gettext msgctxt of notebook 90's messages (and distributed.SparkStart.describe's): its short
#: words ("writes", "ready") are not the course's of the same spelling (kafkasim.course.i18n)
I18N_CONTEXT = "kafkasim.experiments"


def tr(message: str, /, **fields) -> str:
    """``kafkasim.course.i18n.tr`` under ``I18N_CONTEXT``."""
    return _tr(message, _context=I18N_CONTEXT, **fields)

__all__ = [
    "availability_table",
    "error_line",
    "runs_line",
    "same_runs",
    "scenario_table",
    "sweep_line",
    "columns_table",
    "elr_table",
    "start_spark",
    "burst_shrinks",
    "check_burst_threshold",
    "check_fetch_wait",
    "check_loss_cause",
    "check_no_loss_config",
    "check_quiet_threshold",
    "fetch_wait_numbers",
    "fault_model",
    "fetch_wait_effect",
    "hw_latency_table",
    "loss_table",
    "lossy_configs",
    "plot_availability",
    "plot_hw_latency",
    "plot_loss",
    "plot_shrinks",
    "shrinks_table",
    "wilson",
]

#: decimals of every float a table here shows (probabilities, means): more would be noise
DECIMALS = 3

ACKS = "producer.acks"
MIN_ISR = "topic.min.insync.replicas"
UNCLEAN = "topic.unclean.leader.election.enable"
FETCH_WAIT = "broker.replica.fetch.wait.max.ms"
LATENCY = "cluster.latency_ms"


def start_spark(master: str | None = None, remote: str | None = None, *, show: bool = True):
    """Start Spark in the background now (session, then a warm-up job on every core), so that
    the first sweep does not wait for it; shows one line saying what it is doing and where
    Spark's own log goes, updated when it is ready. Sweeps in ``"auto"`` mode run serially until
    it is, then hand the rest of a long sweep to it. Returns the ``SparkStart`` (or None when
    pyspark is not installed: everything runs serially)."""
    import importlib.util

    if importlib.util.find_spec("pyspark") is None:
        if show:
            print(tr("pyspark is not installed: sweeps run serially in this process."))
        return None
    from kafkasim.experiments.distributed import prepare

    start = prepare(master, remote)
    if show:
        _show_start(start)
    return start


def _show_start(start) -> None:
    try:
        from IPython import get_ipython
        from IPython.display import display

        if get_ipython() is None:
            raise ImportError
    except ImportError:
        print(start.describe(tr))
        return
    from IPython.display import Markdown

    handle = display(Markdown(start.describe(tr)), display_id=True)

    def update(s) -> None:
        if s.done.is_set():
            handle.update(Markdown(s.describe(tr)))

    start.on_change(update)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """95 % Wilson score interval for k successes out of n (good for small n and p near 0)."""
    if n == 0:
        return (math.nan, math.nan)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def _ok(results):
    return results[results["status"] == "ok"]


# -- what the figures were measured under ----------------------------------------------------
def _one_or_all(values, fmt=str, tr=tr) -> str:
    """``a`` when every run had the same value, ``a or b`` when the sweep varied it."""
    distinct = sorted(set(values), key=lambda v: (str(type(v)), v))
    return tr(" or ").join(fmt(v) for v in distinct)


def _seconds(ms) -> str:
    return f"{ms / 1000:g} s"


def _down_range(down) -> str:
    lo, hi = (down, down) if isinstance(down, (int, float)) else tuple(down)
    return f"{lo / 1000:g} s" if lo == hi else f"{lo / 1000:g}\u2013{hi / 1000:g} s"


#: the faults' and scripted steps' action names, as the course's language says them (English:
#: kafkasim's own names, as a spec writes them)
_FAULT_WORDS = {"crash": N_("crash"), "power_loss": N_("power_loss"),
                "shutdown": N_("shutdown"), "pause": N_("pause"), "start": N_("start"),
                "cut": N_("cut"), "heal": N_("heal")}


def _fault_word(kind: str, tr=tr) -> str:
    return tr(_FAULT_WORDS[kind]) if kind in _FAULT_WORDS else kind


def _kind_text(kind, tr=tr) -> str:
    """``power_loss``, or ``pause + power_loss`` for a mix of kinds."""
    kinds = [kind] if isinstance(kind, str) else kind
    return " + ".join(_fault_word(k, tr) for k in kinds)


def _step_text(step: dict, tr=tr) -> str:
    who = step.get("broker", f"{step.get('a')}-{step.get('b')}")
    return tr("{fault} of broker {broker} at {at}", fault=_fault_word(step["do"], tr),
              broker=who, at=_seconds(step["at_ms"]))


def fault_model(results, tr=tr) -> str:
    """The fault model and workload the runs of ``results`` were measured under, read from
    their specs (``faults.kind``, ``rate_per_min``, ``down_ms``, ``max_down``, scripted steps;
    duration, drain, write rate; seeds). A value the sweep varied is listed as ``a or b``.
    Every loss and availability table and figure carries it, so that a figure is never read
    without the fault rate behind it. In the course's language (``tr``)."""
    ok = _ok(results)
    specs = [json.loads(s) for s in ok["spec"]] if "spec" in ok else []
    if not specs:
        return tr("no completed runs")
    faults = [s.get("faults") or {} for s in specs]
    random_faults = [f for f in faults if f.get("rate_per_min", 0)]
    parts = []
    if random_faults:
        parts.append(tr(
            "faults: {kinds} at random, {rate}/min across the cluster, each broker down "
            "{down}, at most {max_down} down at once",
            kinds=_one_or_all((_kind_text(f.get("kind", "crash"), tr) for f in random_faults),
                              tr=tr),
            rate=_one_or_all((f["rate_per_min"] for f in random_faults), lambda r: f"{r:g}",
                             tr),
            down=_one_or_all((_down_range(f.get("down_ms", 10000)) for f in random_faults),
                             tr=tr),
            max_down=_one_or_all((f.get("max_down", 1) for f in random_faults), tr=tr)))
    steps = sorted({_step_text(st, tr) for f in faults for st in f.get("steps", [])})
    if steps:
        parts.append(tr("faults: {steps}", steps=", ".join(steps)))
    if not random_faults and not steps:
        parts.append(tr("faults: none"))
    generated = [s for s in specs if not s.get("scenario") and not s.get("scenario_text")]
    if generated:
        rates = [(s.get("workload") or {}).get("rate") for s in generated]
        load = (tr("writes at {rate} records/s", rate=_one_or_all(rates, lambda r: f"{r:g}", tr))
                if None not in rates else tr("writes"))
        parts.append(tr(
            "{duration} of {load}, then {drain} to finish",
            duration=_one_or_all((s.get("duration_ms") or 60000 for s in generated), _seconds,
                                 tr),
            load=load,
            drain=_one_or_all((s.get("drain_ms") or 0 for s in generated), _seconds, tr)))
    seeds = len({s["seed"] for s in specs})
    parts.append(tr("{n} seed", n=seeds) if seeds == 1 else tr("{n} seeds", n=seeds))
    return "; ".join(parts)


def measured_under(results, tr=tr) -> str:
    """The caption of a table of ``results``: "Measured under " + ``fault_model``."""
    return tr("Measured under {fault_model}", fault_model=fault_model(results, tr))


def figure_caption(results) -> str:
    """The caption of a figure of ``results``: ``measured_under`` in the course language (the
    figures draw Hangul with ``kafkasim.viz.style.use_hangul_fallback``'s font)."""
    return measured_under(results)


#: the column headers the tables below show (translated where they are shown: ``shown``)
HEADERS = (N_("acks"), N_("min ISR"), N_("unclean"), N_("runs"), N_("runs with loss"),
           N_("P(loss)"), N_("low"), N_("high"), N_("lost per run"), N_("unclean elections"),
           N_("offline s"), N_("unavailable s"), N_("runs offline"), N_("case"), N_("load"),
           N_("faults/min"), N_("loss 95% CI"), N_("P(offline)"), N_("offline 95% CI"),
           N_("shrinks/h"), N_("expands/h"), N_("hw_p99_ms"), N_("seed"), N_("kafka_version"),
           N_("isr_shrinks"), N_("isr_expands"), N_("acked"), N_("expectations_failed"),
           N_("first_violation"), N_("scripted"), N_("on"), N_("off"), N_("none"),
           N_("serial"), N_("spark"), N_("serial+spark"))


def shown(frame):
    """``frame`` as the learner reads it: in English unchanged; in another language a copy with
    the headers and the label cells (a case, on / off) translated. The data keeps its English
    column names (``results["acked"]``)."""
    if language() == "en":
        return frame
    import pandas as pd

    out = pd.DataFrame(frame).copy()
    for col in out.columns:
        if out[col].dtype == object:
            out[col] = out[col].map(lambda v: _label(v) if isinstance(v, str) else v)
    out.columns = [tr(c) if isinstance(c, str) else c for c in out.columns]
    return out


def _label(text: str) -> str:
    """A table's label cell in the course language: this module's word, else the course's
    narration (a case label such as "messages > 5, 10/s"), else as it is."""
    said = tr(text)
    return said if said != text else narrate(text)


_CAPTIONED = None


def _captioned(frame, results):
    """``frame`` as a DataFrame that shows ``measured_under(results)`` above itself (HTML and
    text), and keeps it (and the English ``figure_caption`` a plot of it draws) through
    ``round`` and the like."""
    global _CAPTIONED
    if _CAPTIONED is None:
        import html

        import pandas as pd

        class CaptionedFrame(pd.DataFrame):
            _metadata = ["caption", "figure_caption"]

            @property
            def _constructor(self):
                return CaptionedFrame

            def _repr_html_(self):
                body = pd.DataFrame._repr_html_(shown(pd.DataFrame(self)))
                cap = getattr(self, "caption", None)
                return body if not cap or body is None else \
                    f"<p><b>{html.escape(cap)}</b></p>\n{body}"

            def __repr__(self) -> str:
                cap = getattr(self, "caption", None)
                body = repr(shown(pd.DataFrame(self)))
                return f"{cap}\n{body}" if cap else body

        _CAPTIONED = CaptionedFrame
    out = _CAPTIONED(frame)
    out.caption = measured_under(results)
    out.figure_caption = figure_caption(results)
    return out


def _caption_of(table_or_results) -> str | None:
    """The (English) caption a figure of a captioned table, or of results, draws."""
    cap = getattr(table_or_results, "figure_caption", None)
    if cap:
        return cap
    if "spec" in getattr(table_or_results, "columns", ()):
        return figure_caption(table_or_results)
    return None


# -- 1. losing acknowledged writes ----------------------------------------------------------
def loss_table(results):
    """Per (acks, min ISR, unclean): runs, runs that lost an acked write, P(loss) with a 95 %
    interval, mean lost records per run, unclean elections."""
    import pandas as pd

    rows = []
    ok = _ok(results)
    for (acks, min_isr, unclean), g in ok.groupby([ACKS, MIN_ISR, UNCLEAN], sort=True):
        n, k = len(g), int((g["lost_acked"] > 0).sum())
        lo, hi = wilson(k, n)
        rows.append({"acks": acks, "min ISR": int(min_isr), "unclean": bool(unclean),
                     "runs": n, "runs with loss": k, "P(loss)": k / n, "low": lo, "high": hi,
                     "lost per run": g["lost_acked"].mean(),
                     "unclean elections": int(g["unclean_elections"].sum())})
    return _captioned(pd.DataFrame(rows).round(DECIMALS), results)


def plot_loss(table, ax=None):
    """Bars of P(loss) with 95 % intervals: one group per (acks, min ISR), unclean off / on."""
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(10, 4))
    groups = list(dict.fromkeys(zip(table["acks"], table["min ISR"], strict=True)))
    width = 0.38
    for j, unclean in enumerate((False, True)):
        sub = table[table["unclean"] == unclean]
        xs, ys, errs = [], [], [[], []]
        for i, (acks, min_isr) in enumerate(groups):
            row = sub[(sub["acks"] == acks) & (sub["min ISR"] == min_isr)]
            if row.empty:
                continue
            r = row.iloc[0]
            xs.append(i + (j - 0.5) * width)
            ys.append(r["P(loss)"])
            errs[0].append(r["P(loss)"] - r["low"])
            errs[1].append(r["high"] - r["P(loss)"])
        ax.bar(xs, ys, width, yerr=errs, capsize=3,
               color="#d62728" if unclean else "#1f77b4",
               label=f"unclean.leader.election.enable={str(unclean).lower()}")
        for x, (acks, min_isr) in zip(xs, groups, strict=False):
            r = sub[(sub["acks"] == acks) & (sub["min ISR"] == min_isr)].iloc[0]
            ax.annotate(f"{r['runs with loss']}/{r['runs']}", (x, r["high"]),
                        textcoords="offset points", xytext=(0, 4), ha="center", fontsize=9)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels([f"acks={a}\nmin ISR {m}" for a, m in groups])
    ax.set_ylabel(tr("P(run lost an acked write)"))
    ax.set_ylim(0, 1)
    _title(ax, tr("Losing acknowledged writes"), _caption_of(table))
    ax.legend(loc="upper right", frameon=False)
    return ax


def _title(ax, title: str, caption: str | None) -> None:
    import textwrap

    if caption:
        title += "\n" + "\n".join(textwrap.wrap(caption, 110))
    ax.set_title(title, fontsize=10 if caption else None)
    if caption:
        ax.figure.subplots_adjust(top=0.78)


# -- 2. availability ------------------------------------------------------------------------
def availability_table(results, by: tuple[str, ...] = (UNCLEAN,)):
    """Per group: mean seconds per run with no leader (offline) and with no running leader
    (unavailable), P(loss), mean lost records."""
    import pandas as pd

    rows = []
    ok = _ok(results)
    for key, g in ok.groupby(list(by), sort=True):
        key = key if isinstance(key, tuple) else (key,)
        rows.append({**dict(zip(by, key, strict=True)), "runs": len(g),
                     "offline s": g["offline_ms"].mean() / 1000,
                     "unavailable s": g["unavailable_ms"].mean() / 1000,
                     "runs offline": int((g["offline_ms"] > 0).sum()),
                     "P(loss)": float((g["lost_acked"] > 0).mean()),
                     "lost per run": g["lost_acked"].mean()})
    return _captioned(pd.DataFrame(rows).round(DECIMALS), results)


def elr_table(results, by: tuple[str, ...] = ("case", "kafka_version")):
    """Per fault plan and Kafka version (ELR off on 4.0, on from 4.1): the fault rate, runs,
    P(an acknowledged write was lost) and P(the partition was offline: no leader) each with its
    95 % Wilson interval, and the mean offline seconds per run."""
    import pandas as pd

    rows = []
    for key, g in _ok(results).groupby(list(by), sort=False):
        key = key if isinstance(key, tuple) else (key,)
        n = len(g)
        lost, offline = int((g["lost_acked"] > 0).sum()), int((g["offline_ms"] > 0).sum())
        lo_l, hi_l = wilson(lost, n)
        lo_o, hi_o = wilson(offline, n)
        faults = json.loads(g["spec"].iloc[0]).get("faults") or {}
        rate = faults.get("rate_per_min", 0)
        rows.append({**dict(zip(by, key, strict=True)),
                     "ELR": "on" if _elr_default(key[by.index("kafka_version")]
                                                 if "kafka_version" in by else "") else "off",
                     "faults/min": rate if rate else "scripted", "runs": n,
                     "P(loss)": lost / n, "loss 95% CI": f"{lo_l:.3f}–{hi_l:.3f}",
                     "P(offline)": offline / n, "offline 95% CI": f"{lo_o:.3f}–{hi_o:.3f}",
                     "offline s": g["offline_ms"].mean() / 1000})
    return _captioned(pd.DataFrame(rows).round(DECIMALS), results)


def _elr_default(version: str) -> bool:
    """ELR is on by default for new clusters from Kafka 4.1 (KIP-966; a preview in 4.0)."""
    try:
        major, minor = (int(x) for x in str(version).split(".")[:2])
    except ValueError:
        return False
    return (major, minor) >= (4, 1)


#: notebook 90's grouping of a results table's columns (prefix or name -> group)
_COLUMN_GROUPS = (
    (N_("the run"), ("run_id", "seed", "scenario", "kafka_version", "status", "error", "sim_ms",
                     "events", "spec", "trace_digest")),
    (N_("records"), ("sent", "acked", "failed", "pending", "lost_acked", "committed")),
    (N_("final produce errors, by Kafka's error name"), ("err_", "attempt_errors")),
    (N_("ISR, elections, failures"), ("isr_shrinks", "isr_expands", "failed_isr_updates",
                                      "unclean_elections", "broker_failures")),
    (N_("availability (ms)"), ("offline_ms", "unavailable_ms")),
    (N_("latency percentiles (ms)"), ("ack_p", "hw_p")),
    (N_("invariant checkers (check = true)"), ("first_violation", "violations",
                                               "allowed_violations", "check_error",
                                               "expectations_failed")),
)


def _column_group(name: str) -> str | None:
    for group, keys in _COLUMN_GROUPS:
        if any(name == k or (k.endswith("_") and name.startswith(k)) or
               (k in ("ack_p", "hw_p") and name.startswith(k)) or
               (k == "first_violation" and name.startswith(k)) for k in keys):
            return group
    return None


def columns_table(results):
    """A results table's columns, grouped (the varied parameters, the run, records, errors,
    ISR and elections, availability, latency, checkers): one line per group."""
    groups: dict[str, list[str]] = {}
    for name in results.columns:
        group = _column_group(name) or N_("the varied parameters")
        groups.setdefault(group, []).append(name)
    order = [N_("the varied parameters")] + [g for g, _keys in _COLUMN_GROUPS]
    import textwrap

    rows = []
    for g in order:
        for i, line in enumerate(textwrap.wrap(", ".join(groups.get(g, ())), 64)):
            rows.append({tr("group"): tr(g) if i == 0 else "", tr("columns"): line})
    return text_table(rows)


def plot_availability(results, ax=None):
    """Per run: seconds the partition was offline (no leader) vs acknowledged writes lost,
    unclean election off vs on."""
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(1, 2, figsize=(11, 4))
    ok = _ok(results)
    left, right = ax
    colors = {False: "#1f77b4", True: "#d62728"}
    for unclean in (False, True):
        g = ok[ok[UNCLEAN] == unclean]
        label = tr("unclean on") if unclean else tr("unclean off")
        means = [g["offline_ms"].mean() / 1000, g["unavailable_ms"].mean() / 1000]
        xs = [0 + (0.2 if unclean else -0.2), 1 + (0.2 if unclean else -0.2)]
        left.bar(xs, means, 0.38, color=colors[unclean], label=label)
        right.scatter(g["offline_ms"] / 1000, g["lost_acked"], s=18, alpha=0.6,
                      color=colors[unclean], label=label)
    left.set_xticks([0, 1])
    left.set_xticklabels([tr("offline\n(Leader: none)"), tr("unavailable\n(no running leader)")])
    left.set_ylabel(tr("seconds per run (mean)"))
    left.set_title(tr("Partition unavailability"))
    left.legend(frameon=False)
    right.set_xlabel(tr("seconds offline in the run"))
    right.set_ylabel(tr("acked writes lost in the run"))
    right.set_title(tr("Each run: availability vs durability"))
    right.legend(frameon=False)
    caption = _caption_of(results)
    if caption:
        import textwrap

        left.figure.suptitle("\n".join(textwrap.wrap(caption, 120)), fontsize=9)
        left.figure.subplots_adjust(top=0.8)
    return ax


# -- 3. ISR shrinks under bursts ------------------------------------------------------------
def shrinks_table(results, by: tuple[str, ...] = ("case", "load")):
    """ISR shrinks per hour of simulated time (and expands), per lag rule and load."""
    import pandas as pd

    ok = _ok(results).copy()
    hours = ok["sim_ms"] / 3_600_000
    ok["shrinks/h"] = ok["isr_shrinks"] / hours
    ok["expands/h"] = ok["isr_expands"] / hours
    out = ok.groupby(list(by), sort=False)[["shrinks/h", "expands/h", "hw_p99_ms"]].mean()
    return _captioned(pd.DataFrame(out).reset_index().round(1), results)


def plot_shrinks(table, ax=None, x: str = "case", hue: str = "load"):
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(10, 4))
    cases = list(dict.fromkeys(table[x]))
    loads = list(dict.fromkeys(table[hue]))
    width = 0.8 / max(1, len(loads))
    for j, load in enumerate(loads):
        sub = table[table[hue] == load].set_index(x)
        ys = [sub["shrinks/h"].get(c, math.nan) for c in cases]
        xs = [i + (j - (len(loads) - 1) / 2) * width for i in range(len(cases))]
        ax.bar(xs, ys, width, label=_label(str(load)))
        for xi, y in zip(xs, ys, strict=True):
            if y == y:   # not NaN
                ax.annotate(f"{y:.0f}", (xi, y), textcoords="offset points", xytext=(0, 2),
                            ha="center", fontsize=9)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([_label(str(c)).replace(" ", "\n", 1) for c in cases])
    ax.set_ylabel(tr("ISR shrinks per hour"))
    _title(ax, tr("Healthy but distant followers leaving the ISR, by lag rule"),
           _caption_of(table))
    ax.legend(frameon=False)
    return ax


# -- 4. produce -> HW latency ---------------------------------------------------------------
def hw_latency_table(results):
    """Mean of the runs' produce -> HW and produce -> ack percentiles per (network latency,
    replica.fetch.wait.max.ms)."""
    ok = _ok(results)
    out = ok.groupby([LATENCY, FETCH_WAIT], sort=True)[
        ["hw_p50_ms", "hw_p99_ms", "ack_p50_ms", "ack_p99_ms"]].mean()
    return _captioned(out.reset_index(), results)


def plot_hw_latency(results, ax=None):
    """Produce -> HW latency (p50 solid, p99 dashed) vs replica.fetch.wait.max.ms, one line per
    network latency."""
    import matplotlib.pyplot as plt

    if ax is None:
        _fig, ax = plt.subplots(figsize=(10, 4))
    table = hw_latency_table(results)
    for i, (lat, g) in enumerate(table.groupby(LATENCY, sort=True)):
        color = f"C{i}"
        ax.plot(g[FETCH_WAIT], g["hw_p50_ms"], "o-", color=color,
                label=tr("network {lat} ms (p50)", lat=lat))
        ax.plot(g[FETCH_WAIT], g["hw_p99_ms"], "s--", color=color, alpha=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("replica.fetch.wait.max.ms")
    ax.set_ylabel(tr("produce -> HW (ms)"))
    _title(ax, tr("Produce-to-high-watermark latency (dashed: p99)"), _caption_of(results))
    ax.legend(frameon=False, fontsize=9)
    return ax


# -- exercises ------------------------------------------------------------------------------
def _missing(*answers):
    """``unanswered()`` (the course's "Not answered yet") for an answer left as None or ``...``."""
    if any(a is None or a is Ellipsis for a in answers):
        return unanswered()
    return None


def check_no_loss_config(results, acks, min_isr, unclean):
    """Name a configuration of the loss sweep that never lost an acknowledged write."""
    missing = _missing(acks, min_isr, unclean)
    if missing is not None:
        return missing
    table = loss_table(results)
    row = table[(table["acks"] == str(acks)) & (table["min ISR"] == int(min_isr)) &
                (table["unclean"] == bool(unclean))]
    if row.empty:
        return _result(False, tr("acks={acks}, min ISR {min_isr}, unclean={unclean} is not in "
                                 "the sweep.", acks=acks, min_isr=min_isr, unclean=unclean))
    r = row.iloc[0]
    if r["runs with loss"] == 0:
        return _result(True, tr("acks={acks}, min ISR {min_isr}, unclean={unclean} lost "
                                "nothing in {runs} runs: crashed brokers keep their data, and "
                                "with unclean election off only a replica with every acked "
                                "write may lead.", acks=acks, min_isr=min_isr, unclean=unclean,
                                runs=r["runs"]))
    return _result(False, tr("that configuration lost acknowledged writes in {lost} of {runs} "
                             "runs.", lost=r["runs with loss"], runs=r["runs"]))


def check_quiet_threshold(table, answer):
    """The smallest replica.lag.max.messages of the sweep with no shrink under the bursty load."""
    missing = _missing(answer)
    if missing is not None:
        return missing
    bursty = table[(table["load"] == "bursty") & table["case"].str.startswith("messages")]
    quiet = sorted(int(c.split(">")[1]) for c, v in zip(bursty["case"], bursty["shrinks/h"],
                                                        strict=True) if v == 0)
    if not quiet:
        return _result(False, tr("no message threshold of this sweep stayed quiet; add larger "
                                 "ones."))
    if int(answer) == quiet[0]:
        return _result(True, tr("with more than {n} messages allowed, the bursts never push a "
                                "healthy follower out; smaller thresholds flap.", n=quiet[0]))
    return _result(False, tr("look at the bursty bars again (the first quiet one is not "
                             "{answer}).", answer=answer))


FETCH_WAIT_VERDICTS = ("slower", "faster", "same")


def fetch_wait_effect(results, margin: float = 0.15) -> tuple[str, float, float, int, int, int]:
    """How produce -> HW p50 moves from the shortest to the longest replica.fetch.wait.max.ms of
    ``results``, at the largest network latency of the sweep (where a round trip costs most):
    ("slower" | "faster" | "same", p50 at the shortest wait, p50 at the longest, shortest wait,
    longest wait, network latency). A change within ``margin`` is "same"."""
    table = hw_latency_table(results)
    latency = int(table[LATENCY].max())
    row = table[table[LATENCY] == latency]
    waits = sorted(int(w) for w in row[FETCH_WAIT].unique())
    lo = float(row[row[FETCH_WAIT] == waits[0]]["hw_p50_ms"].mean())
    hi = float(row[row[FETCH_WAIT] == waits[-1]]["hw_p50_ms"].mean())
    verdict = "slower" if hi > lo * (1 + margin) else \
        "faster" if hi < lo / (1 + margin) else "same"
    return verdict, lo, hi, waits[0], waits[-1], latency


def check_fetch_wait(results, answer):
    """Predicted effect of raising replica.fetch.wait.max.ms from the sweep's shortest to its
    longest value on produce -> HW p50 ("slower", "faster" or "same"), graded against what
    ``results`` measured (``fetch_wait_effect``)."""
    missing = _missing(answer)
    if missing is not None:
        return missing
    if str(answer).strip().lower() not in FETCH_WAIT_VERDICTS:
        return _result(False, tr("answer with one of {choices}, not {answer!r}.",
                                 choices=", ".join(map(repr, FETCH_WAIT_VERDICTS)),
                                 answer=answer))
    verdict, lo, hi, short, long_, latency = fetch_wait_effect(results)
    numbers = tr("p50 {lo:.0f} ms with a {short} ms wait, {hi:.0f} ms with {long} ms, at "
                 "{latency} ms network latency", lo=lo, short=short, hi=hi, long=long_,
                 latency=latency)
    if str(answer).strip().lower() == verdict:
        why = {"faster": tr("a fetch that finds nothing new waits at the leader and is "
                            "answered the moment a record is appended; a short wait runs out "
                            "first, and a record that arrives while the empty answer and the "
                            "next fetch are on the wire waits for that fetch, up to one round "
                            "trip"),
               "slower": tr("here a longer wait ran out just before new records arrived more "
                            "often than a short one"),
               "same": tr("the followers' fetches seldom found nothing new, so the wait limit "
                          "was seldom used")}[verdict]
        return _result(True, tr("{why} ({numbers}).", why=why, numbers=numbers))
    return _result(False, tr("not what the runs measured: compare the p50 column ({numbers}).",
                             numbers=numbers))


# -- exercises that need reasoning (issue 33): nothing to look up in a table above ---------------
#: exercise 1's explanations: a team's acks=all, min ISR 2, unclean-off cluster lost acked writes
LOSS_CAUSES = {
    "a": N_("crashes keep the page cache: the loss sweep lost nothing with acks=all and unclean "
            "election off, even at 6 crashes a minute."),
    "b": N_("a power loss drops what the page cache held; when every replica holding a record "
            "loses it, no election brings it back (section 3)."),
    "c": N_("distance delays the acknowledgement (section 5), it loses nothing: the leader "
            "answers acks=all only once every ISR member has the record."),
    "d": N_("ELR never lost a write that 4.0 kept in these sweeps; it saves the case where the "
            "followers stall and the last ISR member loses power."),
}
LOSS_CAUSE = "b"


def check_loss_cause(answer=None):
    """Exercise 1: which cause ("a" to "d") explains acknowledged writes lost with acks=all,
    min.insync.replicas=2 and unclean election off; targeted feedback for each wrong one."""
    missing = _missing(answer)
    if missing is not None:
        return missing
    key = str(answer).strip().lower().strip("()")
    if key not in LOSS_CAUSES:
        return _result(False, tr("answer with one of {choices}, not {answer!r}.",
                                 choices=", ".join(map(repr, LOSS_CAUSES)), answer=answer))
    return _result(key == LOSS_CAUSE, tr(LOSS_CAUSES[key]))


def burst_shrinks(base: dict, rate: int, thresholds) -> dict[int, float]:
    """ISR shrinks per hour under the 0.8.2 message rule, for each ``replica.lag.max.messages``
    of ``thresholds``, on ``base`` (notebook 90's lag_base) with 2.1 s bursts of ``rate``
    records/s every 7 s (serial: two or three runs take seconds)."""
    from kafkasim.experiments import Sweep

    cases = [{"label": f"messages > {n}", "kafka_version": "0.8.2",
              "broker.replica.lag.max.messages": n} for n in thresholds]
    workload = {"burst": {"every_ms": 7000, "length_ms": 2100, "rate": rate}}
    rows = Sweep({**base, "workload": workload}, cases=cases, name=f"burst-{rate}") \
        .run(mode="serial", progress=False)
    return {n: round(float(s) / (ms / 3_600_000), 1)
            for n, s, ms in zip(thresholds, rows["isr_shrinks"], rows["sim_ms"], strict=True)}


def check_burst_threshold(base: dict, answer=None, rate: int = 20):
    """Exercise 2: the smallest replica.lag.max.messages that never takes a healthy follower out
    of the ISR under bursts of ``rate`` records/s, graded by running that threshold and the one
    below it (nothing runs without an answer)."""
    missing = _missing(answer)
    if missing is not None:
        return missing
    if isinstance(answer, bool) or not isinstance(answer, int) or answer < 1:
        return _result(False, tr("answer with a whole number of messages (1 or more), not "
                                 "{answer!r}.", answer=answer))
    got = burst_shrinks(base, rate, [answer - 1, answer] if answer > 1 else [answer])
    if got[answer] > 0:
        return _result(False, tr("messages > {n} still flaps at {rate} records/s ({shrinks} "
                                 "shrinks/h): at a check, a follower is as many records behind "
                                 "as the leader appended since its last caught-up fetch, and "
                                 "that grows with the rate.", n=answer, rate=rate,
                                 shrinks=got[answer]))
    if answer > 1 and got[answer - 1] == 0:
        return _result(False, tr("messages > {n} is quiet, but so is {m}: look for the smallest.",
                                 n=answer, m=answer - 1))
    return _result(True, tr("messages > {n} is the first quiet threshold at {rate} records/s "
                            "({m} still flaps): about twice the 10 records/s answer, because a "
                            "follower a round trip behind misses twice as many records.",
                            n=answer, rate=rate, m=answer - 1))


def fetch_wait_numbers(results) -> str:
    """The p50s ``fetch_wait_effect`` compares, as a sentence in the course's language."""
    _verdict, lo, hi, short, long_, latency = fetch_wait_effect(results)
    return tr("p50 {lo:.0f} ms with a {short} ms wait, {hi:.0f} ms with {long} ms, at "
              "{latency} ms network latency", lo=lo, short=short, hi=hi, long=long_,
              latency=latency)


#: section 2's prediction: which configurations of the loss sweep lose an acknowledged write
LOSSY_CHOICES = ("only the unclean-on ones", "the unclean-on ones and acks=1",
                 "every configuration", "none")


def lossy_configs(table) -> str:
    """Which configurations of ``loss_table(...)`` lost an acknowledged write, as one of
    ``LOSSY_CHOICES`` (or "another set")."""
    lossy = {(r["acks"], int(r["min ISR"]), bool(r["unclean"]))
             for _i, r in table.iterrows() if r["runs with loss"] > 0}
    every = {(r["acks"], int(r["min ISR"]), bool(r["unclean"])) for _i, r in table.iterrows()}
    unclean = {c for c in every if c[2]}
    if not lossy:
        return "none"
    if lossy == every:
        return "every configuration"
    if lossy == unclean:
        return "only the unclean-on ones"
    if lossy == unclean | {c for c in every if c[0] == "1"}:
        return "the unclean-on ones and acks=1"
    return "another set"


# -- lines the notebook prints --------------------------------------------------------------
def sweep_line(sweep) -> str:
    """What a ``Sweep`` will run: its name, what it varies, its seeds and its runs."""
    grid = ", ".join(f"{k}×{len(v)}" for k, v in sweep.grid.items()) or tr("no grid")
    cases = tr(", {n} cases", n=len(sweep.cases)) if sweep.cases else ""
    return tr("Sweep {name}: {grid}{cases}, {seeds} seed(s), {runs} runs", name=sweep.name,
              grid=grid, cases=cases, seeds=len(sweep.seeds), runs=len(sweep))


def runs_line(results) -> str:
    """How many runs a results table holds, and where they ran (serial or Spark)."""
    return tr("{n} runs, {mode}", n=len(results), mode=tr(results.attrs.get("mode", "serial")))


def same_runs(a, b) -> str:
    """Whether two results tables are identical, value for value."""
    return tr("identical: {same}", same=a.equals(b))


def scenario_table(results, columns):
    """Some columns of a results table (missing values: "none"), shown in the course language."""
    return shown(results[list(columns)].fillna({"first_violation": "none"}))

