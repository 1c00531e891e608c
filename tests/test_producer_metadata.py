"""The producer's metadata refresh backoff (Metadata.timeToAllowUpdate): a partition with no
leader is asked about at most once per backoff, not once per round trip. Before 3.7 the backoff
is ``retry.backoff.ms``; from 3.7 (KIP-580) it grows with the responses in a row that bring no
new or newer leader epoch (equivalentResponseCount) and with the failed updates (attempts), up
to ``retry.backoff.max.ms``, with 20 % jitter (MetadataTest.testTimeToAllowUpdate... in
apache/kafka exercise the same counts)."""

from __future__ import annotations

from kafkasim.runtime.cluster import Cluster


def _metadata_sends(c: Cluster, client: str) -> list[int]:
    return [r[0] for r in c.trace.rows
            if r[1] == "send" and r[2] == client and r[5][0] == "MetadataRequest"]


def _leaderless(version: str) -> tuple[Cluster, object]:
    """t-0's only replica crashes; the producer keeps sending to it for 30 s."""
    c = Cluster(brokers=3, seed=2, kafka_version=version)
    c.create_topic("t", 1, 1, assignment=[[1]])
    p = c.producer("p", acks="1")
    p.send("t", "v0")
    c.run(2000)
    c.crash(1)
    for i in range(1, 60):   # the sender keeps asking while the partition has no leader
        p.send("t", f"v{i}")
        c.run(500)
    return c, p


def test_a_leaderless_partition_is_asked_about_once_per_retry_backoff():
    c, p = _leaderless("3.6")
    sends = [t for t in _metadata_sends(c, "p") if t >= 25000]
    backoff = p.config["retry.backoff.ms"]
    assert backoff == 100
    gaps = [b - a for a, b in zip(sends, sends[1:], strict=False)]
    assert len(sends) >= 40, sends            # it does keep asking...
    assert min(gaps) >= backoff, gaps         # ...but never within the backoff (was: each RTT)
    assert max(gaps) <= backoff + 10, gaps    # ...and before 3.7 the backoff does not grow


def test_from_3_7_responses_that_bring_nothing_new_back_off_exponentially():
    """Each answer names the same leader epoch for the leaderless partition: the count of
    equivalent responses grows, so does the wait before the next request (100, 200, 400, 800,
    then 1000 ms: retry.backoff.max.ms, each -20 % .. +20 %, never above the maximum). A
    response with a newer epoch (the controller bumps it when it gives up the dead leader)
    starts the count over."""
    c, p = _leaderless("4.3")
    sends = _metadata_sends(c, "p")
    gaps = [b - a for a, b in zip(sends[:-1], sends[1:], strict=True)]
    rtt = 10   # a round trip and the sender's wake-up, at most
    first = next(i for i, g in enumerate(gaps) if g < 1000)   # the first refresh after the crash
    for n, gap in enumerate(gaps[first:first + 5]):
        term = min(100 * 2 ** n, 1000)
        assert int(0.8 * term) <= gap <= min(int(1.2 * term), 1000) + rtt, (n, gaps)
    assert max(gaps[first:]) <= 1000 + rtt, gaps
    # the count started over at least once, on a newer epoch: a short wait after long ones
    assert any(a >= 800 and b <= 120 + rtt for a, b in zip(gaps[first:-1], gaps[first + 1:],
                                                          strict=True)), gaps
    assert p.metadata.equivalent_responses >= 5


def test_failed_updates_back_off_exponentially_from_3_7():
    """Metadata.failedUpdate counts the attempts since the last success: the wait after the
    n-th failure is the backoff of attempt n - 1; a response resets it."""
    c = Cluster(brokers=3, seed=2, kafka_version="4.3")
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all")
    c.run(1000)
    md = p.metadata
    waits = []
    for n in range(1, 7):
        md.failed_update(c.now)
        assert md.attempts == n
        waits.append(md.time_to_allow_update(c.now, p.retry_backoff))
    for n, wait in enumerate(waits):
        term = min(100 * 2 ** n, 1000)
        assert int(0.8 * term) <= wait <= min(int(1.2 * term), 1000), waits
    md.update(c.now, [("t", 0, "NONE", 1, md.last_seen_epochs[("t", 0)], (), ())])
    assert md.attempts == 0


def test_the_first_refresh_after_a_quiet_spell_goes_at_once():
    """The backoff counts from the last update's end: an update asked for long after it is
    sent with no wait (Metadata.timeToAllowUpdate is 0)."""
    c = Cluster(brokers=3, seed=2, kafka_version="3.6")
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all")
    p.send("t", "v0")
    c.run(5000)
    assert p.metadata.time_to_allow_update(c.now, p.retry_backoff) == 0
    before = len(_metadata_sends(c, "p"))
    p._refresh_metadata()
    assert len(_metadata_sends(c, "p")) == before + 1
    assert p.metadata.time_to_allow_update(c.now, p.retry_backoff) == 0   # in flight: no end
    c.run(50)
    assert 0 < p.metadata.time_to_allow_update(c.now, p.retry_backoff) <= 100
