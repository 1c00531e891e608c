"""Behaviour tests for kafkasim.core: Log (LEO/HW/read/truncate) and LeaderEpochFileCache.

Reference: fact sheet §1 (HW exclusive, follower HW is a set and may go down, leader HW never moves
back, truncation lowers HW) and §5 (epoch cache assign / endOffsetFor / truncation).
"""

from __future__ import annotations

import pytest

from kafkasim.core.errors import IllegalArgumentException, OffsetOutOfRangeException
from kafkasim.core.leader_epoch import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEntry,
    LeaderEpochFileCache,
)
from kafkasim.core.log import Log, RecordChunk

UNDEF = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def _log(n: int = 0, epoch: int = 0, size: int = 100) -> Log:
    log = Log("t", 0)
    if n:
        log.append_as_leader(list(range(1, n + 1)), [size] * n, epoch, timestamp=7)
    return log


# ------------------------------------------------------------------------------ LEO / HW


def test_empty_log_offsets_are_zero():
    log = _log()
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (0, 0, 0)
    assert len(log) == 0


def test_leo_is_exclusive_the_offset_the_next_record_gets():
    log = _log()
    assert log.append_as_leader([11, 12, 13], [10, 10, 10], 0, 5) == (0, 2)
    assert log.log_end_offset == 3
    assert log.append_as_leader([14], [10], 0, 6) == (3, 3)
    assert log.log_end_offset == 4
    assert log.record_id_at(3) == 14
    assert [r[0] for r in log.records()] == [0, 1, 2, 3]


def test_hw_is_exclusive_committed_range_is_start_to_hw():
    log = _log(5)
    assert log.maybe_increment_high_watermark(3)
    # offsets 0, 1, 2 are committed; 3 is the first uncommitted one
    chunk = log.read(0, log.high_watermark, 10**9)
    assert list(chunk.ids) == [1, 2, 3]
    assert chunk.last_offset == 2
    # a read starting at HW (capped at HW) returns nothing
    assert len(log.read(3, log.high_watermark, 10**9)) == 0


def test_maybe_increment_high_watermark_never_goes_down():
    log = _log(5)
    assert log.maybe_increment_high_watermark(4) is True
    assert log.maybe_increment_high_watermark(2) is False
    assert log.high_watermark == 4
    assert log.maybe_increment_high_watermark(4) is False
    assert log.high_watermark == 4


def test_maybe_increment_high_watermark_past_leo_is_an_error():
    # UnifiedLog.maybeIncrementHighWatermark throws IllegalArgumentException past the LEO (the
    # leader's callers never ask for more: Partition.maybeIncrementLeaderHW's candidate is a
    # replica's LEO); kafkasim capped it at the LEO before
    log = _log(3)
    with pytest.raises(IllegalArgumentException, match="exceeds current log end offset 3"):
        log.maybe_increment_high_watermark(10)
    assert log.high_watermark == 0


def test_update_high_watermark_is_a_set_that_may_go_down():
    log = _log(5)
    assert log.update_high_watermark(4) == 4
    assert log.update_high_watermark(2) == 2  # follower HW can go down (UL updateHighWatermark)
    assert log.high_watermark == 2


def test_update_high_watermark_clamps_into_log_start_and_leo():
    log = _log(5)
    assert log.update_high_watermark(99) == 5
    assert log.high_watermark == 5
    log.maybe_increment_log_start_offset(2)
    assert log.update_high_watermark(0) == 2
    assert log.high_watermark == 2


# ------------------------------------------------------------------------------ appends


def test_append_as_leader_stamps_epoch_and_records_epoch_start():
    log = _log()
    log.append_as_leader([1, 2], [10, 10], 3, 0)
    log.append_as_leader([3], [10], 3, 0)
    log.append_as_leader([4, 5], [10, 10], 5, 0)
    assert [log.epoch_at(o) for o in range(5)] == [3, 3, 3, 5, 5]
    assert log.leader_epoch_cache.entries == [EpochEntry(3, 0), EpochEntry(5, 3)]
    assert log.latest_epoch() == 5


def test_append_as_follower_copies_records_and_epochs():
    leader = _log()
    leader.append_as_leader([1, 2, 3], [10] * 3, 1, 100)
    leader.append_as_leader([4, 5], [10] * 2, 2, 200)
    follower = Log("t", 0)
    chunk = leader.read(0, leader.log_end_offset, 10**9)
    # the latest epoch after the append: the fetcher's next lastFetchedEpoch
    assert follower.append_as_follower(chunk) == 2
    assert follower.records() == leader.records()
    assert follower.log_end_offset == 5
    assert follower.leader_epoch_cache.entries == [EpochEntry(1, 0), EpochEntry(2, 3)]
    # appending does not move the follower HW (it is set from the fetch response)
    assert follower.high_watermark == 0


def test_append_as_follower_in_two_fetches():
    leader = _log(6, epoch=4)
    follower = Log("t", 0)
    assert follower.append_as_follower(leader.read(0, 6, 250)) == 4
    assert follower.log_end_offset == 2  # 100 + 100 <= 250 < 300
    assert follower.append_as_follower(leader.read(2, 6, 10**9)) == 4   # epoch 4 already held
    assert follower.log_end_offset == 6
    assert list(follower.ids) == list(leader.ids)
    assert follower.leader_epoch_cache.entries == [EpochEntry(4, 0)]


def test_append_as_follower_returns_the_cache_latest_epoch_when_an_assign_is_refused():
    # before 2.1 (no truncation of conflicting entries) an epoch below the latest is ignored
    # (LeaderEpochFileCache.assign, validateAndMaybeWarn): the latest epoch stays 5
    leader = _log(2, epoch=3)
    follower = Log("t", 0)
    follower.leader_epoch_cache = LeaderEpochFileCache(truncates_conflicts=False)
    follower.leader_epoch_cache.assign(5, 0)
    assert follower.append_as_follower(leader.read(0, 2, 10**9)) == 5
    assert follower.leader_epoch_cache.entries == [EpochEntry(5, 0)]


@pytest.mark.parametrize("base", [0, 2, 5])
def test_append_as_follower_must_start_at_leo(base):
    follower = _log(3)
    chunk = _log(8).read(base, 8, 10**9)
    with pytest.raises(RuntimeError) as info:
        follower.append_as_follower(chunk)
    msg = str(info.value)
    assert f"start at {base}" in msg and "log end offset is 3" in msg
    assert follower.log_end_offset == 3  # nothing appended


# ------------------------------------------------------------------------------ reads


def test_read_returns_at_least_one_record_even_above_max_bytes():
    log = Log("t", 0)
    log.append_as_leader([1, 2, 3], [500, 100, 100], 0, 0)
    chunk = log.read(0, 3, 10)
    assert len(chunk) == 1
    assert chunk.base_offset == 0 and list(chunk.ids) == [1]
    assert chunk.size_bytes == 500


def test_read_stops_before_exceeding_max_bytes():
    log = Log("t", 0)
    log.append_as_leader([1, 2, 3, 4], [100, 200, 300, 1], 0, 0)
    assert list(log.read(0, 4, 300).ids) == [1, 2]       # 100 + 200 == 300 fits
    assert list(log.read(0, 4, 299).ids) == [1]          # 300 would not
    assert list(log.read(1, 4, 10**9).ids) == [2, 3, 4]
    assert log.read(1, 4, 10**9).base_offset == 1


def test_read_max_offset_is_exclusive():
    log = _log(5)
    chunk = log.read(1, 3, 10**9)
    assert chunk.base_offset == 1 and chunk.last_offset == 2
    assert list(chunk.ids) == [2, 3]


def test_read_at_leo_is_empty():
    log = _log(5)
    chunk = log.read(5, 100, 10**9)
    assert len(chunk) == 0
    assert chunk.base_offset == 5


@pytest.mark.parametrize("start", [6, 9])
def test_read_past_leo_is_out_of_range(start):
    # LocalLog.read: "Received request for offset ... but we only have log segments upto 5"
    log = _log(5)
    with pytest.raises(OffsetOutOfRangeException, match="segments upto 5"):
        log.read(start, 100, 10**9)


def test_empty_chunk_helpers():
    c = RecordChunk.empty(7)
    assert len(c) == 0 and c.base_offset == 7 and c.size_bytes == 0


# ------------------------------------------------------------------------------ truncation


def _two_epoch_log() -> Log:
    log = Log("t", 0)
    log.append_as_leader([1, 2, 3, 4, 5], [10] * 5, 1, 0)
    log.append_as_leader([6, 7, 8, 9, 10], [10] * 5, 2, 0)
    log.update_high_watermark(8)
    log.flush()
    return log


def test_truncate_to_lowers_leo_hw_recovery_point_and_epoch_entries():
    log = _two_epoch_log()
    assert log.recovery_point == 10
    assert log.truncate_to(6) == 4
    assert log.log_end_offset == 6
    assert log.high_watermark == 6
    assert log.recovery_point == 6
    assert log.leader_epoch_cache.entries == [EpochEntry(1, 0), EpochEntry(2, 5)]
    assert log.truncate_to(4) == 2
    assert log.high_watermark == 4
    # the epoch-2 entry started at 5 >= 4: gone
    assert log.leader_epoch_cache.entries == [EpochEntry(1, 0)]
    assert list(log.ids) == [1, 2, 3, 4]


def test_truncate_to_above_hw_keeps_hw():
    log = _two_epoch_log()
    log.truncate_to(9)
    assert log.high_watermark == 8
    assert log.log_end_offset == 9


def test_truncate_to_at_or_past_leo_is_a_no_op():
    log = _two_epoch_log()
    assert log.truncate_to(10) == 0
    assert log.truncate_to(50) == 0
    assert log.log_end_offset == 10 and log.high_watermark == 8
    assert len(log.leader_epoch_cache.entries) == 2


def test_truncate_fully_and_start_at():
    log = _two_epoch_log()
    log.truncate_fully_and_start_at(42)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (42, 42, 42)
    # LocalLog.updateLogEndOffset only lowers the recovery point: it stays at the old LEO
    assert log.recovery_point == 10
    assert log.leader_epoch_cache.entries == []
    assert log.append_as_leader([99], [1], 3, 0) == (42, 42)


def test_raising_log_start_drops_records_and_reanchors_epochs():
    log = _two_epoch_log()
    assert log.maybe_increment_log_start_offset(6) is True
    assert log.log_start_offset == 6
    assert log.log_end_offset == 10          # LEO unchanged
    assert len(log) == 4
    assert log.record_id_at(6) == 7          # offsets are preserved
    assert log.recovery_point == 10
    assert log.leader_epoch_cache.entries == [EpochEntry(2, 6)]


def test_log_start_never_moves_back_nor_past_hw():
    log = _two_epoch_log()
    log.maybe_increment_log_start_offset(3)
    assert log.maybe_increment_log_start_offset(2) is False
    assert log.maybe_increment_log_start_offset(3) is False
    assert log.log_start_offset == 3
    # no committed-range violation: records at/after HW (8) are never deleted; past the HW is
    # an OffsetOutOfRangeException (UnifiedLog.maybeIncrementLogStartOffset), the log unchanged
    with pytest.raises(OffsetOutOfRangeException, match="larger than the high watermark 8"):
        log.maybe_increment_log_start_offset(50)
    assert (log.log_start_offset, log.high_watermark, log.log_end_offset) == (3, 8, 10)
    assert log.maybe_increment_log_start_offset(8) is True


def test_flush_only_moves_recovery_point_forward():
    log = _log(5)
    log.flush(3)
    assert log.recovery_point == 3 and log.unflushed_messages() == 2
    log.flush(1)
    assert log.recovery_point == 3
    log.flush(99)
    assert log.recovery_point == 5


def test_write_back_is_durable_but_leaves_the_recovery_point():
    # the OS page cache reaching the disk is not a Kafka flush (UnifiedLog.flush / markFlushed)
    log = _log(5)
    log.write_back(4)
    assert (log.recovery_point, log.durable_offset) == (0, 4)
    assert log.unflushed_messages() == 5
    log.write_back(99)  # capped at the LEO
    assert log.durable_offset == 5
    assert log.flush(2) is True and (log.recovery_point, log.durable_offset) == (2, 5)
    assert log.flush(2) is False  # nothing new: Kafka does not touch lastFlushTime either


def test_truncation_lowers_both_flushed_prefixes():
    log = _log(6)
    log.flush(4)
    log.write_back(6)
    log.truncate_to(3)
    assert (log.recovery_point, log.durable_offset) == (3, 3)
    log.truncate_fully_and_start_at(10)
    # the recovery point only comes down (LocalLog.updateLogEndOffset); the empty log at 10
    # has nothing unwritten
    assert (log.recovery_point, log.durable_offset) == (3, 10)


# ------------------------------------------------------------------------------ epoch cache


def _cache(*pairs) -> LeaderEpochFileCache:
    c = LeaderEpochFileCache()
    for e, o in pairs:
        c.assign(e, o)
    return c


def test_assign_appends_monotonic_entries():
    c = _cache((0, 0), (1, 5), (2, 10))
    assert c.entries == [(0, 0), (1, 5), (2, 10)]
    assert c.latest_epoch() == 2


def test_assign_same_epoch_with_larger_offset_is_ignored():
    c = _cache((0, 0), (1, 5), (2, 10))
    assert c.assign(2, 15) is False
    assert c.assign(2, 10) is False
    assert c.entries == [(0, 0), (1, 5), (2, 10)]


def test_assign_same_epoch_with_smaller_offset_replaces_it():
    c = _cache((0, 0), (1, 5), (2, 10))
    assert c.assign(2, 8) is True
    assert c.entries == [(0, 0), (1, 5), (2, 8)]


def test_assign_drops_entries_with_larger_or_equal_epoch():
    c = _cache((0, 0), (1, 5), (2, 10))
    assert c.assign(1, 3) is True
    assert c.entries == [(0, 0), (1, 3)]


def test_assign_drops_entries_with_larger_or_equal_start_offset():
    c = _cache((0, 0), (1, 5), (2, 10))
    c.assign(3, 7)
    assert c.entries == [(0, 0), (1, 5), (3, 7)]
    c = _cache((0, 0), (2, 10))
    c.assign(1, 12)   # epoch 2 >= 1 goes, even though its offset is smaller
    assert c.entries == [(0, 0), (1, 12)]
    c = _cache((0, 0), (2, 10))
    c.assign(5, 10)   # same start offset as epoch 2: epoch 2 goes
    assert c.entries == [(0, 0), (5, 10)]


def test_entries_stay_strictly_increasing_in_both_fields():
    c = LeaderEpochFileCache()
    for e, o in [(1, 0), (3, 4), (2, 6), (5, 6), (4, 2), (6, 9), (6, 3)]:
        c.assign(e, o)
        epochs = [x.epoch for x in c.entries]
        offsets = [x.start_offset for x in c.entries]
        assert epochs == sorted(set(epochs))
        assert offsets == sorted(set(offsets))


def test_end_offset_for_the_four_cases():
    c = _cache((2, 10), (4, 20), (6, 30))
    leo = 40
    # undefined epoch -> (undefined, undefined)
    assert c.end_offset_for(UNDEFINED_EPOCH, leo) == UNDEF
    # requested == latest epoch -> (E, LEO)
    assert c.end_offset_for(6, leo) == (6, 40)
    # no entry with a larger epoch (and not the latest) -> undefined
    assert c.end_offset_for(7, leo) == UNDEF
    # no entry with epoch <= E -> (E, start offset of the first larger epoch)
    assert c.end_offset_for(1, leo) == (1, 10)
    # otherwise -> (largest epoch <= E, start offset of the next larger epoch)
    assert c.end_offset_for(3, leo) == (2, 20)
    assert c.end_offset_for(4, leo) == (4, 30)
    assert c.end_offset_for(5, leo) == (4, 30)
    assert c.end_offset_for(2, leo) == (2, 20)


def test_end_offset_for_on_an_empty_cache_is_undefined():
    assert LeaderEpochFileCache().end_offset_for(0, 10) == UNDEF


def test_truncate_from_end_removes_entries_starting_at_or_after_offset():
    c = _cache((2, 10), (4, 20), (6, 30))
    assert c.truncate_from_end(31) is False
    assert c.truncate_from_end(20) is True
    assert c.entries == [(2, 10)]


def test_truncate_from_start_reanchors_the_earliest_kept_entry():
    c = _cache((2, 10), (4, 20), (6, 30))
    assert c.truncate_from_start(25) is True
    assert c.entries == [(4, 25), (6, 30)]

    c = _cache((2, 10), (4, 20), (6, 30))
    c.truncate_from_start(20)
    assert c.entries == [(4, 20), (6, 30)]

    c = _cache((2, 10), (4, 20), (6, 30))
    c.truncate_from_start(35)
    assert c.entries == [(6, 35)]


def test_truncate_from_start_before_first_entry_changes_nothing():
    c = _cache((2, 10), (4, 20))
    assert c.truncate_from_start(5) is False
    assert c.truncate_from_start(10) is False
    assert c.entries == [(2, 10), (4, 20)]


def test_cache_copy_is_independent():
    c = _cache((1, 0), (2, 5))
    d = c.copy()
    d.assign(3, 9)
    assert c.entries == [(1, 0), (2, 5)]
    assert d != c and c == _cache((1, 0), (2, 5))


# -- LeaderEpochFileCache: undefined offsets, validation, and the pre-2.1 / pre-2.7 rules --------
def _legacy(*pairs) -> LeaderEpochFileCache:
    """0.11.0 - 2.0 semantics (rule leader_epoch_assign_truncates_conflicts off)."""
    c = LeaderEpochFileCache(truncates_conflicts=False, validates_entries=False)
    for e, o in pairs:
        c.assign(e, o)
    return c


def test_truncate_from_end_with_undefined_offset_changes_nothing():
    # LeaderEpochFileCacheTest.shouldNotResetEpochHistoryTailIfUndefinedPassed
    # (truncateFromEnd: "if (endOffset >= 0 && ...)")
    c = _cache((2, 6), (3, 8), (4, 11))
    assert c.truncate_from_end(UNDEFINED_EPOCH_OFFSET) is False
    assert len(c.entries) == 3
    assert _legacy((2, 6), (3, 8)).truncate_from_end(-1) is False  # clearAndFlushLatest, 0.11


def test_truncate_from_start_with_undefined_offset_changes_nothing():
    # LeaderEpochFileCacheTest.shouldNotResetEpochHistoryHeadIfUndefinedPassed
    c = _cache((2, 6), (3, 8), (4, 11))
    assert c.truncate_from_start(UNDEFINED_EPOCH_OFFSET) is False
    assert len(c.entries) == 3


def test_truncate_from_end_on_an_empty_cache_changes_nothing():
    # LeaderEpochFileCacheTest.shouldClearLatestOnEmptyCache
    c = LeaderEpochFileCache()
    assert c.truncate_from_end(7) is False and c.entries == []


def test_new_epoch_at_the_same_offset_replaces_the_old_one():
    # LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingStartOffsets (2.1+)
    assert _cache((2, 9), (3, 9)).entries == [EpochEntry(3, 9)]


def test_negative_epoch_or_start_offset_is_refused():
    # LeaderEpochFileCache.assign: IllegalArgumentException "Received invalid partition leader
    # epoch entry" (epoch < 0 since 2.1, startOffset < 0 too since 2.7)
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        LeaderEpochFileCache().assign(-1, 0)
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        LeaderEpochFileCache().assign(1, -5)
    # 2.1 - 2.6 only checked the epoch
    c = LeaderEpochFileCache(validates_entries=False)
    assert c.assign(1, -5) and c.entries == [EpochEntry(1, -5)]
    with pytest.raises(ValueError, match="assertion failed"):  # 0.11 - 2.0: Scala assert
        _legacy().assign(-1, 0)


def test_legacy_assign_allows_a_new_epoch_at_the_same_offset():
    # 2.0.0 LeaderEpochFileCacheTest.shouldAllowLeaderEpochToChangeEvenIfOffsetDoesNot
    assert _legacy((2, 9), (3, 9)).entries == [EpochEntry(2, 9), EpochEntry(3, 9)]


def test_legacy_assign_ignores_an_epoch_going_backwards():
    # 2.0.0 LeaderEpochFileCacheTest.shouldNotLetEpochGoBackwardsEvenIfMessageEpochsDo
    c = _legacy((1, 5), (2, 6))
    assert c.assign(1, 7) is False
    assert c.entries == [EpochEntry(1, 5), EpochEntry(2, 6)]
    assert c.end_offset_for(1, 8) == (1, 6)
    assert c.end_offset_for(2, 8) == (2, 8)
    # 2.1+ (LeaderEpochFileCacheTest.shouldEnforceMonotonicallyIncreasingEpochs): truncates
    c = _cache((1, 5), (2, 6))
    c.assign(1, 7)
    assert c.entries == [EpochEntry(1, 7)]
    assert c.end_offset_for(1, 8) == (1, 8) and c.end_offset_for(2, 8) == UNDEF


def test_legacy_assign_ignores_an_offset_going_backwards():
    # 2.0.0 LeaderEpochFileCacheTest.shouldNotLetOffsetsGoBackwardsEvenIfEpochsProgress
    assert _legacy((2, 6), (3, 5)).entries == [EpochEntry(2, 6)]
    # 2.1+ LeaderEpochFileCacheTest.shouldEnforceOffsetsIncreaseMonotonically
    assert _cache((2, 6), (3, 5)).entries == [EpochEntry(3, 5)]


def test_end_offset_for_an_epoch_below_the_first_by_version():
    # 2.0.0: shouldReturnUnsupportedIfRequestedEpochLessThanFirstEpoch;
    # 2.1+: shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch
    assert _legacy((5, 11), (6, 12), (7, 13)).end_offset_for(4, 0) == UNDEF
    assert _cache((5, 11), (6, 12), (7, 13)).end_offset_for(4, 0) == (4, 11)


def test_loading_a_checkpoint_replays_assign_since_2_7():
    # LeaderEpochFileCache constructor: checkpoint.read().forEach(this::assign) (2.7+, KAFKA-10435)
    file_entries = [(3, 10), (2, 5)]   # hand-edited, not monotonic
    assert LeaderEpochFileCache.from_checkpoint(file_entries).entries == [EpochEntry(2, 5)]
    old = LeaderEpochFileCache.from_checkpoint(file_entries, validates_entries=False)
    assert old.entries == [EpochEntry(3, 10), EpochEntry(2, 5)]  # 2.6 and older: as read
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        LeaderEpochFileCache.from_checkpoint([(0, 0), (-1, 4)])
    assert old.copy().validates_entries is False
