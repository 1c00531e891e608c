"""KRaft metadata snapshots (KIP-630): ``kafkasim.control.kraft.raft_snapshots``.

Ports cases of raft/src/test/java/org/apache/kafka/raft/KafkaRaftClientSnapshotTest.java and
metadata/src/test/java/org/apache/kafka/image/publisher/SnapshotGeneratorTest.java (apache/kafka
3.9.0-rc3), with the rules of KafkaRaftClient.java, KafkaMetadataLog.scala, ReplicatedLog.java
and SnapshotGenerator.java at that tag. Then the simulated cluster: snapshot files by Kafka's
triggers, a restart that loads the latest snapshot, the log start offset moved by retention
and a far-behind voter brought back with FetchSnapshot.

Adaptation: the client harness is tests/test_raft_client_kafka.py's (``build``, ``Ctx``); the
``withKip853Rpc`` parameter is kraft.version 0 (no directory ids). A snapshot's content is
the records a test appends (log entries given to ``append`` are taken as their records; a
generated snapshot holds the image, tests/test_snapshot_image_kafka.py), its size an
estimate (raft_snapshots.record_size_in_bytes); ``advanceLocalLeaderHighWatermarkToLogEndOffset``
is a Fetch from the other voter at the log end. SnapshotGeneratorTest's MockEmitter is
``MockEmitter`` below; its asynchronous emit (``setReady``) is synchronous in kafkasim, so
testCreateSnapshot's "ignored because other images are queued" publish is not ported.
"""

from __future__ import annotations

import os

import pytest
from test_raft_client_kafka import LOCAL, V2, V3, Ctx, become_leader, build, fetch_request

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft import raft_snapshots as RS
from kafkasim.control.kraft.offset_control import OffsetAndEpoch
from kafkasim.core.errors import IllegalArgumentException
from kafkasim.settings.versions import rules_for


def _advance_hw_to_log_end(c, ctx, epoch):
    """RaftClientTestContext.advanceLocalLeaderHighWatermarkToLogEndOffset."""
    ctx.deliver(c, V2, fetch_request(epoch, V2, c.log.end_offset, c.log.last_fetched_epoch))
    ctx.take(M.RaftFetchResponse)
    assert c.high_watermark == c.log.end_offset


def _leader_with_snapshot(*, append=("a", "b", "c"), **kw):
    """becomeLeader, append ``append``, advance the HW to the log end, snapshot there."""
    c, ctx = build(**kw)
    epoch = become_leader(c, ctx)
    c.prepare_append(ctx, epoch, list(append))
    ctx.advance(c, 1)
    _advance_hw_to_log_end(c, ctx, epoch)
    snapshot_id = OffsetAndEpoch(c.log.end_offset, epoch)
    with c.create_snapshot(snapshot_id, 0) as snapshot:
        assert snapshot.snapshot_id == snapshot_id
        snapshot.freeze()
    return c, ctx, epoch, snapshot_id


# --- KafkaRaftClientSnapshotTest -----------------------------------------------------------------
def test_latest_snapshot_id():
    """KafkaRaftClientSnapshotTest.testLatestSnapshotId@3.9.0-rc3 (withEmptySnapshot: a frozen
    snapshot of the log's first three records)."""
    snapshot_id = OffsetAndEpoch(3, 1)
    c, ctx = build(log=[(1, ["a", "b", "c"]), (1, ["d", "e", "f"])], elected=(2, V2))
    c.log.high_watermark = 3
    c.log.create_new_snapshot(snapshot_id).freeze()
    assert c.latest_snapshot_id() == snapshot_id


def test_latest_snapshot_id_missing():
    """KafkaRaftClientSnapshotTest.testLatestSnapshotIdMissing@3.9.0-rc3."""
    c, _ctx = build(log=[(1, ["a", "b", "c"]), (1, ["d", "e", "f"])], elected=(2, V2))
    assert c.latest_snapshot_id() is None


def test_fetch_request_offset_less_than_log_start():
    """KafkaRaftClientSnapshotTest.testFetchRequestOffsetLessThanLogStart@3.9.0-rc3."""
    c, ctx, epoch, snapshot_id = _leader_with_snapshot()
    assert c.log.delete_before_snapshot(snapshot_id)
    assert c.log.start_offset == snapshot_id.offset
    ctx.deliver(c, V2, fetch_request(epoch, V2, snapshot_id.offset - 2, snapshot_id.epoch))
    _, r = ctx.one(M.RaftFetchResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (M.NONE, epoch, LOCAL)
    assert (r.snapshot_epoch, r.snapshot_end_offset) == (snapshot_id.epoch, snapshot_id.offset)
    assert r.records == ()


@pytest.mark.parametrize("since_3_9", [True, False])
def test_fetch_request_offset_at_zero(since_3_9):
    """KafkaRaftClientSnapshotTest.testFetchRequestOffsetAtZero@3.9.0-rc3: a Fetch from offset 0
    gets the snapshot id although the log still starts at 0 (KAFKA-16532); before 3.9 it gets
    the log."""
    c, ctx, epoch, snapshot_id = _leader_with_snapshot(fetch_snapshot_for_empty_log=since_3_9)
    ctx.deliver(c, V2, fetch_request(epoch, V2, 0, 0))
    _, r = ctx.one(M.RaftFetchResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (M.NONE, epoch, LOCAL)
    if since_3_9:
        assert (r.snapshot_epoch, r.snapshot_end_offset) == tuple(reversed(snapshot_id))
    else:
        assert (r.snapshot_epoch, r.snapshot_end_offset) == (-1, -1)
        assert len(r.records) == c.log.end_offset


def test_leader_immediately_sends_snapshot_id():
    """KafkaRaftClientSnapshotTest.testLeaderImmediatelySendsSnapshotId@3.9.0-rc3: a Fetch of an
    epoch older than the oldest snapshot's is answered at once (not parked) with its id."""
    snapshot_id = OffsetAndEpoch(3, 4)
    c, ctx = build(unknown=4, log=[(4, ["a", "b", "c"]), (4, ["d", "e", "f"]),
                                   (4, ["g", "h", "i"])])
    c.log.high_watermark = 9
    c.log.create_new_snapshot(snapshot_id).freeze()      # withEmptySnapshot
    assert c.log.delete_before_snapshot(snapshot_id)
    epoch = become_leader(c, ctx)
    ctx.deliver(c, V2, fetch_request(epoch, V2, 6, 2, max_wait=500))
    _, r = ctx.one(M.RaftFetchResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (M.NONE, epoch, LOCAL)
    assert (r.snapshot_epoch, r.snapshot_end_offset) == (4, 3)


def test_fetch_request_truncate_to_log_start():
    """KafkaRaftClientSnapshotTest.testFetchRequestTruncateToLogStart@3.9.0-rc3: a follower in
    an epoch the leader's log skipped diverges at the oldest snapshot."""
    oldest = OffsetAndEpoch(3, 2)
    c, ctx = build(voters=(LOCAL, V2, V3), log=[(2, ["a", "b", "c"]), (4, ["d", "e", "f"])])
    epoch = become_leader(c, ctx)
    assert epoch == 5
    _advance_hw_to_log_end(c, ctx, epoch)
    with c.create_snapshot(oldest, 0) as snapshot:
        snapshot.freeze()
    ctx.deliver(c, V2, fetch_request(epoch, V2, oldest.offset + 1, oldest.epoch + 1))
    _, r = ctx.one(M.RaftFetchResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (M.NONE, epoch, LOCAL)
    assert (r.diverging_epoch, r.diverging_end_offset) == (oldest.epoch, oldest.offset)


def test_fetch_request_with_last_fetched_epoch_less_than_oldest_snapshot():
    """KafkaRaftClientSnapshotTest.testFetchRequestWithLastFetchedEpochLessThanOldestSnapshot
    @3.9.0-rc3."""
    oldest = OffsetAndEpoch(3, 2)
    c, ctx = build(voters=(LOCAL, V2, V3), log=[(2, ["a", "b", "c"]), (2, ["d", "e", "f"]),
                                                (4, ["g", "h", "i"])])
    epoch = become_leader(c, ctx)
    _advance_hw_to_log_end(c, ctx, epoch)
    with c.create_snapshot(oldest, 0) as snapshot:
        snapshot.freeze()
    ctx.deliver(c, V2, fetch_request(epoch, V2, c.log.end_offset, oldest.epoch - 1))
    _, r = ctx.one(M.RaftFetchResponse)
    assert (r.error, r.leader_epoch, r.leader_id) == (M.NONE, epoch, LOCAL)
    assert (r.snapshot_epoch, r.snapshot_end_offset) == (oldest.epoch, oldest.offset)


def test_fetch_snapshot_response_to_not_follower():
    """KafkaRaftClientSnapshotTest.testFetchSnapshotResponseToNotFollower@3.9.0-rc3 (the shape of
    it): a FetchSnapshot answer after the follower moved to a new epoch is not the expected
    response and changes nothing."""
    snapshot_id = OffsetAndEpoch(100, 1)
    c, ctx, sreq = _follower_fetching_snapshot(snapshot_id)
    ctx.advance(c, 60_000)         # fetch timeout: the voter starts an election (epoch 3)
    assert c.epoch == 3
    c.handle(ctx, V2, M.FetchSnapshotResponse(sreq.correlation_id, M.NONE, M.NONE, V2, 2,
                                              100, 1, 10, 0, ("foo",)))
    assert c.latest_snapshot_id() is None and c.log.start_offset == 0


def test_fetch_request_at_log_start_offset_with_invalid_epoch():
    """KafkaRaftClientSnapshotTest.testFetchRequestAtLogStartOffsetWithInvalidEpoch@3.9.0-rc3
    (the shape of it): at the log start offset in an epoch other than the oldest snapshot's,
    the answer is the latest snapshot id."""
    c, ctx, epoch, snapshot_id = _leader_with_snapshot()
    c.log.delete_before_snapshot(snapshot_id)
    ctx.deliver(c, V2, fetch_request(epoch, V2, snapshot_id.offset, snapshot_id.epoch - 1))
    _, r = ctx.one(M.RaftFetchResponse)
    assert (r.snapshot_epoch, r.snapshot_end_offset) == (snapshot_id.epoch, snapshot_id.offset)


def test_fetch_request_at_log_start_offset_with_valid_epoch():
    """KafkaRaftClientSnapshotTest.testFetchRequestAtLogStartOffsetWithValidEpoch@3.9.0-rc3 (the
    shape of it): at the log start offset in the snapshot's epoch the fetch is valid."""
    c, ctx, epoch, snapshot_id = _leader_with_snapshot()
    c.log.delete_before_snapshot(snapshot_id)
    ctx.deliver(c, V2, fetch_request(epoch, V2, snapshot_id.offset, snapshot_id.epoch))
    _, r = ctx.one(M.RaftFetchResponse)
    assert (r.error, r.snapshot_epoch, r.diverging_epoch) == (M.NONE, -1, -1)


def test_fetch_snapshot_request_missing_snapshot():
    """KafkaRaftClientSnapshotTest.testFetchSnapshotRequestMissingSnapshot@3.9.0-rc3."""
    c, ctx = build(unknown=3)
    epoch = become_leader(c, ctx)
    ctx.deliver(c, V2, M.FetchSnapshotRequest(7, V2, epoch, 0, 0, 0, 2**31 - 1))
    _, r = ctx.one(M.FetchSnapshotResponse)
    assert (r.error, r.partition_error) == (M.NONE, RS.SNAPSHOT_NOT_FOUND)


def test_fetch_snapshot_request_as_leader():
    """KafkaRaftClientSnapshotTest.testFetchSnapshotRequestAsLeader@3.9.0-rc3."""
    snapshot_id = OffsetAndEpoch(1, 1)
    c, ctx = build(log=[(1, ["a"])])
    epoch = become_leader(c, ctx)
    _advance_hw_to_log_end(c, ctx, epoch)
    with c.create_snapshot(snapshot_id, 0) as snapshot:
        assert snapshot.snapshot_id == snapshot_id
        snapshot.append(["foo", "bar"])
        snapshot.freeze()
    raw = c.log.read_snapshot(snapshot_id)
    ctx.deliver(c, V2, M.FetchSnapshotRequest(7, V2, epoch, 1, 1, 0, 2**31 - 1))
    _, r = ctx.one(M.FetchSnapshotResponse)
    assert (r.error, r.partition_error) == (M.NONE, M.NONE)
    assert (r.size, r.position) == (raw.size_in_bytes, 0)
    assert r.records == ("foo", "bar") == raw.entries


def test_partial_fetch_snapshot_request_as_leader():
    """KafkaRaftClientSnapshotTest.testPartialFetchSnapshotRequestAsLeader@3.9.0-rc3: at most
    max_bytes per answer (cut at records here), the next from the position after it."""
    snapshot_id = OffsetAndEpoch(1, 1)
    c, ctx = build(log=[(1, ["a"])])
    epoch = become_leader(c, ctx)
    _advance_hw_to_log_end(c, ctx, epoch)
    with c.create_snapshot(snapshot_id, 0) as snapshot:
        snapshot.append(["foo", "bar"])
        snapshot.freeze()
    size = c.log.read_snapshot(snapshot_id).size_in_bytes
    first = RS.record_size_in_bytes("foo")
    ctx.deliver(c, V2, M.FetchSnapshotRequest(7, V2, epoch, 1, 1, 0, first))
    _, r = ctx.one(M.FetchSnapshotResponse)
    assert (r.size, r.position, r.records) == (size, 0, ("foo",))
    ctx.deliver(c, V2, M.FetchSnapshotRequest(8, V2, epoch, 1, 1, first, first))
    _, r = ctx.one(M.FetchSnapshotResponse)
    assert (r.size, r.position, r.records) == (size, first, ("bar",))


def test_fetch_snapshot_request_with_invalid_position():
    """KafkaRaftClientSnapshotTest.testFetchSnapshotRequestWithInvalidPosition@3.9.0-rc3."""
    snapshot_id = OffsetAndEpoch(1, 1)
    c, ctx = build(log=[(1, ["a"])])
    epoch = become_leader(c, ctx)
    _advance_hw_to_log_end(c, ctx, epoch)
    with c.create_snapshot(snapshot_id, 0) as snapshot:
        snapshot.append(["foo", "bar"])
        snapshot.freeze()
    size = c.log.read_snapshot(snapshot_id).size_in_bytes
    for position in (-1, size):
        ctx.deliver(c, V2, M.FetchSnapshotRequest(7, V2, epoch, 1, 1, position, 2**31 - 1))
        _, r = ctx.one(M.FetchSnapshotResponse)
        assert r.partition_error == RS.POSITION_OUT_OF_RANGE
        assert (r.leader_epoch, r.leader_id) == (epoch, LOCAL)


def test_fetch_snapshot_request_as_follower():
    """KafkaRaftClientSnapshotTest.testFetchSnapshotRequestAsFollower@3.9.0-rc3."""
    c, ctx = build(elected=(2, V2))
    ctx.deliver(c, V2, M.FetchSnapshotRequest(7, V2, 2, 0, 0, 0, 2**31 - 1))
    _, r = ctx.one(M.FetchSnapshotResponse)
    assert (r.partition_error, r.leader_epoch, r.leader_id) == (M.NOT_LEADER_OR_FOLLOWER, 2, V2)


@pytest.mark.parametrize("delta,error", [(-1, M.FENCED_LEADER_EPOCH),
                                         (1, M.UNKNOWN_LEADER_EPOCH)])
def test_fetch_snapshot_request_with_older_or_newer_epoch(delta, error):
    """KafkaRaftClientSnapshotTest.testFetchSnapshotRequestWithOlderEpoch and
    testFetchSnapshotRequestWithNewerEpoch@3.9.0-rc3."""
    c, ctx = build(unknown=1)
    epoch = become_leader(c, ctx)
    ctx.deliver(c, V2, M.FetchSnapshotRequest(7, V2, epoch + delta, 0, 0, 0, 2**31 - 1))
    _, r = ctx.one(M.FetchSnapshotResponse)
    assert (r.partition_error, r.leader_epoch, r.leader_id) == (error, epoch, LOCAL)


def _follower_fetching_snapshot(snapshot_id, size=200):
    c, ctx = build(elected=(2, V2))
    ctx.poll(c)
    d, req = ctx.one(M.RaftFetchRequest)
    assert (d, req.fetch_offset, req.last_fetched_epoch) == (V2, 0, 0)
    c.handle(ctx, V2, M.RaftFetchResponse(req.correlation_id, M.NONE, V2, 2, size,
                                          snapshot_end_offset=snapshot_id.offset,
                                          snapshot_epoch=snapshot_id.epoch))
    d, sreq = ctx.one(M.FetchSnapshotRequest)
    assert d == V2
    assert (sreq.snapshot_end_offset, sreq.snapshot_epoch, sreq.position, sreq.max_bytes) == (
        snapshot_id.offset, snapshot_id.epoch, 0, RS.MAX_FETCH_SIZE_BYTES)
    return c, ctx, sreq


def test_fetch_response_with_snapshot_id():
    """KafkaRaftClientSnapshotTest.testFetchResponseWithSnapshotId@3.9.0-rc3: the follower
    fetches the snapshot, freezes it, restarts its log at the snapshot's offset and fetches
    from there in the snapshot's epoch."""
    snapshot_id = OffsetAndEpoch(100, 1)
    c, ctx, sreq = _follower_fetching_snapshot(snapshot_id)
    records = ("foo", "bar")
    size = RS.entries_size_in_bytes(records)
    c.handle(ctx, V2, M.FetchSnapshotResponse(sreq.correlation_id, M.NONE, M.NONE, V2, 2,
                                              100, 1, size, 0, records))
    _, req = ctx.one(M.RaftFetchRequest)
    assert (req.fetch_offset, req.last_fetched_epoch) == (snapshot_id.offset, snapshot_id.epoch)
    raw = c.log.read_snapshot(snapshot_id)
    assert raw.size_in_bytes == size and raw.entries == records
    assert (c.log.start_offset, c.log.end_offset) == (100, 100)


def test_fetch_snapshot_response_partial_data():
    """KafkaRaftClientSnapshotTest.testFetchSnapshotResponsePartialData@3.9.0-rc3: the follower
    asks for the rest from the position it reached."""
    snapshot_id = OffsetAndEpoch(100, 1)
    c, ctx, sreq = _follower_fetching_snapshot(snapshot_id)
    records = ("foo", "bar")
    size = RS.entries_size_in_bytes(records)
    c.handle(ctx, V2, M.FetchSnapshotResponse(sreq.correlation_id, M.NONE, M.NONE, V2, 2,
                                              100, 1, size, 0, records[:1]))
    _, sreq = ctx.one(M.FetchSnapshotRequest)
    assert sreq.position == RS.record_size_in_bytes("foo")
    c.handle(ctx, V2, M.FetchSnapshotResponse(sreq.correlation_id, M.NONE, M.NONE, V2, 2,
                                              100, 1, size, sreq.position, records[1:]))
    _, req = ctx.one(M.RaftFetchRequest)
    assert (req.fetch_offset, req.last_fetched_epoch) == (100, 1)
    assert c.log.read_snapshot(snapshot_id).entries == records


def test_fetch_snapshot_response_missing_snapshot():
    """KafkaRaftClientSnapshotTest.testFetchSnapshotResponseMissingSnapshot@3.9.0-rc3: the
    leader deleted it; the follower fetches from its log end again."""
    snapshot_id = OffsetAndEpoch(100, 1)
    c, ctx, sreq = _follower_fetching_snapshot(snapshot_id)
    c.handle(ctx, V2, M.FetchSnapshotResponse(sreq.correlation_id, M.NONE,
                                              RS.SNAPSHOT_NOT_FOUND, V2, 2))
    _, req = ctx.one(M.RaftFetchRequest)
    assert (req.fetch_offset, req.last_fetched_epoch) == (0, 0)
    assert c.latest_snapshot_id() is None


def test_create_snapshot_as_leader_with_invalid_snapshot_id():
    """KafkaRaftClientSnapshotTest.testCreateSnapshotAsLeaderWithInvalidSnapshotId@3.9.0-rc3:
    above the high watermark, or in an epoch the log does not have there, is an
    IllegalArgumentException; at the high watermark it works."""
    c, ctx = build()
    epoch = become_leader(c, ctx)
    c.prepare_append(ctx, epoch, ["a", "b", "c"])
    ctx.advance(c, 1)
    _advance_hw_to_log_end(c, ctx, epoch)
    hw = c.high_watermark
    with pytest.raises(IllegalArgumentException, match="greater than the high-watermark"):
        c.create_snapshot(OffsetAndEpoch(hw + 1, epoch), 0)
    with pytest.raises(IllegalArgumentException, match="is not valid according to the log"):
        c.create_snapshot(OffsetAndEpoch(hw, epoch + 1), 0)
    assert c.create_snapshot(OffsetAndEpoch(hw, epoch), 0) is not None


def test_create_snapshot_below_log_start_is_refused_and_a_second_writer_of_an_id_is_none():
    """KafkaMetadataLog.createNewSnapshot@3.9.0-rc3: below the log start offset Optional.empty;
    createNewSnapshotUnchecked: an existing id gives Optional.empty too."""
    c, ctx, epoch, snapshot_id = _leader_with_snapshot()
    assert c.create_snapshot(snapshot_id, 0) is None
    c.log.delete_before_snapshot(snapshot_id)
    assert c.create_snapshot(OffsetAndEpoch(snapshot_id.offset - 1, epoch), 0) is None


# --- SnapshotGeneratorTest -----------------------------------------------------------------------
class MockEmitter:
    def __init__(self):
        self.images = []

    def maybe_emit(self, raft, provenance, now):
        self.images.append(provenance)
        return provenance


PROVENANCE = RS.MetadataProvenance(9, 1, 0)


def test_create_snapshot():
    """SnapshotGeneratorTest.testCreateSnapshot@3.9.0-rc3: 100 bytes, then 100 more reach the
    200-byte limit."""
    emitter = MockEmitter()
    generator = RS.SnapshotGenerator(0, emitter, 0, max_bytes_since_last_snapshot=200,
                                     max_time_since_last_snapshot_ms=10 * 24 * 3600 * 1000)
    generator.publish_log_delta(None, 100, PROVENANCE, 0)
    assert emitter.images == []
    generator.publish_log_delta(None, 100, PROVENANCE, 0)
    assert emitter.images == [PROVENANCE]


def test_snapshots_disabled():
    """SnapshotGeneratorTest.testSnapshotsDisabled@3.9.0-rc3."""
    emitter = MockEmitter()
    generator = RS.SnapshotGenerator(0, emitter, 0, max_bytes_since_last_snapshot=1,
                                     max_time_since_last_snapshot_ms=0,
                                     disabled_reason="we are testing disable()")
    generator.publish_log_delta(None, 100, PROVENANCE, 0)
    assert emitter.images == []


def test_time_based_snapshots():
    """SnapshotGeneratorTest.testTimeBasedSnapshots@3.9.0-rc3."""
    emitter = MockEmitter()
    generator = RS.SnapshotGenerator(0, emitter, 0, max_bytes_since_last_snapshot=200,
                                     max_time_since_last_snapshot_ms=30 * 60_000)
    generator.publish_log_delta(None, 50, PROVENANCE, 0)
    assert emitter.images == []
    generator.publish_log_delta(None, 50, PROVENANCE, 40 * 60_000)
    assert emitter.images == [PROVENANCE]
    generator.publish_log_delta(None, 150, PROVENANCE, 40 * 60_000)   # bytes were reset
    assert emitter.images == [PROVENANCE]


def test_generator_refuses_out_of_range_limits():
    """KRaftConfigs: metadata.log.max.record.bytes.between.snapshots atLeast(1),
    metadata.log.max.snapshot.interval.ms atLeast(0); the error names the key."""
    with pytest.raises(ValueError, match="between.snapshots must be >= 1"):
        RS.SnapshotGenerator(0, MockEmitter(), 0, max_bytes_since_last_snapshot=0)
    with pytest.raises(ValueError, match="interval.ms must be >= 0"):
        RS.SnapshotGenerator(0, MockEmitter(), 0, max_time_since_last_snapshot_ms=-1)


def test_provenance_snapshot_name():
    """MetadataProvenance.snapshotId / snapshotName@3.9.0-rc3."""
    assert PROVENANCE.snapshot_id() == OffsetAndEpoch(10, 1)
    assert PROVENANCE.snapshot_name() == "snapshot 00000000000000000010-0000000001"


# --- KafkaMetadataLog ----------------------------------------------------------------------------
def _log_with_snapshots(n=3):
    from kafkasim.control.kraft.raft import RaftLog

    log = RaftLog([(i, 1, f"r{i}") for i in range(10)])
    log.high_watermark = 10
    ids = []
    for k in range(n):
        sid = OffsetAndEpoch(3 * (k + 1), 1)
        w = log.create_new_snapshot(sid)
        w.last_contained_log_timestamp = 1000 * k
        w.append(log.entries_between(0, sid.offset))
        w.freeze()
        ids.append(sid)
    return log, ids


def test_delete_before_snapshot_moves_the_log_start():
    """KafkaMetadataLog.deleteBeforeSnapshot@3.9.0-rc3: only a snapshot the log holds, past the
    log start and at most the latest; older snapshots are forgotten; reading from below the new
    start gives the snapshot there, its records at its last contained offset, then the log."""
    log, ids = _log_with_snapshots()
    assert not log.delete_before_snapshot(OffsetAndEpoch(4, 1))
    assert log.delete_before_snapshot(ids[1])
    assert (log.start_offset, log.end_offset) == (6, 10)
    assert sorted(log.snapshots) == ids[1:]
    assert [e[2] for e in log.entries_between(0, 10)] == [f"r{i}" for i in range(10)]
    assert [e[:2] for e in log.entries_between(0, 10)][5:7] == [(5, 1), (6, 1)]
    assert log.entry_at(5) is None and log.entry_at(6) == (6, 1, "r6")
    assert log.below_log_start(3) and not log.below_log_start(0) and not log.below_log_start(6)
    assert not log.delete_before_snapshot(ids[1])


def test_maybe_clean_by_size_and_time():
    """KafkaMetadataLog.maybeClean@3.9.0-rc3: while the log and the snapshots exceed
    metadata.max.retention.bytes the oldest snapshot goes (the latest stays); by time, the
    snapshots older than metadata.max.retention.ms."""
    log, ids = _log_with_snapshots()
    log.config = RS.MetadataLogConfig(retention_max_bytes=1, retention_millis=-1)
    assert log.maybe_clean(0)
    assert sorted(log.snapshots) == [ids[-1]] and log.start_offset == ids[-1].offset
    log, ids = _log_with_snapshots()
    log.config = RS.MetadataLogConfig(retention_max_bytes=-1, retention_millis=1500)
    assert log.maybe_clean(2000)   # snapshot 0 (t=0) is older than 1.5 s, snapshot 1 not
    assert sorted(log.snapshots) == ids[1:]
    log.config = RS.MetadataLogConfig(retention_max_bytes=-1, retention_millis=-1)
    assert not log.maybe_clean(10**9)


# --- the cluster ---------------------------------------------------------------------------------
def _cluster(tmp_path=None, **config):
    from kafkasim.runtime.cluster import Cluster

    return Cluster(brokers=3, seed=1, kafka_version="4.3", config=config,
                   log_dirs=None if tmp_path is None else str(tmp_path))


def _snapshot_rows(c, action=None):
    return [(r[0], r[2], r[5].render()) for r in c.trace.rows if r[1] == "raft_snapshot"
            and (action is None or r[5].action == action)]


def test_default_run_writes_no_snapshot():
    """metadata.log.max.snapshot.interval.ms is an hour and 20 MiB of records are far away: a
    short run has no snapshot, and its log starts at 0."""
    c = _cluster()
    c.create_topic("t", 1, 3)
    c.run(5000)
    assert _snapshot_rows(c) == []
    assert all(n.raft.latest_snapshot_id() is None and n.raft.log.start_offset == 0
               for n in c.kraft.nodes.values())


def test_time_based_snapshots_are_files_in_cluster_metadata_0(tmp_path):
    """KIP-876: each node (controllers and brokers) writes a snapshot of its committed image
    once metadata.log.max.snapshot.interval.ms passed, named <offset 20>-<epoch 10>.checkpoint
    in __cluster_metadata-0 of its directory; describe_metadata_log_dir lists it."""
    c = _cluster(tmp_path, **{"metadata.log.max.snapshot.interval.ms": 2000})
    c.create_topic("t", 1, 3)
    c.run(3000)
    generated = _snapshot_rows(c, "generated")
    assert {node for _t, node, _text in generated} == {1, 2, 3, 3000, 3001, 3002}
    node = c.kraft.nodes[3000]
    sid = node.raft.latest_snapshot_id()
    name = f"{sid.offset:020d}-{sid.epoch:010d}.checkpoint"
    files = os.listdir(tmp_path / "controller-3000" / "__cluster_metadata-0")
    assert name in files and not any(f.endswith(".part") for f in files)
    text = (tmp_path / "controller-3000" / "__cluster_metadata-0" / name).read_text()
    assert text.startswith("SnapshotHeaderRecord") and "FeatureLevelRecord" in text
    assert name in c.kraft.describe_metadata_log_dir(3000)
    broker_files = os.listdir(tmp_path / "broker-1" / "__cluster_metadata-0")
    assert broker_files and all(f.endswith(".checkpoint") for f in broker_files)
    assert "broker 1" in c.kraft.describe_metadata_log_dir(1)
    from kafkasim.settings.exceptions import ClusterError
    with pytest.raises(ClusterError, match=r"no node 7; the controllers are \[3000, 3001"):
        c.kraft.describe_metadata_log_dir(7)


def test_restart_loads_the_latest_snapshot_then_the_log_after_it():
    """KafkaRaftClient.updateListenersProgress@3.9.0-rc3: a restarted controller's listener
    loads the latest snapshot, then replays the log after it: it rebuilds the same state."""
    c = _cluster(**{"metadata.log.max.snapshot.interval.ms": 2000})
    c.create_topic("t", 1, 3)
    c.run(5000)
    node = c.kraft.nodes[3001]
    latest = node.raft.latest_snapshot_id()
    node.crash()
    node.start()
    c.run(3000)
    loaded = [r for r in _snapshot_rows(c, "loaded") if r[1] == 3001]
    assert loaded and f"{latest.offset:020d}-{latest.epoch:010d}" in loaded[0][2]
    active = c.kraft.active().controller
    assert node.controller.replication_control.topics().keys() == \
        active.replication_control.topics().keys()
    assert node.controller.applied == active.applied


def test_far_behind_voter_catches_up_with_fetch_snapshot():
    """A voter down while the others' snapshots and metadata.max.retention.bytes moved their log
    start past its log end: its Fetch is answered with the leader's latest SnapshotId, it
    downloads the snapshot with FetchSnapshot, restarts its log there and follows again."""
    c = _cluster(**{"metadata.log.max.snapshot.interval.ms": 2000,
                    "metadata.max.retention.bytes": 1})
    c.create_topic("t", 1, 3)
    c.run(3000)
    lagging = c.kraft.nodes[3002]
    lagging.crash()
    c.run(130_000)
    leader = c.kraft.raft_leader()
    assert leader.raft.log.start_offset > lagging.raft.log.end_offset
    lagging.start()
    c.run(5000)
    rows = [text for _t, node, text in _snapshot_rows(c) if node == 3002]
    assert any(t.startswith("fetched snapshot") for t in rows)
    assert lagging.raft.state_name == "Follower"
    assert lagging.raft.high_watermark == leader.raft.high_watermark
    assert lagging.raft.log.start_offset > 0
    assert lagging.controller.applied == c.kraft.active().controller.applied


def test_fetch_snapshot_rule_is_3_9():
    """KAFKA-16532: the offset-0 shortcut is a 3.9 rule (tests/test_versions.py lists it)."""
    assert rules_for("3.9").raft_fetch_snapshot_for_empty_log
    assert not rules_for("3.8").raft_fetch_snapshot_for_empty_log


def test_ctx_harness_has_no_snapshot_by_default():
    c, _ctx = build()
    assert isinstance(_ctx, Ctx) and c.latest_snapshot_id() is None
