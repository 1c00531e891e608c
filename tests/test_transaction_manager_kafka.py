"""Kafka's TransactionManagerTest, ported: its idempotent-producer (non-transactional) cases, from
clients/src/test/java/org/apache/kafka/clients/producer/internals/TransactionManagerTest.java at
tag 3.7.0 (the same cases at trunk, 4.0 development, only gained the transactionV2Enabled
parameter, which a non-transactional producer ignores).

How they are adapted to kafkasim:

- Kafka's ``initializeTransactionManager(Optional.empty())`` plus ``initializeIdempotentProducerId
  (producerId, epoch)`` (an InitProducerId answered) is ``TransactionManager(True, ...)`` plus
  ``set_producer_id_and_epoch`` (what InitProducerIdHandler.handleResponse does).
- ``writeIdempotentBatchWithValue`` is ``write_idempotent_batch``: maybeUpdateProducerIdAndEpoch,
  the partition's next sequence, incrementSequenceNumber, a one-record ``ProducerBatch`` with
  setProducerState, addInFlightBatch.
- A ``ProduceResponse.PartitionResponse(error, baseOffset, logAppendTime, logStartOffset)`` is
  kafkasim's ``PartitionResponse(error, base_offset, log_start_offset)``; an exception handed to
  handleFailedBatch is its error name (TimeoutException: ``E.DELIVERY_TIMEOUT``).
- ``runUntil(() -> epoch == n)`` runs the sender until its pass bumps the epoch: here the
  transaction manager's part of Sender.runOnce (``run_once``: maybeResolveSequences, then
  bumpIdempotentEpochAndResetIdIfNeeded), and for the two tests that drain,
  RecordAccumulator.drain with it.
- testDuplicateSequenceAfterProducerReset runs on a real ``Cluster`` (3.7) whose ProduceRequests
  are held on the wire (Kafka's MockClient never answers them either); ``time.sleep`` is
  ``c.run``.
- Kafka's ``lastAckedSequence`` / ``lastAckedOffset`` are OptionalInt / OptionalLong; kafkasim
  answers None for the empty one.

Already ported in tests/test_producer_internals_kafka.py (not repeated): testDefaultSequenceNumber,
testSequenceNumberOverflow. From tag 2.4.0 (before KIP-360) testResetSequenceNumbersAfterUnknown
ProducerId is ported too (the 2.4 producer's own rule, ``IdempotenceBeforeKip360``).

Left out: everything transactional (kafkasim has no transactions): begin/commit/abort
(testBasicTransaction, testHasOngoingTransaction*, testRetry*Transaction*, testCommit*,
testAbort*, testBumpTransactionalEpoch*, testTransitionToAbortableError*, testDropCommitOnBatch
Expiry, testRecoveryFromAbortableError*, testTransactionAbortableException*), AddPartitionsToTxn
and AddOffsetsToTxn / TxnOffsetCommit (testMaybeAddPartitionToTransaction,
testAddPartitionToTransaction*, testIsSendToPartitionAllowed*, testNotReadyForSend*,
test*InAddPartitions*, test*OffsetCommit*, testSendOffset*, testNoDrainWhenPartitionsPending,
testAllowDrainInAbortableErrorState, testRaiseErrorWhenNoPartitionsPendingOnDrain,
testFlushPendingPartitionsOnCommit, testMultipleAddPartitionsPerForOneProduce), transaction
coordinators and InitTransactions (testLookupCoordinator*, test*FindCoordinator*,
testUnsupported*, test*InitProducerId*, testInitializeTransactionsTwiceRaisesError,
testRetryInitTransactionsAfterTimeout, testDisconnectAndRetry, testRetriableErrors,
testCoordinatorNotAvailable, testCanBumpEpochDuringCoordinatorDisconnect,
testTransactionManagerEnablesV2), producer fencing of a transactional id (testProducerFenced*,
testInvalidProducerEpoch*), the transactional state machine (testBackgroundInvalidStateTransition
IsFatal, testForegroundInvalidStateTransitionIsRecoverable, testSenderShutdownWithPending
Transactions, testEndTxnNotSentIfIncompleteBatches, testFailIfNotReadyForSendNoProducerId /
NoOngoingTransaction / AfterAbortableError / AfterFatalError). In
testFailIfNotReadyForSendIdempotentProducerFatalError the beginTransaction call (transactional)
is left out.
"""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core.messages import PartitionResponse
from kafkasim.runtime.clients.producer_batch import ProducerBatch
from kafkasim.runtime.clients.producer_metadata import RetryBackoff
from kafkasim.runtime.clients.record_accumulator import RecordAccumulator
from kafkasim.runtime.clients.transaction_manager import (
    NO_PRODUCER_ID_AND_EPOCH,
    SHORT_MAX,
    KafkaException,
    ProducerIdAndEpoch,
    TransactionManager,
)
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.versions import rules_for

TOPIC = "test"
TP0, TP1 = (TOPIC, 0), (TOPIC, 1)
PRODUCER_ID = 13131
EPOCH = 1
NODE = 0


def idempotent_producer(producer_id: int = PRODUCER_ID, epoch: int = EPOCH
                        ) -> TransactionManager:
    """initializeTransactionManager(Optional.empty()) + initializeIdempotentProducerId."""
    tm = TransactionManager(True, producer_id=-1)
    tm.set_producer_id_and_epoch(ProducerIdAndEpoch(producer_id, epoch))
    return tm


class Batches:
    """writeIdempotentBatchWithValue: one-record batches with fresh record ids."""

    def __init__(self) -> None:
        self.next_id = 0

    def __call__(self, tm: TransactionManager, tp) -> ProducerBatch:
        tm.maybe_update_producer_id_and_epoch(tp)
        seq = tm.sequence_number(tp)
        tm.increment_sequence_number(tp, 1)
        batch = ProducerBatch(tp, [self.next_id], 0)
        self.next_id += 1
        batch.set_producer_state(*tm.producer_id_and_epoch, seq)
        tm.add_in_flight_batch(batch)
        return batch


def run_once(tm: TransactionManager, accum: RecordAccumulator | None = None, now: int = 0):
    """Sender.runOnce: the transaction manager's part (maybeResolveSequences,
    bumpIdempotentEpochAndResetIdIfNeeded), then (with an accumulator) the drain for the
    node leading both partitions."""
    tm.maybe_resolve_sequences()
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    if accum is not None:
        return accum.drain({TP0: NODE, TP1: NODE}, {NODE: None}, now)
    return None


def ok(base_offset: int = 500) -> PartitionResponse:
    """new PartitionResponse(Errors.NONE, baseOffset, appendTime, 0)."""
    return PartitionResponse(E.NONE, base_offset, 0)


# ------------------------------------------------------------------------ readiness to send


def test_fail_if_not_ready_for_send_idempotent_producer():
    """testFailIfNotReadyForSendIdempotentProducer: an idempotent producer sends to any
    partition (maybeAddPartition adds nothing and raises nothing)."""
    tm = TransactionManager(True, producer_id=PRODUCER_ID)
    tm.maybe_add_partition(TP0)
    assert tm.is_send_to_partition_allowed(TP0)


def test_fail_if_not_ready_for_send_idempotent_producer_fatal_error():
    """testFailIfNotReadyForSendIdempotentProducerFatalError: in the fatal state
    maybeAddPartition raises a KafkaException and no partition may be sent to."""
    tm = TransactionManager(True, producer_id=PRODUCER_ID)
    tm.transition_to_fatal_error(KafkaException())
    with pytest.raises(KafkaException):
        tm.maybe_add_partition(TP0)
    assert not tm.is_send_to_partition_allowed(TP0)


# ------------------------------------------------------------- epoch bumps and sequence resets


def test_bump_epoch_and_reset_sequence_numbers_after_unknown_producer_id():
    """testBumpEpochAndResetSequenceNumbersAfterUnknownProducerId: the first of five batches is
    acked at 500; UNKNOWN_PRODUCER_ID with log start offset 500 for the second is retried with
    an epoch bump: epoch 2, the four unacked batches renumbered 0..3."""
    tm = idempotent_producer()
    write = Batches()
    b1, b2, b3, b4, b5 = (write(tm, TP0) for _ in range(5))
    assert tm.sequence_number(TP0) == 5
    b1.complete(500, 0)
    tm.handle_completed_batch(b1, ok(500))
    assert tm.can_retry(PartitionResponse(E.UNKNOWN_PRODUCER_ID, -1, 500), b2)
    run_once(tm)
    assert tm.producer_id_and_epoch.epoch == 2
    assert b2.producer_epoch == 2
    assert [b.base_sequence for b in (b2, b3, b4, b5)] == [0, 1, 2, 3]


def test_reset_sequence_numbers_after_unknown_producer_id_2_4():
    """testResetSequenceNumbersAfterUnknownProducerId @2.4.0 (before KIP-360): the log start
    offset (600) jumped past the first batch's offset (500): UNKNOWN_PRODUCER_ID is retried
    after the partition's in-flight batches restart at sequence 0, with the same producer id
    and epoch (startSequencesAtBeginning); the next sequence is 4."""
    tm = TransactionManager(True, producer_id=-1, rules=rules_for("2.4").clients)
    tm.set_producer_id_and_epoch(ProducerIdAndEpoch(PRODUCER_ID, EPOCH))
    write = Batches()
    b1, b2, b3, b4, b5 = (write(tm, TP0) for _ in range(5))
    assert tm.sequence_number(TP0) == 5
    b1.complete(500, 0)
    tm.handle_completed_batch(b1, ok(500))
    assert tm.legacy.can_retry_unknown_producer_id(b2, 600)
    assert tm.sequence_number(TP0) == 4
    assert [b.base_sequence for b in (b2, b3, b4, b5)] == [0, 1, 2, 3]
    assert tm.producer_id_and_epoch == (PRODUCER_ID, EPOCH)


def test_batch_failure_after_producer_reset():
    """testBatchFailureAfterProducerReset: at epoch Short.MAX_VALUE an epoch bump resets the
    producer id; only the partition that asked for it (tp0) restarts its in-flight batch at
    sequence 0, tp1 keeps its sequences."""
    tm = idempotent_producer(epoch=SHORT_MAX)
    write = Batches()
    tp0b1, tp1b1 = write(tm, TP0), write(tm, TP1)
    tm.handle_completed_batch(tp0b1, PartitionResponse(E.NONE, -1, 400))
    tm.handle_completed_batch(tp1b1, PartitionResponse(E.NONE, -1, 400))
    tp0b2, tp1b2 = write(tm, TP0), write(tm, TP1)
    assert tm.sequence_number(TP0) == 2 and tm.sequence_number(TP1) == 2
    assert tm.can_retry(PartitionResponse(E.UNKNOWN_PRODUCER_ID, -1, 400), tp0b1)
    tm.handle_completed_batch(tp1b1, PartitionResponse(E.NONE, -1, 400))
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    assert tm.producer_id_and_epoch == NO_PRODUCER_ID_AND_EPOCH and not tm.has_producer_id()
    assert tm.sequence_number(TP0) == 1
    assert tm.next_batch_by_sequence(TP0) is tp0b2
    assert tm.sequence_number(TP1) == 2
    assert tm.next_batch_by_sequence(TP1) is tp1b2


def test_batch_completed_after_producer_reset():
    """testBatchCompletedAfterProducerReset: the producer id is reset (tp1 asked for a bump at
    Short.MAX_VALUE) and a new one handed out; tp0 keeps its old state while its batches are in
    flight, and once they are acked starts the new producer id at sequence 0."""
    tm = idempotent_producer(epoch=SHORT_MAX)
    write = Batches()
    b1 = write(tm, TP0)
    write(tm, TP1)
    b2 = write(tm, TP0)
    assert tm.sequence_number(TP0) == 2
    tm.request_epoch_bump_for_partition(TP1)
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    tm.set_producer_id_and_epoch(ProducerIdAndEpoch(PRODUCER_ID + 1, 0))
    tm.handle_completed_batch(b1, ok())
    assert tm.sequence_number(TP0) == 2
    assert tm.last_acked_sequence(TP0) == 0
    assert tm.next_batch_by_sequence(TP0) is b2
    assert tm.next_batch_by_sequence(TP0).producer_epoch == SHORT_MAX
    tm.handle_completed_batch(b2, ok())
    tm.maybe_update_producer_id_and_epoch(TP0)
    assert tm.sequence_number(TP0) == 0
    assert tm.last_acked_sequence(TP0) is None
    assert tm.next_batch_by_sequence(TP0) is None


def test_producer_id_reset():
    """testProducerIdReset: an epoch bump asked for tp0 at Short.MAX_VALUE restarts tp0 at
    sequence 0; tp1 keeps sequence 3."""
    tm = idempotent_producer(producer_id=15, epoch=SHORT_MAX)
    assert tm.sequence_number(TP0) == 0 and tm.sequence_number(TP1) == 0
    tm.increment_sequence_number(TP0, 3)
    assert tm.sequence_number(TP0) == 3
    tm.increment_sequence_number(TP1, 3)
    assert tm.sequence_number(TP1) == 3
    tm.request_epoch_bump_for_partition(TP0)
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    assert tm.sequence_number(TP0) == 0
    assert tm.sequence_number(TP1) == 3


# ------------------------------------------------------------------- unresolved sequences


def test_bump_epoch_after_timeout_without_pending_inflight_requests():
    """testBumpEpochAfterTimeoutWithoutPendingInflightRequests: an unresolved sequence whose
    batch was acked resolves at once; one whose only batch timed out resolves by an epoch bump
    (5 -> 6), the producer id kept."""
    tm = idempotent_producer(producer_id=15, epoch=5)
    id_and_epoch = ProducerIdAndEpoch(15, 5)
    tm.bump_idempotent_epoch_and_reset_id_if_needed()   # nothing to resolve: no bump
    assert tm.producer_id_and_epoch == id_and_epoch
    tp = ("foo", 0)
    write = Batches()
    assert tm.sequence_number(tp) == 0
    b1 = write(tm, tp)
    assert tm.sequence_number(tp) == 1
    tm.handle_completed_batch(b1, ok())
    assert tm.last_acked_sequence(tp) == 0
    tm.mark_sequence_unresolved(b1)   # without batches in flight: nothing to do
    tm.maybe_resolve_sequences()
    assert tm.producer_id_and_epoch == id_and_epoch
    assert not tm.has_unresolved_sequences()
    b2 = write(tm, tp)
    assert tm.sequence_number(tp) == 2
    tm.mark_sequence_unresolved(b2)
    tm.handle_failed_batch(b2, E.DELIVERY_TIMEOUT, False)
    assert tm.has_unresolved_sequences()
    tm.maybe_resolve_sequences()
    assert not tm.has_unresolved_sequences()
    run_once(tm)
    assert tm.producer_id_and_epoch == (15, 6)


def test_no_producer_id_reset_after_last_in_flight_batch_succeeds():
    """testNoProducerIdResetAfterLastInFlightBatchSucceeds: the first two of three batches time
    out; no bump while the third is in flight; it is acked, which resolves the sequence with no
    bump (next sequence still 3)."""
    tm = idempotent_producer(producer_id=15, epoch=5)
    id_and_epoch = ProducerIdAndEpoch(15, 5)
    tp = ("foo", 0)
    write = Batches()
    b1, b2, b3 = (write(tm, tp) for _ in range(3))
    assert tm.sequence_number(tp) == 3
    tm.mark_sequence_unresolved(b1)
    tm.handle_failed_batch(b1, E.DELIVERY_TIMEOUT, False)
    assert tm.has_unresolved_sequences()
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    assert tm.producer_id_and_epoch == id_and_epoch and tm.has_unresolved_sequences()
    tm.handle_failed_batch(b2, E.DELIVERY_TIMEOUT, False)
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    assert tm.producer_id_and_epoch == id_and_epoch and tm.has_unresolved_sequences()
    tm.handle_completed_batch(b3, ok())
    tm.maybe_resolve_sequences()
    assert tm.producer_id_and_epoch == id_and_epoch
    assert not tm.has_unresolved_sequences()
    assert tm.sequence_number(tp) == 3


def test_epoch_bump_after_last_inflight_batch_fails():
    """testEpochBumpAfterLastInflightBatchFails: the first batch times out (unresolved), the
    second is acked, the third times out too: with nothing left in flight the sequence is a
    real gap, so the epoch is bumped (1 -> 2) and the partition restarts at 0."""
    tm = idempotent_producer()
    id_and_epoch = ProducerIdAndEpoch(PRODUCER_ID, EPOCH)
    tp = ("foo", 0)
    write = Batches()
    b1, b2, b3 = (write(tm, tp) for _ in range(3))
    assert tm.sequence_number(tp) == 3
    tm.mark_sequence_unresolved(b1)
    tm.handle_failed_batch(b1, E.DELIVERY_TIMEOUT, False)
    assert tm.has_unresolved_sequences()
    tm.handle_completed_batch(b2, ok())
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    assert tm.producer_id_and_epoch == id_and_epoch and tm.has_unresolved_sequences()
    tm.handle_failed_batch(b3, E.DELIVERY_TIMEOUT, False)
    run_once(tm)
    assert tm.producer_id_and_epoch.epoch == 2
    assert not tm.has_unresolved_sequences()
    assert tm.sequence_number(tp) == 0


def test_no_failed_batch_handling_when_txn_manager_is_in_fatal_error():
    """testNoFailedBatchHandlingWhenTxnManagerIsInFatalError: OUT_OF_ORDER_SEQUENCE_NUMBER bumps
    the epoch (5 -> 6); once the producer is in its fatal state a failed batch (even one whose
    sequence should be adjusted) bumps nothing."""
    tm = idempotent_producer(producer_id=15, epoch=5)
    tp = ("foo", 0)
    write = Batches()
    b1 = write(tm, tp)
    tm.handle_failed_batch(b1, E.OUT_OF_ORDER_SEQUENCE_NUMBER, False)
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    after_first = ProducerIdAndEpoch(15, 6)
    assert tm.producer_id_and_epoch == after_first
    tm.transition_to_fatal_error(KafkaException())
    b2 = write(tm, tp)
    tm.handle_failed_batch(b2, E.DELIVERY_TIMEOUT, True)
    tm.bump_idempotent_epoch_and_reset_id_if_needed()
    assert tm.producer_id_and_epoch == after_first


# ------------------------------------------- a healthy partition while another bumps the epoch


@pytest.mark.parametrize("kafka_test", ["testHealthyPartitionRetriesDuringEpochBump",
                                        "testFailedInflightBatchAfterEpochBump"])
def test_healthy_partition_retries_during_epoch_bump(kafka_test):
    """testHealthyPartitionRetriesDuringEpochBump / testFailedInflightBatchAfterEpochBump (the
    same steps in 3.7.0): tp0's UNKNOWN_PRODUCER_ID bumps the epoch (1 -> 2) and rewrites tp0's
    in-flight batches only; tp1 keeps its old-epoch batch in flight, its new batch is not
    drained meanwhile; the old-epoch batch is retried (NOT_LEADER_OR_FOLLOWER) and drained
    ahead of it, and once it is acked tp1 restarts at sequence 0 of epoch 2."""
    tm = idempotent_producer()
    accum = RecordAccumulator(16 * 1024, 0, RetryBackoff.of(50), 3000, tm)
    write = Batches()
    tp0b1, tp0b2 = write(tm, TP0), write(tm, TP0)
    write(tm, TP0)
    tp1b1, tp1b2 = write(tm, TP1), write(tm, TP1)
    assert tm.sequence_number(TP0) == 3 and tm.sequence_number(TP1) == 2
    for b in (tp0b1, tp1b1):   # the first batch of each partition succeeds
        b.complete(500, 0)
        tm.handle_completed_batch(b, ok())
    assert tm.can_retry(PartitionResponse(E.UNKNOWN_PRODUCER_ID, -1, 500), tp0b2)
    run_once(tm, accum)
    assert tm.producer_id_and_epoch.epoch == 2
    # tp0's batches are rewritten, tp1's are not
    assert tm.next_batch_by_sequence(TP0) is tp0b2
    assert tm.first_in_flight_sequence(TP0) == 0
    assert tp0b2.base_sequence == 0 and tp0b2.sequence_has_been_reset
    assert tp0b2.producer_epoch == 2
    assert tm.next_batch_by_sequence(TP1) is tp1b2
    assert tm.first_in_flight_sequence(TP1) == 1
    assert tp1b2.base_sequence == 1 and not tp1b2.sequence_has_been_reset
    assert tp1b2.producer_epoch == 1
    # no new tp1 batch is drained while tp1 has in-flight batches of the old epoch
    accum.append(TP1, 100, 101, 0)
    run_once(tm, accum)
    assert len(accum.get_deque(TP1)) == 1
    # NOT_LEADER_OR_FOLLOWER: the old-epoch batch is retried, drained ahead of the new one
    assert tm.can_retry(PartitionResponse(E.NOT_LEADER_OR_FOLLOWER, -1, 600), tp1b2)
    accum.reenqueue(tp1b2, 0)
    drained = run_once(tm, accum)
    assert drained[NODE][TP1] is tp1b2
    assert len(accum.get_deque(TP1)) == 1 and accum.get_deque(TP1)[0] is not tp1b2
    assert tp1b2.producer_epoch == EPOCH
    tp1b2.complete(500, 0)
    tm.handle_completed_batch(tp1b2, ok())
    tm.maybe_update_producer_id_and_epoch(TP1)
    assert not tm.has_inflight_batches(TP1)
    assert tm.sequence_number(TP1) == 0
    # the last batch is drained now, with the new epoch
    run_once(tm, accum)
    assert tm.has_inflight_batches(TP1)
    assert not accum.get_deque(TP1)
    tp1b3 = tm.next_batch_by_sequence(TP1)
    assert tp1b3.producer_epoch == EPOCH + 1
    tp1b3.complete(500, 0)
    tm.handle_completed_batch(tp1b3, ok())
    if kafka_test == "testHealthyPartitionRetriesDuringEpochBump":
        tm.maybe_update_producer_id_and_epoch(TP1)
    assert not tm.has_inflight_batches(TP1)
    assert tm.sequence_number(TP1) == 1


# ----------------------------------------------------------------- through a real sender


def test_duplicate_sequence_after_producer_reset():
    """testDuplicateSequenceAfterProducerReset (request.timeout.ms 10000, delivery.timeout.ms
    15000, no retry backoff): the batch's request times out and it is resent; it expires in
    flight (TimeoutException) with its sequence unresolved; the next sender pass bumps the
    epoch (the partition restarts at 0); a new batch goes with sequence 0 and stays in flight
    when the old request times out."""
    c = Cluster(3, seed=1, kafka_version="3.7", latency_ms=1, jitter_ms=0)
    c.create_topic(TOPIC, 1, 3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all", linger_ms=0, retry_backoff_ms=0,
                   request_timeout_ms=10_000, delivery_timeout_ms=15_000)
    c.run(500)
    tm = p.transaction_manager
    epoch = tm.producer_epoch
    c.hold(type="ProduceRequest")
    assert tm.sequence_number(TP0) == 0
    r1 = p.send(TOPIC, "1", partition=0)
    c.run(0)
    assert tm.sequence_number(TP0) == 1
    c.run(10_000)   # the request times out; the batch is resent (no backoff)
    assert len(p.in_flight) == 1
    assert tm.has_inflight_batches(TP0)
    assert tm.sequence_number(TP0) == 1
    c.run(5_000)    # delivery timeout: the batch expires, its retried request stays in flight
    assert r1.status == "failed" and r1.error == "TimeoutException"
    assert len(p.in_flight) == 1
    p.sender.send_producer_data()   # sender.runOnce(): bump the epoch
    assert tm.producer_id_and_epoch.epoch == epoch + 1
    assert tm.sequence_number(TP0) == 0
    r2 = p.send(TOPIC, "2", partition=0)
    c.run(0)
    assert tm.first_in_flight_sequence(TP0) == 0
    assert tm.sequence_number(TP0) == 1
    c.run(5_000)    # the first request times out again
    assert tm.has_inflight_batches(TP0)
    assert r2.status == "pending"
