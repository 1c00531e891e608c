"""A replica's log (HW, log start, truncation, epochs, reads, recovery), ported from Kafka's tests.

Follows ``core/src/test/scala/unit/kafka/log/UnifiedLogTest.scala`` at 3.7.0 (``LogTest.scala``
up to 2.8.0, where these cases read the same) and the recovery cases of
``core/src/test/scala/unit/kafka/log/LogLoaderTest.scala`` (3.7.0), against
``kafkasim.core.log.Log``, ``kafkasim.core.leader_epoch.LeaderEpochFileCache`` and, for the
restart, ``kafkasim.runtime.log_manager.LogManager`` (LogManager.loadLogs + LogLoader.load).

Adaptation to kafkasim's API:

* ``appendAsLeader(records, leaderEpoch)`` is ``Log.append_as_leader(ids, sizes, epoch, ts)``
  (returns the first and last offsets, Kafka's LogAppendInfo first/last offset);
  ``appendAsFollower(records)`` is ``Log.append_as_follower(RecordChunk)``, the epochs carried
  per record (Kafka: per batch), the idempotent headers as ``ProducerBatch``.
* ``read(startOffset, maxLength, isolation, minOneMessage=true)`` is ``Log.read(start,
  max_offset, max_bytes)``: the isolation is the bound passed as ``max_offset`` (LOG_END: the
  LEO, HIGH_WATERMARK: the HW), and a read always returns at least one record (minOneMessage).
* ``maybeAssignEpochStartOffset(epoch, offset)`` is ``leader_epoch_cache.assign``.
* A log that "starts at N" (``createEmptyLogs(dir, N)``) is ``truncate_fully_and_start_at(N)``;
  ``log.size`` is ``sum(log.sizes)``. Segments do not exist (one per log), so retention's
  ``deleteOldSegments`` is the log-start move it causes (``maybe_increment_log_start_offset``).
* A restart (``log.close()`` then ``createLog(..., recoveryPoint, lastShutdownClean)``) is
  ``LogManager.load_logs`` on the same log dir, with the recovery point in
  recovery-point-offset-checkpoint and ``.kafka_cleanshutdown`` for a clean shutdown; a power
  loss (data not yet on disk is gone) is ``LogManager.lose_unsynced``.
* Producer state: a truncation rebuilds it in the log (``Log.truncate_to``,
  ``truncate_fully_and_start_at``), appends update it in the broker, the log's listener
  (``Broker.on_append``, ``ReplicaManager``); tests that need it call ``producer_state`` as
  ``tests/test_producer_state_manager_kafka.py`` does, which already ports
  testDuplicateAppends, testNonSequentialAppend's and testOldProducerEpoch's rules, the
  truncate-and-reload cases and truncateFullyAndStartAt.

Left out (not modelled by kafkasim; rolls by explicit ``Log.roll`` and retention by
``Log.delete_old_segments`` are ported at 3.9.0 in tests/test_checkpoint_s24_kafka.py): rolls by
size or time, indexes, time indexes (testLogRolls, testSizeBasedLogRoll,
testTimeBasedLogRoll*, testIndex*, testLogSegments*, testSplitOnOffsetOverflow,
testDegenerateSegmentSplit*; should*SizeBasedSegments*,
testCannotDeleteSegmentsAtOrAboveHighWatermark, testSegmentDeletionWithHighWatermarkInitialization
are in that file,
testRecoveryAfterCrashDuringSplitPhase*, testCorruptIndexRebuild, testBogusIndexSegmentsAreRemoved,
testFlushingEmptyActiveSegments); compaction and offset gaps, since a record's offset is its
position (testAppendAndReadWithNonSequentialOffsets, testReadAtLogGap, testReadWithMinMessage,
testReadWithTooSmallMaxLength, testAppendWithOutOfOrderOffsetsThrowsException,
testCompactedTopicConstraints, testOverCompactedLogRecovery*, testRebuildProducer*Compacted*);
transactions, LSO, markers and the transaction index (testFetchUpToLastStableOffset,
testTruncateBelowFirstUnstableOffset, the transaction and the logStartOffsetOpt (tiered storage)
of testTruncateFullyAndStart, testFirstUnstableOffset*, testLastStableOffset*,
testZombieCoordinator*, testTransaction*, testActiveProducers, testRebuildTransactionalState,
verification guards);
producer snapshots on segment rolls and retention, and producer-id expiration
(testProducerSnapshot*, testTakeSnapshotOnRoll*, testRetention*Snapshots, testProducerExpire*,
testLoadingLogKeepsLargestStrayProducerStateSnapshot, testSkipTruncateAndReload*; the snapshot
cases that fit one segment, testProducerIdMapTruncateTo, testProducerIdMapTruncateFullyAndStartAt
and testProducerIdMapOffsetUpdatedForNonIdempotentData, are in
tests/test_producer_state_manager_kafka.py);
message formats, compression, record validation and sizes (testCompressedMessages,
testMessageSizeCheck*, testLeaderEpochCacheClearedAfter*Downgrade*, testAppendWithNoTimestamp);
topic ids, partition metadata files, dir renames, failed log dirs, remote storage, the
LogOffsetsListener, timestamps (testFetchOffsetByTimestamp*); KRaft's RAFT_LEADER origin
(testAppendAsLeaderWithRaftLeader); ``maybeUpdateHighWatermark`` (no such method: the broker's
``set_follower_hw`` compares old and new; only its LEO bound is ported below).
"""

from __future__ import annotations

from array import array
from types import SimpleNamespace

import pytest

from kafkasim.core import producer_state as ps
from kafkasim.core.checkpoint import (
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    format_offsets,
    parse_epochs,
)
from kafkasim.core.errors import UnexpectedAppendOffsetException
from kafkasim.core.fake import FakeContext
from kafkasim.core.leader_epoch import EpochEntry
from kafkasim.core.log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    MAX_TIMESTAMP,
    NO_TIMESTAMP,
    Log,
    ProducerBatch,
    RecordChunk,
    TimestampAndOffset,
)
from kafkasim.runtime.log_manager import LogManager

SIZE = 10  # bytes a record
BIG = 10**9
OUT_OF_RANGE = r"(?i)out[ _]of[ _]range"  # Kafka: OffsetOutOfRangeException


def _log(start: int = 0) -> Log:
    """createLog; ``start``: createEmptyLogs(dir, start) (a log that begins at that offset)."""
    log = Log("foo", 0)
    if start:
        log.truncate_fully_and_start_at(start)
    return log


def _append(log: Log, n: int = 1, epoch: int = 0, pid: int = -1, seq: int = -1) -> tuple[int, int]:
    """appendAsLeader of one batch of ``n`` records (idempotent when ``seq`` >= 0)."""
    return log.append_as_leader(list(range(1, n + 1)), [SIZE] * n, epoch, 0, pid, 0, seq)


def _chunk(base: int, epochs: list[int], batches: tuple = ()) -> RecordChunk:
    """Records as a leader would send them to appendAsFollower: offsets from ``base``, one
    leader epoch per record."""
    n = len(epochs)
    return RecordChunk(
        base,
        array("i", epochs),
        array("i", range(1, n + 1)),
        array("q", [0] * n),
        array("i", [SIZE] * n),
        batches,
    )


def _offsets(chunk: RecordChunk) -> list[int]:
    return list(range(chunk.base_offset, chunk.base_offset + len(chunk)))


def _entries(log: Log) -> list[tuple[int, int]]:
    return [tuple(e) for e in log.leader_epoch_cache.epoch_entries()]


# --- high watermark ----------------------------------------------------------------------------


# UnifiedLogTest.testHighWatermarkMaintenance (3.7.0)
def test_high_watermark_maintenance():
    log = _log()
    assert log.high_watermark == 0  # initialized to 0
    _append(log, 3)
    assert log.high_watermark == 0  # not changed by append
    log.maybe_increment_high_watermark(1)  # as leader
    assert log.high_watermark == 1
    assert log.update_high_watermark(5) == 3  # cannot go past the LEO
    assert log.high_watermark == 3
    log.append_as_follower(_chunk(3, [0, 0, 0]))  # as follower
    log.update_high_watermark(6)
    assert log.high_watermark == 6
    log.truncate_to(3)  # adjusted by truncation
    assert log.high_watermark == 3
    assert _append(log, 3) == (3, 5)  # the leader assigns offsets from the LEO
    assert log.high_watermark == 3
    assert (log.log_end_offset, log.log_start_offset) == (6, 0)
    log.truncate_fully_and_start_at(4)  # full truncation resets it
    assert (log.log_end_offset, log.log_start_offset, log.high_watermark) == (4, 4, 4)


# UnifiedLogTest.testHighWatermarkMaintenance: updateHighWatermark is lower-bounded by the log
# start offset (UnifiedLog.updateHighWatermark: "if (messageOffset < logStartOffset)")
def test_update_high_watermark_is_not_below_the_log_start():
    log = _log()
    _append(log, 10)
    log.update_high_watermark(10)
    assert log.maybe_increment_log_start_offset(6)
    assert log.update_high_watermark(2) == 6
    assert log.high_watermark == 6


# UnifiedLogTest.testMaybeUpdateHighWatermarkAsFollower (3.7.0): only its bound (kafkasim has no
# maybeUpdateHighWatermark; update_high_watermark returns the new HW)
def test_follower_high_watermark_is_bound_by_the_log_end_offset():
    log = _log()
    for _ in range(100):
        _append(log)
    assert log.update_high_watermark(99) == 99
    assert log.update_high_watermark(100) == 100
    assert log.update_high_watermark(101) == 100  # bound by the log end offset
    assert log.high_watermark == 100


# --- appends and reads -------------------------------------------------------------------------


# UnifiedLogTest.testAppendInfoFirstOffset (3.7.0), without the roll
def test_append_info_first_offset():
    log = _log()
    assert _append(log, 3)[0] == 0
    assert _append(log, 3)[0] == 3
    assert _append(log, 3)[0] == 6


# UnifiedLogTest.testAppendAndReadWithSequentialOffsets (3.7.0)
def test_append_and_read_with_sequential_offsets():
    log = _log()
    for _ in range(50):
        _append(log)
    for i in range(50):
        read = log.read(i, log.log_end_offset, 1)
        assert read.base_offset == i and len(read) == 1  # "Offset read should match order"
    # "Reading beyond the last message returns nothing."
    assert len(log.read(50, log.log_end_offset, 100)) == 0


def _assert_non_empty_fetch(log: Log, offset: int, bound: int) -> None:
    read = log.read(offset, bound, BIG)
    assert read.size_bytes > 0
    assert all(o < bound for o in _offsets(read))
    assert read.base_offset == offset


def _assert_empty_fetch(log: Log, offset: int, bound: int) -> None:
    read = log.read(offset, bound, BIG)
    assert read.size_bytes == 0
    assert read.base_offset == offset


# UnifiedLogTest.testFetchUpToLogEndOffset (3.7.0): FetchIsolation.LOG_END
def test_fetch_up_to_log_end_offset():
    log = _log()
    _append(log, 3)
    _append(log, 2)
    for offset in range(log.log_start_offset, log.log_end_offset):
        _assert_non_empty_fetch(log, offset, log.log_end_offset)


# UnifiedLogTest.testFetchUpToHighWatermark (3.7.0): FetchIsolation.HIGH_WATERMARK
def test_fetch_up_to_high_watermark():
    log = _log()
    _append(log, 3)
    _append(log, 2)

    def assert_high_watermark_bounded_fetches():
        for offset in range(log.log_start_offset, log.high_watermark):
            _assert_non_empty_fetch(log, offset, log.high_watermark)
        for offset in range(log.high_watermark, log.log_end_offset + 1):
            _assert_empty_fetch(log, offset, log.high_watermark)

    assert_high_watermark_bounded_fetches()
    log.update_high_watermark(3)
    assert_high_watermark_bounded_fetches()
    log.update_high_watermark(5)
    assert_high_watermark_bounded_fetches()


# UnifiedLogTest.testHighWatermarkMetadataUpdatedAfterSegmentRoll (3.7.0), without the roll
def test_read_bounded_by_high_watermark_after_appends():
    log = _log()
    _append(log, 3)
    assert _offsets(log.read(0, log.high_watermark, 2048)) == []
    log.maybe_increment_high_watermark(log.log_end_offset)
    read = log.read(0, log.high_watermark, 2048)
    assert _offsets(read) == [0, 1, 2] and read.size_bytes == 3 * SIZE
    _append(log, 3)
    assert _offsets(log.read(3, log.high_watermark, 2048)) == []


# UnifiedLogTest.testReadOutOfRange (3.7.0): reading at the log end offset gives nothing
def test_read_at_the_log_end_offset_is_empty():
    log = _log(1024)
    _append(log)
    assert log.read(1025, log.log_end_offset, 1000).size_bytes == 0


# UnifiedLogTest.testReadOutOfRange (3.7.0): below the log start or past the LEO is an error
@pytest.mark.parametrize("offset", [0, 1026])
def test_read_out_of_range_is_an_error(offset):
    log = _log(1024)
    _append(log)
    with pytest.raises(Exception, match=OUT_OF_RANGE):
        log.read(offset, log.log_end_offset, 1000)


# --- follower appends --------------------------------------------------------------------------


# UnifiedLogTest.testAppendBelowExpectedOffsetThrowsException (3.7.0)
def test_append_as_follower_below_the_log_end_offset_is_refused():
    log = _log()
    _append(log)
    _append(log)
    with pytest.raises(UnexpectedAppendOffsetException):
        log.append_as_follower(_chunk(1, [0]))
    assert log.log_end_offset == 2 and len(log) == 2


# UnifiedLogTest.testAppendEmptyLogBelowLogStartOffsetThrowsException (3.7.0)
def test_append_as_follower_below_the_log_start_of_an_empty_log_is_refused():
    log = _log(7)
    assert (log.log_start_offset, log.log_end_offset) == (7, 7)
    with pytest.raises(UnexpectedAppendOffsetException, match="start at 4") as e:
        log.append_as_follower(_chunk(4, [0, 0, 0]))
    assert (e.value.first_offset, e.value.last_offset) == (4, 6)
    assert (log.log_start_offset, log.log_end_offset, len(log)) == (7, 7, 0)


# UnifiedLogTest.testDuplicateAppendToFollower (3.7.0): no sequence validation on a follower
def test_duplicate_append_to_follower():
    log = _log()
    assert log.log_end_offset == 0
    for base in (0, 2):
        log.append_as_follower(_chunk(base, [0, 0], (ProducerBatch(base, base + 1, 1, 0, 0),)))
        ps.update(log.producer_states, (log.producer_batches.last,))  # Broker.on_append
    assert log.log_end_offset == 4
    assert ps.last_entry(log.producer_states, 1).last_data_offset == 3


# UnifiedLogTest.testMultipleProducersWithDuplicatesInSingleAppend (3.7.0)
def test_multiple_producers_with_duplicates_in_single_append():
    log = _log()
    batches = (
        ProducerBatch(0, 0, 1, 0, 0),
        ProducerBatch(1, 1, 2, 0, 0),
        ProducerBatch(2, 2, 1, 0, 1),
        ProducerBatch(3, 3, 2, 0, 1),
        ProducerBatch(4, 4, 1, 0, 1),
    )  # pid 1 seq 1 again: a duplicate
    assert log.log_end_offset == 0
    log.append_as_follower(_chunk(0, [0] * 5, batches))
    ps.update(log.producer_states, log.producer_batches[:])  # Broker.on_append
    assert log.log_end_offset == 5
    assert len(log.producer_batches) == 5


# --- leader epochs on append -------------------------------------------------------------------


# UnifiedLogTest.shouldApplyEpochToMessageOnAppendIfLeader (3.7.0)
def test_leader_append_stamps_its_epoch_on_the_records():
    log = _log()
    log.leader_epoch_cache.assign(72, 50)  # maybeAssignEpochStartOffset(epoch, records.length)
    for _ in range(50):
        _append(log, epoch=72)
    for i in range(50):
        assert set(log.read(i, log.log_end_offset, 1).epochs) == {72}
    assert _entries(log) == [(72, 0)]


# UnifiedLogTest.followerShouldSaveEpochInformationFromReplicatedMessagesToTheEpochCache (3.7.0)
def test_follower_saves_the_epochs_of_replicated_records_in_the_epoch_cache():
    log = _log()
    for i in range(50):
        log.append_as_follower(_chunk(i, [42]))
    assert log.latest_epoch() == 42
    assert _entries(log) == [(42, 0)]


# --- log start offset (DeleteRecords, retention) -----------------------------------------------


# UnifiedLogTest.testLogDeletionAfterDeleteRecords (3.7.0)
def test_log_start_offset_after_delete_records():
    log = _log()
    for _ in range(15):
        _append(log)
    assert log.log_start_offset == 0
    log.update_high_watermark(log.log_end_offset)
    for start in (1, 6, 15):
        assert log.maybe_increment_log_start_offset(start)
        assert log.log_start_offset == start
        assert len(log) == 15 - start
    assert log.log_end_offset == 15


# UnifiedLogTest.testCannotIncrementLogStartOffsetPastHighWatermark (3.7.0)
def test_cannot_increment_log_start_offset_past_high_watermark():
    log = _log()
    for _ in range(100):
        _append(log)
    log.update_high_watermark(25)
    with pytest.raises(Exception, match=OUT_OF_RANGE):
        log.maybe_increment_log_start_offset(26)
    assert log.log_start_offset == 0


# UnifiedLogTest.testDeleteSnapshotsOnIncrementLogStartOffset (3.7.0): deleting records keeps
# the producer state
def test_incrementing_the_log_start_keeps_the_producer_state():
    log = _log()
    for pid in (1, 2):
        verdict, _dup = ps.check_append(log.producer_states, (pid, 0, 0, 0))
        assert verdict == "append"
        _append(log, pid=pid, seq=0)
        ps.update(log.producer_states, (log.producer_batches.last,))
    assert len(ps.active_producers(log.producer_states)) == 2
    log.update_high_watermark(log.log_end_offset)
    assert log.maybe_increment_log_start_offset(2)
    producers = ps.active_producers(log.producer_states)
    assert len(producers) == 2
    assert producers[2].last_seq == 0


# UnifiedLogTest.testProducerIdMapTruncateToWithNoSnapshots (3.7.0): the log rebuilds its
# producer state on truncation (rebuildProducerState), without the broker listening
def test_producer_state_truncate_to_with_no_snapshots():
    log = _log()
    assert log.listener is None
    for seq in (0, 1):
        _append(log, pid=1, seq=seq)
        ps.update(log.producer_states, (log.producer_batches.last,))  # Broker.on_append
    log.truncate_to(1)
    producers = ps.active_producers(log.producer_states)
    assert len(producers) == 1
    assert producers[1].last_seq == 0


# UnifiedLogTest.testTruncateFullyAndStart (3.7.0), its producer state without the transaction:
# truncateFullyAndStartAt leaves no active producer
def test_truncate_fully_and_start_at_forgets_the_producers():
    log = _log()
    _append(log, 3)
    _append(log, 2, pid=17, seq=0)
    ps.update(log.producer_states, (log.producer_batches.last,))
    assert len(ps.active_producers(log.producer_states)) == 1
    log.truncate_fully_and_start_at(2)
    assert ps.active_producers(log.producer_states) == {}
    assert (log.log_start_offset, log.log_end_offset) == (2, 2)


# UnifiedLogTest.shouldTruncateLeaderEpochsWhenDeletingSegments (3.7.0): retention deletes the
# first segment (offsets 0-4), i.e. the log start moves to 5
def test_log_start_move_removes_older_epoch_entries():
    log = _log()
    for _ in range(15):
        _append(log)
    cache = log.leader_epoch_cache
    cache.assign(0, 0)
    cache.assign(1, 5)
    cache.assign(2, 10)
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(5)
    assert cache.epoch_entries() == [EpochEntry(1, 5), EpochEntry(2, 10)]


# UnifiedLogTest.shouldUpdateOffsetForLeaderEpochsWhenDeletingSegments (3.7.0)
def test_log_start_move_reanchors_the_earliest_epoch_entry():
    log = _log()
    for _ in range(15):
        _append(log)
    cache = log.leader_epoch_cache
    cache.assign(0, 0)
    cache.assign(1, 7)
    cache.assign(2, 10)
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(5)
    assert cache.epoch_entries() == [EpochEntry(0, 5), EpochEntry(1, 7), EpochEntry(2, 10)]


# --- truncation --------------------------------------------------------------------------------


# UnifiedLogTest.testTruncateTo (3.7.0)
def test_truncate_to():
    msg_per_seg = 10
    log = _log()
    for _ in range(msg_per_seg):
        _append(log)
    assert log.log_end_offset == msg_per_seg
    last_offset, size = log.log_end_offset, sum(log.sizes)
    log.truncate_to(log.log_end_offset)  # keep the entire log
    assert (log.log_end_offset, sum(log.sizes)) == (last_offset, size)
    log.truncate_to(log.log_end_offset + 1)  # beyond the last offset
    assert (log.log_end_offset, sum(log.sizes)) == (last_offset, size)
    log.truncate_to(msg_per_seg // 2)  # somewhere in between
    assert log.log_end_offset == msg_per_seg // 2
    assert sum(log.sizes) < size
    log.truncate_to(0)  # the entire log
    assert (log.log_end_offset, sum(log.sizes)) == (0, 0)
    for _ in range(msg_per_seg):
        _append(log)
    assert (log.log_end_offset, sum(log.sizes)) == (last_offset, size)
    log.truncate_fully_and_start_at(log.log_end_offset - (msg_per_seg - 1))
    assert log.log_end_offset == last_offset - (msg_per_seg - 1)
    assert sum(log.sizes) == 0
    for _ in range(msg_per_seg):
        _append(log)
    assert log.log_end_offset > msg_per_seg
    assert sum(log.sizes) == size
    log.truncate_to(0)  # before the log's first offset
    assert (log.log_end_offset, sum(log.sizes)) == (0, 0)
    assert (log.log_start_offset, log.high_watermark) == (0, 0)


# UnifiedLog.truncateTo (3.7.0): "Cannot truncate partition ... to a negative offset"
def test_truncate_to_a_negative_offset_is_an_error():
    log = _log()
    _append(log, 3)
    with pytest.raises(ValueError, match="negative offset"):   # IllegalArgumentException
        log.truncate_to(-1)
    assert (log.log_start_offset, log.log_end_offset, len(log)) == (0, 3, 3)


# UnifiedLog.maybeIncrementHighWatermark (3.7.0): "High watermark ... update exceeds current log
# end offset" (updateHighWatermark, the follower's, clamps instead)
def test_maybe_increment_high_watermark_past_the_log_end_offset_is_an_error():
    log = _log()
    _append(log, 3)
    with pytest.raises(ValueError, match="exceeds current log end offset"):
        log.maybe_increment_high_watermark(4)
    assert log.high_watermark == 0
    assert log.maybe_increment_high_watermark(3)


# UnifiedLogTest.testTruncateToEndOffsetClearsEpochCache (3.7.0). Kafka appends the first batch
# at offset 27 of an empty log (a follower may skip offsets); kafkasim's log starts there first
def test_truncate_to_end_offset_clears_epoch_cache():
    log = _log(27)
    log.append_as_follower(_chunk(27, [19, 19]))
    assert log.leader_epoch_cache.latest_entry() == EpochEntry(19, 27)
    assert log.log_end_offset == 29

    def verify_truncation_clears_epoch_cache(epoch: int, truncation_offset: int) -> None:
        # becoming leader: maybeAssignEpochStartOffset(epoch, logEndOffset)
        log.leader_epoch_cache.assign(epoch, log.log_end_offset)
        assert log.leader_epoch_cache.latest_entry() == EpochEntry(epoch, 29)
        assert log.log_end_offset == 29
        # then follower, truncating at or beyond the LEO: the trivial entry at the end goes
        log.truncate_to(truncation_offset)
        assert log.leader_epoch_cache.latest_entry() == EpochEntry(19, 27)
        assert log.log_end_offset == 29

    verify_truncation_clears_epoch_cache(20, log.log_end_offset)
    verify_truncation_clears_epoch_cache(24, log.log_end_offset + 1)


def _manager(version: str = "3.7") -> tuple[FakeContext, LogManager]:
    """A broker's LogManager with an in-memory log dir; the FakeContext plays the broker."""
    ctx = FakeContext(kafka_version=version)
    ctx.cluster = SimpleNamespace(kafka_version=ctx.kafka_version)  # what load_logs reads
    return ctx, LogManager()


def _epoch_file(manager: LogManager, topic: str = "foo", partition: int = 0) -> list:
    text = manager.log_dir.read(f"{topic}-{partition}/{LEADER_EPOCH_CHECKPOINT}")
    return parse_epochs(text, "leader-epoch-checkpoint") if text else []


# UnifiedLogTest.shouldTruncateLeaderEpochCheckpointFileWhenTruncatingLog (3.7.0); the file is
# checked as well as the cache, and the cache's answers to OffsetsForLeaderEpoch (endOffsetFor)
def test_truncation_truncates_the_leader_epoch_checkpoint_file():
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    cache = log.leader_epoch_cache

    def append(epoch: int, start_offset: int, count: int) -> None:
        for i in range(count):
            log.append_as_follower(_chunk(start_offset + i, [epoch]))

    append(0, 0, 10)
    append(1, 10, 6)
    append(2, 16, 4)
    assert log.log_end_offset == 20
    assert _epoch_file(manager) == [(0, 0), (1, 10), (2, 16)]

    log.truncate_to(log.log_end_offset)  # no-op
    assert len(cache.epoch_entries()) == 3
    log.truncate_to(11)
    assert len(cache.epoch_entries()) == 2
    assert _epoch_file(manager) == [(0, 0), (1, 10)]
    assert cache.end_offset_for(1, log.log_end_offset) == (1, 11)
    assert cache.end_offset_for(0, log.log_end_offset) == (0, 10)
    log.truncate_to(10)
    assert len(cache.epoch_entries()) == 1
    assert cache.end_offset_for(0, log.log_end_offset) == (0, 10)
    log.truncate_to(0)
    assert len(cache.epoch_entries()) == 0
    assert _epoch_file(manager) == []


# UnifiedLogTest.testHighWatermarkMaintenance / testTruncateFullyAndStart (3.7.0), without the
# transaction: a full truncation clears the epoch cache (clearAndFlush) and its file
def test_truncate_fully_and_start_at_clears_the_epoch_cache_and_its_file():
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    _append(log, 3, epoch=1)
    _append(log, 2, epoch=3)
    log.update_high_watermark(5)
    assert _epoch_file(manager) == [(1, 0), (3, 3)]
    log.truncate_fully_and_start_at(2)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (2, 2, 2)
    assert log.leader_epoch_cache.epoch_entries() == []
    assert _epoch_file(manager) == []
    assert log.latest_epoch() == -1
    assert _append(log, 1, epoch=4) == (2, 2)
    assert _entries(log) == [(4, 2)]


# --- restart: LogLoaderTest --------------------------------------------------------------------


def _write_recovery_point(manager: LogManager, offset: int) -> None:
    """createLog(..., recoveryPoint = offset): the recovery point the log is opened with."""
    manager.log_dir.write_atomic(RECOVERY_POINT_CHECKPOINT, format_offsets([("foo", 0, offset)]))


# LogLoaderTest.testLogRecoversToCorrectOffset (3.7.0)
def test_log_recovers_to_correct_offset():
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    for _ in range(100):
        _append(log)
    assert log.log_end_offset == 100
    last_offset = log.log_end_offset

    _write_recovery_point(manager, last_offset)
    manager.load_logs(ctx)  # lastShutdownClean = false
    assert (log.recovery_point, log.log_end_offset) == (last_offset, 100)

    _write_recovery_point(manager, 10)
    manager.load_logs(ctx)
    # the recovery point is not moved after an unclean shutdown until the log is flushed
    assert (log.recovery_point, log.log_end_offset) == (10, 100)
    assert log.unflushed_messages() == 90
    log.flush()
    assert (log.recovery_point, log.log_end_offset) == (last_offset, 100)


# LogLoaderTest.testCleanShutdownFile (3.7.0): no recovery after a clean shutdown, whatever the
# checkpointed recovery point says
def test_clean_shutdown_file_skips_recovery():
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    for _ in range(100):
        _append(log)
    _write_recovery_point(manager, 0)
    manager.clean_shutdown_file = -1  # LogManager.shutdown: write(brokerEpoch), default -1
    manager.load_logs(ctx)
    assert log.log_end_offset == 100
    assert log.recovery_point == 100


# LogLoaderTest.testLogRecoveryIsCalledUponBrokerCrash (3.7.0): the clean shutdown flag, without
# the injected load errors. Kafka writes the file with broker epoch 0 (``write(0L)``) and
# LogManager.loadLogs takes any file as a clean shutdown (``cleanShutdownFileHandler.exists()``)
def test_clean_shutdown_file_is_consumed_by_load_logs():
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    _append(log, 20)
    _write_recovery_point(manager, 5)
    manager.clean_shutdown_file = 0
    manager.load_logs(ctx)  # hadCleanShutdown = true
    assert log.recovery_point == 20
    assert manager.clean_shutdown_file is False  # deleted once loadLogs read it
    manager.load_logs(ctx)  # no file: hadCleanShutdown = false
    assert log.recovery_point == 5
    assert manager.clean_shutdown_file is False


# LogLoaderTest.testReopenThenTruncate (3.7.0)
def test_reopen_then_truncate():
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    for _ in range(100):
        _append(log)
    manager.load_logs(ctx)  # lastShutdownClean = false
    log.truncate_to(3)
    assert log.log_end_offset == 3
    assert len(log) == 3


# LogLoaderTest.testLogRecoversForLeaderEpoch (3.7.0): recovery from the recovery point assigns
# the epochs of the recovered batches (LogSegment.recover) to the epoch cache again
def test_log_recovers_for_leader_epoch():
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    for offset, epoch in enumerate((1, 2, 2, 3)):
        log.append_as_follower(_chunk(offset, [epoch]))
    assert _entries(log) == [(1, 0), (2, 1), (3, 3)]
    log.leader_epoch_cache.truncate_from_end(2)  # deliberately remove some of the entries
    assert _entries(log) != [(1, 0), (2, 1), (3, 3)]
    manager.load_logs(ctx)  # lastShutdownClean = false, recovery point 0
    assert _entries(log) == [(1, 0), (2, 1), (3, 3)]


# LogSegmentTest.testRecoveryRebuildsEpochCache (2.7.0 / 3.7.0, KAFKA-10432): recovery rebuilds
# an empty epoch cache from the batches of epochs 0, 1, 1, 2 at 104, 106, 108, 110. From 2.1.1
# (KAFKA-7897, here the 2.2 profile) to 2.6.0 LogSegment.recover skipped epoch 0 ("> 0")
@pytest.mark.parametrize(("version", "expected"), [
    ("2.1", [(0, 104), (1, 106), (2, 110)]),
    ("2.2", [(1, 106), (2, 110)]),
    ("2.6", [(1, 106), (2, 110)]),
    ("2.7", [(0, 104), (1, 106), (2, 110)]),
    ("3.7", [(0, 104), (1, 106), (2, 110)]),
])
def test_recovery_rebuilds_epoch_cache(version, expected):
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "foo", 0)
    log.truncate_fully_and_start_at(104)
    log.append_as_follower(_chunk(104, [0, 0, 1, 1, 1, 1, 2, 2]))
    log.leader_epoch_cache.clear_and_flush()
    manager.load_logs(ctx)  # lastShutdownClean = false
    assert _entries(log) == expected
    assert _epoch_file(manager) == expected


# LogLoaderTest.testCorruptLog (3.7.0), as kafkasim models a crash: what did not reach the disk
# is gone (Kafka: the corrupt tail is truncated by recovery); LogLoader.load then truncates the
# epoch cache to the recovered LEO (truncateFromEnd(nextOffset)), the recovery point is
# min(checkpoint, LEO), and Partition.createLog's updateHighWatermark clamps the checkpointed HW
def test_unflushed_tail_is_lost_on_an_unclean_restart():
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    _append(log, 50, epoch=0)
    log.flush()  # fsync: recovery point 50
    _append(log, 30, epoch=1)
    log.maybe_increment_high_watermark(70)
    manager.checkpoint_high_watermarks()
    manager.checkpoint_recovery_points()
    assert _epoch_file(manager) == [(0, 0), (1, 50)]
    assert log.unflushed_messages() == 30

    assert manager.lose_unsynced(ctx) == 30  # power loss: the page cache is gone
    manager.load_logs(ctx)
    assert (log.log_start_offset, log.log_end_offset) == (0, 50)
    assert log.high_watermark == 50
    assert log.recovery_point == 50
    assert _entries(log) == [(0, 0)]
    assert _epoch_file(manager) == [(0, 0)]
    assert log.leader_epoch_cache.end_offset_for(0, log.log_end_offset) == (0, 50)


# LogLoaderTest.testLogRecoversToCorrectOffset (3.7.0) with the HW: the checkpointed HW is
# taken back as it was when nothing was lost (Partition.createLog -> updateHighWatermark)
def test_checkpointed_high_watermark_is_restored_on_restart():
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    _append(log, 40)
    log.maybe_increment_high_watermark(35)
    manager.checkpoint_high_watermarks()
    log.maybe_increment_high_watermark(40)  # not checkpointed
    offsets = manager._read_offsets(REPLICATION_OFFSET_CHECKPOINT)
    assert offsets == [("foo", 0, 35)]
    manager.load_logs(ctx)
    assert (log.high_watermark, log.log_end_offset) == (35, 40)


# --- more cases of UnifiedLogTest and LogLoaderTest (3.9.0-rc3; the same at 4.1.0) -------------


def test_log_reinitialize_after_manual_delete():
    """UnifiedLogTest.testLogReinitializeAfterManualDelete @3.9.0: a log with no data but a log
    start offset of 500 starts and ends there."""
    log = _log(500)
    assert (log.log_start_offset, log.log_end_offset) == (500, 500)
    assert _append(log) == (500, 500)


@pytest.mark.parametrize("messages", [0, 1, 25])
def test_garbage_collecting_segments_does_not_change_offset(messages):
    """UnifiedLogTest.testThatGarbageCollectingSegmentsDoesntChangeOffset @3.9.0: retention
    deleting every record up to the HW (deleteOldSegments: the log start moves to the HW, the
    active segment stays) leaves the LEO alone; a second pass deletes nothing; the next append
    gets the LEO."""
    log = _log()
    for _ in range(messages):
        _append(log)
    assert log.log_end_offset == messages
    log.update_high_watermark(messages)
    log.maybe_increment_log_start_offset(log.high_watermark)
    assert log.log_end_offset == messages
    assert log.maybe_increment_log_start_offset(log.high_watermark) is False
    assert log.log_end_offset == messages
    assert _append(log)[0] == messages


def test_delete_old_segments_moves_the_epoch_cache_with_the_log_start():
    """UnifiedLogTest.testDeleteOldSegments @3.9.0, the log start and epoch cache parts: with no
    HW nothing is deleted; the log start never passes the HW; once every record below the LEO
    is deleted, the cache keeps one entry, the latest epoch re-anchored at the LEO (100).
    ``assignEpochStartOffset(0, 40)`` changes nothing (epoch 0 already starts at 0)."""
    log = _log()
    for _ in range(100):
        _append(log, epoch=0)
    cache = log.leader_epoch_cache
    cache.assign(0, 40)
    cache.assign(1, 90)
    assert _entries(log) == [(0, 0), (1, 90)]
    log.maybe_increment_log_start_offset(log.high_watermark)   # no HW yet: nothing deleted
    assert log.log_start_offset == 0
    for hw in range(25, 31):
        log.update_high_watermark(hw)
        log.maybe_increment_log_start_offset(hw)
        assert log.log_start_offset <= hw
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(log.high_watermark)
    assert _entries(log) == [(1, 100)]


def test_fetch_offset_by_timestamp_includes_leader_epoch():
    """UnifiedLogTest.testFetchOffsetByTimestampIncludesLeaderEpoch @3.9.0: each lookup answers
    the epoch of the record found; EARLIEST / EARLIEST_LOCAL the first entry's epoch, LATEST the
    latest epoch, which an epoch assigned at the LEO after a leader change moves."""
    log = _log()
    assert log.fetch_offset_by_timestamp(0) is None
    t1 = 1000
    log.append_as_leader([1], [SIZE], 0, t1)
    log.append_as_leader([2], [SIZE], 1, t1 + 1)
    assert log.fetch_offset_by_timestamp(t1) == TimestampAndOffset(t1, 0, 0)
    assert log.fetch_offset_by_timestamp(t1 + 1) == TimestampAndOffset(t1 + 1, 1, 1)
    assert log.fetch_offset_by_timestamp(EARLIEST_TIMESTAMP) == \
        TimestampAndOffset(NO_TIMESTAMP, 0, 0)
    assert log.fetch_offset_by_timestamp(EARLIEST_LOCAL_TIMESTAMP) == \
        TimestampAndOffset(NO_TIMESTAMP, 0, 0)
    assert log.fetch_offset_by_timestamp(LATEST_TIMESTAMP) == \
        TimestampAndOffset(NO_TIMESTAMP, 2, 1)
    log.leader_epoch_cache.assign(2, 2)   # assignEpochStartOffset(2, 2)
    assert log.fetch_offset_by_timestamp(LATEST_TIMESTAMP) == \
        TimestampAndOffset(NO_TIMESTAMP, 2, 2)


def test_multiple_producer_ids_per_memory_record():
    """UnifiedLogTest.testMultipleProducerIdsPerMemoryRecord @3.9.0: four one-record batches of
    four producers appended as follower in one fetch are read back batch by batch with their
    producer id, base offset and base sequence."""
    log = _log()
    batches = tuple(ProducerBatch(i, i, i + 1, 0, 0) for i in range(4))
    log.append_as_follower(_chunk(0, [0, 0, 0, 0], batches))
    fetched = log.read(0, log.log_end_offset, BIG)
    assert [(b.producer_id, b.base_offset, b.base_sequence) for b in fetched.producer_batches] == \
        [(b.producer_id, b.base_offset, b.base_sequence) for b in batches]


def test_loading_log_deletes_producer_state_snapshots_past_log_end_offset():
    """UnifiedLogTest.testLoadingLogDeletesProducerStateSnapshotsPastLogEndOffset @3.9.0: a
    stray snapshot at 42 in an empty log's directory is gone once the log is loaded."""
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    log.producer_states.snapshots[42] = ps.SnapshotFile(42, ())
    manager.load_logs(ctx)
    assert log.producer_states.snapshots == {}


def test_log_end_less_than_start_after_reopen():
    """LogLoaderTest.testLogEndLessThanStartAfterReopen @3.9.0: a log reopened after an unclean
    shutdown whose recovered records all lie below the checkpointed log start (4) is emptied and
    restarted there (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd). Kafka gets there by
    corrupting the second segment; here the log-start-offset-checkpoint says 4 of a log that
    kept two records."""
    ctx, manager = _manager()
    log = manager.get_or_create_log(ctx, "foo", 0)
    _append(log, 2)
    manager.log_dir.write_atomic(LOG_START_OFFSET_CHECKPOINT, format_offsets([("foo", 0, 4)]))
    manager.load_logs(ctx)   # lastShutdownClean = false
    assert (log.log_start_offset, log.log_end_offset) == (4, 4)
    assert len(log) == 0
    assert _append(log) == (4, 4)


def test_truncate_fully_and_start_at_keeps_a_lower_recovery_point():
    """LocalLogTest.testTruncateFullyAndStartAt @3.9.0 (the same in LocalLogTest.java at
    4.1.0): 13 records never flushed, truncateFullyAndStartAt(10): the recovery point stays 0
    (only an updateLogEndOffset below it lowers it), the LEO is 10 and a read there is empty.
    A recovery point above the new start comes down to it."""
    log = _log()
    _append(log, 13)
    log.truncate_fully_and_start_at(10)
    assert log.recovery_point == 0
    assert log.log_end_offset == 10
    assert len(log.read(10, log.log_end_offset, BIG)) == 0
    assert log.unflushed_messages() == 10   # LEO - recovery point (what flush.messages counts)
    _append(log, 5)
    log.flush()
    assert log.recovery_point == 15
    log.truncate_fully_and_start_at(12)
    assert log.recovery_point == 12


def test_local_log_truncate_to():
    """LocalLogTest.testTruncateTo @3.9.0: 12 records never flushed, truncateTo(7): the
    recovery point stays 0, the LEO is 7, a read at 6 gets the one record left there, and the
    next append goes at 7."""
    log = _log()
    for _ in range(12):
        _append(log)
    assert log.log_end_offset == 12
    assert log.truncate_to(7) == 5
    assert log.recovery_point == 0
    assert log.log_end_offset == 7
    assert _offsets(log.read(6, log.log_end_offset, BIG)) == [6]
    assert _append(log) == (7, 7)
    assert log.log_end_offset == 8


def test_invalid_leader_epoch():
    """UnifiedLogTest.testInvalidLeaderEpoch @4.1.0 (KAFKA-18723): a fetch holding a batch of
    the follower's current leader epoch and then one of the next epoch: appendAsFollower(records,
    epoch) appends only the first batch, and the latest epoch is the first batch's."""
    log = _log()
    epoch = max(log.latest_epoch(), 0) + 1
    batches = (ProducerBatch(0, 9, 7, 0, 0), ProducerBatch(10, 19, 7, 0, 10))
    log.append_as_follower(_chunk(0, [epoch] * 10 + [epoch + 1] * 10, batches), epoch)
    assert log.log_end_offset == 10
    assert log.latest_epoch() == epoch
    assert list(log.producer_batches) == [batches[0]]
    # only a batch of a higher epoch: nothing is appended
    assert log.append_as_follower(_chunk(10, [epoch + 1] * 3), epoch) == epoch
    assert log.log_end_offset == 10
    # without the epoch (appendAsFollower(records) before 4.1) nothing is checked
    log.append_as_follower(_chunk(10, [epoch + 1] * 3))
    assert (log.log_end_offset, log.latest_epoch()) == (13, epoch + 1)


def test_fetch_offset_by_timestamp_with_max_timestamp_includes_timestamp():
    """UnifiedLogTest.testFetchOffsetByTimestampWithMaxTimestampIncludesTimestamp @3.9.0: no
    answer on an empty log; MAX_TIMESTAMP finds the record of the largest timestamp (the second
    of three), with that timestamp and its epoch."""
    log = _log()
    assert log.fetch_offset_by_timestamp(0) is None
    t1 = 1000
    for ts in (t1, t1 + 1, t1):
        log.append_as_leader([1], [SIZE], 0, ts)
    assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP) == TimestampAndOffset(t1 + 1, 1, 0)


def test_segment_truncate():
    """LogSegmentTest.testTruncate @3.9.0, on kafkasim's one-segment log (based at 40): two
    records appended and read back, the last truncated off, a read then gets only the first;
    thirty times over, one offset further each time."""
    log = _log(40)
    offset = 40
    for _ in range(30):
        first, _ = _append(log)
        second, _ = _append(log)
        assert (first, second) == (offset, offset + 1)
        assert _offsets(log.read(offset, log.log_end_offset, BIG)) == [offset, offset + 1]
        log.truncate_to(offset + 1)
        assert _offsets(log.read(offset, log.log_end_offset, BIG)) == [offset]
        offset += 1


def test_reload_largest_timestamp_and_next_offset_after_truncation():
    """LogSegmentTest.testReloadLargestTimestampAndNextOffsetAfterTruncation @3.9.0 (without
    the time index): 30 records at 40.. stamped ten times their offset, truncated to 41: the
    next offset is 41 and the largest timestamp that of the one record left (400)."""
    log = _log(40)
    for offset in range(40, 70):
        log.append_as_leader([1], [SIZE], 0, offset * 10)
    assert log.log_end_offset == 70
    log.truncate_to(41)
    assert log.log_end_offset == 41
    assert log.fetch_offset_by_timestamp(MAX_TIMESTAMP) == TimestampAndOffset(400, 40, 0)
