"""A space-time (Lamport) diagram: one horizontal line per node, time to the right, an arrow
from each message's send to its receipt. Colour says which Kafka API, a solid line a request and
a dashed line its response; a message that was lost ends in an X short of its destination."""

from __future__ import annotations

from typing import NamedTuple

from matplotlib.lines import Line2D
from matplotlib.patches import FancyArrowPatch

from kafkasim.viz import style
from kafkasim.viz.events import broker_status_intervals
from kafkasim.viz.style import tr

I18N_CONTEXT = "kafkasim.viz"   # gettext msgctxt of the words drawn (style.tr)

MESSAGE_KINDS = ("send", "recv", "drop", "hold")


class MessageArrow(NamedTuple):
    """One message's trip, from the trace's send (or hold) row to its recv or drop row."""

    msg_id: int
    type_name: str         # "FetchRequest", "ZkPingResponse"...
    api: str               # "Fetch", "ZkPing"...
    is_response: bool
    src: object            # broker id, client name or "zookeeper"
    dst: object
    send_ms: int
    recv_ms: int | None    # receipt, or the drop; None while still in flight
    fate: str              # "delivered", "dropped", "held" (still held) or "in flight"
    held: bool             # a scenario hold kept it in flight for a while
    reason: str            # why it was dropped ("" otherwise)


def api_of(type_name: str) -> tuple[str, bool]:
    """("Fetch", True) for "FetchResponse": the Kafka API and whether this is its response."""
    for suffix, resp in (("Response", True), ("Request", False)):
        if type_name.endswith(suffix):
            return type_name[:-len(suffix)], resp
    return type_name, False


def _wanted(arrow: MessageArrow, types) -> bool:
    return arrow.type_name in types or arrow.api in types


def message_arrows(cluster, start_ms: int, end_ms: int, *, nodes=None,
                   types=None) -> list[MessageArrow]:
    """Messages in flight at some time in [start_ms, end_ms], in send order. ``nodes`` keeps
    messages between listed nodes only; ``types`` keeps listed type names or APIs ("Fetch"
    means FetchRequest and FetchResponse)."""
    if end_ms < start_ms:
        raise ValueError(f"the window ends ({end_ms} ms) before it starts ({start_ms} ms)")
    trips: dict[int, list] = {}   # msg id -> [type, src, dst, sent, end, fate, held, reason]
    for t, kind, node, _tp, _p, detail in cluster.trace.rows:
        if kind not in MESSAGE_KINDS:
            continue
        mid = detail[2]
        if kind == "send":
            if t > end_ms:
                continue
            trips[mid] = [detail[0], node, detail[1], t, None, "in flight", False, ""]
        elif kind == "hold":
            if t > end_ms:
                continue
            trips[mid] = [detail[0], node, detail[1], t, None, "held", True, ""]
        elif kind == "recv":
            trip = trips.get(mid)
            if trip is not None:
                trip[4], trip[5] = t, "delivered"
        else:  # drop: at the sender (no send row) or on the way (its send/hold row exists)
            trip = trips.get(mid)
            if trip is None:
                if t > end_ms:
                    continue
                trips[mid] = [detail[0], node, detail[1], t, t, "dropped", False, detail[3]]
            else:
                trip[4], trip[5], trip[7] = t, "dropped", detail[3]
    keep_nodes = None if nodes is None else set(nodes)
    keep_types = None if types is None else set(types)
    out = []
    for mid in sorted(trips):
        type_name, src, dst, sent, end, fate, held, reason = trips[mid]
        if end is not None and end < start_ms:
            continue
        if keep_nodes is not None and (src not in keep_nodes or dst not in keep_nodes):
            continue
        api, resp = api_of(type_name)
        arrow = MessageArrow(mid, type_name, api, resp, src, dst, sent, end, fate, held, reason)
        if keep_types is not None and not _wanted(arrow, keep_types):
            continue
        out.append(arrow)
    out.sort(key=lambda a: (a.send_ms, a.msg_id))
    return out


def node_order(cluster, arrows, nodes=None) -> list:
    """Top to bottom: clients, brokers by id, then ZooKeeper (or ``nodes`` as given)."""
    if nodes is not None:
        return list(nodes)
    seen = {a.src for a in arrows} | {a.dst for a in arrows}
    brokers = sorted(b for b in cluster.brokers)
    clients = sorted(str(n) for n in seen if isinstance(n, str) and n != "zookeeper")
    tail = ["zookeeper"] if "zookeeper" in seen else []
    return clients + brokers + tail


def spacetime(cluster, start_ms: int, end_ms: int, *, nodes=None, types=None,
              max_arrows: int = 400):
    """Draw the space-time diagram of the messages in [start_ms, end_ms]. Returns the Figure.
    At most ``max_arrows`` are drawn (the title says so); narrow the window or pass ``types``."""
    arrows = message_arrows(cluster, start_ms, end_ms, nodes=nodes, types=types)
    order = node_order(cluster, arrows, nodes)
    n = len(order)
    ypos = {node: n - 1 - i for i, node in enumerate(order)}
    fig = style.new_figure(14, 0.9 * n + 2.2)
    ax = fig.add_subplot()
    pad = max(1, (end_ms - start_ms) * 0.02)
    x0, x1 = start_ms - pad, end_ms + pad
    for y in ypos.values():
        ax.plot([x0, x1], [y, y], color="#BBBBBB", lw=2, zorder=1)
    for st in _down_spans(cluster, ypos, x1):
        node, a, b, status = st
        ax.plot([max(a, x0), min(b, x1)], [ypos[node]] * 2, lw=8, solid_capstyle="butt",
                color=style.DARK_GREY if status == "stopped" else style.PAUSED, zorder=1,
                gid=f"{status}:broker{node}")
    drawn = arrows[:max_arrows]
    apis: list[str] = []
    fates: set[str] = set()
    for a in drawn:
        ys, yd = ypos[a.src], ypos[a.dst]
        color = style.api_color(a.api)
        if a.api not in apis:
            apis.append(a.api)
        fates.add(a.fate)
        ls = "--" if a.is_response else "-"
        if a.fate == "delivered":
            end = (a.recv_ms, yd)
            head = "-|>"
        elif a.fate == "dropped":  # the X sits short of the destination: it never arrived
            frac = 0.7 if a.recv_ms > a.send_ms else 0.3
            end = (a.recv_ms if a.recv_ms > a.send_ms else a.send_ms + pad * 0.5,
                   ys + frac * (yd - ys))
            head = "-"
        else:                      # still in flight (or held) at the end of the trace
            end = (x1, ys + 0.85 * (yd - ys))
            ls = ":"
            head = "->"
        ax.add_patch(FancyArrowPatch((a.send_ms, ys), end, arrowstyle=head, mutation_scale=16,
                                     color=color, lw=1.8, ls=ls, shrinkA=0, shrinkB=0,
                                     zorder=3, gid=f"msg:{a.msg_id}"))
        if a.fate == "dropped":
            ax.plot([end[0]], [end[1]], marker="X", ms=12, color=color, mec="black", zorder=4)
        if a.held:
            ax.plot([a.send_ms], [ys], marker="o", ms=7, mfc="white", color=color, zorder=4)
    ax.set_yticks([ypos[nd] for nd in order], [style.node_label(nd) for nd in order],
                  fontsize=style.FONT)
    ax.set_ylim(-0.6, n - 0.4)
    ax.set_xlim(x0, x1)
    ax.set_xlabel(tr("time (ms)"), fontsize=style.FONT)
    ax.tick_params(labelsize=style.SMALL)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    more = (tr(" (first {drawn} of {total} messages)", drawn=len(drawn), total=len(arrows))
            if len(arrows) > len(drawn) else "")
    ax.set_title(tr("Messages between {start_ms} and {end_ms} ms", start_ms=start_ms,
                    end_ms=end_ms) + more, fontsize=style.TITLE)
    handles = [Line2D([], [], color=style.api_color(api), lw=3, label=api) for api in apis]
    handles += [Line2D([], [], color="black", lw=1.8, ls="-", label=tr("request")),
                Line2D([], [], color="black", lw=1.8, ls="--", label=tr("response"))]
    if "dropped" in fates:
        handles.append(Line2D([], [], color="black", marker="X", ls="", ms=10, label=tr("dropped")))
    if any(a.held for a in drawn):
        handles.append(Line2D([], [], color="black", marker="o", mfc="white", ls="", ms=7,
                              label=tr("held in flight")))
    if fates & {"held", "in flight"}:
        handles.append(Line2D([], [], color="black", ls=":", label=tr("not yet received")))
    ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0),
              fontsize=style.SMALL, frameon=False)
    return fig


def _down_spans(cluster, ypos, until):
    for st in broker_status_intervals(cluster):
        if st.broker in ypos and st.start_ms <= until:
            yield st.broker, st.start_ms, max(st.end_ms, st.start_ms + 1), st.status
