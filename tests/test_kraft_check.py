"""The KRaft checkers of kafkasim.observe.checks (issue 12): ElrCompleteness, LeaderFromIsrOrElr,
RaftSafety -- each silent on a correct run and firing on a deliberately broken rule or a
hand-edited state -- and the existing checkers reading the committed metadata image."""

from __future__ import annotations

import dataclasses

import pytest
from clusters import make_cluster, started_kraft

from kafkasim.control.kraft import partition_change
from kafkasim.observe.checks import CHECKS, attach, make_suite
from kafkasim.runtime.cluster import Cluster

KRAFT_CHECKS = ["ElrCompleteness", "LeaderFromIsrOrElr", "RaftSafety"]


def kraft_cluster(version="4.1", *, min_isr=2, assignment=((1, 2, 3),), seed=1, **config):
    return started_kraft(make_cluster(
        seed=seed, kafka_version=version,
        config={"min.insync.replicas": min_isr, "replica.lag.time.max.ms": 3000, **config}))


def produce(c, n, start=0, partition=0):
    p = c.producer(acks="all")
    rs = [p.send("t", f"m{start + i}", partition=partition) for i in range(n)]
    c.run(500)
    return rs


def test_the_kraft_checkers_are_registered_with_docs_and_sources():
    for name in KRAFT_CHECKS:
        assert name in CHECKS and CHECKS[name].__doc__ and CHECKS[name].source, name


def test_zookeeper_clusters_make_the_kraft_checkers_no_ops():
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    s = make_suite(KRAFT_CHECKS, on_violation="collect")
    produce(c, 5)
    assert s.check_now(c) == [] and s.ghost.elr == {} and s.ghost.meta_changes == []


def test_elr_fills_and_empties_with_no_violation_of_any_checker():
    """KIP-966 walk-through (fact sheet §7b/§7c): crash the replicas one by one under min ISR
    2; the ISR shrinks, the ELR fills; every checker, the KRaft ones included, stays silent."""
    c = kraft_cluster()
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    s = attach(c)
    produce(c, 20)
    for b in (1, 2):
        c.crash(b)
        c.run(15000)
    st = c.kraft.image.partitions[("t", 0)]
    # 1 left while the ISR [2, 3] still met min ISR; 2 left it below: only 2 is eligible
    assert st.isr == (3,) and st.elr == (2,), st
    assert s.ghost.elr.get(("t", 0)) == tuple(st.elr)
    c.crash(3)
    c.run(15000)
    for b in (1, 2, 3):
        c.start(b)
    c.run(30000)
    assert sorted(c.isr("t")) == [1, 2, 3]
    assert s.violations == [], s.report()


def test_elr_completeness_fires_when_the_hw_ignores_the_followers():
    """Break Partition.maybeIncrementLeaderHW (the HW follows the leader's LEO alone): records
    are acked that the followers never got; once they fall out of the ISR below min ISR they
    enter the ELR (KIP-966) without the committed data, which ElrCompleteness reports."""
    c = kraft_cluster()
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    produce(c, 5)
    c.swap_rule("maybe_increment_leader_hw",
                lambda leader_leo, current_hw, *a, **k: max(leader_leo, current_hw))
    s = attach(c)
    c.cut(1, 2)
    c.cut(1, 3)                     # followers stop fetching; they still heartbeat
    rs = produce(c, 5, start=5)
    assert all(r.status == "acked" for r in rs)
    c.run(8000)                     # replica.lag.time.max.ms: ISR [1] < min ISR -> ELR [2, 3]
    st = c.kraft.image.partitions[("t", 0)]
    assert st.isr == (1,) and sorted(st.elr) == [2, 3], st
    elr = s.violations_of("ElrCompleteness")
    assert elr, s.report()
    assert {v.brokers[0] for v in elr} == {2, 3}
    assert any("electing it from the ELR would lose committed offsets 5..9" in v.message
               for v in elr)


def test_elr_completeness_fires_on_a_hand_edited_elr_member_lacking_data():
    c = kraft_cluster()
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    produce(c, 10)
    s = make_suite(["ElrCompleteness"], on_violation="collect")
    assert s.check_now(c) == []
    tp = ("t", 0)
    img = c.kraft.image
    img.partitions[tp] = dataclasses.replace(img.partitions[tp], isr=(1, 2), elr=(3,))
    c.log(3, "t").truncate_to(6)
    found = s.check_now(c)
    assert found and all(v.invariant == "ElrCompleteness" and v.brokers == (3,) for v in found)
    assert any(v.offsets == (6, 10) for v in found)
    assert {v.record_ids[0] for v in found if v.record_ids} == \
        set(c.log(1, "t").ids[6:10])


def test_leader_from_isr_or_elr_fires_on_an_election_outside_the_isr(monkeypatch):
    """Break isValidNewLeader (``partition_change.is_valid_new_leader``: any acceptable replica
    may lead, in the ISR or not, without marking the election unclean): fencing the leader
    elects broker 3, out of the ISR since it was cut off, with LeaderRecoveryState RECOVERED."""
    monkeypatch.setattr(partition_change, "is_valid_new_leader",
                        lambda builder, r: bool(builder.is_acceptable_leader(r)))
    c = kraft_cluster(min_isr=1)
    c.create_topic("t", 1, 3, assignment=[[1, 3, 2]])
    produce(c, 5)
    s = attach(c)
    c.cut(1, 3)
    produce(c, 3, start=5)          # broker 3 misses them and leaves the ISR: [1, 2]
    c.run(8000)
    assert sorted(c.isr("t")) == [1, 2]
    c.crash(1)
    c.run(15000)                    # fenced: the broken rule elects 3
    assert c.leader("t") == 3
    v = s.violations_of("LeaderFromIsrOrElr")
    assert v and v[0].brokers == (3,) and "neither the ISR [1, 2]" in v[0].message, s.report()


def test_leader_from_isr_or_elr_accepts_an_unclean_election():
    c = kraft_cluster(min_isr=1)
    c.create_topic("t", 1, 3, assignment=[[1, 3, 2]],
                   config={"unclean.leader.election.enable": True})
    produce(c, 5)
    s = attach(c)
    c.cut(1, 3)
    produce(c, 3, start=5)
    c.run(8000)
    c.crash(2)
    c.run(15000)
    c.crash(1)
    c.run(15000)                    # no ISR member left: 3 is elected uncleanly (RECOVERING)
    assert c.leader("t") == 3
    changes = [r for r in c.trace.rows if r[1] == "controller" and
               getattr(r[5], "unclean", False)]
    assert changes
    assert s.violations_of("LeaderFromIsrOrElr") == [], s.report()


def test_raft_safety_fires_when_a_committed_metadata_entry_is_lost():
    c = kraft_cluster()
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    s = make_suite(["RaftSafety"], on_violation="collect")
    assert s.check_now(c) == []
    node = c.kraft.nodes[c.controller_id()]
    end = node.raft.log.end_offset
    node.raft.log.truncate_to(end - 3)       # by hand: committed entries vanish
    found = s.check_now(c)
    assert found and all(v.invariant == "RaftSafety" for v in found)
    assert any(f"node {node.id} lost committed offset" in v.message for v in found)


@pytest.mark.parametrize("version", ["4.0", "4.1"])
def test_existing_checkers_read_the_committed_image_in_kraft(version):
    """StrongIsr / ValidHighWatermark / LeaderCandidateCompleteness read the controller's ISR:
    in KRaft the committed image's (Ghost._read_states)."""
    c = kraft_cluster(version)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    produce(c, 10)
    s = make_suite(["StrongIsr", "LeaderCandidateCompleteness", "ValidHighWatermark"],
                   on_violation="collect")
    assert s.check_now(c) == []
    assert s.ghost.states[("t", 0)] == (1, c.kraft.image.partitions[("t", 0)].leader_epoch,
                                         tuple(c.kraft.image.partitions[("t", 0)].isr))
    c.log(2, "t").truncate_to(4)
    names = {v.invariant for v in s.check_now(c)}
    assert {"StrongIsr", "LeaderCandidateCompleteness", "ValidHighWatermark"} <= names
