"""Notebook 01 (replication basics): a 3 x 3 topic, who leads what, who fetches from whom, LEO.

Concepts C01 (leader and followers; clients talk to the leader), C02 (followers fetch; one
fetcher thread per source broker) and C25 (the log end offset and followers chasing it).
"""

from __future__ import annotations

from collections import Counter

from kafkasim.cluster import Cluster, ClusterError
from kafkasim.course.common import COURSE_VERSION, Stepper, Text, ids, settle, text_table

SEED = 1
TOPIC = "topic-p3-r3"


def create_command(topic: str = TOPIC, partitions: int = 3, replication_factor: int = 3) -> Text:
    """The kafka-topics command line the simulator's ``create_topic`` stands for."""
    return Text(f"kafka-topics --bootstrap-server localhost:9092 --create --topic {topic} "
                f"--partitions {partitions} --replication-factor {replication_factor}")


def describe_command(topic: str = TOPIC) -> Text:
    return Text(f"kafka-topics --bootstrap-server localhost:9092 --describe --topic {topic}")


def p3r3_cluster(seed: int = SEED, brokers: int = 3, partitions: int = 3,
                 replication_factor: int = 3, topic: str = TOPIC) -> Cluster:
    """Three brokers and the notes' topic: 3 partitions, replication factor 3."""
    c = Cluster(brokers=brokers, seed=seed, kafka_version=COURSE_VERSION)
    c.create_topic(topic, partitions=partitions, replication_factor=replication_factor)
    return c


def leaders_table(c: Cluster, topic: str = TOPIC) -> Text:
    """Per partition: the leader, the followers, and the brokers that hold a copy."""
    rows = []
    for p, reps in c.assignment(topic).items():
        st = c.partition_state(topic, p)
        rows.append({"partition": p, "leader": st["leader"],
                     "followers": [b for b in reps if b != st["leader"]],
                     "replicas (preferred first)": ids(reps), "ISR": ids(st["isr"])})
    return text_table(rows)


def broker_roles(c: Cluster, topic: str = TOPIC) -> Text:
    """Per broker: the partitions it leads and the ones it follows."""
    rows = []
    for b in sorted(c.brokers):
        leads, follows = [], []
        for p, reps in c.assignment(topic).items():
            if b not in reps:
                continue
            (leads if c.leader(topic, p) == b else follows).append(p)
        rows.append({"broker": b, "leads partitions": leads, "follows partitions": follows})
    return text_table(rows)


def fetcher_threads(c: Cluster) -> Text:
    """Every broker's ReplicaFetcherThreads: the leader each one fetches from and its partitions."""
    rows = []
    for b in sorted(c.brokers):
        for (_leader, _fid), th in sorted(c.brokers[b].fetchers.items()):
            rows.append({"broker": b, "thread": th.name, "fetches from": th.leader_id,
                         "partitions in each Fetch": ", ".join(f"{t}-{p}"
                                                               for t, p in sorted(th.partitions))})
    return text_table(rows)


def message_counts(c: Cluster, since_ms: int = 0, until_ms: int | None = None,
                   types: tuple[str, ...] = ("ProduceRequest", "FetchRequest")) -> Text:
    """How many requests of each type went from which node to which, in [since, until]."""
    until = c.now if until_ms is None else until_ms
    counts: Counter = Counter()
    for t, kind, node, _tp, _p, detail in c.trace.rows:
        if kind != "send" or not since_ms <= t <= until:
            continue
        mtype, dst = detail[0], detail[1]
        if mtype in types:
            counts[(mtype, str(node), str(dst))] += 1
    rows = [{"request": m, "from": s, "to": d, "count": n}
            for (m, s, d), n in sorted(counts.items())]
    return text_table(rows) if rows else Text("(no such requests)")


def write_to_every_partition(c: Cluster, per_partition: int = 2, topic: str = TOPIC) -> Text:
    """Send records to every partition with acks=all and report where each one landed."""
    prod = c.producer("writer", acks="all")
    results = []
    for p in sorted(c.assignment(topic)):
        for i in range(per_partition):
            results.append(prod.send(topic, f"p{p}-m{i}", partition=p))
    prod.flush()
    settle(c)
    rows = [{"value": r.value, "partition": r.partition, "offset": r.offset,
             "leader that took the write": c.leader(topic, r.partition)} for r in results]
    return text_table(rows)


def consume_partition(c: Cluster, partition: int, topic: str = TOPIC) -> Text:
    """One consumer reads a partition from the beginning; shows which broker served it."""
    cons = c.consumer(group="readers", auto_offset_reset="earliest")
    cons.assign(topic, [partition])
    start = c.now
    got = cons.poll()
    served_by = sorted({detail[1] for t, kind, node, _tp, _p, detail in c.trace.rows
                        if kind == "send" and node == cons.client_id and t >= start
                        and detail[0] == "FetchRequest"})
    vals = ", ".join(f"{r.offset}:{r.value}" for r in got)
    return Text(f"consumer read partition {partition}: {vals}\n"
                f"its Fetch requests went to broker(s) {served_by}; the leader is "
                f"{c.leader(topic, partition)}")


def leo_chase(c: Cluster, records: int = 3, partition: int = 0, topic: str = TOPIC,
              acks: str = "1") -> Stepper:
    """Send ``records`` records to one partition and step until every follower has them,
    keeping a row per Produce/Fetch message (the LEO columns show followers catching up)."""
    prod = c.producer(f"chase-{c.now}", acks=acks, linger_ms=0)
    s = Stepper(c, topic, partition)
    for i in range(records):
        prod.send(topic, f"x{i}", partition=partition)
    s.note(f"producer sends {records} record(s)")
    leader = c.leader(topic, partition)
    target = c.log(leader, topic, partition).log_end_offset + records
    part = c.brokers[leader].replica_manager.partitions[(topic, partition)]
    # until every follower's next Fetch has told the leader its new LEO
    s.run_until(lambda cl: all(st.log_end_offset >= target for st in part.remote.values()), 5000)
    return s


def placement(brokers: int = 3, partitions: int = 3, replication_factor: int = 3,
              seed: int = SEED) -> Text:
    """Create a topic on a fresh cluster and return its describe text plus per-broker roles.

    The plain function behind the placement explorer."""
    c = Cluster(brokers=brokers, seed=seed, kafka_version=COURSE_VERSION)
    try:
        c.create_topic("demo", partitions=partitions, replication_factor=replication_factor)
    except ClusterError as exc:
        return Text(f"{exc}\n(every copy of a partition must sit on a different broker)")
    roles = broker_roles(c, "demo")
    return Text(c.describe("demo") + "\n" + roles)


def placement_view(brokers: int = 3, partitions: int = 3, replication_factor: int = 3,
                   seed: int = SEED) -> list:
    """The placement explorer's view: the describe text and the cluster map (when the topic
    could be created)."""
    from kafkasim.viz import cluster_map

    text = placement(brokers, partitions, replication_factor, seed)
    if replication_factor > brokers:
        return [text]
    c = Cluster(brokers=brokers, seed=seed, kafka_version=COURSE_VERSION)
    c.create_topic("demo", partitions=partitions, replication_factor=replication_factor)
    return [text, cluster_map(c)]
