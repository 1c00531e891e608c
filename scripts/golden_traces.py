"""Golden trace digests: the guard for refactors that must not change behaviour.

Runs every built-in scenario, the reference workload (linger.ms 0/5/20 on 3.7, 5 on 4.3 and 4.4; 2
simulated s) and N random fault schedules per profile (the generator of
tests/test_fault_properties.py: four ZooKeeper-mode and four KRaft profiles), and records each
run's trace digest under the run's name (``scenario:NAME``, ``workload:linger5``,
``schedule:PROFILE:SEED``), never under a module path. The committed digests live in
tests/golden/digests.json and tests/test_golden_traces.py checks them on every ``make test``.

``--check [FILE]`` reruns the runs FILE names and lists every one whose trace changed (exit 1 if
any did); ``--write [FILE]`` is the only way to regenerate a file. A refactor keeps every digest;
a behaviour fix changes only the runs it explains, and the diff of the file is reviewed in the
commit that makes the change.

    .venv/bin/python scripts/golden_traces.py --check                # tests/golden/digests.json
    .venv/bin/python scripts/golden_traces.py --write                # regenerate it
    .venv/bin/python scripts/golden_traces.py --write other.json --schedules 100 --profiles safe
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

GOLDEN = ROOT / "tests" / "golden" / "digests.json"
#: fault-schedule profiles (tests/test_fault_properties.PROFILES), ZooKeeper mode then KRaft
PROFILES = ("safe", "old", "acks1", "unclean", "kraft", "kraft40", "kraft_acks1", "kraft_unclean")
#: what --write records: schedules 0..N-1 of every profile (about 2 min of CPU on this machine)
SCHEDULES = 250
#: the reference workload's variants: (linger.ms, kafka_version)
#: 4.3: today's default, KRaft+ELR; 4.4: the newest profile (not the default)
WORKLOADS = ((0, "3.7"), (5, "3.7"), (20, "3.7"), (5, "4.3"), (5, "4.4"))


def scenario_digest(name: str) -> str:
    from kafkasim.scenarios.scenario import Scenario, builtin_dir
    sc = Scenario.load(Path(builtin_dir()) / f"{name}.toml")
    return sc.run(check=False).cluster.trace.digest()


def workload_digest(linger: int, version: str = "3.7") -> str:
    from kafkasim.runtime.cluster import Cluster
    from kafkasim.runtime.workload import RateWorkload
    c = Cluster(brokers=3, seed=1, kafka_version=version)
    c.create_topic("bench", partitions=1, replication_factor=3)
    p = c.producer(acks="all", linger_ms=linger)
    RateWorkload(c, p, "bench", rate=1000, duration_ms=2000, partition=0)
    c.run(2500)
    return c.trace.digest()


def schedule_digest(profile: str, seed: int) -> str:
    """The trace digest of fault schedule ``seed`` of ``profile``; a run the simulation fails on
    (a known KRaft bug) records its error instead, so that a fix shows up too."""
    import test_fault_properties as fp
    out = fp.run_schedule(fp.generate(seed, profile), every_event=False, digest=True)
    return out.golden_digest


def workload_name(linger: int, version: str) -> str:
    return f"workload:linger{linger}" + ("" if version == "3.7" else f":{version}")


def run_names(schedules: int = SCHEDULES, profiles: tuple[str, ...] = PROFILES) -> list[str]:
    """The names of every golden run, in a fixed order."""
    from kafkasim.scenarios.scenario import builtin_names
    names = [f"scenario:{n}" for n in builtin_names()]
    names += [workload_name(linger, version) for linger, version in WORKLOADS]
    names += [f"schedule:{p}:{s}" for p in profiles for s in range(schedules)]
    return names


def digest_of(name: str) -> str:
    """Run the golden run called ``name`` and return its trace digest."""
    kind, _, rest = name.partition(":")
    if kind == "scenario":
        return scenario_digest(rest)
    if kind == "workload":
        linger, _, version = rest.removeprefix("linger").partition(":")
        return workload_digest(int(linger), version or "3.7")
    if kind == "schedule":
        profile, _, seed = rest.rpartition(":")
        return schedule_digest(profile, int(seed))
    raise ValueError(f"not a golden run name: {name!r}")


def _named(name: str) -> tuple[str, str]:
    return name, digest_of(name)


def compute(names: list[str], workers: int = 2) -> dict[str, str]:
    """The digests of ``names`` (run in ``workers`` spawned processes when above 1)."""
    if workers <= 1:
        return dict(map(_named, names))
    # spawn, not fork: a caller may hold threads (a Spark session's JVM gateway)
    with multiprocessing.get_context("spawn").Pool(workers) as pool:
        return dict(pool.map(_named, names, chunksize=8))


def load(path: Path = GOLDEN) -> dict:
    """A digest file: {"schedules": N, "profiles": [...], "digests": {name: digest}}."""
    data = json.loads(Path(path).read_text())
    data.setdefault("profiles", list(PROFILES[:4]))   # files written before KRaft profiles
    return data


def write(path: Path, schedules: int, profiles: tuple[str, ...], workers: int) -> int:
    digests = compute(run_names(schedules, profiles), workers)
    data = {"schedules": schedules, "profiles": list(profiles), "digests": digests}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(digests)} digests to {path}")
    return 0


def changes(want: dict[str, str], got: dict[str, str]) -> list[str]:
    """One line per run whose digest moved: its name, the expected and the actual digest."""
    return [f"{name}: expected {want[name]}, got {got[name]}"
            for name in sorted(want) if name in got and got[name] != want[name]]


def check(path: Path, workers: int) -> int:
    data = load(path)
    want = data["digests"]
    expected = run_names(data["schedules"], tuple(data["profiles"]))
    new = [n for n in expected if n not in want]
    gone = sorted(set(want) - set(expected))
    got = compute([n for n in expected if n in want], workers)
    changed = changes(want, got)
    for line in changed:
        print(f"CHANGED {line}")
    for name in new:
        print(f"NEW     {name}")
    for name in gone:
        print(f"GONE    {name}")
    print(f"{len(got)} runs: {len(changed)} changed, {len(new)} new, {len(gone)} gone")
    return 1 if changed or gone else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--write", metavar="FILE", nargs="?", const=str(GOLDEN),
                   help=f"compute and store the digests (default {GOLDEN.relative_to(ROOT)})")
    g.add_argument("--check", metavar="FILE", nargs="?", const=str(GOLDEN),
                   help="rerun the runs FILE names and list every changed digest")
    ap.add_argument("--schedules", type=int, default=SCHEDULES,
                    help=f"--write: fault schedules per profile (default {SCHEDULES})")
    ap.add_argument("--profiles", default=",".join(PROFILES),
                    help="--write: comma-separated fault-schedule profiles (default: all)")
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args(argv)
    if a.write:
        return write(Path(a.write), a.schedules, tuple(a.profiles.split(",")), a.workers)
    return check(Path(a.check), a.workers)


if __name__ == "__main__":
    sys.exit(main())
