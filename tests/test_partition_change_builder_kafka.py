"""PartitionChangeBuilder, ported from Kafka's PartitionChangeBuilderTest.

Follows metadata/src/test/java/org/apache/kafka/controller/PartitionChangeBuilderTest.java at
trunk 1eb7644 (Oct 2024), plus the cases of the same class at tags 3.0.0 .. 3.7.0 that trunk
dropped (testIsrChangeAndLeaderBump, the extra cases of testTriggerLeaderEpochBumpIfNeeded),
driving ``kafkasim.control.kraft.partition_change.PartitionChangeBuilder``.

tests/test_partition_change_builder.py already ports every trunk test once, at the three
metadata.versions of Kafka's ``partitionChangeRecordVersions`` source (3.7-IV0 / 3.7-IV2 /
4.0-IV1), mostly asserting the record alone. This file re-covers the class with what that file
leaves out:

- every metadata.version kafkasim knows where the test is version independent in Kafka's code
  (3.0-IV1 .. 4.4-IV2), and the ELR feature off at an ELR-capable level (4.0-IV1 with
  eligible.leader.replicas.version 0: Kafka's builder then behaves as at record version < 2);
- the record version (Kafka asserts ``ApiMessageAndVersion(record, version)``; kafkasim exposes
  ``record_version()``), its bounds (testChangeRecordIsNoOp's HIGHEST/LOWEST_SUPPORTED_VERSION);
- the registration after ``merge`` (leader epoch / partition epoch), as Kafka does for the ELR
  and recovery-state tests;
- the pre-3.6 ISR-shrink epoch bump at ``build()`` level (KAFKA-15021; 3.0.0-3.5.0's
  testIsrChangeAndLeaderBump), the "leader already changing" case of the 3.x
  testTriggerLeaderEpochBumpIfNeeded.

Adaptation: Kafka's ``Optional<ApiMessageAndVersion>`` is kafkasim's ``build()`` result
(``None`` = Optional.empty) with ``record_version()``; Java camelCase methods are snake_case
(``electLeader`` -> ``elect_leader``, ``setTargetIsrWithBrokerStates`` ->
``set_target_isr_with_broker_states``); records compare by value, so ``rec(...)`` lists exactly the
fields Kafka sets. ``AlterPartitionRequest.newIsrToSimpleNewIsrWithBrokerEpochs`` becomes
``broker_states`` (objects with broker_id / broker_epoch = -1). The replica lists Kafka takes
from PartitionReassignmentReplicas / PartitionReassignmentRevert are written out (those classes,
``kafkasim.control.kraft.reassignment``, have their own tests in tests/test_reassignment_kafka.py).

Left out (kafkasim does not model them):
- testKeepsDirectoriesAfterReassignment, testUpdateDirectories and every ``setDirectories``
  expectation (JBOD directory assignment: kafkasim's records carry no directories); the
  directories case of testChangeRecordIsNoOp and the tagged-field count of the schema.
- (ported since in tests/test_elect_s24_kafka.py, through ``set_zk_migration_enabled``:
  testLeaderEpochBumpZkMigration and the ``setZkMigrationEnabled`` cases, KAFKA-15109).
- testBestLeader / testShouldTryElection (3.0.0, 3.1.0): the pre-3.2 builder API (BestLeader,
  shouldTryElection, setAlwaysElectPreferredIfPossible) does not exist in kafkasim.
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.partition_change import (
    Election,
    ElectionResult,
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

RECOVERED = LeaderRecoveryState.RECOVERED
RECOVERING = LeaderRecoveryState.RECOVERING
NO_CHANGE = LeaderRecoveryState.NO_CHANGE

ALL_MVS = [mv.version() for mv in MetadataVersion.VERSIONS]
MVS_FROM_3_6 = [v for v in ALL_MVS if MetadataVersion.parse(v).is_at_least("3.6-IV0")]

# (metadata.version, ELR enabled, PartitionChangeRecord version). The first three are Kafka's
# metadataVersionForPartitionChangeRecordVersion(0/1/2) with isElrEnabled(version >= 2); the rest
# are the same code paths at other levels kafkasim supports.
VARIANTS = [
    ("3.7-IV0", False, 0),
    ("3.7-IV2", False, 1),
    ("4.0-IV1", True, 2),
    ("3.6-IV0", False, 0),
    ("4.0-IV0", False, 1),
    ("4.0-IV1", False, 2),  # ELR-capable level, eligible.leader.replicas.version = 0
    ("4.1-IV1", True, 2),
    (ALL_MVS[-1], True, 2),
]
VARIANT_IDS = [f"{m}-elr{int(e)}" for m, e, _ in VARIANTS]
ELR_MVS = ["4.0-IV1", "4.1-IV1", ALL_MVS[-1]]

FOO = PartitionRegistration(
    replicas=(2, 1, 3),
    isr=(2, 1, 3),
    leader=1,
    leader_recovery_state=RECOVERED,
    leader_epoch=100,
    partition_epoch=200,
)
FOO_ID = "FbrrdcfiR-KC2CPSTHaJrg"
BAR = PartitionRegistration(
    replicas=(1, 2, 3, 4),
    isr=(1, 2, 3),
    removing_replicas=(1,),
    adding_replicas=(4,),
    leader=1,
    leader_recovery_state=RECOVERED,
    leader_epoch=100,
    partition_epoch=200,
)
BAR_ID = "LKfUsCBnQKekvL9O5dY9nw"
BAZ = PartitionRegistration(
    replicas=(2, 1, 3),
    isr=(1, 3),
    leader=3,
    leader_recovery_state=RECOVERED,
    leader_epoch=100,
    partition_epoch=200,
)
BAZ_ID = "wQzt5gkSTwuQNXZF5gIw7A"
OFFLINE_WITHOUT_ELR = PartitionRegistration(
    replicas=(2, 1, 3),
    isr=(3,),
    leader=NO_LEADER,
    leader_recovery_state=RECOVERED,
    leader_epoch=100,
    partition_epoch=200,
)
OFFLINE_WITH_ELR = PartitionRegistration(
    replicas=(2, 1, 3),
    isr=(),
    elr=(3,),
    last_known_elr=(2,),
    leader=NO_LEADER,
    leader_recovery_state=RECOVERED,
    leader_epoch=100,
    partition_epoch=200,
)
OFFLINE_ID = "LKfUsCBnQKekvL9O5dY9nw"
TOPIC_ID = "FbrrdcfiR-KC2CPSTHaJrg"


@dataclass(frozen=True)
class BrokerState:
    """AlterPartitionRequestData.BrokerState: what newIsrToSimpleNewIsrWithBrokerEpochs makes."""

    broker_id: int
    broker_epoch: int = -1


def broker_states(ids):
    """AlterPartitionRequest.newIsrToSimpleNewIsrWithBrokerEpochs."""
    return [BrokerState(i) for i in ids]


def rec(topic_id, **kw):
    """new PartitionChangeRecord().setTopicId(topic_id).setPartitionId(0).setXxx(...)."""
    return PartitionChangeRecord(
        partition_id=0,
        topic_id=topic_id,
        **{k: tuple(v) if isinstance(v, list) else v for k, v in kw.items()},
    )


def foo_builder(mv, elr):
    return PartitionChangeBuilder(
        FOO, FOO_ID, 0, lambda r: r != 3, mv, 2
    ).set_eligible_leader_replicas_enabled(elr)


def bar_builder(mv, elr):
    return PartitionChangeBuilder(
        BAR, BAR_ID, 0, lambda r: r != 3, mv, 2
    ).set_eligible_leader_replicas_enabled(elr)


def baz_builder(mv, elr):
    return PartitionChangeBuilder(
        BAZ, BAZ_ID, 0, lambda r: True, mv, 2
    ).set_eligible_leader_replicas_enabled(elr)


def offline_builder(mv, elr):
    """createOfflineBuilder: the ELR partition when ELR is on, else the plain offline one."""
    part = OFFLINE_WITH_ELR if elr else OFFLINE_WITHOUT_ELR
    return PartitionChangeBuilder(
        part, OFFLINE_ID, 0, lambda r: r == 1, mv, 2
    ).set_eligible_leader_replicas_enabled(elr)


def built(builder):
    """Optional<ApiMessageAndVersion>: (record, version), or None for Optional.empty()."""
    record = builder.build()
    return None if record is None else (record, builder.record_version())


def elects(builder, node, unclean):
    """assertElectLeaderEquals."""
    result = builder.elect_leader()
    assert isinstance(result, ElectionResult)
    assert (result.node, result.unclean) == (node, unclean)


def epoch_bump_leader(builder, record=None):
    """testTriggerLeaderEpochBumpIfNeeded (trunk helper): reassignment check, then the ISR
    shrink check with the record's ISR set to the builder's target ISR."""
    record = {} if record is None else record
    builder.trigger_leader_epoch_bump_for_replica_reassignment_if_needed(record)
    record["isr"] = list(builder.target_isr)
    builder.trigger_leader_epoch_bump_for_isr_shrink_if_needed(record)
    return record.get("leader", NO_LEADER_CHANGE)


# -- testChangeRecordIsNoOp -----------------------------------------------------------------------
def test_change_record_is_no_op():
    """testChangeRecordIsNoOp (directories case left out: not modelled)."""
    assert change_record_is_no_op(rec(FOO_ID))
    assert PartitionChangeBuilder.change_record_is_no_op(rec(FOO_ID))
    assert not change_record_is_no_op(rec(FOO_ID, leader=1))
    assert not change_record_is_no_op(rec(FOO_ID, leader=NO_LEADER))
    assert not change_record_is_no_op(rec(FOO_ID, isr=[1, 2, 3]))
    assert not change_record_is_no_op(rec(FOO_ID, isr=[]))
    assert not change_record_is_no_op(rec(FOO_ID, removing_replicas=[1]))
    assert not change_record_is_no_op(rec(FOO_ID, adding_replicas=[4]))
    assert not change_record_is_no_op(rec(FOO_ID, replicas=[1, 2]))
    assert not change_record_is_no_op(rec(FOO_ID, eligible_leader_replicas=[5]))
    assert not change_record_is_no_op(rec(FOO_ID, last_known_elr=[6]))
    assert not change_record_is_no_op(rec(FOO_ID, leader_recovery_state=RECOVERED))


def test_partition_change_record_versions():
    """testChangeRecordIsNoOp: LOWEST_SUPPORTED_VERSION 0, HIGHEST_SUPPORTED_VERSION 2, and
    metadataVersionForPartitionChangeRecordVersion (0: 3.7-IV0, 1: 3.7-IV2, 2: 4.0-IV1)."""
    versions = [MetadataVersion.parse(v).partition_change_record_version() for v in ALL_MVS]
    assert min(versions) == 0 and max(versions) == 2
    for mv, _, version in VARIANTS:
        assert MetadataVersion.parse(mv).partition_change_record_version() == version
    assert MetadataVersion.parse("3.7-IV1").partition_change_record_version() == 0
    assert MetadataVersion.parse("3.7-IV4").partition_change_record_version() == 1
    assert MetadataVersion.parse("3.9-IV0").partition_change_record_version() == 1


# -- testElectLeader ------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "mv,elr,version", VARIANTS + [("3.0-IV1", False, 0)], ids=VARIANT_IDS + ["3.0-IV1-elr0"]
)
def test_elect_leader(mv, elr, version):
    """testElectLeader."""
    elects(foo_builder(mv, elr).set_election(Election.PREFERRED), 2, False)
    elects(foo_builder(mv, elr), 1, False)
    elects(foo_builder(mv, elr).set_election(Election.UNCLEAN), 1, False)
    elects(foo_builder(mv, elr).set_target_isr_with_broker_states(broker_states([1, 3])), 1, False)
    elects(
        foo_builder(mv, elr)
        .set_election(Election.UNCLEAN)
        .set_target_isr_with_broker_states(broker_states([1, 3])),
        1,
        False,
    )
    elects(
        foo_builder(mv, elr).set_target_isr_with_broker_states(broker_states([3])), NO_LEADER, False
    )
    elects(
        foo_builder(mv, elr)
        .set_election(Election.UNCLEAN)
        .set_target_isr_with_broker_states(broker_states([3])),
        2,
        True,
    )
    elects(
        foo_builder(mv, elr)
        .set_election(Election.UNCLEAN)
        .set_target_isr_with_broker_states(broker_states([4]))
        .set_target_replicas([2, 1, 3, 4]),
        4,
        False,
    )

    elects(baz_builder(mv, elr).set_election(Election.PREFERRED), 3, False)
    elects(baz_builder(mv, elr), 3, False)
    elects(baz_builder(mv, elr).set_election(Election.UNCLEAN), 3, False)


# -- leader epoch bumps ---------------------------------------------------------------------------
@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_no_leader_epoch_bump_if_nothing_changed(mv, elr, version):
    """testNoLeaderEpochBumpIfNothingChanged."""
    assert epoch_bump_leader(foo_builder(mv, elr)) == NO_LEADER_CHANGE


@pytest.mark.parametrize("mv", MVS_FROM_3_6)
def test_no_leader_epoch_bump_on_isr_shrink(mv):
    """testNoLeaderEpochBumpOnIsrShrink (3.6-IV0, 3.7-IV2, 4.0-IV0 and every later level)."""
    b = foo_builder(mv, MetadataVersion.parse(mv).is_elr_supported())
    assert (
        epoch_bump_leader(b.set_target_isr_with_broker_states(broker_states([2, 1])))
        == NO_LEADER_CHANGE
    )


@pytest.mark.parametrize("mv", [v for v in ALL_MVS if v not in MVS_FROM_3_6])
def test_leader_epoch_bump_on_isr_shrink(mv):
    """testLeaderEpochBumpOnIsrShrink (3.4-IV0, 3.5-IV2 and every level before 3.6-IV0:
    KAFKA-15021)."""
    b = foo_builder(mv, False).set_target_isr_with_broker_states(broker_states([2, 1]))
    assert epoch_bump_leader(b) == 1


@pytest.mark.parametrize("mv", ALL_MVS)
def test_no_leader_epoch_bump_on_isr_expansion(mv):
    """testNoLeaderEpochBumpOnIsrExpansion, at every level."""
    b = foo_builder(mv, MetadataVersion.parse(mv).is_elr_supported())
    assert (
        epoch_bump_leader(b.set_target_isr_with_broker_states(broker_states([2, 1, 3, 4])))
        == NO_LEADER_CHANGE
    )


@pytest.mark.parametrize("mv", ALL_MVS)
def test_leader_epoch_bump_on_new_replica_set_disjoint(mv):
    """testLeaderEpochBumpOnNewReplicaSetDisjoint, at every level."""
    b = foo_builder(mv, MetadataVersion.parse(mv).is_elr_supported())
    assert epoch_bump_leader(b.set_target_replicas([2, 1, 4])) == 1


@pytest.mark.parametrize("mv", ["3.0-IV1", "3.5-IV2", "3.7-IV0", "4.0-IV1"])
def test_trigger_leader_epoch_bump_replica_changes(mv):
    """testTriggerLeaderEpochBumpIfNeeded (tags 3.0.0-3.7.0): adding a replica does not bump
    the epoch; a leader the record already sets is kept (the epoch grows anyway)."""
    b = foo_builder(mv, MetadataVersion.parse(mv).is_elr_supported())
    assert epoch_bump_leader(b.set_target_replicas([2, 1, 3, 4])) == NO_LEADER_CHANGE
    b = foo_builder(mv, MetadataVersion.parse(mv).is_elr_supported())
    assert epoch_bump_leader(b.set_target_replicas([2, 1, 3, 4]), {"leader": 2}) == 2
    # an ISR shrink or a dropped replica does not override a leader change either
    b = foo_builder(mv, False).set_target_isr([2, 1]).set_target_replicas([2, 1])
    assert epoch_bump_leader(b, {"leader": 2}) == 2


@pytest.mark.parametrize("mv", ALL_MVS)
def test_no_leader_epoch_bump_on_empty_target_isr(mv):
    """testNoLeaderEpochBumpOnEmptyTargetIsr (KAFKA-16624), at every level: with the record's
    ISR unset, triggerLeaderEpochBumpForIsrShrinkIfNeeded does not engage."""
    part = PartitionRegistration(
        replicas=(2,),
        isr=(2,),
        leader=2,
        leader_recovery_state=RECOVERED,
        leader_epoch=100,
        partition_epoch=200,
    )
    b = (
        PartitionChangeBuilder(part, FOO_ID, 0, lambda r: True, mv, 2)
        .set_eligible_leader_replicas_enabled(MetadataVersion.parse(mv).is_elr_supported())
        .set_target_replicas([])
    )
    record = {}
    b.trigger_leader_epoch_bump_for_isr_shrink_if_needed(record)
    assert record.get("leader", NO_LEADER_CHANGE) == NO_LEADER_CHANGE


@pytest.mark.parametrize("mv", ALL_MVS)
def test_isr_change_and_leader_bump_by_metadata_version(mv):
    """testIsrChangeAndLeaderBump (3.0.0-3.5.0: the ISR shrink writes the leader so the epoch
    grows) vs testIsrChangeDoesntBumpLeaderEpoch (3.6.0+), through build() and merge."""
    m = MetadataVersion.parse(mv)
    b = foo_builder(mv, m.is_elr_supported()).set_target_isr_with_broker_states(
        broker_states([2, 1])
    )
    bump = m.is_less_than("3.6-IV0")
    expected = rec(FOO_ID, isr=[2, 1], leader=1) if bump else rec(FOO_ID, isr=[2, 1])
    assert built(b) == (expected, m.partition_change_record_version())
    merged = FOO.merge(expected)
    assert (merged.leader, merged.isr) == (1, (2, 1))
    assert merged.leader_epoch == (101 if bump else 100)
    assert merged.partition_epoch == 201


# -- build(): no change, ISR and reassignment changes ---------------------------------------------
@pytest.mark.parametrize(
    "mv,elr,version", VARIANTS + [("3.0-IV1", False, 0)], ids=VARIANT_IDS + ["3.0-IV1-elr0"]
)
def test_no_change(mv, elr, version):
    """testNoChange."""
    assert built(foo_builder(mv, elr)) is None
    assert built(foo_builder(mv, elr).set_election(Election.UNCLEAN)) is None
    assert built(bar_builder(mv, elr)) is None
    assert built(bar_builder(mv, elr).set_election(Election.UNCLEAN)) is None
    assert built(baz_builder(mv, elr).set_election(Election.PREFERRED)) is None


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_isr_change_doesnt_bump_leader_epoch(mv, elr, version):
    """testIsrChangeDoesntBumpLeaderEpoch."""
    b = foo_builder(mv, elr).set_target_isr_with_broker_states(broker_states([2, 1]))
    assert built(b) == (rec(FOO_ID, isr=[2, 1]), version)


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_isr_change_and_leader_change(mv, elr, version):
    """testIsrChangeAndLeaderChange (+ the merged registration)."""
    b = foo_builder(mv, elr).set_target_isr_with_broker_states(broker_states([2, 3]))
    expected = rec(FOO_ID, isr=[2, 3], leader=2)
    assert built(b) == (expected, version)
    merged = FOO.merge(expected)
    assert (merged.leader, merged.isr, merged.leader_epoch, merged.partition_epoch) == (
        2,
        (2, 3),
        101,
        201,
    )
    assert merged.leader_recovery_state == RECOVERED


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_reassignment_rearranges_replicas(mv, elr, version):
    """testReassignmentRearrangesReplicas: same replica set, new order: no epoch bump."""
    b = foo_builder(mv, elr).set_target_replicas([3, 2, 1])
    expected = rec(FOO_ID, replicas=[3, 2, 1])
    assert built(b) == (expected, version)
    merged = FOO.merge(expected)
    assert (merged.replicas, merged.leader, merged.leader_epoch) == ((3, 2, 1), 1, 100)


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_isr_enlargement_completes_reassignment(mv, elr, version):
    """testIsrEnlargementCompletesReassignment."""
    b = bar_builder(mv, elr).set_target_isr_with_broker_states(broker_states([1, 2, 3, 4]))
    expected = rec(
        BAR_ID,
        replicas=[2, 3, 4],
        isr=[2, 3, 4],
        leader=2,
        removing_replicas=[],
        adding_replicas=[],
    )
    assert built(b) == (expected, version)
    merged = BAR.merge(expected)
    assert (merged.replicas, merged.isr, merged.removing_replicas, merged.adding_replicas) == (
        (2, 3, 4),
        (2, 3, 4),
        (),
        (),
    )
    assert (merged.leader, merged.leader_epoch) == (2, 101)


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_revert_reassignment(mv, elr, version):
    """testRevertReassignment: PartitionReassignmentRevert(BAR) gives replicas [1, 2, 3] and
    ISR [1, 2, 3] (adding replica 4 dropped), so the leader is rewritten (epoch bump)."""
    b = (
        bar_builder(mv, elr)
        .set_target_replicas([1, 2, 3])
        .set_target_isr_with_broker_states(broker_states([1, 2, 3]))
        .set_target_removing([])
        .set_target_adding([])
    )
    expected = rec(BAR_ID, replicas=[1, 2, 3], leader=1, removing_replicas=[], adding_replicas=[])
    assert built(b) == (expected, version)
    assert BAR.merge(expected).leader_epoch == 101


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_removing_replica_reassignment(mv, elr, version):
    """testRemovingReplicaReassignment: PartitionReassignmentReplicas([2, 1, 3] -> [1, 2]) is
    removing [3], adding [], replicas [1, 2, 3]; the ISR already holds the targets, so the
    reassignment completes at once and the leader is rewritten."""
    b = foo_builder(mv, elr).set_target_replicas([1, 2, 3]).set_target_removing([3])
    expected = rec(FOO_ID, replicas=[1, 2], isr=[2, 1], leader=1)
    assert built(b) == (expected, version)
    merged = FOO.merge(expected)
    assert (merged.replicas, merged.isr, merged.leader_epoch) == ((1, 2), (2, 1), 101)


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_adding_replica_reassignment(mv, elr, version):
    """testAddingReplicaReassignment: PartitionReassignmentReplicas([2, 1, 3] -> [1, 2, 3, 4])
    is removing [], adding [4], replicas [1, 2, 3, 4]; nothing is dropped, no epoch bump."""
    b = foo_builder(mv, elr).set_target_replicas([1, 2, 3, 4]).set_target_adding([4])
    expected = rec(FOO_ID, replicas=[1, 2, 3, 4], adding_replicas=[4])
    assert built(b) == (expected, version)
    assert FOO.merge(expected).leader_epoch == 100


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_unclean_leader_election(mv, elr, version):
    """testUncleanLeaderElection."""
    b = (
        foo_builder(mv, elr)
        .set_election(Election.UNCLEAN)
        .set_target_isr_with_broker_states(broker_states([3]))
    )
    assert built(b) == (rec(FOO_ID, isr=[2], leader=2, leader_recovery_state=RECOVERING), version)
    # The ELR partition: the unclean election clears ELR and LastKnownElr.
    extra = {"eligible_leader_replicas": [], "last_known_elr": []} if elr else {}
    expected = rec(OFFLINE_ID, isr=[1], leader=1, leader_recovery_state=RECOVERING, **extra)
    assert built(offline_builder(mv, elr).set_election(Election.UNCLEAN)) == (expected, version)
    assert built(
        offline_builder(mv, elr)
        .set_election(Election.UNCLEAN)
        .set_target_isr_with_broker_states(broker_states([2]))
    ) == (expected, version)
    merged = (OFFLINE_WITH_ELR if elr else OFFLINE_WITHOUT_ELR).merge(expected)
    assert (merged.leader, merged.isr, merged.elr, merged.last_known_elr) == (1, (1,), (), ())
    assert (merged.leader_recovery_state, merged.leader_epoch) == (RECOVERING, 101)


def leader_recovery_mv(supported):
    """leaderRecoveryMetadataVersion."""
    return "3.2-IV0" if supported else "3.1-IV0"


@pytest.mark.parametrize("mv", ["3.1-IV0", "3.2-IV0", "3.7-IV2", "4.0-IV1"])
def test_change_in_leadership_does_not_change_recovery_state(mv):
    """testChangeInLeadershipDoesNotChangeRecoveryState (Kafka: 3.1-IV0 and 3.2-IV0)."""
    leader_id = 1
    reg = PartitionRegistration(
        replicas=(1, 2, 3),
        isr=(leader_id,),
        leader=leader_id,
        leader_recovery_state=RECOVERING,
        leader_epoch=100,
        partition_epoch=200,
    )
    offline = PartitionChangeBuilder(
        reg, FOO_ID, 0, lambda b: False, mv, 2
    ).set_target_isr_with_broker_states([])
    change = offline.build()
    assert change.leader_recovery_state == NO_CHANGE
    assert change.leader == NO_LEADER
    reg = reg.merge(change)
    assert reg.leader == NO_LEADER
    assert reg.isr[0] == leader_id
    assert reg.leader_recovery_state == RECOVERING

    online = PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: True, mv, 2)
    change = online.build()
    assert change.leader_recovery_state == NO_CHANGE
    reg = reg.merge(change)
    assert (reg.leader, reg.isr[0], reg.leader_recovery_state) == (leader_id, leader_id, RECOVERING)
    assert reg.leader_epoch == 102


@pytest.mark.parametrize("mv", ["3.0-IV1", "3.1-IV0", "3.2-IV0", "3.7-IV2", "4.0-IV1", ALL_MVS[-1]])
def test_unclean_sets_leader_recovering_state(mv):
    """testUncleanSetsLeaderRecoveringState (Kafka: 3.1-IV0 and 3.2-IV0; KIP-704 from 3.2)."""
    supported = MetadataVersion.parse(mv).is_at_least(leader_recovery_mv(True))
    leader_id = 1
    reg = PartitionRegistration(
        replicas=(1, 2, 3),
        isr=(2, 3),
        leader=NO_LEADER,
        leader_recovery_state=RECOVERED,
        leader_epoch=100,
        partition_epoch=200,
    )
    b = PartitionChangeBuilder(reg, FOO_ID, 0, lambda b: b == leader_id, mv, 2).set_election(
        Election.UNCLEAN
    )
    change = b.build()
    assert change.leader_recovery_state == (RECOVERING if supported else NO_CHANGE)
    assert change.leader == leader_id
    assert list(change.isr) == [leader_id]
    reg = reg.merge(change)
    assert (reg.leader, reg.isr[0]) == (leader_id, leader_id)
    assert reg.leader_recovery_state == (RECOVERING if supported else RECOVERED)


@pytest.mark.parametrize("mv,version", [("3.1-IV0", 0), ("3.7-IV2", 1), ("4.0-IV1", 2)])
def test_stopped_leader_is_demoted_after_reassignment_completes(mv, version):
    """testStoppedLeaderIsDemotedAfterReassignmentCompletesEvenIfNoNewEligibleLeaders
    (Kafka: 3.1-IV0, ELR off)."""
    part = PartitionRegistration(
        replicas=(2, 3, 0, 1),
        isr=(0, 1),
        removing_replicas=(0, 1),
        adding_replicas=(2, 3),
        leader=0,
        leader_recovery_state=RECOVERED,
        leader_epoch=0,
        partition_epoch=0,
    )
    b = PartitionChangeBuilder(part, "t", 0, lambda r: False, mv, 2)
    assert part.leader == 0
    expected = rec(
        "t", replicas=[2, 3], isr=[2, 3], removing_replicas=[], adding_replicas=[], leader=NO_LEADER
    )
    assert built(b.set_target_isr([0, 1, 2, 3])) == (expected, version)
    merged = part.merge(expected)
    assert (merged.leader, merged.leader_epoch, merged.partition_epoch) == (NO_LEADER, 1, 1)


# -- KIP-966 ELR ----------------------------------------------------------------------------------
def elr_partition(**kw):
    base = dict(
        replicas=(1, 2, 3, 4),
        leader=1,
        leader_recovery_state=RECOVERED,
        leader_epoch=100,
        partition_epoch=200,
    )
    base.update(kw)
    return PartitionRegistration(**base)


def elr_builder(part, mv, elr, acceptable, *, last_known_leader=False):
    """The ELR tests' builder: min ISR 3, PREFERRED election."""
    return (
        PartitionChangeBuilder(part, TOPIC_ID, 0, acceptable, mv, 3)
        .set_election(Election.PREFERRED)
        .set_eligible_leader_replicas_enabled(elr)
        .set_use_last_known_leader_in_balanced_recovery(last_known_leader)
    )


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_elr_isr_shrink_below_min_isr(mv, elr, version):
    """testEligibleLeaderReplicas_IsrShrinkBelowMinISR."""
    part = elr_partition(isr=(1, 2, 3, 4))
    b = elr_builder(part, mv, elr, lambda r: r != 3).set_target_isr_with_broker_states(
        broker_states([1, 2])
    )
    extra = {"eligible_leader_replicas": [3, 4]} if elr else {}
    expected = rec(
        TOPIC_ID, isr=[1, 2], leader=NO_LEADER_CHANGE, leader_recovery_state=NO_CHANGE, **extra
    )
    assert built(b) == (expected, version)
    part = part.merge(b.build())
    assert part.elr == ((3, 4) if elr else ())
    assert part.last_known_elr == ()
    assert (part.leader, part.leader_epoch) == (1, 100)


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_elr_isr_expand_above_min_isr(mv, elr, version):
    """testEligibleLeaderReplicas_IsrExpandAboveMinISR: both modes clear ELR and
    LastKnownElr."""
    part = elr_partition(isr=(1, 2), elr=(3,), last_known_elr=(4,))
    b = elr_builder(part, mv, elr, lambda r: r != 3).set_target_isr_with_broker_states(
        broker_states([1, 2, 3])
    )
    expected = rec(TOPIC_ID, isr=[1, 2, 3], eligible_leader_replicas=[], last_known_elr=[])
    assert built(b) == (expected, version)
    part = part.merge(b.build())
    assert len(part.elr) == 0 and len(part.last_known_elr) == 0


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_elr_isr_add_new_member_not_in_elr(mv, elr, version):
    """testEligibleLeaderReplicas_IsrAddNewMemberNotInELR."""
    part = elr_partition(isr=(1,), elr=(3,), last_known_elr=(2,))
    b = elr_builder(part, mv, elr, lambda r: r != 3).set_target_isr_with_broker_states(
        broker_states([1, 4])
    )
    extra = {} if elr else {"eligible_leader_replicas": [], "last_known_elr": []}
    assert built(b) == (rec(TOPIC_ID, isr=[1, 4], **extra), version)
    part = part.merge(b.build())
    assert (part.elr, part.last_known_elr) == (((3,), (2,)) if elr else ((), ()))


@pytest.mark.parametrize("mv,elr,version", VARIANTS, ids=VARIANT_IDS)
def test_elr_remove_unclean_shutdown_replicas_from_elr(mv, elr, version):
    """testEligibleLeaderReplicas_RemoveUncleanShutdownReplicasFromElr."""
    part = elr_partition(isr=(1,), elr=(2, 3), last_known_elr=())
    b = elr_builder(part, mv, elr, lambda r: r != 3).set_unclean_shutdown_replicas([3])
    extra = (
        {"eligible_leader_replicas": [2], "last_known_elr": [3]}
        if elr
        else {"eligible_leader_replicas": []}
    )
    assert built(b) == (rec(TOPIC_ID, **extra), version)
    part = part.merge(b.build())
    assert (part.elr, part.last_known_elr) == (((2,), (3,)) if elr else ((), ()))
    assert part.leader_epoch == 100 and part.partition_epoch == 201


@pytest.mark.parametrize("mv", ELR_MVS)
@pytest.mark.parametrize("last_known_leader", [True, False])
def test_elr_can_be_elected(mv, last_known_leader):
    """testEligibleLeaderReplicas_ElrCanBeElected: offline leader 1, empty target ISR: ELR
    member 3 leads; the ISR becomes [3] and 1 moves to the ELR."""
    part = elr_partition(isr=(1,), elr=(3,), last_known_elr=() if last_known_leader else (2,))
    b = elr_builder(
        part, mv, True, lambda r: r != 1, last_known_leader=last_known_leader
    ).set_target_isr([])
    expected = rec(
        TOPIC_ID, isr=[3], eligible_leader_replicas=[1], leader=3, leader_recovery_state=NO_CHANGE
    )
    assert built(b) == (expected, 2)
    part = part.merge(b.build())
    assert part.elr == (1,)
    assert part.last_known_elr == (() if last_known_leader else (2,))
    assert part.isr == (3,)
    assert (part.leader, part.leader_epoch, part.leader_recovery_state) == (3, 101, RECOVERED)


@pytest.mark.parametrize("mv", ELR_MVS)
@pytest.mark.parametrize("last_known_leader", [True, False])
def test_elr_isr_can_shrink_to_zero(mv, last_known_leader):
    """testEligibleLeaderReplicas_IsrCanShrinkToZero."""
    part = elr_partition(isr=(1, 2, 3, 4), elr=(), last_known_elr=())
    b = elr_builder(
        part, mv, True, lambda r: False, last_known_leader=last_known_leader
    ).set_target_isr([])
    extra = {"last_known_elr": [1]} if last_known_leader else {}
    expected = rec(
        TOPIC_ID,
        isr=[],
        leader=NO_LEADER,
        leader_recovery_state=NO_CHANGE,
        eligible_leader_replicas=[1, 2, 3, 4],
        **extra,
    )
    assert built(b) == (expected, 2)
    part = part.merge(b.build())
    assert part.elr == (1, 2, 3, 4)
    if last_known_leader:
        assert part.last_known_elr == (1,)
        b = elr_builder(
            part, mv, True, lambda r: False, last_known_leader=True
        ).set_unclean_shutdown_replicas([2])
        change = b.build()
        assert change.last_known_elr is None, change
        # read off maybePopulateTargetElr: the uncleanly shut down replica leaves the ELR
        assert change.eligible_leader_replicas == (1, 3, 4)
        assert change.leader == NO_LEADER_CHANGE
    else:
        assert part.last_known_elr == ()
    assert part.isr == ()
    assert (part.leader, part.leader_epoch) == (NO_LEADER, 101)


@pytest.mark.parametrize("mv", ELR_MVS)
def test_elr_elect_last_known_leader(mv):
    """testEligibleLeaderReplicas_ElectLastKnownLeader: empty ISR and ELR, LastKnownElr [1]:
    1 is elected uncleanly (RECOVERING) and LastKnownElr is cleared."""
    part = elr_partition(isr=(), elr=(), last_known_elr=(1,), leader=NO_LEADER)
    b = elr_builder(part, mv, True, lambda r: True, last_known_leader=True).set_target_isr([])
    expected = rec(TOPIC_ID, isr=[1], leader=1, leader_recovery_state=RECOVERING, last_known_elr=[])
    assert built(b) == (expected, 2)
    part = part.merge(b.build())
    assert (part.elr, part.last_known_elr, part.isr) == ((), (), (1,))
    assert (part.leader, part.leader_epoch, part.leader_recovery_state) == (1, 101, RECOVERING)


@pytest.mark.parametrize("mv", ELR_MVS)
def test_elr_elect_last_known_leader_should_fail(mv):
    """testEligibleLeaderReplicas_ElectLastKnownLeaderShouldFail: a non-empty ELR (of fenced
    replica 3) rules out the last known leader: no change at all."""
    part = elr_partition(isr=(), elr=(3,), last_known_elr=(1,), leader=NO_LEADER)
    b = elr_builder(part, mv, True, lambda r: r != 3, last_known_leader=True).set_target_isr([])
    assert built(b) is None
    assert b.elect_leader() == ElectionResult(NO_LEADER, False)
