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
from typing import NamedTuple

from kafkasim.control.kraft import records as R
from kafkasim.core.messages import PartitionState
from kafkasim.settings.javautil import (
    integer_hash_code,
    java_hashmap_iteration_order,
    topic_partition_hash_code,
    uuid_hash_code,
)


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

    def write(self, options: ImageWriterOptions | None = None) -> list:
        """MetadataImage.write(ImageWriter, ImageWriterOptions): the image as the records a
        snapshot holds, in Kafka's order (MetadataImage.java:150@3.9.0-rc3, the same @4.3.0):
        FeaturesImage, ClusterImage, TopicsImage, ConfigurationsImage (kafkasim models no
        client quotas, producer-id blocks, ACLs, SCRAM credentials or delegation tokens, so
        those images write nothing). Replaying the records into an empty image gives this
        image back (``options.handle_loss`` aside)."""
        options = options or ImageWriterOptions.for_image(self)
        out: list = []
        write_features(self, out, options)
        for broker_id in sorted(self.brokers):     # ClusterImage.write: brokers, by id
            out.append(self.brokers[broker_id].to_record(
                options.metadata_version, handle_loss=options.handle_loss))
        for topic_id, name in self.topic_names.items():     # TopicsImage.write
            out.append(R.TopicRecord(name, topic_id))      # TopicImage.write: TopicRecord,
            for pid in sorted(p for t, p in self.partitions if t == name):   # its partitions
                out.append(partition_to_record(self.partitions[(name, pid)], topic_id, pid,
                                               options))
        for (rtype, rname), cfg in self.configs.items():     # ConfigurationsImage.write
            out.extend(R.ConfigRecord(rtype, rname, k, v) for k, v in cfg.items())
        return out

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


def load_snapshot(image: MetadataImage, entries) -> tuple[list, list]:
    """MetadataLoader loading a snapshot onto a node whose ``image`` is older than the log
    start (MetadataDelta.finishSnapshot: what the snapshot does not name is gone): ``image``
    becomes the image of ``entries`` (the snapshot's records, RaftLog.entries_between from
    0); returns the partitions whose registration changed or appeared, and those of the
    topics the snapshot no longer has, as ``replay_records`` does for a log delta."""
    fresh = MetadataImage()
    for offset, _epoch, record in entries:
        fresh.replay(record, offset)
    old = image.partitions
    changed = [tp for tp, reg in fresh.partitions.items() if old.get(tp) != reg]
    deleted = [tp for tp in old if tp not in fresh.partitions]
    for name in MetadataImage.__slots__:
        setattr(image, name, getattr(fresh, name))
    return changed, deleted


class ImageWriterOptions(NamedTuple):
    """org.apache.kafka.image.writer.ImageWriterOptions: the metadata.version the records are
    written for (the image's own) and what to do with what it cannot represent
    (``handle_loss`` is given the UnwritableMetadataException; None: raise it, Kafka's
    default)."""

    metadata_version: object
    handle_loss: object = None

    @classmethod
    def for_image(cls, image: MetadataImage, handle_loss=None) -> ImageWriterOptions:
        """The options SnapshotEmitter uses: the image's metadata.version (the
        FeatureLevelRecord replayed; before any, MINIMUM_KRAFT_VERSION as QuorumController
        @3.9.0-rc3 assumes) and a loss handler that logs (here: ignores) the loss."""
        from kafkasim.control.kraft import metadata_version as MV

        level = image.features.get("metadata.version")
        mv = MV.MINIMUM_KRAFT_VERSION if level is None else \
            MV.MetadataVersion.from_feature_level(level)
        return cls(mv, handle_loss if handle_loss is not None else _ignore_loss)


def _ignore_loss(_loss) -> None:
    """SnapshotEmitter's loss handler logs "Metadata was lost" (here it is dropped)."""


def _lose(options: ImageWriterOptions, what: str) -> None:
    from kafkasim.control.kraft.records import UnwritableMetadataException

    loss = UnwritableMetadataException(options.metadata_version, what)
    if options.handle_loss is None:
        raise loss
    options.handle_loss(loss)


def write_features(image: MetadataImage, out: list, options: ImageWriterOptions) -> None:
    """FeaturesImage.write@3.9.0-rc3: below metadata.version 3.3-IV0 no FeatureLevelRecord
    exists (the finalized features are lost); else metadata.version first ("it may have an
    impact on how we decode records that come after it"), then the other features. (The
    ZkMigrationStateRecord of 3.4-IV0+ is not written: the image keeps no migration state, though
    a 3.5 - 3.9 log holds the activation's ZkMigrationStateRecord NONE.) At 4.3.0
    (FeaturesImage.java:85@a9ce322153) the 3.3-IV0 branch and the migration record are gone:
    4.x's metadata.version is 3.3-IV3 at least, so the same records come out."""
    from kafkasim.control.kraft import metadata_version as MV

    others = [(k, v) for k, v in image.features.items() if k != "metadata.version"]
    if options.metadata_version.is_less_than(MV.MINIMUM_BOOTSTRAP_VERSION):
        if others:
            _lose(options, "feature flag(s): " + ", ".join(sorted(k for k, _ in others)))
        return
    out.append(R.FeatureLevelRecord("metadata.version", options.metadata_version.feature_level))
    out.extend(R.FeatureLevelRecord(k, v) for k, v in others)


def partition_to_record(reg: R.PartitionRegistration, topic_id: str, partition_id: int,
                        options: ImageWriterOptions) -> R.PartitionRecord:
    """PartitionRegistration.toRecord(topicId, partitionId, options)@3.9.0-rc3: the ELR
    fields only from metadata.version 4.0-IV1 (isElrSupported; below it they are left out,
    with no loss reported). The directories of 3.7-IV2+ are not modelled."""
    elr, last_known = tuple(reg.elr), tuple(reg.last_known_elr)
    if not options.metadata_version.is_elr_supported():
        elr, last_known = (), ()
    return R.PartitionRecord(partition_id, topic_id, tuple(reg.replicas), tuple(reg.isr),
                             tuple(reg.removing_replicas), tuple(reg.adding_replicas),
                             reg.leader, reg.leader_recovery_state, reg.leader_epoch,
                             reg.partition_epoch, elr, last_known)


def to_leader_and_isr_partition_state(tp: tuple[str, int], reg: R.PartitionRegistration
                                      ) -> PartitionState:
    """PartitionRegistration.toLeaderAndIsrPartitionState: a registration as the partition
    state ReplicaManager applies (KRaft states carry no controller epoch: -1)."""
    return PartitionState(tp[0], tp[1], -1, reg.leader, reg.leader_epoch, tuple(reg.isr),
                          reg.partition_epoch, tuple(reg.replicas), reg.leader_recovery_state,
                          adding_replicas=tuple(reg.adding_replicas),
                          removing_replicas=tuple(reg.removing_replicas))


class LocalReplicaChanges(NamedTuple):
    """org.apache.kafka.image.LocalReplicaChanges: what a delta changes for one broker --
    ``deletes`` (the partitions it no longer hosts), ``leaders`` / ``followers`` (tp -> the
    PartitionState it now leads or follows; ``elected_leaders``: the leaders whose leader epoch
    changed). Each in the order Kafka iterates them: its HashSet / HashMaps keyed by
    TopicPartition (``local_changes_of``)."""

    deletes: tuple
    elected_leaders: dict
    leaders: dict
    followers: dict


def _java_tp_order(tps: list) -> list:
    """The order a ``HashMap<TopicPartition, _>`` / ``HashSet<TopicPartition>`` filled with
    ``tps`` (in that order) iterates them (TopicPartition.hashCode)."""
    return java_hashmap_iteration_order(tps, topic_partition_hash_code)


def _changed_in_kafka_order(changed, topic_ids: dict) -> list:
    """TopicsDelta.localChanges walks ``changedTopics`` (a HashMap<Uuid, TopicDelta>, its topics
    put in record order) and each TopicDelta's ``partitionChanges`` (a HashMap<Integer, _>):
    the changed partitions in that order (TopicsDelta.java:205-214@3.9.0-rc3)."""
    by_topic: dict[str, list[int]] = {}
    for topic, partition in changed:
        by_topic.setdefault(topic, []).append(partition)
    ids = {topic_ids.get(t, t): t for t in by_topic}
    out = []
    for topic_id in java_hashmap_iteration_order(list(ids), uuid_hash_code):
        topic = ids[topic_id]
        out.extend((topic, p) for p in
                   java_hashmap_iteration_order(by_topic[topic], integer_hash_code))
    return out


def local_changes_of(broker_id: int, previous, partitions, changed, deleted=(),
                     topic_ids=None) -> LocalReplicaChanges:
    """TopicsDelta.localChanges(brokerId) (TopicDelta.localChanges per changed topic,
    TopicDelta.java:138-192 and TopicsDelta.java:197-227 @3.9.0-rc3, the same at 4.3.0):
    ``changed`` partitions (their new registrations in ``partitions``) no longer listing the
    broker that ``previous`` (tp -> the previous image's registration or partition state)
    listed are deletes; one it leads or follows counts only if its partition epoch changed (or
    it is new); then ``deleted`` (the partitions of the topics a RemoveTopicRecord deleted)
    that listed the broker are deletes too (a changed partition of the same name then belongs
    to a topic created anew: TopicDelta compares with its own topic's image, by topic id).
    ``topic_ids``: name -> id, for the order of
    ``changedTopics`` (a HashMap<Uuid, _>). Every collection comes back in Kafka's HashMap /
    HashSet order: the order ReplicaManager.applyDelta handles them. (JDK-dependent putAll
    pre-sizing of the merged maps is not modelled: they fill as with puts one by one.)"""
    deletes, elected, leaders, followers = [], [], [], []
    states: dict = {}
    gone = set(deleted)   # a changed partition of that name belongs to a topic made anew
    for tp in _changed_in_kafka_order(changed, topic_ids or {}):
        reg, prev = partitions[tp], None if tp in gone else previous.get(tp)
        if broker_id not in reg.replicas:
            if prev is not None and broker_id in prev.replicas:
                deletes.append(tp)
        elif prev is None or prev.partition_epoch != reg.partition_epoch:
            states[tp] = to_leader_and_isr_partition_state(tp, reg)
            if reg.leader != broker_id:
                followers.append(tp)
                continue
            leaders.append(tp)
            if prev is None or prev.leader_epoch != reg.leader_epoch:
                elected.append(tp)
    deletes.extend(tp for tp in deleted if (prev := previous.get(tp)) is not None
                   and broker_id in prev.replicas and tp not in deletes)
    return LocalReplicaChanges(tuple(_java_tp_order(deletes)),
                               {tp: states[tp] for tp in _java_tp_order(elected)},
                               {tp: states[tp] for tp in _java_tp_order(leaders)},
                               {tp: states[tp] for tp in _java_tp_order(followers)})


def _copy_image(image: MetadataImage) -> MetadataImage:
    """A new MetadataImage with ``image``'s state (registrations are immutable; a config
    dict is copied, as replay changes it in place)."""
    out = MetadataImage()
    out.offset = image.offset
    out.topic_names = dict(image.topic_names)
    out.topic_ids = dict(image.topic_ids)
    out.partitions = dict(image.partitions)
    out.brokers = dict(image.brokers)
    out.configs = {k: dict(v) for k, v in image.configs.items()}
    out.features = dict(image.features)
    return out


class TopicsDelta:
    """org.apache.kafka.image.TopicsDelta (with the rest of a MetadataDelta): records replayed
    on top of ``image``, which is left as it was; ``apply`` is the new image and
    ``local_changes`` what ReplicaManager.applyDelta does on one broker (TopicsDelta /
    TopicDelta.localChanges @3.9.0-rc3, @4.3.0)."""

    __slots__ = ("image", "changed", "deleted_topic_ids", "_next")

    def __init__(self, image: MetadataImage | None = None) -> None:
        self.image = MetadataImage() if image is None else image
        self._next = _copy_image(self.image)
        self.changed: list[tuple[str, int]] = []    # changed partitions, in record order
        self.deleted_topic_ids: list[str] = []      # topics of the previous image removed

    def replay(self, record) -> None:
        """Replay one metadata record. RemoveTopicRecord (TopicsDelta.replay) forgets the
        topic's changes in this delta and deletes it if the previous image had it; a topic
        neither here nor there is a RuntimeError."""
        nxt = self._next
        if type(record) is R.RemoveTopicRecord:
            name = nxt.topic_names.get(record.topic_id)
            if name is None:
                raise RuntimeError(f"Unable to delete topic with id {record.topic_id}: no "
                                   "such topic found.")
            self.changed = [tp for tp in self.changed if tp[0] != name]
            if record.topic_id in self.image.topic_names:
                self.deleted_topic_ids.append(record.topic_id)
        tp = nxt.replay(record, nxt.offset + 1)
        if tp is not None and tp not in self.changed:
            self.changed.append(tp)

    def apply(self) -> MetadataImage:
        """The image with every replayed record applied."""
        return self._next

    def local_changes(self, broker_id: int) -> LocalReplicaChanges:
        """TopicsDelta.localChanges(brokerId) (``local_changes_of``): the previous image's
        registrations against the changed ones, then the partitions of the deleted topics."""
        old = self.image
        deleted = []
        for topic_id in self.deleted_topic_ids:
            name = old.topic_names[topic_id]
            deleted.extend(tp for tp in old.partitions if tp[0] == name)
        topic_ids = {**old.topic_ids, **self._next.topic_ids}
        return local_changes_of(broker_id, old.partitions, self._next.partitions, self.changed,
                                deleted, topic_ids)
