"""The idempotent producer's id, epoch and sequence numbers: Kafka's ``TransactionManager``.

As far as an idempotent, non-transactional producer uses it: KIP-98 (0.11), and KIP-360's epoch
bump (2.5).
"""

from __future__ import annotations

from itertools import chain

from kafkasim.runtime.clients.produce_result import PENDING
from kafkasim.runtime.clients.producer_batch import ProducerBatch


def _on_the_wire(in_flight: dict, tp: tuple[str, int]):
    """The batches of ``tp`` in the requests in flight (``Sender.in_flight``)."""
    return (entry[3][tp] for entry in in_flight.values() if tp in entry[3])


def _precedes(x: ProducerBatch, b: ProducerBatch) -> bool:
    """``x`` is an unanswered batch of ``b``'s producer id and epoch with an earlier sequence."""
    return x is not b and x.produce_future.status == PENDING and \
        0 <= x.base_seq < b.base_seq and (x.producer_id, x.epoch) == (b.producer_id, b.epoch)


class TransactionManager:
    """What Kafka's TransactionManager keeps for an idempotent producer (KIP-98): its producer
    id and epoch and the next sequence number of each partition; ``bump_epoch`` starts a new
    epoch after a sequenced batch failed for good (KIP-360). ``in_flight`` is the sender's
    map of requests on the wire (correlation id -> [deadline, timeout id, broker, {tp: batch}]),
    where Kafka's TransactionManager keeps its own in-flight batches by partition."""

    def __init__(self, idempotent: bool, producer_id: int, in_flight: dict | None = None
                 ) -> None:
        self.idempotent = idempotent
        # the id InitProducerId would hand out: one per producer client, stable for its life
        self.producer_id = producer_id
        self.producer_epoch = 0
        self.next_seq: dict[tuple[str, int], int] = {}
        self.in_flight = in_flight if in_flight is not None else {}
        # producer ids and epochs this producer has had besides the first (bumps and resets):
        # while 0, no batch can carry a stale one
        self.changes = 0

    def sequence_number(self, tp: tuple[str, int]) -> int:
        """TransactionManager.sequenceNumber: the partition's next sequence."""
        return self.next_seq.get(tp, 0)

    def increment_sequence_number(self, tp: tuple[str, int], increment: int) -> None:
        """TransactionManager.incrementSequenceNumber: ``increment`` records got sequences."""
        self.next_seq[tp] = self.next_seq.get(tp, 0) + increment

    def bump_epoch(self) -> None:
        """A sequenced batch failed for good: start a new producer epoch with sequences from 0
        (KIP-360), so the gap it leaves is not an OUT_OF_ORDER_SEQUENCE_NUMBER forever."""
        if self.idempotent:
            self.producer_epoch += 1
            self.changes += 1
            self.next_seq.clear()

    def reset_producer_id(self, new_id: int) -> None:
        """TransactionManager.resetProducerId (0.11 ... 2.4): after an
        OutOfOrderSequenceException the idempotent producer drops its producer id and every
        sequence number and gets a new id (InitProducerId; ``new_id`` here), epoch 0."""
        self.producer_id = new_id
        self.producer_epoch = 0
        self.changes += 1
        self.next_seq.clear()

    def is_next_sequence(self, producer, b: ProducerBatch) -> bool:
        """TransactionManager.isNextSequence (lastAckedSequence + 1 == baseSequence): no batch of
        ``b``'s partition with an earlier sequence of the same producer id and epoch is still
        unanswered (in flight or queued) at ``producer``."""
        queued = producer.batches.get(b.tp, ())
        return not any(_precedes(x, b) for x in chain(queued, _on_the_wire(self.in_flight, b.tp)))

    def should_stop_drain(self, first: ProducerBatch) -> bool:
        """RecordAccumulator.shouldStopDrainBatchesForPartition, for the first batch of a
        partition's queue:
        - a new batch (no sequence yet) waits while a batch of the partition with another
          producer id or epoch is still on the wire (hasInflightBatches &&
          hasStaleProducerIdAndEpoch, 2.5+ with KIP-360's epoch bump): a batch of the new epoch,
          from sequence 0, must not overtake them;
        - a retry (it has a sequence) is drained only if it is the first in-flight sequence of
          its partition: no batch of the partition with an earlier sequence (same producer id
          and epoch) is on the wire (firstInFlightSequence, 1.0+, KAFKA-5494). Retries of a
          partition so go one request at a time, in sequence order. (0.11 allowed idempotence
          only with max.in.flight.requests.per.connection 1, which has the same effect.)"""
        if first.base_seq < 0:
            return self.has_stale_producer_id_and_epoch(first.tp)
        return any(_precedes(x, first) for x in _on_the_wire(self.in_flight, first.tp))

    def has_stale_producer_id_and_epoch(self, tp: tuple[str, int]) -> bool:
        """TransactionManager.hasInflightBatches and hasStaleProducerIdAndEpoch: an unanswered
        batch of ``tp`` on the wire carries another producer id or epoch than the current (none
        can while the producer has had only its first id and epoch)."""
        if not self.changes:
            return False
        current = (self.producer_id, self.producer_epoch)
        return any(x.produce_future.status == PENDING and (x.producer_id, x.epoch) != current
                   for x in _on_the_wire(self.in_flight, tp))

    def can_retry(self, producer, b: ProducerBatch) -> bool:
        """An idempotent batch answered OUT_OF_ORDER_SEQUENCE_NUMBER (OutOfOrderSequenceException
        is not a RetriableException), by Sender.canRetry / TransactionManager.canRetry:
        - 1.0+: retried when it is not the next sequence (an earlier batch is unanswered) or its
          sequence was rewritten: the gap may still close (0.11.0: never retried);
        - 2.5+ (KIP-360), the next sequence: a real gap (the leader lost acknowledged batches).
          requestEpochBumpForPartition, and before the retry bumpIdempotentProducerEpoch: a new
          epoch, the partition's unanswered batches renumbered from sequence 0
          (startSequencesAtBeginning); retried;
        - before 2.5: the batch fails and, if it carries the current producer id, the producer
          resets it (Sender.failBatch 0.11-1.x / TransactionManager.handleFailedBatch 2.0-2.4:
          resetProducerId) -- a new id, sequences from 0."""
        if b.base_seq < 0 or not self.idempotent:
            return True
        rules = producer.cluster.rules.clients
        if rules.idempotent_out_of_order_retried_when_not_next and (
                b.seq_reset or not self.is_next_sequence(producer, b)):
            return True
        if rules.idempotent_out_of_order_bumps_epoch:
            self.bump_idempotent_producer_epoch(producer, b)
            return True
        if b.producer_id == self.producer_id:
            # InitProducerId hands out a new id: one the cluster's registry never gave before
            self.reset_producer_id(producer.cluster.records.producer_index(
                f"{producer.client_id}\x00{self.producer_id}"))
            producer.producer_id = self.producer_id
        return False

    def bump_idempotent_producer_epoch(self, producer, b: ProducerBatch) -> None:
        """TransactionManager.bumpIdempotentProducerEpoch (2.5+): epoch + 1, and
        startSequencesAtBeginning for ``b``'s partition: its unanswered batches (``b`` first in
        sequence order) get the new epoch and sequences from 0; other partitions start from 0
        at their next new batch."""
        self.bump_epoch()
        tp = b.tp
        pending = [b] + [x for x in producer.batches.get(tp, ()) if x.base_seq >= 0] + list(
            _on_the_wire(self.in_flight, tp))
        seq = 0
        for x in sorted({id(x): x for x in pending}.values(), key=lambda x: x.base_seq):
            if x.produce_future.status != PENDING:
                continue
            x.base_seq, x.epoch, x.producer_id, x.seq_reset = seq, self.producer_epoch, \
                self.producer_id, True
            seq += len(x.record_ids)
        self.next_seq[tp] = seq
