"""Issue 31, scenario files and the CLI: nothing passes silently. Every ``expect`` / ``await``
condition compares something, error names are Kafka's, every node a filter, a fault or a
condition names exists in the scenario (one check, ``kafkasim.core.match.check_node``, serves
scenario files and the Python API), misleading errors name what is wrong, and the shipped
scenarios hold for seeds 0-19 or pin the seed they are about. Each test failed before the fix."""

from __future__ import annotations

import pytest

from kafkasim.core.match import MatchError, check_count, check_node, checked_filter
from kafkasim.experiments import Sweep, SweepError
from kafkasim.scenarios.scenario import Scenario, ScenarioError, builtin_names
from kafkasim.tools.cli import main

ZK = """name = "x"
kafka_version = "2.8"
[cluster]
brokers = 3
[[topics]]
name = "t"
replication_factor = 3
[[clients]]
name = "p"
type = "producer"
config = { acks = "all" }
"""
KRAFT = ZK.replace('kafka_version = "2.8"', 'kafka_version = "4.1"')


def _steps(*steps: str, base: str = ZK) -> Scenario:
    text = base + "".join(f"[[steps]]\n{s}\n" for s in steps)
    return Scenario.loads(text, "x.toml")


def _expect(that: str, base: str = ZK) -> Scenario:
    return _steps(f"do = \"expect\"\nthat = {that}", base=base)


# -- 1. every condition compares something; error names are Kafka's ---------------------------

def test_empty_condition_is_refused():
    with pytest.raises(ScenarioError, match=r"step 1: that: an empty condition holds always"):
        _expect("{}")
    with pytest.raises(ScenarioError, match=r"step 1: until: an empty condition"):
        _steps('do = "await"\nuntil = {}')


@pytest.mark.parametrize("clause, allowed", [
    ("{ lost_acked = {} }", "at_least, at_most, equals"),
    ('{ hw = { topic = "t" } }', "at_least, at_most, equals"),
    ('{ isr = { topic = "t", partition = 0 } }', "equals, contains, excludes, size"),
    ('{ leader = { topic = "t" } }', "is, none"),
    ('{ acked = { producer = "p" } }', "at_least, at_most, equals"),
    ('{ log = { broker = 1, topic = "t" } }', "equals, contains, excludes"),
    ("{ controller = {} }", "is, not, none"),
])
def test_clause_without_comparison_is_refused(clause, allowed):
    with pytest.raises(ScenarioError, match=rf"has no comparison, so it would always hold: add "
                       rf"one of {allowed}"):
        _expect(clause)


def test_fenced_clause_forms():
    _expect("{ fenced = { broker = 1 } }", base=KRAFT)          # is = true by default
    with pytest.raises(ScenarioError, match="'is' needs the broker"):
        _expect("{ fenced = { is = true } }", base=KRAFT)
    with pytest.raises(ScenarioError, match="use two clauses"):
        _expect("{ fenced = { broker = 1, equals = [1] } }", base=KRAFT)


def test_error_name_must_be_kafkas():
    with pytest.raises(ScenarioError, match=r"failed.error: unknown error name "
                       r"'NOT_ENOUGH_REPLICA'; did you mean 'NOT_ENOUGH_REPLICAS'\?"):
        _expect('{ failed = { error = "NOT_ENOUGH_REPLICA", equals = 0 } }')
    _expect('{ failed = { error = "NOT_ENOUGH_REPLICAS", equals = 0 } }')
    _expect('{ failed = { error = "TimeoutException", equals = 0 } }')   # delivery.timeout.ms
    # and in a message filter's where clause, which would otherwise match nothing
    with pytest.raises(ScenarioError, match=r"ProduceResponse.error: unknown error name "
                       r"'NOT_LEADER'; did you mean 'NOT_LEADER_OR_FOLLOWER'\?"):
        _steps('do = "drop"\nmessages = { type = "ProduceResponse", where = { error = '
               '"NOT_LEADER" } }')
    with pytest.raises(ScenarioError, match=r"unknown error name 'NON'; did you mean 'NONE'"):
        _steps('do = "drop"\nmessages = { type = "ProduceResponse", where = { error = '
               '{ in = ["NON"] } } }')
    _steps('do = "drop"\nmessages = { type = "ProduceResponse", where = { error = '
           '{ ne = "NONE" } } }')


def test_leader_none_false_means_a_leader():
    run = _expect('{ leader = { topic = "t", none = false } }').run()
    assert run.passed
    base = ZK + '[[topics]]\nname = "u"\nassignment = [[3]]\n'
    run = _steps('do = "shutdown"\nbroker = 3', 'do = "run"\nms = 1000',
                 'do = "expect"\nthat = { leader = { topic = "u", none = false } }',
                 'do = "expect"\nthat = { leader = { topic = "u", none = true } }',
                 base=base).run()
    assert [e["ok"] for e in run.expectations] == [False, True]


# -- 2. nodes that exist ----------------------------------------------------------------------

@pytest.mark.parametrize("flt, msg", [
    ('{ to = "zookeper" }', r"unknown node 'zookeper' in message filter 'to' \(dst\); did you "
                            r"mean 'zookeeper'\?"),
    ("{ to = 99 }", r"unknown node 99 in message filter 'to' \(dst\) \(nodes: 1, 2, 3, "
                    r"'zookeeper', 'p'\)"),
    ('{ from = "broker-1" }', r"unknown node 'broker-1' in message filter 'from' \(src\)"),
])
def test_filter_naming_no_node_is_refused(flt, msg):
    with pytest.raises(ScenarioError, match=rf"x.toml: line \d+: step 1: messages filter: {msg}"):
        _steps(f'do = "hold"\nmessages = {flt}')


def test_filter_nodes_per_mode():
    _steps('do = "hold"\nmessages = { to = "zookeeper" }')
    _steps('do = "hold"\nmessages = { from = "p", to = 1 }')                 # a client
    _steps('do = "drop"\nmessages = { to = 3000 }', base=KRAFT)              # a controller
    with pytest.raises(ScenarioError, match="unknown node 'zookeeper'"):
        _steps('do = "drop"\nmessages = { to = "zookeeper" }', base=KRAFT)
    with pytest.raises(ScenarioError, match="unknown node 3000"):
        _steps('do = "drop"\nmessages = { to = 3000 }')
    # the producer a produce step creates without naming one
    _steps('do = "produce"\ntopic = "t"\nacks = 1',
           'do = "delay"\nms = 5\nmessages = { from = "producer-acks-1" }')


def test_faults_and_conditions_name_existing_nodes():
    with pytest.raises(ScenarioError, match=r"cut \[1, 1\] joins a node to itself"):
        _steps('do = "partition"\ncut = [[1, 1]]')
    with pytest.raises(ScenarioError, match="unknown node 'zookeper' in cut; did you mean"):
        _steps('do = "partition"\ncut = [[1, "zookeper"]]')
    with pytest.raises(ScenarioError, match="unknown node 7 in partition groups"):
        _steps('do = "partition"\ngroups = [[1], [2, 7]]')
    with pytest.raises(ScenarioError, match="node 2 is in two partition groups"):
        _steps('do = "partition"\ngroups = [[1, 2], [2, 3]]')
    for step in ('groups = [[1, 2, 3]]', "groups = []", "cut = []", ""):
        with pytest.raises(ScenarioError, match="cut.* nothing"):
            _steps(f'do = "partition"\n{step}')
    _steps('do = "partition"\ngroups = [[1], [2, 3, "zookeeper"]]')
    with pytest.raises(ScenarioError, match="unknown node 9 in 'crash' broker"):
        _steps('do = "crash"\nbroker = 9')
    _steps('do = "crash"\nbroker = 3001', base=KRAFT)
    with pytest.raises(ScenarioError, match="unknown node 4 in condition 'isr' excludes"):
        _expect('{ isr = { topic = "t", excludes = 4 } }')
    with pytest.raises(ScenarioError, match="unknown node 9 in condition 'hw' broker"):
        _expect('{ hw = { topic = "t", broker = 9, equals = 0 } }')
    with pytest.raises(ScenarioError, match="unknown node 1 in condition 'controller' is"):
        _expect("{ controller = { is = 1 } }", base=KRAFT)   # KRaft: a controller node id
    _expect("{ controller = { is = 3000 } }", base=KRAFT)


def test_one_node_check_for_the_python_api():
    nodes = [1, 2, 3, "zookeeper", "p"]
    check_node("zookeeper", nodes, "hold")
    with pytest.raises(MatchError, match=r"unknown node 'zookeper' in hold; did you mean "
                       r"'zookeeper'\?"):
        check_node("zookeper", nodes, "hold")
    with pytest.raises(MatchError, match="unknown node True"):
        check_node(True, nodes, "hold")   # True == 1, but a bool is no node id
    with pytest.raises(MatchError, match="unknown node 99"):
        checked_filter("FetchResponse", dst=99, nodes=nodes)
    for bad in (0, -5, 1.5, True):
        with pytest.raises(MatchError, match="count must be -1"):
            check_count(bad)
    flt = checked_filter("FetchResponse", src=1, dst=2, count=3, nodes=nodes)
    assert (flt.type, flt.src, flt.dst, flt.count) == ("FetchResponse", 1, 2, 3)


# -- 3. errors that named the wrong thing, tracebacks, exit codes -----------------------------

def test_unknown_producer_is_named():
    with pytest.raises(ScenarioError, match=r"step 1: condition 'acked' names producer 'pp', "
                       r"which this scenario does not have; did you mean 'p'\? \(producers: p"):
        _expect('{ acked = { producer = "pp", equals = 0 } }')
    with pytest.raises(ScenarioError, match=r"'produce' step names producer 'q'"):
        _steps('do = "produce"\ntopic = "t"\nproducer = "q"')
    with pytest.raises(ScenarioError, match=r"condition 'consumed' names consumer 'c'"):
        _expect('{ consumed = { consumer = "c", equals = 0 } }')


def test_byte_order_mark_is_read(tmp_path):
    f = tmp_path / "bom.toml"
    f.write_bytes(b"\xef\xbb\xbf" + ZK.encode())
    assert Scenario.load(f).data["cluster"]["brokers"] == 3
    assert Scenario.loads("\ufeff" + ZK).data["name"] == "x"
    s = tmp_path / "bom-sweep.toml"
    s.write_bytes(b"\xef\xbb\xbf[base]\nduration_ms = 1000\n")
    assert Sweep.load(s).base["duration_ms"] == 1000


def test_acks_with_a_no_break_space_is_refused():
    sc = Scenario.loads(ZK.replace('acks = "all"', 'acks = "1\\u00a0"'), "x.toml")
    with pytest.raises(ScenarioError, match="client 'p': Invalid value .* for configuration acks"):
        sc.run()
    for acks in ('"1\\u00a0"', "1.0"):   # a produce step's acks: at load
        with pytest.raises(ScenarioError, match=r"step 1: acks must be one of 'all', -1, 0, 1"):
            _steps(f'do = "produce"\ntopic = "t"\nacks = {acks}')
    # Java's String.trim (ConfigDef) strips ASCII blanks only
    Scenario.loads(ZK.replace('acks = "all"', 'acks = " 1\\t"'), "x.toml").run()


def test_racks_key_that_is_no_broker_id():
    for racks in ("{ x = 'a' }", "{ 9 = 'a' }"):
        with pytest.raises(ScenarioError, match=r"line 5: cluster.racks: key '.' is not a broker "
                           r"id of this cluster .*brokers: \[1, 2, 3\]"):
            Scenario.loads(ZK.replace("brokers = 3", f"brokers = 3\nracks = {racks}"), "x.toml")
    with pytest.raises(ScenarioError, match="cluster.racks.1 must be a rack name"):
        Scenario.loads(ZK.replace("brokers = 3", "brokers = 3\nracks = { 1 = 2 }"), "x.toml")


DEEP = "a = " + "[" * 500 + "]" * 500 + "\n"


def test_deeply_nested_toml_is_a_parse_error():
    with pytest.raises(ScenarioError, match="invalid TOML: arrays or inline tables nested too "
                       "deeply"):
        Scenario.loads(DEEP, "deep.toml")
    with pytest.raises(SweepError, match="nested too deeply"):
        Sweep.loads(DEEP, "deep.toml")


def test_empty_sweep_is_refused():
    for text in ("", "# nothing\n", 'name = "n"\ndescription = "d"\n'):
        with pytest.raises(SweepError, match="says nothing to run"):
            Sweep.loads(text, "s.toml")


@pytest.mark.parametrize("text", [
    DEEP, "", "\ufeff[base]\nnot toml", '[cluster]\nracks = { x = "a" }\n',
    '[[steps]]\ndo = "expect"\nthat = {}\n',
    '[[steps]]\ndo = "hold"\nmessages = { to = "zookeper" }\n'])
def test_cli_exit_2_without_traceback(tmp_path, capsys, text):
    f = tmp_path / "in.toml"
    f.write_text(text, encoding="utf-8")
    if text:   # an empty scenario file is a valid (empty) scenario
        assert main(["run", str(f)]) == 2
        assert capsys.readouterr().err.startswith("kafkasim: ")
    assert main(["sweep", "--serial", str(f)]) == 2
    assert capsys.readouterr().err.startswith("kafkasim: ")


# -- 4. shipped scenarios: every seed, or the seed they pin ----------------------------------

def test_pinned_scenario_refuses_another_seed(capsys):
    sc = Scenario.named("kraft-controller-failover")
    assert sc.data["pin_seed"] is True
    with pytest.raises(ScenarioError, match="runs with seed 4 only"):
        sc.run(seed=1)
    assert main(["run", "kraft-controller-failover", "--seed", "1"]) == 2
    assert "pin_seed = true" in capsys.readouterr().err
    assert main(["run", "seed-high-watermark", "--seed", str(2 ** 63)]) == 2
    assert "--seed 9223372036854775808: must be an integer from" in capsys.readouterr().err
    with pytest.raises(ScenarioError, match="pin_seed = true needs the seed"):
        Scenario.loads("pin_seed = true\n" + ZK)


@pytest.mark.parametrize("name", ["kip101-scenario2-old", "kip101-scenario2-fixed"])
def test_kip101_scenario2_restarts_with_any_seed(name):
    for seed in (1, 5, 17):   # NodeExists at start before: the session had not expired yet
        assert Scenario.named(name).run(seed=seed).passed


def _seeds(name: str) -> list[int | None]:
    sc = Scenario.named(name)
    return [None] if sc.data.get("pin_seed") else list(range(20))


@pytest.mark.slow
@pytest.mark.parametrize("name", builtin_names())
def test_shipped_scenario_holds_for_seeds_0_to_19(name):
    failed = []
    for seed in _seeds(name):
        run = Scenario.named(name).run(seed=seed)
        failed += [(seed, e["step"], e["label"]) for e in run.expectations if not e["ok"]]
    assert not failed, f"{name}: failing expectations (seed, step, label): {failed}"


@pytest.mark.parametrize("call, words", [
    (lambda c: c.hold("FetchResponse", src="zookeper"),
     ["hold:", "unknown node 'zookeper'", "did you mean 'zookeeper'?"]),
    (lambda c: c.hold("FetchResponse", dst=99), ["hold:", "unknown node 99"]),
    (lambda c: c.hold("FetchResponse", count=-5), ["hold:", "count must be -1", "-5"]),
    (lambda c: c.hold("FetchResponse", count=0), ["hold:", "count must be -1", "got 0"]),
    (lambda c: c.transport.drop("ProduceRequest", src="broker-1"),
     ["drop:", "unknown node 'broker-1'"]),
    (lambda c: c.delay(50, "FetchRequest", dst=7), ["delay:", "unknown node 7"]),
    (lambda c: c.release("FetchResponse", src="zookeper"), ["release:", "zookeper"]),
])
def test_cluster_message_filters_name_known_nodes(call, words):
    """Cluster.hold / Transport.drop / delay / release refuse a filter that could match
    nothing (an unknown node, a count of 0 or below -1) with a ClusterError, and leave the
    network's filters as they were."""
    from kafkasim.runtime.cluster import Cluster, ClusterError
    c = Cluster(brokers=3, kafka_version="3.9", metadata_mode="zookeeper")
    c.create_topic("t", replication_factor=3)
    c.hold("FetchRequest", src=2)           # one filter already in place
    net = c.transport.network
    before = (list(net.holds), list(net.drops), list(net.delays))
    with pytest.raises(ClusterError) as info:
        call(c)
    for w in words:
        assert w in str(info.value), (w, str(info.value))
    assert (list(net.holds), list(net.drops), list(net.delays)) == before
