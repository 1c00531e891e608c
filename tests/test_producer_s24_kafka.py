"""Producer client and broker producer state, ported from Kafka's own tests (session 24).

Kafka test classes and tags:
- clients MetadataTest @3.9.0-rc3 (leader epoch cases: testStaleMetadata, testUpdateLastEpoch,
  testRejectOldMetadata, testOutOfBandEpochUpdate, testNoEpoch), driven through kafkasim's
  ``ProducerMetadata`` (Metadata's lastSeenLeaderEpochs) and a producer fed MetadataResponses;
  the rule ``producer_metadata_keeps_newer_leader_epoch`` (KAFKA-7738, 2.2+) against 2.1.
- clients MetadataTest.testUpdatePartitionLeadership @3.9.0-rc3 (KIP-951), through the sender's
  ``update_partition_leadership`` with a ProduceResponse's current leaders.
- clients Sender @0.11.0.0 (failBatch / completeBatch / run, the behaviour SenderTest
  .testSequenceNumberIncrement @0.11.0.0 relies on: a sequence counts only for a completed
  batch; an expired batch in retry resets the producer id), against 1.0 and 2.4, in a cluster.
- core LogTest.testDuplicateAppends @1.0.0 and ProducerStateManagerTest.testBasicIdMapping
  @1.0.0, through ``ProducerStateManager.check_append`` (UnifiedLog
  .analyzeAndValidateProducerState + ProducerAppendInfo.checkSequence); the 1.0.x
  DUPLICATE_SEQUENCE_NUMBER answer (``duplicate_sequence_before_cached_batches``, KAFKA-5494
  until KAFKA-6683 in 1.1) against 0.11 and 1.1.

Not ported: MetadataTest's topic-id cases (testEpochUpdateAfterTopicDeletion,
testEpochUpdateOnChangedTopicIds: kafkasim's producer metadata keeps no topic ids) and the
hasReliableLeaderEpochs versions below Metadata v9 (testIgnoreLeaderEpochInOlderMetadataResponse:
kafkasim's client and broker run one release, so the answer's version always matches);
Metadata's partial cache (partitionMetadataIfCurrent, fetch().partition): kafkasim's producer
keeps only each partition's leader and epoch (``Producer.leaders`` / ``leader_epochs``), so the
tests assert on those.
"""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core.messages import MetadataResponse
from kafkasim.core.producer_state import ProducerStateManager
from kafkasim.runtime.clients.producer_metadata import ProducerMetadata
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.versions import rules_for

TP = ("topic-1", 0)


def _row(epoch: int, leader: int = 1, isr=(1, 2, 3), err: str = E.NONE):
    """A MetadataResponse partition row of TP: (topic, partition, error, leader, epoch,
    replicas, isr)."""
    return (TP[0], TP[1], err, leader, epoch, (1, 2, 3), tuple(isr))


# ------------------------------------------------------------------ MetadataTest (leader epochs)

def test_stale_metadata():
    """MetadataTest.testStaleMetadata: an answer with an older epoch (and another ISR) is
    ignored; the last seen epoch stays 10."""
    md = ProducerMetadata()
    assert md.update(100, [_row(10)], keep_newer_epoch=True) == frozenset()
    assert md.update(101, [_row(9, isr=(1, 2))], keep_newer_epoch=True) == {TP}
    assert md.last_seen_leader_epoch(TP) == 10


def test_update_last_epoch():
    """MetadataTest.testUpdateLastEpoch: updateLastSeenEpochIfNewer does nothing without a
    known epoch, never goes back, takes a newer one; a metadata answer with an older epoch than
    the one learnt out of band does not overwrite it."""
    md = ProducerMetadata()
    md.update(0, [], keep_newer_epoch=True)
    for epoch in (0, 1, 2):
        assert not md.update_last_seen_epoch_if_newer(TP, epoch)
    assert md.last_seen_leader_epoch(TP) is None
    md.update(1, [_row(10)], keep_newer_epoch=True)
    assert md.last_seen_leader_epoch(TP) == 10
    assert not md.update_last_seen_epoch_if_newer(TP, 1)
    assert not md.update_last_seen_epoch_if_newer(TP, 10)
    assert md.last_seen_leader_epoch(TP) == 10
    assert md.update_last_seen_epoch_if_newer(TP, 12)
    assert md.last_seen_leader_epoch(TP) == 12
    md.update(2, [_row(12)], keep_newer_epoch=True)
    assert md.last_seen_leader_epoch(TP) == 12
    assert md.update(3, [_row(11)], keep_newer_epoch=True) == {TP}
    assert md.last_seen_leader_epoch(TP) == 12


def test_update_last_seen_epoch_if_newer_rejects_a_negative_epoch():
    """Metadata.updateLastSeenEpochIfNewer: "Invalid leader epoch ... (must be non-negative)";
    nothing changes."""
    md = ProducerMetadata()
    md.update(0, [_row(3)])
    with pytest.raises(ValueError, match="leader_epoch.*>= 0"):
        md.update_last_seen_epoch_if_newer(TP, -1)
    assert md.last_seen_leader_epoch(TP) == 3


def test_reject_old_metadata():
    """MetadataTest.testRejectOldMetadata: the first epoch is taken; an older one with an empty
    ISR is rejected; the same epoch with an empty ISR is taken; an answer without the partition
    keeps the last seen epoch; the partition back with an older epoch is rejected."""
    md = ProducerMetadata()
    assert md.update(10, [_row(100)], keep_newer_epoch=True) == frozenset()
    assert md.last_seen_leader_epoch(TP) == 100
    assert md.update(20, [_row(99, isr=())], keep_newer_epoch=True) == {TP}
    assert md.last_seen_leader_epoch(TP) == 100
    assert md.update(20, [_row(100, isr=())], keep_newer_epoch=True) == frozenset()
    assert md.update(20, [], keep_newer_epoch=True) == frozenset()
    assert md.last_seen_leader_epoch(TP) == 100
    assert md.update(10, [_row(99)], keep_newer_epoch=True) == {TP}
    assert md.last_seen_leader_epoch(TP) == 100


def test_out_of_band_epoch_update():
    """MetadataTest.testOutOfBandEpochUpdate: 99 out of band before any epoch is not kept; 100
    from metadata; 101 out of band (like a fetch answer's); metadata at 100 is then rejected,
    at 101 taken."""
    md = ProducerMetadata()
    assert not md.update_last_seen_epoch_if_newer(TP, 99)
    md.update(10, [_row(100)], keep_newer_epoch=True)
    assert md.last_seen_leader_epoch(TP) == 100
    assert md.update_last_seen_epoch_if_newer(TP, 101)
    assert md.update(20, [_row(100)], keep_newer_epoch=True) == {TP}
    assert md.last_seen_leader_epoch(TP) == 101
    assert md.update(30, [_row(101)], keep_newer_epoch=True) == frozenset()
    assert md.last_seen_leader_epoch(TP) == 101


def test_no_epoch():
    """MetadataTest.testNoEpoch: an answer without a leader epoch leaves none; an out-of-band
    epoch is then not kept either."""
    md = ProducerMetadata()
    assert md.update(10, [_row(-1, leader=0)], keep_newer_epoch=True) == frozenset()
    assert md.last_seen_leader_epoch(TP) is None
    assert not md.update_last_seen_epoch_if_newer(TP, 10)
    assert md.last_seen_leader_epoch(TP) is None


def _producer_fed_metadata(version: str):
    """A producer of a 3-broker cluster that knows t-0's leader, and a function handing it a
    MetadataResponse for t-0 (leader, epoch) as the answer to its request in flight."""
    c = Cluster(3, kafka_version=version, seed=3)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(2000)
    p = c.producer("p", acks="all")
    p.send("t", "before")
    c.run(2000)
    assert p.leaders[("t", 0)] == 1

    def answer(leader: int, epoch: int):
        corr = 10_000 + p.correlation
        p.correlation += 1
        p.metadata.in_flight = corr
        p._on_metadata(MetadataResponse(corr, (1, 2, 3), 1, (
            ("t", 0, E.NONE, leader, epoch, (1, 2, 3), (1, 2, 3)),)))
        return p.leaders[("t", 0)], p.leader_epochs[("t", 0)]

    return p, answer


@pytest.mark.parametrize("version", ["2.2", "2.8", "3.9", "4.3"])
def test_producer_keeps_the_leader_of_the_newer_epoch(version):
    """Metadata.updateLatestMetadata (KAFKA-7738, 2.2+), as MetadataTest.testStaleMetadata at
    the producer: after leader 2 at epoch e+1, a lagging broker's answer (leader 1, epoch e)
    leaves leader 2; the same epoch again and a newer one are taken."""
    p, answer = _producer_fed_metadata(version)
    e = p.leader_epochs[("t", 0)]
    assert answer(2, e + 1) == (2, e + 1)
    assert answer(1, e) == (2, e + 1)
    assert p.metadata.last_seen_leader_epoch(("t", 0)) == e + 1
    assert answer(3, e + 1) == (3, e + 1)
    assert answer(1, e + 2) == (1, e + 2)


def test_before_kafka_7738_the_producer_takes_a_stale_leader():
    """2.1 (before KAFKA-7738's lastSeenLeaderEpochs): every metadata answer replaces the
    cached leader, an older epoch too."""
    assert not rules_for("2.1").clients.producer_metadata_keeps_newer_leader_epoch
    p, answer = _producer_fed_metadata("2.1")
    e = p.leader_epochs[("t", 0)]
    assert answer(2, e + 1) == (2, e + 1)
    assert answer(1, e) == (1, e)


def _producer_asks_a_lagging_broker(version: str):
    """Broker 1 leads t-0 (preferred replica 2 was down); broker 3's UpdateMetadataRequests
    are held, so after a preferred election moves the leadership to 2 its metadata cache still
    names leader 1 at the old epoch. The producer learns leader 2 from brokers 1 and 2, then its
    MetadataRequests reach only broker 3."""
    c = Cluster(3, kafka_version=version, seed=3)
    c.create_topic("t", 1, 3, assignment=[[2, 1, 3]])
    c.run(1000)
    c.crash(2)
    c.run(20000)
    c.start(2)
    c.run_until(lambda cl: len(cl.isr("t", 0)) == 3, 60000)
    p = c.producer("p", acks="all", retry_backoff_ms=100, request_timeout_ms=1000)
    p.send("t", "before")
    c.run(2000)
    old_epoch = p.leader_epochs[("t", 0)]
    assert p.leaders[("t", 0)] == 1
    c.hold("UpdateMetadataRequest", dst=3)
    c.hold("MetadataRequest", src="p", dst=3)
    c.elect("t", [0])
    c.run(2000)
    assert c.leader("t", 0) == 2

    def refresh():
        for _ in range(6):
            if p.metadata.in_flight < 0:
                p._refresh_metadata()
            c.run(1500)

    refresh()
    assert (p.leaders[("t", 0)], p.leader_epochs[("t", 0)]) == (2, old_epoch + 1)
    c.release("MetadataRequest", src="p", dst=3)
    c.hold("MetadataRequest", src="p", dst=1)
    c.hold("MetadataRequest", src="p", dst=2)
    refresh()
    answers = [row for row in c.trace.rows if row[2] == "p" and row[1] == "recv"
               and row[5][0] == "MetadataResponse"]
    assert answers[-1][5][1] == 3   # the last answer came from the lagging broker
    c.release("MetadataRequest", src="p")
    return c, p, old_epoch


def test_a_lagging_broker_does_not_send_the_producer_back_to_the_old_leader():
    """KAFKA-7738 (2.2+) in a cluster (2.8, ZooKeeper): broker 3's stale answer (leader 1, the
    old epoch) is ignored; the producer's next record goes to leader 2 at once."""
    c, p, old_epoch = _producer_asks_a_lagging_broker("2.8")
    assert (p.leaders[("t", 0)], p.leader_epochs[("t", 0)]) == (2, old_epoch + 1)
    r = p.send("t", "after")
    c.run(3000)
    assert r.acked and r.offset == 1 and not r.errors


def test_before_kafka_7738_a_lagging_broker_sends_the_producer_back():
    """2.1: broker 3's stale answer replaces the cached leader; the next record goes to the old
    leader 1 and is answered NOT_LEADER_FOR_PARTITION. Meanwhile the answer to the refresh the
    helper released (from broker 1 or 2) names leader 2 again, and the error does not make the
    producer forget it (Sender.completeBatch @2.1.0 only calls metadata.requestUpdate): the
    retry goes to broker 2 after retry.backoff.ms."""
    c, p, old_epoch = _producer_asks_a_lagging_broker("2.1")
    assert (p.leaders[("t", 0)], p.leader_epochs[("t", 0)]) == (1, old_epoch)
    c.hold("MetadataRequest", src="p", dst=1)
    c.hold("MetadataRequest", src="p", dst=2)
    t0 = c.now
    r = p.send("t", "after")
    c.run(3000)
    assert r.errors[:1] == ["NOT_LEADER_FOR_PARTITION"]
    produce = [(row[0], row[5][1]) for row in c.trace.rows if row[0] >= t0 and row[2] == "p"
               and row[1] == "send" and row[5][0] == "ProduceRequest"]
    assert [dst for _t, dst in produce] == [1, 2]
    assert produce[1][0] - produce[0][0] >= 100   # retry.backoff.ms
    assert r.acked and r.offset == 1


# ------------------------------------------------ LogTest.testDuplicateAppends @1.0.0 (leader)

PID, EPOCH = 1000, 0


def _append(states: ProducerStateManager, first_seq: int, n: int, base_offset: int):
    """A leader append of ``n`` records at ``base_offset``, with its verdict first."""
    verdict, offset = states.check_append((PID, EPOCH, first_seq, first_seq + n - 1))
    if verdict == "append":
        states.update([(base_offset, base_offset + n - 1, PID, EPOCH, first_seq)])
    return verdict, offset


def _duplicate_appends_log():
    """LogTest.testDuplicateAppends's log: six single-record batches (sequences 0-5), then one
    of three records (6-8), each at the next offset."""
    states = ProducerStateManager()
    for seq in range(6):
        assert _append(states, seq, 1, seq) == ("append", -1)
    assert _append(states, 6, 3, 6) == ("append", -1)
    return states


@pytest.mark.parametrize(("version", "older_than_kept"), [
    ("0.11.0", E.OUT_OF_ORDER_SEQUENCE_NUMBER),
    ("1.0", E.DUPLICATE_SEQUENCE_NUMBER),
    ("1.1", E.OUT_OF_ORDER_SEQUENCE_NUMBER),
    ("2.8", E.OUT_OF_ORDER_SEQUENCE_NUMBER),
    ("4.3", E.OUT_OF_ORDER_SEQUENCE_NUMBER),
])
def test_duplicate_appends(version, older_than_kept):
    """LogTest.testDuplicateAppends @1.0.0: a duplicate of the multi-record tail answers its
    offsets; a partial duplicate of the tail is out of order; a duplicate of the batch fourth
    from the tail is found (five batches kept); a duplicate of a batch older than those five is
    a DuplicateSequenceException in 1.0.x (ProducerAppendInfo.isDuplicate, KAFKA-5494) and out
    of order from 1.1 (KAFKA-6683), as in 0.11; a duplicate of a new single-record tail answers
    the original offset."""
    rules = rules_for(version).clients
    states = _duplicate_appends_log()
    check = states.check_append
    before_cache = rules.duplicate_sequence_before_cached_batches
    assert check((PID, EPOCH, 6, 8), "append", before_cache) == ("duplicate", 6)
    assert check((PID, EPOCH, 7, 8), "append", before_cache) == \
        (E.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert check((PID, EPOCH, 2, 2), "append", before_cache) == ("duplicate", 2)
    assert check((PID, EPOCH, 1, 1), "append", before_cache) == (older_than_kept, -1)
    assert _append(states, 9, 1, 9) == ("append", -1)
    assert check((PID, EPOCH, 9, 9), "append", before_cache) == ("duplicate", 9)


def test_duplicate_before_cache_only_for_the_current_epoch_and_not_sequence_zero():
    """ProducerAppendInfo.checkSequence @1.0.0: the epoch is checked first (a new epoch at a
    sequence other than 0 is out of order) and isDuplicate skips a batch whose last sequence
    is 0."""
    states = _duplicate_appends_log()
    assert states.check_append((PID, EPOCH + 1, 1, 1), "append", True) == \
        (E.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert states.check_append((PID, EPOCH, 0, 0), "append", True) == \
        (E.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)


def test_basic_id_mapping():
    """ProducerStateManagerTest.testBasicIdMapping @1.0.0 (at the leader, where a duplicate of
    the last batch is answered with its offset): sequence 5 after 1 is out of order; a new
    epoch from 0 is taken; the old epoch then is fenced (INVALID_PRODUCER_EPOCH here, the
    ProducerFencedException of 1.0)."""
    states = ProducerStateManager()
    assert _append(states, 0, 1, 0) == ("append", -1)
    assert _append(states, 1, 1, 1) == ("append", -1)
    assert states.check_append((PID, EPOCH, 1, 1)) == ("duplicate", 1)
    assert states.check_append((PID, EPOCH, 5, 5)) == (E.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
    assert states.check_append((PID, EPOCH + 1, 0, 0)) == ("append", -1)
    states.update([(3, 3, PID, EPOCH + 1, 0)])
    assert states.check_append((PID, EPOCH, 0, 0))[0] == "INVALID_PRODUCER_EPOCH"


# ------------------------------------------- Sender.failBatch / Sender.run @0.11.0.0 (client)

def _batch_fails_after_the_leader_appended_it(version: str):
    """RF 3 on brokers 1-3: 'a' acknowledged; then the followers' fetches are held, so 'b' is
    appended on the leader but its acks=all produce and its one retry (a duplicate the leader
    recognises) time out: 'b' fails with REQUEST_TIMED_OUT. The fetches go on, then 'c' is
    sent."""
    c = Cluster(3, kafka_version=version, seed=1)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(2000)
    p = c.producer("p", enable_idempotence=True, retries=1, request_timeout_ms=3000,
                   linger_ms=0)
    p.send("t", "a", partition=0)
    c.run(1000)
    c.hold("FetchRequest", src=2)
    c.hold("FetchRequest", src=3)
    b = p.send("t", "b", partition=0)
    assert c.run_until(lambda cl: p.pending() == 0, 20000)
    assert b.status == "failed" and b.errors == ["REQUEST_TIMED_OUT"] * 2
    c.release("FetchRequest", src=2)
    c.release("FetchRequest", src=3)
    c.run(2000)
    r = p.send("t", "c", partition=0)
    assert c.run_until(lambda cl: p.pending() == 0, 20000)
    return c, p, r


def test_0_11_failed_batch_gives_its_sequence_to_the_next_batch():
    """Sender.failBatch / completeBatch @0.11.0.0 (SenderTest.testSequenceNumberIncrement
    @0.11.0.0 counts a sequence only for a completed batch): a failed batch resets nothing, and
    the partition's next batch is drained with the failed one's sequence. The leader had
    appended 'b', so 'c' (one record at sequence 1, like 'b') is a duplicate of it
    (ProducerIdEntry.isDuplicate @0.11.0.0) and is answered with 'b''s offset: 'c' is
    acknowledged but never written. (kafkasim used to start a new epoch here.)"""
    c, p, r = _batch_fails_after_the_leader_appended_it("0.11.0")
    assert r.acked and r.offset == 1 and not r.errors
    assert [v for _, _, v in c.log_records(1, "t")] == ["a", "b"]
    assert [tuple(x)[2:] for x in c.log(1, "t", 0).producer_batches] == [(0, 0, 0), (0, 0, 1)]


@pytest.mark.parametrize("version", ["1.0", "2.4"])
def test_from_1_0_a_batch_failed_on_its_last_retry_keeps_its_sequence_used(version):
    """Sender.failBatch @1.0.0 / TransactionManager.handleFailedBatch @2.4.0 (KAFKA-5494):
    sequences are counted at the drain, and a batch that failed on its last retry
    (adjustSequenceNumbers false: the broker may have it) gives nothing back, so 'c' takes the
    next sequence and is appended."""
    c, p, r = _batch_fails_after_the_leader_appended_it(version)
    assert r.acked and r.offset == 2
    assert [v for _, _, v in c.log_records(1, "t")] == ["a", "b", "c"]


@pytest.mark.parametrize(("version", "reset"), [("0.11.0", True), ("1.0", False)])
def test_expired_batch_in_retry_resets_the_producer_id_at_0_11(version, reset):
    """Sender.run @0.11.0.0: a batch that expires in the accumulator after it was sent
    (inRetry) makes the sender reset the producer id (needsTransactionStateReset ->
    TransactionManager.resetProducerId), so the next batch goes under a new id from sequence
    0. From 1.0 (KAFKA-5494) its sequence is left unresolved instead and the id is kept while
    nothing else needs it."""
    c = Cluster(3, kafka_version=version, seed=1)
    c.create_topic("t", 1, 1, assignment=[[1]])
    c.run(2000)
    p = c.producer("p", enable_idempotence=True, request_timeout_ms=3000, linger_ms=0)
    p.send("t", "a", partition=0)
    c.run(1000)
    pid = p.producer_id
    c.hold("ProduceRequest", src="p")
    r = p.send("t", "b", partition=0)
    c.run(10)
    c.crash(1)
    assert c.run_until(lambda cl: p.pending() == 0, 60000)
    assert r.status == "failed"
    assert (p.producer_id != pid) is reset
    if reset:
        assert p.transaction_manager.producer_id_and_epoch == (p.producer_id, 0)
        assert p.transaction_manager.sequence_number(("t", 0)) == 0


# ------------------------------------------ MetadataTest.testUpdatePartitionLeadership (KIP-951)

def test_update_partition_leadership():
    """MetadataTest.testUpdatePartitionLeadership @3.9.0-rc3, through the producer's
    Sender.update_partition_leadership (Metadata.updatePartitionLeadership from a KIP-951
    ProduceResponse): no leader or epoch, a leader whose node the answer lacks, a partition the
    metadata does not know, and a stale epoch are all ignored; a newer leader and epoch are
    taken and become the last seen epoch, the other partitions unchanged."""
    from kafkasim.core.messages import ProduceResponse
    c = Cluster(3, kafka_version="3.9", seed=3)
    c.create_topic("t", 2, 3, assignment=[[1, 2, 3], [2, 3, 1]])
    c.run(2000)
    p = c.producer("p", acks="all")
    p.send("t", "a", partition=0)
    p.send("t", "b", partition=1)
    c.run(2000)
    tp0, tp1 = ("t", 0), ("t", 1)
    before = dict(p.leaders), dict(p.leader_epochs)
    e0 = p.leader_epochs[tp0]
    ignored = ProduceResponse(99, (), current_leaders=(
        ("t", 999, -1, -1),                # no leader information
        ("t", 1, 99999, 99999),            # the leader's node is not in the answer
        ("missing", 1, 3, 99999),          # a partition the metadata does not know
        ("t", 0, 1, e0 - 1),               # a stale epoch
    ), node_endpoints=(1, 2, 3))
    p.sender.update_partition_leadership(ignored, c.now)
    assert (dict(p.leaders), dict(p.leader_epochs)) == before
    assert ("missing", 1) not in p.leaders
    newer = ProduceResponse(100, (), current_leaders=(("t", 0, 2, e0 + 1),),
                            node_endpoints=(2,))
    p.sender.update_partition_leadership(newer, c.now)
    assert (p.leaders[tp0], p.leader_epochs[tp0]) == (2, e0 + 1)
    assert p.metadata.last_seen_leader_epoch(tp0) == e0 + 1
    assert (p.leaders[tp1], p.leader_epochs[tp1]) == (before[0][tp1], before[1][tp1])
