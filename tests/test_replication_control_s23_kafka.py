"""ReplicationControlManagerTest cases not ported before, read at 4.3.0 (confluentinc/kafka
mirror a9ce322153), checked against 3.7.0 and 4.0 (4ae681446f) where they differ.

Sources: metadata/src/test/java/org/apache/kafka/controller/ReplicationControlManagerTest.java
and ReplicationControlManager.java (createPartitions, validateManualPartitionAssignment).

The CreatePartitions cases: testCreatePartitions, testCreatePartitionsFailsWhenAllBrokersAre
FencedOrInControlledShutdown, testCreatePartitionsISRInvariants,
testCreatePartitionsFailsWithManualAssignmentWithAllFenced (all four the same at 3.7.0, 4.0 and
4.3.0 but for the directories, which kafkasim does not model, and createTopics' extra
``forwarded`` argument of 4.3.0). On the ReplicationControlTestContext of
tests/test_replication_control_manager_kafka.py (``Ctx``); Kafka's ControllerResult is
``(records, results)``, CreatePartitionsTopic is ``(name, count, assignments or None)``.

testProcessExpiredBrokerHeartbeat (@4.3.0, the same since 3.5.0) on
``ReplicationControlManager.process_expired_broker_heartbeat``.

Also the placement messages of testCreateTopics and testInvalidCreateTopicsWithValidateOnlyFlag
@4.3.0, which KIP-1066 (KAFKA-19774, cordoned log directories) changed in StripedReplicaPlacer
(rule ``placement_messages_name_cordoned_dirs``, since 4.3).

Left out: testCreatePartitionsWithMutationQuotaExceeded (controller mutation quotas are not
modelled), the directories of testCreatePartitions, testHandleDirectoriesCordoned (JBOD log
directories are not modelled).
"""

from __future__ import annotations

import pytest
from test_replication_control_manager_kafka import Ctx

from kafkasim.control.kraft.cluster_control import StaleBrokerEpochException
from kafkasim.control.kraft.records import PartitionRecord, PartitionRegistration
from kafkasim.control.kraft.replication_control import (
    CreatePartitionsTopic,
    CreatePartitionsTopicResult,
)
from kafkasim.core import errors as E


def _create_partitions(ctx, *topics):
    """replicationControl.createPartitions, the records replayed (Kafka's test replays them
    whatever the answers)."""
    records, results = ctx.rc.create_partitions([CreatePartitionsTopic(*t) for t in topics])
    ctx.replay(records)
    return records, results


def test_create_partitions():
    """ReplicationControlManagerTest.testCreatePartitions @4.3.0 (the same @3.7.0 and @4.0,
    directories aside): foo grows from 3 to 5; bar (4 -> 3), baz (unknown) and quux (2 -> 2)
    are refused; then manual assignments: foo's [1, 3] is taken, bar's single replica, quux's
    missing assignment and foo2's unregistered broker 2 are refused."""
    ctx = Ctx()
    ctx.register(0, 1, 3)
    ctx.unfence(0, 1, 3)
    for name, n in (("foo", 3), ("bar", 4), ("quux", 2), ("foo2", 2)):
        ctx.create_n(name, n, 2)
    records, results = _create_partitions(
        ctx, ("foo", 5, None), ("bar", 3, None), ("baz", 3, None), ("quux", 2, None))
    assert results == [
        CreatePartitionsTopicResult("foo", E.NONE, None),
        CreatePartitionsTopicResult(
            "bar", E.INVALID_PARTITIONS,
            "The topic bar currently has 4 partition(s); 3 would not be an increase."),
        CreatePartitionsTopicResult("baz", E.UNKNOWN_TOPIC_OR_PARTITION, None),
        CreatePartitionsTopicResult("quux", E.INVALID_PARTITIONS,
                                    "Topic already has 2 partition(s)."),
    ]
    assert [(type(r), r.partition_id, len(r.replicas)) for r in records] == [
        (PartitionRecord, 3, 2), (PartitionRecord, 4, 2)]
    assert len(ctx.rc.topics()["foo"]) == 5
    records, results = _create_partitions(
        ctx, ("foo", 6, [[1, 3]]), ("bar", 5, [[1]]), ("quux", 4, [[1, 0]]),
        ("foo2", 3, [[2, 0]]))
    assert results == [
        CreatePartitionsTopicResult("foo", E.NONE, None),
        CreatePartitionsTopicResult(
            "bar", E.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes a partition with 1 replica(s), but this "
            "is not consistent with previous partitions, which have 2 replica(s)."),
        CreatePartitionsTopicResult(
            "quux", E.INVALID_REPLICA_ASSIGNMENT,
            "Attempted to add 2 additional partition(s), but only 1 assignment(s) were "
            "specified."),
        CreatePartitionsTopicResult(
            "foo2", E.INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes broker 2, but no such broker is "
            "registered."),
    ]
    # continued: foo-5 is [1, 3], all in sync, led by 1
    assert ctx.part("foo", 5) == PartitionRegistration((1, 3), (1, 3), leader=1)
    assert [len(ctx.rc.topics()[t]) for t in ("foo", "bar", "quux", "foo2")] == [6, 4, 2, 2]


def test_create_partitions_fails_when_all_brokers_are_fenced_or_in_controlled_shutdown():
    """testCreatePartitionsFailsWhenAllBrokersAreFencedOrInControlledShutdown @4.3.0: after
    foo [1 partition, RF 2] is created, both brokers register again (fenced), 0 is unfenced
    and goes into controlled shutdown: the placer still places foo-1 on the fenced 1 and the
    shutting-down 0, but no replica may join the ISR."""
    ctx = Ctx()
    ctx.register(0, 1)
    ctx.unfence(0, 1)
    ctx.create_n("foo", 1, 2)
    ctx.register(0, 1)
    ctx.unfence(0)
    ctx.in_controlled_shutdown(0)
    records, results = _create_partitions(ctx, ("foo", 2, None))
    assert results == [CreatePartitionsTopicResult(
        "foo", E.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 2 time(s): All brokers are currently fenced or in "
        "controlled shutdown.")]
    assert records == []


def test_create_partitions_isr_invariants():
    """testCreatePartitionsISRInvariants @4.3.0: broker 2 is fenced and 1 in controlled
    shutdown, so foo-1 (replicas [0, 1, 2]) starts with the ISR [0]."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1)
    ctx.in_controlled_shutdown(1)
    ctx.create_n("foo", 1, 3)
    _, results = _create_partitions(ctx, ("foo", 2, None))
    assert results == [CreatePartitionsTopicResult("foo")]
    assert ctx.part("foo", 1) == PartitionRegistration((0, 1, 2), (0,), leader=0)


def test_create_partitions_fails_with_manual_assignment_with_all_fenced():
    """testCreatePartitionsFailsWithManualAssignmentWithAllFenced @4.3.0: [3, 4, 5] are all
    fenced (INVALID_REPLICA_ASSIGNMENT), [2, 4, 5] starts with the ISR [2]."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4, 5)
    ctx.unfence(0, 1, 2)
    ctx.create("foo", [[0, 1, 2]])
    _, results = _create_partitions(ctx, ("foo", 2, [[3, 4, 5]]))
    assert results == [CreatePartitionsTopicResult(
        "foo", E.INVALID_REPLICA_ASSIGNMENT,
        "All brokers specified in the manual partition assignment for partition 1 are fenced "
        "or in controlled shutdown.")]
    _, results = _create_partitions(ctx, ("foo", 2, [[2, 4, 5]]))
    assert results == [CreatePartitionsTopicResult("foo")]
    assert ctx.part("foo", 1) == PartitionRegistration((2, 4, 5), (2,), leader=2)


def test_create_partitions_through_the_quorum_controller():
    """testCreatePartitions @4.3.0 continued through QuorumController.createPartitions (its
    appendWriteEvent "createPartitions"): the PartitionRecords of the added partitions are
    committed as one batch and the future completes with the results."""
    from test_quorum_controller_kafka import (
        ControllerEnv,
        create_topics,
        register_brokers_and_unfence,
    )

    from kafkasim.control.kraft.replication_control import CreatableTopic

    env = ControllerEnv()
    register_brokers_and_unfence(env, 3)
    assert create_topics(env, CreatableTopic("foo", 1, 2))["foo"].error == E.NONE
    future = env.active.create_partitions(
        env, [CreatePartitionsTopic("foo", 3), CreatePartitionsTopic("bar", 2)])
    assert env.get(future) == [CreatePartitionsTopicResult("foo"),
                               CreatePartitionsTopicResult("bar", E.UNKNOWN_TOPIC_OR_PARTITION)]
    written = [r for r in env.metadata_records() if isinstance(r, PartitionRecord)]
    assert [r.partition_id for r in written] == [0, 1, 2]
    rc = env.active.replication_control
    assert sorted(rc.topics()["foo"]) == [0, 1, 2]
    assert all(len(p.replicas) == 2 and p.isr == p.replicas for p in rc.topics()["foo"].values())


def test_process_expired_broker_heartbeat():
    """testProcessExpiredBrokerHeartbeat @4.3.0: 100 ms later, an expired heartbeat of broker 0
    (epoch 100, metadata offset 123) still updates its heartbeat state."""
    ctx = Ctx()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    ctx.now += 100
    ctx.rc.process_expired_broker_heartbeat(0, 100, 123, now_ms=ctx.now)
    (state,) = [b for b in ctx.cc.heartbeat_manager.brokers() if b.id == 0]
    assert (state.id, state.metadata_offset) == (0, 123)
    # continued: the contact renews the session, as a heartbeat's touch does
    assert state.last_contact_ms == ctx.now


def test_process_expired_broker_heartbeat_checks_the_broker_epoch():
    """ReplicationControlManager.processExpiredBrokerHeartbeat @4.3.0: checkBrokerEpoch comes
    first, so a stale epoch throws StaleBrokerEpochException and touches nothing."""
    ctx = Ctx()
    ctx.register(0)
    ctx.unfence(0)
    before = [(b.id, b.metadata_offset) for b in ctx.cc.heartbeat_manager.brokers()]
    with pytest.raises(StaleBrokerEpochException,
                       match="Expected broker epoch 100, but got broker epoch 99"):
        ctx.rc.process_expired_broker_heartbeat(0, 99, 123, now_ms=ctx.now)
    assert [(b.id, b.metadata_offset) for b in ctx.cc.heartbeat_manager.brokers()] == before


# ============================================== KIP-1066's placement messages (4.3.0, not fixed)
#: KAFKA-19774 (a45d36ca5d, in 4.3.0 a9ce322153, not in 4.2.0) rewrote StripedReplicaPlacer's two
#: InvalidReplicationFactorException messages (KIP-1066): rule
#: ``placement_messages_name_cordoned_dirs``, the placer's ``cordoned_dirs_in_messages``.


def _ctx_4_3() -> Ctx:
    ctx = Ctx()
    ctx.cc.replica_placer.cordoned_dirs_in_messages = True
    return ctx


def test_create_topics_all_fenced_message_4_3():
    """testCreateTopics @4.3.0 (ReplicationControlManagerTest.java:639): no broker registered,
    foo cannot be placed."""
    _, r = _ctx_4_3().rc.create_topic("foo")
    assert (r.error, r.error_message) == (
        E.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 3 time(s): All brokers are currently fenced, or have "
        "all their log directories cordoned.")


def test_invalid_create_topics_with_validate_only_flag_message_4_3():
    """testInvalidCreateTopicsWithValidateOnlyFlag @4.3.0 (ReplicationControlManagerTest.java
    :897): replication factor 4 on three brokers."""
    ctx = _ctx_4_3()
    ctx.register(0, 1, 2)
    ctx.unfence(0, 1, 2)
    records, r = ctx.rc.create_topic("foo", 1, 4, validate_only=True)
    assert records == []
    assert (r.error, r.error_message) == (
        E.INVALID_REPLICATION_FACTOR,
        "Unable to replicate the partition 4 time(s): The target replication factor of 4 cannot "
        "be reached because only 3 broker(s) are registered or some brokers have all their log "
        "directories cordoned.")


@pytest.mark.parametrize("version,suffix", [
    ("4.2", "are registered."),
    ("4.3", "are registered or some brokers have all their log directories cordoned.")])
def test_kraft_cluster_refuses_a_topic_in_its_release_wording(version, suffix):
    """testInvalidCreateTopicsWithValidateOnlyFlag's refusal through a KRaft cluster of each
    release (the rule reaches the controller's placer): 4.2.0 a18251bae0 and 4.3.0 a9ce322153
    StripedReplicaPlacer.java:413-415."""
    from kafkasim.runtime.cluster import Cluster
    from kafkasim.settings.exceptions import ClusterError
    c = Cluster(brokers=3, seed=1, kafka_version=version)
    c.run(3000)
    with pytest.raises(ClusterError) as e:
        c.create_topic("demo", partitions=1, replication_factor=4)
    assert str(e.value).startswith(
        "Cannot create topic 'demo': Unable to replicate the partition 4 time(s): The target "
        "replication factor of 4 cannot be reached because only 3 broker(s) " + suffix)
