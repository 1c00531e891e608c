"""Notebook 05 (acks and min.insync.replicas): formatting and grading. The notebook builds its
clusters, producers and faults in its own cells; this module reads them (outcomes, which broker
holds a record, the checkers' verdict) and grades the exercises, replaying the learner's own
fault sequence where an exercise asks for one.

Concepts C18 and C19. Kafka: ``Partition.appendRecordsToLeader`` (the min ISR pre-check,
``rules.check_min_isr_before_append``), ``Partition.checkEnoughReplicasReachOffset`` and
``DelayedProduce`` (``rules.check_enough_replicas_reach_offset``), ``Partition.effectiveMinIsr``
(``rules.effective_min_isr``, capped at the replica count since 3.7, KAFKA-15583).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from kafkasim.cluster import Cluster
from kafkasim.course.checks import CheckResult, _missing, _result
from kafkasim.course.common import Text, settle, text_table
from kafkasim.course.elections import acked_losses, show_source, verdict
from kafkasim.scenario import lost_acked
from kafkasim.workload import RateWorkload

__all__ = [
    "SEED", "TOPIC", "acked_losses", "check_acks_saves", "check_after_append",
    "check_describe_reading", "exercise_cluster", "holders", "max_broker_failures",
    "min_isr_choices", "outcome", "outcome_view", "show_source", "verdict",
]

SEED = 5
TOPIC = "orders"
ACKS = ("0", "1", "all")


# -- reading a cluster (formatting only) ----------------------------------------------------------
def outcome(result) -> str:
    """A ProduceResult as the producer's callback sees it: "ok", an error name, or "pending"."""
    if result.status == "pending":
        return "pending"
    return "ok" if result.acked else result.error


def holders(c: Cluster, value: str, topic: str = TOPIC, partition: int = 0) -> list[int]:
    """The brokers whose log of ``topic-partition`` holds a record with this value."""
    return [b for b in sorted(c.brokers)
            if any(v == value for _o, _e, v in c.log_records(b, topic, partition))]


def max_broker_failures(replication_factor: int, min_isr: int) -> int:
    """How many replicas can be out of the ISR while acks=all writes still succeed."""
    return max(replication_factor - min_isr, -1)


def min_isr_choices(replication_factor: int = 3) -> Text:
    """For each min.insync.replicas: how many replicas may drop out of the ISR before acks=all
    writes stop, and on how many brokers every acknowledged acks=all write is."""
    rows = []
    for m in range(1, replication_factor + 1):
        rows.append({"min.insync.replicas": m,
                     "ISR members that may drop out, writes continue": max_broker_failures(
                         replication_factor, m),
                     "brokers holding every acked acks=all write (at least)": m})
    return text_table(rows, title=f"replication factor {replication_factor}, acks=all")


# -- clusters the graders and the explorer build (never called from a notebook cell) --------------
def _cluster(*, min_isr: int | None = 2, version: str | None = None, seed: int = SEED,
             lag_ms: int = 10000) -> Cluster:
    c = Cluster(brokers=3, seed=seed, kafka_version=version,
                config={"replica.lag.time.max.ms": lag_ms})
    cfg = {} if min_isr is None else {"min.insync.replicas": min_isr}
    c.create_topic(TOPIC, 1, 3, assignment=[[1, 2, 3]], config=cfg)
    return c


def _acks_name(acks) -> str:
    return "all" if str(acks) in ("all", "-1") else str(acks)


def validate_write(acks, min_isr: int, isr_size: int, replication_factor: int = 3) -> None:
    """Refuse impossible inputs: acks is 0, 1 or all (-1); the ISR has 1..RF members (the
    leader is always in it); min.insync.replicas is at least 1."""
    if _acks_name(acks) not in ACKS:
        raise ValueError(f"acks={acks!r}: the producer config acks takes 0, 1 or all (-1)")
    if not 1 <= isr_size <= replication_factor:
        raise ValueError(f"isr_size={isr_size}: with replication factor {replication_factor} "
                         f"the ISR has 1..{replication_factor} members (the leader is always "
                         "one of them)")
    if min_isr < 1:
        raise ValueError(f"min.insync.replicas={min_isr}: Kafka's ConfigDef requires >= 1")


def _write(acks="all", min_isr: int = 2, isr_size: int = 3, seed: int = SEED,
           version: str | None = "3.7") -> tuple[dict, Cluster]:
    """RF 3 with ``min_isr``; shrink the ISR to ``isr_size`` members; send one record."""
    validate_write(acks, min_isr, isr_size)
    c = _cluster(min_isr=min_isr, seed=seed, version=version)
    prod = c.producer("p", acks=_acks_name(acks), retries=0, linger_ms=0)
    nudge = c.producer("nudge", acks="1", retries=0, linger_ms=0)
    for b in (3, 2)[: 3 - isr_size]:
        c.cut(1, b)
        nudge.send(TOPIC, f"nudge-{b}", partition=0)
        nudge.flush()
        c.run_until(lambda cl, b=b: b not in cl.isr(TOPIC), 30000)
    c.run(500)
    r = prod.send(TOPIC, "x", partition=0)
    c.run_until(lambda cl: r.status != "pending", 35000)
    c.run(300)
    log = c.log(1, TOPIC)
    appended = 1 in holders(c, "x")
    return {"acks": _acks_name(acks), "min.insync.replicas": min_isr, "ISR": c.isr(TOPIC),
            "result": outcome(r), "appended on the leader": appended,
            "readable by consumers": appended and log.high_watermark == log.log_end_offset,
            "latency (ms)": r.latency_ms}, c


def write_outcome(acks="all", min_isr: int = 2, isr_size: int = 3, seed: int = SEED) -> dict:
    """``checks.check_write_outcome``'s answer: one write with RF 3, ``min_isr`` and an ISR of
    ``isr_size``."""
    return _write(acks, min_isr, isr_size, seed)[0]


def outcome_view(acks="all", min_isr: int = 2, isr_size: int = 3) -> list:
    """The explorer's view (Kafka 4.3): the outcome row and the replicas' logs after it."""
    from kafkasim.viz import replica_logs

    res, c = _write(acks, min_isr, isr_size, version=None)
    return [Text(text_table([res]) + "\n\n" + c.describe(TOPIC).strip("\n")),
            replica_logs(c, TOPIC)]


def hw_freeze(version: str, seed: int = SEED) -> dict:
    """``checks.check_hw_freeze``'s answer: min ISR 2 and only the leader left in the ISR: an
    acks=1 write is appended and acked. Can a consumer read it?"""
    c = _cluster(min_isr=2, version=version, seed=seed)
    p_one = c.producer("acks-1", acks="1", retries=0, linger_ms=0)
    p_one.send(TOPIC, "before", partition=0)
    p_one.flush()
    settle(c)
    c.partition_network([1], [2, 3])
    p_one.send(TOPIC, "lagging", partition=0)
    p_one.flush()
    c.run_until(lambda cl: cl.isr(TOPIC) == [1], 30000)
    c.run(100)
    r = p_one.send(TOPIC, "while-alone", partition=0)
    p_one.flush()
    c.run(500)
    cons = c.consumer(group="readers", name="reader", auto_offset_reset="earliest")
    cons.assign(TOPIC, [0])
    got = [x.value for x in cons.poll()]
    log = c.log(1, TOPIC)
    return {"Kafka": version, "ISR": c.isr(TOPIC), "acks=1 write": outcome(r),
            "leader LEO": log.log_end_offset, "HW": log.high_watermark, "consumer reads": got}


# -- exercise 1: a write the ISR drops below min ISR under ----------------------------------------
@lru_cache(maxsize=4)
def after_append(version: str | None) -> str:
    """RF 3, min ISR 2, broker 3 already out of the ISR ([1, 2]); an acks=all write is appended,
    and broker 2 is cut off before it fetches the write. What does the producer get?"""
    c = _cluster(min_isr=2, version=version)
    nudge = c.producer("nudge", acks="1", retries=0, linger_ms=0)
    c.cut(1, 3)
    nudge.send(TOPIC, "nudge", partition=0)
    nudge.flush()
    c.run_until(lambda cl: 3 not in cl.isr(TOPIC), 30000)
    c.run(500)
    p = c.producer("p", acks="all", retries=0, linger_ms=0)
    c.cut(1, 2)
    r = p.send(TOPIC, "x", partition=0)
    c.run_until(lambda cl: r.status != "pending", 120000)
    return outcome(r)


def check_after_append(today=None, kafka_3_6=None) -> CheckResult:
    """Exercise 1: the producer's answer on today's Kafka and on 3.6."""
    if (m := _missing(today, kafka_3_6)) is not None:
        return m
    right = {"today": after_append(None), "3.6": after_append("3.6")}
    got = {"today": str(today).strip().upper(), "3.6": str(kafka_3_6).strip().upper()}
    if got["3.6"] != right["3.6"]:
        return _result(False, "Kafka 3.6: the leader shrinks the ISR to [1] after "
                              "replica.lag.time.max.ms; then the HW (the min LEO of the ISR) "
                              "passes the record. Which branch of "
                              "check_enough_replicas_reach_offset runs then?")
    if got["today"] != right["today"]:
        return _result(False, "today: once the ISR is [1] it is below min.insync.replicas. What "
                              "does the HW do then (section 6), and so does "
                              "check_enough_replicas_reach_offset ever say 'done'? What ends the "
                              "wait instead?")
    return _result(True, f"3.6: {right['3.6']} (the HW passed the record with an ISR of one; the "
                         f"record stays in the log). Today: {right['today']} (the HW is frozen "
                         "below min ISR, the wait ends at request.timeout.ms; the record stays in "
                         "the log and may still be committed later).")


# -- exercise 2: a fault sequence graded by the checkers ------------------------------------------
def exercise_cluster(acks: str, min_isr: int):
    """The exercise's cluster (Kafka 4.3): 3 brokers (replica.lag.time.max.ms 10 s), topic
    ``orders`` on replicas [1, 2, 3] with ``min_isr``; a producer with ``acks`` writing 20
    records/s for 60 s. Returns (cluster, producer)."""
    c = Cluster(brokers=3, seed=SEED, config={"replica.lag.time.max.ms": 10000})
    c.create_topic(TOPIC, 1, 3, assignment=[[1, 2, 3]], config={"min.insync.replicas": min_isr})
    p = c.producer("p", acks=acks, retries=0, **{"request.timeout.ms": 4000,
                                                  "delivery.timeout.ms": 5000})
    RateWorkload(c, p, TOPIC, rate=20, duration_ms=60000, partition=0)
    return c, p


def run_exercise(faults: Callable[[Cluster], None], acks: str, min_isr: int):
    """Build the exercise cluster, attach every checker, run ``faults(c)`` then 20 s more."""
    from kafkasim.check import attach

    c, p = exercise_cluster(acks, min_isr)
    suite = attach(c)
    faults(c)
    c.run(20000)
    return c, p, suite


def check_acks_saves(faults: Callable[[Cluster], None] | None) -> CheckResult:
    """Exercise 2: ``faults(c)`` must lose acknowledged records with acks=1 and min ISR 1, and
    lose none with acks=all and min ISR 2, as the NoAckedLoss checker judges."""
    if (m := _missing(faults)) is not None:
        return m
    if not callable(faults):
        return _result(False, "pass a function that takes the cluster, e.g. def my_faults(c): ...")
    lost = {}
    for acks, min_isr in (("1", 1), ("all", 2)):
        c, p, suite = run_exercise(faults, acks, min_isr)
        v, a = acked_losses(suite)
        lost[acks] = (v + a, len(lost_acked(c, [p])), len(p.acked()))
        print(f"--- acks={acks}, min.insync.replicas={min_isr}: {len(p.acked())} acked, "
              f"{len(p.failed())} refused or timed out")
        print(verdict(suite))
    if lost["1"][0] == 0:
        return _result(False, "with acks=1 the checker found no acknowledged record lost: the "
                              "leader must acknowledge records its followers do not have yet, "
                              "then stop being leader for good.")
    if lost["all"][0] or lost["all"][1]:
        return _result(False, "acks=all with min.insync.replicas=2 lost acknowledged records "
                              "too: did your faults keep a replica that had them from being "
                              "elected?")
    if lost["all"][2] == 0:
        return _result(False, "acks=all acknowledged nothing at all: a setting that refuses "
                              "every write saves nothing worth saving. Let the writes succeed "
                              "before the fault.")
    return _result(True, f"acks=1 lost {lost['1'][0]} acknowledged record(s); acks=all with "
                         "min ISR 2 lost none: every acknowledged write was on two brokers.")


# -- exercise 3: reading a describe line ----------------------------------------------------------
DESCRIBE_LINE = ("Topic: payments\tPartition: 0\tLeader: 2\tReplicas: 2,3,1\tIsr: 2\tElr: 3\t"
                 "LastKnownElr: ")


def check_describe_reading(rejoin=None, clean_candidates=None) -> CheckResult:
    """Exercise 3: min.insync.replicas=2, the describe line above. How many replicas must rejoin
    the ISR before acks=all writes succeed again, and which brokers may the controller elect
    cleanly if broker 2 dies now?"""
    if (m := _missing(rejoin, clean_candidates)) is not None:
        return m
    if rejoin != 1:
        return _result(False, "acks=all needs an ISR of at least min.insync.replicas members; "
                              "the ISR is [2].")
    try:
        got = sorted(int(x) for x in clean_candidates)
    except (TypeError, ValueError):
        return _result(False, "give a list of broker ids, e.g. [1] or [].")
    if got != [3]:
        return _result(False, "with the ISR empty, the KRaft ladder takes an acceptable ELR "
                              "member; broker 1 left the ISR while it was still at min ISR "
                              "(records were committed without it).")
    return _result(True, "one more ISR member (ISR [2] < min ISR 2); broker 3, from the ELR: it "
                         "left when the ISR fell below min ISR, after which the HW froze, so it "
                         "holds every committed record.")
