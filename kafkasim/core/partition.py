"""``Partition``: one replica's view of a topic partition, with Kafka's ISR and HW rules.

Mirrors kafka.cluster.Partition (fact sheet §1-3): ``make_leader`` / ``make_follower``,
``update_follower_fetch_state`` (the lastCaughtUpTimeMs rules), ``maybe_expand_isr``,
``maybe_shrink_isr``, ``maybe_increment_leader_hw``, ``check_enough_replicas_reach_offset`` and the
pending/committed ISR states of KIP-497. The rules themselves (the HW, caught-up and out-of-sync,
the acks=all check, min ISR) are the pure functions of ``kafkasim.core.rules``, reached through
``ctx.rulebook`` so a learner can swap one; this class keeps the state they read and applies their
answers. It does no I/O: ``ctx`` (``kafkasim.core.interfaces.PartitionContext``) gives the
clock, configs and version rules, and takes ISR proposals.
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from kafkasim.core import errors as E
from kafkasim.core import rules
from kafkasim.core.log import (
    EARLIEST_LOCAL_TIMESTAMP,
    EARLIEST_TIMESTAMP,
    LATEST_TIMESTAMP,
    NO_TIMESTAMP,
    Log,
    LogOffsetSnapshot,
    RecordChunk,
    TimestampAndOffset,
)
from kafkasim.core.messages import ZERO_UUID, EpochEndOffset
from kafkasim.core.rules import NEVER_MS, ReplicaState

if TYPE_CHECKING:   # types only: no import of the context at run time
    from kafkasim.core.interfaces import PartitionContext

__all__ = ["NEVER_MS", "CommittedPartitionState", "Partition", "PendingExpandIsr",
           "PendingIsrChange", "PendingShrinkIsr", "ReplicaState", "apply_isr_update",
           "is_stale_partition_epoch", "prepare_isr_change"]


class CommittedPartitionState(NamedTuple):
    """Kafka's CommittedPartitionState: the ISR the controller committed, no change in flight
    (``Partition.partition_state`` while ``Partition.pending`` is None)."""

    isr: tuple[int, ...]

    kind = "committed"
    is_inflight = False

    def maximal_isr(self, committed: tuple[int, ...], optimistic: bool = True
                    ) -> tuple[int, ...]:
        return committed


@dataclass(slots=True, eq=False)
class PendingIsrChange:
    """An AlterPartition in flight (Kafka's PendingPartitionChange): a ``PendingExpandIsr`` or a
    ``PendingShrinkIsr``, made by ``Partition.prepare_isr_expand`` / ``prepare_isr_shrink``.

    Compared by identity, as Partition.submitAlterPartition compares ``partitionState`` with the
    ``proposedIsrState`` it sent: an answer for any other proposal is ignored. The leader and
    partition epochs are those of ``sentLeaderAndIsr``; the committed ISR stays in
    ``Partition.isr`` (``lastCommittedState``)."""

    kind: ClassVar[str] = ""      # "expand" | "shrink": what AlterPartition metrics count
    is_inflight: ClassVar[bool] = True

    replicas: tuple[int, ...]     # the replica added, or the replicas being removed
    proposed_isr: tuple[int, ...]
    sent_ms: int
    leader_epoch: int = -1
    partition_epoch: int = -1
    #: sentLeaderAndIsr.isrWithBrokerEpoch (3.5+, KIP-903): ``proposed_isr`` with each member's
    #: broker epoch (``Partition.add_broker_epoch_to_isr``); empty before 3.5
    isr_with_broker_epoch: tuple[tuple[int, int], ...] = ()

    def maximal_isr(self, committed: tuple[int, ...], optimistic: bool = True
                    ) -> tuple[int, ...]:
        """The ISR the HW and acks=all count while this change is in flight (KIP-497)."""
        raise NotImplementedError


@dataclass(slots=True, eq=False)
class PendingExpandIsr(PendingIsrChange):
    """Kafka's PendingExpandIsr: ``replicas`` (the one rejoining) count already
    (``rules.maximal_isr``: optimistic from 2.7)."""

    kind: ClassVar[str] = "expand"

    def maximal_isr(self, committed: tuple[int, ...], optimistic: bool = True
                    ) -> tuple[int, ...]:
        return rules.maximal_isr(committed, self.replicas, optimistic=optimistic)


@dataclass(slots=True, eq=False)
class PendingShrinkIsr(PendingIsrChange):
    """Kafka's PendingShrinkIsr: ``replicas`` (those leaving) still count until committed."""

    kind: ClassVar[str] = "shrink"

    def maximal_isr(self, committed: tuple[int, ...], optimistic: bool = True
                    ) -> tuple[int, ...]:
        return committed


class AssignmentState(NamedTuple):
    """Partition.assignmentState: the replicas and, during a reassignment (KIP-455), the adding
    and removing ones (OngoingReassignmentState; both empty: SimpleAssignmentState)."""

    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...] = ()
    removing_replicas: tuple[int, ...] = ()

    def replication_factor(self) -> int:
        """AssignmentState.replicationFactor: the replicas, without a reassignment's adding
        replicas (OngoingReassignmentState keeps the size of the original replicas)."""
        adding = self.adding_replicas
        if not adding:
            return len(self.replicas)
        return sum(1 for r in self.replicas if r not in adding)

    def is_reassigning(self) -> bool:
        """The state is an OngoingReassignmentState."""
        return bool(self.adding_replicas or self.removing_replicas)

    def is_adding_replica(self, replica_id: int) -> bool:
        """OngoingReassignmentState.isAddingReplica."""
        return replica_id in self.adding_replicas


def _update_assignment(part: Partition, replicas, adding_replicas=(), removing_replicas=()
                       ) -> None:
    """The assignment half of Partition.updateAssignmentAndIsr: the replicas and, during a
    reassignment, its adding and removing replicas."""
    part.replicas = tuple(replicas)
    part.assignment_state = AssignmentState(part.replicas, tuple(adding_replicas),
                                            tuple(removing_replicas))


def _isr_eligible(part: Partition, ctx: PartitionContext) -> Container[int]:
    """The replicas ``Partition.is_replica_isr_eligible`` accepts, for
    ``maybe_increment_leader_hw``'s shouldWaitForReplicaToJoinIsr: the eligible brokers, or,
    where broker epochs count (KRaft, 3.5+), a view that asks ``is_replica_isr_eligible`` of the
    few replicas the rule looks at."""
    if ctx.metadata.kraft and ctx.rules.isr.isr_eligibility_checks_broker_epoch:
        return _IsrEligibleReplicas(part, ctx)
    return ctx.isr_eligible_brokers()


def _reset_replica_states(part: Partition, ctx: PartitionContext, now: int, new_epoch: bool
                          ) -> None:
    """makeLeader's Replica.resetReplicaState for every follower: a new leader starts with
    unknown follower LEOs; a re-elected one keeps them (and, where the version does so,
    restarts their lag clocks at a new epoch)."""
    # lastFetchTimeMs 0 (never) for a new leader's followers and a new Replica; 0.8's
    # "stuck" rule measured time since the last fetch from the replica's creation: "now"
    fetched = now if not ctx.rules.isr.isr_lag_time_since_caught_up else NEVER_MS
    if not part.is_leader:
        # Replica.resetReplicaState: LEO unknown, lastCaughtUp "now" for ISR followers and
        # never for the others
        part.remote = {
            r: ReplicaState(r, last_fetch_leader_log_end_offset=-1,
                            last_fetch_time_ms=fetched,
                            last_caught_up_time_ms=now if r in part.isr else NEVER_MS)
            for r in part.replicas if r != part.broker_id
        }
        return
    # updateAssignmentAndIsr: a replica new to this leader starts as ReplicaState.Empty
    # (Replica.scala: lastFetchLeaderLogEndOffset 0, lastFetchTimeMs and lastCaughtUpTimeMs
    # 0, i.e. never), so its first fetch does not make it caught up as of its creation
    part.remote = {r: part.remote.get(r) or ReplicaState(r, last_fetch_time_ms=fetched)
                   for r in part.replicas if r != part.broker_id}
    if new_epoch and ctx.rules.isr.reelected_leader_resets_follower_state:
        # re-elected (Replica.resetReplicaState, isNewLeader=false): the followers keep
        # their LEOs, their lag clocks restart from this epoch's start
        in_sync_only = ctx.rules.isr.reelected_leader_fetch_time_only_in_sync
        leo = part.log.log_end_offset
        for r, st in part.remote.items():
            in_sync = r in part.isr
            st.last_caught_up_time_ms = now if in_sync else NEVER_MS
            st.last_fetch_time_ms = now if in_sync or not in_sync_only else NEVER_MS
            st.last_fetch_leader_log_end_offset = leo


def is_stale_partition_epoch(part: Partition, ctx: PartitionContext, partition_epoch: int
                             ) -> bool:
    """Partition.makeLeader / makeFollower since KAFKA-13790 (3.3): a state whose partition
    epoch is older than the partition's ("already at a newer partition epoch") is skipped."""
    return ctx.rules.fetch.leader_and_isr_ignores_older_partition_epoch and \
        partition_epoch < part.partition_epoch


def _no_future_replica(is_future: bool) -> None:
    if is_future:
        raise NotImplementedError("kafkasim has no future replicas (alter log dirs)")


class _IsrEligibleReplicas:
    """``r in view``: Partition.isReplicaIsrEligible(r), asked only when the HW rule needs it."""

    __slots__ = ("partition", "ctx")

    def __init__(self, partition: Partition, ctx: PartitionContext) -> None:
        self.partition = partition
        self.ctx = ctx

    def __contains__(self, replica_id: object) -> bool:
        return isinstance(replica_id, int) and \
            self.partition.is_replica_isr_eligible(self.ctx, replica_id)


def prepare_isr_change(part: Partition, kind: str, replica_ids: tuple[int, ...],
                       proposed_isr: tuple[int, ...], now: int,
                       isr_with_broker_epoch: tuple = ()) -> PendingIsrChange:
    """``part.prepare_isr_expand`` or ``part.prepare_isr_shrink`` by ``kind`` ("expand" |
    "shrink", as ``PartitionContext.propose_isr`` names the change). kafkasim's dispatcher, not
    Kafka's API: a function so Partition stays under its member limit."""
    if kind == "expand":
        return part.prepare_isr_expand(replica_ids, proposed_isr, now, isr_with_broker_epoch)
    if kind == "shrink":
        return part.prepare_isr_shrink(replica_ids, proposed_isr, now, isr_with_broker_epoch)
    raise ValueError(f"an ISR change is 'expand' or 'shrink', not {kind!r}")


def apply_isr_update(part: Partition, ctx: PartitionContext, isr: tuple[int, ...],
                     partition_epoch: int) -> bool:
    """The controller committed an ISR (the commit half of Partition.handleAlterPartitionUpdate
    / a ZooKeeper ISR write): ``part`` takes it and drops its pending change; True if the HW
    moved. kafkasim's, not Kafka's API: a function so Partition stays under its member limit."""
    ctx.partition_changed(part.tp)
    part.isr = tuple(isr)
    part.partition_epoch = partition_epoch
    part.pending = None
    return part.maybe_increment_leader_hw(ctx)


class Partition:
    """Local replica of one partition on one broker."""

    __slots__ = (
        "topic", "partition", "broker_id", "log", "replicas", "leader_id", "leader_epoch",
        "partition_epoch", "controller_epoch", "isr", "pending", "remote",
        "leader_epoch_start_offset", "is_leader", "tp", "assignment_state",
    )

    def __init__(self, topic: str, partition: int, broker_id: int, log: Log) -> None:
        self.topic = topic
        self.partition = partition
        self.tp: tuple[str, int] = (topic, partition)
        self.broker_id = broker_id
        self.log = log
        self.replicas: tuple[int, ...] = ()
        # the assignment state (KIP-352, 2.5+): a reassignment's adding and removing replicas
        self.assignment_state = AssignmentState(())
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

    # -- topic id (KIP-516) ------------------------------------------------------------------
    @property
    def topic_id(self) -> str | None:
        """Partition.topicId (3.0+): the topic id of the partition's log, None when the log has
        none (``log.flatMap(_.topicId)``, Partition.scala:480@3.3.0). Since 3.8 (KAFKA-16234,
        Partition.scala:589@3.9.0-rc3) Kafka also keeps the id the Partition was created with
        and falls back to LogManager's log of the partition; a kafkasim Partition always holds
        the LogManager's log, created with the metadata's id, so the answer is the same."""
        return self.log.topic_id

    def check_or_set_topic_id(self, request_topic_id: str | None) -> bool:
        """Partition.checkOrSetTopicId (Partition.scala:438@2.8.0; 2.8 only, replaced in 3.0 by
        ReplicaManager.hasConsistentTopicId): a request without an id (None or the zero Uuid)
        is consistent; a log without an id takes the request's (UnifiedLog.assignTopicId: its
        partition.metadata is written); otherwise the ids must match."""
        if request_topic_id is None or request_topic_id == ZERO_UUID:
            return True
        log = self.log
        if log.topic_id is None:
            log.assign_topic_id(request_topic_id)
            return True
        return log.topic_id == request_topic_id

    # -- ISR views --------------------------------------------------------------------------
    def maximal_isr(self, ctx: PartitionContext) -> tuple[int, ...]:
        """ISR for HW and acks=all: optimistic for expansions, pessimistic for shrinks (KIP-497),
        by ``rules.maximal_isr``."""
        p = self.pending
        if p is None:
            return self.isr
        return p.maximal_isr(self.isr, ctx.rules.isr.maximal_isr)

    @property
    def partition_state(self) -> CommittedPartitionState | PendingIsrChange:
        """Kafka's ``partitionState``: the committed ISR, or the change in flight."""
        return CommittedPartitionState(self.isr) if self.pending is None else self.pending

    def prepare_isr_expand(self, replica_ids: tuple[int, ...], proposed_isr: tuple[int, ...],
                           now: int, isr_with_broker_epoch: tuple = ()) -> PendingExpandIsr:
        """Partition.prepareIsrExpand: the state while the expansion is in flight
        (``isr_with_broker_epoch``: ``add_broker_epoch_to_isr`` of the proposed ISR, 3.5+)."""
        return PendingExpandIsr(tuple(replica_ids), tuple(proposed_isr), now, self.leader_epoch,
                                self.partition_epoch, tuple(isr_with_broker_epoch))

    def prepare_isr_shrink(self, replica_ids: tuple[int, ...], proposed_isr: tuple[int, ...],
                           now: int, isr_with_broker_epoch: tuple = ()) -> PendingShrinkIsr:
        """Partition.prepareIsrShrink: the state while the shrink is in flight."""
        return PendingShrinkIsr(tuple(replica_ids), tuple(proposed_isr), now, self.leader_epoch,
                                self.partition_epoch, tuple(isr_with_broker_epoch))

    def add_broker_epoch_to_isr(self, ctx: PartitionContext, isr: tuple[int, ...]
                                ) -> tuple[tuple[int, int], ...]:
        """Partition.addBrokerEpochToIsr (3.5+, KIP-903): each member of ``isr`` with its broker
        epoch, as AlterPartition v3 sends it: this broker's own, a follower's from its last
        fetch, -1 for a follower that has not fetched from this leader; every one -1 in
        ZooKeeper mode (the controller checks none). Before 3.5 AlterPartition has no broker
        epochs: empty."""
        if not ctx.rules.alter_partition.alter_partition_broker_epochs:
            return ()
        if not ctx.metadata.kraft:
            return tuple((b, -1) for b in isr)
        out = []
        for b in isr:
            if b == self.broker_id:
                out.append((b, ctx.broker_epoch))
                continue
            st = self.remote.get(b)
            epoch = st.broker_epoch if st is not None else None
            out.append((b, -1 if epoch is None else epoch))
        return tuple(out)

    def effective_min_isr(self, ctx: PartitionContext) -> int:
        """min.insync.replicas (the log's LogConfig, as Kafka's ``leaderLog.config``),
        capped at the replica count where the version does so."""
        config = self.log.config or ctx.topic_config(self.topic)
        return ctx.rulebook.effective_min_isr(
            config["min.insync.replicas"], len(self.replicas),
            capped=ctx.rules.isr.effective_min_isr_capped)

    def is_under_min_isr(self, ctx: PartitionContext) -> bool:
        """Partition.isUnderMinIsr: the leader's committed ISR is smaller than the effective
        min ISR (a follower, which keeps no ISR, never is)."""
        return self.is_leader and len(self.isr) < self.effective_min_isr(ctx)

    def is_at_min_isr(self, ctx: PartitionContext) -> bool:
        """Partition.isAtMinIsr: the leader's committed ISR is the effective min ISR exactly."""
        return self.is_leader and len(self.isr) == self.effective_min_isr(ctx)

    def is_under_replicated(self) -> bool:
        """Partition.isUnderReplicated: the leader's committed ISR is smaller than the
        replication factor."""
        return self.is_leader and len(self.isr) < self.assignment_state.replication_factor()

    def is_reassigning(self) -> bool:
        """Partition.isReassigning: the assignment state is an OngoingReassignmentState."""
        return self.assignment_state.is_reassigning()

    def is_adding_replica(self, replica_id: int) -> bool:
        """Partition.isAddingReplica."""
        return self.assignment_state.is_adding_replica(replica_id)

    def update_assignment_and_isr(self, replicas: tuple[int, ...], is_leader: bool,
                                  isr: tuple[int, ...], adding_replicas: tuple[int, ...] = (),
                                  removing_replicas: tuple[int, ...] = ()) -> None:
        """Partition.updateAssignmentAndIsr: the assignment state, the committed ISR, and on a
        leader the followers' states (kept for the replicas still assigned, ReplicaState.Empty
        for new ones); a follower keeps none. makeLeader / makeFollower do this with their own
        follower-state rules (``make_leader``, ``make_follower``)."""
        _update_assignment(self, replicas, adding_replicas, removing_replicas)
        if is_leader:
            self.remote = {r: self.remote.get(r) or ReplicaState(r)
                           for r in self.replicas if r != self.broker_id}
        else:
            self.remote = {}
        self.isr = tuple(isr)
        self.pending = None

    def in_sync_replica_ids(self) -> set[int]:
        """Partition.inSyncReplicaIds: the committed ISR (``partitionState.isr``: a change in
        flight is not in it)."""
        return set(self.isr)

    def get_leader_epoch(self) -> int:
        """Partition.getLeaderEpoch."""
        return self.leader_epoch

    def get_partition_epoch(self) -> int:
        """Partition.getPartitionEpoch."""
        return self.partition_epoch

    def leader_replica_id_opt(self) -> int | None:
        """Partition.leaderReplicaIdOpt: the leader's broker id, None before any leader."""
        return None if self.leader_id < 0 else self.leader_id

    def leader_epoch_start_offset_opt(self) -> int | None:
        """Partition.leaderEpochStartOffsetOpt: the LEO when this leader's epoch began; None on
        a follower."""
        return None if self.leader_epoch_start_offset < 0 else self.leader_epoch_start_offset

    def local_log_or_exception(self) -> Log:
        """Partition.localLogOrException (a kafkasim partition always has its log)."""
        return self.log

    def leader_log_if_local(self) -> Log | None:
        """Partition.leaderLogIfLocal: the log if this replica leads, else None."""
        return self.log if self.is_leader else None

    def get_replica(self, replica_id: int) -> ReplicaState | None:
        """Partition.getReplica: a follower's fetch state as the leader keeps it (None for
        this broker itself, an unassigned broker, or on a follower)."""
        return self.remote.get(replica_id)

    def remote_replicas(self) -> list[ReplicaState]:
        """Partition.remoteReplicas: every follower's fetch state (the leader's view)."""
        return list(self.remote.values())

    # -- role changes -----------------------------------------------------------------------
    def make_leader(self, ctx: PartitionContext, leader_epoch: int, isr: tuple[int, ...],
                    replicas: tuple[int, ...], partition_epoch: int, controller_epoch: int,
                    adding_replicas: tuple[int, ...] = (),
                    removing_replicas: tuple[int, ...] = ()) -> bool:
        """Become leader (Partition.makeLeader): True if this broker was not the leader before
        (isNewLeader). A state older than the partition's epoch is skipped and answers False
        (KAFKA-13790, 3.3+). The HW may move (the ISR may be down to this broker): the caller
        completes what waits on it (ReplicaManager.make_leader)."""
        if is_stale_partition_epoch(self, ctx, partition_epoch):
            return False
        ctx.partition_changed(self.tp)
        now = ctx.now
        new_epoch = leader_epoch > self.leader_epoch
        is_new_leader = not self.is_leader
        _update_assignment(self, replicas, adding_replicas, removing_replicas)
        self.controller_epoch = controller_epoch
        self.isr = tuple(isr)
        self.pending = None
        self.partition_epoch = partition_epoch
        log = self.log
        if new_epoch:
            # KAFKA-7415 (2.0.1): the epoch enters the cache now; before, at the first append
            v = ctx.rules.fetch
            if v.leader_epoch_truncation and v.epoch_cache_assigned_on_become_leader:
                log.leader_epoch_cache.assign(leader_epoch, log.log_end_offset)
            self.leader_epoch_start_offset = log.log_end_offset
        _reset_replica_states(self, ctx, now, new_epoch)
        self.leader_epoch = leader_epoch
        self.leader_id = self.broker_id
        self.is_leader = True
        self.maybe_increment_leader_hw(ctx)
        return is_new_leader

    def make_follower(self, ctx: PartitionContext, leader_id: int, leader_epoch: int,
                      isr: tuple[int, ...], replicas: tuple[int, ...], partition_epoch: int,
                      controller_epoch: int, adding_replicas: tuple[int, ...] = (),
                      removing_replicas: tuple[int, ...] = ()) -> bool:
        """Become follower (Partition.makeFollower): True if the leader or its epoch changed. A
        state older than the partition's epoch is skipped and answers False (KAFKA-13790,
        3.3+)."""
        if is_stale_partition_epoch(self, ctx, partition_epoch):
            return False
        ctx.partition_changed(self.tp)
        changed = (leader_id != self.leader_id or leader_epoch != self.leader_epoch
                   or self.is_leader)
        _update_assignment(self, replicas, adding_replicas, removing_replicas)
        self.controller_epoch = controller_epoch
        # updateAssignmentAndIsr(isr = Set.empty): a follower keeps no ISR (every version since
        # 0.8); only the leader and the controller track it
        self.isr = ()
        self.pending = None
        self.partition_epoch = partition_epoch
        self.leader_epoch = leader_epoch
        self.leader_id = leader_id
        self.is_leader = False
        self.remote = {}   # updateAssignmentAndIsr(isLeader = false): remoteReplicasMap.clear()
        self.leader_epoch_start_offset = -1
        return changed

    # -- a follower's appends ----------------------------------------------------------------
    def truncate_fully_and_start_at(self, new_offset: int, is_future: bool = False) -> None:
        """Partition.truncateFullyAndStartAt (LogManager.truncateFullyAndStartAt): wipe the
        log and restart it at ``new_offset``. kafkasim has no future replicas (alter log
        dirs)."""
        _no_future_replica(is_future)
        self.log.truncate_fully_and_start_at(new_offset)

    def append_records_to_follower_or_future_replica(
            self, ctx: PartitionContext, records: RecordChunk, is_future: bool = False,
            partition_leader_epoch: int | None = None) -> int:
        """Partition.appendRecordsToFollowerOrFutureReplica: append fetched records to this
        follower's log (``partition_leader_epoch``: Kafka 4.1's bound, Log.append_as_follower's
        ``leader_epoch``); the log's latest epoch after it. Records below the log end offset
        raise UnexpectedAppendOffsetException, except, since KAFKA-6975 (2.0), when the log is
        empty (LEO = log start) and they contain its start: the log restarts at their first
        offset and takes them (the leader's log start inside a batch, after DeleteRecords;
        Partition.scala:1321-1347@3.7.0, 1189-1217@4.3.0)."""
        _no_future_replica(is_future)
        log = self.log
        try:
            return log.append_as_follower(records, partition_leader_epoch)
        except E.UnexpectedAppendOffsetException as e:
            leo = log.log_end_offset
            if not (ctx.rules.fetch.follower_append_restarts_empty_log_at_batch
                    and leo == log.log_start_offset and e.first_offset < leo <= e.last_offset):
                raise
            self.truncate_fully_and_start_at(e.first_offset)
            return log.append_as_follower(records, partition_leader_epoch)

    # -- follower fetch bookkeeping on the leader ---------------------------------------------
    def update_follower_fetch_state(self, ctx: PartitionContext, replica_id: int, fetch_offset: int,
                                    log_start_offset: int, leader_leo: int,
                                    now: int | None = None, broker_epoch: int = -1) -> bool:
        """Record a follower fetch (Replica.updateFetchStateOrThrow) arriving at ``now`` (default
        the clock's) from the follower's ``broker_epoch`` (its Fetch's ReplicaEpoch, KIP-903; -1
        unknown); returns True if HW moved. Since 3.7 (KAFKA-15221) a KRaft leader refuses a
        fetch from an older broker epoch than its metadata cache holds: it raises
        NotLeaderOrFollowerException and records nothing."""
        st = self.remote.get(replica_id)
        if st is None:  # not an assigned replica
            return False
        if broker_epoch != -1 and ctx.metadata.kraft and \
                ctx.rules.isr.fetch_state_fences_stale_broker_epoch:
            cached = ctx.metadata.get_alive_broker_epoch(replica_id)
            if cached is not None and cached > broker_epoch:
                raise E.NotLeaderOrFollowerException(
                    f"Received stale fetch state update. broker epoch={broker_epoch} vs "
                    f"expected={cached}")
        if now is None:
            now = ctx.now
        st.broker_epoch = broker_epoch
        st.last_caught_up_time_ms = ctx.rulebook.updated_last_caught_up_time_ms(
            st, fetch_offset, leader_leo, now,
            previous_fetch_rule=ctx.rules.isr.caught_up_previous_fetch_rule)
        old_leo = st.log_end_offset
        st.log_end_offset = fetch_offset
        st.log_start_offset = log_start_offset
        # lastFetchLeaderLogEndOffset: never backwards since 3.3, simply assigned before
        if leader_leo > st.last_fetch_leader_log_end_offset or \
                not ctx.rules.isr.last_fetch_leader_leo_max:
            st.last_fetch_leader_log_end_offset = leader_leo
        st.last_fetch_time_ms = now
        self.maybe_expand_isr(ctx, replica_id)
        if old_leo != fetch_offset:   # the follower's LEO moved: the HW may move
            return self.maybe_increment_leader_hw(ctx, now)
        return False

    def is_follower_out_of_sync(self, ctx: PartitionContext, replica_id: int,
                                max_lag_ms: int | None = None) -> bool:
        """Partition.isFollowerOutOfSync, by ``rules.is_follower_out_of_sync`` (``max_lag_ms``
        default replica.lag.time.max.ms)."""
        st = self.remote.get(replica_id)
        if st is None:
            return True
        v = ctx.rules.isr
        if max_lag_ms is None:
            max_lag_ms = ctx.config["replica.lag.time.max.ms"]
        return ctx.rulebook.is_follower_out_of_sync(
            st, self.log.log_end_offset, ctx.now, max_lag_ms,
            lag_since_caught_up=v.isr_lag_time_since_caught_up,
            equal_leo_in_sync=v.caught_up_when_leo_equals_leader,
            replica_lag_max_messages=ctx.config["replica.lag.max.messages"]
            if v.isr_lag_max_messages else None)

    def get_out_of_sync_replicas(self, ctx: PartitionContext, max_lag_ms: int | None = None
                                 ) -> set[int]:
        """Partition.getOutOfSyncReplicas(maxLagMs): the ISR followers that are out of sync
        now (``max_lag_ms`` default replica.lag.time.max.ms); none while an ISR change is in
        flight."""
        if self.pending is not None:
            return set()
        return {r for r in self.isr if r != self.broker_id
                and self.is_follower_out_of_sync(ctx, r, max_lag_ms)}

    # -- ISR changes ------------------------------------------------------------------------
    def maybe_expand_isr(self, ctx: PartitionContext, replica_id: int) -> None:
        """Partition.maybeExpandIsr: add a follower that reached the HW (and epoch start)."""
        if self.pending is not None or replica_id in self.isr or not self.is_leader:
            return
        st = self.remote.get(replica_id)
        if st is None or not self.is_replica_isr_eligible(ctx, replica_id):
            return
        if not ctx.rulebook.is_follower_in_sync(
                st.log_end_offset, self.log.high_watermark, self.leader_epoch_start_offset,
                requires_epoch_start_offset=ctx.rules.isr.isr_expand_requires_epoch_start_offset):
            return
        # Partition.prepareIsrExpand: ``isr + newInSyncReplicaId`` on a Scala Set, whose small
        # sets (up to 4 members) keep insertion order: the new member comes last, as real
        # `kafka-topics --describe` shows (Isr: 3,1,2 after broker 2 rejoined)
        new_isr = self.isr + (replica_id,)
        ctx.propose_isr(self, "expand", (replica_id,), new_isr)

    def is_replica_isr_eligible(self, ctx: PartitionContext, follower_replica_id: int) -> bool:
        """Partition.isReplicaIsrEligible: ZooKeeper mode, the broker is alive in the metadata
        cache; KRaft, it is registered, unfenced and not in controlled shutdown and, since 3.5
        (KIP-903, isBrokerEpochIsrEligible), the broker epoch of its last fetch is known and is
        the cache's (or -1, which skips the check)."""
        if not ctx.is_isr_eligible(follower_replica_id):
            return False
        md = ctx.metadata
        if not md.kraft or not ctx.rules.isr.isr_eligibility_checks_broker_epoch:
            return True
        st = self.remote.get(follower_replica_id)
        if st is None:   # the replica state is gone (the topic was deleted meanwhile)
            return False
        stored = st.broker_epoch
        cached = md.get_alive_broker_epoch(follower_replica_id)
        return stored is not None and cached is not None and (stored == -1 or stored == cached)

    def maybe_shrink_isr(self, ctx: PartitionContext) -> None:
        """Partition.maybeShrinkIsr, run by the isr-expiration task."""
        if not self.is_leader or self.pending is not None:
            return
        out = tuple(r for r in self.isr
                    if r != self.broker_id and self.is_follower_out_of_sync(ctx, r))
        if not out:
            return
        new_isr = tuple(r for r in self.isr if r not in out)
        ctx.propose_isr(self, "shrink", out, new_isr)

    # -- high watermark ---------------------------------------------------------------------
    def maybe_increment_leader_hw(self, ctx: PartitionContext, now: int | None = None) -> bool:
        """Partition.maybeIncrementLeaderHW (``rules.maybe_increment_leader_hw``) at ``now``
        (currentTimeMs; default the clock's); True if the HW moved. Since 3.7 (KAFKA-15583) the
        HW does not move while under min ISR.

        Kafka asks isUnderMinIsr first; here it is asked only when the HW would move (both are
        pure reads of the same state, so the answer is the same, and most calls move nothing)."""
        if not self.is_leader:
            return False
        v = ctx.rules.isr
        log = self.log
        old = log.high_watermark
        new = ctx.rulebook.maybe_increment_leader_hw(
            log.log_end_offset, old, self.remote.values(), self.maximal_isr(ctx),
            ctx.now if now is None else now,
            ctx.config["replica.lag.time.max.ms"],
            include_caught_up=v.hw_includes_caught_up_replicas,
            eligible=_isr_eligible(self, ctx) if v.caught_up_requires_isr_eligible else None)
        if new <= old:   # the HW never moves back
            return False
        if v.hw_frozen_under_min_isr and self.is_under_min_isr(ctx):
            return False
        log.high_watermark = new
        ctx.partition_changed(self.tp)
        return True

    def check_enough_replicas_reach_offset(self, ctx: PartitionContext, required_offset: int,
                                           min_isr: int | None = None) -> tuple[bool, str]:
        """DelayedProduce check (``rules.check_enough_replicas_reach_offset``): (done, error)
        for an acks=all append ending at ``required_offset - 1``; a replica that is no longer
        leader answers (False, NOT_LEADER_OR_FOLLOWER), which completes the produce too (an
        error does). ``min_isr``: ``effective_min_isr``, when the caller has just asked it (the
        append's min-ISR check)."""
        if not self.is_leader:
            return False, E.NOT_LEADER_OR_FOLLOWER
        return ctx.rulebook.check_enough_replicas_reach_offset(
            self.log.high_watermark, required_offset, len(self.maximal_isr(ctx)),
            self.effective_min_isr(ctx) if min_isr is None else min_isr)

    # -- leader epochs ----------------------------------------------------------------------
    def check_current_leader_epoch(self, ctx: PartitionContext,
                                   current_leader_epoch: int | None) -> str | None:
        """Partition.checkCurrentLeaderEpoch (KIP-320, 2.1+): a request's current leader epoch
        below this replica's is FENCED_LEADER_EPOCH, above it UNKNOWN_LEADER_EPOCH; None (or
        -1, NO_PARTITION_LEADER_EPOCH) is no epoch, which passes, as before 2.1 any epoch."""
        if current_leader_epoch is None or current_leader_epoch < 0 or \
                not ctx.rules.fetch.current_leader_epoch_fencing:
            return None
        if current_leader_epoch < self.leader_epoch:
            return E.FENCED_LEADER_EPOCH
        if current_leader_epoch > self.leader_epoch:
            return E.UNKNOWN_LEADER_EPOCH
        return None

    def local_log_with_epoch_or_throw(self, ctx: PartitionContext,
                                      current_leader_epoch: int | None,
                                      require_leader: bool) -> Log:
        """Partition.localLogWithEpochOrThrow (getLocalLog): this replica's log, after the
        current leader epoch check (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH), then, with
        ``require_leader``, leadership (NOT_LEADER_OR_FOLLOWER); each raised as Kafka's
        ApiException."""
        err = self.check_current_leader_epoch(ctx, current_leader_epoch)
        if err is None and require_leader and not self.is_leader:
            err = E.NOT_LEADER_OR_FOLLOWER if ctx.rules.tools.error_not_leader_or_follower \
                else E.NOT_LEADER_FOR_PARTITION
            raise E.ApiException(err, f"Leader not local for partition {self.topic}-"
                                      f"{self.partition} on broker {self.broker_id}")
        if err is not None:
            raise E.ApiException(err, f"The leader epoch {current_leader_epoch} of the request "
                                      f"for {self.topic}-{self.partition} is not this "
                                      f"replica's ({self.leader_epoch})")
        return self.log

    def fetch_offset_snapshot(self, ctx: PartitionContext, current_leader_epoch: int | None,
                              fetch_only_from_leader: bool) -> LogOffsetSnapshot:
        """Partition.fetchOffsetSnapshot: the log's offsets, after localLogWithEpochOrThrow."""
        return self.local_log_with_epoch_or_throw(
            ctx, current_leader_epoch, fetch_only_from_leader).fetch_offset_snapshot()

    def fetch_offset_for_timestamp(self, ctx: PartitionContext, timestamp: int,
                                   isolation_level: str | None,
                                   current_leader_epoch: int | None,
                                   fetch_only_from_leader: bool) -> TimestampAndOffset | None:
        """Partition.fetchOffsetForTimestamp (ListOffsets): a client's question
        (``isolation_level`` "read_uncommitted" or "read_committed") reads up to the HW (the
        LSO, the same without transactions), a replica's (None) up to the LEO. LATEST answers
        that bound with this replica's leader epoch, EARLIEST the log start; a timestamp (or
        MAX_TIMESTAMP) its record if below the bound, else None. While a new leader's HW is
        below its epoch's start offset (KIP-207, 2.2+), a client's LATEST, or a timestamp not
        found below the HW, is OFFSET_NOT_AVAILABLE."""
        log = self.local_log_with_epoch_or_throw(ctx, current_leader_epoch,
                                                 fetch_only_from_leader)
        hw = log.high_watermark
        last_fetchable = log.log_end_offset if isolation_level is None else hw
        lagging = isolation_level is not None and self.leader_epoch_start_offset > hw and \
            ctx.rules.clients.list_offsets_offset_not_available
        if timestamp == LATEST_TIMESTAMP:
            if not lagging:
                return TimestampAndOffset(NO_TIMESTAMP, last_fetchable, self.leader_epoch)
        elif timestamp in (EARLIEST_TIMESTAMP, EARLIEST_LOCAL_TIMESTAMP):
            return log.fetch_offset_by_timestamp(timestamp)
        else:
            found = log.fetch_offset_by_timestamp(
                timestamp,
                max_timestamp_batch_epoch=ctx.rules.clients.list_offsets_max_timestamp_batch_epoch)
            if found is not None and found.offset < last_fetchable:
                return found
            if not lagging:
                return None
        raise E.ApiException(E.OFFSET_NOT_AVAILABLE, (
            f"Failed to fetch offsets for partition {self.topic}-{self.partition} with leader "
            f"epoch {current_leader_epoch}: its high watermark ({hw}) is lagging behind the "
            f"start offset from the beginning of this epoch ({self.leader_epoch_start_offset})"))

    def last_offset_for_leader_epoch(self, ctx: PartitionContext,
                                     current_leader_epoch: int | None, leader_epoch: int,
                                     fetch_only_from_leader: bool) -> EpochEndOffset:
        """Partition.lastOffsetForLeaderEpoch: where ``leader_epoch`` ends in this replica's log
        (UnifiedLog.endOffsetForEpoch), after getLocalLog's checks: the current leader epoch
        first, then, with ``fetch_only_from_leader`` (what ReplicaManager passes), leadership
        (NOT_LEADER_OR_FOLLOWER). An epoch the log cannot place answers NONE with -1 and -1;
        before KIP-279 (2.0) the answer names no epoch (v0: the end offset only)."""
        err = self.check_current_leader_epoch(ctx, current_leader_epoch)
        if err is None and fetch_only_from_leader and not self.is_leader:
            err = E.NOT_LEADER_OR_FOLLOWER if ctx.rules.tools.error_not_leader_or_follower \
                else E.NOT_LEADER_FOR_PARTITION
        if err is not None:
            return EpochEndOffset(self.topic, self.partition, err)
        found = self.log.end_offset_for_epoch(leader_epoch)
        if found is None:
            return EpochEndOffset(self.topic, self.partition)
        epoch = found.leader_epoch if ctx.rules.fetch.offsets_for_leader_epoch_returns_epoch \
            else rules.UNDEFINED_EPOCH
        return EpochEndOffset(self.topic, self.partition, E.NONE, epoch, found.offset)
