"""Partition reassignment (KIP-455), ported from Kafka's tests, in ZooKeeper and KRaft modes.

Sources (apache/kafka; tag 3.7.0 and trunk of Sept 2024):

- ``metadata/src/test/java/org/apache/kafka/controller/PartitionReassignmentReplicasTest.java``
  and ``PartitionReassignmentRevertTest.java`` (trunk): ``kafkasim.control.kraft.reassignment``.
- The reassignment cases of ``ReplicationControlManagerTest`` (trunk): testReassignPartitions,
  testCancelReassignPartitions, testReassignPartitionsHandlesNewReassignmentThatRemovesPrevious
  lyAddingReplicas, whole (``tests/test_replication_control_manager_kafka.py`` keeps only their
  AlterPartition steps), on that file's ReplicationControlTestContext (``Ctx``). Kafka's
  ControllerResult is ``(records, response)``; the request is ReassignableTopic-like
  ``(name, [(partition, replicas or None)])``; ListPartitionReassignmentsTopics is ``(name,
  partition indexes)``.
- ``tools/src/test/java/org/apache/kafka/tools/reassign/ReassignPartitionsIntegrationTest.java``
  (3.7.0; ``ReassignPartitionsCommandTest`` on trunk) for its replication behaviour, ``zk`` and
  ``kraft`` as Kafka parametrizes it, through ``Cluster.admin()``: the tool's executeAssignment
  is ``alter_partition_reassignments``, verifyAssignment the listed reassignments and the
  partitions' replicas, cancelAssignment a cancel (None) of the partitions listed as in progress.
- ``KRaftClusterTest.testCreateClusterAndPerformReassignment`` and the reassignment cases of
  ``PlaintextAdminIntegrationTest`` (testInvalidAlterPartitionReassignments,
  testListReassignmentsDoesNotShowNonReassigningPartitions,
  testListReassignmentsDoesNotShowDeletedPartitions), in both modes: the Admin client's errors.
- ZooKeeper mode: ``ReassignPartitionsZNodeTest`` (3.7.0) and ``KafkaZkClientTest
  .testTopicAssignments`` (the topic znode's adding / removing replicas as a new controller reads
  them).

Tests whose docstring says "continued" extend a Kafka test along the Kafka code it names.

Left out: throttles (``leader.replication.throttled.rate`` and the throttled-replicas configs
are not modelled): testAlterReassignmentThrottle and testThrottledReassignment keep their
replication steps, with held fetches standing in for a slow throttle; testLogDirReassignment,
testAlterLogDirReassignmentThrottle (AlterReplicaLogDirs, JBOD);
testReassignmentCompletionDuringPartialUpgrade (brokers on different inter.broker.protocol
versions: kafkasim's rules are cluster-wide); testGenerateAssignmentWithBootstrapServer (the
tool's own placement); ControllerIntegrationTest's reassignment cases (in
``tests/test_zk_controller_kafka.py`` and ``tests/test_reassignment.py``) but
testPartitionReassignmentToBrokerWithOfflineLogDir (no failing log dirs) and
testTopicIdUpgradeAfterReassigningPartitions (no inter.broker.protocol.version upgrade: a
ZooKeeper cluster's topics have ids from creation on, 2.8+);
KafkaZkClientTest.testSetGetAndDeletePartitionReassignment / testReassignPartitionsInProgress
(no KafkaZkClient: the controller is handed the znode's content); KafkaAdminClientTest's
reassignment cases (the client's request and response framing); the JBOD directories of the
KRaft tests.
"""

from __future__ import annotations

import json

import pytest
from clusters import started_kraft
from test_replication_control_manager_kafka import Ctx, isr_with_default_epoch

from kafkasim.control.controller_context import ReplicaAssignment
from kafkasim.control.kraft.reassignment import (
    AlterPartitionReassignmentsResponse,
    InvalidReplicaAssignmentException,
    ListPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
    PartitionAssignment,
    PartitionReassignmentReplicas,
    PartitionReassignmentRevert,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
    is_reassignment_in_progress,
)
from kafkasim.control.kraft.records import (
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRegistration,
)
from kafkasim.control.zookeeper import ReassignPartitionsZNode
from kafkasim.core import errors as E
from kafkasim.runtime.cluster import Cluster

RECOVERED = LeaderRecoveryState.RECOVERED
NONE_REASSIGNING = ListPartitionReassignmentsResponse()
NO_REASSIGNMENT = E.NO_REASSIGNMENT_IN_PROGRESS
MODES = ("zk", "kraft")
TIMEOUT_MS = 60_000


def partition_assignment(replicas) -> PartitionAssignment:
    """PartitionAssignmentTest.partitionAssignment (without directories)."""
    return PartitionAssignment(tuple(replicas))


def registration(replicas, isr, *, removing=(), adding=(), leader, leader_epoch=0,
                 partition_epoch=0) -> PartitionRegistration:
    return PartitionRegistration(tuple(replicas), tuple(isr), tuple(removing), tuple(adding),
                                 leader, RECOVERED, leader_epoch, partition_epoch)


# ============================================================ PartitionReassignmentReplicasTest
def test_none_added_or_removed():
    """testNoneAddedOrRemoved."""
    r = PartitionReassignmentReplicas(partition_assignment([3, 2, 1]),
                                      partition_assignment([3, 2, 1]))
    assert (r.removing, r.adding, r.replicas) == ([], [], [3, 2, 1])


def test_additions():
    """testAdditions: adding is sorted, the replicas keep the target's order."""
    r = PartitionReassignmentReplicas(partition_assignment([3, 2, 1]),
                                      partition_assignment([3, 6, 2, 1, 5]))
    assert (r.removing, r.adding, r.replicas) == ([], [5, 6], [3, 6, 2, 1, 5])


def test_removals():
    """testRemovals: the removing replicas (sorted) follow the target."""
    r = PartitionReassignmentReplicas(partition_assignment([3, 2, 1, 0]),
                                      partition_assignment([3, 1]))
    assert (r.removing, r.adding, r.replicas) == ([0, 2], [], [3, 1, 0, 2])


def test_additions_and_removals():
    """testAdditionsAndRemovals."""
    r = PartitionReassignmentReplicas(partition_assignment([3, 2, 1, 0]),
                                      partition_assignment([7, 3, 1, 9]))
    assert (r.removing, r.adding, r.replicas) == ([0, 2], [7, 9], [7, 3, 1, 9, 0, 2])


def test_rearrangement():
    """testRearrangement."""
    r = PartitionReassignmentReplicas(partition_assignment([3, 2, 1, 0]),
                                      partition_assignment([0, 1, 3, 2]))
    assert (r.removing, r.adding, r.replicas) == ([], [], [0, 1, 3, 2])


def test_does_not_complete_reassignment():
    """testDoesNotCompleteReassignment: 5 is not in the ISR yet."""
    r = PartitionReassignmentReplicas(partition_assignment([0, 1, 2]),
                                      partition_assignment([3, 4, 5]))
    assert r.is_reassignment_in_progress()
    assert r.maybe_complete_reassignment([0, 1, 2, 3, 4]) is None


def test_does_not_complete_reassignment_if_none_ongoing():
    """testDoesNotCompleteReassignmentIfNoneOngoing."""
    r = PartitionReassignmentReplicas([], [], [0, 1, 2])
    assert not r.is_reassignment_in_progress()
    assert r.maybe_complete_reassignment([0, 1, 2]) is None


def test_does_complete_reassignment_all_new_replicas():
    """testDoesCompleteReassignmentAllNewReplicas."""
    r = PartitionReassignmentReplicas(partition_assignment([0, 1, 2]),
                                      partition_assignment([3, 4, 5]))
    assert r.is_reassignment_in_progress()
    done = r.maybe_complete_reassignment([0, 1, 2, 3, 4, 5])
    assert (done.isr, done.replicas) == ([3, 4, 5], [3, 4, 5])


def test_does_complete_reassignment_some_new_replicas():
    """testDoesCompleteReassignmentSomeNewReplicas."""
    r = PartitionReassignmentReplicas(partition_assignment([0, 1, 2]),
                                      partition_assignment([0, 1, 3]))
    assert r.is_reassignment_in_progress()
    done = r.maybe_complete_reassignment([0, 1, 2, 3])
    assert (done.isr, done.replicas) == ([0, 1, 3], [0, 1, 3])


def test_is_reassignment_in_progress():
    """testIsReassignmentInProgress (the static overload, on PartitionRegistrations)."""
    assert is_reassignment_in_progress(registration([0, 1, 3, 2], [0, 1, 3, 2], removing=[2],
                                                    adding=[3], leader=0))
    assert is_reassignment_in_progress(registration([0, 1, 3, 2], [0, 1, 3, 2], removing=[2],
                                                    leader=0))
    assert is_reassignment_in_progress(registration([0, 1, 3, 2], [0, 1, 3, 2], adding=[3],
                                                    leader=0))
    assert not is_reassignment_in_progress(registration([0, 1, 2], [0, 1, 2], leader=0))


def test_does_not_complete_reassignment_if_isr_does_not_have_all_target_replicas():
    """testDoesNotCompleteReassignmentIfIsrDoesNotHaveAllTargetReplicas (trunk, up to 4.2.0):
    Kafka before KAFKA-19975 (``wait_for_adding_only=False``). 4.3.0 turned this case around
    (testDoesNotCompleteReassignmentWhenReplicationFactorDecreasesAndMissingAnAddingReplicasFromISR
    and the other KAFKA-19975 cases: tests/test_reassignment_s23_kafka.py)."""
    r = PartitionReassignmentReplicas(partition_assignment([0, 1, 2]),
                                      partition_assignment([0, 1, 3]))
    assert r.is_reassignment_in_progress()
    assert r.maybe_complete_reassignment([3], wait_for_adding_only=False) is None


def test_original_replicas():
    """testOriginalReplicas."""
    r = PartitionReassignmentReplicas(partition_assignment([0, 1, 2]),
                                      partition_assignment([0, 1, 3]))
    assert r.original_replicas() == [0, 1, 2]


# ============================================================== PartitionReassignmentRevertTest
def _revert(replicas, isr, *, removing=(), adding=()):
    return PartitionReassignmentRevert(registration(
        replicas, isr, removing=removing, adding=adding, leader=3, leader_epoch=100,
        partition_epoch=200))


def test_revert_none_added_or_removed():
    """PartitionReassignmentRevertTest.testNoneAddedOrRemoved."""
    revert = _revert([3, 2, 1], [3, 2])
    assert (revert.replicas, revert.isr, revert.unclean) == ([3, 2, 1], [3, 2], False)


def test_revert_some_removing():
    """PartitionReassignmentRevertTest.testSomeRemoving: removing replicas stay."""
    revert = _revert([3, 2, 1], [3, 2], removing=[2, 1])
    assert (revert.replicas, revert.isr, revert.unclean) == ([3, 2, 1], [3, 2], False)


def test_revert_some_adding():
    """PartitionReassignmentRevertTest.testSomeAdding: adding replicas leave replicas and ISR."""
    revert = _revert([4, 5, 3, 2, 1], [4, 5, 2], adding=[4, 5])
    assert (revert.replicas, revert.isr, revert.unclean) == ([3, 2, 1], [2], False)


def test_revert_some_removing_and_adding():
    """PartitionReassignmentRevertTest.testSomeRemovingAndAdding."""
    revert = _revert([4, 5, 3, 2, 1], [4, 5, 2], removing=[2], adding=[4, 5])
    assert (revert.replicas, revert.isr, revert.unclean) == ([3, 2, 1], [2], False)


def test_revert_isr_special_case():
    """PartitionReassignmentRevertTest.testIsrSpecialCase: an ISR of adding replicas only
    becomes the first original replica, an unclean revert."""
    revert = _revert([4, 5, 3, 2, 1], [4, 5], removing=[2], adding=[4, 5])
    assert (revert.replicas, revert.isr, revert.unclean) == ([3, 2, 1], [3], True)


def test_revert_adding_replicas_contains_all_replicas():
    """PartitionReassignmentRevert, continued: no original replica left is an
    InvalidReplicaAssignmentException."""
    with pytest.raises(InvalidReplicaAssignmentException,
                       match="addingReplicas contains all replicas"):
        _revert([4, 5], [4, 5], adding=[4, 5])


# ============================================ ReplicationControlManagerTest (reassignment cases)
def _alter(ctx, *topics):
    return ctx.rc.alter_partition_reassignments(topics)


def _ok(*partitions):
    return tuple(ReassignablePartitionResponse(p) for p in partitions)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_reassign_partitions(version):
    """testReassignPartitions: a rearrangement completes at once, foo-1 [3, 2, 1] -> [0, 2, 1]
    adds 0 and removes 3, foo:2 does not exist, a topic without partitions is answered empty;
    listing by topic; cancelling foo-1 reverts to [2, 1, 3] with a leader epoch bump, the others
    have nothing to cancel; an AlterPartition that completes the (uncancelled) reassignment
    moves leadership off the removed leader 3: NEW_LEADER_ELECTED (v2+) / FENCED_LEADER_EPOCH."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3)
    ctx.unfence(0, 1, 2, 3)
    foo_id = ctx.create("foo", [[1, 2, 3], [3, 2, 1]]).topic_id
    ctx.create("bar", [[1, 2, 3]])
    assert ctx.rc.list_partition_reassignments(None) == NONE_REASSIGNING
    records, response = _alter(ctx, ("foo", [(0, [3, 2, 1]), (1, [0, 2, 1]), (2, [0, 2, 1])]),
                               ("bar", []))
    assert response == AlterPartitionReassignmentsResponse((
        ReassignableTopicResponse("foo", _ok(0, 1) + (ReassignablePartitionResponse(
            2, E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition foo:2."),)),
        ReassignableTopicResponse("bar")))
    ctx.replay(records)
    current = ListPartitionReassignmentsResponse((OngoingTopicReassignment("foo", (
        OngoingPartitionReassignment(1, (0, 2, 1, 3), (0,), (3,)),)),))
    assert ctx.rc.list_partition_reassignments(None) == current
    assert ctx.rc.list_partition_reassignments([("bar", [0, 1, 2])]) == NONE_REASSIGNING
    assert ctx.rc.list_partition_reassignments([("foo", [0, 1, 2])]) == current
    assert ctx.part("foo", 0) == registration([3, 2, 1], [1, 2, 3], leader=1, partition_epoch=1)
    records, response = _alter(ctx, ("foo", [(0, None), (1, None), (2, None)]),
                               ("bar", [(0, None)]))
    assert records == [PartitionChangeRecord(1, foo_id, replicas=(2, 1, 3), leader=3,
                                             removing_replicas=(), adding_replicas=())]
    assert response == AlterPartitionReassignmentsResponse((
        ReassignableTopicResponse("foo", (
            ReassignablePartitionResponse(0, NO_REASSIGNMENT),
            ReassignablePartitionResponse(1),
            ReassignablePartitionResponse(2, E.UNKNOWN_TOPIC_OR_PARTITION,
                                          "Unable to find partition foo:2."))),
        ReassignableTopicResponse("bar", (ReassignablePartitionResponse(0, NO_REASSIGNMENT),))))
    topic = foo_id if version > 1 else "foo"
    item = (topic, 1, 0, isr_with_default_epoch(3, 0, 2, 1), 1)
    records, resp = ctx.rc.alter_partition(3, 103, [item], request_version=version)
    error = E.NEW_LEADER_ELECTED if version > 1 else E.FENCED_LEADER_EPOCH
    assert [(r.partition, r.error) for r in resp.partitions] == [(1, error)]
    ctx.replay(records)
    assert ctx.rc.list_partition_reassignments(None) == NONE_REASSIGNING


def test_cancel_reassign_partitions():
    """testCancelReassignPartitions: with broker 3 fenced, foo-0 -> [1, 2, 4] completes at once
    (3 was not in the ISR), foo-1 is a rearrangement, unregistered brokers and an empty list
    are INVALID_REPLICA_ASSIGNMENT, bar-0 [4, 3, 2] -> [1, 2, 3, 4, 0] starts adding 0 and 1;
    an AlterPartition adding them to the ISR does not complete it (3 is missing); cancelling bar-0
    drops the adding replicas again with a leader epoch bump."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(0, 1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 3, 4], [0, 1, 2, 3], [4, 3, 1, 0], [2, 3, 4, 1]])
    bar_id = ctx.create("bar", [[4, 3, 2]]).topic_id
    assert ctx.rc.list_partition_reassignments(None) == NONE_REASSIGNING
    ctx.replay(ctx.rc.handle_broker_fenced(3))
    assert ctx.part("foo", 0) == registration([1, 2, 3, 4], [1, 2, 4], leader=1,
                                              partition_epoch=1)
    records, response = _alter(
        ctx, ("foo", [(0, [1, 2, 4]), (1, [1, 2, 3, 0]), (2, [5, 6, 7]), (3, [])]),
        ("bar", [(0, [1, 2, 3, 4, 0])]))
    assert response == AlterPartitionReassignmentsResponse((
        ReassignableTopicResponse("foo", _ok(0, 1) + (
            ReassignablePartitionResponse(2, E.INVALID_REPLICA_ASSIGNMENT,
                                          "The manual partition assignment includes broker 5, "
                                          "but no such broker is registered."),
            ReassignablePartitionResponse(3, E.INVALID_REPLICA_ASSIGNMENT,
                                          "The manual partition assignment includes an empty "
                                          "replica list."))),
        ReassignableTopicResponse("bar", _ok(0))))
    ctx.replay(records)
    assert ctx.part("foo", 0) == registration([1, 2, 4], [1, 2, 4], leader=1, leader_epoch=1,
                                              partition_epoch=2)
    assert ctx.part("foo", 1) == registration([1, 2, 3, 0], [0, 1, 2], leader=0,
                                              partition_epoch=2)
    assert ctx.part("bar", 0) == registration([1, 2, 3, 4, 0], [4, 2], adding=[0, 1], leader=4,
                                              partition_epoch=2)
    current = ListPartitionReassignmentsResponse((OngoingTopicReassignment("bar", (
        OngoingPartitionReassignment(0, (1, 2, 3, 4, 0), (0, 1), ()),)),))
    assert ctx.rc.list_partition_reassignments(None) == current
    assert ctx.rc.list_partition_reassignments([("foo", [0, 1, 2])]) == NONE_REASSIGNING
    assert ctx.rc.list_partition_reassignments([("bar", [0, 1, 2])]) == current
    item = (bar_id, 0, 0, isr_with_default_epoch(4, 1, 2, 0), 2)
    _records, resp = ctx.rc.alter_partition(4, 104, [item])
    (r,) = resp.partitions
    assert (r.error, r.leader, r.leader_epoch, r.isr, r.partition_epoch) == (
        E.NONE, 4, 0, (4, 1, 2, 0), 3)
    records, response = _alter(ctx, ("foo", [(0, None)]), ("bar", [(0, None)]))
    assert records == [PartitionChangeRecord(0, bar_id, replicas=(2, 3, 4), leader=4,
                                             adding_replicas=())]
    assert response == AlterPartitionReassignmentsResponse((
        ReassignableTopicResponse("foo", (ReassignablePartitionResponse(0, NO_REASSIGNMENT),)),
        ReassignableTopicResponse("bar", _ok(0))))
    ctx.replay(records)
    assert ctx.rc.list_partition_reassignments(None) == NONE_REASSIGNING
    assert ctx.part("bar", 0) == registration([2, 3, 4], [4, 2], leader=4, leader_epoch=1,
                                              partition_epoch=3)


def test_reassign_partitions_handles_new_reassignment_that_removes_previously_adding_replicas():
    """testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas: [0, 1]
    -> [2, 3] (2 joins the ISR and leads), then -> [4, 5]: everything not in the new target is
    removing, including 3 that was being added; the leader stays in the replicas until 4 and 5
    join the ISR, then 4 leads."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4, 5)
    ctx.unfence(0, 1, 2, 3, 4, 5)
    ctx.create("topic-1", [[0, 1]])
    assert ctx.rc.list_partition_reassignments(None) == NONE_REASSIGNING
    records, response = _alter(ctx, ("topic-1", [(0, [2, 3])]))
    assert response == AlterPartitionReassignmentsResponse((
        ReassignableTopicResponse("topic-1", _ok(0)),))
    ctx.replay(records)
    current = ListPartitionReassignmentsResponse((OngoingTopicReassignment("topic-1", (
        OngoingPartitionReassignment(0, (2, 3, 0, 1), (2, 3), (0, 1)),)),))
    assert ctx.rc.list_partition_reassignments(None) == current
    p = ctx.part("topic-1")
    _, r = ctx.alter_partition(p.leader, [0, 1, 2], topic="topic-1")
    assert (r.error, r.isr, r.partition_epoch) == (E.NONE, (0, 1, 2), p.partition_epoch + 1)
    records, results = ctx.rc.elect_leaders("PREFERRED", [("topic-1", 0)])
    assert [(r.error, r.error_message) for r in results] == [(E.NONE, None)]
    ctx.replay(records)
    assert ctx.part("topic-1").leader == 2
    records, response = _alter(ctx, ("topic-1", [(0, [4, 5])]))
    assert response == AlterPartitionReassignmentsResponse((
        ReassignableTopicResponse("topic-1", _ok(0)),))
    ctx.replay(records)
    current = ListPartitionReassignmentsResponse((OngoingTopicReassignment("topic-1", (
        OngoingPartitionReassignment(0, (4, 5, 0, 1, 2, 3), (4, 5), (0, 1, 2, 3)),)),))
    assert ctx.rc.list_partition_reassignments(None) == current
    p = ctx.part("topic-1")
    assert p.leader == 2 and p.leader in p.replicas
    _, r = ctx.alter_partition(2, [0, 1, 2, 3, 4, 5], topic="topic-1")
    assert r.error == E.NEW_LEADER_ELECTED
    assert ctx.part("topic-1").leader == 4
    assert ctx.rc.list_partition_reassignments(None) == NONE_REASSIGNING


def test_reassign_partitions_moves_leader_off_a_removed_replica():
    """changePartitionReassignment, continued: [1, 2, 3] with the whole ISR in sync -> [3, 2]
    completes in one record: replicas [3, 2], the ISR without 1, and the leader moved off the
    removed 1 to the first target replica in the ISR (PartitionChangeBuilder.electAnyLeader)."""
    ctx = Ctx()
    ctx.register(1, 2, 3)
    ctx.unfence(1, 2, 3)
    tid = ctx.create("foo", [[1, 2, 3]]).topic_id
    records, response = _alter(ctx, ("foo", [(0, [3, 2])]))
    assert response.responses[0].partitions == _ok(0)
    assert records == [PartitionChangeRecord(0, tid, replicas=(3, 2), isr=(2, 3), leader=3)]
    ctx.replay(records)
    assert ctx.part() == registration([3, 2], [2, 3], leader=3, leader_epoch=1,
                                      partition_epoch=1)


def test_reassign_partitions_to_a_fenced_broker_waits_for_it():
    """changePartitionReassignment, continued: validateManualPartitionAssignment only wants the
    target brokers registered: a fenced one is accepted and stays adding (outside the ISR);
    an unregistered one, a negative id or a broker named twice are INVALID_REPLICA_ASSIGNMENT;
    an unknown topic UNKNOWN_TOPIC_OR_PARTITION."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3)
    ctx.unfence(0, 1, 2, 3)
    ctx.create("foo", [[0, 1, 2], [0, 1, 2]])
    ctx.replay(ctx.rc.handle_broker_fenced(3))
    records, response = _alter(ctx, ("foo", [(0, [0, 1, 3]), (1, [-3, -2, -1])]),
                               ("bar", [(0, [0, 1, 1])]), ("foo", [(1, [0, 1, 1])]))
    assert response == AlterPartitionReassignmentsResponse((
        ReassignableTopicResponse("foo", _ok(0) + (ReassignablePartitionResponse(
            1, E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes broker "
            "-3, but no such broker is registered."),)),
        ReassignableTopicResponse("bar", (ReassignablePartitionResponse(
            0, E.UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic named bar."),)),
        ReassignableTopicResponse("foo", (ReassignablePartitionResponse(
            1, E.INVALID_REPLICA_ASSIGNMENT, "The manual partition assignment includes the "
            "broker 1 more than once."),))))
    ctx.replay(records)
    assert ctx.part("foo", 0) == registration([0, 1, 3, 2], [0, 1, 2], removing=[2], adding=[3],
                                              leader=0, partition_epoch=1)


def test_cancel_reassign_partitions_that_would_need_an_unclean_election():
    """cancelPartitionReassignment, continued: an ISR of adding replicas only (the revert's
    unclean case) is INVALID_REPLICA_ASSIGNMENT unless unclean.leader.election.enable is on for
    the topic; then the revert goes through with the first original replica as the ISR, which
    the (UNCLEAN) election makes the leader."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3)
    ctx.unfence(0, 1, 2, 3)
    tid = ctx.create("foo", [[0, 1]]).topic_id
    ctx.replay(_alter(ctx, ("foo", [(0, [2, 3])]))[0])
    ctx.alter_partition(0, [0, 1, 2])
    ctx.replay(ctx.rc.elect_leaders("PREFERRED", [("foo", 0)])[0])   # 2 leads
    ctx.alter_partition(2, [2])                                        # 0 and 1 fall behind
    assert ctx.part() == registration([2, 3, 0, 1], [2], removing=[0, 1], adding=[2, 3],
                                      leader=2, leader_epoch=1, partition_epoch=4)
    records, response = _alter(ctx, ("foo", [(0, None)]))
    assert (records, response.responses[0].partitions) == ([], (ReassignablePartitionResponse(
        0, E.INVALID_REPLICA_ASSIGNMENT, "Unable to revert partition assignment for foo:0 "
        "because it would require an unclean leader election."),))
    ctx.alter_topic_config("foo", "unclean.leader.election.enable", "true")
    records, response = _alter(ctx, ("foo", [(0, None)]))
    assert response.responses[0].partitions == _ok(0)
    assert records == [PartitionChangeRecord(0, tid, isr=(0,), leader=0, replicas=(0, 1),
                                             removing_replicas=(), adding_replicas=())]


# ==================================================== ReassignPartitionsIntegrationTest (3.7.0)
RACKS = {0: "rack0", 1: "rack0", 2: "rack1", 3: "rack1", 4: "rack1"}
TOPICS = {"foo": [[0, 1, 2], [1, 2, 3]], "bar": [[3, 2, 1]],
          "baz": [[1, 0, 2], [2, 0, 1], [0, 2, 1]]}


def _test_cluster(mode: str, *, version: str = "3.7", rules: dict | None = None,
                  brokers=tuple(RACKS), topics=None) -> Cluster:
    """ReassignPartitionsTestCluster: brokers 0-4 on racks rack0, rack0, rack1, rack1, rack1,
    no automatic leader rebalance, replica.lag.time.max.ms 1000, replica.fetch.backoff.ms 100,
    topics foo, bar and baz created with manual assignments."""
    c = Cluster(list(brokers), seed=1, kafka_version=version, rules=rules,
                racks={b: RACKS[b] for b in brokers if b in RACKS},
                metadata_mode="kraft" if mode == "kraft" else "zookeeper",
                config={"auto.leader.rebalance.enable": False,
                        "replica.lag.time.max.ms": 1000, "replica.fetch.backoff.ms": 100})
    if mode == "kraft":
        started_kraft(c)
    else:
        assert c.run_until(lambda cl: cl.controller_id() >= 0, TIMEOUT_MS)
    for name, parts in (TOPICS if topics is None else topics).items():
        c.create_topic(name, len(parts), assignment=parts)
    assert c.run_until(lambda cl: all(
        sorted(st["isr"]) == sorted(st["replicas"]) for t in cl.topics.names()
        for st in (cl.inspect.partition_state(t, p) for p in cl.assignment(t))), TIMEOUT_MS)
    return c


def _produce(c: Cluster, topic: str, partition: int, n: int) -> None:
    """produceMessages: ``n`` records with acks=all."""
    p = c.producer(acks="all")
    for i in range(n):
        p.send(topic, f"{topic}-{partition}-{i}", partition=partition)
    assert p.flush()


def _replicas(c: Cluster, tp) -> list[int]:
    return c.inspect.partition_state(*tp)["replicas"]


def _wait_for_reassignment(c: Cluster, targets: dict) -> None:
    """waitForVerifyAssignment(final): nothing in progress for the partitions and each one's
    replicas are its target, in the target's order."""
    def done(cl):
        return not cl.admin().list_partition_reassignments(list(targets)) and all(
            _replicas(cl, tp) == list(t) for tp, t in targets.items())
    assert c.run_until(done, TIMEOUT_MS), {tp: _replicas(c, tp) for tp in targets}


def _verify_replica_deleted(c: Cluster, tp, broker: int) -> None:
    """verifyReplicaDeleted: the broker hosts neither the partition nor its log."""
    b = c.brokers[broker]
    assert c.run_until(lambda cl: tp not in b.replica_manager.partitions and tp not in b.logs,
                       TIMEOUT_MS), f"replica {broker} of {tp} not deleted"


def _execute_and_verify_reassignment(c: Cluster) -> None:
    """executeAndVerifyReassignment: foo-0 [0, 1, 2] -> [0, 1, 3], bar-0 [3, 2, 1] -> [3, 2, 0];
    both complete, the replicas dropped (2 of foo-0, 1 of bar-0) are deleted."""
    foo0, bar0 = ("foo", 0), ("bar", 0)
    targets = {foo0: [0, 1, 3], bar0: [3, 2, 0]}
    assert (_replicas(c, foo0), _replicas(c, bar0)) == ([0, 1, 2], [3, 2, 1])
    assert c.admin().alter_partition_reassignments(targets) == {foo0: E.NONE, bar0: E.NONE}
    _wait_for_reassignment(c, targets)
    assert (c.leader(*foo0), c.leader(*bar0)) == (0, 3)
    _verify_replica_deleted(c, foo0, 2)
    _verify_replica_deleted(c, bar0, 1)


@pytest.mark.parametrize("mode", MODES)
def test_reassignment(mode):
    """testReassignment."""
    _execute_and_verify_reassignment(_test_cluster(mode))


@pytest.mark.parametrize(("mode", "version", "rules"), [
    ("zk", "3.7", {"alter_isr": False}),   # 3.7.0: zk at inter.broker.protocol 2.7-IV1
    ("kraft", "3.3", None),                # trunk: KRaft at metadata.version 3.3-IV0
])
def test_reassignment_with_alter_partition_disabled(mode, version, rules):
    """testReassignmentWithAlterPartitionDisabled: in ZooKeeper mode without AlterPartition the
    leaders write the ISR to ZooKeeper and the controller's watch on each reassigning partition
    completes the reassignment; trunk runs it in KRaft at the oldest metadata.version."""
    _execute_and_verify_reassignment(_test_cluster(mode, version=version, rules=rules))


@pytest.mark.parametrize("mode", MODES)
def test_high_water_mark_after_partition_reassignment(mode):
    """testHighWaterMarkAfterPartitionReassignment (3.7.0): foo-0's leader log starts over at
    offset 123 (truncateFullyAndStartAt); after [0, 1, 2] -> [3, 1, 2] broker 3 leads (the leader
    moved off the removed 0 to the first target replica) with high watermark 123."""
    c = _test_cluster(mode)
    tp = ("foo", 0)
    c.brokers[0].logs[tp].truncate_fully_and_start_at(123)
    assert c.admin().alter_partition_reassignments({tp: [3, 1, 2]}) == {tp: E.NONE}
    _wait_for_reassignment(c, {tp: [3, 1, 2]})
    assert c.run_until(lambda cl: cl.brokers[3].replica_manager.partitions[tp].is_leader,
                       TIMEOUT_MS)
    assert c.brokers[3].logs[tp].high_watermark == 123


@pytest.mark.parametrize("mode", MODES)
def test_high_water_mark_after_partition_reassignment_trunk(mode):
    """testHighWaterMarkAfterPartitionReassignment (trunk): 100 records on foo-0, then [0, 1, 2]
    -> [3, 1, 2]: the latest offset (ListOffsets on the new leader 3) is 100."""
    c = _test_cluster(mode)
    tp = ("foo", 0)
    _produce(c, "foo", 0, 100)
    c.admin().alter_partition_reassignments({tp: [3, 1, 2]})
    _wait_for_reassignment(c, {tp: [3, 1, 2]})
    assert c.run_until(lambda cl: cl.leader(*tp) == 3 and
                       cl.admin().list_offsets("foo", 0) == 100, TIMEOUT_MS)


def _hold_fetches_of(c: Cluster, broker: int) -> None:
    """A follower that cannot catch up: its fetch answers are held (kafkasim's stand-in for a
    replication throttle of a few bytes per second)."""
    c.hold(type="FetchResponse", dst=broker)


@pytest.mark.parametrize("mode", MODES)
def test_alter_reassignment_throttle(mode):
    """testAlterReassignmentThrottle, without the throttle: foo-0 -> [0, 3, 2] and baz-2
    [0, 2, 1] -> [3, 2, 1] are slowed down; executing the same assignment again while they run
    (``--additional``) is accepted and changes nothing; they complete once 3 can fetch."""
    c = _test_cluster(mode)
    _produce(c, "foo", 0, 50)
    _produce(c, "baz", 2, 60)
    targets = {("foo", 0): [0, 3, 2], ("baz", 2): [3, 2, 1]}
    _hold_fetches_of(c, 3)
    assert c.admin().alter_partition_reassignments(targets) == dict.fromkeys(targets, E.NONE)
    c.run(2000)
    ongoing = c.admin().list_partition_reassignments()
    assert c.admin().alter_partition_reassignments(targets) == dict.fromkeys(targets, E.NONE)
    c.run(500)
    assert c.admin().list_partition_reassignments() == ongoing == {
        ("foo", 0): {"replicas": [0, 3, 2, 1], "adding_replicas": [3],
                     "removing_replicas": [1]},
        ("baz", 2): {"replicas": [3, 2, 1, 0], "adding_replicas": [3],
                     "removing_replicas": [0]}}
    c.release()
    _wait_for_reassignment(c, targets)
    assert c.run_until(lambda cl: cl.log(3, "foo").log_end_offset == 50 and
                       cl.log(3, "baz", 2).log_end_offset == 60, TIMEOUT_MS)


@pytest.mark.parametrize("mode", MODES)
def test_throttled_reassignment(mode):
    """testThrottledReassignment, without the throttle: before, foo-0 is [0, 1, 2] and baz-2
    [0, 2, 1]; while broker 3 is slow, at least one partition is still moving, listed with its
    target replicas in front; then both complete."""
    c = _test_cluster(mode)
    _produce(c, "foo", 0, 50)
    _produce(c, "baz", 2, 60)
    assert (_replicas(c, ("foo", 0)), _replicas(c, ("baz", 2))) == ([0, 1, 2], [0, 2, 1])
    targets = {("foo", 0): [0, 3, 2], ("baz", 2): [3, 2, 1]}
    _hold_fetches_of(c, 3)
    c.admin().alter_partition_reassignments(targets)
    c.run(1000)
    ongoing = c.admin().list_partition_reassignments(list(targets))
    assert ongoing
    for tp, st in ongoing.items():
        assert st["replicas"][:3] == targets[tp]
    c.release()
    _wait_for_reassignment(c, targets)


@pytest.mark.parametrize("mode", MODES)
def test_produce_and_consume_with_reassignment_in_progress(mode):
    """testProduceAndConsumeWithReassignmentInProgress: while baz-2 [0, 2, 1] -> [3, 2, 1] is
    held up, 100 more records are produced (acks=all: the ISR is the old replicas) and a
    consumer reads them; then the reassignment completes."""
    c = _test_cluster(mode)
    tp = ("baz", 2)
    _produce(c, "baz", 2, 60)
    _hold_fetches_of(c, 3)
    c.admin().alter_partition_reassignments({tp: [3, 2, 1]})
    _produce(c, "baz", 2, 100)
    consumer = c.consumer(group="group", auto_offset_reset="earliest")
    consumer.assign([tp])
    got = []
    assert c.run_until(lambda cl: len(got) >= 100 or got.extend(consumer.poll(100)) or
                       len(got) >= 100, TIMEOUT_MS)
    assert tp in c.admin().list_partition_reassignments()
    c.release()
    _wait_for_reassignment(c, {tp: [3, 2, 1]})


def _cancel(c: Cluster, tps) -> dict:
    """cancelAssignment: cancel (None) the partitions listed as in progress (the tool skips
    ones only adding); returns the answers."""
    ongoing = c.admin().list_partition_reassignments(list(tps))
    wanted = [tp for tp, st in ongoing.items()
              if not st["adding_replicas"] or st["removing_replicas"]]
    return c.admin().alter_partition_reassignments(dict.fromkeys(wanted))


@pytest.mark.parametrize("mode", MODES)
def test_cancellation(mode):
    """testCancellation: foo-0 [0, 1, 2] -> [0, 1, 3] and baz-1 [2, 0, 1] -> [0, 2, 3] with 3
    held back: both in progress (current replicas [0, 1, 3, 2] and [0, 2, 3, 1], describe shows
    the adding and removing replicas); cancelling both succeeds, cancelling again finds nothing
    in progress (and the Admin answers NO_REASSIGNMENT_IN_PROGRESS); 3's replicas are deleted,
    and the replicas are the origin ones in the reassignment's order."""
    c = _test_cluster(mode)
    foo0, baz1 = ("foo", 0), ("baz", 1)
    _produce(c, "foo", 0, 200)
    _produce(c, "baz", 1, 200)
    _hold_fetches_of(c, 3)
    c.admin().alter_partition_reassignments({foo0: [0, 1, 3], baz1: [0, 2, 3]})
    c.run(1000)
    assert c.admin().list_partition_reassignments() == {
        foo0: {"replicas": [0, 1, 3, 2], "adding_replicas": [3], "removing_replicas": [2]},
        baz1: {"replicas": [0, 2, 3, 1], "adding_replicas": [3], "removing_replicas": [1]}}
    text = c.describe("foo")
    assert "\tReplicas: 0,1,3,2\tIsr: 0,1,2\tAdding Replicas: 3\tRemoving Replicas: 2" in text
    assert "ReplicationFactor: 3\t" in text
    assert _cancel(c, [foo0, baz1]) == {foo0: E.NONE, baz1: E.NONE}
    assert _cancel(c, [foo0, baz1]) == {}
    assert c.admin().alter_partition_reassignments_result({foo0: None}) == {
        foo0: (E.NO_REASSIGNMENT_IN_PROGRESS, None if mode == "kraft" else
               "No partition reassignment is in progress.")}
    assert not c.admin().list_partition_reassignments()
    c.release()
    _verify_replica_deleted(c, foo0, 3)
    _verify_replica_deleted(c, baz1, 3)
    c.run(500)
    # the origin replicas are the current ones without the adding ones, in the current order:
    # baz-1 does not get its old order [2, 0, 1] back (ReplicaAssignment.originReplicas,
    # PartitionReassignmentReplicas.originalReplicas)
    assert (_replicas(c, foo0), _replicas(c, baz1)) == ([0, 1, 2], [0, 2, 1])
    assert "Adding Replicas" not in c.describe("foo")


@pytest.mark.parametrize("mode", MODES)
def test_cancellation_with_adding_replica_in_isr(mode):
    """testCancellationWithAddingReplicaInIsr: foo-0 [0, 1, 2] -> [0, 3, 4] with 4 held back:
    3 joins the ISR ({0, 1, 2, 3}); cancelling drops 3 and 4 again (out of the ISR, replicas
    deleted) and leaves [0, 1, 2] with leader 0."""
    c = _test_cluster(mode)
    tp = ("foo", 0)
    _produce(c, "foo", 0, 200)
    _hold_fetches_of(c, 4)
    c.admin().alter_partition_reassignments({tp: [0, 3, 4]})
    assert c.run_until(lambda cl: sorted(cl.isr("foo")) == [0, 1, 2, 3], TIMEOUT_MS)
    assert _cancel(c, [tp]) == {tp: E.NONE}
    _verify_replica_deleted(c, tp, 3)
    _verify_replica_deleted(c, tp, 4)
    c.release()
    c.run(500)
    st = c.inspect.partition_state(*tp)
    assert (st["replicas"], sorted(st["isr"]), st["leader"]) == ([0, 1, 2], [0, 1, 2], 0)
    assert not c.admin().list_partition_reassignments()


@pytest.mark.parametrize("mode", MODES)
def test_reassigning_replica_order(mode):
    """testReassignment, continued: the order of the replicas while bar-0 [3, 2, 1] moves to
    [4, 0] (0 and 4 held back). ZooKeeper mode: RS = (TRS ++ ORS).distinct, AR and RR in RS
    order (ReplicaAssignment.reassignTo); KRaft: the target then the removing replicas, adding
    and removing sorted (PartitionReassignmentReplicas). Either way describe shows them, and once
    done the leader has moved off the removed 3 to the first target replica, 4."""
    c = _test_cluster(mode)
    tp = ("bar", 0)
    _produce(c, "bar", 0, 30)
    _hold_fetches_of(c, 0)
    _hold_fetches_of(c, 4)
    c.admin().alter_partition_reassignments({tp: [4, 0]})
    c.run(1000)
    ongoing = {"zk": {"replicas": [4, 0, 3, 2, 1], "adding_replicas": [4, 0],
                      "removing_replicas": [3, 2, 1]},
               "kraft": {"replicas": [4, 0, 1, 2, 3], "adding_replicas": [0, 4],
                         "removing_replicas": [1, 2, 3]}}[mode]
    assert c.admin().list_partition_reassignments() == {tp: ongoing}
    reps = ",".join(map(str, ongoing["replicas"]))
    adding = ",".join(map(str, ongoing["adding_replicas"]))
    removing = ",".join(map(str, ongoing["removing_replicas"]))
    text = c.describe("bar")
    assert f"\tLeader: 3\tReplicas: {reps}\tIsr: 3,2,1\tAdding Replicas: {adding}" \
           f"\tRemoving Replicas: {removing}" in text
    assert "ReplicationFactor: 3\t" in text   # replicas - adding (TopicCommand, 2.6+)
    c.release()
    _wait_for_reassignment(c, {tp: [4, 0]})
    c.run(500)
    st = c.inspect.partition_state(*tp)
    assert (st["leader"], sorted(st["isr"])) == (4, [0, 4])
    for b in (1, 2, 3):
        _verify_replica_deleted(c, tp, b)


@pytest.mark.parametrize("mode", MODES)
def test_new_reassignment_replaces_one_in_progress(mode):
    """A second target while t-0 [0, 1] -> [2, 3] is in progress (KafkaController
    .maybeBuildReassignment: reassignTo from the origin replicas, U3 stops the replicas no
    longer wanted at once; ReplicationControlManager.changePartitionReassignment: everything
    not in the new target is removing, including the replicas being added): -> [4, 0]."""
    c = _test_cluster(mode, topics={"t": [[0, 1]]})
    tp = ("t", 0)
    _produce(c, "t", 0, 30)
    for b in (2, 3, 4):
        _hold_fetches_of(c, b)
    c.admin().alter_partition_reassignments({tp: [2, 3]})
    c.run(1000)
    assert c.admin().list_partition_reassignments() == {
        tp: {"replicas": [2, 3, 0, 1], "adding_replicas": [2, 3], "removing_replicas": [0, 1]}}
    c.admin().alter_partition_reassignments({tp: [4, 0]})
    c.run(1000)
    second = {"zk": {"replicas": [4, 0, 1], "adding_replicas": [4], "removing_replicas": [1]},
              "kraft": {"replicas": [4, 0, 1, 2, 3], "adding_replicas": [4],
                        "removing_replicas": [1, 2, 3]}}[mode]
    assert c.admin().list_partition_reassignments() == {tp: second}
    if mode == "zk":   # U3: 2 and 3 are stopped and deleted before the reassignment completes
        _verify_replica_deleted(c, tp, 2)
        _verify_replica_deleted(c, tp, 3)
    c.release()
    _wait_for_reassignment(c, {tp: [4, 0]})
    for b in (1, 2, 3):
        _verify_replica_deleted(c, tp, b)
    assert c.run_until(lambda cl: cl.log(4, "t").log_end_offset == 30, TIMEOUT_MS)


@pytest.mark.parametrize("mode", MODES)
def test_cancel_keeps_the_reassignment_replica_order(mode):
    """cancelAssignment, continued: cancelling bar-0 [3, 2, 1] -> [4, 0] restores the origin
    replicas in the order the reassignment wrote them: [3, 2, 1] in ZooKeeper mode (RS keeps
    ORS's order after TRS), [1, 2, 3] in KRaft (the removing replicas were sorted), so the
    preferred leader becomes 1 there while 3 keeps leading."""
    c = _test_cluster(mode)
    tp = ("bar", 0)
    _hold_fetches_of(c, 0)
    _hold_fetches_of(c, 4)
    c.admin().alter_partition_reassignments({tp: [4, 0]})
    c.run(1000)
    assert c.admin().alter_partition_reassignments({tp: None}) == {tp: E.NONE}
    c.release()
    c.run(1000)
    st = c.inspect.partition_state(*tp)
    want = [3, 2, 1] if mode == "zk" else [1, 2, 3]
    assert (st["replicas"], st["leader"], sorted(st["isr"])) == (want, 3, [1, 2, 3])
    _verify_replica_deleted(c, tp, 0)
    _verify_replica_deleted(c, tp, 4)


@pytest.mark.parametrize("mode", MODES)
def test_reassignment_under_load_keeps_the_invariants(mode):
    """testProduceAndConsumeWithReassignmentInProgress, continued under kafkasim's invariant
    checkers: acks=all records keep flowing while foo-0 [0, 1, 2] -> [3, 4, 0] completes (0
    keeps leading: it is in the target ISR) and bar-0's reassignment is cancelled; every record
    is acked, none is lost, and no safety invariant breaks. In KRaft the removed replicas may
    delete their logs before the leader has dropped them from its cached ISR (every broker
    applies the metadata on its own); they are no replicas any more, which WeakIsr allows."""
    from kafkasim.observe import checks

    c = _test_cluster(mode, topics={"foo": [[0, 1, 2]], "bar": [[3, 2, 1]]})
    suite = checks.attach(c)
    p = c.producer(acks="all", linger_ms=1)
    sent = [p.send("foo", f"a{i}", partition=0) for i in range(100)]
    sent += [p.send("bar", f"b{i}", partition=0) for i in range(100)]
    c.run(50)
    c.admin().alter_partition_reassignments({("foo", 0): [3, 4, 0], ("bar", 0): [4, 0]})
    sent += [p.send("foo", f"c{i}", partition=0) for i in range(100)]
    sent += [p.send("bar", f"d{i}", partition=0) for i in range(100)]
    c.run(200)
    c.admin().alter_partition_reassignments({("bar", 0): None})
    sent += [p.send("bar", f"e{i}", partition=0) for i in range(100)]
    assert p.flush()
    _wait_for_reassignment(c, {("foo", 0): [3, 4, 0]})
    c.run(2000)
    assert suite.ok, suite.report()
    assert all(r.status == "acked" for r in sent)
    st = c.inspect.partition_state("foo", 0)
    assert (st["leader"], sorted(st["isr"])) == (0, [0, 3, 4])
    assert [v for _o, _e, v in c.log_records(3, "foo")] == \
        [f"a{i}" for i in range(100)] + [f"c{i}" for i in range(100)]


# ============================================= KRaftClusterTest, PlaintextAdminIntegrationTest
@pytest.mark.parametrize("mode", MODES)
def test_create_cluster_and_perform_reassignment(mode):
    """KRaftClusterTest.testCreateClusterAndPerformReassignment (also run in ZooKeeper mode):
    four reassignments at once (a reordering, a swap of 3 for 0, a shrink to two replicas, a
    growth to four) all complete; each broker hosts exactly the partitions it is a replica of."""
    c = _test_cluster(mode, brokers=(0, 1, 2, 3), topics={
        "foo": [[0, 1, 2], [1, 2, 3], [2, 3, 0], [3, 2, 1]]})
    assert c.admin().list_partition_reassignments() == {}
    targets = {("foo", 0): [2, 1, 0], ("foo", 1): [0, 1, 2], ("foo", 2): [2, 3],
               ("foo", 3): [3, 2, 0, 1]}
    assert set(c.admin().alter_partition_reassignments(targets).values()) == {E.NONE}
    _wait_for_reassignment(c, targets)
    hosted = {0: [True, True, False, True], 1: [True, True, False, True],
              2: [True, True, True, True], 3: [False, False, True, True]}
    assert c.run_until(lambda cl: all(
        [("foo", p) in cl.brokers[b].replica_manager.partitions for p in range(4)] == want
        for b, want in hosted.items()), TIMEOUT_MS)


@pytest.mark.parametrize("mode", MODES)
def test_invalid_alter_partition_reassignments(mode):
    """PlaintextAdminIntegrationTest.testInvalidAlterPartitionReassignments: unknown topics and
    partitions are UNKNOWN_TOPIC_OR_PARTITION (cancelling one differs by mode); a broker that
    does not exist, negative ids and
    duplicates are INVALID_REPLICA_ASSIGNMENT, with each controller's message
    (KafkaController.validateReplicas / ReplicationControlManager
    .validateManualPartitionAssignment)."""
    c = _test_cluster(mode, brokers=(0, 1, 2), topics={})
    c.create_topic("alter-reassignments-topic-1", 4, 3)
    topic = "alter-reassignments-topic-1"
    valid = [0, 1, 2]
    res = c.admin().alter_partition_reassignments({
        (topic, 0): valid, (topic, 1): valid, (topic, 2): valid, ("topicA", 0): valid,
        (topic, 4): valid})
    assert res[("topicA", 0)] == res[(topic, 4)] == E.UNKNOWN_TOPIC_OR_PARTITION
    # cancelling one: ZooKeeper mode finds no reassignment in the (empty) assignment first
    # (maybeBuildReassignment), KRaft the missing topic (alterPartitionReassignment)
    assert c.admin().alter_partition_reassignments({("topicA", 0): None}) == {("topicA", 0): (
        E.NO_REASSIGNMENT_IN_PROGRESS if mode == "zk" else E.UNKNOWN_TOPIC_OR_PARTITION)}
    res = c.admin().alter_partition_reassignments_result({
        (topic, 0): [0, 1, 2, 3], (topic, 1): [-3, -2, -1], (topic, 2): [0, 1, 1]})
    assert {err for err, _m in res.values()} == {E.INVALID_REPLICA_ASSIGNMENT}
    if mode == "kraft":
        assert [m for _e, m in res.values()] == [
            "The manual partition assignment includes broker 3, but no such broker is "
            "registered.",
            "The manual partition assignment includes broker -3, but no such broker is "
            "registered.",
            "The manual partition assignment includes the broker 1 more than once."]
    else:
        assert [m for _e, m in res.values()] == [
            "Replica assignment has brokers that are not alive. Replica list: [3], live broker "
            "list: [0, 1, 2]",
            "Invalid broker id in replica list: [-3, -2, -1]",
            "Duplicate replica ids in partition reassignment replica list: [0, 1, 1]"]


@pytest.mark.parametrize("mode", MODES)
def test_list_reassignments_does_not_show_non_reassigning_partitions(mode):
    """PlaintextAdminIntegrationTest.testListReassignmentsDoesNotShowNonReassigningPartitions."""
    c = _test_cluster(mode, brokers=(0, 1, 2), topics={})
    c.create_topic("list-reassignments-no-reassignments", 1, 3)
    tp = ("list-reassignments-no-reassignments", 0)
    assert c.admin().list_partition_reassignments([tp]) == {}
    assert c.admin().list_partition_reassignments() == {}


@pytest.mark.parametrize("mode", MODES)
def test_list_reassignments_does_not_show_deleted_partitions(mode):
    """PlaintextAdminIntegrationTest.testListReassignmentsDoesNotShowDeletedPartitions: a
    partition of a topic that does not exist is not listed."""
    c = _test_cluster(mode, brokers=(0, 1, 2), topics={})
    tp = ("list-reassignments-no-reassignments", 0)
    assert c.admin().list_partition_reassignments([tp]) == {}
    assert c.admin().list_partition_reassignments() == {}


@pytest.mark.parametrize("mode", MODES)
def test_reassignment_to_a_dead_broker(mode):
    """Reassigning to a broker that is down (KafkaController.validateReplicas /
    ReplicationControlManager.validateManualPartitionAssignment, continued): ZooKeeper mode
    refuses an adding replica that is not a live broker (INVALID_REPLICA_ASSIGNMENT); KRaft
    accepts a registered, fenced broker, and the reassignment waits for it: it completes once the
    broker is back and in the ISR."""
    c = _test_cluster(mode, brokers=(0, 1, 2, 3), topics={"foo": [[0, 1, 2]]})
    tp = ("foo", 0)
    _produce(c, "foo", 0, 20)
    c.shutdown(3)
    assert c.run_until(lambda cl: cl.brokers[3].state == "stopped", TIMEOUT_MS)
    c.run(15_000)   # the KRaft controller fences it once its session expires
    res = c.admin().alter_partition_reassignments_result({tp: [0, 1, 3]})
    if mode == "zk":
        assert res == {tp: (E.INVALID_REPLICA_ASSIGNMENT, "Replica assignment has brokers that "
                            "are not alive. Replica list: [3], live broker list: [0, 1, 2]")}
        return
    assert res == {tp: (E.NONE, None)}
    c.run(2000)
    assert c.admin().list_partition_reassignments() == {
        tp: {"replicas": [0, 1, 3, 2], "adding_replicas": [3], "removing_replicas": [2]}}
    assert c.start(3)
    _wait_for_reassignment(c, {tp: [0, 1, 3]})
    _verify_replica_deleted(c, tp, 2)
    assert c.run_until(lambda cl: cl.log(3, "foo").log_end_offset == 20, TIMEOUT_MS)


# ======================================================= ZooKeeper mode: znodes (3.7.0)
REASSIGNMENT_JSON = b'{"version":1,"partitions":[{"topic":"foo","partition":0,"replicas":[1,2]}]}'


def test_encode():
    """ReassignPartitionsZNodeTest.testEncode."""
    assert ReassignPartitionsZNode.encode({("foo", 0): [1, 2]}) == REASSIGNMENT_JSON
    assert ReassignPartitionsZNode.path == "/admin/reassign_partitions"


def test_decode_invalid_json():
    """ReassignPartitionsZNodeTest.testDecodeInvalidJson."""
    with pytest.raises(json.JSONDecodeError):
        ReassignPartitionsZNode.decode(b"invalid json")


def test_decode_valid_json():
    """ReassignPartitionsZNodeTest.testDecodeValidJson."""
    assert ReassignPartitionsZNode.decode(REASSIGNMENT_JSON)[("foo", 0)] == [1, 2]


def test_topic_assignments():
    """KafkaZkClientTest.testTopicAssignments: the topic znode keeps a partition's adding and
    removing replicas (setTopicAssignmentRaw), and a new controller reads back the same
    ReplicaAssignment (getPartitionAssignmentForTopics, in onControllerFailover). Kafka's RS
    [1, 2, 3], AR [1], RR [3] has its target [1, 2] in sync, so the new controller would
    complete it at once; here AR is [3] and RR [1] (target [2, 3]), which stays in progress."""
    c = _test_cluster("zk", brokers=(1, 2, 3), topics={"t": [[1, 2]]})
    old = c.controller_id()
    ctl = c.brokers[old].controller
    expected = ReplicaAssignment((1, 2, 3), (3,), (1,))
    ctl.context.update_partition_full_replica_assignment(("t", 0), expected)
    ctl._write_assignment(c.zk, "t")
    znode = json.loads(c.zk.get("/brokers/topics/t").data)
    assert (znode["partitions"], znode["adding_replicas"], znode["removing_replicas"]) == (
        {"0": [1, 2, 3]}, {"0": [3]}, {"0": [1]})
    c.crash(old)
    assert c.run_until(lambda cl: cl.controller_id() not in (-1, old), TIMEOUT_MS)
    new = c.brokers[c.controller_id()].controller
    assert new.context.partition_full_replica_assignment(("t", 0)) == expected
