"""Read-only views of a cluster's state, as plain data: ``cluster.inspect`` (``ClusterInspector``).

Each view returns ints, strings, lists and dicts (never the live ``Log``/``Partition`` objects), so
a test or a scenario can print, compare or store them and the simulation cannot be changed through
them. Names follow the Kafka state they show:

- ``partition_state``: leader, leader epoch, ISR, replicas and partition epoch as the controller's
  store holds them (ZooKeeper's partition state znode; KRaft: the committed metadata image).
- ``replica_view``: one broker's local view of a partition (kafka.cluster.Partition on that
  broker: leader, leader epoch, ISR, its log's LEO, HW, log start, recovery point and the
  leader-epoch-checkpoint entries). A follower's view lags the controller's (ZooKeeper's) state
  until the LeaderAndIsr request reaches it.
- ``follower_states``: the leader's per-follower ``ReplicaState`` (kafka.cluster.Replica:
  logEndOffset, lastCaughtUpTimeMs, lastFetchTimeMs, lastFetchLeaderLogEndOffset), which the ISR
  shrink rule (replica.lag.time.max.ms) and the HW rule read.
- ``recovery_point``: the flushed prefix of a replica's log (recovery-point-offset-checkpoint).
- ``controller_live_brokers``: the brokers the active controller counts as live
  (ControllerContext.liveBrokers, from its /brokers/ids watch).
- ``next_isr_expiration_ms``: when the broker's isr-expiration task (ReplicaManager
  .maybeShrinkIsr, every replica.lag.time.max.ms / 2 since 2.x) runs next.
- ``session_expiry_ms``: when a broker's ZooKeeper session expires (KRaft: when the active
  controller fences it) if nothing more is heard from it.
- ``messages_in_flight``: the requests and responses on the wire right now (sent, not yet
  delivered), and those a scenario's ``hold`` keeps.
"""

from __future__ import annotations

import copy

from kafkasim.runtime.network import ZOOKEEPER, delivery_envelope
from kafkasim.settings.exceptions import ClusterError

NO_SUCH_TIME = -1


def known_broker(brokers: dict, broker_id: int):
    """The Broker ``broker_id`` of ``brokers``; ClusterError naming the known ids otherwise
    (a list, a bool or any other non-int is refused as such, not looked up)."""
    if not isinstance(broker_id, int) or isinstance(broker_id, bool):
        raise ClusterError(f"a broker id is an int, got {broker_id!r} "
                           f"({type(broker_id).__name__}); brokers are {sorted(brokers)}")
    b = brokers.get(broker_id)
    if b is None:
        raise ClusterError(f"Unknown broker {broker_id}; brokers are {sorted(brokers)}")
    return b


class ClusterInspector:
    """Read access to a cluster's state for tests, scenarios and the widgets
    (``cluster.inspect``): what the controller's store, each broker and the wire hold now."""

    __slots__ = ("cluster", "ready_ms")

    def __init__(self, cluster) -> None:
        self.cluster = cluster
        #: when the cluster finished starting (construction returned): 0 in ZooKeeper mode; in
        #: KRaft mode once the quorum has a leader and every broker is registered and unfenced
        self.ready_ms = 0

    # -- the cluster ----------------------------------------------------------------------------
    def metadata_mode(self) -> str:
        """"kraft" when a KRaft controller quorum holds the metadata, else "zookeeper"."""
        return "zookeeper" if self.cluster.kraft is None else "kraft"

    def running_brokers(self) -> list[int]:
        from kafkasim.runtime.broker import RUNNING

        return [b.id for b in self.cluster.brokers.values() if b.state == RUNNING]

    def nodes(self) -> list:
        """Every node of the simulated network: brokers, KRaft controller nodes, ZooKeeper
        (ZooKeeper mode) and the clients created so far."""
        c = self.cluster
        nodes: list = sorted(c.brokers)
        if c.kraft is not None:
            nodes += sorted(c.kraft.nodes)
        else:
            nodes.append(ZOOKEEPER)
        return nodes + sorted(str(client) for client in c.clients)

    # -- the controller's store -----------------------------------------------------------------
    def partition_states(self, topic: str) -> dict[tuple[str, int], tuple]:
        """Authoritative partition state, as ZooKeeper holds it (KRaft: the committed metadata
        image): (topic, partition) -> (leader, leader epoch, isr, partition epoch)."""
        c = self.cluster
        if c.kraft is not None:
            return {tp: (r.leader, r.leader_epoch, tuple(r.isr), r.partition_epoch)
                    for tp, r in sorted(c.kraft.image.partitions.items()) if tp[0] == topic}
        out = {}
        node = c.zk.get(f"/brokers/topics/{topic}")
        if node is None:
            return out
        for p in sorted(node.json()["partitions"], key=int):
            st = c.zk.get(f"/brokers/topics/{topic}/partitions/{p}/state")
            if st is not None:
                d = st.json()
                out[(topic, int(p))] = (d["leader"], d["leader_epoch"], tuple(d["isr"]),
                                        st.version)
        return out

    def partition_state(self, topic: str, partition: int) -> dict:
        """Leader, leader epoch, ISR and zkVersion as ZooKeeper holds them."""
        c = self.cluster
        c.topics.check_partition(topic, partition)
        leader, epoch, isr, version = self.partition_states(topic)[(topic, partition)]
        return {"leader": leader, "leader_epoch": epoch, "isr": list(isr),
                "replicas": c.assignment(topic)[partition], "partition_epoch": version}

    def controller_live_brokers(self) -> list[int]:
        """The brokers the active controller sees as live (empty with no active controller);
        may lag ``running_brokers()`` until the controller's watch fires."""
        ctl = self.cluster.zk_control_plane.controller_broker()
        if ctl is None:
            return []
        return sorted(ctl.controller.context.live_brokers)

    # -- one broker -----------------------------------------------------------------------------
    def replica_view(self, broker: int, topic: str, partition: int = 0) -> dict:
        """Broker ``broker``'s own view of ``topic``-``partition``.

        ``role`` is "leader", "follower" or "none" (no LeaderAndIsr received yet: Kafka has no
        Partition object then; ``leader`` and ``leader_epoch`` are -1). ``isr`` is empty on a
        follower: as in Kafka, only the leader (and the controller) track it. ``epoch_entries`` are
        the (leader epoch, start offset) pairs of its leader epoch cache, oldest first."""
        c = self.cluster
        log = c.log(broker, topic, partition)
        part = c.brokers[broker].replica_manager.partitions.get((topic, partition))
        if part is None:
            role, leader, epoch, isr, replicas = "none", -1, -1, [], []
        else:
            role = "leader" if part.is_leader else "follower"
            leader, epoch = part.leader_id, part.leader_epoch
            isr, replicas = list(part.isr), list(part.replicas)
        return {
            "broker": broker, "topic": topic, "partition": partition,
            "role": role, "leader": leader, "leader_epoch": epoch,
            "isr": isr, "replicas": replicas,
            "log_end_offset": log.log_end_offset,
            "high_watermark": log.high_watermark,
            "log_start_offset": log.log_start_offset,
            "recovery_point": log.recovery_point,
            "epoch_entries": [(e.epoch, e.start_offset) for e in log.leader_epoch_cache.entries],
        }

    def follower_states(self, topic: str, partition: int = 0, *,
                        leader: int | None = None) -> dict[int, dict]:
        """The leader's state of each follower (kafka.cluster.Replica), by follower id.

        ``leader`` defaults to the partition's leader in ZooKeeper; the broker must currently
        lead the partition (only a leader tracks its followers). A ``log_end_offset`` of -1
        means unknown (reset when the broker became leader); ``last_caught_up_time_ms`` is a
        large negative number until the follower first caught up."""
        c = self.cluster
        b = c.leader(topic, partition) if leader is None else leader
        if b < 0:
            raise ClusterError(f"{topic}-{partition} has no leader, so no follower state")
        part = known_broker(c.brokers, b).replica_manager.partitions.get((topic, partition))
        if part is None or not part.is_leader:
            raise ClusterError(f"broker {b} does not lead {topic}-{partition} (only the leader "
                               "tracks follower state)")
        return {r: {"log_end_offset": st.log_end_offset,
                    "log_start_offset": st.log_start_offset,
                    "last_caught_up_time_ms": st.last_caught_up_time_ms,
                    "last_fetch_time_ms": st.last_fetch_time_ms,
                    "last_fetch_leader_log_end_offset": st.last_fetch_leader_log_end_offset}
                for r, st in sorted(part.remote.items())}

    def recovery_point(self, broker: int, topic: str, partition: int = 0) -> int:
        """The replica's recovery point: every offset below it is flushed to disk."""
        return self.cluster.log(broker, topic, partition).recovery_point

    def next_isr_expiration_ms(self, broker: int) -> int:
        """Simulated time at which ``broker``'s isr-expiration task runs next (-1 when the
        broker is not running)."""
        c = self.cluster
        b = known_broker(c.brokers, broker)
        if not b.is_running:
            return NO_SUCH_TIME
        times = [t for t, _seq, kind, args in c.engine.pending_events()
                 if kind == "broker_timer" and args[0] == broker and args[1] == b.incarnation
                 and getattr(args[2], "__name__", "") == "_timer_isr_expiration"]
        return min(times) if times else NO_SUCH_TIME

    def session_expiry_ms(self, broker: int) -> int:
        """When the ZooKeeper session holding /brokers/ids/<broker> expires if no ping comes
        (last ping + zookeeper.session.timeout.ms); -1 when the broker is not registered.
        KRaft: when the active controller fences the broker if no heartbeat comes (its last
        contact + broker.session.timeout.ms, stale one millisecond later); -1 when fenced or
        when no controller is active."""
        c = self.cluster
        b = known_broker(c.brokers, broker)
        if c.kraft is not None:
            node = c.kraft.active()
            if node is None:
                return -1
            st = node.controller.cluster_control.heartbeat_manager.state(b.id)
            if st is None or st.fenced():
                return -1
            return st.last_contact_ms + c.broker_config["broker.session.timeout.ms"]
        node = c.zk.get(f"/brokers/ids/{b.id}")
        s = c.zk.sessions.get(node.ephemeral_owner) if node is not None else None
        return -1 if s is None else s.last_heard_ms + s.timeout_ms

    def supervised_start_ms(self, broker: int) -> int | None:
        """When the process supervisor of ``start(broker, retry=True)`` starts the stopped
        ``broker`` again (its old ZooKeeper session has expired then); None if no start waits."""
        due = [e.time_ms for e in self.cluster.engine.pending_of("supervisor_start")
               if e.args == (broker,)]
        return due[0] if due else None

    # -- the wire -------------------------------------------------------------------------------
    def messages_in_flight(self) -> list[dict]:
        """Every message on the wire now, oldest first: ``src``, ``dst``, ``type`` (its RPC name
        in this version, e.g. "FetchResponse"), ``sent_ms``, ``arrives_ms`` (-1 while a scenario
        holds it), ``held``, ``msg_id`` and ``message`` (a copy of the message, its fields as
        Kafka's request/response schema names them)."""
        c = self.cluster
        rows = []
        for t, _seq, kind, args in c.engine.pending_events():
            if kind == "deliver":
                rows.append(self._flight_row(delivery_envelope(args), t, False))
        rows.extend(self._flight_row(env, -1, True) for env in c.transport.network.held)
        return sorted(rows, key=lambda r: r["msg_id"])

    def _flight_row(self, env, arrives_ms: int, held: bool) -> dict:
        return {"src": env.src, "dst": env.dst, "type": self.cluster.transport.wire_name(env.msg),
                "sent_ms": env.sent_ms, "arrives_ms": arrives_ms, "held": held,
                "msg_id": env.msg_id, "message": copy.copy(env.msg)}
