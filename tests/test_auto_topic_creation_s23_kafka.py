"""Automatic topic creation on a Metadata request (auto.create.topics.enable), broker side.

Ported from KafkaApisTest (testMetadataAutoTopicCreation*, core/src/test/scala/unit/kafka/
server/) and AutoTopicCreationManagerTest at 3.9.0 and 4.3.0, and from KafkaApis.getTopicMetadata
/ createTopic at 0.8.2.2, 0.10.0.1, 0.10.1.0, 0.11.0.2, 2.3.0 and 2.8.0 (their tests mock
AdminUtils). How they are adapted: Kafka's tests call ``handleTopicMetadataRequest`` with mocks
for the admin manager and the controller channel; here the request goes to broker 1 of a real
cluster (``_ask``) and what the mock would have verified is read from the cluster (the topic
exists, with which partitions and replicas). ``enableForwarding = true`` is KRaft mode (the
broker sends CreateTopics to the controller), forwarding disabled is ZooKeeper mode (the broker
writes the topic itself). Internal topics (__consumer_offsets, __transaction_state) are not
modelled as topics: their cases are left out. Tests named after no Kafka test are "(new)".
"""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from kafkasim.core import errors as E
from kafkasim.core.messages import MetadataRequest
from kafkasim.runtime import kafka_apis
from kafkasim.runtime.clients.produce_result import ACKED, FAILED
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.config import ConfigError


@dataclass(slots=True)
class _NoAutoCreate(MetadataRequest):
    """MetadataRequest.Builder(topics, allowAutoTopicCreation = false) (v4+): kafkasim's
    MetadataRequest has no such field (its clients always allow it or ask for every topic)."""

    allow_auto_topic_creation: bool = False


def _cluster(version: str = "3.9", mode: str | None = None, brokers: int = 3,
             **config) -> Cluster:
    conf = {k.replace("_", "."): v for k, v in config.items()}
    c = Cluster(brokers, seed=1, kafka_version=version, metadata_mode=mode, latency_ms=1,
                jitter_ms=0, config=conf or None)
    c.create_topic("some-topic", 1, min(3, brokers))
    c.run(500)
    return c


def _ask(c: Cluster, topics: tuple[str, ...], allow: bool = True) -> list[tuple]:
    """KafkaApis.handleTopicMetadataRequest on broker 1: the rows (topic, partition, error)."""
    broker = c.brokers[1]
    sent: list = []
    real_send = broker.send
    broker.send = lambda dst, msg: sent.append(msg)
    request = MetadataRequest(3, topics) if allow else _NoAutoCreate(3, topics)
    try:
        kafka_apis.handle_topic_metadata_request(broker, "client", request)
    finally:
        broker.send = real_send
    [answer] = sent
    return [row[:3] for row in answer.partitions]



@pytest.mark.parametrize("version", ["3.9", "4.3"])
def test_metadata_auto_topic_creation_for_non_internal_topic(version):
    """testMetadataAutoTopicCreationForNonInternalTopic @3.9.0 / @4.3.0: with forwarding (KRaft)
    a topic the cache lacks is answered UNKNOWN_TOPIC_OR_PARTITION, no partitions, and one
    CreateTopics goes to the controller with num.partitions and default.replication.factor
    (3 and 3 here); once it reaches the controller the topic exists with them."""
    c = _cluster(version, "kraft", num_partitions=3, default_replication_factor=3)
    assert _ask(c, ("topic",)) == [("topic", -1, E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert "topic" not in c.topics.configs   # the request is on its way
    c.run(1000)
    assert c.topics.partition_count("topic") == 3
    assert sorted(_ask(c, ("topic",))) == [("topic", p, E.NONE) for p in range(3)]
    assert all(len(c.inspect.partition_states("topic")[("topic", p)][2]) == 3
               for p in range(3))


@pytest.mark.parametrize("mode", ["kraft", "zk"])
def test_metadata_auto_topic_creation_disabled_for_non_internal_topic(mode):
    """testMetadataAutoTopicCreationDisabledForNonInternalTopic @3.9.0 (auto.create.topics
    .enable false): UNKNOWN_TOPIC_OR_PARTITION and nothing is created, in either mode."""
    c = _cluster("3.9", mode if mode == "kraft" else None, auto_create_topics_enable=False)
    assert _ask(c, ("topic",)) == [("topic", -1, E.UNKNOWN_TOPIC_OR_PARTITION)]
    c.run(1000)
    assert "topic" not in c.topics.configs


def test_create_non_internal_topic_forwards_once():
    """AutoTopicCreationManagerTest.testCreateNonInternalTopic @3.9.0: asked twice for the same
    topic before the controller answers, the broker answers UNKNOWN_TOPIC_OR_PARTITION both
    times and forwards one CreateTopics (inflightTopics); once it completed the topic is no
    longer in flight."""
    c = _cluster("3.9", "kraft")
    broker = c.brokers[1]
    assert _ask(c, ("topic",)) == [("topic", -1, E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert _ask(c, ("topic",)) == [("topic", -1, E.UNKNOWN_TOPIC_OR_PARTITION)]
    assert broker.auto_topic_creation_inflight == ["topic"]
    c.run(1000)
    assert broker.auto_topic_creation_inflight == []
    assert c.topics.partition_count("topic") == 1


@pytest.mark.parametrize("version", ["0.11.0", "2.3", "2.8", "3.9"])
def test_create_topics_with_forwarding_disabled(version):
    """AutoTopicCreationManagerTest.testCreateTopicsWithForwardingDisabled @3.9.0 with
    createTopicsInZk (ZkAdminManager.createTopics, timeout 0, REQUEST_TIMED_OUT swapped for
    LEADER_NOT_AVAILABLE: testRequestTimeoutErrorSwapForNonInternalTopics), and KafkaApis
    .createTopic @0.11.0.2 / @2.3.0 (AdminUtils / AdminZkClient.createTopic): the broker writes
    the topic to ZooKeeper itself and answers LEADER_NOT_AVAILABLE; the controller then
    elects its leaders."""
    c = _cluster(version, num_partitions=2)
    assert _ask(c, ("some-topic", "topic")) == [("some-topic", 0, E.NONE),
                                                ("topic", -1, E.LEADER_NOT_AVAILABLE)]
    assert c.topics.partition_count("topic") == 2   # written at once
    c.run(1000)
    assert [row[2] for row in _ask(c, ("topic",))] == [E.NONE, E.NONE]


def test_topic_exists_error_swap_for_non_internal_topics():
    """AutoTopicCreationManagerTest.testTopicExistsErrorSwapForNonInternalTopics @3.9.0: a topic
    ZooKeeper has but the broker's cache not yet (TOPIC_ALREADY_EXISTS from the admin manager)
    is answered LEADER_NOT_AVAILABLE, and nothing else is written."""
    c = _cluster("3.9")
    c.create_topic("topic", 2, 3, wait=False)
    assert _ask(c, ("topic",)) == [("topic", -1, E.LEADER_NOT_AVAILABLE)]
    assert c.topics.partition_count("topic") == 2


@pytest.mark.parametrize("version", ["0.10.1", "2.3", "3.9"])
def test_invalid_replication_factor_for_non_internal_topics(version):
    """AutoTopicCreationManagerTest.testInvalidReplicationFactorForNonInternalTopics @3.9.0 and
    KafkaApis.createTopic @0.10.1.0 (KAFKA-4032: Errors.forException): default.replication
    .factor above the live brokers is INVALID_REPLICATION_FACTOR for that topic only; nothing
    is created and the other topics are answered as usual."""
    c = _cluster(version, default_replication_factor=4)
    assert _ask(c, ("some-topic", "topic")) == [("some-topic", 0, E.NONE),
                                                ("topic", -1, E.INVALID_REPLICATION_FACTOR)]
    assert "topic" not in c.topics.configs


@pytest.mark.parametrize("version", ["0.8.2", "0.10.0"])
def test_creation_error_fails_the_request_before_0_10_1(version):
    """KafkaApis.getTopicMetadata @0.8.2.2 / @0.10.0.1: AdminUtils.createTopic's exception left
    the handler (KAFKA-4032 caught it in 0.10.1), so the whole request failed: every topic it
    named got the exception's error, AdminOperationException ("replication factor: 4 larger
    than available brokers: 3") being UNKNOWN_SERVER_ERROR."""
    c = _cluster(version, default_replication_factor=4)
    assert _ask(c, ("some-topic", "topic")) == [("some-topic", -1, E.UNKNOWN_SERVER_ERROR),
                                                ("topic", -1, E.UNKNOWN_SERVER_ERROR)]
    assert "topic" not in c.topics.configs


@pytest.mark.parametrize("version,mode,rows", [
    ("0.10.0", None, [("some-topic", -1, E.INVALID_TOPIC_EXCEPTION),
                      ("a b", -1, E.INVALID_TOPIC_EXCEPTION)]),
    ("2.7", None, [("some-topic", 0, E.NONE), ("a b", -1, E.INVALID_TOPIC_EXCEPTION)]),
    ("3.9", None, [("some-topic", 0, E.NONE), ("a b", -1, E.INVALID_TOPIC_EXCEPTION)]),
    ("3.9", "kraft", [("some-topic", 0, E.NONE), ("a b", -1, E.INVALID_TOPIC_EXCEPTION)]),
])
def test_invalid_topic_name_is_never_created(version, mode, rows):
    """(new) KafkaApis.createTopic @0.10.1.0 / @2.3.0 (Topic.validate in AdminUtils throws
    InvalidTopicException: INVALID_TOPIC_EXCEPTION), AutoTopicCreationManager
    .filterCreatableTopics @2.8.0 / @3.9.0 (refused before any request), and @0.10.0.1, where
    the exception failed the whole request: an invalid name is never created."""
    c = _cluster(version, mode)
    assert _ask(c, ("some-topic", "a b")) == rows
    c.run(500)
    assert "a b" not in c.topics.configs


@pytest.mark.parametrize("mode", [None, "kraft"])
def test_get_all_topic_metadata_should_not_create_topic_or_return_unknown_topic_partition(mode):
    """testGetAllTopicMetadataShouldNotCreateTopicOrReturnUnknownTopicPartition @3.9.0: a
    request for every topic (isAllTopics) never creates one, auto creation on."""
    c = _cluster("3.9", mode)
    assert _ask(c, ()) == [("some-topic", 0, E.NONE)]
    c.run(500)
    assert c.topics.names() == ["some-topic"]


@pytest.mark.parametrize("version,mode", [("0.8.2", None), ("0.11.0", None), ("2.3", None),
                                          ("3.9", None), ("3.9", "kraft"), ("4.3", None)])
def test_send_to_a_missing_topic_creates_it(version, mode):
    """(new) KafkaProducer's Metadata request allows auto creation (MetadataRequest v4+
    allowAutoTopicCreation true; before v4 every request did): with the broker's default
    auto.create.topics.enable the first send to a missing topic creates it (num.partitions 1,
    default.replication.factor 1) and is acknowledged at offset 0."""
    c = _cluster(version, mode)
    result = c.producer("p").send("auto", "value")
    c.run(5000)
    assert result.status == ACKED and (result.partition, result.offset) == (0, 0)
    assert c.topics.partition_count("auto") == 1
    [(leader, _epoch, isr, _v)] = c.inspect.partition_states("auto").values()
    assert leader in c.brokers and list(isr) == [leader]


def test_send_to_a_missing_topic_times_out_when_auto_creation_is_off():
    """(new) auto.create.topics.enable false: the send waits max.block.ms and fails."""
    c = _cluster("3.9", auto_create_topics_enable=False)
    result = c.producer("p", max_block_ms=3000).send("auto", "value")
    c.run(3001)
    assert result.status == FAILED and result.error == E.DELIVERY_TIMEOUT
    assert "auto" not in c.topics.configs


@pytest.mark.parametrize("mode", [None, "kraft"])
def test_metadata_request_not_allowing_auto_creation(mode):
    """testMetadataAutoTopicCreation's request side @3.9.0 (MetadataRequest.Builder(topics,
    false), KafkaApis.handleTopicMetadataRequest: allowAutoCreation needs the request's
    allowAutoTopicCreation too): with the broker's auto creation on, such a request creates
    nothing and is answered UNKNOWN_TOPIC_OR_PARTITION."""
    c = _cluster("3.9", mode)
    assert _ask(c, ("topic",), allow=False) == [("topic", -1, E.UNKNOWN_TOPIC_OR_PARTITION)]
    c.run(500)
    assert "topic" not in c.topics.configs


def test_consumer_allow_auto_create_topics_since_2_3():
    """ConsumerConfig @2.3.0 (KIP-361): allow.auto.create.topics, default true, is new in 2.3
    (the consumer's Metadata requests before always allowed creation)."""
    c = _cluster("2.3")
    assert c.consumer("g").config["allow.auto.create.topics"] is True
    assert c.consumer("g2", allow_auto_create_topics=False).config[
        "allow.auto.create.topics"] is False
    with pytest.raises(ConfigError, match="added in 2.3"):
        _cluster("2.2").consumer("g", allow_auto_create_topics=False)


def test_create_non_internal_topic_sends_again_once_completed(monkeypatch):
    """AutoTopicCreationManagerTest.testCreateNonInternalTopic @4.3.0: the CreateTopics carries
    the topic with num.partitions 1 and replication factor 1; once it completed (the in-flight
    entry cleared), a second Metadata request for a topic the broker's cache still lacks sends
    another one; both are answered UNKNOWN_TOPIC_OR_PARTITION."""
    from kafkasim.runtime import auto_topic_creation as atc
    sent: list = []
    real = atc._controller_create_topics

    def counting(broker_id, topics, cluster):
        sent.append(topics)
        real(broker_id, topics, cluster)

    monkeypatch.setattr(atc, "_controller_create_topics", counting)
    c = _cluster("4.3")
    assert _ask(c, ("topic",)) == [("topic", -1, E.UNKNOWN_TOPIC_OR_PARTITION)]
    c.run_until(lambda _c: sent, timeout_ms=100)
    assert c.brokers[1].auto_topic_creation_inflight == []
    assert c.topics.partition_count("topic") == 1
    assert "topic" not in {t for t, _ in c.brokers[1].metadata.partitions}
    assert _ask(c, ("topic",)) == [("topic", -1, E.UNKNOWN_TOPIC_OR_PARTITION)]
    c.run(100)
    assert sent == [("topic",), ("topic",)]
