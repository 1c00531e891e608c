"""The leader's validation of Fetch and OffsetsForLeaderEpoch, in Kafka's order.

kafka.cluster.Partition.fetchRecords / readRecords / getLocalLog / followerReplicaOrThrow /
lastOffsetForLeaderEpoch and ReplicaManager.lastOffsetForLeaderEpoch. Each test names the Kafka
unit test (PartitionTest) or change it mirrors.
"""

from __future__ import annotations

import pytest
from clusters import make_cluster

from kafkasim.core import errors as E
from kafkasim.core.log import Log
from kafkasim.core.messages import (
    FetchPartition,
    FetchRequest,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from kafkasim.core.partition import Partition
from kafkasim.runtime.cluster import Cluster

TP = ("t", 0)


def _cluster(version: str = "3.7", brokers: int = 3) -> Cluster:
    c = make_cluster(brokers, seed=1, kafka_version=version, latency_ms=1, jitter_ms=0,
                     config={"auto.leader.rebalance.enable": False}, topic="t",
                     assignment=[[1, 2, 3]], settle_ms=1000)
    c.shutdown(3)   # the controller drops 3 from the ISR: leader epoch 1, so epoch - 1 is valid
    assert c.run_until(lambda cl: cl.brokers[3].state == "stopped", 10000)
    c.start(3)
    c.run(3000)
    assert c.leader("t") == 1 and c.inspect.partition_state("t", 0)["leader_epoch"] == 1
    return c


def _fetch(c, broker: int, replica_id: int, fetch_offset: int, current_leader_epoch: int = -1,
           last_fetched_epoch: int = -1, update: bool = False, topic: str = "t"):
    b = c.brokers[broker]
    fp = FetchPartition(topic, 0, fetch_offset, current_leader_epoch, last_fetched_epoch, 0,
                        1 << 20)
    req = FetchRequest(99, replica_id, 500, 1, 1 << 20, (fp,))
    return b.replica_manager._read_partition(b, req, fp, update_follower_state=update)


def _offsets_for_leader_epoch(c, broker: int, current_epoch: int, epoch: int, topic: str = "t"):
    b = c.brokers[broker]
    sent = []
    b.send = lambda dst, msg: sent.append(msg)
    b.replica_manager.offsets_for_leader_epoch(
        b, 2, OffsetsForLeaderEpochRequest(5, 2, ((topic, 0, current_epoch, epoch),)))
    del b.send
    (resp,) = sent
    assert isinstance(resp, OffsetsForLeaderEpochResponse)
    (_t, _p, err, found_epoch, end), = resp.partitions
    return err, found_epoch, end


# ------------------------------------------------------------------ epoch fencing first

@pytest.mark.parametrize(("delta", "expected"), [
    (-1, E.FENCED_LEADER_EPOCH),
    (0, E.NOT_LEADER_OR_FOLLOWER),
    (1, E.UNKNOWN_LEADER_EPOCH),
])
def test_fetch_at_a_follower_checks_the_epoch_before_leadership(delta, expected):
    """PartitionTest.testLeaderEpochValidationOnFollower: Partition.getLocalLog runs
    checkCurrentLeaderEpoch before the leader requirement (KIP-320, 2.1+)."""
    c = _cluster()
    epoch = c.brokers[2].replica_manager.partitions[TP].leader_epoch
    pd = _fetch(c, 2, 3, 0, current_leader_epoch=epoch + delta)
    assert pd.error == expected and len(pd.records.ids) == 0


@pytest.mark.parametrize(("delta", "expected"), [
    (-1, E.FENCED_LEADER_EPOCH),
    (0, E.NOT_LEADER_OR_FOLLOWER),
    (1, E.UNKNOWN_LEADER_EPOCH),
])
def test_offsets_for_leader_epoch_at_a_follower(delta, expected):
    """PartitionTest.testOffsetForLeaderEpochValidationForFollower: FENCED / UNKNOWN epoch
    before NOT_LEADER_OR_FOLLOWER (lastOffsetForLeaderEpoch with fetchOnlyFromLeader = true)."""
    c = _cluster()
    epoch = c.brokers[2].replica_manager.partitions[TP].leader_epoch
    assert _offsets_for_leader_epoch(c, 2, epoch + delta, epoch)[0] == expected


@pytest.mark.parametrize(("delta", "expected"), [
    (-1, E.FENCED_LEADER_EPOCH),
    (0, E.NONE),
    (1, E.UNKNOWN_LEADER_EPOCH),
])
def test_offsets_for_leader_epoch_at_the_leader(delta, expected):
    """PartitionTest.testOffsetForLeaderEpochValidationForLeader."""
    c = _cluster()
    epoch = c.brokers[1].replica_manager.partitions[TP].leader_epoch
    err, found, end = _offsets_for_leader_epoch(c, 1, epoch + delta, epoch)
    assert err == expected
    if expected == E.NONE:
        assert (found, end) == (epoch, c.log(1, "t").log_end_offset)


def test_offsets_for_leader_epoch_unknown_topic():
    """ReplicaManager.lastOffsetForLeaderEpoch: a partition this broker does not host is
    NOT_LEADER_OR_FOLLOWER if the topic exists, UNKNOWN_TOPIC_OR_PARTITION otherwise."""
    c = _cluster(brokers=4)
    assert _offsets_for_leader_epoch(c, 4, -1, 0)[0] == E.NOT_LEADER_OR_FOLLOWER
    assert _offsets_for_leader_epoch(c, 4, -1, 0, topic="nope")[0] == \
        E.UNKNOWN_TOPIC_OR_PARTITION


def test_before_kip_320_a_follower_answers_not_leader():
    """2.0: no CurrentLeaderEpoch in Fetch; a follower answers NOT_LEADER_FOR_PARTITION."""
    c = _cluster("2.0")
    assert _fetch(c, 2, 3, 0).error == E.NOT_LEADER_FOR_PARTITION


# ------------------------------------------------------------------ unrecognized follower

@pytest.mark.parametrize(("with_epoch", "expected"), [
    (True, E.UNKNOWN_LEADER_EPOCH),
    (False, E.NOT_LEADER_OR_FOLLOWER),
])
def test_fetch_from_unrecognized_follower(with_epoch, expected):
    """PartitionTest.testFetchFromUnrecognizedFollower (KAFKA-13837, 3.3+): a fetch from a
    broker outside the replica set is refused and records nothing about it."""
    c = _cluster(brokers=4)
    c.producer(acks="all").send("t", "x", partition=0)
    c.run(500)
    part = c.brokers[1].replica_manager.partitions[TP]
    pd = _fetch(c, 1, 4, 0, current_leader_epoch=part.leader_epoch if with_epoch else -1,
                update=True)
    assert pd.error == expected and len(pd.records.ids) == 0
    assert 4 not in part.remote


def test_fetch_from_unrecognized_follower_before_3_3_returns_no_records():
    """Before KAFKA-13837 (3.2): ReplicaManager.updateFollowerFetchState could not record the
    position and answered withEmptyFetchInfo: no error, no records, the leader's offsets."""
    c = _cluster("3.2", brokers=4)
    c.producer(acks="all").send("t", "x", partition=0)
    c.run(500)
    part = c.brokers[1].replica_manager.partitions[TP]
    pd = _fetch(c, 1, 4, 0, current_leader_epoch=part.leader_epoch, update=True)
    assert pd.error == E.NONE and len(pd.records.ids) == 0
    assert pd.high_watermark == part.log.high_watermark == 1
    assert 4 not in part.remote
    # an assigned follower gets the record
    assert len(_fetch(c, 1, 2, 0, current_leader_epoch=part.leader_epoch).records.ids) == 1


# ------------------------------------------------------------------ last fetched epoch

def _leader_with_epochs(version: str):
    """PartitionTest.testLastFetchedOffsetValidation's log: epochs 0@0, 3@2, 4@8, 7@13, 9@14,
    LEO 17, led at epoch 10."""
    c = _cluster(version)
    b = c.brokers[1]
    log = Log("t", 0)
    for epoch, count in ((0, 2), (3, 3), (3, 3), (4, 5), (7, 1), (9, 3)):
        log.append_as_leader(tuple(range(count)), (10,) * count, epoch, 0)
    assert log.log_end_offset == 17
    part = Partition("t", 0, 1, log)
    b.logs[TP] = log
    b.replica_manager.partitions[TP] = part
    part.make_leader(b, 10, (1, 2, 3), (1, 2, 3), 5, b.metadata.controller_epoch)
    return c, log


def _read(c, last_fetched_epoch: int, fetch_offset: int):
    pd = _fetch(c, 1, 2, fetch_offset, current_leader_epoch=10,
                last_fetched_epoch=last_fetched_epoch)
    if pd.error != E.NONE:
        return pd.error
    return pd.diverging_epoch


@pytest.mark.parametrize("version", ["3.7", "3.0"])
def test_last_fetched_offset_validation(version):
    """PartitionTest.testLastFetchedOffsetValidation (3.0+): divergence, an epoch larger than any
    known -> OFFSET_OUT_OF_RANGE, and (KAFKA-12996) a fetch offset below the log start offset is
    OFFSET_OUT_OF_RANGE whether or not the epochs diverge."""
    c, log = _leader_with_epochs(version)
    oor = E.OFFSET_OUT_OF_RANGE
    assert _read(c, 2, 5) == (0, 2)
    assert _read(c, 0, 4) == (0, 2)
    assert _read(c, 6, 6) == (4, 13)
    assert _read(c, 5, 9) == (4, 13)
    assert _read(c, 10, 18) == (10, 17)
    for epoch, offset in ((0, 2), (7, 14), (9, 17), (10, 17)):
        assert _read(c, epoch, offset) is None
    assert _read(c, 11, 5) == oor   # epochs larger than we know about
    # move the log start offset to the middle of epoch 3
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(5)
    assert _read(c, 2, 8) == (2, 5)
    assert _read(c, 0, 5) is None
    assert _read(c, 3, 5) is None
    assert _read(c, 0, 0) == oor
    log.maybe_increment_log_start_offset(10)
    assert _read(c, 5, 6) == oor   # diverging
    assert _read(c, 3, 6) == oor   # not diverging


def test_before_kafka_12996_divergence_was_reported_below_the_log_start():
    """2.8: Partition.readRecords checked divergence before the log start offset, so a
    diverging fetch below the log start got DivergingEpoch; an unknown epoch was already
    OFFSET_OUT_OF_RANGE (KAFKA-10554's 'Could not determine the end offset')."""
    c, log = _leader_with_epochs("2.8")
    assert _read(c, 11, 5) == E.OFFSET_OUT_OF_RANGE
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(10)
    assert _read(c, 5, 6) == (4, 13)
    assert _read(c, 3, 6) == E.OFFSET_OUT_OF_RANGE
