"""Golden trace digests: the guard for refactors that must not change behaviour.

Runs every built-in scenario, the reference workload (linger.ms 0/5/20, 2 simulated s) and N random
fault schedules per profile (the generator of tests/test_fault_properties.py), and records each
run's trace digest. ``--write FILE`` stores them; ``--check FILE`` reruns and lists every run
whose trace changed (exit 1 if any did). A refactor keeps every digest; a behaviour fix changes
only the runs it explains.

    .venv/bin/python scripts/golden_traces.py --write golden.json [--schedules 100]
    .venv/bin/python scripts/golden_traces.py --check golden.json
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

PROFILES = ("safe", "old", "acks1", "unclean")


def _scenario(name: str) -> tuple[str, str]:
    from kafkasim.scenarios.scenario import Scenario, builtin_dir
    sc = Scenario.load(Path(builtin_dir()) / f"{name}.toml")
    run = sc.run(check=False)
    return f"scenario:{name}", run.cluster.trace_digest()


def _workload(linger: int, version: str = "3.7") -> tuple[str, str]:
    from kafkasim.runtime.cluster import Cluster
    from kafkasim.runtime.workload import RateWorkload
    c = Cluster(brokers=3, seed=1, kafka_version=version)
    c.create_topic("bench", partitions=1, replication_factor=3)
    p = c.producer(acks="all", linger_ms=linger)
    RateWorkload(c, p, "bench", rate=1000, duration_ms=2000, partition=0)
    c.run(2500)
    suffix = "" if version == "3.7" else f":{version}"
    return f"workload:linger{linger}{suffix}", c.trace_digest()


def _schedule(args: tuple) -> tuple[str, str]:
    import test_fault_properties as fp
    seed, profile = args
    digest = fp.run_schedule(fp.generate(seed, profile), every_event=False).digest
    return f"schedule:{profile}:{seed}", digest


def _job(job: tuple) -> tuple[str, str]:
    kind, arg = job
    if kind == "scenario":
        return _scenario(arg)
    if kind == "workload":
        return _workload(*arg) if isinstance(arg, tuple) else _workload(arg)
    return _schedule(arg)


def compute(schedules: int, workers: int) -> dict[str, str]:
    from kafkasim.scenarios.scenario import builtin_names
    jobs = [("scenario", n) for n in builtin_names()]
    jobs += [("workload", n) for n in (0, 5, 20)]
    jobs += [("workload", (5, "4.3"))]   # today's default: KRaft, ELR
    jobs += [("schedule", (s, prof)) for prof in PROFILES for s in range(schedules)]
    if workers <= 1:
        out = [_job(j) for j in jobs]
    else:
        with multiprocessing.get_context("spawn").Pool(workers) as pool:
            out = pool.map(_job, jobs, chunksize=4)
    return dict(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", metavar="FILE")
    g.add_argument("--check", metavar="FILE")
    ap.add_argument("--schedules", type=int, default=100, help="fault schedules per profile")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    if a.write:
        digests = compute(a.schedules, a.workers)
        Path(a.write).write_text(json.dumps({"schedules": a.schedules, "digests": digests},
                                            indent=1, sort_keys=True) + "\n")
        print(f"wrote {len(digests)} digests to {a.write}")
        return 0
    want = json.loads(Path(a.check).read_text())
    got = compute(want["schedules"], a.workers)
    changed = sorted(k for k in want["digests"] if got.get(k) != want["digests"][k])
    added = sorted(set(got) - set(want["digests"]))
    for k in changed:
        print(f"CHANGED {k}")
    for k in added:
        print(f"NEW     {k}")
    print(f"{len(got)} runs: {len(changed)} changed, {len(added)} new")
    return 1 if changed else 0


if __name__ == "__main__":
    sys.exit(main())
