"""FeatureControlManagerTest, ported at 4.3.0 (confluentinc a9ce322153), with the cases whose
answer differs at 4.0 (4ae681446f) and 3.9.0 (apache tag 3.9.0-rc3) run at those releases.

The manager finalizes feature levels (metadata.version, eligible.leader.replicas.version,
transaction.version, ...): which levels a request may set, which downgrades it refuses, and the
FeatureLevelRecords it writes (kafkasim.control.kraft.feature_control).

Adaptations: ``ControllerResult`` is kafkasim's NamedTuple (records, response, is_atomic);
ApiError.NONE is ``ApiError()``; Kafka's Optional is None-or-value; MetadataVersion levels are
numbers (3.3-IV3 = 7, 3.4-IV0 = 8, 3.5-IV0 = 9, 3.5-IV1 = 10, 3.6-IV0 = 12, 4.0-IV1 = 23,
latestTesting() at 4.3.0 = 4.4-IV0 = 31). The release is the manager's ``kafka_version``
(default 4.3). Scenarios are Kafka's; code is our own.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.configuration_control import ApiError
from kafkasim.control.kraft.elr_safety import ELR_METADATA_VERSION_ERROR, elr_safety
from kafkasim.control.kraft.feature_control import (
    ELIGIBLE_LEADER_REPLICAS_VERSION,
    KRAFT_VERSION,
    TEST_FEATURE_VERSION,
    TRANSACTION_VERSION,
    ClusterFeatureSupportDescriber,
    FeatureControlManager,
    FinalizedControllerFeatures,
    QuorumFeatures,
    SnapshotRegistry,
    UpgradeType,
    VersionRange,
    bootstrap_records,
    from_feature_level,
    latest_production_level,
)
from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.periodic_tasks import ControllerResult
from kafkasim.control.kraft.records import BeginTransactionRecord, FeatureLevelRecord
from kafkasim.core import errors as E
from kafkasim.settings.versions import version_at_least

MV = "metadata.version"
MINIMUM = 7            # MetadataVersion.MINIMUM_VERSION (3.3-IV3), 4.x
LATEST_TESTING = 31    # MetadataVersion.latestTesting() at 4.3.0 (4.4-IV0)
NONE = ApiError()
SAFE, UNSAFE, UPGRADE = UpgradeType.SAFE_DOWNGRADE, UpgradeType.UNSAFE_DOWNGRADE, \
    UpgradeType.UPGRADE


def invalid(message: str) -> ApiError:
    return ApiError(E.INVALID_UPDATE_VERSION, message)


def features(*args, kafka_version: str = "4.3") -> QuorumFeatures:
    """FeatureControlManagerTest.features: the default supported map (unstable levels on) with
    (name, low, high) ranges on top, node 0, no quorum node ids."""
    supported = QuorumFeatures.default_supported_feature_map(True, kafka_version)
    for i in range(0, len(args), 3):
        supported[args[i]] = VersionRange.of(args[i + 1], args[i + 2])
    return QuorumFeatures(0, supported, [])


def mv_record(level: int) -> FeatureLevelRecord:
    return FeatureLevelRecord(MV, level)


def replay_all(manager, records) -> None:
    for record in records:
        manager.replay(record)


def test_update_features():
    """FeatureControlManagerTest.testUpdateFeatures @4.3.0."""
    registry = SnapshotRegistry()
    manager = FeatureControlManager.Builder().set_quorum_features(
        features(TEST_FEATURE_VERSION, 0, 2)).set_snapshot_registry(registry).build()
    manager.replay(mv_record(MINIMUM))
    registry.idempotent_create_snapshot(-1)
    assert manager.finalized_features(-1) == FinalizedControllerFeatures({MV: MINIMUM}, -1)
    assert manager.update_features({TEST_FEATURE_VERSION: 3}, {TEST_FEATURE_VERSION: SAFE},
                                   False, 0) == ControllerResult.of([], invalid(
        "Invalid update version 3 for feature test.feature.version. Local controller 0 only "
        "supports versions 0-2"))
    result = manager.update_features({TEST_FEATURE_VERSION: 1, "bar": 1}, {}, False, 0)
    assert result.response == invalid("Invalid update version 1 for feature bar. Local "
                                      "controller 0 does not support this feature.")
    assert result.records == []
    result = manager.update_features({TEST_FEATURE_VERSION: 1}, {}, False, 0)
    assert result.response == NONE
    assert result.records == [FeatureLevelRecord(TEST_FEATURE_VERSION, 1)]


def test_replay():
    """FeatureControlManagerTest.testReplay @4.3.0."""
    registry = SnapshotRegistry()
    registry.idempotent_create_snapshot(-1)
    manager = FeatureControlManager(quorum_features=features("foo", 1, 2),
                                    snapshot_registry=registry)
    manager.replay(mv_record(MINIMUM))
    manager.replay(FeatureLevelRecord("foo", 2))
    registry.idempotent_create_snapshot(123)
    assert manager.finalized_features(123) == FinalizedControllerFeatures(
        {MV: MINIMUM, "foo": 2}, 123)


def test_replay_kraft_version_feature_level():
    """FeatureControlManagerTest.testReplayKraftVersionFeatureLevel @4.3.0 (KAFKA-18979): a
    kraft.version FeatureLevelRecord is not finalized."""
    registry = SnapshotRegistry()
    manager = FeatureControlManager(quorum_features=features("foo", 1, 2),
                                    snapshot_registry=registry)
    manager.replay(mv_record(MINIMUM))
    manager.replay(FeatureLevelRecord(KRAFT_VERSION, 1))
    registry.idempotent_create_snapshot(123)
    assert manager.finalized_features(123) == FinalizedControllerFeatures({MV: MINIMUM}, 123)


def test_kraft_version_feature_level_is_finalized_in_3_9():
    """FeatureControlManager.replay @3.9.0 has no kraft.version branch: the record is kept."""
    manager = FeatureControlManager(quorum_features=features(KRAFT_VERSION, 0, 1,
                                                             kafka_version="3.9"),
                                    metadata_version="3.9-IV0", kafka_version="3.9")
    manager.replay(FeatureLevelRecord(KRAFT_VERSION, 1))
    assert manager.finalized_features().get(KRAFT_VERSION) == 1


def test_update_features_error_cases():
    """FeatureControlManagerTest.testUpdateFeaturesErrorCases @4.3.0."""
    registry = SnapshotRegistry()
    manager = FeatureControlManager(
        quorum_features=features("foo", 1, 5, TRANSACTION_VERSION, 0, 3),
        snapshot_registry=registry,
        cluster_support_describer=ClusterFeatureSupportDescriber(
            [(5, {TRANSACTION_VERSION: VersionRange.of(0, 2)})], []))
    manager.replay(mv_record(MINIMUM))
    assert manager.update_features({"foo": 3}, {"foo": SAFE}, False, 0) == ControllerResult.of(
        [], invalid("Invalid update version 3 for feature foo. Broker 5 does not support this "
                    "feature."))
    result = manager.update_features({TRANSACTION_VERSION: 2}, {}, False, 0)
    assert result.response == NONE
    manager.replay(result.records[0])
    registry.idempotent_create_snapshot(3)
    assert manager.update_features({TRANSACTION_VERSION: 1}, {}, False, 0) == \
        ControllerResult.of([], invalid(
            "Invalid update version 1 for feature transaction.version. Can't downgrade the "
            "version of this feature without setting the upgrade type to either safe or unsafe "
            "downgrade."))
    assert manager.update_features({TRANSACTION_VERSION: 1}, {TRANSACTION_VERSION: SAFE},
                                   False, 0) == ControllerResult.atomic_of(
        [FeatureLevelRecord(TRANSACTION_VERSION, 1)], NONE)


def test_replay_records():
    """FeatureControlManagerTest.testReplayRecords @4.3.0."""
    manager = FeatureControlManager(
        quorum_features=features(TEST_FEATURE_VERSION, 0, 5, TRANSACTION_VERSION, 0, 2))
    manager.replay(mv_record(MINIMUM))
    result = manager.update_features({TEST_FEATURE_VERSION: 1, TRANSACTION_VERSION: 2}, {},
                                     False, 0)
    replay_all(manager, result.records)
    assert manager.metadata_version_or_throw() == MetadataVersion.from_feature_level(MINIMUM)
    finalized = manager.finalized_features()
    assert finalized.get(TEST_FEATURE_VERSION) == 1
    assert finalized.get(TRANSACTION_VERSION) == 2
    assert finalized.feature_names() == {MV, TEST_FEATURE_VERSION, TRANSACTION_VERSION}


def create_test_manager(kafka_version: str = "4.3") -> FeatureControlManager:
    """FeatureControlManagerTest.createTestManager: supports 3.3-IV3 .. 3.6-IV0, at 3.4-IV0."""
    manager = FeatureControlManager(quorum_features=features(MV, MINIMUM, 12),
                                    kafka_version=kafka_version)
    manager.replay(mv_record(8))
    return manager


def test_apply_metadata_version_change_record():
    """FeatureControlManagerTest.testApplyMetadataVersionChangeRecord @4.3.0."""
    manager = create_test_manager()
    manager.replay(mv_record(manager.metadata_version_or_throw().feature_level + 1))
    assert manager.metadata_version_or_throw() == MetadataVersion.IBP_3_5_IV0


@pytest.mark.parametrize("upgrade_type", [SAFE, UNSAFE])
def test_cannot_downgrade_to_higher_version(upgrade_type):
    """FeatureControlManagerTest.testCannotDowngradeToHigherVersion and
    testCannotUnsafeDowngradeToHigherVersion @4.3.0."""
    assert create_test_manager().update_features({MV: 9}, {MV: upgrade_type}, True, 0) == \
        ControllerResult.of([], invalid("Invalid update version 9 for feature metadata.version."
                                        " Can't downgrade to a newer version."))


def test_cannot_upgrade_to_lower_version():
    """FeatureControlManagerTest.testCannotUpgradeToLowerVersion @4.3.0."""
    manager = FeatureControlManager(quorum_features=features(MV, MINIMUM, 12))
    manager.replay(mv_record(10))
    assert manager.update_features({MV: 9}, {MV: UPGRADE}, True, 0) == ControllerResult.of(
        [], invalid("Invalid update version 9 for feature metadata.version. Can't downgrade the "
                    "version of this feature without setting the upgrade type to either safe or "
                    "unsafe downgrade."))


def test_can_upgrade_to_higher_version():
    """FeatureControlManagerTest.testCanUpgradeToHigherVersion @4.3.0 (validate only)."""
    assert create_test_manager().update_features({MV: 9}, {MV: UPGRADE}, True, 0) == \
        ControllerResult.of([], NONE)


def test_an_upgrade_writes_one_feature_level_record():
    """testCanUpgradeToHigherVersion without validateOnly: one atomic FeatureLevelRecord."""
    assert create_test_manager().update_features({MV: 9}, {MV: UPGRADE}, False, 0) == \
        ControllerResult.atomic_of([mv_record(9)], NONE)


@pytest.mark.parametrize("kafka_version, upgrade_type, message", [
    ("4.3", SAFE, "Unsupported metadata.version downgrade from 8 to 7. Refusing to perform the "
                  "requested downgrade because it might delete metadata information."),
    ("4.3", UNSAFE, "Unsupported metadata.version downgrade from 8 to 7. Unsafe metadata "
                    "downgrade is not supported in this version."),
    ("4.2", SAFE, "Unsupported metadata.version downgrade from 8 to 7. Refusing to perform the "
                  "requested downgrade because it might delete metadata information."),
    ("4.1", SAFE, "Invalid metadata.version 7. Refusing to perform the requested downgrade "
                  "because it might delete metadata information."),
    ("4.0", UNSAFE, "Invalid metadata.version 7. Unsafe metadata downgrade is not supported in "
                    "this version."),
])
def test_cannot_downgrade_if_metadata_changed(kafka_version, upgrade_type, message):
    """FeatureControlManagerTest.testCannotUseSafeDowngradeIfMetadataChanged and
    testUnsafeDowngradeIsTemporarilyDisabled @4.3.0 and @4.0: 3.4-IV0 -> 3.3-IV3 crosses a
    metadata change; from 4.2.0 (apache/kafka PR #20705) the error names both levels."""
    manager = create_test_manager(kafka_version)
    assert manager.update_features({MV: MINIMUM}, {MV: upgrade_type}, True, 0) == \
        ControllerResult.of([], invalid(message))


def test_can_use_safe_downgrade_if_metadata_did_not_change():
    """FeatureControlManagerTest.testCanUseSafeDowngradeIfMetadataDidNotChange @4.3.0."""
    manager = FeatureControlManager(quorum_features=features(MV, MINIMUM, 12))
    manager.replay(mv_record(9))
    assert manager.update_features({MV: 8}, {MV: SAFE}, True, 0) == ControllerResult.of([], NONE)


@pytest.mark.parametrize("kafka_version, latest_testing", [("4.3", 31), ("4.0", 26)])
def test_cannot_downgrade_before_minimum_kraft_version(kafka_version, latest_testing):
    """FeatureControlManagerTest.testCannotDowngradeBeforeMinimumKraftVersion @4.3.0 ("7-31")
    and @4.0 ("7-26"): level 6 (3.3-IV2) is outside what the controller supports."""
    manager = FeatureControlManager(quorum_features=features(
        MV, MINIMUM, MetadataVersion.latest_testing(kafka_version).feature_level,
        kafka_version=kafka_version), kafka_version=kafka_version)
    manager.replay(mv_record(MINIMUM))
    assert manager.update_features({MV: 6}, {MV: UNSAFE}, True, 0) == ControllerResult.of(
        [], invalid(f"Invalid update version 6 for feature metadata.version. Local controller 0 "
                    f"only supports versions 7-{latest_testing}"))


def test_create_feature_level_records():
    """FeatureControlManagerTest.testCreateFeatureLevelRecords @4.3.0: level 0 (an unsafe
    downgrade) removes the feature."""
    manager = FeatureControlManager(
        quorum_features=QuorumFeatures(0, {MV: VersionRange.of(MINIMUM, LATEST_TESTING),
                                           TEST_FEATURE_VERSION: VersionRange.of(0, 2)}, []),
        cluster_support_describer=ClusterFeatureSupportDescriber(
            [(1, {TEST_FEATURE_VERSION: VersionRange.of(0, 3)})], []))
    manager.replay(mv_record(MINIMUM))
    result = manager.update_features({TEST_FEATURE_VERSION: 1}, {TEST_FEATURE_VERSION: UPGRADE},
                                     False, 0)
    assert result == ControllerResult.atomic_of([FeatureLevelRecord(TEST_FEATURE_VERSION, 1)],
                                                NONE)
    replay_all(manager, result.records)
    assert manager.finalized_features().get(TEST_FEATURE_VERSION) == 1
    result = manager.update_features({TEST_FEATURE_VERSION: 0}, {TEST_FEATURE_VERSION: UNSAFE},
                                     False, 0)
    assert result == ControllerResult.atomic_of([FeatureLevelRecord(TEST_FEATURE_VERSION, 0)],
                                                NONE)
    replay_all(manager, result.records)
    assert manager.finalized_features().get(TEST_FEATURE_VERSION) is None


def elr_manager(mv_level: int, **broker_features) -> FeatureControlManager:
    broker = {ELIGIBLE_LEADER_REPLICAS_VERSION: VersionRange.of(0, 1), **broker_features}
    manager = FeatureControlManager(
        quorum_features=QuorumFeatures(0, {
            MV: VersionRange.of(min(mv_level, 23), LATEST_TESTING),
            ELIGIBLE_LEADER_REPLICAS_VERSION: VersionRange.of(0, 1)}, []),
        cluster_support_describer=ClusterFeatureSupportDescriber(
            [(1, broker)], []))
    manager.replay(mv_record(mv_level))
    return manager


def test_upgrade_elr_feature_level():
    """FeatureControlManagerTest.testUpgradeElrFeatureLevel @4.3.0: at metadata.version
    4.0-IV1 eligible.leader.replicas.version goes to 1 (KIP-966 enabled)."""
    manager = elr_manager(23)
    assert not manager.is_elr_feature_enabled()
    result = manager.update_features({ELIGIBLE_LEADER_REPLICAS_VERSION: 1},
                                     {ELIGIBLE_LEADER_REPLICAS_VERSION: UPGRADE}, False, 0)
    assert result.response.is_success()
    assert result.records == [FeatureLevelRecord(ELIGIBLE_LEADER_REPLICAS_VERSION, 1)]
    replay_all(manager, result.records)
    assert manager.finalized_features().get(ELIGIBLE_LEADER_REPLICAS_VERSION) == 1
    assert manager.is_elr_feature_enabled()


def test_elr_needs_metadata_version_4_0_iv1():
    """Feature.validateVersion @4.3.0 (EligibleLeaderReplicasVersion.ELRV_1 depends on
    metadata.version 23): below 4.0-IV1 enabling ELR fails and nothing is written."""
    manager = elr_manager(22)
    assert manager.update_features({ELIGIBLE_LEADER_REPLICAS_VERSION: 1}, {}, False, 0) == \
        ControllerResult.of([], invalid(
            "Invalid update version 1 for feature eligible.leader.replicas.version. "
            "eligible.leader.replicas.version could not be set to 1 because it depends on "
            "metadata.version level 23"))
    # the pure-function model of ConfigurationControlManager.updateFeatures says the same
    assert elr_safety(cluster_config={}, metadata_version_supports_elr=False).error_message == \
        ELR_METADATA_VERSION_ERROR.format(level=1) == manager.update_features(
            {ELIGIBLE_LEADER_REPLICAS_VERSION: 1}, {}, False, 0).response.message


def test_elr_and_metadata_version_upgraded_together():
    """Feature.validateVersion checks the proposed levels: metadata.version 4.0-IV1 and ELR 1
    in one request pass at 4.0-IV0 (the broker must support both)."""
    manager = elr_manager(22, **{MV: VersionRange.of(MINIMUM, LATEST_TESTING)})
    result = manager.update_features({MV: 23, ELIGIBLE_LEADER_REPLICAS_VERSION: 1}, {}, False, 0)
    assert result.response == NONE
    assert sorted(result.records, key=lambda r: r.name) == [
        FeatureLevelRecord(ELIGIBLE_LEADER_REPLICAS_VERSION, 1), mv_record(23)]


def test_metadata_version():
    """FeatureControlManagerTest.testMetadataVersion @4.3.0 (KAFKA-18858): none until a
    FeatureLevelRecord is replayed."""
    manager = FeatureControlManager.Builder().build()
    assert manager.metadata_version() is None
    with pytest.raises(RuntimeError):
        manager.metadata_version_or_throw()
    manager.replay(mv_record(MINIMUM))
    assert manager.metadata_version() == MetadataVersion.from_feature_level(MINIMUM)
    assert manager.metadata_version_or_throw() == MetadataVersion.from_feature_level(MINIMUM)


def test_4_0_starts_at_the_latest_production_metadata_version():
    """FeatureControlManager.Builder @4.0: metadataVersion defaults to latestProduction()
    (4.0-IV3) and setMetadataVersion sets it (FeatureControlManagerTest @4.0 builds with it)."""
    assert FeatureControlManager(kafka_version="4.0").metadata_version() == \
        MetadataVersion.parse("4.0-IV3")
    manager = FeatureControlManager.Builder().set_kafka_version("4.0").set_metadata_version(
        "3.3-IV3").set_quorum_features(features(TEST_FEATURE_VERSION, 0, 2,
                                                kafka_version="4.0")).build()
    assert manager.finalized_features() == FinalizedControllerFeatures({MV: 7}, (1 << 63) - 1)


def test_quorum_features_reason_not_supported():
    """QuorumFeatures.reasonNotSupported @4.3.0 and VersionRange.toString."""
    assert QuorumFeatures.reason_not_supported(3, "Broker 1", VersionRange.of(0, 0)) == \
        "Broker 1 does not support this feature."
    assert QuorumFeatures.reason_not_supported(3, "Broker 1", VersionRange.of(1, 1)) == \
        "Broker 1 only supports versions 1"
    assert QuorumFeatures.reason_not_supported(2, "Broker 1", VersionRange.of(1, 2)) is None
    assert str(VersionRange.of(1, 32767)) == "1+"


def test_unregistered_quorum_controller_blocks_an_update():
    """FeatureControlManager.reasonNotSupported @4.3.0: from metadata.version 3.7-IV0 every
    quorum node must have registered its supported range."""
    manager = FeatureControlManager(
        quorum_features=QuorumFeatures(0, {MV: VersionRange.of(MINIMUM, LATEST_TESTING)},
                                       [0, 1, 2]),
        cluster_support_describer=ClusterFeatureSupportDescriber(
            [], [(1, {MV: VersionRange.of(MINIMUM, LATEST_TESTING)})]))
    manager.replay(mv_record(15))
    assert manager.update_features({MV: 16}, {}, True, 0).response == invalid(
        "Invalid update version 16 for feature metadata.version. controller 2 has not "
        "registered, and may not support this feature")
    manager.replay(mv_record(14))     # 3.6-IV2: controller support cannot be checked
    assert manager.update_features({MV: 16}, {}, True, 0).response == NONE


# ---- 3.9.0: one ApiError per feature (FeatureControlManagerTest @3.9.0-rc3) ---------------

def manager_3_9(*ranges, mv: str = "3.3-IV0", describer=None) -> FeatureControlManager:
    return FeatureControlManager(quorum_features=features(*ranges, kafka_version="3.9"),
                                 metadata_version=mv, kafka_version="3.9",
                                 cluster_support_describer=describer)


def test_update_features_3_9():
    """FeatureControlManagerTest.testUpdateFeatures @3.9.0: the feature that passes is written
    though another fails; the answer maps each feature to its ApiError."""
    registry = SnapshotRegistry()
    manager = FeatureControlManager(quorum_features=features("foo", 1, 2, kafka_version="3.9"),
                                    snapshot_registry=registry, metadata_version="3.3-IV0",
                                    kafka_version="3.9")
    registry.idempotent_create_snapshot(-1)
    assert manager.finalized_features(-1) == FinalizedControllerFeatures({MV: 4}, -1)
    assert manager.update_features({"foo": 3}, {"foo": SAFE}, False) == \
        ControllerResult.atomic_of([], {"foo": invalid(
            "Invalid update version 3 for feature foo. Local controller 0 only supports "
            "versions 1-2")})
    result = manager.update_features({"foo": 2, "bar": 1}, {}, False)
    assert result.response == {"foo": NONE, "bar": invalid(
        "Invalid update version 1 for feature bar. Local controller 0 does not support this "
        "feature.")}
    assert result.records == [FeatureLevelRecord("foo", 2)]


def test_update_features_error_cases_3_9():
    """FeatureControlManagerTest.testUpdateFeaturesErrorCases @3.9.0 (no dependency check:
    any feature name the quorum supports can be finalized)."""
    manager = manager_3_9("foo", 1, 5, "bar", 0, 3, mv="3.9-IV0",
                          describer=ClusterFeatureSupportDescriber(
                              [(5, {"bar": VersionRange.of(0, 3)})], []))
    assert manager.update_features({"foo": 3}, {"foo": SAFE}, False) == \
        ControllerResult.atomic_of([], {"foo": invalid(
            "Invalid update version 3 for feature foo. Broker 5 does not support this "
            "feature.")})
    result = manager.update_features({"bar": 3}, {}, False)
    assert result.response == {"bar": NONE}
    manager.replay(result.records[0])
    assert manager.update_features({"bar": 2}, {}, False) == ControllerResult.atomic_of([], {
        "bar": invalid("Invalid update version 2 for feature bar. Can't downgrade the version "
                       "of this feature without setting the upgrade type to either safe or "
                       "unsafe downgrade.")})
    assert manager.update_features({"bar": 2}, {"bar": SAFE}, False) == \
        ControllerResult.atomic_of([FeatureLevelRecord("bar", 2)], {"bar": NONE})


def test_metadata_version_downgrades_3_9():
    """FeatureControlManagerTest @3.9.0 with TEST_MANAGER_BUILDER1 (supports 3.3-IV0 ..
    3.3-IV3, at 3.3-IV2): testCannotDowngradeToVersionBeforeMinimumSupportedKraftVersion,
    testCannotDowngradeToHigherVersion, testCannotUpgradeToLowerVersion,
    testCanUpgradeToHigherVersion, testCannotUseSafeDowngradeIfMetadataChanged,
    testUnsafeDowngradeIsTemporarilyDisabled."""
    def update(level, upgrade_type):
        manager = manager_3_9(MV, 4, 7, mv="3.3-IV2")
        result = manager.update_features({MV: level}, {MV: upgrade_type}, True)
        assert result.records == []
        return result.response[MV]

    prefix = "Invalid update version {} for feature metadata.version. "
    assert update(3, UNSAFE) == invalid(prefix.format(3) + "Local controller 0 only supports "
                                                           "versions 4-7")
    assert update(7, SAFE) == invalid(prefix.format(7) + "Can't downgrade to a newer version.")
    assert update(7, UNSAFE) == invalid(prefix.format(7) + "Can't downgrade to a newer version.")
    assert update(4, UPGRADE) == invalid(
        prefix.format(4) + "Can't downgrade the version of this feature without setting the "
        "upgrade type to either safe or unsafe downgrade.")
    assert update(7, UPGRADE) == NONE
    assert update(4, SAFE) == invalid("Invalid metadata.version 4. Refusing to perform the "
                                      "requested downgrade because it might delete metadata "
                                      "information.")
    assert update(4, UNSAFE) == invalid("Invalid metadata.version 4. Unsafe metadata downgrade "
                                        "is not supported in this version.")


def test_cannot_downgrade_before_3_3_iv0_3_9():
    """FeatureControlManagerTest.testCannotDowngradeBefore3_3_IV0 @3.9.0 (3.9 controllers
    support levels from 3.0-IV1 but refuse to set one below 3.3-IV0)."""
    manager = manager_3_9(MV, 1, 7, mv="3.3-IV0")
    assert manager.update_features({MV: 3}, {MV: UNSAFE}, True) == ControllerResult.of([], {
        MV: invalid("Invalid metadata.version 3. Unable to set a metadata.version less than "
                    "3.3-IV0")})


def test_create_feature_level_records_3_9():
    """FeatureControlManagerTest.testCreateFeatureLevelRecords @3.9.0 (Builder default:
    metadata.version latestProduction 3.9-IV0)."""
    manager = FeatureControlManager(
        quorum_features=QuorumFeatures(0, {MV: VersionRange.of(1, 23),
                                           "foo": VersionRange.of(0, 2)}, []),
        cluster_support_describer=ClusterFeatureSupportDescriber(
            [(1, {"foo": VersionRange.of(0, 3)})], []), kafka_version="3.9")
    assert manager.metadata_version() == MetadataVersion.parse("3.9-IV0")
    result = manager.update_features({"foo": 1}, {"foo": UPGRADE}, False)
    assert result == ControllerResult.atomic_of([FeatureLevelRecord("foo", 1)], {"foo": NONE})
    replay_all(manager, result.records)
    assert manager.finalized_features().get("foo") == 1
    result = manager.update_features({"foo": 0}, {"foo": UNSAFE}, False)
    assert result == ControllerResult.atomic_of([FeatureLevelRecord("foo", 0)], {"foo": NONE})
    replay_all(manager, result.records)
    assert manager.finalized_features().get("foo") is None


# ---- the features a new cluster is formatted with (Formatter, BootstrapMetadata) -------------

@pytest.mark.parametrize("kafka_version, expected", [
    ("4.3", [(MV, 30), (ELIGIBLE_LEADER_REPLICAS_VERSION, 1), ("group.version", 1),
             ("share.version", 1), ("streams.version", 1), (TRANSACTION_VERSION, 2)]),
    ("4.2", [(MV, 29), (ELIGIBLE_LEADER_REPLICAS_VERSION, 1), ("group.version", 1),
             ("share.version", 1), ("streams.version", 1), (TRANSACTION_VERSION, 2)]),
    ("4.1", [(MV, 27), (ELIGIBLE_LEADER_REPLICAS_VERSION, 1), ("group.version", 1),
             (TRANSACTION_VERSION, 2)]),
    ("4.0", [(MV, 25), ("group.version", 1), (TRANSACTION_VERSION, 2)]),
    ("3.9", [(MV, 21)]),
])
def test_bootstrap_records_of_a_release(kafka_version, expected):
    """Formatter.calculateEffectiveFeatureLevels -> BootstrapMetadata.fromVersions (4.3.0
    Formatter.java:295, BootstrapMetadata.java:42): metadata.version, then every production
    feature at Feature.defaultLevel(release's latest production metadata.version) above 0, by
    name; kraft.version writes no record. ELR is on by default from 4.1 (ELRV_1 bootstraps at
    4.1-IV0)."""
    mv = MetadataVersion.latest_production(kafka_version)
    assert [(r.name, r.feature_level) for r in bootstrap_records(mv, kafka_version)] == expected


def test_streams_version_became_production_in_4_2():
    """StreamsVersion.LATEST_PRODUCTION: SV_0 at 4.1.0, SV_1 at 4.2.0; so a 4.1 controller's
    default supported features leave streams.version out."""
    assert latest_production_level("streams.version", "4.1") == 0
    assert latest_production_level("streams.version", "4.2") == 1
    assert "streams.version" not in QuorumFeatures.default_supported_feature_map(False, "4.1")
    assert QuorumFeatures.default_supported_feature_map(False, "4.3")["streams.version"] == \
        VersionRange.of(0, 1)


#: What ``kafka-storage format`` (no --feature, no --release-version) writes for each release:
#: read from StorageTool.scala @3.3.2-3.8.0 (metadata.version only: MetadataVersion.latest() /
#: LATEST_PRODUCTION; 3.8's Features has only test.feature.version), Features.java +
#: Formatter.java @3.9.0-rc3 (kraft.version and transaction.version, both without a record:
#: kraft.version never writes one, TV_1 bootstraps at 4.0-IV0), and Feature.java /
#: Formatter.java:295 / BootstrapMetadata.java:46 at 4.0 4ae681446f, 4.1.0 13f70256db,
#: 4.2.0 a18251bae0, 4.3.0 a9ce322153 and the 4.4 branch f86720838c (ShareVersion SV_2 at
#: 4.4-IV0; kafkasim's 4.4 formats at 4.4-IV2, see metadata_version).
FORMATTED = {
    "3.3": [(MV, 7)], "3.4": [(MV, 8)], "3.5": [(MV, 11)], "3.6": [(MV, 14)],
    "3.7": [(MV, 19)], "3.8": [(MV, 20)], "3.9": [(MV, 21)],
    "4.0": [(MV, 25), ("group.version", 1), (TRANSACTION_VERSION, 2)],
    "4.1": [(MV, 27), (ELIGIBLE_LEADER_REPLICAS_VERSION, 1), ("group.version", 1),
            (TRANSACTION_VERSION, 2)],
    "4.2": [(MV, 29), (ELIGIBLE_LEADER_REPLICAS_VERSION, 1), ("group.version", 1),
            ("share.version", 1), ("streams.version", 1), (TRANSACTION_VERSION, 2)],
    "4.3": [(MV, 30), (ELIGIBLE_LEADER_REPLICAS_VERSION, 1), ("group.version", 1),
            ("share.version", 1), ("streams.version", 1), (TRANSACTION_VERSION, 2)],
    "4.4": [(MV, 33), (ELIGIBLE_LEADER_REPLICAS_VERSION, 1), ("group.version", 1),
            ("share.version", 2), ("streams.version", 1), (TRANSACTION_VERSION, 2)],
}


@pytest.mark.parametrize("kafka_version", sorted(FORMATTED))
def test_simulated_cluster_bootstraps_kafkas_feature_records(kafka_version):
    """A simulated KRaft cluster's first active controller writes exactly the records
    ``kafka-storage format`` puts in bootstrap.checkpoint, as ActivationRecordsGenerator
    .recordsForEmptyLog lays them out (ActivationRecordsGenerator.java:39@4.3.0, :34@3.9.0-rc3):
    between Begin/EndTransactionRecords from metadata.version 3.6-IV1, then a
    ZkMigrationStateRecord NONE in 3.5 - 3.9 and, with ELR, the cluster-level
    min.insync.replicas; the controller's FeatureControlManager and the metadata image finalize
    every one of them."""
    from kafkasim.runtime.cluster import Cluster

    expected = FORMATTED[kafka_version]
    c = Cluster(3, seed=7, kafka_version=kafka_version, metadata_mode="kraft")
    c.run(2000)
    entries = c.kraft.active().raft.log.entries
    assert type(entries[0][2]).__name__ == "LeaderChangeMessage"
    transaction = version_at_least(kafka_version, "3.6")
    first = 2 if transaction else 1
    if transaction:
        assert entries[1][2] == BeginTransactionRecord("Bootstrap records")
    written = [r for _o, _e, r in entries[first:first + len(expected)]]
    assert [(r.name, r.feature_level) for r in written] == expected
    assert all(type(r) is FeatureLevelRecord for r in written)
    tail = [type(r).__name__ for _o, _e, r in entries[first + len(expected):]]
    after = []
    if version_at_least(kafka_version, "3.5") and not version_at_least(kafka_version, "4.0"):
        after.append("ZkMigrationStateRecord")
    if (ELIGIBLE_LEADER_REPLICAS_VERSION, 1) in expected:
        after.append("ConfigRecord")
    if transaction:
        after.append("EndTransactionRecord")
    assert tail[:len(after) + 1] == [*after, "RegisterBrokerRecord"]
    assert c.kraft.active().controller.feature_control.finalized_features().feature_map == \
        dict(expected)
    assert c.kraft.image.features == dict(expected)


def test_elr_rule_override_changes_only_the_elr_record():
    """``elr_enabled_by_default`` overridden (``kafka-storage format --feature
    eligible.leader.replicas.version=0`` on 4.3, =1 on 4.0): the other records stay."""
    from kafkasim.runtime.bootstrap import version_profile
    from kafkasim.runtime.kraft_cluster import kraft_settings

    def records(version, rules):
        profile = version_profile(version, rules, {}, "kraft")
        settings = kraft_settings(version, profile.rules, dict(profile.broker_config), 1)
        return [(r.name, r.feature_level) for r in settings["bootstrap_records"]]

    assert records("4.3", None) == FORMATTED["4.3"]
    assert records("4.3", {"elr_enabled_by_default": False}) == [
        x for x in FORMATTED["4.3"] if x[0] != ELIGIBLE_LEADER_REPLICAS_VERSION]
    assert records("4.0", {"elr_enabled_by_default": True}) == [
        (MV, 25), (ELIGIBLE_LEADER_REPLICAS_VERSION, 1), ("group.version", 1),
        (TRANSACTION_VERSION, 2)]


def test_bootstrap_records_refuse_a_feature_the_release_lacks():
    """Formatter.calculateEffectiveFeatureLevels: "Unsupported feature: X. Supported features
    are: ..." (a 3.9 release has no eligible.leader.replicas.version)."""
    with pytest.raises(ValueError, match="Unsupported feature: eligible.leader.replicas.version. "
                                         "Supported features are: kraft.version, "
                                         "transaction.version"):
        bootstrap_records("3.9-IV0", "3.9", {ELIGIBLE_LEADER_REPLICAS_VERSION: 1})


def test_share_version_2_is_production_in_4_4():
    """ShareVersion @4.4 branch (f86720838c, KAFKA-20793): SV_2 bootstraps at 4.4-IV0 and is
    LATEST_PRODUCTION; 4.3.0 knows no level 2."""
    assert latest_production_level("share.version", "4.4") == 2
    assert latest_production_level("share.version", "4.3") == 1
    assert QuorumFeatures.default_supported_feature_map(False, "4.4")["share.version"] == \
        VersionRange.of(0, 2)
    with pytest.raises(ValueError, match="No feature:share.version with feature level 2"):
        from_feature_level("share.version", 2, "4.3")


def test_3_9_controller_supported_features():
    """QuorumFeatures.defaultFeatureMap @3.9.0-rc3: metadata.version from 3.0-IV1 (1) to
    3.9-IV0 (21; unstable: 4.0-IV1, 23) and kraft.version 0-1; transaction.version is a 3.9
    feature with no production level (in the unstable map only)."""
    assert QuorumFeatures.default_supported_feature_map(False, "3.9") == {
        MV: VersionRange.of(1, 21), KRAFT_VERSION: VersionRange.of(0, 1)}
    unstable = QuorumFeatures.default_supported_feature_map(True, "3.9")
    assert unstable[MV] == VersionRange.of(1, 23)
    assert unstable[TRANSACTION_VERSION] == VersionRange.of(0, 2)
