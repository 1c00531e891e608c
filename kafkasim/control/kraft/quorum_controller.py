"""``QuorumController``: the KRaft controller that runs on each controller node.

One node's controller is *active*: the Raft leader of ``__cluster_metadata`` once the
LeaderChange record of its epoch is committed (QuorumController.QuorumMetaLogListener
``handleLeaderChange`` / ``claim``). It turns requests (BrokerRegistration, BrokerHeartbeat,
AlterPartition, CreateTopics, ElectLeaders) into metadata records, appends them to the log through
the Raft client, replays them at once, and answers only when the records are committed (the
deferred event queue, ``purgatory.completeUpTo``). Standby controllers replay committed records.
A controller that loses leadership (``renounce``) rebuilds its state from the committed records
and answers every pending request with NOT_CONTROLLER.

Periodic work of the active controller. Kafka 4.0+ (``config["periodic_tasks"]``): fixed-rate
tasks of a ``PeriodicTaskControlManager`` (``kafkasim.control.kraft.periodic_tasks``, KAFKA-17793),
activated when the controller claims leadership, each first run one period later:
``writeNoOpRecord`` every ``metadata.max.idle.interval.ms``, ``maybeFenceStaleBroker`` every
``max(1 ms, broker.session.timeout.ms / 8)`` (sessions in a BrokerHeartbeatTracker),
``electPreferred`` every ``leader.imbalance.check.interval.seconds`` (with auto rebalance on),
``electUnclean`` every ``unclean.leader.election.interval.ms``; a run that fenced a broker or
hit the election cap runs again 10 ms later. (``expireDelegationTokens`` is not modelled: no
delegation tokens.) Kafka 3.9 and earlier (QuorumController.java, 3.9 branch):
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

from collections import deque
from functools import partial

from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.broker_heartbeat import LONG_MAX_VALUE
from kafkasim.control.kraft.periodic_tasks import (
    ControllerResult,
    PeriodicTask,
    PeriodicTaskControlManager,
    maybe_fence_stale_broker_period_ms,
)
from kafkasim.control.kraft.raft import NotLeaderError
from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core.messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
)

_CLUSTER_RECORDS = (R.RegisterBrokerRecord, R.UnregisterBrokerRecord, R.FenceBrokerRecord,
                    R.UnfenceBrokerRecord, R.BrokerRegistrationChangeRecord)
_REPLICATION_RECORDS = (R.TopicRecord, R.PartitionRecord, R.PartitionChangeRecord,
                        R.RemoveTopicRecord, R.ConfigRecord, R.ClearElrRecord,
                        R.FeatureLevelRecord)


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
        # OffsetControlManager.lastStableOffset: the last committed offset this controller
        # learned (handleCommitBatch); renounce reverts to it
        self.last_committed = -1
        self.pending: deque = deque()     # (offset, dst, response) waiting for the HW
        self.scheduled: set[str] = set()  # periodic tasks scheduled in ``epoch``
        self.fence_token = 0              # the live maybeFenceReplicas deferred event
        self.periodic: PeriodicTaskControlManager | None = None   # 4.0+, built on first claim
        self.deferred: DeferredEventQueue | None = None
        self.cluster_control, self.replication_control = managers()

    # -- replay ---------------------------------------------------------------------------------
    def replay(self, record, offset: int, now_ms: int | None = None) -> None:
        """QuorumController.replay: each record goes to the manager that owns it."""
        if isinstance(record, _CLUSTER_RECORDS):
            self.cluster_control.replay(record, offset, now_ms)
        elif isinstance(record, _REPLICATION_RECORDS):
            self.replication_control.replay(record, offset)
        self.applied = offset

    def _rebuild(self, entries) -> None:
        """Forget everything and replay ``entries`` ((offset, epoch, record), in order): the
        SnapshotRegistry revert of ``renounce``, and the catch-up of ``claim``."""
        self.cluster_control, self.replication_control = self.make_managers()
        self.applied = -1
        for offset, _epoch, record in entries:
            self.replay(record, offset)

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
        # a standby replays what is committed
        log = raft.log
        for offset, _epoch, record in log.entries_between(self.applied + 1, hw):
            self.replay(record, offset)

    def claim(self, ctx, epoch: int) -> None:
        """QuorumMetaLogListener.handleLeaderChange -> claim: become the active controller once
        every record before this epoch's start is committed; write the bootstrap records the
        first time a quorum starts."""
        log = ctx.raft.log
        self._rebuild(log.entries_between(0, log.end_offset))   # all committed by now
        self.cluster_control.activate(ctx.now)
        self.active = True
        self.epoch = epoch
        self.scheduled = set()
        ctx.trace("controller_active", ev.ControllerActive(epoch))
        if not any(type(r) is R.FeatureLevelRecord
                   for _o, _e, r in log.entries_between(0, log.end_offset)):
            # the first active controller of a new cluster writes the bootstrap records
            # (BootstrapMetadata: metadata.version, then the features it enables)
            self.write(ctx, list(self.config["bootstrap_records"]))
        if self.config.get("periodic_tasks"):
            self.activate_periodic_tasks(ctx)
            return
        ctx.schedule(self.config["metadata.max.idle.interval.ms"], "write_no_op", epoch)
        self.reschedule_fence(ctx)
        self.maybe_schedule_periodic(ctx)

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
        while self.pending:
            _offset, dst, resp = self.pending.popleft()
            fail = _not_controller(resp)
            if fail is not None and dst is not None:
                ctx.send(dst, fail)
        ctx.trace("controller_renounce", ev.ControllerRenounce(hw))

    # -- writing ------------------------------------------------------------------------------
    def write(self, ctx, records, dst=None, response=None, reason: str = "") -> int:
        """Append ``records`` as one batch, replay them now and answer ``dst`` once they are
        committed (a request that writes nothing is answered once everything before it is)."""
        raft = ctx.raft
        if records:
            try:
                base = raft.append(ctx, list(records))
            except NotLeaderError:
                # the Raft leader resigned (check quorum, shutdown) under us: QuorumController
                # renounces on the NotLeaderException of a failed append
                self.renounce(ctx)
                if response is not None:
                    fail = _not_controller(response)
                    if fail is not None and dst is not None:
                        ctx.send(dst, fail)
                return -1
            rc = self.replication_control
            now = ctx.now
            for i, r in enumerate(records):
                t = type(r)
                if t is R.PartitionChangeRecord or t is R.PartitionRecord:
                    name = rc.topic_name(r.topic_id)
                    old = rc.partition(name, r.partition_id) if name is not None else None
                    self.replay(r, base + i, now)
                    name = rc.topic_name(r.topic_id)
                    _trace_partition_change(ctx, name, r, old, rc.partition(name, r.partition_id),
                                            reason)
                else:
                    self.replay(r, base + i, now)
            last = base + len(records) - 1
        else:
            last = raft.next_write_offset() - 1
        if response is not None:
            if last < raft.high_watermark:
                ctx.send(dst, response)
            else:
                self.pending.append((last, dst, response))
        return last

    def _complete_up_to(self, ctx, hw: int) -> None:
        while self.pending and self.pending[0][0] < hw:
            _offset, dst, resp = self.pending.popleft()
            if dst is not None:
                ctx.send(dst, resp)

    # -- requests -----------------------------------------------------------------------------
    def handle(self, ctx, src, msg) -> None:
        if not self.active:
            fail = _not_controller(msg)
            if fail is not None:
                ctx.send(src, fail)
            return
        if isinstance(msg, BrokerHeartbeatRequest):
            self._broker_heartbeat(ctx, src, msg)
        elif isinstance(msg, BrokerRegistrationRequest):
            self._register_broker(ctx, src, msg)
        elif isinstance(msg, AlterPartitionRequest):
            self._alter_partition(ctx, src, msg)

    def _register_broker(self, ctx, src, msg: BrokerRegistrationRequest) -> None:
        """QuorumController.registerBroker -> ClusterControlManager.registerBroker; the broker
        epoch is the offset of the batch's first record (offsetControl.nextWriteOffset). A
        registration the version's rules judge unclean (KIP-966) first takes the broker out of
        every ISR and ELR (BrokerUncleanShutdownHandler)."""
        cc = self.cluster_control
        try:
            records, reply = cc.register_broker(
                msg.broker_id, msg.incarnation_id, msg.rack, msg.previous_broker_epoch,
                ctx.raft.next_write_offset(), ctx.now)
        except Exception as e:   # DuplicateBrokerRegistrationException, ...
            err = getattr(e, "error", None)
            if err is None:
                raise
            ctx.send(src, BrokerRegistrationResponse(err, -1, msg.correlation_id, str(e)))
            return
        why = f"broker {msg.broker_id} registered" + \
            (" after an unclean shutdown" if reply.unclean_shutdown else "")
        self.write(ctx, records, src,
                   BrokerRegistrationResponse(E.NONE, reply.epoch, msg.correlation_id),
                   reason=why)
        self.reschedule_fence(ctx)

    def _broker_heartbeat(self, ctx, src, msg: BrokerHeartbeatRequest) -> None:
        """QuorumController.processBrokerHeartbeat -> ReplicationControlManager
        .processBrokerHeartbeat: the BrokerHeartbeatManager decides the next state; its
        transition's records go out in one batch with the answer. From 4.0 the contact is
        first recorded in the session tracker (``trackBrokerHeartbeat``), whatever follows."""
        cc = self.cluster_control
        rc = self.replication_control
        cc.track_broker_heartbeat(msg.broker_id, msg.broker_epoch, ctx.now)
        try:
            records, reply = cc.process_broker_heartbeat(
                msg.broker_id, msg.broker_epoch, msg.current_metadata_offset,
                want_fence=msg.want_fence, want_shut_down=msg.want_shut_down, now_ms=ctx.now,
                has_leaderships=lambda: rc.brokers_to_isrs.has_leaderships(msg.broker_id),
                handle_broker_fenced=rc.handle_broker_fenced,
                handle_broker_unfenced=rc.handle_broker_unfenced,
                handle_broker_in_controlled_shutdown=rc.handle_broker_in_controlled_shutdown,
                last_committed_offset=ctx.raft.high_watermark - 1)
        except Exception as e:   # StaleBrokerEpochException
            err = getattr(e, "error", None)
            if err is None:
                raise
            ctx.send(src, BrokerHeartbeatResponse(err, False, True, False, msg.correlation_id))
            return
        if reply.should_shut_down:
            why = f"broker {msg.broker_id} shut down"
        elif reply.in_controlled_shutdown:
            why = f"broker {msg.broker_id} in controlled shutdown"
        else:
            why = f"broker {msg.broker_id} {'fenced' if reply.is_fenced else 'unfenced'}"
        last = self.write(ctx, records, src, BrokerHeartbeatResponse(
            E.NONE, reply.is_caught_up, reply.is_fenced, reply.should_shut_down,
            msg.correlation_id), reason=why)
        if reply.in_controlled_shutdown and self.active:
            cc.heartbeat_manager.maybe_update_controlled_shutdown_offset(msg.broker_id, last)
        self.reschedule_fence(ctx)
        self.maybe_schedule_periodic(ctx)

    def _alter_partition(self, ctx, src, msg: AlterPartitionRequest) -> None:
        lrs = msg.leader_recovery_states or (0,) * len(msg.partitions)
        items = [(*p, s) for p, s in zip(msg.partitions, lrs, strict=True)]
        records, resp = self.replication_control.alter_partition(
            msg.broker_id, msg.broker_epoch, items)
        parts = tuple((r.topic, r.partition, r.error, r.leader, r.leader_epoch, tuple(r.isr),
                       r.partition_epoch) for r in resp.partitions)
        self.write(ctx, records, src, AlterPartitionResponse(resp.error, parts,
                                                            msg.correlation_id),
                   reason=f"AlterPartition from broker {msg.broker_id}")
        self.maybe_schedule_periodic(ctx)

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
            self.deferred = DeferredEventQueue(ctx, self)
            self.periodic = PeriodicTaskControlManager(self.deferred, self.deferred.now)
            for task in self.periodic_tasks(ctx):
                self.periodic.register_task(task)
        self.periodic.activate()

    def periodic_tasks(self, ctx) -> list[PeriodicTask]:
        """registerWriteNoOpRecord, registerMaybeFenceStaleBroker, registerElectPreferred (when
        auto rebalance is on), registerElectUnclean."""
        cfg = self.config
        tasks = [
            PeriodicTask("writeNoOpRecord", partial(self.write_no_op_task, ctx),
                         cfg["metadata.max.idle.interval.ms"]),
            PeriodicTask("maybeFenceStaleBroker", partial(self.fence_stale_broker_task, ctx),
                         maybe_fence_stale_broker_period_ms(cfg["broker.session.timeout.ms"]))]
        if cfg["auto.leader.rebalance.enable"]:
            tasks.append(PeriodicTask(
                "electPreferred", partial(self.elect_preferred_task, ctx),
                cfg["leader.imbalance.check.interval.seconds"] * 1000, verbose=True))
        tasks.append(PeriodicTask("electUnclean", partial(self.elect_unclean_task, ctx),
                                  cfg["unclean.leader.election.interval.ms"], verbose=True))
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
            self.write(ctx, [R.NoOpRecord()])
            if self.active:
                ctx.schedule(self.config["metadata.max.idle.interval.ms"], "write_no_op", epoch)
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


class DeferredEventQueue:
    """The controller event queue's deferred events, as ``PeriodicTaskControlManager`` uses them
    (its QueueAccessor): one pending event per tag -- scheduling a tag again replaces the
    earlier one, cancelling drops it -- carried by the node's "periodic_task" timer."""

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
        self.ops.pop(tag)()


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


def _not_controller(msg):
    """The NOT_CONTROLLER answer to a request, or to the answer it was waiting for."""
    if isinstance(msg, (BrokerHeartbeatRequest, BrokerHeartbeatResponse)):
        return BrokerHeartbeatResponse(E.NOT_CONTROLLER, False, True, False, msg.correlation_id)
    if isinstance(msg, (BrokerRegistrationRequest, BrokerRegistrationResponse)):
        return BrokerRegistrationResponse(E.NOT_CONTROLLER, -1, msg.correlation_id)
    if isinstance(msg, (AlterPartitionRequest, AlterPartitionResponse)):
        return AlterPartitionResponse(E.NOT_CONTROLLER, (), msg.correlation_id)
    return None
