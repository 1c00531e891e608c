"""Kafka's producer-internals unit tests, ported: RecordAccumulatorTest and SenderTest (and
the idempotent-producer part of what TransactionManagerTest checks through them), from
clients/src/test/java/org/apache/kafka/clients/producer/internals/ at tag 3.7.0.

How they are adapted to kafkasim:

- The accumulator tests drive ``RecordAccumulator`` alone (as tests/test_record_accumulator.py
  does): every record counts ``RECORD_SIZE`` (100) bytes, the "metadata" is a dict of leaders
  (-1: unknown), ``drain`` is given the nodes to drain. Kafka's node1 leads partitions 0 and 1
  of "test", node2 partition 2 (nodes 1 and 2 here).
- The sender tests use a real ``Cluster`` (3.7, three brokers, 1 ms links without jitter) as
  Kafka's SenderTest uses a MockClient: every ProduceRequest is *held* on the wire, so the
  broker never sees it, and the test answers it by handing a made-up ``ProduceResponse`` to
  ``Sender.handle_produce_response`` (Kafka's ``client.respond``). ``sender.runOnce()`` is
  ``c.run(0)`` (the events due now), ``time.sleep(ms)`` is ``c.run(ms)``. Metadata requests
  are not held: the brokers answer them. Kafka's constants: REQUEST_TIMEOUT 5000,
  RETRY_BACKOFF_MS 50, DELIVERY_TIMEOUT_MS 1500 (set on the accumulator and sender, as Kafka's
  test builds them, since the producer's config check wants it >= request.timeout.ms).
  Kafka's ``sendIdempotentProducerResponse(expectedSequence, ...)`` answers the oldest request
  and checks the base sequence the request carries, as sent (an epoch bump since rewrites the
  batch, not the request already on the wire): ``SenderHarness.respond_first`` here. The
  tests check the batches' sequences, the producer epoch and ``sequence_number``.
- Leader moves of KIP-951 are tested in tests/test_kip951_produce_leader.py, the KIP-580 backoff
  in tests/test_kip580_retry_backoff.py, and testFull, testLinger, testNextReadyCheckDelay,
  testRetryBackoff, testExponentialRetryBackoff, testExpiredBatches in
  tests/test_record_accumulator.py; not repeated here.

Left out (kafkasim does not model the feature): RecordAccumulatorTest testAppendLarge* /
testSplit* / testIdempotenceWithOldMagic (record sizes, compression, magic, batch splitting),
testPartialDrain and the drain-index rotation of testDrainBatches (max.request.size),
the muted half of testExpiredBatchesRetry, testFlush / testAwaitFlushComplete / testAbort*
(no flush or abort on the accumulator), testStressfulSituation, the partitioner tests
(testStickyBatches, test*Partitioner*),
testRecordsDrainedWhenTransactionCompleting, testReadyAndDrainWhenABatchIsBeingRetried (no
leader epoch on the accumulator's batches). SenderTest: metrics, quotas, down-conversion,
InitProducerId and everything transactional, authorization, splitting on MESSAGE_TOO_LARGE,
per-record errors (testRecordErrorPropagatedToApplication), close/forceClose,
testRetryWhenProducerIdChanges (its InitProducerId answer is queued on the MockClient, no epoch
bump asks for it), the transactional testTransactionalUnknownProducerHandlingWhenRetentionLimit
Reached, testResetNextBatchExpiry (poll timeouts).
TransactionManagerTest: testDefaultSequenceNumber and testSequenceNumberOverflow are here; its
other idempotent-producer cases are in tests/test_transaction_manager_kafka.py.
"""

from __future__ import annotations

import pytest

from kafkasim.core.messages import ProduceResponse
from kafkasim.runtime.clients.producer_batch import RECORD_SIZE
from kafkasim.runtime.clients.producer_metadata import RetryBackoff
from kafkasim.runtime.clients.record_accumulator import RecordAccumulator
from kafkasim.runtime.clients.transaction_manager import (
    SHORT_MAX,
    ProducerIdAndEpoch,
    TransactionManager,
)
from kafkasim.runtime.cluster import Cluster

# ------------------------------------------------------------------ RecordAccumulatorTest

TP1, TP2, TP3 = ("test", 0), ("test", 1), ("test", 2)
NODE1, NODE2 = 1, 2
LEADERS = {TP1: NODE1, TP2: NODE1, TP3: NODE2}
BATCH_SIZE = 10 * RECORD_SIZE - 1  # "batchSize = 1025": the records never fill it exactly


class Appender:
    """KafkaProducer.send's append of one record with a fresh record id."""

    def __init__(self, accum: RecordAccumulator) -> None:
        self.accum = accum
        self.next_id = 0

    def __call__(self, tp, now: int, n: int = 1) -> None:
        for _ in range(n):
            self.accum.append(tp, self.next_id, self.next_id + 1, now)
            self.next_id += 1


@pytest.mark.parametrize("mute", [False, True])
@pytest.mark.parametrize("delivery_timeout_ms", [3200, 2**31 - 1])
def test_expired_batch_single(delivery_timeout_ms, mute):
    """testExpiredBatchSingle / testExpiredBatchSingleMaxValue (doExpireBatchSingle): ready
    once linger.ms passed, not expired then, expired at delivery.timeout.ms whether the
    partition is muted or not (expiredBatches looks at no mute), after which no node is
    ready."""
    linger = 300
    accum = RecordAccumulator(BATCH_SIZE, linger, RetryBackoff.of(100), delivery_timeout_ms)
    append = Appender(accum)
    now = 0
    append(TP1, now)
    assert not accum.ready(LEADERS, now).ready_nodes, "No partition should be ready."
    now += linger
    assert list(accum.ready(LEADERS, now).ready_nodes) == [NODE1]
    assert accum.expired_batches(now) == [], "not expired when just linger has passed"
    if mute:
        accum.mute_partition(TP1)
    now += delivery_timeout_ms - linger
    assert len(accum.expired_batches(now)) == 1
    assert not accum.ready(LEADERS, now).ready_nodes, "No partitions should be ready."


def test_expired_batches_retry():
    """testExpiredBatchesRetry (not muted): a retried batch whose delivery timeout has passed
    is drained if its backoff is over, so expiredBatches finds nothing to expire."""
    linger, rtt, delivery = 3000, 1000, 3200
    accum = RecordAccumulator(BATCH_SIZE, linger, RetryBackoff.of(100), delivery)
    Appender(accum)(TP1, 0)
    now = linger
    ready = accum.ready(LEADERS, now).ready_nodes
    assert list(ready) == [NODE1]
    drained = accum.drain(LEADERS, ready, now)
    assert len(drained[NODE1]) == 1, "There should be only one batch."
    now += rtt
    accum.reenqueue(drained[NODE1][TP1], now)
    now += delivery - rtt
    accum.drain(LEADERS, {NODE1: None}, now)
    assert accum.expired_batches(now) == []


def test_soon_to_expire_batches_are_picked_up_for_expiry():
    """testSoonToExpireBatchesArePickedUpForExpiry: nothing drains before linger.ms; after it
    one batch; a batch appended later drains once its own linger passed."""
    linger = 500
    accum = RecordAccumulator(BATCH_SIZE, linger, RetryBackoff.of(100), 120_000)
    append = Appender(accum)
    append(TP1, 0)
    assert accum.drain(LEADERS, accum.ready(LEADERS, 0).ready_nodes, 0) == {}
    now = linger + 1
    drained = accum.drain(LEADERS, accum.ready(LEADERS, now).ready_nodes, now)
    assert len(drained) == 1, "A batch did not drain after linger"
    append(TP2, now)
    now += 4 * linger
    drained = accum.drain(LEADERS, accum.ready(LEADERS, now).ready_nodes, now)
    assert len(drained) == 1 and list(drained[NODE1]) == [TP2]


def test_exponential_retry_backoff_leader_change():
    """testExponentialRetryBackoffLeaderChange (3.7, KIP-580): each retry backs off
    retry.backoff.ms * 2^(attempt-1) +/- 20 % (capped at retry.backoff.max.ms); in 3.7 a
    retry after a leader change (here partition 0 moves to node2) still backs off. Kafka's
    clock does not move: every reenqueue happens at ``initial``."""
    linger = (2**31 - 1) // 16
    accum = RecordAccumulator(
        1024, linger, RetryBackoff.of(100, 1000, seed="leader-change"), 2**31 - 1
    )
    changed = {**LEADERS, TP1: NODE2}
    initial = 0
    Appender(accum)(TP1, initial)

    def drained(leaders, node, now):
        return len(accum.drain(leaders, {node: None}, now).get(node, {}))

    # no backoff for the initial attempt
    batch = accum.drain(LEADERS, {NODE1: None}, initial + linger + 1)[NODE1][TP1]
    for retry, (leaders, node) in enumerate(
        [(LEADERS, NODE1), (LEADERS, NODE1), (changed, NODE2), (changed, NODE2)]
    ):
        accum.reenqueue(batch, initial)
        lower = int(100 * 2**retry * 0.8)
        upper = 1000 if retry == 3 else int(100 * 2**retry * 1.2)
        assert drained(leaders, node, initial + lower - 1) == 0, retry  # should back off
        assert drained(leaders, node, initial + upper + 1) == 1, retry  # should not


def test_drain_with_a_node_that_doesnt_host_any_partitions():
    """testDrainWithANodeThatDoesntHostAnyPartitions: draining node2, which leads nothing,
    returns no batch."""
    accum = RecordAccumulator(10, 10, RetryBackoff.of(100), 120_000)
    Appender(accum)(TP1, 0)
    assert not accum.drain({TP1: NODE1}, {NODE2: None}, 100).get(NODE2)
    assert len(accum.get_deque(TP1)) == 1


def test_drain_on_a_node_when_it_ceases_to_be_a_leader():
    """testDrainOnANodeWhenItCeasesToBeALeader, its second case: partition 0's metadata no
    longer has a leader, so node1 drains nothing of it while node2 drains partition 1."""
    accum = RecordAccumulator(10, 10, RetryBackoff.of(100), 120_000)
    append = Appender(accum)
    append(TP1, 0)
    append(TP2, 0)
    drained = accum.drain({TP1: -1, TP2: NODE2}, {NODE1: None, NODE2: None}, 100)
    assert not drained.get(NODE1)
    assert list(drained[NODE2]) == [TP2]


def test_muted_partitions():
    """testMutedPartitions: a muted partition (RecordAccumulator.mutePartition) is not ready
    and not drained; unmuted, it is both."""
    accum = RecordAccumulator(BATCH_SIZE, 10, RetryBackoff.of(100), 120_000)
    append = Appender(accum)
    for _ in range(9):
        append(TP1, 0)
        assert not accum.ready(LEADERS, 0).ready_nodes, "No partitions should be ready."
    now = 2000
    accum.mute_partition(TP1)
    assert not accum.ready(LEADERS, now).ready_nodes, "No node should be ready"
    accum.unmute_partition(TP1)
    ready = accum.ready(LEADERS, now).ready_nodes
    assert ready, "The batch should be ready"
    accum.mute_partition(TP1)
    assert not accum.drain(LEADERS, ready, now).get(NODE1), "No batch should have been drained"
    accum.unmute_partition(TP1)
    assert accum.drain(LEADERS, ready, now)[NODE1], "The batch should have been drained."


def test_drain_takes_every_partition_of_a_ready_node():
    """RecordAccumulator.drainBatchesForOneNode @3.7.0 (as testDrainBatches relies on: drain is
    given nodes, and checks only mute, leader, backoff, size and sequence, never linger.ms):
    once node1 is ready because partition 0's batch is full, partition 1's batch on the same
    node goes in the same request, although its linger.ms has not passed."""
    accum = RecordAccumulator(BATCH_SIZE + 1, 1000, RetryBackoff.of(100), 120_000)
    append = Appender(accum)
    append(TP1, 0, n=10)  # full
    append(TP2, 0)  # lingering
    ready = accum.ready(LEADERS, 0).ready_nodes
    assert list(ready) == [NODE1]
    drained = accum.drain(LEADERS, ready, 0)
    assert list(drained[NODE1]) == [TP1, TP2]


# ------------------------------------------------------------------------------ SenderTest

TP0, TPB = ("t", 0), ("t", 1)
REQUEST_TIMEOUT = 5000
RETRY_BACKOFF_MS = 50
DELIVERY_TIMEOUT_MS = 1500


class SenderHarness:
    """SenderTest's setup: a producer whose ProduceRequests are held (MockClient), answered by
    the test. Both partitions of "t" are led by broker 1 unless ``same_leader`` is False. The
    cluster is 3.7 unless ``version`` says otherwise."""

    def __init__(
        self,
        *,
        same_leader: bool = True,
        delivery_timeout_ms: int | None = DELIVERY_TIMEOUT_MS,
        version: str = "3.7",
        **producer,
    ) -> None:
        c = Cluster(3, seed=1, kafka_version=version, latency_ms=1, jitter_ms=0)
        c.create_topic("t", 2, 3, assignment=[[1, 2, 3], [1, 2, 3] if same_leader else [2, 3, 1]])
        cfg = {
            "acks": "all",
            "linger_ms": 0,
            "retry_backoff_ms": RETRY_BACKOFF_MS,
            "request_timeout_ms": REQUEST_TIMEOUT,
            **producer,
        }
        self.c = c
        self.p = p = c.producer("p", **cfg)
        c.run(500)
        assert p.leaders == {TP0: 1, TPB: 1 if same_leader else 2}
        if delivery_timeout_ms is not None:
            p.accumulator.delivery_timeout_ms = p.sender.delivery_timeout_ms = delivery_timeout_ms
        self.tm = p.transaction_manager
        c.hold(type="ProduceRequest")

    def append(self, tp=TP0, n: int = 1):
        """appendToAccumulator: ``n`` records to ``tp``; the first one's result."""
        return self.p.send_many("t", [f"v{i}" for i in range(n)], partition=tp[1])[0]

    def run_once(self, ms: int = 0) -> None:
        self.c.run(ms)

    def requests(self) -> list[tuple[int, dict]]:
        """The requests in flight, oldest first: (correlation id, {tp: batch})."""
        return [(corr, entry[3]) for corr, entry in sorted(self.p.in_flight.items())]

    def respond(self, corr: int, *parts, log_start_offset: int = -1) -> None:
        """client.respondToRequest: ``parts`` (tp, error, base offset), each with the log
        start offset ``log_start_offset``."""
        self.p.sender.handle_produce_response(
            ProduceResponse(corr, tuple((tp[0], tp[1], err, off) for tp, err, off in parts),
                            log_start_offsets=(log_start_offset,) * len(parts))
        )

    def respond_first(self, tp, err: str, offset: int, expected_seq: int | None = None,
                      log_start_offset: int = -1) -> None:
        """sendIdempotentProducerResponse: answer the oldest request, whose batch of ``tp``
        must carry ``expected_seq``; the answer's log start offset ``log_start_offset``."""
        corr, _ = self.requests()[0]
        if expected_seq is not None:   # the sequence the request carries, as sent
            assert self.sent_header(corr, tp)[6] == expected_seq
        self.respond(corr, (tp, err, offset), log_start_offset=log_start_offset)

    def sent_header(self, corr: int, tp) -> tuple:
        """The partition's entry of request ``corr`` as it went on the wire (an epoch bump
        rewrites the batch, not the request already sent): (topic, partition, record ids,
        sizes, producer id, epoch, base sequence)."""
        (msg,) = [env.msg for env in self.c.transport.network.held
                  if type(env.msg).__name__ == "ProduceRequest" and env.msg.correlation_id == corr]
        return next(h for h in msg.partitions if (h[0], h[1]) == tp)

    def in_flight_batches(self, tp) -> list:
        """sender.inFlightBatches(tp): its unanswered batches on the wire."""
        return [
            b
            for _, bs in self.requests()
            for t, b in bs.items()
            if t == tp and b.produce_future.status == "pending"
        ]

    def metadata_requests(self) -> int:
        return sum(
            1
            for r in self.c.trace.rows
            if r[1] == "send" and r[2] == "p" and r[5][0] == "MetadataRequest"
        )


def test_simple():
    """testSimple: one record sent, answered NONE at offset 0: done with it, nothing in
    flight."""
    h = SenderHarness()
    r = h.append()
    h.run_once()
    assert len(h.requests()) == 1 and len(h.in_flight_batches(TP0)) == 1
    h.respond(h.requests()[0][0], (TP0, "NONE", 0))
    assert r.status == "acked" and r.offset == 0
    assert h.requests() == [] and h.in_flight_batches(TP0) == []


def test_retries():
    """testRetries (retries=1, not idempotent): a disconnect fails the request with
    NetworkException and the batch is resent and acked; a second batch disconnected twice
    (retries + 1 sends) fails with NETWORK_EXCEPTION."""
    h = SenderHarness(retries=1, enable_idempotence=False)
    p = h.p
    r = h.append()
    h.run_once()
    ((corr, _),) = h.requests()
    p.on_disconnect(
        1, next(env.msg for env in h.c.transport.network.held if env.msg.correlation_id == corr)
    )
    assert h.requests() == []
    h.run_once(300)  # metadata again, backoff, resend
    ((corr, _),) = h.requests()
    h.respond(corr, (TP0, "NONE", 0))
    assert r.status == "acked" and r.offset == 0 and r.attempts == 2

    r = h.append()
    h.run_once()
    for i in range(2):
        ((corr, _),) = h.requests()
        p.on_disconnect(
            1, next(env.msg for env in h.c.transport.network.held if env.msg.correlation_id == corr)
        )
        assert h.in_flight_batches(TP0) == []
        h.run_once(300)
        assert len(h.in_flight_batches(TP0)) == (1 if i == 0 else 0)
    assert r.status == "failed" and r.error == "NETWORK_EXCEPTION"


def test_send_in_order():
    """testSendInOrder (max.in.flight.requests.per.connection 1: guaranteeMessageOrder, the
    partition is muted while its batch is in flight): partition 1's leader moves from broker 1
    to broker 2 while its first batch is unanswered; the second batch must not go to
    broker 2 until the first is answered."""
    h = SenderHarness(max_in_flight_requests_per_connection=1, enable_idempotence=False)
    h.append(TPB)
    h.run_once()
    assert len(h.in_flight_batches(TPB)) == 1
    h.run_once(900)
    h.append(TPB)
    h.p.leaders[TPB] = 2  # the metadata update: partition 1 now on broker 2
    h.run_once()
    assert len(h.requests()) == 1 and len(h.in_flight_batches(TPB)) == 1


def test_can_retry_without_idempotence():
    """testCanRetryWithoutIdempotence: the request carries no idempotent header; a
    non-retriable error (TOPIC_AUTHORIZATION_FAILED) fails the batch."""
    h = SenderHarness(enable_idempotence=False)
    r = h.append()
    h.run_once()
    ((corr, batches),) = h.requests()
    assert h.p.sender._batch_header(batches[TP0])[4:] == (-1, -1, -1)
    h.respond(corr, (TP0, "TOPIC_AUTHORIZATION_FAILED", -1))
    assert r.status == "failed" and r.error == "TOPIC_AUTHORIZATION_FAILED"
    assert h.requests() == [] and not h.p.accumulator.get_deque(TP0)


def test_idempotence_with_multiple_inflights():
    """testIdempotenceWithMultipleInflights: two requests of one partition in flight, sequences
    0 and 1; answered in order, each batch gets its offset."""
    h = SenderHarness()
    assert h.tm.sequence_number(TP0) == 0
    r1 = h.append()
    h.run_once()
    assert len(h.requests()) == 1 and h.tm.sequence_number(TP0) == 1
    r2 = h.append()
    h.run_once()
    assert len(h.requests()) == 2 and h.tm.sequence_number(TP0) == 2
    assert r1.status == r2.status == "pending"
    h.respond_first(TP0, "NONE", 0, expected_seq=0)
    assert len(h.requests()) == 1 and r1.status == "acked" and r1.offset == 0
    assert r2.status == "pending"
    h.respond_first(TP0, "NONE", 1, expected_seq=1)
    assert h.requests() == [] and r2.offset == 1


def test_idempotence_with_multiple_inflights_retried_in_order():
    """testIdempotenceWithMultipleInflightsRetriedInOrder: three requests in flight; the first
    fails LEADER_NOT_AVAILABLE, the next two OUT_OF_ORDER_SEQUENCE_NUMBER (not the next
    sequence: retried without an epoch bump). A fourth batch queued meanwhile is not drained;
    the three are resent one at a time in sequence order, then the fourth."""
    h = SenderHarness()
    rs = [h.append()]
    h.run_once()
    for _ in range(2):
        rs.append(h.append())
        h.run_once()
    assert len(h.requests()) == 3 and h.tm.sequence_number(TP0) == 3
    h.respond_first(TP0, "LEADER_NOT_AVAILABLE", -1, expected_seq=0)
    r4 = h.append()
    assert len(h.requests()) == 2
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1, expected_seq=1)
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1, expected_seq=2)
    h.run_once(300)  # metadata, retry backoff: only the first retry goes
    assert len(h.requests()) == 1
    assert h.tm.sequence_number(TP0) == 3, "the fourth batch was not drained"
    assert h.tm.producer_epoch == 0
    for seq in range(3):
        h.run_once(100)
        assert len(h.requests()) == 1 and len(h.in_flight_batches(TP0)) == 1, seq
        h.respond_first(TP0, "NONE", seq, expected_seq=seq)
        assert rs[seq].status == "acked" and rs[seq].offset == seq
    h.run_once(100)
    assert len(h.requests()) == 1
    h.respond_first(TP0, "NONE", 3, expected_seq=3)
    assert r4.offset == 3 and h.tm.producer_epoch == 0


def test_idempotence_first_fails_fatally_and_sequence_of_future_batches_is_adjusted():
    """testIdempotenceWithMultipleInflightsWhereFirstFailsFatallyAndSequenceOfFutureBatchesIs
    Adjusted: the first batch fails MESSAGE_TOO_LARGE (one record: not split, not retriable);
    the second, answered OUT_OF_ORDER_SEQUENCE_NUMBER, is resent from sequence 0 and acked."""
    h = SenderHarness()
    r1 = h.append()
    h.run_once()
    r2 = h.append()
    h.run_once()
    assert len(h.requests()) == 2 and h.tm.sequence_number(TP0) == 2
    h.respond_first(TP0, "MESSAGE_TOO_LARGE", -1, expected_seq=0)
    assert r1.status == "failed" and r1.error == "MESSAGE_TOO_LARGE"
    assert len(h.requests()) == 1
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1, expected_seq=1)
    assert len(h.requests()) == 0
    h.run_once(100)  # resend
    assert len(h.requests()) == 1
    h.respond_first(TP0, "NONE", 0, expected_seq=0)
    assert h.requests() == [] and r2.status == "acked" and r2.offset == 0


def test_epoch_bump_on_out_of_order_sequence_for_next_batch():
    """testEpochBumpOnOutOfOrderSequenceForNextBatch: a two-record batch acked (next sequence
    2); the next batch answered OUT_OF_ORDER_SEQUENCE_NUMBER is the next sequence: the epoch
    is bumped, the batch rewritten to sequence 0 (the partition's next is 1)."""
    h = SenderHarness()
    r1 = h.append(n=2)
    h.run_once()
    assert h.tm.sequence_number(TP0) == 2
    h.respond_first(TP0, "NONE", 0, expected_seq=0)
    r2 = h.append()
    h.run_once()
    assert len(h.requests()) == 1 and h.tm.sequence_number(TP0) == 3
    assert r1.offset == 0 and r2.status == "pending"
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1, expected_seq=2)
    h.run_once(100)
    assert h.tm.producer_epoch == 1
    assert h.tm.sequence_number(TP0) == 1
    (batch,) = h.in_flight_batches(TP0)  # firstInFlightSequence == 0
    assert (batch.epoch, batch.base_seq) == (1, 0)


def test_epoch_bump_on_out_of_order_sequence_for_next_batch_when_there_is_no_batch_in_flight():
    """testEpochBumpOnOutOfOrderSequenceForNextBatchWhenThereIsNoBatchInFlight: partitions 0
    and 1 each acked one batch; partition 0's second batch gets OUT_OF_ORDER_SEQUENCE_NUMBER:
    epoch 1, partition 0 from sequence 0. Partition 1 (nothing in flight) keeps its state
    (next sequence 1, stale epoch) until its next batch, which goes out with epoch 1 and
    sequence 0."""
    h = SenderHarness()
    h.append(TP0)
    h.run_once()
    h.respond_first(TP0, "NONE", 0, expected_seq=0)
    h.append(TPB)
    h.run_once()
    h.respond_first(TPB, "NONE", 0, expected_seq=0)
    h.append(TP0)
    h.run_once()
    assert h.tm.sequence_number(TP0) == 2
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1, expected_seq=1)
    h.run_once(100)
    assert h.tm.producer_epoch == 1 and h.tm.sequence_number(TP0) == 1
    h.respond_first(TP0, "NONE", 1, expected_seq=0)
    assert h.tm.sequence_number(TPB) == 1  # partition 1 - state is not changed
    h.append(TPB)
    h.run_once()
    (batch,) = h.in_flight_batches(TPB)
    assert (batch.epoch, batch.base_seq) == (1, 0)
    assert h.tm.sequence_number(TPB) == 1


def test_correct_handling_of_out_of_order_responses():
    """testCorrectHandlingOfOutOfOrderResponses: the second request's answer
    (OUT_OF_ORDER_SEQUENCE_NUMBER) comes first and its batch is requeued; then the first's
    (NOT_LEADER_OR_FOLLOWER): both requeued in sequence order, resent one at a time."""
    h = SenderHarness()
    r1 = h.append()
    h.run_once()
    r2 = h.append()
    h.run_once()
    (c1, _), (c2, _) = h.requests()
    h.respond(c2, (TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1))
    queued = h.p.accumulator.get_deque(TP0)
    assert [b.base_seq for b in queued] == [1]
    assert len(h.requests()) == 1
    h.respond(c1, (TP0, "NOT_LEADER_OR_FOLLOWER", -1))
    assert [b.base_seq for b in queued] == [0, 1]
    assert h.requests() == [] and r1.status == r2.status == "pending"
    h.run_once(300)
    assert len(h.requests()) == 1, "only one in flight once we are retrying"
    h.respond_first(TP0, "NONE", 0, expected_seq=0)
    assert r1.offset == 0
    h.run_once(100)
    h.respond_first(TP0, "NONE", 1, expected_seq=1)
    assert h.requests() == [] and r2.offset == 1 and h.tm.producer_epoch == 0


def test_correct_handling_of_out_of_order_responses_when_second_succeeds():
    """testCorrectHandlingOfOutOfOrderResponsesWhenSecondSucceeds: the second batch is acked
    first; the first, answered REQUEST_TIMED_OUT, is requeued, resent and acked."""
    h = SenderHarness()
    r1 = h.append()
    h.run_once()
    r2 = h.append()
    h.run_once()
    (c1, _), (c2, _) = h.requests()
    h.respond(c2, (TP0, "NONE", 1))
    assert r2.offset == 1 and r1.status == "pending"
    assert not h.p.accumulator.get_deque(TP0) and len(h.requests()) == 1
    h.respond(c1, (TP0, "REQUEST_TIMED_OUT", -1))
    assert [b.base_seq for b in h.p.accumulator.get_deque(TP0)] == [0]
    assert h.requests() == []
    h.run_once(100)
    assert len(h.requests()) == 1
    h.respond_first(TP0, "NONE", 0, expected_seq=0)
    assert r1.offset == 0 and h.requests() == [] and not h.p.accumulator.get_deque(TP0)


def test_expiry_of_unsent_batches_should_not_cause_unresolved_sequences():
    """testExpiryOfUnsentBatchesShouldNotCauseUnresolvedSequences: a batch that never left
    (its node unreachable: here its leader unknown) expires with TimeoutException; it had no
    sequence, so no epoch bump and the next batch still starts at sequence 0."""
    h = SenderHarness()
    h.c.hold(type="MetadataResponse")
    h.p.leaders[TP0] = -1
    r = h.append()
    h.run_once(10_000)
    assert r.status == "failed" and r.error == "TimeoutException"
    assert h.tm.producer_epoch == 0 and h.tm.sequence_number(TP0) == 0


def test_expiry_of_first_batch_should_not_cause_unresolved_sequences_if_future_batches_succeed():
    """testExpiryOfFirstBatchShouldNotCauseUnresolvedSequencesIfFutureBatchesSucceed: the first
    batch (in retry after REQUEST_TIMED_OUT) expires; the second (sequence 1) is then acked, so
    the sequence resolves: no epoch bump, and the third batch goes with epoch 0, sequence 2."""
    h = SenderHarness()
    r1 = h.append()
    h.run_once()
    h.run_once(1000)
    r2 = h.append()
    h.run_once()
    assert len(h.in_flight_batches(TP0)) == 2
    h.respond_first(TP0, "REQUEST_TIMED_OUT", -1, expected_seq=0)
    h.run_once(600)  # the first batch's retry expires (delivery.timeout.ms 1500)
    assert r1.status == "failed" and r1.error == "TimeoutException"
    r3 = h.append()
    h.run_once(20)
    assert r2.status == "pending"
    corr = next(corr for corr, bs in h.requests() if TP0 in bs and bs[TP0].base_seq == 1)
    h.respond(corr, (TP0, "NONE", 1))
    assert r2.offset == 1
    h.run_once()
    assert r3.status == "pending"
    (batch,) = h.in_flight_batches(TP0)
    assert (batch.epoch, batch.base_seq) == (0, 2)
    assert h.tm.producer_epoch == 0 and h.tm.sequence_number(TP0) == 3


def test_expiry_of_first_batch_should_cause_epoch_bump_if_future_batches_fail():
    """testExpiryOfFirstBatchShouldCauseEpochBumpIfFutureBatchesFail: the first batch (in retry
    after NOT_LEADER_OR_FOLLOWER) expires, its sequence unresolved; the second is answered
    OUT_OF_ORDER_SEQUENCE_NUMBER: one epoch bump (epoch 1), the second batch rewritten to
    sequence 0, the partition's next sequence 1."""
    h = SenderHarness()
    r1 = h.append()
    h.run_once()
    h.run_once(1000)
    r2 = h.append()
    h.run_once()
    assert len(h.requests()) == 2
    h.respond_first(TP0, "NOT_LEADER_OR_FOLLOWER", -1, expected_seq=0)
    h.run_once(1000)
    assert r1.status == "failed" and r1.error == "TimeoutException"
    h.append()
    h.run_once(20)
    assert r2.status == "pending"
    corr = next(corr for corr, bs in h.requests() if TP0 in bs and bs[TP0].base_seq == 1)
    h.respond(corr, (TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1))
    h.run_once(100)
    assert h.tm.producer_epoch == 1
    assert h.tm.sequence_number(TP0) == 1


def test_expiry_of_all_sent_batches_should_cause_unresolved_sequences():
    """testExpiryOfAllSentBatchesShouldCauseUnresolvedSequences: the only sent batch, in retry,
    expires; nothing is left to resolve the sequence, so the epoch is bumped (to 1) and the
    producer id kept."""
    h = SenderHarness()
    pid = h.p.producer_id
    r = h.append()
    h.run_once()
    h.respond_first(TP0, "NOT_LEADER_OR_FOLLOWER", -1, expected_seq=0)
    assert h.tm.sequence_number(TP0) == 1
    h.run_once(15_000)
    assert r.status == "failed" and r.error == "TimeoutException"
    assert h.in_flight_batches(TP0) == [] and not h.p.accumulator.get_deque(TP0)
    assert h.tm.producer_id == pid and h.tm.producer_epoch == 1


def test_batches_drained_with_old_producer_id_should_succeed_on_subsequent_retry():
    """testBatchesDrainedWithOldProducerIdShouldSucceedOnSubsequentRetry: one request with
    both partitions: partition 1 NOT_LEADER_OR_FOLLOWER, partition 0 OUT_OF_ORDER_SEQUENCE_NUMBER
    (an epoch bump). Partition 1's batch keeps its old epoch through its retries and is acked;
    the partition's next batch starts the new epoch at sequence 0."""
    h = SenderHarness()
    r0 = h.append(TP0)
    r1 = h.append(TPB)
    h.run_once()
    ((corr, batches),) = h.requests()
    assert set(batches) == {TP0, TPB}
    h.respond(corr, (TPB, "NOT_LEADER_OR_FOLLOWER", -1), (TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1))
    assert r0.status == "pending"
    h.run_once(300)
    assert h.tm.producer_epoch == 1
    assert r1.status == "pending"
    corr = next(corr for corr, bs in h.requests() if TPB in bs)
    (retry,) = h.in_flight_batches(TPB)
    assert retry.epoch == 0, "drained with the old epoch"
    h.respond(corr, (TPB, "NOT_LEADER_OR_FOLLOWER", -1))
    h.run_once(300)
    corr = next(corr for corr, bs in h.requests() if TPB in bs)
    h.respond(corr, (TPB, "NONE", 0))
    assert r1.status == "acked"
    h.append(TPB)
    h.run_once()
    (batch,) = h.in_flight_batches(TPB)
    assert (batch.epoch, batch.base_seq) == (1, 0)
    assert h.tm.sequence_number(TPB) == 1


def test_correct_handling_of_duplicate_sequence_error():
    """testCorrectHandlingOfDuplicateSequenceError: the second batch is acked at 1000; the
    first is answered DUPLICATE_SEQUENCE_NUMBER: Sender.completeBatch completes it as a
    success without an offset (-1)."""
    h = SenderHarness()
    r1 = h.append()
    h.run_once()
    r2 = h.append()
    h.run_once()
    (c1, _), (c2, _) = h.requests()
    h.respond(c2, (TP0, "NONE", 1000))
    h.respond(c1, (TP0, "DUPLICATE_SEQUENCE_NUMBER", -1))
    assert h.requests() == []
    assert r2.offset == 1000
    assert r1.status == "acked" and r1.offset == -1


def test_unknown_producer_error_should_be_retried_when_log_start_offset_is_unknown():
    """testUnknownProducerErrorShouldBeRetriedWhenLogStartOffsetIsUnknown: UNKNOWN_PRODUCER_ID
    with no log start offset (-1, all kafkasim's ProduceResponse can say) is retried with the
    same sequence (TransactionManager.canRetry), then acked."""
    h = SenderHarness()
    r1 = h.append()
    h.run_once()
    h.respond_first(TP0, "NONE", 1000, expected_seq=0)
    r2 = h.append()
    h.run_once()
    assert h.tm.sequence_number(TP0) == 2 and r1.offset == 1000
    h.respond_first(TP0, "UNKNOWN_PRODUCER_ID", -1, expected_seq=1)
    assert r2.status == "pending" and h.tm.sequence_number(TP0) == 2
    h.run_once(100)
    h.respond_first(TP0, "NONE", 1011, expected_seq=1)
    assert r2.offset == 1011 and h.tm.sequence_number(TP0) == 2


def test_idempotent_unknown_producer_handling_when_retention_limit_reached():
    """testIdempotentUnknownProducerHandlingWhenRetentionLimitReached: the first batch is acked
    at 1000; the second (two records, sequences 1-2) is answered UNKNOWN_PRODUCER_ID with log
    start offset 1010, past the last acknowledged offset: the broker lost the producer to
    retention. The epoch is bumped, the batch resent from sequence 0, acked at 1011."""
    h = SenderHarness()
    assert h.tm.sequence_number(TP0) == 0
    r1 = h.append()
    h.run_once()
    assert len(h.requests()) == 1 and h.tm.sequence_number(TP0) == 1
    assert h.tm.last_acked_sequence(TP0) is None
    h.respond_first(TP0, "NONE", 1000, expected_seq=0, log_start_offset=10)
    assert r1.offset == 1000
    assert h.tm.last_acked_sequence(TP0) == 0 and h.tm.last_acked_offset(TP0) == 1000
    r2 = h.append(n=2)
    h.run_once()
    assert h.tm.sequence_number(TP0) == 3 and h.tm.last_acked_sequence(TP0) == 0
    h.respond_first(TP0, "UNKNOWN_PRODUCER_ID", -1, expected_seq=1, log_start_offset=1010)
    h.run_once(100)   # bump the epoch and retry
    assert h.tm.last_acked_sequence(TP0) is None
    assert h.tm.sequence_number(TP0) == 2
    assert r2.status == "pending" and len(h.requests()) == 1
    assert h.tm.producer_epoch == 1
    h.respond_first(TP0, "NONE", 1011, expected_seq=0, log_start_offset=1010)
    assert h.tm.last_acked_sequence(TP0) == 1 and h.tm.sequence_number(TP0) == 2
    assert h.requests() == []
    assert r2.offset == 1011 and h.tm.last_acked_offset(TP0) == 1012


def test_unknown_producer_error_should_be_retried_for_future_batches_when_first_fails():
    """testUnknownProducerErrorShouldBeRetriedForFutureBatchesWhenFirstFails: two batches in
    flight after an acked one; the first gets UNKNOWN_PRODUCER_ID (log start 1010): an epoch
    bump renumbers both from 0. The second's own UNKNOWN_PRODUCER_ID (its sequence was reset)
    is retried as it is; the two are resent one at a time and acked at 1011 and 1012."""
    h = SenderHarness()
    r1 = h.append()
    h.run_once()
    h.respond_first(TP0, "NONE", 1000, expected_seq=0, log_start_offset=10)
    assert r1.offset == 1000 and h.tm.last_acked_offset(TP0) == 1000
    r2 = h.append()
    h.run_once()
    assert h.tm.sequence_number(TP0) == 2
    r3 = h.append()
    h.run_once()
    assert h.tm.sequence_number(TP0) == 3 and h.tm.last_acked_sequence(TP0) == 0
    assert r2.status == r3.status == "pending" and len(h.requests()) == 2
    h.respond_first(TP0, "UNKNOWN_PRODUCER_ID", -1, expected_seq=1, log_start_offset=1010)
    h.run_once(100)   # bump the epoch and retry request 2
    assert h.tm.last_acked_sequence(TP0) is None
    assert h.tm.sequence_number(TP0) == 2
    assert r2.status == r3.status == "pending"
    assert len(h.requests()) == 2 and h.tm.producer_epoch == 1
    # the original request 3 is answered: it carries its sequence as sent (2)
    h.respond_first(TP0, "UNKNOWN_PRODUCER_ID", -1, expected_seq=2, log_start_offset=1010)
    assert len(h.requests()) == 1
    assert h.tm.last_acked_sequence(TP0) is None and h.tm.sequence_number(TP0) == 2
    h.respond_first(TP0, "NONE", 1011, expected_seq=0, log_start_offset=1010)
    assert r2.offset == 1011 and r3.status == "pending"
    assert h.requests() == []   # at most one in flight while retrying
    assert h.tm.last_acked_sequence(TP0) == 0 and h.tm.last_acked_offset(TP0) == 1011
    h.run_once(100)   # resend request 3
    assert len(h.requests()) == 1
    h.respond_first(TP0, "NONE", 1012, expected_seq=1, log_start_offset=1010)
    assert h.requests() == []
    assert r3.offset == 1012 and h.tm.last_acked_offset(TP0) == 1012


def test_should_raise_out_of_order_sequence_exception_to_user_if_log_was_not_truncated():
    """testShouldRaiseOutOfOrderSequenceExceptionToUserIfLogWasNotTruncated (3.7.0: its name
    predates KIP-360): UNKNOWN_PRODUCER_ID with log start offset 10, below the last acknowledged
    offset 1000, still bumps the epoch for the idempotent producer; the batch is not failed."""
    h = SenderHarness()
    r1 = h.append()
    h.run_once()
    h.respond_first(TP0, "NONE", 1000, expected_seq=0, log_start_offset=10)
    assert r1.offset == 1000 and h.tm.last_acked_offset(TP0) == 1000
    r2 = h.append()
    h.run_once()
    assert h.tm.sequence_number(TP0) == 2 and h.tm.last_acked_sequence(TP0) == 0
    h.respond_first(TP0, "UNKNOWN_PRODUCER_ID", -1, expected_seq=1, log_start_offset=10)
    h.run_once()   # bump the epoch
    assert h.tm.producer_epoch == 1
    assert h.tm.last_acked_sequence(TP0) is None
    assert r2.status == "pending"


def test_unknown_producer_handling_when_retention_limit_reached_2_4():
    """SenderTest.testUnknownProducerHandlingWhenRetentionLimitReached @2.4.0 (before KIP-360):
    UNKNOWN_PRODUCER_ID with log start offset 1010, past the last acknowledged offset 1000: the
    partition's in-flight batches restart at sequence 0 with the same producer id and epoch
    (TransactionManager.startSequencesAtBeginning) and the batch is retried, acked at 1011."""
    h = SenderHarness(version="2.4", enable_idempotence=True)
    pid = h.p.producer_id
    r1 = h.append()
    h.run_once()
    h.respond_first(TP0, "NONE", 1000, expected_seq=0, log_start_offset=10)
    assert r1.offset == 1000 and h.tm.last_acked_offset(TP0) == 1000
    r2 = h.append(n=2)
    h.run_once()
    assert h.tm.sequence_number(TP0) == 3 and h.tm.last_acked_sequence(TP0) == 0
    h.respond_first(TP0, "UNKNOWN_PRODUCER_ID", -1, expected_seq=1, log_start_offset=1010)
    assert h.tm.last_acked_sequence(TP0) is None
    assert h.tm.sequence_number(TP0) == 2
    assert r2.status == "pending" and h.requests() == []
    h.run_once(100)   # the retry
    h.respond_first(TP0, "NONE", 1011, expected_seq=0, log_start_offset=1010)
    assert h.tm.last_acked_sequence(TP0) == 1 and h.tm.sequence_number(TP0) == 2
    assert h.requests() == []
    assert r2.offset == 1011 and h.tm.last_acked_offset(TP0) == 1012
    assert (h.p.producer_id, h.tm.producer_epoch) == (pid, 0)


def test_should_raise_out_of_order_sequence_exception_to_user_if_log_was_not_truncated_2_4():
    """SenderTest.testShouldRaiseOutOfOrderSequenceExceptionToUserIfLogWasNotTruncated @2.4.0:
    UNKNOWN_PRODUCER_ID with log start offset 10, below the last acknowledged offset 1000, is not
    retried: the batch fails (UnknownProducerIdException, an OutOfOrderSequenceException) and
    the producer resets its producer id."""
    h = SenderHarness(version="2.4", enable_idempotence=True)
    pid = h.p.producer_id
    r1 = h.append()
    h.run_once()
    h.respond_first(TP0, "NONE", 1000, expected_seq=0, log_start_offset=10)
    assert r1.offset == 1000
    r2 = h.append()
    h.run_once()
    assert h.tm.sequence_number(TP0) == 2 and h.tm.last_acked_sequence(TP0) == 0
    h.respond_first(TP0, "UNKNOWN_PRODUCER_ID", -1, expected_seq=1, log_start_offset=10)
    assert r2.status == "failed" and r2.error == "UNKNOWN_PRODUCER_ID"
    assert h.p.producer_id != pid and h.tm.sequence_number(TP0) == 0


def test_reset_of_producer_state_should_allow_queued_batches_to_drain():
    """testResetOfProducerStateShouldAllowQueuedBatchesToDrain: at epoch Short.MAX_VALUE, one
    request with both partitions: partition 1 NOT_LEADER_OR_FOLLOWER, partition 0
    OUT_OF_ORDER_SEQUENCE_NUMBER. The epoch bump resets the producer id and the sender gets a
    new one (InitProducerId); partition 1's batch is still retried with the old id and acked at
    10; its sequence moves on to the new id only with its next batch."""
    h = SenderHarness()
    pid = h.p.producer_id
    h.tm.set_producer_id_and_epoch(ProducerIdAndEpoch(pid, SHORT_MAX))
    h.append(TP0)   # failed response
    r1 = h.append(TPB)
    h.run_once()
    ((corr, batches),) = h.requests()
    assert set(batches) == {TP0, TPB}
    h.respond(corr, (TPB, "NOT_LEADER_OR_FOLLOWER", -1), (TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1))
    assert h.tm.has_producer_id() and h.tm.producer_id != pid   # reset, and a new one
    assert h.p.producer_id == h.tm.producer_id and h.tm.producer_epoch == 0
    h.run_once(300)
    assert r1.status == "pending"
    corr = next(corr for corr, bs in h.requests() if TPB in bs)
    assert h.sent_header(corr, TPB)[4:] == (pid, SHORT_MAX, 0)   # drained with the old id
    h.respond(corr, (TPB, "NONE", 10))
    assert r1.offset == 10
    assert h.tm.sequence_number(TPB) == 1


def test_sequence_number_increment():
    """testSequenceNumberIncrement: the first batch carries the producer id, epoch 0 and
    sequence 0; acked, the partition's next sequence is 1."""
    h = SenderHarness()
    r = h.append()
    h.run_once()
    ((corr, batches),) = h.requests()
    header = h.p.sender._batch_header(batches[TP0])
    assert header[4:] == (h.p.producer_id, 0, 0)
    h.respond(corr, (TP0, "NONE", 0))
    assert r.status == "acked" and h.tm.sequence_number(TP0) == 1


def test_bump_epoch_when_out_of_order_sequence_received():
    """testBumpEpochWhenOutOfOrderSequenceReceived: the first batch, answered
    OUT_OF_ORDER_SEQUENCE_NUMBER, is not failed: the epoch goes to 1 and it is resent."""
    h = SenderHarness()
    r = h.append()
    h.run_once()
    assert len(h.in_flight_batches(TP0)) == 1
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", 0)
    h.run_once(100)
    assert r.status == "pending"
    assert len(h.in_flight_batches(TP0)) == 1
    assert h.tm.producer_epoch == 1


def test_inflight_batches_expire_on_delivery_timeout():
    """testInflightBatchesExpireOnDeliveryTimeout: a batch in flight at delivery.timeout.ms
    fails with TimeoutException; the NONE answer processed afterwards is ignored."""
    h = SenderHarness(enable_idempotence=False, max_in_flight_requests_per_connection=1)
    r = h.append()
    h.run_once()
    assert len(h.requests()) == 1 and len(h.in_flight_batches(TP0)) == 1
    h.run_once(DELIVERY_TIMEOUT_MS)
    h.respond_first(TP0, "NONE", 0)
    assert h.in_flight_batches(TP0) == []
    assert r.status == "failed" and r.error == "TimeoutException"


def test_when_first_batch_expire_no_send_second_batch_if_guarantee_order():
    """testWhenFirstBatchExpireNoSendSecondBatchIfGuaranteeOrder (max.in.flight 1): the second
    batch is not sent while the first is in flight, even once the first expired; the first's
    answer frees the way and the second goes."""
    h = SenderHarness(enable_idempotence=False, max_in_flight_requests_per_connection=1)
    h.append()
    h.run_once()
    assert len(h.requests()) == 1
    h.run_once(DELIVERY_TIMEOUT_MS // 2)
    h.append()
    h.run_once()
    assert len(h.requests()) == 1 and len(h.in_flight_batches(TP0)) == 1
    h.run_once(DELIVERY_TIMEOUT_MS // 2)  # expire the first batch only
    h.respond_first(TP0, "NONE", 0)
    h.run_once()
    assert len(h.requests()) == 1 and len(h.in_flight_batches(TP0)) == 1


def test_expired_batch_does_not_retry():
    """testExpiredBatchDoesNotRetry: an in-flight batch past delivery.timeout.ms answered with a
    retriable error (NOT_LEADER_OR_FOLLOWER) is done (expired) and not re-enqueued."""
    h = SenderHarness(enable_idempotence=False)
    r = h.append()
    h.run_once()
    h.run_once(DELIVERY_TIMEOUT_MS)
    h.respond_first(TP0, "NOT_LEADER_OR_FOLLOWER", -1)
    assert r.status == "failed" and r.error == "TimeoutException"
    h.run_once(500)
    assert h.requests() == [] and not h.p.accumulator.get_deque(TP0)


def test_expired_batch_does_not_split_on_message_too_large_error():
    """testExpiredBatchDoesNotSplitOnMessageTooLargeError: a two-record batch answered
    MESSAGE_TOO_LARGE after its delivery timeout: both records done, nothing resent."""
    h = SenderHarness()
    r1, r2 = h.p.send_many("t", ["a", "b"], partition=0)
    h.run_once()
    assert len(h.requests()) == 1
    h.run_once(DELIVERY_TIMEOUT_MS)
    h.respond_first(TP0, "MESSAGE_TOO_LARGE", -1)
    assert r1.status == r2.status == "failed"
    h.run_once(500)
    assert h.requests() == [] and not h.p.accumulator.get_deque(TP0)


def test_expired_batches_in_multiple_partitions():
    """testExpiredBatchesInMultiplePartitions: batches of two partitions in one request; after
    delivery.timeout.ms both fail with TimeoutException, the late NONE for one ignored."""
    h = SenderHarness(enable_idempotence=False, max_in_flight_requests_per_connection=1)
    r1 = h.append(TP0)
    r2 = h.append(TPB)
    h.run_once()
    assert len(h.requests()) == 1 and len(h.in_flight_batches(TP0)) == 1
    h.run_once(DELIVERY_TIMEOUT_MS)
    h.respond_first(TP0, "NONE", 0)
    assert h.in_flight_batches(TP0) == []
    assert r1.error == r2.error == "TimeoutException"


# -------------------------------------------- errors: retriable or not, metadata refreshed


@pytest.mark.parametrize(
    "error, retriable, refreshes_metadata",
    [
        ("NOT_LEADER_OR_FOLLOWER", True, True),
        ("UNKNOWN_TOPIC_OR_PARTITION", True, True),
        ("NOT_ENOUGH_REPLICAS", True, False),
        ("NOT_ENOUGH_REPLICAS_AFTER_APPEND", True, False),
        ("REQUEST_TIMED_OUT", True, False),
        ("MESSAGE_TOO_LARGE", False, False),
        ("INVALID_REQUIRED_ACKS", False, False),
    ],
)
def test_complete_batch_retries_retriable_errors_and_refreshes_metadata(
    error, retriable, refreshes_metadata
):
    """Sender.completeBatch @3.7.0, as testCanRetryWithoutIdempotence and
    testWhenProduceResponseReturnsWithALeaderShipChangeErrorButNoNewLeaderInformation drive
    it: a RetriableException is re-enqueued (resent after the retry backoff, not at once), any
    other error fails the batch; an InvalidMetadataException (NOT_LEADER_OR_FOLLOWER,
    UNKNOWN_TOPIC_OR_PARTITION) also requests a metadata update (metadata.updateRequested())."""
    h = SenderHarness(enable_idempotence=False)
    r = h.append()
    h.run_once()
    before = h.metadata_requests()
    h.respond_first(TP0, error, -1)
    assert h.requests() == [], "not resent before its backoff"
    h.run_once(5)
    assert (h.metadata_requests() > before) is refreshes_metadata
    if retriable:
        assert r.status == "pending" and r.errors == [error]
        h.run_once(300)
        ((corr, _),) = h.requests()
        h.respond(corr, (TP0, "NONE", 5))
        assert r.offset == 5 and r.attempts == 2
    else:
        assert r.status == "failed" and r.error == error
        h.run_once(300)
        assert h.requests() == []


def test_acks_zero_completes_on_send_without_offset():
    """Sender.handleProduceResponse @3.7.0, "the acks = 0 case": no response is expected; the
    batch completes as soon as the request is sent, with no offset (-1), is not in flight and
    is never retried; the acks=0 producer is not idempotent (no sequence)."""
    h = SenderHarness(acks=0)
    assert not h.tm.idempotent
    r = h.append()
    h.run_once()
    assert r.status == "acked" and r.offset == -1
    assert h.requests() == [] and h.in_flight_batches(TP0) == []
    (msg,) = [env.msg for env in h.c.transport.network.held]
    assert msg.acks == 0 and msg.partitions[0][4:] == (-1, -1, -1)


# ---------------------------------------------------------------------- TransactionManagerTest


def test_default_sequence_number():
    """TransactionManagerTest.testDefaultSequenceNumber: a partition starts at sequence 0 and
    incrementSequenceNumber adds to it."""
    tm = TransactionManager(True, producer_id=15)
    assert tm.sequence_number(TP0) == 0
    tm.increment_sequence_number(TP0, 3)
    assert tm.sequence_number(TP0) == 3


def test_sequence_number_overflow():
    """TransactionManagerTest.testSequenceNumberOverflow: sequences wrap around after
    Integer.MAX_VALUE (DefaultRecordBatch.incrementSequence)."""
    int_max = 2**31 - 1
    tm = TransactionManager(True, producer_id=15)
    tm.increment_sequence_number(TP0, int_max)
    assert tm.sequence_number(TP0) == int_max
    tm.increment_sequence_number(TP0, 100)
    assert tm.sequence_number(TP0) == 99
    tm.increment_sequence_number(TP0, int_max)
    assert tm.sequence_number(TP0) == 98
