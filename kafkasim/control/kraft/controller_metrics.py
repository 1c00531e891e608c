"""The KRaft controller's metadata metrics: ``org.apache.kafka.controller.metrics``
``ControllerMetadataMetrics``, ``ControllerMetricsChanges`` and
``ControllerMetadataMetricsPublisher`` (trunk 1eb7644; the meter since 3.9).

Every controller (not only the active one) keeps these gauges from the metadata it has
committed: a snapshot sets them by counting the image (``publish_snapshot``), a log delta adds
the changes between the previous image and the new one (``publish_delta``). A partition counts
as offline when it has no leader (``!hasLeader()``) and as imbalanced when its leader is not its
first replica (``!hasPreferredLeader()``, so an offline partition is also imbalanced); a broker is
active unless fenced (one in controlled shutdown is active). Unlike the ZooKeeper controller,
a partition being reassigned is not treated specially. kafkasim.runtime.metrics samples
``snapshot_counts`` of each controller's committed image; these classes are Kafka's, for one
controller driven alone.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkasim.control.kraft.image import MetadataImage, TopicDelta, TopicImage
from kafkasim.control.kraft.records import BrokerRegistration, PartitionRegistration

KC = "kafka.controller:type=KafkaController,name="
#: ControllerMetadataMetrics' gauges (ZkMigrationState and MigratingZkBrokerCount are not
#: modelled: kafkasim has no ZooKeeper migration)
FENCED_BROKER_COUNT = KC + "FencedBrokerCount"
ACTIVE_BROKER_COUNT = KC + "ActiveBrokerCount"
GLOBAL_TOPIC_COUNT = KC + "GlobalTopicCount"
GLOBAL_PARTITION_COUNT = KC + "GlobalPartitionCount"
OFFLINE_PARTITION_COUNT = KC + "OfflinePartitionsCount"
PREFERRED_REPLICA_IMBALANCE_COUNT = KC + "PreferredReplicaImbalanceCount"
METADATA_ERROR_COUNT = KC + "MetadataErrorCount"
UNCLEAN_LEADER_ELECTIONS_PER_SEC = \
    "kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec"

LOG_DELTA = "LOG_DELTA"     # LoaderManifestType
SNAPSHOT = "SNAPSHOT"


@dataclass(frozen=True, slots=True)
class SnapshotCounts:
    """What publishSnapshot counts in one image."""

    fenced_brokers: int
    active_brokers: int
    global_topics: int
    global_partitions: int
    offline_partitions: int
    partitions_without_preferred_leader: int


def snapshot_counts(image: MetadataImage) -> SnapshotCounts:
    """ControllerMetadataMetricsPublisher.publishSnapshot's counts of ``image``."""
    fenced = sum(1 for b in image.brokers.values() if b.fenced)
    offline = imbalance = 0
    for reg in image.partitions.values():
        if not reg.has_leader():
            offline += 1
        if not reg.has_preferred_leader():
            imbalance += 1
    return SnapshotCounts(fenced, len(image.brokers) - fenced, len(image.topic_ids),
                          len(image.partitions), offline, imbalance)


class ControllerMetadataMetrics:
    """ControllerMetadataMetrics: the gauges (``set_*`` / ``add_to_*`` / the getters by
    Kafka's names) and the UncleanLeaderElectionsPerSec meter's count."""

    __slots__ = ("fenced_broker_count", "active_broker_count", "global_topic_count",
                 "global_partition_count", "offline_partition_count",
                 "preferred_replica_imbalance_count", "metadata_error_count",
                 "unclean_leader_elections")

    def __init__(self) -> None:
        self.fenced_broker_count = 0
        self.active_broker_count = 0
        self.global_topic_count = 0
        self.global_partition_count = 0
        self.offline_partition_count = 0
        self.preferred_replica_imbalance_count = 0
        self.metadata_error_count = 0
        self.unclean_leader_elections = 0

    def set_fenced_broker_count(self, count: int) -> None:
        self.fenced_broker_count = count

    def add_to_fenced_broker_count(self, delta: int) -> None:
        self.fenced_broker_count += delta

    def set_active_broker_count(self, count: int) -> None:
        self.active_broker_count = count

    def add_to_active_broker_count(self, delta: int) -> None:
        self.active_broker_count += delta

    def set_global_topic_count(self, count: int) -> None:
        self.global_topic_count = count

    def add_to_global_topic_count(self, delta: int) -> None:
        self.global_topic_count += delta

    def set_global_partition_count(self, count: int) -> None:
        self.global_partition_count = count

    def add_to_global_partition_count(self, delta: int) -> None:
        self.global_partition_count += delta

    def set_offline_partition_count(self, count: int) -> None:
        self.offline_partition_count = count

    def add_to_offline_partition_count(self, delta: int) -> None:
        self.offline_partition_count += delta

    def set_preferred_replica_imbalance_count(self, count: int) -> None:
        self.preferred_replica_imbalance_count = count

    def add_to_preferred_replica_imbalance_count(self, delta: int) -> None:
        self.preferred_replica_imbalance_count += delta

    def increment_metadata_error_count(self) -> None:
        self.metadata_error_count += 1

    def update_unclean_leader_election(self, count: int) -> None:
        """Mark the UncleanLeaderElectionsPerSec meter ``count`` times."""
        self.unclean_leader_elections += count

    def gauges(self) -> dict[str, int]:
        """The gauges by MBean name (the meter is reported by kafkasim.runtime.metrics)."""
        return {
            FENCED_BROKER_COUNT: self.fenced_broker_count,
            ACTIVE_BROKER_COUNT: self.active_broker_count,
            GLOBAL_TOPIC_COUNT: self.global_topic_count,
            GLOBAL_PARTITION_COUNT: self.global_partition_count,
            OFFLINE_PARTITION_COUNT: self.offline_partition_count,
            PREFERRED_REPLICA_IMBALANCE_COUNT: self.preferred_replica_imbalance_count,
            METADATA_ERROR_COUNT: self.metadata_error_count,
        }


def _delta(prev: bool, nxt: bool) -> int:
    return int(nxt) - int(prev)


class ControllerMetricsChanges:
    """ControllerMetricsChanges: the gauge changes a series of deltas makes, applied at once."""

    __slots__ = ("_fenced_brokers", "_active_brokers", "_global_topics", "_global_partitions",
                 "_offline_partitions", "_without_preferred_leader", "_unclean_elections")

    @staticmethod
    def delta(prev: bool, nxt: bool) -> int:
        """The change between two booleans as an integer: -1, 0 or 1."""
        return _delta(prev, nxt)

    def __init__(self) -> None:
        self._fenced_brokers = 0
        self._active_brokers = 0
        self._global_topics = 0
        self._global_partitions = 0
        self._offline_partitions = 0
        self._without_preferred_leader = 0
        self._unclean_elections = 0

    def fenced_brokers_change(self) -> int:
        return self._fenced_brokers

    def active_brokers_change(self) -> int:
        return self._active_brokers

    def global_topics_change(self) -> int:
        return self._global_topics

    def global_partitions_change(self) -> int:
        return self._global_partitions

    def offline_partitions_change(self) -> int:
        return self._offline_partitions

    def partitions_without_preferred_leader_change(self) -> int:
        return self._without_preferred_leader

    def unclean_leader_elections(self) -> int:
        return self._unclean_elections

    def handle_broker_change(self, prev: BrokerRegistration | None,
                             nxt: BrokerRegistration | None) -> None:
        """A broker registered, changed or went (``None``): fenced and active counts."""
        self._fenced_brokers += _delta(prev is not None and prev.fenced,
                                       nxt is not None and nxt.fenced)
        self._active_brokers += _delta(prev is not None and not prev.fenced,
                                       nxt is not None and not nxt.fenced)

    def handle_deleted_topic(self, deleted: TopicImage) -> None:
        for prev in deleted.partitions.values():
            self.handle_partition_change(prev, None)
        self._global_topics -= 1

    def handle_topic_change(self, prev: TopicImage | None, delta: TopicDelta) -> None:
        """A new topic (``prev`` None) or a changed one: each changed partition."""
        if prev is None:
            self._global_topics += 1
        for pid, nxt in delta.partition_changes.items():
            self.handle_partition_change(None if prev is None else prev.partitions.get(pid),
                                         nxt)

    def handle_partition_change(self, prev: PartitionRegistration | None,
                                nxt: PartitionRegistration | None) -> None:
        """Presence, offline and preferred-leader changes of one partition; an unclean election
        when its leader is not of the previous ISR (a new partition's replicas count as its
        previous ISR)."""
        was_offline = prev is not None and not prev.has_leader()
        was_imbalanced = prev is not None and not prev.has_preferred_leader()
        is_offline = nxt is not None and not nxt.has_leader()
        is_imbalanced = nxt is not None and not nxt.has_preferred_leader()
        if nxt is not None:
            prev_isr = prev.isr if prev is not None else nxt.replicas
            if not PartitionRegistration.election_was_clean(nxt.leader, prev_isr):
                self._unclean_elections += 1
        self._global_partitions += _delta(prev is not None, nxt is not None)
        self._offline_partitions += _delta(was_offline, is_offline)
        self._without_preferred_leader += _delta(was_imbalanced, is_imbalanced)

    def apply(self, metrics: ControllerMetadataMetrics) -> None:
        """Add the changes to ``metrics`` (and mark the unclean elections, counted once)."""
        metrics.add_to_fenced_broker_count(self._fenced_brokers)
        metrics.add_to_active_broker_count(self._active_brokers)
        metrics.add_to_global_topic_count(self._global_topics)
        metrics.add_to_global_partition_count(self._global_partitions)
        metrics.add_to_offline_partition_count(self._offline_partitions)
        metrics.add_to_preferred_replica_imbalance_count(self._without_preferred_leader)
        if self._unclean_elections > 0:
            metrics.update_unclean_leader_election(self._unclean_elections)
            self._unclean_elections = 0


class ControllerMetadataMetricsPublisher:
    """ControllerMetadataMetricsPublisher: turns each committed metadata update into gauge
    values. The images passed are kept (``prev_image``): pass a new image each time."""

    __slots__ = ("metrics", "prev_image")

    def __init__(self, metrics: ControllerMetadataMetrics) -> None:
        self.metrics = metrics
        self.prev_image = MetadataImage()

    @staticmethod
    def name() -> str:
        return "ControllerMetadataMetricsPublisher"

    def on_metadata_update(self, new_image: MetadataImage, manifest: str) -> None:
        """onMetadataUpdate: a LOG_DELTA adds the changes since the previous image, a SNAPSHOT
        sets every gauge from ``new_image``."""
        if manifest == LOG_DELTA:
            self.publish_delta(self.prev_image, new_image)
        elif manifest == SNAPSHOT:
            self.publish_snapshot(new_image)
        else:
            raise ValueError(f"a loader manifest is {LOG_DELTA} or {SNAPSHOT}, not {manifest!r}")
        self.prev_image = new_image

    def publish_delta(self, prev: MetadataImage, new: MetadataImage) -> None:
        """publishDelta: the broker, deleted-topic and topic changes from ``prev`` to ``new``."""
        changes = ControllerMetricsChanges()
        for bid in sorted(prev.brokers.keys() | new.brokers.keys()):
            before, after = prev.brokers.get(bid), new.brokers.get(bid)
            if before != after:
                changes.handle_broker_change(before, after)
        before_topics, after_topics = prev.topics_by_id(), new.topics_by_id()
        for tid in sorted(before_topics.keys() - after_topics.keys()):
            changes.handle_deleted_topic(before_topics[tid])
        for tid, topic in sorted(after_topics.items()):
            old = before_topics.get(tid)
            delta = TopicDelta(old or TopicImage(topic.name, tid))
            delta.partition_changes = {pid: reg for pid, reg in topic.partitions.items()
                                       if old is None or old.partitions.get(pid) != reg}
            if old is None or delta.partition_changes:
                changes.handle_topic_change(old, delta)
        changes.apply(self.metrics)

    def publish_snapshot(self, image: MetadataImage) -> None:
        """publishSnapshot: every gauge counted in ``image``."""
        counts = snapshot_counts(image)
        m = self.metrics
        m.set_global_topic_count(counts.global_topics)
        m.set_fenced_broker_count(counts.fenced_brokers)
        m.set_active_broker_count(counts.active_brokers)
        m.set_global_partition_count(counts.global_partitions)
        m.set_offline_partition_count(counts.offline_partitions)
        m.set_preferred_replica_imbalance_count(counts.partitions_without_preferred_leader)
