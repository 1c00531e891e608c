"""Dynamic KRaft quorums (KIP-853, kraft.version 1, 3.9+): the voter set in the metadata log,
AddRaftVoter / RemoveRaftVoter on the leader, and the tools and façade around them.

Each test names the Kafka test it follows (apache/kafka trunk 1eb7644, 2024-10-25):
raft/src/test/java/org/apache/kafka/raft/KafkaRaftClientReconfigTest.java and VoterSetTest.java;
the handlers are raft/.../internals/AddVoterHandler.java and RemoveVoterHandler.java."""

from __future__ import annotations

import pytest
from clusters import make_cluster

from kafkasim.control.kraft.raft import RaftLog
from kafkasim.control.kraft.voter_set import (
    KRaftVersionRecord,
    ReplicaKey,
    VoterNode,
    VoterSet,
    VoterSetHistory,
)
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.describe import directory_id
from kafkasim.runtime.quorum_admin import QuorumReconfigurationError
from kafkasim.settings.exceptions import ClusterError

SEED = 5
DYNAMIC = {"controller.quorum.bootstrap.servers":
           "controller3000:9093,controller3001:9093,controller3002:9093"}


def controller_config(node_id: int) -> dict:
    return {"node.id": node_id, "process.roles": "controller",
            "controller.listener.names": "CONTROLLER",
            "listeners": f"CONTROLLER://controller{node_id}:9093"}


def dynamic_cluster(version: str = "4.1", controllers: int = 3, config_extra=None,
                    rules=None) -> Cluster:
    servers = ",".join(f"controller{3000 + i}:9093" for i in range(controllers))
    return make_cluster(seed=SEED, kafka_version=version, controllers=controllers,
                        config={"controller.quorum.bootstrap.servers": servers,
                                **(config_extra or {})}, settle_ms=3000, rules=rules)


#: the update-voter-set period (FollowerState.updateVoterPeriodMs) with the default
#: controller.quorum.fetch.timeout.ms of 2 s: one fetch timeout from 4.1 (KAFKA-16538), three
#: before; ``THREE_TIMEOUTS`` runs a 4.1+ cluster with the earlier period
PERIOD = {"one timeout": 2000, "three timeouts": 6000}
THREE_TIMEOUTS = {"raft_update_voter_period_one_fetch_timeout": False}
PERIODS = pytest.mark.parametrize("period", sorted(PERIOD))


def _rules(period: str):
    return THREE_TIMEOUTS if period == "three timeouts" else None


def key(node_id: int) -> ReplicaKey:
    return ReplicaKey(node_id, directory_id(node_id, SEED))


def records_of(c: Cluster, node=None) -> list[str]:
    return [row[2] for row in c.kraft.metadata_log(node)]


# --- VoterSetTest ---------------------------------------------------------------------------------
def _voters(*ids) -> VoterSet:
    return VoterSet({i: VoterNode(ReplicaKey(i, f"dir{i}"), (("CONTROLLER", f"h{i}", 9093),))
                     for i in ids})


def test_voter_set_add_voter():
    """VoterSetTest.testAddVoter: a new id is added; an id already there is not."""
    voters = _voters(1, 2, 3)
    added = voters.add_voter(VoterNode(ReplicaKey(4, "dir4")))
    assert added.voter_ids() == (1, 2, 3, 4) and voters.voter_ids() == (1, 2, 3)
    assert voters.add_voter(VoterNode(ReplicaKey(3, "other"))) is None


def test_voter_set_remove_voter():
    """VoterSetTest.testRemoveVoter: only the exact key (id and directory id) is removed."""
    voters = _voters(1, 2, 3)
    assert voters.remove_voter(ReplicaKey(4, "dir4")) is None
    assert voters.remove_voter(ReplicaKey(3, "other")) is None
    assert voters.remove_voter(ReplicaKey(3, "dir3")).voter_ids() == (1, 2)


def test_voter_set_cannot_remove_to_empty_voter_set():
    """VoterSetTest.testCannotRemoveToEmptyVoterSet."""
    assert _voters(1).remove_voter(ReplicaKey(1, "dir1")) is None


def test_voter_set_is_voter_with_and_without_directory_id():
    """VoterSetTest.testIsVoterWithDirectoryId / testIsVoterWithoutDirectoryId: a voter with a
    directory id matches only that directory; one without matches any directory of its id."""
    voters = _voters(1, 2)
    assert voters.is_voter(ReplicaKey(1, "dir1"))
    assert not voters.is_voter(ReplicaKey(1, "other"))
    assert not voters.is_voter(ReplicaKey(1, None))
    static = VoterSet.of([1, 2])
    assert static.is_voter(ReplicaKey(1, None)) and static.is_voter(ReplicaKey(1, "any"))


def test_voter_set_is_only_voter_in_standalone():
    """VoterSetTest.testIsOnlyVoterInStandalone / testIsOnlyVoterInNotStandalone."""
    assert _voters(1).is_only_voter(ReplicaKey(1, "dir1"))
    assert not _voters(1, 2).is_only_voter(ReplicaKey(1, "dir1"))


def test_voter_set_overlapping_majority():
    """VoterSetTest.testOverlappingMajority / testNonoverlappingMajority: one change at a time
    keeps every majority of the old set intersecting every majority of the new one."""
    voters = _voters(1, 2, 3)
    assert voters.has_overlapping_majority(voters.add_voter(VoterNode(ReplicaKey(4, "d"))))
    assert voters.has_overlapping_majority(voters.remove_voter(ReplicaKey(3, "dir3")))
    assert not voters.has_overlapping_majority(_voters(1, 4, 5))


def test_voter_set_record_round_trip():
    """VoterSetTest.testRecordRoundTrip."""
    voters = _voters(1, 2, 3)
    assert VoterSet.from_voters_record(voters.to_voters_record()) == voters


def test_voter_set_history_follows_appends_and_truncation():
    """VoterSetHistory / KRaftControlRecordStateMachine.updateState: a VotersRecord counts from
    the moment it is in the log (committed or not), and a truncation below it forgets it
    (VoterSetHistory.truncateNewEntries)."""
    bootstrap = _voters(1, 2, 3)
    history = VoterSetHistory(bootstrap, kraft_version=1)
    log = RaftLog([(0, 1, "LeaderChange"), (1, 1, KRaftVersionRecord(1)),
                   (2, 1, bootstrap.to_voters_record())])
    assert history.update(log) and history.last_entry()[0] == 2
    log.append_as_leader([bootstrap.add_voter(VoterNode(ReplicaKey(4, "d"))).to_voters_record()],
                         1)
    assert history.update(log) and history.last_value().voter_ids() == (1, 2, 3, 4)
    assert history.truncate_new_entries(3)
    assert history.last_value().voter_ids() == (1, 2, 3) and history.last_entry()[0] == 2
    assert history.last_kraft_version() == 1


# --- bootstrap records ----------------------------------------------------------------------------
def test_leader_writes_bootstrap_records():
    """KafkaRaftClientReconfigTest.testLeaderWritesBootstrapRecords: a quorum formatted with
    --initial-controllers (kraft.version 1) has its voter set in the bootstrap checkpoint; the
    first leader writes KRaftVersionRecord and VotersRecord right after its LeaderChange, with
    the voters' directory ids and endpoints."""
    c = dynamic_cluster()
    rows = c.kraft.metadata_log()
    assert [r[2] for r in rows[:3]] == ["LeaderChangeMessage", "KRaftVersionRecord",
                                        "VotersRecord"]
    voters = c.kraft.raft_leader().raft.reconfig.history.last_value()
    assert voters.voter_keys() == tuple(key(i) for i in (3000, 3001, 3002))
    assert voters.voter_node(3001).endpoints == (("CONTROLLER", "controller3001", 9093),)
    status = c.kraft.describe_quorum(status=True)
    assert f'{{"id": 3001, "directoryId": "{directory_id(3001, SEED)}", "endpoints": ' \
           '["CONTROLLER://controller3001:9093"]}' in status


def test_leader_does_not_bootstrap_records_with_kraft_version_0():
    """KafkaRaftClientReconfigTest.testLeaderDoesNotBootstrapRecordsWithKraftVersion0:
    controller.quorum.voters is kraft.version 0: no KRaft control records but LeaderChange."""
    c = Cluster(3, seed=SEED, kafka_version="4.1")
    c.run(3000)
    names = records_of(c)
    assert "VotersRecord" not in names and "KRaftVersionRecord" not in names
    assert c.kraft.raft_leader().raft.reconfig.history.last_kraft_version() == 0


# --- AddRaftVoter ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def grown():
    """A dynamic quorum that added controller 3003 (an observer that caught up)."""
    c = dynamic_cluster()
    c.kraft.start_controller(3003)
    c.run(1000)
    line = c.kraft.add_controller(controller_config(3003))
    return c, line


def test_add_voter(grown):
    """KafkaRaftClientReconfigTest.testAddVoter: the caught-up observer answers ApiVersions, the
    leader appends a VotersRecord with it, and answers once that record commits."""
    c, line = grown
    assert line == (f"Added controller 3003 with directory id {directory_id(3003, SEED)} and "
                    "endpoints: CONTROLLER://controller3003:9093")
    assert c.kraft.voters == (3000, 3001, 3002, 3003)
    for node in c.kraft.nodes.values():      # every controller follows the new voter set
        assert node.raft.voters == (3000, 3001, 3002, 3003)
        assert not node.raft.observer
    [d] = [r[5] for r in c.trace.rows if r[1] == "raft_voter_change"]
    assert (d.operation, d.voter, d.error) == ("add", 3003, "NONE")
    replication = c.kraft.describe_quorum(replication=True)
    assert "3003  \t" in replication and "Follower" in replication.split("3003")[1].split("\n")[0]


def test_added_voter_counts_in_the_majority(grown):
    """The high watermark needs a majority of the voter set in force (LeaderState
    .maybeUpdateHighWatermark): with 4 voters, 2 up can no longer commit."""
    c, _ = grown
    leader = c.kraft.raft_leader()
    others = [i for i in c.kraft.voters if i != leader.id]
    hw = leader.raft.high_watermark
    c.crash(others[0])
    c.crash(others[1])
    c.run(200)
    before = leader.raft.high_watermark
    c.run(1500)
    assert leader.raft.high_watermark == before        # 2 of 4: no commit
    assert before >= hw
    c.start(others[0])
    c.start(others[1])
    c.run(3000)


def test_add_voter_with_existing_voter(grown):
    """KafkaRaftClientReconfigTest.testAddVoterWithExistingVoter: DUPLICATE_VOTER."""
    c, _ = grown
    before = (c.kraft.voters, len(c.kraft.metadata_log()))
    with pytest.raises(QuorumReconfigurationError) as err:
        c.kraft.add_controller(controller_config(3001))
    assert err.value.error == "DUPLICATE_VOTER"
    assert str(err.value).startswith(
        "org.apache.kafka.common.errors.DuplicateVoterException: The voter id for "
        f"ReplicaKey(id=3001, directoryId=Optional[{directory_id(3001, SEED)}]) is already part "
        "of the set of voters [ReplicaKey(id=3000, ")
    assert c.kraft.voters == before[0]


def test_add_voter_with_pending_add_voter():
    """KafkaRaftClientReconfigTest.testAddVoterWithPendingAddVoter: one voter change at a time;
    a second request while the first waits for ApiVersions is REQUEST_TIMED_OUT."""
    c = dynamic_cluster()
    c.kraft.start_controller(3003)
    c.kraft.start_controller(3004)
    c.run(1000)
    leader = c.kraft.raft_leader()
    endpoints = (("CONTROLLER", "controller3003", 9093),)
    first = leader.raft.reconfig.add_voter(leader, key(3003), endpoints)
    assert not first.done
    second = leader.raft.reconfig.add_voter(leader, key(3004),
                                            (("CONTROLLER", "controller3004", 9093),))
    assert (second.error, second.message) == (
        "REQUEST_TIMED_OUT",
        "Request timed out waiting for leader to handle previous voter change request")
    removal = leader.raft.reconfig.remove_voter(leader, key(3002))
    assert removal.error == "REQUEST_TIMED_OUT"   # testRemoveVoterWithPendingAddVoter
    c.run_until(lambda _c: first.done, 5000)
    assert first.error == "NONE"
    assert c.kraft.voters == (3000, 3001, 3002, 3003)


def test_add_voter_with_lagging_new_voter():
    """KafkaRaftClientReconfigTest.testAddVoterWithLaggingNewVoter: an observer that never
    reached the leader's end offset is not added (REQUEST_TIMED_OUT, nothing appended)."""
    c = dynamic_cluster()
    c.kraft.start_controller(3003)
    c.hold("RaftFetchRequest", src=3003)        # its first fetch went out; none after it arrives
    c.run(1000)
    log_before = len(c.kraft.metadata_log())
    with pytest.raises(QuorumReconfigurationError) as err:
        c.kraft.add_controller(controller_config(3003))
    assert err.value.error == "REQUEST_TIMED_OUT"
    assert str(err.value).endswith(
        f"Aborted add voter operation for ReplicaKey(id=3003, directoryId=Optional["
        f"{directory_id(3003, SEED)}]) since it is lagging behind")
    assert c.kraft.voters == (3000, 3001, 3002)
    assert "VotersRecord" not in records_of(c)[log_before:]


def test_add_voter_timeout():
    """KafkaRaftClientReconfigTest.testAddVoterTimeout: the new voter never answers ApiVersions;
    the pending operation expires after controller.quorum.request.timeout.ms."""
    c = dynamic_cluster()
    c.kraft.start_controller(3003)
    c.run(1000)
    c.hold("ApiVersionsRequest")
    start = c.now
    with pytest.raises(QuorumReconfigurationError) as err:
        c.kraft.add_controller(controller_config(3003))
    assert err.value.error == "REQUEST_TIMED_OUT"
    assert str(err.value) == ("org.apache.kafka.common.errors.TimeoutException: The request "
                              "timed out.")
    assert c.now - start == 2000            # controller.quorum.request.timeout.ms
    assert c.kraft.voters == (3000, 3001, 3002)


def test_add_voter_invalid_feature_version():
    """KafkaRaftClientReconfigTest.testAddVoterInvalidFeatureVersion: a new voter whose
    kraft.version range lacks the finalized level (a 3.8 binary: no range) is INVALID_REQUEST."""
    c = dynamic_cluster()
    node = c.kraft.start_controller(3003)
    node.raft.reconfig.supported_kraft_version = None
    c.run(1000)
    with pytest.raises(QuorumReconfigurationError) as err:
        c.kraft.add_controller(controller_config(3003))
    assert err.value.error == "INVALID_REQUEST"
    assert "since the kraft.version range (min: 0, max: 0) doesn't support the finalized " \
           "version 1" in str(err.value)


def test_add_voter_request_checks():
    """KafkaRaftClientReconfigTest.testAddVoterToNotLeader, testAddVoterWithMissingDirectoryId,
    testAddVoterWithMissingDefaultListener (KafkaRaftClient.handleAddVoterRequest)."""
    c = dynamic_cluster()
    leader = c.kraft.raft_leader()
    follower = next(n for n in c.kraft.nodes.values() if n is not leader)
    eps = (("CONTROLLER", "controller3003", 9093),)
    assert follower.raft.reconfig.add_voter(follower, key(3003), eps).error == \
        "NOT_LEADER_OR_FOLLOWER"
    op = leader.raft.reconfig.add_voter(leader, ReplicaKey(3003, None), eps)
    assert (op.error, op.message) == ("INVALID_REQUEST",
                                      "Add voter request didn't include a valid voter")
    op = leader.raft.reconfig.add_voter(leader, key(3003), (("OTHER", "h", 1),))
    assert op.error == "INVALID_REQUEST" and "for the default listener CONTROLLER" in op.message


def test_add_voter_fails_when_losing_leadership():
    """KafkaRaftClientReconfigTest.testAddVoterFailsWhenLosingLeadership: the pending operation
    answers NOT_LEADER_OR_FOLLOWER when the leader resigns (LeaderState.close)."""
    c = dynamic_cluster()
    c.kraft.start_controller(3003)
    c.run(1000)
    leader = c.kraft.raft_leader()
    op = leader.raft.reconfig.add_voter(leader, key(3003),
                                        (("CONTROLLER", "controller3003", 9093),))
    assert not op.done
    leader.raft.resign(leader)
    assert op.error == "NOT_LEADER_OR_FOLLOWER"


def test_add_controller_needs_a_running_observer():
    """The façade's own check: a dynamic quorum's new voter must be a running controller
    process (c.kraft.start_controller); nothing changes otherwise."""
    c = dynamic_cluster()
    with pytest.raises(QuorumReconfigurationError, match=r"start_controller\(3003\)"):
        c.kraft.add_controller(controller_config(3003))
    assert c.kraft.voters == (3000, 3001, 3002)


# --- RemoveRaftVoter ------------------------------------------------------------------------------
def test_remove_voter():
    """KafkaRaftClientReconfigTest.testRemoveVoter: the VotersRecord without the voter commits
    on the new voter set; the removed controller goes on as an observer."""
    c = dynamic_cluster()
    leader = c.kraft.raft_leader()
    victim = max(i for i in c.kraft.voters if i != leader.id)
    line = c.kraft.remove_controller(victim, directory_id(victim, SEED))
    assert line == f"Removed  KRaft controller {victim} with directory id " \
                   f"{directory_id(victim, SEED)}"
    assert c.kraft.voters == tuple(i for i in (3000, 3001, 3002) if i != victim)
    c.run(1000)
    assert c.kraft.nodes[victim].raft.observer
    info = c.kraft.quorum_info()
    assert victim in [o[0] for o in info["observers"]]
    assert victim not in [v[0] for v in info["voters"]]


def test_remove_voter_is_leader():
    """KafkaRaftClientReconfigTest.testRemoveVoterIsLeader: a leader that removes itself
    answers once the record commits (on the other voters), then resigns; a remaining voter
    becomes leader in a higher epoch and the old leader is an observer."""
    c = dynamic_cluster()
    leader = c.kraft.raft_leader()
    epoch = leader.raft.epoch
    c.kraft.remove_controller(leader.id, directory_id(leader.id, SEED))
    c.run(5000)
    new = c.kraft.raft_leader()
    assert new is not None and new.id != leader.id and new.raft.epoch > epoch
    assert leader.id not in c.kraft.voters and leader.raft.observer
    assert leader.raft.state_name in ("Follower", "Unattached")
    assert c.kraft.ready()


def test_remove_voter_with_none_voter():
    """KafkaRaftClientReconfigTest.testRemoveVoterWithNoneVoter: a key that is not a voter (here
    the right id with another directory id) is VOTER_NOT_FOUND; nothing is appended."""
    c = dynamic_cluster()
    before = len(c.kraft.metadata_log())
    with pytest.raises(QuorumReconfigurationError) as err:
        c.kraft.remove_controller(3002, directory_id(9, SEED))
    assert err.value.error == "VOTER_NOT_FOUND"
    assert str(err.value).startswith("org.apache.kafka.common.errors.VoterNotFoundException: "
                                     "Cannot remove voter ReplicaKey(id=3002, ")
    assert len(c.kraft.metadata_log()) == before


@pytest.mark.filterwarnings("ignore:1 voter")
def test_remove_voter_to_empty_voter_set():
    """KafkaRaftClientReconfigTest.testRemoveVoterToEmptyVoterSet: the only voter stays."""
    c = dynamic_cluster(controllers=1)
    with pytest.raises(QuorumReconfigurationError) as err:
        c.kraft.remove_controller(3000, directory_id(3000, SEED))
    assert err.value.error == "VOTER_NOT_FOUND"
    assert c.kraft.voters == (3000,)


def test_remove_voter_timed_out_and_the_uncommitted_voter_set():
    """KafkaRaftClientReconfigTest.testRemoveVoterTimedOut: the VotersRecord cannot commit (the
    other voters are cut off), so the request times out -- but the record was appended, so the
    leader already uses the new voter set (KIP-853: a voter set counts once appended), and the
    next change waits for it to commit (REQUEST_TIMED_OUT, 'waiting for voters to commit')."""
    c = dynamic_cluster()
    leader = c.kraft.raft_leader()
    others = [i for i in c.kraft.voters if i != leader.id]
    c.partition_network([leader.id], others + [1, 2, 3])
    op = leader.raft.reconfig.remove_voter(leader, key(others[0]))
    assert not op.done
    assert leader.raft.voters == tuple(i for i in (3000, 3001, 3002) if i != others[0])
    c.run(500)
    again = leader.raft.reconfig.add_voter(leader, key(others[0]),
                                           (("CONTROLLER", "x", 9093),))
    assert again.error == "REQUEST_TIMED_OUT"
    assert again.message.startswith("Request timed out waiting for leader to handle previous")
    c.run(1600)
    assert op.error == "REQUEST_TIMED_OUT"


def test_remove_controller_refuses_bad_arguments_without_changes():
    c = dynamic_cluster()
    before = (c.kraft.voters, len(c.kraft.metadata_log()), c.now)
    for bad in (-1, "3002", True):
        with pytest.raises(QuorumReconfigurationError):
            c.kraft.remove_controller(bad, directory_id(3002, SEED))
    assert (c.kraft.voters, len(c.kraft.metadata_log()), c.now) == before


# --- the façade -----------------------------------------------------------------------------------
def test_start_controller_checks():
    static = Cluster(3, seed=SEED, kafka_version="4.1")
    with pytest.raises(ClusterError, match="the quorum is static"):
        static.kraft.start_controller(3003)
    c = dynamic_cluster()
    for bad, message in ((3001, "already in use"), (1, "already in use"),
                         (-3, "non-negative node id"), ("x", "non-negative node id")):
        with pytest.raises(ClusterError, match=message):
            c.kraft.start_controller(bad)
    assert sorted(c.kraft.nodes) == [3000, 3001, 3002]


def test_observer_controller_is_listed_in_describe():
    """An observer controller fetches like a broker and is one of CurrentObservers, with its
    directory id (MetadataQuorumCommand describe --status / --replication, 3.9+)."""
    c = dynamic_cluster()
    c.kraft.start_controller(3003)
    c.run(1000)
    status = c.kraft.describe_quorum(status=True)
    observers = status.split("CurrentObservers:")[1]
    assert f'{{"id": 3003, "directoryId": "{directory_id(3003, SEED)}"}}' in observers
    assert "Observer" in c.kraft.describe_quorum(replication=True).split("3003  ")[1]


def test_static_quorums_are_unchanged_by_the_dynamic_code():
    """A static quorum keeps controller.quorum.voters: no directory ids in --status."""
    c = Cluster(3, seed=SEED, kafka_version="4.1")
    c.run(3000)
    assert '"directoryId": null' in c.kraft.describe_quorum(status=True)


# --- upgrading kraft.version 0 -> 1 (Kafka 4.1, KAFKA-16538) ------------------------------------
CONCURRENT_UPGRADE_TO_0 = (r"Invalid concurrent upgrade of kraft\.version from version "
                           r"Version\[kraftVersion=KRAFT_VERSION_1\] to KRAFT_VERSION_0")


def test_upgrade_kraft_version_makes_a_static_quorum_dynamic():
    """LeaderState.maybeAppendUpgradedKRaftVersion (apache/kafka PR #19416, 4.1): with every
    voter known to support kraft.version 1, the leader appends KRaftVersionRecord(1) and a
    VotersRecord with the voters' directory ids; then controllers can be added. The leader
    knows a voter's directory id and range once that voter's UpdateRaftVoter reached it
    (KafkaRaftClient.shouldSendUpdateVoteRequest, 4.1: each voter of a static quorum sends one
    to every new leader, one controller.quorum.fetch.timeout.ms after it began following: 4.1's
    FollowerState.updateVoterPeriodMs). Right after the election no voter has sent it yet."""
    c = Cluster(3, seed=SEED, kafka_version="4.1")
    assert c.run_until(lambda cl: cl.kraft.raft_leader() is not None, 3000)
    assert len(c.kraft.raft_leader().raft.state.volatile_voters) < 3   # the leader knows itself
    with pytest.raises(QuorumReconfigurationError, match="not all of the voters support it"):
        c.kraft.update_features({"kraft.version": 1})
    assert c.run_until(lambda cl: len(cl.kraft.raft_leader().raft.state.volatile_voters) == 3,
                       10000)
    before = c.kraft.metadata_log()
    assert c.kraft.update_features({"kraft.version": 1}, validate_only=True) == \
        {"kraft.version": 1}
    assert c.kraft.metadata_log() == before             # validate_only appends nothing
    assert c.kraft.update_features({"kraft.version": 1}) == {"kraft.version": 1}
    names = records_of(c)
    i = names.index("KRaftVersionRecord")
    assert names[i + 1] == "VotersRecord"
    assert c.kraft.dynamic
    assert f'"directoryId": "{directory_id(3000, SEED)}"' in c.kraft.describe_quorum(status=True)
    c.kraft.start_controller(3003)
    c.run(1000)
    c.kraft.add_controller(controller_config(3003))
    assert c.kraft.voters == (3000, 3001, 3002, 3003)
    # the leader of the upgrade's epoch remembers it (LeaderState's KRaftVersionUpgrade.Version,
    # LeaderState.java:466@4.4): another version is a "concurrent upgrade" there; a later
    # leader would call it a downgrade (the persisted version is higher)
    with pytest.raises(QuorumReconfigurationError, match=CONCURRENT_UPGRADE_TO_0):
        c.kraft.update_features({"kraft.version": 0})


def test_upgrade_kraft_version_refused_until_every_voter_is_known():
    """maybeAppendUpgradedKRaftVersion: 'not all of the voters support it' while the leader has
    not heard from a voter in its epoch (Kafka: its UpdateRaftVoter); nothing is appended."""
    c = Cluster(3, seed=SEED, kafka_version="4.1")
    c.run(3000)
    leader = c.kraft.raft_leader()
    down = max(i for i in c.kraft.voters if i != leader.id)
    c.crash(down)
    leader.raft.resign(leader)
    c.run(3000)
    assert c.kraft.raft_leader() is not None
    before = len(c.kraft.metadata_log())
    with pytest.raises(QuorumReconfigurationError) as err:
        c.kraft.update_features({"kraft.version": 1})
    assert str(err.value) == ("org.apache.kafka.common.errors.InvalidUpdateVersionException: "
                              "Invalid upgrade of kraft.version to KRAFT_VERSION_1 because not "
                              "all of the voters support it")
    assert len(c.kraft.metadata_log()) - before <= 3 and not c.kraft.dynamic   # NoOps only


def test_release_version_upgrade_turns_a_static_quorum_dynamic():
    """KAFKA-21426 (the trap): ``kafka-features upgrade --release-version`` upgrades every
    feature, kraft.version included, so a static quorum (controller.quorum.voters) becomes
    dynamic -- irreversibly -- in a routine upgrade step."""
    c = Cluster(3, seed=SEED, kafka_version="4.3")
    c.run(10000)         # every voter's UpdateRaftVoter has reached the leader (KAFKA-16538)
    assert not c.kraft.dynamic
    assert c.kraft.update_features(release_version="4.3") == {"kraft.version": 1}
    assert c.kraft.dynamic
    with pytest.raises(QuorumReconfigurationError, match=CONCURRENT_UPGRADE_TO_0):
        c.kraft.update_features({"kraft.version": 0})


def test_kraft_version_cannot_be_upgraded_before_4_1():
    c = Cluster(3, seed=SEED, kafka_version="4.0")
    c.run(3000)
    with pytest.raises(ClusterError, match="upgrading it came in 4.1"):
        c.kraft.update_features({"kraft.version": 1})
    assert c.kraft.update_features(release_version="4.0") == {}
    assert not c.kraft.dynamic


@pytest.mark.parametrize(("features", "release", "message"), [
    (None, None, "exactly one of"),
    ({"kraft.version": 1}, "4.1", "exactly one of"),
    ({"foo.version": 1}, None, "only kraft.version"),
    ({"metadata.version": 27, "kraft.version": 1}, None, "only kraft.version"),
    ({"kraft.version": 2}, None, "must be 0 or 1"),
    (None, "9.9", "not a release"),
])
def test_update_features_bad_input_changes_nothing(features, release, message):
    c = Cluster(3, seed=SEED, kafka_version="4.1")
    c.run(3000)
    before = (c.now, len(c.kraft.metadata_log()))
    with pytest.raises(ClusterError, match=message):
        c.kraft.update_features(features, release_version=release)
    assert (c.now, len(c.kraft.metadata_log())) == before


# --- auto-join (controller.quorum.auto.join.enable, 4.2, KAFKA-19078) -----------------------------
@PERIODS
def test_observer_auto_joins(period):
    """KafkaRaftClientAutoJoinTest (apache/kafka PR #19589): an observer controller of a dynamic
    quorum with controller.quorum.auto.join.enable sends AddRaftVoter for itself once its
    update-voter-set period (one controller.quorum.fetch.timeout.ms from 4.1, three before:
    ``period``) has passed, and becomes a voter after the leader's checks."""
    wait = PERIOD[period]
    c = dynamic_cluster("4.2", config_extra={"controller.quorum.auto.join.enable": True},
                        rules=_rules(period))
    c.kraft.start_controller(3003)
    started = c.now
    c.run(wait - 500)
    assert c.kraft.voters == (3000, 3001, 3002)          # not before one period
    c.run(1500)
    assert c.kraft.voters == (3000, 3001, 3002, 3003)
    [row] = [r for r in c.trace.rows if r[1] == "raft_voter_change"]
    assert (row[5].operation, row[5].voter, row[5].error) == ("add", 3003, "NONE")
    assert row[0] - started >= wait


def _format_again(c: Cluster, node_id: int) -> str:
    """kafka-storage format of a crashed controller's metadata log dir once more: it comes back
    with a new directory id (here: the one the next seed would give). Returns it."""
    new = directory_id(node_id, SEED + 1)
    c.kraft.nodes[node_id].raft.reconfig.directory_id = new
    return new


def _voter_changes(c: Cluster, since: int) -> list[tuple]:
    return [(r[5].operation, r[5].voter, r[5].error) for r in c.trace.rows
            if r[1] == "raft_voter_change" and r[0] >= since]


@PERIODS
def test_observer_removes_old_voter_and_auto_joins(period):
    """KafkaRaftClientAutoJoinTest.testObserverRemovesOldVoterAndAutoJoins (and
    testAutoRemoveOldVoter): a voter whose log dir was formatted again starts with a new
    directory id, so it is an observer (QuorumState: the voter set's entry for its id has the
    old directory id). With controller.quorum.auto.join.enable its first update-voter-set
    period (``period``: one controller.quorum.fetch.timeout.ms from 4.1, three before) sends
    RemoveRaftVoter for (its id, the old
    directory id); a later period, with the voter set no longer holding its id, sends
    AddRaftVoter for itself, and it is a voter again under its new directory id. Before,
    kafkasim decided "voter or observer" only when the voter set changed, so the restarted
    node went on as a voter under a key that was not its own and nothing was removed."""
    wait = PERIOD[period]
    c = dynamic_cluster("4.2", config_extra={"controller.quorum.auto.join.enable": True},
                        rules=_rules(period))
    leader = c.kraft.raft_leader().id
    victim = max(i for i in c.kraft.voters if i != leader)
    c.crash(victim)
    new_dir = _format_again(c, victim)
    started = c.now
    c.start(victim)
    node = c.kraft.nodes[victim]
    assert node.raft.observer and c.kraft.voters == (3000, 3001, 3002)
    c.run(wait - 100)
    assert _voter_changes(c, started) == []                # not before one period
    c.run(1000)
    assert _voter_changes(c, started) == [("remove", victim, "NONE")]
    assert victim not in c.kraft.voters and node.raft.observer
    c.run(wait + 500)
    assert _voter_changes(c, started) == [("remove", victim, "NONE"), ("add", victim, "NONE")]
    assert c.kraft.voters == (3000, 3001, 3002) and not node.raft.observer
    voters = c.kraft.nodes[leader].raft.reconfig.history.last_value()
    assert voters.voter_node(victim).voter_key == ReplicaKey(victim, new_dir)
    c.run(7000)                                            # up to date: nothing more is sent
    assert len(_voter_changes(c, started)) == 2


def test_observer_does_not_remove_old_voter_when_auto_join_disabled():
    """KafkaRaftClientAutoJoinTest.testObserverDoesNotAddItselfWhenAutoJoinDisabled, for the
    removal half: without controller.quorum.auto.join.enable the reformatted controller stays
    an observer and the voter set keeps its old key (an operator runs remove-controller /
    add-controller)."""
    c = dynamic_cluster("4.2")
    leader = c.kraft.raft_leader().id
    victim = max(i for i in c.kraft.voters if i != leader)
    c.crash(victim)
    _format_again(c, victim)
    started = c.now
    c.start(victim)
    c.run(15_000)
    assert _voter_changes(c, started) == []
    assert c.kraft.voters == (3000, 3001, 3002) and c.kraft.nodes[victim].raft.observer
    voters = c.kraft.nodes[leader].raft.reconfig.history.last_value()
    assert voters.voter_node(victim).voter_key == key(victim)


def test_auto_join_is_off_by_default():
    """controller.quorum.auto.join.enable defaults to false: the observer stays one."""
    c = dynamic_cluster("4.2")
    c.kraft.start_controller(3003)
    c.run(10_000)
    assert c.kraft.voters == (3000, 3001, 3002)
    assert c.kraft.nodes[3003].raft.observer


def test_describe_while_the_leader_is_not_a_voter():
    """MetadataQuorumCommand.handleDescribeStatus / handleDescribeReplication look the leader up
    among the voters with Optional.get(): between a leader's self-removal and its resignation
    the tool fails (NoSuchElementException); kafkasim says why."""
    c = dynamic_cluster()
    leader = c.kraft.raft_leader()
    others = [i for i in c.kraft.voters if i != leader.id]
    c.partition_network([leader.id], others + [1, 2, 3])   # the record cannot commit
    leader.raft.reconfig.remove_voter(leader, key(leader.id))
    with pytest.raises(ClusterError, match="NoSuchElementException: No value present"):
        c.kraft.describe_quorum(status=True)


# --- UpdateRaftVoter (KIP-853) ------------------------------------------------------------------
def _update_voter(c: Cluster, voter_id: int, directory: str | None, endpoints=None,
                  supported=(0, 1)) -> str:
    """An UpdateRaftVoter request handed to the Raft leader's client; its answer's error."""
    from kafkasim.control.kraft import raft_messages as M
    leader = c.kraft.raft_leader()
    endpoints = endpoints or (("CONTROLLER", f"controller{voter_id}", 9093),)
    req = M.UpdateRaftVoterRequest(1, voter_id, directory, leader.raft.epoch, supported,
                                   endpoints)
    return leader.raft._handler._handle_update_raft_voter_request(leader, voter_id, req).error


@PERIODS
def test_follower_sends_update_voter(period):
    """KafkaRaftClientReconfigTest.testFollowerSendsUpdateVoter / testUpdateVoter: a voter whose
    listeners differ from its entry in the voter set (VoterSet.voterNodeNeedsUpdate) sends
    UpdateRaftVoter in place of a Fetch once its update-voter period (``period``: one
    controller.quorum.fetch.timeout.ms from 4.1, three before) expires; the leader appends the
    VotersRecord with the new entry and answers NONE at once; the voter then fetches as usual.
    Before, kafkasim had no UpdateRaftVoter and the voter set kept the old listener."""
    wait = PERIOD[period]
    c = dynamic_cluster("4.1", rules=_rules(period))
    leader = c.kraft.raft_leader().id
    victim = max(i for i in c.kraft.voters if i != leader)
    c.crash(victim)
    node = c.kraft.nodes[victim]
    node.raft.reconfig.listeners = (("CONTROLLER", f"controller{victim}", 19093),)  # new port
    started = c.now
    c.start(victim)
    c.run(wait - 100)
    assert _voter_changes(c, started) == []
    c.run(1000)
    assert _voter_changes(c, started) == [("update", victim, "NONE")]
    voters = c.kraft.nodes[leader].raft.reconfig.history.last_value()
    assert voters.voter_node(victim).endpoints == (("CONTROLLER", f"controller{victim}", 19093),)
    assert c.kraft.voters == (3000, 3001, 3002)
    assert f"CONTROLLER://controller{victim}:19093" in c.kraft.describe_quorum(status=True)
    c.run(7000)                                            # up to date: sent once
    assert len(_voter_changes(c, started)) == 1


def test_update_voter_checks():
    """KafkaRaftClientReconfigTest.testUpdateVoterWithNoneVoter / testUpdateVoterWithNoneVoterId
    / testInvalidUpdateVoter-style checks (KafkaRaftClient.handleUpdateVoterRequest,
    UpdateVoterHandler): a key that is not a voter -> VOTER_NOT_FOUND, no directory id or no
    CONTROLLER listener or a range without the finalized kraft.version -> INVALID_REQUEST.
    Nothing is appended. A static quorum (kraft.version 0): see
    test_update_voter_on_a_static_quorum_by_version."""
    c = dynamic_cluster("4.1")
    end = c.kraft.raft_leader().raft.log.end_offset
    assert _update_voter(c, 3001, directory_id(3001, SEED + 1)) == "VOTER_NOT_FOUND"
    assert _update_voter(c, 3009, directory_id(3009, SEED)) == "VOTER_NOT_FOUND"
    assert _update_voter(c, 3001, None) == "INVALID_REQUEST"
    assert _update_voter(c, 3001, directory_id(3001, SEED),
                         endpoints=(("PLAINTEXT", "h", 9092),)) == "INVALID_REQUEST"
    assert _update_voter(c, 3001, directory_id(3001, SEED), supported=(0, 0)) == \
        "INVALID_REQUEST"
    assert c.kraft.raft_leader().raft.log.end_offset == end


def _update_voter_sends(c: Cluster, since: int = 0) -> list[tuple[int, int, int]]:
    """(time, sender, leader) of each UpdateRaftVoterRequest put on the wire since then."""
    return [(r[0], r[2], r[5][1]) for r in c.trace.rows if r[0] >= since and r[1] == "send"
            and r[5][0] == "UpdateRaftVoterRequest"]


def test_update_voter_on_a_static_quorum_by_version():
    """UpdateRaftVoter to a leader whose kraft.version is 0 (controller.quorum.voters).
    3.9 and 4.0 (UpdateVoterHandler.handleUpdateVoterRequest @3.9.0, KAFKA-16533: "Check that
    the cluster supports kraft.version >= 1"): UNSUPPORTED_VERSION, and the voters of a static
    quorum never send it (KafkaRaftClient.pollFollowerAsVoter: only when
    ``voterNodeNeedsUpdate`` at kraft.version 1). 4.1+ (KAFKA-16538, apache/kafka PR #19416):
    KafkaRaftClient.shouldSendUpdateVoteRequest sends it to every new leader until that leader
    answers (``!state.hasUpdatedLeader()``), 3 x controller.quorum.fetch.timeout.ms after the
    voter began following; the leader keeps the voter's directory id and kraft.version range
    in memory (``leaderState.volatileVoters()``, ``compareAndSetVolatileVoters``), appends
    nothing and answers NONE; handleUpdateVoterResponse then sets ``hasUpdatedLeader`` on
    NONE or UNSUPPORTED_VERSION (and resets the fetch timeout), so the voter sends no other
    UpdateRaftVoter to that leader. A new leader gets one from each voter again."""
    old = Cluster(3, seed=SEED, kafka_version="4.0")
    old.run(15000)
    assert _update_voter_sends(old) == []
    assert _update_voter(old, 3001, directory_id(3001, SEED)) == "UNSUPPORTED_VERSION"

    c = Cluster(3, seed=SEED, kafka_version="4.1")
    c.run(3000)
    leader = c.kraft.raft_leader()
    assert c.run_until(lambda cl: len(leader.raft.state.volatile_voters) == 3, 10000)
    sends = _update_voter_sends(c)
    assert sorted(s[1] for s in sends) == sorted(v for v in c.kraft.voters if v != leader.id)
    assert {s[2] for s in sends} == {leader.id}
    assert "VotersRecord" not in records_of(c)                  # nothing written
    assert leader.raft.state.volatile_voters[3001 if leader.id != 3001 else 3000][0] is not None
    c.run(20000)
    assert len(_update_voter_sends(c)) == 2                      # once per voter and leader
    assert all(c.kraft.nodes[v].raft.state.has_updated_leader
               for v in c.kraft.voters if v != leader.id)
    t = c.now
    leader.raft.resign(leader)
    c.run(15000)
    new = c.kraft.raft_leader()
    again = _update_voter_sends(c, t)
    assert new is not None and {s[2] for s in again} == {new.id} and len(again) == 2


def test_update_voter_unsupported_version_answer_stops_the_voter():
    """KafkaRaftClient.handleUpdateVoterResponse (4.1+): UNSUPPORTED_VERSION -- the answer of a
    leader that cannot take it (a 3.9 / 4.0 leader in a rolling upgrade) -- counts as done:
    ``setHasUpdatedLeader`` and ``resetFetchTimeoutForSuccessfulFetch``; any other error is
    unexpected (``handleUnexpectedError``: the request manager backs off)."""
    from kafkasim.control.kraft import raft_messages as M
    c = Cluster(3, seed=SEED, kafka_version="4.1")
    c.run(3000)
    leader = c.kraft.raft_leader()
    follower = c.kraft.nodes[min(v for v in c.kraft.voters if v != leader.id)]
    st = follower.raft.state
    st.fetch_deadline = c.now + 5
    handler = follower.raft._handler
    resp = M.UpdateRaftVoterResponse(1, "UNSUPPORTED_VERSION", leader.id, st.epoch)
    assert handler._handle_update_raft_voter_response(follower, leader.id, resp) is True
    assert st.has_updated_leader and st.fetch_deadline == c.now + follower.raft.fetch_timeout_ms
    st.has_updated_leader = False
    resp = M.UpdateRaftVoterResponse(2, "VOTER_NOT_FOUND", leader.id, st.epoch)
    assert handler._handle_update_raft_voter_response(follower, leader.id, resp) is False
    assert not st.has_updated_leader
