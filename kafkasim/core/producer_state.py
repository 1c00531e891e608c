"""Idempotent producers on the broker: ``ProducerStateManager`` (KIP-98, since 0.11).

Each record batch of an idempotent producer carries (producerId, producerEpoch, baseSequence).
Every replica keeps, per producer, the metadata of its last five batches in the log; the leader
uses it to answer a retried batch that is already in the log with the original offsets instead
of appending it again (a duplicate), and to refuse a batch that skips sequence numbers
(OUT_OF_ORDER_SEQUENCE_NUMBER). Followers rebuild the same state from the batches they copy, so
a new leader still recognises duplicates.

As in Kafka, the (producer id, producer epoch, base sequence) travel in the batch: the leader
checks the header of each partition's batch in the ProduceRequest, keeps it in its log
(``Log.producer_batches``), fetches hand the headers to followers with the records, and every
replica rebuilds its state from its own log after a truncation or a restart
(ProducerStateManager / UnifiedLog.rebuildProducerState).
"""

from __future__ import annotations

from dataclasses import dataclass, field

NUM_BATCHES_TO_RETAIN = 5  # ProducerStateEntry.NUM_BATCHES_TO_RETAIN
INT_MAX = 2**31 - 1        # Integer.MAX_VALUE: sequence numbers wrap to 0 after it
_SEQ_SPAN = INT_MAX + 1    # so sequence arithmetic is modulo 2**31


def increment_sequence(sequence: int, increment: int) -> int:
    """DefaultRecordBatch.incrementSequence: ``sequence + increment``, wrapping past
    Integer.MAX_VALUE to 0."""
    return (sequence + increment) % _SEQ_SPAN


def in_sequence(last_seq: int, next_seq: int) -> bool:
    """ProducerAppendInfo.inSequence: ``next_seq`` follows ``last_seq`` (0 follows
    Integer.MAX_VALUE)."""
    return next_seq == (last_seq + 1) % _SEQ_SPAN


@dataclass(slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int

    @property
    def offset_delta(self) -> int:
        """BatchMetadata.offsetDelta: the batch's sequence span (last - first, wrapping)."""
        return (self.last_seq - self.first_seq) % _SEQ_SPAN

    @property
    def last_offset(self) -> int:
        """BatchMetadata.lastOffset."""
        return self.first_offset + self.offset_delta


@dataclass(slots=True)
class ProducerStateEntry:
    epoch: int
    batches: list[BatchMetadata] = field(default_factory=list)

    def add(self, first_seq: int, last_seq: int, first_offset: int) -> None:
        """ProducerStateEntry.addBatchMetadata: keep the batch's metadata, the oldest of more
        than NUM_BATCHES_TO_RETAIN dropped."""
        b = self.batches
        b.append(BatchMetadata(first_seq, last_seq, first_offset))
        if len(b) > NUM_BATCHES_TO_RETAIN:
            del b[0]

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1

    @property
    def first_seq(self) -> int:
        """ProducerStateEntry.firstSeq: of the oldest batch kept, -1 (NO_SEQUENCE) if none."""
        return self.batches[0].first_seq if self.batches else -1

    @property
    def producer_epoch(self) -> int:
        """ProducerStateEntry.producerEpoch (``epoch``)."""
        return self.epoch

    @property
    def first_data_offset(self) -> int:
        """ProducerStateEntry.firstDataOffset: -1 if no batch is kept."""
        return self.batches[0].first_offset if self.batches else -1

    @property
    def last_data_offset(self) -> int:
        """ProducerStateEntry.lastDataOffset: -1 if no batch is kept."""
        return self.batches[-1].last_offset if self.batches else -1

    def is_empty(self) -> bool:
        """ProducerStateEntry.isEmpty: no batch kept."""
        return not self.batches

    def find_duplicate_batch(self, epoch: int, first_seq: int, last_seq: int
                             ) -> BatchMetadata | None:
        """ProducerStateEntry.findDuplicateBatch: the kept batch with exactly these sequences in
        this epoch (batchWithSequenceRange), or None."""
        if epoch != self.epoch:
            return None
        for b in self.batches:
            if b.first_seq == first_seq and b.last_seq == last_seq:
                return b
        return None


class ProducerStateManager(dict):
    """ProducerStateManager: one replica's idempotent producers, producer id -> its
    ``ProducerStateEntry`` (a dict of them, in the order producers were first seen). The
    leader's verdict on a batch is ``check_append``; ``update`` records appended batches (the
    leader's and a follower's alike); ``rebuild`` makes a whole one from a log's batch headers
    (truncateAndReload)."""

    __slots__ = ()

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        """lastEntry: the producer's state, or None (Optional.empty)."""
        return self.get(producer_id)

    def active_producers(self) -> dict[int, ProducerStateEntry]:
        """activeProducers: producer id -> its state (a copy of the map)."""
        return dict(self)

    def producer_id_count(self) -> int:
        """producerIdCount: how many producers are tracked."""
        return len(self)

    def check_append(self, ident) -> tuple[str, int]:
        """The leader's verdict on a batch (module ``check_append``)."""
        return check_append(self, ident)

    def update(self, batches) -> None:   # (not dict.update: Kafka's update(appendInfo))
        """Record appended batches, given as ``ProducerBatch`` headers (module ``update``)."""
        update(self, batches)


def check_append(states: dict, ident) -> tuple[str, int]:
    """The leader's verdict on an idempotent batch, ``ident`` = (producer id, epoch, first seq,
    last seq) of its header: ("append"|"duplicate"|error, offset). UnifiedLog
    .analyzeAndValidateProducerState looks for a duplicate first (findDuplicateBatch: the
    original's first offset), then ProducerAppendInfo checks the epoch (checkProducerEpoch)
    and the sequence (checkSequence)."""
    pid, epoch, first_seq, last_seq = ident
    entry = states.get(pid)
    if entry is None:
        return "append", -1              # unknown producer: start tracking it (KIP-360)
    dup = entry.find_duplicate_batch(epoch, first_seq, last_seq)
    if dup is not None:
        return "duplicate", dup.first_offset
    if epoch != entry.epoch:   # the usual batch is of the producer's current epoch
        if epoch < entry.epoch:
            return "INVALID_PRODUCER_EPOCH", -1
        return ("append", -1) if first_seq == 0 else ("OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
    if first_seq != (entry.last_seq + 1) % _SEQ_SPAN:   # in_sequence (every append)
        return "OUT_OF_ORDER_SEQUENCE_NUMBER", -1
    return "append", -1


def update(states: dict, batches) -> None:
    """Record appended batches, given as ``ProducerBatch`` headers (leader or follower append:
    ProducerStateManager.update via ProducerAppendInfo)."""
    for base_offset, last_offset, pid, epoch, first_seq in batches:
        entry = states.get(pid)
        if entry is None or epoch != entry.epoch:   # (the usual batch: the current epoch)
            # a new producer, or another epoch (maybeUpdateProducerEpoch). The leader never
            # appends an older epoch (check_append refuses it); a replica takes what its log
            # holds, an older epoch too (checkProducerEpoch only warns for a replica append)
            entry = states[pid] = ProducerStateEntry(epoch)
        # the batch's last sequence: increment_sequence, modulo 2**31 (every append)
        entry.add(first_seq, (first_seq + last_offset - base_offset) % _SEQ_SPAN, base_offset)


def last_entry(states: dict, producer_id: int) -> ProducerStateEntry | None:
    """ProducerStateManager.lastEntry: the producer's state, or None (Optional.empty)."""
    return states.get(producer_id)


def active_producers(states: dict) -> dict[int, ProducerStateEntry]:
    """ProducerStateManager.activeProducers: producer id -> its state (a copy of the map)."""
    return dict(states)


def rebuild(log) -> ProducerStateManager:
    """Producer state of a whole log from its batch headers, after truncation or on recovery
    (UnifiedLog.rebuildProducerState)."""
    states = ProducerStateManager()
    update(states, log.producer_batches)
    return states
