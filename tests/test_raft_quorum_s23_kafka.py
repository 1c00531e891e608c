"""The QuorumStateTest cases not yet ported, read at 4.3.0 (confluentinc/kafka a9ce322153,
raft/src/test/java/org/apache/kafka/raft/QuorumStateTest.java): the Candidate's and the Leader's
ways to Follower and Unattached, the Resigned ones, the observer's and the voted Unattached's
forbidden transitions.

Adaptation to kafkasim: as in tests/test_raft_quorum_more_kafka.py (whose helpers this file
uses): the local id is 0, kraft.version 0 and 1 (``@EnumSource(KRaftVersion)``), the client
runs with ``pre_vote=True``; ``transitionToProspective`` / ``transitionToCandidate`` are
``_transitions._to_prospective`` / ``_to_candidate``, ``transitionToLeader``
``_transitions._on_become_leader``, ``transitionToResigned`` ``_transitions._to_resigned``,
``transitionToFollower(epoch, id, endpoints)`` ``_to_follower(ctx, epoch, id)``,
``transitionToUnattached(epoch, leader)`` ``_to_unattached(ctx, epoch[, leader])``.
``localWithRemoteVoterSet(IntStream.of(1))`` is the voter set (0, 1).
"""

from __future__ import annotations

import json

import pytest
from test_raft_quorum_more_kafka import (
    CONFIG,
    FETCH_MS,
    KRAFT,
    LOCAL,
    FakeCtx,
    dir_of,
    key,
    prospective,
    quorum,
    read,
    stored,
    voter_set,
)

from kafkasim.control.kraft.epoch_states import UNKNOWN, UnattachedState
from kafkasim.control.kraft.quorum_state_store import ElectionState
from kafkasim.control.kraft.raft import IllegalStateException, KafkaRaftClient
from kafkasim.control.kraft.voter_set import ReplicaKey

PAIR = (0, 1)       # localWithRemoteVoterSet(IntStream.of(otherNodeId))
TRIO = (0, 1, 2)    # localWithRemoteVoterSet(IntStream.of(node1, node2))


def persisted(kraft, epoch, voters, leader=None, voted=None) -> ElectionState:
    """ElectionState as the store reads it back: persistedVoters (the voters only at
    kraft.version 0) and persistedVotedKey (the directory id only at kraft.version 1)."""
    if voted is not None and not kraft:
        voted = key(voted.id, 0)
    return ElectionState(epoch, leader, voted, () if kraft else voters)


def stored_with(voters, **kw) -> dict:
    state = stored(**kw)
    state["voters"] = voters
    return state


def candidate(kraft, voters=PAIR):
    """initializeEmptyState + transitionToProspective + transitionToCandidate."""
    c, ctx = quorum(kraft, stored_with(voters), voters=voters)
    prospective(c, ctx)
    c._to_candidate(ctx)
    assert c.quorum().is_candidate() and c.epoch == 1
    return c, ctx


def leader(kraft, voters=PAIR):
    """... + recordGrantedVote(1) + transitionToLeader(0, accumulator)."""
    c, ctx = candidate(kraft, voters)
    c.state.record_granted_vote(1)
    c._transitions._on_become_leader(ctx)
    assert c.quorum().is_leader()
    return c, ctx


@KRAFT
def test_candidate_to_follower_higher_epoch(kraft):
    """QuorumStateTest.testCandidateToFollowerHigherEpoch @4.3.0: the vote of epoch 1 is not
    kept in epoch 5."""
    c, ctx = candidate(kraft)
    c._to_follower(ctx, 5, 1)
    assert c.epoch == 5 and c.quorum().leader_id() == 1
    assert read(c) == persisted(kraft, 5, PAIR, leader=1)


@KRAFT
def test_candidate_to_follower_same_epoch(kraft):
    """QuorumStateTest.testCandidateToFollowerSameEpoch @4.3.0: following in the epoch of its
    own candidacy keeps the vote for itself."""
    c, ctx = candidate(kraft)
    c._to_follower(ctx, c.epoch, 1)
    assert c.epoch == 1 and c.quorum().leader_id() == 1
    assert read(c) == persisted(kraft, 1, PAIR, leader=1, voted=key(LOCAL, 1))


@KRAFT
def test_candidate_to_unattached_higher_epoch(kraft):
    """QuorumStateTest.testCandidateToUnattachedHigherEpoch @4.3.0."""
    c, ctx = candidate(kraft)
    c._to_unattached(ctx, 5)
    assert c.epoch == 5 and c.quorum().leader_id() is None
    assert read(c) == persisted(kraft, 5, PAIR)


@KRAFT
def test_candidate_to_unattached_same_epoch(kraft):
    """QuorumStateTest.testCandidateToUnattachedSameEpoch @4.3.0: only a Prospective may go
    back to Unattached in its own epoch."""
    c, ctx = candidate(kraft)
    with pytest.raises(IllegalStateException):
        c._to_unattached(ctx, c.epoch)


@KRAFT
def test_leader_to_follower_higher_epoch(kraft):
    """QuorumStateTest.testLeaderToFollowerHigherEpoch @4.3.0."""
    c, ctx = leader(kraft)
    c._to_follower(ctx, 5, 1)
    assert c.epoch == 5 and c.quorum().leader_id() == 1
    assert read(c) == persisted(kraft, 5, PAIR, leader=1)


@KRAFT
def test_leader_to_follower_same_epoch(kraft):
    """QuorumStateTest.testLeaderToFollowerSameEpoch @4.3.0: a leader never follows another
    leader of its own epoch."""
    c, ctx = leader(kraft)
    with pytest.raises(IllegalStateException):
        c._to_follower(ctx, c.epoch, 1)


@KRAFT
def test_leader_to_unattached_higher_epoch(kraft):
    """QuorumStateTest.testLeaderToUnattachedHigherEpoch @4.3.0."""
    c, ctx = leader(kraft)
    c._to_unattached(ctx, 5)
    assert c.epoch == 5 and c.quorum().leader_id() is None
    assert read(c) == persisted(kraft, 5, PAIR)


@KRAFT
def test_leader_to_unattached_same_epoch(kraft):
    """QuorumStateTest.testLeaderToUnattachedSameEpoch @4.3.0."""
    c, ctx = leader(kraft)
    with pytest.raises(IllegalStateException):
        c._to_unattached(ctx, c.epoch)


@KRAFT
def test_initialize_as_only_voter(kraft):
    """QuorumStateTest.testInitializeAsOnlyVoter @4.3.0: QuorumState.initialize leaves the only
    voter Unattached in epoch 0 (KafkaRaftClient then makes it a Candidate)."""
    c = KafkaRaftClient(LOCAL, (LOCAL,), CONFIG, pre_vote=True,
                        quorum_state=stored_with((LOCAL,)), kraft_version=kraft,
                        directory_id=dir_of(LOCAL, 1),
                        bootstrap_voters=voter_set(kraft, (LOCAL,)))
    ctx = FakeCtx()
    c.reconfig.initialize(ctx)
    state = c._transitions.initialize(ctx)          # QuorumState.initialize only
    assert isinstance(state, UnattachedState)
    assert state.epoch == 0 and state.leader_id == UNKNOWN
    c.start(ctx)                                    # KafkaRaftClient.initialize: candidacy
    assert c.quorum().is_leader()


@KRAFT
def test_observer_unattached_to_candidate_or_leader_or_resigned(kraft):
    """QuorumStateTest.testObserverUnattachedToCandidateOrLeaderOrResigned @4.3.0: an observer
    (the voter set is {1}) never becomes Candidate, Leader or Resigned."""
    c, ctx = quorum(kraft, stored_with((1,)), voters=(1,))
    assert c.quorum().is_observer()
    with pytest.raises(IllegalStateException):
        c._to_candidate(ctx)
    with pytest.raises(IllegalStateException):
        c._transitions._on_become_leader(ctx)
    with pytest.raises(IllegalStateException):
        c._transitions._to_resigned(ctx, ())
    assert c.quorum().is_unattached()


@KRAFT
def test_observer_unattached_to_unattached_voted(kraft):
    """QuorumStateTest.testObserverUnattachedToUnattachedVoted @4.3.0: an observer may record
    a vote (its Unattached state keeps the voted key)."""
    c, ctx = quorum(kraft, stored_with((1,), epoch=5), voters=(1,))
    assert c.quorum().is_observer()
    other = key(1, 1)
    c._transitions.unattached_add_voted_state(ctx, 5, other)
    q = c.quorum()
    assert q.is_unattached_and_voted() and q.is_observer()
    assert c.state.epoch == 5 and c.state.voted_key == other


@KRAFT
def test_resigned_to_follower_in_same_epoch(kraft):
    """QuorumStateTest.testResignedToFollowerInSameEpoch @4.3.0: a replica that was the leader
    of the stored epoch starts Resigned; it cannot follow itself, but may follow another
    replica in that epoch (Kafka's comment: KAFKA-18379 will forbid it)."""
    c, ctx = quorum(kraft, stored_with(TRIO, epoch=5, leader=LOCAL), voters=TRIO)
    assert c.quorum().is_resigned()
    with pytest.raises(IllegalStateException):
        c._to_follower(ctx, 5, LOCAL)
    c._to_follower(ctx, 5, 1)
    assert c.quorum().is_follower() and c.epoch == 5


@KRAFT
def test_resigned_to_unattached_in_higher_epoch(kraft):
    """QuorumStateTest.testResignedToUnattachedInHigherEpoch @4.3.0."""
    c, ctx = quorum(kraft, stored_with(TRIO, epoch=5, leader=LOCAL), voters=TRIO)
    assert c.quorum().is_resigned()
    c._to_unattached(ctx, 6)
    assert c.quorum().is_unattached() and c.epoch == 6


@KRAFT
def test_unattached_to_follower_higher_epoch(kraft):
    """QuorumStateTest.testUnattachedToFollowerHigherEpoch @4.3.0: the new Follower's fetch
    timer is the full fetch timeout."""
    c, ctx = quorum(kraft, stored_with(PAIR), voters=PAIR)
    c._to_unattached(ctx, 5)
    c._to_follower(ctx, 8, 1)
    assert c.quorum().is_follower()
    assert c.state.epoch == 8
    assert c.state.remaining_fetch_time_ms(ctx.now) == FETCH_MS


@KRAFT
def test_unattached_voted_to_candidate_or_leader_or_resigned(kraft):
    """QuorumStateTest.testUnattachedVotedToCandidateOrLeaderOrResigned @4.3.0: a voter that
    voted for another in its epoch cannot become Candidate (4.x: only a Prospective can),
    Leader or Resigned."""
    c, ctx = quorum(kraft, stored_with(TRIO), voters=TRIO)
    c._transitions.unattached_add_voted_state(ctx, 0, key(1, 0))
    with pytest.raises(IllegalStateException):
        c._to_candidate(ctx)
    with pytest.raises(IllegalStateException):
        c._transitions._on_become_leader(ctx)
    with pytest.raises(IllegalStateException):
        c._transitions._to_resigned(ctx, ())


# --- ElectionStateTest @4.3.0 -------------------------------------------------------------------
@pytest.mark.parametrize("version", [0, 1])
def test_quorum_state_data_round_trip(version):
    """ElectionStateTest.testQuorumStateDataRoundTrip @4.3.0: format 0 keeps the voters and
    drops the voted directory id, format 1 the other way round."""
    voted = ReplicaKey(1, "dir-voted-1")
    voters = {1, 2, 3}
    states = [ElectionState.with_unknown_leader(5, voters),
              ElectionState.with_elected_leader(5, 1, voters),
              ElectionState.with_voted_candidate(5, voted, voters),
              ElectionState.with_elected_leader(5, 1, voters, voted)]
    if version == 0:
        no_dir = ReplicaKey(1, None)
        expected = [ElectionState.with_unknown_leader(5, voters),
                    ElectionState.with_elected_leader(5, 1, voters),
                    ElectionState.with_voted_candidate(5, no_dir, voters),
                    ElectionState.with_elected_leader(5, 1, voters, no_dir)]
    else:
        expected = [ElectionState.with_unknown_leader(5, ()),
                    ElectionState.with_elected_leader(5, 1, ()),
                    ElectionState.with_voted_candidate(5, voted, ()),
                    ElectionState.with_elected_leader(5, 1, (), voted)]
    for state, want in zip(states, expected, strict=True):
        data = state.to_quorum_state_data(version)
        assert ElectionState.from_quorum_state_data(data) == want


def test_quorum_state_data_unknown_version():
    """ElectionState.toQuorumStateData @4.3.0: a version other than 0 or 1 is an
    IllegalStateException."""
    with pytest.raises(IllegalStateException, match="version 2"):
        ElectionState.with_unknown_leader(5, {1}).to_quorum_state_data(2)


def test_quorum_state_data_matches_the_file():
    """The store's file text (quorum_state_json) carries the same fields as
    toQuorumStateData of the stored election."""
    c, _ctx = candidate(1)
    text = c.store.quorum_state_json(PAIR, 1)
    data = json.loads(text)
    data.pop("data_version")
    assert ElectionState.from_quorum_state_data(data) == read(c)
