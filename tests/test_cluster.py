"""End-to-end data-plane tests through the public Cluster / Producer / Consumer API.

Numbers come from the fact sheet: §1 (HW, follower HW one fetch late, consumers read below HW,
3.7 HW freeze under min ISR), §2 (lastCaughtUpTimeMs rules, shrink task every lag/2 so removal after
1-1.5 x lag, equal LEO never out of sync), §3 (acks / min.insync.replicas), §11 (kafka-topics
--describe text), §12 (metrics), §13 (kafka-consumer-groups --describe).
"""

from __future__ import annotations

import re

import pytest
from clusters import make_cluster

from kafkasim.control.placement import assign_replicas_to_brokers
from kafkasim.observe.snapshots import restore, snapshot
from kafkasim.runtime import metrics as M
from kafkasim.runtime.cluster import Cluster, ClusterError
from kafkasim.runtime.workload import RateWorkload
from kafkasim.settings.javautil import JavaRandom

# the ZooKeeper-era release these tests were written against (Kafka 4.x is KRaft only;
# its behaviour is tested in tests/test_kraft_*.py)
ZK = "3.7"

LAG_MS = 30000          # replica.lag.time.max.ms since 2.5
FETCH_WAIT_MS = 500     # replica.fetch.wait.max.ms


def _ids(xs) -> str:
    return ",".join(str(x) for x in xs)


def _hw(c: Cluster, broker: int, topic: str = "t", partition: int = 0) -> int:
    return c.log(broker, topic, partition).high_watermark


def _leo(c: Cluster, broker: int, topic: str = "t", partition: int = 0) -> int:
    return c.log(broker, topic, partition).log_end_offset


def _cluster(config: dict | None = None, **kw) -> Cluster:
    """Three brokers, fixed 1 ms links. The ZooKeeper session outlives the 60 s pauses used
    below, so only the leader's replica.lag.time.max.ms rule removes a paused follower (a pause
    longer than the 18 s session would rightly expire it and let the controller act, §7a)."""
    kw.setdefault("seed", 5)
    kw.setdefault("latency_ms", 1)
    kw.setdefault("jitter_ms", 0)
    kw.setdefault("kafka_version", ZK)
    cfg = {"zookeeper.session.timeout.ms": 120000}
    cfg.update(config or {})
    return make_cluster(config=cfg, **kw)


def _fall_behind(c: Cluster, topic: str, follower: int, pause_ms: int = 60000):
    """Pause ``follower`` and produce one acks=1 record so its LEO trails the leader's.
    Returns (pause time, removal time or None)."""
    assert c.zk_control_plane.controller_broker().id != follower, \
        "pausing the controller would stall AlterIsr"
    t_pause = c.now
    c.pause(follower, pause_ms)
    p = c.producer(acks="1")
    r = p.send(topic, "behind", partition=0)
    c.run_until(lambda cl: r.status != "pending", 1000)
    assert r.acked
    removed = c.run_until(lambda cl: follower not in cl.isr(topic), 2 * LAG_MS)
    t_removed = c.now if removed else None
    c.run(10)   # the AlterPartition response reaches the leader
    return t_pause, t_removed


# ============================================================================ topics / describe


def test_create_topic_assignment_follows_kafka_placement_with_the_seed():
    c = Cluster(3, seed=1, kafka_version=ZK)
    assign = c.create_topic("orders", partitions=3, replication_factor=3)
    assert assign == assign_replicas_to_brokers([1, 2, 3], 3, 3, rng=JavaRandom(1))
    assert c.assignment("orders") == assign
    for p, reps in assign.items():
        st = c.inspect.partition_state("orders", p)
        assert st["leader"] == reps[0]        # preferred replica leads a new partition
        assert st["isr"] == reps              # ISR = all live assigned replicas
        assert st["leader_epoch"] == 0


def test_describe_layout_exactly_as_kafka_topics_prints_it():
    c = Cluster(3, seed=1, kafka_version=ZK)
    assign = c.create_topic("orders", partitions=3, replication_factor=3)
    tid = c.topics.ids["orders"]
    expected = (f"Topic: orders\tTopicId: {tid}\tPartitionCount: 3\tReplicationFactor: 3"
                "\tConfigs: \n")
    for p in range(3):
        r = assign[p]
        expected += (f"\tTopic: orders\tPartition: {p}\tLeader: {r[0]}\tReplicas: {_ids(r)}"
                     f"\tIsr: {_ids(r)}\n")
    assert c.describe("orders") == expected


def test_topic_id_looks_like_a_kafka_uuid():
    c = Cluster(3, seed=1, kafka_version=ZK)
    c.create_topic("a")
    c.create_topic("b")
    ids = [c.topics.ids["a"], c.topics.ids["b"]]
    for tid in ids:
        assert re.fullmatch(r"[A-Za-z0-9_-]{22}", tid)   # base64url, no padding
        assert tid != "AAAAAAAAAAAAAAAAAAAAAA"             # not the zero UUID
    assert ids[0] != ids[1]
    # stable for the same seed
    c2 = Cluster(3, seed=1, kafka_version=ZK)
    c2.create_topic("a")
    assert c2.topics.ids["a"] == ids[0]


def test_describe_lists_every_topic_when_none_is_named():
    c = Cluster(3, seed=1, kafka_version=ZK)
    c.create_topic("a", 2, 2)
    c.create_topic("b", 1, 3)
    text = c.describe()
    summaries = [ln for ln in text.splitlines() if ln.startswith("Topic: ")]
    assert [s.split("\t")[0] for s in summaries] == ["Topic: a", "Topic: b"]
    assert sum(1 for ln in text.splitlines() if ln.startswith("\tTopic: ")) == 3
    assert "PartitionCount: 2\tReplicationFactor: 2" in text


def test_topic_config_override_shows_in_configs():
    c = Cluster(3, seed=1, kafka_version=ZK)
    c.create_topic("plain", 1, 3)
    c.create_topic("strict", 1, 3, config={"min.insync.replicas": 2})
    lines = c.describe().splitlines()
    plain = next(ln for ln in lines if ln.startswith("Topic: plain"))
    strict = next(ln for ln in lines if ln.startswith("Topic: strict"))
    assert plain.endswith("\tConfigs: ")
    assert strict.endswith("\tConfigs: min.insync.replicas=2")
    c.alter_config("topics", "plain", {"min.insync.replicas": 3})
    assert "\tConfigs: min.insync.replicas=3" in c.describe("plain")
    assert c.topics.configs["plain"]["min.insync.replicas"] == 3


def test_broker_level_override_shows_in_topic_configs():
    c = Cluster(3, seed=1, config={"min.insync.replicas": 2}, kafka_version=ZK)
    c.create_topic("t", 1, 3)
    summary = c.describe("t").splitlines()[0]
    assert summary.endswith("\tConfigs: min.insync.replicas=2")


def test_describe_kafka_2_0_summary_has_no_space_after_colons_and_no_topic_id():
    c = Cluster(3, seed=1, kafka_version="2.0")
    c.create_topic("t", assignment=[[1, 2, 3]])
    summary, part = c.describe("t").splitlines()
    assert summary == "Topic:t\tPartitionCount:1\tReplicationFactor:3\tConfigs:"
    assert "TopicId" not in c.describe("t")
    assert part.startswith("\tTopic:")
    assert "Elr" not in part


def test_describe_kafka_2_0_partition_lines_keep_the_space():
    c = Cluster(3, seed=1, kafka_version="2.0")
    c.create_topic("t", assignment=[[1, 2, 3]])
    part = c.describe("t").splitlines()[1]
    assert part == "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3"


@pytest.mark.parametrize(("version", "topic_id", "elr"), [
    ("2.4", False, False), ("2.8", True, False), ("3.7", True, False), ("3.8", True, True),
])
def test_describe_version_differences(version, topic_id, elr):
    c = Cluster(3, seed=1, kafka_version=version)
    c.create_topic("t", assignment=[[1, 2, 3]])
    summary, part = c.describe("t").splitlines()
    assert summary.startswith("Topic: t\t")
    assert ("\tTopicId: " in summary) is topic_id
    base = "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3"
    assert part == (base + "\tElr: N/A\tLastKnownElr: N/A" if elr else base)


# ============================================================================ acks


def test_acks_all_is_acknowledged_only_once_the_hw_passes_the_record():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]])
    r = c.producer(acks="all").send("t", "x", partition=0)
    assert c.run_until(lambda cl: r.status != "pending", 5000)
    assert r.acked and r.offset == 0
    assert _hw(c, 1) >= r.offset + 1
    assert _leo(c, 2) >= 1 and _leo(c, 3) >= 1


def test_acks_1_is_acknowledged_after_the_leader_append_alone():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.run(1000)
    r = c.producer(acks="1").send("t", "x", partition=0)
    assert c.run_until(lambda cl: r.status != "pending", 5000)
    assert r.acked and r.offset == 0
    assert _leo(c, 1) == 1
    assert _hw(c, 1) == 0   # acknowledged before it was committed


def test_acks_all_waits_longer_than_acks_1():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.run(1000)
    r1 = c.producer(acks="1").send("t", "one", partition=0)
    ra = c.producer(acks="all").send("t", "all", partition=0)
    c.run(1000)
    assert r1.acked and ra.acked
    assert ra.latency_ms > r1.latency_ms


def test_acks_0_gets_no_response_and_no_offset():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.run(100)
    p = c.producer(acks="0")
    r = p.send("t", "fire-and-forget", partition=0)
    c.run(1000)
    assert r.acked and r.offset == -1 and r.error is None
    assert _leo(c, 1) == 1   # but it was appended
    responses = [row for row in c.trace.where("send")
                 if row[5][0] == "ProduceResponse" and row[5][1] == p.client_id]
    assert responses == []


def test_not_enough_replicas_when_isr_below_min_isr_nothing_appended():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]], config={"min.insync.replicas": 3})
    _t, removed = _fall_behind(c, "t", 3)
    assert removed is not None and c.isr("t") == [1, 2]
    leo = _leo(c, 1)
    r = c.producer(acks="all", retries=0).send("t", "rejected", partition=0)
    c.run(200)
    assert r.status == "failed"
    assert r.error == "NOT_ENOUGH_REPLICAS"
    assert _leo(c, 1) == leo   # the pre-check refuses before appending
    assert any("NOT_ENOUGH_REPLICAS" in str(row[5]) for row in c.trace.where("produce_rejected"))


def test_altered_min_isr_reaches_the_leaders_log_and_its_check():
    """LogManager.updateTopicConfig: min.insync.replicas altered after the logs exist reaches
    each log's config (UnifiedLog.config), which the leader's min-ISR check reads; so does a
    broker default's change (log.flush.interval.messages -> the topic's flush.messages)."""
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]])
    _fall_behind(c, "t", 3)
    assert c.isr("t") == [1, 2]
    c.alter_config("topics", "t", {"min.insync.replicas": 3})
    assert {b.logs[("t", 0)].config["min.insync.replicas"] for b in c.brokers.values()} == {3}
    r = c.producer(acks="all", retries=0).send("t", "rejected", partition=0)
    c.run(200)
    assert r.error == "NOT_ENOUGH_REPLICAS"
    c.alter_config("brokers", None, {"log.flush.interval.messages": 7})
    assert {b.logs[("t", 0)].config["flush.messages"] for b in c.brokers.values()} == {7}


def test_not_enough_replicas_is_retried_by_default():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]], config={"min.insync.replicas": 3})
    _fall_behind(c, "t", 3)
    r = c.producer(acks="all").send("t", "retried", partition=0)
    c.run(1000)
    assert r.status == "pending"
    assert len(r.errors) >= 2 and set(r.errors) == {"NOT_ENOUGH_REPLICAS"}


def test_acks_1_ignores_min_isr():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]], config={"min.insync.replicas": 3})
    _fall_behind(c, "t", 3)
    r = c.producer(acks="1").send("t", "ok", partition=0)
    c.run(200)
    assert r.acked


@pytest.mark.parametrize(("version", "frozen"), [("3.7", True), ("3.6", False)])
def test_hw_frozen_under_min_isr_since_3_7(version, frozen):
    c = _cluster(kafka_version=version)
    c.create_topic("t", assignment=[[1, 2, 3]], config={"min.insync.replicas": 3})
    _fall_behind(c, "t", 3)
    hw, leo = _hw(c, 1), _leo(c, 1)
    p = c.producer(acks="1")
    p.send_many("t", ["a", "b", "c"], partition=0)
    c.run(2000)
    assert all(r.acked for r in p.results.values())
    assert _leo(c, 1) == _leo(c, 2) == leo + 3   # broker 2 replicated everything
    if frozen:
        assert hw == 0 and _hw(c, 1) == 0   # KAFKA-15583: no HW movement under min ISR
    else:
        assert _hw(c, 1) == leo + 3         # min LEO over the ISR {1, 2}


# ============================================================================ high watermark


@pytest.mark.parametrize("fetch_wait", [FETCH_WAIT_MS, 100])
def test_follower_learns_hw_one_fetch_late_within_fetch_wait_on_idle_partition(fetch_wait):
    c = _cluster(config={"replica.fetch.wait.max.ms": fetch_wait})
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.run(2000)   # idle: followers' fetches are parked at the leader
    c.producer(acks="1").send("t", "x", partition=0)
    assert c.run_until(lambda cl: _hw(cl, 1) == 1, 1000)
    t_leader = c.now
    # both followers already have the record but learned the old HW from the fetch that
    # carried their position (HW captured before the fetch updated it)
    assert _leo(c, 2) == _leo(c, 3) == 1
    assert _hw(c, 2) == 0 and _hw(c, 3) == 0
    # the HW rise does not wake the parked follower fetches: they answer at MaxWaitMs
    assert not c.run_until(lambda cl: _hw(cl, 2) == 1 or _hw(cl, 3) == 1, fetch_wait // 2)
    assert c.run_until(lambda cl: _hw(cl, 2) == 1 and _hw(cl, 3) == 1, 5 * fetch_wait)
    elapsed = c.now - t_leader
    # parked up to MaxWaitMs, plus 1 ms for the response to travel
    assert fetch_wait // 2 < elapsed <= fetch_wait + 2


def test_follower_hw_never_exceeds_its_own_leo():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]])
    p = c.producer(acks="1", linger_ms=0)
    w = RateWorkload(c, p, "t", rate=200, duration_ms=2000, partition=0)
    seen = []

    def check(cl):
        for b in (1, 2, 3):
            log = cl.log(b, "t")
            assert log.high_watermark <= log.log_end_offset
        seen.append(1)

    c.run(2500, check=check)
    assert seen and w.sent == 400
    assert _hw(c, 1) == 400


def test_consumer_never_reads_at_or_past_the_hw():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]])
    p = c.producer(acks="all")
    p.send_many("t", ["v0", "v1", "v2"], partition=0)
    assert p.flush()
    c.pause(2, 5000)
    c.pause(3, 5000)
    p1 = c.producer(acks="1")
    p1.send_many("t", ["x", "y"], partition=0)
    assert p1.flush()
    assert _leo(c, 1) == 5 and _hw(c, 1) == 3    # x, y appended but not committed

    cons = c.consumer(group="g", auto_offset_reset="earliest")
    cons.assign("t")
    got = cons.poll(1000)
    assert [r.offset for r in got] == [0, 1, 2]
    assert [r.value for r in got] == ["v0", "v1", "v2"]
    assert all(r.offset < r.served_hw == 3 for r in got)
    assert cons.position("t", 0) == 3
    assert cons.poll(600) == []                   # offsets 3, 4 stay invisible
    c.run(6000)                                   # followers resume; HW reaches 5
    got = cons.poll(1000)
    assert [(r.offset, r.value) for r in got] == [(3, "x"), (4, "y")]
    assert all(r.offset < r.served_hw for r in got)


def test_list_offsets_latest_is_the_hw_not_the_leo():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]])
    p = c.producer(acks="all")
    p.send_many("t", ["a", "b"], partition=0)
    p.flush()
    c.pause(2, 5000)
    c.producer(acks="1").send("t", "c", partition=0)
    c.run(50)
    assert _leo(c, 1) == 3 and _hw(c, 1) == 2
    cons = c.consumer(auto_offset_reset="latest")
    cons.assign("t")
    cons.poll(10)
    assert cons.position("t", 0) == 2


# ============================================================================ consumer groups


def test_consumer_group_describe_log_end_offset_is_the_hw_and_lag_is_hw_minus_committed():
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]])
    p = c.producer(acks="all")
    p.send_many("t", ["v0", "v1", "v2"], partition=0)
    p.flush()
    c.pause(2, 5000)
    c.pause(3, 5000)
    c.producer(acks="1").send_many("t", ["x", "y"], partition=0)
    c.run(20)
    cons = c.consumer(group="g", name="reader", auto_offset_reset="earliest")
    cons.assign("t")
    cons.poll(1000)
    assert cons.commit() == {("t", 0): 3}
    assert _leo(c, 1) == 5 and _hw(c, 1) == 3

    text = c.describe_group("g")
    header = ("GROUP           TOPIC           PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  "
              "LAG             CONSUMER-ID     HOST            CLIENT-ID")
    row = ("g               t               0          3               3               "
           "0               reader-0        /127.0.0.1      reader")
    assert text == "\n" + header + "\n" + row + "\n"

    c.run(6000)   # followers back: HW 5, committed still 3
    assert _hw(c, 1) == 5
    cols = c.describe_group("g").strip("\n").splitlines()[1].split()
    assert cols[:6] == ["g", "t", "0", "3", "5", "2"]   # LAG = HW - committed


def test_describe_group_unknown_group():
    c = _cluster()
    with pytest.raises(ValueError, match="Consumer group 'nope' does not exist"):
        c.describe_group("nope")


# ============================================================================ ISR shrink, metrics


@pytest.fixture(scope="module")
def shrunk():
    """Broker 3 paused for 60 s with a record it never fetched; topic 'idle' gets no data."""
    c = _cluster()
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.create_topic("idle", assignment=[[1, 2, 3]])
    c.run(1000)
    t_pause, t_removed = _fall_behind(c, "t", 3)
    c.run(2000)   # a couple of metric samples after the change
    return c, t_pause, t_removed


def test_paused_follower_leaves_isr_within_one_to_one_and_a_half_lag(shrunk):
    c, t_pause, t_removed = shrunk
    assert t_removed is not None
    assert c.isr("t") == [1, 2]
    # its last caught-up time is at most one parked fetch (500 ms) before the pause; the
    # isr-expiration task (every lag/2) drops it 1-1.5 x lag after that, plus the AlterPartition
    # round trip to the controller
    elapsed = t_removed - t_pause
    assert LAG_MS - FETCH_WAIT_MS <= elapsed <= 1.5 * LAG_MS + 10
    shrinks = c.trace.where("isr", topic="t")
    assert len(shrinks) == 1 and shrinks[0][5] == ((1, 2, 3), (1, 2))
    assert shrinks[0][2] == 1                       # committed on the leader (AlterIsr path)
    # a leader-driven shrink: no bump
    assert c.inspect.partition_state("t", 0)["leader_epoch"] == 0


def test_follower_with_equal_leo_is_never_shrunk_even_if_paused(shrunk):
    c, _t, _r = shrunk
    assert c.isr("idle") == [1, 2, 3]


def test_under_replicated_filter_shows_only_the_shrunk_partition(shrunk):
    c, _t, _r = shrunk
    assert c.describe(under_replicated_partitions=True) == \
        "\tTopic: t\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2\n"
    assert c.describe("idle", under_replicated_partitions=True) == ""


def test_metrics_after_isr_shrink(shrunk):
    c, _t, _r = shrunk
    latest = c.metrics.latest()
    assert latest[(1, M.UNDER_REPLICATED)] == 1
    assert latest[(2, M.UNDER_REPLICATED)] == 0
    assert latest[(3, M.UNDER_REPLICATED)] == 0
    assert latest[(1, M.ISR_SHRINKS + ":Count")] == 1
    assert latest[(2, M.ISR_SHRINKS + ":Count")] == 0
    assert latest[(1, M.partition_mbean("InSyncReplicasCount", "t", 0))] == 2
    assert latest[(1, M.partition_mbean("InSyncReplicasCount", "idle", 0))] == 3
    assert latest[(2, M.partition_mbean("InSyncReplicasCount", "t", 0))] == 0  # leader only
    assert latest[(1, M.LEADER_COUNT)] == 2
    assert latest[(1, M.ACTIVE_CONTROLLER)] == 1 and latest[(2, M.ACTIVE_CONTROLLER)] == 0
    assert M.UNDER_REPLICATED == "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions"


def test_metrics_frame_records_the_transition(shrunk):
    c, _t, t_removed = shrunk
    df = c.metrics.to_frame()
    assert list(df.columns) == ["time_ms", "broker", "mbean", "value"]
    urp = df[(df.broker == 1) & (df.mbean == M.UNDER_REPLICATED)]
    before = urp[urp.time_ms < t_removed]
    after = urp[urp.time_ms > t_removed]
    assert len(before) and set(before.value) == {0}
    assert len(after) and set(after.value) == {1}
    count = df[(df.broker == 1) & (df.mbean == M.ISR_SHRINKS + ":Count")]
    assert count.value.iloc[0] == 0 and count.value.iloc[-1] == 1


def test_previous_fetch_rule_keeps_follower_in_isr_under_steady_stream():
    """KAFKA-4485: with ~500 ms fetch round trips and 20 msg/s, no fetch ever reaches the
    leader's current LEO, but each reaches the LEO of the previous fetch."""
    def run(rule: bool) -> Cluster:
        c = Cluster(3, seed=3, kafka_version="3.7",
                    rules={"caught_up_previous_fetch_rule": rule})
        c.create_topic("s", assignment=[[1, 2, 3]])
        c.slow(2, network_ms=250)
        c.slow(3, network_ms=250)
        RateWorkload(c, c.producer(acks="1"), "s", rate=20, duration_ms=50000, partition=0)
        c.run(50000)
        return c

    with_rule = run(True)
    assert with_rule.isr("s") == [1, 2, 3]
    assert with_rule.trace.where("isr") == []
    assert sum(b.meters["IsrShrinksPerSec"] for b in with_rule.brokers.values()) == 0

    without = run(False)   # control: the same workload does shrink without the rule
    assert without.trace.where("isr")
    assert without.brokers[1].meters["IsrShrinksPerSec"] >= 1


# ============================================================================ snapshots


def test_snapshot_restore_runs_identically():
    c = Cluster(3, seed=9, kafka_version=ZK)
    c.create_topic("t", 2, 3)
    RateWorkload(c, c.producer(acks="all"), "t", rate=100, duration_ms=4000)
    c.run(1500)
    snap = snapshot(c)
    copy = restore(snap)
    assert copy.now == c.now and copy.trace.digest() == c.trace.digest()
    c.run(4000)
    copy.run(4000)
    assert c.trace.digest() == copy.trace.digest()
    assert len(c.trace) == len(copy.trace)
    assert c.metrics.rows == copy.metrics.rows
    assert c.engine.rng.random() == copy.engine.rng.random()
    # the digest is sensitive: a different continuation gives a different digest
    other = restore(snap)
    other.pause(2, 100)
    other.run(4000)
    assert other.trace.digest() != c.trace.digest()


def test_same_seed_same_digest_different_seed_different_digest():
    def run(seed):
        c = Cluster(3, seed=seed, kafka_version=ZK)
        c.create_topic("t", 1, 3)
        RateWorkload(c, c.producer(), "t", rate=50, duration_ms=1000, partition=0)
        c.run(1500)
        return c.trace.digest()

    assert run(4) == run(4)
    assert run(4) != run(5)


def test_restore_rejects_non_cluster_data():
    import pickle

    with pytest.raises(ClusterError, match="hold a dict, not a Cluster snapshot"):
        restore(pickle.dumps({"a": 1}))
    with pytest.raises(ClusterError, match=r"these 7 bytes are not a kafkasim snapshot"):
        restore(b"garbage")
    with pytest.raises(ClusterError, match="needs the bytes snapshot"):
        restore("garbage")


def test_request_timeouts_cancelled_out_of_order_are_compacted_without_moving_the_live_ones():
    """TimeoutScheduler.add_timeout keeps a FIFO per owner and delay; entries cancelled out of
    order stay inside it until the metrics sample compacts long FIFOs. The live ones still fire
    on time, in (deadline, id) order."""
    c = Cluster(3, seed=1, kafka_version=ZK)
    fired = []

    def timer(broker, i):
        fired.append((c.now, broker.id, i))

    owner = ("broker", 1, c.brokers[1].incarnation)
    start = c.now
    tids = [c.timeout_scheduler.add_timeout(owner, 5000, timer, (i,)) for i in range(2000)]
    for i, tid in enumerate(tids):
        if i % 100:                 # keep every 100th: the rest are cancelled out of order
            c.timeout_scheduler.cancel_timeout(tid)
    fifo = c.timeout_scheduler.timeouts[owner][0][5000]
    assert len(fifo) > 1000         # the cancelled ones behind the live head are still there
    c.run(c.metrics.interval_ms)    # a metrics sample
    assert len(fifo) == 20
    c.run(5000)
    assert fired == [(start + 5000, 1, i) for i in range(0, 2000, 100)]


def test_network_stats_count_every_message_sent_delivered_and_dropped():
    """Network.stats: "sent" is the number of message ids handed out; every sent message is
    delivered, dropped, held or still in flight."""
    c = Cluster(3, seed=3, kafka_version=ZK)
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all")
    c.transport.drop("FetchRequest", src=2, count=3)
    p.send_many("t", ["a", "b", "c"], partition=0)
    c.run(2000)
    s = c.transport.network.stats
    in_flight = len(c.inspect.messages_in_flight())
    assert s["dropped"] == 1    # the follower waits for its request timeout (30 s) to retry
    assert s["sent"] == c.transport.network.next_msg_id > 0
    assert s["sent"] == s["delivered"] + s["dropped"] + in_flight
