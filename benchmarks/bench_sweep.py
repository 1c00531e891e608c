"""Sweep throughput: runs per second through Spark local mode vs the serial loop, same process.

The fixed sweep: generated runs of 3 brokers, one partition with replication factor 3, a producer
at 20 records/s for 40 simulated seconds plus a 5 s drain, random broker crashes (6 per minute,
down 2-8 s, ZooKeeper session timeout 6 s), invariant checks off; the grid is acks (1, all) ×
unclean leader election (off, on), seeds until there are ``runs`` runs (1,000; 40 with --quick).
That is about 0.1 s of simulation per run on an idle core: big enough that Spark's per-task and
per-job costs (tens of ms per task, a few hundred ms per job, two jobs in flight, ten chunks) are
small next to the work of a task (about 50 runs, 5 s), small enough that the serial baseline
finishes in about two minutes.

Measured, in this order, in one process:

* Spark's fixed overhead: ``session_start_s`` (``kafkasim.spark.session()`` on a fresh process;
  0 when a session already ran), ``empty_job_cold_s`` (a trivial mapInPandas job on every core:
  starts the Python workers and imports kafkasim there), ``empty_job_warm_s`` (the same again);
* ``spark_runs_per_s``: the sweep through ``run_sweep(mode="spark")`` on the warm session
  (validation, chunked jobs, the join back to the inputs);
* ``serial_runs_per_s``: the same sweep through ``run_sweep(mode="serial")``.

``speedup`` is their ratio, target >= 1.6 on 2 cores for 1,000 runs (``meets_target_speedup``).
``identical`` says whether both gave the same table row for row (they must: runs are pure
functions of their specs).

CPU seconds are reported too: ``serial_cpu_s`` (this process) and ``spark_cpu_s`` (the JVM and
its Python workers, from /proc). They show the work Spark adds, independent of other load.
Other processes on the machine take cores from both paths, and with the kernel's autogroup
scheduling (``/proc/sys/kernel/sched_autogroup_enabled``) CPU is shared per session, so the
driver, JVM and workers together get one session's share under load: the wall-clock speedup
only shows on idle cores. The load average at the start and end is reported with the figures.
"""

from __future__ import annotations

import os
import time

TARGET_SPEEDUP = 1.6
RUNS = 1000
QUICK_RUNS = 40

BASE = {
    "duration_ms": 40000,
    "drain_ms": 5000,
    "check": False,
    "workload": {"rate": 20},
    "broker": {"zookeeper.session.timeout.ms": 6000},
    "faults": {"kind": "crash", "rate_per_min": 6, "down_ms": [2000, 8000], "max_down": 1},
}
GRID = {"producer.acks": ["1", "all"], "topic.unclean.leader.election.enable": [False, True]}


def sweep(runs: int):
    from kafkasim.experiments import Sweep

    return Sweep(BASE, GRID, seeds=1, name="bench").with_runs(runs)


def _proc_cpu_seconds(root_pid: int) -> float:
    """utime + stime (and reaped children's) of a process and all its descendants, from /proc."""
    ticks = os.sysconf("SC_CLK_TCK")
    parents: dict[int, int] = {}
    cpu: dict[int, float] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        pid = int(entry)
        parents[pid] = int(fields[1])
        cpu[pid] = sum(int(x) for x in fields[11:15]) / ticks
    total = 0.0
    for pid in cpu:
        p = pid
        while p > 1 and p != root_pid:
            p = parents.get(p, 0)
        if p == root_pid:
            total += cpu[pid]
    return total


def _jvm_pid(spark) -> int | None:
    proc = getattr(getattr(spark.sparkContext, "_gateway", None), "proc", None)
    return getattr(proc, "pid", None)


def run(quick: bool = False) -> dict:
    os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
    from kafkasim import spark as kspark
    from kafkasim.experiments import run_sweep
    from kafkasim.experiments.distributed import default_parallelism, warm_up

    runs = QUICK_RUNS if quick else RUNS
    sw = sweep(runs)
    load_start = os.getloadavg()[0]

    fresh = kspark._session is None   # noqa: SLF001 - only to label the figure
    t0 = time.perf_counter()
    spark = kspark.session(conf={"spark.ui.showConsoleProgress": "false"})
    session_start_s = time.perf_counter() - t0 if fresh else 0.0
    cores = default_parallelism(spark)
    t0 = time.perf_counter()
    warm_up(spark)
    empty_cold = time.perf_counter() - t0
    t0 = time.perf_counter()
    warm_up(spark)
    empty_warm = time.perf_counter() - t0

    jvm = _jvm_pid(spark)
    cpu0 = _proc_cpu_seconds(jvm) if jvm else float("nan")
    t0 = time.perf_counter()
    on_spark = run_sweep(sw, mode="spark", spark=spark, progress=False)
    spark_s = time.perf_counter() - t0
    spark_cpu = (_proc_cpu_seconds(jvm) - cpu0) if jvm else float("nan")

    t0, c0 = time.perf_counter(), time.process_time()
    serial = run_sweep(sw, mode="serial", progress=False)
    serial_s, serial_cpu = time.perf_counter() - t0, time.process_time() - c0

    speedup = serial_s / spark_s
    return {
        "runs": runs,
        "cores": cores,
        "sim_ms_per_run": int(on_spark["sim_ms"].iloc[0]),
        "events_per_run_mean": round(float(on_spark["events"].mean()), 1),
        "session_start_s": round(session_start_s, 2),
        "empty_job_cold_s": round(empty_cold, 2),
        "empty_job_warm_s": round(empty_warm, 2),
        "spark_s": round(spark_s, 2),
        "serial_s": round(serial_s, 2),
        "spark_runs_per_s": round(runs / spark_s, 2),
        "serial_runs_per_s": round(runs / serial_s, 2),
        "serial_s_per_run": round(serial_s / runs, 4),
        "serial_cpu_s": round(serial_cpu, 2),
        "spark_cpu_s": round(spark_cpu, 2),
        "spark_cpu_per_serial_cpu": round(spark_cpu / serial_cpu, 3),
        "speedup": round(speedup, 3),
        "identical": bool(on_spark.equals(serial)),
        "errors": int((serial["status"] != "ok").sum()),
        "load_avg_start": round(load_start, 2),
        "load_avg_end": round(os.getloadavg()[0], 2),
        "target_speedup": TARGET_SPEEDUP,
        "target_applies_to_runs": RUNS,   # quick sizes are dominated by fixed costs
        "meets_target_speedup": bool(speedup >= TARGET_SPEEDUP),
    }


if __name__ == "__main__":
    import json
    import sys

    print(json.dumps(run(quick="--quick" in sys.argv), indent=2))
