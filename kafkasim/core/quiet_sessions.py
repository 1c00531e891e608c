"""The simulator's lazy read of quiet fetch-session partitions (not Kafka's; ``LAZY``).

Kafka's leader reads every partition of an incremental fetch session (KIP-227) on every fetch,
most of them to find nothing to say. Here a follower session partition found *quiet* (caught up,
in the ISR, its HW at the LEO, nothing to answer) leaves the session's ``active`` set and is not
read again until something about it changes -- its LEO, HW, ISR, role, or the follower's fetch
position -- which the replica manager learns through ``ReplicaManager.unquiet`` (the broker's
``partition_changed``). The follower's lag clocks (lastCaughtUpTimeMs, lastFetchTimeMs) that the
skipped reads would have refreshed are written when the partition wakes, before the ISR check
(``ReplicaManager.maybe_shrink_isr``) and at the end of every ``Cluster.run``
(``settle_fetch_sessions``).

The follower side keeps the same economy: ``ReplicaFetcherThread.dirty`` lists the partitions
whose fetch state may differ from what its ``FetchSessionHandler`` holds, and ``build_changed``
builds the next incremental Fetch from those alone, answering exactly what
``FetchSessionHandler.build`` over every partition would.

With ``LAZY = False`` every fetch reads every session partition, as Kafka does, and the traces are
identical (tests/test_quiet_sessions.py, tests/test_fetch_session.py); with it on, the cost of a
fetch follows the partitions that changed (benchmarks/bench_partitions.py: at 1,000 partitions a
per-event cost of ~24 us against ~305 us without it).

Everything here is bookkeeping around Kafka's own code in ``fetch_session``, ``replica_manager``
and ``fetcher``: the session's ``active`` / ``last_read_ms`` / ``parked`` fields and the replica
manager's ``quiet`` map (tp -> the follower sessions where it is quiet) are its state.
"""

from __future__ import annotations

from bisect import insort
from operator import attrgetter
from typing import TYPE_CHECKING, NamedTuple

from kafkasim.core.messages import FetchPartition

if TYPE_CHECKING:   # types only
    from kafkasim.core.fetch_session import FetchSession, FetchSessionHandler
    from kafkasim.core.fetcher import ReplicaFetcherThread
    from kafkasim.core.interfaces import FetcherContext
    from kafkasim.core.partition import Partition
    from kafkasim.core.replica_manager import ReplicaManager

#: read only the active (non-quiet) partitions of follower fetch sessions (see the docstring)
LAZY = True

_pos = attrgetter("pos")   # a CachedPartition's place in the session order (the sort key)


class SessionChanges(NamedTuple):
    """FetchSessionHandler.Builder.build's sets, from the dirty partitions only."""

    added: FetchPartition | None   # the partition new to the session (at most one here)
    altered: list                  # FetchPartitions whose data changed
    removed: list                  # partitions leaving the session (not ready, or gone)
    waiting: dict                  # not ready now (delayed): looked at again at the next build


# ---------------------------------------------------------------------------------------------
# leader side: which session partitions a fetch reads
# ---------------------------------------------------------------------------------------------
def partitions_to_read(session: FetchSession) -> list:
    """The session partitions an incremental fetch reads, in session order: a follower's active
    ones with the lazy read, else all of them (IncrementalFetchContext.foreachPartition)."""
    if LAZY and session.privileged:
        active = session.active
        # (one partition is in order already: the usual follower session's steady state)
        return sorted(active.values(), key=_pos) if len(active) > 1 else list(active.values())
    return list(session.partitions.values())


def partitions_to_watch(session: FetchSession, read: list) -> list:
    """The partitions a parked fetch of ``session`` watches: those it read (``read``), less the
    ones the reads left quiet. (The reads can only take partitions out of an open session's
    active set: ``read`` holds when none left.)"""
    if len(session.active) != len(read) or session.closed or not session.privileged:
        return sorted(session.active.values(), key=_pos)
    return read


def may_go_quiet(session: FetchSession, cp, log, hw: int, leo: int, ls: int) -> bool:
    """After a follower read of ``cp`` (at ``hw``, ``leo``, ``ls``): has the answer nothing to
    say (no records, the HW and log start offset the session last answered, unchanged by the
    read), with the HW at the LEO (no commit pending that would wake it at once)?"""
    return session is not None and cp.fetch_offset == leo and hw == leo and \
        hw == cp.high_watermark and ls == cp.local_log_start_offset and \
        log.high_watermark == hw and log.log_start_offset == ls


def materialize(rm: ReplicaManager, part: Partition, session: FetchSession) -> None:
    """What the skipped reads of a quiet partition would have written (Partition.
    updateFollowerFetchState at the leader's LEO): the lag clocks of a fetch at the follower's
    LEO (the leader's then) at the session's last read, by the caught-up rule."""
    st = part.remote.get(session.replica_id)
    t = session.last_read_ms
    if st is not None and t >= 0:
        ctx = rm.lag_context
        leo = st.log_end_offset
        st.last_caught_up_time_ms = ctx.rulebook.updated_last_caught_up_time_ms(
            st, leo, leo, t, previous_fetch_rule=ctx.rules.isr.caught_up_previous_fetch_rule)
        st.last_fetch_time_ms = t


def unquiet(rm: ReplicaManager, tp) -> None:
    """Something about ``tp`` changed (LEO, HW, ISR, role): every session where it was quiet
    reads it again from its next fetch on; a parked fetch of such a session watches it."""
    sessions = rm.quiet.pop(tp, None)
    if not sessions:
        return
    part = rm.partitions.get(tp)
    for session in sessions:
        cp = session.partitions.get(tp)
        if cp is None or tp in session.active:
            continue
        if part is not None:
            materialize(rm, part, session)
        if session.closed:
            continue
        session.active[tp] = cp
        df = session.parked
        if df is not None and df.id in rm.delayed_fetch:
            df.partitions.append(cp)
            df.partitions.sort(key=_pos)
            # in parking order, as if it had watched ``tp`` from the start
            insort(rm.follower_fetch_waiters.setdefault(tp, []), df.id)


def wake_named(rm: ReplicaManager, session: FetchSession, req) -> None:
    """An incremental request (of ``session``'s current epoch) names or forgets partitions:
    settle those that were quiet (their last read was the session's previous fetch)."""
    parts = session.partitions
    active = session.active
    if len(active) >= len(parts):
        return   # nothing quiet
    for tp in [(fp.topic, fp.partition) for fp in req.partitions] + \
            [tuple(tp) for tp in req.to_forget]:
        if tp in parts and tp not in active:
            _leave_quiet(rm, session, tp)
            active[tp] = parts[tp]


def _leave_quiet(rm: ReplicaManager, session: FetchSession, tp) -> None:
    """``tp`` stops being quiet for ``session``: write its skipped reads' lag clocks and drop
    the session from the partition's quiet list."""
    part = rm.partitions.get(tp)
    if part is not None:
        materialize(rm, part, session)
    lst = rm.quiet.get(tp)
    if lst is not None:
        lst[:] = [s for s in lst if s is not session]
        if not lst:
            del rm.quiet[tp]


def settle_session(rm: ReplicaManager, session: FetchSession) -> None:
    """A session left the cache: write the lag clocks of its quiet partitions."""
    for tp in session.partitions:
        if tp not in session.active:
            _leave_quiet(rm, session, tp)
    session.active = dict(session.partitions)


def settle_all(rm: ReplicaManager) -> None:
    """Write every quiet partition's lag clocks now (they stay quiet)."""
    for tp, sessions in rm.quiet.items():
        part = rm.partitions.get(tp)
        if part is not None:
            for session in sessions:
                if tp not in session.active:
                    materialize(rm, part, session)


# ---------------------------------------------------------------------------------------------
# follower side: the incremental build over the changed partitions only
# ---------------------------------------------------------------------------------------------
def remember_full_build(thread: ReplicaFetcherThread, rules, max_bytes: int) -> None:
    """After a build over every partition: every partition not in the session now is looked at
    again at the next build, and the settings of this build are kept."""
    held = thread.session.session_partitions
    thread.dirty = {tp: None for tp in thread.partitions if tp not in held}
    thread.built_rules = rules
    thread.built_max_bytes = max_bytes


def build_changed(thread: ReplicaFetcherThread, ctx: FetcherContext) -> bool:
    """Send what ``ReplicaFetcherThread.do_work`` would, built from the ``dirty`` partitions
    alone, when every other partition is in the session, ready and unchanged. False (the full
    pass runs; nothing changed here) when the session is not incremental, some partition must
    truncate, none is left to fetch, more than one is new to the session, or the settings
    changed since the last full build."""
    session = thread.session   # never None here: built_rules is set with the session
    max_bytes = ctx.config["replica.fetch.max.bytes"]
    if session is None or session.epoch <= 0 or not LAZY or \
            ctx.rules is not thread.built_rules or max_bytes != thread.built_max_bytes:
        return False
    changes = _changed_sets(thread, ctx, max_bytes)
    if changes is None or changes.added is None and \
            len(changes.removed) == len(session.session_partitions):
        # the full pass must run; or nothing is left to fetch: the full pass forgets them and
        # sets the timer
        return False
    thread.dirty = changes.waiting
    to_send, to_forget = _update_session(session, changes)
    thread.send_request(ctx, session, to_send, to_forget)
    return True


def _changed_sets(thread: ReplicaFetcherThread, ctx: FetcherContext, max_bytes: int
                  ) -> SessionChanges | None:
    """The session's changes, from the dirty partitions only; None when the full pass must
    run."""
    held = thread.session.session_partitions
    added = None
    altered = []
    removed = []
    waiting = {}   # not ready now (delayed): looked at again at the next build
    for tp in thread.dirty:
        st = thread.partitions.get(tp)
        prev = held.get(tp)
        # delayed: ctx.now (a property) only read for a partition ever backed off
        # (delayed_until_ms is 0 until then, and the time is never negative)
        if st is None or (st.delayed_until_ms > 0 and st.delayed_until_ms > ctx.now):
            if prev is not None:
                removed.append(tp)
            if st is not None:
                waiting[tp] = None
            continue
        if not st.is_fetching():
            return None            # truncating: the full pass runs the truncation
        fp = thread.fetch_partition(ctx, tp, st, max_bytes)
        if prev is None:
            if added is not None:
                return None        # two new partitions: the full pass orders them
            added = fp
        elif fp != prev:           # PartitionData.equals: offsets, epochs, max bytes
            altered.append(fp)
    return SessionChanges(added, altered, removed, waiting)


def _update_session(session: FetchSessionHandler, changes: SessionChanges
                    ) -> tuple[tuple, tuple]:
    """FetchSessionHandler.build's session update and request for these partitions only: the
    session takes the new and altered partitions and loses the removed; the request sends the
    new one, then the altered in session order, and forgets the removed in session order."""
    added, altered, removed, _waiting = changes
    held = session.session_partitions
    pos = session.session_pos
    if len(removed) > 1:
        removed.sort(key=pos.__getitem__)
    for tp in removed:
        del held[tp]
        del pos[tp]
    if len(altered) > 1:
        altered.sort(key=lambda fp: pos[(fp.topic, fp.partition)])
    for fp in altered:
        held[(fp.topic, fp.partition)] = fp
    forgotten = tuple(removed) if removed else ()
    if added is None:
        return tuple(altered), forgotten
    tp = (added.topic, added.partition)
    held[tp] = added
    pos[tp] = session.next_pos
    session.next_pos += 1
    return (added, *altered), forgotten
