"""PartitionRegistration by Kafka's names, following Kafka's
metadata/src/test/java/org/apache/kafka/metadata/PartitionRegistrationTest.java (trunk 1eb7644;
log directories are not modelled). Scenarios and code are our own; each test names the Kafka
test it follows."""

from __future__ import annotations

from kafkasim.control.kraft.records import (
    NO_LEADER,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRecord,
    PartitionRegistration,
)


# testElectionWasClean
def test_election_was_clean():
    clean = PartitionRegistration.election_was_clean
    assert clean(1, (1, 2)) and not clean(1, (0, 2)) and not clean(1, ())
    assert clean(3, (1, 2, 3, 4, 5, 6))
    assert clean(NO_LEADER, ())   # no leader is no unclean election


# testPartitionControlInfoMergeAndDiff
def test_merge_and_diff():
    a = PartitionRegistration((1, 2, 3), (1, 2), leader=1)
    b = PartitionRegistration((1, 2, 3), (3,), leader=3, leader_epoch=1, partition_epoch=1)
    c = PartitionRegistration((1, 2, 3), (1,), leader=1, partition_epoch=1, elr=(2,),
                              last_known_elr=(3,))
    assert a.merge(PartitionChangeRecord(0, "t", isr=(3,), leader=3)) == b
    assert b.diff(a) == "isr: [1, 2] -> [3], leader: 1 -> 3, leaderEpoch: 0 -> 1, " \
                        "partitionEpoch: 0 -> 1"
    assert c.diff(a) == "isr: [1, 2] -> [1], elr: [] -> [2], lastKnownElr: [] -> [3], " \
                        "partitionEpoch: 0 -> 1"
    recovering = PartitionRegistration((1, 2, 3), (1, 2), leader=1,
                                       leader_recovery_state=LeaderRecoveryState.RECOVERING)
    assert recovering.diff(a) == "leaderRecoveryState: RECOVERED -> RECOVERING"
    assert a.diff(a) == ""


# testRecordRoundTrip / testPartitionRegistrationToRecord(_ElrShouldBeNullIfEmpty)
def test_to_record_round_trip():
    a = PartitionRegistration((1, 2, 3), (1, 2), removing_replicas=(1,), leader=1, elr=(3,),
                              last_known_elr=(2,), leader_epoch=4, partition_epoch=9)
    record = a.to_record("OGdAI5nxT_m-ds3rJMqPLA", 4)
    assert isinstance(record, PartitionRecord) and record.partition_id == 4
    assert PartitionRegistration.from_record(record) == a
    before_elr = a.to_record("OGdAI5nxT_m-ds3rJMqPLA", 4, elr_supported=False)
    assert before_elr.eligible_leader_replicas == () and before_elr.last_known_elr == ()


# testMergePartitionChangeRecordWithReassignmentData
def test_merge_reassignment_data():
    p0 = PartitionRegistration((1, 2, 3), (1, 2, 3), leader=1, leader_epoch=100,
                               partition_epoch=200)
    p1 = p0.merge(PartitionChangeRecord(0, "t", removing_replicas=(3,), adding_replicas=(4,),
                                        replicas=(1, 2, 3, 4)))
    assert p1 == PartitionRegistration((1, 2, 3, 4), (1, 2, 3), (3,), (4,), leader=1,
                                       leader_epoch=100, partition_epoch=201)
    assert not p1.has_same_assignment(p0)
    p2 = p1.merge(PartitionChangeRecord(0, "t", isr=(1, 2, 4), removing_replicas=(),
                                        adding_replicas=(), replicas=(1, 2, 4)))
    assert p2 == PartitionRegistration((1, 2, 4), (1, 2, 4), leader=1, leader_epoch=100,
                                       partition_epoch=202)
    assert p2.has_same_assignment(PartitionRegistration((1, 2, 4), (1,), leader=2))


def test_preferred_replica_and_leader():
    # PartitionRegistration.preferredReplica / hasPreferredLeader (used by the controller's
    # preferred-leader election; no test of their own in Kafka)
    p = PartitionRegistration((2, 1, 3), (1, 2, 3), leader=1)
    assert p.preferred_replica() == 2 and not p.has_preferred_leader()
    assert PartitionRegistration((2, 1, 3), (1, 2, 3), leader=2).has_preferred_leader()
    assert PartitionRegistration((), ()).preferred_replica() == NO_LEADER


# PartitionChangeBuilderTest.testChangeRecordIsNoOp, by Kafka's static name on the builder
def test_change_record_is_no_op_on_the_builder():
    from kafkasim.control.kraft.partition_change import PartitionChangeBuilder
    no_op = PartitionChangeBuilder.change_record_is_no_op
    assert no_op(PartitionChangeRecord(0, "t"))
    for change in ({"leader": 1}, {"isr": (1, 2, 3)}, {"removing_replicas": (1,)},
                   {"adding_replicas": (4,)}, {"eligible_leader_replicas": (5,)},
                   {"last_known_elr": (6,)},
                   {"leader_recovery_state": LeaderRecoveryState.RECOVERED}):
        assert not no_op(PartitionChangeRecord(0, "t", **change)), change
