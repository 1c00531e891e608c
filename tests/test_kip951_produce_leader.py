"""KIP-951 (3.7+): a ProduceResponse answered NOT_LEADER_OR_FOLLOWER carries the partition's
current leader (id, epoch) and the producer switches to it at once, without waiting for a
metadata refresh and without retry.backoff.ms.

Kafka: KafkaApis.handleProduceRequest (ProduceResponse v10+: ``getCurrentLeader``, the local
Partition's leader and epoch, else the metadata cache, and the leader's node only when it is
alive); Sender.completeBatch / handleProduceResponse (``metadata.updatePartitionLeadership``,
applied only for an epoch newer than the cached one; a metadata refresh is still requested);
RecordAccumulator.shouldBackoff / ProducerBatch.hasLeaderChangedForTheOngoingRetry (no backoff
for a retry whose leader changed). Tests after SenderTest
.testWhenProduceResponseReturnsWithALeaderShipChangeErrorAndNewLeaderInformation and
.testWhenProduceResponseReturnsWithALeaderShipChangeErrorButNoNewLeaderInformation.
"""

from __future__ import annotations

import pytest

from kafkasim.runtime.cluster import Cluster


def _moved_leader(version: str):
    """Broker 1 leads t-0 (preferred replica 2 was down), the producer knows it; then its
    metadata requests are held and a preferred election moves the leadership to 2."""
    c = Cluster(3, kafka_version=version, seed=3)
    c.create_topic("t", 1, 3, assignment=[[2, 1, 3]])
    c.run(1000)
    c.crash(2)
    c.run(20000)
    c.start(2)
    c.run_until(lambda cl: len(cl.isr("t", 0)) == 3, 60000)
    assert c.leader("t", 0) == 1
    p = c.producer("p", acks="all", retry_backoff_ms=500)
    p.send("t", "before")
    c.run(2000)
    assert len(p.acked()) == 1
    c.hold("MetadataRequest", src="p")
    c.elect("t", [0])
    c.run(2000)
    assert c.leader("t", 0) == 2
    return c, p


def test_when_produce_response_returns_with_a_leadership_change_error_and_new_leader_information():
    c, p = _moved_leader("3.7")
    t0 = c.now
    r = p.send("t", "after")
    c.run(3000)
    assert r.acked and r.offset == 1, (r, r.errors)
    assert r.errors == ["NOT_LEADER_OR_FOLLOWER"]
    assert p.leaders[("t", 0)] == 2 and p.leader_epochs[("t", 0)] >= 2
    # (type, destination, message id) of what the producer sent and received since
    wire = [(row[0], row[1], row[5][0], row[5][1]) for row in c.trace.rows
            if row[0] >= t0 and row[2] == "p" and row[1] in ("send", "recv")]
    (sent, _s, _t, to_old), (answered, _r, _u, from_old), (retried, _s2, _t2, to_new) = \
        wire[:3]
    assert (to_old, from_old, to_new) == (1, 1, 2)
    assert [w[2] for w in wire[:3]] == ["ProduceRequest", "ProduceResponse", "ProduceRequest"]
    # the retry went to the new leader in the millisecond of the answer: no retry.backoff.ms,
    # and no MetadataRequest answered in between (they are held)
    assert retried == answered > sent


@pytest.mark.parametrize("version", ["3.6", "3.5"])
def test_before_kip_951_the_producer_waits_for_metadata(version):
    """Before 3.7 the answer names no leader: the producer keeps its cached leader 1 (Sender
    .completeBatch @3.6.0 only calls metadata.requestUpdate) and, while no metadata answer
    comes, retries there every retry.backoff.ms (500), answered NOT_LEADER_OR_FOLLOWER each
    time; the first answer naming leader 2 ends it."""
    c, p = _moved_leader(version)
    t0 = c.now
    r = p.send("t", "after")
    c.run(3000)
    assert r.status == "pending" and len(r.errors) >= 5
    assert set(r.errors) == {"NOT_LEADER_OR_FOLLOWER"}
    sends = [(row[0], row[5][1]) for row in c.trace.rows if row[0] >= t0 and row[2] == "p"
             and row[1] == "send" and row[5][0] == "ProduceRequest"]
    assert {dst for _t, dst in sends} == {1}
    assert all(b[0] - a[0] >= 500 for a, b in zip(sends, sends[1:], strict=False))
    c.release("MetadataRequest", src="p")
    c.run(3000)
    assert r.acked and r.offset == 1
