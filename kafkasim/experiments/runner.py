"""Running one spec, and running a sweep serially or through Spark.

``run_one(spec)`` builds the cluster (or the scenario), installs the fault plan, the invariant
checkers and the availability tracker, runs it and returns one result row (a dict). It never
raises for a run-time failure: the row gets ``status = "error"`` and the error text instead.
Nothing here reads the wall clock or depends on hashing: a row is a pure function of the spec.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from kafkasim.core.events import SkippedFault
from kafkasim.experiments.spec import (
    DEFAULT_TOPIC,
    DEFAULTS,
    RunSpec,
    Sweep,
    SweepError,
    _scenario_for,
    embed_scenario_file,
    specs_table,
    validate_specs,
    workload_segments,
)
from kafkasim.runtime.rows import CompactRows

__all__ = ["RESULT_COLUMNS", "PRODUCE_ERRORS", "finalize", "run_one", "run_serial", "run_sweep",
           "run_specs"]

# Final produce outcomes counted in their own column (err_<NAME>); anything else goes to
# err_other. TimeoutException is the client-side delivery.timeout.ms expiry.
PRODUCE_ERRORS = (
    "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS_AFTER_APPEND", "NOT_LEADER_OR_FOLLOWER",
    "NOT_LEADER_FOR_PARTITION", "LEADER_NOT_AVAILABLE", "REQUEST_TIMED_OUT", "NETWORK_EXCEPTION",
    "UNKNOWN_TOPIC_OR_PARTITION", "FENCED_LEADER_EPOCH", "TimeoutException",
)

#: result columns produced by a run: (name, kind); kind is "long", "double", "nlong"
#: (nullable long) or "string". The driver adds the varied parameters after ``seed``.
RESULT_COLUMNS: list[tuple[str, str]] = [
    ("run_id", "long"), ("seed", "long"), ("scenario", "string"), ("kafka_version", "string"),
    ("status", "string"), ("error", "string"),
    ("sim_ms", "long"), ("events", "long"),
    ("sent", "long"), ("acked", "long"), ("failed", "long"), ("pending", "long"),
    ("lost_acked", "long"), ("committed", "long"),
    *[(f"err_{name}", "long") for name in PRODUCE_ERRORS], ("err_other", "long"),
    ("attempt_errors", "long"),
    ("isr_shrinks", "long"), ("isr_expands", "long"), ("failed_isr_updates", "long"),
    ("unclean_elections", "long"), ("broker_failures", "long"),
    ("offline_ms", "long"), ("unavailable_ms", "long"),
    ("ack_p50_ms", "double"), ("ack_p99_ms", "double"),
    ("hw_p50_ms", "double"), ("hw_p99_ms", "double"),
    ("first_violation", "string"), ("first_violation_ms", "nlong"), ("violations", "long"),
    ("allowed_violations", "long"), ("check_error", "string"),
    ("expectations_failed", "long"), ("trace_digest", "string"),
    ("spec", "string"),
]
_PANDAS_DTYPES = {"long": "int64", "double": "float64", "nlong": "Int64", "string": "object"}
ERROR_TEXT_LIMIT = 2000


def spark_schema() -> str:
    """The Spark DDL schema of the rows ``run_one`` returns."""
    types = {"long": "long", "nlong": "long", "double": "double", "string": "string"}
    return ", ".join(f"`{name}` {types[kind]}" for name, kind in RESULT_COLUMNS)


def _empty_row(spec: RunSpec) -> dict[str, Any]:
    row: dict[str, Any] = {}
    for name, kind in RESULT_COLUMNS:
        row[name] = None if kind in ("string", "nlong") else (math.nan if kind == "double" else 0)
    row["run_id"] = spec.run_id
    row["seed"] = spec.seed
    row["scenario"] = spec.scenario if spec.scenario is not None else (
        "<scenario_text>" if spec.scenario_text is not None else None)
    row["spec"] = spec.to_json()
    return row


# -- fault plans -------------------------------------------------------------------------------
def _derived_seed(seed: int, purpose: str) -> int:
    """A seed for one purpose derived from the run's seed (SHA-256: same in every process)."""
    digest = hashlib.sha256(f"kafkasim.experiments:{purpose}:{seed}".encode()).digest()
    return int.from_bytes(digest[:8], "big")


class _RandomFailure:
    """A fault fired at a pre-drawn time on a running broker, chosen when it fires (picklable)."""

    __slots__ = ("kind", "pick", "down_ms", "max_down", "candidates")

    def __init__(self, kind: str, pick: float, down_ms: int, max_down: int,
                 candidates: tuple[int, ...]) -> None:
        self.kind, self.pick, self.down_ms = kind, pick, down_ms
        self.max_down, self.candidates = max_down, candidates

    def __call__(self, c) -> None:
        running = [b for b in self.candidates if c.brokers[b].state == "running"]
        if self.kind == "pause":
            paused = sum(1 for b in c.brokers.values() if b.paused_until > c.now)
            if not running or paused >= self.max_down:
                c.trace.record("fault", "sweep", "", -1, SkippedFault(self.kind, -1))
                return
            c.pause(running[int(self.pick * len(running))], self.down_ms)
            return
        down = sum(1 for b in c.brokers.values() if b.state != "running")
        if not running or down >= self.max_down:
            c.trace.record("fault", "sweep", "", -1, SkippedFault(self.kind, down))
            return
        broker = running[int(self.pick * len(running))]
        if self.kind == "crash":
            c.crash(broker)
        elif self.kind == "power_loss":
            c.power_loss(broker)
        else:
            c.shutdown(broker)
        c.at(c.now + self.down_ms, _Restart(broker))


def _unclean_elections(c, meters) -> int:
    """Unclean leader elections in the run. ZooKeeper mode: the brokers' controller meter. KRaft:
    the controllers' ControllerMetadataMetrics count (``metrics.committed_image``: a new leader
    outside the previous ISR), brought up to each running controller's high watermark; the
    largest, since a restarted controller counts only from its restart."""
    if c.kraft is None:
        return sum(m.get("UncleanLeaderElectionsPerSec", 0) for m in meters)
    from kafkasim.runtime.metrics import committed_image

    images = c.metrics.controller_images
    counts = [0]
    for node in c.kraft.nodes.values():
        if node.is_running:
            committed_image(images, node)
            counts.append(images[node.id][2])
    return max(counts)


class _Restart:
    """Start a broker again once it has stopped (a clean shutdown may still be under way)."""

    __slots__ = ("broker",)

    def __init__(self, broker: int) -> None:
        self.broker = broker

    def __call__(self, c) -> None:
        state = c.brokers[self.broker].state
        if state == "stopped":
            c.start(self.broker, retry=True)
        elif state != "running":
            c.at(c.now + 1000, self)


class _Scripted:
    """One scripted fault step: ``{ at_ms, do, broker, ... }``."""

    __slots__ = ("step",)

    def __init__(self, step: dict) -> None:
        self.step = dict(step)

    def __call__(self, c) -> None:
        st = self.step
        action = st["do"]
        if action == "pause":
            c.pause(st["broker"], st["ms"])
        elif action == "slow":
            c.slow(st["broker"], st.get("network_ms", 0), st.get("disk_ms", 0))
        elif action == "cut":
            c.cut(st["a"], st["b"], both_ways=not st.get("one_way", False))
        elif action == "heal":
            c.heal()
        elif action == "start":
            if c.brokers[st["broker"]].state == "stopped":
                c.start(st["broker"], retry=True)
        elif c.brokers[st["broker"]].state == "running":
            getattr(c, action)(st["broker"])   # crash, power_loss, shutdown


def schedule_faults(c, faults: dict, seed: int, end_ms: int) -> int:
    """Install a fault plan on a cluster; returns the number of random faults drawn.

    Random faults form a Poisson process of ``rate_per_min`` over [start_ms, end_ms); each
    fires on a running broker among ``brokers`` (unless ``max_down`` are already down) and
    lasts a downtime drawn uniformly from ``down_ms``. The draws use an RNG seeded from the run's
    seed, separate from the simulator's, so adding faults does not change other random choices.
    """
    import random

    for st in faults.get("steps", []):
        # at_ms counts from when the cluster was ready (a KRaft cluster starts by electing its
        # quorum and registering its brokers; a ZooKeeper one is ready at 0)
        c.at(c.inspect.ready_ms + st["at_ms"], _Scripted(st))
    rate = float(faults.get("rate_per_min", 0))
    if rate <= 0:
        return 0
    rng = random.Random(_derived_seed(seed, "faults"))
    kind = faults.get("kind", "crash")
    kinds = (kind,) if isinstance(kind, str) else tuple(kind)   # a list: a mix of kinds
    down = faults.get("down_ms", 10000)
    lo, hi = (down, down) if isinstance(down, int) else (down[0], down[1])
    candidates = tuple(faults.get("brokers", sorted(c.brokers)))
    max_down = faults.get("max_down", 1)
    t = float(faults.get("start_ms", 0))
    end = faults.get("end_ms", end_ms)
    n = 0
    while True:
        t += rng.expovariate(rate / 60000.0)
        if t >= end:
            return n
        pick = rng.random()
        down_ms = rng.randint(lo, hi)
        # one kind: no draw, so a single-kind plan's faults are what they always were
        this = kinds[0] if len(kinds) == 1 else kinds[int(rng.random() * len(kinds))]
        c.at(int(t), _RandomFailure(this, pick, down_ms, max_down, candidates))
        n += 1


# -- observing a run ---------------------------------------------------------------------------
_AVAILABILITY_KINDS = frozenset({
    "controller", "broker_start", "broker_crash", "broker_power_loss", "broker_shutdown",
    "zk_session_expired", "become_leader",
    # KRaft: the authoritative state is the committed metadata image, which moves when the
    # quorum's high watermark does (a fence, an election, an ISR change is committed)
    "raft_high_watermark",
})


class _Availability:
    """Exact times some partition had no leader (offline) or no running leader (unavailable).

    Re-evaluated whenever the trace records something that can change it (elections, broker
    starts and stops), so the totals are exact in simulated ms.
    """

    __slots__ = ("cluster", "offline_since", "unavailable_since", "offline_ms", "unavailable_ms",
                 "error")

    def __init__(self, cluster) -> None:
        self.cluster = cluster
        self.offline_since: int | None = None
        self.unavailable_since: int | None = None
        self.offline_ms = 0
        self.unavailable_ms = 0
        self.error: str | None = None

    def update(self) -> None:
        c = self.cluster
        try:
            offline = unavailable = False
            for topic in c.topics.names():
                for p in range(c.topics.partition_count(topic)):
                    try:
                        leader = c.inspect.partition_state(topic, p)["leader"]
                    except KeyError:   # being created: no state written yet
                        continue
                    if leader < 0:
                        offline = unavailable = True
                    elif not c.brokers[leader].is_running:
                        unavailable = True
        except Exception as exc:  # never disturb the simulation; report it instead
            self.error = f"availability tracking failed: {type(exc).__name__}: {exc}"
            return
        now = c.now
        if offline and self.offline_since is None:
            self.offline_since = now
        elif not offline and self.offline_since is not None:
            self.offline_ms += now - self.offline_since
            self.offline_since = None
        if unavailable and self.unavailable_since is None:
            self.unavailable_since = now
        elif not unavailable and self.unavailable_since is not None:
            self.unavailable_ms += now - self.unavailable_since
            self.unavailable_since = None

    def finish(self) -> tuple[int, int]:
        now = self.cluster.now
        off = self.offline_ms + (now - self.offline_since if self.offline_since is not None else 0)
        un = self.unavailable_ms + (now - self.unavailable_since
                                    if self.unavailable_since is not None else 0)
        return off, un


def _plain_list(items):
    return list(items)


class _TraceRows(CompactRows):
    """The trace's row list, telling the availability tracker about the rows that matter (its
    older rows compacted as the trace's own are: ``kafkasim.runtime.rows``).

    Pickles (cluster snapshots) as a plain list, so snapshots do not carry the tracker.
    """

    __slots__ = ("tracker", "again")

    def append(self, row) -> None:  # noqa: D401 - list.append with a hook
        list.append(self, row)
        if getattr(self, "again", False):
            # a row of interest is often written just before the state it reports changes (a
            # KRaft controller records the fence, then replays the records that move leaders):
            # look again at the next row, by then the change has been applied
            self.again = False
            self.tracker.update()
        if row[1] in _AVAILABILITY_KINDS:
            self.tracker.update()
            self.again = True

    def __reduce__(self):
        return (_plain_list, (list(self),))


class _CheckListener:
    """An engine listener (``Engine.add_listener``) running the invariant checkers after every
    event. A failure of the checkers themselves stops checking and is reported in
    ``check_error`` rather than failing the run. Engines pickle without listeners.
    """

    __slots__ = ("suite", "cluster", "state")

    def __init__(self, suite, cluster, state: dict) -> None:
        self.suite, self.cluster, self.state = suite, cluster, state

    def __call__(self, time_ms: int, kind: str, args: tuple) -> None:
        state = self.state
        if state["active"]:
            try:
                self.suite(self.cluster)
            except Exception as exc:
                state["active"] = False
                state["error"] = f"checkers failed at t={self.cluster.now} ms: " \
                                 f"{type(exc).__name__}: {exc}"


def _install_checks(c, state: dict):
    """Run every registered invariant check after every event; returns the suite (or None)."""
    try:
        from kafkasim.observe.checks import make_suite
    except ImportError as exc:
        state["error"] = f"invariant checks unavailable: {exc}"
        return None
    suite = make_suite(on_violation="collect")
    c.engine.add_listener(_CheckListener(suite, c, state))
    return suite


def _percentile(sorted_values: Sequence[int], p: float) -> float:
    """Nearest-rank percentile (an observed value; exact, no interpolation)."""
    if not sorted_values:
        return math.nan
    k = max(0, math.ceil(p / 100.0 * len(sorted_values)) - 1)
    return float(sorted_values[k])


def _hw_latencies(c, acked, lost: set[int]) -> list[int]:
    """Produce -> high watermark: for each acked record still present, the first time any
    replica's HW of its partition passed its offset, from the trace's "hw" rows."""
    series: dict[tuple[str, int], tuple[list[int], list[int]]] = {}
    for t, kind, _node, topic, partition, detail in c.trace.rows:
        if kind != "hw" or not isinstance(detail, int):
            continue
        times, highs = series.setdefault((topic, partition), ([], []))
        if not highs or detail > highs[-1]:
            times.append(t)
            highs.append(detail)   # running maximum: a monotone envelope over all replicas
    out = []
    for r in acked:
        if r.record_id in lost or r.offset < 0:
            continue
        s = series.get((r.topic, r.partition))
        if s is None:
            continue
        i = bisect.bisect_right(s[1], r.offset)
        if i < len(s[1]):
            out.append(max(s[0][i], r.sent_ms) - r.sent_ms)
    return out


def _collect(row: dict, c, producers: list, availability: _Availability | None, suite,
             check_state: dict, spec: RunSpec, run=None) -> None:
    from kafkasim.scenarios.scenario import lost_acked

    results = [r for p in producers for r in p.results.values()]
    acked = [r for r in results if r.status == "acked"]
    failed = [r for r in results if r.status == "failed"]
    lost = set(lost_acked(c, producers))
    row["sim_ms"] = c.now
    row["events"] = c.engine.events_processed
    row["kafka_version"] = c.kafka_version
    row["sent"] = len(results)
    row["acked"] = len(acked)
    row["failed"] = len(failed)
    row["pending"] = len(results) - len(acked) - len(failed)
    row["lost_acked"] = len(lost)
    other = 0
    for r in failed:
        key = f"err_{r.error}"
        if key in row and r.error in PRODUCE_ERRORS:
            row[key] += 1
        else:
            other += 1
    row["err_other"] = other
    row["attempt_errors"] = sum(len(r.errors) for r in results)
    meters = [b.meters for b in c.brokers.values()]
    row["isr_shrinks"] = sum(m.get("IsrShrinksPerSec", 0) for m in meters)
    row["isr_expands"] = sum(m.get("IsrExpandsPerSec", 0) for m in meters)
    row["failed_isr_updates"] = sum(m.get("FailedIsrUpdatesPerSec", 0) for m in meters)
    row["unclean_elections"] = _unclean_elections(c, meters)
    row["broker_failures"] = sum(1 for r in c.trace.rows if r[1] in (
        "broker_crash", "broker_power_loss", "broker_shutdown"))
    if availability is not None:
        row["offline_ms"], row["unavailable_ms"] = availability.finish()
    ack_lat = sorted(r.done_ms - r.sent_ms for r in acked if r.done_ms >= 0)
    row["ack_p50_ms"] = _percentile(ack_lat, 50)
    row["ack_p99_ms"] = _percentile(ack_lat, 99)
    hw_lat = sorted(_hw_latencies(c, acked, lost))
    row["committed"] = len(hw_lat)
    row["hw_p50_ms"] = _percentile(hw_lat, 50)
    row["hw_p99_ms"] = _percentile(hw_lat, 99)
    if suite is not None:
        first = suite.first
        row["first_violation"] = first.invariant if first is not None else None
        row["first_violation_ms"] = first.time_ms if first is not None else None
        row["violations"] = len(suite.violations)
        row["allowed_violations"] = len(suite.allowed)
    errors = [e for e in (check_state.get("error"),
                          availability.error if availability is not None else None) if e]
    row["check_error"] = "; ".join(errors) if errors else None
    if run is not None:
        row["expectations_failed"] = sum(1 for e in run.expectations if not e["ok"])
    if spec.trace_digest:
        row["trace_digest"] = c.trace.digest()


def _observe(c, spec: RunSpec) -> tuple[_Availability, Any, dict]:
    availability = _Availability(c)
    rows = _TraceRows(c.trace.rows)
    rows.tracker = availability
    c.trace.rows = rows
    check_state: dict[str, Any] = {"active": True, "error": None}
    suite = _install_checks(c, check_state) if spec.check else None
    return availability, suite, check_state


def _run_generated(spec: RunSpec, row: dict, ctx: dict) -> None:
    from kafkasim.runtime.cluster import Cluster
    from kafkasim.runtime.workload import RateWorkload

    cl = spec.cluster
    brokers = cl.get("brokers", DEFAULTS["brokers"])
    c = Cluster(brokers, seed=spec.seed, kafka_version=spec.kafka_version,
                config=dict(spec.broker), latency_ms=cl.get("latency_ms", DEFAULTS["latency_ms"]),
                jitter_ms=cl.get("jitter_ms", DEFAULTS["jitter_ms"]), trace_messages=False,
                per_partition_metrics=False)
    ctx["cluster"] = c
    ctx["observe"] = _observe(c, spec)
    topic = cl.get("topic", DEFAULT_TOPIC)
    c.create_topic(topic, cl.get("partitions", DEFAULTS["partitions"]),
                   cl.get("replication_factor", min(3, brokers)), config=dict(spec.topic))
    for s in cl.get("slow", []):
        c.slow(s["broker"], s.get("network_ms", 0), s.get("disk_ms", 0))
    p = c.producer("producer", **dict(spec.producer))
    ctx["producers"] = [p]
    duration = spec.duration_ms if spec.duration_ms is not None else DEFAULTS["duration_ms"]
    wl = RateWorkload(c, p, topic, segments=workload_segments(spec.workload, duration),
                      name="workload")
    end = wl.end_ms
    schedule_faults(c, dict(spec.faults), spec.seed, end)
    drain = spec.drain_ms if spec.drain_ms is not None else DEFAULTS["drain_ms"]
    c.run_to(end + drain)


def _run_scenario(spec: RunSpec, row: dict, ctx: dict) -> None:
    from kafkasim.scenarios.scenario import ScenarioRun

    sc = _scenario_for(spec)
    c = sc.build(spec.seed)
    ctx["cluster"] = c
    ctx["observe"] = _observe(c, spec)
    run = ScenarioRun(sc, c)
    ctx["run"] = run
    faults = dict(spec.faults)
    schedule_faults(c, faults, spec.seed, faults.get("end_ms", spec.duration_ms or 0))
    run.execute()
    if spec.duration_ms is not None and c.now < spec.duration_ms:
        c.run_to(spec.duration_ms)


def run_one(spec: RunSpec | dict | str) -> dict[str, Any]:
    """Run one spec; returns its result row. A run-time failure gives ``status = "error"``
    with the error text (and whatever counters the partial run has), never an exception."""
    if isinstance(spec, str):
        spec = RunSpec.from_json(spec)
    elif isinstance(spec, dict):
        spec = RunSpec.from_dict(spec)
    row = _empty_row(spec)
    ctx: dict[str, Any] = {}
    try:
        if spec.is_scenario:
            _run_scenario(spec, row, ctx)
        else:
            _run_generated(spec, row, ctx)
        row["status"] = "ok"
    except Exception as exc:
        row["status"] = "error"
        row["error"] = f"{type(exc).__name__}: {exc}"[:ERROR_TEXT_LIMIT]
    c = ctx.get("cluster")
    if c is not None:
        run = ctx.get("run")
        producers = list(run.producers.values()) if run is not None else ctx.get("producers", [])
        availability, suite, check_state = ctx["observe"]
        try:
            _collect(row, c, producers, availability, suite, check_state, spec, run)
        except Exception as exc:
            row["status"] = "error"
            msg = f"collecting results failed: {type(exc).__name__}: {exc}"
            row["error"] = (f"{row['error']}; {msg}" if row["error"] else msg)[:ERROR_TEXT_LIMIT]
    return row


# -- result tables -----------------------------------------------------------------------------
def rows_frame(rows: Iterable[dict]):
    """Result rows as a DataFrame with the declared column types (see ``RESULT_COLUMNS``)."""
    import pandas as pd

    rows = list(rows)
    cols = {}
    for name, kind in RESULT_COLUMNS:
        values = [r[name] for r in rows]
        if kind == "nlong":
            cols[name] = pd.array([None if v is None or (isinstance(v, float) and math.isnan(v))
                                   else int(v) for v in values], dtype="Int64")
        elif kind == "string":
            cols[name] = pd.Series([None if v is None or (isinstance(v, float) and math.isnan(v))
                                    else str(v) for v in values], dtype="object")
        else:
            cols[name] = pd.Series(values, dtype=_PANDAS_DTYPES[kind])
    return pd.DataFrame(cols)


def finalize(results, inputs):
    """Join run results (any row order, as Spark returns them) to the sweep's inputs table:
    one row per run in run_id order, inputs first, declared dtypes."""
    import pandas as pd

    res = results.copy()
    for name, kind in RESULT_COLUMNS:
        if kind == "nlong":
            res[name] = pd.array([None if pd.isna(v) else int(v) for v in res[name]],
                                 dtype="Int64")
        elif kind == "string":
            res[name] = pd.Series([None if v is None or (isinstance(v, float) and math.isnan(v))
                                   else str(v) for v in res[name]], dtype="object",
                                  index=res.index)
        else:
            res[name] = res[name].astype(_PANDAS_DTYPES[kind])
    res = res.sort_values("run_id", kind="stable").reset_index(drop=True)
    if len(res) != len(inputs) or not (res["run_id"].to_numpy() ==
                                       inputs["run_id"].to_numpy()).all():
        missing = sorted(set(inputs["run_id"]) - set(res["run_id"]))[:10]
        raise RuntimeError(f"the sweep returned {len(res)} rows for {len(inputs)} runs "
                           f"(missing run ids {missing})")
    varied = [c for c in inputs.columns if c not in ("run_id", "seed")]
    # a varied scenario or kafka_version is shown by its result column (the effective value)
    params = [c for c in varied if c not in res.columns]
    out = pd.concat([res[["run_id", "seed"]], inputs[params].reset_index(drop=True),
                     res.drop(columns=["run_id", "seed"])], axis=1)
    out.attrs["params"] = varied
    return out


# -- running many ------------------------------------------------------------------------------
def _as_specs(sweep) -> tuple[list[RunSpec], list[str] | None, str]:
    if isinstance(sweep, Sweep):
        return sweep.specs, sweep.param_names, sweep.name
    specs = []
    for i, s in enumerate(sweep):
        if isinstance(s, dict):
            s = RunSpec.from_dict({"run_id": i, **s})
        elif not isinstance(s, RunSpec):
            raise SweepError(f"expected RunSpec objects or dicts, got {type(s).__name__}")
        specs.append(s)
    ids = [s.run_id for s in specs]
    if len(set(ids)) != len(ids):
        raise SweepError("run ids must be distinct (renumber with spec.replace(run_id=i))")
    return specs, None, "sweep"


def _embed_files(specs: list[RunSpec]) -> list[RunSpec]:
    """Scenario files are read here, on the driver: executors may not have them."""
    return [embed_scenario_file(s) for s in specs]


def run_serial(specs: Sequence[RunSpec], *, progress: Callable[[int, int], None] | None = None
               ) -> list[dict]:
    """Run specs one after another in this process; returns their rows in order."""
    rows = []
    errors = 0
    for spec in specs:
        row = run_one(spec)
        errors += row["status"] != "ok"
        rows.append(row)
        if progress is not None:
            progress(len(rows), errors)
    return rows


def run_specs_partition(batches: Iterator) -> Iterator:
    """mapInPandas function: each input row is ``(run_id, spec JSON)``; yields result rows.

    Runs on Spark's Python workers, which import it from the kafkasim package (installed there,
    or shipped as a zip by ``kafkasim.experiments.distributed``).
    """
    for batch in batches:
        rows = [run_one(text) for text in batch["spec"]]
        if rows:
            yield rows_frame(rows)


def run_indexed_specs_partition(texts: Sequence[str], batches: Iterator) -> Iterator:
    """mapInPandas function over ``spark.range``: each input row's ``id`` indexes ``texts``
    (spec JSONs shipped with the function), so a job needs no DataFrame of specs and no
    shuffle to spread them over its tasks; yields result rows."""
    for batch in batches:
        rows = [run_one(texts[int(i)]) for i in batch["id"]]
        if rows:
            yield rows_frame(rows)


def run_sweep(sweep, *, mode: str = "auto", spark=None, master: str | None = None,
              progress: bool | None = None, chunk_size: int | None = None,
              parallelism: int | None = None, validate: bool = True):
    """Run a sweep (a ``Sweep`` or a list of ``RunSpec``); returns a pandas DataFrame.

    One row per run, in run_id order: ``run_id``, ``seed``, the varied parameters, then the
    result columns (``RESULT_COLUMNS``). ``mode``: ``"serial"`` (this process, no Spark),
    ``"spark"`` (Spark jobs: ``spark`` session, else
    ``kafkasim.experiments.spark.session(master)``) or
    ``"auto"``: Spark when given ``spark`` or ``master``; otherwise the first runs go serially,
    their measured cost decides (``experiments.costs``): the rest goes to Spark only if Spark is
    estimated to finish sooner by a margin (starting it in the background when worth it, and
    running serially while it starts), else everything runs serially.
    Every spec is validated first (``SweepError``, nothing runs). ``progress``: a bar in a
    notebook, a line in a terminal (default: shown unless under tests); False for none.
    The frame's ``attrs`` hold the mode (``"serial"``, ``"spark"``, or ``"serial+spark"`` with
    ``serial_runs``) and the wall time (not in the rows: rows are pure functions of their specs).
    """
    from kafkasim.experiments.progress import Progress

    specs, params, name = _as_specs(sweep)
    specs = _embed_files(specs)
    if mode not in ("auto", "serial", "spark"):
        raise ValueError(f"mode must be 'auto', 'serial' or 'spark', got {mode!r}")
    if validate:
        validate_specs(specs)
    inputs = specs_table(specs, params)
    if mode == "auto" and (spark is not None or master is not None):
        mode = "spark"
    started = time.perf_counter()
    bar = Progress(len(specs), f"{name}: {len(specs)} runs ({mode})", enabled=progress)
    extra: dict[str, Any] = {}
    try:
        if mode == "serial":
            frame = rows_frame(run_serial(specs, progress=bar.update))
        elif mode == "spark":
            from kafkasim.experiments.distributed import run_spark

            spark = spark if spark is not None else _wait_for_start(bar, master)
            bar.phase("on Spark")
            frame = run_spark(specs, spark=spark, master=master, progress=bar.update,
                              chunk_size=chunk_size, parallelism=parallelism)
        else:
            frame, extra = _run_auto(specs, bar, chunk_size=chunk_size,
                                     parallelism=parallelism)
            mode = extra.pop("mode")
    finally:
        bar.close()
    out = finalize(frame, inputs)
    out.attrs.update({"sweep": name, "mode": mode, "runs": len(specs),
                      "wall_s": round(time.perf_counter() - started, 3), **extra})
    return out


def _wait_for_start(bar, master):
    """The session of a background start under way (saying what it waits for), if any."""
    from kafkasim.experiments.distributed import current_start

    start = current_start()
    if start is None or master is not None or start.error is not None:
        if master is None:
            bar.phase("waiting for Spark: starting the session (a JVM), then its workers")
        return None
    while not start.done.wait(0.5):
        bar.phase(f"waiting for Spark: {start.phase} ({start.elapsed_s:.0f} s so far)")
    return start.wait()


def _run_auto(specs: list[RunSpec], bar, *, chunk_size=None, parallelism=None):
    """Serial runs from the front, measured; the rest to Spark when that pays (see
    ``experiments.costs``). Returns the rows and what was chosen."""
    from kafkasim.experiments.costs import COSTS

    have_spark = _have_pyspark()
    rows: list[dict] = []
    errors = 0
    serial_s = 0.0
    start = None
    note: dict[str, Any] = {}
    if have_spark:
        from kafkasim.experiments.distributed import current_start

        start = current_start()
    for i, spec in enumerate(specs):
        if have_spark and i > 0:
            s_per_run = serial_s / i
            remaining = len(specs) - i
            if start is not None and start.done.is_set() and start.error is None and \
                    not _alive(start.spark):
                start = None   # its session was stopped: a new one may be started below
            alive = start is not None and start.ready
            if alive and COSTS.choose_spark(remaining, s_per_run, ready=True):
                return _finish_on_spark(specs, i, rows, errors, s_per_run, start.spark, bar,
                                        chunk_size, parallelism)
            if start is None and COSTS.choose_spark(remaining, s_per_run, ready=False):
                from kafkasim.experiments.distributed import prepare

                start = prepare()   # the sweep is long enough for Spark to pay
            if start is not None and not start.done.is_set() and not bar.phase_text:
                bar.phase("serially while Spark starts in the background")
            if start is not None and start.error is not None and "spark_error" not in note:
                note["spark_error"] = f"{type(start.error).__name__}: {start.error}"[:500]
        t0 = time.perf_counter()
        row = run_one(spec)
        serial_s += time.perf_counter() - t0
        errors += row["status"] != "ok"
        rows.append(row)
        bar.update(len(rows), errors)
    return rows_frame(rows), {"mode": "serial", **note}


def _finish_on_spark(specs, i, rows, errors, s_per_run, spark, bar, chunk_size, parallelism):
    import pandas as pd

    from kafkasim.experiments.costs import COSTS
    from kafkasim.experiments.distributed import default_parallelism, run_spark

    rest = specs[i:]
    cores = parallelism or default_parallelism(spark)
    bar.phase("on Spark", eta_s=COSTS.spark_s(len(rest), s_per_run, cores))

    def progress(done: int, errs: int) -> None:
        bar.update(i + done, errors + errs)

    t0 = time.perf_counter()
    frame = run_spark(rest, spark=spark, progress=progress, chunk_size=chunk_size,
                      parallelism=parallelism)
    COSTS.learn(len(rest), s_per_run, time.perf_counter() - t0, cores)
    if rows:
        frame = pd.concat([rows_frame(rows), frame], ignore_index=True)
    mode = "serial+spark" if rows else "spark"
    return frame, {"mode": mode, "serial_runs": i}


def _alive(spark) -> bool:
    from kafkasim.experiments import spark as kspark

    return kspark._is_alive(spark) and kspark._session is spark   # noqa: SLF001


def run_specs(specs: Sequence[RunSpec], **kw):
    """``run_sweep`` for a plain list of specs."""
    return run_sweep(list(specs), **kw)


def _have_pyspark() -> bool:
    import importlib.util

    return importlib.util.find_spec("pyspark") is not None
