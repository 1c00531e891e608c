"""ReplicationControlManagerTest (replication part), ported from Kafka.

Follows metadata/src/test/java/org/apache/kafka/controller/ReplicationControlManagerTest.java at
trunk 1eb7644 (Oct 2024; metadata.version latestTesting = 4.0-IV3). Unlike
tests/test_replication_control.py (which covers most of the same Kafka tests against
tests/kraft_fakes.FakeClusterControl), this file builds Kafka's ReplicationControlTestContext
from kafkasim's real classes:

- ``ClusterControlManager`` (active, StripedReplicaPlacer over Kafka's ``MockRandom``, so the
  placements Kafka asserts -- [1, 2, 0], [1, 0, 2] -- must come out exactly), with the
  BrokerUncleanShutdownHandler wired to
  ``ReplicationControlManager.handle_broker_unclean_shutdown``;
- ``registerBrokers``: replaying RegisterBrokerRecord(epoch 100 + id) at offset 0 (as
  RecordTestUtils.replayAll does); ``unfenceBrokers``: ``process_broker_heartbeat`` (metadata
  offset 1) with ReplicationControlManager's handle_* callbacks; ``fenceBrokers``: time moves by
  1000 ms, the other brokers heartbeat, then ``maybe_fence_one_stale_broker`` until none is stale.
  Kafka's context passes ``MILLISECONDS.convert(1000, NANOSECONDS)`` = 0 ns as the session
  timeout; kafkasim wants a positive one, so it is 1 ms here (1000 ms later every session that
  was not renewed has expired, as in Kafka).
- ``ReplicationControlManager`` with ``max_elections_per_imbalance`` = Integer.MAX_VALUE,
  default replication factor 3, ``last_known_leader_must_be_acceptable=False`` (trunk 1eb7644
  predates KAFKA-19522) and ``last_known_leader_on_leader_loss=False`` (apache/kafka #20629
  is 4.2.0; 4.1.0 has the older maybeUpdateLastKnownLeader too) and
  ``reassignment_waits_for_adding_replicas_only=False`` (KAFKA-19975 is 4.3.0).

API adaptations: Kafka's ControllerResult becomes ``(records, response)``; CreateTopics and
DeleteTopics are per topic (``create_topic`` / ``delete_topic``); AlterPartition partitions are
``(topic id, partition, leader epoch, [(broker, broker epoch)], partition epoch, LRS)``; a stale
broker epoch is the top-level STALE_BROKER_EPOCH of the response (Kafka throws
StaleBrokerEpochException, which QuorumController turns into that error); ``findTopicIds`` /
``findTopicNames`` become ``topic_id`` / ``topic_name`` (None = UNKNOWN_TOPIC_*).

The reassignment tests (testReassignPartitions, testCancelReassignPartitions,
testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas) are ported whole
in tests/test_reassignment_kafka.py; here they keep only their AlterPartition / election steps,
starting from the PartitionChangeRecord that Kafka's alterPartitionReassignments writes.

Left out (not modelled by kafkasim): testCreateTopicsWithMutationQuotaExceeded,
testDeleteTopicsWithMutationQuotaExceeded, the quota half of testCreateTopicsWithValidateOnlyFlag
(controller mutation quotas); testCreateTopicsWithPolicy (CreateTopicPolicy);
testCreatePartitionsWithMutationQuotaExceeded; the directory half of
testKRaftClusterDescriber and testHandleAssignReplicasToDirs*, testHandleDirectoriesOffline (no
JBOD directories).

Ported at 4.3.0 in tests/test_replication_control_s23_kafka.py: testCreatePartitions,
testCreatePartitionsFailsWhenAllBrokersAreFencedOrInControlledShutdown,
testCreatePartitionsISRInvariants, testCreatePartitionsFailsWithManualAssignmentWithAllFenced,
testProcessExpiredBrokerHeartbeat.

Not repeated (tests/test_replication_control.py ports them with the same assertions):
testTopicNameCollision, testValidateBadManualPartitionAssignments,
testManualPartitionAssignmentOnAllFencedBrokers, testRemoveLeaderships, testFenceMultipleBrokers,
testEligibleLeaderReplicas_ShrinkAndExpandIsr / _DeleteTopic / _EffectiveMinIsr,
testAlterPartitionHandleUnknownTopicIdOrName, testAlterPartitionShouldReject{FencedBrokers,
BrokersWithStaleEpoch,ShuttingDownBrokers}, testElectUncleanLeaders_WithoutElr,
testPreferredElectionDoesNotTriggerUncleanElection, testBalancePartitionLeaders,
testMaybeTriggerUncleanLeaderElectionForLeaderlessPartitions. Tests whose docstring says
"continued" or "plus" extend a Kafka test along the Kafka code it names.
"""

from __future__ import annotations

from dataclasses import replace

import pytest

from kafkasim.control.kraft.cluster_control import BrokerHeartbeatReply, ClusterControlManager
from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.records import (
    NO_LEADER,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationInControlledShutdownChange,
    ConfigRecord,
    FenceBrokerRecord,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRecord,
    PartitionRegistration,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafkasim.control.kraft.replication_control import (
    ReplicationControlManager,
    validate_manual_partition_assignment,
)
from kafkasim.control.kraft.striped_placer import StripedReplicaPlacer, UsableBroker
from kafkasim.core import errors as E
from tests.test_striped_placer import MockRandom  # org.apache.kafka.server.util.MockRandom

RECOVERED = LeaderRecoveryState.RECOVERED
RECOVERING = LeaderRecoveryState.RECOVERING
LATEST = "4.0-IV3"  # MetadataVersion.latestTesting() at 1eb7644
IN_CS = BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN
BROKER_RECORDS = (RegisterBrokerRecord, UnregisterBrokerRecord, FenceBrokerRecord)
BROKER_RECORDS += (UnfenceBrokerRecord, BrokerRegistrationChangeRecord)


def default_broker_epoch(broker_id: int) -> int:
    return 100 + broker_id


def isr_with_default_epoch(*ids):
    return [(b, default_broker_epoch(b)) for b in ids]


class Ctx:
    """ReplicationControlTestContext on kafkasim's real ClusterControlManager."""

    def __init__(self, mv=LATEST, elr=False, **kw):
        self.now = 0
        self.cc = ClusterControlManager(
            session_timeout_ms=1,
            metadata_version=MetadataVersion.parse(mv),
            replica_placer=StripedReplicaPlacer(MockRandom()),
            broker_unclean_shutdown_handler=lambda b: self.rc.handle_broker_unclean_shutdown(b),
            active=True,
            now_ms=0,
        )
        kw.setdefault("default_replication_factor", 3)
        kw.setdefault("max_elections_per_imbalance", 2**31 - 1)
        kw.setdefault("last_known_leader_must_be_acceptable", False)
        kw.setdefault("last_known_leader_on_leader_loss", False)  # PR #20629 is 4.2.0
        kw.setdefault("reassignment_waits_for_adding_replicas_only", False)  # KAFKA-19975: 4.3.0
        self.rc = ReplicationControlManager(self.cc, metadata_version=mv, elr_enabled=elr, **kw)

    def replay(self, records):
        for r in records:
            if isinstance(r, BROKER_RECORDS):
                self.cc.replay(r, 0, now_ms=self.now)
            self.rc.replay(r)

    def register(self, *ids, epoch=None):
        for b in ids:
            e = default_broker_epoch(b) if epoch is None else epoch
            self.replay([RegisterBrokerRecord(b, e, f"incarnation-{b}")])

    def heartbeat(self, b, epoch=None, offset=1, **kw):
        rc = self.rc
        return self.cc.process_broker_heartbeat(
            b,
            default_broker_epoch(b) if epoch is None else epoch,
            offset,
            now_ms=self.now,
            has_leaderships=lambda: rc.brokers_to_isrs.has_leaderships(b),
            handle_broker_fenced=rc.handle_broker_fenced,
            handle_broker_unfenced=rc.handle_broker_unfenced,
            handle_broker_in_controlled_shutdown=rc.handle_broker_in_controlled_shutdown,
            **kw,
        )

    def unfence(self, *ids, epoch=None):
        for b in ids:
            records, reply = self.heartbeat(b, epoch)
            assert reply == BrokerHeartbeatReply(True, False, False, False)
            self.replay(records)

    def in_controlled_shutdown(self, *ids):
        for b in ids:
            self.replay([BrokerRegistrationChangeRecord(b, 100 + b, in_controlled_shutdown=IN_CS)])

    def fence(self, *ids):
        self.now += 1000
        self.unfence(*[b for b in self.cc.broker_registrations if b not in ids])
        while self.cc.heartbeat_manager.find_one_stale_broker(self.now) is not None:
            records, _ = self.cc.maybe_fence_one_stale_broker(
                self.now, handle_broker_fenced=self.rc.handle_broker_fenced
            )
            self.replay(records)
        assert self.cc.fenced_broker_ids() == set(ids)

    def create(self, name, assignment, configs=None, expected=E.NONE):
        records, result = self.rc.create_topic(name, assignment=assignment, configs=configs)
        assert result.error == expected, result
        if expected == E.NONE:
            assert (result.num_partitions, result.replication_factor) == (
                len(assignment),
                len(assignment[0]),
            )
            self.replay(records)
        return result

    def create_n(self, name, num_partitions, rf):
        records, result = self.rc.create_topic(name, num_partitions, rf)
        assert result.error == E.NONE, result
        self.replay(records)
        return result

    def alter_topic_config(self, topic, key, value):
        self.replay([ConfigRecord("TOPIC", topic, key, value)])

    def part(self, topic="foo", p=0):
        return self.rc.partition(topic, p)

    def alter_partition(
        self,
        leader,
        isr,
        topic="foo",
        p=0,
        lrs=RECOVERED,
        version=3,
        broker_epoch=None,
        replay=True,
        **override,
    ):
        """newAlterPartition + sendAlterPartition; returns (records, partition result)."""
        part = self.part(topic, p)
        item = (
            self.rc.topic_id(topic),
            p,
            override.get("leader_epoch", part.leader_epoch),
            isr_with_default_epoch(*isr),
            override.get("partition_epoch", part.partition_epoch),
            lrs,
        )
        epoch = self.cc.broker_registrations[leader].epoch if broker_epoch is None else broker_epoch
        records, resp = self.rc.alter_partition(leader, epoch, [item], request_version=version)
        if replay:
            self.replay(records)
        return records, (resp.partitions[0] if resp.partitions else resp)


def assert_consistent(ctx, res, topic="foo", p=0):
    """assertConsistentAlterPartitionResponse."""
    part = ctx.part(topic, p)
    assert res.error == E.NONE, res
    assert (res.leader, res.leader_epoch, res.partition_epoch, res.isr) == (
        part.leader,
        part.leader_epoch,
        part.partition_epoch,
        part.isr,
    )


# ============================================================================ createTopics
def test_create_topics():
    """testCreateTopics: placement errors, the exact StripedReplicaPlacer(MockRandom)
    assignment and TOPIC_ALREADY_EXISTS."""
    ctx = Ctx()
    records, r = ctx.rc.create_topic("foo")
    assert records == []
    assert (r.error, r.error_message, r.topic_id) == (
        E.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 3 time(s): All brokers are currently fenced.",
        None,
    )
    ctx.register(0, 1, 2)
    ctx.unfence(0)
    ctx.in_controlled_shutdown(0)
    _, r = ctx.rc.create_topic("foo")
    assert (r.error, r.error_message) == (
        E.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 3 time(s): All "
        "brokers are currently fenced or in controlled shutdown.",
    )
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    records, r = ctx.rc.create_topic("foo")
    assert (r.error, r.num_partitions, r.replication_factor) == (E.NONE, 1, 3)
    assert records[0] == TopicRecord("foo", r.topic_id)
    ctx.replay(records)
    assert ctx.part() == PartitionRegistration((1, 2, 0), (1, 2, 0), leader=1)
    _, r = ctx.rc.create_topic("foo")
    assert (r.error, r.error_message) == (E.TOPIC_ALREADY_EXISTS, "Topic 'foo' already exists.")


def test_create_topics_isr_invariants():
    """testCreateTopicsISRInvariants: broker 2 is fenced, broker 1 in controlled shutdown."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1)
    ctx.in_controlled_shutdown(1)
    records, r = ctx.rc.create_topic("foo")
    assert (r.error, r.num_partitions, r.replication_factor) == (E.NONE, 1, 3)
    ctx.replay(records)
    assert ctx.part() == PartitionRegistration((1, 0, 2), (0,), leader=0)


def test_create_topics_with_configs():
    """testCreateTopicsWithConfigs (the batched request becomes two create_topic calls)."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    valid = {"foo": "notNull"}
    records, r = ctx.rc.create_topic("foo", configs=valid)
    assert r.error == E.NONE
    assert [type(x) for x in records] == [TopicRecord, ConfigRecord, PartitionRecord]
    ctx.replay(records)
    assert ctx.rc.topic_config("foo") == {"foo": "notNull"}
    records, r = ctx.rc.create_topic("bar", configs={"foo": None})
    assert records == [] and r.error == E.INVALID_CONFIG
    assert r.error_message == "Null value not supported for topic configs: foo"
    records, r = ctx.rc.create_topic("baz", -1, -2, configs=valid)
    assert (records, r.error) == ([], E.INVALID_REPLICATION_FACTOR)
    assert (
        r.error_message == "Replication factor must be larger than 0, or -1 to use the "
        "default value."
    )
    rec1, r1 = ctx.rc.create_topic("batched-topic-1", -1, -1, configs=valid)
    rec2, r2 = ctx.rc.create_topic("batched-topic2", -1, -2, configs=valid)
    assert (r1.error, r2.error) == (E.NONE, E.INVALID_REPLICATION_FACTOR)
    records = rec1 + rec2
    assert len(records) == 3
    assert records[0].name == "batched-topic-1"
    assert records[1] == ConfigRecord("TOPIC", "batched-topic-1", "foo", "notNull")
    assert isinstance(records[2], PartitionRecord) and records[2].topic_id == records[0].topic_id


def test_create_topics_with_validate_only_flag():
    """testCreateTopicsWithValidateOnlyFlag (mutationQuotaExceeded=false)."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    records, r = ctx.rc.create_topic("foo", 1, 3, validate_only=True)
    assert (records, r.error) == ([], E.NONE)
    assert ctx.rc.topic_id("foo") is None


def test_invalid_create_topics_with_validate_only_flag():
    """testInvalidCreateTopicsWithValidateOnlyFlag."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    records, r = ctx.rc.create_topic("foo", 1, 4, validate_only=True)
    assert records == []
    assert (r.error, r.error_message) == (
        E.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 4 time(s): The target "
        "replication factor of 4 cannot be reached because only 3 broker(s) are registered.",
    )


def test_create_topic_with_collision_chars():
    """testCreateTopicWithCollisionChars: a deleted name with collision chars is free again."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    initial = ctx.create_n("foo.bar", 2, 2)
    assert len(ctx.rc.topics()["foo.bar"]) == 2
    records, error = ctx.rc.delete_topic(initial.topic_id, by_id=True)
    assert (error, records) == (E.NONE, [RemoveTopicRecord(initial.topic_id)])
    ctx.replay(records)
    recreated = ctx.create_n("foo.bar", 4, 2)
    assert recreated.topic_id != initial.topic_id
    assert len(ctx.rc.topics()["foo.bar"]) == 4
    # and the collision check still sees the live topic (validateNewTopicNames)
    _, r = ctx.rc.create_topic("foo_bar", 1, 1)
    assert (r.error, r.error_message) == (
        E.INVALID_TOPIC_EXCEPTION,
        "Topic 'foo_bar' collides with existing topic: foo.bar",
    )


def test_validate_new_topic_names():
    """testValidateNewTopicNames ("", "woo", "."), plus Topic.detectInvalidTopic's other
    reasons and its 249-character limit."""
    ctx = Ctx()
    ctx.register(0)
    ctx.unfence(0)
    errors = {
        n: ctx.rc.create_topic(n, 1, 1)[1]
        for n in ("", "woo", ".", "..", "a b", "x" * 249, "x" * 250)
    }
    assert {n: (r.error, r.error_message) for n, r in errors.items() if r.error != E.NONE} == {
        "": (E.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: the empty string is not allowed"),
        ".": (E.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: '.' is not allowed"),
        "..": (E.INVALID_TOPIC_EXCEPTION, "Topic name is invalid: '..' is not allowed"),
        "a b": (
            E.INVALID_TOPIC_EXCEPTION,
            "Topic name is invalid: 'a b' contains one or more "
            "characters other than ASCII alphanumerics, '.', '_' and '-'",
        ),
        "x" * 250: (
            E.INVALID_TOPIC_EXCEPTION,
            f"Topic name is invalid: the length of "
            f"'{'x' * 250}' is longer than the max allowed length 249",
        ),
    }


def test_validate_new_topic_names_length_is_in_utf16_units():
    """testValidateNewTopicNames / Topic.detectInvalidTopic: ``name.length()`` is in UTF-16
    code units, and the length check comes before the character check, so 125 emoji (250
    units) are 'longer than the max allowed length 249'."""
    name = "\U0001f600" * 125
    _, r = Ctx().rc.create_topic(name, 1, 1)
    assert (r.error, r.error_message) == (
        E.INVALID_TOPIC_EXCEPTION,
        f"Topic name is invalid: the length of '{name}' is longer than the max allowed length 249",
    )


def test_delete_topics():
    """testDeleteTopics: nothing changes before replay; the configs go with the topic."""
    ctx = Ctx()
    configs = {"cleanup.policy": "compact", "min.cleanable.dirty.ratio": "0.1"}
    ctx.register(0, 1)
    ctx.unfence(0, 1)
    records, r = ctx.rc.create_topic("foo", 3, 2, configs=configs)
    assert (r.error, r.num_partitions, r.replication_factor) == (E.NONE, 3, 2)
    topic_id = r.topic_id
    assert ctx.rc.partition(topic_id, 0) is None
    assert ctx.rc.topic_config("foo") == {}
    ctx.replay(records)
    assert [ctx.rc.partition(topic_id, p) is not None for p in range(4)] == [
        True,
        True,
        True,
        False,
    ]
    assert ctx.rc.topic_config("foo") == configs
    assert ctx.rc.topic_name(topic_id) == "foo" and ctx.rc.topic_id("foo") == topic_id
    invalid_id = topic_id[:-1] + ("A" if topic_id[-1] != "A" else "B")
    assert ctx.rc.topic_name(invalid_id) is None and ctx.rc.topic_id("bar") is None
    assert ctx.rc.delete_topic(invalid_id, by_id=True) == ([], E.UNKNOWN_TOPIC_ID)
    records, error = ctx.rc.delete_topic(topic_id, by_id=True)
    assert (records, error) == ([RemoveTopicRecord(topic_id)], E.NONE)
    ctx.replay(records)
    assert all(ctx.rc.partition(topic_id, p) is None for p in range(4))
    assert ctx.rc.topic_name(topic_id) is None and ctx.rc.topic_id("foo") is None
    assert ctx.rc.topic_config("foo") == {}


def test_validate_good_manual_partition_assignments():
    """testValidateGoodManualPartitionAssignments (validateManualPartitionAssignment; OptionalInt
    replication factor = None / int). The bad cases are in tests/test_replication_control.py."""
    ctx = Ctx()
    ctx.register(1, 2, 3)
    regs = ctx.cc.broker_registrations
    for brokers, rf in (([1], 1), ([1], None), ([1, 2, 3], 3), ([1, 2, 3], None)):
        assert validate_manual_partition_assignment(regs, brokers, rf) is None


def test_duplicate_topic_id_replay():
    """testDuplicateTopicIdReplay: the RuntimeException messages of replay(TopicRecord)."""
    rc = Ctx().rc
    rc.replay(TopicRecord("foo", "Ktv3YkMQRe-MId4VkkrMyw"))
    with pytest.raises(Exception) as e1:
        rc.replay(TopicRecord("foo", "Ktv3YkMQRe-MId4VkkrMyw"))
    with pytest.raises(Exception) as e2:
        rc.replay(TopicRecord("foo", "8auUWq8zQqe_99H_m2LAmw"))
    assert (
        str(e1.value) == "Found duplicate TopicRecord for foo with topic ID Ktv3YkMQRe-MId4VkkrMyw"
    )
    assert str(e2.value) == (
        "Found duplicate TopicRecord for foo with a different ID than "
        "before. Previous ID was Ktv3YkMQRe-MId4VkkrMyw and new ID is "
        "8auUWq8zQqe_99H_m2LAmw"
    )


# ================================================================ fencing, heartbeats


@pytest.mark.parametrize("mv", ["3.3-IV2", "3.3-IV3"])
def test_process_broker_heartbeat_in_controlled_shutdown(mv):
    """testProcessBrokerHeartbeatInControlledShutdown: a wantShutDown heartbeat of a leader."""
    ctx = Ctx(mv=mv)
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    topic_id = ctx.create("foo", [[0, 1, 2]]).topic_id
    records, reply = ctx.heartbeat(0, 100, offset=0, want_shut_down=True)
    expected = []
    if mv == "3.3-IV3":
        expected.append(BrokerRegistrationChangeRecord(0, 100, in_controlled_shutdown=IN_CS))
    expected.append(PartitionChangeRecord(0, topic_id, isr=(1, 2), leader=1))
    assert records == expected
    assert reply == BrokerHeartbeatReply(True, False, True, False)


def test_kraft_cluster_describer_usable_brokers():
    """testKRaftClusterDescriber (usableBrokers only; directories are not modelled)."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(2, 3, 4)
    ctx.create("foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]])
    ctx.create("bar", [[2, 3, 4], [3, 4, 2]])
    assert set(ctx.cc.usable_brokers()) == {
        UsableBroker(0, None, True),
        UsableBroker(1, None, True),
        UsableBroker(2, None, False),
        UsableBroker(3, None, False),
        UsableBroker(4, None, False),
    }


# ====================================================================== AlterPartition
@pytest.mark.parametrize("mv", ["3.5-IV2", LATEST])
def test_shrink_and_expand_isr(mv):
    """testShrinkAndExpandIsr; before 3.6-IV0 the shrink also bumps the leader epoch
    (PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded, KAFKA-15021), the
    expansion never does."""
    ctx = Ctx(mv=mv)
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    ctx.create("foo", [[0, 1, 2]])
    assert ctx.part().leader == 0
    bump = 1 if mv == "3.5-IV2" else 0
    for isr, epochs in (([0, 1], (bump, 1)), ([0, 1, 2], (bump, 2))):
        _, res = ctx.alter_partition(0, isr)
        assert_consistent(ctx, res)
        assert (ctx.part().isr, res.leader, (res.leader_epoch, res.partition_epoch)) == (
            tuple(isr),
            0,
            epochs,
        )


def test_invalid_alter_partition_requests():
    """testInvalidAlterPartitionRequests, in validateAlterPartitionData's order, plus the
    precedence of its checks, a duplicate / negative ISR member (Replicas.validateIsr) and an
    unknown partition (testAlterPartitionHandleUnknownTopicIdOrName's partition-level case)."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    ctx.create("foo", [[0, 1, 2]])

    def err(*a, **kw):
        records, res = ctx.alter_partition(*a, **kw)
        assert records == []
        return res.error

    assert err(1, [0, 1]) == E.INVALID_REQUEST  # not the leader
    assert err(0, [0, 1], broker_epoch=99) == E.STALE_BROKER_EPOCH
    assert err(0, [0, 1], leader_epoch=500) == E.NOT_CONTROLLER
    assert err(0, [0, 1], partition_epoch=500) == E.NOT_CONTROLLER
    assert err(0, [0, 1, 3]) == E.INVALID_REQUEST  # 3: not a replica
    assert err(0, [1, 2]) == E.INVALID_REQUEST  # leader missing
    assert err(0, [0, 1], lrs=RECOVERING) == E.INVALID_REQUEST
    assert err(0, [0], lrs=RECOVERING) == E.INVALID_REQUEST  # RECOVERED->RECOVERING
    assert err(0, [0, 1, 1]) == E.INVALID_REQUEST  # duplicate
    assert err(0, [0, -1]) == E.INVALID_REQUEST  # negative
    # an unknown partition of a known topic (validateAlterPartitionData's first check)
    item = (ctx.rc.topic_id("foo"), 7, 0, [(0, 100)], 0)
    records, resp = ctx.rc.alter_partition(0, 100, [item])
    assert [(r.partition, r.error) for r in resp.partitions] == [(7, E.UNKNOWN_TOPIC_OR_PARTITION)]
    # precedence: a newer epoch (NOT_CONTROLLER) before anything about the sender
    assert err(1, [0, 1], leader_epoch=1, partition_epoch=0) == E.NOT_CONTROLLER
    ctx.alter_partition(0, [0, 1])  # partition epoch 1
    ctx.replay(ctx.rc.handle_broker_fenced(0))  # leader epoch 1, 2
    p = ctx.part()
    assert (p.leader, p.isr, p.leader_epoch, p.partition_epoch) == (1, (1,), 1, 2)
    # FENCED_LEADER_EPOCH is checked before the sender; the sender before the partition epoch
    assert err(2, [1, 2], leader_epoch=0) == E.FENCED_LEADER_EPOCH
    assert err(2, [1, 2], partition_epoch=1) == E.INVALID_REQUEST
    assert err(1, [1, 2], partition_epoch=1) == E.INVALID_UPDATE_VERSION
    assert err(1, [1, 0]) == E.INELIGIBLE_REPLICA  # 0 is fenced
    assert err(1, [1, 0], version=1) == E.OPERATION_NOT_ATTEMPTED


def test_alter_partition_after_unclean_election_recovers():
    """testElectUncleanLeaders_WithoutElr's RECOVERING leader, then the AlterPartition that
    ends recovery (validateAlterPartitionData allows RECOVERING with a one-replica ISR;
    PartitionChangeBuilder.build writes the requested LeaderRecoveryState)."""
    ctx = Ctx()
    ctx.register(1, 2, 3)
    ctx.unfence(1, 2, 3)
    ctx.create("foo", [[1, 2, 3]])
    ctx.alter_partition(1, [1])
    ctx.fence(1)
    ctx.unfence(2)
    assert (ctx.part().leader, ctx.part().isr) == (NO_LEADER, (1,))
    records, results = ctx.rc.elect_leaders("UNCLEAN", [("foo", 0)])
    assert [r.error for r in results] == [E.NONE]
    ctx.replay(records)
    p = ctx.part()
    assert (p.leader, p.isr, p.leader_recovery_state) == (2, (2,), RECOVERING)
    _, res = ctx.alter_partition(2, [2, 3], lrs=RECOVERING, replay=False)
    assert res.error == E.INVALID_REQUEST
    _, res = ctx.alter_partition(2, [2], lrs=RECOVERED)
    assert_consistent(ctx, res)
    assert (res.leader_recovery_state, ctx.part().leader_recovery_state) == (RECOVERED, RECOVERED)
    _, res = ctx.alter_partition(2, [2, 3])
    assert_consistent(ctx, res)


# =========================================================== reassignment (AlterPartition)
@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_reassign_partitions_alter_partition_completes_reassignment(version):
    """testReassignPartitions, last step: foo-1 [3, 2, 1] is being reassigned to [0, 2, 1]
    (the record alterPartitionReassignments writes), then leader 3 reports ISR [3, 0, 2, 1]:
    the reassignment completes, leadership leaves 3 (for 0, the first valid target replica),
    and the response is NEW_LEADER_ELECTED (v2+) / FENCED_LEADER_EPOCH (v0-1)."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3)
    ctx.unfence(0, 1, 2, 3)
    foo_id = ctx.create("foo", [[1, 2, 3], [3, 2, 1]]).topic_id
    ctx.create("bar", [[1, 2, 3]])
    rec = PartitionChangeRecord(1, foo_id, replicas=(0, 2, 1, 3), removing_replicas=(3,))
    ctx.replay([replace(rec, adding_replicas=(0,))])
    reassigning = PartitionRegistration((0, 2, 1, 3), (3, 2, 1), (3,), (0,), 3, partition_epoch=1)
    assert ctx.part("foo", 1) == reassigning
    topic = foo_id if version > 1 else "foo"
    item = (topic, 1, 0, isr_with_default_epoch(3, 0, 2, 1), 1)
    records, resp = ctx.rc.alter_partition(3, 103, [item], request_version=version)
    error = E.NEW_LEADER_ELECTED if version > 1 else E.FENCED_LEADER_EPOCH
    assert [(r.partition, r.error) for r in resp.partitions] == [(1, error)]
    ctx.replay(records)
    done = PartitionRegistration((0, 2, 1), (0, 2, 1), leader=0, leader_epoch=1, partition_epoch=2)
    assert ctx.part("foo", 1) == done
    assert ctx.rc.brokers_to_isrs.reassigning_partitions() == []


def test_cancel_reassign_partitions_alter_partition_keeps_reassignment():
    """testCancelReassignPartitions, the AlterPartition step on bar-0 [4, 3, 2] being
    reassigned to [1, 2, 3, 4, 0] (adding 0, 1) while 3 is fenced: the ISR grows, but 3 is
    not in it, so the reassignment stays."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(0, 1, 2, 3, 4)
    foo_id = ctx.create("foo", [[1, 2, 3, 4], [0, 1, 2, 3], [4, 3, 1, 0], [2, 3, 4, 1]]).topic_id
    bar_id = ctx.create("bar", [[4, 3, 2]]).topic_id
    ctx.replay(ctx.rc.handle_broker_fenced(3))
    expected = PartitionRegistration((1, 2, 3, 4), (1, 2, 4), leader=1, partition_epoch=1)
    assert ctx.rc.partition(foo_id, 0) == expected
    ctx.replay([PartitionChangeRecord(0, bar_id, replicas=(1, 2, 3, 4, 0), adding_replicas=(0, 1))])
    expected = PartitionRegistration((1, 2, 3, 4, 0), (4, 2), (), (0, 1), 4, partition_epoch=2)
    assert ctx.part("bar", 0) == expected
    item = (bar_id, 0, 0, isr_with_default_epoch(4, 1, 2, 0), 2)
    records, resp = ctx.rc.alter_partition(4, 104, [item])
    (r,) = resp.partitions
    assert (r.error, r.leader, r.leader_epoch, r.isr, r.partition_epoch) == (
        E.NONE,
        4,
        0,
        (4, 1, 2, 0),
        3,
    )
    assert records == [PartitionChangeRecord(0, bar_id, isr=(4, 1, 2, 0))]


def test_reassign_partitions_handles_new_reassignment_that_removes_previously_adding_replicas():
    """testReassignPartitionsHandlesNewReassignmentThatRemovesPreviouslyAddingReplicas, from
    the two reassignment records Kafka's test asserts ([0, 1] -> [2, 3], then -> [4, 5])."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4, 5)
    ctx.unfence(0, 1, 2, 3, 4, 5)
    tid = ctx.create("topic-1", [[0, 1]]).topic_id
    rec = PartitionChangeRecord(0, tid, replicas=(2, 3, 0, 1), removing_replicas=(0, 1))
    ctx.replay([replace(rec, adding_replicas=(2, 3))])
    p = ctx.part("topic-1")
    _, r = ctx.alter_partition(p.leader, [0, 1, 2], topic="topic-1")
    assert (r.error, r.isr, r.partition_epoch, r.leader, r.leader_epoch) == (
        E.NONE,
        (0, 1, 2),
        2,
        0,
        0,
    )
    records, results = ctx.rc.elect_leaders("PREFERRED", [("topic-1", 0)])
    assert [(r.topic, r.partition, r.error, r.error_message) for r in results] == [
        ("topic-1", 0, E.NONE, None)
    ]
    ctx.replay(records)
    assert ctx.part("topic-1").leader == 2
    rec = PartitionChangeRecord(0, tid, replicas=(4, 5, 0, 1, 2, 3), adding_replicas=(4, 5))
    ctx.replay([replace(rec, removing_replicas=(0, 1, 2, 3))])
    p = ctx.part("topic-1")
    assert p.leader == 2 and p.leader in p.replicas
    _, r = ctx.alter_partition(2, [0, 1, 2, 3, 4, 5], topic="topic-1")
    assert r.error == E.NEW_LEADER_ELECTED
    p = ctx.part("topic-1")
    assert (p.leader, p.replicas, p.isr, p.adding_replicas, p.removing_replicas) == (
        4,
        (4, 5),
        (4, 5),
        (),
        (),
    )


# ============================================================================ ELR (KIP-966)
def elr_ctx(brokers, min_isr):
    ctx = Ctx(elr=True)
    ctx.register(*brokers)
    ctx.unfence(*brokers)
    ctx.create("foo", [list(brokers)])
    assert ctx.part().leader == brokers[0]
    ctx.alter_topic_config("foo", "min.insync.replicas", str(min_isr))
    return ctx


def test_eligible_leader_replicas_order_is_java_hash_set_order():
    """testEligibleLeaderReplicas_ShrinkAndExpandIsr with ids that share a HashSet bucket:
    maybePopulateTargetElr streams a java.util.HashSet (16 buckets) of the old ISR, so 33, 17
    and 1 (all bucket 1) come out in insertion order, not sorted."""
    ctx = elr_ctx((33, 17, 1), 3)
    ctx.alter_partition(33, [33])
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((17, 1), ())


def test_eligible_leader_replicas_broker_fence():
    """testEligibleLeaderReplicas_BrokerFence (fencing by session expiry, oldest first)."""
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(2, 3)
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((3,), ())
    ctx.fence(1, 2, 3)
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((1, 3), ())
    ctx.unfence(0, 1, 2, 3)
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((1, 3), ())


def test_eligible_leader_replicas_clean_election():
    """testEligibleLeaderReplicas_CleanElection."""
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(1, 2, 3)
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((2, 3), ())
    ctx.unfence(2)
    ctx.fence(0, 1)
    p = ctx.part()
    assert (p.elr, p.isr, p.leader, p.last_known_elr) == ((0, 3), (2,), 2, ())


def test_eligible_leader_replicas_election_from_elr_when_isr_empty():
    """testEligibleLeaderReplicas_CleanElection continued past the last ISR member: with ELR
    the ISR may become empty (leader -1, LastKnownElr = the old leader); an ELR member that
    comes back is elected by handleBrokerUnfenced with ISR = [it] (PartitionChangeBuilder
    .tryElection), and LastKnownElr is cleared."""
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(1, 2, 3)
    ctx.fence(0, 1, 2, 3)
    p = ctx.part()
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, (), (0, 2, 3), (0,))
    assert ctx.rc.offline_partitions_count() == 1
    records, results = ctx.rc.elect_leaders("PREFERRED", [("foo", 0)])
    assert (records, [r.error for r in results]) == ([], [E.PREFERRED_LEADER_NOT_AVAILABLE])
    epoch = p.leader_epoch
    ctx.unfence(3)
    p = ctx.part()
    assert (p.leader, p.isr, p.elr, p.last_known_elr, p.leader_epoch) == (
        3,
        (3,),
        (0, 2),
        (),
        epoch + 1,
    )
    assert p.leader_recovery_state == RECOVERED


def test_eligible_leader_replicas_unclean_shutdown():
    """testEligibleLeaderReplicas_UncleanShutdown; the second unclean shutdown goes through
    ClusterControlManager.registerBroker (a new incarnation runs the
    BrokerUncleanShutdownHandler before the RegisterBrokerRecord)."""
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(1, 2, 3)
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((2, 3), ())
    ctx.replay(ctx.rc.handle_broker_unclean_shutdown(3))
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((2,), ())
    ctx.now += 1000
    records, reply = ctx.cc.register_broker(
        0, "new-incarnation-0", new_record_offset=500, now_ms=ctx.now
    )
    assert reply.unclean_shutdown and isinstance(records[-1], RegisterBrokerRecord)
    ctx.replay(records)
    p = ctx.part()
    assert (p.elr, p.last_known_elr, p.isr, p.leader) == ((2,), (0,), (), NO_LEADER)


@pytest.mark.parametrize("mv", ["3.9-IV0", LATEST])
def test_unclean_shutdown_handler_is_gated_by_metadata_version_not_elr(mv):
    """testEligibleLeaderReplicas_UncleanShutdown's handler with the ELR feature off:
    handleBrokerUncleanShutdown returns early only when !metadataVersion.isElrSupported(), so
    from 4.0-IV1 a re-registering new incarnation leaves every ISR even without ELR."""
    ctx = Ctx(mv=mv, elr=False)
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    topic_id = ctx.create("foo", [[0, 1, 2]]).topic_id
    ctx.now += 1000
    records, reply = ctx.cc.register_broker(
        2, "new-incarnation-2", new_record_offset=500, now_ms=ctx.now
    )
    assert reply.unclean_shutdown
    if mv == LATEST:
        assert records[:-1] == [PartitionChangeRecord(0, topic_id, isr=(0, 1))]
    else:
        assert records[:-1] == []
    ctx.replay(records)
    assert ctx.part().isr == ((0, 1) if mv == LATEST else (0, 1, 2))


def test_eligible_leader_replicas_unclean_election_clears_elr():
    """electLeaders(UNCLEAN) with ELR on (PartitionChangeBuilder.electAnyLeader at 1eb7644):
    no ISR, fenced ELR members, and a live replica outside the ELR: the unclean election takes
    it, forces ISR = [it], RECOVERING, and clears ELR and LastKnownElr (maybeUpdateRecordElr,
    maybeUpdateLastKnownLeader)."""
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(1, 2, 3)
    ctx.fence(0, 1, 2, 3)
    ctx.unfence(1)
    p = ctx.part()
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, (), (0, 2, 3), (0,))
    records, results = ctx.rc.elect_leaders("UNCLEAN", [("foo", 0)])
    assert [r.error for r in results] == [E.NONE]
    ctx.replay(records)
    p = ctx.part()
    assert (p.leader, p.isr, p.elr, p.last_known_elr, p.leader_recovery_state) == (
        1,
        (1,),
        (),
        (),
        RECOVERING,
    )


def test_eligible_leader_replicas_last_known_leader_is_elected():
    """testEligibleLeaderReplicas_UncleanShutdown continued: when the last ELR member also
    shuts down uncleanly, ISR and ELR are empty and LastKnownElr holds one replica, so
    canElectLastKnownLeader lets the last known leader (0) lead at once -- at trunk 1eb7644
    even though 0 is fenced (KAFKA-19522 made it wait for an acceptable one in 4.1)."""
    ctx = elr_ctx((0, 1, 2, 3), 3)
    ctx.fence(1, 2, 3)
    ctx.replay(ctx.rc.handle_broker_unclean_shutdown(3))
    ctx.fence(0, 1, 2, 3)
    ctx.replay(ctx.rc.handle_broker_unclean_shutdown(0))
    p = ctx.part()
    assert (p.leader, p.isr, p.elr, p.last_known_elr) == (NO_LEADER, (), (2,), (0,))
    ctx.replay(ctx.rc.handle_broker_unclean_shutdown(2))
    p = ctx.part()
    assert (p.leader, p.isr, p.elr, p.last_known_elr, p.leader_recovery_state) == (
        0,
        (0,),
        (),
        (),
        RECOVERING,
    )


def test_eligible_leader_replicas_with_cluster_level_min_isr():
    """getTopicEffectiveMinIsr reads the effective min.insync.replicas (topic, then the
    cluster default BROKER ""), capped by the replication factor."""
    ctx = Ctx(elr=True)
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    ctx.create("foo", [[0, 1, 2]])
    ctx.replay([ConfigRecord("BROKER", "", "min.insync.replicas", "2")])
    assert ctx.rc.get_topic_effective_min_isr("foo") == 2
    ctx.alter_partition(0, [0])
    assert ctx.part().elr == (1, 2)
    ctx.alter_topic_config("foo", "min.insync.replicas", "1")
    assert ctx.rc.get_topic_effective_min_isr("foo") == 1
    ctx.alter_partition(0, [0, 1])
    assert (ctx.part().elr, ctx.part().last_known_elr) == ((), ())


# =============================================================================== elections


def test_elect_preferred_leaders():
    """testElectPreferredLeaders (re-registering broker 1 ends its controlled shutdown), plus
    an unknown partition of a known topic ("No such partition as foo-3", electLeader)."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(1, 2, 3, 4)
    ctx.in_controlled_shutdown(1)
    foo_id = ctx.create("foo", [[1, 2, 3], [2, 3, 4], [0, 2, 1]]).topic_id
    request = [("foo", 0), ("foo", 1), ("foo", 2), ("bar", 0), ("bar", 1)]
    no_bar = [(E.UNKNOWN_TOPIC_OR_PARTITION, "No such topic as bar")] * 2
    records, results = ctx.rc.elect_leaders("PREFERRED", request)
    assert records == []
    assert [(r.error, r.error_message) for r in results] == [
        (E.PREFERRED_LEADER_NOT_AVAILABLE, None),
        (E.ELECTION_NOT_NEEDED, None),
        (E.PREFERRED_LEADER_NOT_AVAILABLE, None),
    ] + no_bar
    ctx.register(1)
    ctx.unfence(0, 1)
    records, resp = ctx.rc.alter_partition(
        2,
        102,
        [
            (foo_id, 0, 0, isr_with_default_epoch(1, 2, 3), 0),
            (foo_id, 2, 0, isr_with_default_epoch(0, 2, 1), 0),
        ],
    )
    assert [
        (r.partition, r.error, r.leader, r.leader_epoch, r.isr, r.partition_epoch)
        for r in resp.partitions
    ] == [(0, E.NONE, 2, 0, (1, 2, 3), 1), (2, E.NONE, 2, 0, (0, 2, 1), 1)]
    ctx.replay(records)
    records, results = ctx.rc.elect_leaders("PREFERRED", request)
    assert [(r.error, r.error_message) for r in results] == [
        (E.NONE, None),
        (E.ELECTION_NOT_NEEDED, None),
        (E.NONE, None),
    ] + no_bar
    assert records == [
        PartitionChangeRecord(0, foo_id, leader=1),
        PartitionChangeRecord(2, foo_id, leader=0),
    ]
    _, results = ctx.rc.elect_leaders("PREFERRED", [("foo", 3)])
    assert [(r.error, r.error_message) for r in results] == [
        (E.UNKNOWN_TOPIC_OR_PARTITION, "No such partition as foo-3")
    ]
