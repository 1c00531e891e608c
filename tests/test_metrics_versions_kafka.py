"""Kafka's metric tests at older tags, ported where a metric's name, registration or meaning
differs from the 3.7 ports of tests/test_replication_metrics_kafka.py.

Sources (apache/kafka): ``core/src/test/scala/unit/kafka/metrics/MetricsTest.scala``
(testControllerMetrics @1.0.0 / 2.2.0), ``integration/MetricsDuringTopicCreationDeletionTest``
(@0.10.2.0 / 1.1.0 / 2.0.0, its creation half), and where Kafka has no test of its own the
source read at the tag: ``server/ReplicaManager.scala`` (the gauges and IsrShrinksPerSec /
IsrExpandsPerSec meters), ``cluster/Partition.scala`` (the UnderMinIsr / AtMinIsr gauges),
``controller/KafkaController.scala`` (updateMetrics) and ``server/ReplicaFetcherManager`` /
``AbstractFetcherManager`` (MaxLag). A gauge is read as tests/test_replication_metrics_kafka.py
does: ``cluster.metrics.latest()`` or ``broker_gauges`` of one broker.

Left out: ControllerStats' rate-and-time timers (ControllerIntegrationTest.testPartition
Reassignment @1.0.0 reads kafka.controller:type=ControllerStats,name=PartitionReassignment
RateAndTimeMs; kafkasim has no controller event timers), ControllerState (a gauge of the event
being processed, always idle between simulated events), topic deletion (the deletion half of
MetricsDuringTopicCreationDeletionTest) and OfflineReplicaCount (no log dirs).
"""

from __future__ import annotations

import pytest

from kafkasim.runtime import metrics as M
from kafkasim.runtime.cluster import Cluster
from tests.test_replication_metrics_kafka import Broker

ZK_CONTROLLER_MBEANS_1_0 = [M.ACTIVE_CONTROLLER, M.OFFLINE_PARTITIONS, M.PREFERRED_IMBALANCE,
                            M.GLOBAL_TOPICS, M.GLOBAL_PARTITIONS]


def _zk(version: str, n: int = 3) -> Cluster:
    c = Cluster(list(range(n)), seed=1, kafka_version=version)
    assert c.run_until(lambda cl: cl.controller_id() >= 0, 30_000)
    return c


def _names(c: Cluster) -> set[str]:
    return {m.split(":Count")[0].split(":Rate")[0] for _t, _b, m, _v in c.metrics.rows}


# -- MetricsTest.testControllerMetrics ----------------------------------------------------------
@pytest.mark.parametrize("version", ["1.0", "2.2"])
def test_controller_metrics(version):
    """MetricsTest.testControllerMetrics @1.0.0 / @2.2.0: ActiveControllerCount,
    OfflinePartitionsCount, PreferredReplicaImbalanceCount, GlobalTopicCount and
    GlobalPartitionCount are registered; one broker (the active controller) reports 1 active
    controller."""
    c = _zk(version)
    c.run(2000)
    names = _names(c)
    for mbean in ZK_CONTROLLER_MBEANS_1_0:
        assert mbean in names, mbean
    latest = c.metrics.latest()
    assert sum(latest[(b, M.ACTIVE_CONTROLLER)] for b in c.brokers) == 1
    assert M.ACTIVE_BROKERS not in names    # KIP-748, 3.1


@pytest.mark.parametrize("version", ["0.10.2", "0.11.0"])
def test_controller_metrics_before_global_counts(version):
    """KafkaController @0.10.2.0 / @0.11.0.0 registers ActiveControllerCount,
    OfflinePartitionsCount and PreferredReplicaImbalanceCount only (GlobalTopicCount and
    GlobalPartitionCount came with KAFKA-5461 in 1.0.0)."""
    c = _zk(version)
    c.run(2000)
    names = _names(c)
    assert {M.ACTIVE_CONTROLLER, M.OFFLINE_PARTITIONS, M.PREFERRED_IMBALANCE} <= names
    assert M.GLOBAL_TOPICS not in names and M.GLOBAL_PARTITIONS not in names


@pytest.mark.parametrize("version", ["1.0", "2.0", "2.2"])
def test_global_topic_and_partition_counts(version):
    """KafkaController.updateMetrics @1.0.0 - 2.2.0: GlobalTopicCount is the topics the
    controller knows, GlobalPartitionCount its partitions with leadership info, on the active
    controller only (0 on the others)."""
    c = _zk(version)
    c.create_topic("a", 2, 2)
    c.create_topic("b", 3, 1)
    c.run(3000)
    latest = c.metrics.latest()
    active = c.controller_id()
    for b in c.brokers:
        want = (2, 5) if b == active else (0, 0)
        assert (latest[(b, M.GLOBAL_TOPICS)], latest[(b, M.GLOBAL_PARTITIONS)]) == want, b


# -- MetricsDuringTopicCreationDeletionTest (creation half) -------------------------------------
@pytest.mark.parametrize("version", ["0.10.2", "1.1", "2.0"])
def test_metrics_during_topic_creation(version):
    """MetricsDuringTopicCreationDeletionTest.testMetricsDuringTopicCreateDelete @0.10.2.0 /
    1.1.0 / 2.0.0 (its creation half): while topics are created, OfflinePartitionsCount and
    PreferredReplicaImbalanceCount stay 0 on every sample, and UnderReplicatedPartitions is 0
    once they are created (the test allows it to be non-zero during creation, KAFKA-4605)."""
    c = _zk(version)
    for i in range(5):
        c.create_topic(f"topic_{i}", 3, 3)
        c.run(500)
    c.run(5000)
    tested = (M.OFFLINE_PARTITIONS, M.PREFERRED_IMBALANCE)
    assert all(v == 0 for _t, _b, m, v in c.metrics.rows if m in tested)
    latest = c.metrics.latest()
    assert all(latest[(b, M.UNDER_REPLICATED)] == 0 for b in c.brokers)


# -- ReplicaManager's gauges at older tags ------------------------------------------------------
@pytest.mark.parametrize("version", ["0.10.2", "0.11.0"])
def test_replica_manager_gauges_before_min_isr_counts(version):
    """ReplicaManager @0.10.2.0 / @0.11.0.0: LeaderCount, PartitionCount and
    UnderReplicatedPartitions; no UnderMinIsrPartitionCount (KIP-164, 1.0.0) or
    AtMinIsrPartitionCount (KIP-427, 2.3.0)."""
    b = Broker(version, topic_config={"min.insync.replicas": 2})
    b.lead(0, (0,))
    b.lead(1, (0, 1, 2))
    b.follow(2, 1)
    g = b.gauges()
    assert (g[M.UNDER_REPLICATED], g[M.LEADER_COUNT], g[M.PARTITION_COUNT]) == (1, 2, 3)
    assert M.UNDER_MIN_ISR not in g and M.AT_MIN_ISR not in g


@pytest.mark.parametrize("version", ["1.0", "2.2"])
def test_under_min_isr_partition_count_without_at_min_isr(version):
    """ReplicaManager.underMinIsrPartitionCount @1.0.0 / @2.2.0 (KIP-164): the led partitions
    whose ISR is below min.insync.replicas; a follower is not counted, and there is no
    AtMinIsrPartitionCount yet (KIP-427, 2.3.0)."""
    b = Broker(version, topic_config={"min.insync.replicas": 2})
    b.lead(0, (0,))
    b.lead(1, (0, 1))
    b.follow(2, 1, replicas=(1, 0, 2))
    g = b.gauges()
    assert g[M.UNDER_MIN_ISR] == 1
    assert M.AT_MIN_ISR not in g


def test_at_min_isr_partition_count_at_2_3():
    """ReplicaManager.atMinIsrPartitionCount @2.3.0 (KIP-427): the led partitions whose ISR
    size equals min.insync.replicas."""
    b = Broker("2.3", topic_config={"min.insync.replicas": 2})
    b.lead(0, (0,))
    b.lead(1, (0, 1))
    b.lead(2, (0, 1, 2))
    g = b.gauges()
    assert (g[M.UNDER_MIN_ISR], g[M.AT_MIN_ISR]) == (1, 1)


# -- MaxLag ---------------------------------------------------------------------------------------
@pytest.mark.parametrize("version", ["0.10.2", "2.0"])
def test_replica_fetcher_manager_max_lag(version):
    """AbstractFetcherManager's MaxLag gauge (clientId=Replica) @0.10.2.0 / @2.0.0: the largest
    lag of the partitions its fetchers follow; 0 once the followers caught up."""
    c = _zk(version)
    c.create_topic("t", 1, assignment=[[0, 1, 2]])
    c.run(3000)
    r = c.producer(acks="all").send("t", "v", partition=0)
    c.run_until(lambda cl: r.status != "pending", 30_000)
    c.run(3000)
    latest = c.metrics.latest()
    assert all(latest[(b, M.MAX_LAG)] == 0 for b in c.brokers)
    assert M.MAX_LAG in _names(c)
