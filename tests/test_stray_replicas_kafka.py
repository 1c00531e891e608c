"""Stray replicas: a log on a broker that the metadata no longer gives it (the partition was
reassigned away, or its topic deleted, while the broker was down), version by version, and
Partition.topicId / Partition.checkOrSetTopicId.

Kafka's cases, by name: LogManagerTest (core, tag 3.9.0-rc3) testFindStrayReplicasInEmptyLAIR,
testFindNoStrayReplicasInFullLAIR, testFindSomeStrayReplicasInFullLAIR,
testTopicRecreationInFullLAIR, testLoadLogRenameLogThatShouldBeStray; ReplicaManagerTest (tag
3.9.0-rc3) testFullLeaderAndIsrStrayPartitions, testUpdateStrayLogs,
testFullLairDuringKRaftMigration, testFullLairDuringKRaftMigrationRemovesOld,
testFullLairDuringKRaftMigrationWithTopicRecreations;
PartitionTest (tag 3.9.0-rc3) testTopicIdAndPartitionMetadataFileForLeader / ForFollower. The
isStrayKraftReplica cases are in tests/test_checkpoint_s24_kafka.py.

Adaptation. Kafka's ``LogManagerTest.createLeaderAndIsrRequestForStrayDetection`` is ``_full_lisr``
(a LeaderAndIsrRequest of type FULL from a KRaft controller, leaders 3 unless given, replicas and
ISR [3, 4, 5]); ``mockLog`` is a ``Log`` with that topic id. A broker is a FakeContext with a
real LogManager (in-memory log dir) and ReplicaManager, as tests/test_zk_topic_ids_kafka.py does.
Kafka's ``KRaftConfigs.MIGRATION_ENABLED_CONFIG`` is the broker config
``zookeeper.metadata.migration.enable`` (kafkasim runs no migration, so it is set on the fake
broker's config directly). The cluster cases are the learner's scenario: a partition reassigned
away from a stopped broker, which then starts.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.image import MetadataImage
from kafkasim.core.checkpoint import (
    LEADER_EPOCH_CHECKPOINT,
    PARTITION_METADATA_FILE,
    RECOVERY_POINT_CHECKPOINT,
    parse_offsets,
)
from kafkasim.core.errors import InconsistentTopicIdException
from kafkasim.core.fake import FakeContext
from kafkasim.core.log import STRAY_DIR_SUFFIX, Log, log_stray_dir_name, parse_topic_partition_name
from kafkasim.core.messages import (
    LEADER_AND_ISR_TYPE_FULL,
    LEADER_AND_ISR_TYPE_INCREMENTAL,
    LeaderAndIsrRequest,
    PartitionState,
)
from kafkasim.core.partition import Partition
from kafkasim.core.replica_manager import ReplicaManager
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.log_manager import LogManager

FOO0 = ("Sl08ZXU2QW6uF5hIoSzc8w", "foo", 0)
FOO1 = ("Sl08ZXU2QW6uF5hIoSzc8w", "foo", 1)
BAR0 = ("69O438ZkTSeqqclTtZO2KA", "bar", 0)
BAR1 = ("69O438ZkTSeqqclTtZO2KA", "bar", 1)
BAZ0 = ("2Ik9_5-oRDOKpSXd2SuG5w", "baz", 0)
BAZ1 = ("2Ik9_5-oRDOKpSXd2SuG5w", "baz", 1)
BAZ2 = ("2Ik9_5-oRDOKpSXd2SuG5w", "baz", 2)
QUUX0 = ("YS9owjv5TG2OlsvBM0Qw6g", "quux", 0)
RECREATED_FOO0 = ("_dOOzPe3TfiWV21Lh7Vmqg", "foo", 0)
RECREATED_FOO1 = ("_dOOzPe3TfiWV21Lh7Vmqg", "foo", 1)
NEW_FOO0 = ("JRCmVxWxQamFs4S8NXYufg", "foo", 0)
ON_DISK = [FOO0, FOO1, BAR0, BAR1, BAZ0, BAZ1, BAZ2, QUUX0]


def _mock_log(tip) -> Log:
    """LogManagerTest.mockLog: a log of the partition with its topic id."""
    topic_id, topic, partition = tip
    log = Log(topic, partition)
    log.topic_id = topic_id
    return log


def _full_lisr(partitions, leaders=(), request_type: int = LEADER_AND_ISR_TYPE_FULL
               ) -> LeaderAndIsrRequest:
    """LogManagerTest.createLeaderAndIsrRequestForStrayDetection: a full LeaderAndIsr from KRaft
    controller 1000 (controller epoch 123), each partition led by the next of ``leaders`` (3
    once they run out), leader epoch 456, replicas and ISR [3, 4, 5]."""
    leaders = list(leaders)
    states, ids = [], {}
    for i, (topic_id, topic, partition) in enumerate(partitions):
        leader = leaders[i] if i < len(leaders) else 3
        states.append(PartitionState(topic, partition, 123, leader, 456, (3, 4, 5), 0,
                                     (3, 4, 5)))
        ids.setdefault(topic, topic_id)
    return LeaderAndIsrRequest(1000, 123, tuple(states), topic_ids=ids, type=request_type,
                               is_kraft_controller=True)


def _strays(request, on_disk=ON_DISK) -> set:
    return set(LogManager.find_stray_replicas(0, request, [_mock_log(t) for t in on_disk]))


def _tps(tips) -> set:
    return {(topic, partition) for _id, topic, partition in tips}


# -- LogManagerTest @3.9.0-rc3: findStrayReplicas ------------------------------------------------
def test_find_stray_replicas_in_empty_lair():
    """LogManagerTest.testFindStrayReplicasInEmptyLAIR: every log is stray."""
    assert _strays(_full_lisr([])) == _tps(ON_DISK)


def test_find_no_stray_replicas_in_full_lair():
    """LogManagerTest.testFindNoStrayReplicasInFullLAIR: a request listing every log: none."""
    assert _strays(_full_lisr(ON_DISK)) == set()


def test_find_some_stray_replicas_in_full_lair():
    """LogManagerTest.testFindSomeStrayReplicasInFullLAIR: the unlisted ones."""
    assert _strays(_full_lisr([FOO0, BAR0, BAR1, QUUX0])) == _tps([FOO1, BAZ0, BAZ1, BAZ2])


def test_topic_recreation_in_full_lair():
    """LogManagerTest.testTopicRecreationInFullLAIR: foo listed with a new topic id makes both
    old foo logs stray, with the unlisted bar-1."""
    present = [RECREATED_FOO0, RECREATED_FOO1, BAR0, BAZ0, BAZ1, BAZ2, QUUX0]
    assert _strays(_full_lisr(present)) == _tps([FOO0, FOO1, BAR1])


def test_find_stray_replicas_refuses_an_incremental_request_and_a_log_without_topic_id():
    """LogManager.findStrayReplicas (LogManager.scala:1652@3.9.0-rc3): an incremental
    LeaderAndIsr is a RuntimeException, and so is a log without a topic id."""
    with pytest.raises(RuntimeError, match="incremental LeaderAndIsrRequest"):
        _strays(_full_lisr(ON_DISK, request_type=LEADER_AND_ISR_TYPE_INCREMENTAL))
    with pytest.raises(RuntimeError, match="foo-0 does not have a topic ID"):
        LogManager.find_stray_replicas(0, _full_lisr([]), [Log("foo", 0)])


# -- ReplicaManagerTest @3.9.0-rc3: full LeaderAndIsr during a ZooKeeper migration ---------------
class Broker(FakeContext):
    """A ZooKeeper-mode broker (FakeContext) with a real LogManager and ReplicaManager."""

    def __init__(self, broker_id: int = 0, version: str = "3.9", migration: bool = True
                 ) -> None:
        super().__init__(broker_id, kafka_version=version, live_brokers=(0, 1, 2))
        self.cluster = SimpleNamespace(kafka_version=self.kafka_version)
        self.config["zookeeper.metadata.migration.enable"] = migration
        self.log_manager = LogManager()
        self.logs = self.log_manager.logs
        self.rm = ReplicaManager()
        self.rm.partitions = self.partitions
        self.replica_manager = self.rm

    def create_hosted_logs(self, topic: str, num_logs: int) -> list[Log]:
        """ReplicaManagerTest.createHostedLogs: a Partition with a new log per partition, the
        topic's id derived from its name (``new Uuid(name.hashCode, name.hashCode)``)."""
        out = []
        for i in range(num_logs):
            log = self.log_manager.get_or_create_log(self, topic, i, topic_id=_id_of(topic))
            self.rm.partitions[(topic, i)] = Partition(topic, i, self.id, log)
            out.append(log)
        return out


def _id_of(name: str) -> str:
    """A topic id made from the topic's name, as ReplicaManagerTest's createHostedLogs."""
    return (name * 22)[:22]


def _hosted_lisr(request_type: int) -> LeaderAndIsrRequest:
    """testFullLeaderAndIsrStrayPartitions' request: hosted-topic 0 (leader 0) and 1 (leader
    1), replicas and ISR [0, 1], leader epoch 10, from KRaft controller 3000."""
    states = (PartitionState("hosted-topic", 0, 0, 0, 10, (0, 1), 0, (0, 1)),
              PartitionState("hosted-topic", 1, 0, 1, 10, (1, 0), 0, (1, 0)))
    return LeaderAndIsrRequest(3000, 0, states,
                               topic_ids={"hosted-topic": _id_of("hosted-topic")},
                               type=request_type, is_kraft_controller=True)


@pytest.mark.parametrize("zk_migration_enabled", [True, False])
def test_full_leader_and_isr_stray_partitions(zk_migration_enabled):
    """ReplicaManagerTest.testFullLeaderAndIsrStrayPartitions: with the migration enabled a
    full LeaderAndIsr drops the partitions it does not list (hosted-stray-0 is no longer
    hosted); without, they stay."""
    b = Broker(migration=zk_migration_enabled)
    b.create_hosted_logs("hosted-topic", 2)
    b.create_hosted_logs("hosted-stray", 10)
    b.rm.become_leader_or_follower(b, 3000, _hosted_lisr(LEADER_AND_ISR_TYPE_FULL))
    assert ("hosted-topic", 0) in b.rm.partitions
    assert (("hosted-stray", 0) in b.rm.partitions) is not zk_migration_enabled
    assert (("hosted-stray", 0) in b.log_manager.stray_logs) is zk_migration_enabled


def test_full_leader_and_isr_finds_no_strays_before_3_7_or_when_incremental():
    """ReplicaManager.becomeLeaderOrFollower: the stray step needs a FULL request (3.7+,
    KAFKA-15605); 3.6 and an incremental request leave every partition hosted."""
    for version, request_type in (("3.6", LEADER_AND_ISR_TYPE_FULL),
                                  ("3.9", LEADER_AND_ISR_TYPE_INCREMENTAL)):
        b = Broker(version=version)
        b.create_hosted_logs("hosted-topic", 2)
        b.create_hosted_logs("hosted-stray", 1)
        b.rm.become_leader_or_follower(b, 3000, _hosted_lisr(request_type))
        assert ("hosted-stray", 0) in b.rm.partitions and not b.log_manager.stray_logs


def test_update_stray_logs():
    """ReplicaManagerTest.testUpdateStrayLogs: after updateStrayLogs(findStrayReplicas(...))
    only the listed logs are the LogManager's, and only their partitions are hosted; the
    others' directories are renamed ``-stray`` and kept."""
    b = Broker()
    valid = b.create_hosted_logs("hosted-topic", 2)
    b.create_hosted_logs("hosted-stray", 10)
    for i in range(10):   # createStrayLogs: logs without a Partition
        b.log_manager.get_or_create_log(b, "stray", i, topic_id=_id_of("stray"))
    listed = [(_id_of("hosted-topic"), "hosted-topic", p) for p in (0, 1)]
    b.rm.update_stray_logs(b, LogManager.find_stray_replicas(
        b.id, _full_lisr(listed), b.log_manager.all_logs))
    assert b.log_manager.all_logs == valid
    assert len(b.rm.partitions) == len(valid)
    assert len(b.log_manager.stray_logs) == 20
    names = {rel.split("/", 1)[0] for rel in b.log_manager.log_dir.files}
    stray_dirs = {n for n in names if n.endswith(STRAY_DIR_SUFFIX)}
    assert len(stray_dirs) == 20
    assert {parse_topic_partition_name(n) for n in stray_dirs} == set(b.log_manager.stray_logs)
    assert names - stray_dirs == {"hosted-topic-0", "hosted-topic-1"}


def _verify_online_with_id(b: Broker, tip) -> None:
    """ReplicaManagerTest.verifyPartitionIsOnlineAndHasId."""
    topic_id, topic, partition = tip
    part = b.rm.partitions[(topic, partition)]
    assert part.log.topic_id == topic_id and part.topic_id == topic_id


def _migration_broker() -> Broker:
    """setupReplicaManagerForKRaftMigrationTest: broker 3, migration enabled."""
    return Broker(broker_id=3)


def test_full_lair_during_kraft_migration():
    """ReplicaManagerTest.testFullLairDuringKRaftMigration: foo-0, foo-1, bar-0 online with
    their topic ids."""
    b = _migration_broker()
    b.rm.become_leader_or_follower(b, 1000, _full_lisr([FOO0, FOO1, BAR0], [3, 4, 3]))
    for tip in (FOO0, FOO1, BAR0):
        _verify_online_with_id(b, tip)


def test_full_lair_during_kraft_migration_removes_old():
    """ReplicaManagerTest.testFullLairDuringKRaftMigrationRemovesOld: a second full request
    with bar-0 only takes foo-0 and foo-1 offline (HostedPartition.None)."""
    b = _migration_broker()
    b.rm.become_leader_or_follower(b, 1000, _full_lisr([FOO0, FOO1, BAR0], [3, 4, 3]))
    b.rm.become_leader_or_follower(b, 1000, _full_lisr([BAR0], [3, 4, 3]))
    assert ("foo", 0) not in b.rm.partitions and ("foo", 1) not in b.rm.partitions
    _verify_online_with_id(b, BAR0)


def test_full_lair_during_kraft_migration_with_topic_recreations():
    """ReplicaManagerTest.testFullLairDuringKRaftMigrationWithTopicRecreations: foo re-created
    with a new id: the old foo-0 is moved aside and the new one is online with the new id."""
    b = _migration_broker()
    b.rm.become_leader_or_follower(b, 1000, _full_lisr([FOO0, FOO1, BAR0], [3, 4, 3]))
    b.rm.become_leader_or_follower(b, 1000, _full_lisr([NEW_FOO0, BAR0], [3, 4, 3]))
    _verify_online_with_id(b, NEW_FOO0)
    assert ("foo", 1) not in b.rm.partitions
    _verify_online_with_id(b, BAR0)
    assert b.log_manager.stray_logs[("foo", 0)].topic_id == FOO0[0]


# -- LogManagerTest.testLoadLogRenameLogThatShouldBeStray / isStrayKraftReplica --------------------
def _image(partitions: dict) -> MetadataImage:
    """A metadata image holding ``partitions`` ((topic id, topic, partition) -> replicas)."""
    image = MetadataImage()
    offset = 0
    for (topic_id, name, _p) in partitions:
        if name not in image.topic_ids:
            image.replay(R.TopicRecord(name, topic_id), offset)
            offset += 1
    for (topic_id, _name, pid), replicas in partitions.items():
        image.replay(R.PartitionRecord(pid, topic_id, tuple(replicas), tuple(replicas)), offset)
        offset += 1
    return image


def test_load_log_rename_log_that_should_be_stray():
    """LogManagerTest.testLoadLogRenameLogThatShouldBeStray @3.9.0-rc3: a log the stray test
    names is renamed ``test-stray-topic-0.<uniqueId>-stray`` in the log dir (LogManager.loadLog;
    kafkasim: delete_stray_kraft_replicas at the first publish)."""
    ctx = Broker(broker_id=0, version="3.9")
    manager = ctx.log_manager
    manager.get_or_create_log(ctx, "test-stray-topic", 0, topic_id="AAAAAAAAAAAAAAAAAAAAAQ")
    assert manager.delete_stray_kraft_replicas(ctx, 0, _image({}))
    names = {rel.split("/", 1)[0] for rel in manager.log_dir.files}
    assert any(n.startswith("test-stray-topic") and n.endswith(STRAY_DIR_SUFFIX) for n in names)
    assert "test-stray-topic-0" not in names and not manager.logs
    assert list(manager.stray_logs) == [("test-stray-topic", 0)]


def test_log_stray_dir_name():
    """LocalLog.logStrayDirName: ``topic-partition.uniqueId-stray``, capped at 255 characters,
    and parseTopicPartitionName reads it back."""
    name = log_stray_dir_name("foo", 3, "0123456789abcdef0123456789abcdef")
    assert name == "foo-3.0123456789abcdef0123456789abcdef-stray"
    assert parse_topic_partition_name(name) == ("foo", 3)
    long = log_stray_dir_name("t" * 300, 0, "0" * 32)
    assert len(long) == 255 and long.endswith("-0." + "0" * 32 + "-stray")


def test_a_log_without_topic_id_at_a_kraft_start_by_version():
    """A log without a topic id (no partition.metadata): 3.9+ (KAFKA-16814) it is stray;
    3.7-3.8 the check throws and the startup fails (nothing moved, False); 3.3-3.6
    BrokerMetadataPublisher.findStrayPartitions throws and no stray is found (None)."""
    from kafkasim.runtime.log_manager import find_stray_partitions
    image = _image({FOO0: [0, 1, 2]})
    for version, moved in (("3.9", True), ("4.3", True), ("3.8", False), ("3.7", False)):
        ctx = Broker(broker_id=0, version=version)
        ctx.log_manager.get_or_create_log(ctx, "quux", 0)   # no topic id
        ctx.log_manager.get_or_create_log(ctx, "bar", 0, topic_id=BAR0[0])   # not in the image
        assert ctx.log_manager.delete_stray_kraft_replicas(ctx, 0, image) is moved
        assert (not ctx.log_manager.logs) is moved
    ctx = Broker(broker_id=0, version="3.6")
    ctx.log_manager.get_or_create_log(ctx, "quux", 0)
    assert find_stray_partitions(ctx, 0, image, ctx.log_manager.logs) is None
    ctx.log_manager.logs.pop(("quux", 0))
    ctx.log_manager.get_or_create_log(ctx, "bar", 0, topic_id=BAR0[0])
    strays = find_stray_partitions(ctx, 0, image, ctx.log_manager.logs)
    assert [tp for tp, _reason in strays] == [("bar", 0)]
    assert "does not exist in the metadata image" in strays[0][1]


# -- the learner's scenario: reassigned away while the broker was down ---------------------------
def _reassign_away_while_down(version: str, mode: str, tmp_path):
    """Broker 1 holds t-0 (replicas [1, 2, 3]) with 5 records; it is shut down, t-0 is
    reassigned to [2, 3, 4], then broker 1 starts again."""
    c = Cluster(4, kafka_version=version, metadata_mode=mode, log_dirs=str(tmp_path), seed=3)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(3000)
    producer = c.producer()
    for i in range(5):
        producer.send("t", f"v{i}")
    c.run(2000)
    c.shutdown(1)
    c.run_until(lambda cl: not cl.brokers[1].is_running, 30000)
    c.run(5000)   # (ZooKeeper mode: a new controller, if broker 1 was it)
    assert c.admin().alter_partition_reassignments({("t", 0): [2, 3, 4]}) == {("t", 0): "NONE"}
    c.run(10000)
    assert c.assignment("t") == {0: [2, 3, 4]}
    c.start(1)
    c.run(40000)   # past LogManager's first recovery-point checkpoint (30 s)
    return c, c.brokers[1], tmp_path / "broker-1"


def _recovery_points(broker) -> list:
    text = broker.log_manager.log_dir.read(RECOVERY_POINT_CHECKPOINT)
    return parse_offsets(text, RECOVERY_POINT_CHECKPOINT) if text else []


def _stray_rows(c) -> list:
    return [r for r in c.trace.rows if r[1] == "stray_log"]


@pytest.mark.parametrize("version", ["3.7", "3.9", "4.3"])
def test_kraft_broker_renames_a_stray_log_and_keeps_it(version, tmp_path):
    """KRaft 3.7+ (KAFKA-14616, KAFKA-16234): the restarted broker renames t-0 to
    ``t-0.<uniqueId>-stray`` before any replica is made and keeps it: no longer its log, not in
    its checkpoint files; its next start finds it again ("Loaded stray log")."""
    c, b, disk = _reassign_away_while_down(version, "kraft", tmp_path)
    assert not b.logs and list(b.log_manager.stray_logs) == [("t", 0)]
    dirs = sorted(p.name for p in disk.iterdir() if p.is_dir())
    assert len(dirs) == 1 and dirs[0].startswith("t-0.") and dirs[0].endswith("-stray")
    assert {p.name for p in (disk / dirs[0]).iterdir()} >= {LEADER_EPOCH_CHECKPOINT,
                                                           PARTITION_METADATA_FILE}
    assert _recovery_points(b) == []
    (row,) = _stray_rows(c)
    assert row[2] == 1 and (row[3], row[4]) == ("t", 0)
    assert row[5].action == "renamed" and row[5].dir_name == dirs[0]
    assert "does not contain the local brokerId 1" in row[5].reason
    c.restart(1, clean=True)
    c.run(20000)
    assert _stray_rows(c)[-1][5].text == f"Loaded stray log: {dirs[0]}"
    assert not b.logs


def test_kraft_3_6_broker_deletes_a_stray_log(tmp_path):
    """KRaft 3.3-3.6: after the first publish's delta, finishInitializingReplicaManager deletes
    the stray log (ReplicaManager.deleteStrayReplicas: stopPartitions with delete)."""
    c, b, _disk = _reassign_away_while_down("3.6", "kraft", tmp_path)
    assert not b.logs and not b.log_manager.stray_logs
    assert _recovery_points(b) == []
    (row,) = _stray_rows(c)
    assert row[5].action == "deleted"
    stops = [r for r in c.trace.rows if r[1] == "stop_replica" and r[2] == 1]
    assert stops and stops[-1][5].delete


def test_zookeeper_broker_keeps_a_stray_log_loaded(tmp_path):
    """ZooKeeper mode (no FULL LeaderAndIsr from its controller): the stray log is loaded and
    kept as a log of the broker, listed in its recovery-point checkpoint, hosted by nothing."""
    c, b, _disk = _reassign_away_while_down("3.9", "zookeeper", tmp_path)
    assert list(b.logs) == [("t", 0)] and ("t", 0) not in b.replica_manager.partitions
    assert _recovery_points(b) == [("t", 0, 5)]
    assert not _stray_rows(c)


def test_kraft_3_8_broker_with_a_log_without_topic_id_fails_to_start(tmp_path):
    """3.7-3.8: a log that lost its partition.metadata makes isStrayKraftReplica throw; the
    fatal fault handler ("Error starting LogManager") stops the broker (KAFKA-16814 fixed it
    in 3.9: the log is stray)."""
    for version, starts in (("3.8", False), ("3.9", True)):
        path = tmp_path / version
        c = Cluster(3, kafka_version=version, metadata_mode="kraft", log_dirs=str(path), seed=3)
        c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
        c.run(3000)
        c.shutdown(1)
        c.run_until(lambda cl: not cl.brokers[1].is_running, 30000)
        c.brokers[1].log_manager.log_dir.delete(f"t-0/{PARTITION_METADATA_FILE}")
        c.start(1)
        c.run(10000)
        assert c.brokers[1].is_running is starts
        failed = [r for r in c.trace.rows if r[1] == "broker_start_failed" and r[2] == 1]
        assert bool(failed) is not starts
        if starts:   # stray (renamed), then the replica is made again, empty, and catches up
            assert ("t", 0) in c.brokers[1].log_manager.stray_logs
            assert c.brokers[1].logs[("t", 0)].topic_id is not None


# -- Partition.topicId / checkOrSetTopicId ---------------------------------------------------------
@pytest.mark.parametrize("leader", [True, False])
def test_topic_id_and_partition_metadata_file(leader):
    """PartitionTest.testTopicIdAndPartitionMetadataFileForLeader / ForFollower @3.9.0-rc3:
    after makeLeader / makeFollower with a topic id, Partition.topicId and the log's
    partition.metadata hold it; a second Partition of the same partition (the same
    LogManager log) has it too, and a different id is an InconsistentTopicIdException."""
    b = Broker(version="3.9", migration=False)
    topic_id = "Zt4kqzMpQEidX7fSrj0BgA"
    st = PartitionState("foo", 0, 3, 0 if leader else 1, 5, (0, 1), 1, (0, 1))
    b.rm.become_leader_or_follower(b, 9, LeaderAndIsrRequest(9, 3, (st,),
                                                             topic_ids={"foo": topic_id}))
    part = b.rm.partitions[("foo", 0)]
    assert part.topic_id == topic_id
    assert part.log.partition_metadata_file.read().topic_id == topic_id
    part2 = Partition("foo", 0, b.id, b.log_manager.get_log(("foo", 0)))
    assert part2.topic_id == topic_id
    with pytest.raises(InconsistentTopicIdException):
        b.log_manager.get_or_create_log(b, "foo", 0, topic_id="YGqZ4yb1Q0y4bFDV_p9vsQ")
    assert part2.topic_id == topic_id


def test_partition_topic_id_is_none_without_one():
    """Partition.topicId: None while the log has no id (a ZooKeeper log before its first
    LeaderAndIsr with ids); Partition.checkOrSetTopicId (2.8) gives it the request's."""
    b = Broker(version="2.8", migration=False)
    part = Partition("foo", 0, b.id, b.log_manager.get_or_create_log(b, "foo", 0))
    assert part.topic_id is None
    assert part.check_or_set_topic_id("Zt4kqzMpQEidX7fSrj0BgA")
    assert part.topic_id == "Zt4kqzMpQEidX7fSrj0BgA"
    assert not part.check_or_set_topic_id("YGqZ4yb1Q0y4bFDV_p9vsQ")
