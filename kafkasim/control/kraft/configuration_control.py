"""ConfigurationControlManager: the KRaft controller's dynamic configs.

Follows org.apache.kafka.controller.ConfigurationControlManager: ``replay(ConfigRecord)``,
``getTopicConfig`` (topic, then the controller node's dynamic config, then the cluster default),
``deleteTopicConfigs``, ``incrementalAlterConfigs`` (SET and DELETE; with ELR on, the
``min.insync.replicas`` transitions Kafka refuses and the ClearElrRecords it appends),
``describeConfigs``, ``getConfigs`` and ``clusterConfig``. Config validation against Kafka's
ConfigDefs, alter-config policies and LIST-typed keys (APPEND / SUBTRACT) are not modelled: a
value is stored as given. The ELR safety records live in kafkasim.control.kraft.elr_safety.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import NamedTuple

from kafkasim.control.kraft.elr_safety import (
    ELR_FEATURE_NAME,
    clear_elr_records_as_needed,
    disallowed_min_isr_change,
    maybe_generate_elr_safety_records,
)
from kafkasim.control.kraft.periodic_tasks import ControllerResult
from kafkasim.control.kraft.records import ConfigRecord
from kafkasim.core import errors as E

SET, DELETE, APPEND, SUBTRACT = "SET", "DELETE", "APPEND", "SUBTRACT"   # AlterConfigOp.OpType


class ConfigResource(NamedTuple):
    """org.apache.kafka.common.config.ConfigResource: ``type`` "BROKER" or "TOPIC"; the BROKER
    resource named "" holds the cluster-level (default) configs."""

    type: str
    name: str


class ApiError(NamedTuple):
    """org.apache.kafka.common.requests.ApiError: an Errors name and its message."""

    error: str = E.NONE
    message: str | None = None

    def is_success(self) -> bool:
        return self.error == E.NONE


class ResultOrError(NamedTuple):
    """org.apache.kafka.controller.ResultOrError: ``result`` unless ``error`` is set."""

    result: object = None
    error: ApiError | None = None


def _elr_off() -> bool:
    return False


def supported_config_checker_true(resource_type: str, config_name: str) -> bool:
    """``SupportedConfigChecker.TRUE`` (metadata module, 4.3+): every config is supported."""
    return True


def _api_error(exc: Exception) -> ApiError:
    """ApiError.fromThrowable: an exception carrying an Errors name (``error``) keeps it;
    anything else is UNKNOWN_SERVER_ERROR."""
    return ApiError(getattr(exc, "error", E.UNKNOWN_SERVER_ERROR), str(exc))


class ConfigurationControlManager:
    """org.apache.kafka.controller.ConfigurationControlManager. ``existence_checker`` is the
    QuorumController's ConfigResourceExistenceChecker (raises for an unknown broker or topic;
    None: no check); ``elr_enabled`` answers FeatureControlManager.isElrFeatureEnabled.
    ``supported_config_checker(resource_type, config_name) -> bool`` is Kafka's
    SupportedConfigChecker (KAFKA-19851, 4.3.0 a9ce322153; Builder default
    SupportedConfigChecker.TRUE): replay skips a ConfigRecord it does not support, e.g. a topic
    config a 3.x log still carries after an upgrade removed it. kafkasim's clusters keep the
    default (they can write no config their release does not know)."""

    def __init__(self, node_id: int | None = None, *, default_min_isr: int = 1,
                 default_unclean: bool = False,
                 existence_checker: Callable[[ConfigResource], None] | None = None,
                 elr_enabled: Callable[[], bool] | None = None,
                 feature_control=None,
                 supported_config_checker: Callable[[str, str], bool] | None = None) -> None:
        self.node_id = node_id
        self.supported_config_checker = supported_config_checker or \
            supported_config_checker_true
        # the static (server.properties) values behind min.insync.replicas and
        # unclean.leader.election.enable when no dynamic config sets them
        self.default_min_isr = default_min_isr
        self.default_unclean = default_unclean
        self.existence_checker = existence_checker
        # Builder.setFeatureControl: the FeatureControlManager updateFeatures goes through; it
        # answers isElrFeatureEnabled unless ``elr_enabled`` is given
        self.feature_control = feature_control
        if elr_enabled is None:
            elr_enabled = feature_control.is_elr_feature_enabled if feature_control is not None \
                else _elr_off
        self.elr_enabled = elr_enabled
        self._configs: dict[tuple[str, str], dict[str, str]] = {}

    def replay(self, record: ConfigRecord) -> None:
        """replay(ConfigRecord): set the value, or remove it when the record's value is None;
        a config the SupportedConfigChecker does not support is skipped (4.3+,
        ConfigurationControlManager.java:588@4.3.0)."""
        if not self.supported_config_checker(record.resource_type, record.name):
            return
        key = (record.resource_type, record.resource_name)
        if record.value is None:
            self._configs.get(key, {}).pop(record.name, None)
        else:
            self._configs.setdefault(key, {})[record.name] = record.value

    def get_topic_config(self, topic: str, key: str) -> str | None:
        """getTopicConfig: topic, then the controller node's dynamic config, then the cluster
        default ("" BROKER resource); None when unset."""
        levels = [("TOPIC", topic)]
        if self.node_id is not None:
            levels.append(("BROKER", str(self.node_id)))
        levels.append(("BROKER", ""))
        for level in levels:
            value = self._configs.get(level, {}).get(key)
            if value is not None:
                return value
        return None

    def current_topic_config(self, topic: str) -> dict[str, str]:
        """currentTopicConfig: a copy of the topic's own dynamic configs."""
        return dict(self._configs.get(("TOPIC", topic), {}))

    def get_configs(self, resource: tuple[str, str]) -> dict[str, str]:
        """getConfigs: a copy of one resource's dynamic configs (empty when it has none)."""
        return dict(self._configs.get(tuple(resource), {}))

    def resources(self) -> list[tuple[str, str]]:
        """The (type, name) of every resource with dynamic configs, sorted."""
        return sorted(k for k, v in self._configs.items() if v)

    def cluster_config(self) -> dict[str, str]:
        """clusterConfig: the cluster-level configs (BROKER resource "")."""
        return self.get_configs(("BROKER", ""))

    def delete_topic_configs(self, name: str) -> None:
        """deleteTopicConfigs: drop a deleted topic's configs."""
        self._configs.pop(("TOPIC", name), None)

    # -- updateFeatures ------------------------------------------------------------------------
    def update_features(self, updates: Mapping[str, int], upgrade_types=None,
                        validate_only: bool = False, current_claim_epoch: int = 0):
        """updateFeatures (4.0+, KAFKA-16540): FeatureControlManager.updateFeatures, and when it
        succeeds in raising ``eligible.leader.replicas.version`` above 0 (not validate-only),
        the ELR safety records first (maybeGenerateElrSafetyRecords: a cluster-level
        min.insync.replicas at the static value when there is none, every broker-level one
        removed), all in one atomic batch."""
        result = self.feature_control.update_features(updates, upgrade_types, validate_only,
                                                      current_claim_epoch)
        if not isinstance(result.response, ApiError) or not result.response.is_success() or \
                validate_only or updates.get(ELR_FEATURE_NAME, 0) <= 0:
            return result
        brokers = {int(name): self.get_configs((kind, name))
                   for kind, name in self.resources() if kind == "BROKER" and name}
        safety, _message = maybe_generate_elr_safety_records(self.cluster_config(), brokers,
                                                             self.default_min_isr)
        return ControllerResult.atomic_of([*safety, *result.records], ApiError())

    # -- incrementalAlterConfigs ---------------------------------------------------------------
    def incremental_alter_configs(
        self, config_changes: Mapping[tuple[str, str], Mapping[str, tuple[str, str | None]]],
        newly_created_resource: bool = False,
    ) -> tuple[list, dict[ConfigResource, ApiError]]:
        """incrementalAlterConfigs: ``(records, {resource: ApiError})``. ``config_changes`` maps
        each resource to ``{key: (op, value)}`` (op SET or DELETE). A resource whose change
        fails writes nothing; the ClearElrRecords of every ``min.insync.replicas`` record follow
        the config records (createClearElrRecordsAsNeeded). The records are one atomic batch."""
        records: list = []
        results: dict[ConfigResource, ApiError] = {}
        for resource, key_to_ops in config_changes.items():
            resource = ConfigResource(*resource)
            results[resource] = self._incremental_alter_config_resource(
                resource, key_to_ops, newly_created_resource, records)
        records.extend(clear_elr_records_as_needed(records, self.elr_enabled()))
        return records, results

    # -- legacyAlterConfigs ---------------------------------------------------------------------
    def legacy_alter_configs(self, new_configs: Mapping[tuple[str, str], Mapping[str, str]],
                             newly_created_resource: bool = False
                             ) -> tuple[list, dict[ConfigResource, ApiError]]:
        """legacyAlterConfigs (the AlterConfigs API): ``(records, {resource: ApiError})``.
        Each resource's configs are replaced: a record per given key whose value changes (every
        given key of a BROKER resource, KAFKA-14136), then a deleting record per current key
        the request leaves out. A resource that fails validateAlterConfig writes nothing; the
        ClearElrRecords of every ``min.insync.replicas`` record follow, as for
        incrementalAlterConfigs. The records are one atomic batch."""
        records: list = []
        results: dict[ConfigResource, ApiError] = {}
        for resource, configs in new_configs.items():
            resource = ConfigResource(*resource)
            results[resource] = self._legacy_alter_config_resource(
                resource, configs, newly_created_resource, records)
        records.extend(clear_elr_records_as_needed(records, self.elr_enabled()))
        return records, results

    def _legacy_alter_config_resource(self, resource: ConfigResource, configs: Mapping[str, str],
                                      newly_created_resource: bool, out: list) -> ApiError:
        """legacyAlterConfigResource: the explicitly altered records, then the implicitly
        deleted ones; both go through validateAlterConfig (the ELR min.insync.replicas rules
        apply to an implicit deletion too)."""
        current = self._configs.get(tuple(resource), {})
        altered = [ConfigRecord(resource.type, resource.name, key, value)
                   for key, value in configs.items()
                   if current.get(key) != value or resource.type == "BROKER"]
        deleted = [ConfigRecord(resource.type, resource.name, key, None)
                   for key in current if key not in configs]
        error = self._validate_alter_config(resource, altered + deleted, newly_created_resource)
        if error.is_success():
            out.extend(altered + deleted)
        return error

    def _incremental_alter_config_resource(self, resource: ConfigResource,
                                           key_to_ops: Mapping[str, tuple[str, str | None]],
                                           newly_created_resource: bool,
                                           out: list) -> ApiError:
        """incrementalAlterConfigResource: a record per key whose value changes (a BROKER
        resource gets one even when unchanged, KAFKA-14136), then validateAlterConfig."""
        current = self._configs.get(tuple(resource), {})
        new_records = []
        for key, (op, value) in key_to_ops.items():
            if op in (APPEND, SUBTRACT):
                return ApiError(E.INVALID_CONFIG, f"Can't {op} to key {key} because its type "
                                                  "is not LIST.")
            if op not in (SET, DELETE):
                raise ValueError(f"unknown AlterConfigOp.OpType {op!r}: SET, DELETE, APPEND or "
                                 "SUBTRACT")
            new_value = value if op == SET else None
            if current.get(key) != new_value or resource.type == "BROKER":
                new_records.append(ConfigRecord(resource.type, resource.name, key, new_value))
        error = self._validate_alter_config(resource, new_records, newly_created_resource)
        if error.is_success():
            out.extend(new_records)
        return error

    def _validate_alter_config(self, resource: ConfigResource, records: Iterable[ConfigRecord],
                               newly_created_resource: bool) -> ApiError:
        """validateAlterConfig: the ELR min.insync.replicas rules, then the existence check
        (skipped for a resource created by the same request)."""
        for record in records:
            message = disallowed_min_isr_change(record, self.elr_enabled())
            if message is not None:
                return ApiError(E.INVALID_CONFIG, message)
        if not newly_created_resource and self.existence_checker is not None:
            try:
                self.existence_checker(resource)
            except Exception as e:   # noqa: BLE001 -- ApiError.fromThrowable
                return _api_error(e)
        return ApiError()

    def describe_configs(self, resources: Mapping[tuple[str, str], Iterable[str]]
                         ) -> dict[ConfigResource, ResultOrError]:
        """describeConfigs: each resource's configs (all of them, or the keys asked for)."""
        out: dict[ConfigResource, ResultOrError] = {}
        for resource, keys in resources.items():
            configs = self.get_configs(resource)
            keys = list(keys)
            if keys:
                configs = {k: configs[k] for k in keys if k in configs}
            out[ConfigResource(*resource)] = ResultOrError(configs)
        return out
