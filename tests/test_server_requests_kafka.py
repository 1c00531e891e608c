"""A broker's request handling (KafkaApis, ReplicaManager, Partition) driven through a whole
``Cluster`` and its clients, following the replication cases of Kafka's request tests:
core/src/test/scala/unit/kafka/server/FetchRequestTest.scala, FetchRequestMaxBytesTest.scala,
ProduceRequestTest.scala, ListOffsetsRequestTest.scala,
integration/kafka/server/FetchFromFollowerIntegrationTest.scala and
unit/kafka/integration/MinIsrConfigTest.scala (tag 3.7.0 in ZooKeeper and KRaft mode, and trunk,
4.0, in KRaft mode; ListOffsetsRequestTest at 3.7.0 is ZooKeeper-only, trunk adds KRaft), with
the ListOffsets cases of cluster/PartitionTest.scala (tag 3.7.0:
testFetchOffsetForTimestampEpochValidationForLeader / ...ForFollower,
testFetchOffsetSnapshotEpochValidationForLeader / ...ForFollower,
testFetchLatestOffsetIncludesLeaderEpoch, testMonotonicOffsetsAfterLeaderChange,
testListOffsetIsolationLevels) and the client half of ListOffsets' epochs in
clients/.../consumer/internals/OffsetFetcherTest.java (tag 3.7.0:
testGetOffsetsIncludesLeaderEpoch, testGetOffsetsFencedLeaderEpoch,
testGetOffsetsUnknownLeaderEpoch). ReplicaManagerTest has no ListOffsets case but the tiered
storage ones, and its produce cases are in tests/test_replica_manager_kafka.py already
(testIllegalRequiredAcks, testReceiveOutOfOrderSequenceExceptionWithLogStartOffset, the
purgatory cases). Where an older release answers differently, the test runs there too, with the
answer of that release's source.

Adaptation to kafkasim. ``BaseRequestTest.connectAndReceive`` is ``RequestClient``: a client of
the cluster (in ``Cluster.clients``) that puts one request on the simulated network to a broker
and runs the cluster until the answer comes back; the broker handles it by its KafkaApis handler
(``kafkasim.runtime.kafka_apis.HANDLERS``). A request's version is the newest the cluster's Kafka
release speaks (one release per cluster): Kafka's V12 variants (the same answers without topic
ids) are not repeated, and ``testResponseDefaultOffsetAndLeaderEpochForAllVersions`` runs on the
releases that brought each ListOffsets version (v3 in 2.0, v4 in 2.1, v7 in 3.0, v8 in 3.5).
A FetchRequest's ``max_bytes`` is its MaxBytes; kafkasim's records carry their size in bytes (the
producer's are ``RECORD_SIZE`` each), with no batch header: Kafka's batch overhead and the
partial trailing batch of a size-limited read (FileRecords.slice) are left out, so the size
checks are on the records returned. ``killBroker`` is a controlled shutdown run until the broker
stopped. ``TestUtils.createBrokerConfigs(enableFetchFromFollower = true)`` is a rack per broker
(its id) and RackAwareReplicaSelector. A record's timestamp is the leader's clock at the append
(kafkasim's records carry no CreateTime of their own), so the test waits between the records
whose timestamps it compares. Without transactions the last stable offset is the high watermark
(read_committed reads and lists up to it).

Left out (not modelled): down-conversion and message formats (testDownConversionWithConnection
Failure, testDownConversionFromBatchedToUnbatchedRespectsOffset, the v0/v1 half of
testFetchRequestV4WithReadCommitted), compression (testZStdCompressedTopic,
testZStdCompressedRecords, testCorruptLz4ProduceRequest, testZSTDProduceRequest, GZIP in
testSimpleProduceRequest), record timestamp validation (testProduceWithInvalidTimestamp:
message.timestamp.* are not modelled), topic ids (testFetchWithPartitionsWithIdError), quotas
(the fetch quota's cap on MaxBytes), transactions beyond idempotence (the LSO below the HW of
testListOffsetIsolationLevels' open transaction), SASL and authorization, request versions as
such (testListOffsetsMaxTimeStampOldestVersion: a client builder's oldest version; the v0
OldStyleOffsets and the segment-granular lookup of releases before 0.10.1; LATEST_TIERED_TIMESTAMP
and trunk's UNSUPPORTED_VERSION for other negative timestamps, which kafkasim searches as 3.x does),
3.7.0's MAX_TIMESTAMP offset inside a multi-record batch (KAFKA-16310: kafkasim keeps no batch
boundaries outside idempotent batches), the group coordinator's rack-aware assignor
(testRackAwareRangeAssignor, @Disabled in Kafka), and metrics (InvalidMessageCrcRecordsPerSec).
"""

from __future__ import annotations

import pytest
from clusters import started_kraft

from kafkasim.core import errors as E
from kafkasim.core.fake import FakeContext
from kafkasim.core.messages import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    ProduceRequest,
    ProduceResponse,
)
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings import config as kconfig
from kafkasim.settings.versions import version_at_least

TOPIC = "topic"
TP = (TOPIC, 0)
INT_MAX = 2**31 - 1
CONSUMER_REPLICA_ID = -1    # FetchRequest / ListOffsetsRequest.CONSUMER_REPLICA_ID
DEBUGGING_REPLICA_ID = -2   # ListOffsetsRequest.DEBUGGING_REPLICA_ID
LATEST_TIMESTAMP = -1       # ListOffsetsRequest.LATEST_TIMESTAMP
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3
EARLIEST_LOCAL_TIMESTAMP = -4
NO_EPOCH = -1               # RecordBatch.NO_PARTITION_LEADER_EPOCH / ListOffsetsResponse
RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"

#: the runs of Kafka's tests: tag 3.7.0 in both modes, trunk (4.0) in KRaft
QUORUMS = [("3.7", "zookeeper"), ("3.7", "kraft"), ("4.0", "kraft")]


# ============================================================================ the harness

class RequestClient:
    """BaseRequestTest.connectAndReceive: a client of the cluster that sends a request to a
    broker's socket server and waits for the answer (by correlation id)."""

    def __init__(self, c: Cluster, name: str = "request-test") -> None:
        self.c = c
        self.client_id = name
        self.answers: dict[int, object] = {}
        self._corr = 1000
        c.clients[name] = self

    def on_message(self, src, msg) -> None:
        self.answers[msg.correlation_id] = msg

    def next_corr(self) -> int:
        self._corr += 1
        return self._corr

    def send(self, broker: int, msg) -> int:
        """Put ``msg`` on the wire to ``broker``; its correlation id."""
        self.c.transport.send(self.client_id, broker, msg)
        return msg.correlation_id

    def receive(self, corr: int, timeout_ms: int = 30_000):
        assert self.c.run_until(lambda _c: corr in self.answers, timeout_ms), \
            f"no answer to request {corr} within {timeout_ms} ms"
        return self.answers.pop(corr)

    def connect_and_receive(self, broker: int, msg, timeout_ms: int = 30_000):
        return self.receive(self.send(broker, msg), timeout_ms)

    # -- Fetch ------------------------------------------------------------------------------
    def fetch(self, broker: int, parts, *, max_wait_ms: int = 0, min_bytes: int = 1,
              max_bytes: int = INT_MAX, rack: str = "", isolation: str = "read_uncommitted",
              session: tuple[int, int] = (0, -1), replica_id: int = CONSUMER_REPLICA_ID,
              timeout_ms: int = 30_000) -> FetchResponse:
        """FetchRequest.Builder.forConsumer (sessionless unless ``session`` is (id, epoch))
        with FetchPartitions ``parts``."""
        req = FetchRequest(self.next_corr(), replica_id, max_wait_ms, min_bytes, max_bytes,
                           tuple(parts), isolation, rack, session_id=session[0],
                           session_epoch=session[1])
        return self.connect_and_receive(broker, req, timeout_ms)

    # -- Produce ----------------------------------------------------------------------------
    def produce(self, broker: int, tp, sizes, *, acks: int = -1, timeout_ms: int = 3000
                ) -> ProduceResponse:
        """A ProduceRequest of one batch of records of ``sizes`` bytes to ``tp``."""
        ids = tuple(self.c.records.new(f"{tp[0]}-{tp[1]}-{i}") for i in range(len(sizes)))
        req = ProduceRequest(self.next_corr(), self.client_id, acks, timeout_ms,
                             ((tp[0], tp[1], ids, tuple(sizes), -1, -1, -1),))
        return self.connect_and_receive(broker, req, timeout_ms + 1000)

    # -- ListOffsets ------------------------------------------------------------------------
    def list_offsets(self, broker: int, timestamp: int, *, current_leader_epoch: int = -1,
                     replica_id: int = CONSUMER_REPLICA_ID, tp=TP,
                     isolation: str = "read_uncommitted") -> tuple[str, int, int, int]:
        """One partition's ListOffsets answer: (error, offset, leader epoch, timestamp)."""
        req = ListOffsetsRequest(self.next_corr(), replica_id, ((tp[0], tp[1], timestamp),),
                                 isolation, current_leader_epochs=(current_leader_epoch,))
        resp = self.connect_and_receive(broker, req)
        assert isinstance(resp, ListOffsetsResponse)
        ((_t, _p, error, offset),) = resp.partitions
        return error, offset, resp.leader_epochs[0], resp.timestamps[0]


def fetch_partition(tp, offset: int = 0, *, max_bytes: int = 1024, current_epoch: int = -1,
                    last_fetched_epoch: int = -1) -> FetchPartition:
    """FetchRequest.PartitionData for a consumer (no log start offset)."""
    return FetchPartition(tp[0], tp[1], offset, current_epoch, last_fetched_epoch, -1, max_bytes)


def partition_data(resp: FetchResponse, tp):
    (pd,) = [pd for pd in resp.partitions if (pd.topic, pd.partition) == tp]
    return pd


def new_cluster(version: str, quorum: str, brokers=(0, 1, 2), **kw) -> Cluster:
    c = Cluster(list(brokers), seed=1, kafka_version=version, metadata_mode=quorum, **kw)
    if c.kraft is not None:
        started_kraft(c)
    return c


def create_topic(c: Cluster, topic: str = TOPIC, partitions: int = 1,
                 replication_factor: int = 1, **kw) -> dict[int, int]:
    """KafkaServerTestHarness.createTopic: the topic, once every partition has a leader that
    leads it locally; partition -> leader."""
    c.create_topic(topic, partitions, replication_factor, **kw)
    assert c.run_until(lambda cl: all(local_leader(cl, (topic, p)) is not None
                                      for p in range(partitions)), 30_000)
    return {p: local_leader(c, (topic, p)) for p in range(partitions)}


def local_leader(c: Cluster, tp) -> int | None:
    """A running broker that leads ``tp`` locally (TestUtils.waitUntilLeaderIsKnown)."""
    return next((b for b, broker in c.brokers.items() if broker.is_running and
                 (p := broker.replica_manager.partitions.get(tp)) is not None and p.is_leader),
                None)


def leader_epoch(c: Cluster, broker: int, tp=TP) -> int:
    """TestUtils.findLeaderEpoch."""
    return c.brokers[broker].replica_manager.partitions[tp].leader_epoch


def kill_broker(c: Cluster, broker: int, tp=TP) -> tuple[int, int]:
    """KafkaServerTestHarness.killBroker, then TestUtils.awaitLeaderChange: the new leader
    (leading locally) and its epoch."""
    c.shutdown(broker)
    assert c.run_until(lambda cl: cl.brokers[broker].state == "stopped", 60_000)
    assert c.run_until(lambda cl: local_leader(cl, tp) not in (None, broker), 30_000)
    new = local_leader(c, tp)
    return new, leader_epoch(c, new, tp)


def follower_with_epoch(c: Cluster, epoch: int, tp=TP) -> int:
    """TestUtils.findFollowerId: a running follower that knows leader epoch ``epoch``."""
    def find(cl):
        return next((b for b, broker in cl.brokers.items() if broker.is_running and
                     (p := broker.replica_manager.partitions.get(tp)) is not None
                     and not p.is_leader and p.leader_epoch == epoch), None)
    assert c.run_until(lambda cl: find(cl) is not None, 30_000)
    return find(c)


def producer(c: Cluster, **config):
    """TestUtils.createProducer: acks=-1, no idempotence."""
    return c.producer(acks="all", **{"enable.idempotence": False, **config})


def produce_data(c: Cluster, tps, per_partition: int) -> list:
    """BaseFetchRequestTest.produceData: ``per_partition`` records to each of ``tps``, each
    sent and awaited (producer.send(...).get)."""
    p = producer(c)
    results = []
    for tp in tps:
        for i in range(per_partition):
            results.append(p.send(tp[0], f"value {tp}-{i}", key=f"key {tp}-{i}",
                                  partition=tp[1]))
            assert p.flush()
    return results


# ========================================================================= FetchRequestTest

def create_topics(c: Cluster, num_topics: int, num_partitions: int) -> dict:
    """BaseFetchRequestTest.createTopics: topics ``topic0``.. of ``num_partitions``,
    replication factor 2 and min.insync.replicas 2; (topic, partition) -> leader."""
    out = {}
    for t in range(num_topics):
        leaders = create_topic(c, f"topic{t}", num_partitions, 2,
                               config={"min.insync.replicas": 2})
        out.update({(f"topic{t}", p): b for p, b in leaders.items()})
    return out


def _check_fetch_response(resp: FetchResponse, expected: list, max_partition_bytes: int,
                          max_response_bytes: int, per_partition: int) -> None:
    """FetchRequestTest.checkFetchResponse: the partitions in the request's order, each
    answered without error and below its limit, the non-empty ones first, the whole under the
    response limit. Kafka's buffer size (4 slices of 190 bytes = 800 - 800 % 190) shows here as
    the four partitions that got records: each took its partition limit from the response's."""
    assert [(pd.topic, pd.partition) for pd in resp.partitions] == expected
    sizes = []
    for pd in resp.partitions:
        assert pd.error == E.NONE
        assert pd.high_watermark > 0
        assert len(pd.records) < per_partition
        sizes.append(pd.records.size_bytes)
    non_empty = [s for s in sizes if s]
    assert sizes == non_empty + [0] * (len(sizes) - len(non_empty))   # empty ones last
    assert all(s <= max_partition_bytes for s in non_empty)
    assert len(non_empty) == max_response_bytes // max_partition_bytes
    assert sum(sizes) <= max_response_bytes


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_broker_respects_partitions_order_and_size_limits(version, quorum):
    """FetchRequestTest.testBrokerRespectsPartitionsOrderAndSizeLimits (KIP-74): a consumer
    fetch answers its partitions in the request's order, each up to its partition limit and all
    up to the response limit; the first record is returned whole even above both limits, and
    once a partition returned records the others get only what is left of the response limit."""
    c = new_cluster(version, quorum, config={"fetch.max.bytes": INT_MAX})
    client = RequestClient(c)
    per_partition, max_response_bytes, max_partition_bytes = 9, 800, 190
    leaders = create_topics(c, 5, 6)
    produce_data(c, sorted(leaders), per_partition)
    leader_id = 0
    mine = [tp for tp, b in sorted(leaders.items()) if b == leader_id]
    large1, large2 = mine[-2:]   # records over the partition limit, over the response limit
    for tp, size in ((large1, max_partition_bytes + 1), (large2, max_response_bytes + 1)):
        assert client.produce(leader_id, tp, [size]).partitions[0][2] == E.NONE
    others = [tp for tp in mine if tp not in (large1, large2)]

    def fetch(order, offsets=None):
        offsets = offsets or {}
        return client.fetch(leader_id, [fetch_partition(tp, offsets.get(tp, 0),
                                                        max_bytes=max_partition_bytes)
                                        for tp in order],
                            max_wait_ms=INT_MAX, min_bytes=0, max_bytes=max_response_bytes)

    # 1. and 2. the partitions with large records at the end, the others in two orders
    for order in (others + [large1, large2], others[::-1] + [large1, large2]):
        _check_fetch_response(fetch(order), order, max_partition_bytes, max_response_bytes,
                              per_partition)
    # 3. the record over the partition limit first: returned whole, under the response limit
    order3 = [large1, large2] + others
    resp = fetch(order3, {large1: per_partition})
    assert [(pd.topic, pd.partition) for pd in resp.partitions] == order3
    assert sum(pd.records.size_bytes for pd in resp.partitions) <= max_response_bytes
    pd = partition_data(resp, large1)
    assert pd.error == E.NONE and pd.high_watermark > 0
    assert max_partition_bytes < pd.records.size_bytes <= max_response_bytes
    # 4. the record over the response limit first: returned whole, and nothing else
    order4 = [large2, large1] + others
    resp = fetch(order4, {large2: per_partition})
    assert [(pd.topic, pd.partition) for pd in resp.partitions] == order4
    assert [(pd.topic, pd.partition) for pd in resp.partitions if len(pd.records)] == [large2]
    pd = partition_data(resp, large2)
    assert pd.error == E.NONE and pd.high_watermark > 0
    assert pd.records.size_bytes > max_response_bytes


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_fetch_request_v4_with_read_committed(version, quorum):
    """FetchRequestTest.testFetchRequestV4WithReadCommitted: a read_committed fetch reads up to
    the last stable offset (the HW, without transactions), a record over the partition limit
    whole."""
    c = new_cluster(version, quorum)
    client = RequestClient(c)
    max_partition_bytes = 200
    (tp, leader), = create_topics(c, 1, 1).items()
    assert client.produce(leader, tp, [max_partition_bytes + 1]).partitions[0][2] == E.NONE
    resp = client.fetch(leader, [fetch_partition(tp, max_bytes=max_partition_bytes)],
                        max_wait_ms=INT_MAX, min_bytes=0, isolation="read_committed")
    pd = partition_data(resp, tp)
    assert pd.error == E.NONE
    assert pd.high_watermark > 0          # the last stable offset
    assert pd.records.size_bytes > 0


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_fetch_request_to_non_replica(version, quorum):
    """FetchRequestTest.testFetchRequestToNonReplica: a broker that is not a replica of the
    partition answers NOT_LEADER_OR_FOLLOWER (ReplicaManager.getPartitionOrException: the
    metadata cache knows the partition)."""
    c = new_cluster(version, quorum)
    client = RequestClient(c)
    leader = create_topic(c)[0]
    non_replica = next(b for b in c.brokers if b != leader)
    resp = client.fetch(non_replica, [fetch_partition(TP)], max_wait_ms=INT_MAX, min_bytes=0)
    assert partition_data(resp, TP).error == E.NOT_LEADER_OR_FOLLOWER


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_last_fetched_epoch_validation(version, quorum):
    """FetchRequestTest.testLastFetchedEpochValidation (KIP-595 fetch fields): a consumer fetch
    with a LastFetchedEpoch the leader's log ended earlier answers the diverging epoch and its
    end offset, without records nor error (Partition.readRecords checks it for every fetch
    that carries one, not only a follower's)."""
    c = new_cluster(version, quorum)
    create_topic(c, replication_factor=3)
    first_leader = local_leader(c, TP)
    first_epoch = leader_epoch(c, first_leader)
    first_end = produce_data(c, [TP], 100)[-1].offset + 1
    second_leader, second_epoch = kill_broker(c, first_leader)
    second_end = produce_data(c, [TP], 100)[-1].offset + 1
    fetch_offset = second_end + (second_end - first_end) // 2
    resp = RequestClient(c).fetch(second_leader, [fetch_partition(
        TP, fetch_offset, current_epoch=second_epoch, last_fetched_epoch=first_epoch)])
    pd = partition_data(resp, TP)
    assert pd.error == E.NONE
    assert len(pd.records) == 0
    assert pd.diverging_epoch == (first_epoch, first_end)


def _current_epoch_cluster(version: str, quorum: str) -> tuple[Cluster, int, int]:
    """A topic of three replicas whose first leader was killed: (cluster, second leader,
    its epoch); the first epoch is 0, and -1 is no epoch at all."""
    c = new_cluster(version, quorum)
    create_topic(c, replication_factor=3)
    second, epoch = kill_broker(c, local_leader(c, TP))
    return c, second, epoch


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_current_epoch_validation(version, quorum):
    """FetchRequestTest.testCurrentEpochValidation (KIP-320): a consumer fetch's
    CurrentLeaderEpoch below the replica's is FENCED_LEADER_EPOCH, above it
    UNKNOWN_LEADER_EPOCH, on the leader and on a follower (a consumer may read a follower,
    KIP-392: Fetch v11+ always has ClientMetadata)."""
    c, leader, epoch = _current_epoch_cluster(version, quorum)
    client = RequestClient(c)

    def error(broker, current):
        resp = client.fetch(broker, [fetch_partition(TP, current_epoch=current)])
        return partition_data(resp, TP).error

    assert error(leader, -1) == E.NONE
    assert error(leader, epoch) == E.NONE
    assert error(leader, epoch - 1) == E.FENCED_LEADER_EPOCH
    assert error(leader, epoch + 1) == E.UNKNOWN_LEADER_EPOCH
    follower = follower_with_epoch(c, epoch)
    assert error(follower, -1) == E.NONE
    assert error(follower, epoch) == E.NONE
    assert error(follower, epoch + 1) == E.UNKNOWN_LEADER_EPOCH
    assert error(follower, epoch - 1) == E.FENCED_LEADER_EPOCH


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_epoch_validation_within_fetch_session(version, quorum):
    """FetchRequestTest.testEpochValidationWithinFetchSession (KIP-227, KIP-320): inside a
    consumer's incremental fetch session, the partitions it sends again are checked against
    the replica's leader epoch like a sessionless fetch's, on the leader and on a follower."""
    c, leader, epoch = _current_epoch_cluster(version, quorum)
    client = RequestClient(c)
    for broker in (leader, follower_with_epoch(c, epoch)):
        first = client.fetch(broker, [fetch_partition(TP, current_epoch=epoch)], session=(0, 0))
        session_id = first.session_id
        assert session_id > 0
        for session_epoch, current, expected in ((1, epoch - 1, E.FENCED_LEADER_EPOCH),
                                                 (2, epoch + 1, E.UNKNOWN_LEADER_EPOCH)):
            resp = client.fetch(broker, [fetch_partition(TP, current_epoch=current)],
                                session=(session_id, session_epoch))
            assert partition_data(resp, TP).error == expected


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_create_incremental_fetch_with_partitions_in_error_v12(version, quorum):
    """FetchRequestTest.testCreateIncrementalFetchWithPartitionsInErrorV12: a partition in
    error stays in every incremental answer until it has something new to say; once its topic
    exists it is answered without error once, then left out while nothing changes."""
    c = new_cluster(version, quorum)
    client = RequestClient(c)
    foo0, foo1, bar0 = ("foo", 0), ("foo", 1), ("bar", 0)
    c.create_topic("foo", 2, assignment=[[0, 1], [0, 2]])
    assert c.run_until(lambda cl: local_leader(cl, foo0) == 0 and local_leader(cl, foo1) == 0,
                       30_000)

    def fetch(parts, session):
        return client.fetch(0, [fetch_partition(tp, max_bytes=INT_MAX) for tp in parts],
                            max_wait_ms=INT_MAX, min_bytes=0, session=session)

    def errors(resp):
        return {(pd.topic, pd.partition): pd.error for pd in resp.partitions}

    resp1 = fetch([foo0, foo1, bar0], (0, 0))
    assert resp1.error == E.NONE and resp1.session_id > 0
    assert errors(resp1) == {foo0: E.NONE, foo1: E.NONE, bar0: E.UNKNOWN_TOPIC_OR_PARTITION}
    resp2 = fetch([], (resp1.session_id, 1))
    assert resp2.error == E.NONE and resp2.session_id == resp1.session_id
    assert errors(resp2) == {bar0: E.UNKNOWN_TOPIC_OR_PARTITION}
    c.create_topic("bar", 1, assignment=[[0, 1]])
    assert c.run_until(lambda cl: local_leader(cl, bar0) == 0, 30_000)
    resp3 = fetch([], (resp1.session_id, 2))
    assert resp3.error == E.NONE
    assert errors(resp3) == {bar0: E.NONE}
    resp4 = fetch([], (resp1.session_id, 3))
    assert resp4.error == E.NONE
    assert errors(resp4) == {}


# ================================================================= FetchRequestMaxBytesTest

@pytest.mark.parametrize(("version", "quorum", "expected"), [
    *((v, q, [[0, 1], [2], [3, 4]]) for v, q in QUORUMS),
    # before KIP-541 (2.5) the broker had no fetch.max.bytes: the request's MaxBytes alone
    # (Int.MaxValue here) bounds the answer
    ("2.4", "zookeeper", [[0, 1, 2, 3, 4], [2, 3, 4], [3, 4]]),
])
def test_consume_multiple_records(version, quorum, expected):
    """FetchRequestMaxBytesTest.testConsumeMultipleRecords (KIP-541): the broker's
    fetch.max.bytes (1024 here) caps a fetch's MaxBytes; a first record larger than it is
    returned whole (KIP-74), alone."""
    config = {"fetch.max.bytes": 1024} if version_at_least(version, "2.5") else {}
    c = new_cluster(version, quorum, brokers=(0,), config=config)
    client = RequestClient(c)
    create_topic(c, "testTopic", config={"min.insync.replicas": 1})
    tp = ("testTopic", 0)
    for size in (1, 500, 1040, 500, 50):   # one batch each
        assert client.produce(0, tp, [size]).partitions[0][2] == E.NONE
    for fetch_offset, offsets in zip((0, 2, 3), expected, strict=True):
        resp = client.fetch(0, [fetch_partition(tp, fetch_offset, max_bytes=INT_MAX)],
                            max_wait_ms=INT_MAX, min_bytes=0)
        records = partition_data(resp, tp).records
        assert list(range(records.base_offset, records.base_offset + len(records))) == offsets


# ======================================================== FetchFromFollowerIntegrationTest

FOLLOWER_TOPIC = "test-fetch-from-follower"
FOLLOWER_TP = (FOLLOWER_TOPIC, 0)
LEADER_ID, FOLLOWER_ID = 0, 1


def _fetch_from_follower_cluster(version: str, quorum: str) -> Cluster:
    """Two brokers created with enableFetchFromFollower (rack = broker id,
    RackAwareReplicaSelector); the topic on [0, 1], 0 leading."""
    c = new_cluster(version, quorum, brokers=(0, 1), racks={0: "0", 1: "1"},
                    config={"replica.selector.class": RACK_AWARE})
    c.create_topic(FOLLOWER_TOPIC, 1, assignment=[[LEADER_ID, FOLLOWER_ID]])
    assert c.run_until(lambda cl: local_leader(cl, FOLLOWER_TP) == LEADER_ID, 30_000)
    return c


def _preferred_replica(client: RequestClient) -> int:
    """FetchFromFollowerIntegrationTest.getPreferredReplica: the leader's answer to a consumer
    fetch from the follower's rack."""
    resp = client.fetch(LEADER_ID, [fetch_partition(FOLLOWER_TP, max_bytes=1000)],
                        max_wait_ms=500, min_bytes=1, max_bytes=1000, rack=str(FOLLOWER_ID))
    assert resp.error == E.NONE
    (pd,) = resp.partitions
    assert pd.error == E.NONE
    return pd.preferred_read_replica


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_follower_complete_delayed_fetches_on_replication(version, quorum):
    """FetchFromFollowerIntegrationTest.testFollowerCompleteDelayedFetchesOnReplication: a
    consumer fetch parked at a follower (MaxWaitMs 20 s) is answered as soon as the follower
    replicated a new record and moved its HW, well before the 15 s the test waits."""
    c = _fetch_from_follower_cluster(version, quorum)
    client = RequestClient(c)
    corr = client.send(FOLLOWER_ID, FetchRequest(
        client.next_corr(), CONSUMER_REPLICA_ID, 20_000, 1, 1000,
        (fetch_partition(FOLLOWER_TP, 0, max_bytes=1000),)))
    c.run(100)
    assert corr not in client.answers   # parked in the follower's purgatory
    produce_data(c, [FOLLOWER_TP], 1)
    resp = client.receive(corr, timeout_ms=15_000)
    assert resp.error == E.NONE
    (pd,) = resp.partitions
    assert pd.error == E.NONE
    assert len(pd.records) == 1


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_fetch_from_leader_while_preferred_read_replica_is_unavailable(version, quorum):
    """FetchFromFollowerIntegrationTest.testFetchFromLeaderWhilePreferredReadReplicaIsUnavailable:
    the leader names the follower in the consumer's rack, and stops naming it once its metadata
    cache no longer lists the follower's endpoint (the follower shut down)."""
    c = _fetch_from_follower_cluster(version, quorum)
    client = RequestClient(c)
    produce_data(c, [FOLLOWER_TP], 10)
    assert _preferred_replica(client) == FOLLOWER_ID
    c.shutdown(FOLLOWER_ID)
    assert c.run_until(lambda cl: not cl.brokers[LEADER_ID].metadata.has_alive_broker(
        FOLLOWER_ID), 30_000), "follower is still reachable"
    assert _preferred_replica(client) == -1


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_fetch_from_follower_with_roll(version, quorum):
    """FetchFromFollowerIntegrationTest.testFetchFromFollowerWithRoll: a consumer in the
    follower's rack keeps consuming while its preferred read replica goes away (back to the
    leader) and comes back."""
    c = _fetch_from_follower_cluster(version, quorum)
    client = RequestClient(c)
    consumer = c.consumer(group="test-group", auto_offset_reset="earliest",
                          client_rack=str(FOLLOWER_ID))
    consumer.assign(FOLLOWER_TOPIC, [0])
    assert c.run_until(lambda _c: _preferred_replica(client) == FOLLOWER_ID, 30_000), \
        "Preferred replica is not set"

    def poll_until_at_least_one_record():
        got = []
        assert c.run_until(lambda _c: got.extend(consumer.poll(100)) or len(got) >= 1, 30_000)

    produce_data(c, [FOLLOWER_TP], 1)
    poll_until_at_least_one_record()
    c.shutdown(FOLLOWER_ID)
    assert c.run_until(lambda cl: cl.brokers[FOLLOWER_ID].state == "stopped", 60_000)
    produce_data(c, [FOLLOWER_TP], 1)
    poll_until_at_least_one_record()
    c.start(FOLLOWER_ID)
    assert c.run_until(lambda _c: _preferred_replica(client) == FOLLOWER_ID, 60_000), \
        "Preferred replica is not set"
    produce_data(c, [FOLLOWER_TP], 1)
    poll_until_at_least_one_record()


# ======================================================================= ProduceRequestTest

@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_simple_produce_request(version, quorum):
    """ProduceRequestTest.testSimpleProduceRequest: an acks=-1 batch of one record is answered
    at offset 0 without error, the next batch (two records) at offset 1."""
    c = new_cluster(version, quorum)
    client = RequestClient(c)
    partition, leader = next((p, b) for p, b in create_topic(c, partitions=3,
                                                             replication_factor=2).items()
                             if b is not None)
    tp = (TOPIC, partition)
    for sizes, expected_offset in (([10], 0), ([12, 12], 1)):
        resp = client.produce(leader, tp, sizes)
        assert resp.partitions == ((TOPIC, partition, E.NONE, expected_offset),)


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_produce_to_non_replica(version, quorum):
    """ProduceRequestTest.testProduceToNonReplica: a broker that is not a replica answers
    NOT_LEADER_OR_FOLLOWER and appends nothing."""
    c = new_cluster(version, quorum)
    client = RequestClient(c)
    leader = create_topic(c)[0]
    non_replica = next(b for b in c.brokers if b != leader)
    resp = client.produce(non_replica, TP, [10])
    assert resp.partitions == ((TOPIC, 0, E.NOT_LEADER_OR_FOLLOWER, -1),)
    assert TP not in c.brokers[non_replica].logs


@pytest.mark.parametrize(("version", "error"), [("1.1", E.UNKNOWN_TOPIC_OR_PARTITION),
                                              ("2.0", E.NOT_LEADER_FOR_PARTITION)])
def test_non_replica_answers_by_version(version, error):
    """KAFKA-6796 (2.0.0): a broker that does not host a partition its metadata cache knows
    answers Produce and Fetch NOT_LEADER_FOR_PARTITION (the client refreshes its metadata);
    ReplicaManager.getPartitionAndLeaderReplicaIfLocal @1.1.0 answered
    UNKNOWN_TOPIC_OR_PARTITION."""
    c = new_cluster(version, "zookeeper")
    client = RequestClient(c)
    leader = create_topic(c)[0]
    non_replica = next(b for b in c.brokers if b != leader)
    c.run(100)   # the controller's UpdateMetadata reaches every broker
    assert c.brokers[non_replica].metadata.contains(TP)
    assert client.produce(non_replica, TP, [10]).partitions == ((TOPIC, 0, error, -1),)
    resp = client.fetch(non_replica, [fetch_partition(TP)], max_wait_ms=INT_MAX, min_bytes=0)
    assert partition_data(resp, TP).error == error


@pytest.mark.parametrize(("version", "consumer", "follower"), [
    ("2.3", E.NOT_LEADER_FOR_PARTITION, E.NOT_LEADER_FOR_PARTITION),
    ("2.4", E.REPLICA_NOT_AVAILABLE, E.NOT_LEADER_FOR_PARTITION),
    ("2.5", E.REPLICA_NOT_AVAILABLE, E.NOT_LEADER_FOR_PARTITION),
    ("2.6", E.NOT_LEADER_OR_FOLLOWER, E.NOT_LEADER_OR_FOLLOWER)])
def test_non_replica_fetch_by_whom_2_4_and_2_5(version, consumer, follower):
    """ReplicaManager.readFromLocalLog @2.4.0: getPartitionOrException(tp, expectLeader =
    fetchOnlyFromLeader), false for a consumer's Fetch v11+ (its client metadata lets a follower
    serve it), so a known partition not hosted here is REPLICA_NOT_AVAILABLE to a consumer and
    NOT_LEADER_FOR_PARTITION to a replica; KAFKA-10223 (2.6) answers NOT_LEADER_OR_FOLLOWER to
    both."""
    c = new_cluster(version, "zookeeper")
    client = RequestClient(c)
    leader = create_topic(c)[0]
    non_replica = next(b for b in c.brokers if b != leader)
    c.run(100)
    for replica_id, error in ((-1, consumer), (leader, follower)):
        resp = client.fetch(non_replica, [fetch_partition(TP)], replica_id=replica_id,
                            max_wait_ms=INT_MAX, min_bytes=0)
        assert partition_data(resp, TP).error == error


def test_non_replica_whose_metadata_lacks_the_partition_answers_unknown():
    """getPartitionOrError reads the broker's own metadata cache (metadataCache.contains), not
    the cluster's: a broker not told of the partition yet answers UNKNOWN_TOPIC_OR_PARTITION."""
    c = new_cluster("3.7", "zookeeper")
    client = RequestClient(c)
    leader = create_topic(c)[0]
    non_replica = next(b for b in c.brokers if b != leader)
    c.run(100)
    c.brokers[non_replica].metadata.partitions.pop(TP)
    assert client.produce(non_replica, TP, [10]).partitions == \
        ((TOPIC, 0, E.UNKNOWN_TOPIC_OR_PARTITION, -1),)


# ======================================================================== MinIsrConfigTest

@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_default_kafka_config(version, quorum):
    """MinIsrConfigTest.testDefaultKafkaConfig: a broker's min.insync.replicas is the default
    of its topics' LogConfig (LogManager.initialDefaultConfig), and a topic created without
    the setting has it."""
    c = new_cluster(version, quorum, brokers=(0,), config={"min.insync.replicas": 5})
    broker = c.brokers[0]
    assert kconfig.topic_config({}, broker.config, version)["min.insync.replicas"] == 5
    create_topic(c)
    assert broker.logs[TP].config["min.insync.replicas"] == 5


# =================================================================== ListOffsetsRequestTest

@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_list_offsets_error_codes(version, quorum):
    """ListOffsetsRequestTest.testListOffsetsErrorCodes: an unknown topic is
    UNKNOWN_TOPIC_OR_PARTITION for a consumer, a replica and the debugging replica id; a
    follower answers only the debugging id (which may read any replica's log), a broker that
    is not a replica nobody (NOT_LEADER_OR_FOLLOWER)."""
    c = new_cluster(version, quorum)
    client = RequestClient(c)
    replica_id = min(c.brokers)
    requesters = {"consumer": CONSUMER_REPLICA_ID, "replica": replica_id,
                  "debug": DEBUGGING_REPLICA_ID}

    def errors(broker):
        return {name: client.list_offsets(broker, EARLIEST_TIMESTAMP, current_leader_epoch=0,
                                          replica_id=rid)[0]
                for name, rid in requesters.items()}

    unknown = dict.fromkeys(requesters, E.UNKNOWN_TOPIC_OR_PARTITION)
    assert errors(replica_id) == unknown
    leader = create_topic(c, replication_factor=2)[0]
    replicas = c.assignment(TOPIC)[0]
    follower = next(b for b in replicas if b != leader)
    non_replica = next(b for b in c.brokers if b not in replicas)
    assert c.run_until(lambda cl: TP in cl.brokers[follower].replica_manager.partitions, 30_000)
    assert errors(follower) == {"consumer": E.NOT_LEADER_OR_FOLLOWER,
                                "replica": E.NOT_LEADER_OR_FOLLOWER, "debug": E.NONE}
    assert errors(non_replica) == dict.fromkeys(requesters, E.NOT_LEADER_OR_FOLLOWER)


@pytest.mark.parametrize(("version", "quorum"), QUORUMS)
def test_list_offsets_current_epoch_validation(version, quorum):
    """ListOffsetsRequestTest.testCurrentEpochValidation (KIP-320): the CurrentLeaderEpoch is
    checked before the leader requirement (Partition.getLocalLog), so a follower answers a
    stale or future epoch as such and the right one NOT_LEADER_OR_FOLLOWER."""
    c, leader, epoch = _current_epoch_cluster(version, quorum)
    client = RequestClient(c)

    def error(broker, current):
        return client.list_offsets(broker, EARLIEST_TIMESTAMP, current_leader_epoch=current)[0]

    assert error(leader, -1) == E.NONE
    assert error(leader, epoch) == E.NONE
    assert error(leader, epoch - 1) == E.FENCED_LEADER_EPOCH
    assert error(leader, epoch + 1) == E.UNKNOWN_LEADER_EPOCH
    follower = follower_with_epoch(c, epoch)
    assert error(follower, -1) == E.NOT_LEADER_OR_FOLLOWER
    assert error(follower, epoch) == E.NOT_LEADER_OR_FOLLOWER
    assert error(follower, epoch + 1) == E.UNKNOWN_LEADER_EPOCH
    assert error(follower, epoch - 1) == E.FENCED_LEADER_EPOCH


def _ten_records(c: Cluster) -> None:
    """TestUtils.generateAndProduceMessages(9) then produceMessage("test-10", now + 10): the
    tenth record has the largest timestamp."""
    p = producer(c)
    for i in range(9):
        p.send(TOPIC, f"m{i}", partition=0)
    assert p.flush()
    c.run(10)
    p.send(TOPIC, "test-10", partition=0)
    assert p.flush()


@pytest.mark.parametrize(("version", "quorum", "max_timestamp_epoch"), [
    # 3.0-3.7: the epoch of MAX_TIMESTAMP is the latest of the leader's epoch cache (UnifiedLog
    # .fetchOffsetByTimestamp @3.7.0); 3.8+ the batch's (KAFKA-16310)
    ("3.7", "zookeeper", "second"), ("3.7", "kraft", "second"), ("4.0", "kraft", "first"),
])
def test_response_includes_leader_epoch(version, quorum, max_timestamp_epoch):
    """ListOffsetsRequestTest.testResponseIncludesLeaderEpoch (KIP-320, KIP-734): each offset
    comes with the leader epoch of its record (timestamp search, earliest), the leader's
    current epoch for the latest offset; after a leader change only the latest one moves to
    the new epoch (and MAX_TIMESTAMP's before 3.8)."""
    c = new_cluster(version, quorum)
    client = RequestClient(c)
    first_leader = create_topic(c, replication_factor=3)[0]
    _ten_records(c)
    first_epoch = leader_epoch(c, first_leader)

    def offset_and_epoch(broker, timestamp):
        error, offset, epoch, _ts = client.list_offsets(broker, timestamp)
        assert error == E.NONE
        return offset, epoch

    assert offset_and_epoch(first_leader, 0) == (0, first_epoch)
    assert offset_and_epoch(first_leader, EARLIEST_TIMESTAMP) == (0, first_epoch)
    assert offset_and_epoch(first_leader, EARLIEST_LOCAL_TIMESTAMP) == (0, first_epoch)
    assert offset_and_epoch(first_leader, LATEST_TIMESTAMP) == (10, first_epoch)
    assert offset_and_epoch(first_leader, MAX_TIMESTAMP) == (9, first_epoch)

    second_leader, second_epoch = kill_broker(c, first_leader)
    # the new leader's HW has caught up (OFFSET_NOT_AVAILABLE until then, KIP-207)
    assert c.run_until(lambda _c: client.list_offsets(second_leader, LATEST_TIMESTAMP)[0]
                       != E.OFFSET_NOT_AVAILABLE, 30_000), "the second leader does not sync"
    for timestamp in (0, EARLIEST_LOCAL_TIMESTAMP, EARLIEST_TIMESTAMP):
        assert offset_and_epoch(second_leader, timestamp) == (0, first_epoch)
    assert offset_and_epoch(second_leader, LATEST_TIMESTAMP) == (10, second_epoch)
    expected = first_epoch if max_timestamp_epoch == "first" else second_epoch
    assert offset_and_epoch(second_leader, MAX_TIMESTAMP) == (9, expected)


U = E.UNSUPPORTED_VERSION


@pytest.mark.parametrize(("version", "expected"), [
    # ListOffsets v3 (2.0): no leader epoch in the answer
    ("2.0", {0: (0, NO_EPOCH), EARLIEST_TIMESTAMP: (0, NO_EPOCH),
             LATEST_TIMESTAMP: (10, NO_EPOCH), MAX_TIMESTAMP: U, EARLIEST_LOCAL_TIMESTAMP: U}),
    # v4-v6 (2.1-2.8, KIP-320): the epoch
    ("2.1", {0: (0, 0), EARLIEST_TIMESTAMP: (0, 0), LATEST_TIMESTAMP: (10, 0),
             MAX_TIMESTAMP: U, EARLIEST_LOCAL_TIMESTAMP: U}),
    # v7 (3.0, KIP-734): MAX_TIMESTAMP
    ("3.0", {0: (0, 0), EARLIEST_TIMESTAMP: (0, 0), LATEST_TIMESTAMP: (10, 0),
             MAX_TIMESTAMP: (9, 0), EARLIEST_LOCAL_TIMESTAMP: U}),
    # v8 (3.5, KIP-405): EARLIEST_LOCAL_TIMESTAMP
    ("3.7", {0: (0, 0), EARLIEST_TIMESTAMP: (0, 0), LATEST_TIMESTAMP: (10, 0),
             MAX_TIMESTAMP: (9, 0), EARLIEST_LOCAL_TIMESTAMP: (0, 0)}),
])
def test_response_default_offset_and_leader_epoch_for_all_versions(version, expected):
    """ListOffsetsRequestTest.testResponseDefaultOffsetAndLeaderEpochForAllVersions, by the
    release that brought each ListOffsets version: no epoch before v4, MAX_TIMESTAMP from v7,
    EARLIEST_LOCAL_TIMESTAMP from v8; a timestamp the version cannot carry is
    UNSUPPORTED_VERSION with offset -1 (the client refuses to build it; trunk's broker answers
    so, KAFKA-17331)."""
    c = new_cluster(version, "zookeeper")
    client = RequestClient(c)
    leader = create_topic(c, replication_factor=3)[0]
    _ten_records(c)
    for timestamp, answer in expected.items():
        error, offset, epoch, _ts = client.list_offsets(leader, timestamp)
        assert (error, offset, epoch) == ((U, -1, NO_EPOCH) if answer == U
                                          else (E.NONE, *answer)), timestamp


# ============================================================= PartitionTest: ListOffsets

def _partition(leader_epoch_: int = 5, is_leader: bool = True, version: str = "3.7"):
    """PartitionTest.setupPartitionWithMocks: broker 0's replica of the partition, leader (of
    replicas 0 and 1) or follower of broker 1, at ``leader_epoch_``."""
    ctx = FakeContext(0, kafka_version=version, live_brokers=(0, 1, 2))
    part = ctx.partition(TOPIC, 0)
    if is_leader:
        part.make_leader(ctx, leader_epoch_, (0, 1), (0, 1), 1, 0)
    else:
        part.make_follower(ctx, 1, leader_epoch_, (0, 1), (0, 1), 1, 0)
    return ctx, part


def _error_of(call) -> str:
    """Errors.forException of what ``call`` raises; NONE when it returns."""
    try:
        call()
    except E.ApiException as e:
        return e.error
    return E.NONE


@pytest.mark.parametrize("is_leader", [True, False])
def test_fetch_offset_snapshot_epoch_validation(is_leader):
    """PartitionTest.testFetchOffsetSnapshotEpochValidationForLeader / ...ForFollower:
    Partition.fetchOffsetSnapshot checks the current leader epoch, then (if asked) that the
    replica leads."""
    epoch = 5
    ctx, part = _partition(epoch, is_leader)
    for only_leader in (True, False) if not is_leader else (True,):
        def error(current, only_leader=only_leader):
            return _error_of(lambda: part.fetch_offset_snapshot(ctx, current, only_leader))
        not_leader = E.NOT_LEADER_OR_FOLLOWER if only_leader and not is_leader else E.NONE
        assert error(epoch - 1) == E.FENCED_LEADER_EPOCH
        assert error(epoch + 1) == E.UNKNOWN_LEADER_EPOCH
        assert error(epoch) == not_leader
        assert error(None) == not_leader
    snapshot = part.fetch_offset_snapshot(ctx, None, False)
    assert (snapshot.log_start_offset, snapshot.high_watermark, snapshot.log_end_offset) == \
        (0, 0, 0)


@pytest.mark.parametrize("is_leader", [True, False])
def test_fetch_offset_for_timestamp_epoch_validation(is_leader):
    """PartitionTest.testFetchOffsetForTimestampEpochValidationForLeader / ...ForFollower: the
    current leader epoch first, then the leader requirement (Partition.localLogWithEpochOrThrow)."""
    epoch = 5
    ctx, part = _partition(epoch, is_leader)
    for only_leader in (True, False) if not is_leader else (True,):
        def error(current, only_leader=only_leader):
            return _error_of(lambda: part.fetch_offset_for_timestamp(ctx, 0, None, current,
                                                                     only_leader))
        not_leader = E.NOT_LEADER_OR_FOLLOWER if only_leader and not is_leader else E.NONE
        assert error(None) == not_leader
        assert error(epoch) == not_leader
        assert error(epoch - 1) == E.FENCED_LEADER_EPOCH
        assert error(epoch + 1) == E.UNKNOWN_LEADER_EPOCH


def test_fetch_latest_offset_includes_leader_epoch():
    """PartitionTest.testFetchLatestOffsetIncludesLeaderEpoch: LATEST_TIMESTAMP answers the
    partition's leader epoch."""
    ctx, part = _partition(5)
    found = part.fetch_offset_for_timestamp(ctx, LATEST_TIMESTAMP, None, None, True)
    assert found is not None and found.leader_epoch == 5


def test_monotonic_offsets_after_leader_change():
    """PartitionTest.testMonotonicOffsetsAfterLeaderChange (KIP-207): after a new election a
    leader whose HW is below its epoch's start offset answers a client's latest offset, or a
    timestamp it cannot find below the HW, with OFFSET_NOT_AVAILABLE; a replica's question,
    the earliest offsets and a timestamp found below the HW are answered; the error goes once
    the HW passes the epoch start."""
    ctx = FakeContext(0, kafka_version="3.7", live_brokers=(0, 1, 2))
    part = ctx.partition(TOPIC, 0)
    leader, follower1, follower2 = 0, 1, 2
    replicas, isr, epoch = (0, 1, 2), (leader, follower2), 8
    part.make_leader(ctx, epoch, isr, replicas, 1, 3)
    for i, ts in enumerate((10, 11, -1, 20, 21)):   # batch1: 10, 11; batch2: none, 20, 21
        part.log.append_as_leader([100 + i], [10], epoch, ts)
    assert part.log.high_watermark == part.log.log_start_offset

    def fetch_follower(replica, offset):
        part.update_follower_fetch_state(ctx, replica, offset, 0, part.log.log_end_offset,
                                         ctx.now)

    def fetch_offsets_for_timestamp(timestamp, isolation):
        try:
            return part.fetch_offset_for_timestamp(ctx, timestamp, isolation,
                                                   part.leader_epoch, True)
        except E.ApiException as e:
            return e.error

    for replica in (follower1, follower2):
        fetch_follower(replica, 0)
        fetch_follower(replica, 2)
    assert part.log.high_watermark == 2
    assert fetch_offsets_for_timestamp(LATEST_TIMESTAMP, None).offset == 5       # the LEO
    assert fetch_offsets_for_timestamp(LATEST_TIMESTAMP, "read_uncommitted").offset == 2
    assert fetch_offsets_for_timestamp(30, "read_uncommitted") is None   # beyond the HW

    part.make_follower(ctx, follower2, epoch + 1, isr, replicas, 4, 3)
    part.make_leader(ctx, epoch + 2, isr, replicas, 5, 3)   # its epoch starts at 5, HW 2
    assert fetch_offsets_for_timestamp(LATEST_TIMESTAMP, "read_uncommitted") == \
        E.OFFSET_NOT_AVAILABLE
    assert fetch_offsets_for_timestamp(LATEST_TIMESTAMP, None).offset == 5
    assert fetch_offsets_for_timestamp(EARLIEST_TIMESTAMP, "read_uncommitted").offset == 0
    assert fetch_offsets_for_timestamp(EARLIEST_LOCAL_TIMESTAMP, "read_uncommitted").offset == 0
    found = fetch_offsets_for_timestamp(11, "read_uncommitted")
    assert (found.offset, found.timestamp) == (1, 11)
    assert fetch_offsets_for_timestamp(100, "read_uncommitted") == E.OFFSET_NOT_AVAILABLE

    fetch_follower(follower1, 5)
    fetch_follower(follower2, 5)
    assert fetch_offsets_for_timestamp(LATEST_TIMESTAMP, "read_uncommitted").offset == 5
    assert fetch_offsets_for_timestamp(100, "read_uncommitted") is None


def test_list_offset_isolation_levels():
    """PartitionTest.testListOffsetIsolationLevels: LATEST is the LEO for a replica (no
    isolation level), the HW for read_uncommitted, the LSO for read_committed (the HW here:
    no transactions); EARLIEST and EARLIEST_LOCAL the log start offset for all three."""
    ctx, part = _partition(5)
    part.log.append_as_leader([1, 2, 3], [10, 10, 10], 5, 0)

    def offset(isolation, timestamp=LATEST_TIMESTAMP):
        found = part.fetch_offset_for_timestamp(ctx, timestamp, isolation, None, True)
        assert found is not None
        return found.offset

    assert (offset(None), offset("read_uncommitted"), offset("read_committed")) == (3, 0, 0)
    part.log.update_high_watermark(1)
    assert (offset(None), offset("read_uncommitted"), offset("read_committed")) == (3, 1, 1)
    for timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
        assert [offset(i, timestamp) for i in (None, "read_uncommitted", "read_committed")] == \
            [0, 0, 0]


# ========================================== OffsetFetcherTest: the client half of ListOffsets

def _held_list_offsets(c: Cluster) -> list[ListOffsetsRequest]:
    return [env.msg for env in c.transport.network.held if isinstance(env.msg, ListOffsetsRequest)]


@pytest.mark.parametrize(("version", "sends_epoch"), [
    ("3.7", True),
    # before KAFKA-7747 (2.3) the consumer's ListOffsets carried no CurrentLeaderEpoch
    # (Fetcher.groupListOffsetRequests @2.2.0: Optional.empty())
    ("2.2", False),
])
def test_get_offsets_includes_leader_epoch(version, sends_epoch):
    """OffsetFetcherTest.testGetOffsetsIncludesLeaderEpoch: the consumer's ListOffsets for a
    position reset carries the leader epoch its metadata has for the partition."""
    c, _leader, epoch = _current_epoch_cluster(version, "zookeeper")
    consumer = c.consumer(group="g", auto_offset_reset="latest")
    c.hold("ListOffsetsRequest")
    consumer.assign(TOPIC, [0])
    consumer.poll(100)
    (req, *_rest) = _held_list_offsets(c)
    assert req.current_leader_epochs == ((epoch,) if sends_epoch else (-1,))


@pytest.mark.parametrize("stale", [-1, +1])
def test_get_offsets_fenced_or_unknown_leader_epoch(stale):
    """OffsetFetcherTest.testGetOffsetsFencedLeaderEpoch / testGetOffsetsUnknownLeaderEpoch: a
    ListOffsets answered FENCED_LEADER_EPOCH (the consumer's metadata is older than the
    leader) or UNKNOWN_LEADER_EPOCH (newer) leaves the reset pending and asks for new
    metadata; the retry with the leader's epoch resets the position."""
    c, leader, epoch = _current_epoch_cluster("3.7", "zookeeper")
    produce_data(c, [TP], 3)
    consumer = c.consumer(group="g", auto_offset_reset="latest")
    consumer.assign(TOPIC, [0])
    consumer.leaders[TP] = leader
    consumer.leader_epochs[TP] = epoch + stale
    answers = []   # (the request's epochs, the answer's errors) of each ListOffsets
    fetcher = consumer.offset_fetcher
    handle = fetcher.handle_list_offsets_response

    def spy(msg):
        request = consumer.client.sent_to[msg.correlation_id][1]
        answers.append((request.current_leader_epochs, tuple(p[2] for p in msg.partitions),
                        fetcher.consumer.subscriptions.is_offset_reset_needed(TP)))
        handle(msg)
        answers[-1] += (consumer.leaders[TP],)

    fetcher.handle_list_offsets_response = spy
    hw = c.brokers[leader].logs[TP].high_watermark
    assert c.run_until(lambda _c: consumer.poll(10) is not None and
                       consumer.position(TOPIC, 0) == hw, 10_000)
    expected = E.FENCED_LEADER_EPOCH if stale < 0 else E.UNKNOWN_LEADER_EPOCH
    # the first answer leaves the reset pending and the leader unknown (a metadata update)
    assert answers[0] == ((epoch + stale,), (expected,), True, -1)
    assert answers[-1][:2] == ((epoch,), (E.NONE,))
