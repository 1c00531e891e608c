"""Idempotent-producer state on the broker, more cases ported from Kafka's tests.

Follows ``core/src/test/scala/unit/kafka/log/ProducerStateManagerTest.scala`` (3.7.0 and 2.4.0),
the duplicate handling of ``UnifiedLogTest.testDuplicateAppends`` and the producer-state cases of
UnifiedLogTest / LogLoaderTest that fit one segment (3.7.0), against
``kafkasim.core.producer_state`` and ``kafkasim.core.log``. Cases already ported by
``tests/test_producer_state_kafka.py`` (basic id mapping, sequence wrap-around, replica appends
without validation) are not repeated.

Producer snapshots are kept on the ProducerStateManager as ``SnapshotFile`` records by offset
(the ``<offset>.snapshot`` files of the partition's directory); a restarted broker's manager
starts with them. ProducerStateManagerTest's ``append`` helper (prepareUpdate, appendDataBatch,
update, updateMapEndOffset(offset + 1)) is ``_append``.

Left out: transactions (markers, LSO, late transactions, verification), producer-id expiration
(testRemoveExpiredPidsOnReload, testAcceptAppendWithoutProducerStateOnReplica,
testPidExpirationTimeout), the snapshot files' bytes (testLoadFromEmptySnapshotFile /
TruncatedSnapshotFile / CorruptSnapshotFile: no serialization), renaming for async deletion
(testRemoveAndMarkSnapshotForDeletion*), testReloadSnapshots (files copied back into the
directory), and LogLoaderTest.testLoadProducersAfterDeleteRecordsMidSegment: kafkasim's log has
no segments, the records below the log start are gone, so the recovery after an unclean
shutdown cannot replay them as Kafka replays its segment from its base offset.

Scenarios and code are our own; each test names the Kafka test it follows and the tag. Where
kafkasim answered differently from Kafka the test was a strict xfail naming the deviation; all
of them pass since 67adf91.
"""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core import producer_state as ps
from kafkasim.core.log import Log, ProducerBatch
from kafkasim.runtime.log_manager import LogManager
from kafkasim.settings.versions import rules_for, version_at_least

PID = 1


def _leader_append(log: Log, epoch: int, seq: int, count: int = 1, pid: int = PID):
    """UnifiedLog.appendAsLeader of one idempotent batch of ``count`` records, as kafkasim's
    ReplicaManager does it: the leader's check, then the append and the state update.
    Returns (verdict, first offset, last offset); a duplicate answers the original offsets."""
    last_seq = ps.increment_sequence(seq, count - 1)
    verdict, dup = ps.check_append(log.producer_states, (pid, epoch, seq, last_seq))
    if verdict == "duplicate":
        return verdict, dup, dup + count - 1
    if verdict != "append":
        return verdict, -1, -1
    first, last = log.append_as_leader(list(range(count)), [10] * count, 0, 0, pid, epoch, seq)
    ps.update(log.producer_states, (log.producer_batches.last,))
    return verdict, first, last


def _reload(log: Log, clean: bool = True) -> dict:
    """A broker restart: the log closed (UnifiedLog.close: a producer snapshot at its end) after
    a ``clean`` shutdown, then LogLoader.load's producer state (``LogManager
    ._load_producer_state``: a new ProducerStateManager with the snapshot files,
    rebuildProducerState to the log end offset)."""
    if clean:
        log.take_producer_snapshot()
    LogManager._load_producer_state(log, clean)
    return log.producer_states


def _append(states: ps.ProducerStateManager, pid: int, epoch: int, seq: int, offset: int) -> str:
    """ProducerStateManagerTest.append: a client batch of one record at ``offset`` (the leader's
    check, then update), and updateMapEndOffset(offset + 1)."""
    verdict, _ = states.check_append((pid, epoch, seq, seq))
    if verdict == "append":
        states.update([ProducerBatch(offset, offset, pid, epoch, seq)])
        states.update_map_end_offset(offset + 1)
    return verdict


def _log_for_duplicates() -> Log:
    """testDuplicateAppends' log: six one-record batches (sequences 0..5 at offsets 0..5), then
    one three-record batch (sequences 6..8 at offsets 6..8)."""
    log = Log("test", 0)
    for seq in range(6):
        assert _leader_append(log, 0, seq) == ("append", seq, seq)
    assert _leader_append(log, 0, 6, count=3) == ("append", 6, 8)
    return log


# --- duplicates: UnifiedLogTest.testDuplicateAppends (3.7.0) -----------------------------------

# UnifiedLogTest.testDuplicateAppends (3.7.0): a retry of the multi-record tail batch
def test_retry_of_the_multi_record_tail_batch_answers_its_offsets():
    log = _log_for_duplicates()
    assert _leader_append(log, 0, 6, count=3) == ("duplicate", 6, 8)
    assert log.log_end_offset == 9   # nothing appended


# UnifiedLogTest.testDuplicateAppends (3.7.0): a partial duplicate of the tail is refused
def test_partial_duplicate_of_the_tail_batch_is_out_of_order():
    log = _log_for_duplicates()
    # sequences 7..8: the end of the tail batch 6..8, not a batch of its own
    assert _leader_append(log, 0, 7, count=2)[0] == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert log.log_end_offset == 9


# UnifiedLogTest.testDuplicateAppends (3.7.0): a duplicate among the last five batches
def test_duplicate_among_the_last_five_batches_answers_its_offsets():
    log = _log_for_duplicates()
    # kept: sequences 2, 3, 4, 5 and 6..8; sequence 2 is the oldest kept batch
    assert _leader_append(log, 0, 2) == ("duplicate", 2, 2)
    assert log.log_end_offset == 9


# UnifiedLogTest.testDuplicateAppends (3.7.0): a duplicate older than the last five batches
def test_duplicate_older_than_the_last_five_batches_is_out_of_order():
    log = _log_for_duplicates()
    assert _leader_append(log, 0, 1)[0] == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert log.log_end_offset == 9


# UnifiedLogTest.testDuplicateAppends (3.7.0): the kept metadata is one entry per batch
# (ProducerStateEntry.addBatchMetadata keeps the last NUM_BATCHES_TO_RETAIN batches as they are)
def test_the_entry_keeps_the_last_five_batches_one_by_one():
    log = _log_for_duplicates()
    entry = ps.last_entry(log.producer_states, PID)
    assert [(b.first_seq, b.last_seq) for b in entry.batches] == \
        [(2, 2), (3, 3), (4, 4), (5, 5), (6, 8)]
    assert entry.find_duplicate_batch(0, 6, 8).first_offset == 6


# UnifiedLogTest.testDuplicateAppends (3.7.0): a retry of a one-record tail batch
def test_retry_of_a_single_record_tail_batch_answers_its_offsets():
    log = _log_for_duplicates()
    assert _leader_append(log, 0, 9) == ("append", 9, 9)
    assert _leader_append(log, 0, 9) == ("duplicate", 9, 9)
    assert log.log_end_offset == 10


# --- epochs --------------------------------------------------------------------------------

# ProducerStateManagerTest.testBasicIdMapping (3.7.0), the epoch change: ProducerStateEntry
# .maybeUpdateProducerEpoch drops the old epoch's batches, so they are no duplicates any more
def test_a_new_epoch_drops_the_batches_of_the_old_one():
    log = Log("test", 0)
    _leader_append(log, 0, 0)
    _leader_append(log, 0, 1)
    assert _leader_append(log, 1, 0) == ("append", 2, 2)
    entry = ps.last_entry(log.producer_states, PID)
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (1, 0, 0)
    assert entry.first_data_offset == 2
    assert entry.find_duplicate_batch(0, 1, 1) is None
    assert _leader_append(log, 0, 1)[0] == "INVALID_PRODUCER_EPOCH"   # the old epoch is fenced
    assert _leader_append(log, 1, 0) == ("duplicate", 2, 2)


# ProducerStateManagerTest.testAcceptAppendWithSequenceGapsOnReplica (3.7.0) for the epoch: a
# replica does not fence (ProducerAppendInfo.checkProducerEpoch only logs for REPLICATION) and
# ProducerStateEntry.addBatch -> maybeUpdateProducerEpoch takes the batch's older epoch
def test_a_replica_append_with_an_older_epoch_is_taken():
    states: dict = {}
    ps.update(states, [ProducerBatch(0, 0, PID, 3, 0)])
    ps.update(states, [ProducerBatch(1, 1, PID, 2, 7)])
    entry = ps.last_entry(states, PID)
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (2, 7, 7)
    assert (entry.first_data_offset, entry.last_data_offset) == (1, 1)


# --- the first append of an unknown producer, by version -------------------------------------

# ProducerStateManagerTest.testRemoveExpiredPidsOnReload: 2.4.0 expects UnknownProducerIdException
# for a client append at sequence 2 of a producer the broker does not know; 3.7.0 accepts it
# (KIP-360, ProducerAppendInfo.checkSequence since 2.5.0) and tracks the producer from there;
# 0.11.0 (before KAFKA-5793) answers OutOfOrderSequenceException (a new epoch starts at 0)
@pytest.mark.parametrize("version", ["0.11.0", "1.0", "2.4", "2.5", "3.7"])
def test_first_append_of_an_unknown_producer_at_a_nonzero_sequence(version):
    states: dict = {}
    verdict, _ = ps.check_append(states, (PID, 0, 2, 2),
                                 ps.unknown_producer_verdict(rules_for(version).clients))
    if version_at_least(version, "2.5"):
        assert verdict == "append"
        ps.update(states, [ProducerBatch(2, 2, PID, 0, 2)])
        producers = ps.active_producers(states)
        assert len(producers) == 1 and producers[PID].last_seq == 2
    elif version_at_least(version, "1.0"):
        assert verdict == E.UNKNOWN_PRODUCER_ID
    else:
        assert verdict == E.OUT_OF_ORDER_SEQUENCE_NUMBER


# ProducerAppendInfo.checkSequence (2.4.0 and 3.7.0): an unknown producer's first batch at
# sequence 0 is accepted in every version (testTruncateFullyAndStartAt appends it so)
@pytest.mark.parametrize("version", ["0.11.0", "2.4", "3.7"])
def test_first_append_of_an_unknown_producer_at_sequence_zero(version):
    verdict = ps.unknown_producer_verdict(rules_for(version).clients)
    assert ps.check_append({}, (PID, 4, 0, 0), verdict) == ("append", -1)


# --- truncation and reload ---------------------------------------------------------------

# ProducerStateManagerTest.testTruncateAndReloadRemovesOutOfRangeSnapshots (3.7.0): sequences
# 0..4 at offsets 0..4, then truncateAndReload(logStart=1, logEnd=3); the state is that of the
# batches below offset 3
def test_truncate_and_reload_keeps_the_state_below_the_truncation_point():
    log = Log("test", 0)
    for seq in range(5):
        _leader_append(log, 0, seq)
    log.maybe_increment_high_watermark(5)
    assert log.maybe_increment_log_start_offset(1)
    assert log.truncate_to(3) == 2
    states = _reload(log)
    entry = ps.last_entry(states, PID)
    assert (entry.producer_epoch, entry.last_seq, entry.last_data_offset) == (0, 2, 2)
    assert _leader_append(log, 0, 4)[0] == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert _leader_append(log, 0, 3) == ("append", 3, 3)   # the truncated batch again


# ProducerStateManagerTest.testTruncateFullyAndStartAt (3.7.0): a wiped log forgets every
# producer and the producer starts again at sequence 0
def test_truncate_fully_and_start_at_forgets_the_producers():
    log = Log("test", 0)
    _leader_append(log, 0, 0)
    _leader_append(log, 0, 1)
    _leader_append(log, 0, 2)
    log.truncate_fully_and_start_at(0)
    assert _reload(log) == {}
    assert _leader_append(log, 0, 0) == ("append", 0, 0)
    assert ps.last_entry(log.producer_states, PID).last_seq == 0


# ProducerStateManagerTest.testLoadFromSnapshotRetainsNonExpiredProducers (3.7.0; also 2.4.0),
# through a restart of the log: producer 1 at offset 0, producer 2 at offset 1, the log start
# moved to 1; the snapshot taken at the close keeps both, so the reload does too
def test_reload_keeps_producers_whose_batches_are_below_the_log_start():
    log = Log("test", 0)
    _leader_append(log, 0, 0, pid=1)
    _leader_append(log, 0, 0, pid=2)
    log.maybe_increment_high_watermark(2)
    assert log.maybe_increment_log_start_offset(1)
    states = _reload(log)
    assert len(ps.active_producers(states)) == 2
    e1, e2 = ps.last_entry(states, 1), ps.last_entry(states, 2)
    assert (e1.last_seq, e1.last_data_offset) == (0, 0)
    assert (e2.last_seq, e2.last_data_offset) == (0, 1)


# ProducerStateManagerTest.testRecoverFromSnapshotUnfinishedTransaction (3.7.0), without the
# transaction, through a restart of the log: a reload from the snapshot restores only the last
# batch of each producer
@pytest.mark.parametrize("clean", [True, False])
def test_reload_restores_only_the_last_batch(clean):
    log = Log("test", 0)
    _leader_append(log, 0, 0)
    _leader_append(log, 0, 1)
    states = _reload(log, clean)
    entry = ps.last_entry(states, PID)
    assert (entry.first_data_offset, entry.first_seq) == (1, 1)
    assert (entry.last_data_offset, entry.last_seq) == (1, 1)
    assert _leader_append(log, 0, 2) == ("append", 2, 2)   # appends go on after the reload


# --- ProducerStateManager: the map as Kafka's class names it ---------------------------------


# ProducerStateManagerTest (3.7.0): lastEntry / activeProducers / producerIdCount on the log's
# own ProducerStateManager, updated by appends and rebuilt on reload
def test_the_log_keeps_a_producer_state_manager():
    log = Log("test", 0)
    states = log.producer_states
    assert isinstance(states, ps.ProducerStateManager) and states.producer_id_count() == 0
    assert states.last_entry(PID) is None
    _leader_append(log, 0, 0, count=2)
    _leader_append(log, 0, 2, pid=2)
    assert states.producer_id_count() == 2
    assert list(states.active_producers()) == [PID, 2]
    assert states.last_entry(PID).last_seq == 1
    assert states.check_append((PID, 0, 0, 1)) == ("duplicate", 0)
    states.update([ProducerBatch(3, 3, PID, 0, 2)])
    assert states.last_entry(PID).last_data_offset == 3
    rebuilt = _reload(log)
    assert isinstance(rebuilt, ps.ProducerStateManager)
    assert rebuilt.last_entry(2).first_data_offset == 2


# --- producer snapshots: ProducerStateManagerTest (3.7.0) ----------------------------------


def test_truncate_and_reload_removes_out_of_range_snapshots():
    """testTruncateAndReloadRemovesOutOfRangeSnapshots: snapshots at 1..5; truncateAndReload
    (logStart 1, logEnd 3) keeps those in (1, 3]."""
    states = ps.ProducerStateManager()
    for seq in range(5):
        _append(states, PID, 0, seq, seq)
        states.take_snapshot()
    states.truncate_and_reload(1, 3, 0)
    assert states.oldest_snapshot_offset() == 2
    assert states.latest_snapshot_offset() == 3


def test_take_snapshot():
    """testTakeSnapshot: one snapshot file, named after its offset, not empty."""
    states = ps.ProducerStateManager()
    _append(states, PID, 0, 0, 0)
    _append(states, PID, 0, 1, 1)
    states.take_snapshot()
    (snapshot,) = states.snapshots.values()
    assert snapshot.name == "00000000000000000002.snapshot"
    assert snapshot.entries == ((PID, 0, 1, 1, 0),)   # id, epoch, last seq, offset, delta


def test_recover_from_snapshot():
    """testRecoverFromSnapshotUnfinishedTransaction (without the transaction; 2.4.0:
    testRecoverFromSnapshot): a new manager with the snapshot file, truncateAndReload(0, 3),
    has only the last batch (offset 1, sequence 1); appends go on after it."""
    states = ps.ProducerStateManager()
    _append(states, PID, 0, 0, 0)
    _append(states, PID, 0, 1, 1)
    states.take_snapshot()
    recovered = ps.ProducerStateManager(states.snapshots)
    recovered.truncate_and_reload(0, 3, 0)
    entry = recovered.last_entry(PID)
    assert (entry.first_data_offset, entry.first_seq) == (1, 1)
    assert (entry.last_data_offset, entry.last_seq) == (1, 1)
    assert _append(recovered, PID, 0, 2, 2) == "append"


def test_load_from_snapshot_retains_non_expired_producers():
    """testLoadFromSnapshotRetainsNonExpiredProducers: a snapshot at 2, truncateAndReload
    (logStart 1, logEnd 2) keeps both producers, producer 1's batch below the log start."""
    states = ps.ProducerStateManager()
    _append(states, 1, 0, 0, 0)
    _append(states, 2, 0, 0, 1)
    states.take_snapshot()
    assert len(states.active_producers()) == 2
    states.truncate_and_reload(1, 2, 0)
    assert len(states.active_producers()) == 2
    e1, e2 = states.last_entry(1), states.last_entry(2)
    assert (e1.last_seq, e1.last_data_offset) == (0, 0)
    assert (e2.last_seq, e2.last_data_offset) == (0, 1)


def test_delete_snapshots_before():
    """testDeleteSnapshotsBefore: snapshots at 2 and 3; deleteSnapshotsBefore(3) leaves 3,
    deleteSnapshotsBefore(4) none."""
    states = ps.ProducerStateManager()
    _append(states, PID, 0, 0, 0)
    _append(states, PID, 0, 1, 1)
    states.take_snapshot()
    assert set(states.snapshots) == {2}
    _append(states, PID, 0, 2, 2)
    states.take_snapshot()
    assert set(states.snapshots) == {2, 3}
    states.delete_snapshots_before(3)
    assert set(states.snapshots) == {3}
    states.delete_snapshots_before(4)
    assert set(states.snapshots) == set()


def test_truncate_fully_and_start_at_removes_the_snapshots():
    """testTruncateFullyAndStartAt: truncateFullyAndStartAt(0) deletes every snapshot; the
    producer starts again at sequence 0, a snapshot at 1."""
    states = ps.ProducerStateManager()
    _append(states, PID, 0, 0, 0)
    _append(states, PID, 0, 1, 1)
    states.take_snapshot()
    _append(states, PID, 0, 2, 2)
    states.take_snapshot()
    assert set(states.snapshots) == {2, 3}
    states.truncate_fully_and_start_at(0)
    assert states.snapshots == {} and states.is_empty()
    assert _append(states, PID, 0, 0, 0) == "append"
    states.take_snapshot()
    assert set(states.snapshots) == {1}


def test_skip_snapshot_if_offset_unchanged():
    """testSkipSnapshotIfOffsetUnchanged: nothing appended since the last snapshot, no new
    one."""
    states = ps.ProducerStateManager()
    _append(states, PID, 0, 0, 0)
    assert states.take_snapshot() is not None
    assert set(states.snapshots) == {1}
    assert states.take_snapshot() is None
    assert set(states.snapshots) == {1}


@pytest.mark.parametrize("bases, kept", [((5,), [5, 42]), ((42,), [42])])
def test_remove_stray_snapshots(bases, kept):
    """testRemoveStraySnapshotsKeepCleanShutdownSnapshot / testRemoveAllStraySnapshots:
    snapshot files at 2, 5 and 42; with segments based at ``bases`` the snapshots at a base
    stay, and the largest stray one if it is above every base (a clean shutdown's)."""
    files = {o: ps.SnapshotFile(o, ()) for o in (5, 2, 42)}
    states = ps.ProducerStateManager(files)
    states.remove_stray_snapshots(bases)
    assert sorted(states.snapshots) == kept
    assert states.latest_snapshot_offset() == 42
    assert states.oldest_snapshot_offset() == kept[0]


# --- producer snapshots of a log: UnifiedLogTest (3.7.0), one segment ------------------------
# (testProducerIdMapTruncateToWithNoSnapshots is in tests/test_unified_log_kafka.py)


def test_producer_id_map_offset_updated_for_non_idempotent_data():
    """UnifiedLogTest.testProducerIdMapOffsetUpdatedForNonIdempotentData: a record with no
    producer id moves the state's end offset too: takeProducerSnapshot snapshots at 1."""
    log = Log("test", 0)
    log.append_as_leader([1], [10], 0, 0)
    log.take_producer_snapshot()
    assert log.producer_states.latest_snapshot_offset() == 1


def test_producer_id_map_truncate_to():
    """UnifiedLogTest.testProducerIdMapTruncateTo: snapshots at 2 and 3; truncateTo(2) keeps
    2, truncateTo(1) leaves the one it takes at 1, truncateTo(0) none."""
    log = Log("test", 0)
    log.append_as_leader([1], [10], 0, 0)
    log.append_as_leader([2], [10], 0, 0)
    log.take_producer_snapshot()
    log.append_as_leader([3], [10], 0, 0)
    log.take_producer_snapshot()
    states = log.producer_states
    for target in (2, 1):
        log.truncate_to(target)
        assert states.latest_snapshot_offset() == target
        assert states.map_end_offset() == target
    log.truncate_to(0)
    assert states.latest_snapshot_offset() is None and states.map_end_offset() == 0


def test_producer_id_map_truncate_fully_and_start_at():
    """UnifiedLogTest.testProducerIdMapTruncateFullyAndStartAt: a snapshot at 3;
    truncateFullyAndStartAt(29) deletes it, the state is up to 29."""
    log = Log("test", 0)
    log.append_as_leader([1], [10], 0, 0)
    log.take_producer_snapshot()
    log.append_as_leader([2], [10], 0, 0)
    log.append_as_leader([3], [10], 0, 0)
    log.take_producer_snapshot()
    assert log.producer_states.latest_snapshot_offset() == 3
    log.truncate_fully_and_start_at(29)
    assert log.producer_states.latest_snapshot_offset() is None
    assert log.producer_states.map_end_offset() == 29


def test_truncation_reloads_the_latest_snapshot_below_it():
    """UnifiedLog.truncateTo -> rebuildProducerState: the state below the truncation point is
    the latest snapshot below it (each producer's last batch then) plus the batches after it;
    the batches older than the snapshot are no duplicates any more."""
    log = Log("test", 0)
    for seq in range(3):
        _leader_append(log, 0, seq)
    log.take_producer_snapshot()   # at 3: the batch of sequence 2 only
    for seq in range(3, 6):
        _leader_append(log, 0, seq)
    log.maybe_increment_high_watermark(6)
    assert log.truncate_to(5) == 1
    entry = ps.last_entry(log.producer_states, PID)
    assert [(b.first_seq, b.first_offset) for b in entry.batches] == [(2, 2), (3, 3), (4, 4)]
    assert _leader_append(log, 0, 1)[0] == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert _leader_append(log, 0, 3) == ("duplicate", 3, 3)
    assert log.producer_states.latest_snapshot_offset() == 5


def test_load_producers_after_delete_records_on_segment():
    """LogLoaderTest.testLoadProducersAfterDeleteRecordsOnSegment @3.9.0: DeleteRecords past the
    first producer's only batch keeps both producers in memory, but the recovery after an
    unclean shutdown replays only the batches still in the log (Kafka: the segment holding pid 1
    is deleted), so only pid 2 is loaded back, at its last sequence. (Kafka's test asserts the
    count on the reloaded log and the entry on the old one; here both on the reloaded state.)"""
    log = Log("test", 0)
    _leader_append(log, 0, 0, pid=1)
    _leader_append(log, 0, 0, pid=2)
    assert len(ps.active_producers(log.producer_states)) == 2
    log.update_high_watermark(log.log_end_offset)
    assert log.maybe_increment_log_start_offset(1)
    assert len(ps.active_producers(log.producer_states)) == 2   # deleting records keeps them
    assert ps.last_entry(log.producer_states, 2).last_seq == 0
    states = _reload(log, clean=False)
    assert list(ps.active_producers(states)) == [2]
    assert ps.last_entry(states, 2).last_seq == 0


def test_fetch_snapshot_empty_snapshot():
    """ProducerStateManagerTest.testFetchSnapshotEmptySnapShot @3.9.0: a manager without
    snapshots has none at offset 1 (fetchSnapshot: Optional.empty; snapshotFileForOffset)."""
    states = ps.ProducerStateManager()
    assert states.snapshot_file_for_offset(1) is None
    assert states.latest_snapshot_offset() is None and states.oldest_snapshot_offset() is None
