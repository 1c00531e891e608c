"""The leader's FetchManager (KIP-227) driven by Kafka's names: FetchSessionTest.testFetchRequests
read at 4.3.0 (server/src/test/java/org/apache/kafka/server/FetchSessionTest.java, confluentinc
mirror a9ce322153; core/src/test/scala/unit/kafka/server/FetchSessionTest.scala at 3.9.0 has
the same steps).

Adaptation to kafkasim. Kafka's ``FetchManager.newContext`` is ``fetch_session.new_context(cache,
request, now)`` over a cache of one shard (``FetchSessionCacheShard(10, 1000, Integer.MAX_VALUE,
0)``); ``FetchContext.updateAndGenerateResponseData`` is ``response_partitions``, whose (error,
session id, partitions) are the FetchResponse's. A request's ``FetchMetadata(sessionId, epoch)``
is the FetchRequest's ``session_id`` / ``session_epoch``. Topic ids are left out (kafkasim names
partitions by topic), and so is ``getThrottledResponse`` (no quotas).
"""

from __future__ import annotations

from kafkasim.core import errors as E
from kafkasim.core import fetch_session as fs
from kafkasim.core.log import RecordChunk
from kafkasim.core.messages import FetchPartition, FetchPartitionData, FetchRequest
from kafkasim.settings.javautil import JavaRandom

INT_MAX = (1 << 31) - 1
INVALID_SESSION_ID = 0
INITIAL_EPOCH, FINAL_EPOCH = 0, -1


def _cache() -> fs.FetchSessionCache:
    return fs.FetchSessionCache([fs.FetchSessionCacheShard(10, 1000, INT_MAX, 0, JavaRandom(0))])


def _req(parts, session_id: int = INVALID_SESSION_ID, epoch: int = INITIAL_EPOCH,
         corr: int = 1) -> FetchRequest:
    """createRequest(FetchMetadata(sessionId, epoch), reqData, toForget = [], replica 1)."""
    fps = tuple(FetchPartition(t, p, offset, -1, -1, 0, 100) for t, p, offset in parts)
    return FetchRequest(corr, 1, 500, 1, 1 << 20, fps, session_id=session_id,
                        session_epoch=epoch)


def _data(topic: str, partition: int, hw: int, log_start: int) -> FetchPartitionData:
    """FetchResponseData.PartitionData with a high watermark and log start offset, no records."""
    return FetchPartitionData(topic, partition, E.NONE, hw, log_start, RecordChunk.empty(0))


FOO = [("foo", 0, 0), ("foo", 1, 10)]
RESP = [_data("foo", 0, 100, 100), _data("foo", 1, 10, 10)]


def test_fetch_requests():
    """FetchSessionTest.testFetchRequests @4.3.0: a sessionless request (FetchMetadata.LEGACY)
    gets a SessionlessFetchContext; a FULL request of foo-0 (offset 0) and foo-1 (offset 10)
    a FullFetchContext reading them in order, whose answer opens a session with both
    partitions. Epoch 5 of that session is INVALID_FETCH_SESSION_EPOCH, an unknown session id
    FETCH_SESSION_ID_NOT_FOUND; epoch 1 gets an IncrementalFetchContext reading the session's
    partitions, whose answer (nothing changed) carries none. Epoch 5 again is refused without
    moving the session, so epoch 2 still continues it. A FINAL_EPOCH request naming the
    session closes it (sessionless, the cache empty) and its answer opens no session."""
    cache = _cache()
    assert isinstance(fs.new_context(cache, _req([], epoch=FINAL_EPOCH), 0),
                      fs.SessionlessFetchContext)

    request2 = _req(FOO)
    context2 = fs.new_context(cache, request2, 0)
    assert isinstance(context2, fs.FullFetchContext)
    assert [(fp.topic, fp.partition, fp.fetch_offset) for fp in context2.partitions()] == FOO
    err, sid, parts = fs.response_partitions(cache, context2, RESP, 0, False)
    assert err == E.NONE and sid != INVALID_SESSION_ID
    assert list(parts) == RESP

    context3 = fs.new_context(cache, _req(FOO, sid, 5), 0)
    assert isinstance(context3, fs.SessionErrorContext)
    assert fs.response_partitions(cache, context3, RESP, 0, False)[0] == \
        E.INVALID_FETCH_SESSION_EPOCH

    context4 = fs.new_context(cache, _req(FOO, sid + 1, 1), 0)
    assert fs.response_partitions(cache, context4, RESP, 0, False)[0] == \
        E.FETCH_SESSION_ID_NOT_FOUND

    context5 = fs.new_context(cache, _req([], sid, 1), 0)
    assert isinstance(context5, fs.IncrementalFetchContext)
    assert [(cp.topic, cp.partition, cp.fetch_offset) for cp in context5.partitions()] == FOO
    err5, sid5, parts5 = fs.response_partitions(cache, context5, RESP, 0, False)
    assert (err5, sid5, parts5) == (E.NONE, sid, ())

    context6 = fs.new_context(cache, _req(FOO, sid, 5), 0)
    assert isinstance(context6, fs.SessionErrorContext)
    assert fs.response_partitions(cache, context6, RESP, 0, False)[0] == \
        E.INVALID_FETCH_SESSION_EPOCH

    context7 = fs.new_context(cache, _req([], sid, 2), 0)
    assert isinstance(context7, fs.IncrementalFetchContext)
    assert fs.response_partitions(cache, context7, RESP, 0, False)[:2] == (E.NONE, sid)

    bar = [("bar", 0, 0), ("bar", 1, 10)]
    context8 = fs.new_context(cache, _req(bar, sid, FINAL_EPOCH), 0)
    assert isinstance(context8, fs.SessionlessFetchContext)
    assert cache.size() == 0
    err8, sid8, _parts = fs.response_partitions(
        cache, context8, [_data("bar", 0, 100, 100), _data("bar", 1, 100, 100)], 0, False)
    assert err8 == E.NONE and sid8 != sid
