"""``LeaderEpochFileCache``: the (epoch -> start offset) map behind ``leader-epoch-checkpoint``.

Semantics follow Kafka's storage/.../epoch/LeaderEpochFileCache.java (fact sheet §5): entries are
strictly increasing in both epoch and start offset; ``assign`` first drops entries that would break
that order; ``endOffsetFor`` answers OffsetsForLeaderEpoch.

``assign`` changed twice (core/.../server/epoch/LeaderEpochFileCache.scala at the release tags):

* 0.11.0 - 2.0: only an epoch above the latest, starting at or after the latest start offset, is
  appended; anything else is ignored with a warning (a negative epoch fails an ``assert``).
* 2.1 (KAFKA-7415, commit f2dd6aa): any (epoch, start offset) other than the latest epoch at a
  later offset is added after dropping the entries it conflicts with (``truncateAndAppend``); a
  negative epoch is an IllegalArgumentException. Flag: ``truncates_conflicts``. The same commit
  made ``endOffsetFor`` of an epoch below the first cached one answer (that epoch, the first
  entry's start offset) instead of undefined; that goes with the same flag.
* 2.7 (KAFKA-10435, commit 634c917): a negative start offset is refused too, and the cache is
  rebuilt from the checkpoint file by assigning its entries one by one (so a hand-edited,
  non-monotonic file is repaired or refused); before, the file was taken as it was. Flag:
  ``validates_entries``.

Like Kafka's, the cache owns its ``leader-epoch-checkpoint`` (``checkpoint``, a
``kafkasim.core.checkpoint.LeaderEpochCheckpointFile``) and rewrites it synchronously after
every change: an ``assign`` that changed the entries, a ``truncate_from_end`` /
``truncate_from_start`` that removed some, a ``clear_and_flush`` (LeaderEpochFileCache.flush,
called from assign / truncateFromEnd / truncateFromStart / clearAndFlush; ``clear`` writes
nothing). ``checkpoint`` is None for a cache without a file: before KIP-101 (0.11) there is none,
and a cache a test builds alone needs none. Queries answer as Kafka's: None for an empty
Optional / OptionalInt (``latest_epoch``, ``previous_epoch``, ``epoch_entry``, ...).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from typing import NamedTuple, Protocol

from kafkasim.core import rules
from kafkasim.core.rules import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET

__all__ = ["UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "EpochEntry", "LeaderEpochFileCache",
           "OffsetAndEpoch"]


class EpochEntry(NamedTuple):
    epoch: int
    start_offset: int


class OffsetAndEpoch(NamedTuple):
    """org.apache.kafka.server.common.OffsetAndEpoch: an offset and the leader epoch it belongs
    to (``UnifiedLog.endOffsetForEpoch``'s answer)."""

    offset: int
    leader_epoch: int


def _epoch_of(entry: EpochEntry) -> int:
    return entry.epoch


def _start_offset_of(entry: EpochEntry) -> int:
    return entry.start_offset


class EpochCheckpoint(Protocol):
    """Where a cache flushes its entries (``LeaderEpochCheckpointFile``)."""

    def write(self, entries: Sequence[EpochEntry]) -> None: ...


class LeaderEpochFileCache:
    """Ordered epoch entries; plain data (a list of tuples) so it pickles and copies cheaply.

    ``entries`` are taken as given (Kafka before 2.7 loading a checkpoint file); use
    :meth:`from_checkpoint` for the version-dependent load."""

    __slots__ = ("checkpoint", "entries", "truncates_conflicts", "validates_entries")

    def __init__(self, entries: list[tuple[int, int]] | None = None, *,
                 truncates_conflicts: bool = True, validates_entries: bool = True,
                 checkpoint: EpochCheckpoint | None = None) -> None:
        self.entries: list[EpochEntry] = [EpochEntry(*e) for e in (entries or [])]
        self.truncates_conflicts = truncates_conflicts
        self.validates_entries = validates_entries
        self.checkpoint = checkpoint

    @classmethod
    def from_checkpoint(cls, entries: list[tuple[int, int]], *, truncates_conflicts: bool = True,
                        validates_entries: bool = True) -> LeaderEpochFileCache:
        """The cache a log loads from its leader-epoch-checkpoint: since 2.7
        ``checkpoint.read().forEach(this::assign)`` (may raise ValueError, Kafka's
        IllegalArgumentException), before it the entries as read."""
        if not validates_entries:
            return cls(entries, truncates_conflicts=truncates_conflicts, validates_entries=False)
        cache = cls(truncates_conflicts=truncates_conflicts, validates_entries=True)
        for epoch, start_offset in entries:
            cache.assign(epoch, start_offset)
        return cache

    def __repr__(self) -> str:
        inner = ", ".join(f"{e.epoch}->{e.start_offset}" for e in self.entries)
        return f"LeaderEpochFileCache([{inner}])"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LeaderEpochFileCache) and self.entries == other.entries

    def copy(self) -> LeaderEpochFileCache:
        """The same entries and rules, without the checkpoint file (a detached copy)."""
        c = LeaderEpochFileCache(truncates_conflicts=self.truncates_conflicts,
                                 validates_entries=self.validates_entries)
        c.entries = list(self.entries)
        return c

    def flush(self) -> None:
        """LeaderEpochFileCache.flush: write the entries to the checkpoint file, if any."""
        if self.checkpoint is not None:
            self.checkpoint.write(self.entries)

    # -- queries (Kafka's Optional / OptionalInt: None when empty) ---------------------------
    def non_empty(self) -> bool:
        """``nonEmpty``: the cache holds at least one entry."""
        return bool(self.entries)

    def latest_entry(self) -> EpochEntry | None:
        """``latestEntry``: the entry of the highest epoch, or None."""
        return self.entries[-1] if self.entries else None

    def earliest_entry(self) -> EpochEntry | None:
        """``earliestEntry``: the entry of the lowest epoch, or None."""
        return self.entries[0] if self.entries else None

    def latest_epoch(self) -> int | None:
        """``latestEpoch`` (OptionalInt): the highest epoch, or None for an empty cache."""
        return self.entries[-1].epoch if self.entries else None

    def previous_epoch(self, epoch: int | None = None) -> int | None:
        """``previousEpoch(epoch)``: the highest cached epoch below ``epoch`` (TreeMap.lowerKey),
        or None. Without ``epoch``, ``previousEpoch()``: the epoch before the latest entry's."""
        entry = self.previous_entry(self._latest_or(epoch))
        return None if entry is None else entry.epoch

    def _latest_or(self, epoch: int | None) -> int:
        if epoch is not None:
            return epoch
        return self.entries[-1].epoch if self.entries else UNDEFINED_EPOCH

    def previous_entry(self, epoch: int) -> EpochEntry | None:
        """``previousEntry``: the entry of the highest epoch below ``epoch`` (lowerEntry), or
        None."""
        i = bisect_left(self.entries, epoch, key=_epoch_of)
        return self.entries[i - 1] if i > 0 else None

    def next_epoch(self, epoch: int) -> int | None:
        """``nextEpoch``: the lowest cached epoch above ``epoch`` (TreeMap.higherKey), or None."""
        i = bisect_right(self.entries, epoch, key=_epoch_of)
        return self.entries[i].epoch if i < len(self.entries) else None

    def epoch_entry(self, epoch: int) -> EpochEntry | None:
        """``epochEntry``: the entry of exactly ``epoch``, or None."""
        i = bisect_left(self.entries, epoch, key=_epoch_of)
        entries = self.entries
        return entries[i] if i < len(entries) and entries[i].epoch == epoch else None

    def epoch_for_offset(self, offset: int) -> int | None:
        """``epochForOffset``: the epoch of the last entry starting at or before ``offset``,
        or None when ``offset`` is below the first entry (or the cache is empty)."""
        i = bisect_right(self.entries, offset, key=_start_offset_of)
        return self.entries[i - 1].epoch if i > 0 else None

    def epoch_entries(self) -> list[EpochEntry]:
        """``epochEntries``: a copy of the entries, lowest epoch first."""
        return list(self.entries)

    def epoch_with_offsets(self) -> dict[int, int]:
        """``epochWithOffsets``: epoch -> start offset, in epoch order (a NavigableMap)."""
        return {e.epoch: e.start_offset for e in self.entries}

    def epoch_entries_in_range(self, start_offset: int, end_offset: int) -> list[EpochEntry]:
        """``epochEntriesInRange``: the entries a copy of the cache would keep after
        truncating from ``start_offset`` (only if it is >= 0) and from ``end_offset``, the copy's
        first entry re-anchored at ``start_offset``; the cache itself is unchanged."""
        c = self.copy()
        if start_offset >= 0:
            c.truncate_from_start(start_offset)
        c.truncate_from_end(end_offset)
        return c.entries

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """Kafka's ``endOffsetFor``: (epoch found, end offset) answering OffsetsForLeaderEpoch
        (the rule: ``kafkasim.core.rules.end_offset_for``; 0.11.0 - 2.0 answered UNDEFINED
        for an epoch below the first cached one)."""
        return rules.end_offset_for(self.entries, requested_epoch, log_end_offset,
                                    below_first_is_undefined=not self.truncates_conflicts)

    # -- updates ----------------------------------------------------------------------------
    def assign(self, epoch: int | Sequence[tuple[int, int]], start_offset: int | None = None
               ) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; returns True if the cache changed
        (then Kafka rewrites leader-epoch-checkpoint). Rules by version: module docstring.

        ``assign(entries)``, Kafka's ``assign(List<EpochEntry>)``: each entry in turn, then one
        write of the file if the list is not empty (whether or not an entry changed it)."""
        if start_offset is None:
            if isinstance(epoch, int):
                raise TypeError("assign(epoch, start_offset) needs start_offset, or pass a list "
                                "of EpochEntry(epoch, start_offset)")
            return self._assign_entries(epoch)
        if not isinstance(epoch, int):
            raise TypeError("assign(entries) takes only the list of EpochEntry")
        if not self.truncates_conflicts:
            return self._assign_if_monotonic(epoch, start_offset)   # 0.11.0 - 2.0
        if epoch < 0 or (self.validates_entries and start_offset < 0):
            raise ValueError(
                "Received invalid partition leader epoch entry EpochEntry(epoch="
                f"{epoch}, startOffset={start_offset}) (Kafka: IllegalArgumentException)")
        if not self._is_update_needed(epoch, start_offset):
            return False  # same epoch with a larger offset: ignored
        # maybeTruncateNonMonotonicEntries: drop every entry with epoch >= new epoch or start
        # offset >= new start offset, then append
        entries = self.entries
        kept = [e for e in entries if e.epoch < epoch and e.start_offset < start_offset]
        kept.append(EpochEntry(epoch, start_offset))
        changed = kept != entries
        self.entries = kept
        if changed and self.checkpoint is not None:
            self.checkpoint.write(kept)
        return changed

    def _assign_entries(self, entries: Sequence[tuple[int, int]]) -> bool:
        checkpoint, self.checkpoint = self.checkpoint, None   # one write, after the loop
        try:
            changed = [self.assign(int(e[0]), int(e[1])) for e in entries]
        finally:
            self.checkpoint = checkpoint
        if changed:
            self.flush()
        return any(changed)

    def _is_update_needed(self, epoch: int, start_offset: int) -> bool:
        """isUpdateNeeded (2.1+): not when the latest entry has this epoch at an offset no
        larger."""
        if not self.entries:
            return True
        last = self.entries[-1]
        return not (last.epoch == epoch and last.start_offset <= start_offset)

    def _assign_if_monotonic(self, epoch: int, start_offset: int) -> bool:
        """0.11.0 - 2.0: ``if (epoch >= 0 && epoch > latestEpoch && offset >= latestOffset)``
        append, else ignore (validateAndMaybeWarn); a negative epoch fails the assertion."""
        if epoch < 0:
            raise ValueError(
                "assertion failed: Received a PartitionLeaderEpoch assignment for an epoch "
                f"< 0 (epoch {epoch}, offset {start_offset}) (Kafka: AssertionError)")
        entries = self.entries
        if entries and (epoch <= entries[-1].epoch or start_offset < entries[-1].start_offset):
            return False  # ignored (validateAndMaybeWarn)
        self.entries = [*entries, EpochEntry(epoch, start_offset)]
        if self.checkpoint is not None:
            self.checkpoint.write(self.entries)
        return True

    def truncate_from_end(self, end_offset: int, *, flush: bool = True) -> bool:
        """Remove entries whose start offset is >= ``end_offset`` (log truncated to it). A
        negative ``end_offset`` changes nothing: ``if (endOffset >= 0 && latest.startOffset >=
        endOffset)`` (truncateFromEnd since 2.1; clearAndFlushLatest's ``offset >= 0`` before).
        ``flush=False`` leaves the file alone: not a Kafka call, for data a power loss took."""
        entries = self.entries
        if end_offset < 0 or not entries or entries[-1].start_offset < end_offset:
            return False
        kept = [e for e in entries if e.start_offset < end_offset]
        self.entries = kept
        if flush and self.checkpoint is not None:
            self.checkpoint.write(kept)
        return True

    def truncate_from_start(self, start_offset: int) -> bool:
        """Log start raised to ``start_offset``: drop older entries, re-anchor the earliest kept
        (truncateFromStart; clearAndFlushEarliest before 2.1). Entries never start below 0, so a
        negative ``start_offset`` matches none and changes nothing in every version."""
        entries = self.entries
        if not entries or entries[0].start_offset >= start_offset:
            return False
        keep_from = 0
        for i, e in enumerate(entries):
            if e.start_offset <= start_offset:
                keep_from = i
        first = entries[keep_from]
        self.entries = [EpochEntry(first.epoch, start_offset)] + entries[keep_from + 1:]
        self.flush()
        return True

    def truncate_from_end_async_flush(self, end_offset: int) -> None:
        """``truncateFromEndAsyncFlush`` (3.8+, KAFKA-16541; ``truncateFromEnd`` before): as
        :meth:`truncate_from_end`. Kafka hands the file write to its scheduler; here it is done
        at once (the cache's entries are the same either way)."""
        self.truncate_from_end(end_offset)

    def truncate_from_start_async_flush(self, start_offset: int) -> None:
        """``truncateFromStartAsyncFlush``: as :meth:`truncate_from_start` (flushed at once)."""
        self.truncate_from_start(start_offset)

    def clear_and_flush(self) -> None:
        """``clearAndFlush``: no entries, and the file rewritten empty (even if it already was)."""
        self.entries = []
        self.flush()

    def clear(self) -> None:
        """``clear``: no entries; the checkpoint file is left as it is (``clear_and_flush``
        rewrites it)."""
        self.entries = []

    def with_checkpoint(self, checkpoint: EpochCheckpoint | None) -> LeaderEpochFileCache:
        """``withCheckpoint``: a cache with these entries and rules writing to ``checkpoint``
        (nothing is written until the next change)."""
        c = self.copy()
        c.checkpoint = checkpoint
        return c
