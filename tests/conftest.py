"""Shared pytest set-up for tests/: environment, Hypothesis profiles, the Spark session fixture.

The environment is set here, at import, before anything imports pyspark or matplotlib.
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import platform
import sys
from pathlib import Path

import matplotlib
import pytest
from hypothesis import settings
from hypothesis.configuration import set_hypothesis_home_dir

REPO = Path(__file__).resolve().parents[1]

os.environ.setdefault("KAFKASIM_TESTING", "1")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

# Non-interactive plots in this process only. (Not via MPLBACKEND: nbval's notebook kernels inherit
# the environment and should keep Jupyter's inline backend, as in JupyterLab.)
matplotlib.use("Agg")

# Hypothesis: in CI, derandomized (the same examples on every run, like the simulator itself) and
# without an example database; locally, random exploration with a database. Its storage (database,
# constants cache) lives inside .venv so the working tree stays clean. Failures print a
# @reproduce_failure blob either way. Choose explicitly with HYPOTHESIS_PROFILE=ci|dev.
set_hypothesis_home_dir(REPO / ".venv" / ".hypothesis")
settings.register_profile("dev", print_blob=True)
settings.register_profile("ci", database=None, derandomize=True, deadline=None, print_blob=True)
_CI = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
HYPOTHESIS_PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci" if _CI else "dev")
settings.load_profile(HYPOTHESIS_PROFILE)


def pytest_report_header(config):
    def version(name):
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "not installed"

    return [
        f"kafkasim {version('kafkasim')} on Python {platform.python_version()}, "
        f"pyspark {version('pyspark')}, pandas {version('pandas')}, "
        f"hypothesis profile {HYPOTHESIS_PROFILE}",
    ]


def pytest_terminal_summary(terminalreporter):
    """One line saying how many unit tests and notebook cells actually ran (.ci/run checks it)."""
    ran = {"tests": set(), "cells": set(), "notebooks": set()}
    for outcome in ("passed", "failed", "xfailed", "xpassed"):
        for report in terminalreporter.stats.get(outcome, []):
            if getattr(report, "when", None) != "call":
                continue
            path, _, _ = report.nodeid.partition("::")
            if path.endswith(".ipynb"):
                ran["cells"].add(report.nodeid)
                ran["notebooks"].add(path)
            else:
                ran["tests"].add(report.nodeid)
    terminalreporter.write_line(
        f"kafkasim: ran {len(ran['tests'])} tests and {len(ran['cells'])} notebook cells "
        f"({len(ran['notebooks'])} notebooks)"
    )


def pytest_collection_modifyitems(items):
    # Anything using the Spark session is marked, so `-m "not spark"` gives a quick run.
    for item in items:
        if "spark" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.spark)


@pytest.fixture(scope="session")
def spark():
    """The process-wide Spark session from kafkasim.experiments.spark (started once: a JVM takes
    seconds)."""
    from kafkasim.experiments import spark as kspark

    session = kspark.session()
    yield session
    kspark.stop()


@pytest.fixture
def notebook_kafka_version(monkeypatch):
    """Run as inside a course notebook whose first cell set ``KAFKA_VERSION = "4.3"``: helpers
    called without ``kafka_version`` take the notebook's (``course.common.notebook_version``).
    Outside a notebook they refuse to guess (tests/test_course_versions.py)."""
    from kafkasim.course import common

    monkeypatch.setattr(common, "_notebook_namespace", lambda: {"KAFKA_VERSION": "4.3"})
