"""Idempotent producer (KIP-98): a retried batch already in the log is not appended twice."""

from __future__ import annotations

import pytest

from kafkasim.cluster import Cluster


def run_with_lost_answer(version: str, **producer) -> tuple[Cluster, object]:
    c = Cluster(3, seed=2, kafka_version=version)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer(acks="all", request_timeout_ms=1000, retries=10, **producer)
    c.hold(type="ProduceResponse")  # the broker appends, but the answer never arrives
    r = p.send("t", "once", partition=0)
    c.run(1500)                     # the client times out and retries
    c.release()
    p.flush()
    c.run(500)
    return c, r


def test_idempotent_producer_is_the_default_since_3_2_and_drops_the_duplicate():
    c, r = run_with_lost_answer("3.7")
    assert r.acked and r.offset == 0 and r.attempts == 2
    for b in (1, 2, 3):
        assert [v for _, _, v in c.log_records(b, "t")] == ["once"]
    dup = [row for row in c.trace.rows if row[1] == "produce_duplicate"]
    assert len(dup) == 1 and "already at offset 0" in dup[0][5]


@pytest.mark.parametrize("version, kw", [("3.7", {"enable_idempotence": False}), ("2.8", {})])
def test_without_idempotence_a_retry_duplicates_the_record(version, kw):
    c, r = run_with_lost_answer(version, **kw)
    assert r.acked and r.offset == 1
    assert [v for _, _, v in c.log_records(1, "t")] == ["once", "once"]


def test_a_new_leader_still_recognises_the_duplicate():
    c = Cluster(3, seed=4)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer(acks="all", request_timeout_ms=1000)
    c.hold(type="ProduceResponse", src=1)
    r = p.send("t", "x", partition=0)
    c.run_until(lambda cl: cl.log(2, "t", 0).log_end_offset == 1 and
                cl.log(3, "t", 0).log_end_offset == 1, 5000)
    c.crash(1)                      # followers hold the batch; the retry goes to the new leader
    assert p.flush(60000)
    leader = c.leader("t")
    assert leader in (2, 3) and r.acked and r.offset == 0
    assert [v for _, _, v in c.log_records(leader, "t")] == ["x"]


def crash_leader(c: Cluster) -> None:
    c.crash(c.leader("t", 0))


def test_producer_recovers_after_the_leader_dies_with_batches_in_flight():
    """Regression: retried batches must keep sequence order, and a retry of batches the new
    leader already copied is a duplicate, or the producer loops on OUT_OF_ORDER_SEQUENCE_NUMBER."""
    from kafkasim.workload import RateWorkload

    c = Cluster(3, seed=0, config={"zookeeper.session.timeout.ms": 6000})
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all")
    RateWorkload(c, p, "t", rate=20, duration_ms=5000)
    c.at(2000, crash_leader)
    c.run(60000)
    assert p.pending() == 0 and len(p.acked()) == 100
    assert not any("OUT_OF_ORDER_SEQUENCE_NUMBER" in r.errors for r in p.results.values())
    leader = c.leader("t")
    values = [v for _, _, v in c.log_records(leader, "t")]
    assert len(values) == len(set(values)) == 100  # no duplicates, nothing lost
