"""Cluster builders shared by the tests: ``from clusters import make_cluster`` (tests/ is on
sys.path under pytest, as for kraft_fakes and raft_driver), or the ``make_cluster`` fixture of
tests/conftest.py.

A test module names its own shape once, e.g. ``make_cluster(seed=5, topic="t", partitions=2,
records=20)``; the steps are always the same and in the same order, so the run (and its trace)
is what the module's own helper used to build: the Cluster, the topic, acks=all records
"v0", "v1", ... round-robin over the partitions (flushed), then ``settle_ms`` of simulated time.
"""

from __future__ import annotations

from kafkasim.runtime.cluster import Cluster

KRAFT_START_MS = 30_000


def make_cluster(brokers: int = 3, *, seed: int = 1, topic: str | None = None,
                 partitions: int = 1, replication_factor: int = 3,
                 assignment: list[list[int]] | None = None, topic_config: dict | None = None,
                 records: int = 0, settle_ms: int = 0, **cluster_kw) -> Cluster:
    """``Cluster(brokers, seed=seed, **cluster_kw)``; then, with ``topic``, create it and send
    ``records`` acks=all records (``produce_records``); then run ``settle_ms``."""
    c = Cluster(brokers, seed=seed, **cluster_kw)
    if topic is not None:
        c.create_topic(topic, partitions, replication_factor, assignment=assignment,
                       config=topic_config)
        if records:
            produce_records(c, topic, records, partitions)
    if settle_ms:
        c.run(settle_ms)
    return c


def produce_records(c: Cluster, topic: str, n: int, partitions: int = 1):
    """Send "v0".."v{n-1}" with a new acks=all producer, record i to partition i % partitions,
    and flush; returns the producer."""
    p = c.producer(acks="all")
    for i in range(n):
        p.send(topic, f"v{i}", partition=i % partitions)
    p.flush()
    return p


def started_kraft(c: Cluster, timeout_ms: int = KRAFT_START_MS) -> Cluster:
    """Run a KRaft cluster until its quorum has a leader and every broker is registered and
    unfenced (fails the test if that takes longer than ``timeout_ms``)."""
    assert c.run_until(lambda cl: cl.controller_id() >= 0 and not any(
        b.lifecycle.is_fenced for b in cl.brokers.values()), timeout_ms), "KRaft did not start"
    return c
