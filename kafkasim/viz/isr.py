"""ISR membership over time, one bar row per replica, with leader changes marked.

The ISR shown is the committed one: what the controller wrote to ZooKeeper (new partition,
elections, dead brokers removed) and, for changes a leader asked for (``maybeShrinkIsr`` /
``maybeExpandIsr``), the moment the leader applied the commit (its "isr" trace row), because that
is when its HW and acks=all start using the new ISR.
"""

from __future__ import annotations

from typing import NamedTuple

from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from kafkasim.core.events import BecomeLeader, IsrChange, PartitionStateChange
from kafkasim.viz import style
from kafkasim.viz.events import broker_status_intervals
from kafkasim.viz.style import tr

I18N_CONTEXT = "kafkasim.viz"   # gettext msgctxt of the words drawn (style.tr)


class PartitionChange(NamedTuple):
    """The partition's state from ``time_ms`` on, and the trace row kind that set it."""

    time_ms: int
    leader: int           # -1: no leader (offline)
    leader_epoch: int
    isr: tuple[int, ...]
    source: str           # "controller", "become_leader" or "isr"


class IsrInterval(NamedTuple):
    """Replica ``broker`` was in (or out of) the ISR during [start_ms, end_ms)."""

    broker: int
    start_ms: int
    end_ms: int
    in_isr: bool


class LeaderChange(NamedTuple):
    time_ms: int
    leader: int           # the new leader (-1: none)
    leader_epoch: int
    previous: int         # the leader before (-1: none, e.g. at creation)


def partition_history(cluster, topic: str, partition: int = 0) -> list[PartitionChange]:
    """Every change of (leader, leader epoch, ISR) of one partition, from the trace."""
    cluster.topics.check_partition(topic, partition)
    out: list[PartitionChange] = []
    leader, epoch, isr = -1, -1, ()
    for t, kind, node, tp, p, detail in cluster.trace.rows:
        if p != partition or tp != topic:
            continue
        new_leader, new_epoch, new_isr = leader, epoch, isr
        if kind == "controller" and isinstance(detail, PartitionStateChange):
            # (AlterPartitionCommitted is not one: applied when the leader learns it, its
            # "isr" row follows)
            changed_leader, changed_epoch, new_isr = detail.partition_state()
            if changed_leader is not None:
                new_leader = changed_leader
            if changed_epoch is not None:
                new_epoch = changed_epoch
        elif kind == "become_leader" and isinstance(detail, BecomeLeader):
            new_leader, new_epoch, new_isr = node, detail.leader_epoch, tuple(detail.isr)
            if new_epoch < epoch:
                continue      # a stale LeaderAndIsr: the controller has moved on
        elif kind == "isr" and isinstance(detail, tuple):
            if node != leader:
                continue
            new_isr = tuple(IsrChange.of(detail).new_isr)
        else:
            continue
        if (new_leader, new_epoch, new_isr) != (leader, epoch, isr) or not out:
            leader, epoch, isr = new_leader, new_epoch, new_isr
            out.append(PartitionChange(t, leader, epoch, isr, kind))
    return out


def isr_intervals(cluster, topic: str, partition: int = 0, *,
                  end_ms: int | None = None) -> list[IsrInterval]:
    """Per replica, the maximal spans in and out of the ISR, from creation to ``end_ms`` (now)."""
    end = cluster.now if end_ms is None else end_ms
    history = [h for h in partition_history(cluster, topic, partition) if h.time_ms <= end]
    replicas = cluster.assignment(topic)[partition]
    out: list[IsrInterval] = []
    for r in replicas:
        start, member = None, None
        for h in history:
            now_in = r in h.isr
            if start is None:
                start, member = h.time_ms, now_in
            elif now_in != member:
                out.append(IsrInterval(r, start, h.time_ms, member))
                start, member = h.time_ms, now_in
        if start is not None and end >= start:
            out.append(IsrInterval(r, start, end, member))
    return out


def leader_changes(cluster, topic: str, partition: int = 0) -> list[LeaderChange]:
    """Each time the partition got a new leader (or lost it), with the new leader epoch."""
    out: list[LeaderChange] = []
    prev = -1
    for h in partition_history(cluster, topic, partition):
        if not out or h.leader != prev:
            out.append(LeaderChange(h.time_ms, h.leader, h.leader_epoch, prev))
            prev = h.leader
    return out


def isr_timeline(cluster, topic: str, partition: int = 0, *, ax=None):
    """Draw ISR membership over time per replica (bars), leadership and leader changes, and
    when each broker was stopped or paused. Returns the Figure.

    With ``ax``, draws into those axes (emptied first, ticks kept) and leaves the figure's
    layout alone: the fast way for a widget to redraw (no constrained layout on every step)."""
    intervals = isr_intervals(cluster, topic, partition)
    changes = leader_changes(cluster, topic, partition)
    replicas = cluster.assignment(topic)[partition]
    end = cluster.now
    n = len(replicas)
    if ax is None:
        ax = style.new_figure(13, 1.0 * n + 2.0).add_subplot()
    else:
        style.clear_contents(ax)
    fig = ax.figure
    ypos = {r: n - 1 - i for i, r in enumerate(replicas)}
    for r in replicas:
        y = ypos[r]
        spans_in = [(iv.start_ms, iv.end_ms - iv.start_ms) for iv in intervals
                    if iv.broker == r and iv.in_isr]
        spans_out = [(iv.start_ms, iv.end_ms - iv.start_ms) for iv in intervals
                     if iv.broker == r and not iv.in_isr]
        ax.broken_barh(spans_in, (y - 0.25, 0.5), facecolors=style.IN_ISR, gid=f"ISR:broker{r}")
        ax.broken_barh(spans_out, (y - 0.25, 0.5), facecolors="white",
                       edgecolors=style.OUT_OF_ISR, hatch="//", linewidth=1.5,
                       gid=f"out:broker{r}")
    # leadership: a strip above the bar of the replica that leads
    lead: dict[int, list[tuple[int, int]]] = {r: [] for r in replicas}
    for i, ch in enumerate(changes):
        stop = changes[i + 1].time_ms if i + 1 < len(changes) else end
        if ch.leader in lead and stop > ch.time_ms:
            lead[ch.leader].append((ch.time_ms, stop - ch.time_ms))
    for r, spans in lead.items():
        ax.broken_barh(spans, (ypos[r] + 0.28, 0.14), facecolors=style.LEADER,
                       gid=f"leader:broker{r}")
    for st in broker_status_intervals(cluster):
        if st.broker in ypos:
            ax.broken_barh([(st.start_ms, max(st.end_ms - st.start_ms, 1))],
                           (ypos[st.broker] - 0.42, 0.12),
                           facecolors=style.DARK_GREY if st.status == "stopped" else style.PAUSED,
                           gid=f"{st.status}:broker{st.broker}")
    for ch in changes[1:]:
        ax.axvline(ch.time_ms, color="black", ls=":", lw=1.5, zorder=0)
        who = tr("no leader") if ch.leader < 0 else tr("leader {leader}", leader=ch.leader)
        ax.text(ch.time_ms, n - 0.45, " " + tr("{who}, epoch {epoch}", who=who,
                                               epoch=ch.leader_epoch), fontsize=style.SMALL,
                va="bottom", ha="left", rotation=0)
    ax.set_yticks([ypos[r] for r in replicas], [tr("broker {b}", b=r) for r in replicas],
                  fontsize=style.FONT)
    ax.set_ylim(-0.6, n - 0.1)
    start = intervals[0].start_ms if intervals else 0
    ax.set_xlim(start, max(end, start + 1))
    ax.set_xlabel(tr("time (ms)"), fontsize=style.FONT)
    ax.tick_params(labelsize=style.SMALL)
    ax.set_title(tr("{topic}-{partition}: ISR membership over time", topic=topic,
                    partition=partition), fontsize=style.TITLE, pad=24)
    handles = [Patch(facecolor=style.IN_ISR, label=tr("in ISR")),
               Patch(facecolor="white", edgecolor=style.OUT_OF_ISR, hatch="//",
                     label=tr("out of ISR")),
               Patch(facecolor=style.LEADER, label=tr("leader")),
               Patch(facecolor=style.DARK_GREY, label=tr("broker stopped")),
               Patch(facecolor=style.PAUSED, label=tr("broker paused")),
               Line2D([], [], color="black", ls=":", label=tr("leader change"))]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=style.SMALL, frameon=False)
    return fig
