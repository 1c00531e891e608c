"""The ``kafkasim`` command.

    kafkasim run FILE|NAME [--json] [--seed N] [--out PATH] [--max-events N]
                                                             run a scenario, print its report
    kafkasim scenarios                                       list the built-in scenarios
    kafkasim schema                                          print the report's JSON Schema
    kafkasim versions [VERSION]                              list version profiles / show one

Exit status: 0 when every ``expect`` step held (and, with ``check = true``, no invariant was
violated), 1 otherwise, 2 on bad input (checked before anything runs, ``--out`` included: a file
that is not TOML, nested too deeply, a key, value, node or client name the scenario does not
have, a seed a ``pin_seed`` scenario refuses). ``kafkasim sweep``: 0 when every run ended "ok",
1 when one did not, 2 on bad input (an empty sweep file included).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

SCHEMA_PATH = Path(__file__).resolve().parent.parent / "scenarios" / "report.schema.json"


def _load(target: str):
    """A scenario file, or a built-in scenario by name. A target that looks like a path (it
    ends in .toml or names a directory) but does not exist is reported as a missing file, not
    as an unknown built-in."""
    from kafkasim.scenarios.scenario import Scenario, ScenarioError, builtin_names

    if not target.strip():
        raise ScenarioError(f"{target!r}: give a scenario file or the name of a built-in "
                            "scenario (`kafkasim scenarios` lists them)")
    p = Path(target)
    try:
        exists = p.exists()
    except OSError:   # a name too long for the file system, ...
        exists = False
    if exists:
        return Scenario.load(target)
    looks_like_path = target.endswith(".toml") or "/" in target or "\\" in target
    if looks_like_path and Path(target).stem not in builtin_names():
        raise ScenarioError(f"{target}: no such scenario file (and no built-in scenario of "
                            "that name; `kafkasim scenarios` lists them)")
    return Scenario.named(target)


def check_out_path(out: str | None) -> str | None:
    """An error message if the report/results cannot be written to ``out`` (its directory is
    missing or not writable, or it is a directory), else None: checked before running, so a
    long run or sweep is not lost at the end."""
    import os

    if not out:
        return None
    p = Path(out)
    parent = p.parent if str(p.parent) else Path(".")
    if p.is_dir():
        return f"--out {out}: is a directory; give a file name"
    if not parent.is_dir():
        return f"--out {out}: directory {parent} does not exist"
    if not os.access(parent, os.W_OK | os.X_OK):
        return f"--out {out}: directory {parent} is not writable"
    if p.exists() and not os.access(p, os.W_OK):
        return f"--out {out}: file is not writable"
    return None


def check_seed(seed: int | None) -> str | None:
    """An error message for a ``--seed`` outside the scenario schema's range (a Java long, as
    a scenario file's ``seed``), else None."""
    from kafkasim.settings import limits

    if seed is not None and not -limits.LONG_MAX - 1 <= seed <= limits.LONG_MAX:
        return (f"--seed {seed}: must be an integer from {-limits.LONG_MAX - 1} to "
                f"{limits.LONG_MAX} (a Java long, as a scenario's seed)")
    return None


def check_max_events(n: int | None) -> str | None:
    """An error message for a ``--max-events`` below 1, else None."""
    if n is not None and n < 1:
        return f"--max-events {n}: must be a whole number of events from 1"
    return None


def _text_report(run, rep: dict) -> str:
    lines = [f"Scenario: {rep['scenario']}",
             f"Seed: {rep['seed']}   Kafka version profile: {rep['kafka_version']}   "
             f"End: t={rep['end_time_ms']} ms   Events: {rep['events']}", ""]
    lines.append("Steps:")
    for s in rep["steps"]:
        detail = s["detail"].strip().replace("\n", "\n      ")
        lines.append(f"  {s['step']:>3}. t={s['time_ms']:>7} ms  {s['do']:<12} {detail}")
    lines += ["", "kafka-topics --describe:", rep["describe"].rstrip(), "", "Replicas:"]
    for p in rep["partitions"]:
        lines.append(f"  {p['topic']}-{p['partition']}: leader {p['leader']}, epoch "
                     f"{p['leader_epoch']}, ISR {p['isr']}")
        for r in p["replicas"]:
            lines.append(f"    broker {r['broker']}: LEO {r['leo']}, HW {r['hw']}, "
                         f"log start {r['log_start']}")
    lines += ["", "Producers:"]
    for name, p in rep["producers"].items():
        errs: dict[str, int] = {}
        for f in p["failed"]:
            errs[f["error"]] = errs.get(f["error"], 0) + 1
        lines.append(f"  {name}: {len(p['acked'])} acked, {len(p['failed'])} failed "
                     f"{errs if errs else ''}, {len(p['pending'])} pending")
    lines.append(f"Lost acknowledged records: {rep['lost_acked'] or 'none'}")
    if run.check is not None:
        lines += ["", f"Invariant violations: {len(rep['violations']) or 'none'}"]
        for v in rep["violations"]:
            d = v["details"]
            where = f" {d['topic']}-{d['partition']}" if d.get("topic") else ""
            lines.append(f"  t={v['time_ms']} ms  {v['name']}{where}: {d['message']}")
    if rep["expectations"]:
        lines += ["", "Expectations:"]
        for e in rep["expectations"]:
            mark = "PASS" if e["ok"] else "FAIL"
            label = f" {e['label']}" if e["label"] else ""
            lines.append(f"  {mark} step {e['step']}{label}: {json.dumps(e['condition'])} "
                         f"(actual {json.dumps(e['actual'])})")
    lines.append(f"\nTrace digest: {rep['trace_digest']}")
    return "\n".join(lines)


def _cmd_run(args) -> int:
    from kafkasim.scenarios.scenario import ScenarioError

    problem = check_out_path(args.out) or check_seed(args.seed) or \
        check_max_events(args.max_events)
    if problem:
        print(f"kafkasim: {problem}", file=sys.stderr)
        return 2
    try:
        sc = _load(args.file)
        from kafkasim.settings import limits

        budget = limits.DEFAULT_MAX_EVENTS if args.max_events is None else args.max_events
        run = sc.run(seed=args.seed, max_events=budget)
    except ScenarioError as exc:
        print(f"kafkasim: {exc}", file=sys.stderr)
        return 2
    rep = run.report()
    text = json.dumps(rep, indent=2) if args.json else _text_report(run, rep)
    if args.out:
        Path(args.out).write_text(text + "\n", encoding="utf-8")
    else:
        print(text)
    # 1: an expect step failed, or (with check = true) an invariant was violated
    return 0 if run.passed and not rep["violations"] else 1


def _cmd_scenarios(args) -> int:
    from kafkasim.scenarios.scenario import Scenario, builtin_names

    for name in builtin_names():
        print(f"{name:<34} {Scenario.named(name).name}")
    return 0


def _cmd_schema(args) -> int:
    print(SCHEMA_PATH.read_text(encoding="utf-8"), end="")
    return 0


def _cmd_versions(args) -> int:
    from kafkasim.settings import config, versions

    if args.version is not None:
        try:
            versions.check_known_version(args.version)
            print(config.describe_profile(args.version))
        except ValueError as exc:
            print(f"kafkasim: {exc}", file=sys.stderr)
            return 2
        return 0
    for v in versions.SUPPORTED_VERSIONS:
        mark = " (default)" if v == versions.DEFAULT_VERSION else ""
        print(f"{v}{mark}")
    return 0


def _cmd_sweep(args) -> int:
    """Run a sweep file; print one summary line per combination; optionally write Parquet."""
    from kafkasim.experiments import Sweep, SweepError, write_parquet
    from kafkasim.experiments.report import summary_text

    if args.serial and args.master:
        print("kafkasim: --serial runs without Spark; drop --master or --serial", file=sys.stderr)
        return 2
    problem = check_out_path(args.out)
    if problem:
        print(f"kafkasim: {problem}", file=sys.stderr)
        return 2
    try:
        sweep = Sweep.load(args.spec)
        if args.runs is not None:
            sweep = sweep.with_runs(args.runs)
        sweep.validate()
    except SweepError as exc:
        print(f"kafkasim: {exc}", file=sys.stderr)
        return 2
    try:
        results = sweep.run(mode="serial" if args.serial else "spark", master=args.master,
                            validate=False)
    except ValueError as exc:   # e.g. --master while SPARK_REMOTE is set
        print(f"kafkasim: {exc}", file=sys.stderr)
        return 2
    print(summary_text(results))
    if args.out:
        write_parquet(results, args.out)
        print(f"wrote {len(results)} rows to {args.out}")
    return 1 if (results["status"] != "ok").any() else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="kafkasim",
                                     description="Deterministic Kafka replication simulator")
    sub = parser.add_subparsers(dest="command", required=True)
    p_run = sub.add_parser("run", help="run a scenario file (or a built-in scenario by name)")
    p_run.add_argument("file")
    p_run.add_argument("--json", action="store_true", help="print the JSON report")
    p_run.add_argument("--seed", type=int, default=None, help="override the scenario's seed")
    p_run.add_argument("--out", help="write the report to this file")
    p_run.add_argument("--max-events", type=int, default=None, metavar="N",
                       help="the run's event budget (default limits.DEFAULT_MAX_EVENTS, "
                       "50,000,000); past it the run stops with exit 2 naming the limit")
    p_run.set_defaults(func=_cmd_run)
    sub.add_parser("scenarios", help="list built-in scenarios").set_defaults(func=_cmd_scenarios)
    sub.add_parser("schema", help="print the report JSON Schema").set_defaults(func=_cmd_schema)
    p_v = sub.add_parser("versions", help="list Kafka version profiles or describe one")
    p_v.add_argument("version", nargs="?")
    p_v.set_defaults(func=_cmd_versions)
    p_s = sub.add_parser("sweep", help="run a sweep file (grid x seeds) serially or on Spark")
    p_s.add_argument("spec", help="sweep file (TOML; see kafkasim.experiments)")
    p_s.add_argument("--out", help="write the results table here (Parquet)")
    p_s.add_argument("--serial", action="store_true", help="run in this process, without Spark")
    p_s.add_argument("--master", help="Spark master URL (default: SPARK_REMOTE, "
                     "KAFKASIM_SPARK_MASTER or local[*])")
    p_s.add_argument("--runs", type=int, help="run exactly N runs (seeds extended or cut)")
    p_s.set_defaults(func=_cmd_sweep)
    args = parser.parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
