"""Read-only views of the simulation's state for scenario authors, as plain data.

``Cluster`` inherits these methods. Each returns ints, strings, lists and dicts (never the live
``Log``/``Partition`` objects), so a notebook can print, compare or store them and the simulation
cannot be changed through them. Names follow the Kafka state they show:

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
- ``messages_in_flight``: the requests and responses on the wire right now (sent, not yet
  delivered), and those a scenario's ``hold`` keeps.
"""

from __future__ import annotations

import copy

from kafkasim.runtime.network import delivery_envelope
from kafkasim.settings.exceptions import ClusterError

NO_SUCH_TIME = -1


def _cluster_error(msg: str) -> ClusterError:
    return ClusterError(msg)


class StateViews:
    """Mixin of ``Cluster``: read access an instructor needs when building a scenario."""

    __slots__ = ()

    def replica_view(self, broker: int, topic: str, partition: int = 0) -> dict:
        """Broker ``broker``'s own view of ``topic``-``partition``.

        ``role`` is "leader", "follower" or "none" (no LeaderAndIsr received yet: Kafka has no
        Partition object then; ``leader`` and ``leader_epoch`` are -1). ``isr`` is empty on a
        follower: as in Kafka, only the leader (and the controller) track it. ``epoch_entries`` are
        the (leader epoch, start offset) pairs of its leader epoch cache, oldest first."""
        log = self.log(broker, topic, partition)
        part = self.brokers[broker].replica_manager.partitions.get((topic, partition))
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
        b = self.leader(topic, partition) if leader is None else leader
        if b < 0:
            raise _cluster_error(f"{topic}-{partition} has no leader, so no follower state")
        self._broker(b)
        part = self.brokers[b].replica_manager.partitions.get((topic, partition))
        if part is None or not part.is_leader:
            raise _cluster_error(f"broker {b} does not lead {topic}-{partition} (only the leader "
                              "tracks follower state)")
        return {r: {"log_end_offset": st.log_end_offset,
                    "log_start_offset": st.log_start_offset,
                    "last_caught_up_time_ms": st.last_caught_up_time_ms,
                    "last_fetch_time_ms": st.last_fetch_time_ms,
                    "last_fetch_leader_log_end_offset": st.last_fetch_leader_log_end_offset}
                for r, st in sorted(part.remote.items())}

    def recovery_point(self, broker: int, topic: str, partition: int = 0) -> int:
        """The replica's recovery point: every offset below it is flushed to disk."""
        return self.log(broker, topic, partition).recovery_point

    def controller_live_brokers(self) -> list[int]:
        """The brokers the active controller sees as live (empty with no active controller);
        may lag ``running_brokers()`` until the controller's watch fires."""
        ctl = self.zk_control_plane.controller_broker()
        if ctl is None:
            return []
        return sorted(ctl.controller.context.live_brokers)

    def next_isr_expiration_ms(self, broker: int) -> int:
        """Simulated time at which ``broker``'s isr-expiration task runs next (-1 when the
        broker is not running)."""
        b = self._broker(broker)
        if not b.is_running:
            return NO_SUCH_TIME
        times = [t for t, _seq, kind, args in self.engine.pending_events()
                 if kind == "broker_timer" and args[0] == broker and args[1] == b.incarnation
                 and getattr(args[2], "__name__", "") == "_timer_isr_expiration"]
        return min(times) if times else NO_SUCH_TIME

    def messages_in_flight(self) -> list[dict]:
        """Every message on the wire now, oldest first: ``src``, ``dst``, ``type`` (its RPC name
        in this version, e.g. "FetchResponse"), ``sent_ms``, ``arrives_ms`` (-1 while a scenario
        holds it), ``held``, ``msg_id`` and ``message`` (a copy of the message, its fields as
        Kafka's request/response schema names them)."""
        rows = []
        for t, _seq, kind, args in self.engine.pending_events():
            if kind == "deliver":
                rows.append(self._flight_row(delivery_envelope(args), t, False))
        rows.extend(self._flight_row(env, -1, True) for env in self.network.held)
        return sorted(rows, key=lambda r: r["msg_id"])

    def _flight_row(self, env, arrives_ms: int, held: bool) -> dict:
        return {"src": env.src, "dst": env.dst, "type": self.transport.wire_name(env.msg),
                "sent_ms": env.sent_ms, "arrives_ms": arrives_ms, "held": held,
                "msg_id": env.msg_id, "message": copy.copy(env.msg)}
