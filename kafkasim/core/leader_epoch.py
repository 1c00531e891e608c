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
``truncate_from_start`` that removed some, a ``clear`` (LeaderEpochFileCache.flush, called from
assign / truncateFromEnd / truncateFromStart / clearAndFlush). ``checkpoint`` is None for a cache
without a file: before KIP-101 (0.11) there is none, and a cache a test builds alone needs none.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple, Protocol

from kafkasim.core import rules
from kafkasim.core.rules import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET

__all__ = ["UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "EpochEntry", "LeaderEpochFileCache"]


class EpochEntry(NamedTuple):
    epoch: int
    start_offset: int


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

    # -- queries ----------------------------------------------------------------------------
    def latest_epoch(self) -> int:
        return self.entries[-1].epoch if self.entries else UNDEFINED_EPOCH

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """Kafka's ``endOffsetFor``: (epoch found, end offset) answering OffsetsForLeaderEpoch
        (the rule: ``kafkasim.core.rules.end_offset_for``; 0.11.0 - 2.0 answered UNDEFINED
        for an epoch below the first cached one)."""
        return rules.end_offset_for(self.entries, requested_epoch, log_end_offset,
                                    below_first_is_undefined=not self.truncates_conflicts)

    # -- updates ----------------------------------------------------------------------------
    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; returns True if the cache changed
        (then Kafka rewrites leader-epoch-checkpoint). Rules by version: module docstring."""
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

    def clear(self) -> None:
        """clearAndFlush: no entries, and the file rewritten empty (even if it already was)."""
        self.entries = []
        self.flush()
