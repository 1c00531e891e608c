"""The replication fixes that make 2.0.1 a profile of its own (kafkasim.settings.versions).

- KAFKA-7164 (2.0.1; KIP-320 / KAFKA-7395 in 2.1.0): a follower whose leader id is unchanged
  skipped the become-follower steps (fetcher restart with truncation) in 2.0.0 and before, even
  when it had missed leader epochs, and kept records the leader no longer had.
- KAFKA-7415 (2.0.1): Partition.makeLeader writes (new epoch, LEO) to the leader-epoch cache; in
  2.0.0 the epoch entered it only at the first append, so a follower holding a later epoch than the
  leader's cached ones got UNDEFINED_EPOCH_OFFSET and truncated to its high watermark.

Each bug is reproduced at scenario level in 2.0.0 (a LogMatching violation: two replicas differ
below both HWs) and shown fixed in 2.0.1 with the same actions.
"""

from __future__ import annotations

import pytest

from kafkasim.core.fetcher import become_follower_needed
from kafkasim.observe.checks import check_all
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.versions import rules_for

TP = ("t", 0)


def _log_matching(c) -> list:
    return check_all(c, ["LogMatching"], on_violation="collect")


def _values(c, broker) -> list:
    return [v for _o, _e, v in c.log_records(broker, "t", 0)]


# ------------------------------------------------------------------------------ KAFKA-7164


@pytest.mark.parametrize(("version", "expected"), [
    # (old epoch, new epoch) -> become-follower steps needed, leader id unchanged
    ("2.0.0", {(1, 1): False, (1, 2): False, (1, 3): False}),
    ("0.10.2", {(1, 1): False, (1, 2): False, (1, 3): False}),
    # PartitionTest.testMakeFollowerWithNoLeaderIdChange @2.0.1: epoch 1 -> 3 true, 3 -> 4 false,
    # 4 -> 4 false
    ("2.0.1", {(1, 1): False, (1, 2): False, (1, 3): True, (3, 4): False, (4, 4): False}),
    # Partition.makeFollower @2.1.0 (KAFKA-7395): leaderEpoch == oldLeaderEpoch only
    ("2.1", {(1, 1): False, (1, 2): True, (1, 3): True}),
    ("3.7", {(1, 1): False, (1, 2): True, (1, 3): True}),
])
def test_make_follower_with_no_leader_id_change(version, expected):
    rules = rules_for(version)
    for (old, new), needed in expected.items():
        assert become_follower_needed(rules, old, new) is needed, (version, old, new)


def _missed_epoch_run(version: str) -> Cluster:
    """Broker 2 follows leader 1 and holds X (offset 3) that broker 3 never got. Broker 1 dies;
    broker 3 leads epoch 1 (broker 2 never hears: its LeaderAndIsr is lost) and writes Y at offset
    3; broker 1 returns, truncates X away and leads again (preferred election, epoch 2). Broker 2
    sees leader 1 -> 1, epoch 0 -> 2."""
    c = Cluster([4, 1, 2, 3], seed=1, kafka_version=version)   # broker 4: controller only
    c.create_topic("t", 1, 3, assignment=[[1, 3, 2]], config={"min.insync.replicas": 1})
    p = c.producer(acks="1", retries=5)
    for v in ("a0", "a1", "a2"):
        p.send("t", v, partition=0)
    c.run(1000)
    c.hold("FetchResponse", 1, 3)
    p.send("t", "X", partition=0)
    c.run(300)
    # both LeaderAndIsr broker 2 gets after the crash are lost: the election's (epoch 1) and
    # the OfflineReplica step's for the dead broker's partitions (onReplicasBecomeOffline)
    c.transport.drop("LeaderAndIsrRequest", None, 2, count=2)
    c.crash(1)
    c.run_until(lambda c: c.leader("t", 0) == 3, 20000)
    c.release()
    c.run(100)
    p.send("t", "Y", partition=0)
    c.run(500)
    c.start(1)
    c.run_until(lambda c: 1 in c.isr("t", 0), 30000)
    c.run(500)
    c.elect("t", [0], "preferred")
    c.run(3000)
    p.send("t", "Z", partition=0)
    c.run(5000)
    assert c.inspect.partition_state("t", 0)["leader_epoch"] == 2
    assert c.leader("t", 0) == 1
    return c


def test_kafka_7164_follower_that_missed_an_epoch_keeps_divergent_records_in_2_0_0():
    c = _missed_epoch_run("2.0.0")
    assert _values(c, 1) == ["a0", "a1", "a2", "Y", "Z"]
    assert _values(c, 2) == ["a0", "a1", "a2", "X", "Z"]      # never truncated X
    skipped = [r for r in c.trace.where("become_follower") if r[2] == 2 and "skipped" in r[5]]
    assert skipped and "epoch 2" in skipped[-1][5]
    found = _log_matching(c)
    assert any(v.offsets == (3,) and set(v.brokers) == {1, 2} for v in found), found


@pytest.mark.parametrize("version", ["2.0.1", "2.1", "3.7"])
def test_kafka_7164_follower_that_missed_an_epoch_truncates_since_2_0_1(version):
    c = _missed_epoch_run(version)
    for b in (1, 2, 3):
        assert _values(c, b) == ["a0", "a1", "a2", "Y", "Z"], b
    assert _log_matching(c) == []


@pytest.mark.parametrize(("version", "restarted"), [
    ("2.0.0", False), ("2.0.1", False), ("2.1", True), ("3.7", True)])
def test_one_epoch_bump_with_the_same_leader_restarts_the_fetcher_only_since_2_1(version,
                                                                              restarted):
    # A dead follower leaves the ISR through the controller, which bumps the leader epoch
    # (0 -> 1) and tells the remaining follower; the leader stays broker 1.
    c = Cluster([4, 1, 2, 3], seed=1, kafka_version=version)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(500)
    c.crash(3)
    c.run(30000)          # past zookeeper.session.timeout.ms (6 s before 2.5, 18 s since)
    assert c.inspect.partition_state("t", 0)["leader_epoch"] == 1 and c.leader("t", 0) == 1
    rows = [r for r in c.trace.where("become_follower") if r[2] == 2 and "epoch 1" in r[5]]
    assert len(rows) == 1
    assert ("skipped" not in rows[0][5]) is restarted
    thread = next(t for t in c.brokers[2].fetchers.values() if TP in t.partitions)
    assert thread.partitions[TP].current_leader_epoch == 1


# ------------------------------------------------------------------------------ KAFKA-7415


@pytest.mark.parametrize(("version", "assigned"), [
    ("0.11.0", False), ("2.0.0", False), ("2.0.1", True), ("2.1", True), ("3.7", True)])
def test_make_leader_updates_epoch_cache(version, assigned):
    # PartitionTest.testMakeLeaderUpdatesEpochCache (added by KAFKA-7415): after makeLeader the
    # new epoch answers OffsetsForLeaderEpoch with the LEO, before any append in it
    c = Cluster([4, 1, 2], seed=1, kafka_version=version)
    c.create_topic("t", 1, 2, assignment=[[1, 2]])
    p = c.producer(acks="all", retries=5)
    for v in ("k1", "k2"):
        p.send("t", v, partition=0)
    c.run(1000)
    c.shutdown(1)                               # leadership moves to broker 2, epoch 1
    c.run(5000)
    assert c.leader("t", 0) == 2
    log = c.brokers[2].logs[TP]
    cache = log.leader_epoch_cache
    assert (cache.latest_epoch() == 1) is assigned
    assert ((1, 2) in [tuple(e) for e in cache.entries]) is assigned
    p.send("t", "k3", partition=0)
    c.run(1000)
    assert cache.entries[-1] == (1, 2)          # the first append assigns it in any case


def _back_to_back_elections_run(version: str) -> Cluster:
    """The KIP-279 fast-failover shape, with the returning follower asking before the re-elected
    leader appends: broker 2 holds epoch 1 (B-only at offset 3, its checkpointed HW 4) that broker
    1, leading again in epoch 2, never had."""
    c = Cluster([3, 1, 2], seed=1, kafka_version=version)      # broker 3: controller only
    c.create_topic("t", 1, 2, assignment=[[1, 2]],
                   config={"unclean.leader.election.enable": True, "min.insync.replicas": 1})
    p = c.producer(acks="1", retries=5)
    for v in ("a0", "a1", "a2"):
        p.send("t", v, partition=0)
    c.run(1000)
    c.hold("FetchResponse", 1, 2)
    p.send("t", "A-only", partition=0)
    c.run(100)
    c.crash(1)
    c.run_until(lambda c: c.leader("t", 0) == 2, 20000)
    c.release()
    c.run(100)
    p.send("t", "B-only", partition=0)
    c.run(6000)      # past replica.high.watermark.checkpoint.interval.ms: HW 4 checkpointed
    c.crash(2)
    c.run(100)
    c.start(1)
    c.run_until(lambda c: c.leader("t", 0) == 1, 30000)
    c.start(2)
    c.run(2000)
    p.send("t", "A-new", partition=0)
    c.run(3000)
    return c


def test_kafka_7415_undefined_epoch_answer_truncates_to_hw_and_diverges_in_2_0_0():
    c = _back_to_back_elections_run("2.0.0")
    assert _values(c, 1) == ["a0", "a1", "a2", "A-only", "A-new"]
    assert _values(c, 2) == ["a0", "a1", "a2", "B-only", "A-new"]
    found = _log_matching(c)
    assert any(v.offsets == (3,) and set(v.brokers) == {1, 2} for v in found), found


@pytest.mark.parametrize("version", ["2.0.1", "2.1"])
def test_kafka_7415_epoch_written_at_become_leader_truncates_correctly_since_2_0_1(version):
    c = _back_to_back_elections_run(version)
    for b in (1, 2):
        assert _values(c, b) == ["a0", "a1", "a2", "A-only", "A-new"], b
    assert _log_matching(c) == []
