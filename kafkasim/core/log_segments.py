"""A log's segments and their deletion: UnifiedLog.deleteOldSegments and what it needs.

kafkasim's ``Log`` keeps its records in columns, one entry per offset; its segments are only
their base offsets: ``Log.segment_base_offset`` (the first) and ``Log.rolled_segment_bases``
(one per ``Log.roll``, ascending). A segment holds the log's records from its base up to the
next segment's base (the last one, the active segment, up to the log end offset).

Deletion follows UnifiedLog.deleteOldSegments (read at 3.9.0-rc3; the same rules since
KIP-107 in 0.11 for the log start, since KAFKA-1990 for retention): segments are taken from the
oldest on while a test holds and the segment ends at or below the high watermark; an empty
active segment is never taken; if every segment goes, the log rolls first so one remains; the
log start moves to the first kept segment's base. The tests are, in Kafka's order:

* the log start (deleteLogStartOffsetBreachedSegments): the next segment begins at or below the
  log start; always applied;
* retention.bytes (deleteRetentionSizeBreachedSegments): while the log is still larger than
  retention.bytes by at least the segment's size; only with cleanup.policy ``delete``;
* retention.ms (deleteRetentionMsBreachedSegments): the segment's largest timestamp is more
  than retention.ms before ``now``; only with cleanup.policy ``delete`` and a ``now`` given
  (the log has no clock; Kafka reads time.milliseconds).

Deviation: kafkasim drops a record as soon as the log start passes it (Kafka keeps it until
its segment is deleted), so a segment the log start cut through counts only the records from
the log start on, for its size and its largest timestamp.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

#: RecordBatch.NO_TIMESTAMP: the largest timestamp of a segment that holds no record
NO_TIMESTAMP = -1


class LogSegment:
    """One segment of a log, as deleteOldSegments sees it (LogSegment's baseOffset, size and
    largestTimestamp), computed from the log's columns."""

    __slots__ = ("base_offset", "end_offset", "size", "largest_timestamp")

    def __init__(self, log: Any, base_offset: int, end_offset: int) -> None:
        self.base_offset = base_offset
        #: the next segment's base, or the log end offset for the active segment
        self.end_offset = end_offset
        lo = max(base_offset, log.log_start_offset) - log.log_start_offset
        hi = end_offset - log.log_start_offset
        self.size = sum(log.sizes[lo:hi]) if hi > lo else 0
        self.largest_timestamp = max(log.timestamps[lo:hi]) if hi > lo else NO_TIMESTAMP

    def __repr__(self) -> str:
        return f"LogSegment(base={self.base_offset}, end={self.end_offset}, size={self.size})"


def log_segments(log: Any) -> list[LogSegment]:
    """The log's segments, oldest first (LocalLog.segments)."""
    bases = [log.segment_base_offset, *log.rolled_segment_bases]
    ends = [*log.rolled_segment_bases, log.log_end_offset]
    return [LogSegment(log, b, e) for b, e in zip(bases, ends, strict=True)]


def non_active_log_segments_from(log: Any, start_offset: int) -> list[LogSegment]:
    """LogSegments.nonActiveLogSegmentsFrom: the segments before the active one, from the one
    holding ``start_offset`` (the greatest base offset at or below it; the first segment when
    none is) on; none when ``start_offset`` is at or past the active segment's base."""
    *older, active = log_segments(log)
    if start_offset >= active.base_offset:
        return []
    floor = max((s.base_offset for s in older if s.base_offset <= start_offset), default=None)
    return [s for s in older if floor is None or s.base_offset >= floor]


Predicate = Callable[[LogSegment, "LogSegment | None"], bool]


def deletable_segments(log: Any, predicate: Predicate) -> list[LogSegment]:
    """UnifiedLog.deletableSegments: from the oldest segment on, while the segment ends at or
    below the high watermark and ``predicate(segment, next segment or None)`` holds; an empty
    active segment is never deletable."""
    segments = log_segments(log)
    deletable = []
    for i, segment in enumerate(segments):
        nxt = segments[i + 1] if i + 1 < len(segments) else None
        if nxt is None and segment.size == 0:
            break   # isLastSegmentAndEmpty
        if log.high_watermark < segment.end_offset or not predicate(segment, nxt):
            break
        deletable.append(segment)
    return deletable


def delete_segments(log: Any, deletable: list[LogSegment]) -> int:
    """UnifiedLog.deleteSegments: roll first when every segment goes (a log keeps one), raise
    the log start to the base of the first segment kept, drop the deleted ones. Returns how many
    were deleted."""
    if not deletable:
        return 0
    if len(deletable) == 1 + len(log.rolled_segment_bases):
        log.roll()
    last = deletable[-1].base_offset
    bases = [log.segment_base_offset, *log.rolled_segment_bases]
    kept = [b for b in bases if b > last]
    log.maybe_increment_log_start_offset(kept[0])
    log.segment_base_offset = kept[0]
    del log.rolled_segment_bases[:]
    log.rolled_segment_bases.extend(kept[1:])
    return len(deletable)


def _config(log: Any) -> Mapping[str, Any]:
    return log.config if log.config is not None else {}


def delete_log_start_offset_breached_segments(log: Any) -> int:
    """deleteLogStartOffsetBreachedSegments: the segments whose next one begins at or below the
    log start."""
    start = log.log_start_offset
    return delete_segments(log, deletable_segments(
        log, lambda _segment, nxt: nxt is not None and nxt.base_offset <= start))


def delete_retention_size_breached_segments(log: Any) -> int:
    """deleteRetentionSizeBreachedSegments: with retention.bytes >= 0 and the log at least that
    large, the oldest segments while the excess still covers each one's size."""
    retention = _config(log).get("retention.bytes", -1)
    size = sum(log.sizes)
    if retention is None or retention < 0 or size < retention:
        return 0
    diff = [size - retention]

    def should_delete(segment: LogSegment, _nxt: LogSegment | None) -> bool:
        if diff[0] - segment.size >= 0:
            diff[0] -= segment.size
            return True
        return False

    return delete_segments(log, deletable_segments(log, should_delete))


def delete_retention_ms_breached_segments(log: Any, now: int | None) -> int:
    """deleteRetentionMsBreachedSegments: with retention.ms >= 0, the oldest segments whose
    largest timestamp is more than retention.ms before ``now`` (nothing without ``now``)."""
    retention = _config(log).get("retention.ms", -1)
    if now is None or retention is None or retention < 0:
        return 0
    return delete_segments(log, deletable_segments(
        log, lambda segment, _nxt: now - segment.largest_timestamp > retention))


def delete_old_segments(log: Any, now: int | None = None) -> int:
    """UnifiedLog.deleteOldSegments: the log-start test always; with cleanup.policy ``delete``
    (the default) also retention.bytes and retention.ms. Returns how many segments went."""
    deleted = delete_log_start_offset_breached_segments(log)
    if "delete" in str(_config(log).get("cleanup.policy", "delete")):
        deleted += delete_retention_size_breached_segments(log)
        deleted += delete_retention_ms_breached_segments(log, now)
    return deleted
