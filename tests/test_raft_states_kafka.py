"""KRaft epoch states, the voter set and dynamic quorums, ported from Kafka's raft unit tests.

Sources: apache/kafka trunk 1eb7644 (2024-10-25, the 3.9 line), raft/src/test/java/org/apache/
kafka/raft/: CandidateStateTest, FollowerStateTest, UnattachedStateTest,
UnattachedStateWithVoteTest, ResignedStateTest, VoterSetTest and KafkaRaftClientReconfigTest;
VotedStateTest from 3.7.0 (the separate VotedState before KAFKA-17067, 3.9). Where 4.x changed
a case (KIP-996 Pre-Vote, 4.0: ``canGrantVote(key, isLogUpToDate, isPreVote)``; KAFKA-16538,
4.1: UpdateRaftVoter on a static quorum and the kraft.version upgrade) the 4.x expectation runs
too, with kafkasim's switch for it (``pre_vote=True``, ``update_voter_static=True``).
tests/test_raft_quorum_state_kafka.py and tests/test_raft_client_kafka.py port QuorumStateTest,
LeaderStateTest and KafkaRaftClientTest; tests/test_kraft_reconfig.py drives KIP-853 through the
cluster façade. This file drives the state classes and one KafkaRaftClient directly.

Adaptation to kafkasim (kafkasim.control.kraft.epoch_states, raft, voter_set):

- A state's timer is a deadline in virtual ms: ``new XState(time, ..., electionTimeoutMs)`` at
  time 0 is ``XState(..., election_deadline=electionTimeoutMs)``; ``time.sleep`` moves ``now``.
  States key replicas by id: ``CandidateState(local_id, epoch, voter_ids, deadline, retries,
  hw, local_directory_id=...)``; ``unrecordedVoters()`` (Kafka: ReplicaKeys) are ids. A vote
  is ``voted_id`` + ``voted_directory_id`` (``voted_key`` is Kafka's votedKey);
  ``can_grant_vote`` takes the candidate's id or ReplicaKey. ``leaderEndpoints()`` empty or
  not is ``leader_endpoints_known``. Kafka's Optional answers are None, a high watermark -1.
- ``Uuid.randomUuid()`` is a fresh string (``new_uuid``); ``ReplicaKey.NO_DIRECTORY_ID`` is
  None. Endpoints are ``(listener, host, port)`` tuples; ``Node`` is voter_set.Node.
- ``RaftClientTestContext`` with ``withKip853Rpc(true).withBootstrapSnapshot(voters)`` is
  ``build853``: a KafkaRaftClient at kraft.version 1 whose bootstrap checkpoint holds
  ``voters`` (``withStaticVoters``: kraft.version 0, voters without directory ids), on the
  recording context of tests/test_raft_client_kafka.py (``Ctx``: ``deliver`` = deliverRequest +
  poll). kafkasim's default listener is CONTROLLER (Kafka's test channel: LISTENER). The
  admin client's AddRaftVoter / RemoveRaftVoter come from node ``ADMIN``; the leader sends
  ApiVersions to the new voter's id (Kafka: to its Node on the default listener).

Left out: the cluster-id checks (testAddVoterInvalidClusterId, testRemoveVoterInvalidClusterId,
testUpdateVoterInvalidClusterId: kafkasim runs one cluster, no cluster ids), snapshots
(testFollowerDoesNotRequestLeaderBootstrapSnapshot, the bootstrap-checkpoint reading of
testLeaderWritesBootstrapRecords: no snapshots / FetchSnapshot), bootstrap servers that are
not voters (testObserverDiscoversLeaderWithUnknownVoters: kafkasim's bootstrap servers are the
voter ids), leader endpoints in BeginQuorumEpoch (testHandleBeginQuorumRequestMoreEndpoints:
messages carry no endpoints), the metrics of 4.x (testLeaderMetricsAreReset) and KIP-1186's
AddVoter without waiting for the commit (4.2, not modelled).
"""

from __future__ import annotations

import itertools

import pytest
from test_raft_client_kafka import (
    ELECTION_TIMEOUT_MS,
    FETCH_TIMEOUT_MS,
    REQUEST_TIMEOUT_MS,
    TEST_CONFIG,
    Ctx,
    become_leader,
)

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft.epoch_states import (
    UNKNOWN,
    CandidateState,
    FollowerState,
    ResignedState,
    UnattachedState,
)
from kafkasim.control.kraft.quorum_state_store import ElectionState
from kafkasim.control.kraft.raft import KafkaRaftClient, RaftLog
from kafkasim.control.kraft.voter_set import (
    KRaftVersionRecord,
    Node,
    ReplicaKey,
    VoterNode,
    VoterSet,
    VotersRecord,
)
from kafkasim.core.errors import IllegalArgumentException

_uuids = itertools.count(1)


def new_uuid() -> str:
    """Uuid.randomUuid(): a directory id no other key has."""
    return f"dir-{next(_uuids):04d}-xxxxxxxxxxxx"


def replica_key(replica_id: int, with_directory_id: bool) -> ReplicaKey:
    return ReplicaKey(replica_id, new_uuid() if with_directory_id else None)


# --- CandidateStateTest --------------------------------------------------------------------------
LOCAL_KEY = ReplicaKey(0, new_uuid())
EPOCH = 5


def new_candidate_state(voter_ids) -> CandidateState:
    """newCandidateState: epoch 5, no high watermark, 0 retries, election timeout 5000."""
    return CandidateState(LOCAL_KEY.id, EPOCH, voter_ids, 5000, 0, UNKNOWN,
                          local_directory_id=LOCAL_KEY.directory_id)


def test_single_node_quorum():
    """testSingleNodeQuorum: a lone voter has won its election at once."""
    state = new_candidate_state((0,))
    assert state.is_vote_granted() and not state.is_vote_rejected()
    assert state.unrecorded_voters() == set()


def test_two_node_quorum_vote_rejected():
    """testTwoNodeQuorumVoteRejected."""
    state = new_candidate_state((0, 1))
    assert not state.is_vote_granted() and not state.is_vote_rejected()
    assert state.unrecorded_voters() == {1}
    assert state.record_rejected_vote(1)
    assert not state.is_vote_granted() and state.is_vote_rejected()


def test_two_node_quorum_vote_granted():
    """testTwoNodeQuorumVoteGranted."""
    state = new_candidate_state((0, 1))
    assert not state.is_vote_granted() and not state.is_vote_rejected()
    assert state.unrecorded_voters() == {1}
    assert state.record_granted_vote(1)
    assert state.unrecorded_voters() == set()
    assert not state.is_vote_rejected() and state.is_vote_granted()


def test_three_node_quorum_vote_granted():
    """testThreeNodeQuorumVoteGranted: one grant is a majority of three."""
    state = new_candidate_state((0, 1, 2))
    assert not state.is_vote_granted() and not state.is_vote_rejected()
    assert state.unrecorded_voters() == {1, 2}
    assert state.record_granted_vote(1)
    assert state.unrecorded_voters() == {2}
    assert state.is_vote_granted() and not state.is_vote_rejected()
    assert state.record_rejected_vote(2)
    assert state.unrecorded_voters() == set()
    assert state.is_vote_granted() and not state.is_vote_rejected()


def test_three_node_quorum_vote_rejected():
    """testThreeNodeQuorumVoteRejected: two rejections lose an election of three."""
    state = new_candidate_state((0, 1, 2))
    assert state.unrecorded_voters() == {1, 2}
    assert state.record_rejected_vote(1)
    assert state.unrecorded_voters() == {2}
    assert not state.is_vote_granted() and not state.is_vote_rejected()
    assert state.record_rejected_vote(2)
    assert state.unrecorded_voters() == set()
    assert not state.is_vote_granted() and state.is_vote_rejected()


def test_cannot_reject_vote_from_local_id():
    """testCannotRejectVoteFromLocalId: the candidate granted itself."""
    state = new_candidate_state((0, 1))
    with pytest.raises(IllegalArgumentException):
        state.record_rejected_vote(LOCAL_KEY.id)


def test_cannot_change_vote_granted_to_rejected():
    """testCannotChangeVoteGrantedToRejected."""
    state = new_candidate_state((0, 1))
    assert state.record_granted_vote(1)
    with pytest.raises(IllegalArgumentException):
        state.record_rejected_vote(1)
    assert state.is_vote_granted()


def test_cannot_change_vote_rejected_to_granted():
    """testCannotChangeVoteRejectedToGranted."""
    state = new_candidate_state((0, 1))
    assert state.record_rejected_vote(1)
    with pytest.raises(IllegalArgumentException):
        state.record_granted_vote(1)
    assert state.is_vote_rejected()


def test_cannot_grant_or_reject_non_voters():
    """testCannotGrantOrRejectNonVoters."""
    state = new_candidate_state((0,))
    with pytest.raises(IllegalArgumentException):
        state.record_granted_vote(1)
    with pytest.raises(IllegalArgumentException):
        state.record_rejected_vote(1)


def test_idempotent_grant():
    """testIdempotentGrant: a second grant from the same voter records nothing new."""
    state = new_candidate_state((0, 1))
    assert state.record_granted_vote(1)
    assert not state.record_granted_vote(1)


def test_idempotent_reject():
    """testIdempotentReject."""
    state = new_candidate_state((0, 1))
    assert state.record_rejected_vote(1)
    assert not state.record_rejected_vote(1)


@pytest.mark.parametrize("up_to_date", [True, False])
@pytest.mark.parametrize("with_directory_id", [True, False])
def test_candidate_grant_vote(up_to_date, with_directory_id):
    """CandidateStateTest.testGrantVote: a Candidate grants no standard vote (3.9, 4.x); from
    4.0 (KIP-996) it grants a PreVote to an up-to-date log."""
    state = new_candidate_state((0, 1, 2, 3))
    for voter in range(4):
        key = replica_key(voter, with_directory_id)
        assert not state.can_grant_vote(key, up_to_date)
        assert state.can_grant_vote(key, up_to_date, True) == up_to_date
        assert not state.can_grant_vote(key, up_to_date, False)


def test_election_state():
    """testElectionState: a Candidate's election is its vote for itself, with its directory
    id, in its epoch."""
    state = new_candidate_state((0, 1, 2, 3))
    assert state.election() == ElectionState.with_voted_candidate(EPOCH, LOCAL_KEY, {0, 1, 2, 3})


def test_invalid_voter_set():
    """testInvalidVoterSet: the local replica must be a voter."""
    with pytest.raises(IllegalArgumentException):
        new_candidate_state((1, 2, 3))


def test_candidate_leader_endpoints():
    """CandidateStateTest.testLeaderEndpoints: a Candidate knows no leader endpoints."""
    assert not new_candidate_state((0, 1, 2, 3)).leader_endpoints_known


# --- FollowerStateTest ---------------------------------------------------------------------------
FOLLOWER_FETCH_TIMEOUT_MS = 15000
FOLLOWER_LEADER = 3


def new_follower_state(voters=(1, 2, 3)) -> FollowerState:
    """newFollowerState: epoch 5, leader 3, fetch timeout 15000, no high watermark."""
    return FollowerState(EPOCH, FOLLOWER_LEADER, FOLLOWER_FETCH_TIMEOUT_MS, UNKNOWN, UNKNOWN,
                         voters=voters)


def test_fetch_timeout_expiration():
    """testFetchTimeoutExpiration."""
    state = new_follower_state()
    assert not state.has_fetch_timeout_expired(0)
    assert state.remaining_fetch_time_ms(0) == FOLLOWER_FETCH_TIMEOUT_MS
    assert not state.has_fetch_timeout_expired(5000)
    assert state.remaining_fetch_time_ms(5000) == FOLLOWER_FETCH_TIMEOUT_MS - 5000
    assert state.has_fetch_timeout_expired(15000)
    assert state.remaining_fetch_time_ms(15000) == 0


def test_monotonic_high_watermark():
    """testMonotonicHighWatermark: a known high watermark never becomes unknown or moves back."""
    state = new_follower_state()
    assert state.update_high_watermark(15)
    with pytest.raises(IllegalArgumentException):
        state.update_high_watermark(None)
    with pytest.raises(IllegalArgumentException):
        state.update_high_watermark(14)
    assert not state.update_high_watermark(15)
    assert state.high_watermark == 15


@pytest.mark.parametrize("up_to_date", [True, False])
def test_follower_grant_vote(up_to_date):
    """FollowerStateTest.testGrantVote: a Follower grants no standard vote; from 4.0 (KIP-996)
    it grants PreVotes to up-to-date logs until it has fetched from its leader."""
    state = new_follower_state()
    for voter in (1, 2, 3):
        assert not state.can_grant_vote(ReplicaKey(voter), up_to_date)
        assert not state.can_grant_vote(ReplicaKey(voter), up_to_date, False)
        assert state.can_grant_vote(ReplicaKey(voter), up_to_date, True) == up_to_date
    state.has_fetched_from_leader = True
    assert not any(state.can_grant_vote(ReplicaKey(v), up_to_date, True) for v in (1, 2, 3))


def test_leader_id_and_endpoint():
    """testLeaderIdAndEndpoint."""
    state = new_follower_state((0, 1, 2))
    assert state.leader_id == FOLLOWER_LEADER
    assert state.leader_endpoints_known
    assert state.election() == ElectionState.with_elected_leader(EPOCH, FOLLOWER_LEADER,
                                                                 {0, 1, 2})


# --- UnattachedStateTest -------------------------------------------------------------------------
UNATTACHED_ELECTION_TIMEOUT_MS = 10000


def new_unattached_state(voters=(1, 2, 3), leader_id=UNKNOWN, voted_key=None):
    voted = voted_key or ReplicaKey(UNKNOWN)
    return UnattachedState(EPOCH, UNATTACHED_ELECTION_TIMEOUT_MS, leader_id, voted.id,
                           voters=voters, voted_directory_id=voted.directory_id)


def _assert_election_timer(state, timeout):
    assert state.remaining_election_time_ms(0) == timeout
    assert not state.has_election_timeout_expired(0)
    assert state.remaining_election_time_ms(timeout // 2) == timeout // 2
    assert not state.has_election_timeout_expired(timeout // 2)
    assert state.remaining_election_time_ms(timeout) == 0
    assert state.has_election_timeout_expired(timeout)


def test_unattached_election_timeout():
    """UnattachedStateTest.testElectionTimeout: no leader, no vote; the timer runs out."""
    state = new_unattached_state()
    assert state.epoch == EPOCH
    assert state.election() == ElectionState.with_unknown_leader(EPOCH, {1, 2, 3})
    _assert_election_timer(state, UNATTACHED_ELECTION_TIMEOUT_MS)


@pytest.mark.parametrize("up_to_date", [True, False])
def test_unattached_grant_vote(up_to_date):
    """UnattachedStateTest.testGrantVote / testGrantVoteWithoutVotedKey (4.x): any up-to-date
    candidate, for a standard vote or a PreVote, observers included."""
    state = new_unattached_state()
    for voter in (1, 2, 3, 10):
        assert state.can_grant_vote(ReplicaKey(voter), up_to_date) == up_to_date
        assert state.can_grant_vote(ReplicaKey(voter), up_to_date, True) == up_to_date


def test_unattached_leader_endpoints():
    """UnattachedStateTest.testLeaderEndpoints."""
    assert not new_unattached_state().leader_endpoints_known


@pytest.mark.parametrize("up_to_date", [True, False])
def test_unattached_with_leader(up_to_date):
    """testUnattachedWithLeader / testGrantVoteWithLeader (4.x): the known leader is in the
    election; no standard vote is granted, a PreVote is (4.0: not fetched from it yet)."""
    state = new_unattached_state(leader_id=3)
    assert state.election() == ElectionState.with_elected_leader(EPOCH, 3, {1, 2, 3})
    for voter in (1, 2, 3, 10):
        assert not state.can_grant_vote(ReplicaKey(voter), up_to_date)
        assert state.can_grant_vote(ReplicaKey(voter), up_to_date, True) == up_to_date


@pytest.mark.parametrize("has_voted_key,has_leader_id",
                         [(True, False), (False, True), (False, False)])
def test_election_state_and_election_timeout(has_voted_key, has_leader_id):
    """testElectionStateAndElectionTimeout (4.x): the election holds what the state knows."""
    voted = ReplicaKey(1, new_uuid()) if has_voted_key else None
    leader = 3 if has_leader_id else UNKNOWN
    state = new_unattached_state(leader_id=leader, voted_key=voted)
    assert state.election() == ElectionState(EPOCH, 3 if has_leader_id else None, voted,
                                             {1, 2, 3})
    _assert_election_timer(state, UNATTACHED_ELECTION_TIMEOUT_MS)


# --- UnattachedStateWithVoteTest (3.9+), VotedStateTest (3.7) -----------------------------------
VOTED_ID = 1


def new_unattached_voted_state(voted_directory_id):
    return new_unattached_state((), voted_key=ReplicaKey(VOTED_ID, voted_directory_id))


def test_voted_election_timeout():
    """UnattachedStateWithVoteTest.testElectionTimeout: the vote is the election."""
    state = new_unattached_voted_state(None)
    voted_key = ReplicaKey(VOTED_ID, None)
    assert state.epoch == EPOCH and state.voted_key == voted_key
    assert state.election() == ElectionState.with_voted_candidate(EPOCH, voted_key, set())
    _assert_election_timer(state, UNATTACHED_ELECTION_TIMEOUT_MS)


@pytest.mark.parametrize("up_to_date", [True, False])
def test_can_grant_vote_without_directory_id(up_to_date):
    """testCanGrantVoteWithoutDirectoryId: a vote without directory id binds to the id only; a
    PreVote (4.0) goes to any up-to-date candidate."""
    state = new_unattached_voted_state(None)
    for key in (ReplicaKey(VOTED_ID), ReplicaKey(VOTED_ID, new_uuid())):
        assert state.can_grant_vote(key, up_to_date)
        assert state.can_grant_vote(key, up_to_date, True) == up_to_date
    assert not state.can_grant_vote(ReplicaKey(VOTED_ID + 1), up_to_date)
    assert state.can_grant_vote(ReplicaKey(VOTED_ID + 1), up_to_date, True) == up_to_date


@pytest.mark.parametrize("up_to_date", [True, False])
def test_can_grant_vote_with_directory_id(up_to_date):
    """testCanGrantVoteWithDirectoryId: a vote with a directory id binds to that directory."""
    voted_directory = new_uuid()
    state = new_unattached_voted_state(voted_directory)
    assert state.can_grant_vote(ReplicaKey(VOTED_ID, voted_directory), up_to_date)
    for key in (ReplicaKey(VOTED_ID, new_uuid()), ReplicaKey(VOTED_ID),
                ReplicaKey(VOTED_ID + 1, voted_directory), ReplicaKey(VOTED_ID + 1)):
        assert not state.can_grant_vote(key, True)
        assert state.can_grant_vote(key, up_to_date, True) == up_to_date


def test_voted_leader_endpoints():
    """UnattachedStateWithVoteTest.testLeaderEndpoints."""
    assert not new_unattached_voted_state(new_uuid()).leader_endpoints_known


def test_voted_state_election_timeout_3_7():
    """VotedStateTest.testElectionTimeout (3.7.0): before 3.9 a replica that voted is the
    separate VotedState, named Voted; its election is the vote."""
    state = new_unattached_state(voted_key=ReplicaKey(VOTED_ID))
    assert state.voted_id == VOTED_ID
    assert state.election() == ElectionState.with_voted_candidate(EPOCH, ReplicaKey(VOTED_ID),
                                                                  {1, 2, 3})
    _assert_election_timer(state, UNATTACHED_ELECTION_TIMEOUT_MS)
    c = KafkaRaftClient(2, (1, 2, 3), TEST_CONFIG, pre_vote=False, voted_state=True,
                        quorum_state={"leader_epoch": EPOCH, "leader_id": -1,
                                      "voted_id": VOTED_ID})
    c.start(Ctx())
    assert c.state_name == "Voted" and c.voted_id == VOTED_ID


@pytest.mark.parametrize("up_to_date", [True, False])
def test_voted_state_grant_vote_3_7(up_to_date):
    """VotedStateTest.testGrantVote (3.7.0): only the voted candidate, whatever its log."""
    state = new_unattached_state(voted_key=ReplicaKey(VOTED_ID))
    assert state.can_grant_vote(1, up_to_date)
    assert not state.can_grant_vote(2, up_to_date)
    assert not state.can_grant_vote(3, up_to_date)


# --- ResignedStateTest ---------------------------------------------------------------------------
RESIGNED_ELECTION_TIMEOUT_MS = 5000


def new_resigned_state(voters) -> ResignedState:
    return ResignedState(0, EPOCH, voters, RESIGNED_ELECTION_TIMEOUT_MS, ())


def test_resigned_state():
    """testResignedState: EndQuorumEpoch is owed to every other voter until acknowledged."""
    state = new_resigned_state((0, 1))
    assert state.election() == ElectionState.with_elected_leader(EPOCH, 0, {0, 1})
    assert state.epoch == EPOCH
    assert state.unacked_voters == [1]
    state.acknowledge_resignation(1)
    assert state.unacked_voters == []
    _assert_election_timer(state, RESIGNED_ELECTION_TIMEOUT_MS)


@pytest.mark.parametrize("up_to_date", [True, False])
def test_resigned_grant_vote(up_to_date):
    """ResignedStateTest.testGrantVote: no standard vote; from 4.0 a PreVote to up-to-date
    logs."""
    state = new_resigned_state((1, 2, 3))
    for voter in (1, 2, 3):
        assert not state.can_grant_vote(ReplicaKey(voter), up_to_date)
        assert not state.can_grant_vote(ReplicaKey(voter), up_to_date, False)
        assert state.can_grant_vote(ReplicaKey(voter), up_to_date, True) == up_to_date


def test_negative_scenario_acknowledge_resignation():
    """testNegativeScenarioAcknowledgeResignation: only a voter acknowledges."""
    state = new_resigned_state((0, 1, 2, 3, 4, 5))
    assert state.election() == ElectionState.with_elected_leader(EPOCH, 0, {0, 1, 2, 3, 4, 5})
    with pytest.raises(IllegalArgumentException):
        state.acknowledge_resignation(10)


def test_resigned_leader_endpoints():
    """ResignedStateTest.testLeaderEndpoints: the resigned leader's own endpoints."""
    assert new_resigned_state((1, 2, 3)).leader_endpoints_known


# --- VoterSetTest --------------------------------------------------------------------------------
DEFAULT_LISTENER = "LISTENER"      # VoterSetTest.DEFAULT_LISTENER_NAME
KRAFT_VERSION_RANGE = (0, 1)       # Features.KRAFT_VERSION.supportedVersionRange()


def voter_node(key_or_id, with_directory_id=True, listener=DEFAULT_LISTENER) -> VoterNode:
    """VoterSetTest.voterNode: localhost:9990+id on the default listener."""
    key = key_or_id if isinstance(key_or_id, ReplicaKey) else replica_key(key_or_id,
                                                                          with_directory_id)
    return VoterNode(key, ((listener, "localhost", 9990 + key.id),), KRAFT_VERSION_RANGE)


def voter_map(ids, with_directory_id=True) -> dict[int, VoterNode]:
    return {i: voter_node(i, with_directory_id) for i in ids}


def test_empty_voter_set():
    """testEmptyVoterSet."""
    assert VoterSet.empty() == VoterSet.from_map({})


def test_voter_node():
    """testVoterNode: a voter's Node on a listener, None without one."""
    voters = VoterSet.from_map(voter_map((1, 2, 3)))
    assert voters.voter_node(1, DEFAULT_LISTENER) == Node(1, "localhost", 9991)
    assert voters.voter_node(1, "MISSING") is None
    assert voters.voter_node(4, DEFAULT_LISTENER) is None


def test_voter_nodes():
    """testVoterNodes: a voter without the listener, or not a voter, is an error."""
    voters = VoterSet.from_map(voter_map((1, 2, 3)))
    assert voters.voter_nodes((1, 2), DEFAULT_LISTENER) == {Node(1, "localhost", 9991),
                                                            Node(2, "localhost", 9992)}
    with pytest.raises(IllegalArgumentException):
        voters.voter_nodes((1, 2), "MISSING")
    with pytest.raises(IllegalArgumentException):
        voters.voter_nodes((1, 4), DEFAULT_LISTENER)


def test_voter_ids():
    """testVoterIds."""
    assert set(VoterSet.from_map(voter_map((1, 2, 3))).voter_ids()) == {1, 2, 3}


def test_voter_set_add_voter():
    """VoterSetTest.testAddVoter: a new id only."""
    a_voter_map = voter_map((1, 2, 3))
    voters = VoterSet.from_map(a_voter_map)
    assert voters.add_voter(voter_node(1)) is None
    voter4 = voter_node(4)
    assert voters.add_voter(voter4) == VoterSet.from_map({**a_voter_map, 4: voter4})


def test_voter_set_remove_voter():
    """VoterSetTest.testRemoveVoter: only the exact key (id and directory id)."""
    a_voter_map = voter_map((1, 2, 3))
    voters = VoterSet.from_map(a_voter_map)
    assert voters.remove_voter(ReplicaKey(4, None)) is None
    assert voters.remove_voter(ReplicaKey(4, new_uuid())) is None
    voter3 = a_voter_map.pop(3)
    assert voters.remove_voter(voter3.voter_key) == VoterSet.from_map(a_voter_map)


def test_voter_set_update_voter():
    """VoterSetTest.testUpdateVoter: only a voter's own key; an entry that differs needs an
    update."""
    a_voter_map = voter_map((1, 2, 3))
    voters = VoterSet.from_map(a_voter_map)
    assert voters.update_voter(voter_node(4)) is None
    assert not voters.voter_node_needs_update(voter_node(4))
    assert voters.update_voter(voter_node(3)) is None
    assert not voters.voter_node_needs_update(voter_node(3))
    new_voter3 = VoterNode.of(a_voter_map[3].voter_key, (("ABC", "abc", 1234),), (1, 1))
    a_voter_map[3] = new_voter3
    assert voters.voter_node_needs_update(new_voter3)
    assert voters.update_voter(new_voter3) == VoterSet.from_map(a_voter_map)


def test_cannot_remove_to_empty_voter_set():
    """testCannotRemoveToEmptyVoterSet."""
    a_voter_map = voter_map((1,))
    voters = VoterSet.from_map(a_voter_map)
    voter1 = a_voter_map[1].voter_key
    assert voters.is_voter(voter1)
    assert voters.remove_voter(voter1) is None


def test_is_voter_with_directory_id():
    """testIsVoterWithDirectoryId."""
    a_voter_map = voter_map((1, 2, 3))
    voters = VoterSet.from_map(a_voter_map)
    dir1 = a_voter_map[1].voter_key.directory_id
    assert voters.is_voter(a_voter_map[1].voter_key)
    assert not voters.is_voter(ReplicaKey(1, new_uuid()))
    assert not voters.is_voter(ReplicaKey(1, None))
    assert not voters.is_voter(ReplicaKey(2, dir1))
    assert not voters.is_voter(ReplicaKey(4, dir1))
    assert not voters.is_voter(ReplicaKey(4, None))


def test_is_voter_without_directory_id():
    """testIsVoterWithoutDirectoryId: a voter set without directory ids matches any."""
    voters = VoterSet.from_map(voter_map((1, 2, 3), False))
    assert voters.is_voter(ReplicaKey(1, None))
    assert voters.is_voter(ReplicaKey(1, new_uuid()))
    assert not voters.is_voter(ReplicaKey(4, new_uuid()))
    assert not voters.is_voter(ReplicaKey(4, None))


def test_voter_node_is_voter_with_directory_id():
    """testVoterNodeIsVoterWithDirectoryId."""
    node = voter_node(1, True)
    assert node.is_voter(node.voter_key)
    assert not node.is_voter(ReplicaKey(1, new_uuid()))
    assert not node.is_voter(ReplicaKey(1, None))
    assert not node.is_voter(ReplicaKey(2, new_uuid()))
    assert not node.is_voter(ReplicaKey(2, None))
    assert not node.is_voter(ReplicaKey(2, node.voter_key.directory_id))


def test_voter_node_is_voter_without_directory_id():
    """testVoterNodeIsVoterWithoutDirectoryId."""
    node = voter_node(1, False)
    assert node.is_voter(node.voter_key)
    assert node.is_voter(ReplicaKey(1, new_uuid()))
    assert node.is_voter(ReplicaKey(1, None))
    assert not node.is_voter(ReplicaKey(2, new_uuid()))
    assert not node.is_voter(ReplicaKey(2, None))


@pytest.mark.parametrize("with_directory_id", [True, False])
def test_endpoints(with_directory_id):
    """testEndpoints: listeners(id) is empty only for a non-voter."""
    voters = VoterSet.from_map(voter_map((1, 2, 3), with_directory_id))
    assert all(voters.listeners(i) != () for i in (1, 2, 3))
    assert voters.listeners(4) == ()


def test_is_only_voter_in_standalone():
    """testIsOnlyVoterInStandalone."""
    a_voter_map = voter_map((1,))
    voters = VoterSet.from_map(a_voter_map)
    dir1 = a_voter_map[1].voter_key.directory_id
    assert voters.is_only_voter(a_voter_map[1].voter_key)
    assert not voters.is_only_voter(ReplicaKey(1, new_uuid()))
    assert not voters.is_only_voter(ReplicaKey(1, None))
    assert not voters.is_only_voter(ReplicaKey(4, dir1))
    assert not voters.is_only_voter(ReplicaKey(4, None))


def test_is_only_voter_in_not_standalone():
    """testIsOnlyVoterInNotStandalone."""
    a_voter_map = voter_map((1, 2))
    voters = VoterSet.from_map(a_voter_map)
    dir1 = a_voter_map[1].voter_key.directory_id
    assert not voters.is_only_voter(a_voter_map[1].voter_key)
    for key in (ReplicaKey(1, new_uuid()), ReplicaKey(1, None), ReplicaKey(2, dir1),
                ReplicaKey(4, dir1), ReplicaKey(4, None)):
        assert not voters.is_only_voter(key)


@pytest.mark.parametrize("with_directory_id", [True, False])
@pytest.mark.parametrize("supported", [(0, 1), (1, 1)])
def test_record_round_trip(with_directory_id, supported):
    """testRecordRoundTrip: a VotersRecord gives back the voter set -- the directory ids
    (Uuid.ZERO_UUID without one) and each voter's KRaftVersionFeature range too."""
    voters = VoterSet.from_map({i: VoterNode(replica_key(i, with_directory_id),
                                             ((DEFAULT_LISTENER, "localhost", 9990 + i),),
                                             supported) for i in (1, 2, 3)})
    assert VoterSet.from_voters_record(voters.to_voters_record()) == voters


def _assert_majorities(overlap, a, b):
    assert a.has_overlapping_majority(b) == overlap, (a, b)
    assert b.has_overlapping_majority(a) == overlap, (b, a)


def test_overlapping_majority():
    """testOverlappingMajority: one voter added, removed or replaced."""
    start_map = voter_map((1, 2, 3))
    start = VoterSet.from_map(start_map)
    _assert_majorities(True, start, start.add_voter(voter_node(4)))
    _assert_majorities(True, start, start.remove_voter(start_map[1].voter_key))
    replaced = start.remove_voter(start_map[1].voter_key).add_voter(voter_node(1))
    _assert_majorities(True, start, replaced)


def test_nonoverlapping_majority():
    """testNonoverlappingMajority: two changes at once have no overlapping majority."""
    start_map = voter_map((1, 2, 3, 4, 5))
    start = VoterSet.from_map(start_map)
    _assert_majorities(False, start, start.add_voter(voter_node(6)).add_voter(voter_node(7)))
    smaller = start.remove_voter(start_map[1].voter_key).remove_voter(start_map[2].voter_key)
    _assert_majorities(False, start, smaller)
    replaced = (start.remove_voter(start_map[1].voter_key).add_voter(voter_node(1))
                .remove_voter(start_map[2].voter_key).add_voter(voter_node(2)))
    _assert_majorities(False, start, replaced)


# --- KafkaRaftClientReconfigTest: the test context ---------------------------------------------
LISTENER = "CONTROLLER"     # kafkasim's controller listener (Kafka's test channel: LISTENER)
ADMIN = 99                  # where the admin client's requests come from
LOCAL = 10
_correlation = itertools.count(1000)


def listeners_of(node_id: int, *more) -> tuple:
    """Endpoints of ``node_id``: localhost:9990+id on the controller listener, then ``more``."""
    return ((LISTENER, "localhost", 9990 + node_id),) + tuple(more)


def another_listener(node_id: int) -> tuple:
    return ("ANOTHER_LISTENER", "localhost", 8990 + node_id)


def controller_voter_set(*keys) -> VoterSet:
    """VoterSetTest.voterSet(keys) on the controller listener, kraft.version range 0-1."""
    return VoterSet({k.id: VoterNode(k, listeners_of(k.id), KRAFT_VERSION_RANGE) for k in keys})


def build853(local: ReplicaKey, voters: VoterSet, *, static=False, elected=None, unknown=None,
             local_listeners=None, update_voter_static=False):
    """RaftClientTestContext.Builder(local).withKip853Rpc(true) + withBootstrapSnapshot(voters)
    (``static``: withStaticVoters, kraft.version 0) + withElectedLeader / withUnknownLeader."""
    state = None
    if elected is not None:
        state = {"leader_epoch": elected[0], "leader_id": elected[1], "voted_id": -1}
    elif unknown is not None:
        state = {"leader_epoch": unknown, "leader_id": -1, "voted_id": -1}
    if static:
        voters = VoterSet({i: VoterNode(ReplicaKey(i), n.endpoints, (0, 0))
                           for i, n in voters.voters.items()})
    c = KafkaRaftClient(
        local.id, voters.voter_ids(), TEST_CONFIG, pre_vote=False,
        observer=local.id not in voters.voter_ids(), log=RaftLog(), quorum_state=state,
        kraft_version=0 if static else 1, directory_id=local.directory_id,
        bootstrap_voters=voters, supported_kraft_version=KRAFT_VERSION_RANGE,
        listeners=local_listeners or listeners_of(local.id),
        update_voter_static=update_voter_static)
    ctx = Ctx()
    c.start(ctx)
    return c, ctx


def leader853(*followers, static=False, update_voter_static=False, local_listeners=None):
    """A leader of epoch 4 (withUnknownLeader(3) + becomeLeader) with ``followers``."""
    local = ReplicaKey(LOCAL, new_uuid())
    keys = [ReplicaKey(LOCAL + i, new_uuid()) for i in followers]
    c, ctx = build853(local, controller_voter_set(local, *keys), static=static, unknown=3,
                      update_voter_static=update_voter_static, local_listeners=local_listeners)
    become_leader(c, ctx)
    assert c.epoch == 4
    return c, ctx, local, keys


def fetch(c, ctx, replica: ReplicaKey, offset=None, last_epoch=None):
    """deliverRequest(fetchRequest(epoch, replica, offset, epoch, 0)) + the NONE answer."""
    epoch = c.epoch
    offset = c.log.end_offset if offset is None else offset
    last_epoch = epoch if last_epoch is None else last_epoch
    ctx.deliver(c, replica.id, M.RaftFetchRequest(next(_correlation), replica.id, epoch, offset,
                                                  last_epoch, 0,
                                                  replica_directory_id=replica.directory_id))
    out = [m for d, m in ctx.take(M.RaftFetchResponse) if d == replica.id]
    assert [(m.error, m.leader_epoch, m.leader_id) for m in out] == [(M.NONE, epoch, c.node_id)]
    return out[0]


def add_voter(c, ctx, key: ReplicaKey, endpoints=None):
    ctx.deliver(c, ADMIN, M.AddRaftVoterRequest(next(_correlation), key.id, key.directory_id,
                                                endpoints or listeners_of(key.id)))


def remove_voter(c, ctx, key: ReplicaKey):
    ctx.deliver(c, ADMIN, M.RemoveRaftVoterRequest(next(_correlation), key.id,
                                                   key.directory_id))


def answer(ctx, cls) -> str:
    """assertSent{Add,Remove}VoterResponse: the one answer to the admin client."""
    out = [m for d, m in ctx.take(cls) if d == ADMIN]
    assert len(out) == 1, out
    return out[0].error


def api_versions_request(ctx, new: ReplicaKey):
    """assertSentApiVersionsRequest, sent to the new voter."""
    out = ctx.take(M.ApiVersionsRequest)
    assert [d for d, _ in out] == [new.id]
    return out[0][1]


def api_versions_response(c, ctx, new, req, error=M.NONE, supported=KRAFT_VERSION_RANGE):
    c.handle(ctx, new.id, M.ApiVersionsResponse(req.correlation_id, error, supported))


def update_voter(c, ctx, key: ReplicaKey, endpoints, epoch=None, supported=KRAFT_VERSION_RANGE):
    """deliverRequest(updateVoterRequest) + assertSentUpdateVoterResponse: (error, leader,
    epoch)."""
    epoch = c.epoch if epoch is None else epoch
    ctx.deliver(c, key.id, M.UpdateRaftVoterRequest(next(_correlation), key.id, key.directory_id,
                                                    epoch, supported, endpoints))
    (_, resp), = ctx.take(M.UpdateRaftVoterResponse)
    return resp.error, resp.leader_id, resp.leader_epoch


def prepare_add(c, ctx, follower, new):
    """Establish a HWM (the follower fetches) and catch the new voter up (it fetches)."""
    fetch(c, ctx, follower)
    fetch(c, ctx, new)


# --- KafkaRaftClientReconfigTest: bootstrap records -----------------------------------------------
def test_leader_writes_bootstrap_records():
    """testLeaderWritesBootstrapRecords: the first leader writes LeaderChange, KRaftVersion(1) and
    the bootstrap checkpoint's voter set in its first batch."""
    local, follower = ReplicaKey(LOCAL, new_uuid()), ReplicaKey(LOCAL + 1, new_uuid())
    voters = controller_voter_set(local, follower)
    c, ctx = build853(local, voters, unknown=0)
    become_leader(c, ctx)
    (_, e0, change), (_, e1, version), (_, e2, record) = c.log.entries[:3]
    assert {e0, e1, e2} == {c.epoch}
    assert (change.leader_id, change.voters, change.granting_voters) == (
        LOCAL, (LOCAL, LOCAL + 1), (LOCAL, LOCAL + 1))
    assert version == KRaftVersionRecord(1)
    assert VoterSet.from_voters_record(record) == voters


def test_bootstrap_checkpoint_is_not_returned_on_fetch():
    """testBootstrapCheckpointIsNotReturnedOnFetch: a fetch at offset 0 reads the log."""
    c, ctx, local, (follower,) = leader853(1)
    resp = fetch(c, ctx, follower, 0, 0)
    assert resp.records and resp.diverging_epoch == -1


def test_leader_does_not_bootstrap_records_with_kraft_version0():
    """testLeaderDoesNotBootstrapRecordsWithKraftVersion0: a static quorum's leader writes its
    LeaderChange only."""
    local, follower = ReplicaKey(LOCAL, new_uuid()), ReplicaKey(LOCAL + 1, new_uuid())
    c, ctx = build853(local, controller_voter_set(local, follower), static=True, unknown=0)
    become_leader(c, ctx)
    assert len(c.log.entries) == 1
    change = c.log.entries[0][2]
    assert (change.leader_id, change.voters) == (LOCAL, (LOCAL, LOCAL + 1))


def test_follower_reads_kraft_bootstrap_records():
    """testFollowerReadsKRaftBootstrapRecords: the VotersRecord the leader sends counts as soon
    as the follower appends it."""
    local, leader = ReplicaKey(LOCAL, new_uuid()), ReplicaKey(LOCAL + 1, new_uuid())
    follower = ReplicaKey(LOCAL + 2, new_uuid())
    c, ctx = build853(local, controller_voter_set(local, leader), elected=(5, leader.id))
    (dst, req), = ctx.take(M.RaftFetchRequest)
    assert (dst, req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (
        leader.id, 5, 0, 0)
    assert not c.quorum().is_voter(follower)
    leaders_voters = controller_voter_set(local, leader, follower)
    records = ((0, 5, M.LeaderChangeMessage(leader.id, (), ())), (1, 5, KRaftVersionRecord(1)),
               (2, 5, leaders_voters.to_voters_record()))
    c.handle(ctx, leader.id, M.RaftFetchResponse(req.correlation_id, M.NONE, leader.id, 5, 0,
                                                 records))
    ctx.poll(c)
    assert c.quorum().is_voter(follower)


# --- KafkaRaftClientReconfigTest: AddRaftVoter ----------------------------------------------------
def test_add_voter():
    """testAddVoter: ApiVersions to the new voter, the VotersRecord, NONE once it commits."""
    c, ctx, local, (follower,) = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    assert not c.quorum().is_voter(new)
    prepare_add(c, ctx, follower, new)
    add_voter(c, ctx, new)
    req = api_versions_request(ctx, new)
    api_versions_response(c, ctx, new, req)
    ctx.poll(c)
    assert c.quorum().is_voter(new)        # a voter from the moment the record is appended
    assert ctx.take(M.AddRaftVoterResponse) == []
    fetch(c, ctx, follower)                # the follower commits the new voter set
    ctx.poll(c)
    assert answer(ctx, M.AddRaftVoterResponse) == M.NONE


def test_add_voter_to_not_leader():
    """testAddVoterToNotLeader."""
    local, follower = ReplicaKey(LOCAL, new_uuid()), ReplicaKey(LOCAL + 1, new_uuid())
    c, ctx = build853(local, controller_voter_set(local, follower), unknown=3)
    add_voter(c, ctx, ReplicaKey(LOCAL + 2, new_uuid()))
    assert answer(ctx, M.AddRaftVoterResponse) == M.NOT_LEADER_OR_FOLLOWER


def test_add_voter_with_missing_default_listener():
    """testAddVoterWithMissingDefaultListener: INVALID_REQUEST."""
    c, ctx, local, _ = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    add_voter(c, ctx, new, (("not_the_default_listener", "localhost", 9990 + new.id),))
    assert answer(ctx, M.AddRaftVoterResponse) == M.INVALID_REQUEST


def test_add_voter_with_pending_add_voter():
    """testAddVoterWithPendingAddVoter: one voter change at a time."""
    c, ctx, local, (follower,) = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    prepare_add(c, ctx, follower, new)
    add_voter(c, ctx, new)
    add_voter(c, ctx, ReplicaKey(LOCAL + 3, new_uuid()))
    assert answer(ctx, M.AddRaftVoterResponse) == "REQUEST_TIMED_OUT"


def test_add_voter_without_fenced_previous_leaders():
    """testAddVoterWithoutFencedPreviousLeaders: no high watermark in this epoch yet."""
    c, ctx, local, _ = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    fetch(c, ctx, new)
    add_voter(c, ctx, new)
    assert answer(ctx, M.AddRaftVoterResponse) == "REQUEST_TIMED_OUT"


def test_add_voter_with_kraft_version0():
    """testAddVoterWithKraftVersion0: a static quorum cannot change its voters."""
    c, ctx, local, (follower,) = leader853(1, static=True)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    prepare_add(c, ctx, follower, new)
    add_voter(c, ctx, new)
    assert answer(ctx, M.AddRaftVoterResponse) == "UNSUPPORTED_VERSION"


def test_add_voter_with_existing_voter():
    """testAddVoterWithExistingVoter: the id is a voter already (whatever its directory)."""
    c, ctx, local, (follower,) = leader853(1)
    new = ReplicaKey(follower.id, new_uuid())
    prepare_add(c, ctx, follower, new)
    add_voter(c, ctx, new)
    assert answer(ctx, M.AddRaftVoterResponse) == "DUPLICATE_VOTER"


def test_add_voter_timeout():
    """testAddVoterTimeout: the VotersRecord does not commit within the request timeout; the
    new voter stays in the (uncommitted) voter set."""
    c, ctx, local, (follower,) = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    prepare_add(c, ctx, follower, new)
    add_voter(c, ctx, new)
    api_versions_response(c, ctx, new, api_versions_request(ctx, new))
    ctx.poll(c)
    ctx.advance(c, REQUEST_TIMEOUT_MS)
    assert answer(ctx, M.AddRaftVoterResponse) == "REQUEST_TIMED_OUT"
    assert c.quorum().is_voter(new)


def test_add_voter_with_api_versions_from_incorrect_node():
    """testAddVoterWithApiVersionsFromIncorrectNode: an ApiVersions error aborts the change."""
    c, ctx, local, (follower,) = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    prepare_add(c, ctx, follower, new)
    add_voter(c, ctx, new)
    api_versions_response(c, ctx, new, api_versions_request(ctx, new), M.INVALID_REQUEST)
    assert answer(ctx, M.AddRaftVoterResponse) == "REQUEST_TIMED_OUT"


def test_add_voter_invalid_feature_version():
    """testAddVoterInvalidFeatureVersion: a new voter without kraft.version 1."""
    c, ctx, local, (follower,) = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    prepare_add(c, ctx, follower, new)
    add_voter(c, ctx, new)
    # Kafka's ApiVersions answer has no kraft.version feature when its max is 0
    api_versions_response(c, ctx, new, api_versions_request(ctx, new), supported=None)
    assert answer(ctx, M.AddRaftVoterResponse) == M.INVALID_REQUEST


def test_add_voter_with_lagging_new_voter():
    """testAddVoterWithLaggingNewVoter: a new voter that never fetched is not caught up."""
    c, ctx, local, (follower,) = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    fetch(c, ctx, follower)
    add_voter(c, ctx, new)
    api_versions_response(c, ctx, new, api_versions_request(ctx, new))
    assert answer(ctx, M.AddRaftVoterResponse) == "REQUEST_TIMED_OUT"


def test_add_voter_fails_when_losing_leadership():
    """testAddVoterFailsWhenLosingLeadership: resigning answers NOT_LEADER_OR_FOLLOWER."""
    c, ctx, local, (follower,) = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    fetch(c, ctx, follower)
    add_voter(c, ctx, new)
    api_versions_request(ctx, new)
    c.resign(ctx, c.epoch)
    ctx.poll(c)
    assert answer(ctx, M.AddRaftVoterResponse) == M.NOT_LEADER_OR_FOLLOWER


def test_add_voter_with_missing_directory_id():
    """testAddVoterWithMissingDirectoryId: INVALID_REQUEST."""
    c, ctx, local, (follower,) = leader853(1)
    fetch(c, ctx, follower)
    add_voter(c, ctx, ReplicaKey(LOCAL + 2, None))
    assert answer(ctx, M.AddRaftVoterResponse) == M.INVALID_REQUEST


# --- KafkaRaftClientReconfigTest: RemoveRaftVoter -------------------------------------------------
def test_remove_voter():
    """testRemoveVoter: the voter is out once the record is appended; NONE once committed."""
    c, ctx, local, (follower1, follower2) = leader853(1, 2)
    assert c.quorum().is_voter(follower2)
    fetch(c, ctx, follower1)
    remove_voter(c, ctx, follower2)
    ctx.poll(c)
    assert not c.quorum().is_voter(follower2)
    fetch(c, ctx, follower1)
    ctx.poll(c)
    assert answer(ctx, M.RemoveRaftVoterResponse) == M.NONE


def test_remove_voter_is_leader():
    """testRemoveVoterIsLeader: a leader that removed itself resigns once the record commits,
    may still be asked to resign, and ends an unattached observer."""
    c, ctx, local, (follower1, follower2) = leader853(1, 2)
    epoch = c.epoch
    fetch(c, ctx, follower1)
    remove_voter(c, ctx, local)
    ctx.poll(c)
    assert not c.quorum().is_voter(local)
    fetch(c, ctx, follower1)
    fetch(c, ctx, follower2)
    ctx.poll(c)
    assert answer(ctx, M.RemoveRaftVoterResponse) == M.NONE
    ctx.poll(c)
    ends = ctx.take(M.EndQuorumEpochRequest)
    assert {d for d, _ in ends} == {follower1.id, follower2.id}
    assert {r.leader_epoch for _, r in ends} == {epoch}
    c.resign(ctx, epoch)                   # allowed: nothing to do
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert c.quorum().is_observer() and c.quorum().is_unattached()


def test_remove_voter_to_not_leader():
    """testRemoveVoterToNotLeader."""
    local = ReplicaKey(LOCAL, new_uuid())
    f1, f2 = ReplicaKey(LOCAL + 1, new_uuid()), ReplicaKey(LOCAL + 2, new_uuid())
    c, ctx = build853(local, controller_voter_set(local, f1, f2), unknown=3)
    remove_voter(c, ctx, f1)
    assert answer(ctx, M.RemoveRaftVoterResponse) == M.NOT_LEADER_OR_FOLLOWER


def test_remove_voter_with_pending_remove_voter():
    """testRemoveVoterWithPendingRemoveVoter."""
    c, ctx, local, (follower1, follower2) = leader853(1, 2)
    fetch(c, ctx, follower1)
    remove_voter(c, ctx, follower2)
    ctx.poll(c)
    remove_voter(c, ctx, follower1)
    assert answer(ctx, M.RemoveRaftVoterResponse) == "REQUEST_TIMED_OUT"


def test_remove_voter_without_fenced_previous_leaders():
    """testRemoveVoterWithoutFencedPreviousLeaders."""
    c, ctx, local, (follower1, follower2) = leader853(1, 2)
    remove_voter(c, ctx, follower2)
    assert answer(ctx, M.RemoveRaftVoterResponse) == "REQUEST_TIMED_OUT"


def test_remove_voter_with_kraft_version0():
    """testRemoveVoterWithKraftVersion0."""
    c, ctx, local, (follower1, follower2) = leader853(1, 2, static=True)
    fetch(c, ctx, follower1)
    remove_voter(c, ctx, follower2)
    assert answer(ctx, M.RemoveRaftVoterResponse) == "UNSUPPORTED_VERSION"


def test_remove_voter_with_none_voter():
    """testRemoveVoterWithNoneVoter: the voter's id with another directory id."""
    c, ctx, local, (follower1, follower2) = leader853(1, 2)
    fetch(c, ctx, follower1)
    remove_voter(c, ctx, ReplicaKey(follower2.id, new_uuid()))
    assert answer(ctx, M.RemoveRaftVoterResponse) == "VOTER_NOT_FOUND"


def test_remove_voter_with_none_voter_id():
    """testRemoveVoterWithNoneVoterId: a directory id of a voter with another id."""
    c, ctx, local, (follower1, follower2) = leader853(1, 2)
    fetch(c, ctx, follower1)
    remove_voter(c, ctx, ReplicaKey(follower2.id + 1, follower2.directory_id))
    assert answer(ctx, M.RemoveRaftVoterResponse) == "VOTER_NOT_FOUND"


def test_remove_voter_to_empty_voter_set():
    """testRemoveVoterToEmptyVoterSet: the only voter leads at once and cannot leave."""
    local = ReplicaKey(LOCAL, new_uuid())
    c, ctx = build853(local, controller_voter_set(local))
    assert c.quorum().leader_id() == LOCAL
    remove_voter(c, ctx, local)
    assert answer(ctx, M.RemoveRaftVoterResponse) == "VOTER_NOT_FOUND"


def test_remove_voter_timed_out():
    """testRemoveVoterTimedOut: the removal stays in the uncommitted voter set."""
    c, ctx, local, (follower1, follower2) = leader853(1, 2)
    fetch(c, ctx, follower1)
    remove_voter(c, ctx, follower2)
    ctx.poll(c)
    ctx.advance(c, REQUEST_TIMEOUT_MS)
    assert answer(ctx, M.RemoveRaftVoterResponse) == "REQUEST_TIMED_OUT"
    assert not c.quorum().is_voter(follower2)


def test_remove_voter_fails_when_losing_leadership():
    """testRemoveVoterFailsWhenLosingLeadership."""
    c, ctx, local, (follower1, follower2) = leader853(1, 2)
    fetch(c, ctx, follower1)
    remove_voter(c, ctx, follower2)
    ctx.poll(c)
    c.resign(ctx, c.epoch)
    ctx.poll(c)
    assert answer(ctx, M.RemoveRaftVoterResponse) == M.NOT_LEADER_OR_FOLLOWER
    assert not c.quorum().is_voter(follower2)


def test_add_voter_with_pending_remove_voter():
    """testAddVoterWithPendingRemoveVoter."""
    c, ctx, local, (follower1, follower2) = leader853(1, 2)
    fetch(c, ctx, follower1)
    remove_voter(c, ctx, follower2)
    ctx.poll(c)
    add_voter(c, ctx, ReplicaKey(LOCAL + 2, new_uuid()))
    assert answer(ctx, M.AddRaftVoterResponse) == "REQUEST_TIMED_OUT"


def test_remove_voter_with_pending_add_voter():
    """testRemoveVoterWithPendingAddVoter."""
    c, ctx, local, (follower,) = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    prepare_add(c, ctx, follower, new)
    add_voter(c, ctx, new)
    remove_voter(c, ctx, follower)
    assert answer(ctx, M.RemoveRaftVoterResponse) == "REQUEST_TIMED_OUT"


# --- KafkaRaftClientReconfigTest: UpdateRaftVoter -------------------------------------------------
def test_update_voter():
    """testUpdateVoter: answered at once, without waiting for the record to commit."""
    c, ctx, local, (follower,) = leader853(1)
    assert c.quorum().is_voter(follower)
    fetch(c, ctx, follower)
    endpoints = listeners_of(follower.id, another_listener(follower.id))
    assert update_voter(c, ctx, follower, endpoints) == (M.NONE, LOCAL, c.epoch)
    assert c.quorum().is_voter(follower)
    assert c.reconfig.history.last_value().listeners(follower.id) == endpoints


def test_leader_updates_voter():
    """testLeaderUpdatesVoter: a leader whose listeners differ from its voter set entry writes
    the updated entry with its first records."""
    local_listeners = listeners_of(LOCAL, another_listener(LOCAL))
    c, ctx, local, (follower,) = leader853(1, local_listeners=local_listeners)
    fetch(c, ctx, follower)
    expected = controller_voter_set(local, follower).update_voter(
        VoterNode(local, local_listeners, KRAFT_VERSION_RANGE))
    committed = [VoterSet.from_voters_record(r) for o, _, r in c.log.entries
                 if type(r) is VotersRecord and o < c.high_watermark]
    assert committed[-1] == expected


@pytest.mark.parametrize("offset,error", [(-1, "FENCED_LEADER_EPOCH"),
                                          (1, "UNKNOWN_LEADER_EPOCH")])
def test_update_voter_old_and_new_epoch(offset, error):
    """testUpdateVoterOldEpoch / testUpdateVoterNewEpoch."""
    c, ctx, local, (follower,) = leader853(1)
    assert update_voter(c, ctx, follower, (), c.epoch + offset) == (error, LOCAL, c.epoch)


def test_update_voter_to_not_leader():
    """testUpdateVoterToNotLeader: no leader known in the answer."""
    local, follower = ReplicaKey(LOCAL, new_uuid()), ReplicaKey(LOCAL + 1, new_uuid())
    c, ctx = build853(local, controller_voter_set(local, follower), unknown=3)
    assert update_voter(c, ctx, follower, ()) == (M.NOT_LEADER_OR_FOLLOWER, -1, c.epoch)


def test_update_voter_without_fenced_previous_leaders():
    """testUpdateVoterWithoutFencedPreviousLeaders."""
    c, ctx, local, (follower,) = leader853(1)
    endpoints = listeners_of(follower.id, another_listener(follower.id))
    assert update_voter(c, ctx, follower, endpoints) == ("REQUEST_TIMED_OUT", LOCAL, c.epoch)


@pytest.mark.parametrize("update_voter_static,error", [(False, "UNSUPPORTED_VERSION"),
                                                       (True, M.NONE)])
def test_update_voter_with_kraft_version0(update_voter_static, error):
    """testUpdateVoterWithKraftVersion0: 3.9 and 4.0 refuse (UNSUPPORTED_VERSION); from 4.1
    (KAFKA-16538) a static quorum's leader takes the update in memory (NONE)."""
    c, ctx, local, (follower,) = leader853(1, static=True,
                                           update_voter_static=update_voter_static)
    fetch(c, ctx, follower)
    endpoints = listeners_of(follower.id, another_listener(follower.id))
    assert update_voter(c, ctx, follower, endpoints) == (error, LOCAL, c.epoch)


def test_update_voter_with_none_voter():
    """testUpdateVoterWithNoneVoter: the voter's id with another directory id."""
    c, ctx, local, (follower,) = leader853(1)
    fetch(c, ctx, follower)
    endpoints = listeners_of(follower.id, another_listener(follower.id))
    key = ReplicaKey(follower.id, new_uuid())
    assert update_voter(c, ctx, key, endpoints) == ("VOTER_NOT_FOUND", LOCAL, c.epoch)


def test_update_voter_with_none_voter_id():
    """testUpdateVoterWithNoneVoterId."""
    c, ctx, local, (follower,) = leader853(1)
    fetch(c, ctx, follower)
    other = follower.id + 1
    key = ReplicaKey(other, follower.directory_id)
    assert update_voter(c, ctx, key, listeners_of(other, another_listener(other))) == (
        "VOTER_NOT_FOUND", LOCAL, c.epoch)


def test_update_voter_with_pending_add_voter():
    """testUpdateVoterWithPendingAddVoter."""
    c, ctx, local, (follower,) = leader853(1)
    new = ReplicaKey(LOCAL + 2, new_uuid())
    prepare_add(c, ctx, follower, new)
    add_voter(c, ctx, new)
    endpoints = listeners_of(follower.id, another_listener(follower.id))
    assert update_voter(c, ctx, follower, endpoints) == ("REQUEST_TIMED_OUT", LOCAL, c.epoch)


# --- KafkaRaftClientReconfigTest: the follower's UpdateRaftVoter ----------------------------------
def follower853(local_listeners=None, static=False, update_voter_static=False):
    """A voter following voter1 in epoch 4 (withElectedLeader(4, voter1))."""
    local = ReplicaKey(LOCAL, new_uuid())
    voter1, voter2 = ReplicaKey(LOCAL + 1, new_uuid()), ReplicaKey(LOCAL + 2, new_uuid())
    c, ctx = build853(local, controller_voter_set(local, voter1, voter2), elected=(4, voter1.id),
                      local_listeners=local_listeners, static=static,
                      update_voter_static=update_voter_static)
    return c, ctx, local, voter1, voter2


def last_fetch(ctx, epoch=4, dst=LOCAL + 1):
    """assertSentFetchRequest + assertFetchRequestData(epoch, 0, 0): the newest Fetch."""
    out = ctx.take(M.RaftFetchRequest)
    assert out, "no Fetch sent"
    d, req = out[-1]
    assert (d, req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (
        dst, epoch, 0, 0)
    return req


def complete_fetches(c, ctx, leader, times=3, epoch=4):
    """Wait fetch.timeout - 1 and answer the Fetch, ``times`` times."""
    for _ in range(times):
        ctx.advance(c, FETCH_TIMEOUT_MS - 1)
        req = last_fetch(ctx, epoch, leader)
        c.handle(ctx, leader, M.RaftFetchResponse(req.correlation_id, M.NONE, leader, epoch, 0))
        ctx.poll(c)


def update_voter_request(ctx, local, epoch=4):
    """assertSentUpdateVoterRequest(local, epoch, range, listeners)."""
    out = ctx.take(M.UpdateRaftVoterRequest)
    assert len(out) == 1, out
    dst, req = out[0]
    assert (req.voter_id, req.voter_directory_id, req.current_leader_epoch,
            req.supported_kraft_version) == (local.id, local.directory_id, epoch,
                                             KRAFT_VERSION_RANGE)
    return dst, req


def test_follower_sends_update_voter():
    """testFollowerSendsUpdateVoter: after 3 fetch timeouts, UpdateRaftVoter in place of a
    Fetch; the next request is a Fetch again."""
    local_listeners = listeners_of(LOCAL, another_listener(LOCAL))
    c, ctx, local, voter1, _ = follower853(local_listeners)
    complete_fetches(c, ctx, voter1.id)
    ctx.advance(c, FETCH_TIMEOUT_MS - 1)
    dst, req = update_voter_request(ctx, local)
    assert dst == voter1.id and req.endpoints == local_listeners
    c.handle(ctx, voter1.id, M.UpdateRaftVoterResponse(req.correlation_id, M.NONE, voter1.id, 4))
    ctx.poll(c)
    last_fetch(ctx)


def test_follower_sends_update_voter_when_different():
    """testFollowerSendsUpdateVoterWhenDifferent: listeners equal to the entry: Fetch only,
    and no busy poll loop once the period has passed."""
    c, ctx, local, voter1, _ = follower853()
    complete_fetches(c, ctx, voter1.id)
    ctx.advance(c, FETCH_TIMEOUT_MS - 1)
    assert ctx.take(M.UpdateRaftVoterRequest) == []
    last_fetch(ctx)
    assert all(at > ctx.now for at, *_ in ctx.timers)


def test_follower_sends_update_voter_if_pending_fetch_during_timeout():
    """testFollowerSendsUpdateVoterIfPendingFetchDuringTimeout (4.x): the period ends while a
    Fetch is in flight: UpdateRaftVoter goes once that Fetch is answered."""
    local_listeners = listeners_of(LOCAL, another_listener(LOCAL))
    c, ctx, local, voter1, _ = follower853(local_listeners)
    complete_fetches(c, ctx, voter1.id)
    req = last_fetch(ctx)                  # the last Fetch before the period ends
    ctx.advance(c, REQUEST_TIMEOUT_MS - 1)
    assert ctx.sent == []
    c.handle(ctx, voter1.id, M.RaftFetchResponse(req.correlation_id, M.NONE, voter1.id, 4, 0))
    ctx.poll(c)
    update_voter_request(ctx, local)


def test_update_voter_response_causes_epoch_change():
    """testUpdateVoterResponseCausesEpochChange: the answer names a newer leader: fetch from
    it in its epoch."""
    local_listeners = listeners_of(LOCAL, another_listener(LOCAL))
    c, ctx, local, voter1, voter2 = follower853(local_listeners)
    complete_fetches(c, ctx, voter1.id)
    ctx.advance(c, FETCH_TIMEOUT_MS - 1)
    _, req = update_voter_request(ctx, local)
    c.handle(ctx, voter1.id, M.UpdateRaftVoterResponse(req.correlation_id, M.NONE, voter2.id, 5))
    ctx.poll(c)
    last_fetch(ctx, 5, voter2.id)


@pytest.mark.parametrize("error", [M.NONE, "UNSUPPORTED_VERSION"])
def test_follower_sends_update_voter_with_kraft_version0(error):
    """testFollowerSendsUpdateVoterWithKraftVersion0 (4.1, KAFKA-16538): a static quorum's voter
    sends UpdateRaftVoter once per leader; after NONE or UNSUPPORTED_VERSION only Fetches."""
    local_listeners = listeners_of(LOCAL, another_listener(LOCAL))
    c, ctx, local, voter1, _ = follower853(local_listeners, static=True,
                                           update_voter_static=True)
    complete_fetches(c, ctx, voter1.id)
    ctx.advance(c, FETCH_TIMEOUT_MS - 1)
    _, req = update_voter_request(ctx, ReplicaKey(LOCAL, local.directory_id))
    c.handle(ctx, voter1.id, M.UpdateRaftVoterResponse(req.correlation_id, error, voter1.id, 4))
    ctx.poll(c)
    complete_fetches(c, ctx, voter1.id, times=10)
    assert ctx.take(M.UpdateRaftVoterRequest) == []


# --- KafkaRaftClientReconfigTest: the kraft.version upgrade (4.1, KAFKA-16538) --------------------
def static_leader_with_updated_voters(voters_updated=(1, 2)):
    """A static quorum's leader (kraft.version 0) with a HWM, told by the voters in
    ``voters_updated`` (by UpdateRaftVoter) their directory ids and kraft.version range."""
    c, ctx, local, keys = leader853(1, 2, static=True, update_voter_static=True)
    for key in keys:
        fetch(c, ctx, key)
    for key in keys:
        if key.id - LOCAL in voters_updated:
            assert update_voter(c, ctx, key, listeners_of(key.id))[0] == M.NONE
    return c, ctx, local, keys


def test_kraft_upgrade_version():
    """testKRaftUpgradeVersion: the upgrade writes KRaftVersionRecord(1) and the voter set with
    every voter's directory id."""
    c, ctx, local, keys = static_leader_with_updated_voters()
    end = c.log.end_offset
    assert c.reconfig.upgrade_kraft_version(ctx, 1, c.state.volatile_voters) is None
    assert c.reconfig.history.last_kraft_version() == 1
    (_, _, version), (_, _, record) = c.log.entries[end:end + 2]
    assert version == KRaftVersionRecord(1)
    assert VoterSet.from_voters_record(record).voter_keys() == (local, *keys)


def test_invalid_kraft_upgrade_version():
    """testInvalidKRaftUpgradeVersion: refused until every voter is known to support it."""
    c, ctx, local, keys = static_leader_with_updated_voters(voters_updated=(1,))
    error = c.reconfig.upgrade_kraft_version(ctx, 1, c.state.volatile_voters)
    assert error[0] == "INVALID_UPDATE_VERSION"
    assert c.reconfig.history.last_kraft_version() == 0


# --- KafkaRaftClient.initialize of a lone voter (the KafkaRaftClientTest case the fix needs) ------
@pytest.mark.parametrize("pre_vote", [False, True])
def test_initialize_as_leader_from_state_store_single_member_quorum(pre_vote):
    """KafkaRaftClientTest.testInitializeAsLeaderFromStateStoreSingleMemberQuorum: a lone voter
    that led epoch 6 restarts Resigned, stands for election at once and leads epoch 7."""
    c = KafkaRaftClient(LOCAL, (LOCAL,), TEST_CONFIG, pre_vote=pre_vote,
                        quorum_state={"leader_epoch": 6, "leader_id": LOCAL, "voted_id": -1})
    c.start(Ctx())
    assert (c.state_name, c.epoch, c.leader_id) == ("Leader", 7, LOCAL)
    assert c.persisted_quorum_state == {"leader_epoch": 7, "leader_id": LOCAL, "voted_id": -1}
