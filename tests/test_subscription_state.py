"""SubscriptionState alone, as Kafka's SubscriptionStateTest drives it: no cluster.

Each test names the Kafka test it follows. Topic partitions are ``(topic, partition)`` tuples;
``LeaderAndEpoch(1, 10)`` is Kafka's ``LeaderAndEpoch(Optional.of(broker1), Optional.of(10))``.
"""

from __future__ import annotations

import pytest

from kafkasim.runtime.clients.subscription_state import (
    UNDEFINED_EPOCH,
    UNDEFINED_EPOCH_OFFSET,
    EpochEndOffset,
    FetchPosition,
    FetchState,
    IllegalStateException,
    LeaderAndEpoch,
    OffsetAndMetadata,
    OffsetResetStrategy,
    SubscriptionState,
)

TP0 = ("test", 0)
TP1 = ("test", 1)
UNASSIGNED = ("unassigned", 0)
LEADER_EPOCH_10 = LeaderAndEpoch(1, 10)


@pytest.fixture
def state() -> SubscriptionState:
    return SubscriptionState(OffsetResetStrategy.EARLIEST)


def test_partition_assignment(state):
    # partitionAssignment
    assert state.assign_from_user({TP0})
    assert state.assigned_partitions() == {TP0} and state.num_assigned_partitions() == 1
    assert not state.has_all_fetch_positions()
    state.seek(TP0, 1)
    assert state.is_fetchable(TP0) and state.position(TP0).offset == 1
    assert state.has_all_fetch_positions()
    state.assign_from_user(set())
    assert state.assigned_partitions() == set() and state.num_assigned_partitions() == 0
    assert not state.is_assigned(TP0) and not state.is_fetchable(TP0)


def test_a_partition_kept_by_a_new_assignment_keeps_its_position(state):
    state.assign_from_user([TP0])
    state.seek(TP0, 7)
    assert not state.assign_from_user([TP0])          # the same assignment: no change
    assert state.assign_from_user([TP0, TP1])
    assert state.assigned_partitions_list() == [TP0, TP1]
    assert state.position(TP0).offset == 7 and state.position(TP1) is None


def test_partition_reset(state):
    # partitionReset
    state.assign_from_user({TP0})
    state.seek(TP0, 5)
    assert state.position(TP0).offset == 5
    state.request_offset_reset(TP0)
    assert not state.is_fetchable(TP0) and state.is_offset_reset_needed(TP0)
    assert state.position(TP0) is None
    assert state.reset_strategy(TP0) is OffsetResetStrategy.EARLIEST
    state.seek(TP0, 0)   # a seek clears the reset
    assert state.is_fetchable(TP0) and not state.is_offset_reset_needed(TP0)
    assert state.reset_strategy(TP0) is None


def test_partition_pause(state):
    # partitionPause
    state.assign_from_user({TP0})
    state.seek(TP0, 100)
    assert state.is_fetchable(TP0)
    state.pause(TP0)
    assert not state.is_fetchable(TP0) and state.is_paused(TP0)
    assert state.paused_partitions() == {TP0} and state.fetchable_partitions() == []
    state.resume(TP0)
    assert state.is_fetchable(TP0) and state.fetchable_partitions() == [TP0]


def test_invalid_position_update(state):
    # invalidPositionUpdate: no valid position to replace
    state.assign_from_user({TP0})
    with pytest.raises(IllegalStateException, match="without a valid current position"):
        state.position(TP0, FetchPosition(0))


def test_cant_change_position_for_non_assigned_partition(state):
    # cantChangePositionForNonAssignedPartition
    with pytest.raises(IllegalStateException, match="No current assignment for partition test-0"):
        state.position(TP0, FetchPosition(1))


def test_preferred_read_replica_lease(state):
    # testPreferredReadReplicaLease: valid up to and including its expiry time
    state.assign_from_user({TP0})
    assert state.preferred_read_replica(TP0, 0) is None
    state.update_preferred_read_replica(TP0, 42, 10)
    assert state.preferred_read_replica(TP0, 9) == 42
    assert state.preferred_read_replica(TP0, 10) == 42
    assert state.preferred_read_replica(TP0, 11) is None
    state.clear_preferred_read_replica(TP0)
    assert state.preferred_read_replica(TP0, 9) is None
    state.update_preferred_read_replica(TP0, 43, 20)
    assert state.preferred_read_replica(TP0, 11) == 43
    assert state.preferred_read_replica(TP0, 20) == 43
    assert state.preferred_read_replica(TP0, 21) is None
    state.update_preferred_read_replica(TP0, 44, 30)   # without clearing first
    assert state.preferred_read_replica(TP0, 30) == 44
    assert state.preferred_read_replica(TP0, 31) is None


def test_the_same_preferred_replica_again_keeps_its_lease(state):
    # TopicPartitionState.updatePreferredReadReplica: only a different replica starts a lease
    state.assign_from_user({TP0})
    state.update_preferred_read_replica(TP0, 42, 10)
    state.update_preferred_read_replica(TP0, 42, 99)
    assert state.preferred_read_replica(TP0, 11) is None


def test_seek_unvalidated_with_no_offset_epoch(state):
    # testSeekUnvalidatedWithNoOffsetEpoch
    state.assign_from_user({TP0})
    state.seek_unvalidated(TP0, FetchPosition(0, None, LeaderAndEpoch(1, 5)))
    assert state.has_valid_position(TP0) and not state.awaiting_validation(TP0)
    assert not state.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(1, None))
    assert state.has_valid_position(TP0) and not state.awaiting_validation(TP0)
    assert not state.maybe_validate_position_for_current_leader(TP0, LEADER_EPOCH_10)
    assert state.has_valid_position(TP0) and not state.awaiting_validation(TP0)


def test_seek_unvalidated_with_no_epoch_clears_awaiting_validation(state):
    # testSeekUnvalidatedWithNoEpochClearsAwaitingValidation
    state.assign_from_user({TP0})
    state.seek_unvalidated(TP0, FetchPosition(0, 2, LeaderAndEpoch(1, 5)))
    assert not state.has_valid_position(TP0) and state.awaiting_validation(TP0)
    state.seek_unvalidated(TP0, FetchPosition(0, None, LeaderAndEpoch(1, 5)))
    assert state.has_valid_position(TP0) and not state.awaiting_validation(TP0)


def test_seek_unvalidated_with_offset_epoch(state):
    # testSeekUnvalidatedWithOffsetEpoch
    state.assign_from_user({TP0})
    state.seek_unvalidated(TP0, FetchPosition(0, 2, LeaderAndEpoch(1, 5)))
    assert not state.has_valid_position(TP0) and state.awaiting_validation(TP0)
    assert state.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(1, 5))
    assert state.awaiting_validation(TP0)
    assert state.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(1, 15))
    assert state.awaiting_validation(TP0)
    assert state.position(TP0).current_leader == LeaderAndEpoch(1, 15)
    # a leader without epoch information: skip validation and fetch
    assert not state.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(1, None))
    assert state.has_valid_position(TP0) and not state.awaiting_validation(TP0)


def test_a_leader_change_forgets_the_preferred_read_replica(state):
    # TopicPartitionState.maybeValidatePosition: preferredReadReplica = null
    state.assign_from_user({TP0})
    state.seek_unvalidated(TP0, FetchPosition(3, 1, LeaderAndEpoch(1, 5)))
    state.complete_validation(TP0)
    state.update_preferred_read_replica(TP0, 2, 1000)
    state.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(1, 5))
    assert state.preferred_read_replica(TP0, 0) == 2        # same leader: kept
    state.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(3, 6))
    assert state.preferred_read_replica(TP0, 0) is None
    assert state.awaiting_validation(TP0)


def test_no_leader_leaves_the_position_alone(state):
    # maybeValidatePosition ignores metadata without a leader
    state.assign_from_user({TP0})
    state.seek_unvalidated(TP0, FetchPosition(3, 1, LeaderAndEpoch(1, 5)))
    state.complete_validation(TP0)
    assert not state.maybe_validate_position_for_current_leader(TP0, LeaderAndEpoch(None, 6))
    assert state.has_valid_position(TP0)
    assert state.position(TP0).current_leader == LeaderAndEpoch(1, 5)


def test_seek_validated_should_clear_awaiting_validation(state):
    # testSeekValidatedShouldClearAwaitingValidation
    state.assign_from_user({TP0})
    state.seek_unvalidated(TP0, FetchPosition(10, 5, LEADER_EPOCH_10))
    assert state.awaiting_validation(TP0) and state.position(TP0).offset == 10
    state.seek_validated(TP0, FetchPosition(8, 4, LEADER_EPOCH_10))
    assert state.has_valid_position(TP0) and not state.awaiting_validation(TP0)
    assert state.position(TP0).offset == 8


def test_complete_validation_should_clear_awaiting_validation(state):
    # testCompleteValidationShouldClearAwaitingValidation
    state.assign_from_user({TP0})
    state.seek_unvalidated(TP0, FetchPosition(10, 5, LEADER_EPOCH_10))
    state.complete_validation(TP0)
    assert state.has_valid_position(TP0) and not state.awaiting_validation(TP0)
    assert state.position(TP0).offset == 10


def test_offset_reset_while_awaiting_validation(state):
    # testOffsetResetWhileAwaitingValidation
    state.assign_from_user({TP0})
    state.seek_unvalidated(TP0, FetchPosition(10, 5, LEADER_EPOCH_10))
    state.request_offset_reset(TP0, OffsetResetStrategy.EARLIEST)
    assert not state.awaiting_validation(TP0) and state.is_offset_reset_needed(TP0)


def test_maybe_complete_validation(state):
    # testMaybeCompleteValidation
    state.assign_from_user({TP0})
    initial = FetchPosition(10, 5, LEADER_EPOCH_10)
    state.seek_unvalidated(TP0, initial)
    assert state.maybe_complete_validation(
        TP0, initial, EpochEndOffset(leader_epoch=5, end_offset=15)) is None
    assert not state.awaiting_validation(TP0) and state.position(TP0) == initial


def test_maybe_complete_validation_after_position_change(state):
    # testMaybeCompleteValidationAfterPositionChange
    state.assign_from_user({TP0})
    initial = FetchPosition(10, 5, LEADER_EPOCH_10)
    update = FetchPosition(20, 8, LEADER_EPOCH_10)
    state.seek_unvalidated(TP0, initial)
    state.seek_unvalidated(TP0, update)
    assert state.maybe_complete_validation(
        TP0, initial, EpochEndOffset(leader_epoch=5, end_offset=15)) is None
    assert state.awaiting_validation(TP0) and state.position(TP0) == update


def test_maybe_complete_validation_after_offset_reset(state):
    # testMaybeCompleteValidationAfterOffsetReset
    state.assign_from_user({TP0})
    initial = FetchPosition(10, 5, LEADER_EPOCH_10)
    state.seek_unvalidated(TP0, initial)
    state.request_offset_reset(TP0)
    assert state.maybe_complete_validation(
        TP0, initial, EpochEndOffset(leader_epoch=5, end_offset=15)) is None
    assert not state.awaiting_validation(TP0) and state.is_offset_reset_needed(TP0)
    assert state.position(TP0) is None


def test_truncation_detection_with_reset_policy(state):
    # testTruncationDetectionWithResetPolicy: seek to the first offset known to diverge
    state.assign_from_user({TP0})
    initial = FetchPosition(10, 5, LEADER_EPOCH_10)
    state.seek_unvalidated(TP0, initial)
    assert state.maybe_complete_validation(
        TP0, initial, EpochEndOffset(leader_epoch=7, end_offset=5)) is None
    assert not state.awaiting_validation(TP0)
    assert state.position(TP0) == FetchPosition(5, 7, LEADER_EPOCH_10)


def test_truncation_detection_without_reset_policy():
    # testTruncationDetectionWithoutResetPolicy
    state = SubscriptionState(OffsetResetStrategy.NONE)
    state.assign_from_user({TP0})
    initial = FetchPosition(10, 5, LEADER_EPOCH_10)
    state.seek_unvalidated(TP0, initial)
    truncation = state.maybe_complete_validation(
        TP0, initial, EpochEndOffset(leader_epoch=7, end_offset=5))
    assert truncation is not None and truncation.topic_partition == TP0
    assert truncation.divergent_offset == OffsetAndMetadata(5, 7, "")
    assert truncation.fetch_position == initial and state.awaiting_validation(TP0)


def test_truncation_detection_unknown_divergent_offset_with_reset_policy(state):
    # testTruncationDetectionUnknownDivergentOffsetWithResetPolicy
    state.assign_from_user({TP0})
    initial = FetchPosition(10, 5, LEADER_EPOCH_10)
    state.seek_unvalidated(TP0, initial)
    assert state.maybe_complete_validation(
        TP0, initial, EpochEndOffset(leader_epoch=UNDEFINED_EPOCH,
                                     end_offset=UNDEFINED_EPOCH_OFFSET)) is None
    assert not state.awaiting_validation(TP0) and state.is_offset_reset_needed(TP0)
    assert state.reset_strategy(TP0) is OffsetResetStrategy.EARLIEST


def test_truncation_detection_unknown_divergent_offset_without_reset_policy():
    # testTruncationDetectionUnknownDivergentOffsetWithoutResetPolicy
    state = SubscriptionState(OffsetResetStrategy.NONE)
    state.assign_from_user({TP0})
    initial = FetchPosition(10, 5, LEADER_EPOCH_10)
    state.seek_unvalidated(TP0, initial)
    truncation = state.maybe_complete_validation(TP0, initial, EpochEndOffset())
    assert truncation is not None and truncation.divergent_offset is None
    assert truncation.fetch_position == initial and state.awaiting_validation(TP0)


def test_before_2_6_an_unknown_end_offset_is_compared_like_any_other():
    # SubscriptionState.maybeCompleteValidation at 2.3-2.5: -1 < position, so seek to -1
    state = SubscriptionState("earliest", detects_unknown_truncation=False)
    state.assign_from_user({TP0})
    initial = FetchPosition(10, 5, LEADER_EPOCH_10)
    state.seek_unvalidated(TP0, initial)
    assert state.maybe_complete_validation(TP0, initial, EpochEndOffset()) is None
    assert state.position(TP0) == FetchPosition(-1, -1, LEADER_EPOCH_10)


def test_reset_offset_no_validation(state):
    # resetOffsetNoValidation: a leader too old for OffsetsForLeaderEpoch skips validation
    state.assign_from_user({TP0})
    state.request_offset_reset(TP0, OffsetResetStrategy.EARLIEST)
    assert not state.maybe_validate_position_for_current_leader(
        TP0, LeaderAndEpoch(1, None), usable_offsets_for_leader_epoch=False)
    assert not state.has_valid_position(TP0) and state.is_offset_reset_needed(TP0)
    state.seek_unvalidated(TP0, FetchPosition(10))
    assert state.has_valid_position(TP0) and not state.is_offset_reset_needed(TP0)
    state.request_offset_reset(TP0, OffsetResetStrategy.EARLIEST)
    state.seek_unvalidated(TP0, FetchPosition(10, 10, LeaderAndEpoch(1, 2)))
    assert state.awaiting_validation(TP0) and not state.is_offset_reset_needed(TP0)
    assert not state.maybe_validate_position_for_current_leader(
        TP0, LeaderAndEpoch(1, 2), usable_offsets_for_leader_epoch=False)
    assert state.has_valid_position(TP0) and not state.awaiting_validation(TP0)


def test_maybe_seek_unvalidated_needs_the_same_pending_reset(state):
    # maybeSeekUnvalidated: a reset answer is dropped once the partition no longer waits for it
    state.assign_from_user({TP0})
    state.request_offset_reset(TP0, OffsetResetStrategy.LATEST)
    state.maybe_seek_unvalidated(TP0, FetchPosition(3), OffsetResetStrategy.EARLIEST)
    assert state.is_offset_reset_needed(TP0)                  # another reset was asked for
    state.maybe_seek_unvalidated(TP0, FetchPosition(3), OffsetResetStrategy.LATEST)
    assert state.position(TP0).offset == 3
    state.maybe_seek_unvalidated(TP0, FetchPosition(9), OffsetResetStrategy.LATEST)
    assert state.position(TP0).offset == 3                    # no reset pending any more
    state.maybe_seek_unvalidated(UNASSIGNED, FetchPosition(9), OffsetResetStrategy.LATEST)


def test_null_position_lag_on_no_position(state):
    # nullPositionLagOnNoPosition
    state.assign_from_user({TP0})
    assert state.partition_lag(TP0) is None
    state.update_high_watermark(TP0, 1)
    state.update_last_stable_offset(TP0, 1)
    assert state.partition_lag(TP0) is None
    assert state.partition_lag(TP0, "read_committed") is None
    state.seek(TP0, 0)
    assert state.partition_lag(TP0) == 1


def test_position_or_null(state):
    # testPositionOrNull
    state.assign_from_user({TP0})
    state.seek(TP0, 5)
    assert state.position_or_null(TP0).offset == 5
    assert state.position_or_null(UNASSIGNED) is None


def test_try_updating(state):
    # testTryUpdatingHighWatermark / LogStartOffset / LastStableOffset / PreferredReadReplica
    state.assign_from_user({TP0})
    state.seek(TP0, 25)
    assert state.try_updating_high_watermark(TP0, 10)
    assert state.partition_end_offset(TP0, "read_uncommitted") == 10
    assert not state.try_updating_high_watermark(UNASSIGNED, 10)
    assert state.try_updating_log_start_offset(TP0, 10) and state.partition_lead(TP0) == 15
    assert not state.try_updating_log_start_offset(UNASSIGNED, 10)
    assert state.try_updating_last_stable_offset(TP0, 10)
    assert state.partition_end_offset(TP0, "read_committed") == 10
    assert not state.try_updating_last_stable_offset(UNASSIGNED, 10)
    assert state.try_updating_preferred_read_replica(TP0, 10, 60_000)
    assert state.preferred_read_replica(TP0, 0) == 10
    assert not state.try_updating_preferred_read_replica(UNASSIGNED, 10, 60_000)
    assert state.preferred_read_replica(UNASSIGNED, 0) is None


def test_request_offset_reset_if_partition_assigned(state):
    # testRequestOffsetResetIfPartitionAssigned
    state.assign_from_user({TP0})
    state.request_offset_reset_if_partition_assigned(TP0)
    assert state.is_offset_reset_needed(TP0)
    state.request_offset_reset_if_partition_assigned(UNASSIGNED)
    with pytest.raises(IllegalStateException):
        state.is_offset_reset_needed(UNASSIGNED)


def test_reset_initializing_positions():
    # resetInitializingPositions: every partition without a position awaits a reset
    state = SubscriptionState("latest")
    state.assign_from_user([TP0, TP1])
    state.seek(TP1, 4)
    assert state.initializing_partitions() == [TP0]
    assert state.reset_initializing_positions() == [TP0]
    assert state.partitions_needing_reset(0) == [TP0]
    assert state.reset_strategy(TP0) is OffsetResetStrategy.LATEST


def test_request_failed_backs_off_validation_and_reset(state):
    # requestFailed / awaitingRetryBackoff
    state.assign_from_user([TP0, TP1])
    state.seek_unvalidated(TP0, FetchPosition(10, 5, LEADER_EPOCH_10))
    state.request_offset_reset(TP1)
    state.request_failed([TP0, TP1, UNASSIGNED], 100)
    assert state.partitions_needing_validation(99) == []
    assert state.partitions_needing_reset(99) == []
    assert state.partitions_needing_validation(100) == [TP0]
    assert state.partitions_needing_reset(100) == [TP1]


def test_all_consumed_is_the_valid_positions_with_their_epochs(state):
    # allConsumed: what commitSync stores (the epoch of the last record consumed, KIP-320)
    state.assign_from_user([TP0, TP1])
    state.seek_unvalidated(TP0, FetchPosition(10, 5, LEADER_EPOCH_10))   # awaiting validation
    state.seek_validated(TP1, FetchPosition(7, 2, LEADER_EPOCH_10))
    assert state.all_consumed() == {TP1: OffsetAndMetadata(7, 2)}
    state.complete_validation(TP0)
    assert list(state.all_consumed()) == [TP0, TP1]


def test_fetch_states_follow_kafkas_transitions():
    # FetchStates: AWAIT_RESET never goes straight to AWAIT_VALIDATION; INITIALIZING is left once
    assert FetchState.AWAIT_RESET.transition_to(FetchState.AWAIT_VALIDATION) is \
        FetchState.AWAIT_RESET
    assert FetchState.FETCHING.transition_to(FetchState.INITIALIZING) is FetchState.FETCHING
    assert [s.name for s in FetchState if s.requires_position()] == \
        ["FETCHING", "AWAIT_VALIDATION"]
    assert [s.name for s in FetchState if s.has_valid_position()] == ["FETCHING"]


def test_reset_strategy_names():
    assert OffsetResetStrategy.of("smallest") is OffsetResetStrategy.EARLIEST   # 0.8.2 names
    assert OffsetResetStrategy.of("largest") is OffsetResetStrategy.LATEST
    assert OffsetResetStrategy.EARLIEST.timestamp() == -2    # ListOffsets EARLIEST_TIMESTAMP
    assert OffsetResetStrategy.LATEST.timestamp() == -1      # LATEST_TIMESTAMP
    with pytest.raises(ValueError):
        OffsetResetStrategy.of("by_duration")
