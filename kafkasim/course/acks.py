"""Notebook 05 (acks and min.insync.replicas): what each acks setting waits for, what it costs
and what it protects; NOT_ENOUGH_REPLICAS as the ISR shrinks; topic-level overrides; why min ISR
3 with RF 3 is fragile; and the HW freeze under min ISR (Kafka 3.7+).

Concepts C18 and C19.
"""

from __future__ import annotations

from kafkasim.cluster import Cluster
from kafkasim.course.common import Text, settle, text_table

SEED = 5
TOPIC = "orders"


def _cluster(*, min_isr: int | None = 2, version: str = "3.7", seed: int = SEED,
             lag_ms: int = 10000, follower_latency_ms: int = 0) -> Cluster:
    c = Cluster(brokers=3, seed=seed, kafka_version=version,
                config={"replica.lag.time.max.ms": lag_ms})
    cfg = {} if min_isr is None else {"min.insync.replicas": min_isr}
    c.create_topic(TOPIC, 1, 3, assignment=[[1, 2, 3]], config=cfg)
    for b in (2, 3):
        if follower_latency_ms:
            c.slow(b, network_ms=follower_latency_ms)
    return c


def _acks_name(acks) -> str:
    return "all" if str(acks) in ("all", "-1") else str(acks)


# -- latency versus durability ------------------------------------------------------------------
def acks_experiment(acks, seed: int = SEED, follower_latency_ms: int = 20) -> dict:
    """Send one record with ``acks`` (followers are ``follower_latency_ms`` away), crash the
    leader the moment the producer considers the write done, and see whether the record
    survives the election of a new leader."""
    c = _cluster(min_isr=1, seed=seed, follower_latency_ms=follower_latency_ms)
    prod = c.producer(f"acks-{_acks_name(acks)}", acks=acks, linger_ms=0, retries=0)
    warm = prod.send(TOPIC, "warm-up", partition=0)       # metadata and connections first
    prod.flush()
    settle(c)
    r = prod.send(TOPIC, "precious", partition=0)
    c.run_until(lambda cl: r.status != "pending", 10000)
    holders = [b for b in sorted(c.brokers)
               if any(v == "precious" for _o, _e, v in c.log_records(b, TOPIC))]
    c.crash(1)
    c.run_until(lambda cl: cl.leader(TOPIC) not in (1, -1), 60000)
    c.run(2000)
    new_leader = c.leader(TOPIC)
    survived = any(v == "precious" for _o, _e, v in c.log_records(new_leader, TOPIC))
    return {"acks": _acks_name(acks), "producer told 'done' after (ms)": r.latency_ms,
            "copies when 'done'": holders, "new leader": new_leader,
            "record survived the crash": survived, "warm-up acked": warm.acked}


def acks_table(seed: int = SEED) -> Text:
    rows = []
    for acks in (0, 1, "all"):
        row = acks_experiment(acks, seed)
        row.pop("warm-up acked")
        rows.append(row)
    return text_table(rows)


# -- the min ISR ladder --------------------------------------------------------------------------
def min_isr_ladder(min_isr: int = 2, version: str = "3.7", seed: int = SEED) -> Text:
    """RF 3: take the followers out of the ISR one at a time and try an acks=all and an acks=1
    write at each step."""
    c = _cluster(min_isr=min_isr, version=version, seed=seed)
    p_all = c.producer("acks-all", acks="all", retries=0, linger_ms=0)
    p_one = c.producer("acks-1", acks="1", retries=0, linger_ms=0)
    rows = []
    for step, cut_broker in enumerate((None, 3, 2)):
        if cut_broker is not None:
            c.cut(1, cut_broker)
            p_one.send(TOPIC, f"nudge-{step}", partition=0)   # something to fall behind on
            p_one.flush()
            c.run_until(lambda cl, b=cut_broker: b not in cl.isr(TOPIC), 30000)
            c.run(100)
        isr = c.isr(TOPIC)
        ra = p_all.send(TOPIC, f"all-{len(isr)}", partition=0)
        c.run_until(lambda cl, r=ra: r.status != "pending", 35000)
        r1 = p_one.send(TOPIC, f"one-{len(isr)}", partition=0)
        c.run_until(lambda cl, r=r1: r.status != "pending", 5000)
        c.run(200)
        log = c.log(1, TOPIC)
        rows.append({"ISR": isr, "acks=all": "ok" if ra.acked else ra.error,
                     "acks=1": "ok" if r1.acked else r1.error,
                     "leader LEO": log.log_end_offset, "HW": log.high_watermark})
    return text_table(rows, title=f"RF 3, min.insync.replicas={min_isr}, Kafka {version}")


def max_broker_failures(replication_factor: int, min_isr: int) -> int:
    """How many replicas can be out of the ISR while acks=all writes still succeed."""
    return max(replication_factor - min_isr, -1)


# -- topic-level override ------------------------------------------------------------------------
def override_demo(seed: int = SEED) -> Text:
    """A topic created without min.insync.replicas, then altered like kafka-configs does."""
    c = _cluster(min_isr=None, seed=seed)
    before = c.describe(TOPIC)
    default = c.topic_configs[TOPIC]["min.insync.replicas"]
    c.alter_config("topics", TOPIC, {"min.insync.replicas": 2})
    after = c.describe(TOPIC)
    cmd = ("kafka-configs --bootstrap-server localhost:9092 --alter --entity-type topics "
           f"--entity-name {TOPIC} --add-config min.insync.replicas=2")
    return Text(f"before (broker default min.insync.replicas={default}):\n{before}\n$ {cmd}\n"
                f"\nafter (min.insync.replicas="
                f"{c.topic_configs[TOPIC]['min.insync.replicas']}):\n{after}")


# -- the HW freeze under min ISR (3.7) -----------------------------------------------------------
def hw_freeze(version: str, seed: int = SEED) -> dict:
    """min ISR 2 and only the leader left in the ISR: an acks=1 write is appended and acked.
    Can a consumer read it?"""
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
    return {"Kafka": version, "ISR": c.isr(TOPIC), "acks=1 write": "ok" if r.acked else r.error,
            "leader LEO": log.log_end_offset, "HW": log.high_watermark,
            "consumer reads": got}


def hw_freeze_table(seed: int = SEED) -> Text:
    return text_table([hw_freeze(v, seed) for v in ("3.6", "3.7")])


# -- the explorer's plain function ---------------------------------------------------------------
def write_outcome(acks="all", min_isr: int = 2, isr_size: int = 3, seed: int = SEED) -> dict:
    """RF 3 with ``min_isr``; shrink the ISR to ``isr_size`` members; send one record."""
    return _write(acks, min_isr, isr_size, seed)[0]


def _write(acks="all", min_isr: int = 2, isr_size: int = 3, seed: int = SEED
           ) -> tuple[dict, Cluster]:
    if isr_size not in (1, 2, 3):
        raise ValueError(f"isr_size must be 1, 2 or 3 with RF 3, got {isr_size}")
    c = _cluster(min_isr=min_isr, seed=seed)
    prod = c.producer("p", acks=acks, retries=0, linger_ms=0)
    nudge = c.producer("nudge", acks="1", retries=0, linger_ms=0)
    for b in (3, 2)[: 3 - isr_size]:
        c.cut(1, b)
        nudge.send(TOPIC, f"nudge-{b}", partition=0)
        nudge.flush()
        c.run_until(lambda cl, b=b: b not in cl.isr(TOPIC), 30000)
    c.run(100)
    r = prod.send(TOPIC, "x", partition=0)
    c.run_until(lambda cl: r.status != "pending", 35000)
    c.run(300)
    log = c.log(1, TOPIC)
    appended = any(v == "x" for _o, _e, v in c.log_records(1, TOPIC))
    return {"acks": _acks_name(acks), "min.insync.replicas": min_isr, "ISR": c.isr(TOPIC),
            "result": "ok" if r.acked else r.error, "appended on the leader": appended,
            "readable by consumers": appended and log.high_watermark == log.log_end_offset,
            "latency (ms)": r.latency_ms}, c


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


def outcome_view(acks="all", min_isr: int = 2, isr_size: int = 3) -> list:
    """The explorer's view: the outcome row and the leader's and followers' logs after it."""
    from kafkasim.viz import replica_logs

    res, c = _write(acks, min_isr, isr_size)
    return [text_table([res]), replica_logs(c, TOPIC)]


def scenario_expectations(run) -> Text:
    """PASS/FAIL of every ``expect`` step of a scenario run, with its label."""
    rows = [{"step": e["step"], "t(ms)": e["time_ms"], "result": "PASS" if e["ok"] else "FAIL",
             "expectation": e["label"]} for e in run.expectations]
    return text_table(rows)
