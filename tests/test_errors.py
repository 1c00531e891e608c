"""Bad inputs give clear errors: what was wrong, where, and (when guessable) what was meant."""

from __future__ import annotations

import pytest
from clusters import make_cluster

from kafkasim.runtime.cluster import Cluster, ClusterError
from kafkasim.scenarios.scenario import Scenario, ScenarioError
from kafkasim.settings.config import ConfigError
from kafkasim.settings.versions import RuleError, VersionError
from kafkasim.tools import cli

# the ZooKeeper-era release these tests were written against (Kafka 4.x is KRaft only;
# its behaviour is tested in tests/test_kraft_*.py)
ZK = "3.7"


@pytest.fixture(scope="module")
def cluster():
    return make_cluster(seed=1, kafka_version=ZK, topic="orders", partitions=3)


# ============================================================================ configs


def test_unknown_broker_config_suggests_the_real_key():
    with pytest.raises(ConfigError) as info:
        Cluster(config={"replica.lag.time.max": 1}, kafka_version=ZK)
    msg = str(info.value)
    assert "replica.lag.time.max" in msg
    assert "Did you mean 'replica.lag.time.max.ms'?" in msg


def test_out_of_range_broker_value_names_key_and_range():
    with pytest.raises(ConfigError) as info:
        Cluster(config={"min.insync.replicas": 0}, kafka_version=ZK)
    msg = str(info.value)
    assert "min.insync.replicas" in msg
    assert "0" in msg and "at least 1" in msg


def test_out_of_range_topic_value_names_key_and_range(cluster):
    with pytest.raises(ConfigError, match=r"min\.insync\.replicas.*at least 1"):
        cluster.create_topic("bad-config", 1, 1, config={"min.insync.replicas": 0})
    assert "bad-config" not in cluster.topics.names()


def test_wrong_type_value_is_rejected():
    with pytest.raises(ConfigError, match="unclean.leader.election.enable.*true or false"):
        Cluster(config={"unclean.leader.election.enable": "maybe"}, kafka_version=ZK)


def test_cross_key_constraint_names_both_keys():
    with pytest.raises(ConfigError) as info:
        Cluster(config={"replica.lag.time.max.ms": 100}, kafka_version=ZK)
    msg = str(info.value)
    assert "replica.fetch.wait.max.ms" in msg and "replica.lag.time.max.ms" in msg


def test_unknown_topic_config_key_suggests(cluster):
    with pytest.raises(ConfigError, match="Did you mean 'min.insync.replicas'"):
        cluster.alter_config("topics", "orders", {"min.insync.replica": 2})


def test_unknown_producer_config_and_bad_acks(cluster):
    with pytest.raises(ConfigError, match="Did you mean 'acks'"):
        cluster.producer(ackz="all")
    with pytest.raises(ConfigError) as info:
        cluster.producer(acks="2")
    assert "acks" in str(info.value) and "all, -1, 0, 1" in str(info.value)


# ============================================================================ topics / partitions


def test_replication_factor_larger_than_brokers(cluster):
    with pytest.raises(ClusterError) as info:
        cluster.create_topic("too-wide", 1, 4)
    msg = str(info.value)
    assert "Replication factor: 4 larger than available brokers: 3" in msg
    assert "INVALID_REPLICATION_FACTOR" in msg
    assert "too-wide" not in cluster.topics.names()


def test_duplicate_topic(cluster):
    with pytest.raises(ClusterError, match="Topic 'orders' already exists"):
        cluster.create_topic("orders", 1, 1)


@pytest.mark.parametrize("name", ["", "has space", "x" * 250, "slash/no"])
def test_invalid_topic_name(cluster, name):
    with pytest.raises(ClusterError, match="Topic name is invalid"):
        cluster.create_topic(name)


def _did_you_mean(exc) -> None:
    msg = str(exc.value)
    assert "Topic 'order' does not exist" in msg
    assert "UNKNOWN_TOPIC_OR_PARTITION" in msg
    assert "Did you mean 'orders'?" in msg


def _waiting_send(topic: str, **kw):
    """A send on a cluster of its own (it runs for max.block.ms) and its result once failed.
    Its brokers run with auto.create.topics.enable false: with Kafka's default (true) the
    producer's Metadata request would create the misspelt topic."""
    c = make_cluster(seed=1, kafka_version=ZK, topic="orders", partitions=3,
                     config={"auto.create.topics.enable": False})
    p = c.producer(max_block_ms=1000)
    result = p.send(topic, "x", **kw)
    assert result.status == "pending"
    c.run(1001)
    assert result.status == "failed" and result.error == "TimeoutException"
    return p, result


def test_unknown_topic_in_producer_send():
    """Kafka's send waits max.block.ms for the topic (KafkaProducer.waitOnMetadata), then fails
    with a TimeoutException; its message says so, and kafkasim's addition names what was meant."""
    p, result = _waiting_send("order")
    assert result.message == ("Topic order not present in metadata after 1000 ms. (Topic "
                              "'order' does not exist. Did you mean 'orders'?)")
    assert list(p.results) == [result.record_id]


def test_unknown_topic_in_consumer_assign(cluster):
    with pytest.raises(ClusterError) as info:
        cluster.consumer().assign("order")
    _did_you_mean(info)


def test_unknown_topic_in_alter_config(cluster):
    with pytest.raises(ClusterError) as info:
        cluster.alter_config("topics", "order", {"min.insync.replicas": 2})
    _did_you_mean(info)


def test_unknown_topic_in_describe(cluster):
    with pytest.raises(ClusterError) as info:
        cluster.describe("order")
    _did_you_mean(info)


def test_unknown_topic_without_close_match_has_no_suggestion():
    _, result = _waiting_send("zzzzzz")
    assert "does not exist" in result.message and "Did you mean" not in result.message


@pytest.mark.parametrize("part", [3, 99])
def test_unknown_partition(cluster, part):
    _, result = _waiting_send("orders", partition=part)
    assert f"Topic 'orders' has partitions 0..2; partition {part} does not exist" in \
        result.message
    with pytest.raises(ClusterError, match="partitions 0..2"):
        cluster.consumer().assign("orders", [part])


def test_negative_partition_raises_at_once(cluster):
    """A negative partition is the caller's error (ProducerRecord: IllegalArgumentException)."""
    with pytest.raises(ClusterError) as info:
        cluster.producer().send("orders", "x", partition=-1)
    msg = str(info.value)
    assert "partitions 0..2" in msg and "partition -1 does not exist" in msg
    with pytest.raises(ClusterError, match="partitions 0..2"):
        cluster.consumer().assign("orders", [-1])


# ============================================================================ versions / rules


def test_unknown_kafka_version_lists_supported():
    with pytest.raises(VersionError) as info:
        Cluster(kafka_version="banana")
    msg = str(info.value)
    assert "banana" in msg and "3.7" in msg and "0.8.2" in msg


def test_kafka_version_older_than_every_profile():
    with pytest.raises(VersionError, match="older than every supported profile"):
        Cluster(kafka_version="0.7")


def test_unknown_rule_override_suggests():
    with pytest.raises(RuleError) as info:
        Cluster(rules={"maximal_isrs": True}, kafka_version=ZK)
    msg = str(info.value)
    assert "Unknown rule 'maximal_isrs'" in msg and "Did you mean 'maximal_isr'?" in msg


def test_rule_override_must_be_bool():
    with pytest.raises(RuleError, match="must be True or False"):
        Cluster(rules={"maximal_isr": "yes"}, kafka_version=ZK)


# ============================================================================ scenario files


def _load(tmp_path, text: str, name: str = "bad.toml"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_malformed_toml_names_file_and_line(tmp_path):
    path = _load(tmp_path, 'name = "x"\n[cluster]\nbrokers = \n')
    with pytest.raises(ScenarioError) as info:
        Scenario.load(path)
    msg = str(info.value)
    assert str(path) in msg and "invalid TOML" in msg and "line 3" in msg


def test_unknown_action_with_suggestion_and_line(tmp_path):
    text = ('name = "x"\n\n[[steps]]\ndo = "run"\nms = 5\n\n'
            '[[steps]]\ndo = "produse"\ntopic = "t"\n')
    path = _load(tmp_path, text)
    with pytest.raises(ScenarioError) as info:
        Scenario.load(path)
    msg = str(info.value)
    assert msg.startswith(f"{path}: line 7: step 2:")
    assert "unknown action 'produse'" in msg and "did you mean 'produce'?" in msg


def test_unknown_key_in_step_with_suggestion(tmp_path):
    path = _load(tmp_path, '[[steps]]\ndo = "produce"\ntopic = "t"\ncout = 3\n')
    with pytest.raises(ScenarioError) as info:
        Scenario.load(path)
    msg = str(info.value)
    assert f"{path}: line 1: step 1" in msg
    assert "unknown key 'cout'" in msg and "did you mean 'count'?" in msg


def test_missing_required_key(tmp_path):
    path = _load(tmp_path, 'seed = 1\n\n[[steps]]\ndo = "pause"\nbroker = 2\n')
    with pytest.raises(ScenarioError) as info:
        Scenario.load(path)
    msg = str(info.value)
    assert "line 3: step 1" in msg and "'pause' step is missing ms" in msg


def test_step_without_do(tmp_path):
    path = _load(tmp_path, '[[steps]]\nms = 5\n')
    with pytest.raises(ScenarioError, match="needs a 'do' key"):
        Scenario.load(path)


def test_unknown_condition_key(tmp_path):
    path = _load(tmp_path, '[[steps]]\ndo = "expect"\n'
                           'that = { hwm = { topic = "t", equals = 1 } }\n')
    with pytest.raises(ScenarioError) as info:
        Scenario.load(path)
    msg = str(info.value)
    assert "line 1: step 1" in msg
    assert "unknown key 'hwm' in condition" in msg and "did you mean 'hw'?" in msg


def test_unknown_top_level_key(tmp_path):
    path = _load(tmp_path, 'nme = "x"\n')
    with pytest.raises(ScenarioError, match="unknown key 'nme'.*did you mean 'name'"):
        Scenario.load(path)


def test_wrong_type_for_a_top_level_value(tmp_path):
    path = _load(tmp_path, 'seed = "one"\n')
    with pytest.raises(ScenarioError, match="seed must be an integer"):
        Scenario.load(path)


def test_bad_cluster_config_in_scenario_names_section_and_suggests(tmp_path):
    path = _load(tmp_path, '[cluster]\nconfig = { "replica.lag.time.max" = 1 }\n')
    sc = Scenario.load(path)
    with pytest.raises(ScenarioError) as info:
        sc.run()
    msg = str(info.value)
    assert str(path) in msg and "[cluster]" in msg and "replica.lag.time.max.ms" in msg


def test_runtime_step_failure_names_line_and_step(tmp_path):
    text = ('[[topics]]\nname = "orders"\nreplication_factor = 3\n\n'
            '[[steps]]\ndo = "produce"\ntopic = "order"\n')
    sc = Scenario.load(_load(tmp_path, text))
    with pytest.raises(ScenarioError) as info:
        sc.run()
    msg = str(info.value)
    assert "line 5: step 1" in msg and "'produce' failed" in msg
    assert "Did you mean 'orders'?" in msg


def test_unknown_builtin_scenario_suggests():
    with pytest.raises(ScenarioError, match="Did you mean 'seed-high-watermark'"):
        Scenario.named("seed-high-watermrk")


# ============================================================================ CLI


def test_cli_run_bad_file_exits_2_with_message_on_stderr(tmp_path, capsys):
    path = _load(tmp_path, '[[steps]]\ndo = "produse"\ntopic = "t"\n')
    rc = cli.main(["run", str(path)])
    out, err = capsys.readouterr()
    assert rc == 2
    assert out == ""
    assert err.startswith("kafkasim: ")
    assert str(path) in err and "unknown action 'produse'" in err and "'produce'" in err


def test_cli_run_malformed_toml_exits_2(tmp_path, capsys):
    path = _load(tmp_path, "steps = [\n")
    assert cli.main(["run", str(path)]) == 2
    err = capsys.readouterr().err
    assert "invalid TOML" in err and str(path) in err


def test_cli_run_unknown_scenario_name_exits_2(capsys):
    assert cli.main(["run", "no-such-scenario-anywhere"]) == 2
    assert "No built-in scenario 'no-such-scenario-anywhere'" in capsys.readouterr().err


def test_cli_versions_unknown_exits_2(capsys):
    assert cli.main(["versions", "banana"]) == 2
    assert "banana" in capsys.readouterr().err
