"""The idempotent producer's id, epoch and sequence numbers: Kafka's ``TransactionManager``.

As far as an idempotent, non-transactional producer uses it: KIP-98 (0.11), and KIP-360's epoch
bump (2.5). Each partition has a ``TxnPartitionEntry`` (Kafka's TxnPartitionMap /
TxnPartitionEntry, the ``topicPartitionBookkeeper`` before 3.5): its next sequence, last
acknowledged sequence and offset, the producer id and epoch its sequences belong to (2.8+,
KAFKA-12152) and its in-flight batches (drained with a sequence and not yet completed or failed,
whether on the wire or queued for a retry), by sequence.

From 2.5 (KIP-360) the sender drives it as Kafka 3.7's does: an error that leaves a sequence gap
requests an epoch bump for its partition (``request_epoch_bump_for_partition``), done at the
start of the next sender pass (``bump_idempotent_epoch_and_reset_id_if_needed``) with the
partition's in-flight batches renumbered from 0; other partitions take the new epoch at their
next drain (``maybe_update_producer_id_and_epoch``, 2.8+). A batch that expires after a retry
leaves its sequence unresolved (``mark_sequence_unresolved``) until the partition's in-flight
batches are done (``maybe_resolve_sequences``). An epoch bump at Short.MAX_VALUE resets the
producer id instead (``reset_idempotent_producer_id``); the sender then gets a new one
(InitProducerId, answered at once in kafkasim). Errors that leave the producer in its fatal
state (``transition_to_fatal_error``: ClusterAuthorizationException, ProducerFencedException,
...) stop its sends; no simulated broker answers a produce with them.

Before 2.5 kafkasim keeps its simpler model (``IdempotenceBeforeKip360``):
``can_retry_out_of_order`` (reset the producer id on a real gap), UNKNOWN_PRODUCER_ID retried by
the log start offset the answer carries (1.0-2.4: the partition's sequences restarted when the
log's head is gone, else the producer id reset), 1.0-2.4: a failed sequenced batch moves its
partition's later sequences down and an expired batch sent at least once leaves its sequence
unresolved, the producer id reset when nothing resolves it (``reset_producer_id_if_needed``);
0.11: sequences count on success only, so any other failed sequenced batch gives its sequence
back to its partition (``release_sequence_of_failed_batch``), and an expired batch that was
sent before resets the producer id.
"""

from __future__ import annotations

from itertools import chain
from typing import NamedTuple

from kafkasim.core import errors as E
from kafkasim.runtime.clients.produce_result import PENDING
from kafkasim.runtime.clients.producer_batch import ProducerBatch
from kafkasim.runtime.clients.subscription_state import IllegalStateException

TopicPartition = tuple[str, int]

#: Integer.MAX_VALUE: sequences wrap past it (DefaultRecordBatch.incrementSequence)
INT_MAX = 2**31 - 1
#: Short.MAX_VALUE: the last producer epoch; a bump past it resets the producer id
SHORT_MAX = 2**15 - 1
#: RecordBatch.NO_PRODUCER_ID
NO_PRODUCER_ID = -1
#: RecordBatch.NO_SEQUENCE
NO_SEQUENCE = -1
#: TxnPartitionEntry.NO_LAST_ACKED_SEQUENCE_NUMBER
NO_LAST_ACKED_SEQUENCE_NUMBER = -1


class ProducerIdAndEpoch(NamedTuple):
    """org.apache.kafka.common.utils.ProducerIdAndEpoch (a tuple: equal to ``(id, epoch)``)."""

    producer_id: int
    epoch: int

    def is_valid(self) -> bool:
        """ProducerIdAndEpoch.isValid: a producer id has been handed out."""
        return self.producer_id > NO_PRODUCER_ID


#: ProducerIdAndEpoch.NONE
NO_PRODUCER_ID_AND_EPOCH = ProducerIdAndEpoch(NO_PRODUCER_ID, -1)

# TransactionManager.State, as far as an idempotent producer goes (kafkasim's producer has its
# producer id from its start: READY)
UNINITIALIZED = "UNINITIALIZED"
INITIALIZING = "INITIALIZING"
READY = "READY"
FATAL_ERROR = "FATAL_ERROR"

#: TransactionManager.maybeTransitionToErrorState: a failed batch with one of these errors leaves
#: the producer in FATAL_ERROR
FATAL_ERRORS = frozenset({E.CLUSTER_AUTHORIZATION_FAILED, E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,
                          E.PRODUCER_FENCED, E.UNSUPPORTED_VERSION})
#: 0.11-2.6: INVALID_PRODUCER_EPOCH is a ProducerFencedException (KIP-588 split them in 2.7)
FATAL_ERRORS_BEFORE_KIP_588 = FATAL_ERRORS | {E.INVALID_PRODUCER_EPOCH}


class KafkaException(RuntimeError):
    """org.apache.kafka.common.KafkaException: what a producer in its fatal state raises."""


def increment_sequence(sequence: int, increment: int) -> int:
    """DefaultRecordBatch.incrementSequence (2.2+, KAFKA-7693): past Integer.MAX_VALUE the
    sequence wraps to 0."""
    if sequence > INT_MAX - increment:
        return increment - (INT_MAX - sequence) - 1
    return sequence + increment


def _java_int_add(sequence: int, increment: int) -> int:
    """Before 2.2 ``nextSequence += increment``: a Java int, which overflows to negative."""
    return (sequence + increment + 2**31) % 2**32 - 2**31


def _on_the_wire(in_flight: dict, tp: TopicPartition):
    """The batches of ``tp`` in the requests in flight (``Sender.in_flight``)."""
    return (entry[3][tp] for entry in in_flight.values() if tp in entry[3])


def _precedes(x: ProducerBatch, b: ProducerBatch) -> bool:
    """``x`` is an unanswered batch of ``b``'s producer id and epoch with an earlier sequence."""
    return x is not b and x.produce_future.status == PENDING and \
        0 <= x.base_seq < b.base_seq and (x.producer_id, x.epoch) == (b.producer_id, b.epoch)


def _by_sequence(b: ProducerBatch) -> tuple[int, int, int]:
    """TxnPartitionEntry.PRODUCER_BATCH_COMPARATOR: producer id, epoch, base sequence."""
    return b.producer_id, b.epoch, b.base_seq


class TxnPartitionEntry:
    """Kafka's TxnPartitionEntry: one partition's sequence bookkeeping. ``in_flight`` holds its
    batches that have a sequence and are not done (inflightBatchesBySequence; a batch done by
    other means than the sender's completion, e.g. in a test, counts as gone)."""

    __slots__ = ("tp", "producer_id_and_epoch", "next_sequence", "last_acked_sequence",
                 "last_acked_offset", "in_flight")

    def __init__(self, tp: TopicPartition) -> None:
        self.tp = tp
        self.producer_id_and_epoch = NO_PRODUCER_ID_AND_EPOCH
        self.next_sequence = 0
        self.last_acked_sequence = NO_LAST_ACKED_SEQUENCE_NUMBER
        self.last_acked_offset = -1
        self.in_flight: list[ProducerBatch] = []

    def inflight_batches_by_sequence(self) -> list[ProducerBatch]:
        """The in-flight batches, in the comparator's order (done ones dropped)."""
        live = [b for b in self.in_flight if b.produce_future.status == PENDING]
        live.sort(key=_by_sequence)
        self.in_flight = live
        return live

    def has_inflight_batches(self) -> bool:
        """TxnPartitionEntry.hasInflightBatches."""
        return any(b.produce_future.status == PENDING for b in self.in_flight)

    def next_batch_by_sequence(self) -> ProducerBatch | None:
        """TxnPartitionEntry.nextBatchBySequence: the first in-flight batch (None: none)."""
        live = self.inflight_batches_by_sequence()
        return live[0] if live else None

    def remove_in_flight_batch(self, batch: ProducerBatch) -> None:
        """TxnPartitionEntry.removeInFlightBatch."""
        in_flight = self.in_flight
        for i, b in enumerate(in_flight):
            if b is batch:
                del in_flight[i]
                return

    def start_sequences_at_beginning(self, producer_id_and_epoch: tuple[int, int]) -> None:
        """TxnPartitionEntry.startSequencesAtBeginning: the in-flight batches get the new
        producer id and epoch and sequences from 0 (ProducerBatch.resetProducerState), the
        partition's next sequence follows them, nothing is acknowledged in the new epoch."""
        sequence = 0
        pid, epoch = producer_id_and_epoch
        for b in self.inflight_batches_by_sequence():
            b.reset_producer_state(pid, epoch, sequence)
            sequence += b.record_count
        self.producer_id_and_epoch = producer_id_and_epoch
        self.next_sequence = sequence
        self.last_acked_sequence = NO_LAST_ACKED_SEQUENCE_NUMBER

    def maybe_update_last_acked_sequence(self, sequence: int) -> int:
        """TxnPartitionEntry.maybeUpdateLastAckedSequence."""
        if sequence > self.last_acked_sequence:
            self.last_acked_sequence = sequence
        return self.last_acked_sequence


class TransactionManager:
    """What Kafka's TransactionManager keeps for an idempotent producer (KIP-98): its producer
    id and epoch, its state (READY; FATAL_ERROR after a fatal error; UNINITIALIZED and
    INITIALIZING around a producer id reset) and a ``TxnPartitionEntry`` per partition.
    ``in_flight`` is the sender's map of requests on the wire (correlation id -> [deadline,
    timeout id, broker, {tp: batch}]), which the model before 2.5 reads (``legacy``).
    ``rules``: the cluster's ``ClientRules`` (None: the newest behaviour)."""

    def __init__(self, idempotent: bool, producer_id: int, in_flight: dict | None = None,
                 rules=None) -> None:
        self.idempotent = idempotent
        # the id InitProducerId would hand out: one per producer client, stable for its life
        self.producer_id = producer_id
        self.producer_epoch = 0
        self.current_state = READY   # (InitProducerId answered when the producer started)
        self.last_error: object = None
        self.partitions: dict[TopicPartition, TxnPartitionEntry] = {}
        self.partitions_with_unresolved_sequences: dict[TopicPartition, int] = {}
        self.partitions_to_rewrite_sequences: dict[TopicPartition, None] = {}
        self.epoch_bump_required = False
        # producer ids and epochs this producer has had besides the first (bumps and resets):
        # while 0, no batch can carry a stale one (the model before 2.5)
        self.changes = 0
        #: KIP-360 (2.5+): epoch bumps requested per partition, unresolved sequences
        self.kip360 = rules is None or rules.idempotent_out_of_order_bumps_epoch
        #: KAFKA-12152 (2.8+): a partition's producer id and epoch, updated at its next drain
        self.partition_epoch = rules is None or rules.idempotent_partition_epoch_updated_at_drain
        self.sequence_wraps = rules is None or rules.producer_sequence_wraps
        #: before 2.7 (KIP-588) INVALID_PRODUCER_EPOCH is a ProducerFencedException: fatal
        self.fatal_errors = FATAL_ERRORS_BEFORE_KIP_588 \
            if rules is not None and rules.invalid_producer_epoch_fences_producer else FATAL_ERRORS
        #: the model before 2.5
        self.legacy = IdempotenceBeforeKip360(self, in_flight if in_flight is not None else {})

    # -- producer id and epoch ----------------------------------------------------------------
    @property
    def producer_id_and_epoch(self) -> ProducerIdAndEpoch:
        """TransactionManager.producerIdAndEpoch."""
        return ProducerIdAndEpoch(self.producer_id, self.producer_epoch)

    def set_producer_id_and_epoch(self, producer_id_and_epoch: tuple[int, int]) -> None:
        """TransactionManager.setProducerIdAndEpoch as InitProducerIdHandler.handleResponse
        calls it: the producer id and epoch InitProducerId answered; the producer is READY."""
        self.producer_id, self.producer_epoch = producer_id_and_epoch
        self.current_state = READY
        self.last_error = None

    def has_producer_id(self) -> bool:
        """TransactionManager.hasProducerId."""
        return self.producer_id > NO_PRODUCER_ID

    # -- sequences ----------------------------------------------------------------------------
    def get_or_create(self, tp: TopicPartition) -> TxnPartitionEntry:
        """TxnPartitionMap.getOrCreate."""
        entry = self.partitions.get(tp)
        if entry is None:
            entry = self.partitions[tp] = TxnPartitionEntry(tp)
        return entry

    def sequence_number(self, tp: TopicPartition) -> int:
        """TransactionManager.sequenceNumber: the partition's next sequence."""
        entry = self.partitions.get(tp)
        return entry.next_sequence if entry is not None else 0

    def increment_sequence_number(self, tp: TopicPartition, increment: int) -> None:
        """TransactionManager.incrementSequenceNumber: ``increment`` records got sequences;
        past Integer.MAX_VALUE the sequence wraps to 0 (2.2+; before, a Java int overflow)."""
        entry = self.get_or_create(tp)
        add = increment_sequence if self.sequence_wraps else _java_int_add
        entry.next_sequence = add(entry.next_sequence, increment)

    def add_in_flight_batch(self, batch: ProducerBatch) -> None:
        """TransactionManager.addInFlightBatch: track a batch that got its sequence."""
        if batch.base_seq == NO_SEQUENCE:
            raise IllegalStateException(f"Can't track batch for partition {batch.tp} when "
                                        "sequence is not set.")
        self.get_or_create(batch.tp).in_flight.append(batch)

    def remove_in_flight_batch(self, batch: ProducerBatch) -> None:
        """TransactionManager.removeInFlightBatch."""
        entry = self.partitions.get(batch.tp)
        if entry is not None:
            entry.remove_in_flight_batch(batch)

    def has_inflight_batches(self, tp: TopicPartition) -> bool:
        """TransactionManager.hasInflightBatches."""
        entry = self.partitions.get(tp)
        return entry is not None and entry.has_inflight_batches()

    def next_batch_by_sequence(self, tp: TopicPartition) -> ProducerBatch | None:
        """TransactionManager.nextBatchBySequence: the partition's in-flight batch with the
        lowest sequence (None: none)."""
        entry = self.partitions.get(tp)
        return entry.next_batch_by_sequence() if entry is not None else None

    def first_in_flight_sequence(self, tp: TopicPartition) -> int:
        """TransactionManager.firstInFlightSequence (NO_SEQUENCE: none in flight)."""
        first = self.next_batch_by_sequence(tp)
        return first.base_seq if first is not None else NO_SEQUENCE

    def last_acked_sequence(self, tp: TopicPartition) -> int | None:
        """TransactionManager.lastAckedSequence (None: none acknowledged, Kafka's empty
        OptionalInt)."""
        entry = self.partitions.get(tp)
        if entry is None or entry.last_acked_sequence == NO_LAST_ACKED_SEQUENCE_NUMBER:
            return None
        return entry.last_acked_sequence

    def last_acked_offset(self, tp: TopicPartition) -> int | None:
        """TransactionManager.lastAckedOffset: the offset of the partition's last acknowledged
        record (None: none, Kafka's empty OptionalLong)."""
        entry = self.partitions.get(tp)
        if entry is None or entry.last_acked_offset < 0:
            return None
        return entry.last_acked_offset

    def is_next_sequence(self, tp: TopicPartition, sequence: int) -> bool:
        """TransactionManager.isNextSequence: ``sequence`` follows the last acknowledged one
        (NO_LAST_ACKED_SEQUENCE_NUMBER, -1, when none is)."""
        entry = self.partitions.get(tp)
        last = entry.last_acked_sequence if entry is not None else NO_LAST_ACKED_SEQUENCE_NUMBER
        return sequence - last == 1

    # -- epochs (2.5+, KIP-360) -----------------------------------------------------------------
    def has_stale_producer_id_and_epoch(self, tp: TopicPartition) -> bool:
        """TransactionManager.hasStaleProducerIdAndEpoch (2.8+): the partition's sequences
        belong to another producer id or epoch than the current."""
        entry = self.partitions.get(tp)
        current = entry.producer_id_and_epoch if entry is not None else NO_PRODUCER_ID_AND_EPOCH
        return current != self.producer_id_and_epoch

    def maybe_update_producer_id_and_epoch(self, tp: TopicPartition) -> None:
        """TransactionManager.maybeUpdateProducerIdAndEpoch (2.8+, at a new batch's drain): a
        partition still on an older producer id or epoch, with nothing in flight, starts the
        current one from sequence 0 (nothing changes in the fatal state)."""
        if self.current_state == FATAL_ERROR:
            return
        if self.has_stale_producer_id_and_epoch(tp) and not self.has_inflight_batches(tp):
            self.get_or_create(tp).start_sequences_at_beginning(self.producer_id_and_epoch)

    def request_epoch_bump_for_partition(self, tp: TopicPartition) -> None:
        """TransactionManager.requestEpochBumpForPartition: bump at the next sender pass and
        renumber this partition's in-flight batches."""
        self.epoch_bump_required = True
        self.partitions_to_rewrite_sequences[tp] = None

    def bump_idempotent_producer_epoch(self) -> None:
        """TransactionManager.bumpIdempotentProducerEpoch: epoch + 1 (at Short.MAX_VALUE the
        producer id is reset instead: ``reset_idempotent_producer_id``); each partition that
        asked for it starts its in-flight batches from sequence 0 in the new epoch and is
        resolved."""
        if self.producer_epoch == SHORT_MAX:
            self.reset_idempotent_producer_id()
        else:
            self.producer_epoch += 1
        self.changes += 1
        current = self.producer_id_and_epoch
        for tp in self.partitions_to_rewrite_sequences:
            self.get_or_create(tp).start_sequences_at_beginning(current)
            self.partitions_with_unresolved_sequences.pop(tp, None)
        self.partitions_to_rewrite_sequences.clear()
        self.epoch_bump_required = False

    def reset_idempotent_producer_id(self) -> None:
        """TransactionManager.resetIdempotentProducerId: the epoch is exhausted; no producer
        id (ProducerIdAndEpoch.NONE) until InitProducerId hands out a new one."""
        self.producer_id, self.producer_epoch = NO_PRODUCER_ID_AND_EPOCH
        self.current_state = UNINITIALIZED

    def bump_idempotent_epoch_and_reset_id_if_needed(self) -> None:
        """TransactionManager.bumpIdempotentEpochAndResetIdIfNeeded (Sender.runOnce, before
        sending): the epoch bump an error requested; without a producer id, INITIALIZING (an
        InitProducerId request for the sender to send)."""
        if self.epoch_bump_required:
            self.bump_idempotent_producer_epoch()
        if self.current_state != INITIALIZING and not self.has_producer_id():
            self.current_state = INITIALIZING

    def _matches_producer_id_and_epoch(self, batch: ProducerBatch) -> bool:
        """TransactionManager.matchesProducerIdAndEpoch (2.5-2.7)."""
        return (batch.producer_id, batch.epoch) == self.producer_id_and_epoch

    # -- completions ------------------------------------------------------------------------------
    def handle_completed_batch(self, batch: ProducerBatch, response) -> None:
        """TransactionManager.handleCompletedBatch: the batch's last sequence (and offset)
        acknowledged, the batch no longer in flight. ``response``: the answer's base offset, or
        its ``PartitionResponse``. 2.5-2.7: a partition whose last batch of an older epoch
        completes starts the current epoch from 0 (moved to the drain in 2.8)."""
        base_offset = response if isinstance(response, int) else response.base_offset
        entry = self.get_or_create(batch.tp)
        entry.maybe_update_last_acked_sequence(batch.last_sequence)
        if base_offset >= 0:   # updateLastAckedOffset (INVALID_OFFSET: not updated)
            entry.last_acked_offset = max(entry.last_acked_offset,
                                          base_offset + len(batch.record_ids) - 1)
        entry.remove_in_flight_batch(batch)
        if not self.partition_epoch and self.kip360 and \
                not self._matches_producer_id_and_epoch(batch) and \
                not entry.has_inflight_batches():
            entry.start_sequences_at_beginning(self.producer_id_and_epoch)

    def handle_failed_batch(self, batch: ProducerBatch, error: str,
                            adjust_sequence_numbers: bool) -> None:
        """TransactionManager.handleFailedBatch (2.5+, idempotent): a fatal error
        (``maybe_transition_to_error_state``) first; the batch is no longer in flight; in the
        fatal state nothing else. OUT_OF_ORDER_SEQUENCE_NUMBER or UNKNOWN_PRODUCER_ID
        (UnknownProducerIdException is an OutOfOrderSequenceException), or a failure the broker
        confirmed (``adjust_sequence_numbers``: not an expiry, not the last retry), leaves a
        gap: an epoch bump is requested for the partition. 2.5-2.7 ignored a batch of an older
        epoch."""
        self.maybe_transition_to_error_state(error)
        self.remove_in_flight_batch(batch)
        if self.current_state == FATAL_ERROR:
            return
        if not self.partition_epoch and not self._matches_producer_id_and_epoch(batch):
            return
        if error in (E.OUT_OF_ORDER_SEQUENCE_NUMBER, E.UNKNOWN_PRODUCER_ID) or \
                adjust_sequence_numbers:
            self.request_epoch_bump_for_partition(batch.tp)

    def has_unresolved_sequences(self) -> bool:
        """TransactionManager.hasUnresolvedSequences."""
        return bool(self.partitions_with_unresolved_sequences)

    def has_unresolved_sequence(self, tp: TopicPartition) -> bool:
        """TransactionManager.hasUnresolvedSequence."""
        return tp in self.partitions_with_unresolved_sequences

    def mark_sequence_unresolved(self, batch: ProducerBatch) -> None:
        """TransactionManager.markSequenceUnresolved: a batch sent at least once expired; the
        broker may or may not have its sequence, so no new batch of the partition is drained
        until that is known (the next sequence after it, the highest such)."""
        nxt = batch.last_sequence + 1
        unresolved = self.partitions_with_unresolved_sequences
        unresolved[batch.tp] = max(unresolved.get(batch.tp, nxt), nxt)

    def maybe_resolve_sequences(self) -> None:
        """TransactionManager.maybeResolveSequences (Sender.runOnce): a partition with an
        unresolved sequence and nothing left in flight is resolved: if its last acknowledged
        sequence is right before its next one (later batches succeeded), as it is; else (they
        were all lost) by an epoch bump for the partition."""
        unresolved = self.partitions_with_unresolved_sequences
        for tp in list(unresolved):
            if self.has_inflight_batches(tp):
                continue
            if not self.is_next_sequence(tp, self.sequence_number(tp)):
                self.request_epoch_bump_for_partition(tp)
            del unresolved[tp]

    def is_next_sequence_for_unresolved_partition(self, tp: TopicPartition,
                                                   sequence: int) -> bool:
        """TransactionManager.isNextSequenceForUnresolvedPartition."""
        return self.partitions_with_unresolved_sequences.get(tp) == sequence

    def can_retry(self, response, batch: ProducerBatch, log_start_offset: int = -1) -> bool:
        """TransactionManager.canRetry @3.7.0 (idempotent, 2.5+), for a batch that still has
        attempts and time. ``response``: the answer's error, or its ``PartitionResponse`` (then
        its log start offset, else ``log_start_offset``).
        UNKNOWN_PRODUCER_ID is retried (log start offset unknown, -1: as it is; a reset
        sequence: as it is; the log's head gone past the last acknowledged offset, or else: with
        an epoch bump); OUT_OF_ORDER_SEQUENCE_NUMBER is retried (an epoch bump when it is a
        real gap: the next sequence, or the one right after an unresolved sequence); any other
        error when it is retriable."""
        if isinstance(response, str):
            error = response
        else:
            error, log_start_offset = response.error, response.log_start_offset
        tp = batch.tp
        if error == E.UNKNOWN_PRODUCER_ID:
            if log_start_offset == -1 or batch.seq_reset:
                return True
            self.request_epoch_bump_for_partition(tp)
            return True
        if error == E.OUT_OF_ORDER_SEQUENCE_NUMBER:
            unresolved = self.has_unresolved_sequence(tp)
            if not unresolved and (batch.seq_reset or
                                   not self.is_next_sequence(tp, batch.base_seq)):
                return True
            if not unresolved or self.is_next_sequence_for_unresolved_partition(
                    tp, batch.base_seq):
                self.request_epoch_bump_for_partition(tp)
            return True
        return error in E.RETRIABLE

    # -- the fatal state ----------------------------------------------------------------------
    def maybe_transition_to_error_state(self, error) -> None:
        """TransactionManager.maybeTransitionToErrorState for an idempotent producer: a
        ClusterAuthorizationException, TransactionalIdAuthorizationException,
        ProducerFencedException (before 2.7 also INVALID_PRODUCER_EPOCH) or
        UnsupportedVersionException is fatal."""
        if error in self.fatal_errors:
            self.transition_to_fatal_error(error)

    def transition_to_fatal_error(self, exception) -> None:
        """TransactionManager.transitionToFatalError: FATAL_ERROR (from any state), with
        ``exception`` (an exception, or an error name) as the last error."""
        self.current_state = FATAL_ERROR
        self.last_error = exception

    def has_fatal_error(self) -> bool:
        """TransactionManager.hasFatalError."""
        return self.current_state == FATAL_ERROR

    def has_error(self) -> bool:
        """TransactionManager.hasError (an idempotent producer has no abortable error)."""
        return self.current_state == FATAL_ERROR

    def maybe_add_partition(self, tp: TopicPartition) -> None:
        """TransactionManager.maybeAddPartition (KafkaProducer.send) for an idempotent
        producer: nothing to add; in the fatal state a KafkaException (maybeFailWithError)."""
        if self.has_error():
            cause = self.last_error
            raise KafkaException(
                f"Cannot execute transactional method because we are in an error state "
                f"(sending to {tp[0]}-{tp[1]}): {cause}"
            ) from cause if isinstance(cause, BaseException) else None

    def is_send_to_partition_allowed(self, tp: TopicPartition) -> bool:
        """TransactionManager.isSendToPartitionAllowed: any partition, unless fatal."""
        return self.current_state != FATAL_ERROR

    # -- the drain ----------------------------------------------------------------------------
    def should_stop_drain(self, first: ProducerBatch) -> bool:
        """RecordAccumulator.shouldStopDrainBatchesForPartition, for the first batch of a
        partition's queue: nothing is drained while the producer is not READY (fatal:
        isSendToPartitionAllowed; no producer id: ProducerIdAndEpoch.isValid); then (2.5+):
        - a new batch (no sequence yet) waits while the partition has in-flight batches of
          another producer id or epoch (hasInflightBatches && hasStaleProducerIdAndEpoch; 2.5-2.7:
          the first in-flight batch's id or epoch is not the current), or an unresolved
          sequence;
        - a retry (it has a sequence) is drained only if it is the partition's first in-flight
          sequence (firstInFlightSequence, 1.0+, KAFKA-5494): retries go one at a time, in
          sequence order.
        Before 2.5, ``IdempotenceBeforeKip360.should_stop_drain``."""
        if self.current_state != READY:
            return True
        if not self.kip360:
            return self.legacy.should_stop_drain(first)
        tp = first.tp
        if first.base_seq < 0:
            if self.has_inflight_batches(tp):
                if self.partition_epoch:
                    if self.has_stale_producer_id_and_epoch(tp):
                        return True
                elif not self._matches_producer_id_and_epoch(
                        self.partitions[tp].next_batch_by_sequence()):
                    return True
            return self.has_unresolved_sequence(tp)
        seq = self.first_in_flight_sequence(tp)
        return seq != NO_SEQUENCE and first.base_seq != seq

    def set_producer_state_at_drain(self, batch: ProducerBatch) -> None:
        """RecordAccumulator.drainBatchesForOneNode for a new batch: (2.8+) its partition takes
        the current producer id and epoch if it can (maybeUpdateProducerIdAndEpoch); the batch
        gets them and the partition's next sequence, and is tracked in flight."""
        entry = self.get_or_create(batch.tp)
        current = self.producer_id, self.producer_epoch
        if self.partition_epoch and self.kip360 and entry.producer_id_and_epoch != current \
                and not entry.has_inflight_batches():   # maybeUpdateProducerIdAndEpoch
            entry.start_sequences_at_beginning(ProducerIdAndEpoch(*current))
        batch.set_producer_state(current[0], current[1], entry.next_sequence)
        self.increment_sequence_number(batch.tp, len(batch.record_ids))
        self.add_in_flight_batch(batch)

    def bump_epoch(self) -> None:
        """A sequenced batch failed for good. 2.5+: bumpIdempotentProducerEpoch. Before (no
        longer called by the sender before 2.5), a new epoch with every partition's sequence
        from 0."""
        if not self.idempotent:
            return
        if self.kip360:
            self.bump_idempotent_producer_epoch()
            return
        self.producer_epoch += 1
        self.changes += 1
        self.partitions.clear()


class IdempotenceBeforeKip360:
    """The idempotent producer's sequence rules before 2.5 (KIP-360), as kafkasim models them,
    over its ``TransactionManager`` (``tm``) and the sender's requests on the wire
    (``in_flight``)."""

    def __init__(self, tm: TransactionManager, in_flight: dict) -> None:
        self.tm = tm
        self.in_flight = in_flight

    def reset_producer_id(self, new_id: int) -> None:
        """TransactionManager.resetProducerId (0.11 ... 2.4): after an
        OutOfOrderSequenceException the idempotent producer drops its producer id and every
        sequence number and gets a new id (InitProducerId; ``new_id`` here), epoch 0."""
        tm = self.tm
        tm.producer_id = new_id
        tm.producer_epoch = 0
        tm.changes += 1
        tm.partitions.clear()
        tm.partitions_with_unresolved_sequences.clear()

    def take_new_producer_id(self, producer) -> None:
        """resetProducerId, then the InitProducerId of Sender.maybeWaitForProducerId, answered
        at once: a new id, one the cluster's registry never gave before; sequences from 0."""
        tm = self.tm
        self.reset_producer_id(producer.cluster.records.producer_index(
            f"{producer.client_id}\x00{tm.producer_id}"))
        producer.producer_id = tm.producer_id

    def reset_producer_id_for(self, producer, b: ProducerBatch) -> None:
        """``b`` failed with an OutOfOrderSequenceException (UnknownProducerIdException is
        one): if it carries the current producer id and epoch, the producer resets its id
        (Sender.failBatch 0.11-1.x / TransactionManager.handleFailedBatch 2.0-2.4:
        resetProducerId) -- a new id, sequences from 0."""
        if (b.producer_id, b.epoch) == self.tm.producer_id_and_epoch:
            self.take_new_producer_id(producer)

    def reset_producer_id_if_needed(self, producer) -> None:
        """TransactionManager.resetProducerIdIfNeeded @2.3.0-2.4.0 (Sender.run @1.0.0-2.2.0:
        shouldResetProducerStateAfterResolvingSequences, then resetProducerId), at the start of
        a sender pass: a partition with an unresolved sequence and no batch left in flight is
        resolved when its last acknowledged sequence is right before its next one (later
        batches succeeded); otherwise (they were all lost) the producer id is reset."""
        tm = self.tm
        unresolved = tm.partitions_with_unresolved_sequences
        for tp in list(unresolved):
            if tm.has_inflight_batches(tp):
                continue
            if not tm.is_next_sequence(tp, tm.sequence_number(tp)):
                self.take_new_producer_id(producer)
                return
            del unresolved[tp]

    def drained_under_old_producer_id(self, b: ProducerBatch) -> bool:
        """Sender.completeBatch @0.11.0-2.4.0: a sequenced batch to retry whose producer id and
        epoch are no longer the producer's (hasProducerIdAndEpoch) is not retried but fails with
        an OutOfOrderSequenceException ("the producer id changed ... in the mean time")."""
        tm = self.tm
        return tm.idempotent and b.base_seq >= 0 and \
            (b.producer_id, b.epoch) != tm.producer_id_and_epoch

    def release_sequence_of_failed_batch(self, b: ProducerBatch) -> None:
        """Sender.failBatch @0.11.0.0 for an error other than an OutOfOrderSequenceException:
        nothing is reset. 0.11 counted a partition's sequence on success only
        (Sender.completeBatch -> incrementSequenceNumber; the drain hands out
        sequenceNumber(tp) without moving it), and kafkasim, which counts at the drain as
        1.0+ does, gives the failed batch's sequence back: the partition's next batch (one at a
        time: 0.11's idempotence needs max.in.flight.requests.per.connection 1) is sent with
        it. If the broker had appended the failed batch, that next batch is a duplicate (same
        record count: answered with the old batch's offset) or out of order."""
        tm = self.tm
        entry = tm.partitions.get(b.tp)
        if entry is None or (b.producer_id, b.epoch) != tm.producer_id_and_epoch:
            return
        entry.remove_in_flight_batch(b)
        entry.next_sequence = b.base_seq

    def handle_failed_batch(self, b: ProducerBatch, adjust_sequence_numbers: bool) -> None:
        """Sender.failBatch @1.0.0-1.1.0 / TransactionManager.handleFailedBatch @2.0.0-2.4.0
        for an error other than an OutOfOrderSequenceException: a batch of the current producer
        id and epoch leaves the in-flight ones and, unless it expired or used its last retry,
        TransactionManager.adjustSequencesDueToFailedBatch moves the partition's next sequence
        and the sequences of its later in-flight batches down by its record count (each
        rewritten: sequenceHasBeenReset)."""
        tm = self.tm
        entry = tm.partitions.get(b.tp)
        if entry is None or (b.producer_id, b.epoch) != tm.producer_id_and_epoch:
            return
        entry.remove_in_flight_batch(b)
        if not adjust_sequence_numbers:
            return
        n = b.record_count
        entry.next_sequence -= n
        for x in entry.inflight_batches_by_sequence():
            if x.base_seq >= b.base_seq:
                x.reset_producer_state(x.producer_id, x.epoch, x.base_seq - n)

    def is_next_sequence_unanswered(self, producer, b: ProducerBatch) -> bool:
        """isNextSequence as kafkasim reads it before 2.5: no batch of ``b``'s partition with an
        earlier sequence of the same producer id and epoch is still unanswered (in flight or
        queued) at ``producer``."""
        queued = producer.batches.get(b.tp, ())
        return not any(_precedes(x, b) for x in chain(queued, _on_the_wire(self.in_flight, b.tp)))

    def should_stop_drain(self, first: ProducerBatch) -> bool:
        """shouldStopDrainBatchesForPartition before 2.5, as kafkasim models it: a new batch
        waits while a batch of the partition with another producer id or epoch is on the wire;
        a retry waits while a batch of the partition with an earlier sequence is (KAFKA-5494,
        1.0+; 0.11 allowed idempotence only with max.in.flight 1, with the same effect)."""
        if first.base_seq < 0:
            # (1.0-2.4) a new batch waits while its partition's sequence is unresolved
            if self.tm.partitions_with_unresolved_sequences and \
                    self.tm.has_unresolved_sequence(first.tp):
                return True
            if not self.tm.changes:
                return False
            current = self.tm.producer_id_and_epoch
            return any(x.produce_future.status == PENDING and (x.producer_id, x.epoch) != current
                       for x in _on_the_wire(self.in_flight, first.tp))
        return any(_precedes(x, first) for x in _on_the_wire(self.in_flight, first.tp))

    def can_retry_out_of_order(self, producer, b: ProducerBatch) -> bool:
        """An idempotent batch answered OUT_OF_ORDER_SEQUENCE_NUMBER before 2.5
        (OutOfOrderSequenceException is not a RetriableException), by Sender.canRetry /
        TransactionManager.canRetry:
        - 1.0+: retried when it is not the next sequence (an earlier batch is unanswered) or its
          sequence was rewritten, and its partition's sequence is not unresolved: the gap may
          still close (0.11.0: never retried);
        - else the batch fails and the producer resets its producer id
          (``reset_producer_id_for``)."""
        if b.base_seq < 0 or not self.tm.idempotent:
            return True
        rules = producer.cluster.rules.clients
        if rules.idempotent_out_of_order_retried_when_not_next and \
                not self.tm.has_unresolved_sequence(b.tp) and (
                b.seq_reset or not self.is_next_sequence_unanswered(producer, b)):
            return True
        self.reset_producer_id_for(producer, b)
        return False

    def can_retry_unknown_producer_id(self, b: ProducerBatch, log_start_offset: int) -> bool:
        """TransactionManager.canRetry @1.0.0-2.4.0 for UNKNOWN_PRODUCER_ID (a batch of the
        current producer id and epoch only): retried as it is when the answer has no log start
        offset (-1) or the batch's sequence was reset; when the log start offset is past the
        partition's last acknowledged offset (the broker lost the producer to retention or
        DeleteRecords), retried after its in-flight batches restart from sequence 0
        (startSequencesAtBeginning, same producer id and epoch); else not (the batch fails and
        the producer id is reset: ``reset_producer_id_for``)."""
        tm = self.tm
        if (b.producer_id, b.epoch) != tm.producer_id_and_epoch:
            return False
        if log_start_offset == -1 or b.seq_reset:
            return True
        last_acked = tm.last_acked_offset(b.tp)
        if (-1 if last_acked is None else last_acked) < log_start_offset:
            tm.get_or_create(b.tp).start_sequences_at_beginning(tm.producer_id_and_epoch)
            return True
        return False
