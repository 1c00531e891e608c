"""Still more of Kafka's ``core/src/test/scala/unit/kafka/cluster/PartitionTest.scala``: the
releases whose Partition behaves differently from the 3.7.0 cases of
tests/test_partition_more_kafka.py. Each test's docstring names the Kafka test and the tag it
ports.

- 2.4.0, before AlterIsr (KIP-497, 2.7): the leader writes the partition state znode itself
  (Partition.updateIsr through PartitionStateStore.expandIsr / shrinkIsr, a conditional
  write at the cached zkVersion). A write that succeeds changes the ISR at once and may move
  the HW; one that fails (the mock answering None) changes nothing. ``ZkStateStore`` is that
  mock: it answers the version Kafka's test gives (or -1 for None) and records the ISRs
  written. replica.lag.time.max.ms is 10000 by default up to 2.4 (30000 from 2.5, KIP-537),
  the lag Kafka's 2.4 tests pass to maybeShrinkIsr. readRecords' epoch validation
  (testReadRecordEpochValidationFor*, dropped in 2.8 when fetchRecords replaced it) is a Fetch
  read by ReplicaManager._read_partition, as tests/test_partition_more_kafka.py reads them.
- 2.7.0, the first AlterIsr release: the proposal waits in the AlterIsrManager's queue
  (MockAlterIsrManager.isrUpdates) until the "send-alter-isr" task (every 50 ms) sends it, so
  an answer here is that task's run, then the controller's AlterIsrResponse.
- 3.9.0: handleAlterIsrFailure on Partition itself (tests/test_alter_partition.py checks the
  same errors through a cluster), with NEW_LEADER_ELECTED (KIP-841, 3.3).
- 4.1.0: ZooKeeper is gone; AbstractPartitionTest's metadata cache is always a KRaft one
  (addBrokerEpochToMockMetadataCache), so every proposed ISR carries each member's broker
  epoch (KIP-903), and a follower reaches the HW at the offset after the last one it has.

The fixtures (broker 101, its followers 102-104, ``seedLogData``, ``fetchFollower``, the
MockAlterPartitionManager's queue and answers) are tests/test_partition_more_kafka.py's.

Left out: testDeleteRecordsOnLeaderWith{Empty,Compact}Policy (4.2.0: kafkasim has no
DeleteRecords), tryCompleteDelayedRequestsCatchesExceptions (4.1.0: no purgatory exceptions),
testDelayedFetchAfterAppendRecords and testMakeFollowerWithWithFollowerAppendRecords (thread
and lock races), testMakeLeaderDoesNotUpdateEpochCacheForOldFormats (no message format
versions below v2). testAppendRecordsAsFollowerBelowLogStartOffset (4.1.0's, with the partition
leader epoch) is ported at 4.3.0 in tests/test_partition_more_kafka.py.
"""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core.alter_partition_manager import IsrChangePropagation
from kafkasim.core.messages import AlterPartitionResponse
from kafkasim.core.partition import PendingExpandIsr, PendingShrinkIsr
from kafkasim.core.rules import NEVER_MS
from tests.test_partition_more_kafka import (
    BROKER,
    CONTROLLER,
    R1,
    R2,
    R3,
    TOPIC,
    Broker,
    broker_epoch,
    fetch_consumer,
    fetch_follower,
    isr_updates,
    replica_state,
    seed_log_data,
)

LAG_MS_2_4 = 10_000      # Defaults.ReplicaLagTimeMaxMs up to 2.4


class ZkStateStore:
    """PartitionStateStore's mock (2.4.0): expandIsr / shrinkIsr answer Some(``version``), or
    None when ``version`` is -1; the ISRs written are kept."""

    def __init__(self, version: int = 2) -> None:
        self.version = version
        self.isr_change_propagation = IsrChangePropagation()
        self.writes: list[tuple[int, ...]] = []

    def conditional_update_isr(self, ctx, part, new_isr) -> int:
        self.writes.append(tuple(new_isr))
        return self.version


def _zk_broker(version: int = 2) -> tuple[Broker, ZkStateStore]:
    b = Broker("2.4")
    b.zk_lifecycle = store = ZkStateStore(version)
    assert b.config["replica.lag.time.max.ms"] == LAG_MS_2_4
    return b, store


def _update_fetch_state(b: Broker, part, replica_id: int, fetch_offset: int,
                        leader_end_offset: int) -> None:
    """Partition.updateFollowerFetchState(replicaId, LogOffsetMetadata(fetchOffset), 0, now,
    leaderEndOffset), as Kafka's 2.x tests call it."""
    part.update_follower_fetch_state(b, replica_id, fetch_offset, 0, leader_end_offset, b.now)


def _zk_leader(b: Broker, isr, records: int = 10):
    """seedLogData(records, epoch 4), then makeLeader at leader epoch 5, zkVersion 1, of
    replicas 101 and 102."""
    part = b.partition(TOPIC, 0)
    seed_log_data(part.log, records, 4)
    assert part.make_leader(b, 5, tuple(isr), (BROKER, R1), 1, 0) is not None
    assert part.in_sync_replica_ids() == set(isr)
    return part


# -- 2.4.0: the leader writes the ISR to ZooKeeper itself -------------------------------------
def test_update_follower_fetch_state_at_2_4():
    """PartitionTest.testUpdateFollowerFetchState @2.4.0: an ISR follower is caught up as of
    makeLeader with unknown offsets; a fetch below the leader's end keeps that time, one at it
    makes it now."""
    b, _store = _zk_broker()
    initialize_time_ms = b.now
    part = _zk_leader(b, (BROKER, R1), records=6)
    assert replica_state(part, R1) == (initialize_time_ms, -1, -1)
    b.sleep(500)
    _update_fetch_state(b, part, R1, 3, 6)
    assert replica_state(part, R1) == (initialize_time_ms, 0, 3)
    b.sleep(500)
    _update_fetch_state(b, part, R1, 6, 6)
    assert replica_state(part, R1) == (b.now, 0, 6)


def test_isr_expansion_at_2_4():
    """PartitionTest.testIsrExpansion @2.4.0: a fetch below the leader's epoch start keeps
    the follower out; the next, at 10, expands the ISR in ZooKeeper (expandIsr answers
    Some(2)) and the leader takes it at once."""
    b, store = _zk_broker(2)
    part = _zk_leader(b, (BROKER,))
    st = part.get_replica(R1)
    assert (st.log_end_offset, st.log_start_offset) == (-1, -1)
    _update_fetch_state(b, part, R1, 3, 6)
    assert part.in_sync_replica_ids() == {BROKER}
    assert (st.log_end_offset, st.log_start_offset) == (3, 0)
    assert store.writes == []
    _update_fetch_state(b, part, R1, 10, 6)
    assert store.writes == [(BROKER, R1)]
    assert part.in_sync_replica_ids() == {BROKER, R1}
    assert part.get_partition_epoch() == 2 and part.pending is None
    assert (st.log_end_offset, st.log_start_offset) == (10, 0)


def test_isr_not_expanded_if_update_fails_at_2_4():
    """PartitionTest.testIsrNotExpandedIfUpdateFails @2.4.0: expandIsr answers None (the
    zkVersion moved); the follower's state is updated, the ISR is not."""
    b, store = _zk_broker(-1)
    part = _zk_leader(b, (BROKER,))
    _update_fetch_state(b, part, R1, 10, 10)
    assert store.writes == [(BROKER, R1)]
    assert part.in_sync_replica_ids() == {BROKER}
    assert part.get_partition_epoch() == 1 and part.pending is None
    st = part.get_replica(R1)
    assert (st.log_end_offset, st.log_start_offset) == (10, 0)


def test_maybe_shrink_isr_at_2_4():
    """PartitionTest.testMaybeShrinkIsr @2.4.0: caught up at makeLeader, the follower stays;
    after the lag without a fetch the shrink written to ZooKeeper takes effect at once and
    the HW moves to the LEO."""
    b, store = _zk_broker(2)
    initialize_time_ms = b.now
    part = _zk_leader(b, (BROKER, R1))
    assert part.log.high_watermark == 0
    assert replica_state(part, R1) == (initialize_time_ms, -1, -1)
    part.maybe_shrink_isr(b)
    assert part.in_sync_replica_ids() == {BROKER, R1} and store.writes == []
    b.sleep(LAG_MS_2_4 + 1)
    part.maybe_shrink_isr(b)
    assert store.writes == [(BROKER,)]
    assert part.in_sync_replica_ids() == {BROKER}
    assert part.log.high_watermark == 10


def test_should_not_shrink_isr_if_previous_fetch_is_caught_up_at_2_4():
    """PartitionTest.testShouldNotShrinkIsrIfPreviousFetchIsCaughtUp @2.4.0: with the 10 s lag
    of 2.4, 10001 ms after makeLeader; the follower reached the leader's end of its previous
    fetch, so it is caught up as of that fetch and stays."""
    b, store = _zk_broker()
    initialize_time_ms = b.now
    part = _zk_leader(b, (BROKER, R1))
    log = part.log
    b.sleep(5000)
    first_fetch_time_ms = b.now
    _update_fetch_state(b, part, R1, 5, 10)
    assert replica_state(part, R1) == (initialize_time_ms, 0, 5)
    assert log.high_watermark == 5
    b.sleep(5001)
    seed_log_data(log, 5, 5)
    _update_fetch_state(b, part, R1, 10, 15)
    assert replica_state(part, R1) == (first_fetch_time_ms, 0, 10)
    assert log.high_watermark == 10
    part.maybe_shrink_isr(b)
    assert part.in_sync_replica_ids() == {BROKER, R1} and store.writes == []


def test_should_not_shrink_isr_if_follower_caught_up_to_log_end_at_2_4():
    """PartitionTest.testShouldNotShrinkIsrIfFollowerCaughtUpToLogEnd @2.4.0: a follower at
    the leader's LEO stays past the lag."""
    b, store = _zk_broker()
    initialize_time_ms = b.now
    part = _zk_leader(b, (BROKER, R1))
    _update_fetch_state(b, part, R1, 10, 10)
    assert replica_state(part, R1) == (initialize_time_ms, 0, 10)
    assert part.log.high_watermark == 10
    b.sleep(LAG_MS_2_4 + 1)
    part.maybe_shrink_isr(b)
    assert part.in_sync_replica_ids() == {BROKER, R1} and store.writes == []


def test_isr_not_shrunk_if_update_fails_at_2_4():
    """PartitionTest.testIsrNotShrunkIfUpdateFails @2.4.0: shrinkIsr answers None; the ISR and
    the HW stay, nothing is pending (2.4 has no pending ISR state)."""
    b, store = _zk_broker(-1)
    initialize_time_ms = b.now
    part = _zk_leader(b, (BROKER, R1))
    assert part.log.high_watermark == 0
    assert replica_state(part, R1) == (initialize_time_ms, -1, -1)
    b.sleep(LAG_MS_2_4 + 1)
    part.maybe_shrink_isr(b)
    assert store.writes == [(BROKER,)]
    assert part.in_sync_replica_ids() == {BROKER, R1}
    assert part.log.high_watermark == 0 and part.pending is None


def test_follower_does_not_join_isr_until_caught_up_to_offset_within_current_leader_epoch_at_2_4():
    """PartitionTest.testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch
    @2.4.0: a follower at the HW but below the current leader epoch's start offset stays out;
    at that offset it is written to ZooKeeper (expandIsr answers Some(2)) and is in the ISR
    at once."""
    b, store = _zk_broker(2)
    part = b.partition(TOPIC, 0)
    replicas, isr = (BROKER, R1, R2), (BROKER, R2)
    part.make_leader(b, 8, isr, replicas, 1, 3)
    assert part.get_leader_epoch() == 8
    assert part.in_sync_replica_ids() == {BROKER, R2}
    log = part.log
    _first, last_offset_of_first_batch = log.append_as_leader([1, 2], [1, 1], 8, 0)
    log.append_as_leader([3, 4, 5], [1, 1, 1], 8, 0)
    assert log.high_watermark == log.log_start_offset

    def update(follower: int, offset: int) -> None:
        _update_fetch_state(b, part, follower, offset, log.log_end_offset)

    update(R2, 0)
    update(R2, last_offset_of_first_batch)
    assert log.high_watermark == last_offset_of_first_batch
    part.make_follower(b, R2, 9, isr, replicas, 1, 3)
    part.make_leader(b, 10, isr, replicas, 1, 3)
    current_leader_epoch_start_offset = log.log_end_offset
    log.append_as_leader([6, 7], [1, 1], 10, 0)
    update(R1, 0)
    update(R1, last_offset_of_first_batch)
    assert part.in_sync_replica_ids() == {BROKER, R2} and store.writes == []
    update(R1, current_leader_epoch_start_offset)
    assert store.writes == [(BROKER, R2, R1)]
    assert part.in_sync_replica_ids() == {BROKER, R1, R2}


def test_read_record_epoch_validation_for_leader_at_2_4():
    """PartitionTest.testReadRecordEpochValidationForLeader @2.4.0 (setupPartitionWithMocks:
    leader at epoch 5 of 101 and 102): no epoch or the current one reads; an older one is
    FENCED_LEADER_EPOCH, a newer one UNKNOWN_LEADER_EPOCH."""
    b = Broker("2.4")
    part = b.partition(TOPIC, 0)
    part.make_leader(b, 5, (BROKER, R1), (BROKER, R1), 1, 0)
    assert part.get_leader_epoch() == 5
    for leader_epoch, error in ((None, E.NONE), (5, E.NONE), (4, E.FENCED_LEADER_EPOCH),
                                (6, E.UNKNOWN_LEADER_EPOCH)):
        assert fetch_consumer(b, part, 0, leader_epoch=leader_epoch).error == error


def test_read_record_epoch_validation_for_follower_at_2_4():
    """PartitionTest.testReadRecordEpochValidationForFollower @2.4.0: a follower at epoch 5
    serves a read that need not come from the leader (KIP-392: a consumer with client
    metadata) after the epoch check; one that must (a replica's fetch) is
    NOT_LEADER_FOR_PARTITION (the name until 2.6) unless the epoch check fails first."""
    b = Broker("2.4")
    part = b.partition(TOPIC, 0)
    assert part.make_follower(b, R1, 5, (BROKER, R1), (BROKER, R1), 1, 0)
    assert part.get_leader_epoch() == 5 and part.leader_log_if_local() is None
    checks = ((None, E.NONE, E.NOT_LEADER_FOR_PARTITION),
              (5, E.NONE, E.NOT_LEADER_FOR_PARTITION),
              (4, E.FENCED_LEADER_EPOCH, E.FENCED_LEADER_EPOCH),
              (6, E.UNKNOWN_LEADER_EPOCH, E.UNKNOWN_LEADER_EPOCH))
    for leader_epoch, anywhere, leader_only in checks:
        assert fetch_consumer(b, part, 0, leader_epoch=leader_epoch).error == anywhere
        assert fetch_follower(b, part, R2, 0, leader_epoch=leader_epoch).error == leader_only


# -- handleAlterIsrFailure: 2.7.0 (the 50 ms send task) and 3.9.0 ------------------------------
def _answer_queued(b: Broker, error: str, partition_epoch: int = -1) -> None:
    """MockAlterIsrManager.failIsrUpdate (completeIsrUpdate with E.NONE): the queued proposal
    sent if the send task has not run yet, then the controller's answer."""
    manager = b.alter_partition_manager
    if manager.inflight is None:    # 2.7: the "send-alter-isr" task's run
        manager.maybe_propagate_isr_changes(b)
    ((_tp, pending),) = manager.inflight
    manager.handle_alter_partition_response(b, CONTROLLER, AlterPartitionResponse(
        E.NONE, ((TOPIC, 0, error, BROKER, pending.leader_epoch, tuple(pending.proposed_isr),
                  partition_epoch),), manager.corr))


def _handle_alter_isr_failure(version: str, error: str):
    """PartitionTest.handleAlterIsrFailure: leader at epoch 5 with ISR {101} of 101, 102 (its
    HW at the LEO, 10); the follower's fetch at 10 proposes the expansion; the proposal
    fails with ``error``."""
    b = Broker(version)
    part = b.partition(TOPIC, 0)
    seed_log_data(part.log, 10, 4)
    part.make_leader(b, 5, (BROKER,), (BROKER, R1), 1, 0)
    assert part.log.high_watermark == 10
    assert replica_state(part, R1) == (NEVER_MS, -1, -1)
    first_fetch_time_ms = b.now
    fetch_follower(b, part, R1, 10, fetch_time_ms=first_fetch_time_ms)
    assert part.in_sync_replica_ids() == {BROKER}
    assert set(part.maximal_isr(b)) == {BROKER, R1}
    assert len(isr_updates(b)) == 1
    assert replica_state(part, R1) == (first_fetch_time_ms, 0, 10)
    _answer_queued(b, error)
    return b, part


ALTER_ISR_FAILURES = [
    # (version, Kafka test, error, queued again: retried)
    *[(version, name, error, retried) for version in ("2.7", "3.9")
      for name, error, retried in (
          ("testAlterIsrUnknownTopic", E.UNKNOWN_TOPIC_OR_PARTITION, False),
          ("testAlterIsrInvalidVersion", E.INVALID_UPDATE_VERSION, False),
          ("testAlterIsrUnexpectedError", E.UNKNOWN_SERVER_ERROR, True))],
    ("3.9", "testAlterIsrNewLeaderElected", E.NEW_LEADER_ELECTED, False),
]


@pytest.mark.parametrize("version,name,error,retried", ALTER_ISR_FAILURES)
def test_alter_isr_failure(version, name, error, retried):
    """PartitionTest.testAlterIsrUnknownTopic / testAlterIsrInvalidVersion /
    testAlterIsrUnexpectedError @2.7.0 and @3.9.0, testAlterIsrNewLeaderElected @3.9.0
    (NEW_LEADER_ELECTED is KIP-841's, 3.3): the ISR is not expanded and the maximal ISR keeps
    the follower; only an unexpected error queues the proposal again."""
    b, part = _handle_alter_isr_failure(version, error)
    assert part.in_sync_replica_ids() == {BROKER}, name
    assert set(part.maximal_isr(b)) == {BROKER, R1}
    assert len(isr_updates(b)) == (1 if retried else 0)


# -- 2.7.0: AlterIsr's first release -------------------------------------------------------
def _meters(b: Broker) -> tuple[int, int, int]:
    """The IsrChangeListener's (expands, shrinks, failures): the broker's meters."""
    return tuple(b.meters.get(m, 0) for m in (
        "IsrExpandsPerSec", "IsrShrinksPerSec", "FailedIsrUpdatesPerSec"))


def _leader_at_2_7(isr):
    """seedLogData(10, epoch 4); makeLeader at epoch 5, zkVersion 1, of 101 and 102."""
    b = Broker("2.7")
    initialize_time_ms = b.now
    part = b.partition(TOPIC, 0)
    seed_log_data(part.log, 10, 4)
    part.make_leader(b, 5, tuple(isr), (BROKER, R1), 1, 0)
    assert part.in_sync_replica_ids() == set(isr)
    if len(isr) == 2:
        assert part.log.high_watermark == 0
        assert replica_state(part, R1) == (initialize_time_ms, -1, -1)
    return b, part


def test_isr_expansion_at_2_7():
    """PartitionTest.testIsrExpansion @2.7.0: the expansion waits in the AlterIsr queue with
    the ISR unchanged and the maximal ISR with the follower; the controller's answer (zkVersion
    2) commits it: one expansion counted."""
    b, part = _leader_at_2_7((BROKER,))
    _update_fetch_state(b, part, R1, 3, 6)
    assert part.in_sync_replica_ids() == {BROKER} and len(isr_updates(b)) == 0
    _update_fetch_state(b, part, R1, 10, 6)
    assert len(isr_updates(b)) == 1
    assert isr_updates(b)[(TOPIC, 0)].proposed_isr == (BROKER, R1)
    assert part.in_sync_replica_ids() == {BROKER}
    assert set(part.maximal_isr(b)) == {BROKER, R1}
    st = part.get_replica(R1)
    assert (st.log_end_offset, st.log_start_offset) == (10, 0)
    _answer_queued(b, E.NONE, 2)
    assert part.in_sync_replica_ids() == {BROKER, R1}
    assert _meters(b) == (1, 0, 0)


def test_isr_not_expanded_if_update_fails_at_2_7():
    """PartitionTest.testIsrNotExpandedIfUpdateFails @2.7.0: INVALID_UPDATE_VERSION leaves the
    ISR unchanged, the maximal ISR with the follower, nothing queued; one failure counted."""
    b, part = _leader_at_2_7((BROKER,))
    _update_fetch_state(b, part, R1, 10, 10)
    assert part.in_sync_replica_ids() == {BROKER}
    assert set(part.maximal_isr(b)) == {BROKER, R1} and len(isr_updates(b)) == 1
    _answer_queued(b, E.INVALID_UPDATE_VERSION)
    assert part.in_sync_replica_ids() == {BROKER}
    assert set(part.maximal_isr(b)) == {BROKER, R1} and len(isr_updates(b)) == 0
    assert _meters(b) == (0, 0, 1)


def test_maybe_shrink_isr_at_2_7():
    """PartitionTest.testMaybeShrinkIsr @2.7.0: after the lag the shrink is queued; until it
    is committed the ISR, the maximal ISR (a pending shrink keeps the removed follower) and
    the HW stay."""
    b, part = _leader_at_2_7((BROKER, R1))
    part.maybe_shrink_isr(b)
    assert part.in_sync_replica_ids() == {BROKER, R1} and len(isr_updates(b)) == 0
    b.sleep(b.config["replica.lag.time.max.ms"] + 1)
    part.maybe_shrink_isr(b)
    assert len(isr_updates(b)) == 1
    assert isr_updates(b)[(TOPIC, 0)].proposed_isr == (BROKER,)
    assert part.in_sync_replica_ids() == {BROKER, R1}
    assert set(part.maximal_isr(b)) == {BROKER, R1}
    assert part.log.high_watermark == 0


def test_isr_not_shrunk_if_update_fails_at_2_7():
    """PartitionTest.testIsrNotShrunkIfUpdateFails @2.7.0: 30001 ms on, the shrink fails with
    INVALID_UPDATE_VERSION: the state stays PendingShrinkIsr, the ISR and HW as they were,
    nothing queued."""
    b, part = _leader_at_2_7((BROKER, R1))
    b.sleep(30001)
    part.maybe_shrink_isr(b)
    assert part.in_sync_replica_ids() == {BROKER, R1} and len(isr_updates(b)) == 1
    assert part.log.high_watermark == 0
    _answer_queued(b, E.INVALID_UPDATE_VERSION)
    assert isinstance(part.partition_state, PendingShrinkIsr)
    assert part.in_sync_replica_ids() == {BROKER, R1} and len(isr_updates(b)) == 0
    assert part.log.high_watermark == 0


def test_single_in_flight_alter_isr_at_2_7():
    """PartitionTest.testSingleInFlightAlterIsr @2.7.0: with an expansion queued, a shrink is
    not attempted (kafkasim reaches Partition.shrinkIsr through maybeShrinkIsr, which does not
    look while an ISR change is in flight)."""
    b = Broker("2.7")
    part = b.partition(TOPIC, 0)
    seed_log_data(part.log, 10, 4)
    part.make_leader(b, 5, (BROKER, R1, R2), (BROKER, R1, R2, R3), 1, 0)
    assert part.log.high_watermark == 0
    fetch_follower(b, part, R3, 10)   # Partition.expandIsr(follower3)
    assert part.in_sync_replica_ids() == {BROKER, R1, R2}
    assert set(part.maximal_isr(b)) == {BROKER, R1, R2, R3}
    assert len(isr_updates(b)) == 1
    b.sleep(b.config["replica.lag.time.max.ms"] + 1)
    part.maybe_shrink_isr(b)
    assert len(isr_updates(b)) == 1
    assert isinstance(isr_updates(b)[(TOPIC, 0)], PendingExpandIsr)


# -- 4.1.0: a KRaft metadata cache only -------------------------------------------------------
def test_isr_expansion_at_4_1():
    """PartitionTest.testIsrExpansion @4.1.0: the proposed ISR carries each member's broker
    epoch from the KRaft metadata cache (defaultBrokerEpoch), where 3.9.0 in ZooKeeper mode
    asserted -1."""
    b = Broker("4.1", kraft=True)
    part = b.partition(TOPIC, 0)
    seed_log_data(part.log, 10, 4)
    part.make_leader(b, 5, (BROKER,), (BROKER, R1), 1, 0)
    assert replica_state(part, R1) == (NEVER_MS, -1, -1)
    fetch_follower(b, part, R1, 3)
    assert part.in_sync_replica_ids() == {BROKER} and len(isr_updates(b)) == 0
    assert replica_state(part, R1) == (NEVER_MS, 0, 3)
    fetch_follower(b, part, R1, 10)
    assert part.in_sync_replica_ids() == {BROKER}
    assert replica_state(part, R1) == (b.now, 0, 10)
    pending = isr_updates(b)[(TOPIC, 0)]
    assert pending.proposed_isr == (BROKER, R1)
    assert pending.isr_with_broker_epoch == ((BROKER, broker_epoch(BROKER)),
                                             (R1, broker_epoch(R1)))


def test_follower_does_not_join_isr_until_caught_up_to_offset_within_current_leader_epoch_at_4_1():
    """PartitionTest.testFollowerDoesNotJoinISRUntilCaughtUpToOffsetWithinCurrentLeaderEpoch
    @4.1.0: the ISR follower's fetch at the offset after the first batch moves the HW there;
    a follower reaching the HW but not the current epoch's start offset stays out, at it the
    expansion is proposed (with the broker epochs the leader knows)."""
    b = Broker("4.1", kraft=True)
    part = b.partition(TOPIC, 0)
    replicas, isr = (BROKER, R1, R2), (BROKER, R2)
    part.make_leader(b, 8, isr, replicas, 1, 3)
    log = part.log
    _first, last_offset_of_first_batch = log.append_as_leader([1, 2], [1, 1], 8, 0)
    log.append_as_leader([3, 4, 5], [1, 1, 1], 8, 0)
    assert log.high_watermark == log.log_start_offset
    fetch_follower(b, part, R2, 0)
    fetch_follower(b, part, R2, last_offset_of_first_batch + 1)
    assert log.high_watermark == last_offset_of_first_batch + 1
    part.make_follower(b, R2, 9, isr, replicas, 1, 3)
    part.make_leader(b, 10, isr, replicas, 1, 3)
    current_leader_epoch_start_offset = log.log_end_offset
    log.append_as_leader([6, 7], [1, 1], 10, 0)
    fetch_follower(b, part, R1, 0)
    fetch_follower(b, part, R1, last_offset_of_first_batch + 1)
    assert part.in_sync_replica_ids() == {BROKER, R2} and len(isr_updates(b)) == 0
    fetch_follower(b, part, R1, current_leader_epoch_start_offset)
    assert part.in_sync_replica_ids() == {BROKER, R2}
    pending = isr_updates(b)[(TOPIC, 0)]
    assert set(pending.proposed_isr) == {BROKER, R1, R2}
    # 103's state was reset at the new leader epoch (Replica.resetReplicaState: no broker
    # epoch) and it has not fetched since: addBrokerEpochToIsr sends -1 for it
    assert dict(pending.isr_with_broker_epoch) == {
        BROKER: broker_epoch(BROKER), R1: broker_epoch(R1), R2: -1}
