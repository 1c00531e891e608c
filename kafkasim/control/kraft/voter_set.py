"""The KRaft voter set and its history in the log (KIP-853, ``kraft.version`` 1, 3.9+).

``VoterSet`` follows org.apache.kafka.raft.VoterSet: voters keyed by node id, each with its
``ReplicaKey`` (id and, with kraft.version 1, the directory id of its metadata log dir), its
endpoints and the kraft.version range it supports. ``VoterSetHistory`` follows
raft/internals/VoterSetHistory + KRaftControlRecordStateMachine: the voter set at each offset
of the ``__cluster_metadata`` log, read from the VotersRecord control records as they are
*appended* (committed or not: a voter change takes effect on append, KIP-853), forgotten again
when the log is truncated below them. Offset -1 is the bootstrap checkpoint
(``kafka-storage format --standalone`` / ``--initial-controllers`` writes 0-0.checkpoint).

``kraft.version`` 0 (``controller.quorum.voters``) keeps one static voter set and no records.

Source: apache/kafka trunk 1eb7644 (2024-10-25): raft/.../VoterSet.java,
raft/.../internals/VoterSetHistory.java, KRaftControlRecordStateMachine.java,
server-common/.../KRaftVersion.java.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkasim.core.errors import IllegalArgumentException

__all__ = ["ReplicaKey", "VoterNode", "VoterSet", "VoterSetHistory", "KRaftVersionRecord",
           "VotersRecord", "Node", "ZERO_UUID", "NO_DIRECTORY_ID"]

#: Uuid.ZERO_UUID as Kafka prints it
ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"
#: ReplicaKey.NO_DIRECTORY_ID: a replica key with it has no directory id
NO_DIRECTORY_ID = ZERO_UUID


@dataclass(frozen=True, order=True)
class ReplicaKey:
    """org.apache.kafka.raft.ReplicaKey: a node id and its directory id (None: unknown, as
    for the voters of a static quorum)."""

    id: int
    directory_id: str | None = None

    def __post_init__(self) -> None:
        # ReplicaKey.of: NO_DIRECTORY_ID (Uuid.ZERO_UUID, what a VotersRecord holds for a
        # voter without one) is no directory id
        if self.directory_id == NO_DIRECTORY_ID:
            object.__setattr__(self, "directory_id", None)

    @classmethod
    def of(cls, replica_id: int, directory_id: str | None) -> ReplicaKey:
        return cls(replica_id, directory_id)

    def __str__(self) -> str:
        """ReplicaKey.toString: the directory id is Java's Optional."""
        directory = f"Optional[{self.directory_id}]" if self.directory_id else "Optional.empty"
        return f"ReplicaKey(id={self.id}, directoryId={directory})"


@dataclass(frozen=True)
class Node:
    """org.apache.kafka.common.Node: a node id and the address it is reached at."""

    id: int
    host: str
    port: int


@dataclass(frozen=True)
class VoterNode:
    """VoterSet.VoterNode: the voter's key, its endpoints (``("CONTROLLER", host, port)``)
    and the kraft.version range it supports."""

    voter_key: ReplicaKey
    endpoints: tuple = ()
    supported_kraft_version: tuple[int, int] = (0, 1)

    @classmethod
    def of(cls, voter_key: ReplicaKey, endpoints, supported_kraft_version) -> VoterNode:
        return cls(voter_key, tuple(endpoints), tuple(supported_kraft_version))

    def listeners(self) -> tuple:
        """VoterNode.listeners: its endpoints, (listener, host, port) each."""
        return self.endpoints

    def address(self, listener: str) -> tuple[str, int] | None:
        """VoterNode.address(listener): (host, port) on that listener, None without it."""
        for name, host, port in self.endpoints:
            if name == listener:
                return host, port
        return None

    def is_voter(self, key: ReplicaKey) -> bool:
        """VoterNode.isVoter: same id, and the same directory id when the voter has one."""
        if self.voter_key.id != key.id:
            return False
        if self.voter_key.directory_id is not None:
            return self.voter_key.directory_id == key.directory_id
        return True


class VoterSet:
    """org.apache.kafka.raft.VoterSet: immutable; ``add_voter`` / ``remove_voter`` return a
    new set, or None where Kafka returns Optional.empty()."""

    __slots__ = ("voters",)

    def __init__(self, voters: dict[int, VoterNode] | None = None) -> None:
        self.voters = dict(sorted((voters or {}).items()))

    @classmethod
    def empty(cls) -> VoterSet:
        return cls()

    @classmethod
    def from_map(cls, voters: dict[int, VoterNode]) -> VoterSet:
        return cls(dict(voters))

    @classmethod
    def of(cls, ids, directory_ids: dict | None = None) -> VoterSet:
        directory_ids = directory_ids or {}
        return cls({i: VoterNode(ReplicaKey(i, directory_ids.get(i)),
                                 (("CONTROLLER", f"controller{i}", 9093),)) for i in ids})

    def voter_ids(self) -> tuple[int, ...]:
        return tuple(self.voters)

    def voter_keys(self) -> tuple[ReplicaKey, ...]:
        return tuple(n.voter_key for n in self.voters.values())

    def voter_node(self, voter_id: int, listener: str | None = None):
        """The voter's VoterNode (None if not a voter); with ``listener``, Kafka's
        voterNode(id, listener): its Node on that listener, None without one."""
        node = self.voters.get(voter_id)
        if node is None or listener is None:
            return node
        address = node.address(listener)
        return None if address is None else Node(voter_id, *address)

    def voter_nodes(self, voter_ids=None, listener: str | None = None) -> set:
        """voterNodes(): every VoterNode; voterNodes(ids, listener): the Node of each id on
        ``listener`` -- an id without one is an IllegalArgumentException."""
        if voter_ids is None:
            return set(self.voters.values())
        out = set()
        for voter_id in voter_ids:
            node = self.voter_node(voter_id, listener)
            if node is None:
                raise IllegalArgumentException(f"Unable to find endpoint for voter {voter_id} "
                                               f"and listener {listener} in {self}")
            out.add(node)
        return out

    def listeners(self, voter_id: int) -> tuple:
        """listeners(id): the voter's endpoints, () (Endpoints.empty()) if not a voter."""
        node = self.voters.get(voter_id)
        return node.endpoints if node is not None else ()

    def is_voter(self, key: ReplicaKey) -> bool:
        node = self.voters.get(key.id)
        return node is not None and node.is_voter(key)

    def is_only_voter(self, key: ReplicaKey) -> bool:
        return len(self.voters) == 1 and self.is_voter(key)

    def majority_size(self) -> int:
        return len(self.voters) // 2 + 1

    def add_voter(self, voter: VoterNode) -> VoterSet | None:
        """VoterSet.addVoter: None if the id is already a voter."""
        if voter.voter_key.id in self.voters:
            return None
        return VoterSet({**self.voters, voter.voter_key.id: voter})

    def update_voter(self, voter: VoterNode) -> VoterSet | None:
        """VoterSet.updateVoter: the set with ``voter``'s entry replaced, or None unless its key
        is a voter (same id, and the same directory id where the entry has one)."""
        old = self.voters.get(voter.voter_key.id)
        if old is None or not old.is_voter(voter.voter_key):
            return None
        return VoterSet({**self.voters, voter.voter_key.id: voter})

    def update_voter_ignoring_directory_id(self, voter: VoterNode) -> VoterSet | None:
        """VoterSet.updateVoterIgnoringDirectoryId (4.1, KAFKA-16538): ``voter``'s entry
        replaced whatever directory id either has, or None unless its id is a voter."""
        if voter.voter_key.id not in self.voters:
            return None
        return VoterSet({**self.voters, voter.voter_key.id: voter})

    def supports_version(self, kraft_version: int) -> bool:
        """VoterSet.supportsVersion (4.1): every voter's supported kraft.version range holds
        ``kraft_version``."""
        return all(low <= kraft_version <= high
                   for low, high in (n.supported_kraft_version for n in self.voters.values()))

    def voter_node_needs_update(self, local: VoterNode) -> bool:
        """VoterSet.voterNodeNeedsUpdate: the node is a voter and its entry differs (listeners or
        supported kraft.version range)."""
        node = self.voters.get(local.voter_key.id)
        return node is not None and node.is_voter(local.voter_key) and node != local

    def remove_voter(self, key: ReplicaKey) -> VoterSet | None:
        """VoterSet.removeVoter: None unless the exact key is a voter and others remain."""
        old = self.voters.get(key.id)
        if old is None or old.voter_key != key or len(self.voters) <= 1:
            return None
        return VoterSet({i: n for i, n in self.voters.items() if i != key.id})

    def has_overlapping_majority(self, other: VoterSet) -> bool:
        """VoterSet.hasOverlappingMajority: the two sets differ by at most one voter each way,
        so any majority of one intersects any majority of the other."""
        mine, theirs = set(self.voter_keys()), set(other.voter_keys())
        return len(mine - theirs) <= 1 and len(theirs - mine) <= 1

    def to_voters_record(self) -> VotersRecord:
        """toVotersRecord: per voter its id, directory id (Uuid.ZERO_UUID without one),
        endpoints and KRaftVersionFeature (the supported kraft.version range)."""
        return VotersRecord(tuple(
            (n.voter_key.id, n.voter_key.directory_id or ZERO_UUID,
             tuple(f"{name}://{host}:{port}" for name, host, port in n.endpoints),
             tuple(n.supported_kraft_version))
            for n in self.voters.values()))

    @classmethod
    def from_voters_record(cls, record: VotersRecord) -> VoterSet:
        """fromVotersRecord: the inverse of ``to_voters_record`` (ZERO_UUID: no directory
        id)."""
        out = {}
        for voter_id, directory, endpoints, supported in record.voters:
            eps = []
            for e in endpoints:
                name, _, rest = e.partition("://")
                host, _, port = rest.rpartition(":")
                eps.append((name, host, int(port)))
            out[voter_id] = VoterNode(ReplicaKey(voter_id, directory), tuple(eps),
                                      tuple(supported))
        return cls(out)

    def __eq__(self, other) -> bool:
        return isinstance(other, VoterSet) and self.voters == other.voters

    __hash__ = None

    def keys_text(self) -> str:
        """voterKeys() as Java prints a Set (here in id order)."""
        return "[" + ", ".join(str(k) for k in self.voter_keys()) + "]"

    def __repr__(self) -> str:
        return f"VoterSet(voters={self.keys_text()})"


@dataclass(frozen=True)
class KRaftVersionRecord:
    """The KRaftVersionRecord control record (KIP-853): the finalized kraft.version."""

    kraft_version: int


@dataclass(frozen=True)
class VotersRecord:
    """The VotersRecord control record (KIP-853): (voter id, directory id, endpoints,
    (min, max) supported kraft.version) each."""

    voters: tuple

    def voter_ids(self) -> tuple[int, ...]:
        return tuple(v[0] for v in self.voters)


class VoterSetHistory:
    """VoterSetHistory + KRaftControlRecordStateMachine's kraft.version history: the voter set
    and kraft.version in force at each log offset. ``static`` (kraft.version 0) never changes;
    ``bootstrap`` (kraft.version 1) is the voter set of the bootstrap checkpoint (offset -1).

    ``VoterSetHistory(staticVoterSet)`` is Kafka's constructor (kraft.version 0: no entries
    until ``add_at``). ``allow_non_overlapping``: KAFKA-17973 (4.0): ``addAt`` of a voter set
    without an overlapping majority with the last one read from the log (offset >= 0) only
    logs; before (3.9) it is an IllegalArgumentException."""

    __slots__ = ("static", "entries", "kraft_versions", "next_offset", "allow_non_overlapping")

    def __init__(self, voters: VoterSet, kraft_version: int = 0, *,
                 allow_non_overlapping: bool = True) -> None:
        self.static = voters
        self.entries: list[tuple[int, VoterSet]] = [(-1, voters)] if kraft_version else []
        self.kraft_versions: list[tuple[int, int]] = [(-1, kraft_version)]
        self.next_offset = 0
        self.allow_non_overlapping = allow_non_overlapping

    def add_at(self, offset: int, voters: VoterSet) -> None:
        """VoterSetHistory.addAt (TreeMapLogHistory.addAt): ``offset`` must be >= -1 (the
        bootstrap checkpoint) and past every earlier entry, else IllegalArgumentException; a
        set whose majority does not overlap the last one from the log: see the class doc."""
        if offset < -1:
            raise IllegalArgumentException(
                f"Next offset {offset} must be greater than or equal to -1")
        last = self.entries[-1] if self.entries else None
        if last is not None and offset <= last[0]:
            raise IllegalArgumentException(
                f"Next offset {offset} must be greater than the last offset {last[0]}")
        if (last is not None and last[0] >= 0 and not self.allow_non_overlapping
                and not last[1].has_overlapping_majority(voters)):
            raise IllegalArgumentException(
                f"Last voter set {last[1]} doesn't have an overlapping majority with the new "
                f"voter set {voters}")
        self.entries.append((offset, voters))

    def value_at_or_before(self, offset: int) -> VoterSet | None:
        """valueAtOrBefore: the voter set of the newest entry at or before ``offset`` (never
        the static set), None (Optional.empty()) without one."""
        found = None
        for entry_offset, voters in self.entries:
            if entry_offset > offset:
                break
            found = voters
        return found

    def last_value(self) -> VoterSet:
        """VoterSetHistory.lastValue: the newest voter set (the static one with no records)."""
        return self.entries[-1][1] if self.entries else self.static

    def last_entry(self) -> tuple[int, VoterSet] | None:
        """lastVoterSetEntry: (offset, voter set) of the newest VotersRecord, None with none."""
        return self.entries[-1] if self.entries else None

    def last_voter_set_offset(self) -> int | None:
        """lastVoterSetOffset: the offset of the newest entry, None (OptionalLong.empty()) when
        the voter set is the static one."""
        return self.entries[-1][0] if self.entries else None

    def last_kraft_version(self) -> int:
        return self.kraft_versions[-1][1]

    def update(self, log) -> bool:
        """KRaftControlRecordStateMachine.updateState: read the log from ``next_offset`` to its
        end; True when the voter set changed."""
        changed = False
        for offset, _epoch, record in log.entries_between(self.next_offset, log.end_offset):
            if type(record) is VotersRecord:
                self.add_at(offset, VoterSet.from_voters_record(record))
                changed = True
            elif type(record) is KRaftVersionRecord:
                self.kraft_versions.append((offset, record.kraft_version))
        self.next_offset = max(self.next_offset, log.end_offset)
        return changed

    def truncate_new_entries(self, end_offset: int) -> bool:
        """VoterSetHistory.truncateNewEntries: forget what the log no longer has."""
        before = len(self.entries)
        self.entries = [e for e in self.entries if e[0] < end_offset]
        self.kraft_versions = [e for e in self.kraft_versions if e[0] < end_offset]
        self.next_offset = min(self.next_offset, end_offset)
        return len(self.entries) != before

    def truncate_old_entries(self, start_offset: int) -> None:
        """truncateOldEntries (VoterSetHistory's and KRaftControlRecordStateMachine's, which
        trims the kraft.version history too): drop the entries at or before ``start_offset``
        but the newest of them, so the answers for every offset from it on stay."""
        self.entries = _drop_older(self.entries, start_offset)
        self.kraft_versions = _drop_older(self.kraft_versions, start_offset)

    def voter_set_at_offset(self, offset: int) -> VoterSet | None:
        """KRaftControlRecordStateMachine.voterSetAtOffset: ``value_at_or_before`` of an offset
        already read (below ``next_offset``), else IllegalArgumentException."""
        self._check_offset_is_valid(offset)
        return self.value_at_or_before(offset)

    def kraft_version_at_offset(self, offset: int) -> int:
        """KRaftControlRecordStateMachine.kraftVersionAtOffset: the kraft.version in force at
        an offset already read (0 before any KRaftVersionRecord)."""
        self._check_offset_is_valid(offset)
        found = 0
        for entry_offset, version in self.kraft_versions:
            if entry_offset > offset:
                break
            found = version
        return found

    def _check_offset_is_valid(self, offset: int) -> None:
        if offset >= self.next_offset:
            raise IllegalArgumentException(
                f"Attempting the read a value at an offset ({offset}) which is greater than or "
                f"equal to the largest known offset ({self.next_offset - 1})")

    def clear(self) -> None:
        """VoterSetHistory.clear: no entries; ``last_value`` is the static set again."""
        self.entries = []


def _drop_older(entries: list, start_offset: int) -> list:
    """TreeMapLogHistory.truncateOldEntries: keep the newest entry at or before
    ``start_offset`` and every later one."""
    older = sum(1 for e in entries if e[0] <= start_offset)
    return entries[older - 1:] if older > 1 else entries
