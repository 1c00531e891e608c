"""The broker data path, session 24: ReplicaManager.applyDelta's fetcher restarts and
AbstractFetcherThread's failed partitions, driven by Kafka's names.

Sources (read in the mirrors, never copied):

* ReplicaManager.applyLocalFollowersDelta @3.9.0-rc3 and @4.3.0 (confluentinc a9ce322153):
  the fetcher of a followed partition is removed and added again only when Partition.makeFollower
  answers true (a new leader epoch; 3.0-3.2: a new leader or leader epoch). A delta that keeps
  the leader epoch (an ISR or assignment change) leaves the fetchers alone -- also when the
  partition has none, e.g. after the fetcher marked it failed (KIP-461). Kafka's test of the
  rule is ReplicaManagerTest.testFetcherAreNotRestartedIfLeaderEpochIsNotBumped (ported in
  tests/test_replica_manager_ports_s23_kafka.py with a live fetcher); the port here combines
  it with the failed partition of AbstractFetcherThreadTest.verifyFetcherThreadHandlingPartition
  Failure. kafkasim restarted the missing fetcher; fixed in ``_keeps_fetching``.
* AbstractFetcherThreadTest @3.9.0-rc3 / @4.3.0: testFetcherThreadHandlingPartitionFailure
  DuringAppending / ...DuringTruncation (a partition whose append or truncation throws is
  marked failed, the others carry on, a new leader epoch adds it back: doTruncate and the
  ``case t: Throwable`` of processFetchRequest, 2.3+; kafkasim caught only
  UnexpectedAppendOffsetException and had no failure path for truncation, both fixed),
  testTruncationThrowsExceptionIfLeaderReturnsPartitionsNotRequestedInFetchEpochs
  (truncateToEpochEndOffsets' IllegalStateException, 2.2+; kafkasim ignored such an answer,
  fixed), and @4.3.0 testEmptyFollowerFetchTieredStorageDisabledLeaderLogStartOffsetZero /
  ...NonZero (an empty follower catching up with a leader whose log starts at 0 or 10).

* ReplicaFetcherThreadTest.testLocalFetchCompletionIfHighWatermarkUpdated (@3.9.0-rc3,
  @4.3.0; KAFKA-14334, 3.4.0): a follower whose HW moved completes the consumer fetches parked
  at it; before 3.4 they waited for MaxWaitMs (new rule ``follower_hw_completes_delayed_fetch``;
  kafkasim completed them in every release). Run on a real cluster with a rack-aware selector.
* AbstractFetcherManagerTest @4.3.0: testAddAndRemovePartition, testMetricFailedPartitionCount
  (removeFetcherForPartitions also forgets a failed partition: failedPartitions.removeAll;
  kafkasim kept it, fixed).
* ReplicaManager.makeFollowers / applyLocalFollowersDelta's completeDelayedFetchOrProduce
  Requests for a partition that was already a follower: a consumer fetch parked at it (KIP-392)
  and fenced by the new leader epoch answers at once (kafkasim waited for MaxWaitMs; fixed).

* Kafka-named entry points for AbstractFetcherThreadTest's calls: ReplicaFetcherThread
  ``add_partitions`` (InitialFetchState; partitionFetchState's choice of Fetching / Truncating,
  the state kept at the same leader epoch), ``remove_partitions`` and ``fetch_state``.

* ``ReplicaManager.apply_delta(delta, image)`` (Kafka's applyDelta: deletes, then leaders, then
  followers) with ``kafkasim.control.kraft.image.TopicsDelta`` (replay / apply / local_changes,
  the previous image left untouched): TopicsImageTest.testDeleteAfterChanges,
  testUpdatedLeaders, testLocalReassignmentChanges, testBasicLocalChanges (@3.9.0-rc3), and
  ReplicaManagerTest.testDeltaFromLeaderToFollower / testDeltaLeaderToRemovedTopic through it.
  (The simulated broker keeps kafkasim.runtime.broker_lifecycle.publish, record order.)

The thread runs on tests/test_fetcher_thread_kafka's ``Env`` (a FakeContext follower and a
MockLeader answering one batch per fetch, as Kafka's MockLeaderEndPoint); the KRaft broker is
tests/test_replica_manager_more_kafka's ``KRaftBroker`` (TopicsDelta records replayed on a
metadata image and published to ReplicaManager.applyDelta). Kafka's MockFetcherThread
overrides (processPartitionData, truncate, fetchEpochEndOffsets) are subclasses here.

Not ported: ReplicaFetcherThreadTest.testBuildFetch (its point is a topic id replaced in the
session), the tiered-storage-enabled halves of testEmptyFollowerFetch* and every
testLastTieredOffset* (kafkasim has no remote log), testMaybeUpdateTopicIds (no topic ids in
the fetch state), testMetricsRemovedOnShutdown / testConsumerLagRemovedWithPartition /
testDeadThreadCountMetric (no fetcher metrics registry), testExpandThreadPool /
testShrinkThreadPool (no dynamic num.replica.fetchers).
"""

from __future__ import annotations

import pytest
from test_fetcher_thread_kafka import FOLLOWER, LEADER, Env, MockLeader, batch, records
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
from kafkasim.core import errors as E
from kafkasim.core.fetcher import FETCHING, TRUNCATING, ReplicaFetcherThread
from kafkasim.core.messages import FetchRequest, OffsetsForLeaderEpochResponse

VERSIONS = ("3.9", "4.3")
P1, P2 = ("topic1", 0), ("topic2", 0)


# -- ReplicaManager.applyDelta: fetchers restart only on a new leader epoch ---------------------
def _kraft_follower(version: str) -> tuple[KRaftBroker, object]:
    """Broker 0 follows broker 1 (topicsCreateDelta(0, false)); its fetch state."""
    b = KRaftBroker(version)
    b.apply_delta(*topics_create_delta(LOCAL, False))
    leader, state = fetcher_of(b)
    assert leader == OTHER and state.current_leader_epoch == 0
    return b, state


def _fail_partition(b: KRaftBroker) -> ReplicaFetcherThread:
    """The fetcher marks foo-0 failed (onPartitionFenced / a failed append, KIP-461)."""
    (thread,) = b.fetchers.values()
    thread.mark_partition_failed(b, ("foo", 0), "test")
    assert fetcher_of(b) is None and ("foo", 0) in thread.failed_partitions
    return thread


@pytest.mark.parametrize("version", VERSIONS)
def test_fetcher_are_not_restarted_if_leader_epoch_is_not_bumped_for_a_failed_partition(version):
    """ReplicaManagerTest.testFetcherAreNotRestartedIfLeaderEpochIsNotBumped (@4.3.0; the 3.9
    ...WithKRaftPath) with the partition failed in its fetcher first
    (AbstractFetcherThreadTest.verifyFetcherThreadHandlingPartitionFailure's failed partition):
    a PartitionChangeRecord adding replica 2 bumps the partition epoch only, makeFollower
    answers false and applyLocalFollowersDelta neither removes nor adds a fetcher, so the
    partition stays failed and unfetched; the delta that bumps the leader epoch adds it back
    (epoch 1, no longer failed)."""
    b, _state = _kraft_follower(version)
    thread = _fail_partition(b)
    b.apply_delta(R.PartitionChangeRecord(0, FOO_UUID, isr=(0, 1), replicas=(0, 1, 2)))
    part = b.part()
    assert (part.get_leader_epoch(), part.get_partition_epoch()) == (0, 1)
    assert fetcher_of(b) is None and ("foo", 0) in thread.failed_partitions
    b.apply_delta(*topics_change_delta(LOCAL, False))
    assert (part.get_leader_epoch(), part.get_partition_epoch()) == (1, 2)
    leader, state = fetcher_of(b)
    assert (leader, state.current_leader_epoch) == (OTHER, 1)
    assert not any(("foo", 0) in t.failed_partitions for t in b.fetchers.values())


@pytest.mark.parametrize("version", VERSIONS)
def test_isr_only_delta_keeps_a_live_fetcher_and_its_position(version):
    """ReplicaManagerTest.testFetcherAreNotRestartedIfLeaderEpochIsNotBumped @4.3.0, the
    fetcher's side: an ISR-only PartitionChangeRecord keeps the very fetch state (same object,
    same offset and epoch) after the follower has fetched ahead."""
    b, state = _kraft_follower(version)
    state.fetch_offset = 7
    b.apply_delta(R.PartitionChangeRecord(0, FOO_UUID, isr=(1,)))
    leader, after = fetcher_of(b)
    assert after is state and (leader, after.fetch_offset, after.current_leader_epoch) == \
        (OTHER, 7, 0)


# -- AbstractFetcherThread: a failing partition leaves the fetcher ------------------------------
class _AppendFails(ReplicaFetcherThread):
    """MockFetcherThread whose processPartitionData throws for topic1-0."""

    def process_partition_data(self, ctx, tp, st, log, pd) -> None:
        if tp == P1:
            raise E.KafkaException("processing partition data failed")
        super().process_partition_data(ctx, tp, st, log, pd)


class _TruncateFails(ReplicaFetcherThread):
    """MockFetcherThread whose truncate throws for topic1-0."""

    def truncate(self, ctx, tp, offset: int, reason: str) -> None:
        if tp == P1:
            raise E.KafkaException("truncation failed")
        super().truncate(ctx, tp, offset, reason)


def _verify_fetcher_thread_handling_partition_failure(env: Env) -> None:
    """AbstractFetcherThreadTest.verifyFetcherThreadHandlingPartitionFailure: both partitions
    start Truncating at offset 0, epoch 0 (forceTruncation); the first round fails topic1-0,
    which leaves the fetcher as a failed partition; topic2-0 goes on Fetching; a new leader
    epoch (removePartitions, then addPartitions at epoch 1) adds topic1-0 back, Truncating."""
    for tp in (P1, P2):
        env.replica(tp, epoch_zero=True)
        env.add(tp, offset=0, epoch=0, state=TRUNCATING)
        env.leader.set_state(tp, [], leader_epoch=0, hw=0)
    env.run_round()
    assert P1 in env.th.failed_partitions and env.st(P1) is None
    env.run_round()
    assert env.st(P2).state == FETCHING and P2 not in env.th.failed_partitions
    env.th.remove_partition(P1)
    env.add(P1, offset=0, epoch=1, state=TRUNCATING)
    assert env.st(P1).state == TRUNCATING and P1 not in env.th.failed_partitions


@pytest.mark.parametrize("version", VERSIONS)
def test_fetcher_thread_handling_partition_failure_during_appending(version):
    """AbstractFetcherThreadTest.testFetcherThreadHandlingPartitionFailureDuringAppending
    (@3.9.0-rc3, @4.3.0): processPartitionData throws a KafkaException for topic1-0."""
    env = Env(version)
    env.th = _AppendFails(FOLLOWER, LEADER, 0)
    _verify_fetcher_thread_handling_partition_failure(env)


@pytest.mark.parametrize("version", VERSIONS)
def test_fetcher_thread_handling_partition_failure_during_truncation(version):
    """AbstractFetcherThreadTest.testFetcherThreadHandlingPartitionFailureDuringTruncation
    (@3.9.0-rc3, @4.3.0): truncate throws for topic1-0 (doTruncate marks it failed)."""
    env = Env(version)
    env.th = _TruncateFails(FOLLOWER, LEADER, 0)
    _verify_fetcher_thread_handling_partition_failure(env)


def test_truncation_failure_is_raised_before_2_3():
    """AbstractFetcherThread.maybeTruncateToEpochEndOffsets @2.2.0 catches only
    KafkaStorageException (the partition backs off); any other exception ends the thread
    (not modelled: raised), before doTruncate and markPartitionFailed (KIP-461, 2.3)."""
    env = Env("2.2")
    env.th = _TruncateFails(FOLLOWER, LEADER, 0)
    env.replica(P1, epoch_zero=True)
    env.add(P1, offset=0, epoch=0, state=TRUNCATING)
    env.leader.set_state(P1, [], leader_epoch=0, hw=0)
    with pytest.raises(E.KafkaException):
        env.run_round()


class _ExtraEpochAnswer(MockLeader):
    """MockLeaderEndPoint whose fetchEpochEndOffsets also answers topic2-0 (not asked)."""

    def epochs(self, req):
        resp = super().epochs(req)
        extra = (("topic2", 0, E.NONE, 0, 0),)
        return OffsetsForLeaderEpochResponse(resp.correlation_id, resp.partitions + extra)


@pytest.mark.parametrize("version", VERSIONS)
def test_truncation_throws_exception_if_leader_returns_partitions_not_requested_in_fetch_epochs(
        version):
    """AbstractFetcherThreadTest.testTruncationThrowsExceptionIfLeaderReturnsPartitionsNot
    RequestedInFetchEpochs (@3.9.0-rc3, @4.3.0): the first truncation round throws
    IllegalStateException; the partition is still Truncating, its log untouched."""
    tp = ("topic", 0)
    env = Env(version)
    env.leader = _ExtraEpochAnswer()
    env.replica(tp, epoch_zero=True)
    env.add(tp, offset=0, epoch=0, state=TRUNCATING)
    env.leader.set_state(tp, [], leader_epoch=0, hw=0)
    with pytest.raises(E.IllegalStateException, match="not requested"):
        env.run_round()
    assert env.st(tp).state == TRUNCATING and env.log(tp).log_end_offset == 0


# -- AbstractFetcherThreadTest @4.3.0: an empty follower, tiered storage disabled ---------------
def _leader_batches_at(env: Env, tp, log_start: int) -> None:
    """The leader log of testEmptyFollowerFetchTieredStorageDisabled*: one-record batches at
    ``log_start``, 150 and 199, leader epoch 0, high watermark 199. kafkasim's log is dense,
    so the gaps are filler batches (one record per offset) the leader hands out too."""
    env.leader.set_state(tp, [batch(0, 1)], leader_epoch=0, hw=199, log_start=log_start)
    lp = env.leader.state(tp)
    for base, n in ((log_start + 1, 150 - log_start - 1), (150, 1), (151, 48), (199, 1)):
        first, _ = lp.log.append_as_leader(list(range(n)), [10] * n, 0, 0)
        assert first == base
        lp.batches.append((base, n, 0))


def _empty_replica(env: Env, tp) -> None:
    """emptyReplicaState: an empty follower log (HW 0) fetching from 0 at leader epoch 0."""
    env.replica(tp)
    env.add(tp, offset=0, epoch=0)


def _fetch_until(env: Env, tp, leo: int, rounds: int = 20) -> None:
    for _ in range(rounds):
        if env.log(tp).log_end_offset >= leo:
            return
        env.run_round()
    raise AssertionError(f"never reached {leo}: {env.log(tp).log_end_offset}")


def test_empty_follower_fetch_tiered_storage_disabled_leader_log_start_offset_zero():
    """AbstractFetcherThreadTest.testEmptyFollowerFetchTieredStorageDisabledLeaderLogStart
    OffsetZero @4.3.0: the first fetch takes the batch at 0 (LEO 1, fetch offset 1, log start
    0, Fetching); fetching on ends at LEO 200 with the leader's HW 199, log start still 0."""
    tp = P1
    env = Env("4.3")
    _empty_replica(env, tp)
    _leader_batches_at(env, tp, 0)
    env.run_round()
    log = env.log(tp)
    assert (env.st(tp).state, env.st(tp).fetch_offset) == (FETCHING, 1)
    assert (log.log_start_offset, log.log_end_offset) == (0, 1)
    _fetch_until(env, tp, 200)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (0, 200, 199)
    assert records(log) == records(env.leader.state(tp).log)


def test_empty_follower_fetch_tiered_storage_disabled_leader_log_start_offset_non_zero():
    """AbstractFetcherThreadTest.testEmptyFollowerFetchTieredStorageDisabledLeaderLogStart
    OffsetNonZero @4.3.0: the fetch at 0 is OFFSET_OUT_OF_RANGE (the leader starts at 10): no
    records, the empty follower log restarts at 10 (log start = LEO = fetch offset = 10,
    Fetching); fetching on ends at LEO 200, HW 199, log start 10."""
    tp = P1
    env = Env("4.3")
    _empty_replica(env, tp)
    _leader_batches_at(env, tp, 10)
    env.th.do_work(env.ctx)
    req = env.pending()
    assert isinstance(req, FetchRequest) and req.partitions[0].fetch_offset == 0
    env.answer()
    log = env.log(tp)
    assert (env.st(tp).state, env.st(tp).fetch_offset) == (FETCHING, 10)
    assert (log.log_start_offset, log.log_end_offset, len(records(log))) == (10, 10, 0)
    _fetch_until(env, tp, 200)
    assert (log.log_start_offset, log.log_end_offset, log.high_watermark) == (10, 200, 199)


# -- ReplicaFetcherThreadTest @4.3.0: a follower's new HW completes parked consumer fetches ------
def _parked_at_follower(version: str):
    """A consumer in rack c reads from follower 3 (RackAwareReplicaSelector) with
    fetch.max.wait.ms 5000, has read v0-v4 and fetches again (parked at broker 3: nothing
    above its HW); then "late" is produced (acks=all) at leader 1."""
    from test_fetch_from_follower import SELECTOR, cluster
    c = cluster(SELECTOR, version=version)
    cons = c.consumer(group="g", client_rack="c", auto_offset_reset="earliest",
                      fetch_max_wait_ms=5000)
    cons.assign("t", [0])
    assert len(cons.poll()) == 5 and cons.fetching_from("t") == 3
    p = c.producer(acks="all")
    p.send("t", "late", partition=0)
    p.flush()
    return c, cons


@pytest.mark.parametrize("version", ("3.4", "3.9", "4.3"))
def test_local_fetch_completion_if_high_watermark_updated(version):
    """ReplicaFetcherThreadTest.testLocalFetchCompletionIfHighWatermarkUpdated (@3.9.0-rc3,
    @4.3.0; KAFKA-14334, 3.4.0), highWatermarkUpdated = true: the follower's fetch that moves
    its HW completes the consumer fetch parked there (completeDelayedFetchRequests after
    doWork), within a replica fetch round, long before the consumer's MaxWaitMs (5000)."""
    c, cons = _parked_at_follower(version)
    t0 = c.now
    got = cons.poll(10000)
    assert [r.value for r in got] == ["late"]
    assert c.now - t0 < 1000


def test_local_fetch_completion_waits_for_max_wait_before_3_4():
    """ReplicaFetcherThread @3.3.0 (before KAFKA-14334): processPartitionData sets the follower
    HW and completes nothing, so the parked consumer fetch is answered at its MaxWaitMs; the
    record then arrives with it (about 5000 ms after the produce)."""
    c, cons = _parked_at_follower("3.3")
    t0 = c.now
    got = cons.poll(10000)
    assert [r.value for r in got] == ["late"]
    assert c.now - t0 >= 4500


def test_local_fetch_completion_not_when_high_watermark_not_updated():
    """ReplicaFetcherThreadTest.testLocalFetchCompletionIfHighWatermarkUpdated @4.3.0,
    highWatermarkUpdated = false: follower fetches that leave the follower's HW where it was
    complete nothing. Nothing is produced: broker 3 keeps fetching from leader 1 (empty
    answers, same HW) while the consumer's fetch (MaxWaitMs 5000) stays parked at it."""
    from test_fetch_from_follower import SELECTOR, cluster
    c = cluster(SELECTOR, version="4.3")
    cons = c.consumer(group="g", client_rack="c", auto_offset_reset="earliest",
                      fetch_max_wait_ms=5000)
    cons.assign("t", [0])
    assert len(cons.poll()) == 5 and cons.fetching_from("t") == 3
    b3 = c.brokers[3]
    hw = b3.logs[("t", 0)].high_watermark
    fetches = sum(t.fetch_count for t in b3.fetchers.values())
    assert cons.poll(2000) == []
    assert sum(t.fetch_count for t in b3.fetchers.values()) > fetches + 1
    assert b3.logs[("t", 0)].high_watermark == hw
    parked = list(b3.replica_manager.delayed_fetch.values())
    assert [df.request.replica_id for df in parked] == [-1]   # the consumer's, still parked


# -- AbstractFetcherManagerTest @4.3.0 -------------------------------------------------------------
def _failed_partitions_count(ctx) -> int:
    """The FailedPartitionsCount gauge: the failed partitions of the broker's fetchers."""
    return sum(len(t.failed_partitions) for t in ctx.fetchers.values())


@pytest.mark.parametrize("version", VERSIONS)
def test_metric_failed_partition_count(version):
    """AbstractFetcherManagerTest.testMetricFailedPartitionCount (@3.9.0-rc3, @4.3.0): 0 at
    first; a partition marked failed counts 1; removeFetcherForPartitions of it takes it out
    of the failed partitions (failedPartitions.removeAll) and the count is 0 again."""
    b, _state = _kraft_follower(version)
    assert _failed_partitions_count(b) == 0
    _fail_partition(b)
    assert _failed_partitions_count(b) == 1
    b.rm.remove_fetcher_for_partition(b, ("foo", 0))
    assert _failed_partitions_count(b) == 0


@pytest.mark.parametrize("version", VERSIONS)
def test_add_and_remove_partition(version):
    """AbstractFetcherManagerTest.testAddAndRemovePartition (@3.9.0-rc3, @4.3.0):
    addFetcherForPartitions of topic-0 (leader 0, leader epoch 15, offset 10) makes the fetcher
    for (0, getFetcherId) that holds it (getFetcher); removeFetcherForPartitions leaves no
    fetcher holding it."""
    from test_replica_manager_kafka import Broker

    from kafkasim.core.fetcher import PartitionFetchState, fetcher_id_for
    b = Broker(version)
    b.log_manager.get_or_create_log(b, "topic", 0)
    tp = ("topic", 0)
    state = PartitionFetchState(10, 15, TRUNCATING)
    b.rm.add_fetcher_for_partition(b, tp, 0, state)
    key = (0, fetcher_id_for("topic", 0, b.config["num.replica.fetchers"]))
    assert list(b.fetchers) == [key]
    # the thread holds this fetch state (and has started on it: kafkasim's thread runs at
    # once, where Kafka's test mocks it)
    assert b.fetchers[key].partitions[tp] is state and state.current_leader_epoch == 15
    b.rm.remove_fetcher_for_partition(b, tp)
    assert not any(tp in t.partitions for t in b.fetchers.values())


# -- makeFollowers / applyLocalFollowersDelta: completeDelayedFetchOrProduceRequests ------------
def _parked_consumer_at_follower(version: str, kraft: bool, epoch: int):
    """Broker 0 follows broker 1 at leader epoch 0 (empty log); a consumer with client metadata
    (rack "c": Fetch v11+, served by a follower) fetches offset 0 with current leader epoch
    ``epoch``, MaxWaitMs 5000: nothing to read, so it is parked here."""
    from test_replica_manager_ports_s23_kafka import KBroker
    b = KBroker(version)
    if kraft:
        b.kdelta(1, 0, (0, 1))
    else:
        b.lair(1, 0, (0, 1))
    corr = b.fetch(-1, 0, epoch=epoch, max_wait_ms=5000, rack="c")
    assert b.fetch_answer(corr) is None and len(b.rm.delayed_fetch) == 1
    return b, corr


@pytest.mark.parametrize(("version", "kraft"), [("3.7", False), ("3.9", True), ("4.3", True)])
def test_become_follower_completes_a_consumer_fetch_fenced_by_the_new_leader_epoch(version,
                                                                                    kraft):
    """ReplicaManager.makeFollowers (@3.7.0, ZooKeeper) and applyLocalFollowersDelta
    (@3.9.0-rc3, @4.3.0) call completeDelayedFetchOrProduceRequests for every partition whose
    fetcher restarts, also one that was a follower before: DelayedFetch.tryComplete then finds
    the parked consumer fetch's current leader epoch (0) below the partition's (1) -- case E,
    fenced (DelayedFetchTest.testFetchWithFencedEpoch) -- and it is answered at once with
    FENCED_LEADER_EPOCH. kafkasim completed only the fetches parked at an old leader."""
    b, corr = _parked_consumer_at_follower(version, kraft, epoch=0)
    if kraft:
        b.kdelta(1, 1, (0, 1))
    else:
        b.lair(1, 1, (0, 1))
    assert b.fetch_data(corr).error == E.FENCED_LEADER_EPOCH
    assert not b.rm.delayed_fetch


@pytest.mark.parametrize("version", ("3.9", "4.3"))
def test_become_follower_leaves_a_consumer_fetch_without_epoch_parked(version):
    """The same completeDelayedFetchOrProduceRequests for a consumer fetch without a current
    leader epoch (-1): tryComplete finds it neither fenced nor with bytes to read, so it stays
    parked until its MaxWaitMs, as in Kafka."""
    b, corr = _parked_consumer_at_follower(version, True, epoch=-1)
    b.kdelta(1, 1, (0, 1))
    assert b.fetch_answer(corr) is None and len(b.rm.delayed_fetch) == 1


# -- AbstractFetcherThread.addPartitions / removePartitions / fetchState -------------------------
@pytest.mark.parametrize(("version", "with_epoch", "state"), [
    ("3.9", True, FETCHING), ("3.9", False, TRUNCATING), ("4.3", True, FETCHING),
    ("2.7", True, TRUNCATING)])
def test_add_partitions_picks_the_initial_fetch_state(version, with_epoch, state):
    """AbstractFetcherThread.addPartitions / partitionFetchState (@2.7.0, @3.9.0-rc3,
    @4.3.0): InitialFetchState(leader 1, epoch 3, offset 2) of a partition not fetched yet.
    With truncation on fetch (2.8+) and a log that has a latest epoch, Fetching from 2 with
    that epoch as LastFetchedEpoch; without an epoch, or before 2.8, Truncating."""
    from kafkasim.core.fetcher import InitialFetchState
    env = Env(version)
    env.replica(P1, batches=[batch(0, 1, 2)] if with_epoch else [], hw=2)
    assert env.th.add_partitions(env.ctx, {P1: InitialFetchState(LEADER, 3, 2)}) == {P1}
    st = env.th.fetch_state(P1)
    assert (st.fetch_offset, st.current_leader_epoch, st.state) == (2, 3, state)
    if state == FETCHING:
        assert st.last_fetched_epoch == 0


def test_add_partitions_keeps_the_state_at_the_same_leader_epoch():
    """AbstractFetcherThread.partitionFetchState @3.9.0-rc3 / @4.3.0: a partition already
    fetched at the InitialFetchState's leader epoch keeps its fetch state (and moves to the
    end of the thread's partitions); a new leader epoch replaces it; a failed partition added
    again is no longer failed. removePartitions answers the removed states; fetchState None
    afterwards."""
    from kafkasim.core.fetcher import InitialFetchState
    env = Env("4.3")
    for tp in (P1, P2):
        env.replica(tp, batches=[batch(0, 1)], hw=1)
    env.th.add_partitions(env.ctx, {P1: InitialFetchState(LEADER, 0, 1),
                                    P2: InitialFetchState(LEADER, 0, 1)})
    first = env.th.fetch_state(P1)
    first.fetch_offset = 5
    env.th.add_partitions(env.ctx, {P1: InitialFetchState(LEADER, 0, 1)})
    assert env.th.fetch_state(P1) is first and list(env.th.partitions) == [P2, P1]
    env.th.mark_partition_failed(env.ctx, P2, "test")
    env.th.add_partitions(env.ctx, {P1: InitialFetchState(LEADER, 1, 1),
                                    P2: InitialFetchState(LEADER, 1, 1)})
    assert env.th.fetch_state(P1) is not first and env.th.fetch_state(P1).fetch_offset == 1
    assert P2 not in env.th.failed_partitions and env.th.fetch_state(P2) is not None
    removed = env.th.remove_partitions([P1, ("topic3", 0)])
    assert list(removed) == [P1] and removed[P1].current_leader_epoch == 1
    assert env.th.fetch_state(P1) is None


def test_add_partitions_refuses_a_negative_offset_and_changes_nothing():
    """InitialFetchState.initOffset < 0 makes Kafka ask the leader for an offset first
    (fetchOffsetAndTruncate), which kafkasim does not model: a ValueError naming the argument,
    and no partition of the call is added."""
    from kafkasim.core.fetcher import InitialFetchState
    env = Env("4.3")
    env.replica(P1)
    env.replica(P2)
    with pytest.raises(ValueError, match="init_offset must be >= 0"):
        env.th.add_partitions(env.ctx, {P1: InitialFetchState(LEADER, 0, 0),
                                        P2: InitialFetchState(LEADER, 0, -1)})
    assert env.th.partitions == {}


# -- TopicsDelta.localChanges and ReplicaManager.applyDelta(delta, image) ------------------------
ZOO_ID = "0hHJ3X5ZQ-CFfQ5xgpj90w"


def _zoo_image(*replica_lists):
    """TopicsImageTest's image of topic zoo: partition i of ``replica_lists[i]`` (newPartition:
    ISR = replicas, leader the first, leader and partition epoch 1)."""
    from kafkasim.control.kraft.image import TopicsDelta
    delta = TopicsDelta()
    delta.replay(R.TopicRecord("zoo", ZOO_ID))
    for pid, replicas in enumerate(replica_lists):
        delta.replay(R.PartitionRecord(pid, ZOO_ID, tuple(replicas), tuple(replicas),
                                       leader=replicas[0], leader_epoch=1, partition_epoch=1))
    return delta.apply()


def _changes(image, *records, broker: int = 3):
    from kafkasim.control.kraft.image import TopicsDelta
    delta = TopicsDelta(image)
    for record in records:
        delta.replay(record)
    return delta, delta.local_changes(broker)


def test_topics_delta_delete_after_changes():
    """TopicsImageTest.testDeleteAfterChanges (@3.9.0-rc3): zoo-0 (replicas 3, 1, 2) moves its
    leadership to 1, then the topic is removed in the same delta: broker 3's local changes are
    the delete of zoo-0 only. The previous image is left as it was."""
    image = _zoo_image((3, 1, 2))
    delta, changes = _changes(image, R.PartitionChangeRecord(0, ZOO_ID, leader=1),
                              R.RemoveTopicRecord(ZOO_ID))
    assert set(changes.deletes) == {("zoo", 0)}
    assert changes.elected_leaders == {} and changes.leaders == {} and changes.followers == {}
    assert ("zoo", 0) in image.partitions and "zoo" not in delta.apply().topic_ids


def test_topics_delta_updated_leaders():
    """TopicsImageTest.testUpdatedLeaders (@3.9.0-rc3): an ISR-only change of zoo-0, led by
    broker 3, is a leader change for it (a new partition epoch) but no elected leader (the same
    leader epoch)."""
    image = _zoo_image((3, 1, 2))
    _delta, changes = _changes(image, R.PartitionChangeRecord(0, ZOO_ID, isr=(3, 1)))
    assert changes.deletes == () and changes.elected_leaders == {}
    assert set(changes.leaders) == {("zoo", 0)} and changes.followers == {}
    assert changes.leaders[("zoo", 0)].isr == (3, 1)


def test_topics_delta_local_reassignment_changes():
    """TopicsImageTest.testLocalReassignmentChanges (@3.9.0-rc3): zoo-0 follower to leader,
    zoo-1 leader to follower, zoo-2 / zoo-3 removed from broker 3 (deletes), zoo-4 not a
    replica to leader, zoo-5 not a replica to follower."""
    image = _zoo_image((0, 1, 3), (3, 1, 2), (0, 1, 3), (3, 1, 2), (0, 1, 2), (0, 1, 2))
    _delta, changes = _changes(
        image,
        R.PartitionChangeRecord(0, ZOO_ID, leader=3),
        R.PartitionChangeRecord(1, ZOO_ID, leader=1),
        R.PartitionChangeRecord(2, ZOO_ID, isr=(0, 1, 2), replicas=(0, 1, 2)),
        R.PartitionChangeRecord(3, ZOO_ID, leader=0, isr=(0, 1, 2), replicas=(0, 1, 2)),
        R.PartitionChangeRecord(4, ZOO_ID, leader=3, isr=(3, 1, 2), replicas=(3, 1, 2)),
        R.PartitionChangeRecord(5, ZOO_ID, isr=(0, 1, 3), replicas=(0, 1, 3)))
    assert set(changes.deletes) == {("zoo", 2), ("zoo", 3)}
    assert set(changes.elected_leaders) == {("zoo", 0), ("zoo", 4)}
    assert set(changes.leaders) == {("zoo", 0), ("zoo", 4)}
    assert set(changes.followers) == {("zoo", 1), ("zoo", 5)}


@pytest.mark.parametrize("version", VERSIONS)
def test_delta_from_leader_to_follower_through_apply_delta(version):
    """ReplicaManagerTest.testDeltaFromLeaderToFollower (@3.9.0-rc3, @4.3.0) through
    ReplicaManager.apply_delta(delta, image): topicsCreateDelta(0, leader) makes broker 0 the
    leader (ISR {0, 1}, epoch 0, no fetcher); an acks=-1 produce of 3 records completes once
    follower 1 fetches from 3; topicsChangeDelta(0, follower) makes it a follower at epoch 1
    fetching from broker 1, and a produce there fails NOT_LEADER_OR_FOLLOWER."""
    from test_replica_manager_ports_s23_kafka import KBroker

    from kafkasim.control.kraft.image import TopicsDelta
    b = KBroker(version)
    delta = TopicsDelta()
    for record in topics_create_delta(LOCAL, True):
        delta.replay(record)
    image = delta.apply()
    b.rm.apply_delta(b, delta, image)
    part = b.part()
    assert part.is_leader and part.in_sync_replica_ids() == {LOCAL, OTHER}
    assert part.get_leader_epoch() == 0 and fetcher_of(b) is None
    corr = b.produce(3)
    b.fetch(OTHER, 3, epoch=0)
    assert b.produce_answer(corr).partitions[0][2] == E.NONE
    delta = TopicsDelta(image)
    for record in topics_change_delta(LOCAL, False):
        delta.replay(record)
    b.rm.apply_delta(b, delta, delta.apply())
    corr = b.produce(3)
    assert b.produce_answer(corr).partitions[0][2] == E.NOT_LEADER_OR_FOLLOWER
    assert not part.is_leader and part.get_leader_epoch() == 1
    assert fetcher_of(b)[0] == OTHER


@pytest.mark.parametrize("version", VERSIONS)
def test_delta_leader_to_removed_topic_through_apply_delta(version):
    """ReplicaManagerTest.testDeltaLeaderToRemovedTopic (@3.9.0-rc3, @4.3.0) through
    apply_delta: the topic's RemoveTopicRecord deletes the partition the broker led (no longer
    hosted, no fetcher)."""
    from test_replica_manager_ports_s23_kafka import KBroker

    from kafkasim.control.kraft.image import TopicsDelta
    b = KBroker(version)
    delta = TopicsDelta()
    for record in topics_create_delta(LOCAL, True):
        delta.replay(record)
    image = delta.apply()
    b.rm.apply_delta(b, delta, image)
    assert b.part().is_leader
    delta = TopicsDelta(image)
    delta.replay(R.RemoveTopicRecord(FOO_UUID))
    b.rm.apply_delta(b, delta, delta.apply())
    assert ("foo", 0) not in b.rm.partitions and fetcher_of(b) is None


FOO_ID, FOO_ID2 = "ThIaNwRnSM2Nt9Mx1v0RvA", "9d3lha5qv8DoIl93jf8pbX"
BAR_ID, BAZ_ID = "f62ptyETTjet8SL5ZeREiw", "tgHBnRglT5W_RlENnuG5vg"
BAM_ID, BAM_ID2 = "b66ybsWIQoygs01vdjH07A", "yd6Sq3a9aK1G8snlKv7ag5"


def _image1():
    """TopicsImageTest.IMAGE1: foo-0..2 and bar-0 with their replicas, ISRs, leaders and
    epochs (bar-0 in a reassignment)."""
    from kafkasim.control.kraft.image import TopicsDelta
    delta = TopicsDelta()
    delta.replay(R.TopicRecord("foo", FOO_ID))
    for pid, replicas, isr, leader, epoch, pepoch in (
            (0, (2, 3, 4), (2, 3), 2, 1, 345), (1, (3, 4, 5), (3, 4, 5), 3, 4, 684),
            (2, (2, 4, 5), (2, 4, 5), 2, 10, 84)):
        delta.replay(R.PartitionRecord(pid, FOO_ID, replicas, isr, leader=leader,
                                       leader_epoch=epoch, partition_epoch=pepoch))
    delta.replay(R.TopicRecord("bar", BAR_ID))
    delta.replay(R.PartitionRecord(0, BAR_ID, (0, 1, 2, 3, 4), (0, 1, 2, 3), removing_replicas=(1,),
                                   adding_replicas=(3, 4), leader=0, leader_epoch=1,
                                   partition_epoch=345))
    return delta.apply()


def _delta1_records() -> list:
    """TopicsImageTest.DELTA1_RECORDS: foo removed and re-created with another id, bar-0's
    leader moved to 1, topic baz created (baz-0 led by 3), bam created and removed."""
    return [
        R.RemoveTopicRecord(FOO_ID),
        R.PartitionChangeRecord(0, BAR_ID, leader=1),
        R.TopicRecord("baz", BAZ_ID),
        R.PartitionRecord(0, BAZ_ID, (1, 2, 3, 4), (3, 4), removing_replicas=(2,),
                          adding_replicas=(1,), leader=3, leader_epoch=2, partition_epoch=1),
        R.TopicRecord("foo", FOO_ID2),
        R.TopicRecord("bam", BAM_ID),
        R.RemoveTopicRecord(BAM_ID),
    ]


def test_topics_delta_basic_local_changes():
    """TopicsImageTest.testBasicLocalChanges (@3.9.0-rc3), broker 3: DELTA1's records, then bam
    re-created (bam-0 without broker 3, bam-1 with it) and baz-1 followed (leader 4). Elected
    leaders and leaders: baz-0; followers: baz-1, bar-0 (a new partition epoch), bam-1.
    (Kafka does not assert the deletes: here foo-0 and foo-1, the removed foo's partitions
    that listed broker 3.)"""
    records = [*_delta1_records(),
               R.TopicRecord("bam", BAM_ID2),
               R.PartitionRecord(0, BAM_ID2, (0, 1, 2), (0, 1, 2), leader=0, leader_epoch=1,
                                 partition_epoch=1),
               R.PartitionRecord(1, BAM_ID2, (0, 1, 3), (0, 1, 3), leader=0, leader_epoch=1,
                                 partition_epoch=1),
               R.PartitionRecord(1, BAZ_ID, (4, 2, 3), (4, 2, 3), leader=4, leader_epoch=2,
                                 partition_epoch=1)]
    _delta, changes = _changes(_image1(), *records)
    assert set(changes.elected_leaders) == {("baz", 0)}
    assert set(changes.leaders) == {("baz", 0)}
    assert set(changes.followers) == {("baz", 1), ("bar", 0), ("bam", 1)}
    assert set(changes.deletes) == {("foo", 0), ("foo", 1)}


@pytest.mark.parametrize("version", VERSIONS)
def test_fetcher_are_not_restarted_if_leader_epoch_is_not_bumped_through_apply_delta(version):
    """ReplicaManagerTest.testFetcherAreNotRestartedIfLeaderEpochIsNotBumped (@4.3.0; the 3.9
    ...WithKRaftPath) through ReplicaManager.apply_delta: follower of 1 at (0, 0) with a
    fetcher at epoch 0, offset 0; replicas (0, 1, 2) bump the partition epoch only and the
    fetch state stays the same object; leader 2 bumps both and the fetcher moves to broker 2
    at epoch 1."""
    from test_replica_manager_more_kafka import partition_record
    from test_replica_manager_ports_s23_kafka import KBroker

    from kafkasim.control.kraft.image import TopicsDelta

    def apply(image, *records):
        delta = TopicsDelta(image)
        for record in records:
            delta.replay(record)
        b.rm.apply_delta(b, delta, delta.apply())
        return delta.apply()

    b = KBroker(version)
    image = apply(None, R.TopicRecord("foo", FOO_UUID), partition_record(LOCAL, LOCAL + 1))
    part = b.part()
    leader, state = fetcher_of(b)
    assert (part.get_leader_epoch(), part.get_partition_epoch(), leader) == (0, 0, 1)
    assert (state.current_leader_epoch, state.fetch_offset) == (0, 0)
    image = apply(image, R.PartitionChangeRecord(0, FOO_UUID, isr=(0, 1), replicas=(0, 1, 2)))
    assert (part.get_leader_epoch(), part.get_partition_epoch()) == (0, 1)
    assert fetcher_of(b)[1] is state
    apply(image, R.PartitionChangeRecord(0, FOO_UUID, isr=(0, 1, 2), leader=2,
                                         replicas=(0, 1, 2)))
    assert (part.get_leader_epoch(), part.get_partition_epoch()) == (1, 2)
    leader, state = fetcher_of(b)
    assert (leader, state.current_leader_epoch, state.fetch_offset) == (2, 1, 0)
