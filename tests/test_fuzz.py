"""Issue 16: a seeded fuzz over scenario files, sweep files, configs and checkpoint files.

Every mutation must end in a run or a clean error (kafkasim.tools.fuzz.CLEAN_ERRORS, ScenarioError,
SweepError, each with a message): no other exception, no run past its event budget or the
wall-clock bound, no report failing report.schema.json. ``make test`` runs
``KAFKASIM_FUZZ_MUTATIONS`` (1,200) mutations from seed ``KAFKASIM_FUZZ_SEED`` (0); the longer
run (>= 10,000 mutations, every shipped scenario) is ``scripts/fuzz.py`` (docs/testing.md), or
this file with ``KAFKASIM_FUZZ_LONG=N`` (N mutations over every shipped scenario, 50,000 events
a run). Issue 31 added bad façade calls (target ``api``: a clean error and the cluster as it
was), conditions stripped of their comparison (must be refused), and the oracle that no loaded
scenario holds a condition without a comparison.
A failure prints the case index: ``Fuzzer(seed).case(index)`` replays it.
"""

from __future__ import annotations

import os

import pytest

from kafkasim.tools.fuzz import (
    Fuzzer,
    dumps_toml,
    mutate_data,
    strip_comparison,
    uncompared_clauses,
)

MUTATIONS = int(os.environ.get("KAFKASIM_FUZZ_MUTATIONS", "1200"))
SEED = int(os.environ.get("KAFKASIM_FUZZ_SEED", "0"))
LONG = int(os.environ.get("KAFKASIM_FUZZ_LONG", "0"))


def test_every_mutation_runs_or_fails_cleanly():
    report = Fuzzer(SEED).run(MUTATIONS)
    print("\n" + report.summary())
    assert len(report.outcomes) == MUTATIONS
    assert not report.failures(), report.summary()
    kinds = report.by_target()
    for target in ("scenario", "sweep", "config", "checkpoint", "api"):   # not vacuous
        assert kinds[(target, "ran")] > 0 and kinds[(target, "clean-error")] > 0, kinds


@pytest.mark.skipif(not LONG, reason="the long run: KAFKASIM_FUZZ_LONG=<mutations>")
def test_the_long_run_over_every_shipped_scenario():
    report = Fuzzer(SEED, quick=False, max_events=50_000).run(LONG)
    print("\n" + report.summary())
    assert not report.failures(), report.summary()


def test_a_condition_stripped_of_its_comparison_is_refused():
    import random
    import tomllib

    from kafkasim.scenarios.scenario import Scenario, ScenarioError, builtin_names

    rng = random.Random(31)
    stripped = 0
    for name in builtin_names():
        text = Scenario.named(name).text
        for _ in range(3):
            data = strip_comparison(rng, tomllib.loads(text))
            if not uncompared_clauses(data):
                continue          # no condition in this scenario
            stripped += 1
            with pytest.raises(ScenarioError, match="comparison|empty condition"):
                Scenario.loads(dumps_toml(data), f"{name}-stripped.toml")
    assert stripped >= 30


def test_a_bad_call_that_changes_the_cluster_is_a_failure():
    from kafkasim.runtime.cluster import Cluster
    from kafkasim.settings.exceptions import ClusterError
    from kafkasim.tools import fuzz

    c = Cluster(3, seed=1)
    c.create_topic("t", 1, 3)
    before = fuzz._state(c)

    def half_done():
        c.crash(2)
        raise ClusterError("refused after the crash")

    with pytest.raises(ClusterError):
        half_done()
    assert fuzz._state(c) != before   # what _api reports as a dirty-error


def test_mutations_are_a_function_of_the_seed():
    a, b = Fuzzer(7), Fuzzer(7)
    for i in (0, 5, 11):
        assert a.case(i) == b.case(i)


def test_toml_writer_round_trips_scenario_data():
    import random
    import tomllib

    from kafkasim.scenarios.scenario import Scenario

    text = (Scenario.named("seed-high-watermark").text)
    data = tomllib.loads(text)
    assert tomllib.loads(dumps_toml(data)) == data
    rng = random.Random(3)
    for _ in range(50):
        mutant = mutate_data(rng, data, 2)
        assert tomllib.loads(dumps_toml(mutant)) == mutant or any(
            isinstance(v, float) and v != v for v in _leaves(mutant))   # nan != nan


def _leaves(obj):
    if isinstance(obj, dict):
        for v in obj.values():
            yield from _leaves(v)
    elif isinstance(obj, list):
        for v in obj:
            yield from _leaves(v)
    else:
        yield obj


# -- the fuzz through the real command line (scripts/fuzz.py --cli) ---------------------------

def _proc(code: int, err: str = ""):
    import subprocess

    return subprocess.CompletedProcess([], code, b"", err.encode())


def test_cli_fuzz_classifies_by_the_documented_exit_status(tmp_path):
    """kafkasim.tools.cli_fuzz's oracle: a traceback, an undocumented status, a refusal
    without a 'kafkasim:' message, an accepted condition without a comparison and a status
    that disagrees with the report are failures; 0 / 1 / 2 as documented are not."""
    import json

    from kafkasim.tools.cli_fuzz import CliFuzzer

    fz = CliFuzzer(0, quick=True)
    good = b'[[steps]]\ndo = "expect"\nthat = { lost_acked = { equals = 0 } }\n'
    bare = b'[[steps]]\ndo = "expect"\nthat = { lost_acked = {} }\n'
    out = tmp_path / "r.json"
    tb = "Traceback (most recent call last):\n  ...\nRecursionError: too deep\n"
    assert fz._classify("run", good, _proc(1, tb), out)[0] == "traceback"
    assert fz._classify("run", good, _proc(3), out)[0] == "bad-exit"
    assert fz._classify("run", good, _proc(2, "oops"), out)[0] == "bad-exit"
    assert fz._classify("run", good, _proc(2, "kafkasim: x.toml: bad"), out)[0] == "refused"
    assert fz._classify("run", b"\xef\xbb\xbf" + bare, _proc(0), out)[0] == \
        "no-comparison-accepted"                     # a BOM is read past, as the loader does
    assert fz._classify("run", good, _proc(0), out)[0] == "schema-invalid"   # no report
    assert fz._classify("sweep", good, _proc(1), out)[0] == "expect-failed"
    rep = fz_report(ok=False)
    out.write_text(json.dumps(rep), encoding="utf-8")
    assert fz._check_report(0, out)[0] == "wrong-exit"
    assert fz._check_report(1, out)[0] == "expect-failed"


def fz_report(ok: bool) -> dict:
    from kafkasim.scenarios.scenario import Scenario

    rep = Scenario.named("seed-high-watermark").run().report()
    rep["expectations"][0]["ok"] = ok
    return rep


def test_cli_fuzz_runs_the_real_command():
    """A few cases through `kafkasim run` / `kafkasim sweep` subprocesses: each ends in a
    documented exit status with no traceback."""
    from kafkasim.tools.cli_fuzz import CliFuzzer

    report = CliFuzzer(31, quick=True, sweep_share=0.3, timeout_s=300).run(4)
    assert len(report.outcomes) == 4 and not report.failures(), report.summary()
    assert all(o.exit_code in (0, 1, 2) for o in report.outcomes)
