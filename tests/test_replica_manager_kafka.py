"""kafka.server.ReplicaManager driven by Kafka's names, following the replication cases of
core/src/test/scala/unit/kafka/server/ReplicaManagerTest.scala (tag 3.7.0; tag 2.8.0 where the
older release answers differently), server/IsrExpirationTest.scala and cluster/ReplicaTest.scala
(tag 3.7.0). Each test names the Kafka test, or, where Kafka has no unit test of its own, the
Kafka source (file and method) whose behaviour it checks.

Adaptation to kafkasim. One broker is a ``kafkasim.core.fake.FakeContext`` (broker 0, brokers
0-2 alive, as Kafka's ``setupReplicaManagerWithMockedPurgatories``) with a
``kafkasim.core.replica_manager.ReplicaManager`` sharing its partitions. Kafka's
``becomeLeaderOrFollower(LeaderAndIsrRequest)`` is ``become_leader_or_follower`` (ZooKeeper
path) and ``applyDelta`` is ``apply_partition_state(kraft=True)``; ``appendRecords`` is
``append_records(ProduceRequest)`` and ``fetchMessages`` is ``fetch_messages(FetchRequest)``;
their callbacks are the ProduceResponse / FetchResponse the broker sends (``ctx.sent``). Kafka's
``MockTimer.advanceClock`` past a purgatory deadline is ``on_produce_timeout`` /
``on_fetch_timeout``. A consumer's ``ClientMetadata`` is the request's ``rack_id``: kafkasim's
consumers always send it (Fetch v11+), so a consumer fetch may read a follower. The rack map of
Kafka's mocked ``metadataCache.getPartitionReplicaEndpoints`` is ``cluster_racks``. Kafka's
``Replica`` is the leader's ``ReplicaState`` in ``Partition.remote`` (its "0 = never" time is
``NEVER_MS``, as simulated time starts at 0).

Covered elsewhere, so not repeated: IsrExpirationTest's four getOutOfSyncReplicas cases and most
of ReplicaTest (tests/test_partition_kafka.py), DelayedFetch min-bytes (test_delayed_fetch_min_
bytes.py), the replica selector through a whole cluster (test_course_follower_fetch.py), stray
logs and the full LeaderAndIsr of a KRaft migration (testFullLeaderAndIsrStrayPartitions,
testUpdateStrayLogs, testFullLair*: tests/test_stray_replicas_kafka.py).

Left out (kafkasim does not model it): log dirs and alterReplicaLogDirs (testHighWaterMark*
DirectoryMapping, testMaybeAddLogDirFetchersWithoutEpochCache, testFencedErrorCausedByBecome
Leader, testDescribeLogDirs), transactions / LSO / verification (testReadCommittedFetchLimitedAtLSO,
testDelayedFetchIncludesAbortedTransactions, testPartitionsWithLateTransactionsCount,
testTransactionVerification*, testVerificationErrorConversions, ...), metrics
(testProducerIdCountMetrics, testFetchRequestRateMetrics' counters, testOld*LosesMetrics*),
topic ids in fetches (testFetchMessagesWithInconsistentTopicId; the LeaderAndIsr ones,
testPartitionMetadataFile* and testInconsistentIdReturnsError, are in
tests/test_zk_topic_ids_kafka.py), tiered storage (testOffsetOutOfRange*, testRemoteLog*,
testBuildRemoteLogAuxState*), offline log dirs (testPartitionMarkedOffline*,
testReplicaNotAvailable, testStopReplicaWithOfflinePartition), pluggable selector classes
(testUnknownReplicaSelector, testDefaultReplicaSelector, MockReplicaSelector's call counts), and
ReplicaTest.testFenceStaleUpdates (no broker epoch in a follower fetch). A consumer fetch without
ClientMetadata (testFetchFollowerNotAllowedForOlderClients' v10 half,
testBecomeFollowerWhileOldClientFetchInPurgatory) is in tests/test_replica_manager_s23_kafka.py.
"""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core.fake import FakeContext
from kafkasim.core.fetcher import FETCHING, TRUNCATING
from kafkasim.core.messages import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    PartitionState,
    ProduceRequest,
    ProduceResponse,
)
from kafkasim.core.partition import apply_isr_update
from kafkasim.core.replica_manager import ReplicaManager
from kafkasim.core.rules import NEVER_MS, ReplicaState

TOPIC = "foo"
TP = (TOPIC, 0)
CONTROLLER = 9
CLIENT = "producer"
CONSUMER = "consumer"
RACK_AWARE = "org.apache.kafka.common.replica.RackAwareReplicaSelector"


class Broker(FakeContext):
    """A FakeContext with a ReplicaManager and a rack per broker (metadataCache's endpoints)."""

    def __init__(self, version: str = "3.7", *, config=None, topic_config=None, racks=None):
        super().__init__(
            0,
            kafka_version=version,
            config=config,
            topic_config=topic_config,
            live_brokers=(0, 1, 2),
        )
        # Kafka's tests mock metadataCache.contains(tp) = true for the topic: a partition not
        # hosted here is NOT_LEADER, not UNKNOWN_TOPIC_OR_PARTITION (2.0+)
        self.metadata.partitions.update({(TOPIC, p): None for p in range(8)})
        self.rm = ReplicaManager()
        self.rm.partitions = self.partitions
        self.replica_manager = self.rm
        self.racks = dict(racks or {})
        self._corr = 100

    def cluster_racks(self) -> dict:
        return self.racks

    def corr(self) -> int:
        self._corr += 1
        return self._corr

    # -- LeaderAndIsr -------------------------------------------------------------------------
    def lair(
        self,
        leader,
        epoch,
        isr,
        replicas=None,
        *,
        partition=0,
        partition_epoch=0,
        controller_epoch=0,
    ) -> LeaderAndIsrResponse:
        """becomeLeaderOrFollower with one partition state; the controller's answer."""
        replicas = tuple(isr if replicas is None else replicas)
        st = PartitionState(
            TOPIC, partition, controller_epoch, leader, epoch, tuple(isr), partition_epoch, replicas
        )
        self.rm.become_leader_or_follower(
            self, CONTROLLER, LeaderAndIsrRequest(CONTROLLER, controller_epoch, (st,))
        )
        return [m for d, m in self.sent if d == CONTROLLER][-1]

    def delta(self, leader, epoch, isr, replicas, partition_epoch) -> str:
        """applyDelta (KRaft) of one partition change."""
        st = PartitionState(
            TOPIC, 0, -1, leader, epoch, tuple(isr), partition_epoch, tuple(replicas)
        )
        return self.rm.apply_partition_state(self, st, kraft=True)

    def part(self, partition: int = 0):
        return self.rm.partitions[(TOPIC, partition)]

    # -- produce ------------------------------------------------------------------------------
    def produce(
        self,
        n: int = 1,
        acks: int = -1,
        *,
        partitions=(0,),
        timeout_ms: int = 1000,
        seq: tuple[int, int, int] = (-1, -1, -1),
    ) -> int:
        """appendRecords of ``n`` records of 10 bytes to each partition; the correlation id."""
        corr = self.corr()
        entries = tuple(
            (TOPIC, p, tuple(range(corr * 100, corr * 100 + n)), (10,) * n, *seq)
            for p in partitions
        )
        self.rm.append_records(
            self, CLIENT, ProduceRequest(corr, CLIENT, acks, timeout_ms, entries)
        )
        return corr

    def produce_answer(self, corr: int) -> ProduceResponse | None:
        got = [m for d, m in self.sent if d == CLIENT and m.correlation_id == corr]
        assert len(got) <= 1
        return got[0] if got else None

    # -- fetch --------------------------------------------------------------------------------
    def fetch(
        self,
        replica_id: int,
        offset: int,
        *,
        epoch: int = -1,
        last_fetched: int = -1,
        max_wait_ms: int = 0,
        min_bytes: int = 1,
        rack: str = "",
        partitions=(0,),
        log_start: int = 0,
    ) -> int:
        """fetchMessages (sessionless) as follower ``replica_id`` or, with -1, a consumer."""
        corr = self.corr()
        fps = tuple(
            FetchPartition(TOPIC, p, offset, epoch, last_fetched, log_start, 100_000)
            for p in partitions
        )
        src = CONSUMER if replica_id < 0 else replica_id
        self.rm.fetch_messages(
            self,
            src,
            FetchRequest(corr, replica_id, max_wait_ms, min_bytes, 1 << 20, fps, rack_id=rack),
        )
        return corr

    def fetch_answer(self, corr: int) -> FetchResponse | None:
        got = [
            m for _d, m in self.sent if isinstance(m, FetchResponse) and m.correlation_id == corr
        ]
        assert len(got) <= 1
        return got[0] if got else None

    def fetch_data(self, corr: int, partition: int = 0):
        answer = self.fetch_answer(corr)
        assert answer is not None, "the fetch has not completed"
        (pd,) = [pd for pd in answer.partitions if pd.partition == partition]
        return pd


# -- produce: the purgatory and leadership changes -----------------------------------------------
@pytest.mark.parametrize("version", ["2.8", "3.7"])
def test_clear_purgatory_on_becoming_follower(version):
    """testClearPurgatoryOnBecomingFollower: an acks=-1 produce waiting for the HW answers
    NOT_LEADER_OR_FOLLOWER as soon as the leader becomes a follower."""
    b = Broker(version)
    b.lair(0, 0, (0, 1))
    corr = b.produce()
    assert b.produce_answer(corr) is None and len(b.rm.delayed_produce) == 1
    b.lair(1, 1, (0, 1))
    assert b.produce_answer(corr).partitions == ((TOPIC, 0, E.NOT_LEADER_OR_FOLLOWER, -1),)
    assert not b.rm.delayed_produce and not b.rm.produce_waiters


def test_delta_to_follower_completes_produce():
    """testDeltaToFollowerCompletesProduce (KRaft applyDelta): the leader of epoch 0 (ISR of
    two) holds a waiting acks=-1 produce, which fails NOT_LEADER_OR_FOLLOWER when the delta
    makes the broker a follower at epoch 1."""
    b = Broker()
    assert b.delta(0, 0, (0, 1), (0, 1), 0) == E.NONE
    assert b.part().is_leader and b.part().in_sync_replica_ids() == {0, 1}
    assert not b.fetchers
    corr = b.produce(3)
    assert b.produce_answer(corr) is None
    b.delta(1, 1, (0, 1), (0, 1), 1)
    assert not b.part().is_leader and b.part().get_leader_epoch() == 1
    assert b.produce_answer(corr).partitions[0][2] == E.NOT_LEADER_OR_FOLLOWER


def test_clear_produce_purgatory_on_stop_replica():
    """testClearProducePurgatoryOnStopReplica: StopReplica(deletePartition=true) at the leader
    completes a waiting acks=-1 produce at once with NOT_LEADER_OR_FOLLOWER (ReplicaManager.
    stopPartitions removes the partition, then completeDelayedFetchOrProduceRequests)."""
    b = Broker()
    b.lair(0, 1, (0, 1))
    corr = b.produce(3, timeout_ms=10)
    assert b.produce_answer(corr) is None
    b.rm.stop_replica(b, TP, delete=True)
    answer = b.produce_answer(corr)
    assert answer is not None and answer.partitions[0][2] == E.NOT_LEADER_OR_FOLLOWER


@pytest.mark.parametrize("version", ["2.2", "2.3"])
def test_stop_replica_leaves_the_produce_purgatory_until_2_3(version):
    """ReplicaManager.stopReplica @2.3.0 deletes the partition without completing what waits on
    it (KAFKA-9198 added completeDelayedFetchOrProduceRequests in 2.4.0): the acks=-1 produce
    stays parked and DelayedProduce.onExpiration answers it REQUEST_TIMED_OUT."""
    b = Broker(version)
    b.lair(0, 1, (0, 1))
    corr = b.produce(3, timeout_ms=10)
    b.rm.stop_replica(b, TP, delete=True)
    assert b.produce_answer(corr) is None
    (dp_id,) = b.rm.delayed_produce
    b.rm.on_produce_timeout(b, dp_id)
    answer = b.produce_answer(corr)
    assert answer is not None and answer.partitions[0][2] == E.REQUEST_TIMED_OUT


def test_delayed_produce_completes_when_every_isr_follower_has_the_batch():
    """DelayedProduce.tryComplete / Partition.checkEnoughReplicasReachOffset (3.7.0
    Partition.scala:1087): an acks=-1 batch is answered once the HW reaches its last offset + 1,
    i.e. once every ISR follower fetched past it; the answer carries the batch's base offset."""
    b = Broker()
    b.lair(0, 1, (0, 1, 2))
    b.produce(2, acks=1)  # offsets 0-1, answered at once
    corr = b.produce(3)  # offsets 2-4: waits for HW 5
    assert b.produce_answer(corr) is None
    b.fetch(1, 5, epoch=1)
    assert b.part().log.high_watermark == 0 and b.produce_answer(corr) is None
    b.fetch(2, 4, epoch=1)
    assert b.part().log.high_watermark == 4 and b.produce_answer(corr) is None
    b.fetch(2, 5, epoch=1)
    assert b.part().log.high_watermark == 5
    assert b.produce_answer(corr).partitions == ((TOPIC, 0, E.NONE, 2),)
    assert not b.rm.delayed_produce


def test_delayed_produce_of_two_partitions_waits_for_both():
    """DelayedProduce.tryComplete: a request is answered only when no partition has acks
    pending; each partition then answers its own error and base offset."""
    b = Broker()
    b.lair(0, 1, (0, 1), partition=0)
    b.lair(0, 1, (0, 1), partition=1)
    corr = b.produce(1, partitions=(0, 1))
    b.fetch(1, 1, epoch=1, partitions=(0,))
    assert b.part(0).log.high_watermark == 1 and b.produce_answer(corr) is None
    b.fetch(1, 1, epoch=1, partitions=(1,))
    assert sorted(b.produce_answer(corr).partitions) == [
        (TOPIC, 0, E.NONE, 0),
        (TOPIC, 1, E.NONE, 0),
    ]


def test_delayed_produce_expires_with_request_timed_out():
    """DelayedProduce.onExpiration: a batch whose HW never came answers REQUEST_TIMED_OUT; the
    records stay in the leader's log."""
    b = Broker()
    b.lair(0, 1, (0, 1))
    corr = b.produce(2, timeout_ms=10)
    (dp_id,) = b.rm.delayed_produce
    b.rm.on_produce_timeout(b, dp_id)
    assert b.produce_answer(corr).partitions == ((TOPIC, 0, E.REQUEST_TIMED_OUT, -1),)
    assert b.part().log.log_end_offset == 2


def test_illegal_required_acks():
    """testIllegalRequiredAcks: ReplicaManager.appendRecords answers INVALID_REQUIRED_ACKS for
    requiredAcks outside {-1, 0, 1}, without appending."""
    b = Broker()
    b.lair(0, 1, (0,), (0, 1))
    corr = b.produce(1, acks=3)
    assert b.produce_answer(corr).partitions[0][2] == "INVALID_REQUIRED_ACKS"
    assert b.part().log.log_end_offset == 0


def test_receive_out_of_order_sequence_exception():
    """testReceiveOutOfOrderSequenceExceptionWithLogStartOffset: an idempotent producer's batch
    whose sequence jumps past the next expected one is refused OUT_OF_ORDER_SEQUENCE_NUMBER at
    once, even with acks=-1 (the log start offset the answer also carries, 0, is not modelled)."""
    b = Broker()
    b.lair(0, 0, (0, 1))
    for seq in range(3):
        b.produce(1, seq=(234, 5, seq))
    assert b.part().log.log_end_offset == 3 and b.part().log.log_start_offset == 0
    corr = b.produce(1, seq=(234, 5, 13))
    assert b.produce_answer(corr).partitions[0][2] == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert b.part().log.log_end_offset == 3


# -- acks=-1 and min.insync.replicas (Partition.appendRecordsToLeader) ---------------------------
def test_acks_all_below_min_isr_is_refused_before_the_append():
    """Partition.appendRecordsToLeader (3.7.0 Partition.scala:1349): with the committed ISR
    smaller than min.insync.replicas an acks=-1 batch is NotEnoughReplicasException, not
    appended; acks=1 and acks=0 are appended (the check is for acks=-1 only)."""
    b = Broker(topic_config={"min.insync.replicas": 2})
    b.lair(0, 1, (0,), (0, 1, 2))
    corr = b.produce(2)
    assert b.produce_answer(corr).partitions == ((TOPIC, 0, E.NOT_ENOUGH_REPLICAS, -1),)
    assert b.part().log.log_end_offset == 0
    corr = b.produce(2, acks=1)
    assert b.produce_answer(corr).partitions == ((TOPIC, 0, E.NONE, 0),)
    assert b.part().log.log_end_offset == 2


def test_min_isr_pre_check_uses_the_committed_isr_not_a_pending_shrink():
    """appendRecordsToLeader reads ``partitionState.isr``: while a shrink to {0} is in flight the
    committed ISR {0, 1, 2} still satisfies min ISR 2, so the batch is appended and waits."""
    b = Broker(
        topic_config={"min.insync.replicas": 2},
        config={"replica.lag.time.max.ms": 100, "replica.fetch.wait.max.ms": 100},
    )
    b.lair(0, 1, (0, 1, 2))
    b.now = 200
    b.rm.maybe_shrink_isr(b)
    assert b.part().pending is not None and b.part().pending.proposed_isr == (0,)
    corr = b.produce(1)
    assert b.produce_answer(corr) is None and b.part().log.log_end_offset == 1


@pytest.mark.parametrize(("version", "error"), [("3.6", E.NOT_ENOUGH_REPLICAS), ("3.7", E.NONE)])
def test_effective_min_isr_is_capped_at_the_replication_factor(version, error):
    """Partition.effectiveMinIsr (KAFKA-15583, 3.7.0): min.insync.replicas 3 on a partition of
    two replicas counts as 2, so a full ISR takes acks=-1; 3.6 compared with 3 and refused."""
    b = Broker(version, topic_config={"min.insync.replicas": 3})
    b.lair(0, 1, (0, 1))
    corr = b.produce(1)
    b.fetch(1, 1, epoch=1)
    assert b.produce_answer(corr).partitions[0][2] == error


def _min_isr_2_leader(version):
    """Leader of epoch 1, ISR {0, 1}, replicas {0, 1, 2}, min ISR 2, lag time 100 ms."""
    b = Broker(
        version,
        topic_config={"min.insync.replicas": 2},
        config={"replica.lag.time.max.ms": 100, "replica.fetch.wait.max.ms": 100},
    )
    b.lair(0, 1, (0, 1), (0, 1, 2))
    return b


def _commit_isr(b, isr, partition_epoch):
    """The controller commits ``isr`` (AlterPartitionManager's isr_committed)."""
    if apply_isr_update(b.part(), b, isr, partition_epoch):
        b.rm.on_hw_increased(b, b.part())
    else:
        b.rm.try_complete_produces(b, TP)


@pytest.mark.parametrize("version", ["2.8", "3.6"])
def test_not_enough_replicas_after_append_before_3_7(version):
    """Partition.checkEnoughReplicasReachOffset (2.8.0 / 3.6.0): the batch was appended with the
    ISR at min ISR; follower 1 never fetches, the ISR shrinks to the leader alone and its LEO
    becomes the HW, so the waiting produce completes with NOT_ENOUGH_REPLICAS_AFTER_APPEND
    (the records stay)."""
    b = _min_isr_2_leader(version)
    corr = b.produce(2)
    assert b.produce_answer(corr) is None
    b.now = 200  # follower 1 no longer caught up: only the ISR holds the HW
    _commit_isr(b, (0,), 1)
    assert b.part().log.high_watermark == 2
    assert b.produce_answer(corr).partitions[0][2] == E.NOT_ENOUGH_REPLICAS_AFTER_APPEND


def test_under_min_isr_the_hw_stays_and_the_produce_times_out_since_3_7():
    """Partition.maybeIncrementLeaderHW (3.7.0 Partition.scala:1150, KAFKA-15583): under min ISR
    the HW does not move, so the same produce is never acknowledged and expires."""
    b = _min_isr_2_leader("3.7")
    corr = b.produce(2)
    b.now = 200
    _commit_isr(b, (0,), 1)
    assert b.part().log.high_watermark == 0 and b.produce_answer(corr) is None
    (dp_id,) = b.rm.delayed_produce
    b.rm.on_produce_timeout(b, dp_id)
    assert b.produce_answer(corr).partitions[0][2] == E.REQUEST_TIMED_OUT


# -- fetch: HW, follower state, leader epochs -----------------------------------------------------
def test_fetch_beyond_high_watermark():
    """testFetchBeyondHighWatermark: a follower reads above the HW; a consumer fetching above the
    (maybe stale) HW gets no error and no records."""
    b = Broker()
    b.lair(0, 0, (0, 1, 2))
    for _ in range(2):
        b.produce(1)
    assert b.part().log.high_watermark == 0
    follower = b.fetch_data(b.fetch(1, 1))
    assert follower.error == E.NONE and list(follower.records.ids)
    consumer = b.fetch_data(b.fetch(-1, 1))
    assert consumer.error == E.NONE and not list(consumer.records.ids)


def test_follower_state_not_updated_if_log_read_fails():
    """testFollowerStateNotUpdatedIfLogReadFails: a fenced fetch (epoch 4 < 5) and a fetch that
    finds a diverging epoch leave the follower's log start and end offsets as they were."""
    b = Broker()
    assert b.lair(0, 5, (0, 1)).error == E.NONE
    assert_follower_state_not_updated_if_log_read_fails(b)


def assert_follower_state_not_updated_if_log_read_fails(b) -> None:
    """testFollowerStateNotUpdatedIfLogReadFails after its set-up (broker 0 leads at epoch 5,
    replicas 0 and 1; ZooKeeper or KRaft): the follower's state starts unknown, a good fetch
    at 0 sets it, a fenced and a diverging fetch leave it."""
    follower = b.part().get_replica(1)
    assert (follower.log_start_offset, follower.log_end_offset) == (-1, -1)
    for _ in range(5):
        b.produce(1)
    assert b.fetch_data(b.fetch(1, 0, epoch=5)).error == E.NONE
    assert (follower.log_start_offset, follower.log_end_offset) == (0, 0)
    assert b.fetch_data(b.fetch(1, 3, epoch=4)).error == E.FENCED_LEADER_EPOCH
    assert (follower.log_start_offset, follower.log_end_offset) == (0, 0)
    diverging = b.fetch_data(b.fetch(1, 3, epoch=5, last_fetched=4))
    assert diverging.error == E.NONE and diverging.diverging_epoch is not None
    assert (follower.log_start_offset, follower.log_end_offset) == (0, 0)


@pytest.mark.parametrize("version", ["2.8", "3.7"])
def test_fetch_messages_when_not_follower_for_one_partition(version):
    """testFetchMessagesWhenNotFollowerForOnePartition: replica 1 fetches partition 0 (replicas
    0, 1) and partition 1 (replicas 0, 2). Partition 0 answers records with the HW before this
    fetch (0), then moves the HW to 1; partition 1 answers UNKNOWN_LEADER_EPOCH (3.7, KAFKA-13837)
    or, in 2.8, no error and no records, and its HW stays 0."""
    b = Broker(version)
    b.lair(0, 0, (0, 1), partition=0)
    b.lair(0, 0, (0, 2), partition=1)
    for _ in range(2):
        b.produce(1, partitions=(0, 1))
    corr = b.fetch(1, 1, epoch=0, partitions=(0, 1), max_wait_ms=1000, min_bytes=0)
    tp0, tp1 = b.fetch_data(corr, 0), b.fetch_data(corr, 1)
    assert (tp0.error, tp0.high_watermark) == (E.NONE, 0) and list(tp0.records.ids)
    if version == "3.7":
        assert tp1.error == E.UNKNOWN_LEADER_EPOCH
    else:
        assert (tp1.error, tp1.high_watermark, list(tp1.records.ids)) == (E.NONE, 0, [])
    assert b.part(0).log.high_watermark == 1
    assert b.part(1).log.high_watermark == 0


def test_follower_fetch_with_default_selector_no_forced_hw_propagation():
    """testFollowerFetchWithDefaultSelectorNoForcedHwPropagation: the follower's fetch at the
    LEO moves the HW but answers the HW from before it (0); a follower fetch with nothing new
    parks, and the HW reaches the follower when MaxWaitMs expires."""
    b = Broker()
    b.lair(0, 1, (0, 1))
    produce = b.produce(2)
    first = b.fetch_data(b.fetch(1, 2, min_bytes=0))
    assert first.high_watermark == 0
    assert b.produce_answer(produce).partitions[0][2] == E.NONE
    corr = b.fetch(1, 2, min_bytes=1000, max_wait_ms=1000)
    assert b.fetch_answer(corr) is None
    (df_id,) = b.rm.delayed_fetch
    b.rm.on_fetch_timeout(b, df_id)
    assert b.fetch_data(corr).high_watermark == 2


@pytest.mark.parametrize(
    ("epoch", "error"),
    [(4, E.FENCED_LEADER_EPOCH), (5, E.NONE), (6, E.UNKNOWN_LEADER_EPOCH), (-1, E.NONE)],
)
def test_fetch_current_leader_epoch_check(epoch, error):
    """Partition.checkCurrentLeaderEpoch via localLogWithEpochOrThrow (KIP-320, 2.1+): a fetch
    whose CurrentLeaderEpoch is below the leader's is fenced, above it unknown, absent skipped;
    an error answer reads nothing."""
    b = Broker()
    b.lair(0, 5, (0, 1))
    b.produce(3, acks=1)
    pd = b.fetch_data(b.fetch(1, 0, epoch=epoch))
    assert pd.error == error
    assert bool(list(pd.records.ids)) is (error == E.NONE)


def test_fetch_current_leader_epoch_ignored_before_kip_320():
    """2.0.0 ReplicaManager.readFromLocalLog had no CurrentLeaderEpoch: any epoch reads."""
    b = Broker("2.0")
    b.lair(0, 5, (0, 1))
    b.produce(3, acks=1)
    assert b.fetch_data(b.fetch(1, 0, epoch=4)).error == E.NONE


def test_follower_fetch_at_a_follower_is_not_leader():
    """Partition.localLogWithEpochOrThrow(fetchOnlyFromLeader = true) for a replica fetch: a
    follower replica answers NOT_LEADER_OR_FOLLOWER (its epoch matching the fetch's)."""
    b = Broker()
    b.lair(1, 3, (0, 1))
    assert b.fetch_data(b.fetch(2, 0, epoch=3)).error == E.NOT_LEADER_OR_FOLLOWER


# -- the fetch purgatory and leadership changes ---------------------------------------------------
def test_become_follower_while_new_client_fetch_in_purgatory():
    """testBecomeFollowerWhileNewClientFetchInPurgatory: a consumer fetch (ClientMetadata,
    CurrentLeaderEpoch 1) parked at the leader answers FENCED_LEADER_EPOCH when the broker
    becomes a follower at epoch 2."""
    b = Broker()
    b.lair(0, 1, (0, 1))
    corr = b.fetch(-1, 0, epoch=1, max_wait_ms=10)
    assert b.fetch_answer(corr) is None
    b.lair(1, 2, (0, 1))
    assert b.fetch_data(corr).error == E.FENCED_LEADER_EPOCH


def test_delta_to_follower_completes_fetch():
    """testDeltaToFollowerCompletesFetch: a follower fetch parked at the leader (min bytes
    never reached) answers NOT_LEADER_OR_FOLLOWER when a delta makes the broker a follower."""
    b = Broker()
    b.delta(0, 0, (0, 1), (0, 1), 0)
    corr = b.fetch(1, 0, min_bytes=1 << 30, max_wait_ms=1000)
    assert b.fetch_answer(corr) is None
    b.delta(1, 1, (0, 1), (0, 1), 1)
    assert b.part().get_leader_epoch() == 1
    assert b.fetch_data(corr).error == E.NOT_LEADER_OR_FOLLOWER


def test_clear_fetch_purgatory_on_stop_replica():
    """testClearFetchPurgatoryOnStopReplica: StopReplica(deletePartition=true) at the leader
    answers a parked consumer fetch at once with NOT_LEADER_OR_FOLLOWER."""
    b = Broker()
    b.lair(0, 1, (0, 1))
    corr = b.fetch(-1, 0, epoch=1, max_wait_ms=10)
    assert b.fetch_answer(corr) is None
    b.rm.stop_replica(b, TP, delete=True)
    assert b.fetch_data(corr).error == E.NOT_LEADER_OR_FOLLOWER


def test_fetch_answers_now_or_at_max_wait():
    """testFetchRequestRateMetrics (its fetches, not its counters): a consumer fetch with no
    MaxWaitMs answers at once; with MaxWaitMs 10 and nothing to read it waits for the timer."""
    b = Broker()
    b.lair(0, 1, (0, 1))
    assert b.fetch_data(b.fetch(-1, 0)).error == E.NONE
    corr = b.fetch(-1, 0, max_wait_ms=10)
    assert b.fetch_answer(corr) is None
    (df_id,) = b.rm.delayed_fetch
    b.rm.on_fetch_timeout(b, df_id)
    assert b.fetch_data(corr).error == E.NONE


# -- fetch from follower / preferred read replica (KIP-392) --------------------------------------
def test_fetch_from_leader_always_allowed():
    """testFetchFromLeaderAlwaysAllowed: a consumer with ClientMetadata reads the leader, with
    or without a CurrentLeaderEpoch."""
    b = Broker()
    b.lair(0, 1, (0, 1))
    assert b.fetch_data(b.fetch(-1, 0, epoch=1, rack="")).error == E.NONE
    assert b.fetch_data(b.fetch(-1, 0, rack="")).error == E.NONE


def test_fetch_follower_allowed_for_new_clients():
    """testFetchFollowerNotAllowedForOlderClients, its Fetch v11+ half: a consumer with
    ClientMetadata may read a follower replica; it reads up to the follower's own HW."""
    b = Broker()
    b.lair(1, 0, (0, 1))
    assert b.fetch_data(b.fetch(-1, 0, epoch=0)).error == E.NONE
    log = b.part().log
    log.append_as_leader([7, 8, 9], [10] * 3, 0, 0)  # (as replicated from leader 1)
    log.update_high_watermark(2)
    pd = b.fetch_data(b.fetch(-1, 0, epoch=0))
    assert (pd.error, list(pd.records.ids), pd.high_watermark) == (E.NONE, [7, 8], 2)


def test_preferred_replica_as_follower():
    """testPreferredReplicaAsFollower / testFetchFromFollowerShouldNotRunPreferLeaderSelect:
    a follower serves the consumer itself and never names a preferred read replica."""
    b = Broker(config={"replica.selector.class": RACK_AWARE}, racks={0: "rack-a", 1: "rack-b"})
    b.lair(1, 1, (0, 1))
    pd = b.fetch_data(b.fetch(-1, 0, rack="rack-b"))
    assert pd.error == E.NONE and pd.preferred_read_replica == -1


def test_preferred_replica_as_leader():
    """testPreferredReplicaAsLeader / testReplicaSelector: with no follower in the client's rack
    the selector picks the leader, which the answer does not name (-1)."""
    b = Broker(config={"replica.selector.class": RACK_AWARE})
    b.lair(0, 1, (0, 1))
    pd = b.fetch_data(b.fetch(-1, 0, rack="rack-a"))
    assert pd.error == E.NONE and pd.preferred_read_replica == -1


@pytest.mark.parametrize(("version", "preferred"), [("3.3", 1), ("3.7", -1)])
def test_preferred_replica_as_leader_when_same_rack_follower_is_out_of_isr(version, preferred):
    """testPreferredReplicaAsLeaderWhenSameRackFollowerIsOutOfIsr (3.4+, KAFKA-14372): the
    follower in the client's rack is not in the ISR, so the selector does not see it and the
    leader serves the fetch. 3.3.0's findPreferredReadReplica had no ISR filter and named it."""
    b = Broker(
        version, config={"replica.selector.class": RACK_AWARE}, racks={0: "rack-a", 1: "rack-b"}
    )
    b.lair(0, 1, (0,), (0, 1))
    b.produce(1)
    b.fetch(1, 0)  # the follower's position: offset 0
    assert b.part().in_sync_replica_ids() == {0}
    pd = b.fetch_data(b.fetch(-1, 0, rack="rack-b"))
    assert pd.error == E.NONE and pd.preferred_read_replica == preferred


@pytest.mark.parametrize(
    "version",
    [
        "3.1",
        "3.7",
    ],
)
def test_fetch_should_return_immediately_when_preferred_read_replica_is_defined(version):
    """testFetchShouldReturnImmediatelyWhenPreferredReadReplicaIsDefined (3.2+, KAFKA-13767:
    ReplicaManager.fetchMessages' hasPreferredReadReplica): once the follower in the client's
    rack has fetched, a consumer fetch (MinBytes 1, MaxWaitMs 5000, nothing to read) answers at
    once naming it, and nothing enters the fetch purgatory. 3.1 parked it until MaxWaitMs."""
    b = Broker(
        version, config={"replica.selector.class": RACK_AWARE}, racks={0: "rack-a", 1: "rack-b"}
    )
    b.lair(0, 1, (0, 1))
    b.fetch(1, 0, epoch=1)
    corr = b.fetch(-1, 0, rack="rack-b", min_bytes=1, max_wait_ms=5000)
    if version == "3.1":
        assert b.fetch_answer(corr) is None
        (df_id,) = b.rm.delayed_fetch
        b.rm.on_fetch_timeout(b, df_id)
    else:
        assert not b.rm.delayed_fetch
    assert b.fetch_data(corr).preferred_read_replica == 1


# -- becomeLeaderOrFollower: epochs ---------------------------------------------------------------
def test_fetchers_are_not_restarted_if_leader_epoch_is_not_bumped_with_zk_path():
    """testFetcherAreNotRestartedIfLeaderEpochIsNotBumpedWithZkPath: a LeaderAndIsr with the
    same leader epoch (a bumped partition epoch only) is ignored, STALE_CONTROLLER_EPOCH, and the
    fetcher stays; a bumped leader epoch moves the fetcher to the new leader from offset 0."""
    b = Broker()
    assert b.lair(1, 0, (0, 1), (0, 1)).partition_errors == ((TOPIC, 0, E.NONE),)
    part = b.part()
    assert (part.is_leader, part.get_leader_epoch(), part.get_partition_epoch()) == (False, 0, 0)
    (key,) = b.fetchers
    assert key[0] == 1 and b.fetchers[key].partitions[TP].current_leader_epoch == 0
    thread, fetch_state = b.fetchers[key], b.fetchers[key].partitions[TP]
    answer = b.lair(1, 0, (0, 1), (0, 1, 2), partition_epoch=1)
    assert answer.partition_errors == ((TOPIC, 0, E.STALE_CONTROLLER_EPOCH),)
    assert (part.get_leader_epoch(), part.get_partition_epoch()) == (0, 0)
    assert b.fetchers == {key: thread} and thread.partitions[TP] is fetch_state
    b.lair(2, 1, (0, 1, 2), (0, 1, 2), partition_epoch=2)
    assert (part.is_leader, part.get_leader_epoch(), part.get_partition_epoch()) == (False, 1, 2)
    (key,) = b.fetchers
    state = b.fetchers[key].partitions[TP]
    assert key[0] == 2 and (state.current_leader_epoch, state.fetch_offset) == (1, 0)


def test_become_leader_or_follower_ignores_an_older_leader_epoch():
    """ReplicaManager.becomeLeaderOrFollower (3.7.0 ReplicaManager.scala:2104): a partition
    state with a leader epoch below the partition's is STALE_CONTROLLER_EPOCH and not applied;
    the request's other partitions are."""
    b = Broker()
    b.lair(0, 5, (0, 1))
    b.lair(0, 1, (0, 1), partition=1)
    states = (
        PartitionState(TOPIC, 0, 0, 1, 4, (0, 1), 1, (0, 1)),
        PartitionState(TOPIC, 1, 0, 1, 2, (0, 1), 1, (0, 1)),
    )
    b.rm.become_leader_or_follower(b, CONTROLLER, LeaderAndIsrRequest(CONTROLLER, 0, states))
    answer = [m for d, m in b.sent if d == CONTROLLER][-1]
    assert answer.error == E.NONE
    assert dict(((t, p), e) for t, p, e in answer.partition_errors) == {
        (TOPIC, 0): E.STALE_CONTROLLER_EPOCH,
        (TOPIC, 1): E.NONE,
    }
    assert b.part(0).is_leader and b.part(0).get_leader_epoch() == 5
    assert not b.part(1).is_leader and b.part(1).get_leader_epoch() == 2


def test_become_leader_or_follower_refuses_an_older_controller_epoch():
    """ReplicaManager.becomeLeaderOrFollower: a request whose controller epoch is below the
    last one seen is answered STALE_CONTROLLER_EPOCH as a whole and changes nothing."""
    b = Broker()
    b.lair(0, 1, (0, 1), controller_epoch=3)
    answer = b.lair(1, 2, (0, 1), controller_epoch=2)
    assert answer.error == E.STALE_CONTROLLER_EPOCH
    assert b.part().is_leader and b.part().get_leader_epoch() == 1


def test_become_leader_or_follower_for_a_partition_not_assigned_here():
    """ReplicaManager.becomeLeaderOrFollower (3.7.0 ReplicaManager.scala:2090-2102): a partition
    state whose replicas do not include this broker is answered UNKNOWN_TOPIC_OR_PARTITION (no
    Kafka unit test of its own)."""
    b = Broker()
    answer = b.lair(1, 1, (1, 2), (1, 2))
    assert answer.error == E.NONE
    assert answer.partition_errors == ((TOPIC, 0, E.UNKNOWN_TOPIC_OR_PARTITION),)


@pytest.mark.parametrize(
    ("version", "state", "offset", "last_fetched"),
    [("2.6", TRUNCATING, 5, -1), ("3.7", FETCHING, 10, 1)],
)
def test_become_follower_when_leader_is_unchanged_but_missed_leader_update(
    version, state, offset, last_fetched
):
    """testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate(Ibp26): a follower of broker
    1 at epoch 1 gets epoch 3 with the same leader. It restarts its fetcher; before IBP 2.7 it
    truncates first (OffsetsForLeaderEpoch), since 2.7 it fetches from its LEO with its last
    fetched epoch and truncates on a diverging epoch."""
    b = Broker(version)
    b.lair(1, 1, (0, 1))
    log = b.part().log
    log.append_as_leader(list(range(10)), [10] * 10, 1, 0)  # (as replicated: localLogOffset 10)
    log.update_high_watermark(5)
    b.lair(1, 3, (0, 1))
    (key,) = b.fetchers
    st = b.fetchers[key].partitions[TP]
    assert key[0] == 1 and st.current_leader_epoch == 3 and st.state == state
    # ReplicaManager.initialFetchOffset: the HW (truncate from there), or the LEO with the
    # last fetched epoch when truncation on fetch is supported
    assert (st.fetch_offset, st.last_fetched_epoch) == (offset, last_fetched)


# -- isr-expiration through the ReplicaManager (IsrExpirationTest) -------------------------------
def _isr_broker():
    b = Broker(config={"replica.lag.time.max.ms": 100, "replica.fetch.wait.max.ms": 100})
    b.lair(0, 1, (0, 1, 2))
    b.produce(10, acks=1)
    return b


def test_isr_expiration_for_stuck_followers():
    """testIsrExpirationForStuckFollowers, run by the isr-expiration task
    (ReplicaManager.maybeShrinkIsr): the follower that stopped fetching 150 ms ago is proposed
    out of the ISR; the one still fetching stays."""
    b = _isr_broker()
    b.fetch(1, 9)
    b.fetch(2, 9)
    b.now = 150
    b.fetch(1, 10)
    b.take()
    b.rm.maybe_shrink_isr(b)
    pending = b.part().pending
    assert pending is not None and pending.kind == "shrink"
    assert (pending.replicas, pending.proposed_isr) == ((2,), (0, 1))
    assert b.part().in_sync_replica_ids() == {0, 1, 2}  # until the controller commits it


def test_isr_expiration_if_no_fetch_request_made():
    """testIsrExpirationIfNoFetchRequestMade: followers that never fetch leave the ISR once the
    lag time has passed since the leader took over."""
    b = _isr_broker()
    b.now = 100
    b.rm.maybe_shrink_isr(b)
    assert b.part().pending is None
    b.now = 150
    b.rm.maybe_shrink_isr(b)
    assert b.part().pending.proposed_isr == (0,)


def test_isr_expiration_for_caught_up_followers():
    """testIsrExpirationForCaughtUpFollowers: followers at the leader's LEO are never shrunk,
    however long ago they fetched."""
    b = _isr_broker()
    b.fetch(1, 10)
    b.fetch(2, 10)
    b.now = 10_000
    b.rm.maybe_shrink_isr(b)
    assert b.part().pending is None


# -- ReplicaTest -----------------------------------------------------------------------------------
def test_initial_state():
    """ReplicaTest.testInitialState: log start and end offsets unknown (-1), never caught up,
    never fetched, lastFetchLeaderLogEndOffset 0."""
    st = ReplicaState(1)
    assert (
        st.log_start_offset,
        st.log_end_offset,
        st.last_fetch_leader_log_end_offset,
        st.last_fetch_time_ms,
        st.last_caught_up_time_ms,
    ) == (-1, -1, 0, 0, NEVER_MS)


@pytest.mark.parametrize("in_sync", [True, False])
def test_reset_replica_state_when_new_leader_is_elected(in_sync):
    """ReplicaTest.testResetReplicaStateWhenNewLeaderIsElectedAndReplicaIs(Not)InSync: a new
    leader knows nothing of its followers (offsets -1, never fetched); an ISR follower counts as
    caught up now, the others never."""
    b = Broker()
    b.lair(1, 1, (0, 1, 2))
    b.now = 5_000
    b.lair(0, 2, (0, 1) if in_sync else (0, 2), (0, 1, 2))
    st = b.part().get_replica(1)
    assert (st.log_start_offset, st.log_end_offset, st.last_fetch_leader_log_end_offset) == (
        -1,
        -1,
        -1,
    )
    assert st.last_fetch_time_ms in (0, NEVER_MS)
    assert st.last_caught_up_time_ms == (5_000 if in_sync else NEVER_MS)


@pytest.mark.parametrize(("version", "expected"), [("2.8", 12), ("3.7", 15)])
def test_last_fetch_leader_log_end_offset_never_goes_back_since_3_3(version, expected):
    """Replica.updateFetchStateOrThrow: 3.7.0 keeps max(leaderEndOffset, the previous
    lastFetchLeaderLogEndOffset); 2.8.0 Replica.updateFetchState simply assigned it."""
    b = Broker(version)
    b.lair(0, 1, (0, 1))
    part = b.part()
    part.update_follower_fetch_state(b, 1, 5, 1, 15, 1_000)
    part.update_follower_fetch_state(b, 1, 6, 2, 12, 2_000)
    st = part.get_replica(1)
    assert (st.log_start_offset, st.log_end_offset) == (2, 6)
    assert st.last_fetch_leader_log_end_offset == expected
