"""ReplicationControlManager (kafkasim.control.kraft.replication_control) against
tests/kraft_fakes.FakeClusterControl, mirroring the replication cases of Kafka's
metadata/src/test/java/org/apache/kafka/controller/ReplicationControlManagerTest.java
(trunk 1eb7644):

testCreateTopics, testCreateTopicsISRInvariants, testCreateTopicWithCollisionChars,
testValidateNewTopicNames, testTopicNameCollision, testRemoveLeaderships,
testShrinkAndExpandIsr, testEligibleLeaderReplicas_ShrinkAndExpandIsr,
testEligibleLeaderReplicas_BrokerFence, testEligibleLeaderReplicas_DeleteTopic,
testEligibleLeaderReplicas_EffectiveMinIsr, testEligibleLeaderReplicas_CleanElection,
testEligibleLeaderReplicas_UncleanShutdown, testAlterPartitionHandleUnknownTopicIdOrName,
testInvalidAlterPartitionRequests, testValidateBadManualPartitionAssignments,
testAlterPartitionShouldRejectFencedBrokers, testAlterPartitionShouldRejectBrokersWithStaleEpoch,
testAlterPartitionShouldRejectShuttingDownBrokers, testManualPartitionAssignmentOnAllFencedBrokers,
testElectUncleanLeaders_WithoutElr, testPreferredElectionDoesNotTriggerUncleanElection,
testFenceMultipleBrokers, testElectPreferredLeaders, testBalancePartitionLeaders,
testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions,
testProcessBrokerHeartbeatInControlledShutdown (the records of handleBrokerInControlledShutdown).

Plus, from 4.x: ClearElrRecord when min.insync.replicas changes (KAFKA-16540,
ConfigurationControlManager.createClearElrRecordsAsNeeded, ReplicationControlManager
replayClearTopicElrs / replayClearAllElrs), the 1000-election cap of maybeBalancePartitionLeaders,
and unclean leader election with RECOVERING through fencing (PartitionChangeBuilder.tryElection).
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.records import (
    NO_LEADER,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationInControlledShutdownChange,
    ConfigRecord,
    FenceBrokerRecord,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnregisterBrokerRecord,
)
from kafkasim.control.kraft.replication_control import (
    ClearElrRecord,
    ReplicationControlManager,
)
from kafkasim.core import errors as E
from tests.kraft_fakes import FakeClusterControl, default_broker_epoch

RECOVERED = LeaderRecoveryState.RECOVERED
RECOVERING = LeaderRecoveryState.RECOVERING
LATEST = "4.0-IV3"


class Ctx:
    """ReplicationControlTestContext."""

    def __init__(self, mv=LATEST, elr=False, **kw):
        self.cc = FakeClusterControl()
        kw.setdefault("default_replication_factor", 3)
        kw.setdefault("max_elections_per_imbalance", 2 ** 31 - 1)
        self.rc = ReplicationControlManager(self.cc, metadata_version=mv, elr_enabled=elr, **kw)

    def replay(self, records):
        for r in records:
            self.cc.replay(r)
            self.rc.replay(r)

    def register(self, *ids, epoch=None):
        self.replay([self.cc.register_record(b, epoch) for b in ids])

    def unfence(self, *ids):
        for b in ids:
            if self.cc.broker_registrations[b].fenced:
                self.replay(self.rc.handle_broker_unfenced(
                    b, self.cc.broker_registrations[b].epoch))

    def in_controlled_shutdown(self, *ids):
        self.replay([BrokerRegistrationChangeRecord(
            b, default_broker_epoch(b),
            in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange
            .IN_CONTROLLED_SHUTDOWN) for b in ids])

    def fence(self, *ids):
        """fenceBrokers: the other brokers heartbeat, the given ones go stale, oldest first."""
        self.unfence(*[b for b in self.cc.broker_registrations if b not in ids])
        for b in sorted(ids):
            if not self.cc.broker_registrations[b].fenced:
                self.replay(self.rc.handle_broker_fenced(b))
        assert {b for b, r in self.cc.broker_registrations.items() if r.fenced} == set(ids)

    def create(self, name, assignment, configs=None, expected=E.NONE):
        records, result = self.rc.create_topic(name, assignment=assignment, configs=configs)
        assert result.error == expected, result
        if expected == E.NONE:
            assert result.num_partitions == len(assignment)
            assert result.replication_factor == len(assignment[0])
            self.replay(records)
        return result

    def alter_topic_config(self, topic, key, value):
        self.replay([ConfigRecord("TOPIC", topic, key, value)])

    def part(self, topic="foo", p=0):
        return self.rc.partition(topic, p)

    def alter_partition(self, leader, isr, topic="foo", p=0, lrs=RECOVERED, version=3,
                        broker_epoch=None, **override):
        """newAlterPartition + sendAlterPartition (isrWithDefaultEpoch: 100 + id)."""
        part = self.part(topic, p)
        item = [self.rc.topic_id(topic), p, override.get("leader_epoch", part.leader_epoch),
                [(b, default_broker_epoch(b)) for b in isr],
                override.get("partition_epoch", part.partition_epoch), lrs]
        epoch = self.cc.broker_registrations[leader].epoch if broker_epoch is None \
            else broker_epoch
        records, resp = self.rc.alter_partition(leader, epoch, [tuple(item)],
                                                request_version=version)
        self.replay(records)
        return records, resp


def assert_leader_isr(ctx, p, leader, isr, topic="foo"):
    part = ctx.part(topic, p)
    assert (part.leader, part.isr) == (leader, tuple(isr)), part


# ====================================================================== create topics
def test_create_topics():
    ctx = Ctx()
    _, r = ctx.rc.create_topic("foo")
    assert (r.error, r.error_message) == (
        E.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 3 time(s): All brokers are currently fenced.")
    ctx.register(0, 1, 2)
    ctx.unfence(0)
    ctx.in_controlled_shutdown(0)
    _, r = ctx.rc.create_topic("foo")
    assert (r.error, r.error_message) == (
        E.INVALID_REPLICATION_FACTOR, "Unable to replicate the partition 3 time(s): All "
        "brokers are currently fenced or in controlled shutdown.")
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    records, r = ctx.rc.create_topic("foo")
    assert (r.error, r.num_partitions, r.replication_factor) == (E.NONE, 1, 3)
    assert isinstance(records[0], TopicRecord) and records[0].topic_id == r.topic_id
    ctx.replay(records)
    part = ctx.part()
    assert part.isr == part.replicas and part.leader == part.replicas[0]
    assert (part.leader_epoch, part.partition_epoch) == (0, 0)
    _, r = ctx.rc.create_topic("foo")
    assert (r.error, r.error_message) == (E.TOPIC_ALREADY_EXISTS, "Topic 'foo' already exists.")


def test_create_topic_replication_factor_larger_than_registered_brokers():
    # StripedReplicaPlacer.throwInvalidReplicationFactorIfTooFewBrokers via createTopic
    ctx = Ctx()
    ctx.register(0, 1)
    ctx.unfence(0, 1)
    _, r = ctx.rc.create_topic("foo", 1, 3)
    assert (r.error, r.error_message) == (
        E.INVALID_REPLICATION_FACTOR, "Unable to replicate the partition 3 time(s): The target "
        "replication factor of 3 cannot be reached because only 2 broker(s) are registered.")
    _, r = ctx.rc.create_topic("foo", 1, 0)
    assert (r.error, r.error_message) == (E.INVALID_REPLICATION_FACTOR, "Replication factor "
                                          "must be larger than 0, or -1 to use the default value.")
    _, r = ctx.rc.create_topic("foo", 0, 2)
    assert (r.error, r.error_message) == (
        E.INVALID_PARTITIONS, "Number of partitions was set to an invalid non-positive value.")


def test_create_topics_isr_invariants():
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1)
    ctx.in_controlled_shutdown(1)
    records, r = ctx.rc.create_topic("foo")
    assert r.error == E.NONE and r.replication_factor == 3
    ctx.replay(records)
    # broker 2 is fenced and broker 1 in controlled shutdown: neither may be in the ISR
    part = ctx.part()
    assert sorted(part.replicas) == [0, 1, 2]
    assert part.isr == (0,) and part.leader == 0


def test_create_topic_records_and_configs():
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    records, r = ctx.rc.create_topic("foo", assignment=[[0, 1, 2], [1, 2, 0]],
                                     configs={"min.insync.replicas": "2"})
    assert [type(x) for x in records] == [TopicRecord, ConfigRecord, PartitionRecord,
                                          PartitionRecord]
    ctx.replay(records)
    assert ctx.rc.topic_config("foo") == {"min.insync.replicas": "2"}
    assert ctx.rc.get_topic_effective_min_isr("foo") == 2
    _, r = ctx.rc.create_topic("bar", configs={"x": None})
    assert (r.error, r.error_message) == (E.INVALID_CONFIG,
                                          "Null value not supported for topic configs: x")


def test_topic_names_and_collisions():
    # testValidateNewTopicNames / testCreateTopicWithCollisionChars / testTopicNameCollision
    ctx = Ctx()
    ctx.register(0)
    ctx.unfence(0)
    _, r = ctx.rc.create_topic("", 1, 1)
    assert (r.error, r.error_message) == (E.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: "
                                          "the empty string is not allowed")
    _, r = ctx.rc.create_topic(".", 1, 1)
    assert r.error_message == "Topic name is invalid: '.' is not allowed"
    _, r = ctx.rc.create_topic("foo?", 1, 1)
    assert r.error_message == ("Topic name is invalid: 'foo?' contains one or more characters "
                               "other than ASCII alphanumerics, '.', '_' and '-'")
    _, r = ctx.rc.create_topic("x" * 250, 1, 1)
    assert r.error == E.INVALID_TOPIC_EXCEPTION and "249" in r.error_message
    ctx.create("foo.bar", [[0]])
    _, r = ctx.rc.create_topic("foo_bar", 1, 1)
    assert (r.error, r.error_message) == (E.INVALID_TOPIC_EXCEPTION,
                                          "Topic 'foo_bar' collides with existing topic: foo.bar")


def test_validate_bad_manual_partition_assignments():
    ctx = Ctx()
    ctx.register(1, 2)
    ctx.unfence(1, 2)
    cases = [
        ([[]], "The manual partition assignment includes an empty replica list."),
        ([[1, 2, 3]], "The manual partition assignment includes broker 3, but no such broker "
                      "is registered."),
        ([[1, 2, 2]], "The manual partition assignment includes the broker 2 more than once."),
        ([[1, 2], [1]], "The manual partition assignment includes a partition with 1 "
                        "replica(s), but this is not consistent with previous partitions, "
                        "which have 2 replica(s)."),
        ({0: [1], 2: [2]}, "partitions should be a consecutive 0-based integer sequence"),
    ]
    for assignment, message in cases:
        _, r = ctx.rc.create_topic("foo", assignment=assignment)
        assert (r.error, r.error_message) == (E.INVALID_REPLICA_ASSIGNMENT, message)
    _, r = ctx.rc.create_topic("foo", 1, assignment=[[1]])
    assert (r.error, r.error_message) == (E.INVALID_REQUEST, "A manual partition assignment "
                                          "was specified, but numPartitions was not set to -1.")


def test_manual_partition_assignment_on_all_fenced_brokers():
    ctx = Ctx()
    ctx.register(0, 1, 2, 3)
    ctx.create("foo", [[0, 1, 2]], expected=E.INVALID_REPLICA_ASSIGNMENT)
    _, r = ctx.rc.create_topic("foo", assignment=[[0, 1, 2]])
    assert r.error_message == ("All brokers specified in the manual partition assignment for "
                               "partition 0 are fenced or in controlled shutdown.")


# ============================================================ fencing and ISR shrink
def test_remove_leaderships():
    ctx = Ctx()
    ctx.register(0, 1, 2, 3)
    ctx.unfence(0, 1, 2, 3)
    ctx.create("foo", [[0, 1, 2], [1, 2, 3], [2, 3, 0], [0, 2, 1]])
    assert ctx.rc.partitions_led_by(0) == [("foo", 0), ("foo", 3)]
    records = ctx.rc.handle_broker_fenced(0)
    assert isinstance(records[-1], BrokerRegistrationChangeRecord)
    ctx.replay(records)
    assert ctx.rc.partitions_led_by(0) == []
    assert all(0 not in p.isr for p in ctx.rc.topics()["foo"].values())


def test_fence_record_before_3_3_iv2_is_fence_broker_record():
    ctx = Ctx(mv="3.3-IV1")
    ctx.register(0, 1)
    ctx.unfence(0, 1)
    records = ctx.rc.handle_broker_fenced(1)
    assert records == [FenceBrokerRecord(1, 101)]


def test_fence_multiple_brokers():
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(0, 1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]])
    ctx.fence(2, 3)
    assert_leader_isr(ctx, 0, 1, [1])
    assert_leader_isr(ctx, 1, 4, [4])
    p2 = ctx.part("foo", 2)
    assert p2.replicas == (0, 2, 1) and p2.isr == (0, 1) and p2.leader != 2


def test_fencing_leader_bumps_epochs_and_isr_shrink_epoch_by_version():
    # PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded: before 3.6-IV0 the
    # controller's ISR shrink bumps the leader epoch too (KAFKA-15021)
    for mv, leader_epoch in (("3.5-IV2", 1), ("3.6-IV0", 0)):
        ctx = Ctx(mv=mv)
        ctx.register(1, 2, 3, 4)
        ctx.unfence(1, 2, 3, 4)
        ctx.create("foo", [[1, 2, 3, 4]])
        ctx.replay(ctx.rc.handle_broker_fenced(3))
        p = ctx.part()
        assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == \
            (1, (1, 2, 4), leader_epoch, 1)
        ctx.replay(ctx.rc.handle_broker_fenced(1))
        p = ctx.part()
        assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == \
            (2, (2, 4), leader_epoch + 1, 2)


def test_last_isr_member_fenced_keeps_isr_without_elr():
    # Without ELR an empty target ISR is not written: the ISR keeps the last member, leader -1
    ctx = Ctx()
    ctx.register(0, 1)
    ctx.unfence(0, 1)
    ctx.create("foo", [[0, 1]])
    ctx.fence(1)
    ctx.fence(0, 1)
    assert_leader_isr(ctx, 0, NO_LEADER, [0])
    assert ctx.rc.offline_partitions_count() == 1
    # the broker coming back is elected by handleBrokerUnfenced
    ctx.unfence(0)
    assert_leader_isr(ctx, 0, 0, [0])
    assert ctx.rc.offline_partitions_count() == 0


# ==================================================================== AlterPartition
def test_shrink_and_expand_isr():
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    ctx.create("foo", [[0, 1, 2]])
    for isr in ([0, 1], [0, 1, 2]):
        records, resp = ctx.alter_partition(0, isr)
        (res,) = resp.partitions
        assert res.error == E.NONE
        part = ctx.part()
        assert (res.leader, res.leader_epoch, res.partition_epoch, res.isr) == \
            (part.leader, part.leader_epoch, part.partition_epoch, part.isr)
        assert part.isr == tuple(isr) and part.leader_epoch == 0


def test_alter_partition_handle_unknown_topic_id_or_name():
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    for version, error in ((0, E.UNKNOWN_TOPIC_OR_PARTITION), (1, E.UNKNOWN_TOPIC_OR_PARTITION),
                           (2, E.UNKNOWN_TOPIC_ID), (3, E.UNKNOWN_TOPIC_ID)):
        records, resp = ctx.rc.alter_partition(0, 100, [("foo", 0, 0, [], 0)],
                                               request_version=version)
        assert records == [] and [r.error for r in resp.partitions] == [error]


def test_invalid_alter_partition_requests():
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    ctx.create("foo", [[0, 1, 2]])

    def err(*a, **kw):
        records, resp = ctx.alter_partition(*a, **kw)
        assert records == []
        return resp.partitions[0].error if resp.partitions else resp.error

    assert err(1, [0, 1]) == E.INVALID_REQUEST                        # not the leader
    assert err(0, [0, 1], broker_epoch=99) == E.STALE_BROKER_EPOCH
    assert err(0, [0, 1], leader_epoch=500) == E.NOT_CONTROLLER
    assert err(0, [0, 1], partition_epoch=500) == E.NOT_CONTROLLER
    assert err(0, [0, 1, 3]) == E.INVALID_REQUEST                     # 3 is not a replica
    assert err(0, [1, 2]) == E.INVALID_REQUEST                        # leader not in ISR
    assert err(0, [0, 1], lrs=RECOVERING) == E.INVALID_REQUEST        # RECOVERING, ISR > 1
    assert err(0, [0], lrs=RECOVERING) == E.INVALID_REQUEST           # RECOVERED -> RECOVERING
    # order: an old leader epoch is FENCED_LEADER_EPOCH, an old partition epoch
    # INVALID_UPDATE_VERSION (validateAlterPartitionData)
    ctx.alter_partition(0, [0, 1])
    assert err(0, [0, 1, 2], partition_epoch=0) == E.INVALID_UPDATE_VERSION
    ctx.replay(ctx.rc.handle_broker_fenced(0))
    assert ctx.part().leader == 1 and ctx.part().leader_epoch == 1
    assert err(1, [1, 2], leader_epoch=0) == E.FENCED_LEADER_EPOCH


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_should_reject_fenced_brokers(version):
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(0, 1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 3, 4]])
    ctx.replay(ctx.rc.handle_broker_fenced(3))
    p = ctx.part()
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1, 2, 4), 1, 0, 1)
    records, resp = ctx.alter_partition(1, [1, 2, 3, 4], version=version)
    assert records == []
    assert resp.partitions[0].error == (E.OPERATION_NOT_ATTEMPTED if version <= 1
                                        else E.INELIGIBLE_REPLICA)
    assert ctx.rc.ineligible_replicas_for_isr([(3, 103)]) == ["3 (fenced)"]
    ctx.replay(ctx.rc.handle_broker_unfenced(3, 103))
    records, resp = ctx.alter_partition(1, [1, 2, 3, 4], version=version)
    r = resp.partitions[0]
    assert (r.error, r.leader, r.leader_epoch, r.isr, r.partition_epoch) == \
        (E.NONE, 1, 0, (1, 2, 3, 4), 2)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_should_reject_brokers_with_stale_epoch(version):
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(0, 1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 3, 4]])
    ctx.alter_partition(1, [1, 2, 3])
    request = [(ctx.rc.topic_id("foo"), 0, 0, [(b, default_broker_epoch(b)) for b in
                                               (1, 2, 3, 4)], 1)]
    # broker 4 failed silently and registers again with a new epoch, then is unfenced
    ctx.register(4, epoch=default_broker_epoch(4) + 1000)
    ctx.unfence(4)
    records, resp = ctx.rc.alter_partition(1, 101, request, request_version=version)
    if version >= 3:   # KIP-903: the broker epoch in the new ISR must match
        assert resp.partitions[0].error == E.INELIGIBLE_REPLICA and records == []
        assert ctx.rc.ineligible_replicas_for_isr([(4, 104)]) == \
            ["4 (broker epoch mismatch: requested=104 VS expected=1104)"]
    else:
        assert resp.partitions[0].error == E.NONE and len(records) == 1


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_should_reject_shutting_down_brokers(version):
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(0, 1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 3, 4]])
    assert ctx.part().isr == (1, 2, 3, 4)
    ctx.in_controlled_shutdown(3)
    records, resp = ctx.alter_partition(1, [1, 2, 3, 4], version=version)
    assert resp.partitions[0].error == (E.OPERATION_NOT_ATTEMPTED if version <= 1
                                        else E.INELIGIBLE_REPLICA)


def test_alter_partition_completing_reassignment_returns_new_leader_elected():
    # alterPartition: an ISR change that completes a reassignment and moves leadership
    # away from the requester gets NEW_LEADER_ELECTED (v2+) / FENCED_LEADER_EPOCH (v0-1)
    for version, error in ((3, E.NEW_LEADER_ELECTED), (1, E.FENCED_LEADER_EPOCH)):
        ctx = Ctx()
        ctx.register(0, 1, 2, 3)
        ctx.unfence(0, 1, 2, 3)
        ctx.create("foo", [[0, 1, 2]])
        tid = ctx.rc.topic_id("foo")
        ctx.replay([PartitionChangeRecord(0, tid, replicas=(1, 2, 3, 0),
                                          removing_replicas=(0,), adding_replicas=(3,))])
        records, resp = ctx.alter_partition(0, [0, 1, 2, 3], version=version)
        assert resp.partitions[0].error == error
        assert records[0].leader == 1 and records[0].replicas == (1, 2, 3)


# ============================================================= ELR (KIP-966)
def elr_ctx(brokers, min_isr):
    ctx = Ctx(elr=True)
    ctx.register(*brokers)
    ctx.unfence(*brokers)
    ctx.create("foo", [list(brokers)])
    ctx.alter_topic_config("foo", "min.insync.replicas", str(min_isr))
    return ctx


def test_elr_shrink_and_expand_isr():
    ctx = elr_ctx((0, 1, 2), 2)
    ctx.alter_partition(0, [0])
    p = ctx.part()
    assert (p.elr, p.last_known_elr) == ((1, 2), ())
    ctx.alter_partition(0, [0, 1])
    p = ctx.part()
    assert (p.elr, p.last_known_elr) == ((), ())


def test_elr_broker_fence():
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(2, 3)
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((3,), ())
    ctx.fence(1, 2, 3)
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((1, 3), ())
    ctx.unfence(0, 1, 2, 3)
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((1, 3), ())


def test_elr_delete_topic():
    ctx = elr_ctx((0, 1, 2), 2)
    ctx.alter_partition(0, [0])
    assert ctx.part().elr == (1, 2)
    assert list(ctx.rc.partitions_with_broker_in_elr(1))
    records, error = ctx.rc.delete_topic("foo")
    assert error == E.NONE and records == [RemoveTopicRecord(ctx.rc.topic_id("foo"))]
    ctx.replay(records)
    assert not list(ctx.rc.partitions_with_broker_in_elr(1))
    assert not list(ctx.rc.partitions_with_broker_in_isr(0))
    assert ctx.rc.topic_config("foo") == {}
    assert ctx.rc.delete_topic("foo") == ([], E.UNKNOWN_TOPIC_OR_PARTITION)
    assert ctx.rc.delete_topic("no-such-id", by_id=True) == ([], E.UNKNOWN_TOPIC_ID)


def test_elr_effective_min_isr():
    ctx = elr_ctx((0, 1, 2), 5)
    assert ctx.rc.get_topic_effective_min_isr("foo") == 3


def test_elr_clean_election():
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(1, 2, 3)
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((2, 3), ())
    ctx.unfence(2)
    ctx.fence(0, 1)
    p = ctx.part()
    assert (p.elr, p.isr, p.leader, p.last_known_elr) == ((0, 3), (2,), 2, ())


def test_elr_unclean_shutdown():
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(1, 2, 3)
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((2, 3), ())
    # an ELR member that shut down uncleanly leaves the ELR
    ctx.replay(ctx.rc.handle_broker_unclean_shutdown(3))
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((2,), ())
    # the last ISR member shutting down uncleanly becomes the last known leader
    ctx.replay(ctx.rc.handle_broker_unclean_shutdown(0))
    p = ctx.part()
    assert (p.elr, p.last_known_elr, p.isr, p.leader) == ((2,), (0,), (), NO_LEADER)


def test_unclean_shutdown_needs_elr_metadata_version():
    ctx = Ctx(mv="3.9-IV0", elr=True)
    ctx.register(0, 1)
    ctx.unfence(0, 1)
    ctx.create("foo", [[0, 1]])
    assert ctx.rc.handle_broker_unclean_shutdown(0) == []
    assert not ctx.rc.is_elr_enabled()


def test_elr_cleared_when_min_isr_changes():
    # KAFKA-16540 (4.x): a min.insync.replicas ConfigRecord comes with a ClearElrRecord
    ctx = elr_ctx((0, 1, 2), 2)
    ctx.alter_partition(0, [0])
    epoch = ctx.part().partition_epoch
    assert ctx.part().elr == (1, 2)
    records = ctx.rc.config_records("TOPIC", "foo", {"min.insync.replicas": "1"})
    assert records == [ConfigRecord("TOPIC", "foo", "min.insync.replicas", "1"),
                       ClearElrRecord("foo")]
    ctx.replay(records)
    p = ctx.part()
    assert (p.elr, p.last_known_elr, p.partition_epoch) == ((), (), epoch + 1)
    # the cluster default clears every topic's ELR
    ctx.alter_topic_config("foo", "min.insync.replicas", "3")
    ctx.alter_partition(0, [0, 1, 2])
    ctx.alter_partition(0, [0, 1])
    assert ctx.part().elr == (2,)
    records = ctx.rc.config_records("BROKER", "", {"min.insync.replicas": "2"})
    assert records[-1] == ClearElrRecord("")
    ctx.replay(records)
    assert ctx.part().elr == ()
    # without ELR no ClearElrRecord
    assert Ctx().rc.config_records("TOPIC", "foo", {"min.insync.replicas": "2"}) == \
        [ConfigRecord("TOPIC", "foo", "min.insync.replicas", "2")]


# ======================================================================= elections
@pytest.mark.parametrize("elect_all", [True, False])
def test_elect_unclean_leaders_without_elr(elect_all):
    ctx = Ctx(mv="3.6-IV1")
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(0, 1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]])
    ctx.fence(2, 3)
    ctx.fence(1, 2, 3)
    assert_leader_isr(ctx, 0, NO_LEADER, [1])
    assert_leader_isr(ctx, 1, 4, [4])
    assert_leader_isr(ctx, 2, 0, [0])
    parts = None if elect_all else [("foo", 0), ("foo", 1), ("foo", 2)]
    records, results = ctx.rc.elect_leaders("UNCLEAN", parts)
    assert records == []
    expected = {0: E.ELIGIBLE_LEADERS_NOT_AVAILABLE, 1: E.ELECTION_NOT_NEEDED,
                2: E.ELECTION_NOT_NEEDED}
    if elect_all:
        expected = {0: E.ELIGIBLE_LEADERS_NOT_AVAILABLE}
    assert {r.partition: r.error for r in results} == expected
    ctx.unfence(2)
    ctx.alter_partition(4, [2, 4], p=1)
    records, results = ctx.rc.elect_leaders(1, parts)      # ElectionType.UNCLEAN.value
    (rec,) = records
    assert (rec.partition_id, rec.leader, rec.isr) == (0, 2, (2,))
    assert rec.leader_recovery_state == RECOVERING
    ctx.replay(records)
    assert_leader_isr(ctx, 0, 2, [2])
    assert_leader_isr(ctx, 1, 4, [2, 4])
    assert_leader_isr(ctx, 2, 0, [0])
    assert ctx.part("foo", 0).leader_recovery_state == RECOVERING
    assert {r.partition: r.error for r in results}[0] == E.NONE


def test_preferred_election_does_not_trigger_unclean_election():
    ctx = Ctx()
    ctx.register(1, 2, 3, 4)
    ctx.unfence(1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 3]])
    ctx.fence(2, 3)
    ctx.fence(1, 2, 3)
    ctx.unfence(2)
    assert_leader_isr(ctx, 0, NO_LEADER, [1])
    ctx.alter_topic_config("foo", "unclean.leader.election.enable", "true")
    records, results = ctx.rc.elect_leaders("PREFERRED", [("foo", 0)])
    assert records == []
    assert [(r.partition, r.error) for r in results] == [(0, E.PREFERRED_LEADER_NOT_AVAILABLE)]


def test_elect_preferred_leaders():
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(1, 2, 3, 4)
    ctx.in_controlled_shutdown(1)
    ctx.create("foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]])
    request = [("foo", 0), ("foo", 1), ("foo", 2), ("bar", 0), ("bar", 1)]
    records, results = ctx.rc.elect_leaders("PREFERRED", request)
    assert records == []
    assert [(r.topic, r.partition, r.error, r.error_message) for r in results] == [
        ("foo", 0, E.PREFERRED_LEADER_NOT_AVAILABLE, None),
        ("foo", 1, E.ELECTION_NOT_NEEDED, None),
        ("foo", 2, E.PREFERRED_LEADER_NOT_AVAILABLE, None),
        ("bar", 0, E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as bar"),
        ("bar", 1, E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as bar")]
    ctx.register(1)            # re-registering ends the controlled shutdown
    ctx.unfence(0, 1)
    tid = ctx.rc.topic_id("foo")
    records, resp = ctx.rc.alter_partition(2, 102, [
        (tid, 0, 0, [(1, 101), (2, 102), (3, 103)], 0),
        (tid, 2, 0, [(0, 100), (2, 102), (1, 101)], 0)])
    assert [(r.partition, r.leader, r.leader_epoch, r.isr, r.partition_epoch, r.error)
            for r in resp.partitions] == [(0, 2, 0, (1, 2, 3), 1, E.NONE),
                                          (2, 2, 0, (0, 2, 1), 1, E.NONE)]
    ctx.replay(records)
    records, results = ctx.rc.elect_leaders("PREFERRED", request)
    assert [r.error for r in results][:3] == [E.NONE, E.ELECTION_NOT_NEEDED, E.NONE]
    assert records == [PartitionChangeRecord(0, tid, leader=1),
                       PartitionChangeRecord(2, tid, leader=0)]


def test_balance_partition_leaders():
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(2, 3, 4)
    ctx.create("foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]])
    tid = ctx.rc.topic_id("foo")
    assert ctx.rc.are_partition_leaders_imbalanced()
    assert ctx.rc.preferred_replica_imbalance_count() == 2
    ctx.unfence(1)
    records, resp = ctx.rc.alter_partition(2, 102, [(tid, 0, 0, [(1, 101), (2, 102),
                                                                 (3, 103)], 0)])
    r = resp.partitions[0]
    assert (r.leader, r.leader_epoch, r.isr, r.partition_epoch) == (2, 0, (1, 2, 3), 1)
    ctx.replay(records)
    records, again = ctx.rc.maybe_balance_partition_leaders()
    ctx.replay(records)
    assert records == [PartitionChangeRecord(0, tid, leader=1)]
    assert ctx.rc.are_partition_leaders_imbalanced() and not again
    ctx.unfence(0)
    records, resp = ctx.rc.alter_partition(2, 102, [(tid, 2, 0, [(0, 100), (2, 102),
                                                                 (1, 101)], 0)])
    ctx.replay(records)
    records, again = ctx.rc.maybe_balance_partition_leaders()
    ctx.replay(records)
    assert records == [PartitionChangeRecord(2, tid, leader=0)]
    assert not ctx.rc.are_partition_leaders_imbalanced() and not again


def test_balance_partition_leaders_caps_elections():
    # maybeBalancePartitionLeaders: at most maxElectionsPerImbalance records, and True asks
    # for an immediate reschedule
    ctx = Ctx(max_elections_per_imbalance=2)
    ctx.register(0, 1)
    ctx.unfence(0, 1)
    ctx.create("foo", [[0, 1]] * 3)
    ctx.fence(0)
    ctx.unfence(0)
    tid = ctx.rc.topic_id("foo")
    for p in range(3):
        records, _ = ctx.rc.alter_partition(1, 101, [(tid, p, 1, [(1, 101), (0, 100)], 1)])
        ctx.replay(records)
    records, again = ctx.rc.maybe_balance_partition_leaders()
    assert len(records) == 2 and again
    ctx.replay(records)
    records, again = ctx.rc.maybe_balance_partition_leaders()
    assert len(records) == 1 and not again


@pytest.mark.parametrize("unclean", ["none", "static", "dynamic_cluster", "dynamic_node",
                                     "dynamic_topic"])
def test_maybe_trigger_unclean_leader_election_for_leaderless_partitions(unclean):
    ctx = Ctx(default_unclean=(unclean == "static"), controller_id=0)
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(0, 1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 4], [1, 3, 4], [0, 2, 4]])
    assert not ctx.rc.are_some_partitions_leaderless()
    ctx.fence(0, 1, 2, 3, 4)
    assert ctx.rc.are_some_partitions_leaderless()
    for p in range(3):
        assert_leader_isr(ctx, p, NO_LEADER, [4])
    ctx.unfence(2)
    if unclean == "static":
        assert_leader_isr(ctx, 0, 2, [2])
        assert_leader_isr(ctx, 1, NO_LEADER, [4])
        assert_leader_isr(ctx, 2, 2, [2])
    else:
        for p in range(3):
            assert_leader_isr(ctx, p, NO_LEADER, [4])
    level = {"dynamic_cluster": ("BROKER", ""), "dynamic_node": ("BROKER", "0"),
             "dynamic_topic": ("TOPIC", "foo")}.get(unclean)
    if level:
        ctx.replay([ConfigRecord(*level, "unclean.leader.election.enable", "true")])
    records, again = ctx.rc.maybe_elect_unclean_leaders(with_reschedule=True)
    assert not again
    assert ctx.rc.maybe_elect_unclean_leaders() == records
    if unclean in ("none", "static"):
        assert records == []
    else:
        ctx.replay(records)
        assert_leader_isr(ctx, 0, 2, [2])
        assert_leader_isr(ctx, 1, NO_LEADER, [4])
        assert_leader_isr(ctx, 2, 2, [2])
        assert ctx.part("foo", 0).leader_recovery_state == RECOVERING


@pytest.mark.parametrize("mv", ["3.3-IV2", "3.3-IV3"])
def test_controlled_shutdown_moves_leadership(mv):
    # testProcessBrokerHeartbeatInControlledShutdown: the records for CONTROLLED_SHUTDOWN
    ctx = Ctx(mv=mv)
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    ctx.create("foo", [[0, 1, 2]])
    tid = ctx.rc.topic_id("foo")
    records = ctx.rc.handle_broker_in_controlled_shutdown(0, 100)
    expected = []
    if mv == "3.3-IV3":
        expected.append(BrokerRegistrationChangeRecord(
            0, 100, in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange
            .IN_CONTROLLED_SHUTDOWN))
    expected.append(PartitionChangeRecord(0, tid, isr=(1, 2), leader=1))
    assert records == expected


def test_unregister_broker():
    ctx = elr_ctx((0, 1, 2), 2)
    ctx.alter_partition(0, [0])
    assert ctx.part().elr == (1, 2)
    # handleBrokerUnregistered walks the partitions where broker 1 is in the ELR, but the
    # builder only keeps it out of the ISR and leadership: with leader 0 still valid and the
    # ISR unchanged, nothing changes (Kafka trunk 1eb7644 behaviour)
    records = ctx.rc.handle_broker_unregistered(1, 101)
    assert records == [UnregisterBrokerRecord(1, 101)]
    # a leader that unregisters loses leadership and leaves the ISR; the ISR falls below min
    # ISR, so (maybePopulateTargetElr) the old ISR member joins the ELR, and broker 1 is
    # elected from the ELR with ISR := [1]
    records = ctx.rc.handle_broker_unregistered(0, 100)
    assert records[-1] == UnregisterBrokerRecord(0, 100)
    ctx.replay(records)
    p = ctx.part()
    assert (p.leader, p.isr, p.elr) == (1, (1,), (0, 2))


def test_unknown_election_type_is_rejected():
    with pytest.raises(ValueError, match="Unknown election type 7"):
        Ctx().rc.elect_leaders(7, None)


def test_broker_state_change_records():
    # processBrokerHeartbeat: FENCED / SHUTDOWN_NOW -> handleBrokerFenced, UNFENCED ->
    # handleBrokerUnfenced, CONTROLLED_SHUTDOWN -> handleBrokerInControlledShutdown
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    ctx.create("foo", [[0, 1, 2]])
    rc = ctx.rc
    assert rc.handle_broker_state_change(0, 100, "UNFENCED", "UNFENCED") == []
    assert rc.handle_broker_state_change(0, 100, "UNFENCED", "CONTROLLED_SHUTDOWN") == \
        rc.handle_broker_in_controlled_shutdown(0, 100)
    assert rc.handle_broker_state_change(0, 100, "CONTROLLED_SHUTDOWN", "SHUTDOWN_NOW") == \
        rc.handle_broker_fenced(0)
    ctx.replay(rc.handle_broker_fenced(2))
    assert rc.handle_broker_state_change(2, 102, "FENCED", "UNFENCED") == \
        rc.handle_broker_unfenced(2, 102)
    with pytest.raises(ValueError, match="BrokerControlState"):
        rc.handle_broker_state_change(2, 102, "FENCED", "ASLEEP")


def test_feature_level_records_switch_metadata_version_and_elr():
    # FeatureControlManager: metadata.version and eligible.leader.replicas.version levels;
    # isElrEnabled needs both ELRV_1 and metadata.version >= 4.0-IV1
    from kafkasim.control.kraft.records import FeatureLevelRecord
    ctx = Ctx(mv="3.9-IV0", elr=False)
    assert not ctx.rc.is_elr_enabled()
    ctx.replay([FeatureLevelRecord("eligible.leader.replicas.version", 1)])
    assert not ctx.rc.is_elr_enabled()              # 3.9-IV0 has no ELR fields
    ctx.replay([FeatureLevelRecord("metadata.version", 23)])
    assert str(ctx.rc.metadata_version) == "4.0-IV1" and ctx.rc.is_elr_enabled()
    ctx.replay([FeatureLevelRecord("eligible.leader.replicas.version", 0)])
    assert not ctx.rc.is_elr_enabled()


def test_topic_ids_are_stable_and_new_after_deletion():
    a, b = Ctx(), Ctx()
    for ctx in (a, b):
        ctx.register(0)
        ctx.unfence(0)
        ctx.create("foo", [[0]])
    first = a.rc.topic_id("foo")
    assert first == b.rc.topic_id("foo") and len(first) == 22
    a.replay(a.rc.delete_topic("foo")[0])
    a.create("foo", [[0]])
    assert a.rc.topic_id("foo") != first
    c = Ctx(topic_id_factory=lambda name: f"id-{name}")
    c.register(0)
    c.unfence(0)
    assert c.create("foo", [[0]]).topic_id == "id-foo"
