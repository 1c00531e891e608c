"""How the suite is split over pytest-xdist workers (scripts/pytest.sh: `-n auto --dist loadgroup`).

Tests that share an expensive or exclusive resource run whole on one worker, in collection order:

- every cell of a notebook (nbval: the cells share the notebook's kernel), one group per notebook;
- the browser suite, tests/browser/ (one JupyterLab and one Chromium per pytest process);
- the Spark tests, marked ``spark`` (one JVM session per process, a standalone cluster, the local
  Spark Connect server's fixed port).

Every other test goes to whichever worker is free. This file sits at the repository root so that it
applies however pytest is started (``pytest notebooks/05-acks-and-min-isr.ipynb -n 2`` too).
"""

from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent
NOTEBOOKS = REPO / "notebooks"
BROWSER = REPO / "tests" / "browser"


def xdist_group(item: pytest.Item) -> str | None:
    """The group ``item`` must share a worker with, or None."""
    if item.path.suffix == ".ipynb" and item.path.is_relative_to(NOTEBOOKS):
        return "notebook-" + item.path.relative_to(NOTEBOOKS).with_suffix("").as_posix()
    if item.path.is_relative_to(BROWSER):
        return "browser"
    if item.get_closest_marker("spark") or "spark" in getattr(item, "fixturenames", ()):
        return "spark"
    return None


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
    return result
