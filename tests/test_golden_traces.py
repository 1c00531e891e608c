"""The committed golden trace digests (tests/golden/digests.json) still hold.

Every run the file names (each built-in scenario, the reference workload's variants and the first
N fault schedules of every profile) is rerun and its trace digest compared with the committed one.
A failure lists every run whose digest moved, with the expected and the actual digest. A change
that is meant to change behaviour regenerates the file, and its diff is reviewed with the change:

    .venv/bin/python scripts/golden_traces.py --write

The runs are split into small groups (a scenario, the workloads, 50 schedules of one profile) so
that pytest-xdist spreads them over the workers.

A fault schedule that a batch test of tests/test_fault_properties.py runs in the same session
(``BATCH_TESTS``, ``batch_seeds``: 1,610 of the 2,000 by default) is not run here: that batch
runs it with the checkers attached and compares its digest with the committed one
(``run_batch``). A group whose every schedule is checked there is skipped, saying which test
checks it; without that test in the session (``-k golden``, ``-m "not slow"``, another
``KAFKASIM_FAULT_SEED_OFFSET``) this test runs them all itself.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("golden_traces", REPO / "scripts/golden_traces.py")
golden_traces = importlib.util.module_from_spec(_spec)
sys.modules.setdefault("golden_traces", golden_traces)
_spec.loader.exec_module(golden_traces)

fault_properties = importlib.import_module("test_fault_properties")   # golden_traces's import

GOLDEN = golden_traces.load()
WANT: dict[str, str] = GOLDEN["digests"]
CHUNK = 50     # fault schedules per test
REGENERATE = "scripts/golden_traces.py --write"


def _groups() -> dict[str, list[str]]:
    """Test id -> the run names it checks, in the file's order."""
    groups: dict[str, list[str]] = {}
    schedules: dict[str, list[str]] = {}
    for name in WANT:
        kind, _, rest = name.partition(":")
        if kind == "scenario":
            groups[name] = [name]
        elif kind == "workload":
            groups.setdefault("workloads", []).append(name)
        else:
            schedules.setdefault(rest.rpartition(":")[0], []).append(name)
    for profile, names in schedules.items():
        names.sort(key=lambda n: int(n.rpartition(":")[2]))
        for i in range(0, len(names), CHUNK):
            chunk = names[i:i + CHUNK]
            first, last = (n.rpartition(":")[2] for n in (chunk[0], chunk[-1]))
            groups[f"schedule:{profile}:{first}-{last}"] = chunk
    return groups


GROUPS = _groups()


def _batches_in_session(session: pytest.Session) -> dict[str, str]:
    """profile -> the node id of its fault-schedule batch test, for the batches this session
    runs (selected, not deselected)."""
    here = {(item.path.name, item.name): item.nodeid for item in session.items}
    path = Path(fault_properties.__file__).name
    return {profile: here[(path, name)] for profile, name in fault_properties.BATCH_TESTS.items()
            if (path, name) in here}


def _checked_by_batch(name: str, batches: dict[str, str]) -> str | None:
    """The batch test that checks run ``name``'s digest in this session, or None."""
    kind, _, rest = name.partition(":")
    profile, _, seed = rest.rpartition(":")
    if kind == "schedule" and profile in batches and \
            int(seed) in fault_properties.batch_seeds(profile):
        return batches[profile]
    return None


@pytest.mark.parametrize("group", list(GROUPS))
def test_golden_digests_are_unchanged(group, request):
    batches = _batches_in_session(request.session)
    elsewhere = {n: _checked_by_batch(n, batches) for n in GROUPS[group]}
    names = [n for n, by in elsewhere.items() if by is None]
    if not names:
        pytest.skip(f"checked by {sorted(set(elsewhere.values()))[0]} (runs these schedules "
                    "in this session)")
    got = golden_traces.compute(names, workers=1)
    changed = golden_traces.changes(WANT, got)
    if changed:
        pytest.fail(
            f"{len(changed)} of {len(names)} golden runs changed their trace digest:\n  "
            + "\n  ".join(changed)
            + f"\nIf the behaviour change is intended, regenerate with `{REGENERATE}` and commit"
            " the diff of tests/golden/digests.json with the change that explains it.",
            pytrace=False)


def test_golden_file_names_every_run():
    """A scenario, workload or profile added (or removed) since the file was written."""
    expected = golden_traces.run_names(GOLDEN["schedules"], tuple(GOLDEN["profiles"]))
    missing = [n for n in expected if n not in WANT]
    extra = sorted(set(WANT) - set(expected))
    assert not missing and not extra, (
        f"tests/golden/digests.json is out of date: no digest for {missing}, digests of runs that "
        f"no longer exist {extra}; regenerate with `{REGENERATE}` and review the diff."
    )


def test_golden_file_is_large_enough():
    assert GOLDEN["schedules"] >= 100, "a few hundred fault schedules per profile, not fewer"
    assert set(GOLDEN["profiles"]) == set(golden_traces.PROFILES)


def test_batches_standing_in_for_golden_runs_check_their_digests():
    """Each batch test named in BATCH_TESTS exists and runs through ``run_batch`` (which checks
    the committed digests): else the runs skipped above would go unchecked."""
    import inspect

    assert "run_batch(profile" in inspect.getsource(fault_properties.run_allowed_loss_batch)
    for profile, name in fault_properties.BATCH_TESTS.items():
        func, _, param = name.partition("[")
        test = getattr(fault_properties, func)
        calls = ["run_batch(profile"] if param else \
            [f'run_batch("{profile}"', f'run_allowed_loss_batch("{profile}"']
        assert any(call in inspect.getsource(test) for call in calls), (profile, name, calls)
        if param:
            params = [p for m in test.pytestmark if m.name == "parametrize" for p in m.args[1]]
            assert param.rstrip("]") in params and param.rstrip("]") == profile, (profile, params)
        assert set(fault_properties.golden_digests(profile)) == \
            {int(n.rpartition(":")[2]) for n in WANT if n.startswith(f"schedule:{profile}:")}
