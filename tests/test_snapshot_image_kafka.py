"""A KRaft snapshot holds the metadata image written as records, not the log prefix (KIP-630).

Ports cases of metadata/src/test/java/org/apache/kafka/image/MetadataImageTest.java,
FeaturesImageTest.java, ClusterImageTest.java, TopicsImageTest.java,
ConfigurationsImageTest.java and ImageDowngradeTest.java (apache/kafka 3.9.0-rc3; the write
order of MetadataImage.java:150 is the same at 4.3.0, a9ce322153), against
``kafkasim.control.kraft.image`` (``MetadataImage.write``, ``ImageWriterOptions``) and
``raft_snapshots.snapshot_records``; then the simulated cluster: what a generated snapshot
holds, and that loading it then replaying the log after it gives the state replaying the whole
log gives.

Adaptation: kafkasim's image has features, brokers, topics / partitions and configs (no client
quotas, producer ids, ACLs, SCRAM, delegation tokens or controller registrations), so the
IMAGE1 / DELTA1 fixtures are built from those records only; "round trip" compares the image's
state (``_state``), since kafkasim's MetadataImage has no equals; the intermediate-image walk
of RecordTestUtils.TestThroughAllIntermediateImagesLeadingToFinalImageHelper is the replay of
every prefix of the records.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft import metadata_version as MV
from kafkasim.control.kraft import raft_snapshots as RS
from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.image import ImageWriterOptions, MetadataImage, load_snapshot
from kafkasim.control.kraft.records import UnwritableMetadataException

FOO, BAR, BAZ = "5JPuABiJTPu2pQjpZWM6_A", "f62ptyETTjet8SL5ZeREiw", "tgHBnRglT5W_RlENnuG5vg"
EP = (R.BrokerEndpoint("PLAINTEXT", "localhost", 9092, 0),)


def _replay(records, image=None) -> MetadataImage:
    image = image or MetadataImage()
    for i, record in enumerate(records):
        image.replay(record, i)
    return image


def _state(image: MetadataImage):
    """What an image holds (configs without the empty resources a deletion leaves)."""
    return (dict(image.topic_names), dict(image.topic_ids), dict(image.partitions),
            dict(image.brokers), {k: dict(v) for k, v in image.configs.items() if v},
            dict(image.features))


IMAGE1_RECORDS = [
    R.FeatureLevelRecord("metadata.version", MV.IBP_4_0_IV1.feature_level),
    R.FeatureLevelRecord("foo.feature", 2),
    R.RegisterBrokerRecord(2, 123, "QkOQtNKVTYatADcaJ28xDg", "arack", True, False, EP),
    R.RegisterBrokerRecord(0, 1000, "vZKYST0pSA2HO5x_6hoO2Q", None, False, False),
    R.RegisterBrokerRecord(1, 1001, "U52uRe20RsGI0RvpcTx33Q", None, False, False),
    R.BrokerRegistrationChangeRecord(1, 1001, in_controlled_shutdown=R
                                     .BrokerRegistrationInControlledShutdownChange
                                     .IN_CONTROLLED_SHUTDOWN),
    R.TopicRecord("foo", FOO),
    R.PartitionRecord(0, FOO, (2, 3, 4), (2, 3), leader=2, leader_epoch=1, partition_epoch=345),
    R.PartitionRecord(1, FOO, (3, 4, 5), (3, 4, 5), leader=3, leader_epoch=4,
                      partition_epoch=890),
    R.TopicRecord("bar", BAR),
    R.PartitionRecord(0, BAR, (0, 1, 2), (0, 1, 2), leader=0),
    R.PartitionChangeRecord(0, BAR, isr=(0,), eligible_leader_replicas=(1, 2)),
    R.ConfigRecord("BROKER", "0", "foo", "bar"),
    R.ConfigRecord("BROKER", "0", "baz", "quux"),
    R.ConfigRecord("TOPIC", "foo", "retention.ms", "1000"),
    R.ConfigRecord("BROKER", "0", "baz", None),
    R.NoOpRecord(),
]

DELTA1_RECORDS = [
    R.FeatureLevelRecord("foo.feature", 3),
    R.BrokerRegistrationChangeRecord(2, 123, fenced=R.BrokerRegistrationFencingChange.UNFENCE),
    R.UnregisterBrokerRecord(0, 1000),
    R.RemoveTopicRecord(BAR),
    R.TopicRecord("baz", BAZ),
    R.PartitionRecord(0, BAZ, (1, 2), (1, 2), leader=1),
    R.PartitionChangeRecord(1, FOO, leader=4, isr=(4, 5)),
    R.ConfigRecord("TOPIC", "foo", "retention.ms", None),
]


def _written(image: MetadataImage, mv=None, losses=None) -> list:
    options = ImageWriterOptions.for_image(image) if mv is None else \
        ImageWriterOptions(mv, None if losses is None else (lambda e: losses.append(e.loss)))
    return image.write(options)


# --- MetadataImageTest ---------------------------------------------------------------------------
def test_empty_image_round_trip():
    """MetadataImageTest.testEmptyImageRoundTrip@3.9.0-rc3: an empty image writes nothing (its
    metadata.version, MINIMUM_KRAFT_VERSION, has no FeatureLevelRecord) and replays to
    itself."""
    assert MetadataImage().write() == []
    assert _state(_replay(MetadataImage().write())) == _state(MetadataImage())


def test_image1_round_trip():
    """MetadataImageTest.testImage1RoundTrip@3.9.0-rc3 (TestThroughAllIntermediateImages...):
    the image written as records and replayed into an empty image is the image again, and so
    is every intermediate image along the records."""
    for n in range(len(IMAGE1_RECORDS) + 1):
        image = _replay(IMAGE1_RECORDS[:n])
        assert _state(_replay(image.write())) == _state(image), n


def test_apply_delta1():
    """MetadataImageTest.testApplyDelta1@3.9.0-rc3: image1's records plus delta1's give image2,
    and image2's own records give the same image."""
    image2 = _replay(IMAGE1_RECORDS + DELTA1_RECORDS)
    from_image1 = _replay(_replay(IMAGE1_RECORDS).write() + DELTA1_RECORDS)
    assert _state(from_image1) == _state(image2)
    assert _state(_replay(image2.write())) == _state(image2)
    assert "bar" not in image2.topic_ids and 0 not in image2.brokers


def test_image2_round_trip():
    """MetadataImageTest.testImage2RoundTrip@3.9.0-rc3."""
    image2 = _replay(IMAGE1_RECORDS + DELTA1_RECORDS)
    assert _state(_replay(image2.write())) == _state(image2)


def test_write_order_is_features_cluster_topics_configs():
    """MetadataImage.write@3.9.0-rc3 (MetadataImage.java:150, the same @4.3.0): features,
    cluster, topics, configurations -- and nothing of the log-only records (NoOpRecord) nor of
    the overridden ones (the BrokerRegistrationChangeRecord, PartitionChangeRecord and the
    deleted config are folded in)."""
    kinds = [type(r).__name__ for r in _replay(IMAGE1_RECORDS).write()]
    assert kinds == ["FeatureLevelRecord"] * 2 + ["RegisterBrokerRecord"] * 3 + [
        "TopicRecord", "PartitionRecord", "PartitionRecord", "TopicRecord", "PartitionRecord",
        "ConfigRecord", "ConfigRecord"]


# --- FeaturesImageTest / ClusterImageTest / TopicsImageTest / ConfigurationsImageTest ----------
def test_features_image_writes_metadata_version_first():
    """FeaturesImage.writeFeatureLevels@3.9.0-rc3 (FeaturesImageTest.testImage1RoundTrip): the
    metadata.version record first, "because it may have an impact on how we decode records
    that come after it", at the level of the options' metadata.version."""
    records = _replay([R.FeatureLevelRecord("foo.feature", 2),
                       R.FeatureLevelRecord("metadata.version", 21)]).write()
    assert records == [R.FeatureLevelRecord("metadata.version", 21),
                       R.FeatureLevelRecord("foo.feature", 2)]


def test_cluster_image_round_trip():
    """ClusterImageTest.testImage1RoundTrip@3.9.0-rc3: one RegisterBrokerRecord per broker, by
    broker id, with its epoch, incarnation, rack, listeners and its fencing and controlled
    shutdown state as they are now (the change records folded in)."""
    records = [r for r in _replay(IMAGE1_RECORDS).write() if type(r) is R.RegisterBrokerRecord]
    assert [r.broker_id for r in records] == [0, 1, 2]
    assert records[1] == R.RegisterBrokerRecord(1, 1001, "U52uRe20RsGI0RvpcTx33Q", None, False,
                                                True)
    assert records[2] == R.RegisterBrokerRecord(2, 123, "QkOQtNKVTYatADcaJ28xDg", "arack",
                                                True, False, EP)


def test_topics_image_round_trip():
    """TopicsImageTest.testImage1RoundTrip@3.9.0-rc3 (TopicImage.write): each topic's
    TopicRecord, then a PartitionRecord per partition holding the current registration --
    leader and partition epochs included, so the epochs go on from where they were."""
    records = _replay(IMAGE1_RECORDS).write()
    bar = records[records.index(R.TopicRecord("bar", BAR)) + 1]
    assert bar == R.PartitionRecord(0, BAR, (0, 1, 2), (0,), leader=0, leader_epoch=0,
                                    partition_epoch=1, eligible_leader_replicas=(1, 2))


def test_configurations_image_round_trip():
    """ConfigurationsImageTest.testImage1RoundTrip@3.9.0-rc3 (ConfigurationImage.write): a
    ConfigRecord per key that is set, per resource; a deleted key writes nothing."""
    configs = [r for r in _replay(IMAGE1_RECORDS).write() if type(r) is R.ConfigRecord]
    assert configs == [R.ConfigRecord("BROKER", "0", "foo", "bar"),
                       R.ConfigRecord("TOPIC", "foo", "retention.ms", "1000")]


# --- ImageDowngradeTest ------------------------------------------------------------------------
def test_premodern_version():
    """ImageDowngradeTest.testPremodernVersion@3.9.0-rc3: written for 3.2-IV0 (no
    FeatureLevelRecord) the feature flags are lost, the topic is not."""
    losses: list = []
    image = _replay([R.FeatureLevelRecord("metadata.version", MV.IBP_3_3_IV0.feature_level),
                     R.TopicRecord("foo", FOO), R.PartitionRecord(0, FOO, (0, 1), (0, 1), leader=0,
                                                                  leader_epoch=1,
                                                                  partition_epoch=2),
                     R.FeatureLevelRecord("foo.feature", 4)])
    records = _written(image, MV.IBP_3_2_IV0, losses)
    assert losses == ["feature flag(s): foo.feature"]
    assert [type(r).__name__ for r in records] == ["TopicRecord", "PartitionRecord"]


def test_pre_controlled_shutdown_state_version():
    """ImageDowngradeTest.testPreControlledShutdownStateVersion@3.9.0-rc3: written for 3.3-IV2
    the in-controlled-shutdown state is lost; without a loss handler that is an
    UnwritableMetadataException (ImageWriterOptions' default)."""
    image = _replay([R.FeatureLevelRecord("metadata.version", MV.IBP_3_3_IV3.feature_level),
                     R.RegisterBrokerRecord(123, 456, "XgjKo16hRWeWrTui0iR5Nw", None, False, True)])
    losses: list = []
    records = _written(image, MV.IBP_3_3_IV2, losses)
    assert losses == ["the inControlledShutdown state of one or more brokers"]
    assert records == [R.FeatureLevelRecord("metadata.version", MV.IBP_3_3_IV2.feature_level),
                       R.RegisterBrokerRecord(123, 456, "XgjKo16hRWeWrTui0iR5Nw", None, False,
                                              False)]
    with pytest.raises(UnwritableMetadataException, match="metadata.version 3.3-IV2"):
        _written(image, MV.IBP_3_3_IV2)


def test_elr_is_written_from_4_0_iv1():
    """PartitionRegistration.toRecord@3.9.0-rc3: the ELR fields only when the metadata.version
    supports them (isElrSupported, 4.0-IV1); below, left out without a loss."""
    image = _replay(IMAGE1_RECORDS)
    old = [r for r in _written(image, MV.IBP_3_3_IV3, []) if type(r) is R.PartitionRecord]
    assert all(r.eligible_leader_replicas == () for r in old)
    new = [r for r in image.write() if type(r) is R.PartitionRecord]
    assert any(r.eligible_leader_replicas == (1, 2) for r in new)


def test_load_snapshot_reports_what_changed_and_what_is_gone():
    """MetadataLoader loading a snapshot onto an older image (MetadataDelta.finishSnapshot):
    the topics the snapshot does not have are deleted, the others' changed partitions
    reported."""
    image = _replay(IMAGE1_RECORDS)
    target = _replay(IMAGE1_RECORDS + DELTA1_RECORDS)
    changed, deleted = load_snapshot(image, [(99, 1, r) for r in target.write()])
    assert deleted == [("bar", 0)]
    assert changed == [("foo", 1), ("baz", 0)]
    assert _state(image) == _state(target) and image.offset == 99


# --- snapshot_records and the cluster -----------------------------------------------------------
def test_snapshot_records_are_control_records_then_the_image():
    """RecordsSnapshotWriter@3.9.0-rc3: after the header the latest KRaftVersionRecord and
    VotersRecord, then the image (SnapshotEmitter: image.write)."""
    from kafkasim.control.kraft.voter_set import KRaftVersionRecord, VotersRecord

    voters = VotersRecord(())
    entries = [(0, 1, KRaftVersionRecord(1)), (1, 1, voters)] + \
        [(i + 2, 1, r) for i, r in enumerate(IMAGE1_RECORDS)]
    records = RS.snapshot_records(entries)
    assert records[:2] == [KRaftVersionRecord(1), voters]
    assert records[2:] == _replay(IMAGE1_RECORDS).write()


def _cluster(**config):
    from kafkasim.runtime.cluster import Cluster

    return Cluster(brokers=3, seed=1, kafka_version="4.3", config=config)


def _controller_state(controller):
    rc, cc = controller.replication_control, controller.cluster_control
    return ({t: dict(v) for t, v in sorted(rc.topics().items())},
            dict(sorted(cc.broker_registrations.items())),
            controller.feature_control.metadata_version())


def test_generated_snapshot_holds_the_image_and_is_its_size():
    """A snapshot SnapshotGenerator writes holds the image's records in Kafka's order -- not
    the log below it: no NoOpRecord, no PartitionChangeRecord -- and its size is theirs."""
    c = _cluster(**{"metadata.log.max.snapshot.interval.ms": 2000})
    c.create_topic("t", 3, 3)
    c.run(6000)
    node = c.kraft.nodes[3000]
    snap = node.raft.log.latest_snapshot()
    kinds = [type(r).__name__ for r in snap.records]
    assert "NoOpRecord" not in kinds and "PartitionChangeRecord" not in kinds
    assert kinds.index("FeatureLevelRecord") < kinds.index("RegisterBrokerRecord") < \
        kinds.index("TopicRecord") < kinds.index("PartitionRecord")
    assert kinds.count("RegisterBrokerRecord") == 3 and kinds.count("PartitionRecord") == 3
    prefix = node.raft.log.entries_between(0, snap.snapshot_id.offset)
    assert len(snap.records) < len(prefix)
    assert snap.size_in_bytes == RS.entries_size_in_bytes(snap.records) < \
        RS.entries_size_in_bytes(prefix)


def test_snapshot_plus_suffix_replays_as_the_whole_log():
    """Loading the latest snapshot then replaying the log after it gives the state replaying
    the whole log gives: the image (MetadataImage) and a controller's managers
    (QuorumController.handleLoadSnapshot then handleCommit)."""
    from kafkasim.control.kraft.quorum_controller import QuorumController

    c = _cluster(**{"metadata.log.max.snapshot.interval.ms": 2000})
    c.create_topic("t", 3, 3)
    c.run(3000)
    c.brokers[2].crash()
    c.run(12_000)
    node = c.kraft.nodes[3001]
    log, hw = node.raft.log, node.raft.high_watermark
    assert log.start_offset == 0
    ids = sorted(log.snapshots)
    assert len(ids) >= 2 and 0 < ids[0].offset < hw
    whole = log.entries_between(0, hw)
    ctl = node.controller
    a = QuorumController(ctl.node_id, ctl.make_managers, dict(ctl.config))
    a._rebuild(whole)
    for sid in ids:
        loaded = [(sid.offset - 1, sid.epoch, r) for r in log.read_snapshot(sid).records] + \
            log.entries_between(sid.offset, hw)
        assert _state(_replay([e[2] for e in whole])) == \
            _state(_replay([e[2] for e in loaded])), sid
        b = QuorumController(ctl.node_id, ctl.make_managers, dict(ctl.config))
        b._rebuild(loaded)
        assert _controller_state(a) == _controller_state(b), sid
        assert a.applied == b.applied == hw - 1


def test_far_behind_voter_loads_the_image_and_matches_the_active_controller():
    """A voter brought back with FetchSnapshot past retention loads the image the snapshot
    holds, then the log after it: its controller state is the active controller's."""
    c = _cluster(**{"metadata.log.max.snapshot.interval.ms": 2000,
                    "metadata.max.retention.bytes": 1})
    c.create_topic("t", 2, 3)
    c.run(3000)
    lagging = c.kraft.nodes[3002]
    lagging.crash()
    c.create_topic("u", 1, 3)
    c.run(130_000)
    lagging.start()
    c.run(5000)
    assert lagging.raft.log.start_offset > 0
    active = c.kraft.active().controller
    assert _controller_state(lagging.controller) == _controller_state(active)
    assert set(lagging.controller.replication_control.topics()) >= {"t", "u"}
