"""How a leader's ISR change reaches the controller: ``AlterPartitionManager`` (KIP-497, 2.7+)
and, before 2.7, the leader's own ZooKeeper write with ``IsrChangePropagation``.

kafka.server.DefaultAlterPartitionManager keeps one queued item per partition
(``unsentIsrUpdates``), sends them in one AlterPartition request when none is in flight
(``sendRequest``) through the broker's controller channel, and completes each item with the
controller's answer (``handleAlterPartitionResponse``), which Partition's callbacks apply
(``handleAlterPartitionError`` / ``handleAlterPartitionUpdate``). Before 2.7 the leader wrote
the partition state znode itself (Partition.updateIsr) and ReplicaManager
.maybePropagateIsrChanges told the controller through /isr_change_notification.

The manager talks to its broker through ``ctx`` (``kafkasim.core.interfaces
.AlterPartitionContext``); its timers are the module's ``_timer_...`` functions, called as
``fn(ctx, *args)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core.messages import AlterPartitionRequest, AlterPartitionResponse
from kafkasim.core.partition import (
    Partition,
    PendingIsrChange,
    apply_isr_update,
    prepare_isr_change,
)

if TYPE_CHECKING:   # types only: no import of the context at run time
    from kafkasim.core.interfaces import AlterPartitionContext

# Partition.handleAlterPartitionError: errors that leave the change pending until new metadata
ALTER_PARTITION_AWAIT_METADATA = frozenset({
    E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_ID, E.FENCED_LEADER_EPOCH,
    E.INVALID_UPDATE_VERSION, E.INVALID_REQUEST, E.NEW_LEADER_ELECTED})

#: NodeToControllerChannelManagerImpl's NetworkClient: reconnect.backoff.ms and its max are both
#: 50 ms for the broker-to-controller channels; doWork polls every 100 ms with no controller.
CONTROLLER_CHANNEL_RECONNECT_BACKOFF_MS = 50
CONTROLLER_CHANNEL_POLL_MS = 100
#: 2.7's "send-alter-isr" task period, and the retry after a top-level error
ALTER_ISR_TICK_MS = 50
#: ReplicaManager.maybePropagateIsrChanges (before 2.7): run every 2500 ms; propagate when no
#: change came for 5 s or the last propagation is 60 s old
ISR_CHANGE_PROPAGATION_INTERVAL_MS = 2500
ISR_CHANGE_PROPAGATION_BLACKOUT_MS = 5000
ISR_CHANGE_PROPAGATION_MAX_MS = 60000


class AlterPartitionManager:
    """kafka.server.DefaultAlterPartitionManager, with its broker-to-controller channel
    (NodeToControllerRequestThread) reduced to what AlterPartition needs."""

    __slots__ = ("unsent", "inflight", "corr", "started_ms", "sent_to", "cached")

    def __init__(self) -> None:
        #: unsentIsrUpdates: tp -> the PendingIsrChange queued (or in flight) for it
        self.unsent: dict[tuple[str, int], PendingIsrChange] = {}
        #: inflightRequest: the (tp, PendingIsrChange) items of the request in flight
        self.inflight: tuple | None = None
        #: the controller channel's own correlation id of the request in flight
        self.corr = -1
        #: when the broker process started (2.7's "send-alter-isr" task runs every 50 ms from it)
        self.started_ms = 0
        #: the controller the request in flight went to (-1: none on the wire)
        self.sent_to = -1
        #: the channel's cached controller (NodeToControllerRequestThread.activeController):
        #: every request goes there until a disconnect or NOT_CONTROLLER clears it (-1: none)
        self.cached = -1

    def clear(self) -> None:
        """The broker process stopped: the queue and the request in flight are gone."""
        self.unsent = {}
        self.inflight = None
        self.cached = -1

    def clear_pending(self, tp) -> None:
        """alterIsrManager.clearPending (2.7-2.8, on a LeaderAndIsr)."""
        self.unsent.pop(tp, None)

    def submit(self, ctx: AlterPartitionContext, part: Partition,
               pending: PendingIsrChange) -> None:
        """AlterPartitionManager.submit: queue the item unless the partition already has one
        queued or in flight (unsentIsrUpdates.putIfAbsent). A refused item completes at once
        with OPERATION_NOT_ATTEMPTED (3.1+, KAFKA-13254; 2.7-3.0 reverted the state in
        sendAlterIsrRequest, to the same effect: the change dropped, the failure counted)."""
        if part.tp in self.unsent:
            handle_alter_partition_error(ctx, part, pending, E.OPERATION_NOT_ATTEMPTED)
            return
        self.unsent[part.tp] = pending
        if ctx.rules.alter_partition.alter_isr_sent_on_submit:
            self.maybe_propagate_isr_changes(ctx)
        else:
            # 2.7: the "send-alter-isr" task runs every 50 ms from the broker's start
            ctx.schedule_timer(_next_alter_isr_tick(ctx), _timer_send_alter_partition)

    def maybe_propagate_isr_changes(self, ctx: AlterPartitionContext) -> None:
        """Send every queued item in one AlterPartition if none is in flight."""
        if not self.unsent or self.inflight is not None:
            return
        self.inflight = tuple(self.unsent.items())
        self.send_request(ctx)

    def send_request(self, ctx: AlterPartitionContext) -> None:
        """The controller channel sends the in-flight request (again after a timeout or a
        NOT_CONTROLLER answer; it never gives up: AlterPartition has no retry timeout) to the
        controller it has cached: NodeToControllerRequestThread.generateRequests sends every
        request, a new one too, to ``activeController``, which only a disconnect or a
        NOT_CONTROLLER answer clears (``handleResponse``); with none cached, ``doWork``
        records the one the controller node provider names now (the metadata cache's
        controller in ZooKeeper mode, the raft client's leader in KRaft)."""
        self.corr = corr = self.corr + 1   # the controller channel's own numbering
        controller = self.cached
        if controller < 0:
            controller = ctx.metadata.controller_id
        if controller < 0:
            # doWork with no controller known: it polls again every 100 ms
            self.sent_to = -1
            ctx.schedule_timer(CONTROLLER_CHANNEL_POLL_MS, _timer_alter_partition_requeued, corr)
            return
        self.cached = controller
        self.sent_to = controller
        inflight = self.inflight
        # AlterPartition v3 (3.5+, KIP-903) sends NewIsrWithEpochs, (id, broker epoch) pairs,
        # where v0-2 sent NewIsr, the ids
        ctx.send(controller, AlterPartitionRequest(
            ctx.id, ctx.broker_epoch,
            tuple((tp[0], tp[1], p.leader_epoch, p.isr_with_broker_epoch or p.proposed_isr,
                   p.partition_epoch) for tp, p in inflight), corr,
            # LeaderRecoveryState (KIP-704): the leader always reports RECOVERED, as
            # Partition.makeLeader marked it; set in KRaft, and in ZooKeeper mode since 3.2
            # (AlterPartitionManager.buildRequest: isLeaderRecoverySupported)
            (0,) * len(inflight) if ctx.lifecycle is not None
            or ctx.rules.elections.zk_leader_recovery_state else ()))
        ctx.schedule_timer(ctx.config["controller.socket.timeout.ms"],
                           _timer_alter_partition_retry, corr, controller)

    def requeue(self, ctx: AlterPartitionContext, failed: int) -> None:
        """The channel's answer to NOT_CONTROLLER or a request timeout
        (NodeToControllerRequestThread.handleResponse, 3.0 ... trunk): it disconnects from
        ``failed``, forgets it and puts the request first in its queue; the next ``doWork``
        takes the controller the broker knows now (the metadata cache's in ZooKeeper mode, the
        Raft client's leader in KRaft) and sends it there at once (``send_request``, which polls
        every 100 ms while none is known). If that is still ``failed``, the NetworkClient
        reconnects only after its reconnect backoff (50 ms, fixed for this channel). Before,
        kafkasim waited for controller.socket.timeout.ms (30 s)."""
        self.cached = -1
        if ctx.metadata.controller_id != failed:
            self.send_request(ctx)
            return
        self.corr += 1   # the request is no longer in flight: a late answer is void
        ctx.schedule_timer(CONTROLLER_CHANNEL_RECONNECT_BACKOFF_MS,
                           _timer_alter_partition_requeued, self.corr)

    def on_controller_disconnect(self, ctx: AlterPartitionContext, dead: int) -> None:
        """The connection to ``dead`` broke (its process is gone) with the request in flight
        to it: NodeToControllerRequestThread.handleResponse (``wasDisconnected``) forgets the
        controller and puts the same request first in its queue (``requeue``). The same in
        ZooKeeper mode, 2.7 ... 3.9 (BrokerToControllerRequestThread.handleResponse @2.7.0:
        ``wasDisconnected`` -> ``activeController = None``, ``requestQueue.putFirst``):
        before, kafkasim let a ZooKeeper broker wait controller.socket.timeout.ms (30 s).
        A change of active controller alone does nothing to the request in flight: doWork
        polls the channel's cached controller until an answer (NOT_CONTROLLER from a
        controller that resigned), a disconnect or the request timeout."""
        if self.inflight is not None and self.sent_to == dead:
            self.requeue(ctx, dead)

    def handle_alter_partition_response(self, ctx: AlterPartitionContext, src,
                                        msg: AlterPartitionResponse) -> None:
        """DefaultAlterPartitionManager.handleAlterPartitionResponse, then each partition's
        Partition.submitAlterPartition callback."""
        if self.inflight is None or msg.correlation_id != self.corr:
            return  # an answer to a request the channel already gave up on
        if msg.error == E.NOT_CONTROLLER or any(r[2] == E.NOT_CONTROLLER for r in msg.partitions):
            # NodeToControllerRequestThread.handleResponse: NOT_CONTROLLER anywhere in the answer
            # puts the same request back at the head of the channel's queue (putFirst)
            ctx.trace("isr_update_failed", detail=ev.IsrUpdateFailed(E.NOT_CONTROLLER))
            self.requeue(ctx, src)
            return
        if msg.error != E.NONE:
            # STALE_BROKER_EPOCH, ...: the items stay queued; resent 50 ms later
            self.inflight = None   # clearInFlightRequest
            ctx.trace("isr_update_failed", detail=ev.IsrUpdateFailed(msg.error))
            ctx.schedule_timer(ALTER_ISR_TICK_MS, _timer_send_alter_partition)
            return
        self._complete_items(ctx, msg)
        self.inflight = None   # clearInFlightRequest (after the callbacks, as in Kafka)
        if ctx.rules.alter_partition.alter_isr_sent_on_submit:
            self.maybe_propagate_isr_changes(ctx)
        elif self.unsent:
            ctx.schedule_timer(_next_alter_isr_tick(ctx), _timer_send_alter_partition)

    def _complete_items(self, ctx: AlterPartitionContext, msg: AlterPartitionResponse) -> None:
        """Each in-flight item's partition result goes to its Partition's callback."""
        results = {(t, p): r for t, p, *r in msg.partitions}
        for tp, pending in self.inflight:
            r = results.get(tp)
            if r is None:
                continue   # not in the answer: stays queued, sent again
            if self.unsent.get(tp) is pending or \
                    ctx.rules.alter_partition.alter_isr_clear_pending_on_leader_and_isr:
                # 2.7-2.8 removed the partition's entry whatever it held by then
                self.unsent.pop(tp, None)
            part = ctx.replica_manager.partitions.get(tp)
            if part is None or part.pending is not pending:
                continue   # the state changed meanwhile (LeaderAndIsr): the answer is stale
            err, _leader, leader_epoch, isr, partition_epoch = r
            if err != E.NONE:
                handle_alter_partition_error(ctx, part, pending, err)
            else:
                handle_alter_partition_update(ctx, part, pending, leader_epoch, isr,
                                              partition_epoch)


class IsrChangePropagation:
    """Before 2.7: the ISR changes this leader wrote to ZooKeeper and not yet announced through
    /isr_change_notification (ReplicaManager.isrChangeSet, lastIsrChangeMs,
    lastIsrPropagationMs)."""

    __slots__ = ("change_set", "last_change_ms", "last_propagation_ms")

    def __init__(self) -> None:
        self.change_set: list[tuple[str, int]] = []
        self.last_change_ms = 0
        self.last_propagation_ms = 0

    def record_isr_change(self, tp, now: int) -> None:
        """ReplicaManager.recordIsrChange."""
        self.change_set.append(tp)
        self.last_change_ms = now

    def maybe_propagate_isr_changes(self, ctx: AlterPartitionContext) -> None:
        """ReplicaManager.maybePropagateIsrChanges: announce the changes once none came for 5 s
        or the last announcement is 60 s old."""
        now = ctx.now
        if self.change_set and (now - self.last_change_ms > ISR_CHANGE_PROPAGATION_BLACKOUT_MS
                                or now - self.last_propagation_ms
                                > ISR_CHANGE_PROPAGATION_MAX_MS):
            tps = list(self.change_set)
            self.change_set = []
            self.last_propagation_ms = now
            ctx.trace("isr_change_notification", detail=ev.IsrChangeNotification(tuple(tps)))
            ctx.zk_lifecycle.propagate_isr_changes(ctx, tps)


# -- an ISR change, from the leader's proposal to its commit -----------------------------------
def propose_isr(ctx: AlterPartitionContext, part: Partition, kind: str, replicas: tuple,
                new_isr: tuple) -> None:
    """Partition.prepareIsrExpand / prepareIsrShrink, then submitAlterPartition (2.7+); before
    2.7 Partition.updateIsr writes the partition state znode itself."""
    if ctx.rules.alter_partition.alter_isr:
        pending = prepare_isr_change(part, kind, replicas, new_isr, ctx.now,
                                     part.add_broker_epoch_to_isr(ctx, new_isr))
        part.pending = pending
        ctx.trace("isr_proposed", part.topic, part.partition,
                  ev.IsrProposed(kind, tuple(replicas), tuple(part.isr), tuple(new_isr)))
        ctx.alter_partition_manager.submit(ctx, part, pending)
        return
    update_isr_in_zookeeper(ctx, part, kind, new_isr)


def update_isr_in_zookeeper(ctx: AlterPartitionContext, part: Partition, kind: str,
                            new_isr: tuple) -> None:
    """Partition.updateIsr before 2.7: a conditional write of the partition state znode (its
    zkVersion is the partition epoch), then ReplicaManager.recordIsrChange."""
    version = ctx.zk_lifecycle.conditional_update_isr(ctx, part, new_isr)
    if version < 0:
        ctx.mark_meter("FailedIsrUpdatesPerSec")
        if ctx.rules.metrics.isr_meters_count_failed_writes:   # until 2.3: marked regardless
            ctx.mark_meter("IsrShrinksPerSec" if kind == "shrink" else "IsrExpandsPerSec")
        ctx.trace("isr_update_failed", part.topic, part.partition,
                  ev.IsrUpdateFailed("cached zkVersion differs from ZooKeeper's"))
        return
    isr_committed(ctx, part, kind, new_isr, version)
    ctx.zk_lifecycle.isr_change_propagation.record_isr_change(part.tp, ctx.now)


def handle_alter_partition_error(ctx: AlterPartitionContext, part: Partition,
                                 pending: PendingIsrChange, err: str) -> None:
    """Partition.handleAlterPartitionError (3.7): OPERATION_NOT_ATTEMPTED and
    INELIGIBLE_REPLICA fall back to the committed ISR; the errors Kafka knows
    (UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, ...) keep the
    change pending until a LeaderAndIsr replaces it; any other error submits it again."""
    ctx.mark_meter("FailedIsrUpdatesPerSec")   # alterPartitionListener.markFailed
    if err in (E.OPERATION_NOT_ATTEMPTED, E.INELIGIBLE_REPLICA):
        part.pending = None
        outcome = f"ISR stays {list(part.isr)}"
    elif err in ALTER_PARTITION_AWAIT_METADATA:
        outcome = "pending until new metadata"
    else:
        outcome = "retrying"
    ctx.trace("isr_update_failed", part.topic, part.partition,
              ev.AlterPartitionFailed(err, outcome))
    if outcome == "retrying":
        ctx.alter_partition_manager.submit(ctx, part, pending)


def handle_alter_partition_update(ctx: AlterPartitionContext, part: Partition,
                                  pending: PendingIsrChange, leader_epoch: int, isr: tuple,
                                  partition_epoch: int) -> None:
    """Partition.handleAlterPartitionUpdate: an answer for another leader epoch or an older
    partition epoch (2.7-2.8: not a newer one) is ignored and the change stays pending."""
    equal_ok = ctx.rules.alter_partition.alter_partition_accepts_equal_partition_epoch
    if leader_epoch != part.leader_epoch or partition_epoch < part.partition_epoch or \
            (partition_epoch == part.partition_epoch and not equal_ok):
        ctx.mark_meter("FailedIsrUpdatesPerSec")
        ctx.trace("isr_update_failed", part.topic, part.partition,
                  ev.AlterPartitionAnswerIgnored(leader_epoch, partition_epoch,
                                                 part.leader_epoch, part.partition_epoch))
        return
    isr_committed(ctx, part, pending.kind, isr, partition_epoch)


def isr_committed(ctx: AlterPartitionContext, part: Partition, kind: str, isr: tuple,
                  version: int) -> None:
    """The new ISR is committed: the partition takes it (and its HW may move), the broker marks
    IsrShrinksPerSec / IsrExpandsPerSec, waiting produces are looked at again."""
    old = part.isr
    moved = apply_isr_update(part, ctx, isr, version)
    ctx.mark_meter("IsrShrinksPerSec" if kind == "shrink" else "IsrExpandsPerSec")
    ctx.trace("isr", part.topic, part.partition, (tuple(old), tuple(isr)))
    if moved:
        ctx.replica_manager.on_hw_increased(ctx, part)
    else:
        # a shrink can let a waiting acks=all produce finish (or fail after append)
        ctx.replica_manager.try_complete_produces(ctx, part.tp)


# -- timers: fn(ctx, *args) through ctx.schedule_timer -----------------------------------------
def _next_alter_isr_tick(ctx: AlterPartitionContext) -> int:
    """Delay to the next run of 2.7's "send-alter-isr" task (every 50 ms from startup)."""
    started_ms = ctx.alter_partition_manager.started_ms
    return ALTER_ISR_TICK_MS - (ctx.now - started_ms) % ALTER_ISR_TICK_MS


def _timer_send_alter_partition(ctx: AlterPartitionContext) -> None:
    """The "send-alter-partition" task: 2.7's every-50-ms sender, or the retry 50 ms after a
    top-level error (DefaultAlterPartitionManager.sendRequest)."""
    ctx.alter_partition_manager.maybe_propagate_isr_changes(ctx)


def _timer_alter_partition_retry(ctx: AlterPartitionContext, corr: int, controller: int) -> None:
    """The controller channel got no answer within controller.socket.timeout.ms:
    NetworkClient fails the request as a disconnect and closes the connection, and the
    channel puts the same request first in its queue (NodeToControllerRequestThread
    .handleResponse, ``wasDisconnected``): sent again to the controller known now, to
    ``controller`` (the node that did not answer) only after the reconnect backoff."""
    manager = ctx.alter_partition_manager
    if manager.inflight is None or manager.corr != corr:
        return
    manager.requeue(ctx, controller)


def _timer_alter_partition_requeued(ctx: AlterPartitionContext, corr: int) -> None:
    """The channel's next try for a request waiting in its queue (after the reconnect
    backoff, or a 100 ms poll with no controller known)."""
    manager = ctx.alter_partition_manager
    if manager.inflight is None or manager.corr != corr:
        return
    manager.send_request(ctx)


def timer_isr_change_propagation(ctx: AlterPartitionContext) -> None:
    """Pre-2.7 ReplicaManager's "isr-change-propagation" task (every 2500 ms)."""
    ctx.zk_lifecycle.isr_change_propagation.maybe_propagate_isr_changes(ctx)
    ctx.schedule_timer(ISR_CHANGE_PROPAGATION_INTERVAL_MS, timer_isr_change_propagation)
