"""What a sweep costs in this process, serially and on Spark, and the choice between them.

Spark has fixed costs (start the session's JVM; a first job that starts the Python workers and
imports kafkasim there; then a fraction of a second per job) and a per-run cost (a run's serial
cost divided by the cores, times an efficiency below 1: the JVM, Arrow and the driver take their
share). Serially a run costs what it costs. ``run_sweep(mode="auto")`` measures the serial cost
of the sweep's own first runs, then runs the rest on Spark only when the estimate says Spark
finishes sooner by a margin, and serially otherwise; it keeps running serially while Spark is
still starting. Every figure here is measured in this process when it can be (``COSTS``); the
defaults only stand in until then.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass

__all__ = ["CHUNKS_CLASSIC", "CHUNKS_CONNECT", "COSTS", "TASKS_PER_CORE", "Costs", "MARGIN",
           "chunk_count"]

#: Spark is chosen only when its estimate is at most this fraction of the serial estimate, so a
#: wrong guess does not make a sweep slower than serial.
MARGIN = 0.8

#: Chunks (Spark jobs) ``run_spark`` splits a sweep into: few on classic Spark, where each job
#: costs the JVM ~0.2 s of CPU and the status tracker shows progress inside a job; more on Spark
#: Connect, which has no status tracker (progress per finished chunk only). Each chunk at least
#: 16 runs per core. ``TASKS_PER_CORE``: tasks per core in each job (an even end).
#: Measured on 2 cores, 1,000 runs (benchmarks/bench_sweep.py's n1000, warm session): 10 chunks
#: of 4 tasks 33.4 s wall and 3.9 s of JVM CPU; 2 chunks of 8 tasks 31.6 s and 1.0 s; serially
#: 64.9 s.
CHUNKS_CLASSIC = 2
CHUNKS_CONNECT = 10
TASKS_PER_CORE = 4


def chunk_count(runs: int, cores: int, connect: bool = False) -> int:
    """How many chunks (jobs) ``run_spark`` makes of ``runs`` runs on ``cores`` cores."""
    wanted = CHUNKS_CONNECT if connect else CHUNKS_CLASSIC
    return max(1, min(wanted, math.ceil(runs / (16 * max(1, cores)))))


@dataclass
class Costs:
    """Measured costs (seconds). ``None``: not measured yet in this process."""

    session_s: float | None = None     # kafkasim.experiments.spark.session() on a fresh process
    first_job_s: float | None = None   # the first job: Python workers start, check, import
    job_s: float | None = None         # one job on a warm session (per-job overhead)
    cores: int | None = None           # the session's cores (tasks at once)
    efficiency: float = 0.8            # serial cost / (Spark cost x cores), per run
    runs_measured: int = 0             # runs that measured the efficiency

    # Stand-ins until measured: local mode on a 2-core machine (benchmarks/bench_sweep.py).
    DEFAULT_SESSION_S = 10.0
    DEFAULT_FIRST_JOB_S = 6.0
    DEFAULT_JOB_S = 0.5

    def start_s(self) -> float:
        """Seconds until a Spark session not started yet could take work."""
        return (self.session_s if self.session_s is not None else self.DEFAULT_SESSION_S) + \
            (self.first_job_s if self.first_job_s is not None else self.DEFAULT_FIRST_JOB_S)

    def spark_s(self, runs: int, s_per_run: float, cores: int | None = None) -> float:
        """Estimated seconds for ``runs`` runs on a warm session, in chunks as ``run_spark``
        makes them on classic Spark (``chunk_count``; two jobs in flight, each paying the
        per-job overhead, ``TASKS_PER_CORE`` tasks per core in each)."""
        cores = max(1, cores or self.cores or 1)
        job = self.job_s if self.job_s is not None else self.DEFAULT_JOB_S
        chunks = chunk_count(runs, cores)
        per_task = math.ceil(runs / chunks) / (TASKS_PER_CORE * cores) * s_per_run \
            / self.efficiency
        # overheads of the jobs in sequence, the work, and the last task's uneven end
        return job * math.ceil(chunks / 2) + runs * s_per_run / (cores * self.efficiency) \
            + per_task / 2

    def learn(self, runs: int, s_per_run: float, spark_wall_s: float, cores: int) -> None:
        """Update the efficiency from a sweep's Spark part: ``runs`` runs of ``s_per_run``
        serial seconds each took ``spark_wall_s`` on ``cores`` cores."""
        job = self.job_s if self.job_s is not None else self.DEFAULT_JOB_S
        work = max(spark_wall_s - job, 1e-3)
        measured = min(1.0, max(0.2, runs * s_per_run / (cores * work)))
        weight = runs / (runs + self.runs_measured) if self.runs_measured else 1.0
        with _lock:
            self.efficiency += weight * (measured - self.efficiency)
            self.runs_measured += runs

    def choose_spark(self, remaining: int, s_per_run: float, *, ready: bool,
                     starting_s: float | None = None) -> bool:
        """Should the remaining runs go to Spark? ``ready``: a warm session is there;
        ``starting_s``: seconds until one under way is ready (None: nothing under way, start
        costs apply in full)."""
        if remaining <= 0:
            return False
        serial = remaining * s_per_run
        wait = 0.0 if ready else (starting_s if starting_s is not None else self.start_s())
        return wait + self.spark_s(remaining, s_per_run) <= MARGIN * serial


_lock = threading.Lock()

#: The costs measured in this process.
COSTS = Costs()
