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


@dataclass(slots=True)
class BatchMetadata:
    first_seq: int
    last_seq: int
    first_offset: int


@dataclass(slots=True)
class ProducerStateEntry:
    epoch: int
    batches: list[BatchMetadata] = field(default_factory=list)

    def add(self, first_seq: int, last_seq: int, first_offset: int) -> None:
        b = self.batches
        if b:
            last = b[-1]
            seq = last.last_seq
            if seq + 1 == first_seq and \
                    last.first_offset + seq - last.first_seq + 1 == first_offset:
                last.last_seq = last_seq  # records of one batch arriving in pieces
                return
        b.append(BatchMetadata(first_seq, last_seq, first_offset))
        if len(b) > NUM_BATCHES_TO_RETAIN:
            del b[0]

    @property
    def last_seq(self) -> int:
        return self.batches[-1].last_seq if self.batches else -1


def check_append(states: dict, ident) -> tuple[str, int]:
    """The leader's verdict on an idempotent batch, ``ident`` = (producer id, epoch, first seq,
    last seq) of its header: ("append"|"duplicate"|error, offset)."""
    pid, epoch, first_seq, last_seq = ident
    entry = states.get(pid)
    if entry is None:
        return "append", -1              # unknown producer: start tracking it (KIP-360)
    if epoch != entry.epoch:   # the usual batch is of the producer's current epoch
        if epoch < entry.epoch:
            return "INVALID_PRODUCER_EPOCH", -1
        return ("append", -1) if first_seq == 0 else ("OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
    batches = entry.batches
    for b in batches:
        # a follower sees batches back to back and keeps them as one run, so a retried
        # batch is a duplicate when its sequences lie inside a run already in the log
        if b.first_seq <= first_seq and last_seq <= b.last_seq:
            return "duplicate", b.first_offset + (first_seq - b.first_seq)
    if first_seq != entry.last_seq + 1:
        return "OUT_OF_ORDER_SEQUENCE_NUMBER", -1
    return "append", -1


def update(states: dict, batches) -> None:
    """Record appended batches, given as ``ProducerBatch`` headers (leader or follower append:
    ProducerStateManager.update via ProducerAppendInfo)."""
    for base_offset, last_offset, pid, epoch, first_seq in batches:
        entry = states.get(pid)
        if entry is None or epoch != entry.epoch:   # (the usual batch: the current epoch)
            if entry is not None and epoch < entry.epoch:
                continue   # a fenced epoch's batch changes nothing
            entry = states[pid] = ProducerStateEntry(epoch)   # a new producer, or epoch
        entry.add(first_seq, first_seq + last_offset - base_offset, base_offset)


def rebuild(log) -> dict:
    """Producer state of a whole log from its batch headers, after truncation or on recovery
    (UnifiedLog.rebuildProducerState)."""
    states: dict = {}
    update(states, log.producer_batches)
    return states
