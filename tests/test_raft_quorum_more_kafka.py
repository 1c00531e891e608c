"""More of QuorumStateTest at 4.1.0: the KIP-996 (Pre-Vote) transitions into and out of
Prospective, for kraft.version 0 and 1.

Source: confluentinc/kafka 4.1.0 (13f70256db), raft/src/test/java/org/apache/kafka/raft/
QuorumStateTest.java, with the rules of QuorumState.java. tests/test_raft_quorum_state_kafka.py
ports the 3.9-line cases (trunk 1eb7644, before Pre-Vote); this file the 4.x ones it lacks.

Adaptation to kafkasim (as in tests/test_raft_quorum_state_kafka.py, plus):

- The local id is 0 as in Kafka; the voters are (0, 1, 2), with directory ids at kraft.version
  1 (``localWithRemoteVoterSet``) and none at kraft.version 0. The client runs with
  ``pre_vote=True`` (4.0+). Kafka's test timeouts: election 5000 ms, fetch 10000 ms; its
  ``random.mockNextInt(electionTimeoutMs, jitter)`` is the FakeCtx's queued value.
- ``transitionToProspective`` is ``_transitions._to_prospective``, ``unattachedAddVotedState``
  / ``prospectiveAddVotedState`` are ``_transitions.unattached_add_voted_state`` /
  ``prospective_add_voted_state``, ``transitionToLeader`` ``_transitions._on_become_leader``,
  ``transitionToResigned`` ``_transitions._to_resigned``; ``store.readElectionState()`` is
  ``client.store.read_election()`` (an ElectionState), and ``persistedVoters`` /
  ``persistedVotedKey`` are what the file's data_version keeps: the voters only at version 0,
  the voted directory id only at version 1.

Left out: RaftUtilTest (its cases check each request/response version's JSON; kafkasim's raft
messages have no wire versions), LeaderStateTest.testVolatileVoters and the
MaybeAppendUpgradedKRaftVersion pair (kafkasim keeps volatileVoters as a dict the reconfig code
updates, with no compareAndSetVolatileVoters / KRaftVersionUpgrade objects), and
testCannotTransitionToFollowerWithNoLeaderEndpoint (transitionToFollower takes no endpoints).
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.epoch_states import ProspectiveState
from kafkasim.control.kraft.quorum_state_store import ElectionState
from kafkasim.control.kraft.raft import IllegalStateException, KafkaRaftClient
from kafkasim.control.kraft.voter_set import ReplicaKey, VoterNode, VoterSet

ELECTION_MS = 5000  # QuorumStateTest.electionTimeoutMs
FETCH_MS = 10000  # QuorumStateTest.fetchTimeoutMs
CONFIG = {"controller.quorum.election.timeout.ms": ELECTION_MS,
          "controller.quorum.fetch.timeout.ms": FETCH_MS}
LOCAL = 0
VOTERS = (0, 1, 2)
KRAFT = pytest.mark.parametrize("kraft", [0, 1], ids=["kraft0", "kraft1"])


class FakeCtx:
    """A RaftContext that records nothing; ``random_int`` answers the queued jitter."""

    def __init__(self):
        self.now = 0
        self.values: list[int] = []

    def mock_next_int(self, value):
        """MockableRandom.mockNextInt(electionTimeoutMs, value)."""
        self.values.append(value)

    def send(self, dst, msg):
        pass

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


def dir_of(node: int, kraft: int) -> str | None:
    return f"dir{node}" if kraft else None


def voter_set(kraft: int, voters=VOTERS, no_endpoints=()) -> VoterSet:
    """localWithRemoteVoterSet / withRemoteVoterSet; ``no_endpoints``: Endpoints.empty()."""
    vs = VoterSet.of(voters, {v: dir_of(v, kraft) for v in voters})
    nodes = {v: (VoterNode(n.voter_key, (), n.supported_kraft_version)
                 if v in no_endpoints else n) for v, n in vs.voters.items()}
    return VoterSet(nodes)


def stored(epoch=0, leader=-1, voted=-1, voted_dir=None, kraft=0):
    """store.writeElectionState(election, kraftVersion) before buildQuorumState
    (initializeEmptyState: epoch 0)."""
    return {"leader_epoch": epoch, "leader_id": leader, "voted_id": voted,
            "voted_directory_id": voted_dir, "data_version": kraft, "voters": VOTERS}


def quorum(kraft, state=None, voters=VOTERS, no_endpoints=(), jitter=()):
    """buildQuorumState + initialize(new OffsetAndEpoch(0, logEndEpoch=0))."""
    vs = voter_set(kraft, voters, no_endpoints)
    c = KafkaRaftClient(LOCAL, voters, CONFIG, pre_vote=True, quorum_state=state or stored(),
                        observer=LOCAL not in voters, kraft_version=kraft,
                        directory_id=dir_of(LOCAL, 1), bootstrap_voters=vs)
    ctx = FakeCtx()
    ctx.values = list(jitter)
    c.start(ctx)
    return c, ctx


def persisted(kraft, epoch, leader=None, voted=None):
    """The ElectionState the store reads back: persistedVoters / persistedVotedKey."""
    voters = () if kraft else VOTERS
    if voted is not None and not kraft:
        voted = ReplicaKey(voted.id, None)
    return ElectionState(epoch, leader, voted, voters)


def key(node, kraft):
    return ReplicaKey(node, dir_of(node, kraft))


def read(c) -> ElectionState:
    return c.store.read_election()


def remaining_election_ms(c, ctx) -> int:
    return c.state.election_deadline - ctx.now


def prospective(c, ctx, jitter=None):
    if jitter is not None:
        ctx.mock_next_int(jitter)
    c._transitions._to_prospective(ctx)
    assert c.quorum().is_prospective()
    return c.state


# --- from Unattached and Follower ---------------------------------------------------------------
@KRAFT
def test_unattached_to_prospective(kraft):
    """QuorumStateTest.testUnattachedToProspective @4.1.0: the jittered election timer, and no
    durable write (Prospective is a memory transition)."""
    c, ctx = quorum(kraft)
    assert c.quorum().is_unattached() and c.epoch == 0
    st = prospective(c, ctx, 2500)
    assert isinstance(st, ProspectiveState)
    assert remaining_election_ms(c, ctx) == ELECTION_MS + 2500
    assert read(c) == persisted(kraft, 0)


@KRAFT
def test_unattached_with_leader_to_prospective(kraft):
    """QuorumStateTest.testUnattachedWithLeaderToProspective @4.1.0."""
    c, ctx = quorum(kraft, stored(5, leader=1))
    prospective(c, ctx)
    assert read(c) == persisted(kraft, 5, leader=1)


@KRAFT
def test_unattached_with_leader_no_endpoint_to_and_from_prospective(kraft):
    """QuorumStateTest.testUnattachedWithLeaderNoEndpointToAndFromProspective @4.1.0: a leader
    without endpoints keeps the replica Unattached, and Prospective and back keep it known
    without endpoints."""
    c, ctx = quorum(kraft, stored(5, leader=1), no_endpoints=(1, 2))
    q = c.quorum()
    assert q.is_unattached() and q.has_leader()
    assert not c.state.leader_endpoints_known
    prospective(c, ctx)
    assert not c.state.leader_endpoints_known
    assert read(c) == persisted(kraft, 5, leader=1)
    c._to_unattached(ctx, 5, 1)
    assert q.is_unattached() and not c.state.leader_endpoints_known
    assert read(c) == persisted(kraft, 5, leader=1)


@KRAFT
def test_unattached_voted_to_prospective(kraft):
    """QuorumStateTest.testUnattachedVotedToProspective @4.1.0: the vote of epoch 5 stays."""
    c, ctx = quorum(kraft, stored(5))
    c._transitions.unattached_add_voted_state(ctx, 5, key(1, 1))
    st = prospective(c, ctx, 2500)
    assert st.epoch == 5
    assert remaining_election_ms(c, ctx) == ELECTION_MS + 2500
    assert read(c) == persisted(kraft, 5, voted=key(1, 1))


@KRAFT
def test_follower_to_prospective(kraft):
    """QuorumStateTest.testFollowerToProspective @4.1.0: the leader of epoch 8 stays known."""
    c, ctx = quorum(kraft)
    c._to_follower(ctx, 8, 2)
    st = prospective(c, ctx, 2500)
    assert st.epoch == 8 and st.leader_id == 2
    assert remaining_election_ms(c, ctx) == ELECTION_MS + 2500
    assert read(c) == persisted(kraft, 8, leader=2)


# --- from Prospective ----------------------------------------------------------------------------
@KRAFT
def test_prospective_to_unattached_in_same_epoch(kraft):
    """QuorumStateTest.testProspectiveToUnattachedInSameEpoch @4.1.0: a lost PreVote goes back
    to Unattached in the same epoch (the only state that may)."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    c._to_unattached(ctx, c.epoch)
    assert c.quorum().is_unattached()
    assert read(c) == persisted(kraft, 0)


@KRAFT
def test_prospective_to_unattached_in_higher_epoch(kraft):
    """QuorumStateTest.testProspectiveToUnattachedInHigherEpoch @4.1.0."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    c._to_unattached(ctx, 20)
    assert read(c) == persisted(kraft, 20)


@KRAFT
def test_prospective_to_unattached_voted(kraft):
    """QuorumStateTest.testProspectiveToUnattachedVoted @4.1.0: unattachedAddVotedState needs
    an Unattached that has not voted, in its epoch."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    t = c._transitions
    for epoch in (0, 10):
        for candidate in (key(1, kraft), key(LOCAL, 1)):
            with pytest.raises(IllegalStateException):
                t.unattached_add_voted_state(ctx, epoch, candidate)
    assert c.quorum().is_prospective()


@KRAFT
def test_prospective_to_unattached_with_leader_in_higher_epoch(kraft):
    """QuorumStateTest.testProspectiveToUnattachedWithLeaderInHigherEpoch @4.1.0."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    c._to_unattached(ctx, 10, 1)
    assert read(c) == persisted(kraft, 10, leader=1)


@KRAFT
@pytest.mark.parametrize("epoch", [0, 1], ids=["same", "higher"])
def test_prospective_to_follower(kraft, epoch):
    """QuorumStateTest.testProspectiveToFollowerSameEpoch and
    testProspectiveToFollowerHigherEpoch @4.1.0."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    c._to_follower(ctx, epoch, 1)
    assert c.quorum().is_follower()
    assert read(c) == persisted(kraft, epoch, leader=1)


@KRAFT
def test_prospective_to_prospective(kraft):
    """QuorumStateTest.testProspectiveToProspective @4.1.0."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    with pytest.raises(IllegalStateException):
        c._transitions._to_prospective(ctx)


@KRAFT
def test_prospective_to_candidate(kraft):
    """QuorumStateTest.testProspectiveToCandidate @4.1.0: each transition draws its own jitter;
    the Candidate votes for itself in epoch + 1 (durably)."""
    c, ctx = quorum(kraft)
    prospective(c, ctx, 2500)
    assert not c.quorum().has_leader()
    assert remaining_election_ms(c, ctx) == ELECTION_MS + 2500
    ctx.mock_next_int(3000)
    c._to_candidate(ctx)
    assert c.quorum().is_candidate()
    assert remaining_election_ms(c, ctx) == ELECTION_MS + 3000
    assert read(c) == persisted(kraft, 1, voted=key(LOCAL, 1))


@KRAFT
def test_prospective_to_leader_or_resigned(kraft):
    """QuorumStateTest.testProspectiveToLeaderOrResigned @4.1.0."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    with pytest.raises(IllegalStateException):
        c._transitions._on_become_leader(ctx)
    with pytest.raises(IllegalStateException):
        c._transitions._to_resigned(ctx, ())
    assert c.quorum().is_prospective()


@KRAFT
def test_prospective_voted_to_unattached_in_same_epoch(kraft):
    """QuorumStateTest.testProspectiveVotedToUnattachedInSameEpoch @4.1.0: the vote survives
    the way back to Unattached."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    c._transitions.prospective_add_voted_state(ctx, 0, key(1, 1))
    c._to_unattached(ctx, 0)
    assert c.quorum().is_unattached_and_voted()
    assert read(c) == persisted(kraft, 0, voted=key(1, 1))


@KRAFT
def test_prospective_voted_to_and_from_follower_same_epoch(kraft):
    """QuorumStateTest.testProspectiveVotedToAndFromFollowerSameEpoch @4.1.0: 4.0 keeps the
    vote with the leader (withElectedLeader(epoch, leader, votedKey))."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    c._transitions.prospective_add_voted_state(ctx, 0, key(1, 1))
    c._to_follower(ctx, 0, 2)
    expected = persisted(kraft, 0, leader=2, voted=key(1, 1))
    assert read(c) == expected
    prospective(c, ctx)
    assert read(c) == expected


@KRAFT
def test_prospective_voted_to_candidate(kraft):
    """QuorumStateTest.testProspectiveVotedToCandidate @4.1.0: a restart with a vote for node 1
    is Unattached and voted; Prospective keeps the vote, Candidate votes for itself."""
    c, ctx = quorum(kraft, stored(0, voted=1, voted_dir="dirX"))
    assert c.quorum().is_unattached_and_voted()
    st = prospective(c, ctx, 2500)
    assert remaining_election_ms(c, ctx) == ELECTION_MS + 2500
    assert st.voted_key is not None
    ctx.mock_next_int(3000)
    c._to_candidate(ctx)
    assert c.quorum().is_candidate() and c.epoch == 1
    assert remaining_election_ms(c, ctx) == ELECTION_MS + 3000
    assert read(c) == persisted(kraft, 1, voted=key(LOCAL, 1))


@KRAFT
def test_prospective_with_leader_to_unattached_in_same_epoch(kraft):
    """QuorumStateTest.testProspectiveWithLeaderToUnattachedInSameEpoch @4.1.0."""
    c, ctx = quorum(kraft, stored(0, leader=1))
    prospective(c, ctx)
    assert read(c) == persisted(kraft, 0, leader=1)
    c._to_unattached(ctx, 0, 1)
    assert read(c) == persisted(kraft, 0, leader=1)


@KRAFT
@pytest.mark.parametrize("leader", [None, 2], ids=["no_leader", "new_leader"])
def test_prospective_with_leader_to_unattached_in_higher_epoch(kraft, leader):
    """QuorumStateTest.testProspectiveWithLeaderToUnattachedInHigherEpoch and
    testProspectiveWithLeaderToUnattachedWithLeaderInHigherEpoch @4.1.0."""
    c, ctx = quorum(kraft, stored(0, leader=1))
    prospective(c, ctx)
    c._to_unattached(ctx, 10, -1 if leader is None else leader)
    assert read(c) == persisted(kraft, 10, leader=leader)


@KRAFT
@pytest.mark.parametrize("epoch", [0, 10], ids=["same", "higher"])
def test_prospective_with_leader_to_follower(kraft, epoch):
    """QuorumStateTest.testProspectiveWithLeaderToFollowerSameEpoch and
    testProspectiveWithLeaderToFollowerHigherEpoch @4.1.0: a new leader (2) replaces the
    remembered one (1)."""
    c, ctx = quorum(kraft, stored(0, leader=1))
    prospective(c, ctx)
    c._to_follower(ctx, epoch, 2)
    assert read(c) == persisted(kraft, epoch, leader=2)


@KRAFT
def test_prospective_with_leader_to_candidate(kraft):
    """QuorumStateTest.testProspectiveWithLeaderToCandidate @4.1.0."""
    c, ctx = quorum(kraft, stored(0, leader=1))
    prospective(c, ctx)
    assert c.quorum().has_leader()
    c._to_candidate(ctx)
    assert c.quorum().is_candidate() and c.epoch == 1
    assert read(c) == persisted(kraft, 1, voted=key(LOCAL, 1))


@KRAFT
def test_prospective_voted_with_leader_to_unattached_in_same_epoch(kraft):
    """QuorumStateTest.testProspectiveVotedWithLeaderToUnattachedInSameEpoch @4.1.0: the vote
    stays with the leader named."""
    c, ctx = quorum(kraft, stored(0, leader=1))
    prospective(c, ctx)
    c._transitions.prospective_add_voted_state(ctx, 0, key(2, 1))
    c._to_unattached(ctx, 0, 2)
    assert read(c) == persisted(kraft, 0, leader=2, voted=key(2, 1))


# --- observers -----------------------------------------------------------------------------------
@KRAFT
def test_observer_unattached_to_prospective(kraft):
    """QuorumStateTest.testObserverUnattachedToProspective @4.1.0: an observer may vote and
    follow, never become Prospective."""
    c, ctx = quorum(kraft, voters=(1, 2))
    q, t = c.quorum(), c._transitions
    assert q.is_observer() and q.is_unattached_not_voted()
    with pytest.raises(IllegalStateException):
        t._to_prospective(ctx)
    t.unattached_add_voted_state(ctx, 0, ReplicaKey(1, None))
    assert q.is_unattached_and_voted() and q.is_observer()
    with pytest.raises(IllegalStateException):
        t._to_prospective(ctx)
    c._to_follower(ctx, 0, 2)
    assert q.is_follower() and q.is_observer() and q.has_leader()
    assert c.state.voted_key is not None
    with pytest.raises(IllegalStateException):
        t._to_prospective(ctx)


@KRAFT
def test_observer_follower_to_prospective_or_candidate_or_leader_or_resigned(kraft):
    """QuorumStateTest.testObserverFollowerToProspectiveOrCandidateOrLeaderOrResigned @4.1.0."""
    c, ctx = quorum(kraft, voters=(1, 2))
    c._to_follower(ctx, 0, 1)
    assert c.quorum().is_observer()
    assert c.state.fetch_deadline - ctx.now == FETCH_MS
    t = c._transitions
    for step in (t._to_prospective, c._to_candidate, t._on_become_leader,
                 lambda x: t._to_resigned(x, ())):
        with pytest.raises(IllegalStateException):
            step(ctx)
    assert c.quorum().is_follower()


# --- initialize, remote leader, votes ------------------------------------------------------------
@KRAFT
def test_has_remote_leader(kraft):
    """QuorumStateTest.testHasRemoteLeader @4.1.0: only a Follower has a remote leader."""
    c, ctx = quorum(kraft, voters=(0, 1))
    q = c.quorum()
    assert not q.has_remote_leader()
    prospective(c, ctx)
    assert not q.has_remote_leader()
    c._to_candidate(ctx)
    assert not q.has_remote_leader()
    c.state.record_granted_vote(1)
    c._transitions._on_become_leader(ctx)
    assert q.is_leader() and not q.has_remote_leader()
    c._to_unattached(ctx, c.epoch + 1)
    assert not q.has_remote_leader()
    c._transitions.unattached_add_voted_state(ctx, c.epoch, key(1, 1))
    assert not q.has_remote_leader()
    c._to_follower(ctx, c.epoch, 1)
    assert q.has_remote_leader()


@KRAFT
def test_cannot_follow_self(kraft):
    """QuorumStateTest.testCannotFollowSelf @4.1.0: neither follow nor vote for the local id."""
    c, ctx = quorum(kraft, voters=(0,))
    with pytest.raises(IllegalStateException):
        c._to_follower(ctx, 0, LOCAL)
    with pytest.raises(IllegalStateException):
        c._transitions.unattached_add_voted_state(ctx, 0, key(LOCAL, 1))


@KRAFT
@pytest.mark.parametrize("voted", [1, 2], ids=["same", "different"])
def test_initialize_voted_and_leader(kraft, voted):
    """QuorumStateTest.testInitializeVotedAndLeaderAreSame and
    testInitializeVotedAndLeaderAreDifferent @4.1.0: 4.0 keeps both, as a Follower of the
    leader with the fetch timeout, the vote still in the file."""
    c, ctx = quorum(kraft, stored(5, leader=1, voted=voted, voted_dir=dir_of(voted, kraft),
                                  kraft=kraft))
    q = c.quorum()
    assert q.is_follower() and c.epoch == 5 and c.leader_id == 1
    assert c.state.remaining_fetch_time_ms(ctx.now) == FETCH_MS
    assert read(c) == persisted(kraft, 5, leader=1, voted=key(voted, kraft))


@KRAFT
def test_initialize_as_voted_no_leader(kraft):
    """QuorumStateTest.testInitializeAsVotedNoLeader @4.1.0: Unattached and voted, the vote
    (with its directory id at kraft.version 1) and a jittered election timer."""
    c, ctx = quorum(kraft, stored(5, voted=1, voted_dir=dir_of(1, kraft), kraft=kraft),
                    jitter=[2500])
    q = c.quorum()
    assert q.is_unattached_and_voted() and c.epoch == 5
    assert c.state.voted_key == key(1, kraft)
    assert remaining_election_ms(c, ctx) == ELECTION_MS + 2500


@KRAFT
def test_unattached_to_unattached_voted_same_epoch(kraft):
    """QuorumStateTest.testUnattachedToUnattachedVotedSameEpoch @4.1.0: the state keeps the
    candidate's directory id, the file only at kraft.version 1; the timer is reset."""
    c, ctx = quorum(kraft, voters=(0, 1))
    c._to_unattached(ctx, 5)
    ctx.mock_next_int(2500)
    c._transitions.unattached_add_voted_state(ctx, 5, key(1, 1))
    assert c.epoch == 5 and c.state.voted_key == key(1, 1)
    assert read(c) == ElectionState(5, None, ReplicaKey(1, dir_of(1, kraft)),
                                    () if kraft else (0, 1))
    assert remaining_election_ms(c, ctx) == ELECTION_MS + 2500


@KRAFT
def test_unattached_to_unattached_voted_higher_epoch(kraft):
    """QuorumStateTest.testUnattachedToUnattachedVotedHigherEpoch @4.1.0."""
    c, ctx = quorum(kraft, voters=(0, 1))
    c._to_unattached(ctx, 5)
    assert c.quorum().is_unattached_not_voted()
    with pytest.raises(IllegalStateException):
        c._transitions.unattached_add_voted_state(ctx, 10, key(1, 1))


@KRAFT
def test_unattached_voted_to_unattached_voted(kraft):
    """QuorumStateTest.testUnattachedVotedToUnattachedVoted @4.1.0: one vote per epoch, and
    none for a later epoch (Kafka initializes at log end epoch 8; here the file's epoch 8)."""
    c, ctx = quorum(kraft, stored(8))
    t = c._transitions
    t.unattached_add_voted_state(ctx, 8, key(1, 1))
    for epoch, candidate in ((8, 2), (8, 1), (10, 1)):
        with pytest.raises(IllegalStateException):
            t.unattached_add_voted_state(ctx, epoch, ReplicaKey(candidate, None))
    assert c.state.voted_key == key(1, 1)


# --- 4.0 keeps the vote with the leader ----------------------------------------------------------
@KRAFT
@pytest.mark.parametrize("epoch", [5, 8], ids=["same", "higher"])
def test_unattached_voted_to_follower(kraft, epoch):
    """QuorumStateTest.testUnattachedVotedToFollowerSameEpoch and
    testUnattachedVotedToFollowerHigherEpoch @4.1.0: the vote of epoch 5 stays with the leader
    of epoch 5, and is gone in epoch 8."""
    c, ctx = quorum(kraft, stored(5))
    c._transitions.unattached_add_voted_state(ctx, 5, ReplicaKey(1, None))
    c._to_follower(ctx, epoch, 2)
    assert c.quorum().is_follower() and c.epoch == epoch
    assert c.state.leader_endpoints_known
    voted = ReplicaKey(1, None) if epoch == 5 else None
    assert read(c) == persisted(kraft, epoch, leader=2, voted=voted)


@KRAFT
def test_follower_voted_to_unattached_same_epoch(kraft):
    """QuorumStateTest.testFollowerVotedToUnattachedSameEpoch @4.1.0: a Follower never goes back
    to Unattached in its epoch."""
    c, ctx = quorum(kraft)
    prospective(c, ctx).record_granted_vote(1)
    c._to_follower(ctx, 0, 2)
    assert c.epoch == 0
    with pytest.raises(IllegalStateException):
        c._to_unattached(ctx, 0)


@KRAFT
def test_follower_voted_to_unattached_higher_epoch(kraft):
    """QuorumStateTest.testFollowerVotedToUnattachedHigherEpoch @4.1.0: a new epoch draws a
    new election timeout, with no vote."""
    c, ctx = quorum(kraft)
    prospective(c, ctx).record_granted_vote(1)
    c._to_follower(ctx, 0, 2)
    ctx.mock_next_int(2500)
    c._to_unattached(ctx, 10)
    assert c.quorum().is_unattached_not_voted() and c.epoch == 10
    assert remaining_election_ms(c, ctx) == ELECTION_MS + 2500


@KRAFT
def test_follower_voted_to_follower_same_epoch(kraft):
    """QuorumStateTest.testFollowerVotedToFollowerSameEpoch @4.1.0: the Prospective's vote is
    kept with the leader; a second leader in the epoch is an IllegalStateException."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    c._transitions.prospective_add_voted_state(ctx, 0, key(1, 1))
    c._to_follower(ctx, 0, 2)
    assert read(c) == persisted(kraft, 0, leader=2, voted=key(1, 1))
    with pytest.raises(IllegalStateException):
        c._to_follower(ctx, 0, 1)


@KRAFT
def test_follower_voted_to_follower_higher_epoch(kraft):
    """QuorumStateTest.testFollowerVotedToFollowerHigherEpoch @4.1.0: the next epoch's leader
    comes without the old vote."""
    c, ctx = quorum(kraft)
    prospective(c, ctx)
    c._transitions.prospective_add_voted_state(ctx, 0, key(1, 1))
    c._to_follower(ctx, 0, 2)
    c._to_follower(ctx, 1, 1)
    assert c.epoch == 1
    assert read(c) == persisted(kraft, 1, leader=1)
