"""Sweeps on a real Spark cluster: a standalone master and two workers started from PySpark's own
``spark-class`` launcher, and a Spark Connect server started by PySpark's own
``sbin/start-connect-server.sh``, all on 127.0.0.1 (kafkasim.tools.spark_cluster). A sweep on each
gives
the rows of the serial run; a worker on a Python without pyarrow/pandas is refused up front with
an error that says what is missing and how to point the workers at a suitable Python.

One cluster and one Connect server per test module, started at the same time; one application
on the cluster (its executors are JVMs, slow to start); small sweeps (five short runs). Measured
on this 2-core machine while it was shared (load average 10-15): 197 s for the file, of which
about 55 s start-up (not measured on idle cores). Marked ``spark`` and ``slow``;
``make test`` runs both (no marker is deselected there).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from kafkasim.experiments import RunSpec, Sweep, run_sweep
from kafkasim.experiments.spark import LOCAL_JAVA_OPTIONS
from kafkasim.tools.spark_cluster import ConnectServer, StandaloneCluster

pytestmark = [pytest.mark.spark, pytest.mark.slow]

REPO = Path(__file__).resolve().parents[1]
SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.fixture(scope="module")
def python_without_pyarrow(tmp_path_factory):
    """The system Python when it lacks pyarrow (Debian's does), else this interpreter without
    its site-packages (``-S``), behind a wrapper script: a worker Python that cannot run sweeps."""
    probe = [SYSTEM_PYTHON, "-c", "import pyarrow"]
    if os.path.exists(SYSTEM_PYTHON) and subprocess.run(probe, capture_output=True).returncode:
        return SYSTEM_PYTHON
    wrapper = tmp_path_factory.mktemp("python") / "python-without-packages"
    wrapper.write_text(f'#!/bin/sh\nexec {sys.executable} -S "$@"\n')
    wrapper.chmod(0o755)
    return str(wrapper)


def small_specs() -> list[RunSpec]:
    """Four short generated runs with random crashes, and a scenario run."""
    specs = Sweep({"duration_ms": 3000, "drain_ms": 1000, "workload": {"rate": 10},
                   "kafka_version": "3.7", "check": True, "trace_digest": True,
                   "broker": {"zookeeper.session.timeout.ms": 2000},
                   "faults": {"kind": "crash", "rate_per_min": 30, "down_ms": [500, 1500]}},
                  {"producer.acks": ["1", "all"]}, seeds=2).specs
    specs.append(RunSpec(seed=7, scenario="offline-unclean-on", check=True, run_id=len(specs),
                         params={"producer.acks": "scenario"}))
    return specs


@pytest.fixture(scope="module")
def serial_rows():
    return run_sweep(small_specs(), mode="serial", progress=False)


@pytest.fixture(scope="module")
def services():
    """The standalone cluster and the Connect server, started at the same time (JVM start-up
    is most of their cost) and stopped after the module."""
    from concurrent.futures import ThreadPoolExecutor

    cluster, server = StandaloneCluster(workers=2, cores=1), ConnectServer(master="local[2]")
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(cluster.start), pool.submit(server.start)]
    try:
        for f in futures:
            f.result()
        yield cluster, server
    finally:
        cluster.stop()
        server.stop()


@pytest.fixture(scope="module")
def standalone(services):
    return services[0]


@pytest.fixture(scope="module")
def connect_server(services):
    return services[1]


# Runs in a fresh process: this process already has its local[*] SparkContext (one per JVM).
# PYSPARK_PYTHON in its environment names a Python without pandas/pyarrow; the session's
# spark.pyspark.python (the venv's) must win, and the sweep runs. Then, on the same executors (one
# application: executors are JVMs, slow to start), Python functions are sent with the other
# interpreter (SparkContext.pythonExec, what PySpark takes from PYSPARK_PYTHON when a context
# starts): the check refuses them before any run ships. The two executors run the client compiler
# only, like every other JVM of this machine kafkasim starts (LOCAL_JAVA_OPTIONS): 10.3 and 10.2
# CPU-s each before, 5.8 and 6.0 after, the rest of the file unchanged (docs/testing.md).
CLUSTER_SCRIPT = textwrap.dedent("""
    import json, os, sys
    from kafkasim.experiments import spark as kspark
    from kafkasim.experiments import RunSpec, run_sweep
    from kafkasim.experiments import distributed

    master = sys.argv[1]
    bad_python = os.environ["PYSPARK_PYTHON"]
    specs = [RunSpec.from_json(s) for s in json.load(sys.stdin)]
    out = {}
    spark = kspark.session(master=master, conf={
        "spark.cores.max": "2", "spark.executor.memory": "512m",
        "spark.executor.extraJavaOptions": kspark.LOCAL_JAVA_OPTIONS,
        "spark.pyspark.python": sys.executable})
    out["shipped"] = distributed.ship_package(spark)
    out["workers"] = sorted({r["python"] for r in distributed.check_workers(spark)})
    out["rows"] = run_sweep(specs, mode="spark", spark=spark, progress=False).to_json(
        orient="records")
    spark.sparkContext.pythonExec = bad_python
    distributed._checked.pop(spark, None)
    try:
        run_sweep(specs, mode="spark", spark=spark, progress=False)
        out["bad"] = None
    except distributed.WorkerEnvironmentError as exc:
        out["bad"] = str(exc)
    kspark.stop()
    print("RESULT " + json.dumps(out))
""")


def test_standalone_cluster_sweep_and_worker_python_check(standalone, serial_rows,
                                                           python_without_pyarrow):
    specs = small_specs()
    env = {**os.environ, "KAFKASIM_TESTING": "1", "PYSPARK_PYTHON": python_without_pyarrow}
    env.pop("SPARK_REMOTE", None)
    env.pop("KAFKASIM_SPARK_MASTER", None)
    done = subprocess.run([sys.executable, "-c", CLUSTER_SCRIPT, standalone.url],
                          input=json.dumps([s.to_json() for s in specs]), capture_output=True,
                          text=True, env=env, timeout=300, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:] + "\n" + standalone.log_tail()
    result = json.loads(done.stdout.strip().splitlines()[-1].removeprefix("RESULT "))

    # spark.pyspark.python won over PYSPARK_PYTHON: kafkasim shipped as a zip, rows identical
    assert result["workers"] == [sys.executable]
    assert result["shipped"] == "addPyFile"
    assert json.loads(result["rows"]) == json.loads(serial_rows.to_json(orient="records"))

    # the system Python lacks pyarrow and pandas: refused before any run, with the way out
    bad = result["bad"]
    assert bad is not None, "a worker without pyarrow was accepted"
    assert python_without_pyarrow in bad and "No module named 'pyarrow'" in bad
    assert "spark.pyspark.python" in bad and "PYSPARK_PYTHON" in bad


def test_connect_server_sweep(connect_server, serial_rows):
    """Through a Spark Connect client in this process (pure gRPC: no second JVM here)."""
    from pyspark.sql.connect.session import SparkSession as RemoteSession

    from kafkasim.experiments.distributed import check_workers, is_connect, ship_package

    spark = RemoteSession.builder.remote(connect_server.url).getOrCreate()
    try:
        assert is_connect(spark)
        reports = check_workers(spark)
        assert {r["python"] for r in reports} == {sys.executable}
        assert ship_package(spark) == "addArtifacts"
        rows = run_sweep(small_specs(), mode="spark", spark=spark, progress=False)
    finally:
        spark.stop()
    assert json.loads(rows.to_json(orient="records")) == \
        json.loads(serial_rows.to_json(orient="records"))


def _java_command_lines(service) -> list[list[str]]:
    """The command lines of the java processes in the process groups ``service`` started."""
    groups = {proc.pid for proc in service._procs.procs.values()}
    out = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and os.getpgid(int(entry.name)) in groups:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
                if argv and argv[0].endswith(b"java"):
                    out.append([a.decode() for a in argv])
        except OSError:
            pass    # gone meanwhile
    return out


def test_the_launchers_jvms_run_the_client_compiler_only(standalone, connect_server):
    """The master's, the workers' and the Connect server's JVMs got LOCAL_JAVA_OPTIONS (an
    executor a worker started for an application takes the application's options)."""
    daemons = {"org.apache.spark.deploy.master.Master": 1,
               "org.apache.spark.deploy.worker.Worker": standalone.workers,
               "org.apache.spark.deploy.SparkSubmit": 1}
    lines = _java_command_lines(standalone) + _java_command_lines(connect_server)
    found = {cls: [argv for argv in lines if cls in argv] for cls in daemons}
    assert {cls: len(found[cls]) for cls in daemons} == daemons, lines
    assert all(set(LOCAL_JAVA_OPTIONS.split()) <= set(argv)
               for argv in sum(found.values(), [])), lines
