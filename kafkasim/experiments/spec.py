"""Run specs and sweeps: what one simulation run is, and how a sweep file expands into runs.

A ``RunSpec`` is plain JSON-able data (a run is a pure function of it); a ``Sweep`` is a base spec,
a grid, optional named cases and a list of seeds, expanded into ``RunSpec`` objects in a fixed
order. ``validate_specs`` checks every spec before anything runs. The file format is documented in
the package docstring (``kafkasim.experiments``).
"""

from __future__ import annotations

import copy
import dataclasses
import difflib
import hashlib
import itertools
import json
import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkasim.scenarios.schema import parse_toml
from kafkasim.settings import limits

__all__ = [
    "CLUSTER_FIELDS",
    "CONFIG_SECTIONS",
    "FAULT_FIELDS",
    "FAULT_KINDS",
    "RunSpec",
    "Sweep",
    "SweepError",
    "TOP_FIELDS",
    "WORKLOAD_FIELDS",
    "validate_spec",
    "validate_specs",
]


class SweepError(ValueError):
    """A malformed sweep file or an invalid run spec; raised before any run starts.

    ``problems`` lists every distinct problem found (the message shows the first few).
    """

    def __init__(self, message: str, problems: Sequence[str] = ()) -> None:
        super().__init__(message)
        self.problems = list(problems) or [message]


# -- the fields a run spec has -----------------------------------------------------------------

#: top-level scalar fields of a run spec (and of ``[base]``)
TOP_FIELDS = ("kafka_version", "scenario", "scenario_text", "duration_ms", "drain_ms", "check",
              "trace_digest")
#: sections whose keys are Kafka config keys, verbatim (``server.properties``, topic, producer)
CONFIG_SECTIONS = ("broker", "topic", "producer")
#: the generated cluster and topic
CLUSTER_FIELDS = ("brokers", "partitions", "replication_factor", "topic", "latency_ms",
                  "jitter_ms", "slow")
#: the generated produce workload
WORKLOAD_FIELDS = ("rate", "segments", "burst")
BURST_FIELDS = ("every_ms", "length_ms", "rate")
#: the fault plan
FAULT_FIELDS = ("kind", "rate_per_min", "down_ms", "start_ms", "end_ms", "max_down", "brokers",
                "steps")
FAULT_KINDS = ("crash", "power_loss", "shutdown", "pause")
#: scripted fault steps: action -> (required keys, optional keys), besides ``at_ms`` and ``do``
FAULT_STEPS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "crash": (("broker",), ()),
    "power_loss": (("broker",), ()),
    "shutdown": (("broker",), ()),
    "start": (("broker",), ()),
    "pause": (("broker", "ms"), ()),
    "slow": (("broker",), ("network_ms", "disk_ms")),
    "cut": (("a", "b"), ("one_way",)),
    "heal": ((), ()),
}
SECTION_FIELDS: dict[str, tuple[str, ...] | None] = {
    "cluster": CLUSTER_FIELDS,
    "broker": None,      # Kafka keys: checked against kafkasim.settings.config
    "topic": None,
    "producer": None,
    "workload": WORKLOAD_FIELDS,
    "faults": FAULT_FIELDS,
}
SWEEP_KEYS = ("name", "description", "seeds", "base", "grid", "cases")


DEFAULT_TOPIC = "sweep"
DEFAULTS = {
    "duration_ms": 60000, "drain_ms": 10000, "check": True, "trace_digest": False,
    "brokers": 3, "partitions": 1, "latency_ms": 1, "jitter_ms": 1, "rate": 10.0,
}


def _suggest(word: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(str(word), list(known), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def _canonical(value: Any) -> Any:
    """JSON-able, order-stable form: tuples become lists, mapping keys become strings."""
    if isinstance(value, Mapping):
        return {str(k): _canonical(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_canonical(v) for v in value]
    return value


# -- one run -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class RunSpec:
    """Everything one simulation run depends on, as plain data.

    Either a generated run (``cluster`` / ``workload`` describe a cluster, one topic and a
    producer with a steady or segmented rate) or a scenario run (``scenario`` names a built-in
    scenario or a .toml file, or ``scenario_text`` is its TOML and ``scenario`` only names it),
    with Kafka config overrides
    (``broker``, ``topic``, ``producer``), a fault plan (``faults``) and a ``seed``.
    ``run_id`` and ``params`` (what the sweep varied, for the result table) do not affect the run.
    """

    seed: int = 0
    kafka_version: str | None = None
    scenario: str | None = None
    scenario_text: str | None = None
    duration_ms: int | None = None
    drain_ms: int | None = None
    check: bool = True
    trace_digest: bool = False
    cluster: Mapping[str, Any] = field(default_factory=dict)
    broker: Mapping[str, Any] = field(default_factory=dict)
    topic: Mapping[str, Any] = field(default_factory=dict)
    producer: Mapping[str, Any] = field(default_factory=dict)
    workload: Mapping[str, Any] = field(default_factory=dict)
    faults: Mapping[str, Any] = field(default_factory=dict)
    run_id: int = 0
    params: Mapping[str, Any] = field(default_factory=dict)

    # -- conversions ------------------------------------------------------------------------------
    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, where: str = "run spec") -> RunSpec:
        """Build from a dict shaped like the dataclass (unknown keys are an error)."""
        if not isinstance(data, Mapping):
            raise SweepError(f"{where}: must be a table, got {type(data).__name__}")
        names = [f.name for f in dataclasses.fields(cls)]
        for key in data:
            if key not in names:
                raise SweepError(f"{where}: unknown field '{key}'{_suggest(key, names)}")
        kw = {k: _canonical(v) for k, v in data.items()}
        for sec in SECTION_FIELDS:
            if sec in kw and kw[sec] is not None and not isinstance(kw[sec], Mapping):
                raise SweepError(f"{where}: [{sec}] must be a table, got "
                                 f"{type(kw[sec]).__name__}")
            if sec in kw and kw[sec] is None:
                kw[sec] = {}
        return cls(**kw)

    def to_dict(self) -> dict[str, Any]:
        return {f.name: _canonical(getattr(self, f.name)) for f in dataclasses.fields(self)}

    def to_json(self) -> str:
        """Canonical JSON (sorted keys): equal specs give equal text in any process."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str) -> RunSpec:
        return cls.from_dict(json.loads(text))

    def replace(self, **changes: Any) -> RunSpec:
        return dataclasses.replace(self, **changes)

    def config_key(self) -> str:
        """The spec without seed, run id and labels: runs that differ only in seed share it."""
        d = self.to_dict()
        for k in ("seed", "run_id", "params"):
            d.pop(k)
        return json.dumps(d, sort_keys=True, separators=(",", ":"))

    @property
    def is_scenario(self) -> bool:
        return self.scenario is not None or self.scenario_text is not None

    def label(self) -> str:
        """Short text naming the run: its id, what the sweep varied, its seed."""
        params = ", ".join(f"{k}={v!r}" for k, v in self.params.items())
        return f"run {self.run_id}" + (f" ({params})" if params else "") + f" seed {self.seed}"


# -- setting values by path --------------------------------------------------------------------
def set_path(spec: dict[str, Any], path: str, value: Any, *, where: str) -> None:
    """Set ``path`` in a spec dict: ``kafka_version``, ``cluster.brokers``,
    ``topic.min.insync.replicas`` (everything after ``broker.``/``topic.``/``producer.`` is a Kafka
    key), ``faults.rate_per_min``..."""
    if not isinstance(path, str) or not path:
        raise SweepError(f"{where}: parameter names must be non-empty strings, got {path!r}")
    if path in TOP_FIELDS:
        spec[path] = _canonical(value)
        return
    section, _, rest = path.partition(".")
    if section not in SECTION_FIELDS or not rest:
        known = [*TOP_FIELDS, *SECTION_FIELDS]
        hint = _suggest(section if rest else path, known)
        raise SweepError(
            f"{where}: unknown parameter '{path}'{hint} (use a top-level field "
            f"({', '.join(TOP_FIELDS)}) or <section>.<key> with section one of "
            f"{', '.join(SECTION_FIELDS)})")
    fields = SECTION_FIELDS[section]
    if fields is not None and rest not in fields:
        raise SweepError(f"{where}: unknown parameter '{path}': [{section}] has no field "
                         f"'{rest}' (its fields are {', '.join(fields)}){_suggest(rest, fields)}")
    sec = spec.get(section)
    sec = dict(sec) if isinstance(sec, Mapping) else {}
    sec[rest] = _canonical(value)
    spec[section] = sec


def get_path(spec: Mapping[str, Any], path: str) -> Any:
    if path in TOP_FIELDS:
        return spec.get(path)
    section, _, rest = path.partition(".")
    return (spec.get(section) or {}).get(rest)


# -- seeds -------------------------------------------------------------------------------------
class SeedRange(Sequence):
    """Consecutive seeds ``start .. stop - 1``, generated on demand (a sweep of a million seeds
    holds two integers, not a list); equal to the list of the same seeds."""

    __slots__ = ("start", "stop")

    def __init__(self, start: int, stop: int) -> None:
        self.start, self.stop = start, max(start, stop)

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, i):
        r = range(self.start, self.stop)[i]
        return SeedRange(r.start, r.stop) if isinstance(r, range) and r.step == 1 else \
            (list(r) if isinstance(r, range) else r)

    def __iter__(self):
        return iter(range(self.start, self.stop))

    def __eq__(self, other) -> bool:
        if isinstance(other, SeedRange):
            return (self.start, self.stop) == (other.start, other.stop) or not (self or other)
        if isinstance(other, (list, tuple, range)):
            return len(other) == len(self) and all(a == b for a, b in zip(self, other,
                                                                           strict=True))
        return NotImplemented

    def __hash__(self) -> int:
        return hash((self.start, self.stop))

    def __repr__(self) -> str:
        return f"SeedRange({self.start}, {self.stop})"


def parse_seeds(value: Any, *, where: str = "seeds") -> Sequence[int]:
    """``20`` (seeds 0..19), ``[3, 5, 8]``, or ``{ start = 100, count = 50 }``. A count gives a
    :class:`SeedRange` (generated lazily, never a materialised list); at most limits.MAX_RUNS seeds,
    each a Java long."""
    def is_int(x: Any) -> bool:
        return isinstance(x, int) and not isinstance(x, bool)

    def bounded(count: int) -> None:
        if count > limits.MAX_RUNS:
            raise SweepError(f"{where}: {count} seeds is more than limits.MAX_RUNS = "
                             f"{limits.MAX_RUNS}")

    if is_int(value):
        if value < 1:
            raise SweepError(f"{where}: a seed count must be at least 1, got {value}")
        bounded(value)
        return SeedRange(0, value)
    if isinstance(value, (list, tuple)):
        if not value:
            raise SweepError(f"{where}: the seed list is empty")
        bounded(len(value))
        bad = [s for s in value if not is_int(s) or abs(s) > limits.LONG_MAX]
        if bad:
            raise SweepError(f"{where}: seeds must be integers (Java longs), got {bad[0]!r}")
        if len(set(value)) != len(value):
            raise SweepError(f"{where}: seeds must be distinct, got {list(value)}")
        return list(value)
    if isinstance(value, Mapping):
        unknown = [k for k in value if k not in ("start", "count")]
        if unknown:
            raise SweepError(f"{where}: unknown key '{unknown[0]}'"
                             f"{_suggest(unknown[0], ('start', 'count'))}; use "
                             "{ start = N, count = M }")
        start, count = value.get("start", 0), value.get("count")
        if not is_int(start) or not is_int(count) or count < 1:
            raise SweepError(f"{where}: need integer start and count >= 1, got {dict(value)}")
        bounded(count)
        if abs(start) > limits.LONG_MAX or abs(start + count) > limits.LONG_MAX:
            raise SweepError(f"{where}: seeds must be Java longs, got {dict(value)}")
        return SeedRange(start, start + count)
    raise SweepError(f"{where}: give a count (20), a list ([1, 2, 3]) or "
                     f"{{ start = 1, count = 20 }}, got {value!r}")


# -- a sweep -----------------------------------------------------------------------------------
class Sweep:
    """A base spec × a grid (every combination) × named cases × seeds, in a fixed order.

    Runs are numbered seed-major: all combinations for the first seed, then for the second...,
    so any prefix of the runs covers every combination about equally (``with_runs``).
    """

    def __init__(self, base: Mapping[str, Any] | None = None,
                 grid: Mapping[str, Sequence[Any]] | None = None,
                 seeds: Any = 1, cases: Sequence[Mapping[str, Any]] | None = None, *,
                 name: str = "sweep", description: str = "", source: str = "<sweep>",
                 limit: int | None = None) -> None:
        self.name = name
        self.description = description
        self.source = source
        self.base = self._base(base or {})
        self.grid = self._grid(grid or {})
        self.cases = self._cases(cases or [])
        self.seeds = parse_seeds(seeds, where=f"{source}: seeds")
        self.limit = limit
        self._specs: list[RunSpec] | None = None
        runs = len(self)
        if runs > limits.MAX_RUNS:
            raise SweepError(f"{source}: {self.combinations} combinations x {len(self.seeds)} "
                             f"seeds = {runs} runs, more than limits.MAX_RUNS = "
                             f"{limits.MAX_RUNS}")

    # -- construction ---------------------------------------------------------------------------
    def _base(self, base: Mapping[str, Any]) -> dict[str, Any]:
        where = f"{self.source}: [base]"
        if not isinstance(base, Mapping):
            raise SweepError(f"{where} must be a table")
        out: dict[str, Any] = {}
        for key, value in base.items():
            if key in SECTION_FIELDS:
                if not isinstance(value, Mapping):
                    raise SweepError(f"{where}: [base.{key}] must be a table, got "
                                     f"{type(value).__name__}")
                for k, v in value.items():
                    set_path(out, f"{key}.{k}", v, where=f"{where}.{key}")
            elif key in TOP_FIELDS:
                out[key] = _canonical(value)
            else:
                known = [*TOP_FIELDS, *SECTION_FIELDS]
                raise SweepError(f"{where}: unknown key '{key}'{_suggest(key, known)} "
                                 f"(known: {', '.join(known)})")
        return out

    def _grid(self, grid: Mapping[str, Sequence[Any]]) -> dict[str, list[Any]]:
        where = f"{self.source}: [grid]"
        if not isinstance(grid, Mapping):
            raise SweepError(f"{where} must be a table of parameter = [values]")
        out = {}
        for key, values in grid.items():
            if not isinstance(values, (list, tuple)) or not values:
                raise SweepError(f"{where}: '{key}' must be a non-empty list of values, got "
                                 f"{values!r}")
            set_path({}, key, values[0], where=where)   # checks the name
            out[key] = [_canonical(v) for v in values]
            repeated = sorted({repr(v) for i, v in enumerate(out[key]) if v in out[key][:i]})
            if repeated:   # the same runs twice, counted twice in every summary
                raise SweepError(f"{where}: '{key}' lists {', '.join(repeated)} more than once; "
                                 f"the values of a parameter must be distinct, got {values!r}")
        return out

    def _cases(self, cases: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        out = []
        labels = set()
        if not isinstance(cases, (list, tuple)):
            raise SweepError(f"{self.source}: cases must be an array of tables ([[cases]])")
        for i, case in enumerate(cases):
            where = f"{self.source}: case {i + 1}"
            if not isinstance(case, Mapping):
                raise SweepError(f"{where}: must be a table")
            case = dict(case)
            label = str(case.pop("label", f"case {i + 1}"))
            if label in labels:
                raise SweepError(f"{where}: duplicate label '{label}'")
            labels.add(label)
            for key, value in case.items():
                set_path({}, key, value, where=where)
                if key in self.grid:
                    raise SweepError(f"{where}: '{key}' is also in [grid]; vary it in one place")
            out.append({"label": label, **{k: _canonical(v) for k, v in case.items()}})
        return out

    @classmethod
    def load(cls, path: str | Path) -> Sweep:
        p = Path(path)
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise SweepError(f"{p}: cannot read sweep file: {exc.strerror}") from exc
        try:
            text = raw.decode("utf-8-sig")   # a byte-order mark is read and ignored
        except UnicodeDecodeError as exc:
            line = raw[:exc.start].count(b"\n") + 1
            raise SweepError(f"{p}: line {line}: not UTF-8 text (TOML files are UTF-8)"
                             ) from None
        return cls.loads(text, str(p))

    @classmethod
    def loads(cls, text: str, source: str = "<sweep>") -> Sweep:
        """A sweep file's text; one that says nothing about what to run (no [base], [grid],
        [[cases]] or seeds: an empty file, a comment, a name) is refused rather than run as a
        default run."""
        data = parse_toml(text.removeprefix("\ufeff"), source, SweepError)
        if not any(k in data for k in ("base", "grid", "cases", "seeds")):
            raise SweepError(f"{source}: the sweep file says nothing to run: give [base] (the "
                             "run: scenario or workload, topic, faults), [grid] (values to vary), "
                             "[[cases]] or seeds; an empty sweep is not run as a default run")
        return cls.from_dict(data, source=source)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any], *, source: str = "<sweep>") -> Sweep:
        if not isinstance(data, Mapping):
            raise SweepError(f"{source}: a sweep is a table, got {type(data).__name__}")
        for key in data:
            if key not in SWEEP_KEYS:
                raise SweepError(f"{source}: unknown key '{key}'{_suggest(key, SWEEP_KEYS)} "
                                 f"(a sweep file has {', '.join(SWEEP_KEYS)})")
        for key in ("name", "description"):
            if key in data and not isinstance(data[key], str):
                raise SweepError(f"{source}: {key} must be a string, got {data[key]!r}")
        return cls(data.get("base"), data.get("grid"), data.get("seeds", 1), data.get("cases"),
                   name=str(data.get("name", Path(source).stem)),
                   description=str(data.get("description", "")), source=source)

    # -- expansion ------------------------------------------------------------------------------
    @property
    def combinations(self) -> int:
        return max(1, len(self.cases)) * math.prod(len(v) for v in self.grid.values())

    def __len__(self) -> int:
        n = self.combinations * len(self.seeds)   # len of a range: no list built
        return n if self.limit is None else min(n, self.limit)

    def with_runs(self, n: int) -> Sweep:
        """The same sweep with exactly ``n`` runs: seeds are extended (continuing from the last
        one) or cut so that combinations × seeds covers ``n``, then the run list is cut at ``n``."""
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise SweepError(f"the number of runs must be a positive integer, got {n!r}")
        if n > limits.MAX_RUNS:
            raise SweepError(f"{n} runs is more than limits.MAX_RUNS = {limits.MAX_RUNS}")
        need = math.ceil(n / self.combinations)
        if isinstance(self.seeds, SeedRange):
            seeds: Sequence[int] = SeedRange(self.seeds.start, self.seeds.start + need)
        else:
            seeds = list(self.seeds[:need])
            nxt = max(self.seeds) + 1
            if len(seeds) < need:
                seeds = [*seeds, *range(nxt, nxt + need - len(seeds))]
        out = copy.copy(self)
        out.seeds = seeds
        out.limit = n
        out._specs = None
        return out

    def _param_sets(self) -> list[dict[str, Any]]:
        cases = self.cases or [None]
        keys = list(self.grid)
        combos = list(itertools.product(*(self.grid[k] for k in keys))) if keys else [()]
        out = []
        for case in cases:
            for combo in combos:
                params: dict[str, Any] = {}
                if case is not None:
                    params["case"] = case["label"]
                    params.update({k: v for k, v in case.items() if k != "label"})
                params.update(zip(keys, combo, strict=True))
                out.append(params)
        return out

    @property
    def specs(self) -> list[RunSpec]:
        """The runs, numbered from 0 (seed-major)."""
        if self._specs is None:
            specs = []
            run_id = 0
            param_sets = self._param_sets()
            for seed in self.seeds:
                for params in param_sets:
                    if self.limit is not None and run_id >= self.limit:
                        break
                    data = copy.deepcopy(self.base)
                    for key, value in params.items():
                        if key != "case":
                            set_path(data, key, value, where=self.source)
                    specs.append(RunSpec.from_dict(
                        {**data, "seed": seed, "run_id": run_id, "params": params},
                        where=self.source))
                    run_id += 1
            self._specs = specs
        return self._specs

    def __iter__(self):
        return iter(self.specs)

    @property
    def param_names(self) -> list[str]:
        """Result columns for what the sweep varies: ``case`` (if any), case keys, grid keys."""
        names: list[str] = []
        if self.cases:
            names.append("case")
            for case in self.cases:
                names += [k for k in case if k != "label" and k not in names]
        names += [k for k in self.grid if k not in names]
        return names

    def table(self):
        """The runs as a pandas DataFrame of inputs: run_id, seed and the varied parameters."""
        return specs_table(self.specs, self.param_names)

    def validate(self) -> Sweep:
        """Check every run spec (see ``validate_specs``); returns self."""
        validate_specs(self.specs)
        return self

    def run(self, mode: str = "auto", **kw: Any):
        """Run the sweep; see ``kafkasim.experiments.run_sweep``."""
        from kafkasim.experiments.runner import run_sweep

        return run_sweep(self, mode=mode, **kw)

    def __repr__(self) -> str:
        grid = ", ".join(f"{k}×{len(v)}" for k, v in self.grid.items()) or "no grid"
        cases = f", {len(self.cases)} cases" if self.cases else ""
        return (f"Sweep({self.name!r}: {grid}{cases}, {len(self.seeds)} seed(s), "
                f"{len(self)} runs)")


def _column_values(values: list[Any]):
    """A pandas-friendly column: bool, int, float or text (lists/tables as JSON)."""
    import pandas as pd

    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present) and len(present) == len(values):
        return pd.Series(values, dtype="bool")
    if present and len(present) == len(values) and all(
            isinstance(v, int) and not isinstance(v, bool) for v in present):
        return pd.Series(values, dtype="int64")
    if present and len(present) == len(values) and all(
            isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return pd.Series([float(v) for v in values], dtype="float64")
    return pd.Series([None if v is None else v if isinstance(v, str) else
                      json.dumps(v, sort_keys=True) for v in values], dtype="object")


def specs_table(specs: Sequence[RunSpec], param_names: Sequence[str] | None = None):
    """run_id, seed, and one column per varied parameter (default: every key of ``params``)."""
    import pandas as pd

    if param_names is None:
        param_names = []
        for s in specs:
            param_names += [k for k in s.params if k not in param_names]
    cols: dict[str, Any] = {
        "run_id": pd.Series([s.run_id for s in specs], dtype="int64"),
        "seed": pd.Series([s.seed for s in specs], dtype="int64"),
    }
    for name in param_names:
        if name in cols:
            continue
        cols[name] = _column_values([s.params.get(name) for s in specs])
    return pd.DataFrame(cols)


# -- validation --------------------------------------------------------------------------------
def _is_int(x: Any) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _is_num(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def _check_fields(section: str, data: Mapping[str, Any], allowed: Sequence[str]) -> None:
    for key in data:
        if key not in allowed:
            raise SweepError(f"[{section}] has no field '{key}' (its fields are "
                             f"{', '.join(allowed)}){_suggest(key, allowed)}")


def _int_field(where: str, value: Any, *, minimum: int = 0,
               maximum: int = limits.MAX_TIME_MS) -> int:
    """An integer field from ``minimum`` to ``maximum`` (by default limits.MAX_TIME_MS: every
    time in a sweep is integer milliseconds of at most one simulated day)."""
    if not _is_int(value) or not minimum <= value <= maximum:
        raise SweepError(f"{where} must be an integer from {minimum} to {maximum}, got "
                         f"{value!r}")
    return value


def _is_scenario_file(name: str) -> bool:
    return name.endswith(".toml") and Path(name).is_file()


def embed_scenario_file(spec: RunSpec) -> RunSpec:
    """A spec naming a scenario *file* gets the file's text (``scenario_text``), so it runs
    where the file is not (Spark executors); the path stays as its name."""
    if spec.scenario is None or spec.scenario_text is not None or \
            not _is_scenario_file(spec.scenario):
        return spec
    try:
        text = Path(spec.scenario).read_text(encoding="utf-8")
    except OSError as exc:
        raise SweepError(f"{spec.scenario}: cannot read scenario file: {exc.strerror}") from exc
    return spec.replace(scenario_text=text)


def _builtin_scenario_text(name: str) -> str | None:
    """A built-in scenario's TOML, read through the package loader (works from a zip too)."""
    import pkgutil

    stem = name[:-len(".toml")] if name.endswith(".toml") else name
    if not stem or "/" in stem or "\\" in stem:
        return None
    try:
        data = pkgutil.get_data("kafkasim", f"scenarios/{stem}.toml")
    except OSError:
        return None
    return None if data is None else data.decode("utf-8")


def _scenario_for(spec: RunSpec):
    """The scenario of a scenario run with the spec's overrides applied (validated).

    ``scenario_text`` is the scenario when given (``scenario`` then only names it); otherwise
    ``scenario`` is a built-in name (source ``kafkasim/scenarios/<name>.toml``, the same on every
    machine) or a .toml path.
    """
    from kafkasim.scenarios.scenario import Scenario, ScenarioError

    try:
        if spec.scenario_text is not None:
            base = Scenario.loads(spec.scenario_text, spec.scenario or "<scenario_text>")
        elif _is_scenario_file(spec.scenario):
            base = Scenario.load(spec.scenario)
        else:
            text = _builtin_scenario_text(spec.scenario)
            if text is None:
                Scenario.named(spec.scenario)   # raises, naming the closest built-in scenario
                raise SweepError(f"no built-in scenario '{spec.scenario}'")
            stem = spec.scenario.removesuffix(".toml")
            base = Scenario.loads(text, f"kafkasim/scenarios/{stem}.toml")
    except ScenarioError as exc:
        raise SweepError(str(exc)) from exc
    data = copy.deepcopy(base.data)
    if spec.kafka_version is not None:
        data["kafka_version"] = spec.kafka_version
    cl = data.setdefault("cluster", {})
    for key in ("latency_ms", "jitter_ms"):
        if key in spec.cluster:
            cl[key] = spec.cluster[key]
    if spec.broker:
        cl["config"] = {**cl.get("config", {}), **spec.broker}
    if spec.topic:
        for t in data.get("topics", []):
            t["config"] = {**t.get("config", {}), **spec.topic}
    if spec.producer:
        for client in data.get("clients", []):
            if client.get("type") == "producer":
                client["config"] = {**client.get("config", {}), **spec.producer}
    try:
        sc = Scenario(data, base.source, base.text, base.step_lines)
        sc.validate()
    except ScenarioError as exc:
        raise SweepError(str(exc)) from exc
    return sc


def _broker_ids_of(spec: RunSpec, scenario=None) -> list[int]:
    if scenario is not None:
        cl = scenario.data.get("cluster", {})
        if "broker_ids" in cl:
            return list(cl["broker_ids"])
        return list(range(1, cl.get("brokers", 3) + 1))
    return list(range(1, spec.cluster.get("brokers", DEFAULTS["brokers"]) + 1))


def _validate_fault_kind(kind: Any) -> None:
    """``faults.kind``: one of FAULT_KINDS, or a list of distinct ones (a mix: each random fault
    is one of them, drawn with equal odds)."""
    kinds = [kind] if isinstance(kind, str) else kind
    if not isinstance(kinds, (list, tuple)) or not kinds:
        raise SweepError(f"faults.kind must be one of {', '.join(FAULT_KINDS)} or a non-empty "
                         f"list of them (a mix), got {kind!r}")
    for k in kinds:
        if k not in FAULT_KINDS:
            raise SweepError(f"faults.kind '{k}' is not one of {', '.join(FAULT_KINDS)}"
                             f"{_suggest(str(k), FAULT_KINDS)}")
    if len(set(kinds)) != len(kinds):
        raise SweepError(f"faults.kind lists a kind twice: {list(kinds)!r}")


def _validate_faults(faults: Mapping[str, Any], brokers: list[int], duration: int | None,
                     scenario: bool = False) -> None:
    _check_fields("faults", faults, FAULT_FIELDS)
    if not faults:
        return
    if scenario and faults.get("rate_per_min", 0) and duration is None and "end_ms" not in faults:
        raise SweepError("random faults in a scenario run need an end: give duration_ms (the "
                         "run lasts at least that long) or faults.end_ms")
    _validate_fault_kind(faults.get("kind", "crash"))
    rate = faults.get("rate_per_min", 0)
    if not _is_num(rate) or not 0 <= rate <= 60_000:
        raise SweepError(f"faults.rate_per_min must be a number from 0 to 60000 (one fault a "
                         f"simulated ms), got {rate!r}")
    down = faults.get("down_ms", 10000)
    lo_hi = down if isinstance(down, (list, tuple)) else [down, down]
    if len(lo_hi) != 2 or not all(_is_int(x) for x in lo_hi) or \
            not 0 < lo_hi[0] <= lo_hi[1] <= limits.MAX_TIME_MS:
        raise SweepError(f"faults.down_ms must be a positive integer or [low, high] with "
                         f"0 < low <= high, got {down!r}")
    start = _int_field("faults.start_ms", faults.get("start_ms", 0))
    if "end_ms" in faults:
        end = _int_field("faults.end_ms", faults["end_ms"])
        if end < start:
            raise SweepError(f"faults.end_ms ({end}) is before faults.start_ms ({start})")
    cand = faults.get("brokers", brokers)
    if not isinstance(cand, (list, tuple)) or not cand or \
            any(b not in brokers for b in cand):
        raise SweepError(f"faults.brokers must be a non-empty list of broker ids from {brokers}, "
                         f"got {cand!r}")
    max_down = faults.get("max_down", 1)
    if not _is_int(max_down) or not 1 <= max_down <= len(brokers):
        raise SweepError(f"faults.max_down must be an integer from 1 to {len(brokers)} "
                         f"(the number of brokers), got {max_down!r}")
    steps = faults.get("steps", [])
    if not isinstance(steps, (list, tuple)):
        raise SweepError("faults.steps must be an array of tables")
    for i, st in enumerate(steps):
        where = f"faults.steps[{i}]"
        if not isinstance(st, Mapping) or "do" not in st:
            raise SweepError(f"{where} needs 'do' (one of {', '.join(FAULT_STEPS)})")
        action = st["do"]
        if action not in FAULT_STEPS:
            raise SweepError(f"{where}: unknown action '{action}' (actions are "
                             f"{', '.join(FAULT_STEPS)}){_suggest(action, FAULT_STEPS)}")
        required, optional = FAULT_STEPS[action]
        allowed = ("do", "at_ms", *required, *optional)
        for k in st:
            if k not in allowed:
                raise SweepError(f"{where}: '{action}' takes no '{k}' (it takes "
                                 f"{', '.join(allowed)}){_suggest(k, allowed)}")
        missing = [k for k in ("at_ms", *required) if k not in st]
        if missing:
            raise SweepError(f"{where}: '{action}' is missing {', '.join(missing)}")
        _int_field(f"{where}.at_ms", st["at_ms"])
        for k in ("broker", "a", "b"):
            if k in st and st[k] not in brokers:
                raise SweepError(f"{where}: unknown broker {st[k]!r}; brokers are {brokers}")
        for k in ("ms", "network_ms", "disk_ms"):
            if k in st:
                _int_field(f"{where}.{k}", st[k], minimum=1 if k == "ms" else 0)


def workload_segments(w: Mapping[str, Any], duration_ms: int) -> list[tuple[int, int, float]]:
    """The generated workload as [(start_ms, end_ms, rate)] pieces relative to its start.

    ``rate`` alone: one piece of ``duration_ms``. ``segments``: as given. ``burst = { every_ms,
    length_ms, rate }``: a burst at the start of every period, ``rate`` (default 0) in between,
    until ``duration_ms``.
    """
    if "segments" in w:
        segs = w["segments"]
        if "rate" in w or "burst" in w:
            raise SweepError("workload: give segments alone, or rate and/or burst")
        if not isinstance(segs, (list, tuple)) or not segs:
            raise SweepError("workload.segments must be a non-empty list of [start_ms, end_ms, "
                             "rate]")
        for s in segs:
            if not isinstance(s, (list, tuple)) or len(s) != 3 or not _is_int(s[0]) or \
                    not _is_int(s[1]) or not _is_num(s[2]) or \
                    not 0 <= s[0] < s[1] <= limits.MAX_TIME_MS or not 0 <= s[2] <= limits.MAX_RATE:
                raise SweepError(f"workload.segments: bad segment {s!r}; need [start_ms, end_ms, "
                                 f"rate] with 0 <= start < end <= {limits.MAX_TIME_MS} and "
                                 f"0 <= rate <= {limits.MAX_RATE}")
        return [(s[0], s[1], float(s[2])) for s in segs]
    if "burst" in w:
        b = w["burst"]
        if not isinstance(b, Mapping):
            raise SweepError("workload.burst must be a table { every_ms, length_ms, rate }")
        _check_fields("workload.burst", b, BURST_FIELDS)
        missing = [k for k in BURST_FIELDS if k not in b]
        if missing:
            raise SweepError(f"workload.burst is missing {', '.join(missing)}")
        every = _int_field("workload.burst.every_ms", b["every_ms"], minimum=1)
        length = _int_field("workload.burst.length_ms", b["length_ms"], minimum=1)
        if length > every:
            raise SweepError(f"workload.burst.length_ms ({length}) is longer than every_ms "
                             f"({every})")
        peak, base = b["rate"], w.get("rate", 0)
        for name, value in (("workload.burst.rate", peak), ("workload.rate", base)):
            if not _is_num(value) or not 0 <= value <= limits.MAX_RATE:
                raise SweepError(f"{name} must be a number >= 0 (records/s), got {value!r}")
        out = []
        for start in range(0, duration_ms, every):
            out.append((start, min(start + length, duration_ms), float(peak)))
            if length < every and start + length < duration_ms:
                out.append((start + length, min(start + every, duration_ms), float(base)))
        return out
    rate = w.get("rate", DEFAULTS["rate"])
    if not _is_num(rate) or not 0 < rate <= limits.MAX_RATE:
        raise SweepError(f"workload.rate must be a number > 0 and at most limits.MAX_RATE = "
                         f"{limits.MAX_RATE} (records/s), got {rate!r}")
    return [(0, duration_ms, float(rate))]


def validate_spec(spec: RunSpec) -> None:
    """Raise ``SweepError`` naming what is wrong with one spec (nothing is run)."""
    from kafkasim.runtime.cluster import ClusterError
    from kafkasim.settings import config as kconfig
    from kafkasim.settings import versions

    for key in ("duration_ms", "drain_ms"):
        value = getattr(spec, key)
        if value is not None:
            _int_field(key, value, minimum=1 if key == "duration_ms" else 0)
    for key in ("scenario", "scenario_text"):
        if getattr(spec, key) is not None and not isinstance(getattr(spec, key), str):
            raise SweepError(f"{key} must be a string (a built-in scenario name or a .toml "
                             f"path; the scenario's TOML), got {getattr(spec, key)!r}")
    for key in ("check", "trace_digest"):
        if not isinstance(getattr(spec, key), bool):
            raise SweepError(f"{key} must be true or false, got {getattr(spec, key)!r}")
    if not _is_int(spec.seed):
        raise SweepError(f"seed must be an integer, got {spec.seed!r}")
    try:
        if spec.kafka_version is not None:
            if not isinstance(spec.kafka_version, str):
                raise SweepError(f"kafka_version must be a string, got {spec.kafka_version!r}")
            versions.check_known_version(spec.kafka_version)
    except ValueError as exc:
        raise SweepError(str(exc)) from exc
    if abs(spec.seed) > limits.LONG_MAX:
        raise SweepError(f"seed must be a Java long, got {spec.seed}")

    if spec.is_scenario:
        _check_fields("cluster", spec.cluster, ("latency_ms", "jitter_ms"))
        if spec.workload:
            raise SweepError("a scenario run takes its workload from the scenario's steps; "
                             "remove [workload] (or drop the scenario to generate one)")
        sc = _scenario_for(spec)
        from kafkasim.scenarios.scenario import ScenarioError
        try:
            cluster = sc.build(spec.seed)   # checks brokers, racks, version, broker configs
        except ScenarioError as exc:
            raise SweepError(str(exc)) from exc
        version = cluster.kafka_version
        try:
            for t in sc.data.get("topics", []):
                kconfig.topic_config(t.get("config"), cluster.broker_config, version)
            for client in sc.data.get("clients", []):
                if client.get("type") == "producer":
                    kconfig.producer_config(client.get("config"), version)
        except ValueError as exc:
            raise SweepError(str(exc)) from exc
        _validate_faults(spec.faults, _broker_ids_of(spec, sc), spec.duration_ms, scenario=True)
        return

    _check_fields("cluster", spec.cluster, CLUSTER_FIELDS)
    _check_fields("workload", spec.workload, WORKLOAD_FIELDS)
    cl = spec.cluster
    brokers = _int_field("cluster.brokers", cl.get("brokers", DEFAULTS["brokers"]), minimum=1,
                         maximum=limits.MAX_BROKERS)
    _int_field("cluster.partitions", cl.get("partitions", DEFAULTS["partitions"]), minimum=1,
               maximum=limits.MAX_PARTITIONS)
    rf = _int_field("cluster.replication_factor", cl.get("replication_factor", min(3, brokers)),
                    minimum=1, maximum=limits.MAX_BROKERS)
    if rf > brokers:
        raise SweepError(f"cluster.replication_factor {rf} is larger than the number of brokers "
                         f"({brokers}): Kafka refuses the topic (INVALID_REPLICATION_FACTOR)")
    for key in ("latency_ms", "jitter_ms"):
        _int_field(f"cluster.{key}", cl.get(key, DEFAULTS[key]), maximum=60_000)
    topic = cl.get("topic", DEFAULT_TOPIC)
    from kafkasim.runtime.topics import invalid_topic_reason
    reason = invalid_topic_reason(topic)
    if reason is not None:
        raise SweepError(f"cluster.topic: Topic name is invalid: {reason} (Topic.validate)")
    slow = cl.get("slow", [])
    if not isinstance(slow, (list, tuple)):
        raise SweepError("cluster.slow must be a list of { broker = N, network_ms = ..., "
                         "disk_ms = ... } tables")
    for s in slow:
        if not isinstance(s, Mapping) or "broker" not in s:
            raise SweepError(f"cluster.slow entries need a broker, got {s!r}")
        _check_fields("cluster.slow", s, ("broker", "network_ms", "disk_ms"))
        if s["broker"] not in range(1, brokers + 1):
            raise SweepError(f"cluster.slow: unknown broker {s['broker']!r}; brokers are "
                             f"1..{brokers}")
        for k in ("network_ms", "disk_ms"):
            _int_field(f"cluster.slow.{k}", s.get(k, 0))
    version = versions.normalize_version(spec.kafka_version or versions.DEFAULT_VERSION)
    try:
        bcfg = kconfig.broker_config(spec.broker, version)
        kconfig.topic_config(spec.topic, bcfg, version)
        kconfig.producer_config(spec.producer, version)
    except (ValueError, ClusterError) as exc:
        raise SweepError(str(exc)) from exc
    duration = spec.duration_ms if spec.duration_ms is not None else DEFAULTS["duration_ms"]
    segs = workload_segments(spec.workload, duration)   # raises SweepError when malformed
    records = sum(rate * (end - start) / 1000 for start, end, rate in segs)
    if records > limits.MAX_RECORDS:
        raise SweepError(f"the workload would produce about {int(records)} records, more than "
                         f"limits.MAX_RECORDS = {limits.MAX_RECORDS}")
    _validate_faults(spec.faults, list(range(1, brokers + 1)), spec.duration_ms)


def validate_specs(specs: Iterable[RunSpec], *, max_shown: int = 5) -> None:
    """Check every spec before anything runs; raise ``SweepError`` listing the problems.

    Specs that differ only in seed are checked once.
    """
    problems: list[str] = []
    seen: dict[str, str | None] = {}
    for spec in specs:
        if not isinstance(spec, RunSpec):
            raise SweepError(f"expected RunSpec objects, got {type(spec).__name__}")
        key = hashlib.sha256(spec.config_key().encode()).hexdigest()
        if key not in seen:
            try:
                validate_spec(spec)
                seen[key] = None
            except SweepError as exc:
                seen[key] = str(exc)
                problems.append(f"{spec.label()}: {exc}")
        if not _is_int(spec.seed):
            problems.append(f"{spec.label()}: seed must be an integer, got {spec.seed!r}")
    if problems:
        shown = "\n  ".join(problems[:max_shown])
        more = f"\n  ... and {len(problems) - max_shown} more" if len(problems) > max_shown \
            else ""
        raise SweepError(f"{len(problems)} invalid run spec(s); nothing was run:\n  {shown}{more}",
                         problems)
