"""The Kafka RPCs the simulator exchanges, as typed plain-data messages.

Names follow Kafka's request/response pairs (``FetchRequest``/``FetchResponse``, ...). Every message
is a frozen-ish slotted dataclass of ints, strings and tuples, so traces, holds and snapshots treat
them as data. ``type_name`` is what scenario ``hold``/``drop`` filters match on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from kafkasim.core.log import RecordChunk

TopicPartition = tuple[str, int]


@dataclass(slots=True)
class Message:
    @property
    def type_name(self) -> str:
        return type(self).__name__


# --- Produce -----------------------------------------------------------------------------------
@dataclass(slots=True)
class ProduceRequest(Message):
    correlation_id: int
    client_id: str
    acks: int
    timeout_ms: int
    # per partition: (topic, partition, record ids, record sizes, producer id, producer epoch,
    # base sequence). The last three are the idempotence fields of the batch's RecordBatch header
    # (KIP-98): -1, -1, -1 (NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE) for a producer that
    # is not idempotent. The leader checks them against its ProducerStateManager.
    partitions: tuple[tuple[str, int, tuple[int, ...], tuple[int, ...], int, int, int], ...]


class PartitionResponse(NamedTuple):
    """ProduceResponse.PartitionResponse: what a produce answers for one partition: its error,
    the batch's first offset (-1 on error) and the log start offset (ProduceResponse v5+,
    1.0+, KAFKA-5793: the partition's when the leader got to the append, -1 when it did not:
    not the leader, unknown partition)."""

    error: str
    base_offset: int
    log_start_offset: int = -1


@dataclass(slots=True)
class ProduceResponse(Message):
    correlation_id: int
    # per partition: (topic, partition, error, base offset)
    partitions: tuple[tuple[str, int, str, int], ...]
    # KIP-951 (3.7+, ProduceResponse v10): (topic, partition, leader id, leader epoch) of each
    # partition answered NOT_LEADER_OR_FOLLOWER, and the live brokers among those leaders
    # (NodeEndpoints)
    current_leaders: tuple[tuple[str, int, int, int], ...] = ()
    node_endpoints: tuple[int, ...] = ()
    # the log start offset of each partition, in the order of ``partitions`` (PartitionResponse
    # .logStartOffset; empty: all -1)
    log_start_offsets: tuple[int, ...] = ()


# --- Fetch -------------------------------------------------------------------------------------
class FetchPartition(NamedTuple):
    """One partition of a FetchRequest (FetchRequestData.FetchPartition). A tuple: a follower
    builds one per fetch and the fetch session compares it with the one it holds (sessions,
    KIP-227), both at C speed; its repr is the dataclass one it replaced."""

    topic: str
    partition: int
    fetch_offset: int
    current_leader_epoch: int  # -1 when the version has no KIP-320 fencing
    last_fetched_epoch: int    # -1 when the version has no diverging-epoch fetch (pre-2.8)
    log_start_offset: int
    partition_max_bytes: int


@dataclass(slots=True)
class FetchRequest(Message):
    correlation_id: int
    replica_id: int            # broker id for followers, -1 for consumers
    max_wait_ms: int
    min_bytes: int
    max_bytes: int
    partitions: tuple[FetchPartition, ...]
    isolation_level: str = "read_uncommitted"
    # ClientMetadata's rack (Fetch v11+, KIP-392); None: a request without ClientMetadata (a
    # consumer's Fetch v0-v10), which only a leader serves (FetchParams.fetchOnlyFromLeader)
    rack_id: str | None = ""
    fetcher_id: int = 0
    # KIP-227 (Fetch v7+, 1.1): FetchMetadata and the partitions leaving the session. The
    # defaults are a sessionless fetch (INVALID_SESSION_ID, FINAL_EPOCH), as before 1.1.
    session_id: int = 0
    session_epoch: int = -1
    to_forget: tuple[tuple[str, int], ...] = ()
    # KIP-903 (Fetch v15+, 3.5): ReplicaState.ReplicaEpoch, the follower's broker epoch; -1 for
    # a consumer and before 3.5
    replica_epoch: int = -1


class FetchPartitionData(NamedTuple):
    """One partition of a FetchResponse (FetchResponseData.PartitionData). A tuple, as
    FetchPartition: the leader builds one per read (ReplicaManager._read_partition) with the C
    constructor; its repr, equality and pickle are the dataclass ones it replaced."""

    topic: str
    partition: int
    error: str
    high_watermark: int
    log_start_offset: int
    records: RecordChunk
    diverging_epoch: tuple[int, int] | None = None  # (epoch, end offset)
    log_end_offset: int = -1  # leader LEO at read time (used by OFFSET_OUT_OF_RANGE handling)
    preferred_read_replica: int = -1  # KIP-392: fetch from this follower instead (v11+)


@dataclass(slots=True)
class FetchResponse(Message):
    correlation_id: int
    partitions: tuple[FetchPartitionData, ...]
    # KIP-227 (v7+): the top-level error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH)
    # and the session id (0 = no session; an incremental answer omits unchanged partitions)
    error: str = "NONE"
    session_id: int = 0


# --- Leader epochs (KIP-101) ---------------------------------------------------------------------
class OffsetForLeaderPartition(NamedTuple):
    """OffsetForLeaderEpochRequestData.OffsetForLeaderPartition with its topic: the epoch asked
    about and the asker's current leader epoch (-1, NO_PARTITION_LEADER_EPOCH: none, KIP-320)."""

    topic: str
    partition: int
    current_leader_epoch: int
    leader_epoch: int


class EpochEndOffset(NamedTuple):
    """OffsetForLeaderEpochResponseData.EpochEndOffset with its topic: where the asked epoch
    ends and the largest epoch at or below it the leader knows (KIP-279); -1 and -1
    (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET) when unknown or with an error."""

    topic: str
    partition: int
    error: str = "NONE"
    leader_epoch: int = -1
    end_offset: int = -1


@dataclass(slots=True)
class OffsetsForLeaderEpochRequest(Message):
    correlation_id: int
    replica_id: int
    # (topic, partition, current leader epoch, leader epoch asked about): OffsetForLeaderPartition
    partitions: tuple[tuple[str, int, int, int], ...]


@dataclass(slots=True)
class OffsetsForLeaderEpochResponse(Message):
    correlation_id: int
    # (topic, partition, error, leader epoch, end offset): EpochEndOffset
    partitions: tuple[tuple[str, int, str, int, int], ...]


# --- Controller <-> broker ---------------------------------------------------------------------
@dataclass(slots=True)
class PartitionState:
    topic: str
    partition: int
    controller_epoch: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    partition_epoch: int  # the ZooKeeper zkVersion of the partition state znode
    replicas: tuple[int, ...]
    # LeaderRecoveryState (KIP-704, 3.2+): 1 RECOVERING after an unclean election, else 0
    # RECOVERED (LeaderAndIsr v6+ in ZooKeeper mode; the PartitionRecord's in KRaft)
    leader_recovery_state: int = 0
    # UpdateMetadata v4+ (1.0, KIP-112) in ZooKeeper mode: the replicas the controller does not
    # count online (isReplicaOnline: dead or shutting down); empty in LeaderAndIsr
    offline_replicas: tuple[int, ...] = ()
    # LeaderAndIsr v3+ (2.4, KIP-455; a KRaft PartitionRegistration's): the adding and removing
    # replicas of a reassignment in progress, empty otherwise
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()


#: AbstractControlRequest.UNKNOWN_BROKER_EPOCH: a control request without a broker epoch
UNKNOWN_BROKER_EPOCH = -1
#: Uuid.ZERO_UUID as Uuid.toString prints it: no topic id (KIP-516)
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


@dataclass(slots=True)
class LeaderAndIsrRequest(Message):
    controller_id: int
    controller_epoch: int
    partition_states: tuple[PartitionState, ...]
    # live brokers hosting the leaders, for the fetchers to connect to
    live_leaders: tuple[int, ...] = ()
    # KIP-380 (v2+, 2.2): the controller's view of the receiver's broker epoch
    broker_epoch: int = UNKNOWN_BROKER_EPOCH
    # KIP-516 (v5+, 2.8; rule ``zk_topic_ids``): LeaderAndIsrRequest.topicIds(), the id of each
    # topic of ``partition_states`` the controller knows (LeaderAndIsrTopicState.topicId), as
    # (topic, id) pairs in the order of the states; empty before 2.8 (v0-v4: no ids). A
    # mapping given here is kept as its pairs.
    topic_ids: tuple[tuple[str, str], ...] = ()
    # LeaderAndIsrRequest.type (v5+, KIP-516; AbstractControlRequest.Type: 0 UNKNOWN, 1
    # INCREMENTAL, 2 FULL): only a migrating KRaft controller sends FULL (3.7+, KAFKA-15605);
    # a ZooKeeper controller leaves it 0
    type: int = 0
    # isKRaftController (v7+, KIP-866, 3.4): sent by a KRaft controller during a migration
    is_kraft_controller: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.topic_ids, tuple):
            self.topic_ids = tuple(dict(self.topic_ids).items())

    def topic_id(self, topic: str) -> str | None:
        """``topicIds().get(topic)``: the request's id of ``topic``, None when it has none."""
        return topic_id_of(self.topic_ids, topic)


#: AbstractControlRequest.Type.FULL / INCREMENTAL (LeaderAndIsrRequest.type)
LEADER_AND_ISR_TYPE_INCREMENTAL = 1
LEADER_AND_ISR_TYPE_FULL = 2


def topic_id_of(topic_ids: tuple[tuple[str, str], ...], topic: str) -> str | None:
    """The id of ``topic`` in a control request's (topic, id) pairs, None if it is not there."""
    for name, topic_id in topic_ids:
        if name == topic:
            return topic_id
    return None


@dataclass(slots=True)
class LeaderAndIsrResponse(Message):
    controller_epoch: int
    error: str
    partition_errors: tuple[tuple[str, int, str], ...] = ()


#: the listener every simulated broker has (ListenerName.forSecurityProtocol(PLAINTEXT))
DEFAULT_LISTENER = "PLAINTEXT"


@dataclass(frozen=True, slots=True)
class UpdateMetadataEndpoint:
    """UpdateMetadataRequestData.UpdateMetadataEndpoint: one listener of a live broker."""

    port: int = 9092
    host: str = "localhost"
    listener: str = DEFAULT_LISTENER
    security_protocol: int = 0   # SecurityProtocol.PLAINTEXT.id


@dataclass(frozen=True, slots=True)
class UpdateMetadataBroker:
    """UpdateMetadataRequestData.UpdateMetadataBroker: a live broker, its listeners and rack."""

    id: int
    endpoints: tuple[UpdateMetadataEndpoint, ...] = (UpdateMetadataEndpoint(),)
    rack: str | None = None


@dataclass(slots=True)
class UpdateMetadataRequest(Message):
    controller_id: int
    controller_epoch: int
    partition_states: tuple[PartitionState, ...]
    # the live brokers: an UpdateMetadataBroker, or just the id of a broker with the one
    # PLAINTEXT listener and no rack (what the simulated controller sends)
    live_brokers: tuple[int | UpdateMetadataBroker, ...]
    # KIP-380 (v5+, 2.2): the controller's view of the receiver's broker epoch
    broker_epoch: int = UNKNOWN_BROKER_EPOCH
    # KIP-516 (v7+, 2.8; rule ``zk_topic_ids``): UpdateMetadataTopicState.topicId of each topic
    # of ``partition_states`` as (topic, id) pairs, Uuid.ZERO_UUID for a topic the controller
    # has no id for; empty before 2.8
    topic_ids: tuple[tuple[str, str], ...] = ()

    def topic_id(self, topic: str) -> str | None:
        """``topicIds().get(topic)``: the request's id of ``topic``, None when it has none."""
        return topic_id_of(self.topic_ids, topic)


@dataclass(slots=True)
class UpdateMetadataResponse(Message):
    """The broker's answer to UpdateMetadata. kafkasim's brokers answer only a refusal for a
    stale broker epoch (KIP-380): the controller acts on no answer (it logs an error)."""

    error: str


@dataclass(slots=True)
class StopReplicaRequest(Message):
    controller_id: int
    controller_epoch: int
    partitions: tuple[tuple[str, int], ...]
    delete: bool = False
    # KIP-380 (v1+, 2.2): the controller's view of the receiver's broker epoch
    broker_epoch: int = UNKNOWN_BROKER_EPOCH
    # KIP-570 (v3+, 2.6): each partition's leader epoch, in the order of ``partitions``
    # (StopReplicaPartitionState.leaderEpoch; -2 EpochDuringDelete for a topic deletion);
    # empty: a request without epochs (v0-v2, LeaderAndIsr.NoEpoch for every partition)
    leader_epochs: tuple[int, ...] = ()


@dataclass(slots=True)
class StopReplicaResponse(Message):
    """The broker's answer to StopReplica; as ``UpdateMetadataResponse``, sent only to refuse
    it: a stale broker epoch or controller epoch (the controller's StopReplica callbacks serve
    topic deletion)."""

    error: str
    partition_errors: tuple[tuple[str, int, str], ...] = ()


@dataclass(slots=True)
class AlterPartitionRequest(Message):
    """AlterIsr (2.7) / AlterPartition (3.2+): the leader proposes a new ISR to the controller."""

    broker_id: int
    broker_epoch: int
    # (topic, partition, leader epoch, new isr, partition epoch); the new ISR is NewIsr, broker
    # ids, before 3.5 and NewIsrWithEpochs, (broker id, broker epoch) pairs, since (v3, KIP-903):
    # ``new_isr_broker_ids`` reads either
    partitions: tuple[tuple[str, int, int, tuple, int], ...]
    correlation_id: int = -1
    # AlterPartition v1+ (KIP-704): each partition's LeaderRecoveryState, in the order of
    # ``partitions``; empty before 3.2 in ZooKeeper mode (read as RECOVERED)
    leader_recovery_states: tuple[int, ...] = ()


def new_isr_broker_ids(new_isr) -> tuple[int, ...]:
    """An AlterPartition partition's new ISR as broker ids: NewIsr (v0-2) as it is,
    NewIsrWithEpochs (v3, KIP-903) without the epochs (BrokerState.brokerId)."""
    return tuple(b if isinstance(b, int) else b[0] for b in new_isr)


@dataclass(slots=True)
class AlterPartitionResponse(Message):
    error: str
    # (topic, partition, error, leader, leader epoch, isr, partition epoch)
    partitions: tuple[tuple[str, int, str, int, int, tuple[int, ...], int], ...]
    correlation_id: int = -1   # the request's (the client matches answers by it)


@dataclass(slots=True)
class ControlledShutdownRequest(Message):
    broker_id: int
    broker_epoch: int


@dataclass(slots=True)
class ControlledShutdownResponse(Message):
    error: str
    remaining_partitions: tuple[tuple[str, int], ...] = ()


# --- ZooKeeper session keep-alive ---------------------------------------------------------------
@dataclass(slots=True)
class ZkPing(Message):
    session_id: int


@dataclass(slots=True)
class ZkPingResponse(Message):
    session_id: int
    alive: bool


# --- Clients -----------------------------------------------------------------------------------
@dataclass(slots=True)
class MetadataRequest(Message):
    correlation_id: int
    topics: tuple[str, ...]   # none: every topic (MetadataRequest.Builder.allTopics)
    # allowAutoTopicCreation (Metadata v4+, 0.11): may the broker create a named topic it lacks
    # (if its auto.create.topics.enable allows too); v0-v3 requests always allowed it
    allow_auto_topic_creation: bool = True


@dataclass(slots=True)
class MetadataResponse(Message):
    correlation_id: int
    brokers: tuple[int, ...]
    controller_id: int
    # (topic, partition, error, leader, leader epoch, replicas, isr)
    partitions: tuple[tuple[str, int, str, int, int, tuple[int, ...], tuple[int, ...]], ...]


@dataclass(slots=True)
class ListOffsetsRequest(Message):
    correlation_id: int
    # -1 a consumer (CONSUMER_REPLICA_ID: reads up to the HW or LSO), -2 a debugging tool
    # (DEBUGGING_REPLICA_ID: any replica, up to its LEO), else a broker (the leader's LEO)
    replica_id: int
    # (topic, partition, timestamp): a timestamp >= 0 is searched; -1 latest, -2 earliest,
    # -3 max timestamp (3.0+), -4 earliest local (3.5+): kafkasim.core.log's constants
    partitions: tuple[tuple[str, int, int], ...]
    isolation_level: str = "read_uncommitted"
    # ListOffsets v4+ (2.1, KIP-320): each partition's CurrentLeaderEpoch, in the order of
    # ``partitions``; -1 (or none given): no epoch, not checked
    current_leader_epochs: tuple[int, ...] = ()


@dataclass(slots=True)
class ListOffsetsResponse(Message):
    correlation_id: int
    partitions: tuple[tuple[str, int, str, int], ...]  # (topic, partition, error, offset)
    # in the order of ``partitions``: the timestamp of the record found (-1: none, as for the
    # earliest and latest offsets) and its leader epoch (ListOffsets v4+, 2.1, KIP-320; -1:
    # none); empty: all -1
    timestamps: tuple[int, ...] = ()
    leader_epochs: tuple[int, ...] = ()


# --- KRaft broker <-> active controller (KIP-631) ----------------------------------------------
@dataclass(slots=True)
class BrokerRegistrationRequest(Message):
    broker_id: int
    incarnation_id: str
    rack: str | None
    # PreviousBrokerEpoch (v3+, KIP-966): the epoch in .kafka_cleanshutdown, -1 without one
    previous_broker_epoch: int = -1
    correlation_id: int = -1


@dataclass(slots=True)
class BrokerRegistrationResponse(Message):
    error: str
    broker_epoch: int
    correlation_id: int = -1
    message: str = ""


@dataclass(slots=True)
class BrokerHeartbeatRequest(Message):
    broker_id: int
    broker_epoch: int
    current_metadata_offset: int
    want_fence: bool
    want_shut_down: bool
    correlation_id: int = -1


@dataclass(slots=True)
class BrokerHeartbeatResponse(Message):
    error: str
    is_caught_up: bool
    is_fenced: bool
    should_shut_down: bool
    correlation_id: int = -1


@dataclass(slots=True)
class OffsetCommitRequest(Message):
    """``offsets``: (topic, partition, offset, committed_leader_epoch); the epoch is -1 when
    absent (OffsetCommitRequest.json CommittedLeaderEpoch, v6+, default -1)."""
    correlation_id: int
    group_id: str
    offsets: tuple[tuple[str, int, int, int], ...]


@dataclass(slots=True)
class OffsetCommitResponse(Message):
    correlation_id: int
    error: str


@dataclass(slots=True)
class Envelope:
    """A message on the wire: who sent it to whom, and when it left."""

    src: int | str
    dst: int | str
    msg: Message
    sent_ms: int
    msg_id: int = field(default=0)
