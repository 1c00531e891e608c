"""What learners see of KRaft: controller metrics, kafka-metadata-quorum describe, the metadata
log, quorum-state, and the quorum / fencing drawings.

Kafka sources mirrored: QuorumControllerMetrics (ActiveControllerCount, Last*RecordOffset),
ControllerMetadataMetricsPublisher.publishSnapshot (FencedBrokerCount, ActiveBrokerCount,
Global*Count, OfflinePartitionsCount, PreferredReplicaImbalanceCount; registered on every
controller by ControllerServer), KafkaRaftMetrics (raft-metrics group), tools
MetadataQuorumCommand.handleDescribeStatus / handleDescribeReplication and
ToolsUtils.prettyPrintTable (MetadataQuorumCommandUnitTest / MetadataQuorumCommandTest),
FileQuorumStateStore.
"""

from __future__ import annotations

import json
import re

import pytest
from matplotlib.figure import Figure

from kafkasim.runtime import metrics as M
from kafkasim.runtime.cluster import Cluster, ClusterError
from kafkasim.viz import quorum as Q

SESSION_MS = 9000     # broker.session.timeout.ms default
HEARTBEAT_MS = 2000   # broker.heartbeat.interval.ms default: the session runs from the last one


def kraft(version="4.1", seed=7, **kw) -> Cluster:
    if not version.startswith("4"):
        kw.setdefault("metadata_mode", "kraft")
    c = Cluster(3, kafka_version=version, seed=seed, **kw)
    c.run_until(lambda c: c.controller_id() >= 0, 20000)
    c.run(1000)
    c.create_topic("t", 3, 3)
    c.run(2000)
    return c


@pytest.fixture(scope="module")
def fenced():
    """A 4.1 cluster whose broker 1 crashed and was fenced by the controller."""
    c = kraft()
    crash_at = c.now
    c.crash(1)
    c.run(SESSION_MS + 3000)
    return c, crash_at


def fenced_at(c: Cluster) -> int:
    """When the active controller fenced broker 1 (the ``broker_fenced`` row)."""
    return next(t for t, k, _n, _tp, _p, d in c.trace.rows
                if k == "broker_fenced" and d.broker == 1)


def latest(c: Cluster) -> dict:
    return c.metrics.latest()


# -- metrics -----------------------------------------------------------------------------------
def test_zookeeper_mode_brokers_keep_their_mbeans_and_report_no_raft_metrics():
    c = Cluster(3, seed=3, kafka_version="3.7")   # ZooKeeper mode
    c.create_topic("t", 1, 3)
    c.run(3000)
    names = {m for _t, _b, m, _v in c.metrics.rows}
    assert M.ACTIVE_CONTROLLER in names
    assert sum(v for (_b, m), v in latest(c).items() if m == M.ACTIVE_CONTROLLER) == 1
    assert not any(m.startswith(M.RAFT_METRICS) for m in names)
    # the ZooKeeper controller registers FencedBrokerCount since 3.1 (KIP-748): always 0
    assert all(v == 0 for (_b, m), v in latest(c).items() if m == M.FENCED_BROKERS)


def test_active_controller_count_is_1_on_the_active_controller_only(fenced):
    c, _ = fenced
    values = latest(c)
    active = c.controller_id()
    for node in c.kraft.nodes:
        assert values[(node, M.ACTIVE_CONTROLLER)] == (1 if node == active else 0)
    # KRaft brokers report no KafkaController MBeans (nor the controller's unclean meter)
    for b in c.brokers:
        assert not [m for (n, m) in values if n == b and m.startswith("kafka.controller:")]


def test_every_controller_counts_the_fenced_broker_from_its_committed_image(fenced):
    """ControllerMetadataMetricsPublisher runs on every controller ("as observed by this
    Controller"): after the session expiry all three report 1 fenced, 2 active brokers."""
    c, _ = fenced
    values = latest(c)
    for node in c.kraft.nodes:
        assert values[(node, M.FENCED_BROKERS)] == 1
        assert values[(node, M.ACTIVE_BROKERS)] == 2
        assert values[(node, M.GLOBAL_TOPICS)] == 1
        assert values[(node, M.GLOBAL_PARTITIONS)] == 3
        assert values[(node, M.OFFLINE_PARTITIONS)] == 0
    # the partition broker 1 led moved away from its preferred leader
    led_by_1 = sum(1 for reg in c.kraft.image.partitions.values() if reg.replicas[0] == 1)
    assert values[(c.controller_id(), M.PREFERRED_IMBALANCE)] == led_by_1 > 0


def test_fenced_broker_count_rises_only_after_the_session_timeout(fenced):
    c, crash_at = fenced
    frame = c.metrics_frame()
    active = c.controller_id()
    rows = frame[(frame.broker == active) & (frame.mbean == M.FENCED_BROKERS)]
    t = fenced_at(c)
    assert crash_at + SESSION_MS - HEARTBEAT_MS < t <= crash_at + SESSION_MS + 1
    assert (rows[rows.time_ms <= t].value == 0).all()
    assert rows[rows.value == 1].time_ms.min() == rows[rows.time_ms > t].time_ms.min()


def test_last_committed_and_applied_offsets_follow_the_metadata_log(fenced):
    c, _ = fenced
    values = latest(c)
    for node_id, node in c.kraft.nodes.items():
        # sampled at the last sample time; the committed offset never exceeds the HW - 1
        committed = values[(node_id, M.LAST_COMMITTED_OFFSET)]
        assert 0 < committed <= node.raft.high_watermark - 1
        assert values[(node_id, M.LAST_APPLIED_OFFSET)] >= committed


def test_raft_metrics_on_controllers_and_brokers(fenced):
    c, _ = fenced
    values = latest(c)
    active = c.controller_id()
    leader = c.kraft.nodes[active].raft
    for node in c.kraft.nodes:
        state = values[(node, M.RAFT_CURRENT_STATE)]
        assert state == ("leader" if node == active else "follower")
        assert values[(node, M.RAFT_CURRENT_LEADER)] == active
        assert values[(node, M.RAFT_CURRENT_EPOCH)] == leader.epoch
    for b in (2, 3):     # brokers fetch the metadata log as observers
        assert values[(b, M.RAFT_CURRENT_STATE)] == "observer"
        assert values[(b, M.RAFT_CURRENT_VOTE)] == -1
        assert values[(b, M.RAFT_LOG_END_OFFSET)] > 0


@pytest.mark.parametrize("version, broker_state", [("3.4", "follower"), ("3.5", "observer")])
def test_a_following_broker_reads_observer_from_3_5(version, broker_state):
    """KafkaRaftMetrics @3.4.0 has no "observer" state: a broker following the leader reads
    "follower" until KAFKA-14883 (3.5.0)."""
    c = kraft(version)
    c.run(2000)
    values = latest(c)
    assert {values[(b, M.RAFT_CURRENT_STATE)] for b in c.brokers} == {broker_state}


@pytest.mark.parametrize("state, voted, before_4_0, from_4_0", [
    ("Unattached", -1, "unattached", "unattached"),
    ("Unattached", 3001, "voted", "unattached-voted"),
    ("Prospective", -1, None, "prospective"),
    ("Prospective", 3001, None, "prospective-voted"),
    ("Candidate", 3000, "candidate", "candidate"),
    ("Resigned", -1, "unattached", "unattached"),
])
def test_raft_current_state_names_by_version(state, voted, before_4_0, from_4_0):
    """KafkaRaftMetrics' current-state gauge: 4.0 (KAFKA-17642, with KIP-996's Prospective
    state) reads "unattached-voted" where 3.x read "voted", and names the two Prospective
    states; a 3.x node is never Prospective."""
    from types import SimpleNamespace

    from kafkasim.settings.versions import rules_for

    raft = SimpleNamespace(state_name=state, voted_id=voted, observer=False)
    if before_4_0 is not None:
        assert M.raft_current_state(raft, rules_for("3.9")) == before_4_0
    assert M.raft_current_state(raft, rules_for("4.0")) == from_4_0


# -- kafka-metadata-quorum describe ------------------------------------------------------------
STATUS_FIELDS = ["ClusterId", "LeaderId", "LeaderEpoch", "HighWatermark", "MaxFollowerLag",
                 "MaxFollowerLagTimeMs", "CurrentVoters", "CurrentObservers"]


def _status(text: str) -> dict:
    lines = text.rstrip("\n").split("\n")
    assert [line.split(":")[0] for line in lines] == STATUS_FIELDS
    for line in lines:      # values start at column 24 ("LeaderId:" + padding)
        assert line[23] == " " and line[24] != " "
    return {line.split(":")[0]: line[24:] for line in lines}


def test_describe_status_fields_in_kafka_order_with_kip_853_nodes(fenced):
    c, _ = fenced
    s = _status(c.kraft.describe_quorum(status=True))
    raw = c.kraft.nodes[c.controller_id()].raft.describe_quorum(c.now)
    assert s["LeaderId"] == str(c.controller_id()) == str(raw["leader_id"])
    assert s["LeaderEpoch"] == str(raw["leader_epoch"])
    assert s["HighWatermark"] == str(raw["high_watermark"])
    assert re.fullmatch(r"[A-Za-z0-9_-]{22}", s["ClusterId"])
    assert s["CurrentVoters"].startswith('[{"id": 3000, "directoryId": null, "endpoints": '
                                         '["CONTROLLER://')
    observers = re.findall(r'\{"id": (\d+), "directoryId": "([A-Za-z0-9_-]{22})"\}',
                           s["CurrentObservers"])
    assert [int(i) for i, _d in observers] == [1, 2, 3]


def test_cluster_id_is_stable_per_seed():
    a, b, other = kraft(seed=11), kraft(seed=11), kraft(seed=12)
    ids = [_status(x.kraft.describe_quorum(status=True))["ClusterId"] for x in (a, b, other)]
    assert ids[0] == ids[1] != ids[2]


def test_describe_status_before_3_9_lists_ids():
    c = kraft("3.8")
    s = _status(c.kraft.describe_quorum(status=True))
    assert s["CurrentVoters"] == "[3000,3001,3002]"
    assert s["CurrentObservers"] == "[1,2,3]"


def test_describe_replication_is_a_tab_terminated_table_leader_first(fenced):
    c, _ = fenced
    text = c.kraft.describe_quorum(replication=True)
    lines = text.rstrip("\n").split("\n")
    assert all(line.endswith("\t") for line in lines)
    cells = [[v.strip() for v in line.split("\t")[:-1]] for line in lines]
    assert cells[0] == ["NodeId", "DirectoryId", "LogEndOffset", "Lag", "LastFetchTimestamp",
                        "LastCaughtUpTimestamp", "Status"]
    # every column padded to one width (ToolsUtils.prettyPrintTable)
    for col in range(7):
        assert len({len(line.split("\t")[col]) for line in lines}) == 1
    body = cells[1:]
    assert [r[-1] for r in body] == ["Leader", "Follower", "Follower", "Observer", "Observer",
                                     "Observer"]
    assert body[0][0] == str(c.controller_id()) and body[0][3] == "0"
    assert body[0][1] == "AAAAAAAAAAAAAAAAAAAAAA"        # static voters: Uuid.ZERO_UUID
    leader_leo = int(body[0][2])
    for r in body:
        assert int(r[3]) == leader_leo - int(r[2])
    # the crashed broker stops fetching: its lag grows, its last fetch stays old
    crashed = next(r for r in body if r[0] == "1")
    assert int(crashed[3]) > 0 and int(crashed[4]) < int(body[0][4]) - SESSION_MS


def test_describe_replication_before_3_9_has_no_directory_id():
    c = kraft("3.8")
    header = c.kraft.describe_quorum(replication=True).split("\n")[0]
    assert [h.strip() for h in header.split("\t")[:-1]] == [
        "NodeId", "LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"]


def test_describe_needs_exactly_one_option(fenced):
    c, _ = fenced
    for kw in ({}, {"status": True, "replication": True}):
        with pytest.raises(ClusterError, match="--status --replication"):
            c.kraft.describe_quorum(**kw)


def test_describe_without_a_quorum_leader_is_a_clear_error():
    c = kraft()
    active = c.controller_id()
    other = next(n for n in c.kraft.nodes if n != active)
    c.crash(active)
    c.crash(other)
    c.run(10000)      # the last voter cannot win an election alone (1 of 3)
    assert c.controller_id() == -1
    with pytest.raises(ClusterError, match="no active controller: the quorum has no majority"):
        c.kraft.describe_quorum(status=True)


# -- the metadata log and quorum-state ---------------------------------------------------------
def test_metadata_log_rows_start_with_the_leader_change_and_mark_committed(fenced):
    c, _ = fenced
    rows = c.kraft.metadata_log()
    assert [r[0] for r in rows] == list(range(len(rows)))
    assert rows[0][2] == "LeaderChangeMessage"
    hw = c.kraft.nodes[c.controller_id()].raft.high_watermark
    assert all(r[3] == (r[0] < hw) for r in rows)
    fencing = [r for r in rows if r[2] == "BrokerRegistrationChangeRecord"
               and "broker_id=1," in r[4] and "fenced=1" in r[4]]
    assert len(fencing) == 1 and fencing[0][3]
    frame = c.kraft.metadata_log_frame()
    assert list(frame.columns) == ["offset", "epoch", "record", "committed", "fields"]
    assert len(frame) == len(rows)


def test_metadata_log_of_a_standby_and_unknown_node(fenced):
    c, _ = fenced
    standby = next(n for n in c.kraft.nodes if n != c.controller_id())
    rows = c.kraft.metadata_log(standby)
    assert rows[0][2] == "LeaderChangeMessage" and len(rows) <= len(c.kraft.metadata_log())
    with pytest.raises(ClusterError, match="no controller 7"):
        c.kraft.metadata_log(7)


def test_quorum_state_file_of_each_controller(fenced):
    c, _ = fenced
    active = c.controller_id()
    epoch = c.kraft.nodes[active].raft.epoch
    for node in c.kraft.nodes:
        data = json.loads(c.kraft.quorum_state(node))
        assert data["leaderEpoch"] == epoch
        assert data["leaderId"] == active
        assert "data_version" in data


# -- drawings ----------------------------------------------------------------------------------
def test_fencing_intervals_show_the_crashed_broker_fenced_after_the_session(fenced):
    c, crash_at = fenced
    ivs = Q.fencing_intervals(c)
    b1 = [iv for iv in ivs if iv.broker == 1]
    fenced_spans = [iv for iv in b1 if iv.state == "fenced" and iv.start_ms > crash_at]
    assert len(fenced_spans) == 1
    assert fenced_spans[0].start_ms == fenced_at(c)
    # still unfenced while down, until the controller noticed
    assert any(iv.state == "unfenced" and iv.start_ms < crash_at < iv.end_ms for iv in b1)
    assert any(iv.state == "down" and iv.start_ms == crash_at for iv in b1)
    assert not any(iv.state == "fenced" and iv.start_ms > crash_at
                   for iv in ivs if iv.broker != 1)
    # the same from a saved trace frame
    assert [iv for iv in Q.fencing_intervals(c.trace_frame(), c.now) if iv.broker == 1] == b1


def test_quorum_intervals_show_the_active_controller_and_a_new_one_after_its_crash():
    c = kraft()
    first = c.controller_id()
    c.crash(first)
    c.run_until(lambda c: c.controller_id() >= 0, 20000)
    c.run(100)
    ivs = Q.quorum_intervals(c)
    mine = [iv for iv in ivs if iv.node == first]
    assert [iv.state for iv in mine][-2:] == ["active", "down"]
    now_active = [iv for iv in ivs if iv.state == "active" and iv.end_ms == c.now]
    assert [iv.node for iv in now_active] == [c.controller_id()]
    assert now_active[0].epoch == c.kraft.nodes[c.controller_id()].raft.epoch > mine[-2].epoch


def test_quorum_timeline_draws_fencing(fenced):
    c, _ = fenced
    fig = Q.quorum_timeline(c)
    assert isinstance(fig, Figure)
    gids = {a.get_gid() for a in fig.axes[0].get_children()}
    assert {"fenced:broker1", "unfenced:broker2", "down:broker1",
            f"active:controller{c.controller_id()}"} <= gids
    fig.savefig("/dev/null", format="png")
    assert isinstance(Q.quorum_timeline(c.trace_frame()), Figure)


def test_metadata_log_table_draws_last_records(fenced):
    c, _ = fenced
    fig = Q.metadata_log_table(c, last=10)
    table = fig.axes[0].tables[0]
    assert len({r for r, _c in table.get_celld()}) == 11     # header + 10 records
    fig.savefig("/dev/null", format="png")
    with pytest.raises(ValueError, match="ZooKeeper mode"):
        Q.metadata_log_table(Cluster(3, seed=1, kafka_version="3.7"))


def test_player_quorum_panel_only_in_kraft_mode(fenced):
    from types import SimpleNamespace

    from kafkasim.widgets import Player
    from kafkasim.widgets.player import PlayerFrames

    zk = Cluster(3, seed=1, kafka_version="3.7")
    zk.create_topic("t", 1, 3)
    pl = Player(zk, topic="t", checks=False)
    assert pl.quorum_figure() is None
    pl.widget     # noqa: B018 -- builds the UI
    assert "quorum" not in pl._ui.toggles
    # a Player cannot record a KRaft cluster yet (its snapshots fail to pickle, see the
    # report), so its PlayerFrames draws the panel from the cluster and time a Player holds
    c, _ = fenced
    fig = PlayerFrames(SimpleNamespace(cluster=c, now=c.now)).quorum_figure()
    assert isinstance(fig, Figure)
    assert "now" in {a.get_gid() for a in fig.axes[0].get_children()}


def _metrics_node(entries, version, hw):
    from types import SimpleNamespace

    from kafkasim.control.kraft.raft import RaftLog
    from kafkasim.settings.versions import rules_for

    log = RaftLog([(i, 1, r) for i, r in enumerate(entries)])
    return SimpleNamespace(id=3000, incarnation=1,
                           cluster=SimpleNamespace(rules=rules_for(version)),
                           raft=SimpleNamespace(log=log, high_watermark=hw))


def test_unclean_elections_counted_from_committed_partition_changes():
    """Up to 4.0, ControllerMetricsChanges.handleTopicChange: an election is unclean when the new
    leader was not in the previous ISR (PartitionRegistration.electionWasClean); a new partition
    counts its replicas as the previous ISR. Only committed records (below the HW) are counted."""
    from kafkasim.control.kraft import records as R

    entries = [R.TopicRecord("t", "id"),
               R.PartitionRecord(0, "id", replicas=(1, 2, 3), isr=(1, 2, 3), leader=1),
               R.PartitionChangeRecord(0, "id", isr=(1,)),               # shrink: clean
               R.PartitionChangeRecord(0, "id", leader=-1),              # leader gone
               R.PartitionChangeRecord(0, "id", leader=2, isr=(2,),      # unclean
                                       leader_recovery_state=R.LeaderRecoveryState.RECOVERING),
               R.PartitionChangeRecord(0, "id", leader=3, isr=(3,))]     # unclean, uncommitted
    node = _metrics_node(entries, "4.0", 2)
    images: dict = {}
    M.committed_image(images, node)           # the first catch-up: topic and partition
    node.raft.high_watermark = 5
    img = M.committed_image(images, node)
    assert img.offset == 4 and images[3000][2] == 1
    node.raft.high_watermark = 6
    M.committed_image(images, node)
    assert images[3000][2] == 2
    # a restarted process catches up in one delta from the empty image: nothing counted
    node.incarnation = 2
    M.committed_image(images, node)
    assert images[3000][2] == 0 and images[3000][0] == 2


def _elr_election_records():
    """TopicsImageTest.testTopicDeltaElectionStatsWithEmptyImage's records (KAFKA-19212), after a
    first committed TopicRecord so that the catch-up delta holds the topic only."""
    from kafkasim.control.kraft import records as R

    recovering = R.LeaderRecoveryState.RECOVERING
    return [R.TopicRecord("t", "id"),
            R.PartitionRecord(0, "id", replicas=(0, 1, 2), isr=(0, 1), leader=0),
            R.PartitionChangeRecord(0, "id", leader=2, isr=(2,), leader_recovery_state=recovering),
            R.PartitionChangeRecord(0, "id", isr=(1, 2),
                                    leader_recovery_state=R.LeaderRecoveryState.RECOVERED),
            R.PartitionChangeRecord(0, "id", leader=0, isr=(0,), leader_recovery_state=recovering),
            R.PartitionChangeRecord(0, "id", leader=1, isr=(1,), leader_recovery_state=recovering),
            R.PartitionRecord(1, "id", replicas=(0, 1, 2), isr=(0, 1), leader=0),
            R.PartitionChangeRecord(1, "id", leader=-1, isr=(), eligible_leader_replicas=(0, 1)),
            R.PartitionChangeRecord(1, "id", leader=1, isr=(1,), eligible_leader_replicas=(0, 1))]


@pytest.mark.parametrize(("version", "unclean", "from_elr"), [
    ("4.1", 3, 1),   # KAFKA-19212: TopicDelta's partitionToUncleanLeaderElectionCount / ...Elr...
    ("4.4", 3, 1),
    ("4.0", 3, 0),   # KAFKA-18940: the ELR election is clean; no ELR meter before 4.1
    ("3.9", 4, 0),   # electionWasClean(leader, previous ISR): the ELR election counts as unclean
])
def test_election_meters_by_release(version, unclean, from_elr):
    """TopicsImageTest.testTopicDeltaElectionStatsWithEmptyImage (apache/kafka, KAFKA-19212,
    PR #19590): three RECOVERING elections are unclean, a leader taken from the ELR is an ELR
    election. Before 4.1 the controller compared the new leader with the previous ISR."""
    node = _metrics_node(_elr_election_records(), version, 1)
    images: dict = {}
    M.committed_image(images, node)
    node.raft.high_watermark = 9
    M.committed_image(images, node)
    assert images[3000][2:] == [unclean, from_elr]


def test_elr_meter_sampled_on_kraft_controllers_from_4_1_only():
    """ControllerMetadataMetrics registers ElectionFromEligibleLeaderReplicasPerSec from 4.1
    (ControllerMetadataMetricsTest lists it next to UncleanLeaderElectionsPerSec)."""
    for version, present in (("4.0", False), ("4.1", True), ("4.4", True)):
        c = Cluster(3, seed=3, kafka_version=version, metrics_interval_ms=1000)
        c.create_topic("t", 1, 3)
        c.run(2000)
        names = {row[2] for row in c.metrics.rows}
        assert (M.ELR_ELECTIONS + ":Count" in names) is present, version
        assert M.UNCLEAN_ELECTIONS + ":Count" in names
