"""KRaft scenario-format keys (metadata_mode, controllers, controller node ids in steps, ELR /
fencing / quorum conditions) and KRaft core behaviours the shipped KRaft scenarios rely on."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkasim.runtime.cluster import Cluster
from kafkasim.scenarios.scenario import Scenario, ScenarioError

SCHEMA = json.loads((Path(__file__).resolve().parent.parent / "kafkasim" / "scenarios"
                     / "report.schema.json").read_text())


def _sc(body: str, version: str = "4.1") -> Scenario:
    return Scenario.loads(f'seed = 1\nkafka_version = "{version}"\n' + body, "t.toml")


def test_controllers_key_is_kraft_only():
    with pytest.raises(ScenarioError, match="controllers applies to KRaft mode only"):
        _sc("[cluster]\nbrokers = 3\ncontrollers = 3\n", "3.9")


def test_unknown_metadata_mode_names_the_known_ones():
    with pytest.raises(ScenarioError, match=r"Did you mean 'kraft'\?"):
        _sc('[cluster]\nmetadata_mode = "kraftt"\n', "3.9")


def test_zookeeper_mode_refused_from_4_0():
    with pytest.raises(ScenarioError, match="Kafka 4.0 removed ZooKeeper mode"):
        _sc('[cluster]\nmetadata_mode = "zookeeper"\n', "4.0")


def test_cluster_key_typo_is_suggested():
    with pytest.raises(ScenarioError, match="did you mean 'controllers'"):
        _sc("[cluster]\ncontroller = 3\n")


def test_bad_controllers_value_is_a_scenario_error():
    # refused when the file is loaded (issue 16: checked before anything runs)
    with pytest.raises(ScenarioError, match=r"line 4: cluster.controllers must be at least 1"):
        _sc("[cluster]\ncontrollers = 0\n")


def test_expire_session_is_refused_in_kraft_naming_broker_fencing():
    with pytest.raises(ScenarioError, match="broker.session.timeout.ms"):
        _sc('[[steps]]\ndo = "expire_session"\nbroker = 1\n')


def test_kraft_conditions_refused_in_zookeeper_mode():
    for clause in ('elr = { topic = "t", equals = [] }', "fenced = { broker = 1 }",
                   "metadata_leader_epoch = { at_least = 1 }"):
        with pytest.raises(ScenarioError, match="needs KRaft mode"):
            _sc(f'[[steps]]\ndo = "expect"\nthat = {{ {clause} }}\n', "3.9")


def test_kraft_keys_run_and_report():
    """Controller node ids in crash/start steps; the fenced, elr, metadata_leader_epoch and
    controller clauses read the committed metadata image and the quorum."""
    sc = _sc('''
[cluster]
brokers = 3
metadata_mode = "kraft"
controllers = [3000, 3001, 3002]

[[topics]]
name = "t"
replication_factor = 3
assignment = [[1, 2, 3]]
config = { "min.insync.replicas" = 2 }

[[steps]]
do = "expect"
label = "up"
[steps.that]
controller = { none = false }
fenced = { equals = [] }
metadata_leader_epoch = { at_least = 1 }
elr = { topic = "t", equals = [] }
[[steps]]
do = "crash"
broker = 3
[[steps]]
do = "await"
until = { fenced = { broker = 3 } }
timeout_ms = 12000
[[steps]]
do = "crash"
broker = 2
[[steps]]
do = "await"
until = { isr = { topic = "t", equals = [1] } }
timeout_ms = 12000
[[steps]]
do = "expect"
label = "below min ISR: 2 in the ELR, 3 not"
[steps.that]
elr = { topic = "t", equals = [2] }
last_known_elr = { topic = "t", equals = [] }
fenced = { contains = [2, 3], excludes = [1] }
[[steps]]
do = "restart"
broker = 3001
down_ms = 500
[[steps]]
do = "expect"
that = { broker = { id = 3001, state = "running" } }
''')
    run = sc.run()
    assert run.passed, run.expectations
    rep = run.report()
    assert rep["metadata_mode"] == "kraft"
    assert rep["quorum"]["voters"] == [3000, 3001, 3002]
    assert rep["quorum"]["fenced_brokers"] == [2, 3]
    assert rep["partitions"][0]["elr"] == [2]
    jsonschema = pytest.importorskip("jsonschema")
    jsonschema.validate(rep, SCHEMA)


def test_power_loss_of_a_controller_is_refused():
    sc = _sc('[[steps]]\ndo = "power_loss"\nbroker = 3000\n')
    with pytest.raises(ScenarioError, match="use crash"):
        sc.run()


def test_active_controller_renounces_when_its_voters_are_gone():
    c = Cluster(3, kafka_version="4.1", seed=5)
    c.run(3000)
    active = c.controller_id()
    for node in sorted(set(c.kraft.nodes) - {active}):
        c.crash(node)
    c.run(10000)
    assert c.controller_id() == -1


@pytest.mark.parametrize("seed", [4, 5, 6, 7])
def test_controller_failover_does_not_fence_live_brokers(seed):
    """The brokers (observers of the metadata quorum) learn the new active controller from a
    voter within moments of its election, whatever voter their random discovery Fetch picks:
    their Fetch to the dead controller fails with its connection (KafkaNetworkChannel answers
    BROKER_NOT_AVAILABLE), so pollFollowerAsObserver asks another voter while the dead one's
    connection backs off (KafkaRaftClientTest.testObserverLeaderRediscoveryAfterBroker-
    NotAvailableError). Their heartbeats then reach the new controller well within
    broker.session.timeout.ms, so no live broker is fenced."""
    c = Cluster(3, kafka_version="4.1", seed=seed)
    c.run(3000)
    c.create_topic("t", 3, 3)
    c.run_to(9000)
    old = c.controller_id()
    c.crash(old)
    c.run(14000)
    new = c.controller_id()
    assert new >= 0 and new != old
    active = max(r[0] for r in c.trace.rows if r[1] == "controller_active" and r[2] == new)
    for b in (1, 2, 3):
        learnt = [r[0] for r in c.trace.rows if r[1] == "raft_transition" and r[2] == b
                  and r[0] >= 9000 and r[5].leader == new]
        assert learnt and learnt[0] <= active + 100, (b, active, learnt[:1])
    fenced = [row for row in c.trace.rows if row[1] == "broker_fenced"]
    assert fenced == []


def test_unclean_elections_counts_the_kraft_controllers_unclean_elections():
    """KRaft: with ISR [1] and broker 1 down, unclean.leader.election.enable lets the controller
    elect out-of-sync broker 3 with LeaderRecoveryState RECOVERING (PartitionChangeBuilder
    electAnyLeader; ReplicationControlManagerTest.testElectUncleanLeaders...); the acks=all write
    acknowledged while 3 was out of the ISR is lost (KIP-966's motivation for ELR)."""
    sc = _sc('''
[cluster]
brokers = 3

[[topics]]
name = "t"
replication_factor = 3
assignment = [[1, 2, 3]]
config = { "min.insync.replicas" = 2, "unclean.leader.election.enable" = true }

[[clients]]
name = "p"
type = "producer"
config = { acks = "all" }

[[steps]]
do = "crash"
broker = 3
[[steps]]
do = "await"
until = { isr = { topic = "t", equals = [1, 2] } }
timeout_ms = 12000
[[steps]]
do = "produce"
producer = "p"
topic = "t"
values = ["committed-without-3"]
wait = true
[[steps]]
do = "crash"
broker = 2
[[steps]]
do = "crash"
broker = 1
[[steps]]
do = "await"
until = { leader = { topic = "t", none = true } }
timeout_ms = 12000
[[steps]]
do = "start"
broker = 3
[[steps]]
do = "await"
until = { leader = { topic = "t", is = 3 } }
timeout_ms = 12000
[[steps]]
do = "run"
ms = 2000
[[steps]]
do = "expect"
[steps.that]
unclean_elections = { equals = 1 }
acked = { equals = 1 }
lost_acked = { equals = 1 }
''', "4.0")
    run = sc.run()
    assert run.passed, run.expectations


def test_create_topic_without_a_quorum_names_the_majority_rule():
    sc = _sc('''
[cluster]
controllers = 3
[[steps]]
do = "crash"
broker = 3000
[[steps]]
do = "crash"
broker = 3001
[[steps]]
do = "crash"
broker = 3002
[[steps]]
do = "create_topic"
name = "late"
''')
    with pytest.raises(ScenarioError, match="no active controller.*Raft needs 2"):
        sc.run()


def test_create_topic_step_with_a_quorum():
    sc = _sc('''
[[steps]]
do = "create_topic"
name = "late"
partitions = 2
replication_factor = 3
[[steps]]
do = "expect"
that = { isr = { topic = "late", partition = 1, size = 3 }, controller = { none = false } }
''')
    run = sc.run()
    assert run.passed, run.expectations


_ISOLATE = '''
[cluster]
controllers = 3
[[topics]]
name = "t"
replication_factor = 3
[[steps]]
do = "expect"
that = {{ controller = {{ is = 3000 }} }}
[[steps]]
do = "partition"
groups = [[{alone}], [{rest}]]
[[steps]]
do = "run"
ms = 15000
[[steps]]
do = "expect"
that = {{ controller = {{ none = false }}, fenced = {{ equals = [] }} }}
[[steps]]
do = "create_topic"
name = "after"
'''


def test_partition_groups_accept_controller_ids():
    """A standby controller cut off from everyone: the other two voters are a majority, so the
    active controller (3000 with seed 1) keeps committing metadata."""
    sc = _sc(_ISOLATE.format(alone=3001, rest="1, 2, 3, 3000, 3002"))
    run = sc.run()
    assert run.passed, run.expectations
    assert run.cluster.controller_id() == 3000
    assert "after" in run.cluster.topics.names()


def test_isolated_active_controller_is_replaced():
    sc = _sc(_ISOLATE.format(alone=3000, rest="1, 2, 3, 3001, 3002"))
    run = sc.run()   # today: SimulationError (NotLeaderError) at the first no-op write
    assert run.cluster.controller_id() in (3001, 3002)
    assert "after" in run.cluster.topics.names()
