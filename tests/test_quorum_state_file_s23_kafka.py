"""A KRaft voter's ``quorum-state`` file (``FileQuorumStateStore``).

Ports raft/src/test/java/org/apache/kafka/raft/FileQuorumStateStoreTest.java (4.3.0,
confluentinc mirror a9ce322153). Adaptation: kafkasim's FileQuorumStateStore keeps the file's
record in memory; ``writeElectionState(ElectionState, kraftVersion)`` is
``write_election_state`` of the ElectionState's fields (``_write``), ``readElectionState``
is ``read_election``; the file's text is ``quorum_state_json``. testReload, testCreateAndClear
(files on disk) and testSupportedVersion (QuorumStateData's schema) are left out.
"""

from __future__ import annotations

import base64
import json
import random

import pytest

from kafkasim.control.kraft.quorum_state_store import (
    UNKNOWN,
    ElectionState,
    FileQuorumStateStore,
    parse_quorum_state_json,
)
from kafkasim.control.kraft.voter_set import ReplicaKey
from kafkasim.core.errors import IllegalStateException

KRAFT_VERSIONS = [0, 1]   # KRaftVersion.values(); isReconfigSupported: 1


def _random_uuid(seed: int) -> str:
    return base64.urlsafe_b64encode(random.Random(seed).randbytes(16)).decode().rstrip("=")


def _write(store: FileQuorumStateStore, election: ElectionState, kraft_version: int) -> None:
    """writeElectionState(election, kraftVersion)."""
    voted = election.voted_key
    store.write_election_state(
        election.epoch, election.leader_id_or_sentinel(),
        UNKNOWN if voted is None else voted.id, kraft_version=kraft_version,
        voters=tuple(sorted(election.voters)),
        voted_directory_id=None if voted is None else voted.directory_id)


@pytest.mark.parametrize("kraft_version", KRAFT_VERSIONS)
def test_write_read_elected_leader(kraft_version):
    """FileQuorumStateStoreTest.testWriteReadElectedLeader @4.3.0: the leader and the vote of
    the epoch (KIP-996) read back; kraft.version 1 keeps the voted directory id and no voters,
    kraft.version 0 the voters and no directory id."""
    store = FileQuorumStateStore()
    voters = {1, 2, 3}
    voted_key = ReplicaKey(1, _random_uuid(1))
    _write(store, ElectionState.with_elected_leader(2, 1, voters, voted_key), kraft_version)
    if kraft_version == 1:
        expected = ElectionState.with_elected_leader(2, 1, set(), voted_key)
    else:
        expected = ElectionState.with_elected_leader(2, 1, voters, ReplicaKey(1, None))
    assert store.read_election() == expected


@pytest.mark.parametrize("kraft_version", KRAFT_VERSIONS)
def test_write_read_voted_candidate(kraft_version):
    """FileQuorumStateStoreTest.testWriteReadVotedCandidate @4.3.0."""
    store = FileQuorumStateStore()
    voters = {1, 2, 3}
    voter1_key = ReplicaKey(1, _random_uuid(2))
    _write(store, ElectionState.with_voted_candidate(2, voter1_key, voters), kraft_version)
    if kraft_version == 1:
        expected = ElectionState.with_voted_candidate(2, voter1_key, set())
    else:
        expected = ElectionState.with_voted_candidate(2, ReplicaKey(1, None), voters)
    assert store.read_election() == expected


@pytest.mark.parametrize("kraft_version", KRAFT_VERSIONS)
def test_write_read_unknown_leader(kraft_version):
    """FileQuorumStateStoreTest.testWriteReadUnknownLeader @4.3.0."""
    store = FileQuorumStateStore()
    voters = {1, 2, 3}
    _write(store, ElectionState.with_unknown_leader(2, voters), kraft_version)
    expected = ElectionState.with_unknown_leader(2, set() if kraft_version == 1 else voters)
    assert store.read_election() == expected


def test_data_version_2_cannot_be_read():
    """FileQuorumStateStoreTest.testCantReadVersionQuorumState @4.3.0: a file of data_version
    2 is refused ("data_version (2) is not within the min (0) and max (1) supported
    version")."""
    text = json.dumps({"leaderId": 9990, "leaderEpoch": 3012, "votedId": -1, "appliedOffset": 0,
                       "currentVoters": [{"voterId": 9990}, {"voterId": 9991},
                                         {"voterId": 9992}], "data_version": 2})
    with pytest.raises(Exception, match=r"data_version \(2\) is not within the min \(0\) and "
                       r"max \(1\) supported version"):
        parse_quorum_state_json(text)


def test_data_version_2_is_an_illegal_state_exception():
    """FileQuorumStateStoreTest.testCantReadVersionQuorumState @4.3.0: the exception's type."""
    text = json.dumps({"leaderId": 1, "leaderEpoch": 1, "votedId": -1, "appliedOffset": 0,
                       "currentVoters": [], "data_version": 2})
    with pytest.raises(IllegalStateException):
        parse_quorum_state_json(text)
