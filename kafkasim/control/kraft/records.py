"""Metadata records of the ``__cluster_metadata`` log and the registrations they build.

Field names are Kafka's (metadata/src/main/resources/common/metadata/*.json) in snake_case.
Every record is a frozen dataclass of ints, strings and tuples, so the metadata log is plain
data (snapshots, traces, DataFrames). A registration (``PartitionRegistration``,
``BrokerRegistration``) is what replaying the records yields
(org.apache.kafka.metadata.PartitionRegistration / BrokerRegistration).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

NO_LEADER = -1          # LeaderConstants.NO_LEADER: the partition has no leader
NO_LEADER_CHANGE = -2   # LeaderConstants.NO_LEADER_CHANGE: PartitionChangeRecord.leader default


class LeaderRecoveryState:
    """org.apache.kafka.metadata.LeaderRecoveryState (KIP-704, 3.2)."""

    RECOVERED = 0
    RECOVERING = 1
    NO_CHANGE = -1   # PartitionChangeRecord.leaderRecoveryState default

    NAMES = {0: "RECOVERED", 1: "RECOVERING", -1: "NO_CHANGE"}


class BrokerRegistrationFencingChange:
    """BrokerRegistrationChangeRecord.fenced: -1 unfence, 0 no change, 1 fence."""

    UNFENCE = -1
    NONE = 0
    FENCE = 1


class BrokerRegistrationInControlledShutdownChange:
    """BrokerRegistrationChangeRecord.in_controlled_shutdown: 0 no change, 1 in shutdown."""

    NONE = 0
    IN_CONTROLLED_SHUTDOWN = 1


@dataclass(frozen=True, slots=True)
class BrokerEndpoint:
    """RegisterBrokerRecord.BrokerEndpoint: one listener of a broker."""

    name: str = "PLAINTEXT"
    host: str = "localhost"
    port: int = 9092
    security_protocol: int = 0   # SecurityProtocol.PLAINTEXT.id


#: the listeners of a simulated broker: one PLAINTEXT listener
DEFAULT_END_POINTS = (BrokerEndpoint(),)


@dataclass(frozen=True, slots=True)
class RegisterBrokerRecord:
    broker_id: int
    broker_epoch: int          # the offset of this record in the metadata log
    incarnation_id: str
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False
    end_points: tuple[BrokerEndpoint, ...] | None = None   # None: DEFAULT_END_POINTS


@dataclass(frozen=True, slots=True)
class UnregisterBrokerRecord:
    broker_id: int
    broker_epoch: int


@dataclass(frozen=True, slots=True)
class RegisterControllerRecord:
    """RegisterControllerRecord (KIP-919, metadata.version 3.7-IV0): what
    ClusterControlManager.registerController writes for a ControllerRegistrationRequest.
    ``features``: (name, min supported, max supported) per feature the controller supports."""

    controller_id: int
    incarnation_id: str
    zk_migration_ready: bool = False
    end_points: tuple[BrokerEndpoint, ...] = ()
    features: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class UnregisterControllerRecord:
    """UnregisterControllerRecord (KIP-1312 / KAFKA-20395, metadata.version 4.4-IV2,
    ClusterControlManager.unregisterController @4.4 f86720838c)."""

    controller_id: int


@dataclass(frozen=True, slots=True)
class ControllerRegistration:
    """org.apache.kafka.metadata.ControllerRegistration: a replayed RegisterControllerRecord."""

    id: int
    incarnation_id: str
    zk_migration_ready: bool = False
    listeners: tuple[BrokerEndpoint, ...] = ()
    supported_features: tuple[tuple[str, int, int], ...] = ()


@dataclass(frozen=True, slots=True)
class FenceBrokerRecord:
    """Fencing before metadata.version 3.3-IV3 (later: BrokerRegistrationChangeRecord)."""

    id: int
    epoch: int


@dataclass(frozen=True, slots=True)
class UnfenceBrokerRecord:
    id: int
    epoch: int


@dataclass(frozen=True, slots=True)
class BrokerRegistrationChangeRecord:
    broker_id: int
    broker_epoch: int
    fenced: int = BrokerRegistrationFencingChange.NONE
    in_controlled_shutdown: int = BrokerRegistrationInControlledShutdownChange.NONE


@dataclass(frozen=True, slots=True)
class TopicRecord:
    name: str
    topic_id: str


@dataclass(frozen=True, slots=True)
class ConfigRecord:
    resource_type: str      # "TOPIC" or "BROKER" (ConfigResource.Type)
    resource_name: str      # "" for the cluster-level default
    name: str
    value: str | None


@dataclass(frozen=True, slots=True)
class FeatureLevelRecord:
    name: str               # "metadata.version", "eligible.leader.replicas.version", ...
    feature_level: int


@dataclass(frozen=True, slots=True)
class PartitionRecord:
    partition_id: int
    topic_id: str
    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader: int = NO_LEADER
    leader_recovery_state: int = LeaderRecoveryState.RECOVERED
    leader_epoch: int = 0
    partition_epoch: int = 0
    eligible_leader_replicas: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class PartitionChangeRecord:
    """A change to one partition. ``None`` (and ``NO_LEADER_CHANGE`` / ``NO_CHANGE``) means
    the field did not change."""

    partition_id: int
    topic_id: str
    isr: tuple[int, ...] | None = None
    leader: int = NO_LEADER_CHANGE
    replicas: tuple[int, ...] | None = None
    removing_replicas: tuple[int, ...] | None = None
    adding_replicas: tuple[int, ...] | None = None
    leader_recovery_state: int = LeaderRecoveryState.NO_CHANGE
    eligible_leader_replicas: tuple[int, ...] | None = None
    last_known_elr: tuple[int, ...] | None = None


@dataclass(frozen=True, slots=True)
class ClearElrRecord:
    """ClearElrRecord (metadata.version 4.0-IV1+, KAFKA-16540): clear ELR and LastKnownElr of
    one topic's partitions, or of every topic when ``topic_name`` is empty. Written by
    ConfigurationControlManager.createClearElrRecordsAsNeeded after a ConfigRecord for
    ``min.insync.replicas`` while ELR is enabled; replaying it merges an empty ELR and
    LastKnownElr into each partition that has one (so its partition epoch grows)."""

    topic_name: str = ""


@dataclass(frozen=True, slots=True)
class NoOpRecord:
    """NoOpRecord (metadata.version 3.3-IV1+, KIP-835): the active controller writes one every
    metadata.max.idle.interval.ms so the log's high watermark keeps moving when idle."""


@dataclass(frozen=True, slots=True)
class ZkMigrationStateRecord:
    """ZkMigrationStateRecord (apiKey 21, ZkMigrationRecord.json@3.9.0-rc3; metadata.version
    3.4-IV0+, gone in 4.0): the controller's ZooKeeper migration state (``ZkMigrationState``:
    NONE 0, MIGRATION 1, PRE_MIGRATION 2, POST_MIGRATION 3). kafkasim runs no migration: the
    only one written is NONE, by the first active controller of a 3.5 - 3.9 cluster
    (``ActivationRecordsGenerator``)."""

    zk_migration_state: int = 0


class ZkMigrationState:
    """org.apache.kafka.metadata.migration.ZkMigrationState's values (ZkMigrationState.java:38
    @3.9.0-rc3)."""

    NONE = 0
    MIGRATION = 1
    PRE_MIGRATION = 2
    POST_MIGRATION = 3


@dataclass(frozen=True, slots=True)
class BeginTransactionRecord:
    """BeginTransactionRecord (KIP-868, metadata.version 3.6-IV1+): the records up to the next
    End/AbortTransactionRecord are one metadata transaction. The active controller writes one
    around the bootstrap records (ActivationRecordsGenerator); a metadata loader publishes the
    transaction's records only at its End, an Abort discards them
    (``offset_control.metadata_transactions``)."""

    name: str = ""


@dataclass(frozen=True, slots=True)
class EndTransactionRecord:
    """EndTransactionRecord (KIP-868): the open metadata transaction is complete."""


@dataclass(frozen=True, slots=True)
class AbortTransactionRecord:
    """AbortTransactionRecord (KIP-868): the open metadata transaction is dropped."""

    reason: str = ""


@dataclass(frozen=True, slots=True)
class RemoveTopicRecord:
    topic_id: str


@dataclass(frozen=True, slots=True)
class PartitionRegistration:
    """org.apache.kafka.metadata.PartitionRegistration: a partition's state in the metadata
    image. ``merge`` applies a PartitionChangeRecord: a new leader bumps the leader epoch
    (the builder decides when; the record carries the new leader), every change bumps the
    partition epoch."""

    replicas: tuple[int, ...]
    isr: tuple[int, ...]
    removing_replicas: tuple[int, ...] = ()
    adding_replicas: tuple[int, ...] = ()
    leader: int = NO_LEADER
    leader_recovery_state: int = LeaderRecoveryState.RECOVERED
    leader_epoch: int = 0
    partition_epoch: int = 0
    elr: tuple[int, ...] = ()
    last_known_elr: tuple[int, ...] = ()

    @classmethod
    def from_record(cls, r: PartitionRecord) -> PartitionRegistration:
        return cls(tuple(r.replicas), tuple(r.isr), tuple(r.removing_replicas),
                   tuple(r.adding_replicas), r.leader, r.leader_recovery_state, r.leader_epoch,
                   r.partition_epoch, tuple(r.eligible_leader_replicas),
                   tuple(r.last_known_elr))

    def merge(self, r: PartitionChangeRecord) -> PartitionRegistration:
        """PartitionRegistration.merge: the leader epoch grows by one when the record names a
        leader (including -1, no leader) -- PartitionChangeBuilder only sets ``leader`` when the
        epoch must grow -- and the partition epoch grows by one for every record."""
        leader, leader_epoch = self.leader, self.leader_epoch
        if r.leader != NO_LEADER_CHANGE:
            leader, leader_epoch = r.leader, self.leader_epoch + 1
        return replace(
            self,
            replicas=self.replicas if r.replicas is None else tuple(r.replicas),
            isr=self.isr if r.isr is None else tuple(r.isr),
            removing_replicas=self.removing_replicas if r.removing_replicas is None
            else tuple(r.removing_replicas),
            adding_replicas=self.adding_replicas if r.adding_replicas is None
            else tuple(r.adding_replicas),
            leader=leader,
            leader_epoch=leader_epoch,
            leader_recovery_state=self.leader_recovery_state
            if r.leader_recovery_state == LeaderRecoveryState.NO_CHANGE
            else r.leader_recovery_state,
            partition_epoch=self.partition_epoch + 1,
            elr=self.elr if r.eligible_leader_replicas is None
            else tuple(r.eligible_leader_replicas),
            last_known_elr=self.last_known_elr if r.last_known_elr is None
            else tuple(r.last_known_elr),
        )

    def has_leader(self) -> bool:
        return self.leader != NO_LEADER

    def is_replica(self, broker_id: int) -> bool:
        return broker_id in self.replicas

    @staticmethod
    def election_was_clean(new_leader: int, isr) -> bool:
        """``electionWasClean``: no leader, or a leader taken from the ISR."""
        return new_leader == NO_LEADER or new_leader in isr

    @staticmethod
    def election_was_unclean(leader_recovery_state: int) -> bool:
        """``electionWasUnclean``: the state an unclean election writes (RECOVERING)."""
        return leader_recovery_state == LeaderRecoveryState.RECOVERING

    def preferred_replica(self) -> int:
        """``preferredReplica``: the first replica, or NO_LEADER (-1) without replicas."""
        return self.replicas[0] if self.replicas else NO_LEADER

    def has_preferred_leader(self) -> bool:
        """``hasPreferredLeader``: the leader is the first replica."""
        return self.leader == self.preferred_replica()

    def has_same_assignment(self, other: PartitionRegistration) -> bool:
        """``hasSameAssignment``: same replicas, adding and removing replicas (kafkasim keeps
        no log directories, Kafka's fourth field)."""
        return (self.replicas, self.adding_replicas, self.removing_replicas) == \
            (other.replicas, other.adding_replicas, other.removing_replicas)

    def diff(self, prev: PartitionRegistration) -> str:
        """``diff``: what changed since ``prev``, in Kafka's words and order, e.g.
        ``isr: [1, 2] -> [3], leader: 1 -> 3, leaderEpoch: 0 -> 1, partitionEpoch: 0 -> 1``."""
        names = LeaderRecoveryState.NAMES
        fields = (("replicas", prev.replicas, self.replicas),
                  ("isr", prev.isr, self.isr),
                  ("removingReplicas", prev.removing_replicas, self.removing_replicas),
                  ("addingReplicas", prev.adding_replicas, self.adding_replicas),
                  ("leader", prev.leader, self.leader),
                  ("leaderRecoveryState", names[prev.leader_recovery_state],
                   names[self.leader_recovery_state]),
                  ("leaderEpoch", prev.leader_epoch, self.leader_epoch),
                  ("elr", prev.elr, self.elr),
                  ("lastKnownElr", prev.last_known_elr, self.last_known_elr),
                  ("partitionEpoch", prev.partition_epoch, self.partition_epoch))
        return ", ".join(f"{name}: {_java(before)} -> {_java(after)}"
                         for name, before, after in fields if before != after)

    def to_record(self, topic_id: str, partition_id: int, *, elr_supported: bool = True
                  ) -> PartitionRecord:
        """``toRecord``: the PartitionRecord that rebuilds this registration (``from_record``);
        the ELR fields only when the metadata version supports ELR (``isElrSupported``)."""
        return PartitionRecord(
            partition_id, topic_id, self.replicas, self.isr, self.removing_replicas,
            self.adding_replicas, self.leader, self.leader_recovery_state, self.leader_epoch,
            self.partition_epoch, self.elr if elr_supported else (),
            self.last_known_elr if elr_supported else ())


class IllegalStateException(RuntimeError):
    """java.lang.IllegalStateException (PartitionRegistration.Builder.build)."""


class _PartitionRegistrationBuilder:
    """PartitionRegistration.Builder: set each field (``set_replicas`` ... as Kafka's setters),
    then ``build``, which needs replicas, isr, leader, leader recovery state, leader epoch and
    partition epoch (IllegalStateException "You must set ...", checked in that order); adding
    / removing replicas, ELR and LastKnownElr default to empty. Log directories (Kafka's
    ``setDirectories``) are accepted and ignored."""

    _REQUIRED = (("replicas", "replicas"), ("isr", "isr"), ("leader", "leader"),
                 ("leader_recovery_state", "leader recovery state"),
                 ("leader_epoch", "leader epoch"), ("partition_epoch", "partition epoch"))

    def __init__(self) -> None:
        self._values: dict = {}

    def _set(self, name: str, value) -> _PartitionRegistrationBuilder:
        self._values[name] = value
        return self

    def set_replicas(self, replicas):
        return self._set("replicas", tuple(replicas))

    def set_directories(self, directories):
        return self

    def set_isr(self, isr):
        return self._set("isr", tuple(isr))

    def set_removing_replicas(self, replicas):
        return self._set("removing_replicas", tuple(replicas))

    def set_adding_replicas(self, replicas):
        return self._set("adding_replicas", tuple(replicas))

    def set_elr(self, elr):
        return self._set("elr", tuple(elr))

    def set_last_known_elr(self, last_known_elr):
        return self._set("last_known_elr", tuple(last_known_elr))

    def set_leader(self, leader: int):
        return self._set("leader", leader)

    def set_leader_recovery_state(self, state: int):
        return self._set("leader_recovery_state", state)

    def set_leader_epoch(self, epoch: int):
        return self._set("leader_epoch", epoch)

    def set_partition_epoch(self, epoch: int):
        return self._set("partition_epoch", epoch)

    def build(self) -> PartitionRegistration:
        for name, words in self._REQUIRED:
            if self._values.get(name) is None:
                raise IllegalStateException(f"You must set {words}.")
        return PartitionRegistration(**self._values)


PartitionRegistration.Builder = _PartitionRegistrationBuilder


def _java(value) -> str:
    """Arrays.toString for a replica list, the value itself otherwise."""
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(str(v) for v in value) + "]"
    return str(value)


@dataclass(frozen=True, slots=True)
class BrokerRegistration:
    """org.apache.kafka.metadata.BrokerRegistration."""

    id: int
    epoch: int
    incarnation_id: str
    rack: str | None = None
    fenced: bool = True
    in_controlled_shutdown: bool = False
    listeners: tuple[BrokerEndpoint, ...] | None = None   # None: DEFAULT_END_POINTS

    def node(self, listener_name: str):
        """``node(listenerName)``: (id, host, port, rack) of the broker's listener of that
        name, None (Optional.empty) if it has none."""
        for ep in self.listeners or DEFAULT_END_POINTS:
            if ep.name == listener_name:
                return self.id, ep.host, ep.port, self.rack
        return None

    def to_record(self, metadata_version=None, *,
                  handle_loss: Callable[[UnwritableMetadataException], None] | None = None
                  ) -> RegisterBrokerRecord:
        """``toRecord(ImageWriterOptions)``: the RegisterBrokerRecord that rebuilds this
        registration (a snapshot). The in-controlled-shutdown flag needs metadata.version
        3.3-IV3 (``isInControlledShutdownStateSupported``); an older ``metadata_version`` loses
        it (``handleLoss``: ``handle_loss`` is given the UnwritableMetadataException, which is
        raised without one, as ImageWriterOptions' default loss handler does). Without a
        ``metadata_version``: the latest, which loses nothing."""
        in_controlled_shutdown = self.in_controlled_shutdown
        if in_controlled_shutdown and metadata_version is not None and \
                not metadata_version.is_in_controlled_shutdown_state_supported():
            in_controlled_shutdown = False
            loss = UnwritableMetadataException(
                metadata_version, "the inControlledShutdown state of one or more brokers")
            if handle_loss is None:
                raise loss
            handle_loss(loss)
        return RegisterBrokerRecord(self.id, self.epoch, self.incarnation_id, self.rack,
                                    self.fenced, in_controlled_shutdown, self.listeners)


class UnwritableMetadataException(RuntimeError):
    """org.apache.kafka.image.writer.UnwritableMetadataException: a snapshot at
    ``metadata_version`` cannot represent ``loss``."""

    def __init__(self, metadata_version, loss: str) -> None:
        super().__init__("Metadata has been lost because the following could not be "
                         f"represented in metadata.version {metadata_version}: {loss}")
        self.metadata_version = metadata_version
        self.loss = loss


METADATA_RECORDS = (
    RegisterBrokerRecord, UnregisterBrokerRecord, FenceBrokerRecord, UnfenceBrokerRecord,
    BrokerRegistrationChangeRecord, TopicRecord, ConfigRecord, FeatureLevelRecord,
    PartitionRecord, PartitionChangeRecord, RemoveTopicRecord, ClearElrRecord, NoOpRecord,
    RegisterControllerRecord, UnregisterControllerRecord, ZkMigrationStateRecord,
    BeginTransactionRecord, EndTransactionRecord, AbortTransactionRecord,
)
