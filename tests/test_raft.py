"""KafkaRaftClient (kafkasim.control.kraft.raft) against Kafka's raft module.

Mirrored expectations (raft/src/test/java/org/apache/kafka/raft/, trunk 2024-10 for 3.x and the
KIP-996 Pre-Vote behaviour of 4.0 from PR #18240):

- KafkaRaftClientTest.testInitializeSingleMemberQuorum / testLeaderAppendSingleMemberQuorum /
  testChannelWokenUpIfLingerTimeoutReachedWithoutAppend: a lone voter elects itself after the
  election timeout; the LeaderChange record is offset 0 and commits at once; appended records
  reach the log after controller.quorum.append.linger.ms.
- testInitializeAsResignedLeaderFromStateStore,
  testRejectVotesFromSameEpochAfterResigningLeadership,
  testGrantVotesFromHigherEpochAfterResigningLeadership: a restarted leader is Resigned in its
  epoch, rejects votes in that epoch, grants a higher one.
- testInitializeAsCandidateFromStateStore: a persisted self-vote restarts as Candidate.
- testHandleValidVoteRequestAsFollower, testHandleVoteRequestAsFollowerWithElectedLeader,
  testHandleInvalidVoteRequestWithOlderEpoch, testInvalidVoteRequest,
  testLeaderIgnoreVoteRequestOnSameEpoch: vote granting rules; the vote is persisted before the
  response is sent (QuorumState.durableTransitionTo).
- testAppendFailedWithNotLeaderException.
- testLeaderImmediatelySendsDivergingEpoch: epochs 1/3/5, fetch (6, 2) -> diverging (1, 3).
- testPurgatoryFetchTimeout, testPurgatoryFetchSatisfiedByWrite,
  testPurgatoryFetchCompletedByFollowerTransition: the 500 ms long poll.
- testLeaderShouldResignLeadershipIfNotGetFetchRequestFromMajorityVoters (KAFKA-15489, 3.7),
  testLeaderShouldNotResignLeadershipIfOnlyOneVoters.
- testVoterBecomeCandidateAfterFetchTimeout (4.0: Prospective first),
  testFollowerAsObserverDoesNotBecomeCandidateAfterFetchTimeout,
  testUnattachedAsObserverDoesNotBecomeCandidateAfterElectionTimeout.
- testEndQuorumEpochSentBasedOnFetchOffset, testHandleEndQuorumRequest (position 0 runs at once).
- LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree: HW = majority end offset, only past
  the epoch start offset.
- FileQuorumStateStoreTest: quorum-state JSON, data_version 0 and 1.
- QuorumStateTest: testInitializePrimordialEpoch, testInitializeAsUnattached/Follower/Voted,
  testInitializeAsResignedCandidate/Leader, testCandidateToCandidate,
  testCannotFollowOrVoteForSelf, testAllStatesToUnattachedFailInSameEpoch,
  testFollowerToFollowerSameEpoch, testObserverCannotBecomeCandidateOrLeader,
  testHighWatermarkRetained.
- testCandidateBackoffElection and, for 4.1 (KAFKA-18345),
  testCandidateWaitsRestOfElectionTimeoutAfterElectionLoss.
- KIP-996 (4.0), KafkaRaftClientPreVoteTest: testFollowerGrantsPreVoteIfHasNotFetchedYet,
  testLeaderRejectPreVoteRequestOnSameEpoch, testHandlePreVoteRequestAsCandidate,
  testHandlePreVoteRequestAsResigned, testInvalidPreVoteRequest, testPreVoteNotSupportedByRemote,
  testProspectiveTransitionsToUnattachedOnElectionFailure,
  testProspectiveWithLeaderTransitionsToFollower, testProspectiveWithoutLeaderTransitionsToFollower;
  granted PreVotes are not persisted; a partitioned voter does not bump the epoch.
Scenario tests use tests/raft_driver.py and check the Raft safety invariants after every event.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from raft_driver import RaftDriver  # noqa: E402

from kafkasim.control.kraft import raft_messages as M  # noqa: E402
from kafkasim.control.kraft.raft import (  # noqa: E402
    KafkaRaftClient,
    LeaderState,
    NotLeaderError,
    RaftLog,
    check_raft_safety,
    parse_quorum_state_json,
)
from kafkasim.core.errors import IllegalStateException  # noqa: E402


class FakeCtx:
    """RaftClientTestContext in miniature: records sends and timers; time is set by the test."""

    def __init__(self, seed_values=()):
        self.now = 0
        self.sent: list[tuple[int, object]] = []
        self.timers: list[tuple[int, str, tuple]] = []
        self.values = list(seed_values)
        self.leader_changes: list[tuple[int, int]] = []
        self.hws: list[int] = []

    def send(self, dst, msg):
        self.sent.append((dst, msg))

    def schedule(self, delay_ms, timer, *args):
        self.timers.append((self.now + delay_ms, timer, args))

    def random_int(self, bound):
        return self.values.pop(0) % bound if self.values else 0

    def trace(self, kind, detail):
        pass

    def on_leader_change(self, leader_id, epoch):
        self.leader_changes.append((leader_id, epoch))

    def on_high_watermark(self, hw):
        self.hws.append(hw)

    def take(self, cls=None):
        out = [(d, m) for d, m in self.sent if cls is None or isinstance(m, cls)]
        self.sent = [(d, m) for d, m in self.sent if not (cls is None or isinstance(m, cls))]
        return out

    def advance(self, client, ms):
        """Move time forward and fire due poll timers (the client's poll loop)."""
        end = self.now + ms
        while True:
            due = sorted(t for t in self.timers if t[0] <= end)
            if not due:
                break
            t = due[0]
            self.timers.remove(t)
            self.now = t[0]
            client.on_timer(self, t[1], *t[2])
        self.now = end


def client(node=1, voters=(1, 2, 3), pre_vote=False, **kw):
    return KafkaRaftClient(node, voters, {}, pre_vote=pre_vote, **kw)


def leader_of(voters=(1, 2, 3), pre_vote=False, entries=()):
    """A started client made leader of epoch 1 by granted votes (testInitializeAsCandidate...)."""
    log = RaftLog(entries)
    epoch = max([e for _o, e, _r in entries], default=0)
    c = client(1, voters, pre_vote, log=log,
               quorum_state={"leader_epoch": epoch + 1, "leader_id": -1, "voted_id": 1})
    ctx = FakeCtx()
    c.start(ctx)
    assert c.state_name == "Candidate"
    for d, req in ctx.take(M.VoteRequest):
        c.handle(ctx, d, M.VoteResponse(req.correlation_id, M.NONE, -1, epoch + 1, True))
    assert c.state_name == "Leader"
    ctx.take()
    return c, ctx


# --- single-node tests (KafkaRaftClientTest) ---------------------------------------------
@pytest.mark.parametrize("pre_vote", [False, True])
def test_initialize_single_member_quorum(pre_vote):
    c = client(1, (1,), pre_vote)
    ctx = FakeCtx([300])
    c.start(ctx)
    # KafkaRaftClient.initialize: a lone voter stands for election at once (no election timeout)
    assert (c.state_name, c.epoch, c.leader_id) == ("Leader", 1, 1)
    assert c.log.entries[0] == (0, 1, M.LeaderChangeMessage(1, (1,), (1,)))
    assert c.high_watermark == 1 and ctx.hws == [1]
    assert c.append(ctx, ["a", "b"]) == 1 and c.append(ctx, ["c"]) == 3
    ctx.advance(c, 24)                       # controller.quorum.append.linger.ms = 25
    assert (c.log.end_offset, c.high_watermark) == (1, 1)
    ctx.advance(c, 1)
    assert (c.log.end_offset, c.high_watermark) == (4, 4)


def test_initialize_as_resigned_leader_rejects_same_epoch_grants_higher():
    c = client(1, (1, 2, 3), quorum_state={"leader_epoch": 2, "leader_id": 1, "voted_id": -1},
               log=RaftLog([(0, 1, "x"), (1, 2, "y")]))
    ctx = FakeCtx()
    c.start(ctx)
    assert (c.state_name, c.epoch, c.leader_id) == ("Resigned", 2, 1)
    assert {d for d, _ in ctx.take(M.EndQuorumEpochRequest)} == {2, 3}
    c.handle(ctx, 2, M.VoteRequest(7, 2, 2, 1, 2))
    (_, resp), = ctx.take(M.VoteResponse)
    assert (resp.error, resp.vote_granted, resp.leader_id) == (M.NONE, False, 1)
    c.handle(ctx, 2, M.VoteRequest(8, 3, 2, 2, 2))
    (_, resp), = ctx.take(M.VoteResponse)
    assert resp.vote_granted and (c.state_name, c.epoch, c.voted_id) == ("Unattached", 3, 2)


def test_initialize_as_candidate_from_state_store():
    c = client(1, quorum_state={"leader_epoch": 2, "leader_id": -1, "voted_id": 1})
    ctx = FakeCtx()
    c.start(ctx)
    assert (c.state_name, c.epoch, c.voted_id) == ("Candidate", 2, 1)
    assert sorted(d for d, _ in ctx.take(M.VoteRequest)) == [2, 3]


def test_vote_is_persisted_before_the_response():
    c = client(1, quorum_state={"leader_epoch": 1, "leader_id": 2, "voted_id": -1})
    ctx = FakeCtx()
    c.start(ctx)
    assert c.state_name == "Follower"
    persisted_at_send = []
    ctx.send = lambda d, m: persisted_at_send.append((m, c.persisted_quorum_state))
    c.handle(ctx, 3, M.VoteRequest(1, 2, 3, 0, 0))
    resp, stored = [p for p in persisted_at_send if isinstance(p[0], M.VoteResponse)][0]
    assert resp.vote_granted
    assert stored == {"leader_epoch": 2, "leader_id": -1, "voted_id": 3}


def test_vote_request_rules():
    c = client(1, quorum_state={"leader_epoch": 3, "leader_id": 2, "voted_id": -1},
               log=RaftLog([(0, 1, "a"), (1, 3, "b")]))
    ctx = FakeCtx()
    c.start(ctx)

    def vote(epoch, cand, last_epoch, last_offset):
        c.handle(ctx, cand, M.VoteRequest(1, epoch, cand, last_epoch, last_offset))
        return ctx.take(M.VoteResponse)[0][1]
    # testHandleVoteRequestAsFollowerWithElectedLeader: same epoch, known leader
    assert not vote(3, 3, 3, 2).vote_granted
    # testHandleInvalidVoteRequestWithOlderEpoch
    assert vote(2, 3, 1, 1).error == M.FENCED_LEADER_EPOCH
    # testInvalidVoteRequest: last epoch must be below the candidate epoch
    assert vote(4, 3, 4, 2).error == M.INVALID_REQUEST
    # a log behind ours (epoch 3, offset 2) is rejected, yet the epoch moves on
    r = vote(4, 3, 3, 1)
    assert not r.vote_granted and (c.state_name, c.epoch, c.voted_id) == ("Unattached", 4, -1)
    # up to date: granted, and only one vote per epoch
    assert vote(4, 3, 3, 2).vote_granted
    assert c.state_name == "Unattached"
    c.voted_state = True                      # before 3.9 (KAFKA-17067) this was VotedState
    assert c.state_name == "Voted"
    assert not vote(4, 2, 3, 5).vote_granted
    assert vote(4, 3, 3, 2).vote_granted          # the same candidate again


def test_leader_ignores_vote_request_on_same_epoch():
    c, ctx = leader_of()
    c.handle(ctx, 2, M.VoteRequest(1, 1, 2, 0, 5))
    (_, r), = ctx.take(M.VoteResponse)
    assert (r.vote_granted, r.leader_id, r.leader_epoch) == (False, 1, 1)


def test_append_fails_when_not_leader():
    c = client()
    ctx = FakeCtx()
    c.start(ctx)
    with pytest.raises(NotLeaderError, match="not the current leader"):
        c.append(ctx, ["x"])


def test_leader_immediately_sends_diverging_epoch():
    entries = ([(i, 1, s) for i, s in enumerate("abc")]
               + [(i + 3, 3, s) for i, s in enumerate("def")]
               + [(i + 6, 5, s) for i, s in enumerate("ghi")])
    c, ctx = leader_of(entries=entries)
    assert c.epoch == 6
    c.handle(ctx, 2, M.RaftFetchRequest(1, 2, 6, 6, 2, 500))
    (_, r), = ctx.take(M.RaftFetchResponse)
    assert (r.error, r.leader_id, r.leader_epoch) == (M.NONE, 1, 6)
    assert (r.diverging_epoch, r.diverging_end_offset) == (1, 3)


def test_purgatory_fetch_timeout_and_satisfied_by_write():
    c, ctx = leader_of()
    leo = c.log.end_offset
    c.handle(ctx, 2, M.RaftFetchRequest(1, 2, 1, leo, 1, 500))
    assert ctx.take(M.RaftFetchResponse) == []          # parked
    ctx.advance(c, 500)
    (_, r), = ctx.take(M.RaftFetchResponse)
    assert r.error == M.NONE and r.records == ()
    c.handle(ctx, 3, M.RaftFetchRequest(2, 3, 1, leo, 1, 500))
    assert ctx.take(M.RaftFetchResponse) == []
    c.append(ctx, ["x"])
    assert ctx.take(M.RaftFetchResponse) == []          # still lingering in the accumulator
    ctx.advance(c, 25)
    (_, r), = ctx.take(M.RaftFetchResponse)
    assert [e[2] for e in r.records] == ["x"]


def test_purgatory_fetch_completed_by_follower_transition():
    c, ctx = leader_of()
    c.handle(ctx, 2, M.RaftFetchRequest(1, 2, 1, c.log.end_offset, 1, 500))
    c.handle(ctx, 3, M.BeginQuorumEpochRequest(5, 2, 3))
    (_, r), = ctx.take(M.RaftFetchResponse)
    assert (r.error, r.leader_id, r.leader_epoch) == (M.NOT_LEADER_OR_FOLLOWER, 3, 2)
    assert (c.state_name, c.leader_id) == ("Follower", 3)


def test_update_high_watermark_quorum_size_three():
    """LeaderStateTest.testUpdateHighWatermarkQuorumSizeThree (leader 0, voters 0, 1, 2)."""
    s = LeaderState(0, 1, 10, (0, 1, 2), {0, 1}, 0, 2000)
    assert not s.update_local_state(15) and s.high_watermark == -1
    assert not s.update_replica_state(1, 0, 10, 15) and s.high_watermark == -1
    assert not s.update_replica_state(2, 0, 10, 15) and s.high_watermark == -1
    assert s.update_replica_state(2, 0, 15, 15) and s.high_watermark == 15
    assert not s.update_local_state(20) and s.high_watermark == 15
    assert s.update_replica_state(1, 0, 20, 20) and s.high_watermark == 20
    assert not s.update_replica_state(2, 0, 20, 20) and s.high_watermark == 20
    assert not s.update_replica_state(7, 0, 20, 20)     # observers never move the HW


def test_leader_resigns_without_fetches_from_majority():
    c, ctx = leader_of()
    ctx.advance(c, 2999)                      # 1.5 x controller.quorum.fetch.timeout.ms
    assert c.state_name == "Leader"
    ctx.advance(c, 1)
    assert (c.state_name, c.epoch) == ("Resigned", 1)
    c2, ctx2 = leader_of()
    for t in range(1000, 6001, 1000):         # fetches from one voter keep the majority
        ctx2.advance(c2, 1000)
        c2.handle(ctx2, 2, M.RaftFetchRequest(t, 2, 1, c2.log.end_offset, 1, 0))
    assert c2.state_name == "Leader"
    c3, ctx3 = client(1, (1,)), FakeCtx()
    c3.start(ctx3)
    ctx3.advance(c3, 2000)
    assert c3.state_name == "Leader"
    ctx3.advance(c3, 60_000)
    assert c3.state_name == "Leader"          # a single voter never expires
    c4, ctx4 = leader_of()
    c4.check_quorum = False                   # before 3.7 (KAFKA-15489) leaders never resigned
    ctx4.advance(c4, 60_000)
    assert c4.state_name == "Leader"


@pytest.mark.parametrize("pre_vote,expected", [(False, "Candidate"), (True, "Prospective")])
def test_voter_becomes_candidate_after_fetch_timeout(pre_vote, expected):
    c = client(1, pre_vote=pre_vote,
               quorum_state={"leader_epoch": 1, "leader_id": 2, "voted_id": -1})
    ctx = FakeCtx()
    c.start(ctx)
    ctx.advance(c, 1999)
    assert c.state_name == "Follower"
    ctx.advance(c, 1)
    assert c.state_name == expected
    assert c.epoch == (1 if pre_vote else 2)
    reqs = [m for _d, m in ctx.take(M.VoteRequest)]
    assert {r.pre_vote for r in reqs} == {pre_vote}


def test_observer_never_becomes_candidate():
    c = KafkaRaftClient(4, (1, 2, 3), {}, pre_vote=True, observer=True,
                        quorum_state={"leader_epoch": 1, "leader_id": 2, "voted_id": -1})
    ctx = FakeCtx()
    c.start(ctx)
    ctx.advance(c, 10_000)
    assert c.state_name == "Follower"
    assert ctx.take(M.VoteRequest) == []
    assert ctx.take(M.RaftFetchRequest)       # discovery fetches to any voter instead
    o = KafkaRaftClient(4, (1, 2, 3), {}, pre_vote=False, observer=True)
    octx = FakeCtx()
    o.start(octx)
    octx.advance(o, 10_000)
    assert o.state_name == "Unattached" and octx.take(M.VoteRequest) == []
    with pytest.raises(ValueError, match="observer"):
        KafkaRaftClient(1, (1, 2, 3), {}, pre_vote=True, observer=True)


def test_end_quorum_epoch_sent_based_on_fetch_offset():
    c, ctx = leader_of()
    c.handle(ctx, 3, M.RaftFetchRequest(1, 3, 1, 1, 1, 0))    # lagging
    c.append(ctx, ["foo", "bar"])
    ctx.advance(c, 25)
    c.handle(ctx, 2, M.RaftFetchRequest(2, 2, 1, 3, 1, 0))    # close
    ctx.take()
    c.resign(ctx)
    assert c.state_name == "Resigned"
    reqs = ctx.take(M.EndQuorumEpochRequest)
    assert {m.preferred_successors for _d, m in reqs} == {(2, 3)}


def test_handle_end_quorum_request_position_sets_backoff():
    # strictExponentialElectionBackoffMs: position 0 at once, else (max >> (n - 1)) << (pos - 1)
    for me, succ, expected_wait in [(2, (2, 3), 0), (3, (2, 3), 500)]:
        c = client(me, quorum_state={"leader_epoch": 2, "leader_id": 1, "voted_id": -1})
        ctx = FakeCtx()
        c.start(ctx)
        c.handle(ctx, 1, M.EndQuorumEpochRequest(1, 2, 1, succ))
        (_, r), = ctx.take(M.EndQuorumEpochResponse)
        assert r.error == M.NONE
        ctx.advance(c, max(expected_wait - 1, 0))
        assert c.state_name == ("Candidate" if expected_wait == 0 else "Follower")
        ctx.advance(c, 1)
        assert c.state_name == "Candidate" and c.epoch == 3


def test_pre_vote_rules():
    c = client(1, pre_vote=True, quorum_state={"leader_epoch": 2, "leader_id": 2, "voted_id": -1})
    ctx = FakeCtx()
    c.start(ctx)
    assert c.state_name == "Follower"
    stored = c.persisted_quorum_state
    c.handle(ctx, 3, M.VoteRequest(1, 2, 3, 0, 0, pre_vote=True))
    (_, r), = ctx.take(M.VoteResponse)
    assert r.vote_granted and r.leader_id == 2           # not yet fetched from the leader
    assert c.persisted_quorum_state == stored            # PreVotes are not persisted
    (_, fetch), = ctx.take(M.RaftFetchRequest)
    c.handle(ctx, 2, M.RaftFetchResponse(fetch.correlation_id, M.NONE, 2, 2, 0))
    c.handle(ctx, 3, M.VoteRequest(2, 2, 3, 0, 0, pre_vote=True))
    (_, r), = ctx.take(M.VoteResponse)
    assert not r.vote_granted and r.leader_id == 2
    ld, lctx = leader_of(pre_vote=True)
    ld.handle(lctx, 2, M.VoteRequest(3, 1, 2, 1, 99, pre_vote=True))
    (_, r), = lctx.take(M.VoteResponse)
    assert not r.vote_granted                            # a leader rejects every PreVote


def test_quorum_state_json_versions():
    c = client(2, quorum_state={"leader_epoch": 3, "leader_id": 1, "voted_id": -1})
    assert json.loads(c.quorum_state_json()) == {
        "clusterId": "", "leaderId": 1, "leaderEpoch": 3, "votedId": -1, "appliedOffset": 0,
        "currentVoters": [{"voterId": 1}, {"voterId": 2}, {"voterId": 3}], "data_version": 0}
    assert c.quorum_state_json().startswith('{"clusterId":"","leaderId":1,')
    # kraft.version 1 (KIP-853): data_version 1, no voters; the file as read back has no
    # directory id for the vote (a remote candidate's, as kafkasim keeps it: ZERO_UUID)
    c1 = client(2, quorum_state={"leader_epoch": 3, "leader_id": -1, "voted_id": 1},
                kraft_version=1)
    assert c1.quorum_state_json() == ('{"leaderId":-1,"leaderEpoch":3,"votedId":1,'
                                      '"votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA",'
                                      '"data_version":1}')
    for text in (c.quorum_state_json(), c1.quorum_state_json()):   # round trip
        assert parse_quorum_state_json(text) == client(
            2, quorum_state=parse_quorum_state_json(text)).persisted_quorum_state
    assert parse_quorum_state_json(c1.quorum_state_json())["voted_id"] == 1
    with pytest.raises(IllegalStateException, match=r"data_version \(2\) is not within"):
        parse_quorum_state_json('{"leaderId":9990,"leaderEpoch":3012,'
                                                '"votedId":-1,"data_version":2}')


def test_raft_log_end_offset_for_epoch_and_truncation():
    log = RaftLog([(0, 1, "a"), (1, 1, "b"), (2, 3, "c"), (3, 5, "d")])
    assert log.end_offset_for_epoch(0) == (0, 0)
    assert log.end_offset_for_epoch(1) == (2, 1)
    assert log.end_offset_for_epoch(2) == (2, 1)
    assert log.end_offset_for_epoch(5) == (4, 5)
    assert log.validate_offset_and_epoch(2, 1) == ("VALID", (2, 1))
    assert log.validate_offset_and_epoch(3, 1) == ("DIVERGING", (2, 1))
    assert log.truncate_to_end_offset(3, 3) == 3 and log.end_offset == 3
    assert log.truncate_to_end_offset(5, 2) == 2 and log.last_fetched_epoch == 1


# --- scenarios with the driver -------------------------------------------------------------------
def committed_records(d, n):
    c = d.nodes[n]
    return [e[2] for e in c.log.entries[:c.high_watermark] if isinstance(e[2], str)]


@pytest.mark.parametrize("voters", [(1, 2, 3), (1, 2, 3, 4, 5)])
@pytest.mark.parametrize("pre_vote", [False, True])
def test_election_and_replication(voters, pre_vote):
    d = RaftDriver(voters, seed=7, pre_vote=pre_vote).start()
    ld = d.wait_for_leader()
    assert ld is not None and len(d.leaders()) == 1
    epoch = d.nodes[ld].epoch
    d.append(ld, ["a", "b", "c"])
    assert d.wait_for(lambda: all(committed_records(d, n) == ["a", "b", "c"] for n in voters))
    assert all(d.nodes[n].epoch == epoch and d.nodes[n].leader_id == ld for n in voters)
    assert not check_raft_safety(d.nodes.values())


@pytest.mark.parametrize("pre_vote", [False, True])
def test_leader_crash_and_failover(pre_vote):
    d = RaftDriver((1, 2, 3), seed=3, pre_vote=pre_vote).start()
    old = d.wait_for_leader()
    d.append(old, ["x"])
    d.run_for(200)
    old_epoch = d.nodes[old].epoch
    d.crash(old)
    new = d.wait_for_leader(among=[n for n in (1, 2, 3) if n != old])
    assert new != old and d.nodes[new].epoch > old_epoch
    d.append(new, ["y"])
    d.restart(old)
    assert d.nodes[old].state_name == "Resigned"   # QuorumState.initialize: leader -> Resigned
    assert d.wait_for(lambda: committed_records(d, old) == ["x", "y"])
    assert d.nodes[old].state_name == "Follower" and d.nodes[old].leader_id == new


@pytest.mark.parametrize("pre_vote", [False, True])
def test_partitioned_leader_cannot_commit_and_is_truncated_on_heal(pre_vote):
    d = RaftDriver((1, 2, 3), seed=11, pre_vote=pre_vote).start()
    old = d.wait_for_leader()
    d.append(old, ["committed"])
    assert d.wait_for(lambda: all(committed_records(d, n) == ["committed"] for n in (1, 2, 3)))
    hw = d.nodes[old].high_watermark
    rest = [n for n in (1, 2, 3) if n != old]
    d.partition([old], rest)
    d.append(old, ["lost-1", "lost-2"])
    d.run_for(1000)
    assert d.nodes[old].high_watermark == hw          # the minority leader cannot commit
    new = d.wait_for_leader(among=rest)
    assert new in rest and d.nodes[new].epoch > d.nodes[old].epoch
    d.append(new, ["kept"])
    d.run_for(3000)
    assert d.nodes[old].state_name != "Leader"          # check quorum: it resigned
    d.heal()
    assert d.wait_for(lambda: committed_records(d, old) == ["committed", "kept"])
    assert all("lost-1" not in [e[2] for e in d.nodes[n].log.entries] for n in (1, 2, 3))
    assert any(k == "raft_truncate" and n == old for _t, n, k, _x in d.trace)


def test_pre_vote_keeps_a_rejoining_partitioned_voter_from_bumping_the_epoch():
    results = {}
    for pre_vote in (False, True):
        d = RaftDriver((1, 2, 3), seed=5, pre_vote=pre_vote).start()
        ld = d.wait_for_leader()
        d.run_for(500)
        epoch = d.nodes[ld].epoch
        lone = [n for n in (1, 2, 3) if n != ld][0]
        d.partition([lone], [n for n in (1, 2, 3) if n != lone])
        d.run_for(10_000)
        d.append(ld, ["while-partitioned"])
        d.run_for(100)
        lone_epoch = d.nodes[lone].epoch
        d.heal()
        d.run_for(5000)
        results[pre_vote] = (lone_epoch - epoch, d.leader() == ld,
                             d.nodes[d.leader()].epoch - epoch)
        assert committed_records(d, lone) == ["while-partitioned"]
    bumped, same_leader, cluster_bump = results[False]
    assert bumped > 0 and cluster_bump > 0            # 3.x: the rejoining voter disrupts
    assert results[True] == (0, True, 0)              # 4.0: no epoch bump, leader kept


@pytest.mark.parametrize("pre_vote", [False, True])
def test_quorum_loss_no_commit_no_leader(pre_vote):
    d = RaftDriver((1, 2, 3), seed=2, pre_vote=pre_vote).start()
    ld = d.wait_for_leader()
    d.append(ld, ["a"])
    assert d.wait_for(lambda: committed_records(d, ld) == ["a"])
    hw = d.nodes[ld].high_watermark
    for n in (1, 2, 3):
        if n != ld:
            d.crash(n)
    d.append(ld, ["b"])
    d.run_for(20_000)
    assert d.nodes[ld].high_watermark in (hw, -1)
    assert committed_records(d, ld) in (["a"], [])
    assert d.leaders() == []                           # resigned by check quorum, never re-elected
    if pre_vote:
        assert d.nodes[ld].epoch == max(d.nodes[ld].elected_epochs) + 1   # Resigned -> epoch + 1


def test_observers_replicate_but_do_not_count():
    d = RaftDriver((1, 2, 3), observers=(4, 5), seed=9, pre_vote=True).start()
    ld = d.wait_for_leader()
    d.append(ld, ["a"])
    assert d.wait_for(lambda: committed_records(d, 4) == ["a"] == committed_records(d, 5))
    described = d.nodes[ld].describe_quorum(d.now)
    assert [o["replica_id"] for o in described["observers"]] == [4, 5]
    assert [v["replica_id"] for v in described["current_voters"]] == [1, 2, 3]
    assert all(not d.nodes[o].elected_epochs for o in (4, 5))
    hw = d.nodes[ld].high_watermark
    followers = [n for n in (1, 2, 3) if n != ld]
    d.crash(followers[0])
    d.crash(followers[1])
    d.append(ld, ["b"])
    d.run_for(1000)
    assert d.nodes[4].log.end_offset == d.nodes[ld].log.end_offset   # the observer has it ...
    assert d.nodes[ld].high_watermark == hw                            # ... but it is not counted


def test_restart_from_persisted_state_in_a_new_object():
    d = RaftDriver((1, 2, 3), seed=4, pre_vote=True).start()
    ld = d.wait_for_leader()
    d.append(ld, ["a"])
    d.run_for(500)
    f = [n for n in (1, 2, 3) if n != ld][0]
    old = d.nodes[f]
    d.crash(f)
    d.nodes[f] = KafkaRaftClient(f, (1, 2, 3), {}, pre_vote=True, log=old.log,
                                 quorum_state=old.persisted_quorum_state)
    d.restart(f)
    assert d.nodes[f].state_name == "Follower" and d.nodes[f].leader_id == ld
    assert d.wait_for(lambda: committed_records(d, f) == ["a"])


def test_determinism_same_seed_same_trace():
    def run(seed):
        d = RaftDriver((1, 2, 3), observers=(4,), seed=seed, pre_vote=True).start()
        ld = d.wait_for_leader()
        d.append(ld, ["a"])
        d.crash(ld)
        d.run_for(5000)
        return repr(d.trace)
    assert run(21) == run(21)


def test_config_keys_and_validation():
    c = KafkaRaftClient(1, (1, 2, 3), {"controller.quorum.fetch.timeout.ms": 500}, pre_vote=True)
    assert (c.fetch_timeout_ms, c.election_timeout_ms, c.request_timeout_ms,
            c.retry_backoff_ms, c.election_backoff_max_ms, c.append_linger_ms) == (
        500, 1000, 2000, 20, 1000, 25)
    with pytest.raises(ValueError, match="controller.quorum.election.timeout.ms"):
        KafkaRaftClient(1, (1,), {"controller.quorum.election.timeout.ms": -1}, pre_vote=True)


def test_timers_of_an_earlier_run_are_ignored_after_restart():
    """start() on the same object is a crash-restart: a fetch_expire or poll timer scheduled
    before it must not complete anything of the new run (generation / sequence numbers)."""
    c, ctx = leader_of(voters=(1, 2, 3))
    c.handle(ctx, 2, M.RaftFetchRequest(1, 2, 1, c.log.end_offset, 1, 500))
    old_timers = list(ctx.timers)
    c.start(ctx)                                   # restarts Resigned in epoch 1
    assert c.state_name == "Resigned"
    while c.state_name == "Resigned":              # 3.x: Resigned -> Candidate of epoch 2
        ctx.advance(c, 1)
    for d, req in ctx.take(M.VoteRequest):
        c.handle(ctx, d, M.VoteResponse(req.correlation_id, M.NONE, -1, 2, True))
    assert (c.state_name, c.epoch) == ("Leader", 2)
    ctx.take()
    c.handle(ctx, 3, M.RaftFetchRequest(9, 3, 2, c.log.end_offset, 2, 500))   # parked again
    for _at, name, args in old_timers:
        c.on_timer(ctx, name, *args)
    assert ctx.take(M.RaftFetchResponse) == []


@pytest.mark.parametrize("waits", [False, True])
def test_candidate_backoff_after_election_loss(waits):
    """KafkaRaftClientTest.testCandidateBackoffElection (binaryExponentialElectionBackoffMs:
    100 x nextInt(2 << (retries - 1)), at most election.backoff.max.ms) vs. KAFKA-18345 (4.1,
    testCandidateWaitsRestOfElectionTimeoutAfterElectionLoss): wait out the election timeout."""
    c = client(1, quorum_state={"leader_epoch": 2, "leader_id": -1, "voted_id": 1},
               election_loss_waits_timeout=waits)
    ctx = FakeCtx([500, 1])           # election timeout 1000 + 500; backoff 100 x nextInt(2) = 100
    c.start(ctx)
    ctx.now = 200
    for d, req in ctx.take(M.VoteRequest):
        c.handle(ctx, d, M.VoteResponse(req.correlation_id, M.NONE, -1, 2, False))
    assert (c.state_name, c.epoch) == ("Candidate", 2)
    wait = 1300 if waits else 100
    ctx.advance(c, wait - 1)
    assert c.epoch == 2
    ctx.advance(c, 1)
    assert (c.state_name, c.epoch) == ("Candidate", 3)


RULES_BY_RELEASE = {   # the client options per Kafka release line
    "3.6": {"pre_vote": False, "check_quorum": False, "begin_quorum_epoch_heartbeat": False,
            "voted_state": True},
    "3.9": {"pre_vote": False},
    "4.0": {"pre_vote": True},
    "4.1": {"pre_vote": True, "fast_hwm_replication": True, "election_loss_waits_timeout": True},
}


@pytest.mark.parametrize("seed", [1, 2, 3])
@pytest.mark.parametrize("release", sorted(RULES_BY_RELEASE))
def test_random_crashes_and_partitions_stay_safe(seed, release):
    """Crashes, restarts, partitions and appends at random; the driver checks the safety
    invariants after every event; after healing every node converges on one leader's log.
    Run with the rules of each release line (RULES_BY_RELEASE)."""
    import random
    r = random.Random(seed)
    nodes = (1, 2, 3, 4, 5) if seed == 3 else (1, 2, 3)
    d = RaftDriver(nodes, observers=(9,), seed=seed, **RULES_BY_RELEASE[release]).start()
    every = list(nodes) + [9]
    for i in range(40):
        x = r.random()
        if x < 0.15 and len(d.up) > 2:
            d.crash(r.choice(sorted(d.up)))
        elif x < 0.35:
            for n in every:
                if n not in d.up:
                    d.restart(n)
                    break
        elif x < 0.45:
            g = every[:]
            r.shuffle(g)
            cut = r.randint(1, len(g) - 1)
            d.heal()
            d.partition(g[:cut], g[cut:])
        elif x < 0.6:
            d.heal()
        elif d.leader() is not None:
            d.append(d.leader(), [f"r{i}"])
        d.run_for(r.choice([10, 100, 500, 1500, 3000]))
    d.heal()
    for n in every:
        if n not in d.up:
            d.restart(n)
    ld = d.wait_for_leader()
    d.append(ld, ["final"])
    d.run_for(5000)
    ld = d.leader()
    assert {d.nodes[n].high_watermark for n in every} == {d.nodes[ld].log.end_offset}
    assert all(d.nodes[n].log.entries == d.nodes[ld].log.entries for n in every)


# --- QuorumStateTest ------------------------------------------------------------------------------
@pytest.mark.parametrize("stored,log,expected", [
    # testInitializePrimordialEpoch
    (None, (), ("Unattached", 0, -1, -1)),
    # testInitializeAsUnattached / testInitializeAsFollower / testInitializeAsVoted
    ({"leader_epoch": 5, "leader_id": -1, "voted_id": -1}, (), ("Unattached", 5, -1, -1)),
    ({"leader_epoch": 5, "leader_id": 2, "voted_id": -1}, (), ("Follower", 5, 2, -1)),
    ({"leader_epoch": 5, "leader_id": -1, "voted_id": 2}, (), ("Unattached", 5, -1, 2)),
    # testInitializeAsResignedCandidate / testInitializeAsResignedLeader
    ({"leader_epoch": 5, "leader_id": -1, "voted_id": 1}, (), ("Candidate", 5, -1, 1)),
    ({"leader_epoch": 5, "leader_id": 1, "voted_id": -1}, (), ("Resigned", 5, 1, -1)),
    # a quorum-state epoch below the log's last epoch: Unattached in the log's epoch
    ({"leader_epoch": 2, "leader_id": 2, "voted_id": -1}, ((0, 4, "x"),),
     ("Unattached", 4, -1, -1)),
])
def test_quorum_state_initialize(stored, log, expected):
    c = client(1, quorum_state=stored, log=RaftLog(log))
    ctx = FakeCtx()
    c.start(ctx)
    assert (c.state_name, c.epoch, c.leader_id, c.voted_id) == expected
    assert c.persisted_quorum_state == {"leader_epoch": expected[1], "leader_id": expected[2],
                                        "voted_id": expected[3]}


def test_quorum_state_transitions():
    c = client(1)
    ctx = FakeCtx()
    c.start(ctx)
    c._to_candidate(ctx)
    c._to_candidate(ctx)                       # testCandidateToCandidate: retries grow
    assert (c.epoch, c.state.retries) == (2, 2)
    with pytest.raises(RuntimeError, match="matches the local node.id"):
        c._to_follower(ctx, 3, 1)              # testCannotFollowOrVoteForSelf
    with pytest.raises(RuntimeError, match="Cannot transition to Unattached"):
        c._to_unattached(ctx, 2)               # testAllStatesToUnattachedFailInSameEpoch
    c._to_follower(ctx, 2, 3)                  # testCandidateToFollower
    with pytest.raises(RuntimeError, match="Cannot transition to Follower"):
        c._to_follower(ctx, 2, 2)              # testFollowerToFollowerSameEpoch
    with pytest.raises(RuntimeError, match="Cannot transition to Follower"):
        c._to_follower(ctx, 1, 2)              # testFollowerToAnyStateLowerEpoch
    o = KafkaRaftClient(4, (1, 2, 3), {}, pre_vote=False, observer=True)
    o.start(ctx)
    with pytest.raises(RuntimeError, match="Candidate"):
        o._to_candidate(ctx)                   # testObserverCannotBecomeCandidateOrLeader
    p = client(1, pre_vote=True)
    p.start(ctx)
    with pytest.raises(RuntimeError, match="Only Prospective"):
        p._to_candidate(ctx)                   # 4.0: only Prospective becomes Candidate


def test_high_watermark_retained_except_by_a_new_leader():
    """QuorumStateTest.testHighWatermarkRetained: HW survives Follower -> Unattached -> voted ->
    Candidate, but a new Leader starts without one (transitionToLeader)."""
    c = client(1, quorum_state={"leader_epoch": 5, "leader_id": 2, "voted_id": -1},
               log=RaftLog([(i, 5, "r") for i in range(12)]))
    ctx = FakeCtx()
    c.start(ctx)
    (_, fetch), = ctx.take(M.RaftFetchRequest)
    c.handle(ctx, 2, M.RaftFetchResponse(fetch.correlation_id, M.NONE, 2, 5, 10))
    assert c.high_watermark == 10
    c._to_unattached(ctx, 6)
    assert c.high_watermark == 10
    c.handle(ctx, 3, M.VoteRequest(1, 7, 3, 5, 12))
    assert (c.state_name, c.voted_id, c.high_watermark) == ("Unattached", 3, 10)
    c._to_candidate(ctx)
    assert c.high_watermark == 10
    ctx.take()
    c._poll(ctx)                               # the poll loop sends the Vote requests
    for d, req in ctx.take(M.VoteRequest):
        c.handle(ctx, d, M.VoteResponse(req.correlation_id, M.NONE, -1, 8, True))
    assert c.state_name == "Leader" and c.high_watermark == -1


@pytest.mark.parametrize("fast", [False, True])
def test_high_watermark_reaches_parked_followers(fast):
    """KAFKA-14145 (4.1, "Faster KRaft HWM replication"): a fetch carries the follower's high
    watermark; the leader answers at once when its own is higher and completes the parked
    fetches when it moves. Before, a caught-up follower learnt a new HW only with new data or
    when its 500 ms long poll expired (testPurgatoryFetchTimeout)."""
    c, ctx = leader_of(voters=(1, 2, 3, 4, 5))
    c.fast_hwm_replication = fast
    leo = c.log.end_offset                                   # the LeaderChange record: 1
    hw_known = -1 if fast else 2**63 - 1
    c.handle(ctx, 3, M.RaftFetchRequest(1, 3, 1, leo, 1, 500, hw_known))   # parks
    assert ctx.take(M.RaftFetchResponse) == []
    c.handle(ctx, 2, M.RaftFetchRequest(2, 2, 1, leo, 1, 500, hw_known))   # 3 of 5: HW -> 1
    assert c.high_watermark == 1
    sent = {d: m for d, m in ctx.take(M.RaftFetchResponse)}
    if fast:
        assert sent[3].high_watermark == 1 and sent[2].high_watermark == 1
    else:
        assert sent == {}                                # both wait for data or the timeout
        ctx.advance(c, 500)
        sent = {d: m.high_watermark for d, m in ctx.take(M.RaftFetchResponse)}
        assert sent == {3: -1, 2: 1}                     # the responses built when they parked
    c.handle(ctx, 3, M.RaftFetchRequest(3, 3, 1, leo, 1, 500, -1 if fast else 2**63 - 1))
    assert bool(ctx.take(M.RaftFetchResponse)) == fast      # HW behind: answered at once


# --- KafkaRaftClientPreVoteTest (4.0+) ------------------------------------------------
def pre_vote(c, ctx, epoch, cand, last_epoch, last_offset):
    c.handle(ctx, cand, M.VoteRequest(99, epoch, cand, last_epoch, last_offset, pre_vote=True))
    (_, r), = ctx.take(M.VoteResponse)
    return r.error, r.leader_epoch, r.leader_id, r.vote_granted


def test_pre_vote_as_candidate_resigned_and_invalid():
    c = client(1, (1, 2), pre_vote=True,
               quorum_state={"leader_epoch": 2, "leader_id": -1, "voted_id": 1})
    ctx = FakeCtx()
    c.start(ctx)
    assert c.state_name == "Candidate"
    # testHandlePreVoteRequestAsCandidate: granted in the same epoch, no state change
    assert pre_vote(c, ctx, 2, 2, 2, 1) == (M.NONE, 2, -1, True)
    assert (c.state_name, c.persisted_quorum_state["voted_id"]) == ("Candidate", 1)
    # a higher epoch: Unattached in it, then granted
    assert pre_vote(c, ctx, 3, 2, 3, 2) == (M.NONE, 3, -1, True)
    assert (c.state_name, c.voted_id) == ("Unattached", -1)
    # testInvalidPreVoteRequest: lastEpoch > replicaEpoch; negative offset
    assert pre_vote(c, ctx, 3, 2, 4, 0)[0] == M.INVALID_REQUEST
    assert pre_vote(c, ctx, 3, 2, 0, -5)[0] == M.INVALID_REQUEST
    # testHandlePreVoteRequestAsResigned: granted in the same epoch to an up-to-date log
    r, rctx = leader_of(voters=(1, 2), pre_vote=True)
    r.resign(rctx)
    assert r.state_name == "Resigned"
    assert pre_vote(r, rctx, 1, 2, 1, r.log.end_offset) == (M.NONE, 1, 1, True)
    assert pre_vote(r, rctx, 1, 2, 0, 0) == (M.NONE, 1, 1, False)     # not up to date


def test_pre_vote_not_supported_by_remote():
    """testPreVoteNotSupportedByRemote: UNSUPPORTED_VERSION from a voter makes the Prospective a
    Candidate at once; the remaining PreVote responses are then ignored."""
    c = client(1, pre_vote=True, quorum_state={"leader_epoch": 5, "leader_id": -1, "voted_id": -1})
    ctx = FakeCtx()
    c.start(ctx)
    ctx.advance(c, 1000)
    assert (c.state_name, c.epoch) == ("Prospective", 5)
    reqs = ctx.take(M.VoteRequest)
    assert [m.pre_vote for _d, m in reqs] == [True, True]
    (d0, q0), (d1, q1) = reqs
    c.handle(ctx, d0, M.VoteResponse(q0.correlation_id, "UNSUPPORTED_VERSION", -1, -1, False))
    assert (c.state_name, c.epoch) == ("Candidate", 6)
    c.handle(ctx, d1, M.VoteResponse(q1.correlation_id, M.NONE, -1, 5, True))
    assert (c.state_name, c.epoch) == ("Candidate", 6)
    # a 3.x voter (pre_vote=False) answers a PreVote with UNSUPPORTED_VERSION
    old = client(2)
    octx = FakeCtx()
    old.start(octx)
    old.handle(octx, 1, M.VoteRequest(1, 0, 1, 0, 0, pre_vote=True))
    (_, r), = octx.take(M.VoteResponse)
    assert r.error == "UNSUPPORTED_VERSION"


def test_prospective_after_lost_or_timed_out_pre_vote():
    """testProspectiveTransitionsToUnattachedOnElectionFailure,
    testProspectiveWithLeaderTransitionsToFollower,
    testProspectiveWithoutLeaderTransitionsToFollower."""
    c = client(1, (1, 2), pre_vote=True,
               quorum_state={"leader_epoch": 5, "leader_id": -1, "voted_id": -1})
    ctx = FakeCtx([0, 500])
    c.start(ctx)                                   # election timeout 1000
    ctx.advance(c, 1000)
    assert c.state_name == "Prospective"           # its PreVote round times out after 1500
    ctx.take()
    ctx.advance(c, 1499)
    assert c.state_name == "Prospective"
    ctx.advance(c, 1)                              # -> Unattached, whose timer has run out too
    assert c.state_name == "Prospective" and c.epoch == 5
    (_, q), = ctx.take(M.VoteRequest)
    c.handle(ctx, 2, M.VoteResponse(q.correlation_id, M.NONE, -1, 5, False))
    assert (c.state_name, c.epoch) == ("Unattached", 5)   # lost: wait a fresh election timeout
    f = client(1, pre_vote=True, quorum_state={"leader_epoch": 5, "leader_id": 2, "voted_id": -1})
    fctx = FakeCtx()
    f.start(fctx)
    fctx.advance(f, 2000)
    assert (f.state_name, f.leader_id) == ("Prospective", 2)
    for d, q in fctx.take(M.VoteRequest):
        f.handle(fctx, d, M.VoteResponse(q.correlation_id, M.NONE, -1, 5, False))
    assert (f.state_name, f.leader_id, f.epoch) == ("Follower", 2, 5)
    g = client(1, pre_vote=True, quorum_state={"leader_epoch": 5, "leader_id": -1, "voted_id": -1})
    gctx = FakeCtx()
    g.start(gctx)
    gctx.advance(g, 1000)
    (d, q), _ = gctx.take(M.VoteRequest)
    g.handle(gctx, d, M.VoteResponse(q.correlation_id, M.NONE, 3, 5, True))
    assert (g.state_name, g.leader_id, g.epoch) == ("Follower", 3, 5)


@pytest.mark.parametrize("heartbeat", [True, False])
def test_begin_quorum_epoch_heartbeat(heartbeat):
    """KafkaRaftClientTest.testBeginQuorumEpochHeartbeat (KAFKA-16536, 3.9): the leader re-sends
    BeginQuorumEpoch to every voter each fetch.timeout / 2; before 3.9 only to the voters that
    have not acknowledged it (LeaderState.nonAcknowledgingVoters)."""
    c, ctx = leader_of()
    c.begin_quorum_epoch_heartbeat = heartbeat
    corr = c._requests.connections[2].inflight
    c.handle(ctx, 2, M.BeginQuorumEpochResponse(corr, M.NONE, 1, 1))   # 2 acknowledges
    ctx.advance(c, 1000)
    assert sorted(d for d, _ in ctx.take(M.BeginQuorumEpochRequest)) == ([2] if heartbeat else [])
    ctx.advance(c, 1000)                     # the request to 3 timed out (request.timeout.ms)
    assert sorted(d for d, _ in ctx.take(M.BeginQuorumEpochRequest)) == [3]


def _observer_following(leader: int, epoch: int):
    c = KafkaRaftClient(4, (1, 2, 3), {}, pre_vote=True, observer=True,
                        quorum_state={"leader_epoch": epoch, "leader_id": leader, "voted_id": -1})
    ctx = FakeCtx()
    c.start(ctx)
    (dst, fetch), = ctx.take(M.RaftFetchRequest)
    assert dst == leader and c.state_name == "Follower"
    return c, ctx, fetch


def test_observer_leader_rediscovery_after_broker_not_available_error():
    """KafkaRaftClientTest.testObserverLeaderRediscoveryAfterBrokerNotAvailableError: the
    Fetch to the leader fails with its connection (KafkaNetworkChannel: BROKER_NOT_AVAILABLE),
    the leader's connection backs off, so the next Fetch goes to another voter at once; a
    voter's NOT_LEADER_OR_FOLLOWER answer naming the leader keeps it."""
    c, ctx, fetch = _observer_following(2, 5)
    c.on_disconnect(ctx, 2, fetch.correlation_id)
    (dst, fetch2), = ctx.take(M.RaftFetchRequest)
    assert dst != 2 and dst in (1, 3) and fetch2.current_leader_epoch == 5
    c.handle(ctx, dst, M.RaftFetchResponse(fetch2.correlation_id, M.NOT_LEADER_OR_FOLLOWER, 2,
                                           5, -1))
    assert (c.state_name, c.leader_id, c.epoch) == ("Follower", 2, 5)
    # a disconnect of a request no longer expected changes nothing
    before = c._requests.connections.get(dst)
    c.on_disconnect(ctx, dst, fetch2.correlation_id)
    assert c._requests.connections.get(dst) is before


def test_observer_learns_the_new_leader_from_a_voter_after_its_leader_died():
    """A dead leader: the in-flight Fetch fails with the connection (on_peer_gone), each later
    one too, and the voters answered in between name the new leader once it is elected
    (NOT_LEADER_OR_FOLLOWER/FENCED_LEADER_EPOCH with the larger epoch: maybeTransition), long
    before controller.quorum.request.timeout.ms (2 s) would have expired."""
    c, ctx, _fetch = _observer_following(2, 5)
    c.on_peer_gone(ctx, 2)
    (dst, fetch2), = ctx.take(M.RaftFetchRequest)
    assert dst in (1, 3)
    c.handle(ctx, dst, M.RaftFetchResponse(fetch2.correlation_id, M.NOT_LEADER_OR_FOLLOWER, 2,
                                           5, -1))
    assert c.leader_id == 2          # nobody knows better yet
    ctx.now += 30                    # the new leader 3 is elected in epoch 6
    c.on_timer(ctx, "poll", c._poll_gen)
    sent = ctx.take(M.RaftFetchRequest)
    assert sent, "the observer stopped asking"
    dst, fetch3 = sent[-1]
    if dst == 2:                     # the dead leader again, once its back-off is over
        c.on_disconnect(ctx, 2, fetch3.correlation_id)
        dst, fetch3 = ctx.take(M.RaftFetchRequest)[-1]
    assert dst in (1, 3)
    c.handle(ctx, dst, M.RaftFetchResponse(fetch3.correlation_id, M.FENCED_LEADER_EPOCH, 3, 6,
                                           -1))
    assert (c.state_name, c.leader_id, c.epoch) == ("Follower", 3, 6)
    assert ctx.leader_changes[-1] == (3, 6)
    assert ctx.now < 2000


def _end_offset_for_epoch_by_scan(entries, epoch):
    """ReplicatedLog.endOffsetForEpoch read off the records themselves (the reference)."""
    lower, prev = 0, None
    for offset, e, _ in entries:
        if e != prev:
            if e > epoch:
                return offset, lower
            lower = prev = e
    return len(entries), (entries[-1][1] if entries else 0)


def test_raft_log_epoch_cache_answers_as_the_records_do():
    """RaftLog.epochs, the leader epoch cache end_offset_for_epoch reads, follows every append,
    truncation and restore: its answers are those of a scan over the records (seeded walk)."""
    import pickle
    import random

    rng = random.Random(20261205)
    for case in range(200):
        log, epoch = RaftLog(), 1
        for _ in range(rng.randrange(1, 30)):
            step = rng.random()
            if step < 0.5:
                log.append_as_leader(["r"] * rng.randrange(1, 4), epoch)
            elif step < 0.7:
                epoch += rng.randrange(1, 3)
            elif step < 0.85:
                log.truncate_to(rng.randrange(0, log.end_offset + 1))
            else:
                follower = RaftLog(log.entries[:rng.randrange(0, log.end_offset + 1)])
                follower.append_as_follower(log.entries[follower.end_offset:])
                log = pickle.loads(pickle.dumps(follower))
            for asked in range(0, epoch + 2):
                assert log.end_offset_for_epoch(asked) == \
                    _end_offset_for_epoch_by_scan(log.entries, asked), (case, asked, log.entries)


class _Node:
    """What check_raft_safety reads of a KafkaRaftClient, for the seeded walks below."""

    class _State:
        def __init__(self, name, epoch):
            self.name, self.epoch = name, epoch

    def __init__(self, node_id):
        self.node_id, self.elected_epochs, self.committed = node_id, [], {}
        self.leader_hw_history, self.log, self.state = [], RaftLog(), None


def _raft_walk(rng, nodes, honest: bool):
    """One step of a quorum's history: honest steps keep Raft's rules; the others may elect
    twice in an epoch, commit without a majority or with another epoch, lose committed
    entries to a truncation, or let a leader's HW fall."""
    leader = next((n for n in nodes if n.state is not None and n.state.name == "Leader"), None)
    step = rng.random()
    top = max((e for n in nodes for e in n.elected_epochs), default=0)
    if leader is None or step < 0.08:
        n = rng.choice(nodes)
        epoch = top + 1 if honest or rng.random() < 0.7 else rng.randrange(1, top + 2)
        for m in nodes:
            m.state = _Node._State("Follower", epoch)
        if honest:   # the winner holds everything committed (Leader Completeness)
            n.log = RaftLog(max(nodes, key=lambda m: m.log.end_offset).log.entries)
        n.elected_epochs.append(epoch)
        n.state = _Node._State("Leader", epoch)
    elif step < 0.4:
        leader.log.append_as_leader(["r"] * rng.randrange(1, 3), leader.state.epoch)
    elif step < 0.6:
        f = rng.choice([m for m in nodes if m is not leader])
        if honest or rng.random() < 0.5:
            f.log = RaftLog(leader.log.entries)   # a fetch: truncate to the leader, append
        else:
            f.log.truncate_to(rng.randrange(0, f.log.end_offset + 1))
    elif step < 0.85:
        n = rng.choice(nodes)
        off = len(n.committed)
        entry = leader.log.entries[off] if off < leader.log.end_offset else None
        holders = sum(1 for m in nodes if entry is not None and off < m.log.end_offset and
                      m.log.entries[off] == entry)
        if entry is not None and off < n.log.end_offset and n.log.entries[off] == entry and \
                (holders > len(nodes) // 2 or not honest):
            epoch = entry[1] if honest or rng.random() < 0.8 else 99
            n.committed[off] = (epoch, n.state.epoch)
    else:
        mine = [hw for e, hw in leader.leader_hw_history if e == leader.state.epoch]
        before = [hw for m in nodes for e, hw in m.leader_hw_history if e < leader.state.epoch]
        hw = max(mine + before + [0]) + (1 if honest or rng.random() < 0.8 else -2)
        leader.leader_hw_history.append((leader.state.epoch, hw))


def test_raft_safety_progress_never_passes_what_the_whole_check_fails():
    """RaftSafetyProgress (the RaftSafety checker's per-event path) against check_raft_safety
    over seeded walks: once the whole check finds a problem, advance has answered False (and
    keeps doing so); on honest walks it answers True throughout, so the fast path is taken."""
    import random

    from kafkasim.control.kraft.raft_invariants import RaftSafetyProgress

    rng = random.Random(20261205)
    caught = honest_steps = 0
    for case in range(300):
        honest = case % 3 == 0
        nodes = [_Node(i) for i in (3000, 3001, 3002)]
        progress = RaftSafetyProgress()
        for step in range(60):
            _raft_walk(rng, nodes, honest)
            ok = progress.advance(nodes)
            problems = check_raft_safety(nodes)
            assert not (problems and ok), (case, step, problems)
            if honest:
                assert ok and not problems, (case, step, problems)
                honest_steps += 1
            caught += bool(problems)
    assert caught > 500 and honest_steps == 100 * 60
