"""The producer's metadata refresh backoff (Metadata.timeToAllowUpdate): a partition with no
leader is asked about at most once per ``retry.backoff.ms``, not once per round trip."""

from __future__ import annotations

from kafkasim.runtime.cluster import Cluster


def _metadata_sends(c: Cluster, client: str) -> list[int]:
    return [r[0] for r in c.trace.rows
            if r[1] == "send" and r[2] == client and r[5][0] == "MetadataRequest"]


def test_a_leaderless_partition_is_asked_about_once_per_retry_backoff():
    c = Cluster(brokers=3, seed=2, kafka_version="3.7")
    c.create_topic("t", 1, 1, assignment=[[1]])
    p = c.producer("p", acks="1")
    p.send("t", "v0")
    c.run(2000)
    c.crash(1)
    for i in range(1, 60):   # the sender keeps asking while the partition has no leader
        p.send("t", f"v{i}")
        c.run(500)
    sends = [t for t in _metadata_sends(c, "p") if t >= 25000]
    backoff = p.config["retry.backoff.ms"]
    assert backoff == 100
    gaps = [b - a for a, b in zip(sends, sends[1:], strict=False)]
    assert len(sends) >= 40, sends            # it does keep asking...
    assert min(gaps) >= backoff, gaps         # ...but never within the backoff (was: each RTT)


def test_the_first_refresh_after_a_quiet_spell_goes_at_once():
    """The backoff counts from the last update's end: an update asked for long after it is
    sent with no wait (Metadata.timeToAllowUpdate is 0)."""
    c = Cluster(brokers=3, seed=2, kafka_version="3.7")
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all")
    p.send("t", "v0")
    c.run(5000)
    assert p.metadata.time_to_allow_update(c.now, p.config["retry.backoff.ms"]) == 0
    before = len(_metadata_sends(c, "p"))
    p._refresh_metadata()
    assert len(_metadata_sends(c, "p")) == before + 1
    assert p.metadata.time_to_allow_update(c.now, 100) == 0   # in flight: no end yet
    c.run(50)
    assert 0 < p.metadata.time_to_allow_update(c.now, 100) <= 100
