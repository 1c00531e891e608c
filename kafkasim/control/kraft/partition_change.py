"""PartitionChangeBuilder: how the KRaft controller changes one partition.

Follows org.apache.kafka.controller.PartitionChangeBuilder (metadata module, trunk 1eb7644,
2024-10-25; the same code ships in 4.x): reassignment completion, KIP-966 ELR upkeep
(``maybePopulateTargetElr``), the election ladder (``electLeader``: preferred / any leader, from
the ISR, else from the ELR when the ISR is empty, else the last known leader, else unclean),
leader-epoch bumps (reassignment; ISR shrink only before metadata.version 3.6-IV0, KAFKA-15021),
LeaderRecoveryState RECOVERING on unclean election (KIP-704, 3.2-IV0) and the no-op check.

JBOD directory assignment (``setDirectory`` / ``setDefaultDirProvider``, PartitionChangeRecord
``directories``) is not modelled: the simulator's records carry no directories.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import fields
from typing import NamedTuple

from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.reassignment import PartitionReassignmentReplicas
from kafkasim.control.kraft.records import (
    NO_LEADER,
    NO_LEADER_CHANGE,
    LeaderRecoveryState,
    PartitionChangeRecord,
    PartitionRegistration,
)
from kafkasim.settings.javautil import JavaIntHashSet


class Election:
    """PartitionChangeBuilder.Election."""

    PREFERRED = "PREFERRED"   # the preferred replica if it is in the ISR
    ONLINE = "ONLINE"         # any leader from the ISR (or ELR)
    UNCLEAN = "UNCLEAN"       # prefer the ISR, else any acceptable replica (data loss possible)


class ElectionResult(NamedTuple):
    """PartitionChangeBuilder.ElectionResult."""

    node: int
    unclean: bool


def _contains_all(a: Iterable[int], b: Iterable[int]) -> bool:
    """Replicas.contains(List a, int[] b): every element of b is in a."""
    sa = set(a)
    return all(x in sa for x in b)


def change_record_is_no_op(record: PartitionChangeRecord) -> bool:
    """PartitionChangeBuilder.changeRecordIsNoOp."""
    return (record.isr is None and record.eligible_leader_replicas is None
            and record.last_known_elr is None and record.leader == NO_LEADER_CHANGE
            and record.replicas is None and record.removing_replicas is None
            and record.adding_replicas is None
            and record.leader_recovery_state == LeaderRecoveryState.NO_CHANGE)


# -- the KRaft election order and the ELR rules ----------------------------------------------------
# PartitionChangeBuilder's private methods electLeader, electPreferredLeader, electAnyLeader,
# canElectLastKnownLeader, isValidNewLeader and maybePopulateTargetElr, as module functions of
# the builder: the builder's methods call these, looked up in this module at call time, so
# editing one here (or replacing it: ``partition_change.elect_any_leader = f``) changes every
# election the KRaft controller runs.
def elect_leader(builder: PartitionChangeBuilder) -> ElectionResult:
    """electLeader: PREFERRED -> ``elect_preferred_leader``, else ``elect_any_leader``."""
    if builder.election == Election.PREFERRED:
        return elect_preferred_leader(builder)
    return elect_any_leader(builder)


def elect_preferred_leader(builder: PartitionChangeBuilder) -> ElectionResult:
    """electPreferredLeader: the preferred replica (first of the target replicas) if it is a
    valid new leader; else the current leader if still valid; else the other target replicas in
    order; else the last known leader (KIP-966); else none."""
    p = builder.partition
    preferred = builder.target_replicas[0]
    if is_valid_new_leader(builder, preferred):
        return ElectionResult(preferred, False)
    if is_valid_new_leader(builder, p.leader):
        return ElectionResult(p.leader, False)
    for r in builder.target_replicas[1:]:
        if is_valid_new_leader(builder, r):
            return ElectionResult(r, False)
    if can_elect_last_known_leader(builder):
        return ElectionResult(p.last_known_elr[0], True)
    return ElectionResult(NO_LEADER, False)


def elect_any_leader(builder: PartitionChangeBuilder) -> ElectionResult:
    """electAnyLeader: the current leader if still valid; else the first valid target replica
    in assignment order; else the last known leader (KIP-966); else, for an UNCLEAN election,
    the first acceptable target replica (unclean: records may be lost); else none."""
    p = builder.partition
    if is_valid_new_leader(builder, p.leader):
        return ElectionResult(p.leader, False)
    for r in builder.target_replicas:
        if is_valid_new_leader(builder, r):
            return ElectionResult(r, False)
    if can_elect_last_known_leader(builder):
        return ElectionResult(p.last_known_elr[0], True)
    if builder.election == Election.UNCLEAN:
        for r in builder.target_replicas:
            if builder.is_acceptable_leader(r):
                return ElectionResult(r, True)
    return ElectionResult(NO_LEADER, False)


def can_elect_last_known_leader(builder: PartitionChangeBuilder) -> bool:
    """canElectLastKnownLeader: ELR on, last-known-leader mode, empty ISR and ELR, exactly
    one LastKnownElr member, and (since KAFKA-19522, 4.1.0) that member acceptable."""
    if not builder.eligible_leader_replicas_enabled or \
            not builder.use_last_known_leader_in_balanced_recovery:
        return False
    if builder.target_elr or builder.target_isr:
        return False
    if len(builder.partition.last_known_elr) != 1:
        return False
    if builder.last_known_leader_must_be_acceptable:
        return bool(builder.is_acceptable_leader(builder.partition.last_known_elr[0]))
    return True


def is_valid_new_leader(builder: PartitionChangeBuilder, replica: int) -> bool:
    """isValidNewLeader: in the target ISR, or in the ELR when the ISR is empty, and
    acceptable (registered, unfenced, not shutting down)."""
    in_isr = replica in builder.target_isr
    in_elr = not builder.target_isr and replica in builder.target_elr
    return (in_isr or in_elr) and builder.is_acceptable_leader(replica)


def maybe_populate_target_elr(builder: PartitionChangeBuilder) -> None:
    """maybePopulateTargetElr (KIP-966): ISR >= min ISR clears ELR and LastKnownElr; below
    it, ELR := (ELR + old ISR) - target ISR - uncleanly shut down replicas, and
    LastKnownElr := (that union + LastKnownElr) - target ISR - ELR."""
    if not builder.eligible_leader_replicas_enabled:
        return
    if len(builder.target_isr) >= builder.min_isr:
        builder.target_elr = []
        builder.target_last_known_elr = []
        return
    target_isr = set(builder.target_isr)
    unclean = builder.unclean_shutdown_replicas
    candidates = JavaIntHashSet(builder.target_elr)
    for r in builder.partition.isr:
        candidates.add(r)
    builder.target_elr = [r for r in candidates
                          if r not in target_isr and (unclean is None or r not in unclean)]
    for r in builder.target_last_known_elr:
        candidates.add(r)
    builder.target_last_known_elr = [r for r in candidates
                                     if r not in target_isr and r not in builder.target_elr]


class PartitionChangeBuilder:
    """org.apache.kafka.controller.PartitionChangeBuilder. Set targets, then ``build()`` returns
    the PartitionChangeRecord (or None when nothing changes). Generation only: the partition
    passed in is never modified."""

    def __init__(self, partition: PartitionRegistration, topic_id: str, partition_id: int,
                 is_acceptable_leader: Callable[[int], bool],
                 metadata_version: MetadataVersion | str, min_isr: int,
                 eligible_leader_replicas_enabled: bool = False) -> None:
        """``eligible_leader_replicas_enabled`` is the constructor argument of 4.3.0 (before,
        only ``set_eligible_leader_replicas_enabled``, which is kept)."""
        self.partition = partition
        self.topic_id = topic_id
        self.partition_id = partition_id
        self.is_acceptable_leader = is_acceptable_leader
        self.metadata_version = MetadataVersion.parse(metadata_version)
        self.min_isr = min_isr
        self.eligible_leader_replicas_enabled = bool(eligible_leader_replicas_enabled)
        self.target_isr: list[int] = list(partition.isr)
        self.target_replicas: list[int] = list(partition.replicas)
        self.target_removing: list[int] = list(partition.removing_replicas)
        self.target_adding: list[int] = list(partition.adding_replicas)
        self.target_elr: list[int] = list(partition.elr)
        self.target_last_known_elr: list[int] = list(partition.last_known_elr)
        self.unclean_shutdown_replicas: list[int] | None = None
        self.election = Election.ONLINE
        self.target_leader_recovery_state = partition.leader_recovery_state
        # Whether the last known leader may be elected in a balanced recovery; it is then
        # stored in lastKnownElr (KIP-966). Kafka's default is true.
        self.use_last_known_leader_in_balanced_recovery = True
        # KAFKA-19522 (fixed in 4.1.0): the last known leader is elected only if acceptable.
        # Trunk 1eb7644 and 4.0.x elect it even when fenced (the check only logs).
        self.last_known_leader_must_be_acceptable = True
        # apache/kafka #20629 (4.2.0): maybeUpdateLastKnownLeader keys on the new leader (none:
        # remember the old one unless LastKnownElr is already set; a real one: clear it).
        # False is 4.1.x and before (keyed on an emptied ISR).
        self.last_known_leader_on_leader_loss = True
        # KAFKA-19975 (4.3.0): a reassignment completes once its adding replicas are in the
        # ISR; False is 4.2.x and before (every target replica must be in the ISR).
        self.reassignment_waits_for_adding_replicas_only = True
        # KAFKA-15109 (3.6.0 - 3.9.x; 4.0 dropped ZooKeeper migration): during a ZK migration
        # every ISR shrink bumps the leader epoch, whatever the metadata.version.
        self.zk_migration_enabled = False

    # -- setters (fluent, as in Kafka) ------------------------------------------------------
    def set_target_isr(self, isr: Iterable[int]) -> PartitionChangeBuilder:
        self.target_isr = list(isr)
        return self

    def set_target_isr_with_broker_states(self, states: Iterable) -> PartitionChangeBuilder:
        """setTargetIsrWithBrokerStates (KIP-903): states are (broker_id, broker_epoch) pairs
        or objects with ``broker_id``; only the ids count here."""
        ids = []
        for s in states:
            if isinstance(s, int):
                ids.append(s)
            elif hasattr(s, "broker_id"):
                ids.append(s.broker_id)
            else:
                ids.append(s[0])
        return self.set_target_isr(ids)

    def set_target_replicas(self, replicas: Iterable[int]) -> PartitionChangeBuilder:
        self.target_replicas = list(replicas)
        return self

    def set_target_removing_replicas(self, r: Iterable[int]) -> PartitionChangeBuilder:
        self.target_removing = list(r)
        return self

    set_target_removing = set_target_removing_replicas

    def set_target_adding_replicas(self, r: Iterable[int]) -> PartitionChangeBuilder:
        self.target_adding = list(r)
        return self

    set_target_adding = set_target_adding_replicas
    #: Kafka's static ``PartitionChangeBuilder.changeRecordIsNoOp`` (the module function)
    change_record_is_no_op = staticmethod(change_record_is_no_op)

    def set_target_leader_recovery_state(self, s: int) -> PartitionChangeBuilder:
        self.target_leader_recovery_state = s
        return self

    def set_election(self, election: str) -> PartitionChangeBuilder:
        if election not in (Election.PREFERRED, Election.ONLINE, Election.UNCLEAN):
            raise ValueError(f"unknown election type {election!r}: PartitionChangeBuilder."
                             f"Election is PREFERRED, ONLINE or UNCLEAN")
        self.election = election
        return self

    def set_eligible_leader_replicas_enabled(self, enabled: bool) -> PartitionChangeBuilder:
        self.eligible_leader_replicas_enabled = bool(enabled)
        return self

    def set_unclean_shutdown_replicas(self, replicas: Iterable[int] | None
                                      ) -> PartitionChangeBuilder:
        self.unclean_shutdown_replicas = None if replicas is None else list(replicas)
        return self

    def set_use_last_known_leader_in_balanced_recovery(self, b: bool) -> PartitionChangeBuilder:
        self.use_last_known_leader_in_balanced_recovery = bool(b)
        return self

    def set_last_known_leader_must_be_acceptable(self, b: bool) -> PartitionChangeBuilder:
        """False reproduces Kafka before KAFKA-19522 (trunk 1eb7644, 4.0.x): a fenced or
        shut-down last known leader is still elected. True (default) is 4.1.0+."""
        self.last_known_leader_must_be_acceptable = bool(b)
        return self

    def set_default_dir_provider(self, provider=None) -> PartitionChangeBuilder:
        """setDefaultDirProvider: accepted and ignored (JBOD directories are not modelled), so
        Kafka's builder chains run unchanged."""
        return self

    def set_zk_migration_enabled(self, b: bool) -> PartitionChangeBuilder:
        """setZkMigrationEnabled (3.6.0 - 3.9.x, KAFKA-15109): True bumps the leader epoch on
        every ISR shrink, for the brokers still in ZooKeeper mode. kafkasim runs no migration:
        only Kafka's builder tests set it."""
        self.zk_migration_enabled = bool(b)
        return self

    def set_last_known_leader_on_leader_loss(self, b: bool) -> PartitionChangeBuilder:
        """True (default) is 4.2.0+ (apache/kafka #20629): the last known leader is recorded
        whenever the election leaves the partition without a leader, even with a non-empty
        ISR. False reproduces 4.1.x and before: only when the ISR becomes empty."""
        self.last_known_leader_on_leader_loss = bool(b)
        return self

    def set_reassignment_waits_for_adding_replicas_only(self, b: bool) -> PartitionChangeBuilder:
        """True (default) is 4.3.0+ (KAFKA-19975): PartitionReassignmentReplicas
        .maybeCompleteReassignment waits only for the adding replicas (every target replica
        when the reassignment removes more than it adds). False reproduces 4.2.x and before."""
        self.reassignment_waits_for_adding_replicas_only = bool(b)
        return self

    def record_version(self) -> int:
        """The PartitionChangeRecord version Kafka writes at this metadata.version."""
        return self.metadata_version.partition_change_record_version()

    # -- election: the module's rule functions (edit one there and every controller uses it) ---
    def elect_leader(self) -> ElectionResult:
        """electLeader, by the module function ``elect_leader``."""
        return elect_leader(self)

    def _try_election(self, rec: dict) -> None:
        result = self.elect_leader()
        p = self.partition
        if result.node == p.leader:
            return
        if result.node in self.target_elr:
            # elected from the ELR: the ISR becomes the new leader alone
            self.target_isr = [result.node]
            self.target_elr = [r for r in self.target_elr if r != result.node]
        rec["leader"] = result.node
        if result.unclean:
            # unclean: the ISR is forced to the new leader (possible data loss)
            rec["isr"] = [result.node]
            if (p.leader_recovery_state != LeaderRecoveryState.RECOVERING
                    and self.metadata_version.is_leader_recovery_supported()):
                rec["leader_recovery_state"] = LeaderRecoveryState.RECOVERING

    # -- epoch bumps ------------------------------------------------------------------------
    def trigger_leader_epoch_bump_for_replica_reassignment_if_needed(self, rec: dict) -> None:
        """A replica set that drops any old replica bumps the leader epoch."""
        if rec.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE:
            return
        if not _contains_all(self.target_replicas, self.partition.replicas):
            rec["leader"] = self.partition.leader

    def trigger_leader_epoch_bump_for_isr_shrink_if_needed(self, rec: dict) -> None:
        """Before 3.6-IV0 (KAFKA-15021), or during a ZK migration (3.6 - 3.9, KAFKA-15109),
        an ISR shrink bumps the leader epoch."""
        if not (self.metadata_version.is_leader_epoch_bump_required_on_isr_shrink()
                or self.zk_migration_enabled):
            return
        if rec.get("leader", NO_LEADER_CHANGE) != NO_LEADER_CHANGE:
            return
        if rec.get("isr") is None:
            return
        if not _contains_all(rec["isr"], self.partition.isr):
            rec["leader"] = self.partition.leader

    # -- build ------------------------------------------------------------------------------
    def _complete_reassignment_if_needed(self) -> None:
        """completeReassignmentIfNeeded: PartitionReassignmentReplicas of the targets."""
        done = PartitionReassignmentReplicas(self.target_removing, self.target_adding,
                                             self.target_replicas) \
            .maybe_complete_reassignment(
                self.target_isr,
                wait_for_adding_only=self.reassignment_waits_for_adding_replicas_only)
        if done is None:
            return
        self.target_replicas, self.target_isr = done.replicas, done.isr
        self.target_removing = []
        self.target_adding = []

    def _maybe_update_record_elr(self, rec: dict) -> None:
        p = self.partition
        clean = rec.get("isr") is None
        if not clean or not self.eligible_leader_replicas_enabled:
            self.target_elr = []
            self.target_last_known_elr = []
        if self.target_elr != list(p.elr):
            rec["eligible_leader_replicas"] = list(self.target_elr)
        leader = rec.get("leader", NO_LEADER_CHANGE)
        if (self.use_last_known_leader_in_balanced_recovery and len(p.last_known_elr) == 1
                and (leader == NO_LEADER
                     or (leader == NO_LEADER_CHANGE and p.leader == NO_LEADER))):
            # the stored last known leader stays while the partition has no leader
            self.target_last_known_elr = list(p.last_known_elr)
        if self.use_last_known_leader_in_balanced_recovery:
            return   # maybeUpdateLastKnownLeader sets the field
        if self.target_last_known_elr != list(p.last_known_elr):
            rec["last_known_elr"] = list(self.target_last_known_elr)

    def _maybe_update_last_known_leader(self, rec: dict) -> None:
        p = self.partition
        if not self.use_last_known_leader_in_balanced_recovery or \
                not self.eligible_leader_replicas_enabled:
            return
        isr = rec.get("isr")
        leader = rec.get("leader", NO_LEADER_CHANGE)
        if self.last_known_leader_on_leader_loss:
            if leader == NO_LEADER and not p.last_known_elr:
                rec["last_known_elr"] = [p.leader]
            elif leader >= 0 and p.last_known_elr:
                rec["last_known_elr"] = []
            return
        if isr is not None and not isr and (len(p.last_known_elr) != 1
                                            or p.last_known_elr[0] != p.leader):
            # first time the partition becomes leaderless: remember the last leader
            rec["last_known_elr"] = [p.leader]
        elif ((leader >= 0 or (p.leader != NO_LEADER and leader != NO_LEADER))
              and p.last_known_elr):
            rec["last_known_elr"] = []

    def _set_assignment_changes(self, rec: dict) -> None:
        p = self.partition
        if self.target_replicas and self.target_replicas != list(p.replicas):
            rec["replicas"] = list(self.target_replicas)
        if self.target_removing != list(p.removing_replicas):
            rec["removing_replicas"] = list(self.target_removing)
        if self.target_adding != list(p.adding_replicas):
            rec["adding_replicas"] = list(self.target_adding)

    def build(self) -> PartitionChangeRecord | None:
        """PartitionChangeBuilder.build, step by step as in Kafka."""
        rec: dict = {}
        self._complete_reassignment_if_needed()
        maybe_populate_target_elr(self)
        self._try_election(rec)
        self.trigger_leader_epoch_bump_for_replica_reassignment_if_needed(rec)
        self._maybe_update_record_elr(rec)
        # With ELR enabled the ISR may become empty; without it an empty target is not written.
        if (rec.get("isr") is None
                and (self.target_isr or self.eligible_leader_replicas_enabled)
                and self.target_isr != list(self.partition.isr)):
            rec["isr"] = list(self.target_isr)
        self.trigger_leader_epoch_bump_for_isr_shrink_if_needed(rec)
        self._maybe_update_last_known_leader(rec)
        self._set_assignment_changes(rec)
        if self.target_leader_recovery_state != self.partition.leader_recovery_state:
            rec["leader_recovery_state"] = self.target_leader_recovery_state
        record = _make_record(self.topic_id, self.partition_id, rec)
        return None if change_record_is_no_op(record) else record

    def __repr__(self) -> str:
        return (f"PartitionChangeBuilder(partition={self.partition}, topicId={self.topic_id}, "
                f"partitionId={self.partition_id}, targetIsr={self.target_isr}, "
                f"targetReplicas={self.target_replicas}, targetRemoving={self.target_removing}, "
                f"targetAdding={self.target_adding}, targetElr={self.target_elr}, "
                f"targetLastKnownElr={self.target_last_known_elr}, "
                f"uncleanShutdownReplicas={self.unclean_shutdown_replicas}, "
                f"election={self.election}, "
                f"targetLeaderRecoveryState={self.target_leader_recovery_state})")


_LIST_FIELDS = ("isr", "replicas", "removing_replicas", "adding_replicas",
                "eligible_leader_replicas", "last_known_elr")
_RECORD_FIELDS = frozenset(f.name for f in fields(PartitionChangeRecord))


def _make_record(topic_id: str, partition_id: int, rec: dict) -> PartitionChangeRecord:
    kwargs = {}
    for k, v in rec.items():
        assert k in _RECORD_FIELDS, k
        kwargs[k] = tuple(v) if k in _LIST_FIELDS else v
    return PartitionChangeRecord(partition_id=partition_id, topic_id=topic_id, **kwargs)
