"""The ``quorum-state`` file of a KRaft voter: ``org.apache.kafka.raft.FileQuorumStateStore``.

What a voter writes durably before it acts on an election (its vote, the leader it follows) and
reads back on restart (``QuorumState.initialize``). Each write takes the file format of the
kraft.version in force then (``KRaftVersion.quorumStateVersion``): data_version 0, with the
static voters, or 1 (kraft.version 1, KIP-853, 3.9+) with the voted directory id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

from kafkasim.control.kraft.voter_set import ZERO_UUID, ReplicaKey
from kafkasim.core.errors import IllegalArgumentException, IllegalStateException

UNKNOWN = -1


@dataclass(frozen=True)
class ElectionState:
    """org.apache.kafka.raft.ElectionState: an epoch with its leader and the vote cast in it,
    as a state's ``election()`` gives it and the quorum-state file stores it. ``leader_id`` and
    ``voted_key`` are None when absent (Kafka's OptionalInt / Optional); ``voters`` are the
    voter ids (written only in data_version 0). Equal when all four are."""

    epoch: int
    leader_id: int | None = None
    voted_key: ReplicaKey | None = None
    voters: frozenset = frozenset()

    def __post_init__(self) -> None:
        object.__setattr__(self, "voters", frozenset(self.voters))

    @classmethod
    def with_voted_candidate(cls, epoch: int, voted_key: ReplicaKey, voters) -> ElectionState:
        if voted_key.id < 0:
            raise IllegalArgumentException(f"Illegal voted Id {voted_key.id}: must be "
                                           "non-negative")
        return cls(epoch, None, voted_key, voters)

    @classmethod
    def with_elected_leader(cls, epoch: int, leader_id: int, voters,
                            voted_key: ReplicaKey | None = None) -> ElectionState:
        """withElectedLeader; 4.0 (KIP-996) keeps the vote of the epoch as well."""
        if leader_id < 0:
            raise IllegalArgumentException(f"Illegal leader Id {leader_id}: must be "
                                           "non-negative")
        return cls(epoch, leader_id, voted_key, voters)

    @classmethod
    def with_unknown_leader(cls, epoch: int, voters) -> ElectionState:
        return cls(epoch, None, None, voters)

    def is_leader(self, node_id: int) -> bool:
        if node_id < 0:
            raise IllegalArgumentException(f"Invalid negative nodeId: {node_id}")
        return self.leader_id_or_sentinel() == node_id

    def is_voted_candidate(self, key: ReplicaKey) -> bool:
        """isVotedCandidate: the vote went to ``key``'s id, and to its directory id when the
        vote recorded one (a kraft.version 0 vote has none and matches any)."""
        if key.id < 0:
            raise IllegalArgumentException(f"Invalid node key {key}")
        voted = self.voted_key
        if voted is None or voted.id != key.id:
            return False
        return voted.directory_id is None or voted.directory_id == key.directory_id

    def leader_id_or_sentinel(self) -> int:
        return UNKNOWN if self.leader_id is None else self.leader_id

    def has_leader(self) -> bool:
        return self.leader_id is not None

    def has_voted(self) -> bool:
        return self.voted_key is not None

    def to_quorum_state_data(self, version: int) -> dict:
        """toQuorumStateData: the QuorumStateData fields of file format ``version`` -- the
        voter ids at 0, the voted directory id (ZERO_UUID for none) at 1; any other version is
        an IllegalStateException."""
        data = {"leaderEpoch": self.epoch, "leaderId": self.leader_id_or_sentinel(),
                "votedId": UNKNOWN if self.voted_key is None else self.voted_key.id}
        if version == 0:
            data["currentVoters"] = [{"voterId": v} for v in sorted(self.voters)]
        elif version == 1:
            directory = self.voted_key.directory_id if self.voted_key is not None else None
            data["votedDirectoryId"] = directory or ZERO_UUID
        else:
            raise IllegalStateException(
                f"File quorum state store doesn't handle supported version {version}")
        return data

    @classmethod
    def from_quorum_state_data(cls, data: dict) -> ElectionState:
        """fromQuorumStateData: absent fields take QuorumStateData's defaults (no voters, no
        voted directory id)."""
        voted = data.get("votedId", UNKNOWN)
        leader = data.get("leaderId", UNKNOWN)
        voted_key = (None if voted == UNKNOWN
                     else ReplicaKey(voted, data.get("votedDirectoryId", ZERO_UUID)))
        return cls(data.get("leaderEpoch", -1), None if leader == UNKNOWN else leader,
                   voted_key, [v["voterId"] for v in data.get("currentVoters", ())])


def parse_quorum_state_json(text: str) -> dict:
    """FileQuorumStateStore.readElectionState: the ``quorum_state`` dict of a
    ``quorum-state`` file's text (data_version 0 or 1). A file of any other data_version is an
    IllegalStateException, as Kafka throws it; one without a data_version a ValueError (Kafka's
    UncheckedIOException)."""
    data = json.loads(text.splitlines()[0])
    version = data.get("data_version")
    if version is None:
        raise ValueError(f"Deserialized node {data} does not have data_version field")
    if version not in (0, 1):      # FileQuorumStateStore.readStateFromFile: an illegal state
        raise IllegalStateException(f"data_version ({version}) is not within the min (0) and "
                                    "max (1) supported version")
    return {"leader_epoch": data.get("leaderEpoch", -1), "leader_id": data.get("leaderId", -1),
            "voted_id": data.get("votedId", -1)}


class FileQuorumStateStore:
    """The last election state written (None: nothing yet). ``stored`` is the record of the
    last ``write_election_state``, or what a restart was given (``parse_quorum_state_json``)."""

    __slots__ = ("stored",)

    def __init__(self, stored: dict | None = None) -> None:
        self.stored = dict(stored) if stored else None

    def read_election_state(self) -> tuple[int, int, int]:
        """readElectionState: (leader epoch, leader id, voted id); epoch 0 and -1s when the file
        holds nothing."""
        s = self.stored or {}
        return (s.get("leader_epoch", 0), s.get("leader_id", UNKNOWN), s.get("voted_id", UNKNOWN))

    def read_election(self) -> ElectionState:
        """readElectionState as Kafka returns it: the ElectionState, with the voted directory
        id a data_version 1 file holds (ZERO_UUID or none: no directory id)."""
        epoch, leader, voted = self.read_election_state()
        s = self.stored or {}
        v1 = s.get("data_version", 0) >= 1      # QuorumStateData: voters at 0, directory at 1
        directory = s.get("voted_directory_id") if v1 else None
        voted_key = None if voted == UNKNOWN else ReplicaKey(voted, directory)
        return ElectionState(epoch, None if leader == UNKNOWN else leader, voted_key,
                             () if v1 else s.get("voters", ()))

    def write_election_state(self, epoch: int, leader_id: int, voted_id: int, *,
                             kraft_version: int, voters: tuple, voted_directory_id: str | None
                             ) -> None:
        """writeElectionState(election, kraftVersion): the election, with what the file's
        format needs -- its data_version (kraftVersion.quorumStateVersion: 0 or 1), the voters
        (version 0), the voted directory id (version 1)."""
        self.stored = {"leader_epoch": epoch, "leader_id": leader_id, "voted_id": voted_id,
                       "data_version": min(kraft_version, 1), "voters": tuple(voters),
                       "voted_directory_id": voted_directory_id}

    def quorum_state_json(self, voters: tuple, kraft_version: int) -> str:
        """The file's text (ElectionState.toQuorumStateData): fields in QuorumStateData.json
        order, compact JSON as Jackson writes it. A state never written here (given at start)
        shows at ``kraft_version``, with ``voters``."""
        epoch, leader, voted = self.read_election_state()
        stored = self.stored or {}
        version = stored.get("data_version", kraft_version)
        if version == 0:
            data = {"clusterId": "", "leaderId": leader, "leaderEpoch": epoch, "votedId": voted,
                    "appliedOffset": 0,
                    "currentVoters": [{"voterId": v} for v in stored.get("voters", voters)]}
        else:
            data = {"leaderId": leader, "leaderEpoch": epoch, "votedId": voted,
                    "votedDirectoryId": stored.get("voted_directory_id") or ZERO_UUID}
        data["data_version"] = version
        return json.dumps(data, separators=(",", ":"))
