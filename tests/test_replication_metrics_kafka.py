"""Kafka's tests of the replication metrics and of ``kafka-topics --describe``'s report options,
ported to kafkasim's metrics (``kafkasim.runtime.metrics``), ``Partition``, ``ReplicaManager``,
the two controllers and ``Cluster.describe``.

Sources (apache/kafka, tag 3.7.0 unless named; trunk 1eb7644 for the KRaft controller metrics
and for TopicCommandTest, which absorbed 3.7's TopicCommandIntegrationTest):
``core/src/test/scala/unit/kafka/metrics/MetricsTest.scala`` (testZkControllerMetrics,
testKRaftControllerMetrics), ``server/BrokerMetricNamesTest.scala``, the metric cases of
``cluster/PartitionTest.scala`` (the AlterPartitionListener counts behind IsrExpandsPerSec /
IsrShrinksPerSec / FailedIsrUpdatesPerSec: testIsrExpansion, testIsrNotExpandedIfUpdateFails,
testInvalidAlterPartitionRequestsAreNotRetried, testRetryShrinkIsr, testMaybeShrinkIsr;
testAddAndRemoveMetrics, testUpdateAssignmentAndIsr), ``controller/PartitionStateMachineTest
.testUpdatingOfflinePartitionsCount``, ``integration/MetricsDuringTopicCreationDeletionTest``
(its creation half), ``metadata/.../controller/metrics/ControllerMetricsChangesTest``,
``ControllerMetadataMetricsPublisherTest``, ``ControllerMetadataMetricsTest`` and the names of
``QuorumControllerMetricsTest.testMetricNames``, and ``tools/.../TopicCommandTest``'s describe
cases (testIsNotUnderReplicatedWhenAdding, testDescribe, testDescribeUnavailablePartitions,
testDescribeUnderReplicatedPartitions, testDescribeUnderMinIsrPartitions,
testDescribeUnderReplicatedPartitionsWhenReassignmentIsInProgress, testDescribeAtMinIsrPartitions,
testDescribeUnderMinIsrPartitionsMixed, testDescribeReportOverriddenConfigs,
testDescribeAndListTopicsWithoutInternalTopics) with its option checks (checkInvalidArgs).
Where Kafka has no test of its own, a test names the source it was read off (which MBeans a
release registers, how the ZooKeeper controller counted offline partitions before KAFKA-6753,
ControllerContext.hasPreferredLeader during a reassignment, Partition.isUnderReplicated with
KIP-352).

How the tests are adapted. Kafka reads a gauge from the Yammer registry; kafkasim samples the
gauges of every running node into ``cluster.metrics`` (``latest()``: the last sample) and
computes one node's now with ``broker_gauges`` / ``partition_gauges`` /
``controller_gauges``. A registered MBean is one whose name appears in the samples. A meter is
the broker's ``meters`` count (Kafka's AlterPartitionListener marks them:
DefaultAlterPartitionListener). A broker alone is a ``FakeContext`` whose ISR proposals go
through the real ``AlterPartitionManager``; the controller's answer is given to
``handle_alter_partition_response``. Kafka's ClusterTemplate "generate" is a cluster of brokers
0-5; ``kafka-topics --describe`` is ``Cluster.describe`` and a bad option combination raises
``ClusterError`` with TopicCommand's message (Kafka prints it with the usage and exits 1).

Left out, because kafkasim has no such thing: topic deletion (testMetricsReporterAfterDeleting
Topic, testBrokerTopicMetricsUnregisteredAfterDeletingTopic, the deletion half of
MetricsDuringTopicCreationDeletionTest, TopicsToDeleteCount / ReplicasToDeleteCount /
TopicsIneligibleToDeleteCount / ReplicasIneligibleToDeleteCount,
testNoOfflinePartitionsChangeForTopicsBeingDeleted, testUpdatingOfflinePartitionsCountDuring
TopicDeletion, ControllerMetricsChangesTest's deleted topics through a cluster), the ZooKeeper
migration (ZkMigrationState, MigratingZkBrokerCount, testHandleZkBroker), BrokerTopicStats and
the JMX reporter (testClusterIdMetric, testBrokerStateMetric, testYammerMetricsCountMetric,
testLinuxIoMetrics, testJMXFilter, testUpdateJMXFilter, testGeneralBrokerTopicMetricsAre
GreedilyRegistered, testWindowsStyleTagNames, testBrokerTopicMetricsBytesInOut,
testSessionExpireListenerMetrics, ReplicaManagerTest.testOld*LosesMetricsWhenReassignPartitions),
log dirs and transactions (OfflineReplicaCount, ProducerIdCount, LastStableOffsetLag,
PartitionsWithLateTransactionsCount), QuorumControllerMetrics' event-queue, timestamp, heartbeat
timeout and new-active-controller gauges and histograms (testUpdateEventQueueTime,
testUpdateEventQueueProcessingTime, testLastAppliedRecordMetrics), MetadataErrorCount in a
cluster (never an error), and TopicCommandTest's create / alter / delete / list / option-parsing
cases and --partition-size-limit-per-response (testDescribeWithDescribeTopicPartitionsApi).
"""

from __future__ import annotations

import pytest
from test_controller_state_machines_kafka import BROKER_ID, _harness

from kafkasim.control.controller_context import ControllerContext, ReplicaAssignment
from kafkasim.control.kraft import controller_metrics as CM
from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.image import MetadataImage, TopicDelta, TopicImage
from kafkasim.core import errors as E
from kafkasim.core.alter_partition_manager import propose_isr
from kafkasim.core.fake import FakeContext
from kafkasim.core.messages import AlterPartitionResponse, LeaderAndIsrRequest, PartitionState
from kafkasim.core.replica_manager import ReplicaManager
from kafkasim.runtime import metrics as M
from kafkasim.runtime.cluster import Cluster, ClusterError
from kafkasim.runtime.describe import partition_reported
from kafkasim.settings.versions import rules_for

CONTROLLER = 9
KC = "kafka.controller:type=KafkaController,name="
RMN = "kafka.server:type=ReplicaManager,name="


def _names(c: Cluster, node: int | None = None) -> set[str]:
    """The MBean names sampled so far (of ``node``, or of every node)."""
    return {m.split(":Count")[0].split(":Rate")[0] for _t, b, m, _v in c.metrics.rows
            if node is None or b == node}


def _zk(n: int = 3, version: str = "3.7", **kw) -> Cluster:
    c = Cluster(list(range(n)), seed=1, kafka_version=version, **kw)
    assert c.run_until(lambda cl: cl.controller_id() >= 0, 30_000)
    return c


def _kraft(n: int = 3, version: str = "4.1", **kw) -> Cluster:
    """A KRaft cluster of brokers 0..n-1 (and three controllers)."""
    if not version.startswith("4"):
        kw.setdefault("metadata_mode", "kraft")
    c = Cluster(list(range(n)), seed=7, kafka_version=version, **kw)
    assert c.run_until(lambda cl: cl.controller_id() >= 0, 30_000)
    return c


# -- MetricsTest (3.7.0) -------------------------------------------------------------------------
ZK_CONTROLLER_MBEANS = ["ActiveControllerCount", "OfflinePartitionsCount",
                        "PreferredReplicaImbalanceCount", "GlobalTopicCount",
                        "GlobalPartitionCount", "ActiveBrokerCount", "FencedBrokerCount"]


def test_zk_controller_metrics():
    """testZkControllerMetrics: the KafkaController gauges kafkasim models are registered; each
    ZooKeeper-mode broker has them (its KafkaController object exists whether active or not)
    and only the active controller reports anything but 0."""
    c = _zk(2)
    c.create_topic("t", 2, 2)
    c.run(2000)
    ctl = c.controller_id()
    for b in c.brokers:
        names = _names(c, b)
        for name in ZK_CONTROLLER_MBEANS:
            assert KC + name in names, (b, name)
    values = c.metrics.latest()
    for b in c.brokers:
        assert values[(b, KC + "ActiveControllerCount")] == int(b == ctl)
        assert values[(b, KC + "GlobalTopicCount")] == int(b == ctl)
        assert values[(b, KC + "GlobalPartitionCount")] == (2 if b == ctl else 0)
        assert values[(b, KC + "ActiveBrokerCount")] == (2 if b == ctl else 0)
        assert values[(b, KC + "FencedBrokerCount")] == 0   # always 0 in the ZK controller


KRAFT_CONTROLLER_MBEANS = ["ActiveControllerCount", "GlobalPartitionCount", "GlobalTopicCount",
                           "LastAppliedRecordOffset", "LastCommittedRecordOffset",
                           "OfflinePartitionsCount", "PreferredReplicaImbalanceCount",
                           "ActiveBrokerCount", "FencedBrokerCount"]


def test_kraft_controller_metrics():
    """testKRaftControllerMetrics (with ControllerMetadataMetricsTest.testMetricNames and
    QuorumControllerMetricsTest.testMetricNames, as far as kafkasim models them): every KRaft
    controller registers the KafkaController gauges; the brokers register none."""
    c = _kraft()
    c.create_topic("t", 1, 3)
    c.run(2000)
    for node in c.kraft.nodes:
        names = _names(c, node)
        for name in KRAFT_CONTROLLER_MBEANS:
            assert KC + name in names, (node, name)
    for b in c.brokers:
        assert not [m for m in _names(c, b) if m.startswith("kafka.controller:")]


@pytest.mark.parametrize("version, registered", [("3.7", False), ("3.8", False),
                                                 ("3.9", True), ("4.0", True)])
def test_kraft_controllers_register_the_unclean_election_meter_since_3_9(version, registered):
    """ControllerMetadataMetrics @3.7.0 registers no meter (ControllerMetadataMetricsTest
    .testMetricNames); KAFKA-12670 (3.9) adds ControllerStats UncleanLeaderElectionsPerSec."""
    c = _kraft(version=version)
    c.run(2000)
    unclean = "kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec"
    for node in c.kraft.nodes:
        assert (unclean in _names(c, node)) == registered


# -- BrokerMetricNamesTest (3.7.0) ---------------------------------------------------------------
BROKER_MBEANS = ["LeaderCount", "PartitionCount", "UnderReplicatedPartitions",
                 "UnderMinIsrPartitionCount", "AtMinIsrPartitionCount", "ReassigningPartitions",
                 "IsrExpandsPerSec", "IsrShrinksPerSec", "FailedIsrUpdatesPerSec"]


@pytest.mark.parametrize("mode", ["zk", "kraft"])
def test_metrics(mode):
    """BrokerMetricNamesTest.testMetrics: every broker registers the ReplicaManager metrics
    (those kafkasim models: not OfflineReplicaCount or ProducerIdCount)."""
    c = _zk(version="3.7") if mode == "zk" else _kraft(version="3.7")
    c.run(2000)
    for b in c.brokers:
        names = _names(c, b)
        for name in BROKER_MBEANS:
            assert RMN + name in names, (b, name)


# ReplicaManager @0.10.2.0 / 0.11.0.0 / 1.0.0 / 2.3.0 / 2.5.0, Partition @0.10.1.0 / 0.10.2.0,
# KafkaController @0.11.0.0 / 1.0.0 / 3.0.0 / 3.1.0: which release registers which MBean
MBEAN_SINCE = [
    (RMN + "FailedIsrUpdatesPerSec", "0.11.0"),        # KIP-143
    (RMN + "UnderMinIsrPartitionCount", "1.0"),        # KIP-164
    (RMN + "AtMinIsrPartitionCount", "2.3"),           # KIP-427
    (RMN + "ReassigningPartitions", "2.5"),            # KIP-352
    (KC + "GlobalTopicCount", "1.0"),                  # KAFKA-5461
    (KC + "GlobalPartitionCount", "1.0"),
    (KC + "ActiveBrokerCount", "3.1"),                 # KIP-748
    (KC + "FencedBrokerCount", "3.1"),
    (M.partition_mbean("InSyncReplicasCount", "t", 0), "0.10.2"),   # KIP-96
    (M.partition_mbean("ReplicasCount", "t", 0), "0.10.2"),
    (M.partition_mbean("UnderMinIsr", "t", 0), "1.0"),              # KIP-164
    (M.partition_mbean("AtMinIsr", "t", 0), "2.3"),                 # KIP-427
]
PREVIOUS = {"0.11.0": "0.10.2", "1.0": "0.11.0", "2.3": "2.2", "2.5": "2.4", "3.1": "3.0",
            "0.10.2": "0.10.1"}


@pytest.fixture(scope="module")
def sampled_names():
    """The MBean names a small ZooKeeper-mode cluster reports, by release."""
    out = {}
    for version in sorted({v for _n, v in MBEAN_SINCE} | set(PREVIOUS.values())):
        c = _zk(version=version)
        c.create_topic("t", 1, 3)
        c.run(2000)
        out[version] = _names(c)
    return out


@pytest.mark.parametrize("mbean, since", MBEAN_SINCE)
def test_each_mbean_is_registered_from_its_release_on(sampled_names, mbean, since):
    """The MBeans by release (read off ReplicaManager, Partition and KafkaController at the
    tags): present from the release that added it, absent in the one before."""
    assert mbean in sampled_names[since]
    assert mbean not in sampled_names[PREVIOUS[since]]


# -- ReplicaManager's gauges (ReplicaManager @3.7.0, Partition @3.7.0) ---------------------------
class Broker(FakeContext):
    """Broker 0 with a ReplicaManager; its ISR changes go through the AlterPartitionManager to
    controller 9 (Kafka's Partition with its alterPartitionManager and listener)."""

    controller = None    # not the ZooKeeper controller

    def __init__(self, version: str = "3.7", *, topic_config=None, config=None):
        super().__init__(0, kafka_version=version, topic_config=topic_config, config=config,
                         live_brokers=(0, 1, 2, 3))
        self.replica_manager = ReplicaManager()
        self.replica_manager.partitions = self.partitions
        self.metadata.controller_id = CONTROLLER

    def propose_isr(self, part, kind, replicas, new_isr) -> None:
        propose_isr(self, part, kind, replicas, new_isr)

    def lead(self, partition: int, isr, replicas=(0, 1, 2), *, epoch: int = 5,
             partition_epoch: int = 1, adding=(), removing=()):
        part = self.partition("foo", partition)
        part.make_leader(self, epoch, tuple(isr), tuple(replicas), partition_epoch, 0,
                         tuple(adding), tuple(removing))
        return part

    def follow(self, partition: int, leader: int, replicas=(0, 1, 2)):
        part = self.partition("foo", partition)
        part.make_follower(self, leader, 5, tuple(replicas), tuple(replicas), 1, 0)
        return part

    def answer(self, part, error: str = E.NONE, partition_epoch: int = 2) -> None:
        """The controller's AlterPartitionResponse to the request in flight."""
        manager = self.alter_partition_manager
        isr = part.pending.proposed_isr if part.pending is not None else part.isr
        manager.handle_alter_partition_response(self, CONTROLLER, AlterPartitionResponse(
            E.NONE, ((part.topic, part.partition, error, self.id, part.leader_epoch, isr,
                      partition_epoch),), manager.corr))

    def listener(self) -> tuple[int, int, int]:
        """(expands, shrinks, failures) as Kafka's MockAlterPartitionListener counts them."""
        m = self.meters
        return (m.get("IsrExpandsPerSec", 0), m.get("IsrShrinksPerSec", 0),
                m.get("FailedIsrUpdatesPerSec", 0))

    def gauges(self) -> dict:
        return M.broker_gauges(self)


def test_under_replicated_partition_count_counts_led_partitions_only():
    """ReplicaManager.underReplicatedPartitionCount (leaderPartitionsIterator.count(
    isUnderReplicated)), LeaderCount and PartitionCount: a follower whose ISR is small is
    not counted."""
    b = Broker()
    b.lead(0, (0, 1))
    b.lead(1, (0, 1, 2))
    b.follow(2, 1)
    g = b.gauges()
    assert g[M.UNDER_REPLICATED] == 1
    assert g[M.LEADER_COUNT] == 2 and g[M.PARTITION_COUNT] == 3


def test_under_min_isr_and_at_min_isr_partition_counts():
    """UnderMinIsrPartitionCount / AtMinIsrPartitionCount: the led partitions whose ISR is below
    / equal to min.insync.replicas (isUnderMinIsr / isAtMinIsr)."""
    b = Broker(topic_config={"min.insync.replicas": 2})
    b.lead(0, (0,))
    b.lead(1, (0, 1))
    b.lead(2, (0, 1, 2))
    b.follow(3, 1)
    g = b.gauges()
    assert (g[M.UNDER_MIN_ISR], g[M.AT_MIN_ISR]) == (1, 1)


@pytest.mark.parametrize("version, under, at", [("3.6", 1, 0), ("3.7", 0, 1)])
def test_min_isr_counts_use_the_effective_min_isr(version, under, at):
    """Partition.effectiveMinIsr @3.7.0 (KAFKA-15583): min(min.insync.replicas, replicas);
    before 3.7 a min.insync.replicas above the replication factor put a fully replicated
    partition under min ISR."""
    b = Broker(version, topic_config={"min.insync.replicas": 5})
    b.lead(0, (0, 1, 2))
    g = b.gauges()
    assert (g[M.UNDER_MIN_ISR], g[M.AT_MIN_ISR]) == (under, at)


@pytest.mark.parametrize("version, urp, reassigning", [("2.4", 1, None), ("2.5", 0, 1)])
def test_a_reassignment_adding_replicas_is_not_under_replicated(version, urp, reassigning):
    """Partition.isUnderReplicated @2.5.0 (KIP-352): the replication factor of a partition
    being reassigned leaves out the adding replicas (OngoingReassignmentState
    .replicationFactor), and ReplicaManager counts it in ReassigningPartitions; 2.4 counted the
    whole replica set."""
    b = Broker(version)
    rm = b.replica_manager
    st = PartitionState("foo", 0, 0, 0, 5, (0, 1, 2), 1, (3, 0, 1, 2),
                        adding_replicas=(3,), removing_replicas=())
    rm.become_leader_or_follower(b, CONTROLLER, LeaderAndIsrRequest(CONTROLLER, 0, (st,)))
    g = b.gauges()
    assert g[M.UNDER_REPLICATED] == urp
    assert g.get(M.REASSIGNING_PARTITIONS) == reassigning
    replicas_count = M.partition_mbean("ReplicasCount", "foo", 0)
    assert M.partition_gauges(b)[replicas_count] == (4 if version == "2.4" else 3)


# -- PartitionTest (3.7.0): the AlterPartitionListener counts -----------------------------------
def _leader_with_records(version: str = "3.7", isr=(0,), replicas=(0, 1), **kw):
    """seedLogData(log, numRecords = 10, leaderEpoch = 4), then makeLeader at leader epoch 5,
    partition epoch 1."""
    b = Broker(version, **kw)
    part = b.partition("foo", 0)
    part.log.append_as_leader(list(range(10)), [1] * 10, 4, 0)
    b.lead(0, isr, replicas, epoch=5, partition_epoch=1)
    return b, part


def _fetch(b: Broker, part, replica: int, offset: int) -> None:
    part.update_follower_fetch_state(b, replica, offset, 0, part.log.log_end_offset, b.now)


def test_isr_expansion():
    """testIsrExpansion: the follower reaching the LEO is proposed for the ISR; once the
    controller commits it, one expansion is counted, no shrink, no failure."""
    b, part = _leader_with_records()
    _fetch(b, part, 1, 3)
    assert part.isr == (0,) and part.pending is None
    _fetch(b, part, 1, 10)
    assert part.pending is not None and set(part.maximal_isr(b)) == {0, 1}
    b.answer(part)
    assert set(part.isr) == {0, 1}
    assert b.listener() == (1, 0, 0)


def test_isr_not_expanded_if_update_fails():
    """testIsrNotExpandedIfUpdateFails: INVALID_UPDATE_VERSION leaves the ISR as it was and the
    change pending (awaiting new metadata), not retried; one failure counted."""
    b, part = _leader_with_records()
    _fetch(b, part, 1, 10)
    sent = len(b.sent)
    b.answer(part, E.INVALID_UPDATE_VERSION)
    assert part.isr == (0,) and set(part.maximal_isr(b)) == {0, 1}
    assert len(b.sent) == sent and not b.alter_partition_manager.unsent
    assert b.listener() == (0, 0, 1)


def test_invalid_alter_partition_requests_are_not_retried():
    """testInvalidAlterPartitionRequestsAreNotRetried: INVALID_REQUEST, the same."""
    b, part = _leader_with_records()
    _fetch(b, part, 1, 10)
    sent = len(b.sent)
    b.answer(part, E.INVALID_REQUEST)
    assert part.isr == (0,) and set(part.maximal_isr(b)) == {0, 1}
    assert len(b.sent) == sent
    assert b.listener() == (0, 0, 1)


def test_retry_shrink_isr():
    """testRetryShrinkIsr: a shrink answered with NETWORK_EXCEPTION is retried (a failure, no
    shrink yet); the retry's success counts the shrink and moves the HW to the LEO."""
    b, part = _leader_with_records(isr=(0, 1))
    assert part.log.high_watermark == 0
    b.now += b.config["replica.lag.time.max.ms"] + 1
    part.maybe_shrink_isr(b)
    assert part.pending is not None and part.pending.proposed_isr == (0,)
    b.answer(part, E.NETWORK_EXCEPTION)
    assert b.listener() == (0, 0, 1)
    assert part.get_partition_epoch() == 1 and part.isr == (0, 1)
    assert part.log.high_watermark == 0
    b.alter_partition_manager.send_request(b)     # the retry goes out again
    b.answer(part, partition_epoch=2)
    assert b.listener() == (0, 1, 1)
    assert part.get_partition_epoch() == 2 and part.isr == (0,)
    assert part.log.high_watermark == part.log.log_end_offset


def test_maybe_shrink_isr():
    """testMaybeShrinkIsr: a follower that never fetched is caught up at first (its clock
    starts at makeLeader) and out of sync after replica.lag.time.max.ms; the shrink is
    counted once the controller commits it, and the HW moves."""
    b, part = _leader_with_records(isr=(0, 1, 2), replicas=(0, 1, 2))
    _fetch(b, part, 1, part.log.log_end_offset)
    part.maybe_shrink_isr(b)
    assert part.pending is None and part.isr == (0, 1, 2)
    b.now += b.config["replica.lag.time.max.ms"] + 1
    part.maybe_shrink_isr(b)
    assert b.listener() == (0, 0, 0)
    assert part.pending.proposed_isr == (0, 1) and part.log.high_watermark == 0
    b.answer(part)
    assert b.listener() == (0, 1, 0)
    assert part.get_partition_epoch() == 2 and part.isr == (0, 1)
    assert part.log.high_watermark == part.log.log_end_offset


def test_add_and_remove_metrics():
    """testAddAndRemoveMetrics: a partition registers the Partition gauges (those kafkasim
    models; not LastStableOffsetLag); a follower reports them all 0."""
    b = Broker(topic_config={"min.insync.replicas": 2})
    b.lead(0, (0, 1))
    b.follow(1, 1)
    g = M.partition_gauges(b)
    for name in ("UnderReplicated", "UnderMinIsr", "InSyncReplicasCount", "ReplicasCount",
                 "AtMinIsr"):
        assert M.partition_mbean(name, "foo", 0) in g, name
        assert g[M.partition_mbean(name, "foo", 1)] == 0, name
    assert [g[M.partition_mbean(n, "foo", 0)] for n in M.PARTITION_GAUGES] == [2, 1, 3, 0, 1]


def test_update_assignment_and_isr():
    """testUpdateAssignmentAndIsr: with adding and removing replicas the partition is being
    reassigned (OngoingReassignmentState), without them it is not; the leader keeps a state for
    each other replica, a follower none and no ISR. makeLeader / makeFollower carry the
    reassignment of their partition state the same way."""
    part = Broker().partition("test", 1)
    part.update_assignment_and_isr((0, 1, 2, 3), True, (0, 1, 2, 3), (4, 5), (1, 2))
    assert part.is_reassigning() and part.replicas == (0, 1, 2, 3)
    st = part.assignment_state   # Kafka: partition.assignmentState (OngoingReassignmentState)
    assert (st.adding_replicas, st.removing_replicas) == ((4, 5), (1, 2))
    assert part.is_adding_replica(4) and not part.is_adding_replica(1)
    assert part.in_sync_replica_ids() == {0, 1, 2, 3}
    assert [r.broker_id for r in part.remote_replicas()] == [1, 2, 3]
    part.update_assignment_and_isr((0, 3, 4, 5), True, (0, 3, 4, 5))
    assert not part.is_reassigning() and part.replicas == (0, 3, 4, 5)
    assert part.in_sync_replica_ids() == {0, 3, 4, 5}
    assert [r.broker_id for r in part.remote_replicas()] == [3, 4, 5]
    part.update_assignment_and_isr((1, 2, 3, 4), False, ())
    assert not part.is_reassigning() and part.replicas == (1, 2, 3, 4)
    assert part.in_sync_replica_ids() == set() and part.remote_replicas() == []
    b = Broker()
    led = b.lead(0, (0, 1, 2), (0, 1, 2, 3), adding=(3,))
    assert led.is_reassigning() and led.assignment_state.replication_factor() == 3
    followed = b.follow(1, 1)
    assert not followed.is_reassigning() and followed.remote_replicas() == []


# -- the ZooKeeper controller's OfflinePartitionsCount and PreferredReplicaImbalanceCount -------
def test_updating_offline_partitions_count():
    """PartitionStateMachineTest.testUpdatingOfflinePartitionsCount: four partitions whose
    leader is not online go OfflinePartition (offlinePartitionCount 4); electing them brings
    them OnlinePartition (0). kafkasim's transition to OfflinePartition is onBrokerFailure's
    partitionsWithOfflineLeader, here with the broker not live yet."""
    h = _harness(live=())
    tps = [("test", p) for p in range(4)]
    for tp in tps:
        h.put_partition(tp, [BROKER_ID], leader=BROKER_ID, isr=[BROKER_ID])
    h.ctl.on_broker_failure(h.ctx, h.zk, [])
    cc = h.ctl.context
    assert cc.offline_partition_count() == len(tps)
    cc.live_brokers = [BROKER_ID]
    h.ctl.handle_state_changes(h.ctx, h.zk, tps, "offline")
    assert cc.offline_partition_count() == 0


@pytest.mark.parametrize("version, expected", [("2.0", 0), ("2.1", 1)])
def test_offline_partitions_count_during_another_brokers_controlled_shutdown(version, expected):
    """KafkaController.updateMetrics @2.0.0 counted the partitions whose leader is not a live or
    shutting-down broker; since KAFKA-6753 (2.1) the OfflinePartition states. They differ for a
    partition led by a broker in controlled shutdown when another broker fails:
    onReplicasBecomeOffline takes it OfflinePartition (its leader is not isReplicaOnline) and
    the offline election finds no other replica."""
    h = _harness(live=(1, 2), version=version, shutting_down=(1,), controller_id=2)
    tp = ("t", 0)
    h.put_partition(tp, [1], leader=1, isr=[1])
    h.ctl.context.live_brokers = [1]
    h.ctl.on_broker_failure(h.ctx, h.zk, [2])
    assert M.zk_offline_partitions_count(h.ctl.context, rules_for(version).metrics) == expected


@pytest.mark.parametrize("mode", ["zk", "kraft"])
def test_offline_partitions_count_follows_the_only_replica(mode):
    """OfflinePartitionsCount in both modes: the partition whose only replica crashed is
    offline on the active ZooKeeper controller (0 on the other brokers) and on every KRaft
    controller, until the broker is back."""
    c = _zk(3) if mode == "zk" else _kraft(3)
    c.create_topic("t", 1, assignment=[[2]])
    c.crash(2)
    c.run(20_000)
    values = c.metrics.latest()
    nodes = list(c.kraft.nodes) if mode == "kraft" else [b for b in c.brokers if b != 2]
    active = c.controller_id()
    for n in nodes:
        want = 1 if mode == "kraft" or n == active else 0
        assert values[(n, M.OFFLINE_PARTITIONS)] == want, n
    assert c.start(2, retry=True) or c.run_until(lambda cl: cl.brokers[2].is_running, 60_000)
    c.run(10_000)
    values = c.metrics.latest()
    assert all(values[(n, M.OFFLINE_PARTITIONS)] == 0 for n in nodes)


def test_preferred_replica_imbalance_count_during_a_reassignment():
    """ControllerContext.hasPreferredLeader @3.7.0 (KIP-455): a partition whose new preferred
    replica is being added counts as balanced until that replica joins the ISR; a partition
    whose preferred replica is an old one counts by its leader."""
    cc = ControllerContext()
    tp1, tp2 = ("a", 0), ("b", 0)
    cc.update_partition_full_replica_assignment(tp1, ReplicaAssignment((1, 2, 3)).reassign_to(
        (4, 5, 6)))
    cc.states[tp1] = (1, 0, (1, 2, 3), 0)
    cc.update_partition_full_replica_assignment(tp2, ReplicaAssignment((2, 3)))
    cc.states[tp2] = (3, 0, (2, 3), 0)
    assert cc.partition_full_replica_assignment(tp1).adding_replicas == (4, 5, 6)
    assert cc.preferred_replica_imbalance_count() == 1          # tp2 only
    cc.states[tp1] = (1, 1, (1, 2, 3, 4), 0)                    # 4 joined the ISR
    assert cc.preferred_replica_imbalance_count() == 2


def test_metrics_during_topic_creation():
    """MetricsDuringTopicCreationDeletionTest.testMetricsDuringTopicCreateDelete, its creation
    half: while topics are created one after the other, OfflinePartitionsCount and
    PreferredReplicaImbalanceCount stay 0 on the controller and no partition is reported
    under-replicated by its leader."""
    c = _zk(3, metrics_interval_ms=100)
    for i in range(10):
        c.create_topic(f"topic-{i}", 2, 3, wait=False)
        c.run(150)
    c.run(3000)
    for _t, _b, mbean, value in c.metrics.rows:
        if mbean in (M.OFFLINE_PARTITIONS, M.PREFERRED_IMBALANCE):
            assert value == 0, mbean
    assert all(v == 0 for (_b, m), v in c.metrics.latest().items() if m == M.UNDER_REPLICATED)


# -- ControllerMetricsChangesTest (trunk 1eb7644) ------------------------------------------------
def _registration(kind: str) -> R.PartitionRegistration:
    """ControllerMetricsTestUtils.fakePartitionRegistration: replicas and ISR 0, 1, 2; leader 0
    (NORMAL), 1 (NON_PREFERRED_LEADER) or none (OFFLINE)."""
    leader = {"NORMAL": 0, "NON_PREFERRED_LEADER": 1, "OFFLINE": -1}[kind]
    return R.PartitionRegistration((0, 1, 2), (0, 1, 2), leader=leader, leader_epoch=100,
                                   partition_epoch=200)


def _broker(broker_id: int, fenced: bool) -> R.BrokerRegistration:
    return R.BrokerRegistration(broker_id, 100, "Pxi6QwS2RFuN8VSKjqJZyQ", fenced=fenced)


FOO_ID = "wXtW6pQbTS2CL6PjdRCqVw"


def _topic_delta1() -> TopicDelta:
    delta = TopicDelta(TopicImage("foo", FOO_ID))
    for pid, kind in enumerate(["NORMAL", "NORMAL", "NORMAL", "NON_PREFERRED_LEADER",
                                "NON_PREFERRED_LEADER"]):
        delta.replay(_registration(kind).to_record(FOO_ID, pid))
    return delta


def _topic_delta2() -> TopicDelta:
    delta = TopicDelta(_topic_delta1().apply())
    delta.replay(R.PartitionChangeRecord(1, FOO_ID, leader=1))
    delta.replay(_registration("NORMAL").to_record(FOO_ID, 5))
    return delta


def test_delta():
    """testDelta."""
    d = CM.ControllerMetricsChanges.delta
    assert (d(False, False), d(False, True), d(True, False), d(True, True)) == (0, 1, -1, 0)


def test_initial_values():
    """testInitialValues."""
    changes = CM.ControllerMetricsChanges()
    assert (changes.fenced_brokers_change(), changes.active_brokers_change(),
            changes.global_topics_change(), changes.global_partitions_change(),
            changes.offline_partitions_change(),
            changes.partitions_without_preferred_leader_change()) == (0, 0, 0, 0, 0, 0)


@pytest.mark.parametrize("prev, nxt, fenced, active", [
    (None, False, 0, 1),       # testHandleNewUnfencedBroker
    (None, True, 1, 0),        # testHandleNewFencedBroker
    (False, True, 1, -1),      # testHandleBrokerFencing
    (True, False, -1, 1),      # testHandleBrokerUnfencing
])
def test_handle_broker_change(prev, nxt, fenced, active):
    """testHandleNewUnfencedBroker, testHandleNewFencedBroker, testHandleBrokerFencing,
    testHandleBrokerUnfencing."""
    changes = CM.ControllerMetricsChanges()
    changes.handle_broker_change(None if prev is None else _broker(1, prev), _broker(1, nxt))
    assert (changes.fenced_brokers_change(), changes.active_brokers_change()) == (fenced, active)


def test_handle_deleted_topic():
    """testHandleDeletedTopic: the offline partition also counts as one without its preferred
    leader."""
    kinds = ["NORMAL", "NORMAL", "NON_PREFERRED_LEADER", "NON_PREFERRED_LEADER", "OFFLINE"]
    topic = TopicImage("foo", FOO_ID, {i: _registration(k) for i, k in enumerate(kinds)})
    changes = CM.ControllerMetricsChanges()
    changes.handle_deleted_topic(topic)
    assert (changes.global_topics_change(), changes.global_partitions_change(),
            changes.offline_partitions_change(),
            changes.partitions_without_preferred_leader_change()) == (-1, -5, -1, -3)


def test_handle_new_topic():
    """testHandleNewTopic."""
    changes = CM.ControllerMetricsChanges()
    changes.handle_topic_change(None, _topic_delta1())
    assert (changes.global_topics_change(), changes.global_partitions_change(),
            changes.offline_partitions_change(),
            changes.partitions_without_preferred_leader_change()) == (1, 5, 0, 2)


def test_topic_change():
    """testTopicChange: partition 1 moves to a non-preferred leader, partition 5 is new."""
    delta = _topic_delta2()
    changes = CM.ControllerMetricsChanges()
    changes.handle_topic_change(delta.image, delta)
    assert (changes.global_topics_change(), changes.global_partitions_change(),
            changes.offline_partitions_change(),
            changes.partitions_without_preferred_leader_change()) == (0, 1, 0, 1)


def test_unclean_leader_election_change():
    """ControllerMetricsChanges.handlePartitionChange (trunk): a leader outside the previous
    ISR is an unclean election, counted once by ``apply``; a new partition's replicas count as
    its previous ISR."""
    changes = CM.ControllerMetricsChanges()
    prev = R.PartitionRegistration((0, 1, 2), (0,), leader=0)
    changes.handle_partition_change(prev, R.PartitionRegistration((0, 1, 2), (1,), leader=1))
    changes.handle_partition_change(None, _registration("NON_PREFERRED_LEADER"))
    metrics = CM.ControllerMetadataMetrics()
    changes.apply(metrics)
    changes.apply(metrics)
    assert metrics.unclean_leader_elections == 1


# -- ControllerMetadataMetricsPublisherTest / ControllerMetadataMetricsTest ----------------------
def _image(topics: dict[str, tuple[str, list[str]]], brokers=()) -> MetadataImage:
    """An image with ``topics`` (name -> (id, partition kinds)) and ``brokers``."""
    img = MetadataImage()
    offset = 0
    for b in brokers:
        img.replay(R.RegisterBrokerRecord(b.id, b.epoch, b.incarnation_id, None, b.fenced),
                   offset)
        offset += 1
    for name, (tid, kinds) in topics.items():
        img.replay(R.TopicRecord(name, tid), offset)
        offset += 1
        for pid, kind in enumerate(kinds):
            img.replay(_registration(kind).to_record(tid, pid), offset)
            offset += 1
    return img


IMAGE1_TOPICS = {
    "foo": ("JKNp6fQaT-icHxh654ok-w", ["NORMAL"]),
    "bar": ("pEMSdUVWTXaFQUzLTznFSw", ["NORMAL", "NORMAL", "NON_PREFERRED_LEADER"]),
    "quux": ("zkUT4lyyRke6VIaTw6RQWg", ["OFFLINE", "OFFLINE", "OFFLINE"]),
}


def test_metrics_before_publishing():
    """testMetricsBeforePublishing (and testPublish: nothing published, nothing counted)."""
    metrics = CM.ControllerMetadataMetrics()
    CM.ControllerMetadataMetricsPublisher(metrics)
    assert (metrics.active_broker_count, metrics.global_topic_count,
            metrics.global_partition_count, metrics.offline_partition_count,
            metrics.preferred_replica_imbalance_count, metrics.metadata_error_count) == \
        (0, 0, 0, 0, 0, 0)


def test_load_snapshot():
    """testLoadSnapshot."""
    metrics = CM.ControllerMetadataMetrics()
    publisher = CM.ControllerMetadataMetricsPublisher(metrics)
    publisher.on_metadata_update(_image(IMAGE1_TOPICS), CM.SNAPSHOT)
    assert (metrics.active_broker_count, metrics.global_topic_count,
            metrics.global_partition_count, metrics.offline_partition_count,
            metrics.preferred_replica_imbalance_count, metrics.metadata_error_count) == \
        (0, 3, 7, 3, 4, 0)


def test_log_deltas_add_up_to_the_snapshot():
    """ControllerMetadataMetricsPublisher.publishDelta: deltas from the empty image (a new
    fenced broker, the topics, then the broker unfenced and a topic gone) leave the gauges
    where a snapshot of the last image puts them."""
    metrics = CM.ControllerMetadataMetrics()
    publisher = CM.ControllerMetadataMetricsPublisher(metrics)
    first = _image({"foo": IMAGE1_TOPICS["foo"]}, [_broker(1, True)])
    publisher.on_metadata_update(first, CM.LOG_DELTA)
    assert (metrics.fenced_broker_count, metrics.active_broker_count,
            metrics.global_topic_count, metrics.global_partition_count) == (1, 0, 1, 1)
    last = _image({k: v for k, v in IMAGE1_TOPICS.items() if k != "foo"}, [_broker(1, False)])
    publisher.on_metadata_update(last, CM.LOG_DELTA)
    snapshot = CM.ControllerMetadataMetrics()
    CM.ControllerMetadataMetricsPublisher(snapshot).on_metadata_update(last, CM.SNAPSHOT)
    assert metrics.gauges() == snapshot.gauges()
    assert (metrics.fenced_broker_count, metrics.active_broker_count,
            metrics.global_topic_count, metrics.global_partition_count,
            metrics.offline_partition_count, metrics.preferred_replica_imbalance_count) == \
        (0, 1, 2, 6, 3, 4)


@pytest.mark.parametrize("name, mbean", [
    ("fenced_broker_count", "FencedBrokerCount"),                 # testFencedBrokerMetric
    ("active_broker_count", "ActiveBrokerCount"),                 # testActiveBrokerCountMetric
    ("global_topic_count", "GlobalTopicCount"),                   # testGlobalTopicCountMetric
    ("global_partition_count", "GlobalPartitionCount"),           # testGlobalPartitionCount...
    ("offline_partition_count", "OfflinePartitionsCount"),        # testOfflinePartitionCount...
    ("preferred_replica_imbalance_count", "PreferredReplicaImbalanceCount"),
])
def test_int_gauge_metric(name, mbean):
    """ControllerMetadataMetricsTest.testIntGaugeMetric for each gauge: 0, set to 123, add 123,
    add -246; the gauge under its MBean name follows."""
    metrics = CM.ControllerMetadataMetrics()
    assert getattr(metrics, name) == metrics.gauges()[KC + mbean] == 0
    getattr(metrics, f"set_{name}")(123)
    assert getattr(metrics, name) == metrics.gauges()[KC + mbean] == 123
    getattr(metrics, f"add_to_{name}")(123)
    assert getattr(metrics, name) == metrics.gauges()[KC + mbean] == 246
    getattr(metrics, f"add_to_{name}")(-246)
    assert getattr(metrics, name) == metrics.gauges()[KC + mbean] == 0


def test_metadata_error_count():
    """testMetadataErrorCount."""
    metrics = CM.ControllerMetadataMetrics()
    assert metrics.gauges()[KC + "MetadataErrorCount"] == 0
    metrics.increment_metadata_error_count()
    assert metrics.gauges()[KC + "MetadataErrorCount"] == 1


def test_update_unclean_leader_election():
    """testUpdateUncleanLeaderElection."""
    metrics = CM.ControllerMetadataMetrics()
    assert metrics.unclean_leader_elections == 0
    metrics.update_unclean_leader_election(2)
    assert metrics.unclean_leader_elections == 2


def test_metric_names():
    """ControllerMetadataMetricsTest.testMetricNames (the gauges kafkasim models)."""
    assert set(CM.ControllerMetadataMetrics().gauges()) == {
        KC + n for n in ("ActiveBrokerCount", "FencedBrokerCount", "GlobalPartitionCount",
                         "GlobalTopicCount", "MetadataErrorCount", "OfflinePartitionsCount",
                         "PreferredReplicaImbalanceCount")}


# -- TopicCommandTest (trunk) / TopicCommandIntegrationTest (3.7.0) ------------------------------
def _generate(version: str = "3.7", **kw) -> Cluster:
    """ClusterTemplate "generate": six brokers 0-5."""
    if version.startswith("4"):
        return _kraft(6, version, **kw)
    return _zk(6, version, **kw)


def _kill(c: Cluster, broker: int, wait_ms: int = 30_000) -> None:
    """clusterInstance.shutdownBroker: the broker stops; the controller moves on."""
    c.shutdown(broker)
    c.run(wait_ms)


def test_is_not_under_replicated_when_adding():
    """testIsNotUnderReplicatedWhenAdding: replicas 1, 2 with 2 being added and ISR 1: the
    replication factor is 1, so the partition is not under-replicated."""
    p = {"partition": 0, "leader": 1, "replicas": [1, 2], "isr": [1], "min_isr": 1,
         "live_brokers": [1, 2], "reassignment": ([2], [])}
    assert not partition_reported(p, rules_for("3.7"), {"under_replicated": True})


@pytest.mark.parametrize("version", ["3.7", "4.1"])
def test_describe(version):
    """testDescribe: a topic of 2 partitions, replication factor 2: three rows, the first
    "Topic: <name>"."""
    c = _generate(version)
    c.create_topic("t1", 2, 2)
    rows = c.describe("t1").splitlines()
    assert len(rows) == 3 and rows[0].startswith("Topic: t1")


@pytest.mark.parametrize("version", ["3.7", "4.1"])
def test_describe_unavailable_partitions(version):
    """testDescribeUnavailablePartitions: six partitions of replication factor 1; broker 0
    stops: its partition is reported with "Leader: none\\tReplicas: 0\\tIsr:"."""
    c = _generate(version)
    c.create_topic("t1", 6, 1)
    _kill(c, 0)
    rows = c.describe("t1", unavailable_partitions=True).splitlines()
    assert rows[0].startswith("\tTopic: t1")
    assert "Leader: none\tReplicas: 0\tIsr:" in rows[0]
    assert len(rows) == 1


@pytest.mark.parametrize("version", ["3.7", "4.1"])
def test_describe_under_replicated_partitions(version):
    """testDescribeUnderReplicatedPartitions: replication factor 6, broker 0 stopped."""
    c = _generate(version)
    c.create_topic("t1", 1, 6)
    _kill(c, 0)
    rows = c.describe(under_replicated_partitions=True).splitlines()
    assert rows[0].startswith("\tTopic: t1")


@pytest.mark.parametrize("version", ["3.7", "4.1"])
def test_describe_under_min_isr_partitions(version):
    """testDescribeUnderMinIsrPartitions: min.insync.replicas 6 of 6, one broker stopped."""
    c = _generate(version)
    c.create_topic("t1", 1, 6, config={"min.insync.replicas": 6})
    _kill(c, 0)
    rows = c.describe(under_min_isr_partitions=True, exclude_internal=True).splitlines()
    assert rows[0].startswith("\tTopic: t1")


def test_describe_under_replicated_partitions_when_reassignment_is_in_progress():
    """testDescribeUnderReplicatedPartitionsWhenReassignmentIsInProgress: a partition of
    replication factor 1 reassigned to another broker, whose catching up is held back (Kafka
    throttles it): --describe shows it with the reassignment, --under-replicated-partitions
    does not (the adding replica does not count); the leader does not report it
    under-replicated either, and counts it in ReassigningPartitions."""
    c = _generate("3.7")
    c.create_topic("t1", 1, 1)
    p = c.producer(acks="all")
    for i in range(20):
        p.send("t1", f"v{i}", partition=0)
    c.run(2000)
    (old,) = c.assignment("t1")[0]
    target = next(b for b in sorted(c.brokers) if b != old)
    c.hold("FetchRequest", src=target)
    assert c.admin().alter_partition_reassignments({("t1", 0): [target]}) == {("t1", 0): "NONE"}
    c.run(2000)
    assert c.admin().list_partition_reassignments()[("t1", 0)]["adding_replicas"] == [target]
    rows = c.describe("t1").splitlines()
    assert rows[0].startswith("Topic: t1") and len(rows) == 2
    assert c.describe(under_replicated_partitions=True) == ""
    g = M.broker_gauges(c.brokers[old])
    assert g[M.UNDER_REPLICATED] == 0 and g[M.REASSIGNING_PARTITIONS] == 1
    c.release("FetchRequest", src=target)
    assert c.run_until(lambda cl: not cl.admin().list_partition_reassignments(), 60_000)


@pytest.mark.parametrize("version", ["3.7", "4.1"])
def test_describe_at_min_isr_partitions(version):
    """testDescribeAtMinIsrPartitions: min.insync.replicas 4 of 6, brokers 0 and 1 stopped:
    the one partition is reported, and only it."""
    c = _generate(version)
    c.create_topic("t1", 1, 6, config={"min.insync.replicas": 4})
    _kill(c, 0)
    _kill(c, 1)
    rows = c.describe(at_min_isr_partitions=True, exclude_internal=True).splitlines()
    assert rows[0].startswith("\tTopic: t1") and len(rows) == 1


@pytest.mark.parametrize("version", ["3.7", "4.1"])
def test_describe_under_min_isr_partitions_mixed(version):
    """testDescribeUnderMinIsrPartitionsMixed: of a topic under min ISR, one under-replicated
    but not under min ISR, one offline and one fully replicated, --under-min-isr-partitions
    reports the first and the offline one."""
    c = _generate(version)
    c.create_topic("under-min-isr-topic", 1, 6, config={"min.insync.replicas": 6})
    c.create_topic("not-under-min-isr-topic", 1, 6)
    c.create_topic("offline-topic", assignment=[[0]])
    c.create_topic("fully-replicated-topic", assignment=[[1, 2, 3]])
    _kill(c, 0)
    rows = c.describe(under_min_isr_partitions=True, exclude_internal=True).splitlines()
    assert rows[0].startswith("\tTopic: under-min-isr-topic")
    assert rows[1].startswith("\tTopic: offline-topic")
    assert len(rows) == 2


def test_describe_report_overridden_configs():
    """testDescribeReportOverriddenConfigs: a topic config set at creation shows in Configs
    (retention.ms for Kafka's file.delete.delay.ms, a config kafkasim does not model)."""
    c = _generate("3.7")
    c.create_topic("t1", 2, 2, config={"retention.ms": 1000})
    assert "retention.ms=1000" in c.describe()


def test_describe_and_list_topics_without_internal_topics():
    """testDescribeAndListTopicsWithoutInternalTopics: --exclude-internal leaves out
    __consumer_offsets."""
    c = _generate("3.7")
    c.create_topic("t1", 1, 1)
    c.create_topic("__consumer_offsets", 1, 1)
    out = c.describe(exclude_internal=True)
    assert "t1" in out and "__consumer_offsets" not in out
    assert "__consumer_offsets" in c.describe()


# -- TopicCommand's report options, by release ---------------------------------------------------
@pytest.fixture(scope="module")
def mixed():
    """Topic "a": min ISR 2 of 3 with broker 2 stopped (under-replicated and at min ISR);
    topic "b": its only replica on broker 2 (offline); topic "c": fully replicated."""
    out = {}
    for version in ("2.2", "2.3", "3.6", "3.7"):
        c = _zk(3, version)
        c.create_topic("a", assignment=[[0, 1, 2]], config={"min.insync.replicas": 2})
        c.create_topic("b", assignment=[[2]])
        c.create_topic("c", assignment=[[0, 1]])
        _kill(c, 2)
        out[version] = c
    return out


def _reported(c: Cluster, **opts) -> list[str]:
    return [line.split("\t")[1] for line in c.describe(**opts).splitlines()]


def test_report_options_combine_since_3_7(mixed):
    """TopicCommand @3.7.0 (KAFKA-14596): several report options at once print the partitions
    matching any of them (DescribeOptions.shouldPrintTopicPartition)."""
    c = mixed["3.7"]
    assert _reported(c, under_replicated_partitions=True) == ["Topic: a"]
    assert _reported(c, unavailable_partitions=True) == ["Topic: b"]
    assert _reported(c, under_replicated_partitions=True, unavailable_partitions=True) == \
        ["Topic: a", "Topic: b"]


def test_report_options_are_exclusive_before_3_7(mixed):
    """TopicCommand.scala checkArgs (0.8.2-3.6): each report option refuses the others."""
    with pytest.raises(ClusterError, match=r'Option "\[under-replicated-partitions\]" can\'t be '
                                           r'used with option "\[unavailable-partitions\]"'):
        mixed["3.6"].describe(under_replicated_partitions=True, unavailable_partitions=True)


@pytest.mark.parametrize("version", ["3.6", "3.7"])
def test_report_options_refuse_topics_with_overrides(mixed, version):
    """checkInvalidArgs: no report option with --topics-with-overrides."""
    with pytest.raises(ClusterError, match="topics-with-overrides"):
        mixed[version].describe(at_min_isr_partitions=True, topics_with_overrides=True)


def test_min_isr_options_exist_since_2_3(mixed):
    """--under-min-isr-partitions (KIP-351) and --at-min-isr-partitions (KIP-427) came in 2.3;
    2.2's kafka-topics does not know them."""
    with pytest.raises(ClusterError, match="under-min-isr-partitions is not a recognized"):
        mixed["2.2"].describe(under_min_isr_partitions=True)
    with pytest.raises(ClusterError, match="at-min-isr-partitions is not a recognized"):
        mixed["2.2"].describe(at_min_isr_partitions=True)


@pytest.mark.parametrize("version, under, at", [
    ("2.3", [], []),                                  # --zookeeper: compared with 0
    ("3.6", ["Topic: b"], ["Topic: a", "Topic: b"]),  # b: no leader; ISR [2], min ISR 1
])
def test_min_isr_options_by_release(mixed, version, under, at):
    """PartitionDescription @2.3.0 (--zookeeper path: minIsrCount 0) and @2.4.0+ (the topic's
    min.insync.replicas; no leader counts as under min ISR)."""
    c = mixed[version]
    assert _reported(c, under_min_isr_partitions=True) == under
    assert _reported(c, at_min_isr_partitions=True) == at
