"""LeaderState.maybeAppendUpgradedKRaftVersion (KAFKA-16538, 4.1+), ported from LeaderStateTest
@4.4 (confluentinc f86720838c; the same at 4.3.0 a9ce322153): testMaybeAppendUpgradedKRaftVersion
and testInvalidMaybeAppendUpgradedKRaftVersion.

Adaptations: Kafka's in-memory voter set (KRaftVersionUpgrade.Voters, a VoterSet) is kafkasim's
``LeaderState.volatile_voters`` (voter id -> (directory id, kraft.version range)); the leader of a
kraft.version 0 epoch starts it with its own entry (RaftReconfig.init_volatile_voters), and
``VoterSetTest.voterNode(id, true)`` + ``compareAndSetVolatileVoters`` become entries with a
directory id and the range 0..1. The BatchAccumulator mock is an ``append_control`` callback.
The static voters have the range 0..0 (VoterSet.fromInetSocketAddresses). Scenarios are
Kafka's; code is our own.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.kraft_version_upgrade import InvalidUpdateVersionException
from kafkasim.control.kraft.raft import LeaderState, NotLeaderError
from kafkasim.control.kraft.voter_set import (
    KRaftVersionRecord,
    ReplicaKey,
    VoterNode,
    VoterSet,
)
from kafkasim.core.errors import IllegalArgumentException

LOCAL, FOLLOWER1, FOLLOWER2 = 0, 1, 2
EPOCH = 5
FETCH_MS = 2000


def static_voters() -> VoterSet:
    """localWithRemoteVoterSet(followers, withDirectoryId=false): a static quorum's voters."""
    return VoterSet({i: VoterNode(ReplicaKey(i), (("CONTROLLER", f"host{i}", 9093),), (0, 0))
                     for i in (LOCAL, FOLLOWER1, FOLLOWER2)})


def new_leader_state(voters: VoterSet) -> LeaderState:
    """newLeaderState(voters, epochStartOffset 10, KRAFT_VERSION_0): the in-memory voter set
    starts with the leader's own entry updated (LeaderState's constructor at kraft.version 0)."""
    state = LeaderState(LOCAL, EPOCH, 10, voters, {LOCAL}, 0, FETCH_MS)
    state.volatile_voters = {LOCAL: ("dir-local", (0, 1))}
    return state


def test_invalid_maybe_append_upgraded_kraft_version():
    """LeaderStateTest.testInvalidMaybeAppendUpgradedKRaftVersion @4.4."""
    persisted = static_voters()
    state = new_leader_state(persisted)
    # none of the remote voters support kraft.version 1: their static entries say 0..0
    with pytest.raises(InvalidUpdateVersionException, match="not all of the voters support it"):
        state.maybe_append_upgraded_kraft_version(EPOCH, 1, 0, persisted, False, 0)
    with pytest.raises(NotLeaderError, match="the given epoch 4 is stale"):
        state.maybe_append_upgraded_kraft_version(EPOCH - 1, 1, 0, persisted, False, 0)
    with pytest.raises(IllegalArgumentException, match="epoch 6 which is larger"):
        state.maybe_append_upgraded_kraft_version(EPOCH + 1, 1, 0, persisted, False, 0)
    # a no-op: the persisted version is already 1
    assert not state.maybe_append_upgraded_kraft_version(EPOCH, 1, 1, persisted, False, 0)


def test_maybe_append_upgraded_kraft_version():
    """LeaderStateTest.testMaybeAppendUpgradedKRaftVersion @4.4: with every follower's entry
    updated (a directory id, 0..1) the upgrade appends one control batch, KRaftVersionRecord(1)
    and the voter set with the directory ids; asked again in the same epoch it is a no-op."""
    persisted = static_voters()
    state = new_leader_state(persisted)
    state.volatile_voters.update({FOLLOWER1: ("dir-1", (0, 1)), FOLLOWER2: ("dir-2", (0, 1))})
    appended = []
    assert state.maybe_append_upgraded_kraft_version(EPOCH, 1, 0, persisted, False, 0,
                                                     append_control=appended.append)
    assert len(appended) == 1
    version, voters = appended[0]
    assert version == KRaftVersionRecord(1)
    assert VoterSet.from_voters_record(voters).voter_keys() == (
        ReplicaKey(LOCAL, "dir-local"), ReplicaKey(FOLLOWER1, "dir-1"),
        ReplicaKey(FOLLOWER2, "dir-2"))
    assert not state.maybe_append_upgraded_kraft_version(EPOCH, 1, 0, persisted, False, 0,
                                                         append_control=appended.append)
    assert len(appended) == 1
    with pytest.raises(InvalidUpdateVersionException, match="Invalid concurrent upgrade"):
        state.maybe_append_upgraded_kraft_version(EPOCH, 0, 0, persisted, False, 0)


def test_validate_only_appends_nothing_and_remembers_nothing():
    persisted = static_voters()
    state = new_leader_state(persisted)
    state.volatile_voters.update({FOLLOWER1: ("dir-1", (0, 1)), FOLLOWER2: ("dir-2", (0, 1))})
    appended = []
    assert state.maybe_append_upgraded_kraft_version(EPOCH, 1, 0, persisted, True, 0,
                                                     append_control=appended.append)
    assert appended == [] and state.upgraded_kraft_version is None


def test_no_in_memory_voter_set_and_downgrade_are_refused():
    """At kraft.version 1 a leader keeps no in-memory voter set (KRaftVersionUpgrade.Empty); a
    lower version than the persisted one is a downgrade."""
    persisted = static_voters()
    state = LeaderState(LOCAL, EPOCH, 10, persisted, {LOCAL}, 0, FETCH_MS)
    with pytest.raises(InvalidUpdateVersionException,
                       match="from version KRAFT_VERSION_0 to KRAFT_VERSION_1$"):
        state.maybe_append_upgraded_kraft_version(EPOCH, 1, 0, persisted, False, 0)
    with pytest.raises(InvalidUpdateVersionException, match="because the new version is a "
                                                            "downgrade"):
        state.maybe_append_upgraded_kraft_version(EPOCH, 0, 1, persisted, False, 0)
