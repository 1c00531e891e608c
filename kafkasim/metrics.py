"""Kafka's replication metrics under their JMX MBean names, sampled over simulated time.

Gauges are computed from broker state when sampled; meters (``...PerSec``) are counters the
brokers mark, reported as their cumulative ``Count`` and the rate over the last sample interval
(events per second), as a JMX scraper would derive it (fact sheet §12).
"""

from __future__ import annotations

RM = "kafka.server:type=ReplicaManager,name="
UNDER_REPLICATED = RM + "UnderReplicatedPartitions"
UNDER_MIN_ISR = RM + "UnderMinIsrPartitionCount"
AT_MIN_ISR = RM + "AtMinIsrPartitionCount"
LEADER_COUNT = RM + "LeaderCount"
PARTITION_COUNT = RM + "PartitionCount"
ISR_SHRINKS = RM + "IsrShrinksPerSec"
ISR_EXPANDS = RM + "IsrExpandsPerSec"
FAILED_ISR_UPDATES = RM + "FailedIsrUpdatesPerSec"
MAX_LAG = "kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica"
ACTIVE_CONTROLLER = "kafka.controller:type=KafkaController,name=ActiveControllerCount"
OFFLINE_PARTITIONS = "kafka.controller:type=KafkaController,name=OfflinePartitionsCount"
PREFERRED_IMBALANCE = "kafka.controller:type=KafkaController,name=PreferredReplicaImbalanceCount"
UNCLEAN_ELECTIONS = "kafka.controller:type=ControllerStats,name=UncleanLeaderElectionsPerSec"


def partition_mbean(name: str, topic: str, partition: int) -> str:
    return f"kafka.cluster:type=Partition,name={name},topic={topic},partition={partition}"


METER_MBEANS = {
    "IsrShrinksPerSec": ISR_SHRINKS,
    "IsrExpandsPerSec": ISR_EXPANDS,
    "FailedIsrUpdatesPerSec": FAILED_ISR_UPDATES,
    "UncleanLeaderElectionsPerSec": UNCLEAN_ELECTIONS,
}


def broker_gauges(broker) -> dict[str, int]:
    """Current gauge values of one running broker."""
    leaders = [p for p in broker.replica_manager.partitions.values() if p.is_leader]
    out = {
        UNDER_REPLICATED: sum(1 for p in leaders if len(p.isr) < len(p.replicas)),
        UNDER_MIN_ISR: sum(1 for p in leaders if len(p.isr) < p.effective_min_isr(broker)),
        AT_MIN_ISR: sum(1 for p in leaders if len(p.isr) == p.effective_min_isr(broker)),
        LEADER_COUNT: len(leaders),
        PARTITION_COUNT: len(broker.replica_manager.partitions),
        MAX_LAG: max([st.lag for th in broker.fetchers.values()
                      for st in th.partitions.values()] or [0]),
        ACTIVE_CONTROLLER: 1 if broker.controller is not None else 0,
    }
    if broker.controller is not None:
        cc = broker.controller.context
        offline = 0
        imbalance = 0
        for tp, (leader, _e, _isr, _v) in cc.states.items():
            if leader < 0 or leader not in cc.live_brokers:
                offline += 1
            if leader != cc.assignments[tp][0]:
                imbalance += 1
        out[OFFLINE_PARTITIONS] = offline
        out[PREFERRED_IMBALANCE] = imbalance
    return out


def partition_gauges(broker) -> dict[str, int]:
    """kafka.cluster:type=Partition gauges (the ISR count is reported by the leader only)."""
    out = {}
    for (topic, partition), p in broker.replica_manager.partitions.items():
        lead = p.is_leader
        out[partition_mbean("InSyncReplicasCount", topic, partition)] = len(p.isr) if lead else 0
        out[partition_mbean("UnderReplicated", topic, partition)] = \
            int(lead and len(p.isr) < len(p.replicas))
        out[partition_mbean("ReplicasCount", topic, partition)] = len(p.replicas) if lead else 0
    return out


class MetricsRecorder:
    """Samples every running broker every ``interval_ms`` into long-format rows."""

    __slots__ = ("interval_ms", "rows", "last_counts", "per_partition")

    def __init__(self, interval_ms: int = 1000, per_partition: bool = True) -> None:
        if interval_ms <= 0:
            raise ValueError(f"metrics interval must be > 0 ms, got {interval_ms}")
        self.interval_ms = interval_ms
        self.rows: list[tuple[int, int, str, float]] = []   # (time, broker, mbean, value)
        self.last_counts: dict[tuple[int, str], int] = {}
        self.per_partition = per_partition

    def sample(self, now: int, brokers) -> None:
        rows = self.rows
        for b in brokers:
            if not b.is_running:
                continue
            for name, value in broker_gauges(b).items():
                rows.append((now, b.id, name, value))
            if self.per_partition:
                for name, value in partition_gauges(b).items():
                    rows.append((now, b.id, name, value))
            for meter, count in b.meters.items():
                mbean = METER_MBEANS[meter]
                prev = self.last_counts.get((b.id, meter), 0)
                self.last_counts[(b.id, meter)] = count
                rows.append((now, b.id, mbean + ":Count", count))
                rows.append((now, b.id, mbean + ":Rate",
                             (count - prev) * 1000.0 / self.interval_ms))

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=["time_ms", "broker", "mbean", "value"])

    def latest(self) -> dict[tuple[int, str], float]:
        out: dict[tuple[int, str], float] = {}
        for _t, b, name, v in self.rows:
            out[(b, name)] = v
        return out
