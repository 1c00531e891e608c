"""Kafka's replication rules as pure functions (kafkasim.core.rules), against Kafka's own unit
tests and the fact sheet, and the rule swap a notebook uses to show what breaks."""

from __future__ import annotations

import inspect

import pytest

from kafkasim.core import errors as E
from kafkasim.core import rules
from kafkasim.core.rules import (
    NEVER_MS,
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    ReplicaState,
)
from kafkasim.observe.checks import attach
from kafkasim.runtime.cluster import Cluster, ClusterError
from kafkasim.scenarios.scenario import lost_acked

LAG = 30_000


def st(b, leo=-1, caught=NEVER_MS, fetch_leader_leo=-1, fetched=0):
    return ReplicaState(b, log_end_offset=leo, last_caught_up_time_ms=caught,
                        last_fetch_leader_log_end_offset=fetch_leader_leo,
                        last_fetch_time_ms=fetched)


# -- effective min ISR, maximal ISR ---------------------------------------------------------------
def test_effective_min_isr_is_capped_at_the_replica_count_since_3_7():
    assert rules.effective_min_isr(2, 3) == 2
    assert rules.effective_min_isr(3, 2) == 2          # KAFKA-15583
    assert rules.effective_min_isr(3, 2, capped=False) == 3


def test_maximal_isr_counts_a_pending_expansion_only_from_2_7():
    assert rules.maximal_isr((1, 2), (3,)) == (1, 2, 3)
    assert rules.maximal_isr((1, 2), ()) == (1, 2)
    assert rules.maximal_isr((1, 2), (3,), optimistic=False) == (1, 2)


# -- lastCaughtUpTimeMs (ReplicaTest / PartitionTest.testUpdateFollowerFetchState) ----------------
def test_fetch_at_the_leader_leo_is_caught_up_now():
    assert rules.updated_last_caught_up_time_ms(st(2, caught=100), 10, 10, 500) == 500
    # never backwards
    assert rules.updated_last_caught_up_time_ms(st(2, caught=900), 10, 10, 500) == 900


def test_reaching_the_previous_fetch_leader_leo_counts_as_caught_up_then_kafka_4485():
    s = st(2, caught=100, fetch_leader_leo=8, fetched=400)
    assert rules.updated_last_caught_up_time_ms(s, 8, 12, 500) == 400
    assert rules.updated_last_caught_up_time_ms(s, 7, 12, 500) == 100       # not there yet
    assert rules.updated_last_caught_up_time_ms(s, 8, 12, 500,
                                                previous_fetch_rule=False) == 100  # 0.10.1


def test_is_caught_up_equal_leo_or_within_the_lag_time():
    assert rules.is_caught_up(10, 10, NEVER_MS, 10**9, LAG)
    assert rules.is_caught_up(9, 10, 1000, 1000 + LAG, LAG)
    assert not rules.is_caught_up(9, 10, 1000, 1001 + LAG, LAG)


def test_out_of_sync_rules_by_version():
    stuck = st(2, leo=10, caught=0, fetched=0)
    now = LAG + 1
    # today: equal LEO is never out of sync (KAFKA-7152)
    assert not rules.is_follower_out_of_sync(stuck, 10, now, LAG)
    assert rules.is_follower_out_of_sync(stuck, 10, now, LAG, equal_leo_in_sync=False)
    assert rules.is_follower_out_of_sync(stuck, 11, now, LAG)
    # 0.8.x: stuck (no fetch within the lag time) and slow (replica.lag.max.messages) rules
    fresh = st(2, leo=10, caught=0, fetched=now)
    assert not rules.is_follower_out_of_sync(fresh, 5000, now, LAG, lag_since_caught_up=False)
    assert rules.is_follower_out_of_sync(fresh, 5000, now, LAG, lag_since_caught_up=False,
                                         replica_lag_max_messages=4000)


def test_expansion_needs_the_hw_and_the_epoch_start_offset():
    assert rules.is_follower_in_sync(10, 10, 8)
    assert not rules.is_follower_in_sync(9, 10, 8)
    assert not rules.is_follower_in_sync(10, 10, 12)                     # KAFKA-7395
    assert rules.is_follower_in_sync(10, 10, 12, requires_epoch_start_offset=False)


# -- HW (PartitionTest.testMaybeIncrementLeaderHW..., fact sheet section 1) ----------------------
def test_hw_is_the_smallest_leo_of_the_maximal_isr():
    fs = [st(2, leo=7), st(3, leo=5)]
    assert rules.maybe_increment_leader_hw(10, 0, fs, (1, 2, 3), 0, LAG) == 5
    assert rules.maybe_increment_leader_hw(10, 0, fs, (1, 2), 0, LAG) == 7
    assert rules.maybe_increment_leader_hw(10, 0, fs, (1,), 0, LAG) == 10


def test_hw_never_moves_backwards():
    assert rules.maybe_increment_leader_hw(10, 8, [st(2, leo=5)], (1, 2), 0, LAG) == 8


def test_new_leader_hw_frozen_until_every_isr_follower_fetched():
    # makeLeader resets ISR followers' LEO to -1 (unknown): the candidate drops to -1
    assert rules.maybe_increment_leader_hw(10, 4, [st(2, leo=-1)], (1, 2), 0, LAG) == 4


def test_caught_up_follower_outside_the_isr_holds_the_hw():
    f = st(3, leo=6, caught=1000)
    assert rules.maybe_increment_leader_hw(10, 0, [f], (1,), 1000 + LAG, LAG) == 6
    assert rules.maybe_increment_leader_hw(10, 0, [f], (1,), 1001 + LAG, LAG) == 10
    assert rules.maybe_increment_leader_hw(10, 0, [f], (1,), 1000, LAG,
                                           include_caught_up=False) == 10
    # since 3.6 only ISR-eligible (alive) brokers count
    assert rules.maybe_increment_leader_hw(10, 0, [f], (1,), 1000, LAG, eligible=(1, 2)) == 10


def _hw_without_fast_path(leader_leo, current_hw, followers, maximal, now_ms, lag_ms, *,
                          include_caught_up=True, eligible=None):
    """Partition.maybeIncrementLeaderHW's loop as Kafka writes it, without the early return."""
    candidate = leader_leo
    for f in followers:
        caught_up = rules.is_caught_up(f.log_end_offset, leader_leo, f.last_caught_up_time_ms,
                                       now_ms, lag_ms)
        if f.log_end_offset < candidate and (
                f.broker_id in maximal or include_caught_up and caught_up
                and (eligible is None or f.broker_id in eligible)):
            candidate = f.log_end_offset
    return max(candidate, current_hw)


def test_hw_fast_path_answers_as_the_plain_loop():
    """The early return inside maybe_increment_leader_hw (a maximal-ISR member not past the HW)
    changes no answer: 5,000 seeded cases against the loop without it."""
    import random
    rnd = random.Random(29)
    for _ in range(5000):
        leo, hw = rnd.randrange(0, 20), rnd.randrange(-1, 20)
        fs = [st(b, leo=rnd.randrange(-1, 21), caught=rnd.choice((NEVER_MS, 0, 500, 900)))
              for b in (2, 3, 4)[:rnd.randrange(0, 4)]]
        maximal = tuple(b for b in (1, 2, 3, 4) if b == 1 or rnd.random() < 0.6)
        kw = {"include_caught_up": rnd.random() < 0.8,
              "eligible": rnd.choice((None, (1, 2), (1, 2, 3, 4)))}
        assert rules.maybe_increment_leader_hw(leo, hw, fs, maximal, 1000, 300, **kw) == \
            _hw_without_fast_path(leo, hw, fs, maximal, 1000, 300, **kw)


# -- the follower's HW (ReplicaFetcherThread.processPartitionData, fact sheet section 1) ----------
def test_follower_hw_is_the_leaders_clamped_into_its_own_log():
    assert rules.update_high_watermark(10, 0, 5) == 5      # never above the follower's LEO
    assert rules.update_high_watermark(3, 0, 5) == 3       # a set, not a max: may go down
    assert rules.update_high_watermark(0, 2, 5) == 2       # never below the log start


def test_acks_all_check():
    assert rules.check_enough_replicas_reach_offset(5, 6, 3, 2) == (False, E.NONE)
    assert rules.check_enough_replicas_reach_offset(6, 6, 3, 2) == (True, E.NONE)
    assert rules.check_enough_replicas_reach_offset(6, 6, 1, 2) == \
        (True, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND)
    assert rules.check_min_isr_before_append((1,), 2) == E.NOT_ENOUGH_REPLICAS
    assert rules.check_min_isr_before_append((1, 2), 2) == E.NONE


# -- endOffsetFor (LeaderEpochFileCacheTest) -----------------------------------------------------
def test_end_offset_for_latest_epoch_is_the_leo():
    # shouldReturnLogEndOffsetIfLatestEpochRequested
    assert rules.end_offset_for([(2, 6), (3, 8), (4, 11)], 4, 20) == (4, 20)


def test_end_offset_for_undefined_or_unknown_epoch():
    # shouldReturnUndefinedOffsetIfUndefinedEpochRequested / ...IfEpochRequestedIsGreaterThan
    assert rules.end_offset_for([(2, 6)], UNDEFINED_EPOCH, 9) == \
        (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    assert rules.end_offset_for([], 3, 9) == (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    assert rules.end_offset_for([(2, 6)], 5, 9) == (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def test_end_offset_for_an_epoch_below_the_first():
    # shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch
    assert rules.end_offset_for([(5, 11), (6, 12), (7, 13)], 4, 20) == (4, 11)


def test_end_offset_for_a_missing_epoch_names_the_floor_epoch():
    # shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested
    entries = [(0, 10), (2, 13), (4, 17)]
    assert rules.end_offset_for(entries, 1, 20) == (0, 13)
    assert rules.end_offset_for(entries, 2, 20) == (2, 17)
    assert rules.end_offset_for(entries, 3, 20) == (2, 17)


# -- truncation (AbstractFetcherThread.getOffsetTruncationState, KIP-279) -----------------------
def test_truncation_offset():
    follower = [(0, 0), (1, 5), (3, 9)]
    # same epoch known: the smaller end offset
    assert rules.get_offset_truncation_state(1, 7, follower, 12, 12) == (7, True)
    assert rules.get_offset_truncation_state(1, 11, follower, 12, 12) == (9, True)
    # the leader's epoch 2 is unknown here: truncate to where our floor epoch 1 ends, ask again
    assert rules.get_offset_truncation_state(2, 8, follower, 12, 12) == (9, False)
    # no epoch in the answer (OffsetsForLeaderEpoch v0): the leader's end offset, capped at LEO
    assert rules.get_offset_truncation_state(UNDEFINED_EPOCH, 20, follower, 12, 12) == (12, True)
    # no answer at all: keep fetching where we are
    assert rules.get_offset_truncation_state(3, UNDEFINED_EPOCH_OFFSET, follower, 12, 10) == \
        (10, True)


# -- elections (PartitionLeaderElectionAlgorithmsTest) -------------------------------------------
def test_offline_partition_leader_election():
    assert rules.offline_partition_leader_election([2, 4], [2, 4], [4], False) == (4, False)
    assert rules.offline_partition_leader_election([2, 4], [2], [4], False) == (None, False)
    assert rules.offline_partition_leader_election([2, 4], [2], [4], True) == (4, True)


def test_reassign_partition_leader_election():
    assert rules.reassign_partition_leader_election([2, 4], [2, 4], [2, 4]) == 2
    assert rules.reassign_partition_leader_election([2, 4], [2], []) is None
    assert rules.reassign_partition_leader_election([2, 4], [], [2, 4]) is None


def test_preferred_replica_partition_leader_election():
    assert rules.preferred_replica_partition_leader_election([2, 4], [2, 4], [2, 4]) == 2
    assert rules.preferred_replica_partition_leader_election([2, 4], [2], []) is None
    assert rules.preferred_replica_partition_leader_election([2, 4], [4], [2, 4]) is None


def test_controlled_shutdown_partition_leader_election():
    f = rules.controlled_shutdown_partition_leader_election
    assert f([2, 4], [2, 4], [2, 4], [2]) == 4
    assert f([2, 4], [2], [2, 4], [2]) is None
    assert f([2, 4], [2, 4], [2, 4], [2, 4]) is None


# -- the rule book and the swap ------------------------------------------------------------------
def test_every_swappable_rule_is_a_documented_pure_function_citing_kafka():
    for name in rules.RULES:
        fn = getattr(rules, name)
        doc = inspect.getdoc(fn)
        assert doc and any(tag in doc for tag in ("P ", "R ", "LEC ", "AFT ", "UL ", "PLE ")), name
        src = inspect.getsource(fn)
        assert "ctx" not in src and "self" not in src, f"{name} must not reach into state"


def test_swap_rule_changes_behaviour_and_the_checkers_catch_it():
    """An HW rule that ignores the followers (HW = leader LEO) acknowledges acks=all writes no
    follower has; crashing that leader then loses them, and NoAckedLoss says so."""

    def hw_is_leader_leo(leader_leo, current_hw, followers, maximal, now_ms, lag_ms, **kw):
        return max(leader_leo, current_hw)

    def run(swap: bool):
        c = Cluster(brokers=3, seed=7)
        c.create_topic("t", partitions=1, replication_factor=3,
                       config={"min.insync.replicas": 2})
        c.run(100)
        if swap:
            c.swap_rule("maybe_increment_leader_hw", hw_is_leader_leo)
        suite = attach(c, on_violation="collect")
        leader = c.leader("t")
        for b in c.brokers:
            if b != leader:
                c.hold("FetchResponse", src=leader, dst=b)
        p = c.producer(acks="all")
        for i in range(3):
            p.send("t", f"v{i}")
        c.run(200)
        acked = len(p.acked())
        c.crash(leader)
        c.release()
        c.run(30_000)
        return acked, suite, lost_acked(c, [p])

    acked, suite, lost = run(swap=False)
    assert acked == 0 and not suite.violations and not lost
    acked, suite, lost = run(swap=True)
    assert acked == 3 and len(lost) == 3
    # the first violation names the swapped rule's mistake: an HW above an ISR member's LEO
    assert suite.violations[0].invariant == "HwBelowIsrLeo", suite.violations[0]


def test_swap_rule_rejects_unknown_names_with_a_suggestion():
    c = Cluster(brokers=1)
    with pytest.raises(ClusterError, match="did you mean 'maybe_increment_leader_hw'"):
        c.swap_rule("maybe_increment_leader_HW", lambda *a, **k: 0)
    with pytest.raises(ClusterError, match="needs a function"):
        c.swap_rule("effective_min_isr", 3)
    old = c.swap_rule("effective_min_isr", lambda m, n, capped=True: 1)
    assert old is rules.effective_min_isr
    assert c.swap_rule("effective_min_isr") is not rules.effective_min_isr
    assert c.rule("effective_min_isr") is rules.effective_min_isr


def test_no_second_copy_of_the_hw_rule_in_the_course():
    from kafkasim.course.hw import high_watermark
    assert high_watermark({1: 5, 2: 3, 3: 7}, [1, 2]) == 3
    assert high_watermark({1: 5, 2: 3, 3: 7}, [1, 3]) == 5
    assert "rules.maybe_increment_leader_hw" in inspect.getsource(high_watermark)


def test_an_expanded_isr_lists_the_new_member_last_as_kafka_does():
    """Partition.prepareIsrExpand sends ``isr + newInSyncReplicaId`` (a small Scala Set keeps
    insertion order), so broker 2 rejoining ISR [1, 3] gives [1, 3, 2], not replica order."""
    from kafkasim.core.fake import FakeContext

    ctx = FakeContext(broker_id=1)
    part = ctx.partition("t", 0)
    part.make_leader(ctx, 1, (1, 3), (1, 2, 3), 0, 1)
    part.update_follower_fetch_state(ctx, 2, 0, 0, 0)
    assert part.pending is not None and part.pending.proposed_isr == (1, 3, 2)
    assert ctx.take()[0].endswith("ISR [1, 3] -> [1, 3, 2] (leader epoch 1, partition epoch 0)")
