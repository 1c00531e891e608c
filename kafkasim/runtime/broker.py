"""A broker: its log dir, ReplicaManager, fetcher threads, metadata cache and (maybe) controller.

The broker is the ``ctx`` the protocol objects talk to: it reads the clock and configs, sends
messages through the cluster's network, runs timers, records trace events and counts Kafka's
meters. Lifecycle: ``start`` (register in ZooKeeper, maybe become controller) and ``stop``.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkasim.control.controller import KafkaController
from kafkasim.control.kraft.raft_messages import RAFT_MESSAGES
from kafkasim.control.zookeeper import (
    NodeExists,
)
from kafkasim.core import alter_partition_manager, producer_state
from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core.alter_partition_manager import (
    ISR_CHANGE_PROPAGATION_INTERVAL_MS,
    AlterPartitionManager,
    timer_isr_change_propagation,
)
from kafkasim.core.fetcher import (
    ReplicaFetcherThread,
)
from kafkasim.core.log import Log
from kafkasim.core.messages import (
    AlterPartitionRequest,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
    FetchRequest,
    OffsetsForLeaderEpochRequest,
)
from kafkasim.core.partition import Partition
from kafkasim.core.replica_manager import ReplicaManager
from kafkasim.runtime.kafka_apis import HANDLERS
from kafkasim.runtime.log_manager import LogManager, reschedule, schedule_periodic
from kafkasim.runtime.metadata_cache import MetadataCache, new_metadata_cache
from kafkasim.runtime.zk_broker_lifecycle import ZkBrokerLifecycle

RUNNING = "running"
STOPPED = "stopped"
SHUTTING_DOWN = "shutting down"

# Meters the broker marks (kafka.server:type=ReplicaManager / ControllerStats)
METERS = ("IsrShrinksPerSec", "IsrExpandsPerSec", "FailedIsrUpdatesPerSec",
          "UncleanLeaderElectionsPerSec", "IncrementalFetchSessionEvictionsPerSec")


class Broker:
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
        self.broker_epoch = -1
        self.log_manager = LogManager(log_dir)   # the log dir and its logs: survive a crash
        self.logs = self.log_manager.logs
        self.replica_manager = ReplicaManager()
        self.fetchers: dict[tuple[int, int], ReplicaFetcherThread] = {}
        # corr -> [deadline, timeout id, fetcher key] of the fetcher's request in flight: its
        # request timeout (deadline -1 once it fired), which TimeoutScheduler.fire_timeouts reads
        # in the process's TimeoutScheduler.timeouts entry (this incarnation's dict: Broker.start
        # puts it there)
        self.fetch_inflight: dict[int, list] = {}
        # ZooKeeper's, answering as the cluster's Kafka release; a KRaft broker gets
        # KRaftMetadataCache with its lifecycle manager
        self.metadata: MetadataCache = new_metadata_cache(broker_id, False,
                                                          cluster.kafka_version)
        self.controller: KafkaController | None = None
        self.paused_until = 0
        self.meters = dict.fromkeys(METERS, 0)
        self.correlation = 0
        self.alter_partition_manager = AlterPartitionManager()
        self.lifecycle = None   # KRaft: BrokerLifecycleManager (kafkasim.runtime.broker_lifecycle)
        self.zk_lifecycle = ZkBrokerLifecycle()   # ZooKeeper mode: registration, shutdown

    def __repr__(self) -> str:
        return f"Broker({self.id}, {self.state}{', controller' if self.controller else ''})"

    # -- ctx interface ------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.cluster.engine.now

    @property
    def partitions(self) -> dict:
        """The hosted partitions (ReplicaManager.allPartitions), as the fetcher reads them."""
        return self.replica_manager.partitions

    @property
    def is_running(self) -> bool:
        return self.state in (RUNNING, SHUTTING_DOWN)

    def topic_config(self, topic: str) -> dict:
        return self.cluster.topics.configs[topic]

    def is_isr_eligible(self, broker_id: int) -> bool:
        """ZK mode: the broker is alive in this broker's metadata cache; KRaft: registered,
        unfenced and not in controlled shutdown."""
        return broker_id in self.metadata.live_brokers

    def isr_eligible_brokers(self) -> tuple[int, ...]:
        """Brokers whose replicas may join the ISR or hold the HW as caught up (ZK mode: alive
        in this broker's metadata cache)."""
        return self.metadata.live_brokers

    def cluster_racks(self) -> dict[int, str | None]:
        """broker.rack of each broker alive in this broker's metadata cache, and its own
        (MetadataCache.getPartitionReplicaEndpoints: a dead or fenced broker has no endpoint,
        so the replica selector never names it; in KRaft a broker in controlled shutdown
        still has one)."""
        md = self.metadata
        return {b.id: b.rack for b in self.cluster.brokers.values()
                if b.id == self.id or md.has_alive_broker(b.id)}

    def mark_meter(self, name: str, count: int = 1) -> None:
        self.meters[name] += count

    def partition_changed(self, tp) -> None:
        rm = self.replica_manager
        if tp in rm.quiet:
            rm.unquiet(self, tp)

    def not_leader_error(self) -> str:
        return E.NOT_LEADER_OR_FOLLOWER if self.rules.tools.error_not_leader_or_follower \
            else E.NOT_LEADER_FOR_PARTITION

    def next_correlation_id(self) -> int:
        self.correlation += 1
        return self.correlation

    def send(self, dst, msg) -> None:
        self.cluster.transport.send(self.id, dst, msg)

    def schedule_timer(self, delay_ms: int, fn: Callable[..., None], *args) -> None:
        """Call ``fn(self, *args)`` after ``delay_ms`` if this process still runs. ``fn`` is a
        plain function (``_timer_...``), so the engine's queue stays picklable."""
        self.cluster.engine.schedule(delay_ms, "broker_timer", self.id, self.incarnation, fn,
                                     args)

    def schedule_controller_timer(self, delay_ms: int, controller_epoch: int, name: str
                                  ) -> None:
        """The controller's periodic task ``name`` (auto_rebalance), while it keeps its epoch."""
        self.schedule_timer(delay_ms, _timer_controller_timer, controller_epoch, name)

    def schedule_timeout(self, delay_ms: int, name: str, *args) -> int:
        """The purgatory timeout (DelayedOperationPurgatory.tryCompleteElseWatch's timer) of the
        operation ReplicaManager has just parked: ``name`` "produce_timeout" (a DelayedProduce
        in delayed_produce) or "fetch_timeout" (a DelayedFetch in delayed_fetch), ``args`` its
        id; returns the timeout id. The parked operation is the timeout (its deadline_ms and
        timeout_id; this process's TimeoutScheduler.timeouts entry watches both purgatories, Broker
        .start): completing it (taking it out of its purgatory) cancels the timeout, and
        TimeoutScheduler.fire_timeouts calls _timer_produce_timeout / _timer_fetch_timeout when
        it is due. It takes its id and the owner's wake-up as TimeoutScheduler.add_timeout would."""
        cluster = self.cluster
        timers = cluster.timeout_scheduler
        tid = timers.next_timeout_id
        timers.next_timeout_id = tid + 1
        entry = timers.process_timeouts[self.id]   # this process's (made by start())
        deadline = cluster.engine.now + delay_ms
        if deadline < entry[1]:   # before the owner's next wake-up (or none is pending)
            entry[1] = deadline
            cluster.engine.schedule_at(deadline, "timeouts", ("broker", self.id, self.incarnation))
        return tid

    def trace(self, kind: str, topic: str = "", partition: int = -1, detail=None) -> None:
        cluster = self.cluster   # Trace.record, inlined (every HW move on a leader)
        cluster.trace.rows.append((cluster.engine.now, kind, self.id, topic, partition, detail))

    def local_log(self, topic: str, partition: int) -> Log:
        return self.logs[(topic, partition)]

    # -- lifecycle --------------------------------------------------------------------------
    def previous_broker_epoch(self) -> int:
        """The broker epoch in ``.kafka_cleanshutdown`` (KRaft), -1 without one."""
        return self.log_manager.previous_broker_epoch()

    def start(self) -> None:
        """Start the process: recover logs from the checkpoint files, register in ZooKeeper
        (ephemeral /brokers/ids/<id>), maybe become controller, start the periodic tasks."""
        if self.state == RUNNING:
            raise RuntimeError(f"broker {self.id} is already running")
        if self.lifecycle is not None:
            self.lifecycle.previous_epoch = self.log_manager.previous_broker_epoch()
            self.lifecycle.clean_shutdown_marker = self.log_manager.clean_shutdown_file
        self.log_manager.load_logs(self)
        self.state = RUNNING
        self.alter_partition_manager.started_ms = self.now
        self.incarnation += 1
        self.cluster.transport.network.incarnations[self.id] = self.incarnation
        self.cluster.transport.forget_process(self.id)   # a new process: no connection states
        rm = self.replica_manager   # this process's purgatories (a new one after a stop)
        timers = self.cluster.timeout_scheduler
        timers.process_timeouts[self.id] = timers.timeouts_of(
            ("broker", self.id, self.incarnation), self.fetch_inflight,
            _timer_fetcher_request_timeout,
            ((rm.delayed_produce, _timer_produce_timeout),
             (rm.delayed_fetch, _timer_fetch_timeout)))
        self.paused_until = 0
        registered = False
        if self.lifecycle is not None:
            self.trace("broker_start", detail=ev.KRaftBrokerStart())
            self.lifecycle.start()
        else:
            try:
                registered = self.zk_lifecycle.register(self)
            except NodeExists:
                self.zk_lifecycle.startup_failed(self)
                raise
        lag = self.config["replica.lag.time.max.ms"]
        period = lag // 2 if self.rules.isr.isr_shrink_interval_half_lag else lag
        schedule_periodic(self, period, 0, _timer_isr_expiration, period, first_ms=0)
        if not self.rules.alter_partition.alter_isr:
            self.schedule_timer(ISR_CHANGE_PROPAGATION_INTERVAL_MS, timer_isr_change_propagation)
        self.log_manager.startup(self)
        if self.lifecycle is None:
            self.zk_lifecycle.start_pinging(self)
        if registered:
            self.cluster.zk_control_plane.on_broker_registered(self)

    def stop_process(self, kind: str) -> None:
        """The process is gone: every in-memory structure is lost; the log dir stays."""
        self.state = STOPPED
        self.zk_lifecycle.resign_controller(self, kind)
        if self.lifecycle is not None:
            self.lifecycle.stop()
        self.replica_manager = ReplicaManager()
        self.fetchers = {}
        self.fetch_inflight = {}
        self.metadata = new_metadata_cache(self.id, self.lifecycle is not None,
                                           self.cluster.kafka_version)
        self.paused_until = 0
        self.zk_lifecycle.isr_change_propagation.change_set = []
        self.alter_partition_manager.clear()
        transport = self.cluster.transport
        transport.network.incarnations[self.id] = self.incarnation + 1000000  # conns closed
        transport.reset_connections(self.id)

    def crash(self) -> None:
        """kill -9: the process dies, the OS page cache survives, so no log data is lost. The
        ZooKeeper session lives on until it times out."""
        if self.state != RUNNING:
            raise RuntimeError(f"broker {self.id} is not running")
        self.stop_process("crash")
        self.trace("broker_crash", detail=ev.BrokerCrash())

    def power_loss(self) -> None:
        """The machine loses power: each log keeps only what reached the disk, whether Kafka
        fsynced it or the OS wrote the page cache back (``Log.durable_offset``)."""
        lost = self.log_manager.lose_unsynced(self)
        if self.state == RUNNING:
            self.stop_process("power loss")
        self.trace("broker_power_loss", detail=ev.PowerLoss(lost))

    def shutdown_cleanly(self) -> None:
        """The end of a clean shutdown: flush every log, write the checkpoints and the
        ``.kafka_cleanshutdown`` marker (LogManager.shutdown), then stop. ZooKeeper mode closes
        the session (its ephemeral znodes go at once); a KRaft broker, which the controller
        answered shouldShutDown (or which never ran), writes its broker epoch into the marker
        (CleanShutdownFileHandler, 3.7+), so its next registration can prove it (KIP-966)."""
        self.log_manager.flush_for_shutdown(self.now, self.replica_manager.partitions)
        kraft = self.lifecycle is not None
        if self.rules.controller.broker_registration_previous_epoch:
            # CleanShutdownFileHandler.write(brokerEpoch) (3.7+); -1 in ZooKeeper mode or
            # before a KRaft registration (LogManager.shutdown's default)
            self.log_manager.clean_shutdown_file = \
                self.broker_epoch if kraft and self.broker_epoch >= 0 else -1
        else:
            self.log_manager.clean_shutdown_file = True   # an empty file (Files.createFile)
        self.stop_process("clean shutdown")
        if not kraft:
            self.cluster.zk_control_plane.close_session(self.zk_lifecycle.session_id)
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
                self.replica_manager.begin_controlled_shutdown()   # (BrokerServer.shutdown)
                self.lifecycle.begin_controlled_shutdown()
            else:
                self.shutdown_cleanly()
            return
        if not self.config["controlled.shutdown.enable"]:
            self.shutdown_cleanly()
            return
        self.zk_lifecycle.begin_controlled_shutdown(self)

    # -- checkpoint files ------------------------------------------------------------------
    # -- timers -----------------------------------------------------------------------------
    # -- fetchers ---------------------------------------------------------------------------
    def send_from_fetcher(self, thread: ReplicaFetcherThread, req, timeout_ms: int) -> None:
        """Send the fetcher's request with its request timeout (replica.socket.timeout.ms).
        A fetcher has one request in flight and waits for it (ReplicaFetcherBlockingSend
        .sendRequest: NetworkClientUtils.sendAndReceive), so the timeout is no FIFO entry: the
        request's fetch_inflight entry is it, and answering the request (popping the entry)
        cancels it. It takes its id and the owner's wake-up as TimeoutScheduler.add_timeout
        would."""
        cluster = self.cluster
        leader = thread.leader_id
        corr = req.correlation_id
        timers = cluster.timeout_scheduler
        entry = timers.process_timeouts[self.id]   # this process's (made by start())
        tid = timers.next_timeout_id
        timers.next_timeout_id = tid + 1
        deadline = cluster.engine.now + timeout_ms
        self.fetch_inflight[corr] = [deadline, tid, (leader, thread.fetcher_id)]
        if deadline < entry[1]:   # before the owner's next wake-up (or none is pending)
            entry[1] = deadline
            cluster.engine.schedule_at(deadline, "timeouts", ("broker", self.id, self.incarnation))
        cluster.transport.send(self.id, leader, req)

    def schedule_fetcher_wakeup(self, thread: ReplicaFetcherThread, when: int) -> None:
        self.schedule_timer(max(0, when - self.now), _timer_fetcher_wakeup,
                            (thread.leader_id, thread.fetcher_id), when)

    def trace_fetcher(self, thread: ReplicaFetcherThread, kind: str, reason: str) -> None:
        self.trace(kind, detail=ev.FetchFailed(thread.name, reason))

    # -- log changes (LogListener of every log of this broker) ------------------------------
    def on_append(self, log: Log, first: int, last: int, as_leader: bool) -> None:
        """Trace the append, update a follower's producer state from the fetched batch headers
        (the leader's is updated by ReplicaManager.append_records before it answers), flush by
        flush.messages (UnifiedLog.append: once LocalLog.unflushedMessages, LEO - recovery
        point, reaches the log config's flush.messages). Trace.record is inlined (every append)."""
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
            tail = pb.last
            if tail is not None and tail[0] == first:
                # the usual fetch: the chunk starts with the newest batch, so holds it only
                producer_state.update(log.producer_states, (tail,))
            elif tail is not None and tail[1] >= first:
                producer_state.update(log.producer_states, pb[pb.first_covering(first):])
            cluster.trace.rows.append((now, "replicate", self.id, topic, log.partition,
                                       (first, last)))
        if log.log_end_offset - log.recovery_point >= \
                log.config["flush.messages"] and log.flush():
            self.log_manager.last_flush_ms[(topic, log.partition)] = now

    def on_truncate(self, log: Log, offset: int, removed: int, reason: str,
                    old_high_watermark: int) -> None:
        self.partition_changed((log.topic, log.partition))
        if removed:   # (the log rebuilt its producer state itself)
            self.trace("truncate", log.topic, log.partition, ev.Truncate(offset, removed, reason))
            if log.high_watermark != old_high_watermark:
                self.trace("hw", log.topic, log.partition, log.high_watermark)
        if self.state == RUNNING and (
                removed or not self.rules.fetch.recovery_checkpoint_only_after_truncation):
            # LogManager.truncateTo: the dir's recovery points (1.0+: once a log was truncated)
            self.log_manager.checkpoint_recovery_points()

    def on_wipe(self, log: Log, start_offset: int) -> None:
        self.partition_changed((log.topic, log.partition))
        self.trace("truncate", log.topic, log.partition, ev.LogWiped(start_offset))
        if self.state == RUNNING:
            # LogManager.truncateFullyAndStartAt ends with checkpointRecoveryOffsetsInDir (not
            # while LogLoader deletes the segments of a log whose start is past its end)
            self.log_manager.checkpoint_recovery_points()

    def set_follower_hw(self, tp, leader_hw: int) -> None:
        log = self.logs[tp]
        old = log.high_watermark
        # ReplicaFetcherThread.processPartitionData: the follower HW rule (UnifiedLog.
        # updateHighWatermark: the leader's HW clamped into [log start, own LEO])
        hw = self.rulebook.update_high_watermark(leader_hw, log.log_start_offset,
                                                 log.log_end_offset)
        log.high_watermark = hw
        if hw != old:
            cluster = self.cluster   # Trace.record, inlined (most fetch responses)
            cluster.trace.rows.append((cluster.engine.now, "hw", self.id, log.topic,
                                       log.partition, hw))
            # consumers fetching from this follower (KIP-392) may now read more (the usual
            # follower has none: that test first)
            # (KAFKA-14334, 3.4+: before, they waited for their MaxWaitMs)
            if tp in self.replica_manager.consumer_fetch_waiters and hw > old and \
                    self.rules.fetch.follower_hw_completes_delayed_fetch:
                self.replica_manager.wake_consumer_fetches(self, tp)

    # -- ISR changes ------------------------------------------------------------------------
    def propose_isr(self, part: Partition, kind: str, replicas: tuple, new_isr: tuple) -> None:
        """Partition.prepareIsrExpand / prepareIsrShrink and their submission
        (kafkasim.core.alter_partition_manager)."""
        alter_partition_manager.propose_isr(self, part, kind, replicas, new_isr)

    def on_peer_gone(self, dead: int) -> None:
        """A broker process died: fetches in flight to it fail now (connection reset)."""
        lm = self.lifecycle
        if lm is not None:
            if lm.inflight is not None and lm.inflight[2] == dead:
                lm.controller_gone()
            self.alter_partition_manager.on_controller_disconnect(self, dead)
            lm.raft.on_peer_gone(lm, dead)     # the metadata log's Fetch to a dead voter
        else:   # ZooKeeper mode (2.7+): the AlterPartition in flight to a dead controller
            self.alter_partition_manager.on_controller_disconnect(self, dead)
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
        if type(msg) is AlterPartitionRequest:
            if msg.correlation_id == self.alter_partition_manager.corr:
                self.alter_partition_manager.on_controller_disconnect(self, dst)
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
        """KafkaApis.handle: the request's handler by its type (``kafka_apis.HANDLERS``).
        Transport.deliver hands the steady traffic (Fetch, Produce, FetchResponse) to its handler
        directly."""
        handler = HANDLERS.get(type(msg))
        if handler is None:
            raise TypeError(f"broker {self.id} cannot handle {type(msg).__name__}")
        handler(self, src, msg)


# -- timer tasks: fn(broker, *args) through Broker.schedule_timer --------------------------------
def _timer_controller_timer(broker: Broker, controller_epoch: int, name: str) -> None:
    c = broker.controller
    if c is None or c.controller_epoch != controller_epoch:
        return
    broker.cluster.zk_control_plane.run_controller(broker, name, ())
    if name == "auto_rebalance" and broker.controller is c:
        broker.schedule_timer(broker.config["leader.imbalance.check.interval.seconds"] * 1000,
                              _timer_controller_timer, controller_epoch, "auto_rebalance")


def _timer_isr_expiration(broker: Broker, period: int) -> None:
    broker.replica_manager.maybe_shrink_isr(broker)
    reschedule(broker, period, _timer_isr_expiration, period)


def _timer_produce_timeout(broker: Broker, dp_id: int) -> None:
    broker.replica_manager.on_produce_timeout(broker, dp_id)


def _timer_fetch_timeout(broker: Broker, df_id: int) -> None:
    broker.replica_manager.on_fetch_timeout(broker, df_id)


def _timer_fetcher_wakeup(broker: Broker, key, when: int) -> None:
    thread = broker.fetchers.get(key)
    if thread is not None:
        thread.on_wakeup(broker, when)


def _timer_fetcher_request_timeout(broker: Broker, corr: int) -> None:
    inflight = broker.fetch_inflight.pop(corr, None)
    if inflight is None:
        return
    thread = broker.fetchers.get(inflight[2])
    if thread is not None:
        thread.on_request_failed(broker, corr, E.REQUEST_TIMED_OUT)


_RAFT_REQUESTS = frozenset(m for m in RAFT_MESSAGES if m.__name__.endswith("Request"))
