"""The fuzz through the real command line: mutated scenario files fed to ``kafkasim run FILE``
and mutated sweep files to ``kafkasim sweep FILE``, each in its own process with a timeout.

The mutations are :mod:`kafkasim.tools.fuzz`'s (byte flips, structural TOML mutations, a
condition stripped of its comparison), a pure function of ``(seed, index)``. Every case is
classified by the command's documented exit status (``kafkasim.tools.cli``: 0 every expectation
held, 1 one failed or an invariant was violated, 2 bad input, with a ``kafkasim: ...`` message)
and checked against what the file held:

- ``traceback``: stderr holds a Python traceback;
- ``hang``: the process outlived the timeout (wall clock, so run it on an idle host);
- ``bad-exit``: an exit status the documentation does not give, or a refusal (2) without a
  ``kafkasim:`` message;
- ``no-comparison-accepted``: the file has a condition that compares nothing (it would always
  hold) and ran;
- ``wrong-exit``: the run's exit status disagrees with its report (1 without a failed
  expectation or violation, 0 with one);
- ``schema-invalid``: the JSON report fails ``report.schema.json``;
- ``warning-leak``: a Python ``RuntimeWarning`` (numpy's "Mean of empty slice", ...) reached
  stderr.

    PYTHONPATH=. .venv/bin/python scripts/fuzz.py --cli --mutations 3000 --seed 31001
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import tomllib
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

from kafkasim.tools.fuzz import (
    Fuzzer,
    dumps_toml,
    mutate_data,
    mutate_text,
    strip_comparison,
    uncompared_clauses,
)

#: outcome kinds that fail the batch
CLI_FAILURES = ("traceback", "hang", "bad-exit", "no-comparison-accepted", "wrong-exit",
                "schema-invalid", "warning-leak")


@dataclass
class CliOutcome:
    index: int
    command: str          # run / sweep
    source: str           # the shipped file mutated
    exit_code: int | None  # None: killed at the timeout
    kind: str             # passed / expect-failed / refused, or one of CLI_FAILURES
    detail: str = ""


@dataclass
class CliReport:
    outcomes: list[CliOutcome] = field(default_factory=list)

    def failures(self) -> list[CliOutcome]:
        return [o for o in self.outcomes if o.kind in CLI_FAILURES]

    def exit_codes(self, command: str) -> Counter:
        return Counter(o.exit_code for o in self.outcomes if o.command == command)

    def kinds(self, command: str) -> Counter:
        return Counter(o.kind for o in self.outcomes if o.command == command)

    def summary(self) -> str:
        lines = []
        for command in ("run", "sweep"):
            n = sum(1 for o in self.outcomes if o.command == command)
            if not n:
                continue
            codes = ", ".join(f"{'timeout' if c is None else c}: {k}"
                              for c, k in sorted(self.exit_codes(command).items(),
                                                 key=lambda kv: (kv[0] is None, kv[0] or 0)))
            lines.append(f"kafkasim {command}: {n} files; exit codes {{{codes}}}")
            kinds = self.kinds(command)
            lines.append("  " + ", ".join(f"{k} {kinds[k]}" for k in
                                          ("passed", "expect-failed", "refused", *CLI_FAILURES)))
        for o in self.failures()[:20]:
            lines.append(f"  FAILURE #{o.index} {o.command} {o.source} {o.kind} "
                         f"(exit {o.exit_code}): {o.detail[:400]}")
        return "\n".join(lines)


def kafkasim_command() -> list[str]:
    """The installed ``kafkasim`` console script next to this interpreter, else ``python -m``
    of the same ``main``."""
    script = Path(sys.executable).parent / "kafkasim"
    if script.exists():
        return [str(script)]
    found = shutil.which("kafkasim")
    return [found] if found else [sys.executable, "-m", "kafkasim.tools.cli"]


class CliFuzzer:
    """Mutated files through ``kafkasim run`` / ``kafkasim sweep`` subprocesses. Case ``i`` of a
    seed writes the same bytes in every run (:meth:`mutant`)."""

    def __init__(self, seed: int, *, quick: bool = False, timeout_s: float = 120.0,
                 sweep_share: float = 0.0, sweep_runs: int = 1,
                 max_events: int | None = None) -> None:
        self.seed = seed
        self.max_events = max_events
        self.timeout_s = timeout_s
        self.sweep_share = sweep_share
        self.sweep_runs = sweep_runs
        inputs = Fuzzer(seed, quick=quick)
        self.scenarios = inputs.scenarios
        self.sweeps = inputs.sweeps
        self._validator = inputs._validator
        self.command = kafkasim_command()

    # -- the files ------------------------------------------------------------------------------
    def mutant(self, i: int) -> tuple[str, str, bytes]:
        """(command, source file, mutated bytes) of case ``i``."""
        rng = random.Random(f"kafkasim-cli-fuzz:{self.seed}:{i}")
        if self.sweeps and rng.random() < self.sweep_share:
            name = rng.choice(sorted(self.sweeps))
            return "sweep", name, self._mutate(rng, self.sweeps[name], sweep=True)
        name = rng.choice(sorted(self.scenarios))
        return "run", name, self._mutate(rng, self.scenarios[name], sweep=False)

    @staticmethod
    def _mutate(rng: random.Random, text: str, *, sweep: bool) -> bytes:
        r = rng.random()
        if r < 0.25:
            return mutate_text(rng, text)
        data = tomllib.loads(text)
        if not sweep and r < 0.4:
            return dumps_toml(strip_comparison(rng, data)).encode("utf-8")
        return dumps_toml(mutate_data(rng, data, rng.choice([1, 1, 1, 2, 3]))).encode("utf-8")

    # -- one case -------------------------------------------------------------------------------
    def case(self, i: int, workdir: Path) -> CliOutcome:
        command, source, raw = self.mutant(i)
        path = workdir / f"case-{i}.toml"
        out = workdir / f"case-{i}.out"
        path.write_bytes(raw)
        argv = [*self.command, command, str(path)]
        if command == "run":
            argv += ["--json", "--out", str(out)]
            if self.max_events is not None:   # the run's budget, as the in-process fuzz's
                argv += ["--max-events", str(self.max_events)]
        else:
            argv += ["--serial", "--runs", str(self.sweep_runs)]
        try:
            proc = subprocess.run(argv, capture_output=True, timeout=self.timeout_s,
                                  env=_env(), stdin=subprocess.DEVNULL)
        except subprocess.TimeoutExpired:
            return CliOutcome(i, command, source, None, "hang",
                              f"still running after {self.timeout_s:.0f} s")
        finally:
            path.unlink(missing_ok=True)
        try:
            kind, detail = self._classify(command, raw, proc, out)
        finally:
            out.unlink(missing_ok=True)
        return CliOutcome(i, command, source, proc.returncode, kind, detail)

    def _classify(self, command: str, raw: bytes, proc, out: Path) -> tuple[str, str]:
        err = proc.stderr.decode("utf-8", "replace")
        if "Traceback (most recent call last)" in err:
            return "traceback", err.strip().splitlines()[-1] if err.strip() else err
        if "RuntimeWarning" in err:
            return "warning-leak", err.strip()[:400]
        if proc.returncode == 2:
            if not err.startswith("kafkasim: ") or len(err.strip()) <= len("kafkasim:"):
                return "bad-exit", f"refused without a 'kafkasim:' message: {err[:200]!r}"
            return "refused", err.strip().splitlines()[0]
        if proc.returncode not in (0, 1):
            return "bad-exit", f"exit {proc.returncode}: {err[:300]}"
        bare = _uncompared(raw) if command == "run" else []
        if bare:
            return "no-comparison-accepted", bare[0]
        if command == "sweep":
            return ("passed" if proc.returncode == 0 else "expect-failed"), ""
        return self._check_report(proc.returncode, out)

    def _check_report(self, code: int, out: Path) -> tuple[str, str]:
        try:
            rep = json.loads(out.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            return "schema-invalid", f"no JSON report at --out: {exc}"
        errors = list(self._validator().iter_errors(rep))
        if errors:
            return "schema-invalid", f"{errors[0].message} at {list(errors[0].path)}"
        failed = any(not e["ok"] for e in rep["expectations"]) or bool(rep["violations"])
        if failed != (code == 1):
            return "wrong-exit", (f"exit {code} but {sum(not e['ok'] for e in rep['expectations'])}"
                                  f" failed expectation(s), {len(rep['violations'])} violation(s)")
        return ("expect-failed" if failed else "passed"), ""

    def run(self, n: int, start: int = 0, progress=None, jobs: int = 1) -> CliReport:
        """Cases ``start`` .. ``start + n - 1``, ``jobs`` processes at a time (each case is
        its own process; the outcomes are kept in case order)."""
        report = CliReport()
        with tempfile.TemporaryDirectory(prefix="kafkasim-cli-fuzz-") as d, \
                ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            for outcome in pool.map(lambda i: self.case(i, Path(d)), range(start, start + n)):
                report.outcomes.append(outcome)
                if progress is not None:
                    progress(report)
        return report


def _uncompared(raw: bytes) -> list[str]:
    """The conditions without a comparison in a file the command accepted (a BOM is ignored
    by the loader, so here too); [] when it does not parse as TOML."""
    try:
        text = raw.decode("utf-8").removeprefix("\ufeff")
        return uncompared_clauses(tomllib.loads(text))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, RecursionError):
        return []


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PYTHONHASHSEED", "0")
    return env


__all__ = ["CLI_FAILURES", "CliFuzzer", "CliOutcome", "CliReport", "kafkasim_command"]
