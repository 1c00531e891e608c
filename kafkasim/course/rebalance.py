"""Notebook 12 (the preferred leader and automatic leader rebalancing): helpers and checks.

Every cluster the notebook learns from is built in a visible cell; the two exercise clusters a
check must build are printed in the notebook (``show_source(restore_cluster)``,
``show_source(double_crash_cluster)``).

Kafka's rules mirrored here (fact sheet section 8):

- the preferred replica is the first replica of the assignment;
- ZooKeeper controller (``KafkaController.checkAndTriggerAutoLeaderRebalance``, 0.8.2-3.9): per
  preferred broker B, ``imbalance(B) = not led by B / preferred for B``; a preferred election runs
  for B's partitions only when ``imbalance(B) > leader.imbalance.per.broker.percentage / 100``
  (strictly greater);
- KRaft controller (``ReplicationControlManager.maybeBalancePartitionLeaders``, 3.x-4.x): every
  imbalanced partition gets a PREFERRED election, the percentage is not read (3.x accepts the key
  and ignores it; 4.0 removed it as ZooKeeper-only, KAFKA-18743, so 4.x refuses it);
- ``PreferredReplicaImbalanceCount``: partitions whose leader is not the preferred replica.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkasim.course.checks import (
    CheckResult,
    _form,
    _missing,
    _result,
    _want_bool,
    _want_int,
    unanswered,
)
from kafkasim.course.common import Text, error_line, notebook_version, text_table
from kafkasim.course.elections import show_source, verdict
from kafkasim.course.i18n import N_, tr
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.metrics import PREFERRED_IMBALANCE

SEED = 12
TOPIC = "orders"


def led_by(c: Cluster, topic: str = TOPIC) -> dict[int, int]:
    """Per broker: how many partitions of ``topic`` it leads."""
    n = c.topics.partition_count(topic)
    return {b: sum(c.leader(topic, p) == b for p in range(n)) for b in sorted(c.brokers)}


def leader_counts(c: Cluster, topic: str = TOPIC) -> Text:
    """Per broker: how many partitions it leads, for how many it is the preferred replica, and
    the ZooKeeper controller's imbalance ratio (not led by it / preferred for it)."""
    rows = []
    n = c.topics.partition_count(topic)
    for b in sorted(c.brokers):
        preferred = [p for p in range(n) if c.assignment(topic)[p][0] == b]
        not_led = [p for p in preferred if c.leader(topic, p) != b]
        ratio = f"{len(not_led)}/{len(preferred)}" if preferred else "-"
        rows.append({"broker": b, "leads": sum(c.leader(topic, p) == b for p in range(n)),
                     N_("preferred for"): len(preferred),
                     N_("imbalance (not led/preferred)"): ratio})
    return text_table(rows)


def imbalance_count(c: Cluster) -> int:
    """The last PreferredReplicaImbalanceCount the active controller reported (metrics_frame)."""
    m = c.metrics_frame()
    m = m[m.mbean == PREFERRED_IMBALANCE]
    m = m[m.time_ms == m.time_ms.max()]
    return int(max(m.value)) if len(m) else 0


def rebalance_decision(not_led: int, preferred_for: int, percentage: int = 10) -> dict:
    """Does the periodic check run preferred elections for one broker's partitions?
    ZooKeeper mode: imbalance ratio strictly greater than the percentage; KRaft: any imbalance."""
    if not 0 <= not_led <= preferred_for:
        raise ValueError(f"not_led must be between 0 and preferred_for ({preferred_for}), "
                         f"got {not_led}")
    zk = preferred_for > 0 and not_led / preferred_for > percentage / 100.0
    return {"ZooKeeper (3.7)": zk, "KRaft (4.3)": not_led > 0}


def rebalance_view(not_led: int = 1, preferred_for: int = 10, percentage: int = 10) -> Text:
    """Explorer: the two controllers' decisions for one broker's partitions."""
    not_led = min(not_led, preferred_for)
    d = rebalance_decision(not_led, preferred_for, percentage)
    ratio = not_led / preferred_for if preferred_for else 0.0
    lines = [tr("imbalance = {n}/{of} = {ratio}", n=not_led, of=preferred_for,
                ratio=f"{ratio:.0%}") + "; "
             f"leader.imbalance.per.broker.percentage = {percentage} "
             + tr("(ZooKeeper mode only; Kafka 4.0 removed the key)")]
    for who, yes in d.items():
        lines.append(f"{who:16} {tr('preferred election') if yes else tr('leave it')}")
    return Text("\n".join(lines))


def imbalance_line(c: Cluster, before: int | None = None, topic: str = TOPIC) -> Text:
    """The cluster's Kafka, the preferred-replica imbalance count (``before`` -> now, when
    ``before`` is given) and the leader of ``topic``-0."""
    now, leader = imbalance_count(c), c.leader(topic, 0)
    if before is None:
        return Text(tr("Kafka {version}: {tp} led by {leader}, imbalance count {now}",
                       version=c.kafka_version, tp=f"{topic}-0", leader=leader, now=now))
    return Text(tr("Kafka {version}: imbalance count {before} -> {now}, {tp} led by {leader}",
                   version=c.kafka_version, before=before, now=now, tp=f"{topic}-0",
                   leader=leader))


# -- exercise 1: the two controllers' decision ----------------------------------------------------
def check_rebalance(not_led: int, preferred_for: int, percentage: int, answer) -> CheckResult:
    """Exercise: ``answer = {"3.7": bool, "4.3": bool}``, does each controller rebalance?"""
    if answer is Ellipsis:
        return unanswered('{"3.7": True/False, "4.3": True/False}')
    if not isinstance(answer, dict) or set(answer) != {"3.7", "4.3"}:
        return _result(False, tr("answer with a dict {\"3.7\": True/False, \"4.3\": True/False}"))
    if (m := _form(*(_want_bool(answer[v], f"answer[{v!r}]")
                     for v in ("3.7", "4.3")))) is not None:
        return m
    d = rebalance_decision(not_led, preferred_for, percentage)
    want = {"3.7": d["ZooKeeper (3.7)"], "4.3": d["KRaft (4.3)"]}
    wrong = [v for v in want if bool(answer[v]) != want[v]]
    if "3.7" in wrong:
        return _result(False, tr("look again at 3.7: work out {not_led}/{preferred_for} as a "
                                 "percentage and compare it with {percentage}; the ZooKeeper "
                                 "controller acts only when the ratio is strictly greater.",
                                 not_led=not_led, preferred_for=preferred_for,
                                 percentage=percentage), answer=_rebalance_answer(want))
    if wrong:
        return _result(False, tr("look again at 4.3: the KRaft controller has no percentage "
                                 "(Kafka 4.0 removed the key); which partitions does "
                                 "maybeBalancePartitionLeaders elect?"),
                       answer=_rebalance_answer(want))
    ratio = f"{not_led / preferred_for:.0%}" if preferred_for else "0%"
    return _result(True, tr("ZooKeeper: {not_led}/{preferred_for} = {ratio} against {percentage}% "
                            "(strictly greater acts) -> {v_3_7}; KRaft, no percentage -> {v_4_3}.",
                            not_led=not_led, preferred_for=preferred_for, ratio=ratio,
                            percentage=percentage, v_3_7=want['3.7'], v_4_3=want['4.3']))


def _rebalance_answer(want: dict) -> str:
    return "{" + ", ".join(f'"{v}": {want[v]}' for v in ("3.7", "4.3")) + "}"


# -- exercise 2: read the MBean after a double crash ----------------------------------------------
def double_crash_cluster(kafka_version: str | None = None) -> Cluster:
    """``kafka_version`` (the notebook's: 4.3), 3 brokers, auto.leader.rebalance.enable=false,
    six partitions (every broker preferred for two). Broker 2 crashes, then broker 3; both come
    back and catch up."""
    c = Cluster(3, seed=SEED, kafka_version=notebook_version(kafka_version, "rebalance cluster"),
                config={"auto.leader.rebalance.enable": False})
    c.create_topic(TOPIC, assignment=[[1, 2, 3], [2, 3, 1], [3, 1, 2],
                                      [1, 3, 2], [2, 1, 3], [3, 2, 1]])
    c.run(5000)
    c.crash(2)
    c.run(20000)
    c.crash(3)
    c.run(20000)
    c.start(2)
    c.start(3)
    c.run(30000)
    return c


def check_imbalance_count(answer, *, kafka_version: str | None = None) -> CheckResult:
    """Exercise: the PreferredReplicaImbalanceCount of ``double_crash_cluster()`` at its end."""
    if answer is Ellipsis:
        return unanswered(tr("a number"))
    if (m := _form(_want_int(answer))) is not None:
        return m
    c = double_crash_cluster(kafka_version)
    n = imbalance_count(c)
    if answer != n:
        return _result(False, tr("follow each partition: who leads after broker 2 dies, after "
                                 "broker 3 dies, and does a broker's return move any leader "
                                 "(auto rebalance is off)?"))
    return _result(True, tr("PreferredReplicaImbalanceCount = {n}.\n{leader_counts_c}",
                            n=n, leader_counts_c=leader_counts(c)))


# -- exercise 3: restore the preferred leaders, graded by the checkers -------------------------
def restore_cluster(kafka_version: str | None = None):
    """``kafka_version`` (the notebook's: 4.3), 3 brokers, auto.leader.rebalance.enable=false,
    ``orders`` with 6 partitions on RF 3, an acks=all producer writing 20 records/s for 60 s;
    broker 1 crashes at 5 s and is started again at 25 s. Returns (cluster, producer)."""
    from kafkasim.runtime.workload import RateWorkload

    c = Cluster(3, seed=SEED, kafka_version=notebook_version(kafka_version, "rebalance cluster"),
                config={"auto.leader.rebalance.enable": False})
    c.create_topic(TOPIC, assignment=[[1, 2, 3], [2, 3, 1], [3, 1, 2]] * 2)
    p = c.producer("p", acks="all")
    RateWorkload(c, p, TOPIC, rate=20, duration_ms=60000, partition=0)
    c.run(5000)
    c.crash(1)
    c.run(20000)
    c.start(1)
    return c, p


def check_restore(fix: Callable[[Cluster], None] | None, *, kafka_version: str | None = None
                  ) -> CheckResult:
    """Exercise: ``fix(c)`` must bring every partition back to its preferred leader within 30 s
    of simulated time, with every checker attached and no violation."""
    from kafkasim.observe.checks import attach

    if (m := _missing(fix)) is not None:
        return m
    if not callable(fix):
        return _result(False, tr("pass a function that takes the cluster, e.g. def my_fix(c): "
                                 "..."))
    c, p = restore_cluster(kafka_version)
    suite = attach(c)
    start = c.now
    fix(c)
    if c.now - start > 30000:
        return _result(False, tr("your fix took {c_now_start} ms; do it within 30000 ms (no "
                                 "waiting for the 300 s check: it is switched off here).",
                                 c_now_start=c.now - start))
    c.run(40000)
    n = c.topics.partition_count(TOPIC)
    wrong = [q for q in range(n) if c.leader(TOPIC, q) != c.assignment(TOPIC)[q][0]]
    print(verdict(suite))
    if suite.violations:
        return _result(False, tr("the checkers found a violation (above)."))
    if wrong:
        return _result(False, tr("partitions {wrong} are not led by their preferred replica. "
                                 "Is the preferred replica back in the ISR when you ask?",
                                 wrong=wrong))
    return _result(True, tr("every partition is led by its preferred replica; "
                            "PreferredReplicaImbalanceCount = {imbalance_count_c}.",
                            imbalance_count_c=imbalance_count(c)))


__all__ = [
    "SEED", "TOPIC", "check_imbalance_count", "check_rebalance", "check_restore",
    "double_crash_cluster", "error_line", "imbalance_count", "imbalance_line", "leader_counts",
    "led_by", "rebalance_decision",
    "rebalance_view", "restore_cluster", "show_source", "verdict",
]
