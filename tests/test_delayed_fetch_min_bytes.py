"""DelayedFetch.tryComplete's byte count (kafka.server.DelayedFetch): a parked fetch completes
once the bytes available past each fetch offset reach the request's MinBytes, whatever the
partition's max bytes let one answer carry; until then it stays parked. ``_try_complete_fetch``
reads each served partition before deciding and counts with Log.bytes_between only when the
read holds fewer than MinBytes: these tests pin both ways of counting."""

from __future__ import annotations

from kafkasim.protocol.fake import FakeContext
from kafkasim.protocol.messages import FetchPartition, FetchRequest, ProduceRequest
from kafkasim.protocol.replica_manager import ReplicaManager

TP = ("t", 0)


def _leader():
    ctx = FakeContext(1, kafka_version="3.7")
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


def test_waits_for_min_bytes_beyond_what_one_read_carries():
    ctx, rm = _leader()
    _fetch(ctx, rm, 2, min_bytes=250, partition_max_bytes=100)
    assert len(rm.delayed_fetch) == 1 and not _fetch_answers(ctx, 2)   # empty log: parked
    _produce(ctx, rm, 1, (100, 100))          # 200 bytes available: fewer than 250
    assert len(rm.delayed_fetch) == 1 and not _fetch_answers(ctx, 2)
    assert rm.follower_fetch_waiters == {TP: [next(iter(rm.delayed_fetch))]}
    _produce(ctx, rm, 2, (100,))              # 300 bytes: enough, one record fits the answer
    (resp,) = _fetch_answers(ctx, 2)
    (pd,) = resp.partitions
    assert pd.error == "NONE" and list(pd.records.ids) == [100] and list(pd.records.sizes) == [100]
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
