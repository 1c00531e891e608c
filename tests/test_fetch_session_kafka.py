"""The KIP-227 session cache by Kafka's names, following FetchSessionTest's cache cases
(core/src/test/scala/unit/kafka/server/FetchSessionTest.scala, trunk 1eb7644). Scenarios and
code are our own; each test names the Kafka test it follows. (tests/test_fetch_session.py
ports the request / context cases.)"""

from __future__ import annotations

import pytest

from kafkasim.core import fetch_session as fs
from kafkasim.settings.javautil import JavaRandom

INT_MAX = (1 << 31) - 1


def _parts(n: int) -> dict:
    return {("t", i): fs.CachedPartition("t", i, 0, -1, -1, 0, 100) for i in range(n)}


def _sharded(n: int = 8) -> fs.FetchSessionCache:
    rng = JavaRandom(3)
    return fs.FetchSessionCache([fs.FetchSessionCacheShard(10, 1000, INT_MAX // n, i, rng)
                                 for i in range(n)])


# testFetchSessionCache_getShardedCache_retrievesCacheFromCorrectSegment
def test_get_cache_shard_by_session_id_range():
    cache = _sharded()
    span = INT_MAX // 8
    assert cache.get_cache_shard(span - 1) is cache.shards[0]
    assert cache.get_cache_shard(span) is cache.shards[1]
    assert cache.get_cache_shard(span * 2) is cache.shards[2]
    with pytest.raises(IndexError, match="in no shard's range"):
        cache.get_cache_shard(span * 8)


# testFetchSessionCache_RoundRobinsIntoShards(_WhenIntegerOverflows)
@pytest.mark.parametrize("counter", [0, INT_MAX + 1])
def test_new_sessions_go_to_the_shards_in_turn(counter):
    cache = _sharded()
    cache.counter = counter
    assert [cache.get_next_cache_shard() for _ in range(16)] == cache.shards * 2


# testSessionCache / testResizeCachedSessions: the shard's get, size, totalPartitions, remove
def test_shard_queries_and_remove_by_id():
    shard = fs.FetchSessionCacheShard(3, 100, INT_MAX, 0, JavaRandom(7))
    assert shard.size() == 0 and shard.total_partitions() == 0
    id1 = shard.maybe_create_session(0, False, 10, lambda: _parts(10))
    id2 = shard.maybe_create_session(10, False, 20, lambda: _parts(20))
    assert shard.size() == 2 and shard.total_partitions() == 30
    assert shard.get(id1).id == id1 and shard.get(12345) is None
    session = shard.get(id2)
    del session.partitions[("t", 0)]
    shard.touch(session, 20)
    assert shard.total_partitions() == 29
    assert shard.remove(id2) is session and shard.remove(id2) is None
    assert shard.size() == 1 and shard.total_partitions() == 10
    assert shard.remove(shard.get(id1)).id == id1
    assert shard.size() == 0 and shard.total_partitions() == 0
