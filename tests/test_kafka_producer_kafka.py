"""Kafka's KafkaProducerTest and ProducerConfigTest, ported (clients/src/test/java/org/apache/kafka/
clients/producer/ at tags 3.7.0 and trunk 1eb7644, with ProducerConfigTest
.testUpperboundCheckOfEnableIdempotence of 4.0, KAFKA-17927), and the flush / abort cases of
RecordAccumulatorTest @3.7.0 that tests/test_producer_internals_kafka.py left out because the
accumulator had no flush or abort then.

How they are adapted to kafkasim:

- ``new ProducerConfig(props)`` is ``kafkasim.settings.config.producer_config(props, version)``:
  ``acks`` comes out as an int (-1 for "all"), ``enable.idempotence`` is the effective value,
  and ConfigException is ``ConfigError``. The cases run at 3.7 and at 4.0 where the rules differ.
- ``new KafkaProducer(...)`` with a MockClient is ``Cluster.producer`` on a real ``Cluster``
  (1 ms links without jitter); ``producer.send(record)`` returns the record's ``ProduceResult``
  (the Future: ``status`` pending / acked / failed, ``error`` the exception's name);
  ``client.respond`` is the brokers' own answer, or ``Cluster.hold`` keeps a request unanswered.
- RecordAccumulatorTest's cases drive ``RecordAccumulator`` alone, as
  tests/test_record_accumulator.py does (records of ``RECORD_SIZE`` bytes, leaders as a dict).

Left out: everything transactional (transactional.id, init/commit/abort, sendOffsets, the
transactional cases of the config tests and testOverwriteAcksAndRetries's client id
"producer-<transactional id>"), serializers, interceptors, partitioners, headers, metrics and
metric reporters, JMX, client telemetry, socket buffer sizes, unused configs, and the cases that
need threads (shouldCloseProperlyAndThrowIfInterrupted). partitionsFor and the metadata waits
(testTopicRefreshInMetadata, testTopicNotExistingInMetadata, testPartitionsForWithNullTopic,
testMetadataWithPartitionOutOfRange, testCloseWhenWaitingForMetadataUpdate) are in
tests/test_producer_metadata_wait_s23_kafka.py; testTopicExpiryInMetadata needs
metadata.max.idle.ms, not modelled; testMetadataExpiry is metadata.max.age.ms, tested in
tests/test_metadata_max_age.py. ProducerConfigTest: serializers,
compression, security protocols and metadata.recovery.strategy are not modelled.
RecordAccumulatorTest.testAbortUnsentBatches: abortUndrainedBatches is the transactional abort.

A send to a topic or partition the producer's metadata lacks waits for it up to
``max.block.ms`` (KafkaProducer.waitOnMetadata; kafkasim's ``metadata_wait``), read at 3.9.0;
more of those cases are in tests/test_producer_metadata_wait_s23_kafka.py.

Tests named after no Kafka test are marked "(new)": close() and flush() end to end.
"""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core.errors import IllegalArgumentException
from kafkasim.runtime.clients.produce_result import ACKED, FAILED, PENDING
from kafkasim.runtime.clients.producer_batch import RECORD_SIZE
from kafkasim.runtime.clients.record_accumulator import RecordAccumulator
from kafkasim.runtime.clients.subscription_state import IllegalStateException
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.config import INT_MAX, ConfigError, producer_config

# ------------------------------------------------------------------------- config (3.7, 4.0)

VERSIONS = ["3.7", "4.0"]


@pytest.mark.parametrize("version", VERSIONS)
def test_overwrite_acks_and_retries_for_idempotent_producers(version):
    """testOverwriteAcksAndRetriesForIdempotentProducers: by default the producer is
    idempotent, with acks all and retries Integer.MAX_VALUE."""
    config = producer_config({}, version)
    assert config["enable.idempotence"] is True
    assert config["acks"] == -1
    assert config["retries"] == INT_MAX


@pytest.mark.parametrize("version", VERSIONS)
def test_acks_and_idempotence_for_idempotent_producers(version):
    """testAcksAndIdempotenceForIdempotentProducers: acks other than all turns the default
    idempotence off; with enable.idempotence set to true it is a ConfigException."""
    config = producer_config({"acks": "0", "enable.idempotence": "false"}, version)
    assert config["enable.idempotence"] is False and config["acks"] == 0
    config = producer_config({"acks": "all", "enable.idempotence": "false"}, version)
    assert config["enable.idempotence"] is False and config["acks"] == -1
    for acks in ("0", "1"):
        config = producer_config({"acks": acks}, version)
        assert config["enable.idempotence"] is False, "acks not all: idempotence off"
        assert config["acks"] == int(acks)
    with pytest.raises(ConfigError, match="Must set acks to all in order to use the idempotent"):
        producer_config({"acks": "1", "enable.idempotence": "true"}, version)


@pytest.mark.parametrize("version", VERSIONS)
def test_retries_and_idempotence_for_idempotent_producers(version):
    """testRetriesAndIdempotenceForIdempotentProducers: retries 0 turns the default idempotence
    off; with enable.idempotence set to true it is a ConfigException."""
    config = producer_config({"retries": "0", "enable.idempotence": "false"}, version)
    assert config["enable.idempotence"] is False and config["retries"] == 0
    config = producer_config({"retries": "0"}, version)
    assert config["enable.idempotence"] is False and config["retries"] == 0
    with pytest.raises(ConfigError, match="Must set retries to non-zero when using the idempotent"):
        producer_config({"retries": "0", "enable.idempotence": "true"}, version)


def test_inflight_requests_and_idempotence_for_idempotent_producers():
    """testInflightRequestsAndIdempotenceForIdempotentProducers @3.7.0: more than 5 requests in
    flight turns the default idempotence off; with enable.idempotence set to true it is a
    ConfigException."""
    key = "max.in.flight.requests.per.connection"
    config = producer_config({key: "6", "enable.idempotence": "false"}, "3.7")
    assert config["enable.idempotence"] is False and config[key] == 6
    config = producer_config({key: "6"}, "3.7")
    assert config["enable.idempotence"] is False and config[key] == 6
    with pytest.raises(ConfigError, match="Must set max.in.flight.requests.per.connection to at "
                                          "most 5 to use the idempotent producer."):
        producer_config({key: "6", "enable.idempotence": "true"}, "3.7")


def test_upperbound_check_of_enable_idempotence():
    """ProducerConfigTest.testUpperboundCheckOfEnableIdempotence (4.0, KAFKA-17927): with the
    default idempotence more than 5 requests in flight is a ConfigException (3.9: idempotence
    silently off); 5 is fine; explicitly not idempotent, 6 is fine."""
    key = "max.in.flight.requests.per.connection"
    with pytest.raises(ConfigError) as err:
        producer_config({key: "6"}, "4.0")
    assert str(err.value) == ("To use the idempotent producer, max.in.flight.requests.per."
                              "connection must be set to at most 5. Current value is 6.")
    assert producer_config({key: "5"}, "4.0")["enable.idempotence"] is True
    assert producer_config({key: "6", "enable.idempotence": False}, "4.0")[key] == 6
    assert producer_config({key: "6"}, "3.9")["enable.idempotence"] is False
    # the check comes after acks and retries: an explicit idempotence fails on those first
    with pytest.raises(ConfigError, match="Must set retries to non-zero"):
        producer_config({key: "6", "retries": 0, "enable.idempotence": True}, "4.0")
    with pytest.raises(ConfigError, match="Current value is 6"):
        producer_config({key: "6", "acks": "1"}, "4.0")


@pytest.mark.parametrize("version", VERSIONS)
def test_delivery_timeout_and_linger_ms_config(version):
    """testDeliveryTimeoutAndLingerMsConfig: delivery.timeout.ms below linger.ms +
    request.timeout.ms is refused; equal to it is fine."""
    c = Cluster(1, seed=1, kafka_version=version)
    with pytest.raises(ConfigError, match=r"delivery.timeout.ms .*should be equal to or larger "
                                          r"than linger.ms \+ request.timeout.ms"):
        c.producer("p1", delivery_timeout_ms=1000, linger_ms=1000, request_timeout_ms=1)
    c.producer("p2", delivery_timeout_ms=1000, linger_ms=999, request_timeout_ms=1).close()


# ---------------------------------------------------------------------------- the producer


def _cluster(version: str = "3.7", partitions: int = 1) -> Cluster:
    c = Cluster(3, seed=1, kafka_version=version, latency_ms=1, jitter_ms=0)
    c.create_topic("topic", partitions, 3)
    c.run(500)
    return c


def _metadata_requests(c: Cluster, client: str) -> int:
    return sum(1 for r in c.trace.events("send") if r[2] == client
               and r[5][0] == "MetadataRequest")


@pytest.mark.parametrize("idempotence", [True, False])
def test_metadata_fetch(idempotence):
    """testMetadataFetch: a send right after the producer starts waits for its metadata (here
    the record waits in the accumulator); later sends ask for no more metadata."""
    c = _cluster()
    p = c.producer("p", enable_idempotence=idempotence)
    first = p.send("topic", "value")
    c.run(50)
    assert first.status == ACKED
    assert _metadata_requests(c, "p") == 1
    second = p.send("topic", "value")
    c.run(50)
    assert second.status == ACKED
    assert _metadata_requests(c, "p") == 1
    p.close(0)


@pytest.mark.parametrize("idempotence", [True, False])
def test_metadata_timeout_with_missing_topic(idempotence):
    """testMetadataTimeoutWithMissingTopic @3.9.0: a send to partition 2 of a topic that does
    not exist waits, asking for the topic's metadata again and again, and after max.block.ms
    (60 s) its future fails with a TimeoutException (KafkaProducer.waitOnMetadata; the doSend
    catch of ApiException returns a FutureFailure)."""
    c = _cluster()
    p = c.producer("p", enable_idempotence=idempotence, max_block_ms=60000)
    start = c.now
    result = p.send("missing", "value", partition=2)
    assert result.status == PENDING
    c.run(59_990)
    assert result.status == PENDING
    assert _metadata_requests(c, "p") >= 5   # the first, then one after each answer's backoff
    c.run(20)
    assert result.status == FAILED and result.error == E.DELIVERY_TIMEOUT
    assert result.done_ms == start + 60000
    assert result.message.startswith("Topic missing not present in metadata after 60000 ms.")
    assert p.pending() == 0
    p.close(0)


@pytest.mark.parametrize("idempotence", [True, False])
def test_metadata_timeout_with_partition_out_of_range(idempotence):
    """testMetadataTimeoutWithPartitionOutOfRange @3.9.0: a send to partition 2 of a
    one-partition topic waits for the partition (KAFKA-6833, 2.1) and fails with a
    TimeoutException after max.block.ms; the topic's other records are not held up."""
    c = _cluster()
    p = c.producer("p", enable_idempotence=idempotence, max_block_ms=60000)
    result = p.send("topic", "value", partition=2)
    other = p.send("topic", "other", partition=0)
    c.run(1000)
    assert result.status == PENDING and other.status == ACKED
    c.run(60_000)
    assert result.status == FAILED and result.error == E.DELIVERY_TIMEOUT
    # at 3.7 the awaitUpdate timeout's message names only the topic (4.0+: KAFKA-8862)
    assert result.message.startswith("Topic topic not present in metadata after 60000 ms.")
    p.close(0)


def test_send_to_invalid_topic():
    """testSendToInvalidTopic @3.9.0: a send to "topic abc" (a space is not allowed) gets a
    metadata answer of INVALID_TOPIC_EXCEPTION and its future fails with
    InvalidTopicException, well before max.block.ms (15 s)."""
    c = _cluster("3.9")
    p = c.producer("p", max_block_ms=15000)
    result = p.send("topic abc", "HelloKafka")
    c.run(1000)
    assert result.status == FAILED and result.error == E.INVALID_TOPIC_EXCEPTION
    assert result.message == "Invalid topics: [topic abc]"
    p.close(0)


def test_null_topic_name():
    """testNullTopicName: a record without a topic is refused (IllegalArgumentException; here
    ClusterError, a ValueError)."""
    c = _cluster()
    with pytest.raises(ValueError, match="a topic name is a string"):
        c.producer("p").send(None, "value")


def test_negative_partition_should_throw():
    """negativePartitionShouldThrow: a negative partition is refused (IllegalArgumentException;
    here ClusterError, a ValueError)."""
    c = _cluster()
    with pytest.raises(ValueError, match="partition -1 does not exist"):
        c.producer("p").send("topic", "value", partition=-1)


def test_close_should_be_idempotent():
    """closeShouldBeIdempotent: closing twice is fine."""
    c = _cluster()
    p = c.producer("p")
    p.close()
    p.close()


def test_close_with_negative_timestamp_should_throw():
    """closeWithNegativeTimestampShouldThrow: close(-100 ms) is an IllegalArgumentException."""
    c = _cluster()
    p = c.producer("p")
    with pytest.raises(IllegalArgumentException, match="The timeout cannot be negative."):
        p.close(-100)
    p.close()


@pytest.mark.parametrize("version,linger_ms", [("3.7", None), ("4.0", None), ("3.7", 10_000),
                                               ("4.0", 10_000)])
def test_flush_complete_send_of_inflight_batches(version, linger_ms):
    """testFlushCompleteSendOfInflightBatches: none of 50 records is done before flush(), all
    are after it; with linger.ms (5 by default from 4.0, or 10 s) flush sends the batch at once
    (RecordAccumulator.beginFlush) rather than after linger.ms."""
    c = _cluster(version)
    cfg = {"enable_idempotence": False}
    if linger_ms is not None:
        cfg["linger_ms"] = linger_ms
    p = c.producer("p", **cfg)
    c.run(50)
    start = c.now
    results = [p.send("topic", f"value{i}") for i in range(50)]
    assert all(r.status == PENDING for r in results)
    assert p.flush()
    assert all(r.status == ACKED for r in results)
    assert c.now - start < 5 or linger_ms is None and version == "3.7"
    assert not p.accumulator.flush_in_progress() and not p.accumulator.has_incomplete()


def test_flush_in_0_8_2_waits_for_linger_ms():
    """(new) The 0.8.2 producer had no flush() (KAFKA-1865, 0.9.0): kafkasim's flush there only
    waits, the batch keeps its linger.ms."""
    c = _cluster("0.8.2")
    p = c.producer("p", linger_ms=1000)
    c.run(50)
    start = c.now
    result = p.send("topic", "value")
    assert p.flush()
    assert result.status == ACKED and c.now - start >= 1000


def test_flush_waits_only_for_the_batches_incomplete_at_the_call():
    """(new) RecordAccumulator.awaitFlushCompletion waits for the batches incomplete when it is
    called; a record sent while the flush runs, into a new batch, is not waited for."""
    c = _cluster(partitions=2)
    p = c.producer("p", linger_ms=10_000)
    c.run(50)
    first = p.send("topic", "first", partition=0)
    later = []
    c.at(c.now + 1, lambda c: later.append(p.send("topic", "later", partition=1)))
    c.hold(type="ProduceRequest", src="p", count=1)   # the first batch waits
    c.at(c.now + 20, lambda c: c.release(type="ProduceRequest", src="p"))
    assert p.flush()
    assert first.status == ACKED
    assert later and later[0].status == ACKED   # sendable at once while the flush ran
    assert not p.accumulator.flush_in_progress()


def test_close_sends_lingering_batches_at_once():
    """(new) close(): the accumulator closes, so a lingering batch is sent at once
    (RecordAccumulator.close, batchReady's ``closed``), and the sender ends when nothing is
    queued or in flight; a send after it is an IllegalStateException (throwIfProducerClosed)."""
    c = _cluster()
    p = c.producer("p", linger_ms=10_000)
    c.run(50)
    start = c.now
    results = [p.send("topic", f"v{i}") for i in range(3)]
    p.close()
    assert [r.status for r in results] == [ACKED] * 3
    assert c.now - start < 10_000 and p.sender.shut_down
    with pytest.raises(IllegalStateException, match="Cannot perform operation after producer "
                                                    "has been closed"):
        p.send("topic", "late")


def test_close_with_zero_timeout_aborts_incomplete_batches():
    """(new) close(0 ms) does not wait: every incomplete batch, in flight or queued, fails with
    KafkaException "Producer is closed forcefully." (Sender.forceClose,
    RecordAccumulator.abortIncompleteBatches); the answer that comes later is not read and the
    producer asks for no more metadata."""
    c = _cluster()
    p = c.producer("p", linger_ms=0, max_in_flight_requests_per_connection=1)
    c.run(50)
    c.hold(type="ProduceRequest", src="p")
    in_flight = p.send("topic", "sent")
    c.run(5)
    queued = p.send("topic", "queued")
    assert p.in_flight and p.accumulator.has_undrained()
    requests = _metadata_requests(c, "p")
    p.close(0)
    assert (in_flight.status, in_flight.error) == (FAILED, E.PRODUCER_CLOSED_FORCEFULLY)
    assert (queued.status, queued.error) == (FAILED, E.PRODUCER_CLOSED_FORCEFULLY)
    assert not p.accumulator.has_incomplete() and not p.in_flight and p.pending() == 0
    c.release(type="ProduceRequest", src="p")
    c.run(600_000)
    assert in_flight.status == FAILED
    assert _metadata_requests(c, "p") == requests


def test_close_with_timeout_forces_what_is_left():
    """(new) close(timeout): waits up to the timeout for the queued and in-flight batches, then
    forces the close; what was answered by then keeps its result."""
    c = _cluster()
    p = c.producer("p", linger_ms=0)
    c.run(50)
    acked = p.send("topic", "acked")
    c.run(50)
    assert acked.status == ACKED
    c.hold(type="ProduceRequest", src="p")
    held = p.send("topic", "held")
    start = c.now
    p.close(1000)
    assert c.now == start + 1000
    assert (held.status, held.error) == (FAILED, E.PRODUCER_CLOSED_FORCEFULLY)
    assert acked.status == ACKED


def test_callbacks_for_one_partition_complete_in_send_order():
    """(new) KafkaProducer.send: the records of one partition complete (their callbacks run) in
    the order they were sent, over several batches and requests."""
    c = _cluster()
    p = c.producer("p", linger_ms=0, batch_size=2 * RECORD_SIZE)
    c.run(50)
    results = [p.send("topic", f"v{i}") for i in range(10)]
    assert p.flush()
    done = [r[5][0] for r in c.trace.events("produce_result") if r[2] == "p"]
    assert done == [r.record_id for r in results]
    assert [r.offset for r in results] == list(range(10))


# ------------------------------------------------------- RecordAccumulatorTest: flush, abort

TP1, TP2, TP3 = ("test", 0), ("test", 1), ("test", 2)
NODE1, NODE2 = 1, 2
LEADERS = {TP1: NODE1, TP2: NODE1, TP3: NODE2}
LINGER_MAX = INT_MAX


def _append(accum: RecordAccumulator, n: int) -> None:
    """``n`` records, record i to partition i % 3 of "test", at time 0."""
    tps = (TP1, TP2, TP3)
    for i in range(n):
        accum.append(tps[i % 3], i, i + 1, 0)


def test_flush():
    """RecordAccumulatorTest.testFlush: lingering batches are not ready until beginFlush; then
    they drain, and once deallocated nothing is incomplete or undrained."""
    accum = RecordAccumulator(40 * RECORD_SIZE, LINGER_MAX)
    _append(accum, 100)
    assert accum.has_incomplete()
    assert not accum.ready(LEADERS, 0).ready_nodes, "No nodes should be ready."
    accum.begin_flush()
    result = accum.ready(LEADERS, 0)
    assert set(result.ready_nodes) == {NODE1, NODE2}
    drained = accum.drain(LEADERS, result.ready_nodes, 0)
    assert accum.has_incomplete()
    for batches in drained.values():
        for batch in batches.values():
            accum.deallocate(batch)
    assert accum.await_flush_completion()
    assert not accum.has_undrained()
    assert not accum.has_incomplete()
    assert not accum.flush_in_progress()


def test_await_flush_complete():
    """RecordAccumulatorTest.testAwaitFlushComplete: the flush count goes back down even when
    the wait is interrupted."""
    accum = RecordAccumulator(40 * RECORD_SIZE, LINGER_MAX)
    _append(accum, 1)
    accum.begin_flush()
    assert accum.flush_in_progress()

    def interrupted(_results):
        raise InterruptedError

    with pytest.raises(InterruptedError):
        accum.await_flush_completion(interrupted)
    assert not accum.flush_in_progress(), "flushInProgress count should be decremented"


def test_abort_incomplete_batches():
    """RecordAccumulatorTest.testAbortIncompleteBatches: full batches drain, the rest stay;
    abortIncompleteBatches fails every record, drained or not, with "Producer is closed
    forcefully."."""
    accum = RecordAccumulator(2 * RECORD_SIZE, LINGER_MAX)
    _append(accum, 100)
    result = accum.ready(LEADERS, 0)
    assert result.ready_nodes
    drained = accum.drain(LEADERS, result.ready_nodes, 0)
    assert accum.has_undrained() and accum.has_incomplete()
    drained_batches = [b for batches in drained.values() for b in batches.values()]
    assert all(b.produce_future.status == PENDING for b in drained_batches)
    n_drained = sum(b.record_count for b in drained_batches)
    assert 0 < n_drained < 100
    batches = accum.incomplete.copy_all()
    aborted = accum.abort_incomplete_batches()
    assert len(aborted) == len(batches)
    assert sum(b.record_count for b in batches
               if b.produce_future.error == E.PRODUCER_CLOSED_FORCEFULLY) == 100
    assert not accum.has_undrained()
    assert not accum.has_incomplete()


def test_full_when_the_records_do_not_fill_the_batch():
    """RecordAccumulatorTest.testFull as Kafka sizes it (batchSize 1025: the records never fill
    the batch exactly): no partition is ready while the batch takes records; the record that
    does not fit opens a second batch, and the first is then full (``dequeSize > 1``) and
    ready at once, linger.ms or not. (tests/test_record_accumulator.py::test_full fills the
    batch exactly.)"""
    accum = RecordAccumulator(10 * RECORD_SIZE + 25, linger_ms=10)
    for i in range(10):
        accum.append(TP1, i, i + 1, 0)
        assert len(accum.get_deque(TP1)) == 1
        assert not accum.ready(LEADERS, 0).ready_nodes, "No partitions should be ready."
    accum.append(TP1, 10, 11, 0)
    assert len(accum.get_deque(TP1)) == 2
    assert list(accum.ready(LEADERS, 0).ready_nodes) == [NODE1]
    (batch,) = accum.drain(LEADERS, {NODE1: None}, 0)[NODE1].values()
    assert batch.record_ids == list(range(10))


def test_a_full_batch_is_sent_without_waiting_for_linger_ms():
    """(new) KafkaProducer.doSend wakes the sender when a batch is full or a new one is made:
    a full batch goes at once, the batch behind it waits for its linger.ms."""
    c = _cluster()
    p = c.producer("p", linger_ms=10_000, batch_size=2 * RECORD_SIZE + 50)
    c.run(50)
    results = p.send_many("topic", ["a", "b", "c"])
    c.run(100)
    assert [r.status for r in results] == [ACKED, ACKED, PENDING]
    c.run(10_000)
    assert results[2].status == ACKED
