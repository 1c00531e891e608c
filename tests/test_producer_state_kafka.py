"""Idempotent producer state on the broker, following the idempotent-append cases of Kafka's
storage/src/test/java/org/apache/kafka/storage/internals/log/ProducerStateManagerTest.java
(trunk 1eb7644; transactions and snapshots are not modelled). Scenarios and code are our own;
each test names the Kafka test it follows. ``check_append`` is the leader's verdict on a client
batch (UnifiedLog.analyzeAndValidateProducerState + ProducerAppendInfo.append), ``update`` the
bookkeeping of an appended batch (ProducerStateManager.update; a follower's and a reload's
appends are not validated)."""

from __future__ import annotations

from kafkasim.core import producer_state as ps
from kafkasim.core.log import ProducerBatch

PID = 1


def _replicate(states, epoch, seq, offset, count=1):
    """appendReplicationEntry: a batch of ``count`` records at ``offset`` as a follower copies
    it (no validation)."""
    ps.update(states, [ProducerBatch(offset, offset + count - 1, PID, epoch, seq)])


def _client(states, epoch, seq, offset, count=1):
    """appendClientEntry: the leader's check, then the append when it is accepted."""
    last = ps.increment_sequence(seq, count - 1)
    verdict, _ = ps.check_append(states, (PID, epoch, seq, last))
    if verdict == "append":
        _replicate(states, epoch, seq, offset, count)
    return verdict


# testBasicIdMapping
def test_sequences_and_epochs_of_one_producer():
    states: dict = {}
    assert _client(states, 0, 0, 0) == "append"
    assert _client(states, 0, 1, 1) == "append"
    assert _client(states, 0, 1, 2) == "duplicate"   # Kafka: found before ProducerAppendInfo
    assert _client(states, 0, 5, 2) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert _client(states, 1, 0, 3) == "append"     # a new epoch starts at sequence 0
    assert _client(states, 0, 0, 4) == "INVALID_PRODUCER_EPOCH"
    assert _client(states, 2, 3, 4) == "OUT_OF_ORDER_SEQUENCE_NUMBER"   # new epoch, seq != 0


# testProducerSequenceWrapAround
def test_sequence_zero_follows_integer_max_value():
    states: dict = {}
    _replicate(states, 15, ps.INT_MAX, 735)
    assert _client(states, 15, 0, 1235) == "append"
    entry = ps.last_entry(states, PID)
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (15, ps.INT_MAX, 0)


# testProducerSequenceInvalidWrapAround
def test_only_zero_follows_integer_max_value():
    states: dict = {}
    _replicate(states, 15, ps.INT_MAX, 735)
    assert _client(states, 15, 1, 1235) == "OUT_OF_ORDER_SEQUENCE_NUMBER"


# testProducerSequenceWithWrapAroundBatchRecord
def test_a_batch_whose_sequences_wrap():
    states: dict = {}
    assert ps.last_entry(states, PID) is None
    _replicate(states, 15, ps.INT_MAX - 10, 2000, count=21)
    entry = ps.last_entry(states, PID)
    assert (entry.first_seq, entry.last_seq) == (ps.INT_MAX - 10, 9)
    assert (entry.first_data_offset, entry.last_data_offset) == (2000, 2020)
    assert _client(states, 15, 10, 2021) == "append"


# testNoValidationOnFirstEntryWhenLoadingLog
def test_a_replicated_first_entry_is_taken_as_it_is():
    states: dict = {}
    _replicate(states, 5, 16, 735)
    entry = ps.last_entry(states, PID)
    assert (entry.producer_epoch, entry.first_seq, entry.last_seq) == (5, 16, 16)
    assert (entry.first_data_offset, entry.last_data_offset) == (735, 735)
    assert not entry.is_empty()


# testAcceptAppendWithSequenceGapsOnReplica
def test_a_replica_accepts_a_sequence_gap_the_leader_refuses():
    states: dict = {}
    _client(states, 0, 0, 0)
    assert _client(states, 0, 3, 1) == "OUT_OF_ORDER_SEQUENCE_NUMBER"
    assert ps.active_producers(states)[PID].last_seq == 0
    _replicate(states, 0, 3, 1)
    assert ps.active_producers(states)[PID].last_seq == 3


# testAcceptAppendWithoutProducerStateOnReplica / KIP-360: an unknown producer is accepted at
# any sequence
def test_an_unknown_producer_is_accepted_at_any_sequence():
    states: dict = {}
    assert PID not in ps.active_producers(states)
    assert _client(states, 0, 2, 2) == "append"
    assert ps.active_producers(states)[PID].first_seq == 2


def test_only_the_last_five_batches_are_kept_and_duplicates_found_among_them():
    # ProducerStateEntry.NUM_BATCHES_TO_RETAIN and findDuplicateBatch (ProducerStateManagerTest's
    # duplicate handling goes through UnifiedLogTest; the rule is the entry's)
    states: dict = {}
    for i in range(7):
        assert _client(states, 0, 2 * i, 10 * i, count=2) == "append"
    entry = ps.last_entry(states, PID)
    assert len(entry.batches) == ps.NUM_BATCHES_TO_RETAIN and entry.first_seq == 4
    assert entry.find_duplicate_batch(0, 12, 13).first_offset == 60
    assert entry.find_duplicate_batch(0, 2, 3) is None       # no longer kept
    assert entry.find_duplicate_batch(1, 12, 13) is None     # another epoch
    assert ps.check_append(states, (PID, 0, 12, 13)) == ("duplicate", 60)
    assert ps.check_append(states, (PID, 0, 2, 3)) == ("OUT_OF_ORDER_SEQUENCE_NUMBER", -1)
