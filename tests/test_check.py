"""Tests for kafkasim.observe.checks: every checker stays silent on healthy runs and catches a
corrupted state, and violations carry what is needed to reproduce them (seed, time, event, ids)."""

from __future__ import annotations

import json

import pytest

from kafkasim.control.zookeeper import partition_state_json, partition_state_path
from kafkasim.core.events import (
    BecomeFollower,
    Heal,
    LeaderElection,
    PartitionOffline,
    Truncate,
)
from kafkasim.observe import checks as kcheck
from kafkasim.observe.checks import (
    CHECKS,
    Checker,
    CheckSuite,
    ConsistentRead,
    HwBelowIsrLeo,
    InvariantViolation,
    LeaderInIsr,
    LogMatching,
    MonotoneLeaderHw,
    NoAckedLoss,
    Violation,
    check_all,
    make_suite,
    run_checked,
)
from kafkasim.observe.snapshots import restore, snapshot
from kafkasim.runtime.clients.consumer import ConsumerRecord
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

# the ZooKeeper-era release these tests were written against (Kafka 4.x is KRaft only;
# its behaviour is tested in tests/test_kraft_*.py)
ZK = "3.7"

SEED = 7
NAMES = ["NoAckedLoss", "HwBelowIsrLeo", "ConsistentRead", "MonotoneLeaderHw", "LeaderInIsr",
         "LogMatching"]


def healthy(acks="all", *, seed=SEED, partitions=1, min_isr=2, rate=200, duration_ms=1000,
            settle_ms=1500, consumers=1):
    """A quiet cluster after a produce workload: every replica caught up, HW == LEO."""
    c = Cluster(brokers=3, seed=seed, kafka_version="3.7",
                config={"replica.lag.time.max.ms": 10000})
    c.create_topic("t", partitions=partitions, replication_factor=3,
                   config={"min.insync.replicas": min_isr})
    p = c.producer(acks=acks, retries=0, linger_ms=0)
    for part in range(partitions):
        RateWorkload(c, p, "t", rate=rate, duration_ms=duration_ms, partition=part,
                     name=f"w{part}")
    suite = run_checked(c, duration_ms + settle_ms, on_violation="collect")
    cons = []
    for i in range(consumers):
        cn = c.consumer(group=f"g{i}", auto_offset_reset="earliest")
        cn.assign("t")
        cn.poll(timeout_ms=500)
        cons.append(cn)
    assert suite.ok, suite.report()
    return c, p, cons


def roles(c, partition=0):
    st = c.inspect.partition_state("t", partition)
    leader = st["leader"]
    return leader, [b for b in st["replicas"] if b != leader]


def only(name, on_violation="collect") -> CheckSuite:
    return make_suite([name], on_violation=on_violation)


def fresh_check(c, name):
    """A new single-check suite that has seen the healthy state, then returns it."""
    s = only(name)
    assert s.check_now(c) == [], s.report()
    return s


def append_fake(log, record_id, epoch=0):
    """Append one record to a log by hand (above its HW)."""
    log.ids.append(record_id)
    log.epochs.append(epoch)
    log.timestamps.append(0)
    log.sizes.append(100)
    log.log_end_offset += 1


# ------------------------------------------------------------------------------ registry / API
def test_registry_holds_the_six_invariants_with_docs_and_sources():
    assert list(CHECKS)[:6] == NAMES
    for name in NAMES:
        cls = CHECKS[name]
        assert issubclass(cls, Checker) and cls.name == name
        assert cls.__doc__ and cls.source, name
    suite = make_suite()
    assert suite.names == list(CHECKS)
    assert make_suite(["LogMatching"]).names == ["LogMatching"]
    with pytest.raises(KeyError, match="NoSuchCheck"):
        make_suite(["NoSuchCheck"])
    with pytest.raises(ValueError, match="on_violation"):
        make_suite(on_violation="ignore")


def test_register_adds_a_named_check_to_suites():
    @kcheck.register
    class AlwaysFine(Checker):
        """A check that never fires (registry test)."""

        name = "AlwaysFine"
        source = "test"

        def evaluate(self, cluster, g):
            return iter(())

    try:
        assert "AlwaysFine" in make_suite().names
    finally:
        del CHECKS["AlwaysFine"]


def test_healthy_runs_are_silent_with_every_acks_setting_and_a_slow_follower():
    c = Cluster(brokers=3, seed=11, config={"replica.lag.time.max.ms": 1000}, kafka_version=ZK)
    c.create_topic("t", partitions=2, replication_factor=3, config={"min.insync.replicas": 2})
    suite = make_suite(on_violation="collect")
    for acks in ("all", 1, 0):
        p = c.producer(acks=acks, linger_ms=5)
        for part in (0, 1):
            RateWorkload(c, p, "t", rate=150, duration_ms=4000, partition=part,
                         name=f"w-{acks}-{part}")
    cons = [c.consumer(group=g, auto_offset_reset="earliest") for g in ("a", "b")]
    for cn in cons:
        cn.assign("t")
    _leader, followers = roles(c)
    c.slow(followers[0], network_ms=30, disk_ms=20)
    for i in range(10):
        if i == 3:   # a GC pause long enough to leave the ISR (lag 1 s), then rejoin it
            c.pause(followers[1], 1500)
        run_checked(c, 500, suite=suite)
        for cn in cons:
            cn.poll(timeout_ms=100)
    run_checked(c, 2000, suite=suite)
    for cn in cons:
        cn.poll(timeout_ms=500)
    assert suite.ok, suite.report()
    assert suite.allowed == []
    assert check_all(c, on_violation="raise") == []
    g = suite.ghost
    acked = sum(len(v) for v in g.acked.values())
    assert acked == sum(len(p.acked()) for p in c.clients.values() if hasattr(p, "acked"))
    assert sum(len(v) for v in g.consumed.values()) > 0
    assert any(r[1] == "isr" for r in c.trace.rows), "the pause should have shrunk the ISR"
    for part in (0, 1):
        leader, _ = roles(c, part)
        assert g.true_hw[("t", part)] == c.log(leader, "t", part).high_watermark


# ------------------------------------------------------------------------------ LogMatching
def test_log_matching_catches_a_record_overwritten_below_the_hw():
    c, _p, _ = healthy()
    leader, (f1, f2) = roles(c)
    s = fresh_check(c, "LogMatching")
    log = c.log(f2, "t", 0)
    assert log.high_watermark > 10
    good = log.ids[5]
    log.ids[5] = 999_999
    found = s.check_now(c)
    assert {v.invariant for v in found} == {"LogMatching"}
    v = s.first
    assert f2 in v.brokers and v.offsets == (5,)
    assert set(v.record_ids) == {good, 999_999}
    assert v.seed == SEED and v.time_ms == c.now and "seed=7" in str(v)
    assert len(found) == 2          # f2 differs from both the leader and f1
    assert all(f2 in x.brokers for x in found)


def test_log_matching_catches_a_different_epoch_and_ignores_records_above_the_hw():
    c, _p, _ = healthy()
    _leader, (f1, f2) = roles(c)
    s = fresh_check(c, "LogMatching")
    # a divergent suffix above the HW is legitimate (it would be truncated)
    append_fake(c.log(f1, "t", 0), 424242, epoch=3)
    assert s.check_now(c) == []
    c.log(f1, "t", 0).epochs[2] = 9
    found = s.check_now(c)
    assert [v.offsets for v in found] == [(2,), (2,)]
    assert "epoch 9" in found[0].message


def _excused_divergence(c):
    """An unclean election of ``leader`` (a typed controller row) and follower f1 still in the
    old leader epoch (it has not taken in the LeaderAndIsr yet) with a record of the other
    history at offset 5, below every HW. Returns the suite that saw it, f1 and the good id."""
    leader, (f1, _f2) = roles(c)
    s = only("LogMatching")
    run_checked(c, 600, suite=s)  # (quiet: fetches long-poll 500 ms)
    part = c.brokers[f1].replica_manager.partitions[("t", 0)]
    st = c.inspect.partition_state("t", 0)
    c.trace.record("controller", "controller", "t", 0,
             LeaderElection("offline", True, -1, leader, tuple(st["isr"]), st["leader_epoch"]))
    part.leader_epoch = st["leader_epoch"] - 1          # stale: still in the old epoch
    log = c.log(f1, "t", 0)
    good, log.ids[5] = log.ids[5], 515_151
    s(c)        # no event since the last check: a hand edit, so a full check finds it
    assert s.ok and len(s.allowed) == 2, s.report()     # f1 vs the leader and vs f2
    assert all(v.offsets == (5,) and "unclean leader election" in v.allowed_because
               for v in s.allowed)
    return s, f1, part, st, good


def test_log_matching_reports_an_excused_divergence_once_both_follow_the_new_leader():
    # KIP-279 "the divergence is the bug": the fork of an unclean election is excused only
    # while a replica still holds the old history; once it follows the new leader (took in its
    # epoch, fetched from it) and the logs still differ below both HWs, it is reported
    c, _p, _ = healthy()
    s, f1, part, st, _good = _excused_divergence(c)
    part.leader_epoch = st["leader_epoch"]
    c.trace.record("become_follower", f1, "t", 0, BecomeFollower(st["leader"], st["leader_epoch"]))
    run_checked(c, 600, suite=s)
    assert s.ok                               # its HW is not current until a fetch sets it
    c.trace.record("hw", f1, "t", 0, c.log(f1, "t", 0).high_watermark)   # the fetch response
    run_checked(c, 600, suite=s)
    assert not s.ok and len(s.violations) == 2, s.report()
    assert all(v.offsets == (5,) and v.allowed_because is None and f1 in v.brokers
               and 515_151 in v.record_ids for v in s.violations)


def test_log_matching_compares_an_excused_divergence_again_when_the_excuse_ends():
    # the excuse ends without a role change of the compared replicas (no mark reset): the
    # range checked while excused is compared again, not skipped as already matched
    c, _p, _ = healthy()
    s, _f1, part, st, _good = _excused_divergence(c)
    part.leader_epoch = st["leader_epoch"]
    c.trace.record("fault", "network", "", -1, Heal())     # any control-plane row: a rescan
    run_checked(c, 600, suite=s)
    assert [v.offsets for v in s.violations] == [(5,), (5,)], s.report()


def test_log_matching_stays_silent_when_the_lagging_replica_truncates_against_the_new_leader():
    # the transient case: the stale replica truncates its divergent suffix
    # (OffsetsForLeaderEpoch) and refetches the new leader's records: nothing to report
    c, _p, _ = healthy()
    s, f1, part, st, good = _excused_divergence(c)
    log = c.log(f1, "t", 0)
    log.ids[5] = good                         # as truncated to 5 and fetched again
    part.leader_epoch = st["leader_epoch"]
    c.trace.record("truncate", f1, "t", 0, Truncate(5, log.log_end_offset - 5, "diverging epoch"))
    c.trace.record("become_follower", f1, "t", 0, BecomeFollower(st["leader"], st["leader_epoch"]))
    c.trace.record("hw", f1, "t", 0, log.high_watermark)
    run_checked(c, 600, suite=s)
    assert s.ok and len(s.allowed) == 2, s.report()


def test_a_hand_edit_is_caught_by_the_next_call_without_events():
    c, p, _ = healthy()
    _leader, (_f1, f2) = roles(c)
    s = make_suite(["LogMatching"], on_violation="collect")
    run_checked(c, 10, suite=s)
    log = c.log(f2, "t", 0)
    log.ids[3] = 7_777_777
    s(c)                           # no event since the last call: hand edit, full re-check
    assert not s.ok and s.first.offsets == (3,)


# ------------------------------------------------------------------------------ HwBelowIsrLeo
def test_hw_below_isr_leo_catches_a_leader_hw_above_follower_leos():
    c, _p, _ = healthy()
    leader, followers = roles(c)
    s = fresh_check(c, "HwBelowIsrLeo")
    llog = c.log(leader, "t", 0)
    n = llog.log_end_offset
    assert all(c.log(f, "t", 0).log_end_offset == n for f in followers)
    append_fake(llog, 111)
    append_fake(llog, 112)
    llog.high_watermark = n + 2          # as if the leader counted records nobody fetched
    found = s.check_now(c)
    assert sorted(v.brokers for v in found) == sorted((leader, f) for f in followers)
    assert all(v.offsets == (n + 2, n) for v in found)
    assert "ISR member" in found[0].message


def test_hw_below_isr_leo_ignores_replicas_outside_the_committed_isr():
    c, _p, _ = healthy()
    leader, (f1, f2) = roles(c)
    s = fresh_check(c, "HwBelowIsrLeo")
    part = c.brokers[leader].replica_manager.partitions[("t", 0)]
    part.isr = (leader, f1)
    llog, flog = c.log(leader, "t", 0), c.log(f1, "t", 0)
    n = llog.log_end_offset
    for log in (llog, flog):
        append_fake(log, 500)
    llog.high_watermark = n + 1          # f1 has it, f2 (not in the ISR) does not
    assert s.check_now(c) == []


def test_hw_below_isr_leo_checks_only_when_the_hw_changes():
    c, _p, _ = healthy()
    leader, (f1, _f2) = roles(c)
    s = fresh_check(c, "HwBelowIsrLeo")
    c.log(f1, "t", 0).truncate_to(3)     # the HW was valid when it was set
    assert s.check_now(c) == []
    c.log(leader, "t", 0).high_watermark -= 1   # ... but any new HW must respect f1's LEO
    found = s.check_now(c)
    assert [v.brokers for v in found] == [(leader, f1)]


# ------------------------------------------------------------------------------ MonotoneLeaderHw
def test_monotone_leader_hw_catches_a_decrease_once():
    c, _p, _ = healthy()
    leader, _ = roles(c)
    s = fresh_check(c, "MonotoneLeaderHw")
    log = c.log(leader, "t", 0)
    old = log.high_watermark
    log.high_watermark = old - 4
    found = s.check_now(c)
    assert [v.offsets for v in found] == [(old, old - 4)]
    assert found[0].brokers == (leader,)
    s(c)
    assert len(s.violations) == 1       # reported once, not after every event


def test_a_new_checker_accepts_the_hw_it_first_sees():
    c, _p, _ = healthy()
    leader, _ = roles(c)
    c.log(leader, "t", 0).high_watermark -= 4
    assert only("MonotoneLeaderHw").check_now(c) == []


# ------------------------------------------------------------------------------ LeaderInIsr
def test_leader_in_isr_catches_the_controller_state():
    c, _p, _ = healthy()
    leader, followers = roles(c)
    s = fresh_check(c, "LeaderInIsr")
    st = c.inspect.partition_state("t", 0)
    c.zk.set(partition_state_path("t", 0),
             partition_state_json(leader, st["leader_epoch"], followers, 1))
    found = s.check_now(c)
    assert len(found) == 1 and found[0].brokers == (leader,)
    assert "controller" in found[0].message


def test_leader_in_isr_catches_the_leaders_cached_isr():
    c, _p, _ = healthy()
    leader, followers = roles(c)
    s = fresh_check(c, "LeaderInIsr")
    c.brokers[leader].replica_manager.partitions[("t", 0)].isr = tuple(followers)
    found = s.check_now(c)
    assert len(found) == 1 and "cached ISR" in found[0].message


def test_leader_in_isr_accepts_no_leader():
    c, _p, _ = healthy()
    _leader, followers = roles(c)
    st = c.inspect.partition_state("t", 0)
    c.zk.set(partition_state_path("t", 0),
             partition_state_json(-1, st["leader_epoch"] + 1, followers[:1], 1))
    assert only("LeaderInIsr").check_now(c) == []


# ------------------------------------------------------------------------------ NoAckedLoss
@pytest.mark.parametrize("acks", ["all", 1])
def test_no_acked_loss_catches_an_overwritten_acked_record(acks):
    c, p, _ = healthy(acks)
    leader, _ = roles(c)
    s = fresh_check(c, "NoAckedLoss")
    r = p.acked()[10]
    log = c.log(leader, "t", 0)
    assert log.record_id_at(r.offset) == r.record_id
    log.ids[r.offset] = 5_555_555
    found = s.check_now(c)
    assert len(found) == 1
    v = found[0]
    assert v.offsets == (r.offset,) and v.record_ids == (r.record_id, 5_555_555)
    assert v.brokers == (leader,)
    assert f"acks={acks}" in v.message and repr(r.value) in v.message


def test_no_acked_loss_allows_acks_1_loss_once_another_broker_has_led():
    c, p, _ = healthy(1)
    leader, (f1, _f2) = roles(c)
    s = fresh_check(c, "NoAckedLoss")
    # the trace says f1 led for a while, then the leader took over again: a new term
    c.trace.record("become_leader", f1, "t", 0, "epoch 1")
    c.trace.record("become_leader", leader, "t", 0, "epoch 2")
    c.log(leader, "t", 0).ids[p.acked()[3].offset] = 6_666_666
    s.on_violation = "raise"
    found = s.check_now(c)          # reported as allowed (Kafka's acks=1 contract), not raised
    assert s.ok and len(found) == 1 and s.allowed == found
    assert found[0].allowed_because.startswith("acks=1 (acknowledged by leader")
    assert s.ghost.terms[("t", 0)] == (2, leader)


def test_no_acked_loss_catches_a_truncated_leader():
    c, p, _ = healthy()
    leader, _ = roles(c)
    s = fresh_check(c, "NoAckedLoss")
    acked = p.acked()
    c.log(leader, "t", 0).truncate_to(acked[-3].offset)
    found = s.check_now(c)
    assert sorted(v.record_ids[0] for v in found) == sorted(r.record_id for r in acked[-3:])
    assert "log ends at" in found[0].message


def test_no_acked_loss_ignores_acks_0():
    c, p, _ = healthy(0)
    leader, _ = roles(c)
    s = fresh_check(c, "NoAckedLoss")
    assert len(p.acked()) > 0 and all(r.offset == -1 for r in p.acked())
    c.log(leader, "t", 0).truncate_to(0)
    assert s.check_now(c) == []


def test_no_acked_loss_classifies_loss_after_an_unclean_election_as_allowed():
    c, p, _ = healthy()
    leader, _ = roles(c)
    s = fresh_check(c, "NoAckedLoss")
    c.trace.record("controller", "controller", "t", 0,
             LeaderElection("offline", True, leader, 3, (3,), 1))
    c.log(leader, "t", 0).ids[p.acked()[0].offset] = 4_444_444
    s.on_violation = "raise"
    found = s.check_now(c)          # classified, not raised
    assert s.ok and len(found) == 1 and s.allowed == found
    assert found[0].allowed_because == f"unclean leader election at t={c.now} ms"
    assert "allowed by the configuration" in str(found[0])


# ------------------------------------------------------------------------------ ConsistentRead
def test_consistent_read_catches_a_record_at_or_past_the_served_hw():
    c, _p, (cons,) = healthy()
    s = fresh_check(c, "ConsistentRead")
    last = cons.consumed[-1]
    assert last.offset < last.served_hw
    cons.consumed.append(ConsumerRecord("t", 0, last.served_hw, 0, 31337, "x", last.served_hw))
    found = s.check_now(c)
    assert [v.offsets for v in found][0] == (last.served_hw, last.served_hw)
    assert "past the high watermark" in found[0].message


def test_consistent_read_catches_two_consumers_reading_one_offset_differently():
    c, _p, (c1, c2) = healthy(consumers=2)
    s = fresh_check(c, "ConsistentRead")
    first = c1.consumed[4]
    assert c2.consumed[4] == first      # identical reads are fine
    c2.consumed.append(ConsumerRecord("t", 0, first.offset, first.leader_epoch, 4242, "y",
                                      first.served_hw))
    found = s.check_now(c)
    assert len(found) == 1
    assert found[0].record_ids == (first.record_id, 4242)
    assert found[0].offsets == (first.offset,)


def test_consistent_read_catches_a_read_record_vanishing_from_the_leader():
    c, _p, (cons,) = healthy()
    leader, _ = roles(c)
    s = fresh_check(c, "ConsistentRead")
    rec = cons.consumed[7]
    c.log(leader, "t", 0).ids[rec.offset] = 8_888_888
    found = s.check_now(c)
    assert len(found) == 1 and found[0].record_ids == (rec.record_id, 8_888_888)
    assert "no longer on leader" in found[0].message


# ------------------------------------------------------------------------------ reporting
def test_raise_mode_raises_an_assertion_error_naming_the_seed():
    c, _p, _ = healthy()
    _leader, (f1, _f2) = roles(c)
    s = make_suite()          # on_violation="raise" by default
    s.check_now(c)
    c.log(f1, "t", 0).ids[0] = 123
    with pytest.raises(InvariantViolation) as info:
        s(c)
    err = info.value
    assert isinstance(err, AssertionError)
    assert isinstance(err.violation, Violation) and err.violation is s.first
    assert "seed=7" in str(err) and "LogMatching" in str(err)
    assert err.violation.trace_row == c.trace.rows[-1]


def test_run_checked_stops_at_the_event_that_broke_an_invariant():
    c = Cluster(brokers=3, seed=SEED, kafka_version=ZK)
    c.create_topic("t", partitions=1, replication_factor=3, config={"min.insync.replicas": 2})
    p = c.producer(acks="all", linger_ms=0)
    RateWorkload(c, p, "t", rate=100, duration_ms=3000, partition=0)
    _leader, (f1, _f2) = roles(c)
    t_bad = c.now + 1500

    def corrupt(cluster):
        cluster.log(f1, "t", 0).ids[1] = 99

    c.at(t_bad, corrupt)
    with pytest.raises(InvariantViolation) as info:
        run_checked(c, 3000)
    v = info.value.violation
    assert v.invariant == "LogMatching" and v.time_ms == t_bad == c.now
    assert v.event is not None and " call " in v.event and "corrupt" in v.event
    assert v.offsets == (1,) and f1 in v.brokers


def test_check_plugs_into_cluster_run_and_run_until():
    c, p, _ = healthy()
    checker = LogMatching(on_violation="collect")
    more = c.producer(acks="all")
    for i in range(20):
        more.send("t", f"m{i}", partition=0)
    c.run(200, check=checker)
    assert c.run_until(lambda cl: more.pending() == 0, 2000, check=checker)
    assert checker.ok
    for cls in (NoAckedLoss, HwBelowIsrLeo, ConsistentRead, MonotoneLeaderHw, LeaderInIsr):
        single = cls(on_violation="raise")
        c.run(50, check=single)
        assert single.ok


def test_collect_mode_keeps_every_violation_once_and_the_first():
    c, _p, _ = healthy()
    leader, (f1, f2) = roles(c)
    s = make_suite(on_violation="collect")
    s.check_now(c)
    c.log(f1, "t", 0).ids[2] = 1000
    c.log(leader, "t", 0).high_watermark -= 1
    s(c)
    s(c)
    names = [v.invariant for v in s.violations]
    assert names.count("MonotoneLeaderHw") == 1
    assert names.count("LogMatching") == 2
    assert s.first.invariant == names[0]
    assert "LogMatching" in s.report()
    assert len(s.violations_of("LogMatching")) == 2


def test_check_all_reports_current_violations_every_time():
    c, _p, _ = healthy()
    _leader, (f1, _f2) = roles(c)
    assert check_all(c) == []
    c.log(f1, "t", 0).ids[0] = 5
    for _ in range(2):
        with pytest.raises(InvariantViolation, match="seed=7"):
            check_all(c)
    found = check_all(c, on_violation="collect")
    # the follower differs from both other replicas, and from what the leader's ISR must hold
    assert sorted(v.invariant for v in found) == ["LogMatching", "LogMatching", "StrongIsr",
                                                   "WeakIsr"]


def test_a_checker_moved_to_another_cluster_starts_afresh():
    c1, _p, _ = healthy(seed=1)
    c2, _p, _ = healthy(seed=2)
    leader, _ = roles(c1)
    s = only("MonotoneLeaderHw")
    s.check_now(c1)
    c1.log(leader, "t", 0).high_watermark = 10**6    # a huge HW on c1 ...
    s.check_now(c1)
    assert s.check_now(c2) == []                       # ... is not compared with c2's
    assert s.ok


# ------------------------------------------------------------------------------ HwWithinLog
def test_hw_within_log_catches_a_follower_hw_past_its_leo():
    c, _p, _ = healthy()
    _leader, (f1, _f2) = roles(c)
    s = make_suite(on_violation="collect")
    s.check_now(c)
    log = c.log(f1, "t", 0)
    log.high_watermark = log.log_end_offset + 3
    found = s.check_now(c)     # LogMatching compares only what both logs hold: no crash
    assert [v.invariant for v in found] == ["HwWithinLog"]
    assert found[0].offsets == (log.log_end_offset + 3, 0, log.log_end_offset)


# ------------------------------------------------------------------------------ ISR invariants
ISR_CHECKS = ["WeakIsr", "StrongIsr", "LeaderCandidateCompleteness", "ValidHighWatermark",
              "MonotoneTrueHw"]


def test_the_isr_and_true_hw_invariants_are_registered_with_docs_and_sources():
    after = list(CHECKS)[len(NAMES) + 1:]                  # after HwWithinLog
    assert after[:len(ISR_CHECKS)] == ISR_CHECKS
    # then the KRaft checkers (tests/test_kraft_check.py)
    assert after[len(ISR_CHECKS):] == ["ElrCompleteness", "LeaderFromIsrOrElr", "RaftSafety"]
    for name in ISR_CHECKS:
        assert CHECKS[name].__doc__ and CHECKS[name].source, name


def test_a_follower_truncated_below_the_hw_breaks_every_isr_invariant():
    c, _p, _ = healthy()
    leader, (f1, _f2) = roles(c)
    s = make_suite(ISR_CHECKS, on_violation="collect")
    assert s.check_now(c) == []
    hw = c.log(leader, "t", 0).high_watermark
    c.log(f1, "t", 0).truncate_to(hw - 5)     # as a pre-0.11 restart truncating to a stale HW
    found = s.check_now(c)
    # the leader still holds everything: only the candidate and the ISR prefix rules fire
    assert sorted({v.invariant for v in found}) == sorted(
        ["WeakIsr", "StrongIsr", "LeaderCandidateCompleteness", "ValidHighWatermark"])
    assert all(f1 in v.brokers for v in found)
    lcc = s.violations_of("LeaderCandidateCompleteness")[0]
    assert lcc.offsets == (hw - 5, hw) and "electing it would lose" in lcc.message
    weak = s.violations_of("WeakIsr")[0]
    assert weak.offsets == (hw, hw - 5) and weak.record_ids[0] == c.log(leader, "t", 0).ids[hw - 5]


def test_strong_isr_uses_the_controllers_isr_and_weak_isr_the_leaders_cached_one():
    c, _p, _ = healthy()
    leader, (f1, f2) = roles(c)
    s = make_suite(["WeakIsr", "StrongIsr"], on_violation="collect")
    assert s.check_now(c) == []
    c.brokers[leader].replica_manager.partitions[("t", 0)].isr = (leader, f1)   # cache lags
    c.log(f2, "t", 0).ids[4] = 777_777
    found = s.check_now(c)
    assert [v.invariant for v in found] == ["StrongIsr"]
    assert found[0].offsets == (4,) and found[0].brokers == (leader, f2)
    assert "the controller's ISR" in found[0].message


def test_leader_candidate_completeness_skips_stopped_replicas():
    c, _p, _ = healthy()
    _leader, (f1, _f2) = roles(c)
    s = fresh_check(c, "LeaderCandidateCompleteness")
    c.crash(f1)                               # still in the controller's ISR for a while
    c.log(f1, "t", 0).truncate_to(0)          # (a crash keeps the log; this is a hand edit)
    assert s.check_now(c) == []
    c.zk_control_plane.expire_session(f1)     # (else the restart could not register)
    c.start(f1)                               # running again, in the ISR, short: a candidate
    found = s.check_now(c)
    assert [v.brokers for v in found] == [(f1,)]


def test_monotone_true_hw_checks_what_the_leader_computes_its_hw_from():
    c, _p, _ = healthy()
    leader, (f1, _f2) = roles(c)
    s = fresh_check(c, "MonotoneTrueHw")
    g = s.ghost
    thw = g.true_hw[("t", 0)]
    assert thw == c.log(leader, "t", 0).high_watermark > 0
    part = c.brokers[leader].replica_manager.partitions[("t", 0)]
    part.remote[f1].log_end_offset = -1       # not heard from f1 in this term yet: frozen HW
    assert s.check_now(c) == []
    part.remote[f1].log_end_offset = thw - 3  # heard from f1, which lacks committed records
    found = s.check_now(c)
    assert len(found) == 1 and found[0].brokers == (leader, f1)
    assert found[0].offsets == (thw, thw) and f"broker {f1} at {thw - 3}" in found[0].message


def test_log_matching_ignores_a_follower_whose_hw_is_not_current():
    c, _p, _ = healthy()
    _leader, (f1, _f2) = roles(c)
    s = fresh_check(c, "LogMatching")
    c.trace.record("become_follower", f1, "t", 0, "leader 9, epoch 9")   # HW now stale ...
    c.log(f1, "t", 0).ids[2] = 121_212
    assert s.check_now(c) == []
    c.trace.record("hw", f1, "t", 0, c.log(f1, "t", 0).high_watermark)   # ... until a fetch sets it
    assert [v.offsets for v in s.check_now(c)] == [(2,), (2,)]


def test_the_unclean_rule_ignores_the_offline_row_of_unclean_election_disabled():
    hit = kcheck.ghost._unclean_election_rule
    t, n = ("t", 0), "controller"
    unclean = LeaderElection("offline", True, 1, 2, (2,), 2)
    assert str(unclean) == "UNCLEAN offline election: leader 1 -> 2, ISR [2], epoch 2"
    assert hit((5, "controller", n, *t, unclean))
    assert hit((5, "controller", n, *t, LeaderElection("offline", False, 1, 2, (2, 3), 2))) is None
    offline = PartitionOffline((1,), 2)
    assert str(offline) == ("no live in-sync replica and unclean election disabled: offline "
                            "(Leader: none, ISR [1]), epoch 2")
    assert hit((5, "controller", n, *t, offline)) is None


def test_an_unclean_election_allows_losing_only_what_was_acked_before_it():
    c, p, _ = healthy()
    leader, _ = roles(c)
    s = fresh_check(c, "NoAckedLoss")
    acked = p.acked()
    t_unclean = acked[5].done_ms
    s.ghost.allow_loss(("t", 0), "unclean leader election", t_unclean)
    log = c.log(leader, "t", 0)
    for r in (acked[3], acked[-1]):
        log.ids[r.offset] = 3_000_000 + r.offset
    found = {v.record_ids[0]: v for v in s.check_now(c)}
    assert found[acked[3].record_id].allowed_because == \
        f"unclean leader election at t={t_unclean} ms"
    assert found[acked[-1].record_id].allowed_because is None       # acked after it: a bug
    assert s.violations == [found[acked[-1].record_id]]


# ------------------------------------------------------------------------------ attach
def test_attach_checks_every_event_however_the_cluster_runs_and_snapshots_stay_plain():
    c = Cluster(brokers=3, seed=SEED, kafka_version=ZK)
    c.create_topic("t", partitions=1, replication_factor=3, config={"min.insync.replicas": 2})
    suite = kcheck.attach(c)
    p = c.producer(acks="all")
    for i in range(20):
        p.send("t", f"v{i}", partition=0)
    assert p.flush(5000)                     # runs the cluster through run_until
    # and through Cluster.run inside restart (past the old ZooKeeper session, or the new
    # process could not register: KafkaZkClient.registerBroker, NodeExists)
    c.restart(c.leader("t"), wait_ms=c.broker_config["zookeeper.session.timeout.ms"] + 500)
    c.run(8000)
    assert suite.ok, suite.report()
    assert sum(map(len, suite.ghost.acked.values())) == 20
    seen = suite.ghost.events_seen
    restored = restore(snapshot(c))      # handlers pickle as the bare handlers
    restored.run(100)
    assert suite.ghost.events_seen == seen
    kcheck.detach(c)
    c.run(100)
    assert suite.ghost.events_seen == seen
    c.log(c.leader("t"), "t", 0).ids[0] = 42      # detached: a corruption goes unseen ...
    c.run(100)
    assert suite.ok
    kcheck.attach(c, suite)                       # ... until checking again (a hand edit
    c.run(100)                                    # is not in the trace: a full check sees it)
    suite.check_now(c)
    assert not suite.ok


# ------------------------------------------------------------------------------ scenarios
#: What each failure scenario must show under its rule: the invariants violated (not allowed),
#: and the reason every acknowledged loss is allowed, if any.
SCENARIO_VERDICTS = {
    "kip101-scenario1-old": ({"NoAckedLoss", "StrongIsr", "WeakIsr", "LeaderCandidateCompleteness",
                              "ValidHighWatermark", "MonotoneTrueHw"}, None),
    "kip101-scenario1-fixed": (set(), None),
    "kip101-scenario2-old": ({"LogMatching"}, "power loss of every replica that held it"),
    "kip101-scenario2-fixed": (set(), "power loss of every replica that held it"),
    "jepsen-2013-unsafe": (set(), "unclean leader election"),
    "jepsen-2013-min-isr-2": (set(), None),
    "jepsen-2013-unclean-off": (set(), None),
    "kip279-fast-failovers-old": ({"LogMatching", "WeakIsr", "StrongIsr"},
                                  "unclean leader election"),
    "kip279-fast-failovers-fixed": (set(), "unclean leader election"),
    "controller-failover": (set(), None),
    "offline-unclean-off": (set(), None),
    "offline-unclean-on": (set(), "unclean leader election"),
}


@pytest.mark.parametrize("name", sorted(SCENARIO_VERDICTS))
def test_failure_scenarios_are_flagged_exactly(name):
    import jsonschema

    from kafkasim.scenarios.scenario import Scenario
    from kafkasim.tools.cli import SCHEMA_PATH

    expected, allowed_reason = SCENARIO_VERDICTS[name]
    run = Scenario.named(name).run(check=True)
    suite = run.check
    assert run.passed, [e for e in run.expectations if not e["ok"]]
    assert {v.invariant for v in suite.violations} == expected, suite.report()
    rep = run.report()
    jsonschema.validate(rep, json.loads(SCHEMA_PATH.read_text()))
    assert [v["name"] for v in rep["violations"]] == [v.invariant for v in suite.violations]
    assert all(v["time_ms"] >= 0 and v["details"]["seed"] == rep["seed"]
               and v["details"]["message"] for v in rep["violations"])
    # lost_acked stays the raw list; each lost record is either allowed (with why) or flagged
    lost = set(rep["lost_acked"])
    allowed = {a["record_id"]: a["reason"] for a in rep["allowed_losses"]}
    flagged = {v.record_ids[0] for v in suite.violations_of("NoAckedLoss")}
    assert lost == set(allowed) | (flagged & lost) and not set(allowed) & flagged
    if allowed_reason is None:
        assert not allowed
        assert bool(lost) == ("NoAckedLoss" in expected)
    else:
        assert lost and set(allowed) == lost
        assert all(allowed_reason in why for why in allowed.values()), allowed
        assert any(v.invariant == "NoAckedLoss" and allowed_reason in v.allowed_because
                   for v in suite.allowed)


def test_kip101_scenario1_old_names_the_lost_record_and_the_event():
    from kafkasim.scenarios.scenario import Scenario

    run = Scenario.named("kip101-scenario1-old").run(check=True)
    (v,) = run.check.violations_of("NoAckedLoss")
    m2 = next(rid for rid in range(1, len(run.cluster.records) + 1)
              if run.cluster.records.value(rid) == "m2")
    assert v.record_ids[0] == m2 and "'m2'" in v.message and "acks=all" in v.message
    assert v.seed == 1 and v.event is not None and v.time_ms > 0
    assert v.brokers == (1,)


def test_report_classifies_losses_without_checkers_too():
    from kafkasim.scenarios.scenario import Scenario

    for name, reason in (("jepsen-2013-unsafe", "unclean leader election"),
                         ("kip101-scenario2-old", "power loss of every replica that held it")):
        rep = Scenario.named(name).run().report()      # no checker: classified from the trace
        assert rep["violations"] == []
        assert rep["lost_acked"] and [a["record_id"] for a in rep["allowed_losses"]] == \
            rep["lost_acked"]
        assert all(reason in a["reason"] for a in rep["allowed_losses"])
    rep = Scenario.named("kip101-scenario1-old").run().report()
    assert rep["lost_acked"] and rep["allowed_losses"] == []


def test_scenario_check_key():
    from kafkasim.scenarios.scenario import Scenario, ScenarioError

    text = ('name = "x"\ncheck = true\n[[topics]]\nname = "t"\nreplication_factor = 3\n'
            '[[steps]]\ndo = "produce"\ntopic = "t"\nvalues = ["a"]\nwait = true\n')
    run = Scenario.loads(text).run()
    assert run.check is not None and run.check.ok
    assert Scenario.loads(text.replace("check = true", "check = false")).run().check is None
    with pytest.raises(ScenarioError, match="check must be true or false"):
        Scenario.loads(text.replace("check = true", 'check = "yes"'))


def test_an_unclean_election_also_allows_losing_what_a_deposed_leader_acks_after_it():
    c, p, _ = healthy()
    leader, _ = roles(c)
    s, s2 = fresh_check(c, "NoAckedLoss"), fresh_check(c, "NoAckedLoss")
    acked = p.acked()
    assert {r.leader_epoch for r in s.ghost.acked[("t", 0)]} == {0}
    # an unclean election to epoch 1 before any of these acks: all were written in epoch 0 by
    # a leader that (in this story) was deposed, as a zombie leader with ISR = {itself} does
    s.ghost.allow_loss(("t", 0), "unclean leader election", 0, epoch=1)
    s2.ghost.allow_loss(("t", 0), "unclean leader election", 0, epoch=0)   # same epoch: a bug
    c.log(leader, "t", 0).ids[acked[-1].offset] = 4_242_424
    (v,) = s.check_now(c)
    assert v.allowed_because == "unclean leader election at t=0 ms" and s.ok
    (v2,) = s2.check_now(c)
    assert v2.allowed_because is None and not s2.ok
