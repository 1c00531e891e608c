"""DelayedFetch.tryComplete's byte count (kafka.server.DelayedFetch): a parked fetch completes
once the bytes available past each fetch offset reach the request's MinBytes, each partition
counting at most its max bytes (``math.min(positionDiff, fetchInfo.maxBytes)``, 0.9.0+; 0.8.2
counted every byte); until then it stays parked. ``_can_complete`` reads each served partition
before deciding and counts with Log.bytes_between only when the read is not enough: these tests
pin both ways of counting."""

from __future__ import annotations

from kafkasim.core import quiet_sessions
from kafkasim.core.fake import FakeContext
from kafkasim.core.messages import FetchPartition, FetchRequest, ProduceRequest
from kafkasim.core.replica_manager import ReplicaManager

TP = ("t", 0)


def _leader(version: str = "3.7"):
    ctx = FakeContext(1, kafka_version=version)
    part = ctx.partition(*TP)
    part.make_leader(ctx, 1, (1, 2, 3), (1, 2, 3), 0, 1)
    rm = ReplicaManager()
    rm.partitions[TP] = part
    return ctx, rm


def _produce(ctx, rm, corr: int, sizes: tuple[int, ...]) -> None:
    ids = tuple(range(100 * corr, 100 * corr + len(sizes)))
    rm.append_records(ctx, "p", ProduceRequest(corr, "p", 1, 30_000,
                                               ((*TP, ids, sizes, -1, -1, -1),)))


def _fetch(ctx, rm, replica: int, min_bytes: int, partition_max_bytes: int) -> None:
    fp = FetchPartition(*TP, 0, 1, -1, 0, partition_max_bytes)
    rm.fetch_messages(ctx, replica, FetchRequest(7, replica, 500, min_bytes, 1 << 20, (fp,)))


def _fetch_answers(ctx, dst):
    return [m for d, m in ctx.sent if d == dst and type(m).__name__ == "FetchResponse"]


def test_a_partition_counts_at_most_its_max_bytes_toward_min_bytes():
    """0.9.0+: 300 bytes past the offset of a partition with max bytes 100 count as 100, so a
    MinBytes of 250 is never reached by that one partition: the fetch waits for MaxWaitMs."""
    ctx, rm = _leader()
    _fetch(ctx, rm, 2, min_bytes=250, partition_max_bytes=100)
    assert len(rm.delayed_fetch) == 1 and not _fetch_answers(ctx, 2)   # empty log: parked
    _produce(ctx, rm, 1, (100, 100))
    _produce(ctx, rm, 2, (100,))              # 300 bytes available, 100 counted
    assert len(rm.delayed_fetch) == 1 and not _fetch_answers(ctx, 2)
    assert rm.follower_fetch_waiters == {TP: [next(iter(rm.delayed_fetch))]}
    (df_id,) = rm.delayed_fetch
    rm.on_fetch_timeout(ctx, df_id)           # MaxWaitMs passed: one record fits the answer
    (resp,) = _fetch_answers(ctx, 2)
    (pd,) = resp.partitions
    assert pd.error == "NONE" and list(pd.records.ids) == [100] and list(pd.records.sizes) == [100]
    assert not rm.delayed_fetch and not rm.follower_fetch_waiters


def test_before_0_9_every_byte_counts_toward_min_bytes():
    """0.8.2 DelayedFetch.isSatisfied added ``endOffset.positionDiff(fetchOffset)`` uncapped:
    300 bytes reach a MinBytes of 250 whatever the partition's max bytes."""
    ctx, rm = _leader("0.8.2")
    _fetch(ctx, rm, 2, min_bytes=250, partition_max_bytes=100)
    _produce(ctx, rm, 1, (100, 100))          # 200 bytes available: fewer than 250
    assert len(rm.delayed_fetch) == 1 and not _fetch_answers(ctx, 2)
    _produce(ctx, rm, 2, (100,))              # 300 bytes: enough
    (resp,) = _fetch_answers(ctx, 2)
    assert list(resp.partitions[0].records.ids) == [100]
    assert not rm.delayed_fetch and not rm.follower_fetch_waiters


def test_a_read_of_min_bytes_completes_at_once():
    ctx, rm = _leader()
    _fetch(ctx, rm, 3, min_bytes=150, partition_max_bytes=1 << 20)
    _produce(ctx, rm, 1, (100,))              # 100 bytes: fewer than 150
    assert not _fetch_answers(ctx, 3)
    _produce(ctx, rm, 2, (60, 60))
    (resp,) = _fetch_answers(ctx, 3)
    assert list(resp.partitions[0].records.sizes) == [100, 60, 60]
    assert not rm.delayed_fetch and not rm.follower_fetch_waiters


def test_too_few_bytes_answer_at_max_wait_with_what_is_there():
    ctx, rm = _leader()
    _fetch(ctx, rm, 2, min_bytes=1000, partition_max_bytes=1 << 20)
    _produce(ctx, rm, 1, (100, 100))
    assert not _fetch_answers(ctx, 2)
    (df_id,) = rm.delayed_fetch
    rm.on_fetch_timeout(ctx, df_id)           # MaxWaitMs passed
    (resp,) = _fetch_answers(ctx, 2)
    assert list(resp.partitions[0].records.ids) == [100, 101]
    assert not rm.delayed_fetch and not rm.follower_fetch_waiters


def test_a_parked_fetch_whose_session_moved_on_answers_invalid_epoch(monkeypatch):
    """IncrementalFetchContext.updateAndGenerateResponseData (FetchSession.scala, 1.1+; in
    ``_fetch_response``): a parked incremental fetch answers with the session's partitions
    with records while the session is at nextEpoch(its epoch); once a later request of the same
    session moved it on, the answer is INVALID_FETCH_SESSION_EPOCH with no partitions."""
    monkeypatch.setattr(quiet_sessions, "LAZY", False)   # both fetches watch the partition
    ctx, rm = _leader()
    fp = FetchPartition(*TP, 0, 1, -1, 0, 1 << 20)
    rm.fetch_messages(ctx, 2, FetchRequest(1, 2, 500, 1, 1 << 20, (fp,), session_epoch=0))
    (df_id,) = rm.delayed_fetch
    rm.on_fetch_timeout(ctx, df_id)   # the full fetch's answer opens the session
    (full,) = _fetch_answers(ctx, 2)
    sid = full.session_id
    assert sid > 0 and full.error == "NONE"
    for corr, epoch in ((2, 1), (3, 2)):   # the second moves the session past the first's
        rm.fetch_messages(ctx, 2, FetchRequest(corr, 2, 500, 1, 1 << 20, (fp,),
                                               session_id=sid, session_epoch=epoch))
    assert len(rm.delayed_fetch) == 2
    _produce(ctx, rm, 1, (100,))
    stale, fresh = _fetch_answers(ctx, 2)[1:]
    assert (stale.correlation_id, stale.error, stale.session_id, stale.partitions) == \
        (2, "INVALID_FETCH_SESSION_EPOCH", sid, ())
    assert (fresh.correlation_id, fresh.error, fresh.session_id) == (3, "NONE", sid)
    assert [list(pd.records.ids) for pd in fresh.partitions] == [[100]]
    assert not rm.delayed_fetch and not rm.follower_fetch_waiters
