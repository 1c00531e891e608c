"""Kafka's ZooKeeper-mode controller state machine tests, ported to ``KafkaController``.

Sources (apache/kafka, tag 3.7.0, compared with 2.8.0):
``core/src/test/scala/unit/kafka/controller/PartitionStateMachineTest.scala``,
``ReplicaStateMachineTest.scala`` and the request-routing part of
``ControllerChannelManagerTest.scala``. At 2.8.0 the first two differ from 3.7.0 only by the
EasyMock-to-Mockito move and by ``testOfflinePartitionToUncleanOnlinePartitionTransition``, which
3.2+ runs with and without leader recovery (KIP-704); the 2.8/3.7 pairs below run both.

How the tests are adapted. Kafka drives ``ZkPartitionStateMachine`` / ``ZkReplicaStateMachine``
with a mocked ``KafkaZkClient`` and ``ControllerBrokerRequestBatch``. kafkasim has no separate
state-machine objects and no per-partition/per-replica state enums: ``KafkaController``
(``kafkasim.control.controller``) runs each transition as a method, against a real in-memory
``ZooKeeper`` (``kafkasim.control.zookeeper``), and sends requests through a context. Here the
context is ``kafkasim.core.fake.FakeContext``, whose ``sent`` list plays the request-batch mock.
The mapping:

* NewPartition -> OnlinePartition: ``on_new_topic`` (initializeLeaderAndIsrForPartitions).
* Online/OfflinePartition -> OnlinePartition with a strategy: ``handle_state_changes(ctx, zk,
  tps, strategy)``; OfflinePartitionLeaderElectionStrategy(false) is ``"offline"``, (true) is
  ``"unclean"``; ``"preferred"`` and ``"controlled_shutdown"`` as named.
* -> OfflineReplica: ``offline_replica``; OfflineReplica -> OnlineReplica: a broker registering
  again (``on_broker_change``, onBrokerStartup); OfflineReplica -> ReplicaDeletionStarted ->
  NonExistentReplica: a completed reassignment that removes the replica.
* The mocks' ``verify(updateLeaderAndIsr)`` become assertions on the state znode (leader,
  leader_epoch, isr, controller_epoch and its zkVersion, the partition epoch), and
  ``verify(addLeaderAndIsrRequestForBrokers/...)`` assertions on which broker got which
  LeaderAndIsr / UpdateMetadata / StopReplica. Kafka's batch drops requests to brokers that are
  neither live nor shutting down; kafkasim's sends do that filtering at once, so the ported tests
  register the brokers the Kafka test names as recipients.

A few tests are read off the 3.7.0 sources the unit tests exercise (named in each docstring):
``ZkPartitionStateMachine.initializeLeaderAndIsrForPartitions`` / ``doElectLeaderForPartitions``
/ ``collectUncleanLeaderElectionState``, ``Election.leaderForOffline``,
``ZkReplicaStateMachine.doRemoveReplicasFromIsr``, ``KafkaController.onBrokerFailure``.

Ported in tests/test_elect_s24_kafka.py (through ``ZkPartitionStateMachine`` /
``ZkReplicaStateMachine``, which keep the partition and replica states): every test that checks
a state value (testNonexistentPartitionToNewPartitionTransition, all ``testInvalid*Transition``
of both classes, testNewPartitionToOfflinePartitionTransition,
testOnlinePartitionToOfflineTransition, testOfflinePartitionToNonexistentPartitionTransition,
testNewReplicaToOnlineReplicaTransition, testReplicaDeletionStartedToReplicaDeletion*,
testOfflineReplicaToReplicaDeletionIneligibleTransition, testStartupOnlinePartition,
testStartupOfflinePartition, testStartupWithReplicaWithoutLeader, testUpdatingOfflinePartitions
Count). Left out, because kafkasim has no such feature: the ZooKeeperClientException
tests (no client exceptions in kafkasim's ZooKeeper); topic deletion (testUpdatingOfflinePartitions
CountDuringTopicDeletion, testNoOfflinePartitionsChangeForTopicsBeingDeleted, the
``*TopicDeletion*`` / ``*QueuedForDeletion*`` channel tests: ZK-mode topic deletion is not
modelled); the request-version, topic-id, isNew and
response-callback checks of ControllerChannelManagerTest (kafkasim's requests carry no version,
topic id or isNew flag, and there are no callbacks); testStopReplicaRequestWithAlreadyDefinedDeleted
Partition and testMixedDeleteAndNotDeleteStopReplicaRequests (no request batch that merges
StopReplica entries).
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import pytest

from kafkasim.control.controller import ControllerMovedError, KafkaController
from kafkasim.control.zookeeper import ZooKeeper, partition_state_json, partition_state_path
from kafkasim.core.fake import FakeContext
from kafkasim.core.messages import LeaderAndIsrRequest, StopReplicaRequest, UpdateMetadataRequest

BROKER_ID = 5  # PartitionStateMachineTest / ReplicaStateMachineTest: brokerId
CONTROLLER_EPOCH = 50  # controllerEpoch
TP = ("t", 0)  # new TopicPartition("t", 0)
VERSIONS = ["2.8", "3.7"]
UNCLEAN = "UncleanLeaderElectionsPerSec"


@dataclass
class Harness:
    """The controller under test with its ZooKeeper and the context that records what it sent."""

    ctx: FakeContext
    zk: ZooKeeper
    ctl: KafkaController

    def put_partition(
        self, tp, replicas, leader=None, isr=(), leader_epoch=0, controller_epoch=CONTROLLER_EPOCH
    ) -> None:
        """updatePartitionFullReplicaAssignment (+ putPartitionLeadershipInfo and the state znode
        when ``leader`` is given)."""
        topic, p = tp
        path = f"/brokers/topics/{topic}"
        node = self.zk.get(path)
        data = node.json() if node else {"version": 3, "partitions": {}}
        data = {**data, "partitions": {**data["partitions"], str(p): list(replicas)}}
        if node:
            self.zk.set(path, json.dumps(data))
        else:
            self.zk.create(path, json.dumps(data))
        self.ctl.context.assignments[tp] = tuple(replicas)
        if leader is not None:
            self.zk.create(
                partition_state_path(*tp),
                partition_state_json(leader, leader_epoch, isr, controller_epoch),
            )
            self.ctl.context.states[tp] = (leader, leader_epoch, tuple(isr), 0)

    def leader_write(self, tp, leader, leader_epoch, isr) -> None:
        """A pre-2.7 leader's own conditional write of its ISR (the controller does not see it)."""
        self.zk.set(
            partition_state_path(*tp),
            partition_state_json(leader, leader_epoch, isr, CONTROLLER_EPOCH),
        )

    def state(self, tp=TP) -> dict | None:
        node = self.zk.get(partition_state_path(*tp))
        if node is None:
            return None
        return {**node.json(), "zk_version": node.version}

    def sent(self, kind) -> list:
        return [(dst, msg) for dst, msg in self.ctx.sent if isinstance(msg, kind)]

    def recipients(self, kind) -> list[int]:
        return sorted(dst for dst, _ in self.sent(kind))

    def states_to(self, broker: int, kind=LeaderAndIsrRequest) -> list:
        """(topic, partition, leader, leader_epoch, isr, partition_epoch, replicas) of every
        partition state in ``kind`` requests to ``broker``."""
        return [
            (s.topic, s.partition, s.leader, s.leader_epoch, s.isr, s.partition_epoch, s.replicas)
            for dst, m in self.sent(kind)
            if dst == broker
            for s in m.partition_states
        ]


def _harness(
    live=(BROKER_ID,),
    *,
    version="3.7",
    shutting_down=(),
    controller_id=BROKER_ID,
    controller_epoch=CONTROLLER_EPOCH,
    topic_config=None,
) -> Harness:
    """new ControllerContext with ``epoch = controllerEpoch`` and ``setLiveBrokers(live)``: the
    live brokers are registered in ZooKeeper, the controller holds ``/controller_epoch``."""
    ctx = FakeContext(controller_id, kafka_version=version, topic_config=topic_config)
    ctx.meters[UNCLEAN] = 0
    zk = ZooKeeper()
    zk.create("/controller_epoch", str(controller_epoch))
    for b in live:
        zk.create(f"/brokers/ids/{b}", "{}")
    ctl = KafkaController(controller_id, controller_epoch)
    ctl.context.live_brokers = sorted(live)
    ctl.context.broker_epochs = {b: zk.get(f"/brokers/ids/{b}").czxid for b in live}
    ctl.context.shutting_down = list(shutting_down)
    return Harness(ctx, zk, ctl)


def _stop_replicas(h: Harness, broker: int) -> list[tuple[tuple, bool]]:
    return [(m.partitions, m.delete) for dst, m in h.sent(StopReplicaRequest) if dst == broker]


# -- PartitionStateMachineTest (3.7.0) -----------------------------------------------------------
@pytest.mark.parametrize("version", VERSIONS)
def test_new_partition_to_online_partition_transition(version):
    """testNewPartitionToOnlinePartitionTransition: the first live replica leads, the live
    replicas are the ISR; createTopicPartitionStatesRaw writes LeaderAndIsr(5, [5]) at leader
    epoch 0 with the controller epoch; LeaderAndIsr (isNew) goes to the ISR."""
    h = _harness(version=version)
    h.put_partition(TP, [BROKER_ID])
    h.ctl.on_new_topic(h.ctx, h.zk, "t")
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["controller_epoch"]) == (
        BROKER_ID,
        0,
        [BROKER_ID],
        CONTROLLER_EPOCH,
    )
    assert st["zk_version"] == 0
    assert h.states_to(BROKER_ID) == [("t", 0, BROKER_ID, 0, (BROKER_ID,), 0, (BROKER_ID,))]
    assert h.recipients(LeaderAndIsrRequest) == [BROKER_ID]
    assert h.recipients(UpdateMetadataRequest) == [BROKER_ID]
    assert h.ctl.context.states[TP] == (BROKER_ID, 0, (BROKER_ID,), 0)


def test_new_partition_to_online_partition_transition_error_code_from_create_states():
    """testNewPartitionToOnlinePartitionTransitionErrorCodeFromCreateStates: the create of the
    state znode answers NODEEXISTS: the partition stays NewPartition, nothing is written and no
    LeaderAndIsr is added to the batch."""
    h = _harness()
    h.put_partition(TP, [BROKER_ID])
    h.zk.create(partition_state_path(*TP), partition_state_json(7, 3, [7], CONTROLLER_EPOCH - 1))
    before = h.state()
    h.ctl.on_new_topic(h.ctx, h.zk, "t")
    assert h.state() == before
    assert h.sent(LeaderAndIsrRequest) == []


def test_new_partition_without_live_replicas_is_not_initialized():
    """initializeLeaderAndIsrForPartitions @3.7.0 (and 2.8.0): a new partition none of whose
    replicas is online fails the New -> Online transition ("No assigned replica is alive"): no
    state znode is created and no LeaderAndIsr is sent; it stays NewPartition."""
    h = _harness(live=(BROKER_ID,))
    h.put_partition(TP, [6, 7])
    h.ctl.on_new_topic(h.ctx, h.zk, "t")
    assert h.state() is None
    assert h.sent(LeaderAndIsrRequest) == []


def test_new_partition_is_initialized_when_a_later_replica_comes_up():
    """KafkaController.onBrokerStartup -> triggerOnlinePartitionStateChange @3.7.0: a partition
    still in NewPartition (created while replicas 6 and 7 were down) is initialized once 7
    registers: 7 leads with ISR [7] at leader epoch 0."""
    h = _harness(live=(BROKER_ID,))
    h.put_partition(TP, [6, 7])
    h.ctl.on_new_topic(h.ctx, h.zk, "t")
    h.zk.create("/brokers/ids/7", "{}")
    h.ctl.on_broker_change(h.ctx, h.zk)
    st = h.state()
    assert (st["leader"], st["isr"], st["leader_epoch"]) == (7, [7], 0)


def test_new_partition_skips_replicas_in_controlled_shutdown():
    """initializeLeaderAndIsrForPartitions @3.7.0: live replicas are those for which
    ControllerContext.isReplicaOnline holds, and liveBrokerIds excludes shuttingDownBrokerIds;
    with replicas [6, 5] and 6 shutting down, 5 leads and the ISR is [5]."""
    h = _harness(live=(5, 6), shutting_down=(6,))
    h.put_partition(TP, [6, 5])
    h.ctl.on_new_topic(h.ctx, h.zk, "t")
    st = h.state()
    assert (st["leader"], st["isr"]) == (5, [5])


@pytest.mark.parametrize("version", VERSIONS)
def test_online_partition_to_online_transition(version):
    """testOnlinePartitionToOnlineTransition: PreferredReplicaPartitionLeaderElectionStrategy on
    a partition its preferred replica already leads: ``leaderAndIsr.newLeader(brokerId)`` is
    written (leader epoch + 1, new zkVersion = partition epoch, our controller epoch) and
    LeaderAndIsr with it goes to the assignment."""
    h = _harness(version=version)
    h.put_partition(TP, [BROKER_ID], BROKER_ID, [BROKER_ID], controller_epoch=CONTROLLER_EPOCH - 1)
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "preferred") == [TP]
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["controller_epoch"]) == (
        BROKER_ID,
        1,
        [BROKER_ID],
        CONTROLLER_EPOCH,
    )
    assert st["zk_version"] == 1
    assert h.states_to(BROKER_ID) == [("t", 0, BROKER_ID, 1, (BROKER_ID,), 1, (BROKER_ID,))]
    assert h.ctl.context.states[TP] == (BROKER_ID, 1, (BROKER_ID,), 1)


def test_online_partition_to_online_transition_for_controlled_shutdown():
    """testOnlinePartitionToOnlineTransitionForControlledShutdown: 5 (leader) is shutting down;
    ``newLeaderAndIsr(6, [6])`` is written and the LeaderAndIsr goes to both brokers, the
    shutting-down one included."""
    other = BROKER_ID + 1
    h = _harness(live=(BROKER_ID, other), shutting_down=(BROKER_ID,))
    h.put_partition(TP, [BROKER_ID, other], BROKER_ID, [BROKER_ID, other])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "controlled_shutdown") == [TP]
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (other, 1, [other], 1)
    assert h.recipients(LeaderAndIsrRequest) == [BROKER_ID, other]
    for b in (BROKER_ID, other):
        assert h.states_to(b) == [("t", 0, other, 1, (other,), 1, (BROKER_ID, other))]


@pytest.mark.parametrize("version", VERSIONS)
def test_offline_partition_to_online_partition_transition(version):
    """testOfflinePartitionToOnlinePartitionTransition: LeaderAndIsr(NoLeader, [5]) with 5 live:
    OfflinePartitionLeaderElectionStrategy(false) elects 5 (``newLeader``), leader epoch + 1."""
    h = _harness(version=version)
    h.put_partition(TP, [BROKER_ID], -1, [BROKER_ID])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline") == [TP]
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (
        BROKER_ID,
        1,
        [BROKER_ID],
        1,
    )
    assert h.states_to(BROKER_ID) == [("t", 0, BROKER_ID, 1, (BROKER_ID,), 1, (BROKER_ID,))]
    assert h.ctx.meters[UNCLEAN] == 0


@pytest.mark.parametrize(
    ("version", "recovery_state"),
    [
        ("2.8", None),
        ("3.1", None),  # IBP_3_1_IV0: isLeaderRecoverySupported
        ("3.7", 1),  # IBP_3_2_IV0+
    ],
)
def test_offline_partition_to_unclean_online_partition_transition(version, recovery_state):
    """testOfflinePartitionToUncleanOnlinePartitionTransition(isLeaderRecoverySupported):
    Leader 6, ISR [6], replicas [6, 5], live [5]; OfflinePartitionLeaderElectionStrategy(true)
    elects 5 with ISR [5]; since IBP 3.2 as ``newRecoveringLeaderAndIsr`` (the znode gets
    ``leader_recovery_state: 1``, TopicPartitionStateZNode.encode). LeaderAndIsr goes to 5."""
    leader = BROKER_ID + 1
    h = _harness(version=version)
    h.put_partition(TP, [leader, BROKER_ID], leader, [leader])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "unclean") == [TP]
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (
        BROKER_ID,
        1,
        [BROKER_ID],
        1,
    )
    assert h.recipients(LeaderAndIsrRequest) == [BROKER_ID]
    assert h.ctx.meters[UNCLEAN] == 1  # offlinePartitionLeaderElection marks the meter
    assert st.get("leader_recovery_state") == recovery_state


def test_offline_election_reads_unclean_leader_election_from_the_topic_config():
    """collectUncleanLeaderElectionState @3.7.0: with OfflinePartitionLeaderElectionStrategy(false)
    and no live ISR member, the topic's ``unclean.leader.election.enable`` (getLogConfigs)
    decides; here it is true, so live out-of-sync 5 leads with ISR [5]."""
    h = _harness(topic_config={"unclean.leader.election.enable": True})
    h.put_partition(TP, [6, BROKER_ID], 6, [6])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline") == [TP]
    st = h.state()
    assert (st["leader"], st["isr"], st["leader_epoch"]) == (BROKER_ID, [BROKER_ID], 1)
    assert h.ctx.meters[UNCLEAN] == 1


def test_failed_offline_election_writes_nothing():
    """doElectLeaderForPartitions @3.7.0: a partition for which the strategy finds no leader
    (ISR [6], 6 dead, unclean off) goes to failedElections: no updateLeaderAndIsr, no
    LeaderAndIsr; it stays OfflinePartition. (The leader -1 write comes later, from the
    OfflineReplica transition of onReplicasBecomeOffline.)"""
    h = _harness()
    h.put_partition(TP, [6, BROKER_ID], 6, [6])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline") == []
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["zk_version"]) == (6, 0, 0)
    assert h.sent(LeaderAndIsrRequest) == []


def test_offline_partition_to_online_partition_transition_error_code_from_state_lookup():
    """testOfflinePartitionToOnlinePartitionTransitionErrorCodeFromStateLookup: reading the state
    znode answers NONODE: the election fails, nothing is sent, the partition stays offline."""
    h = _harness()
    h.put_partition(TP, [BROKER_ID], -1, [BROKER_ID])
    h.zk.delete(partition_state_path(*TP))
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline") == []
    assert h.sent(LeaderAndIsrRequest) == []
    assert h.state() is None


def test_offline_election_reads_the_isr_from_zookeeper():
    """doElectLeaderForPartitions @3.7.0 (the same at 2.6.0) elects from getTopicPartitionStatesRaw,
    not from the controller's cache. Kafka 2.6 (leaders write their own ISR to ZooKeeper):
    leader 6 shrank the ISR to [6] before the controller heard of it; 6 dies; 5 is not in the
    ISR ZooKeeper holds and unclean election is off, so 5 must not be elected."""
    h = _harness(live=(BROKER_ID,), version="2.6")
    h.put_partition(TP, [BROKER_ID, 6], 6, [BROKER_ID, 6])
    h.leader_write(TP, 6, 0, [6])
    h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline")
    st = h.state()
    assert st["leader"] != BROKER_ID
    assert st["isr"] == [6]


def test_preferred_election_reads_the_isr_from_zookeeper():
    """doElectLeaderForPartitions @3.7.0 / 2.6.0 + Election.leaderForPreferredReplica: Kafka 2.6,
    leader 6 removed preferred replica 5 from the ISR in ZooKeeper ([6], zkVersion 1). The
    preferred election reads that ISR, finds 5 out of it and fails: nothing written or sent."""
    h = _harness(live=(BROKER_ID, 6), version="2.6")
    h.put_partition(TP, [BROKER_ID, 6], 6, [BROKER_ID, 6])
    h.leader_write(TP, 6, 0, [6])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "preferred") == []
    st = h.state()
    assert (st["leader"], st["isr"], st["zk_version"]) == (6, [6], 1)
    assert h.sent(LeaderAndIsrRequest) == []


def test_offline_election_sends_leader_and_isr_to_online_replicas_only():
    """Election.leaderForOffline @3.7.0: the LeaderAndIsr recipients are ``liveReplicas`` =
    the assignment filtered by isReplicaOnline (shutting-down brokers excluded); UpdateMetadata
    still reaches every live or shutting-down broker. Replicas [7, 5, 6], 7 dead, 6 shutting
    down: 5 leads with ISR [5]; only 5 gets the LeaderAndIsr."""
    h = _harness(live=(5, 6), shutting_down=(6,))
    h.put_partition(TP, [7, 5, 6], 7, [5, 6, 7])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline") == [TP]
    st = h.state()
    assert (st["leader"], st["isr"]) == (5, [5])
    assert h.recipients(UpdateMetadataRequest) == [5, 6]
    assert h.recipients(LeaderAndIsrRequest) == [5]


def test_preferred_election_with_preferred_replica_out_of_the_isr_writes_nothing():
    """doElectLeaderForPartitions @3.7.0 + preferredReplicaPartitionLeaderElection: preferred
    replica 5 is live but not in the ISR [6]: no leader, so no ZooKeeper write and no request;
    the partition keeps leader 6 at its epoch."""
    h = _harness(live=(BROKER_ID, 6))
    h.put_partition(TP, [BROKER_ID, 6], 6, [6], leader_epoch=3)
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "preferred") == []
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["zk_version"]) == (6, 3, 0)
    assert h.ctx.sent == []


def test_election_is_fenced_by_a_newer_controller_epoch():
    """ZkPartitionStateMachine.handleStateChanges @3.7.0: updateLeaderAndIsr is conditional on
    the controller epoch znode (epochZkVersion); when another controller took over, it throws
    ControllerMovedException, which handleStateChanges rethrows. Nothing is written or sent."""
    h = _harness()
    h.put_partition(TP, [BROKER_ID], -1, [BROKER_ID])
    h.zk.set("/controller_epoch", str(CONTROLLER_EPOCH + 1))
    with pytest.raises(ControllerMovedError):
        h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline")
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["zk_version"]) == (-1, 0, 0)
    assert h.ctx.sent == []


# -- ReplicaStateMachineTest (3.7.0) -------------------------------------------------------------
@pytest.mark.parametrize("version", VERSIONS)
def test_online_replica_to_offline_replica_transition(version):
    """testOnlineReplicaToOfflineReplicaTransition: replicas [5, 6], leader 5, ISR [5, 6]; 5 goes
    offline: StopReplica(deletePartition=false) to 5, ``newLeaderAndIsr(NoLeader, [6])`` written
    (leader epoch + 1, partition epoch + 1), LeaderAndIsr with it to 6 only, and the controller's
    partitionLeadershipInfo updated."""
    other = BROKER_ID + 1
    h = _harness(live=(BROKER_ID, other), version=version)
    h.put_partition(TP, [BROKER_ID, other], BROKER_ID, [BROKER_ID, other])
    h.ctl.offline_replica(h.ctx, h.zk, BROKER_ID, [TP])
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (-1, 1, [other], 1)
    assert _stop_replicas(h, BROKER_ID) == [((TP,), False)]
    assert h.recipients(LeaderAndIsrRequest) == [other]
    assert h.states_to(other) == [("t", 0, -1, 1, (other,), 1, (BROKER_ID, other))]
    assert h.ctl.context.states[TP] == (-1, 1, (other,), 1)
    # ControllerBrokerRequestBatch.sendRequestsToBrokers: LeaderAndIsr, UpdateMetadata, StopReplica
    kinds = [type(m) for _, m in h.ctx.sent]
    assert kinds.index(StopReplicaRequest) > max(
        i for i, k in enumerate(kinds) if k in (LeaderAndIsrRequest, UpdateMetadataRequest)
    )


def test_offline_replica_keeps_a_single_member_isr():
    """doRemoveReplicasFromIsr @3.7.0: ``adjustedIsr = if (isr.size == 1) isr else isr - r``; the
    last ISR member is never removed, but as the leader it becomes NoLeader, epoch + 1."""
    h = _harness(live=(BROKER_ID, 6))
    h.put_partition(TP, [BROKER_ID, 6], BROKER_ID, [BROKER_ID])
    h.ctl.offline_replica(h.ctx, h.zk, BROKER_ID, [TP])
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (
        -1,
        1,
        [BROKER_ID],
        1,
    )
    assert _stop_replicas(h, BROKER_ID) == [((TP,), False)]


def test_offline_replica_outside_the_isr_writes_nothing():
    """doRemoveReplicasFromIsr @3.7.0: partitions whose ISR lacks the replica are not written
    (leaderAndIsrsWithoutReplica), yet the OfflineReplica transition still sends their current
    state to the other replicas and StopReplica(deletePartition=false) to the replica."""
    h = _harness(live=(BROKER_ID, 6, 7))
    h.put_partition(TP, [6, 7, BROKER_ID], 6, [6, 7], leader_epoch=4)
    h.ctl.offline_replica(h.ctx, h.zk, BROKER_ID, [TP])
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["isr"], st["zk_version"]) == (6, 4, [6, 7], 0)
    assert h.recipients(LeaderAndIsrRequest) == [6, 7]
    assert h.states_to(6) == [("t", 0, 6, 4, (6, 7), 0, (6, 7, BROKER_ID))]
    assert _stop_replicas(h, BROKER_ID) == [((TP,), False)]


def test_new_replica_to_offline_replica_transition():
    """testNewReplicaToOfflineReplicaTransition: a replica of a partition without leadership
    info goes offline: StopReplica(deletePartition=false) and UpdateMetadata to broker 5, no
    ZooKeeper read or write."""
    h = _harness()
    h.ctl.offline_replica(h.ctx, h.zk, BROKER_ID, [TP])
    assert _stop_replicas(h, BROKER_ID) == [((TP,), False)]
    assert h.recipients(UpdateMetadataRequest) == [BROKER_ID]
    assert h.state() is None


def test_offline_replica_to_online_replica_transition():
    """testOfflineReplicaToOnlineReplicaTransition, reached as Kafka reaches it: broker 6
    registers again (onBrokerStartup -> replicas OnlineReplica): it gets LeaderAndIsr with the
    current leadership info (isNew = false); nothing is written to ZooKeeper."""
    h = _harness(live=(BROKER_ID,))
    h.put_partition(TP, [BROKER_ID, 6], BROKER_ID, [BROKER_ID], leader_epoch=2)
    h.zk.create("/brokers/ids/6", "{}")
    h.ctl.on_broker_change(h.ctx, h.zk)
    assert h.recipients(LeaderAndIsrRequest) == [6]
    assert h.states_to(6) == [("t", 0, BROKER_ID, 2, (BROKER_ID,), 0, (BROKER_ID, 6))]
    st = h.state()
    assert (st["leader_epoch"], st["zk_version"]) == (2, 0)
    assert h.ctl.context.live_brokers == [BROKER_ID, 6]


def test_offline_replica_to_replica_deletion_started_to_nonexistent():
    """testOfflineReplicaToReplicaDeletionStartedTransition and
    testReplicaDeletionSuccessfulToNonexistentReplicaTransition, through the path that runs them
    (KafkaController.stopRemovedReplicasOfReassignedPartition): a reassignment [5, 6] -> [5]
    takes 6 OfflineReplica (StopReplica deletePartition=false, out of the ISR), then
    ReplicaDeletionStarted (StopReplica deletePartition=true), then NonExistentReplica (gone
    from the assignment)."""
    h = _harness(live=(BROKER_ID, 6))
    h.put_partition(TP, [BROKER_ID, 6], BROKER_ID, [BROKER_ID, 6])
    assert h.ctl.alter_partition_reassignments(h.ctx, h.zk, {TP: [BROKER_ID]}) == {
        TP: ("NONE", None)}
    assert _stop_replicas(h, 6) == [((TP,), False), ((TP,), True)]
    st = h.state()
    assert (st["leader"], st["isr"]) == (BROKER_ID, [BROKER_ID])
    # updateLeaderEpochAndSendRequest (B3) and the OfflineReplica ISR removal (B4): two bumps
    assert st["leader_epoch"] == 2
    assert h.ctl.context.assignments[TP] == (BROKER_ID,)
    assert h.zk.get("/brokers/topics/t").json()["partitions"] == {"0": [BROKER_ID]}


def test_broker_failure_elects_and_takes_the_dead_replica_out_of_isrs():
    """KafkaController.onBrokerFailure -> onReplicasBecomeOffline @3.7.0: partitions led by dead
    6 go OfflinePartition and through the offline election; then 6's replicas go OfflineReplica
    (doRemoveReplicasFromIsr). Each partition is written once, leader epoch + 1: a clean new
    leader; a follower ISR shrink; a last-ISR-member partition left with NoLeader and ISR [6].
    No StopReplica goes to the dead broker (sendStopReplicaRequests skips non-live brokers)."""
    h = _harness(live=(BROKER_ID, 6))
    p0, p1, p2 = ("t", 0), ("t", 1), ("t", 2)
    h.put_partition(p0, [6, BROKER_ID], 6, [6, BROKER_ID])
    h.put_partition(p1, [BROKER_ID, 6], BROKER_ID, [BROKER_ID, 6])
    h.put_partition(p2, [6, BROKER_ID], 6, [6])
    h.zk.delete("/brokers/ids/6")
    h.ctl.on_broker_change(h.ctx, h.zk)
    got = {
        tp: (s["leader"], s["isr"], s["leader_epoch"], s["zk_version"])
        for tp in (p0, p1, p2)
        for s in [h.state(tp)]
    }
    assert got == {
        p0: (BROKER_ID, [BROKER_ID], 1, 1),
        p1: (BROKER_ID, [BROKER_ID], 1, 1),
        p2: (-1, [6], 1, 1),
    }
    assert h.ctx.meters[UNCLEAN] == 0
    assert _stop_replicas(h, 6) == []
    assert 6 not in h.recipients(LeaderAndIsrRequest)


# -- ControllerChannelManagerTest (3.7.0): which requests reach which broker ---------------------
FOO0, FOO1, BAR1 = ("foo", 0), ("foo", 1), ("bar", 1)
# ControllerChannelManagerTest: controllerId = 1, controllerEpoch = 1, brokers 1, 2, 3
CHANNEL_STATES = {FOO0: (1, [1, 2]), FOO1: (2, [2, 3]), BAR1: (3, [1, 3])}


def _channel_harness(live=(1, 2, 3), shutting_down=(), with_states=True) -> Harness:
    h = _harness(live=live, shutting_down=shutting_down, controller_id=1, controller_epoch=1)
    for tp, (leader, isr) in CHANNEL_STATES.items():
        if with_states:
            h.put_partition(tp, [1, 2, 3], leader, isr, controller_epoch=1)
        else:
            h.put_partition(tp, [1, 2, 3])
    return h


def test_leader_and_isr_request_sent():
    """testLeaderAndIsrRequestSent: three partitions added for broker 2 make ONE LeaderAndIsr to
    2 (plus one UpdateMetadata), with the controller id and epoch and each leader and ISR."""
    h = _channel_harness()
    tps = list(CHANNEL_STATES)
    h.ctl.send_leader_and_isr(h.ctx, tps, only=[2])
    h.ctl.send_update_metadata(h.ctx, tps)
    lai = [m for dst, m in h.sent(LeaderAndIsrRequest) if dst == 2]
    assert len(lai) == 1
    assert len([m for dst, m in h.sent(UpdateMetadataRequest) if dst == 2]) == 1
    assert (lai[0].controller_id, lai[0].controller_epoch) == (1, 1)
    assert {
        (s.topic, s.partition): (s.leader, list(s.isr)) for s in lai[0].partition_states
    } == CHANNEL_STATES
    assert h.recipients(LeaderAndIsrRequest) == [2]


def test_leader_and_isr_request_sent_to_live_or_shutting_down_brokers():
    """testLeaderAndIsrRequestSentToLiveOrShuttingDownBrokers: 2 is shutting down, 3 is dead;
    LeaderAndIsr for foo-0 to replicas 1, 2, 3 reaches 1 and 2 only, each with one
    UpdateMetadata."""
    h = _channel_harness(live=(1, 2), shutting_down=(2,))
    h.ctl.send_leader_and_isr(h.ctx, [FOO0])
    h.ctl.send_update_metadata(h.ctx, [FOO0])
    assert {dst for dst, _ in h.ctx.sent} == {1, 2}
    for b in (1, 2):
        assert [(s[0], s[1]) for s in h.states_to(b)] == [FOO0]
        assert len(h.states_to(b, UpdateMetadataRequest)) == 1


def test_update_metadata_request_sent():
    """testUpdateMetadataRequestSent: the UpdateMetadata to broker 2 carries the three
    partitions' leaders and ISRs, the controller id and epoch, and live brokers {1, 2, 3}."""
    h = _channel_harness()
    h.ctl.send_update_metadata(h.ctx, list(CHANNEL_STATES))
    um = [m for dst, m in h.sent(UpdateMetadataRequest) if dst == 2]
    assert len(um) == 1
    assert (um[0].controller_id, um[0].controller_epoch) == (1, 1)
    assert {
        (s.topic, s.partition): (s.leader, list(s.isr)) for s in um[0].partition_states
    } == CHANNEL_STATES
    assert set(um[0].live_brokers) == {1, 2, 3}


def test_update_metadata_does_not_include_partitions_without_leader_and_isr():
    """testUpdateMetadataDoesNotIncludePartitionsWithoutLeaderAndIsr: partitions without
    leadership info are left out; broker 2 still gets an UpdateMetadata, with no partition
    states and live brokers {1, 2, 3}."""
    h = _channel_harness(with_states=False)
    h.ctl.send_update_metadata(h.ctx, list(CHANNEL_STATES))
    um = [m for dst, m in h.sent(UpdateMetadataRequest) if dst == 2]
    assert len(um) == 1
    assert um[0].partition_states == ()
    assert set(um[0].live_brokers) == {1, 2, 3}


def test_update_metadata_includes_live_or_shutting_down_brokers():
    """testUpdateMetadataIncludesLiveOrShuttingDownBrokers: 2 is shutting down, 3 is dead: the
    UpdateMetadata goes to 1 and 2, without partition states, and lists brokers {1, 2}."""
    h = _channel_harness(live=(1, 2), shutting_down=(2,))
    h.ctl.send_update_metadata(h.ctx, [])
    assert h.recipients(UpdateMetadataRequest) == [1, 2]
    for _, m in h.sent(UpdateMetadataRequest):
        assert m.partition_states == ()
        assert set(m.live_brokers) == {1, 2}


def test_stop_replica_request_sent():
    """testStopReplicaRequestSent: StopReplica (deletePartition=false) for three partitions on
    broker 2, here from the OfflineReplica transition of replica 2, is ONE request to 2 naming
    all three; no other broker gets a StopReplica."""
    h = _channel_harness()
    tps = list(CHANNEL_STATES)
    h.ctl.offline_replica(h.ctx, h.zk, 2, tps)
    stops = _stop_replicas(h, 2)
    assert len(stops) == 1
    assert set(stops[0][0]) == set(tps)
    assert stops[0][1] is False
    assert {dst for dst, _ in h.sent(StopReplicaRequest)} == {2}


def test_stop_replica_sent_only_to_live_and_shutting_down_brokers():
    """testStopReplicaSentOnlyToLiveAndShuttingDownBrokers: 2 is shutting down, 3 is dead;
    StopReplica for replicas on 2 and 3 reaches 2 only (sendStopReplicaRequests filters on
    liveOrShuttingDownBrokerIds)."""
    h = _channel_harness(live=(1, 2), shutting_down=(2,))
    tps = list(CHANNEL_STATES)
    h.ctl.offline_replica(h.ctx, h.zk, 2, tps)
    h.ctl.offline_replica(h.ctx, h.zk, 3, tps)
    assert len(_stop_replicas(h, 2)) == 1
    assert _stop_replicas(h, 3) == []
