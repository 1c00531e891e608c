"""A replica's log: records in offset order, LEO, log start offset, high watermark, flushed prefix.

Records are stored column-wise in ``array`` objects (leader epoch and size as int32, record id as
int32 -- the registry's ids count records from 1, and two billion records would not fit in memory
anyway --, timestamp as int64), so a record costs 20 bytes per replica and copying a range between
replicas is one C-level slice. The offset is implicit: record ``i`` of the arrays has offset
``log_start_offset + i``. What a record *says* (its value) lives once per cluster in
the record registry, keyed by record id. The idempotent batches' headers are columns too
(``ProducerBatches``), but for the newest, kept as records until the next metrics sample.

LEO and HW are exclusive, as in Kafka: LEO is the offset the next append gets, HW the first offset
not yet committed (fact sheet §1).

Two flushed prefixes are kept apart:

* ``recovery_point`` is Kafka's own (UnifiedLog / LocalLog ``recoveryPoint``): it moves only when
  Kafka fsyncs the log (``flush``: flush.messages on append, the flush.ms log flusher, a clean
  shutdown; a segment roll too, but segments are not modelled: one segment per log, so
  segment.bytes never rolls). It is what recovery-point-offset-checkpoint records, what
  ``unflushedMessages`` counts from, and where recovery starts after an unclean restart.
* ``durable_offset`` is what is physically on disk: Kafka's fsyncs plus the operating system's
  page-cache write-back (``write_back``), which Kafka does not see. It is what survives a power
  loss. Always ``recovery_point <= durable_offset <= LEO``.

What else happens when a log changes (a trace row, a flush by flush.messages, the producer state
of appended batches) belongs to the broker that owns it: a log carries a ``listener``
(``LogListener``) that ``append_as_leader``, ``append_as_follower``, ``truncate_to`` and
``truncate_fully_and_start_at`` tell of each change. The epoch cache flushes
leader-epoch-checkpoint itself, and a truncation rebuilds the producer state itself (UnifiedLog
.truncateTo / truncateFullyAndStartAt: rebuildProducerState, ``rebuild_producer_state``: from the
latest producer snapshot and the batches after it).

Offsets out of range are Kafka's exceptions (``kafkasim.core.errors``): a read outside
[log start, LEO] and a log start past the HW are OffsetOutOfRangeException, a negative
truncation or a HW past the LEO an IllegalArgumentException.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from collections.abc import Mapping, Sequence
from itertools import chain
from operator import sub
from typing import Any, NamedTuple, Protocol

from kafkasim.core import log_segments, rules
from kafkasim.core.errors import (
    IllegalArgumentException,
    InconsistentTopicIdException,
    KafkaException,
    OffsetOutOfRangeException,
    UnexpectedAppendOffsetException,
)
from kafkasim.core.leader_epoch import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    LeaderEpochFileCache,
    OffsetAndEpoch,
)
from kafkasim.core.producer_state import ProducerStateManager, update

_EMPTY_I = array("i")
_EMPTY_Q = array("q")

# RecordBatch.NO_PRODUCER_ID / NO_PRODUCER_EPOCH / NO_SEQUENCE: a batch of a producer that is not
# idempotent carries these in its header
NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1

# ListOffsetsRequest's target timestamps that are not timestamps (a timestamp >= 0 is searched),
# and RecordBatch.NO_TIMESTAMP
LATEST_TIMESTAMP = -1
EARLIEST_TIMESTAMP = -2
MAX_TIMESTAMP = -3               # KIP-734 (3.0)
EARLIEST_LOCAL_TIMESTAMP = -4    # KIP-405 (3.5): the local log start (no tiered storage here)
NO_TIMESTAMP = -1


class TimestampAndOffset(NamedTuple):
    """FileRecords.TimestampAndOffset: what a ListOffsets lookup found, its timestamp
    (NO_TIMESTAMP for the earliest and latest offsets), offset and leader epoch (None when
    unknown: Kafka's empty Optional)."""

    timestamp: int
    offset: int
    leader_epoch: int | None


# LogOffsetMetadata's unknown segment base offset and file position
UNKNOWN_SEGMENT_BASE_OFFSET = -1
UNKNOWN_FILE_POSITION = -1


class LogOffsetMetadata(NamedTuple):
    """org.apache.kafka.storage.internals.log.LogOffsetMetadata: an offset and, when known, the
    base offset of its segment and its byte position in it (kafkasim's log has one segment, so
    the log itself deals in bare offsets; this is the value Kafka's callers compare).
    ``LogOffsetMetadata(offset)`` knows only the offset (``message_offset_only``)."""

    message_offset: int
    segment_base_offset: int = UNKNOWN_SEGMENT_BASE_OFFSET
    relative_position_in_segment: int = UNKNOWN_FILE_POSITION

    def __str__(self) -> str:
        return (f"(offset={self.message_offset}, segment=[{self.segment_base_offset}:"
                f"{self.relative_position_in_segment}])")

    def message_offset_only(self) -> bool:
        """``messageOffsetOnly``: neither the segment nor the position is known."""
        return (self.segment_base_offset == UNKNOWN_SEGMENT_BASE_OFFSET
                and self.relative_position_in_segment == UNKNOWN_FILE_POSITION)

    def on_older_segment(self, that: LogOffsetMetadata) -> bool:
        """``onOlderSegment``: both know their segment and this one's is older."""
        if self.message_offset_only() or that.message_offset_only():
            return False
        return self.segment_base_offset < that.segment_base_offset

    def on_same_segment(self, that: LogOffsetMetadata) -> bool:
        """``onSameSegment``: both know their segment and it is the same."""
        if self.message_offset_only() or that.message_offset_only():
            return False
        return self.segment_base_offset == that.segment_base_offset

    def position_diff(self, that: LogOffsetMetadata) -> int:
        """``positionDiff``: the bytes from ``that`` to this offset in their common segment; a
        KafkaException when either knows only its offset or the segments differ."""
        if self.message_offset_only() or that.message_offset_only():
            raise KafkaException(f"{self} cannot compare its segment position with {that} "
                                 "since it only has message offset info")
        if not self.on_same_segment(that):
            raise KafkaException(f"{self} cannot compare its segment position with {that} "
                                 "since they are not on the same segment")
        return self.relative_position_in_segment - that.relative_position_in_segment


#: LogOffsetMetadata.UNKNOWN_OFFSET_METADATA
UNKNOWN_OFFSET_METADATA = LogOffsetMetadata(-1)


class LogOffsetSnapshot(NamedTuple):
    """kafka.log.LogOffsetSnapshot: the log's offsets read together (UnifiedLog
    .fetchOffsetSnapshot). Without transactions the last stable offset is the HW."""

    log_start_offset: int
    log_end_offset: int
    high_watermark: int
    last_stable_offset: int


class ProducerBatch(NamedTuple):
    """The idempotence fields of a RecordBatch header (DefaultRecordBatch: producerId,
    producerEpoch, baseSequence; KIP-98, since 0.11) and the offsets the batch occupies.

    A log keeps one per idempotent batch, in offset order; batches without a producer id carry
    nothing the ProducerStateManager needs, so they have none. A fetch may hand a follower part
    of a batch: the piece's header then starts at its first offset with the matching sequence.
    """

    base_offset: int
    last_offset: int
    producer_id: int
    producer_epoch: int
    base_sequence: int

    @property
    def last_sequence(self) -> int:
        return self.base_sequence + self.last_offset - self.base_offset


class ProducerBatches:
    """A log's idempotent batch headers (``ProducerBatch``), in offset order. The newest are the
    ``ProducerBatch`` records themselves (``recent``: an append is a list append), what appends
    and fetches touch; ``pack`` moves them into the columns of DefaultRecordBatch's header
    fields with their widths: baseOffset (int64), lastOffsetDelta (int32), producerId (int64),
    producerEpoch (int16), baseSequence (int32): 26 bytes a batch. Every metrics sample packs
    every log's (``kafkasim.runtime.bootstrap.metrics_sample``, as it compacts the trace rows),
    and so does a search by offset (``first_covering``). Reads as the list of ``ProducerBatch``
    it stands for (``len``, indexing, slicing, iteration, ``==``); ``last`` is the newest
    header (None when empty), what fetches and appends look at. Only ever grows (packing moves
    headers, it keeps their order): a truncation or a new log start builds a new one
    (``Log._truncate``), so History snapshots can share it by its length."""

    __slots__ = ("base_offsets", "last_offset_deltas", "producer_ids", "producer_epochs",
                 "base_sequences", "recent", "last")

    def __init__(self, batches=()) -> None:
        self.base_offsets = array("q")
        self.last_offset_deltas = array("i")
        self.producer_ids = array("q")
        self.producer_epochs = array("h")
        self.base_sequences = array("i")
        self.recent: list[ProducerBatch] = []
        self.last: ProducerBatch | None = None
        self.extend(list(batches))

    def append(self, batch: ProducerBatch) -> None:
        self.recent.append(batch)
        self.last = batch

    def extend(self, batches: Sequence[ProducerBatch]) -> None:
        if batches:
            self.recent.extend(batches)
            self.last = batches[-1]

    def pack(self) -> None:
        """Move the ``recent`` headers into the columns (each column extended at once)."""
        recent = self.recent
        if not recent:
            return
        bases, lasts, producer_ids, producer_epochs, base_sequences = zip(*recent, strict=True)
        self.base_offsets.extend(bases)
        self.last_offset_deltas.extend(map(sub, lasts, bases))
        self.producer_ids.extend(producer_ids)
        self.producer_epochs.extend(producer_epochs)
        self.base_sequences.extend(base_sequences)
        recent.clear()

    def __len__(self) -> int:
        return len(self.base_offsets) + len(self.recent)

    def _batch(self, i: int) -> ProducerBatch:
        """The header at index ``i`` (from 0) of the columns."""
        base = self.base_offsets[i]
        return _new_batch(ProducerBatch, (base, base + self.last_offset_deltas[i],
                                          self.producer_ids[i], self.producer_epochs[i],
                                          self.base_sequences[i]))

    def __getitem__(self, index):
        packed = len(self.base_offsets)
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return list(self)[index]
            out = ProducerBatches()
            for name in ("base_offsets", "last_offset_deltas", "producer_ids",
                         "producer_epochs", "base_sequences"):
                setattr(out, name, getattr(self, name)[start:stop])
            out.recent = self.recent[max(0, start - packed):max(0, stop - packed)]
            out.last = out[-1] if stop > start else None
            return out
        n = packed + len(self.recent)
        if index < 0:
            index += n
        if not 0 <= index < n:
            raise IndexError("ProducerBatches index out of range")
        return self._batch(index) if index < packed else self.recent[index - packed]

    def __iter__(self):
        return chain(map(self._batch, range(len(self.base_offsets))), self.recent)

    def first_covering(self, offset: int) -> int:
        """The index of the first batch whose last offset is at or above ``offset`` (packs the
        recent headers first: the search runs on the columns)."""
        self.pack()
        i = bisect_right(self.base_offsets, offset) - 1
        if i < 0 or self.base_offsets[i] + self.last_offset_deltas[i] < offset:
            return i + 1
        return i

    def __eq__(self, other):
        if isinstance(other, (ProducerBatches, list, tuple)):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"ProducerBatches({list(self)!r})"

    def __reduce__(self):
        return (_producer_batches, (self.base_offsets, self.last_offset_deltas,
                                    self.producer_ids, self.producer_epochs,
                                    self.base_sequences, self.recent))


def _producer_batches(*columns) -> ProducerBatches:
    out = ProducerBatches()
    (out.base_offsets, out.last_offset_deltas, out.producer_ids, out.producer_epochs,
     out.base_sequences, out.recent) = columns
    out.last = out[-1] if len(out) else None
    return out


def _whole_batches(batches: ProducerBatches, start: int, lo: int, end: int, hi: int,
                   min_one_message: bool = True) -> int:
    """A read cut by its byte limit at record index ``end`` (exclusive; ``start``: the log start
    offset, index 0) ends at a batch boundary, as Kafka's does: it hands over whole record
    batches only (LogSegment.read slices bytes; the fetching side keeps the complete batches).
    An idempotent batch cut in two is left out, unless it is the read's first, which comes whole
    (``min_one_message``, KIP-74) up to ``hi``; without it the read is empty (``lo``: the
    incomplete first batch a v3+ fetch answers as none, ReplicaManager.readFromLog). Records
    outside idempotent batches carry no batch boundaries here, so they are cut record by
    record."""
    last = start + end - 1
    tail = batches.last
    if tail is None or tail[1] <= last:
        return end
    b = batches[batches.first_covering(last)]
    if b[0] > last or b[1] == last:
        return end   # the last record read is outside a batch, or ends one
    if b[0] <= start + lo:   # the first batch: whole, or nothing
        return min(b[1] + 1 - start, hi) if min_one_message else lo
    return b[0] - start


def _batches_in(batches: ProducerBatches, first: int, last: int) -> tuple:
    """The headers of ``batches`` covering offsets [first, last], clipped to that range."""
    tail = batches.last
    if tail is None or tail[1] < first:
        return ()
    if tail[0] == first and tail[1] == last:
        return (tail,)   # the steady state: a follower fetches exactly the newest batch
    i = batches.first_covering(first)
    out = []
    n = len(batches)
    while i < n:
        b = batches[i]
        base, end = b[0], b[1]
        if base > last:
            break
        if base < first or end > last:
            lo = base if base > first else first
            b = _new_batch(ProducerBatch, (lo, end if end < last else last, b[2], b[3],
                                           b[4] + lo - base))
        out.append(b)
        i += 1
    return tuple(out)


class RecordChunk(NamedTuple):
    """A contiguous run of records as carried by Fetch responses (``base_offset`` first)."""

    base_offset: int
    epochs: array
    ids: array
    timestamps: array
    sizes: array
    producer_batches: tuple   # ProducerBatch headers of the idempotent batches in the chunk

    def __len__(self) -> int:
        return len(self.ids)

    @property
    def last_offset(self) -> int:
        return self.base_offset + len(self.ids) - 1

    @property
    def size_bytes(self) -> int:
        return sum(self.sizes)

    @staticmethod
    def empty(base_offset: int) -> RecordChunk:
        # the arrays are shared: chunks are read-only by convention
        return _new_chunk(RecordChunk, (base_offset, _EMPTY_I, _EMPTY_I, _EMPTY_Q, _EMPTY_I, ()))


# NamedTuple's generated __new__ is a Python function, a frame per call; a fetch builds a chunk
# per partition and an append a batch header, so these build them with tuple's C constructor:
# the same object, all its fields in order in one call
_new_chunk = tuple.__new__
_new_batch = tuple.__new__


def _up_to_epoch(chunk: RecordChunk, leader_epoch: int) -> RecordChunk:
    """The records of ``chunk`` before the first one stamped with an epoch above
    ``leader_epoch`` (records of one batch share its epoch, so the cut is at a batch start)."""
    epochs = chunk.epochs
    if not epochs or max(epochs) <= leader_epoch:
        return chunk   # the usual case (one C-level max)
    n = next(i for i, epoch in enumerate(epochs) if epoch > leader_epoch)
    base = chunk.base_offset
    return _new_chunk(RecordChunk, (
        base, epochs[:n], chunk.ids[:n], chunk.timestamps[:n], chunk.sizes[:n],
        tuple(b for b in chunk.producer_batches if b.base_offset < base + n)))


# LogFileUtils' suffixes of a partition directory marked for deletion, a future replica's
# (JBOD moves) and a stray one; LocalLog's patterns of such names
DELETE_DIR_SUFFIX = "-delete"
FUTURE_DIR_SUFFIX = "-future"
STRAY_DIR_SUFFIX = "-stray"
_DIR_SUFFIXES = (DELETE_DIR_SUFFIX, FUTURE_DIR_SUFFIX, STRAY_DIR_SUFFIX)
_JAVA_INT = re.compile(r"[+-]?[0-9]+")


def log_dir_name(topic: str, partition: int) -> str:
    """LocalLog.logDirName: a partition's directory, ``topic-partition``."""
    return f"{topic}-{partition}"


def log_delete_dir_name(topic: str, partition: int, unique_id: str) -> str:
    """LocalLog.logDeleteDirName: ``topic-partition.uniqueId-delete``, the topic cut short so
    the name is at most 255 characters. Kafka draws ``unique_id`` from a random UUID (32 hex
    digits, no dashes); the caller passes it here (kafkasim draws nothing at random)."""
    suffix = f"-{partition}.{unique_id}{DELETE_DIR_SUFFIX}"
    return topic[:max(0, 255 - len(suffix))] + suffix


def log_stray_dir_name(topic: str, partition: int, unique_id: str) -> str:
    """LocalLog.logStrayDirName (3.7+): ``topic-partition.uniqueId-stray``, the topic cut short
    so the name is at most 255 characters (logDirNameWithSuffixCappedLength); ``unique_id`` as
    in ``log_delete_dir_name``."""
    suffix = f"-{partition}.{unique_id}{STRAY_DIR_SUFFIX}"
    return topic[:max(0, 255 - len(suffix))] + suffix


def parse_topic_partition_name(dir_name: str | None) -> tuple[str, int]:
    """LocalLog.parseTopicPartitionName: (topic, partition) of a log directory's name (its last
    path element), also of one marked for deletion, a future or a stray one
    (``topic-partition.uniqueId-delete``); anything else is a KafkaException."""
    if dir_name is None:
        raise KafkaException("dir should not be null")
    name = dir_name.rstrip("/").rsplit("/", 1)[-1]
    error = KafkaException(
        f"Found directory {dir_name}, '{name}' is not in the form of topic-partition or "
        "topic-partition.uniqueId-delete (if marked for deletion).\nKafka's log directories "
        "(and children) should only contain Kafka topic data.")
    if "-" not in name:
        raise error
    suffix = next((x for x in _DIR_SUFFIXES if name.endswith(x)), None)
    if suffix is not None:
        if re.fullmatch(rf"\S+-\S+\.\S+{suffix}", name) is None:
            raise error
        name = name[:name.rindex(".")]
    topic, _, partition = name.rpartition("-")
    if not topic or _JAVA_INT.fullmatch(partition) is None \
            or not -2**31 <= int(partition) < 2**31:   # Integer.parseInt
        raise error
    return topic, int(partition)


class LogListener(Protocol):
    """Told of every change of a ``Log`` (the broker: trace, flush, producer state)."""

    def on_append(self, log: Log, first: int, last: int, as_leader: bool) -> None:
        """Records ``first..last`` were appended (by the leader, or fetched by a follower)."""

    def on_truncate(self, log: Log, offset: int, removed: int, reason: str,
                    old_high_watermark: int) -> None:
        """``truncate_to(offset)`` removed ``removed`` records (maybe 0) for ``reason``."""

    def on_wipe(self, log: Log, start_offset: int) -> None:
        """The log was emptied and restarts at ``start_offset``."""


def _refuse_follower_append(log: Log, base: int, count: int) -> None:
    """Records that do not start at the log end offset: below it, UnifiedLog.append's
    UnexpectedAppendOffsetException (a RuntimeError); above it, a gap kafkasim's dense log
    cannot hold (Kafka appends it, offsets need not be contiguous)."""
    where = f"{log.topic}-{log.partition}: fetched records start at {base} but the log end " \
            f"offset is {log.log_end_offset}"
    if base < log.log_end_offset:
        raise UnexpectedAppendOffsetException(
            f"Unexpected offset in append to {where}", base, base + count - 1)
    raise RuntimeError(f"{where} (kafkasim's log has no gaps)")


class Log:
    """Kafka's UnifiedLog reduced to what replication needs (one segment, no compaction)."""

    __slots__ = (
        "topic", "partition", "log_start_offset", "log_end_offset", "high_watermark",
        "recovery_point", "segment_base_offset", "rolled_segment_bases",
        "durable_offset", "epochs", "ids", "timestamps", "sizes", "leader_epoch_cache",
        "producer_batches",
        "producer_states", "listener", "config", "topic_id", "partition_metadata_file",
    )

    def __init__(self, topic: str, partition: int) -> None:
        self.topic = topic
        self.partition = partition
        self.log_start_offset = 0
        # LocalLog.logEndOffset: kept up to date by every append, truncation and wipe (a new
        # log start removes records from the front only, so it leaves the LEO where it is)
        self.log_end_offset = 0
        self.high_watermark = 0
        self.recovery_point = 0  # Kafka flushed (fsynced) everything below
        #: logSegments.head.baseOffset: kafkasim's one segment starts here (0, or where
        #: truncate_fully_and_start_at restarted the log); a log start moved by
        #: maybe_increment_log_start_offset stays inside it (Kafka keeps the segment that
        #: holds the new start)
        self.segment_base_offset = 0
        #: the base offsets of the segments after the first, ascending: one per ``roll``
        #: (kafkasim.core.log_segments reads the segments from them)
        self.rolled_segment_bases: list[int] = []
        self.durable_offset = 0  # everything below is on disk (Kafka's fsync or OS write-back)
        self.epochs = array("i")
        self.ids = array("i")
        self.timestamps = array("q")
        self.sizes = array("i")
        self.leader_epoch_cache = LeaderEpochFileCache()
        # the producer fields of each idempotent batch's header, in offset order
        self.producer_batches = ProducerBatches()
        self.producer_states = ProducerStateManager()   # idempotent producers
        self.listener: LogListener | None = None
        #: the topic's config (UnifiedLog.config, its LogConfig): set by the LogManager that
        #: holds the log and again at each change of the topic's config (LogManager
        #: .updateTopicConfig); None for a log no LogManager holds (the context's
        #: ``topic_config`` answers then)
        self.config: Mapping[str, Any] | None = None
        #: UnifiedLog.topicId (KIP-516, 2.8+): None until assigned or read back from
        #: partition.metadata
        self.topic_id: str | None = None
        #: UnifiedLog.partitionMetadataFile: the partition directory's partition.metadata (a
        #: ``PartitionMetadataFile``), given by the LogManager that holds the log from 2.8 on
        #: (``partition_metadata_file`` rule); None before, or for a log no LogManager holds
        self.partition_metadata_file: Any = None

    def __repr__(self) -> str:
        return (f"Log({self.topic}-{self.partition}, start={self.log_start_offset}, "
                f"LEO={self.log_end_offset}, HW={self.high_watermark})")

    # -- offsets ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.ids)

    def latest_epoch(self) -> int:
        """UnifiedLog.latestEpoch: the epoch cache's latest epoch, UNDEFINED_EPOCH (-1) when
        the cache is empty (the cache answers None, as Kafka's OptionalInt)."""
        epoch = self.leader_epoch_cache.latest_epoch()
        return UNDEFINED_EPOCH if epoch is None else epoch

    def end_offset_for_epoch(self, leader_epoch: int) -> OffsetAndEpoch | None:
        """UnifiedLog.endOffsetForEpoch: where ``leader_epoch`` ends in this log and the epoch
        found for it (the epoch cache's ``endOffsetFor`` at the LEO); None when the cache cannot
        say (UNDEFINED_EPOCH_OFFSET: an undefined or unknown epoch, an empty cache)."""
        epoch, offset = self.leader_epoch_cache.end_offset_for(leader_epoch, self.log_end_offset)
        return None if offset == UNDEFINED_EPOCH_OFFSET else OffsetAndEpoch(offset, epoch)

    def epoch_at(self, offset: int) -> int:
        return self.epochs[offset - self.log_start_offset]

    def record_id_at(self, offset: int) -> int:
        return self.ids[offset - self.log_start_offset]

    def records(self) -> list[tuple[int, int, int, int]]:
        """All records as (offset, leader epoch, record id, timestamp) tuples (for display)."""
        start = self.log_start_offset
        return [(start + i, e, r, t) for i, (e, r, t)
                in enumerate(zip(self.epochs, self.ids, self.timestamps, strict=True))]

    # -- appends ----------------------------------------------------------------------------
    def append_as_leader(self, ids: Sequence[int], sizes: Sequence[int], epoch: int,
                         timestamp: int, producer_id: int = NO_PRODUCER_ID,
                         producer_epoch: int = NO_PRODUCER_EPOCH,
                         base_sequence: int = NO_SEQUENCE) -> tuple[int, int]:
        """Append a batch stamped with the leader's epoch; returns (first offset, last offset).
        An idempotent batch (``base_sequence`` >= 0) keeps its producer header in
        ``producer_batches``."""
        pmf = self.partition_metadata_file
        if pmf is not None and pmf.dirty_topic_id is not None:
            pmf.maybe_flush()   # UnifiedLog.append: maybeFlushMetadataFile before any record
        first = self.log_end_offset
        n = len(ids)
        last = first + n - 1
        self.ids.extend(ids)
        self.sizes.extend(sizes)
        self.epochs.fromlist([epoch] * n)
        self.timestamps.fromlist([timestamp] * n)
        self.log_end_offset = last + 1
        cache = self.leader_epoch_cache
        entries = cache.entries
        if not entries or entries[-1].epoch != epoch or entries[-1].start_offset > first:
            # LeaderEpochFileCache.assign; a leader appending in the epoch it already has in its
            # cache changes nothing (isUpdateNeeded is false), so that call is skipped
            cache.assign(epoch, first)
        if base_sequence >= 0:
            self.producer_batches.append(_new_batch(ProducerBatch, (
                first, last, producer_id, producer_epoch, base_sequence)))
        listener = self.listener
        if listener is not None:
            listener.on_append(self, first, last, True)
        return first, last

    def append_as_follower(self, chunk: RecordChunk, leader_epoch: int | None = None) -> int:
        """Append records fetched from the leader; the chunk must start at our LEO. Returns the
        latest epoch of the epoch cache after the append (the fetcher's next lastFetchedEpoch).

        ``leader_epoch`` is Kafka 4.1's ``appendAsFollower(records, leaderEpoch)`` (KAFKA-18723:
        the fetcher passes the partition's current leader epoch): the first batch stamped with a
        higher epoch and every batch after it are skipped (UnifiedLog
        .analyzeAndValidateRecords' hasHigherPartitionLeaderEpoch), the leader having lost the
        epoch while its answer was on the way. None (Kafka before 4.1) checks nothing."""
        if leader_epoch is not None:
            chunk = _up_to_epoch(chunk, leader_epoch)
            if not chunk.ids:   # nothing valid: no append (UnifiedLog.append's validBytes <= 0)
                return self.latest_epoch()
        base, epochs, ids, timestamps, sizes, batches = chunk
        pmf = self.partition_metadata_file
        if pmf is not None and pmf.dirty_topic_id is not None:
            pmf.maybe_flush()   # UnifiedLog.append: maybeFlushMetadataFile before any record
        if base != self.log_end_offset:
            _refuse_follower_append(self, base, len(ids))
        cache = self.leader_epoch_cache
        last_epoch = cache.latest_epoch()
        if last_epoch is None:   # an empty cache
            last_epoch = UNDEFINED_EPOCH
        # fast path: every record is in the cache's latest epoch (one C-level count), so the
        # loop below would assign nothing
        if epochs.count(last_epoch) != len(epochs):
            for i, epoch in enumerate(epochs):
                if epoch != last_epoch:  # one assign per epoch change (Kafka: per batch)
                    cache.assign(epoch, base + i)
                    last_epoch = epoch
            last_epoch = self.latest_epoch()   # an assign may be refused: the cache's own
        self.epochs.extend(epochs)
        self.ids.extend(ids)
        self.timestamps.extend(timestamps)
        self.sizes.extend(sizes)
        end = base + len(ids)
        self.log_end_offset = end
        if batches:
            self.producer_batches.extend(batches)
        listener = self.listener
        if listener is not None:
            listener.on_append(self, base, end - 1, False)
        return last_epoch

    # -- topic id and partition.metadata (KIP-516, 2.8+) ------------------------------------
    def maybe_flush_metadata_file(self) -> None:
        """UnifiedLog.maybeFlushMetadataFile: write partition.metadata if a topic id is pending
        (every append does this first, so no record reaches the disk before it)."""
        if self.partition_metadata_file is not None:
            self.partition_metadata_file.maybe_flush()

    def assign_topic_id(self, topic_id: str) -> None:
        """UnifiedLog.assignTopicId: a log without a topic id takes ``topic_id`` and, when its
        partition.metadata does not exist yet, records it there and flushes it (Kafka schedules
        that flush at once, ``flush-metadata-file``). A log that has another topic id refuses
        it (InconsistentTopicIdException) and stays as it was; a log without the file takes
        none (keepPartitionMetadataFile false)."""
        if self.topic_id is not None:
            if self.topic_id != topic_id:
                raise InconsistentTopicIdException(
                    f"Tried to assign topic ID {topic_id} to log for topic partition "
                    f"{self.topic}-{self.partition}, but log already contained topic ID "
                    f"{self.topic_id}")
            return
        pmf = self.partition_metadata_file
        if pmf is None:
            # keepPartitionMetadataFile false (before 2.8, or a log no LogManager holds): the
            # log takes no topic id
            return
        self.topic_id = topic_id
        if not pmf.exists():
            pmf.record(topic_id)
            pmf.maybe_flush()

    # -- reads ------------------------------------------------------------------------------
    def read(self, start_offset: int, max_offset: int, max_bytes: int,
             min_one_message: bool = True) -> RecordChunk:
        """Records in [start_offset, max_offset), at least one if any (``min_one_message``,
        KIP-74; without it a first record or batch over ``max_bytes`` makes the read empty,
        as ReplicaManager.readFromLog drops an incomplete first batch), then up to
        ``max_bytes``, ending at a batch boundary (``_whole_batches``). ``max_offset`` is the
        fetch isolation's bound (the LEO for a follower, the HW for a consumer): a read at or
        past it is empty. A ``start_offset`` below the log start or past the LEO is an
        OffsetOutOfRangeException (UnifiedLog.read's checkLogStartOffset, LocalLog.read); at
        the LEO the read is empty. ReplicaManager checks the range before it reads."""
        start = self.log_start_offset
        if start_offset < start or start_offset > self.log_end_offset:
            raise self._out_of_range(start_offset)
        sizes = self.sizes
        # indexes into the columns: [lo, hi), hi at most the number of records (the LEO)
        lo = start_offset - start
        hi = max_offset - start
        if hi > len(sizes):
            hi = len(sizes)
        if lo >= hi:   # (a parked fetch's read finds nothing new)
            return RecordChunk.empty(start_offset)
        got = sizes[lo:hi]
        if sum(got) <= max_bytes:
            end = hi   # all of them fit (one C-level sum: the usual follower fetch)
        else:
            total = sizes[lo]
            if total > max_bytes and not min_one_message:
                return RecordChunk.empty(start_offset)
            end = lo + 1
            while end < hi:
                total += sizes[end]
                if total > max_bytes:
                    break
                end += 1
            end = _whole_batches(self.producer_batches, start, lo, end, hi, min_one_message)
            if end == lo:
                return RecordChunk.empty(start_offset)
            got = sizes[lo:end]
        batches = _batches_in(self.producer_batches, start_offset, start + end - 1)
        return _new_chunk(RecordChunk, (start_offset, self.epochs[lo:end], self.ids[lo:end],
                                        self.timestamps[lo:end], got, batches))

    def _out_of_range(self, offset: int) -> OffsetOutOfRangeException:
        """The OffsetOutOfRangeException of a read at ``offset`` (UnifiedLog
        .checkLogStartOffset below the log start, LocalLog.read past the LEO)."""
        tp = f"{self.topic}-{self.partition}"
        if offset < self.log_start_offset:
            return OffsetOutOfRangeException(
                f"Received request for offset {offset} for partition {tp}, but we only have log "
                f"segments starting from offset: {self.log_start_offset}.")
        return OffsetOutOfRangeException(
            f"Received request for offset {offset} for partition {tp}, but we only have log "
            f"segments upto {self.log_end_offset}.")

    # -- offsets by timestamp (ListOffsets) ---------------------------------------------------
    def fetch_offset_by_timestamp(self, target_timestamp: int, *,
                                  max_timestamp_batch_epoch: bool = True
                                  ) -> TimestampAndOffset | None:
        """UnifiedLog.fetchOffsetByTimestamp: EARLIEST (and EARLIEST_LOCAL: no tiered storage)
        the log start offset, with the earliest epoch when its entry starts there; LATEST the
        LEO with the latest epoch; MAX_TIMESTAMP the first record of the largest timestamp,
        with its own epoch (3.8+, KAFKA-16310: ``max_timestamp_batch_epoch``) or the latest;
        any other timestamp the first record at or after it, with its epoch. None when no
        record is there."""
        cache = self.leader_epoch_cache
        if target_timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            entry = cache.earliest_entry()
            epoch = entry.epoch if entry is not None and \
                entry.start_offset <= self.log_start_offset else None
            return TimestampAndOffset(NO_TIMESTAMP, self.log_start_offset, epoch)
        if target_timestamp == LATEST_TIMESTAMP:
            return TimestampAndOffset(NO_TIMESTAMP, self.log_end_offset, cache.latest_epoch())
        timestamps = self.timestamps
        if target_timestamp == MAX_TIMESTAMP:
            if not timestamps:
                return None
            i = timestamps.index(max(timestamps))
            epoch = self.epochs[i] if max_timestamp_batch_epoch else cache.latest_epoch()
        else:
            i = next((i for i, ts in enumerate(timestamps) if ts >= target_timestamp), None)
            if i is None:
                return None
            epoch = self.epochs[i]
        return TimestampAndOffset(timestamps[i], self.log_start_offset + i,
                                  None if epoch is None or epoch < 0 else epoch)

    def fetch_offset_snapshot(self) -> LogOffsetSnapshot:
        """UnifiedLog.fetchOffsetSnapshot (no transactions: the LSO is the HW)."""
        return LogOffsetSnapshot(self.log_start_offset, self.log_end_offset,
                                 self.high_watermark, self.high_watermark)

    def bytes_between(self, start_offset: int, end_offset: int, cap: int) -> int:
        """Bytes available in [start, end), counting at most up to ``cap`` (for fetch min.bytes)."""
        start = self.log_start_offset
        sizes = self.sizes
        # indexes into the columns: [lo, hi) clipped to [0, number of records]
        lo = start_offset - start if start_offset > start else 0
        hi = end_offset - start
        if hi > len(sizes):
            hi = len(sizes)
        if lo >= hi or cap <= 0:
            return 0
        total = sizes[lo]
        if total >= cap:   # the first record alone usually reaches min.bytes (default 1)
            return total
        lo += 1
        while lo < hi and total < cap:
            total += sizes[lo]
            lo += 1
        return total

    # -- high watermark -----------------------------------------------------------------------
    def update_high_watermark(self, hw: int) -> int:
        """Set HW clamped into [log start, LEO]; may go down (UnifiedLog.updateHighWatermark, by
        ``rules.update_high_watermark``)."""
        hw = rules.update_high_watermark(hw, self.log_start_offset, self.log_end_offset)
        self.high_watermark = hw
        return hw

    def maybe_increment_high_watermark(self, hw: int) -> bool:
        """UnifiedLog.maybeIncrementHighWatermark: raise the HW to ``hw`` if that is larger (the
        leader's HW never moves back); past the LEO is an IllegalArgumentException (the caller
        bounds it: Partition.maybeIncrementLeaderHW's new HW is a replica's LEO, at most the
        leader's own)."""
        if hw > self.log_end_offset:
            raise IllegalArgumentException(
                f"High watermark {hw} update exceeds current log end offset "
                f"{self.log_end_offset} of {self.topic}-{self.partition}")
        if hw > self.high_watermark:
            self.high_watermark = hw
            return True
        return False

    # -- truncation and durability ------------------------------------------------------------
    def truncate_to(self, offset: int, reason: str = "") -> int:
        """UnifiedLog.truncateTo: drop records at and above ``offset``; returns how many were
        removed. The listener hears of it (with ``reason``) even when nothing was removed. A
        target below the log start empties the log and restarts it there (UnifiedLog.truncateTo:
        below the first segment's base offset it is truncateFullyAndStartAt); a negative one is
        an IllegalArgumentException. When records go, the producer state is rebuilt up to the
        new end (``rebuild_producer_state``)."""
        if offset < self.log_start_offset:
            if offset < 0:
                raise IllegalArgumentException(
                    f"Cannot truncate partition {self.topic}-{self.partition} to a negative "
                    f"offset ({offset}).")
            removed = len(self.ids)
            self.truncate_fully_and_start_at(offset)
            return removed
        old_hw = self.high_watermark
        old_leo = self.log_end_offset
        removed = self._truncate(offset, True)
        if removed:   # UnifiedLog.rebuildProducerState, from a state up to the old LEO
            self.producer_states.update_map_end_offset(old_leo)
            self.rebuild_producer_state(self.log_end_offset)
        listener = self.listener
        if listener is not None:
            listener.on_truncate(self, offset, removed, reason, old_hw)
        return removed

    def lose_unsynced(self, offset: int) -> int:
        """A power loss: the disk kept only the records below ``offset``. No Kafka code runs, so
        the listener is not told and leader-epoch-checkpoint (fsynced whenever Kafka wrote it)
        keeps its content; the restart's recovery reads it. Returns how many records were lost."""
        return self._truncate(offset, False)

    def _truncate(self, offset: int, flush_epochs: bool) -> int:
        cache = self.leader_epoch_cache
        if offset >= self.log_end_offset:
            # UnifiedLog.truncateTo: nothing to remove, but an epoch entry at the LEO (a leader
            # that never wrote in its epoch) goes, or fetches would diverge forever
            cache.truncate_from_end(self.log_end_offset, flush=flush_epochs)
            return 0
        offset = max(offset, self.log_start_offset)
        keep = offset - self.log_start_offset
        removed = len(self.ids) - keep
        # new arrays, not ``del`` in place: the old ones may be shared by History snapshots,
        # which rely on a log's columns only ever growing (kafkasim.observe.snapshots)
        self.epochs = self.epochs[:keep]
        self.ids = self.ids[:keep]
        self.timestamps = self.timestamps[:keep]
        self.sizes = self.sizes[:keep]
        self.log_end_offset = offset
        if self.rolled_segment_bases and self.rolled_segment_bases[-1] > offset:
            # LocalLog.truncateTo: the segments based above the target go
            self.rolled_segment_bases = [b for b in self.rolled_segment_bases if b <= offset]
        pb = self.producer_batches
        if pb.last is not None:
            self.producer_batches = ProducerBatches(
                _batches_in(pb, self.log_start_offset, offset - 1))
        cache.truncate_from_end(offset, flush=flush_epochs)
        if self.high_watermark > offset:
            self.high_watermark = offset
        if self.recovery_point > offset:
            self.recovery_point = offset
        if self.durable_offset > offset:
            self.durable_offset = offset
        return removed

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """UnifiedLog.truncateFullyAndStartAt: wipe the log (producer state and snapshots, and
        the epoch cache too) and restart it at ``offset`` (follower behind the leader's log
        start). The recovery point only comes down (to ``offset`` if it was above): Kafka sets
        the log start directly, not by updateLogStartOffset, so a log never flushed keeps its
        recovery point below the new start (LocalLog.updateLogEndOffset; Log
        .truncateFullyAndStartAt's ``min(newOffset, recoveryPoint)`` since 0.9)."""
        self.epochs = array("i")
        self.ids = array("i")
        self.timestamps = array("q")
        self.sizes = array("i")
        self.producer_batches = ProducerBatches()
        self.log_start_offset = offset
        self.segment_base_offset = offset   # LocalLog.truncateFullyAndStartAt: a new segment
        self.rolled_segment_bases = []
        self.log_end_offset = offset
        self.high_watermark = offset
        if self.recovery_point > offset:
            self.recovery_point = offset
        self.durable_offset = offset   # nothing below the new start is left to lose
        self.leader_epoch_cache.clear_and_flush()
        self.producer_states.truncate_fully_and_start_at(offset)
        self.rebuild_producer_state(offset)
        listener = self.listener
        if listener is not None:
            listener.on_wipe(self, offset)

    def maybe_increment_log_start_offset(self, offset: int, reason: str | None = None) -> bool:
        """UnifiedLog.maybeIncrementLogStartOffset: raise the log start (a follower learning the
        leader's start; DeleteRecords, retention) if ``offset`` is larger; returns whether it
        moved. ``reason`` is Kafka's LogStartOffsetIncrementReason (3.0+; only logged, so it
        changes nothing). Past the high watermark is an OffsetOutOfRangeException (Kafka 1.0+, in
        Replica.maybeIncrementLogStartOffset until 2.3, in the log since 2.4), the log
        unchanged; a caller that may go past it bounds the offset itself. The records below the
        new start are dropped at once (Kafka keeps them until deleteOldSegments deletes their
        segment; kafkasim's segments, ``rolled_segment_bases``, stay until then too), and
        so are the producer snapshots below it (2.4: ProducerStateManager.truncateHead; 3.x:
        with their segments); the producers stay (onLogStartOffsetIncremented), except before
        2.4, where truncateHead evicts those whose last batch is below the new start
        (``producer_state_evicts_below_log_start``, KAFKA-7190)."""
        if offset > self.high_watermark:
            raise OffsetOutOfRangeException(
                f"Cannot increment the log start offset to {offset} of partition "
                f"{self.topic}-{self.partition} since it is larger than the high watermark "
                f"{self.high_watermark}")
        if offset <= self.log_start_offset:
            return False
        drop = offset - self.log_start_offset
        self.epochs = self.epochs[drop:]     # new arrays: see _truncate
        self.ids = self.ids[drop:]
        self.timestamps = self.timestamps[drop:]
        self.sizes = self.sizes[drop:]
        pb = self.producer_batches
        if pb.last is not None:
            self.producer_batches = ProducerBatches(
                _batches_in(pb, offset, self.log_end_offset - 1))
        self.log_start_offset = offset
        self.recovery_point = max(self.recovery_point, offset)
        self.durable_offset = max(self.durable_offset, offset)
        self.leader_epoch_cache.truncate_from_start(offset)
        states = self.producer_states
        states.delete_snapshots_before(offset)
        states.on_log_start_offset_incremented(offset)
        return True

    # -- producer state -----------------------------------------------------------------------
    def rebuild_producer_state(self, last_offset: int,
                               reload_from_clean_shutdown: bool = False) -> None:
        """UnifiedLog.rebuildProducerState up to ``last_offset``, for kafkasim's one segment
        (based at the log start): the snapshots outside the log's range dropped, the state
        loaded from the latest one left (truncateAndReload), the batches from there to
        ``last_offset`` replayed (unless the state was empty and up to there already), a
        snapshot at ``last_offset``. After a clean shutdown that left no snapshot (Kafka's
        upgrade path) nothing is replayed: empty snapshots at the log start and
        ``last_offset``."""
        states = self.producer_states
        start = self.log_start_offset
        if reload_from_clean_shutdown and states.latest_snapshot_offset() is None:
            for offset in (start, last_offset):
                states.update_map_end_offset(offset)
                states.take_snapshot()
            return
        was_empty = states.is_empty() and states.map_end_offset() >= last_offset
        states.truncate_and_reload(start, last_offset)
        if last_offset > states.map_end_offset() and not was_empty:
            begin = max(start, states.map_end_offset())
            states.update_map_end_offset(begin)
            states.take_snapshot()   # (the segment's base offset is one to snapshot at)
            update(states, _batches_in(self.producer_batches, begin, last_offset - 1))
        states.update_map_end_offset(last_offset)
        states.take_snapshot()

    def take_producer_snapshot(self) -> None:
        """UnifiedLog.close / takeProducerSnapshot: a producer snapshot at the log end offset
        (the state is up to it: Kafka moves the map end offset at every append)."""
        states = self.producer_states
        states.update_map_end_offset(self.log_end_offset)
        states.take_snapshot()

    def recover_segment(self, min_epoch: int = 0) -> None:
        """LogSegment.recover's leader epochs (LogLoader.recoverLog after an unclean shutdown;
        one segment per log, so every record is re-read): each batch whose leader epoch is at
        least ``min_epoch`` (0; 1 where Kafka skipped epoch 0, see the rule
        ``recovery_skips_leader_epoch_zero``) and newer than the epoch cache's latest is
        assigned to the cache at its first offset. Kafka's batches carry one epoch, so a run of
        records of one epoch stands for its batches."""
        epochs = self.epochs
        cache = self.leader_epoch_cache
        latest = self.latest_epoch()
        if not epochs or max(epochs) <= max(latest, min_epoch - 1):
            return   # the usual case: the cache already has every epoch (one C-level max)
        start = self.log_start_offset
        for i, epoch in enumerate(epochs):
            if epoch >= min_epoch and epoch > latest:
                cache.assign(epoch, start + i)
                latest = self.latest_epoch()

    # -- segments (kafkasim.core.log_segments) ------------------------------------------------
    def roll(self, expected_next_offset: int | None = None) -> int:
        """UnifiedLog.roll: a new active segment begins at the log end offset (or
        ``expected_next_offset`` if larger: kafkasim's log has no gaps, so only up to the LEO);
        returns its base offset. An active segment that is still empty is kept (LocalLog.roll
        recreates it in place). Then, as Kafka does, a producer snapshot at the new base
        (takeSnapshot, skipped when the state has not moved) and the flush of the older
        segments (the ``flush-log`` task, flushUptoOffsetExclusive(new base): the recovery
        point moves there)."""
        leo = self.log_end_offset
        if expected_next_offset is not None and expected_next_offset > leo:
            raise IllegalArgumentException(
                f"roll(expected_next_offset={expected_next_offset}) of {self.topic}-"
                f"{self.partition}: must be at most the log end offset {leo} (kafkasim's log "
                "has no gaps)")
        last = self.rolled_segment_bases[-1] if self.rolled_segment_bases else \
            self.segment_base_offset
        if last < leo:
            self.rolled_segment_bases.append(leo)
        self.take_producer_snapshot()
        self.flush(leo)
        return leo

    def number_of_segments(self) -> int:
        """UnifiedLog.numberOfSegments."""
        return 1 + len(self.rolled_segment_bases)

    def delete_old_segments(self, now: int | None = None) -> int:
        """UnifiedLog.deleteOldSegments: delete the oldest segments that lie below the log start
        or, with cleanup.policy delete, break retention.bytes or (at time ``now``) retention.ms,
        never past the high watermark; the log start moves to the first segment kept. Returns
        how many segments went (``kafkasim.core.log_segments``)."""
        return log_segments.delete_old_segments(self, now)

    def flush(self, offset: int | None = None) -> bool:
        """Kafka fsyncs up to ``offset`` (default: LEO): the recovery point only moves forward.
        Returns whether it moved: only then does Kafka reset the log's lastFlushTime
        (LocalLog.markFlushed, UnifiedLog.flush; Log.flush before 3.0)."""
        leo = self.log_end_offset
        target = leo if offset is None else min(offset, leo)
        if target > self.durable_offset:
            self.durable_offset = target
        if target > self.recovery_point:
            self.recovery_point = target
            return True
        return False

    def write_back(self, offset: int) -> None:
        """The operating system wrote the page cache back up to ``offset``: that data survives a
        power loss, but Kafka does not know it, so the recovery point stays where it is."""
        target = min(offset, self.log_end_offset)
        if target > self.durable_offset:
            self.durable_offset = target

    def unflushed_messages(self) -> int:
        """LocalLog.unflushedMessages: LEO - recovery point (what flush.messages counts)."""
        return self.log_end_offset - self.recovery_point
