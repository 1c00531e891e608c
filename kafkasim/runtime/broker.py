"""A broker: its log dir, ReplicaManager, fetcher threads, metadata cache and (maybe) controller.

The broker is the ``ctx`` the protocol objects talk to: it reads the clock and configs, sends
messages through the cluster's network, runs timers, records trace events and counts Kafka's
meters. Lifecycle: ``start`` (register in ZooKeeper, maybe become controller) and ``stop``.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field

from kafkasim.control.controller import KafkaController
from kafkasim.control.kraft.raft_messages import RAFT_MESSAGES
from kafkasim.control.zookeeper import (
    BadVersion,
    NodeExists,
    partition_state_json,
    partition_state_path,
)
from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core import producer_state
from kafkasim.core.checkpoint import (
    LEADER_EPOCH_CHECKPOINT,
    LOG_START_OFFSET_CHECKPOINT,
    RECOVERY_POINT_CHECKPOINT,
    REPLICATION_OFFSET_CHECKPOINT,
    CorruptCheckpointError,
    LeaderEpochCheckpointFile,
    LogDir,
    format_offsets,
    parse_epochs,
    parse_offsets,
)
from kafkasim.core.fetcher import (
    FETCHING,
    TRUNCATING,
    PartitionFetchState,
    ReplicaFetcherThread,
    become_follower_needed,
    fetcher_id_for,
)
from kafkasim.core.leader_epoch import LeaderEpochFileCache
from kafkasim.core.log import Log
from kafkasim.core.messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    FetchRequest,
    FetchResponse,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    MetadataRequest,
    MetadataResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
    PartitionState,
    ProduceRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
    ZkPing,
    ZkPingResponse,
)
from kafkasim.core.partition import Partition, PendingIsrChange
from kafkasim.core.replica_manager import ReplicaManager

# Partition.handleAlterPartitionError: errors that leave the change pending until new metadata
_ALTER_PARTITION_AWAIT_METADATA = frozenset({
    E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_ID, E.FENCED_LEADER_EPOCH,
    E.INVALID_UPDATE_VERSION, E.INVALID_REQUEST, E.NEW_LEADER_ELECTED})

RUNNING = "running"
STOPPED = "stopped"
SHUTTING_DOWN = "shutting down"
LONG_MAX = 2**63 - 1
PAGE_CACHE_WRITEBACK_INTERVAL_MS = 5000   # Linux dirty_writeback_centisecs = 500
LOG_MANAGER_INITIAL_TASK_DELAY_MS = 30000  # LogManager.InitialTaskDelayMs (core, 0.8 to 3.x)
PAGE_CACHE_DIRTY_EXPIRE_MS = 30000        # Linux dirty_expire_centisecs = 3000

#: NodeToControllerChannelManagerImpl's NetworkClient: reconnect.backoff.ms and its max are both
#: 50 ms for the broker-to-controller channels; doWork polls every 100 ms with no controller.
CONTROLLER_CHANNEL_RECONNECT_BACKOFF_MS = 50
CONTROLLER_CHANNEL_POLL_MS = 100

# Meters the broker marks (kafka.server:type=ReplicaManager / ControllerStats)
METERS = ("IsrShrinksPerSec", "IsrExpandsPerSec", "FailedIsrUpdatesPerSec",
          "UncleanLeaderElectionsPerSec", "IncrementalFetchSessionEvictionsPerSec")


@dataclass(slots=True)
class AlterPartitionManagerState:
    """DefaultAlterPartitionManager: one queued item per partition (unsentIsrUpdates), at most
    one AlterPartition request in flight (inflightRequest) and its correlation id."""

    unsent: dict = field(default_factory=dict)
    inflight: tuple | None = None
    corr: int = -1


@dataclass(slots=True)
class IsrChangePropagationState:
    """Before 2.7: the isr_change_notification queue and its timing (maybePropagateIsrChanges)."""

    change_set: list = field(default_factory=list)
    last_change_ms: int = 0
    last_propagation_ms: int = 0


@dataclass(slots=True)
class ControlledShutdownState:
    """KafkaServer.controlledShutdown's retry loop."""

    attempts_left: int = 0   # controlled shutdown attempts still allowed
    awaiting: int = -1       # the attempt waiting for its answer (-1: none)


class InGroup:
    """A broker (or cluster) attribute kept inside one of its small state groups. The object's
    own instance dict stays small: CPython 3.11 specializes attribute access only for instances
    with fewer than 30 attributes (a 30th costs the workload ~1% more instructions), and the core
    reads the broker and the cluster on every message."""

    __slots__ = ("group", "name")

    def __init__(self, group: str, name: str) -> None:
        self.group, self.name = group, name

    def __get__(self, obj, owner=None):
        return self if obj is None else getattr(getattr(obj, self.group), self.name)

    def __set__(self, obj, value) -> None:
        setattr(getattr(obj, self.group), self.name, value)


@dataclass(slots=True)
class MetadataCache:
    """What UpdateMetadata told this broker (kafka.server.MetadataCache)."""

    controller_id: int = -1
    controller_epoch: int = -1
    live_brokers: tuple[int, ...] = ()
    partitions: dict[tuple[str, int], PartitionState] = field(default_factory=dict)


class Broker:
    # rarely used state, grouped (see InGroup)
    alter_unsent = InGroup("alter_partition_manager", "unsent")
    alter_inflight = InGroup("alter_partition_manager", "inflight")
    alter_corr = InGroup("alter_partition_manager", "corr")
    isr_change_set = InGroup("isr_change_propagation", "change_set")
    last_isr_change_ms = InGroup("isr_change_propagation", "last_change_ms")
    last_isr_propagation_ms = InGroup("isr_change_propagation", "last_propagation_ms")
    shutdown_attempts_left = InGroup("controlled_shutdown_state", "attempts_left")
    shutdown_awaiting = InGroup("controlled_shutdown_state", "awaiting")

    def __init__(self, cluster, broker_id: int, rack: str | None, config: dict,
                 log_dir: str | None = None) -> None:
        self.cluster = cluster
        # the cluster's version rule flags (kafkasim.settings.versions.Rules) and rule functions
        # (kafkasim.core.rules.RuleBook, swapped in place by Cluster.swap_rule): shared
        # objects, held directly because the core reads them on every fetch
        self.rules = cluster.rules
        self.rulebook = cluster.rulebook
        self.id = broker_id
        self.rack = rack
        self.config = config
        self.state = STOPPED
        self.incarnation = 0
        self.session_id = 0
        self.broker_epoch = -1
        self.logs: dict[tuple[str, int], Log] = {}       # the log dir: survives a crash
        self.replica_manager = ReplicaManager()
        self.fetchers: dict[tuple[int, int], ReplicaFetcherThread] = {}
        # corr -> [deadline, timeout id, fetcher key] of the fetcher's request in flight: its
        # request timeout (deadline -1 once it fired), which Cluster._fire_timeouts reads in the
        # process's Cluster.timeouts entry (this incarnation's dict: Broker.start puts it there)
        self.fetch_inflight: dict[int, list] = {}
        self.metadata = MetadataCache()
        self.controller: KafkaController | None = None
        self.paused_until = 0
        self.disk_delay_ms = 0
        self.meters = dict.fromkeys(METERS, 0)
        self.correlation = 0
        self.isr_change_propagation = IsrChangePropagationState()   # pre-2.7
        self.alter_partition_manager = AlterPartitionManagerState()
        self.started_ms = 0
        self.log_dir = LogDir(log_dir)
        self.writeback_history: dict[tuple[str, int], list[int]] = {}
        self.last_flush_ms: dict[tuple[str, int], int] = {}   # LocalLog.lastFlushedTime
        # <log.dir>/.kafka_cleanshutdown: False when absent; True (ZooKeeper mode) or the broker
        # epoch it holds (KRaft, CleanShutdownFileHandler since 3.7) when present
        self.clean_shutdown_file = False
        self.lifecycle = None   # KRaft: BrokerLifecycleManager (kafkasim.runtime.broker_lifecycle)
        self.controlled_shutdown_state = ControlledShutdownState()

    def __repr__(self) -> str:
        return f"Broker({self.id}, {self.state}{', controller' if self.controller else ''})"

    # -- ctx interface ------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.cluster.engine.now

    @property
    def is_running(self) -> bool:
        return self.state in (RUNNING, SHUTTING_DOWN)

    def topic_config(self, topic: str) -> dict:
        return self.cluster.topic_configs[topic]

    def topic_exists(self, topic: str) -> bool:
        return topic in self.cluster.topic_configs

    def is_isr_eligible(self, broker_id: int) -> bool:
        """ZK mode: the broker is alive in this broker's metadata cache."""
        return broker_id in self.metadata.live_brokers

    def isr_eligible_brokers(self) -> tuple[int, ...]:
        """Brokers whose replicas may join the ISR or hold the HW as caught up (ZK mode: alive
        in this broker's metadata cache)."""
        return self.metadata.live_brokers

    def cluster_racks(self) -> dict[int, str | None]:
        """broker.rack of every broker (what the metadata cache knows of each broker)."""
        return {b.id: b.rack for b in self.cluster.brokers.values()}

    def mark_meter(self, name: str, count: int = 1) -> None:
        self.meters[name] += count

    def partition_changed(self, tp) -> None:
        rm = self.replica_manager
        if tp in rm.quiet:
            rm.unquiet(self, tp)

    def not_leader_error(self) -> str:
        return E.NOT_LEADER_OR_FOLLOWER if self.rules.error_not_leader_or_follower \
            else E.NOT_LEADER_FOR_PARTITION

    def next_correlation_id(self) -> int:
        self.correlation += 1
        return self.correlation

    def send(self, dst, msg) -> None:
        self.cluster.send(self.id, dst, msg)

    def schedule_timer(self, delay_ms: int, fn: Callable[..., None], *args) -> None:
        """Call ``fn(self, *args)`` after ``delay_ms`` if this process still runs. ``fn`` is a
        plain function (``Broker._timer_...``), so the engine's queue stays picklable."""
        self.cluster.engine.schedule(delay_ms, "broker_timer", self.id, self.incarnation, fn,
                                     args)

    def schedule_controller_timer(self, delay_ms: int, controller_epoch: int, name: str
                                  ) -> None:
        """The controller's periodic task ``name`` (auto_rebalance), while it keeps its epoch."""
        self.schedule_timer(delay_ms, Broker._timer_controller_timer, controller_epoch, name)

    def schedule_timeout(self, delay_ms: int, name: str, *args) -> int:
        """The purgatory timeout (DelayedOperationPurgatory.tryCompleteElseWatch's timer) of the
        operation ReplicaManager has just parked: ``name`` "produce_timeout" (a DelayedProduce
        in delayed_produce) or "fetch_timeout" (a DelayedFetch in delayed_fetch), ``args`` its
        id; returns the timeout id. The parked operation is the timeout (its deadline_ms and
        timeout_id; this process's Cluster.timeouts entry watches both purgatories, Broker
        .start): completing it (taking it out of its purgatory) cancels the timeout, and
        Cluster._fire_timeouts calls Broker._timer_produce_timeout / _timer_fetch_timeout when
        it is due. It takes its id and the owner's wake-up as Cluster.add_timeout would."""
        cluster = self.cluster
        tid = cluster.next_timeout_id
        cluster.next_timeout_id = tid + 1
        entry = cluster.process_timeouts[self.id]   # this process's (made by start())
        deadline = cluster.engine.now + delay_ms
        if deadline < entry[1]:   # before the owner's next wake-up (or none is pending)
            entry[1] = deadline
            cluster.engine.schedule_at(deadline, "timeouts", ("broker", self.id, self.incarnation))
        return tid

    def trace(self, kind: str, topic: str = "", partition: int = -1, detail=None) -> None:
        cluster = self.cluster   # Cluster.record, inlined (every HW move on a leader)
        cluster.trace.rows.append((cluster.engine.now, kind, self.id, topic, partition, detail))

    def local_log(self, topic: str, partition: int) -> Log:
        return self.logs[(topic, partition)]

    # -- lifecycle --------------------------------------------------------------------------
    def start(self) -> None:
        """Start the process: recover logs from the checkpoint files, register in ZooKeeper
        (ephemeral /brokers/ids/<id>), maybe become controller, start the periodic tasks."""
        if self.state == RUNNING:
            raise RuntimeError(f"broker {self.id} is already running")
        if self.lifecycle is not None:
            self.lifecycle.previous_epoch = self.previous_broker_epoch()
        self._recover_logs()
        self.state = RUNNING
        self.started_ms = self.now
        self.incarnation += 1
        self.cluster.network.incarnations[self.id] = self.incarnation
        rm = self.replica_manager   # this process's purgatories (a new one after a stop)
        self.cluster.process_timeouts[self.id] = self.cluster.timeouts_of(
            ("broker", self.id, self.incarnation), self.fetch_inflight,
            Broker._timer_fetcher_request_timeout,
            ((rm.delayed_produce, Broker._timer_produce_timeout),
             (rm.delayed_fetch, Broker._timer_fetch_timeout)))
        self.paused_until = 0
        registered = False
        if self.lifecycle is not None:
            self.trace("broker_start", detail=ev.KRaftBrokerStart())
            self.lifecycle.start()
        else:
            try:
                registered = self._register()
            except NodeExists:
                self._startup_failed()
                raise
        lag = self.config["replica.lag.time.max.ms"]
        period = lag // 2 if self.rules.isr_shrink_interval_half_lag else lag
        self._schedule_periodic(period, 0, Broker._timer_isr_expiration, period, first_ms=0)
        if not self.rules.alter_isr:
            self.schedule_timer(2500, Broker._timer_isr_change_propagation)
        cfg = self.config
        self._schedule_periodic(cfg["replica.high.watermark.checkpoint.interval.ms"], 0,
                                Broker._timer_highwatermark_checkpoint)
        self._schedule_periodic(cfg["log.flush.offset.checkpoint.interval.ms"],
                                LOG_MANAGER_INITIAL_TASK_DELAY_MS,
                                Broker._timer_recovery_point_checkpoint)
        if "log.flush.start.offset.checkpoint.interval.ms" in cfg:
            self._schedule_periodic(cfg["log.flush.start.offset.checkpoint.interval.ms"],
                                    LOG_MANAGER_INITIAL_TASK_DELAY_MS,
                                    Broker._timer_log_start_offset_checkpoint)
        self.schedule_timer(PAGE_CACHE_WRITEBACK_INTERVAL_MS, Broker._timer_page_cache_writeback)
        flush_ms = cfg.get("log.flush.scheduler.interval.ms", LONG_MAX)
        if flush_ms < LONG_MAX:
            self._schedule_periodic(flush_ms, LOG_MANAGER_INITIAL_TASK_DELAY_MS,
                                    Broker._timer_log_flusher, flush_ms)
        if self.lifecycle is None:
            self.schedule_timer(self._zk_ping_interval(), Broker._timer_zk_ping)
        if registered:
            self.cluster.on_broker_registered(self)

    def _startup_failed(self) -> None:
        """KafkaServer.startup failed ("Fatal error during KafkaServer startup. Prepare to
        shutdown"): KafkaServer.shutdown closes the new ZooKeeper session and LogManager.shutdown
        flushes every log and checkpoints recovery points and log start offsets; the
        ReplicaManager hosts no partition yet, so replication-offset-checkpoint is not rewritten.
        Then the process exits (Kafka.main: Exit.exit(1))."""
        for log in self.logs.values():
            log.flush()
        self._write_recovery_checkpoint()
        self._write_log_start_checkpoint()
        self._stop_process("startup failure")
        self.cluster.close_session(self.session_id)
        self.trace("broker_start_failed", detail=ev.BrokerStartFailed())

    def previous_broker_epoch(self) -> int:
        """The broker epoch in ``.kafka_cleanshutdown`` (KRaft), -1 without one."""
        f = self.clean_shutdown_file
        return f if type(f) is int else -1

    def incarnation_id(self) -> str:
        """BrokerRegistrationRequest.IncarnationId: a new id for every process start (a
        random UUID in Kafka; derived from the broker id and start count here)."""
        return f"{self.id:08x}-0000-4000-8000-{self.incarnation:012x}"

    def _zk_ping_interval(self) -> int:
        return max(1, self.config["zookeeper.session.timeout.ms"] // 3)

    def _register(self) -> bool:
        """Open a ZooKeeper session and register /brokers/ids/<id> (KafkaZkClient.registerBroker);
        True once registered. See ``_create_broker_znode`` for a znode left by an older
        session."""
        zk = self.cluster.zk
        self.session_id = zk.new_session(self.id, self.config["zookeeper.session.timeout.ms"],
                                         self.now)
        self.cluster.watch_session(self.session_id)
        return self._create_broker_znode()

    def _create_broker_znode(self) -> bool:
        """KafkaZkClient.checkedEphemeralCreate (CheckedEphemeral.getAfterNodeExists): when the
        znode exists and another session owns it -- the session of this broker's previous,
        crashed process, alive until zookeeper.session.timeout.ms passes without a ping -- the
        registration fails with NodeExists (since 0.9.0; the caller stops the process). In 0.8.2
        the broker backed off a session timeout and retried. True once registered."""
        zk = self.cluster.zk
        path = f"/brokers/ids/{self.id}"
        node = zk.get(path)
        if node is not None and node.ephemeral_owner != self.session_id:
            owner = node.ephemeral_owner
            if not self.rules.broker_registration_fails_on_foreign_znode:
                self.trace("broker_registration_backoff",
                           detail=ev.BrokerRegistrationBackoff(path, owner))
                self.schedule_timer(self.config["zookeeper.session.timeout.ms"],
                                    Broker._timer_register_retry, self.session_id)
                return False
            failure = ev.BrokerRegistrationFailed(path, owner, self.session_id)
            self.trace("broker_registration_failed", detail=failure)
            raise NodeExists(failure.text)
        if node is not None:
            return True   # already registered by this session
        node = zk.create(path, json.dumps({"version": 5, "host": f"broker{self.id}",
                                           "port": 9092, "rack": self.rack},
                                          separators=(",", ":")),
                         ephemeral_owner=self.session_id)
        self.broker_epoch = node.czxid
        self.trace("broker_start", detail=ev.BrokerStart(self.broker_epoch))
        return True

    def _timer_register_retry(self, session_id: int) -> None:
        """0.8.2: retry the registration after backing off (see ``_create_broker_znode``)."""
        if session_id == self.session_id and self._create_broker_znode():
            self.cluster.on_broker_registered(self)

    def become_controller(self, controller_epoch: int) -> None:
        self.controller = KafkaController(self.id, controller_epoch)
        self.trace("controller_elected", detail=ev.ControllerElected(controller_epoch))
        self.controller.on_controller_failover(self, self.cluster.zk)

    def resign_controller(self, reason: str) -> None:
        if self.controller is not None:
            self.controller.on_resignation()
            self.controller = None
            self.trace("controller_resigned", detail=ev.ControllerResigned(reason))

    def _stop_process(self, kind: str) -> None:
        """The process is gone: every in-memory structure is lost; the log dir stays."""
        self.state = STOPPED
        self.resign_controller(kind)
        if self.lifecycle is not None:
            self.lifecycle.stop()
        self.replica_manager = ReplicaManager()
        self.fetchers = {}
        self.fetch_inflight = {}
        self.metadata = MetadataCache()
        self.paused_until = 0
        self.isr_change_set = []
        self.alter_unsent = {}
        self.alter_inflight = None
        self.cluster.network.incarnations[self.id] = self.incarnation + 1000000  # conns closed
        self.cluster.reset_connections(self.id)

    def crash(self) -> None:
        """kill -9: the process dies, the OS page cache survives, so no log data is lost. The
        ZooKeeper session lives on until it times out."""
        if self.state != RUNNING:
            raise RuntimeError(f"broker {self.id} is not running")
        self._stop_process("crash")
        self.trace("broker_crash", detail=ev.BrokerCrash())

    def power_loss(self) -> None:
        """The machine loses power: each log keeps only what reached the disk, whether Kafka
        fsynced it or the OS wrote the page cache back (``Log.durable_offset``)."""
        lost = 0
        for tp, log in self.logs.items():
            keep = log.durable_offset
            n = log.lose_unsynced(keep)
            log.producer_states = producer_state.rebuild(log)
            lost += n
            if n:
                self.trace("truncate", tp[0], tp[1], ev.PowerLossTruncate(n, keep))
        if self.state == RUNNING:
            self._stop_process("power loss")
        self.trace("broker_power_loss", detail=ev.PowerLoss(lost))

    def shutdown_cleanly(self) -> None:
        """The end of a clean shutdown: flush every log, write the checkpoints and the
        ``.kafka_cleanshutdown`` marker (LogManager.shutdown), then stop. ZooKeeper mode closes
        the session (its ephemeral znodes go at once); a KRaft broker, which the controller
        answered shouldShutDown (or which never ran), writes its broker epoch into the marker
        (CleanShutdownFileHandler, 3.7+), so its next registration can prove it (KIP-966)."""
        for tp, log in self.logs.items():
            if log.flush():
                self.last_flush_ms[tp] = self.now
        self._write_hw_checkpoint()
        self._write_recovery_checkpoint()
        self._write_log_start_checkpoint()
        kraft = self.lifecycle is not None
        self.clean_shutdown_file = self.broker_epoch if kraft and self.broker_epoch >= 0 \
            else True
        self._stop_process("clean shutdown")
        if not kraft:
            self.cluster.close_session(self.session_id)
        self.trace("broker_shutdown", detail=ev.BrokerShutdown())

    def begin_controlled_shutdown(self) -> None:
        """KafkaServer.controlledShutdown: ask the controller to move leadership away first.

        An attempt fails when the controller answers an error or still lists partitions this
        broker leads, or when no answer comes within controller.socket.timeout.ms; the broker then
        sleeps controlled.shutdown.retry.backoff.ms and tries again, at most
        controlled.shutdown.max.retries attempts in all, and finally shuts down anyway."""
        if self.lifecycle is not None:
            # KRaft: the heartbeat carries wantShutDown (BrokerLifecycleManager); with
            # controlled.shutdown.enable=false the broker skips it
            self.state = SHUTTING_DOWN
            if self.config["controlled.shutdown.enable"]:
                self.lifecycle.begin_controlled_shutdown()
            else:
                self.shutdown_cleanly()
            return
        if not self.config["controlled.shutdown.enable"]:
            self.shutdown_cleanly()
            return
        self.state = SHUTTING_DOWN
        self.shutdown_attempts_left = self.config["controlled.shutdown.max.retries"]
        self._controlled_shutdown_attempt()

    def _controlled_shutdown_attempt(self) -> None:
        self.shutdown_attempts_left -= 1
        controller = self.metadata.controller_id
        self.trace("controlled_shutdown", detail=ev.ControlledShutdown(controller, "", -1))
        if controller < 0:
            self._controlled_shutdown_failed("no controller in the metadata cache")
            return
        self.shutdown_awaiting = self.shutdown_attempts_left
        self.send(controller, ControlledShutdownRequest(self.id, self.broker_epoch))
        self.schedule_timer(self.config["controller.socket.timeout.ms"],
                            Broker._timer_controlled_shutdown_timeout, self.shutdown_attempts_left)

    def _controlled_shutdown_failed(self, why: str) -> None:
        if self.shutdown_attempts_left > 0:
            backoff = self.config["controlled.shutdown.retry.backoff.ms"]
            self.trace("controlled_shutdown", detail=ev.ControlledShutdownRetry(
                why, backoff, self.shutdown_attempts_left))
            self.schedule_timer(backoff, Broker._timer_controlled_shutdown_retry,
                                self.shutdown_attempts_left)
            return
        self.trace("controlled_shutdown", detail=ev.ControlledShutdownGaveUp(why))
        self.shutdown_cleanly()

    def _recover_logs(self) -> None:
        """LogManager.loadLogs after a restart: the HW from replication-offset-checkpoint, the
        epoch cache from each leader-epoch-checkpoint (truncated to the LEO), the recovery point
        and log start offset from their files. Opening a checkpoint file creates it empty if
        it is missing (CheckpointFile's constructor).

        A malformed replication-offset-checkpoint or leader-epoch-checkpoint stops the broker
        (KafkaStorageException takes the log dir offline). A malformed
        recovery-point-offset-checkpoint or log-start-offset-checkpoint does not: LogManager
        .loadLogs catches any exception, warns and goes on as if the file were empty (recovery
        point 0, log start at the first segment), in every version since 0.10.2 at least.

        Recovery point (LogLoader.recoverLog; Log.recoverLog before 3.0): after a clean shutdown
        (``.kafka_cleanshutdown`` found, and deleted) it is the LEO; otherwise
        min(checkpointed recovery point (0 if absent), LEO): Kafka re-reads and keeps the data
        between it and the LEO, and only a later flush moves it."""
        d = self.log_dir
        d.create_if_missing(REPLICATION_OFFSET_CHECKPOINT)
        d.create_if_missing(RECOVERY_POINT_CHECKPOINT)
        if "log.flush.start.offset.checkpoint.interval.ms" in self.config:
            d.create_if_missing(LOG_START_OFFSET_CHECKPOINT)  # 0.11+ (KIP-107)
        had_clean_shutdown = self.clean_shutdown_file
        self.clean_shutdown_file = False
        if not self.logs:
            return
        hws = {(t, p): o for t, p, o in self._read_offsets(REPLICATION_OFFSET_CHECKPOINT)}
        rps = self._read_offsets_or_warn(RECOVERY_POINT_CHECKPOINT,
                                         "resetting the recovery checkpoint to 0")
        lss = self._read_offsets_or_warn(LOG_START_OFFSET_CHECKPOINT,
                                         "resetting to the base offset of the first segment")
        for tp, log in self.logs.items():
            rel = f"{tp[0]}-{tp[1]}/{LEADER_EPOCH_CHECKPOINT}"
            text = None
            if self.rules.leader_epoch_truncation:
                d.create_if_missing(rel)
                text = d.read(rel)
            entries = parse_epochs(text, d.path(rel)) if text else []
            try:
                log.leader_epoch_cache = LeaderEpochFileCache.from_checkpoint(
                    entries, **self._epoch_cache_rules())
            except ValueError as e:  # 2.7+: IllegalArgumentException fails the log's load
                raise CorruptCheckpointError(d.path(rel), None, str(e)) from None
            # LogLoader.load: the cache is truncated to the log end with its file attached, so
            # entries past a log that lost its unflushed tail are removed from the file as well
            self._attach(log)
            log.leader_epoch_cache.truncate_from_end(log.log_end_offset)
            if tp in lss and lss[tp] > log.log_start_offset:
                log.high_watermark = max(log.high_watermark, min(lss[tp], log.log_end_offset))
                log.maybe_increment_log_start_offset(lss[tp])
            leo = log.log_end_offset
            rp = leo if had_clean_shutdown else min(rps.get(tp, 0), leo)
            log.recovery_point = max(rp, log.log_start_offset)
            log.durable_offset = max(log.durable_offset, log.recovery_point)
            self.last_flush_ms[tp] = self.now  # a loaded LocalLog starts its flush clock now
            log.high_watermark = 0
            log.update_high_watermark(hws.get(tp, 0))
            log.producer_states = producer_state.rebuild(log)
            self.trace("log_recovery", tp[0], tp[1],
                       ev.LogRecovery(log.log_end_offset, log.high_watermark,
                                      REPLICATION_OFFSET_CHECKPOINT,
                                      tuple(map(tuple, log.leader_epoch_cache.entries))))
            self.trace("hw", tp[0], tp[1], log.high_watermark)

    def _epoch_cache_rules(self) -> dict[str, bool]:
        """The LeaderEpochFileCache.assign rules of this broker's Kafka version."""
        rules = self.rules
        return {"truncates_conflicts": rules.leader_epoch_assign_truncates_conflicts,
                "validates_entries": rules.leader_epoch_cache_validates_entries}

    def _read_offsets(self, name: str) -> list[tuple[str, int, int]]:
        text = self.log_dir.read(name)
        return parse_offsets(text, self.log_dir.path(name)) if text else []

    def _read_offsets_or_warn(self, name: str, resetting: str) -> dict[tuple[str, int], int]:
        """LogManager.loadLogs reads these two files inside ``try ... catch Exception => warn``."""
        try:
            return {(t, p): o for t, p, o in self._read_offsets(name)}
        except CorruptCheckpointError as e:
            self.trace("checkpoint_warning", detail=ev.CheckpointWarning(name, resetting, str(e)))
            return {}

    # -- checkpoint files ------------------------------------------------------------------
    def _write_hw_checkpoint(self) -> None:
        entries = [(t, p, log.high_watermark) for (t, p), log in sorted(self.logs.items())]
        self.log_dir.write_atomic(REPLICATION_OFFSET_CHECKPOINT, format_offsets(entries))

    def _write_recovery_checkpoint(self) -> None:
        entries = [(t, p, log.recovery_point) for (t, p), log in sorted(self.logs.items())]
        self.log_dir.write_atomic(RECOVERY_POINT_CHECKPOINT, format_offsets(entries))

    def _write_log_start_checkpoint(self) -> None:
        # only logs whose start moved past their first segment's base offset are listed
        entries = [(t, p, log.log_start_offset) for (t, p), log in sorted(self.logs.items())
                   if log.log_start_offset > 0]
        self.log_dir.write_atomic(LOG_START_OFFSET_CHECKPOINT, format_offsets(entries))

    def _attach(self, log: Log) -> None:
        """Make this broker the log's listener and give its epoch cache the log's
        leader-epoch-checkpoint (none before KIP-101, 0.11)."""
        log.listener = self
        log.leader_epoch_cache.checkpoint = LeaderEpochCheckpointFile(
            self.log_dir, log.topic, log.partition) if self.rules.leader_epoch_truncation \
            else None

    # -- timers -----------------------------------------------------------------------------
    def _schedule_periodic(self, period_ms: int, once_delay_ms: int, fn: Callable[..., None],
                           *args, first_ms: int | None = None) -> None:
        """A periodic task as KafkaScheduler.schedule(name, task, delayMs, periodMs) runs it
        (server-common, 3.x and trunk): ``periodMs > 0`` repeats at that period (the first run
        after ``first_ms``, by default one period); ``periodMs <= 0`` runs it once only, after
        ``once_delay_ms`` (the caller's initial delay: 0 for ReplicaManager's tasks,
        LogManager.InitialTaskDelayMs for the log manager's). ``fn`` reschedules itself through
        ``_reschedule``."""
        if period_ms > 0:
            self.schedule_timer(period_ms if first_ms is None else first_ms, fn, *args)
        else:
            self.schedule_timer(once_delay_ms, fn, *args)

    def _reschedule(self, period_ms: int, fn: Callable[..., None], *args) -> None:
        if period_ms > 0:   # KafkaScheduler: a period <= 0 ran the task once
            self.schedule_timer(period_ms, fn, *args)

    def _timer_highwatermark_checkpoint(self) -> None:
        self._write_hw_checkpoint()
        self._reschedule(self.config["replica.high.watermark.checkpoint.interval.ms"],
                         Broker._timer_highwatermark_checkpoint)

    def _timer_recovery_point_checkpoint(self) -> None:
        self._write_recovery_checkpoint()
        self._reschedule(self.config["log.flush.offset.checkpoint.interval.ms"],
                         Broker._timer_recovery_point_checkpoint)

    def _timer_log_start_offset_checkpoint(self) -> None:
        self._write_log_start_checkpoint()
        self._reschedule(self.config["log.flush.start.offset.checkpoint.interval.ms"],
                         Broker._timer_log_start_offset_checkpoint)

    def _timer_page_cache_writeback(self) -> None:
        """The OS writes dirty pages back once they are older than ~30 s (Linux's
        dirty_expire_centisecs), checked every 5 s: data that old survives a power loss."""
        ticks = PAGE_CACHE_DIRTY_EXPIRE_MS // PAGE_CACHE_WRITEBACK_INTERVAL_MS
        for tp, log in self.logs.items():
            hist = self.writeback_history.setdefault(tp, [])
            hist.append(log.log_end_offset)
            if len(hist) > ticks:
                log.write_back(hist.pop(0))  # durable, but Kafka's recovery point stays
        self.schedule_timer(PAGE_CACHE_WRITEBACK_INTERVAL_MS, Broker._timer_page_cache_writeback)

    def _timer_log_flusher(self, period: int) -> None:
        """LogManager.flushDirtyLogs: flush each log whose time since its last flush (any flush
        that moved its recovery point, LocalLog.markFlushed) reached its topic's flush.ms."""
        now = self.now
        for tp, log in self.logs.items():
            flush_ms = self.topic_config(tp[0])["flush.ms"]
            if now - self.last_flush_ms.setdefault(tp, now) >= flush_ms and log.flush():
                self.last_flush_ms[tp] = now
        self._reschedule(period, Broker._timer_log_flusher, period)

    def _timer_zk_ping(self) -> None:
        self.send("zookeeper", ZkPing(self.session_id))
        self.schedule_timer(self._zk_ping_interval(), Broker._timer_zk_ping)

    def _timer_controlled_shutdown_timeout(self, attempts_left: int) -> None:
        if self.state == SHUTTING_DOWN and attempts_left == self.shutdown_awaiting:
            self.shutdown_awaiting = -1
            self._controlled_shutdown_failed("no answer within controller.socket.timeout.ms")

    def _timer_controlled_shutdown_retry(self, attempts_left: int) -> None:
        if self.state == SHUTTING_DOWN and attempts_left == self.shutdown_attempts_left:
            self._controlled_shutdown_attempt()

    def _timer_controller_timer(self, controller_epoch: int, name: str) -> None:
        c = self.controller
        if c is None or c.controller_epoch != controller_epoch:
            return
        self.cluster.run_controller(self, name, ())
        if name == "auto_rebalance" and self.controller is c:
            self.schedule_timer(self.config["leader.imbalance.check.interval.seconds"] * 1000,
                                Broker._timer_controller_timer, controller_epoch, "auto_rebalance")

    def _timer_isr_expiration(self, period: int) -> None:
        self.replica_manager.maybe_shrink_isr(self)
        self._reschedule(period, Broker._timer_isr_expiration, period)

    def _timer_produce_timeout(self, dp_id: int) -> None:
        self.replica_manager.on_produce_timeout(self, dp_id)

    def _timer_fetch_timeout(self, df_id: int) -> None:
        self.replica_manager.on_fetch_timeout(self, df_id)

    def _timer_fetcher_wakeup(self, key, when: int) -> None:
        thread = self.fetchers.get(key)
        if thread is not None:
            thread.on_wakeup(self, when)

    def _timer_fetcher_request_timeout(self, corr: int) -> None:
        inflight = self.fetch_inflight.pop(corr, None)
        if inflight is None:
            return
        thread = self.fetchers.get(inflight[2])
        if thread is not None:
            thread.on_request_failed(self, corr, E.REQUEST_TIMED_OUT)

    def _timer_fetcher_process(self, key, resp) -> None:
        thread = self.fetchers.get(key)
        if thread is not None:
            if isinstance(resp, FetchResponse):
                thread.on_fetch_response(self, resp)
            else:
                thread.on_offsets_for_leader_epoch(self, resp)

    def _timer_alter_partition_retry(self, corr: int, controller: int) -> None:
        """The controller channel got no answer within controller.socket.timeout.ms:
        NetworkClient fails the request as a disconnect and closes the connection, and the
        channel puts the same request first in its queue (NodeToControllerRequestThread
        .handleResponse, ``wasDisconnected``): sent again to the controller known now, to
        ``controller`` (the node that did not answer) only after the reconnect backoff."""
        if self.alter_inflight is None or self.alter_corr != corr:
            return
        self._requeue_alter_partition(controller)

    def _timer_alter_partition_propagate(self) -> None:
        """The "send-alter-partition" task: 2.7's every-50-ms sender, or the retry 50 ms after a
        top-level error (DefaultAlterPartitionManager.sendRequest)."""
        self._maybe_propagate_isr_changes()

    def _timer_isr_change_propagation(self) -> None:
        """Pre-2.7 ReplicaManager.maybePropagateIsrChanges (every 2500 ms)."""
        now = self.now
        if self.isr_change_set and (now - self.last_isr_change_ms > 5000
                                    or now - self.last_isr_propagation_ms > 60000):
            tps = list(self.isr_change_set)
            self.isr_change_set = []
            self.last_isr_propagation_ms = now
            self.trace("isr_change_notification", detail=ev.IsrChangeNotification(tuple(tps)))
            self.cluster.notify_isr_change(tps)
        self.schedule_timer(2500, Broker._timer_isr_change_propagation)

    # -- fetchers ---------------------------------------------------------------------------
    def send_from_fetcher(self, thread: ReplicaFetcherThread, req, timeout_ms: int) -> None:
        """Send the fetcher's request with its request timeout (replica.socket.timeout.ms).
        A fetcher has one request in flight and waits for it (ReplicaFetcherBlockingSend
        .sendRequest: NetworkClientUtils.sendAndReceive), so the timeout is no FIFO entry: the
        request's fetch_inflight entry is it, and answering the request (popping the entry)
        cancels it. It takes its id and the owner's wake-up as Cluster.add_timeout would."""
        cluster = self.cluster
        leader = thread.leader_id
        corr = req.correlation_id
        entry = cluster.process_timeouts[self.id]   # this process's (made by start())
        tid = cluster.next_timeout_id
        cluster.next_timeout_id = tid + 1
        deadline = cluster.engine.now + timeout_ms
        self.fetch_inflight[corr] = [deadline, tid, (leader, thread.fetcher_id)]
        if deadline < entry[1]:   # before the owner's next wake-up (or none is pending)
            entry[1] = deadline
            cluster.engine.schedule_at(deadline, "timeouts", ("broker", self.id, self.incarnation))
        cluster.send(self.id, leader, req)

    def schedule_fetcher_wakeup(self, thread: ReplicaFetcherThread, when: int) -> None:
        self.schedule_timer(max(0, when - self.now), Broker._timer_fetcher_wakeup,
                            (thread.leader_id, thread.fetcher_id), when)

    def trace_fetcher(self, thread: ReplicaFetcherThread, kind: str, reason: str) -> None:
        self.trace(kind, detail=ev.FetchFailed(thread.name, reason))

    def _add_fetcher_partition(self, tp, leader_id: int, state: PartitionFetchState) -> None:
        fid = fetcher_id_for(tp[0], tp[1], self.config["num.replica.fetchers"])
        key = (leader_id, fid)
        thread = self.fetchers.get(key)
        if thread is None:
            thread = ReplicaFetcherThread(self.id, leader_id, fid)
            self.fetchers[key] = thread
        thread.add_partition(tp, state)
        thread.do_work(self)

    def _remove_fetcher_partition(self, tp) -> None:
        for key in list(self.fetchers):
            thread = self.fetchers[key]
            if tp in thread.partitions and thread.remove_partition(tp) is not None and \
                    not thread.partitions:
                del self.fetchers[key]

    # -- log changes (LogListener of every log of this broker) ------------------------------
    def on_append(self, log: Log, first: int, last: int, as_leader: bool) -> None:
        """Trace the append, update a follower's producer state from the fetched batch headers
        (the leader's is updated by ReplicaManager.append_records before it answers), flush by
        flush.messages (UnifiedLog.append: once LocalLog.unflushedMessages, LEO - recovery
        point, reaches the topic's flush.messages). Cluster.record is inlined (every append)."""
        if self.replica_manager.quiet:
            self.partition_changed((log.topic, log.partition))
        cluster = self.cluster
        now = cluster.engine.now
        topic = log.topic
        if as_leader:
            cluster.trace.rows.append((now, "append", self.id, topic, log.partition,
                                       (first, last, log.epochs[-1])))
        else:
            # ProducerStateManager.update with the idempotent batch headers the chunk brought
            # (the headers are in offset order and do not overlap)
            pb = log.producer_batches
            i = len(pb)
            while i > 0 and pb[i - 1][1] >= first:
                i -= 1
            if i < len(pb):
                producer_state.update(log.producer_states, pb[i:])
            cluster.trace.rows.append((now, "replicate", self.id, topic, log.partition,
                                       (first, last)))
        if log.log_end_offset - log.recovery_point >= \
                cluster.topic_configs[topic]["flush.messages"] and log.flush():
            self.last_flush_ms[(topic, log.partition)] = now

    def on_truncate(self, log: Log, offset: int, removed: int, reason: str,
                    old_high_watermark: int) -> None:
        self.partition_changed((log.topic, log.partition))
        if removed:
            log.producer_states = producer_state.rebuild(log)
            self.trace("truncate", log.topic, log.partition, ev.Truncate(offset, removed, reason))
            if log.high_watermark != old_high_watermark:
                self.trace("hw", log.topic, log.partition, log.high_watermark)

    def on_wipe(self, log: Log, start_offset: int) -> None:
        self.partition_changed((log.topic, log.partition))
        log.producer_states = {}
        self.trace("truncate", log.topic, log.partition, ev.LogWiped(start_offset))

    def set_follower_hw(self, tp, leader_hw: int) -> None:
        log = self.logs[tp]
        old = log.high_watermark
        # ReplicaFetcherThread.processPartitionData: the follower HW rule (UnifiedLog.
        # updateHighWatermark: the leader's HW clamped into [log start, own LEO])
        hw = self.rulebook.update_high_watermark(leader_hw, log.log_start_offset,
                                                 log.log_end_offset)
        log.high_watermark = hw
        if hw != old:
            cluster = self.cluster   # Cluster.record, inlined (most fetch responses)
            cluster.trace.rows.append((cluster.engine.now, "hw", self.id, log.topic,
                                       log.partition, hw))
            # consumers fetching from this follower (KIP-392) may now read more (the usual
            # follower has none: that test first)
            if tp in self.replica_manager.consumer_fetch_waiters and hw > old:
                self.replica_manager.wake_consumer_fetches(self, tp)

    # -- ISR changes ------------------------------------------------------------------------
    def propose_isr(self, part: Partition, kind: str, replicas: tuple, new_isr: tuple) -> None:
        if self.rules.alter_isr:
            # Partition.prepareIsrExpand / prepareIsrShrink, then submitAlterPartition
            pending = part.prepare_isr_change(kind, replicas, new_isr, self.now)
            part.pending = pending
            self.trace("isr_proposed", part.topic, part.partition,
                       ev.IsrProposed(kind, tuple(replicas), tuple(part.isr), tuple(new_isr)))
            self._submit_alter_partition(part, pending)
            return
        # before 2.7 the leader wrote the partition state znode itself (Partition.updateIsr)
        zk = self.cluster.zk
        try:
            version = zk.set(partition_state_path(part.topic, part.partition),
                             partition_state_json(self.id, part.leader_epoch, new_isr,
                                                  part.controller_epoch),
                             part.partition_epoch)
        except BadVersion:
            self.meters["FailedIsrUpdatesPerSec"] += 1
            self.trace("isr_update_failed", part.topic, part.partition,
                       ev.IsrUpdateFailed("cached zkVersion differs from ZooKeeper's"))
            return
        self._isr_committed(part, kind, new_isr, version)
        self.isr_change_set.append(part.tp)
        self.last_isr_change_ms = self.now

    # -- AlterPartition (KIP-497): DefaultAlterPartitionManager + Partition's callbacks ---------
    def _submit_alter_partition(self, part: Partition, pending: PendingIsrChange) -> None:
        """AlterPartitionManager.submit: queue the item unless the partition already has one
        queued or in flight (unsentIsrUpdates.putIfAbsent). A refused item completes at once with
        OPERATION_NOT_ATTEMPTED (3.0+; 2.7-2.8 reverted the state in sendAlterIsrRequest)."""
        if part.tp in self.alter_unsent:
            self._alter_partition_failed(part, pending, E.OPERATION_NOT_ATTEMPTED)
            return
        self.alter_unsent[part.tp] = pending
        if self.rules.alter_isr_sent_on_submit:
            self._maybe_propagate_isr_changes()
        else:
            # 2.7: the "send-alter-isr" task runs every 50 ms from the broker's start
            self.schedule_timer(self._next_alter_isr_tick(),
                                Broker._timer_alter_partition_propagate)

    def _next_alter_isr_tick(self) -> int:
        """Delay to the next run of 2.7's "send-alter-isr" task (every 50 ms from startup)."""
        return 50 - (self.now - self.started_ms) % 50

    def _maybe_propagate_isr_changes(self) -> None:
        """Send every queued item in one AlterPartition if none is in flight."""
        if not self.alter_unsent or self.alter_inflight is not None:
            return
        self.alter_inflight = tuple(self.alter_unsent.items())
        self._send_alter_partition()

    def _send_alter_partition(self) -> None:
        """The controller channel sends the in-flight request (again after a timeout or a
        NOT_CONTROLLER answer; it never gives up: AlterPartition has no retry timeout)."""
        self.alter_corr = corr = self.alter_corr + 1   # the controller channel's own numbering
        controller = self.metadata.controller_id
        if controller < 0:
            # doWork with no controller known: it polls again every 100 ms
            self.schedule_timer(CONTROLLER_CHANNEL_POLL_MS,
                                Broker._timer_alter_partition_requeued, corr)
            return
        self.send(controller, AlterPartitionRequest(
            self.id, self.broker_epoch,
            tuple((tp[0], tp[1], p.leader_epoch, p.proposed_isr, p.partition_epoch)
                  for tp, p in self.alter_inflight), corr,
            # KRaft: the leader always reports RECOVERED (Partition.makeLeader, KIP-704)
            (0,) * len(self.alter_inflight) if self.lifecycle is not None else ()))
        self.schedule_timer(self.config["controller.socket.timeout.ms"],
                            Broker._timer_alter_partition_retry, corr, controller)

    def _requeue_alter_partition(self, failed: int) -> None:
        """The channel's answer to NOT_CONTROLLER or a request timeout
        (NodeToControllerRequestThread.handleResponse, 3.0 ... trunk): it disconnects from
        ``failed``, forgets it and puts the request first in its queue; the next ``doWork``
        takes the controller the broker knows now (the metadata cache's in ZooKeeper mode, the
        Raft client's leader in KRaft) and sends it there at once (``_send_alter_partition``,
        which polls every 100 ms while none is known). If that is still ``failed``, the
        NetworkClient reconnects only after its reconnect backoff (50 ms, fixed for this
        channel). Before, kafkasim waited for controller.socket.timeout.ms (30 s)."""
        if self.metadata.controller_id != failed:
            self._send_alter_partition()
            return
        self.alter_corr += 1   # the request is no longer in flight: a late answer is void
        self.schedule_timer(CONTROLLER_CHANNEL_RECONNECT_BACKOFF_MS,
                            Broker._timer_alter_partition_requeued, self.alter_corr)

    def _timer_alter_partition_requeued(self, corr: int) -> None:
        """The channel's next try for a request waiting in its queue (after the reconnect
        backoff, or a 100 ms poll with no controller known)."""
        if self.alter_inflight is None or self.alter_corr != corr:
            return
        self._send_alter_partition()

    def resend_alter_partition(self) -> None:
        """KRaft: the active controller moved; the channel sends the in-flight request again."""
        if self.alter_inflight is not None:
            self._send_alter_partition()

    def _on_alter_partition_response(self, src, msg: AlterPartitionResponse) -> None:
        """DefaultAlterPartitionManager.handleAlterPartitionResponse, then each partition's
        Partition.submitAlterPartition callback."""
        if self.alter_inflight is None or msg.correlation_id != self.alter_corr:
            return  # an answer to a request the channel already gave up on
        if msg.error == E.NOT_CONTROLLER or any(r[2] == E.NOT_CONTROLLER for r in msg.partitions):
            # NodeToControllerRequestThread.handleResponse: NOT_CONTROLLER anywhere in the answer
            # puts the same request back at the head of the channel's queue (putFirst)
            self.trace("isr_update_failed", detail=ev.IsrUpdateFailed(E.NOT_CONTROLLER))
            self._requeue_alter_partition(src)
            return
        inflight = self.alter_inflight
        if msg.error != E.NONE:
            # STALE_BROKER_EPOCH, ...: the items stay queued; resent 50 ms later
            self.alter_inflight = None   # clearInFlightRequest
            self.trace("isr_update_failed", detail=ev.IsrUpdateFailed(msg.error))
            self.schedule_timer(50, Broker._timer_alter_partition_propagate)
            return
        results = {(t, p): r for t, p, *r in msg.partitions}
        for tp, pending in inflight:
            r = results.get(tp)
            if r is None:
                continue   # not in the answer: stays queued, sent again
            if self.alter_unsent.get(tp) is pending or \
                    self.rules.alter_isr_clear_pending_on_leader_and_isr:
                # 2.7-2.8 removed the partition's entry whatever it held by then
                self.alter_unsent.pop(tp, None)
            part = self.replica_manager.partitions.get(tp)
            if part is None or part.pending is not pending:
                continue   # the state changed meanwhile (LeaderAndIsr): the answer is stale
            err, _leader, leader_epoch, isr, partition_epoch = r
            if err != E.NONE:
                self._alter_partition_failed(part, pending, err)
            else:
                self._alter_partition_update(part, pending, leader_epoch, isr, partition_epoch)
        self.alter_inflight = None   # clearInFlightRequest (after the callbacks, as in Kafka)
        if self.rules.alter_isr_sent_on_submit:
            self._maybe_propagate_isr_changes()
        elif self.alter_unsent:
            self.schedule_timer(self._next_alter_isr_tick(),
                                Broker._timer_alter_partition_propagate)

    def _alter_partition_failed(self, part: Partition, pending: PendingIsrChange,
                                err: str) -> None:
        """Partition.handleAlterPartitionError (3.7): OPERATION_NOT_ATTEMPTED and
        INELIGIBLE_REPLICA fall back to the committed ISR; the errors Kafka knows
        (UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, ...) keep the
        change pending until a LeaderAndIsr replaces it; any other error submits it again."""
        self.meters["FailedIsrUpdatesPerSec"] += 1   # alterPartitionListener.markFailed
        if err in (E.OPERATION_NOT_ATTEMPTED, E.INELIGIBLE_REPLICA):
            part.pending = None
            outcome = f"ISR stays {list(part.isr)}"
        elif err in _ALTER_PARTITION_AWAIT_METADATA:
            outcome = "pending until new metadata"
        else:
            outcome = "retrying"
        self.trace("isr_update_failed", part.topic, part.partition,
                   ev.AlterPartitionFailed(err, outcome))
        if outcome == "retrying":
            self._submit_alter_partition(part, pending)

    def _alter_partition_update(self, part: Partition, pending: PendingIsrChange,
                                leader_epoch: int, isr: tuple, partition_epoch: int) -> None:
        """Partition.handleAlterPartitionUpdate: an answer for another leader epoch or an older
        partition epoch (2.7-2.8: not a newer one) is ignored and the change stays pending."""
        equal_ok = self.rules.alter_partition_accepts_equal_partition_epoch
        if leader_epoch != part.leader_epoch or partition_epoch < part.partition_epoch or \
                (partition_epoch == part.partition_epoch and not equal_ok):
            self.meters["FailedIsrUpdatesPerSec"] += 1
            self.trace("isr_update_failed", part.topic, part.partition,
                       ev.AlterPartitionAnswerIgnored(leader_epoch, partition_epoch,
                                                      part.leader_epoch, part.partition_epoch))
            return
        self._isr_committed(part, pending.kind, isr, partition_epoch)

    def _isr_committed(self, part: Partition, kind: str, isr: tuple, version: int) -> None:
        old = part.isr
        moved = part.apply_isr_update(self, isr, version)
        self.meters["IsrShrinksPerSec" if kind == "shrink" else "IsrExpandsPerSec"] += 1
        self.trace("isr", part.topic, part.partition, (tuple(old), tuple(isr)))
        if moved:
            self.replica_manager.on_hw_increased(self, part)
        else:
            # a shrink can let a waiting acks=all produce finish (or fail after append)
            self.replica_manager.try_complete_produces(self, part.tp)

    def on_peer_gone(self, dead: int) -> None:
        """A broker process died: fetches in flight to it fail now (connection reset)."""
        lm = self.lifecycle
        if lm is not None:
            if lm.inflight is not None and lm.inflight[2] == dead:
                lm.controller_gone()
            lm.raft.on_peer_gone(lm, dead)     # the metadata log's Fetch to a dead voter
        for corr, inflight in list(self.fetch_inflight.items()):
            key = inflight[2]
            if key[0] != dead:
                continue
            del self.fetch_inflight[corr]   # and its request timeout
            thread = self.fetchers.get(key)
            if thread is not None:
                thread.on_request_failed(self, corr, E.NETWORK_EXCEPTION)

    def on_disconnect(self, dst, msg) -> None:
        """A request's destination died: the fetcher sees the connection fail at once (and
        KRaft's controller channel resends a registration or heartbeat to the new leader)."""
        lm = self.lifecycle
        if lm is not None and lm.inflight is not None and \
                getattr(msg, "correlation_id", None) == lm.inflight[0] and \
                isinstance(msg, (BrokerRegistrationRequest, BrokerHeartbeatRequest)):
            lm.controller_gone()
            return
        if lm is not None and type(msg) in _RAFT_REQUESTS:
            lm.raft.on_disconnect(lm, dst, msg.correlation_id)
            return
        entry = self.fetch_inflight.pop(getattr(msg, "correlation_id", -1), None)
        if entry is None or not isinstance(msg, (FetchRequest, OffsetsForLeaderEpochRequest)):
            if entry is not None:
                self.fetch_inflight[msg.correlation_id] = entry
            return
        key = entry[2]   # popped: its request timeout is cancelled
        thread = self.fetchers.get(key)
        if thread is not None:
            thread.on_request_failed(self, msg.correlation_id, E.NETWORK_EXCEPTION)

    # -- incoming messages ------------------------------------------------------------------
    def on_message(self, src, msg) -> None:
        """KafkaApis.handle: the request's handler by its type (``_HANDLERS``). Cluster._deliver
        hands the steady traffic (Fetch, Produce, FetchResponse) to its handler directly."""
        handler = _HANDLERS.get(type(msg))
        if handler is None:
            raise TypeError(f"broker {self.id} cannot handle {type(msg).__name__}")
        handler(self, src, msg)

    def _on_fetch(self, src, msg: FetchRequest) -> None:
        """KafkaApis.handleFetchRequest -> ReplicaManager.fetchMessages."""
        self.replica_manager.fetch_messages(self, src, msg)

    def _on_produce(self, src, msg: ProduceRequest) -> None:
        """KafkaApis.handleProduceRequest -> ReplicaManager.appendRecords."""
        self.replica_manager.append_records(self, src, msg)

    def _on_fetcher_response(self, src, msg) -> None:
        entry = self.fetch_inflight.pop(msg.correlation_id, None)
        if entry is None:
            return
        key = entry[2]   # popped: its request timeout is cancelled
        if self.disk_delay_ms and isinstance(msg, FetchResponse):
            n = sum(len(pd.records) for pd in msg.partitions)
            if n:
                # a slow disk: writing the fetched records takes disk_delay_ms per record
                self.schedule_timer(max(1, round(self.disk_delay_ms * n)),
                                    Broker._timer_fetcher_process, key, msg)
                return
        thread = self.fetchers.get(key)   # _timer_fetcher_process, inlined (every response)
        if thread is not None:
            if isinstance(msg, FetchResponse):
                thread.on_fetch_response(self, msg)
            else:
                thread.on_offsets_for_leader_epoch(self, msg)

    def _on_offsets_for_leader_epoch(self, src, msg: OffsetsForLeaderEpochRequest) -> None:
        self.replica_manager.offsets_for_leader_epoch(self, src, msg)

    def _on_leader_and_isr(self, src, msg: LeaderAndIsrRequest) -> None:
        """ReplicaManager.becomeLeaderOrFollower."""
        if msg.controller_epoch < self.metadata.controller_epoch:
            self.send(src, LeaderAndIsrResponse(msg.controller_epoch, E.STALE_CONTROLLER_EPOCH))
            return
        self.metadata.controller_epoch = msg.controller_epoch
        self.metadata.controller_id = msg.controller_id
        errors = []
        for st in msg.partition_states:
            if self.id not in st.replicas:
                continue
            errors.append((st.topic, st.partition, self.apply_partition_state(st)))
        self.send(src, LeaderAndIsrResponse(msg.controller_epoch, E.NONE, tuple(errors)))

    def apply_partition_state(self, st: PartitionState, kraft: bool = False,
                              recovering: int = 0) -> str:
        """Become leader or follower of one partition: ReplicaManager.becomeLeaderOrFollower's
        per-partition step (ZooKeeper mode) or ReplicaManager.applyDelta's (KRaft: every change
        of a hosted partition, ISR-only ones included, is applied; only a state older than the
        partition's partition epoch is skipped). Returns the partition's error."""
        rm = self.replica_manager
        tp = (st.topic, st.partition)
        part = rm.partitions.get(tp)
        if part is not None and not kraft and st.leader_epoch <= part.leader_epoch:
            return E.STALE_CONTROLLER_EPOCH
        if part is None:
            log = self.logs.get(tp)
            if log is None:
                log = Log(st.topic, st.partition)
                log.leader_epoch_cache = LeaderEpochFileCache(**self._epoch_cache_rules())
                self._attach(log)
                self.logs[tp] = log
                self.last_flush_ms[tp] = self.now  # LocalLog.lastFlushedTime starts now
                checkpoint = log.leader_epoch_cache.checkpoint
                if checkpoint is not None:  # new LeaderEpochCheckpointFile
                    checkpoint.create_if_missing()
            part = Partition(st.topic, st.partition, self.id, log)
            rm.partitions[tp] = part
        elif part.is_stale_partition_epoch(self, st.partition_epoch) or \
                (kraft and st.partition_epoch < part.partition_epoch):
            # makeLeader / makeFollower return false: the state change is skipped
            self.trace("leader_and_isr_ignored", st.topic, st.partition,
                       ev.LeaderAndIsrIgnored(st.partition_epoch, part.partition_epoch))
            return E.NONE
        if self.rules.alter_isr_clear_pending_on_leader_and_isr:
            self.alter_unsent.pop(tp, None)   # alterIsrManager.clearPending (2.7-2.8)
        if st.leader == self.id:
            if kraft and part.is_leader and st.leader_epoch == part.leader_epoch:
                # applyDelta: an ISR / assignment change under the same leader epoch
                moved = part.make_leader(self, st.leader_epoch, st.isr, st.replicas,
                                         st.partition_epoch, st.controller_epoch)
                if moved:
                    rm.on_hw_increased(self, part)
                else:
                    rm.try_complete_produces(self, tp)
                return E.NONE
            self._remove_fetcher_partition(tp)
            moved = part.make_leader(self, st.leader_epoch, st.isr, st.replicas,
                                     st.partition_epoch, st.controller_epoch)
            self.trace("become_leader", st.topic, st.partition,
                       ev.BecomeLeader(st.leader_epoch, tuple(st.isr)))
            if kraft and recovering:
                # Partition.makeLeader: a leader elected uncleanly marks the partition
                # RECOVERED (KIP-704); its next AlterPartition tells the controller
                self.trace("leader_recovered", st.topic, st.partition,
                           ev.LeaderRecovered(st.leader_epoch))
            if moved:
                rm.on_hw_increased(self, part)
        else:
            self._make_follower(part, st)
        return E.NONE

    def _make_follower(self, part: Partition, st: PartitionState) -> None:
        tp = part.tp
        was_leader = part.is_leader
        old_leader, old_epoch = part.leader_id, part.leader_epoch
        part.make_follower(self, st.leader, st.leader_epoch, st.isr, st.replicas,
                           st.partition_epoch, st.controller_epoch)
        fetching = None
        if not was_leader and st.leader >= 0 and old_leader == st.leader:
            for (leader, _fid), thread in self.fetchers.items():
                if leader == st.leader and tp in thread.partitions:
                    fetching = thread.partitions[tp]
        if fetching is not None and \
                not become_follower_needed(self.rules, old_epoch, st.leader_epoch):
            # ReplicaManager.makeFollowers: Partition.makeFollower returned false, the partition
            # keeps its fetcher and fetch position (no truncation). Fetches before 2.1 carry no
            # epoch; the stored one only keeps a rule override of fencing consistent.
            fetching.current_leader_epoch = st.leader_epoch
            for thread in self.fetchers.values():
                if tp in thread.partitions:
                    thread.changed(tp)
            self.trace("become_follower", st.topic, st.partition,
                       ev.BecomeFollowerSkipped(st.leader, st.leader_epoch))
            return
        self.trace("become_follower", st.topic, st.partition,
                   ev.BecomeFollower(st.leader, st.leader_epoch))
        if was_leader:
            self.replica_manager.fail_waiting(self, tp)
        self._remove_fetcher_partition(tp)
        if st.leader < 0:
            return
        log = part.log
        rules = self.rules
        if not rules.leader_epoch_truncation:
            # before KIP-101 (0.11): truncate to the local high watermark, then fetch from there
            log.truncate_to(log.high_watermark, "becoming follower: truncate to HW")
            state = PartitionFetchState(log.log_end_offset, st.leader_epoch, FETCHING)
        elif rules.fetch_diverging_epoch and log.latest_epoch() >= 0:
            # 2.8+: fetch from the LEO with LastFetchedEpoch; the leader reports divergence
            state = PartitionFetchState(log.log_end_offset, st.leader_epoch, FETCHING,
                                        last_fetched_epoch=log.latest_epoch())
        else:
            state = PartitionFetchState(log.high_watermark, st.leader_epoch, TRUNCATING)
        self._add_fetcher_partition(tp, st.leader, state)

    def _on_update_metadata(self, src, msg: UpdateMetadataRequest) -> None:
        md = self.metadata
        if msg.controller_epoch < md.controller_epoch:
            return
        md.controller_epoch = msg.controller_epoch
        md.controller_id = msg.controller_id
        md.live_brokers = tuple(msg.live_brokers)
        for st in msg.partition_states:
            md.partitions[(st.topic, st.partition)] = st

    def _on_stop_replica(self, src, msg: StopReplicaRequest) -> None:
        """ReplicaManager.stopReplicas: stop the fetchers of the partitions; with
        deletePartition=true also drop the Partition and delete its log (a replica a
        reassignment removed). With deletePartition=false the Partition stays hosted."""
        if msg.controller_epoch < self.metadata.controller_epoch:
            return   # STALE_CONTROLLER_EPOCH
        for tp in msg.partitions:
            self.remove_replica(tp, bool(msg.delete))

    def remove_replica(self, tp, delete: bool) -> None:
        """Stop one replica (StopReplica in ZooKeeper mode; in KRaft, applyDelta for a replica
        the metadata no longer lists, which is deleted)."""
        rm = self.replica_manager
        self._remove_fetcher_partition(tp)
        self.partition_changed(tp)
        part = rm.partitions.get(tp)
        if part is not None and part.is_leader:
            rm.fail_waiting(self, tp)
        if delete:
            rm.partitions.pop(tp, None)
            if self.logs.pop(tp, None) is not None:
                self.writeback_history.pop(tp, None)
                self.last_flush_ms.pop(tp, None)
                self.log_dir.delete(f"{tp[0]}-{tp[1]}/{LEADER_EPOCH_CHECKPOINT}")
        self.trace("stop_replica", tp[0], tp[1], ev.StopReplica(bool(delete)))

    def _on_alter_partition(self, src, msg: AlterPartitionRequest) -> None:
        if self.controller is None:
            self.send(src, AlterPartitionResponse(E.NOT_CONTROLLER, (), msg.correlation_id))
            return
        self.cluster.run_controller(self, "alter_partition", (src, msg))

    def _on_metadata(self, src, msg: MetadataRequest) -> None:
        md = self.metadata
        out = []
        topics = msg.topics or tuple(sorted({t for t, _ in md.partitions}))
        for topic in topics:
            tps = sorted(tp for tp in md.partitions if tp[0] == topic)
            if not tps:
                out.append((topic, -1, E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, (), ()))
            for tp in tps:
                st = md.partitions[tp]
                err = E.NONE if st.leader >= 0 else E.LEADER_NOT_AVAILABLE
                out.append((topic, tp[1], err, st.leader, st.leader_epoch, st.replicas, st.isr))
        self.send(src, MetadataResponse(msg.correlation_id, md.live_brokers, md.controller_id,
                                        tuple(out)))

    def _on_list_offsets(self, src, msg: ListOffsetsRequest) -> None:
        """Partition.fetchOffsetForTimestamp: 'latest' is the HW for clients (LSO if committed)."""
        out = []
        for topic, partition, ts in msg.partitions:
            part = self.replica_manager.partitions.get((topic, partition))
            if part is None or not part.is_leader:
                out.append((topic, partition, self.not_leader_error(), -1))
                continue
            log = part.log
            if ts == -2:
                out.append((topic, partition, E.NONE, log.log_start_offset))
            elif msg.replica_id >= 0:
                out.append((topic, partition, E.NONE, log.log_end_offset))
            elif self.rules.list_offsets_offset_not_available and \
                    part.leader_epoch_start_offset > log.high_watermark:
                out.append((topic, partition, E.OFFSET_NOT_AVAILABLE, -1))
            else:
                out.append((topic, partition, E.NONE, log.high_watermark))
        self.send(src, ListOffsetsResponse(msg.correlation_id, tuple(out)))

    def _on_offset_commit(self, src, msg: OffsetCommitRequest) -> None:
        """GroupCoordinator.handleCommitOffsets: store each offset with its CommittedLeaderEpoch
        (2.1+, KIP-320: OffsetCommit v6, offset value v3; -1 is stored as no epoch). Before 2.1
        the request and the stored value had no epoch."""
        c = self.cluster
        keep_epoch = c.rules.offset_commit_leader_epoch
        for topic, partition, offset, leader_epoch in msg.offsets:
            key = (msg.group_id, topic, partition)
            c.group_offsets[key] = offset
            c.group_offset_leader_epochs[key] = \
                leader_epoch if keep_epoch and leader_epoch >= 0 else None
        self.trace("offset_commit", detail=ev.OffsetCommit(
            msg.group_id, tuple(o[:3] for o in msg.offsets)))
        self.send(src, OffsetCommitResponse(msg.correlation_id, E.NONE))

    def _on_controlled_shutdown(self, src, msg: ControlledShutdownRequest) -> None:
        if self.controller is None:
            self.send(src, ControlledShutdownResponse("NOT_CONTROLLER"))
            return
        self.cluster.run_controller(self, "controlled_shutdown",
                                    (src, msg.broker_id, msg.broker_epoch))

    def _on_controlled_shutdown_response(self, src, msg: ControlledShutdownResponse) -> None:
        if self.state != SHUTTING_DOWN or self.shutdown_awaiting < 0:
            return   # not shutting down, or the attempt already timed out
        self.shutdown_awaiting = -1
        self.trace("controlled_shutdown",
                   detail=ev.ControlledShutdown(src, msg.error, len(msg.remaining_partitions)))
        if msg.error == E.NONE and not msg.remaining_partitions:
            self.shutdown_cleanly()
        else:
            self._controlled_shutdown_failed(
                f"{msg.error}" if msg.error != E.NONE
                else f"{len(msg.remaining_partitions)} partition(s) remaining to move")

    def _on_zk_ping_response(self, src, msg: ZkPingResponse) -> None:
        if msg.alive or msg.session_id != self.session_id:
            return
        # the session expired (paused or cut off from ZooKeeper for too long): re-register
        self.trace("zk_session_expired",
                   detail=ev.ZkSessionExpired(msg.session_id, self.id, "notified", -1))
        self.resign_controller("ZooKeeper session expired")
        try:
            registered = self._register()
        except NodeExists:
            return   # logged by the controller's event thread; the process keeps running
        if registered:
            self.cluster.on_broker_registered(self)

    def _on_broker_registration_response(self, src, msg: BrokerRegistrationResponse) -> None:
        if self.lifecycle is not None:
            self.lifecycle.on_registration_response(msg)

    def _on_broker_heartbeat_response(self, src, msg: BrokerHeartbeatResponse) -> None:
        if self.lifecycle is not None:
            self.lifecycle.on_heartbeat_response(msg)

    def _on_metadata_log(self, src, msg) -> None:
        """__cluster_metadata traffic of this broker's observer Raft client."""
        if self.lifecycle is not None:
            self.lifecycle.raft.handle(self.lifecycle, src, msg)

    def _ignore(self, src, msg) -> None:
        """Responses the simulation does not act on (LeaderAndIsrResponse)."""


_HANDLERS = {
    FetchRequest: Broker._on_fetch,
    ProduceRequest: Broker._on_produce,
    FetchResponse: Broker._on_fetcher_response,
    OffsetsForLeaderEpochResponse: Broker._on_fetcher_response,
    OffsetsForLeaderEpochRequest: Broker._on_offsets_for_leader_epoch,
    LeaderAndIsrRequest: Broker._on_leader_and_isr,
    LeaderAndIsrResponse: Broker._ignore,
    ControlledShutdownRequest: Broker._on_controlled_shutdown,
    ControlledShutdownResponse: Broker._on_controlled_shutdown_response,
    ZkPingResponse: Broker._on_zk_ping_response,
    UpdateMetadataRequest: Broker._on_update_metadata,
    StopReplicaRequest: Broker._on_stop_replica,
    AlterPartitionRequest: Broker._on_alter_partition,
    AlterPartitionResponse: Broker._on_alter_partition_response,
    MetadataRequest: Broker._on_metadata,
    ListOffsetsRequest: Broker._on_list_offsets,
    OffsetCommitRequest: Broker._on_offset_commit,
    BrokerRegistrationResponse: Broker._on_broker_registration_response,
    BrokerHeartbeatResponse: Broker._on_broker_heartbeat_response,
}
# KRaft: every __cluster_metadata message goes to the broker's observer Raft client
_HANDLERS.update(dict.fromkeys(RAFT_MESSAGES, Broker._on_metadata_log))
_RAFT_REQUESTS = frozenset(m for m in RAFT_MESSAGES if m.__name__.endswith("Request"))
