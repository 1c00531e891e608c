"""A RateWorkload's records: one id range a tick (``RateWorkload.record_runs``), read back as
``record_ids`` and ``results`` in send order, shared by History snapshots as a growing list."""

from __future__ import annotations

from kafkasim.observe.history import History
from kafkasim.observe.snapshots import restore, snapshot
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload


def _run(ms: int):
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", partitions=1, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    w = RateWorkload(c, p, "t", rate=1000, duration_ms=ms, partition=0)
    return c, p, w


def test_record_ids_and_results_follow_the_ticks_in_order():
    c, p, w = _run(50)
    other = c.producer(acks="all")          # another producer's ids interleave between ticks
    c.run(20)
    mine = other.send("t", "x", partition=0)
    c.run(40)
    assert p.flush()
    ids = w.record_ids
    assert len(ids) == w.sent == 50 and ids == sorted(ids) and mine.record_id not in ids
    assert all(len(run) == 5 for run in w.record_runs)       # 1,000/s, a tick every 5 ms
    assert [r.record_id for r in w.results] == ids
    assert [r.value for r in w.results] == [f"{w.client_id}-{n}" for n in range(1, 51)]
    assert all(r.acked for r in w.results) and w.results[0] is p.results[ids[0]]


def test_a_seek_restores_the_workload_records_sent_by_then():
    c, p, w = _run(1000)
    h = History(c, every_ms=200)
    h.run(1000)
    before = list(w.record_ids)
    h.seek(400)
    w2 = h.cluster.clients[w.client_id]
    assert w2.record_ids == before[:w2.sent] and 0 < w2.sent < len(before)
    h.seek(800)
    w3 = h.cluster.clients[w.client_id]
    assert w3.record_ids == before[:w3.sent] and w2.sent < w3.sent
    assert [r.record_id for r in w3.results] == before[:w3.sent]


def test_generated_values_are_made_when_asked_and_survive_a_restore():
    """A tick's values "<name>-<n>" are one shared NumberedValue in the record registry (no
    string per record, and no object per tick while the ticks' record ids follow on); the
    log's values, a consumer's and a restored cluster's are the text."""
    c, p, w = _run(50)
    other = c.producer(acks="all")
    c.run(12)
    mine = other.send("t", "x", partition=0)
    c.run(60)
    assert p.flush()
    ids = w.record_ids
    assert [c.records.value(rid) for rid in ids] == [f"{w.client_id}-{n}" for n in range(1, 51)]
    assert c.records.value(mine.record_id) == "x"
    # one NumberedValue for every run that continues the previous one (issue 31: no object
    # per run in a long run): two here, the other producer's "x" took a record id in between
    assert len({id(c.records.values[rid]) for rid in ids}) == 2 < len(w.record_runs)
    logged = [v for _off, _ep, v in c.log_records(c.leader("t", 0), "t", 0)]
    assert [v for v in logged if v != "x"] == [f"{w.client_id}-{n}" for n in range(1, 51)]
    assert logged.count("x") == 1
    r = restore(snapshot(c))
    assert [r.records.value(rid) for rid in ids] == [c.records.value(rid) for rid in ids]
    assert r.records.value(mine.record_id) == "x"
