"""Checkpoint files, the metadata caches and DelayedFetch driven by Kafka's names, following:

* storage/src/test/java/org/apache/kafka/storage/internals/checkpoint/
  OffsetCheckpointFileWithFailureHandlerTest, LeaderEpochCheckpointFileWithFailureHandlerTest and
  CleanShutdownFileHandlerTest (trunk 1eb7644; core's OffsetCheckpointFileTest and
  LeaderEpochCheckpointFileTest until 3.2, renamed ...WithFailureHandlerTest in 3.3), and
  core/.../server/checkpoints/InMemoryLeaderEpochCheckpointTest (3.5-3.7, gone in 3.8), against
  ``kafkasim.core.checkpoint``;
* core/src/test/scala/unit/kafka/server/MetadataCacheTest.scala (tag 3.7.0, the last with both
  caches) against ``kafkasim.runtime.metadata_cache.ZkMetadataCache`` and
  ``KRaftMetadataCache``;
* core/src/test/scala/integration/kafka/server/DelayedFetchTest.scala (trunk 1eb7644) against
  the fetch purgatory of ``kafkasim.core.replica_manager.ReplicaManager``.

Adaptation to kafkasim. A checkpoint file is a real file in ``tmp_path`` (Kafka's
``TestUtils.tempFile``); kafkasim's TopicPartition is a (topic, partition) tuple. A KRaft
MetadataDelta replaying records is a ``MetadataImage`` replaying them, handed to
``KRaftMetadataCache.set_image``; an UpdateMetadataRequest for the KRaft cache is turned into
records the way Kafka's test helper ``MetadataCacheTest.updateCache`` does. Kafka's mocked
``ReplicaManager``/``Partition`` behind a DelayedFetch is a real ``ReplicaManager`` on a
``FakeContext`` whose partition is put in the state the mock answers (a leader epoch moved on, the
partition gone, an epoch cache that now diverges); ``DelayedFetch.tryComplete`` is
``ReplicaManager.try_complete_fetch`` and its callback the FetchResponse the broker sends.

Left out (kafkasim does not model it): Mockito call counts (testLazyOffsetCheckpoint's "read
once" is checked by counting reads of a real file instead); MetadataCacheTest's ZooKeeper
migration and KRaft-controller UpdateMetadata (testHandleFullUpdateMetadataRequestInZkMigration,
testCreateDeletionEntries, transformUMR*, testUpdateZkMetadataCacheViaHybridUMR,
testUpdateZkMetadataCacheWithRecreatedTopic: no migration), getClusterMetadata
(testGetClusterMetadataWithOfflineReplicas: no client Cluster object), log directories
(testGetOfflineReplicasConsidersDirAssignment: no JBOD), 3.8's DescribeTopicPartitions
(testGetTopicMetadataForDescribeTopicPartitionsResponse); DelayedFetchTest's
testDelayedFetchWithMessageOnlyHighWatermark(endOffset=500) (an HW known only by its offset,
without a segment position: kafkasim's log is one segment without positions); PartitionMetadataFile
(partition.metadata is checked in tests/test_checkpoint_s24_kafka.py and
tests/test_zk_topic_ids_kafka.py). Within ported cases: testGetPartitionInfo's offline replicas
are not (no log dir fails).
"""

from __future__ import annotations

import os
from types import SimpleNamespace

import pytest

from kafkasim.control.kraft.image import MetadataImage
from kafkasim.control.kraft.records import (
    BrokerEndpoint,
    BrokerRegistrationChangeRecord,
    PartitionRecord,
    RegisterBrokerRecord,
    RemoveTopicRecord,
    TopicRecord,
)
from kafkasim.core import errors as E
from kafkasim.core.checkpoint import (
    CheckpointFileWithFailureHandler,
    CleanShutdownFileHandler,
    InMemoryLeaderEpochCheckpoint,
    LazyOffsetCheckpoints,
    LeaderEpochCheckpointFile,
    LogDirFailureChannel,
    OffsetCheckpointFile,
    TopicPartitionOffset,
)
from kafkasim.core.errors import IllegalArgumentException, KafkaStorageException
from kafkasim.core.fake import FakeContext
from kafkasim.core.leader_epoch import EpochEntry
from kafkasim.core.messages import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    LeaderAndIsrRequest,
    PartitionState,
    ProduceRequest,
    UpdateMetadataBroker,
    UpdateMetadataEndpoint,
    UpdateMetadataRequest,
)
from kafkasim.core.replica_manager import ReplicaManager
from kafkasim.runtime.kafka_apis import handle_update_metadata_request
from kafkasim.runtime.metadata_cache import (
    MetadataCache,
    Node,
    ZkMetadataCache,
)


# -- OffsetCheckpointFileWithFailureHandlerTest -------------------------------------------------
def test_should_persist_and_overwrite_and_reload_file(tmp_path):
    """shouldPersistAndOverwriteAndReloadFile: what is written is read back; a second write
    replaces the first."""
    checkpoint = OffsetCheckpointFile(tmp_path / "checkpoint")
    offsets = {("foo", 1): 5, ("bar", 2): 10}
    checkpoint.write(offsets)
    assert checkpoint.read() == offsets
    offsets2 = {("foo", 2): 15, ("bar", 3): 20}
    checkpoint.write(offsets2)
    assert checkpoint.read() == offsets2


def test_should_handle_multiple_lines(tmp_path):
    """shouldHandleMultipleLines: ten partitions, one line each, read back."""
    checkpoint = OffsetCheckpointFile(tmp_path / "checkpoint")
    offsets = {}
    for i in range(1, 6):
        offsets[("foo", i)] = 5
        offsets[("bar", i + 5)] = 10
    checkpoint.write(offsets)
    assert checkpoint.read() == offsets
    with open(checkpoint.file, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert lines[:2] == ["0", "10"] and lines[2] == "foo 1 5" and len(lines) == 12


def test_should_return_empty_map_for_empty_file(tmp_path):
    """shouldReturnEmptyMapForEmptyFile: opening the file creates it empty, which reads as no
    entries; writing no entries reads back as none."""
    path = tmp_path / "checkpoint"
    checkpoint = OffsetCheckpointFile(path)
    assert path.exists() and path.read_text() == ""
    assert checkpoint.read() == {}
    checkpoint.write({})
    assert path.read_text() == "0\n0\n"
    assert checkpoint.read() == {}


def test_should_throw_if_version_is_not_recognised(tmp_path):
    """shouldThrowIfVersionIsNotRecognised: a file written at version 1 read as version 0 is a
    KafkaStorageException, and its log dir goes offline."""
    path = tmp_path / "checkpoint"
    channel = LogDirFailureChannel(10)
    checkpoint_file = CheckpointFileWithFailureHandler(
        path, OffsetCheckpointFile.CURRENT_VERSION + 1, OffsetCheckpointFile.Formatter(),
        channel, str(tmp_path))
    checkpoint_file.write([TopicPartitionOffset(("foo", 5), 10)])
    assert path.read_text() == "1\n1\nfoo 5 10\n"
    with pytest.raises(KafkaStorageException, match="unrecognized version 1"):
        OffsetCheckpointFile(checkpoint_file.file, channel).read()
    assert channel.has_offline_log_dir(str(tmp_path))


def test_lazy_offset_checkpoint(tmp_path):
    """testLazyOffsetCheckpoint: nothing is read until the first fetch, then the file once;
    a partition not in it has no offset."""
    log_dir = str(tmp_path)
    reads = []

    class CountingFile(OffsetCheckpointFile):
        __slots__ = ()

        def read(self):
            reads.append(1)
            return super().read()

    checkpoint = CountingFile(tmp_path / "replication-offset-checkpoint")
    checkpoint.write({("foo", 0): 1000, ("foo", 1): 2000})
    lazy = LazyOffsetCheckpoints({log_dir: checkpoint})
    assert reads == []
    assert lazy.fetch(log_dir, ("foo", 0)) == 1000
    assert lazy.fetch(log_dir, ("foo", 1)) == 2000
    assert lazy.fetch(log_dir, ("foo", 2)) is None
    assert reads == [1]


def test_lazy_offset_checkpoint_file_invalid_log_dir(tmp_path):
    """testLazyOffsetCheckpointFileInvalidLogDir: a log dir without a checkpoint file is an
    IllegalArgumentException."""
    checkpoint = OffsetCheckpointFile(tmp_path / "replication-offset-checkpoint")
    lazy = LazyOffsetCheckpoints({str(tmp_path): checkpoint})
    with pytest.raises(IllegalArgumentException, match="No checkpoint file for log dir"):
        lazy.fetch("/invalid/kafka-logs", ("foo", 0))


def test_write_if_dir_exists_should_not_throw_when_dir_not_exists(tmp_path):
    """testWriteIfDirExistsShouldNotThrowWhenDirNotExists: the directory renamed away (a
    partition being deleted), writeIfDirExists skips the write; write fails with
    KafkaStorageException and does not recreate the directory."""
    directory = tmp_path / "dir"
    directory.mkdir()
    path = directory / "test-checkpoint"
    channel = LogDirFailureChannel(10)
    checkpoint_file = CheckpointFileWithFailureHandler(
        path, 0, LeaderEpochCheckpointFile.FORMATTER, channel, str(directory))
    os.rename(directory, tmp_path / "dir-renamed")
    checkpoint_file.write_if_dir_exists([EpochEntry(1, 42)])
    assert not directory.exists()
    with pytest.raises(KafkaStorageException, match="Error while writing to checkpoint file"):
        checkpoint_file.write([EpochEntry(1, 42)])
    assert not directory.exists() and channel.has_offline_log_dir(str(directory))


# -- LeaderEpochCheckpointFileWithFailureHandlerTest -------------------------------------------
def test_leader_epoch_should_persist_and_overwrite_and_reload_file(tmp_path):
    """shouldPersistAndOverwriteAndReloadFile (LeaderEpochCheckpointFile): the entries written
    are read back; a second write replaces them."""
    checkpoint = LeaderEpochCheckpointFile(tmp_path / "temp-checkpoint-file",
                                           LogDirFailureChannel(1))
    epochs = [EpochEntry(0, 1), EpochEntry(1, 2), EpochEntry(2, 3)]
    checkpoint.write(epochs)
    assert checkpoint.read() == epochs
    epochs2 = [EpochEntry(3, 4), EpochEntry(4, 5)]
    checkpoint.write(epochs2)
    assert checkpoint.read() == epochs2
    assert (tmp_path / "temp-checkpoint-file").read_text() == "0\n2\n3 4\n4 5\n"


def test_should_retain_values_even_if_checkpoint_is_recreated(tmp_path):
    """shouldRetainValuesEvenIfCheckpointIsRecreated: opening an existing file keeps it."""
    path = tmp_path / "temp-checkpoint-file"
    epochs = [EpochEntry(0, 1), EpochEntry(1, 2), EpochEntry(2, 3)]
    LeaderEpochCheckpointFile(path, LogDirFailureChannel(1)).write(epochs)
    assert LeaderEpochCheckpointFile(path, LogDirFailureChannel(1)).read() == epochs


def test_leader_epoch_checkpoint_log_dir_is_the_partition_dirs_parent(tmp_path):
    """LeaderEpochCheckpointFile's constructor: the log dir a failure takes offline is
    ``file.getParentFile().getParent()``; ``newFile(dir)`` names the file in the partition's
    directory."""
    part_dir = tmp_path / "foo-0"
    part_dir.mkdir()
    path = LeaderEpochCheckpointFile.new_file(part_dir)
    assert path == str(part_dir / "leader-epoch-checkpoint")
    path_file = part_dir / "leader-epoch-checkpoint"
    channel = LogDirFailureChannel(1)
    checkpoint = LeaderEpochCheckpointFile(path, channel)
    path_file.write_text("0\n1\nnot-an-epoch 5\n")
    with pytest.raises(KafkaStorageException, match="line 3"):
        checkpoint.read()
    assert channel.has_offline_log_dir(str(tmp_path))


# -- InMemoryLeaderEpochCheckpointTest (3.5-3.7) -----------------------------------------------
def test_should_append_new_entry():
    """shouldAppendNewEntry: a write replaces the entries held."""
    checkpoint = InMemoryLeaderEpochCheckpoint()
    epochs = [EpochEntry(0, 1), EpochEntry(1, 2), EpochEntry(2, 3)]
    checkpoint.write(epochs)
    assert checkpoint.read() == epochs
    epochs2 = [EpochEntry(3, 4), EpochEntry(4, 5)]
    checkpoint.write(epochs2)
    assert checkpoint.read() == epochs2


def test_read_as_byte_buffer():
    """testReadAsByteBuffer: the bytes are the checkpoint file's text: version, count, entries."""
    checkpoint = InMemoryLeaderEpochCheckpoint()
    epochs = [EpochEntry(0, 1)]
    checkpoint.write(epochs)
    assert checkpoint.read() == epochs
    lines = checkpoint.read_as_byte_buffer().decode("utf-8").splitlines()
    assert lines == ["0", "1", "0 1"]


# -- CleanShutdownFileHandlerTest ---------------------------------------------------------------
def test_clean_shutdown_file_basic(tmp_path):
    """testCleanShutdownFileBasic: write the broker epoch, read it back, delete the file."""
    handler = CleanShutdownFileHandler(str(tmp_path))
    handler.write(10)
    assert handler.exists()
    assert handler.read() == 10
    assert (tmp_path / ".kafka_cleanshutdown").read_text() == '{"version":0,"brokerEpoch":10}'
    handler.delete()
    assert not handler.exists()


def test_clean_shutdown_file_non_exist(tmp_path):
    """testCleanShutdownFileNonExist: once deleted, the file reads as no broker epoch."""
    handler = CleanShutdownFileHandler(str(tmp_path))
    handler.write(10, 0)
    assert handler.exists()
    handler.delete()
    assert not handler.exists()
    assert handler.read() is None


def test_clean_shutdown_file_can_parse_with_unknown_fields(tmp_path):
    """testCleanShutdownFileCanParseWithUnknownFields: unknown JSON fields are ignored."""
    handler = CleanShutdownFileHandler(str(tmp_path))
    with open(handler.clean_shutdown_file, "w", encoding="utf-8") as f:
        f.write('{"version":0,"brokerEpoch":10,"unknown":123}')
    assert handler.exists()
    assert handler.read() == 10
    handler.delete()
    assert not handler.exists()


def test_clean_shutdown_file_without_an_epoch_reads_as_none(tmp_path):
    """CleanShutdownFileHandler.read catches any exception: the empty file LogManager wrote
    before 3.7 exists but holds no broker epoch."""
    handler = CleanShutdownFileHandler(str(tmp_path))
    (tmp_path / ".kafka_cleanshutdown").write_text("")
    assert handler.exists() and handler.read() is None


# -- DelayedFetchTest ---------------------------------------------------------------------------
TOPIC = "topic"
TP = (TOPIC, 0)
MAX_BYTES = 1024
FOLLOWER = 1


class Leader(FakeContext):
    """Broker 0 leading ``topic-0`` (replicas 0 and 1) with a ReplicaManager."""

    def __init__(self, version: str = "3.7") -> None:
        super().__init__(0, kafka_version=version, live_brokers=(0, 1))
        # Kafka's tests mock metadataCache.contains(tp) = true for the topic: a partition not
        # hosted here is NOT_LEADER, not UNKNOWN_TOPIC_OR_PARTITION (2.0+)
        self.metadata.partitions.update({(TOPIC, p): None for p in range(8)})
        self.rm = ReplicaManager()
        self.rm.partitions = self.partitions
        self.replica_manager = self.rm
        self.corr = 0

    def lair(self, epoch: int) -> None:
        st = PartitionState(TOPIC, 0, 1, 0, epoch, (0, 1), epoch, (0, 1))
        self.rm.become_leader_or_follower(self, 9, LeaderAndIsrRequest(9, 1, (st,)))

    def produce(self, n: int) -> None:
        self.corr += 1
        ids = tuple(range(self.corr * 1000, self.corr * 1000 + n))
        self.rm.append_records(self, "p", ProduceRequest(
            self.corr, "p", 1, 1000, ((TOPIC, 0, ids, (10,) * n, -1, -1, -1),)))

    def fetch(self, replica_id: int, offset: int, epoch: int, last_fetched: int = -1) -> int:
        """A fetch with MaxWaitMs 500 and MinBytes 1; the parked DelayedFetch's id."""
        self.corr += 1
        fp = FetchPartition(TOPIC, 0, offset, epoch, last_fetched, 0, MAX_BYTES)
        self.rm.fetch_messages(self, replica_id, FetchRequest(self.corr, replica_id, 500, 1,
                                                              MAX_BYTES, (fp,)))
        (df_id,) = self.rm.delayed_fetch
        return df_id

    def answer(self):
        got = [m for _d, m in self.sent if isinstance(m, FetchResponse)]
        return got[-1].partitions[0] if got else None


def test_fetch_with_fenced_epoch():
    """testFetchWithFencedEpoch: a follower fetch parked at leader epoch 10 completes with
    FENCED_LEADER_EPOCH once the partition's epoch moved past it (Case E)."""
    b = Leader()
    b.lair(10)
    b.produce(500)
    df_id = b.fetch(FOLLOWER, 500, epoch=10)
    b.rm.partitions[TP].leader_epoch = 11   # the mock: fetchOffsetSnapshot throws Fenced...
    assert b.rm.try_complete_fetch(b, df_id)
    assert df_id not in b.rm.delayed_fetch
    assert b.answer().error == E.FENCED_LEADER_EPOCH


def test_not_leader_or_follower():
    """testNotLeaderOrFollower: a parked fetch of a partition this broker no longer hosts
    completes with NOT_LEADER_OR_FOLLOWER (Case A/B)."""
    b = Leader()
    b.lair(10)
    b.produce(500)
    df_id = b.fetch(FOLLOWER, 500, epoch=10)
    del b.rm.partitions[TP]   # the mock: getPartitionOrException throws NotLeaderOrFollower
    assert b.rm.try_complete_fetch(b, df_id)
    assert b.answer().error == E.NOT_LEADER_OR_FOLLOWER


def test_diverging_epoch():
    """testDivergingEpoch: a parked follower fetch at offset 500 with LastFetchedEpoch 9 whose
    leader now ends epoch 9 at 499 completes (Case H, 2.7+); the answer carries no error and
    the diverging epoch."""
    b = Leader()
    b.lair(9)
    b.produce(500)
    b.lair(10)   # the epoch cache: 9 -> 0, 10 -> 500
    df_id = b.fetch(FOLLOWER, 500, epoch=10, last_fetched=9)
    cache = b.rm.partitions[TP].log.leader_epoch_cache
    cache.truncate_from_end(499)   # the mock: lastOffsetForLeaderEpoch(9) ends at 499
    cache.assign(10, 499)
    assert b.rm.try_complete_fetch(b, df_id)
    pd = b.answer()
    assert pd.error == E.NONE and pd.diverging_epoch == (9, 499)


@pytest.mark.parametrize(("version", "completes"), [("3.7", False), ("3.8", True)])
def test_delayed_fetch_with_message_only_high_watermark(version, completes):
    """testDelayedFetchWithMessageOnlyHighWatermark(endOffset=0), KAFKA-16452 (3.8+): a fetch
    whose offset is past the end offset it reads to is completed (Case F). A consumer parked at
    offset 450 whose HW is 0 (a new leader behind its followers) is answered at once from 3.8;
    in 3.7 (one segment) it waits for MaxWaitMs."""
    b = Leader(version)
    b.lair(10)
    b.produce(500)   # LEO 500, HW 0 (the follower has fetched nothing)
    b.corr += 1
    fp = FetchPartition(TOPIC, 0, 450, 10, -1, 0, MAX_BYTES)
    b.rm.fetch_messages(b, "consumer", FetchRequest(b.corr, -1, 500, 1, MAX_BYTES, (fp,)))
    assert (b.answer() is not None) is completes
    assert bool(b.rm.delayed_fetch) is not completes
    if completes:
        pd = b.answer()
        assert pd.error == E.NONE and list(pd.records.ids) == [] and pd.high_watermark == 0
    else:   # a wake-up does not complete it either
        (df_id,) = b.rm.delayed_fetch
        assert not b.rm.try_complete_fetch(b, df_id)


def test_delayed_fetch_on_a_truncated_leader_completes():
    """testDelayedFetchWithMessageOnlyHighWatermark(endOffset=0) for the follower fetch it
    builds: the leader's log end moved below the parked fetch offset (a truncated leader); the
    fetch completes, and the read it answers with is OFFSET_OUT_OF_RANGE (UnifiedLog.read past
    the log end; Kafka's test mocks a read without error)."""
    b = Leader("3.8")
    b.lair(10)
    b.produce(500)
    df_id = b.fetch(FOLLOWER, 500, epoch=10)
    b.rm.partitions[TP].log.truncate_to(0)   # the mock: fetchOffsetSnapshot's LEO is 0
    assert b.rm.try_complete_fetch(b, df_id)
    assert b.answer().error == E.OFFSET_OUT_OF_RANGE


# -- MetadataCacheTest (3.7.0) ------------------------------------------------------------------
PLAINTEXT = "PLAINTEXT"
SSL = "SSL"
BROKER_EPOCH = 0


def _endpoint(listener: str, host: str = "foo", port: int = 9092) -> UpdateMetadataEndpoint:
    return UpdateMetadataEndpoint(port, host, listener, 1 if listener == SSL else 0)


def _umr_broker(broker_id: int, *listeners: str, rack: str | None = None, host: str = "foo"
                ) -> UpdateMetadataBroker:
    return UpdateMetadataBroker(
        broker_id, tuple(_endpoint(ln, host, 9093 if ln == SSL else 9092) for ln in listeners),
        rack)


def _state(topic: str, partition: int, leader: int, leader_epoch: int, isr, replicas,
           zk_version: int = 3, controller_epoch: int = 1) -> PartitionState:
    return PartitionState(topic, partition, controller_epoch, leader, leader_epoch, tuple(isr),
                          zk_version, tuple(replicas))


def _topic_id(topic: str) -> str:
    return f"id-{topic}"


def update_cache(cache, request: UpdateMetadataRequest) -> None:
    """MetadataCacheTest.updateCache: the ZooKeeper cache takes the request; for the KRaft
    cache the request becomes records replayed on an image with the previous topics and no
    brokers (a broker keeps its previous epoch, incarnation and fencing)."""
    if isinstance(cache, ZkMetadataCache):
        if not request.topic_ids:   # the topic states' ids (UpdateMetadata v7+, KIP-516)
            topics = dict.fromkeys(st.topic for st in request.partition_states)
            request.topic_ids = tuple((t, _topic_id(t)) for t in topics)
        cache.update_metadata(0, request)
        return
    old = cache.current_image() or MetadataImage()
    image = MetadataImage()
    image.topic_names, image.topic_ids = dict(old.topic_names), dict(old.topic_ids)
    image.partitions = dict(old.partitions)
    for b in request.live_brokers:
        prev = old.brokers.get(b.id)
        epoch, incarnation, fenced = (prev.epoch, prev.incarnation_id, prev.fenced) \
            if prev is not None else (0, "zero", False)
        end_points = tuple(BrokerEndpoint(e.listener, e.host, e.port, e.security_protocol)
                           for e in b.endpoints)
        image.replay(RegisterBrokerRecord(b.id, epoch, incarnation, b.rack, fenced, False,
                                          end_points), 100)
    for st in request.partition_states:
        topic_id = _topic_id(st.topic)
        image.replay(TopicRecord(st.topic, topic_id), 100)
        if st.leader == -2:
            image.replay(RemoveTopicRecord(topic_id), 100)
        else:
            image.replay(PartitionRecord(st.partition, topic_id, st.replicas, st.isr,
                                         leader=st.leader, leader_epoch=st.leader_epoch,
                                         partition_epoch=st.partition_epoch), 100)
    cache.set_image(image)


def _umr(states, brokers, controller_epoch: int = 1) -> UpdateMetadataRequest:
    return UpdateMetadataRequest(2, controller_epoch, tuple(states), tuple(brokers))


CACHES = [pytest.param(lambda: MetadataCache.zk_metadata_cache(1), id="zk"),
          pytest.param(lambda: MetadataCache.kraft_metadata_cache(1), id="kraft")]


@pytest.mark.parametrize("make_cache", CACHES)
def test_get_topic_metadata_non_existing_topics(make_cache):
    """getTopicMetadataNonExistingTopics: an unknown topic is left out of the answer."""
    assert make_cache().get_topic_metadata({"topic"}, PLAINTEXT) == []


@pytest.mark.parametrize("make_cache", CACHES)
def test_get_topic_metadata(make_cache):
    """getTopicMetadata: on either listener, every partition's leader, leader epoch, ISR and
    replicas as the UpdateMetadata gave them, without error."""
    cache = make_cache()
    brokers = [_umr_broker(b, PLAINTEXT, SSL, rack="rack1", host=f"foo-{b}") for b in range(5)]
    states = [_state("topic-0", 0, 0, 0, (0, 1, 3), (0, 1, 3)),
              _state("topic-0", 1, 1, 1, (1, 0), (1, 2, 0, 4)),
              _state("topic-1", 0, 2, 2, (2, 1), (2, 1, 3))]
    update_cache(cache, _umr(states, brokers))
    for listener in (PLAINTEXT, SSL):
        for topic in ("topic-0", "topic-1"):
            (md,) = cache.get_topic_metadata([topic], listener)
            assert md.error_code == E.NONE and md.name == topic
            assert md.topic_id == _topic_id(topic)
            expected = [st for st in states if st.topic == topic]
            assert len(md.partitions) == len(expected)
            for pm, st in zip(md.partitions, expected, strict=True):
                assert pm.error_code == E.NONE and pm.partition_index == st.partition
                assert (pm.leader_id, pm.leader_epoch) == (st.leader, st.leader_epoch)
                assert pm.isr_nodes == st.isr and pm.replica_nodes == st.replicas


def _verify_leader_or_endpoint_not_available(cache, brokers, listener: str, leader: int,
                                             expected: str, error_unavailable_listeners: bool):
    """verifyTopicMetadataPartitionLeaderOrEndpointNotAvailable."""
    update_cache(cache, _umr([_state("topic", 0, leader, 1, (0,), (0,))], brokers))
    (md,) = cache.get_topic_metadata(["topic"], listener,
                                     error_unavailable_listeners=error_unavailable_listeners)
    assert md.error_code == E.NONE
    (pm,) = md.partitions
    assert pm.partition_index == 0 and pm.error_code == expected
    assert pm.leader_id == -1
    assert pm.isr_nodes and pm.replica_nodes == (0,)


@pytest.mark.parametrize("make_cache", CACHES)
def test_get_topic_metadata_partition_leader_not_available(make_cache):
    """getTopicMetadataPartitionLeaderNotAvailable: a leader (1) not alive is
    LEADER_NOT_AVAILABLE whatever the Metadata version."""
    cache = make_cache()
    brokers = [_umr_broker(0, PLAINTEXT)]
    for flag in (False, True):
        _verify_leader_or_endpoint_not_available(cache, brokers, PLAINTEXT, 1,
                                                 E.LEADER_NOT_AVAILABLE, flag)


@pytest.mark.parametrize("make_cache", CACHES)
def test_get_topic_metadata_partition_listener_not_available_on_leader(make_cache):
    """getTopicMetadataPartitionListenerNotAvailableOnLeader: a leader alive without the
    request's listener is LISTENER_NOT_FOUND (Metadata v6+), else LEADER_NOT_AVAILABLE."""
    cache = make_cache()
    brokers = [_umr_broker(0, PLAINTEXT, SSL, host="host0"), _umr_broker(1, PLAINTEXT,
                                                                         host="host1")]
    _verify_leader_or_endpoint_not_available(cache, brokers, SSL, 1, "LISTENER_NOT_FOUND", True)
    _verify_leader_or_endpoint_not_available(cache, brokers, SSL, 1, E.LEADER_NOT_AVAILABLE,
                                             False)


@pytest.mark.parametrize("make_cache", CACHES)
def test_get_topic_metadata_replica_not_available(make_cache):
    """getTopicMetadataReplicaNotAvailable: replica 1 is not alive. Metadata v1+ lists it, no
    error; v0 (errorUnavailableEndpoints) leaves it out and answers REPLICA_NOT_AVAILABLE."""
    cache = make_cache()
    update_cache(cache, _umr([_state("topic", 0, 0, 0, (0,), (0, 1))],
                             [_umr_broker(0, PLAINTEXT)]))
    (md,) = cache.get_topic_metadata(["topic"], PLAINTEXT, error_unavailable_endpoints=False)
    (pm,) = md.partitions
    assert md.error_code == E.NONE and pm.error_code == E.NONE
    assert set(pm.replica_nodes) == {0, 1} and set(pm.isr_nodes) == {0}
    (md,) = cache.get_topic_metadata(["topic"], PLAINTEXT, error_unavailable_endpoints=True)
    (pm,) = md.partitions
    assert md.error_code == E.NONE and pm.error_code == "REPLICA_NOT_AVAILABLE"
    assert set(pm.replica_nodes) == {0} and set(pm.isr_nodes) == {0}


@pytest.mark.parametrize("make_cache", CACHES)
def test_get_topic_metadata_isr_not_available(make_cache):
    """getTopicMetadataIsrNotAvailable: ISR member 1 is not alive: listed in v1+, left out
    with REPLICA_NOT_AVAILABLE in v0."""
    cache = make_cache()
    update_cache(cache, _umr([_state("topic", 0, 0, 0, (0, 1), (0,))],
                             [_umr_broker(0, PLAINTEXT, rack="rack1")]))
    (md,) = cache.get_topic_metadata(["topic"], PLAINTEXT, error_unavailable_endpoints=False)
    (pm,) = md.partitions
    assert pm.error_code == E.NONE
    assert set(pm.replica_nodes) == {0} and set(pm.isr_nodes) == {0, 1}
    (md,) = cache.get_topic_metadata(["topic"], PLAINTEXT, error_unavailable_endpoints=True)
    (pm,) = md.partitions
    assert pm.error_code == "REPLICA_NOT_AVAILABLE"
    assert set(pm.replica_nodes) == {0} and set(pm.isr_nodes) == {0}


@pytest.mark.parametrize("make_cache", CACHES)
def test_get_topic_metadata_with_non_supported_security_protocol(make_cache):
    """getTopicMetadataWithNonSupportedSecurityProtocol: asked on SSL, a leader with only
    PLAINTEXT is no leader (-1)."""
    cache = make_cache()
    update_cache(cache, _umr([_state("topic", 0, 0, 0, (0, 1), (0,))],
                             [_umr_broker(0, PLAINTEXT, rack="")]))
    (md,) = cache.get_topic_metadata(["topic"], SSL)
    (pm,) = md.partitions
    assert pm.leader_id == -1


@pytest.mark.parametrize("make_cache", CACHES)
def test_get_alive_brokers_should_not_be_mutated_by_update_cache(make_cache):
    """getAliveBrokersShouldNotBeMutatedByUpdateCache: the alive brokers read before an update
    stay as they were."""
    cache = make_cache()

    def update(broker_ids):
        update_cache(cache, _umr([_state("topic", 0, 0, 0, (0, 1), (0,))],
                                 [_umr_broker(b, PLAINTEXT, rack="") for b in broker_ids]))

    update(range(3))
    alive = cache.get_alive_brokers()
    update(range(4))
    assert {b.id for b in alive} == {0, 1, 2}
    assert {b.id for b in cache.get_alive_brokers()} == {0, 1, 2, 3}


def _register(image: MetadataImage, broker_id: int, *, epoch: int = 0, fenced: bool = False,
              shutdown: bool = False, end_points=None) -> None:
    image.replay(RegisterBrokerRecord(broker_id, epoch, "zero", None, fenced, shutdown,
                                      end_points), 0)


def test_is_broker_fenced():
    """testIsBrokerFenced: a BrokerRegistrationChangeRecord fencing broker 0 shows in the next
    image."""
    cache = MetadataCache.kraft_metadata_cache(0)
    image = MetadataImage()
    _register(image, 0, fenced=False)
    cache.set_image(image)
    assert not cache.is_broker_fenced(0)
    image.replay(BrokerRegistrationChangeRecord(0, 0, fenced=1), 1)
    cache.set_image(image)
    assert cache.is_broker_fenced(0)


def test_get_alive_brokers_with_broker_fenced():
    """testGetAliveBrokersWithBrokerFenced: a fenced broker is not alive and has no node."""
    cache = MetadataCache.kraft_metadata_cache(0)
    image = MetadataImage()
    end_points = (BrokerEndpoint("listener", "foo", 123, 0),)
    _register(image, 0, end_points=end_points)
    _register(image, 1, end_points=end_points)
    image.replay(BrokerRegistrationChangeRecord(1, 0, fenced=1), 1)
    cache.set_image(image)
    assert not cache.is_broker_fenced(0) and cache.is_broker_fenced(1)
    alive = {b.id for b in cache.get_alive_brokers()}
    for broker_id, registration in image.brokers.items():
        assert (broker_id in alive) is (not registration.fenced)
        assert (broker_id in alive) is (cache.get_alive_broker_node(broker_id, "listener")
                                        is not None)
    assert cache.get_alive_broker_node(0, "listener") == Node(0, "foo", 123, None)


def test_is_broker_in_controlled_shutdown():
    """testIsBrokerInControlledShutdown: a change record puts broker 0 in controlled
    shutdown; it stays alive (unfenced)."""
    cache = MetadataCache.kraft_metadata_cache(0)
    image = MetadataImage()
    _register(image, 0, shutdown=False)
    cache.set_image(image)
    assert not cache.is_broker_shutting_down(0)
    image.replay(BrokerRegistrationChangeRecord(0, 0, in_controlled_shutdown=1), 1)
    cache.set_image(image)
    assert cache.is_broker_shutting_down(0)
    assert cache.has_alive_broker(0) and 0 not in cache.live_brokers   # not ISR-eligible


def test_get_live_broker_epoch():
    """testGetLiveBrokerEpoch: an unfenced broker's epoch; none for a fenced one."""
    cache = MetadataCache.kraft_metadata_cache(0)
    image = MetadataImage()
    _register(image, 0, epoch=100, fenced=False)
    _register(image, 1, epoch=101, fenced=True)
    cache.set_image(image)
    assert cache.get_alive_broker_epoch(0) == 100
    assert cache.get_alive_broker_epoch(1) is None


@pytest.mark.parametrize("make_cache", CACHES)
def test_get_partition_info(make_cache):
    """testGetPartitionInfo: the cached partition state; the KRaft cache has no controller
    epoch (-1)."""
    cache = make_cache()
    st = _state("topic", 0, 0, 0, (2, 3, 0), (2, 3, 0, 1, 4), zk_version=3)
    update_cache(cache, _umr([st], [_umr_broker(0, PLAINTEXT, rack="rack1")]))
    info = cache.get_partition_info("topic", 0)
    assert (info.topic, info.partition) == ("topic", 0)
    assert info.controller_epoch == (1 if isinstance(cache, ZkMetadataCache) else -1)
    assert (info.leader, info.leader_epoch) == (0, 0)
    assert info.isr == (2, 3, 0) and info.replicas == (2, 3, 0, 1, 4)
    assert info.partition_epoch == 3
    assert cache.get_partition_info("topic", 1) is None
    assert cache.contains("topic") and cache.contains(("topic", 0))
    assert not cache.contains(("topic", 1)) and not cache.contains("other")


# -- the caches' sources (no MetadataCacheTest case of their own) -------------------------------
@pytest.mark.parametrize("make_cache", CACHES)
def test_get_partition_replica_endpoints(make_cache):
    """ZkMetadataCache / KRaftMetadataCache.getPartitionReplicaEndpoints (what
    ReplicaManagerTest mocks for the replica selector): the replicas alive with the listener.
    ZooKeeper: of the partition; KRaft: unfenced, of every partition of the topic."""
    cache = make_cache()
    update_cache(cache, _umr([_state("t", 0, 0, 0, (0, 1), (0, 1, 2)),
                              _state("t", 1, 3, 0, (3,), (3,))],
                             [_umr_broker(b, PLAINTEXT, rack=f"r{b}") for b in (0, 1, 3)]
                             + [_umr_broker(4, SSL)]))
    endpoints = cache.get_partition_replica_endpoints(("t", 0), PLAINTEXT)
    expected = {0, 1} if isinstance(cache, ZkMetadataCache) else {0, 1, 3}
    assert set(endpoints) == expected
    assert endpoints[1] == Node(1, "foo", 9092, "r1")
    assert cache.get_partition_replica_endpoints(("missing", 0), PLAINTEXT) == {}


def test_kraft_replica_endpoints_skip_fenced_but_keep_shutting_down_brokers():
    """KRaftMetadataCache.getPartitionReplicaEndpoints skips a fenced broker only: a broker in
    controlled shutdown keeps its endpoint (and stays in the Metadata answer's brokers)."""
    cache = MetadataCache.kraft_metadata_cache(0)
    image = MetadataImage()
    for b in (0, 1, 2):
        _register(image, b)
    image.replay(TopicRecord("t", "id-t"), 0)
    image.replay(PartitionRecord(0, "id-t", (0, 1, 2), (0, 1, 2), leader=0), 0)
    image.replay(BrokerRegistrationChangeRecord(1, 0, fenced=1), 1)
    image.replay(BrokerRegistrationChangeRecord(2, 0, in_controlled_shutdown=1), 1)
    cache.set_image(image)
    assert set(cache.get_partition_replica_endpoints(("t", 0), PLAINTEXT)) == {0, 2}
    assert [n.id for n in cache.get_alive_broker_nodes(PLAINTEXT)] == [0, 2]
    (md,) = cache.get_topic_metadata(["t"], PLAINTEXT)
    assert md.partitions[0].offline_replicas == (1,)


def test_update_metadata_removes_partitions_of_a_deleted_topic():
    """ZkMetadataCache.updateMetadata: a partition state whose leader is LeaderDuringDelete
    (-2) removes the partition; the deleted partitions are returned; the live brokers are
    replaced by the request's."""
    cache = ZkMetadataCache(1)
    assert cache.update_metadata(0, _umr([_state("t", 0, 0, 1, (0, 1), (0, 1)),
                                          _state("t", 1, 1, 1, (0, 1), (0, 1))], [0, 1])) == []
    assert cache.get_all_topics() == {"t"} and cache.live_brokers == (0, 1)
    deleted = cache.update_metadata(0, _umr([_state("t", 0, -2, 1, (0, 1), (0, 1))], [0]))
    assert deleted == [("t", 0)]
    assert cache.get_topic_partitions("t") == {("t", 1)}
    assert cache.live_brokers == (0,) and not cache.has_alive_broker(1)
    assert cache.get_alive_broker_node(0, PLAINTEXT) == Node(0, "localhost", 9092, None)


def test_update_metadata_from_an_older_controller_epoch_is_refused():
    """ReplicaManager.maybeUpdateMetadataCache: an UpdateMetadata of an older controller epoch
    than the broker knows changes nothing (ControllerMovedException: STALE_CONTROLLER_EPOCH)."""
    broker = SimpleNamespace(metadata=ZkMetadataCache(1))
    handle_update_metadata_request(broker, 2, _umr([_state("t", 0, 0, 5, (0,), (0,))], [0], 5))
    assert broker.metadata.controller_epoch == 5 and broker.metadata.controller_id == 2
    handle_update_metadata_request(broker, 3, _umr([_state("t", 0, 1, 6, (1,), (1,))], [1], 4))
    assert broker.metadata.get_partition_info("t", 0).leader == 0
    assert broker.metadata.live_brokers == (0,)
