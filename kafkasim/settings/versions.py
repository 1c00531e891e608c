"""Kafka version profiles: which historical replication rules apply to a ``kafka_version``.

The simulator models many Kafka releases at once. Rather than scattering ``if version >= ...``
checks through the protocol code, every behaviour that changed between releases is one named,
documented flag, and :func:`rules_for` computes the set for a version string. The flags are
grouped by the part of Kafka they belong to, each group a record of its own held by
:class:`Rules` (:data:`RULE_GROUPS`: ISR and high watermark, AlterPartition, fetch and leader
epochs, elections and ELR, controller and broker lifecycle, the KRaft quorum, admin tools,
clients): the code reads ``rules.isr.hw_frozen_under_min_isr``. A rule's flat name stays its name
everywhere else: ``rule_names()``, overrides, scenario files, and ``rules.hw_frozen_under_min_isr``.
A notebook can also switch a single rule off (``rules_for("3.7", {"hw_frozen_under_min_isr":
False})``) to show what a KIP changed.

A profile stands for the ``x.y.0`` release of that line. Every string is mapped to the newest
supported profile that is not newer than it (``"3.7.1"`` -> ``"3.7"``, ``"0.10.2.0"`` ->
``"0.10.2"``). Fixes back-ported to a patch release are in general not modelled for that patch
release; they appear in the minor release that first shipped them. The exception is 2.0.1, a
profile of its own (``"2.0.0"`` -> ``"2.0"``, ``"2.0.2"`` -> ``"2.0.1"``): it shipped three
replication fixes that decide whether logs diverge (KAFKA-7128, KAFKA-7164, KAFKA-7415; each
commit is contained in the 2.0.1 tag and not in 2.0.0).

Every rule's ``since`` / ``until`` release was checked against the Kafka source (release tags of
``github:apache/kafka``); the comment on each field says which class, KIP or JIRA it reflects.
"""

from __future__ import annotations

import dataclasses
import difflib
import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

__all__ = [
    "DEFAULT_VERSION",
    "RULE_GROUPS",
    "SUPPORTED_VERSIONS",
    "AlterPartitionRules",
    "ClientRules",
    "ControllerRules",
    "ElectionRules",
    "FetchRules",
    "IsrRules",
    "MetricRules",
    "RaftRules",
    "RuleError",
    "Rules",
    "ToolRules",
    "VersionError",
    "describe_rules",
    "normalize_version",
    "parse_version",
    "rule_group",
    "rule_names",
    "rules_for",
    "version_at_least",
    "version_tuple",
]

#: Every modelled release line, oldest first. Every minor release from 0.8.2 on is a profile,
#: so a version string never silently borrows the rules of an older line that behaved otherwise;
#: 2.0.1 is one too (its replication fixes, see the module docstring).
SUPPORTED_VERSIONS: tuple[str, ...] = (
    "0.8.2",
    "0.9.0",
    "0.10.0",
    "0.10.1",
    "0.10.2",
    "0.11.0",
    "1.0",
    "1.1",
    "2.0",
    "2.0.1",
    "2.1",
    "2.2",
    "2.3",
    "2.4",
    "2.5",
    "2.6",
    "2.7",
    "2.8",
    "3.0",
    "3.1",
    "3.2",
    "3.3",
    "3.4",
    "3.5",
    "3.6",
    "3.7",
    "3.8",
    "3.9",
    "4.0",
    "4.1",
    "4.2",
    "4.3",
    "4.4",
)

#: The profile used when a scenario does not name a version.
DEFAULT_VERSION = "4.3"

_VERSION_RE = re.compile(r"^\d+(\.\d+){1,3}$")


class VersionError(ValueError):
    """A ``kafka_version`` string that is malformed or older than every supported profile."""


class RuleError(ValueError):
    """An override of an unknown rule name, or with a value of the wrong type."""


def version_tuple(version: str) -> tuple[int, ...]:
    """Parse ``"3.7"``, ``"3.7.0"`` or ``"0.10.2.0"`` into integers, without normalising."""
    if not isinstance(version, str):
        raise VersionError(
            f"Kafka version must be a string such as '3.7', got {version!r} "
            f"({type(version).__name__})"
        )
    return _parse_version_text(version)


@functools.lru_cache(maxsize=512)
def _parse_version_text(version: str) -> tuple[int, ...]:
    """version_tuple's parse, remembered per string: building a cluster resolves a few hundred
    configs, each asking whether its version has them."""
    text = version.strip()
    if not _VERSION_RE.match(text):
        raise VersionError(
            f"Invalid Kafka version {version!r}: expected numbers separated by dots, "
            f"such as '3.7', '3.7.1' or '0.10.2.0'. Supported: {', '.join(SUPPORTED_VERSIONS)}"
        )
    return tuple(int(part) for part in text.split("."))


_PROFILE_TUPLES: tuple[tuple[tuple[int, ...], str], ...] = tuple(
    (version_tuple(v), v) for v in SUPPORTED_VERSIONS
)


def normalize_version(version: str) -> str:
    """Return the supported profile name for ``version`` (newest profile <= it)."""
    return _profile_for(version_tuple(version), version)


@functools.lru_cache(maxsize=512)
def _profile_for(wanted: tuple[int, ...], version: str) -> str:
    chosen: str | None = None
    for profile_tuple, name in _PROFILE_TUPLES:
        if profile_tuple <= wanted:
            chosen = name
    if chosen is None:
        raise VersionError(
            f"Kafka version {version!r} is older than every supported profile. "
            f"Supported: {', '.join(SUPPORTED_VERSIONS)}"
        )
    return chosen


def _release_line(t: tuple[int, ...]) -> tuple[int, ...]:
    return t[:3] if t and t[0] == 0 else t[:2]


def check_known_version(version: str) -> str:
    """The profile of ``version`` if it belongs to a Kafka release line kafkasim models (any
    patch release of 0.8.2 ... 4.4); a version of no modelled line (``"99.9"``, ``"3.10"``)
    raises VersionError listing the known ones. Used for Cluster, scenario and sweep files and
    the CLI; :func:`normalize_version` itself maps a newer version to the newest profile."""
    profile = normalize_version(version)
    lines = {_release_line(t) for t, _name in _PROFILE_TUPLES}
    if _release_line(version_tuple(version)) not in lines:
        raise VersionError(
            f"Unknown Kafka version {version!r}: kafkasim models the release lines "
            f"{', '.join(SUPPORTED_VERSIONS)} (patch releases map to their line's profile)")
    return profile


def parse_version(version: str) -> tuple[int, ...]:
    """Parse ``version`` and normalise it to its profile's numbers: ``"3.7.1"`` -> ``(3, 7)``."""
    return version_tuple(normalize_version(version))


def version_at_least(version: str, since: str) -> bool:
    """True if the profile of ``version`` is ``since`` or newer (``since`` may be any release)."""
    if type(version) is str and type(since) is str:
        return _version_at_least(version, since)
    return parse_version(version) >= version_tuple(since)   # raises VersionError, naming it


@functools.lru_cache(maxsize=4096)
def _version_at_least(version: str, since: str) -> bool:
    """version_at_least, remembered per pair of strings: a cluster's configs and rules ask it
    a few hundred times, for a few dozen pairs."""
    return parse_version(version) >= version_tuple(since)


# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


def _rule(*, since: str | None = None, until: str | None = None, ref: str, doc: str) -> Any:
    """Declare a rule field: on in releases ``[since, until)``; ``ref`` cites Kafka."""
    return field(metadata={"since": since, "until": until, "ref": ref, "doc": doc})


@dataclass(frozen=True)
class IsrRules:
    """ISR membership and the high watermark: when a follower counts as caught up or out of sync
    (Partition.isFollowerOutOfSync, maybeExpandIsr), how often the ISR shrinks, what a leader
    resets on re-election, and which replicas the leader HW waits for (maybeIncrementLeaderHW,
    min ISR)."""

    # 0.8.x: a follower also leaves the ISR when it trails the leader by more than
    # replica.lag.max.messages (Partition.getOutOfSyncReplicas @0.8.2.2). Removed in 0.9.0 by
    # KIP-16 / KAFKA-1546 ("automated replica lag tuning").
    isr_lag_max_messages: bool = _rule(
        until="0.9.0",
        ref="KIP-16 / KAFKA-1546 (removed in 0.9.0)",
        doc="a follower more than replica.lag.max.messages behind also leaves the ISR",
    )
    # Since 0.9.0 (KIP-16) the time test is "time since the follower last caught up to the
    # leader's LEO" (Replica.lastCaughtUpTimeMs). In 0.8.x it was "time since the follower's last
    # fetch" (Replica.logEndOffsetUpdateTimeMs, the 'stuck follower' rule).
    isr_lag_time_since_caught_up: bool = _rule(
        since="0.9.0",
        ref="KIP-16 / KAFKA-1546",
        doc="lag time is measured from the last time the follower was caught up, "
        "not from its last fetch",
    )
    # KAFKA-4485 (0.10.2.0): a fetch at or beyond the leader LEO seen at the previous fetch sets
    # lastCaughtUpTimeMs := lastFetchTimeMs (Replica.updateLogReadResult @0.10.2.0).
    caught_up_previous_fetch_rule: bool = _rule(
        since="0.10.2",
        ref="KAFKA-4485",
        doc="reaching the leader LEO seen at the previous fetch counts as caught up then",
    )
    # KAFKA-4485 (0.10.2.0): the "isr-expiration" task runs every replica.lag.time.max.ms / 2
    # (ReplicaManager.startup); before, every replica.lag.time.max.ms.
    isr_shrink_interval_half_lag: bool = _rule(
        since="0.10.2",
        ref="KAFKA-4485",
        doc="the ISR shrink check runs every replica.lag.time.max.ms/2 (before: every lag time)",
    )
    # KAFKA-4485 (0.10.2.0): Partition.maybeIncrementLeaderHW also waits for replicas that are
    # caught up in time but not in the ISR; before, HW was the minimum LEO over the ISR only.
    hw_includes_caught_up_replicas: bool = _rule(
        since="0.10.2",
        ref="KAFKA-4485",
        doc="HW also waits for caught-up followers outside the ISR (about to rejoin)",
    )
    # KAFKA-7152 (2.1.0): a follower whose LEO equals the leader's is never out of sync
    # (Partition.getOutOfSyncReplicas), even if it stopped fetching.
    caught_up_when_leo_equals_leader: bool = _rule(
        since="2.1",
        ref="KAFKA-7152",
        doc="a follower whose LEO equals the leader's LEO is never removed from the ISR",
    )
    # KAFKA-7128 (2.0.1, commit 7a35211; 2.1.0, commit 70c5163): to join the ISR a follower's LEO
    # must also reach the start offset of the leader's current epoch (Partition.maybeExpandIsr).
    isr_expand_requires_epoch_start_offset: bool = _rule(
        since="2.0.1",
        ref="KAFKA-7128",
        doc="ISR expansion also needs follower LEO >= the leader epoch's start offset",
    )
    # KIP-497 (2.7.0): PendingExpandIsr / PendingShrinkIsr; HW and acks=all use the maximal ISR.
    maximal_isr: bool = _rule(
        since="2.7",
        ref="KIP-497",
        doc="HW and acks=all use the maximal ISR while an ISR change is in flight",
    )
    # KAFKA-4485 (0.10.2.0): Partition.makeLeader resets every follower's lag bookkeeping on each
    # new leader epoch, also when the leader is re-elected (it keeps the followers' LEOs then):
    # lastFetchLeaderLogEndOffset := leader LEO, lastFetchTimeMs := now, lastCaughtUpTimeMs := now
    # for ISR members and 0 for the others (Replica.resetLastCaughtUpTime @0.10.2.0 ... @3.2.0).
    # Before, a re-elected leader kept the followers' state as it was.
    reelected_leader_resets_follower_state: bool = _rule(
        since="0.10.2",
        ref="KAFKA-4485, Partition.makeLeader / Replica.resetLastCaughtUpTime",
        doc="a re-elected leader resets its followers' lastCaughtUpTimeMs (now if in the ISR, "
        "never otherwise) and lastFetchTimeMs, keeping their LEOs",
    )
    # Since 3.3.0 (commit a5f7c82, #12081, Replica.resetReplicaState with isNewLeader=false): a
    # re-elected leader sets a non-ISR follower's lastFetchTimeMs to 0 instead of now, "to ensure
    # that the follower is not brought back into the ISR before a fetch is received".
    reelected_leader_fetch_time_only_in_sync: bool = _rule(
        since="3.3",
        ref="Replica.resetReplicaState, commit a5f7c82 (#12081)",
        doc="on re-election a non-ISR follower's lastFetchTimeMs is reset to never, not now",
    )
    # Since 3.3.0 (commit a5f7c82, "Refactor kafka.cluster.Replica" #12081)
    # lastFetchLeaderLogEndOffset := max(old, leader LEO); before, it was simply assigned.
    last_fetch_leader_leo_max: bool = _rule(
        since="3.3",
        ref="Replica.updateFetchState, commit a5f7c82 (#12081)",
        doc="lastFetchLeaderLogEndOffset keeps the maximum of old and new values",
    )
    # KIP-903 / KAFKA-14617 (3.5.0, commit d5e216d; metadata.version 3.5-IV1): in KRaft a
    # follower is ISR-eligible only if the broker epoch of its last Fetch is the one the leader's
    # metadata cache holds for it (-1, a Fetch older than v15, skips the check), besides being
    # unfenced and not in controlled shutdown (Partition.isReplicaIsrEligible,
    # isBrokerEpochIsrEligible): a replica whose broker restarted meanwhile does not rejoin.
    isr_eligibility_checks_broker_epoch: bool = _rule(
        since="3.5",
        ref="KIP-903 / KAFKA-14617 (Partition.isBrokerEpochIsrEligible)",
        doc="KRaft: a follower joins the ISR only if its fetch's broker epoch matches the "
        "metadata cache's",
    )
    # Since 3.6.0 (commit 8ad0ed3, KAFKA-15021): a caught-up non-ISR replica holds HW back only
    # if it is ISR-eligible (alive / unfenced, matching broker epoch).
    caught_up_requires_isr_eligible: bool = _rule(
        since="3.6",
        ref="KAFKA-15021 (commit 8ad0ed3)",
        doc="only ISR-eligible caught-up replicas outside the ISR hold the HW back",
    )
    # KAFKA-15583 (3.7.0, part of KIP-966, commit edc7e10): the leader HW does not advance while
    # the partition is under min ISR (Partition.maybeIncrementLeaderHW).
    hw_frozen_under_min_isr: bool = _rule(
        since="3.7",
        ref="KAFKA-15583 / KIP-966",
        doc="the leader HW does not move while the ISR is below the effective min ISR",
    )
    # KAFKA-15221 (3.7.0, commit d46781d): in KRaft the leader refuses a follower fetch whose
    # broker epoch is older than the one its metadata cache holds for the follower
    # (Replica.updateFetchStateOrThrow throws NotLeaderOrFollowerException: the partition is
    # answered NOT_LEADER_OR_FOLLOWER and the fetch records nothing), so a fetch of a rebooted
    # follower's previous process cannot move its state.
    fetch_state_fences_stale_broker_epoch: bool = _rule(
        since="3.7",
        ref="KAFKA-15221 (Replica.updateFetchStateOrThrow)",
        doc="KRaft: a follower fetch from an older broker epoch is refused and records nothing",
    )
    # Same commit as hw_frozen_under_min_isr (3.7.0): effective min ISR =
    # min(min.insync.replicas, replication factor)
    # (Partition.effectiveMinIsr); before, min.insync.replicas was used as is.
    effective_min_isr_capped: bool = _rule(
        since="3.7",
        ref="KAFKA-15583",
        doc="min ISR checks use min(min.insync.replicas, number of replicas)",
    )


@dataclass(frozen=True)
class AlterPartitionRules:
    """How a leader's ISR change reaches the controller and how the controller judges it: ZooKeeper
    writes before KIP-497, then AlterIsr (AlterPartition since 3.2) from the AlterPartitionManager,
    answered by the controller."""

    # KIP-497 / KAFKA-8836 (2.7.0, IBP 2.7-IV2): the leader proposes ISR changes to the
    # controller with AlterIsr instead of writing ZooKeeper and /isr_change_notification itself.
    alter_isr: bool = _rule(
        since="2.7",
        ref="KIP-497 / KAFKA-8836",
        doc="the leader sends AlterIsr to the controller (before: writes ZooKeeper itself)",
    )
    # AlterIsr was renamed AlterPartition in 3.2.0 with KIP-704 (commit 52621613, KAFKA-13587).
    alter_partition_name: bool = _rule(
        since="3.2",
        ref="KIP-704 / KAFKA-13587",
        doc="the ISR-change RPC is named AlterPartition (before: AlterIsr)",
    )
    # AlterIsrManager @2.7.0 sent the queued ISR changes from a task run every 50 ms
    # ("send-alter-isr"); from 2.8.0 submit() sends at once when no AlterIsr is in flight, and the
    # next batch goes out as soon as the answer to the previous one arrives.
    alter_isr_sent_on_submit: bool = _rule(
        since="2.8",
        ref="AlterIsrManager @2.7.0 vs @2.8.0 (maybePropagateIsrChanges)",
        doc="an ISR change is sent to the controller at once (2.7: by a task every 50 ms)",
    )
    # 2.7-2.8: Partition.makeLeader / makeFollower called alterIsrManager.clearPending, dropping
    # the partition's queued AlterIsr item even while it was in flight. KAFKA-12686 (3.0.0) removed
    # it: the item stays until its answer arrives, and a new ISR change submitted meanwhile is not
    # attempted (OPERATION_NOT_ATTEMPTED, the partition falls back to its committed ISR).
    alter_isr_clear_pending_on_leader_and_isr: bool = _rule(   # only consulted with alter_isr
        until="3.0",
        ref="KAFKA-12686 (clearPending removed in 3.0.0)",
        doc="a LeaderAndIsr drops the partition's queued or in-flight AlterIsr item",
    )
    # KAFKA-12751 (3.0.0): an AlterIsr answer whose partition epoch equals the leader's (the
    # controller found the proposed ISR already in place) commits the pending change; before, only
    # a larger zkVersion did and the change stayed pending (Partition.handleAlterIsrResponse).
    alter_partition_accepts_equal_partition_epoch: bool = _rule(
        since="3.0",
        ref="KAFKA-12751",
        doc="an AlterPartition answer with an unchanged partition epoch commits the change",
    )
    # KAFKA-14154 / KAFKA-14144 (3.3.0): the ZK controller answers NOT_CONTROLLER when the
    # request's leader or partition epoch is ahead of its cache, FENCED_LEADER_EPOCH when the leader
    # epoch differs, accepts an already applied ISR when the request's partition epoch is not newer,
    # and answers INVALID_UPDATE_VERSION for an older partition epoch before writing. Before, it
    # only fenced an older leader epoch, accepted an identical (leader, epoch, ISR) whatever the
    # zkVersion, and otherwise wrote ZooKeeper conditionally on the request's zkVersion
    # (INVALID_UPDATE_VERSION on a bad version) (KafkaController.processAlterIsr @2.7.0-@3.2.0).
    alter_partition_validates_epochs: bool = _rule(
        since="3.3",
        ref="KAFKA-14154 / KAFKA-14144 (KafkaController.tryProcessAlterPartition)",
        doc="the controller checks the request's leader and partition epochs before writing "
        "(NOT_CONTROLLER for newer epochs)",
    )
    # KIP-841 (3.3.0): the controller refuses an AlterPartition whose new ISR holds a replica
    # that is not alive or is shutting down (INELIGIBLE_REPLICA), so a leader cannot re-admit a
    # broker that is going away on the strength of its last fetch.
    alter_partition_rejects_ineligible: bool = _rule(
        since="3.3",
        ref="KIP-841",
        doc="the controller answers INELIGIBLE_REPLICA to an ISR holding a dead or "
        "shutting-down broker",
    )
    # KIP-903 / KAFKA-14617 (3.5.0, commits 8c88cdb and d5e216d): AlterPartition v3 replaces
    # NewIsr with NewIsrWithEpochs: each proposed ISR member with the broker epoch of its last
    # fetch (the leader's own epoch for itself; -1 when unknown, and always -1 in ZooKeeper
    # mode: Partition.addBrokerEpochToIsr); the KRaft controller refuses a member whose epoch is
    # not its registration's (INELIGIBLE_REPLICA, ReplicationControlManager
    # .ineligibleReplicasForIsr).
    alter_partition_broker_epochs: bool = _rule(
        since="3.5",
        ref="KIP-903 / KAFKA-14617 (AlterPartition v3 NewIsrWithEpochs)",
        doc="AlterPartition sends each proposed ISR member with its broker epoch",
    )


@dataclass(frozen=True)
class FetchRules:
    """Replica fetching, truncation and leader epochs: the Fetch request and its answer (fetch
    sessions, fetch from follower, DivergingEpoch), the leader-epoch cache and
    OffsetsForLeaderEpoch, how a follower truncates, and which LeaderAndIsr states a partition
    takes."""

    # KIP-903 / KAFKA-14617 (3.5.0, commit 79b5f7f; metadata.version 3.5-IV1, Fetch v15): a
    # follower's Fetch carries ReplicaState (ReplicaId and ReplicaEpoch, its broker epoch:
    # RemoteLeaderEndPoint.buildFetch's brokerEpochSupplier); the leader keeps the epoch of each
    # follower's last fetch (ReplicaState.brokerEpoch). Before, -1 (no such field).
    fetch_replica_epoch: bool = _rule(
        since="3.5",
        ref="KIP-903 / KAFKA-14617 (FetchRequest v15 ReplicaState.ReplicaEpoch)",
        doc="a follower's Fetch carries its broker epoch (ReplicaState.ReplicaEpoch)",
    )
    # ReplicaManager.makeFollowers (ZooKeeper mode, 0.9.0 - 3.9): a follower whose new leader
    # the metadata cache does not list alive (metadataCache.getAliveBrokers, 3.0+ hasAliveBroker)
    # takes the `case None` branch: only the local replica / log is created; no
    # Partition.makeFollower, no truncation, no fetcher. 0.8.2 checks the LeaderAndIsr request's
    # live leaders instead (not modelled: kafkasim's controller sends none). The KRaft path
    # (applyLocalFollowersDelta) has no such check; gone with ZooKeeper in 4.0.
    follower_skipped_without_alive_leader: bool = _rule(
        since="0.9.0",
        until="4.0",
        ref="ReplicaManager.makeFollowers (case None, KAFKA-1647)",
        doc="a ZooKeeper-mode LeaderAndIsr naming a leader the metadata cache does not list "
        "alive leaves the partition as it was: no makeFollower, truncation or fetcher",
    )
    # KIP-101 (0.11.0.0, commit 0baea2a): leader-epoch cache, OffsetsForLeaderEpoch and
    # truncation by epoch. False: a new follower truncates to its own HW
    # (ReplicaManager.makeFollowers @0.10.2.0).
    leader_epoch_truncation: bool = _rule(
        since="0.11.0",
        ref="KIP-101",
        doc="followers truncate by leader epoch (before: truncate to their own HW)",
    )
    # KIP-113 (1.1.0, commit 5cc162f): a follower starts fetching at its high watermark, and an
    # OffsetsForLeaderEpoch answer of UNDEFINED_EPOCH_OFFSET truncates it to that initial fetch
    # offset. Before (0.11.0 - 1.0), ReplicaFetcherThread.maybeTruncate truncated to the
    # follower's high watermark whatever its fetch offset (ReplicaFetcherThreadTest
    # .shouldTruncateToHighWatermarkIfLeaderReturnsUndefinedOffset @0.11.0.0).
    undefined_epoch_offset_truncates_to_fetch_offset: bool = _rule(
        since="1.1",
        ref="KIP-113 (ReplicaFetcherThread.maybeTruncate)",
        doc="an undefined OffsetsForLeaderEpoch answer truncates to the initial fetch offset "
        "(before: to the follower's high watermark)",
    )
    # KIP-279 / KAFKA-6361 (2.0.0, commit 9679c44): OffsetsForLeaderEpoch returns the epoch too,
    # enabling the multi-round truncation rule (AbstractFetcherThread.getOffsetTruncationState).
    offsets_for_leader_epoch_returns_epoch: bool = _rule(
        since="2.0",
        ref="KIP-279 / KAFKA-6361",
        doc="OffsetsForLeaderEpoch answers (epoch, end offset): multi-round truncation",
    )
    # KAFKA-7347 (2.1.0, commit ebd1354): ReplicaManager.lastOffsetForLeaderEpoch answers a
    # partition this broker does not host NOT_LEADER_FOR_PARTITION when its metadata cache knows
    # it (metadataCache.contains(tp)). Before, any partition not hosted here was
    # UNKNOWN_TOPIC_OR_PARTITION (ReplicaManager @2.0.1; LeaderEpochIntegrationTest @2.0.0).
    offsets_for_leader_epoch_not_replica_not_leader: bool = _rule(
        since="2.1",
        ref="KAFKA-7347",
        doc="OffsetsForLeaderEpoch for a known partition not hosted here answers NOT_LEADER "
        "(before: UNKNOWN_TOPIC_OR_PARTITION)",
    )
    # KAFKA-6796 (2.0.0, commit acd669e): Produce, Fetch and ListOffsets for a partition this
    # broker does not host answer NOT_LEADER_FOR_PARTITION when its metadata cache knows the
    # partition (ReplicaManager.getPartitionAndLeaderReplicaIfLocal @2.0.0: "forces clients to
    # refresh metadata", e.g. after a reassignment deleted the local replica). Before, always
    # UNKNOWN_TOPIC_OR_PARTITION (@1.1.0).
    not_hosted_partition_not_leader: bool = _rule(
        since="2.0",
        ref="KAFKA-6796",
        doc="Produce / Fetch / ListOffsets for a known partition not hosted here answer "
        "NOT_LEADER (before: UNKNOWN_TOPIC_OR_PARTITION)",
    )
    # KAFKA-9198 (2.4.0, commit 876eada): ReplicaManager.stopReplica completes the delayed
    # produces and fetches of the partition (completeDelayedFetchOrProduceRequests), so they
    # answer at once; until 2.3 they stayed in their purgatories until they timed out (an
    # acks=all produce: REQUEST_TIMED_OUT after its timeout).
    # KIP-392 (2.4.0): getPartitionOrError(tp, expectLeader) answers a partition not hosted
    # here that the metadata cache knows REPLICA_NOT_AVAILABLE when the request need not reach
    # the leader (a consumer's Fetch v11+, whose client metadata lets a follower serve it; the
    # debugging tool's ListOffsets), NOT_LEADER_FOR_PARTITION otherwise; KAFKA-10223 (2.6.0)
    # answers NOT_LEADER_OR_FOLLOWER to both (ReplicaManager @2.4.0, @2.6.0).
    not_hosted_replica_not_available: bool = _rule(
        since="2.4",
        until="2.6",
        ref="KIP-392 / KAFKA-10223 (ReplicaManager.getPartitionOrError @2.4.0, @2.6.0)",
        doc="a consumer's Fetch for a known partition not hosted here answers "
        "REPLICA_NOT_AVAILABLE",
    )
    stop_replica_completes_delayed_requests: bool = _rule(
        since="2.4",
        ref="KAFKA-9198 (ReplicaManager.stopReplica @2.3.0, @2.4.0)",
        doc="StopReplica completes the partition's waiting produces and fetches at once",
    )
    # KIP-570 / KAFKA-9539 (2.6.0): StopReplica v3 carries each partition's leader epoch;
    # ReplicaManager.stopReplicas ignores a partition whose request epoch is not newer than the
    # hosted Partition's, answering FENCED_LEADER_EPOCH (the sentinels NoEpoch -1, a request
    # without epochs, and EpochDuringDelete -2, topic deletion, skip the check; @2.6.0 l.414).
    stop_replica_checks_leader_epoch: bool = _rule(
        since="2.6",
        ref="KIP-570 (ReplicaManager.stopReplicas @2.6.0)",
        doc="StopReplica with an older leader epoch than the partition's is refused "
        "FENCED_LEADER_EPOCH",
    )
    # KAFKA-13972 (3.5.0, commit 653e284): a StopReplica at the partition's own leader epoch is
    # applied (requestLeaderEpoch >= currentLeaderEpoch); before, it was FENCED_LEADER_EPOCH
    # too ("matches the current leader epoch", ReplicaManager.stopReplicas @3.4.0).
    stop_replica_accepts_equal_leader_epoch: bool = _rule(
        since="3.5",
        ref="KAFKA-13972 (ReplicaManager.stopReplicas @3.4.0, @3.5.0)",
        doc="StopReplica at the partition's current leader epoch is applied (before: "
        "FENCED_LEADER_EPOCH)",
    )
    # KIP-320 (2.1.0): CurrentLeaderEpoch in Fetch v9+ / OffsetsForLeaderEpoch v2+; the leader
    # answers FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH (Partition.checkCurrentLeaderEpoch).
    current_leader_epoch_fencing: bool = _rule(
        since="2.1",
        ref="KIP-320",
        doc="requests carry CurrentLeaderEpoch; stale or future epochs are fenced",
    )
    # KAFKA-7164 (2.0.1, commit 5152c80; 2.1.0, commit 69283b4): Partition.makeFollower returned
    # false whenever the leader id was unchanged, and ReplicaManager.makeFollowers then skipped the
    # become-follower steps (no fetcher restart, no truncation) even if the follower had missed
    # leader epochs in between (0.8.2 ... 2.0.0). Since the fix they are skipped only when the new
    # epoch is the old one or one greater ("no updates have been missed").
    follower_truncates_after_missed_epoch: bool = _rule(
        since="2.0.1",
        ref="KAFKA-7164, Partition.makeFollower",
        doc="a follower whose leader is unchanged but which missed a leader epoch restarts "
        "fetching with truncation (before: skipped whenever the leader id was the same)",
    )
    # KIP-320 / KAFKA-7395 (2.1.0, commit bcef30d): Partition.makeFollower skips the
    # become-follower steps only when leader and epoch are both unchanged, so every new leader
    # epoch restarts fetching with truncation (3.x: isNewLeaderEpoch).
    follower_truncates_on_every_new_epoch: bool = _rule(
        since="2.1",
        ref="KIP-320 / KAFKA-7395, Partition.makeFollower",
        doc="every new leader epoch restarts the follower's fetcher with truncation, also when "
        "the leader is unchanged",
    )
    # KAFKA-7415 (2.0.1, commit 18b2577; 2.1.0, commit f2dd6aa): Partition.makeLeader assigns
    # (new leader epoch, LEO) in the leader-epoch cache at once. Before (0.11.0 ... 2.0.0) the epoch
    # entered the cache only with the leader's first append (Log.appendAsLeader), so until then
    # OffsetsForLeaderEpoch for an epoch above the cached ones answered UNDEFINED_EPOCH_OFFSET and
    # the follower truncated to its high watermark.
    epoch_cache_assigned_on_become_leader: bool = _rule(
        since="2.0.1",
        ref="KAFKA-7415, Partition.makeLeader",
        doc="a new leader writes its epoch and start offset to the leader-epoch cache when it "
        "becomes leader (before: at its first append)",
    )
    # KAFKA-7415 (2.0.1, commit 18b2577; 2.1.0, f2dd6aa): LeaderEpochFileCache.assign of
    # an epoch at or below the latest one (or at a lower start offset) drops the conflicting
    # entries and appends it (truncateAndAppend); 0.11.0 - 2.0 ignored it unless epoch > latest
    # epoch and start offset >= latest start offset. The same commit made endOffsetFor of an
    # epoch below the first cached one answer (that epoch, first start offset) instead of
    # undefined (core/.../server/epoch/LeaderEpochFileCache.scala @2.0.0 / @2.1.0).
    leader_epoch_assign_truncates_conflicts: bool = _rule(
        since="2.0.1",
        ref="KAFKA-7415, LeaderEpochFileCache.assign / endOffsetFor",
        doc="assigning a non-increasing epoch entry truncates conflicting entries (before: "
        "ignored); an epoch below the first answers the first start offset (before: undefined)",
    )
    # KAFKA-10435 (2.7.0, commit 634c917): LeaderEpochFileCache rebuilds itself from
    # leader-epoch-checkpoint with checkpoint.read().foreach(assign), so a negative epoch or start
    # offset is an IllegalArgumentException and non-monotonic entries are dropped; before, the
    # file's entries were taken as they were.
    leader_epoch_cache_validates_entries: bool = _rule(
        since="2.7",
        ref="KAFKA-10435, LeaderEpochFileCache constructor / assign",
        doc="leader-epoch-checkpoint entries are re-assigned on load (negative values refused)",
    )
    # LogSegment.recover (KIP-101, 0.11+) assigns each recovered batch's leader epoch to the
    # epoch cache when it is newer than the cache's latest. KAFKA-7897 (2.2.0, commit 29802ec;
    # backported to 2.1.1, e1522e9) added "partitionLeaderEpoch > 0", so a batch of epoch 0 was
    # never recovered into the cache; KAFKA-10432 (2.7.0; backported to 2.6.1, commit d252185) made
    # it ">= 0" (0.11 - 2.1.0 compared with the empty cache's -1, so epoch 0 counted).
    recovery_skips_leader_epoch_zero: bool = _rule(
        since="2.2",
        until="2.7",
        ref="KAFKA-7897 / KAFKA-10432, LogSegment.recover",
        doc="log recovery does not assign leader epoch 0 of recovered batches to the epoch "
        "cache",
    )
    # KAFKA-8306 (2.3.0, commit 56b92a5): loading a log whose log-start-offset-checkpoint is past
    # its log end deletes every segment and restarts the log empty at the checkpointed offset
    # (Log.recoverLog; LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd since 3.0). Before,
    # the segments stayed (kafkasim then keeps the log start at the log end offset).
    log_start_past_end_deletes_segments: bool = _rule(
        since="2.3",
        ref="KAFKA-8306, LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd",
        doc="a log start offset checkpointed past the log end deletes all segments on load",
    )
    # KIP-516 (2.8.0): each log keeps its topic id in <topic>-<partition>/partition.metadata
    # (PartitionMetadataFile, written when the log is given its topic id: LogManager
    # .getOrCreateLog -> UnifiedLog.assignTopicId / initializeTopicId, read back when the log is
    # loaded). Before, logs had no topic id and no such file.
    partition_metadata_file: bool = _rule(
        since="2.8",
        ref="KIP-516, UnifiedLog.initializeTopicId / assignTopicId (PartitionMetadataFile)",
        doc="a log writes its topic id to partition.metadata and reads it back on load",
    )
    # LogManager.truncateTo rewrites the log dirs' recovery-point-offset-checkpoint. Before
    # 1.0.0 it did so after every call; KAFKA-5864 (1.0.0, commit cbef33f) writes it only when a
    # log was truncated (UnifiedLog.truncateTo answered true; checkpointRecoveryOffsetsInDir of
    # the affected logs' dirs since 1.1).
    recovery_checkpoint_only_after_truncation: bool = _rule(
        since="1.0",
        ref="KAFKA-5864, LogManager.truncateTo",
        doc="truncateTo rewrites recovery-point-offset-checkpoint only when a log was truncated",
    )
    # KAFKA-13790 (3.3.0): Partition.makeLeader / makeFollower skip a state whose partition epoch is
    # older than the one the partition already has (it may have learnt a newer one from an
    # AlterPartition answer).
    leader_and_isr_ignores_older_partition_epoch: bool = _rule(
        since="3.3",
        ref="KAFKA-13790",
        doc="makeLeader/makeFollower ignore a partition state with an older partition epoch",
    )
    # KIP-320 (2.1.0): a FENCED_LEADER_EPOCH answer (Fetch or OffsetsForLeaderEpoch) means this
    # follower's leader epoch is older than the leader's: the fetcher drops the partition and
    # waits for the LeaderAndIsr that brings the new epoch (AbstractFetcherThread
    # .onPartitionFenced @2.1.0: partitionStates.remove). Since 2.5.0 (onPartitionFenced(tp,
    # requestEpoch)) only when the epoch in the request is still the
    # partition's (markPartitionFailed); a partition whose epoch moved on meanwhile retries
    # after replica.fetch.backoff.ms.
    fenced_partition_leaves_the_fetcher: bool = _rule(
        since="2.1",
        ref="KIP-320, AbstractFetcherThread.onPartitionFenced @2.1.0",
        doc="a partition answered FENCED_LEADER_EPOCH leaves the fetcher until the next "
        "LeaderAndIsr",
    )
    fenced_partition_checks_request_epoch: bool = _rule(
        since="2.5",
        ref="AbstractFetcherThread.onPartitionFenced(tp, requestEpoch) @2.5.0",
        doc="only if the request's leader epoch is still the partition's; otherwise it retries",
    )
    # Since 2.2.0 truncateToEpochEndOffsets drops an OffsetsForLeaderEpoch answer
    # for a partition whose current leader epoch changed while the request was out (it was
    # removed and added again by a LeaderAndIsr); it asks again at its new epoch.
    epoch_answer_needs_same_leader_epoch: bool = _rule(
        since="2.2",
        ref="AbstractFetcherThread.truncateToEpochEndOffsets @2.2.0",
        doc="an OffsetsForLeaderEpoch answer is used only if the partition's leader epoch is "
        "still the one the request carried",
    )
    # KAFKA-18991 (4.1.0, commit 80d99ea): AbstractFetcherThread.processFetchRequest takes a
    # partition's answer only if the request's CurrentLeaderEpoch is still the partition's
    # (besides the fetch offset); before, an answer to a fetch sent at an older leader epoch
    # from the same offset was applied (@4.0.0 l.336).
    fetch_response_needs_same_leader_epoch: bool = _rule(
        since="4.1",
        ref="KAFKA-18991 (AbstractFetcherThread.processFetchRequest @4.0.0, @4.1.0)",
        doc="a Fetch answer is used only if the partition's leader epoch is still the one the "
        "request carried",
    )
    # KAFKA-18723 (4.1.0, commit 4a8a063): ReplicaFetcherThread.processPartitionData passes the
    # fetch state's currentLeaderEpoch to appendRecordsToFollowerOrFutureReplica, and
    # UnifiedLog.appendAsFollower keeps only the batches before the first one stamped with a
    # higher partition leader epoch (hasHigherPartitionLeaderEpoch; absent @4.0.0).
    follower_append_bounded_by_leader_epoch: bool = _rule(
        since="4.1",
        ref="KAFKA-18723 (ReplicaFetcherThread.processPartitionData, UnifiedLog"
        ".appendAsFollower @4.1.0)",
        doc="a follower appends fetched batches only up to its own leader epoch",
    )
    # KIP-461 / KAFKA-8346 (414852c7017, 2.3.0): an error processing one partition's fetched
    # data (an append the follower's log refuses: UnexpectedAppendOffsetException) removes that
    # partition from the fetcher until its next LeaderAndIsr (markPartitionFailed,
    # AbstractFetcherThread.processFetchRequest); before, it was thrown as a KafkaException and
    # the fetcher thread stopped (AbstractFetcherThread @2.2.0), which kafkasim does not model:
    # the refusal is raised.
    fetcher_marks_partition_failed_on_error: bool = _rule(
        since="2.3",
        ref="KIP-461 / KAFKA-8346 (AbstractFetcherThread.markPartitionFailed @2.3.0)",
        doc="a partition whose fetched data the follower cannot append leaves the fetcher "
        "until the next LeaderAndIsr",
    )
    # KAFKA-6975 (ca3370091f4, 2.0.0; back-ported to 1.0.2 and 1.1.1, patch releases not
    # modelled): Partition.appendRecordsToFollowerOrFutureReplica catches
    # UnexpectedAppendOffsetException and, when the follower's log is empty (LEO = log start)
    # and the batch contains the log start offset, truncateFullyAndStartAt(batch's first
    # offset) and appends again (Partition.scala:1321-1347@3.7.0); before, the fetch failed.
    follower_append_restarts_empty_log_at_batch: bool = _rule(
        since="2.0",
        ref="KAFKA-6975 (Partition.appendRecordsToFollowerOrFutureReplica @2.0.0)",
        doc="an empty follower log restarts at the first offset of a fetched batch that "
            "contains its log start offset",
    )
    # KAFKA-10554 (2.8.0, IBP 2.7-IV1): Fetch carries LastFetchedEpoch and the leader answers
    # DivergingEpoch; no separate OffsetsForLeaderEpoch round (AbstractFetcherThread).
    fetch_diverging_epoch: bool = _rule(
        since="2.8",
        ref="KAFKA-10554 (KIP-595 fetch fields)",
        doc="followers send LastFetchedEpoch; divergence is reported inside Fetch",
    )
    # KAFKA-12996 (3.0.0): with LastFetchedEpoch a FetchOffset below the leader's log start offset
    # is OFFSET_OUT_OF_RANGE even when the epochs diverge (Partition.readRecords); before, the
    # divergence was reported first.
    fetch_offset_below_log_start_before_divergence: bool = _rule(
        since="3.0",
        ref="KAFKA-12996",
        doc="a fetch below the log start offset is OFFSET_OUT_OF_RANGE before any "
        "diverging-epoch check",
    )
    # KIP-227 / KAFKA-6254 (1.1.0, IBP 1.1-IV0, Fetch v7): incremental fetch sessions. The
    # follower's ReplicaFetcherThread keeps a FetchSessionHandler (full fetch, then incremental
    # ones naming only changed partitions); the leader's FetchManager / FetchSessionCache answer
    # incremental fetches with only the partitions that have something new. Before: sessionless.
    fetch_sessions: bool = _rule(
        since="1.1",
        ref="KIP-227 / KAFKA-6254 (FetchSession.scala, FetchSessionHandler)",
        doc="follower fetches use incremental fetch sessions (only changed partitions)",
    )
    # KAFKA-9401 (3.8.0): the FetchSessionCache is split into 8 FetchSessionCacheShards of
    # max.incremental.fetch.session.cache.slots / 8 sessions each, new sessions round-robin.
    fetch_session_cache_sharded: bool = _rule(
        since="3.8",
        ref="KAFKA-9401 (FetchSessionCacheShard)",
        doc="the fetch session cache is 8 shards, each with 1/8 of the slots and its own eviction",
    )
    # KIP-392 (2.4.0): replica.selector.class, client.rack, PreferredReadReplica in Fetch v11.
    fetch_from_follower: bool = _rule(
        since="2.4",
        ref="KIP-392",
        doc="consumers may fetch from a follower (replica.selector.class, client.rack)",
    )
    # KAFKA-13767 (3.2.0): ReplicaManager.fetchMessages answers at once when a partition's answer
    # names a preferred read replica (hasPreferredReadReplica); 2.4-3.1 parked such a fetch like
    # any other with too few bytes, until MaxWaitMs (ReplicaManager @3.1.0, @3.2.0).
    preferred_read_replica_answers_at_once: bool = _rule(
        since="3.2",
        ref="KAFKA-13767 (ReplicaManager.fetchMessages hasPreferredReadReplica @3.2.0)",
        doc="a consumer fetch whose answer names a preferred read replica is answered at once",
    )
    # KAFKA-14334 (commit dbf5826, first in the 3.4.0 tag): ReplicaFetcherThread.doWork ends with
    # completeDelayedFetchRequests for the partitions whose follower HW moved
    # (UnifiedLog.maybeUpdateHighWatermark), so a consumer fetch parked at a follower (KIP-392)
    # is answered once the follower's HW has advanced. 2.4-3.3: processPartitionData only set
    # the HW (log.updateHighWatermark) and such a fetch waited for its MaxWaitMs
    # (ReplicaFetcherThread @3.3.0, @3.4.0).
    follower_hw_completes_delayed_fetch: bool = _rule(
        since="3.4",
        ref="KAFKA-14334 (ReplicaFetcherThread.completeDelayedFetchRequests @3.4.0)",
        doc="a follower whose HW advanced answers the consumer fetches parked at it",
    )
    # KAFKA-14372 (commit 9d8b4e9, first in the 3.4.0 tag): findPreferredReadReplica offers only
    # followers in the ISR (ReplicaManager @3.4.0 "Exclude replicas that are not in the ISR").
    # 2.4-3.3: any follower holding the fetch offset (ReplicaManager @2.4.0, @3.3.0).
    preferred_read_replica_isr_only: bool = _rule(
        since="3.4",
        ref="KAFKA-14372",
        doc="the leader redirects a consumer only to an in-sync follower",
    )
    # DelayedFetch.tryComplete counts, for each partition, the bytes past its fetch offset only
    # up to the partition's max bytes (math.min(positionDiff, fetchInfo.fetchSize / maxBytes),
    # 0.9.0+: DelayedFetch.scala @0.9.0.0, from KAFKA-1583's ReplicaManager refactoring, commit
    # 8983120; KAFKA-2066 only reached 0.10.2); 0.8.2 counted every byte up to the end offset.
    delayed_fetch_caps_partition_bytes: bool = _rule(
        since="0.9.0",
        ref="KAFKA-1583 (DelayedFetch.tryComplete @0.9.0.0)",
        doc="a parked fetch counts at most each partition's max bytes toward fetch.min.bytes",
    )
    # KAFKA-16452 (3.8.0): DelayedFetch.tryComplete completes a fetch whose offset is past the
    # end offset it may read to (the LEO for a follower, the HW for a consumer: "Case F, the
    # fetch operation is on a truncated leader"), checked as the fetch is parked and at every
    # wake-up. Before, with the log in one segment, such a fetch waited for MaxWaitMs
    # (DelayedFetch @3.7.0 compares segments only).
    delayed_fetch_completes_past_end_offset: bool = _rule(
        since="3.8",
        ref="KAFKA-16452 (DelayedFetch.tryComplete @3.8.0)",
        doc="a fetch whose offset is past the end offset it reads to is answered at once, "
        "not parked",
    )
    # KAFKA-5758 (1.0.0, commit e110e1c) until KAFKA-7104 (2.0.0, commit 3673ce8): when a
    # follower's fetch moved the leader's high watermark (Partition.updateReplicaLogReadResult
    # true), ReplicaManager.updateFollowerLogReadResults answered it with the leader's new HW,
    # log start and LEO (LogReadResult.updateLeaderReplicaInfo); before and after, the answer
    # carries the state read before the follower's position was recorded
    # (ReplicaManagerTest.testFetchMessagesWhenNotFollowerForOnePartition @1.1.0: HW 1; @2.0.0: 0).
    fetch_response_leader_state_after_follower_update: bool = _rule(
        since="1.0",
        until="2.0",
        ref="KAFKA-5758 / KAFKA-7104 (ReplicaManager.updateFollowerLogReadResults)",
        doc="a follower fetch that moved the leader's HW is answered with the new HW "
        "(before 1.0 and since 2.0: the HW read before the fetch)",
    )
    # KAFKA-13837 (3.3.0): a Fetch from a broker that is not an assigned replica gets an error
    # (Partition.followerReplicaOrThrow): UNKNOWN_LEADER_EPOCH when the request carries
    # CurrentLeaderEpoch, NOT_LEADER_OR_FOLLOWER otherwise. Before, the leader answered without an
    # error but with no records (ReplicaManager.updateFollowerFetchState -> withEmptyFetchInfo).
    fetch_from_non_replica_error: bool = _rule(
        since="3.3",
        ref="KAFKA-13837",
        doc="a follower fetch from a broker outside the replica set gets an error, not an "
        "empty answer",
    )
    # KIP-1023 / KAFKA-17302 (#21153, merged 2025-12): with tiered storage, an empty follower
    # starts replicating from the leader's last tiered offset instead of its local log start.
    # 4.3 comes from the fact sheet (§7c) and the merge date; not checked against a tag. Tiered
    # storage is not modelled by the simulator.
    follower_fetch_from_last_tiered_offset: bool = _rule(
        since="4.3",
        ref="KIP-1023 / KAFKA-17302 (release unverified)",
        doc="tiered storage: an empty follower fetches from the leader's last tiered offset",
    )


@dataclass(frozen=True)
class ElectionRules:
    """Leader elections and Eligible Leader Replicas (KIP-966): the KRaft controller's leader-epoch
    bumps (PartitionChangeBuilder), the ZooKeeper controller's leader recovery state (KIP-704),
    ELR availability and default, and unclean shutdown detection."""

    # KRaft: an ISR shrink bumped the leader epoch before metadata.version 3.6-IV0
    # (PartitionChangeBuilder.triggerLeaderEpochBumpForIsrShrinkIfNeeded; KAFKA-15021).
    kraft_isr_shrink_bumps_leader_epoch: bool = _rule(
        until="3.6",
        ref="KAFKA-15021",
        doc="in KRaft mode an ISR shrink also bumps the leader epoch",
    )
    # KIP-704 (3.2.0, IBP 3.2-IV0; KAFKA-13587) in ZooKeeper mode: Election.leaderForOffline
    # elects a leader from outside the ISR as ``newRecoveringLeaderAndIsr`` (isLeaderRecovery
    # Supported), so TopicPartitionStateZNode.encode writes ``"leader_recovery_state": 1`` into
    # the state znode and LeaderAndIsr carries RECOVERING; every other controller write keeps the
    # state it read. The leader (Partition.makeLeader) marks the partition RECOVERED and its
    # AlterPartition (AlterPartitionManager.buildRequest, LeaderRecoveryState set from IBP 3.2)
    # reports it; KafkaController.processAlterPartition answers INVALID_REQUEST to a RECOVERING
    # ISR of more than one replica and to RECOVERED -> RECOVERING. Before 3.2 no such field.
    # (KRaft has it from metadata.version 3.2-IV0, MetadataVersion.isLeaderRecoverySupported.)
    zk_leader_recovery_state: bool = _rule(
        since="3.2",
        ref="KIP-704 / KAFKA-13587 (Election.leaderForOffline, TopicPartitionStateZNode)",
        doc="ZooKeeper mode: an unclean election marks the partition RECOVERING (state znode "
        "leader_recovery_state 1) until its leader's AlterPartition reports RECOVERED",
    )
    # KAFKA-6526 (2.0.0, b4d8552): turning the brokers' default unclean.leader.election.enable
    # on dynamically (DynamicLogConfig.reconfigure -> KafkaController
    # .enableDefaultUncleanLeaderElection) makes the ZooKeeper controller run
    # triggerOnlinePartitionStateChange at once. Before, offline partitions waited for the next
    # broker or controller change.
    zk_unclean_election_on_default_change: bool = _rule(
        since="2.0",
        ref="KAFKA-6526 (KafkaController.processUncleanLeaderElectionEnable)",
        doc="ZooKeeper mode: turning on the brokers' default unclean.leader.election.enable "
        "retries the offline partitions' elections at once",
    )
    # KAFKA-6835 (2.1.0, 028e802): a topic config change whose unclean.leader.election.enable
    # override is true (TopicConfigHandler.processConfigChanges -> KafkaController
    # .enableTopicUncleanLeaderElection) makes the controller retry that topic's offline
    # partitions (triggerOnlinePartitionStateChange(topic)).
    zk_unclean_election_on_topic_change: bool = _rule(
        since="2.1",
        ref="KAFKA-6835 (KafkaController.processTopicUncleanLeaderElectionEnable)",
        doc="ZooKeeper mode: a topic config change with unclean.leader.election.enable=true "
        "retries the topic's offline partitions' elections at once",
    )
    # KIP-966 part 1 (4.0.0): the eligible.leader.replicas.version feature (ELRV_1) can be
    # finalized (kafka-features upgrade --feature eligible.leader.replicas.version=1); the
    # controller then keeps ELR / LastKnownElr (PartitionChangeBuilder). Off by default in 4.0
    # (docs 40/operations/eligible-leader-replicas: "not enabled by default for 4.0").
    elr_available: bool = _rule(
        since="4.0",
        ref="KIP-966 / EligibleLeaderReplicasVersion (docs 40/operations/eligible-leader-replicas)",
        doc="Eligible Leader Replicas can be enabled (feature eligible.leader.replicas.version=1)",
    )
    # 4.1.0: EligibleLeaderReplicasVersion.ELRV_1 has bootstrapMetadataVersion IBP_4_1_IV0, so a
    # cluster formatted with release version 4.1 or newer starts with ELR on (docs
    # 41/operations/eligible-leader-replicas: "ELR is enabled by default on new clusters starting
    # 4.1"). Upgraded clusters keep the level they had until an operator raises it.
    elr_enabled_by_default: bool = _rule(
        since="4.1",
        ref="KIP-966 / EligibleLeaderReplicasVersion.ELRV_1 (bootstrap IBP_4_1_IV0)",
        doc="new KRaft clusters start with Eligible Leader Replicas enabled",
    )
    # KIP-966 unclean shutdown detection, controller side. 3.8.0 (KAFKA-15586) compared
    # PreviousBrokerEpoch with the stored registration, but ReplicationControlManager acted only at
    # metadata.version 3.9-IV0 (unstable in 3.8); 3.9.0 (KAFKA-16952, commit 2fd00ce) keyed the
    # check on a new incarnation id instead. 4.0 (KAFKA-18106 #18045, KAFKA-18635 #18277:
    # ClusterControlManager.registerBroker isCleanShutdown = stored epoch == PreviousBrokerEpoch;
    # ReplicationControlManager.handleBrokerShutdown, run for every new incarnation id before its
    # RegisterBrokerRecord) removes an uncleanly restarted broker from every ISR and ELR when ELR
    # is enabled; after a clean shutdown, or with ELR off, it only takes the broker out of the
    # ISRs as a fence does ("handleBrokerShutdown"). The 4.0 release of KAFKA-18635 is taken from
    # its merge date (2025-02) and the 4.x sources; it is not checked against a 4.0.0 tag (none in
    # the mirror).
    unclean_shutdown_detection: bool = _rule(
        since="4.0",
        ref="KIP-966 / KAFKA-15586, KAFKA-18106, KAFKA-18635",
        doc="with ELR on, a broker that restarts without a matching clean-shutdown epoch leaves "
        "every ISR and ELR at registration",
    )
    # KAFKA-18940 (apache/kafka PR #19156, merged to trunk 2025-03-07 with a cherry-pick to the 4.0
    # branch asked for the same day): PartitionRegistration.electionWasClean also counts a new
    # leader taken from the previous ELR as clean, so UncleanLeaderElectionsPerSec stops counting
    # ELR elections. Whether it shipped in 4.0.0 or only in 4.0.1 is not verified against a tag;
    # the 4.0 profile has it. Before (3.9: ControllerMetricsChanges.handleTopicChange), any new
    # leader outside the previous ISR was counted.
    unclean_metric_excludes_elr: bool = _rule(
        since="4.0",
        ref="KAFKA-18940 / apache/kafka PR #19156 (PartitionRegistration.electionWasClean)",
        doc="UncleanLeaderElectionsPerSec does not count a leader elected from the ELR",
    )
    # KAFKA-19212 (apache/kafka PR #19590, merged 2025-05, so 4.1.0 by its merge date; not checked
    # against a tag): TopicDelta counts elections while it replays partition records
    # (partitionToUncleanLeaderElectionCount / partitionToElrElectionCount,
    # TopicsImageTest.testTopicDeltaElectionStatsWithEmptyImage): a record that elects a leader
    # and sets LeaderRecoveryState RECOVERING is an unclean election, a leader taken from the
    # previous ELR is an ELR election, counted in the new ControllerStats meter
    # ElectionFromEligibleLeaderReplicasPerSec (ControllerMetadataMetrics).
    election_metrics_from_records: bool = _rule(
        since="4.1",
        ref="KAFKA-19212 / apache/kafka PR #19590 (TopicDelta, ControllerMetadataMetrics)",
        doc="UncleanLeaderElectionsPerSec counts records that set RECOVERING; "
        "ElectionFromEligibleLeaderReplicasPerSec counts ELR elections",
    )
    # apache/kafka #20629 ("simplify last known elr update", 162db130f6: in 4.2.0 a18251bae0,
    # not in 4.1.0 13f70256db): PartitionChangeBuilder.maybeUpdateLastKnownLeader records the
    # old leader as LastKnownElr whenever the change leaves the partition without a leader and
    # none is recorded yet, and clears it once a leader is elected (PartitionChangeBuilderTest
    # .testEligibleLeaderReplicas_lastKnownElrShouldBePopulatedWhenNoLeader). Before, only a
    # change that emptied the ISR recorded it, so a leader lost with ineligible replicas still
    # in the ISR left LastKnownElr empty.
    last_known_leader_on_leader_loss: bool = _rule(
        since="4.2",
        ref="apache/kafka PR #20629 (PartitionChangeBuilder.maybeUpdateLastKnownLeader)",
        doc="with ELR on, the controller remembers the last known leader whenever a partition "
        "loses its leader, not only when its ISR becomes empty",
    )


@dataclass(frozen=True)
class ControllerRules:
    """The metadata mode, the controller and the broker lifecycle: ZooKeeper or KRaft, broker
    registration and heartbeats, bounced brokers, controlled shutdown."""

    # KAFKA-13858 (3.3.0, commit 76477ff): a KRaft broker in controlled shutdown
    # (ReplicaManager.beginControlledShutdown, called by BrokerServer.shutdown) stops fetching a
    # followed partition whose new state has no leader or leaves it out of the ISR
    # (applyLocalFollowersDelta); before, it moved its fetcher as usual.
    controlled_shutdown_stops_fetching: bool = _rule(
        since="3.3",
        ref="KAFKA-13858 (ReplicaManager.applyLocalFollowersDelta @3.3.0, @3.7.0)",
        doc="KRaft: in controlled shutdown a follower with no leader or out of the ISR stops "
        "fetching",
    )
    # ZooKeeper mode was removed in 4.0 (KIP-500; 4.0 upgrade notes: KRaft only).
    zookeeper_mode: bool = _rule(
        until="4.0",
        ref="KIP-500 (ZooKeeper removed in 4.0)",
        doc="ZooKeeper mode (ZK controller, sessions, znodes) is available",
    )
    # KIP-500 / KIP-631 (2.8.0, early access; production-ready in 3.3 per KIP-833): KRaft mode.
    kraft_mode: bool = _rule(
        since="2.8",
        ref="KIP-500 / KIP-631",
        doc="KRaft (quorum controller) mode is available",
    )
    # KIP-833 (3.3.0 upgrade notes, docs/upgrade.html @3.3.0: "KRaft mode is production ready for
    # new clusters"). 2.8-3.2 shipped KRaft as early access (``kraft_mode``), which the simulator
    # does not model: kafkasim.settings.modes.metadata_mode_for allows metadata_mode="kraft" only
    # where this
    # rule is on, and "zookeeper" only where ``zookeeper_mode`` is on.
    kraft_production_ready: bool = _rule(
        since="3.3",
        ref="KIP-833 (docs/upgrade.html @3.3.0)",
        doc="KRaft mode is production-ready (the simulator models KRaft from here on)",
    )
    # KAFKA-17793 (apache/kafka PR #17502, 4.0.0): the quorum controller runs its timed work as
    # fixed-rate tasks of PeriodicTaskControlManager, first scheduled one period after it
    # activates (maybeFenceStaleBroker every broker.session.timeout.ms / 8, electPreferred every
    # leader.imbalance.check.interval.seconds, electUnclean every 5 min); brokers' contact times
    # move to BrokerHeartbeatTracker. Before, each broker was fenced at its own deadline and the
    # elections were scheduled when first needed (kafkasim.control.kraft.periodic_tasks).
    periodic_controller_tasks: bool = _rule(
        since="4.0",
        ref="KAFKA-17793 / apache/kafka PR #17502 (PeriodicTaskControlManager)",
        doc="the KRaft controller fences stale brokers and retries elections as periodic tasks "
        "from its activation (before: each at its own deadline)",
    )
    # KIP-1312 / KAFKA-20395 (c274a7348f, 2026-08-03: in the 4.4 branch f86720838c, not in
    # 4.3.0 a9ce322153; 4.4 upgrade notes): the UnregisterController RPC and
    # QuorumController.unregisterController write an UnregisterControllerRecord that removes a
    # controller's registration (ClusterControlManager.unregisterController, metadata.version
    # 4.4-IV2; CONTROLLER_ID_NOT_REGISTERED for an unknown id; the active controller cannot
    # unregister itself). Before 4.4 the API does not exist (UNSUPPORTED_VERSION). Not the Raft
    # voter set: RemoveRaftVoter removes a voter, this removes the registration.
    controller_unregistration: bool = _rule(
        since="4.4",
        ref="KIP-1312 / KAFKA-20395 (QuorumController.unregisterController)",
        doc="KRaft: a controller's registration can be removed (UnregisterController, "
        "metadata.version 4.4-IV2)",
    )
    # 4.0.x only (KAFKA-18138): ClusterControlManager.activate() gave every registered broker a
    # contact time, fenced or not; from 4.1 (KAFKA-19130) only the unfenced ones.
    activate_tracks_fenced_brokers: bool = _rule(
        since="4.0",
        until="4.1",
        ref="KAFKA-18138 (4.0) / KAFKA-19130 (4.1): ClusterControlManager.activate",
        doc="a newly active KRaft controller also starts the heartbeat clock of fenced brokers",
    )
    # KAFKA-19047 (apache/kafka PR #19296, 4.1.0): a refused duplicate registration's message
    # adds that a recently restarted broker gets in once its old session expires. The PR also let
    # a broker in controlled shutdown re-register while its session lived, but KAFKA-19130 (PR
    # #19454, same release) took that condition out again: no release lets it in
    # (ClusterControlManager.registerBroker @4.1.0 13f70256db .. @4.3.0 a9ce322153).
    duplicate_registration_message_names_session_expiry: bool = _rule(
        since="4.1",
        ref="KAFKA-19047 / apache/kafka PR #19296 (ClusterControlManager.registerBroker @4.1.0)",
        doc="a refused duplicate broker registration says it resolves once the old session "
        "expires",
    )
    # KAFKA-16308 [3/N] (apache/kafka PR #16443): FeatureControlManager.updateFeatures @4.0
    # answers one ApiError -- the first feature that fails, nothing written -- and checks each
    # non-metadata.version feature's dependencies (Feature.validateVersion: ELRV_1 needs
    # metadata.version 4.0-IV1). @3.9.0 it answered an ApiError per feature (a TreeMap) and
    # wrote the FeatureLevelRecords of the features that passed, with no dependency check.
    feature_update_fails_as_a_whole: bool = _rule(
        since="4.0",
        ref="KAFKA-16308 / apache/kafka PR #16443 (FeatureControlManager.updateFeatures @4.0)",
        doc="an UpdateFeatures request fails as a whole at its first bad feature and checks "
        "feature dependencies (before: one result per feature, the good ones written)",
    )
    # KAFKA-18601 (apache/kafka PR #18845, 4.0): metadata.version starts at MINIMUM_VERSION
    # 3.3-IV3 (level 7): the controller supports no lower level and an unknown level is refused
    # with "Valid versions are from 7 to N.". @3.9.0 the controller supported levels from
    # MINIMUM_KRAFT_VERSION 3.0-IV1 but refused to set one below MINIMUM_BOOTSTRAP_VERSION
    # 3.3-IV0 ("Unable to set a metadata.version less than 3.3-IV0"; unknown: "Unknown
    # metadata.version.").
    metadata_version_floor_3_3_iv3: bool = _rule(
        since="4.0",
        ref="KAFKA-18601 / apache/kafka PR #18845 (MetadataVersion.MINIMUM_VERSION)",
        doc="the lowest metadata.version is 3.3-IV3 (before: 3.0-IV1 supported, 3.3-IV0 the "
        "lowest settable)",
    )
    # KAFKA-18979 (apache/kafka PR #19205, in 4.0 4ae681446f): FeatureControlManager.replay
    # skips a FeatureLevelRecord for kraft.version (the Raft client owns that level; such records
    # were written by mistake). @3.9.0 it was finalized like any other feature.
    kraft_version_feature_record_ignored: bool = _rule(
        since="4.0",
        ref="KAFKA-18979 / apache/kafka PR #19205 (FeatureControlManager.replay @4.0)",
        doc="the controller ignores kraft.version FeatureLevelRecords when replaying",
    )
    # KAFKA-18858 (apache/kafka PR #19040, 4.1.0): FeatureControlManager has no metadata.version
    # until a FeatureLevelRecord sets one (metadataVersion() is Optional.empty,
    # metadataVersionOrThrow raises IllegalStateException). @4.0 and before it started at the
    # Builder's metadata version (default MetadataVersion.latestProduction()). With it,
    # QuorumController's activation writes the bootstrap records when no metadata.version was
    # replayed (ActivationRecordsGenerator.generate @4.1.0), not only on an empty log
    # (LogReplayTracker.empty() @4.0).
    feature_control_metadata_version_unset_until_replayed: bool = _rule(
        since="4.1",
        ref="KAFKA-18858 / apache/kafka PR #19040 (FeatureControlManager @4.1.0)",
        doc="the controller knows no metadata.version until it replays a FeatureLevelRecord "
        "(before: it assumed the latest production level)",
    )
    # KIP-866 (QuorumController.generateActivationRecords @3.5.0; ActivationRecordsGenerator
    # .recordsForEmptyLog @3.6.0 .. @3.9.0-rc3): the first active controller of a new KRaft
    # cluster writes a ZkMigrationStateRecord NONE after the bootstrap records ("this is a
    # de-novo KRaft cluster"). 3.3 and 3.4 wrote the bootstrap records alone
    # (CompleteActivationEvent @3.4.0); 4.0 removed ZooKeeper migration
    # (ActivationRecordsGenerator @4.0 4ae681446f has no such record).
    activation_writes_zk_migration_state: bool = _rule(
        since="3.5",
        until="4.0",
        ref="KIP-866: QuorumController.generateActivationRecords @3.5.0, "
            "ActivationRecordsGenerator.recordsForEmptyLog @3.6.0-3.9.0",
        doc="a new KRaft cluster's first active controller also writes ZkMigrationStateRecord "
        "NONE",
    )
    # KAFKA-17457 (apache/kafka PR #17094, 3.9.0): ActivationRecordsGenerator.recordsForEmptyLog
    # writes that ZkMigrationStateRecord only at a bootstrap metadata.version with metadata
    # transactions (3.6-IV1, ActivationRecordsGenerator.java:91@3.9.0-rc3); 3.5 - 3.8 from 3.4-IV0
    # (isMigrationSupported). Every release's own latest metadata.version passes both.
    zk_migration_state_needs_metadata_transactions: bool = _rule(
        since="3.9",
        until="4.0",
        ref="KAFKA-17457 / apache/kafka PR #17094 (ActivationRecordsGenerator @3.9.0)",
        doc="an empty log's activation writes ZkMigrationStateRecord NONE only from "
        "metadata.version 3.6-IV1 (before: from 3.4-IV0)",
    )
    # apache/kafka PR #20705 (727aae9a95, 4.2.0): a refused metadata.version downgrade says
    # "Unsupported metadata.version downgrade from <current level> to <target level>. ..."
    # (FeatureControlManager.unsupportedMetadataDowngrade); through 4.1 "Invalid metadata.version
    # <target level>. ...".
    metadata_downgrade_error_names_levels: bool = _rule(
        since="4.2",
        ref="apache/kafka PR #20705 (FeatureControlManager.unsupportedMetadataDowngrade @4.2.0)",
        doc="a refused metadata.version downgrade names both levels",
    )
    # KIP-866 (3.4.0, ZooKeeper to KRaft migration): ZkData.ControllerZNode.encode writes
    # /controller as version 2 with a fourth field, kraftControllerEpoch (-1 for a ZooKeeper
    # controller); @3.3.0 it was version 1 with brokerid and timestamp only.
    controller_znode_v2: bool = _rule(
        since="3.4",
        ref="KIP-866, ZkData.ControllerZNode @3.4.0",
        doc="/controller is written as version 2, with kraftControllerEpoch",
    )
    # 0.9.0 (ZKCheckedEphemeral in ZkUtils.registerBrokerInZk; KafkaZkClient.CheckedEphemeral
    # since 1.1): registering /brokers/ids/<id> fails with NodeExists when the znode belongs to
    # another session -- a crashed broker restarted before its old session expired -- and
    # KafkaServer.startup shuts the process down. In 0.8.2
    # (ZkUtils.createEphemeralPathExpectConflictHandleZKBug) the broker saw its own registration,
    # backed off zookeeper.session.timeout.ms and retried until the old znode was gone.
    broker_registration_fails_on_foreign_znode: bool = _rule(
        since="0.9.0",
        ref="ZKCheckedEphemeral @0.9.0, KafkaZkClient.CheckedEphemeral",
        doc="a broker restarted while its old ZooKeeper session lives fails to start "
        "(before: it waits for the old znode to go, retrying every session timeout)",
    )
    # KIP-380 / KAFKA-7235 (2.2.0): brokers register with a broker epoch (the znode's czxid) and
    # the controller treats a re-registration with a new epoch as a failure followed by a startup
    # (KafkaController.processBrokerChange "bounced brokers"). Before, only ids that appeared or
    # vanished were noticed, so a fast restart was seen as a startup at most.
    controller_detects_bounced_brokers: bool = _rule(
        since="2.2",
        ref="KIP-380",
        doc="a restarted broker (new broker epoch) is handled as failed, then started",
    )
    # KAFKA-3143 (2.3.0, d77bac1): ReplicaStateMachine.startup moves the replicas on brokers that
    # are not live to OfflineReplica at controller failover (out of the ISRs, a dead leader's
    # partition to leader -1), before the partition state machine elects. Before, they only
    # became ReplicaDeletionIneligible: the state znodes kept dead leaders and ISR members.
    failover_takes_dead_replicas_offline: bool = _rule(
        since="2.3",
        ref="KAFKA-3143, ReplicaStateMachine.startup",
        doc="a new controller takes the replicas of dead brokers out of the ISRs at failover",
    )
    # KAFKA-5642 (1.1.0) rewrote the controller: PartitionStateMachine.leaderForControlledShutdown
    # sent the new state to the online replicas only (isReplicaOnline leaves out brokers in
    # controlled shutdown), so the shutting-down broker got no LeaderAndIsr for the partitions it
    # gave up. The 1.0 ControlledShutdownLeaderSelector (liveOrShuttingDownBrokerIds) and, from
    # 2.1.0, KAFKA-7482 (commit c7131fc, includeShuttingDownBrokers = true) send it to them too.
    controlled_shutdown_skips_shutting_down_broker: bool = _rule(
        since="1.1",
        until="2.1",
        ref="KAFKA-5642 / KAFKA-7482 (PartitionStateMachine.leaderForControlledShutdown)",
        doc="ZooKeeper mode: a controlled-shutdown election's LeaderAndIsr skips the "
        "shutting-down broker",
    )
    # KAFKA-3143 (2.3.0, d77bac1): ReplicaStateMachine's OfflineReplica transition adds an
    # UpdateMetadata (to the live or shutting-down brokers) for the partitions without leadership
    # info; before, such a partition's replica only got its StopReplica.
    offline_replica_updates_metadata_without_leader: bool = _rule(
        since="2.3",
        ref="KAFKA-3143, ReplicaStateMachine OfflineReplica (replicasWithoutLeadershipInfo)",
        doc="ZooKeeper mode: an offline replica of a partition without leadership info causes "
        "an UpdateMetadata",
    )
    # KAFKA-8237 (2.3.0, 17c8016): ReplicaDeletionIneligible may also be entered from
    # OfflineReplica (its validPreviousStates gained OfflineReplica when the topic-deletion
    # state moved into ControllerContext); before, only from ReplicaDeletionStarted (0.8.2 -
    # 2.2), so OfflineReplica -> ReplicaDeletionIneligible was refused and logged.
    offline_replica_to_deletion_ineligible: bool = _rule(
        since="2.3",
        ref="KAFKA-8237, ReplicaDeletionIneligible.validPreviousStates",
        doc="ZooKeeper mode: a replica may go from OfflineReplica to ReplicaDeletionIneligible",
    )
    # KIP-380 / KAFKA-7235 (2.2.0): the controller refuses a ControlledShutdown whose broker
    # epoch is older than the broker's registration (KafkaController.doControlledShutdown,
    # StaleBrokerEpochException -> STALE_BROKER_EPOCH).
    controlled_shutdown_checks_broker_epoch: bool = _rule(
        since="2.2",
        ref="KIP-380",
        doc="a ControlledShutdown from an older broker epoch gets STALE_BROKER_EPOCH",
    )
    # KIP-380 / KAFKA-7235 (2.2.0, commit 2155c6d; LeaderAndIsr v2, UpdateMetadata v5,
    # StopReplica v1 from IBP 2.2-IV0): the controller puts its view of the receiver's broker
    # epoch (ControllerContext.liveBrokerIdAndEpochs, the czxid of /brokers/ids/<id>) in every
    # LeaderAndIsr, UpdateMetadata and StopReplica, and the broker refuses one older than its
    # own (KafkaApis.isBrokerEpochStale: STALE_BROKER_EPOCH, nothing applied), so a request meant
    # for the broker's previous process is dropped. Before, the field did not exist (-1,
    # AbstractControlRequest.UNKNOWN_BROKER_EPOCH: never stale).
    control_requests_carry_broker_epoch: bool = _rule(
        since="2.2",
        ref="KIP-380 / KAFKA-7235 (KafkaApis.isBrokerEpochStale)",
        doc="ZooKeeper mode: LeaderAndIsr, UpdateMetadata and StopReplica carry the broker "
        "epoch; an older one is refused with STALE_BROKER_EPOCH",
    )
    # KAFKA-9839 (2.6.0, commit bd17085): a control request with a broker epoch newer than the
    # broker's own is accepted (the controller may learn the new registration first). 2.2-2.5
    # threw IllegalStateException("Epoch ... larger than current broker epoch"), which
    # KafkaApis.handleError answers with the request's error response, UNKNOWN_SERVER_ERROR.
    control_requests_accept_newer_broker_epoch: bool = _rule(
        since="2.6",
        ref="KAFKA-9839 (KafkaApis.isBrokerEpochStale)",
        doc="a control request from a newer broker epoch is accepted (before: "
        "UNKNOWN_SERVER_ERROR)",
    )
    # KIP-112 (1.0.0, UpdateMetadataRequest v4 from IBP 1.0-IV0): each partition state in an
    # UpdateMetadata names its offline replicas, the assigned replicas the controller does not
    # count online (ControllerContext.isReplicaOnline: dead, or in controlled shutdown); the
    # brokers' metadata caches keep them (MetadataCache.getPartitionInfo().offlineReplicas).
    update_metadata_offline_replicas: bool = _rule(
        since="1.0",
        ref="KIP-112 (ControllerBrokerRequestBatch.addUpdateMetadataRequestForBrokers @1.0.0)",
        doc="ZooKeeper mode: UpdateMetadata names each partition's offline replicas",
    )
    # KIP-966 part 1 / KAFKA-15582 (3.7.0, commit 14029e2): BrokerRegistrationRequest v3 carries
    # PreviousBrokerEpoch, the broker epoch the broker wrote into .kafka_cleanshutdown when it last
    # stopped cleanly (-1 after a crash). In 3.7 the controller only logged a mismatch
    # (ClusterControlManager.registerBroker "TODO(KIP-966)"); see unclean_shutdown_detection.
    broker_registration_previous_epoch: bool = _rule(
        since="3.7",
        ref="KIP-966 / KAFKA-15582, BrokerRegistrationRequest v3 PreviousBrokerEpoch",
        doc="a restarting KRaft broker sends the broker epoch of its last clean shutdown",
    )
    # KAFKA-14392 (#12856, 3.4.0; back-ported to 3.3.2, which the 3.3 profile does not model):
    # BrokerServer builds the broker's "heartbeat" NodeToControllerChannelManager with
    # retryTimeoutMs = broker.session.timeout.ms / 2, and NodeToControllerChannelManagerImpl caps
    # the NetworkClient's request timeout at it (min(controller.socket.timeout.ms, retry)). Before
    # (BrokerToControllerChannelManager @3.3.0): retry timeout broker.session.timeout.ms, request
    # timeout controller.socket.timeout.ms (30 s), so a heartbeat lost to a partition held the
    # next one back for 30 s, past the session timeout and any controller failover.
    broker_heartbeat_timeout_half_session: bool = _rule(
        since="3.4",
        ref="KAFKA-14392 (BrokerServer: brokerSessionTimeoutMs / 2)",
        doc="a KRaft broker's heartbeat or registration RPC times out after "
        "broker.session.timeout.ms / 2 (before: controller.socket.timeout.ms)",
    )
    # KAFKA-15950 (#14903, 3.8.0): BrokerLifecycleManager keeps one registration or heartbeat in
    # flight (communicationInFlight): a communication due meanwhile -- the wantShutDown
    # heartbeat of beginControlledShutdown -- waits for the answer and then goes at once
    # (nextSchedulingShouldBeImmediate). Before, it was sent at once as a second request.
    broker_heartbeats_serialized: bool = _rule(
        since="3.8",
        ref="KAFKA-15950 (BrokerLifecycleManager.CommunicationEvent)",
        doc="a KRaft broker sends its next heartbeat only once the one in flight is answered",
    )
    # KAFKA-19432 (#20046, merged after 2025-08-21, i.e. after the 4.1 branch): KafkaConfig logs
    # an ERROR when broker.heartbeat.interval.ms is more than half of broker.session.timeout.ms;
    # the broker still starts. 4.2 is inferred from the merge date (not checked against a tag).
    broker_heartbeat_interval_checked: bool = _rule(
        since="4.2",
        ref="KAFKA-19432 (KafkaConfig.validateValues)",
        doc="the broker logs an error if broker.heartbeat.interval.ms > "
        "broker.session.timeout.ms / 2",
    )
    # KIP-516 (2.8.0) in ZooKeeper mode (KafkaConfig.usesTopicId: inter.broker.protocol.version
    # >= 2.8-IV0, the release's default): AdminZkClient.writeTopicPartitionAssignment puts a new
    # topic's random id in its znode (TopicZNode.encode "topic_id"), the controller keeps the
    # ids in ControllerContext.topicIds (KafkaController.processTopicIds gives a topic without
    # one an id, KafkaZkClient.setTopicIds), LeaderAndIsr v5 carries them (topicIds) and the
    # broker checks them against its logs (ReplicaManager.becomeLeaderOrFollower:
    # INCONSISTENT_TOPIC_ID) and writes partition.metadata. Before, no ids (LeaderAndIsr v4).
    zk_topic_ids: bool = _rule(
        since="2.8",
        ref="KIP-516 (KafkaController.processTopicIds, LeaderAndIsrRequest v5 @2.8.0)",
        doc="ZooKeeper mode: the controller gives each topic an id (znode topic_id) and "
        "LeaderAndIsr carries it; brokers check it and write partition.metadata",
    )
    # KAFKA-12426 (3.0.0, commit 40f001c) and KAFKA-13132 (3.0.0, 168d5c3 / 93c68fe): a
    # LeaderAndIsr's topic id reaches the log when makeLeader / makeFollower create it
    # (Partition.createLogIfNotExists(topicId), LogManager.getOrCreateLog(topicId)), and a
    # request at the partition's current leader epoch gives an id to a log without one (answer
    # NONE). In 2.8 only Partition.checkOrSetTopicId set it, before the epoch check and only on
    # a log the Partition already held: a partition's first LeaderAndIsr creates its log
    # without an id, which the next LeaderAndIsr for it gives (Partition.scala @2.8.0).
    leader_and_isr_creates_log_with_topic_id: bool = _rule(
        since="3.0",
        ref="KAFKA-12426, KAFKA-13132 (Partition.createLogIfNotExists @3.0.0)",
        doc="ZooKeeper mode: a LeaderAndIsr's topic id is given to the log it creates and to "
        "an existing log without one at the same leader epoch (2.8: only to a log the "
        "Partition already held)",
    )
    # Stray replicas: a log on a broker that the metadata no longer lists as a replica (the
    # partition was reassigned away, or its topic deleted, while the broker was down). KRaft
    # 3.0-3.6: BrokerMetadataPublisher's first publish applies the delta, then
    # finishInitializingReplicaManager deletes them (findStrayPartitions ->
    # ReplicaManager.deleteStrayReplicas -> stopPartitions(delete=true): renamed ``-delete``,
    # gone after file.delete.delay.ms; BrokerMetadataPublisher.scala:417@3.3.0). KAFKA-14616
    # (3.7.0, LogManager.deleteStrayKRaftReplicas, BrokerMetadataPublisher.scala:298@3.7.0;
    # since KAFKA-16234, 3.8.0, inside LogManager.loadLog's isStray, LogManager.scala:359
    # @3.8.0): they are found before ReplicaManager starts, renamed
    # ``topic-partition.uniqueId-stray`` (LocalLog.logStrayDirName) and kept on disk, never
    # deleted by the broker (LogManager.strayLogs; the same at 4.4, LogManager.java:546
    # @f86720838c). ZooKeeper mode has no such step (before KAFKA-15605: kept and loaded).
    kraft_stray_logs_renamed: bool = _rule(
        since="3.7",
        ref="KAFKA-14616 (LogManager.deleteStrayKRaftReplicas @3.7.0), KAFKA-16234",
        doc="KRaft: a starting broker renames its stray logs -stray before ReplicaManager "
        "starts and keeps them (3.3-3.6: deleted after the first metadata publish)",
    )
    # KAFKA-16814 (3.9.0, LogManager.isStrayKraftReplica, LogManager.scala:1617@3.9.0-rc3): a
    # log without a topic id (no partition.metadata: nothing was appended before it was lost)
    # is stray. Before, findStrayPartitions / isStrayKraftReplica threw "does not have a topic
    # ID, which is not allowed when running in KRaft mode": 3.3-3.6 the publishing fault
    # handler logged it and no stray was deleted; 3.7-3.8 the fatal fault handler ("Error
    # starting LogManager") stopped the broker.
    stray_log_without_topic_id_is_stray: bool = _rule(
        since="3.9",
        ref="KAFKA-16814 (LogManager.isStrayKraftReplica @3.9.0-rc3)",
        doc="KRaft: a log without a topic id is a stray replica (before: an error)",
    )
    # KAFKA-15605 (3.7.0, ReplicaManager.becomeLeaderOrFollower, ReplicaManager.scala:1925
    # @3.9.0-rc3): a ZooKeeper-mode broker with zookeeper.metadata.migration.enable that gets a
    # LeaderAndIsr of type FULL from a KRaft controller finds the logs the request does not
    # list, or lists with another topic id (LogManager.findStrayReplicas), and moves them aside
    # (updateStrayLogs: stopped, renamed -stray, kept). Only a KRaft controller of a migration
    # sends FULL (kafkasim runs no migration: its ZooKeeper controller sends type 0). Gone with
    # ZooKeeper in 4.0.
    full_leader_and_isr_finds_strays: bool = _rule(
        since="3.7",
        until="4.0",
        ref="KAFKA-15605 (ReplicaManager.updateStrayLogs @3.7.0)",
        doc="ZooKeeper mode during a migration: a full LeaderAndIsr from the KRaft controller "
        "moves the logs it does not list aside (-stray)",
    )


@dataclass(frozen=True)
class RaftRules:
    """KRaft's Raft, version by version (raft/src/main/java/org/apache/kafka/raft): the options
    KafkaRaftClient takes (kafkasim.control.kraft.raft), each a Kafka change."""

    # KIP-853 (3.9.0): dynamic KRaft quorums: controller.quorum.bootstrap.servers (QuorumConfig
    # @3.9.0-rc3), kraft.version 1, kafka-metadata-quorum add-controller / remove-controller.
    kraft_dynamic_quorum: bool = _rule(
        since="3.9",
        ref="KIP-853 (QuorumConfig.QUORUM_BOOTSTRAP_SERVERS_CONFIG @3.9.0)",
        doc="KRaft controller quorums can change membership (controller.quorum.bootstrap.servers)",
    )
    # KIP-996 (4.0.0; Vote RPC v2 PreVote field KAFKA-17641 #17807, ProspectiveState
    # KAFKA-17642 #18240, merged for 4.0): a voter whose fetch timeout expires first becomes
    # Prospective and sends PreVotes (Vote with PreVote=true) without bumping the epoch; only a
    # majority of granted PreVotes makes it a Candidate. A follower that is still fetching from the
    # leader denies PreVotes, so a partitioned voter cannot disrupt the quorum on its return.
    kraft_pre_vote: bool = _rule(
        since="4.0",
        ref="KIP-996 / KAFKA-17641, KAFKA-17642",
        doc="KRaft voters run a Pre-Vote round (Prospective state) before a real election",
    )
    # KAFKA-15489 (3.7.0): a leader that hears no Fetch from a majority of voters within
    # 1.5 x controller.quorum.fetch.timeout.ms resigns (LeaderState check quorum).
    raft_check_quorum: bool = _rule(
        since="3.7",
        ref="KAFKA-15489",
        doc="a KRaft leader without fetches from a majority for 1.5 x fetch timeout resigns",
    )
    # KAFKA-16536 (3.9.0): the leader re-sends BeginQuorumEpoch periodically as a heartbeat.
    raft_begin_quorum_epoch_heartbeat: bool = _rule(
        since="3.9",
        ref="KAFKA-16536",
        doc="the KRaft leader re-sends BeginQuorumEpoch to voters as a heartbeat",
    )
    # KAFKA-17067 (3.9.0) folded the Voted state into Unattached (UnattachedState votedKey).
    raft_voted_state: bool = _rule(
        until="3.9",
        ref="KAFKA-17067",
        doc="QuorumState has a separate Voted state (before 3.9: Unattached with a vote since)",
    )
    # KAFKA-18345 (4.1.0): a Candidate that loses its election waits out its election timeout
    # before backing off to Prospective (4.1 release notes; PR merge date, unverified by tag).
    raft_election_loss_waits_timeout: bool = _rule(
        since="4.1",
        ref="KAFKA-18345",
        doc="a KRaft candidate that lost its election waits its election timeout",
    )
    # KAFKA-14145 / KIP-1166 (apache/kafka PR #19800, 4.1.0): Fetch v18 carries the fetcher's HW
    # (tagged HighWatermark, default Long.MAX_VALUE = not supported); KafkaRaftClient answers a
    # Fetch at once when that HW is behind its own and completes every parked fetch when its HW
    # moves, so followers learn the metadata HW without waiting for new records. The PR touches
    # the raft module only: data partitions still park a follower's Fetch for
    # replica.fetch.wait.max.ms (tests/test_kafka_4x_line.py).
    raft_fast_hwm_replication: bool = _rule(
        since="4.1",
        ref="KAFKA-14145",
        doc="the KRaft leader completes parked fetches when its high watermark moves",
    )
    # KAFKA-16538 (apache/kafka PR #19416, 4.1.0): on a static quorum (kraft.version 0) every
    # voter sends UpdateRaftVoter to each new leader (KafkaRaftClient.shouldSendUpdateVoteRequest:
    # ``!state.hasUpdatedLeader()``) and the leader keeps the voter's directory id and
    # kraft.version range in memory (UpdateVoterHandler: ``leaderState.volatileVoters()``,
    # answer NONE), which the kraft.version upgrade needs; the voter stops on NONE or
    # UNSUPPORTED_VERSION (handleUpdateVoterResponse: ``setHasUpdatedLeader``). Before (3.9, 4.0:
    # UpdateVoterHandler @3.9.0) a kraft.version 0 leader answers UNSUPPORTED_VERSION and the
    # voters of a static quorum never send it.
    # KAFKA-16926 (6b187e9ff9; in 4.2.0 a18251bae0, not in 4.1.0): the leader's BeginQuorumEpoch
    # heartbeat (every controller.quorum.fetch.timeout.ms / 2) goes only to the voters that did
    # not fetch within the last period (LeaderState.needToSendBeginQuorumRequests).
    raft_begin_quorum_epoch_skips_fetching_voters: bool = _rule(
        since="4.2",
        ref="KAFKA-16926",
        doc="the KRaft leader's BeginQuorumEpoch heartbeat skips voters that fetched recently",
    )
    # KAFKA-16525 (b4f17a01e4, 3.8.0: the dynamic KRaft network manager): RequestManager
    # .hasAnyInflightRequest and backoffBeforeAvailableBootstrapServer drop the connections
    # whose request timed out or whose backoff is over, so a late response to such a request is
    # no longer expected (KafkaRaftClient ignores it). At 3.7.0 a connection is never removed.
    raft_request_manager_forgets_stale_connections: bool = _rule(
        since="3.8",
        ref="KAFKA-16525",
        doc="the KRaft client forgets a timed-out request's connection; its late response is "
            "ignored",
    )
    raft_update_voter_static_quorum: bool = _rule(
        since="4.1",
        ref="KAFKA-16538",
        doc="voters of a static KRaft quorum tell each new leader their directory id "
            "(UpdateRaftVoter, kept in the leader's memory)",
    )
    # KAFKA-16538 (PR #19416, 4.1.0) again: FollowerState.updateVoterPeriodMs, the wait before a
    # voter sends UpdateRaftVoter (and an auto-joining observer AddRaftVoter / RemoveRaftVoter),
    # is one controller.quorum.fetch.timeout.ms from 4.1.0 (13f70256db), three at 4.0
    # (4ae681446f) and 3.9.
    raft_update_voter_period_one_fetch_timeout: bool = _rule(
        since="4.1",
        ref="KAFKA-16538 (FollowerState.updateVoterPeriodMs @4.1.0)",
        doc="a KRaft follower waits one fetch timeout, not three, before updating its voter "
            "entry",
    )
    # KAFKA-17030 (PR #17352, e979fce94e, 4.0.0; absent at 3.9.0): an Unattached voter fetches
    # from a random bootstrap server while its election timer runs, and a follower voter whose
    # Fetch to the leader timed out or failed sends the next one to another bootstrap server
    # (KafkaRaftClient.pollUnattachedCommon, pollFollowerAsVoter -> maybeSendFetchToBestNode).
    # KAFKA-19354 (PR #19854, 7339d65b27; in 4.2.0 a18251bae0, not in 4.1.0 13f70256db):
    # KafkaRaftClient.pollFollowerAsObserver always calls maybeSendFetchToBestNode; before, an
    # observer whose fetch timeout had expired sent every Fetch to a bootstrap server, even
    # after a response had named the leader again.
    raft_observer_fetches_from_best_node: bool = _rule(
        since="4.2",
        ref="KAFKA-19354",
        doc="a KRaft observer past its fetch timeout fetches from the leader again once it can",
    )
    # KAFKA-16532 (apache/kafka PR #16518, 7495e70365, in 3.9.0): KafkaRaftClient
    # .tryCompleteFetchRequest answers a Fetch from offset 0 with the latest snapshot id
    # (FETCH_SNAPSHOT) whenever the leader has a snapshot other than the bootstrap 0-0 one
    # ("always more efficient" than the log); before, only a fetch below the log start offset
    # (ReplicatedLog.validateOffsetAndEpoch) gets one.
    raft_fetch_snapshot_for_empty_log: bool = _rule(
        since="3.9",
        ref="KAFKA-16532 (KafkaRaftClient.tryCompleteFetchRequest @3.9.0)",
        doc="a KRaft leader holding a metadata snapshot sends a replica with an empty log "
            "(fetch offset 0) to FetchSnapshot",
    )
    raft_unattached_voters_fetch: bool = _rule(
        since="4.0",
        ref="KAFKA-17030",
        doc="an Unattached KRaft voter fetches from the bootstrap servers to find the leader",
    )

    # KAFKA-17973 (apache/kafka PR #17728, cherry-picked to 4.0 as ba01ad0f0c; not in 3.9):
    # VoterSetHistory.addAt only logs when a voter set read from the log has no overlapping
    # majority with the previous one from the log (several voters may change at once); 3.9's
    # addAt throws IllegalArgumentException (VoterSetHistory @3.9 branch, @4.0 4ae681446f).
    raft_voter_set_history_allows_non_overlapping: bool = _rule(
        since="4.0",
        ref="KAFKA-17973 (VoterSetHistory.addAt @4.0)",
        doc="the KRaft voter-set history accepts a voter set without an overlapping majority "
            "with the previous one",
    )


@dataclass(frozen=True)
class ToolRules:
    """Admin tools and what they print: kafka-topics --describe, the leader-election tools,
    partition reassignment through the Admin API, error names."""

    # KIP-455 (2.4.0): the AlterPartitionReassignments / ListPartitionReassignments APIs and
    # the ZK controller's adding/removing-replicas reassignment (KafkaController
    # .onPartitionReassignment @2.4.0; the topic znode's adding_replicas / removing_replicas).
    alter_partition_reassignments: bool = _rule(
        since="2.4",
        ref="KIP-455",
        doc="partition reassignment through Admin.alterPartitionReassignments",
    )
    # KAFKA-19975 (apache/kafka #21114, 3d267d4536: in 4.3.0 a9ce322153, not in 4.2.0
    # a18251bae0): the KRaft controller's PartitionReassignmentReplicas.maybeCompleteReassignment
    # completes a reassignment once the replicas being added are in the ISR; only a reassignment
    # that removes more replicas than it adds still waits for every target replica
    # (PartitionReassignmentReplicasTest.testCanCompleteReassignmentIfIsrDoesNotHaveAnExisting
    # TargetReplica @4.3.0). Before, an out-of-sync replica kept by the reassignment blocked it.
    reassignment_waits_for_adding_replicas_only: bool = _rule(
        since="4.3",
        ref="KAFKA-19975 (PartitionReassignmentReplicas.maybeCompleteReassignment)",
        doc="KRaft: a reassignment completes once its adding replicas are in the ISR (every "
        "target replica only when it removes more replicas than it adds)",
    )
    # KIP-1066 / KAFKA-19774 (a45d36ca5d, in 4.3.0 a9ce322153, not in 4.2.0): the two
    # InvalidReplicationFactorException messages of StripedReplicaPlacer also name brokers whose
    # log directories are all cordoned ("All brokers are currently fenced, or have all their log
    # directories cordoned." / "... broker(s) are registered or some brokers have all their log
    # directories cordoned."). kafkasim models no JBOD directories: only the words change.
    placement_messages_name_cordoned_dirs: bool = _rule(
        since="4.3",
        ref="KIP-1066 (KAFKA-19774, StripedReplicaPlacer)",
        doc="KRaft: a topic the placer refuses says brokers may have all their log "
        "directories cordoned",
    )
    # KAFKA-18786 (apache/kafka #20674, in 4.2.0 a18251bae0, not in 4.1.0 13f70256db):
    # ``kafka-features describe --node-id N`` sends the ApiVersions request to that node
    # (DescribeFeaturesOptions.nodeId; FeatureCommand.handleDescribe refuses a negative id);
    # before, the tool asked an arbitrary broker (or, with --bootstrap-controller, controller).
    features_describe_node_id: bool = _rule(
        since="4.2",
        ref="KAFKA-18786 (FeatureCommand --node-id, DescribeFeaturesOptions.nodeId)",
        doc="kafka-features describe --node-id picks the node that answers",
    )
    # KAFKA-19941 (apache/kafka #21072, in 4.3.0 a9ce322153, not in 4.2.0): kafka-features
    # describe pads its columns ("Feature: %-40s  SupportedMinVersion: %-15s ..."); 3.3-4.2
    # separated them with tabs (FeatureCommand.scala @3.3.2, FeatureCommand.java @4.2.0:244).
    features_describe_padded_columns: bool = _rule(
        since="4.3",
        ref="KAFKA-19941 (FeatureCommand.handleDescribe)",
        doc="kafka-features describe pads its columns instead of separating them with tabs",
    )
    # KIP-460 (2.4.0): bin/kafka-leader-election.sh (preferred and unclean elections).
    leader_election_tool: bool = _rule(
        since="2.4",
        ref="KIP-460",
        doc="kafka-leader-election.sh exists (--election-type preferred|unclean)",
    )
    # bin/kafka-preferred-replica-election.sh existed until 3.0.0 removed it.
    preferred_replica_election_tool: bool = _rule(
        until="3.0",
        ref="bin/ @2.8.0 vs @3.0.0",
        doc="kafka-preferred-replica-election.sh exists",
    )
    # kafka-topics --describe summary line: "Topic:foo\tPartitionCount:3" before 2.4.0,
    # "Topic: foo\tPartitionCount: 3" since (TopicCommand.TopicDescription @2.4.0).
    describe_space_after_colon: bool = _rule(
        since="2.4",
        ref="TopicCommand @2.4.0",
        doc="kafka-topics --describe summary line has a space after each colon",
    )
    # Before 2.4.0 the --zookeeper describe path printed the raw leader from the partition state
    # znode, so an offline partition showed "Leader: -1" (TopicCommand/ZkUtils @0.8.2.2..2.3.0;
    # 'none' only when the znode was missing). Since 2.4.0 it prints "Leader: none".
    describe_leader_minus_one: bool = _rule(
        until="2.4",
        ref="TopicCommand (ZooKeeper path) before 2.4.0",
        doc="kafka-topics --describe prints 'Leader: -1' for an offline partition",
    )
    # kafka-topics --describe counts ReplicationFactor as replicas - adding while a reassignment
    # still has removing replicas (TopicCommand.getReplicationFactor @2.5.0).
    describe_rf_excludes_adding: bool = _rule(
        since="2.5",
        ref="TopicCommand.getReplicationFactor @2.5.0",
        doc="kafka-topics --describe: ReplicationFactor = replicas - adding while reassigning",
    )
    # Since 2.6.0 kafka-topics --describe prints "Adding Replicas:" / "Removing Replicas:" for a
    # partition being reassigned, and an adding-only reassignment also counts as in progress
    # for the ReplicationFactor (TopicCommand @2.6.0 isReassignmentInProgress).
    describe_reassignment_columns: bool = _rule(
        since="2.6",
        ref="TopicCommand @2.6.0",
        doc="kafka-topics --describe shows Adding/Removing Replicas during a reassignment",
    )
    # KIP-516 (2.8.0): topic IDs; kafka-topics --describe prints TopicId.
    describe_topic_id: bool = _rule(
        since="2.8",
        ref="KIP-516",
        doc="kafka-topics --describe prints TopicId",
    )
    # 3.8.0: kafka-topics --describe prints "Elr:" and "LastKnownElr:" (TopicCommand @3.8.0).
    describe_elr_columns: bool = _rule(
        since="3.8",
        ref="TopicCommand @3.8.0 (KIP-966)",
        doc="kafka-topics --describe prints Elr and LastKnownElr columns",
    )
    # KAFKA-10223 (2.6.0, cherry-picked as f221a2e): error code 6 NOT_LEADER_FOR_PARTITION was
    # renamed NOT_LEADER_OR_FOLLOWER (Errors.java @2.6.0). Not KIP-392.
    error_not_leader_or_follower: bool = _rule(
        since="2.6",
        ref="KAFKA-10223",
        doc="error 6 is named NOT_LEADER_OR_FOLLOWER (before: NOT_LEADER_FOR_PARTITION)",
    )
    # KAFKA-14596 (3.7.0): TopicCommand moved to tools (Java). Its checkInvalidArgs forbids the
    # four partition report options only with --topics-with-overrides, so several combine and
    # a partition matching any of them is printed (DescribeOptions.shouldPrintTopicPartition).
    # The Scala TopicCommand (0.8.2-3.6) refused each with the others ("Option ... can't be
    # used with option ...").
    describe_report_options_combine: bool = _rule(
        since="3.7",
        ref="KAFKA-14596, TopicCommand.TopicCommandOptions.checkInvalidArgs @3.7.0",
        doc="kafka-topics --describe takes several partition report options at once "
        "(before: each alone)",
    )
    # --under-min-isr-partitions (KIP-351, KAFKA-7236) and --at-min-isr-partitions (KIP-427,
    # KAFKA-7904) came in 2.3.0 (TopicCommand @2.3.0); before, joptsimple rejected them.
    describe_min_isr_filters: bool = _rule(
        since="2.3",
        ref="KIP-351 / KAFKA-7236, KIP-427 / KAFKA-7904 (TopicCommand @2.3.0)",
        doc="kafka-topics --describe has --under-min-isr-partitions and --at-min-isr-partitions",
    )
    # 2.3.0's --zookeeper describe path (the one kafkasim models before 2.4, see
    # describe_leader_minus_one) passed minIsrCount = 0 ("Not supported with the --zookeeper
    # option"). From 2.4.0 the AdminClient path compares with the topic's min.insync.replicas
    # and counts a partition without leader as under min ISR (PartitionDescription
    # .hasUnderMinIsrPartitions @2.4.0, 211745d).
    describe_min_isr_filters_read_config: bool = _rule(
        since="2.4",
        ref="TopicCommand.PartitionDescription @2.4.0 (211745d)",
        doc="the min-ISR report options compare with min.insync.replicas and list leaderless "
        "partitions as under min ISR (2.3's --zookeeper path compared with 0)",
    )
    # Since 2.4.0 (the AdminClient path, see describe_leader_minus_one) kafka-topics --describe
    # prints the topics in the order of DescribeTopicsResult.allTopicNames(): a HashMap filled
    # from a copy of the HashMap of futures KafkaAdminClient.describeTopics keyed by the sorted
    # names, so in HashMap order, not sorted. The --zookeeper path looped over the sorted names.
    describe_topics_in_admin_result_order: bool = _rule(
        since="2.4",
        ref="TopicCommand.AdminClientTopicService.describeTopic @2.4.0, KafkaAdminClient"
        ".describeTopics, DescribeTopicsResult.all",
        doc="kafka-topics --describe prints topics in HashMap order (before: sorted by name)",
    )
    # KAFKA-7139 (2.1.0): kafka-topics --list / --describe --exclude-internal.
    describe_exclude_internal: bool = _rule(
        since="2.1",
        ref="KAFKA-7139 (TopicCommand @2.1.0)",
        doc="kafka-topics --describe has --exclude-internal",
    )


@dataclass(frozen=True)
class MetricRules:
    """Which JMX MBeans a release registers and how it computes them: ReplicaManager's and
    Partition's gauges and meters, the controllers' KafkaController gauges (fact sheet §12)."""

    # KIP-96 / KAFKA-4458 (0.10.2.0): the per-partition InSyncReplicasCount and ReplicasCount
    # gauges (kafka.cluster:type=Partition); before, only UnderReplicated.
    partition_replica_count_gauges: bool = _rule(
        since="0.10.2",
        ref="KIP-96 / KAFKA-4458 (Partition @0.10.2.0)",
        doc="Partition gauges InSyncReplicasCount and ReplicasCount",
    )
    # KIP-143 / KAFKA-5135 (0.11.0.0): ReplicaManager's FailedIsrUpdatesPerSec meter.
    failed_isr_updates_meter: bool = _rule(
        since="0.11.0",
        ref="KIP-143 / KAFKA-5135 (ReplicaManager @0.11.0.0)",
        doc="ReplicaManager meter FailedIsrUpdatesPerSec",
    )
    # KIP-164 / KAFKA-5341 (1.0.0): ReplicaManager's UnderMinIsrPartitionCount and the
    # per-partition UnderMinIsr gauge.
    under_min_isr_metrics: bool = _rule(
        since="1.0",
        ref="KIP-164 / KAFKA-5341 (ReplicaManager, Partition @1.0.0)",
        doc="gauges UnderMinIsrPartitionCount (ReplicaManager) and UnderMinIsr (Partition)",
    )
    # KAFKA-5461 (1.0.0): the ZooKeeper controller's GlobalTopicCount and GlobalPartitionCount
    # (the active controller's allTopics and partitionLeadershipInfo sizes, 0 elsewhere).
    zk_global_counts: bool = _rule(
        since="1.0",
        ref="KAFKA-5461 (KafkaController.updateMetrics @1.0.0)",
        doc="ZooKeeper mode: KafkaController gauges GlobalTopicCount and GlobalPartitionCount",
    )
    # KAFKA-6753 (2.1.0, 5b25d82): the ZooKeeper controller's OfflinePartitionsCount counts the
    # partitions in the partition state machine's OfflinePartition state (updated on each state
    # transition, ControllerContext.updatePartitionStateMetrics since 2.3). Before, updateMetrics
    # counted the partitions whose cached leader is not a live or shutting-down broker.
    offline_partitions_from_partition_states: bool = _rule(
        since="2.1",
        ref="KAFKA-6753 (PartitionStateMachine.updateControllerMetrics @2.1.0)",
        doc="ZooKeeper mode: OfflinePartitionsCount counts OfflinePartition states (before: "
        "leaders that are not live or shutting down)",
    )
    # KIP-427 / KAFKA-7904 (2.3.0): ReplicaManager's AtMinIsrPartitionCount and the
    # per-partition AtMinIsr gauge.
    at_min_isr_metrics: bool = _rule(
        since="2.3",
        ref="KIP-427 / KAFKA-7904 (ReplicaManager, Partition @2.3.0)",
        doc="gauges AtMinIsrPartitionCount (ReplicaManager) and AtMinIsr (Partition)",
    )
    # KIP-352 / KAFKA-8834 (2.5.0): a partition being reassigned counts its replication factor
    # without the adding replicas (OngoingReassignmentState.replicationFactor), so
    # UnderReplicatedPartitions / UnderReplicated / ReplicasCount leave the new replicas out, and
    # ReplicaManager reports ReassigningPartitions.
    reassignment_metrics: bool = _rule(
        since="2.5",
        ref="KIP-352 / KAFKA-8834 (Partition.isUnderReplicated, ReplicaManager @2.5.0)",
        doc="under-replication leaves out the adding replicas of a reassignment; gauge "
        "ReassigningPartitions",
    )
    # KIP-748 / KAFKA-13237 (3.1.0): the ZooKeeper controller's ActiveBrokerCount (live or
    # shutting-down brokers) and FencedBrokerCount (always 0).
    zk_broker_count_metrics: bool = _rule(
        since="3.1",
        ref="KIP-748 / KAFKA-13237 (KafkaController @3.1.0)",
        doc="ZooKeeper mode: KafkaController gauges ActiveBrokerCount and FencedBrokerCount",
    )
    # KAFKA-12670 (3.9.0, apache/kafka PR #16866): ControllerMetadataMetrics registers
    # ControllerStats UncleanLeaderElectionsPerSec on the KRaft controllers
    # (ControllerMetricsChanges counts the unclean elections of the records it replays);
    # ControllerMetadataMetricsTest.testMetricNames @3.7.0 has no such meter.
    kraft_unclean_elections_meter: bool = _rule(
        since="3.9",
        ref="KAFKA-12670 / apache/kafka PR #16866 (ControllerMetadataMetrics)",
        doc="KRaft controllers report UncleanLeaderElectionsPerSec",
    )
    # KafkaRaftMetrics "current-state": a broker following the leader (an observer) reads
    # "follower" until 3.4 and "observer" from 3.5.0 (KAFKA-14883, commit 571841f).
    raft_state_observer: bool = _rule(
        since="3.5",
        ref="KAFKA-14883 (KafkaRaftMetrics @3.4.0, @3.5.0)",
        doc='raft-metrics current-state reads "observer" for a broker following the leader',
    )
    # 4.0 (KAFKA-17642, commit 3a71d59, with KIP-996's Prospective state): "voted" became
    # "unattached-voted", and a Prospective node reads "prospective" or "prospective-voted"
    # (before, it fell through to "unattached").
    raft_state_names_4_0: bool = _rule(
        since="4.0",
        ref="KAFKA-17642 (KafkaRaftMetrics @4.0: isProspectiveNotVoted, isUnattachedAndVoted)",
        doc='raft-metrics current-state names "unattached-voted", "prospective" and '
        '"prospective-voted"',
    )
    # Partition.maybeExpandIsr / maybeShrinkIsr mark IsrExpandsPerSec / IsrShrinksPerSec after
    # updateIsr whether its conditional ZooKeeper write succeeded or not (a failed one marks
    # FailedIsrUpdatesPerSec too) until 2.3; from 2.4.0 (KAFKA-8371, commit 3696b98) only when
    # it succeeded.
    isr_meters_count_failed_writes: bool = _rule(
        until="2.4",
        ref="KAFKA-8371 (Partition.maybeExpandIsr / maybeShrinkIsr @2.3.0, @2.4.0)",
        doc="IsrShrinksPerSec / IsrExpandsPerSec also count a change whose ZooKeeper write failed",
    )


@dataclass(frozen=True)
class ClientRules:
    """Clients and what brokers answer them: ListOffsets, committed offsets with leader epochs,
    the consumer's position validation (KIP-320)."""

    # KIP-207 / KAFKA-2334 (2.2.0): ListOffsets(latest) answers OFFSET_NOT_AVAILABLE while the new
    # leader's HW is below its epoch start offset (Partition.fetchOffsetForTimestamp).
    list_offsets_offset_not_available: bool = _rule(
        since="2.2",
        ref="KIP-207 / KAFKA-2334",
        doc="a new leader answers OFFSET_NOT_AVAILABLE until its HW reaches the epoch start",
    )
    # KIP-320 (2.1.0, ListOffsets v4): the request carries each partition's CurrentLeaderEpoch
    # (checked as Fetch's is, Partition.localLogWithEpochOrThrow) and the answer the leader
    # epoch of the offset found (KafkaApis.handleListOffsetRequestV1AndAbove: version >= 4).
    list_offsets_leader_epoch: bool = _rule(
        since="2.1",
        ref="KIP-320, ListOffsets v4 (KafkaApis.handleListOffsetRequestV1AndAbove)",
        doc="a ListOffsets answer carries the leader epoch of the offset it found",
    )
    # KIP-734 (3.0.0, ListOffsets v7): MAX_TIMESTAMP (-3) asks for the record with the largest
    # timestamp (UnifiedLog.fetchOffsetByTimestamp @3.0.0). Before, the client cannot ask it
    # (ListOffsetsRequest.Builder: UnsupportedVersionException).
    list_offsets_max_timestamp: bool = _rule(
        since="3.0",
        ref="KIP-734",
        doc="ListOffsets answers MAX_TIMESTAMP: the offset of the largest timestamp",
    )
    # KAFKA-16310 (3.8.0): MAX_TIMESTAMP answers the epoch of the record's batch; 3.0-3.7 the
    # latest epoch of the epoch cache (UnifiedLog.fetchOffsetByTimestamp @3.7.0, @3.8.0).
    list_offsets_max_timestamp_batch_epoch: bool = _rule(
        since="3.8",
        ref="KAFKA-16310 (UnifiedLog.fetchOffsetByTimestamp @3.8.0)",
        doc="MAX_TIMESTAMP answers its record's leader epoch, not the latest one",
    )
    # KAFKA-6546 (2.0.0): MetadataCache.getPartitionMetadata takes errorUnavailableListeners
    # (Metadata v6+) and answers LISTENER_NOT_FOUND for a leader without the request's listener;
    # 1.1 answers LEADER_NOT_AVAILABLE (MetadataCache.scala @1.1.0, @2.0.0).
    metadata_listener_not_found: bool = _rule(
        since="2.0",
        ref="KAFKA-6546 (MetadataCache.getPartitionMetadata @2.0.0)",
        doc="a leader alive without the request's listener is LISTENER_NOT_FOUND (v6+)",
    )
    # KAFKA-10312 (2.7.0): LISTENER_NOT_FOUND is decided by whether the partition's leader is
    # alive; 2.0-2.6 asked whether the cache's own broker was (aliveBrokers.contains(brokerId)
    # @2.6.0, contains(leaderBrokerId) @2.7.0).
    metadata_listener_error_checks_leader: bool = _rule(
        since="2.7",
        ref="KAFKA-10312 (MetadataCache.getPartitionMetadata @2.7.0)",
        doc="LISTENER_NOT_FOUND asks whether the leader is alive, not the cache's own broker",
    )
    # KAFKA-8442 (2.4.0): a partition without an available leader lists its ISR in the
    # Metadata answer; before, an empty ISR (MetadataCache.getPartitionMetadata @2.3.0).
    metadata_isr_without_leader: bool = _rule(
        since="2.4",
        ref="KAFKA-8442 (MetadataCache.getPartitionMetadata @2.4.0)",
        doc="a partition without an available leader still lists its ISR in Metadata",
    )
    # KAFKA-9261 (2.5.0): a partition without an available leader carries its leader epoch in
    # the Metadata answer; 2.1-2.4 Optional.empty() (-1) (MetadataCache @2.4.0, @2.5.0).
    metadata_leader_epoch_without_leader: bool = _rule(
        since="2.5",
        ref="KAFKA-9261 (MetadataCache.getPartitionMetadata @2.5.0)",
        doc="a partition without an available leader still carries its leader epoch",
    )
    # KIP-405 (3.5.0, ListOffsets v8): EARLIEST_LOCAL_TIMESTAMP (-4) asks for the local log
    # start (the log start without tiered storage). Before, the client cannot ask it.
    list_offsets_earliest_local: bool = _rule(
        since="3.5",
        ref="KIP-405, ListOffsets v8",
        doc="ListOffsets answers EARLIEST_LOCAL_TIMESTAMP: the local log start offset",
    )
    # KAFKA-7738 (2.2.0, KIP-320 client side): the client's Metadata keeps the last leader
    # epoch it saw per partition (lastSeenLeaderEpochs) and takes a MetadataResponse row only
    # when its epoch is at least that one (Metadata.updatePartitionInfo @2.2.0,
    # updateLatestMetadata @2.8.0 / @3.9.0); an older epoch (a broker whose metadata cache lags
    # answered) leaves the cached leader in place. Before, every answer replaced the cached
    # leader, so a stale broker could send the producer back to a deposed leader. Metadata is
    # the producer's and the consumer's (ConsumerMetadata extends it): kafkasim applies it to
    # both clients (kafkasim.runtime.clients.client_metadata).
    producer_metadata_keeps_newer_leader_epoch: bool = _rule(
        since="2.2",
        ref="KAFKA-7738, Metadata.updatePartitionInfo @2.2.0 / updateLatestMetadata",
        doc="a client (producer or consumer) ignores a metadata answer's partition whose "
        "leader epoch is older than the last one it saw",
    )
    # KIP-951 (3.7.0): ProduceResponse v10 carries, for a partition answered
    # NOT_LEADER_OR_FOLLOWER, its current leader (id, epoch) and the leader's node when alive
    # (KafkaApis.handleProduceRequest getCurrentLeader); the producer takes a newer leader at
    # once (Sender.completeBatch, Metadata.updatePartitionLeadership) and retries to it without
    # retry.backoff.ms (RecordAccumulator.shouldBackoff, KAFKA-15415).
    produce_response_current_leader: bool = _rule(
        since="3.7",
        ref="KIP-951, KafkaApis.handleProduceRequest / Sender.completeBatch",
        doc="NOT_LEADER_OR_FOLLOWER produce answers name the current leader; the producer "
        "retries to it at once",
    )
    # KAFKA-15415 (3.7.0; back-ported to 3.6.1, not modelled): each batch remembers the leader
    # epoch of its partition the producer's metadata had (ProducerBatch.maybeUpdateLeaderEpoch,
    # at RecordAccumulator.ready / drainBatchesForOneNode); a retry whose leader epoch moved
    # since its last attempt is sent without its backoff (RecordAccumulator.shouldBackoff,
    # ProducerBatch.hasLeaderChangedForTheOngoingRetry), whether the new epoch came with a
    # metadata refresh or a KIP-951 answer. Before, a retry always waits its backoff.
    producer_retry_skips_backoff_on_new_leader: bool = _rule(
        since="3.7",
        ref="KAFKA-15415, RecordAccumulator.shouldBackoff @3.7.0",
        doc="a retried batch whose partition has a newer leader epoch is not backed off",
    )
    # KIP-580 (3.7.0): a retried batch waits retry.backoff.ms * 2^(attempts - 1), capped at
    # retry.backoff.max.ms (new, default 1000), times a jitter factor in [0.8, 1.2)
    # (RecordAccumulator.shouldBackoff / batchReady, ExponentialBackoff with
    # CommonClientConfigs.RETRY_BACKOFF_EXP_BASE 2 and RETRY_BACKOFF_JITTER 0.2); the metadata
    # refresh backs off alike, over failed updates and over responses that bring no newer leader
    # epoch (Metadata.timeToAllowUpdate). Before, every wait was retry.backoff.ms exactly.
    # Before KIP-91's delivery.timeout.ms (2.1), a batch that waits in the accumulator longer
    # than request.timeout.ms fails with a TimeoutException (KIP-19, 0.9.0: Sender.run ->
    # RecordAccumulator.abortExpiredBatches / expiredBatches, RecordBatch.maybeExpire): a full
    # batch that long after its last append, any batch that long after its creation plus
    # linger.ms (0.9: after its last attempt plus linger.ms). A batch sent and waiting for its
    # answer is not expired here (its request times out instead).
    producer_batch_expiry_by_request_timeout: bool = _rule(
        since="0.9.0",
        until="2.1",
        ref="KIP-19, RecordAccumulator.abortExpiredBatches @0.9.0 / expiredBatches @2.0.0",
        doc="a batch waiting in the accumulator longer than request.timeout.ms fails "
        "(TimeoutException)",
    )
    # KAFKA-3388 (0.10.0): the expiry walks each queue from its head and stops at the first
    # batch that has not expired, skips a partition with a batch in flight when
    # max.in.flight.requests.per.connection is 1 (muted), and gives a retried batch
    # request.timeout.ms from its last attempt plus retry.backoff.ms (RecordBatch.maybeExpire
    # with inRetry). 0.9.0 walked past retried batches and expired by the last attempt plus
    # linger.ms alone.
    producer_batch_expiry_in_queue_order: bool = _rule(
        since="0.10.0",
        until="2.1",
        ref="KAFKA-3388, RecordBatch.maybeExpire(requestTimeoutMs, retryBackoffMs, now, "
        "lingerMs, isFull) @0.10.0",
        doc="the request.timeout.ms expiry stops at a queue's first live batch, skips muted "
        "partitions and waits out a retry's backoff",
    )
    exponential_retry_backoff: bool = _rule(
        since="3.7",
        ref="KIP-580, RecordAccumulator.shouldBackoff",
        doc="a producer retry waits retry.backoff.ms doubled per attempt, up to "
        "retry.backoff.max.ms, with 20 % jitter",
    )
    # OUT_OF_ORDER_SEQUENCE_NUMBER at an idempotent producer (OutOfOrderSequenceException is no
    # RetriableException). 0.11.0: never retried (Sender.canRetry); the batch fails and
    # Sender.failBatch resets the producer id. 1.0.0 (TransactionManager.canRetry): retried when
    # the batch is not the next sequence (lastAckedSequence + 1) or its sequence was reset.
    idempotent_out_of_order_retried_when_not_next: bool = _rule(
        since="1.0",
        ref="TransactionManager.canRetry @1.0.0",
        doc="an idempotent batch answered OUT_OF_ORDER_SEQUENCE_NUMBER is retried while an "
        "earlier batch of its partition is unanswered",
    )
    # KAFKA-5494 (1.0.0): a batch that expires after it was sent at least once (inRetry) leaves
    # its partition's sequence unresolved (TransactionManager.markSequenceUnresolved): no new
    # batch of the partition is drained (RecordAccumulator.drain hasUnresolvedSequence) until
    # its in-flight batches are done; then, unless the last acknowledged sequence is right
    # before the next one, the producer id is reset at the sender's next pass
    # (shouldResetProducerStateAfterResolvingSequences / resetProducerIdIfNeeded @1.0.0-2.4.0;
    # 2.5.0+: an epoch bump, maybeResolveSequences). 0.11.0 had no such state.
    idempotent_expired_sequence_unresolved: bool = _rule(
        since="1.0",
        ref="Sender.sendProducerData / TransactionManager.markSequenceUnresolved @1.0.0",
        doc="an idempotent batch that expires after a retry leaves its partition's sequence "
        "unresolved until its in-flight batches are done",
    )
    # KIP-588 (2.7.0): INVALID_PRODUCER_EPOCH became InvalidProducerEpochException, which does
    # not fence an idempotent producer. Before, the error was a ProducerFencedException, which
    # Sender.failBatch (0.11.0-1.1.0) / TransactionManager.handleFailedBatch
    # (maybeTransitionToErrorState, 2.0.0-2.6.0) makes fatal: every other batch is aborted and
    # nothing more is sent.
    invalid_producer_epoch_fences_producer: bool = _rule(
        until="2.7",
        ref="Errors.INVALID_PRODUCER_EPOCH @2.6.0 (ProducerFencedException), KIP-588",
        doc="a produce answered INVALID_PRODUCER_EPOCH leaves the producer in its fatal state "
        "(ProducerFencedException)",
    )
    # KAFKA-13412 (3.2.0): KafkaProducer.doSend calls TransactionManager.maybeAddPartition for
    # an idempotent producer too, which throws in the fatal state (maybeFailWithError). Before,
    # only a transactional producer's send checked it (failIfNotReadyForSend /
    # maybeAddPartitionToTransaction): an idempotent one's record was appended and the sender
    # aborted it (maybeAbortBatches).
    idempotent_send_fails_in_error_state: bool = _rule(
        since="3.2",
        ref="KafkaProducer.doSend @3.2.0 (KAFKA-13412)",
        doc="a send of an idempotent producer in its fatal state throws a KafkaException",
    )
    # KIP-360 (2.5.0): for the next sequence the gap is real (acknowledged batches are gone from
    # the leader): TransactionManager.canRetry requests an epoch bump for the partition and
    # retries; bumpIdempotentProducerEpoch renumbers its unanswered batches from 0 in the new
    # epoch. Before, the batch failed and the producer reset its producer id
    # (TransactionManager.handleFailedBatch @2.4.0 resetProducerId).
    idempotent_out_of_order_bumps_epoch: bool = _rule(
        since="2.5",
        ref="KIP-360, TransactionManager.canRetry / bumpIdempotentProducerEpoch @2.5.0",
        doc="a sequence gap (OUT_OF_ORDER_SEQUENCE_NUMBER for the next sequence) bumps the "
        "idempotent producer's epoch and retries from sequence 0 (before: the batch fails "
        "and the producer id is reset)",
    )
    # KAFKA-12152 (2.8.0): each partition keeps the producer id and epoch its sequences belong
    # to (TopicPartitionEntry.producerIdAndEpoch); after an epoch bump a partition takes the new
    # epoch, from sequence 0, at its next drain once nothing of it is in flight
    # (TransactionManager.maybeUpdateProducerIdAndEpoch from RecordAccumulator.drain). In
    # 2.5-2.7 only a partition whose last in-flight batch of the old epoch completed restarted
    # (handleCompletedBatch); one with nothing in flight kept its sequence under the new epoch,
    # and its next batch got OUT_OF_ORDER_SEQUENCE_NUMBER and a second bump.
    idempotent_partition_epoch_updated_at_drain: bool = _rule(
        since="2.8",
        ref="KAFKA-12152, TransactionManager.maybeUpdateProducerIdAndEpoch @2.8.0",
        doc="after an epoch bump every partition restarts its sequence at its next drain "
        "(before: only partitions with batches in flight)",
    )
    # KAFKA-1865 (0.9.0): KafkaProducer.flush calls RecordAccumulator.beginFlush, which makes
    # every batch sendable at once (batchReady's flushInProgress), then awaitFlushCompletion
    # waits for the batches incomplete at the call. The 0.8.2 producer had no flush(): kafkasim's
    # flush there only waits, the batches keep their linger.ms.
    producer_flush_sends_lingering_batches: bool = _rule(
        since="0.9.0",
        ref="KAFKA-1865, KafkaProducer.flush / RecordAccumulator.beginFlush @0.9.0",
        doc="flush() sends every lingering batch at once, then waits for them",
    )
    # KAFKA-3197 (0.10.0): with max.in.flight.requests.per.connection 1 (guaranteeMessageOrder)
    # the sender mutes each partition it drains until its batch is answered
    # (RecordAccumulator.mutePartition / unmutePartition), so a batch never overtakes the one in
    # flight, even when the partition's leader moves. Before, the limit was per connection only.
    producer_mutes_in_flight_partitions: bool = _rule(
        since="0.10.0",
        ref="KAFKA-3197, Sender.sendProducerData / completeBatch @0.10.0",
        doc="with max.in.flight.requests.per.connection 1 a partition sends nothing while its "
        "batch is in flight",
    )
    # KAFKA-5494 (1.0.0): DUPLICATE_SEQUENCE_NUMBER means the broker has the batch but no longer
    # its metadata: Sender.completeBatch completes it as a success without an offset (-1).
    # 0.11 failed the batch with DuplicateSequenceException.
    idempotent_duplicate_sequence_completes: bool = _rule(
        since="1.0",
        ref="KAFKA-5494, Sender.completeBatch @1.0.0",
        doc="DUPLICATE_SEQUENCE_NUMBER completes the batch as a success with offset -1",
    )
    # KAFKA-5494 (1.0.0) broker side: ProducerAppendInfo.checkSequence answers
    # DuplicateSequenceException (DUPLICATE_SEQUENCE_NUMBER) for a batch of the producer's epoch
    # whose last sequence is below the oldest of the five batches it keeps (isDuplicate @1.0.0,
    # the same in 1.0.1 and 1.0.2). KAFKA-6683 (1.1.0, commit 298ff80) dropped the check: such
    # a batch is OUT_OF_ORDER_SEQUENCE_NUMBER, as in 0.11 (which kept one batch only).
    duplicate_sequence_before_cached_batches: bool = _rule(
        since="1.0",
        until="1.1",
        ref="KAFKA-5494, ProducerAppendInfo.isDuplicate @1.0.0 (removed by KAFKA-6683 @1.1.0)",
        doc="a retried batch older than the five batches the broker keeps for its producer is "
        "answered DUPLICATE_SEQUENCE_NUMBER (after: OUT_OF_ORDER_SEQUENCE_NUMBER)",
    )
    # KAFKA-5793 (1.0.0): UNKNOWN_PRODUCER_ID (error 59, new in 1.0) is retried
    # (TransactionManager.canRetry: with no log start offset, -1, the same sequence again).
    idempotent_unknown_producer_id_retried: bool = _rule(
        since="1.0",
        ref="KAFKA-5793, TransactionManager.canRetry @1.0.0",
        doc="an idempotent batch answered UNKNOWN_PRODUCER_ID is retried",
    )
    # The broker's answer to a client batch of a producer it has no state for (its batches
    # truncated away, deleted below the log start and not in a snapshot, or never seen) whose
    # first sequence is not 0 (ProducerAppendInfo.checkSequence). 0.11: its epoch is not the
    # entry's (NO_PRODUCER_EPOCH), so OutOfOrderSequenceException. KAFKA-5793 (1.0.0):
    # UnknownProducerIdException, for the producer to compare its last acknowledged offset with
    # the log start offset the answer now carries. KIP-360 (2.5.0): accepted at any sequence.
    unknown_producer_id_for_unknown_producer: bool = _rule(
        since="1.0",
        until="2.5",
        ref="KAFKA-5793, ProducerAppendInfo.checkSequence @1.0.0 / @2.4.0",
        doc="a batch of a producer the broker does not know, not at sequence 0, is answered "
        "UNKNOWN_PRODUCER_ID (0.11: OUT_OF_ORDER_SEQUENCE_NUMBER)",
    )
    # Before KAFKA-7190 (1a5971ebdc7, 2.4.0) a replica forgets an idempotent producer whose last
    # batch falls below the log start: ProducerStateManager.truncateHead (a new log start:
    # Log.maybeIncrementLogStartOffset, truncateAndReload at the same map end) evicts every
    # producer not isProducerRetained (lastDataOffset >= logStartOffset; 1.0-2.3's
    # removeBatchesOlderThan drops nothing, Queue.dropWhile making a copy), and loadFromSnapshot
    # loads only retained ones (ProducerStateManager.scala @0.11.0.0 / @1.0.0 / @2.3.0). 2.4.0
    # keeps them until transactional.id.expiration.ms passes.
    producer_state_evicts_below_log_start: bool = _rule(
        since="0.11.0",
        until="2.4",
        ref="KAFKA-7190 (ProducerStateManager.truncateHead / isProducerRetained @2.3.0)",
        doc="a replica forgets the idempotent producers whose last batch is below the log "
        "start",
    )
    unknown_producer_accepted_at_any_sequence: bool = _rule(
        since="2.5",
        ref="KIP-360, ProducerAppendInfo.checkSequence @2.5.0",
        doc="a batch of a producer the broker does not know is appended at any sequence",
    )
    # KAFKA-7693 (2.2.0): a partition's next sequence wraps past Integer.MAX_VALUE to 0
    # (DefaultRecordBatch.incrementSequence in TransactionManager.incrementSequenceNumber), as
    # the broker's does. Before, ``nextSequence += increment`` overflowed to a negative int.
    producer_sequence_wraps: bool = _rule(
        since="2.2",
        ref="KAFKA-7693, TransactionManager.incrementSequenceNumber @2.2.0",
        doc="the producer's sequence numbers wrap past Integer.MAX_VALUE to 0",
    )
    # KIP-320 (2.1.0): OffsetCommit v6 carries CommittedLeaderEpoch (OffsetCommitRequest.json
    # "versions": "6+", default -1), OffsetFetch v5 returns it (OffsetFetchResponse.json "5-7",
    # "8+" in the v8 group layout), and the group coordinator stores it in the offset-commit value
    # (GroupMetadataManager @2.1.0, OFFSET_VALUE_LEADER_EPOCH_FIELD_V3). Before, a committed offset
    # had no epoch. The 2.1/2.2 consumer still committed none by itself (SubscriptionState
    # .allConsumed @2.1.0 builds OffsetAndMetadata(position)); it commits the epoch of the last
    # consumed record since KAFKA-7747 (2.3.0), i.e. together with consumer_validates_position.
    offset_commit_leader_epoch: bool = _rule(
        since="2.1",
        ref="KIP-320, OffsetCommit v6 / OffsetFetch v5",
        doc="the group coordinator stores and returns the leader epoch of a committed offset",
    )
    # KIP-320 consumer side / KAFKA-7747 (2.3.0, commit 409fabc): the consumer keeps with its
    # position the epoch of the last record it consumed and the leader (id, epoch) it was
    # established against; when metadata shows another leader or epoch it validates the position
    # with OffsetsForLeaderEpoch before fetching again (Fetcher.validateOffsetsIfNeeded,
    # SubscriptionState.maybeCompleteValidation), and its fetches carry CurrentLeaderEpoch. An end
    # offset below the position is a log truncation: with auto.offset.reset earliest/latest the
    # consumer seeks to that end offset, with none poll() throws LogTruncationException. Before,
    # nothing was checked: a position past the new leader's LEO got OFFSET_OUT_OF_RANGE, one below
    # it silently read the new leader's different records. Since the same commit the consumer
    # commits position.offsetEpoch (SubscriptionState.allConsumed @2.3.0) and a position taken
    # from a committed offset keeps the committed epoch and is validated at once
    # (ConsumerCoordinator.refreshCommittedOffsetsIfNeeded -> SubscriptionState.seekUnvalidated).
    consumer_validates_position: bool = _rule(
        since="2.3",
        ref="KIP-320 / KAFKA-7747",
        doc="after a leader change the consumer validates its position with "
        "OffsetsForLeaderEpoch and detects log truncation",
    )
    # KAFKA-9840 / KAFKA-10113 (2.6.0, commit cb379fb; on trunk 910f317 and f3c00ae for 2.7.0): an
    # answer without an epoch or end offset is a truncation of unknown extent: reset by
    # auto.offset.reset, or LogTruncationException without a divergent offset; the exception's
    # offsetOutOfRangePartitions are the fetch positions. Before (2.3 ... 2.5) the end offset -1
    # was taken as the divergence point (the consumer sought to -1, its next fetch was out of
    # range) and offsetOutOfRangePartitions held the divergent offsets.
    consumer_validation_undefined_resets: bool = _rule(
        since="2.6",
        ref="KAFKA-9840 / KAFKA-10113, SubscriptionState.maybeCompleteValidation",
        doc="an undefined OffsetsForLeaderEpoch answer resets the consumer position by "
        "auto.offset.reset (before: the position became -1)",
    )
    # KAFKA-3977 (0.10.1.0, ff557f0): a fetch answer is parsed when poll() hands it out
    # (Fetcher.parseCompletedFetch, FetchCollector.handleInitializeErrors in 3.7): an
    # OFFSET_OUT_OF_RANGE for an offset that is no longer the position (a seek meanwhile) is
    # stale and ignored, and without a reset policy each answer raises OffsetOutOfRangeException
    # for its own partition (again on every poll while an answer with records stays buffered).
    # Before (0.9.0, 0.10.0: Fetcher.handleFetchResponse) the partition was reset whatever its
    # position now, and the out-of-range partitions still at their fetch offset were raised
    # together, once (Fetcher.throwIfOffsetOutOfRange).
    consumer_discards_stale_out_of_range: bool = _rule(
        since="0.10.1",
        ref="KAFKA-3977, Fetcher.parseCompletedFetch @0.10.1.0",
        doc="a consumer ignores an OFFSET_OUT_OF_RANGE answer for an offset it has moved away "
        "from (before: it reset the partition anyway)",
    )
    # KAFKA-7548 (2.4.0, 1546fc3): fetched records of a partition paused meanwhile stay in the
    # fetch buffer and are returned once it is resumed, if its position has not moved
    # (Fetcher.collectFetch pausedCompletedFetches; an answer is dropped only without a valid
    # position). Before, they were discarded ("no longer fetchable") and fetched again.
    consumer_keeps_paused_fetches: bool = _rule(
        since="2.4",
        ref="KAFKA-7548, Fetcher.collectFetch @2.4.0",
        doc="records fetched for a paused partition are kept for when it is resumed (before: "
        "discarded and fetched again)",
    )
    # KAFKA-14379 (3.4.0, b296e16; back-ported to 3.3.2, which the 3.3 profile does not model):
    # a fetch error that asks for new metadata (NOT_LEADER_OR_FOLLOWER, FENCED_LEADER_EPOCH,
    # UNKNOWN_TOPIC_OR_PARTITION, ...: Fetcher.requestMetadataUpdate) and a failed fetch request
    # (a disconnect: Fetcher/AbstractFetch.handleFetchFailure) clear the preferred read replica,
    # and a preferred replica the metadata does not show online (Cluster.nodeIfOnline, now also
    # requiring it among the partition's replicas) asks for new metadata besides. Before, only
    # OFFSET_OUT_OF_RANGE, an offline replica and the lease (metadata.max.age.ms) cleared it.
    consumer_errors_clear_preferred_read_replica: bool = _rule(
        since="3.4",
        ref="KAFKA-14379, Fetcher.requestMetadataUpdate / handleFetchFailure @3.4.0",
        doc="a fetch error or a disconnect sends a follower-fetching consumer back to the "
        "leader (before: it kept the preferred read replica until its lease expired)",
    )
    # #4644 (2.0.0, 925d6a2, "Skip sending fetches/offset lookups when awaiting the reconnect
    # backoff"): Fetcher.groupListOffsetRequests leaves out a partition whose leader is in its
    # reconnect backoff (NetworkClient.isUnavailable; it is retried at the next poll), as
    # Fetcher.createFetchRequests does for fetches. Before, the ListOffsets was sent to it anyway.
    consumer_list_offsets_skips_unavailable_leader: bool = _rule(
        since="2.0",
        ref="#4644, Fetcher.groupListOffsetRequests @2.0.0",
        doc="a consumer resetting its position sends no ListOffsets to a leader in its "
        "reconnect backoff (before: it sent it anyway)",
    )
    # #4644 (2.0.0, 925d6a2), the fetch half: Fetcher.prepareFetchRequests leaves out a
    # partition whose fetch target is in its reconnect backoff (client.isUnavailable, "Skipping
    # fetch ... awaiting reconnect backoff"; FetcherTest.testFetchSkipsBlackedOutNodes @2.0.0).
    # Before (1.1.0) it skipped only a node with a request in flight, so the Fetch was sent to a
    # blacked-out leader and waited for (or failed with) the reconnect.
    consumer_fetch_skips_unavailable_node: bool = _rule(
        since="2.0",
        ref="#4644, Fetcher.prepareFetchRequests @2.0.0",
        doc="a consumer sends no Fetch to a node in its reconnect backoff (before: it sent it "
        "anyway)",
    )
    # KAFKA-7395 (2.1.0, bcef30d, KIP-320 fencing): Fetcher.parseCompletedFetch answers a
    # REPLICA_NOT_AVAILABLE fetch error with a metadata update, like NOT_LEADER_FOR_PARTITION.
    # Before (1.1.0, 2.0.0) only NOT_LEADER_FOR_PARTITION, KAFKA_STORAGE_ERROR and
    # UNKNOWN_TOPIC_OR_PARTITION did, UNKNOWN_SERVER_ERROR was logged and any other error was an
    # IllegalStateException ("Unexpected error code"). FENCED_LEADER_EPOCH, OFFSET_NOT_AVAILABLE
    # (metadata update) and UNKNOWN_LEADER_EPOCH (logged) joined in 2.3.0 (KAFKA-7440, KAFKA-8365),
    # with consumer_validates_position.
    consumer_fetch_replica_not_available_refreshes: bool = _rule(
        since="2.1",
        ref="KAFKA-7395, Fetcher.parseCompletedFetch @2.1.0",
        doc="a REPLICA_NOT_AVAILABLE fetch error asks for new metadata (before: an "
        "IllegalStateException)",
    )
    # KAFKA-6833 (2.1.0, 6a8ed79): KafkaProducer.waitOnMetadata waits (up to max.block.ms) for
    # a record's partition when its topic's metadata has fewer partitions, asking for updates,
    # and its TimeoutException says "Topic %s not present in metadata after %d ms.". Before
    # (0.10.2 to 2.0) a partition past the count threw a KafkaException at once ("Invalid
    # partition given with record", 0.9/0.10.0: an IllegalArgumentException from partition())
    # and the timeout said "Failed to update metadata after %d ms.".
    producer_waits_for_partition_metadata: bool = _rule(
        since="2.1",
        ref="KAFKA-6833, KafkaProducer.waitOnMetadata @2.1.0",
        doc="a send to a partition past the metadata's count waits up to max.block.ms for it "
        "(before: refused at once)",
    )
    # KAFKA-5098 (2.1.0, 8c47a3e): a metadata answer of INVALID_TOPIC_EXCEPTION for a topic the
    # producer waits on ends the wait: the send's future fails with InvalidTopicException
    # (KafkaProducer.waitOnMetadata: cluster.invalidTopics(); from 2.3 Metadata
    # .maybeThrowExceptionForTopic). Before, the error was only logged and the send waited for
    # max.block.ms (TimeoutException).
    producer_rejects_invalid_topics: bool = _rule(
        since="2.1",
        ref="KAFKA-5098, KafkaProducer.waitOnMetadata @2.1.0",
        doc="a send to a topic the metadata calls invalid fails with InvalidTopicException "
        "(before: it waited for max.block.ms)",
    )
    # KAFKA-9751 (2.8.0, d2cb2dc): KafkaApis.getTopicMetadata answers a topic it does not know,
    # when it does not create it (auto.create.topics.enable false, or not allowed), with
    # INVALID_TOPIC_EXCEPTION if Topic.validate refuses its name, else UNKNOWN_TOPIC_OR_PARTITION.
    # Before, every such topic was UNKNOWN_TOPIC_OR_PARTITION (an auto-creation answered
    # INVALID_TOPIC_EXCEPTION for an invalid name in every release: kafkasim.runtime
    # .auto_topic_creation).
    metadata_answers_invalid_topic: bool = _rule(
        since="2.8",
        ref="KAFKA-9751, KafkaApis.getTopicMetadata @2.8.0",
        doc="a Metadata request naming an invalid topic name gets INVALID_TOPIC_EXCEPTION "
        "(before: UNKNOWN_TOPIC_OR_PARTITION)",
    )
    # KAFKA-4032 (0.10.1.0, 05d00b5): KafkaApis.createTopic catches every exception of the
    # automatic creation of a topic a Metadata request names and answers that topic with its
    # error (Errors.forException: INVALID_REPLICATION_FACTOR, INVALID_TOPIC_EXCEPTION). Before,
    # the exception left the handler and the whole request failed: every topic it named got the
    # error (TopicMetadataRequest.handleError / MetadataRequest.getErrorResponse), too few
    # brokers being AdminOperationException (UNKNOWN_SERVER_ERROR).
    metadata_auto_create_errors_per_topic: bool = _rule(
        since="0.10.1",
        ref="KAFKA-4032, KafkaApis.createTopic @0.10.1.0",
        doc="a failed automatic topic creation answers only that topic with its error "
        "(before: every topic of the Metadata request got it)",
    )
    # KAFKA-8862 (4.0.0, 6612dd5): the TimeoutException of a send whose wait for metadata ran out
    # (Metadata.awaitUpdate) names the partition and the count when the topic is known ("Partition
    # %d of topic %s with partition count %d is not present in metadata after %d ms.",
    # KafkaProducer.getErrorMessage). Before, that path always said "Topic %s not present in
    # metadata after %d ms.".
    producer_metadata_timeout_names_partition: bool = _rule(
        since="4.0",
        ref="KAFKA-8862, KafkaProducer.waitOnMetadata / getErrorMessage @4.0.0",
        doc="a send's metadata timeout names the missing partition and the topic's count",
    )


#: The groups of :class:`Rules`, in the order describe_rules shows them: (attribute, record type,
#: heading).
RULE_GROUPS: tuple[tuple[str, type, str], ...] = (
    ("isr", IsrRules, "ISR and high watermark"),
    ("alter_partition", AlterPartitionRules, "ISR changes: AlterIsr / AlterPartition"),
    ("fetch", FetchRules, "fetch, truncation and leader epochs"),
    ("elections", ElectionRules, "elections and ELR"),
    ("controller", ControllerRules, "controller and broker lifecycle"),
    ("raft", RaftRules, "the KRaft Raft quorum"),
    ("tools", ToolRules, "admin tools and describe output"),
    ("metrics", MetricRules, "JMX metrics"),
    ("clients", ClientRules, "clients"),
)


@dataclass(frozen=True)
class Rules:
    """The protocol rules of one Kafka release; one boolean per behaviour that changed, grouped
    by the part of Kafka it belongs to (:data:`RULE_GROUPS`): ``rules.isr.maximal_isr``.

    A rule also reads by its flat name (``rules.maximal_isr``), the name ``rules_for`` overrides,
    scenario files and notebooks use; the package reads through the groups."""

    #: Profile these rules were computed for (overrides do not change it).
    version: str
    isr: IsrRules
    alter_partition: AlterPartitionRules
    fetch: FetchRules
    elections: ElectionRules
    controller: ControllerRules
    raft: RaftRules
    tools: ToolRules
    metrics: MetricRules
    clients: ClientRules

    def __getattr__(self, name: str) -> bool:
        """A rule by its flat name (``rules.hw_frozen_under_min_isr``), read from its group."""
        group = _GROUP_OF.get(name)
        if group is None:
            hint = "" if name.startswith("_") else \
                "".join(f" Did you mean '{h}'?" for h in difflib.get_close_matches(
                    name, list(_GROUP_OF), n=1, cutoff=0.6))
            raise AttributeError(f"Rules has no rule {name!r}.{hint}")
        return getattr(object.__getattribute__(self, group), name)


#: every rule field, group by group: (group attribute, field)
_RULE_FIELDS: tuple[tuple[str, dataclasses.Field[Any]], ...] = tuple(
    (attr, f) for attr, cls, _title in RULE_GROUPS for f in dataclasses.fields(cls)
)
#: rule name -> the attribute of :class:`Rules` holding its group
_GROUP_OF: dict[str, str] = {f.name: attr for attr, f in _RULE_FIELDS}


def rule_names() -> tuple[str, ...]:
    """Names of all rules, group by group (:data:`RULE_GROUPS`), each group in declaration
    (roughly chronological) order."""
    return tuple(f.name for _attr, f in _RULE_FIELDS)


def rule_group(name: str) -> str:
    """The attribute of :class:`Rules` holding rule ``name`` (``"maximal_isr"`` -> ``"isr"``)."""
    group = _GROUP_OF.get(name)
    if group is None:
        raise RuleError(_unknown_rule_message(name))
    return group


def _unknown_rule_message(name: object) -> str:
    names = rule_names()
    hint = difflib.get_close_matches(str(name), names, n=1, cutoff=0.6)
    suggestion = f" Did you mean '{hint[0]}'?" if hint else ""
    return f"Unknown rule '{name}'.{suggestion} Known rules: {', '.join(names)}"


def _rule_value(f: dataclasses.Field[Any], version: str) -> bool:
    since = f.metadata["since"]
    until = f.metadata["until"]
    on = since is None or version_at_least(version, since)
    if until is not None and version_at_least(version, until):
        on = False
    return on


def _checked_overrides(overrides: dict[str, bool]) -> dict[str, bool]:
    for name, value in overrides.items():
        if name not in _GROUP_OF:
            raise RuleError(_unknown_rule_message(name))
        if not isinstance(value, bool):
            raise RuleError(
                f"Rule '{name}' must be True or False, got {value!r} ({type(value).__name__})"
            )
    return overrides


def rules_for(version: str = DEFAULT_VERSION, overrides: dict[str, bool] | None = None) -> Rules:
    """Rules of the profile for ``version``, with optional per-rule ``overrides`` (flat rule
    name -> bool). Without overrides every call for a profile returns the same (frozen)
    :class:`Rules`: each cluster, broker config and scenario asks for them."""
    profile = normalize_version(version)
    if not overrides:
        return _profile_rules(profile)
    values = dict(_profile_rule_values(profile))
    values.update(_checked_overrides(overrides))
    return _build_rules(profile, values)


@functools.cache
def _profile_rules(profile: str) -> Rules:
    return _build_rules(profile, _profile_rule_values(profile))


@functools.cache
def _profile_rule_values(profile: str) -> Mapping[str, bool]:
    """Flat rule name -> its value in ``profile`` (a read-only view: an override copies it)."""
    return MappingProxyType({f.name: _rule_value(f, profile) for _attr, f in _RULE_FIELDS})


def _build_rules(profile: str, values: Mapping[str, bool]) -> Rules:
    groups = {attr: cls(**{f.name: values[f.name] for f in dataclasses.fields(cls)})
              for attr, cls, _title in RULE_GROUPS}
    return Rules(version=profile, **groups)


def _rule_history(f: dataclasses.Field[Any]) -> str:
    since, until = f.metadata["since"], f.metadata["until"]
    if since and until:
        return f"{since} until {until}"
    if since:
        return f"since {since}"
    return f"until {until}"


def _rule_on(rules: Rules, attr: str, f: dataclasses.Field[Any]) -> bool:
    return getattr(getattr(rules, attr), f.name)


def describe_rules(version: str = DEFAULT_VERSION) -> list[str]:
    """A human-readable summary of a profile's rules and how they differ from the default
    (``kafkasim.settings.config.describe_profile`` adds the config defaults), group by group."""
    profile = normalize_version(version)
    rules = rules_for(profile)
    default_rules = rules_for(DEFAULT_VERSION)
    lines = [f"Kafka {profile} profile (requested {version!r})"]
    if profile == DEFAULT_VERSION:
        lines.append("This is the default profile.")
    else:
        changed = [(attr, f) for attr, f in _RULE_FIELDS
                   if _rule_on(rules, attr, f) != _rule_on(default_rules, attr, f)]
        lines.append(
            f"Differs from the default profile {DEFAULT_VERSION} in {len(changed)} rule(s):"
        )
        for attr, f in changed:
            state = "on " if _rule_on(rules, attr, f) else "off"
            lines.append(f"  {state} {f.name}: {f.metadata['doc']} ({f.metadata['ref']})")
    lines.append("All rules:")
    for attr, _cls, title in RULE_GROUPS:
        lines.append(f"  {title} (rules.{attr}):")
        for f in (f for a, f in _RULE_FIELDS if a == attr):
            mark = "x" if _rule_on(rules, attr, f) else " "
            lines.append(f"    [{mark}] {f.name} ({_rule_history(f)}; {f.metadata['ref']}): "
                         f"{f.metadata['doc']}")
    return lines
