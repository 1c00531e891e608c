"""``MetadataImage``: the cluster state a node builds by replaying committed metadata records.

Brokers apply records only once the quorum has committed them (MetadataLoader /
BrokerMetadataPublisher, KIP-631); the image is what their metadata cache, ``kafka-topics
--describe`` and the ReplicaManager read (org.apache.kafka.image.MetadataImage: TopicsImage,
ClusterImage, ConfigurationsImage, FeaturesImage). ``replay`` returns the partition whose
registration changed, so the broker can call ReplicaManager.applyDelta on just those.

``TopicImage`` and ``TopicDelta`` are one topic's partitions and the changes a batch of partition
records makes to them (org.apache.kafka.image.TopicImage / TopicDelta), as the controller metrics
read them (kafkasim.control.kraft.controller_metrics).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkasim.control.kraft import records as R


@dataclass(frozen=True, slots=True)
class TopicImage:
    """org.apache.kafka.image.TopicImage: a topic's name, id and partitions by id."""

    name: str
    id: str
    partitions: dict[int, R.PartitionRegistration] = field(default_factory=dict)


class TopicDelta:
    """org.apache.kafka.image.TopicDelta: the partitions that records replayed onto ``image``
    changed (``partition_changes``, the new registrations by partition id)."""

    __slots__ = ("image", "partition_changes")

    def __init__(self, image: TopicImage) -> None:
        self.image = image
        self.partition_changes: dict[int, R.PartitionRegistration] = {}

    def replay(self, record) -> None:
        """A PartitionRecord (a new registration) or a PartitionChangeRecord (merged onto the
        partition's latest registration)."""
        if type(record) is R.PartitionRecord:
            self.partition_changes[record.partition_id] = \
                R.PartitionRegistration.from_record(record)
        elif type(record) is R.PartitionChangeRecord:
            pid = record.partition_id
            prev = self.partition_changes.get(pid) or self.image.partitions.get(pid)
            if prev is None:
                raise ValueError(f"Unable to find partition {record.topic_id}:{pid}")
            self.partition_changes[pid] = prev.merge(record)
        else:
            raise TypeError(f"a TopicDelta replays partition records, not {record!r}")

    def apply(self) -> TopicImage:
        """The topic's image with the changes applied."""
        return TopicImage(self.image.name, self.image.id,
                          {**self.image.partitions, **self.partition_changes})


class MetadataImage:
    __slots__ = ("offset", "topic_names", "topic_ids", "partitions", "brokers", "configs",
                 "features")

    def __init__(self) -> None:
        self.offset = -1
        self.topic_names: dict[str, str] = {}        # topic id -> name
        self.topic_ids: dict[str, str] = {}          # name -> topic id
        self.partitions: dict[tuple[str, int], R.PartitionRegistration] = {}
        self.brokers: dict[int, R.BrokerRegistration] = {}
        self.configs: dict[tuple[str, str], dict[str, str]] = {}
        self.features: dict[str, int] = {}

    def replay(self, record, offset: int):
        """Apply one record; the (topic, partition) it changed, else None."""
        self.offset = offset
        t = type(record)
        if t is R.PartitionChangeRecord:
            tp = (self.topic_names[record.topic_id], record.partition_id)
            self.partitions[tp] = self.partitions[tp].merge(record)
            return tp
        if t is R.PartitionRecord:
            tp = (self.topic_names[record.topic_id], record.partition_id)
            self.partitions[tp] = R.PartitionRegistration.from_record(record)
            return tp
        if t is R.TopicRecord:
            self.topic_names[record.topic_id] = record.name
            self.topic_ids[record.name] = record.topic_id
        elif t is R.RegisterBrokerRecord:
            self.brokers[record.broker_id] = R.BrokerRegistration(
                record.broker_id, record.broker_epoch, record.incarnation_id, record.rack,
                record.fenced, record.in_controlled_shutdown, record.end_points)
        elif t is R.BrokerRegistrationChangeRecord:
            b = self.brokers.get(record.broker_id)
            if b is not None and b.epoch == record.broker_epoch:
                fenced = b.fenced
                if record.fenced == R.BrokerRegistrationFencingChange.FENCE:
                    fenced = True
                elif record.fenced == R.BrokerRegistrationFencingChange.UNFENCE:
                    fenced = False
                shutdown = b.in_controlled_shutdown or record.in_controlled_shutdown == \
                    R.BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN
                self.brokers[b.id] = R.BrokerRegistration(
                    b.id, b.epoch, b.incarnation_id, b.rack, fenced, shutdown, b.listeners)
        elif t is R.FenceBrokerRecord or t is R.UnfenceBrokerRecord:
            b = self.brokers.get(record.id)
            if b is not None and b.epoch == record.epoch:
                self.brokers[b.id] = R.BrokerRegistration(
                    b.id, b.epoch, b.incarnation_id, b.rack, t is R.FenceBrokerRecord,
                    b.in_controlled_shutdown, b.listeners)
        elif t is R.UnregisterBrokerRecord:
            b = self.brokers.get(record.broker_id)
            if b is not None and b.epoch == record.broker_epoch:
                del self.brokers[record.broker_id]
        elif t is R.ConfigRecord:
            cfg = self.configs.setdefault((record.resource_type, record.resource_name), {})
            if record.value is None:
                cfg.pop(record.name, None)
            else:
                cfg[record.name] = record.value
        elif t is R.ClearElrRecord:
            for tp, reg in list(self.partitions.items()):
                if (not record.topic_name or tp[0] == record.topic_name) and \
                        (reg.elr or reg.last_known_elr):
                    self.partitions[tp] = reg.merge(R.PartitionChangeRecord(
                        tp[1], self.topic_ids[tp[0]], eligible_leader_replicas=(),
                        last_known_elr=()))
            return None
        elif t is R.FeatureLevelRecord:
            self.features[record.name] = record.feature_level
        elif t is R.RemoveTopicRecord:
            name = self.topic_names.pop(record.topic_id, None)
            if name is not None:
                del self.topic_ids[name]
                for tp in [tp for tp in self.partitions if tp[0] == name]:
                    del self.partitions[tp]
        return None

    def topics_by_id(self) -> dict[str, TopicImage]:
        """TopicsImage.topicsById: every topic's TopicImage, by topic id."""
        out = {tid: TopicImage(name, tid) for tid, name in self.topic_names.items()}
        for (name, pid), reg in self.partitions.items():
            out[self.topic_ids[name]].partitions[pid] = reg
        return out

    def live_brokers(self) -> tuple[int, ...]:
        """Brokers a leader may keep in or add to an ISR: registered, unfenced and not in
        controlled shutdown (KRaftMetadataCache / Partition.isReplicaIsrEligible)."""
        return tuple(sorted(b.id for b in self.brokers.values()
                            if not b.fenced and not b.in_controlled_shutdown))

    def unfenced_brokers(self) -> tuple[int, ...]:
        return tuple(sorted(b.id for b in self.brokers.values() if not b.fenced))
