"""Issue 31: the default trace keeps its memory bounded in a long run. Its rows (and the metrics
rows) are ``CompactRows`` (kafkasim.runtime.rows): the older ones compacted into a nameless
temporary file, while every read -- rows, digest, frame, events, where, checks, History seek and
fork, pickling -- answers exactly as the whole list of rows would.

The thresholds are lowered here (``COMPACT_AT``, ``KEEP_ROWS``) so that a few simulated seconds
compact many times; the uncompacted run is the same run with compaction off."""

from __future__ import annotations

import copy
import gc
import os
import pickle
import warnings
import weakref

import pytest

import kafkasim.runtime.rows as rows_mod
from kafkasim.observe import snapshots
from kafkasim.observe.checks import make_suite
from kafkasim.observe.history import History
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.rows import CompactRows, RangeList
from kafkasim.runtime.workload import RateWorkload


@pytest.fixture
def small(monkeypatch):
    monkeypatch.setattr(rows_mod, "COMPACT_AT", 1500)
    monkeypatch.setattr(rows_mod, "KEEP_ROWS", 200)
    monkeypatch.setattr(rows_mod, "CHUNK_ROWS", 300)


def _build(version: str = "3.7", seed: int = 3) -> Cluster:
    c = Cluster(brokers=3, seed=seed, kafka_version=version)
    c.create_topic("t", partitions=4, replication_factor=3)
    RateWorkload(c, c.producer(acks="all", linger_ms=5), "t", rate=500, duration_ms=9000)
    return c


def _faults(c: Cluster, check=None) -> Cluster:
    c.run(3000, check=check)
    c.crash(2)
    c.run(3000, check=check)
    c.start(2, retry=True)
    c.run(3000, check=check)
    return c


def _plain(monkeypatch, version="3.7", seed=3, check=None) -> Cluster:
    with monkeypatch.context() as m:
        m.setattr(rows_mod, "COMPACT_AT", 10**12)
        return _faults(_build(version, seed), check)


@pytest.mark.parametrize("version", ["3.7", "4.3"])
def test_a_compacted_trace_reads_exactly_as_the_whole_list(monkeypatch, small, version):
    plain = _plain(monkeypatch, version)
    c = _faults(_build(version))
    rows, whole = c.trace.rows, plain.trace.rows
    assert type(whole) is CompactRows and whole._base == 0          # never compacted
    assert rows._base > 0 and len(rows._chunks) >= 3                  # compacted many times
    assert list.__len__(rows) < len(whole) / 3                        # few rows in memory
    assert len(rows) == len(whole) == c.trace.total
    assert c.trace.digest() == plain.trace.digest()
    assert rows == whole and list(rows) == list(whole) and not rows != whole
    assert c.trace.to_frame().equals(plain.trace.to_frame())
    assert c.trace.events("produce_result") == plain.trace.events("produce_result")
    assert c.trace.where(kind="hw", partition=1) == plain.trace.where(kind="hw", partition=1)
    n = len(whole)
    for i in (0, 1, 777, n // 2, n - 201, n - 1, -1, -n):
        assert rows[i] == whole[i]
    for s in (slice(0, 10), slice(5, n - 5), slice(n - 300, None), slice(None, None, 7),
              slice(-50, None), slice(100, 50)):
        assert rows[s] == whole[s]
    assert list(reversed(rows)) == list(reversed(whole))
    probe = whole[1234]
    assert probe in rows and rows.index(probe) == whole.index(probe)
    assert rows.count(probe) == whole.count(probe)
    assert c.metrics.rows == plain.metrics.rows
    with pytest.raises(IndexError):
        rows[n]


def test_the_checks_see_every_row_of_a_compacting_trace(monkeypatch, small):
    plain_suite = make_suite(on_violation="collect")
    _plain(monkeypatch, check=plain_suite)
    suite = make_suite(on_violation="collect")
    c = _faults(_build(), check=suite)
    assert c.trace.rows._base > 0
    g, h = suite.ghost, plain_suite.ghost
    assert g.cursor == h.cursor == c.trace.total
    assert sorted((tp, len(a)) for tp, a in g.acked.items()) == \
        sorted((tp, len(a)) for tp, a in h.acked.items())
    assert [v.key for v in suite.violations] == [v.key for v in plain_suite.violations]


def _history_plan(h: History) -> None:
    h.run(6000)
    h.seek(2500)                 # back, into compacted rows
    h.act("crash", 2)            # a fork
    h.run(3000)
    h.seek(4000)
    h.seek(7000)                 # forward within the recorded future
    h.act("start", 2, retry=True)
    h.run(2000)


def test_a_history_seeks_and_forks_within_a_compacted_trace(monkeypatch, small):
    with monkeypatch.context() as m:
        m.setattr(rows_mod, "COMPACT_AT", 10**12)
        ref = History(_build(), every_ms=1000)
        _history_plan(ref)
    h = History(_build(), every_ms=1000)
    _history_plan(h)
    assert h.cluster.trace.rows._base > 0
    assert h.cluster.trace.digest() == ref.cluster.trace.digest()
    assert h.trace_rows == ref.trace_rows
    assert h.cluster.metrics.rows == ref.cluster.metrics.rows
    h.seek(1500)
    ref.seek(1500)
    assert h.cluster.trace.rows == ref.cluster.trace.rows
    assert h.trace_rows == ref.trace_rows     # the recorded future, compacted rows included


def test_a_prefix_shorter_than_the_compacted_rows_shares_their_chunks(monkeypatch):
    """A seek back restores a snapshot's prefix of rows the live list has compacted since:
    the chunks inside the prefix are shared, at most one chunk is read back (not all of them),
    and the prefix reads, grows and compacts as a plain list would."""
    rows = CompactRows()
    plain = []
    for i in range(10_000):
        rows.append((i, "send"))
        plain.append((i, "send"))
        if i % 1000 == 999:
            rows.compact(at=1000, keep=100)
    assert rows._base == 9_900 and len(rows._chunks) == 10
    reads = []
    read = rows_mod._ChunkFile.rows
    monkeypatch.setattr(rows_mod._ChunkFile, "rows",
                        lambda self, *a: reads.append(a) or read(self, *a))
    for stop in (4_950, 900, 1_900, 1, 9_899):
        reads.clear()
        prefix = rows[:stop]
        assert len(reads) <= 1, (stop, len(reads))
        assert isinstance(prefix, CompactRows) and len(prefix) == stop
        assert prefix._base <= stop and list.__len__(prefix) < 1_000
        assert list(prefix) == plain[:stop]
    prefix = rows[:4_950]
    prefix.extend((i, "recv") for i in range(2_000))
    assert prefix.compact(at=1000, keep=100)
    assert list(prefix) == plain[:4_950] + [(i, "recv") for i in range(2_000)]
    assert list(rows) == plain                 # the original is untouched


def test_the_first_compaction_writes_chunks_of_at_most_chunk_rows(monkeypatch, small):
    """The first compaction moves COMPACT_AT - KEEP_ROWS rows at once; they go out in chunks
    of CHUNK_ROWS, so a seek that reads one of them back unpickles CHUNK_ROWS rows."""
    rows = CompactRows((i,) for i in range(rows_mod.COMPACT_AT))
    assert rows.compact()
    sizes = [n for *_, n in rows._chunks]
    assert sum(sizes) == rows_mod.COMPACT_AT - rows_mod.KEEP_ROWS and len(sizes) > 1
    assert max(sizes) <= rows_mod.CHUNK_ROWS
    assert list(rows) == [(i,) for i in range(rows_mod.COMPACT_AT)]
    assert rows[:rows_mod.CHUNK_ROWS + 7]._base == rows_mod.CHUNK_ROWS


def test_pickling_and_copies_hold_every_row(monkeypatch, small):
    c = _faults(_build())
    rows = c.trace.rows
    assert rows._base > 0
    restored = snapshots.restore(snapshots.snapshot(c))
    assert restored.trace.rows == rows and restored.trace.digest() == c.trace.digest()
    assert pickle.loads(pickle.dumps(rows)) == rows
    assert copy.deepcopy(rows) == rows and copy.copy(rows) == rows and rows.copy() == rows
    restored.run(500)
    c.run(500)
    assert restored.trace.digest() == c.trace.digest()


def test_edits_other_than_appends_bring_the_rows_back(small):
    r = CompactRows(range(10))
    for i in range(10, 3000):
        r.append(i)
        r.compact()
    assert r._base > 0 and r == list(range(3000))
    r[5] = "x"
    assert r._base == 0 and r[5] == "x" and len(r) == 3000
    r.clear()
    assert r == [] and not r


def test_the_chunk_file_has_no_name_and_goes_with_its_rows(small, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    r = CompactRows(range(5000))
    assert r.compact()
    store = r._chunks[0][0]
    assert os.listdir(tmp_path) == []                      # created without a name (or unlinked)
    assert not isinstance(store.file.name, str) or not os.path.exists(store.file.name)
    file = store.file
    ref = weakref.ref(store)
    del r, store
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        gc.collect()
    assert ref() is None                                   # file closed with the last rows
    assert file.closed
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)], \
        [str(w.message) for w in caught]                   # closed by it, not left to warn


def test_a_range_list_reads_as_a_list_of_ranges():
    runs = [range(1, 6), range(6, 7), range(10, 15)]
    rl = RangeList(runs)
    assert len(rl) == 3 and list(rl) == runs and rl == runs and rl[1] == range(6, 7)
    assert rl[:2] == runs[:2] and isinstance(rl[:2], RangeList) and rl[-1] == runs[-1]
    assert pickle.loads(pickle.dumps(rl)) == rl
    with pytest.raises(TypeError, match="step 1"):
        rl.append(range(0, 10, 2))
