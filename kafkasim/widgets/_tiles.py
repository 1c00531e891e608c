"""What each broker believes, per broker: the data of the player's broker tiles (the stage draws
the brokers now; ``Player.broker_tiles`` keeps this data for cells and tests).

``broker_tiles(cluster, topic, partition)`` is the data (plain Python, tested without a browser):
per broker, in the cluster's broker order, its process state (running, paused, shutting down,
crashed; in KRaft mode Kafka's ``BrokerState`` while it is not yet ``RUNNING``), the partitions it
believes it leads (its ``ReplicaManager``'s partitions with ``isLeader``), and its own view of the
shown partition as the messages-in-flight picture draws it (``viz.flight.broker_belief``: the
leader and leader epoch it knows, the ISR if it leads, LEO and HW). (The ipywidgets row that
showed them gave way to the stage, ``kafkasim.widgets.stage``, whose broker clicks call
``Player.toggle_broker``.)

The tile's words (``lines``, ``tooltip``) speak the course's language (``_render.tr``); its data
(``state``, ``detail``, ``action``) stays English, and Kafka's own names (``BrokerState`` values
such as ``RECOVERY``, topic-partition names) are shown as they are.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkasim.settings.exceptions import ClusterError
from kafkasim.viz import style
from kafkasim.widgets._render import N_
from kafkasim.widgets._render import tr as _tr

I18N_CONTEXT = "kafkasim.player"      # gettext msgctxt: the player's words (as _player_ui)


def tr(message: str, /, **fields) -> str:
    """``_render.tr`` under this module's ``I18N_CONTEXT``."""
    return _tr(message, _context=I18N_CONTEXT, **fields)


#: a tile's process state and the detail words it may carry, as shown (translated by ``tr``)
SHOWN = {"running": N_("running"), "paused": N_("paused"), "shutting down": N_("shutting down"),
         "crashed": N_("crashed"), "controller": N_("controller"),
         "restart pending": N_("restart pending")}

LEADS_SHOWN = 3          # partitions named on a tile; more are counted ("+2 more")


@dataclass(frozen=True)
class BrokerTile:
    """One broker's tile: what it shows and what a click on it does."""

    broker: int
    state: str                      # "running" | "paused" | "shutting down" | "crashed"
    detail: str                     # e.g. KRaft's BrokerState "RECOVERY", "controller" (ZK)
    leads: tuple[tuple[str, int], ...]   # the partitions it believes it leads
    belief: tuple[str, ...]         # its view of the shown partition (viz.flight.broker_belief);
    #                                 crashed: when its supervised restart is due, if one is
    action: str                     # what a click does: "crash" or "restart"
    color: str                      # background (viz.style: LEADER, PAUSED, GREY or white)
    text_color: str
    border: str                     # the broker's own colour (viz.style.broker_color)

    @property
    def lines(self) -> list[str]:
        head = tr("broker {broker} · {state}", broker=self.broker,
                  state=tr(SHOWN.get(self.state, self.state))) + (
            f" ({tr(SHOWN.get(self.detail, self.detail))})" if self.detail else "")
        if self.state == "crashed":
            return [head, self.belief[0] if self.belief else tr("click to restart")]
        names = [f"{t}-{p}" for t, p in self.leads[:LEADS_SHOWN]]
        more = len(self.leads) - LEADS_SHOWN
        leads = (tr("leads {partitions}", partitions=", ".join(names))
                 + (tr(" +{n} more", n=more) if more > 0 else "")
                 if names else tr("leads nothing"))
        return [head, leads, *self.belief]

    @property
    def label(self) -> str:
        """The tile's text, one line per row (the button shows the newlines)."""
        return "\n".join(self.lines)

    @property
    def tooltip(self) -> str:
        every = ", ".join(f"{t}-{p}" for t, p in self.leads) or tr("none")
        click = (tr("click to crash broker {broker} (kill -9)", broker=self.broker)
                 if self.action == "crash" else
                 tr("click to restart broker {broker} (start it again)", broker=self.broker))
        return click + "\n" + tr("leader of: {partitions}", partitions=every)


def _state(cluster, br, kraft: bool) -> tuple[str, str]:
    """(state, detail) of one broker's process as the tile names them."""
    if br.state == "stopped":
        return "crashed", ""
    if br.state == "shutting down":
        return "shutting down", ""
    if br.paused_until > cluster.now:
        return "paused", tr("until {ms} ms", ms=f"{br.paused_until:,}")
    if kraft and br.lifecycle is not None and br.lifecycle.state != "RUNNING":
        return "running", br.lifecycle.state      # BrokerLifecycleManager: still fenced
    return "running", "controller" if not kraft and br.controller is not None else ""


def _belief(cluster, broker: int, topic: str | None, partition: int) -> list[str]:
    """The broker's own view of ``topic``-``partition``: the lines ``viz.flight.broker_belief``
    draws in the messages-in-flight picture (after its "broker N" line), in the course's
    language (Kafka's LEO, HW and ISR stay)."""
    if not cluster.brokers[broker].is_running:
        return [tr("down")]
    if topic is None:
        return []
    try:
        v = cluster.inspect.replica_view(broker, topic, partition)
    except (ClusterError, KeyError):          # not a replica of this partition
        return [tr("(no replica)")]
    if v["role"] == "leader":
        lines = [tr("leader, epoch {epoch}", epoch=v["leader_epoch"]), f"ISR {v['isr']}"]
    elif v["role"] == "follower":
        lines = [tr("follows {leader}, epoch {epoch}", leader=v["leader"],
                    epoch=v["leader_epoch"])]
    else:
        lines = [tr("no partition state")]
    return lines + [f"LEO {v['log_end_offset']}  HW {v['high_watermark']}"]


def broker_tiles(cluster, topic: str | None = None, partition: int = 0) -> list[BrokerTile]:
    """Every broker's tile now; ``topic``-``partition`` is the partition whose leader, leader
    epoch and ISR each tile shows as that broker believes them (None: no partition lines)."""
    kraft = getattr(cluster, "kraft", None) is not None
    out = []
    for i, b in enumerate(sorted(cluster.brokers)):
        br = cluster.brokers[b]
        state, detail = _state(cluster, br, kraft)
        if state == "crashed":
            leads: tuple = ()
            due = cluster.inspect.supervised_start_ms(b)  # ZooKeeper: the old session must expire
            belief = () if due is None else (tr("starts at {ms} ms", ms=f"{due:,}"),)
            detail = "" if due is None else "restart pending"
        else:
            leads = tuple(sorted(tp for tp, part in br.replica_manager.partitions.items()
                                 if part.is_leader))
            belief = tuple(_belief(cluster, b, topic, partition))
        color = (style.GREY if state == "crashed" else style.PAUSED if state == "paused" else
                 style.LEADER if (topic, partition) in leads else "#FFFFFF")
        out.append(BrokerTile(
            broker=b, state=state, detail=detail, leads=leads, belief=belief,
            action="restart" if state == "crashed" else "crash", color=color,
            text_color=style.DARK_GREY if state == "crashed" else "#000000",
            border=style.broker_color(i)))
    return out
