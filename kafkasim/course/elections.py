"""Notebook 08 (clean and unclean election, ELR): formatting and grading helpers.

Every cluster the notebook learns from is built in a visible cell of the notebook; the one
exception is the exercise's cluster, which a check must build twice (Kafka 4.0 and 4.1), and whose
source the notebook prints (``show_source(exercise_cluster)``).

The rules graded here are the simulator's own, which follow Kafka:

- ZooKeeper controller: ``PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection``
  (core/src/main/scala/kafka/controller/Election.scala, 0.11-3.9) as
  ``kafkasim.core.rules.offline_partition_leader_election``;
- KRaft controller: ``org.apache.kafka.controller.PartitionChangeBuilder.electLeader`` (metadata
  module, 4.x) as ``kafkasim.control.kraft.partition_change.PartitionChangeBuilder``, with
  KIP-966's Eligible Leader Replicas (on by default for new clusters since 4.1).
"""

from __future__ import annotations

import inspect
from collections import Counter
from collections.abc import Callable, Iterable

from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.partition_change import Election, PartitionChangeBuilder
from kafkasim.control.kraft.records import NO_LEADER, PartitionRegistration
from kafkasim.core import rules
from kafkasim.course.checks import (
    CheckResult,
    _form,
    _missing,
    _result,
    _want_int,
    unanswered,
)
from kafkasim.course.common import Text, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.course.narration import narrate
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload
from kafkasim.scenarios.scenario import lost_acked

SEED = 8
TOPIC = "payments"
EXERCISE_VERSIONS = ("4.0", "4.1")


def show_source(*fns: Callable) -> Text:
    """The source of Kafka's rule(s) as the simulator writes them, to print in a cell."""
    return Text("\n".join(inspect.getsource(fn) for fn in fns))


# -- the election rules, called directly -----------------------------------------------------------
def zk_election(assignment: Iterable[int], isr: Iterable[int], live: Iterable[int],
                unclean: bool) -> str:
    """What the ZooKeeper controller's offline election (Kafka <= 3.9) answers, as text."""
    leader, was_unclean = rules.offline_partition_leader_election(
        list(assignment), list(isr), list(live), unclean)
    if leader is None:
        return tr("no leader (offline)")
    return f"{leader} ({tr('unclean') if was_unclean else tr('clean')})"


def kraft_election(replicas: Iterable[int], isr: Iterable[int], elr: Iterable[int] = (),
                   last_known_elr: Iterable[int] = (), acceptable: Iterable[int] = (),
                   unclean: bool = False, kafka_version: str = "4.1") -> tuple[int | None, bool]:
    """The KRaft controller's election (PartitionChangeBuilder.electAnyLeader) for a leaderless
    partition with this ISR / ELR / LastKnownElr, when only ``acceptable`` brokers are
    registered, unfenced and not shutting down. ELR is on from Kafka 4.1 (EligibleLeader-
    ReplicasVersion 1 bootstraps at metadata.version 4.1-IV0), off in 4.0. Returns (leader or
    None, unclean)."""
    ok = set(acceptable)
    mv = MetadataVersion.latest_for(kafka_version)
    elr_on = mv.default_elr_feature_level() >= 1
    part = PartitionRegistration(replicas=tuple(replicas), isr=tuple(isr), elr=tuple(elr),
                                 last_known_elr=tuple(last_known_elr), leader=NO_LEADER,
                                 leader_epoch=5, partition_epoch=9)
    b = PartitionChangeBuilder(part, "T", 0, lambda r: r in ok, mv, 2) \
        .set_eligible_leader_replicas_enabled(elr_on) \
        .set_election(Election.UNCLEAN if unclean else Election.ONLINE)
    result = b.elect_leader()
    return (None if result.node == NO_LEADER else result.node), result.unclean


def _ids(text: str) -> list[int]:
    return [int(x) for x in str(text).replace(" ", "").split(",") if x]


def ladder_view(isr: str = "", elr: str = "2", last_known_elr: str = "", fenced: str = "1",
                unclean: bool = False, kafka_version: str = "4.1") -> Text:
    """The explorer's view: replicas [1, 2, 3] with no leader; brokers in ``fenced`` are not
    acceptable. Which rung of PartitionChangeBuilder's ladder elects whom."""
    isr_l, elr_l, lke_l = _ids(isr), _ids(elr), _ids(last_known_elr)
    down = set(_ids(fenced))
    ok = [b for b in (1, 2, 3) if b not in down]
    leader, was_unclean = kraft_election([1, 2, 3], isr_l, elr_l, lke_l, ok, unclean,
                                         kafka_version)
    if leader is None:
        rung = None
    elif leader in isr_l:
        rung = tr("from the ISR (clean)")
    elif not isr_l and leader in elr_l:
        rung = tr("from the ELR (clean)")
    elif was_unclean and not isr_l and not elr_l and lke_l == [leader]:
        rung = tr("the last known leader (counted as unclean)")
    else:
        rung = tr("unclean: the first acceptable replica")
    state = (f"Kafka {kafka_version}  Replicas: 1,2,3  Isr: {isr}  Elr: {elr}  "
             f"LastKnownElr: {last_known_elr}  {tr('fenced')}: {fenced or '-'}  "
             f"unclean.leader.election.enable={str(bool(unclean)).lower()}")
    if leader is None:
        return Text(state + "\n" + tr("elected: none, the partition is offline (Leader: none)"))
    return Text(state + "\n" + tr("elected: {who}, {rung}", who=leader, rung=rung))


# -- what a run did -------------------------------------------------------------------------------
def leader_of(c: Cluster, topic: str = TOPIC, partition: int = 0) -> int | str:
    """The partition's leader as ``kafka-topics --describe`` says it today: an id or "none"."""
    leader = c.leader(topic, partition)
    return leader if leader >= 0 else "none"


def acked_history(c: Cluster, producer, topic: str = TOPIC, partition: int = 0) -> Text:
    """Anomaly first: every acknowledged record, where it was acked, and whether the current
    leader still has it at that offset."""
    lost = set(lost_acked(c, [producer]))
    leader = c.leader(topic, partition)
    where = tr("on leader {leader}",
               leader=leader) if leader >= 0 else tr("on a leader (none: offline)")
    rows = []
    for r in producer.acked():
        state = "-" if leader < 0 else ("LOST" if r.record_id in lost else "yes")
        rows.append({"record": r.value, "offset": r.offset, "acked at (ms)": r.done_ms,
                     where: state})
    return text_table(rows)


def verdict(checker) -> Text:
    """The checkers' verdict on a run (a suite from ``kafkasim.observe.checks.attach``):
    violations, and losses the configuration allows (with the reason), counted per invariant."""
    lines = []
    bad = Counter(v.invariant for v in checker.violations)
    for name, n in sorted(bad.items()):
        first = next(v for v in checker.violations if v.invariant == name)
        lines.append(tr("VIOLATION {name} x{n}; first at t={t} ms: {message}", name=name, n=n,
                        t=first.time_ms, message=narrate(first.message)))
    allowed = Counter((v.invariant, v.allowed_because) for v in checker.allowed)
    for (name, why), n in sorted(allowed.items()):
        lines.append(tr("allowed   {name} x{n}: {why}", name=name, n=n, why=_reasons(why)))
    return Text("\n".join(lines) if lines else tr("no violation, nothing lost"))


def _reasons(why: str) -> str:
    """A checker's "; "-separated reasons a loss is allowed (a reason may hold "; " inside its
    parentheses), each in the course language."""
    parts, depth, start, text = [], 0, 0, str(why)
    for i, ch in enumerate(text):
        depth += (ch == "(") - (ch == ")")
        if depth == 0 and text.startswith("; ", i):
            parts.append(text[start:i])
            start = i + 2
    parts.append(text[start:])
    return "; ".join(narrate(part) for part in parts)


def checkers_line(checker) -> Text:
    """"checkers: " and the checkers' ``verdict`` on a run."""
    return Text(tr("checkers: {verdict}", verdict=verdict(checker)))


def rule_heading(rule: Callable | None = None, acked: int | None = None) -> Text:
    """The heading of a run under Kafka's rule (``rule`` None) or a swapped-in rule (its name),
    with the number of acknowledged writes when ``acked`` is given."""
    head = "=== " + (tr("Kafka's rule") if rule is None else rule.__name__)
    return Text(head if acked is None else head + " - " + tr("acked {n}", n=acked))


def rule_run_line(rule, producer, c: Cluster, topic: str) -> Text:
    """One run of notebook 03's HW-rule comparison: ``rule_heading`` (the rule it ran, None:
    Kafka's), the values acknowledged to ``producer`` and the leader once the old one is gone."""
    return Text(rule_heading(rule) + tr(": acked {values}, leader now {leader}",
                                        values=[r.value for r in producer.acked()],
                                        leader=c.leader(topic)))


def show_leader(c: Cluster, topic: str = TOPIC, partition: int = 0) -> Text:
    """The partition's leader and ISR now."""
    return Text(tr("leader now: {leader}  ISR now: {isr}", leader=leader_of(c, topic, partition),
                   isr=c.isr(topic, partition)))


def moments(seen: Iterable[tuple[str, str]]) -> Text:
    """(what happened, ``kafka-topics --describe`` line) pairs, one "--- what" heading each."""
    return Text("\n".join(f"--- {narrate(what)}\n{line.strip()}" for what, line in seen))


def lost_acked_line(n: int) -> Text:
    """How many acknowledged records a run lost."""
    return Text(tr("lost acknowledged records: {n}", n=n))


#: headers the notebook's own tables use (translated where ``text_table`` prints them)
HEADERS = (N_("acceptable"), N_("elected"), N_("counted unclean"), N_("refused"), N_("lost"),
           N_("leader at the end"), N_("'done' after (ms)"), N_("new leader"),
           N_("'precious' on"), N_("'earlier' on"), N_("checkers"), N_("mode"), N_("detector"),
           N_("leader moved after (ms)"), N_("crash at (ms)"))


def acked_losses(checker) -> tuple[int, int]:
    """(NoAckedLoss violations, NoAckedLoss losses the configuration allows) of a suite: acked
    records missing from a leader. An offline partition (no leader) loses nothing yet."""
    return (sum(v.invariant == "NoAckedLoss" for v in checker.violations),
            sum(v.invariant == "NoAckedLoss" for v in checker.allowed))


# -- exercise 1: a fault sequence graded by the checkers -------------------------------------------
def exercise_cluster(kafka_version: str):
    """The exercise's cluster: 3 brokers (replica.lag.time.max.ms 10 s), topic ``payments`` with
    replicas [1, 2, 3], min.insync.replicas 2 and unclean.leader.election.enable TRUE; a
    producer with acks=all writing 20 records/s for 90 s. Returns (cluster, producer)."""
    c = Cluster(3, seed=SEED, kafka_version=kafka_version,
                config={"replica.lag.time.max.ms": 10000})
    c.create_topic(TOPIC, assignment=[[1, 2, 3]],
                   config={"min.insync.replicas": 2, "unclean.leader.election.enable": True})
    p = c.producer("p", acks="all")
    RateWorkload(c, p, TOPIC, rate=20, duration_ms=90000, partition=0)
    return c, p


def run_exercise(faults: Callable[[Cluster], None], kafka_version: str):
    """Build the exercise cluster, attach every checker, run ``faults(c)`` then 30 s more."""
    from kafkasim.observe.checks import attach

    c, p = exercise_cluster(kafka_version)
    suite = attach(c)
    faults(c)
    c.run(30000)
    return c, p, suite


def check_elr_saves(faults: Callable[[Cluster], None] | None) -> CheckResult:
    """Exercise: ``faults(c)`` must lose acknowledged records on Kafka 4.0 (ELR off) and lose
    none on Kafka 4.1 (ELR on), as the NoAckedLoss checker judges."""
    if (m := _missing(faults)) is not None:
        return m
    if not callable(faults):
        return _result(False, tr("pass a function that takes the cluster, e.g. def "
                                 "my_faults(c): ..."))
    verdicts = {}
    for v in EXERCISE_VERSIONS:
        c, p, suite = run_exercise(faults, v)
        verdicts[v] = (acked_losses(suite), len(lost_acked(c, [p])), c.describe(TOPIC))
        print(tr("--- Kafka {v} (ELR {on_off}):", v=v,
                 on_off=tr("on") if v >= "4.1" else tr("off")))
        print(verdict(suite))
    (v0, a0), lost0, _ = verdicts["4.0"]
    (v1, a1), lost1, _ = verdicts["4.1"]
    if v0 + a0 == 0:
        return _result(False, tr("on Kafka 4.0 the checker found no acknowledged record lost: "
                                 "the ISR must shrink below min.insync.replicas before the "
                                 "leader goes, and the replica an election would pick must "
                                 "miss committed records."))
    if v1 + a1 > 0 or lost1:
        return _result(False, tr("Kafka 4.1 lost {max_v1_a1_lost1} acknowledged record(s) too: "
                                 "ELR only helps when an ELR member is acceptable when the ISR "
                                 "empties.", max_v1_a1_lost1=max(v1 + a1, lost1)))
    return _result(True, tr("Kafka 4.0 lost {lost0} acknowledged record(s) "
                            "({allowed_unclean_election}); 4.1 lost none.",
                            lost0=lost0,
                            allowed_unclean_election=(tr("allowed: unclean election") if a0
                                                      else tr("a real violation"))))


def _unanswered() -> CheckResult:
    return unanswered(tr("a broker id (or None for no leader)"))


# -- exercise 2: the ZooKeeper-era offline election ------------------------------------------------
def check_zk_election(assignment, isr, live, unclean, answer) -> CheckResult:
    """Exercise: who does the ZooKeeper controller elect (an int, or None for offline)?"""
    if answer is Ellipsis:
        return _unanswered()
    if answer is not None and (m := _form(_want_int(answer, "answer (or None)"))) is not None:
        return m
    leader, was_unclean = rules.offline_partition_leader_election(
        list(assignment), list(isr), list(live), unclean)
    if answer != leader:
        return _result(False, _zk_hint(list(assignment), set(isr), set(live), unclean, answer))
    kind = tr("offline") if leader is None else (tr("an unclean election") if was_unclean
                                                 else tr("clean"))
    return _result(True, f"{leader} ({kind}).")


def _zk_hint(assignment: list[int], isr: set[int], live: set[int], unclean: bool,
             answer: int | None) -> str:
    """What a wrong answer to the ZooKeeper election missed, by the kind of answer it is."""
    live_isr = [r for r in assignment if r in live and r in isr]
    if answer is None:
        return (tr("broker {b} is alive and in the ISR: the first loop elects it.", b=live_isr[0])
                if live_isr else tr("unclean.leader.election.enable is true and a replica is "
                                    "alive: the second loop elects it."))
    if answer not in live:
        return tr("broker {b} is down: the controller elects only a live replica.", b=answer)
    if answer not in isr and (live_isr or not unclean):
        return (tr("broker {b} is not in the ISR, and a live ISR member exists: the first loop "
                   "returns before unclean election is considered.", b=answer) if live_isr
                else tr("broker {b} is not in the ISR, and unclean.leader.election.enable is "
                        "false: nobody outside the ISR may lead.", b=answer))
    return tr("both loops walk the replicas in assignment order, {assignment}: which one comes "
              "first?", assignment=assignment)


# -- exercise 3: the KRaft ladder -----------------------------------------------------------------
def check_kraft_election(isr, elr, last_known_elr, acceptable, unclean, kafka_version,
                         answer) -> CheckResult:
    """Exercise: who does the KRaft controller elect for replicas [1, 2, 3]?"""
    if answer is Ellipsis:
        return _unanswered()
    if answer is not None and (m := _form(_want_int(answer, "answer (or None)"))) is not None:
        return m
    leader, was_unclean = kraft_election([1, 2, 3], isr, elr, last_known_elr, acceptable,
                                         unclean, kafka_version)
    if answer != leader:
        if answer is not None and answer not in acceptable:
            return _result(False, tr("broker {b} is not acceptable (fenced, shutting down or not "
                                     "registered): no step elects it, not even the last known "
                                     "leader since KAFKA-19522 (4.1).", b=answer))
        return _result(False, tr("walk the ladder: still-valid leader, ISR, ELR (only when the "
                                 "ISR is empty), the last known leader, unclean; each step "
                                 "only takes an acceptable broker, and ELR needs Kafka 4.1+."))
    kind = tr("offline") if leader is None else (tr("unclean") if was_unclean else tr("clean"))
    return _result(True, f"{leader} ({kind}).")


__all__ = [
    "EXERCISE_VERSIONS", "SEED", "TOPIC", "acked_history", "acked_losses", "check_elr_saves",
    "check_kraft_election", "check_zk_election", "checkers_line", "exercise_cluster",
    "kraft_election", "ladder_view", "leader_of", "lost_acked_line", "moments", "rule_heading",
    "run_exercise", "show_leader", "show_source", "verdict", "zk_election",
]
