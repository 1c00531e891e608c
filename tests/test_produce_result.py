"""A send's ProduceResult: a view of its batch's ProduceRequestResult (KafkaProducer's
FutureRecordMetadata: the batch's result and the record's index in the batch), built without the
class call, so these check that every field reads what the constructor would give, that the
object behaves as one the constructor built, and that a batch's completion settles its
records."""

from __future__ import annotations

import dataclasses
import pickle

import pytest
from clusters import make_cluster

from kafkasim.runtime.clients.producer import (
    NO_ERRORS,
    PENDING,
    ProduceRequestResult,
    ProduceResult,
)
from kafkasim.runtime.cluster import Cluster


def _cluster() -> tuple[Cluster, object]:
    c = make_cluster(seed=1, kafka_version="3.7", topic="t")
    return c, c.producer(acks="all", linger_ms=5)


def test_a_sent_result_has_every_field_the_constructor_sets():
    c, p = _cluster()
    r = p.send("t", "v", partition=0)
    built = ProduceResult(r.record_id, "t", 0, "v", PENDING, -1, None, 0, NO_ERRORS, c.now)
    for name in ProduceResult.FIELDS:
        assert getattr(r, name) == getattr(built, name), name
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
    assert copy[0].result is copy[1].result, "one batch result, shared as before the pickle"


def test_the_public_constructor_builds_a_result_of_its_own():
    r = ProduceResult(7, "t", 1, "v", "acked", 42, None, 2, ["NOT_ENOUGH_REPLICAS"], 10, 25)
    assert [getattr(r, n) for n in ProduceResult.FIELDS] == [
        7, "t", 1, "v", "acked", 42, None, 2, ["NOT_ENOUGH_REPLICAS"], 10, 25]
    assert r.acked and r.latency_ms == 15 and repr(r) == "<acked 'v' at t-1@42>"
    assert r == pickle.loads(pickle.dumps(r))
    assert r != ProduceResult(7, "t", 1, "v", "acked", 43, None, 2, ["NOT_ENOUGH_REPLICAS"],
                              10, 25)
    fresh = ProduceResult(1, "t", 0, "v")
    assert (fresh.status, fresh.offset, fresh.errors, fresh.done_ms) == (PENDING, -1, [], -1)
    assert fresh.errors is not ProduceResult(1, "t", 0, "v").errors


def test_a_batch_completion_settles_every_record_of_the_batch_at_once():
    """ProducerBatch.done -> completeFutureAndFireCallbacks: one ProduceRequestResult per batch
    (base offset, error), each record's offset its base offset plus its index in the batch."""
    c, p = _cluster()
    p.send("t", "warm-up", partition=0)
    assert p.flush()
    rs = p.send_many("t", ["a", "b", "c"], partition=0)
    fut = rs[0].result
    assert type(fut) is ProduceRequestResult and all(r.result is fut for r in rs)
    assert [r.batch_index for r in rs] == [0, 1, 2]
    assert p.batches[("t", 0)][0].produce_future is fut
    assert p.flush()
    assert (fut.status, fut.base_offset, fut.error, fut.attempts) == ("acked", 1, None, 1)
    assert [r.offset for r in rs] == [1, 2, 3] and {r.done_ms for r in rs} == {fut.done_ms}
    rows = [r[5] for r in c.trace.rows if r[1] == "produce_result"]
    assert rows[-3:] == [(r.record_id, "acked", r.offset) for r in rs]


def test_a_failed_batch_fails_each_record_with_the_batch_error():
    c = Cluster(brokers=3, seed=1, kafka_version="3.7", config={"min.insync.replicas": 3})
    c.create_topic("t", partitions=1, replication_factor=3)
    p = c.producer(acks="all", retries=1, linger_ms=5)
    p.send("t", "warm-up", partition=0)
    assert p.flush()
    c.crash(3)
    c.run(30000)
    rs = p.send_many("t", ["a", "b"], partition=0)
    assert p.flush()
    assert all(r.status == "failed" and r.offset == -1 for r in rs)
    assert rs[0].errors == ["NOT_ENOUGH_REPLICAS"] * 2 and rs[0].attempts == 2
    assert rs[0].error == "NOT_ENOUGH_REPLICAS" and rs[0].errors is rs[1].errors
    assert p.failed() == rs and p.pending() == 0
    rows = [r[5] for r in c.trace.rows if r[1] == "produce_result"]
    assert rows[-2:] == [(r.record_id, "failed", "NOT_ENOUGH_REPLICAS") for r in rs]


def test_produce_requests_and_batches_hold_every_field():
    """_send_run's new batch (its four fields given, the sender's at their defaults) and its
    result, and Sender.send_produce_request's ProduceRequest, hold every field, as Kafka's
    objects do."""
    from kafkasim.core.messages import ProduceRequest
    from kafkasim.runtime.clients.producer import ProducerBatch

    c, p = _cluster()
    sent = []
    send = c.transport.send

    def spy(src, dst, msg):
        sent.append(msg)
        return send(src, dst, msg)

    c.transport.send = spy
    rs = p.send_many("t", ["a", "b", "c"], partition=0)
    queued = list(p.batches[("t", 0)])
    assert len(queued) == 1
    b = queued[0]
    assert ProducerBatch(("t", 0), b.record_ids, b.created_ms, b.produce_future) == b
    assert (b.seq_reset, b.producer_id) == (False, -1)
    assert (b.record_ids, b.attempts, b.retry_at_ms, b.base_seq, b.epoch) == (
        [r.record_id for r in rs], 0, 0, -1, 0)
    fut = b.produce_future   # ProduceRequestResult(topic, partition)
    names = [f.name for f in dataclasses.fields(ProduceRequestResult)]
    assert ProduceRequestResult(*(getattr(fut, n) for n in names)) == fut == \
        ProduceRequestResult("t", 0) and fut.errors is NO_ERRORS
    assert p.flush()
    requests = [m for m in sent if isinstance(m, ProduceRequest)]
    assert len(requests) == 1
    req = requests[0]
    names = [f.name for f in dataclasses.fields(ProduceRequest)]
    assert ProduceRequest(*(getattr(req, n) for n in names)) == req
    assert (req.client_id, req.acks, len(req.partitions)) == (p.client_id, -1, 1)


def test_results_build_each_record_result_once_and_keep_it():
    """Producer.results (ProduceResults): a record's ProduceResult is built on first access and
    kept; the object ``send`` returned is that one and follows its batch as the run goes on."""
    c, p = _cluster()
    r = p.send("t", "a", partition=0)
    rs = p.send_many("t", ["b", None], partition=0)
    ids = [r.record_id] + [x.record_id for x in rs]
    res = p.results
    assert res[ids[0]] is r and res[ids[1]] is rs[0] and res[ids[1]] is res[ids[1]]
    assert list(res) == ids and len(res) == 3 and ids[2] in res and 10**9 not in res
    assert "x" not in res and res.get(10**9) is None
    with pytest.raises(KeyError):
        res[ids[-1] + 1]
    assert [x.value for x in res.values()] == ["a", "b", f"r{ids[2]}"]
    assert repr(res) == repr({i: res[i] for i in ids})
    assert r.status == PENDING and p.acked() == [] and p.pending() == 3
    assert p.flush()
    assert r.acked and r.offset == 0 and [x.offset for x in rs] == [1, 2]
    assert p.acked() == [r, *rs] and p.acked()[0] is r and p.failed() == []
    assert res == {i: res[i] for i in ids} and res != {}
    assert repr(p).endswith("sent=3, acked=3, failed=0)")


def test_results_survive_a_pickle_with_pending_records_following_their_batch():
    """A pickled producer (snapshots.snapshot) carries its results' columns and batch results: a
    restored pending record still settles with its batch."""
    c, p = _cluster()
    p.send("t", "a", partition=0)
    assert p.flush()
    p.send_many("t", ["b", "c"], partition=0)
    c2 = pickle.loads(pickle.dumps(c))
    p2 = c2.clients[p.client_id]
    rid = max(p.results)
    assert p2.results[rid].status == PENDING and p2.pending() == 2
    assert p2.results[rid].result is p2.batches[("t", 0)][0].produce_future
    assert p2.flush() and p.flush()
    assert [(x.status, x.offset) for x in p2.results.values()] == \
        [(x.status, x.offset) for x in p.results.values()] == [("acked", i) for i in range(3)]


def test_results_of_interleaved_producers_and_batches_find_each_record():
    """Record ids are the cluster's: two producers' sends interleave, and one send_many fills
    several batches (batch.size 300: three 100-byte records a batch); each producer's results
    hold its own records only, each with its batch and index in it."""
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", partitions=2, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5, batch_size=300)
    q = c.producer(acks="all", linger_ms=5)
    a = p.send_many("t", [f"a{i}" for i in range(7)], partition=0)
    b = q.send("t", "b", partition=1)
    a2 = p.send_many("t", ["c", "d"], partition=0)
    assert len(p.results) == 9 and len(q.results) == 1
    assert b.record_id not in p.results and a[0].record_id not in q.results
    with pytest.raises(KeyError):
        p.results[b.record_id]
    assert list(p.results) == [r.record_id for r in a + a2]
    assert [r.batch_index for r in a + a2] == [0, 1, 2, 0, 1, 2, 0, 1, 2]
    assert len({id(r.result) for r in a + a2}) == 3 and a[6].result is a2[1].result
    assert p.flush() and q.flush()
    assert [r.offset for r in a + a2] == list(range(9)) and b.offset == 0
    assert p.results.values() == a + a2 and p.results.items() == [(r.record_id, r)
                                                                   for r in a + a2]
