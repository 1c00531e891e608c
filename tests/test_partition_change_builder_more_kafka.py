"""More of Kafka's PartitionChangeBuilderTest and PartitionRegistrationTest, the 4.1.0 - 4.3.0
cases the other port files leave out.

Follows metadata/src/test/java/org/apache/kafka/controller/PartitionChangeBuilderTest.java and
metadata/src/test/java/org/apache/kafka/metadata/PartitionRegistrationTest.java at the Apache
release commits 4.1.0 (13f70256db), 4.2.0 (a18251bae0) and 4.3.0 (a9ce322153), driving
``PartitionChangeBuilder`` and ``PartitionRegistration`` (its ``Builder`` included) by Kafka's
names in snake_case. Log directories (``setDirectories``, ``DirectoryId``) are not modelled:
the builder accepts and ignores them. ``Optional.empty()`` of ``build()`` is None.

Version switches: ``set_last_known_leader_must_be_acceptable`` (KAFKA-19522, 4.1.0) and
``set_last_known_leader_on_leader_loss`` (apache/kafka #20629, 4.2.0); both default to the
newest behaviour. Scenarios are Kafka's; code is our own.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.partition_change import Election, PartitionChangeBuilder
from kafkasim.control.kraft.records import (
    NO_LEADER,
    IllegalStateException,
    LeaderRecoveryState,
    PartitionRecord,
    PartitionRegistration,
)
from tests.test_replication_control_manager_kafka import Ctx

RECOVERED = LeaderRecoveryState.RECOVERED
RECOVERING = LeaderRecoveryState.RECOVERING
TOPIC_ID = "FbrrdcfiR-KC2CPSTHaJrg"
ELR_MV = "4.0-IV1"   # metadataVersionForPartitionChangeRecordVersion(2)


def registration(**kw):
    b = PartitionRegistration.Builder().set_leader_recovery_state(RECOVERED) \
        .set_leader_epoch(100).set_partition_epoch(200)
    for name, value in kw.items():
        getattr(b, f"set_{name}")(value)
    return b.build()


# ============================================================== PartitionChangeBuilderTest


@pytest.mark.parametrize("election", [Election.PREFERRED, Election.ONLINE, Election.UNCLEAN])
def test_eligible_leader_replicas_not_eligible_last_known_leader(election):
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_NotEligibleLastKnownLeader @4.1.0
    (every Election): empty ISR and ELR, LastKnownElr [1], no acceptable replica: since
    KAFKA-19522 the last known leader is not elected, and nothing changes."""
    part = registration(replicas=[1, 2, 3, 4], isr=[], elr=[], last_known_elr=[1],
                        leader=NO_LEADER)
    b = PartitionChangeBuilder(part, TOPIC_ID, 0, lambda r: False, ELR_MV, 3) \
        .set_election(election).set_eligible_leader_replicas_enabled(True) \
        .set_use_last_known_leader_in_balanced_recovery(True)
    b.set_target_isr([])
    assert b.build() is None


@pytest.mark.parametrize("election", [Election.PREFERRED, Election.ONLINE, Election.UNCLEAN])
def test_not_eligible_last_known_leader_before_kafka_19522(election):
    """testEligibleLeaderReplicas_NotEligibleLastKnownLeader's set-up at 4.0.x (before
    KAFKA-19522, the last known leader needed no liveness check): the fenced replica 1 is
    elected uncleanly (RECOVERING, ISR [1]) and LastKnownElr is cleared."""
    part = registration(replicas=[1, 2, 3, 4], isr=[], elr=[], last_known_elr=[1],
                        leader=NO_LEADER)
    b = PartitionChangeBuilder(part, TOPIC_ID, 0, lambda r: False, ELR_MV, 3) \
        .set_election(election).set_eligible_leader_replicas_enabled(True) \
        .set_last_known_leader_must_be_acceptable(False)
    b.set_target_isr([])
    record = b.build()
    assert (record.leader, record.isr, record.leader_recovery_state, record.last_known_elr) == (
        1, (1,), RECOVERING, ())


def _no_leader_builder(**kw):
    part = registration(replicas=[1, 2, 3], isr=[1], elr=[2], leader=1)
    return part, PartitionChangeBuilder(part, TOPIC_ID, 0, lambda r: False, ELR_MV, 3, True) \
        .set_election(Election.PREFERRED).set_use_last_known_leader_in_balanced_recovery(True)


def test_eligible_leader_replicas_last_known_elr_populated_when_no_leader():
    """PartitionChangeBuilderTest.testEligibleLeaderReplicas_lastKnownElrShouldBePopulatedWhen
    NoLeader @4.2.0 (with 4.3.0's ELR constructor argument): no acceptable leader, the ISR is
    not touched (the record has no ISR), yet LastKnownElr becomes the old leader [1]."""
    part, b = _no_leader_builder()
    record = b.build()
    assert record.leader == NO_LEADER
    assert record.isr is None
    assert record.last_known_elr == (1,)
    assert part.merge(record).last_known_elr == (1,)


def test_last_known_elr_not_populated_when_no_leader_before_4_2():
    """The same set-up at 4.1.x (maybeUpdateLastKnownLeader before apache/kafka #20629 keyed on
    an emptied ISR): the leader goes to -1 but LastKnownElr stays empty."""
    part, b = _no_leader_builder()
    record = b.set_last_known_leader_on_leader_loss(False).build()
    assert record.leader == NO_LEADER
    assert record.isr is None and record.last_known_elr is None
    assert part.merge(record).last_known_elr == ()


def test_last_known_elr_kept_when_already_set_and_still_leaderless():
    """maybeUpdateLastKnownLeader @4.2.0: LastKnownElr is written only the first time the
    partition becomes leaderless; a leaderless partition whose ISR empties keeps [1]."""
    part = registration(replicas=[1, 2, 3], isr=[2], elr=[], last_known_elr=[1],
                        leader=NO_LEADER)
    b = PartitionChangeBuilder(part, TOPIC_ID, 0, lambda r: False, ELR_MV, 3, True) \
        .set_election(Election.PREFERRED)
    record = b.set_target_isr([]).build()
    assert record.leader == -2 and record.last_known_elr is None   # NO_LEADER_CHANGE
    assert part.merge(record).last_known_elr == (1,)


def test_constructor_eligible_leader_replicas_enabled_argument():
    """PartitionChangeBuilder(partition, topicId, partitionId, isAcceptableLeader,
    metadataVersion, minISR, eligibleLeaderReplicasEnabled) @4.3.0 (the setter of 4.2 and
    before is kept): the argument alone turns ELR on (testEligibleLeaderReplicas_
    IsrShrinkBelowMinISR's shrink [1, 2, 3, 4] -> [1, 2] with min ISR 3 keeps 3, 4 as ELR)."""
    part = registration(replicas=[1, 2, 3, 4], isr=[1, 2, 3, 4], leader=1)
    on = PartitionChangeBuilder(part, TOPIC_ID, 0, lambda r: r != 3, ELR_MV, 3, True)
    off = PartitionChangeBuilder(part, TOPIC_ID, 0, lambda r: r != 3, ELR_MV, 3)
    assert on.eligible_leader_replicas_enabled and not off.eligible_leader_replicas_enabled
    assert on.set_target_isr([1, 2]).build().eligible_leader_replicas == (3, 4)
    assert off.set_target_isr([1, 2]).build().eligible_leader_replicas is None


# ====================================== ReplicationControlManager: last known leader at 4.2


@pytest.mark.parametrize("on_leader_loss", [False, True])
def test_leader_lost_with_shutting_down_isr_records_last_known_leader(on_leader_loss):
    """ReplicationControlManager.handleBrokerFenced with ELR on, through the builder of 4.1.x /
    4.2.0 (apache/kafka #20629): brokers 1 and 2 are in controlled shutdown (not acceptable),
    so fencing the leader 0 leaves foo-0 leaderless with ISR [1, 2]. 4.2 records 0 as the last
    known leader; 4.1 does not, as the ISR is not empty."""
    ctx = Ctx(elr=True, last_known_leader_on_leader_loss=on_leader_loss)
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    ctx.create("foo", [[0, 1, 2]])
    ctx.in_controlled_shutdown(1, 2)
    records = ctx.rc.handle_broker_fenced(0)
    ctx.replay(records)
    p = ctx.part()
    assert (p.leader, p.isr, p.elr) == (NO_LEADER, (1, 2), ())
    assert p.last_known_elr == ((0,) if on_leader_loss else ())


# ============================================================== PartitionRegistrationTest


def test_election_was_unclean():
    """PartitionRegistrationTest.testElectionWasUnclean @4.1.0."""
    assert not PartitionRegistration.election_was_unclean(RECOVERED)
    assert PartitionRegistration.election_was_unclean(RECOVERING)


@pytest.mark.parametrize("steps,missing", [
    ([], "replicas"),
    ([("replicas", [0]), ("directories", ["UNASSIGNED"])], "isr"),
    ([("replicas", [0]), ("isr", [0]), ("removing_replicas", [0]), ("adding_replicas", [0])],
     "leader"),
    ([("replicas", [0]), ("isr", [0]), ("leader", 0)], "leader recovery state"),
    ([("replicas", [0]), ("isr", [0]), ("leader", 0), ("leader_recovery_state", RECOVERED)],
     "leader epoch"),
    ([("replicas", [0]), ("isr", [0]), ("leader", 0), ("leader_recovery_state", RECOVERED),
      ("leader_epoch", 0)], "partition epoch"),
])
def test_builder_throws_illegal_state_exception_when_missing(steps, missing):
    """PartitionRegistrationTest.testBuilderThrowsIllegalStateExceptionWhenMissing{Replicas,
    Isr,Leader,LeaderRecoveryState,LeaderEpoch,PartitionEpoch} @4.1.0."""
    b = PartitionRegistration.Builder()
    for name, value in steps:
        getattr(b, f"set_{name}")(value)
    with pytest.raises(IllegalStateException) as e:
        b.build()
    assert str(e.value) == f"You must set {missing}."


def test_builder_success():
    """PartitionRegistrationTest.testBuilderSuccess @4.1.0."""
    p = PartitionRegistration.Builder().set_replicas([0, 1, 2]).set_isr([0, 1]) \
        .set_elr([2]).set_last_known_elr([0, 1, 2]).set_removing_replicas([0]) \
        .set_adding_replicas([1]).set_leader(0).set_leader_recovery_state(RECOVERED) \
        .set_leader_epoch(0).set_partition_epoch(0).build()
    assert (p.replicas, p.isr, p.elr, p.last_known_elr) == ((0, 1, 2), (0, 1), (2,), (0, 1, 2))
    assert (p.removing_replicas, p.adding_replicas) == ((0,), (1,))
    assert (p.leader, p.leader_recovery_state, p.leader_epoch, p.partition_epoch) == (
        0, RECOVERED, 0, 0)


def test_builder_sets_default_adding_and_removing_replicas():
    """PartitionRegistrationTest.testBuilderSetsDefaultAddingAndRemovingReplicas @4.1.0."""
    p = PartitionRegistration.Builder().set_replicas([0, 1]).set_isr([0, 1]).set_leader(0) \
        .set_leader_recovery_state(RECOVERED).set_leader_epoch(0).set_partition_epoch(0).build()
    assert (p.removing_replicas, p.adding_replicas, p.elr, p.last_known_elr) == ((),) * 4


@pytest.mark.parametrize("elr_supported", [False, True])
def test_partition_registration_to_record(elr_supported):
    """PartitionRegistrationTest.testPartitionRegistrationToRecord @4.1.0 (3.7-IV1 / 3.7-IV2:
    no ELR fields; 4.0-IV1: ELR [2, 3], LastKnownElr [4]), without directories."""
    p = PartitionRegistration.Builder().set_replicas([0, 1, 2, 3, 4]).set_isr([0, 1]) \
        .set_leader(0).set_leader_recovery_state(RECOVERED).set_leader_epoch(0) \
        .set_partition_epoch(0).set_elr([2, 3]).set_last_known_elr([4]).build()
    expected = PartitionRecord(0, TOPIC_ID, (0, 1, 2, 3, 4), (0, 1), leader=0,
                               eligible_leader_replicas=(2, 3) if elr_supported else (),
                               last_known_elr=(4,) if elr_supported else ())
    assert p.to_record(TOPIC_ID, 0, elr_supported=elr_supported) == expected
    assert p.adding_replicas == ()


def test_partition_registration_to_record_elr_should_be_null_if_empty():
    """PartitionRegistrationTest.testPartitionRegistrationToRecord_ElrShouldBeNullIfEmpty
    @4.1.0: at 4.0-IV1 a registration without ELR writes none (kafkasim's empty tuple stands
    for Kafka's unset tagged field)."""
    p = PartitionRegistration.Builder().set_replicas([0, 1, 2, 3, 4]).set_isr([0, 1]) \
        .set_leader(0).set_leader_recovery_state(RECOVERED).set_leader_epoch(0) \
        .set_partition_epoch(0).build()
    record = p.to_record(TOPIC_ID, 0, elr_supported=True)
    assert (record.eligible_leader_replicas, record.last_known_elr) == ((), ())
    assert PartitionRegistration.from_record(record) == p
