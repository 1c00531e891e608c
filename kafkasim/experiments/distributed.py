"""Running specs as Spark jobs, with the DataFrame API only (no SparkContext on the job path).

The specs become a DataFrame of ``(run_id, spec JSON)`` rows, spread round-robin over the
cluster's cores (``repartition``), and ``mapInPandas(run_specs_partition)`` runs each one on a
Python worker. Being DataFrame-only, the same code runs on ``local[*]``, a cluster master URL and
Spark Connect. The kafkasim package reaches the workers by the means each mode supports:

* classic local mode: the workers are this machine's interpreter (the venv kafkasim is
  installed in), nothing to ship;
* classic cluster (``spark://``, YARN, Kubernetes, ``local-cluster``): a zip of the package via
  ``SparkContext.addPyFile``;
* Spark Connect (``sc://`` or a local Connect server): the zip via
  ``spark.addArtifacts(zip, pyfile=True)``.

The sweep runs in chunks, two Spark jobs in flight at a time (so no core waits for a chunk's
slowest run); progress advances as each chunk finishes.
"""

from __future__ import annotations

import hashlib
import math
import os
import tempfile
import threading
import time
import weakref
import zipfile
from collections.abc import Callable, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from pathlib import Path

from kafkasim.experiments.runner import rows_frame, run_specs_partition, spark_schema
from kafkasim.experiments.spec import RunSpec

__all__ = ["default_parallelism", "is_connect", "package_zip", "run_spark", "ship_package",
           "warm_up"]

PACKAGE_DIR = Path(__file__).resolve().parents[1]
_SKIP_DIRS = {"__pycache__"}
_SKIP_SUFFIXES = (".pyc", ".pyo")


def is_connect(spark) -> bool:
    """True for a Spark Connect session (pyspark.sql.connect)."""
    return type(spark).__module__.startswith("pyspark.sql.connect")


def package_zip(directory: str | Path | None = None) -> Path:
    """A zip of the kafkasim package as it is here (importable as ``kafkasim``), built once per
    content: fixed entry order and timestamps, file name carrying the content hash."""
    files = []
    for root, dirs, names in os.walk(PACKAGE_DIR):
        dirs[:] = sorted(d for d in dirs if d not in _SKIP_DIRS and not d.startswith("."))
        for name in sorted(names):
            if name.startswith(".") or name.endswith(_SKIP_SUFFIXES):
                continue
            path = Path(root) / name
            files.append((path.relative_to(PACKAGE_DIR.parent).as_posix(), path.read_bytes()))
    digest = hashlib.sha256()
    for arc, data in files:
        digest.update(arc.encode() + b"\0" + hashlib.sha256(data).digest())
    out_dir = Path(directory) if directory is not None else \
        Path(tempfile.gettempdir()) / "kafkasim-pyfiles"
    out_dir.mkdir(parents=True, exist_ok=True)
    target = out_dir / f"kafkasim-{digest.hexdigest()[:16]}.zip"
    if not target.exists():
        tmp = target.with_name(target.name + f".{os.getpid()}.tmp")
        with zipfile.ZipFile(tmp, "w", zipfile.ZIP_DEFLATED) as zf:
            for arc, data in files:
                info = zipfile.ZipInfo(arc, date_time=(1980, 1, 1, 0, 0, 0))
                info.external_attr = 0o644 << 16
                info.compress_type = zipfile.ZIP_DEFLATED
                zf.writestr(info, data)
        os.replace(tmp, target)
    return target


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
            spark.addArtifacts(str(package_zip()), pyfile=True)
            how = "addArtifacts"
        else:
            master = spark.sparkContext.master
            if master == "local" or master.startswith("local["):
                how = "installed"   # workers run this interpreter, with kafkasim installed
            else:
                spark.sparkContext.addPyFile(str(package_zip()))
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


def _import_probe(batches):
    """mapInPandas function: import the kafkasim sweep code on a worker, say where it came from."""
    import pandas as pd

    import kafkasim.experiments.runner as runner

    for batch in batches:
        yield pd.DataFrame({"id": batch["id"], "origin": runner.__file__})


def warm_up(spark, parallelism: int | None = None) -> list[str]:
    """Run a trivial job on every core so that the Python workers are started and have imported
    kafkasim; returns where each worker imported it from (the installed package, or the zip)."""
    ship_package(spark)
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

    The specs go in chunks (default: a tenth of the sweep, at least two runs per core), each
    one job of ``parallelism`` tasks (default: the session's cores), ``max_in_flight`` jobs at
    a time.
    """
    import pandas as pd

    if spark is None:
        from kafkasim import spark as kspark

        # our progress display replaces Spark's console bar (applies when the session starts)
        spark = kspark.session(master, conf={"spark.ui.showConsoleProgress": "false"})
    if not specs:
        return rows_frame([])
    ship_package(spark)
    cores = parallelism or default_parallelism(spark)
    size = chunk_size or max(2 * cores, math.ceil(len(specs) / 10))
    chunks = [list(specs[i:i + size]) for i in range(0, len(specs), size)]
    schema = spark_schema()
    tasks = _TaskProgress(spark)
    sweep_id = hashlib.sha256(repr((id(specs), time.perf_counter())).encode()).hexdigest()[:12]

    def run_chunk(index: int, chunk: list[RunSpec]) -> pd.DataFrame:
        parts = min(cores, len(chunk))
        if tasks.tracker is not None:
            group = f"kafkasim-sweep-{sweep_id}-{index}"
            spark.sparkContext.setJobGroup(group, f"kafkasim sweep: runs {chunk[0].run_id}.."
                                                  f"{chunk[-1].run_id}", True)
            tasks.groups[group] = (len(chunk), parts)
        pdf = pd.DataFrame({"run_id": pd.Series([s.run_id for s in chunk], dtype="int64"),
                            "spec": pd.Series([s.to_json() for s in chunk], dtype="object")})
        df = spark.createDataFrame(pdf, schema="run_id long, spec string")
        try:
            return (df.repartition(parts)
                    .mapInPandas(run_specs_partition, schema)
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
