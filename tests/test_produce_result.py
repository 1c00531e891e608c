"""A send's ProduceResult: ``Producer._send_run`` sets its fields without the class call (one
result per record, KafkaProducer's FutureRecordMetadata), so these check that every field is set,
to what the constructor would give, and that the object behaves as one the constructor built."""

from __future__ import annotations

import dataclasses
import pickle

from kafkasim.clients.producer import NO_ERRORS, PENDING, ProduceResult
from kafkasim.cluster import Cluster


def _cluster() -> tuple[Cluster, object]:
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", partitions=1, replication_factor=3)
    return c, c.producer(acks="all", linger_ms=5)


def test_a_sent_result_has_every_field_the_constructor_sets():
    c, p = _cluster()
    r = p.send("t", "v", partition=0)
    built = ProduceResult(r.record_id, "t", 0, "v", PENDING, -1, None, 0, NO_ERRORS, c.now)
    for f in dataclasses.fields(ProduceResult):
        assert getattr(r, f.name) == getattr(built, f.name), f.name
    assert r == built and repr(r) == repr(built) == "<pending 'v' to t-0>"
    assert r.errors is NO_ERRORS


def test_many_sent_results_are_numbered_and_named_like_single_sends():
    c, p = _cluster()
    rs = p.send_many("t", ["a", None, "c"], partition=0)
    assert [r.record_id for r in rs] == list(range(rs[0].record_id, rs[0].record_id + 3))
    assert [r.value for r in rs] == ["a", f"r{rs[1].record_id}", "c"]
    assert all(r.status == PENDING and r.offset == -1 and r.sent_ms == c.now for r in rs)


def test_sent_results_settle_and_pickle_like_constructed_ones():
    c, p = _cluster()
    rs = p.send_many("t", ["a", "b"], partition=0)
    assert p.flush()
    assert [r.offset for r in rs] == [0, 1] and all(r.acked for r in rs)
    assert all(r.attempts == 1 and r.latency_ms >= 0 for r in rs)
    copy = pickle.loads(pickle.dumps(rs))
    assert copy == rs and copy[0].errors is NO_ERRORS


def test_produce_requests_and_batches_hold_every_field():
    """_send_batches and _send_run set the ProduceRequest's and the _Batch's fields without the
    class call: each must hold every field, as its constructor would."""
    from kafkasim.clients.producer import _Batch
    from kafkasim.protocol.messages import ProduceRequest

    c, p = _cluster()
    sent = []
    send = c.send

    def spy(src, dst, msg):
        sent.append(msg)
        return send(src, dst, msg)

    c.send = spy
    rs = p.send_many("t", ["a", "b", "c"], partition=0)
    queued = list(p.batches[("t", 0)])
    assert len(queued) == 1
    b = queued[0]
    names = [f.name for f in dataclasses.fields(_Batch)]
    assert _Batch(*(getattr(b, n) for n in names)) == b
    assert (b.record_ids, b.attempts, b.retry_at_ms, b.base_seq, b.epoch) == (
        [r.record_id for r in rs], 0, 0, -1, 0)
    assert p.flush()
    requests = [m for m in sent if isinstance(m, ProduceRequest)]
    assert len(requests) == 1
    req = requests[0]
    names = [f.name for f in dataclasses.fields(ProduceRequest)]
    assert ProduceRequest(*(getattr(req, n) for n in names)) == req
    assert (req.client_id, req.acks, len(req.partitions)) == (p.client_id, -1, 1)
