#!/usr/bin/env python
"""The longer fuzz run (issue 16): seeded mutations of scenario files (every shipped scenario),
sweep files, configs and checkpoint files; exits 1 if any ends in a traceback, a hang or a
schema-invalid report.

    PYTHONPATH=. .venv/bin/python scripts/fuzz.py --mutations 10000 --seed 1

``make test`` runs 1,200 quick mutations (tests/test_fuzz.py). ``--start`` continues a batch
(cases are numbered: case i of a seed is the same in every run).

``--cli`` (issue 31) feeds the mutated files to the real command line instead, one process per
file with a timeout: ``kafkasim run FILE --json --out ...`` for scenario files and, for a share
``--sweeps`` of the cases, ``kafkasim sweep FILE --serial --runs 1``; it counts exit codes by
their documented meaning, tracebacks, hangs and conditions without a comparison that ran
(kafkasim.tools.cli_fuzz):

    PYTHONPATH=. .venv/bin/python scripts/fuzz.py --cli --mutations 3000 --seed 31001
"""

from __future__ import annotations

import argparse
import sys
import time

from kafkasim.tools.fuzz import Fuzzer


def _cli(args) -> int:
    from kafkasim.tools.cli_fuzz import CliFuzzer

    t0 = time.monotonic()
    fz = CliFuzzer(args.seed, quick=args.quick, timeout_s=args.timeout,
                   sweep_share=args.sweeps, max_events=args.max_events)

    def progress(report):
        n = len(report.outcomes)
        if args.progress and n % args.progress == 0:
            print(f"[{n} cases, {time.monotonic() - t0:.0f} s]\n{report.summary()}",
                  file=sys.stderr, flush=True)   # the counts so far, if the batch is cut short

    report = fz.run(args.mutations, start=args.start, progress=progress, jobs=args.jobs)
    print(f"command: {' '.join(fz.command)}")
    print(report.summary())
    print(f"seed {args.seed}, cases {args.start}..{args.start + args.mutations - 1}, "
          f"timeout {args.timeout:.0f} s, {args.jobs} job(s), {time.monotonic() - t0:.0f} s")
    return 1 if report.failures() else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutations", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--quick", action="store_true",
                    help="only the fast shipped scenarios (as make test)")
    ap.add_argument("--max-events", type=int, default=None,
                    help="event budget of every simulated run (in-process default 50,000; "
                    "--cli: passed as `kafkasim run --max-events`, default the command's own)")
    ap.add_argument("--cli", action="store_true",
                    help="run each mutated file through `kafkasim run` / `kafkasim sweep`")
    ap.add_argument("--sweeps", type=float, default=0.1,
                    help="--cli: share of the cases that are sweep files (default 0.1)")
    ap.add_argument("--timeout", type=float, default=120.0,
                    help="--cli: seconds before a command counts as a hang")
    ap.add_argument("--jobs", type=int, default=1,
                    help="--cli: commands run at a time (default 1)")
    ap.add_argument("--progress", type=int, default=0,
                    help="--cli: print a progress line every N cases")
    args = ap.parse_args(argv)
    if args.cli:
        return _cli(args)
    t0 = time.monotonic()
    fz = Fuzzer(args.seed, quick=args.quick, max_events=args.max_events or 50_000)
    report = fz.run(args.mutations, start=args.start)
    print(report.summary())
    print(f"seed {args.seed}, cases {args.start}..{args.start + args.mutations - 1}, "
          f"{time.monotonic() - t0:.0f} s")
    return 1 if report.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
