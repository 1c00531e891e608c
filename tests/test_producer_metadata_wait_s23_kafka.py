"""The producer's wait for metadata (KafkaProducer.waitOnMetadata / doSend), from KafkaProducerTest
(clients/src/test/java/org/apache/kafka/clients/producer/) at 3.9.0 and 4.3.0 and KafkaProducer
itself at 0.8.2.2, 0.10.2.2, 2.0.1, 2.1.0, 2.8.2, 3.9.0 and 4.0.

How they are adapted: ``new KafkaProducer`` with a mocked ProducerMetadata is ``Cluster.producer``
on a real cluster, whose brokers answer the producer's Metadata requests; ``future.get()`` is the
``ProduceResult`` (``status``, ``error``: the exception's name or error code, ``message``: the
exception's message). Kafka's caller blocks in ``send``; kafkasim's ``send`` returns a pending
result at once and the record waits (kafkasim.runtime.clients.metadata_wait). The 0.9 and 2.x
cases read KafkaProducer's source at those tags (their tests mock the metadata). Tests named after
no Kafka test are marked "(new)".

Left out: partitionsFor (not modelled: testTopicRefreshInMetadata, testTopicNotExistingInMetadata,
testTopicExpiryInMetadata), adding partitions to a topic (kafkasim has no CreatePartitions: the
out-of-range case waits for a topic created with more partitions instead), callbacks and
interceptors (kafkasim's result is the only report). The brokers here run with
auto.create.topics.enable false (Kafka's tests mock the metadata); automatic creation is in
tests/test_auto_topic_creation_s23_kafka.py.
"""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core.errors import ApiException
from kafkasim.core.messages import MetadataRequest
from kafkasim.runtime import kafka_apis
from kafkasim.runtime.clients.produce_result import ACKED, FAILED, PENDING
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.config import ConfigError
from kafkasim.settings.javautil import murmur2, to_positive


def _cluster(version: str = "3.9", auto_create: bool = False) -> Cluster:
    """Three brokers and "topic"; auto.create.topics.enable off unless ``auto_create`` (Kafka's
    KafkaProducerTest mocks the metadata: no broker creates a topic there)."""
    c = Cluster(3, seed=1, kafka_version=version, latency_ms=1, jitter_ms=0,
                config={"auto.create.topics.enable": auto_create})
    c.create_topic("topic", 1, 3)
    c.run(500)
    return c


@pytest.mark.parametrize("version,message", [
    ("3.9", "Topic topic not present in metadata after 60000 ms."),
    ("4.0", "Partition 2 of topic topic with partition count 1 is not present in metadata "
            "after 60000 ms."),
    ("4.3", "Partition 2 of topic topic with partition count 1 is not present in metadata "
            "after 60000 ms."),
])
def test_metadata_timeout_with_partition_out_of_range_message(version, message):
    """testMetadataTimeoutWithPartitionOutOfRange @4.3.0 with KafkaProducer.getErrorMessage
    (KAFKA-8862, 4.0): when Metadata.awaitUpdate times out and the topic is known, the
    TimeoutException names the partition and the count; at 3.9 that path names the topic only.
    kafkasim adds the partitions the topic has."""
    c = _cluster(version)
    p = c.producer("p", max_block_ms=60000)
    result = p.send("topic", "value", partition=2)
    c.run(60_001)
    assert result.status == FAILED and result.error == E.DELIVERY_TIMEOUT
    assert result.message == (f"{message} (Topic 'topic' has partitions 0..0; partition 2 does "
                              "not exist.)")


@pytest.mark.parametrize("idempotence", [True, False])
def test_metadata_with_partition_out_of_range(idempotence):
    """testMetadataWithPartitionOutOfRange @3.9.0: a send to partition 2 while the metadata has
    fewer partitions waits, asking for updates, and goes on as any send once an update has
    partition 2 (here the topic is created with three partitions while it waits)."""
    c = _cluster()
    p = c.producer("p", enable_idempotence=idempotence)
    result = p.send("later", "value", partition=2)
    c.run(300)
    assert result.status == PENDING and result.partition == 2
    c.create_topic("later", 3, 3, wait=False)
    c.run(3000)
    assert result.status == ACKED and result.topic == "later" and result.partition == 2
    assert result.offset == 0


def test_waiting_records_keep_their_results_and_order():
    """(new) send_many to a topic not created yet: once it exists the records go to one batch,
    in order; the results returned at the send are theirs (offsets 0, 1, 2), a record sent
    meanwhile to a known topic was not held up, and the send time stays the call's."""
    c = _cluster()
    p = c.producer("p")
    start = c.now
    waiting = p.send_many("later", ["a", "b", "c"], partition=0)
    other = p.send("topic", "other")
    c.run(200)
    assert other.status == ACKED and all(r.status == PENDING for r in waiting)
    c.create_topic("later", 1, 3, wait=False)
    c.run(3000)
    assert [r.status for r in waiting] == [ACKED] * 3
    assert [r.offset for r in waiting] == [0, 1, 2]
    assert all(r.sent_ms == start for r in waiting) and p.pending() == 0
    assert [r.record_id for r in p.acked()] == sorted(r.record_id for r in [*waiting, other])


def test_key_partitioned_once_the_count_is_known():
    """(new) KafkaProducer.doSend partitions the record after waitOnMetadata: a keyed record to
    a topic not created yet goes to murmur2(key) % the count the metadata brings."""
    c = _cluster()
    p = c.producer("p")
    result = p.send("later", "value", key="k1")
    c.create_topic("later", 3, 3, wait=False)
    c.run(3000)
    assert result.status == ACKED
    assert result.partition == to_positive(murmur2(b"k1")) % 3


@pytest.mark.parametrize("version,error", [
    ("2.0", E.DELIVERY_TIMEOUT),         # before KAFKA-5098 the metadata error is only logged
    ("2.7", E.DELIVERY_TIMEOUT),         # the broker answers UNKNOWN_TOPIC_OR_PARTITION
    ("2.8", E.INVALID_TOPIC_EXCEPTION),  # KAFKA-9751: the broker answers INVALID_TOPIC_EXCEPTION
    ("4.3", E.INVALID_TOPIC_EXCEPTION),
])
def test_send_to_invalid_topic_by_version(version, error):
    """testSendToInvalidTopic @4.3.0 (InvalidTopicException) and its history: the producer ends
    the wait on INVALID_TOPIC_EXCEPTION from 2.1 (KafkaProducer.waitOnMetadata @2.1.0,
    KAFKA-5098); a broker that does not create the topic answers it for an invalid name from
    2.8 (KafkaApis.getTopicMetadata @2.8.2, KAFKA-9751), UNKNOWN_TOPIC_OR_PARTITION before; so
    until then the send times out after max.block.ms."""
    c = _cluster(version)
    p = c.producer("p", max_block_ms=15000)
    result = p.send("topic abc", "HelloKafka")
    c.run(1000)
    if error == E.INVALID_TOPIC_EXCEPTION:
        assert result.status == FAILED and result.error == error
        assert result.message == "Invalid topics: [topic abc]"
        return
    assert result.status == PENDING
    c.run(14_001)
    assert result.status == FAILED and result.error == error


def test_timeout_message_before_2_1():
    """KafkaProducer.waitOnMetadata @2.0.1: the TimeoutException said "Failed to update
    metadata after %d ms." (KAFKA-6833, 2.1, named the topic)."""
    c = _cluster("2.0")
    p = c.producer("p", max_block_ms=5000)
    result = p.send("missing", "value")
    c.run(5001)
    assert result.status == FAILED and result.error == E.DELIVERY_TIMEOUT
    assert result.message.startswith("Failed to update metadata after 5000 ms.")


def test_partition_out_of_range_before_2_1_is_refused_at_once():
    """KafkaProducer.waitOnMetadata @2.0.1: a partition past the count of a topic the metadata
    knows is a KafkaException thrown by send ("Invalid partition given with record"); here the
    ClusterError kafkasim raises for the caller's mistake. (From 2.1 it waits: KAFKA-6833.)"""
    c = _cluster("2.0")
    with pytest.raises(ValueError, match="partition 2 does not exist"):
        c.producer("p").send("topic", "value", partition=2)


def test_partition_out_of_range_before_2_1_after_waiting_for_the_topic():
    """(new) KafkaProducer.waitOnMetadata @2.0.1: the wait is for the topic only; once the
    metadata has it, a partition past its count fails the send with a KafkaException."""
    c = _cluster("2.0")
    p = c.producer("p")
    result = p.send("later", "value", partition=2)
    c.create_topic("later", 1, 3, wait=False)
    c.run(3000)
    assert result.status == FAILED and result.error == E.PRODUCER_CLOSED_FORCEFULLY
    assert result.message == ("Invalid partition given with record: 2 is not in the range "
                              "[0...1).")


def test_max_block_ms_and_metadata_fetch_timeout_ms_by_version():
    """KafkaProducer's constructor: 0.8.2 waits metadata.fetch.timeout.ms (no max.block.ms);
    0.9 to 0.10.2 wait max.block.ms unless the deprecated metadata.fetch.timeout.ms is set
    (KafkaProducer @0.10.2.2); 0.11 removed it."""
    assert _cluster("0.8.2").producer("p").max_block_ms == 60000
    assert _cluster("0.8.2").producer("p", metadata_fetch_timeout_ms=500).max_block_ms == 500
    with pytest.raises(ConfigError, match="max.block.ms"):
        _cluster("0.8.2").producer("p", max_block_ms=500)
    c = _cluster("0.10.2")
    assert c.producer("p1", max_block_ms=700).max_block_ms == 700
    assert c.producer("p2", max_block_ms=700,
                      metadata_fetch_timeout_ms=300).max_block_ms == 300
    with pytest.raises(ConfigError, match="metadata.fetch.timeout.ms"):
        _cluster("0.11.0").producer("p", metadata_fetch_timeout_ms=300)
    assert _cluster("4.3").producer("p").max_block_ms == 60000


def test_metadata_fetch_timeout_at_0_8_2():
    """KafkaProducer.send @0.8.2.2: waitOnMetadata(topic, metadataFetchTimeoutMs), then
    TimeoutException "Failed to update metadata after %d ms." in the returned future."""
    c = _cluster("0.8.2")
    p = c.producer("p", metadata_fetch_timeout_ms=2000)
    result = p.send("missing", "value")
    c.run(1999)
    assert result.status == PENDING
    c.run(2)
    assert result.status == FAILED and result.error == E.DELIVERY_TIMEOUT
    assert result.message.startswith("Failed to update metadata after 2000 ms.")


def test_close_when_waiting_for_metadata_update():
    """testCloseWhenWaitingForMetadataUpdate @3.9.0: with max.block.ms Long.MAX_VALUE a send to
    a topic the metadata lacks waits until close(0); then it fails with a KafkaException
    (doSend: "Producer closed while send in progress")."""
    c = _cluster()
    p = c.producer("p", max_block_ms=2**63 - 1)
    result = p.send("test", "value", key="key")
    c.run(10_000)
    assert result.status == PENDING
    p.close(0)
    assert result.status == FAILED and result.error == E.PRODUCER_CLOSED_FORCEFULLY
    assert result.message == "Producer closed while send in progress"
    assert p.pending() == 0


def test_flush_does_not_wait_for_a_send_waiting_on_metadata():
    """(new) KafkaProducer.flush waits for the accumulator's batches (awaitFlushCompletion); a
    send still in waitOnMetadata has none, so flush returns without it."""
    c = _cluster()
    p = c.producer("p")
    waiting = p.send("missing", "value")
    sent = p.send("topic", "value")
    assert p.flush(5000)
    assert sent.status == ACKED and waiting.status == PENDING


def test_metadata_requests_back_off_while_waiting():
    """(new) each answer without the topic asks for another update (waitOnMetadata's loop),
    sent within the refresh backoff (Metadata.timeToAllowUpdate): from 3.7 (KIP-580) the
    equivalent answers grow it towards retry.backoff.max.ms (1 s), so 10 s bring about a dozen
    requests, not one per round trip."""
    c = _cluster()
    p = c.producer("p")
    p.send("missing", "value")
    c.run(10_000)
    requests = [r[0] for r in c.trace.events("send") if r[2] == "p"
                and r[5][0] == "MetadataRequest"]
    assert 8 <= len(requests) <= 20
    gaps = [b - a for a, b in zip(requests, requests[1:], strict=False)]
    assert max(gaps) <= 1300 and gaps[-1] >= 700


# ------------------------------------------------------------------- partitionsFor (3.9.0)


def test_partitions_for_with_null_topic():
    """testPartitionsForWithNullTopic @3.9.0: partitionsFor(null) is refused (a
    NullPointerException; here ClusterError, a ValueError)."""
    with pytest.raises(ValueError, match="a topic name is a string"):
        _cluster().producer("p").partitions_for(None)


def test_topic_not_existing_in_metadata():
    """testTopicNotExistingInMetadata @3.9.0: partitionsFor a topic every answer calls
    UNKNOWN_TOPIC_OR_PARTITION throws a TimeoutException after max.block.ms (30 s), caused by
    UnknownTopicOrPartitionException (Metadata.getError)."""
    c = _cluster()
    p = c.producer("p", max_block_ms=30000)
    start = c.now
    with pytest.raises(ApiException) as info:
        p.partitions_for("topic2")
    assert info.value.error == E.DELIVERY_TIMEOUT
    assert str(info.value).startswith("TimeoutException: Topic topic2 not present in metadata "
                                      "after 30000 ms.")
    assert isinstance(info.value.__cause__, ApiException)
    assert info.value.__cause__.error == E.UNKNOWN_TOPIC_OR_PARTITION
    assert c.now == start + 30000


def test_topic_refresh_in_metadata():
    """testTopicRefreshInMetadata @3.9.0: while partitionsFor waits the producer keeps asking
    for the topic (each answer UNKNOWN_TOPIC_OR_PARTITION), and the wait ends in a
    TimeoutException caused by UnknownTopicOrPartitionException."""
    c = _cluster()
    p = c.producer("p", enable_idempotence=False, max_block_ms=600_000)
    with pytest.raises(ApiException) as info:
        p.partitions_for("missing")
    assert info.value.error == E.DELIVERY_TIMEOUT
    assert info.value.__cause__.error == E.UNKNOWN_TOPIC_OR_PARTITION
    requests = sum(1 for r in c.trace.events("send") if r[2] == "p"
                   and r[5][0] == "MetadataRequest")
    assert requests > 500   # about one a second (retry.backoff.max.ms) for 600 s


def test_partitions_for_known_topic_asks_no_more_metadata():
    """testMetadataFetch @3.9.0, its last step, and testTopicExpiryInMetadata's first:
    partitionsFor a topic the metadata has returns its partitions without another request."""
    c = _cluster()
    c.create_topic("three", 3, 3)
    p = c.producer("p")
    assert [i.partition for i in p.partitions_for("three")] == [0, 1, 2]
    asked = sum(1 for r in c.trace.events("send") if r[2] == "p"
                and r[5][0] == "MetadataRequest")
    infos = p.partitions_for("three")
    assert [i.leader for i in infos] == [c.leader("three", i) for i in range(3)]
    assert sum(1 for r in c.trace.events("send") if r[2] == "p"
               and r[5][0] == "MetadataRequest") == asked


def test_partitions_for_an_invalid_topic():
    """(new) partitionsFor goes through waitOnMetadata too: from 2.8 the broker calls "a b"
    invalid and InvalidTopicException is thrown at once."""
    c = _cluster("3.9")
    with pytest.raises(ApiException) as info:
        c.producer("p").partitions_for("a b")
    assert info.value.error == E.INVALID_TOPIC_EXCEPTION and c.now < 1000


# ------------------------------------------- the broker's answer (KafkaApisTest @3.9.0)


def _metadata_answer(version: str, topics: tuple[str, ...]) -> list[tuple]:
    """KafkaApis.handleTopicMetadataRequest on broker 1 of a cluster with "topic" (one
    partition): the rows (topic, partition, error) it answers ``topics`` with."""
    c = _cluster(version)
    broker = c.brokers[sorted(c.brokers)[0]]
    sent: list = []
    broker.send = lambda dst, msg: sent.append(msg)
    kafka_apis.handle_topic_metadata_request(broker, "client", MetadataRequest(7, topics))
    [answer] = sent
    assert answer.correlation_id == 7
    return [row[:3] for row in answer.partitions]


def test_metadata_auto_topic_creation_disabled_for_non_internal_topic():
    """testMetadataAutoTopicCreationDisabledForNonInternalTopic @3.9.0: a topic the broker
    does not know and does not create is answered UNKNOWN_TOPIC_OR_PARTITION, no partitions
    (these brokers run with auto.create.topics.enable false, as the Kafka test)."""
    assert _metadata_answer("3.9", ("missing",)) == [("missing", -1,
                                                     E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert _metadata_answer("3.9", ("topic", "missing")) == [
        ("topic", 0, E.NONE), ("missing", -1, E.UNKNOWN_TOPIC_OR_PARTITION)]


def test_get_all_topic_metadata_should_not_create_topic_or_return_unknown_topic_partition():
    """testGetAllTopicMetadataShouldNotCreateTopicOrReturnUnknownTopicPartition @3.9.0: a
    request for every topic is answered with the topics the cache has, no error rows."""
    assert _metadata_answer("3.9", ()) == [("topic", 0, E.NONE)]


@pytest.mark.parametrize("version,error", [("2.7", E.UNKNOWN_TOPIC_OR_PARTITION),
                                           ("2.8", E.INVALID_TOPIC_EXCEPTION),
                                           ("4.3", E.INVALID_TOPIC_EXCEPTION)])
def test_metadata_for_an_invalid_topic_name(version, error):
    """KafkaApis.getTopicMetadata @2.8.2 / @3.9.0 (KAFKA-9751): a topic it does not create is
    INVALID_TOPIC_EXCEPTION when Topic.validate refuses its name; @2.7.0 every unknown topic
    was UNKNOWN_TOPIC_OR_PARTITION."""
    assert _metadata_answer(version, ("topic abc",)) == [("topic abc", -1, error)]


def test_send_to_a_missing_topic_auto_creates_it_by_default():
    """KafkaApis.getTopicMetadata @3.9.0 with the broker's default auto.create.topics.enable:
    the producer's Metadata request (allowAutoTopicCreation) creates the topic."""
    c = _cluster("3.9", auto_create=True)
    result = c.producer("p").send("auto", "value")
    c.run(5000)
    assert result.status == ACKED and result.partition == 0


@pytest.mark.parametrize("version,at_once", [("2.0", False), ("2.8", True), ("3.9", True)])
def test_send_to_a_topic_the_metadata_calls_invalid_fails_at_once(version, at_once):
    """KafkaProducer.waitOnMetadata @2.1.0 / @3.9.0, its first check: a topic the cached
    metadata already calls invalid (Cluster.invalidTopics) fails the send at once with
    InvalidTopicException(topic), no request; partitionsFor throws it. (2.0: it waits.)"""
    c = _cluster(version)
    p = c.producer("p", max_block_ms=5000)
    p.send("a b", "first")
    c.run(1000)
    asked = sum(1 for r in c.trace.events("send") if r[2] == "p"
                and r[5][0] == "MetadataRequest")
    second = p.send("a b", "second")
    if not at_once:
        assert second.status == PENDING
        return
    assert second.status == FAILED and second.error == E.INVALID_TOPIC_EXCEPTION
    assert second.message == "a b" and second.done_ms == c.now
    with pytest.raises(ApiException, match="INVALID_TOPIC_EXCEPTION: a b"):
        p.partitions_for("a b")
    assert sum(1 for r in c.trace.events("send") if r[2] == "p"
               and r[5][0] == "MetadataRequest") == asked


def test_max_block_ms_zero_fails_the_send_at_once():
    """(new) KafkaProducer.waitOnMetadata @3.9.0 with max.block.ms 0: Metadata.awaitUpdate(
    version, 0) times out at once, so the future send returns has failed already with
    "Topic X not present in metadata after 0 ms."; a send to a known topic is not affected."""
    c = _cluster()
    p = c.producer("p", max_block_ms=0)
    c.run(100)
    result = p.send("missing", "value")
    assert result.status == FAILED and result.error == E.DELIVERY_TIMEOUT
    assert result.message.startswith("Topic missing not present in metadata after 0 ms.")
    known = p.send("topic", "value")
    c.run(100)
    assert known.status == ACKED
