"""kafkasim.experiments: sweep specs, validation before anything runs, error rows, determinism,
the CLI, and the same rows through local Spark and Spark Connect as serially."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pandas as pd
import pytest

from kafkasim.experiments import RunSpec, Sweep, SweepError, run_one, run_sweep, write_parquet
from kafkasim.experiments import runner as runner_mod
from kafkasim.experiments.report import summary
from kafkasim.tools import cli

REPO = Path(__file__).resolve().parents[1]
EXAMPLES = sorted((REPO / "examples" / "sweeps").glob("*.toml"))

# Small, fast runs: 3 s of produce at 10 records/s, a 1 s drain.
SMALL = {"duration_ms": 3000, "drain_ms": 1000, "workload": {"rate": 10}}

# A scenario that is valid but fails while it runs: the await can never hold.
FAILING_SCENARIO = textwrap.dedent("""
    name = "never"
    seed = 1
    [cluster]
    brokers = 3
    [[topics]]
    name = "t"
    partitions = 1
    replication_factor = 3
    [[steps]]
    do = "await"
    until = { leader = { topic = "t", is = 2 }, isr = { topic = "t", size = 1 } }
    timeout_ms = 500
""")


def mixed_specs() -> list[RunSpec]:
    """Generated runs with scripted and random faults, a scenario run, and a failing run."""
    specs = Sweep(
        {**SMALL, "check": True, "trace_digest": True, "kafka_version": "3.7",
         "broker": {"zookeeper.session.timeout.ms": 2000},
         "faults": {"kind": "crash", "rate_per_min": 30, "down_ms": [500, 1500], "max_down": 2,
                    "steps": [{"at_ms": 1000, "do": "crash", "broker": 1},
                              {"at_ms": 2500, "do": "start", "broker": 1}]}},
        {"producer.acks": ["1", "all"], "topic.unclean.leader.election.enable": [False, True]},
        seeds=1).specs
    n = len(specs)
    specs.append(RunSpec(seed=7, scenario="offline-unclean-on", check=True, run_id=n,
                         params={"kind": "scenario"}))
    specs.append(RunSpec(seed=3, scenario_text=FAILING_SCENARIO, run_id=n + 1,
                         params={"kind": "failing"}))
    return specs


# --- sweep files and expansion --------------------------------------------------------------------


def test_grid_cases_and_seeds_expand_seed_major():
    sw = Sweep({"duration_ms": 1000}, {"producer.acks": ["1", "all"],
                                       "topic.min.insync.replicas": [1, 2]},
               seeds=[5, 9], cases=[{"label": "a", "cluster.latency_ms": 1},
                                    {"label": "b", "cluster.latency_ms": 20}])
    assert len(sw) == 2 * 2 * 2 * 2 and sw.combinations == 8
    specs = sw.specs
    assert [s.run_id for s in specs] == list(range(16))
    assert [s.seed for s in specs] == [5] * 8 + [9] * 8   # seed-major: any prefix covers all
    first = specs[0]
    assert first.params == {"case": "a", "cluster.latency_ms": 1, "producer.acks": "1",
                            "topic.min.insync.replicas": 1}
    assert first.producer == {"acks": "1"} and first.topic == {"min.insync.replicas": 1}
    assert specs[7].cluster == {"latency_ms": 20} and specs[7].params["case"] == "b"
    assert sw.param_names == ["case", "cluster.latency_ms", "producer.acks",
                              "topic.min.insync.replicas"]
    table = sw.table()
    assert list(table.columns) == ["run_id", "seed", *sw.param_names]
    assert str(table["topic.min.insync.replicas"].dtype) == "int64"


def test_with_runs_extends_or_cuts_the_seeds():
    sw = Sweep(SMALL, {"producer.acks": ["1", "all", "0"]}, seeds={"start": 10, "count": 2})
    more = sw.with_runs(10)
    assert len(more) == 10 and more.seeds == [10, 11, 12, 13]
    assert [s.seed for s in more.specs][-1] == 13
    assert len(sw.with_runs(4)) == 4 and sw.with_runs(4).seeds == [10, 11]


def test_spec_json_round_trip_is_canonical():
    spec = Sweep({**SMALL, "topic": {"min.insync.replicas": 2}}, seeds=[3]).specs[0]
    text = spec.to_json()
    assert RunSpec.from_json(text) == spec
    assert json.loads(text)["topic"] == {"min.insync.replicas": 2}
    assert text == RunSpec.from_json(text).to_json()


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.stem for p in EXAMPLES])
def test_example_sweep_files_are_valid(path):
    sweep = Sweep.load(path).validate()
    assert len(sweep) >= 4 and sweep.description


# --- bad specs: clear errors before anything runs -------------------------------------------------


@pytest.mark.parametrize(("spec", "message"), [
    ({"broker": {"replica.lag.time.max.msx": 5}},
     "Unknown broker config 'replica.lag.time.max.msx'. Did you mean 'replica.lag.time.max.ms'?"),
    ({"topic": {"min.insync.replica": 2}}, "Did you mean 'min.insync.replicas'?"),
    ({"producer": {"acks": "2"}}, "Invalid value 2 for configuration acks"),
    ({"topic": {"min.insync.replicas": 0}}, "Value must be at least 1"),
    ({"cluster": {"brokers": 3, "replication_factor": 4}},
     "replication_factor 4 is larger than the number of brokers (3)"),
    ({"scenario": "seed-lag-messages-brust"}, "Did you mean 'seed-lag-messages-burst'?"),
    ({"kafka_version": "0.7"}, "older than every supported profile"),
    ({"kafka_version": "3.7", "broker": {"replica.lag.max.messages": 5}},
     "was removed in Kafka 0.9.0"),
    ({"faults": {"kind": "crsh", "rate_per_min": 1}}, "did you mean 'crash'?"),
    ({"faults": {"kind": ["pause", "powr_loss"], "rate_per_min": 1}},
     "did you mean 'power_loss'?"),
    ({"faults": {"kind": ["pause", "pause"], "rate_per_min": 1}}, "lists a kind twice"),
    ({"faults": {"kind": [], "rate_per_min": 1}}, "a non-empty list of them"),
    ({"faults": {"rate_per_min": 1, "down_ms": [10, 5]}}, "0 < low <= high"),
    ({"faults": {"steps": [{"at_ms": 5, "do": "crash", "broker": 7}]}}, "unknown broker 7"),
    ({"workload": {"burst": {"every_ms": 100, "length_ms": 200, "rate": 5}}},
     "longer than every_ms"),
    ({"scenario": "seed-lag-time-burst", "workload": {"rate": 3}}, "remove [workload]"),
])
def test_bad_specs_are_refused_with_a_clear_message(spec, message):
    with pytest.raises(SweepError) as err:
        Sweep({**SMALL, **spec} if "scenario" not in spec else spec).validate()
    assert message in str(err.value)
    assert "nothing was run" in str(err.value)


@pytest.mark.parametrize(("kw", "message"), [
    ({"base": {"clustr": {"brokers": 3}}}, "[base]: unknown key 'clustr'; did you mean 'cluster'?"),
    ({"grid": {"topc.min.insync.replicas": [1]}}, "did you mean 'topic'?"),
    ({"grid": {"cluster.broker": [1]}}, "did you mean 'brokers'?"),
    ({"grid": {"producer.acks": "all"}}, "must be a non-empty list"),
    ({"seeds": 0}, "at least 1"),
    ({"seeds": [1, 1]}, "distinct"),
])
def test_malformed_sweeps_are_refused(kw, message):
    with pytest.raises(SweepError) as err:
        Sweep(**kw)
    assert message in str(err.value)


def test_sweep_file_errors_name_the_file(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text('seed = 3\n[base]\nduration_ms = 5\n')
    with pytest.raises(SweepError, match=r"bad\.toml: unknown key 'seed'; did you mean 'seeds'"):
        Sweep.load(path)
    path.write_text('[base\n')
    with pytest.raises(SweepError, match=r"bad\.toml: invalid TOML"):
        Sweep.load(path)


def test_every_bad_spec_is_listed_and_nothing_runs(monkeypatch):
    def must_not_run(spec):
        raise AssertionError(f"ran {spec.label()} although the sweep is invalid")

    monkeypatch.setattr(runner_mod, "run_one", must_not_run)
    sw = Sweep(SMALL, {"producer.acks": ["1", "x"], "topic.min.insync.replicas": [0, 1]},
               seeds=3)

    class NoSpark:   # touching the session at all would mean a job could start
        def __getattr__(self, name):
            raise AssertionError(f"the Spark session was used ({name}) before validation")

    for mode, kw in (("serial", {}), ("spark", {"spark": NoSpark()})):
        with pytest.raises(SweepError) as err:
            run_sweep(sw, mode=mode, progress=False, **kw)
        # three distinct bad configurations (each reported once, not once per seed)
        assert len(err.value.problems) == 3
        assert "producer.acks='x'" in str(err.value)


# --- running ------------------------------------------------------------------------------------


def test_a_failing_run_becomes_an_error_row():
    specs = mixed_specs()[-2:]
    out = run_sweep(specs, mode="serial", progress=False)
    ok, failed = out.iloc[0], out.iloc[1]
    assert ok["status"] == "ok" and ok["error"] is None
    assert failed["status"] == "error"
    assert "await timed out" in failed["error"] and "never" in failed["error"]
    assert failed["seed"] == 3 and failed["kind"] == "failing"
    assert failed["scenario"] == "<scenario_text>"


def test_scenario_runs_report_the_seed_notes_outcomes():
    out = run_sweep([RunSpec(scenario="offline-unclean-on", seed=9, check=False, run_id=0),
                     RunSpec(scenario="offline-unclean-off", seed=9, check=False, run_id=1)],
                    mode="serial", progress=False)
    on, off = out.iloc[0], out.iloc[1]
    assert on["expectations_failed"] == 0 and off["expectations_failed"] == 0
    assert on["unclean_elections"] == 1 and on["lost_acked"] >= 1 and on["offline_ms"] == 0
    assert off["unclean_elections"] == 0 and off["lost_acked"] == 0
    assert off["offline_ms"] > 0 and off["unavailable_ms"] >= off["offline_ms"]
    assert on["broker_failures"] == off["broker_failures"] == 1


def test_scenario_files_travel_with_the_spec(tmp_path):
    path = tmp_path / "mine.toml"
    path.write_text(FAILING_SCENARIO)
    out = run_sweep([RunSpec(scenario=str(path), seed=3)], mode="serial", progress=False)
    spec = json.loads(out["spec"].iloc[0])
    # read on the driver: an executor without the file runs the same text
    assert spec["scenario"] == str(path) and spec["scenario_text"] == FAILING_SCENARIO
    assert out["scenario"].iloc[0] == str(path)
    assert out["error"].iloc[0].startswith(f"ScenarioError: {path}: line 10: step 1: await")


def test_counters_of_a_generated_run():
    spec = Sweep({**SMALL, "check": True, "producer": {"acks": "all"},
                  "topic": {"min.insync.replicas": 2},
                  "faults": {"steps": [{"at_ms": 500, "do": "crash", "broker": 2},
                                       {"at_ms": 600, "do": "crash", "broker": 3}]}},
                 seeds=[1]).specs[0]
    row = run_one(spec)
    assert row["status"] == "ok", row["error"]
    assert row["sent"] == 30 and row["acked"] + row["failed"] + row["pending"] == 30
    assert row["broker_failures"] == 2
    assert row["acked"] < 30            # two of three replicas gone: acks=all cannot complete
    assert row["ack_p50_ms"] >= 1 and row["ack_p99_ms"] >= row["ack_p50_ms"]
    assert row["first_violation"] is None and row["check_error"] is None
    assert json.loads(row["spec"])["seed"] == 1


def test_runs_are_pure_functions_of_their_specs():
    specs = mixed_specs()[:2]
    rows = [run_one(s) for s in specs]
    assert rows == [run_one(s.to_json()) for s in specs]
    assert all(r["trace_digest"] for r in rows)
    # another interpreter with another PYTHONHASHSEED gives the same rows
    code = ("import json, sys; from kafkasim.experiments import run_one; "
            "print(json.dumps([run_one(s) for s in json.load(sys.stdin)]))")
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    done = subprocess.run([sys.executable, "-c", code], input=json.dumps([s.to_json()
                                                                            for s in specs]),
                          capture_output=True, text=True, env=env, timeout=120, check=True)
    assert json.loads(done.stdout) == json.loads(json.dumps(rows))


def test_random_faults_are_seeded():
    base = {**SMALL, "duration_ms": 20000, "check": False,
            "faults": {"kind": "power_loss", "rate_per_min": 20, "down_ms": 1000}}
    a, b = (run_one(Sweep(base, seeds=[4]).specs[0]) for _ in range(2))
    assert a == b and a["broker_failures"] > 0
    c = run_one(Sweep(base, seeds=[5]).specs[0])
    assert c["spec"] != a["spec"]


def test_a_mix_of_fault_kinds_draws_each_fault_s_kind_from_the_seed():
    """faults.kind = [..]: each random fault is one of the kinds (seeded); a single kind draws
    no extra number, so single-kind plans keep the faults they always had."""
    from kafkasim.experiments.runner import schedule_faults

    class Recorder:
        brokers = {1: None, 2: None, 3: None}

        class inspect:   # noqa: N801 - the Cluster attribute's name
            ready_ms = 0

        def __init__(self):
            self.plan = []

        def at(self, t, action):
            self.plan.append((t, action.kind, action.pick, action.down_ms))

    def plan(kind, seed=4):
        c = Recorder()
        schedule_faults(c, {"kind": kind, "rate_per_min": 30, "down_ms": [500, 1500]}, seed,
                        60000)
        return c.plan

    mixed = plan(["pause", "power_loss"])
    assert {k for _t, k, _p, _d in mixed} == {"pause", "power_loss"}
    assert mixed == plan(["pause", "power_loss"])              # seeded
    single = plan("power_loss")
    assert {k for _t, k, _p, _d in single} == {"power_loss"}
    assert single[0][0] == mixed[0][0] and single[0][2:] == mixed[0][2:]   # same first draw
    base = {**SMALL, "duration_ms": 20000, "check": False,
            "faults": {"kind": ["pause", "power_loss"], "rate_per_min": 20, "down_ms": 1000}}
    a, b = (run_one(Sweep(base, seeds=[4]).specs[0]) for _ in range(2))
    assert a == b and a["status"] == "ok"


def test_results_table_types_summary_and_parquet(tmp_path):
    sw = Sweep({**SMALL, "check": False}, {"producer.acks": ["1", "all"]}, seeds=2)
    out = sw.run(mode="serial", progress=False)
    assert list(out["run_id"]) == [0, 1, 2, 3]
    assert list(out.columns[:3]) == ["run_id", "seed", "producer.acks"]
    assert str(out["acked"].dtype) == "int64" and str(out["hw_p99_ms"].dtype) == "float64"
    assert str(out["first_violation_ms"].dtype) == "Int64"
    assert out.attrs["mode"] == "serial" and out.attrs["params"] == ["producer.acks"]
    s = summary(out)
    assert list(s["producer.acks"]) == ["1", "all"] and list(s["runs"]) == [2, 2]
    path = tmp_path / "r.parquet"
    write_parquet(out, path)
    back = pd.read_parquet(path)
    pd.testing.assert_frame_equal(back, out)


# --- the command line ---------------------------------------------------------------------------


def test_cli_sweep_serial_writes_parquet(tmp_path, capsys):
    spec = tmp_path / "s.toml"
    spec.write_text(textwrap.dedent("""
        name = "cli"
        seeds = 1
        [base]
        duration_ms = 2000
        drain_ms = 500
        check = false
        [grid]
        "producer.acks" = ["1", "all"]
    """))
    out = tmp_path / "r.parquet"
    assert cli.main(["sweep", str(spec), "--serial", "--runs", "3", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "cli: 3 runs (serial" in text and f"wrote 3 rows to {out}" in text
    assert list(pd.read_parquet(out)["seed"]) == [0, 0, 1]


def test_cli_sweep_bad_spec_exits_2(tmp_path, capsys):
    spec = tmp_path / "bad.toml"
    spec.write_text('[grid]\n"topic.min.insync.replica" = [1, 2]\n')
    assert cli.main(["sweep", str(spec), "--serial"]) == 2
    err = capsys.readouterr().err
    assert "Unknown topic config 'min.insync.replica'" in err and "nothing was run" in err
    assert cli.main(["sweep", str(spec), "--serial", "--master", "local[1]"]) == 2


# --- Spark --------------------------------------------------------------------------------------


def test_local_spark_equals_serial_row_for_row(spark):
    specs = mixed_specs()
    serial = run_sweep(specs, mode="serial", progress=False)
    on_spark = run_sweep(specs, mode="spark", spark=spark, progress=False, chunk_size=2)
    assert on_spark.attrs["mode"] == "spark"
    pd.testing.assert_frame_equal(on_spark, serial)
    assert list(serial["status"]) == ["ok"] * (len(specs) - 1) + ["error"]
    assert serial["trace_digest"].iloc[:4].notna().all()
    assert serial["broker_failures"].iloc[:4].min() >= 1


SPARK_CONNECT_SCRIPT = textwrap.dedent("""
    import json, sys
    from kafkasim.experiments import spark as kspark
    from kafkasim.experiments import RunSpec, run_sweep
    from kafkasim.experiments.distributed import is_connect, warm_up

    specs = [RunSpec.from_json(s) for s in json.load(sys.stdin)]
    try:
        session = kspark.session()
    except Exception as exc:
        print("CANNOT-START " + type(exc).__name__ + ": " + str(exc)[:500])
        sys.exit(0)
    origins = warm_up(session)
    out = run_sweep(specs, mode="spark", spark=session, progress=False)
    print("RESULT " + json.dumps({"connect": is_connect(session), "origins": origins,
                                  "rows": out.drop(columns=["spec"]).to_json(orient="records")}))
    kspark.stop()
""")


@pytest.mark.spark
@pytest.mark.slow
def test_spark_connect_runs_the_same_sweep():
    """A local Spark Connect server (SPARK_REMOTE=local[2]); kafkasim goes to its Python workers
    as an artifact (addArtifacts), and the rows equal the serial ones."""
    specs = mixed_specs()[-3:]        # a faulty generated run, a scenario run, a failing run
    env = {**os.environ, "SPARK_REMOTE": "local[2]", "KAFKASIM_TESTING": "1"}
    env.pop("KAFKASIM_SPARK_MASTER", None)
    done = subprocess.run([sys.executable, "-c", SPARK_CONNECT_SCRIPT],
                          input=json.dumps([s.to_json() for s in specs]), capture_output=True,
                          text=True, env=env, timeout=300, cwd=REPO)
    lines = done.stdout.strip().splitlines()
    if lines and lines[-1].startswith("CANNOT-START"):
        pytest.skip(f"a local Spark Connect server cannot start here: {lines[-1]}")
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(lines[-1].removeprefix("RESULT "))
    assert result["connect"] is True
    # the workers imported kafkasim from the zip shipped with addArtifacts
    assert all(".zip" in o for o in result["origins"]), result["origins"]
    serial = run_sweep(specs, mode="serial", progress=False).drop(columns=["spec"])
    assert json.loads(result["rows"]) == json.loads(serial.to_json(orient="records"))
