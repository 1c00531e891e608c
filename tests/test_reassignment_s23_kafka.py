"""KRaft reassignment completion of 4.3.0 (KAFKA-19975), ported from Kafka's tests.

Sources (confluentinc/kafka mirror; 4.3.0 = a9ce322153, 4.2.0 = a18251bae0):

- ``metadata/src/test/java/org/apache/kafka/controller/PartitionReassignmentReplicasTest.java``
  @4.3.0: the cases KAFKA-19975 (apache/kafka #21114, commit 3d267d4536, in 4.3.0 and not in
  4.2.0) added or turned around. ``PartitionReassignmentReplicas.maybeCompleteReassignment``
  now waits for the *adding* replicas to be in the ISR, and for every target replica only when
  the reassignment removes more replicas than it adds; before, every target replica had to be
  in the ISR, so an out-of-sync replica that the reassignment keeps blocked it. kafkasim: the
  rule ``reassignment_waits_for_adding_replicas_only`` (since 4.3), the keyword
  ``wait_for_adding_only`` of ``maybe_complete_reassignment`` (default True, 4.3.0), the
  builder's ``set_reassignment_waits_for_adding_replicas_only`` and
  ReplicationControlManager's ``reassignment_waits_for_adding_replicas_only``.
- ``ReplicationControlManagerTest.testCancelReassignPartitions`` @4.3.0, its AlterPartition
  step continued (Kafka's test does not replay that step's records).
- ``ReassignPartitionsCommandTest.testReassignment``'s cluster set-up, continued on a KRaft
  cluster of 4.2 and 4.3 with a kept replica down.

The pre-4.3.0 case (testDoesNotCompleteReassignmentIfIsrDoesNotHaveAllTargetReplicas, trunk to
4.2.0) is in tests/test_reassignment_kafka.py.
"""

from __future__ import annotations

import pytest
from test_reassignment_kafka import TIMEOUT_MS, _replicas, _test_cluster, partition_assignment
from test_replication_control_manager_kafka import Ctx, isr_with_default_epoch

from kafkasim.control.kraft.reassignment import PartitionReassignmentReplicas
from kafkasim.control.kraft.records import PartitionChangeRecord, PartitionRegistration
from kafkasim.core import errors as E
from kafkasim.settings.versions import rules_for


def _replicas_of(current, target) -> PartitionReassignmentReplicas:
    r = PartitionReassignmentReplicas(partition_assignment(current), partition_assignment(target))
    assert r.is_reassignment_in_progress()
    return r


# ======================================================= PartitionReassignmentReplicasTest @4.3.0
def test_can_complete_reassignment_all_new_replicas():
    """testCanCompleteReassignmentAllNewReplicas @4.3.0 (testDoesComplete... before)."""
    done = _replicas_of([0, 1, 2], [3, 4, 5]).maybe_complete_reassignment([0, 1, 2, 3, 4, 5])
    assert (done.isr, done.replicas) == ([3, 4, 5], [3, 4, 5])


def test_can_complete_reassignment_some_new_replicas():
    """testCanCompleteReassignmentSomeNewReplicas @4.3.0 (testDoesComplete... before)."""
    done = _replicas_of([0, 1, 2], [0, 1, 3]).maybe_complete_reassignment([0, 1, 2, 3])
    assert (done.isr, done.replicas) == ([0, 1, 3], [0, 1, 3])


@pytest.mark.parametrize(("wait_for_adding_only", "completes"), [(True, True), (False, False)])
def test_can_complete_reassignment_if_isr_does_not_have_an_existing_target_replica(
        wait_for_adding_only, completes):
    """testCanCompleteReassignmentIfIsrDoesNotHaveAnExistingTargetReplica @4.3.0: [0, 1, 2] ->
    [0, 1, 3] with 1 out of sync completes (ISR [0, 3]); before 4.3.0 it waited for 1."""
    done = _replicas_of([0, 1, 2], [0, 1, 3]).maybe_complete_reassignment(
        [0, 2, 3], wait_for_adding_only=wait_for_adding_only)
    if not completes:
        assert done is None
        return
    assert (done.isr, done.replicas) == ([0, 3], [0, 1, 3])


@pytest.mark.parametrize(("wait_for_adding_only", "completes"), [(True, True), (False, False)])
def test_can_complete_reassignment_if_isr_does_not_have_both_existing_target_replica(
        wait_for_adding_only, completes):
    """testCanCompleteReassignmentIfIsrDoesNotHaveBothExistingTargetReplica @4.3.0: 0 and 1
    out of sync; the ISR becomes [3] alone."""
    done = _replicas_of([0, 1, 2], [0, 1, 3]).maybe_complete_reassignment(
        [2, 3], wait_for_adding_only=wait_for_adding_only)
    if not completes:
        assert done is None
        return
    assert (done.isr, done.replicas) == ([3], [0, 1, 3])


@pytest.mark.parametrize("wait_for_adding_only", [True, False])
def test_does_not_complete_reassignment_if_isr_does_not_have_an_adding_target_replica(
        wait_for_adding_only):
    """testDoesNotCompleteReassignmentIfIsrDoesNotHaveAnAddingTargetReplica @4.3.0 (and
    before): the adding replica 3 is not in sync."""
    r = _replicas_of([0, 1, 2], [0, 1, 3])
    assert r.maybe_complete_reassignment([0, 1, 2],
                                         wait_for_adding_only=wait_for_adding_only) is None


@pytest.mark.parametrize(("wait_for_adding_only", "completes"), [(True, True), (False, False)])
def test_can_complete_reassignment_when_rf_increases_and_missing_an_existing_target_replica(
        wait_for_adding_only, completes):
    """testCanCompleteReassignmentWhenReplicationFactorIncreasesAndMissingAnExistingTarget
    ReplicaFromIsr @4.3.0: [0, 1, 2, 3] -> [1, 2, 3, 4, 5] with 3 out of sync."""
    done = _replicas_of([0, 1, 2, 3], [1, 2, 3, 4, 5]).maybe_complete_reassignment(
        [0, 1, 2, 4, 5], wait_for_adding_only=wait_for_adding_only)
    if not completes:
        assert done is None
        return
    assert (done.isr, done.replicas) == ([1, 2, 4, 5], [1, 2, 3, 4, 5])


def test_does_not_complete_reassignment_when_rf_increases_and_missing_an_adding_replica():
    """testDoesNotCompleteReassignmentWhenReplicationFactorIncreasesAndMissingAnAddingReplica
    FromIsr @4.3.0: the adding replica 4 is not in sync."""
    r = _replicas_of([0, 1, 2, 3], [1, 2, 3, 4, 5])
    assert r.maybe_complete_reassignment([0, 1, 2, 3, 5]) is None


def test_does_not_complete_reassignment_when_rf_decreases_and_missing_an_existing_target():
    """testDoesNotCompleteReassignmentWhenReplicationFactorDecreasesAndMissingAnExistingTarget
    ReplicaFromIsr @4.3.0: [0, 1, 2, 3, 4] -> [2, 3, 4, 5] removes two and adds one, so every
    target replica must be in sync, and 4 is not."""
    r = _replicas_of([0, 1, 2, 3, 4], [2, 3, 4, 5])
    assert r.maybe_complete_reassignment([0, 1, 2, 3, 5]) is None


def test_does_not_complete_reassignment_when_rf_decreases_and_missing_an_adding_replica():
    """testDoesNotCompleteReassignmentWhenReplicationFactorDecreasesAndMissingAnAddingReplicas
    FromISR @4.3.0: the adding replica 5 is not in sync."""
    r = _replicas_of([0, 1, 2, 3, 4], [2, 3, 4, 5])
    assert r.maybe_complete_reassignment([0, 1, 2, 3, 4]) is None


def test_rf_decrease_completes_once_every_target_replica_is_in_sync():
    """testDoesNotCompleteReassignmentWhenReplicationFactorDecreases... @4.3.0, continued along
    maybeCompleteReassignment: with 2, 3, 4 and 5 in sync it completes, without 0 and 1."""
    done = _replicas_of([0, 1, 2, 3, 4], [2, 3, 4, 5]).maybe_complete_reassignment(
        [0, 1, 2, 3, 4, 5])
    assert (done.isr, done.replicas) == ([2, 3, 4, 5], [2, 3, 4, 5])


# ====================================== ReplicationControlManagerTest.testCancelReassignPartitions
def _cancel_reassign_ctx(waits_for_adding_only: bool):
    """testCancelReassignPartitions @4.3.0 up to its AlterPartition: bar-0 [4, 3, 2] being
    reassigned to [1, 2, 3, 4, 0] (adding 0, 1) while 3 is fenced."""
    ctx = Ctx(reassignment_waits_for_adding_replicas_only=waits_for_adding_only)
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(0, 1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 3, 4], [0, 1, 2, 3], [4, 3, 1, 0], [2, 3, 4, 1]])
    bar_id = ctx.create("bar", [[4, 3, 2]]).topic_id
    ctx.replay(ctx.rc.handle_broker_fenced(3))
    ctx.replay([PartitionChangeRecord(0, bar_id, replicas=(1, 2, 3, 4, 0), adding_replicas=(0, 1))])
    item = (bar_id, 0, 0, isr_with_default_epoch(4, 1, 2, 0), 2)
    records, resp = ctx.rc.alter_partition(4, 104, [item])
    (r,) = resp.partitions
    assert (r.error, r.leader, r.leader_epoch, r.isr, r.partition_epoch) == (
        E.NONE, 4, 0, (4, 1, 2, 0), 3)
    return ctx, bar_id, records


def test_cancel_reassign_partitions_alter_partition_completes_reassignment_4_3():
    """testCancelReassignPartitions @4.3.0, its AlterPartition step continued: the ISR [4, 1,
    2, 0] holds both adding replicas, and the fenced 3 is kept by the reassignment, so since
    KAFKA-19975 the record also completes the reassignment (adding replicas cleared); nothing is
    left to cancel."""
    ctx, bar_id, records = _cancel_reassign_ctx(True)
    assert records == [PartitionChangeRecord(0, bar_id, isr=(4, 1, 2, 0), adding_replicas=())]
    ctx.replay(records)
    assert ctx.part("bar", 0) == PartitionRegistration(
        (1, 2, 3, 4, 0), (4, 1, 2, 0), leader=4, partition_epoch=3)
    assert ctx.rc.brokers_to_isrs.reassigning_partitions() == []
    _, resp = ctx.rc.alter_partition_reassignments([("bar", [(0, None)])])
    assert resp.responses[0].partitions[0].error == E.NO_REASSIGNMENT_IN_PROGRESS


def test_cancel_reassign_partitions_alter_partition_keeps_reassignment_4_2():
    """testCancelReassignPartitions @4.2.0 (the same steps), continued: before KAFKA-19975 the
    fenced 3 is a target replica out of the ISR, so the reassignment stays."""
    ctx, bar_id, records = _cancel_reassign_ctx(False)
    assert records == [PartitionChangeRecord(0, bar_id, isr=(4, 1, 2, 0))]


# ======================================================================== a KRaft cluster
@pytest.mark.parametrize("version", ["4.2", "4.3"])
def test_reassignment_with_a_kept_replica_down(version):
    """ReassignPartitionsCommandTest.testReassignment's cluster (4.3.0), continued: broker 1 of
    foo-0 [0, 1, 2] is down and out of the ISR when foo-0 moves to [0, 1, 3]. At 4.3 the
    reassignment completes once 3 is in sync (KAFKA-19975), at 4.2 it waits for 1."""
    completes = rules_for(version).reassignment_waits_for_adding_replicas_only
    c = _test_cluster("kraft", version=version)
    foo0 = ("foo", 0)
    c.crash(1)
    assert c.run_until(lambda cl: cl.inspect.partition_state(*foo0)["isr"] == [0, 2],
                       TIMEOUT_MS), c.inspect.partition_state(*foo0)
    assert c.admin().alter_partition_reassignments({foo0: [0, 1, 3]}) == {foo0: E.NONE}

    def done(cl):
        return not cl.admin().list_partition_reassignments([foo0]) and \
            _replicas(cl, foo0) == [0, 1, 3]

    assert c.run_until(done, TIMEOUT_MS) == completes
    if completes:
        st = c.inspect.partition_state(*foo0)
        assert (st["replicas"], st["isr"]) == ([0, 1, 3], [0, 3])
    else:
        assert _replicas(c, foo0) == [0, 1, 3, 2]
        assert 3 in c.inspect.partition_state(*foo0)["isr"]
