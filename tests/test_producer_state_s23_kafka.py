"""ProducerStateManager and the log start offset before and after KAFKA-7190 (2.4.0): the cases of
core/src/test/scala/unit/kafka/log/ProducerStateManagerTest.scala about the log start
(truncateHead, loadFromSnapshot of producers below it) at 1.0.0, 2.3.0 and 2.4.0, ported.

Until 2.4 a replica forgets an idempotent producer whose last batch is below the log start
(ProducerStateManager.truncateHead and loadFromSnapshot keep only the producers
isProducerRetained: lastDataOffset >= logStartOffset, ProducerStateManager.scala @1.0.0 /
@2.3.0); from 2.4 it keeps them (until transactional.id.expiration.ms). kafkasim's rule
``producer_state_evicts_below_log_start`` (0.11.0 until 2.4) is the manager's
``evicts_below_log_start``, which the broker's LogManager sets from the version.

Kafka's ``append(stateManager, pid, epoch, seq, offset)`` is tests/test_idempotence_versions_kafka
's ``_psm_append`` (the leader's check, update, updateMapEndOffset); ``currentSnapshotOffsets``
is ``set(states.snapshots)``. Left out: testFirstUnstableOffsetAfterEviction (transactions:
kafkasim's manager tracks no ongoing transaction).
"""

from __future__ import annotations

import pytest
from test_idempotence_versions_kafka import _psm_append
from test_replica_manager_kafka import TP, Broker

from kafkasim.core import errors as E
from kafkasim.core import producer_state as ps
from kafkasim.settings.versions import rules_for

PID = 1


def _manager(version: str) -> ps.ProducerStateManager:
    return ps.ProducerStateManager(
        evicts_below_log_start=rules_for(version).producer_state_evicts_below_log_start)


@pytest.mark.parametrize("version", ["1.0", "2.3"])
def test_truncate_head(version):
    """ProducerStateManagerTest.testTruncateHead@1.0.0/@2.3.0 (removed in 2.4.0): producer 1 at
    offsets 0-1, a snapshot at 2, producer 2 at offsets 2-3, a snapshot at 4. truncateHead(2)
    keeps both snapshots and evicts producer 1; truncateHead(3) keeps producer 2 (last offset
    3) and the snapshot at 4, the map end offset 4; truncateHead(5) evicts producer 2 and
    deletes every snapshot, the map end offset 5."""
    states = _manager(version)
    _psm_append(states, PID, 0, 0, 0, version)
    _psm_append(states, PID, 0, 1, 1, version)
    states.take_snapshot()
    another = 2
    _psm_append(states, another, 0, 0, 2, version)
    _psm_append(states, another, 0, 1, 3, version)
    states.take_snapshot()
    assert set(states.snapshots) == {2, 4}

    states.truncate_head(2)
    assert set(states.snapshots) == {2, 4}
    assert set(states.active_producers()) == {another}
    assert states.last_entry(PID) is None
    assert states.last_entry(another).last_data_offset == 3

    states.truncate_head(3)
    assert set(states.active_producers()) == {another}
    assert set(states.snapshots) == {4}
    assert states.map_end_offset() == 4

    states.truncate_head(5)
    assert set(states.active_producers()) == set()
    assert set(states.snapshots) == set()
    assert states.map_end_offset() == 5


@pytest.mark.parametrize("version", ["2.4", "3.9"])
def test_truncate_head_keeps_producers_since_2_4(version):
    """ProducerStateManager.truncateHead@2.4.0 (onLogStartOffsetIncremented from 2.8): the same
    steps evict no producer; the snapshots and the map end offset move as before."""
    states = _manager(version)
    _psm_append(states, PID, 0, 0, 0, version)
    _psm_append(states, PID, 0, 1, 1, version)
    states.take_snapshot()
    _psm_append(states, 2, 0, 0, 2, version)
    _psm_append(states, 2, 0, 1, 3, version)
    states.take_snapshot()
    states.truncate_head(3)
    assert set(states.active_producers()) == {PID, 2}
    assert set(states.snapshots) == {4}
    states.truncate_head(5)
    assert set(states.active_producers()) == {PID, 2}
    assert (set(states.snapshots), states.map_end_offset()) == (set(), 5)


@pytest.mark.parametrize(("version", "kept"), [("1.0", {2}), ("2.3", {2}), ("2.4", {1, 2})])
def test_load_from_snapshot_filters_by_log_start(version, kept):
    """ProducerStateManager.loadFromSnapshot@1.0.0/@2.3.0 filters the snapshot's producers by
    isProducerRetained(logStartOffset); @2.4.0 only by expiry. Producer 1 at offset 0, producer
    2 at offset 1, a snapshot at 2, producer 2 again at 2 (map end 3); truncateAndReload(log
    start 1, log end 2) reloads from the snapshot at 2."""
    states = _manager(version)
    _psm_append(states, 1, 0, 0, 0, version)
    _psm_append(states, 2, 0, 0, 1, version)
    states.take_snapshot()
    _psm_append(states, 2, 0, 1, 2, version)
    states.truncate_and_reload(1, 2, 0)
    assert set(states.active_producers()) == kept
    assert states.last_entry(2).last_seq == 0 and states.map_end_offset() == 2


@pytest.mark.parametrize("version", ["1.0", "2.3"])
def test_truncate_and_reload_removes_out_of_range_snapshots(version):
    """ProducerStateManagerTest.testTruncateAndReloadRemovesOutOfRangeSnapshots@1.0.0/@2.3.0:
    snapshots at 1..5; truncateAndReload(1, 3) keeps those at 2 and 3."""
    states = _manager(version)
    for seq in range(5):
        _psm_append(states, PID, 0, seq, seq, version)
        states.take_snapshot()
    states.truncate_and_reload(1, 3, 0)
    assert (states.oldest_snapshot_offset(), states.latest_snapshot_offset()) == (2, 3)


@pytest.mark.parametrize(("version", "verdict"), [
    ("1.0", E.UNKNOWN_PRODUCER_ID), ("2.3", E.UNKNOWN_PRODUCER_ID), ("2.4", E.NONE)])
def test_producer_below_log_start_is_unknown_until_2_4(version, verdict):
    """KAFKA-7190's symptom, through the broker (the LogManager gives the log the version's
    rule): an idempotent producer's batch at sequence 0 (offset 0), then other records, the log
    start moved past its batch (DeleteRecords: Log.maybeIncrementLogStartOffset -> truncateHead).
    Its next batch (sequence 1) is UNKNOWN_PRODUCER_ID until 2.4 (the broker forgot it; 1.0-2.4
    answer a first batch not at sequence 0 so, KAFKA-5793) and appended from 2.4."""
    b = Broker(version)
    b.lair(0, 1, (0,))
    ok = E.NONE
    assert b.produce_answer(b.produce(1, acks=1, seq=(7, 0, 0))).partitions[0][2] == ok
    assert b.produce_answer(b.produce(2, acks=1)).partitions[0][2] == ok
    log = b.logs[TP]
    assert log.high_watermark == 3
    assert log.maybe_increment_log_start_offset(1)
    assert (7 in log.producer_states) is (verdict == E.NONE)
    answer = b.produce_answer(b.produce(1, acks=1, seq=(7, 0, 1)))
    assert answer.partitions[0][2] == verdict
