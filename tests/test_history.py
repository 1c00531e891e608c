"""Time travel: seek, step, fork on acting in the past, deterministic replay."""

from __future__ import annotations

import pytest

from kafkasim.cluster import Cluster
from kafkasim.history import History
from kafkasim.workload import RateWorkload


def make(seed: int = 1) -> History:
    c = Cluster(brokers=3, seed=seed)
    c.create_topic("t", partitions=2, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    RateWorkload(c, p, "t", rate=100, duration_ms=20000)
    return History(c, every_ms=1000)


def state(c: Cluster) -> tuple:
    return (c.now, c.trace_digest(),
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
    assert replayed.trace_digest() == h.cluster.trace_digest()
    # and a second history with the same actions from scratch agrees too
    h2 = make()
    for a in h.actions:
        h2.seek(a.time_ms)
        h2.act(a.name, *a.args, **dict(a.kwargs))
    h2.seek(h.now)
    assert h2.cluster.trace_digest() == h.cluster.trace_digest()


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
