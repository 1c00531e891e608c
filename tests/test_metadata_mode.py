"""kafkasim.settings.modes.metadata_mode_for: which metadata modes (ZooKeeper / KRaft) a release
allows.

Rules mirrored: ZooKeeper removed in 4.0 (KIP-500, 4.0 upgrade notes); KRaft early access in
2.8-3.2 (KIP-500 / KIP-631) and production-ready from 3.3 (KIP-833, docs/upgrade.html @3.3.0).
"""

from __future__ import annotations

import pytest

from kafkasim.settings import modes
from kafkasim.settings.modes import (
    KRAFT,
    METADATA_MODES,
    ZOOKEEPER,
    MetadataModeError,
    allowed_metadata_modes,
    default_metadata_mode,
    metadata_mode_for,
)
from kafkasim.settings.versions import SUPPORTED_VERSIONS, VersionError, rules_for, version_at_least


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_default_is_kraft_from_4_0_and_zookeeper_before(version):
    expected = KRAFT if version_at_least(version, "4.0") else ZOOKEEPER
    assert metadata_mode_for(version, None) == expected
    assert default_metadata_mode(version) == expected


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_allowed_modes_follow_the_rule_table(version):
    r = rules_for(version)
    allowed = allowed_metadata_modes(version)
    assert (ZOOKEEPER in allowed) == r.zookeeper_mode
    assert (KRAFT in allowed) == r.kraft_production_ready
    assert allowed  # every profile has at least one mode
    for mode in allowed:
        assert metadata_mode_for(version, mode) == mode


@pytest.mark.parametrize(("version", "allowed"), [
    ("0.8.2", (ZOOKEEPER,)), ("2.8", (ZOOKEEPER,)), ("3.2", (ZOOKEEPER,)),
    ("3.3", (ZOOKEEPER, KRAFT)), ("3.9.1", (ZOOKEEPER, KRAFT)),
    ("4.0", (KRAFT,)), ("4.3.1", (KRAFT,)),
])
def test_allowed_modes_spot_checks(version, allowed):
    assert allowed_metadata_modes(version) == allowed


def test_3_3_to_3_9_default_to_zookeeper_and_accept_kraft():
    for version in ("3.3", "3.7", "3.9"):
        assert metadata_mode_for(version, None) == ZOOKEEPER
        assert metadata_mode_for(version, "kraft") == KRAFT
        assert metadata_mode_for(version, "zookeeper") == ZOOKEEPER


@pytest.mark.parametrize("version", ["4.0", "4.1", "4.2.0", "4.3"])
def test_zookeeper_refused_from_4_0_naming_kip_500(version):
    with pytest.raises(MetadataModeError) as err:
        metadata_mode_for(version, "zookeeper")
    message = str(err.value)
    assert ("Kafka 4.0 removed ZooKeeper mode (KIP-500); use metadata_mode='kraft' or "
            "kafka_version 3.9 or older") in message
    assert f"Kafka {version[:3]} has no ZooKeeper mode" in message


@pytest.mark.parametrize("version", ["2.8", "3.0", "3.2.3"])
def test_early_access_kraft_is_refused_and_says_it_is_not_modelled(version):
    with pytest.raises(MetadataModeError) as err:
        metadata_mode_for(version, "kraft")
    message = str(err.value)
    assert "early access in 2.8 to 3.2" in message
    assert "KIP-833" in message and "not model" in message
    assert "kafka_version 3.3 or newer" in message


def test_kraft_before_2_8_does_not_exist():
    with pytest.raises(MetadataModeError, match=r"Kafka 2\.7 has no KRaft mode.*2\.8"):
        metadata_mode_for("2.7", "kraft")


@pytest.mark.parametrize(("typo", "suggestion"), [
    ("kraftt", "kraft"), ("zookeper", "zookeeper"), ("zk", "zookeeper"), ("raft", "kraft"),
])
def test_unknown_mode_suggests_a_name(typo, suggestion):
    with pytest.raises(MetadataModeError) as err:
        metadata_mode_for("3.7", typo)
    assert f"Unknown metadata_mode '{typo}'. Did you mean '{suggestion}'?" in str(err.value)


def test_unknown_mode_without_close_match_lists_modes():
    with pytest.raises(MetadataModeError) as err:
        metadata_mode_for("3.7", "etcd")
    assert "Did you mean" not in str(err.value)
    assert "'zookeeper'" in str(err.value) and "'kraft'" in str(err.value)


def test_mode_names_are_case_insensitive():
    assert metadata_mode_for("3.7", " KRaft ") == KRAFT
    assert metadata_mode_for("3.7", "ZooKeeper") == ZOOKEEPER


@pytest.mark.parametrize("bad", [1, True, ["kraft"]])
def test_mode_must_be_a_string(bad):
    with pytest.raises(MetadataModeError, match="must be a string"):
        metadata_mode_for("3.7", bad)  # type: ignore[arg-type]


def test_bad_version_is_a_version_error():
    with pytest.raises(VersionError):
        metadata_mode_for("0.7", "zookeeper")


def test_rule_overrides_are_respected():
    # A notebook can switch the rules off to show what KIP-833 / KIP-500 changed.
    no_kraft = rules_for("3.7", {"kraft_production_ready": False})
    assert allowed_metadata_modes("3.7", rules=no_kraft) == (ZOOKEEPER,)
    with pytest.raises(MetadataModeError):
        metadata_mode_for("3.7", "kraft", rules=no_kraft)
    zk_kept = rules_for("4.0", {"zookeeper_mode": True})
    assert metadata_mode_for("4.0", None, rules=zk_kept) == ZOOKEEPER


def test_errors_are_value_errors_and_exports_exist():
    assert issubclass(MetadataModeError, ValueError)
    assert METADATA_MODES == ("zookeeper", "kraft")
    for name in modes.__all__:
        assert hasattr(modes, name)
