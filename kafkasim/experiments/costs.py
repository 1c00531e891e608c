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

__all__ = ["COSTS", "Costs", "MARGIN"]

#: Spark is chosen only when its estimate is at most this fraction of the serial estimate, so a
#: wrong guess does not make a sweep slower than serial.
MARGIN = 0.8


@dataclass
class Costs:
    """Measured costs (seconds). ``None``: not measured yet in this process."""

    session_s: float | None = None     # kafkasim.spark.session() on a fresh process
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
        """Estimated seconds for ``runs`` runs on a warm session (chunks as ``run_spark`` makes
        them: about ten, two jobs in flight, each paying the per-job overhead)."""
        cores = max(1, cores or self.cores or 1)
        job = self.job_s if self.job_s is not None else self.DEFAULT_JOB_S
        chunks = min(10, max(1, math.ceil(runs / (16 * cores))))
        per_chunk = math.ceil(runs / chunks) / cores * s_per_run / self.efficiency
        # overheads of the jobs in sequence, the work, and the last chunk's uneven end
        return job * math.ceil(chunks / 2) + runs * s_per_run / (cores * self.efficiency) \
            + per_chunk / 2

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
