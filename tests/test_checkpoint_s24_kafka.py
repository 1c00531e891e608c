"""Segments, retention, partition.metadata and the HW checkpoint (s24), from Kafka's tests.

Ports, read at tag 3.9.0-rc3 of the apache mirror unless a docstring names another:
* core/src/test/scala/unit/kafka/log/UnifiedLogTest.scala: testDeleteOldSegments,
  testLogDeletionAfterDeleteRecords, testLogDeletionAfterClose (its first half),
  shouldDeleteSizeBasedSegments, shouldNotDeleteSizeBasedSegmentsWhenUnderRetentionSize,
  shouldDeleteTimeBasedSegmentsReadyToBeDeleted,
  shouldNotDeleteTimeBasedSegmentsWhenNoneReadyToBeDeleted,
  shouldNotDeleteSegmentsWhenPolicyDoesNotIncludeDelete,
  shouldDeleteSegmentsReadyToBeDeletedWhenCleanupPolicyIsCompactAndDelete,
  shouldDeleteStartOffsetBreachedSegmentsWhenPolicyDoesNotIncludeDelete,
  testSegmentDeletionWithHighWatermarkInitialization,
  testCannotDeleteSegmentsAtOrAboveHighWatermark,
  testRetentionIdempotency, testDeletableSegmentsFilter, testDeletableSegmentsIteration,
  testRollSegmentThatAlreadyExists (the empty active segment is kept),
  testTakeSnapshotOnRollAndDeleteSnapshotOnRecoveryPointCheckpoint,
  testRetentionDeletesProducerStateSnapshots, testLogStartOffsetMovementDeletesSnapshots,
  testThatGarbageCollectingSegmentsDoesntChangeOffset,
  testLogFlushesPartitionMetadataOnClose, testNoOpWhenKeepPartitionMetadataFileIsFalse (at 2.7,
  where kafkasim's logs have no partition.metadata), testLogFailsWhenInconsistentTopicIdSet;
* core/src/test/scala/unit/kafka/log/LogManagerTest.scala: testCreateLog,
  testRecoveryDirectoryMappingWithTrailingSlash, testRecoveryDirectoryMappingWithRelativeDirectory,
  testTimeBasedFlush, testIsStrayKraftReplicaWithEmptyImage, testIsStrayKraftReplicaInImage,
  testIsStrayKraftReplicaInImageWithRemoteReplicas, testIsStrayKraftMissingTopicId (and
  storage's LogManagerTest.testIsStrayReplica @4.3.0), testCleanupExpiredSegments,
  testCleanupSegmentsToMaintainSize, testDoesntCleanLogsWithCompactDeletePolicy,
  testDoesntCleanLogsWithCompactPolicy (LogManager.cleanupLogs, called directly: kafkasim does not
  schedule the retention task);
* storage/src/test/java/org/apache/kafka/storage/internals/log/LocalLogTest.java (4.3.0,
  confluentinc a9ce322153): testRollEmptyActiveSegment, testNewSegmentsAfterRoll,
  testRollSegmentThatAlreadyExists, testTruncateFullyAndStartAt, testTruncateTo,
  testNonActiveSegmentsFrom (segments as base offsets; file suffixes, the deleted segments
  returned and testRollSegmentErrorWhenNextOffsetIsIllegal's updateLogEndOffset are not
  modelled; kafkasim's Log is the UnifiedLog, whose roll flushes, so the recovery points
  asserted are UnifiedLog's, not LocalLog's 0);
* core/src/test/scala/unit/kafka/server/ReplicaManagerTest.scala: testPartitionMetadataFile on a
  running cluster (KRaft 4.3, ZooKeeper 3.0-3.9; ZooKeeper 2.8 in
  tests/test_zk_topic_ids_kafka.py, with the LeaderAndIsr topic id cases);
* core/src/test/scala/unit/kafka/server/HighwatermarkPersistenceTest.scala and
  ReplicaManager.checkpointHighWatermarks (3.9.0-rc3, 4.3.0 = confluentinc a9ce322153): only
  the hosted partitions' HWs, nothing written without one.

Adaptation: Kafka rolls a segment when the next batch would overflow segment.bytes; kafkasim
does not roll by size, so ``_append_rolling`` rolls where Kafka would (``per_segment`` records
of one size fill a segment). Time is a ``now`` argument (``Log.delete_old_segments(now)``,
``LogManager.cleanup_logs(ctx)`` at ``ctx.now``): Kafka's MockTime. Segments are
``kafkasim.core.log_segments.LogSegment`` views (base offset, size, largest timestamp).

Not ported: segment files, indexes, lastModified times and file-delete delays (the assertions on
``log.dir.list``, setLastModified, testLogDeletionAfterClose's ``log.delete()``), producer
the asynchronous deletion of snapshot files (file.delete.delay.ms), remote storage
(testCheckpointLogStartOffsetForRemoteTopic, testActiveSegmentDeletion*RemoteStorage,
testRetentionOnLocalLog*), directory renames (testTopicIdTransfersAfterDirectoryRename,
testTopicIdFlushesBeforeDirectoryRename), ReplicaManager.markPartitionOffline (kafkasim's
partitions are never offline).
"""

from __future__ import annotations

import os

import pytest

from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.image import MetadataImage
from kafkasim.core.checkpoint import (
    PARTITION_METADATA_FILE,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    OffsetCheckpointFile,
)
from kafkasim.core.errors import InconsistentTopicIdException, OffsetOutOfRangeException
from kafkasim.core.fake import FakeContext
from kafkasim.core.log import Log
from kafkasim.core.log_segments import (
    deletable_segments,
    log_segments,
    non_active_log_segments_from,
)
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.log_manager import LOG_MANAGER_INITIAL_TASK_DELAY_MS, LogManager
from tests.test_unified_log_kafka import SIZE, _manager

NOW = 1_700_000_000_000   # MockTime's start (Kafka: the wall clock when the test began)
TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAQ"
OTHER_TOPIC_ID = "AAAAAAAAAAAAAAAAAAAAAg"


def _log(version: str = "3.9", **config):
    """createLog(logDir, createLogConfig(...)): a LogManager's log, its topic config overridden."""
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "foo", 0)
    log.config = {**log.config, **config}
    return ctx, manager, log


def _append_rolling(log, count: int, per_segment: int, timestamp: int = NOW) -> None:
    """``count`` single-record appends as leader in epoch 0, rolling before an append that
    would overflow a segment of ``per_segment`` records (UnifiedLog.maybeRoll by size)."""
    for _ in range(count):
        bases = [s.base_offset for s in log_segments(log)]
        if log.log_end_offset - bases[-1] >= per_segment:
            log.roll()
        log.append_as_leader([1], [SIZE], 0, timestamp)


def _bases(log) -> list[int]:
    return [s.base_offset for s in log_segments(log)]


# -- UnifiedLogTest: deleteOldSegments -----------------------------------------------------------


def test_delete_old_segments():
    """UnifiedLogTest.testDeleteOldSegments: 100 expired records in segments of 5; without a HW
    nothing goes; with HW 25..30 the log start stays at or below the HW and every segment left
    ends at or above it; with the HW at the LEO every segment goes (the log rolls to keep one)
    and the epoch cache keeps one entry, the latest epoch at the LEO."""
    _ctx, _m, log = _log(**{"retention.ms": 999})
    _append_rolling(log, 100, 5, timestamp=NOW - 1000)
    log.leader_epoch_cache.assign(0, 40)
    log.leader_epoch_cache.assign(1, 90)
    segments = log.number_of_segments()
    log.delete_old_segments(NOW)
    assert (log.number_of_segments(), log.log_start_offset) == (segments, 0)
    for hw in range(25, 31):
        log.update_high_watermark(hw)
        log.delete_old_segments(NOW)
        assert log.log_start_offset <= hw
        for segment in log_segments(log):
            if segment.size:   # its last record is at or above the HW
                assert segment.end_offset - 1 >= hw
    log.update_high_watermark(log.log_end_offset)
    log.delete_old_segments(NOW)
    assert log.number_of_segments() == 1
    assert [tuple(e) for e in log.leader_epoch_cache.entries] == [(1, 100)]


def test_log_deletion_after_delete_records():
    """UnifiedLogTest.testLogDeletionAfterDeleteRecords: 15 records in 3 segments; the log start
    raised to 1 deletes none, to 6 the first, to 15 the other two (the log rolls first)."""
    _ctx, _m, log = _log()
    _append_rolling(log, 15, 5)
    assert (log.number_of_segments(), log.log_start_offset) == (3, 0)
    log.update_high_watermark(log.log_end_offset)
    for start, segments in ((1, 3), (6, 2), (15, 1)):
        log.maybe_increment_log_start_offset(start, "ClientRecordDeletion")
        log.delete_old_segments()
        assert (log.number_of_segments(), log.log_start_offset) == (segments, start)


def test_log_deletion_after_close_first_half():
    """UnifiedLogTest.testLogDeletionAfterClose (before log.delete()): one expired record, one
    segment and one epoch entry; with no HW retention deletes nothing."""
    _ctx, _m, log = _log(**{"retention.ms": 999})
    _append_rolling(log, 1, 5, timestamp=NOW - 1000)
    assert log.delete_old_segments(NOW) == 0
    assert log.number_of_segments() == 1 and len(log.leader_epoch_cache.entries) == 1


@pytest.mark.parametrize("retention_records, left", [(10, 2), (15, 3)])
def test_size_based_segments(retention_records, left):
    """UnifiedLogTest.shouldDeleteSizeBasedSegments (retention.bytes 10 records: 2 segments
    left) and shouldNotDeleteSizeBasedSegmentsWhenUnderRetentionSize (15 records: 3 left): 15
    records in segments of 5."""
    _ctx, _m, log = _log(**{"retention.bytes": retention_records * SIZE})
    _append_rolling(log, 15, 5)
    log.update_high_watermark(log.log_end_offset)
    log.delete_old_segments(NOW)
    assert log.number_of_segments() == left


@pytest.mark.parametrize("timestamp, retention_ms, left", [
    (10, 10_000, 1),              # shouldDeleteTimeBasedSegmentsReadyToBeDeleted
    (NOW, 10_000_000, 3),         # shouldNotDeleteTimeBasedSegmentsWhenNoneReadyToBeDeleted
])
def test_time_based_segments(timestamp, retention_ms, left):
    """UnifiedLogTest.shouldDeleteTimeBasedSegmentsReadyToBeDeleted /
    shouldNotDeleteTimeBasedSegmentsWhenNoneReadyToBeDeleted: 15 records in segments of 5,
    stamped long ago (all go, the log rolls to keep one) or now (none go)."""
    _ctx, _m, log = _log(**{"retention.ms": retention_ms})
    _append_rolling(log, 15, 5, timestamp=timestamp)
    log.update_high_watermark(log.log_end_offset)
    log.delete_old_segments(NOW)
    assert log.number_of_segments() == left


@pytest.mark.parametrize("policy, left", [("compact", 3), ("compact,delete", 1)])
def test_retention_follows_the_cleanup_policy(policy, left):
    """UnifiedLogTest.shouldNotDeleteSegmentsWhenPolicyDoesNotIncludeDelete (compact: 3 left)
    and shouldDeleteSegmentsReadyToBeDeletedWhenCleanupPolicyIsCompactAndDelete (1 left)."""
    _ctx, _m, log = _log(**{"retention.ms": 10_000, "cleanup.policy": policy})
    _append_rolling(log, 15, 5, timestamp=10)
    log.update_high_watermark(log.log_end_offset)
    log.delete_old_segments(NOW)
    assert log.number_of_segments() == left


def test_should_delete_start_offset_breached_segments_when_policy_does_not_include_delete():
    """UnifiedLogTest.shouldDeleteStartOffsetBreachedSegmentsWhenPolicyDoesNotIncludeDelete:
    with cleanup.policy compact the segment wholly below the log start (5) still goes; the first
    segment left may hold the log start, the others begin above it."""
    _ctx, _m, log = _log(**{"retention.ms": 10_000, "cleanup.policy": "compact"})
    _append_rolling(log, 15, 5, timestamp=10)
    assert log.number_of_segments() == 3
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(5)
    log.delete_old_segments(NOW)
    bases = _bases(log)
    assert len(bases) == 2
    assert bases[0] <= log.log_start_offset and all(b > log.log_start_offset for b in bases[1:])


def test_segment_deletion_with_high_watermark_initialization():
    """UnifiedLogTest.testSegmentDeletionWithHighWatermarkInitialization: 100 expired records
    (segments of 7, about Kafka's 512 bytes), HW 25: some segments go, the log start stays at
    or below 25."""
    _ctx, _m, log = _log(**{"retention.ms": 999})
    _append_rolling(log, 100, 7, timestamp=NOW - 1000)
    assert log.update_high_watermark(25) == 25
    segments = log.number_of_segments()
    log.delete_old_segments(NOW)
    assert log.number_of_segments() < segments
    assert log.log_start_offset <= 25


def test_cannot_delete_segments_at_or_above_high_watermark():
    """UnifiedLogTest.testCannotDeleteSegmentsAtOrAboveHighWatermark: for each HW 0..100 the
    expired segments go only up to the HW: the first segment left begins at or below the HW
    (and at or above the log start), the others above it; at the end one empty segment at 100."""
    _ctx, _m, log = _log(**{"retention.ms": 999})
    _append_rolling(log, 100, 7, timestamp=NOW - 1000)
    assert log.number_of_segments() > 5
    assert (log.high_watermark, log.log_start_offset, log.log_end_offset) == (0, 0, 100)
    for hw in range(101):
        log.update_high_watermark(hw)
        assert log.high_watermark == hw
        log.delete_old_segments(NOW)
        assert log.log_start_offset <= hw
        head, *tail = _bases(log)
        assert log.log_start_offset <= head <= hw
        assert all(b > hw and b >= log.log_start_offset for b in tail)
    assert (log.log_start_offset, log.number_of_segments()) == (100, 1)
    assert log_segments(log)[0].size == 0


def test_cannot_increment_log_start_offset_past_high_watermark():
    """UnifiedLogTest.testCannotIncrementLogStartOffsetPastHighWatermark: HW 25, the log start
    cannot go to 26 (OffsetOutOfRangeException), the log unchanged."""
    _ctx, _m, log = _log(**{"retention.ms": 999})
    _append_rolling(log, 100, 7)
    log.update_high_watermark(25)
    with pytest.raises(OffsetOutOfRangeException):
        log.maybe_increment_log_start_offset(26)
    assert log.log_start_offset == 0


def test_retention_idempotency():
    """UnifiedLogTest.testRetentionIdempotency: three one-record segments stamped now+100, now,
    now+100; 901 ms later with retention.ms 900 and the log start at 1, deleteOldSegments
    deletes 2 (the log start frees the first, time the second), then 0."""
    _ctx, _m, log = _log(**{"retention.ms": 900, "retention.bytes": -1})
    for ts in (NOW + 100, NOW, NOW + 100):
        if log.log_end_offset:
            log.roll()
        log.append_as_leader([1], [SIZE], 0, ts)
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(1)
    assert log.delete_old_segments(NOW + 901) == 2
    assert log.delete_old_segments(NOW + 901) == 0


def _ten_segments():
    """9 one-record appends, each followed by a roll: 10 segments, the last empty; HW at LEO."""
    _ctx, _m, log = _log()
    for _ in range(9):
        log.append_as_leader([1], [SIZE], 0, NOW)
        log.roll()
    log.update_high_watermark(log.log_end_offset)
    assert log.number_of_segments() == 10
    return log


def test_deletable_segments_filter():
    """UnifiedLogTest.testDeletableSegmentsFilter: the predicate base <= 5 gives the 6 first
    segments; an always-true one the 9 inactive ones (an empty active segment is never
    deletable); once the active segment has a record below the HW, all 10."""
    log = _ten_segments()
    assert [s.base_offset for s in deletable_segments(log, lambda s, _n: s.base_offset <= 5)] \
        == list(range(6))
    assert [s.base_offset for s in deletable_segments(log, lambda _s, _n: True)] == \
        list(range(9))
    log.append_as_leader([1], [SIZE], 0, NOW)
    log.update_high_watermark(log.log_end_offset)
    assert [s.base_offset for s in deletable_segments(log, lambda _s, _n: True)] == \
        list(range(10))


def test_deletable_segments_iteration():
    """UnifiedLogTest.testDeletableSegmentsIteration: the predicate sees the segments in order,
    each with the next one (based one above) until the active segment, which has none; the
    deletable ones are the inactive segments."""
    log = _ten_segments()
    seen = []

    def predicate(segment, nxt):
        seen.append((segment.base_offset, None if nxt is None else nxt.base_offset))
        return True

    deletable = deletable_segments(log, predicate)
    assert log.number_of_segments() == 10
    assert [s.base_offset for s in deletable] == list(range(9))
    assert seen == [(i, i + 1) for i in range(9)]


def test_roll_keeps_an_empty_active_segment():
    """UnifiedLogTest.testRollSegmentThatAlreadyExists (what kafkasim models of it): rolling an
    empty active segment makes no new one; a roll after an append does."""
    _ctx, _m, log = _log()
    assert log.roll() == 0 and log.number_of_segments() == 1
    log.append_as_leader([1], [SIZE], 0, NOW)
    assert log.roll() == 1 and log.roll() == 1
    assert _bases(log) == [0, 1]


def test_truncation_drops_the_segments_above_the_target():
    """LocalLog.truncateTo (UnifiedLog.truncateTo @3.9.0): segments based above the target go,
    the one holding it stays; truncateFullyAndStartAt leaves one segment at the new start."""
    _ctx, _m, log = _log()
    _append_rolling(log, 15, 5)
    log.truncate_to(7)
    assert _bases(log) == [0, 5]
    log.truncate_to(5)
    assert _bases(log) == [0, 5]
    log.truncate_fully_and_start_at(40)
    assert _bases(log) == [40]


# -- LogManagerTest: cleanupLogs ------------------------------------------------------------------


def test_cleanup_expired_segments():
    """LogManagerTest.testCleanupExpiredSegments: 200 records in several segments, HW at the
    LEO; past retention.ms (log.retention.hours' default, 7 days) the retention task leaves one
    segment; reading past the end is empty, at 0 out of range, and the log still appends."""
    ctx, manager, log = _log()
    _append_rolling(log, 200, 20, timestamp=0)
    assert log.number_of_segments() > 1
    log.update_high_watermark(log.log_end_offset)
    ctx.now = log.config["retention.ms"] + 1
    manager.cleanup_logs(ctx)
    assert log.number_of_segments() == 1
    assert len(log.read(200, log.log_end_offset, 10**6)) == 0
    with pytest.raises(OffsetOutOfRangeException):
        log.read(0, log.log_end_offset, 10**6)
    log.append_as_leader([1], [SIZE], 0, ctx.now)


def test_cleanup_segments_to_maintain_size():
    """LogManagerTest.testCleanupSegmentsToMaintainSize: segments of 10 records, retention.bytes
    50 records + 10 bytes, 200 records (20 segments): the retention task leaves 6."""
    ctx, manager, log = _log(**{"retention.bytes": 5 * 10 * SIZE + 10})
    _append_rolling(log, 200, 10)
    log.update_high_watermark(log.log_end_offset)
    assert log.number_of_segments() == 20
    manager.cleanup_logs(ctx)
    assert log.number_of_segments() == 6
    with pytest.raises(OffsetOutOfRangeException):
        log.read(0, log.log_end_offset, 10**6)
    log.append_as_leader([1], [SIZE], 0, ctx.now)


@pytest.mark.parametrize("policy", ["compact,delete", "compact"])
def test_doesnt_clean_logs_with_compact_policies(policy):
    """LogManagerTest.testDoesntCleanLogsWithCompactDeletePolicy / testDoesntCleanLogsWith
    CompactPolicy: the retention task leaves a log whose policy includes compact to the log
    cleaner, however old its segments."""
    ctx, manager, log = _log(**{"cleanup.policy": policy})
    _append_rolling(log, 200, 20, timestamp=0)
    log.update_high_watermark(log.log_end_offset)
    segments = log.number_of_segments()
    assert segments > 1
    ctx.now = log.config["retention.ms"] + 1
    assert manager.cleanup_logs(ctx) == 0
    assert log.number_of_segments() == segments


# -- LogManagerTest / UnifiedLogTest: the checkpoint of the log start after retention ------------


def test_log_start_checkpoint_after_retention():
    """LogManager.checkpointLogStartOffsetsInDir after retention (the rule of
    testCheckpointLogStartOffsetForNormalTopic): a log start set by deleting whole segments is
    the first segment's base, so the partition is not listed."""
    _ctx, manager, log = _log(**{"retention.bytes": 10 * SIZE})
    _append_rolling(log, 15, 5)
    log.update_high_watermark(15)
    log.delete_old_segments(NOW)
    manager.checkpoint_log_start_offsets()
    assert log.log_start_offset == 5
    assert not manager.log_dir.read(manager.LOG_START_OFFSET_CHECKPOINT_FILE).strip("01\n")


# -- UnifiedLogTest: partition.metadata ----------------------------------------------------------


def test_log_flushes_partition_metadata_on_close():
    """UnifiedLogTest.testLogFlushesPartitionMetadataOnClose: a recorded topic id is flushed
    when the log closes (LogManager.shutdown), and a reopened log finds it."""
    ctx, manager, log = _log()
    log.partition_metadata_file.record(TOPIC_ID)
    manager.flush_for_shutdown(ctx.now)
    manager.load_logs(ctx)
    log = manager.get_log(("foo", 0))
    assert log.partition_metadata_file.exists()
    assert log.partition_metadata_file.read().topic_id == TOPIC_ID == log.topic_id


def test_no_partition_metadata_before_2_8():
    """UnifiedLogTest.testNoOpWhenKeepPartitionMetadataFileIsFalse (keepPartitionMetadataFile
    false: in kafkasim a log before 2.8): assignTopicId neither writes the file nor sets the
    topic id."""
    ctx, manager, log = _log("2.7")
    log.assign_topic_id(TOPIC_ID)
    assert log.topic_id is None and log.partition_metadata_file is None
    assert manager.log_dir.read(f"foo-0/{PARTITION_METADATA_FILE}") is None
    assert manager.get_or_create_log(ctx, "foo", 0, topic_id=OTHER_TOPIC_ID).topic_id is None


def test_log_fails_when_inconsistent_topic_id_set():
    """UnifiedLogTest.testLogFailsWhenInconsistentTopicIdSet: a log given one topic id, closed
    and reopened, refuses another (LogManager.getOrCreateLog -> InconsistentTopicIdException),
    keeping its own."""
    ctx, manager, log = _log()
    log.assign_topic_id(TOPIC_ID)
    manager.flush_for_shutdown(ctx.now)
    manager.load_logs(ctx)
    with pytest.raises(InconsistentTopicIdException):
        manager.get_or_create_log(ctx, "foo", 0, topic_id=OTHER_TOPIC_ID)
    assert manager.get_log(("foo", 0)).topic_id == TOPIC_ID
    assert manager.get_or_create_log(ctx, "foo", 0, topic_id=TOPIC_ID).topic_id == TOPIC_ID


@pytest.mark.parametrize("version, written", [
    ("4.3", True),
    ("2.7", False),
    ("3.0", True),
    ("3.7", True),
    ("3.9", True),
])
def test_brokers_write_partition_metadata(tmp_path, version, written):
    """ReplicaManagerTest.testPartitionMetadataFile @3.9.0 on a running cluster (LogManager
    .getOrCreateLog(topicId) / UnifiedLog.assignTopicId): each replica's partition.metadata
    holds its topic's id (version 0), read back after a restart; before 2.8 there is none."""
    c = Cluster(3, kafka_version=version, log_dirs=str(tmp_path), seed=4)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(3000)
    paths = [tmp_path / f"broker-{b}" / "t-0" / PARTITION_METADATA_FILE for b in (1, 2, 3)]
    assert [p.exists() for p in paths] == [written] * 3
    if not written:
        return
    ids = {c.brokers[b].logs[("t", 0)].topic_id for b in (1, 2, 3)}
    assert len(ids) == 1 and None not in ids
    assert paths[0].read_text(encoding="utf-8") == f"version: 0\ntopic_id: {ids.pop()}"
    topic_id = c.brokers[2].logs[("t", 0)].topic_id
    c.crash(2)
    c.run(20000)   # past a ZooKeeper session (zookeeper.session.timeout.ms 18 s)
    c.start(2)
    c.run(5000)
    assert c.brokers[2].logs[("t", 0)].topic_id == topic_id
    # kafka-topics --describe prints the same TopicId; in ZooKeeper mode it is the znode's
    assert f"TopicId: {topic_id}\t" in c.describe("t")
    if c.kraft is None:
        assert c.zk.get("/brokers/topics/t").json()["topic_id"] == topic_id


# -- ReplicaManager.checkpointHighWatermarks: hosted partitions only ------------------------------


def _hws(manager) -> dict:
    text = manager.log_dir.read(REPLICATION_OFFSET_CHECKPOINT)
    if text is None:
        return None
    lines = text.split("\n")[2:]
    return {(t, int(p)): int(o) for t, p, o in (ln.split() for ln in lines if ln)}


def test_checkpoint_high_watermarks_lists_only_hosted_partitions():
    """ReplicaManager.checkpointHighWatermarks (3.9.0-rc3, 4.3.0): the HWs of the partitions the
    ReplicaManager hosts online (onlinePartitionsIterator, partition.log.foreach); a log no
    hosted partition has is not listed, and with none the file is not written at all (the HWs
    are grouped by log dir, a dir without one is skipped)."""
    ctx, manager = _manager("3.9")
    a = manager.get_or_create_log(ctx, "a", 0)
    b = manager.get_or_create_log(ctx, "b", 0)
    for log, n in ((a, 5), (b, 7)):
        log.append_as_leader(list(range(n)), [SIZE] * n, 0, 0)
        log.update_high_watermark(n)
    manager.checkpoint_high_watermarks([])
    assert _hws(manager) is None
    manager.checkpoint_high_watermarks([("a", 0), ("c", 0)])
    assert _hws(manager) == {("a", 0): 5}
    manager.checkpoint_high_watermarks()   # a LogManager alone: every log
    assert _hws(manager) == {("a", 0): 5, ("b", 0): 7}


def test_a_restarted_broker_leaves_the_hw_file_until_it_hosts_partitions(tmp_path):
    """ReplicaManager.checkpointHighWatermarks on a restarted ZooKeeper broker (3.9): until the
    controller's LeaderAndIsr makes it host its partitions, the periodic checkpoint writes
    nothing (Kafka 3.9: no hosted partition, no log dir to write), so the file keeps the HWs of
    the last run; once hosted, the HWs are written again."""
    c = Cluster(3, kafka_version="3.9", log_dirs=str(tmp_path), seed=5)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all")
    for i in range(5):
        p.send("t", f"a{i}")
    c.run(8000)
    manager = c.brokers[3].log_manager
    assert _hws(manager) == {("t", 0): 5}
    c.crash(3)
    c.run(20000)   # its ZooKeeper session expires
    c.start(3)
    assert c.brokers[3].replica_manager.partitions == {}
    manager.checkpoint_high_watermarks(c.brokers[3].replica_manager.partitions)
    assert _hws(manager) == {("t", 0): 5}
    c.run(10000)
    assert ("t", 0) in c.brokers[3].replica_manager.partitions
    assert _hws(manager) == {("t", 0): 5}


# -- LogManagerTest: creating logs, recovery-point directory mapping, time-based flush ----------


def test_create_log(tmp_path):
    """LogManagerTest.testCreateLog: getOrCreateLog makes the partition's directory in the log
    dir, and the new log takes appends."""
    ctx, _ = _manager("3.9")
    manager = LogManager(str(tmp_path))
    log = manager.get_or_create_log(ctx, "kafka", 0)
    assert (tmp_path / "kafka-0").is_dir()
    assert log.append_as_leader([1], [SIZE], 0, 0) == (0, 0)


def _verify_checkpoint_recovery(ctx, manager, log_dir) -> None:
    """LogManagerTest.verifyCheckpointRecovery: 50 records appended and flushed, then
    checkpointLogRecoveryOffsets writes the recovery point read back from ``log_dir``."""
    log = manager.get_or_create_log(ctx, "test-a", 1)
    for _ in range(50):
        log.append_as_leader([1], [SIZE], 0, 0)
    log.flush()
    manager.checkpoint_log_recovery_offsets()
    checkpoint = OffsetCheckpointFile(os.path.join(log_dir, RECOVERY_POINT_CHECKPOINT))
    assert checkpoint.read()[("test-a", 1)] == log.recovery_point == 50


def test_recovery_directory_mapping_with_trailing_slash(tmp_path):
    """LogManagerTest.testRecoveryDirectoryMappingWithTrailingSlash: a log dir named with a
    trailing separator writes its recovery points in that dir."""
    ctx, _ = _manager("3.9")
    manager = LogManager(str(tmp_path) + os.sep)
    _verify_checkpoint_recovery(ctx, manager, str(tmp_path))
    manager.checkpoint_recovery_offsets_in_dir(str(tmp_path))   # the same dir, either spelling


def test_recovery_directory_mapping_with_relative_directory(tmp_path, monkeypatch):
    """LogManagerTest.testRecoveryDirectoryMappingWithRelativeDirectory: a relative log dir
    (data/<name>) writes its recovery points in that dir."""
    monkeypatch.chdir(tmp_path)
    ctx, _ = _manager("3.9")
    manager = LogManager(os.path.join("data", "kafka-logs"))
    _verify_checkpoint_recovery(ctx, manager, str(tmp_path / "data" / "kafka-logs"))
    manager.checkpoint_recovery_offsets_in_dir(str(tmp_path / "data" / "kafka-logs"))


def test_time_based_flush():
    """LogManagerTest.testTimeBasedFlush: with flush.ms 1000, 200 appends, once the flusher runs
    (initialTaskDelayMs later) the log's last flush time has moved (LogManager
    .flushDirtyLogs)."""
    ctx, manager = FakeContext(kafka_version="3.9", topic_config={"flush.ms": 1000}), LogManager()
    log = manager.get_or_create_log(ctx, "kafka", 0)
    last_flush = manager.last_flush_ms[("kafka", 0)]
    for _ in range(200):
        log.append_as_leader([1], [SIZE], 0, 0)
    ctx.now += LOG_MANAGER_INITIAL_TASK_DELAY_MS
    manager.flush_dirty_logs(ctx)
    assert manager.last_flush_ms[("kafka", 0)] != last_flush
    assert log.recovery_point == 200


# -- LocalLogTest @4.3.0 (storage, confluentinc a9ce322153): rolls and truncations -------------


def _append_at(log, offset: int) -> None:
    """LocalLogTest.appendRecords(records, offset): one record at ``offset`` (the LEO)."""
    assert log.append_as_leader([1], [SIZE], 0, NOW)[0] == offset


def test_roll_empty_active_segment():
    """LocalLogTest.testRollEmptyActiveSegment: rolling the empty active segment leaves one."""
    _ctx, _m, log = _log()
    log.roll(0)
    assert log.number_of_segments() == 1


def test_new_segments_after_roll():
    """LocalLogTest.testNewSegmentsAfterRoll: roll(0) on the empty log answers base 0 and keeps
    one segment; after each append a roll begins a segment at the LEO (1, then 2)."""
    _ctx, _m, log = _log()
    assert (log.roll(0), log.number_of_segments(), log.log_end_offset) == (0, 1, 0)
    _append_at(log, 0)
    assert (log.roll(0), log.number_of_segments(), log.log_end_offset) == (1, 2, 1)
    _append_at(log, 1)
    assert (log.roll(1), log.number_of_segments(), log.log_end_offset) == (2, 3, 2)


def test_roll_segment_that_already_exists():
    """LocalLogTest.testRollSegmentThatAlreadyExists: a roll of the empty first segment keeps one
    segment based at 0, which takes two records; a roll then begins segment 2 at the LEO."""
    _ctx, _m, log = _log()
    assert log.number_of_segments() == 1
    log.roll(0)
    assert log.number_of_segments() == 1
    _append_at(log, 0)
    _append_at(log, 1)
    assert _bases(log) == [0] and log.log_end_offset == 2
    assert len(log.read(0, log.log_end_offset, 10**6)) == 2
    log.roll(0)
    assert _bases(log) == [0, 2] and log.log_end_offset == 2


def test_roll_past_the_log_end_is_refused():
    """LocalLog.roll(expectedNextOffset) past the LEO would leave an offset gap, which
    kafkasim's log cannot hold: refused, naming the argument, the log unchanged."""
    _ctx, _m, log = _log()
    _append_at(log, 0)
    with pytest.raises(ValueError, match="expected_next_offset=5"):
        log.roll(5)
    assert _bases(log) == [0]


def test_local_log_truncate_fully_and_start_at():
    """LocalLogTest.testTruncateFullyAndStartAt: 13 records in 5 segments; truncateFullyAnd
    StartAt(10) leaves one segment at 10, the LEO 10, and a read at 10 is empty."""
    _ctx, _m, log = _log()
    for offset in range(8):
        _append_at(log, offset)
        if offset % 2:
            log.roll(0)
    for offset in range(8, 13):
        _append_at(log, offset)
    assert log.number_of_segments() == 5 and _bases(log)[-1] != 10
    log.truncate_fully_and_start_at(10)
    assert _bases(log) == [10]
    # LocalLogTest's recovery point is 0 (LocalLog.roll does not flush); kafkasim's Log is the
    # UnifiedLog, whose roll flushed up to the last new segment (8)
    assert (log.recovery_point, log.log_end_offset) == (8, 10)
    assert len(log.read(10, log.log_end_offset, 10**6)) == 0


def test_local_log_truncate_to():
    """LocalLogTest.testTruncateTo: 12 records, a roll after every third (5 segments, the last
    empty at 12); truncateTo(7) deletes the segments based at 9 and 12, the active one is at 6,
    the LEO 7, a read at 6 finds one record, and an append at 7 follows."""
    _ctx, _m, log = _log()
    for offset in range(12):
        _append_at(log, offset)
        if offset % 3 == 2:
            log.roll(0)
    assert (log.number_of_segments(), log.log_end_offset) == (5, 12)
    log.truncate_to(7)
    assert _bases(log) == [0, 3, 6]
    # (LocalLogTest: recovery point 0; UnifiedLog.roll flushed to 12, the truncation lowers it)
    assert (log.recovery_point, log.log_end_offset) == (7, 7)
    assert len(log.read(6, log.log_end_offset, 10**6)) == 1
    _append_at(log, 7)
    assert log.log_end_offset == 8


def test_non_active_segments_from():
    """LocalLogTest.testNonActiveSegmentsFrom: five one-record segments and the active one at 5;
    from 0 all five, from 5 (the active base) or past it none, from 2 the ones based 2, 3, 4."""
    _ctx, _m, log = _log()
    for i in range(5):
        _append_at(log, i)
        log.roll(0)
    assert _bases(log)[-1] == 5

    def non_active_from(offset):
        return [s.base_offset for s in non_active_log_segments_from(log, offset)]

    assert non_active_from(0) == [0, 1, 2, 3, 4]
    assert non_active_from(5) == [] and non_active_from(6) == []
    assert non_active_from(2) == [2, 3, 4]


# -- LogManagerTest @3.9.0 / storage LogManagerTest @4.3.0: stray replicas -----------------------

FOO = ("foo", "Sl08ZXU2QW6uF5hIoSzc8w")
BAR = ("bar", "69O438ZkTSeqqclTtZO2KA")
QUUX = ("quux", "YS9owjv5TG2OlsvBM0Qw6g")


def _mock_log(topic, partition: int):
    """LogManagerTest.mockLog: a log of ``topic`` (name, id) with that topic id."""
    log = Log(topic[0], partition)
    log.topic_id = topic[1]
    return log


def _topics_image(partitions: dict) -> MetadataImage:
    """LogManagerTest.topicsImage(topicImage(...)): a MetadataImage with each partition's
    replicas (``partitions``: (topic, partition id) -> replicas)."""
    image = MetadataImage()
    offset = 0
    for (name, topic_id), _pid in partitions:
        if name not in image.topic_ids:
            image.replay(R.TopicRecord(name, topic_id), offset)
            offset += 1
    for ((_name, topic_id), pid), replicas in partitions.items():
        image.replay(R.PartitionRecord(pid, topic_id, tuple(replicas), tuple(replicas)), offset)
        offset += 1
    return image


_ON_DISK = [(FOO, 0), (FOO, 1), (BAR, 0), (BAR, 1), (QUUX, 0)]


def test_is_stray_kraft_replica_with_empty_image():
    """LogManagerTest.testIsStrayKraftReplicaWithEmptyImage @3.9.0: every log is stray."""
    image = _topics_image({})
    assert all(LogManager.is_stray_kraft_replica(0, image, _mock_log(*tp)) for tp in _ON_DISK)


def test_is_stray_kraft_replica_in_image():
    """LogManagerTest.testIsStrayKraftReplicaInImage @3.9.0: foo-1 (not in the image) and quux-0
    (unknown topic id) are stray, the others not."""
    image = _topics_image({(FOO, 0): [0, 1, 2], (BAR, 0): [0, 1, 2], (BAR, 1): [0, 1, 2]})
    strays = [tp for tp in _ON_DISK if LogManager.is_stray_kraft_replica(0, image, _mock_log(*tp))]
    assert strays == [(FOO, 1), (QUUX, 0)]


def test_is_stray_kraft_replica_in_image_with_remote_replicas():
    """LogManagerTest.testIsStrayKraftReplicaInImageWithRemoteReplicas @3.9.0: bar-0, whose
    replicas leave out broker 0, is the only stray."""
    image = _topics_image({(FOO, 0): [0, 1, 2], (BAR, 0): [1, 2, 3], (BAR, 1): [2, 3, 0]})
    on_disk = [(FOO, 0), (BAR, 0), (BAR, 1)]
    strays = [tp for tp in on_disk if LogManager.is_stray_kraft_replica(0, image, _mock_log(*tp))]
    assert strays == [(BAR, 0)]


def test_is_stray_kraft_missing_topic_id():
    """LogManagerTest.testIsStrayKraftMissingTopicId @3.9.0: a log without a topic id is stray."""
    assert LogManager.is_stray_kraft_replica(0, _topics_image({}), Log("foo", 0))


def test_is_stray_replica():
    """storage LogManagerTest.testIsStrayReplica @4.3.0: no replicas, or replicas without the
    broker, make the log stray; replicas with it do not."""
    log = _mock_log(("foo", "AAAAAAAAAAAAAAAAAAAAAQ"), 0)
    assert LogManager.is_stray_replica([], 0, log)
    assert LogManager.is_stray_replica([1, 2, 3], 0, log)
    assert not LogManager.is_stray_replica([0, 1, 2], 0, log)


# -- UnifiedLogTest: producer snapshots and the flush on roll ------------------------------------


def test_take_snapshot_on_roll_and_delete_snapshot_on_recovery_point_checkpoint():
    """UnifiedLogTest.testTakeSnapshotOnRollAndDeleteSnapshotOnRecoveryPointCheckpoint @3.9.0:
    each roll takes a producer snapshot at the new segment's base (1, 2, 3) and flushes up to
    it; the flushes keep every snapshot (oldest 1), also one inside the active segment."""
    _ctx, _m, log = _log()
    states = log.producer_states
    for offset in (1, 2, 3):
        log.append_as_leader([1], [SIZE], 0, NOW)
        log.roll(offset)
        assert states.latest_snapshot_offset() == offset
        assert states.oldest_snapshot_offset() == 1
        assert log.recovery_point == offset
    log.append_as_leader([1], [SIZE], 0, NOW)
    log.flush(4)
    assert states.latest_snapshot_offset() == 3


def test_snapshots_at_segment_bases_survive_a_restart():
    """LogLoader.load -> ProducerStateManager.removeStraySnapshots(segments' base offsets)
    @3.9.0: the snapshots a roll took at each segment's base are kept when the log is loaded
    again after a clean shutdown (with the one LogManager.shutdown took at the log end)."""
    ctx, manager, log = _log()
    for _ in range(3):
        log.append_as_leader([1], [SIZE], 0, NOW)
        log.roll()
    log.append_as_leader([1], [SIZE], 0, NOW)
    manager.flush_for_shutdown(ctx.now)
    manager.clean_shutdown_file = True
    manager.load_logs(ctx)
    assert sorted(manager.get_log(("foo", 0)).producer_states.snapshots) == [1, 2, 3, 4]


def _three_idempotent_segments(**config):
    """Three one-record batches of producer 1 (sequences 0, 1, 2), a roll after the first two:
    segments based at 0, 1, 2 and producer snapshots at 1 and 2."""
    _ctx, _m, log = _log(**config)
    for seq in range(3):
        if seq:
            log.roll()
        log.append_as_leader([1], [SIZE], 0, NOW, 1, 0, seq)
    return log


@pytest.mark.parametrize("create_empty_active_segment", [True, False])
def test_retention_deletes_producer_state_snapshots(create_empty_active_segment):
    """UnifiedLogTest.testRetentionDeletesProducerStateSnapshots @3.9.0: retention.bytes 0 and
    retention.ms breached delete the three segments (an empty active one stays, or the log rolls
    to keep one); one producer snapshot is left, at the new log start 3."""
    log = _three_idempotent_segments(**{"retention.bytes": 0, "retention.ms": 60_000})
    if create_empty_active_segment:
        log.roll()
    log.update_high_watermark(log.log_end_offset)
    snapshots = log.producer_states.snapshots
    assert len(snapshots) == (3 if create_empty_active_segment else 2)
    log.delete_old_segments(NOW + 60_001)
    assert sorted(snapshots) == [3]
    assert log.log_start_offset == 3


def test_log_start_offset_movement_deletes_snapshots():
    """UnifiedLogTest.testLogStartOffsetMovementDeletesSnapshots @3.9.0: raising the log start to
    LEO - 1 and deleting the segments below it leaves one producer snapshot (at 2)."""
    log = _three_idempotent_segments(**{"retention.bytes": -1})
    log.update_high_watermark(log.log_end_offset)
    assert len(log.producer_states.snapshots) == 2
    log.maybe_increment_log_start_offset(log.log_end_offset - 1)
    log.delete_old_segments()
    assert sorted(log.producer_states.snapshots) == [2]


@pytest.mark.parametrize("messages_to_append", [0, 1, 25])
def test_that_garbage_collecting_segments_doesnt_change_offset(messages_to_append):
    """UnifiedLogTest.testThatGarbageCollectingSegmentsDoesntChangeOffset @3.9.0: with
    retention.ms 0 and one record a segment, deleting every expired segment leaves one segment
    and the LEO where it was; a second pass deletes nothing; the next append gets the LEO."""
    _ctx, _m, log = _log(**{"retention.ms": 0})
    _append_rolling(log, messages_to_append, 1, timestamp=NOW - 10)
    leo = log.log_end_offset
    assert leo == messages_to_append
    log.update_high_watermark(leo)
    log.delete_old_segments(NOW)
    assert log.log_end_offset == leo and log.number_of_segments() == 1
    assert log.delete_old_segments(NOW) == 0
    assert log.log_end_offset == leo
    assert log.append_as_leader([1], [SIZE], 0, NOW)[0] == leo


@pytest.mark.parametrize("version", ["3.9", "4.3"])
def test_the_log_retention_task_runs_every_retention_check_interval(version):
    """LogManager.startup schedules kafka-log-retention (cleanupLogs) after the initial task
    delay, then every log.retention.check.interval.ms (LogManager.scala:628-631@3.9.0-rc3;
    kafkasim had cleanupLogs but never ran it): records older than retention.ms = 100 are gone
    from every replica within one interval."""
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(3, kafka_version=version, seed=1,
                config={"log.retention.check.interval.ms": 1000, "log.initial.task.delay.ms": 0})
    c.create_topic("t", 1, 3, config={"retention.ms": 100})
    p = c.producer(acks="all", linger_ms=0)
    for _ in range(20):
        p.send("t", "x" * 100, partition=0)
    c.run(50)   # (any run meanwhile finds them younger than retention.ms)
    assert all(c.log(b, "t").log_start_offset == 0 for b in c.brokers)
    assert all(c.log(b, "t").log_end_offset == 20 for b in c.brokers)
    c.run(1200)
    assert all(c.log(b, "t").log_start_offset == 20 for b in c.brokers)
