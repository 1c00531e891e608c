"""KRaft snapshots of ``__cluster_metadata`` (KIP-630): the log's snapshot half, their writer, the
SnapshotGenerator / SnapshotEmitter that decide when a node writes one, and FetchSnapshot.

Kafka 3.9.0-rc3 and 4.3.0 (a9ce322153): raft/.../KafkaRaftClient.java (createSnapshot,
latestSnapshotId, handleFetchSnapshotRequest/Response, tryCompleteFetchRequest),
core/.../raft/KafkaMetadataLog.scala (createNewSnapshot, deleteBeforeSnapshot, maybeClean,
truncateToLatestSnapshot), raft/.../ReplicatedLog.java (validateOffsetAndEpoch),
metadata/.../image/publisher/SnapshotGenerator.java and SnapshotEmitter.java,
server/.../config/KRaftConfigs.java (the metadata.* keys). At 4.3.0 KafkaMetadataLog is
raft/.../internals/KafkaRaftLog.java (KafkaRaftLog.java:560 cleanSnapshots, the same rules) and
the defaults live in raft/.../MetadataLogConfig.java.

What is modelled:

- ``SnapshotGenerator`` (one per node, broker and controller: SharedServer installs it on the
  MetadataLoader of both) counts the bytes of committed batches it is published
  (``publish_log_delta``) and emits a snapshot of the committed image once
  ``metadata.log.max.record.bytes.between.snapshots`` (20 MiB) were replayed since the last one,
  or -- from 3.4 (KIP-876) -- ``metadata.log.max.snapshot.interval.ms`` (1 h; 0 turns it off)
  passed since the last one (or since the generator started) and a new delta arrives.
- ``SnapshotEmitter.maybe_emit``: ``KafkaRaftClient.create_snapshot(snapshot_id, time)`` (None
  when that snapshot exists: "Not generating ... because it already exists"), write, freeze.
  The snapshot id is the image's provenance: (last contained offset + 1, its epoch).
- The file ``<offset 20 digits>-<epoch 10 digits>.checkpoint`` in ``__cluster_metadata-0``
  (``kafkasim.core.snapshots`` names it; written as ``.checkpoint.part`` then renamed when
  frozen), on disk when the cluster has ``log_dirs``.
- ``MetadataLogSnapshots`` (KafkaMetadataLog's snapshot methods, a base of ``RaftLog``):
  ``create_new_snapshot`` (refused below the log start, above the high watermark, or at an id
  the log does not hold), ``latest_snapshot_id``, ``earliest_snapshot_id``,
  ``delete_before_snapshot`` (the log start offset advances to a snapshot's offset),
  ``maybe_clean`` (``metadata.max.retention.bytes`` / ``metadata.max.retention.ms``: while two or
  more snapshots exist and the log plus the snapshots break the retention, the oldest snapshot
  goes and the log start moves to the next one; KafkaRaftClient runs it every 60 s),
  ``truncate_to_latest_snapshot`` (a follower that downloaded a snapshot past its log).
- FetchSnapshot: a Fetch below the leader's log start offset (or, from 3.9, KAFKA-16532, any
  Fetch from offset 0 while the leader holds a snapshot) is answered with the latest
  SnapshotId; the follower fetches it with FetchSnapshot (``MAX_FETCH_SIZE_BYTES`` per answer,
  by position), freezes it and restarts its log at the snapshot's offset.

- A snapshot holds the image, not the log prefix (``snapshot_records``): the latest
  KRaftVersionRecord / VotersRecord, then MetadataImage.write -- a FeatureLevelRecord per
  feature (metadata.version first), a RegisterBrokerRecord per broker (fenced and
  in-controlled-shutdown as they are now), a TopicRecord then a PartitionRecord per
  partition (the current registration, epochs included), a ConfigRecord per set key. Its
  records carry no log offsets: a node loading it replays them all at the snapshot's last
  contained offset (QuorumController.handleLoadSnapshot), from an empty state, then the log
  after it; the state is the one replaying the whole log gives.

What is not (see docs/kraft.md, "Metadata snapshots"): the images kafkasim has no state for
(client quotas, producer-id blocks, ACLs, SCRAM, delegation tokens, controller
registrations, ZkMigrationStateRecord, replica directories) write nothing. Sizes are
estimates of the records' serialized sizes (``record_size_in_bytes``); the snapshot's
last-contained-log timestamp is the time it is written; expired snapshot files are deleted at
once (Kafka waits ``file.delete.delay.ms``); segments are not modelled (the log start moves
inside the one log).
"""

from __future__ import annotations

import dataclasses
import functools
import os
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from kafkasim.control.kraft.offset_control import (
    OffsetAndEpoch,
    filename_from_snapshot_id,
    published_end,
    published_entries,
)
from kafkasim.core import snapshots as Snapshots
from kafkasim.core.errors import IllegalArgumentException, IllegalStateException

#: KRaftConfigs.METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES (3.0+)
METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES = 20 * 1024 * 1024
#: KRaftConfigs.METADATA_SNAPSHOT_MAX_INTERVAL_MS_DEFAULT (3.4+, KIP-876)
METADATA_SNAPSHOT_MAX_INTERVAL_MS = 60 * 60 * 1000
#: KRaftConfigs.METADATA_MAX_RETENTION_BYTES_DEFAULT (3.4+, KAFKA-14393; -1 before)
METADATA_MAX_RETENTION_BYTES = 100 * 1024 * 1024
#: LogConfig.DEFAULT_RETENTION_MS: metadata.max.retention.ms
METADATA_MAX_RETENTION_MS = 7 * 24 * 60 * 60 * 1000
#: KafkaRaftClient: ``new RaftMetadataLogCleanerManager(logger, time, 60000, log::maybeClean)``
SNAPSHOT_CLEANER_INTERVAL_MS = 60_000
#: KafkaRaftClient.MAX_FETCH_SIZE_BYTES (= MAX_BATCH_SIZE_BYTES, 8 MiB): a FetchSnapshot answer
MAX_FETCH_SIZE_BYTES = 8 * 1024 * 1024
#: the metadata log's partition directory
METADATA_LOG_DIR = "__cluster_metadata-0"
#: Records.LOG_OVERHEAD + a record's header, counted once per record (an estimate)
RECORD_OVERHEAD_BYTES = 20

SNAPSHOT_NOT_FOUND = "SNAPSHOT_NOT_FOUND"
POSITION_OUT_OF_RANGE = "POSITION_OUT_OF_RANGE"


# --- sizes -----------------------------------------------------------------------------------
def _value_size(value) -> int:
    if value is None or isinstance(value, bool):
        return 1
    if isinstance(value, int):
        return 4 if -2**31 <= value < 2**31 else 8
    if isinstance(value, str):
        return 2 + len(value.encode())
    if isinstance(value, (tuple, list)):
        return 4 + sum(_value_size(v) for v in value)
    names = _field_names(type(value))
    if names is not None:
        return sum(_value_size(getattr(value, n)) for n in names)
    return 8


@functools.cache
def _field_names(cls: type) -> tuple[str, ...] | None:
    """A dataclass's field names (remembered per class), None for any other class."""
    if not dataclasses.is_dataclass(cls):
        return None
    return tuple(f.name for f in dataclasses.fields(cls))


def record_size_in_bytes(record) -> int:
    """An estimate of a metadata record's serialized size: a record header plus each field's
    (4 or 8 bytes a number, 2 + length a string, 4 + items an array)."""
    return RECORD_OVERHEAD_BYTES + _value_size(record)


def _is_entry(value) -> bool:
    """A log entry (offset, epoch, record), not a bare record."""
    return isinstance(value, tuple) and len(value) == 3 and isinstance(value[0], int)


def entry_size_in_bytes(entry) -> int:
    """The estimated bytes of a log entry (offset, epoch, record), or of a bare record."""
    if _is_entry(entry):
        return record_size_in_bytes(entry[2])
    return record_size_in_bytes(entry)


def entries_size_in_bytes(entries) -> int:
    """The estimated bytes of log entries (offset, epoch, record)."""
    return sum(entry_size_in_bytes(e) for e in entries)


# --- ids and content ---------------------------------------------------------------------------
class MetadataProvenance(NamedTuple):
    """org.apache.kafka.image.MetadataProvenance: where an image was read up to."""

    last_contained_offset: int
    last_contained_epoch: int
    last_contained_log_time_ms: int

    def snapshot_id(self) -> OffsetAndEpoch:
        """``snapshotId``: (last contained offset + 1, its epoch)."""
        return OffsetAndEpoch(self.last_contained_offset + 1, self.last_contained_epoch)

    def snapshot_name(self) -> str:
        """``snapshotName``: "snapshot <offset>-<epoch>"."""
        return f"snapshot {filename_from_snapshot_id(self.snapshot_id())}"


@dataclass(frozen=True, slots=True)
class RawSnapshot:
    """A frozen snapshot (FileRawSnapshotReader): its id, the records it holds (``entries``:
    bare records, no offsets -- the image's, see ``snapshot_records``), the
    SnapshotHeaderRecord's last contained log timestamp and its size in bytes."""

    snapshot_id: OffsetAndEpoch
    entries: tuple
    last_contained_log_timestamp: int
    size_in_bytes: int

    @property
    def records(self) -> tuple:
        """The snapshot's records (RecordsSnapshotReader), in the order they were written."""
        return self.entries


class MetadataLogConfig(NamedTuple):
    """kafka.raft.MetadataLogConfig: the retention the cleaner applies."""

    retention_max_bytes: int = METADATA_MAX_RETENTION_BYTES
    retention_millis: int = METADATA_MAX_RETENTION_MS


class SnapshotWriter:
    """RecordsSnapshotWriter over a RawSnapshotWriter (NotifyingRawSnapshotWriter): ``append``
    the snapshot's entries, ``freeze`` makes it immutable and known to the log (and writes its
    file); an unfrozen writer that is closed leaves nothing."""

    __slots__ = ("log", "snapshot_id", "last_contained_log_timestamp", "entries", "size",
                 "frozen", "on_frozen")

    def __init__(self, log, snapshot_id: OffsetAndEpoch, last_contained_log_timestamp: int,
                 on_frozen=None) -> None:
        self.log = log
        self.snapshot_id = OffsetAndEpoch(*snapshot_id)
        self.last_contained_log_timestamp = last_contained_log_timestamp
        self.entries: list = []
        self.size = 0
        self.frozen = False
        self.on_frozen = on_frozen

    @property
    def last_contained_log_offset(self) -> int:
        return self.snapshot_id.offset - 1

    def size_in_bytes(self) -> int:
        return self.size

    def is_frozen(self) -> bool:
        return self.frozen

    def append(self, entries) -> None:
        """``append``: more records of the snapshot (after freeze: an IllegalStateException).
        A log entry (offset, epoch, record) given here is taken as its record: a snapshot's
        records carry no log offsets."""
        if self.frozen:
            raise IllegalStateException(
                f"Append is not supported. Snapshot is already frozen: id = {self.snapshot_id}")
        entries = [e[2] if _is_entry(e) else e for e in entries]
        self.entries.extend(entries)
        self.size += entries_size_in_bytes(entries)

    def freeze(self) -> int:
        """``freeze``: the snapshot is complete; the log keeps it (onSnapshotFrozen). Returns its
        size in bytes."""
        if self.frozen:
            raise IllegalStateException(f"Freeze is not supported. Snapshot is already "
                                        f"frozen: id = {self.snapshot_id}")
        self.frozen = True
        raw = RawSnapshot(self.snapshot_id, tuple(self.entries),
                          self.last_contained_log_timestamp, self.size)
        self.log.on_snapshot_frozen(raw)
        if self.on_frozen is not None:
            self.on_frozen(self.snapshot_id)
        return self.size

    def close(self) -> None:
        """``close``: an unfrozen snapshot is dropped."""
        self.entries = []

    def __enter__(self) -> SnapshotWriter:
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# --- KafkaMetadataLog's snapshot half ----------------------------------------------------------
class MetadataLogSnapshots:
    """KafkaMetadataLog's snapshot methods, mixed into ``RaftLog``: it holds ``start_offset``,
    ``high_watermark``, ``snapshots`` (id -> RawSnapshot), ``config`` (MetadataLogConfig) and
    ``log_dir`` (a ``kafkasim.core.checkpoint.LogDir`` or None) besides its entries."""

    __slots__ = ()

    # -- reading --------------------------------------------------------------------------------
    def latest_snapshot_id(self) -> OffsetAndEpoch | None:
        """``latestSnapshotId``: the greatest snapshot id, None (Optional.empty) without one."""
        return max(self.snapshots) if self.snapshots else None

    def earliest_snapshot_id(self) -> OffsetAndEpoch | None:
        """``earliestSnapshotId``."""
        return min(self.snapshots) if self.snapshots else None

    def read_snapshot(self, snapshot_id) -> RawSnapshot | None:
        """``readSnapshot``: the frozen snapshot of that id, or None."""
        return self.snapshots.get(OffsetAndEpoch(*snapshot_id))

    def latest_snapshot(self) -> RawSnapshot | None:
        """``latestSnapshot``."""
        latest = self.latest_snapshot_id()
        return None if latest is None else self.snapshots[latest]

    def snapshot_count(self) -> int:
        return len(self.snapshots)

    def size_in_bytes(self) -> int:
        """``log.size``: the estimated bytes of the entries from the log start."""
        return entries_size_in_bytes(self.entries)

    # -- writing --------------------------------------------------------------------------------
    def create_new_snapshot(self, snapshot_id) -> SnapshotWriter | None:
        """``createNewSnapshot``: a writer for a snapshot ending at ``snapshot_id`` -- None below
        the log start offset (logged, Optional.empty), an IllegalArgumentException above the
        high watermark or for an id the log does not hold (validateOffsetAndEpoch not VALID)."""
        snapshot_id = OffsetAndEpoch(*snapshot_id)
        if snapshot_id.offset < self.start_offset:
            return None
        if snapshot_id.offset > self.high_watermark:
            raise IllegalArgumentException(
                f"Cannot create a snapshot with an id ({snapshot_id}) greater than the "
                f"high-watermark ({self.high_watermark})")
        kind, valid = self.validate_offset_and_epoch(snapshot_id.offset, snapshot_id.epoch)
        if kind != "VALID":
            raise IllegalArgumentException(f"Snapshot id ({snapshot_id}) is not valid according "
                                           f"to the log: {kind} {tuple(valid)}")
        return self.create_new_snapshot_unchecked(snapshot_id)

    def create_new_snapshot_unchecked(self, snapshot_id, last_contained_log_timestamp: int = 0,
                                      on_frozen=None) -> SnapshotWriter | None:
        """``createNewSnapshotUnchecked``: None when the snapshot exists already."""
        snapshot_id = OffsetAndEpoch(*snapshot_id)
        if snapshot_id in self.snapshots:
            return None
        return SnapshotWriter(self, snapshot_id, last_contained_log_timestamp, on_frozen)

    def on_snapshot_frozen(self, snapshot: RawSnapshot) -> None:
        """``onSnapshotFrozen``: the log knows the snapshot (and its file is written)."""
        self.snapshots = {**self.snapshots, snapshot.snapshot_id: snapshot}
        write_snapshot_file(self.log_dir, snapshot)

    # -- deleting -------------------------------------------------------------------------------
    def delete_before_snapshot(self, snapshot_id) -> bool:
        """``deleteBeforeSnapshot``: advance the log start offset to a snapshot the log holds
        (past the log start, at most the latest) and forget the older snapshots."""
        snapshot_id = OffsetAndEpoch(*snapshot_id)
        latest = self.latest_snapshot_id()
        if latest is None or snapshot_id not in self.snapshots or \
                not self.start_offset < snapshot_id.offset <= latest.offset:
            return False
        self.maybe_increment_log_start_offset(snapshot_id.offset)
        self._remove_snapshots(self._forget_snapshots_before(snapshot_id))
        return True

    def maybe_clean(self, now: int) -> bool:
        """``maybeClean``: retention by size, then by time."""
        cleaned = self._clean_snapshots_retention_size()
        return self._clean_snapshots_retention_ms(now) or cleaned

    def _clean_snapshots(self, should_clean) -> bool:
        """cleanSnapshots: for each snapshot but the latest, oldest first, while ``should_clean``
        says so, delete before the next one."""
        if len(self.snapshots) < 2:
            return False
        ids = sorted(self.snapshots)
        cleaned = False
        for snapshot_id, next_id in zip(ids, ids[1:], strict=False):
            if not should_clean(snapshot_id) or not self.delete_before_snapshot(next_id):
                return cleaned
            cleaned = True
        return cleaned

    def _clean_snapshots_retention_ms(self, now: int) -> bool:
        retention = self.config.retention_millis
        if retention < 0:
            return False
        return self._clean_snapshots(lambda sid: now - self.snapshots[sid]
                                     .last_contained_log_timestamp > retention)

    def _clean_snapshots_retention_size(self) -> bool:
        retention = self.config.retention_max_bytes
        if retention < 0:
            return False
        total = [sum(s.size_in_bytes for s in self.snapshots.values())]

        def should_clean(snapshot_id) -> bool:
            if self.size_in_bytes() + total[0] > retention:
                total[0] -= self.snapshots[snapshot_id].size_in_bytes
                return True
            return False
        return self._clean_snapshots(should_clean)

    def truncate_to_latest_snapshot(self) -> bool:
        """``truncateToLatestSnapshot``: a latest snapshot of a greater epoch, or of the same
        epoch past the log end, restarts the log at its offset; the older snapshots go."""
        latest = self.latest_snapshot_id()
        last_epoch = self.epochs[-1][0] if self.epochs else 0
        if latest is None or not (latest.epoch > last_epoch or (
                latest.epoch == last_epoch and latest.offset > self.end_offset)):
            return False
        self.truncate_fully_and_start_at(latest.offset)
        self._remove_snapshots(self._forget_snapshots_before(latest))
        return True

    def _forget_snapshots_before(self, snapshot_id: OffsetAndEpoch) -> list[RawSnapshot]:
        expired = [s for sid, s in sorted(self.snapshots.items()) if sid < snapshot_id]
        if expired:
            self.snapshots = {k: v for k, v in self.snapshots.items() if k >= snapshot_id}
        return expired

    def _remove_snapshots(self, expired: list[RawSnapshot]) -> None:
        """removeSnapshots: rename each to ``.checkpoint.deleted`` and delete it."""
        for snapshot in expired:
            delete_snapshot_file(self.log_dir, snapshot.snapshot_id)


# --- files -----------------------------------------------------------------------------------
def snapshot_file_name(snapshot_id) -> str:
    """``<offset>-<epoch>.checkpoint`` in ``__cluster_metadata-0``."""
    return f"{METADATA_LOG_DIR}/{filename_from_snapshot_id(OffsetAndEpoch(*snapshot_id))}" \
        f"{Snapshots.SUFFIX}"


def snapshot_file_text(snapshot: RawSnapshot) -> str:
    """The file's content as kafkasim writes it: the SnapshotHeaderRecord, one line per record
    (in the order written), the SnapshotFooterRecord."""
    lines = [f"SnapshotHeaderRecord version=0 "
             f"lastContainedLogTimestamp={snapshot.last_contained_log_timestamp}"]
    lines.extend(repr(record) for record in snapshot.entries)
    lines.append("SnapshotFooterRecord version=0")
    return "\n".join(lines) + "\n"


def write_snapshot_file(log_dir, snapshot: RawSnapshot) -> None:
    """FileRawSnapshotWriter: ``.checkpoint.part`` (Snapshots.createTempFile), then renamed to
    ``.checkpoint`` when frozen; in memory when the log dir has no root."""
    if log_dir is None:
        return
    text = snapshot_file_text(snapshot)
    if log_dir.root is None:
        log_dir.files[snapshot_file_name(snapshot.snapshot_id)] = text
        return
    directory = Path(log_dir.root) / METADATA_LOG_DIR
    part = Snapshots.create_temp_file(directory, snapshot.snapshot_id)
    with open(part, "w", encoding="utf-8") as f:
        f.write(text)
        f.flush()
        os.fsync(f.fileno())
    os.replace(part, Snapshots.snapshot_path(directory, snapshot.snapshot_id))


def delete_snapshot_file(log_dir, snapshot_id) -> None:
    """``markForDelete`` then ``deleteIfExists``."""
    if log_dir is None:
        return
    if log_dir.root is None:
        log_dir.files.pop(snapshot_file_name(snapshot_id), None)
        return
    directory = Path(log_dir.root) / METADATA_LOG_DIR
    if Snapshots.snapshot_path(directory, snapshot_id).exists():
        Snapshots.mark_for_delete(directory, snapshot_id)
    Snapshots.delete_if_exists(directory, snapshot_id)


def snapshot_files(log_dir) -> list[str]:
    """The snapshot files of the metadata log directory, by name."""
    if log_dir is None:
        return []
    if log_dir.root is None:
        return sorted(k.split("/", 1)[1] for k in log_dir.files
                      if k.startswith(METADATA_LOG_DIR + "/") and k.endswith(Snapshots.SUFFIX))
    directory = Path(log_dir.root) / METADATA_LOG_DIR
    if not directory.is_dir():
        return []
    return sorted(p.name for p in directory.iterdir() if Snapshots.parse(p) is not None)


# --- the image a snapshot holds ------------------------------------------------------------------
def snapshot_records(entries, options=None) -> list:
    """The records of a snapshot of the state ``entries`` (offset, epoch, record; the log from
    offset 0, or a snapshot's records then the log after it) build: RecordsSnapshotWriter's
    control records after the SnapshotHeaderRecord -- the latest KRaftVersionRecord and
    VotersRecord, when the log has them (KIP-853, RecordsSnapshotWriter.Builder @3.9.0-rc3)
    -- then ``MetadataImage.write`` of the replayed image (SnapshotEmitter.maybeEmit:
    ``image.write(writer, options)``): features, brokers, topics with their partitions,
    configs. Log-only records (NoOpRecord, the transaction markers, LeaderChangeMessage),
    the records of aborted metadata transactions (``published_entries``: the image is what a
    metadata loader published) and every record a later one overrides leave no trace, so the
    snapshot is the size of the image, not of the log."""
    from kafkasim.control.kraft.image import MetadataImage
    from kafkasim.control.kraft.voter_set import KRaftVersionRecord, VotersRecord

    image = MetadataImage()
    control: dict = {}
    for offset, _epoch, record in published_entries(entries):
        kind = type(record)
        if kind is KRaftVersionRecord or kind is VotersRecord:
            control[kind.__name__] = record
        elif dataclasses.is_dataclass(record):
            image.replay(record, offset)
    head = [control[k] for k in ("KRaftVersionRecord", "VotersRecord") if k in control]
    return head + image.write(options)


# --- SnapshotGenerator / SnapshotEmitter ---------------------------------------------------------
class SnapshotEmitter:
    """org.apache.kafka.image.publisher.SnapshotEmitter: writes the image of ``provenance``
    through the node's Raft client; its metrics are the latest snapshot's time and bytes."""

    __slots__ = ("node_id", "latest_snapshot_generated_time_ms",
                 "latest_snapshot_generated_bytes")

    def __init__(self, node_id: int) -> None:
        self.node_id = node_id
        self.latest_snapshot_generated_time_ms = -1
        self.latest_snapshot_generated_bytes = -1

    def maybe_emit(self, raft, provenance: MetadataProvenance, now: int) -> RawSnapshot | None:
        """``maybeEmit``: None when that snapshot exists already."""
        writer = raft.create_snapshot(provenance.snapshot_id(),
                                      provenance.last_contained_log_time_ms)
        if writer is None:
            return None
        try:
            writer.append(snapshot_records(
                raft.log.entries_between(0, provenance.last_contained_offset + 1)))
            size = writer.freeze()
        finally:
            writer.close()
        self.latest_snapshot_generated_time_ms = now
        self.latest_snapshot_generated_bytes = size
        return raft.log.read_snapshot(provenance.snapshot_id())


class SnapshotGenerator:
    """org.apache.kafka.image.publisher.SnapshotGenerator: a MetadataPublisher that emits a
    snapshot once enough bytes were replayed or enough time passed (module docstring).
    ``max_time_since_last_snapshot_ms`` 0: no time-based snapshots (so before 3.4)."""

    __slots__ = ("node_id", "emitter", "max_bytes_since_last_snapshot",
                 "max_time_since_last_snapshot_ms", "bytes_since_last_snapshot",
                 "last_snapshot_time_ms", "disabled_reason")

    def __init__(self, node_id: int, emitter: SnapshotEmitter, now: int, *,
                 max_bytes_since_last_snapshot: int = METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES,
                 max_time_since_last_snapshot_ms: int = METADATA_SNAPSHOT_MAX_INTERVAL_MS,
                 disabled_reason: str | None = None) -> None:
        if max_bytes_since_last_snapshot < 1:
            raise ValueError(f"metadata.log.max.record.bytes.between.snapshots must be >= 1, "
                             f"got {max_bytes_since_last_snapshot}")
        if max_time_since_last_snapshot_ms < 0:
            raise ValueError(f"metadata.log.max.snapshot.interval.ms must be >= 0, got "
                             f"{max_time_since_last_snapshot_ms}")
        self.node_id = node_id
        self.emitter = emitter
        self.max_bytes_since_last_snapshot = max_bytes_since_last_snapshot
        self.max_time_since_last_snapshot_ms = max_time_since_last_snapshot_ms
        self.disabled_reason = disabled_reason
        self.reset_snapshot_counters(now)

    def name(self) -> str:
        return "SnapshotGenerator"

    def reset_snapshot_counters(self, now: int) -> None:
        self.bytes_since_last_snapshot = 0
        self.last_snapshot_time_ms = now

    def publish_snapshot(self, now: int) -> None:
        """``publishSnapshot``: a snapshot was loaded; counting starts again."""
        self.reset_snapshot_counters(now)

    def publish_log_delta(self, raft, num_bytes: int, provenance: MetadataProvenance,
                          now: int) -> RawSnapshot | None:
        """``publishLogDelta``: count the delta's bytes; emit when a trigger is met ("we have
        replayed at least N bytes", else "we have waited at least N minute(s)"). Returns the
        snapshot written, or None."""
        self.bytes_since_last_snapshot += num_bytes
        due = self.bytes_since_last_snapshot >= self.max_bytes_since_last_snapshot or (
            self.max_time_since_last_snapshot_ms != 0
            and now - self.last_snapshot_time_ms >= self.max_time_since_last_snapshot_ms)
        if not due:
            return None
        return self.schedule_emit(raft, provenance, now)

    def schedule_emit(self, raft, provenance: MetadataProvenance, now: int
                      ) -> RawSnapshot | None:
        """``scheduleEmit``: reset the counters and emit (Kafka's event queue runs it next;
        here at once, in the same millisecond), unless snapshots are disabled."""
        self.reset_snapshot_counters(now)
        if self.disabled_reason is not None or provenance is None:
            return None
        return self.emitter.maybe_emit(raft, provenance, now)


class MetadataLoader:
    """What a node's org.apache.kafka.image.loader.MetadataLoader does for snapshots: a new
    listener (a process that started) with a snapshot in its log loads the latest one
    (KafkaRaftClient.updateListenersProgress: fireHandleSnapshot, a SnapshotManifest) before
    the log after it, and so does a listener whose next offset fell below the log start (a
    snapshot fetched from the leader); each committed delta after that is published to the
    node's ``SnapshotGenerator`` (LogDeltaManifest.numBytes). The records themselves are
    replayed by the node (QuorumController / the broker's image) from ``RaftLog
    .entries_between``, which reads below the log start from the snapshot there."""

    __slots__ = ("generator", "next_offset")

    def __init__(self, generator: SnapshotGenerator) -> None:
        self.generator = generator
        self.next_offset = -1        # ListenerContext.STARTING_NEXT_OFFSET

    @classmethod
    def for_node(cls, node_id: int, config: dict, now: int) -> MetadataLoader:
        """The loader of a node (re)started at ``now``, its generator configured from the
        node's ``metadata.log.max.*`` keys (no interval key: no time-based snapshots)."""
        generator = SnapshotGenerator(
            node_id, SnapshotEmitter(node_id), now,
            max_bytes_since_last_snapshot=int(config.get(
                "metadata.log.max.record.bytes.between.snapshots",
                METADATA_SNAPSHOT_MAX_NEW_RECORD_BYTES)),
            max_time_since_last_snapshot_ms=int(config.get(
                "metadata.log.max.snapshot.interval.ms", 0)))
        return cls(generator)

    def handle_commit(self, ctx, raft, high_watermark: int) -> RawSnapshot | None:
        """The node learnt ``high_watermark``: maybe load the latest snapshot, then publish the
        committed delta -- up to an open metadata transaction's Begin, which waits for its End
        (MetadataBatchLoader.maybeFlushBatches). Returns the snapshot the generator wrote, if
        any."""
        log, now = raft.log, ctx.now
        if self.next_offset < 0 or self.next_offset < log.start_offset:
            latest = log.latest_snapshot_id()
            if latest is not None and self.next_offset < high_watermark:
                ctx.trace("raft_snapshot", _event("loaded", latest.offset, latest.epoch, -1))
                self.generator.publish_snapshot(now)
                self.next_offset = latest.offset
            else:
                self.next_offset = max(self.next_offset, 0)
        if high_watermark <= self.next_offset:
            return None
        end = published_end(log.entries_between(self.next_offset, high_watermark),
                            high_watermark)
        if end <= self.next_offset:
            return None
        num_bytes = entries_size_in_bytes(log.entries_between(self.next_offset, end))
        self.next_offset = end
        snapshot = self.generator.publish_log_delta(raft, num_bytes,
                                                    provenance_at(log, end, now), now)
        if snapshot is not None:
            ctx.trace("raft_snapshot", _event("generated", snapshot.snapshot_id.offset,
                                              snapshot.snapshot_id.epoch, -1))
        return snapshot


def configure_metadata_log(log, config: dict, log_dir) -> None:
    """The node's metadata log: its retention (MetadataLogConfig from
    ``metadata.max.retention.bytes`` / ``.ms``) and its directory (snapshot files)."""
    log.config = MetadataLogConfig(
        int(config.get("metadata.max.retention.bytes", METADATA_MAX_RETENTION_BYTES)),
        int(config.get("metadata.max.retention.ms", METADATA_MAX_RETENTION_MS)))
    log.log_dir = log_dir


def provenance_at(log, high_watermark: int, now: int) -> MetadataProvenance | None:
    """The provenance of the image committed below ``high_watermark``: its last entry's
    offset and epoch (None before anything is committed)."""
    if high_watermark <= 0:
        return None
    entry = log.entry_at(high_watermark - 1)
    if entry is None:
        return None
    return MetadataProvenance(entry[0], entry[1], now)


# --- KafkaRaftClient's snapshot half -------------------------------------------------------------
class RaftSnapshotHandler:
    """KafkaRaftClient's snapshot code: ``create_snapshot`` / ``latest_snapshot_id`` (the
    client's own methods delegate here), the leader's answer to a Fetch below its log start
    (``validate_fetch``), FetchSnapshot on both sides, and the metadata log cleaner
    (RaftMetadataLogCleanerManager: ``maybe_clean`` every 60 s, checked when the client
    polls). ``fetch_snapshot_for_empty_log``: 3.9+ (KAFKA-16532)."""

    __slots__ = ("client", "fetch_snapshot_for_empty_log", "next_clean_ms")

    def __init__(self, client, fetch_snapshot_for_empty_log: bool = False) -> None:
        self.client = client
        self.fetch_snapshot_for_empty_log = fetch_snapshot_for_empty_log
        self.next_clean_ms = SNAPSHOT_CLEANER_INTERVAL_MS

    # -- KafkaRaftClient.createSnapshot ---------------------------------------------------------
    def create_snapshot(self, snapshot_id, last_contained_log_timestamp: int
                        ) -> SnapshotWriter | None:
        """``createSnapshot``: a writer (None when the log refuses: below its start, or the
        snapshot exists); an IllegalStateException before the client started."""
        if self.client.state is None:
            raise IllegalStateException(
                "Cannot create snapshot before the replica has been initialized")
        writer = self.client.log.create_new_snapshot(snapshot_id)
        if writer is not None:
            writer.last_contained_log_timestamp = last_contained_log_timestamp
        return writer

    def maybe_clean(self, now: int) -> None:
        """RaftMetadataLogCleanerManager.maybeFireDeadline: ``log.maybeClean`` once 60 s have
        passed since the last run (nothing to clean below two snapshots)."""
        if now < self.next_clean_ms:
            return
        self.next_clean_ms = now + SNAPSHOT_CLEANER_INTERVAL_MS
        log = self.client.log
        if len(log.snapshots) >= 2 and log.maybe_clean(now):
            self.client._ctx.trace("raft_snapshot", _event(
                "log start", log.start_offset, -1, log.start_offset))

    # -- the leader: Fetch and FetchSnapshot ----------------------------------------------------
    def validate_fetch(self, fetch_offset: int, last_fetched_epoch: int):
        """tryCompleteFetchRequest's validation: ("SNAPSHOT", latest id) for a fetch from offset
        0 while the leader has a snapshot other than the bootstrap 0-0 one (3.9+), else the
        log's validateOffsetAndEpoch."""
        log = self.client.log
        latest = log.latest_snapshot_id()
        if self.fetch_snapshot_for_empty_log and fetch_offset == 0 and latest is not None \
                and tuple(latest) != tuple(Snapshots.BOOTSTRAP_SNAPSHOT_ID):
            return "SNAPSHOT", latest
        return log.validate_offset_and_epoch(fetch_offset, last_fetched_epoch)

    def handle_fetch_snapshot_request(self, ctx, src, req):
        """``handleFetchSnapshotRequest``: INVALID_REQUEST for a negative replica id, the
        leader-only errors, SNAPSHOT_NOT_FOUND, POSITION_OUT_OF_RANGE; else the snapshot's
        entries from ``position``, at most ``max_bytes`` (at least one entry). The fetch
        counts for check quorum (updateCheckQuorumForFollowingVoter)."""
        from kafkasim.control.kraft import raft_messages as M
        from kafkasim.control.kraft.voter_set import ReplicaKey

        client = self.client
        st = client.state

        def answer(error, partition_error=M.NONE, **kw):
            return M.FetchSnapshotResponse(req.correlation_id, error, partition_error,
                                           st.leader_id, st.epoch, **kw)
        if req.replica_id < 0 or req.max_bytes < 0:
            return answer(M.INVALID_REQUEST)
        error = client._handler._validate_leader_only_request(req.current_leader_epoch)
        if error:
            return answer(M.NONE, error)
        snapshot_id = OffsetAndEpoch(req.snapshot_end_offset, req.snapshot_epoch)
        snapshot = client.log.read_snapshot(snapshot_id)
        if snapshot is None or tuple(snapshot_id) == tuple(Snapshots.BOOTSTRAP_SNAPSHOT_ID):
            return answer(M.NONE, SNAPSHOT_NOT_FOUND)
        if req.position < 0 or req.position >= max(snapshot.size_in_bytes, 1):
            return answer(M.NONE, POSITION_OUT_OF_RANGE)
        chunk = _slice(snapshot.entries, req.position, max(req.max_bytes, 1))
        st.update_check_quorum_for_following_voter(
            ReplicaKey(req.replica_id, req.replica_directory_id), ctx.now)
        return answer(M.NONE, M.NONE, snapshot_end_offset=snapshot_id.offset,
                      snapshot_epoch=snapshot_id.epoch, size=snapshot.size_in_bytes,
                      position=req.position, records=chunk,
                      last_contained_log_timestamp=snapshot.last_contained_log_timestamp)

    # -- the follower ---------------------------------------------------------------------------
    def on_fetch_response_snapshot(self, ctx, st, resp) -> None:
        """handleFetchResponse, "the leader is asking us to fetch a snapshot": start a writer
        for that id (not validated against the local log), unless the snapshot is already
        there."""
        snapshot_id = OffsetAndEpoch(resp.snapshot_end_offset, resp.snapshot_epoch)
        if resp.snapshot_epoch < 0 or resp.snapshot_end_offset < 0:
            return          # logged as an error in Kafka; nothing changes
        st.set_fetching_snapshot(self.client.log.create_new_snapshot_unchecked(snapshot_id))
        ctx.trace("raft_snapshot", _event("fetching", snapshot_id.offset, snapshot_id.epoch,
                                          st.leader_id))

    def build_fetch_snapshot_request(self, corr: int, st):
        """``buildFetchSnapshotRequest``: the next bytes of the snapshot being fetched."""
        from kafkasim.control.kraft import raft_messages as M

        writer = st.fetching_snapshot
        client = self.client
        return M.FetchSnapshotRequest(corr, client.node_id, st.epoch, writer.snapshot_id.offset,
                                      writer.snapshot_id.epoch, writer.size_in_bytes(),
                                      MAX_FETCH_SIZE_BYTES,
                                      replica_directory_id=client.reconfig.directory_id)

    def handle_fetch_snapshot_response(self, ctx, src, resp) -> bool:
        """``handleFetchSnapshotResponse``: append the bytes; the last ones freeze the snapshot,
        truncate the log to it (truncateToLatestSnapshot) and move the high watermark there.
        SNAPSHOT_NOT_FOUND (the leader deleted it) starts over with a Fetch."""
        from kafkasim.control.kraft import raft_messages as M
        from kafkasim.control.kraft.epoch_states import FollowerState

        client = self.client
        if resp.error != M.NONE:      # handleTopLevelError
            return False
        handled = client._handler._maybe_handle_common_response(
            ctx, resp.partition_error, resp.leader_id, resp.leader_epoch)
        if handled is not None:
            return handled
        st = client.state
        if not isinstance(st, FollowerState):
            raise IllegalStateException(f"Expected to be Follower, but current state is {st}")
        if resp.partition_error == SNAPSHOT_NOT_FOUND or resp.snapshot_end_offset < 0 or \
                resp.snapshot_epoch < 0:
            st.set_fetching_snapshot(None)
            st.reset_fetch_timeout_for_successful_fetch(ctx.now)
            return True
        if resp.partition_error != M.NONE:
            return False
        self._append_fetched(ctx, st, resp)
        st.reset_fetch_timeout_for_successful_fetch(ctx.now)
        return True

    def _append_fetched(self, ctx, st, resp) -> None:
        snapshot_id = OffsetAndEpoch(resp.snapshot_end_offset, resp.snapshot_epoch)
        writer = st.fetching_snapshot
        if writer is None:
            raise IllegalStateException(f"Received unexpected fetch snapshot response: {resp}")
        if writer.snapshot_id != snapshot_id:
            raise IllegalStateException(f"Received fetch snapshot response with an invalid id. "
                                        f"Expected {writer.snapshot_id}; Received {snapshot_id}")
        if writer.size_in_bytes() != resp.position:
            raise IllegalStateException(
                f"Received fetch snapshot response with an invalid position. Expected "
                f"{writer.size_in_bytes()}; Received {resp.position}")
        writer.last_contained_log_timestamp = resp.last_contained_log_timestamp
        writer.append(resp.records)
        if writer.size_in_bytes() < resp.size:
            return
        writer.freeze()
        st.fetching_snapshot = None
        log = self.client.log
        if not log.truncate_to_latest_snapshot():
            raise IllegalStateException(
                f"Full log truncation expected but didn't happen. Snapshot of {snapshot_id}, "
                f"log end offset {log.end_offset}, last fetched {log.last_fetched_epoch}")
        ctx.trace("raft_snapshot", _event("fetched", snapshot_id.offset, snapshot_id.epoch,
                                          st.leader_id))
        self.client.reconfig.update_voters(ctx)
        log.high_watermark = max(log.high_watermark, snapshot_id.offset)
        if st.update_high_watermark(log.high_watermark):      # updateFollowerHighWatermark
            self.client._on_high_watermark(ctx, log.high_watermark)


def _slice(entries: tuple, position: int, max_bytes: int) -> tuple:
    """The entries whose bytes start at ``position`` or later, up to ``max_bytes`` (at least
    one): UnalignedRecords of ``snapshot.slice(position, maxBytes)``, cut at entries."""
    out, at, taken = [], 0, 0
    for entry in entries:
        size = entry_size_in_bytes(entry)
        if at >= position:
            if out and taken + size > max_bytes:
                break
            out.append(entry)
            taken += size
        at += size
    return tuple(out)


def _event(action: str, offset: int, epoch: int, peer: int):
    from kafkasim.core import events as ev

    return ev.RaftSnapshot(action, offset, epoch, peer)
