"""BrokersToIsrs / BrokersToElrs and TopicControlInfo: the KRaft controller's partition indexes.

Follows org.apache.kafka.controller.BrokersToIsrs, BrokersToElrs and
ReplicationControlManager.TopicControlInfo. Kafka keeps a per-broker index keyed by random topic
UUIDs; here the same questions are answered by walking the topics in creation order and the
partitions by id, so every answer has a stable order (see replication_control's docstring).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

from kafkasim.control.kraft.records import NO_LEADER, PartitionRegistration


class TopicControlInfo:
    """ReplicationControlManager.TopicControlInfo: a topic's name, id and partitions."""

    __slots__ = ("name", "id", "parts")

    def __init__(self, name: str, topic_id: str) -> None:
        self.name = name
        self.id = topic_id
        self.parts: dict[int, PartitionRegistration] = {}

    def num_partitions(self, epoch: int | None = None) -> int:
        """numPartitions(epoch): the topic's partition count (kafkasim keeps no timeline of
        earlier epochs: the latest count)."""
        return len(self.parts)


def has_preferred_leader(p: PartitionRegistration) -> bool:
    """PartitionRegistration.hasPreferredLeader: the leader is the first replica."""
    return p.leader == (p.replicas[0] if p.replicas else NO_LEADER)


def is_reassigning(p: PartitionRegistration) -> bool:
    return bool(p.removing_replicas or p.adding_replicas)


class BrokersToIsrs:
    """org.apache.kafka.controller.BrokersToIsrs (with BrokersToElrs' one query): which
    partitions a broker is in the ISR / ELR of, leads or holds. ``topics`` is the controller's
    topic id -> TopicControlInfo map, read live."""

    def __init__(self, topics: dict[str, TopicControlInfo]) -> None:
        self._topics = topics

    def __call__(self) -> BrokersToIsrs:
        """Itself: ``rc.brokers_to_isrs()`` reads as Kafka's ``brokersToIsrs()`` accessor, and
        ``rc.brokers_to_isrs.x`` works as well."""
        return self

    def iter_partitions(self, pred: Callable[[PartitionRegistration], bool]
                        ) -> Iterator[tuple[TopicControlInfo, int]]:
        """(topic info, partition id) of every partition matching ``pred``, topics in creation
        order, partitions by id."""
        for info in self._topics.values():
            for pid in sorted(info.parts):
                if pred(info.parts[pid]):
                    yield info, pid

    def partitions_with_broker_in_isr(self, broker_id: int):
        """BrokersToIsrs.partitionsWithBrokerInIsr."""
        return self.iter_partitions(lambda p: broker_id in p.isr)

    def partitions_with_broker_in_elr(self, broker_id: int):
        """BrokersToElrs.partitionsWithBrokerInElr."""
        return self.iter_partitions(lambda p: broker_id in p.elr)

    def iterator(self, broker_id: int, leaders_only: bool):
        """BrokersToIsrs.iterator(brokerId, leadersOnly): the partitions with ``broker_id`` in
        their ISR, or (``leaders_only``) the ones it leads."""
        if leaders_only:
            return self.iter_partitions(lambda p: p.leader == broker_id)
        return self.partitions_with_broker_in_isr(broker_id)

    def partitions_with_no_leader(self):
        """BrokersToIsrs.partitionsWithNoLeader."""
        return self.iter_partitions(lambda p: p.leader == NO_LEADER)

    def partitions_led_by_broker(self, broker_id: int) -> list[tuple[str, int]]:
        """BrokersToIsrs.partitionsLedByBroker, as (topic name, partition) pairs."""
        return [(info.name, pid) for info, pid in
                self.iter_partitions(lambda p: p.leader == broker_id)]

    def has_leaderships(self, broker_id: int) -> bool:
        """BrokersToIsrs.hasLeaderships (used by the heartbeat manager for controlled shutdown)."""
        return bool(self.partitions_led_by_broker(broker_id))

    def partitions_on(self, broker_id: int) -> list[tuple[str, int]]:
        """(topic name, partition) of every partition with ``broker_id`` among its replicas."""
        return [(info.name, pid) for info, pid in
                self.iter_partitions(lambda p: broker_id in p.replicas)]

    def imbalanced_partitions(self) -> list[tuple[str, int]]:
        """ReplicationControlManager.imbalancedPartitions: partitions whose leader is not the
        first replica (offline partitions included)."""
        return [(info.name, pid) for info, pid in
                self.iter_partitions(lambda p: not has_preferred_leader(p))]

    def reassigning_partitions(self) -> list[tuple[str, int]]:
        return [(info.name, pid) for info, pid in self.iter_partitions(is_reassigning)]

    def offline_partitions_count(self) -> int:
        """OfflinePartitionsCount: partitions without a leader."""
        return sum(1 for _ in self.partitions_with_no_leader())
