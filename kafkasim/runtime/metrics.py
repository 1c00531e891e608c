"""Kafka's replication metrics under their JMX MBean names, sampled over simulated time.

Gauges are computed from broker state when sampled; meters (``...PerSec``) are counters the
brokers mark, reported as their cumulative ``Count`` and the rate over the last sample interval
(events per second), as a JMX scraper would derive it (fact sheet §12).

KRaft mode: the controller nodes report the ``kafka.controller:type=KafkaController`` gauges
(ActiveControllerCount from QuorumControllerMetrics, 1 on the active controller only; the
metadata counts from ControllerMetadataMetrics, which ControllerMetadataMetricsPublisher keeps
on *every* controller from its committed metadata image -- "as observed by this Controller",
docs/ops.html "KRaft Controller Monitoring Metrics"). Every KRaft node, controller or broker,
reports the ``kafka.server:type=raft-metrics`` group of its Raft client (KafkaRaftMetrics);
KRaft brokers report no KafkaController MBeans.

ZooKeeper mode: every broker registers the KafkaController gauges (its KafkaController object
exists whether or not it is the active controller) and reports 0 unless it is active
(KafkaController.updateMetrics). Which MBeans a release has, and how the ZooKeeper controller
counts offline partitions, are the ``rules.metrics`` of kafkasim.settings.versions.
"""

from __future__ import annotations

from kafkasim.control.kraft.controller_metrics import (
    ACTIVE_BROKER_COUNT,
    FENCED_BROKER_COUNT,
    GLOBAL_PARTITION_COUNT,
    GLOBAL_TOPIC_COUNT,
    KC,
    OFFLINE_PARTITION_COUNT,
    PREFERRED_REPLICA_IMBALANCE_COUNT,
    UNCLEAN_LEADER_ELECTIONS_PER_SEC,
)
from kafkasim.runtime.rows import CompactRows

RM = "kafka.server:type=ReplicaManager,name="
UNDER_REPLICATED = RM + "UnderReplicatedPartitions"
UNDER_MIN_ISR = RM + "UnderMinIsrPartitionCount"
AT_MIN_ISR = RM + "AtMinIsrPartitionCount"
LEADER_COUNT = RM + "LeaderCount"
PARTITION_COUNT = RM + "PartitionCount"
REASSIGNING_PARTITIONS = RM + "ReassigningPartitions"
ISR_SHRINKS = RM + "IsrShrinksPerSec"
ISR_EXPANDS = RM + "IsrExpandsPerSec"
FAILED_ISR_UPDATES = RM + "FailedIsrUpdatesPerSec"
# FetchSessionCache (KIP-227, 1.1+; KafkaMetricsGroup of kafka.server.FetchSessionCache)
FSC = "kafka.server:type=FetchSessionCache,name="
NUM_FETCH_SESSIONS = FSC + "NumIncrementalFetchSessions"
NUM_FETCH_PARTITIONS_CACHED = FSC + "NumIncrementalFetchPartitionsCached"
FETCH_SESSION_EVICTIONS = FSC + "IncrementalFetchSessionEvictionsPerSec"
MAX_LAG = "kafka.server:type=ReplicaFetcherManager,name=MaxLag,clientId=Replica"
ACTIVE_CONTROLLER = "kafka.controller:type=KafkaController,name=ActiveControllerCount"
OFFLINE_PARTITIONS = OFFLINE_PARTITION_COUNT
PREFERRED_IMBALANCE = PREFERRED_REPLICA_IMBALANCE_COUNT
UNCLEAN_ELECTIONS = UNCLEAN_LEADER_ELECTIONS_PER_SEC
# KAFKA-19212 (4.1): ControllerMetadataMetrics ELECTION_FROM_ELIGIBLE_LEADER_REPLICAS_PER_SEC
ELR_ELECTIONS = \
    "kafka.controller:type=ControllerStats,name=ElectionFromEligibleLeaderReplicasPerSec"
# KRaft controllers (QuorumControllerMetrics / ControllerMetadataMetrics, trunk 2024-10): the
# names ControllerMetadataMetrics defines (kafkasim.control.kraft.controller_metrics)
FENCED_BROKERS = FENCED_BROKER_COUNT
ACTIVE_BROKERS = ACTIVE_BROKER_COUNT
GLOBAL_TOPICS = GLOBAL_TOPIC_COUNT
GLOBAL_PARTITIONS = GLOBAL_PARTITION_COUNT
LAST_COMMITTED_OFFSET = KC + "LastCommittedRecordOffset"
LAST_APPLIED_OFFSET = KC + "LastAppliedRecordOffset"
# KafkaRaftMetrics (metric group "raft-metrics", JMX kafka.server:type=raft-metrics); the
# attribute is written after a colon, like the meters' ":Count"
RAFT_METRICS = "kafka.server:type=raft-metrics"
RAFT_CURRENT_STATE = RAFT_METRICS + ":current-state"
RAFT_CURRENT_LEADER = RAFT_METRICS + ":current-leader"
RAFT_CURRENT_VOTE = RAFT_METRICS + ":current-vote"
RAFT_CURRENT_EPOCH = RAFT_METRICS + ":current-epoch"
RAFT_HIGH_WATERMARK = RAFT_METRICS + ":high-watermark"
RAFT_LOG_END_OFFSET = RAFT_METRICS + ":log-end-offset"
RAFT_LOG_END_EPOCH = RAFT_METRICS + ":log-end-epoch"


_PARTITION_MBEANS: dict[tuple[str, str, int], str] = {}


def partition_mbean(name: str, topic: str, partition: int) -> str:
    """The partition gauge's MBean name, one string per gauge: every sample's metrics rows
    share it (a new string per row was the third largest cost of a long run's memory)."""
    key = (name, topic, partition)
    mbean = _PARTITION_MBEANS.get(key)
    if mbean is None:
        mbean = _PARTITION_MBEANS[key] = \
            f"kafka.cluster:type=Partition,name={name},topic={topic},partition={partition}"
    return mbean


METER_MBEANS = {
    "IsrShrinksPerSec": ISR_SHRINKS,
    "IsrExpandsPerSec": ISR_EXPANDS,
    "FailedIsrUpdatesPerSec": FAILED_ISR_UPDATES,
    "UncleanLeaderElectionsPerSec": UNCLEAN_ELECTIONS,
    "ElectionFromEligibleLeaderReplicasPerSec": ELR_ELECTIONS,
    "IncrementalFetchSessionEvictionsPerSec": FETCH_SESSION_EVICTIONS,
}


def broker_gauges(broker, kraft: bool = False) -> dict[str, int]:
    """Current gauge values of one running broker (``kraft``: no KafkaController MBeans)."""
    rules = broker.rules.metrics
    partitions = broker.replica_manager.partitions.values()
    leaders = [p for p in partitions if p.is_leader]
    out = {UNDER_REPLICATED: under_replicated_partition_count(leaders)}
    if rules.under_min_isr_metrics or rules.at_min_isr_metrics:
        under_min_isr, at_min_isr = min_isr_partition_counts(broker, leaders)
        if rules.under_min_isr_metrics:
            out[UNDER_MIN_ISR] = under_min_isr
        if rules.at_min_isr_metrics:
            out[AT_MIN_ISR] = at_min_isr
    out[LEADER_COUNT] = len(leaders)
    out[PARTITION_COUNT] = len(broker.replica_manager.partitions)
    if rules.reassignment_metrics:
        out[REASSIGNING_PARTITIONS] = sum(1 for p in leaders if p.is_reassigning())
    out[MAX_LAG] = max([st.lag for th in broker.fetchers.values()
                        for st in th.partitions.values()] or [0])
    if broker.rules.fetch.fetch_sessions:   # FetchSessionCache gauges (KIP-227, 1.1+)
        cache = broker.replica_manager.fetch_sessions
        out[NUM_FETCH_SESSIONS] = cache.size() if cache is not None else 0
        out[NUM_FETCH_PARTITIONS_CACHED] = cache.total_partitions() if cache is not None else 0
    if not kraft:
        out.update(zk_controller_gauges(broker))
    return out


def under_replicated_partition_count(leaders) -> int:
    """ReplicaManager.underReplicatedPartitionCount: the led partitions whose ISR is smaller
    than the replication factor (Partition.isUnderReplicated; without a reassignment's adding
    replicas since 2.5, KIP-352)."""
    return sum(1 for p in leaders if p.is_under_replicated())


def min_isr_partition_counts(broker, leaders) -> tuple[int, int]:
    """UnderMinIsrPartitionCount and AtMinIsrPartitionCount: the led partitions whose ISR is
    below / equal to the effective min ISR (Partition.isUnderMinIsr / isAtMinIsr), in one pass,
    each leader's effective min ISR worked out once."""
    under = at = 0
    for p in leaders:
        isr = len(p.isr)
        min_isr = p.effective_min_isr(broker)
        if isr < min_isr:
            under += 1
        elif isr == min_isr:
            at += 1
    return under, at


def zk_controller_gauges(broker) -> dict[str, int]:
    """The KafkaController gauges of a ZooKeeper-mode broker: the active controller's counts,
    0 on the others (KafkaController.updateMetrics). GlobalPartitionCount counts the partitions
    with leadership info, ActiveBrokerCount the live or shutting-down brokers, FencedBrokerCount
    is always 0 (KIP-748)."""
    rules = broker.rules.metrics
    ctl = broker.controller
    cc = ctl.context if ctl is not None else None
    out = {
        ACTIVE_CONTROLLER: int(cc is not None),
        OFFLINE_PARTITIONS: zk_offline_partitions_count(cc, rules) if cc is not None else 0,
        PREFERRED_IMBALANCE: cc.preferred_replica_imbalance_count() if cc is not None else 0,
    }
    if rules.zk_global_counts:
        out[GLOBAL_TOPICS] = len(cc.all_topics()) if cc is not None else 0
        out[GLOBAL_PARTITIONS] = cc.partition_with_leaders_count() if cc is not None else 0
    if rules.zk_broker_count_metrics:
        out[ACTIVE_BROKERS] = len(cc.live_brokers) if cc is not None else 0
        out[FENCED_BROKERS] = 0
    return out


def zk_offline_partitions_count(cc, rules) -> int:
    """The ZooKeeper controller's OfflinePartitionsCount: since 2.1 (KAFKA-6753) the partitions
    in the OfflinePartition state (ControllerContext.offlinePartitionCount); before, the
    partitions whose cached leader is neither live nor shutting down (updateMetrics @2.0)."""
    if rules.offline_partitions_from_partition_states:
        return cc.offline_partition_count()
    live = cc.live_brokers
    return sum(1 for leader, _e, _isr, _v in cc.states.values() if leader not in live)


_PARTITION_GAUGE_NAMES: dict[tuple[str, int], tuple[str, ...]] = {}
#: the Partition gauges, in the order partition_gauges reports them
PARTITION_GAUGES = ("InSyncReplicasCount", "UnderReplicated", "ReplicasCount", "UnderMinIsr",
                    "AtMinIsr")


def _partition_gauge_names(tp: tuple[str, int]) -> tuple[str, ...]:
    """The MBean names of a partition's gauges, looked up once per partition."""
    names = _PARTITION_GAUGE_NAMES.get(tp)
    if names is None:
        names = _PARTITION_GAUGE_NAMES[tp] = tuple(
            partition_mbean(name, tp[0], tp[1]) for name in PARTITION_GAUGES)
    return names


def partition_gauges(broker) -> dict[str, int]:
    """kafka.cluster:type=Partition gauges, all 0 on a follower: InSyncReplicasCount and
    ReplicasCount (0.10.2+, KIP-96), UnderReplicated, UnderMinIsr (1.0+) and AtMinIsr (2.3+).
    LastStableOffsetLag is not reported (no transactions: always 0)."""
    rules = broker.rules.metrics
    counts = rules.partition_replica_count_gauges
    under_min, at_min = rules.under_min_isr_metrics, rules.at_min_isr_metrics
    out = {}
    names = _PARTITION_GAUGE_NAMES
    for tp, p in broker.replica_manager.partitions.items():
        isr_count, under_replicated, replicas_count, under_min_isr, at_min_isr = \
            names.get(tp) or _partition_gauge_names(tp)
        leader = p.is_leader
        out[under_replicated] = int(p.is_under_replicated())
        if counts:
            out[isr_count] = len(p.isr) if leader else 0
            out[replicas_count] = p.assignment_state.replication_factor() if leader else 0
        if under_min or at_min:
            min_isr = p.effective_min_isr(broker) if leader else 0
            if under_min:
                out[under_min_isr] = int(leader and len(p.isr) < min_isr)
            if at_min:
                out[at_min_isr] = int(leader and len(p.isr) == min_isr)
    return out


def raft_current_state(raft, rules) -> str:
    """KafkaRaftMetrics "current-state": leader, candidate, voted (an Unattached voter that
    voted; VotedState before 3.9), follower, observer (a broker following the leader, 3.5+;
    "follower" before), else unattached (Unattached and Resigned fall through to it). 4.0
    (``raft_state_names_4_0``) names "voted" "unattached-voted" and a Prospective node
    "prospective" or "prospective-voted"; before, Prospective did not exist."""
    name = raft.state_name
    if name == "Leader":
        return "leader"
    new_names = rules.metrics.raft_state_names_4_0
    if name == "Prospective" and new_names:
        return "prospective-voted" if raft.voted_id >= 0 else "prospective"
    if name == "Candidate":
        return "candidate"
    if name == "Voted" or (name == "Unattached" and raft.voted_id >= 0):
        return "unattached-voted" if new_names else "voted"
    if name == "Follower":
        return "observer" if raft.observer and rules.metrics.raft_state_observer else "follower"
    return "unattached"


def raft_gauges(raft, rules) -> dict:
    """KafkaRaftMetrics gauges of one node's Raft client. current-vote is the node itself when
    it leads or is a candidate; log-end-epoch is the epoch of the last log entry."""
    state = raft_current_state(raft, rules)
    vote = raft.node_id if state in ("leader", "candidate") else raft.voted_id
    return {
        RAFT_CURRENT_STATE: state,
        RAFT_CURRENT_LEADER: raft.leader_id,
        RAFT_CURRENT_VOTE: vote,
        RAFT_CURRENT_EPOCH: raft.epoch,
        RAFT_HIGH_WATERMARK: raft.high_watermark,
        RAFT_LOG_END_OFFSET: raft.log.end_offset,
        RAFT_LOG_END_EPOCH: raft.log.last_fetched_epoch,
    }


def controller_gauges(node, image) -> dict:
    """KafkaController gauges of one running KRaft controller node. ``image`` is the node's
    committed MetadataImage (what its MetadataLoader published): the counts of
    ControllerMetadataMetricsPublisher.publishSnapshot (kafkasim.control.kraft
    .controller_metrics.snapshot_counts: FencedBrokerCount / ActiveBrokerCount (unfenced
    brokers, including those in controlled shutdown), GlobalTopicCount, GlobalPartitionCount,
    OfflinePartitionsCount (no leader) and PreferredReplicaImbalanceCount (leader is not
    replicas[0])). LastCommittedRecordOffset is the last committed offset the node handled
    (OffsetControlManager.handleCommitBatchMetrics), LastAppliedRecordOffset the last one it
    replayed (the active controller's own writes before they commit, handleScheduleAppend).
    MetadataErrorCount is not modelled (never an error)."""
    from kafkasim.control.kraft.controller_metrics import snapshot_counts

    counts = snapshot_counts(image)
    return {
        ACTIVE_CONTROLLER: 1 if node.controller.active else 0,
        FENCED_BROKERS: counts.fenced_brokers,
        ACTIVE_BROKERS: counts.active_brokers,
        GLOBAL_TOPICS: counts.global_topics,
        GLOBAL_PARTITIONS: counts.global_partitions,
        OFFLINE_PARTITIONS: counts.offline_partitions,
        PREFERRED_IMBALANCE: counts.partitions_without_preferred_leader,
        LAST_COMMITTED_OFFSET: image.offset,
        LAST_APPLIED_OFFSET: node.controller.applied,
    }


def committed_image(images: dict, node):
    """The node's committed MetadataImage, kept in ``images`` as [incarnation, image, unclean
    elections, ELR elections] and brought up to the node's high watermark (committed entries are
    never truncated, so replay is incremental). A restarted process starts again from an empty
    image, as its MetadataLoader does. Elections are counted by :func:`_count_election`. The first
    catch-up of a (re)started process counts nothing: MetadataLoader publishes it as one delta
    from the empty image, so every partition in it is new."""
    from kafkasim.control.kraft import records as R
    from kafkasim.control.kraft.image import MetadataImage, load_snapshot
    from kafkasim.control.kraft.offset_control import published_entries

    entry = images.get(node.id)
    if entry is None or entry[0] != node.incarnation:
        entry = images[node.id] = [node.incarnation, MetadataImage(), 0, 0]
    img = entry[1]
    hw = node.raft.high_watermark
    catching_up = img.offset < 0
    if hw - 1 > img.offset:
        rules = node.cluster.rules.elections
        log = node.raft.log
        if log.below_log_start(img.offset + 1):      # a snapshot fetched past the image: load it
            load_snapshot(img, log.entries_between(0, log.start_offset))
        for offset, _epoch, record in published_entries(log.entries_between(img.offset + 1, hw)):
            t = type(record)
            if t is R.PartitionChangeRecord or t is R.PartitionRecord:
                tp = (img.topic_names.get(record.topic_id), record.partition_id)
                prev = img.partitions.get(tp)
                nxt = img.partitions[img.replay(record, offset)]
                if not catching_up:
                    _count_election(entry, rules, record, prev, nxt)
            else:
                img.replay(record, offset)
    return img


def _count_election(entry: list, rules, record, prev, nxt) -> None:
    """Count one replayed partition record into ``entry[2]`` (UncleanLeaderElectionsPerSec) and
    ``entry[3]`` (ElectionFromEligibleLeaderReplicasPerSec), as the release counts them.

    - 4.1+ (KAFKA-19212, ``election_metrics_from_records``): TopicDelta counts an unclean
      election when the record elects a leader and sets LeaderRecoveryState RECOVERING (KIP-704),
      and an ELR election when the new leader was in the previous ELR
      (TopicsImageTest.testTopicDeltaElectionStatsWithEmptyImage / ...WithNonEmptyImage).
    - up to 4.0 (ControllerMetricsChanges.handleTopicChange, PartitionRegistration
      .electionWasClean): a new leader outside the previous ISR is unclean (a new partition
      counts its replicas as the ISR); from 4.0 a leader taken from the previous ELR is clean
      (KAFKA-18940, ``unclean_metric_excludes_elr``). There is no ELR meter."""
    from kafkasim.control.kraft.records import LeaderRecoveryState

    leader = nxt.leader
    if leader < 0:
        return
    if rules.election_metrics_from_records:
        if prev is not None and leader == prev.leader:
            return
        if record.leader_recovery_state == LeaderRecoveryState.RECOVERING:
            entry[2] += 1
        elif prev is not None and leader in prev.elr and leader not in prev.isr:
            entry[3] += 1
        return
    prev_isr = prev.isr if prev is not None else nxt.replicas
    if leader in prev_isr:
        return
    if rules.unclean_metric_excludes_elr and prev is not None and leader in prev.elr:
        return
    entry[2] += 1


class MetricsRecorder:
    """Samples every running broker every ``interval_ms`` into long-format rows."""

    __slots__ = ("interval_ms", "rows", "last_counts", "per_partition", "controller_images")

    def __init__(self, interval_ms: int = 1000, per_partition: bool = True) -> None:
        if interval_ms <= 0:
            raise ValueError(f"metrics interval must be > 0 ms, got {interval_ms}")
        self.interval_ms = interval_ms
        # (time, broker, mbean, value); the older rows compacted (kafkasim.runtime.rows)
        self.rows: list[tuple[int, int, str, float]] = CompactRows()
        self.last_counts: dict[tuple[int, str], int] = {}
        self.per_partition = per_partition
        # KRaft: node id -> [incarnation, MetadataImage, unclean elections, ELR elections]
        self.controller_images: dict = {}

    def sample(self, now: int, brokers, controllers=None) -> None:
        """One sample of every running broker and, in KRaft mode (``controllers``: the
        controller nodes), of every running controller node."""
        rows = self.rows
        kraft = controllers is not None
        for node in controllers or ():
            if not node.is_running:
                continue
            img = committed_image(self.controller_images, node)
            for name, value in controller_gauges(node, img).items():
                rows.append((now, node.id, name, value))
            for name, value in raft_gauges(node.raft, node.cluster.rules).items():
                rows.append((now, node.id, name, value))
            # ControllerMetadataMetrics' ControllerStats meters (KRaft: on controllers);
            # ElectionFromEligibleLeaderReplicasPerSec from 4.1 (KAFKA-19212)
            counts = self.controller_images[node.id]
            rules = node.cluster.rules
            if rules.metrics.kraft_unclean_elections_meter:     # 3.9+ (KAFKA-12670)
                self._meter(now, node.id, "UncleanLeaderElectionsPerSec", counts[2])
            if rules.elections.election_metrics_from_records:
                self._meter(now, node.id, "ElectionFromEligibleLeaderReplicasPerSec", counts[3])
        for b in brokers:
            if not b.is_running:
                continue
            for name, value in broker_gauges(b, kraft).items():
                rows.append((now, b.id, name, value))
            if kraft and b.lifecycle is not None:
                for name, value in raft_gauges(b.lifecycle.raft, b.rules).items():
                    rows.append((now, b.id, name, value))
            if self.per_partition:
                bid = b.id
                rows.extend([(now, bid, name, value)
                             for name, value in partition_gauges(b).items()])
            for meter, count in b.meters.items():
                if kraft and meter == "UncleanLeaderElectionsPerSec":
                    continue        # a controller meter: KRaft brokers do not report it
                if meter == "IncrementalFetchSessionEvictionsPerSec" and \
                        not b.rules.fetch.fetch_sessions:
                    continue        # no fetch sessions before 1.1 (KIP-227)
                if meter == "FailedIsrUpdatesPerSec" and \
                        not b.rules.metrics.failed_isr_updates_meter:
                    continue        # no such meter before 0.11 (KIP-143)
                self._meter(now, b.id, meter, count)

    def _meter(self, now: int, node: int, meter: str, count: int) -> None:
        mbean = METER_MBEANS[meter]
        prev = self.last_counts.get((node, meter), 0)
        self.last_counts[(node, meter)] = count
        self.rows.append((now, node, mbean + ":Count", count))
        self.rows.append((now, node, mbean + ":Rate", (count - prev) * 1000.0 / self.interval_ms))

    def to_frame(self):
        import pandas as pd

        return pd.DataFrame(self.rows, columns=["time_ms", "broker", "mbean", "value"])

    def latest(self) -> dict[tuple[int, str], float]:
        out: dict[tuple[int, str], float] = {}
        for _t, b, name, v in self.rows:
            out[(b, name)] = v
        return out
