"""Notebook 13 (fetch from follower, KIP-392): formatting and grading helpers.

Every cluster is built in a visible cell of the notebook. The rules graded here are the
simulator's, which follow Kafka 2.4+ (fact sheet §10):

- ``ReplicaManager.findPreferredReadReplica`` (candidates: in-sync followers whose log holds the
  fetch offset, plus the leader) and ``RackAwareReplicaSelector.select`` as
  ``kafkasim.core.replica_manager.select_read_replica``;
- a follower serves consumers up to its own high watermark, min(leader HW it last saw, its LEO)
  (``kafkasim.core.replica_manager._read_as_follower``; Kafka's ``Partition.fetchRecords`` with
  ``FetchIsolation.HIGH_WATERMARK``).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from kafkasim.core.replica_manager import select_read_replica
from kafkasim.course.checks import CheckResult, _missing, _result
from kafkasim.course.common import Text, notebook_version, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.runtime.cluster import Cluster

SEED = 13
RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"
SELECTOR = {"replica.selector.class": RACK_AWARE}


def config_line(c: Cluster, key: str) -> Text:
    """One broker setting as the broker logs its KafkaConfig values, ``key = value``: an unset
    class setting (``replica.selector.class`` by default) prints Java's ``null``."""
    value = c.broker_config.get(key)
    return Text(f"{key} = {'null' if value is None else value}")


def show_source(*fns: Callable) -> Text:
    """The source of Kafka's rule(s) as the simulator writes them, to print in a cell."""
    return Text("\n".join(inspect.getsource(fn) for fn in fns))


def _partition(c: Cluster, broker: int, topic: str, partition: int):
    return c.brokers[broker].replica_manager.partitions[(topic, partition)]


def read_replica(c: Cluster, topic: str, client_rack: str, fetch_offset: int = 0,
                 partition: int = 0) -> int:
    """The broker the leader would send a consumer in ``client_rack`` to, now (the leader
    itself when the broker has no ``replica.selector.class``, the release predates 2.4 or the
    consumer has no ``client.rack``): ReplicaManager.findPreferredReadReplica."""
    leader = c.inspect.partition_state(topic, partition)["leader"]
    if not client_rack or not c.broker_config.get("replica.selector.class") \
            or not c.rules.fetch.fetch_from_follower:
        return leader
    return select_read_replica(c.brokers[leader], _partition(c, leader, topic, partition),
                               fetch_offset, client_rack)


def serving_view(c: Cluster, topic: str, partition: int = 0) -> Text:
    """Per replica: rack, role, LEO, HW, and which offsets a consumer reading there gets now."""
    leader = c.inspect.partition_state(topic, partition)["leader"]
    rows = []
    for r in c.replica_table(topic, partition):
        leo, hw = r["LEO"], r["HW"]
        rows.append({"broker": r["broker"], "rack": c.brokers[r["broker"]].rack or "",
                     "role": "leader" if r["broker"] == leader else "follower",
                     "LEO": leo, "HW": hw, N_("serves offsets"): f"0..{hw - 1}" if hw else "none",
                     N_("held, not served"): list(range(hw, leo))})
    return text_table(rows)


def rack_view(client_rack: str = "b", selector: bool = True, kafka_version: str | None = None,
              broker_racks: str = "a,b,c") -> Text:
    """Explorer body: a 3-broker cluster of Kafka ``kafka_version`` (the notebook's unless
    named; racks given per broker 1,2,3), 5 committed records; where does a consumer in
    ``client_rack`` read from?"""
    kafka_version = notebook_version(kafka_version, "rack_view")
    racks = {i + 1: r for i, r in enumerate(broker_racks.split(","))}
    c = Cluster(3, seed=SEED, racks=racks, config=SELECTOR if selector else None,
                kafka_version=kafka_version)
    c.create_topic("orders", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer(acks="all")
    for i in range(5):
        p.send("orders", f"v{i}", partition=0)
    p.flush()
    c.run(1000)
    cons = c.consumer(group="g", client_rack=client_rack, auto_offset_reset="earliest")
    cons.assign("orders", [0])
    got = cons.poll()
    return Text(tr("Kafka {version}, racks {racks}", version=kafka_version, racks=racks)
                + f", replica.selector.class={RACK_AWARE if selector else 'null'}, "
                f"client.rack={client_rack!r}\n"
                + tr("read {n} records, now fetching from broker {b}", n=len(got),
                     b=cons.fetching_from("orders")))


# -- exercises ------------------------------------------------------------------------------------
def check_read_replica(c: Cluster, topic: str, client_rack: str, fetch_offset: int = 0, *,
                       replica=None, up_to=None) -> CheckResult:
    """Which broker serves a consumer in ``client_rack`` fetching ``fetch_offset`` now, and the
    first offset it cannot read there yet (that broker's HW)."""
    miss = _missing(replica, up_to)
    if miss is not None:
        return miss
    right = read_replica(c, topic, client_rack, fetch_offset)
    hw = {r["broker"]: r["HW"] for r in c.replica_table(topic, 0)}[right]
    if int(replica) != right:
        return _result(False, tr("broker {replica} is not the one: the leader picks an in-sync "
                                 "replica in the consumer's rack {client_rack!r} holding "
                                 "offset {fetch_offset} (most caught up first), else itself.",
                                 replica=replica, client_rack=client_rack,
                                 fetch_offset=fetch_offset))
    if int(up_to) != hw:
        return _result(False, tr("broker {right} is right, but it serves records below its own "
                                 "high watermark, not below {up_to}: look at its HW, not the "
                                 "leader's.", right=right, up_to=up_to))
    return _result(True, tr("broker {right}, offsets below {hw} (its own high watermark).",
                            right=right, hw=hw))


def leader_view(c: Cluster, topic: str, partition: int = 0) -> Text:
    """What the leader knows of each follower (Partition.remoteReplicas' state): LEO, log start,
    ms since it was last caught up, ISR membership. The inputs of findPreferredReadReplica."""
    leader = c.inspect.partition_state(topic, partition)["leader"]
    part = _partition(c, leader, topic, partition)
    rows = [{"follower": r, "rack": c.brokers[r].rack or "", "LEO": st.log_end_offset,
             N_("log start"): st.log_start_offset,
             N_("ms since caught up"): c.now - st.last_caught_up_time_ms, "in ISR": r in part.isr}
            for r, st in sorted(part.remote.items())]
    return text_table(rows)


# -- printed lines of notebook 13 (course language; the same code in every edition) ---------------
def read_from_line(records, broker: int) -> Text:
    """How many records a poll returned, and the broker the consumer fetches from."""
    return Text(tr("{n} records read from broker {b}", n=len(records), b=broker))


def served_line(c: Cluster, consumer, records, topic: str = "orders") -> Text:
    """Who served a poll, and how many times the leader redirected a fetch (the trace's
    ``fetch_redirect`` rows: ``PreferredReadReplica`` answers)."""
    redirects = sum(1 for row in c.trace.rows if row[1] == "fetch_redirect")
    return Text(tr("served by broker {b}: {n} records; {redirects} fetch_redirect from the "
                   "leader", b=consumer.fetching_from(topic), n=len(records),
                   redirects=redirects))
