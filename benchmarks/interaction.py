"""In-kernel interaction latency of the course widgets, on the notebooks' own scenarios (issue 15).

What a learner waits for after a click, measured headless through the same widget callbacks a
browser triggers (the player's time slider and its stage's requests: a window's end, a
shift-click on a broker; an explorer's control), from the change to the new state being set on
the widgets. The browser's own share is measured in Chromium (benchmarks/bench_stage.py).

* Player, per scenario: ``seek`` (slider to a random time), ``step`` (the stage's step past the
  end of its window: the next window), ``fault`` (a shift-click pausing a broker at a random
  time: acting in the past forks a new future, so the invariant checks restart too). Targets:
  p95 < 300 ms for step and fault, < 500 ms for a seek. (The baseline of issue 15, PNG frames
  drawn the old way, went with the frames: bench_stage measures the old player in Chromium.)
* Explorer change: notebook 06's alert-rules explorer (built with ``precompute=True`` as the
  notebook does: its cell renders all 12 combinations, reported as ``precompute_wall_s``) and
  notebook 04's positions explorer (sliders, built on demand), a fixed walk over their controls
  (revisits included, as a learner moves back and forth). Target: p95 < 500 ms.

Wall time is what a learner waits; CPU time of this process is the steadier figure on a shared
machine. Both are reported, with the load average.
"""

from __future__ import annotations

import random
import time

TARGETS_MS = {"step": 300.0, "fault": 300.0, "seek": 500.0, "explorer": 500.0}
SCENARIOS = (  # (scenario, show_isr, notebook, topic): as the notebooks show them
    ("seed-isr-shrink-expand", True, "02", None),
    ("kraft-controller-failover", False, "07", "orders"),
    ("jepsen-2013-unsafe", True, "08", None),
)


def _timed(fn) -> tuple[float, float]:
    w0, c0 = time.perf_counter(), time.process_time()
    fn()
    return time.perf_counter() - w0, time.process_time() - c0


def percentile(xs: list[float], q: float) -> float:
    """The q-quantile (nearest rank) of ``xs``, in ms."""
    s = sorted(xs)
    return round(1000 * s[min(len(s) - 1, max(0, round(q * (len(s) - 1))))], 1)


def measure_player(name: str, show_isr: bool, reps: int, topic: str | None = None) -> dict:
    """The kernel's share of a learner's clicks on the player (its stage, issue 32): ``seek``
    the time slider (a new window), ``step`` the step that crosses a window's end (the stage's
    ``advance``: steps inside a window cost the kernel nothing), ``fault`` a shift-click on a
    broker (``pause`` through the player: acting in the past forks a new future)."""
    from kafkasim.scenarios.scenario import Scenario
    from kafkasim.widgets import Player

    p = Player(Scenario.named(name), topic=topic, show_isr=show_isr)
    p.widget                      # noqa: B018  (builds the UI and the stage's first window)
    ui, stage = p._ui, p.stage
    rng = random.Random(15)
    lo, hi = p.start_ms, p.horizon
    samples: dict[str, list[tuple[float, float]]] = {"seek": [], "step": [], "fault": []}
    brokers = sorted(p.cluster.brokers)
    for _ in range(reps):
        t = rng.randrange(lo, hi)
        samples["seek"].append(_timed(lambda t=t: setattr(ui.slider, "value", t)))
        samples["step"].append(_timed(lambda: stage.handle({"action": "advance"})))
    for i in range(max(3, reps // 2)):
        p.seek(rng.randrange(lo, hi))
        b = brokers[i % len(brokers)]
        samples["fault"].append(_timed(lambda b=b: stage.handle(
            {"action": "pause", "node": b, "t": stage.window["t0"]})))
    out = {}
    for op, xs in samples.items():
        out[f"{op}_wall_ms_p50"] = percentile([w for w, _ in xs], 0.5)
        out[f"{op}_wall_ms_p95"] = percentile([w for w, _ in xs], 0.95)
        out[f"{op}_cpu_ms_p95"] = percentile([c for _, c in xs], 0.95)
    return out


EXPLORER_WALKS = {
    "06": (True, "kafkasim.course.monitoring", "incident_view",
           {"incident": ["blip", "outage", "flapping"], "for_minutes": [1, 2, 5, 10]},
           {"incident": "outage", "for_minutes": 5},
           [("for_minutes", 10), ("incident", "blip"), ("for_minutes", 1), ("incident",
            "flapping"), ("for_minutes", 2), ("incident", "outage"), ("for_minutes", 5),
            ("incident", "blip"), ("for_minutes", 10), ("incident", "flapping")]),
    "04": (False, "kafkasim.course.positions", "positions_view",
           {"produced": (1, 16, 1), "replicated": (0, 16, 1), "consumed": (0, 16, 1),
            "committed": (0, 16, 1)},
           {"produced": 10, "replicated": 8, "consumed": 6, "committed": 4},
           [("produced", 12), ("replicated", 10), ("consumed", 9), ("committed", 7),
            ("produced", 14), ("replicated", 12), ("consumed", 8), ("committed", 5),
            ("produced", 12), ("replicated", 10)]),
}


#: arguments the notebook passes besides the controls: the Kafka each notebook runs
EXPLORER_FIXED = {"06": {"kafka_version": "4.3"}, "04": {"kafka_version": "4.3"}}


def measure_explorer(notebook: str, steps: int | None = None) -> dict:
    import functools
    import importlib

    from kafkasim.course import explore

    precompute, module, fn, controls, values, walk = EXPLORER_WALKS[notebook]
    view = functools.partial(getattr(importlib.import_module(module), fn),
                             **EXPLORER_FIXED.get(notebook, {}))
    ex = explore(view, controls, values=values, precompute=precompute)
    built, _cpu = _timed(lambda: ex.widget)
    ctl = ex._ui["controls"]
    xs = [_timed(lambda k=k, v=v: setattr(ctl[k], "value", v)) for k, v in walk[:steps]]
    return {"explorer_wall_ms_p50": percentile([w for w, _ in xs], 0.5),
            "explorer_wall_ms_p95": percentile([w for w, _ in xs], 0.95),
            "explorer_cpu_ms_p95": percentile([c for _, c in xs], 0.95),
            "explorer_changes": len(xs), "explorer_cell_wall_s": round(built, 2)}


def run(quick: bool = False) -> dict:
    reps = 4 if quick else 16
    out: dict = {}
    for name, show_isr, nb, topic in SCENARIOS[:1] if quick else SCENARIOS:
        now = measure_player(name, show_isr, reps, topic=topic)
        for key, value in now.items():
            out[f"nb{nb}_{key}"] = value
        for op in ("seek", "step", "fault"):
            out[f"nb{nb}_{op}_meets_target_p95"] = now[f"{op}_wall_ms_p95"] < TARGETS_MS[op]
            out[f"nb{nb}_{op}_meets_target_cpu_p95"] = now[f"{op}_cpu_ms_p95"] < TARGETS_MS[op]
    for nb in ("06",) if quick else ("06", "04"):
        res = measure_explorer(nb, 4 if quick else None)
        for key, value in res.items():
            out[f"nb{nb}_{key}"] = value
        out[f"nb{nb}_explorer_meets_target_p95"] = \
            res["explorer_wall_ms_p95"] < TARGETS_MS["explorer"]
        out[f"nb{nb}_explorer_meets_target_cpu_p95"] = \
            res["explorer_cpu_ms_p95"] < TARGETS_MS["explorer"]
    for op, ms in TARGETS_MS.items():
        out[f"target_{op}_p95_ms"] = ms
    return out
