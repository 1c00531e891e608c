"""KafkaRaftClient protocol behaviour, ported from Kafka's ``KafkaRaftClientTest``.

Source: apache/kafka trunk 1eb7644 (2024-10, the 3.9 line, before KIP-996 Pre-Vote):
raft/src/test/java/org/apache/kafka/raft/KafkaRaftClientTest.java, driven as its helper
RaftClientTestContext.java drives the client. The rules are those of KafkaRaftClient.java at the
same commit, so every client here runs with ``pre_vote=False`` (3.x) and the 3.9 defaults
(BeginQuorumEpoch heartbeat, check-quorum, no separate Voted state). tests/test_raft.py and
tests/test_raft_quorum_state_kafka.py already port part of this class (see their docstrings);
this file covers what they do not: election and vote granting, BeginQuorumEpoch /
EndQuorumEpoch handling and user resignation, the leader's Fetch handling (high watermark by a
majority of voters, observers, diverging epochs, error codes), the follower's handling of Fetch
responses, observer discovery and check-quorum.

Adaptation to kafkasim (kafkasim.control.kraft.raft):

- ``RaftClientTestContext`` is ``build()`` below: a ``KafkaRaftClient`` started on ``Ctx``, a
  recording context (sent messages, timers). The configuration is the test context's:
  election timeout 10000 ms, fetch timeout 50000 ms (so check-quorum 75000 ms and the
  BeginQuorumEpoch heartbeat 25000 ms), election backoff max 100 ms, request timeout 5000 ms,
  retry backoff 50 ms, append linger 0 ms. ``MockableRandom.mockNextInt(v)`` is ``Ctx(random=v)``
  (``random_int`` answers ``v`` whatever the bound); unmocked it answers 0, as
  ``mockNextInt(DEFAULT_ELECTION_TIMEOUT_MS, 0)``.
- ``time.sleep(ms)`` is ``ctx.sleep(ms)``; ``client.poll()`` is ``ctx.poll(c)``, which fires the
  client's due timers (kafkasim arms one at its earliest deadline); ``ctx.advance(c, ms)`` is
  both. ``deliverRequest`` + ``poll`` is ``ctx.deliver(c, src, request)`` (poll, then the
  message: Kafka's poll order); responses echo the request's correlation id.
- ``withElectedLeader / withVotedCandidate / withUnknownLeader`` are the persisted
  ``quorum_state``; ``appendToLog(epoch, records)`` is a RaftLog of (offset, epoch, record);
  ``assertElectedLeader / assertVotedCandidate / assertUnknownLeader`` read
  ``persisted_quorum_state`` (Kafka reads the quorum state store). A local id outside the
  voters is an ``observer=True`` client; bootstrap servers are the voters.
- ``prepareAppend + schedulePreparedAppend`` is ``append``; ``resign(epoch)`` is ``resign`` (no
  epoch argument); Kafka's memory-pool checks of testAccumulatorCleared* become "the pending
  records never reach the log"; DescribeQuorum is ``describe_quorum(now)``.

One difference found while porting, since fixed (7041eff): the leader keyed a fetching replica by
the message's source, not by FetchRequest.replicaId
(test_describe_quorum_fetch_with_negative_replica_id_is_not_tracked).

tests/test_raft_client_more_kafka.py ports the KIP-853 voter-key cases
(testInvalidVoterReplica*, testNodeDirectoryId), resign and append by epoch
(testResignInOlderEpochIgnored, testCannotResignWithLargerEpochThanCurrentEpoch,
testAppendFailedWithFencedEpoch) and the rest of the cases still in kafkasim's scope.

Left out (no kafkasim counterpart): the cluster-id / endpoint variants
(testHandleBeginQuorumRequestMoreEndpoints, *ClusterIdValidation,
testStaticVotersIgnoredWithBootstrapSnapshot), graceful shutdown
(testGrantVotesWhenShuttingDown, testLeaderGracefulShutdown*, testFollowerGracefulShutdown,
testObserverGracefulShutdown, testGracefulShutdownSingleMemberQuorum), memory pools and batch
sizes (testAppendFailedWithBufferAllocationException, testAppendFailedWithRecordBatchTooLarge
Exception), fetch RPC versions (testLeaderStateUpdateWithDifferentFetchRequestVersions),
authorization errors (testClusterAuthorizationFailedIn*), metrics, the listener API
(testHandleLeaderChangeFiresAfter*, testLateRegisteredListenerCatchesUp,
testReregistrationChangesListenerContext, testHandleCommitCallbackFiresIn{Voted,Candidate}State),
flush bookkeeping (testObserverReplication's firstUnflushedOffset), observers without a node id
(testCannotResignIfObserver, testObserverFetchWithNoLocalId). Kafka's bootstrap servers are
nodes of their own, with ids distinct from the voters'; kafkasim's are the voters, so the
observer tests that need the discovery Fetch to miss the leader mock the random start.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft.raft import KafkaRaftClient, NotLeaderError, RaftLog

ELECTION_TIMEOUT_MS = 10_000
FETCH_TIMEOUT_MS = 50_000
ELECTION_BACKOFF_MAX_MS = 100
REQUEST_TIMEOUT_MS = 5_000
RETRY_BACKOFF_MS = 50
CHECK_QUORUM_TIMEOUT_MS = int(FETCH_TIMEOUT_MS * 1.5)
BEGIN_QUORUM_EPOCH_TIMEOUT_MS = FETCH_TIMEOUT_MS // 2
TEST_CONFIG = {
    "controller.quorum.election.timeout.ms": ELECTION_TIMEOUT_MS,
    "controller.quorum.fetch.timeout.ms": FETCH_TIMEOUT_MS,
    "controller.quorum.election.backoff.max.ms": ELECTION_BACKOFF_MAX_MS,
    "controller.quorum.request.timeout.ms": REQUEST_TIMEOUT_MS,
    "controller.quorum.retry.backoff.ms": RETRY_BACKOFF_MS,
    "controller.quorum.append.linger.ms": 0,
}
LOCAL, V2, V3 = 1, 2, 3


class Ctx:
    """RaftClientTestContext's MockTime + MockNetworkChannel + MockableRandom."""

    def __init__(self, random=0):
        self.now = 1000
        self.sent: list[tuple[int, object]] = []
        self.timers: list[tuple[int, int, str, tuple]] = []
        self.random = random
        self.leader_changes: list[tuple[int, int]] = []
        self.hws: list[int] = []
        self._seq = 0

    def send(self, dst, msg):
        self.sent.append((dst, msg))

    def schedule(self, delay_ms, timer, *args):
        self._seq += 1
        self.timers.append((self.now + delay_ms, self._seq, timer, args))

    def random_int(self, bound):
        return self.random

    def trace(self, kind, detail):
        pass

    def on_leader_change(self, leader_id, epoch):
        self.leader_changes.append((leader_id, epoch))

    def on_high_watermark(self, hw):
        self.hws.append(hw)

    def sleep(self, ms):
        self.now += ms

    def advance(self, client, ms):
        """``time.sleep(ms); client.poll()``."""
        self.now += ms
        self.poll(client)

    def poll(self, client):
        """KafkaRaftClient.poll: fire every timer due by now (at now)."""
        while True:
            due = sorted(t for t in self.timers if t[0] <= self.now)
            if not due:
                return
            self.timers.remove(due[0])
            client.on_timer(self, due[0][2], *due[0][3])

    def deliver(self, client, src, msg):
        self.poll(client)
        client.handle(self, src, msg)

    def take(self, cls):
        out = [(d, m) for d, m in self.sent if isinstance(m, cls)]
        self.sent = [(d, m) for d, m in self.sent if not isinstance(m, cls)]
        return out

    def one(self, cls):
        out = self.take(cls)
        assert len(out) == 1, out
        return out[0]


def build(local=LOCAL, voters=(LOCAL, V2), *, log=(), random=0, config=None, **kw):
    """RaftClientTestContext.Builder(...).build(): ``elected=(epoch, leader)``,
    ``voted=(epoch, candidate)`` or ``unknown=epoch`` is the persisted election state, ``log`` a
    list of (epoch, [records]) as appendToLog."""
    elected, voted, unknown = (kw.pop(k, None) for k in ("elected", "voted", "unknown"))
    state = None
    if elected or voted or unknown is not None:
        s = (*elected, -1) if elected else (voted[0], -1, voted[1]) if voted else (unknown, -1, -1)
        state = dict(zip(("leader_epoch", "leader_id", "voted_id"), s, strict=True))
    entries = []
    for epoch, records in log:
        entries += [(len(entries), epoch, r) for r in records]
    kw.setdefault("observer", local not in voters)
    cfg = {**TEST_CONFIG, **(config or {})}
    c = KafkaRaftClient(
        local, voters, cfg, pre_vote=False, log=RaftLog(entries), quorum_state=state, **kw
    )
    ctx = Ctx(random)
    c.start(ctx)
    return c, ctx


def become_leader(c, ctx) -> int:
    """RaftClientTestContext.becomeLeader: sleep 2 x election timeout, grant every vote, answer
    every BeginQuorumEpoch."""
    epoch = c.epoch + 1
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    for dst, req in ctx.take(M.VoteRequest):
        assert req.candidate_epoch == epoch
        c.handle(ctx, dst, M.VoteResponse(req.correlation_id, M.NONE, -1, epoch, True))
    assert_elected_leader(c, epoch, c.node_id)
    for dst, req in ctx.take(M.BeginQuorumEpochRequest):
        c.handle(ctx, dst, M.BeginQuorumEpochResponse(req.correlation_id, M.NONE, c.node_id, epoch))
    ctx.sent.clear()
    return epoch


def _election(c):
    s = c.persisted_quorum_state
    return s["leader_epoch"], s["leader_id"], s["voted_id"]


def assert_elected_leader(c, epoch, leader):
    assert _election(c) == (epoch, leader, -1)


def assert_voted_candidate(c, epoch, candidate):
    assert _election(c) == (epoch, -1, candidate)


def assert_unknown_leader(c, epoch):
    assert _election(c) == (epoch, -1, -1)


def vote_request(epoch, candidate, last_epoch, last_offset, corr=100):
    return M.VoteRequest(corr, epoch, candidate, last_epoch, last_offset)


def fetch_request(epoch, replica, offset, last_epoch, max_wait=0, corr=100):
    return M.RaftFetchRequest(corr, replica, epoch, offset, last_epoch, max_wait)


def fetch_response(req, epoch, leader, records=(), hw=0, error=M.NONE):
    return M.RaftFetchResponse(req.correlation_id, error, leader, epoch, hw, tuple(records))


def batch(base, epoch, records):
    return [(base + i, epoch, r) for i, r in enumerate(records)]


def assert_vote_response(ctx, error, epoch, leader, granted):
    _, r = ctx.one(M.VoteResponse)
    assert (r.error, r.leader_epoch, r.leader_id, r.vote_granted) == (error, epoch, leader, granted)


def assert_fetch_response(ctx, error, epoch, leader):
    _, r = ctx.one(M.RaftFetchResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (error, epoch, leader)
    return r


def assert_sent_fetch_request(ctx, epoch, offset, last_epoch, dst=None):
    d, r = ctx.one(M.RaftFetchRequest)
    expected = (epoch, offset, last_epoch, d if dst is None else dst)
    assert (r.current_leader_epoch, r.fetch_offset, r.last_fetched_epoch, d) == expected
    return d, r


def vote_requests(ctx, epoch, last_epoch, last_offset):
    """RaftClientTestContext.collectVoteRequests."""
    out = ctx.take(M.VoteRequest)
    for _d, r in out:
        got = (r.candidate_epoch, r.last_offset_epoch, r.last_offset)
        assert got == (epoch, last_epoch, last_offset)
    return out


# --- votes and elections -------------------------------------------------------------------------
@pytest.mark.parametrize(
    "voters,voted,last",
    [((LOCAL, V2), LOCAL, (0, 0)), ((LOCAL, V2), LOCAL, (1, 1)), ((LOCAL, V2, V3), V3, (1, 1))],
)
def test_reject_votes_in_same_epoch_after_voting(voters, voted, last):
    """testRejectVotesFromSameEpochAfterResigningCandidacy (a restarted candidate of epoch 2,
    equally up to date), testCandidateIgnoreVoteRequestOnSameEpoch and
    testHandleVoteRequestAsFollowerWithVotedCandidate: one vote per epoch."""
    c, ctx = build(voters=voters, voted=(2, voted))
    ctx.take(M.VoteRequest)
    ctx.deliver(c, V2, vote_request(2, V2, *last))
    assert_vote_response(ctx, M.NONE, 2, -1, False)
    assert_voted_candidate(c, 2, voted)


@pytest.mark.parametrize("restart_as", ["candidate", "leader"])
def test_grant_votes_from_higher_epoch_after_resigning(restart_as):
    """testGrantVotesFromHigherEpochAfterResigningCandidacy / ...ResigningLeadership: a higher
    epoch moves the replica to Unattached, where it grants and persists the vote."""
    kw = {"voted": (2, LOCAL)} if restart_as == "candidate" else {"elected": (2, LOCAL)}
    c, ctx = build(**kw)
    assert c.state_name == ("Candidate" if restart_as == "candidate" else "Resigned")
    ctx.deliver(c, V2, vote_request(3, V2, 0, 0))
    assert (c.state_name, c.voted_id) == ("Unattached", V2)
    assert_voted_candidate(c, 3, V2)
    assert_vote_response(ctx, M.NONE, 3, -1, True)


def test_initialize_as_resigned_leader_from_state_store():
    """testInitializeAsResignedLeaderFromStateStore and testInitializeAsResignedAndBecomeCandidate:
    no appends while Resigned; EndQuorumEpoch to the other voter; after the election timeout a
    Candidate of epoch 3 asks for votes."""
    c, ctx = build(elected=(2, LOCAL))
    assert c.state_name == "Resigned" and c.log.end_offset == 0
    assert_elected_leader(c, 2, LOCAL)
    with pytest.raises(NotLeaderError):
        c.append(ctx, ["a", "b"])
    dst, req = ctx.one(M.EndQuorumEpochRequest)
    assert (dst, req.leader_epoch, req.leader_id) == (V2, 2, LOCAL)
    ctx.deliver(c, V2, M.EndQuorumEpochResponse(req.correlation_id, M.NONE, LOCAL, 2))
    ctx.advance(c, ELECTION_TIMEOUT_MS)
    assert c.state_name == "Candidate"
    assert_voted_candidate(c, 3, LOCAL)
    assert len(vote_requests(ctx, 3, 0, 0)) == 1


@pytest.mark.parametrize("voters", [(LOCAL, V2), (LOCAL, V2, V3)])
def test_initialize_as_candidate_and_become_leader(voters):
    """testInitializeAsCandidateAndBecomeLeader / ...QuorumOfThree: one granted vote is a
    majority; the LeaderChange control record (voters, granting voters) is offset 0, and
    BeginQuorumEpoch goes to every other voter."""
    c, ctx = build(voters=voters)
    assert_unknown_leader(c, 0)
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert_voted_candidate(c, 1, LOCAL)
    reqs = vote_requests(ctx, 1, 0, 0)
    assert len(reqs) == len(voters) - 1
    dst, req = reqs[0]
    ctx.deliver(c, dst, M.VoteResponse(req.correlation_id, M.NONE, -1, 1, True))
    assert_elected_leader(c, 1, LOCAL)
    assert c.log.end_offset == 1
    ctx.poll(c)
    assert {d for d, r in ctx.take(M.BeginQuorumEpochRequest) if r.leader_epoch == 1} == (
        set(voters) - {LOCAL}
    )
    _off, epoch, record = c.log.entries[0]
    assert isinstance(record, M.LeaderChangeMessage) and epoch == 1
    assert record.leader_id == LOCAL
    assert set(record.voters) == set(voters)
    assert set(record.granting_voters) == {dst, LOCAL}


def test_vote_request_timeout():
    """testVoteRequestTimeout: the Vote is retried after the request timeout; the late answer
    to the first one is ignored, the answer to the retry elects."""
    c, ctx = build()
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert_voted_candidate(c, 1, LOCAL)
    ((dst, first),) = vote_requests(ctx, 1, 0, 0)
    ctx.advance(c, REQUEST_TIMEOUT_MS)
    ((_, retry),) = vote_requests(ctx, 1, 0, 0)
    assert retry.correlation_id != first.correlation_id
    ctx.deliver(c, dst, M.VoteResponse(first.correlation_id, M.NONE, -1, 1, True))
    assert_voted_candidate(c, 1, LOCAL)
    ctx.deliver(c, dst, M.VoteResponse(retry.correlation_id, M.NONE, -1, 1, True))
    assert_elected_leader(c, 1, LOCAL)


def test_handle_vote_request_as_observer():
    """testHandleVoteRequestAsObserver: a replica outside the voter set still grants votes."""
    c, ctx = build(local=LOCAL, voters=(V2, V3), unknown=2)
    ctx.deliver(c, V2, vote_request(3, V2, 2, 1))
    assert_vote_response(ctx, M.NONE, 3, -1, True)
    assert_voted_candidate(c, 3, V2)


def test_leader_accept_vote_from_observer():
    """testLeaderAcceptVoteFromObserver: an older epoch is fenced; the leader's epoch is
    answered with itself as leader, not granted."""
    c, ctx = build(unknown=4)
    epoch = become_leader(c, ctx)
    ctx.deliver(c, V3, vote_request(epoch - 1, V3, 0, 0))
    assert_vote_response(ctx, M.FENCED_LEADER_EPOCH, epoch, LOCAL, False)
    ctx.deliver(c, V3, vote_request(epoch, V3, 0, 0))
    assert_vote_response(ctx, M.NONE, epoch, LOCAL, False)


def test_invalid_vote_request():
    """testInvalidVoteRequest: negative last offset, negative last epoch, last epoch not below
    the candidate epoch -> INVALID_REQUEST, and the state does not move."""
    c, ctx = build(elected=(5, V2))
    for last_epoch, last_offset in [(0, -5), (-1, 0), (6, 0)]:
        ctx.deliver(c, V2, vote_request(6, V2, last_epoch, last_offset))
        assert_vote_response(ctx, M.INVALID_REQUEST, 5, V2, False)
        assert_elected_leader(c, 5, V2)


def test_retry_election():
    """testRetryElection: a rejected candidacy keeps the vote, backs off
    min(100 x nextInt, election.backoff.max.ms) = 100 ms, then bumps the epoch."""
    c, ctx = build(random=85)
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert_voted_candidate(c, 1, LOCAL)
    ((dst, req),) = vote_requests(ctx, 1, 0, 0)
    ctx.deliver(c, dst, M.VoteResponse(req.correlation_id, M.NONE, -1, 1, False))
    assert_voted_candidate(c, 1, LOCAL)
    ctx.advance(c, ELECTION_BACKOFF_MAX_MS - 1)
    assert_voted_candidate(c, 1, LOCAL)
    ctx.advance(c, 1)
    assert_voted_candidate(c, 2, LOCAL)
    assert len(vote_requests(ctx, 2, 0, 0)) == 1


def test_vote_response_ignored_after_becoming_follower():
    """testVoteResponseIgnoredAfterBecomingFollower: a BeginQuorumEpoch of the candidate's epoch
    makes it a follower; the Vote answers still in flight are ignored."""
    c, ctx = build(voters=(LOCAL, V2, V3), unknown=4)
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert_voted_candidate(c, 5, LOCAL)
    reqs = vote_requests(ctx, 5, 0, 0)
    assert len(reqs) == 2
    ctx.deliver(c, V3, M.BeginQuorumEpochRequest(100, 5, V3))
    assert_elected_leader(c, 5, V3)
    (d1, r1), (d2, r2) = reqs
    c.handle(ctx, d1, M.VoteResponse(r1.correlation_id, M.NONE, -1, 5, False))
    c.handle(ctx, d2, M.VoteResponse(r2.correlation_id, M.NONE, V3, 5, False))
    ctx.poll(c)
    assert_elected_leader(c, 5, V3)
    assert c.state_name == "Follower"


def test_voter_become_candidate_after_fetch_timeout():
    """testVoterBecomeCandidateAfterFetchTimeout: the Vote carries the log's last epoch and end
    offset."""
    c, ctx = build(elected=(5, V2), log=[(3, ["foo"])])
    assert_elected_leader(c, 5, V2)
    assert_sent_fetch_request(ctx, 5, 1, 3)
    ctx.advance(c, FETCH_TIMEOUT_MS)
    assert len(vote_requests(ctx, 6, 3, 1)) == 1
    assert_voted_candidate(c, 6, LOCAL)


# --- BeginQuorumEpoch, EndQuorumEpoch and resignation ------------------------------------------
def test_end_quorum_epoch_retries_while_resigned():
    """testEndQuorumEpochRetriesWhileResigned: EndQuorumEpoch is retried after the request
    timeout, only to the voter that has not answered."""
    c, ctx = build(voters=(LOCAL, V2, V3), elected=(19, LOCAL))  # election 10 s, request 5 s
    reqs = ctx.take(M.EndQuorumEpochRequest)
    assert sorted(d for d, r in reqs if r.leader_epoch == 19) == [V2, V3]
    (d1, r1), (d2, _r2) = reqs
    ctx.deliver(c, d1, M.EndQuorumEpochResponse(r1.correlation_id, M.NONE, LOCAL, 19))
    assert ctx.sent == []
    ctx.advance(c, 6000)
    assert [d for d, _ in ctx.take(M.EndQuorumEpochRequest)] == [d2]


def test_resign_will_complete_fetch_purgatory():
    """testResignWillCompleteFetchPurgatory (resign() for shutdown()): a parked Fetch is answered
    NOT_LEADER_OR_FOLLOWER when the leader resigns."""
    c, ctx = build()
    epoch = become_leader(c, ctx)
    ctx.deliver(c, V2, fetch_request(epoch, V2, c.log.end_offset, epoch, 1000))
    assert ctx.take(M.RaftFetchResponse) == []
    c.log.append_as_leader(["raft"], epoch)  # context.log.appendAsLeader: no poll
    c.resign(ctx)
    ctx.poll(c)
    assert_fetch_response(ctx, M.NOT_LEADER_OR_FOLLOWER, epoch, LOCAL)
    assert (c.state_name, c.epoch, c.leader_id) == ("Resigned", epoch, LOCAL)


def test_handle_begin_quorum_epoch_after_user_initiated_resign():
    """testHandleBeginQuorumEpochAfterUserInitiatedResign."""
    c, ctx = build(voters=(LOCAL, V2, V3))
    epoch = become_leader(c, ctx)
    c.resign(ctx)
    ctx.poll(c)
    assert c.state_name == "Resigned"
    ctx.deliver(c, V2, M.BeginQuorumEpochRequest(100, epoch + 1, V2))
    _, r = ctx.one(M.BeginQuorumEpochResponse)
    assert r.error == M.NONE
    assert_elected_leader(c, epoch + 1, V2)
    assert ctx.leader_changes[-1] == (V2, epoch + 1)


def test_election_timeout_after_user_initiated_resign():
    """testElectionTimeoutAfterUserInitiatedResign: an acknowledged EndQuorumEpoch is not
    re-sent; a Fetch to the resigned leader is NOT_LEADER_OR_FOLLOWER; after the election
    timeout it is a Candidate of the next epoch with no known leader."""
    c, ctx = build()
    epoch = become_leader(c, ctx)
    c.resign(ctx)
    ctx.poll(c)
    assert c.state_name == "Resigned"
    dst, req = ctx.one(M.EndQuorumEpochRequest)
    assert (dst, req.leader_epoch) == (V2, epoch)
    ctx.deliver(c, V2, M.EndQuorumEpochResponse(req.correlation_id, M.NONE, LOCAL, epoch))
    ctx.advance(c, RETRY_BACKOFF_MS)
    assert ctx.sent == []
    ctx.deliver(c, 7, fetch_request(1, -1, 0, 0))
    assert_fetch_response(ctx, M.NOT_LEADER_OR_FOLLOWER, epoch, LOCAL)
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert (c.state_name, c.epoch) == ("Candidate", epoch + 1)
    assert ctx.leader_changes[-1] == (-1, epoch + 1)


def test_cannot_resign_if_not_leader():
    """testCannotResignIfNotLeader (Kafka: IllegalArgumentException; kafkasim's ``resign`` has
    no epoch argument and raises NotLeaderError)."""
    c, ctx = build(elected=(2, V2))
    assert c.leader_id == V2
    with pytest.raises(NotLeaderError):
        c.resign(ctx)
    assert_elected_leader(c, 2, V2)


@pytest.mark.parametrize("start,epoch", [({"voted": (2, V2)}, 2), ({"elected": (2, LOCAL)}, 3)])
def test_handle_begin_quorum_request(start, epoch):
    """testHandleBeginQuorumRequest (the voted candidate's BeginQuorumEpoch of the same epoch)
    and testHandleBeginQuorumResponse (a resigned leader follows a higher epoch's leader)."""
    c, ctx = build(**start)
    ctx.deliver(c, V2, M.BeginQuorumEpochRequest(100, epoch, V2))
    assert_elected_leader(c, epoch, V2)
    _, r = ctx.one(M.BeginQuorumEpochResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (M.NONE, epoch, V2)


def test_end_quorum_ignored_as_candidate_if_older_epoch():
    """testEndQuorumIgnoredAsCandidateIfOlderEpoch: FENCED_LEADER_EPOCH; the candidate keeps
    its election timer, backs off, then runs again."""
    c, ctx = build(unknown=4, random=85)
    ctx.advance(c, ELECTION_TIMEOUT_MS + 85)
    assert_voted_candidate(c, 5, LOCAL)
    ctx.deliver(c, V2, M.EndQuorumEpochRequest(100, 3, V2, (LOCAL,)))
    _, r = ctx.one(M.EndQuorumEpochResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (M.FENCED_LEADER_EPOCH, 5, -1)
    ctx.advance(c, ELECTION_TIMEOUT_MS + 85 - 1)
    assert_voted_candidate(c, 5, LOCAL)
    ctx.advance(c, 1)
    assert_voted_candidate(c, 5, LOCAL)  # backing off
    ctx.advance(c, ELECTION_BACKOFF_MAX_MS)
    assert_voted_candidate(c, 6, LOCAL)


def test_end_quorum_ignored_as_leader_if_older_epoch():
    """testEndQuorumIgnoredAsLeaderIfOlderEpoch."""
    c, ctx = build(voters=(LOCAL, V2, V3), unknown=6)
    epoch = become_leader(c, ctx)
    ctx.deliver(c, V2, M.EndQuorumEpochRequest(100, epoch - 2, V2, (LOCAL, V3)))
    _, r = ctx.one(M.EndQuorumEpochResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (M.FENCED_LEADER_EPOCH, epoch, LOCAL)
    ctx.advance(c, FETCH_TIMEOUT_MS - 1)
    assert_elected_leader(c, epoch, LOCAL)
    assert c.state_name == "Leader"


def test_end_quorum_starts_new_election_immediately_if_follower_unattached():
    """testEndQuorumStartsNewElectionImmediatelyIfFollowerUnattached: the EndQuorumEpoch names
    the leader (so the replica follows it) and the replica is first preferred successor."""
    c, ctx = build(voters=(LOCAL, V2, V3), unknown=2)
    ctx.deliver(c, V2, M.EndQuorumEpochRequest(100, 2, V2, (LOCAL, V3)))
    _, r = ctx.one(M.EndQuorumEpochResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (M.NONE, 2, V2)
    ctx.poll(c)
    assert_voted_candidate(c, 3, LOCAL)


def test_handle_end_quorum_request_with_lower_priority_to_become_leader():
    """testHandleEndQuorumRequestWithLowerPriorityToBecomeLeader: second of two successors, the
    fetch timeout becomes strictExponentialElectionBackoffMs(1, 2) = 100 >> 1 = 50 ms."""
    c, ctx = build(voters=(LOCAL, V2, V3), elected=(2, V2))
    ctx.deliver(c, V2, M.EndQuorumEpochRequest(100, 2, V2, (V3, LOCAL)))
    _, r = ctx.one(M.EndQuorumEpochResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (M.NONE, 2, V2)
    ctx.advance(c, 1)
    assert_sent_fetch_request(ctx, 2, 0, 0)
    assert c.state_name == "Follower"
    ctx.advance(c, RETRY_BACKOFF_MS)
    assert len(vote_requests(ctx, 3, 0, 0)) == 2
    assert_voted_candidate(c, 3, LOCAL)


@pytest.mark.parametrize("become", ["Follower", "Voted", "Unattached"])
def test_accumulator_cleared_after_losing_leadership(become):
    """testAccumulatorClearedAfterBecomingFollower / ...Voted / ...Unattached (linger 50 ms):
    records appended but not yet drained die with the leadership."""
    c, ctx = build(config={"controller.quorum.append.linger.ms": 50})
    epoch = become_leader(c, ctx)
    assert c.append(ctx, ["a"]) == 1
    if become == "Follower":
        ctx.deliver(c, V2, M.BeginQuorumEpochRequest(100, epoch + 1, V2))
        assert_elected_leader(c, epoch + 1, V2)
    elif become == "Voted":
        ctx.deliver(c, V2, vote_request(epoch + 1, V2, epoch, c.log.end_offset))
        assert_voted_candidate(c, epoch + 1, V2)
    else:
        ctx.deliver(c, V2, vote_request(epoch + 1, V2, epoch, 0))
        assert_unknown_leader(c, epoch + 1)
    ctx.advance(c, 100)
    assert c.log.end_offset == 1 and all(e[2] != "a" for e in c.log.entries)


def test_channel_woken_up_if_linger_timeout_reached_during_append():
    """testChannelWokenUpIfLingerTimeoutReachedDuringAppend: an append after the linger time
    (before any poll) joins the pending batch and both drain on the next poll."""
    c, ctx = build(config={"controller.quorum.append.linger.ms": 50})
    epoch = become_leader(c, ctx)
    assert c.log.end_offset == 1 and c.epoch == epoch
    assert c.append(ctx, ["a"]) == 1
    ctx.sleep(50)
    assert c.append(ctx, ["b"]) == 2
    ctx.poll(c)
    assert c.log.end_offset == 3


@pytest.mark.parametrize("heartbeat", [True, False])
def test_fetch_should_be_treated_as_leader_acknowledgement(heartbeat):
    """testFetchShouldBeTreatedAsLeaderAcknowledgement: a lost BeginQuorumEpoch is not re-sent
    once the voter fetched (3.9: before the 25 s heartbeat; before 3.9: the fetch acknowledges)."""
    c, ctx = build(unknown=4, begin_quorum_epoch_heartbeat=heartbeat)
    ctx.advance(c, ELECTION_TIMEOUT_MS)
    for dst, req in vote_requests(ctx, 5, 0, 0):
        c.handle(ctx, dst, M.VoteResponse(req.correlation_id, M.NONE, -1, 5, True))
    assert_elected_leader(c, 5, LOCAL)
    ctx.poll(c)
    assert [d for d, r in ctx.take(M.BeginQuorumEpochRequest)] == [V2]
    ctx.deliver(c, V2, fetch_request(5, V2, 0, 0, 500))
    assert_fetch_response(ctx, M.NONE, 5, LOCAL)
    ctx.advance(c, REQUEST_TIMEOUT_MS)
    assert ctx.sent == []


# --- Fetch at the leader -------------------------------------------------------------------------
def test_leader_should_resign_if_not_get_fetch_request_from_majority_voters():
    """testLeaderShouldResignLeadershipIfNotGetFetchRequestFromMajorityVoters: voter fetches
    reset the check-quorum timer (1.5 x fetch timeout), an observer's does not."""
    c, ctx = build(voters=(LOCAL, V2, V3))
    epoch = become_leader(c, ctx)
    half = CHECK_QUORUM_TIMEOUT_MS // 2
    ctx.advance(c, half)
    assert c.state_name == "Leader"
    for replica in (V2, V3):
        ctx.deliver(c, replica, fetch_request(epoch, replica, 0, 0))
        ctx.advance(c, half)
        assert c.state_name == "Leader"
    ctx.deliver(c, 4, fetch_request(epoch, 4, 0, 0))  # observer
    ctx.advance(c, half)
    assert (c.state_name, c.epoch, c.leader_id) == ("Resigned", epoch, LOCAL)


def test_listener_commit_callback_after_leader_write():
    """testListenerCommitCallbackAfterLeaderWrite: the high watermark is the follower's fetch
    offset once the leader's epoch start is replicated; a fetch returning records answers at
    once without waiting."""
    c, ctx = build(unknown=4)
    epoch = become_leader(c, ctx)
    ctx.poll(c)
    assert c.high_watermark == -1 and c.log.end_offset == 1
    ctx.deliver(c, V2, fetch_request(epoch, V2, 1, epoch, 0))
    assert_fetch_response(ctx, M.NONE, epoch, LOCAL)
    assert c.high_watermark == 1
    c.append(ctx, ["a", "b", "c"])
    ctx.poll(c)
    assert c.log.end_offset == 4
    ctx.deliver(c, V2, fetch_request(epoch, V2, 1, epoch, 500))
    r = assert_fetch_response(ctx, M.NONE, epoch, LOCAL)
    assert [e[2] for e in r.records] == ["a", "b", "c"]
    assert c.high_watermark == 1
    ctx.deliver(c, V2, fetch_request(epoch, V2, 4, epoch, 500))
    assert c.high_watermark == 4 and ctx.hws[-2:] == [1, 4]


def test_invalid_fetch_request():
    """testInvalidFetchRequest (and validateLeaderOnlyRequest's FENCED_LEADER_EPOCH for a stale
    current leader epoch)."""
    c, ctx = build(unknown=4)
    epoch = become_leader(c, ctx)
    cases = [
        ((epoch, V2, -5, 0, 0), M.INVALID_REQUEST),
        ((epoch, V2, 0, -1, 0), M.INVALID_REQUEST),
        ((epoch, V2, 0, epoch + 1, 0), M.INVALID_REQUEST),
        ((epoch + 1, V2, 0, 0, 0), M.UNKNOWN_LEADER_EPOCH),
        ((epoch, V2, 0, 0, -1), M.INVALID_REQUEST),
        ((epoch - 1, V2, 0, 0, 0), M.FENCED_LEADER_EPOCH),
    ]
    for args, error in cases:
        ctx.deliver(c, V2, fetch_request(*args))
        r = assert_fetch_response(ctx, error, epoch, LOCAL)
        assert r.records == () and r.high_watermark == -1
    assert c.high_watermark == -1  # no rejected fetch moved the leader's state


ROW = ("replica_id", "log_end_offset", "last_fetch_timestamp", "last_caught_up_timestamp")


def _row(r):
    return tuple(r[k] for k in ROW)


def _describe(c, ctx):
    """DescribeQuorum: (high watermark, voter rows, observer rows), each row (id, log end
    offset, last fetch time, last caught-up time); the local row's times are now."""
    d = c.describe_quorum(ctx.now)
    voters, observers = d["current_voters"], d["observers"]
    return d["high_watermark"], [_row(r) for r in voters], [_row(r) for r in observers]


def test_describe_quorum_with_followers():
    """testDescribeQuorumWithFollowers (static voters): the high watermark advances only when a
    majority of voters (the leader included) has reached an offset; the leader that loses the
    quorum answers NOT_LEADER_OR_FOLLOWER."""
    c, ctx = build(voters=(LOCAL, V2, V3))
    epoch = become_leader(c, ctx)
    n = ctx.now
    assert _describe(c, ctx) == (-1, [(LOCAL, 1, n, n), (V2, -1, -1, -1), (V3, -1, -1, -1)], [])
    ctx.sleep(100)
    t1 = ctx.now
    ctx.deliver(c, V2, fetch_request(1, V2, 1, epoch))
    _, r = ctx.one(M.RaftFetchResponse)
    assert r.high_watermark == 1
    c.append(ctx, ["foo", "bar"])
    ctx.poll(c)
    ctx.sleep(100)
    n = ctx.now
    assert _describe(c, ctx) == (1, [(LOCAL, 3, n, n), (V2, 1, t1, t1), (V3, -1, -1, -1)], [])
    ctx.sleep(100)
    t2 = ctx.now
    ctx.deliver(c, V3, fetch_request(epoch, V3, 3, epoch))
    _, r = ctx.one(M.RaftFetchResponse)
    assert r.high_watermark == 3
    ctx.sleep(100)
    n = ctx.now
    assert _describe(c, ctx) == (3, [(LOCAL, 3, n, n), (V2, 1, t1, t1), (V3, 3, t2, t2)], [])
    ctx.advance(c, CHECK_QUORUM_TIMEOUT_MS)
    with pytest.raises(NotLeaderError):
        c.describe_quorum(ctx.now)


def test_describe_quorum_with_observer():
    """testDescribeQuorumWithObserver (static voters): an observer's fetches are tracked but
    never move the high watermark; it leaves the observer list after
    OBSERVER_SESSION_TIMEOUT_MS; a negative replica id is not tracked."""
    c, ctx = build()
    epoch = become_leader(c, ctx)
    ctx.sleep(100)
    tf = ctx.now
    ctx.deliver(c, V2, fetch_request(1, V2, 1, epoch))
    assert ctx.one(M.RaftFetchResponse)[1].high_watermark == 1
    ctx.sleep(100)
    to = ctx.now
    ctx.deliver(c, 3, fetch_request(epoch, 3, 0, 0))
    assert ctx.one(M.RaftFetchResponse)[1].high_watermark == 1
    ctx.sleep(100)
    n = ctx.now
    assert _describe(c, ctx) == (1, [(LOCAL, 1, n, n), (V2, 1, tf, tf)], [(3, 0, to, -1)])
    ctx.sleep(100)
    to = ctx.now
    ctx.deliver(c, 3, fetch_request(epoch, 3, 1, epoch))
    assert ctx.one(M.RaftFetchResponse)[1].high_watermark == 1
    ctx.sleep(100)
    c.append(ctx, ["foo", "bar"])
    ctx.poll(c)
    n = ctx.now
    assert _describe(c, ctx) == (1, [(LOCAL, 3, n, n), (V2, 1, tf, tf)], [(3, 1, to, to)])
    remaining = 300_000  # LeaderState.OBSERVER_SESSION_TIMEOUT_MS
    while remaining > 0:
        tf = ctx.now
        ctx.deliver(c, V2, fetch_request(epoch, V2, 1, epoch))
        assert ctx.one(M.RaftFetchResponse)[1].high_watermark == 1
        ctx.sleep(CHECK_QUORUM_TIMEOUT_MS - 1)
        remaining -= CHECK_QUORUM_TIMEOUT_MS - 1
    hw, voters, observers = _describe(c, ctx)
    assert hw == 1 and observers == [] and voters[1][:3] == (V2, 1, tf)


def test_describe_quorum_non_monotonic_follower_fetch():
    """testDescribeQuorumNonMonotonicFollowerFetch (static voters): a follower that lost its
    disk fetches an earlier offset; the leader records it but the high watermark does not
    rewind, and the last caught-up time stays. (Kafka's MockLog reports the start of the batch
    holding the fetch offset, offset 1 here; kafkasim has no batches and records offset 2.)"""
    c, ctx = build()
    epoch = become_leader(c, ctx)
    ctx.sleep(100)
    c.append(ctx, ["foo", "bar"])
    ctx.poll(c)
    tf = ctx.now
    ctx.deliver(c, V2, fetch_request(epoch, V2, 3, epoch))
    assert ctx.one(M.RaftFetchResponse)[1].high_watermark == 3
    ctx.sleep(100)
    n = ctx.now
    assert _describe(c, ctx) == (3, [(LOCAL, 3, n, n), (V2, 3, tf, tf)], [])
    ctx.sleep(100)
    t2 = ctx.now
    ctx.deliver(c, V2, fetch_request(epoch, V2, 2, epoch))
    assert ctx.one(M.RaftFetchResponse)[1].high_watermark == 3
    ctx.sleep(100)
    n = ctx.now
    assert _describe(c, ctx) == (3, [(LOCAL, 3, n, n), (V2, 2, t2, tf)], [])


def test_describe_quorum_fetch_with_negative_replica_id_is_not_tracked():
    """testDescribeQuorumWithObserver, its last step ("No-op for negative node id"): a Fetch
    whose replica id is -1 (a client that is no replica) is answered and not tracked: Kafka
    keys the replica by ``FetchRequest.replicaId(request)`` (tryCompleteFetchRequest ->
    LeaderState.updateReplicaState, which ignores negative ids)."""
    c, ctx = build()
    epoch = become_leader(c, ctx)
    ctx.deliver(c, V2, fetch_request(epoch, V2, 1, epoch))
    assert ctx.one(M.RaftFetchResponse)[1].high_watermark == 1
    ctx.deliver(c, 9, fetch_request(epoch, -1, 0, 0))
    assert ctx.one(M.RaftFetchResponse)[1].high_watermark == 1
    assert _describe(c, ctx)[2] == []


# --- Fetch responses at the follower -------------------------------------------------------------
@pytest.mark.parametrize("log,offset,last_epoch", [((), 0, 0), ([(3, ["foo"])], 1, 3)])
def test_initialize_as_follower(log, offset, last_epoch):
    """testInitializeAsFollowerEmptyLog / testInitializeAsFollowerNonEmptyLog."""
    c, ctx = build(elected=(5, V2), log=log)
    assert_elected_leader(c, 5, V2)
    ctx.poll(c)
    assert_sent_fetch_request(ctx, 5, offset, last_epoch, dst=V2)


@pytest.mark.parametrize("becomes", ["Candidate", "Follower"])
def test_fetch_response_ignored_after_leaving_the_leader(becomes):
    """testFetchResponseIgnoredAfterBecomingCandidate and
    testFetchResponseIgnoredAfterBecomingFollowerOfDifferentLeader: the answer to a Fetch sent
    to the old leader is dropped."""
    c, ctx = build(voters=(LOCAL, V2, V3), elected=(5, V2))
    _, req = assert_sent_fetch_request(ctx, 5, 0, 0)
    if becomes == "Candidate":
        ctx.advance(c, FETCH_TIMEOUT_MS)
    else:
        ctx.deliver(c, V3, M.BeginQuorumEpochRequest(100, 6, V3))
    before = _election(c)
    assert before == ((6, -1, LOCAL) if becomes == "Candidate" else (6, V3, -1))
    ctx.deliver(c, V2, fetch_response(req, 5, V2, batch(0, 3, ["a", "b"])))
    assert c.log.end_offset == 0 and _election(c) == before and c.state_name == becomes


def test_follower_replication():
    """testFollowerReplication."""
    c, ctx = build(elected=(5, V2))
    _, req = assert_sent_fetch_request(ctx, 5, 0, 0)
    ctx.deliver(c, V2, fetch_response(req, 5, V2, batch(0, 3, ["a", "b"])))
    assert c.log.end_offset == 2 and c.log.last_fetched_epoch == 3


def test_empty_record_set_in_fetch_response():
    """testEmptyRecordSetInFetchResponse: the follower's high watermark is min(leader's HW, log
    end offset), taken from empty responses too."""
    c, ctx = build(elected=(5, V2))
    _, req = assert_sent_fetch_request(ctx, 5, 0, 0)
    ctx.deliver(c, V2, fetch_response(req, 5, V2, (), hw=0))
    assert (c.log.end_offset, c.high_watermark) == (0, 0)
    ctx.poll(c)
    _, req = assert_sent_fetch_request(ctx, 5, 0, 0)
    ctx.deliver(c, V2, fetch_response(req, 5, V2, batch(0, 5, ["a", "b"]), hw=0))
    assert (c.log.end_offset, c.high_watermark) == (2, 0)
    ctx.poll(c)
    _, req = assert_sent_fetch_request(ctx, 5, 2, 5)
    ctx.deliver(c, V2, fetch_response(req, 5, V2, (), hw=2))
    assert (c.log.end_offset, c.high_watermark) == (2, 2)


def test_follower_log_reconciliation():
    """testFollowerLogReconciliation: a diverging epoch (3, end offset 2) truncates the log to
    offset 2 and the next Fetch starts there; the diverging response carries no HW update."""
    c, ctx = build(elected=(5, V2), log=[(3, ["foo", "bar"]), (3, ["baz"])])
    assert c.log.end_offset == 3
    _, req = assert_sent_fetch_request(ctx, 5, 3, 3)
    resp = M.RaftFetchResponse(req.correlation_id, M.NONE, V2, 5, 1, (), 3, 2)
    ctx.deliver(c, V2, resp)
    assert c.log.end_offset == 2
    assert c.high_watermark == -1
    ctx.poll(c)
    assert_sent_fetch_request(ctx, 5, 2, 3)


def test_handle_commit_callback_fires_after_follower_high_watermark_advances():
    """testHandleCommitCallbackFiresAfterFollowerHighWatermarkAdvances."""
    c, ctx = build(elected=(5, V2))
    assert c.high_watermark == -1
    _, req = assert_sent_fetch_request(ctx, 5, 0, 0)
    ctx.deliver(c, V2, fetch_response(req, 5, V2, batch(0, 3, ["a", "b", "c"]), hw=0))
    assert c.high_watermark == 0 and c.log.entries[: c.high_watermark] == []  # nothing committed
    ctx.poll(c)
    _, req = assert_sent_fetch_request(ctx, 5, 3, 3)
    ctx.deliver(c, V2, fetch_response(req, 5, V2, batch(3, 3, ["d", "e", "f"]), hw=3))
    assert c.high_watermark == 3 and ctx.hws[-1] == 3 and c.log.end_offset == 6
    assert [e[2] for e in c.log.entries[: c.high_watermark]] == ["a", "b", "c"]


# --- observers -----------------------------------------------------------------------------------
def test_initialize_observer_no_previous_state():
    """testInitializeObserverNoPreviousState: the discovery Fetch goes to a voter; a
    FENCED_LEADER_EPOCH answer naming the leader is followed."""
    c, ctx = build(local=LOCAL, voters=(V2, V3))
    dst, req = assert_sent_fetch_request(ctx, 0, 0, 0)
    assert dst in (V2, V3)
    ctx.deliver(c, dst, fetch_response(req, 5, V2, error=M.FENCED_LEADER_EPOCH))
    assert_elected_leader(c, 5, V2)


def test_observer_quorum_discovery_failure():
    """testObserverQuorumDiscoveryFailure: an UNKNOWN_SERVER_ERROR answer without epoch, then
    another discovery Fetch after the retry backoff."""
    c, ctx = build(local=LOCAL, voters=(V2,))
    dst, req = assert_sent_fetch_request(ctx, 0, 0, 0, dst=V2)
    ctx.deliver(c, dst, fetch_response(req, -1, -1, hw=-1, error="UNKNOWN_SERVER_ERROR"))
    ctx.advance(c, RETRY_BACKOFF_MS)
    dst, req = assert_sent_fetch_request(ctx, 0, 0, 0, dst=V2)
    ctx.deliver(c, dst, fetch_response(req, 5, V2, error=M.FENCED_LEADER_EPOCH))
    assert_elected_leader(c, 5, V2)


def test_observer_send_discovery_fetch_after_fetch_timeout():
    """testObserverSendDiscoveryFetchAfterFetchTimeout (``random=1``: the random start of
    findReadyBootstrapServer picks the non-leader voter, as Kafka's bootstrap ids never equal
    the leader's id)."""
    c, ctx = build(local=LOCAL, voters=(V2, V3), random=1)
    dst, req = assert_sent_fetch_request(ctx, 0, 0, 0)
    ctx.deliver(c, dst, fetch_response(req, 5, V2, error=M.FENCED_LEADER_EPOCH))
    assert_elected_leader(c, 5, V2)
    ctx.take(M.RaftFetchRequest)
    ctx.advance(c, FETCH_TIMEOUT_MS)
    assert_sent_fetch_request(ctx, 5, 0, 0, dst=V3)


def test_observer_leader_rediscovery_after_request_timeout():
    """testObserverLeaderRediscoveryAfterRequestTimeout (``random=1`` as above): the timed-out
    Fetch to the leader is retried against another voter, whose FENCED_LEADER_EPOCH answer
    keeps the leader."""
    c, ctx = build(local=LOCAL, voters=(V2, V3), random=1)
    dst, req = assert_sent_fetch_request(ctx, 0, 0, 0)
    ctx.deliver(c, dst, fetch_response(req, 5, V2))
    assert_elected_leader(c, 5, V2)
    ctx.poll(c)
    assert_sent_fetch_request(ctx, 5, 0, 0, dst=V2)
    ctx.advance(c, REQUEST_TIMEOUT_MS)
    dst, req = assert_sent_fetch_request(ctx, 5, 0, 0, dst=V3)
    ctx.deliver(c, dst, fetch_response(req, 5, V2, error=M.FENCED_LEADER_EPOCH))
    assert_elected_leader(c, 5, V2)
    assert c.state_name == "Follower"


def test_observer_handle_retry_fetch():
    """testObserverHandleRetryFetchToLeader and testObserverHandleRetryFetchtToBootstrapServer
    (``random=1`` as above): while the retry to another voter is in flight no further Fetch is
    sent; the late answer of the timed-out leader Fetch is ignored and the retry's answer is
    appended once."""
    c, ctx = build(local=LOCAL, voters=(V2, V3), random=1)
    dst, req = assert_sent_fetch_request(ctx, 0, 0, 0)
    ctx.deliver(c, dst, fetch_response(req, 5, V2, error=M.FENCED_LEADER_EPOCH))
    assert_elected_leader(c, 5, V2)
    ctx.poll(c)
    _, to_leader = assert_sent_fetch_request(ctx, 5, 0, 0, dst=V2)
    ctx.advance(c, REQUEST_TIMEOUT_MS)
    _, retry = assert_sent_fetch_request(ctx, 5, 0, 0, dst=V3)
    ctx.poll(c)
    assert ctx.take(M.RaftFetchRequest) == []
    ctx.deliver(c, V2, fetch_response(to_leader, 5, V2, batch(0, 3, ["a", "b"])))
    ctx.deliver(c, V3, fetch_response(retry, 5, V2, batch(0, 3, ["a", "b"])))
    assert [e[2] for e in c.log.entries] == ["a", "b"]
