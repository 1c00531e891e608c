"""The producer's ``metadata.max.age.ms`` (ProducerConfig since 0.8.2, default 5 min): the
metadata is refreshed that long after the last successful update even when no error asked for
it (Metadata.timeToNextUpdate's ``timeToExpire``; NetworkClient.DefaultMetadataUpdater
.maybeUpdate), so an idle producer learns of a moved leader before its next send. The refresh
still waits out the refresh backoff (Metadata.timeToAllowUpdate)."""

from __future__ import annotations

import pytest

from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.config import ConfigError


def _metadata_requests(c: Cluster, client: str = "p") -> list[int]:
    return [row[0] for row in c.trace.rows
            if row[1] == "send" and row[2] == client and row[5][0] == "MetadataRequest"]


@pytest.mark.parametrize("max_age", [5000, 300_000])
def test_an_idle_producer_refreshes_its_metadata_every_metadata_max_age_ms(max_age):
    c = Cluster(3, seed=1, kafka_version="4.3", latency_ms=1, jitter_ms=0)
    c.create_topic("t", 1, 3)
    c.producer("p", acks="all", metadata_max_age_ms=max_age)
    c.run(2 * max_age + max_age // 2)
    sent = _metadata_requests(c)
    assert len(sent) == 3, sent
    # each one max_age after the answer to the one before (one round trip of 2 ms)
    assert [b - a for a, b in zip(sent, sent[1:], strict=False)] == [max_age + 2] * 2, sent


def test_without_the_refresh_the_idle_producer_keeps_its_metadata():
    c = Cluster(3, seed=1, kafka_version="4.3")
    c.create_topic("t", 1, 3)
    c.producer("p", acks="all")
    c.run(290_000)
    assert len(_metadata_requests(c)) == 1


def _send_after_the_leader_moved(version: str, **producer_kw):
    """The producer learns leader 3 (or 2) while broker 1 is down, then a preferred election
    gives the partition back to broker 1 while the producer is idle; then it sends."""
    c = Cluster(3, seed=1, kafka_version=version)
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all", **producer_kw)
    c.run(1000)
    preferred = c.leader("t", 0)
    c.crash(preferred)
    c.run(25_000)
    c.start(preferred, retry=True)
    c.run(10_000)
    p.send("t", "while broker 1 was away", partition=0)
    assert p.flush()
    interim = c.leader("t", 0)
    assert interim != preferred and p.leaders[("t", 0)] == interim
    c.admin().elect_leaders("preferred", "t")
    c.run(10_000)
    assert c.leader("t", 0) == preferred
    r = p.send("t", "after the election", partition=0)
    assert p.flush()
    return r


@pytest.mark.parametrize("version", ["3.6", "4.3"])
def test_a_refresh_learns_the_moved_leader_before_the_next_send(version):
    r = _send_after_the_leader_moved(version, metadata_max_age_ms=5000)
    assert (r.status, r.errors, r.attempts) == ("acked", [], 1)
    # with the default (5 min) the producer sends to the old leader first and is refused
    r = _send_after_the_leader_moved(version)
    assert (r.status, r.errors, r.attempts) == ("acked", ["NOT_LEADER_OR_FOLLOWER"], 2)


def test_zero_refreshes_as_often_as_the_refresh_backoff_allows():
    """metadata.max.age.ms 0: always due, so the producer asks again as soon as
    timeToAllowUpdate lets it: every retry.backoff.ms (100) before 3.7, never twice at once."""
    c = Cluster(3, seed=1, kafka_version="3.6", latency_ms=1, jitter_ms=0)
    c.create_topic("t", 1, 3)
    c.producer("p", acks="all", metadata_max_age_ms=0)
    c.run(2000)
    sent = _metadata_requests(c)
    assert 15 <= len(sent) <= 21, sent
    assert all(b - a >= 100 for a, b in zip(sent, sent[1:], strict=False)), sent


@pytest.mark.parametrize("version", ["0.8.2", "2.8", "4.3"])
def test_metadata_max_age_ms_is_a_producer_config_of_every_version(version):
    c = Cluster(3, seed=1, kafka_version=version)
    c.create_topic("t", 1, 3)
    assert c.producer("p").config["metadata.max.age.ms"] == 300_000
    with pytest.raises(ConfigError, match="metadata.max.age.ms"):
        c.producer("q", metadata_max_age_ms=-1)
    assert "q" not in c.clients
