"""``KafkaController`` in ZooKeeper mode: topic creation, leader/ISR state, AlterPartition.

The controller runs inside one broker (``ctx``). It owns the partition state znodes and tells
brokers what to do with LeaderAndIsr and UpdateMetadata requests (fact sheet §7a). This module
holds the logic; the broker layer delivers its messages.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from kafkasim.protocol import errors as E
from kafkasim.protocol.messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    LeaderAndIsrRequest,
    PartitionState,
    UpdateMetadataRequest,
)
from kafkasim.protocol.zookeeper import (
    BadVersion,
    ZooKeeper,
    partition_state_json,
    partition_state_path,
)


@dataclass(slots=True)
class ControllerContext:
    """The controller's cache of cluster state (kafka.controller.ControllerContext)."""

    live_brokers: list[int] = field(default_factory=list)
    assignments: dict[tuple[str, int], tuple[int, ...]] = field(default_factory=dict)
    # tp -> (leader, leader epoch, isr, zk version)
    states: dict[tuple[str, int], tuple[int, int, tuple[int, ...], int]] = field(
        default_factory=dict)


class KafkaController:
    __slots__ = ("broker_id", "controller_epoch", "context")

    def __init__(self, broker_id: int, controller_epoch: int) -> None:
        self.broker_id = broker_id
        self.controller_epoch = controller_epoch
        self.context = ControllerContext()

    # -- helpers ----------------------------------------------------------------------------
    def _state(self, tp) -> PartitionState:
        leader, epoch, isr, version = self.context.states[tp]
        return PartitionState(tp[0], tp[1], self.controller_epoch, leader, epoch, isr, version,
                              self.context.assignments[tp])

    def _send_leader_and_isr(self, ctx, tps) -> None:
        """One LeaderAndIsr per live replica broker, with the states of its partitions."""
        by_broker: dict[int, list[PartitionState]] = {}
        for tp in tps:
            st = self._state(tp)
            for b in st.replicas:
                if b in self.context.live_brokers:
                    by_broker.setdefault(b, []).append(st)
        for b in sorted(by_broker):
            ctx.send(b, LeaderAndIsrRequest(self.broker_id, self.controller_epoch,
                                            tuple(by_broker[b]),
                                            tuple(self.context.live_brokers)))

    def send_update_metadata(self, ctx, tps) -> None:
        states = tuple(self._state(tp) for tp in tps)
        for b in self.context.live_brokers:
            ctx.send(b, UpdateMetadataRequest(self.broker_id, self.controller_epoch, states,
                                              tuple(self.context.live_brokers)))

    # -- failover ---------------------------------------------------------------------------
    def on_controller_failover(self, ctx, zk: ZooKeeper) -> None:
        """Read everything from ZooKeeper, then tell every broker the current state."""
        cc = self.context
        cc.live_brokers = sorted(int(b) for b in zk.children("/brokers/ids"))
        cc.assignments.clear()
        cc.states.clear()
        for topic in zk.children("/brokers/topics"):
            assignment = json.loads(zk.get(f"/brokers/topics/{topic}").data)["partitions"]
            for p in sorted(assignment, key=int):
                tp = (topic, int(p))
                cc.assignments[tp] = tuple(assignment[p])
                node = zk.get(partition_state_path(topic, int(p)))
                if node is not None:
                    d = json.loads(node.data)
                    cc.states[tp] = (d["leader"], d["leader_epoch"], tuple(d["isr"]), node.version)
        tps = list(cc.states)
        self.send_update_metadata(ctx, tps)
        if tps:
            self._send_leader_and_isr(ctx, tps)

    # -- topics -----------------------------------------------------------------------------
    def on_new_topic(self, ctx, zk: ZooKeeper, topic: str) -> None:
        """initializeLeaderAndIsrForPartitions: first live replica leads, ISR = live replicas."""
        assignment = json.loads(zk.get(f"/brokers/topics/{topic}").data)["partitions"]
        cc = self.context
        new = []
        for p in sorted(assignment, key=int):
            tp = (topic, int(p))
            replicas = tuple(assignment[p])
            cc.assignments[tp] = replicas
            live = tuple(r for r in replicas if r in cc.live_brokers)
            leader = live[0] if live else -1
            isr = live if live else replicas[:1]
            path = partition_state_path(topic, int(p))
            data = partition_state_json(leader, 0, isr, self.controller_epoch)
            if zk.exists(path):
                version = zk.set(path, data)
            else:
                zk.create(path, data)
                version = 0
            cc.states[tp] = (leader, 0, isr, version)
            new.append(tp)
            ctx.trace("controller", topic, int(p),
                      f"new partition: leader {leader}, ISR {list(isr)}, epoch 0")
        self._send_leader_and_isr(ctx, new)
        self.send_update_metadata(ctx, new)

    # -- AlterPartition (KIP-497) ---------------------------------------------------------------
    def process_alter_partition(self, ctx, zk: ZooKeeper, src: int,
                                req: AlterPartitionRequest) -> None:
        """KafkaController.processAlterIsr: validate epochs, write ZK, answer, UpdateMetadata."""
        results = []
        changed = []
        for topic, partition, leader_epoch, new_isr, partition_epoch in req.partitions:
            tp = (topic, partition)
            cur = self.context.states.get(tp)
            if cur is None:
                results.append((topic, partition, E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, (), -1))
                continue
            leader, epoch, isr, version = cur
            if leader != req.broker_id:
                err = E.NOT_LEADER_OR_FOLLOWER
            elif leader_epoch < epoch:
                err = E.FENCED_LEADER_EPOCH
            elif partition_epoch != version:
                err = E.INVALID_UPDATE_VERSION
            else:
                err = E.NONE
            if err != E.NONE:
                results.append((topic, partition, err, leader, epoch, isr, version))
                continue
            try:
                new_version = zk.set(partition_state_path(topic, partition),
                                     partition_state_json(leader, epoch, new_isr,
                                                          self.controller_epoch), version)
            except BadVersion:
                results.append((topic, partition, E.INVALID_UPDATE_VERSION, leader, epoch, isr,
                                version))
                continue
            # the leader epoch is NOT bumped by an AlterPartition, only the zkVersion
            self.context.states[tp] = (leader, epoch, tuple(new_isr), new_version)
            results.append((topic, partition, E.NONE, leader, epoch, tuple(new_isr), new_version))
            changed.append(tp)
            ctx.trace("controller", topic, partition,
                      f"AlterPartition from {src}: ISR {list(isr)} -> {list(new_isr)}")
        ctx.send(src, AlterPartitionResponse(E.NONE, tuple(results)))
        if changed:
            self.send_update_metadata(ctx, changed)

    def on_isr_change_notification(self, ctx, zk: ZooKeeper, tps) -> None:
        """Pre-2.7: a leader wrote ZK itself; reload those states and propagate them."""
        for tp in tps:
            node = zk.get(partition_state_path(*tp))
            if node is not None:
                d = json.loads(node.data)
                self.context.states[tp] = (d["leader"], d["leader_epoch"], tuple(d["isr"]),
                                           node.version)
        self.send_update_metadata(ctx, list(tps))
