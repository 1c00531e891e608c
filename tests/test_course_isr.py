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
