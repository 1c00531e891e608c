"""KRaft configuration keys, metadata-mode checks and quorum validation (kafkasim.settings.config).

Sources: raft/.../QuorumConfig.java (RaftConfig.java before 3.8; defaults checked at 2.8.0, 3.3.0,
3.9.0-rc3 and trunk), server/.../KRaftConfigs.java, KafkaConfig.validateValues /
parseProcessRoles (trunk 2024-10), KAFKA-19432 (4.2), Utils.HOST_PORT_PATTERN.
"""

from __future__ import annotations

import warnings

import pytest

from kafkasim.settings.config import (
    BROKER,
    ConfigError,
    ConfigWarning,
    broker_config,
    keys_for,
    parse_quorum_voters,
    validate_key,
    validate_quorum,
)
from kafkasim.settings.modes import MetadataModeError

# ---------------------------------------------------------------------------- keys and defaults

QUORUM_DEFAULTS = {
    # QuorumConfig.DEFAULT_QUORUM_* (the same in RaftConfig @2.8.0 and @3.3.0)
    "controller.quorum.election.timeout.ms": 1000,
    "controller.quorum.fetch.timeout.ms": 2000,
    "controller.quorum.election.backoff.max.ms": 1000,
    "controller.quorum.append.linger.ms": 25,
    "controller.quorum.request.timeout.ms": 2000,
    "controller.quorum.retry.backoff.ms": 20,
    "controller.quorum.voters": (),
    # KRaftConfigs
    "process.roles": (),
    "node.id": -1,
    "broker.session.timeout.ms": 9000,
    "broker.heartbeat.interval.ms": 2000,
}


@pytest.mark.parametrize("version", ["2.8", "3.3", "3.7", "3.9", "4.0", "4.3"])
def test_kraft_defaults_match_quorum_config(version):
    cfg = broker_config(None, version)
    for key, default in QUORUM_DEFAULTS.items():
        assert cfg[key] == default, key


def test_kraft_keys_arrive_with_kip_595_and_631_in_2_8():
    for key in QUORUM_DEFAULTS:
        assert key in keys_for("broker", "2.8")
        assert key not in keys_for("broker", "2.7")
    with pytest.raises(ConfigError, match=r"does not exist in Kafka 2\.7; it was added in 2\.8"):
        validate_key("broker", "controller.quorum.voters", "2.7")


def test_bootstrap_servers_arrive_with_kip_853_in_3_9():
    assert "controller.quorum.bootstrap.servers" not in keys_for("broker", "3.8")
    assert broker_config(None, "3.9")["controller.quorum.bootstrap.servers"] == ()
    with pytest.raises(ConfigError, match="KIP-853"):
        validate_key("broker", "controller.quorum.bootstrap.servers", "3.8")


def test_key_modes_are_declared():
    kraft = {k for k, d in BROKER.items() if d.mode == "kraft"}
    zookeeper = {k for k, d in BROKER.items() if d.mode == "zookeeper"}
    assert {"broker.session.timeout.ms", "broker.heartbeat.interval.ms", "process.roles",
            "controller.quorum.voters", "unclean.leader.election.interval.ms"} <= kraft
    assert {"zookeeper.session.timeout.ms", "controlled.shutdown.max.retries",
            "leader.imbalance.per.broker.percentage"} <= zookeeper
    assert BROKER["node.id"].mode is None  # a synonym of broker.id in both modes


def test_quorum_timeouts_have_no_validator_like_kafka():
    # QuorumConfig.CONFIG_DEF defines the timeouts with a null validator
    cfg = broker_config({"controller.quorum.election.timeout.ms": "0",
                         "controller.quorum.fetch.timeout.ms": 1}, "4.0")
    assert cfg["controller.quorum.election.timeout.ms"] == 0
    assert cfg["controller.quorum.fetch.timeout.ms"] == 1


# ---------------------------------------------------------------------------- quorum voters


def test_voters_are_parsed_in_order():
    voters = "1@localhost:9093, 2@host-b:9094,3@[::1]:9095"
    cfg = broker_config({"controller.quorum.voters": voters}, "3.7")
    assert cfg["controller.quorum.voters"] == ("1@localhost:9093", "2@host-b:9094", "3@[::1]:9095")
    assert parse_quorum_voters(cfg["controller.quorum.voters"]) == {
        1: ("localhost", 9093), 2: ("host-b", 9094), 3: ("::1", 9095)}
    assert parse_quorum_voters("") == {}


@pytest.mark.parametrize(("value", "message"), [
    # QuorumConfig.parseVoterConnections
    ("1-localhost:9093", "Invalid configuration value for controller.quorum.voters. Each entry "
                         "should be in the form `{id}@{host}:{port}`."),
    ("1@a@b:1", "Invalid configuration value for controller.quorum.voters."),
    ("x@localhost:9093", "Failed to parse voter ID as an integer from x"),
    ("1@localhost", "Failed to parse host name from entry 1@localhost for the configuration "
                    "controller.quorum.voters. Each entry should be in the form "
                    "`{id}@{host}:{port}`."),
    ("1@local host:9093", "Failed to parse host name from entry"),
])
def test_bad_voters_are_refused_with_kafkas_text(value, message):
    with pytest.raises(ConfigError) as err:
        broker_config({"controller.quorum.voters": value}, "3.7")
    assert message in str(err.value)


def test_bad_bootstrap_server_is_refused():
    with pytest.raises(ConfigError, match="Failed to parse host name from nohost for the "
                                          "configuration controller.quorum.bootstrap.servers"):
        broker_config({"controller.quorum.bootstrap.servers": "nohost"}, "3.9")


# ---------------------------------------------------------------------------- validate_quorum


@pytest.mark.parametrize(("n", "tolerated", "same_as"), [(2, 0, 1), (4, 1, 3), (6, 2, 5)])
def test_even_quorum_warns_with_raft_majority_numbers(n, tolerated, same_as):
    [warning] = validate_quorum(list(range(1, n + 1)))
    failures = "failure" if tolerated == 1 else "failures"
    assert f"{n} voters tolerate {tolerated} {failures}, the same as {same_as}" in warning
    assert f"majority ({n // 2 + 1} of {n})" in warning


def test_four_voters_message_from_the_brief():
    [warning] = validate_quorum([1, 2, 3, 4])
    assert warning.startswith("4 voters tolerate 1 failure, the same as 3")


@pytest.mark.parametrize("n", [3, 5, 7])
def test_odd_quorums_do_not_warn(n):
    assert validate_quorum(list(range(n))) == []


def test_single_voter_has_no_fault_tolerance():
    [warning] = validate_quorum([1])
    assert "1 voter (1)" in warning and "no fault tolerance" in warning
    assert "majority (1 of 1)" in warning


def test_zero_voters_is_an_error():
    with pytest.raises(ConfigError, match="at least one voter"):
        validate_quorum([])


def test_duplicate_voter_ids_collapse_like_kafkas_map():
    assert parse_quorum_voters("1@a:1,1@b:2") == {1: ("b", 2)}
    out = validate_quorum([1, 2, 2, 3])
    assert any("voter id 2 is listed more than once" in w for w in out)
    assert not any("tolerate" in w for w in out)  # 3 distinct voters: odd


# ---------------------------------------------------------------------------- metadata-mode checks


def test_zookeeper_keys_in_kraft_mode_warn_not_fail():
    # Kafka 3.x defines zookeeper.session.timeout.ms in every mode and ignores it in KRaft
    with pytest.warns(ConfigWarning, match="'zookeeper.session.timeout.ms' is a ZooKeeper-mode "
                                           "setting; Kafka 3.7 in KRaft mode"):
        cfg = broker_config({"zookeeper.session.timeout.ms": 6000}, "3.7", metadata_mode="kraft")
    assert cfg["zookeeper.session.timeout.ms"] == 6000


def test_kraft_keys_in_zookeeper_mode_warn():
    with pytest.warns(ConfigWarning, match="'broker.session.timeout.ms' is a KRaft-mode setting"):
        broker_config({"broker.session.timeout.ms": 12000}, "3.7", metadata_mode="zookeeper")


def test_process_roles_contradicts_zookeeper_mode():
    with pytest.raises(ConfigError, match="process.roles=broker makes a Kafka 3.7 node a KRaft "
                                          "node"):
        broker_config({"process.roles": "broker", "node.id": 1,
                       "controller.quorum.voters": "3000@c:9093"}, "3.7",
                      metadata_mode="zookeeper")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        broker_config({"process.roles": ""}, "3.7", metadata_mode="zookeeper")


def test_no_warning_without_metadata_mode_or_in_the_own_mode():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        broker_config({"broker.session.timeout.ms": 12000}, "3.7")
        broker_config({"broker.session.timeout.ms": 12000}, "3.7", metadata_mode="kraft")
        broker_config({"zookeeper.session.timeout.ms": 6000}, "3.7", metadata_mode="zookeeper")


def test_zookeeper_keys_are_gone_in_4_0_whatever_the_mode():
    with pytest.raises(ConfigError, match="was removed in Kafka 4.0"):
        broker_config({"zookeeper.session.timeout.ms": 6000}, "4.1", metadata_mode="kraft")


def test_metadata_mode_is_checked_against_the_version():
    with pytest.raises(MetadataModeError, match="KIP-500"):
        broker_config(None, "4.0", metadata_mode="zookeeper")
    with pytest.raises(MetadataModeError, match="early access"):
        broker_config(None, "3.2", metadata_mode="kraft")


# ---------------------------------------------------------------------------- KRaft node identity


def test_process_roles_values_are_validated():
    with pytest.raises(ConfigError, match="Invalid value observer for configuration "
                                          "process.roles: String must be one of: broker, "
                                          "controller"):
        broker_config({"process.roles": "broker,observer"}, "3.7")


def test_duplicate_roles_are_refused():
    with pytest.raises(ConfigError, match="Duplicate role names found in `process.roles`"):
        broker_config({"process.roles": "broker,broker", "node.id": 1}, "3.7")


def test_node_id_must_equal_broker_id():
    with pytest.raises(ConfigError, match=r"You must set `node.id` to the same value as "
                                          r"`broker.id`\."):
        broker_config({"node.id": 1, "broker.id": 2}, "3.7")
    cfg = broker_config({"node.id": 2, "broker.id": 2}, "3.7")
    assert cfg["node.id"] == cfg["broker.id"] == 2


def test_process_roles_needs_a_node_id():
    with pytest.raises(ConfigError, match="Missing configuration `node.id` which is required "
                                          "when `process.roles` is defined"):
        broker_config({"process.roles": "broker", "controller.quorum.voters": "9@c:1"}, "4.0")
    # broker.id stands in for node.id (KafkaConfig synonyms)
    broker_config({"process.roles": "broker", "broker.id": 1,
                   "controller.quorum.voters": "9@c:1"}, "4.0")


def test_process_roles_needs_voters_or_bootstrap_servers():
    with pytest.raises(ConfigError, match="either controller.quorum.bootstrap.servers must "
                                          "contain the set of bootstrap controllers or "
                                          "controller.quorum.voters must contain a parseable"):
        broker_config({"process.roles": "broker", "node.id": 1}, "4.0")
    broker_config({"process.roles": "broker", "node.id": 1,
                   "controller.quorum.bootstrap.servers": "c:9093"}, "4.0")


def test_controller_must_be_a_voter_and_a_broker_must_not():
    voters = "1@a:9093,2@b:9093,3@c:9093"
    with pytest.raises(ConfigError, match=r"the node id 4 must be included in the set of voters "
                                          r"controller.quorum.voters=Set\(1, 2, 3\)"):
        broker_config({"process.roles": "controller", "node.id": 4,
                       "controller.quorum.voters": voters}, "4.0")
    with pytest.raises(ConfigError, match=r"contains just the 'broker' role, the node id 2 must "
                                          r"not be included"):
        broker_config({"process.roles": "broker", "node.id": 2,
                       "controller.quorum.voters": voters}, "4.0")
    combined = broker_config({"process.roles": "broker,controller", "node.id": 2,
                              "controller.quorum.voters": voters}, "4.0", metadata_mode="kraft")
    assert combined["process.roles"] == ("broker", "controller")


# ---------------------------------------------------------------------------- KAFKA-19432


def test_heartbeat_more_than_half_the_session_warns_from_4_2():
    overrides = {"broker.heartbeat.interval.ms": 5000, "broker.session.timeout.ms": 9000}
    with pytest.warns(ConfigWarning, match=r"broker.heartbeat.interval.ms \(5000 ms\) must be "
                                           r"less than or equal to half of the "
                                           r"broker.session.timeout.ms \(9000 ms\)"):
        cfg = broker_config(overrides, "4.2")
    assert cfg["broker.heartbeat.interval.ms"] == 5000  # the broker still starts
    with pytest.warns(ConfigWarning, match="Please increase broker.session.timeout.ms or "
                                           "decrease broker.heartbeat.interval.ms"):
        broker_config(overrides, "4.3")


def test_heartbeat_check_boundary_and_older_releases():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        # exactly half is allowed (interval * 2 > session is the test)
        broker_config({"broker.heartbeat.interval.ms": 4500}, "4.3")
        # before KAFKA-19432 Kafka says nothing, even for interval > session
        broker_config({"broker.heartbeat.interval.ms": 20000}, "4.1")
        broker_config({"broker.heartbeat.interval.ms": 20000}, "3.7")
