"""The seed scenarios under kafkasim/scenarios/ run and reproduce the notes' numbers."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from kafkasim.scenarios.scenario import Scenario
from kafkasim.tools.cli import SCHEMA_PATH, main

SCENARIOS = sorted(p.stem for p in (Path(__import__("kafkasim").__file__).parent
                                    / "scenarios").glob("*.toml"))
SCHEMA = json.loads(SCHEMA_PATH.read_text())

# Shipped scenarios that state Kafka's behaviour where the simulator's core still differs: each
# reason names the bug (and the strict xfail in tests/test_kraft_scenarios.py reproducing it).
KNOWN_CORE_BUGS: dict[str, str] = {}   # scenario name -> why it is expected to fail


def _param(name: str):
    reason = KNOWN_CORE_BUGS.get(name)
    return pytest.param(name, marks=pytest.mark.xfail(strict=True, reason=reason)) \
        if reason else name

_runs: dict[str, object] = {}


def run_of(name: str):
    if name not in _runs:
        _runs[name] = Scenario.named(name).run()
    return _runs[name]


@pytest.mark.parametrize("name", [_param(n) for n in SCENARIOS])
def test_every_expectation_holds_and_report_validates(name):
    run = run_of(name)
    rep = run.report()
    failed = [e for e in rep["expectations"] if not e["ok"]]
    assert not failed, f"{name} (seed {rep['seed']}): {failed}"
    assert rep["expectations"], f"{name} checks nothing"
    jsonschema.validate(rep, SCHEMA)


def test_describe_p3_r3_layout():
    out = run_of("seed-describe-p3-r3").outputs[0]["text"]
    lines = out.splitlines()
    assert lines[0].startswith("Topic: topic-p3-r3\tTopicId: ")
    assert lines[0].endswith("\tPartitionCount: 3\tReplicationFactor: 3\tConfigs: ")
    assert len(lines) == 4
    leaders = []
    for p, line in enumerate(lines[1:]):
        fields = line.split("\t")
        assert fields[0] == ""
        assert fields[1:3] == ["Topic: topic-p3-r3", f"Partition: {p}"]
        leader = int(fields[3].removeprefix("Leader: "))
        replicas = [int(x) for x in fields[4].removeprefix("Replicas: ").split(",")]
        isr = [int(x) for x in fields[5].removeprefix("Isr: ").split(",")]
        assert leader == replicas[0] and sorted(replicas) == [1, 2, 3] and isr == replicas
        leaders.append(leader)
    assert sorted(leaders) == [1, 2, 3], "leaders are spread over the brokers"


def test_high_watermark_example_is_seven():
    rep = run_of("seed-high-watermark").report()
    (p,) = rep["partitions"]
    leos = {r["broker"]: r["leo"] for r in p["replicas"]}
    assert leos == {1: 10, 2: 8, 3: 7}
    assert p["replicas"][0]["hw"] == 7
    consumed = rep["consumed"]["consumer-readers"]
    assert [c[2] for c in consumed] == list(range(7))


def test_isr_shrink_happens_between_one_and_one_and_a_half_lag_times():
    run = run_of("seed-isr-shrink-expand")
    isr_rows = [r for r in run.cluster.trace.rows if r[1] == "isr"]
    shrink_t = isr_rows[0][0]
    assert isr_rows[0][5] == ((1, 2, 3), (1, 2))
    assert isr_rows[1][5] == ((1, 2), (1, 2, 3))
    held_from = next(s.time_ms for s in run.steps if s.action == "hold")
    assert 10000 <= shrink_t - held_from <= 15000 + 10
    urp = next(o for o in run.outputs if "under-replicated" in o["label"])["text"]
    assert urp == "\tTopic: isr-demo\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\n"


def test_commit_of_offset_6_step_by_step():
    run = run_of("seed-commit-offset-6")
    rows = run.cluster.trace.rows
    t0 = next(s.time_ms for s in run.steps if s.action == "produce" and s.index > 0)
    hw7 = {r[2]: r[0] for r in rows if r[1] == "hw" and r[5] == 7}
    append = next(r[0] for r in rows if r[1] == "append" and r[5][0] == 6)
    replicate = [r[0] for r in rows if r[1] == "replicate" and r[5][0] == 6]
    assert t0 <= append < min(replicate) and max(replicate) < hw7[1]
    # followers learn HW 7 after the leader (one fetch later)
    assert hw7[2] > hw7[1] and hw7[3] > hw7[1]


def test_acks_all_with_min_isr_two():
    rep = run_of("seed-acks-min-isr").report()
    failed = rep["producers"]["all"]["failed"]
    assert [f["error"] for f in failed] == ["NOT_ENOUGH_REPLICAS"]
    assert len(rep["producers"]["all"]["acked"]) == 4
    text = rep["outputs"][-1]["text"]
    assert "Isr: 1\n" in text


def test_lag_rules_under_bursts():
    def shrinks(name):
        return sum(b.meters["IsrShrinksPerSec"] for b in run_of(name).cluster.brokers.values())

    assert shrinks("seed-lag-messages-steady") == 0
    assert shrinks("seed-lag-messages-burst") >= 1
    assert shrinks("seed-lag-time-burst") == 0


def test_cli_json_report(capsys, tmp_path):
    out = tmp_path / "r.json"
    assert main(["run", "seed-high-watermark", "--json", "--out", str(out)]) == 0
    rep = json.loads(out.read_text())
    jsonschema.validate(rep, SCHEMA)
    assert rep["scenario"].startswith("Seed: leader has offsets 0-9")


def test_cli_seed_override_changes_only_randomness():
    a = Scenario.named("seed-isr-shrink-expand").run(seed=11).report()
    b = Scenario.named("seed-isr-shrink-expand").run(seed=11).report()
    assert a["trace_digest"] == b["trace_digest"]
    assert a["seed"] == 11 and all(e["ok"] for e in a["expectations"])


def test_cli_failing_expectation_exit_code(tmp_path, capsys):
    f = tmp_path / "s.toml"
    f.write_text('name = "x"\n[[topics]]\nname = "t"\nreplication_factor = 1\n'
                 '[[steps]]\ndo = "expect"\nthat = { leader = { topic = "t", none = true } }\n')
    assert main(["run", str(f)]) == 1
    assert "FAIL" in capsys.readouterr().out


def test_cli_lists_every_builtin_scenario(capsys):
    assert main(["scenarios"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert names == SCENARIOS
