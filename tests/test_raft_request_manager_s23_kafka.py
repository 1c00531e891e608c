"""Ports of Kafka's RequestManagerTest and EpochElectionTest (raft/src/test/java/org/apache/kafka/
raft/, read at 4.3.0 = confluentinc/kafka a9ce322153; RequestManager is the same at the 3.9
branch c821449).

Adaptation to kafkasim (kafkasim.control.kraft.raft.RequestManager, epoch_states.EpochElection):

- ``new RequestManager(bootstrapList, retryBackoffMs, requestTimeoutMs, random)`` is
  ``RequestManager(retry_backoff_ms, request_timeout_ms)``; the bootstrap list and the random
  source go to ``find_ready_bootstrap_server(servers, now, random_int)`` and the list to
  ``backoff_before_available_bootstrap_server(servers, now)``. Kafka keys connections by
  ``Node.idString()``; kafkasim by node id, so a ``Node`` is its id (makeBootstrapList: ids
  -2, -3, ...; the "other node" is id 1). ``MockTime`` is a plain ``now``; ``Random(1)`` is
  ``random_int`` below (Java's LCG, seed 1).
- Kafka's scans (hasAnyInflightRequest, backoffBeforeAvailableBootstrapServer) forget the
  connections whose request timed out or whose backoff ended; kafkasim's RequestManager does so
  by default, the KafkaRaftClient's own one by release (rule
  raft_request_manager_forgets_stale_connections, KAFKA-16525, 3.8+; tested at the end).
- ``new EpochElection(voterKeys)`` is ``EpochElection(voter_keys)``; Kafka's
  ``ThreadLocalRandom`` voter id is a fixed one (the test holds for any id).
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.epoch_states import EpochElection
from kafkasim.control.kraft.raft import RequestManager
from kafkasim.control.kraft.voter_set import ReplicaKey
from kafkasim.core.errors import IllegalArgumentException

REQUEST_TIMEOUT_MS = 30000      # RequestManagerTest.requestTimeoutMs
RETRY_BACKOFF_MS = 100          # RequestManagerTest.retryBackoffMs
NODE1, NODE2, OTHER_NODE = 1, 2, 1


class JavaRandom:
    """java.util.Random(seed).nextInt(bound), as RequestManagerTest's ``new Random(1)``."""

    def __init__(self, seed: int) -> None:
        self.seed = (seed ^ 0x5DEECE66D) & ((1 << 48) - 1)

    def _next(self, bits: int) -> int:
        self.seed = (self.seed * 0x5DEECE66D + 0xB) & ((1 << 48) - 1)
        return self.seed >> (48 - bits)

    def next_int(self, bound: int) -> int:
        if bound & (bound - 1) == 0:
            return (bound * self._next(31)) >> 31
        while True:
            bits = self._next(31)
            val = bits % bound
            if bits - val + (bound - 1) < (1 << 31):
                return val


def make_bootstrap_list(n: int) -> list[int]:
    """makeBootstrapList: ids -2, -3, ..."""
    return [-2 - i for i in range(n)]


def new_cache() -> RequestManager:
    return RequestManager(RETRY_BACKOFF_MS, REQUEST_TIMEOUT_MS)


# --- RequestManagerTest @4.3.0 ------------------------------------------------------------------
def test_reset_all_connections():
    """RequestManagerTest.testResetAllConnections: resetAll makes every node ready."""
    cache, now = new_cache(), 0
    cache.on_request_sent(NODE1, 1, now)
    assert not cache.is_ready(NODE1, now)
    cache.on_request_sent(NODE2, 2, now)
    cache.on_response_result(NODE2, 2, False, now)
    assert not cache.is_ready(NODE2, now)
    cache.reset_all()
    assert cache.is_ready(NODE1, now)
    assert cache.is_ready(NODE2, now)


def test_backoff_after_failure():
    """RequestManagerTest.testBackoffAfterFailure: a failed request backs off retryBackoffMs."""
    cache, now = new_cache(), 0
    assert cache.is_ready(NODE1, now)
    cache.on_request_sent(NODE1, 1, now)
    assert not cache.is_ready(NODE1, now)
    cache.on_response_result(NODE1, 1, False, now)
    assert not cache.is_ready(NODE1, now)
    now += RETRY_BACKOFF_MS
    assert cache.is_ready(NODE1, now)


def test_successful_response():
    """RequestManagerTest.testSuccessfulResponse."""
    cache, now = new_cache(), 0
    cache.on_request_sent(NODE1, 1, now)
    assert not cache.is_ready(NODE1, now)
    cache.on_response_result(NODE1, 1, True, now)
    assert cache.is_ready(NODE1, now)


def test_ignore_unexpected_response():
    """RequestManagerTest.testIgnoreUnexpectedResponse: another correlation id changes
    nothing."""
    cache, now = new_cache(), 0
    cache.on_request_sent(NODE1, 1, now)
    assert not cache.is_ready(NODE1, now)
    cache.on_response_result(NODE1, 2, True, now)
    assert not cache.is_ready(NODE1, now)


def test_request_timeout():
    """RequestManagerTest.testRequestTimeout: ready again requestTimeoutMs after the send."""
    cache, now = new_cache(), 0
    cache.on_request_sent(NODE1, 1, now)
    assert not cache.is_ready(NODE1, now)
    now += REQUEST_TIMEOUT_MS - 1
    assert not cache.is_ready(NODE1, now)
    now += 1
    assert cache.is_ready(NODE1, now)


def test_request_to_bootstrap_list():
    """RequestManagerTest.testRequestToBootstrapList: one bootstrap request at a time; a failed
    server backs off and the other is chosen."""
    servers, cache, now = make_bootstrap_list(2), new_cache(), 0
    rnd = JavaRandom(1)
    node1 = cache.find_ready_bootstrap_server(servers, now, rnd.next_int)
    assert node1 in servers
    assert cache.backoff_before_available_bootstrap_server(servers, now) == 0
    cache.on_request_sent(node1, 1, now)
    assert cache.find_ready_bootstrap_server(servers, now, rnd.next_int) is None
    assert cache.backoff_before_available_bootstrap_server(servers, now) == REQUEST_TIMEOUT_MS

    now += 100
    cache.on_response_result(node1, 1, False, now)
    node2 = cache.find_ready_bootstrap_server(servers, now, rnd.next_int)
    assert node2 != node1
    assert cache.backoff_before_available_bootstrap_server(servers, now) == 0
    cache.on_request_sent(node2, 2, now)
    assert cache.find_ready_bootstrap_server(servers, now, rnd.next_int) is None
    assert cache.backoff_before_available_bootstrap_server(servers, now) == REQUEST_TIMEOUT_MS

    now += RETRY_BACKOFF_MS - 1
    cache.on_response_result(node2, 2, False, now)
    assert cache.find_ready_bootstrap_server(servers, now, rnd.next_int) is None
    assert cache.backoff_before_available_bootstrap_server(servers, now) == 1

    now += 1
    assert cache.find_ready_bootstrap_server(servers, now, rnd.next_int) == node1
    assert cache.backoff_before_available_bootstrap_server(servers, now) == 0


def test_find_ready_with_inflight_request():
    """RequestManagerTest.testFindReadyWithInflightRequest: a request in flight to any node,
    bootstrap server or not, means no bootstrap server is ready."""
    cache = new_cache()
    cache.on_request_sent(OTHER_NODE, 1, 0)
    assert cache.find_ready_bootstrap_server(make_bootstrap_list(3), 0, JavaRandom(1).next_int) \
        is None


def test_find_ready_with_request_timed_out():
    """RequestManagerTest.testFindReadyWithRequestTimedOut: findReadyBootstrapServer forgets a
    timed-out request (hasAnyInflightRequest removes its connection), so its response is no
    longer expected."""
    servers, cache, now = make_bootstrap_list(3), new_cache(), 0
    cache.on_request_sent(OTHER_NODE, 1, now)
    assert cache.is_response_expected(OTHER_NODE, 1)
    assert cache.find_ready_bootstrap_server(servers, now, JavaRandom(1).next_int) is None
    now += REQUEST_TIMEOUT_MS
    assert cache.find_ready_bootstrap_server(servers, now, JavaRandom(1).next_int) in servers
    assert not cache.is_response_expected(OTHER_NODE, 1)


def test_backoff_before_available_bootstrap_server_forgets_timed_out_requests():
    """RequestManager.backoffBeforeAvailableBootstrapServer @4.3.0 removes timed-out and
    backed-off connections as hasAnyInflightRequest does (no Kafka test of its own)."""
    servers, cache = make_bootstrap_list(2), new_cache()
    cache.on_request_sent(OTHER_NODE, 1, 0)
    cache.on_request_sent(NODE2, 2, 0)
    cache.on_response_result(NODE2, 2, False, 0)
    assert cache.backoff_before_available_bootstrap_server(servers, REQUEST_TIMEOUT_MS) == 0
    assert not cache.is_response_expected(OTHER_NODE, 1)
    assert cache.connections == {}


def test_has_request_timed_out():
    """RequestManagerTest.testHasRequestTimedOut."""
    servers, cache, now = make_bootstrap_list(2), new_cache(), 0
    node1 = cache.find_ready_bootstrap_server(servers, now, JavaRandom(1).next_int)
    assert node1 in servers
    assert not cache.has_request_timed_out(node1, now)
    cache.on_request_sent(node1, 1, now)
    assert cache.find_ready_bootstrap_server(servers, now, JavaRandom(1).next_int) is None
    assert not cache.has_request_timed_out(node1, now)
    now += REQUEST_TIMEOUT_MS - 1
    assert not cache.has_request_timed_out(node1, now)
    now += 1
    assert cache.has_request_timed_out(node1, now)


def test_any_inflight_request_with_any_request():
    """RequestManagerTest.testAnyInflightRequestWithAnyRequest: neither a timed-out, a failed
    nor an answered request is in flight."""
    cache, now = new_cache(), 0
    assert not cache.has_any_inflight(now)
    cache.on_request_sent(OTHER_NODE, 11, now)
    assert cache.has_any_inflight(now)
    now += REQUEST_TIMEOUT_MS
    assert not cache.has_any_inflight(now)
    cache.on_request_sent(OTHER_NODE, 12, now)
    cache.on_response_result(OTHER_NODE, 12, False, now)
    assert not cache.has_any_inflight(now)
    cache.on_request_sent(OTHER_NODE, 12, now)
    cache.on_response_result(OTHER_NODE, 12, True, now)
    assert not cache.has_any_inflight(now)


def test_java_random_matches_java():
    """new Random(1).nextInt(1000) is 985, new Random(42).nextInt(10) is 0 (java.util.Random)."""
    assert JavaRandom(1).next_int(1000) == 985
    assert JavaRandom(42).next_int(10) == 0


# --- EpochElectionTest @4.3.0 -------------------------------------------------------------------
VOTER1 = 7
VOTERS = {ReplicaKey(VOTER1, "dir-e1"), ReplicaKey(VOTER1 + 1, "dir-e2"),
          ReplicaKey(VOTER1 + 2, "dir-e3")}


def test_state_on_initialization():
    """EpochElectionTest.testStateOnInitialization: nobody has voted."""
    election = EpochElection(VOTERS)
    assert election.unrecorded_voters() == VOTERS
    assert election.granting_voters() == set()
    assert election.rejecting_voters() == set()
    assert not election.is_vote_granted()
    assert not election.is_vote_rejected()
    assert not election.is_granted_voter(VOTER1)
    assert not election.is_rejected_voter(VOTER1)
    assert election.voter_ids() == {VOTER1, VOTER1 + 1, VOTER1 + 2}


def test_record_granted_vote():
    """EpochElectionTest.testRecordGrantedVote: two of three granted is a granted election."""
    election = EpochElection(VOTERS)
    assert election.record_vote(VOTER1, True)
    assert election.granting_voters() == {VOTER1}
    assert election.rejecting_voters() == set()
    assert len(election.unrecorded_voters()) == 2
    assert election.is_granted_voter(VOTER1) and not election.is_rejected_voter(VOTER1)
    assert not election.is_vote_granted() and not election.is_vote_rejected()
    assert not election.record_vote(VOTER1, True)
    assert election.is_granted_voter(VOTER1)
    assert not election.is_vote_granted()
    assert election.record_vote(VOTER1 + 1, True)
    assert len(election.granting_voters()) == 2
    assert len(election.rejecting_voters()) == 0
    assert len(election.unrecorded_voters()) == 1
    assert election.is_granted_voter(VOTER1 + 1) and not election.is_rejected_voter(VOTER1 + 1)
    assert election.is_vote_granted() and not election.is_vote_rejected()


def test_record_rejected_vote():
    """EpochElectionTest.testRecordRejectedVote: two of three rejected is a lost election."""
    election = EpochElection(VOTERS)
    assert election.record_vote(VOTER1, False)
    assert election.granting_voters() == set()
    assert election.rejecting_voters() == {VOTER1}
    assert len(election.unrecorded_voters()) == 2
    assert not election.is_granted_voter(VOTER1) and election.is_rejected_voter(VOTER1)
    assert not election.is_vote_granted() and not election.is_vote_rejected()
    assert not election.record_vote(VOTER1, False)
    assert not election.is_granted_voter(VOTER1)
    assert not election.is_vote_rejected()
    assert election.record_vote(VOTER1 + 1, False)
    assert len(election.granting_voters()) == 0
    assert len(election.rejecting_voters()) == 2
    assert len(election.unrecorded_voters()) == 1
    assert not election.is_granted_voter(VOTER1 + 1) and election.is_rejected_voter(VOTER1 + 1)
    assert not election.is_vote_granted() and election.is_vote_rejected()


def test_over_writing_vote():
    """EpochElectionTest.testOverWritingVote: a recorded vote may be changed; recordVote then
    answers false."""
    election = EpochElection(VOTERS)
    assert election.record_vote(VOTER1, True)
    assert not election.record_vote(VOTER1, False)
    assert election.granting_voters() == set()
    assert election.rejecting_voters() == {VOTER1}
    assert not election.is_granted_voter(VOTER1) and election.is_rejected_voter(VOTER1)
    assert not election.is_vote_granted() and not election.is_vote_rejected()
    assert election.record_vote(VOTER1 + 2, False)
    assert not election.record_vote(VOTER1 + 2, True)
    assert election.granting_voters() == {VOTER1 + 2}
    assert len(election.rejecting_voters()) == 1
    assert election.is_granted_voter(VOTER1 + 2) and not election.is_rejected_voter(VOTER1 + 2)
    assert not election.is_vote_granted() and not election.is_vote_rejected()


@pytest.mark.parametrize("call", ["record_vote", "is_granted_voter", "is_rejected_voter"])
def test_non_voter_is_an_illegal_argument(call):
    """EpochElection.getVoterStateOrThrow @4.3.0: asking about a non-voter is an
    IllegalArgumentException."""
    election = EpochElection(VOTERS)
    args = (VOTER1 + 3, True) if call == "record_vote" else (VOTER1 + 3,)
    with pytest.raises(IllegalArgumentException, match="non-voter"):
        getattr(election, call)(*args)


@pytest.mark.parametrize("forgets", [True, False], ids=["3.8+", "3.7"])
def test_client_ignores_a_late_response_after_a_scan_forgot_its_request(forgets):
    """RequestManager.hasAnyInflightRequest @4.3.0 (RequestManager.java:74-85, KafkaRaftClient
    .java:2841; since 3.8, KAFKA-16525, rule raft_request_manager_forgets_stale_connections):
    an observer's Fetch to the leader times out, so it fetches from voter 12; when that one
    times out too, the next poll's scan forgets it (and fetches from the leader again), so a
    late response from 12 is no longer expected. At 3.7 the connection stays."""
    from test_raft_client_kafka import Ctx
    from test_raft_states_kafka import TEST_CONFIG

    from kafkasim.control.kraft import raft_messages as M
    from kafkasim.control.kraft.raft import KafkaRaftClient

    c = KafkaRaftClient(10, (11, 12), TEST_CONFIG, pre_vote=True, observer=True,
                        quorum_state={"leader_epoch": 0, "leader_id": 11, "voted_id": -1},
                        forget_stale_connections=forgets)
    ctx = Ctx(random=1)
    c.start(ctx)
    ctx.take(M.RaftFetchRequest)
    ctx.advance(c, c.request_timeout_ms)
    (dst, fetch), = ctx.take(M.RaftFetchRequest)
    assert dst == 12
    ctx.advance(c, c.request_timeout_ms)
    assert [d for d, _ in ctx.take(M.RaftFetchRequest)] == [11]
    assert c._requests.is_response_expected(12, fetch.correlation_id) is not forgets
