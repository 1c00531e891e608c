"""The consumer's view of the cluster metadata: Kafka's ConsumerMetadata (2.3+; before, the
plain Metadata the consumer built with allowAutoTopicCreation true).

Its Metadata requests name the topics of the subscription (SubscriptionState.metadataTopics: the
topics subscribed to, or those of the partitions assigned by the user) and say whether the broker
may create a named topic it lacks (allowAutoTopicCreation). That is the consumer's
``allow.auto.create.topics`` (KIP-361, 2.3+, default true); older consumers always allowed it.
The broker creates the topic only when its own ``auto.create.topics.enable`` allows it too
(kafkasim.runtime.auto_topic_creation).

A consumer subscribed to a topic that does not exist yet has no partitions to fetch:
``ensure_subscribed_assignment`` asks for metadata (retry.backoff.ms apart) until the topic shows
partitions, then gives this consumer all of them. Kafka's group coordinator does that assignment
through a rebalance; kafkasim models no group protocol, so the consumer is its group's only
member.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkasim.core.messages import MetadataRequest
from kafkasim.runtime.clients.client_metadata import STALE, update_latest_metadata


@dataclass(slots=True, frozen=True)
class MetadataRequestBuilder:
    """MetadataRequest.Builder: the topics named (none: every topic) and allowAutoTopicCreation."""

    topics: tuple[str, ...]
    allow_auto_topic_creation: bool

    def build(self, correlation_id: int) -> MetadataRequest:
        return MetadataRequest(correlation_id, self.topics, self.allow_auto_topic_creation)


class ConsumerMetadata:
    """ConsumerMetadata: what the consumer's Metadata requests ask for, and when its metadata
    expires (``metadata.max.age.ms`` after the last answer, Metadata.timeToNextUpdate)."""

    def __init__(self, subscription, allow_auto_topic_creation: bool = True,
                 metadata_expire_ms: int = 300000) -> None:
        self.subscription = subscription   # the consumer's SubscriptionState
        self._allow_auto_topic_creation = bool(allow_auto_topic_creation)
        self.metadata_expire_ms = metadata_expire_ms
        self.last_successful_refresh_ms: int | None = None   # None: no answer yet
        self.last_seen_epochs: dict[tuple[str, int], int] = {}   # Metadata.lastSeenLeaderEpochs

    def __repr__(self) -> str:
        return (f"ConsumerMetadata(topics={self.subscription.metadata_topics()}, "
                f"allow_auto_topic_creation={self._allow_auto_topic_creation})")

    def allow_auto_topic_creation(self) -> bool:
        """ConsumerMetadata.allowAutoTopicCreation: the consumer's allow.auto.create.topics."""
        return self._allow_auto_topic_creation

    def new_metadata_request_builder(self) -> MetadataRequestBuilder:
        """ConsumerMetadata.newMetadataRequestBuilder: the subscription's topics, with the
        consumer's allowAutoTopicCreation (pattern subscriptions, which ask for every topic,
        are not modelled)."""
        return MetadataRequestBuilder(tuple(self.subscription.metadata_topics()),
                                      self._allow_auto_topic_creation)

    def update(self, now_ms: int, partitions=(), keep_newer_epoch: bool = False
               ) -> frozenset[tuple[str, int]]:
        """Metadata.update: an answer came at ``now_ms`` with these MetadataResponse rows.
        Returns the partitions whose row the consumer must not take: with ``keep_newer_epoch``
        (KAFKA-7738, 2.2+; Kafka's Metadata is the producer's and the consumer's) a row whose
        leader epoch is older than the last seen one (client_metadata)."""
        self.last_successful_refresh_ms = now_ms
        stale = []
        for topic, partition, _err, _leader, epoch, _replicas, _isr in partitions:
            if partition < 0:   # a topic-level error row
                continue
            tp = (topic, partition)
            if update_latest_metadata(self.last_seen_epochs, tp, epoch,
                                      keep_newer_epoch) == STALE:
                stale.append(tp)
        return frozenset(stale)

    def last_seen_leader_epoch(self, tp: tuple[str, int]) -> int | None:
        """Metadata.lastSeenLeaderEpoch: the newest leader epoch seen for ``tp`` (None: no
        epoch known)."""
        return self.last_seen_epochs.get(tp)

    def time_to_next_update(self, now_ms: int) -> int | None:
        """Metadata.timeToNextUpdate for the expiry alone: ms until the metadata is
        ``metadata.max.age.ms`` old (0: expired; None: no answer yet, nothing to expire)."""
        if self.last_successful_refresh_ms is None:
            return None
        return max(0, self.last_successful_refresh_ms + self.metadata_expire_ms - now_ms)


def unassigned_topics(subscriptions) -> list[str]:
    """The topics subscribed to that have no partition assigned (none after ``assign``: the
    subscription is then the assignment's topics)."""
    assigned = {t for t, _p in subscriptions.assigned_partitions_list()}
    return [t for t in subscriptions.subscription if t not in assigned]


def ensure_subscribed_assignment(consumer, timeout_ms: int) -> None:
    """The group's assignment of a subscribed topic that had no partitions (ConsumerCoordinator
    .poll, kafkasim's consumer being its group's only member): Metadata requests for the
    subscription, ``retry.backoff.ms`` apart, until one shows the topic's partitions (the
    broker may create it meanwhile) or ``timeout_ms`` passes; each topic found adds all its
    partitions to the assignment. Changes nothing while every subscribed topic is assigned."""
    subs = consumer.subscriptions
    pending = unassigned_topics(subs)
    if not pending:
        return
    cluster = consumer.cluster
    deadline = cluster.now + timeout_ms
    backoff = max(1, consumer.config.get("retry.backoff.ms", 100))
    while True:
        consumer._refresh_metadata(max(0, deadline - cluster.now))
        found = sorted((tp for tp in consumer.leaders
                        if tp[0] in pending and tp[0] in cluster.topics.configs),
                       key=lambda tp: (pending.index(tp[0]), tp[1]))
        if found or subs.assigned_partitions_list() or cluster.now >= deadline:
            break
        cluster.run(min(backoff, deadline - cluster.now))
    if found:
        topics = subs.subscription
        consumer.assign(subs.assigned_partitions_list() + found)
        subs.subscribe(topics)
