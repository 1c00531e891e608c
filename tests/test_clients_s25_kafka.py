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
