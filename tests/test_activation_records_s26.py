"""The running KRaft controller's activation records (issue 29: one copy of every rule, and it
runs): ``QuorumController.complete_activation`` calls ``ActivationRecordsGenerator.generate``
(kafkasim.control.kraft.activation_records), the only copy of Kafka's rules, and every reader of
the metadata log treats KIP-868's transaction records as Kafka's MetadataBatchLoader does.

- ActivationRecordsGeneratorTest.testActivationMessageForEmptyLog @3.9.0-rc3 (the ZK migration
  cases kafkasim can take: no migration, zookeeper.metadata.migration.enable false).
- A running cluster's metadata log by release (QuorumController.CompleteActivationEvent @3.4.0,
  generateActivationRecords @3.5.0, ActivationRecordsGenerator @3.6.0 .. @4.4 f86720838c).
- A controller failover with a metadata transaction left open: the new active controller aborts
  it (recordsForNonEmptyLog), no reader ever published its records, and the controller's state
  reverts (OffsetControlManager.replay, revertToSnapshot).
- ``offset_control.metadata_transactions`` / ``published_entries`` (MetadataBatchLoader.replay /
  maybeFlushBatches @3.9.0-rc3, unchanged @4.4).

Editing ``records_for_empty_log`` changes a default run: tests/test_rule_edits.py.

Scenarios are Kafka's; code is our own.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.activation_records import (
    ActivationRecordsGenerator,
    BootstrapMetadata,
)
from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.offset_control import (
    metadata_transactions,
    published_end,
    published_entries,
)
from kafkasim.runtime.cluster import Cluster


def _kinds(records) -> list[str]:
    return [type(r).__name__ for r in records]


# -- ActivationRecordsGeneratorTest.testActivationMessageForEmptyLog @3.9.0-rc3 ---------------
@pytest.mark.parametrize(("mv", "offset", "count", "message"), [
    ("3.4-IV0", -1, 1, "Performing controller activation. The metadata log appears to be empty. "
     "Appending 1 bootstrap record(s) at metadata.version 3.4-IV0 from bootstrap source 'test'."),
    ("3.6-IV1", -1, 4, "Performing controller activation. The metadata log appears to be empty. "
     "Appending 1 bootstrap record(s) in metadata transaction at metadata.version 3.6-IV1 from "
     "bootstrap source 'test'. Setting the ZK migration state to NONE since this is a de-novo "
     "KRaft cluster."),
    ("3.6-IV1", 0, 5, "Performing controller activation. Aborting partial bootstrap records "
     "transaction at offset 0. Re-appending 1 bootstrap record(s) in new metadata transaction at "
     "metadata.version 3.6-IV1 from bootstrap source 'test'. Setting the ZK migration state to "
     "NONE since this is a de-novo KRaft cluster."),
])
def test_activation_message_for_empty_log_3_9(mv, offset, count, message):
    """ActivationRecordsGeneratorTest.testActivationMessageForEmptyLog @3.9.0-rc3 (the
    zkMigrationEnabled=false cases): at 3.4-IV0 no ZkMigrationStateRecord (KAFKA-17457: 3.9
    writes it only with metadata transactions), at 3.6-IV1 Begin, the record, NONE, End."""
    version = MetadataVersion.parse(mv)
    seen = []
    result = ActivationRecordsGenerator.records_for_empty_log(
        seen.append, offset, BootstrapMetadata.from_version(version, "test"), version, 1,
        kafka_version="3.9")
    assert seen == [message]
    assert len(result.records) == count
    assert result.is_atomic is (count == 1)
    if count > 1:
        assert R.ZkMigrationStateRecord(R.ZkMigrationState.NONE) in result.records


@pytest.mark.parametrize(("kafka_version", "writes"), [
    ("3.4", False), ("3.5", True), ("3.8", True), ("3.9", False), ("4.0", False)])
def test_zk_migration_state_at_3_4_iv0_by_release(kafka_version, writes):
    """A 3.4-IV0 bootstrap: 3.5 - 3.8 write ZkMigrationStateRecord NONE (isMigrationSupported,
    QuorumController.generateActivationRecords @3.5.0, ActivationRecordsGenerator @3.8.0); 3.9
    does not (KAFKA-17457); 3.4 and 4.x never do."""
    version = MetadataVersion.parse("3.4-IV0")
    result = ActivationRecordsGenerator.records_for_empty_log(
        lambda _m: None, -1, BootstrapMetadata.from_version(version, "test"), version, 1,
        kafka_version=kafka_version)
    assert ("ZkMigrationStateRecord" in _kinds(result.records)) is writes


def test_non_empty_log_message_3_9():
    """recordsForNonEmptyLog @3.9.0-rc3: the ZK migration state of a cluster created in KRaft
    mode is logged; nothing is written."""
    seen = []
    result = ActivationRecordsGenerator.records_for_non_empty_log(
        seen.append, -1, MetadataVersion.parse("3.9-IV0"), kafka_version="3.9")
    assert result.records == [] and result.is_atomic
    assert seen == ["Performing controller activation. Loaded ZK migration state of NONE. This "
                    "is expected because this is a de-novo KRaft cluster."]


# -- a running cluster's metadata log, by release ----------------------------------------------
LAYOUT = {
    "3.3": ["FeatureLevelRecord"],
    "3.4": ["FeatureLevelRecord"],
    "3.5": ["FeatureLevelRecord", "ZkMigrationStateRecord"],
    "3.6": ["BeginTransactionRecord", "FeatureLevelRecord", "ZkMigrationStateRecord",
            "EndTransactionRecord"],
    "3.9": ["BeginTransactionRecord", "FeatureLevelRecord", "ZkMigrationStateRecord",
            "EndTransactionRecord"],
    "4.0": ["BeginTransactionRecord"] + ["FeatureLevelRecord"] * 3 + ["EndTransactionRecord"],
    "4.3": ["BeginTransactionRecord"] + ["FeatureLevelRecord"] * 6 +
           ["ConfigRecord", "EndTransactionRecord"],
}


@pytest.mark.parametrize("kafka_version", sorted(LAYOUT))
def test_running_cluster_metadata_log_starts_with_the_activation_records(kafka_version):
    """The first active controller's records follow the LeaderChangeMessage: the bootstrap
    records alone (3.3, 3.4), then ZkMigrationStateRecord NONE (3.5), inside a metadata
    transaction from metadata.version 3.6-IV1; 4.x without the ZK record, with ELR's
    min.insync.replicas (4.1+). The first broker epoch is the offset after them; the image
    finalizes the features and holds no marker."""
    c = Cluster(3, seed=1, kafka_version=kafka_version, metadata_mode="kraft")
    c.run(2000)
    node = c.kraft.active()
    entries = node.raft.log.entries
    layout = LAYOUT[kafka_version]
    assert _kinds(r for _o, _e, r in entries[1:1 + len(layout)]) == layout
    first_broker = entries[1 + len(layout)][2]
    assert type(first_broker) is R.RegisterBrokerRecord
    assert first_broker.broker_epoch == 1 + len(layout)
    assert node.controller.transaction_start_offset == -1
    assert "metadata.version" in c.kraft.image.features
    assert "Performing controller activation. The metadata log appears to be empty." in \
        node.controller.activation_message


# -- a failover with an open metadata transaction ----------------------------------------------
def _open_transaction(c: Cluster):
    """The active controller writes a BeginTransactionRecord and a topic's records, no End,
    and the quorum commits them. Returns (the controller node, the Begin's offset)."""
    node = c.kraft.active()
    topic_id = "AAAAAAAAAAAAAAAAAAAAAA"
    start = node.controller.write(node, [
        R.BeginTransactionRecord("test"), R.TopicRecord("ghost", topic_id),
        R.PartitionRecord(0, topic_id, (1, 2, 3), (1, 2, 3), leader=1)]) - 2
    c.run(200)
    assert node.raft.high_watermark > start + 2
    return node, start


@pytest.mark.parametrize("kafka_version", ["3.9", "4.3"])
def test_controller_failover_aborts_an_open_transaction(kafka_version):
    """QuorumControllerTest.testActivationRecordsPartialTransaction, run: a controller fails
    with a metadata transaction open. While it is open, no metadata loader publishes its
    records (the cluster image, the brokers' metadata); the next active controller writes
    AbortTransactionRecord("Controller failover") first (recordsForNonEmptyLog) and reverts
    what it had replayed of the transaction, so the topic never exists anywhere."""
    c = Cluster(3, seed=1, kafka_version=kafka_version, metadata_mode="kraft")
    c.run(2000)
    node, start = _open_transaction(c)
    assert node.controller.transaction_start_offset == start
    assert "ghost" in node.controller.replication_control.topics()   # replayed, not published
    assert "ghost" not in c.kraft.image.topic_ids
    assert c.kraft.image.offset < start
    assert all("ghost" not in {tp[0] for tp in b.lifecycle.image.partitions}
               for b in c.brokers.values())
    c.crash(node.id)
    c.run(8000)   # a fetch timeout, then an election (a split vote may take a second round)
    new = c.kraft.active()
    assert new is not None and new.id != node.id
    leader_change = next(o for o, _e, r in new.raft.log.entries
                         if o > start and type(r).__name__ == "LeaderChangeMessage")
    abort = new.raft.log.entry_at(leader_change + 1)
    assert abort[2] == R.AbortTransactionRecord("Controller failover")
    assert new.controller.activation_message == \
        f"Performing controller activation. Aborting in-progress metadata transaction at " \
        f"offset {start}." + (" Loaded ZK migration state of NONE. This is expected because "
                              "this is a de-novo KRaft cluster." if kafka_version == "3.9" else "")
    assert new.controller.transaction_start_offset == -1
    assert "ghost" not in new.controller.replication_control.topics()
    assert c.kraft.image.offset >= abort[0]
    assert "ghost" not in c.kraft.image.topic_ids
    assert all("ghost" not in {tp[0] for tp in b.lifecycle.image.partitions}
               for b in c.brokers.values())
    c.create_topic("t", 1, 3)
    c.run(1000)
    assert c.leader("t") in (1, 2, 3)


# -- the loader's view of the markers ------------------------------------------------------------
def _entries(*records):
    return [(i, 1, r) for i, r in enumerate(records)]


def test_published_entries_wait_for_end_and_drop_aborts():
    """MetadataBatchLoader: records of an open transaction are not published; an End publishes
    them; an Abort discards them (its marker moves the offset on)."""
    noop, topic = R.NoOpRecord(), R.TopicRecord("t", "id")
    begin, end, abort = R.BeginTransactionRecord("x"), R.EndTransactionRecord(), \
        R.AbortTransactionRecord("y")
    open_log = _entries(noop, begin, topic)
    assert published_entries(open_log) == open_log[:1]
    assert published_end(open_log, 3) == 1
    ended = _entries(noop, begin, topic, end)
    assert published_entries(ended) == ended and published_end(ended, 4) == 4
    aborted = _entries(noop, begin, topic, abort, noop)
    assert published_entries(aborted) == [aborted[0], aborted[3], aborted[4]]
    assert metadata_transactions(open_log).open_start == 1
    assert metadata_transactions(open_log).entries == open_log   # the controller replays them


def test_a_begin_inside_a_transaction_is_an_error():
    """MetadataBatchLoader.replay: "Encountered BeginTransactionRecord while already in a
    transaction"."""
    with pytest.raises(RuntimeError, match="BeginTransactionRecord while already in a "
                                           "transaction"):
        metadata_transactions(_entries(R.BeginTransactionRecord(), R.BeginTransactionRecord()))
