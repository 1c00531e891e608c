"""Notebook 02's read-only samples, trace readers and the flapping check (kafkasim.course.isr)."""

from __future__ import annotations

from kafkasim.course import exercises, isr
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload


def test_check_flapping_wants_the_leader_to_shrink_and_expand_twice():
    """Partition.maybeShrinkIsr / maybeExpandIsr: held Fetch responses for > lag time drop the
    follower; releasing them lets it rejoin once its LEO reaches the HW."""
    def hold_twice(c):
        for t in (1000, 30000):
            c.at(t, lambda c: c.hold("FetchResponse", src=1, dst=3))
            c.at(t + 17000, lambda c: c.release("FetchResponse", src=1, dst=3))

    assert exercises.check_flapping(hold_twice, kafka_version="4.3")
    assert not exercises.check_flapping(lambda c: None, kafka_version="4.3")
    # a 14 s pause in KRaft: the controller fences the broker (broker.session.timeout.ms 9 s)
    assert not exercises.check_flapping(lambda c: c.at(2000, lambda c: c.pause(3, 14000)),
                                        kafka_version="4.3")
    assert not exercises.check_flapping(None, kafka_version="4.3")


def test_gc_pause_under_acks_all_hides_the_lag_in_the_producer():
    """During a 12 s pause the leader's LEO stalls (the acks=all producer blocks), so records
    behind plateaus while the producer's backlog and the time since caught up keep growing."""
    c = Cluster(brokers=3, seed=isr.SEED, kafka_version="3.7",
                config={"replica.lag.time.max.ms": 10000})
    c.create_topic(isr.TOPIC, partitions=1, replication_factor=3, assignment=[[1, 2, 3]])
    load = RateWorkload(c, c.producer("load", acks="all"), isr.TOPIC, rate=50,
                        duration_ms=20000, partition=0)
    c.at(4000, lambda c: c.pause(3, 12000))
    samples = []
    while c.now < 14000:
        c.run(100)
        samples.append(isr.lag_sample(c, load))
    early = min(samples, key=lambda s: abs(s["t"] - 7000))
    late = min(samples, key=lambda s: abs(s["t"] - 13000))
    assert late["behind"] == early["behind"]                  # flat: nothing new reaches the log
    assert late["backlog"] > early["backlog"] + 200           # ... it waits in the producer
    assert late["since caught up"] > early["since caught up"] + 5000
    fig = isr.operator_plot(c, samples, lag_ms=10000)
    assert len(fig.axes) == 3


def test_isr_change_events_name_the_path_per_version():
    def drop(version):
        c = Cluster(brokers=3, seed=isr.SEED, kafka_version=version,
                    config={"replica.lag.time.max.ms": 10000})
        c.create_topic(isr.TOPIC, partitions=1, replication_factor=3, assignment=[[2, 3, 1]])
        p = c.producer("p", acks="1")
        p.send(isr.TOPIC, "a", partition=0)
        c.run(2000)
        c.hold("FetchResponse", src=2, dst=3)
        p.send(isr.TOPIC, "x", partition=0)
        start = c.now
        c.run_until(lambda c: 3 not in c.isr(isr.TOPIC), 30000)
        c.run(9000)
        return isr.isr_change_events(c, start)

    assert "to ZooKeeper itself" in drop("2.6")
    kraft = drop("4.3")
    assert "AlterPartitionRequest 2 -> 300" in kraft and "ZooKeeper" not in kraft


def _paused_broker_3(version: str, pause_ms: int) -> Cluster:
    """Broker 3 pauses at t=4 s; the leader's lag time (60 s) is too long for it to shrink."""
    c = Cluster(brokers=3, seed=isr.SEED, kafka_version=version,
                config={"replica.lag.time.max.ms": 60000})
    c.create_topic(isr.TOPIC, partitions=1, replication_factor=3, assignment=[[1, 2, 3]])
    RateWorkload(c, c.producer("load", acks="1"), isr.TOPIC, rate=20, duration_ms=40000,
                 partition=0)
    c.at(4000, lambda c: c.pause(3, pause_ms))
    c.run(45000)
    return c


def test_time_out_of_isr_counts_a_removal_by_the_controller():
    """KRaft: a 20 s pause outlasts broker.session.timeout.ms (9 s), the controller fences broker
    3 and writes a PartitionChangeRecord without it; no leader shrink (no "isr" row) comes before
    the leader's AlterPartition adds it back. The spell counts from the fencing record to the
    record that commits the expand."""
    c = _paused_broker_3("4.3", 20000)
    records = [(t, d.reason, d.isr) for t, kind, _n, tp, _p, d in c.trace.rows
               if tp == isr.TOPIC and type(d).__name__ == "PartitionChangeRecorded"]
    assert not [d for _t, kind, _n, tp, _p, d in c.trace.rows
                if tp == isr.TOPIC and kind == "isr" and 3 not in d[1]]     # no leader shrink
    (_t0, _, created), (fenced, why, without), (back, _, with_3) = records
    assert 3 in created and 3 not in without and 3 in with_3 and "fenced" in why
    assert 4000 < fenced < 4000 + 9000 and back >= 24000
    assert isr._time_out_of_isr(c, 3) == back - fenced
    assert isr._time_out_of_isr(c, 2) == 0


def test_time_out_of_isr_counts_zookeeper_modes_dead_broker_removal():
    """ZooKeeper mode (3.7): a crashed follower's session expires and the controller removes it
    (DeadRemovedFromIsr, leader unchanged); it stays out until the run ends."""
    c = Cluster(brokers=3, seed=isr.SEED, kafka_version="3.7",
                config={"replica.lag.time.max.ms": 60000})
    c.create_topic(isr.TOPIC, partitions=1, replication_factor=3, assignment=[[1, 2, 3]])
    c.at(4000, lambda c: c.crash(3))
    c.run(40000)
    removed = [t for t, kind, _n, tp, _p, d in c.trace.rows
               if tp == isr.TOPIC and type(d).__name__ == "DeadRemovedFromIsr"]
    assert len(removed) == 1
    assert isr._time_out_of_isr(c, 3) == c.now - removed[0] > 0


def _drop_follower_3(version):
    """Notebook 02b section 5's run: broker 2 leads, its FetchResponses to broker 3 held."""
    from kafkasim.course.isr import SEED, TOPIC
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(brokers=3, seed=SEED, kafka_version=version,
                config={"replica.lag.time.max.ms": 10000})
    c.create_topic(TOPIC, partitions=1, replication_factor=3, assignment=[[2, 3, 1]])
    p = c.producer("p", acks="1")
    p.send(TOPIC, "a", partition=0), c.run(2000)
    c.hold("FetchResponse", src=2, dst=3)
    p.send(TOPIC, "x", partition=0)
    start = c.now
    c.run_until(lambda c: 3 not in c.isr(TOPIC), 30000), c.run(9000)
    return c, start


def test_who_learns_of_the_isr_change_when():
    """Notebook 02b section 5's scores: before 2.7 the controller hears of the leader's own
    ZooKeeper write through /isr_change_notification seconds later, and tells the brokers with
    UpdateMetadata; since 2.7 it decides within ms; in KRaft the brokers read the metadata log."""
    from kafkasim.course.isr import brokers_learn_by, controller_knows_after, learn_span

    seen = {}
    for version in ("2.6", "3.7", "4.3"):
        c, start = _drop_follower_3(version)
        ms = controller_knows_after(c, start)
        seen[version] = (learn_span(ms), brokers_learn_by(c, start))
        assert ms >= 0
    assert seen == {"2.6": ("5-10 s", "UpdateMetadataRequest"),
                    "3.7": ("under 100 ms", "UpdateMetadataRequest"),
                    "4.3": ("under 100 ms", "the metadata log")}
    assert learn_span(-1) == "over 10 s" and learn_span(99) == "under 100 ms"
