"""A KRaft broker's side of the control plane (KIP-631): registration, heartbeats, metadata.

- ``BrokerLifecycleManager`` (kafka.server.BrokerLifecycleManager): the broker registers with
  the active controller (BrokerRegistration: the answer's broker epoch is the offset of its
  RegisterBrokerRecord), then heartbeats every ``broker.heartbeat.interval.ms`` (2000). Its
  states are Kafka's BrokerState: STARTING (waiting to catch up with the metadata log; heartbeats
  every 10 ms), RECOVERY (caught up, still fenced), RUNNING (unfenced),
  PENDING_CONTROLLED_SHUTDOWN (heartbeats with ``wantShutDown`` until the controller answers
  ``shouldShutDown``), SHUTTING_DOWN. A heartbeat that fails backs off 100 ms, doubling up to
  ``broker.session.timeout.ms`` (``resendExponentialBackoff = new ExponentialBackoff(100, 2,
  brokerSessionTimeoutMs, 0.02)``, 3.3.0 ... trunk; its 2 % jitter is left out, the simulation
  being deterministic).
- Registrations and heartbeats go through the "heartbeat" NodeToControllerChannelManager to the
  active controller as the broker's Raft client knows it (RaftControllerNodeProvider). A request
  that gets no answer is failed by the channel after its *retry timeout*: since KAFKA-14392
  (3.4.0, back-ported to 3.3.2) that is ``broker.session.timeout.ms / 2`` and each attempt's
  network timeout is ``min(controller.socket.timeout.ms, retry timeout)`` (BrokerServer builds
  the channel with ``config.brokerSessionTimeoutMs / 2``); before, the retry timeout was the
  whole session timeout and each attempt waited ``controller.socket.timeout.ms`` (30 s by
  default), so one heartbeat lost to a network partition silenced the broker for 30 s -- long
  enough to be fenced, and long after a controller failover. An attempt that times out inside
  the retry timeout is sent again at once (NodeToControllerRequestThread.handleResponse:
  ``wasDisconnected`` -> ``requestQueue.putFirst``); past it, the lifecycle manager backs off
  (BrokerHeartbeatResponseHandler.onTimeout -> scheduleNextCommunicationAfterFailure).
  A NOT_CONTROLLER answer or a broken connection is the channel's business, not a failure: the
  same request goes back to the head of the queue and on to the controller the raft client
  names now (after the NetworkClient's 50 ms reconnect backoff if that is the same node; every
  100 ms while none is known); only other errors make the lifecycle manager back off.
- Its listeners open only when it is unfenced (RUNNING): BrokerServer.startup enables request
  processing after ``setReadyToUnfence()``'s future, so while STARTING or in RECOVERY a
  connect to it is refused (``Transport.listeners_closed``: the sender's connect fails a round
  trip later, trace ``connect_failed``, and no request leaves; ``Transport.connect``), never
  answered NOT_LEADER_OR_FOLLOWER.
- The broker is an *observer* of ``__cluster_metadata``: a Raft client that fetches the log from
  the quorum leader but never votes. Committed records are replayed into a ``MetadataImage``;
  each changed partition this broker hosts goes through ReplicaManager.applyDelta (become
  leader / follower, or stop and delete a replica that was removed) instead of LeaderAndIsr,
  UpdateMetadata and StopReplica requests.
- A clean shutdown writes ``.kafka_cleanshutdown`` with the broker epoch; the next registration
  sends it as ``previousBrokerEpoch``. A mismatch tells the controller the broker did not shut
  down cleanly (KIP-966), and it leaves every ISR and ELR.
"""

from __future__ import annotations

import dataclasses

from kafkasim.control.kraft.image import MetadataImage, load_snapshot, local_changes_of
from kafkasim.control.kraft.offset_control import published_entries
from kafkasim.control.kraft.raft import KafkaRaftClient
from kafkasim.control.kraft.raft_snapshots import MetadataLoader, configure_metadata_log
from kafkasim.control.kraft.records import RemoveTopicRecord
from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core.alter_partition_manager import (
    CONTROLLER_CHANNEL_POLL_MS,
    CONTROLLER_CHANNEL_RECONNECT_BACKOFF_MS,
)
from kafkasim.core.messages import (
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
)
from kafkasim.core.state_change import apply_local_changes
from kafkasim.runtime.log_manager import find_stray_partitions

STARTING = "STARTING"
RECOVERY = "RECOVERY"
RUNNING = "RUNNING"
PENDING_CONTROLLED_SHUTDOWN = "PENDING_CONTROLLED_SHUTDOWN"
SHUTTING_DOWN = "SHUTTING_DOWN"
NOT_RUNNING = "NOT_RUNNING"


class BrokerLifecycleManager:
    """See the module docstring. Also the RaftContext of the broker's observer client."""

    __slots__ = ("broker", "state", "broker_epoch", "registered", "ready_to_unfence",
                 "failed_attempts", "corr", "inflight", "raft", "image", "is_fenced",
                 "got_shutdown_response", "next_comm_token", "previous_epoch", "publishing",
                 "queued", "channel_token", "cached_controller", "initial_registration_succeeded",
                 "next_scheduling_should_be_immediate", "clean_shutdown_marker",
                 "metadata_loader")

    def __init__(self, broker, voters: tuple[int, ...], config: dict, raft_options: dict
                 ) -> None:
        self.broker = broker
        self.state = NOT_RUNNING
        self.broker_epoch = -1
        self.registered = False
        self.ready_to_unfence = False
        self.failed_attempts = 0
        self.corr = 0
        self.inflight = None        # (correlation id, kind, controller) of the request in flight
        self.raft = KafkaRaftClient(broker.id, voters, config, observer=True, **raft_options)
        configure_metadata_log(self.raft.log, config,
                               getattr(broker.log_manager, "log_dir", None))
        self.image = MetadataImage()
        # KIP-630: the snapshot side of the broker's MetadataLoader (new at each start)
        self.metadata_loader = MetadataLoader.for_node(broker.id, config, 0)
        self.is_fenced = True
        self.got_shutdown_response = False
        self.next_comm_token = 0
        self.previous_epoch = -1    # from .kafka_cleanshutdown, read before log recovery
        # the .kafka_cleanshutdown file as the process found it (LogManager.clean_shutdown_file)
        self.clean_shutdown_marker: bool | int = False
        # BrokerServer.startup installs the BrokerMetadataPublisher (ReplicaManager.applyDelta)
        # only once the controller has acknowledged the broker as caught up
        self.publishing = False
        # the channel's queue head waiting for a controller: (msg, created_ms, failed node)
        self.queued = None
        self.channel_token = 0
        # NodeToControllerRequestThread.activeController: the node every request goes to until
        # a disconnect or a NOT_CONTROLLER answer clears it (-1: none cached)
        self.cached_controller = -1
        self.initial_registration_succeeded = False
        # KAFKA-15950 (3.8+): a communication came due while one was in flight; the next one
        # goes at once
        self.next_scheduling_should_be_immediate = False

    # -- RaftContext --------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.broker.now

    def send(self, dst, msg) -> None:
        self.broker.send(dst, msg)

    def schedule(self, delay_ms: int, timer: str, *args) -> None:
        self.broker.schedule_timer(delay_ms, _timer_raft, timer, args)

    def random_int(self, bound: int) -> int:
        return self.broker.cluster.engine.rng.randrange(bound)

    def trace(self, kind: str, detail) -> None:
        self.broker.trace(kind, detail=detail)

    def on_leader_change(self, leader_id: int, epoch: int) -> None:
        """The quorum leader (the active controller) changed. The controller channels keep the
        request in flight (NodeToControllerRequestThread.doWork, 3.3.0 ... trunk: with a
        controller cached it only polls the NetworkClient; the cached node is forgotten only on
        a disconnect or a NOT_CONTROLLER answer, ``handleResponse``), so a registration,
        heartbeat or AlterPartition in flight to the old controller waits for its answer --
        NOT_CONTROLLER once that controller resigned (QuorumController.renounce fails its
        pending requests), then the same request goes to the new one -- or for a disconnect or
        its request timeout. Before, kafkasim dropped it and sent a new one at once."""
        self.broker.metadata.controller_id = leader_id

    def on_high_watermark(self, hw: int) -> None:
        """MetadataLoader: replay the newly committed records, then publish the delta (an open
        metadata transaction's records wait for its End, KIP-868: ``published_entries``)."""
        image, log = self.image, self.raft.log
        loaded: tuple[list, list] = ([], [])
        if log.below_log_start(image.offset + 1):     # a snapshot fetched past the image
            loaded = load_snapshot(image, log.entries_between(0, log.start_offset))
        changed, deleted = replay_records(
            image, ((offset, record) for offset, _epoch, record
                    in published_entries(log.entries_between(image.offset + 1, hw))))
        changed = [*loaded[0], *(tp for tp in changed if tp not in loaded[0])]
        deleted = [*loaded[1], *(tp for tp in deleted if tp not in loaded[1])]
        if self.publishing:
            publish(self.broker, image, changed, deleted)
        else:
            # the metadata cache follows the log from the start (KRaftMetadataCache); the
            # replicas wait for the first publish
            update_metadata_cache(self.broker, image, [*changed, *deleted])
        self.metadata_loader.handle_commit(self, self.raft, hw)

    # -- lifecycle ----------------------------------------------------------------------------
    def start(self) -> None:
        """BrokerLifecycleManager.start (StartupEvent): STARTING; fetch metadata; register, and
        give up after initial.broker.registration.timeout.ms (RegistrationTimeoutEvent)."""
        self.state = STARTING
        self.broker.cluster.transport.close_listeners(self.broker.id)
        self.registered = False
        self.ready_to_unfence = False
        self.is_fenced = True
        self.failed_attempts = 0
        self.got_shutdown_response = False
        self.initial_registration_succeeded = False
        self.next_scheduling_should_be_immediate = False
        self.inflight = None
        self.queued = None
        self.cached_controller = -1
        self.channel_token += 1
        self.image = MetadataImage()
        self.metadata_loader = MetadataLoader.for_node(
            self.broker.id, getattr(self.broker, "config", None) or {}, self.now)
        self.publishing = False
        self.raft.start(self)
        self.broker.schedule_timer(self.broker.config["initial.broker.registration.timeout.ms"],
                                   _timer_registration_timeout)
        self._schedule_next(0)

    def stop(self) -> None:
        self.state = NOT_RUNNING
        # (the process is gone: refused as such)
        self.broker.cluster.transport.open_listeners(self.broker.id)
        self.inflight = None
        self.queued = None
        self.cached_controller = -1
        self.channel_token += 1
        self.next_comm_token += 1

    def begin_controlled_shutdown(self) -> None:
        """BeginControlledShutdownEvent: RUNNING heartbeats now with wantShutDown; a broker
        already in PENDING_CONTROLLED_SHUTDOWN stays there; in any other state it skips
        controlled shutdown and shuts down."""
        if self.state == PENDING_CONTROLLED_SHUTDOWN:
            return   # "already in that state"
        if self.state == RUNNING:
            self.state = PENDING_CONTROLLED_SHUTDOWN
            self.broker.trace("controlled_shutdown", detail=ev.KRaftControlledShutdown(
                self.broker_epoch))
            self._schedule_next(0)
        else:
            self.begin_shutdown()
            self.broker.shutdown_cleanly()

    def begin_shutdown(self) -> None:
        """beginShutdown -> ShutdownEvent: SHUTTING_DOWN, and the controller channel is shut
        down (nothing more is sent, a late answer is dropped)."""
        self.state = SHUTTING_DOWN
        self.inflight = None
        self.queued = None
        self.channel_token += 1
        self.next_comm_token += 1

    def close(self) -> None:
        """BrokerLifecycleManager.close: beginShutdown (the event queue's thread is joined at
        once here)."""
        self.begin_shutdown()

    def registration_timed_out(self) -> None:
        """RegistrationTimeoutEvent: not registered within initial.broker.registration
        .timeout.ms: the manager shuts down, so BrokerServer.startup's wait for the initial
        catch-up fails and the process exits. The logs were never loaded by Kafka
        (LogManager.startup runs after the catch-up), so ``.kafka_cleanshutdown`` is left as
        the broker found it."""
        if self.initial_registration_succeeded or self.state in (NOT_RUNNING, SHUTTING_DOWN):
            return
        b = self.broker
        self.begin_shutdown()
        b.stop_process("registration timeout")
        if self.clean_shutdown_marker is not False:
            b.log_manager.clean_shutdown_file = self.clean_shutdown_marker
        b.trace("broker_start_failed", detail=ev.KRaftRegistrationTimeout(
            b.config["initial.broker.registration.timeout.ms"]))

    def incarnation_id(self) -> str:
        """BrokerRegistrationRequest.IncarnationId: a new id for every process start (a
        random UUID in Kafka; derived from the broker id and start count here)."""
        b = self.broker
        return f"{b.id:08x}-0000-4000-8000-{b.incarnation:012x}"

    def _schedule_next(self, delay_ms: int) -> None:
        """scheduleNextCommunication: the "communication" event, replacing the one scheduled
        before; at once if one came due while a request was in flight (KAFKA-15950)."""
        if self.next_scheduling_should_be_immediate:
            delay_ms = 0
            self.next_scheduling_should_be_immediate = False
        self.next_comm_token += 1
        self.broker.schedule_timer(delay_ms, _timer_communicate, self.next_comm_token)

    def _after_failure(self) -> None:
        """scheduleNextCommunicationAfterFailure: resendExponentialBackoff.backoff(failedAttempts)
        = min(100 * 2^attempts, broker.session.timeout.ms) (ExponentialBackoff(100, 2,
        brokerSessionTimeoutMs, 0.02), without the jitter)."""
        session = self.broker.config["broker.session.timeout.ms"]
        delay = min(100 * (2 ** min(self.failed_attempts, 62)), session)
        self.failed_attempts += 1
        self.next_scheduling_should_be_immediate = False   # never at once after a failure
        self._schedule_next(delay)

    def channel_timeouts(self) -> tuple[int, int]:
        """(request timeout of one attempt, retry timeout of the request) of the broker's
        "heartbeat" NodeToControllerChannelManager: since KAFKA-14392 (3.4.0; rule
        ``broker_heartbeat_timeout_half_session``) retryTimeoutMs = broker.session.timeout.ms / 2
        and the NetworkClient's request timeout min(controller.socket.timeout.ms, retryTimeoutMs)
        (BrokerServer, NodeToControllerChannelManagerImpl.buildNetworkClient); before,
        retryTimeoutMs = broker.session.timeout.ms and the request timeout
        controller.socket.timeout.ms (BrokerToControllerChannelManager @3.3.0)."""
        cfg = self.broker.config
        socket = cfg["controller.socket.timeout.ms"]
        session = cfg["broker.session.timeout.ms"]
        if self.broker.rules.controller.broker_heartbeat_timeout_half_session:
            retry = session // 2
            return min(socket, retry), retry
        return socket, session

    def communicate(self) -> None:
        """Queue the registration (until it succeeds) or the next heartbeat in the channel,
        which sends it to the controller it has cached (``_dispatch``)."""
        if self.state in (NOT_RUNNING, SHUTTING_DOWN):
            return
        if self.queued is not None or self.inflight is not None:
            # communicationInFlight: CommunicationEvent (KAFKA-15950, 3.8+) delays this one
            # until the answer, which then schedules the next at once. Before, a new request
            # went out at once (the answer to the old one, if on the wire, was not read)
            # unless the channel still held the last one.
            if self.broker.rules.controller.broker_heartbeats_serialized:
                self.next_scheduling_should_be_immediate = True
                return
            if self.queued is not None:
                return
        controller = self.raft.leader_id
        if self.cached_controller < 0 and (controller is None or controller < 0):
            # NodeToControllerChannelManager: no known controller yet; poll again
            self._schedule_next(50)
            return
        b = self.broker
        if not self.registered:
            msg = BrokerRegistrationRequest(b.id, self.incarnation_id(), b.rack,
                                            self.previous_epoch)
        else:
            msg = BrokerHeartbeatRequest(
                b.id, self.broker_epoch, self.image.offset, not self.ready_to_unfence,
                self.state == PENDING_CONTROLLED_SHUTDOWN)
        self._dispatch(msg, self.now, -1)

    def _send(self, controller: int, msg, created_ms: int) -> None:
        """One attempt of the queued request ``msg`` (NodeToControllerQueueItem, created at
        ``created_ms``) to ``controller``; it times out after the channel's request timeout."""
        self.corr += 1
        msg = dataclasses.replace(msg, correlation_id=self.corr)   # a new request on the wire
        kind = "registration" if isinstance(msg, BrokerRegistrationRequest) else "heartbeat"
        self.inflight = (self.corr, kind, controller, created_ms, msg)
        b = self.broker
        b.send(controller, msg)
        b.schedule_timer(self.channel_timeouts()[0], _timer_request_timeout, self.corr)

    def request_timed_out(self, corr: int) -> None:
        """The attempt got no answer within the request timeout. NetworkClient fails it as a
        disconnect (and closes the connection), so NodeToControllerRequestThread.handleResponse
        forgets the controller and puts the same request first in its queue, as for any
        disconnect (``_requeue``): the next ``doWork`` fails an item older than the retry
        timeout (``onTimeout``: the lifecycle manager backs off), polls every 100 ms while no
        controller is known, and reaches the node it just disconnected from only after the
        50 ms reconnect backoff."""
        if self.inflight is None or self.inflight[0] != corr:
            return
        self._requeue()

    def controller_gone(self) -> None:
        """The connection to the controller broke (NodeToControllerRequestThread.handleResponse:
        ``wasDisconnected`` -> forget the controller, ``requestQueue.putFirst``): the same
        request goes again to the controller resolved now, without the lifecycle manager's
        backoff."""
        if self.inflight is not None:
            self._requeue()

    def _requeue(self) -> None:
        """NodeToControllerRequestThread.handleResponse on a disconnect or a NOT_CONTROLLER
        answer (3.3.0 ... trunk, unchanged): the channel forgets the controller
        (``updateControllerAddress(null)`` / ``maybeDisconnectAndUpdateController``, which also
        closes the connection) and puts the *same* queue item back at the head of its queue
        (``requestQueue.putFirst``); the item's callback -- BrokerLifecycleManager's response
        handler and its exponential backoff -- is not called. Tested as
        NodeToControllerRequestThreadTest.testNotController."""
        _corr, _kind, failed, created, msg = self.inflight
        self.inflight = None
        self.cached_controller = -1
        self._dispatch(msg, created, failed)

    def _dispatch(self, msg, created: int, failed: int) -> None:
        """The request thread's next ``doWork``: ``generateRequests`` fails an item as old as
        retryTimeoutMs (``onTimeout``: the lifecycle manager backs off) and sends any other to
        the controller it has cached (``activeController``), a new request as well as a resent
        one: a leader change alone does not touch the cache (NodeToControllerRequestThread
        .doWork, 3.3.0 ... trunk), so the first request after a failover still goes to the old
        controller, whose NOT_CONTROLLER answer clears it (``_requeue``). With none cached,
        doWork records the controller RaftControllerNodeProvider names now (the raft client's
        leader), or polls again after 100 ms (``pollOnce(100)``) while none is known. If that
        is the node just disconnected, NetworkClient reconnects to it only after its reconnect
        backoff, 50 ms (NodeToControllerChannelManagerImpl builds the NetworkClient with
        reconnectBackoffMs = reconnectBackoffMax = 50; its jitter left out)."""
        self.queued = None
        if self.state in (NOT_RUNNING, SHUTTING_DOWN):
            return
        if self.now - created >= self.channel_timeouts()[1]:
            self._after_failure()
            return
        controller = self.cached_controller
        if controller < 0:
            controller = self.raft.leader_id
            if controller is None or controller < 0 or controller == failed:
                self.queued = (msg, created, -1)   # the reconnect backoff is over by the next try
                self.channel_token += 1
                self.broker.schedule_timer(
                    CONTROLLER_CHANNEL_POLL_MS if controller is None or controller < 0 else
                    CONTROLLER_CHANNEL_RECONNECT_BACKOFF_MS, _timer_channel_poll,
                    self.channel_token)
                return
            self.cached_controller = controller   # "Recorded new KRaft controller"
        self._send(controller, msg, created)

    def on_registration_response(self, msg: BrokerRegistrationResponse) -> None:
        if self.inflight is None or self.inflight[0] != msg.correlation_id:
            return
        if msg.error == E.NOT_CONTROLLER:
            self._requeue()      # the channel's, not the lifecycle manager's, to handle
            return
        self.inflight = None
        if msg.error != E.NONE:
            self.broker.trace("broker_registration_failed",
                              detail=ev.BrokerRegistrationRefused(msg.error, msg.message))
            self._after_failure()
            return
        self.failed_attempts = 0
        self.initial_registration_succeeded = True
        self.broker_epoch = msg.broker_epoch
        self.broker.broker_epoch = msg.broker_epoch
        self.registered = True
        self.broker.trace("broker_registered", detail=ev.BrokerRegistered(msg.broker_epoch))
        self._schedule_next(0)

    def on_heartbeat_response(self, msg: BrokerHeartbeatResponse) -> None:
        if self.inflight is None or self.inflight[0] != msg.correlation_id:
            return
        if msg.error == E.NOT_CONTROLLER:
            # NodeToControllerRequestThread.handleResponse: resent at once to the controller
            # known now; BrokerHeartbeatResponseEvent (which would back off) never sees it
            self._requeue()
            return
        self.inflight = None
        if msg.error != E.NONE:
            # BrokerHeartbeatResponseEvent (3.3.0 ... trunk): any error, STALE_BROKER_EPOCH
            # included, only backs off (scheduleNextCommunicationAfterFailure); the broker keeps
            # its registration and epoch and heartbeats again
            self._after_failure()
            return
        self.failed_attempts = 0
        was_fenced = self.is_fenced
        self.is_fenced = msg.is_fenced
        if was_fenced != msg.is_fenced:
            self.broker.trace("broker_fencing", detail=ev.BrokerFencing(msg.is_fenced))
        interval = self.broker.config["broker.heartbeat.interval.ms"]
        if self.state == STARTING:
            if msg.is_caught_up:
                # initialCatchUpFuture: BrokerServer installs its metadata publisher and
                # publishes the whole image (every hosted partition becomes leader or
                # follower now); log recovery is instant here, so ready to unfence at once
                self.state = RECOVERY
                self.publishing = True
                if not publish(self.broker, self.image, list(self.image.partitions),
                               first=True):
                    return   # the broker stopped (a fatal fault at its LogManager's start)
                self.ready_to_unfence = True
                self._schedule_next(0)
                return
            self._schedule_next(10)
        elif self.state == RECOVERY:
            if not msg.is_fenced:
                self.state = RUNNING
                # initialUnfenceFuture completes: BrokerServer.startup now enables request
                # processing (SocketServer.enableRequestProcessing starts the acceptors, which
                # open the listeners' server sockets)
                self.broker.cluster.transport.open_listeners(self.broker.id)
            self._schedule_next(interval)
        elif self.state == RUNNING:
            self._schedule_next(interval)
        elif self.state == PENDING_CONTROLLED_SHUTDOWN:
            if msg.should_shut_down:
                self.begin_shutdown()
                self.broker.shutdown_cleanly()
                return
            self._schedule_next(50 if not self.got_shutdown_response else interval)
            self.got_shutdown_response = True


def _timer_raft(broker, timer: str, args: tuple) -> None:
    lm = broker.lifecycle
    lm.raft.on_timer(lm, timer, *args)


def _timer_registration_timeout(broker) -> None:
    broker.lifecycle.registration_timed_out()


def _timer_communicate(broker, token: int) -> None:
    lm = broker.lifecycle
    if token == lm.next_comm_token:
        lm.communicate()


def _timer_channel_poll(broker, token: int) -> None:
    lm = broker.lifecycle
    if token == lm.channel_token and lm.queued is not None:
        lm._dispatch(*lm.queued)


def _timer_request_timeout(broker, corr: int) -> None:
    broker.lifecycle.request_timed_out(corr)


def update_metadata_cache(broker, image: MetadataImage, changed) -> None:
    """KRaftMetadataCache.setImage: live brokers and the partition states clients are told."""
    broker.metadata.set_image(image, changed)


def replay_records(image: MetadataImage, records) -> tuple[list, list]:
    """MetadataLoader: replay ``records`` ((offset, record) pairs) onto ``image``; the delta's
    changed partitions, and the partitions of the topics a RemoveTopicRecord deleted
    (TopicsDelta.deletedTopicIds: every partition the topic had when it was removed), each
    in the order the records named them."""
    changed: list = []
    deleted: list = []
    for offset, record in records:
        if type(record) is RemoveTopicRecord:
            name = image.topic_names.get(record.topic_id)
            deleted.extend(tp for tp in image.partitions if tp[0] == name and tp not in deleted)
        tp = image.replay(record, offset)
        if tp is not None and tp not in changed:
            changed.append(tp)
    return changed, deleted


def publish(broker, image: MetadataImage, changed, deleted=(), first: bool = False) -> bool:
    """BrokerMetadataPublisher.onMetadataUpdate: refresh the metadata cache, then
    ReplicaManager.applyDelta (kafkasim.core.state_change.apply_local_changes) with
    TopicsDelta.localChanges(brokerId) (kafkasim.control.kraft.image.local_changes_of): the
    previous image is the metadata cache before this update (``first``: the empty image -- the
    MetadataLoader hands a new publisher the whole image as a delta from nothing), so a changed
    partition counts only if its partition epoch moved; the partitions of the deleted topics
    whose registration listed this broker are deletes (ReplicaManager.scala:2720-2770 and
    TopicsDelta.java:197-227 at 3.9.0-rc3, the same at 4.3.0). Deletes, then leaders, then
    followers, each in Kafka's HashMap order.

    The first publish also handles the broker's stray logs (partitions it is no longer a
    replica of): 3.7+ before any replica is made (``LogManager.delete_stray_kraft_replicas``:
    renamed -stray and kept; a log without a topic id in 3.7-3.8 stops the broker: False is
    returned), 3.3-3.6 after the delta (``finish_initializing_replica_manager``)."""
    rules = broker.rules.controller
    if first and rules.kraft_stray_logs_renamed and \
            not broker.log_manager.delete_stray_kraft_replicas(broker, broker.id, image):
        broker.lifecycle.begin_shutdown()   # the fatal fault handler: Exit.halt
        broker.stop_process("fatal fault")
        broker.trace("broker_start_failed", detail=ev.KRaftStartupFault(
            "Error starting LogManager: a log without a topic ID"))
        return False
    md = broker.metadata
    previous = {} if first else {tp: md.partitions[tp] for tp in (*changed, *deleted)
                                 if tp in md.partitions}
    update_metadata_cache(broker, image, [*changed, *(tp for tp in deleted if tp not in changed)])
    changes = local_changes_of(broker.id, previous, image.partitions,
                               [tp for tp in changed if tp in image.partitions], deleted,
                               image.topic_ids)
    apply_local_changes(broker.replica_manager, broker, changes)
    if first:
        finish_initializing_replica_manager(broker, image)
    return True


def finish_initializing_replica_manager(broker, image: MetadataImage) -> None:
    """BrokerMetadataPublisher.finishInitializingReplicaManager (BrokerMetadataPublisher
    .scala:412@3.3.0): 3.3-3.6 (before rule ``kraft_stray_logs_renamed``) delete the stray
    logs (findStrayPartitions -> ReplicaManager.deleteStrayReplicas; a log without a topic id
    makes it delete none), then start the highwatermark-checkpoint task."""
    if not broker.rules.controller.kraft_stray_logs_renamed:
        strays = find_stray_partitions(broker, broker.id, image, broker.log_manager.logs)
        for tp, reason in strays or ():
            broker.trace("stray_log", tp[0], tp[1], ev.StrayLog(reason, "deleted", ""))
        broker.replica_manager.delete_stray_replicas(broker, [tp for tp, _r in strays or ()])
    broker.replica_manager.start_high_watermark_check_point_thread(broker)
