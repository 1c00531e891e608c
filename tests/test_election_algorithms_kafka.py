"""Leader election algorithms, ported from Kafka's controller unit tests.

Part 1 ports core/src/test/scala/unit/kafka/controller/PartitionLeaderElectionAlgorithmsTest.scala
(tag 3.7.0; the 13 tests and the algorithms in PartitionStateMachine.scala's object
PartitionLeaderElectionAlgorithms are the same at 2.4.0) to kafkasim's ZooKeeper-mode election
rules in ``kafkasim.core.rules``, with the exact inputs of each Kafka test. Kafka's
``uncleanLeaderElectionRate`` meter is marked only when an unclean leader is really chosen; the
kafkasim function reports that as its second return value (the controller then bumps
``UncleanLeaderElectionsPerSec``), so the meter assertions become assertions on that flag.

Part 2 adds cases read off the Scala algorithms themselves (assignment order beats ISR order, no
fallback for the preferred election, ...), part 3 the controller-side wrappers of
kafka/controller/Election.scala (3.7.0) as ``KafkaController._elect`` runs them, and part 4 the
version rule for the default of ``unclean.leader.election.enable`` (KIP-106, 0.11.0).

Part 5 runs the same four situations through the KRaft counterpart, the election ladder of
``kafkasim.control.kraft.partition_change`` (PartitionChangeBuilder.electLeader /
electPreferredLeader / electAnyLeader, metadata module, 3.7.0), only where
tests/test_partition_change_builder.py does not already cover the case. The compact assertions
in tests/test_rules.py are not repeated beyond the one-to-one port.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.partition_change import Election, PartitionChangeBuilder
from kafkasim.control.kraft.records import NO_LEADER, PartitionRegistration
from kafkasim.core import rules
from kafkasim.runtime.cluster import Cluster

offline = rules.offline_partition_leader_election
reassign = rules.reassign_partition_leader_election
preferred = rules.preferred_replica_partition_leader_election
controlled_shutdown = rules.controlled_shutdown_partition_leader_election


# -- 1. PartitionLeaderElectionAlgorithmsTest (3.7.0), one test per Kafka test -------------------
def test_offline_partition_leader_election():
    # Kafka 3.7.0: testOfflinePartitionLeaderElection. Replica 2 is dead; 4 is alive and in sync.
    leader, unclean = offline([2, 4], [2, 4], {4}, False)
    assert leader == 4
    assert unclean is False


def test_offline_last_isr_offline_unclean_disabled():
    # Kafka 3.7.0: testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionDisabled.
    # Only out-of-sync 4 is alive and unclean election is off: no leader, meter not marked.
    leader, unclean = offline([2, 4], [2], {4}, False)
    assert leader is None
    assert unclean is False   # uncleanLeaderElectionRate.count() == 0


def test_offline_last_isr_offline_unclean_enabled():
    # Kafka 3.7.0: testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionEnabled.
    # With unclean election on, live out-of-sync 4 leads and the unclean meter is marked once.
    leader, unclean = offline([2, 4], [2], {4}, True)
    assert leader == 4
    assert unclean is True    # uncleanLeaderElectionRate.count() == 1


def test_reassign_partition_leader_election():
    # Kafka 3.7.0: testReassignPartitionLeaderElection. Target replica 2 is not alive, so the
    # next target replica that is alive and in sync, 4, leads.
    assert reassign([2, 4], [2, 4], {4}) == 4


def test_reassign_partition_leader_election_with_no_live_isr():
    # Kafka 3.7.0: testReassignPartitionLeaderElectionWithNoLiveIsr.
    assert reassign([2, 4], [2], set()) is None


def test_reassign_partition_leader_election_with_empty_isr():
    # Kafka 3.7.0: testReassignPartitionLeaderElectionWithEmptyIsr. 2 is alive but not in sync.
    assert reassign([2, 4], [], {2}) is None


def test_preferred_replica_partition_leader_election():
    # Kafka 3.7.0: testPreferredReplicaPartitionLeaderElection.
    assert preferred([2, 4], [2, 4], {2, 4}) == 2


def test_preferred_replica_in_isr_not_live():
    # Kafka 3.7.0: testPreferredReplicaPartitionLeaderElectionPreferredReplicaInIsrNotLive.
    assert preferred([2, 4], [2], set()) is None


def test_preferred_replica_not_in_isr_live():
    # Kafka 3.7.0: testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrLive.
    # 4 is alive and in sync, but only the preferred replica may win this election.
    assert preferred([2, 4], [4], {2, 4}) is None


def test_preferred_replica_not_in_isr_not_live():
    # Kafka 3.7.0: testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrNotLive.
    assert preferred([2, 4], [], set()) is None


def test_controlled_shutdown_partition_leader_election():
    # Kafka 3.7.0: testControlledShutdownPartitionLeaderElection.
    assert controlled_shutdown([2, 4], [2, 4], {2, 4}, {2}) == 4


def test_controlled_shutdown_last_isr_shutting_down():
    # Kafka 3.7.0: testControlledShutdownPartitionLeaderElectionLastIsrShuttingDown.
    assert controlled_shutdown([2, 4], [2], {2, 4}, {2}) is None


def test_controlled_shutdown_all_isr_simultaneously_shutdown():
    # Kafka 3.7.0: testControlledShutdownPartitionLeaderElectionAllIsrSimultaneouslyShutdown.
    assert controlled_shutdown([2, 4], [2, 4], {2, 4}, {2, 4}) is None


# -- 2. cases read off object PartitionLeaderElectionAlgorithms (PartitionStateMachine.scala) ----
def test_offline_election_walks_the_assignment_not_the_isr():
    # offlinePartitionLeaderElection @3.7.0: ``assignment.find(live && in isr)``: the ISR's own
    # order does not matter; the first eligible replica of the assignment wins.
    assert offline([1, 2, 3], [3, 2], {2, 3}, False) == (2, False)


def test_offline_election_prefers_a_clean_leader_even_when_unclean_is_enabled():
    # offlinePartitionLeaderElection @3.7.0: the unclean branch is only the ``orElse`` of a
    # failed clean search, so a clean candidate wins and the meter is not marked.
    assert offline([1, 2, 3], [3], {2, 3}, True) == (3, False)


def test_unclean_election_takes_the_first_live_replica_of_the_assignment():
    # offlinePartitionLeaderElection @3.7.0: ``assignment.find(liveReplicas.contains)``.
    assert offline([1, 2, 3], [1], {3, 2}, True) == (2, True)


def test_unclean_election_without_live_replicas_does_not_count_as_unclean():
    # offlinePartitionLeaderElection @3.7.0 marks uncleanLeaderElectionRate only when the unclean
    # search found a leader (``if (leaderOpt.isDefined)``).
    assert offline([2, 4], [2], set(), True) == (None, False)


def test_reassign_election_follows_the_target_replica_order():
    # reassignPartitionLeaderElection @3.7.0: the first eligible replica of the reassignment.
    assert reassign([4, 2], [2, 4], {2, 4}) == 4


def test_preferred_election_of_an_empty_assignment_elects_nobody():
    # preferredReplicaPartitionLeaderElection @3.7.0: ``assignment.headOption``.
    assert preferred([], [2], {2}) is None


def test_controlled_shutdown_election_needs_a_live_replica():
    # controlledShutdownPartitionLeaderElection @3.7.0: live, in the ISR and not shutting down;
    # 4 is in sync and not shutting down, but not alive.
    assert controlled_shutdown([2, 4], [2, 4], {2}, {2}) is None
    # the assignment order again decides among several candidates
    assert controlled_shutdown([3, 1, 2], [1, 2, 3], {1, 2, 3}, {3}) == 1


# -- 3. the controller side: Election.scala (3.7.0) as KafkaController._elect runs it -----------
def _zk_cluster(version: str = "3.7") -> tuple[Cluster, object]:
    c = Cluster(brokers=3, seed=1, kafka_version=version,
                config={"auto.leader.rebalance.enable": False})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(2000)
    return c, c.zk_control_plane.controller_broker()


def _zk_state(c: Cluster) -> dict:
    return c.zk.get("/brokers/topics/t/partitions/0/state").json()


def test_preferred_election_skips_a_shutting_down_preferred_replica():
    # Election.leaderForPreferredReplica @3.7.0 filters the assignment with
    # ControllerContext.isReplicaOnline(replica, tp), whose default excludes shuttingDownBrokerIds
    # (liveBrokerIds = live -- shutting down). A preferred replica that is shutting down is thus
    # not "live": the election fails and nothing is written.
    c, ctl = _zk_cluster()
    tp = ("t", 0)
    before = _zk_state(c)
    assert before["leader"] == 1
    ctl.controller.context.shutting_down.append(1)
    assert ctl.controller.handle_state_changes(ctl, c.zk, [tp], "preferred") == []
    assert _zk_state(c)["leader_epoch"] == before["leader_epoch"]


def test_offline_election_treats_shutting_down_replicas_as_offline():
    # Election.leaderForOffline @3.7.0: liveReplicas = assignment filtered by isReplicaOnline
    # (shutting-down brokers excluded), and a clean new ISR = the old ISR filtered the same way.
    # Broker 1 (leader, first in the assignment) is shutting down: 2 leads with ISR [2, 3].
    c, ctl = _zk_cluster()
    tp = ("t", 0)
    ctl.controller.context.shutting_down.append(1)
    assert ctl.controller.handle_state_changes(ctl, c.zk, [tp], "offline") == [tp]
    st = _zk_state(c)
    assert (st["leader"], st["isr"]) == (2, [2, 3])


def test_controlled_shutdown_election_drops_shutting_down_brokers_from_the_isr():
    # Election.leaderForControlledShutdown @3.7.0: live-or-shutting-down replicas are candidates
    # to the algorithm (which then skips shutting-down ones); the new ISR is the old one minus
    # every shutting-down broker; LeaderAndIsr.newLeaderAndIsr bumps the leader epoch.
    c, ctl = _zk_cluster()
    tp = ("t", 0)
    epoch = _zk_state(c)["leader_epoch"]
    ctl.controller.context.shutting_down.extend([1, 2])
    assert ctl.controller.handle_state_changes(ctl, c.zk, [tp], "controlled_shutdown") == [tp]
    st = _zk_state(c)
    assert (st["leader"], st["isr"], st["leader_epoch"]) == (3, [3], epoch + 1)


def _cut_off_followers(version: str, topic_config: dict | None = None) -> Cluster:
    """Followers 2 and 3 are cut off from leader 1, which takes an acks=1 write alone, until the
    ISR is [1]; then 1 dies and the network heals: only out-of-sync replicas are alive (the
    offline-unclean-on scenario)."""
    c = Cluster(brokers=3, seed=9, kafka_version=version,
                config={"replica.lag.time.max.ms": 10000, "auto.leader.rebalance.enable": False})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]], config=topic_config or {})
    p = c.producer(acks="1")
    p.send("t", "e0", partition=0)
    c.run(2000)
    c.cut(1, 2)
    c.cut(1, 3)
    p.send("t", "only-on-1", partition=0)
    assert c.run_until(lambda cl: cl.isr("t") == [1], 30000)
    c.crash(1)
    c.heal()
    return c


@pytest.mark.parametrize(("version", "recovery_state"), [
    # 3.1.0: Election.leaderForOffline knows no leader recovery state; the znode has no field
    ("3.1", None),
    ("3.7", 1),
])
def test_zk_unclean_election_marks_the_partition_recovering(version, recovery_state):
    # Election.leaderForOffline @3.7.0: a new leader outside the old ISR, with
    # isLeaderRecoverySupported (inter.broker.protocol.version >= 3.2-IV0, true by default in
    # 3.7), gets leaderAndIsr.newRecoveringLeaderAndIsr; TopicPartitionStateZNode.encode then
    # writes "leader_recovery_state": 1 into the state znode. The first write of the new leader
    # is the election's (the leader may later report RECOVERED through AlterPartition).
    c = _cut_off_followers(version, {"unclean.leader.election.enable": True})
    assert c.run_until(lambda cl: _zk_state(cl)["leader"] == 2, 30000)
    st = _zk_state(c)
    assert st["isr"] == [2]
    assert st.get("leader_recovery_state") == recovery_state


# -- 4. version rule: the default of unclean.leader.election.enable (KIP-106) -------------------
@pytest.mark.parametrize(("version", "leader", "unclean_count"), [
    # before 0.11.0 the default was true: out-of-sync 2 (first live in the assignment) leads
    ("0.10.2", 2, 1),
    # KIP-106 (0.11.0): default false; the partition stays offline and the ISR keeps 1. Broker 1
    # was also the controller: before KAFKA-3143 (2.3.0) the new controller's failover leaves the
    # replicas of dead brokers alone (ReplicaDeletionIneligible) and the failed election writes
    # nothing, so the znode keeps dead leader 1; since 2.3 ReplicaStateMachine.startup takes
    # them OfflineReplica: leader -1
    ("0.11.0", 1, 0),
    ("2.2", 1, 0),
    ("2.3", -1, 0),
    ("3.7", -1, 0),
])
def test_default_unclean_leader_election_by_version(version, leader, unclean_count):
    # PartitionStateMachine (ZK controller) + offlinePartitionLeaderElection, with the topic's
    # default unclean.leader.election.enable (LogConfig / KafkaConfig defaults by release).
    c = _cut_off_followers(version)
    c.run(25000)
    st = _zk_state(c)
    assert st["leader"] == leader
    # offline: the ISR keeps its last member; elected: the new leader started alone in the ISR
    # (3, alive again, may have caught up and rejoined since)
    if leader in (-1, 1):
        assert st["isr"] == [1]
    else:
        assert st["isr"][0] == 2 and 1 not in st["isr"]
    assert sum(b.meters["UncleanLeaderElectionsPerSec"] for b in c.brokers.values()) == \
        unclean_count


# -- 5. KRaft counterpart: PartitionChangeBuilder's election ladder (3.7.0) ----------------------
def _builder(replicas, isr, leader, acceptable, election=Election.ONLINE):
    """A builder over a partition whose current state is (replicas, isr, leader), with ELR off;
    ``acceptable`` plays ReplicationControlManager's isAcceptableLeader (registered, unfenced and
    not in controlled shutdown)."""
    part = PartitionRegistration(replicas=tuple(replicas), isr=tuple(isr), leader=leader,
                                 leader_epoch=10, partition_epoch=20)
    return PartitionChangeBuilder(part, "AAAAAAAAAAAAAAAAAAAAAA", 0, lambda r: r in acceptable,
                                  "3.7-IV4", 2).set_election(election)


def _elected(builder) -> tuple[int, bool]:
    r = builder.elect_leader()
    return r.node, r.unclean


def test_kraft_online_election_walks_the_assignment_not_the_isr():
    # KRaft side of testOfflinePartitionLeaderElection (3.7.0): electAnyLeader drops a leader that
    # is no longer acceptable and takes the first valid replica of targetReplicas.
    assert _elected(_builder([2, 4], [2, 4], 2, {4})) == (4, False)
    assert _elected(_builder([1, 2, 3], [3, 2, 1], 1, {2, 3})) == (2, False)


def test_kraft_online_election_without_acceptable_isr_member_elects_nobody():
    # KRaft side of testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionDisabled
    # (3.7.0): ONLINE never leaves the ISR.
    assert _elected(_builder([2, 4], [2], 2, {4})) == (NO_LEADER, False)


def test_kraft_unclean_election_takes_the_first_acceptable_replica():
    # KRaft side of testOfflinePartitionLeaderElectionLastIsrOfflineUncleanLeaderElectionEnabled
    # (3.7.0): UNCLEAN falls back to targetReplicas.filter(isAcceptableLeader) and says unclean.
    assert _elected(_builder([2, 4], [2], 2, {4}, Election.UNCLEAN)) == (4, True)
    # with nobody acceptable there is no leader and nothing unclean to count
    assert _elected(_builder([2, 4], [2], 2, set(), Election.UNCLEAN)) == (NO_LEADER, False)


def test_kraft_reassignment_election_follows_the_target_replicas():
    # KRaft side of testReassignPartitionLeaderElection / ...WithNoLiveIsr / ...WithEmptyIsr
    # (3.7.0): the candidates are setTargetReplicas' order, filtered by ISR and acceptability.
    b = _builder([2, 4], [2, 4], NO_LEADER, {2, 4}).set_target_replicas([4, 2])
    assert _elected(b) == (4, False)
    b = _builder([2, 4], [2], NO_LEADER, set()).set_target_replicas([2, 4])
    assert _elected(b) == (NO_LEADER, False)
    b = _builder([2, 4], [2], NO_LEADER, {2}).set_target_replicas([2, 4]).set_target_isr([])
    assert _elected(b) == (NO_LEADER, False)


def test_kraft_preferred_election_falls_back_unlike_zookeeper():
    # KRaft side of testPreferredReplicaPartitionLeaderElectionPreferredReplicaNotInIsrLive
    # (3.7.0). ZooKeeper mode elects nobody (headOption only); electPreferredLeader keeps a still
    # valid current leader, else takes the next valid target replica.
    assert _elected(_builder([2, 4, 5], [4, 5], 5, {2, 4, 5}, Election.PREFERRED)) == (5, False)
    assert _elected(_builder([2, 4, 5], [4, 5], 5, {2, 4}, Election.PREFERRED)) == (4, False)
    # ...InIsrNotLive / ...NotInIsrNotLive: nobody valid, no leader
    assert _elected(_builder([2, 4], [2], 2, set(), Election.PREFERRED)) == (NO_LEADER, False)
    assert _elected(_builder([2, 4], [], NO_LEADER, set(), Election.PREFERRED)) == \
        (NO_LEADER, False)


def test_kraft_controlled_shutdown_election_skips_unacceptable_replicas():
    # KRaft side of the three testControlledShutdownPartitionLeaderElection* tests (3.7.0): a
    # broker in controlled shutdown is not an acceptable leader, so it is passed over.
    assert _elected(_builder([2, 4], [2, 4], 2, {4})) == (4, False)
    assert _elected(_builder([2, 4], [2], 2, {4})) == (NO_LEADER, False)
    assert _elected(_builder([2, 4], [2, 4], 2, set())) == (NO_LEADER, False)
