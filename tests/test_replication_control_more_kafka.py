"""More of Kafka's ReplicationControlManagerTest, the 4.1.0 / 4.3.0 cases the other port files
leave out.

Follows metadata/src/test/java/org/apache/kafka/controller/ReplicationControlManagerTest.java at
the Apache release commits 4.1.0 (13f70256db) and 4.3.0 (a9ce322153), on the
ReplicationControlTestContext of tests/test_replication_control_manager_kafka.py (``Ctx``:
kafkasim's real ClusterControlManager and ReplicationControlManager, ``register`` /
``unfence`` / ``fence`` as Kafka's registerBrokers / unfenceBrokers / fenceBrokers). Kafka's
``setStaticConfig(min.insync.replicas, "2")`` is the manager's ``default_min_isr``;
``handleBrokersShutdown`` replays ``handle_broker_shutdown`` for each broker; the config
changes go through ``configuration_control`` (``legacy_alter_configs`` /
``incremental_alter_configs``) and their records are replayed, ClearElrRecord included.

Scenarios are Kafka's; code is our own. Each test's docstring names the Kafka test it ports.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.reassignment import (
    AlterPartitionReassignmentsResponse,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
)
from kafkasim.control.kraft.records import (
    NO_LEADER,
    ClearElrRecord,
    ConfigRecord,
    PartitionChangeRecord,
)
from kafkasim.control.kraft.replication_control import (
    MAX_PARTITIONS_PER_BATCH,
    CreatableTopic,
    PolicyViolationException,
    ReplicationControlManager,
)
from kafkasim.core import errors as E
from tests.test_replication_control_manager_kafka import Ctx as TrunkCtx

MIN_ISR = "min.insync.replicas"


def Ctx(**kw):  # noqa: N802 -- ReplicationControlTestContext at 4.1.0
    """The context at 4.1.0: KAFKA-19522 (the last known leader must be acceptable) is in,
    apache/kafka #20629 (4.2.0) is not."""
    kw.setdefault("last_known_leader_must_be_acceptable", True)
    return TrunkCtx(**kw)


def elr_ctx(replicas=(0, 1, 2), min_isr=None, **kw):
    """ReplicationControlTestContext with ELR on, ``replicas`` registered and unfenced, topic
    foo with one partition on them (leader: the first), min.insync.replicas set on foo."""
    ctx = Ctx(elr=True, **kw)
    ctx.register(*replicas)
    ctx.unfence(*replicas)
    ctx.create("foo", [list(replicas)])
    assert ctx.part().leader == replicas[0]
    if min_isr is not None:
        ctx.alter_topic_config("foo", MIN_ISR, str(min_isr))
    return ctx


def shutdown(ctx, clean, *ids):
    """ReplicationControlTestContext.handleBrokersShutdown."""
    records = []
    for b in ids:
        records += ctx.rc.handle_broker_shutdown(b, clean)
    ctx.replay(records)


def elr_lke(ctx, topic="foo", p=0):
    part = ctx.part(topic, p)
    return part.elr, part.last_known_elr


# ============================================================ ELR: shrink, fence, shutdown


def test_eligible_leader_replicas_shrink_to_empty_isr():
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_ShrinkToEmptyIsr @4.1.0: min ISR
    3, brokers 1 and 2 fenced (ISR [0], ELR [1, 2]); a clean shutdown of the last ISR member
    moves it into the ELR and makes it the last known leader, with an empty ISR."""
    ctx = elr_ctx((0, 1, 2), 3)
    ctx.fence(1, 2)
    assert elr_lke(ctx) == ((1, 2), ())
    shutdown(ctx, True, 0)
    p = ctx.part()
    assert (p.elr, p.last_known_elr, p.isr, p.leader) == ((0, 1, 2), (0,), (), NO_LEADER)


def test_eligible_leader_replicas_shrink_to_empty_isr_unclean_shutdown():
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_ShrinkToEmptyIsr @4.1.0, the
    other branch of handleBrokerShutdown: an unclean shutdown of the last ISR member does not
    join the ELR (handleBrokerUncleanShutdown) but is still the last known leader."""
    ctx = elr_ctx((0, 1, 2), 3)
    ctx.fence(1, 2)
    shutdown(ctx, False, 0)
    p = ctx.part()
    assert (p.elr, p.last_known_elr, p.isr, p.leader) == ((1, 2), (0,), (), NO_LEADER)


def test_eligible_leader_replicas_unclean_shutdown_via_handle_broker_shutdown():
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_UncleanShutdown @4.1.0, through
    the context's handleBrokersShutdown(false, ...) as the 4.1 test does: the unclean ELR member
    3 leaves the ELR, then the unclean last ISR member 0 becomes the last known leader."""
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(1, 2, 3)
    assert elr_lke(ctx) == ((2, 3), ())
    shutdown(ctx, False, 3)
    assert elr_lke(ctx) == ((2,), ())
    shutdown(ctx, False, 0)
    assert elr_lke(ctx) == ((2,), (0,))


def test_handle_broker_shutdown_without_elr_acts_as_fence():
    """ReplicationControlManager.handleBrokerShutdown @4.1.0 with the ELR feature off (the
    else branch the ELR tests do not reach): even an unclean shutdown only takes the broker
    out of the ISRs, as handleBrokerFenced does, and no ELR appears."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    ctx.create("foo", [[0, 1, 2]])
    ctx.alter_topic_config("foo", MIN_ISR, "3")
    shutdown(ctx, False, 0)
    p = ctx.part()
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (1, (1, 2), (), ())


def test_eligible_leader_replicas_clean_election_keeps_elr_order():
    """ReplicationControlManagerTest.testEligibleLeaderReplicas_CleanElection @4.1.0: after
    broker 2 comes back and 0, 1 are fenced, 2 leads from the ISR [2], ELR [0, 3]."""
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(1, 2, 3)
    assert elr_lke(ctx) == ((2, 3), ())
    ctx.unfence(2)
    ctx.fence(0, 1)
    p = ctx.part()
    assert (p.elr, p.isr, p.leader, p.last_known_elr) == ((0, 3), (2,), 2, ())


# ============================================================ ELR and min.insync.replicas


def _elrs_removed_ctx():
    ctx = Ctx(elr=True, default_min_isr=2)
    ctx.register(1, 2, 3, 4)
    ctx.unfence(1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 4], [1, 3, 4]])
    ctx.create("bar", [[1, 2, 4], [1, 3, 4]])
    ctx.fence(4)
    ctx.fence(1)
    assert ctx.part("foo", 0).elr == (1,)
    assert ctx.part("bar", 0).elr == (1,)
    return ctx


@pytest.mark.parametrize("cluster_level", [False, True])
@pytest.mark.parametrize("use_legacy_alter_configs", [False, True])
def test_elrs_removed_on_min_isr_update(cluster_level, use_legacy_alter_configs):
    """ReplicationControlManagerTest.testElrsRemovedOnMinIsrUpdate @4.1.0 (all four CsvSource
    rows): static min ISR 2, foo and bar with ELR [1]; setting min.insync.replicas=1 on foo
    (or at the cluster level) writes a ClearElrRecord that empties foo's ELR (and bar's only
    at the cluster level)."""
    ctx = _elrs_removed_ctx()
    resource = ("BROKER", "") if cluster_level else ("TOPIC", "foo")
    configs = ctx.rc.configuration_control
    if use_legacy_alter_configs:
        records, results = configs.legacy_alter_configs({resource: {MIN_ISR: "1"}}, False)
    else:
        records, results = configs.incremental_alter_configs(
            {resource: {MIN_ISR: ("SET", "1")}}, False)
    assert [r.is_success() for r in results.values()] == [True]
    assert records[-1] == ClearElrRecord("" if cluster_level else "foo")
    ctx.replay(records)
    assert ctx.part("foo", 0).elr == ()
    assert ctx.part("bar", 0).elr == (() if cluster_level else (1,))


def test_elrs_removed_should_not_bump_partition_epoch_if_no_change():
    """ReplicationControlManagerTest.testElrsRemovedShouldNotBumpPartitionEpochIfNoChange
    @4.1.0: replaying a ClearElrRecord leaves a partition without ELR untouched."""
    ctx = Ctx(elr=True, default_min_isr=2)
    ctx.register(1, 2, 3, 4)
    ctx.unfence(1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 4], [1, 3, 4]])
    before = ctx.part("foo", 0)
    ctx.replay([ClearElrRecord()])
    assert ctx.part("foo", 0) == before
    assert ctx.part("foo", 0).partition_epoch == before.partition_epoch


def test_legacy_alter_configs_implicitly_deletes_other_keys():
    """ConfigurationControlManager.legacyAlterConfigs @4.1.0 (legacyAlterConfigResource), as
    testElrsRemovedOnMinIsrUpdate's legacy rows use it: the keys of the resource that the
    request leaves out are deleted (null ConfigRecords after the altered ones), then the
    ClearElrRecord of the min.insync.replicas change."""
    ctx = _elrs_removed_ctx()
    ctx.replay([ConfigRecord("TOPIC", "foo", "retention.ms", "1000")])
    configs = ctx.rc.configuration_control
    records, results = configs.legacy_alter_configs({("TOPIC", "foo"): {MIN_ISR: "1"}}, False)
    assert records == [ConfigRecord("TOPIC", "foo", MIN_ISR, "1"),
                       ConfigRecord("TOPIC", "foo", "retention.ms", None),
                       ClearElrRecord("foo")]
    ctx.replay(records)
    assert configs.current_topic_config("foo") == {MIN_ISR: "1"}


def test_legacy_alter_configs_refuses_broker_min_isr_with_elr():
    """ConfigurationControlManager.legacyAlterConfigs @4.1.0: validateAlterConfig refuses a
    per-broker min.insync.replicas while ELR is on, and the resource writes nothing."""
    ctx = _elrs_removed_ctx()
    configs = ctx.rc.configuration_control
    records, results = configs.legacy_alter_configs({("BROKER", "1"): {MIN_ISR: "1"}}, False)
    assert records == []
    (error,) = results.values()
    assert error.error == E.INVALID_CONFIG


# ===================================================== createTopics: partitions per request


def test_excessive_number_of_topics_cannot_be_created():
    """ReplicationControlManagerTest.testExcessiveNumberOfTopicsCannotBeCreated @4.1.0: 5000 +
    5000 + 1 partitions in one CreateTopics request is more than MAX_PARTITIONS_PER_BATCH."""
    ctx = Ctx()
    request = [CreatableTopic("foo", 5000, 1), CreatableTopic("bar", 5000, 1),
               CreatableTopic("baz", 1, 1)]
    with pytest.raises(PolicyViolationException) as e:
        ctx.rc.create_topics(request)
    assert str(e.value) == "Excessively large number of partitions per request."
    assert e.value.error == "POLICY_VIOLATION"
    assert MAX_PARTITIONS_PER_BATCH == 10_000


def test_excessive_number_of_topics_cannot_be_created_with_assignments():
    """ReplicationControlManagerTest.testExcessiveNumberOfTopicsCannotBeCreatedWithAssignments
    @4.1.0: validateTotalNumberOfPartitions counts -1 partitions as the default (9999 here)
    and a manual assignment by its partitions (2)."""
    request = [CreatableTopic("foo", -1, 1), CreatableTopic("baz", assignments={1: [], 2: []})]
    with pytest.raises(PolicyViolationException) as e:
        ReplicationControlManager.validate_total_number_of_partitions(request, 9999)
    assert str(e.value) == "Excessively large number of partitions per request."
    ReplicationControlManager.validate_total_number_of_partitions(request, 9998)


def test_total_number_of_partitions_validation_does_not_overflow():
    """ReplicationControlManagerTest.testTotalNumberOfPartitionsValidationDoesNotOverflow @4.4
    (f86720838c; e74637ae04): two topics of Integer.MAX_VALUE partitions are refused. 4.4 sums
    in a long and checks after each topic; through 4.3 the int sum wrapped to -2 and passed.
    Python ints do not wrap, so kafkasim refuses the request in every release (documented in
    docs/kafka-4x-coverage.md, "The 4.4 line")."""
    int_max = 2**31 - 1
    request = [CreatableTopic("foo", int_max, 1), CreatableTopic("bar", int_max, 1)]
    with pytest.raises(PolicyViolationException) as e:
        ReplicationControlManager.validate_total_number_of_partitions(request, 1)
    assert str(e.value) == "Excessively large number of partitions per request."


def test_create_topics_batch_at_the_partition_limit():
    """validateTotalNumberOfPartitions @4.1.0 at its bound: exactly 10000 partitions pass;
    non-positive counts other than -1 add nothing (createTopic rejects them itself)."""
    ctx = Ctx()
    ctx.register(0)
    ctx.unfence(0)
    ReplicationControlManager.validate_total_number_of_partitions(
        [CreatableTopic("a", 9999, 1), CreatableTopic("b", -1, 1), CreatableTopic("c", 0, 1),
         CreatableTopic("d", -5, 1)], 1)
    records, results = ctx.rc.create_topics([CreatableTopic("foo", 2, 1)])
    assert results["foo"].error == E.NONE and results["foo"].num_partitions == 2


# ================================================= reassignment: allowReplicationFactorChange


def _rf_ctx(partitions):
    ctx = Ctx()
    ctx.register(0, 1, 2, 3)
    ctx.unfence(0, 1, 2, 3)
    ctx.create("foo", [[0, 1, 2]] * partitions)
    return ctx


FOO_0_ONGOING = (
    OngoingTopicReassignment("foo", (OngoingPartitionReassignment(0, (1, 2, 3, 0), (3,), (0,)),)),
)


def _rf_error(old, new):
    return E.INVALID_REPLICATION_FACTOR, f"The replication factor is changed from {old} to {new}"


def test_alter_partition_disallow_replication_factor_change():
    """ReplicationControlManagerTest.testAlterPartitionDisallowReplicationFactorChange @4.1.0
    (KIP-860): with allowReplicationFactorChange=false a target of another size is refused
    with INVALID_REPLICATION_FACTOR; while foo-0 is being reassigned its size is the
    reassignment's target size (replicas + adding - removing = 3)."""
    ctx = _rf_ctx(3)
    rc = ctx.rc
    records, resp = rc.alter_partition_reassignments(
        [("foo", [(0, [1, 2, 3]), (1, [0, 1]), (2, [0, 1, 2, 3])])],
        allow_replication_factor_change=False)
    assert resp == AlterPartitionReassignmentsResponse(
        (ReassignableTopicResponse("foo", (
            ReassignablePartitionResponse(0),
            ReassignablePartitionResponse(1, *_rf_error(3, 2)),
            ReassignablePartitionResponse(2, *_rf_error(3, 4)))),),
        allow_replication_factor_change=False)
    ctx.replay(records)
    assert rc.list_partition_reassignments([("foo", [0, 1, 2])]).topics == FOO_0_ONGOING
    _, resp = rc.alter_partition_reassignments([("foo", [(0, [0, 1])])],
                                               allow_replication_factor_change=False)
    assert resp.responses[0].partitions == (ReassignablePartitionResponse(0, *_rf_error(3, 2)),)
    _, resp = rc.alter_partition_reassignments([("foo", [(0, [0, 2, 3])])],
                                               allow_replication_factor_change=False)
    assert resp.responses[0].partitions == (ReassignablePartitionResponse(0),)
    assert resp.allow_replication_factor_change is False


def test_disallow_replication_factor_change_no_effect_when_cancel_alter_partition():
    """ReplicationControlManagerTest.testDisallowReplicationFactorChangeNoEffectWhenCancel
    AlterPartition @4.1.0: cancelling (null replicas) is never an RF change."""
    ctx = _rf_ctx(1)
    rc = ctx.rc
    records, resp = rc.alter_partition_reassignments([("foo", [(0, [1, 2, 3])])])
    assert resp.allow_replication_factor_change is True
    assert resp.responses[0].partitions == (ReassignablePartitionResponse(0),)
    ctx.replay(records)
    assert rc.list_partition_reassignments([("foo", [0, 1, 2])]).topics == FOO_0_ONGOING
    records, resp = rc.alter_partition_reassignments([("foo", [(0, None)])],
                                                     allow_replication_factor_change=False)
    assert resp.responses[0].partitions == (ReassignablePartitionResponse(0),)
    ctx.replay(records)
    assert rc.list_partition_reassignments(None).topics == ()


def test_allow_replication_factor_change_default_allows_growth():
    """alterPartitionReassignments @4.1.0: allowReplicationFactorChange defaults to true (the
    request field's default, and every request before AlterPartitionReassignments v1), so
    a bigger target starts a reassignment as before KIP-860."""
    ctx = _rf_ctx(1)
    records, resp = ctx.rc.alter_partition_reassignments([("foo", [(0, [0, 1, 2, 3])])])
    assert resp.responses[0].partitions == (ReassignablePartitionResponse(0),)
    assert records and isinstance(records[0], PartitionChangeRecord)
    assert records[0].adding_replicas == (3,)


def test_quorum_controller_create_topics_fails_whole_request_over_the_limit():
    """QuorumController.createTopics -> ReplicationControlManager.createTopics @4.1.0: the
    PolicyViolationException of validateTotalNumberOfPartitions fails the operation
    (POLICY_VIOLATION), and no topic of the request is created."""
    from tests.test_quorum_controller_kafka import ControllerEnv, register_brokers_and_unfence

    env = ControllerEnv()
    register_brokers_and_unfence(env, 1)
    future = env.active.create_topics(env, [CreatableTopic("foo", 5000, 1),
                                            CreatableTopic("bar", 5001, 1)])
    assert future.done()
    assert future.exception().error == "POLICY_VIOLATION"
    assert str(future.exception()) == "Excessively large number of partitions per request."
    assert env.active.replication_control.topic_id("foo") is None


def test_legacy_alter_configs():
    """ConfigurationControlManagerTest.testLegacyAlterConfigs @4.1.0 (without its
    AlterConfigPolicy): abc and def are set, then a request naming def alone deletes abc and
    writes nothing for the unchanged def (a TOPIC resource)."""
    from kafkasim.control.kraft.configuration_control import (
        ApiError,
        ConfigResource,
        ConfigurationControlManager,
    )

    manager = ConfigurationControlManager()
    mytopic = ConfigResource("TOPIC", "mytopic")
    records, results = manager.legacy_alter_configs(
        {mytopic: {"abc": "456", "def": "901"}}, True)
    assert records == [ConfigRecord("TOPIC", "mytopic", "abc", "456"),
                       ConfigRecord("TOPIC", "mytopic", "def", "901")]
    assert results == {mytopic: ApiError()}
    for r in records:
        manager.replay(r)
    records, results = manager.legacy_alter_configs({mytopic: {"def": "901"}}, True)
    assert records == [ConfigRecord("TOPIC", "mytopic", "abc", None)]
    assert results == {mytopic: ApiError()}
