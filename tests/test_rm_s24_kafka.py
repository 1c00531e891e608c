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

The thread runs on tests/test_fetcher_thread_kafka's ``Env`` (a FakeContext follower and a
MockLeader answering one batch per fetch, as Kafka's MockLeaderEndPoint); the KRaft broker is
tests/test_replica_manager_more_kafka's ``KRaftBroker`` (TopicsDelta records replayed on a
metadata image and published to ReplicaManager.applyDelta). Kafka's MockFetcherThread
overrides (processPartitionData, truncate, fetchEpochEndOffsets) are subclasses here.

Not ported: the tiered-storage-enabled halves of testEmptyFollowerFetch* and every
testLastTieredOffset* (kafkasim has no remote log), testMaybeUpdateTopicIds (no topic ids in
the fetch state), testMetricsRemovedOnShutdown / testConsumerLagRemovedWithPartition (no
fetcher metrics registry).
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
