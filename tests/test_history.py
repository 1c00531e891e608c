"""Time travel: seek, step, fork on acting in the past, deterministic replay."""

from __future__ import annotations

import pytest

from kafkasim.observe.history import History
from kafkasim.runtime.clients.producer import Producer
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload


def make(seed: int = 1) -> History:
    c = Cluster(brokers=3, seed=seed)
    c.create_topic("t", partitions=2, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    RateWorkload(c, p, "t", rate=100, duration_ms=20000)
    return History(c, every_ms=1000)


def state(c: Cluster) -> tuple:
    return (c.now, c.trace.digest(),
            tuple((b, tp, log.log_end_offset, log.high_watermark)
                  for b, br in sorted(c.brokers.items()) for tp, log in sorted(br.logs.items())))


def test_seek_back_and_forth_lands_on_identical_states():
    h = make()
    h.run(8000)
    at_8000 = state(h.cluster)
    h.seek(3500)
    at_3500 = state(h.cluster)
    assert at_3500[0] == 3500 and at_3500 != at_8000
    h.seek(8000 + 2)  # create_topic ran 2 ms before the history began
    h.seek(h.horizon)
    assert state(h.cluster) == at_8000
    h.seek(3500)
    assert state(h.cluster) == at_3500


def test_acting_in_the_past_forks_a_new_future():
    h = make()
    h.run(10000)
    original_end = state(h.cluster)
    h.seek(4000)
    h.crash(2)
    assert h.horizon == 4000  # the recorded future is gone
    h.seek(original_end[0])
    forked_end = state(h.cluster)
    assert forked_end[0] == original_end[0]
    assert forked_end != original_end
    assert h.cluster.brokers[2].state == "stopped"
    assert [a.name for a in h.actions] == ["crash"]


def test_replaying_the_same_actions_gives_the_same_trace():
    h = make()
    h.run(3000)
    h.cut(1, 2)
    h.run(4000)
    h.heal()
    h.produce("t", "hello", partition=1)
    h.run(2000)
    replayed = h.replay()
    assert replayed.trace.digest() == h.cluster.trace.digest()
    # and a second history with the same actions from scratch agrees too
    h2 = make()
    for a in h.actions:
        h2.seek(a.time_ms)
        h2.act(a.name, *a.args, **dict(a.kwargs))
    h2.seek(h.now)
    assert h2.cluster.trace.digest() == h.cluster.trace.digest()


def test_step_runs_one_event():
    h = make()
    n = h.cluster.engine.events_processed
    assert h.step()
    assert h.cluster.engine.events_processed == n + 1


def test_bad_arguments():
    h = make()
    with pytest.raises(ValueError, match="unknown action"):
        h.act("explode", 1)
    with pytest.raises(ValueError, match="negative"):
        h.seek(-5)
    with pytest.raises(ValueError, match="every_ms"):
        History(h.cluster, every_ms=0)


# -- snapshots share the append-only parts (kafkasim.observe.snapshots)
# ---------------------------------
def _faulty(version: str, seed: int) -> tuple[History, list]:
    """Two partitions at 200 records/s, and faults that truncate logs (crash, power loss,
    a network cut), applied through the History so replays repeat them."""
    c = Cluster(brokers=3, seed=seed, kafka_version=version)
    c.create_topic("t", partitions=2, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    RateWorkload(c, p, "t", rate=200, duration_ms=14000)
    h = History(c, every_ms=1000)
    plan = [(2500, "crash", (2,), {}), (4200, "cut", (1, 3), {}), (6100, "heal", (), {}),
            (7300, "start", (2,), {"retry": True}), (9400, "power_loss", (3,), {}),
            (10800, "start", (3,), {"retry": True}), (11500, "produce", ("t", "x"), {})]
    for t, name, args, kwargs in plan:
        h.seek(t)
        h.act(name, *args, **kwargs)
    h.seek(16000)
    return h, plan


def _fingerprint(c: Cluster) -> tuple:
    producers = [cl for cl in c.clients.values() if isinstance(cl, Producer)]
    return (c.now, c.trace.digest(), len(c.metrics.rows), c.engine.events_processed,
            len(c.records), tuple(c.records.values),
            tuple((b, tp, tuple(log.epochs), tuple(log.ids), tuple(log.timestamps),
                   log.log_start_offset, log.high_watermark, tuple(log.producer_batches))
                  for b, br in sorted(c.brokers.items()) for tp, log in sorted(br.logs.items())),
            tuple((p.client_id, tuple((rid, r.status, r.offset, r.error, r.attempts,
                                       tuple(r.errors), r.sent_ms, r.done_ms)
                                      for rid, r in p.results.items())) for p in producers))


@pytest.mark.parametrize("version", ["3.7", "4.3"])
@pytest.mark.parametrize("seed", [1, 5])
def test_a_restored_snapshot_continues_exactly_like_the_uninterrupted_run(version, seed):
    h, plan = _faulty(version, seed)
    end = _fingerprint(h.cluster)
    assert any(r[1] == "truncate" for r in h.cluster.trace.rows)   # logs were cut: not append-only
    # the same actions on a cluster never snapshotted or restored
    c = Cluster(brokers=3, seed=seed, kafka_version=version)
    c.create_topic("t", partitions=2, replication_factor=3)
    RateWorkload(c, c.producer(acks="all", linger_ms=5), "t", rate=200, duration_ms=14000)
    for t, name, args, kwargs in plan:
        c.run_to(t)
        c.run_to(t)   # History applies an action after every event of its millisecond
        if name == "produce":
            c.clients.get("player-producer") or c.producer("player-producer", acks="all")
            c.clients["player-producer"].send(*args, **kwargs)
        else:
            getattr(c, name)(*args, **kwargs)
    c.run_to(16000)
    assert _fingerprint(c) == end
    # every third snapshot restored, then replayed to the end, lands on the same state
    for i in range(0, len(h.snaps), 3):
        h._restore(i)
        h.seek(16000)
        assert _fingerprint(h.cluster) == end, f"restored snapshot at t={h.times[i]} differs"


def test_snapshots_share_records_and_results_instead_of_copying_them():
    h = make()
    h.run(15000)
    blobs = [len(s.blob) for s in h.snaps]
    # a second's records, results and trace rows are shared: the snapshot size stays flat
    assert blobs[-1] < 1.5 * blobs[5]
    c = h.cluster
    log = c.brokers[1].logs[("t", 0)]
    assert any(ref is log.ids for ref in h.snaps[-1].refs) or h.cluster.now > h.times[-1]
    h.seek(h.times[-1])
    restored = h.cluster
    assert restored is not c
    log2 = restored.brokers[1].logs[("t", 0)]
    assert log2.ids is not log.ids   # the restored cluster appends to its own copies


def test_a_shared_sequence_that_shrank_is_refused():
    from kafkasim.observe import snapshots

    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", partitions=1, replication_factor=3)
    c.producer(acks="all").send("t", "a")
    c.run(500)
    snap = snapshots.dump(c)
    del c.brokers[1].logs[("t", 0)].ids[:]    # in place: breaks the append-only rule
    with pytest.raises(RuntimeError, match="shrank"):
        snapshots.load(snap)


def test_snapshots_are_thinned_to_max_snapshots_and_seeks_still_land_exactly():
    full = make()
    full.run(12000)
    thin = make()
    thin.max_snapshots = 4
    thin.run(12000)
    assert len(thin.snaps) <= 4 and thin.times[0] == full.times[0]
    assert thin.times[-1] == full.times[-1]
    assert len(full.snaps) == 13
    for t in (700, 5300, 9100, 11999, 3000):
        thin.seek(t)
        full.seek(t)
        assert state(thin.cluster) == state(full.cluster), t
    with pytest.raises(ValueError, match="max_snapshots"):
        History(full.cluster, max_snapshots=1)


def test_trace_rows_keep_the_recorded_future_until_a_fork():
    c = Cluster(3, seed=2, kafka_version="3.7")
    c.create_topic("t", 1, 3)
    h = History(c, every_ms=1000)
    h.run(5000)
    full = list(h.trace_rows)
    assert full and full[-1][0] <= 5000
    h.seek(2000)
    assert len(h.cluster.trace.rows) < len(full)           # the live cluster is at 2 s
    assert list(h.trace_rows) == full                       # the branch still reaches 5 s
    h.crash(2)                                              # a fork: the old future is gone
    assert h.trace_rows is h.cluster.trace.rows
    assert all(r[0] <= h.now for r in h.trace_rows)
    assert any(r[1] == "crash" or "crash" in str(r) for r in h.trace_rows)


def test_drop_and_expire_session_act_through_the_attribute_that_carries_them():
    """``drop`` is Transport's and ``expire_session`` the ZooKeeper control plane's (not Cluster
    methods): History routes both (ACTION_OWNERS), records them, and replays them on a seek."""
    c = Cluster(brokers=3, seed=3, kafka_version="3.9", metadata_mode="zookeeper")
    c.create_topic("t", partitions=1, replication_factor=3)
    RateWorkload(c, c.producer(acks=1), "t", rate=20, duration_ms=60000)
    h = History(c, every_ms=1000)
    h.run(2000)
    leader = c.leader("t", 0)
    lagging, expired = [b for b in (1, 2, 3) if b != leader]
    h.act("drop", "FetchRequest", src=lagging)
    h.act("expire_session", expired)
    h.run(60000)
    assert [a.name for a in h.actions] == ["drop", "expire_session"]
    assert lagging not in h.cluster.isr("t", 0)   # its fetches are lost: out after 30 s or so
    end = state(h.cluster)
    h.seek(1500)
    h.seek(end[0])
    assert state(h.cluster) == end                # replayed the same way
