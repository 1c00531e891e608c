"""KIP-392 fetch from follower: RackAwareReplicaSelector, redirects, reads below the follower HW."""

from __future__ import annotations

from clusters import make_cluster

from kafkasim.runtime.cluster import Cluster

SELECTOR = {"replica.selector.class":
            "org.apache.kafka.common.replica.RackAwareReplicaSelector"}
RACKS = {1: "a", 2: "b", 3: "c"}


def cluster(config=None, version="3.7") -> Cluster:
    return make_cluster(seed=1, racks=RACKS, config=config, kafka_version=version, topic="t",
                        assignment=[[1, 2, 3]], records=5, settle_ms=1000)


def test_consumer_in_a_followers_rack_reads_from_that_follower():
    c = cluster(SELECTOR)
    cons = c.consumer(group="g", client_rack="c", auto_offset_reset="earliest")
    cons.assign("t", [0])
    got = cons.poll()
    assert [r.value for r in got] == [f"v{i}" for i in range(5)]
    assert cons.fetching_from("t") == 3
    redirect = [r for r in c.trace.rows if r[1] == "fetch_redirect"]
    assert len(redirect) == 1 and "preferred read replica 3" in redirect[0][5]


def test_follower_reads_lag_by_a_fetch_round_and_stay_below_its_hw():
    c = cluster(SELECTOR)
    cons = c.consumer(group="g", client_rack="c", auto_offset_reset="earliest")
    cons.assign("t", [0])
    cons.poll()
    p = c.producer(acks="all")
    p.send("t", "late", partition=0)
    p.flush()
    leader_hw_at = c.now
    got = cons.poll(2000)
    assert [r.value for r in got] == ["late"]
    # the follower learns HW 6 only on its next fetch: up to replica.fetch.wait.max.ms later
    assert c.now - leader_hw_at >= 400
    assert all(r.offset < r.served_hw for r in cons.consumed)


def test_without_selector_or_rack_or_in_the_leaders_rack_the_leader_serves():
    for cfg, rack in ((None, "c"), (SELECTOR, ""), (SELECTOR, "a")):
        c = cluster(cfg)
        cons = c.consumer(group="g", client_rack=rack, auto_offset_reset="earliest")
        cons.assign("t", [0])
        assert len(cons.poll()) == 5
        assert cons.fetching_from("t") == 1


def test_before_2_4_there_is_no_fetch_from_follower():
    c = cluster(None, version="2.3")
    cons = c.consumer(group="g", auto_offset_reset="earliest")
    cons.assign("t", [0])
    assert len(cons.poll()) == 5 and cons.fetching_from("t") == 1


def _out_of_sync_follower_in_rack_c(version: str) -> Cluster:
    """Broker 3 (rack c) holds offsets 0-4, then stops hearing from leader 1 and leaves the ISR."""
    c = make_cluster(seed=1, racks=RACKS, config={**SELECTOR, "replica.lag.time.max.ms": 2000},
                     kafka_version=version, topic="t", assignment=[[1, 2, 3]], records=5,
                     settle_ms=1000)
    c.hold("FetchResponse", src=1, dst=3)
    p = c.producer(acks="1")
    p.send("t", "later", partition=0)
    p.flush()
    c.run_until(lambda c: 3 not in c.isr("t"), 10000)
    return c


def test_an_out_of_sync_follower_is_a_read_replica_only_before_3_4():
    """KAFKA-14372 (3.4): findPreferredReadReplica keeps only ISR members; 2.4-3.3 took any
    follower holding the fetch offset, here broker 3, out of the ISR but with offsets 0-4."""
    served = {}
    for version in ("3.3", "3.4"):
        c = _out_of_sync_follower_in_rack_c(version)
        cons = c.consumer(group="g", client_rack="c", auto_offset_reset="earliest")
        cons.assign("t", [0])
        cons.poll()
        served[version] = cons.fetching_from("t")
    assert served == {"3.3": 3, "3.4": 1}


def test_the_selector_never_names_a_follower_its_leader_knows_dead():
    """Kafka 3.3 offers any follower holding the offset (not only ISR members), but only brokers
    alive in the leader's metadata cache have an endpoint (getPartitionReplicaEndpoints): once
    the controller has told leader 1 that broker 3 is gone, a consumer in rack c is served by the
    leader instead of being sent to the dead follower."""
    c = cluster(SELECTOR, version="3.3")
    c.crash(3)
    assert c.run_until(lambda k: 3 not in k.brokers[1].metadata.live_brokers, 30000)
    c.run(100)
    assert 3 in c.inspect.partition_state("t", 0)["replicas"]
    cons = c.consumer(group="g", client_rack="c", auto_offset_reset="earliest")
    cons.assign("t", [0])
    assert len(cons.poll()) == 5
    assert cons.fetching_from("t") == 1
    assert not [r for r in c.trace.rows if r[1] == "fetch_redirect"]
