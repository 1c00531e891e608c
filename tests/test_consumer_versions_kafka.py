"""Kafka's consumer tests at older release tags, where the consumer behaved differently.

Sources: ``clients/src/test/java/org/apache/kafka/clients/consumer/internals/FetcherTest.java``,
``SubscriptionStateTest.java`` and ``clients/.../consumer/KafkaConsumerTest.java`` at the tag
each docstring names (``FetcherTest.testX @2.3.0``), with the consumer code of that tag
(``Fetcher.parseCompletedFetch @2.2.0``, ...) where a difference has no test of its own. The
harness is ``test_consumer_fetcher_kafka``'s (scripted answers, Kafka's MockClient), on a
cluster of the release under test.

Differences covered: which fetch errors ask for new metadata, are only logged or are
unexpected (IllegalStateException) by release (REPLICA_NOT_AVAILABLE from 2.1, the KIP-320
errors from 2.3, error code 6's name from 2.6); the reconnect-backoff skip of fetches and
ListOffsets (2.0, #4644); the CurrentLeaderEpoch of a fetch and the epoch of a position
(KIP-320, 2.3); the 2.3 - 2.5 truncation check (an undefined answer is a divergent offset of
-1); paused partitions' fetched records (kept from 2.4); the KIP-392 preferred read replica at
2.4; the pre-2.3 committed position, which carries no epoch.
"""

from __future__ import annotations

import pytest
from clusters import make_cluster
from test_consumer_fetcher_kafka import TP0, TP1, Scripted, T, capture, of_type

from kafkasim.core import errors as E
from kafkasim.core.errors import IllegalStateException
from kafkasim.core.messages import FetchRequest, ListOffsetsRequest, MetadataRequest
from kafkasim.runtime.clients.consumer import (
    NoOffsetForPartitionException,
    OffsetOutOfRangeException,
)
from kafkasim.runtime.clients.subscription_state import (
    EpochEndOffset,
    FetchPosition,
    LeaderAndEpoch,
    OffsetAndMetadata,
    OffsetResetStrategy,
    SubscriptionState,
)


class At(Scripted):
    """``Scripted`` on a cluster of Kafka ``version``."""

    def __init__(self, version: str, reset: str = "earliest", partitions: int = 2,
                 **config) -> None:
        self.c = make_cluster(3, seed=1, kafka_version=version, topic=T, partitions=partitions,
                              records=0, settle_ms=500)
        self.cons = self.c.consumer(auto_offset_reset=reset, **config)
        self.subs = self.cons.subscriptions
        self.sent = capture(self.cons)
        self.mark = 0


def fetching_at(version: str, offset: int = 0, reset: str = "earliest") -> tuple[At, int]:
    """A scripted consumer of t-0 at ``offset`` that has sent one FetchRequest."""
    s = At(version, reset)
    s.assign(0)
    s.subs.seek(TP0, offset)
    (corr,) = s.send_fetches()
    return s, corr


def _answer_error(version: str, error: str) -> At:
    s, corr = fetching_at(version)
    s.respond(corr, s.data(TP0, 0, 3, err=error))
    assert s.fetch_records() == {}
    assert s.subs.position(TP0).offset == 0 and not s.subs.is_offset_reset_needed(TP0)
    return s


# -- FetcherTest: fetch errors by release ----------------------------------------------------
@pytest.mark.parametrize(("version", "error"), [
    ("1.1", E.NOT_LEADER_FOR_PARTITION),
    ("2.4", E.NOT_LEADER_FOR_PARTITION),
    ("2.6", E.NOT_LEADER_OR_FOLLOWER),
    ("1.1", E.UNKNOWN_TOPIC_OR_PARTITION),
    ("2.3", E.FENCED_LEADER_EPOCH),
])
def test_fetch_error_requests_metadata_update(version, error):
    """FetcherTest.testFetchNotLeaderForPartition @1.1.0 / @2.4.0, testFetchNotLeaderOrFollower
    @2.6.0 (KAFKA-10223 renamed error code 6), testFetchUnknownTopicOrPartition @1.1.0,
    testFetchFencedLeaderEpoch @2.3.0: no records and a metadata update."""
    s = _answer_error(version, error)
    assert s.metadata_update_requested()


def test_fetch_unknown_leader_epoch_2_3():
    """FetcherTest.testFetchUnknownLeaderEpoch @2.3.0: no records, no metadata update."""
    s = _answer_error("2.3", E.UNKNOWN_LEADER_EPOCH)
    assert not s.metadata_update_requested()


@pytest.mark.parametrize(("version", "error"), [
    ("2.2", E.FENCED_LEADER_EPOCH),
    ("2.2", E.UNKNOWN_LEADER_EPOCH),
    ("2.2", E.OFFSET_NOT_AVAILABLE),
    ("2.0", E.REPLICA_NOT_AVAILABLE),
])
def test_fetch_error_unexpected_before_it_was_handled(version, error):
    """Fetcher.parseCompletedFetch @2.2.0 / @2.0.0: an error outside its list (the KIP-320
    ones before 2.3, REPLICA_NOT_AVAILABLE before 2.1) is "Unexpected error code": the poll
    without records throws IllegalStateException; no metadata update."""
    s = _answer_error(version, error)
    with pytest.raises(IllegalStateException, match="Unexpected error code"):
        s.cons.poll(100)
    assert not of_type(s.sent, MetadataRequest)[1:]


def test_fetch_replica_not_available_requests_metadata_update_2_1():
    """Fetcher.parseCompletedFetch @2.1.0 (KAFKA-7395): REPLICA_NOT_AVAILABLE asks for new
    metadata, like NOT_LEADER_FOR_PARTITION."""
    s = _answer_error("2.1", E.REPLICA_NOT_AVAILABLE)
    assert s.metadata_update_requested()


@pytest.mark.parametrize(("error", "requests_metadata"), [
    (E.KAFKA_STORAGE_ERROR, True), ("UNKNOWN_SERVER_ERROR", False)])
def test_fetch_error_1_1(error, requests_metadata):
    """FetcherTest.testFetchError @1.1.0 and Fetcher.parseCompletedFetch @1.1.0:
    KAFKA_STORAGE_ERROR asks for new metadata, UNKNOWN_SERVER_ERROR is only logged."""
    s = _answer_error("1.1", error)
    assert s.metadata_update_requested() is requests_metadata


# -- reconnect backoff (#4644, 2.0) ------------------------------------------------------------
@pytest.mark.parametrize(("version", "first"), [("2.0", 0), ("1.1", 1)])
def test_fetch_skips_blacked_out_nodes(monkeypatch, version, first):
    """FetcherTest.testFetchSkipsBlackedOutNodes @2.0.0: no fetch to a leader in its reconnect
    backoff, one once it is over. Fetcher.prepareFetchRequests @1.1.0 skipped only a node with
    a request in flight: the fetch is sent anyway."""
    s = At(version)
    s.assign(0)
    s.subs.seek(TP0, 0)
    leader = s.leader(TP0)
    monkeypatch.setattr(s.c.transport, "is_unavailable", lambda src, dst: dst == leader)
    assert len(s.send_fetches()) == first
    monkeypatch.undo()
    s.cons.client.pending.clear()
    assert len(s.send_fetches()) == 1


def test_reset_offsets_skips_blacked_out_connections(monkeypatch):
    """FetcherTest.testResetOffsetsSkipsBlackedOutConnections @2.0.0: no ListOffsets to a
    leader in its reconnect backoff; the partition still awaits its reset and is reset after."""
    s = At("2.0")
    s.assign(0)
    s.subs.request_offset_reset(TP0, OffsetResetStrategy.EARLIEST)
    leader = s.leader(TP0)
    monkeypatch.setattr(s.c.transport, "is_unavailable", lambda src, dst: dst == leader)
    s.cons.offset_fetcher.reset_positions_if_needed([TP0], 0)
    assert of_type(s.sent, ListOffsetsRequest) == []
    assert s.subs.is_offset_reset_needed(TP0)
    monkeypatch.undo()
    s.cons.offset_fetcher.reset_positions_if_needed([TP0], 500)
    assert [b for b, _m in of_type(s.sent, ListOffsetsRequest)] == [leader]
    assert not s.subs.is_offset_reset_needed(TP0) and s.subs.position(TP0).offset == 0


# -- leader epochs in fetches and positions (KIP-320) ------------------------------------------
@pytest.mark.parametrize(("version", "epoch"), [("2.3", 99), ("2.2", -1), ("2.1", -1)])
def test_epoch_set_in_fetch_request(version, epoch):
    """FetcherTest.testEpochSetInFetchRequest @2.3.0: the FetchRequest carries the metadata's
    leader epoch as CurrentLeaderEpoch (KAFKA-7440). Fetcher.prepareFetchRequests @2.1.0 /
    @2.2.0 sent none (-1)."""
    s = At(version)
    s.assign(0)
    s.cons.leader_epochs[TP0] = 99
    s.cons.seek(T, 0, 10)
    s.send_fetches()
    ((_broker, req),) = of_type(s.sent, FetchRequest)
    assert [(fp.fetch_offset, fp.current_leader_epoch) for fp in req.partitions] == [(10, epoch)]


def test_subscription_position_updated_with_epoch_2_3():
    """FetcherTest.testSubscriptionPositionUpdatedWithEpoch @2.3.0: the position takes the
    epoch of the last record fetched."""
    s, corr = fetching_at("2.3")
    s.respond(corr, s.data(TP0, 0, epochs=[1, 1, 1]))
    assert s.fetch_records() == {TP0: [0, 1, 2]}
    position = s.subs.position(TP0)
    assert (position.offset, position.offset_epoch) == (3, 1)


def test_leader_epoch_in_consumer_record_2_1():
    """FetcherTest.testLeaderEpochInConsumerRecord @2.1.0: each record carries its batch's
    leader epoch (ConsumerRecord.leaderEpoch, KIP-320)."""
    s, corr = fetching_at("2.1")
    s.respond(corr, s.data(TP0, 0, epochs=[1, 1, 8, 13, 13, 13]))
    assert [r.leader_epoch for r in s.cons.consumed] == [1, 1, 8, 13, 13, 13]


# -- OFFSET_OUT_OF_RANGE @1.1.0 ----------------------------------------------------------------
def test_fetch_offset_out_of_range_1_1():
    """FetcherTest.testFetchOffsetOutOfRange @1.1.0: with a reset policy the partition awaits
    a reset and has no valid position."""
    s, corr = fetching_at("1.1")
    s.respond(corr, s.data(TP0, 0, 3, err=E.OFFSET_OUT_OF_RANGE))
    assert s.fetch_records() == {}
    assert s.subs.is_offset_reset_needed(TP0)
    assert s.subs.valid_position(TP0) is None


def test_stale_out_of_range_error_1_1():
    """FetcherTest.testStaleOutOfRangeError @1.1.0: an OFFSET_OUT_OF_RANGE for offset 0 after a
    seek to 1 is discarded: no reset, the position stays 1."""
    s, corr = fetching_at("1.1")
    s.subs.seek(TP0, 1)
    s.respond(corr, s.data(TP0, 0, 3, err=E.OFFSET_OUT_OF_RANGE))
    assert not s.subs.is_offset_reset_needed(TP0)
    assert s.subs.position(TP0).offset == 1


def test_fetch_offset_out_of_range_exception_1_1():
    """FetcherTest.testFetchOffsetOutOfRangeException @1.1.0: without a reset policy no reset;
    fetchedRecords throws OffsetOutOfRangeException {tp0} twice (the completed fetch stays
    queued when its parse throws)."""
    s, corr = fetching_at("1.1", reset="none")
    s.respond(corr, s.data(TP0, 0, 3, err=E.OFFSET_OUT_OF_RANGE))
    assert not s.subs.is_offset_reset_needed(TP0)
    for _ in range(2):
        with pytest.raises(OffsetOutOfRangeException) as err:
            s.cons.poll(100)
        assert err.value.offset_out_of_range_partitions == {TP0: 0}


def test_fetch_position_after_exception_1_1():
    """FetcherTest.testFetchPositionAfterException @1.1.0: tp1's three records come first and
    move its position to 4; then one OffsetOutOfRangeException for tp0 alone."""
    s = At("1.1", reset="none")
    s.assign(0, 1)
    s.cons.seek(T, 0, 1)
    s.cons.seek(T, 1, 1)
    by_tp = {s.cons.client.sent_to[c][1].partitions[0].partition: c for c in s.send_fetches()}
    s.respond(by_tp[1], s.data(TP1, 1, 3))
    s.respond(by_tp[0], s.data(TP0, 1, err=E.OFFSET_OUT_OF_RANGE))
    assert s.fetch_records() == {TP1: [1, 2, 3]}
    assert s.subs.position(TP1).offset == 4
    with pytest.raises(OffsetOutOfRangeException) as err:
        s.cons.poll(100)
    assert err.value.offset_out_of_range_partitions == {TP0: 1}
    assert s.subs.position(TP1).offset == 4


# -- paused partitions (KAFKA-7548, 2.4) --------------------------------------------------------
@pytest.mark.parametrize(("version", "kept"), [("2.4", True), ("2.3", False)])
def test_fetch_on_completed_fetches_for_all_paused_partitions(version, kept):
    """FetcherTest.testFetchOnCompletedFetchesForAllPausedPartitions @2.4.0: records fetched
    for a partition paused meanwhile stay buffered; none is returned while it is paused, and
    no fetch is sent for it. FetcherTest.testInFlightFetchOnPausedPartition @2.3.0
    (Fetcher.fetchedRecords @2.3.0): they were dropped."""
    s, corr = fetching_at(version)
    s.subs.pause(TP0)
    s.respond(corr, s.data(TP0, 0, 3))
    assert s.fetch_records() == {}
    buffered = {(r.partition, r.offset) for r in s.cons.fetch_collector.fetch_buffer}
    assert buffered == ({(0, 0), (0, 1), (0, 2)} if kept else set())
    assert s.send_fetches() == []
    assert s.subs.position(TP0).offset == 0


# -- preferred read replica (KIP-392, 2.4) -----------------------------------------------------
def _preferred_at_2_4() -> tuple[At, int]:
    s = At("2.4")
    s.assign(0)
    s.subs.seek(TP0, 0)
    follower = next(b for b in (1, 2, 3) if b != s.leader(TP0))
    assert s.cons.fetching_from(T, 0) == s.leader(TP0)
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(TP0, 0, 3, pref=follower))
    assert s.fetch_records() == {TP0: [0, 1, 2]}
    return s, follower


def test_preferred_read_replica_2_4():
    """FetcherTest.testPreferredReadReplica @2.4.0: the leader before any answer; the replica an
    answer names is fetched from next; one not in the metadata (here 99) falls back to the
    leader, with no metadata update before 3.4."""
    s, follower = _preferred_at_2_4()
    assert s.cons.fetching_from(T, 0) == follower
    (corr,) = s.send_fetches()
    assert s.cons.client.sent_to[corr][0] == follower
    s.respond(corr, s.data(TP0, 3, 3, pref=99))
    s.fetch_records()
    assert s.cons.fetching_from(T, 0) == s.leader(TP0)
    s.send_fetches()
    assert not s.cons._metadata_update_requested


def test_preferred_read_replica_offset_error_2_4():
    """FetcherTest.testPreferredReadReplicaOffsetError @2.4.0: OFFSET_OUT_OF_RANGE from the
    replica unsets it; the leader is fetched from again, no reset."""
    s, _follower = _preferred_at_2_4()
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(TP0, 3, err=E.OFFSET_OUT_OF_RANGE))
    assert s.subs.preferred_read_replica(TP0, s.c.now) is None
    assert s.cons.fetching_from(T, 0) == s.leader(TP0)
    assert not s.subs.is_offset_reset_needed(TP0)


def test_fetch_error_keeps_preferred_read_replica_before_3_4():
    """Fetcher.parseCompletedFetch @2.4.0 (before KAFKA-14379, FetcherTest
    .testFetchErrorShouldClearPreferredReadReplica @3.4.0): NOT_LEADER_FOR_PARTITION from the
    preferred replica asks for new metadata but keeps the replica until its lease ends."""
    s, follower = _preferred_at_2_4()
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(TP0, 3, err=E.NOT_LEADER_FOR_PARTITION))
    assert s.subs.preferred_read_replica(TP0, s.c.now) == follower


# -- SubscriptionStateTest @2.3.0 (before KAFKA-9840 / KAFKA-10113) -------------------------------
def _awaiting(reset: str, *, detects: bool = False):
    state = SubscriptionState(reset, detects_unknown_truncation=detects)
    state.assign_from_user([TP0])
    position = FetchPosition(10, 5, LeaderAndEpoch.of(1, 10))
    state.seek_unvalidated(TP0, position)
    assert state.awaiting_validation(TP0)
    return state, position


def test_truncation_detection_with_reset_policy_2_3():
    """SubscriptionStateTest.testTruncationDetectionWithResetPolicy @2.3.0: an end offset 5
    (epoch 7) below the position 10: the position becomes (5, 7), validated."""
    state, position = _awaiting("earliest")
    assert state.maybe_complete_validation(TP0, position, EpochEndOffset(E.NONE, 0, 7, 5)) \
        is None
    assert not state.awaiting_validation(TP0)
    assert state.position(TP0) == FetchPosition(5, 7, LeaderAndEpoch.of(1, 10))


def test_truncation_detection_without_reset_policy_2_3():
    """SubscriptionStateTest.testTruncationDetectionWithoutResetPolicy @2.3.0: with "none" the
    divergent offset (5, epoch 7) is returned and the position still awaits validation."""
    state, position = _awaiting("none")
    truncation = state.maybe_complete_validation(TP0, position, EpochEndOffset(E.NONE, 0, 7, 5))
    assert truncation.divergent_offset == OffsetAndMetadata(5, 7)
    assert state.awaiting_validation(TP0)


@pytest.mark.parametrize(("detects", "offset", "reset"), [(False, -1, False), (True, None, True)])
def test_undefined_end_offset_with_reset_policy(detects, offset, reset):
    """SubscriptionState.maybeCompleteValidation @2.3.0: an answer with the undefined epoch and
    end offset (-1, -1) is compared like any other, so the position becomes -1.
    SubscriptionStateTest.testTruncationDetectionUnknownDivergentOffsetWithResetPolicy @2.6.0:
    the partition awaits a reset instead."""
    state, position = _awaiting("earliest", detects=detects)
    assert state.maybe_complete_validation(TP0, position, EpochEndOffset(E.NONE, 0, -1, -1)) \
        is None
    assert state.is_offset_reset_needed(TP0) is reset
    current = state.position(TP0)
    assert (None if current is None else current.offset) == offset


def test_maybe_complete_validation_after_position_change_2_3():
    """SubscriptionStateTest.testMaybeCompleteValidationAfterPositionChange @2.3.0: an answer
    about an older position changes nothing: still awaiting validation at the new one."""
    state, position = _awaiting("earliest")
    update = FetchPosition(20, 8, LeaderAndEpoch.of(1, 10))
    state.seek_unvalidated(TP0, update)
    assert state.maybe_complete_validation(TP0, position, EpochEndOffset(E.NONE, 0, 5, 15)) \
        is None
    assert state.awaiting_validation(TP0) and state.position(TP0) == update


# -- KafkaConsumerTest @1.1.0 ----------------------------------------------------------------------
def _cluster_at(version: str, records: int):
    return make_cluster(3, seed=1, kafka_version=version, topic=T, partitions=1,
                        records=records, settle_ms=500)


def test_reset_to_committed_offset_1_1():
    """KafkaConsumerTest.testResetToCommittedOffset @1.1.0: with auto.offset.reset=none the
    committed offset is the position; it carries no leader epoch (before KIP-320) and nothing
    is validated."""
    c = _cluster_at("1.1", 50)
    first = c.consumer(group="g", auto_offset_reset="earliest")
    first.assign([TP0])
    first.seek(T, 0, 39)
    first.commit()
    cons = c.consumer(group="g", auto_offset_reset="none")
    cons.assign([TP0])
    cons._update_fetch_positions(500)
    assert cons.position(T, 0) == 39
    position = cons.subscriptions.position(TP0)
    assert position.offset_epoch is None and not cons.subscriptions.awaiting_validation(TP0)


def test_missing_offset_no_reset_policy_1_1():
    """KafkaConsumerTest.testMissingOffsetNoResetPolicy @1.1.0: nothing committed and
    auto.offset.reset=none: NoOffsetForPartitionException."""
    c = _cluster_at("1.1", 5)
    cons = c.consumer(group="g", auto_offset_reset="none")
    cons.assign([TP0])
    with pytest.raises(NoOffsetForPartitionException):
        cons.poll(500)


def test_reset_using_auto_reset_policy_1_1():
    """KafkaConsumerTest.testResetUsingAutoResetPolicy @1.1.0: nothing committed, latest: the
    position is the end offset; ListOffsets carries no current leader epoch before 2.3."""
    c = _cluster_at("1.1", 50)
    cons = c.consumer(group="g", auto_offset_reset="latest")
    sent = capture(cons)
    cons.assign([TP0])
    assert cons.poll(500) == []
    assert cons.position(T, 0) == 50
    ((_b, req),) = of_type(sent, ListOffsetsRequest)
    assert tuple(req.current_leader_epochs) == (-1,)
