"""KIP-320: committed offsets carry the leader epoch; a restart from them is validated.

Since 2.1 OffsetCommit v6 / OffsetFetch v5 carry CommittedLeaderEpoch and the group coordinator
stores it. Since 2.3 (KAFKA-7747) the consumer commits the epoch of the last record it consumed
(SubscriptionState.allConsumed -> position.offsetEpoch), and a consumer that restarts from a
committed offset seeks to FetchPosition(offset, committed epoch, current leader) with
SubscriptionState.seekUnvalidated, so it asks OffsetsForLeaderEpoch before its first fetch
(ConsumerCoordinator.refreshCommittedOffsetsIfNeeded). A committed position whose records an
unclean election truncated is then detected like any other truncation.
"""

from __future__ import annotations

import pytest
from truncation_setup import elect_the_follower_uncleanly, leader_ahead_of_its_follower

from kafkasim.runtime.clients.consumer import LogTruncationException, OffsetAndMetadata
from kafkasim.runtime.cluster import Cluster

TP = ("t", 0)


def _epoch_one_records(version: str, rules: dict | None = None):
    """r0-r2 written in epoch 0 by leader 1; leader 1 crashes cleanly, broker 2 (in the ISR)
    leads epoch 1 and takes r3-r5. A consumer of group g reads all six and commits."""
    c = Cluster([4, 1, 2], seed=1, kafka_version=version, rules=rules)
    c.create_topic("t", 1, 2, assignment=[[1, 2]], config={"min.insync.replicas": 1})
    p = c.producer(acks="all", retries=5)
    for i in range(3):
        p.send("t", f"r{i}", partition=0)
    c.run(1000)
    c.crash(1)
    c.run_until(lambda c: c.leader("t", 0) == 2, 30000)
    for i in range(3, 6):
        p.send("t", f"r{i}", partition=0)
    c.run(1000)
    assert c.inspect.partition_state("t", 0)["leader_epoch"] == 1
    cons = c.consumer(group="g", auto_offset_reset="earliest")
    cons.assign("t")
    got = []
    for _ in range(3):
        got += cons.poll(1000)
    assert [(r.value, r.leader_epoch) for r in got][-1] == ("r5", 1)
    cons.commit()
    return c, cons


@pytest.mark.parametrize(("version", "epoch"), [
    ("3.7", 1), ("2.3", 1),
    # 2.1/2.2: OffsetCommit v6 exists but allConsumed() commits OffsetAndMetadata(position)
    ("2.2", None),
    # before 2.1: no CommittedLeaderEpoch in OffsetCommit / OffsetFetch at all
    ("2.0", None)])
def test_committed_offset_stores_the_epoch_of_the_last_consumed_record(version, epoch):
    # SubscriptionState.allConsumed @2.3.0/@3.7.0: OffsetAndMetadata(position.offset,
    # position.offsetEpoch, ""); ConsumerCoordinatorTest.testFetchCommittedOffsets (the epoch
    # comes back from OffsetFetch)
    c, cons = _epoch_one_records(version)
    assert cons.committed("t", 0) == 6
    assert cons.committed_offset_and_metadata("t", 0) == OffsetAndMetadata(6, epoch)
    sent = [r[5] for r in c.trace.where("send")
            if r[2] == cons.client_id and r[5][0] == "OffsetCommitRequest"]
    assert len(sent) == 1


def test_coordinator_without_committed_leader_epoch_drops_it():
    # the same 3.7 consumer against a coordinator without OffsetCommit v6 (rule switched off)
    c, cons = _epoch_one_records("3.7", {"offset_commit_leader_epoch": False})
    assert cons.committed_offset_and_metadata("t", 0) == OffsetAndMetadata(6, None)
    assert c.group_offsets.leader_epochs[("g", "t", 0)] is None


def test_describe_group_text_does_not_show_the_epoch():
    # kafka-consumer-groups --describe has no epoch column (ConsumerGroupCommand)
    c, _cons = _epoch_one_records("3.7")
    out = c.describe_group("g")
    assert "t" in out and "6" in out
    c2, _ = _epoch_one_records("2.0")
    assert c2.describe_group("g") == out


def _validations(c, client_id: str) -> list:
    return [r for r in c.trace.where("send")
            if r[2] == client_id and r[5][0] == "OffsetsForLeaderEpochRequest"]


@pytest.mark.parametrize("version", ["2.3", "3.7"])
def test_restart_from_committed_offset_validates_before_fetching(version):
    # ConsumerCoordinatorTest.testRefreshOffsetWithValidation: an offset loaded with an epoch
    # awaits validation; SubscriptionStateTest.testSeekUnvalidatedWithOffsetEpoch. Nothing was
    # truncated: the end offset of epoch 1 on the leader (its LEO 6) is not below 6.
    c, _old = _epoch_one_records(version)
    new = c.consumer(group="g", auto_offset_reset="none")
    new.assign("t")
    assert new.poll(1000) == []
    assert len(_validations(c, new.client_id)) == 1
    assert new.position("t", 0) == 6 and new.subscriptions.position(TP).offset_epoch == 1
    assert not c.trace.where("consumer_truncation")
    c.producer(acks="all").send("t", "r6", partition=0)
    c.run(500)
    assert [(r.offset, r.value) for r in new.poll(1000)] == [(6, "r6")]


def test_restart_from_committed_offset_without_epoch_is_not_validated():
    # SubscriptionStateTest.testSeekUnvalidatedWithNoOffsetEpoch: no epoch, nothing to validate
    c = Cluster([4, 1, 2], seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 2, assignment=[[1, 2]])
    p = c.producer(acks="all")
    for i in range(4):
        p.send("t", f"r{i}", partition=0)
    c.run(1000)
    old = c.consumer(group="g")
    old.assign("t")
    old.seek("t", 0, 2)               # a seek without epoch, nothing consumed
    old.commit()
    assert old.committed_offset_and_metadata("t", 0) == OffsetAndMetadata(2, None)
    new = c.consumer(group="g")
    new.assign("t")
    assert [r.value for r in new.poll(1000)] == ["r2", "r3"]
    assert not _validations(c, new.client_id)


def _committed_then_truncated(version: str, new_records: int = 5):
    """The consumer of group g reads offsets 0-9 from leader 1 (epoch 0) while broker 2, out of
    the ISR, holds only 0-4, and commits offset 10 (epoch 0). Broker 1 dies; broker 2 is elected
    uncleanly (epoch 1) and takes ``new_records`` new records from offset 5: the committed
    position's records 5-9 are gone."""
    c, p = leader_ahead_of_its_follower(version)
    old = c.consumer(group="g", auto_offset_reset="earliest")
    old.assign("t")
    got = []
    for _ in range(2):
        got += old.poll(1000)
    assert [r.value for r in got] == [f"r{i}" for i in range(10)]
    old.commit()
    elect_the_follower_uncleanly(c, p, new_records)
    return c


@pytest.mark.parametrize("version", ["2.3", "3.7"])
def test_restart_detects_truncated_committed_offset_without_reset_policy(version):
    # SubscriptionStateTest.testTruncationDetectionWithoutResetPolicy, reached through
    # ConsumerCoordinator.refreshCommittedOffsetsIfNeeded -> seekUnvalidated(committed epoch 0)
    c = _committed_then_truncated(version)
    new = c.consumer(group="g", auto_offset_reset="none")
    new.assign("t")
    with pytest.raises(LogTruncationException) as err:
        new.poll(1000)
    assert err.value.divergent_offsets == {TP: (5, 0)}    # epoch 0 ends at 5 on broker 2
    # KAFKA-10113 (2.6+): offsetOutOfRangePartitions are the fetch positions
    assert err.value.offset_out_of_range_partitions == {TP: 10 if version == "3.7" else 5}
    assert new.position("t", 0) == 10
    assert [r[5] for r in c.trace.where("consumer_truncation")] == \
        [(10, 5, "LogTruncationException")]


@pytest.mark.parametrize("reset", ["earliest", "latest"])
def test_restart_with_reset_policy_seeks_to_the_divergence_end_offset(reset):
    # SubscriptionStateTest.testTruncationDetectionWithResetPolicy: seekValidated(end offset 5,
    # epoch 0), not auto.offset.reset, so n5-n9 are read
    c = _committed_then_truncated("3.7")
    new = c.consumer(group="g", auto_offset_reset=reset)
    new.assign("t")
    got = []
    for _ in range(2):
        got += new.poll(1000)
    assert [(r.offset, r.value) for r in got] == [(i, f"n{i}") for i in range(5, 10)]
    assert [r[5] for r in c.trace.where("consumer_truncation")] == [(10, 5, "seek")]


@pytest.mark.parametrize("reset", ["none", "earliest"])
def test_before_2_3_restart_from_truncated_committed_offset_is_not_detected(reset):
    # 2.2: the committed offset has no epoch and positions are not validated: the new leader's
    # records n5-n9 below the committed offset 10 are skipped silently
    c = _committed_then_truncated("2.2")
    assert c.group_offsets.leader_epochs[("g", "t", 0)] is None
    new = c.consumer(group="g", auto_offset_reset=reset)
    new.assign("t")
    assert new.poll(1000) == []
    assert new.position("t", 0) == 10
    assert not _validations(c, new.client_id)
    assert not c.trace.where("consumer_truncation")
    c.producer(acks="1").send("t", "n10", partition=0)
    c.run(500)
    assert [(r.offset, r.value) for r in new.poll(1000)] == [(10, "n10")]
