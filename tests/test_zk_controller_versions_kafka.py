"""Kafka's ZooKeeper-mode controller tests at the older release tags, where their assertions differ
from the 3.7.0 ports of ``tests/test_controller_state_machines_kafka.py`` and
``tests/test_zk_controller_kafka.py`` (whose harnesses this file reuses).

Sources (apache/kafka, read at each named tag): ``core/src/test/scala/unit/kafka/controller/``
``PartitionStateMachineTest.scala`` and ``ReplicaStateMachineTest.scala`` (from 1.1.0, the
KAFKA-5642 controller rewrite), ``ControllerIntegrationTest.scala`` (from 1.0.0). The differences
between tags that the cases below pin down:

* 1.1.0 / 2.0.0: PartitionStateMachine.leaderForControlledShutdown sends the LeaderAndIsr to the
  online replicas only (isReplicaOnline leaves out the shutting-down broker); KAFKA-7482 (2.1.0)
  includes the shutting-down broker again, as the 1.0 ControlledShutdownLeaderSelector did.
* 1.1.0 - 2.2.0: an OfflineReplica transition of a partition without leadership info sends only
  the StopReplica (2.0.0 changes the replica's state, KAFKA-6650); KAFKA-3143 (2.3.0) adds an
  UpdateMetadata for it.
* before 2.2.0 (KIP-380) the control requests carry no broker epoch (-1); before 2.6.0 (KIP-570)
  StopReplica carries no leader epochs.
* 2.4.0 (KIP-460): OfflinePartitionLeaderElectionStrategy(allowUnclean = true) elects an
  out-of-sync replica without leader recovery state (KIP-704 is 3.2).

``kafka/integration/UncleanLeaderElectionTest.scala`` @0.10.2.0 and @0.11.0.0 runs with the
broker default of ``unclean.leader.election.enable`` (true until KIP-106, 0.11.0) and a pre-2.1
producer (no delivery.timeout.ms). Its testUncleanLeaderElectionDisabled @0.10.2.0 is not ported:
it expects leader -1 after the last ISR member, the controller, shuts down, which 0.10.2 did not
deliver (KAFKA-3096; the test is ``@Ignore``d from 0.11.0.0); so are testUncleanLeaderElection
Disabled and testCleanLeaderElectionDisabledByTopicOverride at 0.11.0.0.

The ControllerIntegrationTest ports wait for the controller to see a broker go before starting it
again (``_shutdown_seen``): before KIP-380 a restart the controller missed was not noticed.

The tests that only check state enums, ZooKeeperClientException, topic deletion and the
controller's metrics are left out for the reasons given in the 3.7.0 ports.
"""

from __future__ import annotations

import pytest
from test_controller_state_machines_kafka import (
    BROKER_ID,
    CONTROLLER_EPOCH,
    TP,
    UNCLEAN,
    _harness,
    _stop_replicas,
)
from test_zk_controller_kafka import (
    FIRST_CONTROLLER_EPOCH,
    INITIAL_LEADER_EPOCH,
    TIMEOUT_MS,
    TOPIC,
    _consume_all,
    _leader,
    _make_servers,
    _other,
    _shutdown,
    _startup,
    _unclean_meter,
    _wait_for_partition_state,
    _zk_preferred_election,
    _zk_reassign,
    _zk_state,
)

from kafkasim.control.zookeeper import partition_state_json, partition_state_path
from kafkasim.core.messages import (
    UNKNOWN_BROKER_EPOCH,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kafkasim.runtime.cluster import Cluster

OTHER = BROKER_ID + 1


# -- PartitionStateMachineTest @1.1.0 / 2.0.0 / 2.1.0 / 2.4.0 ------------------------------------
@pytest.mark.parametrize("version", ["1.1", "2.0", "2.2"])
def test_new_partition_to_online_partition_transition(version):
    """PartitionStateMachineTest.testNewPartitionToOnlinePartitionTransition @1.1.0 (@2.0.0,
    @2.2.0): createTopicPartitionStatesRaw with LeaderAndIsr(5, [5]) at the controller epoch,
    LeaderAndIsr (isNew) to 5. Before KIP-380 (2.2) the request has no broker epoch."""
    h = _harness(version=version)
    h.put_partition(TP, [BROKER_ID])
    h.ctl.on_new_topic(h.ctx, h.zk, "t")
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["controller_epoch"]) == (
        BROKER_ID, 0, [BROKER_ID], CONTROLLER_EPOCH)
    assert h.states_to(BROKER_ID) == [("t", 0, BROKER_ID, 0, (BROKER_ID,), 0, (BROKER_ID,))]
    epochs = [m.broker_epoch for _, m in h.sent(LeaderAndIsrRequest)]
    expected = h.ctl.context.broker_epochs[BROKER_ID] if version == "2.2" else UNKNOWN_BROKER_EPOCH
    assert epochs == [expected]


def test_new_partition_to_online_partition_transition_error_code_from_create_states():
    """PartitionStateMachineTest.testNewPartitionToOnlinePartitionTransitionErrorCodeFromCreate
    States @1.1.0: NODEEXISTS from createTopicPartitionStatesRaw: no LeaderAndIsr is added, the
    partition stays NewPartition (and is not cached)."""
    h = _harness(version="1.1")
    h.put_partition(TP, [BROKER_ID])
    h.zk.create(partition_state_path(*TP), partition_state_json(7, 3, [7], CONTROLLER_EPOCH - 1))
    h.ctl.on_new_topic(h.ctx, h.zk, "t")
    assert h.sent(LeaderAndIsrRequest) == []
    assert TP not in h.ctl.context.states
    assert h.state()["leader"] == 7


@pytest.mark.parametrize("version", ["1.1", "2.0"])
def test_online_partition_to_online_transition(version):
    """PartitionStateMachineTest.testOnlinePartitionToOnlineTransition @1.1.0 (@2.0.0):
    PreferredReplicaPartitionLeaderElectionStrategy re-elects the leading preferred replica:
    ``newLeader(5)`` (leader epoch + 1) is written and LeaderAndIsr goes to the assignment."""
    h = _harness(version=version)
    h.put_partition(TP, [BROKER_ID], BROKER_ID, [BROKER_ID])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "preferred") == [TP]
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (
        BROKER_ID, 1, [BROKER_ID], 1)
    assert h.states_to(BROKER_ID) == [("t", 0, BROKER_ID, 1, (BROKER_ID,), 1, (BROKER_ID,))]


@pytest.mark.parametrize(("version", "recipients"), [
    ("1.1", [OTHER]),
    ("2.0", [OTHER]),
    ("2.1", [BROKER_ID, OTHER]),   # KAFKA-7482
])
def test_online_partition_to_online_transition_for_controlled_shutdown(version, recipients):
    """PartitionStateMachineTest.testOnlinePartitionToOnlineTransitionForControlledShutdown
    @1.1.0 / @2.0.0 / @2.1.0: 5 leads [5, 6] and is shutting down; ``newLeaderAndIsr(6, [6])``
    is written. At 1.1.0 and 2.0.0 leaderForControlledShutdown's recipients are the online
    replicas, so only 6 gets the LeaderAndIsr
    (``addLeaderAndIsrRequestForBrokers(Seq(otherBrokerId), ...)``); from 2.1.0 (KAFKA-7482)
    also the shutting-down 5 (``Seq(brokerId, otherBrokerId)``)."""
    h = _harness(live=(BROKER_ID, OTHER), shutting_down=(BROKER_ID,), version=version)
    h.put_partition(TP, [BROKER_ID, OTHER], BROKER_ID, [BROKER_ID, OTHER])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "controlled_shutdown") == [TP]
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (OTHER, 1, [OTHER], 1)
    assert h.recipients(LeaderAndIsrRequest) == recipients
    for b in recipients:
        assert h.states_to(b) == [("t", 0, OTHER, 1, (OTHER,), 1, (BROKER_ID, OTHER))]
    # addLeaderAndIsrRequestForBrokers adds UpdateMetadata for every live or shutting-down broker
    assert h.recipients(UpdateMetadataRequest) == [BROKER_ID, OTHER]


@pytest.mark.parametrize("version", ["1.1", "2.0"])
def test_offline_partition_to_online_partition_transition(version):
    """PartitionStateMachineTest.testOfflinePartitionToOnlinePartitionTransition @1.1.0 (@2.0.0):
    LeaderAndIsr(NoLeader, [5]) with 5 live: OfflinePartitionLeaderElectionStrategy elects 5
    (``newLeaderAndIsr(5, [5])``), leader epoch + 1, no unclean election."""
    h = _harness(version=version)
    h.put_partition(TP, [BROKER_ID], -1, [BROKER_ID])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline") == [TP]
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (
        BROKER_ID, 1, [BROKER_ID], 1)
    assert h.states_to(BROKER_ID) == [("t", 0, BROKER_ID, 1, (BROKER_ID,), 1, (BROKER_ID,))]
    assert h.ctx.meters[UNCLEAN] == 0


def test_offline_partition_to_online_partition_transition_error_code_from_state_lookup():
    """PartitionStateMachineTest.testOfflinePartitionToOnlinePartitionTransitionErrorCodeFrom
    StateLookup @1.1.0: getTopicPartitionStatesRaw answers NONODE: the election fails
    (StateChangeFailedException), nothing is written or sent."""
    h = _harness(version="1.1")
    h.put_partition(TP, [BROKER_ID], -1, [BROKER_ID])
    h.zk.delete(partition_state_path(*TP))
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline") == []
    assert h.sent(LeaderAndIsrRequest) == []
    assert h.state() is None


def test_offline_partition_to_unclean_online_partition_transition_at_2_4():
    """PartitionStateMachineTest.testOfflinePartitionToUncleanOnlinePartitionTransition @2.4.0
    (new with KIP-460's OfflinePartitionLeaderElectionStrategy(allowUnclean = true)): leader 6,
    ISR [6], replicas [6, 5], only 5 live: 5 is elected with ISR [5]
    (``newLeaderAndIsr(brokerId, List(brokerId))``, no leader recovery state before 3.2),
    LeaderAndIsr to 5, the unclean meter marked once."""
    h = _harness(version="2.4")
    h.put_partition(TP, [OTHER, BROKER_ID], OTHER, [OTHER])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "unclean") == [TP]
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (
        BROKER_ID, 1, [BROKER_ID], 1)
    assert "leader_recovery_state" not in st
    assert h.recipients(LeaderAndIsrRequest) == [BROKER_ID]
    assert h.ctx.meters[UNCLEAN] == 1


def test_offline_partition_stays_offline_when_unclean_is_off_at_1_1():
    """PartitionStateMachine.leaderForOffline @1.1.0 (the 1.1 form of testOfflinePartitionTo
    UncleanOnlinePartitionTransition's setup, with the topic's default config): ISR [6] dead,
    5 live but out of sync, unclean.leader.election.enable false (the default since 0.11.0,
    KIP-106): no leader, nothing written or sent."""
    h = _harness(version="1.1")
    h.put_partition(TP, [OTHER, BROKER_ID], OTHER, [OTHER])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline") == []
    assert h.state()["leader_epoch"] == 0
    assert h.ctx.sent == []


# -- ReplicaStateMachineTest @1.1.0 / 2.0.0 / 2.2.0 / 2.6.0 --------------------------------------
@pytest.mark.parametrize(("version", "broker_epoch", "leader_epochs"), [
    ("1.1", False, ()),
    ("2.2", True, ()),      # KIP-380: StopReplica v1 carries the broker epoch
    ("2.6", True, (0,)),    # KIP-570: StopReplica v3 carries each partition's leader epoch
])
def test_online_replica_to_offline_replica_transition(version, broker_epoch, leader_epochs):
    """ReplicaStateMachineTest.testOnlineReplicaToOfflineReplicaTransition @1.1.0 / @2.2.0 /
    @2.6.0: replicas [5, 6], leader 5, ISR [5, 6]; 5 goes offline: StopReplica
    (deletePartition = false) to 5, ``newLeaderAndIsr(NoLeader, [6])`` written, LeaderAndIsr to
    6 only, partitionLeadershipInfo updated. The StopReplica's fields follow the tag."""
    h = _harness(live=(BROKER_ID, OTHER), version=version)
    h.put_partition(TP, [BROKER_ID, OTHER], BROKER_ID, [BROKER_ID, OTHER])
    h.ctl.offline_replica(h.ctx, h.zk, BROKER_ID, [TP])
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (-1, 1, [OTHER], 1)
    assert _stop_replicas(h, BROKER_ID) == [((TP,), False)]
    assert h.recipients(LeaderAndIsrRequest) == [OTHER]
    assert h.states_to(OTHER) == [("t", 0, -1, 1, (OTHER,), 1, (BROKER_ID, OTHER))]
    assert h.ctl.context.states[TP] == (-1, 1, (OTHER,), 1)
    [(_, stop)] = h.sent(StopReplicaRequest)
    expected = h.ctl.context.broker_epochs[BROKER_ID] if broker_epoch else UNKNOWN_BROKER_EPOCH
    assert stop.broker_epoch == expected
    assert tuple(stop.leader_epochs) == leader_epochs


@pytest.mark.parametrize(("version", "update_metadata"), [
    ("1.1", False),
    ("2.0", False),   # KAFKA-6650: the replica goes OfflineReplica, still no UpdateMetadata
    ("2.3", True),    # KAFKA-3143
])
def test_new_replica_to_offline_replica_transition(version, update_metadata):
    """ReplicaStateMachineTest.testNewReplicaToOfflineReplicaTransition @1.1.0 / @2.0.0 /
    @2.3.0: a replica of a partition without leadership info goes offline: StopReplica
    (deletePartition = false) to 5, nothing read from or written to ZooKeeper. Before 2.3.0 the
    mocked batch expects nothing else; from 2.3.0 (KAFKA-3143) an UpdateMetadata for the
    partition goes to the live brokers."""
    h = _harness(version=version)
    h.ctl.offline_replica(h.ctx, h.zk, BROKER_ID, [TP])
    assert _stop_replicas(h, BROKER_ID) == [((TP,), False)]
    assert h.recipients(UpdateMetadataRequest) == ([BROKER_ID] if update_metadata else [])
    assert h.sent(LeaderAndIsrRequest) == []
    assert h.state() is None


@pytest.mark.parametrize("version", ["1.1", "2.0"])
def test_offline_replica_to_online_replica_transition(version):
    """ReplicaStateMachineTest.testOfflineReplicaToOnlineReplicaTransition @1.1.0 (@2.0.0), as
    Kafka reaches it (onBrokerStartup): broker 6 registers again and gets LeaderAndIsr with the
    current leadership info (isNew = false); nothing is written to ZooKeeper."""
    h = _harness(live=(BROKER_ID,), version=version)
    h.put_partition(TP, [BROKER_ID, OTHER], BROKER_ID, [BROKER_ID], leader_epoch=2)
    h.zk.create(f"/brokers/ids/{OTHER}", "{}")
    h.ctl.on_broker_change(h.ctx, h.zk)
    assert h.recipients(LeaderAndIsrRequest) == [OTHER]
    assert h.states_to(OTHER) == [("t", 0, BROKER_ID, 2, (BROKER_ID,), 0, (BROKER_ID, OTHER))]
    assert (h.state()["leader_epoch"], h.state()["zk_version"]) == (2, 0)


# -- ControllerIntegrationTest @1.0.0 / 1.1.0 / 2.2.0 --------------------------------------------
OLD = "1.1"


def _shutdown_seen(c, broker: int) -> None:
    """KafkaServer.shutdown + awaitShutdown, then the controller's BrokerChange handling of it.
    A real broker takes far longer to start again than the controller takes to see its
    registration go; kafkasim's brokers start at once, so the ports wait for the controller
    first. Before KIP-380 (2.2) a controller that only saw the new registration would not
    notice the restart at all (the broker would stay in shuttingDownBrokerIds)."""
    _shutdown(c, broker)
    assert c.run_until(lambda cl: broker not in cl.zk_control_plane.controller_broker()
                       .controller.context.live_brokers, TIMEOUT_MS)


def _preferred_replica_leader_election(c, ctl: int, other: int, tp, replicas,
                                       leader_epoch: int) -> None:
    """ControllerIntegrationTest.preferredReplicaLeaderElection: the preferred replica shuts
    down (the controller leads, epoch + 1), comes back into the ISR, and a preferred election
    makes it lead again (epoch + 2)."""
    _shutdown_seen(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, leader_epoch + 1)
    _startup(c, other)
    assert c.run_until(lambda cl: set(cl.isr(*tp)) == set(replicas), TIMEOUT_MS)
    _zk_preferred_election(c, [tp])
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, leader_epoch + 2)


def _reassigning(c, tp) -> bool:
    """zkUtils.pathExists(ReassignPartitionsPath) for ``tp``: the controller still holds the
    partition's reassignment (partitionsBeingReassigned)."""
    return tp in c.zk_control_plane.controller_broker().controller.context.reassigning


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_topic_creation_with_offline_replica(version):
    """ControllerIntegrationTest.testTopicCreationWithOfflineReplica @1.0.0 / @1.1.0: assignment
    [other, controller] with the other broker down: the controller leads at the initial leader
    epoch, written by controller epoch 1 (KafkaController.InitialControllerEpoch at 1.x)."""
    c = _make_servers(2, version=version)
    ctl = c.controller_id()
    other = _other(c, ctl)
    _shutdown(c, other)
    c.create_topic("t", 1, assignment=[[other, ctl]], wait=False)
    _wait_for_partition_state(c, ("t", 0), FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH)


@pytest.mark.parametrize("version", ["1.1", "2.2"])
def test_partition_reassignment(version):
    """ControllerIntegrationTest.testPartitionReassignment @1.1.0 (@2.2.0), before KIP-455: the
    partition on the controller moves to the other broker, which leads at the initial leader
    epoch + 3 (the old onPartitionReassignment's epoch bump, the reassign election, the removal
    of the old replica); the topic znode holds the target and the reassignment is gone."""
    c = _make_servers(2, version=version)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[ctl]])
    _zk_reassign(c, {tp: [other]})
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH + 3)
    assert c.run_until(lambda cl: cl.assignment("t") == {0: [other]}, TIMEOUT_MS)
    assert c.run_until(lambda cl: not _reassigning(cl, tp), TIMEOUT_MS)


def test_partition_reassignment_with_offline_replica_halting_progress():
    """ControllerIntegrationTest.testPartitionReassignmentWithOfflineReplicaHaltingProgress
    @1.1.0: the reassignment to the broker that is down bumps the leader epoch once and stays
    in progress (/admin/reassign_partitions remains)."""
    c = _make_servers(2, version=OLD)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[ctl]])
    _shutdown(c, other)
    _zk_reassign(c, {tp: [other]})
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH + 1)
    assert _reassigning(c, tp)
    assert c.assignment("t") == {0: [ctl, other]} or c.assignment("t") == {0: [other, ctl]}


def test_partition_reassignment_resumes_after_replica_comes_online():
    """ControllerIntegrationTest.testPartitionReassignmentResumesAfterReplicaComesOnline @1.1.0:
    as above, then the target starts; the reassignment completes with the target leading at the
    initial leader epoch + 4."""
    c = _make_servers(2, version=OLD)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[ctl]])
    _shutdown_seen(c, other)
    _zk_reassign(c, {tp: [other]})
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH + 1)
    _startup(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH + 4)
    assert c.run_until(lambda cl: cl.assignment("t") == {0: [other]}, TIMEOUT_MS)
    assert c.run_until(lambda cl: not _reassigning(cl, tp), TIMEOUT_MS)


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_preferred_replica_leader_election(version):
    """ControllerIntegrationTest.testPreferredReplicaLeaderElection @1.0.0 / @1.1.0: the
    preferred replica shuts down (the controller leads, epoch + 1), rejoins the ISR, and the
    preferred election through /admin/preferred_replica_election makes it lead (epoch + 2)."""
    c = _make_servers(2, version=version)
    ctl = c.controller_id()
    other = _other(c, ctl)
    c.create_topic("t", 1, assignment=[[other, ctl]])
    _preferred_replica_leader_election(c, ctl, other, ("t", 0), [other, ctl],
                                       INITIAL_LEADER_EPOCH)


def test_back_to_back_preferred_replica_leader_elections():
    """ControllerIntegrationTest.testBackToBackPreferredReplicaLeaderElections @1.1.0 (new in
    1.1.0): twice in a row, epochs 1-2 then 3-4."""
    c = _make_servers(2, version=OLD)
    ctl = c.controller_id()
    other = _other(c, ctl)
    c.create_topic("t", 1, assignment=[[other, ctl]])
    for epoch in (INITIAL_LEADER_EPOCH, INITIAL_LEADER_EPOCH + 2):
        _preferred_replica_leader_election(c, ctl, other, ("t", 0), [other, ctl], epoch)


def test_preferred_replica_leader_election_with_offline_preferred_replica():
    """ControllerIntegrationTest.testPreferredReplicaLeaderElectionWithOfflinePreferredReplica
    @1.1.0: the preferred replica is down: the election does not happen and the controller keeps
    leading at epoch + 1."""
    c = _make_servers(2, version=OLD)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[other, ctl]])
    _shutdown(c, other)
    _zk_preferred_election(c, [tp])
    c.run(1000)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH + 1)


@pytest.mark.parametrize("version", ["1.0", "1.1"])
def test_auto_preferred_replica_leader_election(version):
    """ControllerIntegrationTest.testAutoPreferredReplicaLeaderElection @1.0.0 / @1.1.0: with
    auto.leader.rebalance.enable the preferred replica leads again once it is back (epoch + 2)."""
    c = _make_servers(2, auto_rebalance=True, version=version)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[other, ctl]])
    _shutdown_seen(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH + 1)
    _startup(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH + 2)


@pytest.mark.parametrize("version", ["1.0", "1.1"])
@pytest.mark.parametrize("unclean", [False, True])
def test_leader_and_isr_when_entire_isr_offline(version, unclean):
    """ControllerIntegrationTest.testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElection
    {Disabled,Enabled} @1.0.0 / @1.1.0: the only replica shuts down: NoLeader at epoch + 1 and
    the ISR keeps it (List(otherBrokerId))."""
    c = _make_servers(2, unclean=unclean, version=version)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[other]])
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH)
    _shutdown(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, -1, INITIAL_LEADER_EPOCH + 1)
    assert _zk_state(c, tp)["isr"] == [other]


def test_controller_detects_bounced_brokers_at_2_2():
    """ControllerIntegrationTest.testControllerDetectsBouncedBrokers @2.2.0 (new with KIP-380):
    the other broker restarts before the controller handles the broker change; the new broker
    epoch makes the controller handle it as failed and started: it hosts the partition again
    and knows both brokers."""
    c = _make_servers(2, version="2.2", config={"controlled.shutdown.enable": False})
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[0, 1]])
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH)
    c.pause(ctl, 50)
    c.shutdown(other)
    _startup(c, other)
    assert c.run_until(lambda cl: tp in cl.brokers[other].replica_manager.partitions
                       and len(cl.brokers[other].metadata.live_brokers) == 2, TIMEOUT_MS)


def test_metadata_propagation_on_broker_change_at_2_2():
    """ControllerIntegrationTest.testMetadataPropagationOnBrokerChange @2.2.0 (new in 2.2.0): a
    follower shuts down; the remaining brokers list it as partition 0's offline replica (ISR the
    other replica), partition 1 without offline replicas; once it is back no broker lists one."""
    c = _make_servers(3, version="2.2")
    ctl = c.controller_id()
    test_broker = _other(c, ctl)
    remaining = [b for b in sorted(c.brokers) if b != test_broker]
    assignment = {0: [remaining[0], test_broker], 1: remaining}
    c.create_topic("topic1", 2, assignment=[assignment[0], assignment[1]])
    _shutdown(c, test_broker)
    c.run(100)
    for b in remaining:
        info = c.brokers[b].metadata.partitions[("topic1", 0)]
        assert list(info.offline_replicas) == [test_broker]
        assert list(info.replicas) == assignment[0]
        assert list(info.isr) == [remaining[0]]
        assert not c.brokers[b].metadata.partitions[("topic1", 1)].offline_replicas
    _startup(c, test_broker)

    def consistent(cl):
        return all(("topic1", p) in cl.brokers[b].metadata.partitions
                   and not cl.brokers[b].metadata.partitions[("topic1", p)].offline_replicas
                   for b in cl.brokers for p in assignment)
    assert c.run_until(consistent, TIMEOUT_MS)


# -- kafka.integration.UncleanLeaderElectionTest @0.10.2.0 / 0.11.0.0 ----------------------------
def _start_brokers(version: str, config: dict | None = None) -> Cluster:
    """UncleanLeaderElectionTest.startBrokers: brokers 0 and 1, controlled shutdown with one
    attempt and a 1 s back-off, the test's ``unclean.leader.election.enable`` if it sets one."""
    return Cluster([0, 1], seed=1, kafka_version=version, config={
        "controlled.shutdown.enable": True, "controlled.shutdown.max.retries": 1,
        "controlled.shutdown.retry.backoff.ms": 1000, **(config or {})})


def _produce(c: Cluster, value: str, *, timeout_ms: int = 20_000) -> str:
    """produceMessage (acks=all) with a pre-2.1 producer: no delivery.timeout.ms (KIP-91), a
    batch expires after request.timeout.ms."""
    r = c.producer(acks="all", request_timeout_ms=timeout_ms).send(TOPIC, value, partition=0)
    c.run_until(lambda cl: r.status != "pending", timeout_ms + 5_000)
    return r.status


def _lose_the_leader(c: Cluster) -> tuple[int, int, int]:
    """The first half of verifyUncleanLeaderElectionEnabled: "first" reaches both
    replicas, the follower shuts down, "second" reaches the leader only, the leader shuts down
    and the follower starts again. Returns (old leader, follower, unclean meter before)."""
    leader = _leader(c)
    follower = 1 - leader
    assert _produce(c, "first") == "acked"
    assert _consume_all(c, 1) == ["first"]
    _shutdown(c, follower)
    assert _produce(c, "second") == "acked"
    assert _consume_all(c, 2) == ["first", "second"]
    before = _unclean_meter(c)
    _shutdown(c, leader)
    _startup(c, follower)
    return leader, follower, before


def _verify_unclean_leader_election_enabled(c: Cluster) -> None:
    """verifyUncleanLeaderElectionEnabled: the follower is elected uncleanly; "second" is
    lost."""
    _leader_was, follower, before = _lose_the_leader(c)
    assert c.run_until(lambda cl: _leader(cl) == follower, TIMEOUT_MS)
    assert _unclean_meter(c) - before == 1
    assert _produce(c, "third") == "acked"
    assert _consume_all(c, 2) == ["first", "third"]


def test_unclean_leader_election_enabled_by_default_at_0_10_2():
    """UncleanLeaderElectionTest.testUncleanLeaderElectionEnabled @0.10.2.0: "unclean leader
    election is enabled by default" (the broker default is true until KIP-106, 0.11.0): with no
    setting the out-of-sync follower is elected and the record only the old leader had is
    lost. The restarted follower is first told to follow the dead old leader, which its metadata
    cache does not list alive: makeFollowers' `case None` leaves it untruncated, so "first"
    survives."""
    c = _start_brokers("0.10.2")
    c.create_topic(TOPIC, 1, assignment=[[0, 1]])
    _verify_unclean_leader_election_enabled(c)


def test_unclean_leader_election_enabled_at_0_11_0():
    """UncleanLeaderElectionTest.testUncleanLeaderElectionEnabled @0.11.0.0: the default is now
    false (KIP-106), so the test enables it on both brokers."""
    c = _start_brokers("0.11.0", {"unclean.leader.election.enable": True})
    c.create_topic(TOPIC, 1, assignment=[[0, 1]])
    _verify_unclean_leader_election_enabled(c)


def test_unclean_leader_election_enabled_by_topic_override_at_0_11_0():
    """UncleanLeaderElectionTest.testUncleanLeaderElectionEnabledByTopicOverride @0.11.0.0: off
    for the brokers, on for the topic: the topic's setting wins."""
    c = _start_brokers("0.11.0", {"unclean.leader.election.enable": False})
    c.create_topic(TOPIC, 1, assignment=[[0, 1]], config={"unclean.leader.election.enable": True})
    _verify_unclean_leader_election_enabled(c)
