"""The cluster-level ``min.insync.replicas`` that Eligible Leader Replicas need (KIP-966, 4.0+).

With ELR on, the KRaft controller decides which replicas may lead from the partition's min ISR,
so every node must resolve the same value. Kafka 4.x therefore keeps ``min.insync.replicas`` at
the cluster level while ELR is enabled (org.apache.kafka.controller.ConfigurationControlManager;
KAFKA-16540 "enforce min.insync.replicas config invariants for ELR", #17952, backported to 4.0 as
#18745; docs 41/operations/eligible-leader-replicas):

* enabling ELR (``kafka-features upgrade --feature eligible.leader.replicas.version=1``,
  ``updateFeatures``) first writes :func:`maybe_generate_elr_safety_records`: a cluster-level
  ``min.insync.replicas`` (the controller's static value, 1 unless its server.properties sets
  one) when there is none, and the deletion of every broker-level ``min.insync.replicas``. A
  cluster created with ELR on (4.1+ default) gets the same cluster-level record when the
  controller activates (ActivationRecordsGenerator, per KAFKA-16540's description);
* while ELR is on, altering a broker-level ``min.insync.replicas`` or removing the cluster-level
  one fails with INVALID_CONFIG (:func:`disallowed_min_isr_change`);
* every ``min.insync.replicas`` ConfigRecord written while ELR is on is followed by a
  ``ClearElrRecord`` -- for that topic, or for all topics at the cluster level, even when the value
  is unchanged (:func:`clear_elr_records_as_needed`, ``createClearElrRecordsAsNeeded``).

All functions are pure: they take the controller's current config state and return the records
(``kafkasim.control.kraft.records.ConfigRecord``) the controller would append, in Kafka's order.
Tests mirror ConfigurationControlManagerTest.testMaybeGenerateElrSafetyRecords,
testRejectMinIsrChangeWhenElrEnabled and testElrUpgrade.

Checked at 4.3.0 (confluentinc a9ce322153): ActivationRecordsGenerator.recordsForEmptyLog appends
one cluster-level ``min.insync.replicas`` ConfigRecord (the static value) after the bootstrap
records when they finalize eligible.leader.replicas.version above 0 (kafkasim:
``activation_records.ActivationRecordsGenerator.records_for_empty_log``); the metadata.version
dependency error is Feature.validateVersion's, wrapped by FeatureControlManager.invalidUpdateVersion
(:data:`ELR_METADATA_VERSION_ERROR`; kafkasim.control.kraft.feature_control does the same).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from kafkasim.control.kraft.metadata_version import ELR_FEATURE_NAME
from kafkasim.control.kraft.records import ClearElrRecord, ConfigRecord, FeatureLevelRecord

__all__ = [
    "DISALLOWED_BROKER_MIN_ISR_TRANSITION_ERROR",
    "DISALLOWED_CLUSTER_MIN_ISR_REMOVAL_ERROR",
    "ELR_FEATURE_NAME",
    "MIN_IN_SYNC_REPLICAS_CONFIG",
    "ClearElrRecord",
    "ElrSafetyResult",
    "clear_elr_records_as_needed",
    "disallowed_min_isr_change",
    "elr_safety",
    "maybe_generate_elr_safety_records",
]

MIN_IN_SYNC_REPLICAS_CONFIG = "min.insync.replicas"   # TopicConfig.MIN_IN_SYNC_REPLICAS_CONFIG
BROKER = "BROKER"   # ConfigResource.Type.BROKER; resource name "" is the cluster level
TOPIC = "TOPIC"

# ConfigurationControlManager.DISALLOWED_*_ERROR (ApiError INVALID_CONFIG), 4.x
DISALLOWED_BROKER_MIN_ISR_TRANSITION_ERROR = (
    "Broker-level min.insync.replicas cannot be altered while ELR is enabled."
)
DISALLOWED_CLUSTER_MIN_ISR_REMOVAL_ERROR = (
    "Cluster-level min.insync.replicas cannot be removed while ELR is enabled."
)
#: FeatureControlManager.invalidUpdateVersion over Feature.validateVersion's message (4.3.0):
#: ELRV_1 depends on metadata.version level 23 (4.0-IV1).
ELR_METADATA_VERSION_ERROR = (
    "Invalid update version {level} for feature eligible.leader.replicas.version. "
    "eligible.leader.replicas.version could not be set to {level} because it depends on "
    "metadata.version level 23"
)


@dataclass(frozen=True)
class ElrSafetyResult:
    """What ``ConfigurationControlManager.updateFeatures`` returns for an ELR feature update."""

    #: Records to append, in order: the safety ConfigRecords, then the FeatureLevelRecord.
    records: tuple[ConfigRecord | FeatureLevelRecord, ...] = ()
    #: The controller's INFO log line ("" when nothing had to change).
    log_message: str = ""
    #: Kafka error name (e.g. "INVALID_UPDATE_VERSION"), None on success.
    error: str | None = None
    error_message: str | None = None
    #: Convenience: the ConfigRecords only.
    config_records: tuple[ConfigRecord, ...] = field(default=())


def _timeline_hash_set_order(ids: Iterable[int]) -> list[int]:
    """Iteration order of a TimelineHashSet<Integer> (org.apache.kafka.timeline.BaseHashTable).

    BaseHashTable starts with 2 slots, doubles when (size + 1) * 0.75 exceeds them, and puts an
    Integer in slot (value * -7046029254386353131L) >>> (65 - (32 - numberOfLeadingZeros(slots)))
    (Fibonacci hashing, BaseHashTable.findSlot). Iteration walks the slots in order. Two ids in
    one slot come in insertion order in Kafka; we do not know it and use the id (approximation,
    only when ids collide; removals that would have grown the table are not replayed).
    """
    ordered = sorted(set(ids))
    capacity = 2
    for size in range(len(ordered)):
        if (size + 1) * 0.75 > capacity:
            capacity *= 2
    shift = 65 - capacity.bit_length()   # bit_length == 32 - Integer.numberOfLeadingZeros

    def slot(value: int) -> int:
        return ((value * -7046029254386353131) & (2**64 - 1)) >> shift

    return sorted(ordered, key=lambda v: (slot(v), v))


def maybe_generate_elr_safety_records(
    cluster_config: Mapping[str, str],
    broker_configs: Mapping[int, Mapping[str, str]],
    static_min_insync_replicas: int = 1,
) -> tuple[list[ConfigRecord], str]:
    """ConfigurationControlManager.maybeGenerateElrSafetyRecords: ``(records, log_message)``.

    ``cluster_config`` is the cluster-level dynamic config (resource BROKER ""), ``broker_configs``
    the per-broker dynamic configs (BROKER "<id>"), ``static_min_insync_replicas`` the active
    controller's static ``min.insync.replicas`` (KafkaConfigSchema
    .getStaticallyConfiguredMinInsyncReplicas; 1 when unset). Safe to call when ELR is already
    on: with the cluster-level value present and no broker-level ones it returns ``([], "")``.
    """
    records: list[ConfigRecord] = []
    parts: list[str] = []
    if MIN_IN_SYNC_REPLICAS_CONFIG not in cluster_config:
        records.append(ConfigRecord(BROKER, "", MIN_IN_SYNC_REPLICAS_CONFIG,
                                    str(static_min_insync_replicas)))
        parts.append(
            f"Generating cluster-level {MIN_IN_SYNC_REPLICAS_CONFIG} of "
            f"{static_min_insync_replicas}"
        )
    removed = [
        broker_id for broker_id in _timeline_hash_set_order(broker_configs)
        if MIN_IN_SYNC_REPLICAS_CONFIG in broker_configs[broker_id]
    ]
    for broker_id in removed:
        records.append(ConfigRecord(BROKER, str(broker_id), MIN_IN_SYNC_REPLICAS_CONFIG, None))
    if removed:
        parts.append(
            f"Removing broker-level {MIN_IN_SYNC_REPLICAS_CONFIG} for brokers: "
            + ", ".join(str(b) for b in removed)
        )
    message = ". ".join(parts) + "." if parts else ""
    return records, message


def elr_safety(
    *,
    cluster_config: Mapping[str, str],
    broker_configs: Mapping[int, Mapping[str, str]] | None = None,
    static_min_insync_replicas: int = 1,
    elr_level: int = 1,
    metadata_version_supports_elr: bool = True,
    validate_only: bool = False,
) -> ElrSafetyResult:
    """The outcome of finalizing ``eligible.leader.replicas.version`` = ``elr_level``
    (ConfigurationControlManager.updateFeatures over FeatureControlManager.updateFeatures).

    * ``metadata_version_supports_elr`` False (ELRV_1 depends on a metadata.version with ELR,
      ``MetadataVersion.isElrSupported``; ConfigurationControlManagerTest.testElrUpgrade uses
      4.0-IV0 vs 4.0-IV1) and ``elr_level`` >= 1: error INVALID_UPDATE_VERSION, no records.
    * ``validate_only``: no records.
    * ``elr_level`` >= 1: the safety records of :func:`maybe_generate_elr_safety_records`, then the
      FeatureLevelRecord, written atomically.
    * ``elr_level`` 0 (disable; "downgrades are safe"): only the FeatureLevelRecord.
    """
    if elr_level not in (0, 1):
        # EligibleLeaderReplicasVersion.fromFeatureLevel knows ELRV_0 and ELRV_1 only
        return ElrSafetyResult(
            error="INVALID_UPDATE_VERSION",
            error_message=f"Unknown eligible leader replicas feature level: {elr_level}",
        )
    if elr_level >= 1 and not metadata_version_supports_elr:
        return ElrSafetyResult(
            error="INVALID_UPDATE_VERSION",
            error_message=ELR_METADATA_VERSION_ERROR.format(level=elr_level),
        )
    if validate_only:
        return ElrSafetyResult()
    feature = FeatureLevelRecord(ELR_FEATURE_NAME, elr_level)
    if elr_level == 0:
        return ElrSafetyResult(records=(feature,))
    safety, message = maybe_generate_elr_safety_records(
        cluster_config, broker_configs or {}, static_min_insync_replicas
    )
    return ElrSafetyResult(
        records=(*safety, feature), log_message=message, config_records=tuple(safety)
    )


def disallowed_min_isr_change(record: ConfigRecord, elr_enabled: bool) -> str | None:
    """The INVALID_CONFIG message for a ``min.insync.replicas`` change Kafka refuses while ELR is
    on, else None (ConfigurationControlManager.isDisallowedBrokerMinIsrTransition /
    isDisallowedClusterMinIsrTransition, checked in validateAlterConfig for every altered or
    implicitly deleted record). Topic-level changes are always allowed.
    """
    if not elr_enabled or record.name != MIN_IN_SYNC_REPLICAS_CONFIG:
        return None
    if record.resource_type != BROKER:
        return None
    if record.resource_name != "":
        return DISALLOWED_BROKER_MIN_ISR_TRANSITION_ERROR
    if record.value is None:
        return DISALLOWED_CLUSTER_MIN_ISR_REMOVAL_ERROR
    return None


def clear_elr_records_as_needed(
    records: Iterable[object], elr_enabled: bool
) -> list[ClearElrRecord]:
    """ConfigurationControlManager.createClearElrRecordsAsNeeded: one ClearElrRecord per
    ``min.insync.replicas`` ConfigRecord among ``records`` while ELR is on -- for the topic, or for
    every topic (empty name) at the broker/cluster level. Appended after the config records.
    """
    if not elr_enabled:
        return []
    out: list[ClearElrRecord] = []
    for record in records:
        if isinstance(record, ConfigRecord) and record.name == MIN_IN_SYNC_REPLICAS_CONFIG:
            if record.resource_type == TOPIC:
                out.append(ClearElrRecord(record.resource_name))
            else:
                out.append(ClearElrRecord())
    return out
