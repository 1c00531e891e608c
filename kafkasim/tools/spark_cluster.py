"""A real Spark standalone cluster and a Spark Connect server on this machine, from PySpark's own
launchers, for tests, benchmarks and trying the cluster path offline.

    >>> from kafkasim.tools.spark_cluster import StandaloneCluster, ConnectServer
    >>> with StandaloneCluster(workers=2) as cluster:       # master + 2 workers on 127.0.0.1
    ...     spark = kafkasim.experiments.spark.session(master=cluster.url)   # spark://127.0.0.1:<port>
    >>> with ConnectServer(master="local[2]") as server:    # sbin/start-connect-server.sh --wait
    ...     spark = kafkasim.experiments.spark.session(remote=server.url)    # sc://127.0.0.1:<port>

Each process is what an operator would start: ``bin/spark-class
org.apache.spark.deploy.master.Master`` / ``...deploy.worker.Worker`` and
``sbin/start-connect-server.sh``, from the pip-installed PySpark's ``SPARK_HOME``, bound to
127.0.0.1 on free ports, with their work, log and pid directories in one private temporary
directory (``mkdtemp``) that is removed afterwards. ``stop()`` ends each process group it started
(and only those). Logs: ``<tmp>/<name>.log``; ``log_tail()`` shows their ends when something
fails.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from kafkasim.experiments.spark import LOCAL_JAVA_OPTIONS

__all__ = ["ConnectServer", "StandaloneCluster", "free_port", "spark_home"]

LOOPBACK = "127.0.0.1"


def spark_home() -> Path:
    """The SPARK_HOME of the installed pyspark (its bin/ and sbin/ hold the launchers)."""
    from pyspark.find_spark_home import _find_spark_home

    return Path(_find_spark_home())


def free_port() -> int:
    """A TCP port free on 127.0.0.1 right now (the OS picks it)."""
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return s.getsockname()[1]


def _listening(port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.2)
        return s.connect_ex((LOOPBACK, port)) == 0


class _Processes:
    """Processes started in their own sessions, with logs in a private temporary directory."""

    def __init__(self, prefix: str, python: str | None) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix=prefix))
        self.python = python or sys.executable
        self.procs: dict[str, subprocess.Popen] = {}

    def env(self) -> dict[str, str]:
        env = dict(os.environ)
        for key in ("SPARK_REMOTE", "SPARK_CONNECT_MODE", "PYSPARK_SUBMIT_ARGS", "MASTER"):
            env.pop(key, None)
        env.update({
            "SPARK_HOME": str(spark_home()),
            "SPARK_LOCAL_IP": LOOPBACK,
            "SPARK_LOG_DIR": str(self.dir / "logs"),
            "SPARK_PID_DIR": str(self.dir / "pids"),
            "SPARK_CONF_DIR": str(self.dir / "conf"),   # empty: no stray spark-env.sh
            "PYSPARK_PYTHON": self.python,
            # the master's and workers' JVMs (spark-class reads it for the daemons)
            "SPARK_DAEMON_JAVA_OPTS": LOCAL_JAVA_OPTIONS,
        })
        (self.dir / "conf").mkdir(exist_ok=True)
        return env

    def start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        log = open(self.dir / f"{name}.log", "wb")   # noqa: SIM115 - kept by the child
        try:
            self.procs[name] = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                env=env or self.env(), cwd=self.dir, start_new_session=True)
        finally:
            log.close()

    def wait_for(self, what: str, ready, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if ready():
                return
            for name, proc in self.procs.items():
                if proc.poll() is not None:
                    raise RuntimeError(f"{name} exited with status {proc.returncode} before "
                                       f"{what} was ready:\n{self.log_tail(name)}")
            time.sleep(0.1)
        raise TimeoutError(f"{what} not ready after {timeout:.0f} s:\n{self.log_tail()}")

    def log_tail(self, name: str | None = None, lines: int = 30) -> str:
        names = [name] if name else list(self.procs)
        out = []
        for n in names:
            path = self.dir / f"{n}.log"
            text = path.read_text(errors="replace").splitlines() if path.exists() else []
            out.append(f"--- {path} (last {lines} lines)\n" + "\n".join(text[-lines:]))
        return "\n".join(out)

    def stop(self) -> None:
        for proc in reversed(list(self.procs.values())):
            if proc.poll() is None:
                try:
                    os.killpg(proc.pid, signal.SIGTERM)   # the group this object started
                except ProcessLookupError:
                    pass
        for proc in self.procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(proc.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                proc.wait(timeout=5)
        self.procs.clear()
        shutil.rmtree(self.dir, ignore_errors=True)


class _Service:
    """What a started service offers: its private directory, its log, stop, and ``with``."""

    _procs: _Processes

    @property
    def directory(self) -> Path:
        return self._procs.dir

    def start(self):
        raise NotImplementedError

    def log_tail(self, lines: int = 30) -> str:
        return self._procs.log_tail(lines=lines)

    def stop(self) -> None:
        self._procs.stop()

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


class StandaloneCluster(_Service):
    """A Spark standalone master and ``workers`` workers (``cores`` each) on 127.0.0.1.

    ``python``: the interpreter the workers' environment names in ``PYSPARK_PYTHON`` (default:
    this one). Note that PySpark's executors run the *driver's* ``PYSPARK_PYTHON`` /
    ``spark.pyspark.python`` when the driver sets one.
    """

    def __init__(self, workers: int = 2, cores: int = 1, memory: str = "1g",
                 python: str | None = None, timeout: float = 120.0) -> None:
        self.workers, self.cores, self.memory, self.timeout = workers, cores, memory, timeout
        self._procs = _Processes("kafkasim-standalone-", python)
        self.port = free_port()
        self.url = f"spark://{LOOPBACK}:{self.port}"

    def start(self) -> StandaloneCluster:
        spark_class = str(spark_home() / "bin" / "spark-class")
        procs = self._procs
        try:
            procs.start("master", [spark_class, "org.apache.spark.deploy.master.Master",
                                   "--host", LOOPBACK, "--port", str(self.port),
                                   "--webui-port", str(free_port())])
            procs.wait_for("the master", lambda: _listening(self.port), self.timeout)
            for i in range(self.workers):
                work = self.directory / f"work-{i}"
                work.mkdir()
                procs.start(f"worker-{i}", [
                    spark_class, "org.apache.spark.deploy.worker.Worker",
                    "--host", LOOPBACK, "--port", str(free_port()),
                    "--webui-port", str(free_port()), "--cores", str(self.cores),
                    "--memory", self.memory, "--work-dir", str(work), self.url])
            procs.wait_for(f"{self.workers} registered worker(s)",
                           lambda: self._registered() >= self.workers, self.timeout)
        except BaseException:
            self.stop()
            raise
        return self

    def _registered(self) -> int:
        log = self.directory / "master.log"
        text = log.read_text(errors="replace") if log.exists() else ""
        return text.count("Registering worker ")


class ConnectServer(_Service):
    """A Spark Connect server (``sbin/start-connect-server.sh --wait``) on 127.0.0.1.

    ``master``: the Spark it runs jobs on (``local[2]``, or a standalone cluster's URL);
    ``python``: its Python workers' interpreter (``PYSPARK_PYTHON`` in its environment).
    """

    def __init__(self, master: str = "local[2]", python: str | None = None,
                 conf: dict[str, str] | None = None, timeout: float = 180.0) -> None:
        self.master, self.timeout = master, timeout
        self.conf = dict(conf or {})
        self._procs = _Processes("kafkasim-connect-", python)
        self.port = free_port()
        self.url = f"sc://{LOOPBACK}:{self.port}"

    def start(self) -> ConnectServer:
        conf = {
            "spark.connect.grpc.binding.address": LOOPBACK,
            "spark.connect.grpc.binding.port": str(self.port),
            "spark.driver.host": LOOPBACK,
            "spark.driver.bindAddress": LOOPBACK,
            "spark.ui.enabled": "false",
            "spark.ui.showConsoleProgress": "false",
            "spark.sql.session.timeZone": "UTC",
            "spark.driver.extraJavaOptions": LOCAL_JAVA_OPTIONS,
            **self.conf,
        }
        argv = [str(spark_home() / "sbin" / "start-connect-server.sh"), "--wait",
                "--master", self.master]
        for key, value in conf.items():
            argv += ["--conf", f"{key}={value}"]
        try:
            self._procs.start("connect-server", argv)
            self._procs.wait_for("the Spark Connect server", lambda: _listening(self.port),
                                 self.timeout)
        except BaseException:
            self.stop()
            raise
        return self
