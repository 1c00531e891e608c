"""Messages in flight, drawn between the nodes that sent and will receive them (RaftScope-style).

``flight_svg(cluster, topic)`` draws the cluster *now*: one box per broker with what that broker
believes about the partition (its role, the leader and leader epoch it knows, the ISR if it leads,
its LEO and HW), the controllers (KRaft) or ZooKeeper above, the clients below, and every message
on the wire as an arrow with a dot at how far it has travelled. Hovering over a message (or a
broker) shows its fields: the SVG ``<title>`` of each element, which browsers show as a tooltip.
``message_summary(msg, topic, partition)`` is the text: Fetch offset and epochs, FetchResponse HW
and records, AlterPartition's proposed ISR, LeaderAndIsr / metadata state, heartbeats.
"""

from __future__ import annotations

import html
import math

from kafkasim.core.messages import new_isr_broker_ids
from kafkasim.settings.exceptions import ClusterError
from kafkasim.viz.messages import api_of
from kafkasim.viz.style import api_color, tr

#: gettext msgctxt of the drawing's words (``kafkasim.viz.style.tr``'s default)
I18N_CONTEXT = "kafkasim.viz"

W, H = 760, 420
BOX_W, BOX_H = 150, 74
SMALL_W, SMALL_H = 132, 30


# -- what a message says -------------------------------------------------------------------------
def _key(entry):
    if isinstance(entry, tuple):
        return entry[0], entry[1]
    return getattr(entry, "topic", None), getattr(entry, "partition", None)


def _parts(msg, topic, partition):
    """The per-partition entries of ``msg`` about ``topic``-``partition`` (all if topic is None)."""
    for entry in getattr(msg, "partitions", ()) or ():
        if topic is None or _key(entry) == (topic, partition):
            yield entry


def message_summary(msg, topic: str | None = None, partition: int = 0) -> tuple[str, str]:
    """(short label, full text) for a message, focused on ``topic``-``partition``."""
    name = type(msg).__name__
    api, is_response = api_of(name)
    short = tr("{api} resp", api=api) if is_response else api
    full = [name]
    if name == "FetchRequest":
        who = tr("follower {b}", b=msg.replica_id) if msg.replica_id >= 0 else tr("consumer")
        for fp in _parts(msg, topic, partition):
            short = f"Fetch @{fp.fetch_offset}"
            full.append(f"{who} {fp.topic}-{fp.partition}: fetch_offset={fp.fetch_offset} "
                        f"current_leader_epoch={fp.current_leader_epoch} "
                        f"last_fetched_epoch={fp.last_fetched_epoch}")
    elif name == "FetchResponse":
        for pd in _parts(msg, topic, partition):
            n = len(pd.records)
            short = f"HW {pd.high_watermark}" + (f", +{n}" if n else "")
            extra = f" diverging_epoch={pd.diverging_epoch}" if pd.diverging_epoch else ""
            full.append(f"{pd.topic}-{pd.partition}: error={pd.error} high_watermark="
                        f"{pd.high_watermark} records={n}{extra}")
    elif name == "ProduceRequest":
        for t, p, rids, *_rest in _parts(msg, topic, partition):
            short = f"Produce {len(rids)}"
            full.append(f"{t}-{p}: " + tr("{n} record(s)", n=len(rids)) + f", acks={msg.acks}")
    elif name == "ProduceResponse":
        for t, p, err, base in _parts(msg, topic, partition):
            short = tr("acked") if err == "NONE" else err
            full.append(f"{t}-{p}: error={err} base_offset={base}")
    elif name == "AlterPartitionRequest":
        for t, p, epoch, new_isr, pe in _parts(msg, topic, partition):
            isr = new_isr_broker_ids(new_isr)
            short = f"AlterPartition {list(isr)}"
            full.append(f"{t}-{p}: leader_epoch={epoch} new_isr={list(isr)} "
                        f"partition_epoch={pe}")
    elif name == "AlterPartitionResponse":
        for t, p, err, leader, epoch, isr, pe in _parts(msg, topic, partition):
            short = f"ISR {list(isr)}" if err == "NONE" else err
            full.append(f"{t}-{p}: error={err} leader={leader} leader_epoch={epoch} "
                        f"isr={list(isr)} partition_epoch={pe}")
    elif name in ("LeaderAndIsrRequest", "UpdateMetadataRequest"):
        for st in msg.partition_states:
            if topic is None or (st.topic, st.partition) == (topic, partition):
                short = f"{api} L{st.leader} e{st.leader_epoch}"
                full.append(f"{st.topic}-{st.partition}: leader={st.leader} leader_epoch="
                            f"{st.leader_epoch} isr={list(st.isr)}")
    elif name == "OffsetsForLeaderEpochRequest":
        for t, p, cur, asked in _parts(msg, topic, partition):
            short = tr("end of e{epoch}?", epoch=asked)
            full.append(f"{t}-{p}: current_leader_epoch={cur} leader_epoch={asked}")
    elif name == "OffsetsForLeaderEpochResponse":
        for t, p, err, epoch, end in _parts(msg, topic, partition):
            short = tr("e{epoch} ends at {end}", epoch=epoch, end=end)
            full.append(f"{t}-{p}: error={err} leader_epoch={epoch} end_offset={end}")
    elif name == "BrokerHeartbeatRequest":
        short = tr("heartbeat")
        full.append(tr("broker {b}", b=msg.broker_id) + f" broker_epoch={msg.broker_epoch} "
                    f"current_metadata_offset={msg.current_metadata_offset}")
    elif name == "BrokerHeartbeatResponse":
        short = tr("fenced") if msg.is_fenced else tr("heartbeat ok")
        full.append(f"error={msg.error} is_caught_up={msg.is_caught_up} "
                    f"is_fenced={msg.is_fenced}")
    else:
        fields = [f for f in getattr(type(msg), "__slots__", ()) if not f.startswith("_")]
        full.extend(f"{f}={getattr(msg, f)!r}"[:80] for f in fields[:6])
    return short, "\n".join(full)


# -- what each broker believes -------------------------------------------------------------------
def broker_belief(cluster, broker: int, topic: str | None, partition: int = 0) -> list[str]:
    """Lines for a broker's box: its state and its own view of ``topic``-``partition``."""
    if not cluster.brokers[broker].is_running:
        return [tr("broker {b}", b=broker), tr("down")]
    lines = [tr("broker {b}", b=broker)]
    if topic is None:
        return lines
    try:
        v = cluster.inspect.replica_view(broker, topic, partition)
    except (ClusterError, KeyError):          # not a replica of this partition
        return lines + [tr("(no replica)")]
    if v["role"] == "leader":
        lines += [tr("leader, epoch {epoch}", epoch=v["leader_epoch"]), f"ISR {v['isr']}"]
    elif v["role"] == "follower":
        lines.append(tr("follows {leader}, epoch {epoch}", leader=v["leader"],
                        epoch=v["leader_epoch"]))
    else:
        lines.append(tr("no partition state"))
    lines.append(f"LEO {v['log_end_offset']}  HW {v['high_watermark']}")
    return lines


# -- layout and drawing --------------------------------------------------------------------------
def _positions(cluster, clients) -> dict[object, tuple[float, float]]:
    """Brokers in the middle band (a zig-zag up to three, an ellipse beyond, so that no message
    line runs through a third broker), controllers or ZooKeeper above, clients below."""
    pos: dict[object, tuple[float, float]] = {}
    brokers = sorted(cluster.brokers)
    n = len(brokers)
    for i, b in enumerate(brokers):
        if n <= 3:
            pos[b] = ((i + 0.5) * W / n, H * (0.62 if i % 2 else 0.43))
        else:
            angle = math.pi + 2 * math.pi * i / n
            pos[b] = (W / 2 + 0.38 * W * math.cos(angle), H * 0.52 + 0.2 * H * math.sin(angle))
    kraft = getattr(cluster, "kraft", None)
    top = sorted(kraft.nodes) if kraft is not None else ["zookeeper"]
    for i, node in enumerate(top):
        pos[node] = ((i + 0.5) * W / len(top), H * 0.09)
    for i, node in enumerate(clients):
        pos[node] = ((i + 0.5) * W / len(clients), H * 0.88)
    return pos


def _box(x, y, lines, title, *, down=False, small=False) -> str:
    w, h = (SMALL_W, SMALL_H) if small else (BOX_W, BOX_H)
    fill = "#e6e6e6" if down else "#ffffff"
    rows = []
    for i, line in enumerate(lines):
        weight = ' font-weight="bold"' if i == 0 else ""
        rows.append(f'<text x="{x:.0f}" y="{y - h / 2 + 19 + 14 * i:.0f}" '
                    f'text-anchor="middle" font-size="{13 if i == 0 else 11}"{weight}>'
                    f"{html.escape(line)}</text>")
    return (f'<g class="node"><title>{html.escape(title)}</title><rect x="{x - w / 2:.0f}" '
            f'y="{y - h / 2:.0f}" width="{w}" height="{h}" rx="6" fill="{fill}" '
            f'stroke="#333"/>{"".join(rows)}</g>')


def _edge_point(a, b, small_a: bool) -> tuple[float, float]:
    """Where the segment from box a's centre toward b leaves box a."""
    (ax, ay), (bx, by) = a, b
    hw, hh = (SMALL_W / 2, SMALL_H / 2) if small_a else (BOX_W / 2, BOX_H / 2)
    dx, dy = bx - ax, by - ay
    if dx == 0 and dy == 0:
        return ax, ay
    s = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return ax + dx * s, ay + dy * s


def _message(f, pos, small, lanes, now, topic, partition) -> str:
    src, dst = f["src"], f["dst"]
    k = lanes[(src, dst)] = lanes.get((src, dst), -1) + 1
    a = _edge_point(pos[src], pos[dst], src in small)
    b = _edge_point(pos[dst], pos[src], dst in small)
    nx, ny = b[1] - a[1], a[0] - b[0]
    norm = math.hypot(nx, ny) or 1.0
    off = 7.0 * (k + 1)            # each direction on its own side, same-pair messages apart
    a = (a[0] + nx / norm * off, a[1] + ny / norm * off)
    b = (b[0] + nx / norm * off, b[1] + ny / norm * off)
    if f["held"]:
        frac = 0.5
    else:
        span = max(f["arrives_ms"] - f["sent_ms"], 1)
        frac = min(max((now - f["sent_ms"]) / span, 0.0), 1.0)
    x, y = a[0] + (b[0] - a[0]) * frac, a[1] + (b[1] - a[1]) * frac
    short, full = message_summary(f["message"], topic, partition)
    api, is_response = api_of(f["type"])
    colour = api_color(api.removeprefix("Raft"))
    dash = ' stroke-dasharray="5,3"' if is_response else ""
    ring = ' stroke="#c00" stroke-width="2"' if f["held"] else ""
    when = (tr("held by the scenario") if f["held"] else
            tr("sent at {sent} ms, arrives at {arrives} ms", sent=f["sent_ms"],
               arrives=f["arrives_ms"]))
    tip = f"{f['type']} {src} → {dst} ({when})\n{full}"
    return (f'<g class="message" data-type="{html.escape(f["type"])}">'
            f"<title>{html.escape(tip)}</title>"
            f'<line x1="{a[0]:.0f}" y1="{a[1]:.0f}" x2="{b[0]:.0f}" y2="{b[1]:.0f}" '
            f'stroke="{colour}" stroke-width="1.5" opacity="0.45"{dash} '
            f'marker-end="url(#kafkasim-arrow)"/>'
            f'<circle cx="{x:.0f}" cy="{y:.0f}" r="6" fill="{colour}"{ring}/>'
            f'<text x="{x + 8:.0f}" y="{y - 6:.0f}" font-size="10">{html.escape(short)}</text>'
            "</g>")


#: the metadata quorum's own replication (KRaft controllers and brokers fetching
#: ``__cluster_metadata``): hidden by default, as it says nothing about the partition drawn
RAFT_APIS = ("RaftFetch", "Vote", "BeginQuorumEpoch", "EndQuorumEpoch", "FetchSnapshot")


def flight_svg(cluster, topic: str | None = None, partition: int = 0, *,
               only: tuple[str, ...] | None = None, hide: tuple[str, ...] = RAFT_APIS) -> str:
    """An SVG picture of the cluster now: nodes, their beliefs, the messages in flight.
    ``only`` keeps messages whose API or type name is listed (e.g. ``("Fetch", "Produce")``);
    ``hide`` drops those listed (by default the metadata quorum's Raft traffic)."""
    def listed(f, names):
        return f["type"] in names or api_of(f["type"])[0] in names

    flights = [f for f in cluster.inspect.messages_in_flight() if not listed(f, hide)]
    if only is not None:
        flights = [f for f in flights if listed(f, only)]
    clients = sorted({n for f in flights for n in (f["src"], f["dst"])
                      if isinstance(n, str) and n != "zookeeper"}, key=str)
    pos = _positions(cluster, clients)
    small = {n for n in pos if n not in cluster.brokers}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" '
             f'style="max-width:100%;height:auto" class="kafkasim-flight" '
             f'font-family="sans-serif"><defs><marker id="kafkasim-arrow" viewBox="0 0 10 10" '
             f'refX="10" refY="5" markerWidth="7" markerHeight="7" orient="auto-start-reverse">'
             f'<path d="M 0 0 L 10 5 L 0 10 z" fill="#777"/></marker></defs>',
             f'<text x="6" y="{H - 4}" font-size="11" fill="#555">' +
             html.escape(tr("t = {now} ms · {n} message(s) in flight · hover a dot for its "
                            "contents", now=cluster.now, n=len(flights))) + "</text>"]
    lanes: dict[tuple, int] = {}
    parts += [_message(f, pos, small, lanes, cluster.now, topic, partition)
              for f in flights if f["src"] in pos and f["dst"] in pos]
    for n, (x, y) in pos.items():
        if n in cluster.brokers:
            lines = broker_belief(cluster, n, topic, partition)
            parts.append(_box(x, y, lines, "\n".join(lines),
                              down=not cluster.brokers[n].is_running))
        else:
            label = "ZooKeeper" if n == "zookeeper" else (
                tr("controller {c}", c=n) if isinstance(n, int) else str(n))
            parts.append(_box(x, y, [label], label, small=True))
    parts.append("</svg>")
    return "".join(parts)
