"""Kafka's idempotent-producer tests at the releases where idempotence changed, ported: the
idempotent (non-transactional) cases of SenderTest and TransactionManagerTest
(clients/src/test/java/org/apache/kafka/clients/producer/internals/) at 0.11.0.0, 1.0.0,
1.1.0, 2.0.0, 2.4.0, 2.5.0, 2.8.0 and 3.0.0, and of ProducerStateManagerTest
(core/src/test/scala/unit/kafka/log/) at 0.11.0.0, 1.0.0, 2.4.0 and 2.5.0. The same cases at
3.7 / 3.9 are in tests/test_producer_internals_kafka.py, tests/test_producer_extra_kafka.py,
tests/test_transaction_manager_kafka.py and tests/test_producer_state_manager_kafka.py; this
file keeps the older tags, where Kafka's assertions differ.

The sender cases reuse ``SenderHarness`` of tests/test_producer_internals_kafka.py (Kafka's
MockClient: every ProduceRequest is held and answered by the test). Before 3.0 the producer is
not idempotent by default, so the harness sets enable.idempotence. Kafka's
``prepareAndReceiveInitProducerId(producerId + 1)`` is the sender's own InitProducerId here: a
reset producer id is replaced by a new one from the brokers, so the tests check that the id
changed (and the epoch restarted at 0) rather than ``producerId + 1``.

Before KIP-360 (2.5.0) an OutOfOrderSequenceException for the next sequence failed the batch
and reset the producer id (Sender.failBatch 0.11-1.1, TransactionManager.handleFailedBatch
2.0-2.4); 2.5+ bumps the epoch instead and retries.
"""

from __future__ import annotations

import pytest

from kafkasim.core import producer_state as ps
from kafkasim.core.log import ProducerBatch as LogProducerBatch
from kafkasim.settings.versions import rules_for
from tests.test_producer_internals_kafka import TP0, TPB, SenderHarness

PRE_KIP_360 = ["0.11.0", "1.0", "1.1", "2.0", "2.4"]


def _idempotent(version: str, **kw) -> SenderHarness:
    return SenderHarness(version=version, enable_idempotence=True, **kw)


@pytest.mark.parametrize("version", PRE_KIP_360)
def test_reset_when_out_of_order_sequence_received(version):
    """SenderTest.testResetWhenOutOfOrderSequenceReceived @0.11.0.0 / @1.0.0 / @2.4.0: the only
    batch answered OUT_OF_ORDER_SEQUENCE_NUMBER is done (failed), nothing of the partition is in
    flight, and the producer id is reset ("Expected transaction state to be reset upon receiving
    an OutOfOrderSequenceException")."""
    h = _idempotent(version, retries=10)
    pid = h.p.producer_id
    r = h.append()
    h.run_once()
    assert len(h.requests()) == 1 and len(h.in_flight_batches(TP0)) == 1
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", 0)
    assert r.status == "failed" and r.error == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert h.in_flight_batches(TP0) == []
    assert not h.tm.has_producer_id() or h.tm.producer_id != pid


@pytest.mark.parametrize("version", ["0.11.0", "1.0", "2.4"])
def test_sequence_number_increment(version):
    """SenderTest.testSequenceNumberIncrement @0.11.0.0 (and @1.0.0, @2.4.0): the first batch
    carries the producer id, epoch 0 and base sequence 0; acknowledged, the partition's next
    sequence is 1."""
    h = _idempotent(version, retries=10)
    r = h.append()
    h.run_once()
    ((corr, _),) = h.requests()
    assert h.sent_header(corr, TP0)[4:] == (h.p.producer_id, 0, 0)
    h.respond(corr, (TP0, "NONE", 0))
    assert r.status == "acked" and h.tm.sequence_number(TP0) == 1


@pytest.mark.parametrize("version", ["0.11.0", "1.0", "2.4"])
def test_abort_retry_when_producer_id_changes(version):
    """SenderTest.testAbortRetryWhenProducerIdChanges @0.11.0.0 / @1.0.0 / @2.4.0 (renamed
    testRetryWhenProducerIdChanges in 2.5.0, where the batch is retried): the connection breaks
    with the batch in flight and the producer id changes meanwhile; the batch, drained under the
    old id, is not retried but failed ("Expected requests to be aborted after pid change"), and
    the partition's sequence is 0 again."""
    h = _idempotent(version, retries=10)
    pid = h.p.producer_id
    r = h.append()
    h.run_once()
    ((corr, _),) = h.requests()
    # Kafka's MockClient hands the disconnect to the sender's next poll, after the id changed
    h.tm.legacy.reset_producer_id(pid + 1)   # resetProducerId, then setProducerIdAndEpoch
    h.p.on_disconnect(1, next(env.msg for env in h.c.transport.network.held
                              if env.msg.correlation_id == corr))
    assert h.requests() == []
    h.run_once(300)
    assert h.requests() == [], "Expected requests to be aborted after pid change"
    assert r.status == "failed" and r.error == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert h.tm.sequence_number(TP0) == 0


@pytest.mark.parametrize("version", ["1.0", "2.0", "2.4", "2.5"])
def test_idempotence_with_multiple_inflights(version):
    """SenderTest.testIdempotenceWithMultipleInflights @1.0.0 / @2.0.0 / @2.4.0 / @2.5.0: two
    requests of one partition in flight, sequences 0 and 1, each acknowledged in order; the last
    acknowledged sequence follows (-1, then 0, then 1)."""
    h = _idempotent(version)
    r1 = h.append()
    h.run_once()
    r2 = h.append()
    h.run_once()
    assert len(h.requests()) == 2 and h.tm.sequence_number(TP0) == 2
    assert h.tm.last_acked_sequence(TP0) is None
    h.respond_first(TP0, "NONE", 0, expected_seq=0)
    assert r1.offset == 0 and h.tm.last_acked_sequence(TP0) == 0 and r2.status == "pending"
    h.respond_first(TP0, "NONE", 1, expected_seq=1)
    assert r2.offset == 1 and h.tm.last_acked_sequence(TP0) == 1 and h.requests() == []


@pytest.mark.parametrize("version", ["1.0", "1.1", "2.0", "2.4"])
def test_idempotence_with_multiple_inflights_retried_in_order(version):
    """SenderTest.testIdempotenceWithMultipleInflightsRetriedInOrder @1.0.0 ... @2.4.0: the
    first of three requests fails LEADER_NOT_AVAILABLE, the next two OUT_OF_ORDER_SEQUENCE_NUMBER
    (not the next sequence, so retried since 1.0's TransactionManager.canRetry, with no reset);
    a fourth batch is held back while the three are resent one at a time in sequence order."""
    h = _idempotent(version)
    pid = h.p.producer_id
    rs = []
    for _ in range(3):
        rs.append(h.append())
        h.run_once()
    assert len(h.requests()) == 3 and h.tm.sequence_number(TP0) == 3
    h.respond_first(TP0, "LEADER_NOT_AVAILABLE", -1, expected_seq=0)
    r4 = h.append()
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1, expected_seq=1)
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1, expected_seq=2)
    assert all(r.status == "pending" for r in rs)
    h.run_once(300)
    assert len(h.requests()) == 1 and h.tm.sequence_number(TP0) == 3
    for seq in range(3):
        h.run_once(100)
        assert len(h.requests()) == 1, seq
        h.respond_first(TP0, "NONE", seq, expected_seq=seq)
        assert rs[seq].offset == seq
    h.run_once(100)
    h.respond_first(TP0, "NONE", 3, expected_seq=3)
    assert r4.offset == 3 and (h.p.producer_id, h.tm.producer_epoch) == (pid, 0)


@pytest.mark.parametrize("version", ["1.0", "2.0", "2.4"])
def test_idempotence_first_fails_fatally_and_sequence_of_future_batches_is_adjusted(version):
    """SenderTest.testIdempotenceWithMultipleInflightsWhereFirstFailsFatallyAndSequenceOfFuture
    BatchesIsAdjusted @1.0.0 / @2.0.0 / @2.4.0: the first batch fails MESSAGE_TOO_LARGE; the
    second's sequence is adjusted down to 0, so its OUT_OF_ORDER_SEQUENCE_NUMBER (sent as 1) is
    retried, and the batch is acked at offset 0 with no producer id reset."""
    h = _idempotent(version)
    pid = h.p.producer_id
    r1 = h.append()
    h.run_once()
    r2 = h.append()
    h.run_once()
    h.respond_first(TP0, "MESSAGE_TOO_LARGE", -1, expected_seq=0)
    assert r1.status == "failed" and r1.error == "MESSAGE_TOO_LARGE"
    assert h.tm.last_acked_sequence(TP0) is None and len(h.requests()) == 1
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1, expected_seq=1)
    assert h.requests() == [] and r2.status == "pending"
    h.run_once(100)
    assert len(h.requests()) == 1
    h.respond_first(TP0, "NONE", 0, expected_seq=0)
    assert r2.offset == 0 and h.tm.last_acked_sequence(TP0) == 0
    assert h.p.producer_id == pid


@pytest.mark.parametrize("version", ["1.0", "2.4"])
def test_correct_handling_of_out_of_order_responses(version):
    """SenderTest.testCorrectHandlingOfOutOfOrderResponses @1.0.0 / @2.4.0: the second request's
    OUT_OF_ORDER_SEQUENCE_NUMBER comes first (not the next sequence: requeued), then the first's
    NOT_LEADER_FOR_PARTITION; both requeued in sequence order and resent one at a time."""
    h = _idempotent(version)
    r1 = h.append()
    h.run_once()
    r2 = h.append()
    h.run_once()
    (c1, _), (c2, _) = h.requests()
    h.respond(c2, (TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1))
    assert [b.base_seq for b in h.p.accumulator.get_deque(TP0)] == [1]
    h.respond(c1, (TP0, "NOT_LEADER_FOR_PARTITION", -1))
    assert [b.base_seq for b in h.p.accumulator.get_deque(TP0)] == [0, 1]
    assert r1.status == r2.status == "pending"
    h.run_once(300)
    assert len(h.requests()) == 1, "only one in flight once we are retrying"
    h.respond_first(TP0, "NONE", 0, expected_seq=0)
    h.run_once(100)
    h.respond_first(TP0, "NONE", 1, expected_seq=1)
    assert (r1.offset, r2.offset) == (0, 1) and h.tm.producer_epoch == 0


@pytest.mark.parametrize("version", ["1.0", "2.4"])
def test_correct_handling_of_duplicate_sequence_error(version):
    """SenderTest.testCorrectHandlingOfDuplicateSequenceError @1.0.0 / @2.4.0 (KAFKA-5494): the
    second batch is acked at 1000, the first answered DUPLICATE_SEQUENCE_NUMBER completes as a
    success without an offset; the last acknowledged sequence stays 1."""
    h = _idempotent(version)
    r1 = h.append()
    h.run_once()
    r2 = h.append()
    h.run_once()
    (c1, _), (c2, _) = h.requests()
    h.respond(c2, (TP0, "NONE", 1000))
    assert h.tm.last_acked_sequence(TP0) == 1
    h.respond(c1, (TP0, "DUPLICATE_SEQUENCE_NUMBER", -1))
    assert h.requests() == [] and r2.offset == 1000
    assert r1.status == "acked" and r1.offset == -1
    assert h.tm.last_acked_sequence(TP0) == 1


@pytest.mark.parametrize("version", ["1.0", "2.4"])
def test_unknown_producer_error_should_be_retried_when_log_start_offset_is_unknown(version):
    """SenderTest.testUnknownProducerErrorShouldBeRetriedWhenLogStartOffsetIsUnknown @1.0.0 /
    @2.4.0 (KAFKA-5793): UNKNOWN_PRODUCER_ID with no log start offset (-1) is retried with the
    same sequence and no reset, then acked at 1011."""
    h = _idempotent(version)
    pid = h.p.producer_id
    r1 = h.append()
    h.run_once()
    h.respond_first(TP0, "NONE", 1000, expected_seq=0)
    r2 = h.append()
    h.run_once()
    h.respond_first(TP0, "UNKNOWN_PRODUCER_ID", -1, expected_seq=1)
    assert r2.status == "pending" and h.tm.sequence_number(TP0) == 2
    assert h.tm.last_acked_sequence(TP0) == 0
    h.run_once(100)
    h.respond_first(TP0, "NONE", 1011, expected_seq=1)
    assert (r1.offset, r2.offset) == (1000, 1011) and h.tm.last_acked_sequence(TP0) == 1
    assert (h.p.producer_id, h.tm.producer_epoch) == (pid, 0)


def test_unknown_producer_error_should_be_retried_for_future_batches_when_first_fails_2_4():
    """SenderTest.testUnknownProducerErrorShouldBeRetriedForFutureBatchesWhenFirstFails @2.4.0
    (before KIP-360): the first of two in-flight batches gets UNKNOWN_PRODUCER_ID with log start
    1010, past the last ack: the partition's sequences restart at 0 under the same epoch and the
    batch is retried; the second's own UNKNOWN_PRODUCER_ID (its sequence was reset) is retried
    as it is; they are resent one at a time and acked at 1011 and 1012, epoch still 0."""
    h = _idempotent("2.4")
    r1 = h.append()
    h.run_once()
    h.respond_first(TP0, "NONE", 1000, expected_seq=0, log_start_offset=10)
    r2 = h.append()
    h.run_once()
    r3 = h.append()
    h.run_once()
    assert h.tm.sequence_number(TP0) == 3 and len(h.requests()) == 2
    h.respond_first(TP0, "UNKNOWN_PRODUCER_ID", -1, expected_seq=1, log_start_offset=1010)
    assert h.tm.last_acked_sequence(TP0) is None and h.tm.sequence_number(TP0) == 2
    assert r2.status == r3.status == "pending" and len(h.requests()) == 1
    h.run_once(100)   # resend request 2
    assert len(h.requests()) == 2
    h.respond_first(TP0, "UNKNOWN_PRODUCER_ID", -1, expected_seq=2, log_start_offset=1010)
    assert len(h.requests()) == 1
    assert h.tm.last_acked_sequence(TP0) is None and h.tm.sequence_number(TP0) == 2
    h.respond_first(TP0, "NONE", 1011, expected_seq=0, log_start_offset=1010)
    assert r1.offset == 1000 and r2.offset == 1011 and r3.status == "pending"
    assert h.requests() == []
    assert h.tm.last_acked_sequence(TP0) == 0 and h.tm.last_acked_offset(TP0) == 1011
    h.run_once(100)   # resend request 3
    h.respond_first(TP0, "NONE", 1012, expected_seq=1, log_start_offset=1010)
    assert r3.offset == 1012 and h.tm.last_acked_offset(TP0) == 1012
    assert h.tm.producer_epoch == 0


def test_expiry_of_first_batch_should_cause_reset_if_future_batches_fail_2_4():
    """SenderTest.testExpiryOfFirstBatchShouldCauseResetIfFutureBatchesFail @2.4.0 (renamed
    ...CauseEpochBump... in 2.5.0): the first batch, in retry after NOT_LEADER_FOR_PARTITION,
    expires, its sequence unresolved; a third batch queued meanwhile is not drained (it keeps
    no sequence); the second, answered OUT_OF_ORDER_SEQUENCE_NUMBER, is not retried (the
    partition is unresolved) but fails, and the producer id is reset (no epoch bump). Kafka's
    test stops while the new InitProducerId is unanswered; kafkasim's is answered at once, so
    the third batch then goes out under the new producer id at sequence 0 and the second is
    not requeued."""
    h = _idempotent("2.4")
    pid = h.p.producer_id
    r1 = h.append()
    h.run_once()
    h.run_once(1000)
    r2 = h.append()
    h.run_once()
    assert len(h.requests()) == 2
    h.respond_first(TP0, "NOT_LEADER_FOR_PARTITION", -1, expected_seq=0)
    h.run_once(1000)
    assert r1.status == "failed" and r1.error == "TimeoutException"
    assert h.tm.has_unresolved_sequence(TP0)
    r3 = h.append()
    h.run_once(20)
    assert r2.status == "pending"
    queued = h.p.accumulator.get_deque(TP0)
    assert len(queued) == 1 and queued[0].base_seq < 0   # not drained while unresolved
    assert [b.base_seq for b in h.in_flight_batches(TP0)] == [1]
    corr = next(corr for corr, bs in h.requests() if TP0 in bs and bs[TP0].base_seq == 1)
    h.respond(corr, (TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1))
    h.run_once()
    assert r2.status == "failed" and r2.error == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert not h.p.accumulator.get_deque(TP0)   # the second is not requeued
    assert h.tm.has_producer_id() and h.tm.producer_id != pid and h.tm.producer_epoch == 0
    assert not h.tm.has_unresolved_sequence(TP0)
    assert r3.status == "pending"
    (b3,) = h.in_flight_batches(TP0)
    assert (b3.producer_id, b3.epoch, b3.base_seq) == (h.tm.producer_id, 0, 0)


def test_expiry_of_all_sent_batches_should_cause_unresolved_sequences_2_4():
    """SenderTest.testExpiryOfAllSentBatchesShouldCauseUnresolvedSequences @2.4.0 (before
    KIP-360): the only sent batch, in retry, expires; its sequence is unresolved and nothing can
    resolve it, so the producer id is cleared and a new one taken (2.5+: the epoch is bumped,
    the id kept)."""
    h = _idempotent("2.4")
    pid = h.p.producer_id
    r = h.append()
    h.run_once()
    h.respond_first(TP0, "NOT_LEADER_FOR_PARTITION", -1, expected_seq=0)
    assert h.tm.sequence_number(TP0) == 1
    h.run_once(15_000)
    assert r.status == "failed" and r.error == "TimeoutException"
    assert h.in_flight_batches(TP0) == [] and not h.p.accumulator.get_deque(TP0)
    assert h.tm.has_producer_id() and h.tm.producer_id != pid
    assert h.tm.producer_epoch == 0 and h.tm.sequence_number(TP0) == 0


@pytest.mark.parametrize("version", ["1.0", "2.0", "2.4"])
def test_batches_drained_with_old_producer_id_should_fail_with_out_of_order_sequence(version):
    """SenderTest.testBatchesDrainedWithOldProducerIdShouldFailWithOutOfOrderSequenceOnSubsequent
    Retry @1.0.0 / @2.0.0 / @2.4.0 (2.5.0: ...ShouldSucceedOnSubsequentRetry): one request with
    both partitions; partition 0's OUT_OF_ORDER_SEQUENCE_NUMBER fails its batch and resets the
    producer id; partition 1's batch, drained again under the old id and answered
    NOT_LEADER_FOR_PARTITION, is not retried but failed with OutOfOrderSequenceException."""
    h = _idempotent(version, retries=10)
    pid = h.p.producer_id
    r0 = h.append(TP0)
    r1 = h.append(TPB)
    h.run_once()
    ((corr, batches),) = h.requests()
    assert set(batches) == {TP0, TPB}
    h.respond(corr, (TPB, "NOT_LEADER_FOR_PARTITION", -1),
              (TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1))
    assert r0.status == "failed"
    h.run_once(300)
    assert h.tm.has_producer_id() and h.tm.producer_id != pid
    assert r1.status == "pending"
    corr = next(corr for corr, bs in h.requests() if TPB in bs)
    assert h.sent_header(corr, TPB)[4] == pid   # drained with the old producer id
    h.respond(corr, (TPB, "NOT_LEADER_FOR_PARTITION", -1))
    assert r1.status == "failed" and r1.error == "OUT_OF_ORDER_SEQUENCE_NUMBER"


@pytest.mark.parametrize("version", ["1.0", "2.4"])
def test_reset_of_producer_state_should_allow_queued_batches_to_drain(version):
    """SenderTest.testResetOfProducerStateShouldAllowQueuedBatchesToDrain @1.0.0 / @2.4.0
    (epoch 0; 2.5.0 starts at Short.MAX_VALUE so that the bump resets the id): partition 0's
    OUT_OF_ORDER_SEQUENCE_NUMBER fails its batch and resets the producer id; partition 1's batch,
    retried under the old id, is acked at 10, and since the answer is for the old id the
    partition's next sequence stays 0."""
    h = _idempotent(version, retries=10)
    pid = h.p.producer_id
    r0 = h.append(TP0)
    r1 = h.append(TPB)
    h.run_once()
    ((corr, _),) = h.requests()
    h.respond(corr, (TPB, "NOT_LEADER_FOR_PARTITION", -1),
              (TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1))
    assert r0.status == "failed"
    h.run_once(300)
    assert h.tm.has_producer_id() and h.tm.producer_id != pid
    assert r1.status == "pending"
    corr = next(corr for corr, bs in h.requests() if TPB in bs)
    h.respond(corr, (TPB, "NONE", 10))
    assert r1.status == "acked" and r1.offset == 10
    assert h.tm.sequence_number(TPB) == 0


@pytest.mark.parametrize("version", ["2.5", "2.8", "3.0"])
def test_bump_epoch_when_out_of_order_sequence_received(version):
    """SenderTest.testBumpEpochWhenOutOfOrderSequenceReceived @2.5.0 / @2.8.0 / @3.0.0 (KIP-360;
    it replaced testResetWhenOutOfOrderSequenceReceived): the batch answered
    OUT_OF_ORDER_SEQUENCE_NUMBER is not failed; the epoch goes to 1, the producer id is kept and
    the batch is resent."""
    h = _idempotent(version)
    pid = h.p.producer_id
    r = h.append()
    h.run_once()
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", 0)
    h.run_once(100)
    assert r.status == "pending" and len(h.in_flight_batches(TP0)) == 1
    assert (h.tm.producer_id, h.tm.producer_epoch) == (pid, 1)


@pytest.mark.parametrize("version", ["2.5", "2.8"])
def test_epoch_bump_on_out_of_order_sequence_for_next_batch(version):
    """SenderTest.testEpochBumpOnOutOfOrderSequenceForNextBatch @2.5.0 / @2.8.0 (it replaced
    testMustNotRetryOutOfOrderSequenceForNextBatch): a two-record batch acked; the next batch's
    OUT_OF_ORDER_SEQUENCE_NUMBER bumps the epoch and the batch is rewritten to sequence 0."""
    h = _idempotent(version)
    h.append(n=2)
    h.run_once()
    h.respond_first(TP0, "NONE", 0, expected_seq=0)
    r2 = h.append()
    h.run_once()
    h.respond_first(TP0, "OUT_OF_ORDER_SEQUENCE_NUMBER", -1, expected_seq=2)
    h.run_once(100)
    assert r2.status == "pending" and h.tm.producer_epoch == 1
    assert h.tm.sequence_number(TP0) == 1
    (batch,) = h.in_flight_batches(TP0)
    assert (batch.epoch, batch.base_seq) == (1, 0)


def test_expiry_of_all_sent_batches_should_cause_unresolved_sequences_2_5():
    """SenderTest.testExpiryOfAllSentBatchesShouldCauseUnresolvedSequences @2.5.0 (KIP-360): the
    only sent batch, in retry, expires; the unresolved sequence bumps the epoch (to 1) and the
    producer id is kept (2.4.0: a new producer id)."""
    h = _idempotent("2.5")
    pid = h.p.producer_id
    r = h.append()
    h.run_once()
    h.respond_first(TP0, "NOT_LEADER_FOR_PARTITION", -1, expected_seq=0)
    h.run_once(15_000)
    assert r.status == "failed" and r.error == "TimeoutException"
    assert (h.tm.producer_id, h.tm.producer_epoch) == (pid, 1)


# --- ProducerStateManagerTest at 0.11.0.0, 1.0.0 and 2.4.0 ---------------------------------------


def _psm_append(states, pid: int, epoch: int, seq: int, offset: int, version: str) -> str:
    """ProducerStateManagerTest.append (prepareUpdate, append, update, updateMapEndOffset) as
    the leader takes a client batch of one record at ``offset``: kafkasim's verdict (the
    duplicate check of Log.analyzeAndValidateProducerState, then ProducerAppendInfo's)."""
    unknown = ps.unknown_producer_verdict(rules_for(version).clients)
    verdict, _ = states.check_append((pid, epoch, seq, seq), unknown)
    if verdict == "append":
        states.update([LogProducerBatch(offset, offset, pid, epoch, seq)])
        states.update_map_end_offset(offset + 1)
    return verdict


@pytest.mark.parametrize("version", ["0.11.0", "1.0", "2.4"])
def test_psm_basic_id_mapping_before_2_7(version):
    """ProducerStateManagerTest.testBasicIdMapping @0.11.0.0 / @1.0.0 / @2.4.0: sequences 0 and
    1 appended; a retry of sequence 1 is thrown out by the manager itself at 0.11-1.0
    (DuplicateSequenceNumberException / DuplicateSequenceException) and as an
    OutOfOrderSequenceException at 2.4 ("duplicates are checked separately"): the Log finds it
    first as a duplicate of the last batch in every version, which is kafkasim's verdict;
    sequence 5 is out of order; epoch 1 starts at 0; the old epoch is fenced
    (ProducerFencedException, the error INVALID_PRODUCER_EPOCH before 2.7 too)."""
    states = ps.ProducerStateManager()
    assert _psm_append(states, 1, 0, 0, 0, version) == "append"
    assert _psm_append(states, 1, 0, 1, 1, version) == "append"
    assert _psm_append(states, 1, 0, 1, 1, version) == "duplicate"
    assert _psm_append(states, 1, 0, 5, 2, version) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert _psm_append(states, 1, 1, 0, 3, version) == "append"
    assert _psm_append(states, 1, 0, 0, 4, version) == "INVALID_PRODUCER_EPOCH"


@pytest.mark.parametrize("version", ["0.11.0", "1.0", "2.4"])
def test_psm_start_offset(version):
    """ProducerStateManagerTest.testStartOffset @0.11.0.0 / @1.0.0 / @2.4.0 (removed in 2.5.0,
    where an unknown producer is accepted at any sequence): producer 2 at offset 0, producer 1
    at offsets 1-3, a snapshot at 4; a new manager reloaded to (log start 0, log end 1) keeps no
    snapshot and no producer, so producer 2's sequence 1 is refused: OutOfOrderSequenceException
    at 0.11, UnknownProducerIdException at 1.0-2.4 (KAFKA-5793)."""
    states = ps.ProducerStateManager()
    assert _psm_append(states, 2, 0, 0, 0, version) == "append"
    for seq in range(3):
        assert _psm_append(states, 1, 0, seq, seq + 1, version) == "append"
    assert states.take_snapshot().offset == 4
    recovered = ps.ProducerStateManager(states.snapshots)
    recovered.truncate_and_reload(0, 1, 0)
    assert recovered.snapshots == {} and recovered.active_producers() == {}
    expected = "UNKNOWN_PRODUCER_ID" if version != "0.11.0" else "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert _psm_append(recovered, 2, 0, 1, 4, version) == expected


@pytest.mark.parametrize("version", ["0.11.0", "1.0", "2.3"])
def test_psm_load_from_snapshot_removes_non_retained_producers(version):
    """ProducerStateManagerTest.testLoadFromSnapshotRemovesNonRetainedProducers @0.11.0.0 /
    @1.0.0 (to 2.3.0; 2.4.0: ...RetainsNonExpiredProducers, both kept): producers 1 and 2 at
    offsets 0 and 1, a snapshot at 2; truncateAndReload(log start 1, log end 2) drops producer
    1, whose batch is below the log start, and keeps producer 2 (last sequence 0, offset 1).
    The manager has the version's ``producer_state_evicts_below_log_start`` (until KAFKA-7190,
    2.4), as a broker's LogManager gives it."""
    evicts = rules_for(version).producer_state_evicts_below_log_start
    assert evicts
    states = ps.ProducerStateManager(evicts_below_log_start=evicts)
    assert _psm_append(states, 1, 0, 0, 0, version) == "append"
    assert _psm_append(states, 2, 0, 0, 1, version) == "append"
    states.take_snapshot()
    assert len(states.active_producers()) == 2
    states.truncate_and_reload(1, 2, 0)
    assert states.last_entry(1) is None and len(states.active_producers()) == 1
    e2 = states.last_entry(2)
    assert (e2.last_seq, e2.last_data_offset) == (0, 1)


@pytest.mark.parametrize("version", ["0.11.0", "1.0", "2.4", "2.6", "2.7"])
def test_invalid_producer_epoch_is_fatal_before_2_7(version):
    """Errors.INVALID_PRODUCER_EPOCH @0.11.0.0-2.6.0 is a ProducerFencedException, which
    Sender.failBatch (0.11-1.1) / TransactionManager.handleFailedBatch
    (maybeTransitionToErrorState, 2.0-2.6) makes fatal: the batch fails, and a record sent
    afterwards is taken (before 3.2 an idempotent producer's send does not check the state) and
    aborted by the sender with the same error, nothing sent. 2.7+ (KIP-588):
    InvalidProducerEpochException, not fatal: the next record is sent."""
    h = _idempotent(version)
    r1 = h.append()
    h.run_once()
    h.respond_first(TP0, "INVALID_PRODUCER_EPOCH", -1)
    assert r1.status == "failed" and r1.error == "INVALID_PRODUCER_EPOCH"
    fatal = version != "2.7"
    assert h.tm.has_fatal_error() is fatal
    r2 = h.append()
    h.run_once(200)
    if fatal:
        assert r2.status == "failed" and r2.error == "INVALID_PRODUCER_EPOCH"
        assert h.requests() == []
    else:
        assert r2.status == "pending" and len(h.requests()) == 1
