"""``Partition``: one replica's view of a topic partition, with Kafka's ISR and HW rules.

Mirrors kafka.cluster.Partition (fact sheet §1-3): ``make_leader`` / ``make_follower``,
``update_follower_fetch_state`` (the lastCaughtUpTimeMs rules), ``maybe_expand_isr``,
``maybe_shrink_isr``, ``maybe_increment_leader_hw``, ``check_enough_replicas_reach_offset`` and the
pending/committed ISR states of KIP-497. The class does no I/O: the broker passed in as ``ctx``
sends messages, reads the clock and the configs.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkasim.protocol import errors as E
from kafkasim.storage.log import Log

# "Never": Kafka initialises lastCaughtUpTimeMs to 0, i.e. 1970; simulated time starts at 0, so the
# simulator uses a time far in the past instead.
NEVER_MS = -(1 << 50)


@dataclass(slots=True)
class ReplicaState:
    """What the leader knows about one follower (kafka.cluster.Replica / ReplicaState)."""

    broker_id: int
    log_end_offset: int = -1            # -1 = unknown (reset by makeLeader)
    log_start_offset: int = -1
    last_fetch_leader_log_end_offset: int = -1
    last_fetch_time_ms: int = 0
    last_caught_up_time_ms: int = NEVER_MS


@dataclass(slots=True)
class PendingIsrChange:
    """An AlterPartition in flight: PendingExpandIsr / PendingShrinkIsr."""

    kind: str                     # "expand" | "shrink"
    replicas: tuple[int, ...]     # the replica added, or the replicas being removed
    proposed_isr: tuple[int, ...]
    sent_ms: int


class Partition:
    """Local replica of one partition on one broker."""

    __slots__ = (
        "topic", "partition", "broker_id", "log", "replicas", "leader_id", "leader_epoch",
        "partition_epoch", "controller_epoch", "isr", "pending", "remote",
        "leader_epoch_start_offset", "is_leader", "tp",
    )

    def __init__(self, topic: str, partition: int, broker_id: int, log: Log) -> None:
        self.topic = topic
        self.partition = partition
        self.tp: tuple[str, int] = (topic, partition)
        self.broker_id = broker_id
        self.log = log
        self.replicas: tuple[int, ...] = ()
        self.leader_id = -1
        self.leader_epoch = -1
        self.partition_epoch = -1
        self.controller_epoch = -1
        self.isr: tuple[int, ...] = ()          # committed ISR
        self.pending: PendingIsrChange | None = None
        self.remote: dict[int, ReplicaState] = {}
        self.leader_epoch_start_offset = -1
        self.is_leader = False

    def __repr__(self) -> str:
        role = "leader" if self.is_leader else f"follower of {self.leader_id}"
        return (f"Partition({self.topic}-{self.partition} on {self.broker_id}, {role}, "
                f"epoch={self.leader_epoch}, isr={list(self.isr)}, LEO={self.log.log_end_offset}, "
                f"HW={self.log.high_watermark})")

    # -- ISR views --------------------------------------------------------------------------
    def maximal_isr(self, ctx) -> tuple[int, ...]:
        """ISR for HW and acks=all: optimistic for expansions, pessimistic for shrinks (KIP-497)."""
        p = self.pending
        if p is not None and p.kind == "expand" and ctx.rules.maximal_isr:
            return self.isr + p.replicas
        return self.isr

    def effective_min_isr(self, ctx) -> int:
        """min.insync.replicas, capped at the replica count where the version does so."""
        min_isr = ctx.cluster.topic_configs[self.topic]["min.insync.replicas"]
        if min_isr > len(self.replicas) and ctx.cluster.rules.effective_min_isr_capped:
            return len(self.replicas)
        return min_isr

    def is_under_min_isr(self, ctx) -> bool:
        return self.is_leader and len(self.isr) < self.effective_min_isr(ctx)

    def is_under_replicated(self) -> bool:
        return self.is_leader and len(self.isr) < len(self.replicas)

    # -- role changes -----------------------------------------------------------------------
    def make_leader(self, ctx, leader_epoch: int, isr: tuple[int, ...], replicas: tuple[int, ...],
                    partition_epoch: int, controller_epoch: int) -> bool:
        """Become leader (Partition.makeLeader). Returns True if the HW moved."""
        now = ctx.now
        new_epoch = leader_epoch > self.leader_epoch
        self.replicas = tuple(replicas)
        self.controller_epoch = controller_epoch
        self.isr = tuple(isr)
        self.pending = None
        self.partition_epoch = partition_epoch
        log = self.log
        if new_epoch:
            # KAFKA-7415 (2.0.1): the epoch enters the cache now; before, at the first append
            rules = ctx.rules
            if rules.leader_epoch_truncation and rules.epoch_cache_assigned_on_become_leader:
                log.leader_epoch_cache.assign(leader_epoch, log.log_end_offset)
            self.leader_epoch_start_offset = log.log_end_offset
        if not self.is_leader:
            # resetReplicaState: unknown LEO; ISR followers caught up "now", others never
            # Replica.resetReplicaState: LEO unknown, lastFetchTimeMs 0 (never), lastCaughtUp
            # "now" for ISR followers and never for the others. (0.8's "stuck" rule measured
            # time since the last fetch from the replica's creation, hence "now" there.)
            fetched = now if not ctx.rules.isr_lag_time_since_caught_up else NEVER_MS
            self.remote = {
                r: ReplicaState(r, last_fetch_time_ms=fetched,
                                last_caught_up_time_ms=now if r in self.isr else NEVER_MS)
                for r in self.replicas if r != self.broker_id
            }
        else:
            self.remote = {r: self.remote.get(r) or ReplicaState(r, last_fetch_time_ms=now)
                           for r in self.replicas if r != self.broker_id}
            if new_epoch and ctx.rules.reelected_leader_resets_follower_state:
                # re-elected (Replica.resetReplicaState, isNewLeader=false): the followers keep
                # their LEOs, their lag clocks restart from this epoch's start
                in_sync_only = ctx.rules.reelected_leader_fetch_time_only_in_sync
                for r, st in self.remote.items():
                    in_sync = r in self.isr
                    st.last_caught_up_time_ms = now if in_sync else NEVER_MS
                    st.last_fetch_time_ms = now if in_sync or not in_sync_only else NEVER_MS
                    st.last_fetch_leader_log_end_offset = log.log_end_offset
        self.leader_epoch = leader_epoch
        self.leader_id = self.broker_id
        self.is_leader = True
        return self.maybe_increment_leader_hw(ctx)

    def make_follower(self, ctx, leader_id: int, leader_epoch: int, isr: tuple[int, ...],
                      replicas: tuple[int, ...], partition_epoch: int,
                      controller_epoch: int) -> bool:
        """Become follower (Partition.makeFollower). Returns True if leader or epoch changed."""
        changed = (leader_id != self.leader_id or leader_epoch != self.leader_epoch
                   or self.is_leader)
        self.replicas = tuple(replicas)
        self.controller_epoch = controller_epoch
        self.isr = tuple(isr)
        self.pending = None
        self.partition_epoch = partition_epoch
        self.leader_epoch = leader_epoch
        self.leader_id = leader_id
        self.is_leader = False
        self.remote = {}
        self.leader_epoch_start_offset = -1
        return changed

    # -- follower fetch bookkeeping on the leader ---------------------------------------------
    def update_follower_fetch_state(self, ctx, replica_id: int, fetch_offset: int,
                                    log_start_offset: int, leader_leo: int) -> bool:
        """Record a follower fetch (Replica.updateFetchStateOrThrow); returns True if HW moved."""
        st = self.remote.get(replica_id)
        if st is None:  # not an assigned replica
            return False
        now = ctx.now
        rules = ctx.rules
        if fetch_offset >= leader_leo:
            if now > st.last_caught_up_time_ms:
                st.last_caught_up_time_ms = now
        elif (rules.caught_up_previous_fetch_rule
              and fetch_offset >= st.last_fetch_leader_log_end_offset
              and st.last_fetch_time_ms > st.last_caught_up_time_ms):
            # KAFKA-4485: reached where the leader was at the previous fetch
            st.last_caught_up_time_ms = st.last_fetch_time_ms
        old_leo = st.log_end_offset
        st.log_end_offset = fetch_offset
        st.log_start_offset = log_start_offset
        if rules.last_fetch_leader_leo_max:
            if leader_leo > st.last_fetch_leader_log_end_offset:
                st.last_fetch_leader_log_end_offset = leader_leo
        else:
            st.last_fetch_leader_log_end_offset = leader_leo
        st.last_fetch_time_ms = now
        if self.pending is None and replica_id not in self.isr:  # maybe_expand_isr's own test
            self.maybe_expand_isr(ctx, replica_id)
        if old_leo != fetch_offset:
            return self.maybe_increment_leader_hw(ctx)
        return False

    def is_caught_up(self, ctx, st: ReplicaState) -> bool:
        """Replica.isCaughtUp: LEO equals the leader's, or caught up within the lag time."""
        if st.log_end_offset == self.log.log_end_offset:
            return True
        lag_ms = ctx.config["replica.lag.time.max.ms"]
        return ctx.now - st.last_caught_up_time_ms <= lag_ms

    def is_follower_out_of_sync(self, ctx, replica_id: int) -> bool:
        """Partition.isFollowerOutOfSync / getOutOfSyncReplicas for the version's rules."""
        st = self.remote.get(replica_id)
        if st is None:
            return True
        rules = ctx.rules
        lag_ms = ctx.config["replica.lag.time.max.ms"]
        now = ctx.now
        if rules.isr_lag_time_since_caught_up:
            if rules.caught_up_when_leo_equals_leader and \
                    st.log_end_offset == self.log.log_end_offset:
                out = False  # KAFKA-7152: equal LEO is never out of sync
            else:
                out = now - st.last_caught_up_time_ms > lag_ms
        else:
            # 0.8.x "stuck" rule: no fetch within the lag time
            out = now - st.last_fetch_time_ms > lag_ms
        if not out and rules.isr_lag_max_messages:
            # 0.8.x "slow" rule: more than replica.lag.max.messages behind the leader's LEO
            max_msgs = ctx.config["replica.lag.max.messages"]
            out = st.log_end_offset >= 0 and \
                self.log.log_end_offset - st.log_end_offset > max_msgs
        return out

    # -- ISR changes ------------------------------------------------------------------------
    def maybe_expand_isr(self, ctx, replica_id: int) -> None:
        """Partition.maybeExpandIsr: add a follower that reached the HW (and epoch start)."""
        if self.pending is not None or replica_id in self.isr or not self.is_leader:
            return
        st = self.remote.get(replica_id)
        if st is None or not ctx.is_isr_eligible(replica_id):
            return
        if st.log_end_offset < self.log.high_watermark:
            return
        if ctx.rules.isr_expand_requires_epoch_start_offset and \
                st.log_end_offset < self.leader_epoch_start_offset:
            return
        new_isr = tuple(r for r in self.replicas if r in self.isr or r == replica_id)
        ctx.propose_isr(self, "expand", (replica_id,), new_isr)

    def maybe_shrink_isr(self, ctx) -> None:
        """Partition.maybeShrinkIsr, run by the isr-expiration task."""
        if not self.is_leader or self.pending is not None:
            return
        out = tuple(r for r in self.isr
                    if r != self.broker_id and self.is_follower_out_of_sync(ctx, r))
        if not out:
            return
        new_isr = tuple(r for r in self.isr if r not in out)
        ctx.propose_isr(self, "shrink", out, new_isr)

    def apply_isr_update(self, ctx, isr: tuple[int, ...], partition_epoch: int) -> bool:
        """The controller committed an ISR (handleAlterPartitionUpdate). True if HW moved."""
        self.isr = tuple(isr)
        self.partition_epoch = partition_epoch
        self.pending = None
        return self.maybe_increment_leader_hw(ctx)

    # -- high watermark ---------------------------------------------------------------------
    def maybe_increment_leader_hw(self, ctx) -> bool:
        """Partition.maybeIncrementLeaderHW: min LEO over maximal ISR and caught-up replicas."""
        if not self.is_leader:
            return False
        rules = ctx.rules
        isr = self.isr
        if rules.hw_frozen_under_min_isr and len(isr) < self.effective_min_isr(ctx):
            return False  # KAFKA-15583 (3.7): no HW movement while under min ISR
        log = self.log
        leo = log.log_end_offset
        candidate = leo
        p = self.pending
        maximal = isr + p.replicas if p is not None and p.kind == "expand" and \
            rules.maximal_isr else isr   # maximal_isr(), inlined: this runs on every fetch
        for r, st in self.remote.items():
            r_leo = st.log_end_offset
            if r_leo >= candidate:
                continue
            if r in maximal:
                candidate = r_leo
            elif rules.hw_includes_caught_up_replicas and \
                    (r_leo == leo or ctx.now - st.last_caught_up_time_ms
                     <= ctx.config["replica.lag.time.max.ms"]) and \
                    (not rules.caught_up_requires_isr_eligible or ctx.is_isr_eligible(r)):
                candidate = r_leo
        if candidate > log.high_watermark:   # Log.maybe_increment_high_watermark, inlined
            log.high_watermark = min(candidate, leo)
            return True
        return False

    def check_enough_replicas_reach_offset(self, ctx, required_offset: int) -> tuple[bool, str]:
        """DelayedProduce check: (done, error) for an acks=all append ending at required_offset."""
        if not self.is_leader:
            return True, E.NOT_LEADER_OR_FOLLOWER
        if self.log.high_watermark >= required_offset:
            if len(self.maximal_isr(ctx)) >= self.effective_min_isr(ctx):
                return True, E.NONE
            return True, E.NOT_ENOUGH_REPLICAS_AFTER_APPEND
        return False, E.NONE
