"""Issue 31, "Nothing passes silently", the Python API: every argument error names the call, the
argument, the value and what is allowed (with a did-you-mean where a name is close), raises the
façade's ClusterError (never a TypeError / AttributeError from inside the simulator, never a
silent no-op) and leaves the cluster as it was. Each case below failed before
kafkasim/runtime/validation.py: it raised an internal error, passed silently, or named the
wrong thing."""

from __future__ import annotations

import pytest

from kafkasim.observe import snapshots
from kafkasim.runtime.cluster import Cluster, ClusterError


@pytest.fixture(scope="module")
def zk():
    c = Cluster(3, seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 3)
    return c


@pytest.fixture(scope="module")
def kraft():
    c = Cluster(3, seed=1, kafka_version="4.3")
    c.create_topic("t", 1, 3)
    return c


@pytest.mark.parametrize("kwargs,match", [
    ({"seed": "a"}, r"Cluster\(seed\) must be a whole number \(a Java long, from -9223"),
    ({"seed": 1.5}, r"Cluster\(seed\) .* got 1.5 \(float\)"),
    ({"seed": 2**63}, r"Cluster\(seed\) .* to 9223372036854775807\), got 9223372036854775808"),
    ({"racks": ["a"]}, r"Cluster\(racks\) must be a dict or None, got \['a'\] \(list\)"),
    ({"racks": {1: 5}}, r"broker 1's rack must be a non-empty string \(broker.rack\), got 5"),
    ({"config": [("min.insync.replicas", 2)]}, r"Cluster\(config\) must be a dict or None"),
    ({"config": {2: 1}}, r"config keys are Kafka's names as strings"),
    ({"rules": ["hw"]}, r"Cluster\(rules\) must be a dict or None"),
    ({"max_events": -1}, r"Cluster\(max_events\) must be None \(no limit\) or a whole number "
                         r"of events from 1 \(default 50,000,000\), got -1"),
    ({"max_events": "x"}, r"Cluster\(max_events\) .* got 'x'"),
    ({"trace_messages": "no"}, r"Cluster\(trace_messages\) must be True or False, got 'no'"),
    ({"per_partition_metrics": 1}, r"Cluster\(per_partition_metrics\) must be True or False"),
    ({"log_dirs": 5}, r"Cluster\(log_dirs\) must be None or a directory path, got 5 \(int\)"),
])
def test_cluster_arguments_named(kwargs, match):
    with pytest.raises(ClusterError, match=match):
        Cluster(3, **kwargs)


@pytest.mark.parametrize("call,match", [
    (lambda c: c.crash(True), r"crash\(broker\): a broker or controller node id is an int, "
                              r"got True \(bool\)"),
    (lambda c: c.crash("1"), r"got '1' \(str\); did you mean 1\?"),
    (lambda c: c.shutdown("broker-2"), r"shutdown\(broker\): .*did you mean 2\?"),
    (lambda c: c.crash(3005), r"Unknown broker 3005; brokers are \[1, 2, 3\], KRaft "
                              r"controllers are \[3000, 3001, 3002\] \(crash\(broker\)\); "
                              r"did you mean 3002\?"),
    (lambda c: c.restart(3000), r"restart\(broker\): 3000 is a KRaft controller node; restart "
                                r"takes a broker id: \[1, 2, 3\]"),
    (lambda c: c.slow(3001, 5), r"slow\(broker\): 3001 is a KRaft controller node"),
    (lambda c: c.pause(None, 5), r"pause\(broker\): a broker or controller node id is an int"),
    # found by scripts/fuzz.py --seed 20261207 (case 2466): a list was looked up as a dict key
    (lambda c: c.log([1], "t"), r"log\(broker\): a broker id is an int, got \[1\] \(list\)"),
    (lambda c: c.log("2", "t"), r"log\(broker\): .*got '2' \(str\); did you mean 2\?"),
    (lambda c: c.log(3000, "t"), r"log\(broker\): 3000 is a KRaft controller node"),
    (lambda c: c.run_until(5), r"run_until\(condition\) must be a function of the cluster, "
                               r"got 5 \(int\)"),
    (lambda c: c.run_until(lambda c: False, 10, check=3), r"run_until\(check\) must be a func"),
    (lambda c: c.at(-5, lambda c: None), r"at\(time_ms\) must be an absolute simulated time in "
                                         r"integer ms from 0 to now \+ limits.MAX_TIME_MS"),
    (lambda c: c.at("x", lambda c: None), r"at\(time_ms\) .* got 'x'"),
    (lambda c: c.at(c.now + 10, "crash"), r"at\(fn\) must be a function of the cluster, "
                                          r"got 'crash' \(str\)"),
    (lambda c: c.create_topic("u", 1, 3, config=[1]),
     r"create_topic: config must be a dict of topic configs"),
    (lambda c: c.alter_config("topic", "t", {}), r"Unknown entity type 'topic' in alter_config; "
                                                 r"did you mean 'topics'\?"),
    (lambda c: c.alter_config("topics", "t", [("min.insync.replicas", 2)]),
     r"alter_config: config must be a dict"),
    (lambda c: c.alter_config("topics", "t", {}, delete="min.insync.replicas"),
     r"alter_config: delete must be a list of config names"),
    (lambda c: c.alter_config("brokers", 99, {"min.insync.replicas": 2}),
     r"Unknown broker 99; brokers are \[1, 2, 3\] \(alter_config\(brokers, name\)\)"),
    (lambda c: c.describe(5), r"describe: topic must be a topic name or a list of names"),
    (lambda c: c.producer().send_many("t", 5), r"send_many: values must be a list of record "
                                               r"values, got 5 \(int\)"),
    (lambda c: c.producer().send_many("t", "abc"), r"send_many: values must be a list"),
    (lambda c: c.producer().send_many("t", range(10**6 + 1)),
     r"1,000,001 values, more than limits.MAX_RECORDS = 1,000,000"),
    (lambda c: c.producer().send_many("t", (i for i in range(10**7))),
     r"1,000,001 or more values, more than limits.MAX_RECORDS"),
    (lambda c: c.consumer().assign("t", 0), r"assign: partitions must be a list of partition "
                                            r"indexes"),
    (lambda c: c.consumer().seek("t", 0, "x"), r"seek: offset must be a whole number from 0"),
    (lambda c: c.consumer().seek("t", 0, -5), r"seek offset must not be a negative number"),
    (lambda c: c.consumer().poll(-1), r"poll\(timeout_ms\) must be whole ms from 0"),
    (lambda c: c.consumer().poll(10, 0), r"poll\(max_records\) must be None"),
    (lambda c: c.consumer("g9").commit("x"), r"commit\(timeout_ms\) must be whole ms from 0"),
    (lambda c: c.admin().create_topics("t"), r"create_topics: topics must be a list of dicts"),
    (lambda c: c.admin().create_topics([{}]), r"create_topics: topic 0 has no 'name'"),
    (lambda c: c.admin().create_topics([{"name": "x", "partitons": 2}]),
     r"topic 0: unknown key 'partitons'; did you mean 'partitions'|'num_partitions'"),
    (lambda c: c.admin().describe_topics(5), r"describe_topics: topic must be a topic name"),
    (lambda c: c.admin().list_offsets("t", 0, "lates"), r"list_offsets: unknown spec 'lates'; "
                                                        r"did you mean 'latest'\?"),
])
def test_bad_arguments_named_and_nothing_changes(kraft, call, match):
    before = (snapshots.snapshot(kraft), kraft.now, sorted(kraft.topics.names()))
    clients = set(kraft.clients)
    with pytest.raises(ClusterError, match=match):
        call(kraft)
    for name in set(kraft.clients) - clients:   # a client made by the call itself is not state
        del kraft.clients[name]                  # the bad argument changed
    assert (kraft.now, sorted(kraft.topics.names())) == before[1:]
    assert kraft.brokers[1].state == "running" and kraft.kraft.nodes[3000].state == "running"


def test_zookeeper_mode_fault_names_only_brokers(zk):
    with pytest.raises(ClusterError, match=r"^Unknown broker 99; brokers are \[1, 2, 3\] "
                                           r"\(crash\(broker\)\)$"):
        zk.crash(99)
    with pytest.raises(ClusterError, match=r"a broker id is an int, got 'zookeeper'"):
        zk.crash("zookeeper")


def test_alter_broker_config_of_unknown_broker_writes_nothing(kraft):
    """It used to fail with the ELR refusal (or after the KRaft ConfigRecord was written)."""
    records = len(kraft.kraft.image.configs) if hasattr(kraft.kraft.image, "configs") else None
    with pytest.raises(ClusterError, match="Unknown broker 7"):   # not the ELR refusal
        kraft.alter_config("brokers", 7, {"min.insync.replicas": 2})
    with pytest.raises(ClusterError, match="Unknown broker 7"):
        kraft.alter_config("brokers", 7, {"replica.lag.time.max.ms": 5000})
    assert all(b.config["replica.lag.time.max.ms"] != 5000 for b in kraft.brokers.values())
    if records is not None:
        assert len(kraft.kraft.image.configs) == records


def test_past_time_still_runs_now(zk):
    """``at`` with a time already past (a sweep's ready_ms + 0) keeps running at once."""
    seen = []
    zk.at(0, seen.append)
    zk.run(1)
    assert seen == [zk]


def test_did_you_mean_reads_a_node_written_as_text():
    from kafkasim.runtime.validation import did_you_mean

    assert did_you_mean("broker-1", [1, 2, 3, "zookeeper"]) == "; did you mean 1?"
    assert did_you_mean("zookeper", [1, 2, 3, "zookeeper"]) == "; did you mean 'zookeeper'?"
    assert did_you_mean(99, [1, 2, 3]) == ""


def test_filter_node_written_as_text_suggests_the_id(kraft):
    """Scenario files and Cluster.hold share core.match.check_node: 'broker-1' suggests 1."""
    with pytest.raises(ClusterError, match=r"unknown node 'broker-1' in message filter 'from' "
                                           r"\(src\); did you mean 1\?"):
        kraft.hold("FetchResponse", src="broker-1")
    assert kraft.transport.network.holds == []


@pytest.mark.parametrize("call,match", [
    (lambda c: c.trace.where("faul"), r"trace.where: unknown trace kind 'faul'; did you mean "
                                      r"'fault'\?"),
    (lambda c: c.trace.events("isr_shrnk"), r"trace.events: unknown trace kind 'isr_shrnk'"),
    (lambda c: c.trace.spill_to(5), r"spill_to: directory must be a path \(str or "
                                    r"os.PathLike\), got 5 \(int\)"),
])
def test_reading_the_run_names_what_is_wrong(zk, call, match):
    """A misspelt trace kind used to select nothing; spill_to(5) raised a TypeError."""
    with pytest.raises(ClusterError, match=match):
        call(zk)
    assert zk.trace.spill_dir is None


def test_history_seek_names_the_time():
    from kafkasim.observe.history import History

    h = History(Cluster(3, seed=1, kafka_version="3.7"))
    for bad in ("x", -5, 1.5, 10**12):
        with pytest.raises(ClusterError, match=r"seek\(time_ms\) must be a simulated time "
                                               r"in integer ms, not negative, from 0"):
            h.seek(bad)


@pytest.mark.parametrize("text", ["", "# nothing yet\n", 'name = "x"\nseed = 1\n',
                                  "steps = []\n", "[cluster]\n"])
def test_scenario_file_that_says_nothing_to_run_is_refused(tmp_path, text):
    """As an empty sweep file already is: an empty scenario file used to run, report nothing
    and exit 0."""
    from kafkasim.scenarios.scenario import Scenario, ScenarioError
    from kafkasim.tools.cli import main

    with pytest.raises(ScenarioError, match=r"x.toml: the scenario file says nothing to run: "
                                            r"give \[cluster\], \[\[topics\]\]"):
        Scenario.loads(text, "x.toml")
    f = tmp_path / "x.toml"
    f.write_text(text, encoding="utf-8")
    assert main(["run", str(f)]) == 2


def test_send_many_takes_any_iterable_of_values(zk):
    p = zk.producer(acks="all")
    results = p.send_many("t", (f"g{i}" for i in range(3)), partition=0)
    zk.run(200)
    assert [r.value for r in results] == ["g0", "g1", "g2"] and all(r.acked for r in results)


def test_summary_of_runs_without_values_is_quiet():
    """A sweep whose runs all failed (or no record reached the HW) summarises to NaN without
    numpy's 'Mean of empty slice' RuntimeWarning on the learner's screen."""
    import warnings

    import pandas as pd

    from kafkasim.experiments.report import summary

    nan = float("nan")
    results = pd.DataFrame({"run_id": [0, 1], "status": ["error", "error"],
                            "lost_acked": [0, 0], "first_violation": [None, None],
                            "acked": [nan, nan], "offline_ms": [nan, nan],
                            "unavailable_ms": [nan, nan], "isr_shrinks": [nan, nan],
                            "hw_p99_ms": [nan, nan]})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        out = summary(results, by=[])
    assert out["runs"][0] == 2 and out["errors"][0] == 2
    assert pd.isna(out["hw_p99_ms_median"][0]) and pd.isna(out["acked_mean"][0])


def test_elect_names_partitions_that_are_not_a_list_and_changes_nothing():
    """Found by the fuzzer (issue 31, seed 31031 case 9): ``elect('t', 99)`` was a TypeError."""
    c = Cluster(3, seed=1)
    c.create_topic("t", 2, 3)
    c.run(500)
    before = (c.now, c.trace.total, c.engine.scheduled)
    for bad in (99, "0", [0, "1"], 1.5):
        with pytest.raises(ClusterError, match=r"elect: partitions must be a list"):
            c.elect("t", bad)
    assert (c.now, c.trace.total, c.engine.scheduled) == before


def test_a_broker_session_timeout_of_zero_is_refused_before_the_cluster_starts():
    """Found by the fuzzer (issue 31, seed 31031 case 203): KRaft with
    broker.session.timeout.ms = 0 failed inside the first controller election."""
    from kafkasim.settings.config import ConfigError

    for bad in (0, -5):
        with pytest.raises(ConfigError, match=r"broker.session.timeout.ms: must be at least 1"):
            Cluster(3, kafka_version="4.3", config={"broker.session.timeout.ms": bad})
    Cluster(3, kafka_version="4.3", config={"broker.session.timeout.ms": 4000})


def test_calls_found_by_the_fuzzer_name_their_argument_and_change_nothing():
    """Issue 31, seed 31031 (cases 692, 2923, 3623, 335...): a topic name that is not a string
    (alter_config, send) and a partition group that is not a list were TypeErrors."""
    c = Cluster(3, seed=1)
    c.create_topic("t", 1, 3)
    p = c.producer("p")
    c.run(300)
    before = (c.now, c.trace.total, c.engine.scheduled, len(c.records))
    for call, match in [
        (lambda: c.alter_config("topics", {}, {"retention.ms": 1}), "topic name is a string"),
        (lambda: c.alter_config("topics", ["t"], {}), "topic name is a string"),
        (lambda: p.send(["t"], "v"), "topic name is a string"),
        (lambda: p.send(7, "v"), r"got 7 \(int\)"),
        (lambda: c.partition_network(5, [1]), "each group is a list of node ids"),
        (lambda: c.partition_network([1], 2.5), "got 2.5"),
    ]:
        with pytest.raises(ClusterError, match=match):
            call()
    assert (c.now, c.trace.total, c.engine.scheduled, len(c.records)) == before


def test_a_follower_controller_shuts_down_cleanly():
    """Issue 31, seed 31031 case 2128: shutting down a KRaft controller that is not the quorum
    leader raised NotLeaderError (only a leader resigns, KafkaRaftClient's graceful shutdown)."""
    c = Cluster(3, seed=1, kafka_version="4.3")
    c.create_topic("t", 1, 3)
    c.run(1000)
    leader = c.controller_id()
    follower = next(n for n in sorted(c.kraft.nodes) if n != leader)
    c.shutdown(follower)
    assert c.kraft.nodes[follower].state != "running"
    c.run(2000)
    assert c.controller_id() == leader


def test_a_negative_leader_imbalance_check_interval_is_refused_in_every_version():
    """Issue 31, seed 41041 case 4111: before 3.2 (no validator) -2**63 s failed inside the
    controller's timer as 'cannot schedule ... in the past' (0 stays accepted before 3.2, as
    Kafka accepts it: tests/test_config.py)."""
    from kafkasim.settings.config import ConfigError

    for version in ("0.10.2", "2.0", "2.8", "3.7"):
        for bad in (-1, -2**63):
            with pytest.raises(ConfigError, match="leader.imbalance.check.interval.seconds"):
                Cluster(3, kafka_version=version,
                        config={"leader.imbalance.check.interval.seconds": bad})
    Cluster(3, kafka_version="2.0", config={"leader.imbalance.check.interval.seconds": 5})


def test_a_pause_of_zero_ms_is_a_cluster_error_naming_the_argument():
    """Issue 31, seed 51051 case 1618: pause(1, 0) raised a bare ValueError."""
    c = Cluster(3, seed=1)
    with pytest.raises(ClusterError, match=r"pause\(ms\): pause needs a positive duration"):
        c.pause(1, 0)
    assert c.brokers[1].paused_until <= c.now


def test_a_message_type_that_is_not_a_name_is_named_as_such():
    """Issue 31, seed 61061 case 4255: hold(['FetchResponse']) was a TypeError (unhashable)."""
    c = Cluster(3, seed=1)
    before = (c.now, c.trace.total, c.engine.scheduled)
    for bad in (["FetchResponse"], {"a": 1}, 5):
        with pytest.raises(ClusterError, match="hold: a message type is a name such as"):
            c.hold(bad)
    assert (c.now, c.trace.total, c.engine.scheduled) == before


# -- issue 31, the second pass (kafkasim.tools.cli_fuzz and a hostile reading of the API) ------

def test_zero_partitions_is_invalid_partitions_not_invalid_replication_factor():
    """AdminUtils.assignReplicasToBrokers throws InvalidPartitionsException for a partition
    count below 1 (the ZooKeeper-mode path said INVALID_REPLICATION_FACTOR); KRaft already
    answered INVALID_PARTITIONS."""
    for version in ("2.8", "3.7", "4.3"):
        c = Cluster(3, seed=1, kafka_version=version)
        with pytest.raises(ClusterError, match=r"(?i)number of partitions.*\(INVALID_PARTITIONS\)"):
            c.create_topic("u", 0, 1)
        assert "u" not in c.topics.names()
    with pytest.raises(ClusterError, match=r"Replication factor must be larger than 0.*"
                                           r"\(INVALID_REPLICATION_FACTOR\)"):
        Cluster(3, seed=1, kafka_version="3.7").create_topic("u", 1, 0)


@pytest.mark.parametrize("call,match", [
    (lambda c: c.cut(1, "zookeper"), r"Unknown node 'zookeper' in cut; did you mean "
                                     r"'zookeeper'\? \(nodes: 1, 2, 3, 'zookeeper', 'p'\)"),
    (lambda c: c.cut("broker-2", 1), r"Unknown node 'broker-2' in cut; did you mean 2\?"),
    (lambda c: c.partition_network([1], ["zookeepr"]), r"in partition groups; did you mean "
                                                       r"'zookeeper'\?"),
    (lambda c: c.partition_network([1], [1, 2]), r"partition_network: node 1 is in two "
                                                 r"partition groups"),
    (lambda c: c.partition_network([1, 2, 3]), r"cuts nothing: give two or more groups"),
    (lambda c: c.partition_network(), r"cuts nothing"),
    (lambda c: c.cut(1, 2, both_ways="no"), r"cut\(both_ways\) must be True or False, got 'no'"),
    (lambda c: c.restart(1, clean="yes"), r"restart\(clean\) must be True or False, got 'yes'"),
    (lambda c: c.create_topic("u", wait="yes"), r"create_topic\(wait\) must be True or False"),
    (lambda c: c.elect("t", election_type="prefered"), r"elect\(election_type\) must be "
                                                       r"'preferred' or 'unclean', got "
                                                       r"'prefered'; did you mean 'preferred'\?"),
    (lambda c: c.clients["p"].send("t", "v", partition=True), r"partition must be a partition "
                                                              r"index .* got True \(bool\)"),
    (lambda c: c.consumer("g", "c").assign(["t"]), r"assign / subscribe: topic must be one "
                                                      r"topic name, such as 't', got \['t'\]"),
    (lambda c: c.create_topic("u", 3, assignment=[[1, 2]]),
     r"create_topic: partitions=3 contradicts the replica assignment, which gives 1"),
    (lambda c: c.create_topic("u", 1, 3, assignment=[[1, 2]]),
     r"replication_factor=3 contradicts the replica assignment, which gives 2"),
    (lambda c: c.alter_config("topics", "t", {}, delete=["min.insync.replica"]),
     r"alter_config\(delete\): Invalid config\(s\): min.insync.replica: Unknown topic config "
     r"'min.insync.replica'. Did you mean 'min.insync.replicas'\?"),
    (lambda c: c.alter_config("topics", "t", {}, delete=["cleanup.policy"]),
     r"Invalid config\(s\): cleanup.policy: 'cleanup.policy' is a Kafka topic config that "
     r"kafkasim does not model"),
    (lambda c: c.alter_config("brokers", 1, {"broker.id": 7}),
     r"Cannot update these configs dynamically: Set\(broker.id\)"),
    (lambda c: c.alter_config("brokers", None, {"broker.rack": "r1"}),
     r"Cannot update these configs dynamically: Set\(broker.rack\)"),
])
def test_second_pass_bad_calls_are_named_and_change_nothing(call, match):
    """Each passed silently (a typo'd delete deleted nothing, a one-group partition cut
    nothing, 'no' read as True, partition=True wrote to partition 1, broker.id was overwritten
    again), raised an internal error (ValueError for a node in two groups, TypeError for a
    list of topics), or named no close match (cut(1, 'zookeper'))."""
    c = Cluster(3, seed=1, kafka_version="3.7")
    c.create_topic("t", 2, 3)
    p = c.producer("p", acks="all")
    p.send("t", "v")
    c.run(500)
    c.partition_network([3], [1, 2])          # a partition in place: a failed call keeps it
    net = c.transport.network
    before = (c.now, c.trace.total, c.engine.scheduled, len(c.records), dict(net.groups),
              dict(net.cut_links), sorted(c.topics.names()), c.topics.overrides["t"],
              {b: dict(br.config) for b, br in c.brokers.items()},
              [br.state for br in c.brokers.values()])
    with pytest.raises(ClusterError, match=match):
        call(c)
    after = (c.now, c.trace.total, c.engine.scheduled, len(c.records), dict(net.groups),
             dict(net.cut_links), sorted(c.topics.names()), c.topics.overrides["t"],
             {b: dict(br.config) for b, br in c.brokers.items()},
             [br.state for br in c.brokers.values()])
    assert after == before


def test_the_calls_above_still_work_with_good_arguments():
    c = Cluster(3, seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])          # agreeing values stay accepted
    c.create_topic("u", assignment=[[2, 3], [3, 1]])
    c.alter_config("topics", "t", {"min.insync.replicas": 2})
    c.alter_config("topics", "t", {}, delete=["min.insync.replicas"])
    assert "min.insync.replicas" not in c.topics.overrides["t"]
    c.alter_config("topics", "t", {}, delete=["retention.ms"])   # a known name, not set: fine
    c.cut(1, "zookeeper", both_ways=False)
    c.partition_network([1], [2, 3])
    c.consumer("g", "c").subscribe("t")
    assert c.producer("q").send("t", "v", partition=0).partition == 0


@pytest.mark.parametrize("kwargs,match", [
    ({"brokers": 0}, r"a cluster needs at least one broker: Cluster\(brokers\) must be a broker "
                     r"count from 1 to 100 \(limits.MAX_BROKERS\)"),
    ({"brokers": "3"}, r"Cluster\(brokers\) must be a broker count from 1 to 100 .* got '3' "
                       r"\(str\)"),
    ({"brokers": 3, "kafka_version": "4.3", "controllers": 1000},
     r"controllers must be at least 1 .* and at most 100 \(limits.MAX_BROKERS"),
])
def test_cluster_counts_name_their_range(kwargs, match):
    with pytest.raises(ClusterError, match=match):
        Cluster(**kwargs)


@pytest.mark.parametrize("kwargs,match", [
    ({"rate": float("inf"), "duration_ms": 1000}, r"RateWorkload\(rate\) must be records/s "
                                                  r"above 0 and at most limits.MAX_RATE = "
                                                  r"100,000, got inf"),
    ({"rate": float("nan"), "duration_ms": 1000}, r"RateWorkload\(rate\) .* got nan"),
    ({"rate": "5", "duration_ms": 1000}, r"RateWorkload\(rate\) .* got '5'"),
    ({"rate": 5, "duration_ms": 1.5}, r"RateWorkload\(duration_ms\) must be whole ms from 1 to "
                                      r"86,400,000"),
    ({"rate": 5, "duration_ms": 10**12}, r"RateWorkload\(duration_ms\)"),
    ({"rate": 100_000, "duration_ms": 86_400_000}, r"more than limits.MAX_RECORDS"),
    ({"segments": [(0, 10, float("inf"))]}, r"RateWorkload\(segments\): each segment is"),
    ({"segments": [(10, 0, 5)]}, r"RateWorkload\(segments\): each segment is .* got \(10, 0, 5\)"),
    ({"segments": []}, r"RateWorkload\(segments\) must be a non-empty list"),
    ({"rate": 5, "duration_ms": 1000, "start_ms": -1}, r"RateWorkload\(start_ms\)"),
    ({"rate": 5, "duration_ms": 1000, "tick_ms": 0}, r"RateWorkload\(tick_ms\) .* from 1"),
])
def test_a_rate_workload_checks_its_arguments_before_scheduling(kwargs, match):
    """rate=inf or nan was accepted and then failed inside the first tick (or ran a rate of
    nan), '5' was a TypeError, and no record limit applied outside scenario files."""
    from kafkasim.runtime.workload import RateWorkload

    c = Cluster(3, seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 3)
    p = c.producer("p")
    before = (c.now, c.engine.scheduled, sorted(c.clients))
    with pytest.raises(ClusterError, match=match):
        RateWorkload(c, p, "t", **kwargs)
    assert (c.now, c.engine.scheduled, sorted(c.clients)) == before
