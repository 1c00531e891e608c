"""Idempotent producer (KIP-98): a retried batch already in the log is not appended twice."""

from __future__ import annotations

import pytest

from kafkasim.runtime.cluster import Cluster

# the ZooKeeper-era release these tests were written against (Kafka 4.x is KRaft only;
# its behaviour is tested in tests/test_kraft_*.py)
ZK = "3.7"


def run_with_lost_answer(version: str, **producer) -> tuple[Cluster, object]:
    c = Cluster(3, seed=2, kafka_version=version)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer(acks="all", request_timeout_ms=1000, retries=10, **producer)
    c.hold(type="ProduceResponse")  # the broker appends, but the answer never arrives
    r = p.send("t", "once", partition=0)
    c.run(1500)                     # the client times out and retries
    c.release()
    p.flush()
    c.run(500)
    return c, r


def test_idempotent_producer_is_the_default_since_3_2_and_drops_the_duplicate():
    c, r = run_with_lost_answer("3.7")
    assert r.acked and r.offset == 0 and r.attempts == 2
    for b in (1, 2, 3):
        assert [v for _, _, v in c.log_records(b, "t")] == ["once"]
    dup = [row for row in c.trace.rows if row[1] == "produce_duplicate"]
    assert len(dup) == 1 and "already at offset 0" in dup[0][5]


@pytest.mark.parametrize("version, kw", [("3.7", {"enable_idempotence": False}), ("2.8", {})])
def test_without_idempotence_a_retry_duplicates_the_record(version, kw):
    c, r = run_with_lost_answer(version, **kw)
    assert r.acked and r.offset == 1
    assert [v for _, _, v in c.log_records(1, "t")] == ["once", "once"]


def test_a_new_leader_still_recognises_the_duplicate():
    c = Cluster(3, seed=4, kafka_version=ZK)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer(acks="all", request_timeout_ms=1000)
    c.hold(type="ProduceResponse", src=1)
    r = p.send("t", "x", partition=0)
    c.run_until(lambda cl: cl.log(2, "t", 0).log_end_offset == 1 and
                cl.log(3, "t", 0).log_end_offset == 1, 5000)
    c.crash(1)                      # followers hold the batch; the retry goes to the new leader
    assert p.flush(60000)
    leader = c.leader("t")
    assert leader in (2, 3) and r.acked and r.offset == 0
    assert [v for _, _, v in c.log_records(leader, "t")] == ["x"]


def crash_leader(c: Cluster) -> None:
    c.crash(c.leader("t", 0))


def test_producer_recovers_after_the_leader_dies_with_batches_in_flight():
    """Regression: retried batches must keep sequence order, and a retry of batches the new
    leader already copied is a duplicate, or the producer loops on OUT_OF_ORDER_SEQUENCE_NUMBER."""
    from kafkasim.runtime.workload import RateWorkload

    c = Cluster(3, seed=0, config={"zookeeper.session.timeout.ms": 6000}, kafka_version=ZK)
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all")
    RateWorkload(c, p, "t", rate=20, duration_ms=5000)
    c.at(2000, crash_leader)
    c.run(60000)
    assert p.pending() == 0 and len(p.acked()) == 100
    assert not any("OUT_OF_ORDER_SEQUENCE_NUMBER" in r.errors for r in p.results.values())
    leader = c.leader("t")
    values = [v for _, _, v in c.log_records(leader, "t")]
    assert len(values) == len(set(values)) == 100  # no duplicates, nothing lost


# -- the batch header travels with the batch (KIP-98: RecordBatch producerId/Epoch/baseSequence) --

def test_produce_request_carries_the_batch_header_and_the_log_keeps_it():
    """The leader checks the header the ProduceRequest carries; every replica's log keeps it per
    batch (Kafka's DefaultRecordBatch header), fetches hand it on to the followers."""
    from kafkasim.core.messages import ProduceRequest

    c = Cluster(3, seed=1, kafka_version=ZK)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all", linger_ms=0)
    c.hold(type="ProduceRequest", count=1)
    p.send_many("t", ["a", "b", "c"], partition=0)
    c.run(20)
    seen = [env.msg for env in c.transport.network.held if isinstance(env.msg, ProduceRequest)]
    assert len(seen) == 1
    (topic, part, ids, _sizes, pid, pepoch, seq), = seen[0].partitions
    assert (topic, part, len(ids), pid, pepoch, seq) == ("t", 0, 3, p.producer_id, 0, 0)
    c.release()
    p.send_many("t", ["d", "e"], partition=0)
    assert p.flush()
    c.run(500)
    for b in (1, 2, 3):
        batches = [tuple(x) for x in c.log(b, "t", 0).producer_batches]
        # (base offset, last offset, producer id, epoch, base sequence): the leader's batches,
        # whole on every replica
        assert batches == [(0, 2, p.producer_id, 0, 0), (3, 4, p.producer_id, 0, 3)]


def test_non_idempotent_batches_carry_no_producer_header():
    c = Cluster(3, seed=1, kafka_version="2.8")
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all")
    p.send_many("t", ["a", "b"], partition=0)
    assert p.flush()
    c.run(500)
    assert all(c.log(b, "t", 0).producer_batches == [] for b in (1, 2, 3))


def test_reads_hand_over_whole_batches_and_truncation_clips_headers():
    """A read cut by its byte limit ends at a batch boundary, as Kafka's (LogSegment.read slices
    bytes, the fetching side keeps complete batches): a batch cut in two is left for the next
    read, unless it is the read's first, which comes whole (minOneMessage). So a follower holds
    the leader's batches as they are, and its producer state is the leader's
    (UnifiedLog.rebuildProducerState gives the same). A truncation or a new log start inside a
    batch clips its header, the sequence following the offset."""
    from kafkasim.core import producer_state
    from kafkasim.core.log import Log

    leader = Log("t", 0)
    leader.append_as_leader([1, 2, 3], [10] * 3, 0, 0, 7, 0, 0)      # seq 0-2 at 0-2
    leader.append_as_leader([4], [10], 0, 0)                         # not idempotent
    leader.append_as_leader([5, 6, 7], [10] * 3, 0, 0, 7, 0, 3)      # seq 3-5 at 4-6
    follower = Log("t", 0)
    reads = []
    while follower.log_end_offset < leader.log_end_offset:
        chunk = leader.read(follower.log_end_offset, leader.log_end_offset, 20)  # 2 records
        reads.append((chunk.base_offset, len(chunk.ids)))
        follower.append_as_follower(chunk)
        producer_state.update(follower.producer_states, chunk.producer_batches)
    # the first batch whole (3 records over 20 bytes); then record 3 alone, not the first
    # record of the next batch; then that batch whole
    assert reads == [(0, 3), (3, 1), (4, 3)]
    assert [tuple(b) for b in follower.producer_batches] == [(0, 2, 7, 0, 0), (4, 6, 7, 0, 3)]
    assert producer_state.rebuild(follower) == follower.producer_states == \
        producer_state.rebuild(leader)
    entry = follower.producer_states[7]
    assert [(b.first_seq, b.last_seq, b.first_offset) for b in entry.batches] == \
        [(0, 2, 0), (3, 5, 4)]
    # a retry of seq 3-5 is a duplicate at offset 4 on the follower turned leader
    assert producer_state.check_append(follower.producer_states, (7, 0, 3, 5)) == \
        ("duplicate", 4)
    follower.truncate_to(5)
    assert [tuple(b) for b in follower.producer_batches][-1] == (4, 4, 7, 0, 3)
    assert producer_state.rebuild(follower)[7].last_seq == 3
    follower.high_watermark = 5
    follower.maybe_increment_log_start_offset(1)
    assert [tuple(b) for b in follower.producer_batches][0] == (1, 2, 7, 0, 1)
    follower.truncate_fully_and_start_at(9)
    assert follower.producer_batches == [] and producer_state.rebuild(follower) == {}


def test_a_read_cut_inside_a_batch_stops_at_its_base():
    """The byte limit falls inside the second batch of a read: the read stops before it (the
    batch is not handed over in part), and the next read, starting at its base, takes it whole
    even over the limit."""
    from kafkasim.core.log import Log

    log = Log("t", 0)
    log.append_as_leader([1, 2], [10] * 2, 0, 0, 7, 0, 0)        # seq 0-1 at 0-1
    log.append_as_leader([3, 4, 5, 6], [10] * 4, 0, 0, 7, 0, 2)  # seq 2-5 at 2-5
    first = log.read(0, 6, 35)
    assert (first.base_offset, len(first.ids)) == (0, 2)
    assert [tuple(b) for b in first.producer_batches] == [(0, 1, 7, 0, 0)]
    second = log.read(2, 6, 15)
    assert (second.base_offset, len(second.ids)) == (2, 4)
    assert [tuple(b) for b in second.producer_batches] == [(2, 5, 7, 0, 2)]


@pytest.mark.parametrize("fetch_max_bytes", [1_048_576, 150])
def test_followers_keep_the_leaders_producer_state_fetch_by_fetch(fetch_max_bytes):
    """Broker.on_append updates a follower's producer state from the headers each fetch brought
    (one whole batch, or several, as many as replica.fetch.max.bytes lets through): it must stay
    what the leader holds and what a rebuild from the follower's own log gives
    (ProducerStateManager.update / UnifiedLog.rebuildProducerState)."""
    from kafkasim.core import producer_state
    from kafkasim.runtime.workload import RateWorkload

    c = Cluster(3, seed=4, kafka_version=ZK,
                config={"replica.fetch.max.bytes": fetch_max_bytes})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    producers = [c.producer(acks="all", linger_ms=linger) for linger in (5, 0)]
    for p in producers:
        RateWorkload(c, p, "t", rate=700, duration_ms=300, partition=0)
    c.run(3000)   # the small fetches catch up long after the produce stops
    leader = c.brokers[1].logs[("t", 0)]
    assert len(leader.producer_states) == 2 and len(leader.producer_batches) > 20
    for b in (2, 3):
        log = c.brokers[b].logs[("t", 0)]
        assert log.log_end_offset == leader.log_end_offset
        assert log.producer_states == leader.producer_states == producer_state.rebuild(log)


# -- a leader that comes back with a shorter log: OUT_OF_ORDER_SEQUENCE_NUMBER --------------------

def _leader_loses_acked_batch(version: str, **producer_config):
    """RF 1 on broker 1: batch a,b flushed, batch c,d acknowledged but unflushed; a power loss
    takes c,d away, so broker 1 comes back with the producer's last sequence at 1 while the
    producer's next batch starts at 4: a gap the broker answers OUT_OF_ORDER_SEQUENCE_NUMBER."""
    c = Cluster(3, seed=1, kafka_version=version)
    c.create_topic("t", 1, 1, assignment=[[1]])
    c.run(2000)
    p = c.producer("p", acks="all", linger_ms=0, **producer_config)
    p.send_many("t", ["a", "b"], partition=0)
    assert p.flush()
    c.log(1, "t", 0).flush()
    p.send_many("t", ["c", "d"], partition=0)
    assert p.flush()
    c.power_loss(1)
    c.run(100)
    c.start(1, retry=True)
    assert c.run_until(lambda cl: cl.brokers[1].state == "running" and cl.leader("t") == 1,
                       60000)
    return c, p


def test_bump_epoch_when_out_of_order_sequence_received():
    """KIP-360 (2.5+), TransactionManager.canRetry: OUT_OF_ORDER_SEQUENCE_NUMBER for the batch
    that is the next sequence (no earlier batch unanswered) is a real gap: an epoch bump is
    requested for the partition (requestEpochBumpForPartition) and the batch retried;
    bumpIdempotentProducerEpoch gives it the new epoch and sequence 0, which the leader takes
    (SenderTest.testBumpEpochWhenOutOfOrderSequenceReceived, trunk). Before, kafkasim retried
    the same sequence until delivery.timeout.ms (120 s)."""
    c, p = _leader_loses_acked_batch("3.7")
    pid, epoch = p.producer_id, p.transaction_manager.producer_epoch
    t0 = c.now
    r = p.send("t", "e", partition=0)
    assert c.run_until(lambda cl: p.pending() == 0, 10000)
    assert r.status == "acked" and r.errors == ["OUT_OF_ORDER_SEQUENCE_NUMBER"]
    assert c.now - t0 < 1000                                  # one retry.backoff.ms, not 120 s
    assert (p.producer_id, p.transaction_manager.producer_epoch) == (pid, epoch + 1)
    batches = [tuple(x) for x in c.log(1, "t", 0).producer_batches]
    assert batches[-1][2:] == (pid, epoch + 1, 0)           # the new epoch, from sequence 0
    assert [v for _, _, v in c.log_records(1, "t")] == ["a", "b", "e"]


@pytest.mark.parametrize("version", ["2.4", "1.0", "0.11.0"])
def test_must_not_retry_out_of_order_sequence_for_next_batch(version):
    """Before KIP-360 an OutOfOrderSequenceException for the next sequence is not retried
    (Sender.canRetry: not a RetriableException; TransactionManager.canRetry from 1.0 retries it
    only for a batch that is not the next sequence): the batch fails with it, and the idempotent
    producer resets its producer id (Sender.failBatch 0.11/1.x, TransactionManager
    .handleFailedBatch 2.0-2.4: resetProducerId), so the next batch, under a new id from
    sequence 0, is accepted (SenderTest.testMustNotRetryOutOfOrderSequenceForNextBatch @2.4.0).
    Before, kafkasim retried it until the delivery timeout."""
    c, p = _leader_loses_acked_batch(version, enable_idempotence=True)
    pid = p.producer_id
    r = p.send("t", "e", partition=0)
    assert c.run_until(lambda cl: p.pending() == 0, 10000)
    assert r.status == "failed" and r.errors == ["OUT_OF_ORDER_SEQUENCE_NUMBER"]
    assert p.producer_id != pid and p.transaction_manager.producer_epoch == 0
    r2 = p.send("t", "f", partition=0)
    assert c.run_until(lambda cl: p.pending() == 0, 10000)
    assert r2.status == "acked" and not r2.errors
    assert [v for _, _, v in c.log_records(1, "t")] == ["a", "b", "f"]
    assert tuple(c.log(1, "t", 0).producer_batches[-1])[2:] == (p.producer_id, 0, 0)


def _leader_forgets_the_producer(version: str, **producer_config):
    """RF 1 on broker 1: the producer's batch a,b acknowledged but never flushed; a power loss
    takes it away, so broker 1 comes back with no state for the producer, whose next batch
    starts at sequence 2."""
    c = Cluster(3, seed=1, kafka_version=version)
    c.create_topic("t", 1, 1, assignment=[[1]])
    c.run(2000)
    p = c.producer("p", acks="all", linger_ms=0, **producer_config)
    p.send_many("t", ["a", "b"], partition=0)
    assert p.flush()
    c.power_loss(1)
    c.run(100)
    c.start(1, retry=True)
    assert c.run_until(lambda cl: cl.brokers[1].state == "running" and cl.leader("t") == 1,
                       60000)
    assert c.log(1, "t", 0).producer_states.last_entry(p.producer_id) is None
    return c, p


@pytest.mark.parametrize("version, error", [
    ("3.7", None), ("2.5", None), ("2.4", "UNKNOWN_PRODUCER_ID"), ("1.0", "UNKNOWN_PRODUCER_ID"),
    ("0.11.0", "OUT_OF_ORDER_SEQUENCE_NUMBER"),
])
def test_a_batch_of_a_producer_the_leader_does_not_know(version, error):
    """ProducerAppendInfo.checkSequence for a producer the leader has no state for, at sequence
    2: appended from 2.5 (KIP-360); 1.0-2.4 answer UNKNOWN_PRODUCER_ID with the log start
    offset (0), which is not past the producer's last acknowledged offset (1), so
    TransactionManager.canRetry @2.4.0 does not retry it: the batch fails and the producer
    resets its producer id (handleFailedBatch: an OutOfOrderSequenceException); 0.11 answers
    OUT_OF_ORDER_SEQUENCE_NUMBER, never retried, with the same reset (the batch's first send may
    meet a leader the producer's metadata does not know yet). Under the new id the next batch
    starts at sequence 0 and is appended."""
    c, p = _leader_forgets_the_producer(version, enable_idempotence=True)
    pid = p.producer_id
    r = p.send("t", "c", partition=0)
    assert c.run_until(lambda cl: p.pending() == 0, 10000)
    if error is None:
        assert r.status == "acked" and not r.errors and p.producer_id == pid
        assert [v for _, _, v in c.log_records(1, "t")] == ["c"]
        return
    assert r.status == "failed" and r.errors[-1] == error
    assert p.producer_id != pid and p.transaction_manager.producer_epoch == 0
    r2 = p.send("t", "d", partition=0)
    assert c.run_until(lambda cl: p.pending() == 0, 10000)
    assert r2.status == "acked" and not r2.errors
    assert [v for _, _, v in c.log_records(1, "t")] == ["d"]
    assert tuple(c.log(1, "t", 0).producer_batches[-1])[2:] == (p.producer_id, 0, 0)


def test_new_batches_do_not_overtake_the_old_epoch_after_a_bump():
    """Fault schedule kraft:110 (tests/test_fault_properties.py): batches fail, the producer
    bumps its epoch, and batches of the old epoch are still on the wire. Before the drain held
    new batches back (shouldStopDrainBatchesForPartition, 2.5+), the new epoch's batches were
    written first and 163 records of the old epoch failed INVALID_PRODUCER_EPOCH."""
    import test_fault_properties as fp

    made = []

    class Recorded(fp.Cluster):
        def __init__(self, *args, **kw):
            super().__init__(*args, **kw)
            made.append(self)

    real = fp.Cluster
    fp.Cluster = Recorded
    try:
        outcome = fp.run_schedule(fp.generate(110, "kraft"), every_event=False)
    finally:
        fp.Cluster = real
    failed = [row[5][2] for row in made[-1].trace.rows
              if row[1] == "produce_result" and row[5][1] == "failed"]
    assert outcome.ok and failed and "INVALID_PRODUCER_EPOCH" not in failed, failed
