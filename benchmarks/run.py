"""Run the benchmarks: every ``benchmarks/bench_*.py`` module, one after another.

    make bench                          # all of them
    make bench BENCH_ARGS="--quick"     # smaller sizes, for a smoke run
    .venv/bin/python -m benchmarks.run --quick spark   # only names containing "spark"

A benchmark module exposes ``run(quick: bool = False) -> dict`` returning its figures, e.g.
``{"events_per_s": 812345.0, "runs": 2000}``; values should be numbers or short strings, and a key's
unit belongs in its name. The runner times each call, prints one table, and writes
``benchmarks/results/<name>.json`` (git-ignored) with the figures and the machine they came from.
A benchmark that raises is reported and makes the exit status 1; the others still run.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import sys
import time
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


def discover(directory: Path = HERE) -> list[Path]:
    """The bench_*.py files in directory, in name order."""
    return sorted(p for p in directory.glob("bench_*.py") if p.is_file())


def load(path: Path) -> ModuleType:
    """Import a benchmark module from its file (no need for it to be on sys.path)."""
    name = f"benchmarks.{path.stem}" if path.parent == HERE else f"_bench_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    if not callable(getattr(module, "run", None)):
        raise TypeError(f"{path.name} has no run(quick: bool = False) -> dict")
    return module


def bench_name(path: Path) -> str:
    return path.stem.removeprefix("bench_")


def environment() -> dict[str, object]:
    from kafkasim import __version__

    return {
        "kafkasim": __version__,
        "python": platform.python_version(),
        "machine": platform.machine(),
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
    }


def run_one(path: Path, quick: bool) -> dict[str, object]:
    """Run one benchmark; returns its record (figures, or the error it raised)."""
    record: dict[str, object] = {"name": bench_name(path), "quick": quick}
    start = time.perf_counter()
    try:
        figures = load(path).run(quick=quick)
        if not isinstance(figures, dict):
            raise TypeError(f"run() returned {type(figures).__name__}, expected a dict of figures")
        record["figures"] = figures
    except Exception as exc:  # reported, and turned into exit status 1 by main()
        record["error"] = f"{type(exc).__name__}: {exc}"
        record["traceback"] = traceback.format_exc()
    record["wall_s"] = round(time.perf_counter() - start, 3)
    return record


def _fmt(value: object) -> str:
    if isinstance(value, float):
        return f"{value:,.4g}" if abs(value) < 1e4 else f"{value:,.0f}"
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}"
    return str(value)


def table(records: Sequence[dict[str, object]]) -> str:
    """One row per figure: benchmark, figure, value."""
    rows = [("benchmark", "figure", "value")]
    for rec in records:
        name = str(rec["name"])
        if "error" in rec:
            rows.append((name, "ERROR", str(rec["error"])))
            continue
        figures = rec.get("figures") or {}
        for key, value in {**figures, "wall_s": rec["wall_s"]}.items():
            rows.append((name, str(key), _fmt(value)))
    widths = [max(len(row[i]) for row in rows) for i in range(2)]
    lines = [f"{a:<{widths[0]}}  {b:<{widths[1]}}  {c}" for a, b, c in rows]
    lines.insert(1, "-" * max(len(line) for line in lines))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Run kafkasim's benchmarks/bench_*.py modules.")
    parser.add_argument("names", nargs="*", help="run only benchmarks whose name contains one")
    parser.add_argument("--quick", action="store_true", help="small sizes, for a smoke run")
    parser.add_argument("--dir", type=Path, default=HERE, help="where bench_*.py live")
    parser.add_argument(
        "--results", type=Path, default=HERE / "results", help="where <name>.json go"
    )
    args = parser.parse_args(argv)

    paths = [
        p for p in discover(args.dir) if not args.names or any(n in p.stem for n in args.names)
    ]
    if not paths:
        what = f" matching {args.names}" if args.names else ""
        print(f"no benchmarks{what} in {args.dir} (add bench_<name>.py with a run(quick) function)")
        return 0 if not args.names else 1

    env = environment()
    args.results.mkdir(parents=True, exist_ok=True)
    records = []
    for path in paths:
        print(f"running {bench_name(path)}{' (quick)' if args.quick else ''} ...", flush=True)
        record = run_one(path, args.quick)
        if "traceback" in record:
            print(record["traceback"], file=sys.stderr)
        record["environment"] = env
        record["finished_at"] = datetime.now(UTC).isoformat(timespec="seconds")
        out = args.results / f"{record['name']}.json"
        out.write_text(json.dumps(record, indent=2, sort_keys=True, default=str) + "\n")
        records.append(record)

    print()
    print(table(records))
    print(f"\nresults: {args.results}/<name>.json")
    return 1 if any("error" in r for r in records) else 0


if __name__ == "__main__":
    sys.exit(main())
