"""Kafka's broker data-path unit tests at the OLDER release tags whose assertions differ from the
3.7 - 4.1 ports: ReplicaFetcherThreadTest (tags 0.11.0.0, 1.1.0, 2.0.0, 2.1.0),
AbstractFetcherThreadTest (tags 2.1.0, 2.3.0), OffsetsForLeaderEpochTest (tag 0.11.0.0) and
LeaderEpochFileCacheTest (tag 1.1.0). Each test's docstring names the Kafka test and the tag it
follows.

What changed across those tags, and what each group checks:

* 0.11.0 - 1.0 (KIP-101): OffsetsForLeaderEpoch v0 answers an end offset only; an undefined end
  offset truncates the follower to its high watermark (ReplicaFetcherThread.maybeTruncate
  @0.11.0.0). 1.1.0 (KIP-113, commit 5cc162f) starts a follower at its HW and truncates to that
  initial fetch offset instead.
* 2.0.0 (KIP-279): the answer carries the leader's epoch, so a follower that does not know it
  truncates in several rounds; 2.1.0 (KIP-320): a follower without any epoch sends no
  OffsetsForLeaderEpoch at all, and the fencing errors of AbstractFetcherThreadTest appear.
* LeaderEpochFileCache before 2.1 (KAFKA-7415) ignores an assignment that would make epochs or
  offsets go backwards, and answers undefined for an epoch below the first.

The fetcher cases reuse tests/test_fetcher_thread_kafka.py's ``Env`` (a ``ReplicaFetcherThread``
on a ``kafkasim.core.fake.FakeContext`` with ``MockLeader`` as Kafka's mock leader). Kafka's
mocked replica (latestEpoch, logEndOffset, highWatermark) is a real ``kafkasim.core.log.Log``
built to give the same answers. Kafka's ``addPartitions(tp -> offset)`` is ``Env.add`` with the
``Truncating`` state (every release here starts a partition truncating); ``fetchEpochsFromLeader``
answers are fed to the thread as OffsetsForLeaderEpoch responses. Kafka's
``truncateTo`` captures are the log's "truncate to" outbox lines (``_count_truncations`` records
also the calls that remove nothing).
"""

from __future__ import annotations

import pytest
from test_data_path_more_kafka import (
    _answer_epochs,
    _count_truncations,
    _epoch_runs,
    _topic1_at_epoch_5,
    _truncations,
    fetch_count,
)
from test_fetcher_thread_kafka import (
    TP,
    UNDEFINED,
    Env,
    batch,
    records,
)
from test_leader_epoch_protocol_kafka import NO_PARTITION_LEADER_EPOCH, _replica_manager, _request
from test_replica_manager_kafka import TOPIC, Broker

from kafkasim.core import errors as E
from kafkasim.core.fetcher import FETCHING, TRUNCATING
from kafkasim.core.leader_epoch import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEntry,
    LeaderEpochFileCache,
)
from kafkasim.core.messages import (
    EpochEndOffset,
    FetchRequest,
    OffsetsForLeaderEpochRequest,
)

T1P0, T1P1, T2P1 = ("topic1", 0), ("topic1", 1), ("topic2", 1)


def _epoch_requests(env: Env) -> int:
    return len(env.sent(OffsetsForLeaderEpochRequest))


# ================================================== ReplicaFetcherThreadTest @0.11.0.0 / 1.1.0
def test_should_not_issue_leader_epoch_request_if_interbroker_version_below_11():
    """ReplicaFetcherThreadTest.shouldNotIssueLeaderEpochRequestIfInterbrokerVersionBelow11
    @0.11.0.0: with inter.broker.protocol.version 0.10.2 (kafkasim 0.10.2) no
    OffsetsForLeaderEpoch is sent; the partition's answer is "undefined", i.e. the follower
    truncates to its high watermark and fetches."""
    env = Env("0.10.2")
    for tp in (T1P0, T1P1):
        _epoch_runs(env, tp, [(0, 5)], hw=3)
        env.add(tp, offset=3, epoch=0, state=TRUNCATING)
    env.th.do_work(env.ctx)
    assert _epoch_requests(env) == 0
    for tp in (T1P0, T1P1):
        assert env.log(tp).log_end_offset == 3
        assert env.st(tp).state == FETCHING and env.st(tp).fetch_offset == 3
    assert isinstance(env.pending(), FetchRequest)


@pytest.mark.parametrize("version", ["0.11.0", "1.1"])
def test_should_fetch_leader_epoch_on_first_fetch_only(version):
    """ReplicaFetcherThreadTest.shouldFetchLeaderEpochOnFirstFetchOnly @0.11.0.0 and @1.1.0:
    latest epoch 5, LEO 0; the leader answers end offset 1 (v0: no epoch). Loop 1 sends one
    OffsetsForLeaderEpoch and one Fetch; loops 2 and 3 only fetch. truncateTo runs once."""
    env = Env(version)
    for tp in (T1P0, T1P1):
        env.replica(tp).leader_epoch_cache.assign(5, 0)
        env.add(tp, offset=0, epoch=5, state=TRUNCATING)
        env.leader.set_state(tp, [], leader_epoch=5, hw=0)
    _count_truncations(env)
    env.th.do_work(env.ctx)                              # loop 1
    _answer_epochs(env, {T1P0: (E.NONE, UNDEFINED, 1), T1P1: (E.NONE, UNDEFINED, 1)})
    env.answer()
    assert _epoch_requests(env) == 1 and fetch_count(env) == 1
    for loop in (2, 3):
        env.run_round()
        assert _epoch_requests(env) == 1 and fetch_count(env) == loop
    # one truncateTo per partition, both to the LEO 0 (the leader's 1 is above it)
    assert _truncations(env) == [0, 0]


def test_should_truncate_to_offset_specified_in_epoch_offset_response_0_11():
    """ReplicaFetcherThreadTest.shouldTruncateToOffsetSpecifiedInEpochOffsetResponse @0.11.0.0:
    the leader answers v0 end offsets 156 (t1p0) and 172 (t2p1) below the follower's LEO 200;
    each partition truncates to the leader's offset."""
    env = Env("0.11.0")
    for tp in (T1P0, T2P1):
        _epoch_runs(env, tp, [(5, 200)], hw=0)
        env.add(tp, offset=0, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    req = _answer_epochs(env, {T1P0: (E.NONE, UNDEFINED, 156), T2P1: (E.NONE, UNDEFINED, 172)})
    assert sorted(e for _t, _p, _c, e in req.partitions) == [5, 5]
    assert env.log(T1P0).log_end_offset == 156 and env.log(T2P1).log_end_offset == 172
    assert env.st(T1P0).state == FETCHING and env.st(T1P0).fetch_offset == 156


def test_should_truncate_to_high_watermark_if_leader_returns_undefined_offset():
    """ReplicaFetcherThreadTest.shouldTruncateToHighWatermarkIfLeaderReturnsUndefinedOffset
    @0.11.0.0: HW 100, LEO 300, added at fetch offset 0; the leader answers
    UNDEFINED_EPOCH_OFFSET: 0.11 truncates to the high watermark (maybeTruncate's
    ``highWatermark(replica, epochOffset)``), not to the fetch offset."""
    env = Env("0.11.0")
    _epoch_runs(env, T1P0, [(5, 300)], hw=100)
    env.add(T1P0, offset=0, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, UNDEFINED, UNDEFINED)})
    assert env.outbox_lines("truncate to ")[0].startswith("truncate to 100 ")
    assert env.log(T1P0).log_end_offset == 100
    assert env.st(T1P0).state == FETCHING and env.st(T1P0).fetch_offset == 100


def test_should_truncate_to_initial_fetch_offset_if_leader_returns_undefined_offset_1_1():
    """ReplicaFetcherThreadTest.shouldTruncateToInitialFetchOffsetIfLeaderReturnsUndefinedOffset
    @1.1.0: LEO 300, added at fetch offset 100, high watermark 0 (Kafka's nice mock); since 1.1
    (KIP-113) an undefined answer truncates to the initial fetch offset, 100."""
    env = Env("1.1")
    _epoch_runs(env, T1P0, [(5, 300)], hw=0)
    env.add(T1P0, offset=100, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, UNDEFINED, UNDEFINED)})
    assert env.outbox_lines("truncate to ")[0].startswith("truncate to 100 ")
    assert env.log(T1P0).log_end_offset == 100


@pytest.mark.parametrize(("version", "not_leader"), [
    ("0.11.0", E.NOT_LEADER_FOR_PARTITION),
    ("1.1", E.NOT_LEADER_FOR_PARTITION),
])
def test_should_poll_indefinitely_if_leader_returns_any_exception(version, not_leader):
    """ReplicaFetcherThreadTest.shouldPollIndefinitelyIfLeaderReturnsAnyException @0.11.0.0 and
    @1.1.0: NOT_LEADER_FOR_PARTITION and UNKNOWN answers leave the log alone, round after round
    (each partition retried after replica.fetch.backoff.ms); then a new leader answers 156 (v0)
    and the follower truncates there."""
    env = Env(version)
    for tp in (T1P0, T2P1):
        _epoch_runs(env, tp, [(5, 300)], hw=100)
        env.add(tp, offset=100, epoch=5, state=TRUNCATING)
    errors = {T1P0: (not_leader, UNDEFINED, UNDEFINED),
              T2P1: ("UNKNOWN_SERVER_ERROR", UNDEFINED, UNDEFINED)}
    for _ in range(4):
        env.ctx.now += env.ctx.config["replica.fetch.backoff.ms"]
        env.th.do_work(env.ctx)
        _answer_epochs(env, errors)
    assert env.outbox_lines("truncate to ") == []
    assert _epoch_requests(env) == 4
    errors[T1P0] = (E.NONE, UNDEFINED, 156)
    env.ctx.now += env.ctx.config["replica.fetch.backoff.ms"]
    env.th.do_work(env.ctx)
    _answer_epochs(env, errors)
    assert env.outbox_lines("truncate to ")[-1].startswith("truncate to 156 ")
    assert env.log(T1P0).log_end_offset == 156 and env.log(T2P1).log_end_offset == 300


def test_should_move_partitions_out_of_truncating_log_state_0_11():
    """ReplicaFetcherThreadTest.shouldMovePartitionsOutOfTruncatingLogState @0.11.0.0: latest
    epoch 5 at LEO 0, v0 answers of end offset 1: every partition leaves the truncating state
    (the truncation point is the LEO, as the leader's offset is above it)."""
    env = Env("0.11.0")
    for tp in (T1P0, T1P1):
        env.replica(tp).leader_epoch_cache.assign(5, 0)
        env.add(tp, offset=0, epoch=5, state=TRUNCATING)
    assert all(env.st(tp).state == TRUNCATING for tp in (T1P0, T1P1))
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, UNDEFINED, 1), T1P1: (E.NONE, UNDEFINED, 1)})
    assert all(env.st(tp).state == FETCHING for tp in (T1P0, T1P1))
    assert env.log(T1P0).log_end_offset == 0 and env.log(T1P1).log_end_offset == 0


@pytest.mark.parametrize("version", ["0.11.0", "1.1"])
def test_should_filter_partitions_made_leader_during_leader_epoch_request(version):
    """ReplicaFetcherThreadTest.shouldFilterPartitionsMadeLeaderDuringLeaderEpochRequest
    @0.11.0.0 and @1.1.0: LEO 100; t1p0 leaves the thread (it became leader) while the
    OffsetsForLeaderEpoch is in flight: only t1p1 truncates (to the leader's 49)."""
    env = Env(version)
    for tp in (T1P0, T1P1):
        _epoch_runs(env, tp, [(5, 100)], hw=0)
        env.add(tp, offset=0, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    env.th.remove_partition(T1P0)
    _answer_epochs(env, {T1P0: (E.NONE, UNDEFINED, 52), T1P1: (E.NONE, UNDEFINED, 49)})
    truncations = env.outbox_lines("truncate to ")
    assert len(truncations) == 1 and truncations[0].startswith("truncate to 49 ")
    assert env.log(T1P0).log_end_offset == 100 and env.log(T1P1).log_end_offset == 49


# ================================================== ReplicaFetcherThreadTest @2.0.0 / 2.1.0
def test_should_fetch_leader_epoch_on_first_fetch_only_if_leader_epoch_known_to_both_2_0():
    """ReplicaFetcherThreadTest.shouldFetchLeaderEpochOnFirstFetchOnlyIfLeaderEpochKnownToBoth
    @2.0.0: latest epoch 5 ending at LEO 0; the leader answers (5, 1). One
    OffsetsForLeaderEpoch, then a Fetch each loop; the partitions stay fetching."""
    env = Env("2.0")
    for tp in (T1P0, T1P1):
        env.replica(tp).leader_epoch_cache.assign(5, 0)
        env.add(tp, offset=0, epoch=5, state=TRUNCATING)
        env.leader.set_state(tp, [], leader_epoch=5, hw=0)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, 5, 1), T1P1: (E.NONE, 5, 1)})
    env.answer()
    assert _epoch_requests(env) == 1 and fetch_count(env) == 1
    for loop in (2, 3):
        env.run_round()
        assert _epoch_requests(env) == 1 and fetch_count(env) == loop
    assert all(env.st(tp).state == FETCHING for tp in (T1P0, T1P1))


def test_should_truncate_to_offset_specified_in_epoch_offset_response_2_0():
    """ReplicaFetcherThreadTest.shouldTruncateToOffsetSpecifiedInEpochOffsetResponse @2.0.0:
    both sides know epoch 5 (the follower's ends at its LEO 200); the leader's answers (5, 156)
    and (5, 172) are the truncation points."""
    env = Env("2.0")
    for tp in (T1P0, T2P1):
        _epoch_runs(env, tp, [(5, 200)], hw=0)
        env.add(tp, offset=0, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, 5, 156), T2P1: (E.NONE, 5, 172)})
    assert env.log(T1P0).log_end_offset == 156 and env.log(T2P1).log_end_offset == 172
    assert env.st(T1P0).state == FETCHING and env.st(T2P1).state == FETCHING


def test_should_truncate_to_offset_in_epoch_offset_response_if_follower_has_no_more_epochs():
    """ReplicaFetcherThreadTest
    .shouldTruncateToOffsetSpecifiedInEpochOffsetResponseIfFollowerHasNoMoreEpochs @2.0.0: the
    follower's only epoch 5 ends at its LEO 200 (HW 197); the leader answers epoch 4, below
    every epoch the follower knows (2.0's endOffsetFor: undefined), ending at 156 / 202: the
    follower takes the leader's offset, capped at its LEO (156 and 200), in one round. (2.0.1+,
    KAFKA-7415, reads epoch 4 as ending at the follower's first offset instead.) kafkasim
    followed 2.0.1's cache here at 2.0 before this port."""
    env = Env("2.0")
    for tp in (T1P0, T2P1):
        _epoch_runs(env, tp, [(5, 200)], hw=197)
        env.add(tp, offset=197, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, 4, 156), T2P1: (E.NONE, 4, 202)})
    assert _epoch_requests(env) == 1
    assert env.log(T1P0).log_end_offset == 156 and env.log(T2P1).log_end_offset == 200
    assert env.st(T1P0).state == FETCHING and env.st(T2P1).state == FETCHING


def test_should_fetch_leader_epoch_second_time_if_leader_replies_with_epoch_not_known_2_0():
    """ReplicaFetcherThreadTest
    .shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower @2.0.0: the
    follower knows epochs 3 (ending at 120) and 5 (LEO 200); the leader answers epoch 4 (155,
    143): the follower truncates to where its epoch 3 ends and asks again; then (3, 101) and
    (3, 102) finish the truncation (KIP-279's rounds)."""
    env = Env("2.0")
    for tp in (T1P0, T1P1):
        _epoch_runs(env, tp, [(3, 120), (5, 80)], hw=0)
        env.add(tp, offset=0, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, 4, 155), T1P1: (E.NONE, 4, 143)})
    assert _epoch_requests(env) == 2 and env.sent(FetchRequest) == []
    assert env.log(T1P0).log_end_offset == 120 and env.log(T1P1).log_end_offset == 120
    second = env.pending()
    assert [e for _t, _p, _c, e in second.partitions] == [3, 3]
    _answer_epochs(env, {T1P0: (E.NONE, 3, 101), T1P1: (E.NONE, 3, 102)})
    assert _epoch_requests(env) == 2 and len(env.sent(FetchRequest)) == 1
    assert env.log(T1P0).log_end_offset == 101 and env.log(T1P1).log_end_offset == 102


def test_should_use_leader_end_offset_if_inter_broker_version_below_20_at_2_0():
    """ReplicaFetcherThreadTest.shouldUseLeaderEndOffsetIfInterBrokerVersionBelow20 @2.0.0:
    with IBP 1.1 (kafkasim 1.1) the answer carries no epoch (v0); the follower, whose epoch 3
    ends at 120 (LEO 200), truncates straight to the leader's 155 / 143: one round only."""
    env = Env("1.1")
    for tp in (T1P0, T1P1):
        _epoch_runs(env, tp, [(3, 120), (5, 80)], hw=0)
        env.add(tp, offset=0, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, UNDEFINED, 155), T1P1: (E.NONE, UNDEFINED, 143)})
    assert _epoch_requests(env) == 1 and len(env.sent(FetchRequest)) == 1
    assert env.log(T1P0).log_end_offset == 155 and env.log(T1P1).log_end_offset == 143


def test_should_not_send_epoch_request_if_last_epoch_undefined_for_all_partitions():
    """ReplicaFetcherThreadTest.shouldNotSendEpochRequestIfLastEpochUndefinedForAllPartitions
    @2.1.0: no partition has a leader epoch: no OffsetsForLeaderEpoch is sent (the answer would
    be undefined); each truncates to its high watermark and fetches."""
    env = Env("2.1")
    for tp in (T1P0, T1P1):
        log = _epoch_runs(env, tp, [(0, 5)], hw=2)
        log.leader_epoch_cache.clear()
        env.add(tp, offset=2, epoch=0, state=TRUNCATING)
    env.th.do_work(env.ctx)
    assert _epoch_requests(env) == 0
    assert env.log(T1P0).log_end_offset == 2 and env.log(T1P1).log_end_offset == 2
    assert all(env.st(tp).state == FETCHING for tp in (T1P0, T1P1))


def test_should_fetch_leader_epoch_request_if_last_epoch_defined_for_some_partitions_2_1():
    """ReplicaFetcherThreadTest.shouldFetchLeaderEpochRequestIfLastEpochDefinedForSomePartitions
    @2.1.0: topic1's partitions have epoch 5 (ending at LEO 0), topic2-1 none. Loop 1 sends one
    OffsetsForLeaderEpoch (topic1 only) and one Fetch; loops 2 and 3 only fetch; every
    partition is ready, none truncating or delayed."""
    env = Env("2.1")
    tps = _topic1_at_epoch_5(env)
    env.th.do_work(env.ctx)
    req = env.pending()
    assert [(t, p) for t, p, _c, _e in req.partitions] == [T1P0, T1P1]
    _answer_epochs(env, {T1P0: (E.NONE, 5, 1), T1P1: (E.NONE, 5, 1)})
    env.answer()
    assert _epoch_requests(env) == 1 and fetch_count(env) == 1
    for loop in (2, 3):
        env.run_round()
        assert _epoch_requests(env) == 1 and fetch_count(env) == loop
    for tp in tps:
        st = env.st(tp)
        assert st.state == FETCHING and st.is_ready_for_fetch(env.ctx.now)
        assert st.delayed_until_ms <= env.ctx.now


# ================================================== AbstractFetcherThreadTest @2.1.0 / 2.3.0
def test_simple_fetch_2_1():
    """AbstractFetcherThreadTest.testSimpleFetch @2.1.0: a partition added truncating (2.1 has
    no truncation on fetch) at offset 0, epoch 0; one doWork truncates (the leader's epoch 0
    ends at 2) and fetches both records; HW 2."""
    env = Env("2.1")
    env.replica(epoch_zero=True)
    env.add(offset=0, epoch=0, state=TRUNCATING)
    env.leader.set_state(TP, [batch(0, 1, 2)], leader_epoch=0, hw=2)
    env.run_round()
    assert env.log().log_end_offset == 2
    assert env.log().high_watermark == 2


def test_fenced_truncation_2_1():
    """AbstractFetcherThreadTest.testFencedTruncation @2.1.0 (KIP-320): the leader is at epoch
    1, the follower's request carries 0: FENCED_LEADER_EPOCH, no progress, and the partition
    leaves the thread."""
    env = Env("2.1")
    env.replica(epoch_zero=True)
    env.add(offset=0, epoch=0, state=TRUNCATING)
    env.leader.set_state(TP, [batch(1, 1, 2)], leader_epoch=1, hw=2)
    env.run_round()
    assert env.log().log_end_offset == 0 and env.log().high_watermark == 0
    assert env.st() is None


def test_fenced_fetch_2_1():
    """AbstractFetcherThreadTest.testFencedFetch @2.1.0: caught up at epoch 0, then the
    leader's epoch moves to 1: the next Fetch is fenced and the partition is removed."""
    env = Env("2.1")
    env.replica(epoch_zero=True)
    env.add(offset=0, epoch=0, state=TRUNCATING)
    env.leader.set_state(TP, [batch(0, 1, 2)], leader_epoch=0, hw=2)
    env.run_round()
    assert env.log().log_end_offset == 2
    env.leader.state(TP).leader_epoch += 1
    env.run_round()
    assert env.st() is None


def test_unknown_leader_epoch_in_truncation_2_1():
    """AbstractFetcherThreadTest.testUnknownLeaderEpochInTruncation @2.1.0: the follower is at
    epoch 1, the leader still at 0: UNKNOWN_LEADER_EPOCH keeps it truncating with nothing
    fetched; once the leader reaches epoch 1 it truncates and fetches one batch."""
    env = Env("2.1")
    env.replica(epoch_zero=True)
    env.add(offset=0, epoch=1, state=TRUNCATING)
    env.leader.set_state(TP, [batch(0, 1)], leader_epoch=0, hw=2)
    env.run_round()
    assert env.log().log_end_offset == 0 and env.st().state == TRUNCATING
    env.leader.state(TP).leader_epoch += 1
    env.run_round()
    assert env.log().log_end_offset == 1 and env.st().state == FETCHING


def test_unknown_leader_epoch_while_fetching_2_1():
    """AbstractFetcherThreadTest.testUnknownLeaderEpochWhileFetching @2.1.0: fetching at epoch
    1; the leader's epoch rewinds to 0 (UNKNOWN_LEADER_EPOCH): the follower stays at its offset,
    still fetching; back at epoch 1 it continues."""
    env = Env("2.1")
    env.replica(epoch_zero=True)
    env.add(offset=0, epoch=1, state=TRUNCATING)
    env.leader.set_state(TP, [batch(0, 1), batch(0, 2)], leader_epoch=1, hw=2)
    env.run_round()
    assert env.log().log_end_offset == 1 and env.st().state == FETCHING
    env.leader.state(TP).leader_epoch = 0
    env.run_round()
    assert env.log().log_end_offset == 1 and env.st().state == FETCHING
    env.leader.state(TP).leader_epoch = 1
    env.run_round()
    assert env.log().log_end_offset == 2 and env.st().state == FETCHING


def test_truncation_2_1():
    """AbstractFetcherThreadTest.testTruncation @2.1.0: follower batches at epochs 0, 2, 4,
    leader's at 1, 3, 5: rounds of OffsetsForLeaderEpoch (KIP-279) reconcile the logs; the
    follower ends with the leader's log start, LEO and HW."""
    env = Env("2.1")
    env.replica(batches=[batch(0, 1), batch(2, 2), batch(4, 3)], hw=0)
    env.add(offset=3, epoch=5, state=TRUNCATING)
    env.leader.set_state(TP, [batch(1, 1), batch(3, 2), batch(5, 3)], leader_epoch=5, hw=2)
    env.run_until_logs_match()
    assert records(env.log()) == records(env.leader.state(TP).log)
    assert env.log().log_start_offset == env.leader.state(TP).log.log_start_offset
    assert env.log().log_end_offset == env.leader.state(TP).log.log_end_offset
    assert env.log().high_watermark == env.leader.state(TP).hw


def test_truncation_skipped_if_no_epoch_change_2_1():
    """AbstractFetcherThreadTest.testTruncationSkippedIfNoEpochChange @2.1.0: one truncation,
    one batch; re-adding the partition at the same epoch (kafkasim: Partition.makeFollower
    leaves the fetcher alone) truncates no more and fetches the next batch."""
    env = Env("2.1")
    env.replica(epoch_zero=True)
    env.add(offset=0, epoch=5, state=TRUNCATING)
    env.leader.set_state(TP, [batch(1, 1), batch(3, 2), batch(5, 3)], leader_epoch=5, hw=2)
    _count_truncations(env)
    env.run_round()
    assert env.log().log_end_offset == 1 and len(_truncations(env)) == 1
    env.run_round()
    assert len(_truncations(env)) == 1 and env.log().log_end_offset == 2


def test_follower_fetch_out_of_range_high_2_1():
    """AbstractFetcherThreadTest.testFollowerFetchOutOfRangeHigh @2.1.0: the same logs at epoch
    4; after the initial truncation the follower fetches from 3. The leader's log is then
    emptied without a truncation phase: OFFSET_OUT_OF_RANGE above the leader's LEO truncates
    the follower to 0 (log start 0, HW 0)."""
    env = Env("2.1")
    env.replica(batches=[batch(0, 1), batch(2, 2), batch(4, 3)], hw=0)
    env.add(offset=3, epoch=4, state=TRUNCATING)
    env.leader.set_state(TP, [batch(0, 1), batch(2, 2), batch(4, 3)], leader_epoch=4, hw=2)
    env.run_round()
    assert env.log().log_end_offset == 3 and env.st().state == FETCHING
    env.leader.set_state(TP, [], leader_epoch=4, hw=0)
    env.run_round()
    assert env.log().log_end_offset == 0
    assert env.log().log_start_offset == 0
    assert env.log().high_watermark == 0


def test_truncate_to_high_watermark_during_remove_partitions():
    """AbstractFetcherThreadTest.testTruncateToHighWatermarkDuringRemovePartitions @2.3.0: a
    follower without leader epochs (Kafka: latestEpoch None; kafkasim: an empty epoch cache)
    whose partition is removed just before truncateToHighWatermark runs: nothing is truncated
    (LEO stays 3) and the partition is gone from the thread."""
    env = Env("2.3")
    log = env.replica(batches=[batch(0, 1), batch(2, 2), batch(4, 3)], hw=2)
    log.leader_epoch_cache.clear()
    env.add(offset=2, epoch=5, state=TRUNCATING)
    env.th.remove_partition(TP)
    env.th.do_work(env.ctx)
    assert env.log().log_end_offset == 3
    assert env.st() is None
    assert env.outbox_lines("truncate to ") == []


# ================================================== OffsetsForLeaderEpochTest @0.11.0.0
def test_should_get_epochs_from_replica_0_11():
    """OffsetsForLeaderEpochTest.shouldGetEpochsFromReplica @0.11.0.0: the leader's cache says
    epoch 5 ends at 42; the v0 answer is EpochEndOffset(NONE, 42), without an epoch."""
    ctx = _replica_manager("0.11.0")
    tp = ("topic", 1)
    partition = ctx.partition(*tp)
    partition.make_leader(ctx, 5, (0,), (0,), 0, 0)
    partition.log.append_as_leader(list(range(42)), [1] * 42, 5, 0)
    response = ctx.replica_manager.last_offset_for_leader_epoch(
        ctx, _request(tp, NO_PARTITION_LEADER_EPOCH, 5))
    assert [(r.error, r.end_offset) for r in response] == [(E.NONE, 42)]
    assert response[0].leader_epoch == UNDEFINED_EPOCH


def test_should_return_no_leader_for_partition_if_thrown_0_11():
    """OffsetsForLeaderEpochTest.shouldReturnNoLeaderForPartitionIfThrown @0.11.0.0: a hosted
    partition without a local leader answers NOT_LEADER_FOR_PARTITION (the pre-2.6 name) and
    UNDEFINED_EPOCH_OFFSET."""
    ctx = _replica_manager("0.11.0")
    tp = ("topic", 1)
    ctx.partition(*tp)
    response = ctx.replica_manager.last_offset_for_leader_epoch(
        ctx, _request(tp, NO_PARTITION_LEADER_EPOCH, 5))
    assert response == [EpochEndOffset("topic", 1, E.NOT_LEADER_FOR_PARTITION,
                                       UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)]


def test_should_return_unknown_topic_or_partition_if_thrown_0_11():
    """OffsetsForLeaderEpochTest.shouldReturnUnknownTopicOrPartitionIfThrown @0.11.0.0: no such
    partition: UNKNOWN_TOPIC_OR_PARTITION, UNDEFINED_EPOCH_OFFSET."""
    ctx = _replica_manager("0.11.0")
    response = ctx.replica_manager.last_offset_for_leader_epoch(
        ctx, _request(("topic", 1), NO_PARTITION_LEADER_EPOCH, 5))
    assert response == [EpochEndOffset("topic", 1, E.UNKNOWN_TOPIC_OR_PARTITION,
                                       UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)]


# ================================================== LeaderEpochFileCacheTest @1.1.0
def _cache_1_1() -> LeaderEpochFileCache:
    """A cache with 1.1's rules (before KAFKA-7415: monotonic assignments only)."""
    return LeaderEpochFileCache(truncates_conflicts=False, validates_entries=False)


def _end_offset_for(cache: LeaderEpochFileCache, epoch: int, leo: int) -> int:
    """1.1's ``endOffsetFor(epoch)``: the end offset alone."""
    return cache.end_offset_for(epoch, leo)[1]


def test_should_not_overwrite_log_end_offset_for_a_leader_epoch_once_it_has_been_assigned():
    """LeaderEpochFileCacheTest.shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned
    @1.1.0: epoch 2 assigned at 9, then again at 10: the start offset stays 9."""
    cache = _cache_1_1()
    cache.assign(2, 9)
    assert not cache.assign(2, 10)
    assert cache.entries[0].start_offset == 9


def test_should_return_unsupported_if_requested_epoch_less_than_first_epoch_1_1():
    """LeaderEpochFileCacheTest.shouldReturnUnsupportedIfRequestedEpochLessThanFirstEpoch @1.1.0:
    epochs 5, 6, 7; epoch 4 (below the first) is UNDEFINED_EPOCH_OFFSET (2.1+ answers the first
    entry's start offset)."""
    cache = _cache_1_1()
    for epoch, offset in ((5, 11), (6, 12), (7, 13)):
        cache.assign(epoch, offset)
    assert _end_offset_for(cache, 4, 0) == UNDEFINED_EPOCH_OFFSET


def test_should_return_next_available_epoch_if_there_is_no_exact_epoch_for_the_one_requested():
    """LeaderEpochFileCacheTest.shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested
    @1.1.0: epochs 0@10, 2@13, 4@17: epoch 1 ends at 13, epoch 2 at 17."""
    cache = _cache_1_1()
    for epoch, offset in ((0, 10), (2, 13), (4, 17)):
        cache.assign(epoch, offset)
    assert _end_offset_for(cache, 1, 0) == 13
    assert _end_offset_for(cache, 2, 0) == 17


def test_should_not_let_epoch_go_backwards_even_if_message_epochs_do_1_1():
    """LeaderEpochFileCacheTest.shouldNotLetEpochGoBackwardsEvenIfMessageEpochsDo @1.1.0: 1@5,
    2@6, then a message of epoch 1 at 7 is ignored: the latest epoch stays 2 (ending at the LEO
    8), epoch 1 ends at 6. (2.1+ drops epoch 2 instead.)"""
    cache = _cache_1_1()
    cache.assign(1, 5)
    cache.assign(2, 6)
    assert not cache.assign(1, 7)
    assert cache.latest_epoch() == 2
    assert _end_offset_for(cache, 1, 8) == 6
    assert _end_offset_for(cache, 2, 8) == 8
    assert cache.entries == [EpochEntry(1, 5), EpochEntry(2, 6)]


def test_should_not_let_offsets_go_backwards_even_if_epochs_progress_1_1():
    """LeaderEpochFileCacheTest.shouldNotLetOffsetsGoBackwardsEvenIfEpochsProgress @1.1.0: 2@6,
    then 3@5 (an earlier offset) is ignored. (2.1+ replaces 2@6 by 3@5.)"""
    cache = _cache_1_1()
    cache.assign(2, 6)
    assert not cache.assign(3, 5)
    assert cache.entries == [EpochEntry(2, 6)]


def test_should_allow_leader_epoch_to_change_even_if_offset_does_not_1_1():
    """LeaderEpochFileCacheTest.shouldAllowLeaderEpochToChangeEvenIfOffsetDoesNot @1.1.0: 2@9
    then 3@9: both are kept."""
    cache = _cache_1_1()
    cache.assign(2, 9)
    cache.assign(3, 9)
    assert cache.entries == [EpochEntry(2, 9), EpochEntry(3, 9)]


# ================================================== ReplicaManagerTest @0.11.0.0 - 2.3.0
def test_illegal_required_acks_0_11():
    """ReplicaManagerTest.testIllegalRequiredAcks @0.11.0.0: requiredAcks 3 is answered
    INVALID_REQUIRED_ACKS, nothing appended."""
    b = Broker("0.11.0")
    b.lair(0, 1, (0,), (0, 1))
    corr = b.produce(1, acks=3)
    assert b.produce_answer(corr).partitions[0][2] == "INVALID_REQUIRED_ACKS"
    assert b.part().log.log_end_offset == 0


@pytest.mark.parametrize("version", ["0.11.0", "1.1"])
def test_clear_purgatory_on_becoming_follower_old(version):
    """ReplicaManagerTest.testClearPurgatoryOnBecomingFollower @0.11.0.0 and @1.1.0: an acks=-1
    produce waiting for the HW and a consumer fetch waiting for 100000 bytes both complete when
    the leader becomes a follower; the produce fails NOT_LEADER_FOR_PARTITION (the pre-2.6
    name)."""
    b = Broker(version)
    b.lair(0, 0, (0, 1))
    corr = b.produce()
    fetch = b.fetch(-1, 0, max_wait_ms=1000, min_bytes=100_000)
    assert b.produce_answer(corr) is None and b.fetch_answer(fetch) is None
    b.lair(1, 1, (0, 1))
    assert b.produce_answer(corr).partitions == ((TOPIC, 0, E.NOT_LEADER_FOR_PARTITION, -1),)
    assert b.fetch_answer(fetch) is not None
    assert not b.rm.delayed_produce and not b.rm.delayed_fetch


def test_fetch_beyond_high_watermark_return_empty_response_0_11():
    """ReplicaManagerTest.testFetchBeyondHighWatermarkReturnEmptyResponse @0.11.0.0: two
    records appended, HW still 0 (ISR of three): a follower fetching from 1 gets data; a
    consumer fetching from 1 gets no error and an empty response."""
    b = Broker("0.11.0")
    b.lair(0, 0, (0, 1, 2))
    for _ in range(2):
        b.produce(1)
    assert b.part().log.high_watermark == 0
    follower = b.fetch_data(b.fetch(1, 1))
    assert follower.error == E.NONE and list(follower.records.ids)
    consumer = b.fetch_data(b.fetch(-1, 1))
    assert consumer.error == E.NONE and not list(consumer.records.ids)


@pytest.mark.parametrize(("version", "answered_hw"), [("1.1", 1), ("2.0", 0)])
def test_fetch_messages_when_not_follower_for_one_partition_old(version, answered_hw):
    """ReplicaManagerTest.testFetchMessagesWhenNotFollowerForOnePartition @1.1.0 and @2.0.0:
    replica 1 fetches partition 0 (replicas 0, 1) and partition 1 (replicas 0, 2) from offset 1.
    Partition 0 answers records and moves its HW to 1: 1.1 answers that new HW (KAFKA-5758's
    updateLeaderReplicaInfo), 2.0 the HW read before (KAFKA-7104). Partition 1 answers no error,
    no records, HW 0, and its HW stays 0."""
    b = Broker(version)
    b.lair(0, 0, (0, 1), partition=0)
    b.lair(0, 0, (0, 2), partition=1)
    for _ in range(2):
        b.produce(1, partitions=(0, 1))
    corr = b.fetch(1, 1, partitions=(0, 1), max_wait_ms=1000, min_bytes=0)
    tp0, tp1 = b.fetch_data(corr, 0), b.fetch_data(corr, 1)
    assert (tp0.error, tp0.high_watermark) == (E.NONE, answered_hw) and list(tp0.records.ids)
    assert (tp1.error, tp1.high_watermark, list(tp1.records.ids)) == (E.NONE, 0, [])
    assert b.part(0).log.high_watermark == 1
    assert b.part(1).log.high_watermark == 0


def test_become_follower_when_leader_is_unchanged_but_missed_leader_update_2_3():
    """ReplicaManagerTest.testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate @2.3.0:
    a follower of broker 1 at epoch 1 (LEO 10, HW 5) gets epoch 3 from the same leader: the
    epoch grew by more than one, so it restarts its fetcher truncating from its HW (2.3 sends
    OffsetsForLeaderEpoch; the leader's answer truncates it)."""
    b = Broker("2.3")
    b.lair(1, 1, (0, 1))
    log = b.part().log
    log.append_as_leader(list(range(10)), [10] * 10, 1, 0)
    log.update_high_watermark(5)
    b.lair(1, 3, (0, 1))
    (key,) = b.fetchers
    st = b.fetchers[key].partitions[(TOPIC, 0)]
    assert key[0] == 1 and st.current_leader_epoch == 3 and st.state == TRUNCATING
    assert (st.fetch_offset, st.last_fetched_epoch) == (5, UNDEFINED)


def test_should_return_invalid_offset_if_epoch_is_requested_which_is_not_currently_tracked():
    """LeaderEpochFileCacheTest
    .shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked @1.1.0: epoch 2 at
    100 (LEO 100); epoch 3, above the latest, is UNDEFINED_EPOCH_OFFSET."""
    cache = _cache_1_1()
    cache.assign(2, 100)
    assert _end_offset_for(cache, 3, 100) == UNDEFINED_EPOCH_OFFSET


def test_should_increase_and_track_epochs_as_follower_receives_many_messages_1_1():
    """LeaderEpochFileCacheTest.shouldIncreaseAndTrackEpochsAsFollowerReceivesManyMessages
    @1.1.0: every message assigns its epoch; only the first offset of each epoch is kept, the
    latest epoch ends at the LEO and the earlier ones where the next starts."""
    cache = _cache_1_1()
    leo = 0
    for epoch in (0, 1, 2):
        for _ in range(3):
            cache.assign(epoch, leo)
            leo += 1
        assert cache.latest_epoch() == epoch
        assert _end_offset_for(cache, epoch, leo) == leo
    assert cache.entries == [EpochEntry(0, 0), EpochEntry(1, 3), EpochEntry(2, 6)]
    assert _end_offset_for(cache, 0, leo) == 3
    assert _end_offset_for(cache, 1, leo) == 6


@pytest.mark.parametrize(("kafka_test", "end_offset", "expected"), [
    ("shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries", 8, [(2, 6)]),
    ("shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest", 9, [(2, 6), (3, 8)]),
])
def test_clear_and_flush_latest_1_1(kafka_test, end_offset, expected):
    """LeaderEpochFileCacheTest.{shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries,
    shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest} @1.1.0: 1.1's clearAndFlushLatest
    (kafkasim: truncate_from_end) on 2@6, 3@8, 4@11 drops every epoch starting at or after the
    offset."""
    cache = _cache_1_1()
    for epoch, offset in ((2, 6), (3, 8), (4, 11)):
        cache.assign(epoch, offset)
    cache.truncate_from_end(end_offset)
    assert cache.entries == [EpochEntry(*e) for e in expected]


@pytest.mark.parametrize(("kafka_test", "start_offset", "expected"), [
    ("shouldPreserveResetOffsetOnClearEarliestIfOneExists", 8, [(3, 8), (4, 11)]),
    ("shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs", 9, [(3, 9), (4, 11)]),
    ("shouldNotClearAnythingIfOffsetToEarly", 1, [(2, 6), (3, 8), (4, 11)]),
    ("shouldNotClearAnythingIfOffsetToFirstOffset", 6, [(2, 6), (3, 8), (4, 11)]),
    ("shouldRetainLatestEpochOnClearAllEarliest", 11, [(4, 11)]),
    ("shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset", 15, [(4, 15)]),
])
def test_clear_and_flush_earliest_1_1(kafka_test, start_offset, expected):
    """LeaderEpochFileCacheTest's clearAndFlushEarliest cases @1.1.0 (kafkasim:
    truncate_from_start) on 2@6, 3@8, 4@11: the epochs wholly below the new log start go, the
    one holding it restarts there."""
    cache = _cache_1_1()
    for epoch, offset in ((2, 6), (3, 8), (4, 11)):
        cache.assign(epoch, offset)
    cache.truncate_from_start(start_offset)
    assert cache.entries == [EpochEntry(*e) for e in expected]
