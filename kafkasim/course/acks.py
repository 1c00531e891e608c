"""Notebook 05 (acks and min.insync.replicas): formatting and grading. The notebook builds its
clusters, producers and faults in its own cells; this module reads them (outcomes, which broker
holds a record) and computes the exercises' answers on clusters of its own (the checks are in
``acks_checks``, which replays the learner's own fault sequence where an exercise asks for one).

Concepts C18 and C19. Kafka: ``Partition.appendRecordsToLeader`` (the min ISR pre-check,
``rules.check_min_isr_before_append``), ``Partition.checkEnoughReplicasReachOffset`` and
``DelayedProduce`` (``rules.check_enough_replicas_reach_offset``), ``Partition.effectiveMinIsr``
(``rules.effective_min_isr``, capped at the replica count since 3.7, KAFKA-15583).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from kafkasim.course.common import Text, notebook_version, settle, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

__all__ = [
    "OVERRIDE_PLACES", "SEED", "TOPIC", "acks_all_ok_at", "alone_line", "configs_shown",
    "exercise_cluster", "holders", "override_shown_on",
    "max_broker_failures", "min_isr_choices", "outcome", "outcome_view",
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


def acks_all_ok_at(rows: list[dict]) -> str:
    """The ladder's ISR sizes at which the acks=all write was acknowledged, worded as the
    notebook's prediction choices ("3 only", "3 and 2", "3, 2 and 1"; "none")."""
    sizes = [str(len(r["ISR"])) for r in rows if r["acks=all"] == "ok"]
    if not sizes:
        return "none"
    return sizes[0] + " only" if len(sizes) == 1 else ", ".join(sizes[:-1]) + " and " + sizes[-1]


def configs_shown(describe: str) -> str:
    """What the topic line of ``kafka-topics --describe`` lists after ``Configs:`` (only the
    topic's overrides; "nothing" when there are none)."""
    topic_line = describe.splitlines()[0]
    shown = topic_line.partition("Configs:")[2].strip()
    return shown or "nothing"


#: notebook 05 section 3's choices: where an override shows in ``kafka-topics --describe``
OVERRIDE_PLACES = ("the topic line's Configs:", "each partition line",
                   "nowhere: only kafka-configs --describe")


def override_shown_on(describe: str, setting: str) -> str:
    """Which ``OVERRIDE_PLACES`` choice ``setting`` (``"min.insync.replicas=2"``) shows on."""
    topic_line, *partition_lines = describe.splitlines()
    if setting in topic_line.partition("Configs:")[2]:
        return OVERRIDE_PLACES[0]
    return OVERRIDE_PLACES[1] if any(setting in line for line in partition_lines) \
        else OVERRIDE_PLACES[2]


def max_broker_failures(replication_factor: int, min_isr: int) -> int:
    """How many replicas can be out of the ISR while acks=all writes still succeed."""
    return max(replication_factor - min_isr, -1)


def min_isr_choices(replication_factor: int = 3) -> Text:
    """For each min.insync.replicas: how many replicas may drop out of the ISR before acks=all
    writes stop, and on how many brokers every acknowledged acks=all write is."""
    rows = []
    for m in range(1, replication_factor + 1):
        rows.append({"min.insync.replicas": m,
                     N_("ISR members that may drop out, writes continue"): max_broker_failures(
                         replication_factor, m),
                     N_("brokers holding every acked acks=all write (at least)"): m})
    return text_table(rows, title=tr("replication factor {rf}, acks=all", rf=replication_factor))


# -- clusters the graders and the explorer build (never called from a notebook cell) --------------
def _cluster(*, min_isr: int | None = 2, version: str | None = None, seed: int = SEED,
             lag_ms: int = 10000) -> Cluster:
    c = Cluster(brokers=3, seed=seed, kafka_version=notebook_version(version, "acks cluster"),
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
            "result": outcome(r), N_("appended on the leader"): appended,
            N_("readable by consumers"): appended and log.high_watermark == log.log_end_offset,
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
    return {"Kafka": version, "ISR": c.isr(TOPIC), N_("acks=1 write"): outcome(r),
            "leader LEO": log.log_end_offset, "HW": log.high_watermark, N_("consumer reads"): got}


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


# -- exercise 2: a fault sequence graded by the checkers ------------------------------------------
def exercise_cluster(acks: str, min_isr: int, kafka_version: str | None = None):
    """The exercise's cluster on the notebook's Kafka (``KAFKA_VERSION``, 4.3): 3 brokers
    (replica.lag.time.max.ms 10 s), topic ``orders`` on replicas [1, 2, 3] with ``min_isr``; a
    producer with ``acks`` writing 20 records/s for 60 s. Returns (cluster, producer)."""
    version = notebook_version(kafka_version, "exercise_cluster")
    c = Cluster(brokers=3, seed=SEED, kafka_version=version,
                config={"replica.lag.time.max.ms": 10000})
    c.create_topic(TOPIC, 1, 3, assignment=[[1, 2, 3]], config={"min.insync.replicas": min_isr})
    p = c.producer("p", acks=acks, retries=0, **{"request.timeout.ms": 4000,
                                                  "delivery.timeout.ms": 5000})
    RateWorkload(c, p, TOPIC, rate=20, duration_ms=60000, partition=0)
    return c, p


def run_exercise(faults: Callable[[Cluster], None], acks: str, min_isr: int,
                 kafka_version: str | None = None):
    """Build the exercise cluster, attach every checker, run ``faults(c)`` then 20 s more."""
    from kafkasim.observe.checks import attach

    c, p = exercise_cluster(acks, min_isr, kafka_version)
    suite = attach(c)
    faults(c)
    c.run(20000)
    return c, p, suite


# -- exercise 3: reading a describe line ----------------------------------------------------------
DESCRIBE_LINE = ("Topic: payments\tPartition: 0\tLeader: 2\tReplicas: 2,3,1\tIsr: 2\tElr: 3\t"
                 "LastKnownElr: ")


def alone_line(c: Cluster, read: list, topic: str = TOPIC) -> Text:
    """A leader left alone in its ISR: the Kafka version, the ISR, the leader's (LEO, HW) and
    what a consumer reads from it."""
    leader = c.leader(topic)
    log = c.log(leader, topic, 0)
    return Text(tr("Kafka {version}: ISR {isr}, leader (LEO, HW) = {leo_hw}, a consumer reads "
                   "{read}", version=c.kafka_version, isr=c.isr(topic),
                   leo_hw=(log.log_end_offset, log.high_watermark), read=read))
