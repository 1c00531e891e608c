"""ConfigurationControlManagerTest cases of KAFKA-19851 (4e823a07a3, apache/kafka PR #21053; in
4.3.0 a9ce322153, not in 4.2.0 a18251bae0), ported at 4.3.0: testReplayFiltersInvalidConfigs and
testValidateAlterConfigWithInvalidExistingConfigs. A ConfigRecord whose config the
SupportedConfigChecker does not support (a config Kafka removed, still in an upgraded log) is
skipped on replay, so it no longer blocks later alterations.

Adaptations: the checker is a ``(resource_type, config_name) -> bool`` callable; kafkasim does
not validate values against Kafka's ConfigDefs, so the second case checks the filtering and that
the alteration succeeds. Scenarios are Kafka's; code is our own.
"""

from __future__ import annotations

from kafkasim.control.kraft.configuration_control import (
    SET,
    ApiError,
    ConfigResource,
    ConfigurationControlManager,
)
from kafkasim.control.kraft.records import ConfigRecord

MYTOPIC = ConfigResource("TOPIC", "mytopic")


def checker(*valid: str):
    return lambda resource_type, config_name: config_name in valid


def test_replay_filters_invalid_configs():
    """ConfigurationControlManagerTest.testReplayFiltersInvalidConfigs @4.3.0."""
    manager = ConfigurationControlManager(supported_config_checker=checker("abc", "def", "ghi"))
    manager.replay(ConfigRecord("TOPIC", "mytopic", "abc", "value1"))
    manager.replay(ConfigRecord("TOPIC", "mytopic", "def", "value2"))
    manager.replay(ConfigRecord("TOPIC", "mytopic", "invalid.config", "should-be-filtered"))
    assert manager.get_configs(MYTOPIC) == {"abc": "value1", "def": "value2"}


def test_validate_alter_config_with_invalid_existing_configs():
    """ConfigurationControlManagerTest.testValidateAlterConfigWithInvalidExistingConfigs
    @4.3.0: the filtered config is not in the topic's configs, and altering another one
    succeeds."""
    manager = ConfigurationControlManager(supported_config_checker=checker("abc", "def"))
    manager.replay(ConfigRecord("TOPIC", "mytopic", "abc", "value1"))
    manager.replay(ConfigRecord("TOPIC", "mytopic", "invalid.config", "should-be-filtered"))
    configs = manager.get_configs(MYTOPIC)
    assert "abc" in configs and "invalid.config" not in configs
    records, results = manager.incremental_alter_configs({MYTOPIC: {"def": (SET, "newValue")}})
    assert results == {MYTOPIC: ApiError()}
    assert records == [ConfigRecord("TOPIC", "mytopic", "def", "newValue")]


def test_default_checker_supports_every_config():
    """Builder default SupportedConfigChecker.TRUE (what kafkasim's clusters use)."""
    manager = ConfigurationControlManager()
    manager.replay(ConfigRecord("TOPIC", "mytopic", "message.format.version", "2.8"))
    assert manager.get_configs(MYTOPIC) == {"message.format.version": "2.8"}
