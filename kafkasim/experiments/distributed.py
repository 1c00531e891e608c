"""Running specs as Spark jobs, with the DataFrame API only (no SparkContext on the job path).

Each job is ``spark.range(n)`` split into tasks (two per core) and
``mapInPandas(run_indexed_specs_partition)`` with the chunk's spec JSONs shipped inside the
function: each task runs its slice of specs on a Python worker, with no DataFrame of specs to
build and no shuffle to spread it. Being DataFrame-only, the same code runs on ``local[*]``, a
cluster master URL and Spark Connect. The kafkasim package reaches the workers by the means
each mode supports:

* classic local mode: the workers are this machine's interpreter (the venv kafkasim is
  installed in), nothing to ship;
* classic cluster (``spark://``, YARN, Kubernetes, ``local-cluster``): a zip of the package via
  ``SparkContext.addPyFile``;
* Spark Connect (``sc://`` or a local Connect server): the zip via
  ``spark.addArtifacts(zip, pyfile=True)``.

The sweep runs in chunks, two Spark jobs in flight at a time (so no core waits for a chunk's
slowest run). Each job costs the JVM about 0.2 s of CPU (scheduling, the closure, Arrow), which
on 2 cores is what stood between Spark and twice the serial speed, so classic Spark gets few,
large jobs (``costs.CHUNKS_CLASSIC``, progress from the status tracker's finished tasks) and
Spark Connect, which has no status tracker, more of them (``costs.CHUNKS_CONNECT``: progress
per chunk).
"""

from __future__ import annotations

import atexit
import functools
import hashlib
import itertools
import json
import math
import os
import shutil
import sys
import tempfile
import threading
import time
import weakref
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from kafkasim.experiments.costs import TASKS_PER_CORE, chunk_count
from kafkasim.experiments.runner import rows_frame, run_indexed_specs_partition, spark_schema
from kafkasim.experiments.spec import RunSpec

__all__ = ["WORKER_MODULES", "PackageZip", "SparkStart", "WorkerEnvironmentError", "check_workers",
           "current_start", "prepare",
           "default_parallelism", "is_connect", "package_zip", "run_spark", "ship_package",
           "warm_up"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def is_connect(spark) -> bool:
    """True for a Spark Connect session (pyspark.sql.connect)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


class PackageZip(str):
    """The path of a built package zip (a ``str``), with the SHA-256 of its bytes."""

    sha256: str

    def __new__(cls, path: str, sha256: str) -> PackageZip:
        obj = super().__new__(cls, path)
        obj.sha256 = sha256
        return obj

    def verify(self) -> None:
        """Raise unless the file still holds exactly the bytes that were built."""
        with open(self, "rb") as f:
            found = hashlib.sha256(f.read()).hexdigest()
        if found != self.sha256:
            raise RuntimeError(f"the kafkasim package zip {self} changed after it was built "
                               f"(sha256 {found[:16]}, built {self.sha256[:16]}); not shipping it")


def _package_bytes() -> bytes:
    """The kafkasim package as it is here, as zip bytes: fixed entry order and timestamps."""
    import io

    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for root, dirs, names in os.walk(PACKAGE_DIR):
            dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
            for name in sorted(names):
                if name.startswith(".") or name.endswith(_SKIP_SUFFIXES):
                    continue
                path = Path(root) / name
                info = zipfile.ZipInfo(path.relative_to(PACKAGE_DIR.parent).as_posix(),
                                       date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, path.read_bytes())
    return buffer.getvalue()


_zip_dir: str | None = None


def package_zip() -> PackageZip:
    """A zip of the kafkasim package (importable as ``kafkasim``), built afresh in a private
    temporary directory of this process (``mkdtemp``: mode 0700, a name nobody can predict),
    written with ``O_EXCL`` and then read back and checked against the SHA-256 of the bytes
    built. Nothing is ever reused from a shared or predictable path: a file planted there by
    another user could otherwise reach every executor. The directory goes when the process
    exits."""
    global _zip_dir
    data = _package_bytes()
    digest = hashlib.sha256(data).hexdigest()
    if _zip_dir is None:
        _zip_dir = tempfile.mkdtemp(prefix="kafkasim-pyfiles-")
        atexit.register(shutil.rmtree, _zip_dir, True)
    # The name carries the hash (Spark refuses a second file of the same name with new content)
    # plus a counter, so a rebuild never opens an existing file.
    for n in itertools.count():
        path = os.path.join(_zip_dir, f"kafkasim-{digest[:16]}-{n}.zip")
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            continue
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        break
    out = PackageZip(path, digest)
    out.verify()
    return out


_shipped: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
_ship_lock = threading.Lock()


def ship_package(spark) -> str:
    """Make kafkasim importable on the session's Python workers; returns how ("installed",
    "addPyFile" or "addArtifacts"). Done once per session."""
    with _ship_lock:
        done = _shipped.get(spark)
        if done is not None:
            return done
        if is_connect(spark):
            zipped = package_zip()
            zipped.verify()   # just before it leaves this machine
            spark.addArtifacts(str(zipped), pyfile=True)
            how = "addArtifacts"
        else:
            master = spark.sparkContext.master
            if master == "local" or master.startswith("local["):
                how = "installed"   # workers run this interpreter, with kafkasim installed
            else:
                zipped = package_zip()
                zipped.verify()
                spark.sparkContext.addPyFile(str(zipped))
                how = "addPyFile"
        _shipped[spark] = how
        return how


def default_parallelism(spark) -> int:
    """How many runs the session can do at once (tasks per chunk)."""
    if not is_connect(spark):
        return max(1, spark.sparkContext.defaultParallelism)
    conf = spark.conf
    value = conf.get("spark.default.parallelism", None)
    if value:
        return max(1, int(value))
    master = conf.get("spark.master", None) or ""
    if master.startswith("local["):
        n = master[len("local["):].split(",")[0].rstrip("]")
        return os.cpu_count() or 1 if n == "*" else max(1, int(n))
    if master == "local":
        return 1
    return 2


#: What a run needs on an executor besides the standard library and kafkasim itself:
#: mapInPandas moves rows as Arrow batches (pyarrow) into pandas DataFrames (pandas, numpy).
WORKER_MODULES = ("numpy", "pandas", "pyarrow")

# Compiled into a function of a module that does not exist, so that cloudpickle ships it by value:
# the probe must run where kafkasim (or pandas) cannot be imported, to say so. It goes through a
# plain pickled Python UDF (useArrow=False), the one Python path that needs no pyarrow.
_PROBE_SOURCE = """
def kafkasim_worker_probe(index):
    import importlib, json, socket, sys
    out = {"host": socket.gethostname(), "python": sys.executable,
           "version": list(sys.version_info[:3]), "modules": {}, "missing": {}}
    for name in MODULES + ("kafkasim.experiments.runner",):
        try:
            module = importlib.import_module(name)
        except Exception as exc:
            out["missing"][name.split(".")[0]] = type(exc).__name__ + ": " + str(exc)
        else:
            out["modules"][name] = getattr(module, "__version__", None) or module.__file__
    return json.dumps(out)
"""


def _probe_function():
    namespace = {"__name__": "kafkasim_worker_probe", "MODULES": WORKER_MODULES}
    exec(compile(_PROBE_SOURCE, "<kafkasim worker probe>", "exec"), namespace)
    return namespace["kafkasim_worker_probe"]


_DRIVER_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"


class WorkerEnvironmentError(RuntimeError):
    """Spark's Python workers lack something a run needs; nothing was run."""


_HOW_TO_FIX = (
    "Point the workers at a Python that has kafkasim's requirements (requirements.txt: pandas, "
    "pyarrow, numpy) and the driver's Python version ({driver}): pass "
    "conf={{'spark.pyspark.python': '/path/to/venv/bin/python'}} to "
    "kafkasim.experiments.spark.session() "
    "(spark-submit: --conf spark.pyspark.python=...), or set PYSPARK_PYTHON=/path/to/venv/bin/"
    "python in the driver's environment before the session starts (PySpark hands it to the "
    "executors); for a Spark Connect server, set PYSPARK_PYTHON in the server's environment "
    "(conf/spark-env.sh) and restart it. The path must exist on every worker machine."
)


def _explain(reports: list[dict]) -> str | None:
    """The error text for probe reports, or None when every worker has what runs need."""
    driver = _DRIVER_PYTHON
    problems = []
    for r in reports:
        where = f"{r['python']} (Python {'.'.join(map(str, r['version']))}) on {r['host']}"
        lacks = [f"{name} ({why})" for name, why in sorted(r["missing"].items())]
        if lacks:
            problems.append(f"{where} cannot import " + ", ".join(lacks))
        elif f"{r['version'][0]}.{r['version'][1]}" != driver:
            problems.append(f"{where}: the driver runs Python {driver}, PySpark needs the same "
                            "minor version on both sides")
    if not problems:
        return None
    unique = list(dict.fromkeys(problems))
    return ("Spark's Python workers cannot run kafkasim sweeps; nothing was run.\n  "
            + "\n  ".join(unique) + "\n" + _HOW_TO_FIX.format(driver=driver))


_checked: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def check_workers(spark, parallelism: int | None = None) -> list[dict]:
    """Ask every core's Python worker what it can import, before any run is shipped; raise
    ``WorkerEnvironmentError`` naming what is missing where (and how to point the workers at a
    suitable Python) instead of letting each task fail inside the worker. Once per session;
    returns the workers' reports."""
    from pyspark.sql.types import StringType

    if is_connect(spark):   # a Connect session in a process where SPARK_REMOTE is not set too
        from pyspark.sql.connect.functions import udf
    else:
        from pyspark.sql.functions import udf
    done = _checked.get(spark)
    if done is not None:
        return done
    ship_package(spark)
    n = parallelism or default_parallelism(spark)
    probe = udf(_probe_function(), StringType(), useArrow=False)
    try:
        rows = spark.range(0, n, 1, n).select(probe("id").alias("report")).collect()
    except Exception as exc:
        driver = _DRIVER_PYTHON
        text = str(exc)
        if len(text) > 1500:
            text = text[:1500] + " ..."
        raise WorkerEnvironmentError(
            "Spark's Python workers could not even start the kafkasim probe; nothing was run "
            f"(a different Python version than the driver's {driver}, or no pyspark there?).\n  "
            f"{type(exc).__name__}: {text}\n" + _HOW_TO_FIX.format(driver=driver)) from exc
    reports = [json.loads(r["report"]) for r in rows]
    problem = _explain(reports)
    if problem is not None:
        raise WorkerEnvironmentError(problem)
    _checked[spark] = reports
    return reports


def _import_probe(batches):
    """mapInPandas function: import the kafkasim sweep code on a worker, say where it came from."""
    import pandas as pd

    import kafkasim.experiments.runner as runner

    for batch in batches:
        yield pd.DataFrame({"id": batch["id"], "origin": runner.__file__})


def warm_up(spark, parallelism: int | None = None) -> list[str]:
    """Check the workers (``check_workers``), then run a trivial mapInPandas job on every core
    so that the Python workers are started, have imported kafkasim and have been through the
    Arrow path once; returns where each worker imported kafkasim from (the installed package,
    or the zip)."""
    check_workers(spark, parallelism)
    n = parallelism or default_parallelism(spark)
    out = (spark.range(0, n, 1, n).mapInPandas(_import_probe, "id long, origin string")
           .toPandas())
    return sorted(set(out["origin"]))


def _cancel(spark) -> None:
    try:
        if is_connect(spark):
            spark.interruptAll()
        else:
            spark.sparkContext.cancelAllJobs()
    except Exception:  # best effort while already failing
        pass


class _TaskProgress:
    """Classic Spark only: runs finished inside chunks still running, from the status tracker
    (each chunk's jobs carry a job group; a finished task of the last stage finished about
    chunk size / tasks runs). Spark Connect has no status tracker: whole chunks only."""

    def __init__(self, spark) -> None:
        self.tracker = None if is_connect(spark) else spark.sparkContext.statusTracker()
        self.groups: dict[str, tuple[int, int]] = {}   # group -> (runs, tasks)

    def runs_done(self) -> int:
        if self.tracker is None:
            return 0
        total = 0
        try:
            for group, (runs, tasks) in list(self.groups.items()):
                stages = []
                for job in self.tracker.getJobIdsForGroup(group):
                    info = self.tracker.getJobInfo(job)
                    if info is not None:
                        stages += list(info.stageIds)
                if not stages:
                    continue
                stage = self.tracker.getStageInfo(max(stages))
                if stage is not None and tasks:
                    total += stage.numCompletedTasks * runs // tasks
        except Exception:   # progress is cosmetic: never fail a sweep over it
            return 0
        return total


def run_spark(specs: Sequence[RunSpec], *, spark=None, master: str | None = None,
              progress: Callable[[int, int], None] | None = None,
              chunk_size: int | None = None, parallelism: int | None = None,
              max_in_flight: int = 2):
    """Run specs as Spark jobs; returns the result rows as a pandas DataFrame (any order).

    The specs go in chunks (default: ``costs.chunk_count``: ``CHUNKS_CLASSIC`` or, on Spark
    Connect, ``CHUNKS_CONNECT`` of them, at least 16 runs per core each), each one job of
    ``costs.TASKS_PER_CORE`` tasks per core (``parallelism``, default: the session's cores), with
    ``max_in_flight`` jobs at a time.
    """
    import pandas as pd

    if spark is None:
        from kafkasim.experiments import spark as kspark

        # our progress display replaces Spark's console bar (applies when the session starts)
        spark = kspark.session(master, conf={"spark.ui.showConsoleProgress": "false"})
    if not specs:
        return rows_frame([])
    check_workers(spark, parallelism)
    cores = parallelism or default_parallelism(spark)
    tasks = _TaskProgress(spark)
    # few large jobs: each costs the JVM ~0.2 s (costs.CHUNKS_CLASSIC)
    size = chunk_size or math.ceil(len(specs) / chunk_count(len(specs), cores,
                                                             connect=tasks.tracker is None))
    chunks = [list(specs[i:i + size]) for i in range(0, len(specs), size)]
    schema = spark_schema()
    sweep_id = hashlib.sha256(repr((id(specs), time.perf_counter())).encode()).hexdigest()[:12]

    def run_chunk(index: int, chunk: list[RunSpec]) -> pd.DataFrame:
        parts = min(TASKS_PER_CORE * cores, len(chunk))   # small tasks: an even end
        if tasks.tracker is not None:
            group = f"kafkasim-sweep-{sweep_id}-{index}"
            spark.sparkContext.setJobGroup(group, f"kafkasim sweep: runs {chunk[0].run_id}.."
                                                  f"{chunk[-1].run_id}", True)
            tasks.groups[group] = (len(chunk), parts)
        # The specs travel with the function; spark.range gives each task a contiguous slice
        # of indexes without a shuffle (one stage per job).
        runs = functools.partial(run_indexed_specs_partition, [s.to_json() for s in chunk])
        try:
            return (spark.range(0, len(chunk), 1, parts)
                    .mapInPandas(runs, schema)
                    .toPandas())
        finally:
            if tasks.tracker is not None:
                tasks.groups.pop(group, None)   # the next chunk on this thread sets its own

    frames = []
    done = errors = 0
    shown = 0
    pool = ThreadPoolExecutor(max_workers=max(1, max_in_flight),
                              thread_name_prefix="kafkasim-sweep")
    pending: dict = {}
    try:
        pending = {pool.submit(run_chunk, i, chunk): chunk for i, chunk in enumerate(chunks)}
        while pending:
            finished, _ = wait(pending, timeout=0.5, return_when=FIRST_COMPLETED)
            for fut in finished:
                chunk = pending.pop(fut)
                try:
                    frame = fut.result()
                except Exception as exc:
                    ids = f"{chunk[0].run_id}..{chunk[-1].run_id}"
                    raise RuntimeError(f"the Spark job for runs {ids} failed (a run's own "
                                       f"errors become error rows, so this is Spark or the "
                                       f"workers): {type(exc).__name__}: {exc}") from exc
                frames.append(frame)
                done += len(frame)
                errors += int((frame["status"] != "ok").sum())
            now = max(shown, min(len(specs), done + (tasks.runs_done() if pending else 0)))
            if progress is not None and (finished or now > shown):
                progress(now, errors)
            shown = now
    except BaseException:
        for fut in pending:
            fut.cancel()
        _cancel(spark)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return pd.concat(frames, ignore_index=True)


I18N_CONTEXT = "kafkasim.experiments"   # gettext msgctxt of describe's messages (notebook.py's)


def _english(message: str, /, **fields) -> str:
    return message.format(**fields) if fields else message


def N_(message: str, /) -> str:
    """Marks a message for ``scripts/i18n.py`` (translated where it is shown: ``describe``)."""
    return message


class SparkStart:
    """A Spark session and its warm-up job started in a background thread (``prepare()``), so
    that a sweep does not wait for the JVM and the Python workers; the costs it measures
    (session start, first job, a warm job) go to ``costs.COSTS``."""

    PHASES = (N_("starting the Spark session (a JVM)"),
              N_("starting Spark's Python workers and checking them (pandas, pyarrow, "
                 "kafkasim)"),
              N_("ready"), N_("failed"), N_("stopped"))

    def __init__(self, master: str | None = None, remote: str | None = None,
                 conf: dict[str, str] | None = None) -> None:
        self.master, self.remote, self.conf = master, remote, dict(conf or {})
        self.started = time.perf_counter()
        self.phase = self.PHASES[0]
        self.spark = None
        self.error: BaseException | None = None
        self.done = threading.Event()
        self._stopping = threading.Event()   # spark.stop() while starting: end quietly
        self._session = None                 # the session being warmed up
        self._listeners: list[Callable[[SparkStart], None]] = []
        self._thread = threading.Thread(target=self._run, name="kafkasim-spark-start",
                                        daemon=True)
        self._thread.start()

    @property
    def ready(self) -> bool:
        return self.done.is_set() and self.error is None and not self.stopped

    @property
    def stopped(self) -> bool:
        """Ended by ``spark.stop()`` before it was ready."""
        return self.phase == self.PHASES[4]

    def usable(self) -> bool:
        """Still starting, or ready with its session still running (not ``spark.stop()``-ed)."""
        if not self.done.is_set():
            return True
        from kafkasim.experiments import spark as kspark

        return self.ready and kspark._is_alive(self.spark) and \
            kspark._session is self.spark   # noqa: SLF001

    @property
    def elapsed_s(self) -> float:
        return time.perf_counter() - self.started

    def remaining_s(self) -> float:
        """Estimated seconds until ready (0 when done)."""
        from kafkasim.experiments.costs import COSTS

        if self.done.is_set():
            return 0.0
        return max(1.0, COSTS.start_s() - self.elapsed_s)

    def on_change(self, callback: Callable[[SparkStart], None]) -> None:
        """Call ``callback(self)`` at each phase change (and now)."""
        self._listeners.append(callback)
        callback(self)

    def _set(self, phase: str) -> None:
        self.phase = phase
        for callback in list(self._listeners):
            try:
                callback(self)
            except Exception:   # a display problem must not stop Spark starting
                pass

    def _run(self) -> None:
        from kafkasim.experiments import spark as kspark
        from kafkasim.experiments.costs import COSTS

        try:
            t0 = time.perf_counter()
            fresh = kspark._session is None   # noqa: SLF001 - only to label the measurement
            spark = kspark.session(self.master, remote=self.remote,
                                   conf={"spark.ui.showConsoleProgress": "false", **self.conf})
            self._session = spark
            if fresh:
                COSTS.session_s = time.perf_counter() - t0
            self._check_stopping()
            self._set(self.PHASES[1])
            t1 = time.perf_counter()
            cores = default_parallelism(spark)
            warm_up(spark, cores)
            COSTS.first_job_s = time.perf_counter() - t1
            self._check_stopping()
            t2 = time.perf_counter()
            warm_up(spark, cores)
            COSTS.job_s = time.perf_counter() - t2
            self._check_stopping()
            COSTS.cores = cores
            self.spark = spark
            self.done.set()
            self._set(self.PHASES[2])
        except BaseException as exc:   # reported by describe() and to the sweep that waits
            if self._stopping.is_set():   # cut off by spark.stop(): not a failure
                self.done.set()
                self._set(self.PHASES[4])
                return
            self.error = exc
            self.done.set()
            self._set(self.PHASES[3])

    def _check_stopping(self) -> None:
        if self._stopping.is_set():
            raise _StartStopped

    def end(self, timeout: float = 120.0) -> None:
        """End a start still under way (``spark.stop()`` calls this first): no further job is
        started, the one running is cancelled, and this returns once the background thread has
        finished (or after ``timeout`` seconds). A start that is done is left as it is."""
        if self.done.is_set():
            return
        self._stopping.set()
        deadline = time.perf_counter() + timeout
        while self._thread.is_alive() and time.perf_counter() < deadline:
            if self._session is not None:
                _cancel(self._session)   # again each round: a job may start after a cancel
            self._thread.join(0.2)

    def wait(self, timeout: float | None = None):
        """Wait until ready; returns the session, or raises what made the start fail."""
        self.done.wait(timeout)
        if self.error is not None:
            raise self.error
        return self.spark

    def describe(self, tr: Callable[..., str] | None = None) -> str:
        """One line: starting (which phase, for how long), ready, or why it failed, and where
        Spark's own log is. ``tr`` translates the line (``kafkasim.course.i18n.tr``, passed
        by the notebook helpers; this module does not import the course): English without."""
        from kafkasim.experiments import spark as kspark

        tr = tr or _english
        if self.stopped:
            return tr("Spark was stopped before it was ready; sweeps run serially. Spark's own "
                      "log: {log}", log=kspark.log_path())
        if self.error is not None:
            return tr("Spark could not start ({error}: {detail}); sweeps run serially. "
                      "Spark's log: {log}", error=type(self.error).__name__,
                      detail=str(self.error)[:300], log=kspark.log_path())
        if self.ready:
            from kafkasim.experiments.costs import COSTS

            return tr("Spark is ready ({cores} cores, started in {seconds:.0f} s); Spark's own "
                      "log: {log}", cores=COSTS.cores, seconds=self.elapsed_s,
                      log=kspark.log_path())
        return tr("Spark: {phase}, {seconds:.0f} s so far, in the background: sweeps run "
                  "serially until it is ready. Spark's own log: {log}", phase=tr(self.phase),
                  seconds=self.elapsed_s, log=kspark.log_path())


class _StartStopped(Exception):
    """Raised in the start's thread when ``spark.stop()`` ends it."""


_start: SparkStart | None = None
_start_lock = threading.Lock()


def _end_start() -> None:
    """``spark.stop()``'s first step: end the background start, if one is still under way."""
    start = _start
    if start is not None:
        start.end()


def _register_stop_hook() -> None:
    from kafkasim.experiments import spark as kspark

    if _end_start not in kspark._before_stop:   # noqa: SLF001
        kspark._before_stop.append(_end_start)   # noqa: SLF001


_register_stop_hook()


def prepare(master: str | None = None, remote: str | None = None,
            conf: dict[str, str] | None = None) -> SparkStart:
    """Start the Spark session and warm it up in the background (once per process; later calls
    return the same ``SparkStart`` unless the last one failed)."""
    global _start
    with _start_lock:
        if _start is None or _start.error is not None or not _start.usable():
            _start = SparkStart(master, remote, conf)
        return _start


def current_start() -> SparkStart | None:
    """The background start under way, or done with its session still running, if any."""
    start = _start
    if start is None or start.error is not None or start.usable():
        return start   # a failed start is returned too: the sweep reports why it stayed serial
    return None
