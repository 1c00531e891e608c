#!/usr/bin/env python
"""The longer fuzz run (issue 16): seeded mutations of scenario files (every shipped scenario),
sweep files, configs and checkpoint files; exits 1 if any ends in a traceback, a hang or a
schema-invalid report.

    PYTHONPATH=. .venv/bin/python scripts/fuzz.py --mutations 10000 --seed 1

``make test`` runs 1,200 quick mutations (tests/test_fuzz.py). ``--start`` continues a batch
(cases are numbered: case i of a seed is the same in every run).
"""

from __future__ import annotations

import argparse
import sys
import time

from kafkasim.tools.fuzz import Fuzzer


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mutations", type=int, default=10_000)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--start", type=int, default=0, help="first case index")
    ap.add_argument("--quick", action="store_true",
                    help="only the fast shipped scenarios (as make test)")
    ap.add_argument("--max-events", type=int, default=50_000,
                    help="event budget of every simulated run")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    fz = Fuzzer(args.seed, quick=args.quick, max_events=args.max_events)
    report = fz.run(args.mutations, start=args.start)
    print(report.summary())
    print(f"seed {args.seed}, cases {args.start}..{args.start + args.mutations - 1}, "
          f"{time.monotonic() - t0:.0f} s")
    return 1 if report.failures() else 0


if __name__ == "__main__":
    sys.exit(main())
