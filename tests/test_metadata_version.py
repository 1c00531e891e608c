"""metadata.version levels and feature gates (org.apache.kafka.server.common.MetadataVersion;
MetadataVersionTest: testFromVersionString, testShortVersion/testVersion, testFromFeatureLevel,
testIsLeaderRecoverySupported, testIsInControlledShutdownStateSupported,
testIsElrSupported / partitionChangeRecordVersion, testIsLeaderEpochBumpRequiredOnIsrShrink)."""

import pytest

from kafkasim.control.kraft.metadata_version import (
    ELR_FEATURE_NAME,
    FEATURE_NAME,
    MetadataVersion,
)

MV = MetadataVersion.parse


def test_feature_levels_follow_kafka_enum():
    # MetadataVersion.java (trunk 1eb7644): IBP_3_0_IV1(1) .. IBP_4_0_IV3(25)
    assert MV("3.0-IV1").feature_level == 1
    assert MV("3.3-IV3").feature_level == 7
    assert MV("3.6-IV0").feature_level == 12
    assert MV("3.7-IV4").feature_level == 19
    assert MV("3.9-IV0").feature_level == 21
    assert MV("4.0-IV1").feature_level == 23
    assert MV("4.0-IV3").feature_level == 25
    assert MV("4.1-IV1").feature_level == 27
    assert MV("4.3-IV0").feature_level == 30
    levels = [v.feature_level for v in MetadataVersion.VERSIONS]
    assert levels == sorted(levels) and len(set(levels)) == len(levels)
    assert FEATURE_NAME == "metadata.version"
    assert ELR_FEATURE_NAME == "eligible.leader.replicas.version"


def test_from_version_string_release_maps_to_latest_level():
    # MetadataVersionTest.testFromVersionString: "3.7" -> the release's latest IV; extra
    # segments after major.minor are ignored
    assert MV("3.3") == MV("3.3-IV3")
    assert MV("3.5") == MV("3.5-IV2")
    assert MV("3.7") == MV("3.7-IV4")
    assert MV("3.7.1") == MV("3.7-IV4")
    assert MetadataVersion.latest_for("3.6") == MV("3.6-IV2")
    assert MetadataVersion.latest_for("4.0") == MV("4.0-IV3")
    assert MetadataVersion.latest_for("4.1") == MV("4.1-IV1")
    assert MetadataVersion.latest_for("4.2") == MV("4.2-IV1")
    assert MetadataVersion.latest_for("4.3.1") == MV("4.3-IV0")


def test_parse_rejects_unknown_with_the_supported_list():
    with pytest.raises(ValueError) as e:
        MV("3.7-IV9")
    assert "Unknown metadata.version '3.7-IV9'" in str(e.value)
    assert "3.3-IV3" in str(e.value) and "4.0-IV3" in str(e.value)
    with pytest.raises(ValueError, match="2.8"):
        MV("2.8")   # ZooKeeper-era IBP: no KRaft level


def test_version_strings_and_ordering():
    assert str(MV("3.7-IV4")) == "3.7-IV4"
    assert MV("3.7-IV4").short_version() == "3.7"
    assert MV("3.6-IV0") < MV("3.6-IV1") < MV("4.0-IV0")
    assert MV("4.0-IV1") >= "4.0-IV1"
    assert MV("3.9-IV0") < "4.0-IV0"
    assert MV("3.9") != "not-a-version"
    assert MetadataVersion.from_feature_level(23) is MV("4.0-IV1")
    with pytest.raises(ValueError, match="No MetadataVersion with feature level 99"):
        MetadataVersion.from_feature_level(99)


def test_leader_recovery_supported_from_3_2():
    # isLeaderRecoverySupported: IBP_3_2_IV0 (KIP-704)
    assert not MV("3.1-IV0").is_leader_recovery_supported()
    assert MV("3.2-IV0").is_leader_recovery_supported()


def test_in_controlled_shutdown_state_from_3_3_iv3():
    assert not MV("3.3-IV2").is_in_controlled_shutdown_state_supported()
    assert MV("3.3-IV3").is_in_controlled_shutdown_state_supported()
    assert not MV("3.3-IV1").is_broker_registration_change_record_supported()
    assert MV("3.3-IV2").is_broker_registration_change_record_supported()


def test_leader_epoch_bump_on_isr_shrink_before_3_6():
    # isLeaderEpochBumpRequiredOnIsrShrink: !isAtLeast(IBP_3_6_IV0) (KAFKA-15021)
    assert MV("3.5-IV2").is_leader_epoch_bump_required_on_isr_shrink()
    assert not MV("3.6-IV0").is_leader_epoch_bump_required_on_isr_shrink()
    assert not MV("4.0-IV3").is_leader_epoch_bump_required_on_isr_shrink()


def test_elr_supported_and_record_versions():
    # isElrSupported: IBP_4_0_IV1; partitionChangeRecordVersion 2 / 1 (3.7-IV2 JBOD) / 0
    assert not MV("4.0-IV0").is_elr_supported()
    assert MV("4.0-IV1").is_elr_supported()
    assert MV("3.7-IV1").partition_change_record_version() == 0
    assert MV("3.7-IV2").partition_change_record_version() == 1
    assert MV("4.0-IV0").partition_change_record_version() == 1
    assert MV("4.0-IV1").partition_change_record_version() == 2
    assert MV("4.0-IV1").partition_record_version() == 2
    assert MV("3.3-IV3").register_broker_record_version() == 1
    assert MV("3.4-IV0").register_broker_record_version() == 2
    assert MV("3.7-IV2").register_broker_record_version() == 3


def test_elr_feature_bootstrap():
    # EligibleLeaderReplicasVersion: ELRV_1 bootstraps at 4.1-IV0, needs metadata.version 4.0-IV1
    assert MV("4.0-IV3").default_elr_feature_level() == 0
    assert MV("4.1-IV0").default_elr_feature_level() == 1
    assert MV("4.0-IV1").supports_elr_feature_level(1)
    assert not MV("4.0-IV0").supports_elr_feature_level(1)
    assert MV("3.7-IV4").supports_elr_feature_level(0)


def test_enum_constants_and_from_version_string():
    assert MetadataVersion.IBP_3_6_IV0 is MV("3.6-IV0")
    assert MetadataVersion.IBP_4_0_IV1.is_elr_supported()
    assert MetadataVersion.from_version_string("3.9") is MetadataVersion.IBP_3_9_IV0


def test_4_4_levels_read_at_the_4_4_branch():
    """MetadataVersion.java @4.4 f86720838c: IBP_4_4_IV0(31, false), IBP_4_4_IV1(32, true),
    IBP_4_4_IV2(33, true), the last level (latestTesting); 4.3.0 a9ce322153 ends at 4.4-IV0."""
    assert [(v.version(), v.feature_level, v.did_metadata_change)
            for v in MetadataVersion.VERSIONS[-3:]] == [
        ("4.4-IV0", 31, False), ("4.4-IV1", 32, True), ("4.4-IV2", 33, True)]
    assert MetadataVersion.latest_testing("4.4") is MetadataVersion.IBP_4_4_IV2
    assert MetadataVersion.latest_testing("4.3") is MetadataVersion.IBP_4_4_IV0
    assert MetadataVersion.latest_for("4.4") is MetadataVersion.IBP_4_4_IV2


def test_is_controller_unregistration_supported_from_4_4_iv2():
    """MetadataVersion.isControllerUnregistrationSupported (KIP-1312) @4.4 f86720838c."""
    assert not MV("4.4-IV1").is_controller_unregistration_supported()
    assert MV("4.4-IV2").is_controller_unregistration_supported()
    assert MV("3.7-IV0").is_controller_registration_supported()
    assert not MV("3.6-IV2").is_controller_registration_supported()


def test_register_broker_record_version_4_with_cordoned_log_dirs():
    """MetadataVersion.registerBrokerRecordVersion @4.3.0 a9ce322153: 4 from 4.3-IV0
    (isCordonedLogDirsSupported, KIP-1066)."""
    assert not MV("4.2-IV1").is_cordoned_log_dirs_supported()
    assert MV("4.2-IV1").register_broker_record_version() == 3
    assert MV("4.3-IV0").is_cordoned_log_dirs_supported()
    assert MV("4.3-IV0").register_broker_record_version() == 4
