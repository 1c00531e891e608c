"""kafkasim.experiments.spark: where sessions run, and a real DataFrame job through the shared
session."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import pandas as pd
import pytest

from kafkasim.experiments import spark as kspark
from kafkasim.experiments.spark import SparkTarget, resolve_target

# --- Choosing where Spark runs (no JVM needed) ----------------------------------------------------


@pytest.fixture
def clean_env(monkeypatch):
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.delenv("KAFKASIM_SPARK_MASTER", raising=False)
    return monkeypatch


def test_default_is_local_mode_with_all_cores(clean_env):
    assert resolve_target() == SparkTarget("master", "local[*]")
    assert resolve_target().is_local


def test_master_from_env(clean_env):
    clean_env.setenv("KAFKASIM_SPARK_MASTER", "spark://spark-master:7077")
    target = resolve_target()
    assert (target.kind, target.url, target.source) == (
        "master",
        "spark://spark-master:7077",
        "KAFKASIM_SPARK_MASTER",
    )
    assert not target.is_local


def test_spark_remote_wins_over_master_env(clean_env):
    clean_env.setenv("KAFKASIM_SPARK_MASTER", "local[2]")
    clean_env.setenv("SPARK_REMOTE", "sc://connect-host:15002")
    target = resolve_target()
    assert (target.kind, target.url, target.source) == (
        "remote",
        "sc://connect-host:15002",
        "SPARK_REMOTE",
    )


def test_arguments_win_over_env(clean_env):
    clean_env.setenv("KAFKASIM_SPARK_MASTER", "local[2]")
    assert resolve_target(master="local[1]").url == "local[1]"
    assert resolve_target(remote="sc://elsewhere").kind == "remote"


def test_master_argument_with_spark_remote_set_is_refused(clean_env):
    # pyspark would silently use SPARK_REMOTE instead of the master asked for.
    clean_env.setenv("SPARK_REMOTE", "sc://connect-host:15002")
    with pytest.raises(ValueError, match="unset SPARK_REMOTE"):
        resolve_target(master="local[1]")


def test_master_and_remote_together_are_refused(clean_env):
    with pytest.raises(ValueError, match="not both"):
        resolve_target(master="local[1]", remote="sc://x")


@pytest.mark.parametrize(
    ("value", "expected"), [("true", True), ("1", True), ("false", False), ("0", False)]
)
def test_testing_follows_ci(monkeypatch, value, expected):
    # Outside pytest this is what CI=… decides; inside, pytest itself counts as testing.
    monkeypatch.setenv("CI", value)
    monkeypatch.delenv("KAFKASIM_TESTING", raising=False)
    monkeypatch.delenv("PYTEST_CURRENT_TEST", raising=False)
    monkeypatch.delitem(sys.modules, "pytest")
    assert kspark.testing() is expected


def test_importing_kafkasim_spark_does_not_need_pyspark():
    code = ("import sys; sys.modules['pyspark'] = None; import kafkasim.experiments.spark; "
            "print('imported')")
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "imported"


# --- A real job through the shared session --------------------------------------------------------


def test_map_in_pandas_smoke(spark):
    # Defined inside the test so cloudpickle ships them by value: Spark's workers cannot import
    # modules under tests/ (real experiment code lives in the kafkasim package, which they can).
    def simulate(seed: int, n: int) -> int:
        """A stand-in for a seeded simulation run: deterministic in (seed, n)."""
        rng = random.Random(seed)
        return sum(rng.randrange(100) for _ in range(n))

    def run_specs(batches):
        for batch in batches:
            totals = [simulate(s, n) for s, n in zip(batch["seed"], batch["n"], strict=True)]
            yield pd.DataFrame({"seed": batch["seed"], "total": totals, "python": sys.executable})

    specs = spark.createDataFrame(pd.DataFrame({"seed": range(8), "n": [10, 20] * 4}))
    out = (
        specs.mapInPandas(run_specs, "seed long, total long, python string")
        .toPandas()
        .sort_values("seed", ignore_index=True)
    )
    expected = [simulate(seed, n) for seed, n in zip(range(8), [10, 20] * 4, strict=True)]
    assert out["seed"].tolist() == list(range(8))
    assert out["total"].tolist() == expected
    # Workers ran the venv's interpreter, not whatever python3 is on PATH.
    assert set(out["python"]) == {sys.executable}


def test_session_is_configured_for_tests(spark):
    conf = spark.conf
    assert conf.get("spark.ui.enabled") == "false"
    assert conf.get("spark.ui.showConsoleProgress") == "false"
    assert conf.get("spark.driver.host") == "127.0.0.1"
    assert conf.get("spark.sql.session.timeZone") == "UTC"
    assert spark.sparkContext.master == "local[*]"
    assert spark.sparkContext.defaultParallelism == os.cpu_count()


def test_local_jvm_runs_the_client_compiler_only(spark):
    """LOCAL_JAVA_OPTIONS is on the running JVM's own command line, not only in the conf (an
    option given after the JVM started would be in the conf and do nothing)."""
    bean = spark.sparkContext._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean()
    assert set(kspark.LOCAL_JAVA_OPTIONS.split()) <= set(bean.getInputArguments())


def test_session_is_reused(spark):
    assert kspark.session() is spark
    with pytest.raises(RuntimeError, match="already running"):
        kspark.session(master="local[1]")


# Spark Connect: tests/test_experiments.py (SPARK_REMOTE=local[2]:
# kafkasim.experiments.spark.session() starts
# a local Connect server) and tests/test_spark_cluster.py (a server from start-connect-server.sh).


def test_jvm_output_goes_to_a_private_log_file(spark):
    """Spark's log4j lines and the JVM's own warnings go to kafkasim.experiments.spark.log_path(),
    in a
    directory only this user can read, not to this process's stderr (a notebook's output)."""
    import stat

    path = kspark.log_path()
    assert stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode) == 0o700
    jvm = spark.sparkContext._gateway.proc.pid
    for fd in (1, 2):   # the JVM's stdout and stderr are that file
        assert os.path.realpath(f"/proc/{jvm}/fd/{fd}") == os.path.realpath(path)
    with open(path, errors="replace") as f:
        assert 'Setting Spark log level to "WARN"' in f.read()   # spark.log.level, logged there


# --- Stopping Spark quietly -----------------------------------------------------------------------

_STOP_DURING_WARM_UP = """
import time
from kafkasim.experiments import distributed
from kafkasim.experiments import spark as kspark

start = distributed.prepare()
t = time.perf_counter()
while start.phase != start.PHASES[1] and time.perf_counter() - t < 300:
    time.sleep(0.01)
assert start.phase == start.PHASES[1], start.describe()
time.sleep(0.3)                 # the warm-up's first job is under way
kspark.stop()
print("thread alive:", start._thread.is_alive())
print("stopped:", start.stopped, "error:", start.error)
print("current start:", distributed.current_start())
print(start.describe())
"""


@pytest.mark.spark
def test_stop_during_the_background_warm_up_is_quiet():
    """Notebook 90's last cell stops Spark; when the background start (prepare()) was still
    warming up, pyspark used to print a UserWarning and screens of Java stack trace ("Job
    cancelled because SparkContext was shut down") into that cell, and the start reported a
    failure. stop() now ends the start first (cancels its job, waits for its thread) and keeps
    py4j and pyspark quiet while the session goes down. A process of its own: it stops its
    session, which the shared ``spark`` fixture must keep."""
    env = {k: v for k, v in os.environ.items() if k not in ("SPARK_REMOTE",
                                                             "KAFKASIM_SPARK_MASTER")}
    env["KAFKASIM_TESTING"] = "1"
    done = subprocess.run([sys.executable, "-c", _STOP_DURING_WARM_UP], capture_output=True,
                          text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "", done.stderr[:2000]
    assert "thread alive: False" in done.stdout
    assert "stopped: True error: None" in done.stdout
    assert "current start: None" in done.stdout
    assert "Spark was stopped before it was ready" in done.stdout
