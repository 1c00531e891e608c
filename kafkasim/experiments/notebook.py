"""Tables, plots and exercise checks for notebooks/90-experiments-at-scale.ipynb.

Every function takes a results table from ``run_sweep`` (one row per run) and aggregates it;
nothing here runs simulations except what the checks are given.
"""

from __future__ import annotations

import math

__all__ = [
    "availability_table",
    "start_spark",
    "check_fetch_wait",
    "check_no_loss_config",
    "check_quiet_threshold",
    "hw_latency_table",
    "loss_table",
    "plot_availability",
    "plot_hw_latency",
    "plot_loss",
    "plot_shrinks",
    "shrinks_table",
    "wilson",
]

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
            print("pyspark is not installed: sweeps run serially in this process.")
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
        print(start.describe())
        return
    from IPython.display import Markdown

    handle = display(Markdown(start.describe()), display_id=True)

    def update(s) -> None:
        if s.done.is_set():
            handle.update(Markdown(s.describe()))

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
    return pd.DataFrame(rows)


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
    ax.set_ylabel("P(run lost an acked write)")
    ax.set_ylim(0, 1)
    ax.set_title("Losing acknowledged writes under random broker crashes")
    ax.legend(loc="upper right", frameon=False)
    return ax


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
    return pd.DataFrame(rows)


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
        label = f"unclean {'on' if unclean else 'off'}"
        means = [g["offline_ms"].mean() / 1000, g["unavailable_ms"].mean() / 1000]
        xs = [0 + (0.2 if unclean else -0.2), 1 + (0.2 if unclean else -0.2)]
        left.bar(xs, means, 0.38, color=colors[unclean], label=label)
        right.scatter(g["offline_ms"] / 1000, g["lost_acked"], s=18, alpha=0.6,
                      color=colors[unclean], label=label)
    left.set_xticks([0, 1])
    left.set_xticklabels(["offline\n(Leader: none)", "unavailable\n(no running leader)"])
    left.set_ylabel("seconds per run (mean)")
    left.set_title("Partition unavailability")
    left.legend(frameon=False)
    right.set_xlabel("seconds offline in the run")
    right.set_ylabel("acked writes lost in the run")
    right.set_title("Each run: availability vs durability")
    right.legend(frameon=False)
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
    return pd.DataFrame(out).reset_index()


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
        ax.bar(xs, ys, width, label=str(load))
        for xi, y in zip(xs, ys, strict=True):
            if y == y:   # not NaN
                ax.annotate(f"{y:.0f}", (xi, y), textcoords="offset points", xytext=(0, 2),
                            ha="center", fontsize=9)
    ax.set_xticks(range(len(cases)))
    ax.set_xticklabels([str(c).replace(" ", "\n", 1) for c in cases])
    ax.set_ylabel("ISR shrinks per hour")
    ax.set_title("Healthy but distant followers leaving the ISR, by lag rule")
    ax.legend(frameon=False)
    return ax


# -- 4. produce -> HW latency ---------------------------------------------------------------
def hw_latency_table(results):
    ok = _ok(results)
    out = ok.groupby([LATENCY, FETCH_WAIT], sort=True)[
        ["hw_p50_ms", "hw_p99_ms", "ack_p50_ms", "ack_p99_ms"]].mean()
    return out.reset_index()


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
                label=f"network {lat} ms (p50)")
        ax.plot(g[FETCH_WAIT], g["hw_p99_ms"], "s--", color=color, alpha=0.6)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("replica.fetch.wait.max.ms")
    ax.set_ylabel("produce -> HW (ms)")
    ax.set_title("Produce-to-high-watermark latency (dashed: p99)")
    ax.legend(frameon=False, fontsize=9)
    return ax


# -- exercises ------------------------------------------------------------------------------
def _result(ok: bool, message: str):
    from kafkasim.course.checks import CheckResult

    text = ("PASS: " if ok else "Not quite: ") + message
    print(text)
    return CheckResult(ok, text)


def _missing(*answers):
    if any(a is None or a is Ellipsis for a in answers):
        return _result(False, "replace None with your answer, then run the cell again.")
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
        return _result(False, f"acks={acks}, min ISR {min_isr}, unclean={unclean} is not in "
                              "the sweep.")
    r = row.iloc[0]
    if r["runs with loss"] == 0:
        return _result(True, f"acks={acks}, min ISR {min_isr}, unclean={unclean} lost nothing "
                             f"in {r['runs']} runs: crashed brokers keep their data, and with "
                             "unclean election off only a replica with every acked write may "
                             "lead.")
    return _result(False, f"that configuration lost acknowledged writes in "
                          f"{r['runs with loss']} of {r['runs']} runs.")


def check_quiet_threshold(table, answer):
    """The smallest replica.lag.max.messages of the sweep with no shrink under the bursty load."""
    missing = _missing(answer)
    if missing is not None:
        return missing
    bursty = table[(table["load"] == "bursty") & table["case"].str.startswith("messages")]
    quiet = sorted(int(c.split(">")[1]) for c, v in zip(bursty["case"], bursty["shrinks/h"],
                                                        strict=True) if v == 0)
    if not quiet:
        return _result(False, "no message threshold of this sweep stayed quiet; add larger ones.")
    if int(answer) == quiet[0]:
        return _result(True, f"with more than {quiet[0]} messages allowed, the bursts never "
                              "push a healthy follower out; smaller thresholds flap.")
    return _result(False, f"look at the bursty bars again (the first quiet one is not "
                          f"{answer}).")


def check_fetch_wait(results, answer):
    """Does a longer replica.fetch.wait.max.ms make produce -> HW slower (True/False)?"""
    missing = _missing(answer)
    if missing is not None:
        return missing
    table = hw_latency_table(results)
    waits = sorted(table[FETCH_WAIT].unique())
    lo = table[table[FETCH_WAIT] == waits[0]]["hw_p50_ms"].mean()
    hi = table[table[FETCH_WAIT] == waits[-1]]["hw_p50_ms"].mean()
    slower = hi > lo * 1.2
    if bool(answer) == slower:
        why = ("it does here" if slower else
               "a follower's fetch waits in the leader's purgatory only until new records "
               "arrive, so the wait limit matters on an idle partition, not for new writes")
        return _result(True, why + f" (p50 {lo:.0f} ms at {waits[0]} ms vs {hi:.0f} ms at "
                                   f"{waits[-1]} ms).")
    return _result(False, f"compare the p50 lines: {lo:.0f} ms at {waits[0]} ms vs {hi:.0f} ms "
                          f"at {waits[-1]} ms.")
