"""More of Kafka's data-path unit tests on kafkasim: ReplicaFetcherThreadTest and
AbstractFetcherThreadTest (tags 3.9.0 and 4.1.0) cases that tests/test_fetcher_thread_kafka.py
does not port, then FetchSessionTest cases and ReplicaSelectorTest.testSameRackSelector (the
StopReplica leader-epoch cases of ReplicaManagerTest are in
tests/test_replica_manager_more_kafka.py). Each test's docstring names the Kafka test and tag it
follows.

The fetcher cases reuse tests/test_fetcher_thread_kafka.py's ``Env`` (a ``ReplicaFetcherThread``
on a ``kafkasim.core.fake.FakeContext``, with ``MockLeader`` playing Kafka's
``MockLeaderEndPoint``). Kafka's mocked ``UnifiedLog`` (latestEpoch, endOffsetForEpoch,
logEndOffset, highWatermark) is a real ``kafkasim.core.log.Log`` built to give the same answers;
``verify(partition).truncateTo(x)`` is the log's "truncate to x" outbox line (kafkasim's log
listener hears every truncateTo, even one that removes nothing). Kafka's
``kafkaConfigNoTruncateOnFetch`` (IBP 2.6) is kafkasim 2.7; the default config (truncation on
fetch) is kafkasim 3.9.
"""

from __future__ import annotations

import pytest
from test_fetcher_thread_kafka import (
    TP,
    UNDEFINED,
    Env,
    batch,
    records,
)
from test_replica_manager_kafka import Broker

from kafkasim.core import errors as E
from kafkasim.core import fetch_session as fs
from kafkasim.core.fetcher import FETCHING, TRUNCATING
from kafkasim.core.log import RecordChunk
from kafkasim.core.messages import (
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from kafkasim.core.replica_manager import ReplicaManager, select_read_replica
from kafkasim.settings.javautil import JavaRandom

T1P0, T1P1, T2P1 = ("topic1", 0), ("topic1", 1), ("topic2", 1)


def _epoch_runs(env: Env, tp, runs: list[tuple[int, int]], hw: int):
    """A follower log of (leader epoch, record count) runs, with high watermark ``hw``."""
    return env.replica(tp, [batch(e, *range(n)) for e, n in runs], hw=hw)


def _topic1_at_epoch_5(env: Env) -> tuple:
    """The set-up of ReplicaFetcherThreadTest's FetchLeaderEpochRequestIfLastEpochDefined
    ForSomePartitions: t1p0, t1p1 and t2p1 truncating at leader epoch 5 with empty logs;
    topic1's partitions know epoch 5 (ending at LEO 0), t2p1 no epoch."""
    tps = (T1P0, T1P1, T2P1)
    for tp in tps:
        log = env.replica(tp)
        if tp != T2P1:
            log.leader_epoch_cache.assign(5, 0)
        env.add(tp, offset=0, epoch=5, state=TRUNCATING)
        env.leader.set_state(tp, [], leader_epoch=5, hw=0)
    return tps


def _answer_epochs(env: Env, answers: dict) -> OffsetsForLeaderEpochRequest:
    """Answer the OffsetsForLeaderEpoch in flight: tp -> (error, epoch, end offset)."""
    req = env.pending()
    assert isinstance(req, OffsetsForLeaderEpochRequest)
    env.deliver(OffsetsForLeaderEpochResponse(req.correlation_id, tuple(
        (t, p, *answers[(t, p)]) for t, p, _c, _e in req.partitions)))
    return req


def _answer_fetch(env: Env, datas: dict) -> FetchRequest:
    """Answer the Fetch in flight with ``datas``: tp -> (HW, diverging epoch or None)."""
    req = env.pending()
    assert isinstance(req, FetchRequest)
    parts = []
    for fp in req.partitions:
        hw, diverging = datas[(fp.topic, fp.partition)]
        parts.append(FetchPartitionData(fp.topic, fp.partition, E.NONE, hw, 0,
                                        RecordChunk.empty(fp.fetch_offset), diverging))
    env.deliver(FetchResponse(req.correlation_id, tuple(parts)))
    return req


def fetch_count(env: Env) -> int:
    """MockBlockingSender.fetchCount: the Fetches answered (kafkasim's thread sends the next one
    as soon as an answer is handled; the one in flight is not counted)."""
    in_flight = isinstance(env.pending(), FetchRequest)
    return len(env.sent(FetchRequest)) - in_flight


def _truncations(env: Env) -> list[int]:
    """The offsets of every truncateTo so far, in order (``_count_truncations`` records them;
    without it, only the truncations that removed records)."""
    calls = getattr(env, "truncate_calls", None)
    if calls is not None:
        return list(calls)
    return [int(line.split()[2]) for line in env.outbox_lines("truncate to ")]


def _count_truncations(env: Env) -> None:
    """verify(partition, times(n)).truncateTo: record every truncateTo, also one that removes
    nothing (the fake's outbox names only those that removed records)."""
    env.truncate_calls = []
    on_truncate = env.ctx.on_truncate

    def recording(log, offset, removed, reason, old_hw):
        env.truncate_calls.append(offset)
        on_truncate(log, offset, removed, reason, old_hw)

    env.ctx.on_truncate = recording


# -- ReplicaFetcherThreadTest ----------------------------------------------------------------------
def test_should_truncate_to_offset_specified_in_epoch_offset_response():
    """ReplicaFetcherThreadTest.shouldTruncateToOffsetSpecifiedInEpochOffsetResponse @3.9.0:
    the follower's latest epoch 5 ends at its LEO 200 (HW 199); the leader answers epoch 5 ends
    at 156 (t1p0) and 172 (t2p1): each partition truncates to the leader's offset."""
    env = Env("2.7")
    for tp in (T1P0, T2P1):
        _epoch_runs(env, tp, [(5, 200)], hw=199)
        env.add(tp, offset=0, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, 5, 156), T2P1: (E.NONE, 5, 172)})
    assert sorted(_truncations(env)) == [156, 172]
    assert env.log(T1P0).log_end_offset == 156 and env.log(T2P1).log_end_offset == 172


def _assert_partition_states(env: Env, tps, ready: bool, truncating: bool, delayed: bool) -> None:
    """ReplicaFetcherThreadTest.assertPartitionStates."""
    for tp in tps:
        st = env.st(tp)
        assert st is not None
        assert st.is_ready_for_fetch(env.ctx.now) is ready
        assert (st.state == TRUNCATING) is truncating
        assert (st.delayed_until_ms > env.ctx.now) is delayed


def test_fetch_leader_epoch_request_if_last_epoch_defined_for_some_partitions():
    """ReplicaFetcherThreadTest.testFetchLeaderEpochRequestIfLastEpochDefinedForSomePartitions
    @3.9.0: t1p0 and t1p1 have leader epoch 5 (ending at their LEO 0), t2p1 none. One
    OffsetsForLeaderEpoch (for topic1's two) and three fetches in three loops; truncateTo runs
    three times in all (t2p1 to its HW, the others by the leader's answer)."""
    env = Env("2.7")
    tps = _topic1_at_epoch_5(env)
    _count_truncations(env)
    _assert_partition_states(env, tps, ready=False, truncating=True, delayed=False)
    env.th.do_work(env.ctx)                              # loop 1
    epoch_req = env.pending()
    assert [(t, p) for t, p, _c, _e in epoch_req.partitions] == [T1P0, T1P1]
    _answer_epochs(env, {T1P0: (E.NONE, 5, 1), T1P1: (E.NONE, 5, 1)})
    env.answer()
    assert len(env.sent(OffsetsForLeaderEpochRequest)) == 1
    assert fetch_count(env) == 1
    _assert_partition_states(env, tps, ready=True, truncating=False, delayed=False)
    for loop in (2, 3):                                  # no more epoch requests
        env.run_round()
        assert len(env.sent(OffsetsForLeaderEpochRequest)) == 1
        assert fetch_count(env) == loop
        _assert_partition_states(env, tps, ready=True, truncating=False, delayed=False)
    assert len(_truncations(env)) == 3


@pytest.mark.parametrize(("version", "epoch_fetches"), [("2.6", 1), ("3.9", 0)])
def test_fetch_leader_epoch_on_first_fetch(version, epoch_fetches):
    """ReplicaFetcherThreadTest.shouldFetchLeaderEpochOnFirstFetchOnlyIfLeaderEpochKnownToBothIbp26
    (IBP 2.6: one OffsetsForLeaderEpoch, then only fetches) and
    shouldNotFetchLeaderEpochOnFirstFetchWithTruncateOnFetch (latest IBP: none) @3.9.0: the
    follower's log has leader epoch 5; its initial fetch state is the one
    ReplicaManager.makeFollowers gives it (InitialFetchState: Truncating, or Fetching with the
    last fetched epoch)."""
    env = Env(version)
    for tp in (T1P0, T1P1):
        part = env.ctx.partition(*tp)
        part.log.leader_epoch_cache.assign(5, 0)
        env.th.add_partition(tp, ReplicaManager.initial_fetch_state(env.ctx, part, 5))
        env.leader.set_state(tp, [], leader_epoch=5, hw=0)
    env.leader.epochs = lambda req: OffsetsForLeaderEpochResponse(req.correlation_id, tuple(
        (t, p, E.NONE, 5, 1) for t, p, _c, _e in req.partitions))
    for loop in (1, 2, 3):
        env.run_round()
        assert len(env.sent(OffsetsForLeaderEpochRequest)) == epoch_fetches
        assert fetch_count(env) == loop


def test_should_truncate_if_leader_replies_with_diverging_epoch_not_known_to_follower():
    """ReplicaFetcherThreadTest.shouldTruncateIfLeaderRepliesWithDivergingEpochNotKnownToFollower
    @3.9.0, its first three loops: the follower (LEO 200, epochs 1, 2 from 119, 4 from 129, 5
    from 149) fetches without asking OffsetsForLeaderEpoch; diverging epoch 4 ending at 140 / 141
    truncates to those; diverging epoch 3 (unknown to the follower, whose epoch 2 ends at 129)
    truncates to 129, still Fetching. (Kafka's fourth loop stubs endOffsetForEpoch(2) as (119, 1)
    after the log kept epoch 2: no real log answers both, so it is not ported.)"""
    env = Env("3.9")
    for tp in (T1P0, T1P1):
        _epoch_runs(env, tp, [(1, 119), (2, 10), (4, 20), (5, 51)], hw=115)
        env.add(tp, offset=200, epoch=5, last_fetched_epoch=5)
    env.th.do_work(env.ctx)                              # loop 1
    _answer_fetch(env, {T1P0: (0, None), T1P1: (0, None)})
    assert env.sent(OffsetsForLeaderEpochRequest) == []
    assert fetch_count(env) == 1
    assert env.st(T1P0).state == FETCHING and env.st(T1P1).state == FETCHING
    _answer_fetch(env, {T1P0: (0, (4, 140)), T1P1: (0, (4, 141))})      # loop 2
    assert sorted(_truncations(env)) == [140, 141]
    assert fetch_count(env) == 2
    assert env.st(T1P0).state == FETCHING and env.st(T1P1).state == FETCHING
    _answer_fetch(env, {T1P0: (0, (3, 130)), T1P1: (0, (3, 131))})      # loop 3
    assert _truncations(env)[2:] == [129, 129]
    assert env.sent(OffsetsForLeaderEpochRequest) == []
    assert fetch_count(env) == 3
    assert env.st(T1P0).state == FETCHING and env.st(T1P1).state == FETCHING


def test_truncate_on_fetch_does_not_update_high_watermark():
    """ReplicaFetcherThreadTest.testTruncateOnFetchDoesNotUpdateHighWatermark @3.9.0: LEO 150,
    HW 130, epoch 4 ends at 149; the answer's HW 160 comes with diverging epoch 4 ending at 140:
    the log is truncated to 140 and its HW is not updated."""
    env = Env("3.9")
    _epoch_runs(env, T1P0, [(4, 149), (5, 1)], hw=130)
    env.add(T1P0, offset=150, epoch=5, last_fetched_epoch=5)
    env.th.do_work(env.ctx)
    _answer_fetch(env, {T1P0: (160, (4, 140))})
    assert fetch_count(env) == 1
    assert _truncations(env) == [140]
    assert env.log(T1P0).high_watermark == 130


def test_lag_is_updated_when_no_records():
    """ReplicaFetcherThreadTest.testLagIsUpdatedWhenNoRecords @3.9.0: an answer without records
    (HW 0, the follower's LEO 0) sets the partition's lag to 0 and keeps its last fetched epoch
    2. (Kafka's lag is None before the first answer; kafkasim's PartitionFetchState starts at 0.)"""
    env = Env("3.9")
    log = env.replica(T1P0)
    log.leader_epoch_cache.assign(2, 0)
    env.add(T1P0, offset=0, epoch=2, last_fetched_epoch=2)
    env.th.do_work(env.ctx)
    _answer_fetch(env, {T1P0: (0, None)})
    assert fetch_count(env) == 1
    st = env.st(T1P0)
    assert st.lag == 0 and st.last_fetched_epoch == 2


# -- AbstractFetcherThreadTest ---------------------------------------------------------------------
@pytest.mark.parametrize(("version", "ignored"), [("4.1", True), ("4.0", False)])
def test_ignore_fetch_response_when_leader_epoch_changed(version, ignored):
    """AbstractFetcherThreadTest.testIgnoreFetchResponseWhenLeaderEpochChanged @4.1.0: the
    partition's fetch state is at leader epoch 1; an answer to a Fetch sent at epoch 0 from the
    same offset is ignored (LEO stays 0). KAFKA-18991 (4.1.0); 4.0 still applied it."""
    env = Env(version)
    env.replica()
    env.add(offset=0, epoch=0, last_fetched_epoch=UNDEFINED)
    env.leader.set_state(TP, [batch(0, 1)], leader_epoch=0, hw=1)
    env.th.do_work(env.ctx)
    req = env.pending()
    assert req.partitions[0].current_leader_epoch == 0
    env.st().current_leader_epoch = 1                   # a LeaderAndIsr of epoch 1 meanwhile
    env.th.changed(TP)
    env.deliver(env.leader.fetch(req))
    assert env.log().log_end_offset == (0 if ignored else 1)


def test_parameterized_leader_epoch_change_during_fetch_epochs_from_leader():
    """AbstractFetcherThreadTest.testParameterizedLeaderEpochChangeDuringFetchEpochsFromLeader
    @4.1.0 (leaderEpochOnLeader 0 and 1): after the first round the fetch state is Truncating
    at the follower's new epoch 1 (the old-epoch answer was dropped); once the leader is at epoch
    1 too, the logs match."""
    for leader_epoch_on_leader in (0, 1):
        tp = ("topic", 1)
        env = Env("4.1")
        env.replica(tp, epoch_zero=True)
        env.add(tp, offset=0, epoch=0, state=TRUNCATING)
        env.leader.set_state(tp, [batch(0, 1)], leader_epoch=leader_epoch_on_leader, hw=0)

        def change_leader_epoch_while_fetch_epoch(env=env, tp=tp):
            env.th.remove_partition(tp)
            env.add(tp, offset=0, epoch=1, state=TRUNCATING)

        env.callback = change_leader_epoch_while_fetch_epoch
        env.th.do_work(env.ctx)
        env.answer()                                     # the old epoch's answer: dropped
        st = env.st(tp)
        assert (st.state, st.current_leader_epoch) == (TRUNCATING, 1)
        if leader_epoch_on_leader < 1:
            env.leader.set_state(tp, [batch(0, 1)], leader_epoch=1, hw=0)
        env.run_round()
        assert records(env.log(tp)) == records(env.leader.state(tp).log)


def test_truncation_throws_exception_if_leader_returns_partitions_not_requested():
    """AbstractFetcherThreadTest.testTruncationThrowsExceptionIfLeaderReturnsPartitionsNot
    RequestedInFetchEpochs @3.9.0, on the path without truncation on fetch (kafkasim 2.7):
    the OffsetsForLeaderEpoch answer names topic2-0, which the fetcher did not ask for, and
    truncateToEpochEndOffsets throws IllegalStateException (2.2+) before truncating anything
    (tests/test_rm_s24_kafka.py has the 3.9 and 4.3 cases)."""
    env = Env("2.7")
    env.replica(epoch_zero=True)
    env.add(offset=0, epoch=0, state=TRUNCATING)
    env.th.do_work(env.ctx)
    req = env.pending()
    with pytest.raises(E.IllegalStateException, match="not requested"):
        env.deliver(OffsetsForLeaderEpochResponse(req.correlation_id, (
            (*TP, E.NONE, 0, 0), ("topic2", 0, E.NONE, 0, 0))))
    assert env.st().state == TRUNCATING


def test_truncation_ignores_partitions_not_requested_before_2_2():
    """AbstractFetcherThread.maybeTruncate @2.1.0 has no such check (it came with
    truncateToEpochEndOffsets' leader-epoch filter in 2.2.0): the partition the fetcher does
    not track is skipped and the one asked is truncated."""
    env = Env("2.1")
    env.replica(epoch_zero=True)
    env.add(offset=0, epoch=0, state=TRUNCATING)
    env.th.do_work(env.ctx)
    req = env.pending()
    env.deliver(OffsetsForLeaderEpochResponse(req.correlation_id, (
        (*TP, E.NONE, 0, 0), ("topic2", 0, E.NONE, 0, 0))))
    assert ("topic2", 0) not in env.ctx.logs or records(env.log(("topic2", 0))) == []
    assert env.st().state == FETCHING


def test_replicate_batches_up_to_leader_epoch():
    """AbstractFetcherThreadTest.testReplicateBatchesUpToLeaderEpoch @4.1.0: the follower at
    leader epoch 4 replicates the leader's batches of epochs 3 and 4 and stops before the one of
    epoch 5; its LEO is the leader's minus one, its HW the leader's. (Kafka's initial fetch
    offset 3 on an empty log is handled by its mock's out-of-range path; here it fetches from
    0.)"""
    env = Env("4.1")
    env.replica()
    env.add(offset=0, epoch=4, last_fetched_epoch=UNDEFINED)
    env.leader.set_state(TP, [batch(3, 1), batch(4, 2), batch(5, 3)], leader_epoch=4, hw=0)
    assert env.st().state == FETCHING and records(env.log()) == []
    for _ in range(5):
        env.run_round()
    leader = env.leader.state(TP)
    assert records(env.log()) == records(leader.log)[:-1]
    assert env.log().log_end_offset == leader.log.log_end_offset - 1
    assert env.log().high_watermark == leader.hw


def test_4_0_replicates_past_its_leader_epoch():
    """The same at 4.0, before KAFKA-18723: the follower appends the epoch-5 batch too."""
    env = Env("4.0")
    env.replica()
    env.add(offset=0, epoch=4, last_fetched_epoch=UNDEFINED)
    env.leader.set_state(TP, [batch(3, 1), batch(4, 2), batch(5, 3)], leader_epoch=4, hw=0)
    for _ in range(5):
        env.run_round()
    assert records(env.log()) == records(env.leader.state(TP).log)


# -- FetchSessionTest ------------------------------------------------------------------------------
FOO0, FOO1, BAR1 = ("foo", 0), ("foo", 1), ("bar", 1)
NO_EPOCH = -1   # Optional.empty() of PartitionData.currentLeaderEpoch / lastFetchedEpoch


def _session_cache() -> fs.FetchSessionCache:
    """new FetchSessionCacheShard(10, 1000), the only shard."""
    return fs.FetchSessionCache([fs.FetchSessionCacheShard(10, 1000, (1 << 31) - 1, 0,
                                                           JavaRandom(7))])


def _consumer_fetch(corr: int, parts: dict, session_id: int = 0, epoch: int = 0):
    """createRequest(metadata, requestData, EMPTY_PART_LIST, isFromFollower = false): parts is
    tp -> (fetch offset, current leader epoch, last fetched epoch); log start 0, max 100."""
    fps = tuple(FetchPartition(t, p, off, cur, last, 0, 100)
                for (t, p), (off, cur, last) in parts.items())
    return FetchRequest(corr, -1, 500, 1, 100, fps, session_id=session_id, session_epoch=epoch)


def _epochs(fctx) -> tuple[dict, dict]:
    """cachedLeaderEpochs / cachedLastFetchedEpochs: context.foreachPartition's data."""
    parts = list(fctx.partitions())
    return ({(d.topic, d.partition): d.current_leader_epoch for d in parts},
            {(d.topic, d.partition): d.last_fetched_epoch for d in parts})


def _three_partition_session(cache, first: dict):
    """request1 (a full fetch of foo-0, foo-1, bar-1) and its answer: the new session's id."""
    fctx = fs.new_context(cache, _consumer_fetch(1, first), 0)
    answer = [FetchPartitionData(t, p, E.NONE, hw, hw, RecordChunk.empty(0))
              for (t, p), hw in ((FOO0, 100), (FOO1, 10), (BAR1, 5))]
    _err, sid, _parts = fs.response_partitions(cache, fctx, answer, 0, False)
    return fctx, sid, answer


def test_cached_leader_epoch_and_last_fetched_epoch():
    """FetchSessionTest.testCachedLeaderEpoch and testLastFetchedEpoch @3.9.0: a full fetch
    with leader epochs (none, 1, 2) and last fetched epochs (none, none, 1); an incremental
    fetch naming no partition sees the same cached epochs; one naming all three with new epochs
    (6, none, 3) and last fetched epochs (5, none, 3) updates the session's cached
    partitions (which the earlier context also reads)."""
    cache = _session_cache()
    ctx1, sid, answer = _three_partition_session(cache, {
        FOO0: (0, NO_EPOCH, NO_EPOCH), FOO1: (10, 1, NO_EPOCH), BAR1: (10, 2, 1)})
    assert _epochs(ctx1) == ({FOO0: NO_EPOCH, FOO1: 1, BAR1: 2},
                             {FOO0: NO_EPOCH, FOO1: NO_EPOCH, BAR1: 1})
    assert sid > 0
    ctx2 = fs.new_context(cache, _consumer_fetch(2, {}, sid, 1), 1)
    assert ctx2.kind == fs.INCREMENTAL
    assert _epochs(ctx2) == ({FOO0: NO_EPOCH, FOO1: 1, BAR1: 2},
                             {FOO0: NO_EPOCH, FOO1: NO_EPOCH, BAR1: 1})
    fs.response_partitions(cache, ctx2, answer, 1, False)
    ctx3 = fs.new_context(cache, _consumer_fetch(3, {
        FOO0: (0, 6, 5), FOO1: (10, NO_EPOCH, NO_EPOCH), BAR1: (10, 3, 3)}, sid, 2), 2)
    assert _epochs(ctx3)[0] == {FOO0: 6, FOO1: NO_EPOCH, BAR1: 3}
    assert _epochs(ctx2)[1] == {FOO0: 5, FOO1: NO_EPOCH, BAR1: 3}


def test_incremental_fetch_session():
    """FetchSessionTest.testIncrementalFetchSession @3.9.0 (without topic ids): a full fetch of
    foo-0 (offset 0) and foo-1 (offset 10) opens a session answered with both; an incremental
    request that forgets foo-0 and adds bar-0 (offset 15) reads foo-1 then bar-0 (fetch offsets
    10 and 15; foo-0 is gone); its answer carries only bar-0 (foo-1's HW and log start did not
    change), in the same session."""
    cache = _session_cache()
    full = _consumer_fetch(1, {FOO0: (0, NO_EPOCH, NO_EPOCH), FOO1: (10, NO_EPOCH, NO_EPOCH)})
    fctx = fs.new_context(cache, full, 0)
    assert fctx.kind == fs.FULL
    answer = [FetchPartitionData("foo", 0, E.NONE, 100, 100, RecordChunk.empty(0)),
              FetchPartitionData("foo", 1, E.NONE, 10, 10, RecordChunk.empty(0))]
    err, sid, parts = fs.response_partitions(cache, fctx, answer, 0, False)
    assert err == E.NONE and sid != fs.INVALID_SESSION_ID and len(parts) == 2
    bar0 = ("bar", 0)
    added = FetchPartition("bar", 0, 15, NO_EPOCH, NO_EPOCH, 0, 0)
    inc = FetchRequest(2, -1, 500, 1, 100, (added,), session_id=sid, session_epoch=1,
                       to_forget=(FOO0,))
    fctx = fs.new_context(cache, inc, 10)
    assert fctx.kind == fs.INCREMENTAL
    read = {(cp.topic, cp.partition): cp.fetch_offset for cp in fctx.partitions()}
    assert list(read) == [FOO1, bar0]
    assert read == {FOO1: 10, bar0: 15}                # getFetchOffset; foo-0, bar-2: None
    err, sid2, parts = fs.response_partitions(cache, fctx, [
        FetchPartitionData("foo", 1, E.NONE, 10, 10, RecordChunk.empty(0)),
        FetchPartitionData("bar", 0, E.NONE, 10, 10, RecordChunk.empty(0))], 10, False)
    assert err == E.NONE and sid2 > 0
    assert [(pd.topic, pd.partition) for pd in parts] == [bar0]


# -- ReplicaSelectorTest (clients, org.apache.kafka.common.replica) --------------------------------
def test_same_rack_selector():
    """ReplicaSelectorTest.testSameRackSelector @4.1.0: replicas 0 (the leader, rack-a, LEO 4),
    1 (rack-a, LEO 2, caught up 5 ms ago), 2 (rack-b, LEO 3, 3 ms ago), 3 (rack-b, LEO 4, 2 ms
    ago). RackAwareReplicaSelector picks for rack-b replica 3 (the more caught up), for an
    unknown rack the leader, for rack-a the leader (it is in rack-a). kafkasim's selector is
    ``select_read_replica`` on the leader's Partition (the ReplicaView of each follower is its
    ReplicaState)."""
    b = Broker(racks={0: "rack-a", 1: "rack-a", 2: "rack-b", 3: "rack-b"})
    b.lair(0, 1, (0, 1, 2, 3))
    part = b.part()
    b.now = 100
    for replica, leo, since_caught_up in ((1, 2, 5), (2, 3, 3), (3, 4, 2)):
        st = part.remote[replica]
        st.log_start_offset, st.log_end_offset = 0, leo
        st.last_caught_up_time_ms = b.now - since_caught_up
    assert select_read_replica(b, part, 0, "rack-b") == 3
    assert select_read_replica(b, part, 0, "not-a-rack") == 0
    assert select_read_replica(b, part, 0, "rack-a") == 0
