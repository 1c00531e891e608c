"""Ports of Kafka's VoterSetHistoryTest, TreeMapLogHistoryTest and
KRaftControlRecordStateMachineTest (raft/src/test/java/org/apache/kafka/raft/internals/, read
at 4.3.0 = confluentinc/kafka a9ce322153, and at the 3.9 branch c821449 of apache/kafka for the
3.9 behaviour of addAt).

Adaptation to kafkasim (kafkasim.control.kraft.voter_set.VoterSetHistory):

- ``new VoterSetHistory(staticVoterSet, logContext)`` is ``VoterSetHistory(static)``; Kafka's
  ``Optional`` answers are a value or None, ``LogHistory.Entry(offset, value)`` a tuple.
- TreeMapLogHistory is the generic map under VoterSetHistory; kafkasim has no separate class,
  so TreeMapLogHistoryTest runs on a VoterSetHistory with an empty static set and voter sets
  as the values (its string values "100", "200" become the voter sets {1}, {1, 2}, ...).
- KAFKA-17973 (4.0): addAt of a voter set without an overlapping majority with the last one
  from the log only logs; 3.9 throws IllegalArgumentException. kafkasim: the rule
  ``raft_voter_set_history_allows_non_overlapping``, the constructor's
  ``allow_non_overlapping`` (the client's ``voter_set_non_overlapping``).
"""

from __future__ import annotations

import pytest
from test_raft_states_kafka import voter_map, voter_node

from kafkasim.control.kraft.raft import KafkaRaftClient, RaftLog
from kafkasim.control.kraft.voter_set import KRaftVersionRecord, VoterSet, VoterSetHistory
from kafkasim.core.errors import IllegalArgumentException
from kafkasim.runtime.kraft_cluster import raft_options
from kafkasim.settings.versions import rules_for


def _set(ids) -> VoterSet:
    return VoterSet.from_map(voter_map(ids))


# --- VoterSetHistoryTest @4.3.0 -----------------------------------------------------------------
def test_static_voter_set():
    """VoterSetHistoryTest.testStaticVoterSet @4.3.0: the static set is the last value but no
    entry; truncating either end is a no-op."""
    static = _set((1, 2, 3))
    history = VoterSetHistory(static)
    for truncate in (None, history.truncate_new_entries, history.truncate_old_entries):
        if truncate is not None:
            truncate(100)
        assert history.value_at_or_before(0) is None
        assert history.value_at_or_before(100) is None
        assert history.last_value() == static
    assert history.last_voter_set_offset() is None


def test_no_static_voter_set():
    """VoterSetHistoryTest.TestNoStaticVoterSet @4.3.0."""
    history = VoterSetHistory(VoterSet.empty())
    assert history.value_at_or_before(0) is None
    assert history.value_at_or_before(100) is None
    assert history.last_value() == VoterSet.empty()


def test_add_at():
    """VoterSetHistoryTest.testAddAt @4.3.0: offset -2 is an IllegalArgumentException; each
    set is in force from its offset on."""
    m = voter_map((1, 2, 3))
    static = VoterSet.from_map(dict(m))
    history = VoterSetHistory(static)
    with pytest.raises(IllegalArgumentException):
        history.add_at(-2, _set((1, 2, 3)))
    assert history.last_value() == static

    m[4] = voter_node(4)
    added = VoterSet.from_map(dict(m))
    history.add_at(100, added)
    assert history.last_value() == added
    assert history.value_at_or_before(99) is None
    assert history.value_at_or_before(100) == added
    assert history.last_voter_set_offset() == 100

    del m[4]
    removed = VoterSet.from_map(dict(m))
    history.add_at(200, removed)
    assert history.last_value() == removed
    assert history.value_at_or_before(99) is None
    assert history.value_at_or_before(199) == added
    assert history.value_at_or_before(200) == removed


def test_bootstrap_add_at():
    """VoterSetHistoryTest.testBootstrapAddAt @4.3.0: the bootstrap checkpoint's set at -1."""
    m = voter_map((1, 2, 3))
    bootstrap = VoterSet.from_map(dict(m))
    history = VoterSetHistory(VoterSet.empty())
    history.add_at(-1, bootstrap)
    assert history.last_value() == bootstrap
    assert history.value_at_or_before(-2) is None
    assert history.value_at_or_before(-1) == bootstrap

    m[4] = voter_node(4)
    added = VoterSet.from_map(dict(m))
    history.add_at(100, added)
    assert history.last_value() == added
    assert history.value_at_or_before(-2) is None
    assert history.value_at_or_before(99) == bootstrap
    assert history.value_at_or_before(100) == added

    del m[4]
    removed = VoterSet.from_map(dict(m))
    history.add_at(200, removed)
    assert history.last_value() == removed
    assert history.value_at_or_before(-2) is None
    assert history.value_at_or_before(99) == bootstrap
    assert history.value_at_or_before(199) == added
    assert history.value_at_or_before(200) == removed


def test_bootstrap_set_from_the_kraft_version_1_constructor():
    """kafkasim's ``VoterSetHistory(bootstrap, kraft_version=1)`` is the history after
    KRaftControlRecordStateMachine read the bootstrap checkpoint (addAt(-1, voters))."""
    bootstrap = _set((1, 2, 3))
    history = VoterSetHistory(bootstrap, kraft_version=1)
    assert history.value_at_or_before(-1) == bootstrap
    assert history.last_voter_set_offset() == -1
    # a set from the log after the bootstrap one is never checked for overlap, 3.9 or 4.x
    strict = VoterSetHistory(bootstrap, kraft_version=1, allow_non_overlapping=False)
    only3 = _set((3,))
    strict.add_at(0, only3)
    assert strict.last_value() == only3


def test_add_at_non_overlapping():
    """VoterSetHistoryTest.testAddAtNonOverlapping @4.3.0 (KAFKA-17973): several voters may
    be removed, then added, at once."""
    m = voter_map((1, 2, 3))
    voters = VoterSet.from_map(dict(m))
    history = VoterSetHistory(VoterSet.empty())
    history.add_at(100, voters)
    removed = voters.remove_voter(m[1].voter_key).remove_voter(m[2].voter_key)
    history.add_at(200, removed)
    assert history.last_value() == removed
    added = removed.add_voter(voter_node(1)).add_voter(voter_node(2))
    history.add_at(300, added)
    assert history.last_value() == added


def test_add_at_non_overlapping_3_9():
    """VoterSetHistoryTest.testAddAtNonOverlapping @3.9 (c821449): addAt of a set without an
    overlapping majority with the last one from the log is an IllegalArgumentException and
    leaves the history as it was."""
    m = voter_map((1, 2, 3))
    voters = VoterSet.from_map(dict(m))
    history = VoterSetHistory(VoterSet.empty(), allow_non_overlapping=False)
    history.add_at(100, voters)
    removed = voters.remove_voter(m[1].voter_key).remove_voter(m[2].voter_key)
    with pytest.raises(IllegalArgumentException, match="overlapping majority"):
        history.add_at(200, removed)
    assert history.last_value() == voters
    added = voters.add_voter(voter_node(4)).add_voter(voter_node(5))
    with pytest.raises(IllegalArgumentException):
        history.add_at(200, added)
    assert history.last_value() == voters


@pytest.mark.parametrize("strict", [False, True])
def test_nonoverlapping_from_static_voter_set(strict):
    """VoterSetHistoryTest.testNonoverlappingFromStaticVoterSet @4.3.0 and @3.9: the first
    set from the log is not compared with the static (configured) one."""
    m = voter_map((1, 2, 3))
    static = VoterSet.from_map(dict(m))
    history = VoterSetHistory(VoterSet.empty(), allow_non_overlapping=not strict)
    removed = static.remove_voter(m[1].voter_key).remove_voter(m[2].voter_key)
    history.add_at(100, removed)
    assert history.last_value() == removed


def _history_1234_12345():
    m = voter_map((1, 2, 3))
    static = VoterSet.from_map(dict(m))
    history = VoterSetHistory(static)
    m[4] = voter_node(4)
    set1234 = VoterSet.from_map(dict(m))
    history.add_at(100, set1234)
    m[5] = voter_node(5)
    set12345 = VoterSet.from_map(dict(m))
    history.add_at(200, set12345)
    return history, static, set1234, set12345


def test_truncate_to():
    """VoterSetHistoryTest.testTruncateTo @4.3.0: truncateNewEntries(end) drops the entries
    at or past ``end``."""
    history, static, set1234, set12345 = _history_1234_12345()
    for end, expected in ((201, set12345), (200, set1234), (101, set1234), (100, static)):
        history.truncate_new_entries(end)
        assert history.last_value() == expected, end


def test_trim_prefix_to():
    """VoterSetHistoryTest.testTrimPrefixTo @4.3.0: truncateOldEntries(start) keeps the newest
    entry at or before ``start``."""
    history, _static, set1234, set12345 = _history_1234_12345()
    for start in (99, 100, 101):
        history.truncate_old_entries(start)
        assert history.value_at_or_before(99) is None
        assert history.value_at_or_before(100) == set1234
    history.truncate_old_entries(200)
    assert history.value_at_or_before(199) is None
    assert history.value_at_or_before(200) == set12345


def test_clear():
    """VoterSetHistoryTest.testClear @4.3.0: the static set is the last value again."""
    history, static, _set1234, _set12345 = _history_1234_12345()
    history.clear()
    assert history.last_value() == static
    assert history.last_entry() is None


# --- TreeMapLogHistoryTest @4.3.0 ---------------------------------------------------------------
V1, V12, V123 = _set((1,)), _set((1, 2)), _set((1, 2, 3))


def test_tree_map_log_history_empty():
    """TreeMapLogHistoryTest.testEmpty @4.3.0."""
    history = VoterSetHistory(VoterSet.empty())
    assert history.value_at_or_before(100) is None
    assert history.last_entry() is None


def test_tree_map_log_history_add_at():
    """TreeMapLogHistoryTest.testAddAt @4.3.0: offsets from -1 on, each past the last."""
    history = VoterSetHistory(VoterSet.empty())
    with pytest.raises(IllegalArgumentException):
        history.add_at(-2, V1)
    assert history.last_entry() is None
    history.add_at(-1, V1)
    assert history.value_at_or_before(-1) == V1
    assert history.value_at_or_before(0) == V1
    history.add_at(100, V12)
    for offset in (99, 100):
        with pytest.raises(IllegalArgumentException, match="greater than the last offset"):
            history.add_at(offset, V123)
    assert history.value_at_or_before(100) == V12
    assert history.value_at_or_before(201) == V12
    history.add_at(200, V123)
    expected = {-2: None, -1: V1, 100: V12, 101: V12, 199: V12, 200: V123, 201: V123}
    for offset, value in expected.items():
        assert history.value_at_or_before(offset) == value, offset
    assert history.last_entry() == (200, V123)


def test_tree_map_log_history_truncate_to():
    """TreeMapLogHistoryTest.testTruncateTo @4.3.0."""
    history = VoterSetHistory(VoterSet.empty())
    history.add_at(100, V1)
    history.add_at(200, V12)
    for end, expected in ((201, (200, V12)), (200, (100, V1)), (101, (100, V1)), (100, None)):
        history.truncate_new_entries(end)
        assert history.last_entry() == expected, end


def test_tree_map_log_history_trim_prefix_to():
    """TreeMapLogHistoryTest.testTrimPrefixTo @4.3.0."""
    history = VoterSetHistory(VoterSet.empty())
    history.add_at(100, V1)
    history.add_at(200, V12)
    for start in (99, 100, 101):
        history.truncate_old_entries(start)
        assert history.value_at_or_before(99) is None
        assert history.value_at_or_before(100) == V1
    history.truncate_old_entries(200)
    assert history.value_at_or_before(199) is None
    assert history.value_at_or_before(200) == V12


def test_tree_map_log_history_clear():
    """TreeMapLogHistoryTest.testClear @4.3.0."""
    history = VoterSetHistory(VoterSet.empty())
    history.add_at(100, V1)
    history.add_at(200, V12)
    history.clear()
    assert history.last_entry() is None


# --- the rule ----------------------------------------------------------------------------------
@pytest.mark.parametrize(("version", "relaxed"), [("3.9", False), ("4.0", True), ("4.3", True)])
def test_client_history_follows_the_release(version, relaxed):
    """The KafkaRaftClient of a release builds its VoterSetHistory with that release's addAt:
    KAFKA-17973 is in 4.0 (ba01ad0f0c, an ancestor of 4ae681446f), not in the 3.9 branch."""
    opts = raft_options(rules_for(version))
    client = KafkaRaftClient(1, (1, 2, 3), **opts)
    assert client.reconfig.history.allow_non_overlapping is relaxed


# --- KRaftControlRecordStateMachineTest @4.3.0 --------------------------------------------------
# kafkasim: KRaftControlRecordStateMachine(staticVoterSet, log, ...) is VoterSetHistory(static)
# reading a RaftLog with ``update(log)`` (updateState); control batches are the log's
# KRaftVersionRecord / VotersRecord entries; the number-of-voters metric is not modelled.
def test_empty_partition():
    """KRaftControlRecordStateMachineTest.testEmptyPartition @4.3.0: reading an empty log
    changes nothing."""
    voters = _set((1, 2, 3))
    history = VoterSetHistory(voters)
    assert not history.update(RaftLog())
    assert history.last_value() == voters
    assert history.last_kraft_version() == 0


def test_empty_partition_with_no_static_voters():
    """KRaftControlRecordStateMachineTest.testEmptyPartitionWithNoStaticVoters @4.3.0."""
    history = VoterSetHistory(VoterSet.empty())
    history.update(RaftLog())
    assert history.last_value() == VoterSet.empty()


def _control_log(*records) -> RaftLog:
    log = RaftLog()
    for record in records:
        log.append_as_leader([record], 1)
    return log


def test_update_without_snapshot():
    """KRaftControlRecordStateMachineTest.testUpdateWithoutSnapshot @4.3.0: the voter set of a
    VotersRecord replaces the static one; the kraft.version of a KRaftVersionRecord is in
    force from its offset."""
    static = _set((1, 2, 3))
    history = VoterSetHistory(static)
    voters = _set((4, 5, 6))
    log = _control_log(KRaftVersionRecord(1), voters.to_voters_record())
    assert history.update(log)
    assert history.last_value() == voters
    assert history.voter_set_at_offset(log.end_offset - 1) == voters
    assert history.kraft_version_at_offset(log.end_offset - 1) == 1
    assert history.kraft_version_at_offset(0) == 1
    with pytest.raises(IllegalArgumentException, match="largest known offset"):
        history.voter_set_at_offset(log.end_offset)


def test_control_record_state_machine_trim_prefix_to():
    """KRaftControlRecordStateMachineTest.testTrimPrefixTo @4.3.0: truncateOldEntries keeps
    the kraft.version and the voter set in force at the start offset."""
    history = VoterSetHistory(_set((1, 2, 3)))
    first = _set((4, 5, 6))
    second = first.add_voter(voter_node(7))
    log = _control_log(KRaftVersionRecord(1), first.to_voters_record(),
                       second.to_voters_record())
    kraft_offset, first_offset, second_offset = 0, 1, 2
    history.update(log)
    assert history.last_value() == second
    assert history.kraft_version_at_offset(kraft_offset) == 1

    history.truncate_old_entries(kraft_offset)
    assert history.kraft_version_at_offset(kraft_offset) == 1
    history.truncate_old_entries(first_offset)
    assert history.kraft_version_at_offset(kraft_offset) == 1
    assert history.voter_set_at_offset(first_offset) == first
    history.truncate_old_entries(second_offset)
    assert history.kraft_version_at_offset(kraft_offset) == 1
    assert history.voter_set_at_offset(first_offset) is None
    assert history.voter_set_at_offset(second_offset) == second


def test_truncate_new_entries_of_the_log():
    """KRaftControlRecordStateMachine.truncateNewEntries @4.3.0: a truncated log forgets the
    voter sets and kraft.versions past its new end; re-reading finds the new records."""
    static = _set((1, 2, 3))
    history = VoterSetHistory(static)
    log = _control_log(KRaftVersionRecord(1), _set((4, 5, 6)).to_voters_record())
    history.update(log)
    assert history.truncate_new_entries(1)
    assert history.last_value() == static
    assert history.kraft_version_at_offset(0) == 1
    replacement = _set((7, 8, 9))
    log.entries[1:] = [(1, 2, replacement.to_voters_record())]
    assert history.update(log)
    assert history.last_value() == replacement
