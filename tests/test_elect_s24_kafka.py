"""Leader election and partition changes, session 24: Kafka's ZooKeeper-mode partition and
replica state machine tests with the states, the election algorithms by Kafka's names, and the
KRaft controller cases not yet ported (PartitionReassignmentReplicasTest @4.3.0,
ReplicationControlManagerTest @3.3.0 / @4.3.0, PartitionChangeBuilderTest @3.7.0 / @3.9.0-rc3).

Sources:

* ``core/src/test/scala/unit/kafka/controller/PartitionStateMachineTest.scala`` and
  ``ReplicaStateMachineTest.scala`` @3.7.0 (the same cases at 2.8.0; the state tables are
  those of 2.3.0 - 3.9, the 2.2 difference is ported as its own test). The earlier port,
  tests/test_controller_state_machines_kafka.py, drove ``KafkaController`` directly and left
  out every test that checks a state; these drive ``ZkPartitionStateMachine`` /
  ``ZkReplicaStateMachine`` (kafkasim.control.state_machines), which keep Kafka's
  ``PartitionState`` / ``ReplicaState`` in the ControllerContext, and assert the states as
  Kafka's tests do, plus the requests and ZooKeeper writes where the Kafka test verifies them.
* ``metadata/src/test/java/org/apache/kafka/controller/PartitionReassignmentReplicasTest.java``
  @4.3.0 (confluentinc a9ce322153): testCanCompleteReassignmentWhenReplicationFactorIncreases
  AndMissingAnExistingTargetReplicaFromIsr, testDoesNotCompleteReassignmentWhenReplication
  FactorIncreasesAndMissingAnAddingReplicaFromIsr, testDoesNotCompleteReassignmentWhen
  ReplicationFactorDecreasesAndMissingAnExistingTargetReplicaFromIsr (KAFKA-19975; the other
  cases are in tests/test_reassignment_s23_kafka.py).
* ``metadata/src/test/java/org/apache/kafka/controller/ReplicationControlManagerTest.java``
  @3.3.0 (tests of 3.0.0 - 3.3.x that 3.4 moved to the metrics publisher):
  testOfflinePartitionAndReplicaImbalanceMetrics, testGlobalTopicAndPartitionMetrics, on the
  ReplicationControlManager's own counts. testBrokerCountMetrics is ClusterControlManager's
  (left to its port). @4.3.0: testCreateTopicWithCollisionChars through Kafka's accessors
  (getTopic(...).numPartitions), and the accessors ReplicationControlManagerTest calls
  throughout (getPartition, getTopicId, getTopic, brokersToIsrs(), brokersToElrs()).
* ``metadata/src/test/java/org/apache/kafka/controller/PartitionChangeBuilderTest.java``
  @3.7.0 / @3.9.0-rc3: testLeaderEpochBumpZkMigration, testLeaderEpochBumpOnIsrShrinkWith
  ZkMigration, testNoLeaderEpochBumpOnIsrExpansionDuringMigration, through the builder's
  ``set_zk_migration_enabled`` (3.6 - 3.9, KAFKA-15109); @4.3.0 the ``setDefaultDirProvider``
  chained on its builders (accepted, no directories).
* ``core/src/test/scala/unit/kafka/controller/PartitionLeaderElectionAlgorithmsTest.scala``
  @3.7.0, all 13 cases again through Kafka's object name ``PartitionLeaderElectionAlgorithms``
  and ``ControllerContext.stats`` (tests/test_election_algorithms_kafka.py ports them on
  kafkasim.core.rules' functions).
* ``core/src/test/scala/unit/kafka/controller/ControllerFailoverTest.scala`` @3.7.0
  (testHandleIllegalStateException, its first step) and ControllerIntegrationTest's
  testLeaderAndIsrWhenEntireIsrOffline... with the controller's states: cluster runs check the
  states ``KafkaController``'s own flows record (topic creation, broker failure and startup,
  failover, reassignment); and testTopicPartitionExpansion(WithOfflineReplica), the expanded
  topic znode handed to the controller's topic event (onNewPartitionCreation).

How the ZooKeeper tests are adapted: Kafka mocks ``KafkaZkClient`` and
``ControllerBrokerRequestBatch``; here the harness of tests/test_controller_state_machines_kafka
.py gives a real in-memory ZooKeeper and a FakeContext whose ``sent`` list is the request batch.
A mocked ``getTopicPartitionStatesRaw`` answer is the state znode written beforehand; NONODE is
no znode; NODEEXISTS from ``createTopicPartitionStatesRaw`` is a znode that already exists.

Not ported: the ZooKeeperClientException cases (testNewPartitionToOnlinePartitionTransition
ZooKeeperClientExceptionFromCreateStates, testOfflinePartitionToOnlinePartitionTransition
ZooKeeperClientExceptionFromStateLookup: kafkasim's ZooKeeper raises no client exceptions);
the topic-deletion cases (testNoOfflinePartitionsChangeForTopicsBeingDeleted,
testUpdatingOfflinePartitionsCountDuringTopicDeletion: ZooKeeper-mode topic deletion is not
modelled); the rest of testHandleIllegalStateException (handleIllegalState and the resignation:
kafkasim's controller has no event queue).
"""

from __future__ import annotations

import pytest
from test_controller_state_machines_kafka import BROKER_ID, CONTROLLER_EPOCH, TP, _harness
from test_partition_change_builder_kafka import broker_states, epoch_bump_leader, foo_builder
from test_reassignment_kafka import partition_assignment
from test_replication_control_manager_kafka import Ctx, default_broker_epoch
from test_zk_controller_kafka import (
    FIRST_CONTROLLER_EPOCH,
    INITIAL_LEADER_EPOCH,
    TIMEOUT_MS,
    _make_servers,
    _other,
    _shutdown,
    _wait_for_partition_state,
    _zk_reassign,
    _zk_state,
)

from kafkasim.control.controller_context import ControllerContext, ReplicaAssignment
from kafkasim.control.kraft.partition_change import NO_LEADER_CHANGE
from kafkasim.control.kraft.reassignment import (
    PartitionReassignmentReplicas,
    UnknownTopicOrPartitionException,
)
from kafkasim.control.kraft.replication_control import UnknownTopicIdException
from kafkasim.control.state_machines import (
    ControlledShutdownPartitionLeaderElectionStrategy,
    NewPartition,
    NewReplica,
    NonExistentPartition,
    NonExistentReplica,
    OfflinePartition,
    OfflinePartitionLeaderElectionStrategy,
    OfflineReplica,
    OnlinePartition,
    OnlineReplica,
    PartitionAndReplica,
    PartitionLeaderElectionAlgorithms,
    PartitionState,
    PreferredReplicaPartitionLeaderElectionStrategy,
    ReplicaDeletionIneligible,
    ReplicaDeletionStarted,
    ReplicaDeletionSuccessful,
    ReplicaState,
    StateChangeFailedException,
    ZkPartitionStateMachine,
    ZkReplicaStateMachine,
)
from kafkasim.control.zookeeper import partition_state_json, partition_state_path
from kafkasim.core import errors as E
from kafkasim.core.messages import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest

PARTITIONS = [TP]
REPLICA = PartitionAndReplica(TP, BROKER_ID)
OFFLINE_FALSE = OfflinePartitionLeaderElectionStrategy(False)


def _psm(live=(BROKER_ID,), **kw):
    h = _harness(live=live, **kw)
    return h, ZkPartitionStateMachine(h.ctl, h.ctx, h.zk), h.ctl.context


def _rsm(live=(BROKER_ID,), **kw):
    h = _harness(live=live, **kw)
    return h, ZkReplicaStateMachine(h.ctl, h.ctx, h.zk), h.ctl.context


# ======================================================= PartitionStateMachineTest @3.7.0


def test_nonexistent_partition_to_new_partition_transition():
    """PartitionStateMachineTest.testNonexistentPartitionToNewPartitionTransition."""
    _h, psm, cc = _psm()
    psm.handle_state_changes(PARTITIONS, NewPartition)
    assert cc.partition_state(TP) is NewPartition


def test_invalid_nonexistent_partition_to_online_partition_transition():
    """PartitionStateMachineTest.testInvalidNonexistentPartitionToOnlinePartitionTransition:
    refused, the partition stays NonExistentPartition and nothing is sent."""
    h, psm, cc = _psm()
    psm.handle_state_changes(PARTITIONS, OnlinePartition, OFFLINE_FALSE)
    assert cc.partition_state(TP) is NonExistentPartition
    assert h.ctx.sent == []


def test_invalid_nonexistent_partition_to_offline_partition_transition():
    """PartitionStateMachineTest.testInvalidNonexistentPartitionToOfflinePartitionTransition."""
    _h, psm, cc = _psm()
    psm.handle_state_changes(PARTITIONS, OfflinePartition)
    assert cc.partition_state(TP) is NonExistentPartition


def test_new_partition_to_online_partition_transition_with_states():
    """PartitionStateMachineTest.testNewPartitionToOnlinePartitionTransition: the state znode
    is created with LeaderAndIsr(5, [5]) at our controller epoch, LeaderAndIsr goes to 5, and
    the partition is OnlinePartition."""
    h, psm, cc = _psm()
    h.put_partition(TP, [BROKER_ID])
    cc.put_partition_state(TP, NewPartition)
    assert psm.handle_state_changes(PARTITIONS, OnlinePartition, OFFLINE_FALSE) == {}
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["controller_epoch"]) == (
        BROKER_ID, 0, [BROKER_ID], CONTROLLER_EPOCH)
    assert h.states_to(BROKER_ID) == [("t", 0, BROKER_ID, 0, (BROKER_ID,), 0, (BROKER_ID,))]
    assert cc.partition_state(TP) is OnlinePartition


def test_new_partition_to_online_partition_transition_error_code_from_create_states_state():
    """PartitionStateMachineTest.testNewPartitionToOnlinePartitionTransitionErrorCodeFrom
    CreateStates: the create answers NODEEXISTS (the znode is there), the partition stays
    NewPartition and no LeaderAndIsr is sent."""
    h, psm, cc = _psm()
    h.put_partition(TP, [BROKER_ID])
    h.zk.create(partition_state_path(*TP), partition_state_json(7, 3, [7], CONTROLLER_EPOCH - 1))
    cc.put_partition_state(TP, NewPartition)
    psm.handle_state_changes(PARTITIONS, OnlinePartition, OFFLINE_FALSE)
    assert cc.partition_state(TP) is NewPartition
    assert h.sent(LeaderAndIsrRequest) == []


def test_new_partition_to_offline_partition_transition():
    """PartitionStateMachineTest.testNewPartitionToOfflinePartitionTransition."""
    _h, psm, cc = _psm()
    cc.put_partition_state(TP, NewPartition)
    psm.handle_state_changes(PARTITIONS, OfflinePartition)
    assert cc.partition_state(TP) is OfflinePartition


def test_invalid_new_partition_to_nonexistent_partition_transition():
    """PartitionStateMachineTest.testInvalidNewPartitionToNonexistentPartitionTransition."""
    _h, psm, cc = _psm()
    cc.put_partition_state(TP, NewPartition)
    psm.handle_state_changes(PARTITIONS, NonExistentPartition)
    assert cc.partition_state(TP) is NewPartition


def test_online_partition_to_online_transition_with_states():
    """PartitionStateMachineTest.testOnlinePartitionToOnlineTransition: the preferred election
    writes newLeader(5) (leader epoch 1, zkVersion = partition epoch 1), LeaderAndIsr with it
    goes to 5, the partition stays OnlinePartition and the result is the new LeaderAndIsr."""
    h, psm, cc = _psm()
    h.put_partition(TP, [BROKER_ID], BROKER_ID, [BROKER_ID])
    cc.put_partition_state(TP, OnlinePartition)
    result = psm.handle_state_changes(PARTITIONS, OnlinePartition,
                                      PreferredReplicaPartitionLeaderElectionStrategy)
    assert result == {TP: (BROKER_ID, 1, (BROKER_ID,), 1)}
    assert h.states_to(BROKER_ID) == [("t", 0, BROKER_ID, 1, (BROKER_ID,), 1, (BROKER_ID,))]
    assert cc.partition_state(TP) is OnlinePartition


def test_online_partition_to_online_transition_for_controlled_shutdown_with_states():
    """PartitionStateMachineTest.testOnlinePartitionToOnlineTransitionForControlledShutdown:
    5 leads and shuts down; newLeaderAndIsr(6, [6]) is written, the LeaderAndIsr goes to both
    brokers (the shutting-down one included), the partition stays OnlinePartition."""
    other = BROKER_ID + 1
    h, psm, cc = _psm(live=(BROKER_ID, other), shutting_down=(BROKER_ID,))
    h.put_partition(TP, [BROKER_ID, other], BROKER_ID, [BROKER_ID, other])
    cc.put_partition_state(TP, OnlinePartition)
    psm.handle_state_changes(PARTITIONS, OnlinePartition,
                             ControlledShutdownPartitionLeaderElectionStrategy)
    st = h.state()
    assert (st["leader"], st["isr"], st["leader_epoch"]) == (other, [other], 1)
    assert h.recipients(LeaderAndIsrRequest) == [BROKER_ID, other]
    assert cc.partition_state(TP) is OnlinePartition


def test_online_partition_to_offline_transition():
    """PartitionStateMachineTest.testOnlinePartitionToOfflineTransition."""
    _h, psm, cc = _psm()
    cc.put_partition_state(TP, OnlinePartition)
    psm.handle_state_changes(PARTITIONS, OfflinePartition)
    assert cc.partition_state(TP) is OfflinePartition


@pytest.mark.parametrize("target", [NonExistentPartition, NewPartition])
def test_invalid_online_partition_transitions(target):
    """PartitionStateMachineTest.testInvalidOnlinePartitionToNonexistentPartitionTransition
    and testInvalidOnlinePartitionToNewPartitionTransition."""
    _h, psm, cc = _psm()
    cc.put_partition_state(TP, OnlinePartition)
    psm.handle_state_changes(PARTITIONS, target)
    assert cc.partition_state(TP) is OnlinePartition


def test_offline_partition_to_online_partition_transition_with_states():
    """PartitionStateMachineTest.testOfflinePartitionToOnlinePartitionTransition: the state
    znode holds LeaderAndIsr(NoLeader, [5]); the offline election writes newLeader(5)
    (leader epoch 1), LeaderAndIsr goes to 5, the partition is OnlinePartition."""
    h, psm, cc = _psm()
    h.put_partition(TP, [BROKER_ID], -1, [BROKER_ID])
    cc.put_partition_state(TP, OfflinePartition)
    assert cc.offline_partition_count() == 1
    result = psm.handle_state_changes(PARTITIONS, OnlinePartition, OFFLINE_FALSE)
    assert result == {TP: (BROKER_ID, 1, (BROKER_ID,), 1)}
    assert h.states_to(BROKER_ID) == [("t", 0, BROKER_ID, 1, (BROKER_ID,), 1, (BROKER_ID,))]
    assert cc.partition_state(TP) is OnlinePartition
    assert cc.offline_partition_count() == 0


def test_offline_partition_to_online_partition_transition_error_code_from_state_lookup_state():
    """PartitionStateMachineTest.testOfflinePartitionToOnlinePartitionTransitionErrorCode
    FromStateLookup: the state lookup answers NONODE (no znode, only the cached leadership
    info): the election fails, nothing is sent, the partition stays OfflinePartition."""
    h, psm, cc = _psm()
    h.put_partition(TP, [BROKER_ID])
    cc.states[TP] = (-1, 0, (BROKER_ID,), 0)
    cc.put_partition_state(TP, OfflinePartition)
    result = psm.handle_state_changes(PARTITIONS, OnlinePartition, OFFLINE_FALSE)
    assert isinstance(result[TP], StateChangeFailedException)
    assert h.sent(LeaderAndIsrRequest) == []
    assert cc.partition_state(TP) is OfflinePartition


def test_offline_partition_to_nonexistent_partition_transition():
    """PartitionStateMachineTest.testOfflinePartitionToNonexistentPartitionTransition."""
    _h, psm, cc = _psm()
    cc.put_partition_state(TP, OfflinePartition)
    psm.handle_state_changes(PARTITIONS, NonExistentPartition)
    assert cc.partition_state(TP) is NonExistentPartition
    assert cc.offline_partition_count() == 0


def test_invalid_offline_partition_to_new_partition_transition():
    """PartitionStateMachineTest.testInvalidOfflinePartitionToNewPartitionTransition."""
    _h, psm, cc = _psm()
    cc.put_partition_state(TP, OfflinePartition)
    psm.handle_state_changes(PARTITIONS, NewPartition)
    assert cc.partition_state(TP) is OfflinePartition


def test_updating_offline_partitions_count():
    """PartitionStateMachineTest.testUpdatingOfflinePartitionsCount: four partitions New ->
    Offline count 4 offline; the offline election (each state znode holds LeaderAndIsr(5,
    [5])) brings them online and the count to 0."""
    h, psm, cc = _psm()
    tps = [("test", p) for p in range(4)]
    for tp in tps:
        h.put_partition(tp, [BROKER_ID], BROKER_ID, [BROKER_ID])
    psm.handle_state_changes(tps, NewPartition)
    psm.handle_state_changes(tps, OfflinePartition)
    assert cc.offline_partition_count() == len(tps)
    psm.handle_state_changes(tps, OnlinePartition, OFFLINE_FALSE)
    assert cc.offline_partition_count() == 0
    assert [cc.partition_state(tp) for tp in tps] == [OnlinePartition] * 4


def test_online_transition_requires_an_election_strategy():
    """ZkPartitionStateMachine.doHandleStateChanges @3.7.0: an Offline/OnlinePartition going
    to OnlinePartition needs an election strategy (IllegalArgumentException in Kafka); the
    state is unchanged. An unknown strategy is refused, naming the valid ones."""
    _h, psm, cc = _psm()
    cc.put_partition_state(TP, OfflinePartition)
    with pytest.raises(ValueError, match="leader_election_strategy"):
        psm.handle_state_changes(PARTITIONS, OnlinePartition)
    with pytest.raises(ValueError, match="controlled_shutdown"):
        psm.handle_state_changes(PARTITIONS, OnlinePartition, "preferd")
    with pytest.raises(ValueError, match="target_state"):
        psm.handle_state_changes(PARTITIONS, OnlineReplica)
    assert cc.partition_state(TP) is OfflinePartition


def test_startup_initializes_partition_states_and_elects():
    """PartitionStateMachine.startup @3.7.0 (initializePartitionState,
    triggerOnlinePartitionStateChange): a partition without leadership info is NewPartition,
    one whose leader is online OnlinePartition, one whose leader is not OfflinePartition; New
    and Offline ones then go online (initialized / offline election)."""
    h, psm, cc = _psm(live=(BROKER_ID,))
    new, online, offline = ("a", 0), ("b", 0), ("c", 0)
    h.put_partition(new, [BROKER_ID])
    h.put_partition(online, [BROKER_ID], BROKER_ID, [BROKER_ID])
    h.put_partition(offline, [7, BROKER_ID], 7, [7, BROKER_ID])
    psm.initialize_partition_state()
    assert [cc.partition_state(tp) for tp in (new, online, offline)] == [
        NewPartition, OnlinePartition, OfflinePartition]
    psm.trigger_online_partition_state_change()
    assert [cc.partition_state(tp) for tp in (new, online, offline)] == [OnlinePartition] * 3
    assert h.state(offline)["leader"] == BROKER_ID


# ========================================================= ReplicaStateMachineTest @3.7.0


def test_startup_online_partition():
    """ReplicaStateMachineTest.testStartupOnlinePartition."""
    h, rsm, cc = _rsm()
    h.put_partition(TP, [BROKER_ID])
    assert REPLICA not in cc.replica_states
    rsm.startup()
    assert cc.replica_state(REPLICA) is OnlineReplica


def test_startup_offline_partition():
    """ReplicaStateMachineTest.testStartupOfflinePartition: no live broker: OfflineReplica."""
    h, rsm, cc = _rsm(live=())
    h.put_partition(TP, [BROKER_ID])
    rsm.startup()
    assert cc.replica_state(REPLICA) is OfflineReplica


def test_startup_with_replica_without_leader():
    """ReplicaStateMachineTest.testStartupWithReplicaWithoutLeader: the replica on the
    shut-down broker 100 ends OfflineReplica."""
    h, rsm, cc = _rsm()
    h.put_partition(TP, [100])
    rsm.startup()
    assert cc.replica_state(PartitionAndReplica(TP, 100)) is OfflineReplica


def test_startup_offline_replica_before_2_3():
    """ReplicaStateMachine.startup @2.2.0 (before KAFKA-3143): only the live replicas are
    moved (OnlineReplica); a dead broker's replica stays ReplicaDeletionIneligible."""
    h, rsm, cc = _rsm(live=(), version="2.2")
    h.put_partition(TP, [BROKER_ID])
    rsm.startup()
    assert cc.replica_state(REPLICA) is ReplicaDeletionIneligible


def test_nonexistent_replica_to_new_replica_transition():
    """ReplicaStateMachineTest.testNonexistentReplicaToNewReplicaTransition."""
    _h, rsm, cc = _rsm()
    rsm.handle_state_changes([REPLICA], NewReplica)
    assert cc.replica_state(REPLICA) is NewReplica


def test_new_replica_of_the_leader_is_refused():
    """ZkReplicaStateMachine.doHandleStateChanges(NewReplica) @3.7.0: a replica that leads the
    partition cannot be moved to NewReplica (StateChangeFailedException, logged): it stays
    NonExistentReplica; a follower gets a LeaderAndIsr (isNew) and becomes NewReplica."""
    h, rsm, cc = _rsm(live=(BROKER_ID, 6))
    h.put_partition(TP, [BROKER_ID, 6], BROKER_ID, [BROKER_ID])
    rsm.handle_state_changes([REPLICA, PartitionAndReplica(TP, 6)], NewReplica)
    assert cc.replica_state(REPLICA) is NonExistentReplica
    assert cc.replica_state((TP, 6)) is NewReplica
    assert h.recipients(LeaderAndIsrRequest) == [6]


def test_new_replica_to_online_replica_transition_state():
    """ReplicaStateMachineTest.testNewReplicaToOnlineReplicaTransition."""
    h, rsm, cc = _rsm()
    cc.put_replica_state(REPLICA, NewReplica)
    h.put_partition(TP, [BROKER_ID])
    rsm.handle_state_changes([REPLICA], OnlineReplica)
    assert cc.replica_state(REPLICA) is OnlineReplica


def test_new_replica_to_online_adds_it_to_the_assignment():
    """ZkReplicaStateMachine.doHandleStateChanges(OnlineReplica) from NewReplica @3.7.0: a
    replica not in the assignment is appended to it."""
    h, rsm, cc = _rsm(live=(BROKER_ID, 6))
    h.put_partition(TP, [6])
    cc.put_replica_state(REPLICA, NewReplica)
    rsm.handle_state_changes([REPLICA], OnlineReplica)
    assert cc.partition_replica_assignment(TP) == (6, BROKER_ID)


def test_new_replica_to_offline_replica_transition_state():
    """ReplicaStateMachineTest.testNewReplicaToOfflineReplicaTransition: no leadership info:
    StopReplica (no deletion) to 5, UpdateMetadata to 5, OfflineReplica."""
    h, rsm, cc = _rsm()
    h.put_partition(TP, [BROKER_ID])
    cc.put_replica_state(REPLICA, NewReplica)
    rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert [(dst, m.partitions, m.delete) for dst, m in h.sent(StopReplicaRequest)] == [
        (BROKER_ID, (TP,), False)]
    assert h.recipients(UpdateMetadataRequest) == [BROKER_ID]
    assert cc.replica_state(REPLICA) is OfflineReplica


@pytest.mark.parametrize("origin", [OnlineReplica, OfflineReplica, ReplicaDeletionIneligible])
def test_replica_to_online_replica_transition_sends_leader_and_isr(origin):
    """ReplicaStateMachineTest.testOnlineReplicaToOnlineReplicaTransition,
    testOfflineReplicaToOnlineReplicaTransition and testReplicaDeletionIneligibleToOnline
    ReplicaTransition: LeaderAndIsr(5, [5]) (isNew false) to 5, OnlineReplica."""
    h, rsm, cc = _rsm()
    h.put_partition(TP, [BROKER_ID], BROKER_ID, [BROKER_ID])
    cc.put_replica_state(REPLICA, origin)
    rsm.handle_state_changes([REPLICA], OnlineReplica)
    assert h.states_to(BROKER_ID) == [("t", 0, BROKER_ID, 0, (BROKER_ID,), 0, (BROKER_ID,))]
    assert cc.replica_state(REPLICA) is OnlineReplica


def test_online_replica_to_offline_replica_transition_state():
    """ReplicaStateMachineTest.testOnlineReplicaToOfflineReplicaTransition: 5 leads [5, 6];
    StopReplica (no deletion) to 5, newLeaderAndIsr(NoLeader, [6]) written (partition epoch
    + 1) and cached, LeaderAndIsr with it to 6, OfflineReplica."""
    other = BROKER_ID + 1
    h, rsm, cc = _rsm(live=(BROKER_ID, other))
    h.put_partition(TP, [BROKER_ID, other], BROKER_ID, [BROKER_ID, other])
    cc.put_replica_state(REPLICA, OnlineReplica)
    rsm.handle_state_changes([REPLICA], OfflineReplica)
    assert [(dst, m.delete) for dst, m in h.sent(StopReplicaRequest)] == [(BROKER_ID, False)]
    assert h.states_to(other) == [("t", 0, -1, 1, (other,), 1, (BROKER_ID, other))]
    assert h.states_to(BROKER_ID) == []
    assert cc.states[TP] == (-1, 1, (other,), 1)
    assert cc.replica_state(REPLICA) is OfflineReplica


def test_offline_replica_to_replica_deletion_started_transition_state():
    """ReplicaStateMachineTest.testOfflineReplicaToReplicaDeletionStartedTransition: a
    StopReplica with deletion to 5."""
    h, rsm, cc = _rsm()
    cc.put_replica_state(REPLICA, OfflineReplica)
    rsm.handle_state_changes([REPLICA], ReplicaDeletionStarted)
    assert [(dst, m.partitions, m.delete) for dst, m in h.sent(StopReplicaRequest)] == [
        (BROKER_ID, (TP,), True)]
    assert cc.replica_state(REPLICA) is ReplicaDeletionStarted


@pytest.mark.parametrize(("origin", "target"), [
    (OfflineReplica, ReplicaDeletionIneligible),
    (ReplicaDeletionStarted, ReplicaDeletionIneligible),
    (ReplicaDeletionStarted, ReplicaDeletionSuccessful),
])
def test_replica_deletion_state_transitions(origin, target):
    """ReplicaStateMachineTest.testOfflineReplicaToReplicaDeletionIneligibleTransition,
    testReplicaDeletionStartedToReplicaDeletionIneligibleTransition and
    testReplicaDeletionStartedToReplicaDeletionSuccessfulTransition: the state only."""
    h, rsm, cc = _rsm()
    cc.put_replica_state(REPLICA, origin)
    rsm.handle_state_changes([REPLICA], target)
    assert cc.replica_state(REPLICA) is target
    assert h.ctx.sent == []


@pytest.mark.parametrize(("version", "allowed"),
                         [("1.1", False), ("2.2", False), ("2.3", True), ("3.7", True)])
def test_offline_replica_to_replica_deletion_ineligible_by_release(version, allowed):
    """ReplicaStateMachineTest.testInvalidOfflineReplicaToReplicaDeletionIneligibleTransition
    @1.1.0 - 2.2.0 and testOfflineReplicaToReplicaDeletionIneligibleTransition @2.3.0+:
    ReplicaDeletionIneligible.validPreviousStates is {ReplicaDeletionStarted} through 2.2.0,
    {OfflineReplica, ReplicaDeletionStarted} from 2.3.0 (KAFKA-8237, 17c8016; rule
    ``offline_replica_to_deletion_ineligible``)."""
    _h, rsm, cc = _rsm(version=version)
    cc.put_replica_state(REPLICA, OfflineReplica)
    rsm.handle_state_changes([REPLICA], ReplicaDeletionIneligible)
    assert cc.replica_state(REPLICA) is (
        ReplicaDeletionIneligible if allowed else OfflineReplica)


def test_replica_deletion_successful_to_nonexistent_replica_transition_state():
    """ReplicaStateMachineTest.testReplicaDeletionSuccessfulToNonexistentReplicaTransition:
    the replica leaves the assignment and its state is forgotten."""
    h, rsm, cc = _rsm()
    cc.put_replica_state(REPLICA, ReplicaDeletionSuccessful)
    h.put_partition(TP, [BROKER_ID])
    rsm.handle_state_changes([REPLICA], NonExistentReplica)
    assert cc.partition_replica_assignment(TP) == ()
    assert REPLICA not in cc.replica_states


_INVALID_FROM_NONEXISTENT = [OnlineReplica, OfflineReplica, ReplicaDeletionStarted,
                             ReplicaDeletionIneligible, ReplicaDeletionSuccessful]


@pytest.mark.parametrize("target", _INVALID_FROM_NONEXISTENT)
def test_invalid_nonexistent_replica_transitions(target):
    """ReplicaStateMachineTest.testInvalidNonexistentReplicaTo{OnlineReplica, OfflineReplica,
    ReplicaDeletionStarted, ReplicaDeletionIneligible, ReplicaDeletionSuccessful}Transition:
    an unknown replica stays NonExistentReplica."""
    h, rsm, cc = _rsm()
    rsm.handle_state_changes([REPLICA], target)
    assert cc.replica_state(REPLICA) is NonExistentReplica
    assert h.ctx.sent == []


#: ReplicaStateMachineTest's testInvalid<From>To<To>Transition cases, each through its
#: testInvalidTransition(fromState, toState)
INVALID_REPLICA_TRANSITIONS = [
    (NewReplica, NonExistentReplica), (NewReplica, ReplicaDeletionStarted),
    (NewReplica, ReplicaDeletionIneligible), (NewReplica, ReplicaDeletionSuccessful),
    (OnlineReplica, NonExistentReplica), (OnlineReplica, NewReplica),
    (OnlineReplica, ReplicaDeletionStarted), (OnlineReplica, ReplicaDeletionIneligible),
    (OnlineReplica, ReplicaDeletionSuccessful),
    (OfflineReplica, NonExistentReplica), (OfflineReplica, NewReplica),
    (OfflineReplica, ReplicaDeletionSuccessful),
    (ReplicaDeletionStarted, NonExistentReplica), (ReplicaDeletionStarted, NewReplica),
    (ReplicaDeletionStarted, OnlineReplica), (ReplicaDeletionStarted, OfflineReplica),
    (ReplicaDeletionSuccessful, NewReplica), (ReplicaDeletionSuccessful, OnlineReplica),
    (ReplicaDeletionSuccessful, OfflineReplica),
    (ReplicaDeletionSuccessful, ReplicaDeletionStarted),
    (ReplicaDeletionSuccessful, ReplicaDeletionIneligible),
    (ReplicaDeletionIneligible, NonExistentReplica), (ReplicaDeletionIneligible, NewReplica),
    (ReplicaDeletionIneligible, ReplicaDeletionStarted),
    (ReplicaDeletionIneligible, ReplicaDeletionSuccessful),
]


@pytest.mark.parametrize(("origin", "target"), INVALID_REPLICA_TRANSITIONS,
                         ids=lambda s: s.name)
@pytest.mark.parametrize("version", ["1.1", "2.2", "2.8", "3.7"])
def test_invalid_replica_transitions(origin, target, version):
    """ReplicaStateMachineTest.testInvalid<origin>To<target>Transition (every one of the 25
    cases of 2.3.0 - 3.7.0, the same in 1.1.0 - 2.2.0; testInvalidTransition): the replica
    keeps its state and nothing is sent."""
    h, rsm, cc = _rsm(version=version)
    h.put_partition(TP, [BROKER_ID], BROKER_ID, [BROKER_ID])
    cc.put_replica_state(REPLICA, origin)
    rsm.handle_state_changes([REPLICA], target)
    assert cc.replica_state(REPLICA) is origin
    assert h.ctx.sent == []
    assert cc.partition_replica_assignment(TP) == (BROKER_ID,)


def test_valid_previous_states_tables():
    """PartitionState / ReplicaState validPreviousStates @3.7.0, with Kafka's state bytes."""
    assert {s.name: (s.state, {p.name for p in s.valid_previous_states})
            for s in PartitionState} == {
        "NewPartition": (0, {"NonExistentPartition"}),
        "OnlinePartition": (1, {"NewPartition", "OnlinePartition", "OfflinePartition"}),
        "OfflinePartition": (2, {"NewPartition", "OnlinePartition", "OfflinePartition"}),
        "NonExistentPartition": (3, {"OfflinePartition"}),
    }
    live = {"NewReplica", "OnlineReplica", "OfflineReplica", "ReplicaDeletionIneligible"}
    assert {s.name: (s.state, {p.name for p in s.valid_previous_states})
            for s in ReplicaState} == {
        "NewReplica": (1, {"NonExistentReplica"}),
        "OnlineReplica": (2, live),
        "OfflineReplica": (3, live),
        "ReplicaDeletionStarted": (4, {"OfflineReplica"}),
        "ReplicaDeletionSuccessful": (5, {"ReplicaDeletionStarted"}),
        "ReplicaDeletionIneligible": (6, {"OfflineReplica", "ReplicaDeletionStarted"}),
        "NonExistentReplica": (7, {"ReplicaDeletionSuccessful"}),
    }


def test_replica_assignment_remove_replica():
    """ReplicaAssignment.removeReplica @3.7.0: the replica leaves RS, AR and RR."""
    a = ReplicaAssignment((1, 2, 3, 4), (4,), (1,))
    assert a.remove_replica(4) == ReplicaAssignment((1, 2, 3), (), (1,))
    assert a.remove_replica(1) == ReplicaAssignment((2, 3, 4), (4,), ())


# ============================================== PartitionReassignmentReplicasTest @4.3.0


def _replicas(current, target) -> PartitionReassignmentReplicas:
    r = PartitionReassignmentReplicas(partition_assignment(current), partition_assignment(target))
    assert r.is_reassignment_in_progress()
    return r


def test_can_complete_reassignment_when_rf_increases_and_missing_an_existing_target_replica():
    """PartitionReassignmentReplicasTest.testCanCompleteReassignmentWhenReplicationFactor
    IncreasesAndMissingAnExistingTargetReplicaFromIsr @4.3.0 (KAFKA-19975): [0,1,2,3] ->
    [1,2,3,4,5] with 3 out of sync completes: ISR [1,2,4,5], replicas [1,2,3,4,5]."""
    done = _replicas([0, 1, 2, 3], [1, 2, 3, 4, 5]).maybe_complete_reassignment([0, 1, 2, 4, 5])
    assert done is not None
    assert done.isr == [1, 2, 4, 5]
    assert done.replicas == [1, 2, 3, 4, 5]


def test_does_not_complete_reassignment_when_rf_increases_and_missing_an_adding_replica():
    """PartitionReassignmentReplicasTest.testDoesNotCompleteReassignmentWhenReplicationFactor
    IncreasesAndMissingAnAddingReplicaFromIsr @4.3.0: adding replica 4 out of sync."""
    r = _replicas([0, 1, 2, 3], [1, 2, 3, 4, 5])
    assert r.maybe_complete_reassignment([0, 1, 2, 3, 5]) is None


def test_does_not_complete_reassignment_when_rf_decreases_and_missing_an_existing_target():
    """PartitionReassignmentReplicasTest.testDoesNotCompleteReassignmentWhenReplicationFactor
    DecreasesAndMissingAnExistingTargetReplicaFromIsr @4.3.0: [0,1,2,3,4] -> [2,3,4,5] with 4
    out of sync: fewer replicas, so every target replica must be in sync."""
    r = _replicas([0, 1, 2, 3, 4], [2, 3, 4, 5])
    assert r.maybe_complete_reassignment([0, 1, 2, 3, 5]) is None


# ============================ the states through the controller's own flows (cluster runs)


def _cc(c):
    """The active controller's ControllerContext."""
    return c.brokers[c.controller_id()].controller.context


def test_handle_illegal_state_exception_partition_goes_online():
    """ControllerFailoverTest.testHandleIllegalStateException @3.7.0, its first step: after
    createTopic the controller's ``partitionsInState(OnlinePartition)`` holds the partition
    (onNewPartitionCreation: NewPartition -> OnlinePartition, its replicas NewReplica ->
    OnlineReplica). The rest (handleIllegalState making the controller resign) is not ported:
    kafkasim's controller has no event queue to put a MockEvent on."""
    c = _make_servers(3)
    c.create_topic("topic1", 1, replication_factor=1)
    tp = ("topic1", 0)
    assert c.run_until(lambda cl: tp in _cc(cl).partitions_in_states({OnlinePartition}),
                       TIMEOUT_MS)
    cc = _cc(c)
    assert [cc.replica_state(r) for r in cc.replicas_for_partition([tp])] == [OnlineReplica]


def test_entire_isr_offline_partition_state_and_offline_count():
    """ControllerIntegrationTest.testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeader
    ElectionDisabled @3.7.0 with the controller's states: once the only replica shuts down the
    partition is OfflinePartition (OfflinePartitionsCount 1), the replica OfflineReplica; when
    it starts again the partition is elected back to OnlinePartition (count 0) and the replica
    is OnlineReplica."""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[other]])
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH)
    _shutdown(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, -1, INITIAL_LEADER_EPOCH + 1)
    cc = _cc(c)
    assert cc.partition_state(tp) is OfflinePartition
    assert cc.offline_partition_count() == 1
    assert cc.replica_state((tp, other)) is OfflineReplica
    c.start(other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH + 2)
    assert cc.partition_state(tp) is OnlinePartition
    assert cc.offline_partition_count() == 0
    assert cc.replica_state((tp, other)) is OnlineReplica


def test_controller_failover_initializes_states():
    """KafkaController.onControllerFailover @3.7.0: replicaStateMachine.startup and
    partitionStateMachine.startup on the new controller: the partition is OnlinePartition and
    every replica on a live broker OnlineReplica; the old controller's replica (its broker is
    down) OfflineReplica (2.3+)."""
    c = _make_servers(3)
    first = c.controller_id()
    c.create_topic("t", 1, assignment=[[0, 1, 2]])
    tp = ("t", 0)
    assert c.run_until(lambda cl: _zk_state(cl, tp) is not None, TIMEOUT_MS)
    _shutdown(c, first)
    assert c.run_until(lambda cl: cl.controller_id() not in (-1, first), TIMEOUT_MS)
    cc = _cc(c)
    assert cc.partition_state(tp) is OnlinePartition
    assert {r.replica: cc.replica_state(r) for r in cc.replicas_for_partition([tp])} == {
        b: OfflineReplica if b == first else OnlineReplica for b in (0, 1, 2)}


def test_reassignment_replica_states():
    """KafkaController.onPartitionReassignment @3.7.0: the adding replica goes NewReplica (A2)
    and, once the reassignment completes, OnlineReplica (B1); the removed one goes through
    OfflineReplica / ReplicaDeletionStarted / ReplicaDeletionSuccessful to NonExistentReplica
    (its state forgotten, B4 - B5)."""
    c = _make_servers(3)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[0, 1]])
    assert c.run_until(lambda cl: _zk_state(cl, tp) is not None, TIMEOUT_MS)
    _zk_reassign(c, {tp: [1, 2]})
    assert c.run_until(lambda cl: cl.assignment("t") == {0: [1, 2]}, TIMEOUT_MS)
    cc = _cc(c)
    assert cc.replica_state((tp, 2)) is OnlineReplica
    assert (tp, 0) not in cc.replica_states
    assert cc.partition_state(tp) is OnlinePartition


# =============================================== ReplicationControlManagerTest @3.0.0 - 3.3.0


def test_offline_partition_and_replica_imbalance_metrics():
    """ReplicationControlManagerTest.testOfflinePartitionAndReplicaImbalanceMetrics @3.3.0
    (3.0.0 - 3.3.x; 3.4 moved the gauges to ControllerMetadataMetricsPublisher, whose counts
    are the same): foo [[0,2],[0,1]], zar [[0,1,2],[1,2,3],[1,2,0]]; unregistering 0, 1, 2, 3
    one by one takes OfflinePartitionsCount 0, 1, 4, 5 and PreferredReplicaImbalanceCount to
    3, then 5; deleting foo, then zar, takes the offline count to 3, then 0."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3)
    ctx.unfence(0, 1, 2, 3)
    foo = ctx.create("foo", [[0, 2], [0, 1]])
    zar = ctx.create("zar", [[0, 1, 2], [1, 2, 3], [1, 2, 0]])
    rc = ctx.rc
    expected = {0: (0, 3), 1: (1, 5), 2: (4, None), 3: (5, None)}
    for broker, (offline, imbalance) in expected.items():
        ctx.replay(rc.handle_broker_unregistered(broker, default_broker_epoch(broker)))
        assert rc.offline_partitions_count() == offline, broker
        if imbalance is not None:
            assert rc.preferred_replica_imbalance_count() == imbalance, broker
    for topic_id, offline in ((foo.topic_id, 3), (zar.topic_id, 0)):
        records, error = rc.delete_topic(topic_id, by_id=True)
        assert error == E.NONE
        ctx.replay(records)
        assert rc.offline_partitions_count() == offline


def _global_counts(rc) -> tuple[int, int]:
    """(GlobalTopicCount, GlobalPartitionCount) as the topics held give them."""
    topics = rc.topics()
    return len(topics), sum(len(parts) for parts in topics.values())


def test_global_topic_and_partition_metrics():
    """ReplicationControlManagerTest.testGlobalTopicAndPartitionMetrics @3.3.0: foo (1
    partition), then bar (1) and baz (2): 3 topics, 4 partitions; deleting foo and baz leaves
    1 and 1, deleting bar 0 and 0."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    rc = ctx.rc
    ids = {name: ctx.create_n(name, n, -1).topic_id for name, n in (("foo", 1),)}
    assert _global_counts(rc)[0] == 1
    ids.update({name: ctx.create_n(name, n, -1).topic_id for name, n in (("bar", 1), ("baz", 2))})
    assert _global_counts(rc) == (3, 4)
    for names, counts in ((("foo", "baz"), (1, 1)), (("bar",), (0, 0))):
        for name in names:
            records, error = rc.delete_topic(ids[name], by_id=True)
            assert error == E.NONE
            ctx.replay(records)
        assert _global_counts(rc) == counts


# ========================================= PartitionChangeBuilderTest @3.7.0 / @3.9.0-rc3


@pytest.mark.parametrize("mv", ["3.6-IV0", "3.7-IV2", "4.0-IV0"])
def test_leader_epoch_bump_on_isr_shrink_with_zk_migration(mv):
    """PartitionChangeBuilderTest.testLeaderEpochBumpOnIsrShrinkWithZkMigration @3.9.0-rc3
    (KAFKA-15109): with ZK migration on, shrinking the ISR [2, 1, 3, 4] to [2, 1] bumps the
    leader epoch (leader 1 set) even at metadata versions that no longer need it."""
    b = foo_builder(mv, False).set_zk_migration_enabled(True) \
        .set_target_isr_with_broker_states(broker_states([2, 1]))
    assert epoch_bump_leader(b) == 1


@pytest.mark.parametrize("mv", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2", "4.0-IV0"])
def test_no_leader_epoch_bump_on_isr_expansion_during_migration(mv):
    """PartitionChangeBuilderTest.testNoLeaderEpochBumpOnIsrExpansionDuringMigration
    @3.9.0-rc3: expanding the ISR never bumps the leader epoch, migration or not."""
    b = foo_builder(mv, False).set_zk_migration_enabled(True) \
        .set_target_isr_with_broker_states(broker_states([2, 1, 3, 4]))
    assert epoch_bump_leader(b) == NO_LEADER_CHANGE


@pytest.mark.parametrize("mv", ["3.7-IV0", "3.7-IV2", "3.8-IV0"])
def test_leader_epoch_bump_zk_migration(mv):
    """PartitionChangeBuilderTest.testLeaderEpochBumpZkMigration @3.7.0 (every
    PartitionChangeRecord version's metadata version): the shrink bumps the epoch with the
    migration on, not with it off; at 3.5-IV2 it bumps either way (KAFKA-15021)."""
    def shrink(m, migrating):
        return epoch_bump_leader(foo_builder(m, False).set_zk_migration_enabled(migrating)
                                 .set_target_isr_with_broker_states(broker_states([2, 1])))
    assert shrink(mv, True) == 1
    assert shrink(mv, False) == NO_LEADER_CHANGE
    assert shrink("3.5-IV2", True) == 1
    assert shrink("3.5-IV2", False) == 1


# ============================================== ControllerIntegrationTest @3.7.0 (expansion)


def _expand_topic(c, topic: str, assignment: dict) -> None:
    """zkClient.setTopicAssignment with the expanded assignment; the controller's
    PartitionModificationsHandler then runs processPartitionModifications (kafkasim keeps no
    such watch: the event is handed to the controller, as the TopicChange it shares
    onNewPartitionCreation with)."""
    import json

    path = f"/brokers/topics/{topic}"
    data = c.zk.get(path).json()
    data["partitions"] = {str(p): list(r) for p, r in sorted(assignment.items())}
    c.zk.set(path, json.dumps(data))
    ctl = c.zk_control_plane.controller_broker()
    c.zk_control_plane.run_controller(ctl, "topic_change", (topic,))


def _wait_for_partition_metadata(c, tp) -> None:
    """TestUtils.waitForPartitionMetadata: every running broker's metadata cache has the
    partition with a leader."""
    def ok(cl):
        return all(tp in b.metadata.partitions and b.metadata.partitions[tp].leader >= 0
                   for b in cl.brokers.values() if b.is_running)
    assert c.run_until(ok, TIMEOUT_MS)


def test_topic_partition_expansion():
    """ControllerIntegrationTest.testTopicPartitionExpansion: t-0 on broker 0; the topic
    znode gains t-1 on 0: t-1 is initialized with leader 0 at the initial leader epoch, and
    the brokers learn it."""
    c = _make_servers(1)
    c.create_topic("t", 1, assignment=[[0]])
    _expand_topic(c, "t", {0: [0], 1: [0]})
    _wait_for_partition_state(c, ("t", 1), FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH)
    _wait_for_partition_metadata(c, ("t", 1))


def test_topic_partition_expansion_with_offline_replica():
    """ControllerIntegrationTest.testTopicPartitionExpansionWithOfflineReplica: with the
    other broker (the preferred replica) down, the new t-1 [other, controller] is
    initialized with the controller as leader, at the initial leader epoch."""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    c.create_topic("t", 1, assignment=[[other, ctl]])
    _shutdown(c, other)
    _expand_topic(c, "t", {0: [other, ctl], 1: [other, ctl]})
    _wait_for_partition_state(c, ("t", 1), FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH)
    _wait_for_partition_metadata(c, ("t", 1))


def test_controller_context_kafka_named_entry_points():
    """ControllerContext @3.7.0 as PartitionStateMachineTest / ReplicaStateMachineTest set it
    up: setLiveBrokers, putPartitionLeadershipInfo / partitionLeadershipInfo,
    liveOrShuttingDownBrokerIds, allPartitions, partitionsInState."""
    h, psm, cc = _psm(live=())
    cc.set_live_brokers({BROKER_ID: 0, BROKER_ID + 1: 3})
    cc.shutting_down.append(BROKER_ID + 1)
    assert cc.live_broker_ids() == [BROKER_ID]
    assert cc.live_or_shutting_down_broker_ids() == [BROKER_ID, BROKER_ID + 1]
    cc.update_partition_full_replica_assignment(TP, ReplicaAssignment((BROKER_ID,)))
    assert cc.partition_leadership_info(TP) is None
    cc.put_partition_leadership_info(TP, (BROKER_ID, 0, [BROKER_ID]))
    assert cc.partition_leadership_info(TP) == (BROKER_ID, 0, (BROKER_ID,), 0)
    assert cc.all_partitions() == [TP]
    psm.initialize_partition_state()
    assert cc.partitions_in_state(OnlinePartition) == [TP]
    assert cc.partitions_in_state(OnlinePartition, "other") == []


# ================================= ReplicationControlManager: Kafka's lookups by their names


def test_create_topic_with_collision_chars_by_get_topic():
    """ReplicationControlManagerTest.testCreateTopicWithCollisionChars @4.3.0 through Kafka's
    accessors: getTopic(id).numPartitions is 2, then 4 for the topic recreated under a new
    id."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    initial = ctx.create_n("foo.bar", 2, 2)
    assert ctx.rc.get_topic(initial.topic_id).num_partitions(2**63 - 1) == 2
    records, error = ctx.rc.delete_topic(initial.topic_id, by_id=True)
    assert error == E.NONE
    ctx.replay(records)
    recreated = ctx.create_n("foo.bar", 4, 2)
    assert recreated.topic_id != initial.topic_id
    assert ctx.rc.get_topic(recreated.topic_id).num_partitions(2**63 - 1) == 4


def test_kafka_named_lookups():
    """ReplicationControlManager.getPartition / getTopic / getTopicId / brokersToIsrs() /
    brokersToElrs() @4.3.0, as ReplicationControlManagerTest calls them (getPartition(
    getTopicId("foo"), 5) in testCreatePartitions): an unknown partition is None, an unknown
    topic id raises UnknownTopicIdException, an unknown name
    UnknownTopicOrPartitionException."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    foo = ctx.create("foo", [[0, 1, 2]])
    rc = ctx.rc
    assert rc.get_topic_id("foo") == foo.topic_id
    assert rc.get_partition(rc.get_topic_id("foo"), 0) == rc.partition("foo", 0)
    assert rc.get_partition(foo.topic_id, 5) is None
    assert rc.get_partition("AAAAAAAAAAAAAAAAAAAAAA", 0) is None
    assert rc.get_topic(foo.topic_id).name == "foo"
    with pytest.raises(UnknownTopicIdException):
        rc.get_topic("AAAAAAAAAAAAAAAAAAAAAA")
    with pytest.raises(UnknownTopicOrPartitionException):
        rc.get_topic_id("bar")
    assert set(rc.brokers_to_isrs().partitions_with_broker_in_isr(0)) == set(
        rc.brokers_to_isrs.partitions_with_broker_in_isr(0))
    assert rc.brokers_to_elrs() is rc.brokers_to_isrs


def test_partition_change_builder_default_dir_provider_is_accepted():
    """PartitionChangeBuilderTest @4.3.0 chains ``setDefaultDirProvider(DEFAULT_DIR_PROVIDER)``
    on most builders (testEligibleLeaderReplicas_lastKnownElrShouldBePopulatedWhenNoLeader
    among them): accepted, and the record is the same as without it."""
    def build(with_provider):
        b = foo_builder("4.0-IV1", True).set_target_isr([2, 1])
        if with_provider:
            b = b.set_default_dir_provider(lambda uuid: None)
        return b.build()
    assert build(True) == build(False)


# ========================================== PartitionLeaderElectionAlgorithmsTest @3.7.0


def test_offline_partition_leader_election_by_kafka_names():
    """PartitionLeaderElectionAlgorithmsTest.testOfflinePartitionLeaderElection,
    ...LastIsrOfflineUncleanLeaderElectionDisabled and ...Enabled, through
    ``PartitionLeaderElectionAlgorithms`` and the context's ControllerStats: 4 (the live ISR
    member); None with the meter at 0; 4 uncleanly with the meter at 1."""
    algos = PartitionLeaderElectionAlgorithms
    cc = ControllerContext()
    assert algos.offline_partition_leader_election([2, 4], [2, 4], {4}, False, cc) == 4
    assert algos.offline_partition_leader_election([2, 4], [2], {4}, False, cc) is None
    assert cc.stats.unclean_leader_election_rate.count() == 0
    assert algos.offline_partition_leader_election([2, 4], [2], {4}, True, cc) == 4
    assert cc.stats.unclean_leader_election_rate.count() == 1


@pytest.mark.parametrize(("name", "args", "leader"), [
    # testReassignPartitionLeaderElection / ...WithNoLiveIsr / ...WithEmptyIsr
    ("reassign", ([2, 4], [2, 4], {4}), 4),
    ("reassign", ([2, 4], [2], set()), None),
    ("reassign", ([2, 4], [], {2}), None),
    # testPreferredReplicaPartitionLeaderElection / ...PreferredReplicaInIsrNotLive /
    # ...PreferredReplicaNotInIsrLive / ...PreferredReplicaNotInIsrNotLive
    ("preferred", ([2, 4], [2, 4], {2, 4}), 2),
    ("preferred", ([2, 4], [2], set()), None),
    ("preferred", ([2, 4], [4], {2, 4}), None),
    ("preferred", ([2, 4], [], set()), None),
    # testControlledShutdownPartitionLeaderElection / ...LastIsrShuttingDown /
    # ...AllIsrSimultaneouslyShutdown
    ("controlled_shutdown", ([2, 4], [2, 4], {2, 4}, {2}), 4),
    ("controlled_shutdown", ([2, 4], [2], {2, 4}, {2}), None),
    ("controlled_shutdown", ([2, 4], [2, 4], {2, 4}, {2, 4}), None),
])
def test_partition_leader_election_algorithms_by_kafka_names(name, args, leader):
    """The other ten PartitionLeaderElectionAlgorithmsTest cases @3.7.0, through
    ``PartitionLeaderElectionAlgorithms.<strategy>_partition_leader_election``."""
    method = {"reassign": "reassign_partition_leader_election",
              "preferred": "preferred_replica_partition_leader_election",
              "controlled_shutdown": "controlled_shutdown_partition_leader_election"}[name]
    assert getattr(PartitionLeaderElectionAlgorithms, method)(*args) == leader


def test_controller_unclean_election_marks_the_context_stats():
    """Election.leaderForOffline -> offlinePartitionLeaderElection @3.7.0: the controller's
    unclean election marks its ControllerContext's uncleanLeaderElectionRate."""
    h, psm, cc = _psm(live=(BROKER_ID,))
    h.put_partition(TP, [7, BROKER_ID], -1, [7])
    cc.put_partition_state(TP, OfflinePartition)
    psm.handle_state_changes(PARTITIONS, OnlinePartition,
                             OfflinePartitionLeaderElectionStrategy(True))
    assert h.state()["leader"] == BROKER_ID
    assert cc.stats.unclean_leader_election_rate.count() == 1
