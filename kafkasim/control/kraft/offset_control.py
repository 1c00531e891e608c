"""Which metadata offsets a controller has written, committed and may revert to:
``org.apache.kafka.controller.OffsetControlManager`` (4.3.0, a9ce322153; KIP-868 metadata
transactions since 3.6), with the part of ``org.apache.kafka.timeline.SnapshotRegistry`` it
drives (the list of in-memory snapshot epochs) and the four ``QuorumControllerMetrics`` values it
sets.

The manager tracks the last committed offset and epoch, the last *stable* offset (the last
committed offset outside an open metadata transaction: what a controller that loses leadership
reverts to), the start of the open transaction, and -- while the controller is active -- the
next offset it will write. The in-memory snapshots it keeps are the offsets the controller's
state can be reverted to: one at the last stable offset, plus one after each batch the active
controller scheduled.

kafkasim's ``QuorumController`` keeps the same numbers itself (``last_committed``, the Raft
client's ``next_write_offset``, ``transaction_start_offset``); this class is Kafka's bookkeeping
for one controller driven alone (OffsetControlManagerTest). Time is the simulated clock in ms
(``time``).

``metadata_transactions`` is how every reader of the metadata log treats KIP-868's markers
(one copy for all of them): the controller replays an open transaction's records and reverts
them at its Abort (OffsetControlManager.replay: ``revertToSnapshot(transactionStartOffset -
1)``); a metadata loader (MetadataBatchLoader, the brokers' images, the snapshot writer)
publishes them only once the End is read (``published_entries``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafkasim.control.kraft.records import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    EndTransactionRecord,
)


class OffsetAndEpoch(NamedTuple):
    """``org.apache.kafka.server.common.OffsetAndEpoch``: a snapshot id."""

    offset: int
    epoch: int


def filename_from_snapshot_id(snapshot_id: OffsetAndEpoch) -> str:
    """``Snapshots.filenameFromSnapshotId``: 20-digit offset, dash, 10-digit epoch."""
    return f"{snapshot_id.offset:020d}-{snapshot_id.epoch:010d}"


class Batch(NamedTuple):
    """What ``handleCommitBatch`` reads of a committed ``Batch``."""

    last_offset: int
    epoch: int
    append_timestamp: int


class SnapshotRegistry:
    """The epochs of ``org.apache.kafka.timeline.SnapshotRegistry``'s in-memory snapshots,
    oldest first (the timeline data structures themselves are not modelled). ``operations``
    records what TrackingSnapshotRegistry records: ``snapshot[e]`` when a snapshot is created,
    ``revert[e]``, ``reset``."""

    def __init__(self) -> None:
        self._epochs: list[int] = []
        self.operations: list[str] = []

    def epochs_list(self) -> list[int]:
        return list(self._epochs)

    def has_snapshot(self, epoch: int) -> bool:
        return epoch in self._epochs

    def latest_epoch(self) -> int | None:
        return self._epochs[-1] if self._epochs else None

    def idempotent_create_snapshot(self, epoch: int) -> None:
        """``getOrCreateSnapshot``: a snapshot at ``epoch`` unless the latest one is there; an
        epoch before the latest is an error."""
        last = self.latest_epoch()
        if last is not None and last > epoch:
            raise RuntimeError(
                f"Can't create a new in-memory snapshot at epoch {epoch} because there is "
                f"already a snapshot with epoch {last}. Snapshot epochs are "
                f"{', '.join(map(str, self._epochs))}")
        if last == epoch:
            return
        self.operations.append(f"snapshot[{epoch}]")
        self._epochs.append(epoch)

    def revert_to_snapshot(self, target_epoch: int) -> None:
        """``revertToSnapshot``: drop every snapshot after ``target_epoch``."""
        self.operations.append(f"revert[{target_epoch}]")
        if target_epoch not in self._epochs:
            raise RuntimeError(f"No in-memory snapshot for epoch {target_epoch}. Snapshot "
                               f"epochs are: {', '.join(map(str, self._epochs))}")
        del self._epochs[self._epochs.index(target_epoch) + 1:]

    def delete_snapshots_up_to(self, target_epoch: int) -> None:
        """``deleteSnapshotsUpTo``: drop the snapshots before ``target_epoch``."""
        self._epochs = [e for e in self._epochs if e >= target_epoch]

    def reset(self) -> None:
        """``reset``: drop every snapshot."""
        self.operations.append("reset")
        self._epochs = []


class QuorumControllerMetrics:
    """The ``QuorumControllerMetrics`` values OffsetControlManager sets: ActiveControllerCount
    (``active``), LastAppliedRecordOffset, LastCommittedRecordOffset,
    LastAppliedRecordTimestamp."""

    def __init__(self) -> None:
        self._active = False
        self._last_applied_record_offset = -1
        self._last_committed_record_offset = -1
        self._last_applied_record_timestamp = -1

    def active(self) -> bool:
        return self._active

    def set_active(self, active: bool) -> None:
        self._active = active

    def last_applied_record_offset(self) -> int:
        return self._last_applied_record_offset

    def set_last_applied_record_offset(self, offset: int) -> None:
        self._last_applied_record_offset = offset

    def last_committed_record_offset(self) -> int:
        return self._last_committed_record_offset

    def set_last_committed_record_offset(self, offset: int) -> None:
        self._last_committed_record_offset = offset

    def last_applied_record_timestamp(self) -> int:
        return self._last_applied_record_timestamp

    def set_last_applied_record_timestamp(self, timestamp: int) -> None:
        self._last_applied_record_timestamp = timestamp


class OffsetControlManager:
    """See the module docstring. ``snapshot_registry`` and ``metrics`` default to fresh ones
    (Kafka's Builder); ``time`` returns the simulated time in ms (0 when not given)."""

    def __init__(self, snapshot_registry: SnapshotRegistry | None = None,
                 metrics: QuorumControllerMetrics | None = None,
                 time: Callable[[], int] | None = None) -> None:
        self._snapshot_registry = snapshot_registry or SnapshotRegistry()
        self._metrics = metrics or QuorumControllerMetrics()
        self._time = time or (lambda: 0)
        self._current_snapshot_id: OffsetAndEpoch | None = None
        self._last_committed_offset = -1
        self._last_committed_epoch = -1
        self._last_stable_offset = -1
        self._transaction_start_offset = -1
        self._next_write_offset = -1
        self._snapshot_registry.idempotent_create_snapshot(-1)
        self._metrics.set_active(False)
        self._metrics.set_last_committed_record_offset(-1)
        self._metrics.set_last_applied_record_offset(-1)
        self._metrics.set_last_applied_record_timestamp(-1)

    # -- the getters (Kafka's) ----------------------------------------------------------------
    def snapshot_registry(self) -> SnapshotRegistry:
        return self._snapshot_registry

    def metrics(self) -> QuorumControllerMetrics:
        return self._metrics

    def current_snapshot_id(self) -> OffsetAndEpoch | None:
        return self._current_snapshot_id

    def current_snapshot_name(self) -> str | None:
        snapshot_id = self._current_snapshot_id
        return None if snapshot_id is None else filename_from_snapshot_id(snapshot_id)

    def last_committed_offset(self) -> int:
        return self._last_committed_offset

    def last_committed_epoch(self) -> int:
        return self._last_committed_epoch

    def last_stable_offset(self) -> int:
        return self._last_stable_offset

    def transaction_start_offset(self) -> int:
        return self._transaction_start_offset

    def next_write_offset(self) -> int:
        return self._next_write_offset

    def active(self) -> bool:
        return self._next_write_offset != -1

    # -- active / standby ---------------------------------------------------------------------
    def activate(self, new_next_write_offset: int) -> None:
        """``activate``: the controller writes from ``new_next_write_offset`` on; a snapshot at
        the last stable offset is there to revert to."""
        if self.active():
            raise RuntimeError("Can't activate already active OffsetControlManager.")
        if new_next_write_offset < 0:
            raise RuntimeError(
                f"Invalid negative newNextWriteOffset {new_next_write_offset}.")
        self._snapshot_registry.idempotent_create_snapshot(self._last_stable_offset)
        self._next_write_offset = new_next_write_offset
        self._metrics.set_active(True)

    def deactivate(self) -> None:
        """``deactivate``: revert to the last stable offset (checked before anything changes:
        Kafka clears the active state first, then fails)."""
        if not self.active():
            raise RuntimeError("Can't deactivate inactive OffsetControlManager.")
        if not self._snapshot_registry.has_snapshot(self._last_stable_offset):
            raise RuntimeError(
                f"Unable to reset to last stable offset {self._last_stable_offset}. No "
                "in-memory snapshot found for this offset.")
        self._metrics.set_active(False)
        self._metrics.set_last_applied_record_offset(self._last_stable_offset)
        self._next_write_offset = -1
        self._snapshot_registry.revert_to_snapshot(self._last_stable_offset)

    # -- the log ------------------------------------------------------------------------------
    def handle_commit_batch(self, batch: Batch) -> None:
        """``handleCommitBatch``: a batch is committed."""
        self._last_committed_offset = batch.last_offset
        self._last_committed_epoch = batch.epoch
        self.maybe_advance_last_stable_offset()
        self.handle_commit_batch_metrics(batch)

    def handle_commit_batch_metrics(self, batch: Batch) -> None:
        """``handleCommitBatchMetrics``: a standby has applied what is committed."""
        self._metrics.set_last_committed_record_offset(batch.last_offset)
        if not self.active():
            self._metrics.set_last_applied_record_offset(batch.last_offset)
            self._metrics.set_last_applied_record_timestamp(batch.append_timestamp)

    def handle_schedule_append(self, last_offset: int) -> None:
        """``handleScheduleAppend``: the active controller handed a batch ending at
        ``last_offset`` to the Raft client (timestamped now: Kafka has no append time yet)."""
        self._next_write_offset = last_offset + 1
        self._snapshot_registry.idempotent_create_snapshot(last_offset)
        self._metrics.set_last_applied_record_offset(last_offset)
        self._metrics.set_last_applied_record_timestamp(self._time())

    def maybe_advance_last_stable_offset(self) -> None:
        """``maybeAdvanceLastStableOffset``: the last committed offset before any open
        transaction; older snapshots are dropped (a standby keeps one at the new offset)."""
        if self._transaction_start_offset == -1:
            new_offset = self._last_committed_offset
        else:
            new_offset = min(self._transaction_start_offset - 1, self._last_committed_offset)
        if self._last_stable_offset < new_offset:
            self._last_stable_offset = new_offset
            self._snapshot_registry.delete_snapshots_up_to(new_offset)
            if not self.active():
                self._snapshot_registry.idempotent_create_snapshot(new_offset)

    # -- snapshots ----------------------------------------------------------------------------
    def begin_load_snapshot(self, snapshot_id: OffsetAndEpoch) -> None:
        """``beginLoadSnapshot``: forget everything before loading ``snapshot_id``."""
        if self._current_snapshot_id is not None:
            raise RuntimeError(f"Can't begin reading snapshot for {snapshot_id}, because we "
                               f"are already reading {self._current_snapshot_id}")
        self._current_snapshot_id = OffsetAndEpoch(*snapshot_id)
        self._snapshot_registry.reset()
        self._last_committed_offset = -1
        self._last_committed_epoch = -1
        self._last_stable_offset = -1
        self._transaction_start_offset = -1
        self._next_write_offset = -1

    def end_load_snapshot(self, timestamp: int) -> None:
        """``endLoadSnapshot``: the snapshot's offset and epoch are committed and stable."""
        snapshot_id = self._current_snapshot_id
        if snapshot_id is None:
            raise RuntimeError("Can't end loading snapshot, because there is no current "
                               "snapshot.")
        self._snapshot_registry.idempotent_create_snapshot(snapshot_id.offset)
        self._last_committed_offset = snapshot_id.offset
        self._last_committed_epoch = snapshot_id.epoch
        self._last_stable_offset = snapshot_id.offset
        self._transaction_start_offset = -1
        self._next_write_offset = -1
        self._metrics.set_last_committed_record_offset(snapshot_id.offset)
        self._metrics.set_last_applied_record_offset(snapshot_id.offset)
        self._metrics.set_last_applied_record_timestamp(timestamp)
        self._current_snapshot_id = None

    # -- metadata transactions (KIP-868) ------------------------------------------------------
    def replay(self, record, offset: int) -> None:
        """``replay`` of a Begin / End / AbortTransactionRecord at ``offset``."""
        if not isinstance(record, _TRANSACTION_RECORDS):
            raise TypeError("OffsetControlManager.replay takes a BeginTransactionRecord, "
                            f"EndTransactionRecord or AbortTransactionRecord, got {record!r}")
        kind = type(record).__name__
        if self._current_snapshot_id is not None:
            raise RuntimeError(f"{kind} cannot appear within a snapshot.")
        if kind == "BeginTransactionRecord":
            if self._transaction_start_offset != -1:
                raise RuntimeError(
                    f"Can't replay a BeginTransactionRecord at {offset} because the "
                    f"transaction at {self._transaction_start_offset} was never closed.")
            self._snapshot_registry.idempotent_create_snapshot(offset - 1)
            self._transaction_start_offset = offset
            return
        if self._transaction_start_offset == -1:
            raise RuntimeError(f"Can't replay an {kind} at {offset} because there is no "
                               "open transaction.")
        if kind == "AbortTransactionRecord":
            self._snapshot_registry.revert_to_snapshot(self._transaction_start_offset - 1)
        self._transaction_start_offset = -1


_TRANSACTION_RECORDS = (BeginTransactionRecord, EndTransactionRecord, AbortTransactionRecord)


class MetadataTransactions(NamedTuple):
    """What ``metadata_transactions`` finds in log entries: ``entries`` without the records of
    aborted transactions (their Begin and contents; the Abort stays, a marker that changes
    nothing), and ``open_start``, the offset of a BeginTransactionRecord not yet ended (-1:
    none), whose records stay at the end of ``entries``."""

    entries: list
    open_start: int


def metadata_transactions(entries) -> MetadataTransactions:
    """KIP-868 over (offset, epoch, record) entries read from outside any transaction. A
    Begin inside an open transaction is an error, as in MetadataBatchLoader.replay
    (MetadataBatchLoader.java:217@3.9.0-rc3, the same @4.4 f86720838c) and
    OffsetControlManager.replay; an End or Abort without a Begin is kept as a marker (Kafka's
    fault handler logs it and the loader goes on)."""
    kept: list = []
    txn: list = []
    start = -1
    for entry in entries:
        kind = type(entry[2])
        if kind is BeginTransactionRecord:
            if start != -1:
                raise RuntimeError("Encountered BeginTransactionRecord while already in a "
                                   f"transaction (begun at offset {start}, again at {entry[0]})")
            start, txn = entry[0], [entry]
        elif start == -1:
            kept.append(entry)
        elif kind is EndTransactionRecord or kind is AbortTransactionRecord:
            if kind is EndTransactionRecord:
                kept.extend(txn)
            kept.append(entry)
            start, txn = -1, []
        else:
            txn.append(entry)
    kept.extend(txn)
    return MetadataTransactions(kept, start)


def published_entries(entries) -> list:
    """What a metadata loader publishes of ``entries`` (MetadataBatchLoader.maybeFlushBatches,
    MetadataBatchLoader.java:181@3.9.0-rc3): everything up to an open transaction's Begin,
    without aborted transactions' records; the open transaction waits for its End. (kafkasim's
    log keeps no batch boundaries, so Kafka's mid-batch flush at a Begin that follows an Abort
    in the same batch -- which publishes the aborted records -- is not reproduced.)"""
    found = metadata_transactions(entries)
    if found.open_start == -1:
        return found.entries
    return [e for e in found.entries if e[0] < found.open_start]


def published_end(entries, end: int) -> int:
    """The end (exclusive) of what a loader publishes of ``entries``, which reach up to
    ``end``: ``end``, or the offset of an open transaction's Begin."""
    start = metadata_transactions(entries).open_start
    return end if start == -1 else start
