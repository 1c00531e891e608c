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
