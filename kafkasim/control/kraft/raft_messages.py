"""The KRaft quorum RPCs of ``__cluster_metadata`` (KIP-595, KIP-996) as plain data.

Field names follow clients/src/main/resources/common/message/{Vote,BeginQuorumEpoch,
EndQuorumEpoch,Fetch}{Request,Response}.json in snake_case, reduced to the single partition of
``__cluster_metadata`` (no topic/partition arrays, cluster id or directory ids: the simulator
runs one quorum with a static voter set, kraft.version 0). Every request carries a
``correlation_id`` that its response echoes, so a stale response can be told from the expected
one (RequestManager.isResponseExpected). Errors are Kafka's ``Errors`` names ("NONE", ...).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from kafkasim.core.messages import Message

NONE = "NONE"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
UNKNOWN_LEADER_EPOCH = "UNKNOWN_LEADER_EPOCH"
NOT_LEADER_OR_FOLLOWER = "NOT_LEADER_OR_FOLLOWER"
INVALID_REQUEST = "INVALID_REQUEST"
#: Errors.INVALID_VOTER_KEY (KIP-853, 3.9): the request names a voter key that is not the
#: receiver's (another node id, or another directory id: a replaced disk)
INVALID_VOTER_KEY = "INVALID_VOTER_KEY"
BROKER_NOT_AVAILABLE = "BROKER_NOT_AVAILABLE"


@dataclass(frozen=True, slots=True)
class LeaderChangeMessage:
    """The control record a new leader writes first in its epoch
    (common/message/LeaderChangeMessage.json; LeaderState.appendStartOfEpochControlRecords)."""

    leader_id: int
    voters: tuple[int, ...]
    granting_voters: tuple[int, ...]
    version: int = 0


@dataclass(slots=True)
class VoteRequest(Message):
    """VoteRequest (api key 52). ``pre_vote`` (v2, KIP-996, Kafka 4.0): a Prospective asks
    whether it could win without bumping the epoch; ``candidate_epoch`` is then its current
    epoch, not epoch + 1 (the field is named ReplicaEpoch from v2). v1 (KIP-853, 3.9):
    ``voter_id`` / ``voter_directory_id`` name the voter asked (VoterId, VoterDirectoryId),
    ``candidate_directory_id`` the candidate's own directory (CandidateDirectoryId)."""

    correlation_id: int
    candidate_epoch: int
    candidate_id: int
    last_offset_epoch: int
    last_offset: int
    pre_vote: bool = False
    voter_id: int = -1
    candidate_directory_id: str | None = None
    voter_directory_id: str | None = None


@dataclass(slots=True)
class VoteResponse(Message):
    """VoteResponse: ``leader_id``/``leader_epoch`` are the responder's current view. Like
    Kafka's, it carries no PreVote flag: the receiver knows which round it is in from its own
    state, and a response to a request sent before a state change is dropped (correlation id)."""

    correlation_id: int
    error: str
    leader_id: int
    leader_epoch: int
    vote_granted: bool


@dataclass(slots=True)
class BeginQuorumEpochRequest(Message):
    """v1 (KIP-853, 3.9): ``voter_id`` / ``voter_directory_id`` name the voter the leader
    means (VoterId, VoterDirectoryId)."""

    correlation_id: int
    leader_epoch: int
    leader_id: int
    voter_id: int = -1
    voter_directory_id: str | None = None


@dataclass(slots=True)
class BeginQuorumEpochResponse(Message):
    correlation_id: int
    error: str
    leader_id: int
    leader_epoch: int


@dataclass(slots=True)
class EndQuorumEpochRequest(Message):
    """Sent by a resigning leader; ``preferred_successors`` are the other voters by
    descending fetch offset (LeaderState.nonLeaderVotersByDescendingFetchOffset)."""

    correlation_id: int
    leader_epoch: int
    leader_id: int
    preferred_successors: tuple[int, ...]


@dataclass(slots=True)
class EndQuorumEpochResponse(Message):
    correlation_id: int
    error: str
    leader_id: int
    leader_epoch: int


@dataclass(slots=True)
class RaftFetchRequest(Message):
    """The Fetch a voter or observer sends to the quorum leader (FetchRequest v13+ as
    KafkaRaftClient.buildFetchRequest fills it). On the wire this is a plain ``Fetch``.
    ``high_watermark`` (v18, KAFKA-14145, 4.1): the fetcher's HW, -1 when unknown; requests of
    older versions carry Long.MAX_VALUE (the field's default). ``replica_directory_id`` (v17,
    KIP-853, 3.9): the fetcher's directory id (ReplicaDirectoryId), None when absent."""

    WIRE_NAME: ClassVar[str] = "Fetch"

    correlation_id: int
    replica_id: int
    current_leader_epoch: int
    fetch_offset: int
    last_fetched_epoch: int
    max_wait_ms: int
    high_watermark: int = 9223372036854775807
    replica_directory_id: str | None = None


@dataclass(slots=True)
class RaftFetchResponse(Message):
    """``records``: (offset, epoch, record) from ``fetch_offset``; ``diverging_epoch`` /
    ``diverging_end_offset`` are -1 unless the follower must truncate (DivergingEpoch);
    ``high_watermark`` is -1 while the leader does not know it yet."""

    WIRE_NAME: ClassVar[str] = "Fetch"

    correlation_id: int
    error: str
    leader_id: int
    leader_epoch: int
    high_watermark: int
    records: tuple = ()
    diverging_epoch: int = -1
    diverging_end_offset: int = -1
    #: SnapshotId (KIP-630): the leader's latest snapshot, -1 unless the follower must fetch it
    snapshot_end_offset: int = -1
    snapshot_epoch: int = -1


@dataclass(slots=True)
class ApiVersionsRequest(Message):
    """What the leader sends a controller it is asked to add as a voter (AddVoterHandler,
    KIP-853): its answer says which kraft.version range the new voter supports."""
    correlation_id: int


@dataclass(slots=True)
class ApiVersionsResponse(Message):
    """``supported_kraft_version``: (min, max) of the kraft.version feature, None when the
    node does not know the feature (before 3.9)."""
    correlation_id: int
    error: str
    supported_kraft_version: tuple | None


@dataclass(slots=True)
class AddRaftVoterRequest(Message):
    """AddRaftVoter (api key 80, KIP-853) as an auto-joining observer sends it for itself
    (controller.quorum.auto.join.enable, 4.2); ``endpoints``: (listener, host, port)."""
    correlation_id: int
    voter_id: int
    voter_directory_id: str
    endpoints: tuple


@dataclass(slots=True)
class AddRaftVoterResponse(Message):
    correlation_id: int
    error: str
    message: str | None = None


@dataclass(slots=True)
class RemoveRaftVoterRequest(Message):
    """RemoveRaftVoter (api key 81, KIP-853): an auto-joining observer removes the voter that
    has its id and another directory id (a controller whose disk was replaced)."""
    correlation_id: int
    voter_id: int
    voter_directory_id: str


@dataclass(slots=True)
class RemoveRaftVoterResponse(Message):
    correlation_id: int
    error: str
    message: str | None = None


@dataclass(slots=True)
class UpdateRaftVoterRequest(Message):
    """UpdateRaftVoter (api key 82, KIP-853): a voter whose listeners or supported kraft.version
    range differ from its entry in the voter set asks the leader to update the entry."""
    correlation_id: int
    voter_id: int
    voter_directory_id: str | None
    current_leader_epoch: int
    supported_kraft_version: tuple      # (min, max)
    endpoints: tuple                    # (listener, host, port)


@dataclass(slots=True)
class UpdateRaftVoterResponse(Message):
    correlation_id: int
    error: str
    leader_id: int
    leader_epoch: int


@dataclass(slots=True)
class FetchSnapshotRequest(Message):
    """FetchSnapshot (api key 59, KIP-630) for ``__cluster_metadata``: the bytes of snapshot
    (``snapshot_end_offset``, ``snapshot_epoch``) from ``position`` (KafkaRaftClient
    .buildFetchSnapshotRequest)."""

    correlation_id: int
    replica_id: int
    current_leader_epoch: int
    snapshot_end_offset: int
    snapshot_epoch: int
    position: int
    max_bytes: int
    replica_directory_id: str | None = None


@dataclass(slots=True)
class FetchSnapshotResponse(Message):
    """``error`` is the top-level error, ``partition_error`` the snapshot's (NONE,
    SNAPSHOT_NOT_FOUND, POSITION_OUT_OF_RANGE, or the leader-only errors); ``records`` the
    snapshot's entries from ``position``, ``size`` its whole size in bytes."""

    correlation_id: int
    error: str
    partition_error: str
    leader_id: int
    leader_epoch: int
    snapshot_end_offset: int = -1
    snapshot_epoch: int = -1
    size: int = -1
    position: int = -1
    records: tuple = ()
    last_contained_log_timestamp: int = -1


RAFT_MESSAGES = (
    VoteRequest, VoteResponse, BeginQuorumEpochRequest, BeginQuorumEpochResponse,
    EndQuorumEpochRequest, EndQuorumEpochResponse, RaftFetchRequest, RaftFetchResponse,
    ApiVersionsRequest, ApiVersionsResponse, AddRaftVoterRequest, AddRaftVoterResponse,
    RemoveRaftVoterRequest, RemoveRaftVoterResponse, UpdateRaftVoterRequest,
    UpdateRaftVoterResponse, FetchSnapshotRequest, FetchSnapshotResponse,
)
