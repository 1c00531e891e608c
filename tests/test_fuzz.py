"""Issue 16: a seeded fuzz over scenario files, sweep files, configs and checkpoint files.

Every mutation must end in a run or a clean error (kafkasim.tools.fuzz.CLEAN_ERRORS, ScenarioError,
SweepError, each with a message): no other exception, no run past its event budget or the
wall-clock bound, no report failing report.schema.json. ``make test`` runs
``KAFKASIM_FUZZ_MUTATIONS`` (1,200) mutations from seed ``KAFKASIM_FUZZ_SEED`` (0); the longer
run (>= 10,000 mutations, every shipped scenario) is ``scripts/fuzz.py`` (docs/testing.md).
A failure prints the case index: ``Fuzzer(seed).case(index)`` replays it.
"""

from __future__ import annotations

import os

from kafkasim.tools.fuzz import Fuzzer, dumps_toml, mutate_data

MUTATIONS = int(os.environ.get("KAFKASIM_FUZZ_MUTATIONS", "1200"))
SEED = int(os.environ.get("KAFKASIM_FUZZ_SEED", "0"))


def test_every_mutation_runs_or_fails_cleanly():
    report = Fuzzer(SEED).run(MUTATIONS)
    print("\n" + report.summary())
    assert len(report.outcomes) == MUTATIONS
    assert not report.failures(), report.summary()
    kinds = report.by_target()
    for target in ("scenario", "sweep", "config", "checkpoint"):   # not vacuous
        assert kinds[(target, "ran")] > 0 and kinds[(target, "clean-error")] > 0, kinds


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
