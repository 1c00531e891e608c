"""The ZooKeeper-mode controller's partition and replica state machines, with their states
(kafka.controller.PartitionStateMachine / ReplicaStateMachine, 1.1 - 3.9).

Kafka's controller keeps a state per partition (``PartitionState``: NewPartition,
OnlinePartition, OfflinePartition, NonExistentPartition) and per replica (``ReplicaState``:
NewReplica, OnlineReplica, OfflineReplica, ReplicaDeletionStarted, ReplicaDeletionSuccessful,
ReplicaDeletionIneligible, NonExistentReplica) in its ControllerContext. Every state names the
states it may be entered from (``valid_previous_states``); a transition from any other state is
refused and logged, and the state stays as it was.

``ZkPartitionStateMachine`` and ``ZkReplicaStateMachine`` keep those states in the controller's
``ControllerContext`` (``partition_states`` / ``replica_states``) and run each valid transition
through ``KafkaController``'s methods (kafkasim.control.controller), which do the ZooKeeper
writes and send the requests: the Kafka constructor's request batch is the ``ctx`` whose sends
go out at once, and its ``KafkaZkClient`` the in-memory ``ZooKeeper``. The controller's own
event handlers (topic creation, broker change and failure, failover, controlled shutdown,
reassignment) call those methods directly and record the states they reach in the same
ControllerContext maps, without the validity check (their transitions are valid by
construction). ZooKeeper-mode topic deletion is not modelled: the deletion states are only
recorded.
"""

from __future__ import annotations

from dataclasses import replace
from enum import Enum
from typing import NamedTuple

from kafkasim.core import rules

TopicPartition = tuple[str, int]


class PartitionAndReplica(NamedTuple):
    """kafka.controller.PartitionAndReplica: one replica of one partition."""

    topic_partition: TopicPartition
    replica: int


class PartitionState(Enum):
    """kafka.controller.PartitionState; the value is Kafka's ``state`` byte."""

    NewPartition = 0
    OnlinePartition = 1
    OfflinePartition = 2
    NonExistentPartition = 3

    @property
    def state(self) -> int:
        return self.value

    @property
    def valid_previous_states(self) -> frozenset[PartitionState]:
        return _PARTITION_PREVIOUS[self]


class ReplicaState(Enum):
    """kafka.controller.ReplicaState; the value is Kafka's ``state`` byte."""

    NewReplica = 1
    OnlineReplica = 2
    OfflineReplica = 3
    ReplicaDeletionStarted = 4
    ReplicaDeletionSuccessful = 5
    ReplicaDeletionIneligible = 6
    NonExistentReplica = 7

    @property
    def state(self) -> int:
        return self.value

    @property
    def valid_previous_states(self) -> frozenset[ReplicaState]:
        return _REPLICA_PREVIOUS[self]


NewPartition = PartitionState.NewPartition
OnlinePartition = PartitionState.OnlinePartition
OfflinePartition = PartitionState.OfflinePartition
NonExistentPartition = PartitionState.NonExistentPartition
NewReplica = ReplicaState.NewReplica
OnlineReplica = ReplicaState.OnlineReplica
OfflineReplica = ReplicaState.OfflineReplica
ReplicaDeletionStarted = ReplicaState.ReplicaDeletionStarted
ReplicaDeletionSuccessful = ReplicaState.ReplicaDeletionSuccessful
ReplicaDeletionIneligible = ReplicaState.ReplicaDeletionIneligible
NonExistentReplica = ReplicaState.NonExistentReplica

_PARTITION_PREVIOUS = {
    NewPartition: frozenset({NonExistentPartition}),
    OnlinePartition: frozenset({NewPartition, OnlinePartition, OfflinePartition}),
    OfflinePartition: frozenset({NewPartition, OnlinePartition, OfflinePartition}),
    NonExistentPartition: frozenset({OfflinePartition}),
}
_LIVE_REPLICA_PREVIOUS = frozenset({NewReplica, OnlineReplica, OfflineReplica,
                                    ReplicaDeletionIneligible})
_REPLICA_PREVIOUS = {
    NewReplica: frozenset({NonExistentReplica}),
    OnlineReplica: _LIVE_REPLICA_PREVIOUS,
    OfflineReplica: _LIVE_REPLICA_PREVIOUS,
    ReplicaDeletionStarted: frozenset({OfflineReplica}),
    ReplicaDeletionSuccessful: frozenset({ReplicaDeletionStarted}),
    ReplicaDeletionIneligible: frozenset({OfflineReplica, ReplicaDeletionStarted}),
    NonExistentReplica: frozenset({ReplicaDeletionSuccessful}),
}


class PartitionLeaderElectionStrategy(NamedTuple):
    """kafka.controller.PartitionLeaderElectionStrategy: ``name`` is the strategy as
    ``KafkaController.handle_state_changes`` takes it."""

    name: str


def OfflinePartitionLeaderElectionStrategy(  # Kafka's case class name
        allow_unclean: bool) -> PartitionLeaderElectionStrategy:
    """OfflinePartitionLeaderElectionStrategy(allowUnclean)."""
    return PartitionLeaderElectionStrategy("unclean" if allow_unclean else "offline")


ReassignPartitionLeaderElectionStrategy = PartitionLeaderElectionStrategy("reassign")
PreferredReplicaPartitionLeaderElectionStrategy = PartitionLeaderElectionStrategy("preferred")
ControlledShutdownPartitionLeaderElectionStrategy = \
    PartitionLeaderElectionStrategy("controlled_shutdown")
_STRATEGIES = ("offline", "unclean", "reassign", "preferred", "controlled_shutdown")


def _strategy_name(strategy) -> str:
    """The strategy's name (a PartitionLeaderElectionStrategy or the name itself)."""
    name = getattr(strategy, "name", strategy)
    if name not in _STRATEGIES:
        raise ValueError(f"leader_election_strategy: {strategy!r} is not one of "
                         f"{', '.join(_STRATEGIES)} (or a PartitionLeaderElectionStrategy)")
    return name


class Meter:
    """A Yammer meter reduced to its count (``mark``, ``count``)."""

    __slots__ = ("_count",)

    def __init__(self) -> None:
        self._count = 0

    def mark(self, n: int = 1) -> None:
        self._count += n

    def count(self) -> int:
        return self._count


class ControllerStats:
    """kafka.controller.ControllerStats, the one meter the elections mark:
    ``unclean_leader_election_rate`` (UncleanLeaderElectionsPerSec)."""

    __slots__ = ("unclean_leader_election_rate",)

    def __init__(self) -> None:
        self.unclean_leader_election_rate = Meter()


class PartitionLeaderElectionAlgorithms:
    """kafka.controller.PartitionLeaderElectionAlgorithms (ZooKeeper mode), by Kafka's method
    names: each answers the new leader or None (Kafka's Option[Int]). The orders are
    kafkasim.core.rules' (which the controller runs)."""

    @staticmethod
    def offline_partition_leader_election(assignment, isr, live_replicas,
                                          unclean_leader_election_enabled: bool,
                                          controller_context=None) -> int | None:
        """offlinePartitionLeaderElection: the first live ISR member in assignment order, else
        (unclean.leader.election.enable) the first live replica, which marks the context's
        ``stats.unclean_leader_election_rate``."""
        leader, unclean = rules.offline_partition_leader_election(
            list(assignment), list(isr), live_replicas, bool(unclean_leader_election_enabled))
        if unclean and controller_context is not None:
            controller_context.stats.unclean_leader_election_rate.mark()
        return leader

    @staticmethod
    def reassign_partition_leader_election(reassignment, isr, live_replicas) -> int | None:
        """reassignPartitionLeaderElection: the first live ISR member of the target replicas."""
        return rules.reassign_partition_leader_election(list(reassignment), list(isr),
                                                        live_replicas)

    @staticmethod
    def preferred_replica_partition_leader_election(assignment, isr,
                                                    live_replicas) -> int | None:
        """preferredReplicaPartitionLeaderElection: the preferred replica if live and in the
        ISR."""
        return rules.preferred_replica_partition_leader_election(list(assignment), list(isr),
                                                                 live_replicas)

    @staticmethod
    def controlled_shutdown_partition_leader_election(assignment, isr, live_replicas,
                                                      shutting_down_brokers) -> int | None:
        """controlledShutdownPartitionLeaderElection: the first live ISR member that is not
        shutting down."""
        return rules.controlled_shutdown_partition_leader_election(
            list(assignment), list(isr), live_replicas, shutting_down_brokers)


class StateChangeFailedException(RuntimeError):
    """kafka.common.StateChangeFailedException: an election or initialization that failed
    (the partition keeps its state)."""


def _check_target(target_state, kind) -> None:
    if not isinstance(target_state, kind):
        names = ", ".join(s.name for s in kind)
        raise ValueError(f"target_state: {target_state!r} is not a {kind.__name__} "
                         f"({names})")


class _ControllerStateMachine:
    """What both ZooKeeper-mode state machines run over: ``controller`` is the
    ``KafkaController`` (its ``context`` is the ControllerContext), ``ctx`` the broker context
    its requests go through, ``zk`` the ZooKeeper."""

    __slots__ = ("controller", "ctx", "zk")

    def __init__(self, controller, ctx, zk) -> None:
        self.controller = controller
        self.ctx = ctx
        self.zk = zk

    @property
    def controller_context(self):
        return self.controller.context


class ZkPartitionStateMachine(_ControllerStateMachine):
    """kafka.controller.ZkPartitionStateMachine over a ``KafkaController``
    (``_ControllerStateMachine``)."""

    __slots__ = ()

    def startup(self) -> dict:
        """initializePartitionState, then triggerOnlinePartitionStateChange."""
        self.initialize_partition_state()
        return self.trigger_online_partition_state_change()

    def initialize_partition_state(self) -> None:
        """Every known partition: OnlinePartition if its cached leader is online,
        OfflinePartition if not, NewPartition without leadership info."""
        self.controller.context.initialize_partition_state()

    def trigger_online_partition_state_change(self, topic: str | None = None) -> dict:
        """The NewPartition and OfflinePartition partitions (of ``topic``) -> OnlinePartition
        with OfflinePartitionLeaderElectionStrategy(false)."""
        cc = self.controller.context
        tps = [tp for tp, st in cc.partition_states.items()
               if st in (NewPartition, OfflinePartition) and (topic is None or tp[0] == topic)]
        return self.handle_state_changes(tps, OnlinePartition,
                                         OfflinePartitionLeaderElectionStrategy(False))

    def handle_state_changes(self, partitions, target_state: PartitionState,
                             leader_election_strategy=None) -> dict:
        """handleStateChanges: a partition not yet known starts as NonExistentPartition; those
        whose state may not go to ``target_state`` keep their state. To OnlinePartition,
        NewPartition partitions are initialized and Online/OfflinePartition ones go through
        the election ``leader_election_strategy`` (required then). Returns the election
        results: tp -> (leader, leader epoch, ISR, zkVersion), or a StateChangeFailedException
        for a failed election (whose partition keeps its state)."""
        _check_target(target_state, PartitionState)
        partitions = list(partitions)
        strategy = None
        if leader_election_strategy is not None:
            strategy = _strategy_name(leader_election_strategy)
        cc = self.controller.context
        for tp in partitions:
            cc.put_partition_state_if_not_exists(tp, NonExistentPartition)
        valid, _invalid = cc.check_valid_partition_state_change(partitions, target_state)
        if target_state is not OnlinePartition:
            for tp in valid:
                cc.put_partition_state(tp, target_state)
            return {}
        return self._to_online(valid, strategy)

    def _to_online(self, valid: list, strategy: str | None) -> dict:
        cc = self.controller.context
        new = [tp for tp in valid if cc.partition_state(tp) is NewPartition]
        elect = [tp for tp in valid if tp not in new]
        if elect and strategy is None:
            raise ValueError("leader_election_strategy: required when the target state is "
                             "OnlinePartition (Election strategy is a required field)")
        online = self.controller.handle_state_changes(self.ctx, self.zk, new + elect,
                                                      strategy or "offline", new=new)
        for tp in online:
            cc.put_partition_state(tp, OnlinePartition)
        return {tp: cc.states[tp] if tp in online else StateChangeFailedException(
                    f"Failed to elect leader for partition {tp[0]}-{tp[1]} under strategy "
                    f"{strategy}")
                for tp in elect}


class ZkReplicaStateMachine(_ControllerStateMachine):
    """kafka.controller.ZkReplicaStateMachine over a ``KafkaController``
    (``_ControllerStateMachine``)."""

    __slots__ = ()

    def startup(self) -> None:
        """initializeReplicaState, then the online replicas -> OnlineReplica and (2.3+,
        KAFKA-3143: rule ``failover_takes_dead_replicas_offline``) the others ->
        OfflineReplica; before 2.3 those stayed ReplicaDeletionIneligible."""
        self.initialize_replica_state()
        online, offline = self.controller.context.online_and_offline_replicas()
        self.handle_state_changes(online, OnlineReplica)
        if self.ctx.rules.controller.failover_takes_dead_replicas_offline:
            self.handle_state_changes(offline, OfflineReplica)

    def initialize_replica_state(self) -> None:
        """Every replica of every partition: OnlineReplica on an online broker, else
        ReplicaDeletionIneligible."""
        self.controller.context.initialize_replica_state()

    def handle_state_changes(self, replicas, target_state: ReplicaState) -> None:
        """handleStateChanges: the replicas grouped by broker (in order of first
        appearance), each group through doHandleStateChanges."""
        _check_target(target_state, ReplicaState)
        by_broker: dict[int, list[PartitionAndReplica]] = {}
        for r in replicas:
            r = PartitionAndReplica(*r)
            by_broker.setdefault(r.replica, []).append(r)
        for replica_id, group in by_broker.items():
            self.do_handle_state_changes(replica_id, group, target_state)

    def do_handle_state_changes(self, replica_id: int, replicas: list,
                                target_state: ReplicaState) -> None:
        """doHandleStateChanges: a replica not yet known starts as NonExistentReplica; those
        whose state may not go to ``target_state`` keep it; the others make the transition."""
        cc = self.controller.context
        for r in replicas:
            cc.put_replica_state_if_not_exists(r, NonExistentReplica)
        previous = target_state.valid_previous_states
        if target_state is ReplicaDeletionIneligible and \
                not self.ctx.rules.controller.offline_replica_to_deletion_ineligible:
            previous = frozenset({ReplicaDeletionStarted})   # before KAFKA-8237 (2.3)
        valid, _invalid = cc.check_valid_replica_state_change(replicas, target_state, previous)
        if not valid:
            return
        step = _REPLICA_STEPS.get(target_state)
        if step is not None:
            step(self, replica_id, valid)
        else:   # ReplicaDeletionIneligible / ReplicaDeletionSuccessful: the state only
            for r in valid:
                cc.put_replica_state(r, target_state)

    def _to_new(self, replica_id: int, valid: list) -> None:
        """-> NewReplica: a replica of a partition with leadership info gets a LeaderAndIsr
        unless it is that partition's leader (then the transition fails)."""
        cc = self.controller.context
        for r in valid:
            info = cc.states.get(r.topic_partition)
            if info is not None:
                if info[0] == replica_id:
                    continue
                self.controller.send_leader_and_isr(self.ctx, [r.topic_partition],
                                                    only=[replica_id])
            cc.put_replica_state(r, NewReplica)

    def _to_online(self, replica_id: int, valid: list) -> None:
        """-> OnlineReplica: from NewReplica the replica joins the assignment if it is not in
        it; from the other states it gets a LeaderAndIsr if the partition has leadership
        info."""
        cc = self.controller.context
        for r in valid:
            tp = r.topic_partition
            if cc.replica_state(r) is NewReplica:
                assignment = cc.partition_full_replica_assignment(tp)
                if replica_id not in assignment.replicas:
                    cc.update_partition_full_replica_assignment(
                        tp, replace(assignment, replicas=assignment.replicas + (replica_id,)))
            elif tp in cc.states:
                self.controller.send_leader_and_isr(self.ctx, [tp], only=[replica_id])
            cc.put_replica_state(r, OnlineReplica)

    def _to_offline(self, replica_id: int, valid: list) -> None:
        """-> OfflineReplica: KafkaController.offline_replica (StopReplica without deletion,
        out of the ISR, LeaderAndIsr to the other replicas, UpdateMetadata)."""
        tps = [r.topic_partition for r in valid]
        self.controller.offline_replica(self.ctx, self.zk, replica_id, tps,
                                        reason="offline replica")
        for r in valid:
            self.controller.context.put_replica_state(r, OfflineReplica)

    def _to_deletion_started(self, replica_id: int, valid: list) -> None:
        """-> ReplicaDeletionStarted: a StopReplica with deletion to the replica."""
        cc = self.controller.context
        for r in valid:
            cc.put_replica_state(r, ReplicaDeletionStarted)
        if replica_id in cc.live_brokers:
            self.controller.send_stop_replica(self.ctx, replica_id,
                                              [r.topic_partition for r in valid], True)

    def _to_non_existent(self, replica_id: int, valid: list) -> None:
        """-> NonExistentReplica: the replica leaves the partition's assignment (RS, AR, RR)
        and its state is forgotten."""
        cc = self.controller.context
        for r in valid:
            tp = r.topic_partition
            cc.update_partition_full_replica_assignment(
                tp, cc.partition_full_replica_assignment(tp).remove_replica(replica_id))
            cc.remove_replica_state(r)


_REPLICA_STEPS = {
    NewReplica: ZkReplicaStateMachine._to_new,
    OnlineReplica: ZkReplicaStateMachine._to_online,
    OfflineReplica: ZkReplicaStateMachine._to_offline,
    ReplicaDeletionStarted: ZkReplicaStateMachine._to_deletion_started,
    NonExistentReplica: ZkReplicaStateMachine._to_non_existent,
}
