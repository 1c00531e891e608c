"""``ReplicaManager``: a broker's partitions, produce and fetch handling, and the two purgatories.

kafka.server.ReplicaManager reduced to replication (fact sheet §1-4): ``append_records`` with acks
0/1/all and the min-ISR pre-check, ``fetch_messages`` for followers and consumers,
``DelayedProduce``
completed when the HW passes the batch, ``DelayedFetch`` parked up to MaxWaitMs and woken by LEO
growth (followers) or HW growth (consumers), and the ``isr-expiration`` task.
"""

from __future__ import annotations

from bisect import insort
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkasim import events as ev
from kafkasim.protocol import errors as E
from kafkasim.protocol import fetch_session, producer_state, rules
from kafkasim.protocol.fetch_session import (
    FINAL_EPOCH,
    INCREMENTAL,
    INVALID_SESSION_ID,
    incremental_context,
    incremental_partitions,
)
from kafkasim.protocol.fetcher import (
    FETCHING,
    TRUNCATING,
    PartitionFetchState,
    ReplicaFetcherThread,
    become_follower_needed,
    fetcher_id_for,
)
from kafkasim.protocol.messages import (
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
    PartitionState,
    ProduceRequest,
    ProduceResponse,
)
from kafkasim.protocol.partition import Partition
from kafkasim.storage.leader_epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
from kafkasim.storage.log import RecordChunk

if TYPE_CHECKING:   # types only: no import of the context at run time
    from kafkasim.protocol.interfaces import ReplicaManagerContext

# a FetchResponse, ProduceResponse, DelayedFetch or DelayedProduce whose
# fields the hot paths set one by one: a class call runs the generated __init__ in an
# interpreter frame of its own (type.__call__), twice the instructions of the slot stores
_new = object.__new__
# a FetchPartitionData (a NamedTuple): its generated __new__ is a Python function, the C one is not
_new_tuple = tuple.__new__
_NONE = E.NONE


def select_read_replica(ctx: ReplicaManagerContext, part: Partition, fetch_offset: int,
                        client_rack: str) -> int:
    """RackAwareReplicaSelector (KIP-392): the leader, unless a caught-up in-sync follower sits
    in the consumer's rack; among those the most caught-up (highest LEO, then the most recently
    caught up, then the higher broker id)."""
    racks = ctx.cluster_racks()
    leader = ctx.id
    if racks.get(leader) == client_rack:
        return leader
    now = ctx.now
    candidates = []
    for r, st in part.remote.items():
        if r in part.isr and st.log_end_offset >= fetch_offset and \
                st.log_start_offset <= fetch_offset and racks.get(r) == client_rack:
            candidates.append((-st.log_end_offset, now - st.last_caught_up_time_ms, -r))
    if not candidates:
        return leader
    return -min(candidates)[2]


def _check_current_leader_epoch(rules, part: Partition, current_leader_epoch: int) -> str | None:
    """Partition.checkCurrentLeaderEpoch (KIP-320, 2.1+): a request's CurrentLeaderEpoch below
    the local leader epoch is FENCED_LEADER_EPOCH, above it UNKNOWN_LEADER_EPOCH; -1 = absent."""
    if current_leader_epoch < 0 or not rules.current_leader_epoch_fencing:
        return None
    if current_leader_epoch < part.leader_epoch:
        return E.FENCED_LEADER_EPOCH
    if current_leader_epoch > part.leader_epoch:
        return E.UNKNOWN_LEADER_EPOCH
    return None


def _fetch_error(fp, err: str, hw: int = -1, ls: int = -1, leo: int = -1) -> FetchPartitionData:
    return FetchPartitionData(fp.topic, fp.partition, err, hw, ls,
                              RecordChunk.empty(fp.fetch_offset), None, leo)


@dataclass(slots=True)
class DelayedProduce:
    """An acks=all produce waiting for the HW (kafka.server.DelayedProduce)."""

    id: int
    client: str
    correlation_id: int
    deadline_ms: int
    # tp -> [required offset, done, error, base offset]
    status: dict
    # the purgatory timeout's id (ctx.schedule_timeout; None once fired): the operation is
    # its timeout, and taking it out of the purgatory cancels it
    timeout_id: object = None


@dataclass(slots=True)
class DelayedFetch:
    """A fetch parked until enough bytes are available or MaxWaitMs passes.

    ``partitions`` are the fetchInfos read (the request's, or with an incremental fetch session
    every session partition); ``context`` the request's FetchContext (None: sessionless)."""

    id: int
    src: int | str
    request: FetchRequest
    deadline_ms: int
    # the purgatory timeout's id (ctx.schedule_timeout; None once fired): the operation is
    # its timeout, and taking it out of the purgatory cancels it
    timeout_id: object = None
    partitions: tuple | list = ()
    context: fetch_session.FetchContext | None = None


class ReplicaManager:
    __slots__ = ("partitions", "delayed_produce", "produce_waiters", "delayed_fetch",
                 "follower_fetch_waiters", "consumer_fetch_waiters", "next_delayed_id",
                 "fetch_sessions", "quiet")

    def __init__(self) -> None:
        self.partitions: dict[tuple[str, int], Partition] = {}
        self.delayed_produce: dict[int, DelayedProduce] = {}
        self.produce_waiters: dict[tuple[str, int], list[int]] = {}
        self.delayed_fetch: dict[int, DelayedFetch] = {}
        self.follower_fetch_waiters: dict[tuple[str, int], list[int]] = {}
        self.consumer_fetch_waiters: dict[tuple[str, int], list[int]] = {}
        self.next_delayed_id = 0
        # KIP-227: the broker's FetchSessionCache (FetchManager), made at the first session fetch
        self.fetch_sessions: fetch_session.FetchSessionCache | None = None
        # the lazy read (fetch_session.LAZY): tp -> the follower sessions where it is quiet
        self.quiet: dict[tuple[str, int], list] = {}

    # -- becomeLeaderOrFollower: makeLeaders / makeFollowers ------------------------------------
    # (the controller's LeaderAndIsr in ZooKeeper mode; ReplicaManager.applyDelta in KRaft)
    def become_leader_or_follower(self, ctx: ReplicaManagerContext, src,
                                  msg: LeaderAndIsrRequest) -> None:
        """ReplicaManager.becomeLeaderOrFollower: a request from an older controller epoch is
        refused; otherwise each partition this broker hosts becomes leader or follower, and the
        controller gets each partition's error."""
        if msg.controller_epoch < ctx.metadata.controller_epoch:
            ctx.send(src, LeaderAndIsrResponse(msg.controller_epoch, E.STALE_CONTROLLER_EPOCH))
            return
        ctx.metadata.controller_epoch = msg.controller_epoch
        ctx.metadata.controller_id = msg.controller_id
        errors = []
        for st in msg.partition_states:
            if ctx.id not in st.replicas:
                continue
            errors.append((st.topic, st.partition, self.apply_partition_state(ctx, st)))
        ctx.send(src, LeaderAndIsrResponse(msg.controller_epoch, E.NONE, tuple(errors)))

    def apply_partition_state(self, ctx: ReplicaManagerContext, st: PartitionState,
                              kraft: bool = False, recovering: int = 0) -> str:
        """Become leader or follower of one partition: ReplicaManager.becomeLeaderOrFollower's
        per-partition step (ZooKeeper mode) or ReplicaManager.applyDelta's (KRaft: every change
        of a hosted partition, ISR-only ones included, is applied; only a state older than the
        partition's partition epoch is skipped). Returns the partition's error."""
        tp = (st.topic, st.partition)
        part = self.partitions.get(tp)
        if part is not None and not kraft and st.leader_epoch <= part.leader_epoch:
            return E.STALE_CONTROLLER_EPOCH
        if part is None:
            part = Partition(st.topic, st.partition, ctx.id,
                             ctx.log_manager.get_or_create_log(ctx, st.topic, st.partition))
            self.partitions[tp] = part
        elif part.is_stale_partition_epoch(ctx, st.partition_epoch) or \
                (kraft and st.partition_epoch < part.partition_epoch):
            # makeLeader / makeFollower return false: the state change is skipped
            ctx.trace("leader_and_isr_ignored", st.topic, st.partition,
                      ev.LeaderAndIsrIgnored(st.partition_epoch, part.partition_epoch))
            return E.NONE
        if ctx.rules.alter_isr_clear_pending_on_leader_and_isr:
            ctx.alter_partition_manager.clear_pending(tp)   # alterIsrManager.clearPending (2.7-2.8)
        if st.leader == ctx.id:
            self.make_leader(ctx, part, st, kraft, recovering)
        else:
            self.make_follower(ctx, part, st)
        return E.NONE

    def make_leader(self, ctx: ReplicaManagerContext, part: Partition, st: PartitionState,
                    kraft: bool, recovering: int) -> None:
        """ReplicaManager.makeLeaders for one partition: stop fetching it, Partition.makeLeader."""
        if kraft and part.is_leader and st.leader_epoch == part.leader_epoch:
            # applyDelta: an ISR / assignment change under the same leader epoch
            moved = part.make_leader(ctx, st.leader_epoch, st.isr, st.replicas,
                                     st.partition_epoch, st.controller_epoch)
            if moved:
                self.on_hw_increased(ctx, part)
            else:
                self.try_complete_produces(ctx, part.tp)
            return
        self.remove_fetcher_for_partition(ctx, part.tp)
        moved = part.make_leader(ctx, st.leader_epoch, st.isr, st.replicas,
                                 st.partition_epoch, st.controller_epoch)
        ctx.trace("become_leader", st.topic, st.partition,
                  ev.BecomeLeader(st.leader_epoch, tuple(st.isr)))
        if kraft and recovering:
            # Partition.makeLeader: a leader elected uncleanly marks the partition
            # RECOVERED (KIP-704); its next AlterPartition tells the controller
            ctx.trace("leader_recovered", st.topic, st.partition,
                      ev.LeaderRecovered(st.leader_epoch))
        if moved:
            self.on_hw_increased(ctx, part)

    def make_follower(self, ctx: ReplicaManagerContext, part: Partition, st: PartitionState
                      ) -> None:
        """ReplicaManager.makeFollowers for one partition: Partition.makeFollower, then (unless
        the leader and its epoch did not change) fail the produces and fetches waiting on it
        as leader, and move its fetcher to the new leader from the right position."""
        tp = part.tp
        was_leader = part.is_leader
        old_leader, old_epoch = part.leader_id, part.leader_epoch
        part.make_follower(ctx, st.leader, st.leader_epoch, st.isr, st.replicas,
                           st.partition_epoch, st.controller_epoch)
        fetching = None
        if not was_leader and st.leader >= 0 and old_leader == st.leader:
            for (leader, _fid), thread in ctx.fetchers.items():
                if leader == st.leader and tp in thread.partitions:
                    fetching = thread.partitions[tp]
        if fetching is not None and \
                not become_follower_needed(ctx.rules, old_epoch, st.leader_epoch):
            # Partition.makeFollower returned false: the partition keeps its fetcher and fetch
            # position (no truncation). Fetches before 2.1 carry no epoch; the stored one only
            # keeps a rule override of fencing consistent.
            fetching.current_leader_epoch = st.leader_epoch
            for thread in ctx.fetchers.values():
                if tp in thread.partitions:
                    thread.changed(tp)
            ctx.trace("become_follower", st.topic, st.partition,
                      ev.BecomeFollowerSkipped(st.leader, st.leader_epoch))
            return
        ctx.trace("become_follower", st.topic, st.partition,
                  ev.BecomeFollower(st.leader, st.leader_epoch))
        if was_leader:
            self.fail_waiting(ctx, tp)
        self.remove_fetcher_for_partition(ctx, tp)
        if st.leader >= 0:
            self.add_fetcher_for_partition(ctx, tp, st.leader,
                                           self.initial_fetch_state(ctx, part, st.leader_epoch))

    def stop_replica(self, ctx: ReplicaManagerContext, tp, delete: bool) -> None:
        """ReplicaManager.stopReplicas for one partition (StopReplica in ZooKeeper mode; in
        KRaft, applyDelta for a replica the metadata no longer lists, which is deleted): stop
        its fetcher; with deletePartition=true also drop the Partition and delete its log (a
        replica a reassignment removed). With deletePartition=false the Partition stays."""
        self.remove_fetcher_for_partition(ctx, tp)
        ctx.partition_changed(tp)
        part = self.partitions.get(tp)
        if part is not None and part.is_leader:
            self.fail_waiting(ctx, tp)
        if delete:
            self.partitions.pop(tp, None)
            ctx.log_manager.delete_log(tp)
        ctx.trace("stop_replica", tp[0], tp[1], ev.StopReplica(bool(delete)))

    @staticmethod
    def add_fetcher_for_partition(ctx: ReplicaManagerContext, tp, leader_id: int,
                                  state: PartitionFetchState) -> None:
        """ReplicaFetcherManager.addFetcherForPartitions for one partition: the fetcher thread
        for (leader, fetcher id) takes it, made the first time."""
        fid = fetcher_id_for(tp[0], tp[1], ctx.config["num.replica.fetchers"])
        key = (leader_id, fid)
        thread = ctx.fetchers.get(key)
        if thread is None:
            thread = ReplicaFetcherThread(ctx.id, leader_id, fid)
            ctx.fetchers[key] = thread
        thread.add_partition(tp, state)
        thread.do_work(ctx)

    @staticmethod
    def remove_fetcher_for_partition(ctx: ReplicaManagerContext, tp) -> None:
        """ReplicaFetcherManager.removeFetcherForPartitions for one partition: a thread left
        with no partition stops."""
        fetchers = ctx.fetchers
        for key in list(fetchers):
            thread = fetchers[key]
            if tp in thread.partitions and thread.remove_partition(tp) is not None and \
                    not thread.partitions:
                del fetchers[key]

    @staticmethod
    def initial_fetch_state(ctx: ReplicaManagerContext, part: Partition, leader_epoch: int
                            ) -> PartitionFetchState:
        """Where a new follower starts fetching (makeFollowers' InitialFetchState)."""
        log = part.log
        rules = ctx.rules
        if not rules.leader_epoch_truncation:
            # before KIP-101 (0.11): truncate to the local high watermark, then fetch from there
            log.truncate_to(log.high_watermark, "becoming follower: truncate to HW")
            return PartitionFetchState(log.log_end_offset, leader_epoch, FETCHING)
        if rules.fetch_diverging_epoch and log.latest_epoch() >= 0:
            # 2.8+: fetch from the LEO with LastFetchedEpoch; the leader reports divergence
            return PartitionFetchState(log.log_end_offset, leader_epoch, FETCHING,
                                       last_fetched_epoch=log.latest_epoch())
        return PartitionFetchState(log.high_watermark, leader_epoch, TRUNCATING)

    # -- produce ----------------------------------------------------------------------------
    def append_records(self, ctx: ReplicaManagerContext, src, req: ProduceRequest) -> None:
        """ReplicaManager.appendRecords: append each partition's batch on its leader, then
        answer at once (acks 0/1, or every acks=all batch already committed) or park the request
        in the produce purgatory until the HW passes it (``DelayedProduce``)."""
        results: dict[tuple[str, int], list] = {}
        waiting = []   # the partitions whose batch waits for the HW (acks=all)
        now = ctx.now   # the request's time: the batches' timestamps, the purgatory's deadline
        acks = req.acks
        for entry in req.partitions:
            tp = (entry[0], entry[1])
            st = results[tp] = self._append_to_leader(ctx, acks, entry, tp, now)
            if not st[1]:
                waiting.append(tp)
        if acks == 0:
            return  # acks=0: the broker sends no response at all
        if waiting:
            self._park_produce(ctx, src, req, results, waiting, now)
        else:
            self._respond_produce(ctx, src, req.correlation_id, results)

    def _append_to_leader(self, ctx: ReplicaManagerContext, acks: int, entry: tuple, tp,
                          now: int) -> list:
        """Partition.appendRecordsToLeader for one partition's batch: the min-ISR pre-check
        (acks=all), the idempotent producer's duplicate/sequence check, the append, the HW.
        Returns the partition's status: [required offset, done, error, base offset]."""
        topic, partition, ids, sizes, pid, pepoch, base_seq = entry
        part = self.partitions.get(tp)
        if part is None or not part.is_leader:
            err = ctx.not_leader_error() if ctx.topic_exists(topic) \
                else E.UNKNOWN_TOPIC_OR_PARTITION
            return [0, True, err, -1]
        if acks == -1 and not part.full_isr_meets_min_isr(ctx):
            min_isr = part.effective_min_isr(ctx)
            if rules.check_min_isr_before_append(part.isr, min_isr) != E.NONE:
                ctx.trace("produce_rejected", topic, partition,
                          ev.ProduceRejected(min_isr, tuple(part.isr)))
                return [0, True, E.NOT_ENOUGH_REPLICAS, -1]
        log = part.log
        # (producer id, epoch, first seq, last seq) of the batch header; none for a producer that
        # is not idempotent (RecordBatch.NO_SEQUENCE)
        if base_seq < 0:
            ident = None
            verdict = "append"
        else:
            ident = (pid, pepoch, base_seq, base_seq + len(ids) - 1)
            verdict, dup_offset = producer_state.check_append(log.producer_states, ident)
        if verdict == "append":
            first, last = log.append_as_leader(ids, sizes, part.leader_epoch, now,
                                               pid, pepoch, base_seq)
            if ident is not None:
                producer_state.update(log.producer_states, log.producer_batches[-1:])
            if tp in self.follower_fetch_waiters:   # parked follower fetches may answer now
                self._wake(ctx, self.follower_fetch_waiters, tp)
            if part.maybe_increment_leader_hw(ctx):
                self.on_hw_increased(ctx, part)
        elif verdict == "duplicate":
            # a retried batch already in the log: answer with its original offsets
            first, last = dup_offset, dup_offset + len(ids) - 1
            ctx.trace("produce_duplicate", topic, partition,
                      ev.ProduceDuplicate(ident[0], ident[2], ident[3], first))
        else:
            return [0, True, verdict, -1]
        if acks != -1:
            return [last + 1, True, E.NONE, first]
        if part.log.high_watermark <= last:   # the usual case: followers have to fetch
            return [last + 1, False, E.NONE, first]
        done, err = part.check_enough_replicas_reach_offset(ctx, last + 1)
        return [last + 1, done, err, first]

    def _park_produce(self, ctx: ReplicaManagerContext, src, req: ProduceRequest,
                      results: dict, waiting: list, now: int) -> None:
        """The produce purgatory: wait for the HW on the ``waiting`` partitions, at most the
        request's timeout."""
        # DelayedProduce(id, src, req.correlation_id, now + req.timeout_ms, results),
        # field by field (every acks=all produce)
        dp_id = self.next_delayed_id
        self.next_delayed_id = dp_id + 1
        dp = _new(DelayedProduce)
        dp.id = dp_id
        dp.client = src
        dp.correlation_id = req.correlation_id
        dp.deadline_ms = now + req.timeout_ms
        dp.status = results
        self.delayed_produce[dp_id] = dp
        for tp in waiting:
            self.produce_waiters.setdefault(tp, []).append(dp_id)
        dp.timeout_id = ctx.schedule_timeout(req.timeout_ms, "produce_timeout", dp_id)

    def _respond_produce(self, ctx: ReplicaManagerContext, dst, correlation_id: int,
                         results: dict) -> None:
        parts = []
        for (t, p), st in results.items():
            err = st[2]
            parts.append((t, p, err, st[3] if err == E.NONE else -1))
        resp = _new(ProduceResponse)   # ProduceResponse(correlation_id, tuple(parts))
        resp.correlation_id = correlation_id
        resp.partitions = tuple(parts)
        ctx.send(dst, resp)

    def try_complete_produces(self, ctx: ReplicaManagerContext, tp) -> None:
        ids = self.produce_waiters.pop(tp, None)   # the requests still waiting go back below
        if not ids:
            return
        part = self.partitions.get(tp)
        remaining = []
        delayed = self.delayed_produce
        for dp_id in ids:
            dp = delayed.get(dp_id)
            if dp is None:
                continue
            status = dp.status
            st = status[tp]
            if part is None:
                done, err = True, ctx.not_leader_error()
            elif part.is_leader and part.log.high_watermark < st[0]:
                remaining.append(dp_id)   # the common case: the HW is not there yet
                continue
            else:
                done, err = part.check_enough_replicas_reach_offset(ctx, st[0])
            if done:
                st[1] = True
                if err == E.NOT_LEADER_OR_FOLLOWER:   # the error this version answers with
                    err = ctx.not_leader_error()
                st[2] = err
                if len(status) == 1:
                    # the usual request, of one partition: _respond_produce, inlined
                    del delayed[dp_id]   # and its purgatory timeout
                    resp = _new(ProduceResponse)
                    resp.correlation_id = dp.correlation_id
                    resp.partitions = (tp + (err, st[3] if err == E.NONE else -1),)
                    ctx.send(dp.client, resp)
                elif all(s[1] for s in status.values()):
                    del delayed[dp_id]   # and its purgatory timeout
                    self._respond_produce(ctx, dp.client, dp.correlation_id, status)
            else:
                remaining.append(dp_id)
        if remaining:
            self.produce_waiters[tp] = remaining

    def on_produce_timeout(self, ctx: ReplicaManagerContext, dp_id: int) -> None:
        dp = self.delayed_produce.pop(dp_id, None)
        if dp is None:
            return
        for tp, st in dp.status.items():
            if not st[1]:
                st[1] = True
                st[2] = E.REQUEST_TIMED_OUT  # the records stay in the log and may commit later
                ctx.trace("produce_timed_out", tp[0], tp[1],
                          ev.ProduceTimedOut(self._hw(tp), st[0]))
        self._respond_produce(ctx, dp.client, dp.correlation_id, dp.status)

    def _hw(self, tp) -> int:
        part = self.partitions.get(tp)
        return part.log.high_watermark if part else -1

    def on_hw_increased(self, ctx: ReplicaManagerContext, part: Partition) -> None:
        tp = part.tp
        ctx.trace("hw", part.topic, part.partition, part.log.high_watermark)
        # DelayedOperationPurgatory.checkAndComplete returns at once when nothing watches the
        # key: so do we, without the calls
        if tp in self.produce_waiters:
            self.try_complete_produces(ctx, tp)
        if tp in self.consumer_fetch_waiters:
            self.wake_consumer_fetches(ctx, tp)

    # -- fetch ------------------------------------------------------------------------------
    def session_cache(self, ctx: ReplicaManagerContext) -> fetch_session.FetchSessionCache:
        """The FetchSessionCache (max.incremental.fetch.session.cache.slots; sharded from
        3.8). Session ids are drawn from a JavaRandom seeded by broker id and start time."""
        cache = self.fetch_sessions
        if cache is None:
            cache = self.fetch_sessions = fetch_session.FetchSessionCache.create(
                ctx.config["max.incremental.fetch.session.cache.slots"],
                ctx.rules.fetch_session_cache_sharded, ctx.id * 1_000_003 + ctx.now)
        return cache

    def fetch_messages(self, ctx: ReplicaManagerContext, src, req: FetchRequest) -> None:
        """KafkaApis.handleFetchRequest + ReplicaManager.fetchMessages: the fetch context
        (FetchManager.newContext, KIP-227), then read now or park in the fetch purgatory."""
        fctx = session = None   # session: the follower's incremental session, for the lazy read
        now = ctx.now
        if ctx.rules.fetch_sessions and (req.session_epoch != FINAL_EPOCH
                                         or req.session_id != INVALID_SESSION_ID):
            cache = self.fetch_sessions   # session_cache, inlined (every request)
            if cache is None:
                cache = self.session_cache(ctx)
            epoch = req.session_epoch
            if epoch > 0:
                # FetchManager.newContext's session lookup, done once for the lazy read too
                sid = req.session_id
                # FetchSessionCache.shard_for, inlined (every request): the shard of the id's
                # range, none past the last
                shards = cache.shards
                i = sid // shards[0].session_id_range
                try:
                    shard = shards[i] if i >= 0 else None
                except IndexError:
                    shard = None
                cached = shard.sessions.get(sid) if shard is not None else None
                # only a session with quiet partitions (active short of partitions) wakes any
                if cached is not None and len(cached.active) < len(cached.partitions) and \
                        cached.epoch == epoch and fetch_session.LAZY:
                    self._wake_named(cached, req)
                fctx = incremental_context(shard, cached, req, now)
            else:
                fctx = fetch_session.new_context(cache, req, now)
            kind = fctx.kind
            if kind == INCREMENTAL:   # the session stays: nothing to drain
                cached = fctx.session
                # FetchContext.partitions, inlined: with the lazy read, a follower's session reads
                # its active partitions, in session order
                if fetch_session.LAZY:
                    if cached.privileged:
                        parts = list(cached.active.values())
                        if len(parts) > 1:
                            parts.sort(key=fetch_session._pos)
                    else:
                        parts = list(cached.partitions.values())
                    if req.replica_id >= 0:
                        session = cached
                        session.last_read_ms = now
                else:
                    parts = list(cached.partitions.values())
            else:   # (only an incremental context has a session)
                for gone in cache.drain_removed():
                    self._settle_session(gone)
                parts = [] if kind == fetch_session.SESSION_ERROR else req.partitions
        else:
            parts = req.partitions   # sessionless
        datas = []
        total = 0
        immediate = False   # an error or a diverging epoch answers now
        # a fetch of one partition that may wait (MaxWaitMs and MinBytes above 0) is parked when
        # its read has nothing to answer: that answer is never sent, so it is not built (the
        # read returns None; the usual follower fetch, caught up to the leader's LEO)
        parkable = len(parts) == 1 and req.max_wait_ms > 0 and req.min_bytes > 0
        for fp in parts:
            pd = self._read_partition(ctx, req, fp, True, session, now, parkable)
            if pd is None:
                break   # to the purgatory
            datas.append(pd)
            if pd.error != E.NONE or pd.diverging_epoch is not None:
                immediate = True
            if pd.records.ids:
                total += sum(pd.records.sizes)
        else:   # (no fetchInfos at all, not even quiet ones, answers now too)
            if immediate or total >= req.min_bytes or req.max_wait_ms <= 0 or \
                    not parts and session is None:
                ctx.send(src, self._fetch_response(ctx, req, fctx, datas))
                return
        if session is not None and (len(session.active) != len(parts) or session.closed
                                    or not session.privileged):
            # the quiet partitions are not read again, nor watched. (The reads can only take
            # partitions out of an open session's active set: ``parts`` holds when none left.)
            parts = list(session.active.values())
            if len(parts) > 1:
                parts.sort(key=fetch_session._pos)
        # DelayedFetch(id, src, req, now + req.max_wait_ms, -1, parts, fctx), field by field
        # (every parked fetch); timeout_id is set below
        df_id = self.next_delayed_id
        self.next_delayed_id = df_id + 1
        df = _new(DelayedFetch)
        df.id = df_id
        df.src = src
        df.request = req
        df.deadline_ms = now + req.max_wait_ms
        df.partitions = parts
        df.context = fctx
        self.delayed_fetch[df_id] = df
        if session is not None:
            session.parked = df
        # the watchers of a follower's fetch (the lazy read's session is a follower's)
        waiters = self.follower_fetch_waiters if session is not None or req.replica_id >= 0 \
            else self.consumer_fetch_waiters
        for fp in parts:
            waiters.setdefault((fp.topic, fp.partition), []).append(df_id)
        df.timeout_id = ctx.schedule_timeout(req.max_wait_ms, "fetch_timeout", df_id)

    def _fetch_response(self, ctx: ReplicaManagerContext, req: FetchRequest, fctx, datas
                        ) -> FetchResponse:
        """FetchContext.updateAndGenerateResponseData: a full fetch may open a session (and
        evict one), an incremental answer keeps only the partitions with news."""
        if fctx is None:
            return FetchResponse(req.correlation_id, tuple(datas))
        if fctx.kind == fetch_session.INCREMENTAL:   # the usual case: no session made nor lost
            err, sid, parts = fetch_session.incremental_response(fctx, datas)
            fctx.session.parked = None
            return FetchResponse(req.correlation_id, parts, err, sid)
        cache = self.fetch_sessions   # session_cache, inlined (every response)
        if cache is None:
            cache = self.session_cache(ctx)
        # only a full fetch can create a session, and so evict one (maybeCreateSession)
        full = fctx.kind == fetch_session.FULL
        evicted = cache.evictions() if full else 0
        err, sid, parts = fetch_session.response_partitions(cache, fctx, datas, ctx.now,
                                                            req.replica_id >= 0)
        if full:   # only maybeCreateSession removes (evicts) a session here
            if cache.evictions() != evicted:
                ctx.mark_meter("IncrementalFetchSessionEvictionsPerSec",
                               cache.evictions() - evicted)
            for gone in cache.drain_removed():
                self._settle_session(gone)
        if fctx.session is not None:
            fctx.session.parked = None
        return FetchResponse(req.correlation_id, parts, err, sid)

    # -- the lazy read of incremental sessions (fetch_session.LAZY; not Kafka's) ----------------
    def _maybe_quiet(self, ctx: ReplicaManagerContext, session, cp, part: Partition) -> None:
        """After reading ``cp`` for the session's follower (``_read_partition``, which checked
        that the answer has nothing to say: no error, no records, the HW and log start offset
        the session last answered, and still so after the read; and that the HW is at the LEO,
        so no commit is pending that would wake it at once): if the read only refreshed the
        follower's lag clocks, stop reading it until it changes."""
        replica = session.replica_id
        if part.log.log_end_offset != cp.fetch_offset or \
                not part.is_leader or replica not in part.isr or \
                ctx.rulebook.updated_last_caught_up_time_ms is not \
                rules.updated_last_caught_up_time_ms:
            return
        st = part.remote.get(replica)
        if st is None or st.log_end_offset != cp.fetch_offset:
            return
        tp = (cp.topic, cp.partition)
        del session.active[tp]
        self.quiet.setdefault(tp, []).append(session)

    @staticmethod
    def _materialize(part: Partition, session) -> None:
        """What the skipped reads of a quiet partition would have written (Partition.
        updateFollowerFetchState at the leader's LEO): caught up and fetched at the session's
        last read."""
        st = part.remote.get(session.replica_id)
        t = session.last_read_ms
        if st is not None and t >= 0:
            if t > st.last_caught_up_time_ms:
                st.last_caught_up_time_ms = t
            st.last_fetch_time_ms = t

    def unquiet(self, ctx: ReplicaManagerContext, tp) -> None:
        """Something about ``tp`` changed (LEO, HW, ISR, role): every session where it was quiet
        reads it again from its next fetch on; a parked fetch of such a session watches it."""
        sessions = self.quiet.pop(tp, None)
        if not sessions:
            return
        part = self.partitions.get(tp)
        for session in sessions:
            cp = session.partitions.get(tp)
            if cp is None or tp in session.active:
                continue
            if part is not None:
                self._materialize(part, session)
            if session.closed:
                continue
            session.active[tp] = cp
            df = session.parked
            if df is not None and df.id in self.delayed_fetch:
                df.partitions.append(cp)
                df.partitions.sort(key=fetch_session._pos)
                # in parking order, as if it had watched ``tp`` from the start
                insort(self.follower_fetch_waiters.setdefault(tp, []), df.id)

    def _wake_named(self, session, req: FetchRequest) -> None:
        """An incremental request (of ``session``'s current epoch) names or forgets partitions:
        settle those that were quiet (their last read was the session's previous fetch)."""
        parts = session.partitions
        active = session.active
        for fp in req.partitions:
            tp = (fp.topic, fp.partition)
            if tp in parts and tp not in active:
                self._wake_one(session, tp)
        for tp in req.to_forget:
            tp = tuple(tp)
            if tp in parts and tp not in active:
                self._wake_one(session, tp)

    def _wake_one(self, session, tp) -> None:
        self._unquiet(session, tp)
        session.active[tp] = session.partitions[tp]

    def _unquiet(self, session, tp) -> None:
        """``tp`` stops being quiet for ``session``: write its skipped reads' lag clocks and
        drop the session from the partition's quiet list."""
        part = self.partitions.get(tp)
        if part is not None:
            self._materialize(part, session)
        lst = self.quiet.get(tp)
        if lst is not None:
            lst[:] = [s for s in lst if s is not session]
            if not lst:
                del self.quiet[tp]

    def _settle_session(self, session) -> None:
        """A session left the cache: write the lag clocks of its quiet partitions."""
        for tp in session.partitions:
            if tp not in session.active:
                self._unquiet(session, tp)
        session.active = dict(session.partitions)

    def settle_fetch_sessions(self) -> None:
        """Write every quiet partition's lag clocks now (they stay quiet): before the ISR
        check, and for readers of ``Partition.remote`` (Cluster.run does it at its end)."""
        for tp, sessions in self.quiet.items():
            part = self.partitions.get(tp)
            if part is not None:
                for session in sessions:
                    if tp not in session.active:
                        self._materialize(part, session)

    def _read_partition(self, ctx: ReplicaManagerContext, req: FetchRequest, fp,
                        update_follower_state: bool, session=None, now: int | None = None,
                        omit_empty: bool = False, part: Partition | None = None
                        ) -> FetchPartitionData | None:
        """Read one partition for a fetch (Partition.fetchRecords); ``session``: the follower's
        incremental session when its lazy read applies (``fp`` is then its CachedPartition);
        ``now``: the request's time, when the caller has it; ``omit_empty``: None instead of
        an answer without records nor error (the caller parks the fetch); ``part``: the
        partition, when the caller looked it up."""
        if part is None:
            part = self.partitions.get((fp.topic, fp.partition))
        is_follower = req.replica_id >= 0
        if part is None:
            return _fetch_error(fp, ctx.not_leader_error() if ctx.topic_exists(fp.topic)
                                else E.UNKNOWN_TOPIC_OR_PARTITION)
        # Partition.getLocalLog: the CurrentLeaderEpoch check comes first (KIP-320, 2.1+), then
        # the leader requirement, so a stale fetcher at a demoted leader is FENCED_LEADER_EPOCH
        if fp.current_leader_epoch != part.leader_epoch and fp.current_leader_epoch >= 0:
            # (the steady state, the leader's epoch or none, skips the call)
            err = _check_current_leader_epoch(ctx.rules, part, fp.current_leader_epoch)
            if err is not None:
                return _fetch_error(fp, err)
        if not part.is_leader:
            if not is_follower and ctx.rules.fetch_from_follower and part.leader_id >= 0:
                return self._read_as_follower(ctx, part, fp)  # KIP-392
            return _fetch_error(fp, ctx.not_leader_error())
        non_replica = is_follower and req.replica_id not in part.remote
        if non_replica and ctx.rules.fetch_from_non_replica_error:
            # Partition.followerReplicaOrThrow (KAFKA-13837, 3.3+)
            return _fetch_error(fp, E.UNKNOWN_LEADER_EPOCH if fp.current_leader_epoch >= 0
                                else ctx.not_leader_error())
        log = part.log
        hw = log.high_watermark
        leo = log.log_end_offset
        ls = log.log_start_offset
        fetch_offset = fp.fetch_offset
        if is_follower and ctx.rules.fetch_diverging_epoch:
            entries = log.leader_epoch_cache.entries
            last_fetched = fp.last_fetched_epoch
            # a follower on the leader's latest epoch and not past its LEO cannot diverge
            # (endOffsetFor(latest) is the LEO): that steady state skips the lookup, tested
            # first; without a LastFetchedEpoch (-1) there is none
            if not (entries and entries[-1].epoch == last_fetched and fetch_offset <= leo) \
                    and last_fetched >= 0:
                epoch, end = log.leader_epoch_cache.end_offset_for(last_fetched, leo)
                # Partition.readRecords: an epoch the leader cannot place, or (KAFKA-12996,
                # 3.0+) an offset below its log start, is OFFSET_OUT_OF_RANGE, not divergence
                below_start = fetch_offset < ls and \
                    ctx.rules.fetch_offset_below_log_start_before_divergence
                if epoch == UNDEFINED_EPOCH or end == UNDEFINED_EPOCH_OFFSET or below_start:
                    return _fetch_error(fp, E.OFFSET_OUT_OF_RANGE, hw, ls, leo)
                if epoch < last_fetched or end < fetch_offset:
                    return FetchPartitionData(fp.topic, fp.partition, E.NONE, hw, ls,
                                              RecordChunk.empty(fetch_offset), (epoch, end), leo)
        if fetch_offset > leo or fetch_offset < ls:
            return _fetch_error(fp, E.OFFSET_OUT_OF_RANGE, hw, ls, leo)
        if not is_follower and req.rack_id and ctx.config.get("replica.selector.class") \
                and ctx.rules.fetch_from_follower:
            if self.quiet:
                self.settle_fetch_sessions()
            preferred = select_read_replica(ctx, part, fetch_offset, req.rack_id)
            if preferred != ctx.id:
                # tell the consumer where to fetch from; no records in this answer
                return FetchPartitionData(fp.topic, fp.partition, E.NONE, hw, ls,
                                          RecordChunk.empty(fetch_offset), None, leo,
                                          preferred)
        max_offset = leo if is_follower else hw  # read_committed LSO == HW without transactions
        chunk = log.read(fetch_offset, max_offset, fp.partition_max_bytes) \
            if fetch_offset < max_offset else None
        if update_follower_state:
            if non_replica:
                # before 3.3: ReplicaManager.updateFollowerFetchState could not record the
                # position of a broker outside the replica set and answered withEmptyFetchInfo
                # (no error)
                return FetchPartitionData(fp.topic, fp.partition, E.NONE, hw, ls,
                                          RecordChunk.empty(fetch_offset), None, leo)
            if is_follower:
                if part.update_follower_fetch_state(ctx, req.replica_id, fetch_offset,
                                                    fp.log_start_offset, leo, now):
                    self.on_hw_increased(ctx, part)
                # the lazy read: an answer with nothing to say (no records, the HW and log start
                # offset the session last answered, unchanged by the read) may leave it quiet;
                # not while the HW is below the LEO: the next commit would wake it at once
                if session is not None and fetch_offset == leo and hw == leo and \
                        hw == fp.high_watermark and \
                        ls == fp.local_log_start_offset and log.high_watermark == hw and \
                        log.log_start_offset == ls:
                    self._maybe_quiet(ctx, session, fp, part)
        if chunk is None:   # nothing to read
            if omit_empty:
                return None
            chunk = RecordChunk.empty(fetch_offset)
        # FetchPartitionData(fp.topic, fp.partition, E.NONE, hw, ls, chunk, None, leo) by the C
        # tuple constructor (every read: a follower fetch reads on arrival and again when it
        # completes)
        return _new_tuple(FetchPartitionData,
                          (fp.topic, fp.partition, _NONE, hw, ls, chunk, None, leo, -1))

    def _read_as_follower(self, ctx: ReplicaManagerContext, part: Partition, fp
                          ) -> FetchPartitionData:
        """A consumer fetch served by a follower: records below the follower's own HW."""
        log = part.log
        hw, leo, ls = log.high_watermark, log.log_end_offset, log.log_start_offset
        if fp.fetch_offset > leo or fp.fetch_offset < ls:
            return _fetch_error(fp, E.OFFSET_OUT_OF_RANGE, hw, ls, leo)
        chunk = log.read(fp.fetch_offset, hw, fp.partition_max_bytes)
        return FetchPartitionData(fp.topic, fp.partition, E.NONE, hw, ls, chunk, None, leo)

    def _try_complete_fetch(self, ctx: ReplicaManagerContext, df_id: int, force: bool) -> bool:
        """DelayedFetch.tryComplete: answer the parked fetch ``df_id`` if ``force`` (its time is
        up, or leadership moved), or if some partition must answer now (the leader epoch moved
        past the one the fetch was sent in) or enough bytes are there (fetch.min.bytes)."""
        df = self.delayed_fetch.get(df_id)
        if df is None:
            return True
        request = df.request
        fps = df.partitions
        datas = []   # the answer's reads (DelayedFetch.onComplete), in the fetch's order
        if not force:
            # the bytes the fetch could return now, counted up to min.bytes. Each partition
            # served is read first: a read of at least min.bytes settles the count (the bytes
            # available hold it), else Log.bytes_between counts; too few bytes drop the reads
            min_bytes = request.min_bytes
            total = 0
            for fp in fps:
                part = self.partitions.get((fp.topic, fp.partition))
                if part is None or not part.is_leader and not (request.replica_id < 0 and
                                                               ctx.rules.fetch_from_follower and
                                                               part.leader_id >= 0):
                    break   # not served here (any more): must answer now
                cle = fp.current_leader_epoch
                if cle < part.leader_epoch and cle >= 0:
                    break   # fenced: must answer now
                pd = self._read_partition(ctx, request, fp, False, part=part)
                datas.append(pd)
                if total < min_bytes:
                    records = pd.records
                    if records.ids and sum(records.sizes) >= min_bytes:
                        total = min_bytes   # the usual follower fetch (min.bytes 1)
                        continue
                    log = part.log
                    end = log.log_end_offset if request.replica_id >= 0 else log.high_watermark
                    if end > fp.fetch_offset:
                        total += log.bytes_between(fp.fetch_offset, end, min_bytes)
            else:
                if total < min_bytes:
                    return False
                fps = ()   # every partition read
        del self.delayed_fetch[df_id]   # and its purgatory timeout
        if fps:   # forced, or a partition must answer now: the reads not made above
            # (a loop, not a comprehension: one call fewer per completion, CPython 3.11)
            for fp in fps[len(datas):]:
                datas.append(self._read_partition(ctx, request, fp, False))
        fctx = df.context
        if fctx is not None and fctx.kind == INCREMENTAL:
            # _fetch_response's usual case, inlined (every completion of a follower's fetch)
            session = fctx.session
            session.parked = None
            # FetchResponse(request.correlation_id, *incremental_response(fctx, datas)), field
            # by field, incremental_response inlined: a session no longer at the request's epoch
            # (a duplicate request) answers INVALID_FETCH_SESSION_EPOCH and no partitions
            resp = _new(FetchResponse)
            resp.correlation_id = request.correlation_id
            if session.epoch == fctx.epoch:
                resp.partitions = incremental_partitions(session, datas)
                resp.error = _NONE
            else:
                resp.partitions = ()
                resp.error = E.INVALID_FETCH_SESSION_EPOCH
            resp.session_id = session.id
            ctx.send(df.src, resp)
        else:
            ctx.send(df.src, self._fetch_response(ctx, request, fctx, datas))
        return True

    def _wake(self, ctx: ReplicaManagerContext, waiters: dict, tp) -> None:
        ids = waiters.get(tp)
        if not ids:
            return
        remaining = []
        for i in ids:
            if not self._try_complete_fetch(ctx, i, False):
                remaining.append(i)
        if remaining:
            waiters[tp] = remaining
        else:
            del waiters[tp]

    def wake_consumer_fetches(self, ctx: ReplicaManagerContext, tp) -> None:
        self._wake(ctx, self.consumer_fetch_waiters, tp)

    def wake_all_fetches(self, ctx: ReplicaManagerContext, tp) -> None:
        """Leadership changed: parked fetches for ``tp`` answer at once (with the new error)."""
        for waiters in (self.follower_fetch_waiters, self.consumer_fetch_waiters):
            ids = waiters.pop(tp, [])
            for i in ids:
                self._try_complete_fetch(ctx, i, force=True)

    def on_fetch_timeout(self, ctx: ReplicaManagerContext, df_id: int) -> None:
        if df_id in self.delayed_fetch:
            self._try_complete_fetch(ctx, df_id, force=True)
        for waiters in (self.follower_fetch_waiters, self.consumer_fetch_waiters):
            for tp in [tp for tp, ids in waiters.items() if df_id in ids]:
                ids = [i for i in waiters[tp] if i != df_id]
                if ids:
                    waiters[tp] = ids
                else:
                    del waiters[tp]

    # -- leader epochs ------------------------------------------------------------------------
    def offsets_for_leader_epoch(self, ctx: ReplicaManagerContext, src,
                                 req: OffsetsForLeaderEpochRequest) -> None:
        """Partition.lastOffsetForLeaderEpoch for each asked partition."""
        out = []
        for topic, partition, current_epoch, epoch in req.partitions:
            part = self.partitions.get((topic, partition))
            if part is None:
                # ReplicaManager.lastOffsetForLeaderEpoch: HostedPartition.None
                err = ctx.not_leader_error() if ctx.topic_exists(topic) \
                    else E.UNKNOWN_TOPIC_OR_PARTITION
                out.append((topic, partition, err, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET))
                continue
            # Partition.lastOffsetForLeaderEpoch -> getLocalLog(currentLeaderEpoch,
            # requireLeader = true): the epoch check first, then the leader requirement
            err = _check_current_leader_epoch(ctx.rules, part, current_epoch)
            if err is None and not part.is_leader:
                err = ctx.not_leader_error()
            if err is not None:
                out.append((topic, partition, err, UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET))
                continue
            e, end = part.log.leader_epoch_cache.end_offset_for(epoch, part.log.log_end_offset)
            if not ctx.rules.offsets_for_leader_epoch_returns_epoch:
                e = UNDEFINED_EPOCH  # v0 answers carry only the end offset (before KIP-279)
            out.append((topic, partition, E.NONE, e, end))
        ctx.send(src, OffsetsForLeaderEpochResponse(req.correlation_id, tuple(out)))

    # -- ISR expiration ------------------------------------------------------------------------
    def maybe_shrink_isr(self, ctx: ReplicaManagerContext) -> None:
        if self.quiet:
            self.settle_fetch_sessions()
        for part in self.partitions.values():
            if part.is_leader:
                part.maybe_shrink_isr(ctx)

    def fail_waiting(self, ctx: ReplicaManagerContext, tp) -> None:
        """Leadership lost: complete delayed produces and fetches for ``tp`` now."""
        self.try_complete_produces(ctx, tp)
        self.wake_all_fetches(ctx, tp)
