"""Simulated network: seeded latency, per-link FIFO order, partitions, holds and drops.

Every message travels as an ``Envelope`` on a directed link (src, dst). Links keep TCP's order: a
message never overtakes an earlier one on the same link. ``partition`` splits nodes into groups
that cannot talk; ``cut`` removes single links; ``hold`` parks matching messages until
``release``; ``drop`` discards them; ``delay`` adds latency to them. Filters select by message
type, endpoints and content (``where``: kafkasim/core/match.py). A message is also lost when
its destination's process died or restarted after it was sent (the connection it travelled on is
gone).

A process that dies closes its connections: ``close_arrival`` says when the close (the FIN/RST
its kernel sends) reaches a peer; ``kafkasim.runtime.transport.Transport`` delivers it as a
disconnect (``Transport.disconnect``).
"""

from __future__ import annotations

from kafkasim.core.match import MessageFilter, Node
from kafkasim.core.messages import Envelope, Message

__all__ = ["DELIVERY", "MessageFilter", "Network", "Node", "ZOOKEEPER", "delivery_envelope"]

ZOOKEEPER = "zookeeper"  # the ZooKeeper ensemble's node name on the simulated network


# The arguments of the engine's "deliver" event (Transport.send schedules it, Transport.deliver
# handles it): the message's Envelope fields, flat so that the hot path builds no object per
# message, then the destination's incarnation when it was sent and the RPC's wire name (None
# when the sender did not compute it).
DELIVERY = ("src", "dst", "msg", "sent_ms", "msg_id", "incarnation", "name")


def delivery_envelope(args: tuple) -> Envelope:
    """The Envelope of a "deliver" event's ``args`` (``DELIVERY``)."""
    return Envelope(args[0], args[1], args[2], args[3], args[4])


class Network:
    __slots__ = ("latency_ms", "jitter_ms", "extra_latency", "groups", "cut_links",
                 "last_delivery", "holds", "held", "drops", "delays", "next_msg_id",
                 "incarnations", "delivered", "dropped", "plain")

    def __init__(self, latency_ms: int = 1, jitter_ms: int = 1) -> None:
        if latency_ms < 0 or jitter_ms < 0:
            raise ValueError(
                f"latency_ms and jitter_ms must be >= 0, got {latency_ms}, {jitter_ms}")
        self.latency_ms = latency_ms
        self.jitter_ms = jitter_ms
        self.extra_latency: dict[Node, int] = {}     # added to every link touching the node
        self.groups: dict[Node, int] = {}            # node -> partition group (absent: reaches all)
        self.cut_links: dict[tuple[Node, Node], bool] = {}
        self.last_delivery: dict[tuple[Node, Node], int] = {}
        self.holds: list[MessageFilter] = []
        self.held: list[Envelope] = []
        self.drops: list[MessageFilter] = []
        self.delays: list[tuple[MessageFilter, int]] = []   # (filter, extra latency ms)
        self.next_msg_id = 0
        self.incarnations: dict[Node, int] = {}
        self.delivered = 0   # messages handed to their destination
        self.dropped = 0     # messages lost (drop filter, partition, destination gone)
        self.plain = True    # see faults_changed

    def faults_changed(self) -> None:
        """Recompute ``plain``: no partition, cut link, hold, drop, delay or extra latency is
        set, so a message's fate is 'send' at the link's latency plus jitter. Transport.send
        reads the one flag per message instead of six containers; every method that changes
        one of them calls this."""
        self.plain = not (self.groups or self.cut_links or self.holds or self.drops
                          or self.delays or self.extra_latency)

    @property
    def stats(self) -> dict[str, int]:
        """Messages sent (every message gets the next id), delivered and dropped so far."""
        return {"sent": self.next_msg_id, "delivered": self.delivered, "dropped": self.dropped}

    # -- topology ---------------------------------------------------------------------------
    def can_reach(self, src: Node, dst: Node) -> bool:
        if not self.groups and not self.cut_links:
            return True
        if self.cut_links.get((src, dst)):
            return False
        gs = self.groups.get(src)
        gd = self.groups.get(dst)
        return gs is None or gd is None or gs == gd

    def partition(self, groups: list[list[Node]]) -> None:
        """Split the listed nodes into groups; nodes not listed still reach everyone."""
        self.groups = {}
        for i, group in enumerate(groups):
            for node in group:
                if node in self.groups:
                    raise ValueError(f"node {node!r} appears in two partition groups")
                self.groups[node] = i
        self.faults_changed()

    def cut(self, a: Node, b: Node, both_ways: bool = True) -> None:
        self.cut_links[(a, b)] = True
        if both_ways:
            self.cut_links[(b, a)] = True
        self.faults_changed()

    def heal(self) -> None:
        self.groups = {}
        self.cut_links = {}
        self.faults_changed()

    def undrop(self) -> None:
        """Stop dropping messages: forget every drop filter (``Transport.drop``)."""
        self.drops = []
        self.faults_changed()

    def undelay(self) -> None:
        """Stop delaying messages: forget every delay filter (``Cluster.delay``)."""
        self.delays = []
        self.faults_changed()

    def set_extra_latency(self, node: Node, ms: int) -> None:
        if ms < 0:
            raise ValueError(f"extra latency must be >= 0 ms, got {ms}")
        if ms:
            self.extra_latency[node] = ms
        else:
            self.extra_latency.pop(node, None)
        self.faults_changed()

    # -- sending ----------------------------------------------------------------------------
    def envelope(self, src: Node, dst: Node, msg: Message, now: int) -> Envelope:
        env = Envelope(src, dst, msg, now, self.next_msg_id)
        self.next_msg_id += 1
        return env

    def classify(self, env: Envelope) -> str:
        """What happens to a message leaving now: 'send', 'hold', 'drop' or 'unreachable'."""
        if not (self.groups or self.cut_links or self.drops or self.holds):
            return "send"
        if not self.can_reach(env.src, env.dst):
            return "unreachable"
        for f in self.drops:
            if f.matches(env):
                if f.count > 0:
                    f.count -= 1
                return "drop"
        for f in self.holds:
            if f.matches(env):
                if f.count > 0:
                    f.count -= 1
                return "hold"
        return "send"

    def delivery_time(self, env: Envelope, now: int, rng) -> int:
        latency = self.latency_ms
        if self.jitter_ms:
            latency += int(rng.random() * (self.jitter_ms + 1))  # uniform on 0..jitter
        if self.extra_latency:
            latency += self.extra_latency.get(env.src, 0) + self.extra_latency.get(env.dst, 0)
        if self.delays:
            latency += self.delay_for(env)
        link = (env.src, env.dst)
        t = now + latency
        last = self.last_delivery.get(link, 0)
        if t < last:
            t = last
        self.last_delivery[link] = t
        return t

    def close_arrival(self, src: Node, dst: Node, now: int) -> int:
        """When the close of the connection ``src`` -> ``dst`` (the FIN, or the RST refusing a
        segment, that the kernel of a dead process sends) reaches ``dst``, if sent at ``now``.

        TCP delivers a connection's segments in order, so the close arrives after every message
        ``src`` sent before it, and at least the link's latency later. The peer's Selector
        completes the receives read from a closing channel before it reports the disconnect
        (Selector.close with CloseMode.GRACEFUL keeps the channel in ``closingChannels``,
        KAFKA-3703 in 0.10.2 and KAFKA-5587; SelectorTest.testGracefulClose; ``stagedReceives``
        before), and NetworkClient.poll handles completed receives before disconnections
        (handleCompletedReceives, then handleDisconnections -> processDisconnection ->
        cancelInFlightRequests; so in 0.10.0.0, 0.10.2.0 and trunk).
        The close draws no jitter (the seeded stream of the messages' latencies is unchanged)
        and bypasses message filters (hold, drop, delay select messages); a message delayed on
        the link still arrives before it. It does not move the link's FIFO horizon: whatever a
        restarted process sends travels on a new connection."""
        latency = self.latency_ms
        if self.extra_latency:
            latency += self.extra_latency.get(src, 0) + self.extra_latency.get(dst, 0)
        t = now + latency
        last = self.last_delivery.get((src, dst), 0)
        return t if t >= last else last

    def delay_for(self, env: Envelope) -> int:
        """Extra latency of the first delay whose filter matches (links stay FIFO, so later
        messages on the same link wait behind a delayed one, as on a TCP connection)."""
        for f, ms in self.delays:
            if f.matches(env):
                if f.count > 0:
                    f.count -= 1
                return ms
        return 0

    def release(self, flt: MessageFilter | None = None) -> list[Envelope]:
        """Take held messages (matching ``flt``, default all) out of the hold, in order."""
        out, keep = [], []
        for env in self.held:
            (out if flt is None or flt.matches(env) else keep).append(env)
        self.held = keep
        return out
