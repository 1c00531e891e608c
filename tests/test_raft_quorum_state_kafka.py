"""KRaft quorum state and leader state, ported from Kafka's raft unit tests.

Sources: apache/kafka trunk 1eb7644 (2024-10-25, the 3.9 line, before KIP-996 Pre-Vote):
raft/src/test/java/org/apache/kafka/raft/LeaderStateTest.java and QuorumStateTest.java, with
the rules of LeaderState.java, QuorumState.java, FileQuorumStateStore.java and the
``canGrantVote`` of each EpochState. tests/test_raft.py already ports
testUpdateHighWatermarkQuorumSizeThree, testInitializePrimordialEpoch, the initial state of
testInitializeAs*, testCandidateToCandidate (retries), testCannotFollowOrVoteForSelf (follow),
testFollowerToFollowerSameEpoch, testObserverCannotBecomeCandidateOrLeader (candidate) and
testHighWatermarkRetained; this file covers the rest.

Adaptation to kafkasim (kafkasim.control.kraft.raft):

- Kafka's ``LeaderState`` is ``raft.LeaderState(local_id, epoch, epoch_start_offset, voters,
  granting, now, fetch_timeout)``; ``updateLocalState(offset, lastVoterSet)`` is
  ``update_voter_and_observer_states(ids)`` + ``update_local_state(leo)``;
  ``updateReplicaState(key, now, offset)`` is ``update_replica_state(id, now, offset,
  leader_leo)``; ``highWatermark()`` Optional.empty() is -1; ``Long.MAX_VALUE`` is raft.NEVER.
  ReplicaKeys are node ids (kafkasim's LeaderState keys replicas by id), so the
  ``withDirectoryId`` parameter has no counterpart; the local id is 0 as in Kafka.
- Kafka's ``QuorumState`` is the client itself: ``transitionToUnattached / Follower /
  Candidate`` are ``KafkaRaftClient._to_unattached / _to_follower / _to_candidate``,
  ``transitionToLeader`` is ``_transitions._on_become_leader``, ``transitionToResigned`` is
  ``_transitions._to_resigned``, ``transitionToUnattachedVotedState`` is a VoteRequest the
  client grants (or ``_transitions._add_voted_state`` for the current epoch). The local id is 1
  (Kafka: 0), voters are (1, 2) or (1, 2, 3); ``store.readElectionState()`` is
  ``persisted_quorum_state`` / ``quorum_state_json()``; IllegalStateException is
  raft.IllegalStateException (a RuntimeError).
  ``remainingElectionTimeMs`` / ``remainingFetchTimeMs`` are the state's deadline minus now;
  Kafka's MockableRandom jitter is the FakeCtx's ``random_int`` value (election timeout 1000 ms
  + jitter 250 ms, fetch timeout 2000 ms: kafkasim's defaults).

tests/test_raft_client_more_kafka.py ports the rest of LeaderStateTest: the withDirectoryId
variants (ReplicaKeys, VoterSets), testNonFollowerAcknowledgement, testLeaderEndpoints,
testUpdateVotersFromNoDirectoryIdToDirectoryId and testBeginQuorumEpochTimer.

Left out (no kafkasim counterpart): testRequireNonNullAccumulator (no accumulator object),
testUpdateHighWatermarkMetadata (no offset metadata),
testFollowerToFollowerSameEpochAndMoreEndpoints and the endpoint halves
of the follower tests (no endpoints in the quorum state), testCandidateToLeader and
testLeaderToLeader's happy path (covered by test_raft.py::test_initialize_single_member_quorum),
the backoff half of testCandidateToCandidate (no startBackingOff API), testInitializeWithCorrupted
Store (the client takes a parsed dict, no store), testHasRemoteLeader (no accessor),
testInitializeWithEmptyLocalId and testNoLocalIdInitializationFailsIfElectionStateHasVoted
Candidate (node id is mandatory), and every voted-key directory id of a remote candidate
(VoteRequest carries no candidate directory id).
"""

from __future__ import annotations

import json

import pytest

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft.raft import (
    NEVER,
    IllegalStateException,
    KafkaRaftClient,
    LeaderState,
    RaftLog,
)
from kafkasim.control.kraft.voter_set import ZERO_UUID, VoterSet

ELECTION_MS = 1000  # controller.quorum.election.timeout.ms default
FETCH_MS = 2000  # controller.quorum.fetch.timeout.ms default
JITTER = 250
CHECK_QUORUM_MS = int(FETCH_MS * 1.5)  # LeaderState.CHECK_QUORUM_TIMEOUT_FACTOR


class FakeCtx:
    """The client's RaftContext: records sends, ignores timers; time is set by the test and
    ``random_int`` answers the queued values (Kafka's MockableRandom.mockNextInt)."""

    def __init__(self, values=()):
        self.now = 0
        self.sent: list[tuple[int, object]] = []
        self.values = list(values)

    def send(self, dst, msg):
        self.sent.append((dst, msg))

    def schedule(self, delay_ms, timer, *args):
        pass

    def random_int(self, bound):
        return self.values.pop(0) % bound if self.values else 0

    def trace(self, kind, detail):
        pass

    def on_leader_change(self, leader_id, epoch):
        pass

    def on_high_watermark(self, hw):
        pass

    def take(self, cls):
        out = [(d, m) for d, m in self.sent if isinstance(m, cls)]
        self.sent = [(d, m) for d, m in self.sent if not isinstance(m, cls)]
        return out


# --- LeaderStateTest ------------------------------------------------------------------------------
def leader_state(voters, epoch_start_offset, local=0) -> LeaderState:
    """LeaderStateTest.newLeaderState: epoch 5, fetch timeout 2000, created at time 0."""
    return LeaderState(local, 5, epoch_start_offset, voters, {local}, 0, FETCH_MS)


def update_local(s: LeaderState, leo: int, voters=None) -> bool:
    """LeaderState.updateLocalState(endOffset, lastVoterSet)."""
    if voters is not None:
        s.update_voter_and_observer_states(voters)
    return s.update_local_state(leo)


def update_replica(s: LeaderState, replica: int, offset: int, now: int = 0) -> bool:
    """LeaderState.updateReplicaState(key, now, offset): the leader LEO is its own state's."""
    local = s.voter_states.get(s.leader_id) or s.observer_states.get(s.leader_id)
    leo = local.end_offset if local is not None and local.end_offset is not None else 0
    return s.update_replica_state(replica, now, offset, leo)


def non_acknowledging(s: LeaderState) -> set[int]:
    """LeaderState.nonAcknowledgingVoters."""
    return {v for v, r in s.voter_states.items() if not r.has_acknowledged_leader}


def test_update_high_watermark_quorum_size_one():
    """testUpdateHighWatermarkQuorumSizeOne: a lone leader commits once past the epoch start."""
    s = leader_state((0,), 15)
    assert s.high_watermark == -1
    assert not update_local(s, 15, (0,))
    assert non_acknowledging(s) == set()
    assert s.high_watermark == -1
    assert update_local(s, 16, (0,)) and s.high_watermark == 16
    assert update_local(s, 20, (0,)) and s.high_watermark == 20


def test_non_monotonic_local_end_offset_update():
    """testNonMonotonicLocalEndOffsetUpdate: the leader's own end offset never goes back."""
    s = leader_state((0,), 15)
    assert update_local(s, 16, (0,)) and s.high_watermark == 16
    with pytest.raises(IllegalStateException, match="non-monotonic update of local end offset"):
        update_local(s, 15, (0,))


def test_idempotent_end_offset_update():
    """testIdempotentEndOffsetUpdate."""
    s = leader_state((0,), 15)
    assert update_local(s, 16, (0,))
    assert not update_local(s, 16, (0,))
    assert s.high_watermark == 16


def test_update_high_watermark_quorum_size_two():
    """testUpdateHighWatermarkQuorumSizeTwo: the follower's fetch acknowledges the leader; the
    HW needs both voters past the epoch start offset 10."""
    s = leader_state((0, 1), 10)
    assert not update_local(s, 13, (0, 1))
    assert non_acknowledging(s) == {1}
    assert s.high_watermark == -1
    assert not update_replica(s, 1, 10)
    assert non_acknowledging(s) == set()
    assert s.high_watermark == -1
    assert update_replica(s, 1, 11) and s.high_watermark == 11
    assert update_replica(s, 1, 13) and s.high_watermark == 13


def test_high_watermark_does_increase_from_new_voter():
    """testHighWatermarkDoesIncreaseFromNewVoter: an observer's offset does not count until it
    is in the voter set; then it does."""
    s = leader_state((0, 1), 5)
    assert not update_local(s, 15, (0, 1))
    assert update_replica(s, 1, 10) and s.high_watermark == 10
    assert not update_replica(s, 2, 15)  # node 2 is an observer: no HW change
    assert s.high_watermark == 10
    assert update_local(s, 15, (0, 1, 2))  # node 2 joins: 15 on a majority
    assert s.high_watermark == 15
    assert not update_local(s, 16, (0, 1, 2))
    assert s.high_watermark == 15
    assert update_replica(s, 2, 16) and s.high_watermark == 16


def test_high_watermark_does_not_decrease_from_new_voter():
    """testHighWatermarkDoesNotDecreaseFromNewVoter: a larger voter set whose majority is
    behind the HW leaves the HW where it is."""
    s = leader_state((0, 1, 2), 5)
    assert not update_local(s, 15, (0, 1, 2))
    assert update_replica(s, 1, 15) and s.high_watermark == 15
    assert not update_replica(s, 2, 10)
    assert not update_replica(s, 3, 10)  # observer
    assert not update_local(s, 16, (0, 1, 2, 3))
    assert s.high_watermark == 15
    assert not update_replica(s, 2, 13) and s.high_watermark == 15
    assert not update_replica(s, 3, 13) and s.high_watermark == 15
    assert not update_replica(s, 1, 16) and s.high_watermark == 15
    assert update_replica(s, 3, 16) and s.high_watermark == 16


def test_update_high_watermark_removing_follower_from_voter_states():
    """testUpdateHighWatermarkRemovingFollowerFromVoterStates: the removed voter's offset stops
    counting; the HW waits for the remaining majority and never decreases."""
    s = leader_state((0, 1, 2), 10)
    assert not update_local(s, 15, (0, 1, 2))
    assert update_replica(s, 1, 15)
    assert not update_replica(s, 2, 10)
    assert s.high_watermark == 15
    assert not update_local(s, 17, (0, 2))
    assert s.high_watermark == 15
    assert not update_replica(s, 2, 14) and s.high_watermark == 15
    assert not update_local(s, 18, (0, 2)) and s.high_watermark == 15
    assert not update_replica(s, 1, 18) and s.high_watermark == 15  # now an observer
    assert not update_replica(s, 2, 15) and s.high_watermark == 15
    assert update_replica(s, 2, 16) and s.high_watermark == 16


def test_update_high_watermark_quorum_removing_leader_from_voter_states():
    """testUpdateHighWatermarkQuorumRemovingLeaderFromVoterStates: a leader outside the voter
    set does not count itself; the HW does not go back to 10."""
    s = leader_state((0, 1, 2), 10)
    assert not update_local(s, 15, (0, 1, 2))
    assert update_replica(s, 1, 15)
    assert not update_replica(s, 2, 10)
    assert s.high_watermark == 15
    assert not update_local(s, 17, (1, 2))
    assert s.high_watermark == 15
    assert not update_replica(s, 1, 16) and s.high_watermark == 15
    assert not update_local(s, 18, (1, 2)) and s.high_watermark == 15
    assert not update_replica(s, 2, 14) and s.high_watermark == 15
    assert not update_replica(s, 2, 15) and s.high_watermark == 15
    assert update_replica(s, 2, 16) and s.high_watermark == 16


def test_non_monotonic_high_watermark_update():
    """testNonMonotonicHighWatermarkUpdate: a follower that lost its disk fetches from 5; the
    leader does not rewind the HW."""
    s = leader_state((0, 1), 0)
    update_local(s, 10, (0, 1))
    update_replica(s, 1, 10)
    assert s.high_watermark == 10
    assert not update_replica(s, 1, 5)
    assert s.high_watermark == 10


def test_get_non_leader_followers_by_fetch_offset_descending():
    """testGetNonLeaderFollowersByFetchOffsetDescending: the leader is left out, the furthest
    follower comes first."""
    s = leader_state((0, 1, 2), 10)
    update_local(s, 15, (0, 1, 2))
    assert s.high_watermark == -1
    update_replica(s, 1, 10)
    update_replica(s, 2, 15)
    assert list(s.non_leader_voters_by_descending_fetch_offset()) == [2, 1]


def test_check_quorum():
    """testCheckQuorum: five voters; fetches from two followers (with the leader, a majority)
    reset the timer; one voter plus an observer do not."""
    s = leader_state((0, 1, 2, 3, 4), 0)
    now = 0
    assert s.time_until_check_quorum_expires(now) == CHECK_QUORUM_MS
    now += CHECK_QUORUM_MS // 2
    assert s.time_until_check_quorum_expires(now) > 0
    s.update_check_quorum_for_following_voter(1, now)
    s.update_check_quorum_for_following_voter(2, now)
    assert s.time_until_check_quorum_expires(now) == CHECK_QUORUM_MS
    now += CHECK_QUORUM_MS // 2
    remaining = s.time_until_check_quorum_expires(now)
    assert remaining > 0
    s.update_check_quorum_for_following_voter(3, now)
    s.update_check_quorum_for_following_voter(5, now)  # observer
    assert s.time_until_check_quorum_expires(now) == remaining
    now += CHECK_QUORUM_MS // 2
    assert s.time_until_check_quorum_expires(now) == 0


def test_check_quorum_after_voter_set_changes():
    """testCheckQuorumAfterVoterSetChanges: the majority follows the voter set, and a leader
    removed from it no longer counts itself."""
    s = leader_state((0, 1, 2), 0)
    now = 0
    assert s.time_until_check_quorum_expires(now) == CHECK_QUORUM_MS
    now += CHECK_QUORUM_MS // 2
    assert s.time_until_check_quorum_expires(now) == CHECK_QUORUM_MS // 2
    s.update_check_quorum_for_following_voter(1, now)
    assert s.time_until_check_quorum_expires(now) == CHECK_QUORUM_MS
    update_local(s, 1, (0, 1, 2, 3))  # node 3 joins
    now += CHECK_QUORUM_MS // 2
    s.update_check_quorum_for_following_voter(1, now)
    assert s.time_until_check_quorum_expires(now) == CHECK_QUORUM_MS // 2
    s.update_check_quorum_for_following_voter(2, now)
    assert s.time_until_check_quorum_expires(now) == CHECK_QUORUM_MS
    update_local(s, 1, (1, 2, 3))  # the leader leaves the voter set
    now += CHECK_QUORUM_MS // 2
    s.update_check_quorum_for_following_voter(2, now)
    assert s.time_until_check_quorum_expires(now) == CHECK_QUORUM_MS // 2
    s.update_check_quorum_for_following_voter(1, now)
    assert s.time_until_check_quorum_expires(now) == CHECK_QUORUM_MS


def test_check_quorum_with_one_voter():
    """testCheckQuorumWithOneVoter: a single voter's timer never expires (Long.MAX_VALUE)."""
    s = leader_state((0,), 0)
    assert s.time_until_check_quorum_expires(0) == NEVER
    assert s.time_until_check_quorum_expires(CHECK_QUORUM_MS) == NEVER
    s.update_check_quorum_for_following_voter(1, CHECK_QUORUM_MS)  # an observer
    assert s.time_until_check_quorum_expires(CHECK_QUORUM_MS) == NEVER


@pytest.mark.parametrize("up_to_date", [True, False])
def test_leader_grant_vote(up_to_date):
    """LeaderStateTest.testGrantVote: a leader grants no vote in its epoch, not even to
    itself."""
    s = LeaderState(1, 5, 1, (1, 2, 3), {1}, 0, FETCH_MS)
    for candidate in (1, 2, 3):
        assert not s.can_grant_vote(candidate, up_to_date, False)


def test_follower_acknowledgement():
    """testFollowerAcknowledgement, through the client: a voter acknowledges the new leader by
    answering BeginQuorumEpoch or by fetching (addAcknowledgementFrom /
    updateFollowerState)."""
    c, ctx = in_state("leader", voters=(1, 2, 3))
    assert non_acknowledging(c.state) == {2, 3}
    begins = dict(ctx.take(M.BeginQuorumEpochRequest))
    assert set(begins) == {2, 3}
    c.handle(ctx, 2, M.BeginQuorumEpochResponse(begins[2].correlation_id, M.NONE, 1, c.epoch))
    assert non_acknowledging(c.state) == {3}
    c.handle(ctx, 3, M.RaftFetchRequest(77, 3, c.epoch, 0, 0, 0))
    assert non_acknowledging(c.state) == set()


# --- QuorumStateTest ------------------------------------------------------------------------------
def client(node=1, voters=(1, 2), stored=None, values=(), pre_vote=False, **kw):
    c = KafkaRaftClient(
        node, voters, {}, pre_vote=pre_vote, quorum_state=stored, observer=node not in voters, **kw
    )
    ctx = FakeCtx(values)
    c.start(ctx)
    return c, ctx


def vote(c, ctx, epoch, candidate, last_epoch=0, last_offset=0):
    """A VoteRequest the client answers (transitionToUnattachedVotedState when granted)."""
    c.handle(ctx, candidate, M.VoteRequest(1, epoch, candidate, last_epoch, last_offset))
    ((_, resp),) = ctx.take(M.VoteResponse)
    return resp


def begin_epoch(c, ctx, epoch, leader):
    """A BeginQuorumEpoch from ``leader``: transitionToFollower(epoch, leader)."""
    c.handle(ctx, leader, M.BeginQuorumEpochRequest(1, epoch, leader))
    ctx.take(M.BeginQuorumEpochResponse)


def elect(c, ctx):
    """transitionToCandidate, the other voters grant, transitionToLeader."""
    c._to_candidate(ctx)
    c._poll(ctx)
    for d, req in ctx.take(M.VoteRequest):
        c.handle(ctx, d, M.VoteResponse(req.correlation_id, M.NONE, -1, c.epoch, True))
    assert c.state_name == "Leader"


def in_state(name, voters=(1, 2), values=()):
    """The local voter 1 in a state of epoch 5 (Candidate / Leader: 6, after
    transitionToUnattached(5))."""
    c, ctx = client(1, voters, values=values)
    if name == "voted":
        assert vote(c, ctx, 5, 2).vote_granted
    elif name == "follower":
        begin_epoch(c, ctx, 5, 2)
    else:
        c._to_unattached(ctx, 5)
        if name in ("candidate", "leader"):
            c._to_candidate(ctx)
        if name == "leader":
            c._poll(ctx)
            for d, req in ctx.take(M.VoteRequest):
                c.handle(ctx, d, M.VoteResponse(req.correlation_id, M.NONE, -1, 6, True))
    expected = {"voted": "Unattached"}.get(name, name.capitalize())
    assert c.state_name == expected
    return c, ctx


def stored(epoch, leader=-1, voted=-1):
    return {"leader_epoch": epoch, "leader_id": leader, "voted_id": voted}


def election_time(c, ctx) -> int:
    """EpochState.remainingElectionTimeMs."""
    return c.state.election_deadline - ctx.now


def test_initialize_timers():
    """testInitializeAsUnattached, testInitializeAsVoted, testInitializeAsFollower: an
    Unattached (voted or not) restarts with electionTimeout + jitter; a Follower with the
    fetch timeout."""
    c, ctx = client(1, (1, 2, 3), stored(5), values=[JITTER])
    assert (c.state_name, c.epoch, c.voted_id) == ("Unattached", 5, -1)
    assert election_time(c, ctx) == ELECTION_MS + JITTER
    c, ctx = client(1, (1, 2, 3), stored(5, voted=2), values=[JITTER])
    assert (c.state_name, c.epoch, c.voted_id) == ("Unattached", 5, 2)
    assert election_time(c, ctx) == ELECTION_MS + JITTER
    c, ctx = client(1, (1, 2, 3), stored(5, leader=2))
    assert (c.state_name, c.epoch, c.leader_id) == ("Follower", 5, 2)
    assert c.state.fetch_deadline - ctx.now == FETCH_MS


def test_initialize_as_resigned_candidate():
    """testInitializeAsResignedCandidate: a persisted self-vote restarts as Candidate with only
    its own vote recorded and a fresh election timer."""
    c, ctx = client(1, (1, 2, 3), stored(5, voted=1), values=[JITTER])
    assert (c.state_name, c.epoch) == ("Candidate", 5)
    assert c.persisted_quorum_state == stored(5, voted=1)
    assert c.state.unrecorded_voters() == {2, 3}
    assert c.state.granting_voters() == {1}
    assert c.state.rejecting_voters() == set()
    assert election_time(c, ctx) == ELECTION_MS + JITTER


def test_initialize_as_resigned_leader():
    """testInitializeAsResignedLeader: a persisted leader restarts Resigned in its epoch, every
    other voter unacknowledged."""
    c, ctx = client(1, (1, 2, 3), stored(5, leader=1), values=[JITTER])
    assert (c.state_name, c.epoch, c.leader_id) == ("Resigned", 5, 1)
    assert c.persisted_quorum_state == stored(5, leader=1)
    assert sorted(c.state.unacked_voters) == [2, 3]
    assert election_time(c, ctx) == ELECTION_MS + JITTER


def test_initialize_as_unattached_when_missing_endpoints():
    """testInitializeAsUnattachedWhenMissingEndpoints: the persisted leader 4 is not in the
    voter set, so its endpoints are unknown: Unattached in epoch 5, not Follower."""
    c, _ctx = client(1, (1, 2, 3), stored(5, leader=4))
    assert (c.state_name, c.epoch) == ("Unattached", 5)


def test_candidate_to_candidate_resets_votes_and_timer():
    """testCandidateToCandidate: a new candidacy bumps the epoch, forgets the rejections and
    draws a new election timeout."""
    c, ctx = client(1, (1, 2, 3))
    c._to_candidate(ctx)
    assert (c.state_name, c.epoch) == ("Candidate", 1)
    c.state.record_rejected_vote(2)
    ctx.now = 500
    ctx.values = [JITTER]
    c._to_candidate(ctx)
    assert (c.state_name, c.epoch) == ("Candidate", 2)
    assert c.state.granting_voters() == {1} and c.state.rejecting_voters() == set()
    assert election_time(c, ctx) == ELECTION_MS + JITTER


def test_unattached_timer_rules():
    """testUnattachedToUnattached and testUnattachedVotedToUnattachedHigherEpoch keep the
    election timer; testUnattachedVotedSameEpoch, testUnattachedToCandidate and
    testUnattachedVotedToCandidate draw a new one."""
    c, ctx = client(1, (1, 2, 3), values=[JITTER])
    c._to_unattached(ctx, 5)
    remaining = election_time(c, ctx)
    ctx.now += 100
    c._to_unattached(ctx, 6)  # Unattached -> Unattached: timer kept
    assert (c.epoch, election_time(c, ctx)) == (6, remaining - 100)
    ctx.values = [JITTER]
    assert vote(c, ctx, 6, 2).vote_granted  # voting resets the timer
    assert (c.state_name, c.epoch, c.voted_id) == ("Unattached", 6, 2)
    assert election_time(c, ctx) == ELECTION_MS + JITTER
    assert c.persisted_quorum_state == stored(6, voted=2)
    ctx.now += 100
    c._to_unattached(ctx, 7)  # voted -> Unattached: timer kept
    assert (c.epoch, c.voted_id) == (7, -1)
    assert election_time(c, ctx) == ELECTION_MS + JITTER - 100
    assert vote(c, ctx, 8, 3).vote_granted  # testUnattachedVotedHigherEpoch
    assert c.persisted_quorum_state == stored(8, voted=3)
    ctx.now += 100
    ctx.values = [JITTER]
    c._to_candidate(ctx)  # testUnattachedVotedToCandidate
    assert (c.state_name, c.epoch) == ("Candidate", 9)
    assert election_time(c, ctx) == ELECTION_MS + JITTER


def test_follower_timer_rules():
    """testFollowerToCandidate, testFollowerToUnattachedHigherEpoch,
    testFollowerToUnattachedVotedHigherEpoch: leaving a Follower draws a new election timer;
    testUnattachedToFollowerSameEpoch / HigherEpoch: a new Follower has the fetch timeout."""
    c, ctx = client(1, (1, 2, 3))
    c._to_unattached(ctx, 5)
    ctx.now = 300
    c._to_follower(ctx, 5, 2)
    assert c.state.fetch_deadline - ctx.now == FETCH_MS
    ctx.now = 400
    ctx.values = [JITTER]
    c._to_candidate(ctx)
    assert (c.epoch, election_time(c, ctx)) == (6, ELECTION_MS + JITTER)
    c._to_follower(ctx, 8, 2)  # higher epoch
    assert c.state.fetch_deadline - ctx.now == FETCH_MS
    ctx.now = 500
    ctx.values = [JITTER]
    c._to_unattached(ctx, 9)
    assert (c.state_name, election_time(c, ctx)) == ("Unattached", ELECTION_MS + JITTER)
    c._to_follower(ctx, 9, 2)
    ctx.now = 600
    ctx.values = [0, JITTER]  # transitionToUnattached, then the vote
    assert vote(c, ctx, 10, 3).vote_granted
    assert (c.state_name, c.epoch, c.voted_id) == ("Unattached", 10, 3)
    assert election_time(c, ctx) == ELECTION_MS + JITTER


@pytest.mark.parametrize(
    "start,step,expected",
    [
        # testCandidateToFollower / testCandidateToUnattached / testCandidateToUnattachedVoted
        ("candidate", ("follow", 7, 2), stored(7, leader=2)),
        ("candidate", ("unattached", 7), stored(7)),
        ("candidate", ("vote", 7, 2), stored(7, voted=2)),
        # testLeaderToFollower / testLeaderToUnattached / testLeaderToUnattachedVoted
        ("leader", ("follow", 7, 2), stored(7, leader=2)),
        ("leader", ("unattached", 7), stored(7)),
        ("leader", ("vote", 7, 2), stored(7, voted=2)),
        # testUnattachedVotedToFollowerSameEpoch / HigherEpoch (3.9: the vote is not kept)
        ("voted", ("follow", 5, 2), stored(5, leader=2)),
        ("voted", ("follow", 8, 2), stored(8, leader=2)),
        # testFollowerToFollowerHigherEpoch, testFollowerToUnattachedHigherEpoch
        ("follower", ("follow", 9, 2), stored(9, leader=2)),
        ("follower", ("unattached", 9), stored(9)),
        # testUnattachedToFollowerSameEpoch
        ("unattached", ("follow", 5, 2), stored(5, leader=2)),
    ],
)
def test_durable_transitions_are_persisted(start, step, expected):
    """QuorumState.durableTransitionTo: each transition writes the quorum-state file
    (kraft.version 0: data_version 0 with the voters) before the state changes."""
    c, ctx = in_state(start)
    kind, *args = step
    if kind == "follow":
        c._to_follower(ctx, *args)
    elif kind == "unattached":
        c._to_unattached(ctx, *args)
    else:  # an up-to-date candidate (Kafka's test calls transitionToUnattachedVotedState)
        assert vote(c, ctx, *args, c.log.last_fetched_epoch, c.log.end_offset).vote_granted
    assert c.persisted_quorum_state == expected
    assert (c.epoch, c.leader_id, c.voted_id) == tuple(expected.values())
    data = json.loads(c.quorum_state_json())
    assert (data["leaderEpoch"], data["leaderId"], data["votedId"]) == tuple(expected.values())
    assert data["data_version"] == 0
    assert data["currentVoters"] == [{"voterId": 1}, {"voterId": 2}]


@pytest.mark.parametrize("start", ["unattached", "voted", "follower", "candidate", "leader"])
def test_any_state_to_lower_epoch_fails(start):
    """testUnattachedToAnyStateLowerEpoch, testUnattachedVotedToAnyStateLowerEpoch,
    testFollowerToAnyStateLowerEpoch, testCandidateToAnyStateLowerEpoch,
    testLeaderToAnyStateLowerEpoch: no transition to epoch 4; a vote for epoch 4 is fenced;
    epoch and quorum-state are unchanged."""
    c, ctx = in_state(start)
    epoch, before = c.epoch, c.persisted_quorum_state
    with pytest.raises(RuntimeError, match="Cannot transition to Unattached"):
        c._to_unattached(ctx, 4)
    with pytest.raises(RuntimeError, match="Cannot transition to Follower"):
        c._to_follower(ctx, 4, 2)
    resp = vote(c, ctx, 4, 2)
    assert (resp.error, resp.vote_granted) == (M.FENCED_LEADER_EPOCH, False)
    assert c.epoch == epoch == (6 if start in ("candidate", "leader") else 5)
    assert c.persisted_quorum_state == before


@pytest.mark.parametrize("start", ["unattached", "voted", "follower", "candidate", "leader"])
def test_all_states_to_unattached_fail_in_same_epoch(start):
    """testAllStatesToUnattachedFailInSameEpoch, testUnattachedVotedToUnattachedSameEpoch,
    testFollowerToUnattachedSameEpoch: transitionToUnattached needs a larger epoch."""
    c, ctx = in_state(start)
    with pytest.raises(RuntimeError, match="Cannot transition to Unattached"):
        c._to_unattached(ctx, c.epoch)
    c._to_unattached(ctx, c.epoch + 1)
    assert c.state_name == "Unattached"


@pytest.mark.parametrize("start", ["candidate", "leader"])
def test_leader_cannot_follow_in_its_epoch_nor_become_candidate(start):
    """testLeaderToCandidate (a Leader cannot become Candidate); transitionToFollower in the
    leader's own epoch is illegal, a Candidate may follow the winner of its epoch."""
    c, ctx = in_state(start)
    if start == "leader":
        with pytest.raises(RuntimeError, match="Cannot transition to Candidate"):
            c._to_candidate(ctx)
        with pytest.raises(RuntimeError, match="Cannot transition to Follower"):
            c._to_follower(ctx, 6, 2)
        assert (c.state_name, c.epoch) == ("Leader", 6)
    else:
        c._to_follower(ctx, 6, 2)
        assert (c.state_name, c.epoch, c.leader_id) == ("Follower", 6, 2)


def test_leader_to_resigned():
    """testLeaderToResigned: Resigned keeps the leader's epoch and election (a memory
    transition: the quorum-state file still names the leader); a lone voter waits for no
    EndQuorumEpoch acknowledgement."""
    c, ctx = client(1, (1,))
    assert (c.state_name, c.epoch) == ("Leader", 1)   # a lone voter is elected at start
    c._transitions._to_resigned(ctx, (1,))
    assert (c.state_name, c.epoch, c.leader_id) == ("Resigned", 1, 1)
    assert c.persisted_quorum_state == stored(1, leader=1)
    assert c.state.unacked_voters == []


def test_can_become_follower_of_non_voter():
    """testCanBecomeFollowerOfNonVoter: a vote for, then following, a node outside the voter
    set."""
    c, ctx = client(1, (1, 2))
    assert vote(c, ctx, 4, 3).vote_granted
    assert (c.state_name, c.epoch, c.voted_id) == ("Unattached", 4, 3)
    begin_epoch(c, ctx, 4, 3)
    assert (c.state_name, c.leader_id, c.epoch) == ("Follower", 3, 4)


def test_observer_with_id_can_vote_but_not_run():
    """testObserverWithIdCanVote, testObserverFromUnattachedVotedToCandidate,
    testObserverCannotBecomeCandidateOrLeader: an observer grants votes, never runs."""
    c, ctx = client(3, (1, 2))
    assert c.observer
    assert vote(c, ctx, 5, 1).vote_granted
    assert (c.state_name, c.epoch, c.voted_id) == ("Unattached", 5, 1)
    with pytest.raises(RuntimeError, match="Candidate"):
        c._to_candidate(ctx)
    assert c.state_name == "Unattached"


def test_observer_timers():
    """testObserverFollowerToUnattached (an observer stays Unattached until it finds a leader:
    election timeout Long.MAX_VALUE), testObserverUnattachedToFollower (fetch timeout)."""
    c, ctx = client(3, (1, 2))
    c._to_follower(ctx, 2, 1)
    c._to_unattached(ctx, 3)
    assert (c.state_name, c.epoch) == ("Unattached", 3)
    assert c.state.election_deadline == NEVER
    c._to_follower(ctx, 3, 1)
    assert c.state.fetch_deadline - ctx.now == FETCH_MS


@pytest.mark.parametrize("state", ["unattached", "voted", "follower", "candidate", "resigned"])
@pytest.mark.parametrize("up_to_date", [True, False])
def test_can_grant_vote_per_state(state, up_to_date):
    """canGrantVote of each EpochState at 1eb7644 (UnattachedStateTest, FollowerStateTest,
    CandidateStateTest, ResignedStateTest .testGrantVote): Unattached grants an up-to-date log;
    voted grants its candidate again (whatever the log) and nobody else; Follower, Candidate
    and Resigned grant nothing in their epoch."""
    if state == "resigned":
        c, ctx = client(1, (1, 2, 3), stored(5, leader=1))
    else:
        c, ctx = in_state(state, voters=(1, 2, 3))
    st = c.state
    expected = {"unattached": {2: up_to_date, 3: up_to_date}, "voted": {2: True, 3: False}}.get(
        state, {2: False, 3: False}
    )
    assert {cand: st.can_grant_vote(cand, up_to_date, False) for cand in (2, 3)} == expected


def test_one_vote_per_epoch_even_after_restart():
    """QuorumState.initialize + UnattachedState.canGrantVote: the vote is durable, so a
    restarted voter keeps it and refuses another candidate in that epoch."""
    c, ctx = client(1, (1, 2, 3), log=RaftLog([(0, 1, "a")]))
    assert vote(c, ctx, 3, 2, 1, 1).vote_granted
    again = KafkaRaftClient(
        1, (1, 2, 3), {}, pre_vote=False, quorum_state=c.persisted_quorum_state, log=c.log
    )
    ctx2 = FakeCtx()
    again.start(ctx2)
    assert (again.state_name, again.epoch, again.voted_id) == ("Unattached", 3, 2)
    assert not vote(again, ctx2, 3, 3, 1, 5).vote_granted
    assert vote(again, ctx2, 3, 2, 1, 1).vote_granted


# --- QuorumState's guards, the election timer, FileQuorumStateStore ------------------------------
@pytest.mark.parametrize("start", ["candidate", "unattached", "voted", "follower"])
def test_transition_to_resigned_only_from_leader(start):
    """testCandidateToResigned, testUnattachedToLeaderOrResigned,
    testUnattachedVotedToInvalidLeaderOrResigned, testFollowerToLeaderOrResigned:
    transitionToResigned throws IllegalStateException unless Leader."""
    c, ctx = in_state(start)
    st, before = c.state, c.persisted_quorum_state
    with pytest.raises(IllegalStateException, match="Invalid transition to Resigned"):
        c._transitions._to_resigned(ctx, ())
    assert c.state is st and c.persisted_quorum_state == before


@pytest.mark.parametrize("start", ["candidate", "unattached", "voted", "follower", "leader"])
def test_transition_to_leader_needs_a_granted_candidacy(start):
    """testCandidateToLeaderWithoutGrantedVote, testUnattachedToLeaderOrResigned,
    testUnattachedVotedToInvalidLeaderOrResigned, testFollowerToLeaderOrResigned,
    testLeaderToLeader: transitionToLeader throws IllegalStateException unless Candidate with
    the vote granted."""
    c, ctx = in_state(start)
    st, before, end = c.state, c.persisted_quorum_state, c.log.end_offset
    with pytest.raises(IllegalStateException, match="Cannot (transition to|become) [Ll]eader"):
        c._transitions._on_become_leader(ctx)
    assert c.state is st and c.persisted_quorum_state == before
    assert c.log.end_offset == end  # no LeaderChange record


@pytest.mark.parametrize(
    "start,candidate",
    [
        ("unattached", 1),  # testCannotFollowOrVoteForSelf
        ("voted", 2),  # testUnattachedVotedToUnattachedVotedSameEpoch
        ("voted", 3),  # testAllStatesToUnattachedFailInSameEpoch
        ("follower", 3),  # testFollowerToUnattachedVotedSameEpoch
        ("candidate", 2),  # testAllStatesToUnattachedFailInSameEpoch (candidate)
        ("leader", 2),  # testAllStatesToUnattachedFailInSameEpoch (leader)
    ],
)
def test_transition_to_voted_in_same_epoch_guards(start, candidate):
    """QuorumState.transitionToUnattachedVotedState(currentEpoch, key) throws
    IllegalStateException for the local id and unless Unattached without a vote."""
    c, ctx = in_state(start, voters=(1, 2, 3))
    st, before = c.state, c.persisted_quorum_state
    with pytest.raises(IllegalStateException, match="Cannot transition to Voted"):
        c._transitions._add_voted_state(ctx, candidate)
    assert c.state is st and c.persisted_quorum_state == before


def test_observer_cannot_become_leader():
    """testObserverCannotBecomeCandidateOrLeader (leader half): an observer never leads."""
    c, ctx = client(3, (1, 2))
    with pytest.raises(IllegalStateException, match="not one of the voters"):
        c._transitions._on_become_leader(ctx)
    assert c.state_name == "Unattached"


def test_resigned_to_unattached_draws_a_new_election_timeout():
    """QuorumState.transitionToUnattached at 1eb7644: only Candidate and Unattached keep their
    election timer (observers: Long.MAX_VALUE); any other state -- Resigned included -- draws
    randomElectionTimeoutMs (4.0 added Resigned to the kept ones)."""
    c, ctx = in_state("leader", voters=(1, 2, 3))
    c.resign(ctx)
    assert c.state_name == "Resigned"
    ctx.now = 600
    ctx.values = [JITTER]
    assert not vote(c, ctx, 7, 2, 0, 0).vote_granted  # log behind: no vote
    assert (c.state_name, c.epoch) == ("Unattached", 7)
    assert election_time(c, ctx) == ELECTION_MS + JITTER


def test_resigned_to_unattached_keeps_the_election_timer_with_pre_vote():
    """4.0 (KIP-996) QuorumState.transitionToUnattached: ``isResigned()`` keeps
    remainingElectionTimeMs, as Candidate and Unattached do."""
    c, ctx = client(1, (1, 2, 3), stored(5, leader=1), values=[JITTER], pre_vote=True)
    assert c.state_name == "Resigned"
    remaining = election_time(c, ctx)
    ctx.now = 600
    ctx.values = [0]
    c._to_unattached(ctx, 7)
    assert (c.state_name, c.epoch) == ("Unattached", 7)
    assert election_time(c, ctx) == remaining - 600


def _kraft1_client():
    voters = VoterSet.of((1, 2, 3), {1: "dirOne", 2: "dirTwo", 3: "dirThree"})
    c = KafkaRaftClient(
        1,
        (1, 2, 3),
        {},
        pre_vote=False,
        kraft_version=1,
        directory_id="dirOne",
        bootstrap_voters=voters,
    )
    ctx = FakeCtx()
    c.start(ctx)
    return c, ctx


def test_quorum_state_version_1_baseline():
    """ElectionState.toQuorumStateData(1): no voters, the voted directory id (none: ZERO)."""
    c, ctx = _kraft1_client()
    c._to_unattached(ctx, 3)
    data = json.loads(c.quorum_state_json())
    assert data == {
        "leaderId": -1,
        "leaderEpoch": 3,
        "votedId": -1,
        "votedDirectoryId": ZERO_UUID,
        "data_version": 1,
    }


def test_candidate_persists_its_directory_id_with_kraft_version_1():
    """testCandidateToAnyStateLowerEpoch's persistedVotedKey(localVoterKey, KRAFT_VERSION_1):
    CandidateState.election() votes for ReplicaKey(localId, localDirectoryId), and data_version
    1 writes that directory id."""
    c, ctx = _kraft1_client()
    c._to_candidate(ctx)
    data = json.loads(c.quorum_state_json())
    assert (data["votedId"], data["votedDirectoryId"]) == (1, "dirOne")
    c._to_unattached(ctx, c.epoch + 1)  # no vote in the new epoch: no directory id
    assert json.loads(c.quorum_state_json())["votedDirectoryId"] == ZERO_UUID


def test_initialize_as_unattached_then_follow_the_leader_it_hears_from():
    """testInitializeAsUnattachedWhenMissingEndpoints, continued: the Unattached state knows
    the leader but not its endpoints (no vote for anyone else); a BeginQuorumEpoch from that
    leader in the same epoch (KafkaRaftClient.maybeTransition: more endpoints than the
    state's) makes it a Follower."""
    c, ctx = client(1, (1, 2, 3), stored(5, leader=4))
    assert (c.state_name, c.epoch, c.leader_id) == ("Unattached", 5, 4)
    assert not c.state.can_grant_vote(2, True, False)
    begin_epoch(c, ctx, 5, 4)
    assert (c.state_name, c.epoch, c.leader_id) == ("Follower", 5, 4)
    assert c.persisted_quorum_state == stored(5, leader=4)


@pytest.mark.parametrize(
    "dynamic,version",
    [
        (False, 0),
        (True, 1),
    ],
)
def test_quorum_state_file_version_follows_kraft_version(dynamic, version):
    """FileQuorumStateStore.writeElectionState(state, kraftVersion) writes data_version
    kraftVersion.quorumStateVersion() (QuorumStateTest.persistedVoters): a 3.9 quorum from
    controller.quorum.voters (kraft.version 0) keeps data_version 0 with currentVoters."""
    from kafkasim.runtime.cluster import Cluster

    cfg = {}
    if dynamic:
        cfg["controller.quorum.bootstrap.servers"] = ",".join(
            f"controller{3000 + i}:9093" for i in range(3)
        )
    c = Cluster(3, seed=5, kafka_version="3.9", controllers=3, config=cfg, metadata_mode="kraft")
    c.run_until(lambda c: c.controller_id() >= 0, 20000)
    leader = c.controller_id()
    raft = c.kraft.nodes[leader].raft
    assert raft.reconfig.history.last_kraft_version() == version
    data = json.loads(c.kraft.quorum_state(leader))
    assert (data["data_version"], data["leaderId"]) == (version, leader)
    assert ("currentVoters" in data) == (version == 0)
