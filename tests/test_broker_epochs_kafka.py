"""Broker epochs in the replication protocol, ported from Kafka's tests: KIP-903 (KRaft, 3.5+)
and KIP-380 (ZooKeeper mode, 2.2+).

KIP-903 (``metadata.version`` 3.5-IV1; kafkasim's 3.5 profile): a follower's Fetch carries its
broker epoch (Fetch v15 ``ReplicaState.ReplicaEpoch``), the leader keeps it per replica
(``ReplicaState.brokerEpoch``, ``kafkasim.core.rules.ReplicaState.broker_epoch``), a KRaft leader
adds a follower to the ISR only if that epoch is the one its metadata cache holds
(``Partition.isReplicaIsrEligible``) and sends each proposed ISR member with its epoch
(AlterPartition v3 ``NewIsrWithEpochs``), which the KRaft controller checks (INELIGIBLE_REPLICA);
since 3.7 (KAFKA-15221) the leader also refuses a fetch from an older broker epoch. KIP-380: the
ZooKeeper controller puts its view of each broker's epoch (the czxid of /brokers/ids/<id>) in
LeaderAndIsr, UpdateMetadata and StopReplica, and a broker refuses one older than its own with
STALE_BROKER_EPOCH (2.2-2.5 also refused a newer one, KAFKA-9839).

Sources (apache/kafka): trunk of Sept 2024 for
``core/src/test/scala/unit/kafka/cluster/PartitionTest.scala`` (every case that names a broker
epoch: testIsrExpansion, testIsReplicaIsrEligibleWithEmptyReplicaMap,
testHighWatermarkIncreasesWithFencedOrShutdownFollower,
testIsrNotExpandedIfReplicaIsFencedOrShutdown,
testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache,
testFenceFollowerFetchWithStaleBrokerEpoch, testIsrNotExpandedIfReplicaIsInControlledShutdown,
testMaybeShrinkIsr), ``ReplicaTest.scala`` (testInitialState, testFenceStaleUpdates, the
broker epoch of the testResetReplicaState* cases), ``AlterPartitionManagerTest.scala``
(testBasicWithBrokerEpoch over its metadata versions), ``RemoteLeaderEndPointTest.scala``
(testBrokerEpochSupplier) and ``metadata/.../ReplicationControlManagerTest.java``
(testAlterPartitionShouldRejectFencedBrokers, ...BrokersWithStaleEpoch, ...ShuttingDownBrokers,
here on the real ClusterControlManager of tests/test_replication_control_manager_kafka.py; the
same three run against a fake in tests/test_replication_control.py); tag 3.7.0 for the ZooKeeper
ones: ``core/src/test/scala/unit/kafka/server/BrokerEpochIntegrationTest.scala`` (all five) and
the broker-epoch cases of ``KafkaApisTest.scala`` (test{LeaderAndIsr,UpdateMetadata,StopReplica}
RequestWith{Current,Newer,Stale}BrokerEpoch*), with the 2.2.0 source for the releases before
KAFKA-9839.

Adaptation. Kafka's Partition reads a mocked MetadataCache; here it reads a ``FakeContext``
(``kraft=True`` for a KRaftMetadataCache: ``live_brokers`` are the registered, unfenced brokers
not in controlled shutdown, ``metadata.broker_epochs`` what getAliveBrokerEpoch answers;
``kraft=False`` for a ZkMetadataCache, whose live brokers are the alive ones). ``fetchFollower`` is
``Partition.update_follower_fetch_state`` with the fetch's broker epoch (Kafka's
defaultBrokerEpoch(id) = id + 1000, AbstractPartitionTest's broker 101 and its followers 102,
103). The MockAlterPartitionManager's ``isrUpdates`` is the partition's pending change
(``Partition.pending``, whose ``isr_with_broker_epoch`` is ``leaderAndIsr.isrWithBrokerEpoch``);
``completeIsrUpdate`` is the committed answer (``isr_committed``) and ``failIsrUpdate(error)``
``handle_alter_partition_error``. The ZooKeeper-mode requests are given to the broker's
KafkaApis handlers (``kafkasim.runtime.kafka_apis``) from a controller that does not exist (as
BrokerEpochIntegrationTest's controller id 2), and what the broker sends back is recorded.
kafkasim's brokers answer UpdateMetadata and StopReplica only to refuse them for a stale broker
epoch (the controller acts on no answer), so a successful one is checked by its effect.

Not repeated here: ControllerIntegrationTest.testControllerRejectControlledShutdownRequestWith
StaleBrokerEpoch (tests/test_controller.py), testControllerDetectsBouncedBrokers and the
STALE_BROKER_EPOCH cases of testAlterPartitionErrors (tests/test_zk_controller_kafka.py). Left
out: PartitionLockTest / ReplicaManagerConcurrencyTest (threads) and KafkaApisTest's request
versions and throttling.
"""

from __future__ import annotations

import pytest
from test_controller_state_machines_kafka import TP as SM_TP
from test_controller_state_machines_kafka import _harness
from test_fetcher_thread_kafka import TP as FETCH_TP
from test_fetcher_thread_kafka import Env, batch

from kafkasim.core import errors as E
from kafkasim.core.alter_partition_manager import (
    handle_alter_partition_error,
    isr_committed,
    propose_isr,
)
from kafkasim.core.fake import FakeContext
from kafkasim.core.messages import (
    AlterPartitionRequest,
    FetchPartition,
    FetchRequest,
    FetchResponse,
    LeaderAndIsrRequest,
    LeaderAndIsrResponse,
    PartitionState,
    StopReplicaRequest,
    StopReplicaResponse,
    UpdateMetadataRequest,
    UpdateMetadataResponse,
)
from kafkasim.core.replica_manager import ReplicaManager
from kafkasim.core.rules import NEVER_MS
from kafkasim.runtime import kafka_apis
from kafkasim.runtime.cluster import Cluster
from tests.test_replication_control_manager_kafka import Ctx, default_broker_epoch

BROKER = 101              # AbstractPartitionTest.brokerId
R1, R2 = BROKER + 1, BROKER + 2
TOPIC = "test-topic"
LEADER_EPOCH = 5
T0 = 1_000                # MockTime's start (any time past 0)


def broker_epoch(broker_id: int) -> int:
    """AbstractPartitionTest.defaultBrokerEpoch."""
    return broker_id + 1000


# ================================================================================ PartitionTest
def _leader(replicas, isr, *, kraft=True, version="4.0", live=None, epochs=None,
            records: int = 10):
    """A leader at epoch 5 (partition epoch 1) over ``seedLogData(10 records, epoch 4)``: a
    KRaft (or ZooKeeper) metadata cache holding ``live`` brokers with ``epochs``."""
    live = tuple(replicas if live is None else live)
    if epochs is None:
        epochs = {b: broker_epoch(b) for b in live}
    ctx = FakeContext(BROKER, kafka_version=version, live_brokers=live, kraft=kraft,
                      broker_epochs=epochs)
    ctx.broker_epoch = broker_epoch(BROKER)
    ctx.now = T0
    part = ctx.partition(TOPIC, 0)
    if records:
        part.log.append_as_leader(list(range(records)), [1] * records, 4, 0)
    part.make_leader(ctx, LEADER_EPOCH, tuple(isr), tuple(replicas), 1, 0)
    return ctx, part


def _fetch(ctx, part, replica: int, offset: int | None = None, epoch: int | None = None):
    """fetchFollower at the leader's LEO (or ``offset``) with the replica's broker epoch (Kafka:
    defaultBrokerEpoch unless the test gives one)."""
    return part.update_follower_fetch_state(
        ctx, replica, part.log.log_end_offset if offset is None else offset, 0,
        part.log.log_end_offset, ctx.now, broker_epoch(replica) if epoch is None else epoch)


def _complete(ctx, part, partition_epoch: int):
    """MockAlterPartitionManager.completeIsrUpdate: the controller commits the proposal."""
    pending = part.pending
    isr_committed(ctx, part, pending.kind, pending.proposed_isr, partition_epoch)


def _fail(ctx, part, error: str):
    """MockAlterPartitionManager.failIsrUpdate."""
    handle_alter_partition_error(ctx, part, part.pending, error)


def _state(part, replica):
    st = part.get_replica(replica)
    return (st.last_caught_up_time_ms, st.log_start_offset, st.log_end_offset, st.broker_epoch)


def _maximal(ctx, part):
    return set(part.maximal_isr(ctx))


@pytest.mark.parametrize("version", ["3.4", "3.7"])
def test_isr_expansion(version):
    """testIsrExpansion: a follower at the HW joins the ISR; in ZooKeeper mode every broker
    epoch in the proposed ISR is -1 (AlterPartition v3, 3.5+; before, no epochs at all)."""
    ctx, part = _leader((BROKER, R1), (BROKER,), kraft=False, version=version)
    ctx.replica_manager = ReplicaManager()
    ctx.replica_manager.partitions = ctx.partitions
    assert _state(part, R1) == (NEVER_MS, -1, -1, None)
    _fetch(ctx, part, R1, 3)
    assert part.isr == (BROKER,) and part.pending is None
    assert _state(part, R1) == (NEVER_MS, 0, 3, broker_epoch(R1))
    _fetch(ctx, part, R1, 10)
    assert part.pending.proposed_isr == (BROKER, R1)
    assert part.pending.isr_with_broker_epoch == \
        (((BROKER, -1), (R1, -1)) if version == "3.7" else ())
    assert part.isr == (BROKER,) and _maximal(ctx, part) == {BROKER, R1}
    assert _state(part, R1) == (T0, 0, 10, broker_epoch(R1))
    _complete(ctx, part, 2)
    assert part.isr == (BROKER, R1)
    assert ctx.meters["IsrExpandsPerSec"] == 1 and "IsrShrinksPerSec" not in ctx.meters


def test_is_replica_isr_eligible_with_empty_replica_map():
    """testIsReplicaIsrEligibleWithEmptyReplicaMap: the topic is deleted while a follower's
    fetch is read (Partition.delete empties the replica map): recording the fetch is a no-op,
    the replica is not ISR-eligible, nothing throws."""
    ctx, part = _leader((BROKER, R1), (BROKER,), records=6)
    part.remote.clear()   # Partition.delete: remoteReplicasMap.clear()
    assert not part.is_replica_isr_eligible(ctx, R1)
    assert _fetch(ctx, part, R1, 3) is False
    assert part.pending is None


@pytest.mark.parametrize("broker_state", ["fenced", "shutdown", "unfenced"])
def test_high_watermark_increases_with_fenced_or_shutdown_follower(broker_state):
    """testHighWatermarkIncreasesWithFencedOrShutdownFollower: after the controller shrinks the
    ISR to the leader, a caught-up follower that is fenced or in controlled shutdown no longer
    holds the HW back (3.6+); an unfenced one does."""
    ctx, part = _leader((BROKER, R1), (BROKER, R1))
    assert set(part.isr) == _maximal(ctx, part) == {BROKER, R1}
    _fetch(ctx, part, R1)
    assert _state(part, R1) == (T0, 0, 10, broker_epoch(R1))
    assert part.log.high_watermark == 10
    if broker_state == "fenced":     # isBrokerFenced: no longer alive, no alive epoch
        ctx.live_brokers = (BROKER,)
        del ctx.metadata.broker_epochs[R1]
    elif broker_state == "shutdown":  # isBrokerShuttingDown: alive, not ISR-eligible
        ctx.live_brokers = (BROKER,)
    part.log.append_as_leader(list(range(10, 20)), [1] * 10, LEADER_EPOCH, 0)
    part.make_leader(ctx, LEADER_EPOCH, (BROKER,), (BROKER, R1), 2, 0)   # stays leader
    assert part.is_leader and set(part.isr) == _maximal(ctx, part) == {BROKER}
    assert part.get_out_of_sync_replicas(ctx) == set()
    assert part.log.high_watermark == (10 if broker_state == "unfenced" else 20)


@pytest.mark.parametrize("quorum", ["zk", "kraft"])
def test_isr_not_expanded_if_replica_is_fenced_or_shutdown(quorum):
    """testIsrNotExpandedIfReplicaIsFencedOrShutdown: the controller refuses the expansion
    (INELIGIBLE_REPLICA) and the leader goes back to its ISR; once its metadata says the
    follower is fenced (KRaft) or offline (ZooKeeper) no expansion is tried; when it is back,
    the next fetch expands the ISR again."""
    kraft = quorum == "kraft"
    ctx, part = _leader((BROKER, R1), (BROKER,), kraft=kraft)
    ctx.replica_manager = ReplicaManager()
    ctx.replica_manager.partitions = ctx.partitions

    def mark_remote_replica_eligible(eligible: bool) -> None:
        ctx.live_brokers = (BROKER, R1) if eligible else (BROKER,)
        if kraft:
            ctx.metadata.broker_epochs = {b: broker_epoch(b) for b in ctx.live_brokers}

    mark_remote_replica_eligible(True)
    _fetch(ctx, part, R1)
    assert _state(part, R1) == (T0, 0, 10, broker_epoch(R1))
    assert part.isr == (BROKER,) and _maximal(ctx, part) == {BROKER, R1}
    assert part.pending is not None
    _fail(ctx, part, E.INELIGIBLE_REPLICA)
    assert part.isr == (BROKER,) and _maximal(ctx, part) == {BROKER}
    assert part.pending is None
    mark_remote_replica_eligible(False)
    _fetch(ctx, part, R1)
    assert _maximal(ctx, part) == {BROKER} and part.pending is None
    mark_remote_replica_eligible(True)
    _fetch(ctx, part, R1)
    assert part.isr == (BROKER,) and _maximal(ctx, part) == {BROKER, R1}
    assert part.pending is not None and part.pending.is_inflight
    _complete(ctx, part, 1)
    assert set(part.isr) == _maximal(ctx, part) == {BROKER, R1} and part.pending is None


def test_isr_can_expanded_if_broker_epochs_match_with_kraft_metadata_cache():
    """testIsrCanExpandedIfBrokerEpochsMatchWithKraftMetadataCache: a follower whose fetch
    carries an epoch the metadata cache no longer holds (it is bumped right after the fetch is
    recorded) is caught up but not added; its next fetch, with the current epoch, is. The
    proposed ISR names each member's epoch: -1 for a member that never fetched."""
    ctx, part = _leader((BROKER, R1, R2), (BROKER, R2), epochs={
        BROKER: broker_epoch(BROKER), R2: broker_epoch(R2)})
    wrong = broker_epoch(R1) - 1
    answers = [wrong]   # getAliveBrokerEpoch(R1): the wrong epoch once, then the right one

    epochs = ctx.metadata.broker_epochs

    def get_alive_broker_epoch(broker_id):
        if broker_id == R1:
            return answers.pop(0) if answers else broker_epoch(R1)
        return epochs.get(broker_id)

    ctx.metadata.get_alive_broker_epoch = get_alive_broker_epoch
    _fetch(ctx, part, R1, epoch=wrong)
    assert _state(part, R1) == (T0, 0, 10, wrong)
    assert set(part.isr) == _maximal(ctx, part) == {BROKER, R2} and part.pending is None
    _fetch(ctx, part, R1)
    assert _state(part, R1) == (T0, 0, 10, broker_epoch(R1))
    assert set(part.isr) == {BROKER, R2} and _maximal(ctx, part) == {BROKER, R1, R2}
    assert part.pending.isr_with_broker_epoch == (
        (BROKER, broker_epoch(BROKER)), (R2, -1), (R1, broker_epoch(R1)))


@pytest.mark.parametrize("version", ["3.6", "3.7"])
def test_fence_follower_fetch_with_stale_broker_epoch(version):
    """testFenceFollowerFetchWithStaleBrokerEpoch (3.7+, KAFKA-15221): a fetch from an older
    broker epoch than the metadata cache's throws NotLeaderOrFollowerException and leaves the
    follower's state as it was; 3.6 still recorded it."""
    ctx, part = _leader((BROKER, R1), (BROKER, R1), version=version)
    _fetch(ctx, part, R1, epoch=broker_epoch(R1))
    expected = (T0, 0, 10, broker_epoch(R1))
    ctx.now += 10
    wrong = broker_epoch(R1) - 1
    if version == "3.6":
        _fetch(ctx, part, R1, epoch=wrong)
        assert _state(part, R1) == (T0 + 10, 0, 10, wrong)
        return
    with pytest.raises(E.NotLeaderOrFollowerException, match="stale fetch state update"):
        _fetch(ctx, part, R1, epoch=wrong)
    assert _state(part, R1) == expected


def test_isr_not_expanded_if_replica_is_in_controlled_shutdown():
    """testIsrNotExpandedIfReplicaIsInControlledShutdown: as the fenced case, with a follower
    in controlled shutdown (alive, its epoch unchanged, but not ISR-eligible)."""
    ctx, part = _leader((BROKER, R1), (BROKER,))
    ctx.replica_manager = ReplicaManager()
    ctx.replica_manager.partitions = ctx.partitions
    _fetch(ctx, part, R1)
    assert _state(part, R1) == (T0, 0, 10, broker_epoch(R1))
    assert part.isr == (BROKER,) and _maximal(ctx, part) == {BROKER, R1}
    _fail(ctx, part, E.INELIGIBLE_REPLICA)
    assert _maximal(ctx, part) == {BROKER} and part.pending is None
    ctx.live_brokers = (BROKER,)   # isBrokerShuttingDown(R1)
    _fetch(ctx, part, R1)
    assert _maximal(ctx, part) == {BROKER} and part.pending is None
    ctx.live_brokers = (BROKER, R1)
    _fetch(ctx, part, R1)
    assert _maximal(ctx, part) == {BROKER, R1} and part.pending.is_inflight
    _complete(ctx, part, 1)
    assert set(part.isr) == _maximal(ctx, part) == {BROKER, R1}


def test_maybe_shrink_isr():
    """testMaybeShrinkIsr: a follower that never fetched leaves the ISR once
    replica.lag.time.max.ms has passed; the shrink names each remaining member with its
    broker epoch (the leader's own, the fetching follower's)."""
    ctx, part = _leader((BROKER, R1, R2), (BROKER, R1, R2))
    ctx.replica_manager = ReplicaManager()
    ctx.replica_manager.partitions = ctx.partitions
    assert part.log.high_watermark == 0
    _fetch(ctx, part, R1)
    assert _state(part, R2)[:3] == (T0, -1, -1)
    part.maybe_shrink_isr(ctx)
    assert part.pending is None and set(part.isr) == {BROKER, R1, R2}
    ctx.now += ctx.config["replica.lag.time.max.ms"] + 1
    part.maybe_shrink_isr(ctx)
    assert part.pending.proposed_isr == (BROKER, R1)
    assert part.pending.isr_with_broker_epoch == (
        (BROKER, broker_epoch(BROKER)), (R1, broker_epoch(R1)))
    assert set(part.isr) == _maximal(ctx, part) == {BROKER, R1, R2}
    assert part.log.high_watermark == 0
    _complete(ctx, part, 2)
    assert ctx.meters["IsrShrinksPerSec"] == 1 and part.get_partition_epoch() == 2
    assert set(part.isr) == _maximal(ctx, part) == {BROKER, R1}
    assert part.log.high_watermark == part.log.log_end_offset


@pytest.mark.parametrize("version", ["3.4", "3.5"])
def test_isr_expansion_with_broker_epoch_mismatch_by_version(version):
    """(plus) Partition.isReplicaIsrEligible by release: before 3.5 a KRaft leader does not look
    at broker epochs, so a fetch from an epoch the metadata cache does not hold still expands
    the ISR (and AlterPartition names no epochs); from 3.5 it does not, and a fetch without an
    epoch (-1, a Fetch older than v15) skips the check."""
    ctx, part = _leader((BROKER, R1), (BROKER,), version=version)
    _fetch(ctx, part, R1, epoch=broker_epoch(R1) + 7)
    if version == "3.4":
        assert part.pending.proposed_isr == (BROKER, R1)
        assert part.pending.isr_with_broker_epoch == ()
        return
    assert part.pending is None
    _fetch(ctx, part, R1, epoch=-1)
    assert part.pending.isr_with_broker_epoch == ((BROKER, broker_epoch(BROKER)), (R1, -1))


# ================================================================================== ReplicaTest
def test_initial_state():
    """ReplicaTest.testInitialState: a replica state starts without a broker epoch."""
    _ctx, part = _leader((BROKER, R1), (BROKER,))
    assert part.get_replica(R1).broker_epoch is None


@pytest.mark.parametrize("new_leader", [False, True])
def test_reset_replica_state_broker_epoch(new_leader):
    """ReplicaTest.testResetReplicaStateWhenLeaderIsReelected* / ...NewLeaderIsElected*: a
    re-elected leader keeps each follower's broker epoch, a new leader starts without one."""
    ctx, part = _leader((BROKER, R1), (BROKER, R1))
    _fetch(ctx, part, R1)
    if new_leader:
        part.make_follower(ctx, R1, LEADER_EPOCH + 1, (R1,), (BROKER, R1), 2, 0)
    part.make_leader(ctx, LEADER_EPOCH + 2, (BROKER, R1), (BROKER, R1), 3, 0)
    assert part.get_replica(R1).broker_epoch == (None if new_leader else broker_epoch(R1))


@pytest.mark.parametrize("is_kraft", [True, False])
def test_fence_stale_updates(is_kraft):
    """ReplicaTest.testFenceStaleUpdates: with a KRaft metadata cache holding epoch 2, a fetch
    state update from epoch 1 throws NotLeaderOrFollowerException; ZooKeeper mode fences
    nothing; epoch -1 is never fenced."""
    ctx, part = _leader((BROKER, R1), (BROKER, R1), kraft=is_kraft,
                        epochs={BROKER: 1, R1: 2})
    _fetch(ctx, part, R1, 5, epoch=2)
    if is_kraft:
        with pytest.raises(E.NotLeaderOrFollowerException):
            _fetch(ctx, part, R1, 5, epoch=1)
    else:
        _fetch(ctx, part, R1, 5, epoch=1)
    _fetch(ctx, part, R1, 5, epoch=-1)
    assert part.get_replica(R1).broker_epoch == -1


# ======================================================================= the fetch path (plus)
def _kraft_replica_manager(version="3.7"):
    ctx = FakeContext(0, kafka_version=version, live_brokers=(0, 1), kraft=True,
                      broker_epochs={0: 10, 1: 11})
    rm = ReplicaManager()
    rm.partitions = ctx.partitions
    ctx.replica_manager = rm
    rm.apply_partition_state(ctx, PartitionState(TOPIC, 0, -1, 0, 1, (0, 1), 0, (0, 1)),
                             kraft=True)
    part = ctx.partitions[(TOPIC, 0)]
    part.log.append_as_leader([1, 2, 3], [1, 1, 1], 1, 0)
    return ctx, rm, part


def _follower_fetch(ctx, rm, replica_epoch, offset=2, corr=7):
    fp = FetchPartition(TOPIC, 0, offset, 1, -1, 0, 1 << 20)
    rm.fetch_messages(ctx, 1, FetchRequest(corr, 1, 0, 1, 1 << 20, (fp,),
                                           replica_epoch=replica_epoch))
    [resp] = [m for _d, m in ctx.sent if isinstance(m, FetchResponse) and
              m.correlation_id == corr]
    return resp.partitions[0]


def test_read_from_log_answers_a_stale_broker_epoch_not_leader_or_follower():
    """(plus) ReplicaManager.readFromLog catches the NotLeaderOrFollowerException of a fetch
    from an older broker epoch (3.7+): the partition answers NOT_LEADER_OR_FOLLOWER with no
    records, and the follower's position is not recorded; its current epoch is."""
    ctx, rm, part = _kraft_replica_manager()
    pd = _follower_fetch(ctx, rm, 10, corr=7)
    assert pd.error == E.NOT_LEADER_OR_FOLLOWER and not len(pd.records)
    assert part.get_replica(1).log_end_offset == -1
    pd = _follower_fetch(ctx, rm, 11, corr=8)
    assert pd.error == E.NONE and len(pd.records) == 1
    assert (part.get_replica(1).log_end_offset, part.get_replica(1).broker_epoch) == (2, 11)


@pytest.mark.parametrize("version", ["3.4", "3.5"])
def test_broker_epoch_supplier(version):
    """RemoteLeaderEndPointTest.testBrokerEpochSupplier: each Fetch carries the broker's
    epoch as it is when the request is built (Fetch v15+, 3.5); older versions carry -1."""
    env = Env(version)
    env.ctx.broker_epoch = 1
    env.replica()
    env.add(offset=0, epoch=0, last_fetched_epoch=0)
    env.leader.set_state(FETCH_TP, [batch(0, 1, 2)], leader_epoch=0, hw=2)
    env.run_round()
    env.ctx.broker_epoch = 2
    env.run_round()
    epochs = [m.replica_epoch for m in env.sent(FetchRequest)]
    assert epochs[0] == (1 if version == "3.5" else -1)
    assert epochs[-1] == (2 if version == "3.5" else -1)


# ===================================================================== AlterPartitionManagerTest
@pytest.mark.parametrize("version", ["3.5", "3.2", "2.8"])
def test_basic_with_broker_epoch(version):
    """AlterPartitionManagerTest.testBasicWithBrokerEpoch over provideMetadataVersions: the
    request carries the broker id and epoch 101; with topic ids (IBP 2.8+) and KIP-903 (3.5)
    the new ISR is NewIsrWithEpochs, each member with its epoch (a KRaft leader's own, its
    followers' last fetches), before that NewIsr, the ids."""
    ctx = FakeContext(1, kafka_version=version, kraft=True)
    ctx.broker_epoch = 101
    ctx.replica_manager = ReplicaManager()
    ctx.replica_manager.partitions = ctx.partitions
    ctx.metadata.controller_id = 9
    part = ctx.partition(TOPIC, 0)
    part.make_leader(ctx, 1, (1, 2, 3), (1, 2, 3), 10, 0)
    for b in (2, 3):
        part.get_replica(b).broker_epoch = 100 + b
    propose_isr(ctx, part, "shrink", (), (1, 2, 3))
    [req] = [m for _d, m in ctx.sent if isinstance(m, AlterPartitionRequest)]
    assert (req.broker_id, req.broker_epoch) == (1, 101)
    [(topic, p, leader_epoch, new_isr, partition_epoch)] = req.partitions
    assert (topic, p, leader_epoch, partition_epoch) == (TOPIC, 0, 1, 10)
    assert new_isr == (((1, 101), (2, 102), (3, 103)) if version == "3.5" else (1, 2, 3))


# ============================================================== ReplicationControlManagerTest
def _rc_context():
    """registerBrokers(0..4), unfenceBrokers(0..4), foo = [[1, 2, 3, 4]]."""
    ctx = Ctx()
    ctx.register(0, 1, 2, 3, 4)
    ctx.unfence(0, 1, 2, 3, 4)
    ctx.create("foo", [[1, 2, 3, 4]])
    return ctx


def _alter(ctx, version, partition_epoch):
    """AlterPartition from leader 1 (epoch 101): ISR [1, 2, 3, 4] with default epochs."""
    item = (ctx.rc.topic_id("foo") if version > 1 else "foo", 0, 0,
            [(b, default_broker_epoch(b)) for b in (1, 2, 3, 4)], partition_epoch)
    return ctx.rc.alter_partition(1, 101, [item], request_version=version)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_should_reject_fenced_brokers(version):
    """testAlterPartitionShouldRejectFencedBrokers: a fenced broker in the new ISR is
    INELIGIBLE_REPLICA (OPERATION_NOT_ATTEMPTED before v2); once unfenced the same request
    commits ISR [1, 2, 3, 4] at partition epoch 2."""
    ctx = _rc_context()
    ctx.replay(ctx.rc.handle_broker_fenced(3))
    p = ctx.part()
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1, 2, 4), 1, 0, 1)
    records, resp = _alter(ctx, version, 1)
    assert records == [] and resp.partitions[0].error == (
        E.OPERATION_NOT_ATTEMPTED if version <= 1 else E.INELIGIBLE_REPLICA)
    ctx.replay(ctx.rc.handle_broker_unfenced(3, 103))
    _records, resp = _alter(ctx, version, 1)
    r = resp.partitions[0]
    assert (r.error, r.leader, r.leader_epoch, r.isr, r.partition_epoch) == \
        (E.NONE, 1, 0, (1, 2, 3, 4), 2)


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_should_reject_brokers_with_stale_epoch(version):
    """testAlterPartitionShouldRejectBrokersWithStaleEpoch: broker 4 failed silently and
    registered again (epoch 1104) while the leader built its request with 104; v3 (KIP-903)
    refuses it (INELIGIBLE_REPLICA), older versions carry no epochs and commit."""
    ctx = _rc_context()
    ctx.alter_partition(1, [1, 2, 3])
    ctx.register(4, epoch=default_broker_epoch(4) + 1000)
    ctx.unfence(4, epoch=default_broker_epoch(4) + 1000)
    records, resp = _alter(ctx, version, 1)
    if version >= 3:
        assert records == [] and resp.partitions[0].error == E.INELIGIBLE_REPLICA
    else:
        assert resp.error == E.NONE and resp.partitions[0].error == E.NONE and records


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_alter_partition_should_reject_shutting_down_brokers(version):
    """testAlterPartitionShouldRejectShuttingDownBrokers: a broker in controlled shutdown in
    the new ISR is INELIGIBLE_REPLICA (OPERATION_NOT_ATTEMPTED before v2)."""
    ctx = _rc_context()
    p = ctx.part()
    assert (p.isr, p.leader, p.leader_epoch, p.partition_epoch) == ((1, 2, 3, 4), 1, 0, 0)
    ctx.in_controlled_shutdown(3)
    records, resp = _alter(ctx, version, 0)
    assert records == [] and resp.partitions[0].error == (
        E.OPERATION_NOT_ATTEMPTED if version <= 1 else E.INELIGIBLE_REPLICA)


# ========================================================= a KRaft cluster end to end (plus)
def _kraft_cluster(version="3.7"):
    c = Cluster(3, seed=3, kafka_version=version, metadata_mode="kraft", controllers=3)
    assert c.run_until(lambda cl: cl.controller_id() >= 0 and not any(
        b.lifecycle.is_fenced for b in cl.brokers.values()), 30_000)
    c.create_topic("t", 1, 3)
    c.run(2_000)
    return c


@pytest.mark.parametrize("version", ["3.4", "3.7"])
def test_kraft_leader_keeps_each_followers_registration_epoch(version):
    """(plus) KIP-903 end to end: a KRaft leader records, for each follower, the broker epoch
    its fetches carry, which is the follower's registration (3.5+; -1 before); after a
    follower restarts it registers with a new epoch, rejoins the ISR, and the leader holds
    the new epoch."""
    c = _kraft_cluster(version)
    leader = c.leader("t")
    part = c.brokers[leader].replica_manager.partitions[("t", 0)]
    for b, st in part.remote.items():
        assert st.broker_epoch == (c.brokers[b].broker_epoch if version == "3.7" else -1)
    follower = next(b for b in part.remote)
    old = c.brokers[follower].broker_epoch
    c.crash(follower)
    c.run(15_000)
    c.start(follower)
    assert c.run_until(lambda cl: follower in cl.isr("t"), 60_000)
    new = c.brokers[follower].broker_epoch
    assert new > old
    part = c.brokers[c.leader("t")].replica_manager.partitions[("t", 0)]
    assert part.get_replica(follower).broker_epoch == (new if version == "3.7" else -1)


# ===================================================== KIP-380: BrokerEpochIntegrationTest (ZK)
def _zk_cluster(version="3.7"):
    c = Cluster([0, 1], seed=1, kafka_version=version,
                config={"auto.leader.rebalance.enable": False})
    assert c.run_until(lambda cl: cl.controller_id() >= 0, 30_000)
    return c


def _zk_epochs(c) -> dict[int, int]:
    """zkClient.getAllBrokerAndEpochsInCluster: broker id -> czxid of /brokers/ids/<id>."""
    return {int(b): c.zk.get(f"/brokers/ids/{b}").czxid for b in c.zk.children("/brokers/ids")}


def test_replica_manager_broker_epoch_matches_with_zk():
    """testReplicaManagerBrokerEpochMatchesWithZk: each broker's epoch is the czxid of its
    registration znode."""
    c = _zk_cluster()
    epochs = _zk_epochs(c)
    assert sorted(epochs) == [0, 1]
    for b, epoch in epochs.items():
        assert c.brokers[b].broker_epoch == epoch


def test_controller_broker_epoch_cache_matches_with_zk():
    """testControllerBrokerEpochCacheMatchesWithZk: the controller's liveBrokerIdAndEpochs
    matches ZooKeeper in steady state, after the other broker shuts down, and after it
    restarts (with a new epoch)."""
    c = _zk_cluster()
    controller = c.brokers[c.controller_id()].controller
    other = 1 - c.controller_id()

    def matches(cl) -> bool:
        cc = cl.brokers[cl.controller_id()].controller.context
        return {b: cc.broker_epochs[b] for b in cc.live_brokers} == _zk_epochs(cl)

    assert matches(c)
    before = _zk_epochs(c)[other]
    c.shutdown(other)
    assert c.run_until(lambda cl: cl.brokers[other].state == "stopped" and matches(cl), 30_000)
    assert c.start(other)
    assert c.run_until(lambda cl: other in _zk_epochs(cl) and matches(cl), 30_000)
    assert _zk_epochs(c)[other] > before
    assert c.brokers[c.controller_id()].controller is controller


class _Recorder:
    """What a broker sends back to the (fake) controller 2, its sends recorded."""

    def __init__(self, broker) -> None:
        self.sent: list = []
        broker.send = lambda dst, msg: self.sent.append((dst, msg))

    def of(self, kind) -> list:
        return [m for _d, m in self.sent if isinstance(m, kind)]


TP_NEW = ("new-topic", 0)


def _control_request_with_broker_epoch(version: str, diff: int) -> tuple:
    """testControlRequestWithBrokerEpoch(diff): LeaderAndIsr, UpdateMetadata and StopReplica
    from controller 2 to broker 1 with its broker epoch + ``diff``; the errors answered and
    whether each took effect."""
    c = _zk_cluster(version)
    c.create_topic("new-topic", assignment=[[0, 1]])
    c.run(1_000)
    broker = c.brokers[1]
    controller_epoch = int(c.zk.get("/controller_epoch").data)
    epoch = broker.broker_epoch + diff
    rec = _Recorder(broker)
    st = PartitionState("new-topic", 0, controller_epoch, 1, 1, (0, 1), 0, (0, 1))
    kafka_apis.handle_leader_and_isr_request(
        broker, 2, LeaderAndIsrRequest(2, controller_epoch, (st,), (0, 1), epoch))
    [lair] = rec.of(LeaderAndIsrResponse)
    led = broker.replica_manager.partitions[TP_NEW].is_leader
    kafka_apis.handle_update_metadata_request(
        broker, 2, UpdateMetadataRequest(2, controller_epoch, (st,), (0, 1), epoch))
    known = broker.metadata.partitions[TP_NEW].leader == 1
    kafka_apis.handle_stop_replica_request(
        broker, 2, StopReplicaRequest(2, controller_epoch, (TP_NEW,), True, epoch))
    stopped = TP_NEW not in broker.replica_manager.partitions
    errors = (lair.error, [m.error for m in rec.of(UpdateMetadataResponse)],
              [m.error for m in rec.of(StopReplicaResponse)])
    return errors, (led, known, stopped)


def test_control_request_with_correct_broker_epoch():
    """testControlRequestWithCorrectBrokerEpoch: each request is applied (broker 1 leads,
    its metadata names it, StopReplica deletes the partition)."""
    errors, effects = _control_request_with_broker_epoch("3.7", 0)
    assert errors == (E.NONE, [], [])
    assert effects == (True, True, True)


@pytest.mark.parametrize("version", ["2.2", "3.7"])
def test_control_request_with_stale_broker_epoch(version):
    """testControlRequestWithStaleBrokerEpoch: each request is refused with
    STALE_BROKER_EPOCH and changes nothing."""
    errors, effects = _control_request_with_broker_epoch(version, -1)
    assert errors == (E.STALE_BROKER_EPOCH, [E.STALE_BROKER_EPOCH], [E.STALE_BROKER_EPOCH])
    assert effects == (False, False, False)


@pytest.mark.parametrize("version", ["2.5", "2.6", "3.7"])
def test_control_request_with_newer_broker_epoch(version):
    """testControlRequestWithNewerBrokerEpoch (2.6+, KAFKA-9839): a newer epoch is accepted;
    2.2-2.5 threw IllegalStateException, answered UNKNOWN_SERVER_ERROR, nothing applied."""
    errors, effects = _control_request_with_broker_epoch(version, 1)
    if version == "2.5":
        assert errors == (E.UNKNOWN_SERVER_ERROR, [E.UNKNOWN_SERVER_ERROR],
                          [E.UNKNOWN_SERVER_ERROR])
        assert effects == (False, False, False)
    else:
        assert errors == (E.NONE, [], [])
        assert effects == (True, True, True)


def test_control_request_broker_epoch_before_kip_380():
    """(plus) Before 2.2 the requests carry no broker epoch: the broker checks none, so even
    one meant for an older process is applied."""
    errors, effects = _control_request_with_broker_epoch("2.1", -1)
    assert errors == (E.NONE, [], [])
    assert effects == (True, True, True)


# ========================================================== KIP-380: KafkaApisTest (ZK, 3.7.0)
CURRENT_BROKER_EPOCH = 1239875


def _apis_broker(version):
    """Broker 0 of a ZooKeeper cluster where topicA and topicW exist (their replicas on
    broker 1), its broker epoch CURRENT_BROKER_EPOCH."""
    c = _zk_cluster(version)
    c.create_topic("topicA", assignment=[[1]])
    c.create_topic("topicW", assignment=[[1], [1]])
    c.run(1_000)
    broker = c.brokers[0]
    broker.broker_epoch = CURRENT_BROKER_EPOCH   # controller.brokerEpoch, mocked
    return broker, _Recorder(broker), int(c.zk.get("/controller_epoch").data)


EPOCH_CASES = [(0, E.NONE), (1, E.NONE), (-1, E.STALE_BROKER_EPOCH)]


@pytest.mark.parametrize(("diff", "error"), EPOCH_CASES)
def test_update_metadata_request_with_broker_epoch(diff, error):
    """testUpdateMetadataRequestWith{Current,Newer,Stale}BrokerEpoch: only a stale epoch is
    refused (STALE_BROKER_EPOCH, the cache untouched)."""
    broker, rec, controller_epoch = _apis_broker("3.7")
    st = PartitionState("topicA", 0, controller_epoch, 0, 1, (0, 1), 2, (0, 1))
    kafka_apis.handle_update_metadata_request(broker, 2, UpdateMetadataRequest(
        2, controller_epoch, (st,), (0, 1), CURRENT_BROKER_EPOCH + diff))
    assert [m.error for m in rec.of(UpdateMetadataResponse)] == \
        ([] if error == E.NONE else [error])
    assert (broker.metadata.partitions[("topicA", 0)].leader == 0) is (error == E.NONE)


@pytest.mark.parametrize(("diff", "error"), EPOCH_CASES)
def test_leader_and_isr_request_with_broker_epoch(diff, error):
    """testLeaderAndIsrRequestWith{Current,Newer,Stale}BrokerEpoch: the answer's error; only
    a request that is not refused reaches becomeLeaderOrFollower."""
    broker, rec, controller_epoch = _apis_broker("3.7")
    st = PartitionState("topicW", 1, 1, 0, 1, (0, 1), 2, (0, 1))
    kafka_apis.handle_leader_and_isr_request(broker, 2, LeaderAndIsrRequest(
        2, controller_epoch, (st,), (0, 1), CURRENT_BROKER_EPOCH + diff))
    [resp] = rec.of(LeaderAndIsrResponse)
    assert resp.error == error
    assert (("topicW", 1) in broker.replica_manager.partitions) is (error == E.NONE)


@pytest.mark.parametrize(("diff", "error"), EPOCH_CASES)
def test_stop_replica_request_with_broker_epoch(diff, error):
    """testStopReplicaRequestWith{Current,Newer,Stale}BrokerEpoch: only a stale epoch is
    refused; otherwise stopReplicas runs (the partition is no longer hosted)."""
    broker, rec, controller_epoch = _apis_broker("3.7")
    st = PartitionState("topicW", 1, 1, 0, 1, (0, 1), 2, (0, 1))
    kafka_apis.handle_leader_and_isr_request(broker, 2, LeaderAndIsrRequest(
        2, controller_epoch, (st,), (0, 1), CURRENT_BROKER_EPOCH))
    kafka_apis.handle_stop_replica_request(broker, 2, StopReplicaRequest(
        2, controller_epoch, (("topicW", 1),), True, CURRENT_BROKER_EPOCH + diff))
    assert [m.error for m in rec.of(StopReplicaResponse)] == ([] if error == E.NONE else [error])
    assert (("topicW", 1) in broker.replica_manager.partitions) is (error != E.NONE)


# ==================================== KIP-380: the controller's requests name the epoch (plus)
@pytest.mark.parametrize("version", ["2.1", "2.2", "3.7"])
def test_controller_requests_carry_each_brokers_epoch(version):
    """(plus) ControllerChannelManager (AbstractControllerBrokerRequestBatch, 2.2+): every
    LeaderAndIsr, UpdateMetadata and StopReplica carries the controller's view of the
    receiver's epoch (liveBrokerIdAndEpochs); before 2.2, none (-1)."""
    h = _harness(live=(1, 2, 3), version=version)
    h.put_partition(SM_TP, [1, 2, 3])
    h.ctl.on_new_topic(h.ctx, h.zk, "t")
    h.ctl.offline_replica(h.ctx, h.zk, 3, [SM_TP])
    epochs = h.ctl.context.broker_epochs
    assert len(set(epochs.values())) == 3
    sent = [(dst, m) for kind in (LeaderAndIsrRequest, UpdateMetadataRequest,
                                  StopReplicaRequest) for dst, m in h.sent(kind)]
    assert {type(m) for _d, m in sent} == {LeaderAndIsrRequest, UpdateMetadataRequest,
                                          StopReplicaRequest}
    for dst, m in sent:
        assert m.broker_epoch == (-1 if version == "2.1" else epochs[dst])
