"""Session 25: Kafka's clients where kafkasim's differed.

Producer: a NOT_LEADER_OR_FOLLOWER answer (any error whose exception extends
InvalidMetadataException) keeps the cached metadata and only requests an update
(Sender.completeBatch @0.8.2.0 .. @3.9.0: ``metadata.requestUpdate``); the retry goes, after its
backoff, to whatever leader the metadata names then. Before, kafkasim's producer forgot the
partition's leader and waited for a metadata answer.

Consumer: KafkaConsumer.poll loops (updateAssignmentMetadataIfNeeded, pollForFetches) until it
has records or its timeout passes (ClassicKafkaConsumer.poll @3.9.0).
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from test_kip951_produce_leader import _moved_leader  # noqa: E402


def _produce_sends(c, t0: int, client: str = "p") -> list[tuple[int, int]]:
    """(time, destination) of each ProduceRequest ``client`` sent since ``t0``."""
    return [(row[0], row[5][1]) for row in c.trace.rows if row[0] >= t0 and row[2] == client
            and row[1] == "send" and row[5][0] == "ProduceRequest"]


def test_when_produce_response_returns_with_a_leader_ship_change_error_but_no_new_leader_information():  # noqa: E501
    """SenderTest.testWhenProduceResponseReturnsWithALeaderShipChangeErrorButNoNewLeaderInformation
    @3.9.0, on a 3.6 cluster (no CurrentLeader in the answer): after NOT_LEADER_OR_FOLLOWER the
    batch is not done, the metadata is unchanged (leader 1, its epoch), an update is requested
    (a MetadataRequest in flight), and the retry waits its backoff."""
    c, p = _moved_leader("3.6")
    tp = ("t", 0)
    before = (p.leaders[tp], p.leader_epochs[tp])
    t0 = c.now
    r = p.send("t", "after")
    c.run_until(lambda _c: r.errors, 1000)
    assert r.status == "pending" and r.errors == ["NOT_LEADER_OR_FOLLOWER"]
    assert (p.leaders[tp], p.leader_epochs[tp]) == before == (1, before[1])
    assert p.metadata.in_flight >= 0   # metadata.updateRequested(): the request is out (held)
    answered = c.now
    c.run(499)
    assert len(_produce_sends(c, t0)) == 1   # retry.backoff.ms 500 not over yet
    c.run(2)
    assert _produce_sends(c, t0)[1] == (answered + 500, 1)


def test_a_failed_batch_also_requests_a_metadata_update():
    """Sender.completeBatch @3.9.0 requests the update for an InvalidMetadataException whether
    the batch is retried or fails: with retries=0 the record fails NOT_LEADER_OR_FOLLOWER, the
    cached leader stays and a MetadataRequest goes out."""
    c, p = _moved_leader("3.6")
    p.sender.retries = 0
    tp = ("t", 0)
    r = p.send("t", "after")
    c.run_until(lambda _c: r.status != "pending", 1000)
    assert r.status == "failed" and r.error == "NOT_LEADER_OR_FOLLOWER"
    assert p.leaders[tp] == 1 and p.metadata.in_flight >= 0


def test_the_retry_follows_the_metadata_answer_that_came_meanwhile():
    """The update requested by the error is answered within the retry backoff: the retry goes
    to the new leader (no KIP-951 hint needed), once, after retry.backoff.ms."""
    c, p = _moved_leader("3.6")
    t0 = c.now
    r = p.send("t", "after")
    c.run_until(lambda _c: r.errors, 1000)
    c.release("MetadataRequest", src="p")
    c.run(2000)
    assert r.acked and r.errors == ["NOT_LEADER_OR_FOLLOWER"]
    sends = _produce_sends(c, t0)
    assert [dst for _t, dst in sends] == [1, 2] and sends[1][0] - sends[0][0] >= 500


# -- Consumer: KafkaConsumer.poll's loop ------------------------------------------------------
def _consumer_cluster(version: str = "3.9", **config):
    """A 3-broker cluster with topic t (one partition, led by broker 1) and a consumer of it,
    past its first poll (positions known, nothing to read)."""
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(3, kafka_version=version, seed=5)
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.run(1000)
    cn = c.consumer(auto_offset_reset="earliest", **config)
    cn.assign("t")
    assert cn.poll(1000) == []
    return c, cn


def _fetches(c, t0: int, client: str) -> list[tuple[int, int]]:
    """(time, destination) of each FetchRequest ``client`` sent (or had held) since ``t0``."""
    return [(row[0], row[5][1]) for row in c.trace.rows if row[0] >= t0 and row[2] == client
            and row[1] in ("send", "hold") and row[5][0] == "FetchRequest"]


def test_poll_returns_records():
    """KafkaConsumerTest.testPollReturnsRecords @3.9.0: records written before the poll come
    back from it, with the position past them."""
    c, cn = _consumer_cluster()
    p = c.producer("p", acks="all")
    p.send_many("t", ["a", "b", "c", "d", "e"])
    assert p.flush()
    assert [r.value for r in cn.poll(1000)] == ["a", "b", "c", "d", "e"]
    assert cn.position("t") == 5


def test_poll_loops_until_records_come():
    """ClassicKafkaConsumer.poll @3.9.0: an empty fetch answer (the broker waited
    fetch.max.wait.ms, 500) does not end the poll: it fetches again until a record comes, and
    returns as soon as it has it. kafkasim's poll returned [] after the first empty answer."""
    c, cn = _consumer_cluster()
    p = c.producer("p", acks="all")
    t0 = c.now
    c.at(t0 + 1200, lambda cl: p.send("t", "late"))
    got = cn.poll(5000)
    assert [r.value for r in got] == ["late"]
    assert t0 + 1200 < c.now < t0 + 1500   # at the answer, not at the timeout
    sends = _fetches(c, t0, cn.client_id)
    assert len(sends) >= 3 and {dst for _t, dst in sends} == {1}


def test_poll_times_out_without_records():
    """The loop ends at the poll's timeout when nothing comes; one fetch at a time is in flight
    to the leader (Fetcher.nodesWithPendingFetchRequests), each sent after the previous answer
    (about fetch.max.wait.ms apart)."""
    c, cn = _consumer_cluster()
    t0 = c.now
    assert cn.poll(2000) == []
    assert c.now == t0 + 2000
    times = [t for t, _dst in _fetches(c, t0, cn.client_id)]
    assert 3 <= len(times) <= 5
    assert all(b - a >= 500 for a, b in zip(times, times[1:], strict=False))


def test_a_fetch_outlives_a_short_poll_and_its_answer_waits_for_the_next():
    """A poll shorter than fetch.max.wait.ms leaves its fetch in flight: the next polls send
    none to that broker while it is unanswered (kafkasim sent one per poll), and the answer
    that comes between polls waits in the fetch buffer: the position moves only when a poll
    collects it (FetchCollector.collectFetch)."""
    c, cn = _consumer_cluster()
    p = c.producer("p", acks="all")
    t0 = c.now
    got = []
    for _ in range(5):
        got += cn.poll(10)
    assert len(_fetches(c, t0, cn.client_id)) == 1
    p.send("t", "x")
    assert p.flush()
    c.run(600)   # the parked fetch is answered with the record, between polls
    assert cn.position("t") == 0 and not got
    assert [r.value for r in cn.poll(0)] == ["x"] and cn.position("t") == 1


def test_verify_poll_times_out_during_metadata_update():
    """KafkaConsumerTest.verifyPollTimesOutDuringMetadataUpdate @3.9.0: poll(0) with no
    metadata answered yet sends no FetchRequest."""
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(3, kafka_version="3.9", seed=5)
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.run(1000)
    cn = c.consumer(auto_offset_reset="earliest")
    cn.assign("t")
    t0 = c.now
    assert cn.poll(0) == []
    assert _fetches(c, t0, cn.client_id) == [] and c.now == t0


def test_an_unanswered_fetch_is_given_up_after_request_timeout():
    """NetworkClient.handleTimedOutRequests: a fetch whose answer never comes (held) is given
    up after request.timeout.ms, and the leader is fetched from again."""
    c, cn = _consumer_cluster(request_timeout_ms=3000)
    c.hold("FetchRequest", src=cn.client_id)
    t0 = c.now
    assert cn.poll(2000) == []
    assert len(_fetches(c, t0, cn.client_id)) == 1
    c.release("FetchRequest", src=cn.client_id)
    c.hold("FetchResponse", dst=cn.client_id)
    assert cn.poll(2000) == []
    times = [t for t, _dst in _fetches(c, t0, cn.client_id)]
    assert len(times) == 2 and times[1] - times[0] >= 3000
