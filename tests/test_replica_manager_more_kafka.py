"""More of kafka.server.ReplicaManager driven by Kafka's names: the replication cases of
core/src/test/scala/unit/kafka/server/ReplicaManagerTest.scala (tag 3.7.0) that
tests/test_replica_manager_kafka.py does not port -- KRaft ``applyDelta`` (leader / follower
changes, replicas removed, fetchers kept or restarted, controlled shutdown) and ``stopReplicas``
(controller and leader epochs, hosted or not, deletePartition). Each test names the Kafka test.

Adaptation to kafkasim. The broker is test_replica_manager_kafka's ``Broker`` (a
``kafkasim.core.fake.FakeContext``, broker 0, brokers 0-2 alive, with a
``kafkasim.core.replica_manager.ReplicaManager``); its produce / fetch helpers are Kafka's
``sendProducerAppend`` (acks=-1) and ``fetchPartitionAsFollower``. Kafka's delta tests use local
broker 1 and other broker 2; here the local broker is 0 and the other one 1.

* ``applyDelta(TopicsDelta, MetadataImage)``: ``KRaftBroker`` holds a KRaftMetadataCache and a
  ``kafkasim.control.kraft.image.MetadataImage``; Kafka's TopicsDelta records (TopicRecord,
  PartitionRecord, PartitionChangeRecord, RemoveTopicRecord) are replayed onto the image and the
  changed partitions published with ``kafkasim.runtime.broker_lifecycle.publish`` -- kafkasim's
  BrokerMetadataPublisher, which calls ReplicaManager.applyDelta's per-partition step
  (``apply_partition_state(kraft=True)``, or ``stop_replica(delete=True)`` for a replica the
  image no longer lists, and first for the local replicas of a deleted topic), as a KRaft
  broker's MetadataLoader does (``on_high_watermark``, ``replay_records``).
* ``replicaFetcherManager.getFetcher(tp)`` / ``InitialFetchState``: the fetcher thread of
  ``ctx.fetchers`` holding the partition (its key's leader id) and its ``PartitionFetchState``
  (current leader epoch, fetch offset). Kafka's mocked ``removeFetcherForPartitions`` whose
  answer appends to the log (testDeltaFollowerStopFetcherBeforeCreatingInitialFetchOffset) is a
  pytest monkeypatch of ``ReplicaFetcherManager.remove_fetcher_for_partitions``.
* ``stopReplicas(correlationId, controllerId, controllerEpoch, partitionStates)``: a
  ``StopReplicaRequest`` handled by ``kafkasim.runtime.kafka_apis.handle_stop_replica_request``
  (KafkaApis.handleStopReplicaRequest, where kafkasim checks the controller epoch). The
  request's ``leader_epochs`` are StopReplicaPartitionState.leaderEpoch (v3+, KIP-570); without
  them it is a v0-v2 request (``LeaderAndIsr.NoEpoch``). kafkasim's broker answers only a
  refusal, so "Map(tp0 -> NONE)" is no StopReplicaResponse and FENCED_LEADER_EPOCH is one
  with that partition error. kafkasim's ZooKeeper controller sends no epochs yet.

Left out (kafkasim does not model it, or it is outside replication): log dirs, JBOD and
alter-log-dirs (testApplyDeltaShouldHandleReplicaAssignedTo*Directory,
testReplicaAlterLogDirsWithAndWithoutIds, testMetadataLogDirFailureInZkShouldNotHaltBroker, the
IOException variants of testStopReplicaWith*, testDeltaToLeaderOrFollowerMarksPartitionOffline*,
testGetOrCreatePartition's offline partitions), tiered storage (the ``enableRemoteStorage = true``
halves and their RemoteLogManager verifications, testNotCallStopPartitionsForNonTieredTopics,
testOffsetOutOfRangeException*, testRemote*, test*BuildRemoteLogAuxStateMetrics*), topic ids
(testPartitionFetchStateUpdatesWithTopicIdChanges, testPartitionMetadataFile*), the
checkpoint files the StopReplica tests read (recovery point, log start offset: the log is
simply gone here), transactions and verification (testTransactionVerification*,
testVerificationForTransactionalPartitionsOnly, testExceptionWhenUnverifiedTransaction*,
testDisabledTransactionVerification, testMaybeVerificationErrorConversions,
testPreVerificationError), producer state and partition listeners (testActiveProducerState:
no DescribeProducers; testPartitionListener: no maybeAddListener), metrics
(testOld*LosesMetricsWhenReassignPartitions), ZooKeeper-to-KRaft migration
(testFullLairDuringKRaftMigration*) and a mock-only check of shutdown
(testCheckpointHwOnShutdown: verify(spy).checkpointHighWatermarks; kafkasim's ReplicaManager
has no shutdown, the runtime broker writes the checkpoints, tests/test_hw_persistence_kafka.py).
testStopReplicaWithOfflinePartition and the remaining tests are ported or left out in
tests/test_replica_manager_kafka.py (testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate
Ibp26 is its parametrized 2.6 case).
"""

from __future__ import annotations

import pytest
from test_replica_manager_kafka import CONTROLLER, TOPIC, TP, Broker

from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.image import MetadataImage
from kafkasim.core import errors as E
from kafkasim.core.fetcher_manager import ReplicaFetcherManager
from kafkasim.core.messages import StopReplicaRequest, StopReplicaResponse
from kafkasim.runtime.broker_lifecycle import publish, replay_records
from kafkasim.runtime.kafka_apis import handle_stop_replica_request
from kafkasim.runtime.metadata_cache import MetadataCache

FOO_UUID = "fFJBx0OmQG-UqeaT6YaSwA"
LOCAL, OTHER = 0, 1
NO_LEADER = -1


def fetcher_of(b: Broker, tp=TP):
    """replicaFetcherManager.getFetcher(tp): (leader id, PartitionFetchState), or None."""
    found = [(key[0], t.partitions[tp]) for key, t in b.fetchers.items() if tp in t.partitions]
    assert len(found) <= 1
    return found[0] if found else None


# -- KRaft: applyDelta ----------------------------------------------------------------------------
class KRaftBroker(Broker):
    """A broker whose metadata is a KRaft image: TopicsDelta records replayed, then published
    (BrokerMetadataPublisher -> ReplicaManager.applyDelta)."""

    def __init__(self, version: str = "3.7"):
        super().__init__(version)
        self.metadata = MetadataCache.kraft_metadata_cache(self.id)
        self.image = MetadataImage()
        self._offset = 0
        # ClusterImageTest.IMAGE1's role: the brokers are registered (and unfenced)
        self.apply_delta(
            *(
                R.RegisterBrokerRecord(i, 10 + i, f"incarnation-{i}", fenced=False)
                for i in (0, 1, 2)
            )
        )

    def apply_delta(self, *records) -> None:
        first = self._offset + 1
        self._offset += len(records)
        publish(self, self.image, *replay_records(self.image, enumerate(records, first)))


def partition_record(start_id: int, leader: int, partition: int = 0) -> R.PartitionRecord:
    """ReplicaManagerTest.partitionRecord: replicas and ISR (start, start + 1), epochs 0."""
    replicas = (start_id, start_id + 1)
    return R.PartitionRecord(
        partition, FOO_UUID, replicas, replicas, leader=leader, leader_epoch=0, partition_epoch=0
    )


def topics_create_delta(start_id: int, is_start_id_leader: bool) -> tuple:
    """ReplicaManagerTest.topicsCreateDelta."""
    leader = start_id if is_start_id_leader else start_id + 1
    return R.TopicRecord(TOPIC, FOO_UUID), partition_record(start_id, leader)


def topics_change_delta(start_id: int, is_start_id_leader: bool) -> tuple:
    """ReplicaManagerTest.topicsChangeDelta: a PartitionChangeRecord naming the leader (so the
    leader epoch grows by one), replicas and ISR (start, start + 1)."""
    leader = start_id if is_start_id_leader else start_id + 1
    replicas = (start_id, start_id + 1)
    return (R.PartitionChangeRecord(0, FOO_UUID, isr=replicas, leader=leader, replicas=replicas),)


def topics_delete_delta() -> tuple:
    """ReplicaManagerTest.topicsDeleteDelta."""
    return (R.RemoveTopicRecord(FOO_UUID),)


def _leader_of_epoch_0():
    b = KRaftBroker()
    b.apply_delta(*topics_create_delta(LOCAL, True))
    part = b.part()
    assert part.is_leader and part.in_sync_replica_ids() == {LOCAL, OTHER}
    assert part.get_leader_epoch() == 0
    assert fetcher_of(b) is None
    return b


def _follower_of_epoch_0():
    b = KRaftBroker()
    b.apply_delta(*topics_create_delta(LOCAL, False))
    part = b.part()
    assert not part.is_leader and part.get_leader_epoch() == 0
    fetcher = fetcher_of(b)
    assert fetcher is not None and fetcher[0] == OTHER
    return b


def test_delta_from_leader_to_follower():
    """testDeltaFromLeaderToFollower: the leader of epoch 0 acknowledges an acks=-1 produce once
    the follower fetched it; a delta naming the other broker leader (epoch 1) makes it a
    follower that refuses produces and fetches from the new leader."""
    b = _leader_of_epoch_0()
    corr = b.produce(3)
    b.fetch(OTHER, 3)
    assert b.produce_answer(corr).partitions[0][2] == E.NONE
    b.apply_delta(*topics_change_delta(LOCAL, False))
    corr = b.produce(3)
    assert b.produce_answer(corr).partitions[0][2] == E.NOT_LEADER_OR_FOLLOWER
    part = b.part()
    assert not part.is_leader and part.get_leader_epoch() == 1
    assert fetcher_of(b)[0] == OTHER


def test_delta_from_follower_to_leader():
    """testDeltaFromFollowerToLeader: a follower of epoch 0 fetches from the other broker and
    refuses produces; made leader (epoch 1) it stops fetching, takes an acks=-1 produce and
    acknowledges it once the follower fetched it."""
    b = _follower_of_epoch_0()
    corr = b.produce(3)
    assert b.produce_answer(corr).partitions[0][2] == E.NOT_LEADER_OR_FOLLOWER
    b.apply_delta(*topics_change_delta(LOCAL, True))
    corr = b.produce(3)
    b.fetch(OTHER, 3)
    assert b.produce_answer(corr).partitions[0][2] == E.NONE
    part = b.part()
    assert part.is_leader and part.in_sync_replica_ids() == {LOCAL, OTHER}
    assert part.get_leader_epoch() == 1
    assert fetcher_of(b) is None


def test_delta_follower_with_no_change():
    """testDeltaFollowerWithNoChange: the same delta applied again leaves the follower as it
    was, fetching from the same leader (the fetcher is not restarted)."""
    b = _follower_of_epoch_0()
    part, (leader, state) = b.part(), fetcher_of(b)
    b.apply_delta(*topics_create_delta(LOCAL, False)[1:])
    assert b.part() is part
    assert not part.is_leader and part.get_leader_epoch() == 0
    assert fetcher_of(b) == (leader, state) and fetcher_of(b)[1] is state


def _assert_removed(b):
    """HostedPartition.None, no fetcher, no log."""
    assert TP not in b.rm.partitions
    assert fetcher_of(b) is None
    assert TP not in b.logs


def test_delta_follower_to_not_replica():
    """testDeltaFollowerToNotReplica: a delta that moves the replicas to (1, 2) removes the
    follower: partition, fetcher and log are gone (stopPartitions with deleteLocalLog)."""
    b = _follower_of_epoch_0()
    b.apply_delta(*topics_change_delta(OTHER, True))
    _assert_removed(b)


def test_delta_leader_to_not_replica():
    """testDeltaLeaderToNotReplica: the same for the leader of epoch 0."""
    b = _leader_of_epoch_0()
    b.apply_delta(*topics_change_delta(OTHER, True))
    _assert_removed(b)


def test_delta_follower_removed_topic():
    """testDeltaFollowerRemovedTopic: a RemoveTopicRecord removes the follower: partition,
    fetcher and log are gone."""
    b = _follower_of_epoch_0()
    b.apply_delta(*topics_delete_delta())
    _assert_removed(b)


def test_delta_leader_to_removed_topic():
    """testDeltaLeaderToRemovedTopic: a RemoveTopicRecord removes the leader: partition and log
    are gone."""
    b = _leader_of_epoch_0()
    b.apply_delta(*topics_delete_delta())
    _assert_removed(b)


def test_delta_follower_stop_fetcher_before_creating_initial_fetch_offset(monkeypatch):
    """testDeltaFollowerStopFetcherBeforeCreatingInitialFetchOffset: the follower starts at
    offset 0 (epoch 0). When a delta bumps the leader epoch, the fetcher still appends one
    record while it is being removed; the new fetch position is computed after the removal, so
    the fetcher restarts at offset 1 with epoch 1."""
    b = _follower_of_epoch_0()
    part = b.part()
    assert part.log.log_end_offset == 0
    assert (fetcher_of(b)[1].current_leader_epoch, fetcher_of(b)[1].fetch_offset) == (0, 0)

    original = ReplicaFetcherManager.remove_fetcher_for_partitions

    def remove_after_a_last_append(manager, partitions):
        # the fetcher's last write before it stops (appendRecordsToFollowerOrFutureReplica of
        # one record in epoch 0)
        for tp in partitions:
            if tp in manager.ctx.rm.partitions:
                manager.ctx.rm.partitions[tp].log.append_as_leader([999], [13], 0, 0)
        return original(manager, partitions)

    monkeypatch.setattr(
        ReplicaFetcherManager, "remove_fetcher_for_partitions", remove_after_a_last_append
    )
    b.apply_delta(*topics_change_delta(LOCAL, False))
    assert not part.is_leader and part.get_leader_epoch() == 1
    assert part.log.log_end_offset == 1
    leader, state = fetcher_of(b)
    assert (leader, state.current_leader_epoch, state.fetch_offset) == (OTHER, 1, 1)


def test_fetchers_are_not_restarted_if_leader_epoch_is_not_bumped_with_kraft_path():
    """testFetcherAreNotRestartedIfLeaderEpochIsNotBumpedWithKRaftPath: a PartitionChangeRecord
    that changes only the replicas bumps the partition epoch (1) but not the leader epoch (0):
    the follower's fetcher is neither removed nor re-added. A new leader (broker 2) bumps both
    (1, 2) and moves the fetcher to it, from offset 0 at epoch 1."""
    b = KRaftBroker()
    b.apply_delta(R.TopicRecord(TOPIC, FOO_UUID), partition_record(LOCAL, LOCAL + 1))
    part = b.part()
    assert (part.is_leader, part.get_leader_epoch(), part.get_partition_epoch()) == (False, 0, 0)
    key, thread = next(iter(b.fetchers.items()))
    state = thread.partitions[TP]
    assert key[0] == LOCAL + 1
    assert (state.current_leader_epoch, state.fetch_offset) == (0, 0)

    b.apply_delta(R.PartitionChangeRecord(0, FOO_UUID, isr=(0, 1), replicas=(0, 1, 2)))
    assert (part.is_leader, part.get_leader_epoch(), part.get_partition_epoch()) == (False, 0, 1)
    assert b.fetchers == {key: thread} and thread.partitions[TP] is state

    b.apply_delta(R.PartitionChangeRecord(0, FOO_UUID, isr=(0, 1, 2), leader=2, replicas=(0, 1, 2)))
    assert (part.is_leader, part.get_leader_epoch(), part.get_partition_epoch()) == (False, 1, 2)
    leader, state = fetcher_of(b)
    assert (leader, state.current_leader_epoch, state.fetch_offset) == (2, 1, 0)


def _three_partitions_then_controlled_shutdown():
    """testReplicasAreStoppedWhileInControlledShutdownWithKRaft's deltas: foo-0 a follower in
    the ISR, foo-1 the leader alone in its ISR, foo-2 a follower out of the ISR; then the
    controller's answer to the controlled shutdown: foo-0's ISR shrinks to the leader (epoch
    1), foo-1 loses its leader (NO_LEADER, epoch 1), foo-2 is not changed."""
    b = KRaftBroker()
    replicas = (LOCAL, LOCAL + 1)
    b.apply_delta(
        R.TopicRecord(TOPIC, FOO_UUID),
        R.PartitionRecord(0, FOO_UUID, replicas, replicas, leader=LOCAL + 1),
        R.PartitionRecord(1, FOO_UUID, replicas, (LOCAL,), leader=LOCAL),
        R.PartitionRecord(2, FOO_UUID, replicas, (LOCAL + 1,), leader=LOCAL + 1),
    )
    for p, leads in ((0, False), (1, True), (2, False)):
        part = b.part(p)
        assert (part.is_leader, part.get_leader_epoch(), part.get_partition_epoch()) == (
            leads,
            0,
            0,
        )
    # the broker transitions to SHUTTING_DOWN and begins the controlled shutdown
    # (ReplicaManager.beginControlledShutdown: isInControlledShutdown = true)
    b.rm.begin_controlled_shutdown()
    b.apply_delta(
        R.PartitionChangeRecord(0, FOO_UUID, isr=(LOCAL + 1,), leader=LOCAL + 1, replicas=replicas),
        R.PartitionChangeRecord(1, FOO_UUID, isr=(LOCAL,), leader=NO_LEADER, replicas=replicas),
    )
    return b


def test_replicas_are_stopped_while_in_controlled_shutdown_with_kraft():
    """testReplicasAreStoppedWhileInControlledShutdownWithKRaft, the partition states: foo-0 and
    foo-1 become followers of leader epoch 1 and partition epoch 1; foo-2 stays at 0."""
    b = _three_partitions_then_controlled_shutdown()
    for p, epochs in ((0, (1, 1)), (1, (1, 1)), (2, (0, 0))):
        part = b.part(p)
        assert not part.is_leader
        assert (part.get_leader_epoch(), part.get_partition_epoch()) == epochs


def test_replicas_are_stopped_while_in_controlled_shutdown_with_kraft_stops_fetchers():
    """testReplicasAreStoppedWhileInControlledShutdownWithKRaft, the fetchers:
    removeFetcherForPartitions(foo-0, foo-1) and no fetcher started for them; foo-2's fetcher
    (this replica not in its ISR, partition unchanged) runs until the broker shuts down."""
    b = _three_partitions_then_controlled_shutdown()
    assert fetcher_of(b, (TOPIC, 0)) is None
    assert fetcher_of(b, (TOPIC, 1)) is None
    assert fetcher_of(b, (TOPIC, 2)) is not None


# -- StopReplica ----------------------------------------------------------------------------------
def stop_replicas(b: Broker, controller_epoch: int, delete: bool) -> None:
    """ReplicaManager.stopReplicas of partition 0 (KafkaApis.handleStopReplicaRequest)."""
    req = StopReplicaRequest(CONTROLLER, controller_epoch, (TP,), delete)
    handle_stop_replica_request(b, CONTROLLER, req)


def stop_replica_answers(b: Broker) -> list:
    return [m for d, m in b.sent if d == CONTROLLER and isinstance(m, StopReplicaResponse)]


def test_stop_replica_with_stale_controller_epoch():
    """testStopReplicaWithStaleControllerEpoch (its effect): a StopReplica from controller
    epoch 0 after a LeaderAndIsr of controller epoch 10 is ignored; the partition stays hosted
    and led here, with its log."""
    b = Broker()
    b.lair(0, 1, (0, 1), controller_epoch=10)
    stop_replicas(b, 0, delete=True)
    assert TP in b.rm.partitions and b.part().is_leader and TP in b.logs


def test_stop_replica_with_stale_controller_epoch_answers_stale_controller_epoch():
    """testStopReplicaWithStaleControllerEpoch: the error answered is STALE_CONTROLLER_EPOCH."""
    b = Broker()
    b.lair(0, 1, (0, 1), controller_epoch=10)
    stop_replicas(b, 0, delete=False)
    assert [a.error for a in stop_replica_answers(b)] == [E.STALE_CONTROLLER_EPOCH]


@pytest.mark.parametrize("delete", [False, True])
def test_stop_replica_with_inexistent_partition(delete):
    """testStopReplicaWithInexistentPartition / ...AndPartitionsDelete: a log with no hosted
    Partition (a topic deleted while the broker was down) is deleted by a StopReplica with
    deletePartition=true and kept by one without."""
    b = Broker()
    b.log_manager.get_or_create_log(b, TOPIC, 0)
    assert TP not in b.rm.partitions and TP in b.logs
    stop_replicas(b, 0, delete)
    assert (TP in b.logs) is (not delete)
    assert TP not in b.rm.partitions


def _leader_with_two_records():
    """testStopReplicaWithExistingPartition's leader: epoch 1, ISR (0, 1), two records appended
    with acks=0, HW 2, log start offset 1."""
    b = Broker()
    b.lair(0, 1, (0, 1))
    b.produce(2, acks=0)
    log = b.part().log
    log.update_high_watermark(2)
    log.maybe_increment_log_start_offset(1)
    assert (log.log_start_offset, log.high_watermark, log.log_end_offset) == (1, 2, 2)
    return b


@pytest.mark.parametrize("delete", [False, True])
def test_stop_replica_with_existing_partition(delete):
    """testStopReplicaWithExistingPartitionAnd{NewerLeaderEpoch, EqualLeaderEpoch,
    DeleteSentinel, LeaderEpochNotProvided} and testStopReplicaWithDeletePartitionAnd
    ExistingPartitionAnd{the same four}: the StopReplica is applied; with deletePartition the
    partition is no longer hosted (HostedPartition.None) and its log is deleted, without it
    the partition and its log stay."""
    b = _leader_with_two_records()
    stop_replicas(b, 0, delete)
    if delete:
        assert TP not in b.rm.partitions and TP not in b.logs
    else:
        assert TP in b.rm.partitions and b.logs[TP].log_start_offset == 1


def stop_replicas_with_epoch(b: Broker, leader_epoch: int, delete: bool) -> None:
    """stopReplicas(1, 0, 0, {tp0 -> StopReplicaPartitionState(leaderEpoch, deletePartition)}):
    a StopReplica v3+ (KIP-570) carrying the partition's leader epoch."""
    req = StopReplicaRequest(CONTROLLER, 0, (TP,), delete, leader_epochs=(leader_epoch,))
    handle_stop_replica_request(b, CONTROLLER, req)


NO_EPOCH, EPOCH_DURING_DELETE = -1, -2   # LeaderAndIsr.NoEpoch, LeaderAndIsr.EpochDuringDelete


@pytest.mark.parametrize("delete", [False, True])
@pytest.mark.parametrize("leader_epoch", [2, 1, EPOCH_DURING_DELETE, NO_EPOCH])
def test_stop_replica_with_existing_partition_and_leader_epoch(leader_epoch, delete):
    """testStopReplicaWithExistingPartitionAnd{NewerLeaderEpoch, EqualLeaderEpoch,
    DeleteSentinel, LeaderEpochNotProvided} and testStopReplicaWithDeletePartitionAnd
    ExistingPartitionAnd{the same four} @3.9.0, with the epoch in the request: the partition
    (leader epoch 1) is stopped, no error is answered; with deletePartition it is no longer
    hosted and its log is gone."""
    b = _leader_with_two_records()
    stop_replicas_with_epoch(b, leader_epoch, delete)
    assert stop_replica_answers(b) == []          # Map(tp0 -> NONE): nothing to refuse
    if delete:
        assert TP not in b.rm.partitions and TP not in b.logs
    else:
        assert TP in b.rm.partitions and b.logs[TP].log_start_offset == 1


@pytest.mark.parametrize("delete", [False, True])
def test_stop_replica_with_existing_partition_and_older_leader_epoch(delete):
    """testStopReplicaWithExistingPartitionAndOlderLeaderEpoch and testStopReplicaWithDelete
    PartitionAndExistingPartitionAndOlderLeaderEpoch @3.9.0: leader epoch 0 < 1 answers
    FENCED_LEADER_EPOCH for tp0 (the request's error is NONE); the partition stays hosted and
    led, with its log (ReplicaManager.stopReplicas, KIP-570)."""
    b = _leader_with_two_records()
    stop_replicas_with_epoch(b, 0, delete)
    assert [(a.error, a.partition_errors) for a in stop_replica_answers(b)] == \
        [(E.NONE, ((*TP, E.FENCED_LEADER_EPOCH),))]
    assert TP in b.rm.partitions and b.part().is_leader and TP in b.logs
    assert b.logs[TP].log_end_offset == 2


@pytest.mark.parametrize(("version", "fenced"), [("3.4", True), ("3.5", False)])
def test_stop_replica_with_equal_leader_epoch_is_fenced_before_3_5(version, fenced):
    """ReplicaManager.stopReplicas @3.4.0 answered FENCED_LEADER_EPOCH to a StopReplica at the
    partition's own leader epoch ("matches the current leader epoch"); KAFKA-13972 (3.5.0)
    applies it (testStopReplicaWithExistingPartitionAndEqualLeaderEpoch expects NONE)."""
    b = Broker(version)
    b.lair(0, 1, (0, 1))
    stop_replicas_with_epoch(b, 1, delete=True)
    assert (TP in b.rm.partitions) is fenced
    assert bool(stop_replica_answers(b)) is fenced


def test_stop_replica_leader_epoch_is_not_checked_before_kip_570():
    """ReplicaManager.stopReplica @2.5.0: StopReplica v0-v2 carries no leader epoch, every
    partition named is stopped (KIP-570, StopReplica v3, came in 2.6.0)."""
    b = Broker("2.5")
    b.lair(0, 1, (0, 1))
    stop_replicas_with_epoch(b, 0, delete=True)
    assert TP not in b.rm.partitions and stop_replica_answers(b) == []


def test_stop_replica_with_inexistent_partition_and_leader_epoch():
    """testStopReplicaWithInexistentPartitionAndPartitionsDelete @3.9.0, leader epoch 1 in the
    request: no hosted Partition, so nothing to check; the log is deleted, tp0 -> NONE."""
    b = Broker()
    b.log_manager.get_or_create_log(b, TOPIC, 0)
    stop_replicas_with_epoch(b, 1, delete=True)
    assert TP not in b.logs and stop_replica_answers(b) == []
