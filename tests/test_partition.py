"""Partition driven alone (kafkasim.core.fake.FakeContext), against Kafka's Partition."""

from __future__ import annotations

from kafkasim.core.fake import FakeContext


def test_a_follower_keeps_no_isr_and_no_remote_replica_state():
    """Partition.makeFollower -> updateAssignmentAndIsr(isr = Set.empty, isLeader = false): a
    follower knows neither the ISR nor its peers' fetch state (every version since 0.8)."""
    ctx = FakeContext(broker_id=1)
    part = ctx.partition("t", 0)
    part.make_leader(ctx, 1, (1, 2, 3), (1, 2, 3), 0, 1)
    assert part.isr == (1, 2, 3) and set(part.remote) == {2, 3}
    assert part.make_follower(ctx, 2, 2, (2, 3), (1, 2, 3), 1, 1)
    assert part.isr == () and part.remote == {} and not part.is_leader
    assert (part.leader_id, part.leader_epoch) == (2, 2)
    # leading again starts from fresh follower state (unknown LEOs), ISR from the request
    part.make_leader(ctx, 3, (1, 3), (1, 2, 3), 2, 1)
    assert part.isr == (1, 3)
    assert {r: st.log_end_offset for r, st in part.remote.items()} == {2: -1, 3: -1}


def _full_rule(*args, **kwargs):
    """Kafka's HW rule behind another name, as a swapped rule: Partition has one path, so it
    must answer as with Kafka's own."""
    from kafkasim.core import rules
    return rules.maybe_increment_leader_hw(*args, **kwargs)


def test_hw_answers_as_the_rule_does():
    """Partition.maybe_increment_leader_hw has no path of its own beside the rule (its fast
    path lives inside ``rules.maybe_increment_leader_hw``): over random follower LEOs, lag
    clocks, ISRs, pending expansions, min ISRs and versions, Kafka's rule and the same rule
    behind another name (a swapped rule) move the HW alike."""
    import random

    from kafkasim.core.rules import RuleBook

    outcomes = set()
    for case in range(600):
        version = ("2.6", "3.5", "3.7", "4.3")[case % 4]
        moved = []
        for rulebook in (RuleBook(), RuleBook(maybe_increment_leader_hw=_full_rule)):
            r = random.Random(case)
            ctx = FakeContext(broker_id=1, kafka_version=version,
                              topic_config={"min.insync.replicas": r.choice((1, 2, 3))},
                              live_brokers=r.choice(((1, 2, 3), (1, 2), (1, 2, 3, 4))))
            ctx.rulebook = rulebook
            part = ctx.partition("t", 0)
            replicas = (1, 2, 3, 4)[:r.choice((2, 3, 4))]
            isr = (1,) + tuple(x for x in replicas[1:] if r.random() < 0.6)
            part.make_leader(ctx, 1, isr, replicas, 0, 1)
            leo = r.randint(1, 8)
            part.log.append_as_leader(list(range(leo)), [1] * leo, 1, 0)
            part.log.high_watermark = r.randint(0, leo)
            ctx.now = r.randint(0, 60_000)
            for st in part.remote.values():
                st.log_end_offset = r.randint(-1, leo)
                st.last_caught_up_time_ms = r.randint(-1, ctx.now)
            outside = [x for x in replicas[1:] if x not in isr]
            if outside and r.random() < 0.3:
                part.pending = part.prepare_isr_expand((outside[0],), isr + (outside[0],), 0)
            moved.append((part.maybe_increment_leader_hw(ctx), part.log.high_watermark))
        assert moved[0] == moved[1], (case, moved)
        outcomes.add(moved[0][0])
    assert outcomes == {True, False}


def _full_caught_up_rule(*args, **kwargs):
    """Kafka's lastCaughtUpTimeMs rule behind another name, as a swapped rule."""
    from kafkasim.core import rules
    return rules.updated_last_caught_up_time_ms(*args, **kwargs)


def test_follower_fetch_state_answers_as_the_rule_does():
    """update_follower_fetch_state calls the lastCaughtUpTimeMs rule for every fetch: over random
    fetches (at, below and past the LEO, clocks going either way) Kafka's rule and the same rule
    behind another name record the same clocks, and a swapped rule sees every fetch."""
    import random

    from kafkasim.core.rules import RuleBook

    def states(rulebook, seed):
        r = random.Random(seed)
        ctx = FakeContext(broker_id=1, kafka_version=r.choice(("0.10.1", "2.6", "3.7")))
        ctx.rulebook = rulebook
        part = ctx.partition("t", 0)
        part.make_leader(ctx, 1, (1, 2, 3), (1, 2, 3), 0, 1)
        out = []
        for _ in range(40):
            ctx.now = r.randint(0, 50_000)
            leo = r.randint(0, 20)
            replica = r.choice((2, 3))
            part.update_follower_fetch_state(ctx, replica, leo + r.choice((-2, -1, 0, 0, 1)),
                                             0, leo, r.choice((None, ctx.now, ctx.now - 5)))
            st = part.remote[replica]
            out.append((st.last_caught_up_time_ms, st.last_fetch_time_ms,
                        st.last_fetch_leader_log_end_offset))
        return out

    calls = []

    def counted(*args, **kwargs):
        calls.append(args)
        return _full_caught_up_rule(*args, **kwargs)

    for seed in range(60):
        assert states(RuleBook(), seed) == \
            states(RuleBook(updated_last_caught_up_time_ms=_full_caught_up_rule), seed)
    states(RuleBook(updated_last_caught_up_time_ms=counted), 0)
    assert len(calls) == 40   # a swapped rule sees every fetch


def _full_acks_rule(*args, **kwargs):
    """Kafka's checkEnoughReplicasReachOffset behind another name, as a swapped rule."""
    from kafkasim.core import rules
    return rules.check_enough_replicas_reach_offset(*args, **kwargs)


def test_acks_all_answers_as_the_rule_does():
    """check_enough_replicas_reach_offset always asks the rule (the effective min ISR from the
    topic's min.insync.replicas): over random ISRs, min.insync.replicas, HWs and versions
    (capped or not) Kafka's rule and the same rule behind another name answer alike."""
    import random

    from kafkasim.core.rules import RuleBook

    answers = set()
    for case in range(400):
        got = []
        for rulebook in (RuleBook(), RuleBook(check_enough_replicas_reach_offset=_full_acks_rule)):
            r = random.Random(case)
            ctx = FakeContext(broker_id=1, kafka_version=r.choice(("2.6", "3.6", "3.7", "4.3")),
                              topic_config={"min.insync.replicas": r.randint(1, 5)})
            ctx.rulebook = rulebook
            part = ctx.partition("t", 0)
            replicas = (1, 2, 3, 4)[:r.choice((1, 2, 3, 4))]
            isr = (1,) + tuple(x for x in replicas[1:] if r.random() < 0.7)
            part.make_leader(ctx, 1, isr, replicas, 0, 1)
            outside = [x for x in replicas if x not in isr]
            if outside and r.random() < 0.4:
                part.pending = part.prepare_isr_expand((outside[0],), isr + (outside[0],), 0)
            part.log.high_watermark = r.randint(0, 10)
            got.append(part.check_enough_replicas_reach_offset(ctx, r.randint(0, 10)))
        assert got[0] == got[1], (case, got)
        answers.add(got[0])
    assert answers == {(False, "NONE"), (True, "NONE"), (True, "NOT_ENOUGH_REPLICAS_AFTER_APPEND")}


def test_isr_change_states_are_typed_as_kafkas():
    """Partition.partitionState: CommittedPartitionState, or PendingExpandIsr (the rejoining
    replica counts for the HW and acks=all at once, KIP-497) / PendingShrinkIsr (the leaving
    replicas count until the controller commits)."""
    from kafkasim.core.partition import (
        CommittedPartitionState,
        PendingExpandIsr,
        PendingShrinkIsr,
        apply_isr_update,
    )

    ctx = FakeContext(broker_id=1)
    part = ctx.partition("t", 0)
    part.make_leader(ctx, 1, (1, 3), (1, 2, 3), 0, 1)
    assert part.partition_state == CommittedPartitionState((1, 3))
    assert not part.partition_state.is_inflight
    part.update_follower_fetch_state(ctx, 2, 0, 0, 0)
    state = part.partition_state
    assert isinstance(state, PendingExpandIsr) and state.kind == "expand" and state.is_inflight
    assert (state.leader_epoch, state.partition_epoch) == (1, 0)
    assert part.maximal_isr(ctx) == (1, 3, 2) and part.isr == (1, 3)
    apply_isr_update(part, ctx, (1, 3, 2), 1)
    assert part.partition_state == CommittedPartitionState((1, 3, 2))
    shrink = part.prepare_isr_shrink((3,), (1, 2), 0)
    part.pending = shrink
    assert isinstance(shrink, PendingShrinkIsr) and shrink.kind == "shrink"
    assert part.maximal_isr(ctx) == (1, 3, 2)


def test_a_replica_new_to_the_leader_starts_as_replica_state_empty():
    """Replica.scala ``ReplicaState.Empty`` (0.10.2 ... trunk): a replica the leader learns of
    without a new leader epoch (Partition.updateAssignmentAndIsr ->
    ``new Replica(...)``; makeLeader resets replica states only on a new epoch) starts with
    lastFetchLeaderLogEndOffset 0 and lastFetchTimeMs = lastCaughtUpTimeMs = 0 (never). Its
    first fetch below the leader's LEO therefore leaves lastCaughtUpTimeMs at never
    (updateFetchStateOrThrow: fetchOffset >= lastFetchLeaderLogEndOffset takes the previous
    fetch's time, 0). Before, kafkasim started it at -1 and "now", so that first fetch made the
    new replica caught up as of the moment it was added."""
    from kafkasim.core.rules import NEVER_MS

    ctx = FakeContext(broker_id=1, kafka_version="3.7")
    part = ctx.partition("t", 0)
    part.make_leader(ctx, 1, (1, 2, 3), (1, 2, 3), 0, 1)
    ctx.now = 5_000
    # the same leader epoch, one more replica (a reassignment adding replica 4)
    part.make_leader(ctx, 1, (1, 2, 3), (1, 2, 3, 4), 1, 1)
    st = part.remote[4]
    assert (st.last_fetch_leader_log_end_offset, st.last_fetch_time_ms,
            st.last_caught_up_time_ms, st.log_end_offset) == (0, NEVER_MS, NEVER_MS, -1)
    ctx.now = 5_100
    part.update_follower_fetch_state(ctx, 4, 0, 0, 10)   # fetch at 0, leader LEO 10
    assert st.last_caught_up_time_ms == NEVER_MS          # not caught up as of 5_000
    assert st.last_fetch_leader_log_end_offset == 10 and st.last_fetch_time_ms == 5_100
    # a new leader's resetReplicaState(isNewLeader = true) sets UnifiedLog.UnknownOffset
    part.make_follower(ctx, 2, 2, (2, 3), (1, 2, 3, 4), 2, 1)
    part.make_leader(ctx, 3, (1, 2, 3), (1, 2, 3, 4), 3, 1)
    assert part.remote[4].last_fetch_leader_log_end_offset == -1
