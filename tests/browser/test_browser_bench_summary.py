"""benchmarks/bench_browser.py reports p50/p95 against the issue's targets and never fails on a
miss (pure functions: no browser needed)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from labdriver import Timing, percentile

BENCH = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_browser.py"


def _bench():
    spec = importlib.util.spec_from_file_location("_bench_browser_summary", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_percentile_is_nearest_rank():
    xs = [float(v) for v in range(1, 21)]          # 1..20
    assert percentile(xs, 50) == 10.0
    assert percentile(xs, 95) == 19.0
    assert percentile(xs, 100) == 20.0
    assert percentile([7.0], 95) == 7.0


def test_summary_reports_each_action_against_its_target():
    bench = _bench()
    timings = ([Timing("step", ms, True) for ms in (100.0, 120.0, 900.0)]
               + [Timing("seek", ms, True) for ms in (200.0, 250.0)]
               + [Timing("explore", 100.0, False), Timing("explore_revisit", 30.0, True)])
    out = bench.summarize(timings)
    assert out["step_n"] == 3 and out["step_p50_ms"] == 120.0 and out["step_p95_ms"] == 900.0
    assert out["target_step_p95_ms"] == 300.0 and out["meets_target_step"] is False
    assert out["seek_p95_ms"] == 250.0 and out["meets_target_seek"] is True
    assert out["explore_unchanged"] == 1 and out["explore_n"] == 1
    assert out["explore_revisit_p50_ms"] == 30.0 and "meets_target_explore_revisit" not in out
    assert "fault_n" not in out                      # nothing measured, nothing reported
    assert all(isinstance(v, (bool, int, float, str)) for v in out.values())
