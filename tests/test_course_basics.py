"""Notebook 01's tables and exercise checks (kafkasim.course.basics), against the simulator."""

from __future__ import annotations

import pytest

from kafkasim.course import basics, exercises
from kafkasim.runtime.cluster import Cluster

# run as in the notebooks, which set KAFKA_VERSION = "4.3" (conftest.py)
pytestmark = pytest.mark.usefixtures("notebook_kafka_version")


def _big() -> Cluster:
    c = Cluster(brokers=5, seed=basics.SEED)
    c.create_topic("events", partitions=10, replication_factor=3)
    return c


def test_fetcher_total_is_one_thread_per_followed_leader():
    """AbstractFetcherManager: one fetcher per (source broker, fetcher id); with
    num.replica.fetchers=1 that is the number of distinct other leaders a broker follows."""
    c = _big()
    before = c.now
    expected = 0
    for b in c.brokers:
        leaders = {c.leader("events", p) for p, reps in c.assignment("events").items()
                   if b in reps and c.leader("events", p) != b}
        expected += len(leaders)
    assert basics.fetcher_thread_count(c) == expected
    assert expected < 5 * 4          # the placement leaves some broker pairs without a thread
    assert c.now == before               # counted on a copy: the learner's cluster did not move


def test_check_fetcher_total(capsys):
    c = _big()
    right = basics.fetcher_thread_count(c)
    assert exercises.check_fetcher_total(c, right)
    assert not exercises.check_fetcher_total(c, right + 1)
    assert not exercises.check_fetcher_total(c, None)
    assert "Not answered" in capsys.readouterr().out


def test_check_lagging_follower_accepts_held_responses_and_rejects_a_crash():
    assert exercises.check_lagging_follower(lambda c: c.hold("FetchResponse", src=1, dst=3))
    assert exercises.check_lagging_follower(lambda c: c.cut(1, 3))
    assert not exercises.check_lagging_follower(lambda c: c.crash(3))
    assert not exercises.check_lagging_follower(lambda c: None)      # everyone catches up
    assert not exercises.check_lagging_follower(None)


def test_leader_view_is_the_followers_last_fetch_offset():
    c = Cluster(brokers=3, seed=1)
    c.create_topic("t", partitions=1, replication_factor=3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="1", linger_ms=0)
    c.hold("FetchResponse", src=1, dst=3)
    p.send_many("t", ["a", "b"], partition=0)
    c.run(2000)
    assert basics.leader_view(c, "t") == {2: 2, 3: 0}


def test_check_idle_fetches_counts_parked_fetches():
    """ReplicaFetcherThread / DelayedFetch: with nothing new the leader parks a Fetch for
    replica.fetch.wait.max.ms and answers empty, so an idle follower sends about one Fetch per
    wait (10 s / 200 ms = 50; the default 500 ms gives 20). Two partitions followed, one led by
    broker 1: one request stream to broker 1."""
    assert exercises.idle_fetch_count(500, 10000, "4.3") in (19, 20, 21)
    right = exercises.idle_fetch_count(200, 10000, "4.3")
    assert 48 <= right <= 51
    assert exercises.check_idle_fetches(right, kafka_version="4.3")
    for wrong in (0, 20, 2 * right, 500):            # none, default wait, both partitions, no park
        result = exercises.check_idle_fetches(wrong, kafka_version="4.3")
        assert not result and not result.unanswered
    assert exercises.check_idle_fetches(None, kafka_version="4.3").unanswered


def test_a_lost_fetch_response_is_fetched_again_after_the_request_timeout():
    """Notebook 01 section 4's score: nothing resends a lost FetchResponse; the follower's fetch
    times out (replica.socket.timeout.ms, 30 s: fetch_failed REQUEST_TIMED_OUT), it backs off
    (replica.fetch.backoff.ms) and fetches again from its LEO."""
    from kafkasim.course.basics import lost_fetch_choice, lost_fetch_story
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(brokers=3, seed=1, kafka_version="4.3")
    c.create_topic("t", partitions=1, replication_factor=3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="1", linger_ms=0)
    p.send_many("t", ["a", "b"], partition=0)
    c.run(2000)
    p.send_many("t", ["y0", "y1", "y2"], partition=0)
    lost_at = c.now
    c.transport.drop("FetchResponse", src=1, dst=2, count=1)
    c.run_until(lambda c: c.log(2, "t", 0).log_end_offset >= 5, 60_000)
    story = lost_fetch_story(c, lost_at, 2, 5)
    assert lost_fetch_choice(c.now - lost_at) == "about 30 s later"
    assert "fetch_failed" in story and "REQUEST_TIMED_OUT" in story
    assert "FetchResponse 1 -> 2" in story
    assert [lost_fetch_choice(ms) for ms in (-1, 5, 600)] == [
        "never", "at once: the leader resends it", "within 1 s: its next Fetch"]
