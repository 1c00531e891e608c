"""KIP-580 (3.7+): a producer retry waits ``retry.backoff.ms * 2^(attempts - 1)``, capped at
``retry.backoff.max.ms`` (new in 3.7, default 1000), times a jitter factor in [0.8, 1.2); before
3.7 every retry waited ``retry.backoff.ms``.

Kafka: RecordAccumulator.shouldBackoff / batchReady (``retryBackoff.backoff(batch.attempts() -
1)``), ExponentialBackoff (``initialInterval = min(maxInterval, initial)``; a constant backoff
when the maximum is not above the initial interval; the jitter never pushes the wait past the
maximum), CommonClientConfigs.RETRY_BACKOFF_EXP_BASE (2) and RETRY_BACKOFF_JITTER (0.2). The
unit tests follow ExponentialBackoffTest.
"""

from __future__ import annotations

import random

import pytest

from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.network_client import ExponentialBackoff
from kafkasim.settings.config import ConfigError

LATENCY_MS = 1   # no jitter on the links: a gap between two sends is the backoff plus one RTT


def _retry_gaps(version: str, seed: int = 1, records: int = 1, **producer_kw) -> list[int]:
    """Gaps between the resends of one batch of ``records`` records refused
    NOT_ENOUGH_REPLICAS (min ISR 3, one of three brokers down), less the round trip of each
    refused attempt."""
    c = Cluster(3, seed=seed, kafka_version=version, latency_ms=LATENCY_MS, jitter_ms=0)
    c.create_topic("t", 1, 3, config={"min.insync.replicas": 3})
    p = c.producer("p", acks="all", **producer_kw)
    c.run(500)
    c.crash(max(b for b in c.isr("t", 0) if b != c.leader("t", 0)))   # a follower
    c.run_until(lambda cl: len(cl.isr("t", 0)) == 2, 60_000)
    r = p.send_many("t", [f"x{i}" for i in range(records)])[0]
    c.run(6000)
    assert r.status == "pending" and set(r.errors) == {"NOT_ENOUGH_REPLICAS"}, r
    sends = [row[0] for row in c.trace.rows
             if row[1] == "send" and row[2] == "p" and row[5][0] == "ProduceRequest"]
    rtt = 2 * LATENCY_MS
    return [b - a - rtt for a, b in zip(sends[:-1], sends[1:], strict=True)]


def _expected_range(attempt: int, initial: int, maximum: int) -> tuple[int, int]:
    """ExponentialBackoff.backoff's range: the term stops growing at the maximum (its exponent
    is capped at expMax), then the jitter applies, and the result is capped at the maximum."""
    term = min(initial * 2 ** attempt, maximum)
    return int(0.8 * term), min(int(1.2 * term), maximum)


def test_a_retry_backs_off_exponentially_with_jitter_from_3_7():
    gaps = _retry_gaps("4.3")
    assert len(gaps) >= 6
    for attempt, gap in enumerate(gaps):
        lo, hi = _expected_range(attempt, 100, 1000)
        assert lo <= gap <= hi, (attempt, gap, gaps)
    # the jitter is drawn: not every wait is the bare term
    assert any(gap != min(100 * 2 ** a, 1000) for a, gap in enumerate(gaps)), gaps
    # past the cap, every wait is within 20 % below retry.backoff.max.ms, never above
    assert all(800 <= gap <= 1000 for gap in gaps[4:]), gaps


@pytest.mark.parametrize("version", ["3.6", "2.8", "2.1"])   # (retries: MAX_INT from 2.1)
def test_a_retry_waits_retry_backoff_ms_before_3_7(version):
    gaps = _retry_gaps(version)
    assert len(gaps) >= 20 and set(gaps) == {100}, gaps


def test_retry_backoff_max_ms_below_retry_backoff_ms_is_the_constant_wait():
    gaps = _retry_gaps("4.3", retry_backoff_ms=300, retry_backoff_max_ms=150)
    assert len(gaps) >= 10 and set(gaps) == {150}, gaps


def test_retry_backoff_max_ms_caps_the_growth():
    gaps = _retry_gaps("3.7", retry_backoff_ms=50, retry_backoff_max_ms=200)
    for attempt, gap in enumerate(gaps):
        lo, hi = _expected_range(attempt, 50, 200)
        assert lo <= gap <= hi, (attempt, gap, gaps)
    assert max(gaps) <= 200 and sum(gap >= 160 for gap in gaps) >= len(gaps) - 3, gaps


def test_the_jitter_is_seeded_and_leaves_the_engine_generator_alone():
    assert _retry_gaps("4.3", seed=7) == _retry_gaps("4.3", seed=7)
    assert _retry_gaps("4.3", seed=7) != _retry_gaps("4.3", seed=8)


def test_retry_backoff_max_ms_does_not_exist_before_3_7():
    c = Cluster(3, seed=1, kafka_version="3.6")
    with pytest.raises(ConfigError, match=r"retry\.backoff\.max\.ms.*3\.7.*KIP-580"):
        c.producer("p", retry_backoff_max_ms=500)
    assert "p" not in c.clients   # the refused producer was not added
    c = Cluster(3, seed=1, kafka_version="3.7")
    assert c.producer("p").config["retry.backoff.max.ms"] == 1000
    with pytest.raises(ConfigError, match=r"retry\.backoff\.max\.ms"):
        c.producer("q", retry_backoff_max_ms=-1)


# -- ExponentialBackoffTest -----------------------------------------------------------------------
def test_exponential_backoff():
    scale, ratio, backoff_max, jitter = 100, 2, 2000, 0.2
    backoff = ExponentialBackoff(scale, ratio, backoff_max, jitter)
    rng = random.Random(0)
    for attempts in range(10):
        value = backoff.backoff(attempts, rng)
        if attempts <= 4:
            expected = scale * ratio ** attempts
            assert expected * (1 - jitter) <= value <= expected * (1 + jitter)
        else:   # (the jitter never pushes the wait past the maximum)
            assert backoff_max * (1 - jitter) <= value <= backoff_max


def test_exponential_backoff_without_jitter():
    backoff = ExponentialBackoff(100, 2, 400, 0.0)
    rng = random.Random(0)
    assert [backoff.backoff(a, rng) for a in range(5)] == [100, 200, 400, 400, 400]


def test_initial_interval_above_maximum_is_a_constant_maximum():
    backoff = ExponentialBackoff(300, 2, 150, 0.2)
    rng = random.Random(0)
    assert backoff.initial_interval == 150
    assert {backoff.backoff(a, rng) for a in range(8)} == {150}


# -- retries of one partition go one request at a time ---------------------------------------
def test_retries_of_a_partition_go_one_request_at_a_time():
    """RecordAccumulator.shouldStopDrainBatchesForPartition (1.0+): a retried batch is drained
    only when it is its partition's first in-flight sequence, so after the leader dies with
    five requests in flight their retries do not leave together (kafkasim sent two or more
    at once). Counted on the wire: never two requests with a retried batch of t-0 at once."""
    c = Cluster(3, seed=1, kafka_version="4.3")
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all", linger_ms=0)
    c.run(1000)
    leader = c.leader("t", 0)
    for i in range(5):   # five batches, five requests on the wire
        p.send("t", f"v{i}")
        c.run(1)
    assert len(p.in_flight) == 5
    c.crash(leader)
    on_wire_max = 0
    for _ in range(40_000):
        if not c.engine.step() or not p.pending():
            break
        retried = [e for e in p.in_flight.values() if any(
            b.attempts > 1 for b in e[3].values())]
        on_wire_max = max(on_wire_max, len(retried))
    assert not p.pending() and len(p.acked()) == 5
    assert on_wire_max == 1   # (2 before: a retry left beside an earlier one)
    # ... and in sequence order: the log holds each record once, in order
    new_leader = c.leader("t", 0)
    assert [r.offset for r in p.results.values()] == list(range(5))
    assert c.brokers[new_leader].logs[("t", 0)].log_end_offset == 5


@pytest.mark.parametrize("version", ["4.3", "3.6", "2.1"])
def test_a_full_batch_backs_off_too(version):
    """RecordAccumulator.batchReady: a batch is ready when ``sendable && !backingOff``; being
    full (``batch.isFull()``, here 10 records of 100 bytes in a batch.size of 1000) makes a
    first attempt sendable before linger.ms, but never cuts a retry's backoff short (drain skips
    a batch still backing off as well)."""
    gaps = _retry_gaps(version, records=10, batch_size=1000, linger_ms=5)
    if version == "4.3":
        for attempt, gap in enumerate(gaps):
            lo, hi = _expected_range(attempt, 100, 1000)
            assert lo <= gap <= hi, (attempt, gap, gaps)
        assert len(gaps) >= 6, gaps
    else:
        assert len(gaps) >= 20 and set(gaps) == {100}, gaps
