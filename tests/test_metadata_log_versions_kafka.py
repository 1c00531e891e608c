"""The metadata cache, the high-watermark checkpoint and the log at older Kafka release tags.

Ports, at the tag each docstring names, cases of:

* core/src/test/scala/unit/kafka/server/MetadataCacheTest.scala (1.1.0, 2.4.0, 2.5.0, 2.7.0)
  against ``ZkMetadataCache`` built for that release (``MetadataCache.zk_metadata_cache(brokerId,
  version)``): what getPartitionMetadata answered for a partition without an available leader
  changed three times (KAFKA-8442 in 2.4: the ISR; KAFKA-9261 in 2.5: the leader epoch;
  KAFKA-10312 in 2.7: whose liveness decides LISTENER_NOT_FOUND), and LISTENER_NOT_FOUND itself
  is 2.0+ (KAFKA-6546);
* core/src/test/scala/unit/kafka/server/HighwatermarkPersistenceTest.scala (0.11.0.0, 1.1.0);
* core/src/test/scala/unit/kafka/log/LogManagerTest.scala (2.4.0): getLog and the
  recovery-point-offset-checkpoint;
* core/src/test/scala/unit/kafka/log/LogTest.scala (1.1.0, 2.0.0, 2.4.0, before UnifiedLog):
  truncation and the epoch cache, log start moves, recovery and the clean shutdown file, on a
  broker of that release (``FakeContext(kafka_version=...)``).

The fixtures are those of tests/test_checkpoints_metadata_kafka.py (UpdateMetadata requests)
and tests/test_unified_log_kafka.py (logs, appends, a LogManager on a FakeContext); their
adaptation notes apply. Left out: segments, indexes and rolls (testTruncateToEmptySegment's two
segments), producer snapshot files and their cleaning (the snapshot half of
testCheckpointRecoveryPoints and testCheckpointForOnlyAffectedLogs), log dir selection and
failures (testCreateLogWithInvalidLogDir, testLeastLoadedAssignment), retention and cleaning
(testCleanupExpiredSegments, testDoesntCleanLogs*: ported at 3.9.0 in
tests/test_checkpoint_s24_kafka.py, where kafkasim's segments are base offsets), topic config
changes (testTopicConfigChangeUpdatesLogConfig), and 0.11.0's OffsetCheckpointFileTest
.shouldThrowIfVersionIsNotRecognised (an IOException before KIP-112's KafkaStorageException in
1.0; kafkasim's checkpoint reader is the 1.0+ one).
"""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core.checkpoint import RECOVERY_POINT_CHECKPOINT, REPLICATION_OFFSET_CHECKPOINT
from kafkasim.core.fake import FakeContext
from kafkasim.core.leader_epoch import EpochEntry
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.log_manager import LogManager
from kafkasim.runtime.metadata_cache import MetadataCache
from tests import test_checkpoints_metadata_kafka as zk_ports
from tests.test_checkpoints_metadata_kafka import (
    PLAINTEXT,
    SSL,
    _state,
    _umr,
    _umr_broker,
    update_cache,
)
from tests.test_unified_log_kafka import (
    _append,
    _chunk,
    _entries,
    _epoch_file,
    _log,
    _manager,
    _write_recovery_point,
)

LISTENER_NOT_FOUND = "LISTENER_NOT_FOUND"


def _zk_cache(version: str, broker_id: int = 1):
    """``new MetadataCache(brokerId)`` of that release (a ZooKeeper-mode cache)."""
    return lambda: MetadataCache.zk_metadata_cache(broker_id, version)


def _no_leader_partition(version: str, cache_broker_id: int, brokers, listener: str, leader: int,
                         error_unavailable_listeners: bool, leader_epoch: int = 1):
    """verifyTopicMetadataPartitionLeaderOrEndpointNotAvailable's setup: partition ``topic-0``
    with replicas and ISR [0] led by ``leader``; the one partition's metadata."""
    cache = MetadataCache.zk_metadata_cache(cache_broker_id, version)
    update_cache(cache, _umr([_state("topic", 0, leader, leader_epoch, (0,), (0,))], brokers))
    (md,) = cache.get_topic_metadata(["topic"], listener,
                                     error_unavailable_listeners=error_unavailable_listeners)
    assert md.error_code == E.NONE
    (pm,) = md.partitions
    assert pm.partition_index == 0 and pm.leader_id == -1
    assert pm.replica_nodes == (0,)
    return pm


def _two_listener_brokers():
    """Broker 0 with PLAINTEXT and SSL, broker 1 with PLAINTEXT only."""
    return [_umr_broker(0, PLAINTEXT, SSL, host="host0"), _umr_broker(1, PLAINTEXT, host="host1")]


# -- MetadataCacheTest at older tags ------------------------------------------------------------


def test_get_topic_metadata_partition_leader_not_available_1_1():
    """MetadataCacheTest.getTopicMetadataPartitionLeaderNotAvailable @1.1.0: leader 1 is not
    alive: LEADER_NOT_AVAILABLE, the replicas listed, and the ISR empty (before KAFKA-8442)."""
    pm = _no_leader_partition("1.1", 1, [_umr_broker(0, PLAINTEXT)], PLAINTEXT, 1, False)
    assert pm.error_code == E.LEADER_NOT_AVAILABLE
    assert pm.isr_nodes == ()


@pytest.mark.parametrize("flag", [False, True])
def test_get_topic_metadata_partition_leader_not_available_2_4(flag):
    """MetadataCacheTest.getTopicMetadataPartitionLeaderNotAvailable @2.4.0: leader 1 is not
    alive: LEADER_NOT_AVAILABLE whether or not the request may have LISTENER_NOT_FOUND; the ISR
    is listed (KAFKA-8442, 2.4.0)."""
    pm = _no_leader_partition("2.4", 1, [_umr_broker(0, PLAINTEXT)], PLAINTEXT, 1, flag)
    assert pm.error_code == E.LEADER_NOT_AVAILABLE
    assert pm.isr_nodes == (0,)


def test_get_topic_metadata_partition_listener_not_available_on_leader_2_4():
    """MetadataCacheTest.getTopicMetadataPartitionListenerNotAvailableOnLeader @2.4.0: leader 1
    is alive without SSL: LISTENER_NOT_FOUND (Metadata v6+), the ISR listed."""
    pm = _no_leader_partition("2.4", 1, _two_listener_brokers(), SSL, 1, True)
    assert pm.error_code == LISTENER_NOT_FOUND
    assert pm.isr_nodes == (0,)


def test_get_topic_metadata_partition_listener_not_available_on_leader_old_metadata_version():
    """MetadataCacheTest.getTopicMetadataPartitionListenerNotAvailableOnLeaderOldMetadataVersion
    @2.4.0: the same, asked by a Metadata version below 6: LEADER_NOT_AVAILABLE."""
    pm = _no_leader_partition("2.4", 1, _two_listener_brokers(), SSL, 1, False)
    assert pm.error_code == E.LEADER_NOT_AVAILABLE
    assert pm.isr_nodes == (0,)


def test_listener_not_found_does_not_exist_in_1_1():
    """MetadataCache.getPartitionMetadata @1.1.0 (no errorUnavailableListeners before KAFKA-6546,
    2.0.0): a leader alive without the listener is LEADER_NOT_AVAILABLE with an empty ISR."""
    pm = _no_leader_partition("1.1", 1, _two_listener_brokers(), SSL, 1, True)
    assert pm.error_code == E.LEADER_NOT_AVAILABLE
    assert pm.isr_nodes == ()


@pytest.mark.parametrize(("version", "expected"), [
    ("2.0", LISTENER_NOT_FOUND), ("2.6", LISTENER_NOT_FOUND), ("2.7", E.LEADER_NOT_AVAILABLE),
])
def test_get_topic_metadata_partition_leader_not_available_cache_on_alive_broker(version,
                                                                                 expected):
    """MetadataCacheTest.getTopicMetadataPartitionLeaderNotAvailable @2.7.0 (metadataCacheBrokerId
    0, KAFKA-10312): the cache's own broker 0 is alive, leader 1 is not. 2.7 answers
    LEADER_NOT_AVAILABLE even to Metadata v6+; 2.0-2.6 asked whether the cache's broker was
    alive and answered LISTENER_NOT_FOUND (the false positive the 2.7.0 test was changed to
    catch)."""
    pm = _no_leader_partition(version, 0, [_umr_broker(0, PLAINTEXT)], PLAINTEXT, 1, True)
    assert pm.error_code == expected


def test_get_topic_metadata_partition_listener_not_available_on_leader_2_7():
    """MetadataCacheTest.getTopicMetadataPartitionListenerNotAvailableOnLeader @2.7.0
    (metadataCacheBrokerId 0): leader 1 alive without SSL is LISTENER_NOT_FOUND for Metadata
    v6+, LEADER_NOT_AVAILABLE below."""
    brokers = _two_listener_brokers()
    assert _no_leader_partition("2.7", 0, brokers, SSL, 1, True).error_code == LISTENER_NOT_FOUND
    assert _no_leader_partition("2.7", 0, brokers, SSL, 1, False).error_code \
        == E.LEADER_NOT_AVAILABLE


@pytest.mark.parametrize(("version", "epoch"), [("2.1", -1), ("2.4", -1), ("2.5", 7)])
def test_leader_not_available_leader_epoch(version, epoch):
    """MetadataCache.getPartitionMetadata @2.4.0 / @2.5.0 (KAFKA-9261; MetadataCacheTest
    .getTopicMetadata @2.5.0 checks ``Optional.of(leaderEpoch)``): without an available leader
    2.1-2.4 answer no leader epoch (-1), 2.5+ the partition's."""
    pm = _no_leader_partition(version, 1, [_umr_broker(0, PLAINTEXT)], PLAINTEXT, 1, False,
                              leader_epoch=7)
    assert pm.leader_epoch == epoch


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_get_topic_metadata_at_old_tags(version):
    """MetadataCacheTest.getTopicMetadata @1.1.0 / @2.4.0: every partition's leader, epoch, ISR
    and replicas on either listener, without error."""
    zk_ports.test_get_topic_metadata(_zk_cache(version))


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_get_topic_metadata_non_existing_topics_at_old_tags(version):
    """MetadataCacheTest.getTopicMetadataNonExistingTopics @1.1.0 / @2.4.0."""
    zk_ports.test_get_topic_metadata_non_existing_topics(_zk_cache(version))


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_get_topic_metadata_replica_not_available_at_old_tags(version):
    """MetadataCacheTest.getTopicMetadataReplicaNotAvailable @1.1.0 / @2.4.0: v0
    (errorUnavailableEndpoints) drops dead replica 1 with REPLICA_NOT_AVAILABLE."""
    zk_ports.test_get_topic_metadata_replica_not_available(_zk_cache(version))


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_get_topic_metadata_isr_not_available_at_old_tags(version):
    """MetadataCacheTest.getTopicMetadataIsrNotAvailable @1.1.0 / @2.4.0."""
    zk_ports.test_get_topic_metadata_isr_not_available(_zk_cache(version))


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_get_topic_metadata_with_non_supported_security_protocol_at_old_tags(version):
    """MetadataCacheTest.getTopicMetadataWithNonSupportedSecurityProtocol @1.1.0 / @2.4.0."""
    zk_ports.test_get_topic_metadata_with_non_supported_security_protocol(_zk_cache(version))


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_get_alive_brokers_should_not_be_mutated_by_update_cache_at_old_tags(version):
    """MetadataCacheTest.getAliveBrokersShouldNotBeMutatedByUpdateCache @1.1.0 / @2.4.0."""
    zk_ports.test_get_alive_brokers_should_not_be_mutated_by_update_cache(_zk_cache(version))


# -- HighwatermarkPersistenceTest at older tags -------------------------------------------------


def _hwm_for(manager: LogManager, tp: tuple[str, int]) -> int:
    """HighwatermarkPersistenceTest.hwmFor: the checkpointed HW, 0 when not in the file."""
    return {(t, p): o for t, p, o in manager._read_offsets(REPLICATION_OFFSET_CHECKPOINT)
            }.get(tp, 0)


@pytest.mark.parametrize("version", ["0.11.0", "1.1"])
def test_high_watermark_persistence_single_partition(version):
    """HighwatermarkPersistenceTest.testHighWatermarkPersistenceSinglePartition @0.11.0.0 /
    @1.1.0: nothing checkpointed reads as 0; a new replica's HW 0, then 5 once the leader's HW
    moved and the checkpoint ran."""
    ctx, manager = FakeContext(kafka_version=version), LogManager()
    manager.checkpoint_high_watermarks()
    assert _hwm_for(manager, ("foo", 0)) == 0
    log = manager.get_or_create_log(ctx, "foo", 0)
    manager.checkpoint_high_watermarks()
    assert _hwm_for(manager, ("foo", 0)) == log.high_watermark == 0
    _append(log, 5)
    log.update_high_watermark(5)
    manager.checkpoint_high_watermarks()
    assert _hwm_for(manager, ("foo", 0)) == 5


@pytest.mark.parametrize("version", ["0.11.0", "1.1"])
def test_high_watermark_persistence_multiple_partitions(version):
    """HighwatermarkPersistenceTest.testHighWatermarkPersistenceMultiplePartitions @0.11.0.0 /
    @1.1.0: each partition's HW is written at the next checkpoint, not before."""
    ctx, manager = FakeContext(kafka_version=version), LogManager()
    log1 = manager.get_or_create_log(ctx, "foo1", 0)
    _append(log1, 5)
    log1.update_high_watermark(5)
    manager.checkpoint_high_watermarks()
    assert _hwm_for(manager, ("foo1", 0)) == 5
    log2 = manager.get_or_create_log(ctx, "foo2", 0)
    manager.checkpoint_high_watermarks()
    assert _hwm_for(manager, ("foo2", 0)) == 0
    _append(log2, 15)
    log2.update_high_watermark(15)
    _append(log1, 5)
    log1.update_high_watermark(10)
    assert _hwm_for(manager, ("foo1", 0)) == 5
    manager.checkpoint_high_watermarks()
    assert (_hwm_for(manager, ("foo1", 0)), _hwm_for(manager, ("foo2", 0))) == (10, 15)


# -- LogManagerTest @2.4.0 ----------------------------------------------------------------------


def test_get_non_existent_log():
    """LogManagerTest.testGetNonExistentLog @2.4.0: no log, and no directory is created."""
    _ctx, manager = _manager("2.4")
    assert manager.get_log(("kafka", 0)) is None
    assert not any(name.startswith("kafka-0") for name in manager.log_dir.listing())


def _recovery_points(manager: LogManager) -> dict[tuple[str, int], int]:
    return {(t, p): o for t, p, o in manager._read_offsets(RECOVERY_POINT_CHECKPOINT)}


def _fifty_flushed(ctx, manager: LogManager, tps):
    logs = [manager.get_or_create_log(ctx, *tp) for tp in tps]
    for log in logs:
        for _ in range(50):
            _append(log)
        log.flush()
    return logs


def test_checkpoint_recovery_points():
    """LogManagerTest.testCheckpointRecoveryPoints @2.4.0 (verifyCheckpointRecovery): 50
    records appended and flushed in two logs; the checkpoint holds each recovery point."""
    ctx, manager = _manager("2.4")
    tps = [("test-a", 1), ("test-b", 1)]
    logs = _fifty_flushed(ctx, manager, tps)
    manager.checkpoint_recovery_points()
    checkpoints = _recovery_points(manager)
    for tp, log in zip(tps, logs, strict=True):
        assert checkpoints[tp] == log.recovery_point == 50
    assert manager.get_log(("test-a", 1)) is logs[0]


def test_checkpoint_for_only_affected_logs():
    """LogManagerTest.testCheckpointForOnlyAffectedLogs @2.4.0: checkpointing the recovery
    points for the logs of one topic (checkpointRecoveryOffsetsAndCleanSnapshot) still writes
    every log of the dir (checkpointLogRecoveryOffsetsInDir)."""
    ctx, manager = _manager("2.4")
    tps = [("test-a", 0), ("test-a", 1), ("test-a", 2), ("test-b", 0), ("test-b", 1)]
    logs = _fifty_flushed(ctx, manager, tps)
    manager.checkpoint_recovery_points()
    checkpoints = _recovery_points(manager)
    assert {tp: checkpoints[tp] for tp in tps} == {tp: log.recovery_point for tp, log in
                                                   zip(tps, logs, strict=True)}


# -- LogTest before UnifiedLog -------------------------------------------------------------------


@pytest.mark.parametrize("version", ["1.1", "2.0"])
def test_should_truncate_leader_epoch_file_when_truncating_log(version):
    """LogTest.shouldTruncateLeaderEpochFileWhenTruncatingLog @1.1.0 / @2.0.0: epochs 0@0, 1@10,
    2@16 over 20 records; truncating to the LEO changes nothing, to 11 keeps two entries, to 10
    one, to 0 none; the leader-epoch-checkpoint file follows."""
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "foo", 0)
    cache = log.leader_epoch_cache
    for _ in range(20):
        _append(log, epoch=0)
    cache.assign(0, 0)
    cache.assign(1, 10)
    cache.assign(2, 16)
    assert log.log_end_offset == 20
    log.truncate_to(log.log_end_offset)
    assert len(cache.epoch_entries()) == 3
    log.truncate_to(11)
    assert len(cache.epoch_entries()) == 2
    log.truncate_to(10)
    assert len(cache.epoch_entries()) == 1
    assert _epoch_file(manager) == [(0, 0)]
    log.truncate_to(0)
    assert cache.epoch_entries() == []
    assert _epoch_file(manager) == []


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_should_truncate_leader_epochs_when_deleting_segments(version):
    """LogTest.shouldTruncateLeaderEpochsWhenDeletingSegments @1.1.0 / @2.4.0: epochs 0@0, 1@5,
    2@10 over 15 records; retention drops the first five (the log start moves to 5): the
    oldest entry goes."""
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "foo", 0)
    for _ in range(15):
        _append(log)
    for epoch, offset in ((0, 0), (1, 5), (2, 10)):
        log.leader_epoch_cache.assign(epoch, offset)
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(5)
    assert _entries(log) == [(1, 5), (2, 10)]


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_should_update_offset_for_leader_epochs_when_deleting_segments(version):
    """LogTest.shouldUpdateOffsetForLeaderEpochsWhenDeletingSegments @1.1.0 / @2.4.0: epochs
    0@0, 1@7, 2@10; the log start moves to 5: epoch 0's entry now starts at 5."""
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "foo", 0)
    for _ in range(15):
        _append(log)
    for epoch, offset in ((0, 0), (1, 7), (2, 10)):
        log.leader_epoch_cache.assign(epoch, offset)
    log.update_high_watermark(log.log_end_offset)
    log.maybe_increment_log_start_offset(5)
    assert log.leader_epoch_cache.epoch_entries() == [EpochEntry(0, 5), EpochEntry(1, 7),
                                                      EpochEntry(2, 10)]


@pytest.mark.parametrize("version", ["1.1", "2.0"])
def test_log_recovers_for_leader_epoch_before_unified_log(version):
    """LogTest.testLogRecoversForLeaderEpoch @1.1.0 / @2.0.0: follower batches of epochs 1, 2,
    2, 3; entries deliberately cleared from offset 2 come back when the reopened log recovers
    from its start."""
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "foo", 0)
    for offset, epoch in enumerate((1, 2, 2, 3)):
        log.append_as_follower(_chunk(offset, [epoch]))
    assert _entries(log) == [(1, 0), (2, 1), (3, 3)]
    log.leader_epoch_cache.truncate_from_end(2)   # clearAndFlushLatest(2)
    assert _entries(log) != [(1, 0), (2, 1), (3, 3)]
    manager.load_logs(ctx)   # reopened after an unclean shutdown, recovery point 0
    assert _entries(log) == [(1, 0), (2, 1), (3, 3)]


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_log_recovers_to_correct_offset_before_unified_log(version):
    """LogTest.testLogRecoversToCorrectOffset @1.1.0 / @2.4.0: reopened at recovery point 100
    the log is whole; at 10 it recovers the 90 records above (not flushed until a flush)."""
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "foo", 0)
    for _ in range(100):
        _append(log)
    _write_recovery_point(manager, 100)
    manager.load_logs(ctx)
    assert (log.recovery_point, log.log_end_offset) == (100, 100)
    _write_recovery_point(manager, 10)
    manager.load_logs(ctx)
    assert (log.recovery_point, log.log_end_offset) == (10, 100)
    log.flush()
    assert log.recovery_point == 100


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_clean_shutdown_file_before_unified_log(version):
    """LogTest.testCleanShutdownFile @1.1.0 / @2.4.0: with ``.kafka_cleanshutdown`` (an empty
    file before 3.7) the reopened log is not recovered, whatever the recovery point (0)."""
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "foo", 0)
    for _ in range(100):
        _append(log)
    _write_recovery_point(manager, 0)
    manager.clean_shutdown_file = True
    assert manager.clean_shutdown_file is True
    manager.load_logs(ctx)
    assert log.log_end_offset == log.recovery_point == 100


@pytest.mark.parametrize("version", ["1.1", "2.4"])
def test_reopen_then_truncate_before_unified_log(version):
    """LogTest.testReopenThenTruncate @1.1.0 / @2.4.0."""
    ctx, manager = _manager(version)
    log = manager.get_or_create_log(ctx, "foo", 0)
    for _ in range(100):
        _append(log)
    manager.load_logs(ctx)
    log.truncate_to(3)
    assert log.log_end_offset == 3 and len(log) == 3


def test_load_empty_log():
    """LogTest.testLoadEmptyLog @1.1.0: a log created empty (createEmptyLogs(dir, 0)) takes an
    append at offset 0."""
    log = _log(0)
    assert _append(log) == (0, 0)
    assert log.log_end_offset == 1



# -- a broker's own cache answers as the cluster's release ---------------------------------------


@pytest.mark.parametrize(("version", "isr"), [("2.3", ()), ("2.4", (0,))])
def test_broker_metadata_cache_answers_as_its_release(version, isr):
    """KafkaServer.startup builds ``MetadataCache.zkMetadataCache(config.brokerId,
    config.interBrokerProtocolVersion, ...)`` (@3.3.0; before, the cache was that release's own
    code): a ZooKeeper-mode broker's cache answers as the broker's release, after a restart
    too. With leader 1 not alive the ISR is listed from 2.4 (KAFKA-8442), empty before
    (MetadataCache.getPartitionMetadata)."""
    c = Cluster([0, 1], seed=1, kafka_version=version)
    for _ in range(2):
        cache = c.brokers[0].metadata
        update_cache(cache, _umr([_state("topic", 0, 1, 1, (0,), (0,))],
                                 [_umr_broker(0, PLAINTEXT)]))
        (md,) = cache.get_topic_metadata(["topic"], PLAINTEXT)
        (pm,) = md.partitions
        assert (pm.error_code, pm.leader_id, pm.isr_nodes) == (E.LEADER_NOT_AVAILABLE, -1, isr)
        c.restart(0)
