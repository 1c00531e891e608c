"""QuorumController's feature updates and NoOpRecord cadence, and ConfigurationControlManager's
updateFeatures, ported at 4.3.0 (confluentinc a9ce322153), 4.0 (4ae681446f) and 3.9.0.

- ConfigurationControlManagerTest.testElrUpgrade / testRejectMinIsrChangeWhenElrEnabled @4.3.0
  over kafkasim's ConfigurationControlManager with a FeatureControlManager (the same cases run
  on the pure functions in tests/test_elr_safety.py).
- QuorumController.updateFeatures @4.3.0 (ConfigurationControlManager.updateFeatures, then the
  records written and replayed): enabling ELR on a running 4.x controller.
- metadata.max.idle.interval.ms (KafkaConfig @3.3.0 / KRaftConfigs @3.9.0: INT, 500,
  atLeast(0)): ControllerServer @4.3.0 passes ``metadataMaxIdleIntervalNs`` (empty at 0) to
  the QuorumController, which registers writeNoOpRecord only when present (3.9.0:
  maybeScheduleNextWriteNoOpRecord, same condition). QuorumControllerTest
  .testNoOpRecordWriteAfterTimeout covers the cadence (tests/test_quorum_controller_kafka.py).

Uses the ControllerEnv of tests/test_quorum_controller_kafka.py (one controller on a simulated
clock). Scenarios are Kafka's; code is our own.
"""

from __future__ import annotations

import pytest
from test_quorum_controller_kafka import (
    ControllerEnv,
    bootstrap,
    register_brokers_and_unfence,
)

from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.cluster_control import UnsupportedVersionException
from kafkasim.control.kraft.configuration_control import (
    DELETE,
    SET,
    ApiError,
    ConfigResource,
    ConfigurationControlManager,
)
from kafkasim.control.kraft.feature_control import (
    ELIGIBLE_LEADER_REPLICAS_VERSION,
    FeatureControlManager,
    QuorumFeatures,
    UpgradeType,
)
from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.core import errors as E
from kafkasim.core.messages import BrokerRegistrationRequest

ELR = ELIGIBLE_LEADER_REPLICAS_VERSION
MIN_ISR = "min.insync.replicas"
BOOT = {"3.9": bootstrap("3.9-IV0"), "4.3": bootstrap("4.3-IV0")}


def config_manager(mv: str) -> tuple[ConfigurationControlManager, FeatureControlManager]:
    """The set-up of testElrUpgrade / testRejectMinIsrChangeWhenElrEnabled: a feature manager
    over defaultSupportedFeatureMap(true) at ``mv``, a ConfigurationControlManager with static
    min.insync.replicas 2."""
    features = FeatureControlManager(quorum_features=QuorumFeatures(
        0, QuorumFeatures.default_supported_feature_map(True), []))
    features.replay(R.FeatureLevelRecord("metadata.version", MetadataVersion.parse(mv)
                                         .feature_level))
    return ConfigurationControlManager(default_min_isr=2, feature_control=features), features


def replay_all(manager, records) -> None:
    for record in records:
        if type(record) is R.ConfigRecord:
            manager.replay(record)


@pytest.mark.parametrize("elr_metadata_version", [False, True])
def test_elr_upgrade(elr_metadata_version):
    """ConfigurationControlManagerTest.testElrUpgrade @4.3.0: at 4.0-IV1 ELR is enabled (the
    cluster-level min.insync.replicas, then the FeatureLevelRecord, atomically); at 4.0-IV0
    INVALID_UPDATE_VERSION."""
    manager, features = config_manager("4.0-IV1" if elr_metadata_version else "4.0-IV0")
    assert not features.is_elr_feature_enabled()
    result = manager.update_features({ELR: 1}, {ELR: UpgradeType.UPGRADE}, False, 0)
    if not elr_metadata_version:
        assert result.response.error == E.INVALID_UPDATE_VERSION
        return
    assert result.response == ApiError()
    assert result.is_atomic
    assert result.records == [R.ConfigRecord("BROKER", "", MIN_ISR, "2"),
                              R.FeatureLevelRecord(ELR, 1)]
    replay_all(manager, result.records)
    features.replay(result.records[-1])
    assert features.is_elr_feature_enabled()


@pytest.mark.parametrize("removal", [False, True])
def test_reject_min_isr_change_when_elr_enabled(removal):
    """ConfigurationControlManagerTest.testRejectMinIsrChangeWhenElrEnabled @4.3.0 (at
    MetadataVersion.LATEST_PRODUCTION)."""
    manager, features = config_manager(MetadataVersion.latest_production("4.3").version())
    result = manager.update_features({ELR: 1}, {ELR: UpgradeType.UPGRADE}, False, 0)
    assert result.response.error == E.NONE
    replay_all(manager, result.records)
    for record in result.records:
        if type(record) is R.FeatureLevelRecord:
            features.replay(record)
    op = (DELETE, None) if removal else (SET, "3")
    _records, results = manager.incremental_alter_configs({("BROKER", "1"): {MIN_ISR: op}})
    assert results[ConfigResource("BROKER", "1")] == ApiError(
        E.INVALID_CONFIG, "Broker-level min.insync.replicas cannot be altered while ELR is "
                          "enabled.")
    _records, results = manager.incremental_alter_configs({("BROKER", ""): {MIN_ISR: op}})
    if removal:
        assert results[ConfigResource("BROKER", "")] == ApiError(
            E.INVALID_CONFIG, "Cluster-level min.insync.replicas cannot be removed while ELR "
                              "is enabled.")
    else:
        assert results[ConfigResource("BROKER", "")].error == E.NONE


def test_update_features_enables_elr_on_a_running_controller():
    """QuorumController.updateFeatures @4.3.0: a controller bootstrapped at 4.0-IV3 without
    ELR writes the cluster-level min.insync.replicas and eligible.leader.replicas.version 1 in
    one batch; once committed, the controller's FeatureControlManager and its
    ReplicationControlManager both see ELR enabled."""
    env = ControllerEnv(bootstrap("4.0-IV3"), version="4.3")
    register_brokers_and_unfence(env, 3)
    assert not env.active.feature_control.is_elr_feature_enabled()
    before = len(env.metadata_records())
    assert env.get(env.active.update_features(env, {ELR: 1}, {ELR: UpgradeType.UPGRADE})) == \
        ApiError()
    written = [r for r in env.metadata_records()[before:] if type(r) is not R.NoOpRecord]
    assert written == [R.ConfigRecord("BROKER", "", MIN_ISR, "1"), R.FeatureLevelRecord(ELR, 1)]
    assert env.active.feature_control.is_elr_feature_enabled()
    assert env.active.replication_control.eligible_leader_replicas_enabled
    assert env.active.feature_control.finalized_features().get(ELR) == 1


def test_update_features_refused_writes_nothing():
    """QuorumController.updateFeatures @4.3.0: a refused update (metadata.version downgrade
    across 4.0-IV1's metadata change) writes no record and answers INVALID_UPDATE_VERSION."""
    env = ControllerEnv(bootstrap("4.0-IV3"), version="4.3")
    before = [r for r in env.metadata_records() if type(r) is not R.NoOpRecord]
    error = env.get(env.active.update_features(
        env, {"metadata.version": 22}, {"metadata.version": UpgradeType.SAFE_DOWNGRADE}))
    assert error == ApiError(E.INVALID_UPDATE_VERSION,
                             "Unsupported metadata.version downgrade from 25 to 22. Refusing to "
                             "perform the requested downgrade because it might delete metadata "
                             "information.")
    assert [r for r in env.metadata_records() if type(r) is not R.NoOpRecord] == before


def test_update_features_needs_an_active_controller():
    """An inactive controller answers NOT_CONTROLLER (QuorumController.appendWriteEvent)."""
    env = ControllerEnv(version="4.3")
    env.active.active = False
    future = env.active.update_features(env, {ELR: 1})
    assert future.done()
    with pytest.raises(Exception) as info:
        future.get()
    assert getattr(info.value, "error", None) == E.NOT_CONTROLLER


@pytest.mark.parametrize("version", ["3.9", "4.3"])
def test_no_no_op_records_when_max_idle_interval_is_zero(version):
    """metadata.max.idle.interval.ms=0: no writeNoOpRecord (4.x: not registered with the
    PeriodicTaskControlManager; 3.9: never scheduled), so an idle log stays as it is."""
    env = ControllerEnv(BOOT[version], version=version,
                        config={"metadata.max.idle.interval.ms": 0})
    if env.active.periodic is not None:
        assert "writeNoOpRecord" not in env.active.periodic.tasks
    hw = env.raft.high_watermark
    env.advance(5000)
    assert env.raft.high_watermark == hw
    assert not any(type(r) is R.NoOpRecord for r in env.metadata_records())


@pytest.mark.parametrize("version", ["3.9", "4.3"])
def test_no_op_records_every_max_idle_interval(version):
    """metadata.max.idle.interval.ms=200: one NoOpRecord per 200 ms of idle time (4.x: the
    periodic task, first run one period after activation)."""
    env = ControllerEnv(BOOT[version], version=version,
                        config={"metadata.max.idle.interval.ms": 200})
    start = sum(type(r) is R.NoOpRecord for r in env.metadata_records())
    env.advance(1000)
    assert sum(type(r) is R.NoOpRecord for r in env.metadata_records()) - start == 5


@pytest.mark.parametrize("finalized_kraft_version, broker_max_kraft_version",
                         [(0, 0), (0, 1), (1, 0), (1, 1)])
def test_register_broker_kraft_versions(finalized_kraft_version, broker_max_kraft_version):
    """QuorumControllerTest.testRegisterBrokerKRaftVersions @4.3.0: registerBroker checks the
    broker's kraft.version range against the Raft client's kraft.version (a broker that lists
    none supports only 0); SIMPLE_BOOTSTRAP (3.7-IV0)."""
    env = ControllerEnv(bootstrap("3.7-IV0"), version="4.3", kraft_version=finalized_kraft_version)
    features = [("metadata.version", 7, MetadataVersion.latest_testing("4.3").feature_level)]
    if broker_max_kraft_version != 0:
        features.append(("kraft.version", 0, broker_max_kraft_version))
    request = BrokerRegistrationRequest(0, "kxAT73dKQsitIedpiPtwBA", None, -1)
    future = env.active.register_broker(env, request, features=features)
    if broker_max_kraft_version < finalized_kraft_version:
        with pytest.raises(UnsupportedVersionException) as info:
            env.get(future)
        assert str(info.value) == (
            f"Unable to register because the broker does not support finalized version "
            f"{finalized_kraft_version} of kraft.version. The broker wants a version between 0 "
            f"and {broker_max_kraft_version}, inclusive.")
    else:
        assert env.get(future).epoch >= 2   # Kafka: >= 4 (its activation writes more records)


# ---- the same through a simulated cluster (kafka-features upgrade --feature ...) ------------

def test_kafka_features_upgrade_enables_elr_in_a_4_0_cluster():
    """4.0 ships ELR off (a preview, KIP-966): ``kafka-features upgrade --feature
    eligible.leader.replicas.version=1`` has the active controller write the cluster-level
    min.insync.replicas, then the FeatureLevelRecord; from then on its ReplicationControlManager
    keeps ELRs."""
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(3, seed=7, kafka_version="4.0")
    c.run(3000)
    rc = lambda: c.kraft.active().controller.replication_control   # noqa: E731
    assert not rc().is_elr_enabled()
    assert c.kraft.update_features({ELR: 1}) == {ELR: 1}
    assert rc().is_elr_enabled()
    rows = [row[2:5:2] for row in c.kraft.metadata_log()[-2:]]
    assert rows == [("ConfigRecord", "resource_type=BROKER, resource_name=, "
                                     "name=min.insync.replicas, value=1"),
                    ("FeatureLevelRecord", "name=eligible.leader.replicas.version, "
                                           "feature_level=1")]


def test_kafka_features_upgrade_of_elr_is_refused_by_a_3_9_controller():
    """A 3.9 controller knows no eligible.leader.replicas.version (its supported features do
    not list it): the update is refused and nothing is written."""
    from kafkasim.runtime.cluster import Cluster
    from kafkasim.runtime.quorum_admin import QuorumReconfigurationError

    c = Cluster(3, seed=7, kafka_version="3.9", metadata_mode="kraft")
    c.run(3000)
    before = [r for r in c.kraft.metadata_log() if r[2] != "NoOpRecord"]
    with pytest.raises(QuorumReconfigurationError) as info:
        c.kraft.update_features({ELR: 1})
    assert str(info.value) == (
        "org.apache.kafka.common.errors.InvalidUpdateVersionException: Invalid update version 1 "
        f"for feature eligible.leader.replicas.version. Local controller {c.kraft.active().id} "
        "does not support this feature.")
    assert info.value.error == E.INVALID_UPDATE_VERSION
    assert [r for r in c.kraft.metadata_log() if r[2] != "NoOpRecord"] == before


def test_3_9_pre_production_log_writes_no_no_op_records_until_upgraded():
    """QuorumController @3.9.0: the FeatureControlManager starts at MINIMUM_KRAFT_VERSION
    (3.0-IV1) for a pre-production log without metadata.version, and
    maybeScheduleNextWriteNoOpRecord needs isNoOpRecordSupported (3.3-IV1): no NoOpRecord until
    an upgrade to 3.3-IV1 is replayed, then one every metadata.max.idle.interval.ms."""
    records = (R.RegisterBrokerRecord(123, 42, "v78Gbc6sQXK0y5qqRxiryw", None),
               R.UnfenceBrokerRecord(123, 42))
    env = ControllerEnv(bootstrap("3.9-IV0"), version="3.9",
                        log=[(i, 0, r) for i, r in enumerate(records)])
    assert env.active.feature_control.metadata_version() == MetadataVersion.parse("3.0-IV1")
    env.advance(2000)
    assert not any(type(r) is R.NoOpRecord for r in env.metadata_records())
    answer = env.get(env.active.update_features(env, {"metadata.version": 5}))
    assert answer == {"metadata.version": ApiError()}      # 3.9: one result per feature
    assert env.active.feature_control.metadata_version() == MetadataVersion.parse("3.3-IV1")
    env.advance(1000)
    assert sum(type(r) is R.NoOpRecord for r in env.metadata_records()) == 2


def test_kafka_features_downgrade():
    """``kafka-features downgrade``: at 4.1 (ELR on by default) eligible.leader.replicas.version
    goes back to 0 (SAFE_DOWNGRADE; the FeatureLevelRecord removes the feature) and the
    controller stops keeping ELRs; metadata.version 4.1-IV1 -> 4.1-IV0 crosses no metadata
    change and is allowed, -> 4.0-IV0 crosses 4.0-IV1's and is refused, unsafe or not
    (FeatureControlManager.updateMetadataVersion @4.1.0: 'Invalid metadata.version 22. ...')."""
    from kafkasim.runtime.cluster import Cluster
    from kafkasim.runtime.quorum_admin import QuorumReconfigurationError

    c = Cluster(3, seed=7, kafka_version="4.1")
    c.run(3000)
    controller = lambda: c.kraft.active().controller   # noqa: E731
    assert controller().replication_control.is_elr_enabled()
    assert c.kraft.downgrade_features({ELR: 0}) == {ELR: 0}
    assert not controller().replication_control.is_elr_enabled()
    assert controller().feature_control.finalized_features().get(ELR) is None
    assert c.kraft.downgrade_features({"metadata.version": 26}) == {"metadata.version": 26}
    assert controller().feature_control.metadata_version() == MetadataVersion.parse("4.1-IV0")
    for unsafe in (False, True):
        with pytest.raises(QuorumReconfigurationError, match="Invalid metadata.version 22. "):
            c.kraft.downgrade_features({"metadata.version": 22}, unsafe=unsafe)


@pytest.mark.parametrize("version, bootstrapped", [("4.0", False), ("4.3", True)])
def test_activation_of_a_log_without_metadata_version(version, bootstrapped):
    """ActivationRecordsGenerator.generate: @4.0 (4ae681446f) the bootstrap records go to an
    empty log only (LogReplayTracker.empty()); from 4.1 (KAFKA-18858, @4.1.0 and @4.3.0) to any
    log whose replay set no metadata.version, after what it holds."""
    records = (R.RegisterBrokerRecord(123, 42, "v78Gbc6sQXK0y5qqRxiryw", None),
               R.UnfenceBrokerRecord(123, 42))
    env = ControllerEnv(bootstrap("3.9-IV0"), version=version,
                        log=[(i, 0, r) for i, r in enumerate(records)])
    written = [r for r in env.metadata_records() if type(r) is R.FeatureLevelRecord]
    assert written == ([R.FeatureLevelRecord("metadata.version", 21)] if bootstrapped else [])
    if bootstrapped:
        assert env.active.feature_control.metadata_version() == MetadataVersion.parse("3.9-IV0")
    assert env.active.cluster_control.is_unfenced(123)
