"""Notebook 01 (replication basics): a 3 x 3 topic, who leads what, who fetches from whom, LEO.

Concepts C01 (leader and followers; clients talk to the leader), C02 (followers fetch; one
fetcher thread per source broker) and C25 (the log end offset and followers chasing it).
"""

from __future__ import annotations

from collections import Counter

from kafkasim.course.common import Name, Text, ids, notebook_version, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.observe.snapshots import restore, snapshot
from kafkasim.runtime.cluster import Cluster, ClusterError

SEED = 1
TOPIC = "topic-p3-r3"


def create_command(topic: str = TOPIC, partitions: int = 3, replication_factor: int = 3) -> Text:
    """The kafka-topics command line the simulator's ``create_topic`` stands for."""
    return Text(f"kafka-topics --bootstrap-server localhost:9092 --create --topic {topic} "
                f"--partitions {partitions} --replication-factor {replication_factor}")


def describe_command(topic: str = TOPIC) -> Text:
    return Text(f"kafka-topics --bootstrap-server localhost:9092 --describe --topic {topic}")


def p3r3_cluster(seed: int = SEED, brokers: int = 3, partitions: int = 3,
                 replication_factor: int = 3, topic: str = TOPIC, *,
                 kafka_version: str | None = None) -> Cluster:
    """Three brokers and the notes' topic: 3 partitions, replication factor 3, on
    ``kafka_version`` (the notebook's KAFKA_VERSION unless named)."""
    version = notebook_version(kafka_version, "p3r3_cluster")
    c = Cluster(brokers=brokers, seed=seed, kafka_version=version)
    c.create_topic(topic, partitions=partitions, replication_factor=replication_factor)
    return c


def leaders_table(c: Cluster, topic: str = TOPIC) -> Text:
    """Per partition: the leader, the followers, and the brokers that hold a copy."""
    rows = []
    for p, reps in c.assignment(topic).items():
        st = c.inspect.partition_state(topic, p)
        rows.append({"partition": p, "leader": st["leader"],
                     "followers": [b for b in reps if b != st["leader"]],
                     N_("replicas (preferred first)"): ids(reps), "ISR": ids(st["isr"])})
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
        rows.append({"broker": b, N_("leads partitions"): leads, N_("follows partitions"): follows})
    return text_table(rows)


def fetcher_threads(c: Cluster) -> Text:
    """Every broker's ReplicaFetcherThreads: the leader each one fetches from and its partitions."""
    rows = []
    for b in sorted(c.brokers):
        for (_leader, _fid), th in sorted(c.brokers[b].fetchers.items()):
            rows.append({"broker": b, "thread": th.name, N_("fetches from"): th.leader_id,
                         N_("partitions in each Fetch"): ", ".join(f"{t}-{p}"
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
    rows = [{"request": m, "from": Name(s), "to": Name(d), "count": n}
            for (m, s, d), n in sorted(counts.items())]
    return text_table(rows) if rows else Text(tr("(no such requests)"))


def landed_table(c: Cluster, results, topic: str = TOPIC) -> Text:
    """Where each of a producer's records landed: partition, offset and the leader then."""
    rows = [{"value": r.value, "partition": r.partition, "offset": r.offset,
             N_("leader that took the write"): c.leader(topic, r.partition)} for r in results]
    return text_table(rows)


def fetch_targets(c: Cluster, client_id: str, since_ms: int = 0) -> list:
    """The nodes a client sent FetchRequests to since ``since_ms`` (from the trace)."""
    return sorted({detail[1] for t, kind, node, _tp, _p, detail in c.trace.rows
                   if kind == "send" and node == client_id and t >= since_ms
                   and detail[0] == "FetchRequest"})


def leader_view(c: Cluster, topic: str = TOPIC, partition: int = 0) -> dict[int, int]:
    """follower -> its LEO as the leader knows it (from the follower's last Fetch offset):
    Kafka's ``Partition.remoteReplicas`` / ``Replica.logEndOffset`` (read only)."""
    leader = c.leader(topic, partition)
    part = c.brokers[leader].replica_manager.partitions[(topic, partition)]
    return {b: st.log_end_offset for b, st in sorted(part.remote.items())}


def placement(brokers: int = 3, partitions: int = 3, replication_factor: int = 3,
              seed: int = SEED, kafka_version: str | None = None) -> Text:
    """Create a topic on a fresh cluster and return its describe text plus per-broker roles.

    The plain function behind the placement explorer; ``kafka_version``: the notebook's
    KAFKA_VERSION unless named (notebook 01 passes it)."""
    version = notebook_version(kafka_version, "placement")
    c = Cluster(brokers=brokers, seed=seed, kafka_version=version)
    try:
        c.create_topic("demo", partitions=partitions, replication_factor=replication_factor)
    except ClusterError as exc:
        return Text(f"{exc}\n" + tr("(every copy of a partition must sit on a different "
                                     "broker)"))
    roles = broker_roles(c, "demo")
    return Text(c.describe("demo") + "\n" + roles)


def placement_view(brokers: int = 3, partitions: int = 3, replication_factor: int = 3,
                   seed: int = SEED, kafka_version: str | None = None) -> list:
    """The placement explorer's view: the describe text and the cluster map (when the topic
    could be created)."""
    from kafkasim.viz import cluster_map

    version = notebook_version(kafka_version, "placement_view")
    text = placement(brokers, partitions, replication_factor, seed, version)
    if replication_factor > brokers:
        return [text]
    c = Cluster(brokers=brokers, seed=seed, kafka_version=version)
    c.create_topic("demo", partitions=partitions, replication_factor=replication_factor)
    return [text, cluster_map(c)]


# -- exercises --------------------------------------------------------------------------------
def fetcher_thread_count(c: Cluster, settle_ms: int = 2000) -> int:
    """Every ReplicaFetcherThread in the cluster, once the followers have started fetching (on a
    copy of ``c``: the learner's cluster is not changed)."""
    copy = restore(snapshot(c))
    copy.run(settle_ms)
    return sum(len(b.fetchers) for b in copy.brokers.values())


def lagging_follower_run(faults, seed: int = SEED, *,
                         kafka_version: str | None = None) -> Cluster:
    """The cluster of exercise 2 (Kafka ``kafka_version``, the notebook's unless named): offsets
    0-1 on every replica of ``lag-0`` (replicas [1, 2, 3]), then ``faults(c)``, then 3 more
    records (acks=1) and 3 s."""
    version = notebook_version(kafka_version, "lagging_follower_run")
    c = Cluster(brokers=3, seed=seed, kafka_version=version)
    c.create_topic("lag", partitions=1, replication_factor=3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="1", linger_ms=0)
    p.send_many("lag", ["a", "b"], partition=0)
    p.flush()
    c.run_until(lambda cl: min(r["LEO"] for r in cl.replica_table("lag")) == 2, 10000)
    faults(c)
    p.send_many("lag", ["c", "d", "e"], partition=0)
    p.flush()
    c.run(3000)
    return c


def fetcher_counts(c: Cluster, broker: int) -> tuple[int, int]:
    """(ReplicaFetcherThreads on ``broker``, the most partitions one of them carries)."""
    threads = list(c.brokers[broker].fetchers.values())
    return len(threads), max((len(th.partitions) for th in threads), default=0)


def produce_targets(c: Cluster, client_id: str) -> list:
    """The brokers ``client_id`` sent ProduceRequests to (from the trace)."""
    return sorted({detail[1] for _t, kind, node, _tp, _p, detail in c.trace.rows
                   if kind == "send" and node == client_id and detail[0] == "ProduceRequest"})


# -- printed lines of notebook 01 (course language; the code is the same in every edition) --------
STEP_NOTES = (N_("producer sends 3 records"),)      # Stepper.note texts (narrated in tables)


def read_line(records) -> Text:
    """What a consumer's poll returned: ``read: [(offset, value), …]``."""
    return Text(tr("read: {records}", records=[(r.offset, r.value) for r in records]))


def fetch_targets_line(c: Cluster, client_id: str, since_ms: int, topic: str = TOPIC,
                       partition: int = 1) -> Text:
    """Where a consumer's Fetch requests went since ``since_ms``, next to the partition's
    leader."""
    return Text(tr("its Fetch requests went to {targets} ; the leader of partition {p} is "
                   "{leader}", targets=fetch_targets(c, client_id, since_ms), p=partition,
                   leader=c.leader(topic, partition)))


def leader_view_line(c: Cluster, topic: str = TOPIC, partition: int = 0) -> Text:
    """The follower LEOs the leader knows (``Partition.remoteReplicas``)."""
    return Text(tr("the leader's view of its followers' LEOs: {view}",
                   view=leader_view(c, topic, partition)))


# -- section 4: a lost FetchResponse ---------------------------------------------------------------
#: the prediction's choices: when a follower whose FetchResponse was lost gets its records
LOST_FETCH_CHOICES = ("at once: the leader resends it", "within 1 s: its next Fetch",
                      "about 30 s later", "never")


def lost_fetch_choice(ms: int) -> str:
    """The ``LOST_FETCH_CHOICES`` answer for a follower that got the records ``ms`` after the
    loss (-1: never)."""
    if ms < 0:
        return LOST_FETCH_CHOICES[3]
    return LOST_FETCH_CHOICES[0 if ms < 100 else 1 if ms < 2000 else 2]


def lost_fetch_story(c: Cluster, since_ms: int, follower: int, leo: int) -> Text:
    """The ``drop`` of a FetchResponse to ``follower`` and the follower's ``fetch_failed`` rows
    of ``c``'s trace since ``since_ms``, then when its LEO reached ``leo`` (now)."""
    rows = []
    for t, kind, node, _tp, _p, d in c.trace.rows:
        if t >= since_ms and kind == "drop" and d[1] == follower:
            rows.append({"t(ms)": t, "event": Name(kind), "node": node,   # the trace's kind
                         "detail": f"{d[0]} {node} -> {d[1]}"})
        elif t >= since_ms and kind == "fetch_failed" and node == follower:
            rows.append({"t(ms)": t, "event": Name(kind), "node": node, "detail": str(d)})
    return Text(text_table(rows) + "\n" + tr("broker {b} reaches LEO {leo} at t = {t} ms",
                                             b=follower, leo=leo, t=c.now))
