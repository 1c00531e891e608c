"""Incremental fetch sessions (KIP-227, 1.1+): kafkasim.core.fetch_session, the follower's
FetchSessionHandler in ReplicaFetcherThread and the leader's FetchManager in ReplicaManager.

Cases mirror Kafka's FetchSessionTest (core, 3.7.0) and FetchSessionHandlerTest (clients)."""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core import fetch_session as fs
from kafkasim.core import quiet_sessions
from kafkasim.core.log import RecordChunk
from kafkasim.core.messages import (
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
)
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.javautil import JavaRandom


def _cache(max_entries: int, eviction_ms: int) -> fs.FetchSessionCache:
    return fs.FetchSessionCache([fs.FetchSessionCacheShard(
        max_entries, eviction_ms, (1 << 31) - 1, 0, JavaRandom(7))])


def _parts(n: int) -> dict:
    return {("t", i): fs.CachedPartition("t", i, 0, -1, -1, 0, 100) for i in range(n)}


def _create(cache, now, privileged, size):
    return cache.next_shard().maybe_create_session(now, privileged, size, lambda: _parts(size))


def test_session_cache_eviction_by_staleness_size_and_privilege():
    """FetchSessionTest.testSessionCache: a full cache refuses smaller or equal sessions, evicts
    a stale one, then the smallest evictable one for a bigger, and any unprivileged for a
    privileged (follower) session."""
    cache = _cache(3, 100)
    shard = cache.shards[0]
    id1 = _create(cache, 0, False, 10)
    id2 = _create(cache, 10, False, 20)
    id3 = _create(cache, 20, False, 30)
    assert _create(cache, 30, False, 40) == fs.INVALID_SESSION_ID
    assert _create(cache, 40, False, 5) == fs.INVALID_SESSION_ID
    assert set(shard.sessions) == {id1, id2, id3}
    shard.touch(cache.get(id1), 200)
    id4 = _create(cache, 210, False, 11)          # id2 is stale (unused since 10)
    assert set(shard.sessions) == {id1, id3, id4}
    shard.touch(cache.get(id1), 400)
    shard.touch(cache.get(id3), 390)
    shard.touch(cache.get(id4), 400)
    id5 = _create(cache, 410, False, 50)          # evicts the smallest: id1 (10 partitions)
    assert set(shard.sessions) == {id3, id4, id5}
    assert _create(cache, 410, False, 5) == fs.INVALID_SESSION_ID
    id6 = _create(cache, 410, True, 5)            # privileged beats any unprivileged: id4
    assert set(shard.sessions) == {id3, id5, id6}
    assert cache.evictions() == 3


def test_incremental_requests_touch_the_session_as_the_cache_does():
    """Each incremental request touches its session (FetchSessionCache.touch): last used,
    the partition count, and the evictable sets -- a follower's (privileged) session becomes
    evictable by privileged sessions only once older than eviction_ms; an unprivileged one is
    evictable by them from the start, by every session once old."""
    for privileged in (True, False):
        cache = _cache(10, 100)
        shard = cache.shards[0]
        full = FetchRequest(1, 2 if privileged else -1, 500, 1, 100, (_fp(0, 0), _fp(1, 0)),
                            session_epoch=0)
        _e, sid, _p = fs.response_partitions(cache, fs.new_context(cache, full, 0),
                                             [_pd(0), _pd(1)], 0, privileged)
        session = cache.get(sid)
        seen = []
        for epoch, now, send, forget in ((1, 50, (_fp(2, 0),), ()), (2, 100, (), (("t", 0),)),
                                         (3, 101, (), ()), (4, 150, (_fp(0, 3),), ())):
            req = FetchRequest(epoch + 1, 2, 500, 1, 100, send, session_id=sid,
                               session_epoch=epoch, to_forget=forget)
            assert fs.new_context(cache, req, now).kind == fs.INCREMENTAL
            seen.append((session.last_used_ms, session.cached_size, shard.num_partitions,
                         session.evictable_by_privileged, session.evictable_by_all))
        assert seen == [(50, 3, 3, not privileged, False), (100, 2, 2, not privileged, False),
                        (101, 2, 2, True, True), (150, 3, 3, True, True)]


def test_resize_cached_sessions_counts_partitions():
    """FetchSessionTest.testResizeCachedSessions: NumIncrementalFetchPartitionsCached follows
    touch(); an eviction marks the meter."""
    cache = _cache(2, 100)
    shard = cache.shards[0]
    id1 = _create(cache, 0, False, 2)
    assert id1 > 0 and cache.total_partitions() == 2 and cache.size() == 1
    id2 = _create(cache, 0, False, 4)
    assert cache.total_partitions() == 6 and cache.evictions() == 0
    s1, s2 = cache.get(id1), cache.get(id2)
    shard.touch(s1, 200)
    shard.touch(s2, 200)
    id3 = _create(cache, 200, False, 5)
    assert set(shard.sessions) == {id2, id3}
    assert cache.total_partitions() == 9 and cache.evictions() == 1
    cache.remove(id3)
    assert cache.total_partitions() == 4 and cache.size() == 1
    del s2.partitions[next(iter(s2.partitions))]
    assert s2.cached_size == 4
    shard.touch(s2, s2.last_used_ms)
    assert cache.total_partitions() == 3


def test_new_session_ids_are_in_the_shard_range():
    """FetchSessionTest.testNewSessionId / KAFKA-9401: ids never 0, within the shard's range."""
    cache = fs.FetchSessionCache.create(1000, True, seed=3)
    assert len(cache.shards) == 8 and cache.shards[0].max_entries == 125
    for i in range(16):
        sid = _create(cache, i, True, 1)
        shard = cache.shard_for(sid)
        assert shard.shard_num == i % 8
        assert max(1, shard.shard_num * shard.session_id_range) <= sid < \
            (shard.shard_num + 1) * shard.session_id_range


def _fp(p: int, offset: int) -> FetchPartition:
    return FetchPartition("t", p, offset, 0, -1, 0, 100)


def _resp(session_id: int, *parts, error=E.NONE) -> FetchResponse:
    datas = tuple(FetchPartitionData("t", p, E.NONE, 0, 0, RecordChunk.empty(0)) for p in parts)
    return FetchResponse(1, datas, error, session_id)


def test_handler_full_then_incremental_fetches():
    """FetchSessionHandlerTest.testIncrementals: the full fetch names every partition; then
    only the changed and added ones; a partition no longer wanted is forgotten
    (testIncrementalPartitionRemoval)."""
    h = fs.FetchSessionHandler(1)
    send, forget = h.build([_fp(0, 0), _fp(1, 10)])
    assert [fp.partition for fp in send] == [0, 1] and forget == ()
    assert h.handle_response(_resp(123, 0, 1))
    assert (h.session_id, h.epoch) == (123, 1)
    send, forget = h.build([_fp(0, 0), _fp(1, 11), _fp(2, 5)])
    assert [(fp.partition, fp.fetch_offset) for fp in send] == [(2, 5), (1, 11)]
    assert forget == ()
    assert h.handle_response(_resp(123, 1))
    assert h.epoch == 2
    send, forget = h.build([_fp(1, 11), _fp(2, 5)])
    assert send == () and forget == (("t", 0),)
    assert list(h.session_partitions) == [("t", 1), ("t", 2)]


def test_handler_top_level_errors_reset_metadata():
    """FetchSessionHandlerTest.testTopLevelErrorResetsMetadata: FETCH_SESSION_ID_NOT_FOUND
    starts over (INITIAL), any other error closes the session and asks for a new one."""
    h = fs.FetchSessionHandler(1)
    h.build([_fp(0, 0)])
    assert h.handle_response(_resp(5, 0))
    h.build([_fp(0, 0)])
    assert not h.handle_response(_resp(0, error=E.INVALID_FETCH_SESSION_EPOCH))
    assert (h.session_id, h.epoch) == (5, fs.INITIAL_EPOCH)
    h.build([_fp(0, 0)])
    assert h.handle_response(_resp(6, 0))
    h.build([_fp(0, 0)])
    assert not h.handle_response(_resp(0, error=E.FETCH_SESSION_ID_NOT_FOUND))
    assert (h.session_id, h.epoch) == (fs.INVALID_SESSION_ID, fs.INITIAL_EPOCH)


def test_handler_full_response_must_name_every_partition():
    """FetchSessionHandlerTest.testVerifyFullFetchResponsePartitions."""
    h = fs.FetchSessionHandler(1)
    h.build([_fp(0, 0), _fp(1, 0)])
    assert not h.handle_response(_resp(9, 0))        # partition 1 omitted
    assert (h.session_id, h.epoch) == (0, 0)
    h.build([_fp(0, 0), _fp(1, 0)])
    assert h.handle_response(_resp(0, 0, 1))          # no session granted: stays full
    assert (h.session_id, h.epoch) == (0, 0)


def test_next_epoch_wraps_to_one():
    """FetchMetadata.nextEpoch."""
    assert fs.next_epoch(fs.INITIAL_EPOCH) == 1
    assert fs.next_epoch((1 << 31) - 1) == 1
    assert fs.next_epoch(fs.FINAL_EPOCH) == fs.FINAL_EPOCH


def test_session_epochs_wrap_to_one_at_both_ends():
    """FetchMetadata.nextEpoch where the handler and the leader step the epoch themselves:
    after Int.MaxValue the next incremental epoch is 1 (FetchSessionHandler.handleResponse,
    FetchManager.newContext / IncrementalFetchContext)."""
    top = (1 << 31) - 1
    h = fs.FetchSessionHandler(1)
    h.build([_fp(0, 0)])
    assert h.handle_response(_resp(5, 0))
    h.epoch = top
    assert h.handle_response(_resp(5, 0)) and (h.session_id, h.epoch) == (5, 1)
    assert h.handle_response(_resp(5)) and h.epoch == 2
    cache = _cache(10, 1000)
    full = FetchRequest(1, 2, 500, 1, 100, (_fp(0, 0),), session_epoch=0)
    _e, sid, _p = fs.response_partitions(cache, fs.new_context(cache, full, 0), [_pd(0)], 0,
                                         True)
    cache.get(sid).epoch = top
    fctx = fs.new_context(cache, FetchRequest(2, 2, 500, 1, 100, (), session_id=sid,
                                              session_epoch=top), 1)
    assert (fctx.kind, fctx.epoch, cache.get(sid).epoch) == (fs.INCREMENTAL, 1, 1)
    assert fs.incremental_response(fctx, [_pd(0, n=1)])[:2] == (E.NONE, sid)


def _pd(p, hw=0, ls=0, n=0, error=E.NONE):
    chunk = RecordChunk.empty(0)
    if n:
        from array import array
        chunk = RecordChunk(0, array("q", [0] * n), array("q", range(n)), array("q", [0] * n),
                            array("q", [1] * n), ())
    return FetchPartitionData("t", p, error, hw, ls, chunk)


def test_update_and_generate_response_data():
    """FetchSessionTest.testUpdateAndGenerateResponseData / testDeprioritizesPartitionsWithRecords
    Only: an incremental answer keeps the partitions with records, a new HW or log start, or
    an error; a partition with records moves to the end of the session."""
    cache = _cache(10, 1000)
    full = FetchRequest(1, 2, 500, 1, 100, (_fp(0, 0), _fp(1, 0), _fp(2, 0)), session_epoch=0)
    fctx = fs.new_context(cache, full, 0)
    assert fctx.kind == fs.FULL
    err, sid, parts = fs.response_partitions(cache, fctx, [_pd(0), _pd(1), _pd(2)], 0, True)
    assert err == E.NONE and sid > 0 and len(parts) == 3
    inc = FetchRequest(2, 2, 500, 1, 100, (), session_id=sid, session_epoch=1)
    fctx = fs.new_context(cache, inc, 1)
    assert fctx.kind == fs.INCREMENTAL
    assert [cp.partition for cp in fctx.partitions()] == [0, 1, 2]
    err, sid2, parts = fs.response_partitions(
        cache, fctx, [_pd(0, n=2), _pd(1), _pd(2, hw=4)], 1, True)
    assert sid2 == sid and [pd.partition for pd in parts] == [0, 2]
    assert list(cache.get(sid).partitions) == [("t", 1), ("t", 2), ("t", 0)]
    # the same request again: the session has moved on (INVALID_FETCH_SESSION_EPOCH)
    fctx = fs.new_context(cache, inc, 2)
    assert (fctx.kind, fctx.error) == (fs.SESSION_ERROR, E.INVALID_FETCH_SESSION_EPOCH)
    unknown = FetchRequest(3, 2, 500, 1, 100, (), session_id=sid + 1, session_epoch=1)
    assert fs.new_context(cache, unknown, 2).error == E.FETCH_SESSION_ID_NOT_FOUND


def test_incremental_context_fields_and_the_answer_epoch_check():
    """incremental_context makes an IncrementalFetchContext of the request, the session and
    the epoch it moved the session to. The answer to an incremental request finds the
    session at nextEpoch(request epoch), or a later request moved it on and the answer is
    INVALID_FETCH_SESSION_EPOCH (IncrementalFetchContext.updateAndGenerateResponseData)."""
    import dataclasses
    cache = _cache(10, 1000)
    full = FetchRequest(1, 2, 500, 1, 100, (_fp(0, 0),), session_epoch=0)
    _e, sid, _p = fs.response_partitions(cache, fs.new_context(cache, full, 0), [_pd(0)], 0,
                                         True)
    first = FetchRequest(2, 2, 500, 1, 100, (), session_id=sid, session_epoch=1)
    ctx1 = fs.new_context(cache, first, 1)
    names = [f.name for f in dataclasses.fields(fs.IncrementalFetchContext)]
    rebuilt = fs.IncrementalFetchContext(first, cache.get(sid), E.NONE, 2)
    assert type(ctx1) is fs.IncrementalFetchContext and ctx1.kind == fs.INCREMENTAL
    assert [getattr(ctx1, n) for n in names] == [getattr(rebuilt, n) for n in names]
    assert repr(ctx1) == repr(rebuilt)
    second = FetchRequest(3, 2, 500, 1, 100, (), session_id=sid, session_epoch=2)
    ctx2 = fs.new_context(cache, second, 2)
    assert (ctx2.kind, ctx2.epoch, cache.get(sid).epoch) == (fs.INCREMENTAL, 3, 3)
    assert fs.incremental_response(ctx1, [_pd(0, n=1)]) == \
        (E.INVALID_FETCH_SESSION_EPOCH, sid, ())
    err, sid2, parts = fs.incremental_response(ctx2, [_pd(0, n=1)])
    assert (err, sid2, [pd.partition for pd in parts]) == (E.NONE, sid, [0])


def test_forgetting_every_partition_closes_the_session():
    """FetchSessionTest.testToForgetPartitions / testZeroSizeFetchSession: an incremental fetch
    that leaves the session empty removes it and is answered sessionless."""
    cache = _cache(10, 1000)
    full = FetchRequest(1, 2, 500, 1, 100, (_fp(0, 0),), session_epoch=0)
    _e, sid, _p = fs.response_partitions(cache, fs.new_context(cache, full, 0), [_pd(0)], 0,
                                         True)
    inc = FetchRequest(2, 2, 500, 1, 100, (), session_id=sid, session_epoch=1,
                       to_forget=(("t", 0),))
    fctx = fs.new_context(cache, inc, 1)
    assert fctx.kind == fs.SESSIONLESS and cache.size() == 0


# -- in a cluster -------------------------------------------------------------------------------
def _fetches(c: Cluster):
    seen = []
    orig = c.transport.send

    def send(src, dst, msg, *a, **k):
        if isinstance(msg, (FetchRequest, FetchResponse)):
            seen.append((c.now, src, dst, msg))
        return orig(src, dst, msg, *a, **k)
    c.transport.send = send
    return seen


@pytest.mark.parametrize("version", ["1.1", "3.7", "4.3"])
def test_followers_fetch_incrementally(version):
    """ReplicaFetcherThread with a FetchSessionHandler: a full fetch, then incremental ones that
    name only changed partitions; answers carry only partitions with news."""
    c = Cluster(brokers=3, seed=1, kafka_version=version)
    c.create_topic("t", partitions=20, replication_factor=3)
    c.run(3000)
    seen = _fetches(c)
    p = c.producer(acks="all")
    p.send("t", key="k", value="v", partition=3)
    c.run(3000)
    reqs = [m for _t, _s, _d, m in seen if isinstance(m, FetchRequest)]
    resps = [m for _t, _s, _d, m in seen if isinstance(m, FetchResponse)]
    assert reqs and all(m.session_id > 0 and m.session_epoch > 0 for m in reqs)
    assert max(len(m.partitions) for m in reqs) <= 1      # only partition 3 ever changes
    assert max(len(m.partitions) for m in resps) <= 1
    assert all(r.error == E.NONE for r in resps)
    assert c.high_watermark("t", 3) == 1 and len(c.isr("t", 3)) == 3
    gauges = {b.id: b.replica_manager.fetch_sessions.size() for b in c.brokers.values()}
    assert all(n == 2 for n in gauges.values())     # one session per follower


def test_before_1_1_every_fetch_is_full():
    c = Cluster(brokers=3, seed=1, kafka_version="1.0")
    c.create_topic("t", partitions=5, replication_factor=3)
    seen = _fetches(c)
    c.run(3000)
    reqs = [m for _t, _s, _d, m in seen if isinstance(m, FetchRequest)]
    assert reqs and all(m.session_epoch == fs.FINAL_EPOCH and m.session_id == 0 for m in reqs)
    assert all(len(m.partitions) in (1, 2) for m in reqs)  # each follower's leader partitions


def test_leader_restart_session_not_found_then_full_fetch():
    """A leader that lost its sessions answers FETCH_SESSION_ID_NOT_FOUND; the follower's next
    fetch is full and opens a new session (FetchSessionTest.testFetchSessionWithUnknownId)."""
    c = Cluster(brokers=3, seed=2)
    c.create_topic("t", partitions=6, replication_factor=3)
    c.run(3000)
    seen = _fetches(c)
    b1 = c.brokers[1]
    old = {k: v for k, v in b1.replica_manager.fetch_sessions.shards[0].sessions.items()}
    b1.replica_manager.fetch_sessions = None       # as after a restart: no sessions kept
    c.run(2000)
    errs = [m for _t, _s, src, m in seen if isinstance(m, FetchResponse) and
            m.error == E.FETCH_SESSION_ID_NOT_FOUND]
    assert errs
    full = [m for _t, _s, d, m in seen if isinstance(m, FetchRequest) and d == 1 and
            m.session_epoch == fs.INITIAL_EPOCH]
    assert full and all(m.session_id == 0 for m in full)
    assert b1.replica_manager.fetch_sessions.size() == 2
    assert old is not None


def test_small_cache_leaves_a_follower_sessionless_until_the_other_goes_stale():
    """max.incremental.fetch.session.cache.slots=1: the second follower gets no session (an
    equal-sized privileged session is not evictable, FetchSessionTest.testPrivilegedSession
    Handling) and its fetches stay full; once the first follower is gone for more than
    MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS its stale session is evicted
    (testFetchSessionExpiration) and IncrementalFetchSessionEvictionsPerSec counts it."""
    c = Cluster(brokers=3, seed=1, kafka_version="3.7",
                config={"max.incremental.fetch.session.cache.slots": 1})
    c.create_topic("t", partitions=1, replication_factor=3)
    c.run(3000)
    leader = c.leader("t", 0)
    seen = _fetches(c)
    c.run(3000)
    by_src = {}
    for _t, src, _d, m in seen:
        if isinstance(m, FetchRequest):
            by_src.setdefault(src, []).append(m)
    assert len(by_src) == 2
    with_session = [b for b, ms in by_src.items() if ms[-1].session_epoch > 0]
    without = [b for b, ms in by_src.items() if all(m.session_epoch == 0 for m in ms)]
    assert len(with_session) == 1 and len(without) == 1
    cache = c.brokers[leader].replica_manager.fetch_sessions
    assert cache.size() == 1 and cache.evictions() == 0
    c.crash(with_session[0])
    seen.clear()
    c.run(fs.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS + 5000)
    assert cache.evictions() == 1
    assert c.brokers[leader].meters["IncrementalFetchSessionEvictionsPerSec"] == 1
    last = [m for _t, src, _d, m in seen if isinstance(m, FetchRequest) and src == without[0]]
    assert last[-1].session_epoch > 0          # the survivor now fetches incrementally


# -- the simulator's lazy read (quiet_sessions.LAZY) changes nothing observable -----------------
def _digest_and_clocks(lazy: bool, run) -> tuple:
    old = quiet_sessions.LAZY
    quiet_sessions.LAZY = lazy
    try:
        c = run()
    finally:
        quiet_sessions.LAZY = old
    clocks = {(b.id, tp, r): (st.last_caught_up_time_ms, st.last_fetch_time_ms)
              for b in c.brokers.values() if b.is_running
              for tp, p in b.replica_manager.partitions.items() if p.is_leader
              for r, st in p.remote.items()}
    return c.trace.digest(), clocks


def _faulty_run(version: str):
    def run():
        c = Cluster(brokers=3, seed=5, kafka_version=version)
        c.create_topic("t", partitions=12, replication_factor=3)
        p = c.producer(acks="all", linger_ms=5)
        c.run(2000)
        for i in range(200):
            p.send("t", key=str(i), value="v")
            c.run(7)
        c.crash(c.leader("t", 3))
        c.run(4000)
        for i in range(100):
            p.send("t", key=str(i), value="w", partition=i % 12)
            c.run(11)
        c.pause(c.leader("t", 0), 20_000)
        c.run(40_000)
        return c
    return run


@pytest.mark.parametrize("version", ["2.7", "3.7", "4.3"])
def test_lazy_read_gives_the_same_trace_and_lag_clocks(version):
    """Reading only active session partitions (leader) and building only changed ones
    (follower) must not change a single trace event, nor the followers' lag clocks."""
    run = _faulty_run(version)
    assert _digest_and_clocks(True, run) == _digest_and_clocks(False, run)


def test_quiet_partitions_are_not_read():
    """With 200 idle partitions and one busy, an incremental fetch reads a handful."""
    c = Cluster(brokers=3, seed=1)
    c.create_topic("t", partitions=200, replication_factor=3)
    c.run(3000)
    p = c.producer(acks="all")
    p.send("t", key="k", value="v", partition=7)
    c.run(2000)
    leader = c.brokers[c.leader("t", 7)]
    sessions = [s for sh in leader.replica_manager.fetch_sessions.shards
                for s in sh.sessions.values()]
    assert sessions and all(len(s.active) <= 2 for s in sessions)
    assert all(len(s.partitions) >= 60 for s in sessions)


def test_a_partition_with_a_commit_pending_is_not_quieted():
    """The lazy read leaves a partition active while its HW is below its LEO (the next
    follower fetch would wake it at once); once fully replicated and idle it goes quiet."""
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", partitions=1, replication_factor=3)
    c.run(2000)
    leader = c.brokers[c.leader("t", 0)]
    rm = leader.replica_manager
    log = rm.partitions[("t", 0)].log
    p = c.producer(acks="all", linger_ms=5)
    pending_seen = 0
    for i in range(200):
        p.send("t", key=str(i), value="v", partition=0)
        for _ in range(3):
            c.run(1)
            if log.high_watermark < log.log_end_offset:
                pending_seen += 1
                assert ("t", 0) not in rm.quiet
    assert pending_seen > 0                      # the check above did run
    c.run(3000)                                  # idle: both followers' sessions go quiet
    assert log.high_watermark == log.log_end_offset
    assert len(rm.quiet.get(("t", 0), ())) == 2
