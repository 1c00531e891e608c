"""A seeded mutator over kafkasim's inputs: scenario files, sweep files, configs and checkpoints.

Every mutation must end in a run or a clean error: one of :data:`CLEAN_ERRORS` with a message
(no other exception, no run past its event budget or a CPU-time bound, no report failing
``report.schema.json``). ``tests/test_fuzz.py`` runs a batch in ``make test``;
``scripts/fuzz.py`` runs longer batches (documented in docs/testing.md). The mutations are a
pure function of the seed: a failure is reproduced by ``Fuzzer(seed).case(i)``.
"""

from __future__ import annotations

import json
import math
import random
import signal
import time
import tomllib
import warnings
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkasim.core.checkpoint import CorruptCheckpointError
from kafkasim.core.match import MatchError
from kafkasim.runtime.engine import EventLimitExceeded
from kafkasim.settings import config as kconfig
from kafkasim.settings import limits
from kafkasim.settings.exceptions import ClusterError
from kafkasim.settings.modes import MetadataModeError
from kafkasim.settings.versions import RuleError, VersionError

#: the errors bad input may end in (each names what is wrong); anything else is a traceback
CLEAN_ERRORS: tuple[type[BaseException], ...] = (
    kconfig.ConfigError, ClusterError, CorruptCheckpointError, VersionError, RuleError,
    MatchError, MetadataModeError, EventLimitExceeded)


def _clean_errors() -> tuple[type[BaseException], ...]:
    from kafkasim.experiments.spec import SweepError
    from kafkasim.scenarios.scenario import ScenarioError

    return (*CLEAN_ERRORS, ScenarioError, SweepError)


# -- a TOML writer (enough for scenario and sweep data) ------------------------------------------
def _toml_key(k: str) -> str:
    return k if k and all(c.isalnum() or c in "_-" for c in k) else _toml_str(k)


def _toml_str(s: str) -> str:
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ord(ch) < 0x20 or ord(ch) == 0x7F or 0xD800 <= ord(ch) <= 0xDFFF:
            out.append(f"\\u{ord(ch):04x}" if not 0xD800 <= ord(ch) <= 0xDFFF else "?")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v):
            return "nan"
        if math.isinf(v):
            return "inf" if v > 0 else "-inf"
        return repr(v)
    if isinstance(v, str):
        return _toml_str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    if isinstance(v, dict):
        return "{ " + ", ".join(f"{_toml_key(str(k))} = {toml_value(x)}"
                                for k, x in v.items()) + " }"
    return _toml_str(str(v))


def dumps_toml(data: dict) -> str:
    """Top-level scalars, then ``[table]`` per table and ``[[name]]`` per array of tables."""
    lines, tail = [], []
    for k, v in data.items():
        if isinstance(v, dict):
            tail.append(f"\n[{_toml_key(k)}]")
            tail += [f"{_toml_key(str(kk))} = {toml_value(vv)}" for kk, vv in v.items()]
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            for item in v:
                tail.append(f"\n[[{_toml_key(k)}]]")
                tail += [f"{_toml_key(str(kk))} = {toml_value(vv)}" for kk, vv in item.items()]
        else:
            lines.append(f"{_toml_key(k)} = {toml_value(v)}")
    return "\n".join(lines + tail) + "\n"


# -- value generators ------------------------------------------------------------------------------
_WEIRD = [0, -1, 1, 2, 3, 7, 99, 1000, 2**31 - 1, 2**31, 2**63 - 1, -2**63, 10**12, 0.5, 1e9,
          -0.0, float("inf"), float("-inf"), float("nan"), "", "x", "all", "1", "0", "-1",
          ".", "..", "t", "FetchResponse", "FetchResponce", "ProduceRequest", "running",
          "stopped", "zookeeper", "kraft", "3.7", "99.9", "0.8.2", "4.3", True, False, [],
          [[]], [1], [1, 99], [1, 1], [[1, 2]], [[1, 99]], {}, {"equals": 1},
          {"equal": 999}, "\u00e9\u4e2d", "a" * 300]


def _typo(rng: random.Random, s: str) -> str:
    if not s:
        return "x"
    i = rng.randrange(len(s))
    op = rng.randrange(3)
    if op == 0:
        return s[:i] + s[i + 1:]
    if op == 1:
        return s[:i] + rng.choice("abcdeilmnorstuy_") + s[i:]
    return s[:i] + rng.choice("abcdeilmnorstuy_") + s[i + 1:]


def _paths(obj: Any, prefix: tuple = ()) -> Iterator[tuple]:
    yield prefix
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _paths(v, (*prefix, i))


def _get(obj: Any, path: tuple) -> Any:
    for p in path:
        obj = obj[p]
    return obj


def mutate_data(rng: random.Random, data: Any, n: int = 1) -> Any:
    """``n`` structural mutations of parsed TOML data (a deep copy is changed)."""
    data = json.loads(json.dumps(data))   # TOML data is JSON-able but for dates (none here)
    for _ in range(n):
        paths = [p for p in _paths(data) if p]
        if not paths:
            break
        path = rng.choice(paths)
        parent = _get(data, path[:-1])
        key = path[-1]
        value = parent[key]
        op = rng.randrange(10)
        if op <= 3:                                  # replace by a weird value
            parent[key] = rng.choice(_WEIRD)
        elif op == 4 and isinstance(value, (int, float)) and not isinstance(value, bool):
            parent[key] = rng.choice([value * 1000, -value, value + 0.5, value * 10**9,
                                      value - 1, 0])
        elif op == 5 and isinstance(parent, dict):   # rename the key with a typo
            parent[_typo(rng, str(key))] = parent.pop(key)
        elif op == 6:                                # delete
            if isinstance(parent, dict):
                del parent[key]
            else:
                parent.pop(key)
        elif op == 7 and isinstance(value, str):
            parent[key] = _typo(rng, value)
        elif op == 8 and isinstance(parent, list):   # duplicate an entry
            parent.insert(key, json.loads(json.dumps(value)))
        else:                                         # swap for another value of the file
            other = _get(data, rng.choice(paths))
            parent[key] = json.loads(json.dumps(other))
    return data


def mutate_text(rng: random.Random, text: str) -> bytes:
    """A raw mutation of a file's bytes: flips, deletions, insertions, invalid UTF-8."""
    raw = bytearray(text.encode("utf-8"))
    op = rng.randrange(5)
    if op == 0 and raw:
        raw[rng.randrange(len(raw))] = rng.randrange(256)
    elif op == 1:
        lines = raw.split(b"\n")
        if lines:
            del lines[rng.randrange(len(lines))]
        raw = bytearray(b"\n".join(lines))
    elif op == 2:
        pos = rng.randrange(len(raw) + 1)
        raw[pos:pos] = rng.choice([b"\xff\xfe", b"\x00", b"= =", b"[[steps]]\n", b"\r",
                                   b"\n[[topics]]\nname = 1\n", b"9" * 30, b" "])
    elif op == 3 and raw:
        a = rng.randrange(len(raw))
        del raw[a:a + rng.randrange(1, 40)]
    else:
        raw += rng.choice([b"\nseed = 1\n", b"\n[cluster]\n", b"\xc3\x28", b"x = inf\n"])
    return bytes(raw)


# -- outcomes --------------------------------------------------------------------------------------
@dataclass
class Outcome:
    index: int
    target: str       # scenario / sweep / config / checkpoint
    kind: str         # ran / clean-error / traceback / hang / schema-invalid
    detail: str = ""


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)

    def counts(self) -> Counter:
        return Counter(o.kind for o in self.outcomes)

    def by_target(self) -> Counter:
        return Counter((o.target, o.kind) for o in self.outcomes)

    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.kind in FAILURE_KINDS]

    def summary(self) -> str:
        lines = [f"{len(self.outcomes)} mutations: " + ", ".join(
            f"{k} {v}" for k, v in sorted(self.counts().items()))]
        for (target, kind), n in sorted(self.by_target().items()):
            lines.append(f"  {target:<11} {kind:<15} {n}")
        for o in self.failures()[:20]:
            lines.append(f"  FAILURE #{o.index} {o.target} {o.kind}: {o.detail[:300]}")
        return "\n".join(lines)


#: outcomes that are failures: an exception that is not a clean error, a hang, a report failing
#: its schema, a condition without a comparison that loaded, a failed call that changed the state
FAILURE_KINDS = ("traceback", "hang", "schema-invalid", "no-comparison-accepted", "dirty-error")


class _WallClock(BaseException):
    """The per-case CPU-time bound (a BaseException, so that no handler inside the simulator
    that wraps an Exception can turn it into something else)."""


class Fuzzer:
    """Seeded mutations of kafkasim's inputs. ``max_events`` bounds every simulated run (an
    EventLimitExceeded is a clean ScenarioError), ``wall_s`` is a hard bound per case (CPU
    time, SIGPROF, main thread only) counted as a hang; ``quick`` restricts scenario runs to the
    shipped scenarios that run in well under a second."""

    QUICK_SCENARIOS = ("jepsen-2013-min-isr-2", "jepsen-2013-unclean-off", "kip101-scenario1-old",
                       "kip101-scenario1-fixed", "kip279-fast-failovers-old", "offline-unclean-on",
                       "seed-acks-min-isr", "seed-commit-offset-6", "seed-describe-p3-r3",
                       "seed-high-watermark", "seed-lag-messages-steady", "kip101-scenario2-old")

    def __init__(self, seed: int = 0, *, max_events: int = 20_000, wall_s: float = 60.0,
                 quick: bool = True) -> None:
        from kafkasim.scenarios.scenario import builtin_dir, builtin_names

        self.seed = seed
        self.max_events = max_events
        self.wall_s = wall_s
        names = [n for n in builtin_names() if not quick or n in self.QUICK_SCENARIOS]
        self.scenarios = {n: (builtin_dir() / f"{n}.toml").read_text(encoding="utf-8")
                          for n in names}
        sweeps = Path(__file__).resolve().parents[2] / "examples" / "sweeps"
        self.sweeps = {p.name: p.read_text(encoding="utf-8")
                       for p in sorted(sweeps.glob("*.toml"))} if sweeps.is_dir() else {}
        self._schema = None

    # -- the report schema --------------------------------------------------------------------
    def _validator(self):
        if self._schema is None:
            import jsonschema

            path = Path(__file__).resolve().parent.parent / "scenarios" / "report.schema.json"
            schema = json.loads(path.read_text(encoding="utf-8"))
            self._schema = jsonschema.Draft202012Validator(schema)
        return self._schema

    # -- cases ----------------------------------------------------------------------------------
    def case(self, i: int) -> Outcome:
        rng = random.Random(f"kafkasim-fuzz:{self.seed}:{i}")
        r = rng.random()
        target = "scenario" if r < 0.55 else "config" if r < 0.67 else \
            "api" if r < 0.79 else "checkpoint" if r < 0.9 else "sweep"
        if target == "sweep" and not self.sweeps:
            target = "scenario"
        fn = getattr(self, f"_{target}")
        return self._guard(i, target, lambda: fn(rng))

    def _guard(self, i: int, target: str, fn) -> Outcome:
        def alarm(*_a):
            raise _WallClock()

        # the bound is CPU time (ITIMER_PROF): a loop spends it, while a process starved by
        # a loaded host (or run at nice 19) does not, and no longer reads as a hang
        use_alarm = hasattr(signal, "SIGPROF")
        old = signal.signal(signal.SIGPROF, alarm) if use_alarm else None
        if use_alarm:
            signal.setitimer(signal.ITIMER_PROF, self.wall_s)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")   # ConfigWarning: a key the mode ignores
                kind, detail = fn()
            return Outcome(i, target, kind, detail)
        except _WallClock:
            return Outcome(i, target, "hang", f"more than {self.wall_s} s of CPU time")
        except _clean_errors() as exc:
            if not str(exc).strip():
                return Outcome(i, target, "traceback", f"{type(exc).__name__} without message")
            return Outcome(i, target, "clean-error", f"{type(exc).__name__}: {exc}")
        except RecursionError as exc:
            return Outcome(i, target, "traceback", f"RecursionError: {exc}")
        except Exception as exc:   # the failures the fuzz exists to find
            import traceback

            return Outcome(i, target, "traceback", f"{type(exc).__name__}: {exc}\n"
                           + "".join(traceback.format_exception(exc)[-6:]))
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_PROF, 0)
                signal.signal(signal.SIGPROF, old)

    def _scenario(self, rng: random.Random) -> tuple[str, str]:
        from kafkasim.scenarios.scenario import Scenario

        name = rng.choice(sorted(self.scenarios))
        text = self.scenarios[name]
        if rng.random() < 0.25:
            raw = mutate_text(rng, text)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                import tempfile

                with tempfile.NamedTemporaryFile("wb", suffix=".toml", delete=False) as f:
                    f.write(raw)
                try:
                    Scenario.load(f.name)
                finally:
                    Path(f.name).unlink()
                return "ran", "loaded undecodable bytes?"
        elif rng.random() < 0.2:
            # a condition left without its comparison (it would always hold): must be refused
            data = strip_comparison(rng, tomllib.loads(text))
            text = dumps_toml(data)
        else:
            data = mutate_data(rng, tomllib.loads(text), rng.choice([1, 1, 1, 2, 3]))
            text = dumps_toml(data)
        sc = Scenario.loads(text, f"{name}-mutant.toml")
        bare = uncompared_clauses(tomllib.loads(text))
        if bare:
            return "no-comparison-accepted", f"{name}: {bare[0]}"
        run = sc.run(max_events=self.max_events)
        rep = run.report()
        errors = sorted(self._validator().iter_errors(json.loads(json.dumps(rep))),
                        key=lambda e: list(e.path))
        if errors:
            return "schema-invalid", f"{name}: {errors[0].message} at {list(errors[0].path)}"
        return "ran", name

    def _config(self, rng: random.Random) -> tuple[str, str]:
        from kafkasim.runtime.cluster import Cluster

        version = rng.choice(["0.10.2", "2.0", "2.8", "3.7", "4.3"])
        kind = rng.choice(["broker", "broker", "topic", "producer", "consumer"])
        keys = sorted(kconfig.registry(kind))
        overrides: dict[str, Any] = {}
        for _ in range(rng.choice([1, 1, 2])):
            key = rng.choice(keys)
            if rng.random() < 0.1:
                key = _typo(rng, key)
            overrides[key] = rng.choice(_WEIRD + [str(rng.choice([0, -1, 1, 10**10]))])
        if kind == "broker":
            kconfig.broker_config(overrides, version)
            c = Cluster(3, kafka_version=version, config=overrides, seed=rng.randrange(100),
                        max_events=self.max_events)
        else:
            c = Cluster(3, kafka_version=version, seed=rng.randrange(100),
                        max_events=self.max_events)
        try:
            if kind == "topic":
                c.create_topic("t", 2, 3, config=overrides)
            else:
                c.create_topic("t", 2, 3)
            if kind == "producer":
                p = c.producer("p", **overrides)
                for k in range(5):
                    p.send("t", f"v{k}")
            elif kind == "consumer":
                cons = c.consumer("g", "c", **overrides)
                cons.assign("t")
                cons.poll(1000)
            c.run(rng.choice([1000, 10_000, 60_000]))
        except _event_limit() as exc:   # the budget: a clean stop naming the limit
            return "clean-error", f"EventLimitExceeded: {exc}"
        return "ran", f"{kind} {overrides}"

    def _checkpoint(self, rng: random.Random) -> tuple[str, str]:
        from kafkasim.core.checkpoint import (
            format_epochs,
            format_offsets,
            parse_epochs,
            parse_offsets,
        )
        from kafkasim.core.leader_epoch import LeaderEpochFileCache

        epochs = rng.random() < 0.5
        if epochs:
            text = format_epochs([(e, e * 3) for e in range(rng.randrange(5))])
        else:
            text = format_offsets([("t", p, p * 7) for p in range(rng.randrange(5))])
        raw = mutate_text(rng, text)
        if rng.random() < 0.5:
            raw = raw.replace(b"3", str(rng.choice([2**31, 2**63, -5, 10**30])).encode(), 1)
        if rng.random() < 0.3:
            return self._checkpoint_on_disk(rng, raw)
        try:
            decoded = raw.decode("utf-8")
        except UnicodeDecodeError:
            return "clean-error", "undecodable (LogDir.read reports it)"
        if epochs:
            entries = parse_epochs(decoded, "leader-epoch-checkpoint")
            try:
                LeaderEpochFileCache.from_checkpoint(entries)
            except ValueError as exc:   # the broker raises it as CorruptCheckpointError
                raise CorruptCheckpointError("leader-epoch-checkpoint", None, str(exc)) from None
        else:
            parse_offsets(decoded, "replication-offset-checkpoint")
        return "ran", "parsed"

    def _checkpoint_on_disk(self, rng: random.Random, raw: bytes) -> tuple[str, str]:
        """Restart a broker over a mutated checkpoint file in a real log dir."""
        import tempfile

        from kafkasim.runtime.cluster import Cluster

        with tempfile.TemporaryDirectory() as d:
            c = Cluster(3, kafka_version=rng.choice(["2.6", "3.7", "4.3"]), log_dirs=d,
                        seed=1, max_events=self.max_events)
            c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
            p = c.producer("p", acks="all")
            for k in range(6):
                p.send("t", f"v{k}")
            c.run(2000)
            c.crash(2)
            c.run(20_000 if c.kraft is None else 2000)
            name = rng.choice(["t-0/leader-epoch-checkpoint", "replication-offset-checkpoint",
                               "recovery-point-offset-checkpoint"])
            path = Path(c.brokers[2].log_manager.log_dir.path(name))
            path.unlink(missing_ok=True)
            if rng.random() < 0.1:
                path.mkdir()
            else:
                path.write_bytes(raw)
            try:
                c.start(2)
                c.run(5000)
            except _event_limit() as exc:
                return "clean-error", f"EventLimitExceeded: {exc}"
        return "ran", name

    def _sweep(self, rng: random.Random) -> tuple[str, str]:
        from kafkasim.experiments import Sweep

        name = rng.choice(sorted(self.sweeps))
        text = self.sweeps[name]
        if rng.random() < 0.2:
            raw = mutate_text(rng, text)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError:
                return "clean-error", "undecodable (Sweep.load reports it)"
        else:
            text = dumps_toml(mutate_data(rng, tomllib.loads(text), rng.choice([1, 2])))
        sw = Sweep.loads(text, name)
        if len(sw.seeds) > 0:
            sw = sw.with_runs(min(len(sw), 2))
        sw.validate()
        return "ran", f"{name}: validated {len(sw)} run(s)"

    def _api(self, rng: random.Random) -> tuple[str, str]:
        """A bad call on the façade (a broker, topic, filter, duration or config that does not
        exist or is out of range): a clean error naming it, and the cluster as it was."""
        from kafkasim.runtime.cluster import Cluster

        c = Cluster(3, kafka_version=rng.choice(["2.0", "3.7", "4.3"]), seed=rng.randrange(100),
                    max_events=self.max_events)
        c.create_topic("t", 2, 3)
        p = c.producer("p", acks="all")
        p.send("t", "v")
        c.run(500)
        what, fn = _bad_call(rng, c, p)
        before = _state(c)
        try:
            fn()
        except _event_limit() as exc:
            return "clean-error", f"EventLimitExceeded: {exc}"
        except _clean_errors() as exc:
            if _state(c) != before:
                return "dirty-error", f"{what}: {type(exc).__name__}: {exc}"
            raise
        return "ran", what

    def run(self, n: int, start: int = 0, budget_s: float | None = None) -> Report:
        report = Report()
        t0 = time.monotonic()
        for i in range(start, start + n):
            report.outcomes.append(self.case(i))
            if budget_s is not None and time.monotonic() - t0 > budget_s:
                break
        return report


def _state(c) -> tuple:
    """What a failed call must leave as it was."""
    return (c.now, c.trace.total, c.engine.scheduled, len(c.records),
            tuple((b, br.state) for b, br in sorted(c.brokers.items())),
            tuple((t, len(c.assignment(t))) for t in sorted(c.topics.names())),
            tuple(sorted(c.clients)))


def _bad_call(rng: random.Random, c, p) -> tuple[str, Any]:
    """One call with at least one argument drawn from the weird values (or a typo)."""
    def w():
        return rng.choice(_WEIRD)

    def node():
        return rng.choice([*_WEIRD, 1, 2, 3, "broker-1", "zookeper", 3000, 3001])

    calls = [
        ("crash", lambda: c.crash(node())), ("power_loss", lambda: c.power_loss(node())),
        ("shutdown", lambda: c.shutdown(node())), ("start", lambda: c.start(node())),
        ("pause", lambda: c.pause(rng.choice([1, node()]), w())),
        ("slow", lambda: c.slow(rng.choice([1, node()]), w(), w())),
        ("restart", lambda: c.restart(rng.choice([2, node()]), wait_ms=w())),
        ("cut", lambda: c.cut(node(), node())),
        ("partition_network", lambda: c.partition_network(w(), w())),
        ("hold", lambda: c.hold(rng.choice([None, "FetchResponse", w()]),
                                src=rng.choice([None, node()]), dst=rng.choice([None, node()]),
                                count=rng.choice([-1, 1, w()]))),
        ("delay", lambda: c.delay(w(), rng.choice([None, "FetchResponse", w()]),
                                  src=rng.choice([None, node()]))),
        ("create_topic", lambda: c.create_topic(rng.choice(["u", w()]), w(), w())),
        ("elect", lambda: c.elect(rng.choice(["t", w()]), w())),
        ("run", lambda: c.run(w())),
        ("run_to", lambda: c.run_to(w())),
        ("send", lambda: p.send(rng.choice(["t", w()]), w(), partition=w())),
        ("producer", lambda: c.producer("q", **_bad_config(rng, "producer"))),
        ("consumer", lambda: c.consumer("g", "c", **_bad_config(rng, "consumer"))),
        ("alter_config", lambda: c.alter_config(rng.choice(["topics", "brokers", w()]),
                                                rng.choice(["t", 1, w()]),
                                                _bad_config(rng, "topic"))),
        ("where", lambda: c.trace.where(kind=rng.choice(["sned", w()]))),
        ("leader", lambda: c.leader(rng.choice(["t", w()]), w())),
        ("log", lambda: c.log(node(), rng.choice(["t", w()]), w())),
    ]
    what, fn = rng.choice(calls)
    return what, fn


def _bad_config(rng: random.Random, kind: str) -> dict:
    keys = sorted(kconfig.registry(kind))
    key = rng.choice(keys)
    if rng.random() < 0.3:
        key = _typo(rng, key)
    return {key: rng.choice(_WEIRD)}


def strip_comparison(rng: random.Random, data: dict) -> dict:
    """``data`` with one condition clause's comparisons removed (or one condition emptied)."""
    from kafkasim.scenarios.schema import CLAUSE_COMPARISONS

    found = []
    for step in data.get("steps", []) if isinstance(data.get("steps"), list) else []:
        for where in ("that", "until"):
            cond = step.get(where) if isinstance(step, dict) else None
            if isinstance(cond, dict):
                found.append(cond)
    if not found:
        return data
    cond = rng.choice(found)
    clauses = [k for k, v in cond.items() if k in CLAUSE_COMPARISONS and isinstance(v, dict)]
    if not clauses or rng.random() < 0.2:
        cond.clear()
        return data
    key = rng.choice(clauses)
    spec = cond[key]
    for k in CLAUSE_COMPARISONS[key]:
        spec.pop(k, None)
    return data


def uncompared_clauses(data: dict) -> list[str]:
    """The conditions of ``data``'s steps that compare nothing (an empty condition, or a clause
    with none of its comparison keys): each would always hold."""
    from kafkasim.scenarios.schema import CLAUSE_COMPARISONS

    out = []
    steps = data.get("steps") if isinstance(data, dict) else None
    for i, step in enumerate(steps if isinstance(steps, list) else []):
        for where in ("that", "until"):
            cond = step.get(where) if isinstance(step, dict) else None
            if not isinstance(cond, dict):
                continue
            if not cond:
                out.append(f"step {i + 1}: {where} = {{}}")
            for k, v in cond.items():
                if isinstance(v, dict) and k in CLAUSE_COMPARISONS and \
                        not any(c in v for c in CLAUSE_COMPARISONS[k]):
                    out.append(f"step {i + 1}: {where}.{k} = {v!r}")
    return out


def _event_limit():
    from kafkasim.runtime.engine import EventLimitExceeded

    return EventLimitExceeded


__all__ = ["CLEAN_ERRORS", "FAILURE_KINDS", "Fuzzer", "Outcome", "Report", "dumps_toml",
           "mutate_data", "mutate_text", "limits", "strip_comparison", "uncompared_clauses"]
