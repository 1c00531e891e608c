"""History keeps restored state out of the cyclic collector's way (history._Collector), without
changing a run and without keeping discarded clusters for ever."""

from __future__ import annotations

import gc
import weakref

import pytest

from kafkasim.observe import history
from kafkasim.observe.history import History
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload


@pytest.fixture(autouse=True)
def _fresh_collector(monkeypatch):
    monkeypatch.setattr(history, "_collector", history._Collector())
    gc.unfreeze()
    yield
    gc.unfreeze()


def _history(every_ms: int = 500) -> History:
    c = Cluster(brokers=3, seed=7, kafka_version="3.7")
    c.create_topic("t", partitions=1, replication_factor=3)
    RateWorkload(c, c.producer(acks="all"), "t", rate=100, duration_ms=3000)
    h = History(c, every_ms=every_ms)
    h.run(3000)
    return h


def test_a_restore_freezes_what_it_loaded():
    h = _history()
    assert gc.get_freeze_count() == 0
    h.seek(1000)
    assert gc.get_freeze_count() > 0
    assert h.now == 1000


def test_discarded_clusters_are_collected_after_the_unfreeze():
    h = _history()
    gone = []
    for i in range(history.UNFREEZE_EVERY):
        gone.append(weakref.ref(h.cluster))
        h.seek(1000 if i % 2 == 0 else 500)
    # UNFREEZE_EVERY frozen restores: the replaced clusters wait (cycles among frozen objects)
    assert gc.get_freeze_count() > 0
    gone.append(weakref.ref(h.cluster))
    h.seek(1500)   # one more: everything is unfrozen, nothing frozen until a full collection
    assert gc.get_freeze_count() == 0
    gc.collect()
    assert all(ref() is None for ref in gone), "a discarded cluster outlived a full collection"
    h.seek(500)    # a full collection has run: freezing again
    assert gc.get_freeze_count() > 0


def test_freezing_changes_no_trace():
    frozen = _history()
    frozen.seek(1000)
    frozen.act("crash", 2)
    frozen.run(2000)
    gc.unfreeze()
    plain = _history()
    plain.seek(1000)
    gc.unfreeze()   # as if the collector had stayed on
    plain.act("crash", 2)
    plain.run(2000)
    assert frozen.trace_rows == plain.trace_rows


def test_nothing_is_frozen_while_the_caller_disables_the_collector():
    h = _history()
    gc.disable()
    try:
        h.seek(1000)
        assert gc.get_freeze_count() == 0
    finally:
        gc.enable()
