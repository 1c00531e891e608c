"""Notebook 09's helpers and exercise checks (kafkasim/course/epochs.py).

The exercise answers are derived from Kafka's rules as kafkasim implements them
(LeaderEpochFileCache.endOffsetFor, AbstractFetcherThread.getOffsetTruncationState: KIP-101,
KIP-279), and the checker-graded exercise from KIP-101's two scenarios: scenario 1 loses an
acknowledged write on 0.10.2, scenario 2 leaves the replicas diverged; 0.11.0 and today's Kafka
keep both safe (EpochDrivenReplicationProtocolAcceptanceTest's cases).
"""

from __future__ import annotations

from kafkasim.course.epochs import (
    check_divergence,
    check_end_offset,
    check_truncation,
    checkpoint_text,
    epoch_table,
    truncations,
    verdict,
)
from kafkasim.observe.checks import attach
from kafkasim.runtime.cluster import Cluster


def scenario1_faults(c, p):
    """KIP-101 scenario 1 on the exercise set-up (leader 1, follower 2): the follower restarts
    while the response carrying the new HW is held, then the leader dies."""
    p.send("t", "m1", partition=0)
    c.run(6000)
    m2 = p.send("t", "m2", partition=0)
    c.run_until(lambda c: c.log(2, "t").log_end_offset == 2, 10000)
    c.hold("FetchResponse", 1, 2)
    c.run_until(lambda c: m2.status != "pending", 10000)
    c.restart(2, clean=True)
    c.run(200)
    c.crash(1)
    c.run_until(lambda c: c.leader("t") == 2, 30000)
    c.run(500)
    p.send("t", "m3", partition=0)
    c.run(1000)


def scenario2_faults(c, p):
    """KIP-101 scenario 2: m2 reaches only the leader's disk, both brokers lose power, the
    follower returns first and leads."""
    p.send("t", "m1", partition=0)
    c.run(40000)
    c.slow(2, disk_ms=10000)
    m2 = p.send("t", "m2", partition=0)
    c.run_until(lambda c: m2.status != "pending", 30000)
    c.slow(2, disk_ms=0)
    c.run(26000)
    c.power_loss(1)
    c.power_loss(2)
    c.run(20000)
    c.start(2, retry=True)
    c.run_until(lambda c: c.leader("t") == 2, 40000)
    c.run(2000)
    m3 = p.send("t", "m3", partition=0)
    c.run_until(lambda c: m3.status != "pending", 30000)
    c.start(1, retry=True)
    c.run(3000)
    p.send("t", "m4", partition=0)
    c.run(1000)


def test_check_end_offset_accepts_kafkas_answer_only(capsys):
    # LeaderEpochFileCacheTest
    # .shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested:
    # an epoch the leader skipped ends where the next cached epoch starts, named by its floor
    entries = [(0, 0), (2, 5), (5, 9)]
    assert check_end_offset(entries, 3, 12, answer=(2, 9))
    assert not check_end_offset(entries, 3, 12, answer=(3, 9))      # epoch wrong (pre-KIP-279)
    assert "epoch is not" in capsys.readouterr().out
    assert not check_end_offset(entries, 3, 12, answer=(2, 12))
    assert check_end_offset(entries, 5, 12, answer=(5, 12))         # the latest ends at the LEO
    assert not check_end_offset(entries, 3, 12, answer=None)
    assert not check_end_offset(entries, 3, 12, answer="nine")


def test_check_truncation_multi_round_case():
    # ReplicaFetcherThreadTest.shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnown
    # ToFollower: the follower lacks the leader's epoch 2, so it truncates to the end of its own
    # epoch 1 and asks again
    follower = [(0, 0), (1, 4), (3, 7)]
    assert check_truncation((2, 9), follower, 11, answer=(7, False))
    assert not check_truncation((2, 9), follower, 11, answer=(7, True))
    assert not check_truncation((2, 9), follower, 11, answer=(9, True))
    # same epoch known: the smaller end offset, done
    assert check_truncation((1, 6), follower, 11, answer=(6, True))
    assert not check_truncation((2, 9), follower, 11, answer=None)


def test_check_divergence_passes_both_kip101_scenarios():
    assert check_divergence(scenario1_faults)
    assert check_divergence(scenario2_faults)


def test_check_divergence_rejects_runs_without_an_anomaly_or_with_swapped_rules(capsys):
    def quiet(c, p):
        p.send("t", "m1", partition=0)
        c.run(1000)

    def nothing_acked(c, p):
        c.run(1000)

    def swapped(c, p):
        c.swap_rule("get_offset_truncation_state", lambda *a: (a[-1], True))
        scenario1_faults(c, p)

    def broken(c, p):
        c.crash(99)

    assert not check_divergence(quiet)
    assert not check_divergence(nothing_acked)
    assert not check_divergence(swapped)
    assert "swap_rule" in capsys.readouterr().out
    assert not check_divergence(broken)
    assert "raised" in capsys.readouterr().out
    assert not check_divergence(None)
    assert not check_divergence("my_faults")


def test_tables_follow_the_run():
    c = Cluster(3, seed=9, kafka_version="0.11.0")
    checks = attach(c)
    c.create_topic("t", 1, 2, assignment=[[1, 2]], config={"min.insync.replicas": 1})
    p = c.producer("p", acks="all")
    p.send("t", "a", partition=0)
    c.run(1000)
    table = epoch_table(c, "t")
    assert "0:0:a" in table and "[(0, 0)]" in table
    # LeaderEpochCheckpointFile format: version 0, entry count, "epoch offset" lines
    assert checkpoint_text(c, 1, "t").split("\n")[:3] == ["0", "1", "0 0"]
    assert truncations(c, "t") == "(no truncation)"
    assert verdict(checks) == []
    old = Cluster(3, seed=9, kafka_version="0.10.2")
    old.create_topic("t", 1, 2, assignment=[[1, 2]])
    old.producer("p", acks="all").send("t", "a", partition=0)
    old.run(1000)
    assert "before Kafka 0.11" in checkpoint_text(old, 1, "t")
    # message format v0/v1 (before KIP-101's v2 batches) carries no leader epoch: no cache, and
    # no epoch on a record either
    assert " - " in epoch_table(old, "t") and "0:-:a" in epoch_table(old, "t")


def test_verdict_prints_the_invariant_names_not_a_list():
    from kafkasim.course.epochs import Invariants

    assert str(Invariants(["LogMatching", "WeakIsr"])) == "LogMatching, WeakIsr"
    assert str(Invariants([])) == "none" and Invariants([]) == []
