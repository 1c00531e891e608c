"""The leader's kraft.version upgrade: ``LeaderState.maybeAppendUpgradedKRaftVersion`` (KIP-853
follow-up KAFKA-16538, Kafka 4.1+; LeaderState.java:456@4.4 f86720838c, the same at 4.3.0
a9ce322153).

A kraft.version 0 leader keeps an in-memory voter set (Kafka's ``KRaftVersionUpgrade.Voters``,
kafkasim's ``LeaderState.volatile_voters``: voter id -> (directory id, supported kraft.version
range) as each voter's UpdateRaftVoter told it). Upgrading to kraft.version 1 checks, in Kafka's
order: the epoch (older: NotLeaderException; newer: IllegalArgumentException); an upgrade
already appended in this epoch (``KRaftVersionUpgrade.Version``: the same version is a no-op,
another one an InvalidUpdateVersionException); the persisted version (equal: no-op; higher: a
downgrade, refused); no in-memory voter set (refused); a voter whose range lacks the new version
(refused); a voter without a directory id (IllegalStateException). Unless ``validate_only``, it
then appends one control batch: KRaftVersionRecord(1), and a VotersRecord when the in-memory
voter set differs from the persisted one; it returns True. (Kafka's IllegalStateException for
in-memory voter ids other than the persisted ones cannot happen here: the in-memory set is built
over the persisted ids.)
"""

from __future__ import annotations

from collections.abc import Callable

from kafkasim.control.kraft.raft_errors import NotLeaderError
from kafkasim.control.kraft.voter_set import KRaftVersionRecord, ReplicaKey, VoterNode, VoterSet
from kafkasim.core.errors import IllegalArgumentException, IllegalStateException

FEATURE_NAME = "kraft.version"     # KRaftVersion.FEATURE_NAME
_FROM_STATE = object()


class InvalidUpdateVersionException(RuntimeError):
    """org.apache.kafka.common.errors.InvalidUpdateVersionException."""

    error = "INVALID_UPDATE_VERSION"


def kraft_version_name(version: int) -> str:
    """KRaftVersion's enum name, as Kafka's messages print it."""
    return f"KRAFT_VERSION_{version}"


def in_memory_voters(volatile_voters: dict | None, persisted_voters: VoterSet) -> VoterSet | None:
    """``KRaftVersionUpgrade.toVoters()``: the persisted voter set with each voter the leader
    heard from updated to its directory id and range (None: no in-memory voter set, as at
    kraft.version 1). Only voters reach it (UpdateRaftVoter from another id is
    VOTER_NOT_FOUND), so its ids are the persisted ones."""
    if volatile_voters is None:
        return None
    nodes = {}
    for voter_id in persisted_voters.voter_ids():
        node = persisted_voters.voter_node(voter_id)
        if voter_id in volatile_voters:
            directory, supported = volatile_voters[voter_id]
            node = VoterNode(ReplicaKey(voter_id, directory), node.endpoints, tuple(supported))
        nodes[voter_id] = node
    return VoterSet(nodes)


def maybe_append_upgraded_kraft_version(
    state, current_epoch: int, new_version: int, persisted_version: int,
    persisted_voters: VoterSet, validate_only: bool, current_time_ms: int,
    append_control: Callable[[list], None] | None = None, volatile_voters=_FROM_STATE,
) -> bool:
    """See the module docstring. ``state`` is the LeaderState (its ``epoch``,
    ``volatile_voters`` and ``upgraded_kraft_version``); ``append_control(records)`` appends the
    control batch (Kafka: BatchAccumulator.appendControlMessages); ``volatile_voters`` replaces
    the state's in-memory voters when given."""
    if volatile_voters is _FROM_STATE:
        volatile_voters = state.volatile_voters
    _validate_epoch(state.epoch, current_epoch)
    pending = state.upgraded_kraft_version
    if pending is not None:
        if pending == new_version:
            return False
        raise InvalidUpdateVersionException(
            f"Invalid concurrent upgrade of {FEATURE_NAME} from version "
            f"Version[kraftVersion={kraft_version_name(pending)}] to "
            f"{kraft_version_name(new_version)}")
    if persisted_version == new_version:
        return False
    if persisted_version > new_version:
        raise InvalidUpdateVersionException(
            f"Invalid upgrade of {FEATURE_NAME} from version "
            f"{kraft_version_name(persisted_version)} to {kraft_version_name(new_version)} "
            "because the new version is a downgrade")
    voters = in_memory_voters(volatile_voters, persisted_voters)
    _check_voters(voters, persisted_voters, persisted_version, new_version)
    if not validate_only:
        state.upgraded_kraft_version = new_version
        records = [KRaftVersionRecord(new_version)]
        if voters != persisted_voters:
            records.append(voters.to_voters_record())
        if append_control is not None:
            append_control(records)
    return True


def _validate_epoch(leader_epoch: int, current_epoch: int) -> None:
    """LeaderState.validateEpoch."""
    if current_epoch < leader_epoch:
        raise NotLeaderError(f"Upgrade kraft version failed because the given epoch "
                             f"{current_epoch} is stale. Current leader epoch is {leader_epoch}")
    if current_epoch > leader_epoch:
        raise IllegalArgumentException(f"Attempt to append from epoch {current_epoch} which is "
                                       f"larger than the current epoch of {leader_epoch}")


def _check_voters(voters: VoterSet | None, persisted_voters: VoterSet, persisted_version: int,
                  new_version: int) -> None:
    if voters is None:
        raise InvalidUpdateVersionException(
            f"Invalid upgrade of {FEATURE_NAME} from version "
            f"{kraft_version_name(persisted_version)} to {kraft_version_name(new_version)}")
    if not voters.supports_version(new_version):
        raise InvalidUpdateVersionException(
            f"Invalid upgrade of {FEATURE_NAME} to {kraft_version_name(new_version)} because not "
            "all of the voters support it")
    if any(key.directory_id is None for key in voters.voter_keys()):
        raise IllegalStateException(
            f"Directory id must be known for all of the voters: {voters}")
