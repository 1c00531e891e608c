"""Kafka raft unit tests not yet ported, read at 4.3.0 (confluentinc/kafka a9ce322153,
raft/src/test/java/org/apache/kafka/raft/) and 3.9.0-rc3 (apache/kafka).

Ported here:

- LeaderAndEpochTest (all three cases) against ``kafkasim.control.kraft.leader_and_epoch``
  (new: Kafka's record, ``QuorumState.leader_and_epoch()``). Kafka's ``OptionalInt.empty()``
  is None, so its null leader id has no Python counterpart: the port refuses a leader id that
  is not an int (TypeError), as Kafka refuses null (NullPointerException).
- QuorumStateTest.testInitializeWithCorruptedStore (kraft.version 0 and 1). Kafka's test mocks
  a store that throws, but builds its QuorumState on the test's own (empty) store, so what it
  checks is the log-epoch path of ``QuorumState.initialize``: an empty store and a log of epoch
  2 start Unattached in epoch 2 with no leader. ``initialize`` is ``_transitions.initialize``.
- KafkaRaftClientTest.testUnattachedAsObserverDoesNotBecomeProspectiveAfterElectionTimeout
  (with and without the KIP-853 RPCs), with the 4.3 release rules (``raft_options``).
- KafkaRaftClientAutoJoinTest.testObserverDoesNotAutoJoinWithKRaftVersion0.
- KafkaRaftClientReconfigTest.testFollowerSendsUpdateVoterAfterElectionWithKraftVersion0 (NONE
  and UNSUPPORTED_VERSION), with 4.3's update-voter period of one fetch timeout
  (``update_voter_period_one_fetch_timeout``, KAFKA-16538; RaftClientTestContext's
  NUMBER_FETCH_TIMEOUTS_IN_UPDATE_VOTER_SET_PERIOD is 1 at 4.3.0, 3 at 3.9.0-rc3), and the same
  period before 4.1 (3 fetch timeouts, FollowerState.updateVoterPeriodMs @4.0.0 4ae681446f).
- QuorumConfigTest.testIllegalConfig against ``broker_config`` at 4.3 (ConfigError is
  ConfigException) and against the KafkaRaftClient's own check of its quorum settings.

The client test context is tests/test_raft_client_kafka.py's (``Ctx``: deliver = deliverRequest
+ poll, advance = time.sleep + poll; test timeouts: election 10 s, fetch 50 s) and the KIP-853
one of tests/test_raft_states_kafka.py (listeners, voter sets with directory ids).

- QuorumStateTest.testNoLocalIdInitializationFailsIfElectionStateHasVotedCandidate
  (``node_id=None`` is Kafka's empty localId; new: the check in ``initialize``).

Not ported, and why:

- KafkaRaftClientTest.test{Vote,BeginQuorumEpoch,EndQuorumEpoch,Fetch}RequestClusterIdValidation
  and KafkaRaftClientClusterAuthTest (testClusterAuthorizationFailedIn*): kafkasim runs one
  cluster without cluster ids or authorization.
- KafkaRaftClientTest.testHandleLeaderChangeFiresAfter* (5 cases): kafkasim has no
  RaftClient.Listener registration; its single listener (the context's ``on_leader_change``)
  hears of a leader change at once, not after it read up to the epoch start offset.
- KafkaRaftClientTest.testAccumulatorClearedAfterBecoming{Unattached,Voted}: memory pools
  (the "pending records never reach the log" half is ported in test_raft_client_kafka.py).
- KafkaRaftClientFetchTest.testFetchMaxBytes* and testRandomRecords: no batch byte sizes.
- LeaderStateTest.test{Invalid,}MaybeAppendUpgradedKRaftVersion: no KRaftVersionUpgrade object
  (the upgrade itself is ported in test_raft_states_kafka.py through ``upgrade_kraft_version``).
- EndpointsTest, DynamicVoterTest, DynamicVotersTest, KafkaNetworkChannelTest, MockLogTest,
  RaftUtilTest, KafkaRaftClientDriverTest, KafkaRaftClientSnapshotTest: wire formats, network
  channels, the mock log, the driver thread and snapshots, which kafkasim does not model.
"""

from __future__ import annotations

import pytest
from test_raft_client_kafka import (
    ELECTION_TIMEOUT_MS,
    FETCH_TIMEOUT_MS,
    TEST_CONFIG,
    Ctx,
    assert_sent_fetch_request,
    assert_vote_response,
)
from test_raft_states_kafka import (
    KRAFT_VERSION_RANGE,
    another_listener,
    controller_voter_set,
    last_fetch,
    listeners_of,
    new_uuid,
)

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft.epoch_states import UNKNOWN
from kafkasim.control.kraft.leader_and_epoch import UNKNOWN_LEADER_AND_EPOCH, LeaderAndEpoch
from kafkasim.control.kraft.raft import IllegalStateException, KafkaRaftClient, RaftLog
from kafkasim.control.kraft.voter_set import ReplicaKey, VoterNode, VoterSet
from kafkasim.runtime.kraft_cluster import raft_options
from kafkasim.settings.config import ConfigError, broker_config
from kafkasim.settings.versions import rules_for

KRAFT = pytest.mark.parametrize("kraft", [0, 1], ids=["kraft0", "kraft1"])
KIP853 = pytest.mark.parametrize("kip853", [True, False], ids=["kip853", "kip595"])
OPTIONS_4_3 = raft_options(rules_for("4.3"))


# --- LeaderAndEpochTest @4.3.0 --------------------------------------------------------------------
def test_constructor_with_valid_leader_id():
    """LeaderAndEpochTest.testConstructorWithValidLeaderId."""
    leader_and_epoch = LeaderAndEpoch(1, 5)
    assert leader_and_epoch.leader_id == 1
    assert leader_and_epoch.epoch == 5
    assert leader_and_epoch.is_leader(1) and not leader_and_epoch.is_leader(2)


def test_constructor_with_empty_leader_id():
    """LeaderAndEpochTest.testConstructorWithEmptyLeaderId: OptionalInt.empty() is None."""
    leader_and_epoch = LeaderAndEpoch(None, 3)
    assert leader_and_epoch.leader_id is None
    assert leader_and_epoch.epoch == 3
    assert not leader_and_epoch.is_leader(3)


@pytest.mark.parametrize("leader_id", ["1", 1.0, True])
def test_constructor_throws_exception_when_leader_id_is_not_an_int(leader_id):
    """LeaderAndEpochTest.testConstructorThrowsExceptionWhenLeaderIdIsNull: Kafka refuses a
    null OptionalInt; None is kafkasim's empty one, so a leader id that is not an int is what
    has no meaning here. The error names the argument."""
    with pytest.raises(TypeError, match="leader_id must be an int or None"):
        LeaderAndEpoch(leader_id, 1)


def test_leader_and_epoch_unknown_and_from_quorum_state():
    """LeaderAndEpoch.UNKNOWN (no leader, epoch 0) is what KafkaRaftClient.leaderAndEpoch
    answers before initialize; afterwards QuorumState.leaderAndEpoch() is the state's
    election (ElectionState.optionalLeaderId, epoch)."""
    assert UNKNOWN_LEADER_AND_EPOCH == LeaderAndEpoch(None, 0)
    c = KafkaRaftClient(1, (1, 2, 3), dict(TEST_CONFIG), **OPTIONS_4_3,
                        quorum_state={"leader_epoch": 4, "leader_id": 2, "voted_id": -1})
    assert c.quorum().leader_and_epoch() == UNKNOWN_LEADER_AND_EPOCH
    c.start(Ctx())
    assert c.quorum().leader_and_epoch() == LeaderAndEpoch(2, 4)
    assert c.quorum().leader_and_epoch().is_leader(2)


# --- QuorumStateTest @4.3.0 ----------------------------------------------------------------------
@KRAFT
def test_initialize_with_corrupted_store(kraft):
    """QuorumStateTest.testInitializeWithCorruptedStore: nothing usable in the store and a log
    whose last epoch is 2 (``initialize(new OffsetAndEpoch(0, 2))``): Unattached in epoch 2,
    no leader (the store's epoch 0 is older than the log's). localStandaloneVoterSet: the
    local replica is the only voter."""
    directory = new_uuid() if kraft else None
    voters = VoterSet.of((0,), {0: directory})
    c = KafkaRaftClient(0, (0,), dict(TEST_CONFIG), **OPTIONS_4_3, kraft_version=kraft,
                        directory_id=directory, bootstrap_voters=voters,
                        log=RaftLog([(0, 2, "x")]))
    ctx = Ctx()
    c.state = c._transitions.initialize(ctx)
    quorum = c.quorum()
    assert quorum.epoch() == 2
    assert quorum.is_unattached()
    assert not quorum.has_leader()


@KRAFT
def test_no_local_id_initialization_fails_if_election_state_has_voted_candidate(kraft):
    """QuorumStateTest.testNoLocalIdInitializationFailsIfElectionStateHasVotedCandidate: a
    replica without a local id (``node_id=None``, Kafka's empty localId) whose store holds a
    vote cannot initialize (IllegalStateException); nothing changes."""
    voters = VoterSet.of((0, 1), {0: new_uuid() if kraft else None,
                                  1: new_uuid() if kraft else None})
    c = KafkaRaftClient(None, (0, 1), dict(TEST_CONFIG), **OPTIONS_4_3, observer=True,
                        kraft_version=kraft, bootstrap_voters=voters,
                        quorum_state={"leader_epoch": 5, "leader_id": -1, "voted_id": 1,
                                      "data_version": kraft, "voters": (0, 1)})
    with pytest.raises(IllegalStateException, match="with a voted candidate but without a "
                                                    "local id"):
        c.start(Ctx())
    assert c.state is None


# --- KafkaRaftClientTest @4.3.0 ------------------------------------------------------------------
@KIP853
def test_unattached_as_observer_does_not_become_prospective_after_election_timeout(kip853):
    """KafkaRaftClientTest.testUnattachedAsObserverDoesNotBecomeProspectiveAfterElectionTimeout:
    an observer of epoch 5 with no leader fetches from the bootstrap voter, stays Unattached
    past two election timeouts (no Vote sent), can grant a vote, and still does not become
    Prospective."""
    local, other, epoch = 0, 1, 5
    local_dir = new_uuid() if kip853 else None
    other_dir = new_uuid() if kip853 else None
    c = KafkaRaftClient(local, (other,), dict(TEST_CONFIG), **OPTIONS_4_3, observer=True,
                        quorum_state={"leader_epoch": epoch, "leader_id": -1, "voted_id": -1},
                        directory_id=local_dir,
                        bootstrap_voters=VoterSet.of((other,), {other: other_dir}))
    ctx = Ctx()
    c.start(ctx)
    ctx.poll(c)
    assert_sent_fetch_request(ctx, epoch, 0, 0, dst=other)
    assert c.quorum().is_unattached()

    ctx.advance(c, ELECTION_TIMEOUT_MS * 2)
    assert c.quorum().is_unattached()
    assert_sent_fetch_request(ctx, epoch, 0, 0, dst=other)
    assert ctx.sent == []                           # no Vote request

    ctx.deliver(c, other, M.VoteRequest(100, epoch + 1, other, epoch, 0,
                                        candidate_directory_id=other_dir, voter_id=local,
                                        voter_directory_id=local_dir))
    assert_vote_response(ctx, M.NONE, epoch + 1, UNKNOWN, True)   # an observer can vote

    ctx.advance(c, ELECTION_TIMEOUT_MS * 2)
    assert c.quorum().is_unattached()               # but cannot become Prospective
    assert ctx.take(M.VoteRequest) == []


# --- KafkaRaftClientAutoJoinTest / KafkaRaftClientReconfigTest @4.3.0 ---------------------------
def _follower(local: ReplicaKey, voters: VoterSet, epoch: int, leader: int, *, observer=False,
              local_listeners=None, one_fetch_timeout=True, **kw):
    """RaftClientTestContext.Builder(local.id, local.directoryId).withKip853Rpc(true)
    .withStaticVoters(voters) (kraft.version 0: voters with no directory id in the set)
    .withElectedLeader(epoch, leader), with 4.3's rules (``one_fetch_timeout``: the update-voter
    period of 4.1+)."""
    static = VoterSet({i: VoterNode(ReplicaKey(i), n.endpoints, (0, 0))
                       for i, n in voters.voters.items()})
    options = {**OPTIONS_4_3, "update_voter_period_one_fetch_timeout": one_fetch_timeout,
               "update_voter_static": True}
    c = KafkaRaftClient(
        local.id, static.voter_ids(), dict(TEST_CONFIG), **options, observer=observer,
        quorum_state={"leader_epoch": epoch, "leader_id": leader, "voted_id": -1},
        log=RaftLog(), kraft_version=0, directory_id=local.directory_id,
        bootstrap_voters=static, supported_kraft_version=KRAFT_VERSION_RANGE,
        listeners=local_listeners or listeners_of(local.id), **kw)
    ctx = Ctx()
    c.start(ctx)
    return c, ctx


def _any_fetch(ctx, epoch):
    """assertSentFetchRequest + assertFetchRequestData(epoch, 0, 0) with no destination check:
    (destination, request) of the newest Fetch."""
    out = ctx.take(M.RaftFetchRequest)
    assert out, "no Fetch sent"
    dst, req = out[-1]
    assert (req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch) == (epoch, 0, 0)
    return dst, req


def _advance_time_and_complete_fetch(c, ctx, epoch, leader, rounds=1):
    """RaftClientTestContext.advanceTimeAndCompleteFetch(epoch, leader, true): ``rounds``
    (NUMBER_FETCH_TIMEOUTS_IN_UPDATE_VOTER_SET_PERIOD: 1 at 4.3.0) Fetches answered after
    fetch.timeout - 1 each, then fetch.timeout - 1 more. (kafkasim's client sends its first
    Fetch as it starts, Kafka's at the first poll: the newest Fetch is the one answered.) As in
    Kafka's helper the Fetch may have gone to any bootstrap server -- from 4.0 (KAFKA-17030) a
    Fetch to the leader that timed out is followed by one to a random bootstrap server, with a
    static quorum any voter (maybeSendFetchToBestNode) -- and the answer comes from where it
    went (``deliverResponse(..., fetchRequest.destination(), ...)``)."""
    for _ in range(rounds):
        ctx.advance(c, FETCH_TIMEOUT_MS - 1)
        dst, req = _any_fetch(ctx, epoch)
        c.handle(ctx, dst, M.RaftFetchResponse(req.correlation_id, M.NONE, leader, epoch, 0))
        ctx.poll(c)
    ctx.sleep(FETCH_TIMEOUT_MS - 1)


def test_observer_does_not_auto_join_with_kraft_version0():
    """KafkaRaftClientAutoJoinTest.testObserverDoesNotAutoJoinWithKRaftVersion0: an observer
    with auto-join (and canBecomeVoter) of a kraft.version 0 quorum sends a Fetch, not
    AddRaftVoter, when its update-voter-set period has passed."""
    leader = ReplicaKey(20, new_uuid())
    follower = ReplicaKey(21, new_uuid())
    observer = ReplicaKey(22, new_uuid())
    epoch = 1
    c, ctx = _follower(observer, controller_voter_set(leader, follower), epoch, leader.id,
                       observer=True, auto_join=True)
    _advance_time_and_complete_fetch(c, ctx, epoch, leader.id)
    ctx.sleep(FETCH_TIMEOUT_MS - 1)
    ctx.poll(c)
    last_fetch(ctx, epoch, leader.id)
    assert ctx.take(M.AddRaftVoterRequest) == [] and ctx.sent == []


def _update_voter_request(ctx, local: ReplicaKey, epoch: int, listeners):
    """assertSentUpdateVoterRequest(local, epoch, KRAFT_VERSION range, localListeners)."""
    (_, req), = ctx.take(M.UpdateRaftVoterRequest)
    assert (req.voter_id, req.voter_directory_id, req.current_leader_epoch,
            req.supported_kraft_version, req.endpoints) == (
        local.id, local.directory_id, epoch, KRAFT_VERSION_RANGE, listeners)
    return req


@pytest.mark.parametrize(("release", "one_fetch_timeout", "rounds"),
                         [("4.3", True, 1), ("4.0", False, 3)], ids=["period-4.1+", "period-4.0"])
@pytest.mark.parametrize("update_voter_error", [M.NONE, "UNSUPPORTED_VERSION"])
def test_follower_sends_update_voter_after_election_with_kraft_version0(
        update_voter_error, release, one_fetch_timeout, rounds):
    """KafkaRaftClientReconfigTest.testFollowerSendsUpdateVoterAfterElectionWithKraftVersion0:
    a voter of a static quorum sends UpdateRaftVoter to its leader once the update-voter
    period has passed; after NONE or UNSUPPORTED_VERSION it fetches; a new leader (a
    BeginQuorumEpoch of epoch 5) gets an UpdateRaftVoter of its own after a new period. The
    period is one fetch timeout at 4.3 (KAFKA-16538, 4.1+), three before (``release`` 4.0:
    the same client with the 3.9/4.0 period; Kafka 4.0 sends none to a static quorum's leader,
    so that run is the period's check only)."""
    local = ReplicaKey(10, new_uuid())
    voter1, voter2 = ReplicaKey(11, new_uuid()), ReplicaKey(12, new_uuid())
    listeners = listeners_of(local.id, another_listener(local.id))
    epoch = 4
    c, ctx = _follower(local, controller_voter_set(local, voter1, voter2), epoch, voter1.id,
                       local_listeners=listeners, one_fetch_timeout=one_fetch_timeout)

    _advance_time_and_complete_fetch(c, ctx, epoch, voter1.id, rounds)
    ctx.poll(c)
    req = _update_voter_request(ctx, local, epoch, listeners)
    c.handle(ctx, voter1.id, M.UpdateRaftVoterResponse(req.correlation_id, update_voter_error,
                                                       voter1.id, epoch))
    ctx.advance(c, FETCH_TIMEOUT_MS - 1)
    _any_fetch(ctx, epoch)          # assertSentFetchRequest: any destination

    new_epoch = epoch + 1                 # electing a new leader: UpdateRaftVoter once more
    ctx.deliver(c, voter1.id, M.BeginQuorumEpochRequest(200, new_epoch, voter1.id, local.id,
                                                        local.directory_id))
    assert ctx.take(M.BeginQuorumEpochResponse)
    ctx.sent.clear()
    _advance_time_and_complete_fetch(c, ctx, new_epoch, voter1.id, rounds)
    ctx.poll(c)
    req = _update_voter_request(ctx, local, new_epoch, listeners)
    c.handle(ctx, voter1.id, M.UpdateRaftVoterResponse(req.correlation_id, M.NONE, voter1.id,
                                                       new_epoch))
    ctx.advance(c, FETCH_TIMEOUT_MS - 1)
    _any_fetch(ctx, new_epoch)


@pytest.mark.parametrize("version", ["4.1", "4.3"])
def test_release_profile_update_voter_period_is_one_fetch_timeout(version):
    """FollowerState.updateVoterPeriodMs @4.1.0+ as a cluster of ``version`` runs it."""
    assert raft_options(rules_for(version)).get("update_voter_period_one_fetch_timeout") is True


# --- QuorumConfigTest @4.3.0 ---------------------------------------------------------------------
QUORUM_KEYS = ["controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms",
               "controller.quorum.election.backoff.max.ms",
               "controller.quorum.append.linger.ms", "controller.quorum.request.timeout.ms",
               "controller.quorum.retry.backoff.ms"]
BASE = {"controller.quorum.voters": "1@localhost:9092",
        **{k: "10" for k in QUORUM_KEYS}, "controller.quorum.auto.join.enable": True}


@pytest.mark.parametrize("key", [*QUORUM_KEYS, "controller.quorum.auto.join.enable"])
def test_illegal_config(key):
    """QuorumConfigTest.testIllegalConfig: "-1" for each timeout (atLeast(0), 4.1+) and for
    the boolean auto-join switch is a ConfigException. (Its fetch.snapshot.max.bytes and
    fetch.max.bytes keys are not modelled: kafkasim refuses them as unknown keys.)"""
    with pytest.raises(ConfigError, match=f"Invalid value -1 for configuration {key}"):
        broker_config({**BASE, key: "-1"}, "4.3")
    assert broker_config(BASE, "4.3")[key] in (10, True)      # the base props are valid


@pytest.mark.parametrize("key", QUORUM_KEYS)
def test_raft_client_refuses_a_negative_quorum_setting(key):
    """QuorumConfigTest.testIllegalConfig as the KafkaRaftClient's own QuorumConfig sees it:
    a negative timeout is refused with the key and the bound named, and no client is made."""
    with pytest.raises(ValueError, match=f"{key} must be >= 0, got -1"):
        KafkaRaftClient(1, (1, 2, 3), {**TEST_CONFIG, key: -1}, **OPTIONS_4_3)
