"""The checkers' shared base: violations, ``Checker`` and ``CheckSuite``, the registry
(``register``, ``CHECKS``), the incremental log comparisons several checks share, and the
API (``make_suite``, ``check_all``, ``attach`` / ``detach``, ``run_checked``,
``classify_losses``).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import ClassVar

from kafkasim.observe.checks.ghost import TP, Ghost, _events_run, acked_loss_reasons
from kafkasim.settings.exceptions import ClusterError

RAISE = "raise"
COLLECT = "collect"
_MODES = (RAISE, COLLECT)


# ------------------------------------------------------------------------------------ results
@dataclass(frozen=True, slots=True)
class Violation:
    """One invariant violation, with everything needed to find and replay it."""

    invariant: str
    message: str
    time_ms: int
    seed: int
    kafka_version: str = ""
    topic: str = ""
    partition: int = -1
    brokers: tuple = ()
    offsets: tuple = ()
    record_ids: tuple = ()
    event: str | None = None          # the engine event that just ran, when known
    trace_row: tuple | None = None    # the last trace row written (what that event did)
    events_processed: int = 0
    source: str = ""
    allowed_because: str | None = None   # set when the configuration legitimately allows it
    key: tuple = field(default=(), compare=False, repr=False)

    def __str__(self) -> str:
        where = f" {self.topic}-{self.partition}" if self.topic else ""
        lines = [f"{self.invariant} violated{where} at t={self.time_ms} ms "
                 f"(seed={self.seed}, kafka_version={self.kafka_version!r}, "
                 f"event #{self.events_processed}): {self.message}"]
        if self.allowed_because:
            lines.append(f"  allowed by the configuration: {self.allowed_because}")
        if self.event is not None:
            lines.append(f"  event: {self.event}")
        if self.trace_row is not None:
            lines.append(f"  last trace row: {self.trace_row!r}")
        involved = []
        if self.brokers:
            involved.append(f"brokers={list(self.brokers)}")
        if self.offsets:
            involved.append(f"offsets={list(self.offsets)}")
        if self.record_ids:
            involved.append(f"record_ids={list(self.record_ids)}")
        if involved:
            lines.append("  involved: " + ", ".join(involved))
        if self.source:
            lines.append(f"  source: {self.source}")
        lines.append(f"  reproduce: the same actions on Cluster(seed={self.seed}, "
                     f"kafka_version={self.kafka_version!r}, ...)")
        return "\n".join(lines)


class InvariantViolation(AssertionError):
    """Raised by a checker in ``on_violation="raise"`` mode; ``.violation`` has the details."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(str(violation))
        self.violation = violation


# ----------------------------------------------------------------------------------- checkers
class Checker:
    """Base class: ``checker(cluster)`` checks the current state and reports violations.

    ``on_violation``: ``"raise"`` (default) raises ``InvariantViolation`` at the first new
    violation; ``"collect"`` only records. ``first`` is the first violation, ``violations`` all
    of them (up to ``max_violations``), ``allowed`` the losses the configuration allows.
    """

    name: ClassVar[str] = ""
    source: ClassVar[str] = ""

    def __init__(self, *, on_violation: str = RAISE, max_violations: int = 1000) -> None:
        if on_violation not in _MODES:
            raise ValueError(f"on_violation must be one of {_MODES}, got {on_violation!r}")
        self.on_violation = on_violation
        self.max_violations = max_violations
        self.ghost = Ghost()
        self._owns_ghost = True
        self._generation = -1
        self.first: Violation | None = None
        self.violations: list[Violation] = []
        self.allowed: list[Violation] = []
        self._seen: set[tuple] = set()

    def __repr__(self) -> str:
        state = "ok" if self.first is None else f"{len(self.violations)} violation(s)"
        return f"{type(self).__name__}({state})"

    @property
    def ok(self) -> bool:
        return self.first is None

    def reset(self) -> None:
        """Forget history and violations (e.g. before checking another cluster)."""
        self.ghost.reset()
        self.first = None
        self.violations = []
        self.allowed = []
        self._seen = set()
        self._reset_state()

    def _reset_state(self) -> None:
        """Subclasses: forget incremental state."""

    # -- entry points ----------------------------------------------------------------------------
    def __call__(self, cluster) -> None:
        if self._owns_ghost:
            self.ghost.update(cluster)
        if self.ghost.quiet:   # nothing a check reads changed: it would find what it found
            return
        self._report(cluster, self._run(cluster, self.ghost))

    def check_now(self, cluster) -> list[Violation]:
        """A full re-check of the current state; returns every violation present now, including
        ones reported before (in "raise" mode, raises at the first of them)."""
        self.ghost.update(cluster, full=True)
        return self._report(cluster, self._run(cluster, self.ghost), again=True)

    def _run(self, cluster, g: Ghost) -> Iterable[Violation]:
        if self._generation != g.generation:   # a new run or another cluster: start afresh
            self._reset_state()
            self._generation = g.generation
        return self.evaluate(cluster, g)

    def evaluate(self, cluster, g: Ghost) -> Iterable[Violation]:
        """Yield the violations in the current state (subclasses)."""
        raise NotImplementedError

    # -- reporting -------------------------------------------------------------------------------
    def violation(self, cluster, g: Ghost, key: tuple, message: str, *, topic: str = "",
                  partition: int = -1, brokers: Iterable = (), offsets: Iterable = (),
                  record_ids: Iterable = (), allowed_because: str | None = None) -> Violation:
        return Violation(
            invariant=self.name, message=message, time_ms=cluster.now,
            seed=cluster.engine.seed, kafka_version=getattr(cluster, "kafka_version", ""),
            topic=topic, partition=partition, brokers=tuple(brokers), offsets=tuple(offsets),
            record_ids=tuple(record_ids), event=g.event_text(), trace_row=g.last_row(cluster),
            events_processed=_events_run(cluster.engine), source=self.source,
            allowed_because=allowed_because, key=(self.name, *key))

    def _report(self, cluster, found: Iterable[Violation], *, again: bool = False
                ) -> list[Violation]:
        """Record new violations (each key once); raise at the first in "raise" mode.

        ``again``: also return (and raise for) violations already reported earlier."""
        out = []
        for v in found:
            if v.key in self._seen:
                if again:
                    out.append(v)
                continue
            self._seen.add(v.key)
            out.append(v)
            if v.allowed_because is not None:
                if len(self.allowed) < self.max_violations:
                    self.allowed.append(v)
                continue
            if self.first is None:
                self.first = v
            if len(self.violations) < self.max_violations:
                self.violations.append(v)
        if self.on_violation == RAISE:
            for v in out:
                if v.allowed_because is None:
                    raise InvariantViolation(v)
        return out

    def report(self) -> str:
        """Human-readable summary."""
        if self.first is None and not self.allowed:
            return f"{type(self).__name__}: no violation"
        out = [str(v) for v in self.violations]
        out += [f"[allowed] {v}" for v in self.allowed]
        return "\n".join(out)


#: Registered checks by name, in registration order.
CHECKS: dict[str, type[Checker]] = {}


def register(cls: type[Checker]) -> type[Checker]:
    """Class decorator: make a check available by its ``name`` (``make_suite``, ``check_all``)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} needs a non-empty name")
    CHECKS[cls.name] = cls
    return cls


class CheckSuite(Checker):
    """Several checks sharing one ``Ghost``; is itself a ``Checker`` (pass it as ``check=``)."""

    name = "suite"

    def __init__(self, checks: Iterable[Checker], *, on_violation: str = RAISE,
                 max_violations: int = 1000) -> None:
        super().__init__(on_violation=on_violation, max_violations=max_violations)
        self.checks = list(checks)
        for c in self.checks:
            c.ghost = self.ghost
            c._owns_ghost = False

    def __repr__(self) -> str:
        names = ", ".join(c.name for c in self.checks)
        state = "ok" if self.first is None else f"{len(self.violations)} violation(s)"
        return f"CheckSuite([{names}], {state})"

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.checks]

    def __getitem__(self, name: str) -> Checker:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def _reset_state(self) -> None:
        for c in self.checks:
            c._reset_state()

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        for c in self.checks:
            yield from c._run(cluster, g)

    def violations_of(self, name: str) -> list[Violation]:
        return [v for v in self.violations if v.invariant == name]


# ------------------------------------------------------------- shared by several checkers
class _LeaderPresence:
    """Incrementally verifies that expected (offset, record id) pairs are in a leader's log.

    ``marks[tp] = (leader key, records verified, leader LEO)``: records already verified against
    the same leader log are re-verified only after a truncation, a shrink of that log, a leader
    change, or in full mode.
    """

    __slots__ = ("marks",)

    def __init__(self) -> None:
        self.marks: dict[TP, tuple] = {}

    def start_index(self, g: Ghost, tp: TP, key: tuple, leader: int, leo: int) -> int:
        mark = self.marks.get(tp)
        if g.full or mark is None or mark[0] != key or leo < mark[2] or \
                (leader, tp) in g.truncated:
            return 0
        return mark[1]

    def done(self, tp: TP, key: tuple, n: int, leo: int) -> None:
        self.marks[tp] = (key, n, leo)


class _PrefixMarks:
    """Incrementally verifies that replica ``b`` holds leader ``a``'s records (id and epoch) at
    every offset below a bound: ranges already compared are compared again only after a
    truncation, a shrink or a change of identity of either log, or in full mode."""

    __slots__ = ("marks",)

    def __init__(self) -> None:
        self.marks: dict[tuple, tuple] = {}

    def first_problem(self, g: Ghost, tp: TP, a: int, la, b: int, lb, upto: int
                      ) -> tuple[int, str] | None:
        """``(offset, "differs")`` for the first offset below ``upto`` where the logs differ,
        else ``(offset, "missing")`` when ``lb`` ends before ``upto``, else None."""
        sa = la.log_start_offset
        h = min(upto, la.log_end_offset)
        if lb is None:
            return (0, "missing") if h > sa else None
        sb = lb.log_start_offset
        leo_b = lb.log_end_offset
        lo = max(sa, sb)
        hc = min(h, leo_b)
        k = (tp, a, b)
        ident = (id(la), id(lb), sa, sb)
        mark = self.marks.get(k)
        leo_a = la.log_end_offset
        if g.full or mark is None or mark[0] != ident or leo_a < mark[2] or \
                leo_b < mark[3] or (a, tp) in g.truncated or (b, tp) in g.truncated:
            v = lo
        else:
            v = max(mark[1], lo)
        found = None
        if v < hc and (la.ids[v - sa:hc - sa] != lb.ids[v - sb:hc - sb]
                       or la.epochs[v - sa:hc - sa] != lb.epochs[v - sb:hc - sb]):
            o = v
            while la.ids[o - sa] == lb.ids[o - sb] and la.epochs[o - sa] == lb.epochs[o - sb]:
                o += 1
            found = (o, "differs")
        self.marks[k] = (ident, max(v, hc), leo_a, leo_b)
        if found is None and leo_b < h:
            found = (max(leo_b, lo), "missing")
        return found


class _IsrPrefix(Checker):
    """WeakIsr / StrongIsr: a leader's committed prefix is held by every ISR member."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._prefix = _PrefixMarks()

    def _reset_state(self) -> None:
        self._prefix = _PrefixMarks()

    def members(self, g: Ghost, tp: TP, part) -> tuple[int, ...]:
        raise NotImplementedError

    what = ""

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        everything = g.full or g.structural or g._states_changed
        dirty = g.dirty
        brokers = cluster.brokers
        prefix = self._prefix
        for bid, tp, part in g.local_leaders:
            if not everything and tp not in dirty:
                continue
            la = part.log
            h = la.high_watermark
            if h <= la.log_start_offset:
                continue
            for r in self.members(g, tp, part):
                if r == bid:
                    continue
                rb = brokers.get(r)
                lb = rb.logs.get(tp) if rb is not None else None
                if lb is None and _no_longer_assigned(cluster, tp, r):
                    continue
                found = prefix.first_problem(g, tp, bid, la, r, lb, h)
                if found is None:
                    continue
                o, kind = found
                why = g.replica_loss_reasons(tp, (bid, r), o, cluster=cluster)
                if kind == "missing":
                    leo = lb.log_end_offset if lb is not None else 0
                    yield self.violation(
                        cluster, g, (tp, bid, part.leader_epoch, r, "missing"),
                        f"leader {bid} (epoch {part.leader_epoch}) has HW {h} but {r}, in "
                        f"{self.what} {list(self.members(g, tp, part))}, holds only offsets "
                        f"below {leo}", topic=tp[0], partition=tp[1], brokers=(bid, r),
                        offsets=(h, leo), record_ids=_ids_from(la, o, h),
                        allowed_because="; ".join(why) if why else None)
                else:
                    ra, rr = la.ids[o - la.log_start_offset], lb.ids[o - lb.log_start_offset]
                    ea = la.epochs[o - la.log_start_offset]
                    er = lb.epochs[o - lb.log_start_offset]
                    yield self.violation(
                        cluster, g, (tp, bid, r, o, "differs"),
                        f"leader {bid} (epoch {part.leader_epoch}, HW {h}) has record "
                        f"{ra}@epoch {ea} at offset {o} but {r}, in {self.what} "
                        f"{list(self.members(g, tp, part))}, has {rr}@epoch {er}",
                        topic=tp[0], partition=tp[1], brokers=(bid, r), offsets=(o,),
                        record_ids=(ra, rr), allowed_because="; ".join(why) if why else None)


def _no_longer_assigned(cluster, tp: TP, replica: int) -> bool:
    """The replica's log is gone because the partition's replicas no longer list it (a
    completed reassignment: in KRaft every broker applies the record on its own, so a removed
    replica may delete its log before the leader drops it from its cached ISR). It is no
    replica any more, so holding nothing is no violation."""
    try:
        assigned = cluster.assignment(tp[0]).get(tp[1])
    except ClusterError:
        return False
    return assigned is not None and replica not in assigned


def _ids_from(log, lo: int, hi: int, limit: int = 10) -> tuple:
    """Up to ``limit`` record ids of ``log`` in [lo, hi)."""
    s = log.log_start_offset
    lo = max(lo, s)
    hi = min(hi, log.log_end_offset, lo + limit)
    return tuple(log.ids[lo - s:hi - s]) if lo < hi else ()


# ---------------------------------------------------------------------------------- helpers
def make_suite(names: Iterable[str] | None = None, *, on_violation: str = RAISE,
               max_violations: int = 1000) -> CheckSuite:
    """A ``CheckSuite`` of the registered checks named (default: all of them)."""
    chosen = list(CHECKS) if names is None else list(names)
    unknown = [n for n in chosen if n not in CHECKS]
    if unknown:
        raise KeyError(f"unknown check(s) {unknown}; registered: {list(CHECKS)}")
    return CheckSuite([CHECKS[n](on_violation=on_violation) for n in chosen],
                      on_violation=on_violation, max_violations=max_violations)


_SUITES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def suite_for(cluster, names: Iterable[str] | None = None, *,
              on_violation: str = RAISE) -> CheckSuite:
    """The suite attached to ``cluster`` for these check names (created on first use), so that
    successive ``check_all`` / ``run_checked`` calls share history (e.g. MonotoneLeaderHw)."""
    key = tuple(CHECKS) if names is None else tuple(names)
    per_cluster = _SUITES.get(cluster)
    if per_cluster is None:
        per_cluster = _SUITES[cluster] = {}
    suite = per_cluster.get(key)
    if suite is None:
        suite = per_cluster[key] = make_suite(key, on_violation=on_violation)
    suite.on_violation = on_violation
    return suite


def check_all(cluster, names: Iterable[str] | None = None, *,
              on_violation: str = RAISE) -> list[Violation]:
    """Fully check the current state with the cluster's suite; returns the new violations
    (raises ``InvariantViolation`` at the first one unless ``on_violation="collect"``)."""
    return suite_for(cluster, names, on_violation=on_violation).check_now(cluster)


class _CheckListener:
    """An engine listener (``Engine.add_listener``) running a checker after every event
    (``attach``). Engines pickle without listeners, so snapshots of an attached cluster carry no
    checker."""

    __slots__ = ("checker", "cluster")

    def __init__(self, checker: Checker, cluster) -> None:
        self.checker, self.cluster = checker, cluster

    def __call__(self, time_ms: int, kind: str, args: tuple) -> None:
        ghost = self.checker.ghost
        ghost.event = (time_ms, -1, kind, args)
        try:
            self.checker(self.cluster)
        finally:
            ghost.event = None


def attach(cluster, checker: Checker | None = None, *, on_violation: str = COLLECT) -> Checker:
    """Run ``checker`` (default: a new suite of every check) after every event of ``cluster``,
    however the simulation advances (``run``, ``run_until``, consumer polls, ``restart``...),
    until ``detach``; returns it. Violations name the event. In ``on_violation="raise"`` mode
    the ``InvariantViolation`` reaches the caller wrapped in the engine's ``SimulationError``
    (as its ``__cause__``); "collect" (the default) just records."""
    if checker is None:
        checker = make_suite(on_violation=on_violation)
    checker.ghost.recheck_next()   # whatever happened while it was not attached
    detach(cluster)
    cluster.engine.add_listener(_CheckListener(checker, cluster))
    return checker


def detach(cluster) -> None:
    """Stop the checker ``attach`` installed (a no-op when none is)."""
    engine = cluster.engine
    for fn in engine.listeners:
        if isinstance(fn, _CheckListener):
            engine.remove_listener(fn)


def classify_losses(cluster, record_ids: Iterable[int], checker: Checker | None = None
                    ) -> dict[int, str]:
    """For acked record ids found lost (e.g. ``kafkasim.scenarios.scenario.lost_acked``): record id
    ->
    why the configuration allows that loss; ids absent from the answer are bugs.

    Uses what ``checker`` (a suite that followed the run) classified as allowed (NoAckedLoss),
    else replays the trace: unclean elections after the ack, acks=1 records whose leader has
    moved on, power loss of every replica (without a live ghost: of every replica of the
    partition) that held it."""
    wanted = set(record_ids)
    out: dict[int, str] = {}
    found: set[int] = set()
    if checker is not None:
        checks = getattr(checker, "checks", [checker])
        for c in checks:
            if c.name != "NoAckedLoss":
                continue
            for v in c.allowed:
                rid = v.record_ids[0] if v.record_ids else None
                if rid in wanted:
                    out.setdefault(rid, v.allowed_because or "")
            for v in c.violations:
                if v.record_ids and v.record_ids[0] in wanted:
                    found.add(v.record_ids[0])
    rest = wanted - set(out) - found
    if not rest:
        return out
    g = Ghost()
    if checker is not None and checker.ghost._cluster_ref is not None and \
            checker.ghost._cluster_ref() is cluster:
        g = checker.ghost
    else:
        g.update(cluster, full=True)
    for rid in sorted(rest):
        hit = g.acked_by_id.get(rid)
        if hit is None:
            continue
        tp, rec = hit
        info = g.leader_info.get(tp)
        leader = info[0] if info is not None else -1
        term, term_leader = g.terms.get(tp, (-1, -1))
        if term_leader != leader:
            term = -2
        reasons = acked_loss_reasons(g, tp, rec, leader, term)
        if reasons:
            out[rid] = "; ".join(reasons)
    return out


def run_checked(cluster, ms: int, names: Iterable[str] | None = None, *,
                suite: Checker | None = None, on_violation: str = RAISE) -> Checker:
    """``cluster.run(ms)`` checking every invariant after every event; returns the suite.

    Unlike ``run(check=...)``, violations also name the engine event that just ran.
    """
    if ms < 0:
        raise ValueError(f"cannot run for a negative duration ({ms} ms)")
    if suite is None:
        suite = suite_for(cluster, names, on_violation=on_violation)
    engine = cluster.engine
    target = engine.now + ms
    ghost = suite.ghost
    try:
        while (nxt := engine.peek()) is not None and nxt.time_ms <= target:
            ghost.event = tuple(nxt)
            engine.step()
            suite(cluster)
    finally:
        ghost.event = None
    engine.now = max(engine.now, target)
    return suite
