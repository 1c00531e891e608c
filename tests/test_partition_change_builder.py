"""PartitionChangeBuilder (kafkasim.control.kraft.partition_change), mirroring Kafka's
metadata/src/test/java/org/apache/kafka/controller/PartitionChangeBuilderTest.java (trunk
1eb7644): testChangeRecordIsNoOp, testElectLeader, testNoLeaderEpochBumpIfNothingChanged,
testNoLeaderEpochBumpOnIsrShrink, testLeaderEpochBumpOnIsrShrink,
testNoLeaderEpochBumpOnIsrExpansion, testLeaderEpochBumpOnNewReplicaSetDisjoint,
testNoLeaderEpochBumpOnEmptyTargetIsr, testNoChange, testIsrChangeDoesntBumpLeaderEpoch,
testIsrChangeAndLeaderChange, testReassignmentRearrangesReplicas,
testIsrEnlargementCompletesReassignment, testRevertReassignment,
testRemovingReplicaReassignment, testAddingReplicaReassignment, testUncleanLeaderElection,
testChangeInLeadershipDoesNotChangeRecoveryState, testUncleanSetsLeaderRecoveringState,
testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders,
testEligibleLeaderReplicas_IsrShrinkBelowMinISR / _IsrExpandAboveMinISR /
_IsrAddNewMemberNotInELR / _RemoveUncleanShutdownReplicasFromElr / _ElrCanBeElected /
_IsrCanShrinkToZero / _ElectLastKnownLeader / _ElectLastKnownLeaderShouldFail.
Directory (JBOD) expectations are left out: the simulator's records carry no directories.
The record version is checked through ``record_version()``."""

import pytest

from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.partition_change import (
    Election,
    PartitionChangeBuilder,
    change_record_is_no_op,
)
from kafkasim.control.kraft.records import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRegistration,
)
from kafkasim.settings.javautil import JavaIntHashSet

RECOVERED = LeaderRecoveryState.RECOVERED
RECOVERING = LeaderRecoveryState.RECOVERING
VERSIONS = (0, 1, 2)
MV_FOR_VERSION = {0: "3.7-IV0", 1: "3.7-IV2", 2: "4.0-IV1"}

FOO = PartitionRegistration(replicas=(2, 1, 3), isr=(2, 1, 3), leader=1, leader_epoch=100,
                            partition_epoch=200)
FOO_ID = "FbrrdcfiR-KC2CPSTHaJrg"
BAR = PartitionRegistration(replicas=(1, 2, 3, 4), isr=(1, 2, 3), removing_replicas=(1,),
                            adding_replicas=(4,), leader=1, leader_epoch=100,
                            partition_epoch=200)
BAR_ID = "LKfUsCBnQKekvL9O5dY9nw"
BAZ = PartitionRegistration(replicas=(2, 1, 3), isr=(1, 3), leader=3, leader_epoch=100,
                            partition_epoch=200)
BAZ_ID = "wQzt5gkSTwuQNXZF5gIw7A"
OFFLINE_WITHOUT_ELR = PartitionRegistration(replicas=(2, 1, 3), isr=(3,), leader=-1,
                                            leader_epoch=100, partition_epoch=200)
OFFLINE_WITH_ELR = PartitionRegistration(replicas=(2, 1, 3), isr=(), elr=(3,),
                                         last_known_elr=(2,), leader=-1, leader_epoch=100,
                                         partition_epoch=200)
OFFLINE_ID = "LKfUsCBnQKekvL9O5dY9nw"


def mv(v):
    return MetadataVersion.parse(MV_FOR_VERSION[v] if isinstance(v, int) else v)


def foo_builder(version):
    m = mv(version)
    return PartitionChangeBuilder(FOO, FOO_ID, 0, lambda r: r != 3, m, 2) \
        .set_eligible_leader_replicas_enabled(m.is_elr_supported())


def bar_builder(version):
    return PartitionChangeBuilder(BAR, BAR_ID, 0, lambda r: r != 3, mv(version), 2) \
        .set_eligible_leader_replicas_enabled(version >= 2)


def baz_builder(version):
    return PartitionChangeBuilder(BAZ, BAZ_ID, 0, lambda r: True, mv(version), 2) \
        .set_eligible_leader_replicas_enabled(version >= 2)


def offline_builder(version):
    m = mv(version)
    if m.is_elr_supported():
        return PartitionChangeBuilder(OFFLINE_WITH_ELR, OFFLINE_ID, 0, lambda r: r == 1, m, 2) \
            .set_eligible_leader_replicas_enabled(True)
    return PartitionChangeBuilder(OFFLINE_WITHOUT_ELR, OFFLINE_ID, 0, lambda r: r == 1, m, 2) \
        .set_eligible_leader_replicas_enabled(False)


def rec(topic_id, **kw):
    return PartitionChangeRecord(partition_id=0, topic_id=topic_id, **{
        k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()})


def test_change_record_is_no_op():
    assert change_record_is_no_op(rec(FOO_ID))
    assert not change_record_is_no_op(rec(FOO_ID, leader=1))
    assert not change_record_is_no_op(rec(FOO_ID, isr=[1, 2, 3]))
    assert not change_record_is_no_op(rec(FOO_ID, removing_replicas=[1]))
    assert not change_record_is_no_op(rec(FOO_ID, adding_replicas=[4]))
    assert not change_record_is_no_op(rec(FOO_ID, eligible_leader_replicas=[5]))
    assert not change_record_is_no_op(rec(FOO_ID, last_known_elr=[6]))
    assert not change_record_is_no_op(rec(FOO_ID, leader_recovery_state=RECOVERED))


def elects(builder, node, unclean):
    r = builder.elect_leader()
    assert (r.node, r.unclean) == (node, unclean)


@pytest.mark.parametrize("version", VERSIONS)
def test_elect_leader(version):
    elects(foo_builder(version).set_election(Election.PREFERRED), 2, False)
    elects(foo_builder(version), 1, False)
    elects(foo_builder(version).set_election(Election.UNCLEAN), 1, False)
    elects(foo_builder(version).set_target_isr_with_broker_states([(1, -1), (3, -1)]), 1, False)
    elects(foo_builder(version).set_election(Election.UNCLEAN)
           .set_target_isr_with_broker_states([(1, -1), (3, -1)]), 1, False)
    elects(foo_builder(version).set_target_isr_with_broker_states([(3, -1)]), NO_LEADER, False)
    elects(foo_builder(version).set_election(Election.UNCLEAN)
           .set_target_isr_with_broker_states([(3, -1)]), 2, True)
    elects(foo_builder(version).set_election(Election.UNCLEAN)
           .set_target_isr_with_broker_states([(4, -1)]).set_target_replicas([2, 1, 3, 4]),
           4, False)
    elects(baz_builder(version).set_election(Election.PREFERRED), 3, False)
    elects(baz_builder(version), 3, False)
    elects(baz_builder(version).set_election(Election.UNCLEAN), 3, False)


def epoch_bump_leader(builder):
    """testTriggerLeaderEpochBumpIfNeeded: the record's leader after both bump checks."""
    record = {}
    builder.trigger_leader_epoch_bump_for_replica_reassignment_if_needed(record)
    record["isr"] = list(builder.target_isr)
    builder.trigger_leader_epoch_bump_for_isr_shrink_if_needed(record)
    return record.get("leader", NO_LEADER_CHANGE)


@pytest.mark.parametrize("version", VERSIONS)
def test_no_leader_epoch_bump_if_nothing_changed(version):
    assert epoch_bump_leader(foo_builder(version)) == NO_LEADER_CHANGE


@pytest.mark.parametrize("m", ["3.6-IV0", "3.7-IV2", "4.0-IV0"])
def test_no_leader_epoch_bump_on_isr_shrink(m):
    assert epoch_bump_leader(foo_builder(m).set_target_isr([2, 1])) == NO_LEADER_CHANGE


@pytest.mark.parametrize("m", ["3.4-IV0", "3.5-IV2"])
def test_leader_epoch_bump_on_isr_shrink(m):
    # KAFKA-15021: before 3.6-IV0 a controller ISR shrink bumps the leader epoch
    assert epoch_bump_leader(foo_builder(m).set_target_isr([2, 1])) == 1


@pytest.mark.parametrize("m", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2", "4.0-IV0"])
def test_no_leader_epoch_bump_on_isr_expansion(m):
    assert epoch_bump_leader(foo_builder(m).set_target_isr([2, 1, 3, 4])) == NO_LEADER_CHANGE


@pytest.mark.parametrize("m", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2", "4.0-IV0"])
def test_leader_epoch_bump_on_new_replica_set_disjoint(m):
    assert epoch_bump_leader(foo_builder(m).set_target_replicas([2, 1, 4])) == 1


@pytest.mark.parametrize("m", ["3.4-IV0", "3.5-IV2", "3.6-IV0", "3.7-IV2"])
def test_no_leader_epoch_bump_on_empty_target_isr(m):
    # KAFKA-16624
    part = PartitionRegistration(replicas=(2,), isr=(2,), leader=2, leader_epoch=100,
                                 partition_epoch=200)
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: True, m, 2) \
        .set_eligible_leader_replicas_enabled(mv(m).is_elr_supported()) \
        .set_target_replicas([])
    record = {}
    b.trigger_leader_epoch_bump_for_isr_shrink_if_needed(record)
    assert record.get("leader", NO_LEADER_CHANGE) == NO_LEADER_CHANGE


@pytest.mark.parametrize("version", VERSIONS)
def test_no_change(version):
    assert foo_builder(version).build() is None
    assert foo_builder(version).set_election(Election.UNCLEAN).build() is None
    assert bar_builder(version).build() is None
    assert bar_builder(version).set_election(Election.UNCLEAN).build() is None
    assert baz_builder(version).set_election(Election.PREFERRED).build() is None


@pytest.mark.parametrize("version", VERSIONS)
def test_isr_change_doesnt_bump_leader_epoch(version):
    b = foo_builder(version).set_target_isr([2, 1])
    assert b.build() == rec(FOO_ID, isr=[2, 1])
    assert b.record_version() == version


@pytest.mark.parametrize("version", VERSIONS)
def test_isr_change_and_leader_change(version):
    assert foo_builder(version).set_target_isr([2, 3]).build() == \
        rec(FOO_ID, isr=[2, 3], leader=2)


@pytest.mark.parametrize("version", VERSIONS)
def test_reassignment_rearranges_replicas(version):
    assert foo_builder(version).set_target_replicas([3, 2, 1]).build() == \
        rec(FOO_ID, replicas=[3, 2, 1])


@pytest.mark.parametrize("version", VERSIONS)
def test_isr_enlargement_completes_reassignment(version):
    assert bar_builder(version).set_target_isr([1, 2, 3, 4]).build() == \
        rec(BAR_ID, replicas=[2, 3, 4], isr=[2, 3, 4], leader=2, removing_replicas=[],
            adding_replicas=[])


@pytest.mark.parametrize("version", VERSIONS)
def test_revert_reassignment(version):
    # PartitionReassignmentRevert(BAR): replicas [1, 2, 3], isr [1, 2, 3]
    assert bar_builder(version).set_target_replicas([1, 2, 3]).set_target_isr([1, 2, 3]) \
        .set_target_removing([]).set_target_adding([]).build() == \
        rec(BAR_ID, replicas=[1, 2, 3], leader=1, removing_replicas=[], adding_replicas=[])


@pytest.mark.parametrize("version", VERSIONS)
def test_removing_replica_reassignment(version):
    # PartitionReassignmentReplicas([2, 1, 3] -> [1, 2]): removing [3], replicas [1, 2, 3]
    assert foo_builder(version).set_target_replicas([1, 2, 3]).set_target_removing([3]) \
        .build() == rec(FOO_ID, replicas=[1, 2], isr=[2, 1], leader=1)


@pytest.mark.parametrize("version", VERSIONS)
def test_adding_replica_reassignment(version):
    assert foo_builder(version).set_target_replicas([1, 2, 3, 4]).set_target_adding([4]) \
        .build() == rec(FOO_ID, replicas=[1, 2, 3, 4], adding_replicas=[4])


@pytest.mark.parametrize("version", VERSIONS)
def test_unclean_leader_election(version):
    assert foo_builder(version).set_election(Election.UNCLEAN).set_target_isr([3]).build() == \
        rec(FOO_ID, isr=[2], leader=2, leader_recovery_state=RECOVERING)
    extra = {"eligible_leader_replicas": [], "last_known_elr": []} if version >= 2 else {}
    expected = rec(OFFLINE_ID, isr=[1], leader=1, leader_recovery_state=RECOVERING, **extra)
    assert offline_builder(version).set_election(Election.UNCLEAN).build() == expected
    assert offline_builder(version).set_election(Election.UNCLEAN).set_target_isr([2]) \
        .build() == expected


def leader_recovery_mv(supported):
    return "3.2-IV0" if supported else "3.1-IV0"


@pytest.mark.parametrize("supported", [True, False])
def test_change_in_leadership_does_not_change_recovery_state(supported):
    reg = PartitionRegistration(replicas=(1, 2, 3), isr=(1,), leader=1,
                                leader_recovery_state=RECOVERING, leader_epoch=100,
                                partition_epoch=200)
    m = leader_recovery_mv(supported)
    r = PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: False, m, 2).set_target_isr([]).build()
    assert r.leader_recovery_state == LeaderRecoveryState.NO_CHANGE
    assert r.leader == NO_LEADER
    reg = reg.merge(r)
    assert (reg.leader, reg.isr[0], reg.leader_recovery_state) == (NO_LEADER, 1, RECOVERING)
    r = PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: True, m, 2).build()
    assert r.leader_recovery_state == LeaderRecoveryState.NO_CHANGE
    reg = reg.merge(r)
    assert (reg.leader, reg.isr[0], reg.leader_recovery_state) == (1, 1, RECOVERING)


@pytest.mark.parametrize("supported", [True, False])
def test_unclean_sets_leader_recovering_state(supported):
    reg = PartitionRegistration(replicas=(1, 2, 3), isr=(2, 3), leader=NO_LEADER,
                                leader_epoch=100, partition_epoch=200)
    r = PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: b == 1, leader_recovery_mv(supported),
                               2).set_election(Election.UNCLEAN).build()
    assert r.leader_recovery_state == (RECOVERING if supported
                                       else LeaderRecoveryState.NO_CHANGE)
    assert r.leader == 1 and r.isr == (1,)
    reg = reg.merge(r)
    assert reg.leader == 1 and reg.isr == (1,)
    assert reg.leader_recovery_state == (RECOVERING if supported else RECOVERED)
    assert reg.leader_epoch == 101 and reg.partition_epoch == 201


def test_stopped_leader_is_demoted_after_reassignment_completes():
    part = PartitionRegistration(replicas=(2, 3, 0, 1), isr=(0, 1), removing_replicas=(0, 1),
                                 adding_replicas=(2, 3), leader=0)
    b = PartitionChangeBuilder(part, "t", 0, lambda r: False, leader_recovery_mv(False), 2)
    assert b.set_target_isr([0, 1, 2, 3]).build() == rec(
        "t", replicas=[2, 3], isr=[2, 3], removing_replicas=[], adding_replicas=[],
        leader=NO_LEADER)
    assert b.record_version() == 0


def elr_partition(**kw):
    base = dict(replicas=(1, 2, 3, 4), leader=1, leader_epoch=100, partition_epoch=200)
    base.update(kw)
    return PartitionRegistration(**base)


@pytest.mark.parametrize("version", VERSIONS)
def test_elr_isr_shrink_below_min_isr(version):
    part = elr_partition(isr=(1, 2, 3, 4))
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 3, mv(version), 3) \
        .set_election(Election.PREFERRED).set_eligible_leader_replicas_enabled(version >= 2) \
        .set_use_last_known_leader_in_balanced_recovery(False).set_target_isr([1, 2])
    extra = {"eligible_leader_replicas": [3, 4]} if version >= 2 else {}
    r = b.build()
    assert r == rec(FOO_ID, isr=[1, 2], **extra)
    part = part.merge(r)
    assert part.elr == ((3, 4) if version >= 2 else ())
    assert part.last_known_elr == ()


@pytest.mark.parametrize("version", VERSIONS)
def test_elr_isr_expand_above_min_isr(version):
    part = elr_partition(isr=(1, 2), elr=(3,), last_known_elr=(4,))
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 3, mv(version), 3) \
        .set_election(Election.PREFERRED).set_eligible_leader_replicas_enabled(version >= 2) \
        .set_use_last_known_leader_in_balanced_recovery(False).set_target_isr([1, 2, 3])
    r = b.build()
    assert r == rec(FOO_ID, isr=[1, 2, 3], eligible_leader_replicas=[], last_known_elr=[])
    part = part.merge(r)
    assert part.elr == () and part.last_known_elr == ()


@pytest.mark.parametrize("version", VERSIONS)
def test_elr_isr_add_new_member_not_in_elr(version):
    part = elr_partition(isr=(1,), elr=(3,), last_known_elr=(2,))
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 3, mv(version), 3) \
        .set_election(Election.PREFERRED).set_eligible_leader_replicas_enabled(version >= 2) \
        .set_use_last_known_leader_in_balanced_recovery(False).set_target_isr([1, 4])
    extra = {} if version >= 2 else {"eligible_leader_replicas": [], "last_known_elr": []}
    r = b.build()
    assert r == rec(FOO_ID, isr=[1, 4], **extra)
    part = part.merge(r)
    assert (part.elr, part.last_known_elr) == (((3,), (2,)) if version >= 2 else ((), ()))


@pytest.mark.parametrize("version", VERSIONS)
def test_elr_remove_unclean_shutdown_replicas_from_elr(version):
    part = elr_partition(isr=(1,), elr=(2, 3))
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 3, mv(version), 3) \
        .set_election(Election.PREFERRED).set_eligible_leader_replicas_enabled(version >= 2) \
        .set_use_last_known_leader_in_balanced_recovery(False) \
        .set_unclean_shutdown_replicas([3])
    extra = ({"eligible_leader_replicas": [2], "last_known_elr": [3]} if version >= 2
             else {"eligible_leader_replicas": []})
    r = b.build()
    assert r == rec(FOO_ID, **extra)
    part = part.merge(r)
    assert (part.elr, part.last_known_elr) == (((2,), (3,)) if version >= 2 else ((), ()))


@pytest.mark.parametrize("last_known_leader_enabled", [True, False])
def test_elr_can_be_elected(last_known_leader_enabled):
    part = elr_partition(isr=(1,), elr=(3,),
                         last_known_elr=() if last_known_leader_enabled else (2,))
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 1, mv(2), 3) \
        .set_election(Election.PREFERRED).set_eligible_leader_replicas_enabled(True) \
        .set_use_last_known_leader_in_balanced_recovery(last_known_leader_enabled) \
        .set_target_isr([])
    r = b.build()
    assert r == rec(FOO_ID, isr=[3], eligible_leader_replicas=[1], leader=3)
    part = part.merge(r)
    assert part.elr == (1,) and part.isr == (3,)
    assert part.last_known_elr == (() if last_known_leader_enabled else (2,))


@pytest.mark.parametrize("last_known_leader_enabled", [True, False])
def test_elr_isr_can_shrink_to_zero(last_known_leader_enabled):
    part = elr_partition(isr=(1, 2, 3, 4))
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: False, mv(2), 3) \
        .set_election(Election.PREFERRED).set_eligible_leader_replicas_enabled(True) \
        .set_use_last_known_leader_in_balanced_recovery(last_known_leader_enabled) \
        .set_target_isr([])
    extra = {"last_known_elr": [1]} if last_known_leader_enabled else {}
    r = b.build()
    assert r == rec(FOO_ID, isr=[], leader=-1, eligible_leader_replicas=[1, 2, 3, 4], **extra)
    part = part.merge(r)
    assert part.elr == (1, 2, 3, 4) and part.isr == ()
    if last_known_leader_enabled:
        assert part.last_known_elr == (1,)
        r2 = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: False, mv(2), 3) \
            .set_election(Election.PREFERRED).set_eligible_leader_replicas_enabled(True) \
            .set_unclean_shutdown_replicas([2]) \
            .set_use_last_known_leader_in_balanced_recovery(True).build()
        assert r2.last_known_elr is None
    else:
        assert part.last_known_elr == ()


def test_elr_elect_last_known_leader():
    part = elr_partition(isr=(), last_known_elr=(1,), leader=-1)
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: True, mv(2), 3) \
        .set_election(Election.PREFERRED).set_use_last_known_leader_in_balanced_recovery(True) \
        .set_eligible_leader_replicas_enabled(True).set_target_isr([])
    r = b.build()
    assert r == rec(FOO_ID, isr=[1], leader=1, leader_recovery_state=RECOVERING,
                    last_known_elr=[])
    part = part.merge(r)
    assert (part.elr, part.last_known_elr, part.isr) == ((), (), (1,))


def test_elr_elect_last_known_leader_should_fail():
    part = elr_partition(isr=(), elr=(3,), last_known_elr=(1,), leader=-1)
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 3, mv(2), 3) \
        .set_election(Election.PREFERRED).set_eligible_leader_replicas_enabled(True) \
        .set_use_last_known_leader_in_balanced_recovery(True).set_target_isr([])
    assert b.build() is None


def test_java_hash_set_order():
    # HashSet<Integer> iterates by bucket (value & (capacity-1)): 16 buckets by default,
    # so 17 (bucket 1, inserted before 1) comes before 1 and 3; the table doubles past 12
    assert list(JavaIntHashSet([3, 17, 1])) == [17, 1, 3]
    assert list(JavaIntHashSet([5, 2, 9])) == [2, 5, 9]
    big = JavaIntHashSet(range(20, 7, -1))   # 13 entries -> 32 buckets
    assert list(big) == list(range(8, 21))


def test_elr_order_follows_java_hash_set():
    # maybePopulateTargetElr streams a HashSet: ELR members come out in bucket order,
    # e.g. broker 17 (bucket 1) before broker 2, not in ISR order.
    part = PartitionRegistration(replicas=(2, 17, 5), isr=(2, 17, 5), leader=2)
    r = PartitionChangeBuilder(part, "t", 0, lambda b: True, "4.0-IV1", 3) \
        .set_eligible_leader_replicas_enabled(True).set_target_isr([5]).build()
    assert r.eligible_leader_replicas == (17, 2)


def test_bad_election_type_names_kafka_values():
    with pytest.raises(ValueError, match="PREFERRED, ONLINE or UNCLEAN"):
        foo_builder(2).set_election("CLEAN")


@pytest.mark.parametrize("fixed", [True, False])
def test_elr_last_known_leader_must_be_acceptable(fixed):
    # KAFKA-19522 (PR #20200, 4.1.0): a fenced last known leader is not elected; before the
    # fix canElectLastKnownLeader only logged and returned true (trunk 1eb7644, 4.0.x)
    part = elr_partition(isr=(), last_known_elr=(1,), leader=-1)
    b = PartitionChangeBuilder(part, FOO_ID, 0, lambda r: r != 1, mv(2), 3) \
        .set_election(Election.PREFERRED).set_eligible_leader_replicas_enabled(True) \
        .set_last_known_leader_must_be_acceptable(fixed).set_target_isr([])
    r = b.build()
    if fixed:
        assert r is None
    else:
        assert r == rec(FOO_ID, isr=[1], leader=1, leader_recovery_state=RECOVERING,
                        last_known_elr=[])
