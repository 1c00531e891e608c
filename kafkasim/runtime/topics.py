"""The cluster's topics (``TopicRegistry``, ``cluster.topics``) and how a topic is created.

``create_topic`` is what ``kafka-topics --create`` / Admin.createTopics makes the cluster do:
validate the name (``invalid_topic_reason``, Kafka's ``Topic.validate``) and a manual assignment
(``validate_assignment``), place the replicas, then write the topic to ZooKeeper (the controller
elects the leaders) or send CreateTopics to the KRaft quorum (ReplicationControlManager
.createTopic). ``topic_ready`` tells when every replica knows its role.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, field

from kafkasim.control.placement import PlacementError, assign_replicas_to_brokers
from kafkasim.runtime.describe import topic_id
from kafkasim.settings import config as kconfig
from kafkasim.settings import limits
from kafkasim.settings.exceptions import ClusterError
from kafkasim.settings.javautil import JavaRandom

TOPIC_READY_TIMEOUT_MS = 30000
_TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
TOPIC_NAME_MAX_LENGTH = 249   # org.apache.kafka.common.internals.Topic.MAX_NAME_LENGTH


@dataclass(slots=True)
class TopicRegistry:
    """Every topic the Admin API created, and the configuration it resolves to.

    ``configs`` are the effective topic configs (topic overrides over the broker's defaults),
    ``overrides`` the topic-level overrides (CreateTopics configs, AlterConfigs),
    ``broker_overrides`` the cluster-wide broker overrides the topic configs inherit (static
    config plus AlterConfigs on the default broker), ``ids`` the topic ids, ``partition_counts``
    the partitions of each topic and ``placement_rng`` the replica placement's random source
    (AdminUtils.assignReplicasToBrokers)."""

    configs: dict[str, dict] = field(default_factory=dict)
    overrides: dict[str, dict] = field(default_factory=dict)
    broker_overrides: dict = field(default_factory=dict)
    ids: dict[str, str] = field(default_factory=dict)
    partition_counts: dict[str, int] = field(default_factory=dict)
    placement_rng: JavaRandom | None = None

    def names(self) -> list[str]:
        return sorted(self.configs)

    def add(self, name: str, overrides: dict, config: dict, tid: str, partitions: int) -> None:
        """Record a created topic."""
        self.overrides[name] = overrides
        self.configs[name] = config
        self.ids[name] = tid
        self.partition_counts[name] = partitions

    def unknown_topic_message(self, name) -> str:
        close = difflib.get_close_matches(str(name), list(self.configs), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        return f"Topic '{name}' does not exist (UNKNOWN_TOPIC_OR_PARTITION).{hint}"

    def check_topic(self, name) -> None:
        """ClusterError (UNKNOWN_TOPIC_OR_PARTITION, with the closest name) unless ``name``
        exists; a name that is not a string is named as such."""
        if type(name) is not str:
            raise ClusterError(f"a topic name is a string, such as 't', got {name!r} "
                               f"({type(name).__name__})")
        if name not in self.configs:
            raise ClusterError(self.unknown_topic_message(name))

    def partition_count(self, topic: str) -> int:
        self.check_topic(topic)
        return self.partition_counts[topic]

    def check_partition(self, topic: str, partition: int) -> None:
        n = self.partition_count(topic)
        if isinstance(partition, bool) or not isinstance(partition, int):
            raise ClusterError(f"partition must be a partition index (an int from 0 to {n - 1} "
                               f"for topic '{topic}'), got {partition!r} "
                               f"({type(partition).__name__})")
        if not 0 <= partition < n:
            raise ClusterError(f"Topic '{topic}' has partitions 0..{n - 1}; partition "
                               f"{partition} does not exist (UNKNOWN_TOPIC_OR_PARTITION)")

    def reconfigure(self, broker_config: dict, kafka_version: str) -> None:
        """Resolve every topic's config again over changed broker defaults."""
        for t, ov in self.overrides.items():
            self.configs[t] = kconfig.topic_config(ov, broker_config, kafka_version)


def invalid_topic_reason(name) -> str | None:
    """Why ``name`` is not a legal topic name, or None: the rules of Kafka's
    ``Topic.validate`` / ``detectInvalidTopic`` (clients, 2.x to trunk): not empty, not ``.``
    or ``..``, at most 249 characters, only ASCII alphanumerics, ``.``, ``_`` and ``-``."""
    if not isinstance(name, str):
        return f"a topic name is a string, got {name!r}"
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name) > TOPIC_NAME_MAX_LENGTH:
        return (f"the length of '{name}' is longer than the max allowed length "
                f"{TOPIC_NAME_MAX_LENGTH}")
    if any(ch not in _TOPIC_CHARS for ch in name):
        return (f"'{name}' contains one or more characters other than ASCII alphanumerics, "
                "'.', '_' and '-'")
    return None


def create_topic(cluster, name: str, partitions: int, replication_factor: int | None,
                 assignment: list[list[int]] | None, config: dict | None,
                 wait: bool) -> dict[int, list[int]]:
    """``Cluster.create_topic``: validate, place, write; with ``wait`` run until ready."""
    reason = invalid_topic_reason(name)
    if reason is not None:
        raise ClusterError(f"Topic name is invalid: {reason} (INVALID_TOPIC_EXCEPTION)")
    topics = cluster.topics
    check_topic_size(topics, partitions, replication_factor, assignment)
    if name in topics.configs:
        raise ClusterError(f"Topic '{name}' already exists. (TOPIC_ALREADY_EXISTS)")
    overrides = dict(config or {})
    tconf = kconfig.topic_config(overrides, cluster.broker_config, cluster.kafka_version)
    if cluster.kraft is not None:
        assign = _create_topic_kraft(cluster, name, partitions, replication_factor, assignment,
                                     overrides)
    else:
        assign = _create_topic_zk(cluster, name, partitions, replication_factor, assignment)
    new_id = topic_id(name, cluster.engine.seed)
    topics.add(name, overrides, tconf, new_id, len(assign))
    if cluster.kraft is None:
        znode = {"version": 3, "partitions": {str(p): r for p, r in assign.items()},
                 "adding_replicas": {}, "removing_replicas": {}}
        if cluster.rules.controller.zk_topic_ids:
            # AdminZkClient.writeTopicPartitionAssignment (usesTopicId, 2.8+): the new topic's
            # id in its znode (TopicZNode.encode), the one kafka-topics --describe prints
            znode["topic_id"] = new_id
        cluster.zk.create(f"/brokers/topics/{name}", json.dumps(znode, separators=(",", ":")))
        cluster.engine.schedule(0, "controller_event", "topic_change", (name,))
    if wait:
        cluster.run_until(lambda c: topic_ready(c, name), timeout_ms=TOPIC_READY_TIMEOUT_MS)
    return assign


def check_topic_size(topics: TopicRegistry, partitions, replication_factor,
                     assignment) -> None:
    """The argument types of ``create_topic`` and the partition limit, before any work: a count
    that is not an int is named with its type, and a cluster may hold at most
    ``limits.MAX_PARTITIONS`` partitions over all its topics (Kafka's own bounds, like
    INVALID_PARTITIONS for 0, are checked later, as Kafka's controller does)."""
    for arg, value in (("partitions", partitions), ("replication_factor", replication_factor)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, int)):
            raise ClusterError(f"create_topic: {arg} must be a whole number (an int), got "
                               f"{value!r} ({type(value).__name__})")
    conflict = assignment_conflict(None if partitions == 1 else partitions,
                                   replication_factor, assignment)
    if conflict:
        raise ClusterError(f"create_topic: {conflict}")
    count = len(assignment) if assignment is not None else partitions
    if count is not None and count > 0:
        held = sum(topics.partition_counts.values())
        if held + count > limits.MAX_PARTITIONS:
            raise ClusterError(
                f"create_topic: {count:,} partitions would bring the cluster to "
                f"{held + count:,}, over limits.MAX_PARTITIONS = {limits.MAX_PARTITIONS:,} "
                f"(this cluster already holds {held:,})")


def assignment_conflict(partitions, replication_factor, assignment) -> str | None:
    """Why a partition count or replication factor given next to a manual ``assignment``
    contradicts it (None when either is left out or agrees). Kafka's CreateTopics refuses
    both at once (INVALID_REQUEST: "Both numPartitions or replicationFactor and
    replicasAssignments were set"); here a value the assignment implies is accepted, and one
    it contradicts is refused instead of silently ignored."""
    if not isinstance(assignment, (list, tuple)) or not assignment:
        return None
    rf = len(assignment[0]) if isinstance(assignment[0], (list, tuple)) else None
    for arg, value, implied in (("partitions", partitions, len(assignment)),
                                ("replication_factor", replication_factor, rf)):
        if value is not None and implied is not None and value != implied:
            return (f"{arg}={value!r} contradicts the replica assignment, which gives "
                    f"{implied} (give the assignment alone; Kafka's CreateTopics refuses both "
                    "with INVALID_REQUEST)")
    return None


def _create_topic_zk(cluster, name, partitions, replication_factor,
                     assignment) -> dict[int, list[int]]:
    """ZooKeeper mode: the replicas of each partition (AdminZkClient.createTopic: a manual
    assignment or AdminUtils.assignReplicasToBrokers over the live brokers)."""
    if assignment is not None:
        return validate_assignment(name, assignment, cluster.brokers)
    brokers = cluster.brokers.values()
    live = sorted(b.id for b in brokers if b.is_running)
    rf = replication_factor if replication_factor is not None \
        else cluster.broker_config["default.replication.factor"]
    racks = {b.id: b.rack for b in brokers if b.is_running and b.rack is not None}
    try:
        return assign_replicas_to_brokers(live, partitions, rf, racks=racks,
                                          rng=cluster.topics.placement_rng)
    except PlacementError as exc:
        raise ClusterError(f"Cannot create topic '{name}': {exc} ({exc.error})") from exc


def _create_topic_kraft(cluster, name, partitions, replication_factor, assignment,
                        overrides) -> dict[int, list[int]]:
    """KRaft: CreateTopics goes to the active controller, which places replicas with the
    StripedReplicaPlacer over the unfenced brokers and writes TopicRecord, ConfigRecords
    and PartitionRecords (ReplicationControlManager.createTopic)."""
    rf = replication_factor if replication_factor is not None \
        else cluster.broker_config["default.replication.factor"]
    assign_in = None
    if assignment is not None:
        checked = validate_assignment(name, assignment, cluster.brokers)
        assign_in = [checked[p] for p in range(len(assignment))]
    return cluster.kraft.create_topic(name, partitions, rf, assign_in, overrides)


def validate_assignment(name, assignment, brokers: dict) -> dict[int, list[int]]:
    """A manual replica assignment (``kafka-topics --replica-assignment``) as partition ->
    replicas; ClusterError when it is empty, ragged, has duplicates or unknown brokers."""
    if not assignment:
        raise ClusterError(f"Cannot create topic '{name}': the replica assignment is empty")
    if not isinstance(assignment, (list, tuple)):
        raise ClusterError(f"Cannot create topic '{name}': the replica assignment is a list "
                           f"of replica lists, got {assignment!r}")
    out = {}
    rf = -1
    for p, reps in enumerate(assignment):
        if not isinstance(reps, (list, tuple)) or not all(
                isinstance(b, int) and not isinstance(b, bool) for b in reps):
            raise ClusterError(f"Cannot create topic '{name}': partition {p}'s replicas must "
                               f"be a list of broker ids, got {reps!r}")
        reps = list(reps)
        if not reps:   # ReplicationControlManager.createTopic (KRaft)
            raise ClusterError(f"Cannot create topic '{name}': The manual partition "
                               "assignment includes an empty replica list. "
                               "(INVALID_REPLICA_ASSIGNMENT)")
        rf = len(reps) if rf < 0 else rf
        if len(reps) != rf:
            raise ClusterError(
                f"Cannot create topic '{name}': partition {p} has {len(reps)} replicas but "
                f"partition 0 has {rf}; all partitions must have the same replication factor")
        if len(set(reps)) != len(reps):
            raise ClusterError(f"Cannot create topic '{name}': duplicate replica in "
                               f"partition {p}: {reps}")
        unknown = [b for b in reps if b not in brokers]
        if unknown:
            raise ClusterError(f"Cannot create topic '{name}': unknown broker(s) {unknown} "
                               f"in partition {p}; brokers are {sorted(brokers)}")
        out[p] = reps
    return out


def topic_ready(cluster, name: str) -> bool:
    """Every partition of ``name`` has a leader that knows it leads at the current epoch and
    every running replica has its metadata (or the partition is offline from the start)."""
    if cluster.kraft is not None and name not in cluster.kraft.image.topic_ids:
        return False
    states = cluster.inspect.partition_states(name)
    brokers = cluster.brokers
    for tp, (leader, epoch, _isr, _v) in states.items():
        if leader < 0:
            return True  # offline from the start: nothing to wait for
        part = brokers[leader].replica_manager.partitions.get(tp)
        if part is None or not part.is_leader or part.leader_epoch != epoch:
            return False
        for r in part.replicas:
            rb = brokers[r]
            if rb.is_running and tp not in rb.metadata.partitions:
                return False
    return bool(cluster.inspect.partition_states(name))
