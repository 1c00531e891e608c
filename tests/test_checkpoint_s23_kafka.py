"""Checkpoint files and restart (s23): what the LogManager writes when, and the files' classes.

Ports, at the tag each docstring names, cases of:
* core/src/test/scala/unit/kafka/log/LogManagerTest.scala (3.9.0, read at tag 3.9.0-rc3 of the
  apache mirror): testCheckpointLogStartOffsetForNormalTopic, testCheckpointRecoveryPoints,
  testCheckpointForOnlyAffectedLogs;
* storage/src/test/java/org/apache/kafka/storage/internals/checkpoint/PartitionMetadataFileTest
  .java (4.3.0, confluentinc mirror a9ce322153);
and checks, on a running cluster, when LogManager writes recovery-point-offset-checkpoint and
log-start-offset-checkpoint around truncations (LogManager.truncateTo / truncateFullyAndStartAt /
checkpointLogStartOffsetsInDir, read at 0.8.2.2, 0.10.2.0, 1.0.0, 1.1.0, 2.8.0, 3.9.0-rc3).

Adaptation: kafkasim's segments are base offsets (``Log.segment_base_offset``, then one per
``Log.roll``); LogManagerTest's rolls are ``Log.roll`` calls, deleteOldSegments is
``Log.delete_old_segments`` (kafkasim.core.log_segments); partition.metadata is the log's
``partition_metadata_file`` (2.8+, given by the LogManager).
"""

from __future__ import annotations

import base64
import os
import random

import pytest

from kafkasim.core.checkpoint import (
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    LogDirFailureChannel,
    PartitionMetadata,
    PartitionMetadataFile,
    parse_offsets,
)
from kafkasim.core.errors import InconsistentTopicIdException, KafkaStorageException
from kafkasim.core.log_segments import log_segments
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.log_manager import LogManager
from tests.test_metadata_log_versions_kafka import _fifty_flushed
from tests.test_unified_log_kafka import _append, _manager


def _offsets(manager, name: str) -> dict[tuple[str, int], int]:
    text = manager.log_dir.read(name)
    return {(t, p): o for t, p, o in parse_offsets(text, name)} if text else {}


# -- LogManagerTest @3.9.0 ----------------------------------------------------------------------


def _fifty_records(version: str):
    """50 records appended as leader in epoch 0, a roll after offsets 10, 20, 30 and 40 (5
    segments, based at 0, 11, 21, 31, 41), HW 49."""
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "test", 0)
    for _ in range(50):
        _first, offset = _append(log)
        if offset != 0 and offset % 10 == 0:
            log.roll()
    assert len(log_segments(log)) == 5
    log.update_high_watermark(49)
    return manager, log


def test_checkpoint_log_start_offset_for_normal_topic():
    """LogManagerTest.testCheckpointLogStartOffsetForNormalTopic @3.9.0 (first half): 50
    records in 5 segments, HW 49, the log start raised to 31 (inside the log's segments): the
    segments stay and the checkpoint lists 31 (checkpointLogStartOffsetsInDir: start above the
    first segment's base)."""
    manager, log = _fifty_records("3.9")
    assert log.maybe_increment_log_start_offset(31)
    manager.checkpoint_log_start_offsets()
    assert len(log_segments(log)) == 5
    assert log.log_start_offset == 31
    assert _offsets(manager, LOG_START_OFFSET_CHECKPOINT).get(("test", 0), -1) == 31


def test_checkpoint_log_start_offset_for_normal_topic_after_delete_old_segments():
    """LogManagerTest.testCheckpointLogStartOffsetForNormalTopic @3.9.0 (second half):
    deleteOldSegments leaves 2 segments, the first based at 31 (the log start); checkpointing
    again lists nothing for the partition."""
    manager, log = _fifty_records("3.9")
    log.maybe_increment_log_start_offset(31)
    manager.checkpoint_log_start_offsets()
    log.delete_old_segments()
    assert len(log_segments(log)) == 2
    assert log.log_start_offset == 31
    manager.checkpoint_log_start_offsets()
    assert _offsets(manager, LOG_START_OFFSET_CHECKPOINT).get(("test", 0), -1) == -1


@pytest.mark.parametrize("version", ["0.11.0", "2.8", "3.9", "4.3"])
def test_a_log_restarted_at_a_new_start_is_not_in_the_log_start_checkpoint(version):
    """UnifiedLog.truncateFullyAndStartAt gives the log one new segment based at the new start,
    so checkpointLogStartOffsetsInDir (``logStartOffset > logSegments.head.baseOffset``, the
    same filter since KIP-107 in 0.11.0.0) leaves it out; a start raised inside that segment
    afterwards is listed again."""
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "test", 0)
    for _ in range(5):
        _append(log)
    log.truncate_fully_and_start_at(20)
    manager.checkpoint_log_start_offsets()
    assert (log.log_start_offset, log.segment_base_offset) == (20, 20)
    assert _offsets(manager, LOG_START_OFFSET_CHECKPOINT) == {}
    for _ in range(5):
        _append(log)
    log.update_high_watermark(25)
    log.maybe_increment_log_start_offset(22)
    manager.checkpoint_log_start_offsets()
    assert _offsets(manager, LOG_START_OFFSET_CHECKPOINT) == {("test", 0): 22}


# -- a running cluster --------------------------------------------------------------------------


def _write(c, broker: int, name: str, text: str) -> None:
    with open(c.brokers[broker].log_manager.log_dir.path(name), "w", encoding="utf-8") as f:
        f.write(text)


def test_follower_behind_the_leaders_log_start_restarts_and_is_not_checkpointed(tmp_path):
    """A follower whose log ends below the leader's log start is answered
    OFFSET_OUT_OF_RANGE and restarts its log at the leader's start
    (AbstractFetcherThread.fetchOffsetAndTruncate -> LogManager.truncateFullyAndStartAt). Its
    log-start-offset-checkpoint then leaves the partition out (its one segment begins at the
    new start: LogManager.checkpointLogStartOffsetsInDir @3.9.0-rc3), while the leaders, whose
    start lies inside their segment, list it; restarting keeps the follower's start."""
    c = Cluster(3, kafka_version="3.9", log_dirs=str(tmp_path), seed=3)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all")
    for i in range(5):
        p.send("t", f"a{i}")
    c.run(2000)
    c.shutdown(3)
    c.run_until(lambda cl: cl.brokers[3].state == "stopped", 60000)
    for i in range(5):
        p.send("t", f"b{i}")
    c.run(2000)
    for b in (1, 2):
        c.crash(b)
    c.run(20000)   # their ZooKeeper sessions expire
    for b in (1, 2):
        _write(c, b, LOG_START_OFFSET_CHECKPOINT, "0\n1\nt 0 8\n")
        c.start(b)
    c.run(5000)
    assert all(c.brokers[b].logs[("t", 0)].log_start_offset == 8 for b in (1, 2))
    c.start(3)
    c.run(5000)
    log3 = c.brokers[3].logs[("t", 0)]
    assert (log3.log_start_offset, log3.log_end_offset) == (8, 10)
    c.run(60000)   # kafka-log-start-offset-checkpoint ran on every broker since their starts
    for b in (1, 2, 3):
        c.crash(b)
    files = {b: _offsets(c.brokers[b].log_manager, LOG_START_OFFSET_CHECKPOINT)
             for b in (1, 2, 3)}
    assert files == {1: {("t", 0): 8}, 2: {("t", 0): 8}, 3: {}}
    c.run(20000)
    c.start(3)
    assert c.brokers[3].logs[("t", 0)].log_start_offset == 8


@pytest.mark.parametrize("version, listed", [("0.10.2", True), ("0.11.0", True),
                                             ("1.0", False), ("3.9", False)])
def test_truncate_to_rewrites_recovery_points_only_after_a_truncation_since_1_0(version, listed):
    """LogManager.truncateTo rewrites recovery-point-offset-checkpoint after every call before
    1.0 (checkpointRecoveryPointOffsets @0.8.2.2, @0.10.2.0) and only when a log was truncated
    since KAFKA-5864 (``if (truncated)`` @1.0.0; the affected logs' dirs @1.1.0+). A new
    follower's first truncation (to its HW before KIP-101, after OffsetsForLeaderEpoch since)
    removes nothing, so before 1.0 its partition is in the file at once, long before the
    first kafka-recovery-point-checkpoint run (InitialTaskDelayMs, 30 s)."""
    c = Cluster(3, kafka_version=version, seed=3)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(3000)
    follower = _offsets(c.brokers[2].log_manager, RECOVERY_POINT_CHECKPOINT)
    leader = _offsets(c.brokers[1].log_manager, RECOVERY_POINT_CHECKPOINT)
    assert follower == ({("t", 0): 0} if listed else {})
    assert leader == {}


# -- PartitionMetadataFileTest @4.3.0 -----------------------------------------------------------


def _random_uuid(rng: random.Random) -> str:
    """Uuid.randomUuid, seeded: 16 random bytes as URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(rng.randbytes(16)).decode().rstrip("=")


@pytest.fixture
def metadata_file(tmp_path):
    """``PartitionMetadataFile.newFile(TestUtils.tempDirectory())``: a partition directory
    inside a log dir."""
    directory = tmp_path / "foo-0"
    directory.mkdir()
    return PartitionMetadataFile.new_file(directory)


def test_set_record_with_different_topic_id(metadata_file):
    """PartitionMetadataFileTest.testSetRecordWithDifferentTopicId @4.3.0."""
    rng = random.Random(1)
    f = PartitionMetadataFile(metadata_file, None)
    f.record(_random_uuid(rng))
    with pytest.raises(InconsistentTopicIdException) as e:
        f.record(_random_uuid(rng))
    assert e.value.error == "INCONSISTENT_TOPIC_ID"


def test_set_record_with_same_topic_id(metadata_file):
    """PartitionMetadataFileTest.testSetRecordWithSameTopicId @4.3.0: the same id, also as a
    new Uuid parsed from its string, is accepted again."""
    f = PartitionMetadataFile(metadata_file, None)
    topic_id = _random_uuid(random.Random(2))
    f.record(topic_id)
    f.record(topic_id)
    same_topic_id = "".join(topic_id)   # Uuid.fromString(topicId.toString())
    f.record(same_topic_id)
    f.record(topic_id)


def test_maybe_flush_with_topic_id_present(metadata_file):
    """PartitionMetadataFileTest.testMaybeFlushWithTopicIdPresent @4.3.0: two lines,
    ``version: 0`` and ``topic_id: <id>`` (PartitionMetadata.encode)."""
    f = PartitionMetadataFile(metadata_file, None)
    topic_id = _random_uuid(random.Random(3))
    f.record(topic_id)
    f.maybe_flush()
    with open(metadata_file, encoding="utf-8") as fh:
        lines = fh.read().splitlines()
    assert lines == ["version: 0", f"topic_id: {topic_id}"]


def test_maybe_flush_with_no_topic_id_present(metadata_file):
    """PartitionMetadataFileTest.testMaybeFlushWithNoTopicIdPresent @4.3.0: nothing recorded,
    nothing written (File.length of a missing file is 0)."""
    f = PartitionMetadataFile(metadata_file, None)
    f.maybe_flush()
    assert not os.path.exists(metadata_file) or os.path.getsize(metadata_file) == 0


def test_read(metadata_file):
    """PartitionMetadataFileTest.testRead @4.3.0."""
    f = PartitionMetadataFile(metadata_file, LogDirFailureChannel())
    topic_id = _random_uuid(random.Random(4))
    f.record(topic_id)
    f.maybe_flush()
    assert f.read() == PartitionMetadata(0, topic_id)
    assert (f.read().version, f.read().topic_id) == (0, topic_id)


@pytest.mark.parametrize("text, words", [
    ("version 0\ntopic_id: x\n", "Malformed line in partition metadata file"),
    ("version: -1\ntopic_id: x\n", "Unrecognized version of partition metadata file"),
    ("version: 0\n", "Malformed line in partition metadata file"),
    ("version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA\n", "Invalid topic ID in partition metadata"),
])
def test_read_refuses_a_malformed_file_and_fails_the_log_dir(metadata_file, text, words):
    """PartitionMetadataReadBuffer.read @4.3.0: a line not split by ``:\\s+`` into two parts,
    a version below 0 or the zero topic id are IOExceptions, which PartitionMetadataFile.read
    wraps in KafkaStorageException "Error while reading partition metadata file" after taking
    the log dir (the partition directory's parent) offline. (An empty file is not checked
    here: Kafka's reader splits a null line, a NullPointerException.)"""
    with open(metadata_file, "w", encoding="utf-8") as fh:
        fh.write(text)
    channel = LogDirFailureChannel()
    with pytest.raises(KafkaStorageException) as e:
        PartitionMetadataFile(metadata_file, channel).read()
    assert "Error while reading partition metadata file" in str(e.value)
    assert words in str(e.value)
    assert channel.has_offline_log_dir(os.path.dirname(os.path.dirname(metadata_file)))


@pytest.mark.parametrize("delay", [1000, 30000])
def test_log_initial_task_delay_ms_delays_a_log_manager_task_run_once(delay):
    """log.initial.task.delay.ms (3.8+, KAFKA-16552, defineInternal, default 30000: what
    LogManager.InitialTaskDelayMs was) is LogManager.startup's initial delay; with
    log.flush.offset.checkpoint.interval.ms 0, KafkaScheduler.schedule runs
    kafka-recovery-point-checkpoint once, after that delay."""
    c = Cluster(3, kafka_version="3.9", seed=3, config={
        "log.initial.task.delay.ms": delay, "log.flush.offset.checkpoint.interval.ms": 0})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(delay - 10 - c.now)   # the brokers started at 0
    assert _offsets(c.brokers[1].log_manager, RECOVERY_POINT_CHECKPOINT) == {}
    c.run(20)
    assert _offsets(c.brokers[1].log_manager, RECOVERY_POINT_CHECKPOINT) == {("t", 0): 0}
    assert c.brokers[1].config["log.initial.task.delay.ms"] == delay


@pytest.mark.parametrize("version", ["0.10.2", "2.8", "3.9", "4.3"])
def test_log_manager_tasks_first_run_after_the_initial_delay(version):
    """LogManager.startup schedules kafka-recovery-point-checkpoint (and the log-start-offset
    checkpoint and log flusher) with delay InitialTaskDelayMs (30000; log.initial.task.delay.ms
    since 3.8) and period log.flush.offset.checkpoint.interval.ms (60000):
    KafkaScheduler.schedule -> scheduleAtFixedRate(task, delay, period) first runs it after
    the delay, then every period: at 30 s, 90 s, ... after the start."""
    c = Cluster(3, kafka_version=version, seed=3)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    manager = c.brokers[1].log_manager
    c.run(30000 - 10 - c.now)
    assert _offsets(manager, RECOVERY_POINT_CHECKPOINT) == {}
    c.run(20)
    assert _offsets(manager, RECOVERY_POINT_CHECKPOINT) == {("t", 0): 0}
    c.create_topic("u", 1, 3, assignment=[[1, 2, 3]])   # listed from the next run on
    c.run(90000 - 10 - c.now)
    assert ("u", 0) not in _offsets(manager, RECOVERY_POINT_CHECKPOINT)
    c.run(20)
    assert _offsets(manager, RECOVERY_POINT_CHECKPOINT) == {("t", 0): 0, ("u", 0): 0}


# -- LogManager.truncateTo / truncateFullyAndStartAt ---------------------------------------------


def _flushed_log(version: str, records: int = 10):
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "test", 0)
    for _ in range(records):
        _append(log)
    log.flush()
    manager.checkpoint_log_recovery_offsets()
    return ctx, manager, log


@pytest.mark.parametrize("version, rewritten_without_truncation", [("0.10.2", True),
                                                                   ("1.0", False),
                                                                   ("3.9", False)])
def test_log_manager_truncate_to_checkpoints_recovery_points(version,
                                                             rewritten_without_truncation):
    """LogManager.truncateTo (@0.10.2.0, @1.0.0, @3.9.0-rc3): the recovery point comes down
    with the log (UnifiedLog.truncateTo) and recovery-point-offset-checkpoint is rewritten when
    a log was truncated; before 1.0 after every call, even one that truncated nothing."""
    ctx, manager, log = _flushed_log(version)
    assert _offsets(manager, RECOVERY_POINT_CHECKPOINT) == {("test", 0): 10}
    log.flush()
    for _ in range(2):
        _append(log)
    log.flush()                                   # recovery point 12, the file still says 10
    manager.truncate_to({("test", 0): 12, ("other", 0): 3}, ctx=ctx)   # nothing truncated
    assert _offsets(manager, RECOVERY_POINT_CHECKPOINT) == \
        {("test", 0): 12 if rewritten_without_truncation else 10}
    manager.truncate_to({("test", 0): 7}, ctx=ctx)
    assert log.log_end_offset == log.recovery_point == 7
    assert _offsets(manager, RECOVERY_POINT_CHECKPOINT) == {("test", 0): 7}
    manager.truncate_to({("test", 0): 3}, is_future=True, ctx=ctx)   # no future log: skipped
    assert log.log_end_offset == 7


def test_log_manager_truncate_fully_and_start_at_checkpoints_recovery_points():
    """LogManager.truncateFullyAndStartAt @3.9.0-rc3: the log restarts empty at the new offset
    and recovery-point-offset-checkpoint is rewritten at once; its recovery point only comes
    down (LocalLog.truncateFullyAndStartAt -> updateLogEndOffset), so a log flushed to 10 and
    restarted at 25 keeps 10; log-start-offset-checkpoint leaves it out (new segment at 25)."""
    ctx, manager, log = _flushed_log("3.9")
    manager.truncate_fully_and_start_at(("test", 0), 25)
    assert (log.log_start_offset, log.log_end_offset, log.recovery_point) == (25, 25, 10)
    assert _offsets(manager, RECOVERY_POINT_CHECKPOINT) == {("test", 0): 10}
    manager.checkpoint_log_start_offsets()
    assert _offsets(manager, LOG_START_OFFSET_CHECKPOINT) == {}
    manager.truncate_fully_and_start_at(("missing", 0), 5)   # no log: nothing happens
    assert manager.get_log(("missing", 0)) is None


def test_partition_metadata_flush_into_a_deleted_directory_fails_the_log_dir(tmp_path):
    """PartitionMetadataFile.maybeFlush @4.3.0: the ``.tmp`` file cannot be created in a
    partition directory that is gone (FileNotFoundException): the log dir goes offline and
    the write is a KafkaStorageException "Error while writing partition metadata file"; the
    topic id stays pending."""
    directory = tmp_path / "foo-0"
    f = PartitionMetadataFile(PartitionMetadataFile.new_file(directory), LogDirFailureChannel())
    topic_id = _random_uuid(random.Random(5))
    f.record(topic_id)
    with pytest.raises(KafkaStorageException) as e:
        f.maybe_flush()
    assert "Error while writing partition metadata file" in str(e.value)
    assert f.log_dir_failure_channel.has_offline_log_dir(str(tmp_path))
    assert not directory.exists() and f.dirty_topic_id == topic_id


# -- LogManagerTest @3.9.0: recovery points, by Kafka's method names ------------------------------


def test_checkpoint_recovery_points_3_9():
    """LogManagerTest.testCheckpointRecoveryPoints @3.9.0 (verifyCheckpointRecovery): 50
    records appended and flushed in two logs; checkpointLogRecoveryOffsets writes each
    log's recovery point to LogManager.RecoveryPointCheckpointFile."""
    ctx, manager = _manager("3.9")
    tps = [("test-a", 1), ("test-b", 1)]
    logs = _fifty_flushed(ctx, manager, tps)
    manager.checkpoint_log_recovery_offsets()
    checkpoints = _offsets(manager, manager.RECOVERY_POINT_CHECKPOINT_FILE)
    assert [checkpoints[tp] for tp in tps] == [log.recovery_point for log in logs] == [50, 50]


def test_checkpoint_for_only_affected_logs_3_9(tmp_path):
    """LogManagerTest.testCheckpointForOnlyAffectedLogs @3.9.0: checkpointRecoveryOffsetsInDir
    (logDir) writes the recovery point of every log in that dir (a real log dir here)."""
    ctx, _ = _manager("3.9")
    manager = LogManager(str(tmp_path))
    tps = [("test-a", 0), ("test-a", 1), ("test-a", 2), ("test-b", 0), ("test-b", 1)]
    logs = _fifty_flushed(ctx, manager, tps)
    manager.checkpoint_recovery_offsets_in_dir(str(tmp_path))
    with open(tmp_path / LogManager.RECOVERY_POINT_CHECKPOINT_FILE, encoding="utf-8") as f:
        checkpoints = {(t, p): o for t, p, o in parse_offsets(f.read(), "checkpoint")}
    assert {tp: checkpoints[tp] for tp in tps} == {
        tp: log.recovery_point for tp, log in zip(tps, logs, strict=True)}
    with pytest.raises(ValueError):
        manager.checkpoint_recovery_offsets_in_dir(str(tmp_path / "elsewhere"))


# -- UnifiedLogTest @3.9.0: the log's partition.metadata -------------------------------------


def test_log_flushes_partition_metadata_on_append(tmp_path):
    """UnifiedLogTest.testLogFlushesPartitionMetadataOnAppend @3.9.0: a recorded topic id is
    flushed by the next append (UnifiedLog.append -> maybeFlushMetadataFile)."""
    ctx, manager = _manager("3.9")
    log = manager.get_or_create_log(ctx, "foo", 0)
    topic_id = _random_uuid(random.Random(6))
    log.partition_metadata_file.record(topic_id)
    _append(log)
    assert log.partition_metadata_file.exists()
    assert log.partition_metadata_file.read().topic_id == topic_id


def test_log_recovers_topic_id():
    """UnifiedLogTest.testLogRecoversTopicId @3.9.0: assignTopicId, close, reopen: the
    reopened log's topicId is read from partition.metadata."""
    ctx, manager = _manager("3.9")
    log = manager.get_or_create_log(ctx, "foo", 0)
    topic_id = _random_uuid(random.Random(7))
    log.assign_topic_id(topic_id)
    manager.load_logs(ctx)
    assert manager.get_log(("foo", 0)).topic_id == topic_id
