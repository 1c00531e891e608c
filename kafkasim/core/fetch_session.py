"""Incremental fetch sessions (KIP-227, Kafka 1.1+; rule ``fetch_sessions``): both ends.

A follower (or consumer) and the leader agree on the set of partitions fetched, so a Fetch need
carry only the partitions whose fetch position changed and the answer only the partitions with
something to say. Before 1.1 (and with the rule off) every Fetch is *sessionless*: it names every
partition and the answer carries every partition.

Client side -- ``FetchSessionHandler`` (org.apache.kafka.clients.FetchSessionHandler and
org.apache.kafka.common.requests.FetchMetadata): the next request's session id and epoch; a *full*
fetch (epoch ``INITIAL_EPOCH`` = 0) names every partition and asks for a new session; an
*incremental* one (epoch >= 1) names only the added or altered partitions and lists the removed
ones in ``to_forget``. A session error, a malformed answer or a failed request makes the next fetch
full again.

Server side -- ``kafka.server.FetchSession.scala``: ``FetchManager.newContext`` turns a request
into a context (sessionless, full, incremental, or a session error: FETCH_SESSION_ID_NOT_FOUND,
INVALID_FETCH_SESSION_EPOCH); ``FetchSessionCache`` keeps at most
``max.incremental.fetch.session.cache.slots`` sessions and evicts by staleness
(``MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS`` = 120 s unused), then by (privileged, size, id);
from 3.8 it is split into 8 shards (KAFKA-9401, ``FetchSessionCacheShard``; rule
``fetch_session_cache_sharded``). An incremental answer carries a partition only when
``CachedPartition.maybeUpdateResponseData`` says so: records, an error, a new high watermark or log
start offset, a diverging epoch or a preferred read replica.

Plain data throughout; session ids come from a seeded ``JavaRandom`` (Kafka draws them with
ThreadLocalRandom.nextInt(1, Int.MaxValue)), so a run is deterministic.

The simulator's shortcut, not Kafka's: a follower session partition with nothing to say stops being
read until it changes (``quiet_sessions``: the session's ``active`` set, ``last_read_ms`` and
``parked`` are its state here).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar

from kafkasim.core import errors as E
from kafkasim.core import quiet_sessions
from kafkasim.settings.javautil import JavaRandom

INVALID_SESSION_ID = 0     # FetchMetadata.INVALID_SESSION_ID
INITIAL_EPOCH = 0          # FetchMetadata.INITIAL_EPOCH: a full fetch asking for a session
FINAL_EPOCH = -1           # FetchMetadata.FINAL_EPOCH: a full fetch without session (sessionless)
_INT_MAX = (1 << 31) - 1
_NONE = E.NONE      # hot-path constant (one global load instead of a module attribute lookup)
#: KafkaServer.MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS (a constant, not a config)
MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS = 120_000
#: KafkaServer/BrokerServer NumFetchSessionCacheShards (3.8+, KAFKA-9401)
NUM_FETCH_SESSION_CACHE_SHARDS = 8


def next_epoch(prev: int) -> int:
    """FetchMetadata.nextEpoch: FINAL stays FINAL; Int.MaxValue wraps to 1 (never back to 0)."""
    if prev < 0:
        return FINAL_EPOCH
    if prev == _INT_MAX:
        return 1
    return prev + 1


def is_full(epoch: int) -> bool:
    """FetchMetadata.isFull: INITIAL_EPOCH or FINAL_EPOCH."""
    return epoch == INITIAL_EPOCH or epoch == FINAL_EPOCH


# ---------------------------------------------------------------------------------------------
# client side
# ---------------------------------------------------------------------------------------------
@dataclass(slots=True)
class FetchSessionHandler:
    """org.apache.kafka.clients.FetchSessionHandler for one destination node.

    ``session_id`` / ``epoch`` are ``nextMetadata``; ``session_partitions`` maps each partition of
    the session to the FetchPartition last sent for it (``sessionPartitions``)."""

    node: int
    session_id: int = INVALID_SESSION_ID
    epoch: int = INITIAL_EPOCH
    session_partitions: dict = field(default_factory=dict)
    # each session partition's place in the session order (for the incremental build over the
    # changed partitions only, quiet_sessions.build_changed)
    session_pos: dict = field(default_factory=dict)
    next_pos: int = 0

    def build(self, wanted: list) -> tuple[tuple, tuple]:
        """Builder.build: the request's (partitions to send, partitions to forget) for the
        FetchPartitions ``wanted`` now (the ready partitions, in the fetcher's order).

        Full: every wanted partition, and they become the session. Incremental: the added
        partitions (in ``wanted``'s order) then the altered ones (in session order); the session
        partitions not wanted any more are forgotten."""
        if is_full(self.epoch):
            self.session_partitions = {(fp.topic, fp.partition): fp for fp in wanted}
            self.session_pos = {tp: i for i, tp in enumerate(self.session_partitions)}
            self.next_pos = len(wanted)
            return tuple(wanted), ()
        session = self.session_partitions
        pos = self.session_pos
        nxt = {(fp.topic, fp.partition): fp for fp in wanted}
        altered = []
        removed = []
        for tp, prev in list(session.items()):
            fp = nxt.pop(tp, None)
            if fp is None:
                del session[tp]
                del pos[tp]
                removed.append(tp)
            elif fp != prev:       # PartitionData.equals: offsets, epochs, max bytes
                session[tp] = fp
                altered.append(fp)
        for tp, fp in nxt.items():
            session[tp] = fp
            pos[tp] = self.next_pos
            self.next_pos += 1
        return tuple(nxt.values()) + tuple(altered), tuple(removed)

    def handle_response(self, resp) -> bool:
        """handleResponse: False when the answer cannot be used (its partitions are ignored)."""
        if resp.error != _NONE:
            if resp.error == E.FETCH_SESSION_ID_NOT_FOUND:
                self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH  # INITIAL
            else:
                self.epoch = INITIAL_EPOCH        # nextCloseExistingAttemptNew
            return False
        session = self.session_partitions
        epoch = self.epoch
        if is_full(epoch):
            # verifyFullFetchResponsePartitions: exactly the session's partitions
            got = {(pd.topic, pd.partition) for pd in resp.partitions}
            if got != session.keys():
                self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
                return False
            if resp.session_id == INVALID_SESSION_ID:
                self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
            else:
                self.session_id, self.epoch = resp.session_id, next_epoch(INITIAL_EPOCH)
            return True
        # verifyIncrementalFetchResponsePartitions: no partition outside the session
        for pd in resp.partitions:
            if (pd.topic, pd.partition) not in session:
                self.epoch = INITIAL_EPOCH
                return False
        if resp.session_id == INVALID_SESSION_ID:
            self.session_id, self.epoch = INVALID_SESSION_ID, INITIAL_EPOCH
        else:
            self.epoch = next_epoch(epoch)
        return True

    def handle_error(self) -> None:
        """handleError (timeout, disconnection): close the session, the next fetch is full."""
        self.epoch = INITIAL_EPOCH


# ---------------------------------------------------------------------------------------------
# server side
# ---------------------------------------------------------------------------------------------
@dataclass(slots=True)
class CachedPartition:
    """kafka.server.CachedPartition: the request data of one session partition (named as
    FetchPartition's fields, so the read path takes either) and what the last answer said."""

    topic: str
    partition: int
    fetch_offset: int
    current_leader_epoch: int
    last_fetched_epoch: int
    log_start_offset: int            # the fetcher's (fetcherLogStartOffset)
    partition_max_bytes: int
    high_watermark: int = -1
    local_log_start_offset: int = -1
    pos: int = 0            # place in the session's order (partitionMap), for the lazy read

    def maybe_update_response_data(self, pd, update: bool) -> bool:
        """maybeUpdateResponseData: must the incremental answer carry this partition?"""
        must = len(pd.records.ids) > 0
        if self.high_watermark != pd.high_watermark:
            must = True
            if update:
                self.high_watermark = pd.high_watermark
        if self.local_log_start_offset != pd.log_start_offset:
            must = True
            if update:
                self.local_log_start_offset = pd.log_start_offset
        if pd.preferred_read_replica >= 0:
            must = True
        if pd.error != E.NONE:
            if update:
                self.high_watermark = -1
            must = True
        if pd.diverging_epoch is not None:
            must = True
        return must


    def update_request_params(self, fp) -> None:
        """updateRequestParams: the fetch position and limits the request sent."""
        self.partition_max_bytes = fp.partition_max_bytes
        self.fetch_offset = fp.fetch_offset
        self.log_start_offset = fp.log_start_offset
        self.current_leader_epoch = fp.current_leader_epoch
        self.last_fetched_epoch = fp.last_fetched_epoch


def _cached(fp, pd=None) -> CachedPartition:
    cp = CachedPartition(fp.topic, fp.partition, fp.fetch_offset, fp.current_leader_epoch,
                         fp.last_fetched_epoch, fp.log_start_offset, fp.partition_max_bytes)
    if pd is not None:
        cp.high_watermark = pd.high_watermark
        cp.local_log_start_offset = pd.log_start_offset
    return cp


@dataclass(slots=True, eq=False)
class FetchSession:
    """kafka.server.FetchSession. ``partitions`` keeps the session order (partitionMap)."""

    id: int
    privileged: bool                 # a follower's session
    partitions: dict
    creation_ms: int
    last_used_ms: int
    epoch: int
    cached_size: int = -1
    # the cache's evictableByPrivileged / evictableByAll memberships, decided at touch()
    evictable_by_privileged: bool = False
    evictable_by_all: bool = False
    # the lazy read (quiet_sessions): the follower, the session partitions read on each fetch (the
    # others are quiet), the time of the last read, a fetch parked in the purgatory
    replica_id: int = -1
    active: dict = field(default_factory=dict)
    last_read_ms: int = -1
    parked: object = None
    next_pos: int = 0
    closed: bool = False

    def place(self, cp: CachedPartition) -> None:
        """Put ``cp`` at the end of the session order."""
        cp.pos = self.next_pos
        self.next_pos += 1

    def evictable_key(self) -> tuple:
        """EvictableKey(privileged, size, id)."""
        return (self.privileged, self.cached_size, self.id)

    def update(self, fetch_data, to_forget) -> None:
        """FetchSession.update: add or update the sent partitions (CachedPartition.
        updateRequestParams), remove the forgotten; a partition sent is read again."""
        parts = self.partitions
        active = self.active
        for fp in fetch_data:
            tp = (fp.topic, fp.partition)
            cp = parts.get(tp)
            if cp is None:
                cp = parts[tp] = _cached(fp)
                self.place(cp)
            else:
                cp.update_request_params(fp)
            active[tp] = cp
        for tp in to_forget:
            tp = tuple(tp)
            parts.pop(tp, None)
            active.pop(tp, None)


@dataclass(slots=True)
class FetchSessionCacheShard:
    """kafka.server.FetchSessionCache (one shard of it from 3.8, FetchSessionCacheShard)."""

    max_entries: int
    eviction_ms: int
    session_id_range: int
    shard_num: int
    rng: JavaRandom
    sessions: dict = field(default_factory=dict)
    num_partitions: int = 0
    evictions: int = 0
    removed: list = field(default_factory=list)   # sessions removed, for the lazy read

    def new_session_id(self) -> int:
        """newSessionId: random in [max(1, shard * range), (shard + 1) * range), unused."""
        lo = max(1, self.shard_num * self.session_id_range)
        hi = (self.shard_num + 1) * self.session_id_range
        while True:
            sid = lo + self.rng.next_int(hi - lo)
            if sid != INVALID_SESSION_ID and sid not in self.sessions:
                return sid

    def maybe_create_session(self, now: int, privileged: bool, size: int, create,
                             replica_id: int = -1) -> int:
        """maybeCreateSession: a new session if a slot is free or one can be evicted, else
        INVALID_SESSION_ID (the fetch stays full)."""
        if len(self.sessions) < self.max_entries or \
                self.try_evict(privileged, (privileged, size, 0), now):
            parts = create()
            session = FetchSession(self.new_session_id(), privileged, parts, now, now,
                                   next_epoch(INITIAL_EPOCH), replica_id=replica_id,
                                   active=dict(parts))
            for cp in parts.values():
                session.place(cp)
            self.sessions[session.id] = session
            self.touch(session, now)
            return session.id
        return INVALID_SESSION_ID

    def try_evict(self, privileged: bool, key: tuple, now: int) -> bool:
        """tryEvict: the least recently used session if stale (unused for more than
        eviction_ms), else the smallest evictable entry if ``key`` is not below it."""
        if not self.sessions:
            return False
        lru = min(self.sessions.values(), key=lambda s: (s.last_used_ms, s.id))
        if now - lru.last_used_ms > self.eviction_ms:
            self.remove(lru)
            self.evictions += 1
            return True
        pool = [s for s in self.sessions.values()
                if (s.evictable_by_privileged if privileged else s.evictable_by_all)]
        if not pool:
            return False
        victim = min(pool, key=FetchSession.evictable_key)
        if key < victim.evictable_key():
            return False
        self.remove(victim)
        self.evictions += 1
        return True

    def get(self, session_id: int) -> FetchSession | None:
        """FetchSessionCacheShard.get: the session, or None."""
        return self.sessions.get(session_id)

    def size(self) -> int:
        """FetchSessionCacheShard.size: the sessions held."""
        return len(self.sessions)

    def total_partitions(self) -> int:
        """FetchSessionCacheShard.totalPartitions: the partitions of all its sessions."""
        return self.num_partitions

    def remove(self, session: FetchSession | int) -> FetchSession | None:
        """FetchSessionCacheShard.remove, by session or by session id: the removed session,
        or None if it was not cached."""
        if isinstance(session, int):
            session = self.sessions.get(session)
            if session is None:
                return None
        out = self.sessions.pop(session.id, None)
        if out is not None:
            self.num_partitions -= max(0, session.cached_size)
            session.closed = True
            self.removed.append(session)
        return out

    def touch_incremental(self, session: FetchSession, now: int) -> None:
        """``touch`` for a session already touched once (cached_size >= 0), writing only what
        changes: the size, and the evictable sets once the session is older than eviction_ms
        (time only grows, so it stays so; until then evictableByPrivileged stays what the
        first touch made it)."""
        session.last_used_ms = now
        size = len(session.partitions)
        if size != session.cached_size:
            self.num_partitions += size - session.cached_size
            session.cached_size = size
        if not session.evictable_by_all and now - session.creation_ms > self.eviction_ms:
            session.evictable_by_privileged = session.evictable_by_all = True

    def touch(self, session: FetchSession, now: int) -> None:
        """touch: last used now, the size re-counted, the evictable sets re-decided (a
        privileged session is evictable only once older than eviction_ms)."""
        session.last_used_ms = now
        if session.cached_size != -1:
            self.num_partitions -= session.cached_size
        session.cached_size = len(session.partitions)
        old = now - session.creation_ms > self.eviction_ms
        session.evictable_by_privileged = (not session.privileged) or old
        session.evictable_by_all = old
        self.num_partitions += session.cached_size


@dataclass(slots=True)
class FetchSessionCache:
    """The broker's session cache: one shard before 3.8, NumFetchSessionCacheShards after
    (new sessions go to the shards in turn, FetchSessionCache.getNextCacheShard)."""

    shards: list
    counter: int = 0

    @staticmethod
    def create(max_slots: int, sharded: bool, seed: int) -> FetchSessionCache:
        rng = JavaRandom(seed)
        if not sharded:
            return FetchSessionCache([FetchSessionCacheShard(
                max_slots, MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS, _INT_MAX, 0, rng)])
        n = NUM_FETCH_SESSION_CACHE_SHARDS
        rng_range = _INT_MAX // n
        return FetchSessionCache([FetchSessionCacheShard(
            max_slots // n, MIN_INCREMENTAL_FETCH_SESSION_EVICTION_MS, rng_range, i, rng)
            for i in range(n)])

    def shard_for(self, session_id: int) -> FetchSessionCacheShard | None:
        shards = self.shards
        i = session_id // shards[0].session_id_range
        return shards[i] if 0 <= i < len(shards) else None

    def next_shard(self) -> FetchSessionCacheShard:
        shard = self.shards[self.counter % len(self.shards)]
        self.counter += 1
        return shard

    def get_cache_shard(self, session_id: int) -> FetchSessionCacheShard:
        """FetchSessionCache.getCacheShard: the shard whose id range holds ``session_id``
        (IndexError, Kafka's IndexOutOfBoundsException, past the last shard)."""
        shard = self.shard_for(session_id)
        if shard is None:
            raise IndexError(f"session id {session_id} is in no shard's range (0 to "
                             f"{len(self.shards) * self.shards[0].session_id_range - 1})")
        return shard

    def get_next_cache_shard(self) -> FetchSessionCacheShard:
        """FetchSessionCache.getNextCacheShard: the shards in turn (``next_shard``)."""
        return self.next_shard()

    def get(self, session_id: int) -> FetchSession | None:
        shard = self.shard_for(session_id)
        return shard.sessions.get(session_id) if shard is not None else None

    def remove(self, session_id: int) -> FetchSession | None:
        shard = self.shard_for(session_id)
        session = shard.sessions.get(session_id) if shard is not None else None
        return shard.remove(session) if session is not None else None

    # metrics (FetchSession.NUM_INCREMENTAL_FETCH_SESSIONS, ...)
    def size(self) -> int:
        return sum(len(s.sessions) for s in self.shards)

    def total_partitions(self) -> int:
        return sum(s.num_partitions for s in self.shards)

    def evictions(self) -> int:
        return sum(s.evictions for s in self.shards)

    def drain_removed(self) -> list:
        """The sessions removed since the last call (their quiet partitions need settling)."""
        out = []
        for shard in self.shards:
            if shard.removed:
                out += shard.removed
                shard.removed = []
        return out


# the FetchContext kinds (each subclass's ``kind``)
SESSIONLESS = "sessionless"   # SessionlessFetchContext
FULL = "full"                 # FullFetchContext
INCREMENTAL = "incremental"   # IncrementalFetchContext
SESSION_ERROR = "error"       # SessionErrorContext


@dataclass(slots=True)
class FetchContext:
    """kafka.server.FetchContext: what a Fetch reads (``partitions``, foreachPartition) and how
    its answer is made (``update_and_generate_response_data``). One subclass per kind."""

    kind: ClassVar[str]
    req: object
    session: FetchSession | None = None
    error: str = E.NONE
    # incremental: the session epoch this request moved the session to (nextEpoch of the
    # request's), which the answer checks the session still has (updateAndGenerateResponseData)
    epoch: int = INITIAL_EPOCH

    def partitions(self):
        """foreachPartition: the request's partitions."""
        return self.req.partitions

    def update_and_generate_response_data(self, cache: FetchSessionCache, datas, now: int,
                                          privileged: bool) -> tuple[str, int, tuple]:
        """updateAndGenerateResponseData: (error, session id, partitions) of the answer; here
        every partition read, and no session."""
        return E.NONE, INVALID_SESSION_ID, tuple(datas)


@dataclass(slots=True)
class SessionlessFetchContext(FetchContext):
    """A fetch without session (FINAL_EPOCH; every Fetch before 1.1)."""

    kind: ClassVar[str] = SESSIONLESS


@dataclass(slots=True)
class FullFetchContext(FetchContext):
    """A full fetch (INITIAL_EPOCH): its answer may open a session of its partitions
    (FetchSessionCache.maybeCreateSession, which may evict another)."""

    kind: ClassVar[str] = FULL

    def update_and_generate_response_data(self, cache: FetchSessionCache, datas, now: int,
                                          privileged: bool) -> tuple[str, int, tuple]:
        fps = self.req.partitions

        def create() -> dict:
            return {(fp.topic, fp.partition): _cached(fp, pd)
                    for fp, pd in zip(fps, datas, strict=True)}
        sid = cache.next_shard().maybe_create_session(now, privileged, len(datas), create,
                                                      self.req.replica_id)
        return E.NONE, sid, tuple(datas)


@dataclass(slots=True)
class IncrementalFetchContext(FetchContext):
    """An incremental fetch of ``session``: it reads the session's partitions (a follower's
    quiet ones excepted, ``quiet_sessions``) and answers those with something to say."""

    kind: ClassVar[str] = INCREMENTAL

    def partitions(self):
        """foreachPartition: the session's partitions, in session order."""
        return quiet_sessions.partitions_to_read(self.session)

    def update_and_generate_response_data(self, cache: FetchSessionCache, datas, now: int,
                                          privileged: bool) -> tuple[str, int, tuple]:
        return incremental_response(self, datas)


@dataclass(slots=True)
class SessionErrorContext(FetchContext):
    """A session error (FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH): nothing is
    read, the answer carries the error and no partitions."""

    kind: ClassVar[str] = SESSION_ERROR

    def partitions(self):
        return []

    def update_and_generate_response_data(self, cache: FetchSessionCache, datas, now: int,
                                          privileged: bool) -> tuple[str, int, tuple]:
        return self.error, INVALID_SESSION_ID, ()


def new_context(cache: FetchSessionCache, req, now: int) -> FetchContext:
    """FetchManager.newContext."""
    sid, epoch = req.session_id, req.session_epoch
    if is_full(epoch):
        if sid != INVALID_SESSION_ID:
            cache.remove(sid)
        return SessionlessFetchContext(req) if epoch == FINAL_EPOCH else FullFetchContext(req)
    shard = cache.shard_for(sid)
    return incremental_context(shard, shard.sessions.get(sid) if shard is not None else None,
                               req, now)


def incremental_context(shard: FetchSessionCacheShard | None, session: FetchSession | None,
                        req, now: int) -> FetchContext:
    """FetchManager.newContext for an incremental request (neither INITIAL nor FINAL epoch), its
    session already looked up in ``shard`` (None: no such session). Only an emptied session
    leaves the cache here (into ``shard.removed``, then SESSIONLESS); the others keep it."""
    epoch = req.session_epoch
    if session is None:
        return SessionErrorContext(req, error=E.FETCH_SESSION_ID_NOT_FOUND)
    if session.epoch != epoch:
        return SessionErrorContext(req, error=E.INVALID_FETCH_SESSION_EPOCH)
    session.update(req.partitions, req.to_forget)
    if not session.partitions:
        shard.remove(session)
        return SessionlessFetchContext(req)
    shard.touch_incremental(session, now)
    session.epoch = next_epoch(epoch)
    return IncrementalFetchContext(req, session, E.NONE, session.epoch)


def response_partitions(cache: FetchSessionCache, fctx: FetchContext, datas, now: int,
                        privileged: bool) -> tuple[str, int, tuple]:
    """updateAndGenerateResponseData: (error, session id, partitions) of the answer."""
    return fctx.update_and_generate_response_data(cache, datas, now, privileged)


def incremental_response(fctx: FetchContext, datas) -> tuple[str, int, tuple]:
    """IncrementalFetchContext.updateAndGenerateResponseData: (error, session id, the
    partitions with something to say). Its iterator keeps those with something to say
    (maybeUpdateResponseData), a partition with records moving to the end of the session
    order."""
    session = fctx.session
    # expectedEpoch = nextEpoch(the request's epoch), which incremental_context gave the session
    if session.epoch != fctx.epoch:
        return E.INVALID_FETCH_SESSION_EPOCH, session.id, ()   # a duplicate request
    parts = session.partitions
    out = []
    for pd in datas:
        tp = (pd.topic, pd.partition)
        cp = parts.get(tp)
        if cp is None:
            continue
        if pd.records.ids:
            # records: maybeUpdateResponseData is true whatever else; what it records (the
            # answer's HW, -1 on error, and log start offset), then to the end of the session
            # (fairness)
            cp.high_watermark = pd.high_watermark if pd.error == _NONE else -1
            cp.local_log_start_offset = pd.log_start_offset
            out.append(pd)
            if len(parts) > 1:   # (a session of one partition is in order already)
                del parts[tp]
                parts[tp] = cp
                session.place(cp)
        elif cp.maybe_update_response_data(pd, True):
            out.append(pd)
    return _NONE, session.id, tuple(out)
