"""How the suite is split over pytest-xdist workers (scripts/pytest.sh: `-n auto --dist loadgroup`).

Tests that share an expensive or exclusive resource run whole on one worker, in collection order:

- every cell of a notebook (nbval: the cells share the notebook's kernel), one group per notebook;
- the Spark tests, marked ``spark`` (one JVM session per process, a standalone cluster, the local
  Spark Connect server's fixed port).

Every other test goes to whichever worker is free, the browser suite (tests/browser/) too: each
worker that runs a browser test starts its own JupyterLab and Chromium once (session fixtures of
tests/browser/conftest.py), so its 30 tests spread over the workers instead of holding one.

The workers are handed the work longest first (``COST``): pytest-xdist's own order (groups by
their number of tests) sent the 9-test Spark group and the long single tests late, where a long
unit can end up running alone while the other worker idles. This file sits at the repository
root so that it applies however pytest is started (``pytest notebooks/05-acks-and-min-isr.ipynb
-n 2`` too).
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent
NOTEBOOKS = REPO / "notebooks"


def xdist_group(item: pytest.Item) -> str | None:
    """The group ``item`` must share a worker with, or None."""
    if item.path.suffix == ".ipynb" and item.path.is_relative_to(NOTEBOOKS):
        return "notebook-" + item.path.relative_to(NOTEBOOKS).with_suffix("").as_posix()
    if item.get_closest_marker("spark") or "spark" in getattr(item, "fixturenames", ()):
        return "spark"
    return None


#: Seconds of the longest units of work (a group, or a test's id, or its id without the
#: parameters), measured on this 2-core machine (docs/testing.md, "Order"). The workers are
#: handed these first, longest first, then every other unit in collection order; a notebook group
#: not listed counts ``CELL_S`` per cell. Only the order depends on these numbers: a stale or
#: missing entry costs minutes, never a test.
COST: dict[str, float] = {
    # random fault schedules, each in its own 2-process pool (tests/test_fault_properties.py)
    "tests/test_fault_properties.py::test_safe_configuration_has_no_violation_over_random_"
    "fault_schedules": 240,
    "tests/test_fault_properties.py::test_kraft_safe_configuration_has_no_violation_over_random_"
    "fault_schedules": 120,
    "tests/test_fault_properties.py::test_kraft_safe_configuration_has_no_violation_over_random_"
    "fault_schedules[kraft40]": 40,
    "tests/test_fault_properties.py::test_unclean_election_losses_are_classified_as_allowed": 30,
    "tests/test_fault_properties.py::test_kraft_unclean_election_losses_are_classified_as_"
    "allowed": 25,
    # CPU-s of one process, measured 2026-12-05 with a per-test CPU probe (docs/testing.md,
    # "Cutting the suite's work"); an in-process test's quiet wall time is about its CPU time
    "tests/test_fuzz.py::test_every_mutation_runs_or_fails_cleanly": 8,
    "tests/test_scenario_names.py::test_shipped_scenario_holds_for_seeds_0_to_19"
    "[kraft-quorum-loss]": 14,
    "tests/test_scenario_names.py::test_shipped_scenario_holds_for_seeds_0_to_19"
    "[controller-failover]": 8,
    # one JVM, a standalone cluster, the Spark Connect server
    "spark": 200,
    # nbval: notebook 90 starts Spark in its kernel
    "notebook-90-experiments-at-scale": 100,
    "notebook-ko/90-experiments-at-scale": 100,
    "notebook-06-monitoring": 45,
    "notebook-ko/06-monitoring": 40,
    "notebook-14-capstone-write-the-rules": 25,
    "notebook-ko/14-capstone-write-the-rules": 25,
    "capstone": 22,      # 14 tests; 26 CPU-s with pytest's start (2026-12-05)
    "notebook-02-in-sync-replicas": 18,
    "notebook-ko/02-in-sync-replicas": 18,
    "notebook-07-controller-and-failover": 16,
    "notebook-ko/07-controller-and-failover": 16,
    "notebook-08-clean-and-unclean-election": 14,
    "notebook-ko/08-clean-and-unclean-election": 14,
    # the browser suite: Run All in JupyterLab, then its widgets driven
    "tests/browser/test_browser_notebooks.py::test_notebook_in_browser[06]": 60,
    "tests/browser/test_browser_notebooks.py::test_notebook_in_browser[14]": 30,
    "tests/browser/test_browser_notebooks.py::test_notebook_in_browser[02]": 22,
    "tests/browser/test_browser_notebooks.py::test_notebook_in_browser[07]": 21,
    "tests/browser/test_browser_notebooks.py::test_notebook_in_browser[01]": 20,
    "tests/browser/test_browser_notebooks.py::test_notebook_in_browser[08]": 17,
    "tests/browser/test_browser_detector.py::test_detector_reports_broken_widgets_stderr_and_"
    "tracebacks": 13,
    "tests/browser/test_browser_notebooks.py::test_notebook_in_browser[05]": 12,
    "tests/browser/test_browser_notebooks.py::test_notebook_in_browser[03]": 12,
    "tests/browser/test_browser_notebooks.py": 8,
    "tests/browser": 4,
    "tests/test_benchmarks_smoke.py::test_bench_history_quick": 12,
}
CELL_S = 0.25


def _listed_cost(nodeid: str) -> float:
    """``COST`` of the test ``nodeid``: its own entry, else its id without the parameters, its
    module's or its directory's; 0 when none is listed."""
    path, _, _ = nodeid.partition("::")
    for key in (nodeid, nodeid.partition("[")[0], path, path.rpartition("/")[0]):
        if key in COST:
            return COST[key]
    return 0.0


def pytest_configure(config: pytest.Config) -> None:
    # pytest-xdist hands out loadgroup units by their number of tests, largest first; ours go in
    # collection order, which pytest_collection_modifyitems sorts by cost (LPT scheduling)
    if getattr(config.option, "dist", "no") == "loadgroup":
        config.option.loadscopereorder = False


def _group_suffix(item: pytest.Item) -> str:
    """What pytest-xdist appends to a grouped test's id: its group names, sorted, "_"-joined."""
    names = {str(m.args[0] if m.args else m.kwargs.get("name", "default"))
             for m in item.iter_markers("xdist_group")}
    return "_".join(sorted(names))


def _add_group_suffix(item: pytest.Item, suffix: str) -> None:
    """pytest-xdist 3.8 appends "@group" to a grouped test's id in the worker (its loadgroup
    scheduler reads the group from there) by setting ``item._nodeid``, which pytest 9.2 no longer
    reads: without this every test would be scheduled alone (pytest-dev/pytest-xdist#1386)."""
    nodeid = f"{item.nodeid}@{suffix}"
    if hasattr(item, "_id"):            # pytest >= 9.2: a structured NodeId
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(nodeid)
    else:
        item._nodeid = nodeid


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    if config.pluginmanager.hasplugin("xdist"):
        for item in items:
            group = xdist_group(item)
            if group is not None:
                item.add_marker(pytest.mark.xdist_group(group))
    result = yield      # the other hooks, pytest-xdist's among them
    if getattr(config.option, "loadgroup", False):     # set in xdist's workers under loadgroup
        for item in items:
            suffix = _group_suffix(item)
            if suffix and not item.nodeid.endswith(f"@{suffix}"):
                _add_group_suffix(item, suffix)
        costs = _unit_costs(items)
        items.sort(key=lambda item: -costs[id(item)])      # stable: a group keeps its order
    return result


def _unit_costs(items: list[pytest.Item]) -> dict[int, float]:
    """id(item) -> the cost of its unit: ``COST``, or ``CELL_S`` per cell for an unlisted
    notebook, or 0 (an unlisted unit test: after the listed ones, in collection order)."""
    cells: dict[str, int] = {}
    for item in items:
        group = _group_suffix(item)
        cells[group] = cells.get(group, 0) + 1
    out = {}
    for item in items:
        group = _group_suffix(item)
        if group in COST:
            out[id(item)] = COST[group]
        elif group.startswith("notebook-"):
            out[id(item)] = CELL_S * cells[group]
        elif group:
            out[id(item)] = 0.0
        else:
            out[id(item)] = _listed_cost(item.nodeid)
    return out
