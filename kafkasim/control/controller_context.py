"""The ZooKeeper-mode controller's cache of cluster state: ``ControllerContext`` and
``ReplicaAssignment`` (kafka.controller, 2.4+ for the adding/removing replicas of KIP-455).

``ReplicaAssignment`` is one partition's full assignment: the replicas RS (during a reassignment
the target replicas followed by the origin ones), the adding replicas AR and the removing
replicas RR. ``ControllerContext`` keeps, per partition, the assignment, the leadership info the
controller last wrote or read (leader, leader epoch, ISR, zkVersion) and the live and
shutting-down brokers; its queries are Kafka's, by the same names.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkasim.control.state_machines import (
    ControllerStats,
    NewPartition,
    NonExistentPartition,
    OfflinePartition,
    OnlinePartition,
    OnlineReplica,
    PartitionAndReplica,
    PartitionState,
    ReplicaDeletionIneligible,
    ReplicaState,
)

TopicPartition = tuple[str, int]


@dataclass(frozen=True, slots=True)
class ReplicaAssignment:
    """kafka.controller.ReplicaAssignment: RS (``replicas``), AR (``adding_replicas``) and RR
    (``removing_replicas``). Any sequences of broker ids are kept as tuples, so two assignments
    with the same replicas in the same order are equal."""

    replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    def __post_init__(self) -> None:
        for name in ("replicas", "adding_replicas", "removing_replicas"):
            object.__setattr__(self, name, tuple(getattr(self, name)))

    @property
    def origin_replicas(self) -> tuple[int, ...]:
        """ORS = RS - AR: the replicas before the reassignment."""
        return tuple(r for r in self.replicas if r not in self.adding_replicas)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        """TRS = RS - RR: the replicas once the reassignment completes."""
        return tuple(r for r in self.replicas if r not in self.removing_replicas)

    @property
    def is_being_reassigned(self) -> bool:
        return bool(self.adding_replicas or self.removing_replicas)

    def remove_replica(self, replica: int) -> ReplicaAssignment:
        """removeReplica: the assignment without ``replica`` in RS, AR and RR."""
        return ReplicaAssignment(*(tuple(r for r in rs if r != replica) for rs in (
            self.replicas, self.adding_replicas, self.removing_replicas)))

    def reassign_to(self, target_replicas) -> ReplicaAssignment:
        """ReplicaAssignment.reassignTo: RS = (TRS ++ ORS).distinct, AR = RS - ORS,
        RR = RS - TRS (reassigning to the origin replicas cancels: AR = RR = [])."""
        target = tuple(target_replicas)
        origin = self.origin_replicas
        rs = tuple(dict.fromkeys(target + origin))
        return ReplicaAssignment(rs, tuple(r for r in rs if r not in origin),
                                 tuple(r for r in rs if r not in target))


@dataclass(slots=True)
class ControllerContext:
    """The controller's cache of cluster state (kafka.controller.ControllerContext)."""

    live_brokers: list[int] = field(default_factory=list)
    broker_epochs: dict[int, int] = field(default_factory=dict)
    shutting_down: list[int] = field(default_factory=list)
    # RS of each partition (partitionAssignments); during a KIP-455 reassignment RS = TRS + ORS
    # and ``adding`` / ``removing`` hold AR and RR (the topic znode's adding_replicas /
    # removing_replicas)
    assignments: dict[TopicPartition, tuple[int, ...]] = field(default_factory=dict)
    # tp -> (leader, leader epoch, isr, zk version): partitionLeadershipInfo
    states: dict[TopicPartition, tuple[int, int, tuple[int, ...], int]] = field(
        default_factory=dict)
    adding: dict[TopicPartition, tuple[int, ...]] = field(default_factory=dict)
    removing: dict[TopicPartition, tuple[int, ...]] = field(default_factory=dict)
    reassigning: list[TopicPartition] = field(default_factory=list)   # partitionsBeingReassigned
    # PartitionStateMachine's OfflinePartition: partitions whose leader went offline and that no
    # election has brought online since (membership only, never iterated), kept by
    # ``put_partition_state``. NewPartition is a partition of ``assignments`` without leadership
    # info (no state znode created yet).
    offline: set[TopicPartition] = field(default_factory=set)
    # KIP-704 (3.2+): partitions whose cached LeaderAndIsr has leaderRecoveryState RECOVERING
    # (the state znode's ``leader_recovery_state: 1``); the others are RECOVERED
    recovering: set[TopicPartition] = field(default_factory=set)
    # the state machines' states (kafkasim.control.state_machines): partitionStates and
    # replicaStates, kept by ZkPartitionStateMachine / ZkReplicaStateMachine
    partition_states: dict[TopicPartition, PartitionState] = field(default_factory=dict)
    replica_states: dict[PartitionAndReplica, ReplicaState] = field(default_factory=dict)
    # ControllerStats: the unclean elections this controller made (uncleanLeaderElectionRate)
    stats: ControllerStats = field(default_factory=ControllerStats)
    # KIP-516 (2.8+, rule ``zk_topic_ids``): topicIds and topicNames, each topic's id as its
    # znode holds it (KafkaController.processTopicIds: addTopicId)
    topic_ids: dict[str, str] = field(default_factory=dict)
    topic_names: dict[str, str] = field(default_factory=dict)

    def partition_full_replica_assignment(self, tp: TopicPartition) -> ReplicaAssignment:
        """partitionFullReplicaAssignment: an empty assignment for an unknown partition."""
        return ReplicaAssignment(self.assignments.get(tp, ()), self.adding.get(tp, ()),
                                 self.removing.get(tp, ()))

    def update_partition_full_replica_assignment(self, tp: TopicPartition,
                                                 assignment: ReplicaAssignment) -> None:
        """updatePartitionFullReplicaAssignment: RS, AR and RR of ``tp``."""
        self.assignments[tp] = assignment.replicas
        if assignment.is_being_reassigned:
            self.adding[tp] = assignment.adding_replicas
            self.removing[tp] = assignment.removing_replicas
        else:
            self.adding.pop(tp, None)
            self.removing.pop(tp, None)

    def partition_replica_assignment(self, tp: TopicPartition) -> tuple[int, ...]:
        """partitionReplicaAssignment: RS, empty for an unknown topic or partition."""
        return self.assignments.get(tp, ())

    def partition_replica_assignment_for_topic(self, topic: str) -> dict:
        """partitionReplicaAssignmentForTopic: tp -> RS of every partition of ``topic``."""
        return {tp: rs for tp, rs in self.assignments.items() if tp[0] == topic}

    def preferred_replica_imbalance_count(self) -> int:
        """preferredReplicaImbalanceCount: partitions with leadership info that do not have
        their preferred leader (``has_preferred_leader``)."""
        return sum(1 for tp in self.states
                   if self.assignments.get(tp) and not self.has_preferred_leader(tp))

    def has_preferred_leader(self, tp: TopicPartition) -> bool:
        """hasPreferredLeader: the leader is the preferred replica (the head of RS), except
        while a reassignment adds that replica: then the partition counts as balanced until
        the new replica joins the ISR (KIP-455, 2.4+)."""
        preferred = self.assignments[tp][0]
        leader, _epoch, isr, _version = self.states[tp]
        if preferred in self.adding.get(tp, ()):
            return preferred not in isr
        return leader == preferred

    def offline_partition_count(self) -> int:
        """offlinePartitionCount: the partitions in the OfflinePartition state (KAFKA-6753,
        kept on every partition state transition)."""
        return sum(1 for tp in self.offline if tp in self.assignments)

    def partition_with_leaders_count(self) -> int:
        """partitionWithLeadersCount: the partitions with leadership info."""
        return len(self.states)

    def all_topics(self) -> set[str]:
        """allTopics: every topic the controller knows."""
        return {tp[0] for tp in self.assignments}

    def add_topic_id(self, topic: str, topic_id: str) -> None:
        """addTopicId (ControllerContext.scala:133@3.0.0): remember ``topic``'s id and the topic
        of the id. Another id for the topic, or the id for another topic, is Kafka's
        IllegalStateException (a ValueError here), and nothing changes."""
        existing = self.topic_ids.get(topic, topic_id)
        if existing != topic_id:
            raise ValueError(f"topic ID map already contained ID for topic {topic} and new ID "
                             f"{topic_id} did not match existing ID {existing}")
        name = self.topic_names.get(topic_id, topic)
        if name != topic:
            raise ValueError(f"topic name map already contained ID {topic_id} and new name "
                             f"{topic} did not match existing name {name}")
        self.topic_ids[topic] = topic_id
        self.topic_names[topic_id] = topic

    def live_broker_ids(self) -> list[int]:
        """liveBrokerIds: live brokers not in controlled shutdown."""
        return [b for b in self.live_brokers if b not in self.shutting_down]

    def leader_epoch(self, tp) -> int:
        """leaderEpoch: the partition's leader epoch as a StopReplica carries it (KIP-570, 2.6+),
        LeaderAndIsr.NoEpoch (-1) without leadership info. (The EpochDuringDelete sentinel of a
        topic queued for deletion never applies: kafkasim's ZooKeeper controller deletes no
        topic.)"""
        state = self.states.get(tp)
        return state[1] if state is not None else -1

    def live_or_shutting_down_broker_ids(self) -> list[int]:
        """liveOrShuttingDownBrokerIds: every registered broker, shutting down or not."""
        return list(self.live_brokers)

    def set_live_brokers(self, broker_epochs: dict[int, int]) -> None:
        """setLiveBrokers: the live brokers and their broker epochs (broker id -> epoch)."""
        self.live_brokers = sorted(broker_epochs)
        self.broker_epochs = {b: broker_epochs[b] for b in self.live_brokers}

    def all_partitions(self) -> list[TopicPartition]:
        """allPartitions: every partition with an assignment."""
        return list(self.assignments)

    def partition_leadership_info(self, tp: TopicPartition):
        """partitionLeadershipInfo: the cached (leader, leader epoch, ISR, zkVersion), None
        without one."""
        return self.states.get(tp)

    def put_partition_leadership_info(self, tp: TopicPartition, leader_and_isr) -> None:
        """putPartitionLeadershipInfo: ``leader_and_isr`` is (leader, leader epoch, ISR) or
        (leader, leader epoch, ISR, zkVersion = partition epoch; 0 when not given)."""
        leader, epoch, isr, *version = leader_and_isr
        self.states[tp] = (leader, epoch, tuple(isr), version[0] if version else 0)

    def is_replica_online(self, broker_id: int, include_shutting_down: bool = False) -> bool:
        """isReplicaOnline (no offline log dirs in kafkasim): the broker is live and, unless
        ``include_shutting_down``, not shutting down."""
        if include_shutting_down:
            return broker_id in self.live_brokers
        return broker_id in self.live_brokers and broker_id not in self.shutting_down

    # -- the state machines' states (kafka.controller.ControllerContext) ------------------------
    def partition_state(self, tp: TopicPartition) -> PartitionState:
        """partitionState: KeyError for a partition the state machine never saw."""
        return self.partition_states[tp]

    def put_partition_state(self, tp: TopicPartition, state: PartitionState) -> None:
        """putPartitionState, with updatePartitionStateMetrics: entering OfflinePartition
        counts the partition offline (``offline_partition_count``), leaving it uncounts it."""
        self.partition_states[tp] = state
        if state is OfflinePartition:
            self.offline.add(tp)
        else:
            self.offline.discard(tp)

    def put_partition_state_if_not_exists(self, tp: TopicPartition,
                                          state: PartitionState) -> None:
        """putPartitionStateIfNotExists."""
        if tp not in self.partition_states:
            self.put_partition_state(tp, state)

    def check_valid_partition_state_change(self, tps, target_state: PartitionState
                                           ) -> tuple[list, list]:
        """checkValidPartitionStateChange: (valid, invalid), each in ``tps`` order."""
        valid, invalid = [], []
        for tp in tps:
            ok = self.partition_states.get(tp, NonExistentPartition) in \
                target_state.valid_previous_states
            (valid if ok else invalid).append(tp)
        return valid, invalid

    def partitions_in_state(self, state: PartitionState, topic: str | None = None
                            ) -> list[TopicPartition]:
        """partitionsInState (of ``topic``)."""
        return self.partitions_in_states({state}, topic)

    def partitions_in_states(self, states, topic: str | None = None) -> list[TopicPartition]:
        """partitionsInStates (of ``topic``), in the order the states were first put."""
        return [tp for tp, st in self.partition_states.items()
                if st in states and (topic is None or tp[0] == topic)]

    def replica_state(self, replica: PartitionAndReplica) -> ReplicaState:
        """replicaState: KeyError for a replica the state machine never saw."""
        return self.replica_states[PartitionAndReplica(*replica)]

    def put_replica_state(self, replica: PartitionAndReplica, state: ReplicaState) -> None:
        """putReplicaState."""
        self.replica_states[PartitionAndReplica(*replica)] = state

    def put_replica_state_if_not_exists(self, replica: PartitionAndReplica,
                                        state: ReplicaState) -> None:
        """putReplicaStateIfNotExists."""
        self.replica_states.setdefault(PartitionAndReplica(*replica), state)

    def remove_replica_state(self, replica: PartitionAndReplica) -> None:
        """removeReplicaState."""
        self.replica_states.pop(PartitionAndReplica(*replica), None)

    def check_valid_replica_state_change(self, replicas, target_state: ReplicaState,
                                         valid_previous_states=None) -> tuple[list, list]:
        """checkValidReplicaStateChange: (valid, invalid), each in ``replicas`` order.
        ``valid_previous_states``: the release's set when it differs from the newest one."""
        if valid_previous_states is None:
            valid_previous_states = target_state.valid_previous_states
        valid, invalid = [], []
        for r in replicas:
            ok = self.replica_states.get(PartitionAndReplica(*r)) in valid_previous_states
            (valid if ok else invalid).append(PartitionAndReplica(*r))
        return valid, invalid

    def online_and_offline_replicas(self) -> tuple[list, list]:
        """onlineAndOfflineReplicas: every replica of every partition, split by
        isReplicaOnline (in assignment order)."""
        online, offline = [], []
        for tp, replicas in self.assignments.items():
            for r in replicas:
                (online if self.is_replica_online(r) else offline).append(
                    PartitionAndReplica(tp, r))
        return online, offline

    def replicas_for_partition(self, tps) -> list[PartitionAndReplica]:
        """replicasForPartition: every replica (RS) of each of ``tps``."""
        return [PartitionAndReplica(tp, r) for tp in tps for r in self.assignments.get(tp, ())]

    def put_replica_states(self, replicas, state: ReplicaState) -> None:
        """putReplicaState for each of ``replicas`` (the bookkeeping of a transition the
        controller made itself)."""
        for r in replicas:
            self.put_replica_state(r, state)

    def initialize_partition_state(self) -> None:
        """PartitionStateMachine.initializePartitionState: every known partition is
        NewPartition without leadership info, else OnlinePartition if its leader is online and
        OfflinePartition if not."""
        for tp in self.assignments:
            info = self.states.get(tp)
            if info is None:
                self.put_partition_state(tp, NewPartition)
            else:
                self.put_partition_state(
                    tp, OnlinePartition if self.is_replica_online(info[0]) else OfflinePartition)

    def initialize_replica_state(self) -> None:
        """ReplicaStateMachine.initializeReplicaState: every replica on an online broker is
        OnlineReplica, every other ReplicaDeletionIneligible."""
        for r in self.replicas_for_partition(self.assignments):
            self.put_replica_state(r, OnlineReplica if self.is_replica_online(r.replica)
                                   else ReplicaDeletionIneligible)
