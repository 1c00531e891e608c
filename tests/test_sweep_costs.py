"""Sweeps choosing serial or Spark from measured costs, an honest ETA, the executor package zip's
file safety, and the worker check's message (no JVM needed here; test_spark_cluster.py runs the
real thing)."""

from __future__ import annotations

import io
import os
import stat
import sys
import tempfile
import zipfile

import pytest

from kafkasim.experiments import Sweep, run_sweep
from kafkasim.experiments import distributed as dist
from kafkasim.experiments import runner as runner_mod
from kafkasim.experiments.costs import Costs
from kafkasim.experiments.progress import Progress

# --- the choice between serial and Spark ----------------------------------------------------------


def test_costs_choose_spark_only_when_it_pays():
    costs = Costs(session_s=8.0, first_job_s=5.0, job_s=0.4, cores=2, efficiency=0.9)
    # 128 runs of 0.2 s: 25.6 s serially; a warm session does them in ~17 s: Spark
    assert costs.choose_spark(128, 0.2, ready=True)
    # the same sweep with the session still to start (13 s more): serial
    assert not costs.choose_spark(128, 0.2, ready=False)
    # nearly ready (2 s left): Spark
    assert costs.choose_spark(128, 0.2, ready=False, starting_s=2.0)
    # a few short runs never pay a job's overhead
    assert not costs.choose_spark(4, 0.2, ready=True)
    # the estimate is never below the work divided by the cores
    assert costs.spark_s(1000, 0.1) >= 1000 * 0.1 / 2


def test_costs_learn_the_efficiency_from_a_spark_sweep():
    costs = Costs(job_s=0.5, efficiency=0.8)
    costs.learn(runs=100, s_per_run=0.2, spark_wall_s=20.5, cores=2)   # 20 s of work on 2
    assert costs.efficiency == pytest.approx(0.5)
    costs.learn(runs=100, s_per_run=0.2, spark_wall_s=10.5, cores=2)   # then at full speed
    assert costs.efficiency == pytest.approx(0.75)


class _Start:
    """A background start that is ready, with a session the runner takes for alive."""

    def __init__(self):
        import threading

        self.ready, self.error, self.spark = True, None, object()
        self.done = threading.Event()
        self.done.set()


def test_auto_measures_serial_runs_then_hands_the_rest_to_spark(monkeypatch):
    from kafkasim.experiments import costs

    specs = Sweep({"duration_ms": 1000, "drain_ms": 200, "check": False},
                  {"producer.acks": ["1", "all"]}, seeds=3).specs
    monkeypatch.setattr(costs, "COSTS", Costs(job_s=0.0, cores=2, efficiency=1.0))
    monkeypatch.setattr(dist, "current_start", lambda: _Start())
    monkeypatch.setattr(runner_mod, "_have_pyspark", lambda: True)
    monkeypatch.setattr(runner_mod, "_alive", lambda spark: True)
    monkeypatch.setattr(dist, "default_parallelism", lambda spark: 2)
    handed = []

    def fake_run_spark(rest, *, spark, progress, chunk_size, parallelism):
        handed.extend(s.run_id for s in rest)
        rows = runner_mod.run_serial(rest)
        progress(len(rows), 0)
        return runner_mod.rows_frame(rows)

    monkeypatch.setattr(dist, "run_spark", fake_run_spark)
    out = run_sweep(specs, progress=False)
    assert out.attrs["mode"] == "serial+spark"
    assert out.attrs["serial_runs"] == 1
    assert handed == [s.run_id for s in specs[1:]]
    serial = run_sweep(specs, mode="serial", progress=False)
    assert out.equals(serial)


def test_auto_stays_serial_when_spark_would_not_pay(monkeypatch):
    from kafkasim.experiments import costs

    specs = Sweep({"duration_ms": 500, "drain_ms": 100, "check": False},
                  {"producer.acks": ["1", "all"]}, seeds=2).specs
    # a session would take minutes to start: never started, everything serial
    monkeypatch.setattr(costs, "COSTS", Costs(session_s=600.0, first_job_s=60.0, cores=2))
    monkeypatch.setattr(dist, "current_start", lambda: None)
    monkeypatch.setattr(runner_mod, "_have_pyspark", lambda: True)

    def refuse(*a, **k):
        raise AssertionError("Spark was started for a sweep it cannot pay for")

    monkeypatch.setattr(dist, "prepare", refuse)
    out = run_sweep(specs, progress=False)
    assert out.attrs["mode"] == "serial" and len(out) == 4


# --- the ETA --------------------------------------------------------------------------------------


class Clock:
    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


def test_eta_ignores_the_time_spent_waiting_for_spark():
    """Today's overestimate came from counting the JVM start in the rate. 30 s of waiting,
    then 128 runs at 4 runs/s: the ETA at each point is the true time left, within 5 %."""
    clock = Clock()
    bar = Progress(128, "loss", enabled=False, clock=clock)
    bar.phase("waiting for Spark: starting the session (a JVM)")
    clock.now += 30
    bar.phase("on Spark", eta_s=40.0)
    assert bar.eta_s() == pytest.approx(40.0)     # the estimate given, until runs finish
    for done in range(16, 128, 16):
        clock.now += 4.0
        bar.update(done)
        truth = (128 - done) / 4.0
        assert bar.eta_s() == pytest.approx(truth, rel=0.05)
    clock.now += 4.0
    bar.update(128)
    assert bar.eta_s() == 0.0


def test_status_line_says_what_it_waits_for():
    stream = io.StringIO()
    bar = Progress(10, "loss: 10 runs (spark)", enabled=True, stream=stream, clock=Clock())
    bar.phase("waiting for Spark: starting the session (a JVM) (3 s so far)")
    assert "waiting for Spark: starting the session" in stream.getvalue()


# --- the package zip shipped to executors ------------------------------------------------------


def test_package_zip_is_private_fresh_and_verified(monkeypatch):
    # a file planted at the old, predictable path is never used
    shared = os.path.join(tempfile.gettempdir(), "kafkasim-pyfiles")
    zipped = dist.package_zip()
    assert not zipped.startswith(shared + os.sep)
    directory = os.path.dirname(zipped)
    assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(zipped).st_mode) == 0o600
    with zipfile.ZipFile(zipped) as zf:
        names = zf.namelist()
    assert "kafkasim/experiments/runner.py" in names and not any(".pyc" in n for n in names)
    again = dist.package_zip()
    assert again != zipped and again.sha256 == zipped.sha256   # built afresh, same content
    zipped.verify()
    with open(zipped, "r+b") as f:   # tampered with after it was built: refused
        f.seek(100)
        f.write(b"\0")
    with pytest.raises(RuntimeError, match="changed after it was built"):
        zipped.verify()


class _FakeSparkContext:
    master = "spark://127.0.0.1:7077"

    def __init__(self):
        self.shipped = []

    def addPyFile(self, path):
        with open(path, "rb") as f:
            self.shipped.append(f.read())


class _FakeSession:
    def __init__(self):
        self.sparkContext = _FakeSparkContext()


def test_ship_package_verifies_before_shipping(monkeypatch):
    spark = _FakeSession()
    zipped = dist.package_zip()
    calls = []

    class Tampered(dist.PackageZip):
        def verify(self):
            calls.append(self)
            raise RuntimeError("changed after it was built")

    monkeypatch.setattr(dist, "package_zip", lambda: Tampered(str(zipped), zipped.sha256))
    with pytest.raises(RuntimeError, match="changed after it was built"):
        dist.ship_package(spark)
    assert calls and spark.sparkContext.shipped == []


# --- the worker check's message --------------------------------------------------------------


def test_worker_check_explains_what_is_missing_and_the_way_out():
    driver = list(sys.version_info[:3])
    good = {"host": "w1", "python": sys.executable, "version": driver, "missing": {},
            "modules": {}}
    assert dist._explain([good]) is None
    bad = {"host": "w2", "python": "/usr/bin/python3", "version": driver, "modules": {},
           "missing": {"pyarrow": "ModuleNotFoundError: No module named 'pyarrow'"}}
    text = dist._explain([good, bad, bad])
    assert text.count("/usr/bin/python3 (Python") == 1   # one line per distinct problem
    assert "No module named 'pyarrow'" in text and "on w2" in text
    assert "spark.pyspark.python" in text and "PYSPARK_PYTHON" in text
    other = {**good, "version": [3, 10, 12]}
    assert "same minor version" in dist._explain([other])


def test_probe_is_shipped_by_value():
    """The probe must run where kafkasim cannot be imported: cloudpickle ships it by value."""
    from pyspark import cloudpickle

    probe = dist._probe_function()
    data = cloudpickle.dumps(probe)
    assert b"kafkasim.experiments.distributed" not in data
    report = probe(0)
    assert '"missing": {}' in report
