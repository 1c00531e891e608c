"""KafkaApis: a broker's request and response handlers, by message type (``HANDLERS``).

kafka.server.KafkaApis.handle dispatches each request to its ``handle...Request`` method; the
simulated broker also receives the answers to its own requests here (its fetchers', its
controller channel's, ZooKeeper's). Each handler is ``handler(broker, src, msg)``;
``Broker.on_message`` looks it up. The network hands the steady traffic (Fetch, Produce,
FetchResponse) to its handler directly (``Transport.deliver``).
"""

from __future__ import annotations

from kafkasim.control.kraft.raft_messages import RAFT_MESSAGES
from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core.fetcher_manager import ReplicaFetcherManager
from kafkasim.core.log import EARLIEST_LOCAL_TIMESTAMP, MAX_TIMESTAMP, TimestampAndOffset
from kafkasim.core.messages import (
    DEFAULT_LISTENER,
    UNKNOWN_BROKER_EPOCH,
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerHeartbeatResponse,
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
    ProduceRequest,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
    ZkPingResponse,
)
from kafkasim.core.rules import NO_EPOCH, stop_replicas_leader_epoch_error
from kafkasim.runtime import auto_topic_creation
from kafkasim.runtime.topics import invalid_topic_reason


def handle_fetch_request(broker, src, msg: FetchRequest) -> None:
    """KafkaApis.handleFetchRequest -> ReplicaManager.fetchMessages."""
    broker.replica_manager.fetch_messages(broker, src, msg)


def handle_produce_request(broker, src, msg: ProduceRequest) -> None:
    """KafkaApis.handleProduceRequest -> ReplicaManager.appendRecords."""
    broker.replica_manager.append_records(broker, src, msg)


def handle_offsets_for_leader_epoch_request(broker, src, msg: OffsetsForLeaderEpochRequest) -> None:
    broker.replica_manager.offsets_for_leader_epoch(broker, src, msg)


def broker_epoch_error(broker, broker_epoch: int) -> str:
    """KafkaApis.isBrokerEpochStale for a LeaderAndIsr, UpdateMetadata or StopReplica
    (KIP-380, 2.2+): STALE_BROKER_EPOCH when the request carries an older broker epoch than
    this broker's own (one meant for its previous process), NONE when it carries none (-1),
    this one, or (2.6+, KAFKA-9839) a newer one. 2.2-2.5 threw IllegalStateException on a newer
    one, answered with the request's error response: UNKNOWN_SERVER_ERROR."""
    if broker_epoch == UNKNOWN_BROKER_EPOCH:
        return E.NONE
    rules = broker.rules.controller
    if not rules.control_requests_carry_broker_epoch:
        return E.NONE
    if broker_epoch < broker.broker_epoch:
        return E.STALE_BROKER_EPOCH
    if broker_epoch > broker.broker_epoch and \
            not rules.control_requests_accept_newer_broker_epoch:
        return E.UNKNOWN_SERVER_ERROR
    return E.NONE


def handle_update_metadata_request(broker, src, msg: UpdateMetadataRequest) -> None:
    """KafkaApis.handleUpdateMetadataRequest: a stale broker epoch is refused (2.2+); then
    ReplicaManager.maybeUpdateMetadataCache: an older controller epoch is refused
    (STALE_CONTROLLER_EPOCH), else ZkMetadataCache.updateMetadata and the epoch is kept."""
    err = broker_epoch_error(broker, msg.broker_epoch)
    if err != E.NONE:
        broker.send(src, UpdateMetadataResponse(err))
        return
    md = broker.metadata
    if msg.controller_epoch < md.controller_epoch:
        return
    md.update_metadata(0, msg)
    md.controller_epoch = msg.controller_epoch


def handle_stop_replica_request(broker, src, msg: StopReplicaRequest) -> None:
    """ReplicaManager.stopReplicas: stop the fetchers of the partitions; with
    deletePartition=true also drop the Partition and delete its log (a replica a
    reassignment removed). With deletePartition=false the Partition stays hosted. A stale
    broker epoch is refused first (KafkaApis.handleStopReplicaRequest, 2.2+), then an older
    controller epoch than the broker has seen (ReplicaManager.stopReplicas answers
    STALE_CONTROLLER_EPOCH and stops nothing), then each partition's leader epoch
    (``stop_replica_error``)."""
    err = broker_epoch_error(broker, msg.broker_epoch)
    if err == E.NONE and msg.controller_epoch < broker.metadata.controller_epoch:
        err = E.STALE_CONTROLLER_EPOCH
    if err != E.NONE:
        broker.send(src, StopReplicaResponse(err))
        ReplicaFetcherManager(broker).shutdown_idle_fetcher_threads()
        return
    fenced = []
    epochs = msg.leader_epochs or (NO_EPOCH,) * len(msg.partitions)
    for tp, epoch in zip(msg.partitions, epochs, strict=True):
        if stop_replica_error(broker, tp, epoch) != E.NONE:
            fenced.append((*tp, E.FENCED_LEADER_EPOCH))
            continue
        broker.replica_manager.stop_replica(broker, tp, bool(msg.delete))
    if fenced:   # kafkasim answers only what went wrong (StopReplicaResponse's docstring)
        broker.send(src, StopReplicaResponse(E.NONE, tuple(fenced)))
    # replicaFetcherManager.shutdownIdleFetcherThreads, whatever the answer (KafkaApis.scala:372
    # @3.9.0-rc3; KafkaApis.scala:138@0.8.2.0)
    ReplicaFetcherManager(broker).shutdown_idle_fetcher_threads()


def stop_replica_error(broker, tp, request_epoch: int) -> str:
    """ReplicaManager.stopReplicas' leader epoch check for one partition (KIP-570, 2.6+): a
    hosted partition whose leader epoch is newer than the request's (3.5+: or, before, equal)
    stays as it is and answers FENCED_LEADER_EPOCH; a partition not hosted is always stopped."""
    part = broker.replica_manager.partitions.get(tp)
    if part is None:
        return E.NONE
    fetch = broker.rules.fetch
    return stop_replicas_leader_epoch_error(
        request_epoch, part.get_leader_epoch(), checked=fetch.stop_replica_checks_leader_epoch,
        equal_applies=fetch.stop_replica_accepts_equal_leader_epoch)


def handle_alter_partition_request(broker, src, msg: AlterPartitionRequest) -> None:
    if broker.controller is None:
        broker.send(src, AlterPartitionResponse(E.NOT_CONTROLLER, (), msg.correlation_id))
        return
    broker.cluster.zk_control_plane.run_controller(broker, "alter_partition", (src, msg))


def handle_topic_metadata_request(broker, src, msg: MetadataRequest) -> None:
    """KafkaApis.handleTopicMetadataRequest: MetadataCache.getTopicMetadata for the topics
    asked (every topic when none is named) on the broker's listener, Metadata v6+ (a leader
    without the listener is LISTENER_NOT_FOUND); the brokers are getAliveBrokerNodes. A named
    topic the cache lacks is created when auto.create.topics.enable (true by default) and the
    request allow it (getTopicMetadata -> KafkaApis.createTopic, 2.8+
    AutoTopicCreationManager.createTopics: kafkasim.runtime.auto_topic_creation), answered
    LEADER_NOT_AVAILABLE (ZooKeeper) or UNKNOWN_TOPIC_OR_PARTITION (KRaft) meanwhile; otherwise
    it is UNKNOWN_TOPIC_OR_PARTITION, or (2.8+, KAFKA-9751) INVALID_TOPIC_EXCEPTION when
    Topic.validate refuses its name."""
    md = broker.metadata
    out = []
    topics = msg.topics or tuple(sorted({t for t, _ in md.partitions}))
    known = {t.name: t for t in md.get_topic_metadata(topics, DEFAULT_LISTENER,
                                                      error_unavailable_listeners=True)}
    missing = [t for t in dict.fromkeys(topics) if t not in known]
    try:
        created = auto_topic_creation.create_topics(broker, missing) \
            if missing and auto_topic_creation.auto_create_enabled(broker, msg) else {}
    except auto_topic_creation.CreationFailed as exc:   # before KAFKA-4032 (0.10.1)
        created, known = dict.fromkeys(topics, exc.error), {}
    for topic in topics:
        t = known.get(topic)
        if t is None:
            error = created.get(topic) or _unknown_topic_error(broker, topic)
            out.append((topic, -1, error, -1, -1, (), ()))
            continue
        out += [(topic, p.partition_index, p.error_code, p.leader_id, p.leader_epoch,
                 p.replica_nodes, p.isr_nodes) for p in t.partitions]
    brokers = tuple(n.id for n in md.get_alive_broker_nodes(DEFAULT_LISTENER))
    broker.send(src, MetadataResponse(msg.correlation_id, brokers, md.controller_id, tuple(out)))


def _unknown_topic_error(broker, topic: str) -> str:
    """KafkaApis.getTopicMetadata's error for a topic it does not know and does not create."""
    if broker.rules.clients.metadata_answers_invalid_topic and \
            invalid_topic_reason(topic) is not None:
        return E.INVALID_TOPIC_EXCEPTION
    return E.UNKNOWN_TOPIC_OR_PARTITION


#: ListOffsetsRequest.CONSUMER_REPLICA_ID / DEBUGGING_REPLICA_ID
CONSUMER_REPLICA_ID = -1
DEBUGGING_REPLICA_ID = -2


def handle_list_offset_request(broker, src, msg: ListOffsetsRequest) -> None:
    """KafkaApis.handleListOffsetRequestV1AndAbove: each partition's
    ReplicaManager.fetchOffsetForTimestamp, a consumer's with its isolation level (up to the HW
    or the LSO), a broker's and the debugging tool's without (up to the LEO), only on the
    leader but for the debugging tool's; an error answers offset -1. The answer carries the
    record's timestamp and (ListOffsets v4+, 2.1+) leader epoch."""
    rules = broker.rules.clients
    isolation = msg.isolation_level if msg.replica_id == CONSUMER_REPLICA_ID else None
    only_leader = msg.replica_id != DEBUGGING_REPLICA_ID
    epochs = msg.current_leader_epochs
    out, timestamps, leader_epochs = [], [], []
    for i, (topic, partition, timestamp) in enumerate(msg.partitions):
        current = epochs[i] if i < len(epochs) and epochs[i] >= 0 else None
        error, found = _fetch_offset_for_timestamp(broker, (topic, partition), timestamp,
                                                   isolation, current, only_leader)
        if found is None:
            found = NO_OFFSET
        out.append((topic, partition, error, found.offset))
        timestamps.append(found.timestamp)
        epoch = found.leader_epoch
        leader_epochs.append(epoch if epoch is not None and rules.list_offsets_leader_epoch
                             else -1)
    broker.send(src, ListOffsetsResponse(msg.correlation_id, tuple(out), tuple(timestamps),
                                         tuple(leader_epochs)))


#: ListOffsetsResponse.UNKNOWN_TIMESTAMP / UNKNOWN_OFFSET / no leader epoch
NO_OFFSET = TimestampAndOffset(-1, -1, None)


def _fetch_offset_for_timestamp(broker, tp, timestamp: int, isolation: str | None,
                                current_leader_epoch: int | None, only_leader: bool
                                ) -> tuple[str, TimestampAndOffset | None]:
    """One partition of a ListOffsets: (error, what was found). A timestamp the cluster's
    ListOffsets version cannot carry (MAX_TIMESTAMP before 3.0, EARLIEST_LOCAL_TIMESTAMP before
    3.5) is UNSUPPORTED_VERSION: the client refuses to build it (ListOffsetsRequest.Builder),
    trunk's broker answers it so (KAFKA-17331)."""
    rules = broker.rules.clients
    if timestamp == MAX_TIMESTAMP and not rules.list_offsets_max_timestamp or \
            timestamp == EARLIEST_LOCAL_TIMESTAMP and not rules.list_offsets_earliest_local:
        return E.UNSUPPORTED_VERSION, None
    try:
        return E.NONE, broker.replica_manager.fetch_offset_for_timestamp(
            broker, tp, timestamp, isolation, current_leader_epoch, only_leader)
    except E.ApiException as e:
        return e.error, None


def handle_offset_commit_request(broker, src, msg: OffsetCommitRequest) -> None:
    """GroupCoordinator.handleCommitOffsets: store each offset with its CommittedLeaderEpoch
    (2.1+, KIP-320: OffsetCommit v6, offset value v3; -1 is stored as no epoch). Before 2.1
    the request and the stored value had no epoch."""
    c = broker.cluster
    keep_epoch = c.rules.clients.offset_commit_leader_epoch
    for topic, partition, offset, leader_epoch in msg.offsets:
        key = (msg.group_id, topic, partition)
        c.group_offsets[key] = offset
        c.group_offsets.leader_epochs[key] = \
            leader_epoch if keep_epoch and leader_epoch >= 0 else None
    broker.trace("offset_commit", detail=ev.OffsetCommit(
        msg.group_id, tuple(o[:3] for o in msg.offsets)))
    broker.send(src, OffsetCommitResponse(msg.correlation_id, E.NONE))


def handle_controlled_shutdown_request(broker, src, msg: ControlledShutdownRequest) -> None:
    """KafkaApis.handleControlledShutdownRequest: the controller's controlledShutdown event; a
    broker that is not the active controller fails it in doControlledShutdown with
    ControllerMovedException, answered STALE_CONTROLLER_EPOCH (Errors @0.8.2 ... @3.9)."""
    if broker.controller is None:
        broker.send(src, ControlledShutdownResponse(E.STALE_CONTROLLER_EPOCH))
        return
    broker.cluster.zk_control_plane.run_controller(broker, "controlled_shutdown",
                                (src, msg.broker_id, msg.broker_epoch))


def handle_broker_registration_response(broker, src, msg: BrokerRegistrationResponse) -> None:
    if broker.lifecycle is not None:
        broker.lifecycle.on_registration_response(msg)


def handle_broker_heartbeat_response(broker, src, msg: BrokerHeartbeatResponse) -> None:
    if broker.lifecycle is not None:
        broker.lifecycle.on_heartbeat_response(msg)


def handle_metadata_log(broker, src, msg) -> None:
    """__cluster_metadata traffic of this broker's observer Raft client."""
    if broker.lifecycle is not None:
        broker.lifecycle.raft.handle(broker.lifecycle, src, msg)


def ignore_response(broker, src, msg) -> None:
    """Responses the simulation does not act on (LeaderAndIsrResponse, UpdateMetadataResponse,
    StopReplicaResponse: KafkaController logs their errors)."""


def handle_controlled_shutdown_response(broker, src, msg: ControlledShutdownResponse) -> None:
    broker.zk_lifecycle.on_controlled_shutdown_response(broker, src, msg)


def handle_zk_ping_response(broker, src, msg: ZkPingResponse) -> None:
    broker.zk_lifecycle.on_zk_ping_response(broker, msg)


def handle_leader_and_isr_request(broker, src, msg: LeaderAndIsrRequest) -> None:
    """KafkaApis.handleLeaderAndIsrRequest: a stale broker epoch is refused (2.2+), else
    ReplicaManager.becomeLeaderOrFollower."""
    err = broker_epoch_error(broker, msg.broker_epoch)
    if err != E.NONE:
        broker.send(src, LeaderAndIsrResponse(msg.controller_epoch, err))
        return
    broker.replica_manager.become_leader_or_follower(broker, src, msg)


def handle_alter_partition_response(broker, src, msg: AlterPartitionResponse) -> None:
    """The controller channel's answer -> DefaultAlterPartitionManager
    .handleAlterPartitionResponse."""
    broker.alter_partition_manager.handle_alter_partition_response(broker, src, msg)


def handle_fetcher_response(broker, src, msg) -> None:
    """A FetchResponse or OffsetsForLeaderEpochResponse for one of the broker's fetchers
    (ReplicaFetcherBlockingSend.sendRequest returns it to the thread waiting for it). Answering
    the request pops its in-flight entry, which cancels its request timeout."""
    entry = broker.fetch_inflight.pop(msg.correlation_id, None)
    if entry is None:
        return
    key = entry[2]
    disk_delay_ms = broker.log_manager.disk_delay_ms
    if disk_delay_ms and isinstance(msg, FetchResponse):
        n = sum(len(pd.records) for pd in msg.partitions)
        if n:
            # a slow disk: writing the fetched records takes disk_delay_ms per record
            broker.schedule_timer(max(1, round(disk_delay_ms * n)),
                                  _timer_fetcher_process, key, msg)
            return
    thread = broker.fetchers.get(key)   # _timer_fetcher_process, inlined (every response)
    if thread is not None:
        if isinstance(msg, FetchResponse):
            thread.on_fetch_response(broker, msg)
        else:
            thread.on_offsets_for_leader_epoch(broker, msg)


def _timer_fetcher_process(broker, key, resp) -> None:
    """The fetched records reached the slow disk: the fetcher thread processes the answer."""
    thread = broker.fetchers.get(key)
    if thread is not None:
        if isinstance(resp, FetchResponse):
            thread.on_fetch_response(broker, resp)
        else:
            thread.on_offsets_for_leader_epoch(broker, resp)



HANDLERS = {
    FetchRequest: handle_fetch_request,
    ProduceRequest: handle_produce_request,
    FetchResponse: handle_fetcher_response,
    OffsetsForLeaderEpochResponse: handle_fetcher_response,
    OffsetsForLeaderEpochRequest: handle_offsets_for_leader_epoch_request,
    LeaderAndIsrRequest: handle_leader_and_isr_request,
    LeaderAndIsrResponse: ignore_response,
    UpdateMetadataResponse: ignore_response,
    StopReplicaResponse: ignore_response,
    ControlledShutdownRequest: handle_controlled_shutdown_request,
    ControlledShutdownResponse: handle_controlled_shutdown_response,
    ZkPingResponse: handle_zk_ping_response,
    UpdateMetadataRequest: handle_update_metadata_request,
    StopReplicaRequest: handle_stop_replica_request,
    AlterPartitionRequest: handle_alter_partition_request,
    AlterPartitionResponse: handle_alter_partition_response,
    MetadataRequest: handle_topic_metadata_request,
    ListOffsetsRequest: handle_list_offset_request,
    OffsetCommitRequest: handle_offset_commit_request,
    BrokerRegistrationResponse: handle_broker_registration_response,
    BrokerHeartbeatResponse: handle_broker_heartbeat_response,
}
# KRaft: every __cluster_metadata message goes to the broker's observer Raft client
HANDLERS.update(dict.fromkeys(RAFT_MESSAGES, handle_metadata_log))
