"""Kafka's consumer fetcher tests, ported to kafkasim's ``Consumer`` and ``SubscriptionState``.

Sources (tag 3.7.0): ``clients/src/test/java/org/apache/kafka/clients/consumer/internals/
FetcherTest.java`` and ``OffsetFetcherTest.java``. Each test names the Kafka test it follows and
checks what that test checks. The consumer runs in a real ``Cluster`` (3 brokers, Kafka 3.7,
topic ``t``), in one of two styles:

* scripted (``Scripted``), for Kafka's ``MockClient``: the consumer's own ``_send_fetches``
  (``sendFetches``) puts FetchRequests on the wire and the test answers them by handing a
  ``FetchResponse`` to ``Consumer.on_message`` (``prepareResponse`` + ``poll``) or fails them
  with ``Consumer.on_disconnect``; the brokers' own later answers are ignored (their
  correlation id is no longer pending). "Metadata update requested" is a MetadataRequest sent
  by the next ``poll``.
* cluster-level: ``poll`` against real brokers, with held or delayed messages, shutdowns,
  reassignments, elections and crashes giving the answers Kafka's tests script (HW below LEO,
  OFFSET_OUT_OF_RANGE, FENCED_LEADER_EPOCH, OffsetsForLeaderEpoch, a preferred read replica).

kafkasim's consumer takes an answer when it arrives (FetchCollector.initialize and
fetchRecords at once): its records are consumed and the position moves past them; ``poll``
hands out at most ``max.poll.records`` and keeps the rest in its fetch buffer for the next
poll (the position going back to the first one kept). Kafka's ``fetchRecords()`` is read as
the records an answer added to ``Consumer.consumed``. Record
batches have no gaps (no compaction), so Kafka's records 1..3 after ``seek(tp0, 0)`` become a
seek to 1. ``selectReadReplica`` is ``Consumer.fetching_from``; ``pause`` / ``resume`` are
``SubscriptionState``'s, as in Kafka's tests.

Left out, not modelled by kafkasim: topic ids and session close (testFetchWithTopicId...,
testFetcherCloseClosesFetchSessionsInBroker), record parsing, headers, corrupt or oversized
records, control records and transactions (testSkippingAbortedTransactions...,
testCorruptMessageError), compacted gaps (testFetchNonContinuousRecords), metrics and quotas,
rebalance states (testFetchDuringEagerRebalance, testInflightFetchOnPendingPartitions),
authorization, KIP-951 leader information in FetchResponse (...AndNewLeaderInformation: no
CurrentLeader field in FetchPartitionData), ListOffsets by timestamp and beginning/end offsets,
ApiVersions (testOffsetValidationAwaitsNodeApiVersion, ...SkippedForOldBroker,
...SkippedForOldResponse: one version per cluster), ListOffsets retry backoff
(testFetchOffsetErrors, testUpdateFetchPositionDisconnect), threading. Left out as repeats of
a difference tested here: testFetchedRecordsAfterSeek and testSeekBeforeException (as
test_fetch_offset_out_of_range_exception), testEarlierOffsetResetArrivesLate (as
test_update_fetch_position_reset_to_latest_offset).
"""

from __future__ import annotations

from array import array

import pytest
from clusters import make_cluster

from kafkasim.core import errors as E
from kafkasim.core.log import RecordChunk
from kafkasim.core.messages import (
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    MetadataRequest,
    OffsetsForLeaderEpochRequest,
)
from kafkasim.runtime.clients.consumer import LogTruncationException, OffsetOutOfRangeException
from kafkasim.runtime.clients.subscription_state import (
    FetchPosition,
    LeaderAndEpoch,
    OffsetResetStrategy,
)

T = "t"
TP0, TP1 = (T, 0), (T, 1)
SELECTOR = {"replica.selector.class": "org.apache.kafka.common.replica.RackAwareReplicaSelector"}
RACKS = {1: "a", 2: "b", 3: "c"}
VERSION = "3.7"


# -- helpers ----------------------------------------------------------------------------------
def capture(cons) -> list[tuple[int, object]]:
    """Every request the consumer sends, as (broker, message) (Kafka: ``client.requests()``)."""
    sent: list[tuple[int, object]] = []
    original = cons._send

    def _send(broker, msg, kind):
        sent.append((broker, msg))
        return original(broker, msg, kind)

    cons._send = _send
    return sent


def of_type(sent, cls) -> list[tuple[int, object]]:
    return [(b, m) for b, m in sent if isinstance(m, cls)]


def poll_until(cons, cond, polls: int = 10, timeout_ms: int = 500) -> list:
    """Poll until ``cond(records so far)``; returns every record polled."""
    got: list = []
    for _ in range(polls):
        got += cons.poll(timeout_ms)
        if cond(got):
            break
    return got


def _cluster(records: int = 0, partitions: int = 1):
    kw = {"topic": T, "partitions": partitions, "records": records, "settle_ms": 500}
    return make_cluster(3, seed=1, kafka_version=VERSION, **kw)


def _consumer(c, policy: str = "earliest", **config):
    """A consumer of every partition of t, and the list of the requests it sends."""
    cons = c.consumer(auto_offset_reset=policy, **config)
    sent = capture(cons)
    cons.assign(T)
    return cons, sent


class Scripted:
    """A consumer whose fetches the test answers (Kafka's MockClient)."""

    def __init__(self, reset: str = "earliest", partitions: int = 2, **config) -> None:
        self.c = _cluster(0, partitions)
        self.cons = self.c.consumer(auto_offset_reset=reset, **config)
        self.subs = self.cons.subscriptions
        self.sent = capture(self.cons)
        self.mark = 0

    def assign(self, *partitions: int) -> None:
        """assignFromUser + a metadata update (the consumer asks a broker)."""
        self.cons.assign(T, list(partitions))
        self.cons._refresh_metadata(1000)

    def leader(self, tp) -> int:
        return self.cons.leaders[tp]

    def send_fetches(self) -> list[int]:
        """Fetcher.sendFetches: the correlation ids of the FetchRequests it sent."""
        before = len(self.sent)
        self.cons._send_fetches()
        return [m.correlation_id for _b, m in self.sent[before:] if isinstance(m, FetchRequest)]

    def respond(self, corr: int, *datas: FetchPartitionData) -> None:
        broker, _req = self.cons.client.sent_to[corr]
        self.cons.on_message(broker, FetchResponse(corr, tuple(datas)))
        # (the answer waits in the fetch buffer; Kafka's tests collect it next, which
        # initializes it: FetchCollector.collectFetch)
        self.cons.fetch_collector.initialize_completed_fetches()

    def disconnect(self, corr: int) -> None:
        broker, req = self.cons.client.sent_to[corr]
        self.cons.on_disconnect(broker, req)

    def data(self, tp, base: int, n: int = 0, *, err=E.NONE, hw=100, epochs=None, pref=-1):
        """One partition's FetchPartitionData: ``n`` records from ``base`` (leader epoch 0, or
        ``epochs``), or an error; ``pref``: a preferred read replica."""
        epochs = list(epochs) if epochs is not None else [0] * n
        ids = [self.c.records.new(f"{tp[1]}-{base + i}") for i in range(len(epochs))]
        cols = (array("i", epochs), array("i", ids), array("q", [0] * len(ids)))
        chunk = RecordChunk(base, *cols, array("i", [10] * len(ids)), ())
        return FetchPartitionData(T, tp[1], err, hw, 0, chunk, None, hw, pref)

    def fetch_records(self) -> dict:
        """fetchRecords(): tp -> offsets of the records the answers since the last call gave."""
        self.cons.fetch_collector.initialize_completed_fetches()
        new = self.cons.consumed[self.mark :]
        self.mark = len(self.cons.consumed)
        out: dict = {}
        for r in new:
            out.setdefault((r.topic, r.partition), []).append(r.offset)
        return out

    def metadata_update_requested(self) -> bool:
        """Metadata.updateRequested(): the next poll asks a broker for metadata."""
        before = len(of_type(self.sent, MetadataRequest))
        self.cons.poll(100)
        return len(of_type(self.sent, MetadataRequest)) > before


# -- FetcherTest: scripted answers ------------------------------------------------------------
def fetching(offset: int = 0, reset: str = "earliest", **config) -> tuple[Scripted, int]:
    """A scripted consumer of t-0 at ``offset`` that has sent one FetchRequest: (it, its id)."""
    s = Scripted(reset, **config)
    s.assign(0)
    s.subs.seek(TP0, offset)
    (corr,) = s.send_fetches()
    return s, corr


def test_fetch_normal():
    """testFetchNormal: three records from the position; the position moves past them."""
    s, corr = fetching(1)
    s.respond(corr, s.data(TP0, 1, 3))
    assert s.fetch_records() == {TP0: [1, 2, 3]}
    assert s.subs.position(TP0).offset == 4


@pytest.mark.parametrize(
    ("error", "requests_metadata"),
    [
        (E.NOT_LEADER_OR_FOLLOWER, True),
        (E.UNKNOWN_TOPIC_OR_PARTITION, True),
        (E.FENCED_LEADER_EPOCH, True),
        (E.UNKNOWN_LEADER_EPOCH, False),
    ],
)
def test_handle_fetch_response_error(error, requests_metadata):
    """testHandleFetchResponseError, testFetchError: no records, no position change; a metadata
    update is requested for each leadership error but UNKNOWN_LEADER_EPOCH (FetchCollector
    .handleInitializeErrors)."""
    s, corr = fetching()
    s.respond(corr, s.data(TP0, 0, 3, err=error))
    assert s.fetch_records() == {}
    assert s.subs.position(TP0).offset == 0 and not s.subs.is_offset_reset_needed(TP0)
    assert s.metadata_update_requested() is requests_metadata


def test_epoch_set_in_fetch_request():
    """testEpochSetInFetchRequest: the FetchRequest's CurrentLeaderEpoch is the metadata's."""
    s = Scripted()
    s.assign(0)
    s.cons.leader_epochs[TP0] = 99  # a metadata update naming epoch 99
    s.cons.seek(T, 0, 10)
    s.send_fetches()
    ((broker, req),) = of_type(s.sent, FetchRequest)
    assert broker == s.leader(TP0)
    assert [(fp.fetch_offset, fp.current_leader_epoch) for fp in req.partitions] == [(10, 99)]


def test_subscription_position_updated_with_epoch():
    """testSubscriptionPositionUpdatedWithEpoch: the position takes the epoch of the last
    record."""
    s, corr = fetching()
    s.respond(corr, s.data(TP0, 0, epochs=[1, 1, 1]))
    assert s.fetch_records() == {TP0: [0, 1, 2]}
    position = s.subs.position(TP0)
    assert (position.offset, position.offset_epoch) == (3, 1)


def test_leader_epoch_in_consumer_record():
    """testLeaderEpochInConsumerRecord: each record carries its batch's leader epoch."""
    s, corr = fetching()
    s.respond(corr, s.data(TP0, 0, epochs=[1, 1, 8, 13, 13, 13]))
    assert [r.leader_epoch for r in s.cons.consumed] == [1, 1, 8, 13, 13, 13]
    assert s.subs.position(TP0).offset_epoch == 13


def test_fetch_disconnected():
    """testFetchDisconnected: a disconnect changes nothing in the subscription state."""
    s, corr = fetching()
    s.disconnect(corr)
    assert s.fetch_records() == {}
    assert not s.subs.is_offset_reset_needed(TP0) and s.subs.is_fetchable(TP0)
    assert s.subs.position(TP0).offset == 0


def test_fetch_offset_out_of_range():
    """testFetchOffsetOutOfRange: with a reset policy the partition awaits a reset and has no
    position."""
    s, corr = fetching()
    s.respond(corr, s.data(TP0, 0, 3, err=E.OFFSET_OUT_OF_RANGE))
    assert s.fetch_records() == {}
    assert s.subs.is_offset_reset_needed(TP0)
    assert s.subs.valid_position(TP0) is None and s.subs.position(TP0) is None


def test_stale_out_of_range_error():
    """testStaleOutOfRangeError: an OFFSET_OUT_OF_RANGE for offset 0 arriving after a seek to 1
    is stale: no reset, the position stays 1."""
    s, corr = fetching()
    s.subs.seek(TP0, 1)
    s.respond(corr, s.data(TP0, 0, 3, err=E.OFFSET_OUT_OF_RANGE))
    assert s.fetch_records() == {}
    assert not s.subs.is_offset_reset_needed(TP0)
    assert s.subs.position(TP0).offset == 1


def test_fetch_offset_out_of_range_exception():
    """testFetchOffsetOutOfRangeException: without a reset policy the partition is not reset;
    collecting raises OffsetOutOfRangeException {tp0: 0}, and again on the next try."""
    s, corr = fetching(reset="none")
    s.respond(corr, s.data(TP0, 0, 3, err=E.OFFSET_OUT_OF_RANGE))
    assert not s.subs.is_offset_reset_needed(TP0)
    for _ in range(2):
        with pytest.raises(OffsetOutOfRangeException) as err:
            s.cons.poll(100)
        assert err.value.offset_out_of_range_partitions == {TP0: 0}
    assert s.subs.position(TP0).offset == 0


def test_fetch_position_after_exception():
    """testFetchPositionAfterException: tp1's records are returned, then
    OffsetOutOfRangeException {tp0: 1}; the positions stay tp0 1, tp1 4."""
    s = Scripted(reset="none")
    s.assign(0, 1)
    # KafkaConsumer.seek (not SubscriptionState.seek): the positions are established against the
    # metadata's leaders, so the poll below has nothing to validate (Kafka's test calls
    # collectFetch, which validates nothing, where this port polls)
    s.cons.seek(T, 0, 1)
    s.cons.seek(T, 1, 1)
    corrs = s.send_fetches()
    assert len(corrs) == 2  # t-0 and t-1 have different leaders here
    by_tp = {s.cons.client.sent_to[c][1].partitions[0].partition: c for c in corrs}
    s.respond(by_tp[1], s.data(TP1, 1, 3))
    s.respond(by_tp[0], s.data(TP0, 1, err=E.OFFSET_OUT_OF_RANGE))
    assert s.fetch_records() == {TP1: [1, 2, 3]}
    assert s.subs.position(TP0).offset == 1 and s.subs.position(TP1).offset == 4
    with pytest.raises(OffsetOutOfRangeException) as err:
        s.cons.poll(100)
    assert err.value.offset_out_of_range_partitions == {TP0: 1}
    assert s.subs.position(TP0).offset == 1 and s.subs.position(TP1).offset == 4


def test_in_flight_fetch_on_paused_partition():
    """testInFlightFetchOnPausedPartition: an answer for a partition paused meanwhile gives no
    records."""
    s, corr = fetching()
    s.subs.pause(TP0)
    s.respond(corr, s.data(TP0, 0, 3))
    assert TP0 not in s.fetch_records()
    assert s.subs.position(TP0).offset == 0


def test_fetch_on_paused_partition():
    """testFetchOnPausedPartition: no fetch is sent for a paused partition."""
    s = Scripted()
    s.assign(0)
    s.subs.seek(TP0, 0)
    s.subs.pause(TP0)
    assert s.send_fetches() == []
    assert of_type(s.sent, FetchRequest) == []


def test_fetch_discarded_after_paused_partition_resumed_and_sought_to_new_offset():
    """testFetchDiscardedAfterPausedPartitionResumedAndSoughtToNewOffset: the answer for offset 0
    is dropped after a seek to 3; the position does not move."""
    s, corr = fetching()
    s.subs.pause(TP0)
    s.subs.seek(TP0, 3)
    s.subs.resume(TP0)
    s.respond(corr, s.data(TP0, 0, 3))
    assert s.fetch_records() == {}
    assert s.subs.position(TP0).offset == 3


# -- preferred read replica (KIP-392), scripted ------------------------------------------------
def _with_preferred_replica(partitions: int = 1) -> tuple[Scripted, int]:
    """Fetch once from the leader, whose answer names a follower as preferred read replica;
    returns the harness and that follower."""
    s = Scripted(partitions=partitions)
    s.assign(*range(partitions))
    follower = next(b for b in (1, 2, 3) if b != s.leader(TP0))
    for p in range(partitions):
        s.subs.seek((T, p), 0)
    for corr in s.send_fetches():
        for fp in s.cons.client.sent_to[corr][1].partitions:
            s.respond(corr, s.data((T, fp.partition), 0, pref=follower))
    assert s.cons.fetching_from(T, 0) == follower
    return s, follower


def test_preferred_read_replica_answer_with_records():
    """testPreferredReadReplica: an answer with records and a preferred read replica returns
    the records and sets the replica fetched from next."""
    s = Scripted(partitions=1)
    s.assign(0)
    s.subs.seek(TP0, 0)
    assert s.cons.fetching_from(T, 0) == s.leader(TP0)
    (corr,) = s.send_fetches()
    follower = next(b for b in (1, 2, 3) if b != s.leader(TP0))
    s.respond(corr, s.data(TP0, 0, 3, pref=follower))
    assert s.fetch_records() == {TP0: [0, 1, 2]}
    assert s.cons.fetching_from(T, 0) == follower


def test_fetch_error_should_clear_preferred_read_replica():
    """testFetchErrorShouldClearPreferredReadReplica: NOT_LEADER_OR_FOLLOWER from the replica
    sends the consumer back to the leader."""
    s, follower = _with_preferred_replica()
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(TP0, 0, err=E.NOT_LEADER_OR_FOLLOWER, hw=-1, pref=follower))
    assert s.subs.preferred_read_replica(TP0, s.c.now) is None


def test_preferred_read_replica_offset_error():
    """testPreferredReadReplicaOffsetError: OFFSET_OUT_OF_RANGE from the replica unsets it."""
    s, _follower = _with_preferred_replica()
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(TP0, 0, err=E.OFFSET_OUT_OF_RANGE))
    assert s.subs.preferred_read_replica(TP0, s.c.now) is None


def test_preferred_read_replica_offset_error_keeps_the_position():
    """FetchCollector.handleInitializeErrors (3.7.0), the OFFSET_OUT_OF_RANGE branch: when a
    preferred read replica was cleared the error is not handled as out of range: no reset, the
    same offset is fetched from the leader next."""
    s, _follower = _with_preferred_replica()
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(TP0, 0, err=E.OFFSET_OUT_OF_RANGE))
    assert not s.subs.is_offset_reset_needed(TP0)
    assert s.subs.position(TP0).offset == 0
    before = len(s.sent)
    s.send_fetches()
    assert [
        (b, m.partitions[0].fetch_offset) for b, m in of_type(s.sent[before:], FetchRequest)
    ] == [(s.leader(TP0), 0)]


def test_fetch_disconnected_should_clear_preferred_read_replica():
    """testFetchDisconnectedShouldClearPreferredReadReplica."""
    s, _follower = _with_preferred_replica()
    (corr,) = s.send_fetches()
    s.disconnect(corr)
    assert s.fetch_records() == {}
    assert s.subs.preferred_read_replica(TP0, s.c.now) is None


def test_offline_preferred_read_replica_is_not_fetched_from():
    """AbstractFetch.selectReadReplica: a preferred replica the metadata does not show online
    (Cluster.nodeIfOnline) is forgotten, the leader fetched from, and (3.4+, KAFKA-14379)
    new metadata asked for."""
    s, follower = _with_preferred_replica()
    s.cons.nodes = s.cons.nodes - {follower}  # a metadata update without the follower
    before = len(s.sent)
    s.send_fetches()
    assert [b for b, _m in of_type(s.sent[before:], FetchRequest)] == [s.leader(TP0)]
    assert s.subs.preferred_read_replica(TP0, s.c.now) is None
    assert s.cons._metadata_update_requested


@pytest.mark.parametrize("error", [E.FENCED_LEADER_EPOCH, E.NOT_LEADER_OR_FOLLOWER])
def test_leadership_change_error_without_new_leader_information(error):
    """testWhenFetchResponseReturnsALeaderShipChangeErrorButNoNewLeaderInformation: both
    partitions read from one preferred replica; an error on tp0 clears tp0's replica only,
    requests a metadata update, and leaves tp0 fetchable against its old leader."""
    s, follower = _with_preferred_replica(partitions=2)
    assert s.cons.fetching_from(T, 1) == follower
    s.fetch_records()
    leader0 = s.subs.position(TP0).current_leader
    (corr,) = s.send_fetches()  # one request: both partitions at the replica
    s.respond(corr, s.data(TP0, 0, err=error), s.data(TP1, 0, 2))
    assert s.fetch_records() == {TP1: [0, 1]}
    assert s.subs.preferred_read_replica(TP0, s.c.now) is None
    assert s.subs.preferred_read_replica(TP1, s.c.now) == follower
    assert s.subs.is_fetchable(TP0) and s.subs.is_fetchable(TP1)
    assert s.subs.position(TP0).current_leader == leader0
    assert s.metadata_update_requested()


# -- the high watermark (fact sheet §13): cluster-level ---------------------------------------
def _hw_below_leo():
    """t-0 led by broker 1 holds offsets 0-9 (epoch 0); its followers got only 0-4, so HW 5."""
    c = _cluster(5)
    c.hold("FetchResponse", src=1, dst=2)
    c.hold("FetchResponse", src=1, dst=3)
    p = c.producer(acks="1")
    for i in range(5):
        p.send(T, f"w{i}", partition=0)
    c.run(300)
    assert c.high_watermark(T) == 5 and c.log(1, T).log_end_offset == 10
    return c


def test_fetch_stops_at_the_high_watermark():
    """testFetchNormal against a leader whose HW (5) is below its LEO (10): the consumer gets
    offsets 0-4 only, its position stops at the HW (lag 0); once the followers catch up it
    reads 5-9."""
    c = _hw_below_leo()
    cons, _sent = _consumer(c, "earliest")
    got = poll_until(cons, lambda g: False, polls=3)
    assert [r.offset for r in got] == [0, 1, 2, 3, 4]
    assert all(r.offset < r.served_hw == 5 for r in got)
    assert cons.position(T) == 5 and cons.lag(T) == 0
    c.release()
    got = poll_until(cons, lambda g: len(g) >= 5)
    assert [r.offset for r in got] == [5, 6, 7, 8, 9]
    assert cons.position(T) == 10


def test_fetch_between_high_watermark_and_log_end_is_not_out_of_range():
    """A position between HW and LEO is in range (Partition.readRecords checks the LEO): the
    fetch answers no records and no error until the HW passes it."""
    c = _hw_below_leo()
    cons, _sent = _consumer(c, "earliest")
    cons.seek(T, 0, 7)
    assert cons.poll(500) == [] and cons.position(T) == 7 and cons.errors == []
    c.release()
    got = poll_until(cons, lambda g: len(g) >= 3)
    assert [r.offset for r in got] == [7, 8, 9]


@pytest.mark.parametrize(("policy", "position"), [("latest", 5), ("earliest", 0)])
def test_update_fetch_position_reset_to_default_offset(policy, position):
    """testUpdateFetchPositionResetToDefaultOffset / ...ToEarliestOffset: ListOffsets by
    auto.offset.reset; LATEST is the HW for a read_uncommitted consumer, not the LEO."""
    c = _hw_below_leo()
    cons, sent = _consumer(c, policy)
    cons.subscriptions.request_offset_reset(TP0)
    cons._update_fetch_positions(300)  # resetPositionsIfNeeded + the answer
    ((_b, req),) = of_type(sent, ListOffsetsRequest)
    assert [ts for _t, _p, ts in req.partitions] == [OffsetResetStrategy.of(policy).timestamp()]
    subs = cons.subscriptions
    assert not subs.is_offset_reset_needed(TP0) and subs.is_fetchable(TP0)
    assert cons.position(T) == position


def test_update_fetch_position_reset_to_latest_offset():
    """testUpdateFetchPositionResetToLatestOffset: requestOffsetReset(tp0, LATEST) with the
    default policy EARLIEST resets tp0 to the latest offset (OffsetFetcher
    .resetPositionsIfNeeded reads subscriptions.resetStrategy(tp))."""
    c = _hw_below_leo()
    cons, _sent = _consumer(c, "earliest")
    cons.subscriptions.request_offset_reset(TP0, OffsetResetStrategy.LATEST)
    cons._update_fetch_positions(300)
    assert not cons.subscriptions.is_offset_reset_needed(TP0)
    assert cons.position(T) == 5


def test_update_fetch_position_no_op_with_position_set():
    """testUpdateFetchPositionNoOpWithPositionSet: a partition with a position sends no
    ListOffsets."""
    c = _hw_below_leo()
    cons, sent = _consumer(c, "earliest")
    cons.seek(T, 0, 3)
    cons._update_fetch_positions(300)
    assert of_type(sent, ListOffsetsRequest) == []
    assert cons.subscriptions.is_fetchable(TP0) and cons.position(T) == 3


def test_update_fetch_position_of_paused_partitions():
    """testUpdateFetchPositionOfPausedPartitionsRequiringOffsetReset / ...WithAValidPosition: a
    paused partition is reset (and stays unfetchable); one with a position keeps it."""
    c = _hw_below_leo()
    c.create_topic("u", 1, 3)
    cons, _sent = _consumer(c, "latest")
    cons.assign([TP0, ("u", 0)])  # KafkaConsumer.assign replaces: both partitions at once
    cons.seek("u", 0, 0)
    subs = cons.subscriptions
    subs.pause(TP0)
    subs.pause(("u", 0))
    cons._update_fetch_positions(300)
    assert not subs.is_offset_reset_needed(TP0) and not subs.is_fetchable(TP0)
    assert subs.has_valid_position(TP0) and cons.position(T) == 5
    assert subs.has_valid_position(("u", 0)) and cons.position("u") == 0
    assert not subs.is_fetchable(("u", 0))


@pytest.mark.parametrize(("policy", "offsets"), [("earliest", [0, 1, 2, 3, 4]), ("latest", [])])
def test_out_of_range_resets_by_auto_offset_reset(policy, offsets):
    """testFetchOffsetOutOfRange end to end: a position past the LEO is OFFSET_OUT_OF_RANGE;
    the partition is reset by auto.offset.reset (earliest: 0; latest: the HW), never to a
    position above the HW."""
    c = _hw_below_leo()
    cons, _sent = _consumer(c, policy)
    cons.seek(T, 0, 100)
    got = poll_until(cons, lambda g: False, polls=4)
    assert E.OFFSET_OUT_OF_RANGE in [e[3] for e in cons.errors]
    assert [r.offset for r in got] == offsets
    assert cons.position(T) == 5


# -- resets in flight (OffsetFetcherTest), with the answer delayed ----------------------------
def _reset_in_flight(policy: str, action):
    """A consumer (auto.offset.reset=``policy``) resets t-0; ``action(consumer)`` runs while
    its ListOffsets is in flight (the answer is delayed 50 ms)."""
    c = _cluster(5)
    cons, _sent = _consumer(c, policy)
    cons._refresh_metadata(1000)
    c.delay(50, "ListOffsetsResponse", dst=cons.client_id)
    c.at(c.now + 20, lambda _c: _while_in_flight(cons, "list_offsets", action))
    cons._update_fetch_positions(1000)
    assert cons.in_flight_action_ran
    return cons


def _while_in_flight(cons, kind: str, action) -> None:
    assert kind in cons.client.pending.values()  # the request is still unanswered
    action(cons)
    cons.in_flight_action_ran = True


def test_seek_with_in_flight_reset():
    """testSeekWithInFlightReset: the ListOffsets answer after a user seek is discarded."""
    cons = _reset_in_flight("latest", lambda cons: cons.seek(T, 0, 2))
    assert cons.position(T) == 2 and not cons.subscriptions.is_offset_reset_needed(TP0)


def test_change_reset_with_in_flight_reset():
    """testChangeResetWithInFlightReset: a LATEST answer is discarded once EARLIEST is asked."""
    cons = _reset_in_flight(
        "latest",
        lambda cons: cons.subscriptions.request_offset_reset(TP0, OffsetResetStrategy.EARLIEST),
    )
    subs = cons.subscriptions
    assert subs.is_offset_reset_needed(TP0)
    assert subs.reset_strategy(TP0) is OffsetResetStrategy.EARLIEST


def test_idempotent_reset_with_in_flight_reset():
    """testIdempotentResetWithInFlightReset: asking LATEST again keeps the answer."""
    cons = _reset_in_flight(
        "latest",
        lambda cons: cons.subscriptions.request_offset_reset(TP0, OffsetResetStrategy.LATEST),
    )
    assert not cons.subscriptions.is_offset_reset_needed(TP0) and cons.position(T) == 5


# -- paused partitions and max.poll.records, cluster-level -------------------------------------
def _consumer_over(records: int, partitions: int = 1, **config):
    c = _cluster(records, partitions)
    return (c, *_consumer(c, **config))


def test_fetch_on_paused_and_resumed_partition():
    """testFetchOnCompletedFetchesForPausedAndResumedPartitions / testFetchOnPausedPartition: a
    paused partition is not fetched and returns nothing; once resumed its records come, once."""
    _c, cons, sent = _consumer_over(3)
    cons._update_fetch_positions(500)
    cons.subscriptions.pause(TP0)
    assert cons.poll(300) == [] and of_type(sent, FetchRequest) == []
    assert cons.position(T) == 0
    cons.subscriptions.resume(TP0)
    assert [r.offset for r in cons.poll(500)] == [0, 1, 2]
    assert cons.poll(300) == [] and cons.position(T) == 3


def test_partial_fetch_with_paused_partitions():
    """testPartialFetchWithPausedPartitions: max.poll.records 2 over 3 records: 2 records,
    nothing while paused, then the last one."""
    _c, cons, _sent = _consumer_over(3, max_poll_records=2)
    assert [r.offset for r in cons.poll(500)] == [0, 1]
    cons.subscriptions.pause(TP0)
    assert cons.poll(300) == [] and cons.position(T) == 2
    cons.subscriptions.resume(TP0)
    assert [r.offset for r in cons.poll(500)] == [2]


def test_fetch_max_poll_records():
    """testFetchMaxPollRecords: max.poll.records 2 from offset 1 of 6 records: 1-2, 3-4, 5, in
    order, each poll moving the position just past what it returned."""
    _c, cons, _sent = _consumer_over(6, max_poll_records=2)
    cons._update_fetch_positions(500)
    cons.seek(T, 0, 1)
    polls = []
    for _ in range(3):
        polls.append([r.offset for r in cons.poll(500)])
        polls.append(cons.position(T))
    assert polls == [[1, 2], 3, [3, 4], 5, [5], 6]


def test_fetch_max_poll_records_no_fetch_while_records_are_buffered():
    """testFetchMaxPollRecords: after returning 2 of 3 fetched records, the next poll returns
    the third without a new fetch (AbstractFetch.fetchablePartitions skips buffered ones)."""
    _c, cons, sent = _consumer_over(3, max_poll_records=2)
    assert [r.offset for r in cons.poll(500)] == [0, 1]
    fetches = len(of_type(sent, FetchRequest))
    assert [r.offset for r in cons.poll(500)] == [2]
    assert len(of_type(sent, FetchRequest)) == fetches


def test_fetch_max_poll_records_unaligned():
    """testFetchMaxPollRecordsUnaligned (KAFKA-15836): 3 records in each of 2 partitions with
    max.poll.records 2: three polls of exactly 2, every record once, in offset order per
    partition. As in Kafka's test both answers are in the fetch buffer before each collect:
    the poll loop returns at the first answer with records, so the test lets the other one
    land (c.run) before the next poll."""
    c, cons, _sent = _consumer_over(6, partitions=2, max_poll_records=2)
    polls = []
    for _ in range(3):
        polls.append(cons.poll(500))
        c.run(100)
    assert [len(p) for p in polls] == [2, 2, 2]
    records = [r for p in polls for r in p]
    for p in (0, 1):
        assert [r.offset for r in records if r.partition == p] == [0, 1, 2]
    assert cons.poll(300) == []


def test_fetch_after_partition_with_fetched_records_is_unassigned():
    """testFetchAfterPartitionWithFetchedRecordsIsUnassigned (KAFKA-5097): after tp0 is swapped
    for tp1, tp0's records not yet returned never come back."""
    _c, cons, _sent = _consumer_over(10, partitions=2, max_poll_records=2)
    cons.subscriptions.assign_from_user([TP0])
    assert [(r.partition, r.offset) for r in cons.poll(500)] == [(0, 0), (0, 1)]
    cons.subscriptions.assign_from_user([TP1])
    cons.seek(T, 1, 3)
    got = poll_until(cons, lambda g: len(g) >= 2, polls=2)
    assert [(r.partition, r.offset) for r in got] == [(1, 3), (1, 4)]
    assert cons.position(T, 1) == 5


def test_assign_replaces_the_assignment():
    """KafkaConsumer.assign: the assignment becomes the partitions given (SubscriptionState
    .assignFromUser), not those plus the earlier ones; a partition kept keeps its position, and
    the buffered records of one dropped are dropped."""
    _c, cons, _sent = _consumer_over(10, partitions=2, max_poll_records=2)
    cons.assign(T, [0])
    assert [(r.partition, r.offset) for r in cons.poll(500)] == [(0, 0), (0, 1)]
    cons.assign(T, [1])
    assert cons.assignment == [TP1] and cons.fetch_collector.fetch_buffer == []
    assert [(r.partition, r.offset) for r in cons.poll(500)] == [(1, 0), (1, 1)]
    cons.assign([TP0, TP1])
    assert cons.assignment == [TP0, TP1] and cons.position(T, 1) == 2
    assert cons.position(T, 0) is None   # assigned anew: no position until the next poll


def test_records_of_each_partition_come_in_offset_order_once():
    """Across polls and partitions (leaders 1, 2, 3): every record once, each partition's in
    offset order from 0, and each record below the HW served with it."""
    c, cons, _sent = _consumer_over(30, partitions=3, max_poll_records=4)
    p = c.producer(acks="all")
    got = []
    for i in range(8):
        got += cons.poll(300)
        p.send(T, f"x{i}", partition=i % 3)
    total = sum(c.high_watermark(T, part) for part in range(3))
    # each poll returns at the first answer with records (at most 4): poll until all came
    got += poll_until(cons, lambda g: len(got) + len(g) >= total, polls=20)
    for part in range(3):
        offsets = [r.offset for r in got if r.partition == part]
        assert offsets == list(range(len(offsets)))
        assert len(offsets) == c.high_watermark(T, part)
    assert all(r.offset < r.served_hw for r in got)


# -- KIP-320: position validation (OffsetFetcherTest), cluster-level ---------------------------
def _send_x3_x4(c) -> None:
    p = c.producer(acks="all")
    p.send(T, "x3", partition=0)
    p.send(T, "x4", partition=0)
    p.flush()


def _read_three_then_move_leader():
    """A consumer reads offsets 0-2 (epoch 0) from leader 1; broker 1 shuts down cleanly, a
    follower leads at epoch 1 and takes offsets 3-4."""
    c = _cluster(3)
    cons, sent = _consumer(c, "earliest")
    assert [r.offset for r in poll_until(cons, lambda g: len(g) >= 3)] == [0, 1, 2]
    assert cons.subscriptions.position(TP0) == FetchPosition(3, 0, LeaderAndEpoch(1, 0))
    c.shutdown(1)
    assert c.run_until(lambda cl: cl.leader(T) not in (-1, 1), 30000)
    _send_x3_x4(c)
    return c, cons, sent


def test_truncation_detected_validates_before_fetching():
    """testTruncationDetected: after a leader change the position (3, epoch 0) awaits
    validation; no fetch is sent until OffsetsForLeaderEpoch(current 1, epoch 0) answers; then
    fetching resumes at 3 and the position takes the new records' epoch."""
    c, cons, sent = _read_three_then_move_leader()
    leader = c.leader(T)
    cons._refresh_metadata(1000)  # the metadata names epoch 1
    c.hold("OffsetsForLeaderEpochResponse", dst=cons.client_id)
    before = len(sent)
    assert cons.poll(300) == []
    assert cons.subscriptions.awaiting_validation(TP0)
    ((broker, req),) = of_type(sent[before:], OffsetsForLeaderEpochRequest)
    assert broker == leader and req.partitions == ((T, 0, 1, 0),)
    assert of_type(sent[before:], FetchRequest) == []
    c.release()
    got = poll_until(cons, lambda g: len(g) >= 2)
    assert [(r.offset, r.value) for r in got] == [(3, "x3"), (4, "x4")]
    assert not cons.subscriptions.awaiting_validation(TP0)
    position = cons.subscriptions.position(TP0)
    assert (position.offset, position.offset_epoch) == (5, 1)


def test_offset_validation_request_grouping():
    """testOffsetValidationRequestGrouping: one OffsetsForLeaderEpoch request per leader, with
    exactly the partitions it leads; every position validated."""
    c = _cluster(8, partitions=4)
    cons, sent = _consumer(c, "earliest")
    cons._refresh_metadata(1000)
    subs = cons.subscriptions
    for tp in subs.assigned_partitions_list():
        subs.seek_unvalidated(tp, FetchPosition(0, 0, LeaderAndEpoch(cons.leaders[tp], 0)))
    cons.offset_fetcher.validate_positions_if_needed(1000)  # validatePositionsIfNeeded
    requests = of_type(sent, OffsetsForLeaderEpochRequest)
    assert len(requests) == len({cons.leaders[tp] for tp in subs.assignment}) == 3
    for broker, req in requests:
        assert sorted((t, p) for t, p, _c, _e in req.partitions) == sorted(
            tp for tp in subs.assignment if cons.leaders[tp] == broker
        )
    assert not any(subs.awaiting_validation(tp) for tp in subs.assignment)


def _validate(policy: str, position: FetchPosition):
    """A consumer (auto.offset.reset ``policy``) validates ``position`` on t-0, whose leader 1
    holds offsets 0-9 of epoch 0."""
    c = _cluster(10)
    cons, _sent = _consumer(c, policy)
    cons._refresh_metadata(1000)
    cons.subscriptions.seek_unvalidated(TP0, position)
    assert cons.subscriptions.awaiting_validation(TP0)
    return cons


def test_offset_validation_trigger_log_truncation_for_bad_offset_with_undefined_reset_policy():
    """testOffsetValidationTriggerLogTruncationForBadOffsetWithUndefinedResetPolicy: epoch 0
    ends at 10 on the leader, below the position 20: LogTruncationException with the fetch
    position and the divergent offset; the partition still awaits validation."""
    cons = _validate("none", FetchPosition(20, 0, LeaderAndEpoch(1, 0)))
    with pytest.raises(LogTruncationException) as err:
        cons.offset_fetcher.validate_positions_if_needed(1000)
    assert err.value.offset_out_of_range_partitions == {TP0: 20}
    assert err.value.divergent_offsets == {TP0: (10, 0)}
    assert cons.subscriptions.awaiting_validation(TP0)


@pytest.mark.parametrize("policy", ["earliest", "none"])
def test_offset_validation_reset_position_for_undefined_epoch(policy):
    """testOffsetValidationresetPositionForUndefinedEpochWith(Un)DefinedResetPolicy: the leader
    knows no epoch 3 (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET): with a reset policy the
    partition is reset; without, LogTruncationException without divergent offset."""
    cons = _validate(policy, FetchPosition(5, 3, LeaderAndEpoch(1, 0)))
    subs = cons.subscriptions
    if policy == "none":
        with pytest.raises(LogTruncationException) as err:
            cons.offset_fetcher.validate_positions_if_needed(1000)
        assert err.value.offset_out_of_range_partitions == {TP0: 5}
        assert err.value.divergent_offsets == {}
        assert subs.awaiting_validation(TP0)
    else:
        cons.offset_fetcher.validate_positions_if_needed(1000)
        assert not subs.awaiting_validation(TP0) and subs.is_offset_reset_needed(TP0)


def test_offset_validation_handles_seek_with_inflight_offset_for_leader_request():
    """testOffsetValidationHandlesSeekWithInflightOffsetForLeaderRequest: the answer for
    position 0 is ignored after a seek to 5: still awaiting validation."""
    cons = _validate("earliest", FetchPosition(0, 0, LeaderAndEpoch(1, 0)))
    c = cons.cluster

    def seek(cons):
        cons.subscriptions.seek_unvalidated(TP0, FetchPosition(5, 0, LeaderAndEpoch(1, 0)))

    c.delay(50, "OffsetsForLeaderEpochResponse", dst=cons.client_id)
    c.at(c.now + 20, lambda _c: _while_in_flight(cons, "validate", seek))
    cons.offset_fetcher.validate_positions_if_needed(1000)
    assert cons.in_flight_action_ran
    assert cons.subscriptions.awaiting_validation(TP0)
    assert cons.position(T) == 5


def test_fenced_leader_epoch_refreshes_metadata_and_resumes():
    """testHandleFetchResponseError(FENCED_LEADER_EPOCH) end to end: while the consumer's
    metadata still says (leader 1, epoch 0), a reassignment to [2, 3, 1] (epoch 1) and a
    preferred election make broker 2 leader at epoch 2. The fetch to broker 1 at epoch 0 is
    fenced; the consumer refreshes metadata, validates at the new leader and reads on from 3,
    losing and repeating nothing."""
    c = _cluster(3)
    cons, sent = _consumer(c, "earliest")
    assert [r.offset for r in poll_until(cons, lambda g: len(g) >= 3)] == [0, 1, 2]
    assert c.admin().alter_partition_reassignments({TP0: [2, 3, 1]}) == {TP0: "NONE"}
    c.run(1000)
    c.elect(T, [0])
    assert c.run_until(lambda cl: cl.leader(T) == 2, 30000)
    assert c.inspect.partition_state(T, 0)["leader_epoch"] == 2
    _send_x3_x4(c)
    before = len(sent)
    got = poll_until(cons, lambda g: len(g) >= 2)
    assert [e[3] for e in cons.errors] == [E.FENCED_LEADER_EPOCH]
    assert [(r.offset, r.value) for r in got] == [(3, "x3"), (4, "x4")]
    assert cons.subscriptions.position(TP0).current_leader == LeaderAndEpoch(2, 2)
    kinds = [(type(m).__name__, b) for b, m in sent[before:]]
    assert kinds[:2] == [("FetchRequest", 1), ("MetadataRequest", kinds[1][1])]
    ((broker, req),) = of_type(sent[before:], OffsetsForLeaderEpochRequest)
    assert broker == 2 and req.partitions == ((T, 0, 2, 0),)


# -- preferred read replica (KIP-392), cluster-level -------------------------------------------
def _rack_cluster(**config):
    kw = {"topic": T, "assignment": [[1, 2, 3]], "records": 5, "settle_ms": 1000}
    c = make_cluster(seed=1, racks=RACKS, config=SELECTOR, kafka_version=VERSION, **kw)
    cons = c.consumer(client_rack="c", auto_offset_reset="earliest", **config)
    sent = capture(cons)
    cons.assign(T)
    assert [r.offset for r in cons.poll(1000)] == [0, 1, 2, 3, 4]
    assert cons.fetching_from(T) == 3
    return c, cons, sent


def test_preferred_read_replica_lease_expires_after_metadata_max_age():
    """The preferred read replica's lease is metadata.max.age.ms (FetchCollector: expire =
    now + metadata.metadataExpireMs()): within it fetches go to the replica; after it the
    leader is asked again and names the replica again."""
    c, cons, sent = _rack_cluster(metadata_max_age_ms=3000)
    p = c.producer(acks="all")
    before = len(sent)
    p.send(T, "a", partition=0)
    p.flush()
    assert [r.value for r in poll_until(cons, lambda g: g)] == ["a"]
    assert {b for b, _m in of_type(sent[before:], FetchRequest)} == {3}
    c.run(4000)
    assert cons.fetching_from(T) == 1
    before = len(sent)
    p.send(T, "b", partition=0)
    p.flush()
    assert [r.value for r in poll_until(cons, lambda g: g)] == ["b"]
    targets = [b for b, _m in of_type(sent[before:], FetchRequest)]
    assert targets[0] == 1 and targets[-1] == 3


def test_dead_preferred_read_replica_falls_back_to_the_leader():
    """testFetchDisconnectedShouldClearPreferredReadReplica end to end, with
    AbstractFetch.selectReadReplica (a replica not online in the metadata: use the leader):
    the preferred replica crashes. Until the cluster notices (zookeeper.session.timeout.ms,
    18 s) the leader keeps naming it (ReplicaManager.findPreferredReadReplica: an in-sync
    replica with the fetch offset) and each fetch to it fails (and forgets it, 3.4+), so the
    consumer reads nothing; once its metadata no longer shows broker 3 it reads on from the
    leader, long before the replica's lease (metadata.max.age.ms, 5 min) ends."""
    c, cons, _sent = _rack_cluster()
    c.crash(3)
    p = c.producer(acks="1")
    for i in range(3):
        p.send(T, f"x{i}", partition=0)
    p.flush()
    got = []
    for _ in range(60):
        got += cons.poll(500)
        if got:
            break
        assert 3 in cons.nodes  # nothing read while the metadata still shows broker 3
        c.run(500)
    assert [r.value for r in got] == ["x0", "x1", "x2"]
    assert 3 not in cons.nodes and cons.fetching_from(T) == 1
