"""``ReplicaManager``: a broker's partitions, produce and fetch handling, and the two purgatories.

kafka.server.ReplicaManager reduced to replication (fact sheet §1-4): ``append_records`` with acks
0/1/all and the min-ISR pre-check, ``fetch_messages`` for followers and consumers,
``DelayedProduce``
completed when the HW passes the batch, ``DelayedFetch`` parked up to MaxWaitMs and woken by LEO
growth (followers) or HW growth (consumers), and the ``isr-expiration`` task.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, NamedTuple

from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core import fetch_session, producer_state, quiet_sessions
from kafkasim.core.fetch_session import (
    FINAL_EPOCH,
    INCREMENTAL,
    INVALID_SESSION_ID,
    SESSION_ERROR,
    incremental_context,
)
from kafkasim.core.fetcher import (
    FETCHING,
    TRUNCATING,
    PartitionFetchState,
)
from kafkasim.core.fetcher_manager import ReplicaFetcherManager
from kafkasim.core.leader_epoch import UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET
from kafkasim.core.log import RecordChunk, TimestampAndOffset
from kafkasim.core.messages import (
    LEADER_AND_ISR_TYPE_FULL,
    ZERO_UUID,
    EpochEndOffset,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
    PartitionResponse,
    PartitionState,
    ProduceRequest,
    ProduceResponse,
)
from kafkasim.core.partition import Partition
from kafkasim.core.state_change import (
    apply_local_changes,
    become_follower,
    get_or_create_partition,
    leader_alive_for_follower,
    make_followers,
    make_leaders,
    reassignment_state,
)

if TYPE_CHECKING:   # types only: no import of the context at run time
    from kafkasim.core.interfaces import ReplicaManagerContext

#: the error of a ProduceResponse partition, a (topic, partition, error, base offset) tuple
_error_of = itemgetter(2)


def select_read_replica(ctx: ReplicaManagerContext, part: Partition, fetch_offset: int,
                        client_rack: str) -> int:
    """RackAwareReplicaSelector (KIP-392): the leader, unless a follower holding the fetch
    offset sits in the consumer's rack (in the ISR since 3.4, KAFKA-14372:
    ``preferred_read_replica_isr_only``); among those the most caught-up (highest LEO, then
    the most recently caught up, then the higher broker id)."""
    racks = ctx.cluster_racks()
    leader = ctx.id
    if racks.get(leader) == client_rack:
        return leader
    now = ctx.now
    isr_only = ctx.rules.fetch.preferred_read_replica_isr_only
    candidates = []
    for r, st in part.remote.items():
        if (r in part.isr or not isr_only) and st.log_end_offset >= fetch_offset and \
                st.log_start_offset <= fetch_offset and racks.get(r) == client_rack:
            candidates.append((-st.log_end_offset, now - st.last_caught_up_time_ms, -r))
    if not candidates:
        return leader
    return -min(candidates)[2]


def fetch_only_from_leader(ctx: ReplicaManagerContext, req: FetchRequest) -> bool:
    """FetchParams.fetchOnlyFromLeader: a follower's fetch, and a consumer's without
    ClientMetadata (Fetch v0-v10: ``rack_id`` None), are served by the leader only; a
    consumer's with ClientMetadata may read a follower (KIP-392, 2.4+)."""
    return req.replica_id >= 0 or req.rack_id is None or \
        not ctx.rules.fetch.fetch_from_follower


def _fetch_error(fp, err: str, hw: int = -1, ls: int = -1, leo: int = -1) -> FetchPartitionData:
    return FetchPartitionData(fp.topic, fp.partition, err, hw, ls,
                              RecordChunk.empty(fp.fetch_offset), None, leo)


def _no_records(fp, hw: int, ls: int, leo: int, diverging_epoch: tuple | None = None,
                preferred_read_replica: int = -1) -> FetchPartitionData:
    """An answer without records nor error (a diverging epoch or a preferred read replica may
    say something)."""
    return FetchPartitionData(fp.topic, fp.partition, E.NONE, hw, ls,
                              RecordChunk.empty(fp.fetch_offset), diverging_epoch, leo,
                              preferred_read_replica)


class LogReadLimit:
    """ReplicaManager.readFromLog's running limits over one fetch's partitions (KIP-74, 0.10.1):
    the bytes left of the fetch's MaxBytes (``limit_bytes``: at most the broker's
    fetch.max.bytes, 2.5+, KafkaApis.handleFetchRequest), and whether the next read may return
    a first record or batch over its limits (``min_one_message``: until a read returned
    bytes). A partition reads at most min(its PartitionMaxBytes, the bytes left); what it read
    counts as Kafka's slice does (FileRecords.slice): the whole limit it read up to when more
    records were there, else the records returned."""

    __slots__ = ("limit_bytes", "min_one_message")

    def __init__(self, limit_bytes: int) -> None:
        self.limit_bytes = limit_bytes
        self.min_one_message = True

    @staticmethod
    def of(ctx: ReplicaManagerContext, req: FetchRequest) -> LogReadLimit:
        """The limits of ``req``: min(its MaxBytes, fetch.max.bytes)."""
        cap = ctx.config["fetch.max.bytes"]
        return LogReadLimit(req.max_bytes if req.max_bytes < cap else cap)

    def read(self, log, fetch_offset: int, max_offset: int, partition_max_bytes: int
             ) -> RecordChunk:
        """One partition's read (UnifiedLog.read with ReplicaManager.read's adjustedMaxBytes and
        minOneMessage), then what is left for the next."""
        left = self.limit_bytes
        max_bytes = partition_max_bytes if partition_max_bytes < left else left
        chunk = log.read(fetch_offset, max_offset, max_bytes, self.min_one_message)
        if chunk.ids:
            took = sum(chunk.sizes)
            if took < max_bytes and chunk.base_offset + len(chunk.ids) < max_offset:
                took = max_bytes   # the slice ran to the limit, past the last whole record
            self.min_one_message = False
            self.limit_bytes = left - took if took < left else 0
        return chunk


def not_hosted_error(ctx: ReplicaManagerContext, tp, expect_leader: bool = True) -> str:
    """ReplicaManager.getPartitionOrError for a partition this broker does not host:
    NOT_LEADER_OR_FOLLOWER when its own metadata cache knows the partition (2.0+, KAFKA-6796:
    the client refreshes its metadata and finds where it moved; 2.4-2.5 answer a request that
    need not reach the leader, ``expect_leader`` False, REPLICA_NOT_AVAILABLE), else
    UNKNOWN_TOPIC_OR_PARTITION, which is every such answer before 2.0."""
    fetch = ctx.rules.fetch
    if fetch.not_hosted_partition_not_leader and ctx.metadata.contains(tp):
        if not expect_leader and fetch.not_hosted_replica_not_available:
            return E.REPLICA_NOT_AVAILABLE
        return ctx.not_leader_error()
    return E.UNKNOWN_TOPIC_OR_PARTITION


def _read_records(log, fp, max_offset: int, limit: LogReadLimit | None) -> RecordChunk | None:
    """Partition.readRecords' read of ``fp`` up to ``max_offset`` (the fetch isolation's
    bound), within ``limit`` (None: the partition's max bytes alone); None when the fetch
    offset is at or past the bound."""
    if fp.fetch_offset >= max_offset:
        return None
    if limit is None:
        return log.read(fp.fetch_offset, max_offset, fp.partition_max_bytes)
    return limit.read(log, fp.fetch_offset, max_offset, fp.partition_max_bytes)


def _diverging_epoch(ctx: ReplicaManagerContext, fp, log, hw: int, leo: int, ls: int
                     ) -> FetchPartitionData | None:
    """Partition.readRecords' lastFetchedEpoch check, for any fetch that carries one (a
    follower's, 2.8+; a consumer's, whose client never sends one): the answer naming the epoch
    the fetcher diverges at and its end offset, an OFFSET_OUT_OF_RANGE answer, or None (no
    LastFetchedEpoch, or no divergence)."""
    last_fetched = fp.last_fetched_epoch
    if last_fetched < 0 or not ctx.rules.fetch.fetch_diverging_epoch:
        return None   # no LastFetchedEpoch: nothing to check
    # the steady state (the follower on the leader's latest epoch) is endOffsetFor's own
    # fast path: the latest epoch ends at the LEO
    epoch, end = log.leader_epoch_cache.end_offset_for(last_fetched, leo)
    # an epoch the leader cannot place, or (KAFKA-12996, 3.0+) an offset below its log
    # start, is OFFSET_OUT_OF_RANGE, not divergence
    if epoch == UNDEFINED_EPOCH or end == UNDEFINED_EPOCH_OFFSET or (
            fp.fetch_offset < ls
            and ctx.rules.fetch.fetch_offset_below_log_start_before_divergence):
        return _fetch_error(fp, E.OFFSET_OUT_OF_RANGE, hw, ls, leo)
    if epoch < last_fetched or end < fp.fetch_offset:
        return _no_records(fp, hw, ls, leo, (epoch, end))
    return None


def _answers_now(ctx: ReplicaManagerContext, fp, pd: FetchPartitionData) -> bool:
    """fetchMessages' reasons to answer a partition's read at once: an error, a diverging
    epoch, a preferred read replica (3.2+), or, as the DelayedFetch's first tryComplete
    would (3.8+, Case F), a consumer's fetch offset past the HW. (A follower's read names
    no preferred replica and is out of range past the LEO.)"""
    if pd.error != E.NONE or pd.diverging_epoch is not None:
        return True
    fetch = ctx.rules.fetch
    if pd.preferred_read_replica >= 0:
        return fetch.preferred_read_replica_answers_at_once   # hasPreferredReadReplica
    return fp.fetch_offset > pd.high_watermark and \
        fetch.delayed_fetch_completes_past_end_offset


def _bytes_available(fp, pd: FetchPartitionData, log, end: int, need: int,
                     fetch_rules) -> int:
    """DelayedFetch.tryComplete's Case G count for one partition: the bytes between the fetch
    offset and ``end`` (counted until ``need``), at most the partition's max bytes (0.9+). A
    read of ``need`` bytes that its max bytes allow is enough (the usual follower fetch)."""
    capped = fetch_rules.delayed_fetch_caps_partition_bytes
    cap = fp.partition_max_bytes
    records = pd.records
    if records.ids and (cap >= need or not capped) and sum(records.sizes) >= need:
        return need
    available = log.bytes_between(fp.fetch_offset, end, min(need, cap) if capped else need)
    return min(available, cap) if capped else available


def _try_complete_produce_partition(ctx: ReplicaManagerContext, tp, part: Partition | None,
                                    st: ProducePartitionStatus) -> bool:
    """DelayedProduce.tryComplete for one partition: has the HW passed the batch (or has the
    partition left this broker)? Completes ``st`` when so. A partition no longer hosted is Case
    A: ReplicaManager.getPartitionOrError's error since KAFKA-9198 (2.4.0, commit 876eada:
    NOT_LEADER_OR_FOLLOWER while the metadata cache knows the partition, else -- its topic
    deleted -- UNKNOWN_TOPIC_OR_PARTITION), UNKNOWN_TOPIC_OR_PARTITION before
    (DelayedProduce.scala:96-98 @2.3.0)."""
    if part is None:
        done, err = False, (not_hosted_error(ctx, tp)
                            if ctx.rules.fetch.stop_replica_completes_delayed_requests
                            else E.UNKNOWN_TOPIC_OR_PARTITION)
    else:
        done, err = part.check_enough_replicas_reach_offset(ctx, st.required_offset)
    if not done and err == E.NONE:   # an error completes it as well
        return False
    if err == E.NOT_LEADER_OR_FOLLOWER:   # the error this version answers with
        err = ctx.not_leader_error()
    st.complete(err)
    return True


#: ReplicaManager.isValidRequiredAcks: all (-1), none (0), the leader (1)
VALID_REQUIRED_ACKS = (-1, 0, 1)


class LogAppendInfo(NamedTuple):
    """What an append to the leader's log answers (UnifiedLog's LogAppendInfo, reduced): the
    batch's first and last offsets, or the error that refused it."""

    first_offset: int = -1
    last_offset: int = -1
    error: str = E.NONE


@dataclass(slots=True)
class ProducePartitionStatus:
    """kafka.server.ProducePartitionStatus: an acks=all batch's wait for the HW to reach
    ``required_offset`` (its last offset + 1); ``acks_pending`` until then."""

    required_offset: int
    acks_pending: bool
    response_status: PartitionResponse

    @staticmethod
    def failed(error: str, log_start_offset: int = -1) -> ProducePartitionStatus:
        """A batch refused before (or instead of) the append: answered at once (with the log
        start offset when the leader got to its log: ReplicaManager.appendToLocalLog's
        ``unknownLogAppendInfoWithLogStartOffset``)."""
        return ProducePartitionStatus(0, False, PartitionResponse(error, -1, log_start_offset))

    def complete(self, error: str) -> None:
        """Stop waiting, answering ``error`` (DelayedProduce.tryComplete / onExpiration)."""
        self.acks_pending = False
        if error != self.response_status.error:   # (the usual completion keeps NONE)
            self.response_status = self.response_status._replace(error=error)

    def answer(self) -> PartitionResponse:
        """The answer's PartitionResponse: no base offset with an error."""
        status = self.response_status
        if status.error == E.NONE:
            return status
        return status._replace(base_offset=-1)


@dataclass(slots=True)
class DelayedProduce:
    """An acks=all produce waiting for the HW (kafka.server.DelayedProduce)."""

    id: int
    client: str
    correlation_id: int
    deadline_ms: int
    # tp -> its ProducePartitionStatus (produceMetadata.produceStatus)
    status: dict[tuple[str, int], ProducePartitionStatus]
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


def topic_id_from_request(msg: LeaderAndIsrRequest, topic: str) -> str | None:
    """becomeLeaderOrFollower's topicIdFromRequest (ReplicaManager.scala:1303@3.0.0): the
    request's id of ``topic``, None when it has none or the zero Uuid (topic ids not in use:
    LeaderAndIsr before v5, 2.8)."""
    topic_id = msg.topic_id(topic)
    return None if topic_id in (None, ZERO_UUID) else topic_id


def has_consistent_topic_id(request_topic_id: str | None, log_topic_id: str | None) -> bool:
    """ReplicaManager.hasConsistentTopicId (ReplicaManager.scala:1485@3.0.0): a request
    without an id, or a log without one, is consistent; otherwise the two must match."""
    return request_topic_id is None or log_topic_id is None or \
        log_topic_id == request_topic_id


def check_topic_id(ctx: ReplicaManagerContext, part: Partition | None, st: PartitionState,
                   topic_id: str | None) -> str | None:
    """The topic id step of becomeLeaderOrFollower, before the leader epoch is compared
    (KIP-516, 2.8+): the error to answer for the partition, None to go on. A log whose id is
    not the request's answers INCONSISTENT_TOPIC_ID (the partition is left alone). 2.8:
    Partition.checkOrSetTopicId, which also gives the request's id to the log the Partition
    holds if it has none. 3.0+ (``leader_and_isr_creates_log_with_topic_id``): the log is the
    Partition's, else the one LogManager holds (Partition.topicId: a restarted broker's log
    read its id from partition.metadata); a request at the partition's current leader epoch
    gives its id to a log without one and answers NONE (KAFKA-13132), where it would have been
    STALE_CONTROLLER_EPOCH."""
    if topic_id is None:
        return None
    if not ctx.rules.controller.leader_and_isr_creates_log_with_topic_id:
        return None if part is None or part.check_or_set_topic_id(topic_id) \
            else E.INCONSISTENT_TOPIC_ID
    log = part.log if part is not None else \
        ctx.log_manager.get_log((st.topic, st.partition))
    log_topic_id = log.topic_id if log is not None else None
    if not has_consistent_topic_id(topic_id, log_topic_id):
        return E.INCONSISTENT_TOPIC_ID
    if part is not None and st.leader_epoch == part.leader_epoch and log_topic_id is None:
        part.log.assign_topic_id(topic_id)   # "upgrade to using topic IDs without bumping"
        return E.NONE
    return None


def leader_and_isr_partition_error(rm: ReplicaManager, ctx: ReplicaManagerContext,
                                    msg: LeaderAndIsrRequest, st: PartitionState) -> str | None:
    """becomeLeaderOrFollower's check of one partition state, before any partition changes:
    the topic id (``check_topic_id``), then the leader epoch and the assignment. The error to
    answer, or None when the partition goes to partitionsToBeLeader / partitionsToBeFollower.
    A state not newer than the partition's leader epoch answers STALE_CONTROLLER_EPOCH; one
    for a partition this broker is not an assigned replica of, UNKNOWN_TOPIC_OR_PARTITION
    (after the leader-epoch check)."""
    part = rm.partitions.get((st.topic, st.partition))
    error = check_topic_id(ctx, part, st, topic_id_from_request(msg, st.topic))
    if error is not None:   # INCONSISTENT_TOPIC_ID, or the id given at the same epoch
        return error
    if part is not None and st.leader_epoch <= part.leader_epoch:
        return E.STALE_CONTROLLER_EPOCH
    if ctx.id not in st.replicas:
        return E.UNKNOWN_TOPIC_OR_PARTITION
    return None


class ReplicaManager:
    __slots__ = ("partitions", "delayed_produce", "produce_waiters", "delayed_fetch",
                 "follower_fetch_waiters", "consumer_fetch_waiters", "next_delayed_id",
                 "fetch_sessions", "quiet", "lag_context", "is_in_controlled_shutdown",
                 "high_watermark_check_point_thread_started")

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
        # the lazy read (quiet_sessions): tp -> the follower sessions where it is quiet
        self.quiet: dict[tuple[str, int], list] = {}
        # the broker whose rules (its cluster's rule book) write a quiet partition's lag clocks
        self.lag_context: ReplicaManagerContext | None = None
        # KRaft: the broker began its controlled shutdown (beginControlledShutdown)
        self.is_in_controlled_shutdown = False
        # the highwatermark-checkpoint task runs (startHighWatermarkCheckPointThread)
        self.high_watermark_check_point_thread_started = False

    def start_high_watermark_check_point_thread(self, ctx: ReplicaManagerContext) -> None:
        """ReplicaManager.startHighWatermarkCheckPointThread: the first call schedules the
        highwatermark-checkpoint task (KafkaScheduler.schedule with delay 0: it runs now, then
        every replica.high.watermark.checkpoint.interval.ms). Kafka calls it once the
        partitions are populated: after the first LeaderAndIsr (becomeLeaderOrFollower,
        ReplicaManager.scala:2062@3.9.0-rc3; since 0.8) or, in KRaft, after the first metadata
        publish (BrokerMetadataPublisher.finishInitializingReplicaManager,
        BrokerMetadataPublisher.scala:321@3.9.0-rc3). kafkasim scheduled it at broker start,
        first run one interval later."""
        if not self.high_watermark_check_point_thread_started:
            self.high_watermark_check_point_thread_started = True
            ctx.log_manager.start_high_watermark_checkpoints(ctx)

    def begin_controlled_shutdown(self) -> None:
        """ReplicaManager.beginControlledShutdown (KRaft, 3.3+): from now on applyDelta stops
        fetching a followed partition that has no leader or whose ISR lacks this broker."""
        self.is_in_controlled_shutdown = True

    # -- becomeLeaderOrFollower: makeLeaders / makeFollowers ------------------------------------
    # (the controller's LeaderAndIsr in ZooKeeper mode; ReplicaManager.applyDelta in KRaft)
    def become_leader_or_follower(self, ctx: ReplicaManagerContext, src,
                                  msg: LeaderAndIsrRequest) -> None:
        """ReplicaManager.becomeLeaderOrFollower (ZooKeeper mode, the same steps 0.8.2.2
        through 3.9.0-rc3: ReplicaManager.scala:326@0.8.2.2, :1893@3.9.0-rc3): a request from
        an older controller epoch is refused; otherwise every partition state is checked first
        (``leader_and_isr_partition_error``), the ones that pass split into
        partitionsToBeLeader and partitionsToBeFollower, then makeLeaders runs on all the
        leaders and makeFollowers on all the followers, each as one batch
        (kafkasim.core.state_change.make_leaders / make_followers), then the highwatermark
        checkpoint task starts and the idle fetcher threads shut down; the controller gets
        each partition's error. Kafka's two maps are Scala HashMaps: kafkasim walks each in
        request order. Before, kafkasim made each partition leader or follower in request
        order, one by one (its fetcher removed and added on its own)."""
        if msg.controller_epoch < ctx.metadata.controller_epoch:
            ctx.send(src, LeaderAndIsrResponse(msg.controller_epoch, E.STALE_CONTROLLER_EPOCH))
            return
        if _is_full_lisr_from_kraft_controller(ctx, msg):
            # KAFKA-15605 (3.7-3.9): before anything else, move aside the logs a migrating
            # KRaft controller's full LeaderAndIsr does not list (ReplicaManager.scala:1925
            # @3.9.0-rc3)
            self.update_stray_logs(ctx, ctx.log_manager.find_stray_replicas(
                ctx.id, msg, ctx.log_manager.all_logs))
        ctx.metadata.controller_epoch = msg.controller_epoch
        ctx.metadata.controller_id = msg.controller_id
        errors: dict[tuple[str, int], str] = {}
        to_be_leader: dict[tuple[str, int], PartitionState] = {}
        to_be_follower: dict[tuple[str, int], PartitionState] = {}
        for st in msg.partition_states:
            tp = (st.topic, st.partition)
            error = leader_and_isr_partition_error(self, ctx, msg, st)
            if error is None:
                (to_be_leader if st.leader == ctx.id else to_be_follower)[tp] = st
            errors[tp] = E.NONE if error is None else error
        topic_ids = {st.topic: topic_id_from_request(msg, st.topic)
                     for st in msg.partition_states}
        if to_be_leader:
            make_leaders(self, ctx, to_be_leader, topic_ids)
        if to_be_follower:
            make_followers(self, ctx, to_be_follower, topic_ids)
        self.start_high_watermark_check_point_thread(ctx)
        # replicaFetcherManager.shutdownIdleFetcherThreads (ReplicaManager.scala:2066@3.9.0-rc3)
        ReplicaFetcherManager(ctx).shutdown_idle_fetcher_threads()
        ctx.send(src, LeaderAndIsrResponse(msg.controller_epoch, E.NONE, tuple(
            (topic, partition, error) for (topic, partition), error in errors.items())))

    def apply_delta(self, ctx: ReplicaManagerContext, delta, new_image=None) -> None:
        """ReplicaManager.applyDelta(delta, newImage) (KRaft; @3.9.0-rc3, @4.3.0): the
        delta's local changes for this broker (``delta.local_changes(broker_id)``, e.g. a
        kafkasim.control.kraft.image.TopicsDelta) applied as kafkasim.core.state_change
        .apply_local_changes does -- the deletes, then the partitions it leads, then those it
        follows, then the idle fetcher threads shut down. The metadata cache is not touched
        (BrokerMetadataPublisher updates it first; the simulated broker goes through
        kafkasim.runtime.broker_lifecycle.publish). ``new_image``: Kafka's argument, unused
        here."""
        apply_local_changes(self, ctx, delta.local_changes(ctx.id))

    def apply_partition_state(self, ctx: ReplicaManagerContext, st: PartitionState,
                              kraft: bool = False) -> str:
        """Become leader or follower of one partition: ReplicaManager.becomeLeaderOrFollower's
        per-partition step (ZooKeeper mode) or ReplicaManager.applyDelta's (KRaft: every change
        of a hosted partition, ISR-only ones included, is applied; only a state older than the
        partition's partition epoch is skipped). Returns the partition's error."""
        part = self.partitions.get((st.topic, st.partition))
        if part is not None and not kraft and st.leader_epoch <= part.leader_epoch:
            return E.STALE_CONTROLLER_EPOCH
        part = get_or_create_partition(self, ctx, st, kraft)
        if part is None:
            return E.NONE
        if st.leader == ctx.id:
            self.make_leader(ctx, part, st, kraft)
        elif kraft or leader_alive_for_follower(ctx, st.leader):
            self.make_follower(ctx, part, st, kraft)
        return E.NONE

    def make_leader(self, ctx: ReplicaManagerContext, part: Partition, st: PartitionState,
                    kraft: bool) -> None:
        """ReplicaManager.makeLeaders for one partition: stop fetching it, Partition.makeLeader
        (which marks a RECOVERING partition RECOVERED, KIP-704: the partition state's leader
        recovery state comes from LeaderAndIsr in ZooKeeper mode, from the partition record in
        KRaft)."""
        assignment = reassignment_state(ctx, st)
        if kraft and part.is_leader and st.leader_epoch == part.leader_epoch:
            # applyDelta: an ISR / assignment change under the same leader epoch
            hw = part.log.high_watermark
            part.make_leader(ctx, st.leader_epoch, st.isr, st.replicas,
                             st.partition_epoch, st.controller_epoch, *assignment)
            if part.log.high_watermark > hw:   # makeLeader's tryCompleteDelayedRequests
                self.on_hw_increased(ctx, part)
            else:
                self.try_complete_produces(ctx, part.tp)
            return
        self.remove_fetcher_for_partition(ctx, part.tp)
        hw = part.log.high_watermark
        part.make_leader(ctx, st.leader_epoch, st.isr, st.replicas,
                         st.partition_epoch, st.controller_epoch, *assignment)
        ctx.trace("become_leader", st.topic, st.partition,
                  ev.BecomeLeader(st.leader_epoch, tuple(st.isr)))
        if st.leader_recovery_state:
            # Partition.makeLeader: a leader elected uncleanly marks the partition
            # RECOVERED (KIP-704); its next AlterPartition tells the controller
            ctx.trace("leader_recovered", st.topic, st.partition,
                      ev.LeaderRecovered(st.leader_epoch))
        if part.log.high_watermark > hw:   # makeLeader's tryCompleteDelayedRequests
            self.on_hw_increased(ctx, part)

    def make_follower(self, ctx: ReplicaManagerContext, part: Partition, st: PartitionState,
                      kraft: bool = False) -> None:
        """ReplicaManager.makeFollowers for one partition: Partition.makeFollower, then (unless
        the leader and its epoch did not change) fail the produces and fetches waiting on it
        as leader, and move its fetcher to the new leader from the right position. A KRaft
        broker in controlled shutdown stops fetching it instead when it has no leader or this
        broker left its ISR (applyLocalFollowersDelta, 3.3+; applyDelta batches these steps,
        kafkasim.core.state_change)."""
        change = become_follower(self, ctx, part, st, kraft)
        if change is None:
            return
        tp = part.tp
        if change.was_leader:
            self.fail_waiting(ctx, tp)
        else:
            # completeDelayedFetchOrProduceRequests (makeFollowers; KRaft: for every partition
            # whose fetcher restarts): a consumer fetch parked at this follower (KIP-392) is
            # tried again -- fenced by the new leader epoch, it answers FENCED_LEADER_EPOCH
            self.wake_consumer_fetches(ctx, tp)
        self.remove_fetcher_for_partition(ctx, tp)   # (stopPartitions(deleteLocalLog=false))
        if st.leader >= 0 and not change.stop:
            self.add_fetcher_for_partition(ctx, tp, st.leader,
                                           self.initial_fetch_state(ctx, part, st.leader_epoch))

    def stop_replica(self, ctx: ReplicaManagerContext, tp, delete: bool) -> None:
        """ReplicaManager.stopReplicas for one partition (StopReplica in ZooKeeper mode; in
        KRaft, applyDelta for a replica the metadata no longer lists, which is deleted): stop
        its fetcher; with deletePartition=true also drop the Partition and delete its log (a
        replica a reassignment removed). With deletePartition=false the Partition stays."""
        self.remove_fetcher_for_partition(ctx, tp)
        ctx.partition_changed(tp)
        # a deleted partition leaves the partition map first, so the produces and fetches
        # still waiting on it complete with NOT_LEADER_OR_FOLLOWER (stopPartitions); until 2.3
        # they wait for their timeouts (KAFKA-9198)
        part = self.partitions.pop(tp, None) if delete else self.partitions.get(tp)
        if part is not None and part.is_leader and \
                ctx.rules.fetch.stop_replica_completes_delayed_requests:
            self.fail_waiting(ctx, tp)
        if delete:
            ctx.log_manager.delete_log(tp)
        ctx.trace("stop_replica", tp[0], tp[1], ev.StopReplica(bool(delete)))

    def delete_stray_replicas(self, ctx: ReplicaManagerContext, topic_partitions) -> None:
        """ReplicaManager.deleteStrayReplicas (3.0-3.6, ReplicaManager.scala:2239@3.3.0): a
        starting KRaft broker's stray logs (BrokerMetadataPublisher.findStrayPartitions) go
        through stopPartitions with deleteLocalLog=true: fetcher stopped, log deleted."""
        for tp in topic_partitions:
            self.stop_replica(ctx, tuple(tp), delete=True)

    def update_stray_logs(self, ctx: ReplicaManagerContext, stray_partitions) -> None:
        """ReplicaManager.updateStrayLogs (3.7-3.9, ReplicaManager.scala:408@3.9.0-rc3): stop
        each stray partition without deleting its log (stopPartitions, deleteLocalLog=false),
        drop its Partition, then move its log aside: LogManager.addStrayLog and
        asyncDelete(isStray=true), the directory renamed ``-stray`` and kept."""
        strays = [tuple(tp) for tp in stray_partitions]
        for tp in strays:
            self.stop_replica(ctx, tp, delete=False)
            self.partitions.pop(tp, None)
        for tp in strays:
            ctx.log_manager.async_delete(ctx, tp, is_stray=True)

    @staticmethod
    def add_fetcher_for_partition(ctx: ReplicaManagerContext, tp, leader_id: int,
                                  state: PartitionFetchState) -> None:
        """ReplicaFetcherManager.addFetcherForPartitions for one partition: the fetcher thread
        for (leader, fetcher id) takes it, made the first time (kafkasim.core.fetcher_manager)."""
        ReplicaFetcherManager(ctx).add_fetch_states({tp: (leader_id, state)})

    @staticmethod
    def remove_fetcher_for_partition(ctx: ReplicaManagerContext, tp) -> None:
        """ReplicaFetcherManager.removeFetcherForPartitions for one partition: the partition is
        no longer fetched nor failed (failedPartitions.removeAll, AbstractFetcherManager
        @2.3.0-@4.3.0); a thread left with none idles until shutdownIdleFetcherThreads."""
        ReplicaFetcherManager(ctx).remove_fetcher_for_partitions((tp,))

    @staticmethod
    def initial_fetch_state(ctx: ReplicaManagerContext, part: Partition, leader_epoch: int
                            ) -> PartitionFetchState:
        """Where a new follower starts fetching (makeFollowers' InitialFetchState)."""
        log = part.log
        rules = ctx.rules.fetch
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
        in the produce purgatory until the HW passes it (``DelayedProduce``). Acks other than
        -1, 0 and 1 append nothing: every partition answers INVALID_REQUIRED_ACKS."""
        results: dict[tuple[str, int], ProducePartitionStatus] = {}
        if req.acks not in VALID_REQUIRED_ACKS:   # isValidRequiredAcks
            for entry in req.partitions:
                results[(entry[0], entry[1])] = \
                    ProducePartitionStatus.failed(E.INVALID_REQUIRED_ACKS)
            self._respond_produce(ctx, src, req.correlation_id, results)
            return
        waiting = []   # the partitions whose batch waits for the HW (acks=all)
        now = ctx.now   # the request's time: the batches' timestamps, the purgatory's deadline
        for entry in req.partitions:
            tp = (entry[0], entry[1])
            st = results[tp] = self._append_to_leader(ctx, req.acks, entry, tp, now)
            if st.acks_pending:
                waiting.append(tp)
        if req.acks == 0:
            return  # acks=0: the broker sends no response at all
        if waiting:
            self._park_produce(ctx, src, req, results, waiting, now)
        else:
            self._respond_produce(ctx, src, req.correlation_id, results)

    def _append_to_leader(self, ctx: ReplicaManagerContext, acks: int, entry: tuple, tp,
                          now: int) -> ProducePartitionStatus:
        """Partition.appendRecordsToLeader for one partition's batch: the min-ISR pre-check
        (acks=all), the idempotent producer's duplicate/sequence check, the append, the HW."""
        topic, partition = tp
        part = self.partitions.get(tp)
        if part is None:
            return ProducePartitionStatus.failed(not_hosted_error(ctx, tp))
        if not part.is_leader:
            return ProducePartitionStatus.failed(ctx.not_leader_error())
        if acks == -1:
            min_isr = part.effective_min_isr(ctx)
            if ctx.rulebook.check_min_isr_before_append(part.isr, min_isr) != E.NONE:
                ctx.trace("produce_rejected", topic, partition,
                          ev.ProduceRejected(min_isr, tuple(part.isr)))
                return ProducePartitionStatus.failed(E.NOT_ENOUGH_REPLICAS,
                                                     part.log.log_start_offset)
        first, last, error = self._append_records_to_log(ctx, part, entry, now)
        log_start = part.log.log_start_offset
        if error != E.NONE:
            return ProducePartitionStatus.failed(error, log_start)
        done, err = True, E.NONE
        if acks == -1:   # (the append changed neither the config nor the replicas: same min ISR)
            done, err = part.check_enough_replicas_reach_offset(ctx, last + 1, min_isr)
        return ProducePartitionStatus(last + 1, not done and err == E.NONE,
                                      PartitionResponse(err, first, log_start))

    def _append_records_to_log(self, ctx: ReplicaManagerContext, part: Partition, entry: tuple,
                               now: int) -> LogAppendInfo:
        """UnifiedLog.appendAsLeader with the producer state check (analyzeAndValidateProducer
        State): the offsets of the batch appended, or of the retried batch already in the log
        (a duplicate); or the error refusing it (OUT_OF_ORDER_SEQUENCE_NUMBER, ...)."""
        topic, partition, ids, sizes, pid, pepoch, base_seq = entry
        log = part.log
        # (producer id, epoch, first seq, last seq) of the batch header; none for a producer that
        # is not idempotent (RecordBatch.NO_SEQUENCE)
        ident = None if base_seq < 0 else (pid, pepoch, base_seq, base_seq + len(ids) - 1)
        rules = ctx.rules.clients
        verdict, dup_offset = producer_state.check_append(
            log.producer_states, ident, producer_state.unknown_producer_verdict(rules),
            rules.duplicate_sequence_before_cached_batches) \
            if ident is not None else ("append", -1)
        if verdict == "duplicate":
            # a retried batch already in the log: answer with its original offsets
            first = dup_offset
            ctx.trace("produce_duplicate", topic, partition,
                      ev.ProduceDuplicate(ident[0], ident[2], ident[3], first))
            return LogAppendInfo(first, first + len(ids) - 1)
        if verdict != "append":
            return LogAppendInfo(error=verdict)
        first, last = log.append_as_leader(ids, sizes, part.leader_epoch, now,
                                           pid, pepoch, base_seq)
        if ident is not None:
            producer_state.update(log.producer_states, (log.producer_batches.last,))
        if part.tp in self.follower_fetch_waiters:   # parked follower fetches may answer now
            self._wake(ctx, self.follower_fetch_waiters, part.tp)
        if part.maybe_increment_leader_hw(ctx, now):
            self.on_hw_increased(ctx, part)
        return LogAppendInfo(first, last)

    def _park_produce(self, ctx: ReplicaManagerContext, src, req: ProduceRequest,
                      results: dict, waiting: list, now: int) -> None:
        """The produce purgatory: wait for the HW on the ``waiting`` partitions, at most the
        request's timeout."""
        dp_id = self.next_delayed_id
        self.next_delayed_id = dp_id + 1
        dp = DelayedProduce(dp_id, src, req.correlation_id, now + req.timeout_ms, results)
        self.delayed_produce[dp_id] = dp
        for tp in waiting:
            self.produce_waiters.setdefault(tp, []).append(dp_id)
        dp.timeout_id = ctx.schedule_timeout(req.timeout_ms, "produce_timeout", dp_id)

    def _respond_produce(self, ctx: ReplicaManagerContext, dst, correlation_id: int,
                         results: dict[tuple[str, int], ProducePartitionStatus]) -> None:
        parts = []   # (topic, partition, error, base offset) of each
        starts = []  # and its log start offset
        for (topic, partition), st in results.items():
            error, base_offset, log_start = st.answer()
            parts.append((topic, partition, error, base_offset))
            starts.append(log_start)
        parts = tuple(parts)
        leaders = nodes = ()
        if ctx.rules.clients.produce_response_current_leader and \
                E.NOT_LEADER_OR_FOLLOWER in map(_error_of, parts):
            leaders, nodes = _current_leaders(self, ctx, parts)
        ctx.send(dst, ProduceResponse(correlation_id, parts, leaders, nodes, tuple(starts)))

    def try_complete_produces(self, ctx: ReplicaManagerContext, tp) -> None:
        """DelayedProduce.tryComplete of every produce waiting on ``tp``: answered once none
        of its partitions has acks pending."""
        ids = self.produce_waiters.pop(tp, None)   # the requests still waiting go back below
        if not ids:
            return
        part = self.partitions.get(tp)
        remaining = []
        for dp_id in ids:
            dp = self.delayed_produce.get(dp_id)
            if dp is None:
                continue
            if not _try_complete_produce_partition(ctx, tp, part, dp.status[tp]):
                remaining.append(dp_id)
            # (a produce of one partition has just completed its only one)
            elif len(dp.status) == 1 or not any(st.acks_pending for st in dp.status.values()):
                del self.delayed_produce[dp_id]   # and its purgatory timeout
                self._respond_produce(ctx, dp.client, dp.correlation_id, dp.status)
        if remaining:
            self.produce_waiters[tp] = remaining

    def on_produce_timeout(self, ctx: ReplicaManagerContext, dp_id: int) -> None:
        """DelayedProduce.onExpiration: the partitions still waiting answer REQUEST_TIMED_OUT."""
        dp = self.delayed_produce.pop(dp_id, None)
        if dp is None:
            return
        for tp, st in dp.status.items():
            if st.acks_pending:
                st.complete(E.REQUEST_TIMED_OUT)  # the records stay in the log, may commit later
                part = self.partitions.get(tp)
                ctx.trace("produce_timed_out", tp[0], tp[1],
                          ev.ProduceTimedOut(part.log.high_watermark if part else -1,
                                             st.required_offset))
        self._respond_produce(ctx, dp.client, dp.correlation_id, dp.status)

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
                ctx.rules.fetch.fetch_session_cache_sharded, ctx.id * 1_000_003 + ctx.now)
        return cache

    def fetch_messages(self, ctx: ReplicaManagerContext, src, req: FetchRequest) -> None:
        """KafkaApis.handleFetchRequest + ReplicaManager.fetchMessages: the fetch context
        (FetchManager.newContext, KIP-227), then read now or park in the fetch purgatory."""
        now = ctx.now
        fctx, parts = self._new_context(ctx, req, now)
        # the follower's incremental session, for the lazy read (quiet_sessions)
        session = fctx.session if fctx is not None and quiet_sessions.LAZY and \
            req.replica_id >= 0 and fctx.kind == INCREMENTAL else None
        if session is not None:
            session.last_read_ms = now
        datas, answer_now = self._read_from_local_log(ctx, req, parts, session, now)
        if answer_now:
            ctx.send(src, self._fetch_response(ctx, req, fctx, datas))
        else:
            self._park_fetch(ctx, src, req, fctx, session, parts, now)

    def _new_context(self, ctx: ReplicaManagerContext, req: FetchRequest, now: int
                     ) -> tuple[fetch_session.FetchContext | None, list | tuple]:
        """FetchManager.newContext: the request's FetchContext (None: sessionless before 1.1 or
        with the rule off) and the fetchInfos it reads (FetchContext.foreachPartition). An
        incremental request's session is looked up once, and (the lazy read) its quiet
        partitions the request names are woken first."""
        if not ctx.rules.fetch.fetch_sessions or (req.session_epoch == FINAL_EPOCH
                                            and req.session_id == INVALID_SESSION_ID):
            return None, req.partitions
        cache = self.fetch_sessions or self.session_cache(ctx)   # made at the first fetch
        if req.session_epoch > 0:
            shard = cache.shard_for(req.session_id)
            cached = shard.sessions.get(req.session_id) if shard is not None else None
            # (a session has quiet partitions only while ``self.quiet`` lists them)
            if self.quiet and cached is not None and cached.epoch == req.session_epoch:
                quiet_sessions.wake_named(self, cached, req)
            fctx = incremental_context(shard, cached, req, now)
            if fctx.kind == INCREMENTAL:   # the session stays: nothing to drain
                return fctx, quiet_sessions.partitions_to_read(fctx.session)
        else:
            fctx = fetch_session.new_context(cache, req, now)
        for gone in cache.drain_removed():   # (only an incremental context has a session)
            quiet_sessions.settle_session(self, gone)
        return fctx, [] if fctx.kind == SESSION_ERROR else req.partitions

    def _read_from_local_log(self, ctx: ReplicaManagerContext, req: FetchRequest, parts,
                             session, now: int) -> tuple[list, bool]:
        """ReplicaManager.readFromLocalLog, then fetchMessages' test: (the reads, answer now?).
        An error, a diverging epoch, a preferred read replica (3.2+), enough bytes
        (fetch.min.bytes), no MaxWaitMs or nothing to read answers now; else the fetch is parked
        (DelayedFetch), unless the DelayedFetch's first tryComplete completes it: a consumer
        past the HW (3.8+, Case F; a follower past the LEO is out of range)."""
        datas = []
        total = 0
        immediate = False   # an error or a diverging epoch answers now
        consumer = req.replica_id < 0
        # a fetch of one partition that may wait (MaxWaitMs and MinBytes above 0) is parked when
        # its read has nothing to answer: that answer is never sent, so it is not built (the
        # read returns None; the usual follower fetch, caught up to the leader's LEO)
        parkable = len(parts) == 1 and req.max_wait_ms > 0 and req.min_bytes > 0
        limit = LogReadLimit.of(ctx, req)   # (KIP-74: the first partition read may exceed it)
        for fp in parts:
            pd = self._read_partition(ctx, req, fp, True, session, now, parkable, limit=limit)
            if pd is None:
                return datas, False   # to the purgatory
            datas.append(pd)
            if not immediate and (consumer or pd.error != E.NONE or
                                  pd.diverging_epoch is not None):
                immediate = _answers_now(ctx, fp, pd)
            if pd.records.ids:
                total += sum(pd.records.sizes)
        # (no fetchInfos at all, not even quiet ones, answers now too)
        return datas, immediate or total >= req.min_bytes or req.max_wait_ms <= 0 or \
            not parts and session is None

    def _park_fetch(self, ctx: ReplicaManagerContext, src, req: FetchRequest, fctx,
                    session, parts, now: int) -> None:
        """The fetch purgatory: wait for data on ``parts`` at most the request's MaxWaitMs."""
        if session is not None:
            # the quiet partitions are not read again, nor watched
            parts = quiet_sessions.partitions_to_watch(session, parts)
        df_id = self.next_delayed_id
        self.next_delayed_id = df_id + 1
        df = DelayedFetch(df_id, src, req, now + req.max_wait_ms, None, parts, fctx)
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
        if fctx.session is not None:
            fctx.session.parked = None
        if fctx.kind == INCREMENTAL:   # the usual case: no session made nor lost
            err, sid, parts = fetch_session.incremental_response(fctx, datas)
            return FetchResponse(req.correlation_id, parts, err, sid)
        cache = self.session_cache(ctx)
        # only a full fetch can create a session, and so evict one (maybeCreateSession)
        evicted = cache.evictions()
        err, sid, parts = fctx.update_and_generate_response_data(cache, datas, ctx.now,
                                                                 req.replica_id >= 0)
        if fctx.kind == fetch_session.FULL:   # only maybeCreateSession evicts a session here
            if cache.evictions() != evicted:
                ctx.mark_meter("IncrementalFetchSessionEvictionsPerSec",
                               cache.evictions() - evicted)
            for gone in cache.drain_removed():
                quiet_sessions.settle_session(self, gone)
        return FetchResponse(req.correlation_id, parts, err, sid)

    # -- the lazy read of incremental sessions (quiet_sessions; not Kafka's) --------------------
    def _maybe_quiet(self, ctx: ReplicaManagerContext, session, cp, part: Partition) -> None:
        """After reading ``cp`` for the session's follower (``_read_partition``, which checked
        that the answer has nothing to say: no error, no records, the HW and log start offset
        the session last answered, and still so after the read; and that the HW is at the LEO,
        so no commit is pending that would wake it at once): if the read only refreshed the
        follower's lag clocks, stop reading it until it changes."""
        replica = session.replica_id
        if part.log.log_end_offset != cp.fetch_offset or \
                not part.is_leader or replica not in part.isr:
            return
        st = part.remote.get(replica)
        # the caught-up rule found the follower caught up by this read (Kafka's does at the
        # leader's LEO): the skipped reads are then written by that rule (quiet_sessions.
        # materialize)
        if st is None or st.log_end_offset != cp.fetch_offset or \
                st.last_caught_up_time_ms != session.last_read_ms:
            return
        self.lag_context = ctx
        tp = (cp.topic, cp.partition)
        del session.active[tp]
        self.quiet.setdefault(tp, []).append(session)

    def unquiet(self, ctx: ReplicaManagerContext, tp) -> None:
        """Something about ``tp`` changed (LEO, HW, ISR, role): the sessions where it was
        quiet read it again (quiet_sessions.unquiet)."""
        quiet_sessions.unquiet(self, tp)

    # -- reading a partition ------------------------------------------------------------------
    def _read_partition(self, ctx: ReplicaManagerContext, req: FetchRequest, fp,
                        update_follower_state: bool, session=None, now: int | None = None,
                        omit_empty: bool = False, part: Partition | None = None,
                        limit: LogReadLimit | None = None) -> FetchPartitionData | None:
        """Read one partition for a fetch (ReplicaManager.read -> Partition.fetchRecords);
        ``session``: the follower's incremental session when its lazy read applies (``fp`` is
        then its CachedPartition); ``now``: the request's time, when the caller has it;
        ``omit_empty``: None instead of an answer without records nor error (the caller parks
        the fetch); ``part``: the partition, when the caller looked it up; ``limit``: the
        fetch's byte limits over its partitions (None: the partition's max bytes alone)."""
        if part is None:
            part = self.partitions.get((fp.topic, fp.partition))
        if part is None:
            # (a consumer's fetch need not reach the leader: fetchOnlyFromLeader is false)
            return _fetch_error(fp, not_hosted_error(ctx, (fp.topic, fp.partition),
                                                     req.replica_id >= 0))
        refused = self._get_local_log(ctx, req, fp, part, limit)
        if refused is not None:
            return refused
        log = part.log
        hw, leo, ls = log.high_watermark, log.log_end_offset, log.log_start_offset
        early = self._check_fetch_offset(ctx, req, fp, part, hw, leo, ls)
        if early is not None:
            return early
        follower = req.replica_id >= 0
        max_offset = leo if follower else hw  # read_committed LSO == HW (no txns)
        chunk = _read_records(log, fp, max_offset, limit)
        if update_follower_state and follower:
            refused = self._update_follower_fetch_state(ctx, req, fp, part, session, now, hw,
                                                        leo, ls)
            if refused is not None:
                return refused
            if log.high_watermark > hw and \
                    ctx.rules.fetch.fetch_response_leader_state_after_follower_update:
                # 1.0 - 1.1: LogReadResult.updateLeaderReplicaInfo, the leader's new state
                hw, leo, ls = log.high_watermark, log.log_end_offset, log.log_start_offset
        if chunk is None:   # nothing to read
            if omit_empty and (fp.fetch_offset == max_offset or
                               not ctx.rules.fetch.delayed_fetch_completes_past_end_offset):
                return None   # (past the end offset, the fetch is answered: DelayedFetch Case F)
            chunk = RecordChunk.empty(fp.fetch_offset)
        return FetchPartitionData(fp.topic, fp.partition, E.NONE, hw, ls, chunk, None, leo)

    def _get_local_log(self, ctx: ReplicaManagerContext, req: FetchRequest, fp,
                       part: Partition, limit: LogReadLimit | None = None
                       ) -> FetchPartitionData | None:
        """Partition.getLocalLog (+ followerReplicaOrThrow): the answer of a partition this
        broker cannot serve as leader (an error, or a consumer's read at a follower, KIP-392),
        None when it can. The CurrentLeaderEpoch check comes first (KIP-320, 2.1+), then the
        leader requirement, so a stale fetcher at a demoted leader is FENCED_LEADER_EPOCH."""
        if fp.current_leader_epoch != part.leader_epoch and fp.current_leader_epoch >= 0:
            # (the steady state, the leader's epoch or none, skips the call)
            err = part.check_current_leader_epoch(ctx, fp.current_leader_epoch)
            if err is not None:
                return _fetch_error(fp, err)
        if not part.is_leader:
            if not fetch_only_from_leader(ctx, req):
                # KIP-392: Partition.getLocalLog(requireLeader = false) reads whatever the
                # leader is, NO_LEADER included
                return _read_as_follower(ctx, part, fp, limit)
            return _fetch_error(fp, ctx.not_leader_error())
        if req.replica_id >= 0 and req.replica_id not in part.remote and \
                ctx.rules.fetch.fetch_from_non_replica_error:
            # Partition.followerReplicaOrThrow (KAFKA-13837, 3.3+)
            return _fetch_error(fp, E.UNKNOWN_LEADER_EPOCH if fp.current_leader_epoch >= 0
                                else ctx.not_leader_error())
        return None

    def _check_fetch_offset(self, ctx: ReplicaManagerContext, req: FetchRequest, fp,
                            part: Partition, hw: int, leo: int, ls: int
                            ) -> FetchPartitionData | None:
        """ReplicaManager.read before the read: a consumer sent to a replica in its rack
        (KIP-392, findPreferredReadReplica, which comes first), a diverging epoch (2.8+, any
        fetch with a LastFetchedEpoch), or an offset out of range (Partition.readRecords); None
        to read."""
        if req.replica_id < 0 and req.rack_id and ctx.config.get("replica.selector.class") \
                and ctx.rules.fetch.fetch_from_follower:
            # findPreferredReadReplica comes before the read: a follower in the consumer's
            # rack holding the offset is named even where the leader's own log has it not
            if self.quiet:
                quiet_sessions.settle_all(self)
            preferred = select_read_replica(ctx, part, fp.fetch_offset, req.rack_id)
            if preferred != ctx.id:
                # tell the consumer where to fetch from; no records in this answer
                return _no_records(fp, hw, ls, leo, None, preferred)
        if fp.last_fetched_epoch >= 0:
            diverging = _diverging_epoch(ctx, fp, part.log, hw, leo, ls)
            if diverging is not None:
                return diverging
        if fp.fetch_offset > leo or fp.fetch_offset < ls:
            return _fetch_error(fp, E.OFFSET_OUT_OF_RANGE, hw, ls, leo)
        return None

    def _update_follower_fetch_state(self, ctx: ReplicaManagerContext, req: FetchRequest, fp,
                                     part: Partition, session, now: int | None, hw: int,
                                     leo: int, ls: int) -> FetchPartitionData | None:
        """Partition.fetchRecords' updateFollowerFetchState: record the follower's position
        (its HW may move); then the lazy read may leave the partition quiet for the session.
        A fetch the leader fences (a stale broker epoch, 3.7+) is answered with its error
        (readFromLog's NotLeaderOrFollowerException), None otherwise."""
        if req.replica_id not in part.remote:
            # before 3.3: ReplicaManager.updateFollowerFetchState could not record the
            # position of a broker outside the replica set and answered withEmptyFetchInfo
            # (no error)
            return _no_records(fp, hw, ls, leo)
        try:
            moved = part.update_follower_fetch_state(ctx, req.replica_id, fp.fetch_offset,
                                                     fp.log_start_offset, leo, now,
                                                     req.replica_epoch)
        except E.NotLeaderOrFollowerException as e:
            return _fetch_error(fp, e.error)
        if moved:
            self.on_hw_increased(ctx, part)
        if quiet_sessions.may_go_quiet(session, fp, part.log, hw, leo, ls):
            self._maybe_quiet(ctx, session, fp, part)
        return None

    # -- the fetch purgatory (DelayedFetch) ---------------------------------------------------
    def try_complete_fetch(self, ctx: ReplicaManagerContext, df_id: int, force: bool = False
                           ) -> bool:
        """DelayedFetch.tryComplete: answer the parked fetch ``df_id`` if ``force`` (its time is
        up, or leadership moved), or if some partition must answer now or enough bytes are
        there (``_can_complete``: Kafka's cases A-H). True once the fetch is answered."""
        df = self.delayed_fetch.get(df_id)
        if df is None:
            return True
        datas = []   # the answer's reads (DelayedFetch.onComplete), in the fetch's order
        limit = LogReadLimit.of(ctx, df.request)   # over the reads of both steps
        if not force and not self._can_complete(ctx, df, datas, limit):
            return False
        del self.delayed_fetch[df_id]   # and its purgatory timeout
        self._on_complete_fetch(ctx, df, datas, limit)
        return True

    def _can_complete(self, ctx: ReplicaManagerContext, df: DelayedFetch, datas: list,
                      limit: LogReadLimit) -> bool:
        """DelayedFetch.tryComplete's cases: A-C, a partition not served here (any more), E, one
        whose leader epoch moved past the fetch's (fenced), H (2.8 here: LastFetchedEpoch), one
        whose read now finds a diverging epoch or an error, and F (3.8+), a fetch offset past
        the end offset (the LEO for followers, the HW for consumers) answer now; G, the bytes
        past each fetch offset, at most the partition's max bytes (0.9+), are counted up to
        min.bytes. Each partition served is read first (into ``datas``, kept for the answer)."""
        request = df.request
        min_bytes = request.min_bytes
        follower = request.replica_id >= 0
        fetch_rules = ctx.rules.fetch
        total = 0
        for fp in df.partitions:
            part = self.partitions.get((fp.topic, fp.partition))
            if part is None or not part.is_leader and fetch_only_from_leader(ctx, request):
                return True   # not served here (any more)
            if 0 <= fp.current_leader_epoch < part.leader_epoch:
                return True   # fenced
            pd = self._read_partition(ctx, request, fp, False, part=part, limit=limit)
            datas.append(pd)
            if pd.error != E.NONE or pd.diverging_epoch is not None:
                return True
            log = part.log
            end = log.log_end_offset if follower else log.high_watermark
            if fp.fetch_offset > end and fetch_rules.delayed_fetch_completes_past_end_offset:
                return True
            if total < min_bytes and end > fp.fetch_offset:
                total += _bytes_available(fp, pd, log, end, min_bytes - total, fetch_rules)
        return total >= min_bytes

    def _on_complete_fetch(self, ctx: ReplicaManagerContext, df: DelayedFetch,
                           datas: list, limit: LogReadLimit) -> None:
        """DelayedFetch.onComplete: read the partitions not read yet, answer."""
        if len(datas) < len(df.partitions):   # (a wake-up's _can_complete read them all)
            for fp in df.partitions[len(datas):]:
                datas.append(self._read_partition(ctx, df.request, fp, False, limit=limit))
        ctx.send(df.src, self._fetch_response(ctx, df.request, df.context, datas))

    def _wake(self, ctx: ReplicaManagerContext, waiters: dict, tp) -> None:
        ids = waiters.get(tp)
        if not ids:
            return
        remaining = []
        for i in ids:
            if not self.try_complete_fetch(ctx, i, False):
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
                self.try_complete_fetch(ctx, i, force=True)

    def on_fetch_timeout(self, ctx: ReplicaManagerContext, df_id: int) -> None:
        if df_id in self.delayed_fetch:
            self.try_complete_fetch(ctx, df_id, force=True)
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
        """KafkaApis.handleOffsetForLeaderEpochRequest: the answer of
        ``last_offset_for_leader_epoch``, for a follower and a consumer alike."""
        ctx.send(src, OffsetsForLeaderEpochResponse(
            req.correlation_id, tuple(self.last_offset_for_leader_epoch(ctx, req.partitions))))

    def last_offset_for_leader_epoch(self, ctx: ReplicaManagerContext,
                                     requested_epoch_info: Iterable[tuple[str, int, int, int]]
                                     ) -> list[EpochEndOffset]:
        """ReplicaManager.lastOffsetForLeaderEpoch: for each (topic, partition, current leader
        epoch, leader epoch) (``OffsetForLeaderPartition``), the hosted partition's
        Partition.lastOffsetForLeaderEpoch (current epoch -1: none; leader only). A partition
        not hosted here is NOT_LEADER_OR_FOLLOWER if the broker's metadata cache knows it, else
        UNKNOWN_TOPIC_OR_PARTITION; before KAFKA-7347 (2.1) always UNKNOWN_TOPIC_OR_PARTITION."""
        out = []
        for topic, partition, current_epoch, epoch in requested_epoch_info:
            part = self.partitions.get((topic, partition))
            if part is not None:
                out.append(part.last_offset_for_leader_epoch(
                    ctx, None if current_epoch < 0 else current_epoch, epoch, True))
            elif ctx.rules.fetch.offsets_for_leader_epoch_not_replica_not_leader and \
                    ctx.metadata.contains((topic, partition)):
                out.append(EpochEndOffset(topic, partition, ctx.not_leader_error()))
            else:
                out.append(EpochEndOffset(topic, partition, E.UNKNOWN_TOPIC_OR_PARTITION))
        return out

    # -- ListOffsets --------------------------------------------------------------------------
    def fetch_offset_for_timestamp(self, ctx: ReplicaManagerContext, tp: tuple[str, int],
                                   timestamp: int, isolation_level: str | None,
                                   current_leader_epoch: int | None,
                                   fetch_only_from_leader: bool) -> TimestampAndOffset | None:
        """ReplicaManager.fetchOffsetForTimestamp: the hosted partition's
        Partition.fetchOffsetForTimestamp (``kafkasim.core.partition``), after
        getPartitionOrException: a partition not hosted here is ``not_hosted_error`` (raised as
        ApiException)."""
        part = self.partitions.get(tp)
        if part is None:
            err = not_hosted_error(ctx, tp, fetch_only_from_leader)
            raise E.ApiException(err, f"{tp[0]}-{tp[1]} is not hosted on broker {ctx.id}"
                                 if err != E.UNKNOWN_TOPIC_OR_PARTITION else
                                 f"This server does not host this topic-partition {tp[0]}-{tp[1]}")
        return part.fetch_offset_for_timestamp(ctx, timestamp, isolation_level,
                                               current_leader_epoch, fetch_only_from_leader)

    # -- ISR expiration ------------------------------------------------------------------------
    def maybe_shrink_isr(self, ctx: ReplicaManagerContext) -> None:
        if self.quiet:
            quiet_sessions.settle_all(self)
        for part in self.partitions.values():
            if part.is_leader:
                part.maybe_shrink_isr(ctx)

    def fail_waiting(self, ctx: ReplicaManagerContext, tp) -> None:
        """Leadership lost: complete delayed produces and fetches for ``tp`` now."""
        self.try_complete_produces(ctx, tp)
        self.wake_all_fetches(ctx, tp)


def _is_full_lisr_from_kraft_controller(ctx: ReplicaManagerContext,
                                       msg: LeaderAndIsrRequest) -> bool:
    """config.migrationEnabled (zookeeper.metadata.migration.enable) and a LeaderAndIsr of type
    FULL from a KRaft controller (``isKRaftController``), 3.7-3.9 (rule
    ``full_leader_and_isr_finds_strays``)."""
    return ctx.rules.controller.full_leader_and_isr_finds_strays and \
        msg.is_kraft_controller and msg.type == LEADER_AND_ISR_TYPE_FULL and \
        str(ctx.config.get("zookeeper.metadata.migration.enable", False)).lower() == "true"


def _current_leaders(rm: ReplicaManager, ctx: ReplicaManagerContext, parts: tuple) -> tuple:
    """KafkaApis.getCurrentLeader for each NOT_LEADER_OR_FOLLOWER partition (KIP-951):
    the local Partition's leader and epoch, else the metadata cache's; the leader's node
    only when the metadata cache has it alive."""
    leaders = []
    for topic, partition, err, _base in parts:
        if err != E.NOT_LEADER_OR_FOLLOWER:
            continue
        part = rm.partitions.get((topic, partition))
        if part is not None:
            leaders.append((topic, partition, part.leader_id, part.leader_epoch))
            continue
        st = getattr(ctx.metadata, "partitions", {}).get((topic, partition))
        leaders.append((topic, partition, st.leader, st.leader_epoch) if st is not None
                       else (topic, partition, -1, -1))
    alive = ctx.metadata.has_alive_broker   # metadataCache.getAliveBrokerNode
    nodes = tuple(sorted({lead for _t, _p, lead, _e in leaders
                          if lead >= 0 and alive(lead)}))
    return tuple(leaders), nodes


def _read_as_follower(ctx: ReplicaManagerContext, part: Partition, fp,
                      limit: LogReadLimit | None) -> FetchPartitionData:
    """A consumer fetch served by a follower (Partition.readRecords on its own log):
    records below the follower's own HW, after its LastFetchedEpoch check."""
    log = part.log
    hw, leo, ls = log.high_watermark, log.log_end_offset, log.log_start_offset
    diverging = _diverging_epoch(ctx, fp, log, hw, leo, ls)
    if diverging is not None:
        return diverging
    if fp.fetch_offset > leo or fp.fetch_offset < ls:
        return _fetch_error(fp, E.OFFSET_OUT_OF_RANGE, hw, ls, leo)
    chunk = _read_records(log, fp, hw, limit) or RecordChunk.empty(fp.fetch_offset)
    return FetchPartitionData(fp.topic, fp.partition, E.NONE, hw, ls, chunk, None, leo)
