"""The EpochStates of a KRaft replica (org.apache.kafka.raft): Unattached, Prospective,
Candidate, Leader, Follower and Resigned, and the QuorumState queries over them.

Each state knows its epoch, the leader and the vote it holds (``election()``: the
``ElectionState`` written to the quorum-state file), its timer as a deadline in the client's
virtual ms (``remaining_election_time_ms(now)``, ``has_fetch_timeout_expired(now)``...), and
whether it may grant a vote (``can_grant_vote``: the 3.x rules, and with ``pre_vote`` those of
KIP-996, 4.0). The transitions between them are KafkaRaftClient's (raft.QuorumTransitions).

Adaptation: the leader keys a voter's state by node id and an observer's by ReplicaKey, as
LeaderState does (KIP-853); the states of the other roles name replicas by id. A vote is
kept as ``voted_id`` plus
``voted_directory_id`` (``voted_key``: Kafka's ReplicaKey, KIP-853); ``can_grant_vote`` takes
the candidate's id or its ReplicaKey. Kafka's Optional answers are None (a high watermark is
-1 while unknown, as everywhere in kafkasim). Sources: apache/kafka trunk 1eb7644 (3.9 line)
{Unattached,Candidate,Follower,Resigned,Leader}State.java, 3.7.0 VotedState.java, and 4.0's
ProspectiveState.java / EpochElection.java (KIP-996).
"""

from __future__ import annotations

from kafkasim.control.kraft.kraft_version_upgrade import maybe_append_upgraded_kraft_version
from kafkasim.control.kraft.leader_and_epoch import UNKNOWN_LEADER_AND_EPOCH, LeaderAndEpoch
from kafkasim.control.kraft.quorum_state_store import ElectionState
from kafkasim.control.kraft.voter_set import ReplicaKey
from kafkasim.core.errors import IllegalArgumentException, IllegalStateException

__all__ = ["EpochState", "UnattachedState", "EpochElection", "ProspectiveState",
           "CandidateState", "ReplicaState", "LeaderState", "FollowerState", "ResignedState",
           "QuorumState", "UNKNOWN", "NEVER", "CHECK_QUORUM_TIMEOUT_FACTOR"]

UNKNOWN = -1
CHECK_QUORUM_TIMEOUT_FACTOR = 1.5  # LeaderState.CHECK_QUORUM_TIMEOUT_FACTOR (KAFKA-15489, 3.7)
NEVER = 1 << 62
ONE_HOUR_MS = 3_600_000          # LeaderState.isReplicaCaughtUp: TimeUnit.HOURS.toMillis(1)


def _key(candidate) -> ReplicaKey:
    """A candidate given by id (kafkasim's VoteRequest) or by ReplicaKey (Kafka's)."""
    return candidate if isinstance(candidate, ReplicaKey) else ReplicaKey(candidate)


def _nominee_can_grant(leader_id, voted_key, candidate, up_to_date, pre_vote) -> bool:
    """QuorumState.unattachedOrProspectiveCanGrantVote (4.0; for 3.x UnattachedState.canGrantVote
    without the pre-vote branch, and 3.7's VotedState.canGrantVote for a vote cast): a vote
    binds to its candidate, and with a voted directory id to that directory only (KIP-853)."""
    if pre_vote:
        return up_to_date
    if voted_key is not None:
        key = _key(candidate)
        if voted_key.id != key.id:
            return False
        return voted_key.directory_id is None or voted_key.directory_id == key.directory_id
    if leader_id != UNKNOWN:
        return False
    return up_to_date


class EpochState:
    """org.apache.kafka.raft.EpochState: the epoch, the leader (-1 unknown), the vote cast in
    this epoch, the high watermark (-1 unknown) and the voter ids the election names."""

    name = "?"
    leader_id = UNKNOWN
    voted_id = UNKNOWN
    voted_directory_id: str | None = None
    high_watermark = UNKNOWN
    voters: tuple = ()
    #: EpochState.leaderEndpoints() is not empty: a Follower's, a Leader's or Resigned's own;
    #: an Unattached that knows the leader does not know where to fetch from
    leader_endpoints_known = True

    def __init__(self, epoch: int):
        self.epoch = epoch

    @property
    def voted_key(self) -> ReplicaKey | None:
        """votedKey(): the candidate this replica voted for in its epoch, None without a vote."""
        if self.voted_id == UNKNOWN:
            return None
        return ReplicaKey(self.voted_id, self.voted_directory_id)

    def election(self) -> ElectionState:
        """EpochState.election: what the quorum-state file holds for this state."""
        leader = None if self.leader_id == UNKNOWN else self.leader_id
        return ElectionState(self.epoch, leader, self.voted_key, self.voters)

    def can_grant_vote(self, candidate, up_to_date: bool, pre_vote: bool = False) -> bool:
        return False


class _ElectionTimer:
    """The election timer of Unattached, Prospective, Candidate and Resigned (a deadline)."""

    election_deadline = 0

    def remaining_election_time_ms(self, now: int) -> int:
        return max(0, self.election_deadline - now)

    def has_election_timeout_expired(self, now: int) -> bool:
        return now >= self.election_deadline


class UnattachedState(_ElectionTimer, EpochState):
    """UnattachedState: no known leader (or one whose endpoints are unknown), maybe a vote cast
    (before 3.9 a replica that voted was the separate VotedState)."""

    name = "Unattached"
    leader_endpoints_known = False

    def __init__(self, epoch, election_deadline, leader_id=UNKNOWN, voted_id=UNKNOWN, hw=UNKNOWN,
                 *, voters=(), voted_directory_id=None):
        super().__init__(epoch)
        self.election_deadline = election_deadline
        self.leader_id, self.voted_id, self.high_watermark = leader_id, voted_id, hw
        self.voters = tuple(voters)
        self.voted_directory_id = voted_directory_id if voted_id != UNKNOWN else None

    def can_grant_vote(self, candidate, up_to_date, pre_vote=False):
        return _nominee_can_grant(self.leader_id, self.voted_key, candidate, up_to_date,
                                  pre_vote)


class EpochElection:
    """raft/internals/EpochElection (4.0; CandidateState's own bookkeeping before): each voter
    GRANTED, REJECTED or unrecorded. Kafka's ``new EpochElection(voterKeys)`` is
    ``EpochElection(voters)`` (ReplicaKeys or ids; nobody has voted yet); kafkasim's states
    build ``EpochElection(local_id, voter_ids)``, where the local replica has granted its own
    vote (Kafka's states call ``recordVote(localId, true)`` right after)."""

    def __init__(self, local_id, voters=None):
        if voters is None:              # Kafka's constructor: the voter keys only
            local_id, voters = None, local_id
        voters = tuple(voters)
        self.keys = {_key(v).id: (v if isinstance(v, ReplicaKey) else None) for v in voters}
        self.voters = tuple(self.keys)
        if local_id is not None and local_id not in self.voters:
            raise IllegalArgumentException(f"Local replica {local_id} must be in the set of "
                                           f"voters {list(self.voters)}")
        self.granted = {local_id} if local_id is not None else set()
        self.rejected: set[int] = set()

    def voter_ids(self) -> set[int]:
        """voterIds."""
        return set(self.voters)

    def is_granted_voter(self, voter_id: int) -> bool:
        """isGrantedVoter: a non-voter is an IllegalArgumentException."""
        self._check_voter(voter_id)
        return voter_id in self.granted

    def is_rejected_voter(self, voter_id: int) -> bool:
        """isRejectedVoter: a non-voter is an IllegalArgumentException."""
        self._check_voter(voter_id)
        return voter_id in self.rejected

    def _check_voter(self, voter_id: int) -> None:
        if voter_id not in self.keys:
            raise IllegalArgumentException(
                f"Attempt to access voter state of non-voter {voter_id}")

    def majority_size(self) -> int:
        return len(self.voters) // 2 + 1

    def is_vote_granted(self) -> bool:
        return len(self.granted) >= self.majority_size()

    def is_vote_rejected(self) -> bool:
        unrecorded = len(self.voters) - len(self.granted) - len(self.rejected)
        return len(self.granted) + unrecorded < self.majority_size()

    def unrecorded_voters(self) -> list:
        """unrecordedVoters: the voters not heard from -- their ReplicaKeys (a set) when built
        from keys as Kafka's is, else their ids (a list, in voter order)."""
        ids = [v for v in self.voters if v not in self.granted and v not in self.rejected]
        if any(k is None for k in self.keys.values()):
            return ids
        return {self.keys[v] for v in ids}

    def granting_voters(self) -> set[int]:
        return set(self.granted)

    def rejecting_voters(self) -> set[int]:
        return set(self.rejected)

    def record_vote(self, voter: int, granted: bool) -> bool:
        """recordVote: True when the voter had not been recorded yet; a non-voter is an
        IllegalArgumentException. A recorded vote may change (4.0: a PreVote can; the
        Candidate's own guard is CandidateState.record_granted_vote / record_rejected_vote)."""
        self._check_voter(voter)
        recorded = voter not in self.granted and voter not in self.rejected
        (self.rejected if granted else self.granted).discard(voter)
        (self.granted if granted else self.rejected).add(voter)
        return recorded


class _Nominee(_ElectionTimer, EpochState):
    """What Prospective and Candidate share: the votes of an election in their epoch
    (CandidateState.isVoteGranted / recordGrantedVote / unrecordedVoters...)."""

    epoch_election: EpochElection

    def is_vote_granted(self) -> bool:
        return self.epoch_election.is_vote_granted()

    def is_vote_rejected(self) -> bool:
        return self.epoch_election.is_vote_rejected()

    def record_granted_vote(self, voter: int) -> bool:
        return self.epoch_election.record_vote(voter, True)

    def record_rejected_vote(self, voter: int) -> bool:
        return self.epoch_election.record_vote(voter, False)

    def unrecorded_voters(self) -> set[int]:
        return set(self.epoch_election.unrecorded_voters())

    def granting_voters(self) -> set[int]:
        return self.epoch_election.granting_voters()

    def rejecting_voters(self) -> set[int]:
        return self.epoch_election.rejecting_voters()


class ProspectiveState(_Nominee):
    """ProspectiveState (KIP-996, 4.0): sends PreVotes in the current epoch; keeps the last
    known leader and any vote cast in this epoch."""

    name = "Prospective"

    def __init__(self, local_id, epoch, voters, election_deadline, retries, leader_id,
                 voted_id, hw, leader_endpoints_known=True, *, voted_directory_id=None):
        super().__init__(epoch)
        self.leader_endpoints_known = leader_endpoints_known
        self.epoch_election = EpochElection(local_id, voters)
        self.voters, self.local_id = self.epoch_election.voters, local_id
        self.election_deadline, self.retries = election_deadline, retries
        self.leader_id, self.voted_id, self.high_watermark = leader_id, voted_id, hw
        self.voted_directory_id = voted_directory_id if voted_id != UNKNOWN else None
        self.backing_off = False

    def record_rejected_vote(self, voter: int) -> bool:
        """ProspectiveState.recordRejectedVote: never from the local replica."""
        if voter == self.local_id:
            raise IllegalArgumentException("Attempted to reject vote from ourselves")
        return self.epoch_election.record_vote(voter, False)

    def can_grant_vote(self, candidate, up_to_date, pre_vote=False):
        return _nominee_can_grant(self.leader_id, self.voted_key, candidate, up_to_date,
                                  pre_vote)


class CandidateState(_Nominee):
    """CandidateState: voted for itself in a bumped epoch; backs off after losing or timing out.
    The local replica must be one of ``voters`` (IllegalArgumentException otherwise)."""

    name = "Candidate"
    leader_endpoints_known = False

    def __init__(self, local_id, epoch, voters, election_deadline, retries, hw, *,
                 local_directory_id=None):
        super().__init__(epoch)
        self.epoch_election = EpochElection(local_id, voters)
        self.voters = self.epoch_election.voters
        self.voted_id, self.voted_directory_id = local_id, local_directory_id
        self.election_deadline, self.retries, self.high_watermark = election_deadline, retries, hw
        self.backing_off = False
        self.backoff_deadline = 0

    def record_granted_vote(self, voter: int) -> bool:
        """CandidateState.recordGrantedVote: a voter that rejected cannot grant."""
        if voter in self.epoch_election.rejected:
            raise IllegalArgumentException(f"Attempt to grant vote from node {voter} which "
                                           "previously rejected our request")
        return self.epoch_election.record_vote(voter, True)

    def record_rejected_vote(self, voter: int) -> bool:
        """CandidateState.recordRejectedVote: a voter that granted (the local one included)
        cannot reject."""
        if voter in self.epoch_election.granted:
            raise IllegalArgumentException(f"Attempt to reject vote from node {voter} which "
                                           "previously granted our request")
        return self.epoch_election.record_vote(voter, False)

    def can_grant_vote(self, candidate, up_to_date, pre_vote=False):
        return pre_vote and up_to_date   # 4.0: a Candidate grants PreVotes to up-to-date logs


def _voter_nodes(voters) -> list[tuple[ReplicaKey, tuple]]:
    """(key, listeners) of each voter: ``voters`` is a VoterSet (Kafka's) or voter ids /
    ReplicaKeys (kafkasim's static quorums), by ascending id."""
    if hasattr(voters, "voter_keys"):
        return [(k, voters.listeners(k.id)) for k in voters.voter_keys()]
    return sorted(((_key(v), ()) for v in voters), key=lambda kv: kv[0].id)


class ReplicaState:
    """LeaderState.ReplicaState: a voter's or observer's fetch progress as the leader sees it,
    under its ReplicaKey (KIP-853: id and directory id; a key without a directory id matches
    any directory of that id)."""

    __slots__ = ("replica_id", "replica_key", "listeners", "end_offset", "last_fetch_timestamp",
                 "last_fetch_leader_leo", "last_caught_up_timestamp", "has_acknowledged_leader")

    def __init__(self, replica_id, acknowledged=False, listeners=()):
        self.replica_key = _key(replica_id)
        self.replica_id = self.replica_key.id
        self.listeners = tuple(listeners)
        self.end_offset = None
        self.last_fetch_timestamp = -1
        self.last_fetch_leader_leo = -1
        self.last_caught_up_timestamp = -1
        self.has_acknowledged_leader = acknowledged

    def matches_key(self, key) -> bool:
        """ReplicaState.matchesKey: same id, and the same directory id if this state has one."""
        key = _key(key)
        if self.replica_key.id != key.id:
            return False
        own = self.replica_key.directory_id
        return own is None or own == key.directory_id

    def set_replica_key(self, key: ReplicaKey) -> None:
        """ReplicaState.setReplicaKey: a voter's key may gain a directory id, never change
        its id or a directory id it has (IllegalArgumentException)."""
        if key.id != self.replica_key.id:
            raise IllegalArgumentException(f"Attempting to update the replica key "
                                           f"{self.replica_key} with a different replica id {key}")
        if self.replica_key.directory_id is not None and key != self.replica_key:
            raise IllegalArgumentException(
                f"Attempting to update an already set directory id {self.replica_key} with a "
                f"different directory id {key}")
        self.replica_key = key

    def update_follower_state(self, now, fetch_offset, leader_leo) -> None:
        """ReplicaState.updateFollowerState: caught up when the fetch reaches the leader LEO,
        or the leader LEO of the previous fetch (then caught up as of that fetch); an unknown
        leader LEO (None) leaves the caught-up time alone."""
        if leader_leo is not None:
            if fetch_offset >= leader_leo:
                self.last_caught_up_timestamp = max(self.last_caught_up_timestamp, now)
            elif self.last_fetch_leader_leo > 0 and fetch_offset >= self.last_fetch_leader_leo:
                self.last_caught_up_timestamp = max(self.last_caught_up_timestamp,
                                                    self.last_fetch_timestamp)
            self.last_fetch_leader_leo = leader_leo
        self.last_fetch_timestamp = max(self.last_fetch_timestamp, now)
        self.end_offset = fetch_offset
        self.has_acknowledged_leader = True


class LeaderState(EpochState):
    """LeaderState: per-voter end offsets, the high watermark and the check-quorum and
    BeginQuorumEpoch timers. ``voters`` is the voter set at the epoch start: a VoterSet, or
    voter ids / ReplicaKeys. Voter states are keyed by id and carry the voter's ReplicaKey;
    observer states are keyed by ReplicaKey (KIP-853): a fetch from a voter's id with another
    directory id (a replaced disk) is an observer's and moves neither the high watermark nor
    the check-quorum timer."""

    name = "Leader"

    def __init__(self, local_id, epoch, epoch_start_offset, voters, granting, now, fetch_timeout,
                 *, local_directory_id=None):
        super().__init__(epoch)
        self.leader_id = local_id
        self.local_key = ReplicaKey(local_id, local_directory_id)
        self.epoch_start_offset = epoch_start_offset
        self.granting_voters = tuple(sorted(granting))
        self.voter_states = {}
        self.local_listeners: tuple = ()
        for key, listeners in _voter_nodes(voters):
            mine = key.id == local_id and key.directory_id in (None, local_directory_id)
            self.voter_states[key.id] = ReplicaState(key, mine, listeners)
            if key.id == local_id:
                self.local_listeners = tuple(listeners)
        self.observer_states: dict[ReplicaKey, ReplicaState] = {}
        self.fetched_voters: set[int] = set()
        self.check_quorum_timeout = int(fetch_timeout * CHECK_QUORUM_TIMEOUT_FACTOR)
        self.check_quorum_deadline = now + self.check_quorum_timeout
        self.begin_quorum_epoch_timeout = fetch_timeout // 2
        self.begin_quorum_epoch_deadline = now
        self.resign_requested = False
        self.pending: list = []          # BatchAccumulator: appended, not yet drained
        self.linger_deadline = NEVER
        # KIP-853: AddVoterHandlerState / RemoveVoterHandlerState (raft_reconfig)
        self.add_voter_state = None
        self.remove_voter_state = None
        # LeaderState.volatileVoters (4.1+, kraft.version 0): voter id -> (directory id,
        # supported kraft.version range) as the voters' UpdateRaftVoter requests told it
        self.volatile_voters: dict[int, tuple] | None = None
        # KRaftVersionUpgrade.Version: the kraft.version this leader appended in its epoch
        self.upgraded_kraft_version: int | None = None

    @property
    def voters(self) -> tuple[int, ...]:
        """The voter ids the election names (LeaderState.election: voterStates' keys)."""
        return tuple(self.voter_states)

    def leader_endpoints(self) -> tuple:
        """LeaderState.leaderEndpoints: the local listeners, as the voter set names them."""
        return self.local_listeners

    def maybe_append_upgraded_kraft_version(self, current_epoch: int, new_version: int,
                                            persisted_version: int, persisted_voters,
                                            validate_only: bool, current_time_ms: int, *,
                                            append_control=None) -> bool:
        """LeaderState.maybeAppendUpgradedKRaftVersion (4.1+): see
        kafkasim.control.kraft.kraft_version_upgrade."""
        return maybe_append_upgraded_kraft_version(
            self, current_epoch, new_version, persisted_version, persisted_voters, validate_only,
            current_time_ms, append_control)

    # --- timers ------------------------------------------------------------------------------
    def time_until_begin_quorum_epoch_timer_expires(self, now) -> int:
        """The BeginQuorumEpoch heartbeat is due now (0) or in so many ms (3.9+)."""
        return max(0, self.begin_quorum_epoch_deadline - now)

    def reset_begin_quorum_epoch_timer(self, now) -> None:
        self.begin_quorum_epoch_deadline = now + self.begin_quorum_epoch_timeout

    def need_to_send_begin_quorum_requests(self, now) -> list[int]:
        """LeaderState.needToSendBeginQuorumRequests (4.2+, KAFKA-16926): the remote voters
        that have not fetched for beginQuorumEpochTimeoutMs (fetch.timeout / 2), in id order."""
        return [v for v, rs in self.voter_states.items() if v != self.leader_id
                and now - rs.last_fetch_timestamp >= self.begin_quorum_epoch_timeout]

    def time_until_check_quorum_expires(self, now) -> int:
        """LeaderState.timeUntilCheckQuorumExpires: never for a single voter."""
        if len(self.voter_states) == 1:
            return NEVER
        return max(0, self.check_quorum_deadline - now)

    def update_check_quorum_for_following_voter(self, replica, now) -> None:
        """A fetch from ``replica`` (id or ReplicaKey): once a majority of voters (the leader
        counts implicitly when it is one) fetched, the check-quorum timer starts again."""
        self._update_fetched_voters(_key(replica))
        majority = len(self.voter_states) // 2 + 1
        if self.leader_id in self.voter_states:
            majority -= 1        # the leader counts implicitly
        if len(self.fetched_voters) >= majority:
            self.fetched_voters.clear()
            self.check_quorum_deadline = now + self.check_quorum_timeout

    def _update_fetched_voters(self, key: ReplicaKey) -> None:
        if key.id == self.leader_id:
            raise IllegalArgumentException(
                "Received a FETCH/FETCH_SNAPSHOT request from the leader itself.")
        state = self.voter_states.get(key.id)
        if state is not None and state.matches_key(key):
            self.fetched_voters.add(key.id)

    # --- acknowledgements ----------------------------------------------------------------------
    def add_acknowledgement_from(self, remote_node_id: int) -> None:
        """LeaderState.addAcknowledgementFrom: a voter answered BeginQuorumEpoch; a non-voter
        is an IllegalArgumentException."""
        state = self.voter_states.get(remote_node_id)
        if state is None:
            raise IllegalArgumentException(
                f"Unexpected acknowledgement from non-voter {remote_node_id}")
        state.has_acknowledged_leader = True

    def non_acknowledging_voters(self) -> set[ReplicaKey]:
        return {s.replica_key for s in self.voter_states.values()
                if not s.has_acknowledged_leader}

    # --- replica states ------------------------------------------------------------------------
    def get_replica_state(self, replica) -> ReplicaState | None:
        """LeaderState.getReplicaState: the voter's state if the key matches it, else the
        observer's (None: unknown)."""
        key = _key(replica)
        state = self.voter_states.get(key.id)
        if state is None or not state.matches_key(key):
            state = self.observer_states.get(key)
        return state

    def _get_or_create_replica_state(self, key: ReplicaKey) -> ReplicaState:
        state = self.voter_states.get(key.id)
        if state is None or not state.matches_key(key):
            state = self.observer_states.setdefault(key, ReplicaState(key))
        return state

    def is_voter(self, replica) -> bool:
        state = self.voter_states.get(_key(replica).id)
        return state is not None and state.matches_key(replica)

    def is_replica_caught_up(self, replica, now: int) -> bool:
        """LeaderState.isReplicaCaughtUp (AddVoter): an observer that caught up with the
        leader's end offset at some fetch and fetched within the last hour."""
        state = self.observer_states.get(_key(replica))
        return (state is not None and state.last_caught_up_timestamp > 0
                and state.last_fetch_timestamp > 0
                and state.last_fetch_timestamp > now - ONE_HOUR_MS)

    def _followers_by_descending_end_offset(self) -> list[ReplicaState]:
        """ReplicaState.compareTo: known end offsets descending, then replica id; unknown last."""
        return sorted(self.voter_states.values(),
                      key=lambda s: (s.end_offset is None, -(s.end_offset or 0), s.replica_id))

    def non_leader_voters_by_descending_fetch_offset(self) -> tuple[int, ...]:
        return tuple(s.replica_id for s in self._followers_by_descending_end_offset()
                     if not s.matches_key(self.local_key))

    def maybe_update_high_watermark(self) -> bool:
        """LeaderState.maybeUpdateHighWatermark: the offset replicated on a majority of voters
        (the leader counts), only once it is past the epoch start offset -- the leader must
        commit an entry of its own epoch before exposing anything (KIP-595)."""
        ordered = self._followers_by_descending_end_offset()
        candidate = ordered[len(self.voter_states) // 2].end_offset
        if candidate is None or candidate <= self.epoch_start_offset:
            return False
        if self.high_watermark == UNKNOWN or candidate > self.high_watermark:
            self.high_watermark = candidate
            return True
        return False

    def update_voter_and_observer_states(self, voters) -> None:
        """LeaderState.updateVoterAndObserverStates: the states of the current voter set
        (``voters``: a VoterSet, or ids / ReplicaKeys), kept from the voter or observer whose
        key matches (its key gains the voter's directory id); voters that left become
        observers."""
        old = dict(self.voter_states)
        new = {}
        for key, listeners in _voter_nodes(voters):
            state = self.get_replica_state(key) or ReplicaState(key, False, listeners)
            old.pop(key.id, None)
            self.observer_states.pop(key, None)
            state.set_replica_key(key)
            state.listeners = tuple(listeners)
            new[key.id] = state
        self.voter_states = new
        for state in old.values():
            state.listeners = ()
            self.observer_states.setdefault(state.replica_key, state)
        self.fetched_voters &= set(new)

    def update_local_state(self, leo: int, last_voter_set=None) -> bool:
        """LeaderState.updateLocalState: the leader's own end offset (never backwards:
        IllegalStateException), then the voter set (when given), then maybe a new high
        watermark."""
        state = self._get_or_create_replica_state(self.local_key)
        if state.end_offset is not None and state.end_offset > leo:
            raise IllegalStateException(f"Detected non-monotonic update of local end offset: "
                                        f"{state.end_offset} -> {leo}")
        state.end_offset = leo
        if last_voter_set is not None:
            self.update_voter_and_observer_states(last_voter_set)
        return self.maybe_update_high_watermark()

    def update_replica_state(self, replica, now, fetch_offset, leader_leo=None) -> bool:
        """LeaderState.updateReplicaState: ``replica`` (id or ReplicaKey) fetched at
        ``fetch_offset``; ``leader_leo`` defaults to the leader's own end offset. True when
        the high watermark moved (only a voter's fetch moves it). A negative id (not a
        replica) is ignored; the leader's own id is an IllegalStateException."""
        key = _key(replica)
        if key.id < 0:
            return False
        if key.id == self.leader_id:
            raise IllegalStateException(f"Remote replica ID {key} matches the local leader ID")
        state = self._get_or_create_replica_state(key)
        if leader_leo is None:
            local = self.get_replica_state(self.local_key)
            leader_leo = local.end_offset if local is not None else None
        state.update_follower_state(now, fetch_offset, leader_leo)
        self.update_check_quorum_for_following_voter(key, now)
        return self.is_voter(state.replica_key) and self.maybe_update_high_watermark()


class FollowerState(EpochState):
    """FollowerState: fetches from a known leader; the fetch timer expires without responses."""

    name = "Follower"

    def __init__(self, epoch, leader_id, fetch_deadline, voted_id, hw, *, voters=(),
                 voted_directory_id=None, fetch_timeout_ms=None):
        super().__init__(epoch)
        self.leader_id, self.voted_id, self.high_watermark = leader_id, voted_id, hw
        self.voters = tuple(voters)
        self.voted_directory_id = voted_directory_id if voted_id != UNKNOWN else None
        self.fetch_deadline = fetch_deadline
        # controller.quorum.fetch.timeout.ms (None: a state made at time 0, as Kafka's tests)
        self.fetch_timeout_ms = fetch_deadline if fetch_timeout_ms is None else fetch_timeout_ms
        self.has_fetched_from_leader = False
        # FollowerState.hasUpdatedLeader (4.1+): this epoch's leader answered UpdateRaftVoter
        self.has_updated_leader = False
        # FollowerState.fetchingSnapshot (KIP-630): the writer of the snapshot being fetched
        self.fetching_snapshot = None

    def set_fetching_snapshot(self, writer) -> None:
        """setFetchingSnapshot: the snapshot being downloaded (None: none); a previous one
        that was not frozen is closed."""
        if self.fetching_snapshot is not None:
            self.fetching_snapshot.close()
        self.fetching_snapshot = writer

    def remaining_fetch_time_ms(self, now: int) -> int:
        return max(0, self.fetch_deadline - now)

    def has_fetch_timeout_expired(self, now: int) -> bool:
        return now >= self.fetch_deadline

    def reset_fetch_timeout_for_successful_fetch(self, now: int) -> None:
        """resetFetchTimeoutForSuccessfulFetch: the fetch timer restarts, and from now on
        PreVotes are refused (hasFetchedFromLeader)."""
        self.fetch_deadline = now + self.fetch_timeout_ms
        self.has_fetched_from_leader = True

    def set_has_updated_leader(self) -> None:
        """setHasUpdatedLeader (4.1+): no more UpdateRaftVoter to this epoch's leader."""
        self.has_updated_leader = True

    def update_high_watermark(self, high_watermark: int | None) -> bool:
        """FollowerState.updateHighWatermark: True when it moved. A known high watermark never
        becomes unknown (None) or negative, nor moves back: IllegalArgumentException."""
        old = self.high_watermark
        if high_watermark is None:
            if old != UNKNOWN:
                raise IllegalArgumentException(f"Attempt to overwrite current high watermark "
                                               f"{old} with unknown value")
            return True        # (Kafka answers true here too: unknown stays unknown)
        if old != UNKNOWN:
            if high_watermark < 0:
                raise IllegalArgumentException(
                    f"Illegal negative ({high_watermark}) high watermark update")
            if old > high_watermark:
                raise IllegalArgumentException(f"Non-monotonic update of high watermark from "
                                               f"{old} to {high_watermark}")
            if old == high_watermark:
                return False
        self.high_watermark = high_watermark
        return True

    def can_grant_vote(self, candidate, up_to_date, pre_vote=False):
        # 4.0 (KIP-996): a PreVote is granted only before the first successful fetch.
        return pre_vote and not self.has_fetched_from_leader and up_to_date


class ResignedState(_ElectionTimer, EpochState):
    """ResignedState: a leader that stepped down (or restarted as leader) in its epoch; sends
    EndQuorumEpoch until acknowledged."""

    name = "Resigned"

    def __init__(self, local_id, epoch, voters, election_deadline, preferred_successors):
        super().__init__(epoch)
        self.leader_id = local_id
        self.voters = tuple(sorted(voters))
        self.unacked_voters = [v for v in self.voters if v != local_id]
        self.election_deadline = election_deadline
        self.preferred_successors = tuple(preferred_successors)

    def acknowledge_resignation(self, voter_id: int) -> None:
        """ResignedState.acknowledgeResignation: ``voter_id`` answered the EndQuorumEpoch."""
        if voter_id not in self.voters:
            raise IllegalArgumentException("Attempt to acknowledge delivery of `EndQuorumEpoch` "
                                           f"by a non-voter {voter_id}")
        if voter_id in self.unacked_voters:
            self.unacked_voters.remove(voter_id)

    def can_grant_vote(self, candidate, up_to_date, pre_vote=False):
        return pre_vote and up_to_date


class QuorumState:
    """org.apache.kafka.raft.QuorumState's queries, as ``KafkaRaftClient.quorum()`` answers
    them: the client holds the state (``client.state``) and makes the transitions; this reads
    them under Kafka's names. ``is_voter(key)`` asks the newest voter set (committed or not);
    ``is_voter()`` asks about the local replica (id and directory id)."""

    __slots__ = ("client",)

    def __init__(self, client) -> None:
        self.client = client

    def _state_is(self, name: str) -> bool:
        st = self.client.state
        return st is not None and st.name == name

    def epoch(self) -> int:
        return self.client.epoch

    def leader_id(self) -> int | None:
        """leaderId(): None when unknown (Kafka's OptionalInt)."""
        leader = self.client.leader_id
        return None if leader == UNKNOWN else leader

    def leader_id_or_sentinel(self) -> int:
        return self.client.leader_id

    def leader_and_epoch(self) -> LeaderAndEpoch:
        """leaderAndEpoch(): the current state's election as a LeaderAndEpoch (before the
        client started: LeaderAndEpoch.UNKNOWN, as KafkaRaftClient.leaderAndEpoch answers)."""
        election = self.election()
        if election is None:
            return UNKNOWN_LEADER_AND_EPOCH
        return LeaderAndEpoch(election.leader_id, election.epoch)

    def local_id_or_sentinel(self) -> int:
        return self.client.node_id

    def local_replica_key(self) -> ReplicaKey:
        return ReplicaKey(self.client.node_id, self.client.reconfig.directory_id)

    def is_voter(self, key=None) -> bool:
        """isVoter() for the local replica, isVoter(ReplicaKey) for another (an id alone
        matches a voter of any directory id only where the voter set has none)."""
        key = self.local_replica_key() if key is None else _key(key)
        return self.client.reconfig.history.last_value().is_voter(key)

    def is_observer(self) -> bool:
        return not self.is_voter()

    def is_only_voter(self) -> bool:
        return self.client.reconfig.history.last_value().is_only_voter(self.local_replica_key())

    def high_watermark(self) -> int | None:
        """highWatermark(): None while unknown."""
        hw = self.client.high_watermark
        return None if hw == UNKNOWN else hw

    def election(self) -> ElectionState | None:
        st = self.client.state
        return st.election() if st is not None else None

    def is_leader(self) -> bool:
        return self._state_is("Leader")

    def is_resigned(self) -> bool:
        return self._state_is("Resigned")

    def is_follower(self) -> bool:
        return self._state_is("Follower")

    def is_candidate(self) -> bool:
        return self._state_is("Candidate")

    def is_prospective(self) -> bool:
        return self._state_is("Prospective")

    def is_unattached(self) -> bool:
        return self._state_is("Unattached")

    def is_unattached_and_voted(self) -> bool:
        return self.is_unattached() and self.client.state.voted_id != UNKNOWN

    def is_unattached_not_voted(self) -> bool:
        return self.is_unattached() and self.client.state.voted_id == UNKNOWN

    def has_leader(self) -> bool:
        return self.client.leader_id != UNKNOWN

    def has_remote_leader(self) -> bool:
        return self.has_leader() and self.client.leader_id != self.client.node_id
