"""Notebook 14, the capstone: grade a learner's two replication rules, Maelstrom-style.

The learner writes Kafka's ``get_offset_truncation_state`` (where a follower truncates when the
leader's answer shows its log diverged) and ``maybe_increment_leader_hw`` (the leader's HW over
the ISR). ``grade`` plugs them into clusters through ``Cluster.swap_rule`` and runs them over
``SCHEDULES`` seeded random fault schedules (crashes, network cuts, pauses) while a producer
writes with acks=all; the invariant checkers judge every event. The first failing schedule is
shrunk (``shrink``: drop fault steps while the violation persists, deterministically) and told
the Jepsen way (``history``): who wrote what, who acknowledged it, what the log holds later.
A passing grade is compared with Kafka's own rules on the same schedules.

A fault step is a dict in the vocabulary of a sweep file's ``faults.steps`` (``at_ms``, ``do``,
``broker`` / ``a``, ``b`` / ``ms``), so a failing schedule can be pasted into a sweep.
Everything is a pure function of the schedule: no wall clock, no unseeded randomness.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from kafkasim.core import rules
from kafkasim.course.common import Text, cached, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.course.narration import narrate
from kafkasim.observe.checks import attach, make_suite
from kafkasim.observe.snapshots import restore, snapshot
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

#: the Kafka release the capstone runs (today's: KRaft, ELR on)
KAFKA_VERSION = "4.3"
SEED = 14
#: how many random fault schedules a grade runs
SCHEDULES = 100
TOPIC = "t"
#: the invariants that judge (kafkasim.observe.checks): what a client or a replica would notice
CHECKS = ("NoAckedLoss", "LogMatching", "WeakIsr", "MonotoneLeaderHw")
#: faults fall in [0, FAULT_WINDOW_MS) after the cluster is ready; writes go on until END_MS
FAULT_WINDOW_MS = 6000
RATE = 10
WRITES_MS = 12_000
#: after the writes: every fault healed, every broker started, then this long to converge
#: (longer than replica.socket.timeout.ms: a fetch lost in a cut is retried after it)
SETTLE_MS = 8000
#: brokers retry a replica fetch lost in a cut after 5 s instead of Kafka's default 30 s, so
#: that a run settles in seconds
BROKER_CONFIG = {"replica.socket.timeout.ms": 5000}
RULE_NAMES = ("get_offset_truncation_state", "maybe_increment_leader_hw")
_BROKERS = (1, 2, 3)


# -- fault schedules -------------------------------------------------------------------------------
def _isolate(rng: random.Random, t: int, b: int, down: int) -> list[dict]:
    """Cut broker ``b`` from both others; most often it also crashes while cut off."""
    steps = [{"at_ms": t, "do": "cut", "a": b, "b": o} for o in _BROKERS if o != b]
    if rng.random() < 0.7:
        crash = t + rng.randint(100, 1500)
        steps += [{"at_ms": crash, "do": "crash", "broker": b},
                  {"at_ms": crash + down, "do": "start", "broker": b}]
    return [*steps, {"at_ms": t + down, "do": "heal"}]


def fault_schedule(index: int) -> tuple[dict, ...]:
    """Schedule ``index``: 2-4 faults (crash and restart, cut one link, isolate a broker and
    perhaps crash it, pause a broker), drawn from an RNG seeded by ``index`` only."""
    rng = random.Random(f"kafkasim-capstone:{SEED}:{index}")
    steps: list[dict] = []
    t = 0
    for _ in range(rng.randint(2, 4)):
        t += rng.randint(200, 2500)
        b = rng.choice(_BROKERS)
        kind = rng.choice(("crash", "crash", "isolate", "isolate", "cut", "pause"))
        down = rng.randint(1000, 6000)
        if kind == "pause":
            steps.append({"at_ms": t, "do": "pause", "broker": b, "ms": down})
        elif kind == "cut":
            other = rng.choice([o for o in _BROKERS if o != b])
            steps += [{"at_ms": t, "do": "cut", "a": b, "b": other},
                      {"at_ms": t + down, "do": "heal"}]
        elif kind == "isolate":
            steps += _isolate(rng, t, b, down)
        else:
            steps += [{"at_ms": t, "do": "crash", "broker": b},
                      {"at_ms": t + down, "do": "start", "broker": b}]
    return tuple(sorted(steps, key=lambda s: s["at_ms"]))


class _Step:
    """One fault step, fired by the engine (picklable; the same actions as a sweep's steps)."""

    __slots__ = ("step",)

    def __init__(self, step: dict) -> None:
        self.step = step

    def __call__(self, c: Cluster) -> None:
        st = self.step
        action = st["do"]
        if action == "pause":
            c.pause(st["broker"], st["ms"])
        elif action == "cut":
            c.cut(st["a"], st["b"])
        elif action == "heal":
            c.heal()
        elif action == "start":
            if c.brokers[st["broker"]].state == "stopped":
                c.start(st["broker"], retry=True)
        elif c.brokers[st["broker"]].state == "running":
            c.crash(st["broker"])


# -- one run -----------------------------------------------------------------------------------
@lru_cache(maxsize=1)
def _ready_cluster() -> tuple[bytes, int]:
    """A 3-broker cluster with topic ``t`` (RF 3, min ISR 2) and its leader elected, as a
    snapshot: every schedule starts from these same bytes. (snapshot, ready time)"""
    c = Cluster(3, seed=SEED, kafka_version=KAFKA_VERSION, trace_messages=False,
                per_partition_metrics=False, config=BROKER_CONFIG)
    c.create_topic(TOPIC, 1, 3, assignment=[[1, 2, 3]], config={"min.insync.replicas": 2})
    c.run_until(lambda cl: cl.leader(TOPIC) >= 0, 30_000)
    return snapshot(c), c.now


@dataclass(frozen=True)
class Diverged:
    """The final read found a record in replica ``broker``'s log that differs from leader
    ``leader``'s at ``offset`` (a follower may lag behind its leader, never disagree with it)."""

    broker: int
    leader: int
    offset: int
    invariant: str = "ReplicasConverge"


@dataclass
class Run:
    """One schedule's outcome: the cluster at the end, its producer, the checkers."""

    steps: tuple[dict, ...]
    cluster: Cluster
    producer: object
    suite: object
    start_ms: int
    rules: tuple = (None, None)

    @property
    def violation(self):
        """The first violation the checkers found, else the replicas' final disagreement
        (``diverged``), else None."""
        return self.suite.first or self.diverged

    @property
    def diverged(self) -> Diverged | None:
        """The final read: once faults are healed and writes stopped, every replica should hold
        the leader's log. The first replica that does not, or None."""
        c = self.cluster
        leader = c.leader(TOPIC)
        if leader < 0:
            return None
        want = c.log_records(leader, TOPIC)
        for b in _BROKERS:
            have = c.log_records(b, TOPIC)
            at = next((i for i, (x, y) in enumerate(zip(have, want, strict=False)) if x != y), None)
            if at is not None:
                return Diverged(b, leader, have[at][0])
        return None

    @property
    def acked(self) -> int:
        return len(self.producer.acked())


def run_schedule(steps: Sequence[dict], truncation: Callable | None = None,
                 high_watermark: Callable | None = None, *, stop_ms: int | None = None) -> Run:
    """Run one fault schedule with these rules in place of Kafka's (None: Kafka's);
    ``stop_ms``: stop at that simulated time (the moment of a violation) instead of the end."""
    blob, ready = _ready_cluster()
    c = restore(blob)
    if truncation is not None:
        c.swap_rule("get_offset_truncation_state", truncation)
    if high_watermark is not None:
        c.swap_rule("maybe_increment_leader_hw", high_watermark)
    suite = attach(c, make_suite(CHECKS, on_violation="collect"))
    p = c.producer("writer", acks="all")
    RateWorkload(c, p, TOPIC, rate=RATE, duration_ms=WRITES_MS, start_ms=ready, partition=0)
    for st in steps:
        c.at(ready + st["at_ms"], _Step(dict(st)))
    rules_ = (truncation, high_watermark)
    if stop_ms is not None:
        c.run_to(min(stop_ms, ready + WRITES_MS + SETTLE_MS))
        return Run(tuple(steps), c, p, suite, ready, rules_)
    c.run_to(ready + WRITES_MS)
    c.heal()
    for b in _BROKERS:
        if c.brokers[b].state == "stopped":
            c.start(b, retry=True)
    c.run(SETTLE_MS)
    return Run(tuple(steps), c, p, suite, ready, rules_)


# -- shrinking ---------------------------------------------------------------------------------
def shrink(steps: Sequence[dict], fails: Callable[[tuple[dict, ...]], bool]
           ) -> tuple[dict, ...]:
    """The smallest schedule this finds that still ``fails``: delta debugging (ddmin) over the
    steps, removing halves, then quarters... then single steps, keeping each removal after
    which the run still fails. Deterministic; never longer than ``steps``."""
    current = tuple(steps)
    chunks = 2
    while len(current) >= 1:
        size = max(1, len(current) // chunks)
        for start in range(0, len(current), size):
            candidate = current[:start] + current[start + size:]
            if fails(candidate):
                current = candidate
                chunks = max(chunks - 1, 2)
                break
        else:
            if size == 1:
                return current
            chunks = min(len(current), chunks * 2)
    return current


# -- grading -----------------------------------------------------------------------------------
@dataclass
class Grade:
    """A grade over ``schedules`` schedules: the failing one (index, shrunk run) if any, and
    per schedule the acked count and whether the checkers flagged it."""

    schedules: int
    acked: list[int]
    failed: list[int]
    first_failure: int | None = None
    original: Run | None = None
    shrunk: Run | None = None
    kafkas: bool = False    # graded Kafka's own rules
    error: str | None = None   # what the rules raised, in which schedule

    @property
    def passed(self) -> bool:
        return not self.failed and self.error is None

    def __repr__(self) -> str:
        return report(self)


def grade(truncation: Callable | None = None, high_watermark: Callable | None = None, *,
          schedules: int = SCHEDULES, stop_at_first: bool = True) -> Grade:
    """Run the rules over schedules 0..``schedules``-1; on the first failure (when
    ``stop_at_first``) stop and shrink it."""
    if isinstance(schedules, bool) or not isinstance(schedules, int) or \
            not 1 <= schedules <= 1000:
        raise ValueError(f"schedules must be an int from 1 to 1000, got {schedules!r}")
    for name, fn in zip(RULE_NAMES, (truncation, high_watermark), strict=True):
        if fn is not None and not callable(fn):
            raise ValueError(f"grade(): the rule for {name} must be a function (or None for "
                             f"Kafka's), got {fn!r}")
    if truncation in (None, rules.get_offset_truncation_state) and \
            high_watermark in (None, rules.maybe_increment_leader_hw):
        return kafka_grade(schedules)
    g = Grade(schedules, [], [])
    for i in range(schedules):
        try:
            r = run_schedule(fault_schedule(i), truncation, high_watermark)
        except Exception as exc:   # the learner's function raised, or returned nonsense
            cause = exc.__cause__ or exc   # the engine wraps it in a SimulationError
            g.error = tr("your rules raised {exc} in fault schedule #{i}",
                         exc=f"{type(cause).__name__}: {cause}", i=i)
            return g
        g.acked.append(r.acked)
        if r.violation is not None:
            g.failed.append(i)
            if g.first_failure is None:
                g.first_failure, g.original = i, r
                invariant = r.violation.invariant

                def fails(steps, invariant=invariant):
                    v = run_schedule(steps, truncation, high_watermark).violation
                    return v is not None and v.invariant == invariant

                g.shrunk = run_schedule(shrink(r.steps, fails), truncation, high_watermark)
            if stop_at_first:
                break
    return g


@cached(maxsize=4)
def kafka_grade(schedules: int = SCHEDULES) -> Grade:
    """Kafka's own rules over the same schedules (computed once per process and number of
    schedules: ``kafka_grade()`` and ``kafka_grade(100)`` are the same grade)."""
    g = Grade(schedules, [], [], kafkas=True)
    for i in range(schedules):
        r = run_schedule(fault_schedule(i))
        g.acked.append(r.acked)
        if r.violation is not None:
            g.failed.append(i)
    return g


def schedule_table(index: int) -> Text:
    """Fault schedule ``index`` as a table: when (ms after the cluster is ready), what."""
    return text_table([{N_("t (ms)"): st["at_ms"], N_("nemesis does"): _step_text(st)}
                       for st in fault_schedule(index)],
                      title=tr("Fault schedule #{i}", i=index))


# -- telling it ---------------------------------------------------------------------------------
def _short(value) -> str:
    """A workload record's value ``workload-writer-t-17`` as ``v17``."""
    return "v" + str(value).rsplit("-", 1)[-1]


def _step_text(st: dict) -> str:
    if st["do"] == "cut":
        return tr("cut the link {a} <-> {b}", a=st["a"], b=st["b"])
    if st["do"] == "heal":
        return tr("heal every cut link")
    if st["do"] == "pause":
        return tr("pause broker {b} for {ms} ms", b=st["broker"], ms=st["ms"])
    if st["do"] == "start":
        return tr("restart broker {b}", b=st["broker"])
    return tr("crash broker {b}", b=st["broker"])


def _involved_offsets(run: Run) -> list[int]:
    v = run.violation
    if isinstance(v, Diverged):
        return [v.offset]
    offsets = list(getattr(v, "offsets", ()))
    ids = set(getattr(v, "record_ids", ()))
    offsets += [r.offset for r in run.producer.results.values() if r.record_id in ids]
    return sorted(set(o for o in offsets if o >= 0))[:2]


def _write_rows(run: Run, offsets: list[int], held: set) -> list[tuple]:
    """Who wrote the records at ``offsets`` or ``held`` there by some replica, and who
    acknowledged them (the whole run's view): a record no ack row follows was never
    acknowledged."""
    rows, t0 = [], run.start_ms
    for r in run.producer.results.values():
        if r.offset in offsets or r.value in held:
            rows.append((r.sent_ms - t0, tr("writer"), tr("write {v}", v=_short(r.value))))
            if r.offset >= 0:
                rows.append((r.done_ms - t0, tr("leader"),
                             tr("ack {v}: offset {o} (acks=all)", v=_short(r.value),
                                o=r.offset)))
    return rows


def history(run: Run) -> Text:
    """The run told the Jepsen way, in time order: the faults, who wrote the records the
    violation involves (acknowledged at its offsets, or held there by a replica) and who
    acknowledged them, leader changes and truncations, and what each replica holds at those
    offsets when the violation is found (the read)."""
    offsets = _involved_offsets(run)
    rows = [(st["at_ms"], tr("nemesis"), _step_text(st)) for st in run.steps]
    written = run
    v = run.violation
    if not isinstance(v, Diverged):   # replay up to the violation: read what was there then
        run = run_schedule(run.steps, *run.rules, stop_ms=v.time_ms)
    c, t0 = run.cluster, run.start_ms
    for t, kind, node, _topic, _p, detail in c.trace.rows:
        if t >= t0 and kind in ("become_leader", "truncate"):
            if kind == "become_leader":    # detail: a BecomeLeader event ("epoch 0, ISR [1, 2]")
                what = tr("becomes leader, {d}", d=narrate(str(detail)))
            else:
                what = tr("truncates its log {d}", d=str(detail).split(":")[0])
            rows.append((t - t0, tr("broker {b}", b=node), what))
    held_values: set = set()
    for b in _BROKERS:
        held = {off: (e, val) for off, e, val in c.log_records(b, TOPIC)}
        held_values.update(held[o][1] for o in offsets if o in held)
        got = [tr("offset {o}: {v} (epoch {e})", o=o, v=_short(held[o][1]), e=held[o][0])
               if o in held else tr("offset {o}: nothing", o=o) for o in offsets]
        rows.append((c.now - t0, tr("reader"),
                     tr("read broker {b}: {got}", b=b, got=", ".join(got))))
    rows += _write_rows(written, offsets, held_values)
    rows.sort(key=lambda row: row[0])   # stable: a read after what happened at its moment
    return text_table([{N_("t (ms)"): t, N_("who"): who, N_("what"): what}
                       for t, who, what in rows])


def _verdict(v) -> str:
    if isinstance(v, Diverged):
        return tr("ReplicasConverge: at the end broker {b} holds another batch than leader {l} "
                  "at offset {o} (another record, or the same record in another leader epoch)",
                  b=v.broker, l=v.leader, o=v.offset)
    return tr("{inv}: {msg}", inv=v.invariant, msg=narrate(v.message.split(":")[0]))


def report(g: Grade) -> str:
    """The grade as text: PASS with the comparison to Kafka's rules, or the failing schedule,
    shrunk, and its history."""
    if g.error is not None:
        return g.error
    if g.passed:
        k = g if g.kafkas else kafka_grade(g.schedules)
        graded = [(tr("Kafka's"), k)] if g.kafkas else [(tr("yours"), g), (tr("Kafka's"), k)]
        table = text_table([{N_("rules"): who, N_("schedules"): x.schedules,
                             N_("failed"): len(x.failed), N_("records acked"): sum(x.acked)}
                            for who, x in graded])
        head = tr("PASSES all {n} fault schedules: no checker found a violation.",
                  n=g.schedules) + "\n" + table
        if g.kafkas:
            return head
        same = sum(1 for a, b in zip(g.acked, k.acked, strict=True) if a == b)
        return head + "\n" + \
            tr("Same number of acknowledged records as Kafka's rules in {same} of {n} "
               "schedules.", same=same, n=g.schedules)
    o, s = g.original, g.shrunk
    lines = [tr("FAILS fault schedule #{i} (of {n}): {verdict}", i=g.first_failure,
                n=g.schedules, verdict=_verdict(o.violation)),
             tr("Shrunk from {a} fault steps to {b}; the shortest failing history:",
                a=len(o.steps), b=len(s.steps)),
             str(history(s))]
    return "\n".join(lines)


def grading_header() -> Text:
    """The capstone's first line: the release, the number of schedules and the checkers."""
    return Text(tr("Kafka {version} · {n} schedules · judged by {checks}", version=KAFKA_VERSION,
                   n=SCHEDULES, checks=" + ".join((*CHECKS, "ReplicasConverge"))))
