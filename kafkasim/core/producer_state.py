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
replica rebuilds its state after a truncation or a restart (UnifiedLog.rebuildProducerState:
``Log.rebuild_producer_state``) from its latest producer snapshot below that point and the
batches of its log after it.

Snapshots (``take_snapshot``; ``<offset>.snapshot`` files, kept here as ``SnapshotFile`` records
by offset) hold each producer's last batch only (ProducerStateManager.writeSnapshot), so a
state loaded from one knows fewer batches than the live state did, and producers whose batches
the log no longer has are kept. Kafka takes one at each rebuild (truncation, log load) and when
a log is closed (a clean shutdown); ``truncate_and_reload`` drops those out of the log's range,
a new log start those below it, a full truncation all of them.

A producer the broker knows nothing of (none of its batches in the log or a snapshot) is
accepted at any sequence from 2.5 (KIP-360); 1.0-2.4 answer a first batch not at sequence 0
UNKNOWN_PRODUCER_ID (UnknownProducerIdException), 0.11 OUT_OF_ORDER_SEQUENCE_NUMBER
(``unknown_producer_verdict``).
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from kafkasim.core import errors as E

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
    #: the metadata of the producer's last NUM_BATCHES_TO_RETAIN batches, oldest first (Kafka's
    #: ArrayDeque batchMetadata; here the deque's maxlen drops the oldest)
    batches: deque[BatchMetadata] = field(
        default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    def add(self, first_seq: int, last_seq: int, first_offset: int) -> None:
        """ProducerStateEntry.addBatchMetadata: keep the batch's metadata, the oldest of more
        than NUM_BATCHES_TO_RETAIN dropped (the deque's maxlen)."""
        self.batches.append(BatchMetadata(first_seq, last_seq, first_offset))

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


class SnapshotFile(NamedTuple):
    """SnapshotFile: a producer state snapshot at ``offset`` (the map end offset it was taken
    at) and what ProducerStateManager.writeSnapshot wrote into it: per producer (id, epoch,
    last sequence, last offset, offset delta) of its last batch."""

    offset: int
    entries: tuple[tuple[int, int, int, int, int], ...]

    @property
    def name(self) -> str:
        """LogFileUtils.producerSnapshotFile: the offset zero-padded to 20 digits, then
        ``.snapshot``."""
        return snapshot_file_name(self.offset)


def snapshot_file_name(offset: int) -> str:
    """The name of the producer snapshot file at ``offset`` (``00000000000000000042.snapshot``)."""
    return f"{offset:020d}.snapshot"


class ProducerStateManager(dict):
    """ProducerStateManager: one replica's idempotent producers, producer id -> its
    ``ProducerStateEntry`` (a dict of them, in the order producers were first seen), and its
    producer snapshots (``snapshots``: offset -> ``SnapshotFile``, the ``.snapshot`` files of the
    partition's directory; ``snapshots`` given to the constructor: the files a restarted broker
    finds, loadSnapshots). The leader's verdict on a batch is ``check_append``; ``update``
    records appended batches (the leader's and a follower's alike); ``map_end_offset`` is the
    offset the state is up to (``Log.rebuild_producer_state`` sets it: Kafka moves it at every
    append, to the LEO). ``evicts_below_log_start``: the version rule
    ``producer_state_evicts_below_log_start`` (0.11-2.3, until KAFKA-7190): a new log start
    and a load from a snapshot forget the producers whose last batch is below it."""

    __slots__ = ("snapshots", "last_map_offset", "last_snap_offset", "evicts_below_log_start")

    def __init__(self, snapshots: dict[int, SnapshotFile] | None = None, *,
                 evicts_below_log_start: bool = False) -> None:
        super().__init__()
        self.snapshots: dict[int, SnapshotFile] = dict(sorted(snapshots.items())) \
            if snapshots else {}
        self.last_map_offset = 0
        self.last_snap_offset = 0
        self.evicts_below_log_start = evicts_below_log_start

    def is_producer_retained(self, entry: ProducerStateEntry, log_start_offset: int) -> bool:
        """isProducerRetained (0.11-2.3): the producer's last batch ends at or above the log
        start (lastDataOffset >= logStartOffset; removeBatchesOlderThan drops no batch there,
        Scala's Queue.dropWhile returning a copy)."""
        return entry.last_data_offset >= log_start_offset

    def last_entry(self, producer_id: int) -> ProducerStateEntry | None:
        """lastEntry: the producer's state, or None (Optional.empty)."""
        return self.get(producer_id)

    def active_producers(self) -> dict[int, ProducerStateEntry]:
        """activeProducers: producer id -> its state (a copy of the map)."""
        return dict(self)

    def producer_id_count(self) -> int:
        """producerIdCount: how many producers are tracked."""
        return len(self)

    def check_append(self, ident, unknown_producer: str = "append",
                     duplicate_before_cache: bool = False) -> tuple[str, int]:
        """The leader's verdict on a batch (module ``check_append``)."""
        return check_append(self, ident, unknown_producer, duplicate_before_cache)

    def update(self, batches) -> None:   # (not dict.update: Kafka's update(appendInfo))
        """Record appended batches, given as ``ProducerBatch`` headers (module ``update``)."""
        update(self, batches)

    def is_empty(self) -> bool:
        """isEmpty: no producer (kafkasim has no unreplicated transactions)."""
        return not self

    # -- the map end offset and snapshots ------------------------------------------------------
    def map_end_offset(self) -> int:
        """mapEndOffset: the offset the state is up to."""
        return self.last_map_offset

    def update_map_end_offset(self, last_offset: int) -> None:
        """updateMapEndOffset."""
        self.last_map_offset = last_offset

    def take_snapshot(self) -> SnapshotFile | None:
        """takeSnapshot: a snapshot of every producer's last batch at the map end offset, unless
        the state has not moved since the last one (then None)."""
        offset = self.last_map_offset
        if offset <= self.last_snap_offset:
            return None
        snapshot = SnapshotFile(offset, tuple(
            (pid, e.epoch, e.last_seq, e.last_data_offset, e.batches[-1].offset_delta)
            for pid, e in self.items() if e.batches))
        self.snapshots[offset] = snapshot
        self.last_snap_offset = offset
        return snapshot

    def latest_snapshot_offset(self) -> int | None:
        """latestSnapshotOffset (None: no snapshot, Kafka's empty OptionalLong)."""
        return max(self.snapshots) if self.snapshots else None

    def oldest_snapshot_offset(self) -> int | None:
        """oldestSnapshotOffset (None: no snapshot)."""
        return min(self.snapshots) if self.snapshots else None

    def snapshot_file_for_offset(self, offset: int) -> SnapshotFile | None:
        """snapshotFileForOffset."""
        return self.snapshots.get(offset)

    def delete_snapshots_before(self, offset: int) -> None:
        """deleteSnapshotsBefore: the snapshots below ``offset`` are deleted."""
        for snap_offset in [o for o in self.snapshots if o < offset]:
            del self.snapshots[snap_offset]

    def remove_stray_snapshots(self, segment_base_offsets) -> None:
        """removeStraySnapshots (LogLoader.load): keep the snapshots at a segment's base offset
        and the latest other one if it is above every base offset (a clean shutdown's)."""
        bases = set(segment_base_offsets)
        strays = [o for o in sorted(self.snapshots) if o not in bases]
        if not strays:
            return
        for offset in strays[:-1]:
            del self.snapshots[offset]
        if bases and strays[-1] < max(bases):
            del self.snapshots[strays[-1]]

    def truncate_and_reload(self, log_start_offset: int, log_end_offset: int,
                            current_time_ms: int = 0) -> None:
        """truncateAndReload: the snapshots outside (log start, log end] are deleted; unless
        the state is up to ``log_end_offset`` already, it is dropped and loaded from the latest
        snapshot left (``load_from_snapshot``). kafkasim does not expire producers, so
        ``current_time_ms`` changes nothing."""
        for offset in [o for o in self.snapshots
                       if o > log_end_offset or o <= log_start_offset]:
            del self.snapshots[offset]
        if log_end_offset != self.last_map_offset:
            self.clear()
            self.load_from_snapshot(log_start_offset)
        else:
            self.on_log_start_offset_incremented(log_start_offset)

    def load_from_snapshot(self, log_start_offset: int) -> None:
        """loadFromSnapshot: the producers of the latest snapshot, each with its last batch,
        the state up to its offset; with no snapshot, up to the log start."""
        offset = self.latest_snapshot_offset()
        if offset is None:
            self.last_snap_offset = self.last_map_offset = log_start_offset
            return
        for pid, epoch, last_seq, last_offset, delta in self.snapshots[offset].entries:
            if self.evicts_below_log_start and last_offset < log_start_offset:
                continue   # not isProducerRetained (0.11-2.3): not loaded
            entry = self[pid] = ProducerStateEntry(epoch)   # loadProducerEntry
            entry.add((last_seq - delta) % _SEQ_SPAN, last_seq, last_offset - delta)
        self.last_snap_offset = self.last_map_offset = offset

    def on_log_start_offset_incremented(self, log_start_offset: int) -> None:
        """onLogStartOffsetIncremented (truncateHead before 2.8): the map end offset at least
        the new log start; the last snapshot offset that of the latest snapshot (else the log
        start). Before 2.4 (KAFKA-7190) truncateHead first evicts the producers not retained
        (``is_producer_retained``)."""
        if self.evicts_below_log_start:
            for pid in [pid for pid, e in self.items()
                        if not self.is_producer_retained(e, log_start_offset)]:
                del self[pid]
        if self.last_map_offset < log_start_offset:
            self.last_map_offset = log_start_offset
        latest = self.latest_snapshot_offset()
        self.last_snap_offset = log_start_offset if latest is None else latest

    def truncate_head(self, log_start_offset: int) -> None:
        """truncateHead (before 2.8; Log.maybeIncrementLogStartOffset, truncateAndReload):
        onLogStartOffsetIncremented and the snapshots below the log start deleted
        (deleteSnapshotsBefore: Log.maybe_increment_log_start_offset does that itself)."""
        self.delete_snapshots_before(log_start_offset)
        self.on_log_start_offset_incremented(log_start_offset)

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """truncateFullyAndStartAt: no producer, no snapshot, the state up to ``offset``."""
        self.clear()
        self.snapshots.clear()
        self.last_snap_offset = 0
        self.last_map_offset = offset


def unknown_producer_verdict(rules) -> str:
    """ProducerAppendInfo.checkSequence for a client batch of a producer the broker has no
    state for, not at sequence 0 (``rules``: the cluster's ``ClientRules``): accepted from 2.5
    (KIP-360: "append"); UNKNOWN_PRODUCER_ID in 1.0-2.4 (KAFKA-5793); before,
    OUT_OF_ORDER_SEQUENCE_NUMBER (0.11: a new epoch must start at sequence 0)."""
    if rules.unknown_producer_accepted_at_any_sequence:
        return "append"
    if rules.unknown_producer_id_for_unknown_producer:
        return E.UNKNOWN_PRODUCER_ID
    return E.OUT_OF_ORDER_SEQUENCE_NUMBER


def check_append(states: dict, ident, unknown_producer: str = "append",
                 duplicate_before_cache: bool = False) -> tuple[str, int]:
    """The leader's verdict on an idempotent batch, ``ident`` = (producer id, epoch, first seq,
    last seq) of its header: ("append"|"duplicate"|error, offset). UnifiedLog
    .analyzeAndValidateProducerState looks for a duplicate first (findDuplicateBatch: the
    original's first offset), then ProducerAppendInfo checks the epoch (checkProducerEpoch)
    and the sequence (checkSequence). A producer with no state starts being tracked at sequence
    0; at another sequence the verdict is ``unknown_producer`` (``unknown_producer_verdict``
    for the cluster's version; "append" from 2.5). ``duplicate_before_cache`` (the rule
    ``duplicate_sequence_before_cached_batches``, 1.0.x): a batch of the current epoch that
    ends before the oldest batch kept is DUPLICATE_SEQUENCE_NUMBER, not out of order."""
    pid, epoch, first_seq, last_seq = ident
    entry = states.get(pid)
    if entry is None:
        return (unknown_producer if first_seq != 0 else "append"), -1
    dup = entry.find_duplicate_batch(epoch, first_seq, last_seq)
    if dup is not None:
        return "duplicate", dup.first_offset
    if epoch != entry.epoch:   # the usual batch is of the producer's current epoch
        if epoch < entry.epoch:
            return "INVALID_PRODUCER_EPOCH", -1
        return ("append", -1) if first_seq == 0 else ("OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
    if duplicate_before_cache and entry.batches and \
            is_duplicate_before_cache(entry, first_seq, last_seq):
        return E.DUPLICATE_SEQUENCE_NUMBER, -1
    if first_seq != (entry.last_seq + 1) % _SEQ_SPAN:   # in_sequence (every append)
        return "OUT_OF_ORDER_SEQUENCE_NUMBER", -1
    return "append", -1


def is_duplicate_before_cache(entry: ProducerStateEntry, first_seq: int, last_seq: int) -> bool:
    """ProducerAppendInfo.isDuplicate @1.0.0 (KAFKA-5494), checked after the epoch and before
    the sequence: a batch of the producer's epoch whose last sequence is below the first
    sequence of the oldest batch kept (and not 0, the oldest not at Integer.MAX_VALUE) was
    appended before the five batches the entry remembers. 1.1.0 removed the check
    (KAFKA-6683): such a batch is out of order from then on. (A batch with the sequences of
    a kept batch is a duplicate found earlier, by findDuplicateBatch.)"""
    if first_seq < 0 or entry.first_seq < 0:
        return False
    return last_seq != 0 and entry.first_seq != INT_MAX and last_seq < entry.first_seq


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
    """Producer state of a whole log from its batch headers alone, every batch from the log
    start replayed (no snapshot), up to the log end offset."""
    states = ProducerStateManager()
    update(states, log.producer_batches)
    states.update_map_end_offset(log.log_end_offset)
    return states
