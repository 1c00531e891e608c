"""Partition and its replicas' fetch state driven by Kafka's names, following the ISR / HW /
min-ISR / fetch-state cases of Kafka's core/src/test/scala/unit/kafka/cluster/PartitionTest.scala,
ReplicaTest.scala and server/IsrExpirationTest.scala (trunk 1eb7644). Scenarios and code are
our own; each test names the Kafka test it follows. Kafka's Option results are None here."""

from __future__ import annotations

import pytest

from kafkasim.core.fake import FakeContext
from kafkasim.core.rules import NEVER_MS

LAG_MS = 30_000   # replica.lag.time.max.ms default since 2.5 (KIP-537)


def _leader(isr=(1, 2, 3), replicas=(1, 2, 3), epoch=1, min_isr=1, version="3.9"):
    ctx = FakeContext(broker_id=1, kafka_version=version,
                      topic_config={"min.insync.replicas": min_isr})
    part = ctx.partition("t", 0)
    part.make_leader(ctx, epoch, isr, replicas, 1, 1)
    return ctx, part


# PartitionTest.testAtMinIsr
def test_at_min_isr_only_on_the_leader():
    ctx = FakeContext(broker_id=1)
    part = ctx.partition("t", 0)
    assert not part.is_at_min_isr(ctx)
    part.make_leader(ctx, 8, (1,), (1, 2, 3), 1, 3)
    assert part.is_at_min_isr(ctx)


# PartitionTest.testIsUnderMinIsr (and its isLeader check: a follower, whose ISR is empty, is
# never under min ISR)
def test_under_min_isr_only_on_the_leader():
    ctx, part = _leader(isr=(1, 2), replicas=(1, 2), epoch=0, min_isr=2)
    assert not part.is_under_min_isr(ctx)
    part.make_leader(ctx, 1, (1,), (1, 2), 2, 0)
    assert part.is_under_min_isr(ctx)
    part.make_follower(ctx, 2, 2, (2,), (1, 2), 3, 0)
    assert part.isr == () and not part.is_under_min_isr(ctx)
    assert not part.is_at_min_isr(ctx)


# PartitionTest.testUnderReplicatedPartitionsCorrectSemantics
def test_under_replicated_while_the_isr_is_smaller_than_the_replica_set():
    ctx, part = _leader(isr=(1, 2), epoch=6)
    assert part.is_under_replicated()
    part.make_leader(ctx, 6, (1, 2, 3), (1, 2, 3), 1, 3)
    assert not part.is_under_replicated()
    part.make_follower(ctx, 2, 7, (2, 3), (1, 2, 3), 2, 3)
    assert not part.is_under_replicated()


def test_leader_queries_by_kafka_names():
    # PartitionTest's getLeaderEpoch / getPartitionEpoch / leaderReplicaIdOpt /
    # leaderEpochStartOffsetOpt / inSyncReplicaIds / leaderLogIfLocal checks around makeLeader
    # and makeFollower
    ctx = FakeContext(broker_id=1)
    part = ctx.partition("t", 0)
    assert part.leader_replica_id_opt() is None and part.leader_log_if_local() is None
    part.log.append_as_leader([0, 1, 2], [1, 1, 1], 0, 0)
    part.make_leader(ctx, 5, (1, 2), (1, 2, 3), 7, 1)
    assert (part.get_leader_epoch(), part.get_partition_epoch()) == (5, 7)
    assert part.leader_replica_id_opt() == 1 and part.leader_epoch_start_offset_opt() == 3
    assert part.in_sync_replica_ids() == {1, 2}
    assert part.leader_log_if_local() is part.local_log_or_exception() is part.log
    assert part.get_replica(1) is None   # the leader's own replica is not a remote one
    assert sorted(r.broker_id for r in part.remote_replicas()) == [2, 3]
    part.make_follower(ctx, 3, 6, (3,), (1, 2, 3), 8, 1)
    assert part.leader_replica_id_opt() == 3 and part.leader_epoch_start_offset_opt() is None
    assert part.leader_log_if_local() is None and part.in_sync_replica_ids() == set()
    assert part.get_replica(2) is None and part.remote_replicas() == []


def _fetch(ctx, part, replica, offset, at=None):
    part.update_follower_fetch_state(ctx, replica, offset, 0, part.log.log_end_offset,
                                     ctx.now if at is None else at)


def _leader_with_records(n=10, lag_ms=100, isr=(1, 2, 3)):
    ctx = FakeContext(broker_id=1, config={"replica.lag.time.max.ms": lag_ms,
                                           "replica.fetch.wait.max.ms": min(lag_ms, 500)})
    part = ctx.partition("t", 0)
    part.log.append_as_leader(list(range(n)), [1] * n, 0, 0)
    part.make_leader(ctx, 1, isr, (1, 2, 3), 1, 1)
    return ctx, part


# IsrExpirationTest.testIsrExpirationForStuckFollowers (replica.lag.time.max.ms = 100)
def test_a_caught_up_follower_that_stops_fetching_falls_out_of_sync():
    ctx, part = _leader_with_records()
    _fetch(ctx, part, 2, 9)
    _fetch(ctx, part, 3, 9)
    assert part.get_out_of_sync_replicas(ctx) == set()
    ctx.now += 150
    _fetch(ctx, part, 2, 10)
    assert part.get_out_of_sync_replicas(ctx) == {3}
    assert part.get_out_of_sync_replicas(ctx, max_lag_ms=200) == set()


# IsrExpirationTest.testIsrExpirationIfNoFetchRequestMade
def test_a_follower_that_never_fetches_falls_out_of_sync():
    ctx, part = _leader_with_records()
    assert part.get_out_of_sync_replicas(ctx) == set()
    ctx.now += 150
    assert part.get_out_of_sync_replicas(ctx) == {2, 3}


# IsrExpirationTest.testIsrExpirationForSlowFollowers
def test_a_follower_that_fetches_but_never_reaches_the_leo_falls_out_of_sync():
    ctx, part = _leader_with_records()
    _fetch(ctx, part, 2, 8)
    _fetch(ctx, part, 3, 10)
    assert part.get_out_of_sync_replicas(ctx) == set()
    ctx.now += 75
    _fetch(ctx, part, 2, 9)
    _fetch(ctx, part, 3, 10)
    assert part.get_out_of_sync_replicas(ctx) == set()
    ctx.now += 75
    _fetch(ctx, part, 3, 10)
    assert part.get_out_of_sync_replicas(ctx) == {2}
    _fetch(ctx, part, 2, 10)
    assert part.get_out_of_sync_replicas(ctx) == set()


# IsrExpirationTest.testIsrExpirationForCaughtUpFollowers: at the leader's LEO, never out of sync
def test_a_follower_at_the_leaders_leo_stays_in_sync_however_long_ago_it_fetched():
    ctx, part = _leader_with_records()
    _fetch(ctx, part, 2, 10)
    _fetch(ctx, part, 3, 10)
    ctx.now += 10_000
    assert part.get_out_of_sync_replicas(ctx) == set()


# PartitionTest: getOutOfSyncReplicas is empty while an ISR change is in flight
def test_no_out_of_sync_replicas_while_an_isr_change_is_in_flight():
    ctx, part = _leader_with_records()
    ctx.now += 150
    part.maybe_shrink_isr(ctx)
    assert part.pending is not None and part.pending.kind == "shrink"
    assert part.get_out_of_sync_replicas(ctx) == set()
    assert part.in_sync_replica_ids() == {1, 2, 3}   # the committed ISR until the answer


# ReplicaTest.testUpdateFetchState (a replica new to a sitting leader: ReplicaState.Empty)
def test_update_fetch_state_moves_last_caught_up_time():
    ctx, part = _leader_with_records(n=10, isr=(1, 2))
    part.make_leader(ctx, 1, (1,), (1, 2, 3), 2, 1)   # 3 did not exist before: Empty state
    ctx.now = 1_000
    part.update_follower_fetch_state(ctx, 3, 5, 1, 10, 1_000)
    st = part.get_replica(3)
    assert (st.log_start_offset, st.log_end_offset, st.last_fetch_leader_log_end_offset,
            st.last_fetch_time_ms) == (1, 5, 10, 1_000)
    # 5 >= lastFetchLeaderLogEndOffset 0: caught up as of the previous fetch, which never was
    # (Kafka's 0, 1970; NEVER_MS here, as simulated time starts at 0)
    assert st.last_caught_up_time_ms == NEVER_MS
    part.log.append_as_leader(list(range(5)), [1] * 5, 1, 0)
    ctx.now = 2_000
    part.update_follower_fetch_state(ctx, 3, 10, 2, 15, 2_000)
    assert (st.last_caught_up_time_ms, st.last_fetch_leader_log_end_offset) == (1_000, 15)
    ctx.now = 3_000
    part.update_follower_fetch_state(ctx, 3, 15, 3, 15, 3_000)
    assert (st.log_start_offset, st.last_caught_up_time_ms, st.last_fetch_time_ms) == \
        (3, 3_000, 3_000)


# ReplicaTest.testIsCaughtUpWhenReplicaIsCaughtUpToLogEnd / ...IsNotCaughtUpToLogEnd
@pytest.mark.parametrize(("fetches", "leader_end", "caught_up", "later"), [
    ([(10, 10)], 10, True, True),
    ([(5, 10)], 10, False, False),
    ([(5, 10), (10, 15)], 16, True, False),
])
def test_is_caught_up(fetches, leader_end, caught_up, later):
    ctx, part = _leader_with_records(n=10, isr=(1, 2))
    st = part.get_replica(3)
    assert not st.is_caught_up(leader_end, ctx.now, LAG_MS)
    for offset, leo in fetches:
        ctx.now += 10
        part.update_follower_fetch_state(ctx, 3, offset, 0, leo, ctx.now)
    assert st.is_caught_up(leader_end, ctx.now, LAG_MS) is caught_up
    assert st.is_caught_up(leader_end, ctx.now + LAG_MS + 1, LAG_MS) is later


# ReplicaTest.testResetReplicaStateWhenLeaderIsReelected* / ...NewLeaderIsElected*
@pytest.mark.parametrize("in_sync", [True, False])
def test_reset_replica_state_on_reelection_and_new_election(in_sync):
    ctx, part = _leader_with_records(n=10)
    ctx.now = 500
    _fetch(ctx, part, 2, 10)
    part.log.append_as_leader([10], [1], 1, 0)
    ctx.now = 1_000
    isr = (1, 2) if in_sync else (1, 3)
    part.make_leader(ctx, 2, isr, (1, 2, 3), 2, 1)   # re-elected, new epoch
    st = part.get_replica(2)
    assert (st.log_start_offset, st.log_end_offset) == (0, 10)   # kept
    assert st.last_fetch_leader_log_end_offset == 11
    # in sync: lag clocks restart now; not in sync: both "never" (Kafka's 0)
    assert st.last_caught_up_time_ms == (1_000 if in_sync else NEVER_MS)
    assert st.last_fetch_time_ms == (1_000 if in_sync else NEVER_MS)
    assert st.is_caught_up(11, 1_000, LAG_MS) is in_sync
    part.make_follower(ctx, 3, 3, (3,), (1, 2, 3), 3, 1)
    ctx.now = 2_000
    part.make_leader(ctx, 4, isr, (1, 2, 3), 4, 1)   # a new leader: states start again
    st = part.get_replica(2)
    assert (st.log_start_offset, st.log_end_offset, st.last_fetch_leader_log_end_offset) == \
        (-1, -1, -1)
    assert st.is_caught_up(11, 2_000, LAG_MS) is in_sync
