"""Kafka's replication rules as small pure functions: read them next to Kafka's source.

Every rule the simulator follows to decide a high watermark (the leader's and a follower's),
whether a follower is caught up or out of sync, whether an ``acks=all`` produce may append and
when it is done, where a follower truncates and who becomes leader in ZooKeeper mode lives here,
once, and this copy is the one that runs: ``Partition``, ``ReplicaManager``, the fetcher, the
broker, the ZooKeeper controller and the leader epoch cache call these functions (through the
cluster's ``RuleBook``, or ``rules.end_offset_for`` through this module), and nothing else
re-implements them. Where a rule needs a fast path for the simulator's speed, the fast path is
inside the function (as Kafka's ``maybeIncrementLeaderHW`` keeps its own), so editing a function
here, or swapping it, changes every run. The KRaft controller's election order and ELR rules are
``kafkasim.control.kraft.partition_change``'s module functions; idempotent appends are
``kafkasim.core.producer_state``'s.

Each function is named for the Kafka method it mirrors (snake_case) and says where it lives:

    P    core/src/main/scala/kafka/cluster/Partition.scala
    R    core/src/main/scala/kafka/cluster/Replica.scala (ReplicaState)
    LEC  storage/src/main/java/org/apache/kafka/storage/internals/epoch/LeaderEpochFileCache.java
    AFT  core/src/main/scala/kafka/server/AbstractFetcherThread.scala
    UL   storage/src/main/java/org/apache/kafka/storage/internals/log/UnifiedLog.java (as
         ReplicaFetcherThread.processPartitionData calls it: the follower HW)
    RM   core/src/main/scala/kafka/server/ReplicaManager.scala
    PLE  core/src/main/scala/kafka/controller/PartitionStateMachine.scala
         (object PartitionLeaderElectionAlgorithms, ZooKeeper mode)

The functions take plain values (ints, tuples, ``ReplicaState`` records) and return plain values:
no clock, no configs, no messages. Where Kafka's rule changed between releases, the keyword flags
name the version rule of ``kafkasim.settings.versions.Rules`` that selects the older behaviour; the
defaults
are today's Kafka.

Swapping a rule: ``Cluster.swap_rule("maybe_increment_leader_hw", my_function)`` makes every
partition of that cluster use ``my_function`` (same signature); the checkers then show what breaks.
``RULES`` lists the swappable names. Editing a function of this module (or replacing it, e.g.
``monkeypatch.setattr(rules, "maybe_increment_leader_hw", f)``) before a ``Cluster`` is built has
the same effect: the cluster's ``RuleBook`` is built from this module's attributes then.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Sequence
from dataclasses import dataclass

from kafkasim.core import errors as E

#: Kafka initialises lastCaughtUpTimeMs to 0, i.e. 1970; simulated time starts at 0, so the
#: simulator uses a time far in the past for "never".
NEVER_MS = -(1 << 50)
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


@dataclass(slots=True)
class ReplicaState:
    """What the leader knows about one follower (R ``ReplicaState``): plain data."""

    broker_id: int
    log_end_offset: int = -1            # -1 = unknown (reset by makeLeader)
    log_start_offset: int = -1
    #: Replica.scala ``ReplicaState.Empty`` (0.10.2 ... trunk: a Replica starts at 0, not -1);
    #: makeLeader's resetReplicaState of a new leader sets UnifiedLog.UnknownOffset (-1)
    last_fetch_leader_log_end_offset: int = 0
    last_fetch_time_ms: int = 0
    last_caught_up_time_ms: int = NEVER_MS
    #: R ``brokerEpoch`` (3.5+, KIP-903): the broker epoch of the follower's last Fetch (-1 from a
    #: Fetch older than v15); None before any fetch to this leader
    broker_epoch: int | None = None

    def is_caught_up(self, leader_end_offset: int, current_time_ms: int,
                     replica_max_lag_ms: int) -> bool:
        """R ``ReplicaState.isCaughtUp``, by ``is_caught_up``."""
        return is_caught_up(self.log_end_offset, leader_end_offset,
                            self.last_caught_up_time_ms, current_time_ms, replica_max_lag_ms)


# -- min.insync.replicas --------------------------------------------------------------------------
def effective_min_isr(min_insync_replicas: int, replica_count: int, *, capped: bool = True) -> int:
    """P ``effectiveMinIsr``: min.insync.replicas, capped at the number of assigned replicas
    (KIP-966 / KAFKA-15583, 3.7). ``capped=False`` (rule ``effective_min_isr_capped`` off, before
    3.7): the configured value as is, so an RF-2 topic with min ISR 3 can never take acks=all."""
    if capped and min_insync_replicas > replica_count:
        return replica_count
    return min_insync_replicas


def maximal_isr(isr: tuple[int, ...], adding: tuple[int, ...] = (), *,
                optimistic: bool = True) -> tuple[int, ...]:
    """P ``PendingExpandIsr.maximalIsr`` (KIP-497, 2.7): while an expansion is in flight the
    replicas being ``adding`` already count for the HW and acks=all; a pending shrink keeps the
    old ISR (pass no ``adding``). ``optimistic=False`` (rule ``maximal_isr`` off, before 2.7):
    only the committed ISR counts."""
    return isr + adding if adding and optimistic else isr


# -- caught up / out of sync ----------------------------------------------------------------------
def updated_last_caught_up_time_ms(state: ReplicaState, fetch_offset: int, leader_leo: int,
                                   now_ms: int, *, previous_fetch_rule: bool = True) -> int:
    """R ``updateFetchStateOrThrow``: the follower's new lastCaughtUpTimeMs after a fetch at
    ``fetch_offset`` arriving at ``now_ms`` while the leader's LEO is ``leader_leo``.

    - fetching at (or past) the leader's LEO: caught up now;
    - else, reaching where the leader was at the previous fetch: caught up as of that previous
      fetch (KAFKA-4485, 0.10.2; ``previous_fetch_rule=False`` before, rule
      ``caught_up_previous_fetch_rule``);
    - else unchanged. The time never moves backwards."""
    last = state.last_caught_up_time_ms
    if fetch_offset >= leader_leo:
        return now_ms if now_ms > last else last
    if previous_fetch_rule and fetch_offset >= state.last_fetch_leader_log_end_offset \
            and state.last_fetch_time_ms > last:
        return state.last_fetch_time_ms
    return last


def is_caught_up(follower_leo: int, leader_leo: int, last_caught_up_time_ms: int, now_ms: int,
                 replica_lag_time_max_ms: int) -> bool:
    """R ``isCaughtUp``: the follower's LEO equals the leader's, or it was caught up within
    replica.lag.time.max.ms."""
    return follower_leo == leader_leo or \
        now_ms - last_caught_up_time_ms <= replica_lag_time_max_ms


def is_follower_out_of_sync(state: ReplicaState, leader_leo: int, now_ms: int,
                            replica_lag_time_max_ms: int, *,
                            lag_since_caught_up: bool = True,
                            equal_leo_in_sync: bool = True,
                            replica_lag_max_messages: int | None = None) -> bool:
    """P ``isFollowerOutOfSync`` / ``getOutOfSyncReplicas``: should the leader drop this follower
    from the ISR?

    Today: not caught up (``is_caught_up`` is false). History, by version rule:
    - ``equal_leo_in_sync=False`` (rule ``caught_up_when_leo_equals_leader`` off, before
      KAFKA-7152 in 2.1): only the time since lastCaughtUpTimeMs counts;
    - ``lag_since_caught_up=False`` (0.8.x "stuck" rule): no fetch within the lag time;
    - ``replica_lag_max_messages`` (0.8.x "slow" rule, replica.lag.max.messages): also out of
      sync when more than that many messages behind the leader's LEO."""
    if lag_since_caught_up:
        if equal_leo_in_sync:
            out = not is_caught_up(state.log_end_offset, leader_leo, state.last_caught_up_time_ms,
                                   now_ms, replica_lag_time_max_ms)
        else:
            out = now_ms - state.last_caught_up_time_ms > replica_lag_time_max_ms
    else:
        out = now_ms - state.last_fetch_time_ms > replica_lag_time_max_ms
    if not out and replica_lag_max_messages is not None:
        out = state.log_end_offset >= 0 and \
            leader_leo - state.log_end_offset > replica_lag_max_messages
    return out


def is_follower_in_sync(follower_leo: int, leader_hw: int, leader_epoch_start_offset: int, *,
                        requires_epoch_start_offset: bool = True) -> bool:
    """P ``isFollowerInSync`` (the LEO part of ``maybeExpandIsr``): a follower may rejoin the ISR
    once its LEO reached the leader's HW and, since KAFKA-7395 (2.1, rule
    ``isr_expand_requires_epoch_start_offset``), the start offset of the leader's current epoch.
    Time plays no part in expanding."""
    if follower_leo < leader_hw:
        return False
    return not requires_epoch_start_offset or follower_leo >= leader_epoch_start_offset


# -- high watermark and acks=all ------------------------------------------------------------------
def maybe_increment_leader_hw(leader_leo: int, current_hw: int,
                              followers: Iterable[ReplicaState], maximal: Sequence[int],
                              now_ms: int, replica_lag_time_max_ms: int, *,
                              include_caught_up: bool = True,
                              eligible: Container[int] | None = None) -> int:
    """P ``maybeIncrementLeaderHW``: the leader's new HW (never below ``current_hw``).

    The candidate starts at the leader's LEO and drops to the LEO of every follower that is in
    the ``maximal`` ISR or caught up (``is_caught_up``) — the second so that a follower about to
    rejoin is not left chasing a moving HW (``include_caught_up=False`` before 2.x's rule
    ``hw_includes_caught_up_replicas``). Since 3.6 a caught-up follower counts only if it is
    ISR-eligible (``eligible``: the broker ids that are, asked with ``in``; None = every
    replica, as before 3.6).
    The HW is the candidate if that is higher, else unchanged: it never moves backwards.
    The min-ISR freeze of 3.7 (``hw_frozen_under_min_isr``) is the caller's first test.

    Fast path (the usual call, after every append and follower fetch): as Kafka's loop, a
    follower at or above the candidate is skipped before any other test, and a member of the
    maximal ISR that has not passed the current HW ends the loop, since the candidate can then
    only end at or below the HW."""
    candidate = leader_leo
    for st in followers:
        r_leo = st.log_end_offset
        if r_leo >= candidate:
            continue
        r = st.broker_id
        if r in maximal:
            if r_leo <= current_hw:
                return current_hw
            candidate = r_leo
        elif include_caught_up and \
                is_caught_up(r_leo, leader_leo, st.last_caught_up_time_ms, now_ms,
                             replica_lag_time_max_ms) and \
                (eligible is None or r in eligible):
            candidate = r_leo
    # the candidate starts at the leader's LEO and only drops: never above it
    return candidate if candidate > current_hw else current_hw


def check_enough_replicas_reach_offset(high_watermark: int, required_offset: int,
                                       maximal_isr_size: int,
                                       min_isr: int) -> tuple[bool, str]:
    """P ``checkEnoughReplicasReachOffset``: is an acks=all produce ending at
    ``required_offset - 1`` done, and with which error? Done once the HW reached
    ``required_offset``; then NONE if the maximal ISR still has ``min_isr`` members, else
    NOT_ENOUGH_REPLICAS_AFTER_APPEND (the records stay in the log)."""
    if high_watermark < required_offset:
        return False, E.NONE
    if maximal_isr_size >= min_isr:
        return True, E.NONE
    return True, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND


def check_min_isr_before_append(isr: Sequence[int], min_isr: int) -> str:
    """P ``appendRecordsToLeader``, acks=all: refuse the append (NOT_ENOUGH_REPLICAS) when the
    committed ISR is smaller than the effective min ISR; nothing is written."""
    return E.NOT_ENOUGH_REPLICAS if len(isr) < min_isr else E.NONE


#: StopReplicaPartitionState.leaderEpoch sentinels (LeaderAndIsr.NoEpoch / EpochDuringDelete)
NO_EPOCH = -1
EPOCH_DURING_DELETE = -2


def stop_replicas_leader_epoch_error(request_epoch: int, current_epoch: int, *,
                                     checked: bool = True, equal_applies: bool = True) -> str:
    """RM ``stopReplicas`` for a hosted partition: NONE when the StopReplica applies, else
    FENCED_LEADER_EPOCH. The sentinels (no epoch sent, topic deletion) always apply; otherwise
    the request's epoch must be newer than the partition's, or (3.5+) the same.
    ``checked=False``: before KIP-570 (2.6) the request has no epoch and every one applies."""
    if not checked or request_epoch in (NO_EPOCH, EPOCH_DURING_DELETE):
        return E.NONE
    if request_epoch > current_epoch or (equal_applies and request_epoch == current_epoch):
        return E.NONE
    return E.FENCED_LEADER_EPOCH


# -- leader epochs and truncation -----------------------------------------------------------------
def end_offset_for(entries: Sequence[tuple[int, int]], requested_epoch: int,
                   log_end_offset: int, *, below_first_is_undefined: bool = False
                   ) -> tuple[int, int]:
    """LEC ``endOffsetFor``: (epoch, end offset) answering OffsetsForLeaderEpoch for
    ``requested_epoch`` over the cache ``entries`` ((epoch, start offset), increasing).

    - the latest epoch: it ends at the LEO;
    - an older epoch: it ends where the next higher cached epoch starts, and the answer names
      the largest cached epoch <= the requested one (KIP-279: the follower may not know it);
    - an epoch below every cached one: the requested epoch, ending at the first entry's start
      (0.11.0 - 2.0, ``below_first_is_undefined``: unknown, before KAFKA-7415's rewrite);
    - unknown (UNDEFINED, empty cache, or above the latest): (UNDEFINED_EPOCH,
      UNDEFINED_EPOCH_OFFSET)."""
    if requested_epoch == UNDEFINED_EPOCH or not entries:
        return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
    if requested_epoch == entries[-1][0]:
        return (requested_epoch, log_end_offset)
    floor = None
    for e in entries:
        if e[0] > requested_epoch:
            if floor is None:
                if below_first_is_undefined:
                    return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)
                return (requested_epoch, e[1])
            return (floor[0], e[1])
        floor = e
    return (UNDEFINED_EPOCH, UNDEFINED_EPOCH_OFFSET)


def get_offset_truncation_state(leader_epoch: int, leader_end_offset: int,
                                follower_entries: Sequence[tuple[int, int]],
                                follower_leo: int, fetch_offset: int) -> tuple[int, bool]:
    """AFT ``getOffsetTruncationState``: where a follower truncates given the leader's answer
    (``leader_epoch``, ``leader_end_offset``) to OffsetsForLeaderEpoch (or a Fetch's diverging
    epoch), and whether truncation is complete.

    - no answer (UNDEFINED end offset): keep the fetch offset;
    - a v0 answer without an epoch (before KIP-279, 2.0): the leader's end offset, capped at the
      follower's LEO;
    - the follower does not know the leader's epoch: same, truncation done;
    - it knows the same epoch: the smaller of both end offsets (and the LEO);
    - it knows only an older epoch: truncate to where that one ends and ask again (KIP-279's
      multi-round truncation; not complete)."""
    if leader_end_offset == UNDEFINED_EPOCH_OFFSET:
        return fetch_offset, True
    if leader_epoch == UNDEFINED_EPOCH:
        return min(leader_end_offset, follower_leo), True
    f_epoch, f_end = end_offset_for(follower_entries, leader_epoch, follower_leo)
    if f_epoch == UNDEFINED_EPOCH or f_end == UNDEFINED_EPOCH_OFFSET:
        return min(leader_end_offset, follower_leo), True
    if f_epoch == leader_epoch:
        return min(leader_end_offset, f_end, follower_leo), True
    return min(f_end, follower_leo), False


# -- the follower's high watermark ----------------------------------------------------------------
def update_high_watermark(leader_hw: int, log_start_offset: int, log_end_offset: int) -> int:
    """UL ``updateHighWatermark``, as ReplicaFetcherThread ``processPartitionData`` calls it with
    the leader's HW from a fetch answer (``followerHighWatermark``): the follower's new HW is the
    leader's, clamped into [log start offset, the follower's own LEO], i.e. min(leader HW, LEO)
    (0.8's ``replica.logEndOffset.min(partitionData.highWatermark)``). It is set, not raised:
    a follower's HW may go down."""
    hw = leader_hw if leader_hw < log_end_offset else log_end_offset
    return hw if hw > log_start_offset else log_start_offset


# -- leader election (ZooKeeper controller) -------------------------------------------------------
def offline_partition_leader_election(assignment: Sequence[int], isr: Sequence[int],
                                      live: Iterable[int], unclean_enabled: bool
                                      ) -> tuple[int | None, bool]:
    """PLE ``offlinePartitionLeaderElection``: the first replica in assignment order that is
    alive and in the ISR; failing that, if unclean.leader.election.enable, the first live
    replica (an unclean election: records only the old ISR had are lost). Returns (leader or
    None, unclean)."""
    live = set(live)
    for r in assignment:
        if r in live and r in isr:
            return r, False
    if unclean_enabled:
        for r in assignment:
            if r in live:
                return r, True
    return None, False


def reassign_partition_leader_election(reassignment: Sequence[int], isr: Sequence[int],
                                       live: Iterable[int]) -> int | None:
    """PLE ``reassignPartitionLeaderElection``: the first replica of the target assignment that is
    alive and in the ISR."""
    live = set(live)
    return next((r for r in reassignment if r in live and r in isr), None)


def preferred_replica_partition_leader_election(assignment: Sequence[int], isr: Sequence[int],
                                                live: Iterable[int]) -> int | None:
    """PLE ``preferredReplicaPartitionLeaderElection``: the preferred replica (first in the
    assignment) if it is alive and in the ISR; otherwise no election."""
    if not assignment:
        return None
    pref = assignment[0]
    return pref if pref in set(live) and pref in isr else None


def controlled_shutdown_partition_leader_election(assignment: Sequence[int], isr: Sequence[int],
                                                  live: Iterable[int],
                                                  shutting_down: Iterable[int]) -> int | None:
    """PLE ``controlledShutdownPartitionLeaderElection``: the first replica in assignment order
    that is alive, in the ISR and not shutting down."""
    live, down = set(live), set(shutting_down)
    return next((r for r in assignment if r in live and r in isr and r not in down), None)


#: The rules a cluster lets a learner swap (``Cluster.swap_rule``), by Kafka's method name.
RULES = (
    "maybe_increment_leader_hw",
    "is_follower_out_of_sync",
    "updated_last_caught_up_time_ms",
    "is_follower_in_sync",
    "check_enough_replicas_reach_offset",
    "check_min_isr_before_append",
    "effective_min_isr",
    "get_offset_truncation_state",
    "update_high_watermark",
    "offline_partition_leader_election",
    "reassign_partition_leader_election",
    "preferred_replica_partition_leader_election",
    "controlled_shutdown_partition_leader_election",
)


class RuleBook:
    """The rule functions one cluster uses (by default the ones above). Plain attributes, so a
    swapped rule is one attribute; picklable when the functions are module-level."""

    __slots__ = RULES

    def __init__(self, **swapped) -> None:
        g = globals()
        for name in RULES:
            setattr(self, name, swapped.get(name, g[name]))

    def swapped(self) -> dict[str, str]:
        """Rules that are not Kafka's: name -> the function's qualified name."""
        g = globals()
        return {n: f"{getattr(self, n).__module__}.{getattr(self, n).__qualname__}"
                for n in RULES if getattr(self, n) is not g[n]}

    def __getstate__(self):
        return {n: getattr(self, n) for n in RULES}

    def __setstate__(self, state) -> None:
        for n, fn in state.items():
            setattr(self, n, fn)
