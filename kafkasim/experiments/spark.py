"""The one way kafkasim gets a Spark session: ``kafkasim.experiments.spark.session()``.

Experiments run seeded simulations as Spark DataFrame jobs (``mapInPandas`` over a DataFrame of
run specs), so the same code runs embedded on this machine, on a Spark cluster, or against a Spark
Connect server. Where it runs is chosen here, in this order:

1. ``session(remote="sc://host:15002")`` or ``session(master="spark://host:7077")``;
2. the ``SPARK_REMOTE`` environment variable (Spark Connect; ``local[*]`` starts a local server);
3. the ``KAFKASIM_SPARK_MASTER`` environment variable (any ``spark.master`` URL);
4. ``local[*]``: embedded, all cores, bound to 127.0.0.1.

A JVM takes seconds to start, so one session is created per process and reused; ``stop()`` ends it.
pyspark is imported only when a session is asked for, so ``import kafkasim`` never needs Java.

The JVM this process starts (local mode, a cluster's driver, a local Connect server) writes its
output (log4j at ``spark.log.level``, WARN by default, the JVM's own warnings, the Python workers'
stderr) to ``log_path()``, a file in a private temporary directory, not to this process's stderr:
in a notebook that output would read like a failure. ``log_path()`` says where it went.

The Python that runs the runs on the executors is ``spark.pyspark.python`` when given in ``conf``
(applied here as ``PYSPARK_PYTHON``, which PySpark hands to the executors), else the
``PYSPARK_PYTHON`` environment variable; for local sessions it is this interpreter.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # pragma: no cover
    from pyspark.sql import SparkSession

__all__ = ["SparkTarget", "log_path", "resolve_target", "session", "stop", "testing"]

DEFAULT_MASTER = "local[*]"
LOOPBACK = "127.0.0.1"
#: The JIT of a JVM kafkasim starts on this machine (a classic session's driver, a local Spark
#: Connect server, ``kafkasim.tools.spark_cluster``'s daemons): the client compiler only. Such a
#: JVM's own work is short (start-up, scheduling, Arrow batches to and from the Python workers,
#: which run the simulations); the server compiler recompiling it costs CPU that the sweep then
#: lacks on a machine of a few cores. A local session and 64 sweep runs on 2 cores: the JVM 23.6
#: -> 13.4 CPU-s, the sweep 14.8 -> 13.7 s of wall time (docs/testing.md, "The whole machine's
#: CPU"). A conf with its own ``spark.driver.extraJavaOptions`` replaces this.
LOCAL_JAVA_OPTIONS = "-XX:TieredStopAtLevel=1"


@dataclass(frozen=True)
class SparkTarget:
    """Where a session runs: ``kind`` is "master" (classic Spark) or "remote" (Spark Connect)."""

    kind: str
    url: str
    source: str = field(default="default", compare=False)

    @property
    def is_local(self) -> bool:
        """True when Spark runs inside this machine (local master or a local Connect server)."""
        return self.url.startswith("local")

    def __str__(self) -> str:
        return f"{self.kind}={self.url} (from {self.source})"


def resolve_target(master: str | None = None, remote: str | None = None) -> SparkTarget:
    """Decide where Spark runs from the arguments, then SPARK_REMOTE, then KAFKASIM_SPARK_MASTER."""
    if master and remote:
        raise ValueError(f"give master= or remote=, not both ({master=!r}, {remote=!r})")
    env_remote = os.environ.get("SPARK_REMOTE")
    if master and env_remote:
        # pyspark's builder switches to Spark Connect whenever SPARK_REMOTE is set, so an explicit
        # master could not win; say so instead of silently connecting somewhere else.
        raise ValueError(
            f"master={master!r} was requested but SPARK_REMOTE={env_remote!r} is set; "
            "unset SPARK_REMOTE to use a master URL"
        )
    if remote:
        return SparkTarget("remote", remote, "argument")
    if master:
        return SparkTarget("master", master, "argument")
    if env_remote:
        return SparkTarget("remote", env_remote, "SPARK_REMOTE")
    env_master = os.environ.get("KAFKASIM_SPARK_MASTER")
    if env_master:
        return SparkTarget("master", env_master, "KAFKASIM_SPARK_MASTER")
    return SparkTarget("master", DEFAULT_MASTER, "default")


def testing() -> bool:
    """True under CI, pytest or nbval (notebooks/conftest.py sets KAFKASIM_TESTING for kernels)."""
    ci = os.environ.get("CI", "").strip().lower()
    return (
        ci not in ("", "0", "false", "no")
        or "PYTEST_CURRENT_TEST" in os.environ
        or bool(os.environ.get("KAFKASIM_TESTING"))
        or "pytest" in sys.modules
    )


def _local_conf(app_name: str) -> dict[str, str]:
    """Settings for a Spark that runs on this machine (classic local mode or local Connect)."""
    conf = {
        "spark.app.name": app_name,
        # Loopback only: nothing here needs to be reachable from another host.
        "spark.driver.host": LOOPBACK,
        "spark.driver.bindAddress": LOOPBACK,
        # No web UI: nobody looks at it in a course, and it would take a port.
        "spark.ui.enabled": "false",
        # Python workers must be this interpreter (the course venv), not any python3 on PATH.
        "spark.pyspark.python": sys.executable,
        "spark.pyspark.driver.python": sys.executable,
    }
    conf.update(_common_conf())
    if testing():
        # The [Stage 0:>  (0 + 2) / 2] bar only clutters test logs and notebook outputs.
        conf["spark.ui.showConsoleProgress"] = "false"
    return conf


def _common_conf() -> dict[str, str]:
    """Runtime settings that are safe to send to any session, local or remote."""
    return {
        # Timestamps render the same everywhere: a run is a pure function of its inputs.
        "spark.sql.session.timeZone": "UTC",
        "spark.sql.execution.arrow.pyspark.enabled": "true",
    }


_log_dir: str | None = None


def log_path() -> str:
    """Where the JVM started by this process writes its output (a private temporary directory,
    removed when the process exits)."""
    global _log_dir
    if _log_dir is None:
        _log_dir = tempfile.mkdtemp(prefix="kafkasim-spark-")
        atexit.register(shutil.rmtree, _log_dir, True)
    return os.path.join(_log_dir, "spark.log")


def _launch_jvm(options: dict[str, str]) -> None:
    """Start PySpark's JVM gateway with its stdout and stderr going to ``log_path()``.

    ``SparkContext._ensure_initialized`` reuses a gateway that is already there, so the session
    built next runs in this JVM. Settings that only apply at JVM launch (extraJavaOptions,
    driver memory) are passed as ``--conf``, as pyspark's own ``launch_gateway`` does.
    """
    from pyspark import SparkConf, SparkContext
    from pyspark.java_gateway import launch_gateway

    if SparkContext._gateway is not None:
        return
    conf = SparkConf(loadDefaults=False)
    conf.setAll(list(options.items()))
    with open(log_path(), "ab") as log:
        gateway = launch_gateway(conf, popen_kwargs={"stdout": log, "stderr": log})
    SparkContext._ensure_initialized(gateway=gateway)


@contextlib.contextmanager
def _jvm_output_to_log(target: SparkTarget):
    """A local Spark Connect server's JVM is launched by pyspark itself (the launcher must see
    the Connect settings it passes), so its output is redirected here instead: this process's
    stdout and stderr file descriptors point at ``log_path()`` while it starts, and the JVM
    keeps them. Python-level output (sys.stderr in a notebook) does not go through them."""
    from pyspark import SparkContext

    if target.kind != "remote" or not target.is_local or SparkContext._gateway is not None:
        yield
        return
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (AttributeError, ValueError, OSError):
            pass
    saved = [os.dup(1), os.dup(2)]
    log = os.open(log_path(), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.dup2(log, 1)
        os.dup2(log, 2)
        yield
    finally:
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        for fd in (*saved, log):
            os.close(fd)


_lock = threading.Lock()
_session: SparkSession | None = None
_target: SparkTarget | None = None


def _is_alive(spark: Any) -> bool:
    if getattr(spark, "is_stopped", False):  # Spark Connect session
        return False
    sc = getattr(spark, "_sc", None)  # classic session: stopped when its context has no JVM handle
    return sc is None or getattr(sc, "_jsc", None) is not None


def session(
    master: str | None = None,
    app_name: str = "kafkasim",
    *,
    remote: str | None = None,
    conf: dict[str, str] | None = None,
) -> SparkSession:
    """Return this process's Spark session, starting it on first use.

    With no arguments, an existing session is returned as is. Asking for a different master or
    remote than the running session's is an error: call ``stop()`` first.
    """
    global _session, _target
    with _lock:
        asked = master is not None or remote is not None
        target = resolve_target(master, remote)
        if _session is not None and _is_alive(_session):
            if asked and target != _target:
                raise RuntimeError(
                    f"a Spark session is already running here ({_target}); "
                    f"call kafkasim.experiments.spark.stop() before asking for {target}"
                )
            return _session

        if target.is_local:
            # Read by Spark's launcher scripts and by the workers it forks.
            os.environ.setdefault("SPARK_LOCAL_IP", LOOPBACK)
            os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

        from pyspark.sql import SparkSession

        options = _local_conf(app_name) if target.is_local else _common_conf()
        if not target.is_local and target.kind == "master":
            options["spark.app.name"] = app_name
        if target.kind == "master" or target.is_local:
            # a JVM on this machine: a classic session's driver (any master), a local server
            options.setdefault("spark.log.level", "WARN")
            options.setdefault("spark.driver.extraJavaOptions", LOCAL_JAVA_OPTIONS)
        options.update(conf or {})
        if target.kind == "master" and (conf or {}).get("spark.pyspark.python"):
            # PySpark reads the executors' Python from PYSPARK_PYTHON when the context starts
            # (SparkContext.pythonExec); spark-submit does the same with this setting.
            os.environ["PYSPARK_PYTHON"] = options["spark.pyspark.python"]
        if target.kind == "master":
            _launch_jvm(options)

        builder = SparkSession.builder
        if target.kind == "remote":
            builder = builder.remote(target.url)
            if not target.is_local:
                builder = builder.appName(app_name)
        else:
            builder = builder.master(target.url)
        for key, value in options.items():
            builder = builder.config(key, value)

        with warnings.catch_warnings(), _jvm_output_to_log(target):
            # A local Connect server is started with these settings, then the client re-applies
            # them as runtime settings and warns that the static ones cannot change. They did apply.
            warnings.filterwarnings("ignore", ".*CANNOT_MODIFY_CONFIG", UserWarning)
            _session = builder.getOrCreate()
        _target = target
        return _session


#: called by ``stop()`` before the session goes down, outside its lock: ``distributed`` ends its
#: background start (``SparkStart``) here, so that no warm-up job is cut off by the shutdown
_before_stop: list = []

#: what pyspark prints while the session it runs a job on is shut down: the job's own error is
#: raised (and kept by whoever ran it), so these would only repeat it as a screen of Java stack
#: trace in the cell that called ``stop()``
_SHUTDOWN_WARNINGS = (r"(?s).*toPandas attempted Arrow optimization",
                      r"(?s).*Exception transpiling UDF")
_QUIET_LOGGERS = ("py4j", "py4j.clientserver", "py4j.java_gateway", "pyspark")


@contextlib.contextmanager
def _quiet_shutdown():
    """py4j's and pyspark's loggers, and pyspark's warnings about a job cut off by the shutdown,
    stay quiet while the session goes down (warnings filters are process-wide, so this covers a
    background thread whose job the shutdown cancels)."""
    import logging

    loggers = [logging.getLogger(name) for name in _QUIET_LOGGERS]
    levels = [lg.level for lg in loggers]
    for lg in loggers:
        lg.setLevel(logging.CRITICAL + 1)
    try:
        with warnings.catch_warnings():
            for message in _SHUTDOWN_WARNINGS:
                warnings.filterwarnings("ignore", message, UserWarning)
            yield
    finally:
        for lg, level in zip(loggers, levels, strict=True):
            lg.setLevel(level)


def _cancel_jobs(spark: Any) -> None:
    """Cancel every job still running on ``spark`` (best effort: it may be going down)."""
    try:
        if type(spark).__module__.startswith("pyspark.sql.connect"):
            if not getattr(spark, "is_stopped", False):
                spark.interruptAll()
        elif _is_alive(spark):
            spark.sparkContext.cancelAllJobs()
    except Exception:   # noqa: BLE001 - stopping anyway
        pass


def stop() -> None:
    """Stop this process's session (if any), so the next ``session()`` starts afresh.

    Quietly: a background start still warming up (``distributed.prepare()``) is ended first and
    waited for, jobs still running are cancelled, and what py4j and pyspark would print about
    the jobs the shutdown cuts off stays out of this process's output."""
    global _session, _target
    with _quiet_shutdown():
        for hook in list(_before_stop):
            hook()
        with _lock:
            if _session is not None:
                _cancel_jobs(_session)
                _session.stop()
            _session = None
            _target = None
