"""KIP-320 consumer side (KAFKA-7747, 2.3+): position validation after a leader change.

The consumer keeps with its position the epoch of the last record it consumed and the leader it
was established against (SubscriptionState.FetchPosition). When the metadata names another leader
or epoch it asks OffsetsForLeaderEpoch before fetching (Fetcher.validateOffsetsIfNeeded); an end
offset below the position is a truncation (SubscriptionState.maybeCompleteValidation): seek to it
with a reset policy, LogTruncationException with auto.offset.reset=none. Before 2.3 nothing is
checked.
"""

from __future__ import annotations

import pytest
from truncation_setup import elect_the_follower_uncleanly, leader_ahead_of_its_follower

from kafkasim.runtime.clients.consumer import (
    LogTruncationException,
    NoOffsetForPartitionException,
    OffsetOutOfRangeException,
)
from kafkasim.runtime.clients.subscription_state import (
    EpochEndOffset,
    FetchPosition,
    LeaderAndEpoch,
)
from kafkasim.runtime.cluster import Cluster

TP = ("t", 0)


def _unclean_truncation(version: str, reset: str, new_records: int = 5):
    """A consumer reads offsets 0-9 from leader 1 (epoch 0) while broker 2, out of the ISR, holds
    only 0-4. Broker 1 dies; broker 2 is elected uncleanly (epoch 1) and takes ``new_records``
    new records from offset 5: offsets 5-9 the consumer read are gone."""
    c, p = leader_ahead_of_its_follower(version)
    cons = c.consumer(group="g", auto_offset_reset=reset)
    cons.assign("t")
    cons.seek("t", 0, 0)
    got = cons.poll(2000)
    assert [r.value for r in got] == [f"r{i}" for i in range(10)]
    position = cons.subscriptions.position(TP)
    assert (position.offset, position.offset_epoch) == (10, 0)
    elect_the_follower_uncleanly(c, p, new_records)
    return c, cons


def _poll_until_raised(cons, polls: int = 4):
    got = []
    for _ in range(polls):
        got += cons.poll(1000)
    return got


def _validation_requests(c) -> list:
    return [r for r in c.trace.where("send")
            if r[2] == "consumer-1" and r[5][0] == "OffsetsForLeaderEpochRequest"]


@pytest.mark.parametrize("version", ["2.3", "3.7"])
def test_truncation_without_reset_policy_raises_log_truncation_exception(version):
    # SubscriptionStateTest.testTruncationDetectionWithoutResetPolicy at cluster level
    c, cons = _unclean_truncation(version, "none")
    with pytest.raises(LogTruncationException) as err:
        _poll_until_raised(cons)
    assert err.value.divergent_offsets == {TP: (5, 0)}     # epoch 0 ends at 5 on the new leader
    # KAFKA-10113 (2.6+): the fetch positions; before, the divergent offsets
    assert err.value.offset_out_of_range_partitions == {TP: 10 if version == "3.7" else 5}
    assert cons.position("t", 0) == 10                      # not moved: the application decides
    assert _validation_requests(c)
    cons.seek("t", 0, 5)
    assert [r.value for r in cons.poll(1000)] == [f"n{i}" for i in range(5, 10)]


@pytest.mark.parametrize("version", ["2.3", "3.7"])
@pytest.mark.parametrize("reset", ["earliest", "latest"])
def test_truncation_with_reset_policy_seeks_to_the_divergence_point(version, reset):
    # SubscriptionStateTest.testTruncationDetectionWithResetPolicy: seekValidated(end offset)
    c, cons = _unclean_truncation(version, reset)
    got = _poll_until_raised(cons)
    assert [(r.offset, r.value) for r in got] == [(i, f"n{i}") for i in range(5, 10)]
    rows = c.trace.where("consumer_truncation")
    assert [r[5] for r in rows] == [(10, 5, "seek")]


@pytest.mark.parametrize("reset", ["none", "earliest"])
def test_no_validation_before_2_3_the_new_leaders_records_are_skipped_silently(reset):
    c, cons = _unclean_truncation("2.2", reset)
    got = _poll_until_raised(cons)          # no exception, nothing re-read
    assert got == []
    assert cons.position("t", 0) == 10
    assert not _validation_requests(c) and not c.trace.where("consumer_truncation")
    c.producer(acks="1").send("t", "n10", partition=0)
    c.run(500)
    assert [(r.offset, r.value) for r in cons.poll(1000)] == [(10, "n10")]   # n5-n9 never read


@pytest.mark.parametrize(("reset", "reread"), [
    ("earliest", ["r0", "r1", "r2", "r3", "r4", "n5", "n6"]), ("latest", [])])
def test_before_2_3_a_position_past_the_new_leo_is_out_of_range_and_reset(reset, reread):
    # Fetcher: OFFSET_OUT_OF_RANGE -> requestOffsetReset (auto.offset.reset, not the committed
    # offset 10)
    c, cons = _unclean_truncation("2.2", reset, new_records=2)     # new leader LEO 7 < 10
    cons.commit()
    got = _poll_until_raised(cons, polls=3)
    assert [r.value for r in got] == reread
    assert cons.position("t", 0) == 7
    assert any(e[3] == "OFFSET_OUT_OF_RANGE" for e in cons.errors)


def test_before_2_3_out_of_range_without_reset_policy_raises():
    c, cons = _unclean_truncation("2.2", "none", new_records=2)
    with pytest.raises(OffsetOutOfRangeException) as err:
        _poll_until_raised(cons)
    assert not isinstance(err.value, LogTruncationException)
    assert err.value.offset_out_of_range_partitions == {TP: 10}


def test_no_committed_offset_and_no_reset_policy_raises_no_offset_for_partition():
    c = Cluster(3, seed=1)
    c.create_topic("t", 1, 3)
    cons = c.consumer(group="g", auto_offset_reset="none")
    cons.assign("t")
    with pytest.raises(NoOffsetForPartitionException):
        cons.poll(500)


# ------------------------------------------- SubscriptionState.maybeCompleteValidation cases


ASKED = FetchPosition(10, 5, LeaderAndEpoch(1, 10))


def _complete(cons, answer) -> None:
    """OffsetFetcher's validation answer for the position ASKED about."""
    cons.offset_fetcher.complete_validation(TP, ASKED, answer)


def _awaiting(version: str, reset: str):
    c = Cluster(3, seed=1, kafka_version=version)
    c.create_topic("t", 1, 3)
    cons = c.consumer(auto_offset_reset=reset)
    cons.assign("t")
    cons.subscriptions.seek_unvalidated(TP, ASKED)
    assert cons.subscriptions.awaiting_validation(TP)
    return cons


def _truncation_rows(cons) -> list:
    return [r[5] for r in cons.cluster.trace.where("consumer_truncation")]


def test_maybe_complete_validation_end_offset_past_position_completes():
    # SubscriptionStateTest.testMaybeCompleteValidation
    cons = _awaiting("3.7", "latest")
    _complete(cons, EpochEndOffset(leader_epoch=5, end_offset=15))
    assert not cons.subscriptions.awaiting_validation(TP)
    assert cons.subscriptions.position(TP) == ASKED and _truncation_rows(cons) == []


def test_maybe_complete_validation_with_reset_policy_takes_the_divergent_epoch():
    # SubscriptionStateTest.testTruncationDetectionWithResetPolicy
    cons = _awaiting("3.7", "earliest")
    _complete(cons, EpochEndOffset(leader_epoch=7, end_offset=5))
    assert not cons.subscriptions.awaiting_validation(TP)
    assert cons.subscriptions.position(TP) == FetchPosition(5, 7, LeaderAndEpoch(1, 10))
    assert _truncation_rows(cons) == [(10, 5, "seek")]


def test_maybe_complete_validation_without_reset_policy_stays_awaiting():
    # SubscriptionStateTest.testTruncationDetectionWithoutResetPolicy
    cons = _awaiting("3.7", "none")
    _complete(cons, EpochEndOffset(leader_epoch=7, end_offset=5))
    assert cons.subscriptions.awaiting_validation(TP) and cons.position("t", 0) == 10
    assert cons.offset_fetcher.truncations == {TP: (5, 7)}
    assert _truncation_rows(cons) == [(10, 5, "LogTruncationException")]


@pytest.mark.parametrize("reset", ["earliest", "none"])
def test_unknown_divergent_offset_since_2_6(reset):
    # SubscriptionStateTest.testTruncationDetectionUnknownDivergentOffsetWith(out)ResetPolicy
    cons = _awaiting("2.6", reset)
    _complete(cons, EpochEndOffset(leader_epoch=-1, end_offset=-1))
    subs = cons.subscriptions
    if reset == "none":
        assert cons.offset_fetcher.truncations == {TP: None} and subs.awaiting_validation(TP)
        assert _truncation_rows(cons) == [(10, None, "LogTruncationException")]
    else:
        assert cons.position("t", 0) is None and subs.is_offset_reset_needed(TP)
        assert not subs.awaiting_validation(TP)
        assert _truncation_rows(cons) == [(10, None, "reset")]


def test_unknown_divergent_offset_before_2_6_seeks_to_minus_one():
    # SubscriptionState.maybeCompleteValidation @2.3.0: endOffset -1 < position
    cons = _awaiting("2.5", "earliest")
    _complete(cons, EpochEndOffset(leader_epoch=-1, end_offset=-1))
    assert cons.position("t", 0) == -1 and not cons.subscriptions.awaiting_validation(TP)
    assert _truncation_rows(cons) == [(10, -1, "seek")]


def test_a_position_without_epoch_is_not_validated():
    # SubscriptionState.validatePosition: no offset epoch -> FETCHING (e.g. after seek / reset)
    c = Cluster(3, seed=1)
    c.create_topic("t", 1, 3)
    cons = c.consumer(auto_offset_reset="earliest")
    cons.assign("t")
    cons.poll(500)
    cons.seek("t", 0, 0)
    position = cons.subscriptions.position(TP)
    assert position.offset_epoch is None
    cons.leader_epochs[TP] += 1                 # as if the leader had changed
    cons.poll(500)
    assert not _validation_requests(c) and not cons.subscriptions.awaiting_validation(TP)
    assert cons.subscriptions.position(TP).current_leader.epoch == position.current_leader.epoch + 1


def test_log_truncation_exception_without_divergent_offset():
    # OffsetFetcherUtils.buildLogTruncationException: divergentOffsets only where the leader said
    err = LogTruncationException({TP: 10}, {TP: None})
    assert err.divergent_offsets == {} and err.offset_out_of_range_partitions == {TP: 10}
    assert isinstance(err, OffsetOutOfRangeException)
