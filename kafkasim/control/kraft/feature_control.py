"""``FeatureControlManager``: the KRaft controller's finalized features (KIP-584 / KIP-778).

Mirrors org.apache.kafka.controller.FeatureControlManager and QuorumFeatures, with the parts of
server-common they use (``Feature`` / ``FeatureVersion`` with their dependencies,
``MetadataVersion``) and org.apache.kafka.metadata.VersionRange / FinalizedControllerFeatures.
Read at 3.9.0 (apache tag 3.9.0-rc3), 4.0 (confluentinc 4ae681446f), 4.1.0 (13f70256db),
4.2.0 (a18251bae0) and 4.3.0 (a9ce322153).

``update_features`` (the UpdateFeatures RPC, ``kafka-features upgrade/downgrade``) decides
whether each requested level may be finalized and returns the FeatureLevelRecords to write;
``replay`` applies them. The rules, in Kafka's order for one feature: an UNKNOWN upgrade type
is refused; a level below 0 is refused; the level must be inside what this controller
(``QuorumFeatures``), every registered broker and -- from metadata.version 3.7-IV0 (controller
registration) -- every registered controller supports; a lower level needs SAFE_DOWNGRADE or
UNSAFE_DOWNGRADE and a higher one UPGRADE; a metadata.version downgrade across a level that
changed the metadata format (``MetadataVersion.checkIfMetadataChanged``) is refused whatever the
type (unsafe downgrades are "temporarily disabled", KAFKA-13896); any other feature's level is
checked against its dependencies (4.0+: ``eligible.leader.replicas.version`` 1 needs
metadata.version 4.0-IV1, KIP-966).

What changed between releases (kafkasim.settings.versions, ControllerRules):

- ``feature_update_fails_as_a_whole`` (4.0, KAFKA-16308): one ApiError for the request, the
  first failing feature's, nothing written; dependency checks. 3.9: one ApiError per feature
  (a dict, sorted by name as Kafka's TreeMap), the records of the features that passed written.
- ``metadata_version_floor_3_3_iv3`` (4.0, KAFKA-18601): the lowest metadata.version is
  3.3-IV3; 3.9 supports 3.0-IV1 up but refuses to set anything below 3.3-IV0.
- ``feature_control_metadata_version_unset_until_replayed`` (4.1, KAFKA-18858): no
  metadata.version until a FeatureLevelRecord sets it (before: the Builder's, default the
  latest production level).
- ``raft_update_voter_static_quorum`` (4.1, KAFKA-16538): ``kraft.version`` is upgraded through
  the ``KRaftVersionAccessor`` (the Raft client) and answered with a NoOpRecord; before, it
  was an ordinary feature. A replayed kraft.version FeatureLevelRecord is ignored from 4.0
  (KAFKA-18979).
- ``metadata_downgrade_error_names_levels`` (4.2, apache/kafka PR #20705): the downgrade error
  names both levels.

Not modelled: the ZooKeeper-migration checks of 3.4-3.9 (no migration in kafkasim), log lines.
The feature table (``FEATURES``) holds the levels as of 4.3.0; which features exist follows the
release (share.version and streams.version from 4.1; share.version level 2 from 4.4).
``bootstrap_records`` are the FeatureLevelRecords ``kafka-storage format`` gives a new cluster
of a release, the ones kafkasim's simulated KRaft clusters start with.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import NamedTuple

from kafkasim.control.kraft.configuration_control import ApiError
from kafkasim.control.kraft.metadata_version import (
    ELR_FEATURE_NAME,
    IBP_3_3_IV0,
    IBP_3_7_IV0,
    MINIMUM_KRAFT_VERSION,
    MINIMUM_VERSION,
    MetadataVersion,
)
from kafkasim.control.kraft.metadata_version import (
    FEATURE_NAME as METADATA_VERSION,
)
from kafkasim.control.kraft.periodic_tasks import ControllerResult
from kafkasim.control.kraft.records import FeatureLevelRecord, NoOpRecord
from kafkasim.core import errors as E
from kafkasim.settings.javautil import java_hashmap_iteration_order, java_string_hash
from kafkasim.settings.versions import DEFAULT_VERSION, rules_for, version_at_least

KRAFT_VERSION = "kraft.version"
ELIGIBLE_LEADER_REPLICAS_VERSION = ELR_FEATURE_NAME
TRANSACTION_VERSION = "transaction.version"
GROUP_VERSION = "group.version"
TEST_FEATURE_VERSION = "test.feature.version"        # TestFeatureVersion.FEATURE_NAME
LATEST_EPOCH = (1 << 63) - 1                          # SnapshotRegistry.LATEST_EPOCH
SHORT_MAX_VALUE = 32767


class UpgradeType(enum.Enum):
    """``org.apache.kafka.clients.admin.FeatureUpdate.UpgradeType``."""

    UNKNOWN = 0
    UPGRADE = 1
    SAFE_DOWNGRADE = 2
    UNSAFE_DOWNGRADE = 3


class VersionRange(NamedTuple):
    """``org.apache.kafka.metadata.VersionRange``: the inclusive range [min, max]."""

    min: int
    max: int

    @classmethod
    def of(cls, low: int, high: int) -> VersionRange:
        return cls(low, high)

    def contains(self, version: int) -> bool:
        return self.min <= version <= self.max

    def __str__(self) -> str:
        if self.min == self.max:
            return str(self.min)
        if self.max == SHORT_MAX_VALUE:
            return f"{self.min}+"
        return f"{self.min}-{self.max}"


class FeatureVersion(NamedTuple):
    """One level of a ``Feature`` (``FeatureVersion``): its bootstrap metadata.version and the
    levels of other features it needs (``dependencies``, by feature name)."""

    feature_name: str
    feature_level: int
    bootstrap_metadata_version: str
    dependencies: tuple[tuple[str, int], ...] = ()


def _levels(name: str, *levels: tuple) -> tuple[FeatureVersion, ...]:
    return tuple(FeatureVersion(name, *level) for level in levels)


#: ``Feature`` at 4.3.0: name -> (its levels, latest production level, first release).
#: kraft.version: KRaftVersion; transaction.version: TransactionVersion (KIP-890);
#: group.version: GroupVersion (KIP-848); eligible.leader.replicas.version:
#: EligibleLeaderReplicasVersion (KIP-966; ELRV_1 needs metadata.version 4.0-IV1 = 23);
#: share.version / streams.version: ShareVersion / StreamsVersion (4.1+).
FEATURES: dict[str, tuple[tuple[FeatureVersion, ...], int, str]] = {
    KRAFT_VERSION: (_levels(KRAFT_VERSION, (0, "3.3-IV3"), (1, "3.9-IV0")), 1, "3.9"),
    TRANSACTION_VERSION: (_levels(TRANSACTION_VERSION, (0, "3.3-IV3"), (1, "4.0-IV2"),
                                  (2, "4.0-IV2")), 2, "3.9"),
    GROUP_VERSION: (_levels(GROUP_VERSION, (0, "3.3-IV3"), (1, "4.0-IV0")), 1, "4.0"),
    ELIGIBLE_LEADER_REPLICAS_VERSION: (
        _levels(ELIGIBLE_LEADER_REPLICAS_VERSION, (0, "3.3-IV3"),
                (1, "4.1-IV0", ((METADATA_VERSION, 23),))), 1, "4.0"),
    "share.version": (_levels("share.version", (0, "3.3-IV3"), (1, "4.2-IV0")), 1, "4.1"),
    "streams.version": (_levels("streams.version", (0, "3.3-IV3"), (1, "4.2-IV1")), 1, "4.1"),
}


#: Features whose latest production level was lower in earlier releases: name -> (release it
#: reached FEATURES' level, the level before). StreamsVersion.LATEST_PRODUCTION is SV_0 at
#: 4.1.0 (13f70256db) and SV_1 at 4.2.0 (a18251bae0).
#: Features.TRANSACTION_VERSION @3.9.0-rc3 exists with no production level above 0 (its levels
#: bootstrap at 4.0-IV0 there; 4.0-IV2 from 4.0).
_EARLIER_PRODUCTION = {"streams.version": ("4.2", 0), TRANSACTION_VERSION: ("4.0", 0)}

#: Levels added after 4.3.0: name -> (first release, the new levels, its latest production
#: level there). ShareVersion.SV_2 (bootstrap metadata.version 4.4-IV0) and
#: LATEST_PRODUCTION = SV_2 on the 4.4 branch (f86720838c, KAFKA-20793 ef4b7904be).
_LATER_LEVELS = {"share.version": ("4.4", ((2, "4.4-IV0"),), 2)}


def latest_production_level(name: str, kafka_version: str = DEFAULT_VERSION) -> int:
    """``Feature.latestProduction()`` of a release."""
    _versions, production = feature_from_name(name, kafka_version)
    return production


def _test_feature(kafka_version: str) -> tuple[tuple[FeatureVersion, ...], int, str]:
    """TestFeatureVersion: TEST_2 depends on (and bootstraps at) the latest testing
    metadata.version; it is production only when that is the latest production level."""
    testing = MetadataVersion.latest_testing(kafka_version)
    versions = _levels(TEST_FEATURE_VERSION, (0, "3.3-IV3"), (1, "3.7-IV0"),
                       (2, testing.version(), ((METADATA_VERSION, testing.feature_level),)))
    production = 2 if MetadataVersion.latest_production(kafka_version) == testing else 1
    return versions, production, "3.8"


def feature_from_name(name: str, kafka_version: str = DEFAULT_VERSION
                      ) -> tuple[tuple[FeatureVersion, ...], int]:
    """``Feature.featureFromName``: (the feature's levels, its latest production level);
    IllegalArgumentException (ValueError) "Feature X not found." otherwise."""
    entry = _test_feature(kafka_version) if name == TEST_FEATURE_VERSION else FEATURES.get(name)
    if entry is None or not version_at_least(kafka_version, entry[2]):
        raise ValueError(f"Feature {name} not found.")
    earlier = _EARLIER_PRODUCTION.get(name)
    if earlier is not None and not version_at_least(kafka_version, earlier[0]):
        return entry[0], earlier[1]
    later = _LATER_LEVELS.get(name)
    if later is not None and version_at_least(kafka_version, later[0]):
        return entry[0] + _levels(name, *later[1]), later[2]
    return entry[0], entry[1]


def production_features(kafka_version: str = DEFAULT_VERSION) -> list[str]:
    """``Feature.PRODUCTION_FEATURES`` of a release (names, in FEATURES' order)."""
    return [name for name, (_v, _p, since) in FEATURES.items()
            if version_at_least(kafka_version, since)]


def default_level(name: str, metadata_version, kafka_version: str = DEFAULT_VERSION) -> int:
    """``Feature.defaultLevel(metadataVersion)``: the highest level whose bootstrap
    metadata.version is at most ``metadata_version`` (levels walked in order, stopping at the
    first that needs a later one)."""
    mv = MetadataVersion.parse(metadata_version)
    versions, _production = feature_from_name(name, kafka_version)
    level = versions[0].feature_level
    for version in versions:
        if MetadataVersion.parse(version.bootstrap_metadata_version) > mv:
            break
        level = version.feature_level
    return level


def bootstrap_records(metadata_version, kafka_version: str = DEFAULT_VERSION,
                      feature_levels: Mapping[str, int] | None = None) -> list:
    """What ``kafka-storage format --release-version`` bootstraps a cluster with
    (Formatter.calculateEffectiveFeatureLevels -> BootstrapMetadata.fromVersions @4.3.0,
    Formatter.java:295 and BootstrapMetadata.java:46): the metadata.version FeatureLevelRecord,
    then one per production feature at its default level for that metadata.version -- or at
    the level ``feature_levels`` gives it (``--feature name=level``) -- when above 0, sorted by
    name (kraft.version writes none). Before 4.0 (Features @3.9.0-rc3: kraft.version and a
    transaction.version with no production level; StorageTool @3.3-3.8: metadata.version
    alone) only the metadata.version record. A feature this release does not have is refused
    as the Formatter does ("Unsupported feature: ...")."""
    mv = MetadataVersion.parse(metadata_version)
    known = production_features(kafka_version)
    chosen = dict(feature_levels or {})
    for name in sorted(chosen):
        if name != METADATA_VERSION and name not in known:
            raise ValueError(f"Unsupported feature: {name}. Supported features are: "
                             f"{', '.join(sorted(known))}")
    records = [FeatureLevelRecord(METADATA_VERSION, mv.feature_level)]
    for name in sorted(known):
        level = chosen.get(name, default_level(name, mv, kafka_version))
        if name != KRAFT_VERSION and level > 0:
            records.append(FeatureLevelRecord(name, level))
    return records


def from_feature_level(name: str, level: int, kafka_version: str = DEFAULT_VERSION,
                       allow_unstable: bool = True) -> FeatureVersion:
    """``Feature.fromFeatureLevel``."""
    versions, production = feature_from_name(name, kafka_version)
    for version in versions:
        if version.feature_level == level and (allow_unstable or level <= production):
            return version
    raise ValueError(f"No feature:{name} with feature level {level}")


def validate_version(feature: FeatureVersion, features: Mapping[str, int]) -> None:
    """``Feature.validateVersion``: a level >= 1 needs metadata.version >= MINIMUM_VERSION,
    and every dependency at least its level (ValueError, Kafka's IllegalArgumentException)."""
    mv = features.get(METADATA_VERSION)
    name, level = feature.feature_name, feature.feature_level
    if level >= 1 and (mv is None or mv < MINIMUM_VERSION.feature_level):
        raise ValueError(f"{name} could not be set to {level} because it depends on "
                         f"metadata.version={MINIMUM_VERSION.feature_level} ({MINIMUM_VERSION})")
    for dep_name, dep_level in feature.dependencies:
        have = features.get(dep_name)
        if have is None or have < dep_level:
            raise ValueError(f"{name} could not be set to {level} because it depends on "
                             f"{dep_name} level {dep_level}")


class QuorumFeatures:
    """``org.apache.kafka.controller.QuorumFeatures``: what this controller's software
    supports (``local_supported_features``: name -> VersionRange) and the quorum's node ids."""

    DISABLED = VersionRange(0, 0)

    def __init__(self, node_id: int, local_supported_features: Mapping[str, VersionRange],
                 quorum_node_ids: Iterable[int]) -> None:
        self._node_id = node_id
        self.local_supported_features = dict(local_supported_features)
        self._quorum_node_ids = tuple(quorum_node_ids)

    @staticmethod
    def reason_not_supported(new_version: int, what: str, range_: VersionRange) -> str | None:
        """``reasonNotSupported``."""
        if range_.contains(new_version):
            return None
        if range_.max == 0:
            return f"{what} does not support this feature."
        return f"{what} only supports versions {range_}"

    @staticmethod
    def default_supported_feature_map(enable_unstable: bool,
                                      kafka_version: str = DEFAULT_VERSION
                                      ) -> dict[str, VersionRange]:
        """``defaultSupportedFeatureMap`` (3.9: ``defaultFeatureMap``): metadata.version from
        the minimum (3.3-IV3; 3.9: 3.0-IV1) to the latest testing or production level, and every
        production feature whose top level is above 0."""
        low = MINIMUM_VERSION if version_at_least(kafka_version, "4.0") else MINIMUM_KRAFT_VERSION
        high = (MetadataVersion.latest_testing(kafka_version) if enable_unstable
                else MetadataVersion.latest_production(kafka_version))
        features = {METADATA_VERSION: VersionRange(low.feature_level, high.feature_level)}
        for name in production_features(kafka_version):
            versions, production = feature_from_name(name, kafka_version)
            top = versions[-1].feature_level if enable_unstable else production
            if top > 0:
                features[name] = VersionRange(versions[0].feature_level, top)
        return features

    default_feature_map = default_supported_feature_map

    def node_id(self) -> int:
        return self._node_id

    def quorum_node_ids(self) -> tuple[int, ...]:
        return self._quorum_node_ids

    def local_supported_feature(self, name: str) -> VersionRange:
        return self.local_supported_features.get(name, self.DISABLED)

    def is_controller_id(self, node_id: int) -> bool:
        return node_id in self._quorum_node_ids

    def reason_not_locally_supported(self, feature_name: str, new_version: int) -> str | None:
        return self.reason_not_supported(new_version, f"Local controller {self._node_id}",
                                         self.local_supported_feature(feature_name))


class ClusterFeatureSupportDescriber:
    """``ClusterFeatureSupportDescriber``: what each registered broker and controller supports,
    as (node id, {feature: VersionRange}) pairs in registration order."""

    def __init__(self, brokers: Iterable = (), controllers: Iterable = ()) -> None:
        self._brokers = list(brokers)
        self._controllers = list(controllers)

    def broker_supported(self):
        return iter(self._brokers)

    def controller_supported(self):
        return iter(self._controllers)


class KRaftVersionAccessor:
    """``KRaftVersionAccessor``: the Raft client's kraft.version; the Builder's default keeps it
    in memory at KRaftVersion.LATEST_PRODUCTION (1)."""

    def __init__(self, version: int = 1) -> None:
        self.version = version

    def kraft_version(self) -> int:
        return self.version

    def upgrade_kraft_version(self, epoch: int, version: int, validate_only: bool) -> None:
        if not validate_only:
            self.version = version


class FinalizedControllerFeatures:
    """``org.apache.kafka.metadata.FinalizedControllerFeatures``: the finalized levels (feature
    name -> level) as of an offset (``epoch``)."""

    def __init__(self, feature_map: Mapping[str, int], epoch: int) -> None:
        self.feature_map = dict(feature_map)
        self.epoch = epoch

    def get(self, name: str) -> int | None:
        """``get``: the level (Kafka: an Optional) or None."""
        return self.feature_map.get(name)

    def feature_names(self) -> set[str]:
        return set(self.feature_map)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, FinalizedControllerFeatures) and \
            self.feature_map == other.feature_map and self.epoch == other.epoch

    def __repr__(self) -> str:
        return f"FinalizedControllerFeatures({self.feature_map!r}, {self.epoch})"


class SnapshotRegistry:
    """The part of ``org.apache.kafka.timeline.SnapshotRegistry`` the manager needs: the state
    of every registered object at each snapshot epoch (``idempotentCreateSnapshot``)."""

    def __init__(self, log_context=None) -> None:
        self._objects: list = []
        self._snapshots: dict[int, list] = {}

    def register(self, obj) -> None:
        self._objects.append(obj)

    def idempotent_create_snapshot(self, epoch: int) -> None:
        if epoch not in self._snapshots:
            self._snapshots[epoch] = {id(obj): obj._timeline_state() for obj in self._objects}

    get_or_create_snapshot = idempotent_create_snapshot   # the 3.x name

    def state_at(self, obj, epoch: int):
        """``obj``'s state at snapshot ``epoch`` (LATEST_EPOCH: now)."""
        if epoch == LATEST_EPOCH:
            return obj._timeline_state()
        states = self._snapshots.get(epoch)
        if states is None or id(obj) not in states:
            raise RuntimeError(f"No in-memory snapshot for epoch {epoch}.")
        return states[id(obj)]


_NO_MV = object()   # FeatureControlManager.Builder's default metadata version (3.9, 4.0)


class FeatureControlManager:
    """See the module docstring. Built like Kafka's (``FeatureControlManager.Builder()``) or
    directly; ``kafka_version`` picks the release's rules (default: kafkasim's default
    release). ``metadata_version`` is the Builder's ``setMetadataVersion`` of 3.9 / 4.0 (the
    level before any record is replayed; 4.1+ has none)."""

    def __init__(self, *, quorum_features: QuorumFeatures | None = None,
                 snapshot_registry: SnapshotRegistry | None = None,
                 cluster_support_describer: ClusterFeatureSupportDescriber | None = None,
                 kraft_version_accessor: KRaftVersionAccessor | None = None,
                 metadata_version=_NO_MV, kafka_version: str = DEFAULT_VERSION,
                 rules=None) -> None:
        self.kafka_version = kafka_version
        self.rules = rules if rules is not None else rules_for(kafka_version)
        if quorum_features is None:
            low = MINIMUM_VERSION if self.rules.metadata_version_floor_3_3_iv3 \
                else MINIMUM_KRAFT_VERSION
            high = MetadataVersion.latest_production(kafka_version)
            quorum_features = QuorumFeatures(
                0, {METADATA_VERSION: VersionRange(low.feature_level, high.feature_level)}, [0])
        self.quorum_features = quorum_features
        self.snapshot_registry = snapshot_registry or SnapshotRegistry()
        self.snapshot_registry.register(self)
        self.cluster_support_describer = cluster_support_describer or \
            ClusterFeatureSupportDescriber()
        self.kraft_version_accessor = kraft_version_accessor or KRaftVersionAccessor()
        #: TimelineHashMap finalizedVersions: feature name -> level (metadata.version apart)
        self.finalized_versions: dict[str, int] = {}
        if self.rules.feature_control_metadata_version_unset_until_replayed:
            self._metadata_version: MetadataVersion | None = None
        elif metadata_version is _NO_MV:
            self._metadata_version = MetadataVersion.latest_production(kafka_version)
        else:
            self._metadata_version = MetadataVersion.parse(metadata_version)

    class Builder:
        """``FeatureControlManager.Builder`` (setLogContext and setSnapshotRegistry accepted)."""

        def __init__(self) -> None:
            self._kw: dict = {}

        def _set(self, key: str, value) -> FeatureControlManager.Builder:
            self._kw[key] = value
            return self

        def set_log_context(self, _log_context) -> FeatureControlManager.Builder:
            return self

        def set_snapshot_registry(self, registry) -> FeatureControlManager.Builder:
            return self._set("snapshot_registry", registry)

        def set_quorum_features(self, features) -> FeatureControlManager.Builder:
            return self._set("quorum_features", features)

        def set_cluster_feature_support_describer(self, d) -> FeatureControlManager.Builder:
            return self._set("cluster_support_describer", d)

        def set_kraft_version_accessor(self, accessor) -> FeatureControlManager.Builder:
            return self._set("kraft_version_accessor", accessor)

        def set_metadata_version(self, mv) -> FeatureControlManager.Builder:
            """3.9 / 4.0 only (removed by KAFKA-18858 in 4.1)."""
            return self._set("metadata_version", mv)

        def set_kafka_version(self, kafka_version: str) -> FeatureControlManager.Builder:
            return self._set("kafka_version", kafka_version)

        def build(self) -> FeatureControlManager:
            return FeatureControlManager(**self._kw)

    # -- reads ------------------------------------------------------------------------------
    def metadata_version(self) -> MetadataVersion | None:
        """``metadataVersion()``: None (Kafka: Optional.empty) until one is replayed (4.1+)."""
        return self._metadata_version

    def metadata_version_or_throw(self) -> MetadataVersion:
        """``metadataVersionOrThrow``: IllegalStateException (RuntimeError) when unknown."""
        if self._metadata_version is None:
            raise RuntimeError("Unknown metadata version for FeatureControlManager")
        return self._metadata_version

    def _timeline_state(self) -> tuple:
        return self._metadata_version, dict(self.finalized_versions)

    def finalized_features(self, epoch: int = LATEST_EPOCH) -> FinalizedControllerFeatures:
        """``finalizedFeatures(epoch)``: metadata.version and every finalized feature, as of
        snapshot ``epoch`` (LATEST_EPOCH: now)."""
        mv, finalized = self.snapshot_registry.state_at(self, epoch)
        if mv is None:
            raise RuntimeError("Unknown metadata version for FeatureControlManager")
        return FinalizedControllerFeatures({METADATA_VERSION: mv.feature_level, **finalized},
                                           epoch)

    def is_controller_id(self, node_id: int) -> bool:
        return self.quorum_features.is_controller_id(node_id)

    def is_elr_feature_enabled(self) -> bool:
        """``isElrFeatureEnabled`` (4.0+): eligible.leader.replicas.version >= 1 (ELRV_1)."""
        return self.finalized_versions.get(ELIGIBLE_LEADER_REPLICAS_VERSION, 0) >= 1

    # -- replay -----------------------------------------------------------------------------
    def replay(self, record: FeatureLevelRecord) -> None:
        """``replay(FeatureLevelRecord)``: a level outside what this controller supports is a
        fatal error; metadata.version sets the version; kraft.version is skipped from 4.0
        (KAFKA-18979: the Raft client owns it); level 0 removes a feature."""
        range_ = self.quorum_features.local_supported_feature(record.name)
        if not range_.contains(record.feature_level):
            raise RuntimeError(f"Tried to apply FeatureLevelRecord {record}, but this controller "
                               f"only supports versions {range_}")
        if record.name == METADATA_VERSION:
            self._metadata_version = MetadataVersion.from_feature_level(record.feature_level)
        elif record.name == KRAFT_VERSION and self.rules.kraft_version_feature_record_ignored:
            return
        elif record.feature_level == 0:
            self.finalized_versions.pop(record.name, None)
        else:
            self.finalized_versions[record.name] = record.feature_level

    # -- updateFeatures ---------------------------------------------------------------------
    def update_features(self, updates: Mapping[str, int],
                        upgrade_types: Mapping[str, UpgradeType] | None = None,
                        validate_only: bool = False,
                        current_claimed_epoch: int = 0) -> ControllerResult:
        """``updateFeatures``: a ControllerResult whose response is one ApiError (4.0+; 3.9: a
        dict feature -> ApiError) and whose records are written atomically (none when
        ``validate_only``). Features are handled in Java HashMap order of their names."""
        types = {k: _upgrade_type(v) for k, v in (upgrade_types or {}).items()}
        order = java_hashmap_iteration_order(list(updates), java_string_hash)
        records: list = []
        if not self.rules.feature_update_fails_as_a_whole:
            results = {name: self._update_feature(name, updates[name], types.get(
                name, UpgradeType.UPGRADE), records, None, validate_only, current_claimed_epoch)
                for name in order}
            results = dict(sorted(results.items()))     # TreeMap
            if validate_only:
                return ControllerResult.of([], results)
            return ControllerResult.atomic_of(records, results)
        proposed = dict(self.finalized_versions)
        proposed[METADATA_VERSION] = self.metadata_version_or_throw().feature_level
        proposed.update(updates)
        for name in order:
            error = self._update_feature(name, updates[name], types.get(
                name, UpgradeType.UPGRADE), records, proposed, validate_only,
                current_claimed_epoch)
            if not error.is_success():
                return ControllerResult.of([], error)
        if validate_only:
            return ControllerResult.of([], ApiError())
        return ControllerResult.atomic_of(records, ApiError())

    def _kraft_version_upgradable(self) -> bool:
        """kraft.version goes through the KRaftVersionAccessor from 4.1 (KAFKA-16538)."""
        return bool(self.rules.raft_update_voter_static_quorum)

    def _current_level(self, name: str) -> int:
        if name == METADATA_VERSION:
            return self.metadata_version_or_throw().feature_level
        if name == KRAFT_VERSION and self._kraft_version_upgradable():
            return self.kraft_version_accessor.kraft_version()
        return self.finalized_versions.get(name, 0)

    def _update_feature(self, name: str, new_version: int, upgrade_type: UpgradeType,
                        records: list, proposed: dict | None, validate_only: bool,
                        epoch: int) -> ApiError:
        """``updateFeature``."""
        if upgrade_type is UpgradeType.UNKNOWN:
            return _invalid_update_version(
                name, new_version, "The controller does not support the given upgrade type.")
        current = self._current_level(name)
        if new_version < 0:
            return _invalid_update_version(name, new_version,
                                           "A feature version cannot be less than 0.")
        reason = self.reason_not_supported(name, new_version)
        if reason is not None:
            return _invalid_update_version(name, new_version, reason)
        if new_version < current and upgrade_type is UpgradeType.UPGRADE:
            return _invalid_update_version(
                name, new_version, "Can't downgrade the version of this feature without "
                "setting the upgrade type to either safe or unsafe downgrade.")
        if new_version > current and upgrade_type is not UpgradeType.UPGRADE:
            return _invalid_update_version(name, new_version,
                                           "Can't downgrade to a newer version.")
        if name == METADATA_VERSION:
            return self._update_metadata_version(
                new_version, upgrade_type is UpgradeType.UNSAFE_DOWNGRADE, records)
        if name == KRAFT_VERSION and self._kraft_version_upgradable():
            return self._update_kraft_version(new_version, current, upgrade_type, records,
                                              validate_only, epoch)
        if proposed is not None:       # Feature.validateVersion (4.0+)
            try:
                validate_version(from_feature_level(name, new_version, self.kafka_version),
                                 proposed)
            except ValueError as e:
                return _invalid_update_version(name, new_version, str(e))
        records.append(FeatureLevelRecord(name, new_version))
        return ApiError()

    def _update_kraft_version(self, new_version: int, current: int, upgrade_type: UpgradeType,
                              records: list, validate_only: bool, epoch: int) -> ApiError:
        """4.1+: an upgrade asks the Raft client (KRaftVersionAccessor.upgradeKRaftVersion)
        and writes a NoOpRecord for the RPC to wait on; a downgrade is refused."""
        if upgrade_type is UpgradeType.UPGRADE:
            try:
                self.kraft_version_accessor.upgrade_kraft_version(epoch, new_version,
                                                                  validate_only)
            except ValueError as e:
                return _invalid_update_version(KRAFT_VERSION, new_version, str(e))
            except Exception as e:   # an ApiException: ApiError.fromThrowable
                if getattr(e, "error", None) is None:
                    raise
                return ApiError(e.error, str(e))
            records.append(NoOpRecord())
            return ApiError()
        if new_version != current:
            return _invalid_update_version(KRAFT_VERSION, new_version,
                                           "Can't downgrade the version of this feature.")
        return ApiError()

    def reason_not_supported(self, name: str, new_version: int) -> str | None:
        """``reasonNotSupported``: this controller, then every registered broker, then (from
        metadata.version 3.7-IV0) every registered controller and every quorum node."""
        qf = self.quorum_features
        reason = qf.reason_not_locally_supported(name, new_version)
        if reason is not None:
            return reason
        for broker_id, ranges in self.cluster_support_describer.broker_supported():
            reason = QuorumFeatures.reason_not_supported(
                new_version, f"Broker {broker_id}", ranges.get(name, QuorumFeatures.DISABLED))
            if reason is not None:
                return reason
        if not self.metadata_version_or_throw().is_at_least(IBP_3_7_IV0):
            return None     # "unable to verify controller support in the current MetadataVersion"
        found = {qf.node_id()}
        for controller_id, ranges in self.cluster_support_describer.controller_supported():
            if controller_id == qf.node_id():
                continue
            reason = QuorumFeatures.reason_not_supported(
                new_version, f"Controller {controller_id}",
                ranges.get(name, QuorumFeatures.DISABLED))
            if reason is not None:
                return reason
            found.add(controller_id)
        for node in qf.quorum_node_ids():
            if node not in found:
                return f"controller {node} has not registered, and may not support this feature"
        return None

    def _known_metadata_version(self, level: int) -> MetadataVersion | None:
        """MetadataVersion.fromFeatureLevel of this release: the levels from its minimum to its
        latest testing one."""
        low = MINIMUM_VERSION if self.rules.metadata_version_floor_3_3_iv3 \
            else MINIMUM_KRAFT_VERSION
        high = MetadataVersion.latest_testing(self.kafka_version)
        if not low.feature_level <= level <= high.feature_level:
            return None
        return MetadataVersion.from_feature_level(level)

    def _update_metadata_version(self, level: int, allow_unsafe_downgrade: bool,
                                 records: list) -> ApiError:
        """``updateMetadataVersion``: refuses an unknown level, (3.9) one below 3.3-IV0, and a
        downgrade across a metadata format change, safe or unsafe (KAFKA-13896)."""
        current = self.metadata_version_or_throw()
        new = self._known_metadata_version(level)
        floor = self.rules.metadata_version_floor_3_3_iv3
        if new is None:
            top = MetadataVersion.latest_testing(self.kafka_version).feature_level
            return _invalid_metadata_version(
                level, f"Valid versions are from {MINIMUM_VERSION.feature_level} to {top}."
                if floor else "Unknown metadata.version.")
        if not floor and new < IBP_3_3_IV0:
            return _invalid_metadata_version(
                level, f"Unable to set a metadata.version less than {IBP_3_3_IV0}")
        if new < current and MetadataVersion.check_if_metadata_changed(current, new):
            why = ("Unsafe metadata downgrade is not supported in this version."
                   if allow_unsafe_downgrade else "Refusing to perform the requested downgrade "
                   "because it might delete metadata information.")
            if self.rules.metadata_downgrade_error_names_levels:
                return ApiError(E.INVALID_UPDATE_VERSION, "Unsupported metadata.version "
                                f"downgrade from {current.feature_level} to {level}. {why}")
            return _invalid_metadata_version(level, why)
        records.append(FeatureLevelRecord(METADATA_VERSION, level))
        return ApiError()


def _upgrade_type(value) -> UpgradeType:
    return value if isinstance(value, UpgradeType) else UpgradeType[str(value).upper()]


def _invalid_update_version(feature: str, version: int, message: str) -> ApiError:
    """``invalidUpdateVersion``."""
    return ApiError(E.INVALID_UPDATE_VERSION,
                    f"Invalid update version {version} for feature {feature}. {message}")


def _invalid_metadata_version(version: int, message: str) -> ApiError:
    """``invalidMetadataVersion``."""
    return ApiError(E.INVALID_UPDATE_VERSION, f"Invalid metadata.version {version}. {message}")


__all__ = [
    "ClusterFeatureSupportDescriber",
    "FeatureControlManager",
    "FeatureVersion",
    "FinalizedControllerFeatures",
    "KRaftVersionAccessor",
    "QuorumFeatures",
    "SnapshotRegistry",
    "UpgradeType",
    "VersionRange",
    "bootstrap_records",
    "default_level",
    "feature_from_name",
    "from_feature_level",
    "latest_production_level",
    "production_features",
    "validate_version",
]
