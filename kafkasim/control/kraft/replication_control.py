"""ReplicationControlManager: the KRaft controller's topics, partitions, ISRs and elections.

Follows org.apache.kafka.controller.ReplicationControlManager (metadata module, trunk 1eb7644,
2024-10-25) plus the 4.x ``ClearElrRecord`` handling (KAFKA-16540: changing
``min.insync.replicas`` clears ELRs; ``replayClearAllElrs`` / ``replayClearTopicElrs``) and
``createPartitions`` as 4.3.0 has it (the same checks since 3.0).

As in Kafka, generation never mutates: every generating method returns records (and a response)
and state changes only in :meth:`ReplicationControlManager.replay`. Records for the cluster
(broker registration, fencing) are ignored by ``replay`` here; the ClusterControlManager replays
those.

Differences from Kafka, all about order or scope, none about outcomes:

- Kafka walks partitions in the order of its hash maps keyed by random topic UUIDs (BrokersToIsrs,
  imbalancedPartitions), which no two runs share. Here topics are walked in creation order and
  partitions by id, so a batch of PartitionChangeRecords has a stable order.
- Directories (JBOD), create-topic policies and mutation quotas are not modelled.
- ``list_partition_reassignments`` walks topics in creation order and partitions by id (Kafka:
  its reassigningTopics map's hash order, partitions in the order they started reassigning).
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Callable, Iterable
from typing import NamedTuple

from kafkasim.control.kraft.brokers_to_isrs import BrokersToIsrs, TopicControlInfo
from kafkasim.control.kraft.brokers_to_isrs import has_preferred_leader as _has_preferred_leader
from kafkasim.control.kraft.cluster_control import ControllerApiException
from kafkasim.control.kraft.configuration_control import ConfigurationControlManager
from kafkasim.control.kraft.metadata_version import (
    ELR_FEATURE_NAME,
    FEATURE_NAME,
    MetadataVersion,
)
from kafkasim.control.kraft.partition_change import Election, PartitionChangeBuilder
from kafkasim.control.kraft.reassignment import (
    AlterPartitionReassignmentsResponse,
    InvalidReplicaAssignmentException,
    InvalidReplicationFactorException,
    ListPartitionReassignmentsResponse,
    NoReassignmentInProgressException,
    OngoingPartitionReassignment,
    OngoingTopicReassignment,
    PartitionAssignment,
    PartitionReassignmentReplicas,
    PartitionReassignmentRevert,
    ReassignablePartitionResponse,
    ReassignableTopicResponse,
    UnknownTopicOrPartitionException,
    api_error,
    is_reassignment_in_progress,
)
from kafkasim.control.kraft.records import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    ClearElrRecord,
    ConfigRecord,
    FeatureLevelRecord,
    FenceBrokerRecord,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRecord,
    PartitionRegistration,
    RemoveTopicRecord,
    TopicRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafkasim.control.kraft.striped_placer import all_fenced_message, not_enough_brokers_message
from kafkasim.core import errors as E
from kafkasim.settings.javautil import (
    java_hashmap_iteration_order,
    java_parse_int,
    java_string_hash,
    java_string_length,
)

MIN_IN_SYNC_REPLICAS_CONFIG = "min.insync.replicas"
UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG = "unclean.leader.election.enable"
MAX_TOPIC_NAME_LENGTH = 249                     # Topic.MAX_NAME_LENGTH
DEFAULT_MAX_ELECTIONS_PER_IMBALANCE = 1000      # QuorumController.Builder maxElectionsPerImbalance
MAX_PARTITIONS_PER_BATCH = 10_000               # KAFKA-17870: partitions of one CreateTopics
POLICY_VIOLATION = "POLICY_VIOLATION"           # Errors.POLICY_VIOLATION (44)


class CreateTopicResult(NamedTuple):
    """CreateTopicsResponseData.CreatableTopicResult (the fields the simulator needs)."""

    name: str
    topic_id: str | None
    error: str
    error_message: str | None
    num_partitions: int = -1
    replication_factor: int = -1


class CreatableTopic(NamedTuple):
    """CreateTopicsRequestData.CreatableTopic: -1 partitions / replication factor take the
    defaults; ``assignments`` (a list or {partition: replicas}) requires both at -1."""

    name: str
    num_partitions: int = -1
    replication_factor: int = -1
    assignments: list[list[int]] | dict[int, list[int]] | None = None
    configs: dict[str, str | None] | None = None


class CreatePartitionsTopic(NamedTuple):
    """CreatePartitionsRequestData.CreatePartitionsTopic: the topic, its new partition count,
    and the replicas of each added partition (None: the replica placer chooses)."""

    name: str
    count: int
    assignments: list[list[int]] | None = None


class CreatePartitionsTopicResult(NamedTuple):
    """CreatePartitionsResponseData.CreatePartitionsTopicResult."""

    name: str
    error: str = E.NONE
    error_message: str | None = None


class AlterPartitionResult(NamedTuple):
    """AlterPartitionResponseData.PartitionData. On error only ``error`` is meaningful; the
    other fields keep the schema defaults (0 / [] / RECOVERED)."""

    topic: str
    partition: int
    error: str
    leader: int = 0
    leader_epoch: int = 0
    isr: tuple[int, ...] = ()
    partition_epoch: int = 0
    leader_recovery_state: int = LeaderRecoveryState.RECOVERED


class AlterPartitionResponse(NamedTuple):
    error: str                               # top-level (STALE_BROKER_EPOCH)
    partitions: tuple[AlterPartitionResult, ...]
    error_message: str | None = None


class ElectionResultEntry(NamedTuple):
    """ElectLeadersResponseData.PartitionResult."""

    topic: str
    partition: int
    error: str
    error_message: str | None = None


class PolicyViolationException(ControllerApiException):
    """org.apache.kafka.common.errors.PolicyViolationException."""

    error = POLICY_VIOLATION


class ReplicationControlError(Exception):
    """A replayed record that contradicts the controller state (Kafka throws RuntimeException)."""


class _PlacementError(ValueError):
    """InvalidReplicationFactorException from the replica placer."""


def default_topic_id(name: str, incarnation: int = 0) -> str:
    """A stable stand-in for ``Uuid.randomUuid()``: 16 bytes of SHA-256 over the name (and how
    often a topic of that name was deleted before), printed like Kafka's Uuid.toString
    (URL-safe base64, no padding)."""
    digest = hashlib.sha256(f"{name}\x00{incarnation}".encode()).digest()[:16]
    return base64.urlsafe_b64encode(digest).decode().rstrip("=")


def detect_invalid_topic(name: str) -> str | None:
    """Topic.detectInvalidTopic."""
    if name == "":
        return "the empty string is not allowed"
    if name == ".":
        return "'.' is not allowed"
    if name == "..":
        return "'..' is not allowed"
    if java_string_length(name) > MAX_TOPIC_NAME_LENGTH:   # name.length(): UTF-16 units
        return (f"the length of '{name}' is longer than the max allowed length "
                f"{MAX_TOPIC_NAME_LENGTH}")
    if any(not (c.isascii() and (c.isalnum() or c in "._-")) for c in name):
        return f"'{name}' contains one or more characters other than ASCII alphanumerics, " \
               f"'.', '_' and '-'"
    return None


def _validate_isr(replicas: Iterable[int], isr: list[int]) -> bool:
    """Replicas.validateIsr: distinct, non-negative members of the replica set."""
    if not isr:
        return True
    rs = set(replicas)
    return len(set(isr)) == len(isr) and min(isr) >= 0 and all(r in rs for r in isr)


def _to_partition_record(topic_id: str, partition_id: int,
                         p: PartitionRegistration) -> PartitionRecord:
    return PartitionRecord(partition_id=partition_id, topic_id=topic_id, replicas=p.replicas,
                           isr=p.isr, removing_replicas=p.removing_replicas,
                           adding_replicas=p.adding_replicas, leader=p.leader,
                           leader_recovery_state=p.leader_recovery_state,
                           leader_epoch=p.leader_epoch, partition_epoch=p.partition_epoch,
                           eligible_leader_replicas=p.elr, last_known_elr=p.last_known_elr)


def validate_manual_partition_assignment(regs: dict, brokers: list[int],
                                     rf: int | None) -> str | None:
    """validateManualPartitionAssignment (InvalidReplicaAssignmentException messages):
    ``regs`` is the broker registrations (id -> registration)."""
    if not brokers:
        return "The manual partition assignment includes an empty replica list."
    prev = None
    for b in sorted(brokers):
        if b not in regs:
            return (f"The manual partition assignment includes broker {b}, but no such "
                    "broker is registered.")
        if b == prev:
            return (f"The manual partition assignment includes the broker {prev} more "
                    "than once.")
        prev = b
    if rf is not None and len(brokers) != rf:
        return (f"The manual partition assignment includes a partition with {len(brokers)} "
                f"replica(s), but this is not consistent with previous partitions, which "
                f"have {rf} replica(s).")
    return None


def place_replicas(cluster_control, replica_placer, num_partitions: int,
                   rf: int) -> list[list[int]]:
    """StripedReplicaPlacer.place's InvalidReplicationFactorException checks (in its order)
    on the usable brokers (registered, not in controlled shutdown), then ``replica_placer`` (or
    the cluster control's ``place_replicas``)."""
    usable = getattr(cluster_control, "usable_brokers", None)
    if usable is not None:
        brokers = list(usable())
        if rf <= 0:
            raise _PlacementError(f"Invalid replication factor {rf}: the replication "
                                  "factor must be positive.")
        cordoned = cluster_control.cordoned_dirs_in_messages   # KIP-1066 wording (4.3)
        if not any(not getattr(b, "fenced", False) for b in brokers):
            raise _PlacementError(all_fenced_message(cordoned))
        if rf > len(brokers):
            raise _PlacementError(not_enough_brokers_message(rf, len(brokers), cordoned))
    if replica_placer is not None:
        return [list(p) for p in replica_placer(0, num_partitions, rf)]
    return [list(p) for p in cluster_control.place_replicas(0, num_partitions, rf)]


# -- ReplicationControlManager's private helpers, as module functions (the class stays under
# the member limit of tests/test_class_sizes.py); ``self`` is the manager
def _registrations(self) -> dict:
    """The cluster's broker registrations (a map, or the call that gives it)."""
    regs = self.cluster_control.broker_registrations
    return regs() if callable(regs) else regs


def _builder(self, info: TopicControlInfo, partition_id: int,
             acceptor: Callable[[int], bool] | None = None) -> PartitionChangeBuilder:
    """A PartitionChangeBuilder of the partition; ``acceptor`` is the LeaderAcceptor
    (without directories): clusterControl.isActive unless given."""
    if acceptor is None:
        acceptor = self.cluster_control.is_active
    builder = PartitionChangeBuilder(
        info.parts[partition_id], info.id, partition_id, acceptor, self.metadata_version,
        self.get_topic_effective_min_isr(info.name), self.is_elr_enabled())
    for flag, value in self.builder_options.items():
        getattr(builder, f"set_{flag}")(value)
    return builder


def _topic(self, topic: str) -> TopicControlInfo | None:
    """The topic named ``topic`` (or with that id), None if there is none."""
    tid = self._topics_by_name.get(topic)
    if tid is None and topic in self._topics:
        tid = topic
    return None if tid is None else self._topics.get(tid)


def _validate_alter_partition_data(self, broker_id: int, part: PartitionRegistration | None,
                                   leader_epoch: int, partition_epoch: int,
                                   states: list[tuple[int, int]], lrs: int,
                                   request_version: int) -> str:
    """validateAlterPartitionData, check by check."""
    if part is None:
        return E.UNKNOWN_TOPIC_OR_PARTITION
    # a newer epoch than ours: we are probably no longer the active controller
    if leader_epoch > part.leader_epoch or partition_epoch > part.partition_epoch:
        return E.NOT_CONTROLLER
    if leader_epoch < part.leader_epoch:
        return E.FENCED_LEADER_EPOCH
    if broker_id != part.leader:
        return E.INVALID_REQUEST
    if partition_epoch < part.partition_epoch:
        return E.INVALID_UPDATE_VERSION
    new_isr = [b for b, _ in states]
    if not _validate_isr(part.replicas, new_isr):
        return E.INVALID_REQUEST
    if part.leader not in new_isr:          # the ISR must include the current leader
        return E.INVALID_REQUEST
    if lrs == LeaderRecoveryState.RECOVERING and len(new_isr) > 1:
        return E.INVALID_REQUEST
    if part.leader_recovery_state == LeaderRecoveryState.RECOVERED and \
            lrs == LeaderRecoveryState.RECOVERING:
        return E.INVALID_REQUEST
    if self.ineligible_replicas_for_isr(states):
        return E.INELIGIBLE_REPLICA if request_version > 1 else E.OPERATION_NOT_ATTEMPTED
    return E.NONE


class UnknownTopicIdException(ControllerApiException):
    """org.apache.kafka.common.errors.UnknownTopicIdException."""

    error = E.UNKNOWN_TOPIC_ID


class ReplicationControlManager:
    """org.apache.kafka.controller.ReplicationControlManager.

    ``cluster_control`` needs ``is_active(id)`` (registered, unfenced, not in controlled
    shutdown), ``is_unfenced(id)``, ``broker_registrations`` (dict id -> BrokerRegistration)
    and ``place_replicas(start_partition, num_partitions, num_replicas)``; ``usable_brokers()``
    (objects with ``id`` and ``fenced``) is used, when present, for the placer's
    InvalidReplicationFactorException checks, worded as ``cordoned_dirs_in_messages`` says."""

    def __init__(self, cluster_control, *, metadata_version: MetadataVersion | str,
                 elr_enabled: bool, default_min_isr: int = 1, default_unclean: bool = False,
                 topic_id_factory: Callable[[str], str] | None = None, replica_placer=None,
                 default_replication_factor: int = 1, default_num_partitions: int = 1,
                 max_elections_per_imbalance: int = DEFAULT_MAX_ELECTIONS_PER_IMBALANCE,
                 controller_id: int | None = None,
                 last_known_leader_must_be_acceptable: bool = True,
                 last_known_leader_on_leader_loss: bool = True,
                 reassignment_waits_for_adding_replicas_only: bool = True) -> None:
        self.cluster_control = cluster_control
        self.metadata_version = MetadataVersion.parse(metadata_version)
        self.eligible_leader_replicas_enabled = bool(elr_enabled)
        self.topic_id_factory = topic_id_factory
        self.replica_placer = replica_placer
        self.default_replication_factor = default_replication_factor
        self.default_num_partitions = default_num_partitions
        self.max_elections_per_imbalance = max_elections_per_imbalance
        #: the version-dependent PartitionChangeBuilder settings every builder gets (flag ->
        #: value): KAFKA-19522 (4.1.0+; False is 4.0.x), apache/kafka #20629 (4.2.0+; False is
        #: 4.1.x), KAFKA-19975 (4.3.0+; False is 4.2.x)
        self.builder_options: dict[str, bool] = {
            "last_known_leader_must_be_acceptable": bool(last_known_leader_must_be_acceptable),
            "last_known_leader_on_leader_loss": bool(last_known_leader_on_leader_loss),
            "reassignment_waits_for_adding_replicas_only":
                bool(reassignment_waits_for_adding_replicas_only),
        }
        self._topics: dict[str, TopicControlInfo] = {}       # topic id -> info
        self._topics_by_name: dict[str, str] = {}
        self.configuration_control = ConfigurationControlManager(
            controller_id, default_min_isr=default_min_isr, default_unclean=default_unclean,
            elr_enabled=self.is_elr_enabled)
        self.brokers_to_isrs = BrokersToIsrs(self._topics)
        self._deleted_names: dict[str, int] = {}

    # ================================================================= settings / helpers
    def is_elr_enabled(self) -> bool:
        """ReplicationControlManager.isElrEnabled: the feature is on and the metadata.version
        has the ELR fields (4.0-IV1)."""
        return self.eligible_leader_replicas_enabled and self.metadata_version.is_elr_supported()

    def unclean_leader_election_enabled_for_topic(self, topic: str) -> bool:
        """uncleanLeaderElectionEnabledForTopic: Boolean.parseBoolean of the effective value."""
        configs = self.configuration_control
        value = configs.get_topic_config(topic, UNCLEAN_LEADER_ELECTION_ENABLE_CONFIG)
        if value is None:
            return bool(configs.default_unclean)
        return value.lower() == "true"

    def get_topic_effective_min_isr(self, topic: str) -> int:
        """getTopicEffectiveMinIsr: min(min.insync.replicas, the replication factor)."""
        configs = self.configuration_control
        value = configs.get_topic_config(topic, MIN_IN_SYNC_REPLICAS_CONFIG)
        min_isr = configs.default_min_isr if value is None else java_parse_int(value)
        info = self._topics[self._topics_by_name[topic]]
        rf = len(info.parts[0].replicas) if 0 in info.parts else min_isr
        return min(min_isr, rf)

    # ===================================================================== replay
    def replay(self, record, offset: int = 0) -> None:
        """Apply one committed metadata record (ReplicationControlManager.replay overloads;
        ConfigRecord / FeatureLevelRecord as ConfigurationControlManager / FeatureControlManager
        do for the values this manager reads). Other records are ignored."""
        if isinstance(record, TopicRecord):
            _replay_topic(self, record)
        elif isinstance(record, PartitionRecord):
            _replay_partition(self, record)
        elif isinstance(record, PartitionChangeRecord):
            _replay_partition_change(self, record)
        elif isinstance(record, RemoveTopicRecord):
            _replay_remove_topic(self, record)
        elif isinstance(record, ConfigRecord):
            self.configuration_control.replay(record)
        elif isinstance(record, ClearElrRecord):
            _replay_clear_elr(self, record)
        elif isinstance(record, FeatureLevelRecord):
            if record.name == FEATURE_NAME:
                self.metadata_version = MetadataVersion.from_feature_level(record.feature_level)
            elif record.name == ELR_FEATURE_NAME:
                self.eligible_leader_replicas_enabled = record.feature_level >= 1

    # ================================================================ config records
    def config_records(self, resource_type: str, resource_name: str,
                       configs: dict[str, str | None]) -> list:
        """ConfigRecords for a config change plus, with ELR enabled, the ClearElrRecord that
        ConfigurationControlManager.createClearElrRecordsAsNeeded appends for every
        ``min.insync.replicas`` record (a topic's name, or "" for broker / cluster level)."""
        records: list = [ConfigRecord(resource_type, resource_name, k, v)
                         for k, v in configs.items()]
        if self.is_elr_enabled():
            for rec in list(records):
                if rec.name == MIN_IN_SYNC_REPLICAS_CONFIG:
                    records.append(ClearElrRecord(resource_name if resource_type == "TOPIC"
                                                  else ""))
        return records

    # ================================================================== create topics
    def create_topic(self, name: str, num_partitions: int = -1, replication_factor: int = -1,
                     assignment: list[list[int]] | dict[int, list[int]] | None = None,
                     configs: dict[str, str | None] | None = None, *,
                     validate_only: bool = False) -> tuple[list, CreateTopicResult]:
        """createTopics for one CreatableTopic, with Kafka's checks in Kafka's order: topic
        name (Topic.validate, collisions of '.' and '_'), TOPIC_ALREADY_EXISTS, null configs,
        then createTopic (manual assignment or placement). Records: TopicRecord, its
        ConfigRecords, then one PartitionRecord per partition."""
        configs = dict(configs or {})

        def fail(error: str, message: str) -> tuple[list, CreateTopicResult]:
            return [], CreateTopicResult(name, None, error, message)

        error = None
        reason = detect_invalid_topic(name)
        if reason is not None:
            error = (E.INVALID_TOPIC_EXCEPTION, f"Topic name is invalid: {reason}")
        if "." in name or "_" in name:
            normalized = name.replace(".", "_")
            colliding = [n for n in self._topics_by_name if n.replace(".", "_") == normalized]
            if colliding:
                error = (E.INVALID_TOPIC_EXCEPTION,
                         f"Topic '{name}' collides with existing topic: {colliding[0]}")
        if name in self._topics_by_name:
            error = (E.TOPIC_ALREADY_EXISTS, f"Topic '{name}' already exists.")
        if error is not None:
            return fail(*error)
        null_configs = [k for k, v in configs.items() if v is None]
        if null_configs:
            return fail(E.INVALID_CONFIG, "Null value not supported for topic configs: "
                        + ",".join(null_configs))

        new_parts: dict[int, PartitionRegistration] = {}
        if assignment:
            items = (sorted(assignment.items()) if isinstance(assignment, dict)
                     else list(enumerate(assignment)))
            if replication_factor != -1:
                return fail(E.INVALID_REQUEST, "A manual partition assignment was specified, "
                            "but replication factor was not set to -1.")
            if num_partitions != -1:
                return fail(E.INVALID_REQUEST, "A manual partition assignment was specified, "
                            "but numPartitions was not set to -1.")
            rf = None
            for pid, brokers in items:
                brokers = list(brokers)
                if pid in new_parts:
                    return fail(E.INVALID_REPLICA_ASSIGNMENT, "Found multiple manual partition "
                                f"assignments for partition {pid}")
                msg = validate_manual_partition_assignment(_registrations(self), brokers, rf)
                if msg is not None:
                    return fail(E.INVALID_REPLICA_ASSIGNMENT, msg)
                rf = len(brokers)
                isr = [b for b in brokers if self.cluster_control.is_active(b)]
                if not isr:
                    return fail(E.INVALID_REPLICA_ASSIGNMENT, "All brokers specified in the "
                                f"manual partition assignment for partition {pid} are fenced "
                                "or in controlled shutdown.")
                new_parts[pid] = PartitionRegistration(tuple(brokers), tuple(isr), leader=isr[0])
            for i in range(len(new_parts)):
                if i not in new_parts:
                    return fail(E.INVALID_REPLICA_ASSIGNMENT,
                                "partitions should be a consecutive 0-based integer sequence")
        elif replication_factor < -1 or replication_factor == 0:
            return fail(E.INVALID_REPLICATION_FACTOR, "Replication factor must be larger than 0, "
                        "or -1 to use the default value.")
        elif num_partitions < -1 or num_partitions == 0:
            return fail(E.INVALID_PARTITIONS,
                        "Number of partitions was set to an invalid non-positive value.")
        else:
            n = self.default_num_partitions if num_partitions == -1 else num_partitions
            rf = self.default_replication_factor if replication_factor == -1 \
                else replication_factor
            try:
                placements = place_replicas(self.cluster_control, self.replica_placer, n, rf)
            except ValueError as e:
                return fail(E.INVALID_REPLICATION_FACTOR,
                            f"Unable to replicate the partition {rf} time(s): {e}")
            for pid, replicas in enumerate(placements):
                isr = [b for b in replicas if self.cluster_control.is_active(b)]
                if not isr:
                    return fail(E.INVALID_REPLICATION_FACTOR, f"Unable to replicate the "
                                f"partition {rf} time(s): All brokers are currently fenced or "
                                "in controlled shutdown.")
                new_parts[pid] = PartitionRegistration(tuple(replicas), tuple(isr),
                                                       leader=isr[0])

        factory = self.topic_id_factory
        topic_id = factory(name) if factory is not None \
            else default_topic_id(name, self._deleted_names.get(name, 0))
        result = CreateTopicResult(name, topic_id, E.NONE, None, len(new_parts),
                                   len(new_parts[0].replicas))
        if validate_only:
            return [], result
        records: list = [TopicRecord(name, topic_id)]
        for key in java_hashmap_iteration_order(list(configs), java_string_hash):
            records.append(ConfigRecord("TOPIC", name, key, configs[key]))
        for pid in sorted(new_parts):
            records.append(_to_partition_record(topic_id, pid, new_parts[pid]))
        return records, result

    def create_topics(self, topics: Iterable[CreatableTopic], *, validate_only: bool = False
                      ) -> tuple[list, dict[str, CreateTopicResult]]:
        """createTopics for a whole CreateTopicsRequest: validateTotalNumberOfPartitions first
        (PolicyViolationException for the whole request), then ``create_topic`` per topic;
        ``(records, {name: result})``."""
        topics = list(topics)
        self.validate_total_number_of_partitions(topics, self.default_num_partitions)
        records: list = []
        results: dict[str, CreateTopicResult] = {}
        for t in topics:
            topic_records, results[t.name] = self.create_topic(
                t.name, t.num_partitions, t.replication_factor, t.assignments, t.configs,
                validate_only=validate_only)
            records.extend(topic_records)
        return records, results

    @staticmethod
    def validate_total_number_of_partitions(topics: Iterable[CreatableTopic],
                                            default_num_partitions: int) -> None:
        """validateTotalNumberOfPartitions (KAFKA-17870, 4.0.0): a topic counts its manual
        assignment's partitions, else its partition count (-1: the default; zero and other
        negative counts add nothing); more than MAX_PARTITIONS_PER_BATCH in all is refused."""
        total = 0
        for t in topics:
            if t.assignments:
                total += len(t.assignments)
            elif t.num_partitions == -1:
                total += default_num_partitions
            elif t.num_partitions > 0:
                total += t.num_partitions
        if total > MAX_PARTITIONS_PER_BATCH:
            raise PolicyViolationException("Excessively large number of partitions per request.")

    def delete_topic(self, topic: str, *, by_id: bool = False) -> tuple[list, str]:
        """deleteTopics for one topic: a RemoveTopicRecord. An unknown topic is
        UNKNOWN_TOPIC_ID when named by id, UNKNOWN_TOPIC_OR_PARTITION when named by name
        (ControllerApis.deleteTopics)."""
        info = self._topics.get(topic) if by_id else _topic(self, topic)
        if info is None:
            return [], E.UNKNOWN_TOPIC_ID if by_id else E.UNKNOWN_TOPIC_OR_PARTITION
        return [RemoveTopicRecord(info.id)], E.NONE

    # ================================================================ create partitions
    def create_partitions(self, topics: Iterable
                          ) -> tuple[list, list[CreatePartitionsTopicResult]]:
        """createPartitions (CreatePartitions, KIP-195 as KIP-631's controller runs it):
        ``topics`` holds CreatePartitionsTopic-like ``(name, count, assignments or None)``;
        each topic is answered on its own (ApiError.fromThrowable of what ``_create_partitions``
        throws), the records of all go in one atomic batch. The controller mutation quota
        (ThrottlingQuotaExceededException) is not modelled."""
        records: list = []
        results = []
        for topic in topics:
            name, count, assignments = (tuple(topic) + (None,))[:3]
            try:
                records.extend(_create_partitions(self, name, count, assignments))
            except ControllerApiException as e:
                error, message = api_error(e)
                results.append(CreatePartitionsTopicResult(name, error, message))
                continue
            results.append(CreatePartitionsTopicResult(name))
        return records, results

    # ================================================================= AlterPartition
    def alter_partition(self, broker_id: int, broker_epoch: int, topics: Iterable, *,
                        request_version: int = 3) -> tuple[list, AlterPartitionResponse]:
        """alterPartition. ``topics``: (topic, partition, leader_epoch, new_isr,
        partition_epoch, leader_recovery_state) per partition; ``topic`` is the name (v0-1) or
        id (v2+; a name is also accepted); ``new_isr`` holds broker ids or (id, broker epoch)
        pairs (KIP-903, v3). Validation in Kafka's order (validateAlterPartitionData)."""
        regs = _registrations(self)
        reg = regs.get(broker_id)
        if reg is None:
            return [], AlterPartitionResponse(E.STALE_BROKER_EPOCH, (), "No broker registration "
                                              f"found for broker id {broker_id}")
        if reg.epoch != broker_epoch:
            return [], AlterPartitionResponse(E.STALE_BROKER_EPOCH, (), "Expected broker epoch "
                                              f"{reg.epoch}, but got broker epoch {broker_epoch}")
        records: list = []
        results: list[AlterPartitionResult] = []
        for item in topics:
            topic, pid, leader_epoch, new_isr, partition_epoch, *rest = item
            lrs = rest[0] if rest else LeaderRecoveryState.RECOVERED
            states = [(s, -1) if isinstance(s, int) else (s[0], s[1]) for s in new_isr]
            if request_version < 3:
                states = [(b, -1) for b, _ in states]
            info = _topic(self, topic)
            if info is None:
                results.append(AlterPartitionResult(
                    topic, pid, E.UNKNOWN_TOPIC_ID if request_version > 1
                    else E.UNKNOWN_TOPIC_OR_PARTITION))
                continue
            part = info.parts.get(pid)
            error = _validate_alter_partition_data(self, broker_id, part, leader_epoch,
                                                        partition_epoch, states, lrs,
                                                        request_version)
            if error != E.NONE:
                results.append(AlterPartitionResult(topic, pid, error))
                continue
            builder = _builder(self, info, pid)
            if self.unclean_leader_election_enabled_for_topic(info.name):
                builder.set_election(Election.UNCLEAN)
            rec = builder.set_target_isr_with_broker_states(states) \
                .set_target_leader_recovery_state(lrs).build()
            if rec is not None:
                records.append(rec)
                part = part.merge(rec)
                if rec.leader != broker_id and rec.leader != NO_LEADER_CHANGE:
                    # the ISR change completed a reassignment that moved leadership away
                    results.append(AlterPartitionResult(
                        topic, pid, E.NEW_LEADER_ELECTED if request_version > 1
                        else E.FENCED_LEADER_EPOCH))
                    continue
            results.append(AlterPartitionResult(topic, pid, E.NONE, part.leader,
                                                part.leader_epoch, part.isr,
                                                part.partition_epoch,
                                                part.leader_recovery_state))
        return records, AlterPartitionResponse(E.NONE, tuple(results))

    def ineligible_replicas_for_isr(self, states: Iterable[tuple[int, int]]) -> list[str]:
        """ineligibleReplicasForIsr: "id (reason)" for unregistered, shutting-down, fenced or
        epoch-mismatched replicas (epoch -1 skips the epoch check)."""
        regs = _registrations(self)
        out = []
        for b, epoch in states:
            reg = regs.get(b)
            if reg is None:
                out.append(f"{b} (not registered)")
            elif reg.in_controlled_shutdown:
                out.append(f"{b} (shutting down)")
            elif reg.fenced:
                out.append(f"{b} (fenced)")
            elif epoch != -1 and reg.epoch != epoch:
                out.append(f"{b} (broker epoch mismatch: requested={epoch} VS "
                           f"expected={reg.epoch})")
        return out

    # ===================================================== broker state -> partition changes
    def partitions_with_broker_in_isr(self, broker_id: int):
        """BrokersToIsrs.partitionsWithBrokerInIsr."""
        return self.brokers_to_isrs.partitions_with_broker_in_isr(broker_id)

    def partitions_with_broker_in_elr(self, broker_id: int):
        """BrokersToElrs.partitionsWithBrokerInElr."""
        return self.brokers_to_isrs.partitions_with_broker_in_elr(broker_id)

    def generate_leader_and_isr_updates(self, context: str, broker_to_remove: int,
                                        broker_to_add: int, broker_with_unclean_shutdown: int,
                                        records: list, partitions) -> None:
        """generateLeaderAndIsrUpdates: for each partition, drop ``broker_to_remove`` and
        ``broker_with_unclean_shutdown`` from the ISR and re-elect; ``broker_to_add`` counts as
        an acceptable leader even while the cluster still shows it fenced."""
        def acceptable(r: int) -> bool:
            return (r != broker_to_remove and r != broker_with_unclean_shutdown) and \
                (r == broker_to_add or self.cluster_control.is_active(r))

        for info, pid in list(partitions):
            part = info.parts[pid]
            builder = _builder(self, info, pid, acceptable)
            if self.unclean_leader_election_enabled_for_topic(info.name):
                builder.set_election(Election.UNCLEAN)
            if broker_with_unclean_shutdown != NO_LEADER:
                builder.set_unclean_shutdown_replicas([broker_with_unclean_shutdown])
            builder.set_target_isr([r for r in part.isr
                                    if r not in (broker_to_remove, broker_with_unclean_shutdown)])
            rec = builder.build()
            if rec is not None:
                records.append(rec)

    def handle_broker_fenced(self, broker_id: int) -> list:
        """handleBrokerFenced: leave every ISR (re-electing), then the fence record
        (BrokerRegistrationChangeRecord from 3.3-IV2, FenceBrokerRecord before)."""
        reg = _registrations(self).get(broker_id)
        if reg is None:
            raise ReplicationControlError(f"Can't find broker registration for broker {broker_id}")
        records: list = []
        self.generate_leader_and_isr_updates("handleBrokerFenced", broker_id, NO_LEADER,
                                             NO_LEADER, records,
                                             self.brokers_to_isrs.partitions_with_broker_in_isr(broker_id))
        if self.metadata_version.is_broker_registration_change_record_supported():
            records.append(BrokerRegistrationChangeRecord(
                broker_id, reg.epoch, fenced=BrokerRegistrationFencingChange.FENCE))
        else:
            records.append(FenceBrokerRecord(broker_id, reg.epoch))
        return records

    def handle_broker_unregistered(self, broker_id: int, broker_epoch: int) -> list:
        """handleBrokerUnregistered: leave every ISR and ELR, then UnregisterBrokerRecord."""
        records: list = []
        self.generate_leader_and_isr_updates("handleBrokerUnregistered", broker_id, NO_LEADER,
                                             NO_LEADER, records,
                                             self.brokers_to_isrs.partitions_with_broker_in_isr(broker_id))
        self.generate_leader_and_isr_updates("handleBrokerUnregistered", broker_id, NO_LEADER,
                                             NO_LEADER, records,
                                             self.brokers_to_isrs.partitions_with_broker_in_elr(broker_id))
        records.append(UnregisterBrokerRecord(broker_id, broker_epoch))
        return records

    def handle_broker_unfenced(self, broker_id: int, broker_epoch: int) -> list:
        """handleBrokerUnfenced: the unfence record, then elect leaders for leaderless
        partitions (the broker counts as acceptable already)."""
        if self.metadata_version.is_broker_registration_change_record_supported():
            records: list = [BrokerRegistrationChangeRecord(
                broker_id, broker_epoch, fenced=BrokerRegistrationFencingChange.UNFENCE)]
        else:
            records = [UnfenceBrokerRecord(broker_id, broker_epoch)]
        self.generate_leader_and_isr_updates("handleBrokerUnfenced", NO_LEADER, broker_id,
                                             NO_LEADER, records,
                                             self.brokers_to_isrs.partitions_with_no_leader())
        return records

    def handle_broker_in_controlled_shutdown(self, broker_id: int, broker_epoch: int) -> list:
        """handleBrokerInControlledShutdown (KIP-841): the InControlledShutdown record (from
        3.3-IV3, if not already set), then leave every ISR, moving leadership away."""
        records: list = []
        reg = _registrations(self).get(broker_id)
        in_shutdown = reg is not None and reg.in_controlled_shutdown
        if self.metadata_version.is_in_controlled_shutdown_state_supported() and not in_shutdown:
            records.append(BrokerRegistrationChangeRecord(
                broker_id, broker_epoch, in_controlled_shutdown=(
                    BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN)))
        self.generate_leader_and_isr_updates(f"enterControlledShutdown[{broker_id}]", broker_id,
                                             NO_LEADER, NO_LEADER, records,
                                             self.brokers_to_isrs.partitions_with_broker_in_isr(broker_id))
        return records

    def handle_broker_unclean_shutdown(self, broker_id: int) -> list:
        """handleBrokerUncleanShutdown (KIP-966): from metadata.version 4.0-IV1, a broker that
        restarted after an unclean shutdown leaves every ISR and ELR."""
        if not self.metadata_version.is_elr_supported():
            return []
        records: list = []
        self.generate_leader_and_isr_updates("handleBrokerUncleanShutdown", NO_LEADER, NO_LEADER,
                                             broker_id, records,
                                             self.brokers_to_isrs.partitions_with_broker_in_isr(broker_id))
        self.generate_leader_and_isr_updates("handleBrokerUncleanShutdown", NO_LEADER, NO_LEADER,
                                             broker_id, records,
                                             self.brokers_to_isrs.partitions_with_broker_in_elr(broker_id))
        return records

    def handle_broker_shutdown(self, broker_id: int, is_clean_shutdown: bool) -> list:
        """handleBrokerShutdown (4.0+, KAFKA-18106 / KAFKA-18635), run when a new incarnation of
        the broker registers: an unclean restart while ELR is on leaves every ISR and ELR
        (handleBrokerUncleanShutdown); a clean restart, or any restart with ELR off, leaves
        the ISRs as a fenced broker does, moving leadership away."""
        if self.is_elr_enabled() and not is_clean_shutdown:
            return self.handle_broker_unclean_shutdown(broker_id)
        records: list = []
        self.generate_leader_and_isr_updates("handleBrokerShutdown", broker_id, NO_LEADER,
                                             NO_LEADER, records,
                                             self.brokers_to_isrs.partitions_with_broker_in_isr(broker_id))
        return records

    def process_expired_broker_heartbeat(self, broker_id: int, broker_epoch: int,
                                         current_metadata_offset: int,
                                         now_ms: int | None = None) -> None:
        """processExpiredBrokerHeartbeat (3.5.0+): a heartbeat that timed out in the
        controller's overloaded event queue still renews the broker's session (checkBrokerEpoch
        first, then heartbeatManager.touch with the registration's fencing and the reported
        metadata offset); it writes nothing. kafkasim's QuorumController has no event-queue
        deadlines, so only a caller such as Kafka's test reaches it."""
        cc = self.cluster_control
        cc.check_broker_epoch(broker_id, broker_epoch)
        cc.heartbeat_manager.touch(broker_id, cc.broker_registrations[broker_id].fenced,
                                   current_metadata_offset, cc._clock(now_ms))

    def handle_broker_state_change(self, broker_id: int, broker_epoch: int, current_state,
                                   next_state) -> list:
        """The switch in processBrokerHeartbeat: records for a BrokerControlState transition
        computed by BrokerHeartbeatManager.calculateNextBrokerState (states by name or by an
        object with ``name``): FENCED / SHUTDOWN_NOW fence, UNFENCED unfences,
        CONTROLLED_SHUTDOWN starts a controlled shutdown; no transition, no records."""
        cur = getattr(current_state, "name", current_state)
        nxt = getattr(next_state, "name", next_state)
        if cur == nxt:
            return []
        if nxt in ("FENCED", "SHUTDOWN_NOW"):
            return self.handle_broker_fenced(broker_id)
        if nxt == "UNFENCED":
            return self.handle_broker_unfenced(broker_id, broker_epoch)
        if nxt == "CONTROLLED_SHUTDOWN":
            return self.handle_broker_in_controlled_shutdown(broker_id, broker_epoch)
        raise ValueError(f"unknown BrokerControlState {nxt!r}: FENCED, UNFENCED, "
                         "CONTROLLED_SHUTDOWN or SHUTDOWN_NOW")

    # ======================================================================== elections
    def elect_leaders(self, election_type: str | int,
                      partitions: Iterable[tuple[str, int]] | None
                      ) -> tuple[list, list[ElectionResultEntry]]:
        """electLeaders (kafka-leader-election.sh, KIP-460). ``election_type`` is PREFERRED
        (0) or UNCLEAN (1); ``partitions`` None means every partition, and then partitions
        that need no election are left out of the results."""
        etype = {0: "PREFERRED", 1: "UNCLEAN"}.get(election_type, election_type)
        if etype not in ("PREFERRED", "UNCLEAN"):
            raise ValueError(f"Unknown election type {election_type} (InvalidRequestException;"
                             f" ElectionType is PREFERRED (0) or UNCLEAN (1))")
        records: list = []
        results: list[ElectionResultEntry] = []
        if partitions is None:
            for info in list(self._topics.values()):
                for pid in sorted(info.parts):
                    error, msg = self.elect_leader(info.name, pid, etype, records)
                    if error != E.ELECTION_NOT_NEEDED:
                        results.append(ElectionResultEntry(info.name, pid, error, msg))
        else:
            for topic, pid in partitions:
                error, msg = self.elect_leader(topic, pid, etype, records)
                results.append(ElectionResultEntry(topic, pid, error, msg))
        return records, results

    def elect_leader(self, topic: str, partition_id: int, election_type: str,
                     records: list) -> tuple[str, str | None]:
        """electLeader: ELECTION_NOT_NEEDED when the preferred replica already leads
        (PREFERRED) or there is a leader (UNCLEAN); PREFERRED_LEADER_NOT_AVAILABLE /
        ELIGIBLE_LEADERS_NOT_AVAILABLE when the builder changes nothing."""
        tid = self._topics_by_name.get(topic)
        if tid is None:
            return E.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic as {topic}"
        info = self._topics.get(tid)
        if info is None:
            return E.UNKNOWN_TOPIC_OR_PARTITION, f"No such topic id as {tid}"
        part = info.parts.get(partition_id)
        if part is None:
            return E.UNKNOWN_TOPIC_OR_PARTITION, f"No such partition as {topic}-{partition_id}"
        if (election_type == "PREFERRED" and _has_preferred_leader(part)) or \
                (election_type == "UNCLEAN" and part.has_leader()):
            return E.ELECTION_NOT_NEEDED, None
        election = Election.UNCLEAN if election_type == "UNCLEAN" else Election.PREFERRED
        rec = _builder(self, info, partition_id).set_election(election).build()
        if rec is None:
            return (E.PREFERRED_LEADER_NOT_AVAILABLE if election_type == "PREFERRED"
                    else E.ELIGIBLE_LEADERS_NOT_AVAILABLE), None
        records.append(rec)
        return E.NONE, None

    def are_partition_leaders_imbalanced(self) -> bool:
        return bool(self.brokers_to_isrs.imbalanced_partitions())

    def are_some_partitions_leaderless(self) -> bool:
        return next(iter(self.brokers_to_isrs.partitions_with_no_leader()), None) is not None

    def maybe_balance_partition_leaders(self) -> tuple[list, bool]:
        """maybeBalancePartitionLeaders: a PREFERRED election for imbalanced partitions, at most
        ``max_elections_per_imbalance`` (1000) records; True = reschedule immediately. KRaft
        never reads leader.imbalance.per.broker.percentage (4.0 removed the key)."""
        records: list = []
        for info, pid in list(self.brokers_to_isrs.iter_partitions(
                lambda p: not _has_preferred_leader(p))):
            if len(records) >= self.max_elections_per_imbalance:
                break
            rec = _builder(self, info, pid) \
                .set_election(Election.PREFERRED).build()
            if rec is not None:
                records.append(rec)
        return records, len(records) >= self.max_elections_per_imbalance

    def maybe_elect_unclean_leaders(self, *, with_reschedule: bool = False):
        """maybeElectUncleanLeaders (run every unclean.leader.election.interval.ms): an
        UNCLEAN election for leaderless partitions of topics that allow it, at most
        ``max_elections_per_imbalance`` records. Returns the records; with
        ``with_reschedule=True`` (records, reschedule_immediately) as Kafka's
        ControllerResult<Boolean>."""
        records: list = []
        for info, pid in list(self.brokers_to_isrs.partitions_with_no_leader()):
            if len(records) >= self.max_elections_per_imbalance:
                break
            if self.unclean_leader_election_enabled_for_topic(info.name):
                self.elect_leader(info.name, pid, "UNCLEAN", records)
        if with_reschedule:
            return records, len(records) >= self.max_elections_per_imbalance
        return records

    # ========================================================== partition reassignment
    def alter_partition_reassignments(self, topics: Iterable, *,
                                      allow_replication_factor_change: bool = True
                                      ) -> tuple[list, AlterPartitionReassignmentsResponse]:
        """alterPartitionReassignments (KIP-455): ``topics`` holds ReassignableTopic-like
        ``(name, [(partition_index, replicas or None)])``; a target list starts (or replaces) a
        reassignment, None cancels one. Each partition is answered on its own (its error, and
        the message unless it is the error's default); the records go in one atomic batch.
        ``allow_replication_factor_change`` False (KIP-860, AlterPartitionReassignments v1,
        4.1.0) refuses a target whose size differs from the partition's replication factor
        (validatePartitionReplicationFactorUnchanged); older requests always allow it."""
        records: list = []
        responses = []
        for name, partitions in topics:
            answers = []
            for partition_index, replicas in partitions:
                try:
                    rec = _alter_partition_reassignment(self, name, partition_index, replicas,
                                                        allow_replication_factor_change)
                except ControllerApiException as e:
                    answers.append(ReassignablePartitionResponse(partition_index, *api_error(e)))
                    continue
                if rec is not None:
                    records.append(rec)
                answers.append(ReassignablePartitionResponse(partition_index))
            responses.append(ReassignableTopicResponse(name, tuple(answers)))
        return records, AlterPartitionReassignmentsResponse(
            tuple(responses), allow_replication_factor_change=allow_replication_factor_change)

    def list_partition_reassignments(self, topics: Iterable | None = None,
                                     epoch: int | None = None
                                     ) -> ListPartitionReassignmentsResponse:
        """listPartitionReassignments: the partitions being reassigned, of every topic
        (``topics`` None) or of the ListPartitionReassignmentsTopics-like ``(name,
        partition_indexes)`` given (unknown names and partitions are left out). Kafka reads the
        timeline at ``epoch`` (the last committed offset); kafkasim keeps no snapshots and reads
        the latest state."""
        if topics is None:
            wanted = [(info, sorted(info.parts)) for info in self._topics.values()]
        else:
            wanted = [(self._topics[self._topics_by_name[name]], list(pids))
                      for name, pids in topics if name in self._topics_by_name]
        out = []
        for info, pids in wanted:
            ongoing = tuple(OngoingPartitionReassignment(pid, p.replicas, p.adding_replicas,
                                                         p.removing_replicas)
                            for pid in pids if (p := info.parts.get(pid)) is not None
                            and is_reassignment_in_progress(p))
            if ongoing:
                out.append(OngoingTopicReassignment(info.name, ongoing))
        return ListPartitionReassignmentsResponse(tuple(out))

    # ======================================================================== read side
    def partition(self, topic: str, partition: int) -> PartitionRegistration | None:
        info = _topic(self, topic)
        return None if info is None else info.parts.get(partition)

    def topic_id(self, topic: str) -> str | None:
        return self._topics_by_name.get(topic)

    # Kafka's lookups by their names (ReplicationControlManager @3.7.0 - 4.3.0)
    def get_partition(self, topic_id: str, partition_id: int) -> PartitionRegistration | None:
        """getPartition: the partition of the topic with id ``topic_id``, None if either is
        unknown."""
        info = self._topics.get(topic_id)
        return None if info is None else info.parts.get(partition_id)

    def get_topic(self, topic_id: str) -> TopicControlInfo:
        """getTopic: the topic's TopicControlInfo; an unknown id raises
        UnknownTopicIdException (UNKNOWN_TOPIC_ID)."""
        info = self._topics.get(topic_id)
        if info is None:
            raise UnknownTopicIdException(f"No topic with id {topic_id} found.")
        return info

    def get_topic_id(self, topic_name: str) -> str:
        """getTopicId: the id of the topic named ``topic_name``; an unknown name raises
        UnknownTopicOrPartitionException."""
        topic_id = self._topics_by_name.get(topic_name)
        if topic_id is None:
            raise UnknownTopicOrPartitionException(f"Unknown topic {topic_name}")
        return topic_id

    def brokers_to_elrs(self) -> BrokersToIsrs:
        """brokersToElrs: kafkasim's BrokersToIsrs answers the ELR queries too
        (``partitions_with_broker_in_elr``)."""
        return self.brokers_to_isrs

    def topic_name(self, topic_id: str) -> str | None:
        info = self._topics.get(topic_id)
        return None if info is None else info.name

    def topics(self) -> dict[str, dict[int, PartitionRegistration]]:
        return {info.name: dict(sorted(info.parts.items())) for info in self._topics.values()}

    def topic_config(self, topic: str) -> dict[str, str]:
        return self.configuration_control.current_topic_config(topic)

    def offline_partitions_count(self) -> int:
        """OfflinePartitionsCount: partitions without a leader."""
        return self.brokers_to_isrs.offline_partitions_count()

    def partitions_led_by(self, broker_id: int) -> list[tuple[str, int]]:
        """BrokersToIsrs.partitionsLedByBroker, as (topic name, partition) pairs."""
        return self.brokers_to_isrs.partitions_led_by_broker(broker_id)

    def preferred_replica_imbalance_count(self) -> int:
        """PreferredReplicaImbalanceCount: partitions not led by their first replica."""
        return len(self.brokers_to_isrs.imbalanced_partitions())


# -- partition reassignment: ReplicationControlManager's per-partition steps ----------------------
class InvalidPartitionsException(ControllerApiException):
    """org.apache.kafka.common.errors.InvalidPartitionsException."""

    error = E.INVALID_PARTITIONS


def _create_partitions(rc: ReplicationControlManager, name: str, count: int,
                       assignments) -> list:
    """ReplicationControlManager.createPartitions(context, topic, records): Kafka's checks in
    its order (unknown topic, count not an increase, assignments not matching the added
    partitions, each manual assignment as validateManualPartitionAssignment with the topic's
    replication factor and with some active broker), then one PartitionRecord per added
    partition: its ISR is the active replicas, its leader the first of them."""
    info = _topic(rc, name)
    if info is None or info.name != name:
        raise UnknownTopicOrPartitionException()
    current = len(info.parts)
    if count == current:
        raise InvalidPartitionsException(f"Topic already has {current} partition(s).")
    if count < current:
        raise InvalidPartitionsException(
            f"The topic {name} currently has {current} partition(s); {count} would not be an "
            "increase.")
    additional = count - current
    if assignments is not None and len(assignments) != additional:
        raise InvalidReplicaAssignmentException(
            f"Attempted to add {additional} additional partition(s), but only "
            f"{len(assignments)} assignment(s) were specified.")
    rf = len(next(iter(info.parts.values())).replicas)
    active = rc.cluster_control.is_active
    if assignments is not None:
        placements = []
        for i, brokers in enumerate(assignments):
            brokers = list(getattr(brokers, "broker_ids", brokers))
            msg = validate_manual_partition_assignment(_registrations(rc), brokers, rf)
            if msg is not None:
                raise InvalidReplicaAssignmentException(msg)
            if not any(active(b) for b in brokers):
                raise InvalidReplicaAssignmentException(
                    "All brokers specified in the manual partition assignment for partition "
                    f"{current + i} are fenced or in controlled shutdown.")
            placements.append(brokers)
    else:
        try:
            placements = place_replicas(rc.cluster_control, rc.replica_placer, additional, rf)
        except ValueError as e:
            raise InvalidReplicationFactorException(str(e)) from None
    records = []
    for pid, replicas in enumerate(placements, start=current):
        isr = [b for b in replicas if active(b)]
        if not isr:
            raise InvalidReplicationFactorException(
                f"Unable to replicate the partition {rf} time(s): All brokers are currently "
                "fenced or in controlled shutdown.")
        part = PartitionRegistration(tuple(replicas), tuple(isr), leader=isr[0])
        records.append(_to_partition_record(info.id, pid, part))
    return records


def _alter_partition_reassignment(rc: ReplicationControlManager, topic_name: str,
                                  partition_index: int, replicas, allow_rf_change: bool = True
                                  ) -> PartitionChangeRecord | None:
    """alterPartitionReassignment: find the partition, then cancel (``replicas`` None) or
    change its reassignment."""
    topic_id = rc._topics_by_name.get(topic_name)
    if topic_id is None:
        raise UnknownTopicOrPartitionException(f"Unable to find a topic named {topic_name}.")
    info = rc._topics.get(topic_id)
    if info is None:
        raise UnknownTopicOrPartitionException(f"Unable to find a topic with ID {topic_id}.")
    part = info.parts.get(partition_index)
    if part is None:
        raise UnknownTopicOrPartitionException(
            f"Unable to find partition {topic_name}:{partition_index}.")
    if replicas is None:
        return _cancel_partition_reassignment(rc, info, partition_index, part)
    return _change_partition_reassignment(rc, info, partition_index, part, list(replicas),
                                          allow_rf_change)


def _cancel_partition_reassignment(rc: ReplicationControlManager, info: TopicControlInfo,
                                   partition_id: int, part: PartitionRegistration
                                   ) -> PartitionChangeRecord | None:
    """cancelPartitionReassignment: back to the replicas before the reassignment
    (PartitionReassignmentRevert); an ISR of adding replicas only reverts to an unclean ISR,
    allowed only with unclean.leader.election.enable for the topic."""
    if not is_reassignment_in_progress(part):
        raise NoReassignmentInProgressException()
    revert = PartitionReassignmentRevert(part)
    unclean = rc.unclean_leader_election_enabled_for_topic(info.name)
    if revert.unclean and not unclean:
        raise InvalidReplicaAssignmentException(
            f"Unable to revert partition assignment for {info.name}:{partition_id} because it "
            "would require an unclean leader election.")
    builder = _builder(rc, info, partition_id)
    if unclean:
        builder.set_election(Election.UNCLEAN)
    return builder.set_target_isr(revert.isr).set_target_replicas(revert.replicas) \
        .set_target_removing([]).set_target_adding([]).build()


def _change_partition_reassignment(rc: ReplicationControlManager, info: TopicControlInfo,
                                   partition_id: int, part: PartitionRegistration,
                                   target: list[int], allow_rf_change: bool = True
                                   ) -> PartitionChangeRecord | None:
    """changePartitionReassignment: a valid manual assignment (registered brokers, each once;
    fenced ones allowed), the replication factor check unless ``allow_rf_change``, then
    PartitionReassignmentReplicas(current, target) into the builder, which completes the
    reassignment at once when the ISR already allows it."""
    message = validate_manual_partition_assignment(_registrations(rc), target, None)
    if message is not None:
        raise InvalidReplicaAssignmentException(message)
    if not allow_rf_change:
        _validate_partition_replication_factor_unchanged(part, target)
    current = list(part.replicas)
    reassignment = PartitionReassignmentReplicas(PartitionAssignment(tuple(current)),
                                                 PartitionAssignment(tuple(target)))
    builder = _builder(rc, info, partition_id)
    if reassignment.replicas != current:
        builder.set_target_replicas(reassignment.replicas)
    if reassignment.removing:
        builder.set_target_removing(reassignment.removing)
    if reassignment.adding:
        builder.set_target_adding(reassignment.adding)
    return builder.build()


def _validate_partition_replication_factor_unchanged(part: PartitionRegistration,
                                                     target: list[int]) -> None:
    """validatePartitionReplicationFactorUnchanged (KIP-860, 4.1.0): the current size is the
    replicas' count, or while a reassignment is in progress the size of its target (replicas
    and adding, less removing)."""
    if is_reassignment_in_progress(part):
        current = len((set(part.replicas) | set(part.adding_replicas))
                      - set(part.removing_replicas))
    else:
        current = len(part.replicas)
    if current != len(target):
        raise InvalidReplicationFactorException(
            f"The replication factor is changed from {current} to {len(target)}")


# ------------------------------------------------ replay (ReplicationControlManager.replay)
def _replay_topic(rcm: ReplicationControlManager, r: TopicRecord) -> None:
    existing = rcm._topics_by_name.get(r.name)
    if existing is not None:
        if existing == r.topic_id:
            raise ReplicationControlError(
                f"Found duplicate TopicRecord for {r.name} with topic ID {r.topic_id}")
        raise ReplicationControlError(
            f"Found duplicate TopicRecord for {r.name} with a different ID than before. "
            f"Previous ID was {existing} and new ID is {r.topic_id}")
    rcm._topics_by_name[r.name] = r.topic_id
    rcm._topics[r.topic_id] = TopicControlInfo(r.name, r.topic_id)


def _partition_topic(rcm: ReplicationControlManager, r) -> TopicControlInfo:
    """The topic a PartitionRecord or PartitionChangeRecord names (replayed in that order)."""
    info = rcm._topics.get(r.topic_id)
    if info is None:
        raise ReplicationControlError(
            f"Tried to create partition {r.topic_id}:{r.partition_id}, but no topic with "
            f"that ID was found.")
    return info


def _replay_partition(rcm: ReplicationControlManager, r: PartitionRecord) -> None:
    info = _partition_topic(rcm, r)
    info.parts[r.partition_id] = PartitionRegistration.from_record(r)


def _replay_partition_change(rcm: ReplicationControlManager, r: PartitionChangeRecord) -> None:
    info = _partition_topic(rcm, r)
    prev = info.parts.get(r.partition_id)
    if prev is None:
        raise ReplicationControlError(
            f"Tried to create partition {r.topic_id}:{r.partition_id}, but no partition "
            f"with that id was found.")
    info.parts[r.partition_id] = prev.merge(r)


def _replay_remove_topic(rcm: ReplicationControlManager, r: RemoveTopicRecord) -> None:
    info = rcm._topics.pop(r.topic_id, None)
    if info is None:
        raise ReplicationControlError(f"Can't find topic with ID {r.topic_id} to remove.")
    del rcm._topics_by_name[info.name]
    rcm.configuration_control.delete_topic_configs(info.name)
    rcm._deleted_names[info.name] = rcm._deleted_names.get(info.name, 0) + 1


def _replay_clear_elr(rcm: ReplicationControlManager, r: ClearElrRecord) -> None:
    """replayClearAllElrs / replayClearTopicElrs: every partition with an ELR or
    LastKnownElr gets both emptied (a merge, so its partition epoch grows)."""
    if r.topic_name:
        info = _topic(rcm, r.topic_name)
        if info is None:
            raise ReplicationControlError(
                f"Unable to find a topic named {r.topic_name} in order to clear its ELRs.")
        infos = [info]
    else:
        infos = list(rcm._topics.values())
    for info in infos:
        for pid, p in list(info.parts.items()):
            if p.elr or p.last_known_elr:
                info.parts[pid] = p.merge(PartitionChangeRecord(
                    partition_id=pid, topic_id=info.id, eligible_leader_replicas=(),
                    last_known_elr=()))
