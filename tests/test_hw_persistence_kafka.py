"""replication-offset-checkpoint, following Kafka's
core/src/test/scala/unit/kafka/server/HighwatermarkPersistenceTest.scala (trunk 1eb7644): the
HW of every hosted log is written by checkpointHighWatermarks and read back as it was. kafkasim
keeps the file on ``LogManager`` (Kafka's ReplicaManager.checkpointHighWatermarks writes it
through the log dir's OffsetCheckpointFile)."""

from __future__ import annotations

from kafkasim.core.checkpoint import REPLICATION_OFFSET_CHECKPOINT
from kafkasim.core.fake import FakeContext
from kafkasim.runtime.log_manager import LogManager


def _hwm_for(manager: LogManager, topic: str, partition: int) -> int:
    """HighwatermarkPersistenceTest.hwmFor: the checkpointed HW, 0 when not in the file."""
    offsets = {(t, p): o for t, p, o in manager._read_offsets(REPLICATION_OFFSET_CHECKPOINT)}
    return offsets.get((topic, partition), 0)


def _append(log, count: int) -> None:
    log.append_as_leader(list(range(count)), [1] * count, 0, 0)


# testHighWatermarkPersistenceSinglePartition
def test_one_partition_hw_is_checkpointed():
    ctx, manager = FakeContext(), LogManager()
    manager.checkpoint_high_watermarks()
    assert _hwm_for(manager, "foo", 0) == 0
    log = manager.get_or_create_log(ctx, "foo", 0)
    manager.checkpoint_high_watermarks()
    assert _hwm_for(manager, "foo", 0) == log.high_watermark == 0
    _append(log, 5)
    log.update_high_watermark(5)
    manager.checkpoint_high_watermarks()
    assert _hwm_for(manager, "foo", 0) == 5


# testHighWatermarkPersistenceMultiplePartitions
def test_each_partition_keeps_its_own_hw():
    ctx, manager = FakeContext(), LogManager()
    log1 = manager.get_or_create_log(ctx, "foo1", 0)
    _append(log1, 5)
    log1.update_high_watermark(5)
    manager.checkpoint_high_watermarks()
    assert _hwm_for(manager, "foo1", 0) == 5
    log2 = manager.get_or_create_log(ctx, "foo2", 0)
    manager.checkpoint_high_watermarks()
    assert _hwm_for(manager, "foo2", 0) == 0
    _append(log2, 15)
    log2.update_high_watermark(15)
    _append(log1, 5)
    log1.update_high_watermark(10)
    assert _hwm_for(manager, "foo1", 0) == 5   # not written until the next checkpoint
    manager.checkpoint_high_watermarks()
    assert (_hwm_for(manager, "foo1", 0), _hwm_for(manager, "foo2", 0)) == (10, 15)
