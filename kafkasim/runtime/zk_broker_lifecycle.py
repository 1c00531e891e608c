"""A ZooKeeper-mode broker's life with ZooKeeper and the controller: ``ZkBrokerLifecycle``.

The ZooKeeper-mode counterpart of KRaft's BrokerLifecycleManager
(kafkasim.runtime.broker_lifecycle):
KafkaServer's registration in ZooKeeper (KafkaZkClient.registerBroker: a session and the
ephemeral /brokers/ids/<id> znode), the session's pings (ZooKeeper's client heartbeat) with the
re-registration after the session expired, becoming and resigning controller (the broker that
won /controller hosts the KafkaController), the leader's own ISR writes before 2.7
(Partition.updateIsr, /isr_change_notification) and KafkaServer.controlledShutdown's retry
loop.

Methods take the broker as ``broker``; timers are the module's ``_timer_...`` functions, run
through ``Broker.schedule_timer`` as ``fn(broker, *args)``.
"""

from __future__ import annotations

import json
from typing import Any

from kafkasim.control.controller import KafkaController
from kafkasim.control.zookeeper import (
    BadVersion,
    NodeExists,
    partition_state_json,
    partition_state_path,
)
from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core.alter_partition_manager import IsrChangePropagation
from kafkasim.core.messages import (
    ControlledShutdownRequest,
    ControlledShutdownResponse,
    ZkPing,
    ZkPingResponse,
)

SHUTTING_DOWN = "shutting down"   # kafkasim.runtime.broker.SHUTTING_DOWN


class ZkBrokerLifecycle:
    """KafkaServer's ZooKeeper session, controller role and controlledShutdown, for one
    broker."""

    __slots__ = ("session_id", "isr_change_propagation", "attempts_left", "awaiting")

    def __init__(self) -> None:
        self.session_id = 0      # the broker's ZooKeeper session (0: none yet)
        self.isr_change_propagation = IsrChangePropagation()   # before 2.7
        self.attempts_left = 0   # controlled shutdown attempts still allowed
        self.awaiting = -1       # the attempt waiting for its answer (-1: none)

    # -- registration (KafkaZkClient.registerBroker) ----------------------------------------
    @staticmethod
    def session_timeout_ms(broker: Any) -> int:
        return broker.config["zookeeper.session.timeout.ms"]

    def register(self, broker: Any) -> bool:
        """Open a ZooKeeper session and register /brokers/ids/<id> (KafkaZkClient.registerBroker);
        True once registered. See ``create_broker_znode`` for a znode left by an older
        session."""
        zk = broker.cluster.zk
        self.session_id = zk.new_session(broker.id, self.session_timeout_ms(broker), broker.now)
        broker.cluster.zk_control_plane.watch_session(self.session_id)
        return self.create_broker_znode(broker)

    def create_broker_znode(self, broker: Any) -> bool:
        """KafkaZkClient.checkedEphemeralCreate (CheckedEphemeral.getAfterNodeExists): when the
        znode exists and another session owns it -- the session of this broker's previous,
        crashed process, alive until zookeeper.session.timeout.ms passes without a ping -- the
        registration fails with NodeExists (since 0.9.0; the caller stops the process). In 0.8.2
        the broker backed off a session timeout and retried. True once registered."""
        zk = broker.cluster.zk
        path = f"/brokers/ids/{broker.id}"
        node = zk.get(path)
        if node is not None and node.ephemeral_owner != self.session_id:
            owner = node.ephemeral_owner
            if not broker.rules.controller.broker_registration_fails_on_foreign_znode:
                broker.trace("broker_registration_backoff",
                             detail=ev.BrokerRegistrationBackoff(path, owner))
                broker.schedule_timer(self.session_timeout_ms(broker), _timer_register_retry,
                                      self.session_id)
                return False
            failure = ev.BrokerRegistrationFailed(path, owner, self.session_id)
            broker.trace("broker_registration_failed", detail=failure)
            raise NodeExists(failure.text)
        if node is not None:
            return True   # already registered by this session
        node = zk.create(path, json.dumps({"version": 5, "host": f"broker{broker.id}",
                                           "port": 9092, "rack": broker.rack},
                                          separators=(",", ":")),
                         ephemeral_owner=self.session_id)
        broker.broker_epoch = node.czxid
        broker.trace("broker_start", detail=ev.BrokerStart(broker.broker_epoch))
        return True

    def startup_failed(self, broker: Any) -> None:
        """KafkaServer.startup failed ("Fatal error during KafkaServer startup. Prepare to
        shutdown"): KafkaServer.shutdown closes the new ZooKeeper session and LogManager.shutdown
        flushes every log and checkpoints recovery points and log start offsets; the
        ReplicaManager hosts no partition yet, so replication-offset-checkpoint is not rewritten.
        Then the process exits (Kafka.main: Exit.exit(1))."""
        broker.log_manager.flush_after_failed_startup()
        broker.stop_process("startup failure")
        broker.cluster.zk_control_plane.close_session(self.session_id)
        broker.trace("broker_start_failed", detail=ev.BrokerStartFailed())

    def start_pinging(self, broker: Any) -> None:
        """The ZooKeeper client's heartbeat: a ping every third of the session timeout."""
        broker.schedule_timer(_zk_ping_interval(broker), _timer_zk_ping)

    def on_zk_ping_response(self, broker: Any, msg: ZkPingResponse) -> None:
        """The session expired (paused or cut off from ZooKeeper for too long): re-register."""
        if msg.alive or msg.session_id != self.session_id:
            return
        broker.trace("zk_session_expired",
                     detail=ev.ZkSessionExpired(msg.session_id, broker.id, "notified", -1))
        self.resign_controller(broker, "ZooKeeper session expired")
        try:
            registered = self.register(broker)
        except NodeExists:
            return   # logged by the controller's event thread; the process keeps running
        if registered:
            broker.cluster.zk_control_plane.on_broker_registered(broker)

    # -- the controller role ---------------------------------------------------------------
    @staticmethod
    def become_controller(broker: Any, controller_epoch: int) -> None:
        """The broker won the /controller election: KafkaController.onControllerFailover."""
        broker.controller = KafkaController(broker.id, controller_epoch)
        broker.trace("controller_elected", detail=ev.ControllerElected(controller_epoch))
        broker.controller.on_controller_failover(broker, broker.cluster.zk)

    @staticmethod
    def resign_controller(broker: Any, reason: str) -> None:
        """KafkaController.onControllerResignation (a no-op for a broker that is no controller,
        e.g. every KRaft broker)."""
        if broker.controller is not None:
            broker.controller.on_resignation()
            broker.controller = None
            broker.trace("controller_resigned", detail=ev.ControllerResigned(reason))

    # -- the leader's ISR writes before 2.7 --------------------------------------------------
    @staticmethod
    def conditional_update_isr(broker: Any, part: Any, new_isr: tuple) -> int:
        """Partition.updateIsr -> KafkaZkClient.conditionalUpdatePath: write the partition state
        znode with ``new_isr`` if its version is still the partition epoch; the new version, or
        -1 when the conditional write failed (BadVersion)."""
        try:
            return broker.cluster.zk.set(
                partition_state_path(part.topic, part.partition),
                partition_state_json(broker.id, part.leader_epoch, new_isr,
                                     part.controller_epoch),
                part.partition_epoch)
        except BadVersion:
            return -1

    @staticmethod
    def propagate_isr_changes(broker: Any, tps) -> None:
        """KafkaZkClient.propagateIsrChanges: an /isr_change_notification znode, which the
        controller's IsrChangeNotification handler reads."""
        broker.cluster.zk_control_plane.notify_isr_change(tps)

    # -- KafkaServer.controlledShutdown -----------------------------------------------------
    def begin_controlled_shutdown(self, broker: Any) -> None:
        """Ask the controller to move leadership away first. An attempt fails when the
        controller answers an error or still lists partitions this broker leads, or when no
        answer comes within controller.socket.timeout.ms; the broker then sleeps
        controlled.shutdown.retry.backoff.ms and tries again, at most
        controlled.shutdown.max.retries attempts in all, and finally shuts down anyway."""
        broker.state = SHUTTING_DOWN
        self.attempts_left = broker.config["controlled.shutdown.max.retries"]
        self.attempt(broker)

    def attempt(self, broker: Any) -> None:
        self.attempts_left -= 1
        controller = broker.metadata.controller_id
        broker.trace("controlled_shutdown", detail=ev.ControlledShutdown(controller, "", -1))
        if controller < 0:
            self.attempt_failed(broker, "no controller in the metadata cache")
            return
        self.awaiting = self.attempts_left
        broker.send(controller, ControlledShutdownRequest(broker.id, broker.broker_epoch))
        broker.schedule_timer(broker.config["controller.socket.timeout.ms"],
                              _timer_controlled_shutdown_timeout, self.attempts_left)

    def attempt_failed(self, broker: Any, why: str) -> None:
        if self.attempts_left > 0:
            backoff = broker.config["controlled.shutdown.retry.backoff.ms"]
            broker.trace("controlled_shutdown", detail=ev.ControlledShutdownRetry(
                why, backoff, self.attempts_left))
            broker.schedule_timer(backoff, _timer_controlled_shutdown_retry, self.attempts_left)
            return
        broker.trace("controlled_shutdown", detail=ev.ControlledShutdownGaveUp(why))
        broker.shutdown_cleanly()

    def on_controlled_shutdown_response(self, broker: Any, src,
                                        msg: ControlledShutdownResponse) -> None:
        if broker.state != SHUTTING_DOWN or self.awaiting < 0:
            return   # not shutting down, or the attempt already timed out
        self.awaiting = -1
        broker.trace("controlled_shutdown",
                     detail=ev.ControlledShutdown(src, msg.error, len(msg.remaining_partitions)))
        if msg.error == E.NONE and not msg.remaining_partitions:
            broker.shutdown_cleanly()
        else:
            self.attempt_failed(
                broker, f"{msg.error}" if msg.error != E.NONE
                else f"{len(msg.remaining_partitions)} partition(s) remaining to move")


def _zk_ping_interval(broker: Any) -> int:
    return max(1, broker.config["zookeeper.session.timeout.ms"] // 3)


def _timer_zk_ping(broker: Any) -> None:
    broker.send("zookeeper", ZkPing(broker.zk_lifecycle.session_id))
    broker.schedule_timer(_zk_ping_interval(broker), _timer_zk_ping)


def _timer_register_retry(broker: Any, session_id: int) -> None:
    """0.8.2: retry the registration after backing off (see ``create_broker_znode``)."""
    if session_id == broker.zk_lifecycle.session_id and \
            broker.zk_lifecycle.create_broker_znode(broker):
        broker.cluster.zk_control_plane.on_broker_registered(broker)


def _timer_controlled_shutdown_timeout(broker: Any, attempts_left: int) -> None:
    lifecycle = broker.zk_lifecycle
    if broker.state == SHUTTING_DOWN and attempts_left == lifecycle.awaiting:
        lifecycle.awaiting = -1
        lifecycle.attempt_failed(broker, "no answer within controller.socket.timeout.ms")


def _timer_controlled_shutdown_retry(broker: Any, attempts_left: int) -> None:
    lifecycle = broker.zk_lifecycle
    if broker.state == SHUTTING_DOWN and attempts_left == lifecycle.attempts_left:
        lifecycle.attempt(broker)
