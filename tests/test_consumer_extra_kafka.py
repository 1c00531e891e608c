"""More of Kafka's consumer-client tests, ported to kafkasim's ``Consumer``, ``FetchCollector``,
``OffsetFetcher`` and ``SubscriptionState``.

Sources (tag 3.9.0): ``clients/src/test/java/org/apache/kafka/clients/consumer/internals/
SubscriptionStateTest.java``, ``FetchCollectorTest.java``, ``FetcherTest.java``,
``OffsetFetcherTest.java`` and ``clients/src/test/java/org/apache/kafka/clients/consumer/
KafkaConsumerTest.java`` (the classic consumer, assign()-based cases). Each test's docstring
names the Kafka test it follows. The harness is ``test_consumer_fetcher_kafka``'s: a consumer in
a real 3-broker cluster (Kafka 3.7), answered by the test (``Scripted``, Kafka's MockClient) or
by the brokers.

Kafka's FetchCollectorTest puts a CompletedFetch in the FetchBuffer and calls collectFetch; here
the scripted answer is handed to ``Consumer.on_message`` (FetchCollector.initialize at once)
and "the Fetch" is what the answer added to ``Consumer.consumed``. Left out, not modelled:
authorization and corrupt records (testFetchWithTopicAuthorizationFailed,
testFetchWithCorruptMessage), deserializers, mocked SubscriptionState races
(testCollectFetchInitializationWith...OnNotAssignedPartition: kafkasim initializes an answer at
once, so a partition cannot be unassigned half-way), ListOffsets' leader epoch in the answer
(testListOffsetUpdateEpoch, testListOffsetNoUpdateMissingEpoch: kafkasim's ListOffsetsResponse
carries none), the last stable offset of a fetch (kafkasim's FetchPartitionData has none), and
KafkaConsumer.position blocking for a reset (testOffsetOfPausedPartitions).
"""

from __future__ import annotations

import pytest
from clusters import make_cluster
from test_consumer_fetcher_kafka import (
    TP0,
    TP1,
    Scripted,
    T,
    _cluster,
    _consumer,
    _with_preferred_replica,
    fetching,
    of_type,
)

from kafkasim.core import errors as E
from kafkasim.core.errors import IllegalStateException
from kafkasim.core.messages import (
    FetchRequest,
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from kafkasim.runtime.clients.consumer import (
    LogTruncationException,
    NoOffsetForPartitionException,
)
from kafkasim.runtime.clients.subscription_state import (
    FetchPosition,
    LeaderAndEpoch,
    OffsetResetStrategy,
    SubscriptionState,
)

UNASSIGNED = ("unassigned", 0)


# -- SubscriptionStateTest --------------------------------------------------------------------
@pytest.fixture
def state() -> SubscriptionState:
    return SubscriptionState(OffsetResetStrategy.EARLIEST)


def test_maybe_validate_position_for_current_leader(state):
    """SubscriptionStateTest.testMaybeValidatePositionForCurrentLeader @3.9.0: a leader whose
    OffsetsForLeaderEpoch is too old (v < 3) is fetched from without validation; with a usable
    one an unvalidated position awaits validation; an unassigned partition is skipped."""
    leader = LeaderAndEpoch(1, 10)
    state.assign_from_user({TP0})
    state.seek_unvalidated(TP0, FetchPosition(10, 5, leader))
    assert not state.maybe_validate_position_for_current_leader(
        TP0, leader, usable_offsets_for_leader_epoch=False)
    assert state.has_valid_position(TP0)
    state.seek_unvalidated(TP0, FetchPosition(10, 5, leader))
    assert state.maybe_validate_position_for_current_leader(TP0, leader)
    assert not state.has_valid_position(TP0)
    assert not state.maybe_validate_position_for_current_leader(TP1, leader)
    assert TP1 not in state.assigned_partitions()


def test_try_updating_log_start_offset(state):
    """SubscriptionStateTest.testTryUpdatingLogStartOffset @3.9.0: the lead is the position less
    the log start offset; an unassigned partition is not updated."""
    state.assign_from_user({TP0})
    state.seek(TP0, 25)
    assert state.try_updating_log_start_offset(TP0, 10)
    assert state.partition_lead(TP0) == 15
    assert not state.try_updating_log_start_offset(UNASSIGNED, 10)


def test_try_updating_last_stable_offset(state):
    """SubscriptionStateTest.testTryUpdatingLastStableOffset @3.9.0: a read_committed
    consumer's end offset is the last stable offset."""
    state.assign_from_user({TP0})
    assert state.try_updating_last_stable_offset(TP0, 10)
    assert state.partition_end_offset(TP0, "read_committed") == 10
    assert not state.try_updating_last_stable_offset(UNASSIGNED, 10)


def test_try_updating_preferred_read_replica(state):
    """SubscriptionStateTest.testTryUpdatingPreferredReadReplica @3.9.0."""
    state.assign_from_user({TP0})
    assert state.try_updating_preferred_read_replica(TP0, 10, 60000)
    assert state.preferred_read_replica(TP0, 0) == 10
    assert not state.try_updating_preferred_read_replica(UNASSIGNED, 10, 60000)
    assert state.preferred_read_replica(UNASSIGNED, 0) is None


def test_preferred_read_replica_lease_ends_after_its_expiry(state):
    """SubscriptionStateTest.testPreferredReadReplicaLease @3.9.0 (the expiry bound): the
    replica is used up to its expiry time and forgotten past it."""
    state.assign_from_user({TP0})
    state.update_preferred_read_replica(TP0, 42, 10)
    assert state.preferred_read_replica(TP0, 10) == 42
    assert state.preferred_read_replica(TP0, 11) is None
    assert state.preferred_read_replica(TP0, 0) is None   # forgotten, not merely hidden


# -- FetchCollectorTest ------------------------------------------------------------------------
def test_fetch_with_read_replica():
    """FetchCollectorTest.testFetchWithReadReplica @3.9.0: records of an answer are returned and
    the preferred read replica set before is kept."""
    s, corr = fetching()
    s.subs.update_preferred_read_replica(TP0, 67, s.c.now + 60000)
    s.respond(corr, s.data(TP0, 0, 3))
    assert s.fetch_records() == {TP0: [0, 1, 2]}
    assert s.subs.preferred_read_replica(TP0, s.c.now) == 67


def test_no_results_if_initializing():
    """FetchCollectorTest.testNoResultsIfInitializing @3.9.0: a partition assigned without a
    position is not fetchable, and records for it give nothing."""
    s = Scripted()
    s.assign(0, 1)
    assert s.subs.position(TP0) is None
    assert not s.subs.is_fetchable(TP0) and not s.subs.has_valid_position(TP0)
    s.subs.seek(TP1, 0)
    (corr,) = s.send_fetches()   # for t-1 only
    s.respond(corr, s.data(TP0, 0, 3), s.data(TP1, 0, 2))
    assert s.fetch_records() == {TP1: [0, 1]}
    assert s.subs.position(TP0) is None


def test_fetching_paused_partitions_yields_no_records():
    """FetchCollectorTest.testFetchingPausedPartitionsYieldsNoRecords @3.9.0: the records of a
    paused partition are not returned but kept in the fetch buffer."""
    s, corr = fetching()
    assert not s.subs.is_paused(TP0)
    s.subs.pause(TP0)
    assert s.subs.is_paused(TP0)
    s.respond(corr, s.data(TP0, 0, 3))
    assert s.fetch_records() == {}
    assert [r.offset for r in s.cons.fetch_collector.fetch_buffer] == [0, 1, 2]
    assert TP0 in s.cons.fetch_collector.buffered_partitions()


@pytest.mark.parametrize("error", [
    E.NOT_LEADER_OR_FOLLOWER, E.REPLICA_NOT_AVAILABLE, E.KAFKA_STORAGE_ERROR,
    E.FENCED_LEADER_EPOCH, E.OFFSET_NOT_AVAILABLE, E.UNKNOWN_TOPIC_OR_PARTITION,
    E.UNKNOWN_TOPIC_ID, "INCONSISTENT_TOPIC_ID",
])
def test_fetch_with_metadata_refresh_errors(error):
    """FetchCollectorTest.testFetchWithMetadataRefreshErrors @3.9.0: no records, a metadata
    update is requested and the preferred read replica forgotten (3.4+)."""
    s, corr = fetching()
    s.subs.update_preferred_read_replica(TP0, 2, s.c.now + 60000)
    s.respond(corr, s.data(TP0, 0, 3, err=error))
    assert s.fetch_records() == {}
    assert s.subs.preferred_read_replica(TP0, s.c.now) is None
    assert s.metadata_update_requested()


def test_fetch_with_offset_out_of_range():
    """FetchCollectorTest.testFetchWithOffsetOutOfRange @3.9.0: records, then
    OFFSET_OUT_OF_RANGE answers at the new position give nothing (the partition awaits a
    reset; the second answer, for a position it no longer has, is dropped)."""
    s, corr = fetching()
    s.respond(corr, s.data(TP0, 0, 3))
    assert s.fetch_records() == {TP0: [0, 1, 2]}
    for _ in range(2):
        (corr,) = s.send_fetches() or (None,)
        if corr is None:
            break
        s.respond(corr, s.data(TP0, 3, err=E.OFFSET_OUT_OF_RANGE))
        assert s.fetch_records() == {}
    assert s.subs.is_offset_reset_needed(TP0)


def test_fetch_with_offset_out_of_range_with_preferred_read_replica():
    """FetchCollectorTest.testFetchWithOffsetOutOfRangeWithPreferredReadReplica @3.9.0: no
    records, the preferred read replica forgotten and no reset."""
    s, corr = fetching()
    s.subs.update_preferred_read_replica(TP0, 67, s.c.now + 60000)
    s.respond(corr, s.data(TP0, 0, err=E.OFFSET_OUT_OF_RANGE))
    assert s.fetch_records() == {}
    assert s.subs.preferred_read_replica(TP0, s.c.now) is None
    assert not s.subs.is_offset_reset_needed(TP0)


@pytest.mark.parametrize("error", [E.UNKNOWN_LEADER_EPOCH, E.UNKNOWN_SERVER_ERROR])
def test_fetch_with_logged_errors(error):
    """FetchCollectorTest.testFetchWithUnknownLeaderEpoch / testFetchWithUnknownServerError
    @3.9.0: no records and nothing else: no reset, no metadata update, the position kept."""
    s, corr = fetching()
    s.respond(corr, s.data(TP0, 0, 3, err=error))
    assert s.fetch_records() == {}
    assert s.subs.position(TP0).offset == 0 and s.subs.is_fetchable(TP0)
    assert not s.metadata_update_requested()


@pytest.mark.parametrize("error", ["OFFSET_METADATA_TOO_LARGE", "NOT_CONTROLLER",
                                   "INVALID_FETCH_SIZE"])
def test_fetch_with_other_errors(error):
    """FetchCollectorTest.testFetchWithOtherErrors @3.9.0 (some of its errors): an error the
    consumer does not expect throws IllegalStateException from the next poll (once), with no
    metadata update."""
    s, corr = fetching()
    s.respond(corr, s.data(TP0, 0, 3, err=error))
    with pytest.raises(IllegalStateException, match=f"Unexpected error code {error} while "
                       "fetching at offset 0 from topic-partition t-0"):
        s.cons.poll(0)
    assert s.cons.leaders[TP0] >= 0
    assert s.cons.poll(0) == []


def test_collect_fetch_initialization_offset_out_of_range_with_offset_reset():
    """FetchCollectorTest.testCollectFetchInitializationOffsetOutOfRangeErrorWithOffsetReset
    @3.9.0: OFFSET_OUT_OF_RANGE at the position with a reset policy: nothing returned, the
    partition awaits a reset (requestOffsetResetIfPartitionAssigned)."""
    s, corr = fetching(42)
    s.respond(corr, s.data(TP0, 42, err=E.OFFSET_OUT_OF_RANGE))
    assert s.fetch_records() == {}
    assert s.subs.is_offset_reset_needed(TP0)
    assert s.subs.reset_strategy(TP0) is OffsetResetStrategy.EARLIEST


def test_collect_fetch_initialization_offset_out_of_range_with_null_position():
    """FetchCollectorTest.testCollectFetchInitializationOffsetOutOfRangeErrorWithNullPosition
    @3.9.0: an OFFSET_OUT_OF_RANGE for a partition that has no position (here: reset
    meanwhile) gives nothing and changes nothing."""
    s, corr = fetching(42)
    s.subs.request_offset_reset(TP0, OffsetResetStrategy.LATEST)
    s.respond(corr, s.data(TP0, 42, err=E.OFFSET_OUT_OF_RANGE))
    assert s.fetch_records() == {}
    assert s.subs.position(TP0) is None
    assert s.subs.reset_strategy(TP0) is OffsetResetStrategy.LATEST


# -- FetcherTest -------------------------------------------------------------------------------
def test_fetch_on_completed_fetches_for_all_paused_partitions():
    """FetcherTest.testFetchOnCompletedFetchesForAllPausedPartitions @3.9.0: fetched records of
    paused partitions are not returned; no new fetch is sent for them."""
    s = Scripted()
    s.assign(0, 1)
    s.subs.seek(TP0, 0)
    s.subs.seek(TP1, 0)
    corrs = s.send_fetches()
    s.subs.pause(TP0)
    s.subs.pause(TP1)
    for corr in corrs:
        s.respond(corr, *[s.data((T, fp.partition), 0, 2)
                          for fp in s.cons.client.sent_to[corr][1].partitions])
    assert s.fetch_records() == {}
    assert s.send_fetches() == []
    assert len(s.cons.fetch_collector.fetch_buffer) == 4


def test_fetch_on_completed_fetches_for_some_paused_partitions():
    """FetcherTest.testFetchOnCompletedFetchesForSomePausedPartitions @3.9.0: the records of the
    partition not paused are returned; those of the paused one stay buffered."""
    s = Scripted()
    s.assign(0, 1)
    s.subs.seek(TP0, 0)
    s.subs.seek(TP1, 0)
    corrs = s.send_fetches()
    s.subs.pause(TP0)
    for corr in corrs:
        s.respond(corr, *[s.data((T, fp.partition), 0, 2)
                          for fp in s.cons.client.sent_to[corr][1].partitions])
    assert s.fetch_records() == {TP1: [0, 1]}
    assert {(r.partition, r.offset) for r in s.cons.fetch_collector.fetch_buffer} == \
        {(0, 0), (0, 1)}


def test_fetch_skips_blacked_out_nodes(monkeypatch):
    """FetcherTest.testFetchSkipsBlackedOutNodes @3.9.0: no fetch to a leader in its reconnect
    backoff (2.0+, #4644)."""
    s = Scripted()
    s.assign(0)
    s.subs.seek(TP0, 0)
    leader = s.leader(TP0)
    transport = s.c.transport
    monkeypatch.setattr(transport, "is_unavailable", lambda src, dst: dst == leader)
    assert s.send_fetches() == []
    monkeypatch.undo()
    assert len(s.send_fetches()) == 1


def test_fetch_disconnected_should_not_clear_preferred_read_replica_if_unassigned():
    """FetcherTest.testFetchDisconnectedShouldNotClearPreferredReadReplicaIfUnassigned @3.9.0:
    a disconnect after the partition was unassigned touches nothing (it has no state)."""
    s, _follower = _with_preferred_replica()
    (corr,) = s.send_fetches()
    s.cons.assign([])   # unsubscribe
    s.disconnect(corr)
    assert s.fetch_records() == {}
    assert s.subs.preferred_read_replica(TP0, s.c.now) is None
    assert not s.subs.is_assigned(TP0)


def test_clear_buffered_data_for_topic_partitions():
    """FetcherTest.testClearBufferedDataForTopicPartitions @3.9.0: buffered records of a
    partition no longer assigned are dropped; those of one kept stay."""
    s = Scripted()
    s.assign(0, 1)
    s.subs.seek(TP0, 0)
    s.subs.seek(TP1, 0)
    corrs = s.send_fetches()
    s.subs.pause(TP0)
    s.subs.pause(TP1)
    for corr in corrs:
        s.respond(corr, *[s.data((T, fp.partition), 0, 2)
                          for fp in s.cons.client.sent_to[corr][1].partitions])
    assert s.cons.fetch_collector.buffered_partitions() == {TP0, TP1}
    s.cons.assign([TP1])
    assert s.cons.fetch_collector.buffered_partitions() == {TP1}


# -- OffsetFetcherTest -------------------------------------------------------------------------
def _reset_answer(cons, sent, before: int, offset: int, error: str = E.NONE) -> None:
    """Answer the ListOffsetsRequest the consumer sent after ``before`` (MockClient.respond)."""
    ((broker, req),) = of_type(sent[before:], ListOffsetsRequest)
    cons.client.pending[req.correlation_id] = "list_offsets"
    cons.on_message(broker, ListOffsetsResponse(
        req.correlation_id, tuple((t, p, error, offset) for t, p, _ts in req.partitions)))


def test_update_fetch_position_reset_to_earliest_offset():
    """OffsetFetcherTest.testUpdateFetchPositionResetToEarliestOffset @3.9.0: an EARLIEST reset
    sends ListOffsets(EARLIEST_TIMESTAMP, the metadata's leader epoch) and takes its answer."""
    c = _cluster(5)
    cons, sent = _consumer(c, "latest")
    cons._refresh_metadata(1000)
    subs = cons.subscriptions
    subs.request_offset_reset(TP0, OffsetResetStrategy.EARLIEST)
    cons.offset_fetcher.reset_positions_if_needed([TP0], 0)   # the answer is scripted
    ((_b, req),) = of_type(sent, ListOffsetsRequest)
    assert [ts for _t, _p, ts in req.partitions] == [-2]
    assert req.current_leader_epochs == (cons.leader_epochs[TP0],)
    _reset_answer(cons, sent, 0, 5)
    assert not subs.is_offset_reset_needed(TP0) and subs.is_fetchable(TP0)
    assert subs.position(TP0).offset == 5


def test_reset_positions_skips_blacked_out_connections(monkeypatch):
    """OffsetFetcherTest.testresetPositionsSkipsBlackedOutConnections @3.9.0: no ListOffsets to
    a leader in its reconnect backoff (2.0+, #4644: the partition is retried later); once the
    backoff is over the reset completes."""
    c = _cluster(5)
    cons, sent = _consumer(c, "latest")
    cons._refresh_metadata(1000)
    subs = cons.subscriptions
    subs.request_offset_reset(TP0, OffsetResetStrategy.EARLIEST)
    leader = cons.leaders[TP0]
    monkeypatch.setattr(c.transport, "is_unavailable", lambda src, dst: dst == leader)
    cons.offset_fetcher.reset_positions_if_needed([TP0], 100)
    assert of_type(sent, ListOffsetsRequest) == [] and not cons.client.pending
    assert subs.is_offset_reset_needed(TP0)
    assert subs.reset_strategy(TP0) is OffsetResetStrategy.EARLIEST
    monkeypatch.undo()
    cons.offset_fetcher.reset_positions_if_needed([TP0], 0)
    _reset_answer(cons, sent, 0, 5)
    assert not subs.is_offset_reset_needed(TP0) and subs.is_fetchable(TP0)
    assert subs.position(TP0).offset == 5


def test_reset_positions_metadata_refresh():
    """OffsetFetcherTest.testresetPositionsMetadataRefresh @3.9.0: NOT_LEADER_OR_FOLLOWER to a
    ListOffsets leaves the reset pending and asks for metadata; the next round resets."""
    c = _cluster(5)
    cons, sent = _consumer(c, "latest")
    cons._refresh_metadata(1000)
    subs = cons.subscriptions
    subs.request_offset_reset(TP0, OffsetResetStrategy.LATEST)
    cons.offset_fetcher.reset_positions_if_needed([TP0], 0)
    _reset_answer(cons, sent, 0, 5, E.NOT_LEADER_OR_FOLLOWER)
    assert not subs.has_valid_position(TP0) and subs.is_offset_reset_needed(TP0)
    before = len(sent)
    cons._update_fetch_positions(1000)   # metadata first, then the reset again
    assert [type(m).__name__ for _b, m in sent[before:]] == \
        ["MetadataRequest", "ListOffsetsRequest"]
    assert not subs.is_offset_reset_needed(TP0) and subs.is_fetchable(TP0)
    assert subs.position(TP0).offset == 5


def test_assignment_change_with_in_flight_reset():
    """OffsetFetcherTest.testAssignmentChangeWithInFlightReset @3.9.0: the ListOffsets answer
    for a partition unassigned meanwhile is discarded."""
    c = _cluster(5, partitions=2)
    cons, sent = _consumer(c, "latest")
    cons.assign([TP0])
    cons._refresh_metadata(1000)
    subs = cons.subscriptions
    subs.request_offset_reset(TP0)
    cons.offset_fetcher.reset_positions_if_needed([TP0], 0)
    assert not subs.has_valid_position(TP0)
    cons.assign([TP1])
    _reset_answer(cons, sent, 0, 5)
    assert not subs.is_assigned(TP0) and not cons.client.pending
    assert subs.position(TP1) is None


def test_update_fetch_position_of_paused_partitions_without_a_valid_position():
    """OffsetFetcherTest.testUpdateFetchPositionOfPausedPartitionsWithoutAValidPosition
    @3.9.0: a paused partition awaiting a reset, its ListOffsets unanswered: it still awaits
    the reset, is not fetchable and has no valid position."""
    c = _cluster(5)
    cons, _sent = _consumer(c, "latest")
    cons._refresh_metadata(1000)
    subs = cons.subscriptions
    subs.request_offset_reset(TP0)
    subs.pause(TP0)
    cons.offset_fetcher.reset_positions_if_needed([TP0], 0)   # no answer within 0 ms
    assert subs.is_offset_reset_needed(TP0)
    assert not subs.is_fetchable(TP0) and not subs.has_valid_position(TP0)


def test_update_fetch_position_of_paused_partitions_with_a_valid_position():
    """OffsetFetcherTest.testUpdateFetchPositionOfPausedPartitionsWithAValidPosition @3.9.0."""
    c = _cluster(5)
    cons, sent = _consumer(c, "latest")
    cons._refresh_metadata(1000)
    subs = cons.subscriptions
    subs.seek(TP0, 10)
    subs.pause(TP0)
    cons._update_fetch_positions(1000)
    assert of_type(sent, ListOffsetsRequest) == []
    assert not subs.is_offset_reset_needed(TP0) and not subs.is_fetchable(TP0)
    assert subs.has_valid_position(TP0) and subs.position(TP0).offset == 10


def _validate_at(policy: str, position: FetchPosition):
    """A consumer (auto.offset.reset ``policy``) whose t-0 position awaits validation at the
    leader, which holds offsets 0-9 of epoch 0."""
    c = _cluster(10)
    cons, sent = _consumer(c, policy)
    cons._refresh_metadata(1000)
    cons.subscriptions.seek_unvalidated(TP0, position)
    assert cons.subscriptions.awaiting_validation(TP0)
    return cons, sent


@pytest.mark.parametrize("policy", ["earliest", "none"])
def test_offset_validation_reset_position_for_undefined_offset(policy):
    """OffsetFetcherTest.testOffsetValidationresetPositionForUndefinedOffsetWith(Un)Defined
    ResetPolicy @3.9.0 (testOffsetValidationWithGivenEpochOffset): the leader, asked about an
    epoch past its own, answers UNDEFINED_EPOCH_OFFSET: with a reset policy the partition is
    reset; without, LogTruncationException for the fetch position, with no divergent offset,
    the partition still awaiting validation."""
    cons, _sent = _validate_at(policy, FetchPosition(5, 7, LeaderAndEpoch(1, 0)))
    subs = cons.subscriptions
    if policy == "none":
        with pytest.raises(LogTruncationException) as err:
            cons.offset_fetcher.validate_positions_if_needed(1000)
        assert err.value.offset_out_of_range_partitions == {TP0: 5}
        assert err.value.divergent_offsets == {}
        assert subs.awaiting_validation(TP0)
    else:
        cons.offset_fetcher.validate_positions_if_needed(1000)
        assert not subs.awaiting_validation(TP0) and subs.is_offset_reset_needed(TP0)


def test_offset_validation_with_a_defined_end_offset_past_the_position():
    """OffsetFetcherTest.testOffsetValidationWithGivenEpochOffset @3.9.0, the valid case: the
    epoch's end offset is at or past the position: validated, nothing raised, position kept."""
    cons, sent = _validate_at("none", FetchPosition(5, 0, LeaderAndEpoch(1, 0)))
    cons.offset_fetcher.validate_positions_if_needed(1000)
    ((broker, req),) = of_type(sent, OffsetsForLeaderEpochRequest)
    assert broker == cons.leaders[TP0] and req.partitions == ((T, 0, 0, 0),)
    subs = cons.subscriptions
    assert not subs.awaiting_validation(TP0) and subs.position(TP0).offset == 5


def test_offset_validation_fencing():
    """OffsetFetcherTest.testOffsetValidationFencing @3.9.0: an OffsetsForLeaderEpoch answer
    for a position that has moved on (here: validated, fetched on to 10, then a newer leader
    epoch seen) is ignored; the next round validates the new position."""
    c = _cluster(10)
    cons, sent = _consumer(c, "earliest")
    cons._refresh_metadata(1000)
    subs = cons.subscriptions
    leader = cons.leaders[TP0]
    subs.seek_validated(TP0, FetchPosition(0, 0, LeaderAndEpoch(leader, 0)))
    assert subs.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(leader, 1))
    cons.offset_fetcher.validating[99] = {TP0: subs.position(TP0)}   # the request in flight
    subs.complete_validation(TP0)
    subs.position(TP0, FetchPosition(10, 0, LeaderAndEpoch(leader, 1)))
    subs.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(leader, 2))
    cons.offset_fetcher.handle_validation_response(
        OffsetsForLeaderEpochResponse(99, ((T, 0, E.NONE, 0, 10),)))
    assert subs.awaiting_validation(TP0)   # the old answer changed nothing
    # the next round, against the leader as the metadata names it (its real epoch 0)
    cons.offset_fetcher.validate_positions_if_needed(1000)
    assert len(of_type(sent, OffsetsForLeaderEpochRequest)) == 1
    assert not subs.awaiting_validation(TP0) and subs.position(TP0).offset == 10


def test_offset_validation_skipped_for_old_broker():
    """OffsetFetcherTest.testOffsetValidationSkippedForOldBroker @3.9.0, as a cluster whose
    OffsetsForLeaderEpoch cannot validate (before 2.3, KIP-320 v3): a position with an epoch
    is fetched from without validation, after a leader epoch change too."""
    c = make_cluster(3, seed=1, kafka_version="2.2", topic=T, partitions=1, records=5,
                     settle_ms=500)
    cons, sent = _consumer(c, "earliest")
    assert [r.offset for r in cons.poll(1000)] == [0, 1, 2, 3, 4]
    cons.leader_epochs[TP0] = cons.leader_epochs[TP0] + 1   # metadata with a newer epoch
    cons.poll(300)
    assert of_type(sent, OffsetsForLeaderEpochRequest) == []
    assert not cons.subscriptions.awaiting_validation(TP0)
    assert cons.subscriptions.is_fetchable(TP0)


# -- KafkaConsumerTest (classic consumer, assign) ----------------------------------------------
def test_seek_negative():
    """KafkaConsumerTest.testSeekNegative @3.9.0: a negative seek offset is refused
    (IllegalArgumentException: a ValueError here)."""
    c = _cluster(0)
    cons, _sent = _consumer(c)
    with pytest.raises(ValueError, match="seek offset must not be a negative number"):
        cons.seek(T, 0, -1)


def test_offset_is_valid_after_seek():
    """KafkaConsumerTest.testOffsetIsValidAfterSeek @3.9.0: after seek(20) and poll(0) the
    position is valid at 20."""
    c = _cluster(30)
    cons, _sent = _consumer(c, "latest")
    cons._refresh_metadata(1000)
    cons.seek(T, 0, 20)
    cons.poll(0)
    assert cons.subscriptions.valid_position(TP0).offset == 20


def test_pause():
    """KafkaConsumerTest.testPause @3.9.0: pause, paused, resume."""
    c = _cluster(0)
    cons, _sent = _consumer(c)
    cons.assign([TP0])
    assert cons.assignment == [TP0] and cons.paused() == set()
    cons.pause([TP0])
    assert cons.paused() == {TP0}
    cons.resume([TP0])
    assert cons.paused() == set()
    cons.pause([TP0])
    cons.assign([])   # KafkaConsumer.unsubscribe of a user assignment
    assert cons.paused() == set()


@pytest.mark.parametrize("assign", [False, True])
def test_poll_with_no_subscription(assign):
    """KafkaConsumerTest.testPollWithNoSubscription / testPollWithEmptyUserAssignment @3.9.0:
    poll without partitions throws IllegalStateException."""
    c = _cluster(0)
    cons = c.consumer()
    if assign:
        cons.assign([])
    with pytest.raises(IllegalStateException,
                       match="not subscribed to any topics or assigned any partitions"):
        cons.poll(0)


def test_assign_on_empty_topic_partition():
    """KafkaConsumerTest.testAssignOnEmptyTopicPartition @3.9.0."""
    c = _cluster(0)
    cons = c.consumer()
    cons.assign([])
    assert cons.assignment == []


def test_missing_offset_no_reset_policy():
    """KafkaConsumerTest.testMissingOffsetNoResetPolicy @3.9.0: nothing committed and
    auto.offset.reset=none: NoOffsetForPartitionException."""
    c = _cluster(5)
    cons = c.consumer(group="g", auto_offset_reset="none")
    cons.assign([TP0])
    with pytest.raises(NoOffsetForPartitionException) as err:
        cons.poll(500)
    assert err.value.partitions == [TP0]


def test_reset_using_auto_reset_policy():
    """KafkaConsumerTest.testResetUsingAutoResetPolicy @3.9.0: nothing committed, latest: the
    position is the end offset ListOffsets returns."""
    c = _cluster(50)
    cons = c.consumer(group="g", auto_offset_reset="latest")
    cons.assign([TP0])
    assert cons.poll(500) == []
    assert cons.position(T, 0) == 50


def test_reset_to_committed_offset():
    """KafkaConsumerTest.testResetToCommittedOffset @3.9.0: with auto.offset.reset=none the
    committed offset is the position."""
    c = _cluster(50)
    first = c.consumer(group="g", auto_offset_reset="earliest")
    first.assign([TP0])
    first.seek(T, 0, 39)
    first.commit()
    cons = c.consumer(group="g", auto_offset_reset="none")
    cons.assign([TP0])
    cons._update_fetch_positions(500)
    assert cons.position(T, 0) == 39


def test_fetch_progress_with_missing_partition_position():
    """KafkaConsumerTest.testFetchProgressWithMissingPartitionPosition @3.9.0: seekToEnd and
    seekToBeginning reset by LATEST and EARLIEST in one ListOffsets; a partition whose reset
    failed (NOT_LEADER_OR_FOLLOWER) does not keep the other from being fetched."""
    c = _cluster(5, partitions=2)
    cons, sent = _consumer(c, "none")
    cons._refresh_metadata(1000)
    cons.seek_to_end([TP0])
    cons.seek_to_beginning([TP1])
    subs = cons.subscriptions
    assert subs.reset_strategy(TP0) is OffsetResetStrategy.LATEST
    assert subs.reset_strategy(TP1) is OffsetResetStrategy.EARLIEST
    cons.offset_fetcher.reset_positions_if_needed([TP0, TP1], 0)
    timestamps = {(t, p): ts for _b, m in of_type(sent, ListOffsetsRequest)
                  for t, p, ts in m.partitions}
    assert timestamps == {TP0: -1, TP1: -2}
    for broker, req in of_type(sent, ListOffsetsRequest):
        cons.client.pending[req.correlation_id] = "list_offsets"
        cons.on_message(broker, ListOffsetsResponse(req.correlation_id, tuple(
            (t, p, E.NONE if p == 0 else E.NOT_LEADER_OR_FOLLOWER, 2) for t, p, _ts
            in req.partitions)))
    assert subs.is_fetchable(TP0) and subs.is_offset_reset_needed(TP1)
    cons._send_fetches()
    fetched = [(fp.topic, fp.partition, fp.fetch_offset)
               for _b, m in of_type(sent, FetchRequest) for fp in m.partitions]
    assert fetched == [(T, 0, 2)]


def test_seek_to_beginning_and_end_of_all_assigned_partitions():
    """KafkaConsumer.seekToBeginning / seekToEnd @3.9.0: an empty collection means every
    assigned partition (SubscriptionState.requestOffsetReset of each)."""
    c = _cluster(5, partitions=2)
    cons, _sent = _consumer(c, "none")
    cons.seek_to_end([])
    subs = cons.subscriptions
    assert [subs.reset_strategy(tp) for tp in (TP0, TP1)] == [OffsetResetStrategy.LATEST] * 2
    cons.seek_to_beginning()
    assert [subs.reset_strategy(tp) for tp in (TP0, TP1)] == [OffsetResetStrategy.EARLIEST] * 2
    cons._update_fetch_positions(1000)
    assert not any(subs.is_offset_reset_needed(tp) for tp in (TP0, TP1))
    assert (cons.position(T, 0), cons.position(T, 1)) == (0, 0)



def test_reset_positions_sent_to_blacked_out_leader_before_2_0(monkeypatch):
    """Fetcher.resetOffsets @1.1.0 (before #4644): the ListOffsets goes to the leader even in
    its reconnect backoff (rule ``consumer_list_offsets_skips_unavailable_leader``)."""
    c = make_cluster(3, seed=1, kafka_version="1.1", topic=T, partitions=1, records=5,
                     settle_ms=500)
    cons, sent = _consumer(c, "latest")
    cons._refresh_metadata(1000)
    cons.subscriptions.request_offset_reset(TP0, OffsetResetStrategy.EARLIEST)
    leader = cons.leaders[TP0]
    monkeypatch.setattr(c.transport, "is_unavailable", lambda src, dst: dst == leader)
    cons.offset_fetcher.reset_positions_if_needed([TP0], 0)
    assert [b for b, _m in of_type(sent, ListOffsetsRequest)] == [leader]
