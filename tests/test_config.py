"""Tests for kafkasim.settings.config: keys, defaults per Kafka version, parsing, and every error
path."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkasim.settings import config
from kafkasim.settings.config import (
    BROKER,
    CONSUMER,
    INT_MAX,
    KINDS,
    LONG_MAX,
    PRODUCER,
    TOPIC,
    ConfigDef,
    ConfigError,
    Range,
    ValidString,
    broker_config,
    by_version,
    consumer_config,
    default_differences,
    describe_configs,
    keys_for,
    parse_value,
    producer_config,
    registry,
    topic_config,
    topic_overrides_for_describe,
    validate_key,
)
from kafkasim.settings.versions import SUPPORTED_VERSIONS, VersionError

# ---------------------------------------------------------------------------- registries

FACT_SHEET_BROKER_KEYS = [
    # §0 defaults table of the fact sheet
    "replica.lag.time.max.ms",
    "zookeeper.session.timeout.ms",
    "replica.lag.max.messages",
    "replica.fetch.wait.max.ms",
    "replica.fetch.min.bytes",
    "replica.fetch.max.bytes",
    "replica.fetch.response.max.bytes",
    "replica.fetch.backoff.ms",
    "num.replica.fetchers",
    "replica.socket.timeout.ms",
    "replica.high.watermark.checkpoint.interval.ms",
    "log.flush.offset.checkpoint.interval.ms",
    "log.flush.start.offset.checkpoint.interval.ms",
    "min.insync.replicas",
    "unclean.leader.election.enable",
    "auto.leader.rebalance.enable",
    "leader.imbalance.check.interval.seconds",
    "leader.imbalance.per.broker.percentage",
    "broker.session.timeout.ms",
    "broker.heartbeat.interval.ms",
    "replica.selector.class",
    "unclean.leader.election.interval.ms",
    # the brief's extra list
    "broker.id",
    "broker.rack",
    "log.flush.interval.messages",
    "log.flush.interval.ms",
    "log.flush.scheduler.interval.ms",
    "default.replication.factor",
    "num.partitions",
    "controlled.shutdown.enable",
    "message.max.bytes",
]


def test_registries_hold_every_required_key():
    for key in FACT_SHEET_BROKER_KEYS:
        assert key in BROKER, key
    for key in (
        "min.insync.replicas",
        "unclean.leader.election.enable",
        "flush.messages",
        "flush.ms",
        "retention.ms",
        "segment.bytes",
        "max.message.bytes",
    ):
        assert key in TOPIC, key
    for key in (
        "acks",
        "retries",
        "linger.ms",
        "batch.size",
        "max.in.flight.requests.per.connection",
        "request.timeout.ms",
        "delivery.timeout.ms",
        "retry.backoff.ms",
        "retry.backoff.max.ms",
        "metadata.max.age.ms",
        "max.block.ms",
        "enable.idempotence",
        "client.id",
    ):
        assert key in PRODUCER, key
    for key in (
        "group.id",
        "auto.offset.reset",
        "enable.auto.commit",
        "auto.commit.interval.ms",
        "fetch.min.bytes",
        "fetch.max.wait.ms",
        "max.poll.records",
        "isolation.level",
        "client.rack",
        "metadata.max.age.ms",
    ):
        assert key in CONSUMER, key


def test_registry_entries_are_consistent():
    for kind, reg in KINDS.items():
        assert registry(kind) is reg
        for name, defn in reg.items():
            assert isinstance(defn, ConfigDef)
            assert defn.name == name
            assert defn.type in ("int", "long", "short", "double", "boolean", "string", "list",
                                 "class")
            assert defn.doc and "\n" not in defn.doc
            if defn.since is not None or defn.removed_in is not None:
                assert defn.change_ref, name


def test_config_def_is_frozen():
    with pytest.raises(AttributeError):
        BROKER["min.insync.replicas"].default = 2  # type: ignore[misc]


def test_unknown_registry_kind():
    with pytest.raises(ConfigError, match="Unknown config kind 'admin'"):
        registry("admin")


def test_topic_configs_name_their_broker_synonyms():
    assert [s.broker_key for s in TOPIC["flush.messages"].synonyms] == [
        "log.flush.interval.messages"
    ]
    assert [s.broker_key for s in TOPIC["flush.ms"].synonyms] == [
        "log.flush.interval.ms",
        "log.flush.scheduler.interval.ms",
    ]
    assert [(s.broker_key, s.factor) for s in TOPIC["retention.ms"].synonyms] == [
        ("log.retention.ms", 1),
        ("log.retention.minutes", 60_000),
        ("log.retention.hours", 3_600_000),
    ]
    assert TOPIC["max.message.bytes"].synonyms[0].broker_key == "message.max.bytes"
    assert TOPIC["segment.bytes"].synonyms[0].broker_key == "log.segment.bytes"
    for defn in TOPIC.values():
        for synonym in defn.synonyms:
            assert synonym.broker_key in BROKER


# ---------------------------------------------------------------------------- defaults per version


@pytest.mark.parametrize(
    ("version", "key", "expected"),
    [
        ("2.4", "replica.lag.time.max.ms", 10000),
        ("2.5", "replica.lag.time.max.ms", 30000),
        ("3.7", "replica.lag.time.max.ms", 30000),
        ("0.8.2", "replica.lag.time.max.ms", 10000),
        ("2.4", "zookeeper.session.timeout.ms", 6000),
        ("2.5", "zookeeper.session.timeout.ms", 18000),
        ("3.9", "zookeeper.session.timeout.ms", 18000),
        ("0.10.2", "unclean.leader.election.enable", True),
        ("0.11.0", "unclean.leader.election.enable", False),
        ("0.8.2", "replica.lag.max.messages", 4000),
        ("2.4", "message.max.bytes", 1000012),
        ("2.5", "message.max.bytes", 1048588),
        ("3.7", "replica.fetch.wait.max.ms", 500),
        ("3.7", "replica.fetch.min.bytes", 1),
        ("3.7", "replica.fetch.max.bytes", 1048576),
        ("3.7", "replica.fetch.response.max.bytes", 10485760),
        ("3.7", "replica.fetch.backoff.ms", 1000),
        ("3.7", "num.replica.fetchers", 1),
        ("3.7", "replica.socket.timeout.ms", 30000),
        ("3.7", "replica.high.watermark.checkpoint.interval.ms", 5000),
        ("3.7", "log.flush.offset.checkpoint.interval.ms", 60000),
        ("3.7", "log.flush.start.offset.checkpoint.interval.ms", 60000),
        ("3.7", "log.flush.interval.messages", LONG_MAX),
        ("3.7", "log.flush.interval.ms", None),
        ("3.7", "log.flush.scheduler.interval.ms", LONG_MAX),
        ("3.7", "min.insync.replicas", 1),
        ("3.7", "auto.leader.rebalance.enable", True),
        ("3.7", "leader.imbalance.check.interval.seconds", 300),
        ("3.7", "leader.imbalance.per.broker.percentage", 10),
        ("3.7", "broker.session.timeout.ms", 9000),
        ("3.7", "broker.heartbeat.interval.ms", 2000),
        ("3.9", "unclean.leader.election.interval.ms", 300000),
        ("3.7", "replica.selector.class", None),
        ("3.7", "broker.id", -1),
        ("3.7", "broker.rack", None),
        ("3.7", "default.replication.factor", 1),
        ("3.7", "num.partitions", 1),
        ("3.7", "controlled.shutdown.enable", True),
        ("3.7", "controller.socket.timeout.ms", 30000),
        ("3.7", "log.retention.hours", 168),
        ("3.7", "log.segment.bytes", 1073741824),
    ],
)
def test_broker_defaults(version, key, expected):
    cfg = broker_config(None, version)
    assert cfg[key] == expected
    assert type(cfg[key]) is type(expected)


@pytest.mark.parametrize(
    ("key", "present_in", "absent_in"),
    [
        ("replica.lag.max.messages", "0.8.2", "0.9.0"),
        ("replica.fetch.backoff.ms", "0.9.0", "0.8.2"),
        ("broker.rack", "0.10.0", "0.9.0"),
        ("replica.fetch.response.max.bytes", "0.10.1", "0.10.0"),
        ("log.flush.start.offset.checkpoint.interval.ms", "0.11.0", "0.10.2"),
        ("replica.selector.class", "2.4", "2.3"),
        ("broker.session.timeout.ms", "2.8", "2.7"),
        ("unclean.leader.election.interval.ms", "3.9", "3.8"),
        ("zookeeper.session.timeout.ms", "3.9", "4.0"),
    ],
)
def test_broker_keys_appear_and_disappear_by_version(key, present_in, absent_in):
    assert key in broker_config(None, present_in)
    assert key not in broker_config(None, absent_in)
    assert key in keys_for("broker", present_in)
    assert key not in keys_for("broker", absent_in)


def test_broker_config_has_every_key_of_the_version_in_registry_order():
    cfg = broker_config(None, "3.7")
    assert list(cfg) == list(keys_for("broker", "3.7"))
    assert list(cfg) == [k for k in BROKER if BROKER[k].exists_in("3.7")]


def test_default_version_is_the_newest_4x():
    assert broker_config() == broker_config(None, "4.3")
    assert producer_config() == producer_config(None, "4.3")


@pytest.mark.parametrize("version", SUPPORTED_VERSIONS)
def test_every_version_resolves_defaults_without_error(version):
    broker = broker_config(None, version)
    topic = topic_config(None, broker, version)
    producer = producer_config(None, version)
    consumer = consumer_config(None, version)
    assert broker["min.insync.replicas"] == 1
    assert topic["min.insync.replicas"] == 1
    assert producer["acks"] in (-1, 1)
    assert consumer["enable.auto.commit"] in (True, False)


def test_patch_version_strings_resolve_to_profile():
    assert broker_config(None, "2.4.1") == broker_config(None, "2.4")
    assert broker_config(None, "0.10.2.0") == broker_config(None, "0.10.2")


def test_bad_version_is_rejected():
    with pytest.raises(VersionError):
        broker_config(None, "0.7")


# ---------------------------------------------------------------------------- parsing


def test_string_values_are_parsed_like_kafka():
    cfg = broker_config(
        {
            "replica.lag.time.max.ms": "20000",
            "unclean.leader.election.enable": "TRUE",
            "auto.leader.rebalance.enable": " false ",
            "min.insync.replicas": " 2 ",
            "broker.rack": " r1 ",
            "num.replica.fetchers": "+3",
        },
        "3.7",
    )
    assert cfg["replica.lag.time.max.ms"] == 20000
    assert cfg["unclean.leader.election.enable"] is True
    assert cfg["auto.leader.rebalance.enable"] is False
    assert cfg["min.insync.replicas"] == 2
    assert cfg["broker.rack"] == "r1"
    assert cfg["num.replica.fetchers"] == 3


def test_native_values_are_accepted():
    cfg = broker_config({"replica.lag.time.max.ms": 20000, "controlled.shutdown.enable": False})
    assert cfg["replica.lag.time.max.ms"] == 20000
    assert cfg["controlled.shutdown.enable"] is False


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1))
def test_int_strings_roundtrip(number):
    defn = BROKER["default.replication.factor"]  # INT with no validator
    assert parse_value(defn, str(number)) == number
    assert parse_value(defn, number) == number


@given(st.integers(min_value=2**31, max_value=2**63 - 1))
def test_int_overflow_is_not_a_number_of_type_int(number):
    with pytest.raises(ConfigError, match="Not a number of type INT"):
        parse_value(BROKER["default.replication.factor"], str(number))


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_long_values_roundtrip(number):
    assert parse_value(BROKER["replica.lag.time.max.ms"], str(number)) == number


def test_long_overflow_is_rejected():
    with pytest.raises(ConfigError, match="Not a number of type LONG"):
        parse_value(BROKER["replica.lag.time.max.ms"], str(2**63))


@pytest.mark.parametrize(("text", "expected"), [("true", True), ("False", False), ("TRUE", True)])
def test_boolean_strings(text, expected):
    assert parse_value(BROKER["controlled.shutdown.enable"], text) is expected


def test_list_and_double_types_parse():
    list_def = ConfigDef(name="x.list", type="list", default=(), doc="test")
    assert parse_value(list_def, " a, b ,c ") == ("a", "b", "c")
    assert parse_value(list_def, "") == ()
    assert parse_value(list_def, ["a", " b"]) == ("a", "b")
    double_def = ConfigDef(name="x.ratio", type="double", default=0.5, doc="test",
                           valid=Range(0, 1))
    assert parse_value(double_def, "0.25") == 0.25
    assert parse_value(double_def, 1) == 1.0
    with pytest.raises(ConfigError, match="Not a number of type DOUBLE"):
        parse_value(double_def, "half")
    with pytest.raises(ConfigError, match="Value must be no more than 1"):
        parse_value(double_def, 2)


def test_validators_describe_themselves_like_kafka_docs():
    assert str(Range(1)) == "[1,...]"
    assert str(Range(0, INT_MAX)) == f"[0,...,{INT_MAX}]"
    assert str(Range(None, 5)) == "[...,5]"
    assert str(ValidString(("a", "b"))) == "[a, b]"


def test_by_version_picks_the_step_in_force():
    value = by_version(("0.8.2", "old"), ("2.5", "new"))
    assert value.at("2.4") == "old"
    assert value.at("2.5") == "new"
    assert value.at("3.7.1") == "new"


def test_callable_default_is_allowed():
    defn = ConfigDef(name="x.y", type="int", default=lambda v: 7 if v == "3.7" else 3, doc="t")
    assert defn.default_for("3.7") == 7
    assert defn.default_for("2.4") == 3


# ---------------------------------------------------------------------------- error paths


def test_unknown_broker_key_suggests_the_closest():
    with pytest.raises(ConfigError) as err:
        broker_config({"replica.lag.time.max": 1000}, "3.7")
    assert str(err.value) == (
        "Unknown broker config 'replica.lag.time.max'. Did you mean 'replica.lag.time.max.ms'?"
    )


def test_unknown_key_without_a_close_match():
    with pytest.raises(ConfigError) as err:
        broker_config({"zzzz": 1})
    assert str(err.value) == "Unknown broker config 'zzzz'."


def test_producer_key_used_as_broker_key_names_its_kind():
    with pytest.raises(ConfigError) as err:
        broker_config({"acks": "all"})
    assert "'acks' is a producer config, not a broker config." in str(err.value)


def test_consumer_key_used_as_producer_key_names_its_kind():
    with pytest.raises(ConfigError, match="'group.id' is a consumer config, not a producer config"):
        producer_config({"group.id": "g"})


def test_topic_key_used_as_broker_key_names_the_broker_synonym():
    with pytest.raises(ConfigError) as err:
        broker_config({"retention.ms": 1000})
    message = str(err.value)
    assert "'retention.ms' is a topic config, not a broker config" in message
    assert "'log.retention.ms'" in message


def test_broker_key_used_as_topic_key_names_the_topic_config():
    with pytest.raises(ConfigError) as err:
        topic_config({"log.retention.ms": 1000})
    message = str(err.value)
    assert "'log.retention.ms' is a broker config, not a topic config" in message
    assert "'retention.ms'" in message


def test_wrong_type_long():
    with pytest.raises(ConfigError) as err:
        broker_config({"replica.lag.time.max.ms": "abc"})
    assert str(err.value) == (
        "Invalid value abc for configuration replica.lag.time.max.ms: Not a number of type LONG"
    )


def test_wrong_type_int():
    with pytest.raises(ConfigError, match="min.insync.replicas: Not a number of type INT"):
        broker_config({"min.insync.replicas": "two"})


@pytest.mark.parametrize("bad", [True, 1.5, 30000.0, [1]])
def test_non_integer_python_values_are_rejected_for_int_keys(bad):
    with pytest.raises(ConfigError, match="Expected value to be a 64-bit integer"):
        broker_config({"replica.lag.time.max.ms": bad})


def test_wrong_type_boolean():
    with pytest.raises(ConfigError) as err:
        broker_config({"unclean.leader.election.enable": "yes"})
    assert str(err.value) == (
        "Invalid value yes for configuration unclean.leader.election.enable: "
        "Expected value to be either true or false"
    )
    with pytest.raises(ConfigError, match="either true or false"):
        broker_config({"unclean.leader.election.enable": 1})


def test_wrong_type_string():
    with pytest.raises(ConfigError, match="Expected value to be a string, but it was a int"):
        broker_config({"broker.rack": 3})


def test_out_of_range_names_key_and_range():
    with pytest.raises(ConfigError) as err:
        broker_config({"min.insync.replicas": 0})
    assert str(err.value) == (
        "Invalid value 0 for configuration min.insync.replicas: Value must be at least 1"
    )


def test_out_of_range_string_value():
    with pytest.raises(ConfigError, match="Invalid value -1 for configuration num.partitions"):
        broker_config({"num.partitions": "-1"})


def test_topic_out_of_range():
    with pytest.raises(ConfigError, match="min.insync.replicas: Value must be at least 1"):
        topic_config({"min.insync.replicas": 0})
    with pytest.raises(ConfigError, match="retention.ms: Value must be at least -1"):
        topic_config({"retention.ms": -2}, None, "2.2")


def test_validators_change_by_version():
    # flush.messages: atLeast(0) until 3.2, atLeast(1) since 3.3.
    assert topic_config({"flush.messages": 0}, None, "3.2")["flush.messages"] == 0
    with pytest.raises(ConfigError, match="flush.messages: Value must be at least 1"):
        topic_config({"flush.messages": 0}, None, "3.3")
    # leader.imbalance.check.interval.seconds: no validator before 3.2.
    assert broker_config({"leader.imbalance.check.interval.seconds": 0}, "3.1")[
        "leader.imbalance.check.interval.seconds"
    ] == 0
    with pytest.raises(ConfigError, match="Value must be at least 1"):
        broker_config({"leader.imbalance.check.interval.seconds": 0}, "3.2")
    # log.segment.bytes: minimum 14 bytes, 1 MiB since 4.0 (KIP-1030, ServerLogConfigs);
    # the topic key segment.bytes followed in 4.1 (KAFKA-19080, LogConfig @4.0.0 vs @4.1.0)
    assert broker_config({"log.segment.bytes": 1024}, "3.9")["log.segment.bytes"] == 1024
    with pytest.raises(ConfigError, match="log.segment.bytes: Value must be at least 1048576"):
        broker_config({"log.segment.bytes": 1024}, "4.0")
    assert topic_config({"segment.bytes": 1024}, None, "3.9")["segment.bytes"] == 1024
    assert topic_config({"segment.bytes": 1024}, None, "4.0")["segment.bytes"] == 1024
    with pytest.raises(ConfigError, match="segment.bytes: Value must be at least 14"):
        topic_config({"segment.bytes": 13}, None, "4.0")
    with pytest.raises(ConfigError, match="segment.bytes: Value must be at least 1048576"):
        topic_config({"segment.bytes": 1024}, None, "4.1")
    # num.replica.fetchers: atLeast(1) since 4.2 (ReplicationConfigs); before, 0 is refused as
    # the division by zero it would cause, with that reason
    with pytest.raises(ConfigError, match="num.replica.fetchers: Value must be at least 1"):
        broker_config({"num.replica.fetchers": 0}, "4.2")
    with pytest.raises(ConfigError, match="without a validator before 4.2.*/ by zero"):
        broker_config({"num.replica.fetchers": 0}, "4.1")
    # node.id: atLeast(0) since 4.0 (KRaftConfigs), checked when set
    with pytest.raises(ConfigError, match="node.id: Value must be at least 0"):
        broker_config({"node.id": -2}, "4.0")
    assert broker_config({"node.id": 1}, "4.0")["node.id"] == 1


@pytest.mark.parametrize("key", [
    "controller.quorum.election.timeout.ms", "controller.quorum.fetch.timeout.ms",
    "controller.quorum.election.backoff.max.ms", "controller.quorum.append.linger.ms",
    "controller.quorum.request.timeout.ms", "controller.quorum.retry.backoff.ms"])
def test_quorum_timeouts_validate_from_4_1(key):
    """QuorumConfig: the six timeouts have no validator in 4.0 and atLeast(0) from 4.1 (before,
    the simulator's own bound refuses a negative time, in its own words)."""
    with pytest.raises(ConfigError, match=f"{key}: Value must be at least 0"):
        broker_config({key: -1}, "4.1")
    with pytest.raises(ConfigError, match="defines it without a validator"):
        broker_config({key: -1}, "4.0")
    assert broker_config({key: 0}, "4.1")[key] == 0


def test_none_value_fails_a_range_validator():
    with pytest.raises(ConfigError, match="Value must be non-null"):
        broker_config({"min.insync.replicas": None})


def test_removed_key_under_newer_version():
    with pytest.raises(ConfigError) as err:
        broker_config({"replica.lag.max.messages": 4000}, "3.7")
    message = str(err.value)
    assert "'replica.lag.max.messages' was removed in Kafka 0.9.0" in message
    assert "KIP-16" in message
    assert "Use 'replica.lag.time.max.ms' instead." in message


def test_removed_zookeeper_key_in_4_0():
    with pytest.raises(ConfigError) as err:
        validate_key("broker", "zookeeper.session.timeout.ms", "4.0")
    assert "removed in Kafka 4.0" in str(err.value)
    assert "broker.session.timeout.ms" in str(err.value)


def test_key_not_yet_added():
    with pytest.raises(ConfigError) as err:
        broker_config({"replica.selector.class": "x"}, "2.3")
    message = str(err.value)
    assert "'replica.selector.class' does not exist in Kafka 2.3" in message
    assert "added in 2.4 (KIP-392)" in message


def test_client_key_not_yet_added():
    with pytest.raises(ConfigError, match="'delivery.timeout.ms' does not exist in Kafka 2.0"):
        producer_config({"delivery.timeout.ms": 1000}, "2.0")
    with pytest.raises(ConfigError, match="'isolation.level' does not exist in Kafka 0.10.2"):
        consumer_config({"isolation.level": "read_committed"}, "0.10.2")


def test_validate_key_returns_the_definition():
    defn = validate_key("broker", "replica.lag.time.max.ms", "3.7")
    assert defn is BROKER["replica.lag.time.max.ms"]
    assert defn.unit == "ms"
    assert validate_key("broker", "replica.lag.max.messages", "0.8.2").default_for("0.8.2") == 4000


def test_overrides_must_be_a_mapping_with_string_keys():
    with pytest.raises(ConfigError, match="must be a mapping"):
        broker_config([("min.insync.replicas", 2)])  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="keys must be strings"):
        broker_config({1: 2})  # type: ignore[dict-item]


def test_config_error_is_a_value_error():
    assert issubclass(ConfigError, ValueError)


# ---------------------------------------------------------------------------- broker cross-checks


def test_fetch_wait_must_not_exceed_lag_time():
    with pytest.raises(ConfigError) as err:
        broker_config({"replica.fetch.wait.max.ms": 20000, "replica.lag.time.max.ms": 10000})
    message = str(err.value)
    assert "replica.fetch.wait.max.ms (20000)" in message
    assert "replica.lag.time.max.ms (10000)" in message
    assert "ISR" in message


def test_fetch_wait_must_not_exceed_socket_timeout():
    with pytest.raises(ConfigError) as err:
        broker_config({"replica.fetch.wait.max.ms": 25000, "replica.socket.timeout.ms": 20000})
    message = str(err.value)
    assert "replica.fetch.wait.max.ms (25000)" in message
    assert "replica.socket.timeout.ms (20000)" in message


def test_fetch_wait_lag_check_uses_the_version_default():
    # 15 s is fine against the 30 s default of 2.5+, not against 10 s in 2.4.
    assert broker_config({"replica.fetch.wait.max.ms": 15000, "replica.socket.timeout.ms": 15000},
                         "2.5")["replica.fetch.wait.max.ms"] == 15000
    with pytest.raises(ConfigError, match="replica.lag.time.max.ms \\(10000\\)"):
        broker_config({"replica.fetch.wait.max.ms": 15000, "replica.socket.timeout.ms": 15000},
                      "2.4")


def test_replica_fetch_max_bytes_vs_message_max_bytes_only_before_0_10_1():
    with pytest.raises(ConfigError, match="replica.fetch.max.bytes \\(1000\\) must be at least"):
        broker_config({"replica.fetch.max.bytes": 1000}, "0.10.0")
    assert broker_config({"replica.fetch.max.bytes": 1000}, "0.10.1")[
        "replica.fetch.max.bytes"
    ] == 1000


def test_no_check_between_response_max_bytes_and_fetch_max_bytes():
    cfg = broker_config(
        {"replica.fetch.response.max.bytes": 1000, "replica.fetch.max.bytes": 5000}, "3.7"
    )
    assert cfg["replica.fetch.response.max.bytes"] == 1000


def test_log_retention_must_be_unlimited_or_positive():
    with pytest.raises(ConfigError, match="-1 \\(unlimited\\) or at least 1"):
        broker_config({"log.retention.ms": 0})
    assert broker_config({"log.retention.ms": -1})["log.retention.ms"] == -1
    with pytest.raises(ConfigError, match="added in 0.9.0 by KAFKA-1990"):
        broker_config({"log.retention.ms": -1}, "0.8.2")


# ---------------------------------------------------------------------------- topic configs


def test_topic_defaults_inherit_broker_values():
    broker = broker_config(
        {
            "min.insync.replicas": 2,
            "unclean.leader.election.enable": True,
            "log.flush.interval.messages": 1000,
            "log.retention.hours": 72,
            "log.segment.bytes": 104857600,
            "message.max.bytes": 2000000,
        },
        "3.7",
    )
    topic = topic_config(None, broker, "3.7")
    assert topic["min.insync.replicas"] == 2
    assert topic["unclean.leader.election.enable"] is True
    assert topic["flush.messages"] == 1000
    assert topic["retention.ms"] == 72 * 3_600_000
    assert topic["segment.bytes"] == 104857600
    assert topic["max.message.bytes"] == 2000000
    assert topic["flush.ms"] == LONG_MAX


def test_topic_retention_synonym_priority():
    broker = broker_config(
        {"log.retention.hours": 1, "log.retention.minutes": 5, "log.retention.ms": 1234}
    )
    assert topic_config(None, broker)["retention.ms"] == 1234
    broker = broker_config({"log.retention.hours": 1, "log.retention.minutes": 5})
    assert topic_config(None, broker)["retention.ms"] == 300_000
    assert topic_config(None, broker_config())["retention.ms"] == 604_800_000


def test_topic_flush_ms_falls_back_to_scheduler_interval():
    broker = broker_config({"log.flush.scheduler.interval.ms": 2000})
    assert topic_config(None, broker)["flush.ms"] == 2000
    broker = broker_config({"log.flush.scheduler.interval.ms": 2000, "log.flush.interval.ms": 500})
    assert topic_config(None, broker)["flush.ms"] == 500


def test_topic_overrides_win_over_broker_defaults():
    broker = broker_config({"min.insync.replicas": 2})
    topic = topic_config({"min.insync.replicas": "3", "retention.ms": "-1"}, broker)
    assert topic["min.insync.replicas"] == 3
    assert topic["retention.ms"] == -1


def test_topic_unclean_default_follows_version():
    assert topic_config(None, None, "0.10.2")["unclean.leader.election.enable"] is True
    assert topic_config(None, None, "0.11.0")["unclean.leader.election.enable"] is False


def test_topic_config_without_broker_uses_broker_defaults():
    assert topic_config() == topic_config(None, broker_config())
    assert list(topic_config()) == list(TOPIC)


# ---------------------------------------------------------------------------- describe Configs:


def test_describe_shows_only_non_default_entries():
    assert describe_configs() == []
    assert topic_overrides_for_describe() == ""
    assert describe_configs({"min.insync.replicas": 2}) == ["min.insync.replicas=2"]


def test_describe_includes_static_broker_overrides_since_2_4():
    entries = describe_configs(None, {"log.segment.bytes": 104857600}, "3.7")
    assert entries == ["segment.bytes=104857600"]
    # log.retention.hours is a synonym of retention.ms: shown converted to ms.
    entries = describe_configs(None, {"log.retention.hours": 72}, "2.4")
    assert entries == ["retention.ms=259200000"]
    # Broker keys that are not topic synonyms do not appear.
    assert describe_configs(None, {"num.replica.fetchers": 2}, "3.7") == []


def test_describe_zookeeper_path_shows_only_topic_overrides_before_2_4():
    assert describe_configs(None, {"log.segment.bytes": 104857600}, "2.3") == []
    assert describe_configs({"min.insync.replicas": 2}, None, "2.3") == ["min.insync.replicas=2"]


def test_describe_admin_order_is_java_hashmap_order():
    # Known real output for __consumer_offsets-like overrides on the admin path (2.4+):
    # compression.type, cleanup.policy, segment.bytes. Of ours, min.insync.replicas (bucket 10)
    # comes before segment.bytes (bucket 27) whatever order they were given in.
    entries = describe_configs({"segment.bytes": 104857600, "min.insync.replicas": 2}, None, "3.7")
    assert entries == ["min.insync.replicas=2", "segment.bytes=104857600"]
    entries = describe_configs({"min.insync.replicas": 2, "segment.bytes": 104857600}, None, "3.7")
    assert entries == ["min.insync.replicas=2", "segment.bytes=104857600"]


def test_describe_formats_values_like_java():
    text = topic_overrides_for_describe(
        {"unclean.leader.election.enable": "TRUE", "min.insync.replicas": 2}, None, "3.7"
    )
    assert text == "min.insync.replicas=2,unclean.leader.election.enable=true"


def test_describe_zookeeper_path_prints_in_hashtable_order():
    # java.util.Properties (a Hashtable in Java 8) enumerates from its last bucket: the order
    # tests/test_javautil.py checks against Java for these names
    entries = describe_configs({"segment.bytes": 104857600, "min.insync.replicas": 2,
                                "retention.ms": 1000}, None, "2.3")
    assert entries == ["segment.bytes=104857600", "retention.ms=1000", "min.insync.replicas=2"]


# ---------------------------------------------------------------------------- producer


@pytest.mark.parametrize(
    ("value", "expected"),
    [("all", -1), ("-1", -1), ("0", 0), ("1", 1), (-1, -1), (0, 0), (1, 1)],
)
def test_acks_is_normalised_to_int(value, expected):
    cfg = producer_config({"acks": value, "enable.idempotence": False}, "3.7")
    assert cfg["acks"] == expected


def test_acks_default_by_version():
    assert producer_config(None, "2.8")["acks"] == 1
    assert producer_config(None, "3.0")["acks"] == -1
    assert producer_config(None, "3.7")["acks"] == -1
    assert producer_config(None, "0.8.2")["acks"] == 1


@pytest.mark.parametrize("bad", ["ALL", "2", 2, "-2"])
def test_invalid_acks(bad):
    with pytest.raises(ConfigError) as err:
        producer_config({"acks": bad})
    assert "for configuration acks: String must be one of: all, -1, 0, 1" in str(err.value)


def test_linger_ms_default_changes_in_4_0():
    assert producer_config(None, "3.9")["linger.ms"] == 0
    assert producer_config(None, "4.0")["linger.ms"] == 5


def test_retries_default_by_version():
    assert producer_config(None, "2.0")["retries"] == 0
    assert producer_config(None, "2.1")["retries"] == INT_MAX


def test_idempotence_effective_default_by_version():
    assert "enable.idempotence" not in producer_config(None, "0.10.2")
    assert producer_config(None, "2.8")["enable.idempotence"] is False
    # 3.0 and 3.1 declared true but only honoured an explicit setting (fixed by KAFKA-13598).
    assert producer_config(None, "3.0")["enable.idempotence"] is False
    assert producer_config(None, "3.1")["enable.idempotence"] is False
    assert producer_config(None, "3.2")["enable.idempotence"] is True
    assert producer_config(None, "3.7")["enable.idempotence"] is True


def test_explicit_idempotence_requires_acks_all():
    with pytest.raises(ConfigError) as err:
        producer_config({"enable.idempotence": True, "acks": "1"}, "3.7")
    assert "Must set acks to all in order to use the idempotent producer" in str(err.value)
    with pytest.raises(ConfigError, match="Must set acks to all"):
        producer_config({"enable.idempotence": "true", "acks": 0}, "2.8")


def test_default_idempotence_is_disabled_by_conflicts_since_3_2():
    cfg = producer_config({"acks": "1"}, "3.7")
    assert cfg["acks"] == 1
    assert cfg["enable.idempotence"] is False
    cfg = producer_config({"max.in.flight.requests.per.connection": 10}, "3.7")
    assert cfg["enable.idempotence"] is False
    cfg = producer_config({"retries": 0}, "3.7")
    assert cfg["enable.idempotence"] is False


def test_explicit_idempotence_conflicts_raise_since_3_2():
    with pytest.raises(ConfigError, match="Must set retries to non-zero"):
        producer_config({"enable.idempotence": True, "retries": 0}, "3.7")
    with pytest.raises(ConfigError, match="max.in.flight.requests.per.connection to at most 5"):
        producer_config(
            {"enable.idempotence": True, "max.in.flight.requests.per.connection": 6}, "3.7"
        )


def test_explicit_idempotence_before_3_2_overrides_defaults():
    cfg = producer_config({"enable.idempotence": True}, "2.0")
    assert cfg["enable.idempotence"] is True
    assert cfg["acks"] == -1
    assert cfg["retries"] == INT_MAX
    cfg = producer_config({"enable.idempotence": True}, "0.11.0")
    assert cfg["max.in.flight.requests.per.connection"] == 1
    with pytest.raises(ConfigError, match="max.in.flight.requests.per.connection to 1"):
        producer_config(
            {"enable.idempotence": True, "max.in.flight.requests.per.connection": 2}, "0.11.0"
        )
    with pytest.raises(ConfigError, match="Must set retries to non-zero"):
        producer_config({"enable.idempotence": True, "retries": 0}, "2.8")
    with pytest.raises(ConfigError, match="at most 5"):
        producer_config(
            {"enable.idempotence": True, "max.in.flight.requests.per.connection": 6}, "1.0"
        )


def test_idempotence_key_does_not_exist_before_0_11():
    with pytest.raises(ConfigError, match="added in 0.11.0 \\(KIP-98\\)"):
        producer_config({"enable.idempotence": True}, "0.10.2")


def test_delivery_timeout_must_cover_linger_plus_request_timeout():
    with pytest.raises(ConfigError, match="delivery.timeout.ms \\(1000\\) should be equal to"):
        producer_config({"delivery.timeout.ms": 1000}, "3.7")
    cfg = producer_config({"request.timeout.ms": 200000}, "3.7")
    assert cfg["delivery.timeout.ms"] == 200000  # default raised to linger + request timeout
    assert producer_config(None, "4.0")["delivery.timeout.ms"] == 120000


def test_producer_defaults_3_7():
    cfg = producer_config(None, "3.7")
    assert cfg["request.timeout.ms"] == 30000
    assert cfg["delivery.timeout.ms"] == 120000
    assert cfg["batch.size"] == 16384
    assert cfg["max.in.flight.requests.per.connection"] == 5
    assert cfg["retry.backoff.ms"] == 100
    assert cfg["client.id"] == ""


# ---------------------------------------------------------------------------- consumer


def test_consumer_defaults_by_version():
    assert consumer_config(None, "0.8.2")["auto.offset.reset"] == "largest"
    assert consumer_config(None, "0.9.0")["auto.offset.reset"] == "latest"
    assert consumer_config(None, "0.9.0")["fetch.min.bytes"] == 1024
    assert consumer_config(None, "0.10.0")["fetch.min.bytes"] == 1
    assert consumer_config(None, "0.10.0")["max.poll.records"] == INT_MAX
    assert consumer_config(None, "0.10.1")["max.poll.records"] == 500
    assert consumer_config(None, "2.1")["group.id"] == ""
    cfg = consumer_config(None, "3.7")
    assert cfg["group.id"] is None
    assert cfg["isolation.level"] == "read_uncommitted"
    assert cfg["client.rack"] == ""
    assert cfg["metadata.max.age.ms"] == 300000
    assert cfg["fetch.max.wait.ms"] == 500
    assert cfg["auto.commit.interval.ms"] == 5000
    assert cfg["max.partition.fetch.bytes"] == 1048576
    assert cfg["fetch.max.bytes"] == 52428800
    assert "max.partition.fetch.bytes" not in consumer_config(None, "0.8.2")
    assert "fetch.max.bytes" not in consumer_config(None, "0.10.0")


def test_consumer_without_group_disables_auto_commit_since_2_2():
    assert consumer_config(None, "3.7")["enable.auto.commit"] is False
    assert consumer_config({"group.id": "g"}, "3.7")["enable.auto.commit"] is True
    assert consumer_config(None, "2.1")["enable.auto.commit"] is True
    with pytest.raises(ConfigError, match="cannot be set to true when default group id"):
        consumer_config({"enable.auto.commit": True}, "3.7")


def test_consumer_choices_are_validated():
    with pytest.raises(ConfigError, match="String must be one of: latest, earliest, none"):
        consumer_config({"auto.offset.reset": "smallest"}, "3.7")
    assert consumer_config({"auto.offset.reset": "smallest"}, "0.8.2")[
        "auto.offset.reset"
    ] == "smallest"
    with pytest.raises(ConfigError, match="read_committed, read_uncommitted"):
        consumer_config({"isolation.level": "READ_COMMITTED"}, "3.7")
    with pytest.raises(ConfigError, match="max.poll.records: Value must be at least 1"):
        consumer_config({"max.poll.records": 0})


# ---------------------------------------------------------------------------- version diffs


def test_default_differences():
    assert default_differences("4.3") == []
    lines = default_differences("2.4")
    assert "broker replica.lag.time.max.ms = 10000 (4.3: 30000)" in lines
    assert "producer acks = 1 (4.3: -1)" in lines
    assert "broker replica.lag.max.messages exists here but not in 4.3" in default_differences(
        "0.8.2"
    )
    assert "producer linger.ms = 0 (4.3: 5)" in default_differences("3.7")
    assert 'consumer group.id = "" (4.3: null)' in default_differences("2.1")


def test_results_are_deterministic_plain_dicts():
    first = broker_config({"min.insync.replicas": 2}, "3.7")
    second = broker_config({"min.insync.replicas": 2}, "3.7")
    assert first == second and list(first) == list(second)
    assert type(first) is dict


def test_module_exports():
    for name in config.__all__:
        assert hasattr(config, name)


def test_a_real_kafka_topic_config_kafkasim_does_not_model_is_named_as_real():
    """'cleanup.policy' is Kafka's (TopicConfig), not a typo: the error says kafkasim does not
    model it and lists the topic configs it does; a typo still gets its did-you-mean."""
    from kafkasim.settings.config import UNMODELLED_TOPIC_CONFIGS, validate_key
    with pytest.raises(ConfigError) as info:
        validate_key("topic", "cleanup.policy")
    assert "is a Kafka topic config that kafkasim does not model" in str(info.value)
    assert "min.insync.replicas" in str(info.value)
    with pytest.raises(ConfigError, match="Did you mean 'retention.ms'"):
        validate_key("topic", "retention.msx")
    assert not UNMODELLED_TOPIC_CONFIGS & set(TOPIC)     # none of them is modelled after all
