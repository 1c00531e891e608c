"""Issue 16: bad input never passes silently. Each case below reproduced a traceback, a hang or a
silent acceptance before the fix; now each is a clean error naming file, line, key and what is
allowed, or (where Kafka itself accepts the value) Kafka's behaviour."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkasim.runtime.cluster import Cluster, ClusterError
from kafkasim.runtime.engine import Engine, EventLimitExceeded
from kafkasim.scenarios.scenario import Scenario, ScenarioError
from kafkasim.settings import limits
from kafkasim.settings.config import ConfigError, broker_config

BASE = (Path(__file__).parent.parent / "kafkasim" / "scenarios" /
        "seed-high-watermark.toml").read_text(encoding="utf-8")


def _sc(text: str) -> Scenario:
    return Scenario.loads(text, "x.toml")


def _sub(old: str, new: str) -> str:
    assert old in BASE
    return BASE.replace(old, new, 1)


# -- the scenario schema -------------------------------------------------------------------

def test_misspelled_message_type_names_the_known_one():
    with pytest.raises(ScenarioError, match=r"x.toml: line \d+: step 3: .*unknown message type "
                       r"'FetchResponce'; did you mean 'FetchResponse'\?"):
        _sc(_sub('type = "FetchResponse"', 'type = "FetchResponce"'))


def test_misspelled_comparison_key_is_refused_not_always_true():
    text = _sub("broker = 2, equals = 8 } }", "broker = 2, equal = 999 } }")
    with pytest.raises(ScenarioError, match=r"line 42: step 5: leo.equal: unknown comparison .*"
                       r"did you mean 'equals'\?"):
        _sc(text)


@pytest.mark.parametrize("old,new,match", [
    ('do = "settle"', 'do = "settle"\nafter_ms = -5', r"after_ms must be at least 0 ms, got -5"),
    ('do = "settle"', 'do = "settle"\nat_ms = 1e9', r"at_ms must be integer milliseconds"),
    ("ms = 200", "ms = inf", r"step 8: ms must be integer milliseconds, got inf"),
    ("ms = 200", "ms = nan", r"ms must be integer milliseconds, got nan"),
    ("ms = 200", "ms = 200.5", r"ms must be integer milliseconds, got 200.5"),
    ("ms = 200", "ms = 86400001", r"ms must be at most 86400000 ms"),
    ('values = ["m8", "m9"]', "count = 100000000000", r"count must be at most 1000000"),
    ("brokers = 3", "brokers = 100000", r"line 11: cluster.brokers must be at most 100"),
    ("assignment = [[1, 2, 3]]", "assignment = [[]]",
     r"line 17: topics.assignment: entry 0: must have between 1 and 100 entries"),
    ("partitions = 1", "partitions = 100000000", r"topics.partitions must be at most"),
    ('type = "producer"', 'type = "producr"',
     r"clients.type must be one of 'producer', 'consumer', got 'producr'; did you mean"),
    ("seed = 1", "seed = 1.5", r"line 6: seed must be an integer"),
    ('kafka_version = "3.7"', 'kafka_version = "99.9"',
     r"line 8: Unknown Kafka version '99.9': .* 0.8.2, .* 4.3"),
])
def test_bad_values_refused_at_load(old, new, match):
    with pytest.raises(ScenarioError, match=match):
        _sc(_sub(old, new))


def test_rate_times_duration_beyond_the_record_limit():
    text = _sub('values = ["m8", "m9"]', "rate = 100000\nduration_ms = 86400000")
    with pytest.raises(ScenarioError, match="more than limits.MAX_RECORDS"):
        _sc(text)


def test_condition_values_typed():
    with pytest.raises(ScenarioError, match=r"leo.equals must be an integer"):
        _sc(_sub("broker = 2, equals = 8 } }", 'broker = 2, equals = "8" } }'))
    with pytest.raises(ScenarioError, match=r"broker.state must be one of .*'running'"):
        _sc(_sub('do = "settle"', 'do = "await"\nuntil = { broker = { id = 1, state = "up" } }'))


@pytest.mark.parametrize("name", [".", "..", "", "a" * 250, "bad name", "t/1"])
def test_illegal_topic_names_refused_as_kafka_topic_validate(name):
    text = BASE.replace('"hw-demo"', f'"{name}"')
    with pytest.raises(ScenarioError, match=r"x.toml: line 14: topics.name: Topic name is "
                                            r"invalid"):
        _sc(text)
    with pytest.raises(ClusterError, match="Topic name is invalid"):
        Cluster(1, kafka_version="3.7").create_topic(name)


def test_legal_topic_name_of_249_characters():
    c = Cluster(1, kafka_version="3.7")
    c.create_topic("a" * 249, 1, 1)
    assert "a" * 249 in c.topics.names()


@pytest.mark.parametrize("cut,match", [("[[1, 99]]", "unknown node 99 in cut"),
                                       ("[[1, 1]]", r"joins a node to itself")])
def test_cut_to_unknown_or_same_node_refused(cut, match):
    text = _sub('do = "settle"', f'do = "settle"\n[[steps]]\ndo = "partition"\ncut = {cut}')
    with pytest.raises(ScenarioError, match=match):
        _sc(text)   # at load (issue 31), not when the step runs
    c = Cluster(3, kafka_version="3.7")
    with pytest.raises(ClusterError):
        c.cut(1, 99)
    with pytest.raises(ClusterError):
        c.cut(2, 2)
    c.cut(1, "zookeeper")   # a known network node


def test_invalid_utf8_and_directory_are_scenario_errors(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_bytes(b'name = "ok"\nseed = 1\ndescription = "\xff"\n')
    with pytest.raises(ScenarioError, match=r"bad.toml: line 3: not UTF-8 text"):
        Scenario.load(bad)
    d = tmp_path / "dir.toml"
    d.mkdir()
    with pytest.raises(ScenarioError, match=r"dir.toml: cannot read scenario file"):
        Scenario.load(d)


def test_shipped_scenarios_stay_valid():
    from kafkasim.scenarios.scenario import builtin_names

    for name in builtin_names():
        Scenario.named(name)


# -- configs by Kafka's rules ---------------------------------------------------------------

@pytest.mark.parametrize("key", ["replica.high.watermark.checkpoint.interval.ms",
                                 "log.flush.offset.checkpoint.interval.ms"])
def test_checkpoint_period_zero_runs_once_as_kafka_scheduler_does(key):
    """KafkaScheduler.schedule: a period <= 0 runs the task once (no repetition); this looped
    forever at t = 0 before."""
    c = Cluster(2, kafka_version="3.7", config={key: 0}, max_events=200_000)
    c.create_topic("t", 1, 2)
    start = c.now
    c.run(120_000)
    assert c.now == start + 120_000
    assert c.engine.events_processed < 10_000


@pytest.mark.parametrize("key,value", [("zookeeper.session.timeout.ms", 0),
                                       ("zookeeper.session.timeout.ms", -1),
                                       ("num.replica.fetchers", 0)])
def test_values_kafka_fails_on_at_runtime_are_refused(key, value):
    with pytest.raises(ConfigError, match=rf"Invalid value {value} for configuration {key}: "
                                          "must be at least 1"):
        broker_config({key: value}, "3.7")


def test_empty_replica_list_in_assignment_refused():
    c = Cluster(3, kafka_version="3.7")
    with pytest.raises(ClusterError, match="empty replica list"):
        c.create_topic("t", assignment=[[]])
    with pytest.raises(ClusterError, match="empty replica list"):
        c.create_topic("t", assignment=[[1], []])


# -- API arguments --------------------------------------------------------------------------

@pytest.mark.parametrize("ms", [1.5, float("inf"), -1, "10", limits.MAX_TIME_MS + 1])
def test_run_takes_integer_bounded_milliseconds(ms):
    c = Cluster(1, kafka_version="3.7")
    with pytest.raises(ClusterError, match="run"):
        c.run(ms)


def test_too_many_brokers_refused():
    with pytest.raises(ClusterError, match="limits.MAX_BROKERS"):
        Cluster(limits.MAX_BROKERS + 1)


# -- the event budget -----------------------------------------------------------------------

def test_engine_event_limit_names_the_limit_and_how_to_raise_it():
    e = Engine(1)

    def tick():
        e.schedule(0, "tick")   # a runaway zero-period timer

    e.on("tick", tick)
    e.schedule(0, "tick")
    e.max_events = 1000
    with pytest.raises(EventLimitExceeded, match=r"limit of 1000 events at t=0 ms .*"
                                                 r"max_events"):
        e.run(until=10)
    assert e.events_processed == 1000


def test_engine_caller_max_events_is_not_an_error():
    e = Engine(1)
    e.on("tick", lambda: e.schedule(1, "tick"))
    e.schedule(0, "tick")
    e.max_events = 100
    assert e.run(until=1000, max_events=10) == 10


def test_scenario_event_limit_is_a_scenario_error():
    sc = _sc(_sub("ms = 200", "ms = 86400000"))
    with pytest.raises(ScenarioError, match=r"line 54: step 8: the simulation processed its "
                                            r"limit of 20000 events"):
        sc.run(max_events=20_000)


# -- the command line -----------------------------------------------------------------------

def _cli(argv, capsys):
    from kafkasim.tools.cli import main

    rc = main(argv)
    out = capsys.readouterr()
    return rc, out.out, out.err


def test_out_to_a_missing_directory_refused_before_running(tmp_path, capsys):
    out = tmp_path / "no" / "such" / "dir" / "report.json"
    rc, stdout, err = _cli(["run", "seed-high-watermark", "--out", str(out)], capsys)
    assert rc == 2 and "does not exist" in err and stdout == ""
    rc, stdout, err = _cli(["sweep", "nothing.toml", "--serial", "--out", str(out)], capsys)
    assert rc == 2 and "does not exist" in err   # before the sweep file is even read


def test_out_to_a_directory_refused(tmp_path, capsys):
    rc, _, err = _cli(["run", "seed-high-watermark", "--out", str(tmp_path)], capsys)
    assert rc == 2 and "is a directory" in err


def test_check_true_violations_in_text_report_and_exit_code(tmp_path, capsys):
    src = (Path(__file__).parent.parent / "kafkasim" / "scenarios" /
           "kip101-scenario1-old.toml").read_text(encoding="utf-8")
    f = tmp_path / "kip101-checked.toml"
    f.write_text(src.replace("\nseed = 1\n", "\nseed = 1\ncheck = true\n", 1), encoding="utf-8")
    rc, stdout, _ = _cli(["run", str(f)], capsys)
    assert "Invariant violations: " in stdout and "WeakIsr" in stdout
    assert rc == 1
    rc, stdout, _ = _cli(["run", "kip101-scenario1-old"], capsys)   # check off: as before
    assert "Invariant violations" not in stdout


def test_missing_file_told_apart_from_unknown_builtin(capsys):
    rc, _, err = _cli(["run", "missing-dir/my-scenario.toml"], capsys)
    assert rc == 2 and "no such scenario file" in err and "No built-in" not in err
    rc, _, err = _cli(["run", "seed-high-watermak"], capsys)
    assert rc == 2 and "No built-in scenario 'seed-high-watermak'" in err
    assert "Did you mean 'seed-high-watermark'" in err


def test_versions_unknown_refused_with_the_known_list(capsys):
    rc, stdout, err = _cli(["versions", "99.9"], capsys)
    assert rc == 2 and stdout == ""
    assert "Unknown Kafka version '99.9'" in err and "3.7" in err and "4.3" in err
    rc, stdout, _ = _cli(["versions", "3.7.1"], capsys)   # a patch release: its line's profile
    assert rc == 0 and stdout


# -- sweep files ----------------------------------------------------------------------------

def _sweep(text: str):
    from kafkasim.experiments import Sweep

    return Sweep.loads(text, "s.toml")


def test_huge_seed_count_is_lazy_and_bounded():
    import time

    from kafkasim.experiments import SweepError

    t0 = time.process_time()
    sw = _sweep("seeds = 1000000\n[base]\nduration_ms = 1000\n")
    assert len(sw) == limits.MAX_RUNS and sw.seeds[-1] == 999_999
    assert time.process_time() - t0 < 1.0   # no list of a million seeds built
    with pytest.raises(SweepError, match="more than limits.MAX_RUNS"):
        _sweep("seeds = 1000000000000\n")
    with pytest.raises(SweepError, match="more than limits.MAX_RUNS"):
        _sweep("seeds = { start = 5, count = 10000000 }\n")
    assert _sweep("seeds = { start = 10, count = 3 }\n").seeds == [10, 11, 12]


@pytest.mark.parametrize("body,match", [
    ("[base]\nduration_ms = 1e9\n", "duration_ms must be an integer from 1 to 86400000"),
    ("[base]\nduration_ms = 100000000\n", "duration_ms must be an integer from 1 to"),
    ("[base.cluster]\nbrokers = 100000\n", "cluster.brokers must be an integer from 1 to 100"),
    ("[base.workload]\nrate = inf\n", "workload.rate must be a number > 0"),
    ("[base.workload]\nrate = 100000\n[base]\nduration_ms = 86400000\n",
     "more than limits.MAX_RECORDS"),
    ('[base]\nkafka_version = "99.9"\n', "Unknown Kafka version '99.9'"),
    ('[base.cluster]\ntopic = ".."\n', r"Topic name is invalid: '..' is not allowed"),
    ("[base.faults]\nrate_per_min = 1e300\n", "faults.rate_per_min must be a number from 0"),
])
def test_sweep_values_refused_before_running(body, match):
    from kafkasim.experiments import SweepError

    with pytest.raises(SweepError, match=match):
        _sweep(body).validate()


def test_sweep_file_invalid_utf8(tmp_path):
    from kafkasim.experiments import Sweep, SweepError

    f = tmp_path / "s.toml"
    f.write_bytes(b"name = 'x'\n\xfe\n")
    with pytest.raises(SweepError, match="line 2: not UTF-8"):
        Sweep.load(f)


@pytest.mark.parametrize("call", [
    lambda c: c.slow(1, network_ms=1.5), lambda c: c.slow(1, disk_ms=float("inf")),
    lambda c: c.slow(1, network_ms=limits.MAX_TIME_MS + 1), lambda c: c.delay(10**12),
    lambda c: c.pause(1, 0.5), lambda c: c.restart(1, wait_ms=-3),
    lambda c: c.run_until(lambda cl: False, float("inf")),
])
def test_api_calls_check_their_times(call):
    c = Cluster(3, kafka_version="3.7")
    with pytest.raises(ClusterError):
        call(c)


@pytest.mark.parametrize("version", ["4.9", "5.0", "3.10", "99.9"])
def test_a_version_of_no_modelled_release_line_is_refused_by_cluster(version):
    """Cluster refuses a version kafkasim does not model, as scenario and sweep files do, with
    the supported lines in the message (it used to run the newest profile at or below it)."""
    from kafkasim.settings.versions import SUPPORTED_VERSIONS, VersionError
    with pytest.raises(VersionError) as info:
        Cluster(brokers=3, kafka_version=version)
    assert repr(version) in str(info.value)
    assert ", ".join(SUPPORTED_VERSIONS) in str(info.value)


@pytest.mark.parametrize(("version", "profile"), [("4.3.1", "4.3"), ("3.7.2", "3.7"),
                                                   ("0.8.2.2", "0.8.2"), ("2.0.1", "2.0.1")])
def test_a_patch_release_runs_its_line(version, profile):
    assert Cluster(brokers=3, kafka_version=version).kafka_version == profile


@pytest.mark.parametrize(("kwargs", "words"), [
    ({"latency_ms": 0.5}, ["Cluster(latency_ms)", "whole number", "got 0.5"]),
    ({"latency_ms": float("inf")}, ["Cluster(latency_ms)", "got inf"]),
    ({"jitter_ms": -1}, ["Cluster(jitter_ms)", "from 0 to 86,400,000"]),
    ({"metrics_interval_ms": 0}, ["Cluster(metrics_interval_ms)", "from 1 to"]),
])
def test_cluster_timing_arguments_are_checked_before_the_cluster_is_built(kwargs, words):
    with pytest.raises(ClusterError) as info:
        Cluster(brokers=3, **kwargs)
    for w in words:
        assert w in str(info.value)


def test_create_topic_names_bad_counts_and_enforces_the_partition_limit_before_any_work():
    c = Cluster(brokers=3)
    with pytest.raises(ClusterError, match=r"partitions must be a whole number .* '3' \(str\)"):
        c.create_topic("t", partitions="3")
    with pytest.raises(ClusterError, match=r"replication_factor must be a whole number"):
        c.create_topic("t", partitions=3, replication_factor=2.0)
    with pytest.raises(ClusterError, match=r"20,000 partitions .* over limits.MAX_PARTITIONS"):
        c.create_topic("t", partitions=20_000, replication_factor=1)
    c.create_topic("a", partitions=6_000, replication_factor=1, wait=False)
    with pytest.raises(ClusterError, match=r"bring the cluster to 12,000, .* already holds 6,000"):
        c.create_topic("b", partitions=6_000, replication_factor=1, wait=False)
    assert c.topics.names() == ["a"]          # the refused calls created nothing


def test_a_partition_that_is_not_an_int_is_named_as_such():
    c = Cluster(brokers=3)
    c.create_topic("x")
    with pytest.raises(ClusterError, match=r"partition must be a partition index .* '0' \(str\)"):
        c.producer().send("x", "v", partition="0")


def test_restart_with_a_negative_wait_leaves_the_broker_as_it_was():
    c = Cluster(brokers=3)
    c.create_topic("x", replication_factor=3)
    with pytest.raises(ClusterError, match=r"restart\(wait_ms\)"):
        c.restart(1, wait_ms=-5)
    assert c.brokers[1].state == "running"   # not crashed by a call that failed


def test_power_loss_of_a_kraft_controller_says_what_to_do():
    c = Cluster(brokers=3)
    with pytest.raises(ClusterError, match=r"3000 is a KRaft controller node.*crash\(3000\)"):
        c.power_loss(3000)


# -- issue 31, second pass: keys that contradict each other -----------------------------------

@pytest.mark.parametrize("old,new,match", [
    ('do = "settle"', 'do = "settle"\nat_ms = 5\nafter_ms = 5',
     r"step \d+: 'settle' step gives both at_ms and after_ms: give one of at_ms, after_ms"),
    ('values = ["m8", "m9"]', 'values = ["m8", "m9"]\ncount = 5',
     r"'produce' step gives both values and count"),
    ('values = ["m8", "m9"]', "rate = 10\nduration_ms = 1000\nsegments = [[0, 100, 5]]",
     r"'produce' step gives both rate and segments"),
    ("brokers = 3", "brokers = 3\nbroker_ids = [4, 5, 6]",
     r"\[cluster\] gives both brokers and broker_ids"),
    ("partitions = 1", "partitions = 2",
     r"line \d+: topics 'hw-demo': partitions=2 contradicts the replica assignment, which "
     r"gives 1"),
])
def test_keys_that_contradict_each_other_are_refused_at_load(old, new, match):
    """Each loaded and silently ran with one of the two (values over count, broker_ids over
    brokers, the assignment over partitions, at_ms over after_ms)."""
    with pytest.raises(ScenarioError, match=match):
        _sc(_sub(old, new))


@pytest.mark.parametrize("body,match", [
    ('[grid]\n"producer.acks" = ["1", "1"]\n',
     r"\[grid\]: 'producer.acks' lists '1' more than once; the values of a parameter must be "
     r"distinct"),
    ('name = 5\n[base]\nduration_ms = 1000\n', r"s.toml: name must be a string, got 5"),
    ('description = [1]\n[base]\nduration_ms = 1000\n', r"description must be a string"),
])
def test_sweep_grid_values_and_names_checked(body, match):
    """A repeated grid value ran every combination twice (and counted it twice in the
    summary); a name that is not a string was turned into one."""
    from kafkasim.experiments import SweepError

    with pytest.raises(SweepError, match=match):
        _sweep(body).validate()


def test_an_empty_target_or_version_is_named(capsys):
    """`kafkasim run ''` said '.: cannot read scenario file: Is a directory'; `kafkasim
    versions ''` listed every version as if no argument had been given."""
    rc, _, err = _cli(["run", ""], capsys)
    assert rc == 2 and "'': give a scenario file or the name of a built-in scenario" in err
    rc, stdout, err = _cli(["versions", ""], capsys)
    assert rc == 2 and stdout == "" and "Invalid Kafka version ''" in err


def test_run_takes_an_event_budget(capsys):
    """`kafkasim run --max-events N`: a long simulated run (a 17-hour 'run' step found by the
    command-line fuzz, seed 20261205 case 1165) stops at the budget with exit 2 naming it,
    as Scenario.run(max_events=...) does; 0 is refused before anything runs."""
    rc, _, err = _cli(["run", "seed-high-watermark", "--max-events", "50"], capsys)
    assert rc == 2 and "processed its limit of 50 events" in err
    rc, stdout, err = _cli(["run", "seed-high-watermark", "--max-events", "0"], capsys)
    assert rc == 2 and stdout == "" and "--max-events 0: must be a whole number of events" in err
    rc, _, _ = _cli(["run", "seed-high-watermark", "--max-events", "100000"], capsys)
    assert rc == 0


@pytest.mark.parametrize("what", ["hold", "drop", "delay", "release"])
def test_a_message_filter_from_a_node_to_itself_is_refused_in_kraft_mode(what):
    """No node of a KRaft cluster sends itself a message, so ``hold(src=1, dst=1)`` would match
    nothing: refused, naming both arguments; nothing is held."""
    c = Cluster(brokers=3, seed=1, kafka_version="4.1")
    call = {"hold": c.hold, "drop": c.transport.drop, "release": c.release,
            "delay": lambda **kw: c.delay(5, **kw)}[what]
    with pytest.raises(ClusterError, match=r"'from' \(src\) and 'to' \(dst\) are both 1"):
        call(src=1, dst=1)
    assert not c.transport.network.holds and not c.transport.network.drops
    assert not c.transport.network.delays


def test_a_zookeeper_controller_holds_its_own_leader_and_isr():
    """In ZooKeeper mode the controller sends its own broker LeaderAndIsr over the network, so
    ``hold(src=1, dst=1)`` is accepted there and holds those requests."""
    c = Cluster(brokers=3, seed=1, kafka_version="2.8")
    c.run(5000)
    controller = next(b.id for b in c.brokers.values() if b.controller)
    c.hold(src=controller, dst=controller)
    c.create_topic("t", 1, 3)
    c.run(2000)
    held = [r for r in c.trace.rows if r[1] == "hold" and r[2] == controller]
    assert held and held[0][5][1] == controller


@pytest.mark.parametrize("call, words", [
    (lambda c: c.create_topic("t", 1, 3, replication=3),
     "Cluster.create_topic() got an unexpected keyword argument 'replication' (it takes: "
     "name, partitions, replication_factor, assignment, config, wait); "
     "did you mean 'replication_factor'?"),
    (lambda c: c.run(msec=10), "Cluster.run() got an unexpected keyword argument 'msec' "
     "(it takes: ms, check); did you mean 'ms'?"),
    (lambda c: c.hold(tpye="FetchRequest"), "did you mean 'type'?"),
])
def test_an_unknown_keyword_to_a_cluster_method_names_the_closest_one(call, words):
    c = Cluster(brokers=3, seed=1)
    with pytest.raises(ClusterError) as info:   # and a TypeError, as Python's own
        call(c)
    assert isinstance(info.value, TypeError)
    assert words in str(info.value) and "(it takes: " in str(info.value)
    assert not c.topics.partition_counts


def test_an_unknown_keyword_to_a_player_method_names_the_closest_one():
    from kafkasim.widgets.player import Player
    player = Player(Cluster(brokers=3, seed=1))
    with pytest.raises(TypeError, match=r"Player.pause_broker\(\) got an unexpected keyword "
                                        r"argument 'ms_' \(it takes: broker, ms\); did you "
                                        r"mean 'ms'\?"):
        player.pause_broker(1, ms_=100)
