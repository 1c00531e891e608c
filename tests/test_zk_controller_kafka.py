"""Kafka's ZooKeeper-mode controller tests, ported: the cluster-level ones through ``Cluster``,
the unit-level ones against ``KafkaController`` and ``ControllerContext``.

Sources (apache/kafka, tag 3.7.0; trunk 1eb7644 for the KRaft half of UncleanLeaderElectionTest):
``core/src/test/scala/unit/kafka/controller/ControllerIntegrationTest.scala``,
``ControllerContextTest.scala``, what ``ControllerChannelManagerTest.scala`` has beyond
``tests/test_controller_state_machines_kafka.py`` (whose harness this file reuses),
``core/src/test/scala/unit/kafka/integration/UncleanLeaderElectionTest.scala`` (ZooKeeper mode at
3.7; KRaft as trunk runs it, with the controllers' ``unclean.leader.election.interval.ms`` at 10
ms, on kafkasim's 3.9 profile: 3.7's KRaft controller had no such retry) and
``DynamicBrokerReconfigurationTest.testUncleanLeaderElectionEnable``.

How the tests are adapted. ``makeServers(n)`` is a ``Cluster`` of brokers 0..n-1 (controlled
shutdown on, auto rebalance and unclean election as the test asks,
``leader.imbalance.check.interval.seconds`` 1); ``waitForPartitionState`` runs the simulation
until the state znode holds the controller epoch, leader and leader epoch (like Kafka's polling it
passes on a state the znode goes through). Kafka writes /admin/reassign_partitions and
/admin/preferred_replica_election; kafkasim keeps no such znodes, so the tests hand their content
to the controller event their watch fires (``zk_reassignments``: processZkPartitionReassignment,
whose targets are not validated, unlike the AlterPartitionReassignments API;
``zk_preferred_election``: processReplicaLeaderElection(ZkTriggered)). ``testControllerMove*``
hold the controller's event thread with a pause of its broker. AlterPartition requests are given
to the controller's processAlterPartition directly (``alterPartitionFuture``).

Ported elsewhere, not repeated here: testTopicPartitionExpansion(WithOfflineReplica)
(``tests/test_elect_s24_kafka.py``); testControlledShutdown and
testControllerRejectControlledShutdownRequestWithStaleBrokerEpoch (``tests/test_controller.py``);
testPartitionReassignment through the API (``tests/test_reassignment.py``; here through
/admin/reassign_partitions).

Left out, because kafkasim has no such feature: testMetadataPropagationOnControlPlane (listeners,
network metrics), testPartitionReassignmentToBrokerWithOfflineLogDir (no log dirs failing),
testControllerMoveOnTopicDeletion and every topic-deletion test (ZooKeeper-mode topic deletion
is not modelled),
testControllerFeatureZNodeSetup* (no /feature znode), testPreemption* (the controller's event
thread and its callbacks), testAlterPartitionVersion2KeepWorkingWhenControllerDowngradeToPre28IBP,
testTopicIdCreatedOnUpgrade* and testTopicIdUpgradeAfterReassigningPartitions (no IBP upgrade:
a cluster's topics have ids from creation on, 2.8+, so KafkaZkClient.setTopicIds is not modelled),
the addPartitions and deleteTopic halves of testTopicIdMigrationAndHandling(WithOlderVersion),
the timer metric of testPartitionReassignment, the
UNKNOWN_TOPIC_ID case of testAlterPartitionErrors and the AlterPartition API versions (requests
carry no version: OPERATION_NOT_ATTEMPTED for v0-1 of testShutdownBrokerNotAddedToIsr is not
ported); ControllerContextTest.testPreferredReplicaImbalanceMetricOnConcurrentTopicDeletion and the
topic-deletion steps of testPreferredReplicaImbalanceMetric; of ControllerChannelManagerTest the
request versions (but for the topic ids and leader recovery state they carry), response
callbacks, ``isNew`` (LeaderAndIsr v1+; kafkasim's brokers have no log dirs for it to
matter), its merging of StopReplica delete and non-delete entries in one batch
(testStopReplicaRequestWithAlreadyDefinedDeletedPartition,
testMixedDeleteAndNotDeleteStopReplicaRequests: kafkasim sends each StopReplica as its state
machine step asks, with no request batch), and the topic-deletion tests.
"""

from __future__ import annotations

import json

import pytest
from test_controller_state_machines_kafka import BAR1, CHANNEL_STATES, FOO0, FOO1, _harness

from kafkasim.control.controller_context import ControllerContext, ReplicaAssignment
from kafkasim.control.kraft.records import LeaderRecoveryState
from kafkasim.control.zookeeper import partition_state_path
from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core.messages import (
    ZERO_UUID,
    AlterPartitionRequest,
    AlterPartitionResponse,
    LeaderAndIsrRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.config import ConfigError

RECOVERING = LeaderRecoveryState.RECOVERING

FIRST_CONTROLLER_EPOCH = 1   # KafkaController.InitialControllerEpoch + 1
INITIAL_LEADER_EPOCH = 0     # LeaderAndIsr.InitialLeaderEpoch
TIMEOUT_MS = 60_000


def _make_servers(n: int, *, auto_rebalance: bool = False, unclean: bool = False,
                  version: str = "3.7", config: dict | None = None) -> Cluster:
    """ControllerIntegrationTest.makeServers: brokers 0..n-1, controlled shutdown on,
    auto.leader.rebalance.enable and unclean.leader.election.enable as asked,
    leader.imbalance.check.interval.seconds=1."""
    c = Cluster(list(range(n)), seed=1, kafka_version=version, config={
        "auto.leader.rebalance.enable": auto_rebalance,
        "unclean.leader.election.enable": unclean,
        "leader.imbalance.check.interval.seconds": 1, **(config or {})})
    assert c.run_until(lambda cl: cl.controller_id() >= 0, TIMEOUT_MS)
    return c


def _zk_state(c: Cluster, tp) -> dict | None:
    node = c.zk.get(partition_state_path(*tp))
    return None if node is None else {**node.json(), "zk_version": node.version}


def _controller_epoch(c: Cluster) -> int:
    return int(c.zk.get("/controller_epoch").data)


def _wait_for_partition_state(c: Cluster, tp, controller_epoch: int, leader: int,
                              leader_epoch: int) -> None:
    """waitForPartitionState: the state znode holds (controller epoch, leader, leader epoch)."""
    def ok(cl):
        st = _zk_state(cl, tp)
        return st is not None and (st["controller_epoch"], st["leader"], st["leader_epoch"]) == (
            controller_epoch, leader, leader_epoch)
    assert c.run_until(ok, TIMEOUT_MS), _zk_state(c, tp)


def _shutdown(c: Cluster, broker: int) -> None:
    """KafkaServer.shutdown (controlled) + awaitShutdown."""
    c.shutdown(broker)
    assert c.run_until(lambda cl: cl.brokers[broker].state == "stopped", TIMEOUT_MS)


def _startup(c: Cluster, broker: int) -> None:
    assert c.start(broker)


def _other(c: Cluster, *exclude: int) -> int:
    return next(b for b in sorted(c.brokers) if b not in exclude)


# -- ControllerIntegrationTest (3.7.0) ------------------------------------------------------------
def test_empty_cluster():
    """testEmptyCluster: one broker elects itself controller at epoch 1."""
    c = _make_servers(1)
    assert c.controller_id() == 0
    assert _controller_epoch(c) == FIRST_CONTROLLER_EPOCH


def test_controller_epoch_persists_when_all_brokers_down():
    """testControllerEpochPersistsWhenAllBrokersDown: /controller goes with the last broker,
    /controller_epoch stays."""
    c = _make_servers(1)
    _shutdown(c, 0)
    assert c.run_until(lambda cl: not cl.zk.exists("/controller"), TIMEOUT_MS)
    assert _controller_epoch(c) == FIRST_CONTROLLER_EPOCH


def test_controller_move_increments_controller_epoch():
    """testControllerMoveIncrementsControllerEpoch: the restarted broker is controller again, at
    epoch 2."""
    c = _make_servers(1)
    _shutdown(c, 0)
    _startup(c, 0)
    assert c.run_until(lambda cl: cl.controller_id() == 0, TIMEOUT_MS)
    assert _controller_epoch(c) == FIRST_CONTROLLER_EPOCH + 1


def test_metadata_propagation_on_broker_shutdown_with_no_replicas():
    """testMetadataPropagationOnBrokerShutdownWithNoReplicas: after the other two brokers shut
    down, the controller's metadata cache lists itself alone as alive."""
    c = _make_servers(3)
    ctl = c.controller_id()
    replica = _other(c, ctl)
    other = _other(c, ctl, replica)
    c.create_topic("topic1", 1, assignment=[[replica]])
    _shutdown(c, replica)
    _shutdown(c, other)
    assert c.run_until(lambda cl: cl.brokers[ctl].metadata.live_brokers == (ctl,), TIMEOUT_MS)


def test_topic_creation():
    """testTopicCreation: the state znode of a new partition: leader 0 at the initial leader
    epoch, written by the first controller epoch."""
    c = _make_servers(1)
    c.create_topic("t", 1, assignment=[[0]])
    _wait_for_partition_state(c, ("t", 0), FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH)


def test_topic_creation_with_offline_replica():
    """testTopicCreationWithOfflineReplica: assignment [other, controller] with the other broker
    down: the controller leads at the initial leader epoch."""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    _shutdown(c, other)
    c.create_topic("t", 1, assignment=[[other, ctl]], wait=False)
    _wait_for_partition_state(c, ("t", 0), FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH)


def test_partition_reassignment_with_offline_replica_halting_progress():
    """testPartitionReassignmentWithOfflineReplicaHaltingProgress: the partition on the
    controller is reassigned (through /admin/reassign_partitions, which validateReplicas does not
    check) to the broker that is down: A1 bumps the leader epoch once, and the reassignment stays
    in progress."""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[ctl]])
    _shutdown(c, other)
    _zk_reassign(c, {tp: [other]})
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH + 1)
    assert tp in c.admin().list_partition_reassignments()


def test_partition_reassignment_resumes_after_replica_comes_online():
    """testPartitionReassignmentResumesAfterReplicaComesOnline: as above, then the target
    starts: onBrokerStartup resumes the reassignment (A1 again), which completes: the target
    leads at the initial leader epoch + 4 and the topic znode holds the target."""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[ctl]])
    _shutdown(c, other)
    _zk_reassign(c, {tp: [other]})
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH + 1)
    _startup(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH + 4)
    assert c.run_until(lambda cl: cl.assignment("t") == {0: [other]}, TIMEOUT_MS)
    assert c.run_until(lambda cl: not cl.admin().list_partition_reassignments(), TIMEOUT_MS)


def _preferred_replica_leader_election(c: Cluster, ctl: int, other: int, tp, replicas,
                                       leader_epoch: int) -> None:
    """preferredReplicaLeaderElection: the preferred replica shuts down (the controller leads,
    epoch + 1), comes back into the ISR, and a preferred election makes it lead again
    (epoch + 2)."""
    _shutdown(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, leader_epoch + 1)
    _startup(c, other)
    assert c.run_until(lambda cl: set(cl.isr(*tp)) == set(replicas), TIMEOUT_MS)
    _zk_preferred_election(c, [tp])
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, leader_epoch + 2)


def test_preferred_replica_leader_election():
    """testPreferredReplicaLeaderElection."""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    c.create_topic("t", 1, assignment=[[other, ctl]])
    _preferred_replica_leader_election(c, ctl, other, ("t", 0), [other, ctl],
                                       INITIAL_LEADER_EPOCH)


def test_back_to_back_preferred_replica_leader_elections():
    """testBackToBackPreferredReplicaLeaderElections: twice in a row, epochs 1-2 then 3-4."""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    c.create_topic("t", 1, assignment=[[other, ctl]])
    for epoch in (INITIAL_LEADER_EPOCH, INITIAL_LEADER_EPOCH + 2):
        _preferred_replica_leader_election(c, ctl, other, ("t", 0), [other, ctl], epoch)


def test_preferred_replica_leader_election_with_offline_preferred_replica():
    """testPreferredReplicaLeaderElectionWithOfflinePreferredReplica: the preferred replica is
    down; the election gives up and the controller keeps leading at epoch + 1."""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[other, ctl]])
    _shutdown(c, other)
    assert _zk_preferred_election(c, [tp]) == {tp: "PREFERRED_LEADER_NOT_AVAILABLE"}
    c.run(1000)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH + 1)


def test_auto_preferred_replica_leader_election():
    """testAutoPreferredReplicaLeaderElection: with auto.leader.rebalance.enable the preferred
    replica leads again by itself once it is back (epoch + 2)."""
    c = _make_servers(2, auto_rebalance=True)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[other, ctl]])
    _shutdown(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH + 1)
    _startup(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH + 2)


def test_auto_preferred_replica_leader_election_with_other_reassigning_partitions():
    """testAutoPreferredReplicaLeaderElectionWithOtherReassigningPartitions: a stuck
    reassignment of another partition does not stop the auto rebalance; once its target is back
    the reassignment completes (epoch + 4)."""
    c = _make_servers(3, auto_rebalance=True)
    ctl = c.controller_id()
    leader = _other(c, ctl)
    other = _other(c, ctl, leader)
    tp, rtp = ("t", 0), ("reassigning", 0)
    c.create_topic("t", 1, assignment=[[leader, ctl]])
    c.create_topic("reassigning", 1, assignment=[[ctl]])
    _shutdown(c, leader)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH + 1)
    _shutdown(c, other)
    _zk_reassign(c, {rtp: [other]})
    _wait_for_partition_state(c, rtp, FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH + 1)
    _startup(c, leader)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, leader, INITIAL_LEADER_EPOCH + 2)
    _startup(c, other)
    _wait_for_partition_state(c, rtp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH + 4)
    assert c.run_until(lambda cl: cl.assignment("reassigning") == {0: [other]}, TIMEOUT_MS)
    assert c.run_until(lambda cl: not cl.admin().list_partition_reassignments(), TIMEOUT_MS)


def test_auto_preferred_replica_leader_election_with_same_partition_being_reassigned():
    """testAutoPreferredReplicaLeaderElectionWithSamePartitionBeingReassigned: [ctl, leader] is
    reassigned to [leader, ctl, other] with other down; the auto rebalance makes leader (the
    head of RS) lead (epoch + 2) while the reassignment waits; once other is back it completes
    (epoch + 3 on the way)."""
    c = _make_servers(3, auto_rebalance=True)
    ctl = c.controller_id()
    leader = _other(c, ctl)
    other = _other(c, ctl, leader)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[ctl, leader]])
    _shutdown(c, other)
    _zk_reassign(c, {tp: [leader, ctl, other]})
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, leader, INITIAL_LEADER_EPOCH + 2)
    _startup(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, leader, INITIAL_LEADER_EPOCH + 3)
    assert c.run_until(lambda cl: cl.assignment("t") == {0: [leader, ctl, other]}, TIMEOUT_MS)
    assert c.run_until(lambda cl: not cl.admin().list_partition_reassignments(), TIMEOUT_MS)


@pytest.mark.parametrize("unclean", [False, True])
def test_leader_and_isr_when_entire_isr_offline(unclean):
    """testLeaderAndIsrWhenEntireIsrOfflineAndUncleanLeaderElection{Disabled,Enabled}: the only
    replica shuts down: NoLeader at epoch + 1, the ISR keeps it."""
    c = _make_servers(2, unclean=unclean)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[other]])
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH)
    _shutdown(c, other)
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, -1, INITIAL_LEADER_EPOCH + 1)
    assert _zk_state(c, tp)["isr"] == [other]


def test_controller_detects_bounced_brokers():
    """testControllerDetectsBouncedBrokers: the other broker restarts (no controlled shutdown)
    before the controller handles the broker change; the controller sees a new broker epoch and
    treats it as failed and started: it hosts the partition again and knows both brokers."""
    c = _make_servers(2, config={"controlled.shutdown.enable": False})
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[0, 1]])
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH)
    c.pause(ctl, 50)   # the controller's event thread is busy while the broker bounces
    c.shutdown(other)
    _startup(c, other)
    assert not c.brokers[other].replica_manager.partitions
    assert c.run_until(lambda cl: tp in cl.brokers[other].replica_manager.partitions
                       and len(cl.brokers[other].metadata.live_brokers) == 2, TIMEOUT_MS)



def test_partition_reassignment():
    """testPartitionReassignment, through /admin/reassign_partitions: the partition on the
    controller moves to the other broker, which leads at the initial leader epoch + 3 (A1 bump,
    B3 reassign election, B4 removal of the old replica); the topic znode holds the target and no
    reassignment is left. (The AlterPartitionReassignment timer metric is not modelled.)"""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[ctl]])
    assert _zk_reassign(c, {tp: [other]}) == {tp: ("NONE", None)}
    _wait_for_partition_state(c, tp, FIRST_CONTROLLER_EPOCH, other, INITIAL_LEADER_EPOCH + 3)
    assert c.run_until(lambda cl: cl.assignment("t") == {0: [other]}, TIMEOUT_MS)
    assert c.run_until(lambda cl: not cl.admin().list_partition_reassignments(), TIMEOUT_MS)


def _offline_replicas(c: Cluster, broker: int, tp) -> list[int]:
    """metadataCache.getPartitionInfo(tp).offlineReplicas on ``broker``."""
    return list(c.brokers[broker].metadata.partitions[tp].offline_replicas)


def test_metadata_propagation_on_broker_change():
    """testMetadataPropagationOnBrokerChange: a follower (not the controller) shuts down; the
    remaining brokers' metadata lists it as the offline replica of partition 0 (replicas as
    assigned, ISR the other replica) and partition 1 without offline replicas; once it is back,
    no broker lists an offline replica."""
    c = _make_servers(3)
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
        info1 = c.brokers[b].metadata.partitions[("topic1", 1)]
        assert list(info1.replicas) == assignment[1] and not info1.offline_replicas
    _startup(c, test_broker)

    def consistent(cl):
        return all(not cl.brokers[b].metadata.partitions[("topic1", p)].offline_replicas and
                   list(cl.brokers[b].metadata.partitions[("topic1", p)].replicas) == r
                   for b in cl.brokers for p, r in assignment.items()
                   if ("topic1", p) in cl.brokers[b].metadata.partitions) and all(
            ("topic1", p) in cl.brokers[b].metadata.partitions
            for b in cl.brokers for p in assignment)
    assert c.run_until(consistent, TIMEOUT_MS)


def test_metadata_propagation_for_offline_replicas():
    """testMetadataPropagationForOfflineReplicas: the single replica's broker, another broker and
    the controller all shut down; each broker that starts again learns the partition with leader
    -1, an offline replica, and non-empty replicas and ISR."""
    c = _make_servers(3)
    ctl = c.controller_id()
    replica = _other(c, ctl)
    other = _other(c, ctl, replica)
    c.create_topic("topic1", 1, assignment=[[replica]])
    for b in (other, replica, ctl):
        _shutdown(c, b)
    tp = ("topic1", 0)

    def verify(cl, b):
        info = cl.brokers[b].metadata.partitions.get(tp)
        return info is not None and bool(info.offline_replicas) and info.leader == -1 and \
            bool(info.replicas) and bool(info.isr)
    for b in (ctl, other):
        _startup(c, b)
        assert c.run_until(lambda cl, b=b: verify(cl, b), TIMEOUT_MS)


def _controller_move(c: Cluster, trigger) -> None:
    """testControllerMove: the controller's event thread is held (a pause) while ``trigger``
    queues an event and the controller moves (/controller deleted, re-created for a broker id
    that is no broker, /controller_epoch bumped); the held event then fails with
    ControllerMovedException and the controller resigns."""
    ctl = c.controller_id()
    c.run(100)
    c.pause(ctl, 200)
    trigger()
    c.run(5)                                      # the watch fires: the event is queued
    c.zk.delete("/controller")                    # zkClient.deleteController
    c.zk.create("/controller", json.dumps(        # registerControllerAndIncrementControllerEpoch
        {"version": 1, "brokerid": len(c.brokers), "timestamp": "0"}))
    c.zk.set("/controller_epoch", str(_controller_epoch(c) + 1))
    assert c.run_until(lambda cl: cl.brokers[ctl].controller is None, TIMEOUT_MS)
    assert any(r[1] == "controller_resigned" and r[2] == ctl for r in c.trace.rows)


def test_controller_move_on_topic_creation():
    """testControllerMoveOnTopicCreation: a topic created while the controller is held."""
    c = _make_servers(1)
    _controller_move(c, lambda: c.create_topic("t", 1, assignment=[[0]], wait=False))


def test_controller_move_on_preferred_replica_election():
    """testControllerMoveOnPreferredReplicaElection: /admin/preferred_replica_election written
    while the controller is held (the ZooKeeper-triggered ReplicaLeaderElection event)."""
    c = _make_servers(1)
    c.create_topic("t", 1, assignment=[[0]])
    _controller_move(c, lambda: c.engine.schedule(
        1, "controller_event", "zk_preferred_election", ([("t", 0)],)))


def test_controller_move_on_partition_reassignment():
    """testControllerMoveOnPartitionReassignment: /admin/reassign_partitions written while the
    controller is held."""
    c = _make_servers(1)
    c.create_topic("t", 1, assignment=[[0]])
    _controller_move(c, lambda: c.engine.schedule(
        1, "controller_event", "zk_reassignments", ({("t", 0): [0]},)))


def _alter_partition(c: Cluster, broker_id: int, partitions, *, broker_epoch=None,
                     recovery_states=()) -> AlterPartitionResponse:
    """alterPartitionFuture: run the controller's processAlterPartition on an AlterPartition
    from ``broker_id``; returns the answer."""
    ctl = c.brokers[c.controller_id()]
    sent = []
    ctl.send = lambda dst, msg: sent.append(msg)
    epoch = c.brokers[broker_id].broker_epoch if broker_epoch is None else broker_epoch
    req = AlterPartitionRequest(broker_id, epoch, tuple(partitions), 7, tuple(recovery_states))
    try:
        c.zk_control_plane.run_controller(ctl, "alter_partition", (broker_id, req))
    finally:
        del ctl.send
    answers = [m for m in sent if isinstance(m, AlterPartitionResponse)]
    assert len(answers) == 1
    return answers[0]


@pytest.mark.parametrize("version", ["2.7", "3.7"])
def test_alter_partition(version):
    """testAlterPartition(IBP 2.7 / latest): the leader asks for the state the partition already
    has: the answer is that state (leader, leader epoch, partition epoch, ISR)."""
    c = _make_servers(1, version=version)
    c.create_topic("t", 1, assignment=[[0]])
    st = _zk_state(c, ("t", 0))
    resp = _alter_partition(c, 0, [("t", 0, st["leader_epoch"], tuple(st["isr"]),
                                    st["zk_version"])])
    assert resp.error == E.NONE
    assert resp.partitions == (("t", 0, E.NONE, 0, st["leader_epoch"], tuple(st["isr"]),
                                st["zk_version"]),)


def test_idempotent_alter_partition():
    """testIdempotentAlterPartition: an ISR shrink is written (partition epoch + 1); re-sent at
    the old or the new partition epoch it answers the same state and writes nothing."""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[other, ctl]])
    st = _zk_state(c, tp)
    new_isr = (st["leader"],)
    expected = (("t", 0, E.NONE, other, st["leader_epoch"], new_isr, st["zk_version"] + 1),)
    for pe in (st["zk_version"], st["zk_version"], st["zk_version"] + 1):
        resp = _alter_partition(c, other, [("t", 0, st["leader_epoch"], new_isr, pe)])
        assert (resp.error, resp.partitions) == (E.NONE, expected)
    assert _zk_state(c, tp)["zk_version"] == st["zk_version"] + 1


def test_shutdown_broker_not_added_to_isr():
    """testShutdownBrokerNotAddedToIsr (AlterPartition v2+, KIP-841): the follower shut down;
    an AlterPartition putting it back into the ISR gets INELIGIBLE_REPLICA and changes nothing;
    once it is back it rejoins the ISR."""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[ctl, other]])
    _shutdown(c, other)
    cc = c.brokers[ctl].controller.context
    leader, le, isr, pe = cc.states[tp]
    assert isr == (ctl,)
    resp = _alter_partition(c, ctl, [("t", 0, le, (ctl, other), pe)])
    assert resp.partitions == (("t", 0, E.INELIGIBLE_REPLICA, -1, -1, (), -1),)
    assert cc.states[tp][2] == (ctl,)
    _startup(c, other)
    assert c.run_until(lambda cl: _zk_state(cl, tp)["isr"] == [ctl, other], TIMEOUT_MS)


def _assert_alter_partition(c, tp, leader, *, top=E.NONE, error=E.NONE, broker_epoch=None,
                            leader_epoch, partition_epoch, isr, recovery=0) -> None:
    """assertAlterPartitionError: the answer's top-level error, or its one partition error."""
    resp = _alter_partition(c, leader, [(tp[0], tp[1], leader_epoch, tuple(isr),
                                         partition_epoch)],
                            broker_epoch=broker_epoch, recovery_states=(recovery,))
    if top != E.NONE:
        assert (resp.error, resp.partitions) == (top, ())
    else:
        assert resp.error == E.NONE
        assert [p[:3] for p in resp.partitions] == [(tp[0], tp[1], error)]


def test_alter_partition_errors():
    """testAlterPartitionErrors: stale or unknown broker epoch (top-level STALE_BROKER_EPOCH),
    unknown topic or partition, INVALID_UPDATE_VERSION, NOT_CONTROLLER for a leader ahead of the
    controller, FENCED_LEADER_EPOCH, INVALID_REQUEST for RECOVERING (epoch errors first), and
    UNKNOWN_SERVER_ERROR for a leader recovery state that does not exist. (UNKNOWN_TOPIC_ID: no
    topic ids in kafkasim's requests.)"""
    c = _make_servers(2)
    ctl = c.controller_id()
    other = _other(c, ctl)
    tp = ("t", 0)
    replicas = [ctl, other]
    c.create_topic("t", 1, assignment=[replicas])
    leader, le, _isr, pe = c.brokers[ctl].controller.context.states[tp]
    be = c.brokers[leader].broker_epoch

    def check(**kw):
        args = dict(leader_epoch=le, partition_epoch=pe, isr=replicas)
        args.update(kw)
        who = args.pop("leader", leader)
        part = args.pop("tp", tp)
        _assert_alter_partition(c, part, who, **args)

    check(top=E.STALE_BROKER_EPOCH, broker_epoch=be - 1)
    check(top=E.STALE_BROKER_EPOCH, leader=99, broker_epoch=be)
    check(error=E.UNKNOWN_TOPIC_OR_PARTITION, tp=("unknown", 0))
    check(error=E.UNKNOWN_TOPIC_OR_PARTITION, tp=("t", 1))
    check(error=E.INVALID_UPDATE_VERSION, isr=[leader], partition_epoch=pe - 1)
    check(error=E.NOT_CONTROLLER, partition_epoch=pe + 1)
    check(error=E.FENCED_LEADER_EPOCH, leader_epoch=le - 1)
    check(error=E.NOT_CONTROLLER, leader_epoch=le + 1)
    check(error=E.INVALID_REQUEST, recovery=RECOVERING)
    check(error=E.INVALID_REQUEST, recovery=RECOVERING, isr=[ctl])
    check(error=E.INVALID_UPDATE_VERSION, recovery=RECOVERING, partition_epoch=pe - 1)
    check(error=E.NOT_CONTROLLER, recovery=RECOVERING, partition_epoch=pe + 1)
    check(error=E.FENCED_LEADER_EPOCH, recovery=RECOVERING, leader_epoch=le - 1)
    check(error=E.NOT_CONTROLLER, recovery=RECOVERING, leader_epoch=le + 1)
    check(top=E.UNKNOWN_SERVER_ERROR, recovery=25)
    assert c.brokers[ctl].controller.context.states[tp] == (leader, le, tuple(replicas), pe)


def test_alter_partition_errors_after_unclean_election():
    """testAlterPartitionErrorsAfterUncleanElection: replicas A, B (not the controller), unclean
    election on; A shuts down (ISR [B]), B shuts down (leader -1, ISR [B]), A restarts and is
    elected uncleanly with ISR [A] and RECOVERING; then the same epoch checks, and a RECOVERING
    ISR of two replicas is an INVALID_REQUEST."""
    c = _make_servers(3, unclean=True)
    ctl = c.controller_id()
    r1 = _other(c, ctl)
    r2 = _other(c, ctl, r1)
    tp = ("t", 0)
    c.create_topic("t", 1, assignment=[[r1, r2]])
    cc = c.brokers[ctl].controller.context
    _shutdown(c, r1)
    assert (cc.states[tp][0], cc.states[tp][2]) == (r2, (r2,))
    _shutdown(c, r2)
    assert c.run_until(lambda cl: cc.states[tp][0] == -1, TIMEOUT_MS)
    assert cc.states[tp][2] == (r2,)
    _startup(c, r1)
    assert c.run_until(lambda cl: cc.states[tp][0] == r1, TIMEOUT_MS)
    leader, le, isr, pe = cc.states[tp]
    assert isr == (r1,)
    assert c.brokers[ctl].controller.leader_recovery_state(tp) == RECOVERING
    be = c.brokers[r1].broker_epoch

    def check(**kw):
        args = dict(leader_epoch=le, partition_epoch=pe, isr=[r1, r2])
        args.update(kw)
        who = args.pop("leader", r1)
        _assert_alter_partition(c, tp, who, **args)

    check(top=E.STALE_BROKER_EPOCH, broker_epoch=be - 1)
    check(top=E.STALE_BROKER_EPOCH, leader=99, broker_epoch=be)
    check(error=E.INVALID_UPDATE_VERSION, partition_epoch=pe - 1)
    check(error=E.NOT_CONTROLLER, partition_epoch=pe + 1)
    check(error=E.FENCED_LEADER_EPOCH, leader_epoch=le - 1)
    check(error=E.NOT_CONTROLLER, leader_epoch=le + 1)
    check(error=E.INVALID_REQUEST, recovery=RECOVERING)
    check(error=E.INVALID_UPDATE_VERSION, partition_epoch=pe - 1, recovery=RECOVERING)
    check(error=E.NOT_CONTROLLER, partition_epoch=pe + 1, recovery=RECOVERING)
    check(error=E.FENCED_LEADER_EPOCH, leader_epoch=le - 1, recovery=RECOVERING)
    check(error=E.NOT_CONTROLLER, leader_epoch=le + 1, recovery=RECOVERING)


# -- UncleanLeaderElectionTest (3.7.0), ZooKeeper and KRaft ------------------------------------
# ZooKeeper mode as 3.7.0 runs it; KRaft as trunk's (3.9) test does, with the controllers'
# unclean.leader.election.interval.ms at 10 ms (the KRaft controller's retry of unclean elections
# for leaderless partitions, 3.9+)
MODES = [pytest.param("zookeeper", id="zk"), pytest.param("kraft", id="kraft")]
VERSION = {"zookeeper": "3.7", "kraft": "3.9"}
TOPIC = "topic"


def _start_brokers(mode: str, n: int = 2, config: dict | None = None) -> Cluster:
    """startBrokers: brokers 0 and 1 (ZooKeeper mode: controlled shutdown with one attempt,
    1 s back-off)."""
    config = {"controlled.shutdown.enable": True, **(config or {})}
    if mode == "kraft":
        config["unclean.leader.election.interval.ms"] = 10
    else:   # ZooKeeper-mode settings (a KRaft broker ignores them)
        config.update({"controlled.shutdown.max.retries": 1,
                       "controlled.shutdown.retry.backoff.ms": 1000})
    c = Cluster([0, 1][:n], seed=1, kafka_version=VERSION[mode], metadata_mode=mode,
                config=config)
    if mode == "kraft":
        assert c.run_until(lambda cl: cl.controller_id() >= 0 and not any(
            b.lifecycle.is_fenced for b in cl.brokers.values()), TIMEOUT_MS)
    return c


def _produce(c: Cluster, value: str, *, timeout_ms: int = 30_000) -> str:
    """produceMessage (acks=all): the record's final status."""
    r = c.producer(acks="all", delivery_timeout_ms=timeout_ms,
                   request_timeout_ms=min(timeout_ms, 20_000)).send(TOPIC, value, partition=0)
    c.run_until(lambda cl: r.status != "pending", timeout_ms + 5_000)
    return r.status


def _consume_all(c: Cluster, n: int) -> list:
    """consumeAllMessages: a new consumer assigned the partition from offset 0."""
    cons = c.consumer(group=f"g{len(c.clients)}", enable_auto_commit=False)
    cons.assign(TOPIC, [0])
    cons.seek(TOPIC, 0, 0)
    got = []
    for _ in range(20):
        got += [r.value for r in cons.poll(timeout_ms=500)]
        if len(got) >= n:
            break
    return got


def _leader(c: Cluster) -> int:
    return c.inspect.partition_states(TOPIC)[(TOPIC, 0)][0]


def _unclean_meter(c: Cluster) -> int:
    """ControllerStats.uncleanLeaderElectionRate's count: ZooKeeper mode, the controllers'
    meters; KRaft, the unclean elections the controller made (its LeaderElection trace rows
    marked unclean, as the scenarios' unclean_elections clause counts them)."""
    if c.kraft is not None:
        return sum(1 for row in c.trace.rows if row[1] == "controller"
                   and isinstance(row[5], ev.LeaderElection) and row[5].unclean)
    return sum(b.meters["UncleanLeaderElectionsPerSec"] for b in c.brokers.values())


def _verify_unclean_leader_election_enabled(c: Cluster) -> None:
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
    assert c.run_until(lambda cl: _leader(cl) == follower, TIMEOUT_MS)
    assert _unclean_meter(c) - before == 1
    assert _produce(c, "third") == "acked"
    assert _consume_all(c, 2) == ["first", "third"]   # "second" was lost


def _verify_unclean_leader_election_disabled(c: Cluster) -> None:
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
    assert c.run_until(lambda cl: _leader(cl) == -1, TIMEOUT_MS)
    c.run(1000)
    assert _leader(c) == -1 and c.isr(TOPIC) == [leader]   # waitForNoLeaderAndIsrHasOldLeaderId
    assert _unclean_meter(c) == before
    assert _produce(c, "third", timeout_ms=1000) == "failed"
    assert _consume_all(c, 0) == []
    _startup(c, leader)
    assert c.run_until(lambda cl: _leader(cl) == leader, TIMEOUT_MS)
    assert _produce(c, "third") == "acked"
    assert c.run_until(lambda cl: follower in cl.isr(TOPIC), TIMEOUT_MS)
    _shutdown(c, leader)
    assert c.run_until(lambda cl: _leader(cl) == follower, TIMEOUT_MS)
    assert _consume_all(c, 3) == ["first", "second", "third"]


@pytest.mark.parametrize("mode", MODES)
def test_unclean_leader_election_enabled(mode):
    """testUncleanLeaderElectionEnabled: the broker default enables it; the out-of-sync
    follower is elected, the record only the old leader had is lost."""
    c = _start_brokers(mode, config={"unclean.leader.election.enable": True})
    c.create_topic(TOPIC, 1, assignment=[[0, 1]])
    _verify_unclean_leader_election_enabled(c)


@pytest.mark.parametrize("mode", MODES)
def test_unclean_leader_election_disabled(mode):
    """testUncleanLeaderElectionDisabled (the default): the partition stays offline until the
    old leader returns; nothing is lost."""
    c = _start_brokers(mode)
    c.create_topic(TOPIC, 1, assignment=[[0, 1]])
    _verify_unclean_leader_election_disabled(c)


@pytest.mark.parametrize("mode", MODES)
def test_unclean_leader_election_enabled_by_topic_override(mode):
    """testUncleanLeaderElectionEnabledByTopicOverride: off for brokers, on for the topic."""
    c = _start_brokers(mode, config={"unclean.leader.election.enable": False})
    c.create_topic(TOPIC, 1, assignment=[[0, 1]],
                   config={"unclean.leader.election.enable": True})
    _verify_unclean_leader_election_enabled(c)


@pytest.mark.parametrize("mode", MODES)
def test_unclean_leader_election_disabled_by_topic_override(mode):
    """testUncleanLeaderElectionDisabledByTopicOverride: on for brokers, off for the topic."""
    c = _start_brokers(mode, config={"unclean.leader.election.enable": True})
    c.create_topic(TOPIC, 1, assignment=[[0, 1]],
                   config={"unclean.leader.election.enable": False})
    _verify_unclean_leader_election_disabled(c)


@pytest.mark.parametrize("mode", MODES)
def test_unclean_leader_election_invalid_topic_override(mode):
    """testUncleanLeaderElectionInvalidTopicOverride: a value that is not a boolean is refused
    (ConfigException) and no topic is created."""
    c = _start_brokers(mode, n=1)
    with pytest.raises(ConfigError, match="unclean.leader.election.enable"):
        c.create_topic(TOPIC, 1, assignment=[[0]],
                       config={"unclean.leader.election.enable": "invalid"})
    assert TOPIC not in c.topics.configs


@pytest.mark.parametrize("mode", MODES)
def test_topic_unclean_leader_election_enable(mode):
    """testTopicUncleanLeaderElectionEnable (trunk: ...WithAlterTopicConfigs): turning the
    topic's unclean.leader.election.enable on and off while the leader is alive changes nothing;
    once the partition is offline (only the out-of-sync follower is up), turning it on elects the
    follower (KafkaController.processTopicUncleanLeaderElectionEnable; KRaft: the controller's
    unclean election of leaderless partitions), losing the record it did not have."""
    c = _start_brokers(mode)
    c.create_topic(TOPIC, 1, assignment=[[0, 1]])
    leader = _leader(c)
    follower = 1 - leader
    assert _produce(c, "first") == "acked"
    for on in (True, False):   # trunk: with the leader alive, turning it on or off changes nothing
        c.admin().incremental_alter_configs("topics", TOPIC,
                                            {"unclean.leader.election.enable": on})
        c.run(1000)
        assert _leader(c) == leader
    _shutdown(c, follower)
    assert _produce(c, "second") == "acked"
    before = _unclean_meter(c)
    _shutdown(c, leader)
    _startup(c, follower)
    c.run(5000)
    assert _leader(c) == -1 and _unclean_meter(c) == before
    assert _produce(c, "third", timeout_ms=1000) == "failed"
    c.admin().incremental_alter_configs("topics", TOPIC, {"unclean.leader.election.enable": True})
    assert c.run_until(lambda cl: _leader(cl) == follower, TIMEOUT_MS)
    assert _unclean_meter(c) - before == 1
    assert _produce(c, "third") == "acked"
    assert _consume_all(c, 2) == ["first", "third"]


def test_unclean_leader_election_enable():
    """DynamicBrokerReconfigurationTest.testUncleanLeaderElectionEnable (3.7.0): the partition on
    two brokers other than the controller is offline (its ISR member down, the out-of-sync one
    up); turning the brokers' default unclean.leader.election.enable on dynamically elects the
    out-of-sync replica (KafkaController.processUncleanLeaderElectionEnable)."""
    c = _make_servers(3)
    ctl = c.controller_id()
    leader, follower = (ctl + 1) % 3, (ctl + 2) % 3
    c.create_topic("t", 1, assignment=[[leader, follower]])
    _shutdown(c, follower)
    _shutdown(c, leader)
    _startup(c, follower)
    c.run(5000)
    assert c.leader("t") == -1
    c.alter_config("brokers", None, {"unclean.leader.election.enable": True})
    assert c.run_until(lambda cl: cl.leader("t") == follower, TIMEOUT_MS)


@pytest.mark.parametrize(("version", "elected"), [("2.0", True), ("1.1", False)])
def test_unclean_leader_election_enable_before_2_0(version, elected):
    """KAFKA-6526 (2.0): before it the controller did not react to the dynamic default; the
    partition stayed offline until the next broker or controller change."""
    c = _make_servers(3, version=version)
    ctl = c.controller_id()
    leader, follower = (ctl + 1) % 3, (ctl + 2) % 3
    c.create_topic("t", 1, assignment=[[leader, follower]])
    _shutdown(c, follower)
    _shutdown(c, leader)
    _startup(c, follower)
    c.run(5000)
    c.alter_config("brokers", None, {"unclean.leader.election.enable": True})
    c.run(5000)
    assert (c.leader("t") == follower) == elected


@pytest.mark.parametrize(("version", "elected"), [("2.1", True), ("2.0", False)])
def test_topic_unclean_leader_election_enable_before_2_1(version, elected):
    """KAFKA-6835 (2.1): before it a topic override turned on did not make the controller retry
    the topic's offline partitions."""
    c = _make_servers(2, version=version)
    c.create_topic(TOPIC, 1, assignment=[[0, 1]])
    leader = _leader(c)
    follower = 1 - leader
    _shutdown(c, follower)
    _shutdown(c, leader)
    _startup(c, follower)
    c.run(5000)
    c.alter_config("topics", TOPIC, {"unclean.leader.election.enable": True})
    c.run(5000)
    assert (_leader(c) == follower) == elected


# -- ControllerContextTest (3.7.0) ----------------------------------------------------------------
TP1, TP2, TP3 = ("A", 0), ("A", 1), ("B", 0)


def _context() -> ControllerContext:
    """setUp: live brokers 1, 2, 3; A-0, A-1, B-0 assigned round-robin over them."""
    cc = ControllerContext()
    cc.live_brokers = [1, 2, 3]
    cc.broker_epochs = {1: 1, 2: 1, 3: 1}
    brokers = [1, 2, 3]
    for i, tp in enumerate((TP1, TP2, TP3)):
        replicas = [brokers[(j + i) % 3] for j in range(3)]
        cc.update_partition_full_replica_assignment(tp, ReplicaAssignment(replicas))
    return cc


def test_update_partition_full_replica_assignment_updates_replica_assignment():
    """testUpdatePartitionFullReplicaAssignmentUpdatesReplicaAssignment."""
    cc = _context()
    cc.update_partition_full_replica_assignment(TP1, ReplicaAssignment([4]))
    full = cc.partition_full_replica_assignment(TP1)
    assert (full.replicas, full.adding_replicas, full.removing_replicas) == ((4,), (), ())
    expected = ReplicaAssignment([3], [1], [2])
    cc.update_partition_full_replica_assignment(TP1, expected)
    assert cc.partition_full_replica_assignment(TP1) == expected


def test_partition_replica_assignment_returns_empty_seq_if_topic_or_partition_does_not_exist():
    """testPartitionReplicaAssignmentReturnsEmptySeqIfTopicOrPartitionDoesNotExist."""
    cc = _context()
    assert cc.partition_replica_assignment(("NONEXISTENT", 0)) == ()
    assert cc.partition_replica_assignment(("A", 100)) == ()


def test_partition_full_replica_assignment_returns_empty_assignment_if_topic_or_partition_does_not_exist():  # noqa: E501
    """testPartitionFullReplicaAssignmentReturnsEmptyAssignmentIfTopicOrPartitionDoesNotExist."""
    cc = _context()
    empty = ReplicaAssignment((), (), ())
    assert cc.partition_full_replica_assignment(("NONEXISTENT", 0)) == empty
    assert cc.partition_full_replica_assignment(("A", 100)) == empty


def test_partition_replica_assignment_for_topic_returns_empty_map_if_topic_does_not_exist():
    """testPartitionReplicaAssignmentForTopicReturnsEmptyMapIfTopicDoesNotExist."""
    assert _context().partition_replica_assignment_for_topic("NONEXISTENT") == {}


def test_partition_replica_assignment_for_topic_returns_expected_replica_assignments():
    """testPartitionReplicaAssignmentForTopicReturnsExpectedReplicaAssignments."""
    cc = _context()
    assert cc.partition_replica_assignment_for_topic("A") == {
        TP1: cc.partition_replica_assignment(TP1), TP2: cc.partition_replica_assignment(TP2)}


def test_partition_replica_assignment():
    """testPartitionReplicaAssignment: targetReplicas, isBeingReassigned and reassignTo."""
    ra = ReplicaAssignment([1, 2, 3, 4, 5, 6], [2, 3, 4], [1, 5, 6])
    assert ra.is_being_reassigned and ra.target_replicas == (2, 3, 4)
    ra = ReplicaAssignment([1, 2, 3, 4], [], [1, 4])
    assert ra.is_being_reassigned and ra.target_replicas == (2, 3)
    ra = ReplicaAssignment([1, 2, 3, 4], [4], [2])
    assert ra.is_being_reassigned and ra.target_replicas == (1, 3, 4)
    ra = ReplicaAssignment([1, 2, 3, 4, 5, 6], [], [])
    assert not ra.is_being_reassigned and ra.target_replicas == (1, 2, 3, 4, 5, 6)
    ra = ReplicaAssignment([1, 2, 3, 4]).reassign_to([4, 2, 5, 3])
    assert (ra.replicas, ra.target_replicas, ra.adding_replicas, ra.removing_replicas) == (
        (4, 2, 5, 3, 1), (4, 2, 5, 3), (5,), (1,))
    assert ra.is_being_reassigned
    ra = ReplicaAssignment([1, 2, 3]).reassign_to([4, 5, 6])
    assert (ra.replicas, ra.target_replicas, ra.adding_replicas, ra.removing_replicas) == (
        (4, 5, 6, 1, 2, 3), (4, 5, 6), (4, 5, 6), (1, 2, 3))
    assert ra.is_being_reassigned
    ra = ReplicaAssignment([1, 2, 3]).reassign_to([3, 1, 2])
    assert (ra.replicas, ra.target_replicas, ra.adding_replicas, ra.removing_replicas) == (
        (3, 1, 2), (3, 1, 2), (), ())
    assert not ra.is_being_reassigned


def test_reassign_to_idempotence():
    """testReassignToIdempotence: reassigning to the current target changes nothing."""
    for ra in (ReplicaAssignment([1, 2, 3]),
               ReplicaAssignment([4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3]),
               ReplicaAssignment([4, 2, 3, 1], [4], [1])):
        assert ra.reassign_to(ra.target_replicas) == ra


def test_reassign_to():
    """testReassignTo: a second reassignment starts from the origin replicas; reassigning to
    them cancels."""
    ra = ReplicaAssignment([1, 2, 3])
    first = ra.reassign_to([4, 5, 6])
    assert first == ReplicaAssignment([4, 5, 6, 1, 2, 3], [4, 5, 6], [1, 2, 3])
    assert first.reassign_to([7, 8, 9]) == ReplicaAssignment([7, 8, 9, 1, 2, 3], [7, 8, 9],
                                                             [1, 2, 3])
    assert ra.reassign_to([7, 8, 9]) == ReplicaAssignment([7, 8, 9, 1, 2, 3], [7, 8, 9],
                                                          [1, 2, 3])
    assert first.reassign_to([1, 2, 3]) == ra


def test_preferred_replica_imbalance_metric():
    """testPreferredReplicaImbalanceMetric, up to the topic deletion steps: partitions with
    leadership info led by another replica than the head of their replicas."""
    cc = _context()
    for tp in (TP1, TP2, TP3):
        cc.update_partition_full_replica_assignment(tp, ReplicaAssignment([1, 2, 3]))
    assert cc.preferred_replica_imbalance_count() == 0
    cc.states[TP1] = (1, 0, (1, 2, 3), 0)   # putPartitionLeadershipInfo
    assert cc.preferred_replica_imbalance_count() == 0
    cc.states[TP2] = (2, 0, (2, 3, 1), 0)
    assert cc.preferred_replica_imbalance_count() == 1
    cc.states[TP3] = (3, 0, (3, 1, 2), 0)
    assert cc.preferred_replica_imbalance_count() == 2
    cc.update_partition_full_replica_assignment(TP1, ReplicaAssignment([2, 3, 1]))
    cc.update_partition_full_replica_assignment(TP2, ReplicaAssignment([2, 3, 1]))
    assert cc.preferred_replica_imbalance_count() == 2


# -- ControllerChannelManagerTest (3.7.0): what tests/test_controller_state_machines_kafka.py
# does not port ---------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["2.7", "2.8", "3.1", "3.2", "3.7"])
def test_leader_and_isr_inter_broker_protocol_version(version):
    """testLeaderAndIsrInterBrokerProtocolVersion, its version-dependent content kafkasim
    models: from IBP 3.2 (LeaderAndIsr v6, KIP-704) foo-0 is cached RECOVERING and the
    LeaderAndIsr to broker 2 carries RECOVERING; before, RECOVERED. From IBP 2.8 (v5, KIP-516)
    the request carries foo's topic id (initContext gives each topic one,
    ControllerContext.addTopicId); before, none (the deserialized request's topicIds)."""
    h = _channel_harness(version)
    h.ctl.context.add_topic_id("foo", "wKvVsVduTNOVanPg0TSWHw")
    h.ctl.context.add_topic_id("bar", "ZQ6XXBWtQ3GKAlBHMvixoQ")
    if version >= "3.2":
        h.ctl.context.recovering.add(FOO0)
    h.ctl.send_leader_and_isr(h.ctx, [FOO0], only=[2])
    (dst, lai), = h.sent(LeaderAndIsrRequest)
    assert dst == 2
    expected = RECOVERING if version >= "3.2" else LeaderRecoveryState.RECOVERED
    assert [s.leader_recovery_state for s in lai.partition_states] == [expected]
    if version >= "2.8":
        assert lai.topic_ids == (("foo", "wKvVsVduTNOVanPg0TSWHw"),)
        assert lai.topic_id("foo") == "wKvVsVduTNOVanPg0TSWHw"
    else:
        assert lai.topic_ids == () and lai.topic_id("foo") is None


def test_leader_and_isr_carries_the_zero_uuid_for_a_topic_without_id():
    """ControllerChannelManager.sendLeaderAndIsrRequest (ControllerChannelManager.scala:548
    @3.9.0-rc3): every topic of the request is in its topicIds, Uuid.ZERO_UUID for one the
    controller has no id for; the partition states keep their order, each topic once."""
    h = _channel_harness("3.7")
    h.ctl.context.add_topic_id("bar", "ZQ6XXBWtQ3GKAlBHMvixoQ")
    h.ctl.send_leader_and_isr(h.ctx, [FOO0, BAR1, FOO1], only=[2])
    (_dst, lai), = h.sent(LeaderAndIsrRequest)
    assert lai.topic_ids == (("foo", ZERO_UUID), ("bar", "ZQ6XXBWtQ3GKAlBHMvixoQ"))


def test_add_topic_id_refuses_a_second_id():
    """ControllerContext.addTopicId (ControllerContext.scala:133@3.0.0): another id for a
    topic, or the id of another topic, is refused (IllegalStateException) and nothing
    changes; the same pair again is accepted."""
    cc = ControllerContext()
    cc.add_topic_id("t", "AAAAAAAAAAAAAAAAAAAAAQ")
    cc.add_topic_id("t", "AAAAAAAAAAAAAAAAAAAAAQ")
    with pytest.raises(ValueError, match="did not match existing ID"):
        cc.add_topic_id("t", "AAAAAAAAAAAAAAAAAAAAAg")
    with pytest.raises(ValueError, match="did not match existing name"):
        cc.add_topic_id("u", "AAAAAAAAAAAAAAAAAAAAAQ")
    assert cc.topic_ids == {"t": "AAAAAAAAAAAAAAAAAAAAAQ"}
    assert cc.topic_names == {"AAAAAAAAAAAAAAAAAAAAAQ": "t"}


# -- ControllerIntegrationTest (3.9.0-rc3): topic ids (KIP-516) ----------------------------------
def _topic_znode_id(c: Cluster, topic: str) -> str | None:
    """zkClient.getTopicIdsForTopics: the topic_id of the topic's znode."""
    return c.zk.get(f"/brokers/topics/{topic}").json().get("topic_id")


def _controller_context(c: Cluster) -> ControllerContext:
    return c.brokers[c.controller_id()].controller.context


@pytest.mark.parametrize("version", ["2.8", "3.9"])
def test_topic_ids_are_added(version):
    """testTopicIdsAreAdded: before the topic exists the controller has no id for it; each
    created topic's id is in controllerContext.topicIds (and topicNames maps it back), the
    ids differ, and the first does not change when the second topic comes."""
    c = _make_servers(1, version=version)
    assert _controller_context(c).topic_ids.get("t1") is None
    c.create_topic("t1", assignment=[[0]])
    _wait_for_partition_state(c, ("t1", 0), FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH)
    cc = _controller_context(c)
    topic_id1 = cc.topic_ids["t1"]
    assert cc.topic_names[topic_id1] == "t1" and topic_id1 == _topic_znode_id(c, "t1")
    c.create_topic("t2", assignment=[[0]])
    _wait_for_partition_state(c, ("t2", 0), FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH)
    topic_id2 = cc.topic_ids["t2"]
    assert cc.topic_names[topic_id2] == "t2"
    assert cc.topic_ids["t1"] == topic_id1 != topic_id2


def test_topic_ids_are_not_added():
    """testTopicIdsAreNotAdded (IBP 2.7): no topic gets an id, in the controller's context or
    its znode."""
    c = _make_servers(1, version="2.7")
    for topic in ("t1", "t2"):
        c.create_topic(topic, assignment=[[0]])
        _wait_for_partition_state(c, (topic, 0), FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH)
        assert _controller_context(c).topic_ids.get(topic) is None
        assert _topic_znode_id(c, topic) is None


def test_topic_id_migration_and_handling():
    """testTopicIdMigrationAndHandling, its creation and partition-reassignment half: the znode's
    id is the controller's, and rewriting the topic znode (the controller's
    setTopicAssignment during a reassignment) keeps it. (addPartitions and deleteTopic are not
    modelled in ZooKeeper mode.)"""
    c = _make_servers(2, version="3.9")
    c.create_topic("t", assignment=[[0]])
    _wait_for_partition_state(c, ("t", 0), FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH)
    topic_id = _topic_znode_id(c, "t")
    assert topic_id is not None and _controller_context(c).topic_ids["t"] == topic_id
    _zk_reassign(c, {("t", 0): [1]})
    assert c.run_until(lambda cl: cl.assignment("t") == {0: [1]}, TIMEOUT_MS)
    assert _topic_znode_id(c, "t") == topic_id == _controller_context(c).topic_ids["t"]


@pytest.mark.parametrize("version, has_id", [("2.7", False), ("3.9", True)])
def test_topic_id_persists_through_controller_reelection(version, has_id):
    """testTopicIdPersistsThroughControllerReelection (3.9) and
    testNoTopicIdPersistsThroughControllerReelection (IBP 2.7): the controller elected after
    the first one shuts down reads the same id (or none) from the topic znode."""
    c = _make_servers(2, version=version)
    ctl = c.controller_id()
    c.create_topic("t", assignment=[[ctl]])
    _wait_for_partition_state(c, ("t", 0), FIRST_CONTROLLER_EPOCH, ctl, INITIAL_LEADER_EPOCH)
    topic_id = _controller_context(c).topic_ids.get("t")
    assert (topic_id is not None) == has_id
    _shutdown(c, ctl)
    assert c.run_until(lambda cl: cl.controller_id() not in (-1, ctl), TIMEOUT_MS)
    assert _controller_context(c).topic_ids.get("t") == topic_id


def test_topic_id_persists_through_controller_restart():
    """testTopicIdPersistsThroughControllerRestart: the only broker restarts and, controller
    again, reads the topic's id back from its znode."""
    c = _make_servers(1, version="3.9")
    c.create_topic("t", assignment=[[0]])
    _wait_for_partition_state(c, ("t", 0), FIRST_CONTROLLER_EPOCH, 0, INITIAL_LEADER_EPOCH)
    topic_id = _controller_context(c).topic_ids["t"]
    _shutdown(c, 0)
    _startup(c, 0)
    assert c.run_until(lambda cl: cl.controller_id() == 0, TIMEOUT_MS)
    assert _controller_context(c).topic_ids["t"] == topic_id


@pytest.mark.parametrize(("version", "offline"), [("0.11.0", False), ("1.0", True),
                                                  ("3.7", True)])
def test_update_metadata_inter_broker_protocol_version(version, offline):
    """testUpdateMetadataInterBrokerProtocolVersion, its version-dependent content kafkasim
    models: UpdateMetadata v4+ (IBP 1.0, KIP-112) names each partition's offline replicas, the
    replicas not isReplicaOnline: broker 3 is dead, broker 2 shutting down."""
    h = _channel_harness(version, live=(1, 2), shutting_down=(2,))
    h.ctl.send_update_metadata(h.ctx, [FOO0])
    for _dst, um in h.sent(UpdateMetadataRequest):
        (st,) = um.partition_states
        assert st.offline_replicas == ((2, 3) if offline else ())


@pytest.mark.parametrize("version", ["2.7", "2.8", "3.7"])
def test_update_metadata_carries_topic_ids(version):
    """testUpdateMetadataInterBrokerProtocolVersion's topic ids: from IBP 2.8 (UpdateMetadata
    v7, KIP-516) each topic of the request has its UpdateMetadataTopicState.topicId, the
    controller's, Uuid.ZERO_UUID for one it has none for (ControllerChannelManager.scala:620
    @3.9.0-rc3); before, none."""
    h = _channel_harness(version)
    h.ctl.context.add_topic_id("foo", "wKvVsVduTNOVanPg0TSWHw")
    h.ctl.send_update_metadata(h.ctx, [FOO0, BAR1, FOO1])
    sent = h.sent(UpdateMetadataRequest)
    assert sorted(dst for dst, _ in sent) == [1, 2, 3]
    for _dst, um in sent:
        if version >= "2.8":
            assert um.topic_ids == (("foo", "wKvVsVduTNOVanPg0TSWHw"), ("bar", ZERO_UUID))
            assert um.topic_id("foo") == "wKvVsVduTNOVanPg0TSWHw"
        else:
            assert um.topic_ids == () and um.topic_id("foo") is None


def test_stop_replica_groups_by_broker():
    """testStopReplicaGroupsByBroker: StopReplica (deletePartition=false) for three partitions
    on brokers 2 and 3 (their OfflineReplica transitions) is one request to each, naming all
    three."""
    h = _channel_harness("3.7")
    tps = [FOO0, FOO1, BAR1]
    for b in (2, 3):
        h.ctl.offline_replica(h.ctx, h.zk, b, tps)
    for b in (2, 3):
        stops = [m for dst, m in h.sent(StopReplicaRequest) if dst == b]
        assert len(stops) == 1
        assert set(stops[0].partitions) == set(tps) and stops[0].delete is False
    assert {dst for dst, _ in h.sent(StopReplicaRequest)} == {2, 3}


@pytest.mark.parametrize(("version", "carries"), [("2.5", False), ("2.6", True), ("3.7", True)])
def test_stop_replica_request_carries_each_partitions_leader_epoch(version, carries):
    """testStopReplicaRequestSent / testStopReplicaInterBrokerProtocolVersion: from IBP 2.6
    (StopReplica v3, KIP-570) each partition's state carries the leader epoch the controller
    holds (ControllerContext.leaderEpoch), NoEpoch (-1) for a partition without leadership
    info; before, the request has no epochs."""
    h = _channel_harness(version)
    h.put_partition(("bar", 0), [1, 2, 3], 2, [2, 3], leader_epoch=4, controller_epoch=1)
    h.put_partition(("baz", 0), [1, 2, 3])   # no leadership info
    tps = (FOO0, ("bar", 0), ("baz", 0))
    h.ctl.send_stop_replica(h.ctx, 2, tps, False)
    (dst, req), = h.sent(StopReplicaRequest)
    assert dst == 2 and req.partitions == tps
    assert req.leader_epochs == ((0, 4, -1) if carries else ())
    cc = h.ctl.context
    assert (cc.leader_epoch(("bar", 0)), cc.leader_epoch(("baz", 0))) == (4, -1)


def test_offline_replica_stop_replica_carries_the_epoch_before_its_isr_removal():
    """ReplicaStateMachine OfflineReplica @3.4.0: addStopReplicaRequestForBrokers runs before
    removeReplicasFromIsr, so the StopReplica carries the leader epoch the replica knows (0),
    not the bumped one the removal writes (1)."""
    h = _channel_harness("3.7")
    h.ctl.offline_replica(h.ctx, h.zk, 2, [FOO0])
    assert h.ctl.context.states[FOO0][1] == 1
    (_dst, req), = h.sent(StopReplicaRequest)
    assert req.leader_epochs == (0,)


def _shut_down_a_follower(version: str):
    """A 3-broker ZooKeeper cluster at ``version``; the controlled shutdown of a follower of
    t-0: the StopReplicaResponses it sent (kafkasim answers only a StopReplica that failed)."""
    c = Cluster(brokers=3, seed=1, kafka_version=version)
    c.create_topic("t", partitions=1, replication_factor=3)
    c.run(2000)
    leader = c.brokers[1].replica_manager.partitions[("t", 0)].leader_replica_id_opt
    follower = max(b for b in c.brokers if b != leader)
    start = c.now
    c.shutdown(follower)
    c.run(3)   # the two StopReplicas (controlled shutdown, then OfflineReplica) arrive
    answers = [r for r in c.trace.rows if r[0] >= start and r[1] == "send" and
               r[2] == follower and r[5][0] == "StopReplicaResponse"]
    return answers


@pytest.mark.parametrize(("version", "fenced"), [("2.5", False), ("3.4", True), ("3.5", False)])
def test_controlled_shutdown_stop_replica_at_the_followers_own_epoch(version, fenced):
    """KAFKA-13972 (3.5): both StopReplicas of a follower's controlled shutdown carry the epoch
    the follower already has. 2.6-3.4 brokers refuse an equal epoch (FENCED_LEADER_EPOCH), so
    the follower keeps fetching until its process stops; 3.5+ accept it, and before KIP-570
    (2.6) the request has no epoch to check."""
    assert len(_shut_down_a_follower(version)) == (2 if fenced else 0)


def _channel_harness(version: str, live=(1, 2, 3), shutting_down=()):
    """ControllerChannelManagerTest.initContext (brokers 1, 2, 3; controller 1, epoch 1), built
    as tests/test_controller_state_machines_kafka.py builds it: foo-0, foo-1, bar-1 on
    [1, 2, 3] with leaders 1, 2, 3."""
    h = _harness(live=live, shutting_down=shutting_down, controller_id=1, controller_epoch=1,
                 version=version)
    for tp, (leader, isr) in CHANNEL_STATES.items():
        h.put_partition(tp, [1, 2, 3], leader, isr, controller_epoch=1)
    return h


def _zk_reassign(c: Cluster, reassignments: dict) -> dict:
    """zkClient.createPartitionReassignment: the controller's PartitionReassignmentHandler runs
    processZkPartitionReassignment on the content of /admin/reassign_partitions."""
    ctl = c.zk_control_plane.controller_broker()
    return c.zk_control_plane.run_controller(ctl, "zk_reassignments", (reassignments,))


def _zk_preferred_election(c: Cluster, tps) -> dict:
    """zkClient.createPreferredReplicaElection: the controller's PreferredReplicaElectionHandler
    runs processReplicaLeaderElection(ZkTriggered) on the content of
    /admin/preferred_replica_election."""
    ctl = c.zk_control_plane.controller_broker()
    return c.zk_control_plane.run_controller(ctl, "zk_preferred_election", (tps,))


def test_controlled_shutdown_sent_to_a_broker_that_is_not_the_controller():
    """KafkaController.doControlledShutdown @2.8.0 (the same check since 0.8.2): a broker that
    is not the active controller throws ControllerMovedException, which Errors maps to
    STALE_CONTROLLER_EPOCH (11); nothing is shut down."""
    from kafkasim.core.messages import ControlledShutdownRequest, ControlledShutdownResponse
    from kafkasim.runtime.kafka_apis import handle_controlled_shutdown_request

    c = Cluster(3, seed=1, kafka_version="3.7", latency_ms=1, jitter_ms=0)
    c.run(1000)
    other = next(b for b in c.brokers.values() if b.controller is None)
    sent = []
    other.send = lambda dst, msg: sent.append((dst, msg))
    handle_controlled_shutdown_request(other, 3, ControlledShutdownRequest(3, 0))
    assert sent == [(3, ControlledShutdownResponse(E.STALE_CONTROLLER_EPOCH))]
    assert not any(r[1] == "controlled_shutdown" for r in c.trace.rows)
