"""KafkaRaftClientTest / KafkaRaftClientPreVoteTest cases not yet ported, read at 4.3.0
(confluentinc/kafka a9ce322153, raft/src/test/java/org/apache/kafka/raft/).

Adaptation to kafkasim: the KIP-853 test context of tests/test_raft_states_kafka.py
(``leader853``: a leader of epoch 4 with kraft.version 1, or 0 with ``static=True``) and the
recording ``Ctx`` of tests/test_raft_client_kafka.py (``deliver`` = deliverRequest + poll,
``advance`` = time.sleep + poll). ``withRaftProtocol(KIP_996_PROTOCOL)`` is the client's
``pre_vote`` switched on. Kafka's bootstrap servers are addresses with ids -2, -3, ...;
kafkasim's are the voter ids, so ``context.bootstrapIds`` is the voter ids.

Left out at 4.3.0: the cluster-id validation cases (no cluster ids), the
testHandleLeaderChangeFires* cases (no RaftClient.Listener registration), KafkaRaftClientFetchTest's
testFetchMaxBytes* / testSentFetchUsesQuorumMaxBytesConfiguration (no batch or fetch size
limits), KIP-1186's testAddVoterCompletesEarlyWithAckWhenCommittedFalse and
KafkaRaftClientAutoJoinTest.testAutoAddNewVoter (AddRaftVoter answered before the commit: not
modelled), KafkaRaftClientAutoJoinTest.testObserversDoNotAutoJoin (canBecomeVoter: kafkasim's
broker observers never get the auto-join option).
"""

from __future__ import annotations

import pytest
from test_raft_client_kafka import Ctx, assert_vote_response
from test_raft_client_more_kafka import FETCH_TIMEOUT_MS as LEADER_FETCH_TIMEOUT_MS
from test_raft_client_more_kafka import (
    local_with_remote_voter_set,
    new_leader_state,
    replica_key,
    vote853,
)
from test_raft_states_kafka import (
    TEST_CONFIG,
    fetch,
    leader853,
    listeners_of,
    static_leader_with_updated_voters,
    update_voter,
)

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft.raft import KafkaRaftClient
from kafkasim.control.kraft.voter_set import ReplicaKey, VoterSet, VotersRecord
from kafkasim.runtime.kraft_cluster import raft_options
from kafkasim.settings.versions import rules_for


@pytest.mark.parametrize("static", [True, False], ids=["kraft0", "kraft1"])
def test_invalid_voter_replica_pre_vote_request(static):
    """KafkaRaftClientPreVoteTest.testInvalidVoterReplicaPreVoteRequest @4.3.0: a PreVote naming
    another voter id, or the local id with another directory id, is answered INVALID_VOTER_KEY
    with the leader's epoch and id, not granted."""
    c, ctx, local, (other,) = leader853(1, static=static)
    c.pre_vote = True
    epoch = c.epoch
    for voter in (ReplicaKey(10, "dir-other-10"), ReplicaKey(local.id, "dir-other-local")):
        req = vote853(epoch, other, voter, epoch, 100)
        req.pre_vote = True
        ctx.deliver(c, other.id, req)
        assert_vote_response(ctx, M.INVALID_VOTER_KEY, epoch, local.id, False)
    assert c.quorum().is_leader() and c.epoch == epoch


def _begin_quorum_targets(ctx) -> set[int]:
    return {d for d, _ in ctx.take(M.BeginQuorumEpochRequest)}


@pytest.mark.parametrize("skips", [True, False], ids=["4.2+", "3.9-4.1"])
def test_begin_quorum_should_not_send_after_fetch_request(skips):
    """KafkaRaftClientTest.testBeginQuorumShouldNotSendAfterFetchRequest @4.3.0 (KAFKA-16926,
    4.2): the leader's BeginQuorumEpoch heartbeat (every fetch.timeout / 2) skips a voter that
    fetched within the last period, and goes to it again once a full period passes without a
    fetch. Before 4.2 (rule raft_begin_quorum_epoch_skips_fetching_voters off) every heartbeat
    goes to every voter. kafkasim: the client option, on from 4.2 (rule
    raft_begin_quorum_epoch_skips_fetching_voters)."""
    c, ctx, _local, (r1, r2) = leader853(1, 2)
    c._poller.begin_quorum_epoch_skips_fetching_voters = skips   # the client option
    epoch = c.epoch
    timeout = c.fetch_timeout_ms // 2          # beginQuorumEpochTimeoutMs
    ctx.take(M.BeginQuorumEpochRequest)
    ctx.advance(c, timeout)
    assert _begin_quorum_targets(ctx) == {r1.id, r2.id}

    partial = timeout // 3
    ctx.advance(c, partial)
    fetch = M.RaftFetchRequest(501, r1.id, epoch, 0, 0, 0, replica_directory_id=r1.directory_id)
    ctx.deliver(c, r1.id, fetch)
    ctx.advance(c, timeout - partial)
    assert _begin_quorum_targets(ctx) == ({r2.id} if skips else {r1.id, r2.id})

    fetch = M.RaftFetchRequest(502, r1.id, epoch, 0, 0, 0, replica_directory_id=r1.directory_id)
    ctx.deliver(c, r1.id, fetch)
    ctx.advance(c, timeout)
    assert _begin_quorum_targets(ctx) == {r1.id, r2.id}


def test_begin_quorum_epoch_skips_fetching_voters_from_4_2():
    """KAFKA-16926 (6b187e9ff9) is in 4.2.0 (a18251bae0), not in 4.1.0 (13f70256db): the
    release rule switches the client option on from 4.2."""
    for version, on in (("4.1", False), ("4.2", True), ("4.3", True)):
        assert raft_options(rules_for(version))["begin_quorum_epoch_skips_fetching_voters"] is on


def test_observer_unattached_send_fetch_to_bootstrap_servers():
    """KafkaRaftClientTest.testObserverUnattachedSendFetchToBootstrapServers @4.3.0: an
    Unattached observer fetches from a bootstrap server to find the leader, and follows the
    leader a FENCED_LEADER_EPOCH answer names."""
    local, leader, other = 10, 11, 12
    c = KafkaRaftClient(local, (leader, other), TEST_CONFIG, pre_vote=True, observer=True)
    ctx = Ctx()
    c.start(ctx)
    (dst, fetch), = ctx.take(M.RaftFetchRequest)
    assert dst in (leader, other)
    assert (fetch.current_leader_epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == (0, 0, 0)
    assert c.quorum().is_unattached() and c.epoch == 0 and c.leader_id == -1
    ctx.deliver(c, dst, M.RaftFetchResponse(fetch.correlation_id, M.FENCED_LEADER_EPOCH,
                                            leader, 0, 0, ()))
    assert c.quorum().is_follower() and (c.epoch, c.leader_id) == (0, leader)


def test_update_voter_after_kraft_version_upgrade():
    """KafkaRaftClientReconfigTest.testUpdateVoterAfterKRaftVersionUpgrade @4.3.0 (KAFKA-16538,
    4.1): a static quorum's leader upgraded to kraft.version 1 still answers UpdateRaftVoter,
    now by writing a VotersRecord with the voter's new endpoints."""
    c, ctx, local, (voter1, voter2) = static_leader_with_updated_voters()
    epoch = c.epoch
    assert c.reconfig.upgrade_kraft_version(ctx, 1, c.state.volatile_voters) is None
    assert c.reconfig.history.last_kraft_version() == 1
    ctx.poll(c)
    for voter in (voter1, voter2):          # advance the HWM to the LEO
        fetch(c, ctx, voter)
    assert c.high_watermark == c.log.end_offset
    more = listeners_of(voter1.id, ("ANOTHER_LISTENER", "localhost", 8990 + voter1.id))
    end = c.log.end_offset
    assert update_voter(c, ctx, voter1, more) == (M.NONE, local.id, epoch)
    ctx.poll(c)
    records = [r for _o, _e, r in c.log.entries[end:]]
    assert [type(r) for r in records] == [VotersRecord]
    written = VoterSet.from_voters_record(records[0])
    assert written.voter_node(voter1.id).endpoints == more
    assert written.voter_keys() == (local, voter1, voter2)


def test_observer_follower_send_fetch_to_best_node():
    """KafkaRaftClientTest.testObserverFollowerSendFetchToBestNode @4.3.0: an observer follows
    the leader of epoch 0; when its Fetch times out it fetches from a bootstrap server, and
    after that one times out from the leader again. kafkasim's bootstrap servers are the voter
    ids, so the random pick (Ctx(random=1)) is the other voter, as Kafka's bootstrap ids
    (-2, -3) are never the leader's."""
    local, leader, other = 10, 11, 12
    c = KafkaRaftClient(local, (leader, other), TEST_CONFIG, pre_vote=True, observer=True,
                        quorum_state={"leader_epoch": 0, "leader_id": leader, "voted_id": -1})
    ctx = Ctx(random=1)
    c.start(ctx)

    def sent_fetch():
        (dst, fetch), = ctx.take(M.RaftFetchRequest)
        assert (fetch.current_leader_epoch, fetch.fetch_offset, fetch.last_fetched_epoch) == \
            (0, 0, 0)
        return dst

    assert sent_fetch() == leader
    ctx.advance(c, c.request_timeout_ms)
    assert sent_fetch() == other
    ctx.advance(c, c.request_timeout_ms)
    assert sent_fetch() == leader
    assert c.quorum().is_follower() and c.leader_id == leader


def test_need_to_send_begin_quorum_requests():
    """LeaderState.needToSendBeginQuorumRequests @4.3.0 (KAFKA-16926; no LeaderStateTest case
    of its own): the remote voters whose last fetch is at least beginQuorumEpochTimeoutMs
    (fetch.timeout / 2) old -- never fetched counts as fetched at -1; never the leader."""
    node1, node2 = replica_key(1, True), replica_key(2, True)
    voters = local_with_remote_voter_set((node1, node2), True)
    state = new_leader_state(voters, 10)
    timeout = LEADER_FETCH_TIMEOUT_MS // 2
    assert state.need_to_send_begin_quorum_requests(0) == []
    assert state.need_to_send_begin_quorum_requests(timeout - 1) == [1, 2]
    state.update_local_state(10, voters)
    state.update_replica_state(node1, timeout, 10)
    assert state.need_to_send_begin_quorum_requests(2 * timeout - 1) == [2]
    assert state.need_to_send_begin_quorum_requests(2 * timeout) == [1, 2]
