"""Topic ids in ZooKeeper mode (KIP-516, Kafka 2.8 - 3.9): the broker's half, from Kafka's tests.

Ports, from core/src/test/scala/unit/kafka/server/ReplicaManagerTest.scala at tag 3.9.0-rc3
(3.0.0 has the same cases) unless the docstring names 2.8.0: testPartitionMetadataFile,
testPartitionMetadataFileCreatedWithExistingLog,
testPartitionMetadataFileCreatedAfterPreviousRequestWithoutIds, testInconsistentIdReturnsError,
testPartitionMetadataFileNotCreated; at 2.8.0 testPartitionMetadataFile and
testInvalidIdReturnsError (whose Partition already holds a log: in 2.8 only
Partition.checkOrSetTopicId gives a log its id, rule ``leader_and_isr_creates_log_with_topic_id``).
ZkMetadataCache.updateMetadata's topic ids (UpdateMetadata v7). The controller's half
(ControllerIntegrationTest's testTopicId*, ControllerChannelManagerTest's topic ids) is in
tests/test_zk_controller_kafka.py; a running cluster's partition.metadata in
tests/test_checkpoint_s24_kafka.py::test_brokers_write_partition_metadata.

Adaptation: Kafka's ``setupReplicaManagerWithMockedPurgatories`` is a ``FakeContext`` (broker 0)
with a real ``LogManager`` (an in-memory log dir, so partition.metadata is written) and a
``ReplicaManager``; ``becomeLeaderOrFollower(LeaderAndIsrRequest)`` is
``become_leader_or_follower`` and its answer the LeaderAndIsrResponse sent to the controller
(``partition_errors``). A LeaderAndIsr of version 5+ is one with ``topic_ids``; versions 0-4 carry
none (``topic_ids=()``), as the deserialized requests of testPartitionMetadataFileNotCreated.
Kafka's ``Uuid.randomUuid()`` ids are fixed strings here.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from kafkasim.core import errors as E
from kafkasim.core.checkpoint import PARTITION_METADATA_FILE
from kafkasim.core.fake import FakeContext
from kafkasim.core.messages import (
    ZERO_UUID,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    PartitionState,
    UpdateMetadataRequest,
)
from kafkasim.core.partition import Partition
from kafkasim.core.replica_manager import (
    ReplicaManager,
    check_topic_id,
    has_consistent_topic_id,
    topic_id_from_request,
)
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.log_manager import LogManager
from kafkasim.runtime.metadata_cache import MetadataCache

TOPIC = "foo"
CONTROLLER = 9
TOPIC_ID = "Zt4kqzMpQEidX7fSrj0BgA"
INVALID_TOPIC_ID = "YGqZ4yb1Q0y4bFDV_p9vsQ"


class Broker(FakeContext):
    """setupReplicaManagerWithMockedPurgatories: broker 0 (brokers 0 and 1 alive) with a
    LogManager whose logs keep partition.metadata and a ReplicaManager."""

    def __init__(self, version: str = "3.9") -> None:
        super().__init__(0, kafka_version=version, live_brokers=(0, 1))
        self.cluster = SimpleNamespace(kafka_version=self.kafka_version)   # load_logs reads it
        self.log_manager = LogManager()
        self.rm = ReplicaManager()
        self.rm.partitions = self.partitions
        self.replica_manager = self.rm

    def lair(self, epoch: int, topic_ids, topic: str = TOPIC, partition: int = 0,
             leader: int = 0) -> str:
        """becomeLeaderOrFollower of one partition state (replicas and ISR [0, 1]) with the
        request's ``topic_ids`` (a dict: LeaderAndIsr v5+; ``()``: v0-v4); the partition's
        error in the answer."""
        st = PartitionState(topic, partition, 0, leader, epoch, (0, 1), 0, (0, 1))
        self.rm.become_leader_or_follower(
            self, CONTROLLER, LeaderAndIsrRequest(CONTROLLER, 0, (st,), topic_ids=topic_ids))
        answer = [m for d, m in self.sent if d == CONTROLLER][-1]
        assert isinstance(answer, LeaderAndIsrResponse) and answer.error == E.NONE
        (_t, _p, error), = answer.partition_errors
        return error

    def log(self, partition: int = 0, topic: str = TOPIC):
        """replicaManager.localLog(tp).get"""
        return self.rm.partitions[(topic, partition)].log

    def file(self, partition: int = 0, topic: str = TOPIC) -> str | None:
        """The partition's partition.metadata on disk, None when it does not exist."""
        return self.log_manager.log_dir.read(f"{topic}-{partition}/{PARTITION_METADATA_FILE}")


# -- ReplicaManagerTest @3.9.0-rc3 ----------------------------------------------------------------
def test_partition_metadata_file():
    """testPartitionMetadataFile: a LeaderAndIsr with the topic's id makes the new partition's
    log with partition.metadata, version 0, holding the id."""
    b = Broker()
    assert b.lair(0, {TOPIC: TOPIC_ID}) == E.NONE
    log = b.log()
    assert log.partition_metadata_file.exists()
    metadata = log.partition_metadata_file.read()
    assert (metadata.version, metadata.topic_id) == (0, TOPIC_ID)
    assert b.file() == f"version: 0\ntopic_id: {TOPIC_ID}"


def test_partition_metadata_file_created_with_existing_log():
    """testPartitionMetadataFileCreatedWithExistingLog: a log LogManager created without an id
    (no file) gets the LeaderAndIsr's id and its partition.metadata."""
    b = Broker()
    log = b.log_manager.get_or_create_log(b, TOPIC, 0)
    assert log.topic_id is None and not log.partition_metadata_file.exists()
    assert b.lair(0, {TOPIC: TOPIC_ID}) == E.NONE
    assert b.log() is log
    assert log.partition_metadata_file.exists()
    assert log.partition_metadata_file.read().topic_id == TOPIC_ID


def test_partition_metadata_file_created_after_previous_request_without_ids():
    """testPartitionMetadataFileCreatedAfterPreviousRequestWithoutIds: a LeaderAndIsr v4 (no
    ids) makes a log without an id; a v5 one with the id then gives it, at the same leader
    epoch (KAFKA-13132: NONE, not STALE_CONTROLLER_EPOCH) for partition 0 and at the next epoch
    for partition 1."""
    b = Broker()
    assert b.lair(0, ()) == E.NONE
    log = b.log()
    assert log.topic_id is None and not log.partition_metadata_file.exists()
    assert b.lair(0, {TOPIC: TOPIC_ID}) == E.NONE
    assert log.partition_metadata_file.exists() and log.topic_id == TOPIC_ID

    assert b.lair(0, (), partition=1) == E.NONE
    log2 = b.log(1)
    assert log2.topic_id is None and not log2.partition_metadata_file.exists()
    assert b.lair(1, {TOPIC: TOPIC_ID}, partition=1) == E.NONE
    assert log2.partition_metadata_file.exists() and log2.topic_id == TOPIC_ID
    assert log.partition_metadata_file.read().topic_id == TOPIC_ID
    assert log2.partition_metadata_file.read().topic_id == TOPIC_ID


def test_inconsistent_id_returns_error():
    """testInconsistentIdReturnsError: once the log has the topic's id, a LeaderAndIsr with
    another id answers INCONSISTENT_TOPIC_ID, at the same leader epoch and at a newer one, and
    the partition is left as it was."""
    b = Broker()
    assert b.lair(0, {TOPIC: TOPIC_ID}) == E.NONE
    assert b.lair(1, {TOPIC: TOPIC_ID}) == E.NONE
    assert b.lair(1, {TOPIC: INVALID_TOPIC_ID}) == E.INCONSISTENT_TOPIC_ID
    assert b.lair(2, {TOPIC: INVALID_TOPIC_ID}) == E.INCONSISTENT_TOPIC_ID
    part = b.rm.partitions[(TOPIC, 0)]
    assert (part.leader_epoch, part.log.topic_id) == (1, TOPIC_ID)
    assert b.file() == f"version: 0\ntopic_id: {TOPIC_ID}"


def test_partition_metadata_file_not_created():
    """testPartitionMetadataFileNotCreated: no partition.metadata for a topic the request has
    no id for, nor for the zero Uuid, nor from a LeaderAndIsr v0 or v4 (no ids on the wire);
    each answers NONE."""
    b = Broker()
    topic_ids = {TOPIC: ZERO_UUID, "foo2": TOPIC_ID}
    assert b.lair(0, topic_ids, topic="fakeTopic") == E.NONE
    assert not b.log(topic="fakeTopic").partition_metadata_file.exists()
    assert b.lair(0, topic_ids) == E.NONE
    assert not b.log().partition_metadata_file.exists()
    assert b.lair(0, (), topic="foo2") == E.NONE            # version 0
    assert not b.log(topic="foo2").partition_metadata_file.exists()
    assert b.lair(1, (), topic="foo2") == E.NONE            # version 4
    assert not b.log(topic="foo2").partition_metadata_file.exists()
    assert [b.file(topic=t) for t in ("fakeTopic", TOPIC, "foo2")] == [None] * 3


def test_restarted_broker_checks_the_id_its_log_read_back():
    """Partition.topicId @3.0.0 (Partition.scala:435: the Partition's log, else LogManager's):
    after a restart the log read its id from partition.metadata; a LeaderAndIsr with another
    id answers INCONSISTENT_TOPIC_ID before any Partition exists, and the log keeps its id."""
    b = Broker()
    assert b.lair(0, {TOPIC: TOPIC_ID}) == E.NONE
    b.log_manager.flush_for_shutdown(b.now)
    b.rm.partitions.clear()
    b.log_manager.load_logs(b)
    assert b.log_manager.get_log((TOPIC, 0)).topic_id == TOPIC_ID
    assert b.lair(1, {TOPIC: INVALID_TOPIC_ID}) == E.INCONSISTENT_TOPIC_ID
    assert (TOPIC, 0) not in b.rm.partitions
    assert b.lair(1, {TOPIC: TOPIC_ID}) == E.NONE
    assert b.log().topic_id == TOPIC_ID


# -- ReplicaManagerTest @2.8.0: Partition.checkOrSetTopicId -------------------------------------
def _partition_with_log(b: Broker, partition: int = 0) -> Partition:
    """replicaManager.createPartition(tp).createLogIfNotExists(isNew = false, ...): a Partition
    that already holds its log (no LeaderAndIsr yet)."""
    part = Partition(TOPIC, partition, b.id, b.log_manager.get_or_create_log(b, TOPIC, partition))
    b.rm.partitions[(TOPIC, partition)] = part
    return part


def test_partition_metadata_file_2_8():
    """ReplicaManagerTest.testPartitionMetadataFile @2.8.0: the Partition holds its log before
    the LeaderAndIsr, whose id checkOrSetTopicId gives it (partition.metadata, version 0)."""
    b = Broker("2.8")
    _partition_with_log(b)
    assert b.lair(0, {TOPIC: TOPIC_ID}) == E.NONE
    assert b.log().partition_metadata_file.read().topic_id == TOPIC_ID
    assert b.file() == f"version: 0\ntopic_id: {TOPIC_ID}"


def test_invalid_id_returns_error():
    """ReplicaManagerTest.testInvalidIdReturnsError @2.8.0: with the id set, another id answers
    INCONSISTENT_TOPIC_ID at the same and at a newer leader epoch."""
    b = Broker("2.8")
    _partition_with_log(b)
    assert b.lair(0, {TOPIC: TOPIC_ID}) == E.NONE
    assert b.lair(1, {TOPIC: TOPIC_ID}) == E.NONE
    assert b.lair(1, {TOPIC: INVALID_TOPIC_ID}) == E.INCONSISTENT_TOPIC_ID
    assert b.lair(2, {TOPIC: INVALID_TOPIC_ID}) == E.INCONSISTENT_TOPIC_ID
    assert b.log().topic_id == TOPIC_ID


@pytest.mark.parametrize("version, first, same_epoch", [
    ("2.8", None, E.STALE_CONTROLLER_EPOCH),
    ("3.0", TOPIC_ID, E.NONE),
    ("3.9", TOPIC_ID, E.NONE),
])
def test_new_partition_log_takes_the_id(version, first, same_epoch):
    """Partition.scala @2.8.0 vs KAFKA-12426 / KAFKA-13132 (3.0.0): in 2.8 a partition's first
    LeaderAndIsr creates its log without an id (checkOrSetTopicId runs before the log exists,
    makeLeader's createLogIfNotExists takes no id); the next LeaderAndIsr for it, even at the
    same leader epoch, gives it -- answering STALE_CONTROLLER_EPOCH for that epoch. From 3.0
    the first one creates the log with the id; the same epoch again answers
    STALE_CONTROLLER_EPOCH only without an id to give."""
    b = Broker(version)
    assert b.lair(0, {TOPIC: TOPIC_ID}) == E.NONE
    assert b.log().topic_id == first
    expected_second = same_epoch if first is None else E.STALE_CONTROLLER_EPOCH
    assert b.lair(0, {TOPIC: TOPIC_ID}) == expected_second
    assert b.log().topic_id == TOPIC_ID
    assert b.file() == f"version: 0\ntopic_id: {TOPIC_ID}"


def test_follower_of_an_unavailable_leader_gets_the_id():
    """ReplicaManager.makeFollowers (ReplicaManager.scala:2297@3.9.0-rc3): a follower whose new
    leader is not alive makes no state change but creates its log all the same
    (createLogIfNotExists(..., topicIds(topic)), KAFKA-1647), with the request's topic id."""
    b = Broker()
    st = PartitionState(TOPIC, 0, 0, 2, 0, (0, 2), 0, (0, 2))   # leader 2 is not alive
    b.rm.become_leader_or_follower(
        b, CONTROLLER, LeaderAndIsrRequest(CONTROLLER, 0, (st,), topic_ids={TOPIC: TOPIC_ID}))
    part = b.rm.partitions[(TOPIC, 0)]
    assert part.leader_epoch != 0   # no Partition.makeFollower
    assert part.log.topic_id == TOPIC_ID and b.file() == f"version: 0\ntopic_id: {TOPIC_ID}"


def test_no_topic_ids_before_2_8():
    """Before 2.8 (LeaderAndIsr v4, no partition.metadata) a request's ids change nothing."""
    b = Broker("2.7")
    assert b.lair(0, {TOPIC: TOPIC_ID}) == E.NONE
    assert b.log().topic_id is None and b.file() is None


def test_topic_id_helpers():
    """topicIdFromRequest (the zero Uuid and a missing topic are None),
    ReplicaManager.hasConsistentTopicId and Partition.checkOrSetTopicId @2.8.0 (a request
    without an id is consistent; a log without one takes the request's)."""
    req = LeaderAndIsrRequest(CONTROLLER, 0, (), topic_ids={"a": TOPIC_ID, "z": ZERO_UUID})
    assert req.topic_ids == (("a", TOPIC_ID), ("z", ZERO_UUID))
    assert [topic_id_from_request(req, t) for t in ("a", "z", "b")] == [TOPIC_ID, None, None]
    assert has_consistent_topic_id(None, TOPIC_ID) and has_consistent_topic_id(TOPIC_ID, None)
    assert has_consistent_topic_id(TOPIC_ID, TOPIC_ID)
    assert not has_consistent_topic_id(INVALID_TOPIC_ID, TOPIC_ID)
    b = Broker("2.8")
    part = _partition_with_log(b)
    assert part.check_or_set_topic_id(None) and part.check_or_set_topic_id(ZERO_UUID)
    assert part.log.topic_id is None
    assert part.check_or_set_topic_id(TOPIC_ID) and part.log.topic_id == TOPIC_ID
    assert part.topic_id == TOPIC_ID
    assert not part.check_or_set_topic_id(INVALID_TOPIC_ID)
    st = PartitionState(TOPIC, 0, 0, 0, 0, (0, 1), 0, (0, 1))
    assert check_topic_id(b, part, st, INVALID_TOPIC_ID) == E.INCONSISTENT_TOPIC_ID
    assert check_topic_id(b, part, st, None) is None


# -- ZkMetadataCache.updateMetadata: MetadataSnapshot.topicIds ------------------------------------
def test_zk_metadata_cache_keeps_update_metadata_topic_ids():
    """ZkMetadataCache.updateMetadata (ZkMetadataCache.scala:548@3.9.0-rc3): each non-zero id
    of the UpdateMetadata's topic states is kept (getTopicId, and the MetadataResponse's
    topicId), a zero one removes the topic's; a request without ids (v0-v6) changes none."""
    cache = MetadataCache.zk_metadata_cache(0, "3.9")
    st = PartitionState(TOPIC, 0, 0, 0, 0, (0, 1), 0, (0, 1))
    bar = PartitionState("bar", 0, 0, 1, 0, (0, 1), 0, (0, 1))
    cache.update_metadata(1, UpdateMetadataRequest(CONTROLLER, 0, (st, bar), (0, 1),
                                                   topic_ids=((TOPIC, TOPIC_ID),
                                                              ("bar", INVALID_TOPIC_ID))))
    assert (cache.topic_id(TOPIC), cache.topic_id("bar")) == (TOPIC_ID, INVALID_TOPIC_ID)
    assert [t.topic_id for t in cache.get_topic_metadata([TOPIC, "bar"])] == \
        [TOPIC_ID, INVALID_TOPIC_ID]
    cache.update_metadata(2, UpdateMetadataRequest(CONTROLLER, 0, (bar,), (0, 1),
                                                   topic_ids=(("bar", ZERO_UUID),)))
    cache.update_metadata(3, UpdateMetadataRequest(CONTROLLER, 0, (st,), (0, 1)))
    assert (cache.topic_id(TOPIC), cache.topic_id("bar")) == (TOPIC_ID, ZERO_UUID)


# -- a running ZooKeeper cluster at 2.8 -----------------------------------------------------------
def test_zookeeper_2_8_brokers_write_partition_metadata_from_the_next_leader_and_isr(tmp_path):
    """Kafka 2.8.0 end to end: the topic's creation writes no partition.metadata (the first
    LeaderAndIsr creates the logs without an id); after a leader change the next
    LeaderAndIsr gives the surviving replicas' logs the znode's id, the one kafka-topics
    --describe prints."""
    c = Cluster(3, kafka_version="2.8", log_dirs=str(tmp_path), seed=4)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(3000)
    topic_id = c.zk.get("/brokers/topics/t").json()["topic_id"]
    assert f"TopicId: {topic_id}\t" in c.describe("t")
    # every broker's metadata cache has it from UpdateMetadata v7 (what the Admin client's
    # describeTopics, behind kafka-topics --describe, gets in its MetadataResponse)
    assert [c.brokers[b].metadata.topic_id("t") for b in (1, 2, 3)] == [topic_id] * 3
    path = {b: tmp_path / f"broker-{b}" / "t-0" / PARTITION_METADATA_FILE for b in (1, 2, 3)}
    assert not any(p.exists() for p in path.values())
    c.crash(1)
    c.run(30000)
    assert c.leader("t") != 1
    assert [c.brokers[b].logs[("t", 0)].topic_id for b in (2, 3)] == [topic_id] * 2
    assert path[2].read_text(encoding="utf-8") == f"version: 0\ntopic_id: {topic_id}"
    assert not path[1].exists()
