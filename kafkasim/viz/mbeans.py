"""Kafka's metrics over simulated time, one panel per MBean titled with its JMX name, one line
per broker (a broker that is down reports nothing, so its line has a gap)."""

from __future__ import annotations

import difflib
import math

from kafkasim.runtime import metrics as kmetrics
from kafkasim.viz import style
from kafkasim.viz.style import tr

I18N_CONTEXT = "kafkasim.viz"   # gettext msgctxt of the words drawn (style.tr)

DEFAULT_METRICS = (
    kmetrics.UNDER_REPLICATED,
    kmetrics.ISR_SHRINKS + ":Count",
    kmetrics.ISR_EXPANDS + ":Count",
    kmetrics.MAX_LAG,
)


def resolve_mbeans(available, names) -> list[str]:
    """Full MBean names for ``names``: a full name, or the ``name=`` part alone
    ("UnderReplicatedPartitions", "IsrShrinksPerSec:Rate"; "IsrShrinksPerSec" means both its
    Count and Rate)."""
    available = list(available)
    out: list[str] = []
    for name in names:
        if name in available:
            found = [name]
        else:
            found = [m for m in available if _short(m) == name or _short(m).startswith(name + ":")
                     or _short(m).startswith(name + ",")]
        if not found:
            shorts = sorted({_short(m) for m in available})
            close = difflib.get_close_matches(name, shorts, n=3)
            hint = f" Did you mean {', '.join(close)}?" if close else ""
            raise ValueError(f"No metric {name!r} was recorded.{hint} Recorded: "
                             f"{', '.join(shorts[:12])}{' ...' if len(shorts) > 12 else ''}")
        out.extend(m for m in found if m not in out)
    return out


def _short(mbean: str) -> str:
    """"UnderReplicatedPartitions" for "kafka.server:type=ReplicaManager,name=Under..."."""
    _, _, rest = mbean.partition("name=")
    return rest or mbean


def metric_series(cluster, names=None, broker=None):
    """The metric rows to draw: a DataFrame (time_ms, broker, mbean, value), in ``names`` order
    (default: UnderReplicatedPartitions, IsrShrinksPerSec/IsrExpandsPerSec counts, MaxLag), for
    one broker or a list of them (default: all)."""
    frame = cluster.metrics.to_frame()
    wanted = resolve_mbeans(frame["mbean"].unique(), DEFAULT_METRICS if names is None
                            else ([names] if isinstance(names, str) else names))
    frame = frame[frame["mbean"].isin(wanted)]
    if broker is not None:
        frame = frame[frame["broker"].isin([broker] if isinstance(broker, int) else broker)]
    order = {m: i for i, m in enumerate(wanted)}
    frame = frame.assign(_order=frame["mbean"].map(order))
    return frame.sort_values(["_order", "broker", "time_ms"], kind="stable") \
        .drop(columns="_order").reset_index(drop=True)


def wrap_mbean(mbean: str) -> str:
    """The JMX name on two lines at its last comma-separated part (long titles stay readable)."""
    head, sep, tail = mbean.rpartition(",")
    return f"{head},\n{tail}" if sep else mbean


def metrics(cluster, names=None, broker=None):
    """Draw metrics over time, one panel per MBean and one line per broker. Returns the
    Figure."""
    frame = metric_series(cluster, names, broker)
    mbeans = list(dict.fromkeys(frame["mbean"]))
    brokers = sorted(cluster.brokers)
    n = max(1, len(mbeans))
    cols = 1 if n == 1 else 2
    rows = math.ceil(n / cols)
    fig = style.new_figure(14, 3.6 * rows + 0.6)
    axes = fig.subplots(rows, cols, sharex=True, squeeze=False).ravel()
    for i, (ax, mbean) in enumerate(zip(axes, mbeans, strict=False)):
        sub = frame[frame["mbean"] == mbean]
        for b, part in sub.groupby("broker", sort=True):
            ax.step(part["time_ms"], part["value"], where="post", lw=2.5, marker=".",
                    color=style.broker_color(brokers.index(b)), label=tr("broker {b}", b=b),
                    gid=f"{mbean}@broker{b}")
        ax.set_title(wrap_mbean(mbean), fontsize=style.SMALL)
        if (sub["value"] % 1 == 0).all():      # gauges and counts: whole numbers on the axis
            ax.yaxis.get_major_locator().set_params(integer=True)
            ax.set_ylim(bottom=min(0, sub["value"].min()) - 0.05,
                        top=max(1, sub["value"].max()) * 1.05)
        ax.tick_params(labelsize=style.SMALL)
        ax.grid(True, alpha=0.3)
        if i >= len(mbeans) - cols:     # the bottom panel of each column
            ax.set_xlabel(tr("time (ms)"), fontsize=style.SMALL)
    for ax in axes[len(mbeans):]:
        ax.set_visible(False)
    handles, labels = [], []
    for ax in axes[:len(mbeans)]:
        for h, label in zip(*ax.get_legend_handles_labels(), strict=True):
            if label not in labels:
                handles.append(h)
                labels.append(label)
    order = sorted(range(len(labels)), key=lambda i: int(labels[i].split()[-1]))
    fig.legend([handles[i] for i in order], [labels[i] for i in order],
               loc="outside right upper", fontsize=style.SMALL, frameon=False)
    return fig
