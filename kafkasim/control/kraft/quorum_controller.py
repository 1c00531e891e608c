"""``QuorumController``: the KRaft controller that runs on each controller node.

One node's controller is *active*: the Raft leader of ``__cluster_metadata`` once the
LeaderChange record of its epoch is committed (QuorumController.QuorumMetaLogListener
``handleLeaderChange`` / ``claim``). It turns requests (BrokerRegistration, BrokerHeartbeat,
AlterPartition, CreateTopics, ElectLeaders) into metadata records, appends them to the log through
the Raft client, replays them at once, and answers only when the records are committed (the
purgatory, ``deferred_event_queue.complete_up_to``: Kafka's DeferredEventQueue). Standby
controllers replay committed records.
A controller that loses leadership (``renounce``) rebuilds its state from the committed records
and answers every pending request with NOT_CONTROLLER.

Kafka's Controller operations are methods of the same names: ``register_broker``,
``process_broker_heartbeat``, ``alter_partition``, ``unregister_broker``, ``create_topics``,
``incremental_alter_configs``, ``describe_configs``. Each returns a ``ControllerFuture``
(kafkasim.control.kraft.controller_api) completed once its records are committed; the
brokers' requests from the network (``handle``) go through them and are answered by message.
Each activation writes what ``ActivationRecordsGenerator.generate`` gives for the log's state
(``complete_activation``, Kafka's ``ControllerWriteEvent("completeActivation")``): the bootstrap
records on a new cluster (between Begin/EndTransactionRecords from metadata.version 3.6-IV1),
an AbortTransactionRecord for a metadata transaction a failed controller left open.

Periodic work of the active controller. Kafka 4.0+ (``config["periodic_tasks"]``): fixed-rate
tasks of a ``PeriodicTaskControlManager`` (``kafkasim.control.kraft.periodic_tasks``, KAFKA-17793),
activated when the controller claims leadership, each first run one period later:
``writeNoOpRecord`` every ``metadata.max.idle.interval.ms``, ``maybeFenceStaleBroker`` every
``max(1 ms, broker.session.timeout.ms / 8)`` (sessions in a BrokerHeartbeatTracker),
``electPreferred`` every ``leader.imbalance.check.interval.seconds`` (with auto rebalance on),
``electUnclean`` every ``unclean.leader.election.interval.ms``; a run that fenced a broker or
hit the election cap runs again 10 ms later; ``generatePeriodicPerformanceMessage`` every
``controller.performance.sample.period.ms`` (60 s) logs the EventPerformanceMonitor's summary
of the period (``kafkasim.control.kraft.event_performance``, KAFKA-16446: every operation and
deferred event is observed, taking no simulated time; the Raft listener's events are not
counted). ``expireDelegationTokens`` is not registered: kafkasim has no delegation tokens, so
the sweep could never find one to expire. Kafka 3.9 and earlier (QuorumController.java, 3.9 branch):
- ``maybeFenceReplicas``: fence one broker whose session (``broker.session.timeout.ms``) expired
  per event, rescheduled at the next session deadline (``rescheduleMaybeFenceStaleBrokers``);
- ``maybeBalancePartitionLeaders`` every ``leader.imbalance.check.interval.seconds`` while some
  partition is imbalanced (KRaft ignores ``leader.imbalance.per.broker.percentage``);
- ``maybeElectUncleanLeaders`` every ``unclean.leader.election.interval.ms`` while some
  partition is leaderless;
- ``writeNoOpRecord`` every ``metadata.max.idle.interval.ms`` (500) from metadata.version
  3.3-IV1 (``isNoOpRecordSupported``; every modelled KRaft release finalizes a later level), so
  the log's high watermark keeps moving.

The node around it (``kafkasim.runtime.controller_server``) supplies ``ctx``: ``now``, ``send``,
``schedule``, ``trace`` and the Raft client ``raft``.
"""

from __future__ import annotations

from collections.abc import Iterable
from functools import partial

from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.activation_records import (
    ActivationRecordsGenerator,
    BootstrapMetadata,
)
from kafkasim.control.kraft.broker_heartbeat import LONG_MAX_VALUE
from kafkasim.control.kraft.cluster_control import (
    BrokerIdNotRegisteredException,
    ControllerApiException,
    InvalidRequestException,
    UnsupportedVersionException,
)
from kafkasim.control.kraft.configuration_control import ConfigurationControlManager
from kafkasim.control.kraft.controller_api import (
    ConfigResourceExistenceChecker,
    ControllerFuture,
    answer_alter_partition,
    answer_heartbeat,
    answer_registration,
    not_controller,
)
from kafkasim.control.kraft.deferred_event_queue import DeferredEventQueue
from kafkasim.control.kraft.event_performance import (
    NS_PER_MS,
    controller_event,
    performance_monitor_for,
)
from kafkasim.control.kraft.feature_control import (
    ClusterFeatureSupportDescriber,
    FeatureControlManager,
    QuorumFeatures,
)
from kafkasim.control.kraft.metadata_version import MINIMUM_KRAFT_VERSION
from kafkasim.control.kraft.offset_control import metadata_transactions, published_entries
from kafkasim.control.kraft.periodic_tasks import (
    ControllerResult,
    PeriodicTask,
    PeriodicTaskControlManager,
    maybe_fence_stale_broker_period_ms,
)
from kafkasim.control.kraft.raft import NotLeaderError
from kafkasim.control.kraft.replication_control import CreatableTopic
from kafkasim.core import events as ev
from kafkasim.core.messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
)
from kafkasim.settings.versions import DEFAULT_VERSION, rules_for, version_at_least

_CLUSTER_RECORDS = (R.RegisterBrokerRecord, R.UnregisterBrokerRecord, R.FenceBrokerRecord,
                    R.UnfenceBrokerRecord, R.BrokerRegistrationChangeRecord,
                    R.RegisterControllerRecord, R.UnregisterControllerRecord)
_REPLICATION_RECORDS = (R.TopicRecord, R.PartitionRecord, R.PartitionChangeRecord,
                        R.RemoveTopicRecord, R.ConfigRecord, R.ClearElrRecord,
                        R.FeatureLevelRecord)
_TRANSACTION_RECORDS = (R.BeginTransactionRecord, R.EndTransactionRecord,
                        R.AbortTransactionRecord)
# what the controller replays as metadata (LogReplayTracker): not the Raft control records
_METADATA_RECORDS = (*_CLUSTER_RECORDS, *_REPLICATION_RECORDS, R.NoOpRecord,
                     R.ZkMigrationStateRecord, *_TRANSACTION_RECORDS)
#: BootstrapMetadata.source of a cluster formatted by ``kafka-storage format``
#: (BootstrapDirectory.java:109@3.9.0-rc3: the bootstrap.checkpoint file it wrote, in the
#: metadata log directory, whose path Kafka names)
BOOTSTRAP_SOURCE = "the binary bootstrap metadata file: bootstrap.checkpoint"


class QuorumController:
    """See the module docstring. ``features`` is the bootstrap: metadata.version and whether
    Eligible Leader Replicas are enabled (``eligible.leader.replicas.version`` >= 1)."""

    def __init__(self, node_id: int, managers, config: dict) -> None:
        self.node_id = node_id
        self.make_managers = managers      # () -> (cluster_control, replication_control)
        self.config = config
        self.active = False
        self.epoch = -1                   # the Raft epoch this controller is active in
        self.applied = -1                 # last replayed offset
        # OffsetControlManager.transactionStartOffset: the open metadata transaction's Begin
        self.transaction_start_offset = -1
        self.activation_message = ""      # what the last activation logged
        # OffsetControlManager.lastStableOffset: the last committed offset this controller
        # learned (handleCommitBatch); renounce reverts to it
        self.last_committed = -1
        # the purgatory: operations whose records wait for the HW (deferredEventQueue)
        self.deferred_event_queue = DeferredEventQueue()
        self.scheduled: set[str] = set()  # periodic tasks scheduled in ``epoch``
        self.fence_token = 0              # the live maybeFenceReplicas deferred event
        self.periodic: PeriodicTaskControlManager | None = None   # 4.0+, built on first claim
        self.deferred: PeriodicTaskControlManagerQueueAccessor | None = None
        # 4.0+ (KAFKA-16446): EventPerformanceMonitor, fed by every operation and deferred event
        self.performance_monitor = performance_monitor_for(config) \
            if config.get("periodic_tasks") else None
        self.cluster_control, self.replication_control = managers()
        self.feature_control = self.new_feature_control()

    # -- replay ---------------------------------------------------------------------------------
    def replay(self, record, offset: int, now_ms: int | None = None) -> None:
        """QuorumController.replay: each record goes to the manager that owns it; a
        transaction record moves the open transaction's start (OffsetControlManager.replay;
        an Abort's revert is the caller's, ``_abort_transaction``). ZkMigrationStateRecord
        (always NONE here) changes nothing kafkasim keeps."""
        if isinstance(record, _CLUSTER_RECORDS):
            self.cluster_control.replay(record, offset, now_ms)
        elif isinstance(record, _REPLICATION_RECORDS):
            self.replication_control.replay(record, offset)
            if type(record) is R.FeatureLevelRecord:
                self.feature_control.replay(record)
        elif isinstance(record, _TRANSACTION_RECORDS):
            begin = type(record) is R.BeginTransactionRecord
            self.transaction_start_offset = offset if begin else -1
        self.applied = offset

    def new_feature_control(self) -> FeatureControlManager:
        """The controller's FeatureControlManager (QuorumController's constructor): what this
        node's software supports (QuorumFeatures.defaultSupportedFeatureMap of its release,
        unstable.feature.versions.enable off) over the quorum's voters. Every registered broker
        and controller runs the same release, so each is described with the same ranges
        (kafkasim's registrations carry no feature ranges)."""
        version = self.config.get("kafka_version", DEFAULT_VERSION)
        supported = QuorumFeatures.default_supported_feature_map(False, version)
        voters = tuple(self.config.get("controller_ids", (self.node_id,)))
        extra = {}
        if not version_at_least(version, "4.0"):
            # QuorumController @3.9.0: setMetadataVersion(MINIMUM_KRAFT_VERSION), what a
            # pre-production log without a FeatureLevelRecord (3.0-3.2) is treated as
            extra["metadata_version"] = MINIMUM_KRAFT_VERSION
        return FeatureControlManager(
            quorum_features=QuorumFeatures(self.node_id, supported, voters),
            cluster_support_describer=SameSoftwareDescriber(self, supported, voters),
            kafka_version=version, **extra)

    def maybe_schedule_next_write_no_op_record(self, ctx) -> None:
        """3.x maybeScheduleNextWriteNoOpRecord: one NoOpRecord event
        metadata.max.idle.interval.ms ahead while the active controller's metadata.version has
        NoOpRecord (also after a FeatureLevelRecord raised it there). 4.0+: the writeNoOpRecord
        periodic task instead."""
        if not self.active or self.config.get("periodic_tasks") or "no_op" in self.scheduled \
                or not self._no_op_record_supported():
            return
        self.scheduled.add("no_op")
        ctx.schedule(self.config["metadata.max.idle.interval.ms"], "write_no_op", self.epoch)

    def _no_op_record_supported(self) -> bool:
        """3.x maybeScheduleNextWriteNoOpRecord: metadata.max.idle.interval.ms above 0 and a
        metadata.version with NoOpRecord (3.3-IV1, KIP-835)."""
        mv = self.feature_control.metadata_version()
        return self.config["metadata.max.idle.interval.ms"] > 0 and mv is not None and \
            mv.is_no_op_record_supported()

    def _rebuild(self, entries) -> None:
        """Forget everything and replay ``entries`` ((offset, epoch, record), in order): the
        SnapshotRegistry revert of ``renounce``, and the catch-up of ``claim``. Aborted
        metadata transactions are left out; an open one is replayed (its Begin noted)."""
        self.cluster_control, self.replication_control = self.make_managers()
        self.feature_control = self.new_feature_control()
        self.applied = -1
        self.transaction_start_offset = -1
        for offset, _epoch, record in metadata_transactions(entries).entries:
            self.replay(record, offset)

    def _abort_transaction(self, ctx) -> None:
        """OffsetControlManager.replay(AbortTransactionRecord): revert to the state before the
        open transaction's Begin (``revertToSnapshot(transactionStartOffset - 1)``); an active
        controller's broker sessions are not part of that state (ClusterControlManager's
        heartbeat manager keeps them)."""
        self._rebuild(ctx.raft.log.entries_between(0, self.transaction_start_offset))
        if self.active:
            self.cluster_control.activate(ctx.now)

    # -- Raft listener ------------------------------------------------------------------------
    def on_leader_change(self, ctx, leader_id: int, epoch: int) -> None:
        if self.active and (leader_id != self.node_id or epoch != self.epoch):
            self.renounce(ctx)

    def on_high_watermark(self, ctx, hw: int) -> None:
        raft = ctx.raft
        self.last_committed = max(self.last_committed, hw - 1)
        if self.active:
            self._complete_up_to(ctx, hw)
            return
        if raft.state_name == "Leader" and raft.leader_id == self.node_id:
            start = raft.epoch_start_offset()
            if start is not None and hw > start:
                self.claim(ctx, raft.epoch)
                return
        # a standby replays what is committed (from an empty state when a snapshot fetched
        # from the leader moved its log start past what it replayed)
        log = raft.log
        if log.below_log_start(self.applied + 1):
            self._rebuild(log.entries_between(0, hw))
            return
        for offset, _epoch, record in log.entries_between(self.applied + 1, hw):
            if type(record) is R.AbortTransactionRecord and self.transaction_start_offset != -1:
                self._abort_transaction(ctx)
            self.replay(record, offset)

    def claim(self, ctx, epoch: int) -> None:
        """QuorumMetaLogListener.handleLeaderChange -> claim: become the active controller once
        every record before this epoch's start is committed, then complete the activation."""
        log = ctx.raft.log
        self._rebuild(log.entries_between(0, log.end_offset))   # all committed by now
        self.cluster_control.activate(ctx.now)
        self.active = True
        self.epoch = epoch
        self.scheduled = set()
        ctx.trace("controller_active", ev.ControllerActive(epoch))
        self.complete_activation(ctx)
        if self.config.get("periodic_tasks"):
            self.activate_periodic_tasks(ctx)
            return
        self.maybe_schedule_next_write_no_op_record(ctx)
        self.reschedule_fence(ctx)
        self.maybe_schedule_periodic(ctx)

    def complete_activation(self, ctx) -> None:
        """``ControllerWriteEvent("completeActivation")``: CompleteActivationEvent
        .generateRecordsAndResult (QuorumController.java:1239@3.9.0-rc3, :1162@4.3.0) writes
        what ActivationRecordsGenerator.generate gives for the log's state: its open
        transaction's start, the bootstrap metadata, the finalized metadata.version and,
        through 4.0, whether the controller replayed any record (LogReplayTracker.empty(); from
        4.1, KAFKA-18858, a metadata.version not replayed yet decides). A generator error is
        Kafka's fatal fault: raised. The event performance monitor (4.0+) observes it as
        ``completeActivation[epoch]``, its name in QuorumController.claim."""
        version = self.config.get("kafka_version", DEFAULT_VERSION)
        is_empty = None
        if not self.feature_control.rules.feature_control_metadata_version_unset_until_replayed:
            log = ctx.raft.log
            is_empty = not any(isinstance(r, _METADATA_RECORDS)
                               for _o, _e, r in log.entries_between(0, log.end_offset))
        result = ActivationRecordsGenerator.generate(
            self._log_activation_message, self.transaction_start_offset,
            BootstrapMetadata(self.config["bootstrap_records"], BOOTSTRAP_SOURCE),
            self.feature_control.metadata_version(), self.config["min.insync.replicas"],
            is_empty=is_empty, kafka_version=version)
        if result.records:
            self.write(ctx, result.records, reason="completeActivation")
        if self.performance_monitor is not None:
            self.performance_monitor.observe_event(f"completeActivation[{self.epoch}]", 0)

    def _log_activation_message(self, message: str) -> None:
        self.activation_message = message

    def renounce(self, ctx) -> None:
        """QuorumController.renounce: drop uncommitted state, fail pending requests.
        OffsetControlManager.deactivate reverts the state to ``lastStableOffset``, the last
        committed offset the controller learned -- not the Raft client's current high watermark,
        which a Resigned (or Unattached) client no longer knows."""
        hw = self.last_committed + 1
        self.active = False
        self.epoch = -1
        if self.periodic is not None:
            self.periodic.deactivate()
        self._rebuild(ctx.raft.log.entries_between(0, hw))
        self.deferred_event_queue.fail_all(not_controller())   # deferredEventQueue.failAll
        ctx.trace("controller_renounce", ev.ControllerRenounce(hw))

    # -- writing ------------------------------------------------------------------------------
    def write(self, ctx, records, future: ControllerFuture | None = None, result=None,
              reason: str = "") -> int:
        """Append ``records`` as one batch and replay them now; ``future`` completes with
        ``result`` once they are committed (an operation that writes nothing, once everything
        before it is). Returns the batch's last offset (-1 if the Raft leadership was gone)."""
        raft = ctx.raft
        if records:
            try:
                base = raft.append(ctx, list(records))
            except NotLeaderError:
                # the Raft leader resigned (check quorum, shutdown) under us: QuorumController
                # renounces on the NotLeaderException of a failed append
                self.renounce(ctx)
                if future is not None:
                    future.complete_exceptionally(not_controller())
                return -1
            self._replay_written(ctx, records, base, reason)
            last = base + len(records) - 1
        else:
            last = raft.next_write_offset() - 1
        if future is not None:
            if last < raft.high_watermark:
                future.complete(result)
            else:
                self.deferred_event_queue.add(last, ControllerWriteEvent(future, result))
        return last

    def _replay_written(self, ctx, records, base: int, reason: str) -> None:
        """The active controller replays what it writes at once (tracing each partition
        change)."""
        rc = self.replication_control
        now = ctx.now
        for i, r in enumerate(records):
            t = type(r)
            if t is R.AbortTransactionRecord and self.transaction_start_offset != -1:
                self._abort_transaction(ctx)
            if t is R.PartitionChangeRecord or t is R.PartitionRecord:
                name = rc.topic_name(r.topic_id)
                old = rc.partition(name, r.partition_id) if name is not None else None
                self.replay(r, base + i, now)
                name = rc.topic_name(r.topic_id)
                _trace_partition_change(ctx, name, r, old, rc.partition(name, r.partition_id),
                                        reason)
            else:
                self.replay(r, base + i, now)

    def _complete_up_to(self, ctx, hw: int) -> None:
        """deferredEventQueue.completeUpTo: complete every operation whose records are
        committed."""
        self.deferred_event_queue.complete_up_to(hw - 1)

    # -- requests (Kafka's Controller API) -----------------------------------------------------
    # Each operation returns a ControllerFuture completed once its records are committed (at
    # once when it wrote none), or failed with its ApiException. ``future`` lets the network
    # path (``handle``) attach its answer before anything is written.
    def handle(self, ctx, src, msg) -> None:
        """A broker's request from the network: the operation, answered by message."""
        if isinstance(msg, BrokerHeartbeatRequest):
            self.process_broker_heartbeat(
                ctx, msg, ControllerFuture(partial(answer_heartbeat, ctx, src, msg)))
        elif isinstance(msg, BrokerRegistrationRequest):
            self.register_broker(
                ctx, msg, ControllerFuture(partial(answer_registration, ctx, src, msg)))
        elif isinstance(msg, AlterPartitionRequest):
            self.alter_partition(
                ctx, msg, ControllerFuture(partial(answer_alter_partition, ctx, src, msg)))

    @property
    def configuration_control(self):
        """configurationControl(): the dynamic configs (kept by the ReplicationControlManager,
        which reads min.insync.replicas and unclean.leader.election.enable from them)."""
        return self.replication_control.configuration_control

    def _refuse_if_inactive(self, future: ControllerFuture) -> bool:
        """An operation reaching a controller that is not active fails with NOT_CONTROLLER."""
        if self.active:
            return False
        future.complete_exceptionally(not_controller())
        return True

    @controller_event("registerBroker")
    def register_broker(self, ctx, request: BrokerRegistrationRequest,
                        future: ControllerFuture | None = None, *,
                        features=None) -> ControllerFuture:
        """registerBroker -> ClusterControlManager.registerBroker: the future's value is the
        BrokerRegistrationReply; the broker epoch is the offset of the batch's first record
        (offsetControl.nextWriteOffset). A registration the version's rules judge unclean
        (KIP-966) first takes the broker out of every ISR and ELR
        (BrokerUncleanShutdownHandler). ``features``: the request's supported ranges
        ((name, min, max); None, as the simulated brokers send: not checked), checked against
        the finalized features plus the Raft client's kraft.version (4.x)."""
        op = future or ControllerFuture()
        if self._refuse_if_inactive(op):
            return op
        finalized = None
        if features is not None:
            finalized = dict(self.feature_control.finalized_features().feature_map)
            finalized["kraft.version"] = ctx.raft.reconfig.history.last_kraft_version()
        try:
            records, reply = self.cluster_control.register_broker(
                request.broker_id, request.incarnation_id, request.rack,
                request.previous_broker_epoch, ctx.raft.next_write_offset(), ctx.now,
                features=features, finalized_features=finalized)
        except Exception as e:   # DuplicateBrokerRegistrationException, ...
            return _fail(op, e)
        why = f"broker {request.broker_id} registered" + \
            (" after an unclean shutdown" if reply.unclean_shutdown else "")
        self.write(ctx, records, op, reply, reason=why)
        self.reschedule_fence(ctx)
        return op

    @controller_event("processBrokerHeartbeat")
    def process_broker_heartbeat(self, ctx, request: BrokerHeartbeatRequest,
                                 future: ControllerFuture | None = None) -> ControllerFuture:
        """processBrokerHeartbeat -> ReplicationControlManager.processBrokerHeartbeat: the
        BrokerHeartbeatManager decides the next state; its transition's records go out in one
        batch; the future's value is the BrokerHeartbeatReply. From 4.0 the contact is first
        recorded in the session tracker (``trackBrokerHeartbeat``), whatever follows."""
        op = future or ControllerFuture()
        if self._refuse_if_inactive(op):
            return op
        cc = self.cluster_control
        rc = self.replication_control
        broker = request.broker_id
        cc.track_broker_heartbeat(broker, request.broker_epoch, ctx.now)
        try:
            records, reply = cc.process_broker_heartbeat(
                broker, request.broker_epoch, request.current_metadata_offset,
                want_fence=request.want_fence, want_shut_down=request.want_shut_down,
                now_ms=ctx.now, has_leaderships=lambda: rc.brokers_to_isrs.has_leaderships(broker),
                handle_broker_fenced=rc.handle_broker_fenced,
                handle_broker_unfenced=rc.handle_broker_unfenced,
                handle_broker_in_controlled_shutdown=rc.handle_broker_in_controlled_shutdown,
                last_committed_offset=ctx.raft.high_watermark - 1)
        except Exception as e:   # StaleBrokerEpochException
            return _fail(op, e)
        last = self.write(ctx, records, op, reply, reason=_heartbeat_reason(broker, reply))
        if reply.in_controlled_shutdown and self.active:
            cc.heartbeat_manager.maybe_update_controlled_shutdown_offset(broker, last)
        self.reschedule_fence(ctx)
        self.maybe_schedule_periodic(ctx)
        return op

    @controller_event("alterPartition")
    def alter_partition(self, ctx, request: AlterPartitionRequest,
                        future: ControllerFuture | None = None) -> ControllerFuture:
        """alterPartition -> ReplicationControlManager.alterPartition: the future's value is
        the AlterPartitionResponse (top-level STALE_BROKER_EPOCH, or one result per
        partition)."""
        op = future or ControllerFuture()
        if self._refuse_if_inactive(op):
            return op
        lrs = request.leader_recovery_states or (0,) * len(request.partitions)
        items = [(*p, s) for p, s in zip(request.partitions, lrs, strict=True)]
        records, resp = self.replication_control.alter_partition(
            request.broker_id, request.broker_epoch, items)
        parts = tuple((r.topic, r.partition, r.error, r.leader, r.leader_epoch, tuple(r.isr),
                       r.partition_epoch) for r in resp.partitions)
        self.write(ctx, records, op,
                   AlterPartitionResponse(resp.error, parts, request.correlation_id),
                   reason=f"AlterPartition from broker {request.broker_id}")
        self.maybe_schedule_periodic(ctx)
        return op

    @controller_event("unregisterBroker")
    def unregister_broker(self, ctx, broker_id: int,
                          future: ControllerFuture | None = None) -> ControllerFuture:
        """unregisterBroker -> ReplicationControlManager.unregisterBroker: the broker leaves
        every ISR and ELR, then UnregisterBrokerRecord; BrokerIdNotRegisteredException for an
        unknown broker. The future's value is None."""
        op = future or ControllerFuture()
        if self._refuse_if_inactive(op):
            return op
        registration = self.cluster_control.broker_registrations.get(broker_id)
        if registration is None:
            return _fail(op, BrokerIdNotRegisteredException(
                f"Broker ID {broker_id} is not currently registered"))
        records = self.replication_control.handle_broker_unregistered(broker_id,
                                                                      registration.epoch)
        self.write(ctx, records, op, None, reason=f"broker {broker_id} unregistered")
        self.reschedule_fence(ctx)
        self.maybe_schedule_periodic(ctx)
        return op

    @controller_event("unregisterController")
    def unregister_controller(self, ctx, controller_id: int,
                              future: ControllerFuture | None = None) -> ControllerFuture:
        """unregisterController (KIP-1312, 4.4; QuorumController.java:2161@4.4 f86720838c) ->
        ClusterControlManager.unregisterController at the finalized metadata.version: one
        UnregisterControllerRecord. The active controller cannot unregister itself
        (InvalidRequestException); an unknown id fails with CONTROLLER_ID_NOT_REGISTERED, a
        metadata.version below 4.4-IV2 with UNSUPPORTED_VERSION, and so does every release
        before 4.4 (no such API). The future's value is None."""
        op = future or ControllerFuture()
        version = self.config.get("kafka_version", DEFAULT_VERSION)
        if not rules_for(version).controller.controller_unregistration:
            return _fail(op, UnsupportedVersionException(
                f"UnregisterController does not exist in Kafka {version} (KIP-1312, 4.4)"))
        if self._refuse_if_inactive(op):
            return op
        try:
            if controller_id == self.node_id:
                raise InvalidRequestException("Controller cannot unregister itself while it "
                                              "is active.")
            result = self.cluster_control.unregister_controller(
                controller_id, metadata_version=self.feature_control.metadata_version_or_throw())
        except ControllerApiException as e:
            return _fail(op, e)
        self.write(ctx, result.records, op, None,
                   reason=f"controller {controller_id} unregistered")
        return op

    @controller_event("createTopics")
    def create_topics(self, ctx, topics: Iterable[CreatableTopic], *,
                      validate_only: bool = False,
                      future: ControllerFuture | None = None) -> ControllerFuture:
        """createTopics -> ReplicationControlManager.createTopics: every topic's records in one
        batch; the future's value maps each name to its CreateTopicResult (an empty request
        completes at once). More than 10,000 partitions in the request fail the whole
        operation with POLICY_VIOLATION (validateTotalNumberOfPartitions, KAFKA-17870)."""
        op = future or ControllerFuture()
        if self._refuse_if_inactive(op):
            return op
        try:
            records, results = self.replication_control.create_topics(
                topics, validate_only=validate_only)
        except ControllerApiException as e:
            return _fail(op, e)
        self.write(ctx, records, op, results, reason="topic created")
        self.maybe_schedule_periodic(ctx)
        return op

    @controller_event("createPartitions")
    def create_partitions(self, ctx, topics: Iterable,
                          future: ControllerFuture | None = None) -> ControllerFuture:
        """createPartitions -> ReplicationControlManager.createPartitions: the records of every
        topic in one batch; the future's value is the CreatePartitionsTopicResult list."""
        op = future or ControllerFuture()
        if self._refuse_if_inactive(op):
            return op
        records, results = self.replication_control.create_partitions(topics)
        self.write(ctx, records, op, results, reason="partitions created")
        return op

    @controller_event("incrementalAlterConfigs")
    def incremental_alter_configs(self, ctx, config_changes: dict, validate_only: bool,
                                  future: ControllerFuture | None = None) -> ControllerFuture:
        """incrementalAlterConfigs -> ConfigurationControlManager.incrementalAlterConfigs:
        the future's value maps each ConfigResource to its ApiError; ``validate_only`` writes
        nothing. With ELR on, a min.insync.replicas change clears the ELRs it concerns."""
        op = future or ControllerFuture()
        if self._refuse_if_inactive(op):
            return op
        configs = self.configuration_control
        configs.existence_checker = ConfigResourceExistenceChecker(
            self.cluster_control, self.replication_control, ctx.raft.voters)
        records, results = configs.incremental_alter_configs(config_changes, False)
        self.write(ctx, [] if validate_only else records, op, results,
                   reason="incrementalAlterConfigs")
        self.maybe_schedule_periodic(ctx)
        return op

    @controller_event("updateFeatures")
    def update_features(self, ctx, updates: dict, upgrade_types: dict | None = None,
                        validate_only: bool = False,
                        future: ControllerFuture | None = None) -> ControllerFuture:
        """updateFeatures -> ConfigurationControlManager.updateFeatures ->
        FeatureControlManager.updateFeatures: the future's value is the ApiError (3.9: a dict
        feature -> ApiError). From 4.0 (KAFKA-16540) raising eligible.leader.replicas.version
        above 0 first writes the ELR safety records (a cluster-level min.insync.replicas,
        broker-level ones removed), in the same atomic batch."""
        op = future or ControllerFuture()
        if self._refuse_if_inactive(op):
            return op
        configs = self.configuration_control
        configs.feature_control = self.feature_control
        if self.feature_control.rules.feature_update_fails_as_a_whole:
            result = configs.update_features(updates, upgrade_types, validate_only, self.epoch)
        else:   # 3.9: no ELR, straight to the FeatureControlManager
            result = self.feature_control.update_features(updates, upgrade_types,
                                                          validate_only, self.epoch)
        self.write(ctx, result.records, op, result.response, reason="updateFeatures")
        self.maybe_schedule_next_write_no_op_record(ctx)
        return op

    @controller_event("describeConfigs")
    def describe_configs(self, ctx, resources: dict) -> ControllerFuture:
        """describeConfigs: each resource's configs as of the last committed offset (a read
        event; what is written but not committed yet does not show)."""
        op = ControllerFuture()
        if self._refuse_if_inactive(op):
            return op
        committed = ConfigurationControlManager()
        entries = ctx.raft.log.entries_between(0, self.last_committed + 1)
        for _offset, _epoch, record in published_entries(entries):
            if type(record) is R.ConfigRecord:
                committed.replay(record)
        op.complete(committed.describe_configs(resources))
        return op

    # -- periodic tasks -----------------------------------------------------------------------
    def reschedule_fence(self, ctx) -> None:
        """rescheduleMaybeFenceStaleBrokers: one deferred event at the next session deadline,
        replacing the one scheduled before (the event queue's deferred events are keyed by
        name). A session is still valid at exactly last contact + broker.session.timeout.ms
        (BrokerHeartbeatManager.hasValidSession), so in whole milliseconds the check runs one
        millisecond after that."""
        self.fence_token += 1
        if not self.active or self.config.get("periodic_tasks"):
            return   # renounced (a write found the Raft leadership gone), or 4.0+'s task
        nxt = self.cluster_control.heartbeat_manager.next_check_time_ms()
        if nxt is None or nxt >= LONG_MAX_VALUE:   # cancelMaybeFenceReplicas: no unfenced broker
            return
        delay = 1 if nxt == ctx.now else max(0, nxt - ctx.now)
        ctx.schedule(delay, "maybe_fence_replicas", self.epoch, self.fence_token)

    def maybe_schedule_periodic(self, ctx) -> None:
        """3.9 and earlier: schedule the rebalance / unclean-election events when needed (4.0+
        runs them as periodic tasks)."""
        if not self.active or self.config.get("periodic_tasks"):
            return
        rc = self.replication_control
        cfg = self.config
        if "balance" not in self.scheduled and cfg["auto.leader.rebalance.enable"] and \
                rc.preferred_replica_imbalance_count() > 0:
            self.scheduled.add("balance")
            ctx.schedule(cfg["leader.imbalance.check.interval.seconds"] * 1000,
                         "maybe_balance_partition_leaders", self.epoch)
        if "unclean" not in self.scheduled and "unclean.leader.election.interval.ms" in cfg \
                and rc.are_some_partitions_leaderless():
            # maybeScheduleNextElectUncleanLeaders exists since 3.9 (with its internal config)
            self.scheduled.add("unclean")
            ctx.schedule(cfg["unclean.leader.election.interval.ms"],
                         "maybe_elect_unclean_leaders", self.epoch)

    # -- periodic tasks, Kafka 4.0+ ----------------------------------------------------------
    def activate_periodic_tasks(self, ctx) -> None:
        """QuorumController's constructor registers the tasks; ``periodicControl.activate()``
        runs once the controller's activation records are applied (here: on claim)."""
        if self.periodic is None:
            self.deferred = PeriodicTaskControlManagerQueueAccessor(ctx, self)
            self.periodic = PeriodicTaskControlManager(self.deferred, self.deferred.now)
            for task in self.periodic_tasks(ctx):
                self.periodic.register_task(task)
        self.periodic.activate()

    def periodic_tasks(self, ctx) -> list[PeriodicTask]:
        """registerWriteNoOpRecord (when metadata.max.idle.interval.ms > 0: KafkaConfig
        .metadataMaxIdleIntervalNs is empty at 0), registerMaybeFenceStaleBroker,
        registerElectPreferred (when auto rebalance is on), registerElectUnclean,
        registerGeneratePeriodicPerformanceMessage (KAFKA-16446); not registerExpireDelegationTokens
        (no delegation tokens)."""
        cfg = self.config
        tasks = []
        if cfg["metadata.max.idle.interval.ms"] > 0:
            tasks.append(PeriodicTask("writeNoOpRecord", partial(self.write_no_op_task, ctx),
                                      cfg["metadata.max.idle.interval.ms"]))
        tasks.append(PeriodicTask(
            "maybeFenceStaleBroker", partial(self.fence_stale_broker_task, ctx),
            maybe_fence_stale_broker_period_ms(cfg["broker.session.timeout.ms"])))
        if cfg["auto.leader.rebalance.enable"]:
            tasks.append(PeriodicTask(
                "electPreferred", partial(self.elect_preferred_task, ctx),
                cfg["leader.imbalance.check.interval.seconds"] * 1000, verbose=True))
        tasks.append(PeriodicTask("electUnclean", partial(self.elect_unclean_task, ctx),
                                  cfg["unclean.leader.election.interval.ms"], verbose=True))
        # registerExpireDelegationTokens: not modelled (kafkasim has no delegation tokens)
        tasks.append(PeriodicTask(
            "generatePeriodicPerformanceMessage", self.generate_periodic_performance_message_task,
            self.performance_monitor.period_ns() // NS_PER_MS))
        return tasks

    # Each task writes its records itself (with the reason its trace rows give) and returns
    # Kafka's ControllerResult response: True when the task should run again soon.
    def write_no_op_task(self, ctx) -> ControllerResult:
        self.write(ctx, [R.NoOpRecord()])
        return ControllerResult([], False)

    def fence_stale_broker_task(self, ctx) -> ControllerResult:
        check = self.cluster_control.maybe_fence_stale_session(
            ctx.now, handle_broker_fenced=self.replication_control.handle_broker_fenced)
        if check.broker is not None:
            ctx.trace("broker_fenced", ev.BrokerSessionExpired(check.broker))
            self.write(ctx, check.records, reason=f"broker {check.broker} fenced "
                                                  "(session expired)")
        return ControllerResult([], check.again)

    def elect_preferred_task(self, ctx) -> ControllerResult:
        records, again = self.replication_control.maybe_balance_partition_leaders()
        self.write(ctx, records, reason="preferred (auto leader rebalance)")
        return ControllerResult([], again)

    def generate_periodic_performance_message_task(self) -> ControllerResult:
        """registerGeneratePeriodicPerformanceMessage's task: log the period's summary (kept by
        the monitor, no trace row) and start a new period; writes nothing."""
        self.performance_monitor.generate_periodic_performance_message()
        return ControllerResult([], False)

    def elect_unclean_task(self, ctx) -> ControllerResult:
        records, again = self.replication_control.maybe_elect_unclean_leaders(
            with_reschedule=True)
        self.write(ctx, records, reason="unclean (periodic retry for leaderless partitions)")
        return ControllerResult([], again)

    def on_timer(self, ctx, name: str, epoch: int, *args) -> None:
        if not self.active or epoch != self.epoch:
            return
        rc = self.replication_control
        if name == "periodic_task":
            self.deferred.run(*args)
        elif name == "write_no_op":
            self.scheduled.discard("no_op")
            if not self._no_op_record_supported():
                return   # cancelNextWriteNoOpRecord
            self.write(ctx, [R.NoOpRecord()])
            self.maybe_schedule_next_write_no_op_record(ctx)
        elif name == "maybe_fence_replicas":
            if args[0] != self.fence_token:
                return   # replaced by a later reschedule
            records, broker = self.cluster_control.maybe_fence_one_stale_broker(
                ctx.now, handle_broker_fenced=rc.handle_broker_fenced)
            if broker is not None:
                ctx.trace("broker_fenced", ev.BrokerSessionExpired(broker))
                self.write(ctx, records, reason=f"broker {broker} fenced (session expired)")
            self.reschedule_fence(ctx)
            self.maybe_schedule_periodic(ctx)
        elif name == "maybe_balance_partition_leaders":
            self.scheduled.discard("balance")
            records, again = rc.maybe_balance_partition_leaders()
            self.write(ctx, records, reason="preferred (auto leader rebalance)")
            if again and self.active:
                self.scheduled.add("balance")
                ctx.schedule(0, "maybe_balance_partition_leaders", epoch)
            else:
                self.maybe_schedule_periodic(ctx)
        elif name == "maybe_elect_unclean_leaders":
            self.scheduled.discard("unclean")
            self.write(ctx, rc.maybe_elect_unclean_leaders(),
                       reason="unclean (periodic retry for leaderless partitions)")
            self.maybe_schedule_periodic(ctx)


class SameSoftwareDescriber(ClusterFeatureSupportDescriber):
    """QuorumController's ClusterFeatureSupportDescriber when every node runs the controller's
    release: each registered broker (the controller's current ClusterControlManager) and each
    quorum voter supports the same ranges."""

    def __init__(self, controller: QuorumController, supported: dict, voters: tuple) -> None:
        super().__init__()
        self.controller = controller
        self.supported = supported
        self.voters = voters

    def broker_supported(self):
        brokers = sorted(self.controller.cluster_control.broker_registrations)
        return iter([(b, self.supported) for b in brokers])

    def controller_supported(self):
        return iter([(c, self.supported) for c in self.voters])


class ControllerWriteEvent:
    """What waits in the purgatory for an operation (QuorumController.ControllerWriteEvent as a
    DeferredEvent): its future completes with ``result``, or fails with the exception."""

    __slots__ = ("future", "result")

    def __init__(self, future: ControllerFuture, result) -> None:
        self.future = future
        self.result = result

    def complete(self, exception: BaseException | None) -> None:
        if exception is None:
            self.future.complete(self.result)
        else:
            self.future.complete_exceptionally(exception)


class PeriodicTaskControlManagerQueueAccessor:
    """``QuorumController.PeriodicTaskControlManagerQueueAccessor``: the controller event
    queue's deferred events, as ``PeriodicTaskControlManager`` uses them: one pending event per
    tag -- scheduling a tag again replaces the earlier one, cancelling drops it -- carried by
    the node's "periodic_task" timer. (Kafka's ``DeferredEventQueue`` is the purgatory,
    ``kafkasim.control.kraft.deferred_event_queue``.)"""

    def __init__(self, ctx, controller: QuorumController) -> None:
        self.ctx = ctx
        self.controller = controller
        self.tokens: dict[str, int] = {}   # tag -> the live event's token
        self.ops: dict = {}                # tag -> its operation

    def schedule_deferred(self, tag: str, deadline_ms: int, op) -> None:
        token = self.tokens.get(tag, 0) + 1
        self.tokens[tag] = token
        self.ops[tag] = op
        self.ctx.schedule(max(0, deadline_ms - self.ctx.now), "periodic_task",
                          self.controller.epoch, tag, token)

    def now(self) -> int:
        return self.ctx.now

    def cancel_deferred(self, tag: str) -> None:
        self.tokens[tag] = self.tokens.get(tag, 0) + 1
        self.ops.pop(tag, None)

    def run(self, tag: str, token: int) -> None:
        """The timer of ``tag``'s event fired: run it unless replaced or cancelled since."""
        if self.tokens.get(tag) != token:
            return
        try:
            self.ops.pop(tag)()
        finally:   # the deferred event is a controller event named by its tag
            monitor = self.controller.performance_monitor
            if monitor is not None:
                monitor.observe_event(tag, 0)


def _trace_partition_change(ctx, topic: str, record, old, new, reason: str) -> None:
    """One ``controller`` trace row per partition change: a LeaderElection when the leader
    changed (unclean when the record sets RECOVERING, KIP-704), else the new ISR / ELR."""
    if new is None:
        return
    if type(record) is R.PartitionRecord:
        why = reason or "new partition"
    else:
        why = reason or "partition change"
    leader_changed = old is not None and (record.leader != R.NO_LEADER_CHANGE)
    if leader_changed and new.leader >= 0:
        unclean = record.leader_recovery_state == R.LeaderRecoveryState.RECOVERING
        detail = ev.LeaderElection(why, unclean, old.leader, new.leader, tuple(new.isr),
                                   new.leader_epoch)
    elif leader_changed:
        detail = ev.PartitionOffline(tuple(new.isr), new.leader_epoch)
    else:
        detail = ev.PartitionChangeRecorded(why, new.leader, new.leader_epoch, tuple(new.isr),
                                            tuple(new.elr), tuple(new.last_known_elr),
                                            new.partition_epoch)
    ctx.trace("controller", detail, topic, record.partition_id)


def _fail(future: ControllerFuture, exception: Exception) -> ControllerFuture:
    """Complete an operation with its ApiException (anything else is a bug: re-raised)."""
    if getattr(exception, "error", None) is None:
        raise exception
    future.complete_exceptionally(exception)
    return future


def _heartbeat_reason(broker_id: int, reply) -> str:
    """Why a heartbeat's records were written (the trace's reason)."""
    if reply.should_shut_down:
        return f"broker {broker_id} shut down"
    if reply.in_controlled_shutdown:
        return f"broker {broker_id} in controlled shutdown"
    return f"broker {broker_id} {'fenced' if reply.is_fenced else 'unfenced'}"
