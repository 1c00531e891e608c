"""The cluster map: brokers grouped by rack, the controller starred, each broker's replicas as
badges (leaders filled, followers outlined, out-of-ISR followers dashed), stopped and paused
brokers shown distinctly. Leadership is what ZooKeeper says, so a crashed leader still shows as
leader until the controller notices (zookeeper.session.timeout.ms later)."""

from __future__ import annotations

import math
from typing import NamedTuple

from matplotlib.lines import Line2D
from matplotlib.patches import FancyBboxPatch, Patch, Rectangle

from kafkasim.viz import style
from kafkasim.viz.style import tr

I18N_CONTEXT = "kafkasim.viz"   # gettext msgctxt of the words drawn (style.tr)

NO_RACK = "no rack"
PER_LINE = 3           # replica badges per line inside a broker box
MAX_ROW = 6            # broker boxes per row of the map


class ReplicaBadge(NamedTuple):
    topic: str
    partition: int
    leader: bool
    in_isr: bool


class BrokerBox(NamedTuple):
    broker: int
    rack: str             # NO_RACK without broker.rack
    state: str            # running / stopped / shutting down
    paused: bool
    controller: bool
    replicas: tuple[ReplicaBadge, ...]


class RackGroup(NamedTuple):
    rack: str
    brokers: tuple[BrokerBox, ...]


def cluster_layout(cluster) -> list[RackGroup]:
    """Racks (named ones sorted, then brokers without a rack), each with its brokers and the
    replicas they host."""
    controller = cluster.controller_id()
    hosted: dict[int, list[ReplicaBadge]] = {b: [] for b in cluster.brokers}
    for topic in cluster.topics.names():
        for p, replicas in cluster.assignment(topic).items():
            st = cluster.inspect.partition_state(topic, p)
            for r in replicas:
                if r in hosted:
                    hosted[r].append(ReplicaBadge(topic, p, r == st["leader"], r in st["isr"]))
    now = cluster.now
    by_rack: dict[str, list[BrokerBox]] = {}
    for b in sorted(cluster.brokers):
        broker = cluster.brokers[b]
        rack = broker.rack if broker.rack is not None else NO_RACK
        by_rack.setdefault(rack, []).append(BrokerBox(
            b, rack, broker.state, broker.paused_until > now, b == controller,
            tuple(hosted[b])))
    names = sorted(r for r in by_rack if r != NO_RACK) + ([NO_RACK] if NO_RACK in by_rack else [])
    return [RackGroup(r, tuple(by_rack[r])) for r in names]


def _status(box: BrokerBox) -> str:
    if box.state != "running":
        return box.state
    return "paused" if box.paused else "running"


def cluster_map(cluster):
    """Draw the brokers by rack, the controller, the replicas each hosts and who leads. Returns
    the Figure."""
    racks = cluster_layout(cluster)
    badge_h, gap, pad, head = 0.55, 0.15, 0.25, 0.8
    # badges as wide as the longest "topic-partition" label, so no name is cut (~0.09 per char)
    longest = max([len(f"{r.topic}-{r.partition}") for g in racks for b in g.brokers
                   for r in b.replicas] or [0])
    badge_w = max(1.0, 0.09 * longest + 0.2)
    bw = max(3.6, 0.3 + PER_LINE * badge_w + (PER_LINE - 1) * (gap + 0.05))
    lines = max([math.ceil(len(b.replicas) / PER_LINE) for g in racks for b in g.brokers] or [1])
    bh = 0.9 + max(lines, 1) * (badge_h + gap) + 0.1       # every broker box the same size
    # racks are placed left to right, wrapping to a new row past MAX_ROW brokers; a rack with
    # more brokers than that wraps its brokers inside
    places = []                       # (group, x, y_top, per_line)
    x = y_top = 0.0
    row_h = row_brokers = 0
    for group in racks:
        k = len(group.brokers)
        per_line = min(k, MAX_ROW)
        nlines = math.ceil(k / per_line)
        w = per_line * bw + (per_line + 1) * pad
        h = head + nlines * (bh + pad) + pad
        if row_brokers and row_brokers + per_line > MAX_ROW:
            x, y_top, row_brokers, row_h = 0.0, y_top - row_h - 0.4, 0, 0
        places.append((group, x, y_top, per_line, w, h))
        x += w + 0.4
        row_brokers += per_line
        row_h = max(row_h, h)
    width = max(p[1] + p[4] for p in places) if places else 1.0
    bottom = min(p[2] - p[5] for p in places) if places else -1.0
    fig = style.new_figure(min(20.0, max(9.0, 0.95 * width + 3.5)),
                           max(3.5, 0.95 * -bottom + 1.0))
    ax = fig.add_subplot()
    for group, gx, gy, per_line, w, h in places:
        ax.add_patch(FancyBboxPatch((gx, gy - h), w, h, boxstyle="round,pad=0.05",
                                    facecolor="#F5F5F5", edgecolor="#999999", lw=1.5,
                                    gid=f"rack:{group.rack}"))
        title = tr("no rack") if group.rack == NO_RACK else tr("rack {rack}", rack=group.rack)
        ax.text(gx + w / 2, gy - head / 2, title, ha="center", va="center",
                fontsize=style.TITLE, fontweight="bold")
        for j, box in enumerate(group.brokers):
            x = gx + pad + (j % per_line) * (bw + pad)
            y = gy - head - (j // per_line) * (bh + pad) - bh
            _broker_box(ax, box, x, y, bw, bh, badge_w, badge_h, gap)
    ax.set_xlim(-0.2, width + 0.2)
    ax.set_ylim(bottom - 0.2, 0.2)
    ax.set_aspect("equal")
    ax.axis("off")
    ctl = cluster.controller_id()
    ctl_text = tr("no active controller") if ctl < 0 else \
        tr("controller: broker {b}", b=ctl) if ctl in cluster.brokers else \
        tr("active controller: KRaft node {n}", n=ctl)
    fig.suptitle(tr("Cluster at {now} ms: brokers by rack, {controller}", now=cluster.now,
                    controller=ctl_text), fontsize=style.TITLE)
    handles = [Patch(facecolor=style.IN_ISR, edgecolor=style.IN_ISR,
                     label=tr("leader replica")),
               Patch(facecolor="white", edgecolor=style.IN_ISR, lw=2,
                     label=tr("follower in ISR")),
               Patch(facecolor="white", edgecolor=style.OUT_OF_ISR, lw=2, ls="--",
                     label=tr("follower out of ISR")),
               Patch(facecolor=style.GREY, edgecolor=style.DARK_GREY, hatch="xx",
                     label=tr("broker stopped")),
               Patch(facecolor=style.PAUSED, edgecolor=style.DARK_GREY, ls="--",
                     label=tr("broker paused")),
               Line2D([], [], marker="*", ls="", color="black", ms=12,
                      label=tr("controller"))]
    fig.legend(handles=handles, loc="outside right upper", fontsize=style.SMALL, frameon=False)
    return fig


def _broker_box(ax, box: BrokerBox, x: float, y: float, bw: float, bh: float, badge_w: float,
                badge_h: float, gap: float) -> None:
    """One broker: its frame (hatched when stopped, yellow when paused), header, badges."""
    status = _status(box)
    face = {"stopped": style.GREY, "paused": style.PAUSED,
            "shutting down": style.GREY}.get(status, "white")
    ax.add_patch(Rectangle((x, y), bw, bh, facecolor=face,
                           edgecolor="black" if status == "running" else style.DARK_GREY,
                           lw=2.5 if box.controller else 1.5,
                           hatch="xx" if status == "stopped" else None,
                           ls="-" if status == "running" else "--", gid=f"broker:{box.broker}"))
    head = tr("broker {b}", b=box.broker)
    if box.controller:
        head = "★ " + tr("{broker} (controller)", broker=head)
    ax.text(x + 0.15, y + bh - 0.35, head, ha="left", va="center", fontsize=style.FONT,
            fontweight="bold", gid=f"controller:{box.broker}" if box.controller else None,
            bbox=dict(facecolor=face, edgecolor="none", pad=1.5))
    if status != "running":
        shown = {"stopped": tr("STOPPED"), "paused": tr("PAUSED"),
                 "shutting down": tr("SHUTTING DOWN")}.get(status, status.upper())
        ax.text(x + bw - 0.15, y + bh - 0.35, shown, ha="right", va="center",
                fontsize=style.SMALL, fontweight="bold", color="black",
                bbox=dict(facecolor="white", edgecolor="none", pad=1.5),
                gid=f"status:{box.broker}")
    for k, rep in enumerate(box.replicas):
        bx = x + 0.15 + (k % PER_LINE) * (badge_w + gap + 0.05)
        by = y + bh - 0.8 - (k // PER_LINE + 1) * (badge_h + gap) + gap
        ax.add_patch(Rectangle(
            (bx, by), badge_w, badge_h, facecolor=style.IN_ISR if rep.leader else "white",
            edgecolor=style.IN_ISR if rep.in_isr else style.OUT_OF_ISR, lw=2,
            ls="-" if rep.in_isr else "--",
            gid=f"replica:{rep.topic}-{rep.partition}@{box.broker}"))
        ax.text(bx + badge_w / 2, by + badge_h / 2, f"{rep.topic}-{rep.partition}", ha="center",
                va="center", fontsize=style.SMALL - 1, color="white" if rep.leader else "black",
                fontweight="bold" if rep.leader else "normal")
