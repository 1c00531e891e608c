"""``LeaderEpochFileCache``: the (epoch -> start offset) map behind ``leader-epoch-checkpoint``.

Semantics follow Kafka's storage/.../epoch/LeaderEpochFileCache.java (fact sheet §5): entries are
strictly increasing in both epoch and start offset; ``assign`` first drops entries that would break
that order; ``endOffsetFor`` answers OffsetsForLeaderEpoch.
"""

from __future__ import annotations

from typing import NamedTuple

from kafkasim.protocol.rules import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET, end_offset_for

__all__ = ["UNDEFINED_EPOCH", "UNDEFINED_EPOCH_OFFSET", "EpochEntry", "LeaderEpochFileCache"]


class EpochEntry(NamedTuple):
    epoch: int
    start_offset: int


class LeaderEpochFileCache:
    """Ordered epoch entries; plain data (a list of tuples) so it pickles and copies cheaply."""

    __slots__ = ("entries",)

    def __init__(self, entries: list[tuple[int, int]] | None = None) -> None:
        self.entries: list[EpochEntry] = [EpochEntry(*e) for e in (entries or [])]

    def __repr__(self) -> str:
        inner = ", ".join(f"{e.epoch}->{e.start_offset}" for e in self.entries)
        return f"LeaderEpochFileCache([{inner}])"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, LeaderEpochFileCache) and self.entries == other.entries

    def copy(self) -> LeaderEpochFileCache:
        c = LeaderEpochFileCache()
        c.entries = list(self.entries)
        return c

    # -- queries ----------------------------------------------------------------------------
    def latest_epoch(self) -> int:
        return self.entries[-1].epoch if self.entries else UNDEFINED_EPOCH

    def earliest_entry(self) -> EpochEntry | None:
        return self.entries[0] if self.entries else None

    def epoch_for_offset(self, offset: int) -> int:
        """The epoch whose range contains ``offset`` (UNDEFINED_EPOCH if before the first)."""
        epoch = UNDEFINED_EPOCH
        for e in self.entries:
            if e.start_offset > offset:
                break
            epoch = e.epoch
        return epoch

    def previous_epoch(self, epoch: int) -> int:
        """Largest cached epoch strictly below ``epoch`` (UNDEFINED_EPOCH if none)."""
        best = UNDEFINED_EPOCH
        for e in self.entries:
            if e.epoch < epoch:
                best = e.epoch
        return best

    def end_offset_for(self, requested_epoch: int, log_end_offset: int) -> tuple[int, int]:
        """Kafka's ``endOffsetFor``: (epoch found, end offset) answering OffsetsForLeaderEpoch
        (the rule: ``kafkasim.protocol.rules.end_offset_for``)."""
        return end_offset_for(self.entries, requested_epoch, log_end_offset)

    # -- updates ----------------------------------------------------------------------------
    def assign(self, epoch: int, start_offset: int) -> bool:
        """Record that ``epoch`` starts at ``start_offset``; returns True if the cache changed."""
        if epoch < 0:
            return False
        entries = self.entries
        if entries:
            last = entries[-1]
            if last.epoch == epoch and last.start_offset <= start_offset:
                return False  # same epoch with a larger offset: ignored
        # drop every entry with epoch >= new epoch or start offset >= new start offset
        kept = [e for e in entries if e.epoch < epoch and e.start_offset < start_offset]
        kept.append(EpochEntry(epoch, start_offset))
        changed = kept != entries
        self.entries = kept
        return changed

    def truncate_from_end(self, end_offset: int) -> bool:
        """Remove entries whose start offset is >= ``end_offset`` (log truncated to it)."""
        kept = [e for e in self.entries if e.start_offset < end_offset]
        changed = len(kept) != len(self.entries)
        self.entries = kept
        return changed

    def truncate_from_start(self, start_offset: int) -> bool:
        """Log start raised to ``start_offset``: drop older entries, re-anchor the earliest kept."""
        entries = self.entries
        if not entries or entries[0].start_offset >= start_offset:
            return False
        keep_from = 0
        for i, e in enumerate(entries):
            if e.start_offset <= start_offset:
                keep_from = i
        first = entries[keep_from]
        self.entries = [EpochEntry(first.epoch, start_offset)] + entries[keep_from + 1:]
        return True

    def clear(self) -> None:
        self.entries = []
