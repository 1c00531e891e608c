"""KafkaRaftClient at 4.1 (KIP-996 Pre-Vote), ported from Kafka's raft unit tests.

Sources: the Apache 4.1.0 release (confluentinc/kafka 13f70256db),
raft/src/test/java/org/apache/kafka/raft/KafkaRaftClientPreVoteTest.java and the 4.x cases of
KafkaRaftClientTest.java (Prospective, the only-voter initialisations, KAFKA-17030's fetches
from the bootstrap servers), with the rules of KafkaRaftClient.java at the same commit.
tests/test_raft.py already ports part of KafkaRaftClientPreVoteTest (see its docstring); this
file covers the rest that kafkasim models.

Adaptation: as tests/test_raft_client_kafka.py (its ``Ctx`` and helpers are reused), but the
client runs with the 4.1 rules (``build41``): ``pre_vote`` (KIP-996), the candidate that lost
waits its election timeout (KAFKA-18345), Fetch v18's high watermark (KAFKA-14145) and
KAFKA-17030 (``unattached_voters_fetch``: an Unattached voter fetches from the bootstrap
servers, a follower voter whose leader fails asks another one). Kafka's KRaftVersion
parameter is kraft.version 0 (no directory ids) unless a case needs the KIP-853 voter keys.
``context.client.poll()`` is ``ctx.poll(c)``; ``pollUntilRequest`` is ``ctx.poll(c)`` after
the sleep (kafkasim's timers fire at the deadline). ``preVoteRequest(epoch, key, lastEpoch,
lastOffset)`` is a VoteRequest with ``pre_vote=True`` and ``candidate_epoch`` = the replica
epoch. Kafka's bootstrap servers of a static quorum are the voters (KafkaRaftClient.initialize
with voterAddresses), the local one included, as in kafkasim.

The epoch states, ElectionState and VoterSet cases at the end follow ProspectiveStateTest,
FollowerStateTest, UnattachedStateTest, ElectionStateTest, VoterSetTest and QuorumStateTest
@4.1.0 (the local id is 0 there, as in Kafka; ``Uuid.randomUuid()`` is a fresh string).

Left out: the cluster-id cases (testPreVoteRequestClusterIdValidation,
test*ClusterIdValidation), testObserverHandleRetryFetchToBootstrapServer (bootstrap servers
with ids of their own), the listener API (testHandleLeaderChangeFiresAfter*), memory pools
(testAccumulatorClearedAfterBecoming*), testInvalidMemoryRecords.
"""

from __future__ import annotations

import pytest
from test_raft_client_kafka import (
    ELECTION_TIMEOUT_MS,
    FETCH_TIMEOUT_MS,
    LOCAL,
    REQUEST_TIMEOUT_MS,
    TEST_CONFIG,
    V2,
    V3,
    Ctx,
    assert_elected_leader,
    assert_unknown_leader,
    assert_vote_response,
    assert_voted_candidate,
    batch,
    fetch_response,
)

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft.epoch_states import FollowerState, ProspectiveState, UnattachedState
from kafkasim.control.kraft.quorum_state_store import ElectionState
from kafkasim.control.kraft.raft import KafkaRaftClient, RaftLog
from kafkasim.control.kraft.voter_set import ReplicaKey, VoterNode, VoterSet
from kafkasim.core.errors import IllegalArgumentException, IllegalStateException

V4, V5 = 4, 5


class RecCtx(Ctx):
    """Ctx that also records the client's state transitions: (state, epoch, leader). Kafka's
    ``client.poll()`` runs pollCurrentState once, so a test can see a state that lasts no
    time (an Unattached whose election timer is already past); kafkasim's poll runs until
    the client waits, so those tests read the transitions instead."""

    def __init__(self, random=0):
        super().__init__(random)
        self.transitions: list[tuple[str, int, int]] = []

    def trace(self, kind, detail):
        if kind == "raft_transition":
            self.transitions.append((detail.to_state, detail.epoch, detail.leader))


def build41(local=LOCAL, voters=(LOCAL, V2), *, log=(), random=0, **kw):
    """RaftClientTestContext.Builder at 4.1: ``elected=(epoch, leader)``, ``voted=(epoch,
    candidate)`` or ``unknown=epoch`` is the persisted election state; ``log`` a list of
    (epoch, [records]) as appendToLog."""
    elected, voted, unknown = (kw.pop(k, None) for k in ("elected", "voted", "unknown"))
    state = None
    if elected or voted or unknown is not None:
        s = (*elected, -1) if elected else (voted[0], -1, voted[1]) if voted else (unknown, -1, -1)
        state = dict(zip(("leader_epoch", "leader_id", "voted_id"), s, strict=True))
    entries = []
    for epoch, records in log:
        entries += [(len(entries), epoch, r) for r in records]
    kw.setdefault("observer", local not in voters)
    c = KafkaRaftClient(
        local, voters, dict(TEST_CONFIG), pre_vote=True, election_loss_waits_timeout=True,
        fast_hwm_replication=True, unattached_voters_fetch=True, log=RaftLog(entries),
        quorum_state=state, **kw)
    ctx = RecCtx(random)
    c.start(ctx)
    return c, ctx


def pre_vote_request(epoch, candidate, last_epoch, last_offset, corr=100):
    """RaftClientTestContext.preVoteRequest: Vote v2 with PreVote=true."""
    return M.VoteRequest(corr, epoch, candidate, last_epoch, last_offset, True)


def vote_request(epoch, candidate, last_epoch, last_offset, corr=100):
    return M.VoteRequest(corr, epoch, candidate, last_epoch, last_offset)


def fetch_and_answer(c, ctx, epoch, leader, hw=0):
    """pollUntilRequest + assertSentFetchRequest + deliverResponse(fetchResponse(NONE))."""
    ctx.poll(c)
    dst, req = ctx.one(M.RaftFetchRequest)
    assert (dst, req.current_leader_epoch) == (leader, epoch)
    ctx.deliver(c, dst, fetch_response(req, epoch, leader, hw=hw))


def pre_votes(ctx, epoch, last_epoch, last_offset):
    """RaftClientTestContext.collectPreVoteRequests."""
    out = ctx.take(M.VoteRequest)
    for _d, r in out:
        assert r.pre_vote
        assert (r.candidate_epoch, r.last_offset_epoch, r.last_offset) == (
            epoch, last_epoch, last_offset)
    return out


def votes(ctx, epoch, last_epoch, last_offset):
    """RaftClientTestContext.collectVoteRequests (standard votes)."""
    out = ctx.take(M.VoteRequest)
    for _d, r in out:
        assert not r.pre_vote
        assert (r.candidate_epoch, r.last_offset_epoch, r.last_offset) == (
            epoch, last_epoch, last_offset)
    return out


def grant(c, ctx, requests, epoch, leader=-1):
    for dst, req in requests:
        ctx.deliver(c, dst, M.VoteResponse(req.correlation_id, M.NONE, leader, epoch, True))


# --- KafkaRaftClientPreVoteTest -----------------------------------------------------------------
@pytest.mark.parametrize("has_fetched", [False, True])
def test_handle_pre_vote_request_as_follower(has_fetched):
    """KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAsFollower @4.1.0: a follower grants
    PreVotes (voter's or observer's) until it has fetched from its leader; a PreVote of a
    higher epoch makes it Unattached, not voted, and is granted."""
    c, ctx = build41(voters=(LOCAL, V2, V3), elected=(2, V3))
    if has_fetched:
        fetch_and_answer(c, ctx, 2, V3)
    for candidate in (V2, V4):    # a voter, then an observer
        ctx.deliver(c, candidate, pre_vote_request(2, candidate, 2, 1))
        assert_vote_response(ctx, M.NONE, 2, V3, not has_fetched)
        assert_elected_leader(c, 2, V3)
    ctx.deliver(c, V2, pre_vote_request(3, V2, 3, 1))
    assert_vote_response(ctx, M.NONE, 3, -1, True)
    assert c.epoch == 3 and c.quorum().is_unattached_not_voted()


def test_handle_pre_vote_request_as_follower_with_voted_candidate():
    """KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAsFollowerWithVotedCandidate @4.1.0:
    an Unattached voter that voted fetches from the bootstrap servers (KAFKA-17030), follows
    the candidate it voted for on its BeginQuorumEpoch, grants PreVotes until its first
    successful fetch, then rejects them."""
    c, ctx = build41(voters=(LOCAL, V2, V3), voted=(2, V3))
    ctx.poll(c)
    ctx.one(M.RaftFetchRequest)
    ctx.deliver(c, V3, M.BeginQuorumEpochRequest(7, 2, V3))
    _, resp = ctx.one(M.BeginQuorumEpochResponse)
    assert resp.error == M.NONE and c.quorum().is_follower()
    ctx.deliver(c, V2, pre_vote_request(2, V2, 2, 1))
    assert_vote_response(ctx, M.NONE, 2, V3, True)
    fetch_and_answer(c, ctx, 2, V3)
    ctx.poll(c)
    assert c.quorum().is_follower()
    ctx.deliver(c, V2, pre_vote_request(2, V2, 2, 1))
    assert_vote_response(ctx, M.NONE, 2, V3, False)


def test_handle_pre_vote_request_as_unattached_observer():
    """KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAsUnattachedObserver @4.1.0: an
    Unattached observer grants every up-to-date PreVote, again and again, and stays put."""
    c, ctx = build41(voters=(V2, V3), unknown=2)
    assert c.quorum().is_unattached() and c.quorum().is_observer()
    for candidate in (V2, V2, V3, V4):
        ctx.deliver(c, candidate, pre_vote_request(2, candidate, 2, 1))
        assert_vote_response(ctx, M.NONE, 2, -1, True)
    assert c.epoch == 2 and c.quorum().is_unattached() and c.quorum().is_observer()


def test_handle_pre_vote_request_as_unattached_voted():
    """KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAsUnattachedVoted @4.1.0: the vote
    already cast does not stop PreVotes being granted, to anyone up to date."""
    c, ctx = build41(voters=(V2, V3), voted=(2, V3))
    assert c.quorum().is_unattached_and_voted()
    for candidate in (V2, V2, V3, V4):
        ctx.deliver(c, candidate, pre_vote_request(2, candidate, 2, 1))
        assert_vote_response(ctx, M.NONE, 2, -1, True)
    assert c.epoch == 2 and c.quorum().is_unattached_and_voted()


def test_handle_pre_vote_request_as_unattached_with_leader():
    """KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAsUnattachedWithLeader @4.1.0: a
    leader outside the voter set (no endpoints) leaves the observer Unattached with that
    leader known; PreVotes are granted, the response names the leader."""
    c, ctx = build41(voters=(V2, V3), elected=(2, V4))
    assert c.quorum().is_unattached_not_voted()
    for candidate in (V2, V2, V3, V5):
        ctx.deliver(c, candidate, pre_vote_request(2, candidate, 2, 1))
        assert_vote_response(ctx, M.NONE, 2, V4, True)
    assert c.epoch == 2 and c.quorum().is_unattached_not_voted()


@pytest.mark.parametrize("has_fetched", [False, True])
def test_handle_pre_vote_request_as_follower_observer(has_fetched):
    """KafkaRaftClientPreVoteTest.testHandlePreVoteRequestAsFollowerObserver @4.1.0: an
    observer following a leader answers PreVotes as a voter follower does."""
    c, ctx = build41(voters=(V2, V3), elected=(2, V2))
    assert_elected_leader(c, 2, V2)
    assert c.quorum().is_follower() and c.quorum().is_observer()
    if has_fetched:
        fetch_and_answer(c, ctx, 2, V2)
    ctx.deliver(c, V3, pre_vote_request(2, V3, 2, 1))
    assert_vote_response(ctx, M.NONE, 2, V2, not has_fetched)
    assert c.quorum().is_follower() and c.quorum().is_observer()


def test_handle_invalid_pre_vote_request_with_older_epoch():
    """KafkaRaftClientPreVoteTest.testHandleInvalidPreVoteRequestWithOlderEpoch @4.1.0."""
    c, ctx = build41(unknown=2)
    ctx.deliver(c, V2, pre_vote_request(1, V2, 1, 1))
    assert_vote_response(ctx, M.FENCED_LEADER_EPOCH, 2, -1, False)
    assert_unknown_leader(c, 2)


def become_leader41(c, ctx) -> int:
    """RaftClientTestContext.unattachedToLeader at 4.x: Prospective, PreVotes granted,
    Candidate, votes granted, Leader; BeginQuorumEpoch answered."""
    epoch = c.epoch
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert c.quorum().is_prospective()
    grant(c, ctx, pre_votes(ctx, epoch, c.log.last_fetched_epoch, c.log.end_offset), epoch)
    assert c.quorum().is_candidate()
    grant(c, ctx, votes(ctx, epoch + 1, c.log.last_fetched_epoch, c.log.end_offset), epoch + 1)
    assert_elected_leader(c, epoch + 1, LOCAL)
    for dst, req in ctx.take(M.BeginQuorumEpochRequest):
        c.handle(ctx, dst, M.BeginQuorumEpochResponse(req.correlation_id, M.NONE, LOCAL, epoch + 1))
    ctx.sent.clear()
    return epoch + 1


def test_leader_accept_pre_vote_from_observer():
    """KafkaRaftClientPreVoteTest.testLeaderAcceptPreVoteFromObserver @4.1.0: the leader
    fences an older epoch and rejects a PreVote of its own, observer or not."""
    c, ctx = build41(unknown=4)
    epoch = become_leader41(c, ctx)
    ctx.deliver(c, V3, pre_vote_request(epoch - 1, V3, 0, 0))
    assert_vote_response(ctx, M.FENCED_LEADER_EPOCH, epoch, LOCAL, False)
    ctx.deliver(c, V3, pre_vote_request(epoch, V3, 0, 0))
    assert_vote_response(ctx, M.NONE, epoch, LOCAL, False)


def test_reject_pre_vote_if_remote_log_is_not_up_to_date():
    """KafkaRaftClientPreVoteTest.testRejectPreVoteIfRemoteLogIsNotUpToDate @4.1.0."""
    c, ctx = build41(voters=(LOCAL, V2, V3), unknown=2, log=[(2, ["a", "b", "c"])])
    assert c.quorum().is_unattached() and c.log.end_offset == 3
    ctx.deliver(c, V2, pre_vote_request(1, V2, 1, 0))
    assert c.quorum().is_unattached()
    assert_vote_response(ctx, M.FENCED_LEADER_EPOCH, 2, -1, False)
    ctx.deliver(c, V2, pre_vote_request(2, V2, 1, 2))
    assert c.quorum().is_unattached()
    assert_vote_response(ctx, M.NONE, 2, -1, False)


def test_pre_vote_response_ignored_after_becoming_follower():
    """KafkaRaftClientPreVoteTest.testPreVoteResponseIgnoredAfterBecomingFollower @4.1.0."""
    c, ctx = build41(voters=(LOCAL, V2, V3), unknown=5)
    assert_unknown_leader(c, 5)
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert c.quorum().is_prospective()
    requests = pre_votes(ctx, 5, 0, 0)
    assert len(requests) == 2
    ctx.deliver(c, V3, M.BeginQuorumEpochRequest(7, 5, V3))
    assert_elected_leader(c, 5, V3)
    (d1, r1), (d2, r2) = requests
    ctx.deliver(c, d1, M.VoteResponse(r1.correlation_id, M.NONE, -1, 5, True))
    ctx.deliver(c, d2, M.VoteResponse(r2.correlation_id, M.NONE, V3, 5, True))
    ctx.poll(c)
    assert_elected_leader(c, 5, V3)


def test_pre_vote_request_timeout():
    """KafkaRaftClientPreVoteTest.testPreVoteRequestTimeout @4.1.0: the PreVote is retried
    after the request timeout; the late answer to the first is ignored, the answer to the
    retry makes a Candidate of epoch + 1."""
    c, ctx = build41(unknown=1)
    assert_unknown_leader(c, 1)
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert c.quorum().is_prospective()
    ((dst, first),) = pre_votes(ctx, 1, 0, 0)
    ctx.advance(c, REQUEST_TIMEOUT_MS)
    ((_, retry),) = pre_votes(ctx, 1, 0, 0)
    ctx.deliver(c, dst, M.VoteResponse(first.correlation_id, M.NONE, -1, 1, True))
    assert c.quorum().is_prospective()
    ctx.deliver(c, dst, M.VoteResponse(retry.correlation_id, M.NONE, -1, 1, True))
    assert c.quorum().is_candidate()
    assert_voted_candidate(c, 2, LOCAL)


@pytest.mark.parametrize("pre_vote_protocol", [False, True])
def test_prospective_receives_begin_quorum_request(pre_vote_protocol):
    """KafkaRaftClientPreVoteTest.testProspectiveReceivesBeginQuorumRequest @4.1.0 (both
    RaftProtocols: the Prospective state is the 4.x client's either way)."""
    c, ctx = build41(unknown=5)
    assert_unknown_leader(c, 5)
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert c.quorum().is_prospective()
    ctx.deliver(c, V2, M.BeginQuorumEpochRequest(7, 5, V2))
    assert c.quorum().is_follower()
    assert_elected_leader(c, 5, V2)


def test_prospective_loses_election_has_leader_but_missing_endpoint():
    """KafkaRaftClientPreVoteTest.testProspectiveLosesElectionHasLeaderButMissingEndpoint
    @4.1.0: a leader outside the voter set cannot be followed, so a timed-out Prospective goes
    back to Unattached, the leader still known, and (its election timer kept, already past)
    on to Prospective again."""
    c, ctx = build41(elected=(2, V4))
    assert_elected_leader(c, 2, V4)
    assert c.quorum().is_unattached()
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert c.quorum().is_prospective()
    ctx.transitions.clear()
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert ctx.transitions[0] == ("Unattached", 2, V4)
    assert c.quorum().is_prospective() and c.quorum().has_leader()


# --- KafkaRaftClientTest @4.1.0 -----------------------------------------------------------------
def test_candidate_election_timeout():
    """KafkaRaftClientTest.testCandidateElectionTimeout @4.1.0: a Candidate whose election
    times out becomes Prospective with no extra backoff, with a fresh randomised timeout."""
    jitter = 100
    c, ctx = build41(random=jitter)
    assert_unknown_leader(c, 0)
    ctx.sleep(2 * ELECTION_TIMEOUT_MS + jitter)
    ctx.poll(c)
    grant(c, ctx, pre_votes(ctx, 0, 0, 0), 0)
    assert_voted_candidate(c, 1, LOCAL)
    assert len(votes(ctx, 1, 0, 0)) == 1
    candidate = c.state
    assert candidate.remaining_election_time_ms(ctx.now) == ELECTION_TIMEOUT_MS + jitter
    assert not candidate.epoch_election.is_vote_rejected()
    ctx.advance(c, candidate.remaining_election_time_ms(ctx.now))
    assert c.quorum().is_prospective()
    assert len(pre_votes(ctx, 1, 0, 0)) == 1
    assert c.state.remaining_election_time_ms(ctx.now) == ELECTION_TIMEOUT_MS + jitter


def test_fetch_response_ignored_after_becoming_prospective():
    """KafkaRaftClientTest.testFetchResponseIgnoredAfterBecomingProspective @4.1.0."""
    c, ctx = build41(elected=(5, V2))
    assert_elected_leader(c, 5, V2)
    ctx.poll(c)
    _, req = ctx.one(M.RaftFetchRequest)
    assert (req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (5, 0, 0)
    ctx.advance(c, FETCH_TIMEOUT_MS)
    assert c.quorum().is_prospective()
    ctx.deliver(c, V2, fetch_response(req, 5, V2, batch(0, 3, ["a", "b"])))
    assert c.log.end_offset == 0
    grant(c, ctx, pre_votes(ctx, 5, 0, 0), 5)
    assert c.quorum().is_candidate()


def test_follower_as_observer_does_not_become_prospective_after_fetch_timeout():
    """KafkaRaftClientTest.testFollowerAsObserverDoesNotBecomeProspectiveAfterFetchTimeout
    @4.1.0: past its fetch timeout an observer stays a follower (and fetches elsewhere); a
    Vote of a higher epoch makes it Unattached and is granted."""
    c, ctx = build41(voters=(V2,), elected=(5, V2), log=[(3, ["foo"])])
    assert_elected_leader(c, 5, V2)
    ctx.poll(c)
    _, req = ctx.one(M.RaftFetchRequest)
    assert (req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (5, 1, 3)
    ctx.advance(c, FETCH_TIMEOUT_MS)
    assert c.quorum().is_follower()
    ctx.deliver(c, V2, vote_request(6, V2, 5, 1))
    assert_vote_response(ctx, M.NONE, 6, -1, True)
    assert c.quorum().is_unattached()


def test_follower_leader_rediscovery_after_broker_not_available_error():
    """KafkaRaftClientTest.testFollowerLeaderRediscoveryAfterBrokerNotAvailableError @4.1.0
    (KAFKA-17030): while the leader's connection backs off, a follower voter sends its next
    Fetch to another bootstrap server."""
    c, ctx = build41(voters=(V2, LOCAL, V3), elected=(5, V2))
    ctx.poll(c)
    dst, req = ctx.one(M.RaftFetchRequest)
    assert dst == V2 and (req.current_leader_epoch, req.fetch_offset) == (5, 0)
    ctx.deliver(c, V2, fetch_response(req, 5, -1, hw=-1, error=M.BROKER_NOT_AVAILABLE))
    ctx.poll(c)
    dst, req = ctx.one(M.RaftFetchRequest)
    assert dst != V2 and dst in (LOCAL, V3)
    assert (req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (5, 0, 0)


def test_follower_leader_rediscovery_after_request_timeout():
    """KafkaRaftClientTest.testFollowerLeaderRediscoveryAfterRequestTimeout @4.1.0
    (KAFKA-17030): once the Fetch to the leader times out, the next goes to another bootstrap
    server."""
    c, ctx = build41(voters=(V2, LOCAL, V3), elected=(5, V2))
    ctx.poll(c)
    dst, _req = ctx.one(M.RaftFetchRequest)
    assert dst == V2
    ctx.advance(c, REQUEST_TIMEOUT_MS)
    dst, req = ctx.one(M.RaftFetchRequest)
    assert dst != V2 and dst in (LOCAL, V3)
    assert (req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (5, 0, 0)


def test_handle_vote_request_as_prospective():
    """KafkaRaftClientTest.testHandleVoteRequestAsProspective @4.1.0: a Vote of a higher epoch
    makes the Prospective an Unattached voter that voted, no leader known."""
    c, ctx = build41(voters=(LOCAL, V2, V3), elected=(2, V3))
    ctx.advance(c, FETCH_TIMEOUT_MS)
    assert c.quorum().is_prospective()
    ctx.deliver(c, V2, vote_request(3, V2, 2, 1))
    assert_vote_response(ctx, M.NONE, 3, -1, True)
    assert c.quorum().is_unattached_and_voted()
    assert c.epoch == 3 and not c.quorum().has_leader()


def test_handle_vote_request_as_prospective_with_voted_candidate():
    """KafkaRaftClientTest.testHandleVoteRequestAsProspectiveWithVotedCandidate @4.1.0: a
    Prospective keeps the vote of its epoch; a Vote of the next epoch is granted and
    persisted."""
    c, ctx = build41(voters=(LOCAL, V2, V3), voted=(2, V3))
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert c.quorum().is_prospective() and c.voted_id == V3
    assert_voted_candidate(c, 2, V3)
    ctx.deliver(c, V2, vote_request(3, V2, 2, 1))
    assert_vote_response(ctx, M.NONE, 3, -1, True)
    assert_voted_candidate(c, 3, V2)


def test_initialize_as_candidate_and_only_voter():
    """KafkaRaftClientTest.testInitializeAsCandidateAndOnlyVoter @4.1.0: a lone voter that
    restarts as Candidate wins its own election at once."""
    c, _ctx = build41(voters=(LOCAL,), voted=(2, LOCAL))
    assert_elected_leader(c, 2, LOCAL)
    assert c.quorum().is_leader()


def test_initialize_as_follower_and_only_voter():
    """KafkaRaftClientTest.testInitializeAsFollowerAndOnlyVoter @4.1.0: the leader it
    remembers is not a voter any more; the lone voter elects itself in the next epoch."""
    c, _ctx = build41(voters=(LOCAL,), elected=(2, V2))
    assert_elected_leader(c, 3, LOCAL)
    assert c.log.end_offset == 0 or c.log.entries[0][1] == 3
    assert c.quorum().is_leader()


def test_initialize_as_only_voter_with_empty_election_state():
    """KafkaRaftClientTest.testInitializeAsOnlyVoterWithEmptyElectionState @4.1.0."""
    c, _ctx = build41(voters=(LOCAL,))
    assert_elected_leader(c, 1, LOCAL)
    assert c.quorum().is_leader()


def test_initialize_as_resigned_and_only_voter():
    """KafkaRaftClientTest.testInitializeAsResignedAndOnlyVoter @4.1.0: a lone voter that was
    leader is leader again, of the next epoch."""
    c, _ctx = build41(voters=(LOCAL,), elected=(2, LOCAL))
    assert_elected_leader(c, 3, LOCAL)
    assert c.quorum().is_leader()


def test_initialize_as_resigned_and_unable_to_contact_quorum():
    """KafkaRaftClientTest.testInitializeAsResignedAndUnableToContactQuorum @4.1.0: Resigned,
    then Unattached of epoch + 1 with an expired election timer, at once Prospective, and
    Unattached again (same epoch) when the PreVotes time out."""
    c, ctx = build41(elected=(2, LOCAL))
    assert c.quorum().is_resigned() and c.log.end_offset == 0
    assert_elected_leader(c, 2, LOCAL)
    ctx.transitions.clear()
    ctx.sleep(ELECTION_TIMEOUT_MS)
    ctx.poll(c)
    assert ctx.transitions == [("Unattached", 3, -1), ("Prospective", 3, -1)]
    assert c.quorum().is_prospective()
    ctx.transitions.clear()
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert ctx.transitions[0] == ("Unattached", 3, -1)


def test_initialize_as_unattached_and_become_leader():
    """KafkaRaftClientTest.testInitializeAsUnattachedAndBecomeLeader @4.1.0 (KAFKA-17030): an
    Unattached voter fetches from the bootstrap servers; an answer naming no leader leaves it
    Unattached; after its election timeout it runs PreVote, then Vote, and leads epoch 1."""
    c, ctx = build41()
    assert_unknown_leader(c, 0)
    ctx.poll(c)
    dst, req = ctx.one(M.RaftFetchRequest)
    assert (req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (0, 0, 0)
    assert c.quorum().is_unattached() and c.quorum().is_voter()
    ctx.sleep(ELECTION_TIMEOUT_MS // 2)
    ctx.deliver(c, dst, fetch_response(req, 0, -1, hw=-1, error=M.NOT_LEADER_OR_FOLLOWER))
    assert c.quorum().is_unattached() and c.quorum().is_voter()
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert c.quorum().is_prospective()
    grant(c, ctx, pre_votes(ctx, 0, 0, 0), 0)
    assert_voted_candidate(c, 1, LOCAL)
    ((dst, req),) = votes(ctx, 1, 0, 0)
    ctx.deliver(c, dst, M.VoteResponse(req.correlation_id, M.NONE, -1, 1, True))
    assert_elected_leader(c, 1, LOCAL)
    assert c.log.end_offset == 1
    ctx.poll(c)
    assert {d for d, r in ctx.take(M.BeginQuorumEpochRequest) if r.leader_epoch == 1} == {V2}
    _off, epoch, record = c.log.entries[0]
    assert isinstance(record, M.LeaderChangeMessage) and epoch == 1
    assert set(record.voters) == {LOCAL, V2} and set(record.granting_voters) == {LOCAL, V2}


def test_unattached_as_observer_does_not_become_prospective_after_election_timeout():
    """KafkaRaftClientTest.testUnattachedAsObserverDoesNotBecomeProspectiveAfterElection
    Timeout @4.1.0: an observer keeps fetching, can grant a Vote, never asks for one."""
    c, ctx = build41(voters=(V2,), unknown=5)
    ctx.poll(c)
    _, req = ctx.one(M.RaftFetchRequest)
    assert (req.current_leader_epoch, req.fetch_offset) == (5, 0)
    assert c.quorum().is_unattached()
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert c.quorum().is_unattached()
    _, req = ctx.one(M.RaftFetchRequest)
    assert req.current_leader_epoch == 5
    assert ctx.sent == []
    ctx.deliver(c, V2, vote_request(6, V2, 5, 0))
    assert_vote_response(ctx, M.NONE, 6, -1, True)
    _, req = ctx.one(M.RaftFetchRequest)      # kafkasim polls after the message, Kafka next
    assert req.current_leader_epoch == 6
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert c.quorum().is_unattached()
    _, req = ctx.one(M.RaftFetchRequest)
    assert req.current_leader_epoch == 6
    assert ctx.sent == []


@pytest.mark.parametrize("random", [0, 1, 2])
def test_unattached_as_voter_can_become_follower_after_finding_leader(random):
    """KafkaRaftClientTest.testUnattachedAsVoterCanBecomeFollowerAfterFindingLeader @4.1.0
    (KAFKA-17030): the bootstrap Fetch's answer names the leader (NOT_LEADER_OR_FOLLOWER from
    the other voter, NONE from the leader) and the Unattached voter follows it. ``random``
    picks the bootstrap server asked first (the local one answers NONE as in Kafka's test)."""
    c, ctx = build41(voters=(LOCAL, V2, V3), unknown=5, random=random)
    ctx.poll(c)
    dst, req = ctx.one(M.RaftFetchRequest)
    assert (req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (5, 0, 0)
    assert c.quorum().is_unattached() and c.quorum().is_voter()
    error = M.NOT_LEADER_OR_FOLLOWER if dst == V2 else M.NONE
    ctx.deliver(c, dst, fetch_response(req, 5, V3, hw=0, error=error))
    ctx.poll(c)
    assert c.quorum().is_follower()


def test_voter_become_prospective_after_fetch_timeout():
    """KafkaRaftClientTest.testVoterBecomeProspectiveAfterFetchTimeout @4.1.0."""
    c, ctx = build41(elected=(5, V2), log=[(3, ["foo"])])
    assert_elected_leader(c, 5, V2)
    ctx.poll(c)
    _, req = ctx.one(M.RaftFetchRequest)
    assert (req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (5, 1, 3)
    ctx.advance(c, FETCH_TIMEOUT_MS)
    assert c.quorum().is_prospective()
    assert len(pre_votes(ctx, 5, 3, 1)) == 1


# --- epoch states, ElectionState, VoterSet @4.1.0 ------------------------------------------------
_uuid_seq = iter(range(1, 10_000))


def uuid() -> str:
    """Uuid.randomUuid(): a directory id no other key has."""
    return f"extra-{next(_uuid_seq):04d}"


def key(replica_id: int, with_directory_id: bool = True) -> ReplicaKey:
    return ReplicaKey(replica_id, uuid() if with_directory_id else None)


def new_prospective_state(voter_ids, voted: ReplicaKey | None = None) -> ProspectiveState:
    """ProspectiveStateTest.newProspectiveState: local 0, epoch 5, election timeout 5000."""
    return ProspectiveState(0, 5, (0, *voter_ids), 5000, 0, -1,
                            voted.id if voted else -1, -1,
                            voted_directory_id=voted.directory_id if voted else None)


def test_prospective_can_change_pre_vote():
    """ProspectiveStateTest.testCanChangePreVote @4.1.0: a PreVote recorded may change (4.x
    EpochElection.recordVote; only CandidateState forbids it); False when not new."""
    state = new_prospective_state((1, 2))
    assert state.record_granted_vote(1)
    assert state.epoch_election.is_vote_granted()
    assert not state.record_rejected_vote(1)
    assert not state.epoch_election.is_vote_granted()
    assert state.record_rejected_vote(2)
    assert state.epoch_election.is_vote_rejected()
    assert not state.record_granted_vote(2)
    assert not state.epoch_election.is_vote_rejected()


def test_prospective_consecutive_grant_and_reject():
    """ProspectiveStateTest.testConsecutiveGrant and testConsecutiveReject @4.1.0; the local
    replica cannot reject itself (ProspectiveState.recordRejectedVote)."""
    state = new_prospective_state((1,))
    assert state.record_granted_vote(1) and not state.record_granted_vote(1)
    state = new_prospective_state((1,))
    assert state.record_rejected_vote(1) and not state.record_rejected_vote(1)
    with pytest.raises(IllegalArgumentException, match="from ourselves"):
        state.record_rejected_vote(0)


@pytest.mark.parametrize("up_to_date", [False, True])
@pytest.mark.parametrize("with_directory_id", [False, True])
def test_prospective_grant_vote_with_voted_key(up_to_date, with_directory_id):
    """ProspectiveStateTest.testGrantVoteWithVotedKey @4.1.0: PreVotes follow the log only;
    the standard vote goes to the voted candidate only."""
    node0, node1, node2 = (key(i, with_directory_id) for i in (0, 1, 2))
    state = new_prospective_state((1, 2), voted=node1)
    for node in (node0, node1, node2):
        assert state.can_grant_vote(node, up_to_date, True) == up_to_date
    assert not state.can_grant_vote(node0, up_to_date, False)
    assert state.can_grant_vote(node1, up_to_date, False)
    assert not state.can_grant_vote(node2, up_to_date, False)


def new_follower_state() -> FollowerState:
    """FollowerStateTest.newFollowerState: epoch 5, leader 3, fetch timeout 15000, at time 0."""
    return FollowerState(5, 3, 15000, -1, -1, voters=(1, 2, 3))


@pytest.mark.parametrize("up_to_date", [False, True])
def test_follower_pre_and_standard_votes(up_to_date):
    """FollowerStateTest.testGrantStandardVote, testPreVoteIfHasNotFetchedFromLeaderYet and
    testPreVoteAfterSuccessfulFetchFromLeader @4.1.0: no standard vote ever; PreVotes by the
    log until the first successful fetch, none after."""
    state = new_follower_state()
    candidates = [ReplicaKey(i) for i in (1, 2, 3, 10)]
    assert not any(state.can_grant_vote(k, up_to_date, False) for k in candidates)
    assert all(state.can_grant_vote(k, up_to_date, True) == up_to_date for k in candidates)
    state.reset_fetch_timeout_for_successful_fetch(0)
    assert state.remaining_fetch_time_ms(0) == 15000
    for pre_vote in (True, False):
        assert not any(state.can_grant_vote(k, up_to_date, pre_vote) for k in candidates)


def test_follower_has_updated_leader():
    """FollowerStateTest.testHasUpdatedLeader @4.1.0."""
    state = new_follower_state()
    assert not state.has_updated_leader
    state.set_has_updated_leader()
    assert state.has_updated_leader


@pytest.mark.parametrize("up_to_date", [False, True])
def test_unattached_can_grant_vote_with_voted_key(up_to_date):
    """UnattachedStateTest.testCanGrantVoteWithVotedKey @4.1.0: the standard vote binds to the
    voted key (its directory id included); PreVotes go by the log, to anyone."""
    voted = key(1)
    state = UnattachedState(5, 5000, voted_id=voted.id, voters=(1, 2, 3),
                            voted_directory_id=voted.directory_id)
    assert state.can_grant_vote(voted, up_to_date, True) == up_to_date
    assert state.can_grant_vote(voted, up_to_date, False)
    others = [ReplicaKey(1, uuid()), ReplicaKey(1), ReplicaKey(2, voted.directory_id),
              ReplicaKey(2), ReplicaKey(10)]
    for other in others:
        assert state.can_grant_vote(other, up_to_date, True) == up_to_date
        assert not state.can_grant_vote(other, up_to_date, False)


def test_election_state_voted_candidate():
    """ElectionStateTest.testVotedCandidateWithVotedDirectoryId,
    testVotedCandidateWithoutVotedDirectoryId and testVotedCandidateWithoutVotedId @4.1.0."""
    voted = key(1)
    state = ElectionState.with_voted_candidate(5, voted, ())
    assert not state.is_voted_candidate(ReplicaKey(1))
    assert state.is_voted_candidate(voted)
    state = ElectionState.with_voted_candidate(5, ReplicaKey(1), ())
    assert state.is_voted_candidate(ReplicaKey(1))
    assert state.is_voted_candidate(key(1))
    assert not ElectionState.with_unknown_leader(5, ()).is_voted_candidate(ReplicaKey(1))


def voter_node(replica_id: int, with_directory_id: bool) -> VoterNode:
    """VoterSetTest.voterNode: without a directory id the node supports kraft.version 0 only."""
    k = key(replica_id, with_directory_id)
    return VoterNode(k, (("CONTROLLER", "localhost", 9990 + replica_id),),
                     (0, 1) if with_directory_id else (0, 0))


def test_voter_set_supports_version():
    """VoterSetTest.testSupportsVersion @4.1.0."""
    old = VoterSet({i: voter_node(i, False) for i in (1, 2, 3)})
    assert old.supports_version(0) and not old.supports_version(1)
    new = VoterSet({i: voter_node(i, True) for i in (1, 2, 3)})
    assert new.supports_version(0) and new.supports_version(1)


def test_voter_set_update_voter_ignoring_directory_id():
    """VoterSetTest.testUpdateVoterIgnoringDirectoryId @4.1.0: the entry of a voter id is
    replaced whatever its directory id; an id outside the set is not added."""
    nodes = {i: voter_node(i, False) for i in (1, 2, 3)}
    voters = VoterSet(dict(nodes))
    assert voters.update_voter_ignoring_directory_id(voter_node(4, True)) is None
    for _ in range(2):
        new3 = voter_node(3, True)
        assert nodes[3].voter_key != new3.voter_key
        nodes[3] = new3
        voters = voters.update_voter_ignoring_directory_id(new3)
        assert voters == VoterSet(dict(nodes))


def test_quorum_state_to_prospective_guards():
    """QuorumStateTest.testLeaderToProspective, testProspectiveToProspective and
    testObserverUnattachedToProspective @4.1.0: no Prospective from Leader, Prospective or an
    observer (Unattached, voted, or Follower); the state stays."""
    c, ctx = build41(voters=(LOCAL,))
    assert c.quorum().is_leader() and c.epoch == 1
    with pytest.raises(IllegalStateException):
        c._transitions._to_prospective(ctx)
    assert c.quorum().is_leader() and c.epoch == 1
    c, ctx = build41(voters=(LOCAL, V2, V3), unknown=0)
    c._transitions._to_prospective(ctx)
    assert c.quorum().is_prospective()
    with pytest.raises(IllegalStateException):
        c._transitions._to_prospective(ctx)
    c, ctx = build41(voters=(V2, V3))
    assert c.quorum().is_observer() and c.quorum().is_unattached_not_voted()
    with pytest.raises(IllegalStateException):
        c._transitions._to_prospective(ctx)
    c._transitions._add_voted_state(ctx, ReplicaKey(V2))
    assert c.quorum().is_unattached_and_voted()
    with pytest.raises(IllegalStateException):
        c._transitions._to_prospective(ctx)
    c._to_follower(ctx, 0, V3)
    assert c.quorum().is_follower() and c.voted_id == V2 and c.quorum().has_leader()
    with pytest.raises(IllegalStateException):
        c._transitions._to_prospective(ctx)


def test_quorum_state_candidate_to_prospective():
    """QuorumStateTest.testCandidateToProspective @4.1.0: the Prospective after a timed-out
    Candidate draws a fresh election timeout; the persisted vote (epoch 1, itself) stays."""
    c, ctx = build41(voters=(LOCAL, V2, V3), random=2500)
    c._transitions._to_prospective(ctx)
    c._to_candidate(ctx)
    assert c.quorum().is_candidate() and c.epoch == 1
    candidate = c.state
    assert candidate.remaining_election_time_ms(ctx.now) == ELECTION_TIMEOUT_MS + 2500
    ctx.sleep(candidate.remaining_election_time_ms(ctx.now))
    assert candidate.remaining_election_time_ms(ctx.now) == 0
    ctx.random = 3000
    c._transitions._to_prospective(ctx)
    assert c.state.remaining_election_time_ms(ctx.now) == ELECTION_TIMEOUT_MS + 3000
    assert_voted_candidate(c, 1, LOCAL)


def test_quorum_state_unattached_cannot_add_voted_state_for_self():
    """QuorumStateTest.testUnattachedCannotAddVotedStateForSelf @4.1.0."""
    c, ctx = build41(voters=(LOCAL, V2), unknown=0)
    with pytest.raises(IllegalStateException):
        c._transitions._add_voted_state(ctx, ReplicaKey(LOCAL))
