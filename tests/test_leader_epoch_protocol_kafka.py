"""The leader-epoch replication protocol (KIP-101, KIP-279) end to end, following Kafka's
core/src/test/scala/unit/kafka/server/epoch/EpochDrivenReplicationProtocolAcceptanceTest.scala
(tag 3.7.0; gone from trunk with ZooKeeper) with its
EpochDrivenReplicationProtocolAcceptanceWithIbp26Test, server/epoch/OffsetsForLeaderEpochTest.scala
(tag 3.7.0, unchanged on trunk), server/epoch/LeaderEpochIntegrationTest.scala (tag 3.7.0, and
trunk's zk / kraft parametrization) and server/OffsetsForLeaderEpochRequestTest.scala (tag 3.7.0).
Where an older release behaves differently the test runs there too, with the answer of that
release's source or test (tags 0.11.0.0, 2.0.0): 0.10.2 has no leader epochs (KIP-101, 0.11),
0.11 - 1.1 answer OffsetsForLeaderEpoch with an end offset only (KIP-279, 2.0), 2.0 and before
assign a new leader's epoch at its first append (KAFKA-7415, 2.0.1) and answer a broker that does
not host the partition with UNKNOWN_TOPIC_OR_PARTITION (KAFKA-7347, 2.1).

Adaptation to kafkasim. The acceptance and integration tests run a whole ``Cluster`` (ZooKeeper
mode unless the test names KRaft). ``KafkaServer.shutdown`` is ``Cluster.shutdown`` (controlled)
run until the broker stopped, ``startup`` is ``Cluster.start``; ``bounce`` waits
``BOUNCE_MS`` in between, as a real broker takes that long to come back: the controller sees the
broker go before it returns (an instant restart is a bounce a pre-2.2 controller misses, KIP-380).
``producer.send(...).get`` is a send and ``Producer.flush``; Kafka's ``TestUtils.createProducer``
settings (retries, delivery and request timeouts, no idempotence) are set as it sets them.
``deleteMessagesFromLogFile`` on a stopped broker is ``Log.lose_unsynced`` plus deleting its
``.kafka_cleanshutdown``: the next start recovers the log as after a crash. "Log files should
match" and ``crcSeq`` compare every record (offset, epoch, value), which is stronger than the file
lengths and batch checksums Kafka compares. ``TestFetcherThread.leaderOffsetsFor`` is an
OffsetsForLeaderEpochRequest (``forFollower``: replica id 1) handed to the broker's KafkaApis
handler; its answer is what the broker sends back. OffsetsForLeaderEpochTest's mocked log and
partition are a ``FakeContext`` broker 0 whose ReplicaManager hosts a real ``Partition``;
``ReplicaManager.last_offset_for_leader_epoch`` takes kafkasim's flat request entries (topic,
partition, current leader epoch, leader epoch) and answers ``EpochEndOffset`` records.

Left out: offsetsShouldNotGoBackwards's mechanism, a follower's fetch landing in the middle of a
compressed message set (kafkasim has no compression, and outside idempotent batches it reads
record by record), so its pre-KIP-101 failure (offsets going backwards) cannot show; the test's
outcome (monotonic offsets, identical logs) is ported. DumpLogSegments and log lines (printSegments,
log) only print.
"""

from __future__ import annotations

from array import array

import pytest

from kafkasim.core import errors as E
from kafkasim.core.fake import FakeContext
from kafkasim.core.leader_epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, OffsetAndEpoch
from kafkasim.core.log import RecordChunk
from kafkasim.core.messages import (
    EpochEndOffset,
    OffsetForLeaderPartition,
    OffsetsForLeaderEpochRequest,
)
from kafkasim.core.replica_manager import ReplicaManager
from kafkasim.runtime import kafka_apis
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.versions import version_at_least

NO_PARTITION_LEADER_EPOCH = -1   # RecordBatch.NO_PARTITION_LEADER_EPOCH
CONSUMER_REPLICA_ID = -1         # OffsetsForLeaderEpochRequest.CONSUMER_REPLICA_ID
BOUNCE_MS = 100
MSG = "m"


# ============================================================== OffsetsForLeaderEpochTest

def _replica_manager(version: str = "3.7") -> FakeContext:
    """Broker 0 with a ReplicaManager (Kafka's test: one broker, a mocked LogManager and an
    empty ZooKeeper metadata cache)."""
    ctx = FakeContext(0, kafka_version=version, live_brokers=(0,))
    ctx.replica_manager = ReplicaManager()
    ctx.replica_manager.partitions = ctx.partitions
    return ctx


def _request(tp, current_leader_epoch: int, leader_epoch: int) -> list:
    return [OffsetForLeaderPartition(tp[0], tp[1], current_leader_epoch, leader_epoch)]


def test_should_get_epochs_from_replica():
    """OffsetsForLeaderEpochTest.shouldGetEpochsFromReplica: the leader answers its log's end
    offset for the epoch (UnifiedLog.endOffsetForEpoch: epoch 5 ends at 42)."""
    ctx = _replica_manager()
    tp = ("topic", 1)
    partition = ctx.partition(*tp)
    partition.make_leader(ctx, 5, (0,), (0,), 0, 0)
    partition.log.append_as_leader(list(range(42)), [1] * 42, 5, 0)
    assert partition.log.end_offset_for_epoch(5) == OffsetAndEpoch(42, 5)
    response = ctx.replica_manager.last_offset_for_leader_epoch(
        ctx, _request(tp, NO_PARTITION_LEADER_EPOCH, 5))
    assert response == [EpochEndOffset("topic", 1, E.NONE, 5, 42)]


@pytest.mark.parametrize(("version", "error"), [
    ("3.7", E.NOT_LEADER_OR_FOLLOWER),
    ("2.0", E.NOT_LEADER_FOR_PARTITION),   # the test at tag 2.0.0
])
def test_should_return_no_leader_for_partition_if_thrown(version, error):
    """OffsetsForLeaderEpochTest.shouldReturnNoLeaderForPartitionIfThrown: a hosted partition
    this broker does not lead (Partition.getLocalLog, requireLeader)."""
    ctx = _replica_manager(version)
    tp = ("topic", 1)
    ctx.partition(*tp)
    response = ctx.replica_manager.last_offset_for_leader_epoch(
        ctx, _request(tp, NO_PARTITION_LEADER_EPOCH, 5))
    assert response == [EpochEndOffset("topic", 1, error, UNDEFINED_EPOCH,
                                       UNDEFINED_EPOCH_OFFSET)]


def test_should_return_unknown_topic_or_partition_if_thrown():
    """OffsetsForLeaderEpochTest.shouldReturnUnknownTopicOrPartitionIfThrown: no partition
    and nothing in the metadata cache."""
    ctx = _replica_manager()
    response = ctx.replica_manager.last_offset_for_leader_epoch(
        ctx, _request(("topic", 1), NO_PARTITION_LEADER_EPOCH, 5))
    assert response == [EpochEndOffset("topic", 1, E.UNKNOWN_TOPIC_OR_PARTITION,
                                       UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)]


def test_last_offset_for_leader_epoch_on_a_follower_without_the_leader_requirement():
    """Partition.lastOffsetForLeaderEpoch(fetchOnlyFromLeader = false): a follower answers from
    its own log; with it (what ReplicaManager passes) NOT_LEADER_OR_FOLLOWER."""
    ctx = _replica_manager()
    partition = ctx.partition("topic", 1)
    partition.make_follower(ctx, 1, 3, (0, 1), (0, 1), 0, 0)
    partition.log.append_as_follower(
        _chunk(partition.log, epochs=[3, 3]))
    assert partition.last_offset_for_leader_epoch(ctx, None, 3, False) == \
        EpochEndOffset("topic", 1, E.NONE, 3, 2)
    assert partition.last_offset_for_leader_epoch(ctx, None, 3, True).error == \
        E.NOT_LEADER_OR_FOLLOWER
    assert partition.last_offset_for_leader_epoch(ctx, 2, 3, False).error == \
        E.FENCED_LEADER_EPOCH


def _chunk(log, epochs):
    """Records fetched from a leader, starting at ``log``'s end."""
    n = len(epochs)
    return RecordChunk(log.log_end_offset, array("i", epochs), array("i", range(n)),
                       array("q", [0] * n), array("i", [1] * n), ())


# ====================================================== OffsetsForLeaderEpochRequestTest

def _leader_offsets_for(c: Cluster, to: int, epochs: dict, *, current_leader_epoch: int = -1,
                        replica_id: int = 1) -> dict:
    """TestFetcherThread.leaderOffsetsFor: OffsetsForLeaderEpochRequest (forFollower with
    replica id 1, or a consumer's with -1) to broker ``to``; (topic, partition) -> its answer."""
    broker = c.brokers[to]
    sent = []
    broker.send = lambda dst, msg: sent.append(msg)
    try:
        kafka_apis.HANDLERS[OffsetsForLeaderEpochRequest](broker, "test-fetcher", (
            OffsetsForLeaderEpochRequest(42, replica_id, tuple(
                (t, p, current_leader_epoch, e) for (t, p), e in epochs.items()))))
    finally:
        del broker.send
    (response,) = sent
    return {(p[0], p[1]): EpochEndOffset(*p) for p in response.partitions}


def _three_brokers(version: str = "3.7") -> Cluster:
    """BaseRequestTest: three brokers (0, 1, 2)."""
    return Cluster([0, 1, 2], seed=1, kafka_version=version)


@pytest.mark.parametrize(("version", "non_replica"), [
    ("3.7", E.NOT_LEADER_OR_FOLLOWER),
    # ReplicaManager.lastOffsetForLeaderEpoch before KAFKA-7347 (2.1): a partition not hosted
    # here is unknown, whatever the metadata cache says
    ("2.0", E.UNKNOWN_TOPIC_OR_PARTITION),
])
def test_offsets_for_leader_epoch_error_codes(version, non_replica):
    """OffsetsForLeaderEpochRequestTest.testOffsetsForLeaderEpochErrorCodes: an unknown topic,
    a follower, a broker outside the replica set."""
    c = _three_brokers(version)
    tp = ("topic", 0)
    assert _leader_offsets_for(c, 0, {tp: 0})[tp].error == E.UNKNOWN_TOPIC_OR_PARTITION
    c.create_topic("topic", 1, 2)
    c.run(1000)
    replicas = c.assignment("topic")[0]
    leader = c.leader("topic")
    follower = next(b for b in replicas if b != leader)
    other = next(b for b in c.brokers if b not in replicas)
    not_leader = E.NOT_LEADER_OR_FOLLOWER if c.rules.tools.error_not_leader_or_follower \
        else E.NOT_LEADER_FOR_PARTITION
    assert _leader_offsets_for(c, follower, {tp: 0})[tp].error == not_leader
    assert _leader_offsets_for(c, other, {tp: 0})[tp].error == non_replica


@pytest.mark.parametrize("replica_id", [1, CONSUMER_REPLICA_ID])
def test_current_epoch_validation(replica_id):
    """OffsetsForLeaderEpochRequestTest.testCurrentEpochValidation (KIP-320): the current leader
    epoch is checked before the leader requirement, on the leader and on a follower; a
    consumer's request (KIP-320's validation) is answered as a follower's."""
    c = _three_brokers()
    tp = ("topic", 0)
    c.create_topic("topic", 1, 3)
    c.run(1000)
    first = c.leader("topic")
    c.crash(first)

    def local_leader(cl):   # TestUtils.awaitLeaderChange: a broker leading it locally
        return next((b for b, broker in cl.brokers.items() if b != first and broker.is_running
                     and (p := broker.replica_manager.partitions.get(tp)) and p.is_leader), None)

    assert c.run_until(lambda cl: local_leader(cl) is not None, 30000)
    second = local_leader(c)
    epoch = c.brokers[second].replica_manager.partitions[tp].leader_epoch   # findLeaderEpoch
    follower = next(b for b in c.assignment("topic")[0] if b not in (first, second))
    assert c.run_until(lambda cl: cl.brokers[follower].replica_manager.partitions[tp]
                       .leader_epoch == epoch, 30000)

    def error(broker, current):
        return _leader_offsets_for(c, broker, {tp: 0}, current_leader_epoch=current,
                                   replica_id=replica_id)[tp].error

    assert error(second, -1) == E.NONE
    assert error(second, epoch) == E.NONE
    assert error(second, epoch - 1) == E.FENCED_LEADER_EPOCH
    assert error(second, epoch + 1) == E.UNKNOWN_LEADER_EPOCH
    assert error(follower, -1) == E.NOT_LEADER_OR_FOLLOWER
    assert error(follower, epoch) == E.NOT_LEADER_OR_FOLLOWER
    assert error(follower, epoch + 1) == E.UNKNOWN_LEADER_EPOCH
    assert error(follower, epoch - 1) == E.FENCED_LEADER_EPOCH


# ============================================================ LeaderEpochIntegrationTest

def _started(c: Cluster) -> Cluster:
    if c.kraft is not None:
        assert c.run_until(lambda cl: cl.controller_id() >= 0 and not any(
            b.lifecycle.is_fenced for b in cl.brokers.values()), 30000), "KRaft did not start"
    return c


def _stop(c: Cluster, broker: int) -> None:
    """KafkaServer.shutdown: controlled shutdown, until the process is gone."""
    c.shutdown(broker)
    assert c.run_until(lambda cl: cl.brokers[broker].state == "stopped", 300_000)


def _bounce(c: Cluster, broker: int) -> None:
    _stop(c, broker)
    c.run(BOUNCE_MS)
    c.start(broker)


def _producer(c: Cluster, acks: str = "all", **config):
    """TestUtils.createProducer: retries Int.MaxValue (delivery.timeout.ms 30 s since KIP-91,
    2.1), request.timeout.ms 20 s, no idempotence."""
    config = {"acks": acks, "retries": 2**31 - 1, "request.timeout.ms": 20_000, **config}
    if version_at_least(c.kafka_version, "2.1"):
        config.setdefault("delivery.timeout.ms", 30_000)
    if version_at_least(c.kafka_version, "0.11.0"):
        config["enable.idempotence"] = False
    return c.producer(**config)


QUORUMS = [("3.7", "zookeeper"), ("3.7", "kraft")]


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_should_add_current_leader_epoch_to_messages_as_they_are_written_to_leader(
        version, quorum):
    """LeaderEpochIntegrationTest.shouldAddCurrentLeaderEpochToMessagesAsTheyAreWrittenToLeader:
    records carry the epoch they were written in, on every replica; bouncing the leader moves
    both partitions to epoch 1."""
    c = _started(Cluster([0, 1], seed=1, kafka_version=version, metadata_mode=quorum))
    topics = ("foo", "bar")
    for topic in topics:
        c.create_topic(topic, 1, 2, assignment=[[0, 1]])

    def send_four_messages_to_each_topic():
        p = _producer(c)
        for i in range(4):
            p.send("foo", f"test{i + 1}", key=f"test{i + 1}")
            p.send("bar", f"test{i + 5}", key=f"test{i + 5}")
        assert p.flush()

    def messages_have_leader_epoch(epoch: int, min_offset: int) -> bool:
        return all(c.log(0, t).log_end_offset > 0 and all(
            e == epoch for b in (0, 1) for o, e, _v in c.log_records(b, t) if o >= min_offset)
            for t in topics)

    send_four_messages_to_each_topic()
    assert c.run_until(lambda cl: messages_have_leader_epoch(0, 0), 30000)
    _bounce(c, 0)
    assert c.run_until(lambda cl: all(
        (st := cl.brokers[0].metadata.partitions.get((t, 0))) is not None
        and st.leader_epoch == 1 for t in topics), 30000)
    send_four_messages_to_each_topic()
    assert c.run_until(lambda cl: messages_have_leader_epoch(1, 4) and all(
        cl.log(b, t).log_end_offset == 8 for b in (0, 1) for t in topics), 30000)


@pytest.mark.parametrize(("version", "quorum", "non_replica"), [
    *((v, q, E.NOT_LEADER_OR_FOLLOWER) for v, q in QUORUMS),
    ("2.0", "zookeeper", E.UNKNOWN_TOPIC_OR_PARTITION),   # the test at tag 2.0.0 (KAFKA-7347)
])
def test_should_send_leader_epoch_request_and_get_a_response(version, quorum, non_replica):
    """LeaderEpochIntegrationTest.shouldSendLeaderEpochRequestAndGetAResponse: each broker
    answers the end offsets of the partitions it leads; a partition of another broker is
    NOT_LEADER_OR_FOLLOWER, one that does not exist (bar-2) UNKNOWN_TOPIC_OR_PARTITION
    (ReplicaManager.lastOffsetForLeaderEpoch: metadataCache.contains(tp))."""
    c = _started(Cluster([100, 101, 102], seed=1, kafka_version=version, metadata_mode=quorum))
    c.create_topic("foo", 2, 1, assignment=[[100], [101]])
    c.create_topic("bar", 1, 1, assignment=[[100]])
    p = _producer(c)
    for _ in range(10):
        p.send("foo", "IHeartLogs", partition=0)
    for _ in range(20):
        p.send("foo", "OhAreThey", partition=1)
    for _ in range(30):
        p.send("bar", "IReallyDo", partition=0)
    assert p.flush()
    t1p0, t1p1, t2p0, t2p2 = ("foo", 0), ("foo", 1), ("bar", 0), ("bar", 2)
    requested = {t1p0: 0, t1p1: 0, t2p0: 0, t2p2: 0}

    answers = _leader_offsets_for(c, 100, requested)
    assert answers[t1p0].end_offset == 10
    assert answers[t2p0].end_offset == 30
    assert answers[t1p1].error == non_replica
    assert answers[t1p1].end_offset == UNDEFINED_EPOCH_OFFSET
    assert answers[t2p2].error == E.UNKNOWN_TOPIC_OR_PARTITION
    assert _leader_offsets_for(c, 101, requested)[t1p1].end_offset == 20


@pytest.mark.parametrize(("version", "quorum"), [
    *QUORUMS,
    ("2.0", "zookeeper"),
    ("0.11.0", "zookeeper"),   # the test at tag 0.11.0.0: end offsets only (before KIP-279)
])
def test_should_increase_leader_epoch_between_leader_restarts(version, quorum):
    """LeaderEpochIntegrationTest.shouldIncreaseLeaderEpochBetweenLeaderRestarts and
    shouldSupportRequestsForEpochsNotOnTheLeader: a lone replica's bounce moves its epoch by two
    (leader -1, then the replica again); each epoch ends where the next one starts, an epoch
    not in the cache answers the epoch below it, one above the latest is undefined."""
    c = _started(Cluster([100, 101], seed=1, kafka_version=version, metadata_mode=quorum))
    if c.kraft is None:
        assert c.controller_id() == 100
    tp = ("foo", 0)
    c.create_topic("foo", 1, 1, assignment=[[101]])
    p = _producer(c)
    with_epoch = c.rules.fetch.offsets_for_leader_epoch_returns_epoch

    def leo():
        return c.log(101, "foo").log_end_offset

    def ask(epoch: int) -> EpochEndOffset:
        return _leader_offsets_for(c, 101, {tp: epoch})[tp]

    def epoch_end(epoch: int, expected_epoch: int, expected_end: int) -> None:
        answer = ask(epoch)
        assert answer.error == E.NONE
        assert answer.end_offset == expected_end
        assert answer.leader_epoch == (expected_epoch if with_epoch else UNDEFINED_EPOCH)

    p.send("foo", "IHeartLogs", partition=0)
    assert p.flush()
    epoch_end(0, 0, 1)
    assert leo() == 1

    _bounce(c, 101)
    p.send("foo", "IHeartLogs", partition=0)
    assert p.flush()
    epoch_end(0, 0, 1)
    epoch_end(1, 0, 1)     # no data written in epoch 1
    epoch_end(2, 2, 2)
    assert leo() == 2

    _bounce(c, 101)
    p.send("foo", "IHeartLogs", partition=0)
    assert p.flush()
    assert ask(0).end_offset == 1
    assert ask(2).end_offset == 2
    assert ask(4).end_offset == 3 == leo()
    # shouldSupportRequestsForEpochsNotOnTheLeader
    assert ask(1).end_offset == 1
    assert ask(3).end_offset == 2
    assert ask(5).end_offset == -1


# ============================================ EpochDrivenReplicationProtocolAcceptanceTest

TOPIC = "topic1"
TP = (TOPIC, 0)
#: the versions whose replication the acceptance test checks: latestTesting, the IBP 2.6
#: variant (truncation by OffsetsForLeaderEpoch, not by diverging epochs in Fetch, KIP-595)
SAFE = ["3.7", "2.6"]


def _two_brokers(version: str, **config) -> Cluster:
    c = Cluster([100, 101], seed=1, kafka_version=version, config=config or None)
    return c


def _records(c: Cluster, broker: int) -> list[tuple]:
    return c.log_records(broker, TOPIC, 0)


def _wait_for_logs_to_match(c: Cluster) -> None:
    assert c.run_until(lambda cl: cl.log(100, TOPIC).log_end_offset ==
                       cl.log(101, TOPIC).log_end_offset, 60_000), "Logs didn't match."
    c.run(1000)


def _leader(c: Cluster) -> int:
    return c.leader(TOPIC)


def _follower(c: Cluster) -> int:
    return next(b for b in c.brokers if b != _leader(c))


def _epoch_cache(c: Cluster, broker: int) -> list[tuple[int, int]]:
    return [tuple(e) for e in c.log(broker, TOPIC).leader_epoch_cache.epoch_entries()]


def _latest_record_epoch(c: Cluster, broker: int) -> int:
    log = c.log(broker, TOPIC)
    return log.epoch_at(log.log_end_offset - 1)


def _await_isr(c: Cluster) -> None:
    def both_in_sync(cl) -> bool:
        part = cl.brokers[_leader(cl)].replica_manager.partitions.get(TP) \
            if _leader(cl) >= 0 else None
        return part is not None and part.is_leader and len(part.in_sync_replica_ids()) == 2
    assert c.run_until(both_in_sync, 60_000), "Timed out waiting for replicas to join ISR"


def _send(p, value: str = MSG):
    result = p.send(TOPIC, value, partition=0)
    assert p.flush()
    return result


def _delete_messages_from_log_file(c: Cluster, broker: int, keep: int) -> None:
    """The log file cut after ``keep`` records while the broker is down, and its clean
    shutdown file deleted (a crash): the next start recovers the log."""
    lm = c.brokers[broker].log_manager
    lm.clean_shutdown_file = False
    lm.logs[TP].lose_unsynced(keep)


@pytest.mark.parametrize(("version", "epoch_at_become_leader"), [
    *((v, True) for v in SAFE),
    ("2.0", False),      # the test at tag 0.11.0.0: the epoch enters the cache at the first
    ("0.11.0", False),   # append (KAFKA-7415, 2.0.1)
])
def test_should_follow_leader_epoch_basic_workflow(version, epoch_at_become_leader):
    """EpochDrivenReplicationProtocolAcceptanceTest.shouldFollowLeaderEpochBasicWorkflow: each
    record carries its leader's epoch and both replicas' caches follow; the leader records a new
    epoch when it becomes leader, the follower when it replicates the first record of it."""
    c = _two_brokers(version)
    c.create_topic(TOPIC, 1, 2, assignment=[[100, 101]])
    p = _producer(c)
    _send(p)
    assert _latest_record_epoch(c, _leader(c)) == 0
    assert _latest_record_epoch(c, _follower(c)) == 0
    assert _epoch_cache(c, _leader(c)) == [(0, 0)]
    assert _epoch_cache(c, _follower(c)) == [(0, 0)]

    _bounce(c, _follower(c))
    _await_isr(c)
    assert _epoch_cache(c, _leader(c)) == ([(0, 0), (1, 1)] if epoch_at_become_leader
                                           else [(0, 0)])
    assert _epoch_cache(c, _follower(c)) == [(0, 0)]
    _send(p)
    assert _epoch_cache(c, _leader(c)) == [(0, 0), (1, 1)]
    assert _epoch_cache(c, _follower(c)) == [(0, 0), (1, 1)]
    assert _latest_record_epoch(c, _leader(c)) == 1
    assert _latest_record_epoch(c, _follower(c)) == 1

    _bounce(c, _leader(c))   # epoch -> 2
    _await_isr(c)
    assert _epoch_cache(c, _leader(c)) == ([(0, 0), (1, 1), (2, 2)] if epoch_at_become_leader
                                           else [(0, 0), (1, 1)])
    assert _epoch_cache(c, _follower(c)) == [(0, 0), (1, 1)]
    _send(p)
    assert _latest_record_epoch(c, _leader(c)) == 2
    assert _latest_record_epoch(c, _follower(c)) == 2
    assert _epoch_cache(c, _leader(c)) == [(0, 0), (1, 1), (2, 2)]
    assert _epoch_cache(c, _follower(c)) == [(0, 0), (1, 1), (2, 2)]


@pytest.mark.parametrize(("version", "diverges"), [
    *((v, False) for v in SAFE),
    ("0.11.0", False),
    ("0.10.2", True),   # before KIP-101 the follower truncates to its high watermark
])
def test_should_not_allow_divergent_logs(version, diverges):
    """EpochDrivenReplicationProtocolAcceptanceTest.shouldNotAllowDivergentLogs: the leader
    loses its last five records in a crash and takes new ones at those offsets; the follower,
    back later, truncates to where the leader's epoch 0 ended (KIP-101, scenario 2) and the logs
    match. Before 0.11 it truncated to its high watermark and kept records the leader no
    longer has."""
    c = _two_brokers(version)
    c.create_topic(TOPIC, 1, 2, assignment=[[100, 101]])
    p = _producer(c)
    for i in range(10):   # one batch each: the log can be cut between them
        p.send(TOPIC, f"{i}", key=f"{i}", partition=0)
        assert p.flush()
    _stop(c, 101)   # 101 first, so 100 stays the leader
    _stop(c, 100)
    _delete_messages_from_log_file(c, 100, 5)
    c.start(100)
    p = _producer(c)
    results = [p.send(TOPIC, f"{i}", key=f"{i}", partition=0) for i in range(11, 20)]
    assert p.flush() and [r.offset for r in results] == list(range(5, 14))
    c.start(101)
    _wait_for_logs_to_match(c)
    leader, follower = _records(c, 100), _records(c, 101)
    assert (leader != follower) is diverges, "Log files should match Broker0 vs Broker 1"
    if diverges:   # the same length, different records below both high watermarks
        assert [r[0] for r in leader] == [r[0] for r in follower]
        assert min(c.log(b, TOPIC).high_watermark for b in c.brokers) == 14


def test_offsets_should_not_go_backwards():
    """EpochDrivenReplicationProtocolAcceptanceTest.offsetsShouldNotGoBackwards: half the
    records are cut from broker 100's log while both are down; 100 comes back outside the ISR
    (the unclean election Kafka's test leaves disabled keeps the partition offline, so the two
    large batches time out); 101 returns as leader, 100 truncates to match it, and a consumer
    reading 101 sees strictly increasing offsets."""
    c = _two_brokers("3.7")
    c.create_topic(TOPIC, 1, 2, assignment=[[100, 101]])

    def buffering_producer():
        return _producer(c, **{"linger.ms": 10_000, "batch.size": 1000 * 1000})

    p = buffering_producer()
    for i in range(100):
        p.send(TOPIC, f"a{i}", partition=0)
        assert p.flush()
    _stop(c, 100)
    _stop(c, 101)
    _delete_messages_from_log_file(c, 100, 50)
    c.start(100)
    p = buffering_producer()
    for batch in ("b", "c"):
        for i in range(77):
            p.send(TOPIC, f"{batch}{i}", partition=0)
        assert p.flush()
    assert p.acked() == [] and len(p.failed()) == 154
    c.start(101)
    _wait_for_logs_to_match(c)
    _stop(c, 100)
    consumer = c.consumer()
    consumer.assign(TOPIC, [0])
    consumer.seek(TOPIC, 0, 0)
    records = []
    assert c.run_until(lambda cl: len(records.__iadd__(consumer.poll(100))) >= 100, 60_000)
    offsets = [r.offset for r in records]
    assert offsets == sorted(set(offsets)) and len(offsets) == 100
    assert _records(c, 100) == _records(c, 101), "Log files should match Broker0 vs Broker 1"


@pytest.mark.parametrize("version", [*SAFE, "0.11.0", "0.10.2"])
def test_should_survive_fast_leader_change(version):
    """EpochDrivenReplicationProtocolAcceptanceTest.shouldSurviveFastLeaderChange: five rounds
    of a write, a follower bounce and a leader bounce lose nothing (as Kafka notes, this one
    passed before leader epochs too)."""
    c = _two_brokers(version)
    c.create_topic(TOPIC, 1, 2, assignment=[[100, 101]])
    p = _producer(c)
    _send(p)
    written = 1
    for _ in range(5):
        leader, follower = _leader(c), _follower(c)
        _send(p)
        written += 1
        _bounce(c, follower)
        _await_isr(c)
        _bounce(c, leader)
        _await_isr(c)
        assert [c.log(b, TOPIC).log_end_offset for b in c.brokers] == [written, written]


@pytest.mark.parametrize(("version", "diverges"), [
    *((v, False) for v in SAFE),
    ("2.0", False),      # KIP-279: the leader names the epoch it found
    ("1.1", True),       # end offsets only: the follower keeps records of epochs it knows
    ("0.11.0", True),    # and the leader never had
])
def test_logs_should_not_diverge_on_unclean_leader_elections(version, diverges):
    """EpochDrivenReplicationProtocolAcceptanceTest.logsShouldNotDivergeOnUncleanLeaderElections:
    the two brokers take turns as the only live replica (unclean elections, acks=1), each
    writing records the other never sees; when both are back the logs match (KIP-279). Before
    2.0 the follower asked where its latest epoch ended, the leader answered with the start of
    a later epoch, and the follower kept its own records below it."""
    c = _two_brokers(version, **{"unclean.leader.election.enable": True})
    c.create_topic(TOPIC, 1, 2, assignment=[[100, 101]], config={"min.insync.replicas": 1})

    def write(values):
        p = _producer(c, acks="1")
        for v in values:
            _send(p, v)

    write(["m0"])
    _wait_for_logs_to_match(c)
    _stop(c, 100)
    write(["m1"])
    _stop(c, 101)
    c.start(100)
    write(["b0", "b1", "b2"])
    _stop(c, 100)
    c.start(101)
    write(["c0"])
    _stop(c, 101)
    c.start(100)
    write(["d0", "d1"])
    c.start(101)
    _wait_for_logs_to_match(c)
    leader, follower = _records(c, 100), _records(c, 101)
    assert [v for _o, _e, v in leader] == ["m0", "b0", "b1", "b2", "d0", "d1"]
    assert (leader != follower) is diverges, "Logs on Broker 100 and Broker 101 should match"
