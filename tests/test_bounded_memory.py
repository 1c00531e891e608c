"""Bounded memory for long runs (issue 16): a trace that spills to Parquet, checked and
snapshotted exactly like one that does not."""

from __future__ import annotations

import pytest

from kafkasim.observe.checks import make_suite
from kafkasim.observe.history import History
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload


def _run(version: str, ms: int, spill_dir=None, max_rows: int = 3000, check=None) -> Cluster:
    c = Cluster(brokers=3, seed=2, kafka_version=version)
    if spill_dir is not None:
        c.trace.spill_to(str(spill_dir), max_rows)
    c.create_topic("t", partitions=2, replication_factor=3)
    RateWorkload(c, c.producer(acks="all", linger_ms=5), "t", rate=300, duration_ms=ms)
    c.run(ms // 2, check=check)
    c.crash(2)
    c.run(ms - ms // 2, check=check)
    return c


@pytest.mark.parametrize("version", ["3.7", "4.3"])
def test_a_spilled_trace_has_the_same_digest_and_frame_and_holds_few_rows(tmp_path, version):
    plain = _run(version, 6000)
    spilled = _run(version, 6000, tmp_path, max_rows=3000)
    t = spilled.trace
    # (4.3: a follower's first Fetch can reach its leader before the leader published the
    # partition -- UNKNOWN_TOPIC_OR_PARTITION, a 1 s backoff -- so the run holds fewer rows)
    assert len(t.spill_files) >= 2 and all((tmp_path / f).exists() for f in t.spill_files)
    per_s = len(plain.trace.rows) / 6
    assert len(t.rows) < 3000 + 1.5 * per_s           # spilled at the next metrics sample
    assert len(t) == t.total == len(plain.trace.rows)
    assert t.digest() == plain.trace.digest()
    a, b = t.to_frame(), plain.trace.to_frame()
    assert a.equals(b)


def test_the_checks_see_every_row_of_a_spilling_trace(tmp_path):
    plain_suite = make_suite(on_violation="collect")
    _run("3.7", 6000, check=plain_suite)
    spill_suite = make_suite(on_violation="collect")
    c = _run("3.7", 6000, tmp_path, max_rows=2000, check=spill_suite)
    assert c.trace.spilled > 0
    g, h = spill_suite.ghost, plain_suite.ghost
    assert g.cursor == h.cursor == c.trace.total
    assert sorted((tp, len(a)) for tp, a in g.acked.items()) == \
        sorted((tp, len(a)) for tp, a in h.acked.items())
    assert sorted(g.true_hw.items()) == sorted(h.true_hw.items())
    assert [v.key for v in spill_suite.violations] == [v.key for v in plain_suite.violations]


def test_a_history_over_a_spilling_trace_restores_exactly(tmp_path):
    c = Cluster(brokers=3, seed=2, kafka_version="3.7")
    c.trace.spill_to(str(tmp_path), 2000)
    c.create_topic("t", partitions=2, replication_factor=3)
    RateWorkload(c, c.producer(acks="all", linger_ms=5), "t", rate=300, duration_ms=8000)
    h = History(c, every_ms=1000)
    h.run(8000)
    end = (h.cluster.trace.digest(), h.cluster.trace.total)
    assert h.cluster.trace.spilled > 0
    horizon = h.horizon
    h.seek(2500)
    h.seek(horizon)
    assert (h.cluster.trace.digest(), h.cluster.trace.total) == end


def test_spill_settings_are_checked(tmp_path):
    c = Cluster(brokers=1, seed=1, kafka_version="3.7")
    with pytest.raises(ValueError, match="max_rows"):
        c.trace.spill_to(str(tmp_path), 0)


def test_results_without_errors_share_one_unchangeable_empty_list():
    import pickle

    from kafkasim.runtime.clients.producer import NO_ERRORS

    c = Cluster(brokers=3, seed=1, kafka_version="3.7",
                config={"min.insync.replicas": 3})
    c.create_topic("t", partitions=1, replication_factor=3)
    p = c.producer(acks="all")
    ok = [p.send("t", f"v{i}") for i in range(3)]
    c.run(500)
    assert all(r.acked and r.errors == [] and r.errors is NO_ERRORS for r in ok)
    with pytest.raises(TypeError, match="shares this empty list"):
        ok[0].errors.append("X")
    assert pickle.loads(pickle.dumps(ok[0])).errors is NO_ERRORS
    c.crash(3)                          # NOT_ENOUGH_REPLICAS: every retry adds an error
    c.run(30000)
    late = p.send("t", "late")
    c.run(5000)
    assert late.errors and set(late.errors) == {"NOT_ENOUGH_REPLICAS"}
    assert late.errors is not NO_ERRORS and NO_ERRORS == []


def test_spill_files_get_unpredictable_names_and_never_follow_a_planted_symlink(tmp_path):
    """Trace.spill_to writes each part to a new file created exclusively under a random name
    (tempfile.mkstemp): a symlink planted under the names older versions used (or any other
    name) is not followed, and the file it points at is left alone."""
    import os
    victim = tmp_path / "victim.txt"
    victim.write_text("keep me")
    spill = tmp_path / "spill"
    spill.mkdir()
    for part in range(50):     # every name the predictable scheme would have used first
        os.symlink(victim, spill / f"trace-{os.getpid()}-{part:06d}-{0:012d}.parquet")
    a = _run("3.7", 4000, spill, max_rows=1000)
    b = _run("3.7", 4000, spill, max_rows=1000)
    names = [os.path.basename(p) for p in (*a.trace.spill_files, *b.trace.spill_files)]
    assert len(names) == len(set(names)) >= 4
    assert all(not os.path.islink(p) for p in (*a.trace.spill_files, *b.trace.spill_files))
    assert victim.read_text() == "keep me"
    assert a.trace.digest() == b.trace.digest()      # same run, same rows, other file names


@pytest.mark.parametrize("ms", [0, -5, 1.5, "100", True, 24 * 3600 * 1000 + 1])
def test_the_players_pause_names_its_argument_and_range_and_changes_nothing(ms):
    from kafkasim.widgets.player import Player
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", partitions=1, replication_factor=3)
    pl = Player(c, topic="t")
    before = (pl.history.now, len(pl.history.actions), c.trace.digest())
    with pytest.raises(ValueError, match=r"pause_broker\(ms\).*integer milliseconds from 1 to "
                                         r"86400000.*got"):
        pl.pause_broker(2, ms)
    assert (pl.history.now, len(pl.history.actions), pl.history.cluster.trace.digest()) == before


def _long_run(monkeypatch, compact_at: int) -> tuple[Cluster, object]:
    from kafkasim.runtime.clients import produce_result
    monkeypatch.setattr(produce_result, "COMPACT_RUNS_AT", compact_at)
    monkeypatch.setattr(produce_result, "KEEP_RUNS", 16)
    c = Cluster(brokers=3, seed=4, kafka_version="3.7")
    c.create_topic("t", partitions=3, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    w = RateWorkload(c, p, "t", rate=400, duration_ms=6000)
    c.run(3000)
    c.crash(2)                       # some batches fail over, retry, or fail
    c.run(4000)
    return c, w


def test_settled_producer_results_kept_as_columns_read_as_before(monkeypatch):
    """ProduceResults.compact makes the settled runs columns (issue 31): every result, the
    checks' view and a snapshot read exactly as without compaction."""
    import pickle
    plain, wp = _long_run(monkeypatch, 10**9)
    small, ws = _long_run(monkeypatch, 64)
    runs = small.clients[ws.producer.client_id].results.runs
    assert len(runs.settled) > 500        # the settled runs before the first pending one
    assert len(runs) == len(plain.clients[wp.producer.client_id].results.runs)
    assert [r._fields() for r in ws.results] == [r._fields() for r in wp.results]
    assert small.trace.digest() == plain.trace.digest()
    res = ws.producer.results
    rid = ws.record_ids[10]
    assert res[rid] is res[rid] and rid in res and -1 not in res and res[rid].acked
    back = pickle.loads(pickle.dumps(small))
    assert [r._fields() for r in back.clients[ws.producer.client_id].results.values()] == \
        [r._fields() for r in ws.results]


def test_a_history_seeks_and_forks_over_compacted_results_and_columns(monkeypatch):
    from kafkasim.runtime.clients import produce_result
    monkeypatch.setattr(produce_result, "COMPACT_RUNS_AT", 64)
    monkeypatch.setattr(produce_result, "KEEP_RUNS", 16)
    c = Cluster(brokers=3, seed=2, kafka_version="3.7")
    c.create_topic("t", partitions=2, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5, enable_idempotence=True)
    RateWorkload(c, p, "t", rate=300, duration_ms=8000)
    h = History(c, every_ms=1000)
    h.run(8000)
    assert all(s.compressed for s in h.snaps)
    end = (h.cluster.trace.digest(), h.cluster.trace.total,
           [r._fields() for r in h.cluster.clients[p.client_id].results.values()])
    assert len(h.cluster.clients[p.client_id].results.runs.settled) > 0
    h.seek(2500)
    h.seek(h.horizon)
    assert (h.cluster.trace.digest(), h.cluster.trace.total,
            [r._fields() for r in h.cluster.clients[p.client_id].results.values()]) == end
    h.seek(4000)
    h.cut(1, 2)                                   # a fork from a compacted past
    h.run(2000)
    log = h.cluster.log(1, "t", 0)
    assert log.producer_batches.last == log.producer_batches[-1]
    assert list(log.producer_batches) == [tuple(b) for b in log.producer_batches]


def test_the_compact_columns_read_as_the_lists_they_stand_for():
    from kafkasim.core.log import ProducerBatch, ProducerBatches
    from kafkasim.runtime.rows import RunList
    b = [ProducerBatch(0, 4, 7, 0, 0), ProducerBatch(5, 5, 7, 0, 5), ProducerBatch(9, 12, 8, 1, 0)]
    pb = ProducerBatches(b)
    assert pb == b and len(pb) == 3 and pb[-1] == b[-1] and pb.last == b[-1]
    assert pb[:2] == b[:2] and pb[:2].last == b[1] and pb[:0].last is None
    assert [pb.first_covering(o) for o in (0, 4, 5, 6, 9, 13)] == [0, 0, 1, 2, 2, 3]
    nv, other = object(), "x"
    items = [None, nv, nv, nv, other, None, None]
    rl = RunList(items)
    assert rl == items and len(rl) == 7 and rl[2] is nv and rl[-1] is None
    assert len(rl.items) == 4 and rl[:3] == items[:3] and rl[:5][4] == "x"
    rl.repeat(nv, 3)
    assert len(rl) == 10 and rl[9] is nv and list(rl[7:]) == [nv] * 3
    with pytest.raises(IndexError):
        rl[10]
    rl.repeat(nv, 2)
    rl.repeat(other, 0)                       # nothing: no run of no items
    assert len(rl) == 12 and len(rl.items) == 5 and rl[-1] is nv


def test_batch_headers_read_the_same_packed_or_recent():
    """The newest headers are records, the older ones packed into columns (``pack``, at every
    metrics sample): every read answers as the list of all headers appended, across the
    boundary and after a pickle."""
    import pickle

    from kafkasim.core.log import ProducerBatch, ProducerBatches
    n, packed = 30, 20
    b = [ProducerBatch(3 * i, 3 * i + 1 + i % 2, 7 + i % 3, i % 2, 2 * i) for i in range(n)]
    pb = ProducerBatches()
    for x in b[:packed - 5]:
        pb.append(x)
    pb.extend(b[packed - 5:packed])
    pb.pack()
    pb.extend([])
    pb.extend(b[packed:packed + 4])
    for x in b[packed + 4:]:
        pb.append(x)
    assert len(pb.base_offsets) == packed and len(pb.recent) == n - packed
    assert pb == b and len(pb) == n and pb.last == b[-1] and list(pb) == b
    assert [pb[i] for i in (0, packed - 1, packed, -1, -n)] == \
        [b[0], b[packed - 1], b[packed], b[-1], b[0]]
    for lo, hi in ((0, packed + 3), (packed - 2, n), (5, 9), (packed + 1, packed + 4)):
        part = pb[lo:hi]
        assert part == b[lo:hi] and part.last == b[hi - 1]
    assert pickle.loads(pickle.dumps(pb)) == b and pb[:0].last is None
    with pytest.raises(IndexError):
        pb[n]
    assert pb.first_covering(3 * packed + 1) == packed and not pb.recent   # packs to search
    assert pb == b and pb.last == b[-1]


def test_metrics_samples_pack_the_batch_headers():
    c = Cluster(brokers=3, seed=1)
    c.create_topic("t", partitions=1, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5, enable_idempotence=True)
    RateWorkload(c, p, "t", rate=300, duration_ms=2500)
    c.run(2200)                      # metrics samples at 0, 1000, 2000 ms
    pb = c.log(1, "t", 0).producer_batches
    packed, recent = len(pb.base_offsets), len(pb.recent)
    assert packed > 0 and recent > 0       # the last 200 ms are records, the rest columns
    c.run(3100)                      # the sample at 3,000 ms packs them
    assert len(pb.base_offsets) >= packed + recent and len(pb.recent) < recent
