"""kafka.server.AbstractFetcherManager / ReplicaFetcherManager and the order ReplicaManager
.applyDelta works in, driven by Kafka's names (``kafkasim.core.fetcher_manager``,
``kafkasim.core.state_change``, ``kafkasim.control.kraft.image.local_changes_of``).

* AbstractFetcherManagerTest.testAddAndRemovePartition (@3.9.0-rc3) on a FakeContext, and the
  getFetcherId placement testResizeThreadPool checks (each partition on the thread of its leader
  and of getFetcherId).
* A thread left without partitions keeps running until shutdownIdleFetcherThreads
  (AbstractFetcherManager.scala:204-215@3.9.0-rc3), which ReplicaManager calls at the end of
  becomeLeaderOrFollower and of applyDelta -- the latter only when leaders or followers changed
  (ReplicaManager.scala:2752-2769) -- and KafkaApis at the end of handleStopReplicaRequest
  (KafkaApis.scala:372). A follower whose leader epoch moves under the same leader stays on
  the same running thread (addFetcherForPartitions reuses it).
* applyDelta's order: deletes, then the local leaders, then the local followers, each in the
  order TopicsDelta.localChanges' HashSet / HashMaps iterate TopicPartitions; the followers'
  fetchers added in one addFetcherForPartitions (one Fetch for all of a leader's partitions).
* startHighWatermarkCheckPointThread: the highwatermark-checkpoint task starts with the first
  LeaderAndIsr (ZooKeeper) or the first metadata publish (KRaft), its first run at once.

Not ported: testMetricFailedPartitionCount / testDeadThreadCountMetric (kafkasim keeps failed
partitions per thread and has no fetcher metrics registry), testMaybeUpdateTopicIds (no topic ids
in fetch states), testExpandThreadPool / testShrinkThreadPool (num.replica.fetchers is not
dynamic here).
"""

from __future__ import annotations

import pytest
from test_replica_manager_kafka import CONTROLLER, TP, Broker
from test_replica_manager_more_kafka import (
    FOO_UUID,
    LOCAL,
    OTHER,
    KRaftBroker,
    fetcher_of,
    topics_change_delta,
    topics_create_delta,
)

from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.image import local_changes_of
from kafkasim.core.fetcher import FETCHING, InitialFetchState
from kafkasim.core.fetcher_manager import ReplicaFetcherManager
from kafkasim.core.messages import FetchRequest, PartitionState, StopReplicaRequest
from kafkasim.runtime.kafka_apis import handle_stop_replica_request
from kafkasim.settings.javautil import java_string_hash, utils_abs

BAR_UUID = "YmFyYmFyYmFyYmFyYmFyAA"
BAZ_UUID = "YmF6YmF6YmF6YmF6YmF6AA"


def _manager(num_fetchers: int = 1, version: str = "3.9") -> tuple[Broker, ReplicaFetcherManager]:
    b = Broker(version, config={"num.replica.fetchers": num_fetchers})
    return b, ReplicaFetcherManager(b)


def _recorded(b) -> list:
    """(kind, topic, partition) of every trace the broker records from now on."""
    rows: list = []
    b.trace = lambda kind, topic="", partition=-1, detail=None: rows.append(
        (kind, topic, partition))
    return rows


# -- AbstractFetcherManager ----------------------------------------------------------------------
def test_add_and_remove_partition():
    """AbstractFetcherManagerTest.testAddAndRemovePartition@3.9.0-rc3: addFetcherForPartitions
    (InitialFetchState: leader, leader epoch 15, offset 10) makes and starts the thread;
    getFetcher finds it; after removeFetcherForPartitions getFetcher finds none."""
    b, manager = _manager(2)
    b.partition("topic", 0)   # the follower's local log
    tp = ("topic", 0)
    manager.add_fetcher_for_partitions({tp: InitialFetchState(OTHER, 15, 10)})
    thread = manager.get_fetcher(tp)
    assert thread is not None and thread.leader_id == OTHER
    assert thread.fetcher_id == manager.get_fetcher_id(tp)
    # the thread started and ran at once (verify(fetcher).start()): the log has no leader epoch,
    # so the Truncating partition was cut to its HW (0) and is fetched from there at epoch 15
    state = thread.fetch_state(tp)
    assert (state.fetch_offset, state.current_leader_epoch, state.state) == (0, 15, FETCHING)
    assert [type(m).__name__ for _d, m in b.sent] == ["FetchRequest"]
    manager.remove_fetcher_for_partitions({tp})
    assert manager.get_fetcher(tp) is None


def test_get_fetcher_id_is_abs_of_the_topic_hash_and_partition_modulo_num_fetchers():
    """AbstractFetcherManager.getFetcherId@3.9.0-rc3 (testResizeThreadPool's placement check):
    Utils.abs(31 * topic.hashCode + partition) % numFetchersPerBroker, in Java int arithmetic;
    every partition lands on the thread keyed (its leader, its fetcher id)."""
    b, manager = _manager(3)
    tps = [(f"topic_{i}", p) for i in range(3) for p in range(4)]
    for tp in tps:
        b.partition(*tp)
    manager.add_fetcher_for_partitions(
        {tp: InitialFetchState(1 + k % 2, 0, 0) for k, tp in enumerate(tps)})
    for k, tp in enumerate(tps):
        h = java_string_hash(tp[0])
        expected = utils_abs(((31 * h + tp[1] + 2**31) % 2**32) - 2**31) % 3
        assert manager.get_fetcher_id(tp) == expected
        assert tp in b.fetchers[(1 + k % 2, expected)].partitions
    assert manager.partition_count() == len(tps)
    manager.close_all_fetchers()
    assert not b.fetchers


def test_a_thread_left_without_partitions_idles_until_shutdown_idle_fetcher_threads():
    """AbstractFetcherManager.removeFetcherForPartitions leaves an emptied thread running;
    shutdownIdleFetcherThreads shuts down (and forgets) every thread with no partition only."""
    b, manager = _manager()
    for p in (0, 1):
        b.partition("foo", p)
    manager.add_fetcher_for_partitions({("foo", 0): InitialFetchState(1, 0, 0),
                                        ("foo", 1): InitialFetchState(2, 0, 0)})
    idle = manager.get_fetcher(("foo", 0))
    manager.remove_fetcher_for_partitions([("foo", 0)])
    assert b.fetchers[(1, 0)] is idle and not idle.partitions
    manager.shutdown_idle_fetcher_threads()
    assert list(b.fetchers) == [(2, 0)]


# -- ReplicaManager: where Kafka shuts idle threads down ------------------------------------------
def test_become_leader_or_follower_shuts_down_idle_fetcher_threads():
    """becomeLeaderOrFollower ends with replicaFetcherManager.shutdownIdleFetcherThreads
    (ReplicaManager.scala:2066@3.9.0-rc3): the follower of broker 1 becomes leader; the thread
    it fetched with is gone."""
    b = Broker("3.7")
    b.lair(OTHER, 0, (0, 1))
    assert list(b.fetchers) == [(OTHER, 0)]
    b.lair(LOCAL, 1, (0, 1))
    assert not b.fetchers


def test_stop_replica_request_shuts_down_idle_fetcher_threads():
    """KafkaApis.handleStopReplicaRequest ends with shutdownIdleFetcherThreads
    (KafkaApis.scala:372@3.9.0-rc3): the stopped follower's thread is gone."""
    b = Broker("3.7")
    b.lair(OTHER, 0, (0, 1))
    handle_stop_replica_request(b, CONTROLLER, StopReplicaRequest(CONTROLLER, 0, (TP,), False))
    assert not b.fetchers


@pytest.mark.parametrize("version", ["3.9", "4.3"])
def test_apply_delta_keeps_the_running_thread_when_the_leader_epoch_moves(version):
    """applyLocalFollowersDelta removes the fetcher and adds it back at the new leader epoch;
    addFetcherForPartitions reuses the running thread of (leader, fetcher id) -- the thread
    object, its request in flight and its fetch session stay (before, kafkasim dropped the
    emptied thread and made a new one)."""
    b = KRaftBroker(version)
    b.apply_delta(*topics_create_delta(LOCAL, False))
    (thread,) = b.fetchers.values()
    in_flight = thread.in_flight
    assert in_flight >= 0
    b.apply_delta(*topics_change_delta(LOCAL, False))
    assert list(b.fetchers.values()) == [thread] and thread.in_flight == in_flight
    leader, state = fetcher_of(b)
    assert (leader, state.current_leader_epoch) == (OTHER, 1)


@pytest.mark.parametrize("version", ["3.9", "4.3"])
def test_apply_delta_shuts_down_the_old_leaders_thread(version):
    """A follower whose leader moves from broker 1 to broker 2: the thread to broker 1 is left
    idle and applyDelta's shutdownIdleFetcherThreads removes it."""
    b = KRaftBroker(version)
    b.apply_delta(*topics_create_delta(LOCAL, False))
    assert [k[0] for k in b.fetchers] == [OTHER]
    b.apply_delta(R.PartitionChangeRecord(0, FOO_UUID, leader=2, isr=(0, 2), replicas=(0, 2)))
    assert [k[0] for k in b.fetchers] == [2]


@pytest.mark.parametrize("version", ["3.9", "4.3"])
def test_apply_delta_with_deletes_only_leaves_idle_threads(version):
    """applyDelta calls shutdownIdleFetcherThreads only when leaders or followers changed
    (ReplicaManager.scala:2752-2769@3.9.0-rc3, :2389-2409@4.3.0): removing the topic the broker
    followed leaves its thread idle, until a later delta makes a leader or follower."""
    b = KRaftBroker(version)
    b.apply_delta(*topics_create_delta(LOCAL, False))
    b.apply_delta(R.RemoveTopicRecord(FOO_UUID))
    (thread,) = b.fetchers.values()
    assert not thread.partitions
    b.apply_delta(R.TopicRecord("bar", BAR_UUID),
                  R.PartitionRecord(0, BAR_UUID, (0, 1), (0, 1), leader=LOCAL, leader_epoch=0,
                                    partition_epoch=0))
    assert not b.fetchers


# -- applyDelta's order -------------------------------------------------------------------------
def test_local_changes_iterate_in_topic_partition_hash_order():
    """TopicsDelta.localChanges fills HashMaps keyed by TopicPartition (hashCode 31 * (31 +
    partition) + topic.hashCode): foo-0..3 hash to buckets 6, 7, 4, 5 of 16, so Kafka walks
    foo-2, foo-3, foo-0, foo-1 -- and applyLocalLeadersDelta makes them leader in that order."""
    changed = [("foo", p) for p in range(4)]
    b = KRaftBroker("3.9")
    rows = _recorded(b)
    b.apply_delta(R.TopicRecord("foo", FOO_UUID), *(
        R.PartitionRecord(p, FOO_UUID, (0, 1), (0, 1), leader=LOCAL, leader_epoch=0,
                          partition_epoch=0) for p in range(4)))
    assert [r[2] for r in rows if r[0] == "become_leader"] == [2, 3, 0, 1]
    changes = local_changes_of(LOCAL, {}, b.image.partitions, changed)
    assert list(changes.leaders) == [("foo", 2), ("foo", 3), ("foo", 0), ("foo", 1)]
    assert list(changes.elected_leaders) == list(changes.leaders)


@pytest.mark.parametrize("version", ["3.9", "4.3"])
def test_apply_delta_deletes_then_leaders_then_followers(version):
    """ReplicaManager.applyDelta: the deletes first, then applyLocalLeadersDelta, then
    applyLocalFollowersDelta, whatever the records' order: a delta naming a followed partition
    (bar-0), then a led one (baz-0), then removing foo (followed before) stops foo-0, makes
    baz-0 leader, then bar-0 follower."""
    b = KRaftBroker(version)
    b.apply_delta(*topics_create_delta(LOCAL, False))
    rows = _recorded(b)
    b.apply_delta(
        R.TopicRecord("bar", BAR_UUID),
        R.PartitionRecord(0, BAR_UUID, (0, 1), (0, 1), leader=OTHER, leader_epoch=0,
                          partition_epoch=0),
        R.TopicRecord("baz", BAZ_UUID),
        R.PartitionRecord(0, BAZ_UUID, (0, 1), (0, 1), leader=LOCAL, leader_epoch=0,
                          partition_epoch=0),
        R.RemoveTopicRecord(FOO_UUID))
    steps = [(kind, topic) for kind, topic, _p in rows
             if kind in ("stop_replica", "become_leader", "become_follower")]
    assert steps == [("stop_replica", "foo"), ("become_leader", "baz"),
                     ("become_follower", "bar")]


@pytest.mark.parametrize("version", ["3.9", "4.3"])
def test_apply_delta_adds_the_followers_fetchers_together(version):
    """applyLocalFollowersDelta makes every partition follower first, then adds their fetchers
    in one addFetcherForPartitions: the new thread's first Fetch carries all of the leader's
    partitions (kafkasim used to add them one at a time, the first Fetch holding only the
    first)."""
    b = KRaftBroker(version)
    b.apply_delta(R.TopicRecord("foo", FOO_UUID), *(
        R.PartitionRecord(p, FOO_UUID, (0, 1), (0, 1), leader=OTHER, leader_epoch=0,
                          partition_epoch=0) for p in range(3)))
    fetches = [m for d, m in b.sent if isinstance(m, FetchRequest)]
    assert len(fetches) == 1
    assert sorted((fp.topic, fp.partition) for fp in fetches[0].partitions) == \
        [("foo", 0), ("foo", 1), ("foo", 2)]


def test_a_partition_epoch_that_did_not_move_is_no_local_change():
    """TopicDelta.localChanges: a changed partition the broker leads or follows counts only if
    its partition epoch moved (or it is new); one that no longer lists the broker is a delete
    only if the previous registration listed it."""
    st = PartitionState("foo", 0, -1, OTHER, 0, (0, 1), 3, (0, 1))
    gone = PartitionState("foo", 1, -1, OTHER, 0, (1, 2), 3, (1, 2))
    b = KRaftBroker("3.9")
    b.apply_delta(R.TopicRecord("foo", FOO_UUID), *(
        R.PartitionRecord(p, FOO_UUID, (1, 2) if p else (0, 1), (1, 2) if p else (0, 1),
                          leader=OTHER, leader_epoch=0, partition_epoch=3) for p in range(2)))
    changes = local_changes_of(LOCAL, {("foo", 0): st, ("foo", 1): gone}, b.image.partitions,
                               [("foo", 0), ("foo", 1)])
    assert changes == ((), {}, {}, {})
    changes = local_changes_of(LOCAL, {("foo", 1): st}, b.image.partitions, [("foo", 1)])
    assert changes.deletes == (("foo", 1),)


# -- startHighWatermarkCheckPointThread -----------------------------------------------------------
def test_high_watermark_checkpoint_thread_starts_with_the_first_leader_and_isr():
    """ReplicaManager.becomeLeaderOrFollower calls startHighWatermarkCheckPointThread once the
    partitions are populated (ReplicaManager.scala:2062@3.9.0-rc3); it starts once."""
    b = Broker("3.7")
    calls = []
    b.log_manager.start_high_watermark_checkpoints = lambda ctx: calls.append(ctx.now)
    assert not b.rm.high_watermark_check_point_thread_started
    b.lair(OTHER, 0, (0, 1))
    b.lair(LOCAL, 1, (0, 1))
    assert b.rm.high_watermark_check_point_thread_started and calls == [0]


@pytest.mark.parametrize("version,mode", [("3.7", "zookeeper"), ("3.9", "kraft"),
                                          ("4.3", "kraft")])
def test_first_high_watermark_checkpoint_runs_when_the_replicas_are_made(version, mode,
                                                                         monkeypatch):
    """The highwatermark-checkpoint task first runs when the broker's first LeaderAndIsr
    (ZooKeeper: the topic's creation) or first metadata publish (KRaft, at startup:
    BrokerMetadataPublisher.finishInitializingReplicaManager) made its replicas --
    KafkaScheduler.schedule with delay 0 -- then every replica.high.watermark.checkpoint
    .interval.ms (5000; kafkasim ran it one interval after the broker started)."""
    from kafkasim.runtime.cluster import Cluster
    from kafkasim.runtime.log_manager import LogManager

    calls: list = []
    original = LogManager.start_high_watermark_checkpoints

    def spy(ctx):
        calls.append((ctx.id, ctx.now))
        original(ctx)

    monkeypatch.setattr(LogManager, "start_high_watermark_checkpoints", staticmethod(spy))
    c = Cluster(3, kafka_version=version, metadata_mode=mode, seed=1)
    c.run(100)
    if mode == "zookeeper":
        assert not calls   # no LeaderAndIsr yet: no replica, no checkpoint task
    created = c.now
    c.create_topic("t", 1, 3)
    c.run(100)
    assert sorted(b for b, _t in calls) == [1, 2, 3] or sorted(b for b, _t in calls) == [0, 1, 2]
    assert all(t < (created + 100 if mode == "zookeeper" else 2000) for _b, t in calls)
    assert all(b.replica_manager.high_watermark_check_point_thread_started
               for b in c.brokers.values())
