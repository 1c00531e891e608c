"""A batch of records for one partition: Kafka's ``ProducerBatch``.

``RecordAccumulator.append`` opens one, ``Sender`` sends it (and again on a retry), and
``ProducerBatch.done`` completes it once, with an offset or an error, for all its records.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkasim.core.errors import IllegalStateException
from kafkasim.runtime.clients.produce_result import (
    ACKED,
    FAILED,
    NO_ERRORS,
    PENDING,
    ProduceRequestResult,
)

#: the bytes a record counts for batch.size and for fetch sizes
RECORD_SIZE = 100
#: ProducerBatch.FinalState of a result's status (an abort is FAILED here)
_FINAL_STATE = {ACKED: "SUCCEEDED", FAILED: "FAILED"}


@dataclass(init=False)
class ProducerBatch:
    """Kafka's ProducerBatch: its records (each counts ``RECORD_SIZE`` bytes) and what
    the sender needs. A new batch (RecordAccumulator.append's ``new ProducerBatch``) sets its
    partition, records, creation time and result (a new pending one if none is given, as
    Kafka's constructor makes its produceFuture); the other fields keep their class defaults
    until the drain (attempts, the idempotent producer's id, epoch and sequence) or
    ``reenqueue`` (a retry's due time) sets them."""

    tp: tuple[str, int]
    record_ids: list[int]
    created_ms: int
    attempts: int = 0
    retry_at_ms: int = 0
    base_seq: int = -1        # idempotent producers: assigned at the first drain, kept on retries
    epoch: int = 0
    producer_id: int = -1     # ... with the producer id of that moment
    seq_reset: bool = False   # ProducerBatch.sequenceHasBeenReset: rewritten by an epoch bump
    last_append_ms: int = 0   # lastAppendTime: when records last went in
    last_attempt_ms: int = 0  # lastAttemptMs: its creation, then each time it is re-enqueued
    retry: bool = False       # inRetry: re-enqueued at least once
    # KAFKA-15415 (3.7): the leader epoch the batch last saw (-1: none, Kafka's empty
    # OptionalInt) and its attempts when that epoch changed
    current_leader_epoch: int = -1
    attempts_when_leader_last_changed: int = 0
    produce_future: ProduceRequestResult | None = None   # the outcome of all its records

    def __init__(self, tp: tuple[str, int], record_ids: list[int], created_ms: int,
                 produce_future: ProduceRequestResult | None = None) -> None:
        self.tp = tp
        self.record_ids = record_ids
        self.created_ms = created_ms
        self.last_append_ms = created_ms
        self.last_attempt_ms = created_ms
        if produce_future is None:
            produce_future = ProduceRequestResult(tp[0], tp[1], PENDING, -1, None, 0, NO_ERRORS)
        self.produce_future = produce_future

    @property
    def topic_partition(self) -> tuple[str, int]:
        """ProducerBatch.topicPartition: (topic, partition)."""
        return self.tp

    @property
    def record_count(self) -> int:
        """ProducerBatch.recordCount."""
        return len(self.record_ids)

    def drained(self) -> None:
        """ProducerBatch.drained: taken from the accumulator to be sent, one more attempt (here
        ``attempts`` counts sends: 1 for the first, as the record results show)."""
        self.attempts += 1
        self.produce_future.attempts = self.attempts

    def set_producer_state(self, producer_id: int, epoch: int, base_sequence: int) -> None:
        """ProducerBatch.setProducerState: an idempotent producer's id, epoch and first
        sequence, given at the first drain and kept on retries (KIP-98)."""
        self.producer_id = producer_id
        self.epoch = epoch
        self.base_seq = base_sequence

    @property
    def base_sequence(self) -> int:
        """ProducerBatch.baseSequence (RecordBatch.NO_SEQUENCE, -1, before the first drain)."""
        return self.base_seq

    @property
    def producer_epoch(self) -> int:
        """ProducerBatch.producerEpoch."""
        return self.epoch

    @property
    def sequence_has_been_reset(self) -> bool:
        """ProducerBatch.sequenceHasBeenReset."""
        return self.seq_reset

    def has_sequence(self) -> bool:
        """ProducerBatch.hasSequence."""
        return self.base_seq != -1

    @property
    def last_sequence(self) -> int:
        """ProducerBatch.lastSequence: the sequence of its last record."""
        return self.base_seq + len(self.record_ids) - 1

    def reset_producer_state(self, producer_id: int, epoch: int, base_sequence: int) -> None:
        """ProducerBatch.resetProducerState: an epoch bump rewrites an in-flight batch's
        producer id, epoch and first sequence (sequenceHasBeenReset from then on)."""
        self.producer_id = producer_id
        self.epoch = epoch
        self.base_seq = base_sequence
        self.seq_reset = True

    def maybe_update_leader_epoch(self, latest_leader_epoch: int | None) -> None:
        """ProducerBatch.maybeUpdateLeaderEpoch (3.7+, KAFKA-15415): a leader epoch newer than
        the one the batch saw (None or -1: unknown, ignored) is taken, with the attempts so far
        (kafkasim counts an attempt at each drain; while the batch is queued its count is
        Kafka's, which counts one at each re-enqueue)."""
        if latest_leader_epoch is not None and latest_leader_epoch > self.current_leader_epoch:
            self.attempts_when_leader_last_changed = self.attempts
            self.current_leader_epoch = latest_leader_epoch

    def has_leader_changed_for_the_ongoing_retry(self) -> bool:
        """ProducerBatch.hasLeaderChangedForTheOngoingRetry: a retry whose leader epoch moved
        since its last attempt (RecordAccumulator.shouldBackoff then skips the backoff)."""
        attempts = self.attempts
        return attempts >= 1 and attempts == self.attempts_when_leader_last_changed

    def reenqueued(self, now: int) -> None:
        """ProducerBatch.reenqueued: back in the accumulator for a retry."""
        self.last_attempt_ms = max(self.last_append_ms, now)
        self.last_append_ms = max(self.last_append_ms, now)
        self.retry = True

    def maybe_expire(self, request_timeout_ms: int, retry_backoff_ms: int, now: int,
                     linger_ms: int, is_full: bool) -> bool:
        """ProducerBatch.maybeExpire (0.10.0-2.0): waited longer than ``request.timeout.ms`` in
        the accumulator -- full, since its last append; not full, since its creation plus
        linger.ms; retried, since its last attempt plus its retry backoff."""
        if self.retry:
            return request_timeout_ms < now - self.last_attempt_ms - retry_backoff_ms
        if is_full and request_timeout_ms < now - self.last_append_ms:
            return True
        return request_timeout_ms < now - self.created_ms - linger_ms

    def maybe_expire_0_9(self, request_timeout_ms: int, now: int, linger_ms: int,
                         is_full: bool) -> bool:
        """RecordBatch.maybeExpire @0.9.0: full and ``request.timeout.ms`` since its last
        append, or ``request.timeout.ms`` since its last attempt plus linger.ms."""
        return (is_full and request_timeout_ms < now - self.last_append_ms) or \
            request_timeout_ms < now - (self.last_attempt_ms + linger_ms)

    def has_reached_delivery_timeout(self, delivery_timeout_ms: int, now: int) -> bool:
        """ProducerBatch.hasReachedDeliveryTimeout: ``delivery.timeout.ms`` since its creation."""
        return now - self.created_ms >= delivery_timeout_ms

    def complete(self, base_offset: int, log_append_time: int) -> bool:
        """ProducerBatch.complete: done, acknowledged at ``base_offset`` (kafkasim keeps the
        append time as the completion time)."""
        return self.done(ACKED, None, base_offset, log_append_time)

    def abort(self, error: str, now: int) -> bool:
        """ProducerBatch.abort: failed with ``error`` without an answer (a forced close, a
        fatal error); a batch already done cannot be aborted (IllegalStateException)."""
        fut = self.produce_future
        if fut.status != PENDING:
            raise IllegalStateException("Batch has already been completed in final state "
                                        f"{_FINAL_STATE[fut.status]}")
        return self.done(FAILED, error, -1, now)

    def done(self, status: str, error: str | None, base_offset: int, now: int) -> bool:
        """ProducerBatch.done: set the batch's result once, for all its records; False (and
        nothing changes) when it was done already -- a batch that expired in flight
        (delivery.timeout.ms) ignores the answer that comes later. A batch acknowledged
        already must not change again (IllegalStateException)."""
        fut = self.produce_future
        if fut.status != PENDING:
            if fut.status == ACKED:
                raise IllegalStateException(
                    "A SUCCEEDED batch must not attempt another state change to "
                    f"{_FINAL_STATE[status]}")
            return False
        fut.status = status
        fut.base_offset = base_offset
        fut.error = None if status == ACKED else error
        fut.done_ms = now
        return True
