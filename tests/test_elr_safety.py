"""ELR safety: the cluster-level min.insync.replicas of KIP-966 (protocol.kraft.elr_safety).

Mirrors ConfigurationControlManagerTest (4.x): testMaybeGenerateElrSafetyRecords,
testRejectMinIsrChangeWhenElrEnabled, testElrUpgrade; createClearElrRecordsAsNeeded; KAFKA-16540.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.elr_safety import (
    DISALLOWED_BROKER_MIN_ISR_TRANSITION_ERROR,
    DISALLOWED_CLUSTER_MIN_ISR_REMOVAL_ERROR,
    ELR_FEATURE_NAME,
    ClearElrRecord,
    clear_elr_records_as_needed,
    disallowed_min_isr_change,
    elr_safety,
    maybe_generate_elr_safety_records,
)
from kafkasim.control.kraft.records import ConfigRecord, FeatureLevelRecord


@pytest.mark.parametrize("static_config", [False, True])
def test_maybe_generate_elr_safety_records(static_config):
    # ConfigurationControlManagerTest.testMaybeGenerateElrSafetyRecords: broker 1 has a
    # broker-level min.insync.replicas=3; the static value is 2 (or the default 1)
    static = 2 if static_config else 1
    records, message = maybe_generate_elr_safety_records(
        {}, {1: {"min.insync.replicas": "3"}}, static_min_insync_replicas=static)
    assert message == (f"Generating cluster-level min.insync.replicas of {static}. Removing "
                       "broker-level min.insync.replicas for brokers: 1.")
    assert records == [
        ConfigRecord("BROKER", "", "min.insync.replicas", str(static)),
        ConfigRecord("BROKER", "1", "min.insync.replicas", None),
    ]


def test_nothing_to_do_when_already_safe():
    # "It is always safe to call this function if ELR is already enabled"
    records, message = maybe_generate_elr_safety_records(
        {"min.insync.replicas": "2"}, {1: {"log.retention.ms": "1"}})
    assert records == [] and message == ""


def test_only_removals_when_the_cluster_level_value_exists():
    records, message = maybe_generate_elr_safety_records(
        {"min.insync.replicas": "2"}, {4: {"min.insync.replicas": "1"}, 5: {"other": "x"}})
    assert records == [ConfigRecord("BROKER", "4", "min.insync.replicas", None)]
    assert message == "Removing broker-level min.insync.replicas for brokers: 4."


def test_several_brokers_are_all_removed_once_in_a_stable_order():
    configs = {b: {"min.insync.replicas": "1"} for b in (7, 1, 3, 12)}
    records, message = maybe_generate_elr_safety_records({"min.insync.replicas": "2"}, configs)
    removed = [int(r.resource_name) for r in records]
    assert sorted(removed) == [1, 3, 7, 12]
    assert message == ("Removing broker-level min.insync.replicas for brokers: "
                       + ", ".join(str(b) for b in removed) + ".")
    again, _ = maybe_generate_elr_safety_records({"min.insync.replicas": "2"},
                                                 dict(reversed(list(configs.items()))))
    assert again == records  # independent of the caller's dict order


def test_enabling_elr_writes_safety_records_before_the_feature_record():
    # ConfigurationControlManager.updateFeatures: records = safety records + feature records
    result = elr_safety(cluster_config={}, broker_configs={2: {"min.insync.replicas": "3"}},
                        static_min_insync_replicas=2)
    assert result.error is None
    assert result.records == (
        ConfigRecord("BROKER", "", "min.insync.replicas", "2"),
        ConfigRecord("BROKER", "2", "min.insync.replicas", None),
        FeatureLevelRecord(ELR_FEATURE_NAME, 1),
    )
    assert result.config_records == result.records[:2]
    assert result.log_message.startswith("Generating cluster-level min.insync.replicas of 2.")


def test_new_cluster_with_elr_on_gets_the_cluster_level_record():
    # KAFKA-16540: a cluster created with eligible.leader.replicas.version enabled also gets the
    # cluster-level min.insync.replicas (4.1+ default, elr_enabled_by_default)
    result = elr_safety(cluster_config={})
    assert result.records[0] == ConfigRecord("BROKER", "", "min.insync.replicas", "1")


@pytest.mark.parametrize("supports_elr", [False, True])
def test_elr_upgrade_needs_an_elr_metadata_version(supports_elr):
    # ConfigurationControlManagerTest.testElrUpgrade: 4.0-IV0 -> INVALID_UPDATE_VERSION,
    # 4.0-IV1 -> NONE
    result = elr_safety(cluster_config={}, metadata_version_supports_elr=supports_elr)
    if supports_elr:
        assert result.error is None and result.records
    else:
        assert result.error == "INVALID_UPDATE_VERSION"
        assert result.records == ()
        assert "eligible.leader.replicas.version could not be set to 1" in result.error_message


def test_validate_only_and_disable_write_no_safety_records():
    assert elr_safety(cluster_config={}, validate_only=True).records == ()
    off = elr_safety(cluster_config={}, broker_configs={1: {"min.insync.replicas": "3"}},
                     elr_level=0, metadata_version_supports_elr=False)
    assert off.error is None
    assert off.records == (FeatureLevelRecord(ELR_FEATURE_NAME, 0),)


def test_unknown_feature_level_is_refused():
    result = elr_safety(cluster_config={}, elr_level=2)
    assert result.error == "INVALID_UPDATE_VERSION"
    assert "Unknown eligible leader replicas feature level: 2" == result.error_message


@pytest.mark.parametrize("removal", [False, True])
def test_reject_min_isr_change_when_elr_enabled(removal):
    # ConfigurationControlManagerTest.testRejectMinIsrChangeWhenElrEnabled
    value = None if removal else "3"
    broker = ConfigRecord("BROKER", "1", "min.insync.replicas", value)
    assert disallowed_min_isr_change(broker, elr_enabled=True) == (
        "Broker-level min.insync.replicas cannot be altered while ELR is enabled.")
    assert DISALLOWED_BROKER_MIN_ISR_TRANSITION_ERROR.startswith("Broker-level")
    cluster = ConfigRecord("BROKER", "", "min.insync.replicas", value)
    if removal:
        assert disallowed_min_isr_change(cluster, elr_enabled=True) == (
            DISALLOWED_CLUSTER_MIN_ISR_REMOVAL_ERROR)
        assert DISALLOWED_CLUSTER_MIN_ISR_REMOVAL_ERROR == (
            "Cluster-level min.insync.replicas cannot be removed while ELR is enabled.")
    else:
        assert disallowed_min_isr_change(cluster, elr_enabled=True) is None


def test_min_isr_changes_are_free_without_elr_or_at_topic_level():
    assert disallowed_min_isr_change(
        ConfigRecord("BROKER", "1", "min.insync.replicas", "3"), elr_enabled=False) is None
    assert disallowed_min_isr_change(
        ConfigRecord("TOPIC", "foo", "min.insync.replicas", None), elr_enabled=True) is None
    assert disallowed_min_isr_change(
        ConfigRecord("BROKER", "1", "log.retention.ms", None), elr_enabled=True) is None


def test_clear_elr_records_follow_min_isr_config_records():
    # createClearElrRecordsAsNeeded: one per min.insync.replicas record, topic or all
    records = [
        ConfigRecord("TOPIC", "foo", "min.insync.replicas", "2"),
        ConfigRecord("TOPIC", "foo", "retention.ms", "1"),
        ConfigRecord("BROKER", "", "min.insync.replicas", "2"),
    ]
    assert clear_elr_records_as_needed(records, elr_enabled=True) == [
        ClearElrRecord("foo"), ClearElrRecord()]
    assert clear_elr_records_as_needed(records, elr_enabled=False) == []
    assert ClearElrRecord().topic_name == ""
