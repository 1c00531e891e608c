"""A broker's log dir: ``LogManager`` (kafka.log.LogManager reduced to what replication needs).

It holds the broker's logs (they survive a crash: the log dir stays), loads them at a start
(``load_logs``: LogManager.loadLogs / LogLoader), creates a partition's log the first time
(``get_or_create_log``), writes the three offset checkpoint files, flushes logs by time
(LogManager.flushDirtyLogs) and, below Kafka, models the OS page cache writing dirty pages back.

Its periodic tasks are the module's ``_timer_...`` functions, run through the broker's
``schedule_timer`` as ``fn(broker, *args)`` (KafkaScheduler: ``schedule_periodic``).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable
from typing import Any

from kafkasim.core import events as ev
from kafkasim.core import producer_state
from kafkasim.core.checkpoint import (
    CLEAN_SHUTDOWN_FILE,
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    PARTITION_METADATA_FILE,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    CleanShutdownFileHandler,
    CorruptCheckpointError,
    LeaderEpochCheckpointFile,
    LogDir,
    OffsetCheckpointFile,
    PartitionMetadataFile,
    parse_epochs,
    parse_offsets,
)
from kafkasim.core.leader_epoch import LeaderEpochFileCache
from kafkasim.core.log import (
    STRAY_DIR_SUFFIX,
    Log,
    log_dir_name,
    log_stray_dir_name,
    parse_topic_partition_name,
)
from kafkasim.core.producer_state import ProducerStateManager
from kafkasim.core.state_change import find_stray_replicas
from kafkasim.runtime.metadata_cache import ZERO_UUID
from kafkasim.settings.versions import version_at_least

LONG_MAX = 2**63 - 1
PAGE_CACHE_WRITEBACK_INTERVAL_MS = 5000   # Linux dirty_writeback_centisecs = 500
LOG_MANAGER_INITIAL_TASK_DELAY_MS = 30000  # LogManager.InitialTaskDelayMs (to 3.7; a config since)
PAGE_CACHE_DIRTY_EXPIRE_MS = 30000        # Linux dirty_expire_centisecs = 3000


#: LogCleanerManager.offsetCheckpointFile: the log cleaner's checkpoint. The cleaner runs by
#: default since 0.9.0.1 (log.cleaner.enable true); it stays empty without compacted topics
CLEANER_OFFSET_CHECKPOINT = "cleaner-offset-checkpoint"


class LogManager:
    """The broker's log dir and its logs. Methods that read the clock, the configs or trace
    take the broker as ``ctx``."""

    #: LogManager.RecoveryPointCheckpointFile / LogStartOffsetCheckpointFile
    RECOVERY_POINT_CHECKPOINT_FILE = RECOVERY_POINT_CHECKPOINT
    LOG_START_OFFSET_CHECKPOINT_FILE = LOG_START_OFFSET_CHECKPOINT

    def __init__(self, log_dir: str | None = None) -> None:
        self.log_dir = LogDir(log_dir)
        self.logs: dict[tuple[str, int], Log] = {}       # the log dir: survives a crash
        self.writeback_history: dict[tuple[str, int], list[int]] = {}
        self.last_flush_ms: dict[tuple[str, int], int] = {}   # LocalLog.lastFlushedTime
        #: a slow disk (Cluster.slow): writing fetched records takes this many ms per record
        self.disk_delay_ms: float = 0
        #: LogManager.strayLogs (3.7+): logs moved aside as stray, renamed
        #: ``topic-partition.uniqueId-stray`` and kept on disk (never loaded as a replica,
        #: never deleted by the broker: the operator removes them)
        self.stray_logs: dict[tuple[str, int], Log] = {}

    # -- <log.dir>/.kafka_cleanshutdown -----------------------------------------------------
    @property
    def clean_shutdown_file(self) -> bool | int:
        """The ``.kafka_cleanshutdown`` file of the log dir: False when absent; when present,
        the broker epoch it holds (CleanShutdownFileHandler.read, 3.7+, KAFKA-15582:
        ``{"version":0,"brokerEpoch":N}``), or True when it holds none (an empty file, as
        LogManager.shutdown wrote it before 3.7, or one that does not parse)."""
        handler = CleanShutdownFileHandler(self.log_dir)
        if not handler.exists():
            return False
        epoch = handler.read()
        return True if epoch is None else epoch

    @clean_shutdown_file.setter
    def clean_shutdown_file(self, value: bool | int) -> None:
        """False deletes the file (LogManager.loadLogs, once it found it); True writes it empty
        (before 3.7); a broker epoch writes CleanShutdownFileHandler's JSON (3.7+)."""
        if value is False:
            CleanShutdownFileHandler(self.log_dir).delete()
        elif value is True:
            self.log_dir.write_atomic(CLEAN_SHUTDOWN_FILE, "")
        else:
            CleanShutdownFileHandler(self.log_dir).write(int(value))

    def previous_broker_epoch(self) -> int:
        """The broker epoch in ``.kafka_cleanshutdown`` (3.7+), -1 without one."""
        f = self.clean_shutdown_file
        return f if type(f) is int else -1

    # -- logs -------------------------------------------------------------------------------
    def get_or_create_log(self, ctx: Any, topic: str, partition: int,
                          topic_id: str | None = None) -> Log:
        """LogManager.getOrCreateLog: the partition's log, a new empty one the first time. With
        a ``topic_id`` (2.8+, KIP-516; a broker passes the one its metadata knows) a log that
        has none takes it (UnifiedLog.assignTopicId: partition.metadata is written), and a log
        that has another one is an InconsistentTopicIdException."""
        tp = (topic, partition)
        log = self.logs.get(tp)
        if log is None:
            log = Log(topic, partition)
            log.config = ctx.topic_config(topic)
            log.leader_epoch_cache = LeaderEpochFileCache(**epoch_cache_rules(ctx.rules))
            log.producer_states.evicts_below_log_start = \
                ctx.rules.clients.producer_state_evicts_below_log_start
            self.attach(ctx, log)
            self.logs[tp] = log
            self.last_flush_ms[tp] = ctx.now  # LocalLog.lastFlushedTime starts now
        if topic_id is None:
            topic_id = _known_topic_id(ctx, topic)
        if topic_id is not None:
            log.assign_topic_id(topic_id)
        return log

    def get_log(self, tp: tuple[str, int]) -> Log | None:
        """LogManager.getLog: the partition's log, None when this log dir has none (nothing
        is created)."""
        return self.logs.get(tp)

    def update_topic_configs(self, configs: dict) -> None:
        """LogManager.updateTopicConfig for every topic: each log takes its topic's config
        (``configs``: topic -> config) now."""
        for (topic, _partition), log in self.logs.items():
            log.config = configs.get(topic, log.config)

    def attach(self, ctx: Any, log: Log) -> None:
        """Make the broker the log's listener and give its epoch cache the log's
        leader-epoch-checkpoint (none before KIP-101, 0.11)."""
        log.listener = ctx
        # (opening the file creates it, empty, if it is missing)
        log.leader_epoch_cache.checkpoint = LeaderEpochCheckpointFile(
            f"{log.topic}-{log.partition}/{LEADER_EPOCH_CHECKPOINT}", store=self.log_dir) \
            if ctx.rules.fetch.leader_epoch_truncation else None
        # UnifiedLog.initializePartitionMetadata (2.8+; opening it does not create the file)
        log.partition_metadata_file = PartitionMetadataFile(
            f"{log.topic}-{log.partition}/{PARTITION_METADATA_FILE}", store=self.log_dir) \
            if ctx.rules.fetch.partition_metadata_file else None

    def delete_log(self, tp) -> None:
        """LogManager.asyncDelete: the replica was removed from this broker."""
        if self.logs.pop(tp, None) is not None:
            self.writeback_history.pop(tp, None)
            self.last_flush_ms.pop(tp, None)
            self.log_dir.delete(f"{tp[0]}-{tp[1]}/{LEADER_EPOCH_CHECKPOINT}")
            self.log_dir.delete(f"{tp[0]}-{tp[1]}/{PARTITION_METADATA_FILE}")

    # -- loading (LogManager.loadLogs) ------------------------------------------------------
    def load_logs(self, ctx: Any) -> None:
        """LogManager.loadLogs after a restart: the HW from replication-offset-checkpoint, the
        epoch cache from each leader-epoch-checkpoint (after an unclean shutdown with the newer
        epochs of the recovered batches; truncated to the LEO), the recovery point
        and log start offset from their files. Opening a checkpoint file creates it empty if
        it is missing (CheckpointFile's constructor).

        A malformed replication-offset-checkpoint or leader-epoch-checkpoint stops the broker
        (KafkaStorageException takes the log dir offline). A malformed
        recovery-point-offset-checkpoint or log-start-offset-checkpoint does not: LogManager
        .loadLogs catches any exception, warns and goes on as if the file were empty (recovery
        point 0, log start at the first segment), in every version since 0.10.2 at least."""
        d = self.log_dir
        d.create_if_missing(REPLICATION_OFFSET_CHECKPOINT)
        d.create_if_missing(RECOVERY_POINT_CHECKPOINT)
        if "log.flush.start.offset.checkpoint.interval.ms" in ctx.config:
            d.create_if_missing(LOG_START_OFFSET_CHECKPOINT)  # 0.11+ (KIP-107)
        if version_at_least(ctx.cluster.kafka_version, "0.10.0"):   # the 0.9.0 line: 0.9.0.0
            d.create_if_missing(CLEANER_OFFSET_CHECKPOINT)   # new LogCleaner at LogManager start
        # CleanShutdownFileHandler.exists(): the file, whatever broker epoch it holds
        had_clean_shutdown = self.clean_shutdown_file is not False
        self.clean_shutdown_file = False
        for name in _stray_dir_names(d):   # LogManager.loadLog: "Loaded stray log" (3.7+)
            topic, partition = parse_topic_partition_name(name)
            ctx.trace("stray_log", topic, partition, ev.StrayLog("", "loaded", name))
        if not self.logs:
            return
        hws = {(t, p): o for t, p, o in self._read_offsets(REPLICATION_OFFSET_CHECKPOINT)}
        rps = self._read_offsets_or_warn(ctx, RECOVERY_POINT_CHECKPOINT,
                                         "resetting the recovery checkpoint to 0")
        lss = self._read_offsets_or_warn(ctx, LOG_START_OFFSET_CHECKPOINT,
                                         "resetting to the base offset of the first segment")
        for tp, log in self.logs.items():
            self._load_log(ctx, tp, log, hws.get(tp, 0), rps.get(tp, 0), lss.get(tp),
                           had_clean_shutdown)

    def _load_log(self, ctx: Any, tp, log: Log, hw: int, recovery_point: int,
                  log_start: int | None, had_clean_shutdown: bool) -> None:
        """LogLoader.load for one log. After an unclean shutdown the log is recovered
        (LogLoader.recoverLog -> LogSegment.recover: the recovered batches' newer leader epochs
        enter the epoch cache). Recovery point (LogLoader.recoverLog; Log.recoverLog before
        3.0): after a clean shutdown (``.kafka_cleanshutdown`` found, and deleted) it is the
        LEO; otherwise min(checkpointed recovery point (0 if absent), LEO): Kafka re-reads and
        keeps the data between it and the LEO, and only a later flush moves it."""
        self._load_leader_epoch_cache(ctx, tp, log)
        _initialize_topic_id(log)
        fetch = ctx.rules.fetch
        if not had_clean_shutdown and fetch.leader_epoch_truncation:
            log.recover_segment(1 if fetch.recovery_skips_leader_epoch_zero else 0)
        # LogLoader.load: the cache is truncated to the log end with its file attached, so
        # entries past a log that lost its unflushed tail are removed from the file as well
        log.leader_epoch_cache.truncate_from_end(log.log_end_offset)
        if log_start is not None and log_start > log.log_end_offset and \
                fetch.log_start_past_end_deletes_segments:
            # LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd (2.3+, KAFKA-8306)
            ctx.trace("checkpoint_warning", tp[0], tp[1], ev.LogStartPastLogEnd(
                f"{tp[0]}-{tp[1]}", log.log_end_offset, log_start))
            log.truncate_fully_and_start_at(log_start)
        elif log_start is not None and log_start > log.log_start_offset:
            # the checkpointed log start, within the log (before 2.3 kafkasim keeps a start
            # checkpointed past the log end at the LEO); the HW (set below) not below it
            log_start = min(log_start, log.log_end_offset)
            log.high_watermark = max(log.high_watermark, log_start)
            log.maybe_increment_log_start_offset(log_start)
        leo = log.log_end_offset
        rp = leo if had_clean_shutdown else min(recovery_point, leo)
        log.recovery_point = max(rp, log.log_start_offset)
        log.durable_offset = max(log.durable_offset, log.recovery_point)
        self.last_flush_ms[tp] = ctx.now  # a loaded LocalLog starts its flush clock now
        log.high_watermark = 0
        log.update_high_watermark(hw)
        self._load_producer_state(log, had_clean_shutdown)
        ctx.trace("log_recovery", tp[0], tp[1],
                  ev.LogRecovery(log.log_end_offset, log.high_watermark,
                                 REPLICATION_OFFSET_CHECKPOINT,
                                 tuple(map(tuple, log.leader_epoch_cache.entries))))
        ctx.trace("hw", tp[0], tp[1], log.high_watermark)

    @staticmethod
    def _load_producer_state(log: Log, had_clean_shutdown: bool) -> None:
        """LogLoader.load's producer state: a new ProducerStateManager with the snapshot files
        the log's directory holds (loadSnapshots; the old state was in memory). After an unclean
        shutdown the segment is recovered (LogLoader.recoverSegment): its own ProducerState
        Manager reloads to the segment's base, deleting every snapshot above it, replays all
        the segment's batches and snapshots at its end. Then removeStraySnapshots and
        rebuildProducerState up to the log end offset: both ways, the state of each producer is
        the last batch a snapshot kept."""
        old = log.producer_states
        states = log.producer_states = ProducerStateManager(
            old.snapshots, evicts_below_log_start=old.evicts_below_log_start)
        start = log.log_start_offset   # the first segment's base (then the rolled ones)
        if not had_clean_shutdown:
            recovered = producer_state.rebuild(log)   # (from the segment's base: no snapshot)
            recovered.take_snapshot()
            states.snapshots = dict(recovered.snapshots)
        states.remove_stray_snapshots((start, *log.rolled_segment_bases))
        log.rebuild_producer_state(log.log_end_offset, had_clean_shutdown)

    def _load_leader_epoch_cache(self, ctx: Any, tp, log: Log) -> None:
        """UnifiedLog.maybeCreateLeaderEpochCache: the log's epoch cache from its
        leader-epoch-checkpoint (none before KIP-101, 0.11), attached to the file."""
        d = self.log_dir
        rel = f"{tp[0]}-{tp[1]}/{LEADER_EPOCH_CHECKPOINT}"
        text = None
        if ctx.rules.fetch.leader_epoch_truncation:
            d.create_if_missing(rel)
            text = d.read(rel)
        entries = parse_epochs(text, d.path(rel)) if text else []
        try:
            log.leader_epoch_cache = LeaderEpochFileCache.from_checkpoint(
                entries, **epoch_cache_rules(ctx.rules))
        except ValueError as e:  # 2.7+: IllegalArgumentException fails the log's load
            raise CorruptCheckpointError(d.path(rel), None, str(e)) from None
        self.attach(ctx, log)

    def _read_offsets(self, name: str) -> list[tuple[str, int, int]]:
        text = self.log_dir.read(name)
        return parse_offsets(text, self.log_dir.path(name)) if text else []

    def _read_offsets_or_warn(self, ctx: Any, name: str, resetting: str
                              ) -> dict[tuple[str, int], int]:
        """LogManager.loadLogs reads these two files inside ``try ... catch Exception => warn``."""
        try:
            return {(t, p): o for t, p, o in self._read_offsets(name)}
        except CorruptCheckpointError as e:
            ctx.trace("checkpoint_warning", detail=ev.CheckpointWarning(name, resetting, str(e)))
            return {}

    # -- checkpoint files -------------------------------------------------------------------
    def _write_offsets(self, name: str, offsets: dict[tuple[str, int], int]) -> None:
        OffsetCheckpointFile(name, store=self.log_dir).write(offsets)

    def checkpoint_high_watermarks(self, partitions: Iterable[tuple[str, int]] | None = None
                                   ) -> None:
        """ReplicaManager.checkpointHighWatermarks: replication-offset-checkpoint, with the HW of
        each online partition's log (onlinePartitionsIterator, partition.log.foreach: since 1.0,
        KIP-112, a partition of an offline log dir is skipped; before, every hosted replica
        with a log). ``partitions``: the ReplicaManager's hosted partitions (the broker passes
        them); only those whose log this LogManager holds are listed. None lists every log (a
        LogManager used alone). Kafka writes a log dir's file only when it has a partition to
        list (the HWs are grouped by log dir), so with none the file is left as it is."""
        logs = self.logs
        hws = {tp: logs[tp].high_watermark for tp in sorted(
            logs if partitions is None else (tp for tp in partitions if tp in logs))}
        if hws:
            self._write_offsets(REPLICATION_OFFSET_CHECKPOINT, hws)

    def checkpoint_recovery_points(self) -> None:
        """LogManager.checkpointLogRecoveryOffsets: recovery-point-offset-checkpoint."""
        self._write_offsets(RECOVERY_POINT_CHECKPOINT, {
            tp: log.recovery_point for tp, log in sorted(self.logs.items())})

    def checkpoint_log_recovery_offsets(self) -> None:
        """LogManager.checkpointLogRecoveryOffsets (checkpointRecoveryOffsetsInDir for the one
        log dir): recovery-point-offset-checkpoint."""
        self.checkpoint_recovery_points()

    def checkpoint_recovery_offsets_in_dir(self, log_dir: str | None = None) -> None:
        """LogManager.checkpointRecoveryOffsetsInDir(logDir): the recovery points of the logs
        in that dir; kafkasim's broker has one log dir, so ``log_dir`` must be it (or None)."""
        root = self.log_dir.root
        if log_dir is not None and root is not None and \
                os.path.abspath(log_dir) != os.path.abspath(root):
            raise ValueError(f"{log_dir} is not this LogManager's log dir")
        self.checkpoint_recovery_points()

    def truncate_to(self, partition_offsets: dict[tuple[str, int], int], is_future: bool = False,
                    ctx: Any = None) -> None:
        """LogManager.truncateTo: truncate each partition's log (a missing one, or any future
        log: kafkasim has none, is skipped), then rewrite recovery-point-offset-checkpoint if
        a log was truncated (KAFKA-5864, 1.0+); before 1.0 (``ctx``'s rules) after every call.
        The simulated brokers truncate their logs directly; ``Broker.on_truncate`` writes the
        file for them."""
        truncated = False
        for tp, offset in partition_offsets.items():
            log = None if is_future else self.logs.get(tp)
            if log is not None:
                # UnifiedLog.truncateTo answers whether the target was below the log end
                truncated |= offset < log.log_end_offset
                log.truncate_to(offset, "LogManager.truncateTo")
        always = ctx is not None and \
            not ctx.rules.fetch.recovery_checkpoint_only_after_truncation
        if truncated or always:
            self.checkpoint_recovery_points()

    def truncate_fully_and_start_at(self, topic_partition: tuple[str, int], new_offset: int,
                                    is_future: bool = False) -> None:
        """LogManager.truncateFullyAndStartAt: restart the partition's log empty at
        ``new_offset``, then rewrite recovery-point-offset-checkpoint (nothing without the
        log)."""
        log = None if is_future else self.logs.get(topic_partition)
        if log is not None:
            log.truncate_fully_and_start_at(new_offset)
            self.checkpoint_recovery_points()

    def checkpoint_log_start_offsets(self) -> None:
        """LogManager.checkpointLogStartOffsets (checkpointLogStartOffsetsInDir, 0.11+): only
        logs whose start moved past their first segment's base offset are listed, so not a
        log truncateFullyAndStartAt restarted at its new start (its new segment begins there):
        loading finds that start from the segment."""
        self._write_offsets(LOG_START_OFFSET_CHECKPOINT, {
            tp: log.log_start_offset for tp, log in sorted(self.logs.items())
            if log.log_start_offset > log.segment_base_offset})

    def cleanup_logs(self, ctx: Any) -> int:
        """LogManager.cleanupLogs (the kafka-log-retention task, ``startup``): every log
        whose cleanup.policy does not include ``compact`` (the log cleaner owns those) deletes
        its old segments at ``ctx.now`` (``Log.delete_old_segments``); returns how many
        segments went."""
        total = 0
        for _tp, log in sorted(self.logs.items()):
            policy = (log.config or ctx.topic_config(log.topic)).get("cleanup.policy", "delete")
            if "compact" not in str(policy):
                total += log.delete_old_segments(ctx.now)
        return total

    # -- stray replicas --------------------------------------------------------------------
    @property
    def all_logs(self) -> list[Log]:
        """LogManager.allLogs: every current log (kafkasim has no future logs); not the stray
        ones."""
        return list(self.logs.values())

    def add_stray_log(self, stray_partition: tuple[str, int], stray_log: Log) -> None:
        """LogManager.addStrayLog (3.7+): remember ``stray_log`` as the stray log of
        ``stray_partition``."""
        self.stray_logs[stray_partition] = stray_log

    def async_delete(self, ctx: Any, topic_partition: tuple[str, int],
                     is_stray: bool = False) -> Log | None:
        """LogManager.asyncDelete for one partition: its log leaves the current logs. Without
        ``is_stray`` it is deleted (``delete_log``); with it (3.7+, KAFKA-15605: "Move aside
        stray partitions, don't delete them") its directory is renamed
        ``topic-partition.uniqueId-stray`` (UnifiedLog.logStrayDirName) and the log is kept in
        ``stray_logs``. Returns the removed log, None when there was none."""
        log = self.logs.get(topic_partition)
        if log is None:
            return None
        if not is_stray:
            self.delete_log(topic_partition)
            return log
        del self.logs[topic_partition]
        self.writeback_history.pop(topic_partition, None)
        self.last_flush_ms.pop(topic_partition, None)
        self.log_dir.rename_dir(log_dir_name(*topic_partition), _stray_dir(ctx, topic_partition))
        log.listener = None   # nothing appends to it any more
        self.add_stray_log(topic_partition, log)
        return log

    @staticmethod
    def is_stray_replica(replicas: Iterable[int], broker_id: int, log: Log) -> bool:
        """LogManager.isStrayReplica (storage, 4.x): the log should not be on this broker when
        the metadata lists no replica for its partition (its topic id is unknown) or none of
        them is ``broker_id``."""
        replicas = tuple(replicas)
        return not replicas or broker_id not in replicas

    @staticmethod
    def is_stray_kraft_replica(broker_id: int, image: Any, log: Log) -> bool:
        """LogManager.isStrayKraftReplica (3.7-3.9; in BrokerMetadataPublisher since 4.0): a log
        without a topic id (no partition.metadata: nothing was appended before it was lost) is
        stray (3.9+, KAFKA-16814; see ``stray_reason`` for before); so is one whose topic id or
        partition the metadata image (a ``MetadataImage``) does not hold, or whose replicas
        leave out ``broker_id``."""
        if log.topic_id is None:
            return True
        name = image.topic_names.get(log.topic_id)
        reg = image.partitions.get((name, log.partition)) if name is not None else None
        return LogManager.is_stray_replica(reg.replicas if reg is not None else (), broker_id,
                                           log)

    @staticmethod
    def find_stray_replicas(broker_id: int, request: Any, logs: Iterable[Log]
                            ) -> list[tuple[str, int]]:
        """LogManager.findStrayReplicas (3.7-3.9, LogManager.scala:1652@3.9.0-rc3): the logs a
        full LeaderAndIsr does not list, or lists with another topic id
        (kafkasim.core.state_change.find_stray_replicas)."""
        return find_stray_replicas(broker_id, request, logs)

    def delete_stray_kraft_replicas(self, ctx: Any, broker_id: int, image: Any) -> bool:
        """A starting KRaft broker's stray logs, before ReplicaManager starts (3.7+, rule
        ``kraft_stray_logs_renamed``): LogManager.deleteStrayKRaftReplicas @3.7.0, since 3.8
        LogManager.loadLog with BrokerMetadataPublisher's ``isStray``
        (LogManager.startup(topicNames, isStray)): each log ``is_stray_kraft_replica`` finds is
        renamed ``-stray`` and kept (``async_delete(is_stray=True)``). kafkasim loads the logs
        at the process start and does this at the first metadata publish, before any replica
        is made. A log without a topic id before 3.9 (KAFKA-16814) fails the startup: returns
        False, nothing moved (the broker must stop); True otherwise."""
        strays = []
        for tp, log in sorted(self.logs.items()):
            reason = stray_reason(ctx, broker_id, image, log)
            if reason is False:
                ctx.trace("stray_log", tp[0], tp[1], ev.StrayLogWithoutTopicId(
                    log_dir_name(*tp), True))
                return False
            if reason is not None:
                strays.append((tp, reason))
        for tp, reason in strays:
            self.async_delete(ctx, tp, is_stray=True)
            ctx.trace("stray_log", tp[0], tp[1], ev.StrayLog(reason, "renamed",
                                                             _stray_dir(ctx, tp)))
        return True

    # -- flush, shutdown, power loss --------------------------------------------------------
    def flush_for_shutdown(self, now: int,
                           partitions: Iterable[tuple[str, int]] | None = None) -> None:
        """LogManager.shutdown: flush every log, then write the three checkpoint files
        (replication-offset-checkpoint by ReplicaManager.shutdown: the HWs of ``partitions``,
        the hosted ones, see ``checkpoint_high_watermarks``)."""
        for tp, log in self.logs.items():
            if log.flush():
                self.last_flush_ms[tp] = now
            log.maybe_flush_metadata_file()   # UnifiedLog.close
            log.take_producer_snapshot()
        self.checkpoint_high_watermarks(partitions)
        self.checkpoint_recovery_points()
        self.checkpoint_log_start_offsets()

    def flush_after_failed_startup(self) -> None:
        """LogManager.shutdown when KafkaServer.startup failed: the ReplicaManager hosts no
        partition yet, so replication-offset-checkpoint is not rewritten."""
        for log in self.logs.values():
            log.flush()
            log.maybe_flush_metadata_file()   # UnifiedLog.close
            log.take_producer_snapshot()
        self.checkpoint_recovery_points()
        self.checkpoint_log_start_offsets()

    def lose_unsynced(self, ctx: Any) -> int:
        """A power loss: each log keeps only what reached the disk, whether Kafka fsynced it
        or the OS wrote the page cache back (``Log.durable_offset``); returns the records lost."""
        lost = 0
        for tp, log in self.logs.items():
            keep = log.durable_offset
            old_leo = log.log_end_offset
            n = log.lose_unsynced(keep)
            if n:   # (the producer snapshots, fsynced when written, are on disk still)
                log.producer_states.update_map_end_offset(old_leo)
                log.rebuild_producer_state(log.log_end_offset)
            lost += n
            if n:
                ctx.trace("truncate", tp[0], tp[1], ev.PowerLossTruncate(n, keep))
        return lost

    def write_back_page_cache(self) -> None:
        """The OS writes dirty pages back once they are older than ~30 s (Linux's
        dirty_expire_centisecs), checked every 5 s: data that old survives a power loss."""
        ticks = PAGE_CACHE_DIRTY_EXPIRE_MS // PAGE_CACHE_WRITEBACK_INTERVAL_MS
        for tp, log in self.logs.items():
            hist = self.writeback_history.setdefault(tp, [])
            hist.append(log.log_end_offset)
            if len(hist) > ticks:
                log.write_back(hist.pop(0))  # durable, but Kafka's recovery point stays

    def flush_dirty_logs(self, ctx: Any) -> None:
        """LogManager.flushDirtyLogs: flush each log whose time since its last flush (any flush
        that moved its recovery point, LocalLog.markFlushed) reached its topic's flush.ms."""
        now = ctx.now
        for tp, log in self.logs.items():
            flush_ms = ctx.topic_config(tp[0])["flush.ms"]
            if now - self.last_flush_ms.setdefault(tp, now) >= flush_ms and log.flush():
                self.last_flush_ms[tp] = now

    # -- periodic tasks ---------------------------------------------------------------------
    @staticmethod
    def start_high_watermark_checkpoints(ctx: Any) -> None:
        """ReplicaManager's highwatermark-checkpoint task (ReplicaManager
        .start_high_watermark_check_point_thread): KafkaScheduler.schedule(name, task, 0,
        replica.high.watermark.checkpoint.interval.ms) -- the first run now."""
        schedule_periodic(ctx, ctx.config["replica.high.watermark.checkpoint.interval.ms"], 0,
                          _timer_highwatermark_checkpoint, first_ms=0)

    def startup(self, ctx: Any) -> None:
        """Schedule the periodic tasks: LogManager's recovery-point and log-start-offset
        checkpoints, log flusher and log retention, the OS writeback (ReplicaManager's
        highwatermark-checkpoint starts with the first LeaderAndIsr or metadata publish:
        ``start_high_watermark_checkpoints``)."""
        cfg = ctx.config
        # LogManager.startup: its tasks first run after initialTaskDelayMs (InitialTaskDelayMs,
        # 30000; log.initial.task.delay.ms since 3.8, KAFKA-16552), then every period
        # (KafkaScheduler.schedule -> scheduleAtFixedRate(task, delay, period))
        delay = cfg.get("log.initial.task.delay.ms", LOG_MANAGER_INITIAL_TASK_DELAY_MS)
        schedule_periodic(ctx, cfg["log.flush.offset.checkpoint.interval.ms"], delay,
                          _timer_recovery_point_checkpoint, first_ms=delay)
        # kafka-log-retention: cleanupLogs every log.retention.check.interval.ms
        # (LogManager.scala:628-631@3.9.0-rc3, LogManager.scala:181-185@0.8.2.0)
        retention_ms = cfg["log.retention.check.interval.ms"]
        schedule_periodic(ctx, retention_ms, delay, _timer_log_retention, retention_ms,
                          first_ms=delay)
        if "log.flush.start.offset.checkpoint.interval.ms" in cfg:
            schedule_periodic(ctx, cfg["log.flush.start.offset.checkpoint.interval.ms"], delay,
                              _timer_log_start_offset_checkpoint, first_ms=delay)
        ctx.schedule_timer(PAGE_CACHE_WRITEBACK_INTERVAL_MS, _timer_page_cache_writeback)
        flush_ms = cfg.get("log.flush.scheduler.interval.ms", LONG_MAX)
        if flush_ms < LONG_MAX:
            schedule_periodic(ctx, flush_ms, delay, _timer_log_flusher, flush_ms, first_ms=delay)


def stray_reason(ctx: Any, broker_id: int, image: Any, log: Log) -> str | None | bool:
    """Why ``log`` is stray on ``broker_id`` by the metadata ``image`` (the line Kafka logs:
    LogManager.isStrayKraftReplica, BrokerMetadataPublisher.findStrayPartitions), None if it
    is not. A log without a topic id: stray since 3.9 (KAFKA-16814); before, False (the check
    threw)."""
    name = log_dir_name(log.topic, log.partition)
    if log.topic_id is None:
        if not ctx.rules.controller.stray_log_without_topic_id_is_stray:
            return False
        return f"The topicId does not exist in {name}, treat it as a stray log"
    if not LogManager.is_stray_kraft_replica(broker_id, image, log):
        return None
    topic = image.topic_names.get(log.topic_id)
    reg = image.partitions.get((topic, log.partition)) if topic is not None else None
    if reg is None:
        return (f"Found stray log dir {name}: the topicId {log.topic_id} does not exist in the "
                "metadata image")
    return (f"Found stray log dir {name}: the current replica assignment "
            f"[{', '.join(map(str, reg.replicas))}] does not contain the local brokerId "
            f"{broker_id}.")


def find_stray_partitions(ctx: Any, broker_id: int, image: Any, logs: dict
                          ) -> list[tuple[tuple[str, int], str]] | None:
    """BrokerMetadataPublisher.findStrayPartitions (3.0-3.6, BrokerMetadataPublisher.scala:70
    @3.3.0): each log (``logs``: tp -> Log) the metadata ``image`` does not give
    ``broker_id``, with the reason; None when a log has no topic id (the RuntimeException
    that made finishInitializingReplicaManager delete nothing)."""
    strays = []
    for tp, log in sorted(logs.items()):
        reason = stray_reason(ctx, broker_id, image, log)
        if reason is False:
            ctx.trace("stray_log", tp[0], tp[1], ev.StrayLogWithoutTopicId(log_dir_name(*tp),
                                                                          False))
            return None
        if reason is not None:
            strays.append((tp, reason))
    return strays


def _stray_dir(ctx: Any, tp: tuple[str, int]) -> str:
    """The ``-stray`` directory a log of ``tp`` moved aside now is renamed to. Kafka's uniqueId
    is a random UUID (32 hex digits, no dashes); kafkasim derives 32 hex digits from the broker,
    the partition and the time, drawing nothing at random."""
    key = f"{getattr(ctx, 'id', -1)}/{tp[0]}-{tp[1]}/{getattr(ctx, 'now', 0)}"
    unique_id = hashlib.md5(key.encode(), usedforsecurity=False).hexdigest()
    return log_stray_dir_name(tp[0], tp[1], unique_id)


def _stray_dir_names(log_dir: LogDir) -> list[str]:
    """The ``topic-partition.uniqueId-stray`` directories the log dir holds, by name."""
    names = {rel.split("/", 1)[0] for rel in log_dir.files if "/" in rel}
    if log_dir.root is not None and os.path.isdir(log_dir.root):
        names.update(os.listdir(log_dir.root))
    return sorted(n for n in names if n.endswith(STRAY_DIR_SUFFIX))


def _known_topic_id(ctx: Any, topic: str) -> str | None:
    """The topic id a KRaft broker's metadata image knows for ``topic``, None for none or the
    zero uuid. A ZooKeeper broker's log gets its id from the LeaderAndIsr only
    (ReplicaManager.becomeLeaderOrFollower), not from its metadata cache."""
    metadata = getattr(ctx, "metadata", None)
    if not getattr(metadata, "kraft", False):
        return None
    lookup = getattr(metadata, "topic_id", None)
    topic_id = lookup(topic) if lookup is not None else None
    return None if topic_id in (None, ZERO_UUID) else topic_id


def _initialize_topic_id(log: Log) -> None:
    """UnifiedLog.initializeTopicId when a log is loaded: the topic id its partition.metadata
    holds (a file that cannot be read is a KafkaStorageException); none without the file (the
    loaded UnifiedLog starts with ``topicId = None``: an id only in memory is gone)."""
    pmf = log.partition_metadata_file
    if pmf is not None:
        log.topic_id = pmf.read().topic_id if pmf.exists() else None


def epoch_cache_rules(rules) -> dict[str, bool]:
    """The LeaderEpochFileCache.assign rules of a Kafka version."""
    return {"truncates_conflicts": rules.fetch.leader_epoch_assign_truncates_conflicts,
            "validates_entries": rules.fetch.leader_epoch_cache_validates_entries}


# -- KafkaScheduler --------------------------------------------------------------------------
def schedule_periodic(ctx: Any, period_ms: int, once_delay_ms: int, fn: Callable[..., None],
                      *args, first_ms: int | None = None) -> None:
    """A periodic task as KafkaScheduler.schedule(name, task, delayMs, periodMs) runs it
    (server-common, 3.x and trunk): ``periodMs > 0`` repeats at that period (the first run
    after ``first_ms``, by default one period); ``periodMs <= 0`` runs it once only, after
    ``once_delay_ms`` (the caller's initial delay: 0 for ReplicaManager's tasks,
    LogManager.InitialTaskDelayMs for the log manager's). ``fn`` reschedules itself through
    ``reschedule``."""
    if period_ms > 0:
        ctx.schedule_timer(period_ms if first_ms is None else first_ms, fn, *args)
    else:
        ctx.schedule_timer(once_delay_ms, fn, *args)


def reschedule(ctx: Any, period_ms: int, fn: Callable[..., None], *args) -> None:
    if period_ms > 0:   # KafkaScheduler: a period <= 0 ran the task once
        ctx.schedule_timer(period_ms, fn, *args)


def _timer_highwatermark_checkpoint(ctx: Any) -> None:
    ctx.log_manager.checkpoint_high_watermarks(ctx.replica_manager.partitions)
    reschedule(ctx, ctx.config["replica.high.watermark.checkpoint.interval.ms"],
               _timer_highwatermark_checkpoint)


def _timer_recovery_point_checkpoint(ctx: Any) -> None:
    ctx.log_manager.checkpoint_recovery_points()
    reschedule(ctx, ctx.config["log.flush.offset.checkpoint.interval.ms"],
               _timer_recovery_point_checkpoint)


def _timer_log_start_offset_checkpoint(ctx: Any) -> None:
    ctx.log_manager.checkpoint_log_start_offsets()
    reschedule(ctx, ctx.config["log.flush.start.offset.checkpoint.interval.ms"],
               _timer_log_start_offset_checkpoint)


def _timer_page_cache_writeback(ctx: Any) -> None:
    ctx.log_manager.write_back_page_cache()
    ctx.schedule_timer(PAGE_CACHE_WRITEBACK_INTERVAL_MS, _timer_page_cache_writeback)


def _timer_log_retention(ctx: Any, period: int) -> None:
    ctx.log_manager.cleanup_logs(ctx)
    reschedule(ctx, period, _timer_log_retention, period)


def _timer_log_flusher(ctx: Any, period: int) -> None:
    ctx.log_manager.flush_dirty_logs(ctx)
    reschedule(ctx, period, _timer_log_flusher, period)
