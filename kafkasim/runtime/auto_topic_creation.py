"""Automatic topic creation on a Metadata request (``auto.create.topics.enable``, default true).

Kafka's KafkaApis.getTopicMetadata creates a topic a Metadata request names but the broker's
metadata cache lacks, when the broker's ``auto.create.topics.enable`` is true, the request
allows it (MetadataRequest.allowAutoTopicCreation, v4+ / 0.11; the producer always does) and
the request is not for every topic. It is created with the broker's ``num.partitions`` and
``default.replication.factor``:

- ZooKeeper mode (0.8.2 to 3.9): the broker itself writes the topic to ZooKeeper
  (AdminUtils.createTopic; 2.8+ AutoTopicCreationManager.createTopicsInZk through
  ZkAdminManager.createTopics) and the controller then sees the new znode. The answer is
  LEADER_NOT_AVAILABLE (also when the topic exists already: TopicExistsException), or the
  creation's error (INVALID_REPLICATION_FACTOR with too few brokers, INVALID_TOPIC_EXCEPTION
  for an invalid name). Before 0.10.1 (KAFKA-4032) such an error was not caught: the request
  failed and every topic it named got the error (an AdminOperationException, UNKNOWN_SERVER_ERROR,
  for too few brokers).
- KRaft (AutoTopicCreationManager.sendCreateTopicRequest, 2.8+): the broker sends CreateTopics
  to the active controller and answers UNKNOWN_TOPIC_OR_PARTITION at once; a topic whose
  creation is in flight is answered so without sending again (inflightTopics); the controller's
  answer is only logged. An invalid name is INVALID_TOPIC_EXCEPTION and nothing is sent
  (filterCreatableTopics).

The topic is created as by an admin create (``kafkasim.runtime.topics.create_topic``): the
release's placement rules, the controller's leader election and trace rows. Internal topics
(__consumer_offsets, __transaction_state) are not modelled here.
"""

from __future__ import annotations

import re
from functools import partial

from kafkasim.control.placement import PlacementError
from kafkasim.core import errors as E
from kafkasim.runtime.topics import create_topic, invalid_topic_reason
from kafkasim.settings.exceptions import ClusterError

_TRAILING_ERROR = re.compile(r"\(([A-Z_]+)\)\.?$")


class CreationFailed(Exception):
    """Before 0.10.1 (KAFKA-4032): the automatic creation's exception, which failed the whole
    Metadata request; every topic it named is answered with ``error``."""

    def __init__(self, error: str) -> None:
        super().__init__(error)
        self.error = error


def auto_create_enabled(broker, msg) -> bool:
    """KafkaApis.handleTopicMetadataRequest's allowAutoCreation: the broker's
    auto.create.topics.enable, the request's allowAutoTopicCreation (true unless a client says
    otherwise) and a request naming its topics (not isAllTopics)."""
    return bool(msg.topics) and bool(getattr(msg, "allow_auto_topic_creation", True)) and \
        bool(broker.cluster.broker_config.get("auto.create.topics.enable", True))


def create_topics(broker, topics: list[str]) -> dict[str, str]:
    """AutoTopicCreationManager.createTopics (2.8+) / KafkaApis.createTopic (before): the
    error each missing topic is answered with, after creating it (ZooKeeper) or asking the
    KRaft controller to."""
    if broker.cluster.kraft is not None:
        return _send_create_topic_request(broker, topics)
    out: dict[str, str] = {}
    for topic in topics:
        error = create_topic_in_zk(broker.cluster, topic)
        if error != E.NONE and not broker.rules.clients.metadata_auto_create_errors_per_topic:
            # before KAFKA-4032 the exception left KafkaApis: the whole request failed
            raise CreationFailed(E.UNKNOWN_SERVER_ERROR
                                 if error == E.INVALID_REPLICATION_FACTOR else error)
        out[topic] = E.LEADER_NOT_AVAILABLE if error == E.NONE else error
    return out


def create_topic_in_zk(cluster, topic: str) -> str:
    """AdminZkClient.createTopic with num.partitions and default.replication.factor from the
    broker: NONE when the topic was written or existed already (TopicExistsException, "let it
    go, possibly another broker created this topic"), else the creation's error."""
    if topic in cluster.topics.configs:
        return E.NONE
    return _create(cluster, topic)


def _create(cluster, topic: str) -> str:
    conf = cluster.broker_config
    try:
        create_topic(cluster, topic, conf["num.partitions"], conf["default.replication.factor"],
                     None, None, False)
    except ClusterError as exc:
        return _error_of(exc)
    return E.NONE


def _error_of(exc: ClusterError) -> str:
    """The Kafka error a failed create names (PlacementError's, or the "(ERROR)" ending the
    message); UNKNOWN_SERVER_ERROR when it names none."""
    if isinstance(exc.__cause__, PlacementError):
        return exc.__cause__.error
    found = _TRAILING_ERROR.search(str(exc))
    return found.group(1) if found else E.UNKNOWN_SERVER_ERROR


def _send_create_topic_request(broker, topics: list[str]) -> dict[str, str]:
    """AutoTopicCreationManager.filterCreatableTopics and sendCreateTopicRequest: invalid names
    are INVALID_TOPIC_EXCEPTION, the rest UNKNOWN_TOPIC_OR_PARTITION; topics not in flight yet
    go in one CreateTopics to the controller (arriving after the network's latency)."""
    inflight = _inflight(broker)
    out: dict[str, str] = {}
    sending = []
    for topic in topics:
        if invalid_topic_reason(topic) is not None:
            out[topic] = E.INVALID_TOPIC_EXCEPTION
            continue
        out[topic] = E.UNKNOWN_TOPIC_OR_PARTITION
        if topic not in inflight:
            inflight.append(topic)
            sending.append(topic)
    if sending:
        cluster = broker.cluster
        delay = max(1, cluster.transport.network.latency_ms)
        cluster.engine.schedule(delay, "call", partial(_controller_create_topics, broker.id,
                                                       tuple(sending)))
    return out


def _inflight(broker) -> list[str]:
    """The broker's AutoTopicCreationManager.inflightTopics (in the order they were sent)."""
    inflight = getattr(broker, "auto_topic_creation_inflight", None)
    if inflight is None:
        inflight = []
        broker.auto_topic_creation_inflight = inflight
    return inflight


def _controller_create_topics(broker_id: int, topics: tuple[str, ...], cluster) -> None:
    """The CreateTopics the broker sent reaches the active controller
    (ReplicationControlManager.createTopics): each topic is created unless it exists or the
    controller refuses it; the broker clears the topics from its in-flight set
    (clearInflightRequests on completion) and only logs errors."""
    for topic in topics:
        if topic not in cluster.topics.configs:
            _create(cluster, topic)
    broker = cluster.brokers.get(broker_id)
    inflight = getattr(broker, "auto_topic_creation_inflight", None) if broker else None
    if inflight is not None:
        inflight[:] = [t for t in inflight if t not in topics]
