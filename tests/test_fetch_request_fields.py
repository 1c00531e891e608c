"""A follower's incremental FetchRequests (``ReplicaFetcherThread.send_request``, also from the
lazy build ``quiet_sessions.build_changed``) hold every field, to what FetchRequest's own
constructor would hold, or the leader reads an incomplete request."""

from __future__ import annotations

import dataclasses

from kafkasim.core.messages import FetchRequest
from kafkasim.runtime.broker import Broker
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload


def test_incremental_fetch_requests_hold_every_field(monkeypatch):
    sent = []
    original = Broker.send_from_fetcher

    def spy(self, thread, req, timeout_ms):
        sent.append(req)
        original(self, thread, req, timeout_ms)

    monkeypatch.setattr(Broker, "send_from_fetcher", spy)
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", partitions=1, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    RateWorkload(c, p, "t", rate=1000, duration_ms=200, partition=0)
    c.run(300)
    fetches = [r for r in sent if isinstance(r, FetchRequest)]
    incremental = [r for r in fetches if r.session_epoch > 0]
    assert len(incremental) > 10, "the followers' sessions went incremental"
    names = [f.name for f in dataclasses.fields(FetchRequest)]
    for req in fetches:
        rebuilt = FetchRequest(*(getattr(req, n) for n in names))
        assert rebuilt == req and repr(rebuilt) == repr(req)
        assert req.isolation_level == "read_uncommitted" and req.rack_id == ""
    assert all(r.replica_id in (1, 2, 3) and r.min_bytes == 1 for r in incremental)
