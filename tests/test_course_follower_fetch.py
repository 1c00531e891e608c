"""kafkasim.course.follower_fetch (notebook 13): the exercise checks with right, wrong and missing
answers, graded against the simulator's own runs.

Rules mirrored (KIP-392, Kafka 2.4+): ReplicaManager.findPreferredReadReplica with
RackAwareReplicaSelector.select (ReplicaManagerTest.testPreferredReplicaAsFollower /
testPreferredReplicaAsLeader, RackAwareReplicaSelectorTest.testSameRackSelection), and a
follower serving consumers below its own high watermark (Partition.fetchRecords with
FetchIsolation.HIGH_WATERMARK)."""

from __future__ import annotations

import pytest
from clusters import make_cluster, produce_records

from kafkasim.course import follower_fetch as ff
from kafkasim.course import follower_fetch_exercises as ffx

# run as in the notebooks, which set KAFKA_VERSION = "4.3" (conftest.py)
pytestmark = pytest.mark.usefixtures("notebook_kafka_version")


def _cluster(racks, config=ff.SELECTOR, late=True):
    c = make_cluster(seed=ff.SEED, racks=racks, config=config, topic="orders",
                     assignment=[[1, 2, 3]])
    p = produce_records(c, "orders", 5)
    c.run(1000)
    if late:
        p.send("orders", "late", partition=0)
        p.flush()
    return c


def _served_by(c, rack):
    cons = c.consumer(group="g", client_rack=rack, auto_offset_reset="earliest")
    cons.assign("orders", [0])
    cons.poll()
    return cons.fetching_from("orders")


def test_read_replica_agrees_with_where_a_consumer_ends_up():
    for racks, rack in (({1: "a", 2: "b", 3: "c"}, "c"), ({1: "a", 2: "b", 3: "c"}, "a"),
                        ({1: "a", 2: "b", 3: "c"}, "")):
        c = _cluster(racks, late=False)
        assert ff.read_replica(c, "orders", rack) == _served_by(_cluster(racks, late=False), rack)
    c = _cluster({1: "a", 2: "b", 3: "c"}, config=None, late=False)
    assert ff.read_replica(c, "orders", "c") == 1 == _served_by(c, "c")


def test_check_read_replica_right_wrong_missing():
    c = _cluster({1: "a", 2: "b", 3: "b"})
    right = ff.read_replica(c, "orders", "b")
    assert right in (2, 3)
    hw = {r["broker"]: r["HW"] for r in c.replica_table("orders", 0)}
    leader_hw = hw[1]
    assert hw[right] == leader_hw - 1          # the follower has not heard of the new HW yet
    assert ff.check_read_replica(c, "orders", "b", replica=right, up_to=hw[right])
    assert not ff.check_read_replica(c, "orders", "b", replica=right, up_to=leader_hw)
    assert not ff.check_read_replica(c, "orders", "b", replica=5 - right, up_to=hw[right])
    assert not ff.check_read_replica(c, "orders", "b", replica=1, up_to=leader_hw)
    assert not ff.check_read_replica(c, "orders", "b", replica=None, up_to=None)


def test_views_render():
    c = _cluster({1: "a", 2: "b", 3: "b"})
    assert "ms since caught up" in str(ff.leader_view(c, "orders"))
    assert "held, not served" in str(ff.serving_view(c, "orders"))
    assert "fetching from broker 2" in str(ff.rack_view("b"))
    assert "fetching from broker 1" in str(ff.rack_view("b", selector=False))


def _slow_cluster(racks):
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(3, seed=ff.SEED, racks=racks, kafka_version="4.3",
                config={**ff.SELECTOR, "replica.fetch.wait.max.ms": 2000})
    c.create_topic("orders", 1, 3, assignment=[[1, 2, 3]])
    p = produce_records(c, "orders", 5)
    c.run(1000)
    return c, p


def _wait_run(client_rack="c", next_after_ms=800):
    """Notebook 13 exercise 2's visible cells: v0-v4 read, ``late`` acknowledged, ``next`` sent
    ``next_after_ms`` later; poll until ``late`` arrives."""
    c, p = _slow_cluster({1: "a", 2: "b", 3: "c"})
    reader = c.consumer(group="g", client_rack=client_rack, auto_offset_reset="earliest")
    reader.assign("orders", [0])
    for _ in range(5):   # v0-v4: broker 3 may not know their HW yet at the first poll
        if len(reader.consumed) == 5:
            break
        reader.poll()
    assert len(reader.consumed) == 5
    p.send("orders", "late", partition=0)
    p.flush()
    ack_ms = c.now
    c.at(ack_ms + next_after_ms, lambda k: p.send("orders", "next", partition=0))
    for _ in range(10):
        if any(r.value == "late" for r in reader.poll(1000)):
            break
    return c, reader, ack_ms


def test_follower_wait_ends_with_the_next_record_or_the_wait_max():
    """Notebook 13 exercise 2: the leader parks the follower's fetch (replica.fetch.wait.max.ms,
    DelayedFetch) until a new record arrives; only then does the follower learn the HW that
    makes ``late`` readable there. A consumer of the leader gets it at the acknowledgement."""
    run = ffx.follower_wait(*_wait_run())
    assert (run.served_by, run.leader, run.wait_max_ms) == (3, 1, 2000)
    assert 800 <= run.waited_ms < 900
    assert ffx.follower_wait(*_wait_run(next_after_ms=5000)).waited_ms in range(2000, 2100)
    assert ffx.follower_wait(*_wait_run(client_rack="a")).waited_ms < 50
    c, reader, ack_ms = _wait_run()
    assert ffx.follower_wait(c, reader, ack_ms, value="never sent") is None


def test_check_follower_wait_right_wrong_missing():
    c, reader, ack_ms = _wait_run()
    waited = ffx.follower_wait(c, reader, ack_ms).waited_ms
    assert ffx.check_follower_wait(c, reader, ack_ms, answer_ms=waited)
    assert ffx.check_follower_wait(c, reader, ack_ms, answer_ms=800)
    hints = {}
    for wrong in (0, 500, 2000, 2800, 1300):
        result = ffx.check_follower_wait(c, reader, ack_ms, answer_ms=wrong)
        assert not result and not result.unanswered, wrong
        hints[wrong] = result.message.splitlines()[0]
    assert len(set(hints.values())) == 5                       # one targeted hint per mistake
    assert not ffx.check_follower_wait(c, reader, ack_ms, answer_ms="800")
    assert ffx.check_follower_wait(c, reader, ack_ms).unanswered
    leader_run = _wait_run(client_rack="a")
    assert not ffx.check_follower_wait(*leader_run, answer_ms=0)   # not a follower's consumer


def _stale_runs():
    """Notebook 13 exercise 3: broker 3 (rack c) is cut off from the leader after v0-v4, w0-w4
    are committed without it, and a rack-c consumer reads from offset 0 a minute later."""
    from kafkasim.runtime.cluster import Cluster

    clusters, readers = {}, {}
    for version in ("3.3", "4.3"):
        c = clusters[version] = Cluster(3, seed=ff.SEED, racks={1: "a", 2: "b", 3: "c"},
                                        config=ff.SELECTOR, kafka_version=version)
        c.create_topic("orders", 1, 3, assignment=[[1, 2, 3]])
        p = produce_records(c, "orders", 5)
        c.run(1000)
        c.cut(1, 3)
        for i in range(5):
            p.send("orders", f"w{i}", partition=0)
        c.run(60000)
        readers[version] = c.consumer(group="g", client_rack="c", auto_offset_reset="earliest")
        readers[version].assign("orders", [0])
        for _ in range(3):
            readers[version].poll(1000)
    return clusters, readers


def test_an_out_of_sync_follower_serves_a_stale_read_before_3_4_only():
    """KAFKA-14372 (3.4): findPreferredReadReplica offers only ISR members. Before, the leader
    sends the rack consumer to the cut-off follower, which serves up to its frozen HW."""
    clusters, readers = _stale_runs()
    for c in clusters.values():
        assert c.isr("orders", 0) == [1, 2]
    old, new = readers["3.3"], readers["4.3"]
    assert old.fetching_from("orders") == 3 and new.fetching_from("orders") == 1
    assert [r.value for r in old.consumed] == [f"v{i}" for i in range(5)]
    assert len(new.consumed) == 10 and not old.errors and not new.errors


def test_check_stale_read_right_wrong_missing():
    clusters, readers = _stale_runs()
    assert ffx.check_stale_read(readers, clusters, wrong_on="3.3", what="b")
    assert ffx.check_stale_read(readers, clusters, wrong_on=" 3.3", what="B")
    hints = set()
    for wrong_on, what in (("4.3", "b"), ("3.3", "a"), ("3.3", "c"), ("3.3", "d")):
        result = ffx.check_stale_read(readers, clusters, wrong_on=wrong_on, what=what)
        assert not result and not result.unanswered, (wrong_on, what)
        hints.add(result.message.splitlines()[0])
    assert len(hints) == 4
    for bad in ({"wrong_on": 3.3, "what": "b"}, {"wrong_on": "3.4", "what": "b"},
                {"wrong_on": "3.3", "what": "e"}):
        result = ffx.check_stale_read(readers, clusters, **bad)
        assert not result and not result.unanswered, bad
    assert ffx.check_stale_read(readers, clusters, wrong_on="3.3").unanswered


def test_polled_lines_are_sentences():
    c = _cluster({1: "a", 2: "b", 3: "c"}, late=False)
    cons = c.consumer(group="g", client_rack="c", auto_offset_reset="earliest")
    cons.assign("orders", [0])
    got = cons.poll()
    line = str(ffx.polled_lines(got, 7))
    assert line.startswith("after 7 ms: offset 0 = 'v0' (served with HW 5)")
    assert "(" not in line.split(": ", 1)[1].split(" (")[0]
    assert str(ffx.polled_lines([], 100)) == "after 100 ms: no records yet"


def test_config_line_prints_an_unset_class_as_java_null():
    """Kafka prints an unset class config as null (KafkaConfig values, kafka-configs
    --describe), not Python's None; a set one prints the class."""
    assert ff.config_line(make_cluster(kafka_version="4.3"), "replica.selector.class") == \
        "replica.selector.class = null"
    c = make_cluster(kafka_version="4.3", config=ff.SELECTOR)
    assert ff.config_line(c, "replica.selector.class") == \
        f"replica.selector.class = {ff.RACK_AWARE}"
