"""kafkasim.runtime.clients.record_accumulator.RecordAccumulator driven alone, as Kafka's
RecordAccumulatorTest drives its RecordAccumulator: append, ready, drain, reenqueue and
expiredBatches, with no cluster, sender or network.

Kafka's test sizes batches in bytes; here every record counts ``RECORD_SIZE`` (100) bytes, so a
``batch.size`` of 1000 holds 10 records. Kafka's node1 leads partitions 0 and 1 of "test" and
node2 leads partition 2; the leaders here are the same (``LEADERS``, nodes 1 and 2).
"""

from __future__ import annotations

from itertools import count

import pytest

from kafkasim.runtime.clients.producer_batch import RECORD_SIZE
from kafkasim.runtime.clients.producer_metadata import RETRY_BACKOFF_JITTER, RetryBackoff
from kafkasim.runtime.clients.record_accumulator import ExpiryRule, RecordAccumulator
from kafkasim.runtime.clients.transaction_manager import TransactionManager

TP1, TP2, TP3 = ("test", 0), ("test", 1), ("test", 2)
NODE1, NODE2 = 1, 2
LEADERS = {TP1: NODE1, TP2: NODE1, TP3: NODE2}
BATCH_SIZE = 10 * RECORD_SIZE


class Appender:
    """Appends records one at a time with fresh record ids, as KafkaProducer.send does."""

    def __init__(self, accum: RecordAccumulator) -> None:
        self.accum = accum
        self.ids = count()

    def __call__(self, tp, n: int, now: int) -> None:
        for _ in range(n):
            rid = next(self.ids)
            self.accum.append(tp, rid, rid + 1, now)


def _drained_partitions(drained: dict) -> dict[int, list]:
    return {node: list(batches) for node, batches in drained.items()}


def test_full():
    """testFull: a batch that is not full waits for linger.ms; once full it is ready at once
    and drain takes it alone, the next batch staying."""
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=10)
    append = Appender(accum)
    for _ in range(9):
        append(TP1, 1, 0)
        assert len(accum.get_deque(TP1)) == 1
        assert not accum.ready(LEADERS, 0).ready_nodes, "no partition should be ready"
    append(TP1, 1, 0)   # the tenth record fills the batch
    assert list(accum.ready(LEADERS, 0).ready_nodes) == [NODE1]
    append(TP1, 1, 0)   # does not fit: a new batch
    assert len(accum.get_deque(TP1)) == 2
    drained = accum.drain(LEADERS, {NODE1: None}, 0)
    (batch,) = drained[NODE1].values()
    assert batch.record_ids == list(range(10)) and batch.attempts == 1
    assert [b.record_count for b in accum.get_deque(TP1)] == [1]


def test_linger():
    """testLinger: ready only once linger.ms has passed; then drained."""
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=10)
    Appender(accum)(TP1, 1, 0)
    result = accum.ready(LEADERS, 0)
    assert not result.ready_nodes and result.next_ready_check_delay_ms == 10
    assert not accum.ready(LEADERS, 9).ready_nodes
    assert list(accum.ready(LEADERS, 10).ready_nodes) == [NODE1]
    drained = accum.drain(LEADERS, {NODE1: None}, 10)
    assert [b.record_ids for b in drained[NODE1].values()] == [[0]]
    assert accum.get_deque(TP1) == []


def test_next_ready_check_delay():
    """testNextReadyCheckDelay: the delay is the least time any waiting batch still waits."""
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=10)
    append = Appender(accum)
    append(TP1, 9, 0)
    result = accum.ready(LEADERS, 0)
    assert not result.ready_nodes and result.next_ready_check_delay_ms == 10
    append(TP3, 9, 5)   # node2's partition, half the linger later
    result = accum.ready(LEADERS, 5)
    assert not result.ready_nodes
    assert result.next_ready_check_delay_ms == 5, "node1's half remaining linger"
    append(TP2, 10, 5)  # full: sendable at once
    result = accum.ready(LEADERS, 5)
    assert list(result.ready_nodes) == [NODE1]
    assert result.next_ready_check_delay_ms <= 10


def test_retry_backoff():
    """testRetryBackoff: a re-enqueued batch backs off while another partition's new batch of
    the same node is drained; after the backoff (jitter included) it is drained again."""
    linger = 1 << 20
    accum = RecordAccumulator(BATCH_SIZE, linger, RetryBackoff.of(1 << 22, 10 << 22))
    append = Appender(accum)
    append(TP1, 1, 0)
    drained = accum.drain(LEADERS, accum.ready(LEADERS, linger + 1).ready_nodes, linger + 1)
    assert list(drained[NODE1]) == [TP1]
    batch = drained[NODE1][TP1]
    now = linger + 1
    accum.reenqueue(batch, now)
    append(TP2, 1, now)
    later = now + linger + 1
    result = accum.ready(LEADERS, later)
    assert list(result.ready_nodes) == [NODE1]
    drained = accum.drain(LEADERS, result.ready_nodes, later)
    assert list(drained[NODE1]) == [TP2], "tp1 backs off while tp2 does not"
    upper = int((1 << 22) * (1 + RETRY_BACKOFF_JITTER))
    result = accum.ready(LEADERS, now + upper + 1)
    drained = accum.drain(LEADERS, result.ready_nodes, now + upper + 1)
    assert list(drained[NODE1]) == [TP1] and drained[NODE1][TP1] is batch
    assert batch.attempts == 2


def test_exponential_retry_backoff():
    """testExponentialRetryBackoff (3.7+, KIP-580): attempt i backs off between
    retry.backoff.ms * 2^i * 0.8 and * 1.2, until retry.backoff.max.ms."""
    linger = 1 << 20
    accum = RecordAccumulator(BATCH_SIZE, linger, RetryBackoff.of(100, 1000, seed="test"))
    Appender(accum)(TP1, 1, 0)
    now = linger + 1
    (batch,) = accum.drain(LEADERS, {NODE1: None}, now)[NODE1].values()
    for i in range(4):   # 100, 200, 400, 800 ms (x 0.8 .. 1.2)
        accum.reenqueue(batch, now)
        lower = int(100 * 2 ** i * (1 - RETRY_BACKOFF_JITTER))
        upper = int(100 * 2 ** i * (1 + RETRY_BACKOFF_JITTER))
        assert not accum.ready(LEADERS, now + lower - 1).ready_nodes, i
        assert not accum.drain(LEADERS, {NODE1: None}, now + lower - 1), i
        now += upper + 1
        assert list(accum.ready(LEADERS, now).ready_nodes) == [NODE1], i
        (batch,) = accum.drain(LEADERS, {NODE1: None}, now)[NODE1].values()


def test_a_full_batch_is_ready_before_linger_but_a_full_retry_still_backs_off():
    """batchReady: ``sendable && !backingOff`` -- fullness sends a first attempt early, never
    a retry."""
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=1000, retry_backoff=RetryBackoff.of(100))
    Appender(accum)(TP1, 10, 0)
    (batch,) = accum.drain(LEADERS, accum.ready(LEADERS, 0).ready_nodes, 0)[NODE1].values()
    accum.reenqueue(batch, 50)
    result = accum.ready(LEADERS, 100)
    assert not result.ready_nodes and result.next_ready_check_delay_ms == 50
    assert list(accum.ready(LEADERS, 150).ready_nodes) == [NODE1]


def test_expired_batches():
    """testExpiredBatches: every batch at a queue's head past delivery.timeout.ms is taken out
    (two batches created together expire together), and only once."""
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=30, delivery_timeout_ms=3200)
    append = Appender(accum)
    append(TP1, 11, 0)   # a full batch and one more
    assert list(accum.ready(LEADERS, 0).ready_nodes) == [NODE1]
    assert accum.expired_batches(3199) == []
    expired = accum.expired_batches(3201)
    assert [b.record_count for b in expired] == [10, 1]
    assert accum.expired_batches(3201) == []
    assert not accum.ready(LEADERS, 3201).ready_nodes


def test_no_delivery_timeout_expires_nothing():
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=0, delivery_timeout_ms=None)
    Appender(accum)(TP1, 1, 0)
    assert accum.expired_batches(1 << 40) == []


def test_a_partition_without_a_leader_is_named_and_not_drained():
    """ready's unknownLeaderTopics: the sender asks for metadata; drain takes nothing of it."""
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=0)
    Appender(accum)(("other", 0), 1, 0)
    result = accum.ready({**LEADERS, ("other", 0): -1}, 0)
    assert result.unknown_leader_topics == ["other"] and not result.ready_nodes
    assert accum.drain(LEADERS, {NODE1: None, NODE2: None}, 0) == {}


def test_drain_takes_the_first_batch_of_each_partition_of_the_ready_nodes_only():
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=0)
    append = Appender(accum)
    for tp in (TP1, TP2, TP3):
        append(tp, 15, 0)   # two batches each
    result = accum.ready(LEADERS, 0)
    assert list(result.ready_nodes) == [NODE1, NODE2]
    drained = accum.drain(LEADERS, {NODE1: None}, 0)   # node2 cannot be sent to now
    assert _drained_partitions(drained) == {NODE1: [TP1, TP2]}
    assert [len(accum.get_deque(tp)) for tp in (TP1, TP2, TP3)] == [1, 1, 2]


def test_drain_gives_an_idempotent_batch_its_sequence_once():
    """Kafka's drain: a new batch gets the producer id, epoch and the partition's next
    sequence (TransactionManager.sequenceNumber / incrementSequenceNumber); a retry keeps
    them."""
    tm = TransactionManager(True, producer_id=7)
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=0, retry_backoff=RetryBackoff.of(100),
                              transaction_manager=tm)
    append = Appender(accum)
    append(TP1, 13, 0)
    first = accum.drain(LEADERS, {NODE1: None}, 0)[NODE1][TP1]
    second = accum.drain(LEADERS, {NODE1: None}, 0)[NODE1][TP1]
    assert (first.producer_id, first.epoch, first.base_seq) == (7, 0, 0)
    assert (second.base_seq, tm.sequence_number(TP1)) == (10, 13)
    accum.reenqueue(first, 0)
    again = accum.drain(LEADERS, {NODE1: None}, 100)[NODE1][TP1]
    assert again is first and first.base_seq == 0 and first.attempts == 2


def test_reenqueue_keeps_sequence_order():
    """insertInSequenceOrder: retries go back in their partition's sequence order, ahead of
    the batches not sent yet."""
    tm = TransactionManager(True, producer_id=7)
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=0, retry_backoff=RetryBackoff.of(100),
                              transaction_manager=tm)
    append = Appender(accum)
    append(TP1, 30, 0)
    sent = [accum.drain(LEADERS, {NODE1: None}, 0)[NODE1][TP1] for _ in range(3)]
    append(TP1, 1, 0)   # a new batch, not sent
    for b in (sent[2], sent[0], sent[1]):
        accum.reenqueue(b, 0)
    assert [b.base_seq for b in accum.get_deque(TP1)] == [0, 10, 20, -1]


@pytest.mark.parametrize("earlier_answered", [False, True])
def test_a_retry_waits_for_an_earlier_sequence_on_the_wire(earlier_answered):
    """shouldStopDrainBatchesForPartition: a retry is drained only when no batch of its
    partition with an earlier sequence is still on the wire."""
    in_flight: dict[int, list] = {}
    tm = TransactionManager(True, producer_id=7, in_flight=in_flight)
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=0, retry_backoff=RetryBackoff.of(100),
                              transaction_manager=tm)
    Appender(accum)(TP1, 20, 0)
    first = accum.drain(LEADERS, {NODE1: None}, 0)[NODE1][TP1]
    second = accum.drain(LEADERS, {NODE1: None}, 0)[NODE1][TP1]
    in_flight[1] = [-1, -1, NODE1, {TP1: first}]
    accum.reenqueue(second, 0)
    if earlier_answered:
        first.done("acked", None, 0, 1)
    drained = accum.drain(LEADERS, {NODE1: None}, 100)
    assert (drained == {}) is not earlier_answered


def test_a_new_batch_waits_while_a_batch_of_the_old_epoch_is_on_the_wire():
    """shouldStopDrainBatchesForPartition (2.5+, KIP-360): after an epoch bump, a new batch
    (sequence 0 of the new epoch) is not drained while a batch of the partition with the old
    epoch is still on the wire: written first, it would fence that batch
    (INVALID_PRODUCER_EPOCH). Other partitions are not held."""
    in_flight: dict[int, list] = {}
    tm = TransactionManager(True, producer_id=7, in_flight=in_flight)
    accum = RecordAccumulator(BATCH_SIZE, linger_ms=0, retry_backoff=RetryBackoff.of(100),
                              transaction_manager=tm)
    append = Appender(accum)
    append(TP1, 1, 0)
    old = accum.drain(LEADERS, {NODE1: None}, 0)[NODE1][TP1]
    in_flight[1] = [-1, -1, NODE1, {TP1: old}]
    tm.bump_epoch()   # another batch failed for good
    append(TP1, 1, 0)
    append(TP2, 1, 0)
    drained = accum.drain(LEADERS, {NODE1: None}, 0)
    assert list(drained[NODE1]) == [TP2], "tp1's new batch waits for the old epoch's"
    assert (drained[NODE1][TP2].epoch, drained[NODE1][TP2].base_seq) == (1, 0)
    old.done("acked", None, 0, 1)
    new = accum.drain(LEADERS, {NODE1: None}, 1)[NODE1][TP1]
    assert (new.producer_id, new.epoch, new.base_seq) == (7, 1, 0)


# ------------------------------------------------ before 2.1: expiry by request.timeout.ms


def _expiring(in_queue_order: bool = True, linger_ms: int = 3000) -> RecordAccumulator:
    """The 0.10.0-2.0 accumulator of RecordAccumulatorTest.testExpiredBatches @2.0.0: no
    delivery timeout, request.timeout.ms 60, retry.backoff.ms 100 (0.9.0's rule if not
    ``in_queue_order``)."""
    return RecordAccumulator(BATCH_SIZE, linger_ms, RetryBackoff.of(100), None, None,
                             ExpiryRule(60, in_queue_order))


def test_expired_batches_by_request_timeout():
    """testExpiredBatches @2.0.0: a full batch expires request.timeout.ms after its last
    append, the last one (not full) after its creation plus linger.ms, a retried one after
    its last attempt plus retry.backoff.ms; a muted partition is skipped."""
    accum = _expiring()
    append = Appender(accum)
    append(TP1, 10, 0)                      # full
    append(TP1, 1, 0)                       # the next batch, not full
    assert accum.expired_batches(60, muted={TP1}) == []
    assert accum.expired_batches(60) == []                       # 60 ms: not more than 60
    (full,) = accum.expired_batches(61, muted=set())
    assert full.record_count == 10
    assert accum.expired_batches(3060) == []                     # linger.ms counts
    assert accum.expired_batches(3061, muted={TP1}) == []
    (last,) = accum.expired_batches(3061)
    assert last.record_count == 1 and accum.get_deque(TP1) == []
    append(TP1, 1, 4000)
    (retried,) = accum.drain(LEADERS, {NODE1: None}, 7000)[NODE1].values()
    accum.reenqueue(retried, 8000)
    assert retried.retry and retried.last_attempt_ms == 8000
    assert accum.expired_batches(8000 + 60 + 100) == []
    assert accum.expired_batches(8000 + 60 + 100 + 1, muted={TP1}) == []
    assert accum.expired_batches(8000 + 60 + 100 + 1) == [retried]


def test_expiry_stops_at_the_first_batch_that_has_not_expired():
    """KAFKA-3388 (0.10.0+): a queue is walked from its head and the walk stops at the first
    live batch; a retried batch at the head keeps the ones behind it. 0.9.0 walked past a
    retried batch that had not expired."""
    for in_queue_order, expected in ((True, []), (False, [11])):
        accum = _expiring(in_queue_order, linger_ms=0)
        append = Appender(accum)
        append(TP1, 1, 0)
        (retried,) = accum.drain(LEADERS, {NODE1: None}, 0)[NODE1].values()
        append(TP1, 1, 0)
        accum.reenqueue(retried, 50)
        assert [b.record_ids[0] for b in accum.get_deque(TP1)] == [0, 1]
        expired = accum.expired_batches(61)
        assert [b.record_ids[0] + 10 for b in expired] == expected, in_queue_order


def test_no_expiry_by_request_timeout_from_2_1_or_in_0_8_2():
    """KIP-91 (2.1) replaced it by delivery.timeout.ms; the 0.8.2 producer had neither
    (KAFKA-1788: a batch for an unavailable leader stayed in the accumulator for ever)."""
    for accum in (RecordAccumulator(BATCH_SIZE, 0, RetryBackoff.of(100), None),
                  RecordAccumulator(BATCH_SIZE, 0, RetryBackoff.of(100), 120_000)):
        Appender(accum)(TP1, 1, 0)
        assert accum.expired_batches(100_000) == []
