"""The stage's data: a window of the simulation's near future, as JSON the browser animates.

``stage_window(cluster, topic, partition, window_ms)`` runs a *copy* of the cluster
(``observe.snapshots``) event by event for ``window_ms`` of simulated time and returns a plain dict:

- ``nodes``: brokers (and KRaft controllers, or ZooKeeper; clients that talk in the window) with
  their place on the stage (a 960 x 400 box);
- ``tokens``: every message on the wire at some time of the window, with its send and receive
  (or drop) time, type, source, destination, fate (delivered, dropped, held, in flight), a short
  label and its fields (``viz.flight.message_summary``);
- ``frames``: each node's state every time it changed: process state (running, paused, fenced,
  crashed), isolated or not, and for the partition in view the broker's own LEO, HW, leader,
  leader epoch, ISR view and leader-epoch cache (the epoch of every record); under ``"cuts"``
  the network links cut;
- ``narration``: one plain-language line per event (a message delivered or lost, a broker's
  state changed).

The live cluster is not touched: the stage moves it only when the learner acts (``Stage``).
Everything here is deterministic (simulated time only), so the text rendering ``window_text`` is
stable for nbval, and ``window_svg`` draws the stage at the window's start for the static book.

What the learner reads (node labels, narration, the text and the still picture) speaks the
course's language (``tr``, msgctxt ``kafkasim.player`` like the player's controls); the data the
browser acts on (states, fates, roles, message types) stays English.
"""

from __future__ import annotations

import html
import math
import unicodedata
from bisect import bisect_left

from kafkasim.observe import snapshots
from kafkasim.runtime.network import delivery_envelope
from kafkasim.settings.exceptions import ClusterError
from kafkasim.viz.flight import message_summary
from kafkasim.viz.messages import api_of, message_arrows
from kafkasim.viz.style import api_color
from kafkasim.widgets._render import N_, text_width
from kafkasim.widgets._render import tr as _tr

I18N_CONTEXT = "kafkasim.player"


def tr(message: str, /, **fields) -> str:
    """``_render.tr`` under the player's ``I18N_CONTEXT`` (the stage shares its words)."""
    return _tr(message, _context=I18N_CONTEXT, **fields)


#: a node's process state as shown (the data keeps the English key)
STATES = {"running": N_("running"), "paused": N_("paused"), "fenced": N_("fenced"),
          "crashed": N_("crashed"), "shutting down": N_("shutting down")}
#: why a message was lost (the trace's reasons), as shown
REASONS = {r: r for r in (N_("dropped by hand"), N_("dropped while held"), N_("network partition"),
                          N_("destination process gone"), N_("listener not open yet"),
                          N_("connection refused"),
                          N_("drop"), N_("unreachable"))}


def state_text(state: str) -> str:
    return tr(STATES[state]) if state in STATES else state


def reason_text(reason: str) -> str:
    return tr(REASONS[reason]) if reason in REASONS else reason

W, H = 960, 400                 # the stage's coordinate box (the SVG viewBox)
BOX_W, BOX_H = 232, 96          # a broker's box
SMALL_W, SMALL_H = 156, 34      # a controller, ZooKeeper or a client
CELLS = 16                      # record cells drawn per broker (the newest ones)
MAX_TOKENS = 600                # messages kept per window (the earliest)
WINDOW_MS = 2000
#: the metadata quorum's own log replication: hidden unless asked for (it says nothing about
#: the partition in view and would bury it); votes and BeginQuorumEpoch stay visible
HIDDEN_APIS = ("RaftFetch", "FetchSnapshot")


def _check_window_ms(window_ms) -> int:
    if isinstance(window_ms, bool) or not isinstance(window_ms, int) or \
            not 1 <= window_ms <= 600_000:
        raise ValueError(f"window_ms must be a whole number of ms from 1 to 600000, "
                         f"got {window_ms!r}")
    return window_ms


# -- layout ------------------------------------------------------------------------------------
def stage_nodes(cluster, clients: list[str]) -> list[dict]:
    """Brokers in the middle band (a zig-zag up to three, an ellipse beyond), controllers or
    ZooKeeper along the top, clients along the bottom; ``x``/``y`` are box centres."""
    out = []
    brokers = sorted(cluster.brokers)
    n = len(brokers)
    for i, b in enumerate(brokers):
        if n <= 3:
            x, y = (i + 0.5) * W / n, H * (0.66 if i % 2 else 0.42)
        else:
            angle = math.pi + 2 * math.pi * i / n
            x, y = W / 2 + 0.36 * W * math.cos(angle), H * 0.51 + 0.22 * H * math.sin(angle)
        out.append({"id": b, "kind": "broker", "label": tr("broker {b}", b=b), "key": i,
                    "x": round(x), "y": round(y)})
    kraft = getattr(cluster, "kraft", None)
    top = sorted(kraft.nodes) if kraft is not None else ["zookeeper"]
    for i, node in enumerate(top):
        kind = "zookeeper" if node == "zookeeper" else "controller"
        label = "ZooKeeper" if node == "zookeeper" else tr("controller {n}", n=node)
        out.append({"id": node, "kind": kind, "label": label,
                    "x": round((i + 0.5) * W / len(top)), "y": round(H * 0.075)})
    for i, node in enumerate(clients):
        out.append({"id": node, "kind": "client", "label": str(node),
                    "x": round((i + 0.5) * W / len(clients)), "y": round(H * 0.925)})
    return out


# -- what each node is and believes -------------------------------------------------------------
def _isolated(cluster, node, peers) -> bool:
    net = cluster.transport.network
    if not net.groups and not net.cut_links:
        return False
    others = [p for p in peers if p != node]
    return bool(others) and not any(net.can_reach(node, p) or net.can_reach(p, node)
                                    for p in others)


def _broker_state(cluster, br, kraft: bool) -> str:
    if br.state == "stopped":
        return "crashed"
    if br.state == "shutting down":
        return "shutting down"
    if br.paused_until > cluster.now:
        return "paused"
    if kraft and br.lifecycle is not None and br.lifecycle.state != "RUNNING":
        return "fenced"
    return "running"


def broker_frame(cluster, b: int, topic, partition: int, peers) -> dict:
    """One broker now: its process state and its own view of ``topic``-``partition``."""
    br = cluster.brokers[b]
    kraft = getattr(cluster, "kraft", None) is not None
    out = {"state": _broker_state(cluster, br, kraft),
           "isolated": _isolated(cluster, b, peers),
           "controller": (not kraft and br.state != "stopped" and br.controller is not None
                          and cluster.controller_id() == b)}
    if topic is None or out["state"] == "crashed":
        return out
    try:
        v = cluster.inspect.replica_view(b, topic, partition)
    except (ClusterError, KeyError):
        out["replica"] = False
        return out
    out.update(replica=True, role=v["role"], leader=v["leader"], epoch=v["leader_epoch"],
               isr=v["isr"], leo=v["log_end_offset"], hw=v["high_watermark"],
               start=v["log_start_offset"], epochs=[list(e) for e in v["epoch_entries"]])
    return out


def frame_state(cluster, topic, partition: int) -> dict:
    """Every node's state now (the part of a frame that is compared for changes)."""
    kraft = getattr(cluster, "kraft", None)
    peers = sorted(cluster.brokers) + (sorted(kraft.nodes) if kraft is not None else [])
    nodes = {str(b): broker_frame(cluster, b, topic, partition, peers)
             for b in sorted(cluster.brokers)}
    links = cluster.transport.network.cut_links
    cuts = sorted({tuple(sorted(link, key=str)) for link, on in links.items() if on}, key=str)
    nodes["cuts"] = [list(link) for link in cuts]      # links cut both or one way
    if kraft is not None:
        active = cluster.controller_id()
        for cid in sorted(kraft.nodes):
            node = kraft.nodes[cid]
            nodes[str(cid)] = {"state": "running" if node.state == "running" else "crashed",
                               "active": cid == active,
                               "isolated": _isolated(cluster, cid, peers)}
    return nodes


# -- narration ---------------------------------------------------------------------------------
def _broker_changes(b: str, old: dict, new: dict, topic, partition) -> list[str]:
    who = tr("broker {b}", b=b)
    if old.get("state") != new.get("state"):
        said = {"crashed": N_("{who} crashed"),
                "paused": N_("{who} is paused (it handles nothing)"),
                "fenced": N_("{who} is fenced by the controller"),
                "running": N_("{who} is running"),
                "shutting down": N_("{who} is shutting down")}
        state = new["state"]
        return [tr(said[state], who=who) if state in said else f"{who} {state}"]
    lines = []
    if old.get("isolated") != new.get("isolated"):
        lines.append(tr("{who} is cut off from the others", who=who) if new["isolated"] else
                     tr("{who} is reachable again", who=who))
    if new.get("role") == "leader" and (old.get("role") != "leader" or
                                        old.get("epoch") != new.get("epoch")):
        lines.append(tr("{who} becomes leader of {topic}-{partition} in epoch {epoch}", who=who,
                        topic=topic, partition=partition, epoch=new["epoch"]))
    elif new.get("role") == "follower" and (old.get("leader") != new.get("leader") or
                                            old.get("epoch") != new.get("epoch")):
        lines.append(tr("{who} follows broker {leader} in epoch {epoch}", who=who,
                        leader=new["leader"], epoch=new["epoch"]))
    if new.get("role") == "leader" and old.get("isr") != new.get("isr") and \
            old.get("role") == "leader":
        lines.append(tr("{who} (leader) changes its ISR to {isr}", who=who, isr=new["isr"]))
    if old.get("leo") is not None and new.get("leo") is not None and new["leo"] < old["leo"]:
        lines.append(tr("{who} truncates its log to offset {leo}", who=who, leo=new["leo"]))
    elif new.get("leo") != old.get("leo") and new.get("leo") is not None:
        lines.append(tr("{who} appends: its log ends at offset {leo}", who=who, leo=new["leo"]))
    if new.get("hw") != old.get("hw") and new.get("hw") is not None:
        lines.append(tr("{who}'s high watermark moves to {hw}", who=who, hw=new["hw"]))
    return lines


def _cuts_text(cuts, sep: str = "-") -> str:
    return ", ".join(f"{a}{sep}{b}" for a, b in cuts) or tr("none")


def state_changes(old: dict, new: dict, topic, partition) -> list[str]:
    """Plain-language lines for what changed between two frame states."""
    lines = []
    for key, st in new.items():
        prev = old.get(key, {})
        if key == "cuts":
            if st != prev:
                lines.append(tr("links cut: {links}", links=_cuts_text(st)))
        elif "active" in st:       # a KRaft controller
            who = tr("controller {n}", n=key)
            if prev.get("state") != st["state"]:
                lines.append(tr("{who} crashed", who=who) if st["state"] == "crashed" else
                             tr("{who} is running", who=who))
            if st["active"] and not prev.get("active"):
                lines.append(tr("{who} is now the active controller", who=who))
        else:
            lines += _broker_changes(key, prev, st, topic, partition)
    return lines


def _token_line(tok: dict, labels: dict) -> str:
    src, dst = labels[tok["src"]], labels[tok["dst"]]
    if tok["fate"] == "dropped":
        why = f" ({reason_text(tok['reason'])})" if tok["reason"] else ""
        return tr("{type} from {src} to {dst} is lost{why}", type=tok["type"], src=src, dst=dst,
                  why=why)
    return tr("{dst} receives {type} from {src}: {label}", dst=dst, type=tok["type"], src=src,
              label=tok["label"])


# -- the window ----------------------------------------------------------------------------------
def _listen_for_messages(clone, seen: dict) -> None:
    def on_event(_t, kind, args):
        if kind == "deliver":
            env = delivery_envelope(args)
            seen.setdefault(env.msg_id, env.msg)
    clone.engine.add_listener(on_event)


def _run_frames(clone, t1: int, topic, partition) -> list[dict]:
    """Step the copy to ``t1``, keeping the state each time it changed (with narration)."""
    first = frame_state(clone, topic, partition)
    frames = [{"t": clone.now, "nodes": first, "said": []}]
    last = first
    e = clone.engine
    while e.peek_time() is not None and e.peek_time() <= t1:
        clone.step()
        state = frame_state(clone, topic, partition)
        if state != last:
            said = state_changes(last, state, topic, partition)
            if frames[-1]["t"] == clone.now:   # the same millisecond: one frame
                frames[-1]["nodes"] = state
                frames[-1]["said"] += said
            else:
                frames.append({"t": clone.now, "nodes": state, "said": said})
            last = state
    e.now = max(e.now, t1)
    return _as_changes(frames)


def _as_changes(frames: list[dict]) -> list[dict]:
    """Each frame after the first keeps only the nodes whose state changed (``frame_at`` and the
    browser put the whole state back together): a third of the JSON."""
    out, last = [], {}
    for f in frames:
        nodes = {k: v for k, v in f["nodes"].items() if last.get(k) != v}
        out.append({**f, "nodes": nodes})
        last = f["nodes"]
    return out


class _Recent:
    """Enough of a cluster for ``message_arrows`` over ``[t0, ...]``: the trace rows from ``t0``
    on, after the last send (or hold) row of each message they end and of each message still on
    the wire at ``t0`` (``on_wire``), found by scanning back from ``t0`` (message ids grow
    with the rows that send them, so the scan stops below the smallest one); so a window late in a
    long run does not read the whole trace from the start (seconds on a KRaft run), and shows
    the same tokens as if it did."""

    def __init__(self, clone, t0: int, on_wire: list[dict]) -> None:
        rows = clone.trace.rows
        i = bisect_left(rows, t0, key=lambda r: r[0])
        recent = rows[i:]
        started = {r[5][2] for r in recent if r[1] in ("send", "hold")}
        needed = {f["msg_id"] for f in on_wire} | \
            {r[5][2] for r in recent if r[1] in ("recv", "drop")}
        needed -= started
        found = []
        lowest = min(needed, default=0)
        while needed and i > 0:      # message ids grow with their send (or hold) rows
            i -= 1
            r = rows[i]
            if r[1] in ("send", "hold"):
                if r[5][2] in needed:
                    needed.discard(r[5][2])
                    found.append(r)
                elif r[5][2] < lowest:
                    break            # the others were lost at the sender: no send row
        found.reverse()
        self.trace = self
        self.rows = found + recent


def _tokens(clone, t0: int, t1: int, topic, partition, messages: dict, hidden,
            on_wire: list[dict]) -> list[dict]:
    out = []
    for a in message_arrows(_Recent(clone, t0, on_wire), t0, t1):
        if a.api in hidden or a.type_name in hidden:
            continue
        msg = messages.get(a.msg_id)
        if msg is not None:
            label, fields = message_summary(msg, topic, partition)
        else:
            # (a message sent before the window: its kind only, "Fetch resp" / "Fetch 응답")
            label = tr("{api} resp", api=a.api) if a.is_response else a.api
            fields = a.type_name
        api, resp = api_of(a.type_name)
        out.append({"id": a.msg_id, "type": a.type_name, "api": api, "resp": resp,
                    "src": a.src, "dst": a.dst, "sent": a.send_ms, "recv": a.recv_ms,
                    "fate": a.fate, "held": a.held, "reason": a.reason, "label": label,
                    "fields": fields, "color": api_color(api.removeprefix("Raft"))})
        if len(out) >= MAX_TOKENS:
            break
    return out


def stage_window(cluster, topic: str | None = None, partition: int = 0,
                 window_ms: int = WINDOW_MS, *, hidden=HIDDEN_APIS) -> dict:
    """The next ``window_ms`` of ``cluster`` as the stage's JSON (module docstring); the
    cluster itself does not move."""
    _check_window_ms(window_ms)
    if topic is not None:
        cluster.topics.check_partition(topic, partition)
    t0 = cluster.now
    t1 = t0 + window_ms
    clone = snapshots.load(snapshots.dump(cluster))
    messages: dict = {}
    on_wire = clone.inspect.messages_in_flight()        # already on the wire at t0
    for f in on_wire:
        messages[f["msg_id"]] = f["message"]
    _listen_for_messages(clone, messages)
    frames = _run_frames(clone, t1, topic, partition)
    for f in clone.inspect.messages_in_flight():        # still on the wire at t1
        messages.setdefault(f["msg_id"], f["message"])
    tokens = _tokens(clone, t0, t1, topic, partition, messages, hidden, on_wire)
    clients = sorted({str(n) for tok in tokens for n in (tok["src"], tok["dst"])
                      if isinstance(n, str) and n != "zookeeper"})
    nodes = stage_nodes(cluster, clients)
    placed = {n["id"] for n in nodes}
    tokens = [tok for tok in tokens if tok["src"] in placed and tok["dst"] in placed]
    narration = [{"t": f["t"], "text": s} for f in frames for s in f.pop("said")]
    labels = {n["id"]: n["label"] for n in nodes}
    narration += [{"t": tok["recv"], "text": _token_line(tok, labels)} for tok in tokens
                  if tok["recv"] is not None and tok["recv"] <= t1]
    narration.sort(key=lambda n: n["t"])
    kraft = getattr(cluster, "kraft", None)
    return {"t0": t0, "t1": t1, "topic": topic, "partition": partition,
            "mode": "kraft" if kraft is not None else "zookeeper",
            "seed": cluster.engine.seed, "nodes": nodes, "tokens": tokens, "frames": frames,
            "narration": narration,
            "size": {"w": W, "h": H, "box_w": BOX_W, "box_h": BOX_H, "small_w": SMALL_W,
                     "small_h": SMALL_H, "cells": CELLS}}


def in_flight_at(window: dict, t: float) -> list[dict]:
    """The window's tokens on the wire at time ``t`` (sent, not yet received or dropped)."""
    return [tok for tok in window["tokens"]
            if tok["sent"] <= t and (tok["recv"] is None or t < tok["recv"])]


def frame_at(window: dict, t: float) -> dict:
    """The window's node states at time ``t``: the first frame's, with the changes of every
    later frame at or before ``t`` applied (frames after the first hold changes only)."""
    nodes: dict = {}
    at = window["frames"][0]["t"]
    for f in window["frames"]:
        if f["t"] > t and nodes:
            break
        nodes.update(f["nodes"])
        at = f["t"]
    return {"t": at, "nodes": nodes}


# -- without a front end ------------------------------------------------------------------------
def record_epochs(st: dict) -> list[tuple[int, int]]:
    """(offset, leader epoch) of the newest ``CELLS`` records of a broker frame's log."""
    leo, start = st.get("leo", 0), st.get("start", 0)
    entries = st.get("epochs", [])
    out = []
    for off in range(max(start, leo - CELLS), leo):
        epoch = next((e for e, s in reversed(entries) if s <= off), -1)
        out.append((off, epoch))
    return out


def _log_text(st: dict) -> str:
    cells = record_epochs(st)
    if not cells:
        return tr("(empty)")
    hw = st.get("hw", 0)
    committed = "".join(str(e % 10) for off, e in cells if off < hw)
    rest = "".join(str(e % 10) for off, e in cells if off >= hw)
    more = "…" if cells[0][0] > st.get("start", 0) else ""
    return f"{more}{committed}|{rest}"


def _pad(label: str, width: int = 10) -> str:
    """``label`` left-aligned in ``width`` terminal columns (a Hangul syllable takes two)."""
    return label + " " * max(width - text_width(label), 0)


def _broker_line(node: dict, st: dict) -> str:
    head = f"  {_pad(node['label'])} {state_text(st['state'])}" + \
        (tr(", isolated") if st.get("isolated") else "")
    if st.get("controller"):
        head += tr(", controller")
    if not st.get("replica"):
        return head + ("" if st["state"] == "crashed" or "replica" not in st else
                       tr(" · no replica"))
    if st["role"] == "leader":
        view = tr("LEADER epoch {epoch} · ISR {isr}", epoch=st["epoch"], isr=st["isr"])
    elif st["role"] == "follower":
        view = tr("follows {leader}, epoch {epoch}", leader=st["leader"], epoch=st["epoch"])
    else:
        view = tr("no partition state")
    return head + " · " + tr("{view} · LEO {leo} HW {hw} · log {log}", view=view, leo=st["leo"],
                             hw=st["hw"], log=_log_text(st))


def _token_when(tok: dict) -> str:
    if tok["held"] and tok["recv"] is None:
        return tr("held")
    if tok["recv"] is None:
        return tr("sent {sent} ms, still in flight at the window's end", sent=f"{tok['sent']:,}")
    if tok["fate"] == "dropped":
        return tr("sent {sent} ms, lost {recv} ms", sent=f"{tok['sent']:,}",
                  recv=f"{tok['recv']:,}")
    return tr("sent {sent} ms, arrives {recv} ms", sent=f"{tok['sent']:,}",
              recv=f"{tok['recv']:,}")


def window_text(window: dict, t: int | None = None) -> str:
    """The stage at ``t`` (default: the window's start) as plain text: nodes, their views of the
    partition in view, the messages in flight. Deterministic (nbval compares it); in the
    course's language."""
    t = window["t0"] if t is None else t
    frame = frame_at(window, t)
    where = ("" if window["topic"] is None else
             f" · {window['topic']}-{window['partition']}")
    lines = [tr("Stage at t = {t} ms (window to {t1} ms){where} · {mode} mode", t=f"{t:,}",
                t1=f"{window['t1']:,}", where=where,
                mode="KRaft" if window["mode"] == "kraft" else "ZooKeeper")]
    for node in window["nodes"]:
        st = frame["nodes"].get(str(node["id"]))
        if node["kind"] == "broker":
            lines.append(_broker_line(node, st))
        elif node["kind"] == "controller":
            lines.append(f"  {_pad(node['label'])} {state_text(st['state'])}"
                         + (tr(", active") if st["active"] else "")
                         + (tr(", isolated") if st["isolated"] else ""))
    if frame["nodes"].get("cuts"):
        lines.append("  " + tr("links cut: {links}", links=_cuts_text(frame["nodes"]["cuts"],
                                                                      " - ")))
    flying = in_flight_at(window, t)
    labels = {n["id"]: n["label"] for n in window["nodes"]}
    lines.append(tr("Messages in flight at t = {t} ms: {n}", t=f"{t:,}", n=len(flying))
                 + "  " + tr("(log: epoch of each record, committed|uncommitted)"))
    for tok in flying:
        lines.append(f"  #{tok['id']} {tok['type']} {labels[tok['src']]} → "
                     f"{labels[tok['dst']]} ({_token_when(tok)}): {tok['label']}")
    return "\n".join(lines)


EPOCH_COLORS = ("#4E79A7", "#F28E2B", "#59A14F", "#B07AA1", "#76B7B2", "#EDC948", "#FF9DA7",
                "#9C755F")


def _svg_text(x, y, text, size=12, weight="normal", anchor="middle", fill="#222",
              halo: bool = False) -> str:
    ring = ' stroke="#fafafa" stroke-width="3" paint-order="stroke"' if halo else ""
    return (f'<text x="{x:.0f}" y="{y:.0f}" font-size="{size}" font-weight="{weight}" '
            f'text-anchor="{anchor}" fill="{fill}"{ring}>{html.escape(text)}</text>')


def _svg_broker(node: dict, st: dict) -> str:
    x, y = node["x"] - BOX_W / 2, node["y"] - BOX_H / 2
    down = st["state"] == "crashed"
    leader = st.get("role") == "leader"
    stroke = "#999" if down else ("#B8860B" if leader else "#444")
    dash = ' stroke-dasharray="6,4"' if down or st.get("isolated") else ""
    fill = "#e4e4e4" if down else "#fff"
    parts = [f'<rect x="{x:.0f}" y="{y:.0f}" width="{BOX_W}" height="{BOX_H}" rx="8" '
             f'fill="{fill}" stroke="{stroke}" stroke-width="{3 if leader else 1.5}"{dash}/>']
    head = node["label"] + (tr(" ★ leader") if leader else "")
    marks = {"crashed": "✕ ", "paused": "❚❚ ", "fenced": ""}
    state = (marks[st["state"]] + state_text(st["state"])) if st["state"] in marks else ""
    if st.get("isolated"):
        state = (state + " · " + tr("isolated")).lstrip(" ·")
    parts.append(_svg_text(x + 8, y + 17, head, 13, "bold", "start"))
    if state:
        # beside the name when both fit (about 0.58 em a column), else on the box's top edge,
        # as stage.js's fitBadge: a long state never covers the name
        beside = 0.58 * (13 * text_width(head) + 12 * text_width(state)) + 6 <= BOX_W - 16
        parts.append(_svg_text(x + BOX_W - 8, y + 17 if beside else y - 5, state, 12, "bold",
                               "end", "#B00"))
    if st.get("replica"):
        view = (tr("epoch {epoch} · ISR {isr}", epoch=st["epoch"], isr=st["isr"]) if leader else
                tr("follows {leader} · epoch {epoch}", leader=st["leader"], epoch=st["epoch"]))
        parts.append(_svg_text(x + 8, y + 34, view, 11, anchor="start"))
        for i, (off, epoch) in enumerate(record_epochs(st)):
            cx = x + 8 + i * 13.5
            committed = off < st["hw"]
            color = EPOCH_COLORS[epoch % len(EPOCH_COLORS)] if epoch >= 0 else "#999"
            dash = "" if committed else ' stroke-dasharray="2,2"'
            parts.append(f'<rect x="{cx:.1f}" y="{y + 44:.0f}" width="12" height="18" '
                         f'fill="{color}" fill-opacity="{1 if committed else 0.35}" '
                         f'stroke="{color}"{dash}/>')
        parts.append(_svg_text(x + 8, y + 84, tr("LEO {leo} · HW {hw}", leo=st["leo"],
                                                 hw=st["hw"]), 11,
                               anchor="start"))
    return f'<g class="node">{"".join(parts)}</g>'


def _svg_small(node: dict, st: dict | None) -> str:
    x, y = node["x"] - SMALL_W / 2, node["y"] - SMALL_H / 2
    active = bool(st and st.get("active"))
    down = bool(st and st["state"] == "crashed")
    label = node["label"] + (" ★" if active else "") + (" ✕" if down else "")
    fill, stroke = ("#e4e4e4" if down else "#fff"), ("#B8860B" if active else "#444")
    return (f'<g class="node"><rect x="{x:.0f}" y="{y:.0f}" width="{SMALL_W}" '
            f'height="{SMALL_H}" rx="6" fill="{fill}" stroke="{stroke}" '
            f'stroke-width="{3 if active else 1.5}"/>'
            + _svg_text(node["x"], node["y"] + 4, label, 12, "bold") + "</g>")


def _edge(half: tuple[float, float], frm, to) -> tuple[float, float]:
    """Where the segment from a box's centre ``frm`` towards ``to`` leaves the box (at most
    0.45 of the way), as stage.js's ``edge``: a token starts and ends at the boxes' edges."""
    dx, dy = to[0] - frm[0], to[1] - frm[1]
    if not dx and not dy:
        return frm
    k = min(half[0] / abs(dx) if dx else math.inf, half[1] / abs(dy) if dy else math.inf)
    return frm[0] + dx * min(k, 0.45), frm[1] + dy * min(k, 0.45)


def _token_xy(tok: dict, nodes: dict, t: float) -> tuple[float, float]:
    """Where a token is at ``t`` between its sender's and its receiver's boxes, each direction
    of a link on its own side (as stage.js draws it; a held or never-received message: half
    way, a dropped one at most 85 % of the way)."""
    def half(n):
        return ((BOX_W if n["kind"] == "broker" else SMALL_W) / 2 + 3,
                (BOX_H if n["kind"] == "broker" else SMALL_H) / 2 + 3)
    src, dst = nodes[tok["src"]], nodes[tok["dst"]]
    ca, cb = (src["x"], src["y"]), (dst["x"], dst["y"])
    (ax, ay), (bx, by) = _edge(half(src), ca, cb), _edge(half(dst), cb, ca)
    length = math.hypot(bx - ax, by - ay) or 1
    side = 1 if str(tok["src"]) < str(tok["dst"]) else -1
    ox, oy = -(by - ay) / length * 6 * side, (bx - ax) / length * 6 * side
    if tok["recv"] is None or tok["held"]:
        frac = 0.5
    else:
        frac = min(max((t - tok["sent"]) / max(tok["recv"] - tok["sent"], 1), 0.0), 1.0)
    if tok["fate"] == "dropped":
        frac = min(frac, 0.85)
    return ax + (bx - ax) * frac + ox, ay + (by - ay) * frac + oy


def _svg_line(tok: dict, pos: dict) -> str:
    """A message's line between its sender and receiver (under the nodes)."""
    (ax, ay), (bx, by) = pos[tok["src"]], pos[tok["dst"]]
    return (f'<line x1="{ax:.0f}" y1="{ay:.0f}" x2="{bx:.0f}" y2="{by:.0f}" '
            f'stroke="{tok["color"]}" stroke-opacity="0.35" stroke-width="1.5"/>')


def _svg_token(tok: dict, xy: tuple[float, float]) -> str:
    """A token (above the nodes, as on the stage's canvas; its label comes last, where
    ``place_labels`` puts it)."""
    x, y = xy
    ring = ' stroke="#C00" stroke-width="2.5"' if tok["held"] or tok["fate"] == "dropped" else ""
    return (f'<g class="token"><title>{html.escape(tok["fields"])}</title>'
            f'<circle cx="{x:.0f}" cy="{y:.0f}" r="7" fill="{tok["color"]}"{ring}/></g>')


def window_svg(window: dict, t: int | None = None) -> str:
    """A still SVG of the stage at ``t`` (default: the window's start), messages in flight
    included: what the static book and GitHub show in place of the animated stage. A message's
    label goes where it covers no node's box, no other message and no other label
    (``place_labels``, as stage.js's ``labelPlace``); where none is free it is left out (the
    message's fields stay in its tooltip)."""
    t = window["t0"] if t is None else t
    frame = frame_at(window, t)
    pos = {n["id"]: (n["x"], n["y"]) for n in window["nodes"]}
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 {W} {H}" '
             f'class="kafkasim-stage-still" style="max-width:100%;height:auto;background:#fafafa" '
             f'font-family="sans-serif">']
    flying = in_flight_at(window, t)
    at = [_token_xy(tok, {n["id"]: n for n in window["nodes"]}, t) for tok in flying]
    parts += [_svg_line(tok, pos) for tok in flying]
    for node in window["nodes"]:
        st = frame["nodes"].get(str(node["id"]))
        parts.append(_svg_broker(node, st) if node["kind"] == "broker" else _svg_small(node, st))
    parts += [_svg_token(tok, xy) for tok, xy in zip(flying, at, strict=True)]
    status = tr("t = {t} ms · {n} message(s) in flight", t=f"{t:,}", n=len(flying))
    parts.append(_svg_text(8, H - 6, status, 12, anchor="start", fill="#555"))
    for tok, place in zip(flying, place_labels(window["nodes"], flying, at, status),
                          strict=True):
        if place is not None:
            parts.append(_svg_text(place[0], place[1], tok["label"], LABEL_PX, anchor="start",
                                   halo=True))
    parts.append("</svg>")
    return "".join(parts)


LABEL_PX = 11           # a message's label in the still picture
LABEL_CHAR_W = 6.6      # the widest average advance of an 11 px sans-serif label (digits: 6.1)


def node_boxes(nodes: list[dict]) -> list[tuple[float, float, float, float]]:
    """(x0, y0, x1, y1) of every node's box in the still picture."""
    out = []
    for n in nodes:
        w, h = (BOX_W, BOX_H) if n["kind"] == "broker" else (SMALL_W, SMALL_H)
        out.append((n["x"] - w / 2, n["y"] - h / 2, n["x"] + w / 2, n["y"] + h / 2))
    return out


def label_width(text: str) -> float:
    """A label's width in the still picture (a wide character, Hangul or CJK, is 1 em)."""
    return sum(LABEL_PX if unicodedata.east_asian_width(ch) in "WF" else LABEL_CHAR_W
               for ch in text)


def label_box(place: tuple[float, float], text: str) -> tuple[float, float, float, float]:
    """The box a label drawn at ``place`` (its baseline's start) takes."""
    x, y = place
    return (x, y - LABEL_PX, x + label_width(text), y + 3)


def _overlaps(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def place_labels(nodes: list[dict], tokens: list[dict], at: list[tuple[float, float]],
                 status: str = "") -> list[tuple[float, float] | None]:
    """Where each token's label goes (its baseline's start), or None: right and above the
    token, else left and above, else right and below, else left and below; the first place
    whose box stays in the picture and covers no node's box, no token (``at``), no label placed
    before it and not the status line (stage.js's ``labelPlace`` does the same in the browser)."""
    taken = node_boxes(nodes) + [(x - 8, y - 8, x + 8, y + 8) for x, y in at]
    if status:
        taken.append(label_box((8, H - 6), status))
    out = []
    for tok, (x, y) in zip(tokens, at, strict=True):
        w = label_width(tok["label"])
        own = (x - 8, y - 8, x + 8, y + 8)
        free = None
        for place in ((x + 10, y - 8), (x - 10 - w, y - 8), (x + 10, y + 16), (x - 10 - w, y + 16)):
            box = label_box(place, tok["label"])
            inside = box[0] >= 0 and box[1] >= 0 and box[2] <= W and box[3] <= H
            if inside and not any(_overlaps(box, o) for o in taken if o != own):
                free = place
                break
        if free is not None:
            taken.append(label_box(free, tok["label"]))
        out.append(free)
    return out
