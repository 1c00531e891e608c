"""kafka.server.ReplicaManager's KRaft topic deletion (applyDelta of a RemoveTopicRecord), ported
from core/src/test/scala/unit/kafka/server/ReplicaManagerTest.scala at 3.9.0 (read at the
3.9.0-rc3 tag, the release commit) and at 4.3.0 (confluentinc/kafka a9ce322153), with the
source cases around it: ReplicaManager.applyDelta handles TopicsDelta.localChanges(brokerId)
.deletes first -- the partitions of every deleted topic whose registration in the previous
image listed this broker (TopicsDelta.java:216-224@3.9.0) -- with stopPartitions(deleteLocalLog
= true): fetchers removed, the partition left the partition map, delayed produces and fetches
completed, the log deleted (ReplicaManager.scala:2728-2748 and 579-626@3.9.0; the same at
4.3.0). BrokerMetadataPublisher sets the metadata cache's image before applyDelta, so a
request still waiting on a deleted partition answers getPartitionOrError's
UNKNOWN_TOPIC_OR_PARTITION. Also testAppendRecordsToLeader@4.3.0 (a leader made by applyDelta).

The broker is tests/test_replica_manager_more_kafka's ``KRaftBroker`` (local broker 0, other
broker 1: Kafka's tests use 1 and 2); its ``apply_delta`` replays the records with
``kafkasim.runtime.broker_lifecycle.replay_records`` (the MetadataLoader's delta) and publishes
them, as the broker's BrokerLifecycleManager.on_high_watermark does.
"""

from __future__ import annotations

import pytest
from test_replica_manager_kafka import CLIENT, TOPIC, TP
from test_replica_manager_more_kafka import (
    FOO_UUID,
    LOCAL,
    OTHER,
    KRaftBroker,
    fetcher_of,
    topics_create_delta,
    topics_delete_delta,
)

from kafkasim.control.kraft import records as R
from kafkasim.core import errors as E
from kafkasim.core.messages import ProduceRequest

VERSIONS = ["3.9", "4.3"]
BAR_UUID = "b4rB4rB4rB4rB4rB4rB4rA"


def _broker(version: str, leader: bool) -> KRaftBroker:
    b = KRaftBroker(version)
    b.apply_delta(*topics_create_delta(LOCAL, leader))
    part = b.part()
    assert part.is_leader is leader and part.get_leader_epoch() == 0
    assert (fetcher_of(b) is None) is leader
    return b


def _stopped(b: KRaftBroker) -> int:
    """How many replicas the broker stopped (its stop_replica traces)."""
    return sum(line.startswith("trace stop_replica") for line in b.outbox)


def _assert_removed(b: KRaftBroker) -> None:
    """HostedPartition.None, replicaFetcherManager.getFetcher(tp) None, logManager.getLog(tp)
    None."""
    assert b.rm.partitions.get(TP) is None
    assert fetcher_of(b) is None
    assert TP not in b.logs


@pytest.mark.parametrize("version", VERSIONS)
def test_delta_follower_removed_topic(version):
    """ReplicaManagerTest.testDeltaFollowerRemovedTopic@3.9.0/@4.3.0: the follower of epoch 0
    fetches from the other broker; a RemoveTopicRecord removes the partition, its fetcher and
    its log."""
    b = _broker(version, leader=False)
    assert fetcher_of(b)[0] == OTHER
    b.apply_delta(*topics_delete_delta())
    _assert_removed(b)
    assert _stopped(b) == 1


@pytest.mark.parametrize("version", VERSIONS)
def test_delta_leader_to_removed_topic(version):
    """ReplicaManagerTest.testDeltaLeaderToRemovedTopic@3.9.0/@4.3.0: the leader of epoch 0
    (ISR {local, other}, no fetcher): a RemoveTopicRecord removes the partition and its log."""
    b = _broker(version, leader=True)
    assert b.part().in_sync_replica_ids() == {LOCAL, OTHER}
    b.produce(3, acks=1)
    assert b.part().log.log_end_offset == 3
    b.apply_delta(*topics_delete_delta())
    _assert_removed(b)


@pytest.mark.parametrize("version", VERSIONS)
def test_delta_removed_topic_leaves_the_metadata_cache(version):
    """KRaftMetadataCache.setImage (BrokerMetadataPublisher, before applyDelta): the deleted
    topic's partitions are gone from the cache -- contains(tp) is false."""
    b = _broker(version, leader=False)
    assert b.metadata.contains(TP)
    b.apply_delta(*topics_delete_delta())
    assert not b.metadata.contains(TP) and TP not in b.metadata.partitions


@pytest.mark.parametrize("version", VERSIONS)
def test_delta_removed_topic_completes_produce(version):
    """stopPartitions -> completeDelayedFetchOrProduceRequests (ReplicaManager.scala:604-606
    @3.9.0): an acks=-1 produce waiting at the leader completes when its topic is deleted,
    with DelayedProduce's getPartitionOrError (DelayedProduce.scala:97@3.9.0): the partition is
    not hosted and the metadata cache no longer has it, UNKNOWN_TOPIC_OR_PARTITION."""
    b = _broker(version, leader=True)
    corr = b.produce(3, timeout_ms=1000)
    assert b.produce_answer(corr) is None
    b.apply_delta(*topics_delete_delta())
    assert b.produce_answer(corr).partitions[0][2] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert not b.rm.delayed_produce and not b.rm.produce_waiters


@pytest.mark.parametrize("version", VERSIONS)
def test_delta_removed_topic_completes_fetch(version):
    """The same for a consumer fetch parked at the leader (DelayedFetch.tryComplete: the
    partition is not hosted, forced completion; the read answers getPartitionOrException's
    UNKNOWN_TOPIC_OR_PARTITION)."""
    b = _broker(version, leader=True)
    corr = b.fetch(-1, 0, epoch=0, min_bytes=1 << 30, max_wait_ms=1000)
    assert b.fetch_answer(corr) is None
    b.apply_delta(*topics_delete_delta())
    assert b.fetch_data(corr).error == E.UNKNOWN_TOPIC_OR_PARTITION


def test_delta_removed_topic_of_other_replicas_is_ignored():
    """TopicsDelta.localChanges: a deleted topic's partition is a local delete only when its
    previous registration lists this broker. Topic bar on brokers (1, 2) is removed; broker 0,
    leader of foo, stops nothing."""
    b = _broker("3.9", leader=True)
    bar = ("bar", 0)
    b.apply_delta(R.TopicRecord("bar", BAR_UUID),
                  R.PartitionRecord(0, BAR_UUID, (1, 2), (1, 2), leader=1, leader_epoch=0,
                                    partition_epoch=0))
    assert b.metadata.contains(bar) and bar not in b.rm.partitions
    part = b.part()
    b.outbox.clear()
    b.apply_delta(R.RemoveTopicRecord(BAR_UUID))
    assert not b.metadata.contains(bar)
    assert _stopped(b) == 0
    assert b.part() is part and part.is_leader


def test_delta_removed_and_recreated_topic():
    """ReplicaManager.applyDelta handles the deletes first "because we might subsequently
    create new partitions with the same names" (ReplicaManager.scala:2726-2727@3.9.0): a delta
    that removes foo and creates a new foo (another topic id) on the same replicas stops and
    deletes the old replica, then makes a new empty one."""
    b = _broker("3.9", leader=True)
    b.produce(3, acks=1)
    old = b.part()
    assert old.log.log_end_offset == 3
    new_id = "n3wF00n3wF00n3wF00n3wA"
    b.apply_delta(R.RemoveTopicRecord(FOO_UUID), R.TopicRecord(TOPIC, new_id),
                  R.PartitionRecord(0, new_id, (LOCAL, OTHER), (LOCAL, OTHER), leader=LOCAL,
                                    leader_epoch=0, partition_epoch=0))
    assert _stopped(b) == 1
    new = b.part()
    assert new is not old and new.is_leader
    assert new.log.log_end_offset == 0 and new.log is not old.log


def test_delta_created_and_removed_in_one_delta_is_no_local_change():
    """TopicsDelta.replay(RemoveTopicRecord) of a topic created in the same delta: it leaves
    changedTopics and is not a deleted topic of the previous image, so the broker neither makes
    nor stops a replica."""
    b = KRaftBroker("3.9")
    b.outbox.clear()
    b.apply_delta(*topics_create_delta(LOCAL, True), *topics_delete_delta())
    assert TP not in b.rm.partitions and TP not in b.logs
    assert _stopped(b) == 0


def test_append_records_to_leader():
    """ReplicaManagerTest.testAppendRecordsToLeader@4.3.0: the local broker leads foo-0
    (replicas and ISR: itself, applyDelta of a TopicRecord and a PartitionRecord); an acks=1
    append of one record to foo-0 and bar-0 writes foo at offset 0 (log start 0) and answers
    bar, a topic the metadata does not have, UNKNOWN_TOPIC_OR_PARTITION."""
    b = KRaftBroker("4.3")
    b.apply_delta(R.TopicRecord(TOPIC, FOO_UUID),
                  R.PartitionRecord(0, FOO_UUID, (LOCAL,), (LOCAL,), leader=LOCAL,
                                    leader_epoch=0, partition_epoch=0))
    assert b.part().is_leader
    corr = b.corr()
    entries = tuple((topic, 0, (corr,), (10,), -1, -1, -1) for topic in (TOPIC, "bar"))
    b.rm.append_records(b, CLIENT, ProduceRequest(corr, CLIENT, 1, 1000, entries))
    answer = b.produce_answer(corr)
    assert answer.partitions == ((TOPIC, 0, E.NONE, 0),
                                 ("bar", 0, E.UNKNOWN_TOPIC_OR_PARTITION, -1))
    assert answer.log_start_offsets[0] == 0
    assert b.part().log.log_end_offset == 1
