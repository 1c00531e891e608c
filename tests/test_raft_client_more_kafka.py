"""More of KRaft's quorum, ported from Kafka's raft unit tests: the KIP-853 replica keys, the
rest of LeaderStateTest and KafkaRaftClientTest, KafkaRaftClientFetchTest's KIP-1166 cases and
RaftEventSimulationTest's invariants over a simulated KRaft cluster.

Sources: apache/kafka trunk 1eb7644 (2024-10-25, the 3.9 line): raft/src/test/java/org/apache/
kafka/raft/LeaderStateTest.java, KafkaRaftClientTest.java, KafkaRaftClientSnapshotTest.java,
KafkaRaftClientReconfigTest.java and RaftEventSimulationTest.java, with the rules of
LeaderState.java and KafkaRaftClient.java at that commit; KafkaRaftClientFetchTest.java of 4.x
(KIP-1166 / KAFKA-14145, 4.1: the fetcher's high watermark in Fetch v18). tests/test_raft.py,
tests/test_raft_client_kafka.py, tests/test_raft_quorum_state_kafka.py,
tests/test_raft_states_kafka.py and tests/test_kraft_reconfig.py port the rest of these classes
(see their docstrings); this file does not repeat their cases.

Adaptation to kafkasim (kafkasim.control.kraft):

- ``LeaderState(time, localReplicaKey, epoch, epochStartOffset, voters, ...)`` is
  ``LeaderState(0, 5, start, voter_set, {0}, 0, 2000, local_directory_id=...)`` (local id 0,
  epoch 5, fetch timeout 2000 ms, created at time 0 as in LeaderStateTest); ``LogOffsetMetadata``
  is the bare offset, ``Optional.empty()`` high watermark is -1; ``VoterSetTest.voterSet(keys)``
  is ``voter_set(*keys)`` (every voter on the CONTROLLER listener). ``ReplicaKey`` and
  ``Uuid.randomUuid()`` are voter_set.ReplicaKey and ``new_uuid`` of
  tests/test_raft_states_kafka.py; ``withDirectoryId=false`` is a key without a directory id.
- ``RaftClientTestContext`` is ``build`` of tests/test_raft_client_kafka.py (static voters,
  ``withKip853Rpc(true)`` = a ``directory_id``: a replica with a directory id speaks 3.9's
  RPCs, whose Vote / BeginQuorumEpoch name the voter asked and whose Fetch carries the
  fetcher's directory id) and ``build853`` / ``leader853`` of tests/test_raft_states_kafka.py
  (kraft.version 1, a bootstrap voter set with directory ids).
- ``RaftEventSimulationTest``'s jqwik properties are seeded pytest cases over a whole
  kafkasim ``Cluster`` in KRaft mode (controllers with their Raft clients, brokers as
  observers), its faults (crash, start, controlled shutdown, network partitions) and metadata
  writes (topics created while a controller is active) for ``SequentialAppendAction``. Its
  invariants (``RaftInvariants`` below) run after every event: MonotonicEpoch, SingleLeader,
  MonotonicHighWatermark, MajorityReachedHighWatermark, and ConsistentCommittedData (the
  committed prefix of every node agrees with every other node's, checked as each node's high
  watermark moves and in full at the end).

Deviations found and fixed (see docs/kafka-4x-coverage.md): Vote and BeginQuorumEpoch carried
no voter key and Fetch no directory id (KIP-853: INVALID_VOTER_KEY, the candidate's directory
id in the vote it is granted, observers keyed by ReplicaKey); LeaderState had no
addAcknowledgementFrom / nonAcknowledgingVoters / BeginQuorumEpoch timer / leaderEndpoints /
getReplicaState, took voter ids only, and threw RuntimeError where Kafka throws
IllegalStateException; KafkaRaftClient had no prepareAppend(epoch) and accepted the zero Uuid
as its directory id.

Left out: KafkaRaftClientSnapshotTest entirely (kafkasim's metadata log has no snapshots: no
FetchSnapshot, no log start offset above 0, so no Fetch answered with a SnapshotId, no
createSnapshot), testFollowerDoesNotRequestLeaderBootstrapSnapshot (the same), every
cluster-id case (*ClusterIdValidation, *InvalidClusterId: one cluster, no cluster ids), the
authorization cases (testClusterAuthorizationFailedIn*), graceful shutdown
(testLeaderGracefulShutdownTimeout and its siblings), the listener API
(testHandleLeaderChangeFiresAfter*, the listener half of testHandleCommitCallbackFiresIn
{Voted,Candidate}State: kafkasim's glue reads the log below ``on_high_watermark``), memory
pools and batch sizes (testAppendFailedWithRecordBatchTooLargeException, KafkaRaftClientFetchTest
's fetch max bytes and random / invalid MemoryRecords cases), testCannotResignIfObserver
(kafkasim's observers have a node id), testDescribeQuorumWithOnlyStaticVoters (the first step
of tests/test_raft_client_kafka.py::test_describe_quorum_with_followers),
testRequireNonNullAccumulator and testUpdateHighWatermarkMetadata (no accumulator object, no
offset metadata), KafkaRaftClientFetchTest.testReplicationOfHigherPartitionLeaderEpoch (a
hand-made batch of a later epoch than the leader's: a simulated leader never sends one), and
RaftEventSimulationTest.canRecoverFromSingleNodeCommittedDataLoss (a controller's metadata
log cannot be deleted in kafkasim).
"""

from __future__ import annotations

import random

import pytest
from test_raft_client_kafka import (
    ELECTION_TIMEOUT_MS,
    LOCAL,
    V2,
    V3,
    assert_elected_leader,
    assert_unknown_leader,
    assert_vote_response,
    assert_voted_candidate,
    become_leader,
    build,
    fetch_request,
)
from test_raft_states_kafka import build853, controller_voter_set, leader853, new_uuid

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft.epoch_states import CHECK_QUORUM_TIMEOUT_FACTOR, NEVER, LeaderState
from kafkasim.control.kraft.raft import KafkaRaftClient, NotLeaderError
from kafkasim.control.kraft.voter_set import ZERO_UUID, ReplicaKey, VoterNode, VoterSet
from kafkasim.core.errors import IllegalArgumentException, IllegalStateException
from kafkasim.runtime.cluster import Cluster, ClusterError

FETCH_TIMEOUT_MS = 2000           # LeaderStateTest.fetchTimeoutMs
CHECK_QUORUM_TIMEOUT_MS = int(FETCH_TIMEOUT_MS * CHECK_QUORUM_TIMEOUT_FACTOR)
BEGIN_QUORUM_EPOCH_TIMEOUT_MS = FETCH_TIMEOUT_MS // 2
LOCAL_KEY = ReplicaKey(0, new_uuid())


# --- LeaderStateTest ------------------------------------------------------------------------------
def replica_key(replica_id: int, with_directory_id: bool) -> ReplicaKey:
    return ReplicaKey(replica_id, new_uuid() if with_directory_id else None)


def voter_set(*keys: ReplicaKey) -> VoterSet:
    """VoterSetTest.voterSet(keys): every voter on the CONTROLLER listener."""
    return VoterSet({k.id: VoterNode(k, (("CONTROLLER", "localhost", 9990 + k.id),))
                     for k in keys})


def local_with_remote_voter_set(remote_keys, with_directory_id: bool) -> VoterSet:
    local = LOCAL_KEY if with_directory_id else ReplicaKey(LOCAL_KEY.id)
    return voter_set(local, *remote_keys)


def new_leader_state(voters: VoterSet, epoch_start_offset: int) -> LeaderState:
    """LeaderStateTest.newLeaderState: epoch 5, fetch timeout 2000 ms, created at time 0."""
    return LeaderState(LOCAL_KEY.id, 5, epoch_start_offset, voters, voters.voter_ids(), 0,
                       FETCH_TIMEOUT_MS, local_directory_id=LOCAL_KEY.directory_id)


def test_follower_acknowledgement():
    """testFollowerAcknowledgement (withDirectoryId): the voters that have not acknowledged the
    leader are ReplicaKeys, each acknowledged by id."""
    node1, node2 = replica_key(1, True), replica_key(2, True)
    state = new_leader_state(local_with_remote_voter_set((node1, node2), True), 0)
    assert state.non_acknowledging_voters() == {node1, node2}
    state.add_acknowledgement_from(node1.id)
    assert state.non_acknowledging_voters() == {node2}
    state.add_acknowledgement_from(node2.id)
    assert state.non_acknowledging_voters() == set()


def test_non_follower_acknowledgement():
    """testNonFollowerAcknowledgement: an acknowledgement from a non-voter is an
    IllegalArgumentException."""
    state = new_leader_state(voter_set(LOCAL_KEY), 0)
    with pytest.raises(IllegalArgumentException, match="non-voter 1"):
        state.add_acknowledgement_from(1)


def test_update_high_watermark_quorum_size_two():
    """testUpdateHighWatermarkQuorumSizeTwo (withDirectoryId)."""
    other = replica_key(1, True)
    voters = local_with_remote_voter_set((other,), True)
    state = new_leader_state(voters, 10)
    assert not state.update_local_state(13, voters)
    assert state.non_acknowledging_voters() == {other}
    assert state.high_watermark == -1
    assert not state.update_replica_state(other, 0, 10)
    assert state.non_acknowledging_voters() == set()
    assert state.high_watermark == -1
    assert state.update_replica_state(other, 0, 11) and state.high_watermark == 11
    assert state.update_replica_state(other, 0, 13) and state.high_watermark == 13


def test_update_high_watermark_quorum_size_three():
    """testUpdateHighWatermarkQuorumSizeThree (withDirectoryId)."""
    node1, node2 = replica_key(1, True), replica_key(2, True)
    voters = local_with_remote_voter_set((node1, node2), True)
    state = new_leader_state(voters, 10)
    assert not state.update_local_state(15, voters)
    assert state.non_acknowledging_voters() == {node1, node2}
    assert state.high_watermark == -1
    assert not state.update_replica_state(node1, 0, 10)
    assert state.non_acknowledging_voters() == {node2}
    assert not state.update_replica_state(node2, 0, 10)
    assert state.non_acknowledging_voters() == set() and state.high_watermark == -1
    assert state.update_replica_state(node2, 0, 15) and state.high_watermark == 15
    assert not state.update_local_state(20, voters) and state.high_watermark == 15
    assert state.update_replica_state(node1, 0, 20) and state.high_watermark == 20
    assert not state.update_replica_state(node2, 0, 20) and state.high_watermark == 20


def test_high_watermark_does_increase_from_new_voter():
    """testHighWatermarkDoesIncreaseFromNewVoter (VoterSet.addVoter, directory ids): the fetch
    of a replica before it is a voter counts once the voter set names its key."""
    node1, node2 = replica_key(1, True), replica_key(2, True)
    original = local_with_remote_voter_set((node1,), True)
    state = new_leader_state(original, 5)
    assert not state.update_local_state(15, original)
    assert state.update_replica_state(node1, 0, 10) and state.high_watermark == 10
    assert not state.update_replica_state(node2, 0, 15) and state.high_watermark == 10
    with_node2 = original.add_voter(voter_set(node2).voter_node(node2.id))
    assert state.update_local_state(15, with_node2) and state.high_watermark == 15
    assert not state.update_local_state(16, with_node2) and state.high_watermark == 15
    assert state.update_replica_state(node2, 0, 16) and state.high_watermark == 16


def test_high_watermark_does_not_decrease_from_new_voter():
    """testHighWatermarkDoesNotDecreaseFromNewVoter (directory ids)."""
    node1, node2, node3 = (replica_key(i, True) for i in (1, 2, 3))
    original = local_with_remote_voter_set((node1, node2), True)
    state = new_leader_state(original, 5)
    assert not state.update_local_state(15, original)
    assert state.update_replica_state(node1, 0, 15) and state.high_watermark == 15
    assert not state.update_replica_state(node2, 0, 10)
    assert not state.update_replica_state(node3, 0, 10)
    with_node3 = original.add_voter(voter_set(node3).voter_node(node3.id))
    assert not state.update_local_state(16, with_node3) and state.high_watermark == 15
    assert not state.update_replica_state(node2, 0, 13) and state.high_watermark == 15
    assert not state.update_replica_state(node3, 0, 13) and state.high_watermark == 15
    assert not state.update_replica_state(node1, 0, 16) and state.high_watermark == 15
    assert state.update_replica_state(node3, 0, 16) and state.high_watermark == 16


def test_update_high_watermark_removing_follower_from_voter_states():
    """testUpdateHighWatermarkRemovingFollowerFromVoterStates (VoterSet.removeVoter): a removed
    voter's fetches stop counting; the high watermark never goes back."""
    node1, node2 = replica_key(1, True), replica_key(2, True)
    original = local_with_remote_voter_set((node1, node2), True)
    state = new_leader_state(original, 10)
    assert not state.update_local_state(15, original)
    assert state.update_replica_state(node1, 0, 15)
    assert not state.update_replica_state(node2, 0, 10) and state.high_watermark == 15
    without_node1 = original.remove_voter(node1)
    assert not state.update_local_state(17, without_node1) and state.high_watermark == 15
    assert not state.update_replica_state(node2, 0, 14) and state.high_watermark == 15
    assert not state.update_local_state(18, without_node1) and state.high_watermark == 15
    assert not state.update_replica_state(node1, 0, 18) and state.high_watermark == 15
    assert not state.update_replica_state(node2, 0, 15) and state.high_watermark == 15
    assert state.update_replica_state(node2, 0, 16) and state.high_watermark == 16


def test_update_high_watermark_quorum_removing_leader_from_voter_states():
    """testUpdateHighWatermarkQuorumRemovingLeaderFromVoterStates: a leader outside the voter
    set is an observer of its own quorum; the majority of the rest sets the high watermark."""
    node1, node2 = replica_key(1, True), replica_key(2, True)
    original = local_with_remote_voter_set((node1, node2), True)
    state = new_leader_state(original, 10)
    assert not state.update_local_state(15, original)
    assert state.update_replica_state(node1, 0, 15)
    assert not state.update_replica_state(node2, 0, 10) and state.high_watermark == 15
    without_leader = original.remove_voter(LOCAL_KEY)
    assert not state.update_local_state(17, without_leader) and state.high_watermark == 15
    assert not state.update_replica_state(node1, 0, 16) and state.high_watermark == 15
    assert not state.update_local_state(18, without_leader) and state.high_watermark == 15
    assert not state.update_replica_state(node2, 0, 14) and state.high_watermark == 15
    assert not state.update_replica_state(node2, 0, 15) and state.high_watermark == 15
    assert state.update_replica_state(node2, 0, 16) and state.high_watermark == 16


def test_non_monotonic_high_watermark_update():
    """testNonMonotonicHighWatermarkUpdate (withDirectoryId): a follower that lost its disk
    fetches from an earlier offset; the high watermark stays."""
    node1 = replica_key(1, True)
    voters = local_with_remote_voter_set((node1,), True)
    state = new_leader_state(voters, 0)
    state.update_local_state(10, voters)
    state.update_replica_state(node1, 0, 10)
    assert state.high_watermark == 10
    assert not state.update_replica_state(node1, 0, 5)
    assert state.high_watermark == 10


def test_get_non_leader_followers_by_fetch_offset_descending():
    """testGetNonLeaderFollowersByFetchOffsetDescending (withDirectoryId): ids, largest end
    offset first, the leader left out."""
    node1, node2 = replica_key(1, True), replica_key(2, True)
    voters = local_with_remote_voter_set((node1, node2), True)
    state = new_leader_state(voters, 10)
    state.update_local_state(15, voters)
    assert state.high_watermark == -1
    state.update_replica_state(node1, 0, 10)
    state.update_replica_state(node2, 0, 15)
    assert state.non_leader_voters_by_descending_fetch_offset() == (node2.id, node1.id)


def test_check_quorum():
    """testCheckQuorum (withDirectoryId): fetches from a majority of voters restart the timer;
    an observer's do not count."""
    keys = [replica_key(i, True) for i in (1, 2, 3, 4)]
    observer5 = replica_key(5, True)
    state = new_leader_state(local_with_remote_voter_set(keys, True), 0)
    now = 0
    assert state.time_until_check_quorum_expires(now) == CHECK_QUORUM_TIMEOUT_MS
    now += CHECK_QUORUM_TIMEOUT_MS // 2
    assert state.time_until_check_quorum_expires(now) > 0
    state.update_check_quorum_for_following_voter(keys[0], now)
    state.update_check_quorum_for_following_voter(keys[1], now)
    assert state.time_until_check_quorum_expires(now) == CHECK_QUORUM_TIMEOUT_MS
    now += CHECK_QUORUM_TIMEOUT_MS // 2
    remaining = state.time_until_check_quorum_expires(now)
    assert remaining > 0
    state.update_check_quorum_for_following_voter(keys[2], now)
    state.update_check_quorum_for_following_voter(observer5, now)
    assert state.time_until_check_quorum_expires(now) == remaining
    now += CHECK_QUORUM_TIMEOUT_MS // 2
    assert state.time_until_check_quorum_expires(now) == 0


def test_check_quorum_after_voter_set_changes():
    """testCheckQuorumAfterVoterSetChanges (VoterSet with directory ids): the majority follows
    the voter set, the leader counting only while it is a voter."""
    node1, node2, node3 = (replica_key(i, True) for i in (1, 2, 3))
    original = local_with_remote_voter_set((node1, node2), True)
    state = new_leader_state(original, 0)
    half = CHECK_QUORUM_TIMEOUT_MS // 2
    now = half
    assert state.time_until_check_quorum_expires(now) == half
    state.update_check_quorum_for_following_voter(node1, now)
    assert state.time_until_check_quorum_expires(now) == CHECK_QUORUM_TIMEOUT_MS
    with_node3 = original.add_voter(voter_set(node3).voter_node(node3.id))
    state.update_local_state(1, with_node3)
    now += half
    state.update_check_quorum_for_following_voter(node1, now)
    assert state.time_until_check_quorum_expires(now) == half
    state.update_check_quorum_for_following_voter(node2, now)
    assert state.time_until_check_quorum_expires(now) == CHECK_QUORUM_TIMEOUT_MS
    without_leader = with_node3.remove_voter(LOCAL_KEY)
    state.update_local_state(1, without_leader)
    now += half
    state.update_check_quorum_for_following_voter(node2, now)
    assert state.time_until_check_quorum_expires(now) == half
    state.update_check_quorum_for_following_voter(node1, now)
    assert state.time_until_check_quorum_expires(now) == CHECK_QUORUM_TIMEOUT_MS


def test_check_quorum_with_one_voter():
    """testCheckQuorumWithOneVoter (an observer without a directory id fetches)."""
    state = new_leader_state(voter_set(LOCAL_KEY), 0)
    assert state.time_until_check_quorum_expires(0) == NEVER
    state.update_check_quorum_for_following_voter(ReplicaKey(1), CHECK_QUORUM_TIMEOUT_MS)
    assert state.time_until_check_quorum_expires(CHECK_QUORUM_TIMEOUT_MS) == NEVER


def test_leader_endpoints():
    """testLeaderEndpoints: the leader's endpoints are its listeners in the voter set."""
    voters = voter_set(LOCAL_KEY)
    state = new_leader_state(voters, 0)
    assert state.leader_endpoints() != ()
    assert state.leader_endpoints() == voters.listeners(LOCAL_KEY.id)


def test_update_voters_from_no_directory_id_to_directory_id():
    """testUpdateVotersFromNoDirectoryIdToDirectoryId: a static voter set (no directory ids)
    upgraded to one with directory ids keeps the voters' states, now under their full keys."""
    node1, node2 = replica_key(1, True), replica_key(2, True)
    before = local_with_remote_voter_set((ReplicaKey(1), ReplicaKey(2)), False)
    state = new_leader_state(before, 0)
    assert not state.update_local_state(10, before)
    assert state.update_replica_state(node1, 0, 10)
    assert state.high_watermark == 10
    after = local_with_remote_voter_set((node1, node2), True)
    assert not state.update_local_state(15, after)
    assert state.update_replica_state(node2, 0, 13)
    assert state.high_watermark == 13
    assert state.get_replica_state(node1).replica_key == node1


@pytest.mark.parametrize("with_directory_id", [True, False])
def test_begin_quorum_epoch_timer(with_directory_id):
    """testBeginQuorumEpochTimer: due at once, then every fetch.timeout / 2 after a reset."""
    voters = local_with_remote_voter_set((replica_key(1, with_directory_id),), with_directory_id)
    state = new_leader_state(voters, 10)
    now = 0
    assert state.time_until_begin_quorum_epoch_timer_expires(now) == 0
    now += 5
    state.reset_begin_quorum_epoch_timer(now)
    assert state.time_until_begin_quorum_epoch_timer_expires(now) == BEGIN_QUORUM_EPOCH_TIMEOUT_MS
    now += 5
    assert state.time_until_begin_quorum_epoch_timer_expires(now) == (
        BEGIN_QUORUM_EPOCH_TIMEOUT_MS - 5)
    now += BEGIN_QUORUM_EPOCH_TIMEOUT_MS
    assert state.time_until_begin_quorum_epoch_timer_expires(now) == 0


def test_leader_state_exceptions_are_kafkas():
    """LeaderState.updateLocalState / updateReplicaState / updateFetchedVoters: a local end
    offset that goes back and the leader's own id as a remote replica are
    IllegalStateException (Kafka's classes, not RuntimeError); the leader fetching from itself
    is an IllegalArgumentException; a negative id (no replica) is ignored."""
    voters = local_with_remote_voter_set((replica_key(1, True),), True)
    state = new_leader_state(voters, 0)
    state.update_local_state(16, voters)
    with pytest.raises(IllegalStateException, match="non-monotonic update of local end offset"):
        state.update_local_state(15, voters)
    with pytest.raises(IllegalStateException, match="matches the local leader ID"):
        state.update_replica_state(LOCAL_KEY, 0, 16)
    with pytest.raises(IllegalArgumentException, match="from the leader itself"):
        state.update_check_quorum_for_following_voter(LOCAL_KEY, 0)
    assert not state.update_replica_state(-1, 0, 16)


def test_fetch_from_a_voter_id_with_another_directory_is_an_observer():
    """KIP-853 (LeaderState.getOrCreateReplicaState, isVoter, updateFetchedVoters): a replica
    with a voter's id and another directory id (its disk was replaced) is an observer: its
    fetch moves neither the high watermark nor the check-quorum timer, and the voter keeps its
    own state."""
    node1, node2 = replica_key(1, True), replica_key(2, True)
    voters = local_with_remote_voter_set((node1, node2), True)
    state = new_leader_state(voters, 10)
    state.update_local_state(15, voters)
    replaced = ReplicaKey(node1.id, new_uuid())
    assert not state.update_replica_state(replaced, 100, 15)
    assert state.high_watermark == -1
    assert state.get_replica_state(node1).end_offset is None
    assert state.get_replica_state(replaced).end_offset == 15
    assert not state.is_voter(replaced) and state.is_voter(node1)
    assert state.time_until_check_quorum_expires(100) == CHECK_QUORUM_TIMEOUT_MS - 100
    assert state.update_replica_state(node1, 100, 15) and state.high_watermark == 15


# --- KafkaRaftClientTest: KIP-853 voter keys ------------------------------------------------------
def vote853(epoch, candidate: ReplicaKey, voter: ReplicaKey, last_epoch, last_offset, corr=100):
    """RaftClientTestContext.voteRequest(clusterId, epoch, candidateKey, voterKey, ...)."""
    return M.VoteRequest(corr, epoch, candidate.id, last_epoch, last_offset, False, voter.id,
                         candidate.directory_id, voter.directory_id)


def begin853(epoch, leader_id, voter: ReplicaKey, corr=100):
    return M.BeginQuorumEpochRequest(corr, epoch, leader_id, voter.id, voter.directory_id)


def test_invalid_voter_replica_vote_request():
    """testInvalidVoterReplicaVoteRequest: a Vote naming another voter id, or the local id with
    another directory id, is answered INVALID_VOTER_KEY (after the epoch is taken)."""
    c, ctx, local, (other,) = leader853(1)
    epoch = c.epoch
    ctx.deliver(c, other.id, vote853(epoch + 1, other, ReplicaKey(10, new_uuid()), epoch, 100))
    assert_vote_response(ctx, M.INVALID_VOTER_KEY, epoch + 1, -1, False)
    wrong_dir = ReplicaKey(local.id, new_uuid())
    ctx.deliver(c, other.id, vote853(epoch + 2, other, wrong_dir, epoch, 100))
    assert_vote_response(ctx, M.INVALID_VOTER_KEY, epoch + 2, -1, False)
    assert c.quorum().is_unattached_not_voted()


def test_invalid_voter_replica_begin_quorum_epoch_request():
    """testInvalidVoterReplicaBeginQuorumEpochRequest: the leader is followed, but a
    BeginQuorumEpoch naming another voter key is answered INVALID_VOTER_KEY."""
    local = ReplicaKey(LOCAL, new_uuid())
    voter2, voter3 = ReplicaKey(LOCAL + 1), ReplicaKey(LOCAL + 2)
    c, ctx = build853(local, controller_voter_set(local, voter2, voter3), static=True,
                      unknown=4)
    assert_unknown_leader(c, 4)

    def begin(voter):
        ctx.deliver(c, voter3.id, begin853(5, voter3.id, voter))
        (_, resp), = ctx.take(M.BeginQuorumEpochResponse)
        return resp.error, resp.leader_epoch, resp.leader_id

    assert begin(ReplicaKey(10, new_uuid())) == (M.INVALID_VOTER_KEY, 5, voter3.id)
    assert_elected_leader(c, 5, voter3.id)
    assert begin(ReplicaKey(local.id, new_uuid())) == (M.INVALID_VOTER_KEY, 5, voter3.id)
    assert_elected_leader(c, 5, voter3.id)
    assert begin(local) == (M.NONE, 5, voter3.id)


def test_initialize_as_candidate_and_become_leader_quorum_of_three():
    """testInitializeAsCandidateAndBecomeLeaderQuorumOfThree (withKip853Rpc): each VoteRequest
    names the voter it asks (VoterId), never the candidate; one grant elects."""
    c, ctx = build(voters=(LOCAL, V2, V3), directory_id=new_uuid())
    assert_unknown_leader(c, 0)
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert_voted_candidate(c, 1, LOCAL)
    reqs = ctx.take(M.VoteRequest)
    assert sorted(d for d, _ in reqs) == [V2, V3]
    for dst, req in reqs:
        assert (req.candidate_epoch, req.last_offset_epoch, req.last_offset) == (1, 0, 0)
        assert req.voter_id == dst != LOCAL
        assert req.candidate_directory_id == c.reconfig.directory_id
    dst, req = reqs[0]
    ctx.deliver(c, dst, M.VoteResponse(req.correlation_id, M.NONE, -1, 1, True))
    assert_elected_leader(c, 1, LOCAL)
    assert c.log.end_offset == 1
    ctx.poll(c)
    begins = ctx.take(M.BeginQuorumEpochRequest)
    assert sorted((d, r.leader_epoch, r.voter_id) for d, r in begins) == [(V2, 1, V2), (V3, 1, V3)]
    record = c.log.entries[0][2]
    assert (record.leader_id, set(record.voters), set(record.granting_voters)) == (
        LOCAL, {LOCAL, V2, V3}, {LOCAL, dst})


def test_grant_votes_from_higher_epoch_after_resigning_leadership():
    """testGrantVotesFromHigherEpochAfterResigningLeadership (withKip853Rpc): the granted vote
    is the candidate's ReplicaKey, directory id included (a kraft.version 1 quorum-state file
    holds it as votedDirectoryId)."""
    local, remote = ReplicaKey(LOCAL, new_uuid()), ReplicaKey(LOCAL + 1, new_uuid())
    c, ctx = build853(local, controller_voter_set(local, remote), elected=(2, LOCAL))
    assert c.quorum().is_resigned() and c.log.end_offset == 0
    ctx.deliver(c, remote.id, vote853(3, remote, local, c.log.last_fetched_epoch,
                                      c.log.end_offset))
    assert c.quorum().is_unattached_and_voted()
    assert_voted_candidate(c, 3, remote.id)
    assert c.state.voted_key == remote
    assert f'"votedDirectoryId":"{remote.directory_id}"' in c.quorum_state_json()
    assert_vote_response(ctx, M.NONE, 3, -1, True)


def test_reject_votes_from_same_epoch_after_resigning_leadership():
    """testRejectVotesFromSameEpochAfterResigningLeadership (withKip853Rpc): a leader of epoch 2
    restarted as Resigned never votes for another candidate of epoch 2."""
    local, remote = ReplicaKey(LOCAL, new_uuid()), ReplicaKey(LOCAL + 1, new_uuid())
    c, ctx = build853(local, controller_voter_set(local, remote), elected=(2, LOCAL))
    assert_elected_leader(c, 2, LOCAL)
    ctx.deliver(c, remote.id, vote853(2, remote, local, c.log.last_fetched_epoch,
                                      c.log.end_offset))
    assert_vote_response(ctx, M.NONE, 2, LOCAL, False)


def test_a_vote_binds_to_the_candidates_directory():
    """KIP-853 (UnattachedState.canGrantVote with the votedKey of the request's
    CandidateDirectoryId): once a vote is granted to (id, directory), the same id with another
    directory (a replaced disk) is refused in that epoch, the same key is granted again."""
    local, remote = ReplicaKey(LOCAL, new_uuid()), ReplicaKey(LOCAL + 1, new_uuid())
    c, ctx = build853(local, controller_voter_set(local, remote), unknown=2)
    ctx.deliver(c, remote.id, vote853(3, remote, local, 0, 0))
    assert_vote_response(ctx, M.NONE, 3, -1, True)
    ctx.deliver(c, remote.id, vote853(3, ReplicaKey(remote.id, new_uuid()), local, 0, 0))
    assert_vote_response(ctx, M.NONE, 3, -1, False)
    ctx.deliver(c, remote.id, vote853(3, remote, local, 0, 0))
    assert_vote_response(ctx, M.NONE, 3, -1, True)


def test_leader_keys_a_fetch_by_its_replica_directory_id():
    """KIP-853 at the client (tryCompleteFetchRequest: ReplicaKey.of(replicaId,
    replicaDirectoryId)): a Fetch from a voter's id with another directory id is an observer's
    (the high watermark does not move, DescribeQuorum lists it as an observer); the voter's own
    Fetch commits. Each follower's Fetch carries its directory id."""
    c, ctx, local, (follower,) = leader853(1)
    epoch, leo = c.epoch, c.log.end_offset
    replaced = ReplicaKey(follower.id, new_uuid())
    ctx.deliver(c, follower.id, M.RaftFetchRequest(101, follower.id, epoch, leo, epoch, 0,
                                                   replica_directory_id=replaced.directory_id))
    assert ctx.one(M.RaftFetchResponse)[1].high_watermark == -1
    described = c.describe_quorum(ctx.now)
    assert [r["replica_id"] for r in described["observers"]] == [follower.id]
    ctx.deliver(c, follower.id, M.RaftFetchRequest(102, follower.id, epoch, leo, epoch, 0,
                                                   replica_directory_id=follower.directory_id))
    assert ctx.one(M.RaftFetchResponse)[1].high_watermark == leo
    _f, fctx = build853(follower, controller_voter_set(local, follower),
                        elected=(epoch, local.id))
    (_, sent), = fctx.take(M.RaftFetchRequest)
    assert sent.replica_directory_id == follower.directory_id


def test_node_directory_id():
    """testNodeDirectoryId: the zero Uuid is no directory id (IllegalArgumentException)."""
    with pytest.raises(IllegalArgumentException, match="zero uuid"):
        KafkaRaftClient(LOCAL, (LOCAL, V2), pre_vote=False, directory_id=ZERO_UUID)


# --- KafkaRaftClientTest: resign, append, describe, the high watermark across elections ----------
def test_resign_in_older_epoch_ignored():
    """testResignInOlderEpochIgnored: resign(epoch - 1) is a call already fulfilled."""
    c, ctx = build()
    epoch = become_leader(c, ctx)
    c.resign(ctx, epoch - 1)
    ctx.poll(c)
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert_elected_leader(c, epoch, LOCAL)
    assert c.quorum().is_leader()


def test_cannot_resign_with_larger_epoch_than_current_epoch():
    """testCannotResignWithLargerEpochThanCurrentEpoch."""
    c, ctx = build()
    epoch = become_leader(c, ctx)
    with pytest.raises(IllegalArgumentException, match="larger than the current epoch"):
        c.resign(ctx, epoch + 1)


def test_append_failed_with_fenced_epoch():
    """testAppendFailedWithFencedEpoch: prepareAppend of a newer epoch is an
    IllegalArgumentException, of an older one a NotLeaderException."""
    c, ctx = build()
    epoch = become_leader(c, ctx)
    with pytest.raises(IllegalArgumentException, match="larger than the current epoch"):
        c.prepare_append(ctx, epoch + 1, ["a"])
    with pytest.raises(NotLeaderError, match="is stale"):
        c.prepare_append(ctx, epoch - 1, ["a"])
    offset = c.log.end_offset
    assert c.prepare_append(ctx, epoch, ["a"]) == offset


def test_describe_quorum_non_leader():
    """testDescribeQuorumNonLeader: NOT_LEADER_OR_FOLLOWER."""
    c, ctx = build(voters=(LOCAL, V2, V3), unknown=2)
    with pytest.raises(NotLeaderError, match="NOT_LEADER_OR_FOLLOWER"):
        c.describe_quorum(ctx.now)


def _leader_with_high_watermark_10():
    """A leader of epoch 7 over a log of epochs 2 and 4 (9 records), high watermark 10."""
    log = [(2, ["a", "b", "c"]), (4, ["d", "e", "f"]), (4, ["g", "h", "i"])]
    c, ctx = build(log=log, unknown=6)
    epoch = become_leader(c, ctx)
    assert epoch == 7 and c.log.end_offset == 10
    ctx.deliver(c, V2, fetch_request(epoch, V2, 10, epoch))
    assert ctx.one(M.RaftFetchResponse)[1].high_watermark == 10
    return c, ctx, epoch


def test_handle_commit_callback_fires_in_voted_state():
    """testHandleCommitCallbackFiresInVotedState (the state half): a leader that grants a vote
    of a later epoch keeps its high watermark while it waits."""
    c, ctx, epoch = _leader_with_high_watermark_10()
    ctx.deliver(c, V2, M.VoteRequest(101, epoch + 1, V2, epoch, 10))
    assert_voted_candidate(c, epoch + 1, V2)
    assert c.quorum().high_watermark() == 10


def test_handle_commit_callback_fires_in_candidate_state():
    """testHandleCommitCallbackFiresInCandidateState (the state half): through Unattached
    (a refused vote) and Candidate the high watermark stays known."""
    c, ctx, epoch = _leader_with_high_watermark_10()
    ctx.deliver(c, V2, M.VoteRequest(101, epoch + 1, V2, epoch, 9))
    assert_unknown_leader(c, epoch + 1)
    assert c.quorum().high_watermark() == 10
    ctx.advance(c, 2 * ELECTION_TIMEOUT_MS)
    assert_voted_candidate(c, epoch + 2, LOCAL)
    assert c.quorum().high_watermark() == 10


# --- KafkaRaftClientFetchTest (4.x, KIP-1166): the fetcher's high watermark -----------------------
REMOTE = 7          # an observer (Kafka: the third replica key, not a voter)
DEFAULT_HWM = M.RaftFetchRequest.__dataclass_fields__["high_watermark"].default


def fast_leader(advance_hwm: bool):
    """withRaftProtocol(KIP_1166_PROTOCOL), a log of 6 records of epoch 2, unattachedToLeader;
    ``advance_hwm``: advanceLocalLeaderHighWatermarkToLogEndOffset (the voter fetches at the
    log end)."""
    c, ctx = build(log=[(2, ["a", "b", "c"]), (2, ["d", "e", "f"])], unknown=2,
                   fast_hwm_replication=True)
    epoch = become_leader(c, ctx)
    if advance_hwm:
        ctx.deliver(c, V2, fetch_request(epoch, V2, c.log.end_offset, epoch))
        assert ctx.one(M.RaftFetchResponse)[1].high_watermark == c.log.end_offset
    return c, ctx, epoch


def remote_fetch(c, ctx, epoch, hwm, corr=200):
    req = M.RaftFetchRequest(corr, REMOTE, epoch, c.log.end_offset, c.log.last_fetched_epoch,
                             2**31 - 1, hwm)
    ctx.deliver(c, REMOTE, req)
    return [m for d, m in ctx.take(M.RaftFetchResponse) if d == REMOTE]


def assert_deferred(c, ctx):
    for _ in range(10):
        ctx.advance(c, 1)
        assert ctx.take(M.RaftFetchResponse) == []


def test_high_watermark_sent_in_fetch_request():
    """testHighWatermarkSentInFetchRequest: a follower's Fetch carries its high watermark, -1
    while unknown."""
    c, ctx = build(log=[(2, ["a", "b", "c"]), (2, ["d", "e", "f"])], elected=(2, V2),
                   fast_hwm_replication=True)
    leo = c.log.end_offset
    (_, req), = ctx.take(M.RaftFetchRequest)
    assert (req.current_leader_epoch, req.fetch_offset, req.last_fetched_epoch,
            req.high_watermark) == (2, leo, 2, -1)
    c.handle(ctx, V2, M.RaftFetchResponse(req.correlation_id, M.NONE, V2, 2, leo))
    ctx.poll(c)
    (_, req), = ctx.take(M.RaftFetchRequest)
    assert (req.fetch_offset, req.high_watermark) == (leo, leo)


def test_default_hwm_deferred():
    """testDefaultHwmDeferred: a Fetch without the field (an older version: Long.MAX_VALUE) at
    the log end waits in the purgatory."""
    c, ctx, epoch = fast_leader(True)
    assert remote_fetch(c, ctx, epoch, DEFAULT_HWM) == []
    assert_deferred(c, ctx)


def test_unknown_hwm_deferred_when_leader_does_not_know_hwm():
    """testUnknownHwmDeferredWhenLeaderDoesNotKnowHwm."""
    c, ctx, epoch = fast_leader(False)
    assert c.high_watermark == -1
    assert remote_fetch(c, ctx, epoch, -1) == []
    assert_deferred(c, ctx)


def test_outdated_hwm_completed_when_leader_knows_hwm():
    """testOutdatedHwmCompletedWhenLeaderKnowsHwm: a fetcher whose high watermark is unknown or
    behind the leader's is answered at once."""
    c, ctx, epoch = fast_leader(True)
    leo = c.log.end_offset
    for hwm in (-1, leo - 1):
        (resp,) = remote_fetch(c, ctx, epoch, hwm)
        assert (resp.error, resp.leader_epoch, resp.high_watermark) == (M.NONE, epoch, leo)


def test_unchanged_high_watermark_deferred():
    """testUnchangedHighWatermarkDeferred."""
    c, ctx, epoch = fast_leader(True)
    assert remote_fetch(c, ctx, epoch, c.log.end_offset) == []
    assert_deferred(c, ctx)


def test_updated_high_watermark_completed():
    """testUpdatedHighWatermarkCompleted: the parked Fetch completes as soon as the leader's
    high watermark moves, with the voter's own answer."""
    c, ctx, epoch = fast_leader(False)
    ctx.deliver(c, V2, fetch_request(epoch, V2, 3, 2))
    assert ctx.one(M.RaftFetchResponse)[1].error == M.NONE
    leo = c.log.end_offset
    assert remote_fetch(c, ctx, epoch, leo) == []
    assert_deferred(c, ctx)
    ctx.deliver(c, V2, fetch_request(epoch, V2, leo, epoch))
    responses = ctx.take(M.RaftFetchResponse)
    assert sorted(d for d, _ in responses) == sorted([REMOTE, V2])
    assert {(r.error, r.leader_epoch, r.high_watermark) for _, r in responses} == {
        (M.NONE, epoch, leo)}


# --- RaftEventSimulationTest: invariants over a simulated KRaft cluster ---------------------------
class RaftInvariants:
    """RaftEventSimulationTest's invariants, checked after every event of a Cluster run (its
    ``check``): MonotonicEpoch, SingleLeader, MonotonicHighWatermark,
    MajorityReachedHighWatermark, and ConsistentCommittedData as each node's high watermark
    moves (``validate`` repeats the last in full)."""

    def __init__(self, cluster: Cluster) -> None:
        self.cluster = cluster
        self.epochs: dict[int, int] = {}
        self.leaders: dict[int, int] = {}
        self.leader_hw = -1
        self.committed: dict[int, tuple] = {}
        self.checked: dict[int, int] = {}
        self.events = 0

    def nodes(self) -> dict:
        """Every Raft client of the cluster (voters and observers), with whether it runs."""
        c = self.cluster
        out = {i: (n.raft, n.state == "running") for i, n in c.kraft.nodes.items()}
        for b in c.brokers.values():
            if b.lifecycle is not None:
                out[b.id] = (b.lifecycle.raft, b.state == "running")
        return out

    def __call__(self, cluster) -> None:
        self.events += 1
        nodes = self.nodes()
        for node_id, (raft, running) in nodes.items():
            self._verify_election(node_id, raft, running)
            if running:
                self._verify_committed(node_id, raft, raft.high_watermark)
        self._verify_leader(nodes)

    def _verify_election(self, node_id, raft, running) -> None:
        epoch, leader, _ = raft.store.read_election_state()
        old = self.epochs.get(node_id, 0)
        assert epoch >= old, f"MonotonicEpoch: node {node_id} went from epoch {old} to {epoch}"
        self.epochs[node_id] = epoch
        if running and raft.state is not None:
            assert raft.epoch == epoch, f"node {node_id}: epoch {raft.epoch}, persisted {epoch}"
        if leader >= 0:
            known = self.leaders.setdefault(epoch, leader)
            assert known == leader, f"SingleLeader: epoch {epoch} has leaders {known}, {leader}"

    def _verify_leader(self, nodes) -> None:
        leaders = [r for r, running in nodes.values()
                   if running and r.state is not None and r.state_name == "Leader"]
        if not leaders:
            return
        lead = max(leaders, key=lambda r: r.epoch)
        hw = lead.high_watermark
        if hw < 0:
            return
        assert hw >= self.leader_hw, (f"MonotonicHighWatermark: {self.leader_hw} -> {hw} "
                                      f"(leader {lead.node_id})")
        self.leader_hw = hw
        reached = sum(1 for v in lead.voters if v in nodes and nodes[v][0].log.end_offset >= hw)
        assert reached >= len(lead.voters) // 2 + 1, (
            f"MajorityReachedHighWatermark: {reached} of {lead.voters} reached {hw}")

    def _verify_committed(self, node_id, raft, hw) -> None:
        start = min(self.checked.get(node_id, 0), max(hw, 0))
        entries = raft.log.entries
        for offset in range(start, hw):
            _off, epoch, record = entries[offset]
            known = self.committed.setdefault(offset, (epoch, record))
            assert known == (epoch, record), (
                f"ConsistentCommittedData: offset {offset} on node {node_id} is "
                f"{(epoch, record)}, committed as {known}")
        self.checked[node_id] = max(self.checked.get(node_id, 0), hw)

    def validate(self) -> None:
        """ConsistentCommittedData in full: every running node's log below its high watermark
        is the committed prefix."""
        for node_id, (raft, running) in self.nodes().items():
            if running:
                self.checked[node_id] = 0
                self._verify_committed(node_id, raft, raft.high_watermark)


def simulation(seed: int, version: str = "4.1", controllers: int = 3):
    c = Cluster(3, seed=seed, kafka_version=version, controllers=controllers,
                metadata_mode="kraft")
    return c, RaftInvariants(c)


def controllers(c) -> list[int]:
    return sorted(c.kraft.nodes)


def latest_leader(c) -> int | None:
    node = c.kraft.raft_leader()
    return node.id if node is not None else None


def max_high_watermark(c, nodes=None) -> int:
    rafts = RaftInvariants(c).nodes()
    return max(rafts[n][0].high_watermark for n in (nodes or rafts))


def all_reached(c, offset: int, nodes=None) -> bool:
    """allReachedHighWatermark: every running node (of ``nodes``) has a high watermark of at
    least ``offset``."""
    rafts = RaftInvariants(c).nodes()
    return all(rafts[n][0].high_watermark >= offset for n in (nodes or rafts)
               if rafts[n][1])


def drive(c, inv: RaftInvariants, condition, timeout_ms: int = 60_000) -> None:
    """scheduler.runUntil(condition) with SequentialAppendAction: a topic is created whenever a
    controller is active (each is a few metadata records), then 200 ms run."""
    deadline = c.now + timeout_ms
    topics = len(c.kraft.image.topics) if hasattr(c.kraft.image, "topics") else 0
    while not condition(c):
        assert c.now < deadline, f"condition not reached by {c.now} ms"
        if c.controller_id() >= 0:
            topics += 1
            try:
                c.create_topic(f"sim{topics}", 1, 1, wait=False)
            except ClusterError:
                pass
        c.run_until(condition, 200, check=inv)
    inv.validate()


def has_consistent_leader(c) -> bool:
    leader = latest_leader(c)
    if leader is None:
        return False
    epoch = c.kraft.nodes[leader].raft.epoch
    return all(r.epoch == epoch and r.leader_id == leader
               for r, running in RaftInvariants(c).nodes().values() if running)


SEEDS = [(1, "4.1"), (2, "3.9"), (3, "3.7")]


@pytest.mark.parametrize("seed,version", SEEDS)
def test_can_elect_initial_leader(seed, version):
    """canElectInitialLeader: one leader that every node follows, and every node reaches a
    high watermark 10 past the first one seen."""
    c, inv = simulation(seed, version)
    drive(c, inv, has_consistent_leader)
    target = max_high_watermark(c) + 10
    drive(c, inv, lambda cl: all_reached(cl, target))


@pytest.mark.parametrize("seed,version,graceful", [(1, "4.1", False), (2, "3.9", True),
                                                   (3, "4.0", False)])
def test_can_elect_new_leader_after_old_leader_failure(seed, version, graceful):
    """canElectNewLeaderAfterOldLeaderFailure: the leader crashes (or shuts down); the rest
    elect a new one and commit more; the old leader restarts and catches up."""
    c, inv = simulation(seed, version)
    drive(c, inv, has_consistent_leader)
    drive(c, inv, lambda cl: max_high_watermark(cl) >= 10)
    leader = latest_leader(c)
    (c.shutdown if graceful else c.crash)(leader)
    target = max_high_watermark(c) + 10
    drive(c, inv, lambda cl: all_reached(cl, target))
    c.start(leader)
    target = max_high_watermark(c) + 10
    drive(c, inv, lambda cl: all_reached(cl, target))


@pytest.mark.parametrize("seed,version", [(4, "4.1"), (5, "3.9")])
def test_can_recover_after_all_nodes_killed(seed, version):
    """canRecoverAfterAllNodesKilled: every controller crashes; a majority restarts and the
    quorum commits again past what it had."""
    c, inv = simulation(seed, version)
    drive(c, inv, lambda cl: max_high_watermark(cl) >= 10)
    hw = max_high_watermark(c)
    for node in controllers(c):
        c.crash(node)
    c.run(1000, check=inv)
    majority = controllers(c)[:2]
    for node in majority:
        c.start(node)
    drive(c, inv, lambda cl: all_reached(cl, hw + 10, majority))


@pytest.mark.parametrize("seed,version", [(6, "4.1"), (7, "3.7")])
def test_can_elect_new_leader_after_old_leader_partitioned_away(seed, version):
    """canElectNewLeaderAfterOldLeaderPartitionedAway: the nodes the leader can no longer reach
    elect another and commit more."""
    c, inv = simulation(seed, version)
    drive(c, inv, lambda cl: max_high_watermark(cl) >= 10)
    leader = latest_leader(c)
    rest = [n for n in controllers(c) + sorted(c.brokers) if n != leader]
    c.partition_network([leader], rest)
    target = max_high_watermark(c, rest) + 10
    drive(c, inv, lambda cl: all_reached(cl, target, rest))


def test_can_make_progress_if_majority_is_reachable():
    """canMakeProgressIfMajorityIsReachable: five controllers split two / three; the three
    commit past the two; healed, everyone catches up."""
    c, inv = simulation(8, "4.1", controllers=5)
    drive(c, inv, lambda cl: max_high_watermark(cl) >= 10)
    ids = controllers(c)
    minority, majority = ids[:2], ids[2:] + sorted(c.brokers)
    c.partition_network(minority, majority)
    end = max(c.kraft.nodes[n].raft.log.end_offset for n in ids)
    drive(c, inv, lambda cl: max_high_watermark(cl, majority) >= 2 * end)
    assert max_high_watermark(c, majority) > max_high_watermark(c, minority)
    c.heal()
    end = max(c.kraft.nodes[n].raft.log.end_offset for n in ids)
    drive(c, inv, lambda cl: all_reached(cl, 2 * end))


def test_can_make_progress_after_back_to_back_leader_failures():
    """canMakeProgressAfterBackToBackLeaderFailures: the leader is cut off; as soon as another
    is elected the first comes back and the second is cut off; the quorum still commits."""
    c, inv = simulation(9, "4.0")
    drive(c, inv, lambda cl: max_high_watermark(cl) >= 10)
    everyone = controllers(c) + sorted(c.brokers)
    first = latest_leader(c)
    c.partition_network([first], [n for n in everyone if n != first])
    drive(c, inv, lambda cl: latest_leader(cl) not in (None, first))
    second = latest_leader(c)
    c.heal()
    c.partition_network([second], [n for n in everyone if n != second])
    target = max_high_watermark(c) + 10
    drive(c, inv, lambda cl: max_high_watermark(cl) >= target)


@pytest.mark.parametrize("seed,version", [(11, "4.1"), (12, "4.0"), (13, "3.9"), (14, "3.7")])
def test_invariants_hold_under_random_faults(seed, version):
    """The invariants of RaftEventSimulationTest under a seeded random schedule: controller
    crashes and restarts, broker crashes, network partitions and heals, metadata writes; after
    healing every node reaches the leader's high watermark."""
    c, inv = simulation(seed, version)
    r = random.Random(seed)
    ids = controllers(c)
    everyone = ids + sorted(c.brokers)
    for step in range(25):
        x = r.random()
        up = [n for n in ids if c.kraft.nodes[n].state == "running"]
        if x < 0.2 and len(up) > 1:
            c.crash(r.choice(up))
        elif x < 0.35:
            down = [n for n in everyone if n not in up and
                    (n in ids or c.brokers[n].state != "running")]
            if down:
                c.start(r.choice(down))
        elif x < 0.45:
            group = everyone[:]
            r.shuffle(group)
            cut = r.randint(1, len(group) - 1)
            c.heal()
            c.partition_network(group[:cut], group[cut:])
        elif x < 0.55:
            c.heal()
        elif x < 0.6:
            running = [b for b in sorted(c.brokers) if c.brokers[b].state == "running"]
            if len(running) > 1:
                c.crash(r.choice(running))
        elif c.controller_id() >= 0:
            try:
                c.create_topic(f"f{step}", 1, 1, wait=False)
            except ClusterError:
                pass
        c.run(r.choice([100, 500, 1500, 3000]), check=inv)
    c.heal()
    for n in everyone:
        down = c.kraft.nodes[n].state != "running" if n in ids else (
            c.brokers[n].state != "running")
        if down:
            c.start(n)
    drive(c, inv, has_consistent_leader)
    target = max_high_watermark(c)
    drive(c, inv, lambda cl: all_reached(cl, target))
    assert inv.events > 1000
