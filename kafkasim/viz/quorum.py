"""KRaft drawings: the controller quorum and broker fencing over time, and the metadata log.

``quorum_timeline`` has one lane per controller node (active controller in epoch E / standby /
down) and one per broker (fenced / unfenced in the metadata, and when its process was down):
what ``kafka-metadata-quorum describe --status`` and the controllers' FencedBrokerCount tell an
operator, over the whole run. A crashed broker stays *unfenced* until the active controller
notices its missed heartbeats (``broker.session.timeout.ms``, BrokerHeartbeatManager) and
writes its fencing (ReplicationControlManager.maybeFenceOneStaleBroker).

The lanes are read from the trace rows (``controller_node_start`` / ``controller_node_stop``,
``controller_active`` / ``controller_renounce``, ``broker_registered``, ``broker_fencing`` (the
broker's heartbeat answers), ``broker_fenced`` (the controller fenced a stale broker)), so they
render from a Cluster or from a saved trace frame (``cluster.trace_frame()``).
``metadata_log_table`` draws the last records of the ``__cluster_metadata`` log, committed ones
shaded.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from matplotlib.lines import Line2D
from matplotlib.patches import Patch

from kafkasim.viz import style
from kafkasim.viz.events import STOP_KINDS
from kafkasim.viz.style import tr

I18N_CONTEXT = "kafkasim.viz"   # gettext msgctxt of the words drawn (style.tr)

ACTIVE = "#228833"
STANDBY = "#BBDDBB"
FENCED = "#EE6677"
UNFENCED = "#4477AA"

_EPOCH = re.compile(r"epoch (\d+)")
_FENCING = re.compile(r"fencing broker (\d+)")
_VOTERS = re.compile(r"voters \[([\d, ]*)\]")


class QuorumInterval(NamedTuple):
    """A span [start_ms, end_ms) in which controller ``node`` was ``state``: "active" (the
    active controller, in metadata-quorum ``epoch``), "standby" or "down"."""

    node: int
    start_ms: int
    end_ms: int
    state: str
    epoch: int


class FencingInterval(NamedTuple):
    """A span [start_ms, end_ms) in which broker ``broker`` was "fenced" or "unfenced" (as the
    trace shows it: registration and heartbeat answers, and the controller's session-expiry
    fencing), or "down" (its process was stopped, until it starts again: ``broker_start``, or
    in KRaft mode its metadata Raft client starting, ``raft_transition`` "start -> ...")."""

    broker: int
    start_ms: int
    end_ms: int
    state: str


def _text(detail) -> str:
    if detail is None:
        return ""
    if isinstance(detail, str):
        return detail
    return getattr(detail, "text", None) or repr(detail)


def _node(node):
    if isinstance(node, bool):
        return node
    if isinstance(node, int):
        return node
    try:
        return int(node)
    except (TypeError, ValueError):
        return node


def trace_rows(source, kinds=None) -> tuple[list[tuple], int]:
    """(rows (time, kind, node, detail text), end time) of a Cluster or a trace frame; with
    ``kinds``, only rows of those kinds (a KRaft trace holds many heartbeat rows: turning each
    detail into text costs more than the drawing)."""
    if hasattr(source, "trace") and hasattr(source, "now"):
        rows = [(t, k, _node(n), _text(d)) for t, k, n, _tp, _p, d in source.trace.rows
                if kinds is None or k in kinds]
        return rows, source.now
    frame = source
    rows = [(int(t), k, _node(n), _text(d)) for t, k, n, d in
            zip(frame["time_ms"], frame["event"], frame["node"], frame["detail"], strict=True)
            if kinds is None or k in kinds]
    times = frame["time_ms"]
    return rows, (int(times[len(times) - 1]) if len(times) else 0)


_QUORUM_KINDS = frozenset({"metadata_quorum", "controller_node_start", "controller_node_stop",
                           "controller_active", "controller_renounce"})
_FENCING_KINDS = frozenset({"broker_registered", "broker_fencing", "broker_fenced", *STOP_KINDS,
                            "broker_start", "raft_transition"})


def quorum_intervals(source, end_ms: int | None = None) -> list[QuorumInterval]:
    """Each controller node's active / standby / down spans, from the trace."""
    rows, end = trace_rows(source, _QUORUM_KINDS)
    end = end if end_ms is None else end_ms
    voters: list[int] = []
    state: dict[int, tuple[int, str, int]] = {}     # node -> (since, state, epoch)
    out: list[QuorumInterval] = []

    def move(node, t, new, epoch=-1):
        since, old, old_epoch = state.get(node, (t, "down", -1))
        if t > since:
            out.append(QuorumInterval(node, since, t, old, old_epoch))
        state[node] = (t, new, epoch)

    for t, kind, node, text in rows:
        if t > end:
            break
        if kind == "metadata_quorum":
            m = _VOTERS.search(text)
            if m:
                voters = [int(v) for v in m.group(1).split(",") if v.strip()]
        elif kind == "controller_node_start":
            move(node, t, "standby")
        elif kind == "controller_node_stop":
            move(node, t, "down")
        elif kind == "controller_active":
            m = _EPOCH.search(text)
            move(node, t, "active", int(m.group(1)) if m else -1)
        elif kind == "controller_renounce":
            move(node, t, "standby")
    for node in voters:
        state.setdefault(node, (0, "down", -1))
    for node, (since, st, epoch) in state.items():
        if end > since:
            out.append(QuorumInterval(node, since, end, st, epoch))
    out.sort(key=lambda iv: (iv.node, iv.start_ms))
    return out


def fencing_intervals(source, end_ms: int | None = None) -> list[FencingInterval]:
    """Each broker's fenced / unfenced spans (from registration on) and its down spans."""
    rows, end = trace_rows(source, _FENCING_KINDS)
    end = end if end_ms is None else end_ms
    fence: dict[int, tuple[int, str]] = {}     # broker -> (since, fenced|unfenced)
    down: dict[int, int] = {}
    out: list[FencingInterval] = []

    def move(broker, t, new):
        since, old = fence.get(broker, (t, new))
        if old == new and broker in fence:
            return
        if t > since:
            out.append(FencingInterval(broker, since, t, old))
        fence[broker] = (t, new)

    for t, kind, node, text in rows:
        if t > end:
            break
        if kind == "broker_registered":
            move(node, t, "fenced")      # a RegisterBrokerRecord is fenced until unfenced
        elif kind == "broker_fencing":
            move(node, t, "fenced" if text.strip() == "fenced" else "unfenced")
        elif kind == "broker_fenced":
            m = _FENCING.search(text)
            if m:
                move(int(m.group(1)), t, "fenced")
        if kind in STOP_KINDS and isinstance(node, int) and not isinstance(node, bool):
            down.setdefault(node, t)
        elif node in down and (kind in ("broker_start", "broker_registered") or (
                kind == "raft_transition" and text.startswith("start ->"))):
            since = down.pop(node)
            if t > since:
                out.append(FencingInterval(node, since, t, "down"))
    for broker, (since, st) in fence.items():
        if end > since:
            out.append(FencingInterval(broker, since, end, st))
    for broker, since in down.items():
        if end > since:
            out.append(FencingInterval(broker, since, end, "down"))
    out.sort(key=lambda iv: (iv.broker, iv.start_ms, iv.state))
    return out


def _lane_label(kind: str, node: int) -> str:
    """A lane's row label: "controller 3000" or "broker 1", in the course language."""
    return tr("controller {n}", n=node) if kind == "controller" else tr("broker {b}", b=node)


def quorum_timeline(source, end_ms: int | None = None, *, ax=None):
    """Draw the controller quorum (who is the active controller, in which epoch; which
    controllers are down) and broker fencing over time. Returns the Figure.

    With ``ax``, draws into those axes (emptied first, ticks kept) and leaves the figure's
    layout alone (a widget's fast redraw)."""
    quorum = quorum_intervals(source, end_ms)
    fencing = fencing_intervals(source, end_ms)
    end = trace_rows(source, ())[1] if end_ms is None else end_ms
    controllers = sorted({iv.node for iv in quorum})
    brokers = sorted({iv.broker for iv in fencing})
    lanes = [("controller", c) for c in controllers] + [("broker", b) for b in brokers]
    n = max(1, len(lanes))
    if ax is None:
        ax = style.new_figure(13, 0.7 * n + 2.2).add_subplot()
    else:
        style.clear_contents(ax)
    fig = ax.figure
    ypos = {lane: n - 1 - i for i, lane in enumerate(lanes)}
    for iv in quorum:
        y = ypos[("controller", iv.node)]
        span = [(iv.start_ms, iv.end_ms - iv.start_ms)]
        if iv.state == "active":
            ax.broken_barh(span, (y - 0.3, 0.6), facecolors=ACTIVE,
                           gid=f"active:controller{iv.node}")
            ax.text(iv.start_ms, y, " " + tr("active, epoch {epoch}", epoch=iv.epoch),
                    va="center", ha="left",
                    fontsize=style.SMALL, color="white", clip_on=True)
        elif iv.state == "standby":
            ax.broken_barh(span, (y - 0.3, 0.6), facecolors=STANDBY,
                           gid=f"standby:controller{iv.node}")
        else:
            ax.broken_barh(span, (y - 0.3, 0.6), facecolors=style.GREY, hatch="xx",
                           edgecolors=style.DARK_GREY, gid=f"down:controller{iv.node}")
    for iv in fencing:
        y = ypos[("broker", iv.broker)]
        span = [(iv.start_ms, iv.end_ms - iv.start_ms)]
        if iv.state == "down":
            ax.broken_barh(span, (y - 0.42, 0.12), facecolors=style.DARK_GREY,
                           gid=f"down:broker{iv.broker}")
        else:
            ax.broken_barh(span, (y - 0.25, 0.5),
                           facecolors=FENCED if iv.state == "fenced" else UNFENCED,
                           gid=f"{iv.state}:broker{iv.broker}")
    ax.set_yticks([ypos[lane] for lane in lanes], [_lane_label(k, i) for k, i in lanes],
                  fontsize=style.FONT)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(0, max(end, 1))
    ax.set_xlabel(tr("time (ms)"), fontsize=style.FONT)
    ax.tick_params(labelsize=style.SMALL)
    if controllers and brokers:
        ax.axhline(len(brokers) - 0.5, color="black", lw=1)
    ax.set_title(tr("KRaft: controller quorum and broker fencing"), fontsize=style.TITLE)
    handles = [Patch(facecolor=ACTIVE, label=tr("active controller")),
               Patch(facecolor=STANDBY, label=tr("standby controller")),
               Patch(facecolor=style.GREY, edgecolor=style.DARK_GREY, hatch="xx",
                     label=tr("controller down")),
               Patch(facecolor=UNFENCED, label=tr("broker unfenced")),
               Patch(facecolor=FENCED, label=tr("broker fenced")),
               Line2D([], [], color=style.DARK_GREY, lw=6, label=tr("broker process down"))]
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=style.SMALL, frameon=False)
    return fig


def metadata_log_rows(cluster, last: int = 20, node: int | None = None) -> list[tuple]:
    """The last ``last`` rows of ``cluster.kraft.metadata_log(node)``."""
    if getattr(cluster, "kraft", None) is None:
        raise ValueError("metadata_log_table: this cluster runs in ZooKeeper mode; the "
                         "__cluster_metadata log exists in KRaft mode only")
    if last < 1:
        raise ValueError(f"last must be >= 1, got {last}")
    return cluster.kraft.metadata_log(node)[-last:]


def metadata_log_table(cluster, last: int = 20, node: int | None = None, width: int = 90):
    """Draw the last ``last`` records of a controller's metadata log as a table (offset, leader
    epoch, record type, fields); committed records shaded, the epoch cell in its epoch colour.
    Returns the Figure."""
    rows = metadata_log_rows(cluster, last, node)
    fig = style.new_figure(14, 0.3 * max(len(rows), 1) + 1.0)
    ax = fig.add_subplot()
    ax.axis("off")
    if not rows:
        ax.text(0.5, 0.5, tr("the metadata log is empty"), ha="center", va="center",
                fontsize=style.FONT)
        return fig
    cells = [[str(o), str(e), rec, (f if len(f) <= width else f[:width - 1] + "…")]
             for o, e, rec, _c, f in rows]
    colors = []
    for _o, e, _r, committed, _f in rows:
        bg = style.COMMITTED if committed else "white"
        colors.append([bg, style.epoch_color(e), bg, bg])
    table = ax.table(cellText=cells, cellColours=colors,
                     colLabels=[tr("offset"), tr("epoch"), tr("record"), tr("fields")],
                     loc="upper center",
                     cellLoc="left", colWidths=[0.06, 0.05, 0.22, 0.67])
    table.auto_set_font_size(False)
    table.set_fontsize(style.SMALL - 2)
    table.scale(1, 1.3)
    table.set_gid("metadata_log")
    who = node if node is not None else tr("active controller")
    ax.set_title(tr("__cluster_metadata log ({who}): last {n} records, committed shaded",
                    who=who, n=len(rows)), fontsize=style.TITLE)
    return fig
