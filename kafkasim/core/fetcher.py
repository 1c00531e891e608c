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
from kafkasim.core import fetch_session
from kafkasim.core.fetch_session import (
    _INT_MAX,
    INITIAL_EPOCH,
    INVALID_SESSION_ID,
    FetchSessionHandler,
    is_full,
)
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
_NONE = E.NONE  # hot-path constant (one global load instead of a module attribute lookup)
# FetchPartition is a NamedTuple, whose generated __new__ is a Python function: the fetch paths
# build it with the C constructor directly (the same object)
_new_fp = tuple.__new__
_new = object.__new__   # a slotted message whose fields the caller sets (see _fetch_changed)


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
    if rules.follower_truncates_on_every_new_epoch:
        return new_epoch != old_epoch
    if rules.follower_truncates_after_missed_epoch:
        return new_epoch not in (old_epoch, old_epoch + 1)
    return False


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
    # KIP-227 (1.1+): the FetchSessionHandler for the leader, made at the first fetch
    session: FetchSessionHandler | None = None
    fetch_corr: int = -1         # correlation id of the last Fetch sent
    # the incremental build (fetch_session.LAZY, not Kafka's): the partitions whose fetch state
    # may differ from what the session holds (changed, delayed, removed; insertion-ordered)
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
        """AbstractFetcherThread.addPartitions (a new or replaced fetch state)."""
        self.partitions[tp] = state
        self.dirty[tp] = None

    def remove_partition(self, tp) -> PartitionFetchState | None:
        self.dirty[tp] = None
        return self.partitions.pop(tp, None)

    def changed(self, tp) -> None:
        """``tp``'s fetch state was changed from outside (e.g. its current leader epoch)."""
        self.dirty[tp] = None

    # -- driving ------------------------------------------------------------------------------
    def do_work(self, ctx: FetcherContext) -> None:
        """AbstractFetcherThread.doWork: truncate first, then fetch; never two requests at once."""
        if self.in_flight >= 0 or not self.partitions:
            return
        if self.built_rules is not None and self._fetch_changed(ctx):
            return
        now = ctx.now
        # one pass sorts the partitions; only when some must truncate first is the ready list
        # made again afterwards (truncation can move partitions to Fetching)
        ready = []
        truncating = False
        for tp, st in self.partitions.items():
            if st.delayed_until_ms <= now:
                if st.state == FETCHING:
                    ready.append((tp, st))
                elif st.state == TRUNCATING:
                    truncating = True
        if truncating:
            self._maybe_truncate(ctx, [(tp, st) for tp, st in self.partitions.items()
                                       if st.state == TRUNCATING and st.delayed_until_ms <= now])
            if self.in_flight >= 0:
                return
            ready = [(tp, st) for tp, st in self.partitions.items()
                     if st.state == FETCHING and st.delayed_until_ms <= now]
        rules = ctx.rules
        session = self.session
        if session is None and rules.fetch_sessions:
            session = self.session = FetchSessionHandler(self.leader_id)
        if not ready:
            delays = [st.delayed_until_ms for st in self.partitions.values()
                      if st.delayed_until_ms > now]
            if delays:
                self._wake_at(ctx, min(delays))
            if session is not None and session.session_partitions and \
                    not is_full(session.epoch):
                # buildFetch: no partition ready but some to forget: the fetch still goes,
                # carrying only toForget (the leader then closes the emptied session)
                self._send_fetch(ctx, [], session)
            return
        cfg = ctx.config
        fencing = rules.current_leader_epoch_fencing
        diverging = rules.fetch_diverging_epoch
        max_bytes = cfg["replica.fetch.max.bytes"]
        logs = ctx.logs
        parts = [_new_fp(FetchPartition, (tp[0], tp[1], st.fetch_offset,
                                          st.current_leader_epoch if fencing else -1,
                                          st.last_fetched_epoch if diverging else -1,
                                          logs[tp].log_start_offset, max_bytes))
                 for tp, st in ready]
        self._send_fetch(ctx, parts, session)
        if session is not None and fetch_session.LAZY:
            # every partition not in the session now is looked at again at the next build
            held = session.session_partitions
            self.dirty = {tp: None for tp in self.partitions if tp not in held}
            self.built_rules = rules
            self.built_max_bytes = max_bytes

    def _fetch_changed(self, ctx: FetcherContext) -> bool:
        """The incremental build over the changed partitions only: what ``do_work`` would send
        when every partition outside ``dirty`` is in the session, ready and unchanged. False
        (do the full pass) when the session is not incremental, some partition must truncate,
        none is ready, more than one is new to the session, or the settings changed. (The usual
        answer's build is ``on_fetch_response``'s own, with what it has at hand.)"""
        session = self.session   # never None here: built_rules is set with the session
        if session.epoch <= 0 or not fetch_session.LAZY:   # is_full: INITIAL (0) or FINAL (-1)
            return False
        rules = ctx.rules
        cfg = ctx.config
        max_bytes = cfg["replica.fetch.max.bytes"]
        # the settings of the last full build, or the full pass builds every partition anew
        if rules is not self.built_rules or max_bytes != self.built_max_bytes:
            return False
        fencing = rules.current_leader_epoch_fencing
        diverging = rules.fetch_diverging_epoch
        held = session.session_partitions
        partitions = self.partitions
        logs = ctx.logs
        # Builder.build's three sets, made from the dirty partitions only; the session is left
        # as it is until every dirty partition has been looked at (a False answer changes nothing)
        added = None         # the partition new to the session (at most one here)
        altered = []
        removed = []
        waiting = {}         # not ready now (delayed): looked at again at the next build
        for tp in self.dirty:
            st = partitions.get(tp)
            prev = held.get(tp)
            # delayed: ctx.now (a property call) only read for a partition ever backed off
            # (delayed_until_ms is 0 until then, and the time is never negative)
            if st is None or (st.delayed_until_ms > 0 and st.delayed_until_ms > ctx.now):
                if prev is not None:
                    removed.append(tp)
                if st is not None:
                    waiting[tp] = None
            elif st.state != FETCHING:
                return False            # truncating: the full pass runs the truncation
            else:
                fp = _new_fp(FetchPartition, (
                    tp[0], tp[1], st.fetch_offset, st.current_leader_epoch if fencing else -1,
                    st.last_fetched_epoch if diverging else -1, logs[tp].log_start_offset,
                    max_bytes))
                if prev is None:
                    if added is not None:
                        return False    # two new partitions: the full pass orders them
                    added = fp
                elif fp != prev:        # PartitionData.equals: offsets, epochs, max bytes
                    altered.append(fp)
        if added is None and len(removed) == len(held):
            return False   # nothing left to fetch: the full pass forgets them and sets the timer
        # FetchSessionHandler.build's session update and request, for these partitions only:
        # the session takes the new and altered partitions and loses the removed; the request
        # sends the new one, then the altered in session order, and forgets the removed in
        # session order
        if removed:
            pos = session.session_pos
            if len(removed) > 1:
                removed.sort(key=pos.__getitem__)
            for tp in removed:
                del held[tp]
                del pos[tp]
            to_forget = tuple(removed)
        else:
            to_forget = ()
        if altered:
            if len(altered) > 1:
                pos = session.session_pos
                altered.sort(key=lambda fp: pos[(fp.topic, fp.partition)])
            for fp in altered:
                held[(fp.topic, fp.partition)] = fp
        if added is None:
            to_send = tuple(altered)
        else:
            tp = (added.topic, added.partition)
            held[tp] = added
            session.session_pos[tp] = session.next_pos
            session.next_pos += 1
            to_send = (added, *altered)
        self.dirty = waiting
        self._send_incremental(ctx, session, cfg, to_send, to_forget)
        return True

    def _send_incremental(self, ctx: FetcherContext, session, cfg, to_send: tuple,
                          to_forget: tuple) -> None:
        """``_send_request`` for the incremental builds (one per leader answer): the
        FetchRequest(corr, broker id, wait, min bytes, max bytes, to_send, "read_uncommitted",
        "", fetcher id, session id, session epoch, to_forget) has its fields set here, as the
        class call would run its generated __init__ in an interpreter frame of its own."""
        corr = ctx.next_correlation_id()
        self.in_flight = corr
        self.fetch_corr = corr
        self.fetch_count += 1
        self.requested = session.session_partitions
        req = _new(FetchRequest)
        req.correlation_id = corr
        req.replica_id = self.broker_id
        req.max_wait_ms = cfg["replica.fetch.wait.max.ms"]
        req.min_bytes = cfg["replica.fetch.min.bytes"]
        req.max_bytes = cfg["replica.fetch.response.max.bytes"]
        req.partitions = to_send
        req.isolation_level = "read_uncommitted"
        req.rack_id = ""
        req.fetcher_id = self.fetcher_id
        req.session_id = session.session_id
        req.session_epoch = session.epoch
        req.to_forget = to_forget
        ctx.send_from_fetcher(self, req, cfg["replica.socket.timeout.ms"])

    def _send_fetch(self, ctx: FetcherContext, parts: list, session) -> None:
        """Send one Fetch for ``parts`` (the ready partitions): all of them when sessionless or
        full, the changed ones when incremental (FetchSessionHandler.Builder.build)."""
        if session is not None:
            self._send_request(ctx, session, *session.build(parts))
            return
        cfg = ctx.config
        corr = ctx.next_correlation_id()
        self.in_flight = corr
        self.fetch_corr = corr
        self.fetch_count += 1
        self.requested = {(fp.topic, fp.partition): fp for fp in parts}
        req = FetchRequest(corr, self.broker_id, cfg["replica.fetch.wait.max.ms"],
                           cfg["replica.fetch.min.bytes"], cfg["replica.fetch.response.max.bytes"],
                           tuple(parts), fetcher_id=self.fetcher_id)
        ctx.send_from_fetcher(self, req, cfg["replica.socket.timeout.ms"])

    def _send_request(self, ctx: FetcherContext, session, to_send, to_forget) -> None:
        """Send the session's next Fetch (FetchMetadata: its id and epoch)."""
        cfg = ctx.config
        corr = ctx.next_correlation_id()
        self.in_flight = corr
        self.fetch_corr = corr
        self.fetch_count += 1
        self.requested = session.session_partitions
        # positional: (..., isolation_level, rack_id, fetcher_id, session_id, session_epoch,
        # to_forget), FetchRequest's field order
        req = FetchRequest(corr, self.broker_id, cfg["replica.fetch.wait.max.ms"],
                           cfg["replica.fetch.min.bytes"], cfg["replica.fetch.response.max.bytes"],
                           to_send, "read_uncommitted", "", self.fetcher_id, session.session_id,
                           session.epoch, to_forget)
        ctx.send_from_fetcher(self, req, cfg["replica.socket.timeout.ms"])

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
    def _maybe_truncate(self, ctx: FetcherContext, truncating) -> None:
        with_epoch = []
        for tp, st in truncating:
            self.dirty[tp] = None
            log = ctx.local_log(*tp)
            epoch = log.latest_epoch()
            if epoch == UNDEFINED_EPOCH or not ctx.rules.leader_epoch_truncation:
                # no epoch information: truncate to the high watermark (truncateToHighWatermark)
                log.truncate_to(log.high_watermark, "no leader epoch: truncate to HW")
                st.fetch_offset = log.log_end_offset
                st.last_fetched_epoch = log.latest_epoch()
                st.state = FETCHING
            else:
                with_epoch.append((tp[0], tp[1], st.current_leader_epoch, epoch))
        if with_epoch:
            corr = ctx.next_correlation_id()
            self.in_flight = corr
            req = OffsetsForLeaderEpochRequest(corr, self.broker_id, tuple(with_epoch))
            ctx.send_from_fetcher(self, req, ctx.config["replica.socket.timeout.ms"])

    def truncation_state(self, ctx: FetcherContext, tp, leader_epoch: int, leader_end_offset: int
                         ) -> tuple[int, bool]:
        """AbstractFetcherThread.getOffsetTruncationState (``rules.get_offset_truncation_state``):
        (truncate to, truncation complete)."""
        log = ctx.local_log(*tp)
        return ctx.rulebook.get_offset_truncation_state(
            leader_epoch, leader_end_offset, log.leader_epoch_cache.entries,
            log.log_end_offset, self.partitions[tp].fetch_offset)

    def on_offsets_for_leader_epoch(self, ctx: FetcherContext,
                                    resp: OffsetsForLeaderEpochResponse) -> None:
        if resp.correlation_id != self.in_flight:
            return
        self.in_flight = -1
        backoff = ctx.config["replica.fetch.backoff.ms"]
        for topic, partition, error, epoch, end_offset in resp.partitions:
            tp = (topic, partition)
            self.dirty[tp] = None
            st = self.partitions.get(tp)
            if st is None or st.state != TRUNCATING:
                continue
            if error != E.NONE:
                st.delayed_until_ms = ctx.now + backoff
                continue
            offset, done = self.truncation_state(ctx, tp, epoch, end_offset)
            log = ctx.local_log(topic, partition)
            log.truncate_to(offset, f"OffsetsForLeaderEpoch answered epoch {epoch} "
                                    f"end offset {end_offset}")
            st.fetch_offset = log.log_end_offset
            st.last_fetched_epoch = log.latest_epoch()
            if done:
                st.state = FETCHING
        self.do_work(ctx)

    # -- fetch responses ------------------------------------------------------------------------
    def on_fetch_response(self, ctx: FetcherContext, resp: FetchResponse) -> None:
        if resp.correlation_id != self.in_flight:
            return
        self.in_flight = -1
        session = self.session
        parts = resp.partitions
        verify = False
        if session is not None:
            epoch = session.epoch
            if epoch > 0 and len(parts) <= 1 and resp.error == _NONE and \
                    resp.session_id != INVALID_SESSION_ID:
                # FetchSessionHandler.handleResponse, inlined for the usual incremental answer
                # (every fetch): the next epoch (nextIncremental), once its partition, if any,
                # is found in the session (verifyIncrementalFetchResponsePartitions: the loop's
                # first check, before any change; ``requested`` is the session's partitions)
                session.epoch = epoch + 1 if epoch != _INT_MAX else 1
                verify = True
            elif not session.handle_response(resp):
                self.do_work(ctx)   # a session error: nothing to process, the next fetch is full
                return
        partitions = self.partitions
        requested = self.requested
        logs = ctx.logs
        dirty = self.dirty
        advanced = None   # the fetch state the answer moved on (read for one-partition answers)
        for pd in parts:
            tp = (pd.topic, pd.partition)
            sent = requested.get(tp)
            if sent is None and verify:
                session.epoch = INITIAL_EPOCH   # not in the session: nextCloseExistingAttemptNew
                self.do_work(ctx)
                return
            dirty[tp] = None
            st = partitions.get(tp)
            if st is None or st.state != FETCHING:
                continue
            if sent is None or sent.fetch_offset != st.fetch_offset:
                st.hw_missed = True
                continue
            log = logs[tp]
            err = pd.error
            if err == _NONE:
                if pd.diverging_epoch is not None:
                    epoch, end_offset = pd.diverging_epoch
                    offset, _done = self.truncation_state(ctx, tp, epoch, end_offset)
                    log.truncate_to(offset, f"diverging epoch {epoch} ends at {end_offset}")
                    st.fetch_offset = log.log_end_offset
                    st.last_fetched_epoch = log.latest_epoch()
                    st.hw_missed = True
                    continue
                if st.fetch_offset != log.log_end_offset:  # the LEO
                    st.hw_missed = True
                    continue  # stale response (a truncation happened meanwhile)
                chunk = pd.records
                if chunk.ids:
                    # the log's latest epoch after the append (lastLeaderEpoch of Kafka's
                    # LogAppendInfo): the next fetch's lastFetchedEpoch
                    last_epoch = log.append_as_follower(chunk)
                else:
                    entries = log.leader_epoch_cache.entries   # log.latest_epoch(), inlined
                    last_epoch = entries[-1].epoch if entries else UNDEFINED_EPOCH
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
                advanced = st
            elif err == E.OFFSET_OUT_OF_RANGE:
                leader_leo = pd.log_end_offset
                if 0 <= leader_leo < log.log_end_offset:
                    log.truncate_to(leader_leo, "OFFSET_OUT_OF_RANGE: leader's LEO is lower")
                elif pd.log_start_offset > log.log_end_offset:
                    log.truncate_fully_and_start_at(pd.log_start_offset)
                st.fetch_offset = log.log_end_offset
                st.last_fetched_epoch = log.latest_epoch()
            else:  # NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, ...
                st.delayed_until_ms = ctx.now + ctx.config["replica.fetch.backoff.ms"]
        if verify and advanced is not None and len(dirty) == 1:
            # _fetch_changed's build for the usual answer, from what the loop has at hand: the
            # session goes on (verify), its one answered partition moved on and is the only one
            # changed, in the session (``sent``) and ready, the settings those of the last full
            # build: the next fetch sends it if it changed and forgets nothing
            rules = ctx.rules
            cfg = ctx.config
            max_bytes = cfg["replica.fetch.max.bytes"]
            if rules is self.built_rules and max_bytes == self.built_max_bytes and \
                    fetch_session.LAZY and (advanced.delayed_until_ms <= 0
                                            or advanced.delayed_until_ms <= ctx.now):
                fp = _new_fp(FetchPartition, (
                    tp[0], tp[1], leo,
                    advanced.current_leader_epoch if rules.current_leader_epoch_fencing else -1,
                    last_epoch if rules.fetch_diverging_epoch else -1, log.log_start_offset,
                    max_bytes))
                if fp != sent:          # PartitionData.equals: offsets, epochs, max bytes
                    requested[tp] = fp  # the session's partitions (verify)
                    to_send = (fp,)
                else:
                    to_send = ()
                self.dirty = {}
                self._send_incremental(ctx, session, cfg, to_send, ())
                return
        # do_work: nothing is in flight now; its incremental build first, without the extra call
        if partitions and self.built_rules is not None and self._fetch_changed(ctx):
            return
        self.do_work(ctx)
