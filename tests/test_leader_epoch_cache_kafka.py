"""LeaderEpochFileCache driven by Kafka's method names, following the cases of Kafka's
core/src/test/scala/unit/kafka/server/epoch/LeaderEpochFileCacheTest.scala (trunk 1eb7644).

Each test names the Kafka test it follows; the scenarios and code are our own. Kafka's
``Optional`` / ``OptionalInt`` results are None or the value here."""

from __future__ import annotations

import pytest

from kafkasim.core.leader_epoch import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEntry,
    LeaderEpochFileCache,
)


class _File:
    """A leader-epoch-checkpoint that remembers every write."""

    def __init__(self) -> None:
        self.writes: list[list[EpochEntry]] = []

    def write(self, entries) -> None:
        self.writes.append(list(entries))

    def read(self) -> list[EpochEntry]:
        return self.writes[-1] if self.writes else []


def _cache(*pairs: tuple[int, int]) -> LeaderEpochFileCache:
    cache = LeaderEpochFileCache(checkpoint=_File())
    for epoch, start in pairs:
        cache.assign(epoch, start)
    return cache


# testPreviousEpoch
def test_previous_epoch_is_the_epoch_before_the_latest_entry():
    cache = _cache()
    assert cache.previous_epoch() is None
    cache.assign(2, 10)
    assert cache.previous_epoch() is None
    cache.assign(4, 15)
    assert cache.previous_epoch() == 2
    cache.assign(10, 20)
    assert cache.previous_epoch() == 4
    cache.truncate_from_end_async_flush(18)
    assert cache.previous_epoch() == 2


# shouldAddEpochAndMessageOffsetToCache / shouldFetchLatestEpochOfEmptyCache
def test_latest_epoch_is_none_when_empty_and_its_end_offset_is_the_leo():
    cache = _cache()
    assert cache.latest_epoch() is None
    assert not cache.non_empty()
    assert cache.latest_entry() is None and cache.earliest_entry() is None
    cache.assign(2, 10)
    assert cache.latest_epoch() == 2
    assert cache.non_empty()
    assert cache.epoch_entries() == [EpochEntry(2, 10)]
    assert cache.end_offset_for(2, 11) == (2, 11)


# shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned /
# shouldNotOverwriteOffsetForALeaderEpochOnceItHasBeenAssigned
def test_a_later_offset_for_the_latest_epoch_is_ignored_and_an_earlier_one_replaces_it():
    cache = _cache((2, 9))
    cache.assign(2, 10)
    assert cache.epoch_entries() == [EpochEntry(2, 9)]
    cache.assign(2, 6)
    assert cache.epoch_entries() == [EpochEntry(2, 6)]


# shouldEnforceMonotonicallyIncreasingStartOffsets
def test_a_higher_epoch_at_the_same_offset_replaces_the_entry():
    cache = _cache((2, 9), (3, 9))
    assert cache.epoch_entries() == [EpochEntry(3, 9)]


# shouldReturnUnsupportedIfNoEpochRecorded(AndUndefinedEpochRequested) /
# shouldReturnUndefinedOffsetIfUndefinedEpochRequested /
# shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked
def test_end_offset_for_answers_undefined_for_unknown_epochs():
    undefined = (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    assert _cache().end_offset_for(0, 0) == undefined
    assert _cache().end_offset_for(UNDEFINED_EPOCH, 73) == undefined
    assert _cache((2, 11), (3, 12)).end_offset_for(UNDEFINED_EPOCH, 0) == undefined
    assert _cache((2, 100)).end_offset_for(3, 100) == undefined


# shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch /
# shouldTruncateIfMatchingEpochButEarlierStartingOffset
def test_end_offset_for_below_the_first_epoch_and_after_a_rewrite():
    assert _cache((5, 11), (6, 12), (7, 13)).end_offset_for(4, 0) == (4, 11)
    cache = _cache((5, 11), (6, 12), (7, 13))
    cache.assign(7, 12)   # epoch 7 now starts where epoch 6 did: epoch 6 is gone
    assert cache.end_offset_for(5, 0) == (5, 12)
    assert cache.end_offset_for(6, 0) == (5, 12)


# shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested
def test_end_offset_for_a_missing_epoch_is_the_start_of_the_next_one():
    cache = _cache((0, 10), (2, 13), (4, 17))
    assert cache.end_offset_for(1, 0) == (0, 13)
    assert cache.end_offset_for(2, 0) == (2, 17)
    assert cache.end_offset_for(3, 0) == (2, 17)


# shouldEnforceMonotonicallyIncreasingEpochs
def test_assigning_an_older_epoch_at_a_later_offset_drops_the_newer_epochs():
    cache = _cache((1, 5), (2, 6))
    cache.assign(1, 7)
    assert cache.latest_epoch() == 1
    assert cache.end_offset_for(1, 8) == (1, 8)
    assert cache.end_offset_for(2, 8) == (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    assert cache.epoch_entries() == [EpochEntry(1, 7)]


# shouldEnforceOffsetsIncreaseMonotonically
def test_assigning_a_newer_epoch_at_an_earlier_offset_drops_the_conflicting_entry():
    assert _cache((2, 6), (3, 5)).epoch_entries() == [EpochEntry(3, 5)]


# shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages (epochs 0-2, record by record)
def test_end_offsets_while_leaders_change_many_times():
    cache = _cache()
    for offset in range(9):
        cache.assign(offset // 3, offset)
    assert cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(1, 3), EpochEntry(2, 6)]
    assert cache.end_offset_for(2, 9) == (2, 9)
    assert cache.end_offset_for(0, 9) == (0, 3)
    assert cache.end_offset_for(1, 9) == (1, 6)


# shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries /
# shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest
def test_truncate_from_end_async_flush():
    cache = _cache((2, 6), (3, 8), (4, 11))
    cache.truncate_from_end_async_flush(8)
    assert cache.epoch_entries() == [EpochEntry(2, 6)]
    cache = _cache((2, 6), (3, 8), (4, 11))
    cache.truncate_from_end_async_flush(9)
    assert cache.latest_epoch() == 3
    assert cache.epoch_entries() == [EpochEntry(2, 6), EpochEntry(3, 8)]


@pytest.mark.parametrize(("start", "expected"), [
    (8, [(3, 8), (4, 11)]),            # shouldPreserveResetOffsetOnClearEarliestIfOneExists
    (9, [(3, 9), (4, 11)]),            # shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs
    (1, [(2, 6), (3, 8), (4, 11)]),    # shouldNotClearAnythingIfOffsetToEarly
    (6, [(2, 6), (3, 8), (4, 11)]),    # shouldNotClearAnythingIfOffsetToFirstOffset
    (11, [(4, 11)]),                   # shouldRetainLatestEpochOnClearAllEarliest
    (15, [(4, 15)]),                   # shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset
    # shouldNotResetEpochHistoryHeadIfUndefinedPassed
    (UNDEFINED_EPOCH_OFFSET, [(2, 6), (3, 8), (4, 11)]),
])
def test_truncate_from_start_async_flush(start, expected):
    cache = _cache((2, 6), (3, 8), (4, 11))
    cache.truncate_from_start_async_flush(start)
    assert cache.epoch_entries() == [EpochEntry(*e) for e in expected]


# shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest2
def test_truncate_from_start_between_epochs_keeps_the_older_epoch_from_there():
    cache = _cache((0, 0), (1, 7), (2, 10))
    cache.truncate_from_start_async_flush(5)
    assert cache.epoch_entries() == [EpochEntry(0, 5), EpochEntry(1, 7), EpochEntry(2, 10)]


# shouldNotResetEpochHistoryTailIfUndefinedPassed / shouldClearEarliestOnEmptyCache /
# shouldClearLatestOnEmptyCache / shouldFetchEndOffsetOfEmptyCache
def test_undefined_offsets_and_empty_caches_change_nothing():
    cache = _cache((2, 6), (3, 8), (4, 11))
    cache.truncate_from_end_async_flush(UNDEFINED_EPOCH_OFFSET)
    assert len(cache.epoch_entries()) == 3
    empty = _cache()
    empty.truncate_from_start_async_flush(7)
    empty.truncate_from_end_async_flush(7)
    assert empty.epoch_entries() == [] and empty.checkpoint.writes == []
    assert empty.epoch_for_offset(5) is None
    assert empty.end_offset_for(7, 0) == (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


# shouldClearAllEntries
def test_clear_and_flush_empties_the_cache_and_its_file():
    cache = _cache((2, 6), (3, 8), (4, 11))
    cache.clear_and_flush()
    assert cache.epoch_entries() == [] and cache.checkpoint.read() == []


def test_clear_leaves_the_file_as_it_was():
    # LeaderEpochFileCache.clear (no test of its own in Kafka): entries gone, no write
    cache = _cache((2, 6))
    cache.clear()
    assert not cache.non_empty() and cache.checkpoint.read() == [EpochEntry(2, 6)]


# testFindPreviousEpoch
def test_previous_epoch_of_an_epoch():
    cache = _cache()
    assert cache.previous_epoch(2) is None
    cache.assign(2, 10)
    assert cache.previous_epoch(2) is None
    cache.assign(4, 15)
    assert cache.previous_epoch(4) == 2
    cache.assign(10, 20)
    assert cache.previous_epoch(10) == 4
    assert cache.previous_epoch(7) == 4   # lowerKey: any epoch, cached or not
    cache.truncate_from_end_async_flush(18)
    assert cache.previous_epoch(cache.latest_epoch()) == 2


# testFindPreviousEntry
def test_previous_entry():
    cache = _cache()
    assert cache.previous_entry(2) is None
    cache.assign(2, 10)
    assert cache.previous_entry(2) is None
    cache.assign(4, 15)
    assert cache.previous_entry(4) == EpochEntry(2, 10)
    cache.assign(10, 20)
    assert cache.previous_entry(10) == EpochEntry(4, 15)
    cache.truncate_from_end_async_flush(18)
    assert cache.previous_entry(cache.latest_epoch()) == EpochEntry(2, 10)


# testFindNextEpoch
def test_next_epoch():
    cache = _cache((0, 0), (1, 100), (2, 200))
    assert [cache.next_epoch(e) for e in (-1, 0, 1, 2, 100)] == [0, 1, 2, None, None]


# testGetEpochEntry
def test_epoch_entry():
    cache = _cache((2, 100), (3, 500), (5, 1000))
    assert cache.epoch_entry(2) == EpochEntry(2, 100)
    assert cache.epoch_entry(5) == EpochEntry(5, 1000)
    assert cache.epoch_entry(4) is None and cache.epoch_entry(6) is None
    assert cache.earliest_entry() == EpochEntry(2, 100)
    assert cache.latest_entry() == EpochEntry(5, 1000)


# shouldFetchEpochForGivenOffset
def test_epoch_for_offset():
    cache = _cache((0, 10), (1, 20), (5, 30))
    assert [cache.epoch_for_offset(o) for o in (25, 20, 30, 50, 5)] == [1, 1, 5, 5, None]


# shouldWriteCheckpointOnTruncation
def test_truncations_write_the_checkpoint():
    cache = _cache((2, 6), (3, 8), (4, 11))
    cache.truncate_from_end_async_flush(11)
    cache.truncate_from_start_async_flush(8)
    assert cache.checkpoint.read() == [EpochEntry(3, 8)]


# LeaderEpochFileCache.assign(List<EpochEntry>) (used by UnifiedLog when a remote log's epochs
# are restored): every entry by the single-entry rules, one write of the file
def test_assign_a_list_of_entries_writes_the_file_once():
    cache = _cache()
    cache.assign([EpochEntry(0, 0), EpochEntry(1, 5), EpochEntry(1, 9), EpochEntry(3, 12)])
    assert cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(1, 5), EpochEntry(3, 12)]
    assert cache.checkpoint.writes == [cache.epoch_entries()]
    cache.assign([EpochEntry(3, 20)])   # nothing changes, the file is still written
    assert len(cache.checkpoint.writes) == 2
    cache.assign([])
    assert len(cache.checkpoint.writes) == 2
    with pytest.raises(ValueError, match="invalid partition leader epoch entry"):
        cache.assign([EpochEntry(-1, 0)])
    with pytest.raises(TypeError, match="start_offset"):
        cache.assign(4)


def test_epoch_with_offsets_and_entries_in_range():
    # epochWithOffsets and epochEntriesInRange (RemoteLogManager's queries; the cache is
    # unchanged by the range query)
    cache = _cache((0, 0), (1, 7), (2, 10))
    assert cache.epoch_with_offsets() == {0: 0, 1: 7, 2: 10}
    assert cache.epoch_entries_in_range(5, 10) == [EpochEntry(0, 5), EpochEntry(1, 7)]
    assert cache.epoch_entries_in_range(-1, 8) == [EpochEntry(0, 0), EpochEntry(1, 7)]
    assert cache.epoch_entries() == [EpochEntry(0, 0), EpochEntry(1, 7), EpochEntry(2, 10)]
    assert len(cache.checkpoint.writes) == 3


# shouldPersistEpochsBetweenInstances (withCheckpoint: same entries, another file)
def test_with_checkpoint_copies_the_entries_to_another_file():
    cache = _cache((2, 6))
    other = _File()
    moved = cache.with_checkpoint(other)
    assert moved.epoch_entries() == [EpochEntry(2, 6)] and other.writes == []
    moved.assign(3, 9)
    assert other.read() == [EpochEntry(2, 6), EpochEntry(3, 9)]
    assert cache.epoch_entries() == [EpochEntry(2, 6)]
    reloaded = LeaderEpochFileCache.from_checkpoint(other.read())
    assert reloaded.epoch_entries() == other.read()


# --- more cases of LeaderEpochFileCacheTest (3.9.0-rc3, the same at 4.1.0) -------------------


def test_undefined_epoch_requested_of_an_empty_cache():
    """LeaderEpochFileCacheTest.shouldReturnUnsupportedIfNoEpochRecordedAndUndefinedEpochRequested
    @3.9.0: a request for UNDEFINED_EPOCH of an empty cache is (UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET), whatever the log end offset."""
    cache = _cache()
    assert cache.end_offset_for(UNDEFINED_EPOCH, 73) == (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def test_end_offset_of_a_previous_epoch_is_the_start_of_the_next():
    """LeaderEpochFileCacheTest.shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedFor
    PreviousEpoch @3.9.0: the same epoch assigned again at a later offset keeps its first start;
    the end of epoch 2 is where epoch 3 starts."""
    cache = _cache((1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16))
    assert cache.epoch_entries() == [EpochEntry(1, 11), EpochEntry(2, 13), EpochEntry(3, 15)]
    assert cache.end_offset_for(2, 17) == (2, 15)


def test_assigning_the_latest_epoch_again_later_changes_nothing():
    """LeaderEpochFileCacheTest.shouldNotUpdateEpochAndStartOffsetIfItDidNotChange @3.9.0 (and
    shouldReturnLogEndOffsetIfLatestEpochRequested): one entry, at the first offset; the latest
    epoch ends at the log end offset. The second assign writes nothing."""
    cache = _cache((2, 6))
    assert cache.assign(2, 7) is False
    assert cache.epoch_entries() == [EpochEntry(2, 6)]
    assert len(cache.checkpoint.writes) == 1
    cache = _cache((2, 11), (2, 12))
    assert cache.end_offset_for(2, 14) == (2, 14)


def test_epochs_that_do_not_start_from_zero():
    """LeaderEpochFileCacheTest.shouldSupportEpochsThatDoNotStartFromZero @3.9.0."""
    cache = _cache((2, 6))
    assert cache.end_offset_for(2, 7) == (2, 7)
    assert cache.epoch_entries() == [EpochEntry(2, 6)]


def test_end_offsets_as_leaders_change_many_times():
    """LeaderEpochFileCacheTest.shouldIncreaseAndTrackEpochsAsLeadersChangeManyTimes @3.9.0:
    epoch 1 at the same start offset as epoch 0 replaces it (assign drops the entries at or
    after the new start offset), so epoch 0 then answers (0, 0)... as an epoch below the first
    entry: the first entry's start offset, with the requested epoch (KAFKA-7415)."""
    cache = _cache((0, 0))
    cache.assign(1, 0)
    assert cache.latest_epoch() == 1
    assert cache.epoch_entries() == [EpochEntry(1, 0)]
    assert cache.end_offset_for(1, 0) == (1, 0)
    assert cache.end_offset_for(0, 0) == (0, 0)
    assert cache.end_offset_for(1, 5) == (1, 5)
    assert cache.end_offset_for(0, 5) == (0, 0)
    cache.assign(2, 5)
    assert cache.end_offset_for(2, 10) == (2, 10)
    assert cache.end_offset_for(1, 10) == (1, 5)
    assert cache.end_offset_for(0, 10) == (0, 0)


def test_truncate_from_start_between_epoch_boundaries():
    """LeaderEpochFileCacheTest.shouldUpdateOffsetBetweenEpochBoundariesOnClearEarliest @3.9.0:
    a log start between the starts of epochs 3 and 4 drops epoch 2 and re-anchors epoch 3 there;
    the file is rewritten."""
    cache = _cache((2, 6), (3, 8), (4, 11))
    cache.truncate_from_start_async_flush(9)
    assert cache.epoch_entries() == [EpochEntry(3, 9), EpochEntry(4, 11)]
    assert cache.checkpoint.read() == [EpochEntry(3, 9), EpochEntry(4, 11)]
