"""``ReplicaFetcherThread``: a follower broker's thread that copies records from one leader.

One thread per (source broker, fetcher id), fetcher id = |31 * topic.hashCode + partition| mod
``num.replica.fetchers`` (AbstractFetcherManager.getFetcherId). A thread sends one Fetch at a time
for all its partitions; partitions are ``Truncating`` (asking OffsetsForLeaderEpoch, KIP-101) or
``Fetching``. The thread is plain data: the broker (``ctx``) sends its requests and runs its timers.

Since 1.1 (KIP-227, rule ``fetch_sessions``) the thread keeps a ``FetchSessionHandler`` for its
leader, as ReplicaFetcherThread (1.1-3.x) / RemoteLeaderEndPoint (3.5+) do: a full fetch first,
then incremental fetches naming only the partitions whose fetch position changed; partitions not
ready (delayed, truncating) leave the session (``to_forget``). A session error or an unusable
answer is ignored and the next fetch, sent at once, is full; a failed request closes the session.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core import quiet_sessions
from kafkasim.core.fetch_session import FetchSessionHandler, is_full
from kafkasim.core.leader_epoch import UNDEFINED_EPOCH
from kafkasim.core.messages import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from kafkasim.settings.javautil import java_string_hash, to_int32, utils_abs

if TYPE_CHECKING:   # types only: no import of the context at run time
    from kafkasim.core.interfaces import FetcherContext

TRUNCATING = "Truncating"
FETCHING = "Fetching"


def fetcher_id_for(topic: str, partition: int, num_fetchers: int) -> int:
    """AbstractFetcherManager.getFetcherId, with Java's int overflow and Utils.abs."""
    return utils_abs(to_int32(31 * java_string_hash(topic) + partition)) % num_fetchers


def become_follower_needed(rules, old_epoch: int, new_epoch: int) -> bool:
    """Partition.makeFollower's answer when the LeaderAndIsr keeps the leader id: must the
    follower restart fetching with truncation (ReplicaManager.makeFollowers)?

    Since 2.1 on every new epoch (KIP-320 / KAFKA-7395, commit bcef30d); in 2.0.1 only when an
    epoch was missed, i.e. the new epoch is more than one above the old (KAFKA-7164,
    PartitionTest.testMakeFollowerWithNoLeaderIdChange); before, never: the follower kept
    fetching from where it was, keeping whatever the leader no longer has.
    """
    if rules.fetch.follower_truncates_on_every_new_epoch:
        return new_epoch != old_epoch
    if rules.fetch.follower_truncates_after_missed_epoch:
        return new_epoch not in (old_epoch, old_epoch + 1)
    return False


def do_truncate(thread: ReplicaFetcherThread, ctx: FetcherContext, tp, offset: int,
                reason: str) -> bool:
    """AbstractFetcherThread.doTruncate (2.3+, KIP-461): truncate ``tp`` to ``offset``
    (ReplicaFetcherThread.truncate); a truncation that throws marks the partition failed
    (markPartitionFailed: it leaves the fetcher until the next LeaderAndIsr) and the other
    partitions carry on. False when it failed. Before 2.3 the error went up (KafkaStorageException
    backed the partition off; anything else stopped the thread: not modelled, raised). Only
    Kafka's exceptions (``E.KAFKA_EXCEPTIONS``) are caught: anything else is kafkasim's."""
    try:
        thread.truncate(ctx, tp, offset, reason)
    except E.KAFKA_EXCEPTIONS as e:
        if not ctx.rules.fetch.fetcher_marks_partition_failed_on_error:
            raise
        thread.mark_partition_failed(ctx, tp, f"truncation to {offset} failed: {e}")
        return False
    return True


def _check_requested(thread: ReplicaFetcherThread, ctx: FetcherContext,
                     resp: OffsetsForLeaderEpochResponse) -> None:
    """truncateToEpochEndOffsets (2.2+): an answer naming a partition the request did not ask
    for is an IllegalStateException (the leader broke the protocol); nothing is changed."""
    if not ctx.rules.fetch.epoch_answer_needs_same_leader_epoch:
        return
    for topic, partition, *_rest in resp.partitions:
        if (topic, partition) not in thread.epoch_requested:
            raise E.IllegalStateException(
                f"Leader replied with partition {topic}-{partition} not requested in "
                "OffsetsForLeaderEpoch request")


def _replica_epoch(ctx: FetcherContext) -> int:
    """The Fetch's ReplicaState.ReplicaEpoch: the broker's epoch since Fetch v15 (3.5, KIP-903,
    RemoteLeaderEndPoint's brokerEpochSupplier), -1 before."""
    return ctx.broker_epoch if ctx.rules.fetch.fetch_replica_epoch else -1


def _moved_on(ctx: FetcherContext, sent: FetchPartition, st: PartitionFetchState) -> bool:
    """processFetchRequest: is the answer to ``sent`` stale for the fetch state ``st``? Its
    fetch offset is no longer the partition's, or (4.1+, KAFKA-18991) the request carried a
    CurrentLeaderEpoch that is no longer the partition's."""
    if sent.fetch_offset != st.fetch_offset:
        return True
    return (ctx.rules.fetch.fetch_response_needs_same_leader_epoch
            and sent.current_leader_epoch >= 0
            and sent.current_leader_epoch != st.current_leader_epoch)


@dataclass(slots=True)
class PartitionFetchState:
    fetch_offset: int
    current_leader_epoch: int
    state: str
    delayed_until_ms: int = 0
    last_fetched_epoch: int = UNDEFINED_EPOCH
    lag: int = 0
    # an answer's HW was not applied (diverging epoch, KAFKA-14704; or a stale answer): with an
    # incremental session the leader sends that HW again only once it changes
    hw_missed: bool = False
    # (fetch offset, last fetched epoch) of the OFFSET_OUT_OF_RANGE loop last traced
    out_of_range_at: tuple[int, int] | None = None

    def is_fetching(self) -> bool:
        """Fetching (not Truncating), delayed or not."""
        return self.state == FETCHING

    def is_ready_for_fetch(self, now: int) -> bool:
        """PartitionFetchState.isReadyForFetch: Fetching and not delayed."""
        return self.state == FETCHING and self.delayed_until_ms <= now


@dataclass(frozen=True, slots=True)
class InitialFetchState:
    """kafka.server.InitialFetchState: where ReplicaManager asks a fetcher to start a partition
    (its leader, the current leader epoch, the offset: ReplicaManager.initialFetchOffset)."""

    leader: int
    current_leader_epoch: int
    init_offset: int


def partition_fetch_state(ctx: FetcherContext, tp, initial: InitialFetchState
                          ) -> PartitionFetchState:
    """AbstractFetcherThread.partitionFetchState for a partition not fetched at this epoch yet:
    with truncation on fetch (2.8+) Fetching from the offset with the log's latest epoch as
    LastFetchedEpoch, or Truncating when the log has no epoch; before 2.8 always Truncating
    (@2.7.0, @3.9.0-rc3, @4.3.0). A negative offset (Kafka: ask the leader, then truncate) is
    not modelled: ValueError."""
    if initial.init_offset < 0:
        raise ValueError(f"init_offset must be >= 0 (kafkasim does not model "
                         f"fetchOffsetAndTruncate), got {initial.init_offset}")
    epoch = ctx.local_log(*tp).latest_epoch()
    if ctx.rules.fetch.fetch_diverging_epoch and epoch != UNDEFINED_EPOCH:
        return PartitionFetchState(initial.init_offset, initial.current_leader_epoch, FETCHING,
                                   last_fetched_epoch=epoch)
    return PartitionFetchState(initial.init_offset, initial.current_leader_epoch, TRUNCATING)


@dataclass(slots=True)
class ReplicaFetcherThread:
    """Fetches for every local follower partition whose leader is ``leader_id``."""

    broker_id: int
    leader_id: int
    fetcher_id: int
    partitions: dict[tuple[str, int], PartitionFetchState] = field(default_factory=dict)
    in_flight: int = -1          # correlation id of the outstanding request, -1 when idle
    wakeup_at_ms: int = -1       # a pending wake-up timer, -1 when none
    fetch_count: int = 0
    # the FetchPartition of each partition in the outstanding request (with sessions: of each
    # session partition, ReplicaFetch.partitionData): a partition whose state moved on meanwhile
    # (truncation, new leader epoch) ignores the answer, as AbstractFetcherThread does when
    # currentFetchState.fetchOffset != the request's fetchOffset
    requested: dict = field(default_factory=dict)
    # the current leader epoch each partition of the outstanding OffsetsForLeaderEpoch request
    # carried (AbstractFetcherThread's latestEpochsForPartitions: EpochData.currentLeaderEpoch)
    epoch_requested: dict = field(default_factory=dict)
    # partitions dropped after FENCED_LEADER_EPOCH, until a LeaderAndIsr adds them again
    # (AbstractFetcherManager.failedPartitions, the FailedPartitionsCount metric)
    failed_partitions: dict = field(default_factory=dict)
    # KIP-227 (1.1+): the FetchSessionHandler for the leader, made at the first fetch
    session: FetchSessionHandler | None = None
    fetch_corr: int = -1         # correlation id of the last Fetch sent
    # the incremental build (quiet_sessions.build_changed, not Kafka's): the partitions whose
    # fetch state may differ from what the session holds (changed, delayed, removed; in order)
    dirty: dict = field(default_factory=dict)
    # the settings of the last full build: the version's rule flags (a frozen Rules object,
    # checked by identity) and replica.fetch.max.bytes; None before any full build
    built_rules: object = None
    built_max_bytes: int = -1

    @property
    def name(self) -> str:
        return f"ReplicaFetcherThread-{self.fetcher_id}-{self.leader_id}"

    # -- partitions -----------------------------------------------------------------------------
    def add_partition(self, tp, state: PartitionFetchState) -> None:
        """AbstractFetcherThread.addPartitions (a new or replaced fetch state); a partition
        that had failed is fetched again."""
        self.partitions[tp] = state
        self.dirty[tp] = None
        self.failed_partitions.pop(tp, None)

    def remove_partition(self, tp) -> PartitionFetchState | None:
        self.dirty[tp] = None
        return self.partitions.pop(tp, None)

    def add_partitions(self, ctx: FetcherContext, initial_fetch_states: dict) -> set:
        """AbstractFetcherThread.addPartitions: each partition (``initial_fetch_states``:
        tp -> InitialFetchState) is no longer failed and moves to the end of the thread's
        partitions, keeping its fetch state if it is at that leader epoch already, else with
        a new one (``partition_fetch_state``). The partitions added."""
        states = {}
        for tp, initial in initial_fetch_states.items():   # (all checked before any change)
            current = self.partitions.get(tp)
            if current is None or current.current_leader_epoch != initial.current_leader_epoch:
                current = partition_fetch_state(ctx, tp, initial)
            states[tp] = current
        for tp, state in states.items():
            self.partitions.pop(tp, None)
            self.add_partition(tp, state)
        return set(states)

    def remove_partitions(self, tps) -> dict:
        """AbstractFetcherThread.removePartitions: the fetch states of the partitions this
        thread held, now removed."""
        removed = {}
        for tp in tps:
            st = self.remove_partition(tp)
            if st is not None:
                removed[tp] = st
        return removed

    def fetch_state(self, tp) -> PartitionFetchState | None:
        """AbstractFetcherThread.fetchState: the partition's fetch state, None if not held."""
        return self.partitions.get(tp)

    @staticmethod
    def truncate(ctx: FetcherContext, tp, offset: int, reason: str) -> None:
        """ReplicaFetcherThread.truncate: the follower's log of ``tp`` is cut back to
        ``offset`` (Partition.truncateTo); callers go through ``do_truncate``."""
        ctx.local_log(*tp).truncate_to(offset, reason)

    def changed(self, tp) -> None:
        """``tp``'s fetch state was changed from outside (e.g. its current leader epoch)."""
        self.dirty[tp] = None

    # -- driving ------------------------------------------------------------------------------
    def do_work(self, ctx: FetcherContext) -> None:
        """AbstractFetcherThread.doWork: truncate first, then fetch; never two requests at once."""
        if self.in_flight >= 0 or not self.partitions:
            return
        if self.built_rules is not None and quiet_sessions.build_changed(self, ctx):
            return   # the lazy build: only the changed partitions were looked at
        self.maybe_truncate(ctx)
        if self.in_flight < 0:
            self.maybe_fetch(ctx)

    def maybe_truncate(self, ctx: FetcherContext) -> None:
        """AbstractFetcherThread.maybeTruncate: the Truncating partitions not delayed."""
        now = ctx.now
        truncating = [(tp, st) for tp, st in self.partitions.items()
                      if st.state == TRUNCATING and st.delayed_until_ms <= now]
        if truncating:
            self._truncate(ctx, truncating)

    def maybe_fetch(self, ctx: FetcherContext) -> None:
        """AbstractFetcherThread.maybeFetch: build the Fetch of the ready partitions and send
        it; with none ready, wait for the first delayed one (and forget the session's)."""
        now = ctx.now
        ready = [(tp, st) for tp, st in self.partitions.items() if st.is_ready_for_fetch(now)]
        session = self.session
        if session is None and ctx.rules.fetch.fetch_sessions:
            session = self.session = FetchSessionHandler(self.leader_id)
        if not ready:
            self._nothing_ready(ctx, session, now)
            return
        max_bytes = ctx.config["replica.fetch.max.bytes"]
        self._send_fetch(ctx, [self.fetch_partition(ctx, tp, st, max_bytes)
                               for tp, st in ready], session)
        if session is not None and quiet_sessions.LAZY:
            quiet_sessions.remember_full_build(self, ctx.rules, max_bytes)

    def _nothing_ready(self, ctx: FetcherContext, session: FetchSessionHandler | None,
                       now: int) -> None:
        """maybeFetch with no partition ready: wake up when the first delayed one is; a session
        with partitions to forget still sends its Fetch (buildFetch: only toForget, and the
        leader then closes the emptied session)."""
        delays = [st.delayed_until_ms for st in self.partitions.values()
                  if st.delayed_until_ms > now]
        if delays:
            self._wake_at(ctx, min(delays))
        if session is not None and session.session_partitions and not is_full(session.epoch):
            self._send_fetch(ctx, [], session)

    def fetch_partition(self, ctx: FetcherContext, tp, st: PartitionFetchState,
                        max_bytes: int) -> FetchPartition:
        """buildFetch's PartitionData of one partition: its fetch position, the epochs the
        version sends (KIP-320 fencing, 2.1+; the last fetched epoch, 2.8+), its log start."""
        rules = ctx.rules.fetch
        return FetchPartition(tp[0], tp[1], st.fetch_offset,
                              st.current_leader_epoch if rules.current_leader_epoch_fencing
                              else -1,
                              st.last_fetched_epoch if rules.fetch_diverging_epoch else -1,
                              ctx.logs[tp].log_start_offset, max_bytes)

    def _send_fetch(self, ctx: FetcherContext, parts: list, session) -> None:
        """Send one Fetch for ``parts`` (the ready partitions): all of them when sessionless or
        full, the changed ones when incremental (FetchSessionHandler.Builder.build)."""
        if session is not None:
            self.send_request(ctx, session, *session.build(parts))
            return
        cfg = ctx.config
        corr = self._begin_fetch(ctx, {(fp.topic, fp.partition): fp for fp in parts})
        req = FetchRequest(corr, self.broker_id, cfg["replica.fetch.wait.max.ms"],
                           cfg["replica.fetch.min.bytes"], cfg["replica.fetch.response.max.bytes"],
                           tuple(parts), fetcher_id=self.fetcher_id,
                           replica_epoch=_replica_epoch(ctx))
        ctx.send_from_fetcher(self, req, cfg["replica.socket.timeout.ms"])

    def send_request(self, ctx: FetcherContext, session: FetchSessionHandler, to_send: tuple,
                     to_forget: tuple) -> None:
        """Send the session's next Fetch (FetchMetadata: its id and epoch)."""
        cfg = ctx.config
        corr = self._begin_fetch(ctx, session.session_partitions)
        # positional: (..., isolation_level, rack_id, fetcher_id, session_id, session_epoch,
        # to_forget, replica_epoch), FetchRequest's field order
        req = FetchRequest(corr, self.broker_id, cfg["replica.fetch.wait.max.ms"],
                           cfg["replica.fetch.min.bytes"], cfg["replica.fetch.response.max.bytes"],
                           to_send, "read_uncommitted", "", self.fetcher_id, session.session_id,
                           session.epoch, to_forget, _replica_epoch(ctx))
        ctx.send_from_fetcher(self, req, cfg["replica.socket.timeout.ms"])

    def _begin_fetch(self, ctx: FetcherContext, requested: dict) -> int:
        """A Fetch goes out: its correlation id, now the one in flight; ``requested`` the
        FetchPartition of each partition it covers (ReplicaFetch.partitionData)."""
        corr = ctx.next_correlation_id()
        self.in_flight = corr
        self.fetch_corr = corr
        self.fetch_count += 1
        self.requested = requested
        return corr

    def _wake_at(self, ctx: FetcherContext, when: int) -> None:
        if self.wakeup_at_ms < 0 or when < self.wakeup_at_ms or self.wakeup_at_ms < ctx.now:
            self.wakeup_at_ms = when
            ctx.schedule_fetcher_wakeup(self, when)

    def on_wakeup(self, ctx: FetcherContext, when: int) -> None:
        if when == self.wakeup_at_ms:
            self.wakeup_at_ms = -1
        self.do_work(ctx)

    def on_request_failed(self, ctx: FetcherContext, correlation_id: int, reason: str) -> None:
        """Timeout or closed connection: back every partition off and retry later."""
        if correlation_id != self.in_flight:
            return
        self.in_flight = -1
        if self.session is not None and correlation_id == self.fetch_corr:
            self.session.handle_error()   # a failed Fetch (not OffsetsForLeaderEpoch)
        backoff = ctx.config["replica.fetch.backoff.ms"]
        for tp, st in self.partitions.items():
            st.delayed_until_ms = ctx.now + backoff
            self.dirty[tp] = None
        ctx.trace_fetcher(self, "fetch_failed", reason)
        self.do_work(ctx)

    # -- truncation (KIP-101 / KIP-279) -------------------------------------------------------
    def _truncate(self, ctx: FetcherContext, truncating) -> None:
        """truncateToHighWatermark for the partitions without leader epochs; an
        OffsetsForLeaderEpoch request for the others (truncateToEpochEndOffsets follows)."""
        with_epoch = []
        for tp, st in truncating:
            self.dirty[tp] = None
            log = ctx.local_log(*tp)
            epoch = log.latest_epoch()
            if epoch == UNDEFINED_EPOCH or not ctx.rules.fetch.leader_epoch_truncation:
                # no epoch information: truncate to the high watermark (truncateToHighWatermark)
                if not do_truncate(self, ctx, tp, log.high_watermark,
                                   "no leader epoch: truncate to HW"):
                    continue
                st.fetch_offset = log.log_end_offset
                st.last_fetched_epoch = log.latest_epoch()
                st.state = FETCHING
            else:
                with_epoch.append((tp[0], tp[1], st.current_leader_epoch, epoch))
        if with_epoch:
            self.epoch_requested = {(t, p): current for t, p, current, _epoch in with_epoch}
            corr = ctx.next_correlation_id()
            self.in_flight = corr
            req = OffsetsForLeaderEpochRequest(corr, self.broker_id, tuple(with_epoch))
            ctx.send_from_fetcher(self, req, ctx.config["replica.socket.timeout.ms"])

    def truncation_state(self, ctx: FetcherContext, tp, leader_epoch: int, leader_end_offset: int
                         ) -> tuple[int, bool]:
        """AbstractFetcherThread.getOffsetTruncationState (``rules.get_offset_truncation_state``):
        (truncate to, truncation complete). Before 1.1 an undefined answer truncates to the
        high watermark (maybeTruncate @0.11.0.0), not the fetch offset; before 2.0.1 the
        follower's own cache answers undefined for an epoch below its first (KAFKA-7415)."""
        log = ctx.local_log(*tp)
        rules = ctx.rules.fetch
        fallback = self.partitions[tp].fetch_offset \
            if rules.undefined_epoch_offset_truncates_to_fetch_offset else log.high_watermark
        entries = log.leader_epoch_cache.entries
        if not rules.leader_epoch_assign_truncates_conflicts and entries and \
                leader_epoch < entries[0].epoch:
            entries = ()   # 2.0's endOffsetFor: an epoch below the first is unknown here
        return ctx.rulebook.get_offset_truncation_state(
            leader_epoch, leader_end_offset, entries, log.log_end_offset, fallback)

    def on_offsets_for_leader_epoch(self, ctx: FetcherContext,
                                    resp: OffsetsForLeaderEpochResponse) -> None:
        if resp.correlation_id != self.in_flight:
            return
        _check_requested(self, ctx, resp)
        self.in_flight = -1
        same_epoch_only = ctx.rules.fetch.epoch_answer_needs_same_leader_epoch
        for topic, partition, error, epoch, end_offset in resp.partitions:
            tp = (topic, partition)
            self.dirty[tp] = None
            st = self.partitions.get(tp)
            if st is None or st.state != TRUNCATING:
                continue
            sent = self.epoch_requested.get(tp)
            if same_epoch_only and sent != st.current_leader_epoch:
                continue   # its leader epoch changed meanwhile: it asks again at the new one
            if error == E.FENCED_LEADER_EPOCH:
                self.on_partition_fenced(ctx, tp, sent)
                continue
            if error != E.NONE:
                self.handle_partitions_with_errors(ctx, st)
                continue
            offset, done = self.truncation_state(ctx, tp, epoch, end_offset)
            log = ctx.local_log(topic, partition)
            if not do_truncate(self, ctx, tp, offset, f"OffsetsForLeaderEpoch answered epoch "
                                                      f"{epoch} end offset {end_offset}"):
                continue
            st.fetch_offset = log.log_end_offset
            st.last_fetched_epoch = log.latest_epoch()
            if done:
                st.state = FETCHING
        self.do_work(ctx)

    # -- fetch responses ------------------------------------------------------------------------
    def on_fetch_response(self, ctx: FetcherContext, resp: FetchResponse) -> None:
        """The Fetch's answer (AbstractFetcherThread.processFetchRequest, after sendRequest): the
        session handles it first (FetchSessionHandler.handleResponse; an unusable answer is
        ignored and the next fetch is full), then each partition's data; then the next fetch."""
        if resp.correlation_id != self.in_flight:
            return
        self.in_flight = -1
        if self.session is None or self.session.handle_response(resp):
            self.process_fetch_request(ctx, resp)
        self.do_work(ctx)

    def process_fetch_request(self, ctx: FetcherContext, resp: FetchResponse) -> None:
        """AbstractFetcherThread.processFetchRequest, its half after the answer: the loop over
        the answered partitions; only a partition still Fetching from the offset it was asked
        at takes its data."""
        for pd in resp.partitions:
            tp = (pd.topic, pd.partition)
            self.dirty[tp] = None
            st = self.partitions.get(tp)
            if st is None or st.state != FETCHING:
                continue
            sent = self.requested.get(tp)
            if sent is None or _moved_on(ctx, sent, st):
                st.hw_missed = True   # its state moved on meanwhile (truncation, new epoch)
                continue
            log = ctx.logs[tp]
            if pd.error == E.NONE:
                try:
                    self.process_partition_data(ctx, tp, st, log, pd)
                except E.KAFKA_EXCEPTIONS as e:   # (Kafka catches any Throwable, KIP-461)
                    if not ctx.rules.fetch.fetcher_marks_partition_failed_on_error:
                        raise   # (before 2.3 the fetcher thread stopped: not modelled)
                    self.mark_partition_failed(ctx, tp, str(e))
            elif pd.error == E.OFFSET_OUT_OF_RANGE:
                self.handle_out_of_range_error(st, log, pd)
                self._trace_if_looping(ctx, tp, st, sent)
            elif pd.error == E.FENCED_LEADER_EPOCH:
                self.on_partition_fenced(ctx, tp, sent.current_leader_epoch)
            else:  # NOT_LEADER_OR_FOLLOWER, UNKNOWN_LEADER_EPOCH, ...
                self.handle_partitions_with_errors(ctx, st)

    def on_partition_fenced(self, ctx: FetcherContext, tp, request_epoch: int | None) -> None:
        """AbstractFetcherThread.onPartitionFenced: the leader's epoch is newer than this
        follower's. The partition leaves the fetcher (markPartitionFailed) and waits for the
        LeaderAndIsr with the new epoch, unless (2.5+) its epoch changed since the request was
        sent: then it retries after the backoff."""
        st = self.partitions[tp]
        fetch = ctx.rules.fetch
        if not fetch.fenced_partition_leaves_the_fetcher or (
                fetch.fenced_partition_checks_request_epoch
                and request_epoch != st.current_leader_epoch):
            self.handle_partitions_with_errors(ctx, st)
            return
        self.mark_partition_failed(ctx, tp, f"FENCED_LEADER_EPOCH at leader epoch "
                                            f"{st.current_leader_epoch}")

    def mark_partition_failed(self, ctx: FetcherContext, tp, reason: str) -> None:
        """AbstractFetcherThread.markPartitionFailed (KIP-461, 2.3+): the partition leaves the
        fetcher and is failed until the next LeaderAndIsr adds it again."""
        self.remove_partition(tp)
        self.failed_partitions[tp] = None
        ctx.trace_fetcher(self, "fetch_failed",
                          f"{tp[0]}-{tp[1]} {reason}: removed until the next LeaderAndIsr")

    def process_partition_data(self, ctx: FetcherContext, tp, st: PartitionFetchState, log,
                               pd) -> None:
        """ReplicaFetcherThread.processPartitionData: append the records, take the leader's HW
        and log start offset; a diverging epoch truncates instead (truncateOnFetchResponse)."""
        if pd.diverging_epoch is not None:
            self.truncate_on_fetch_response(ctx, tp, st, log, pd.diverging_epoch)
            return
        if st.fetch_offset != log.log_end_offset:  # the LEO
            st.hw_missed = True
            return  # stale response (a truncation happened meanwhile)
        chunk = pd.records
        # the log's latest epoch after the append (lastLeaderEpoch of Kafka's LogAppendInfo):
        # the next fetch's lastFetchedEpoch
        bound = st.current_leader_epoch \
            if ctx.rules.fetch.follower_append_bounded_by_leader_epoch else None
        # replicaMgr.getPartitionOrException(tp).appendRecordsToFollowerOrFutureReplica
        last_epoch = ctx.partitions[tp].append_records_to_follower_or_future_replica(
            ctx, chunk, partition_leader_epoch=bound) if chunk.ids else log.latest_epoch()
        hw = pd.high_watermark
        ctx.set_follower_hw(tp, hw)
        st.hw_missed = False
        if pd.log_start_offset > log.log_start_offset:
            # keeps the latest epoch (LeaderEpochFileCache.truncateFromStart)
            log.maybe_increment_log_start_offset(pd.log_start_offset)
        leo = log.log_end_offset
        st.fetch_offset = leo
        st.last_fetched_epoch = last_epoch
        st.lag = hw - leo if hw > leo else 0

    def truncate_on_fetch_response(self, ctx: FetcherContext, tp, st: PartitionFetchState, log,
                                   diverging_epoch: tuple[int, int]) -> None:
        """AbstractFetcherThread.truncateOnFetchResponse (2.8+): the leader said where the
        follower's log diverges; the answer's HW is not applied (KAFKA-14704)."""
        epoch, end_offset = diverging_epoch
        offset, _done = self.truncation_state(ctx, tp, epoch, end_offset)
        if not do_truncate(self, ctx, tp, offset, f"diverging epoch {epoch} ends at {end_offset}"):
            return
        st.fetch_offset = log.log_end_offset
        st.last_fetched_epoch = log.latest_epoch()
        st.hw_missed = True

    @staticmethod
    def handle_out_of_range_error(st: PartitionFetchState, log, pd) -> None:
        """handleOutOfRangeError: truncate to the leader's LEO when below ours, or start over at
        the leader's log start when ours is behind it; fetch from our LEO."""
        leader_leo = pd.log_end_offset
        if 0 <= leader_leo < log.log_end_offset:
            log.truncate_to(leader_leo, "OFFSET_OUT_OF_RANGE: leader's LEO is lower")
        elif pd.log_start_offset > log.log_end_offset:
            log.truncate_fully_and_start_at(pd.log_start_offset)
        st.fetch_offset = log.log_end_offset
        st.last_fetched_epoch = log.latest_epoch()

    def _trace_if_looping(self, ctx: FetcherContext, tp, st: PartitionFetchState, sent) -> None:
        """OFFSET_OUT_OF_RANGE handled without moving the position: the same fetch goes again
        at once, as in Kafka; one trace row per stuck position says why."""
        at = (st.fetch_offset, st.last_fetched_epoch)
        if at != (sent.fetch_offset, sent.last_fetched_epoch) or at == st.out_of_range_at:
            return
        st.out_of_range_at = at
        ctx.trace("fetch_out_of_range", tp[0], tp[1], ev.FetchOutOfRange(
            st.fetch_offset, st.last_fetched_epoch, self.leader_id, st.current_leader_epoch))

    @staticmethod
    def handle_partitions_with_errors(ctx: FetcherContext, st: PartitionFetchState) -> None:
        """handlePartitionsWithErrors: back the partition off (replica.fetch.backoff.ms)."""
        st.delayed_until_ms = ctx.now + ctx.config["replica.fetch.backoff.ms"]
