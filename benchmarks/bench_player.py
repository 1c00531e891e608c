"""Player responsiveness: seeking (scrubbing the time slider) and redrawing after one step.

A 3-broker cluster, one topic with 3 partitions (replication factor 3), a producer (acks=all,
linger.ms=5) sending ``RATE`` records/s spread over the partitions for 60 simulated seconds,
recorded by ``Player(..., every_ms=1000)`` (a snapshot per simulated second).

* Seek: ``player.seek(t)`` to ``seeks`` random times of the run (seeded): restore the nearest
  snapshot, replay up to 1 s. Target: < 200 ms per seek (median; the worst is reported too).
* Redraw after one step: at random points (shown first), ``player.step()`` then what the widget
  does to show it: the readout text and the figure as PNG (``player.png()``: the replica logs of
  partition 0, redrawn only when what they show changed, which most single events do not).
  Reported as the median over steps, the median of the steps that did change the figure, and a
  full redraw forced after every step (figure + PNG). Target: < 100 ms (median).
* Checks: the first invariant violation is searched on a second copy of the run with every
  check of ``kafkasim.observe.checks`` after every event; the time to check the whole 60 s is
  reported.

Each figure is wall time (what a learner waits) and CPU time of this process (steadier on a
shared machine); the load average at the start is reported with them.

* Interaction latency (``benchmarks/interaction.py``, keys ``nbNN_…``): seek, step, fault and
  explorer change through the widgets' own callbacks on the notebooks' scenarios, p50/p95
  against the issue-15 targets and against the pre-issue-15 drawing measured in the same run.
"""

from __future__ import annotations

import os
import random
import statistics
import time

from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload
from kafkasim.widgets import Player

TARGET_SEEK_MS = 200.0
TARGET_REDRAW_MS = 100.0
RATE = 100            # records per second, over 3 partitions: "moderate" for a notebook


def build(duration_ms: int, checks: bool = False) -> Player:
    c = Cluster(brokers=3, seed=1)
    c.create_topic("t", partitions=3, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    RateWorkload(c, p, "t", rate=RATE, duration_ms=duration_ms)
    return Player(c, topic="t", partition=0, every_ms=1000, checks=checks)


def _timed(fn) -> tuple[float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def _ms(xs: list[float], how=statistics.median) -> float:
    return round(how(xs) * 1000, 2) if xs else 0.0


def run(quick: bool = False) -> dict:
    duration_ms = 5_000 if quick else 60_000
    seeks = 5 if quick else 40
    steps = 5 if quick else 60
    out: dict = {"duration_ms": duration_ms, "rate_records_per_s": RATE, "partitions": 3,
                 "every_ms": 1000, "load_average_1min": round(os.getloadavg()[0], 2)}
    pl = build(duration_ms)
    wall, cpu = _timed(lambda: pl.run(duration_ms))
    out["record_wall_s"] = round(wall, 3)
    out["record_sim_s_per_wall_s"] = round(duration_ms / 1000 / wall, 2)
    out["snapshots"] = len(pl.history.times)
    out["snapshot_kb_last"] = round(len(pl.history.snaps[-1].blob) / 1024, 1)

    rng = random.Random(1)
    lo, hi = pl.start_ms, pl.horizon
    seek_w, seek_c = [], []
    for _ in range(seeks):
        t = rng.randrange(lo, hi + 1)
        w, c = _timed(lambda t=t: pl.seek(t))
        assert pl.now == t
        seek_w.append(w)
        seek_c.append(c)
    out["seek_wall_ms_median"] = _ms(seek_w)
    out["seek_wall_ms_max"] = _ms(seek_w, max)
    out["seek_cpu_ms_median"] = _ms(seek_c)
    out["seek_cpu_ms_max"] = _ms(seek_c, max)

    pl.png()            # warm-up: font caches, the Figure
    redraw_w, redraw_c, changed_w, changed_c, forced_w, forced_c = [], [], [], [], [], []

    def show():
        pl.readout_text()
        pl.png()

    def forced():
        pl._frames.fig_key = None   # what a redraw costs when the logs did change
        pl._frames.pngs.clear()
        pl.png()

    for _ in range(steps):
        pl.seek(rng.randrange(lo, hi))
        show()                      # the widget shows the state before the step
        before = pl._frames.fig_key
        pl.step()
        w, c = _timed(show)
        redraw_w.append(w)
        redraw_c.append(c)
        if pl._frames.fig_key != before:
            changed_w.append(w)
            changed_c.append(c)
        w, c = _timed(forced)
        forced_w.append(w)
        forced_c.append(c)
    out["redraw_after_step_wall_ms_median"] = _ms(redraw_w)
    out["redraw_after_step_cpu_ms_median"] = _ms(redraw_c)
    out["redraw_after_step_wall_ms_max"] = _ms(redraw_w, max)
    out["steps_that_changed_the_figure"] = len(changed_w)
    out["redraw_changed_wall_ms_median"] = _ms(changed_w)
    out["redraw_changed_cpu_ms_median"] = _ms(changed_c)
    out["redraw_forced_wall_ms_median"] = _ms(forced_w)
    out["redraw_forced_cpu_ms_median"] = _ms(forced_c)

    checked = build(duration_ms, checks=True)
    checked.run(duration_ms)
    w, c = _timed(checked.first_violation)
    out["check_whole_run_wall_s"] = round(w, 3)
    out["check_whole_run_cpu_s"] = round(c, 3)
    out["first_violation"] = str(getattr(checked.first_violation(), "invariant", "none"))

    from benchmarks import interaction

    out.update(interaction.run(quick))
    out["target_seek_ms"] = TARGET_SEEK_MS
    out["target_redraw_ms"] = TARGET_REDRAW_MS
    out["meets_target_seek"] = out["seek_wall_ms_median"] < TARGET_SEEK_MS
    out["meets_target_seek_cpu"] = out["seek_cpu_ms_median"] < TARGET_SEEK_MS
    out["meets_target_redraw"] = out["redraw_after_step_wall_ms_median"] < TARGET_REDRAW_MS
    out["meets_target_redraw_forced_cpu"] = out["redraw_forced_cpu_ms_median"] < TARGET_REDRAW_MS
    return out


if __name__ == "__main__":
    import sys

    for key, value in run(quick="--quick" in sys.argv).items():
        print(f"{key:40} {value}")
