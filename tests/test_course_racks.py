"""Notebook 11's grading helpers (kafkasim.course.racks): placement follows
AdminUtils.assignReplicasToBrokers (AdminUtilsTest / AdminRackAwareTest, KIP-36) and KRaft's
StripedReplicaPlacer (StripedReplicaPlacerTest, KIP-631); availability verdicts after a rack
failure follow from how many replicas each partition kept; each check passes on the answer the
rule gives and fails on another."""

from __future__ import annotations

import pytest

from kafkasim.control.placement import rack_alternated_broker_list
from kafkasim.course.racks import (
    LAYOUTS,
    availability,
    check_rack_alternated,
    check_rack_failure,
    check_zk_replicas,
    checker_verdict,
    count_verdicts,
    kraft_assignment,
    parse_racks,
    placement_view,
    zk_assignment,
)
from kafkasim.runtime.cluster import Cluster

# graded as in the notebooks, which set KAFKA_VERSION = "4.3" (conftest.py)
pytestmark = pytest.mark.usefixtures("notebook_kafka_version")

EXAMPLE = {0: "r1", 1: "r3", 2: "r3", 3: "r2", 4: "r2", 5: "r1"}


def test_zk_assignment_matches_adminutils_rack_aware_example():
    # AdminRackAwareTest.testGetRackAlternatedBrokerListAndAssignReplicasToBrokers (fact sheet
    # §9a): the alternated lists, then startIndex 0, shift 0, RF 3.
    assert rack_alternated_broker_list(sorted(EXAMPLE), EXAMPLE) == [0, 3, 1, 5, 4, 2]
    without_5 = {b: r for b, r in EXAMPLE.items() if b != 5}
    assert rack_alternated_broker_list(sorted(without_5), without_5) == [0, 3, 1, 4, 2]
    assignment = zk_assignment(EXAMPLE, 7, 3)
    assert assignment[0] == [0, 3, 1]
    assert assignment[1] == [3, 1, 5]
    assert assignment[5] == [2, 0, 3]
    assert assignment[6] == [0, 4, 2]


def test_kraft_assignment_puts_one_replica_per_rack_with_three_racks():
    # StripedReplicaPlacer.RackList.place: followers walk the racks from the leader's, skipping
    # the leader's rack once, so with RF <= #racks every copy lands in a different rack
    # (StripedReplicaPlacerTest.testRackListWithMultipleRacks: a 2nd copy per rack only at RF 4).
    racks = LAYOUTS["3 racks x 2"]
    for replicas in kraft_assignment(racks, 12, 3, seed=5).values():
        assert len({racks[b] for b in replicas}) == 3


def test_parse_racks_and_view():
    assert parse_racks("1:a 2:b") == {1: "a", 2: "b"}
    assert "distinct racks" in placement_view("2 racks x 3", "AdminUtils (ZooKeeper era)")


def test_rack_failure_verdicts_follow_replicas_left():
    # A partition keeps a leader while one replica survives; below min.insync.replicas
    # (Partition.checkEnoughReplicasReachMinIsr) it refuses acks=all writes.
    c = Cluster(6, seed=11)
    assignment = c.create_topic("t", partitions=6, replication_factor=3,
                                config={"min.insync.replicas": 2})
    for b in (1, 2):
        c.crash(b)
    c.run(30_000)
    verdicts = availability(c, "t")
    for p, replicas in assignment.items():
        left = len([b for b in replicas if b not in (1, 2)])
        assert verdicts[p] == ("ok" if left >= 2 else "below min ISR")
    assert sum(count_verdicts(c, "t").values()) == 6


def test_checker_verdict_names_violated_invariants():
    class Suite:
        violations = [type("V", (), {"invariant": "NoAckedLoss"})()]
    assert checker_verdict(Suite()) == "VIOLATED NoAckedLoss"
    Suite.violations = []
    assert checker_verdict(Suite()).startswith("no violation")


def test_check_rack_alternated():
    want = rack_alternated_broker_list(sorted(EXAMPLE), EXAMPLE)
    assert check_rack_alternated(EXAMPLE, answer=want)
    assert not check_rack_alternated(EXAMPLE, answer=sorted(EXAMPLE))
    assert not check_rack_alternated(EXAMPLE, answer=...)


def test_check_zk_replicas():
    want = zk_assignment(EXAMPLE, 3, 3)[2]
    assert check_zk_replicas(EXAMPLE, partition=2, rf=3, answer=want)
    assert not check_zk_replicas(EXAMPLE, partition=2, rf=3, answer=list(reversed(want)))
    assert not check_zk_replicas(EXAMPLE, partition=2, rf=3, answer=None)


def test_check_rack_failure_two_racks():
    # Two racks, RF 3: the striped placer alternates the leader's rack, so half the
    # partitions hold two copies in the failed rack and drop below min ISR 2.
    racks = LAYOUTS["2 racks x 3"]
    per_rack_a = [sum(racks[b] == "a" for b in r)
                  for r in kraft_assignment(racks, 6, 3, seed=11).values()]
    want = sum(n >= 2 for n in per_rack_a)
    assert check_rack_failure(racks, "a", 3, 2, 6, answer=want)
    assert not check_rack_failure(racks, "a", 3, 2, 6, answer=want + 1)
    assert not check_rack_failure(racks, "a", 3, 2, 6, answer=...)
