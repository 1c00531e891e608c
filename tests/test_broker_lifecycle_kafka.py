"""A broker's control-plane lifecycle driven by Kafka's names: the AlterPartition channel, the
KRaft broker's registration and heartbeats, and the controller's broker registrations.

Ported from Kafka trunk 1eb7644 (Oct 2024, 4.0 development); the ZooKeeper case from tag 3.7.0:

- core/src/test/scala/unit/kafka/server/AlterPartitionManagerTest.scala
  (``kafkasim.core.alter_partition_manager.AlterPartitionManager`` on a ``FakeContext``);
- core/src/test/scala/unit/kafka/server/BrokerLifecycleManagerTest.scala
  (``kafkasim.runtime.broker_lifecycle.BrokerLifecycleManager`` on ``LifecycleTestContext``);
- metadata/src/test/java/org/apache/kafka/controller/ClusterControlManagerTest.java
  (``kafkasim.control.kraft.cluster_control.ClusterControlManager``).

Adaptation to kafkasim.

AlterPartitionManager: Kafka's manager completes a ``CompletableFuture`` per item and
``Partition.submitAlterPartition`` reacts to it; kafkasim's manager calls the Partition's
callbacks itself (``handle_alter_partition_error`` / ``handle_alter_partition_update``), so a
submitted item is a ``PendingIsrChange`` of a real leader ``Partition`` (``propose_isr``), a
future "failed with E" is the Partition having handled E (``FailedIsrUpdatesPerSec`` marked),
and "completed" is the ISR committed. The mocked NodeToControllerChannelManager is the
FakeContext's ``sent`` list; ``onComplete`` is ``handle_alter_partition_response``; the
scheduler's "send-alter-partition" task is the ``_timer_send_alter_partition`` timer, fired by
hand. kafkasim has no separate inter.broker.protocol.version: Kafka's IBP_3_5_IV1, IBP_3_2_IV0
and IBP_2_7_IV2 are run as the releases 3.5, 3.2 and 2.8 (2.7.0 itself sent its batches from a
50 ms task; 2.8 is the first release that sends on submit, as trunk does at IBP 2.7-IV2).
A partition-level UNKNOWN_SERVER_ERROR or NOT_LEADER_OR_FOLLOWER is retried by the Partition
(Partition.handleAlterPartitionError's default case), so where Kafka's test only wants a
partition-level failure that ends the item, this port answers INVALID_UPDATE_VERSION.

BrokerLifecycleManager: ``LifecycleTestContext`` stands for Kafka's RegistrationTestContext:
the broker around the manager, a clock with its timers, the messages sent (the
MockChannelManager's queue) and the controller node (MockControllerNodeProvider: the observer
Raft client's leader). ``prepareResponseFrom`` is answering the request in flight; ``time.sleep``
is ``ctx.advance``. Kafka's ``initialCatchUpFuture`` failing is the broker process stopping.

ClusterControlManager: a ControllerResult is ``(records, reply)``; Kafka's MockTime is the
``now_ms`` argument; a RegisterBrokerRecord has no endpoints, features or log dirs.

Left out (kafkasim does not model it): AlterPartitionManagerTest.testRetryOnAuthenticationFailure
and testRetryOnUnsupportedVersionError (no SASL, no ApiVersions: a ClientResponse has no
authentication or version-mismatch error), testPartialTopicIds (AlterPartition names topics by
name in every version: no topic IDs, no request versions), the RECOVERING half of
testBasicSentLeaderRecoveryState (Partition.makeLeader always commits RECOVERED, so the leader
never sends RECOVERING); BrokerLifecycleManagerTest.testSuccessfulRegistrationDuringMigration
(no ZooKeeper-to-KRaft migration), testAlwaysSendsAccumulatedOfflineDirs,
testRegistrationIncludesDirs and testKraftJBODMetadataVersionUpdateEvent (no JBOD log dirs);
ClusterControlManagerTest.testRegistrationWithIncorrectClusterId (no cluster id check),
testRegistrationWithUnsupportedFeature, testRegistrationWithUnsupportedKraftVersion,
testRegistrationWithUnsupportedMetadataVersion (no feature ranges in a registration),
testRegisterControlWithOlderMetadataVersion (no ControllerRegistration),
testRegisterWithDuplicateDirectoryId, testHasOnlineDir, testDefaultDir (no log directories).

Related: tests/test_broker_heartbeat.py (BrokerHeartbeatManagerTest), tests/test_cluster_control.py
(ClusterControlManager's version rules), tests/test_kraft_liveness.py (the heartbeat channel's
timeouts and NOT_CONTROLLER handling), tests/test_alter_partition_channel.py (the AlterPartition
channel's), tests/test_replication_control_manager_kafka.py (the controller's AlterPartition).
"""

from __future__ import annotations

import dataclasses
import heapq
from types import SimpleNamespace

import pytest

from kafkasim.control.kraft.cluster_control import (
    ClusterControlManager,
    StaleBrokerEpochException,
)
from kafkasim.control.kraft.metadata_version import IBP_3_3_IV2, MetadataVersion
from kafkasim.control.kraft.records import (
    BrokerRegistration,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UnwritableMetadataException,
)
from kafkasim.core import errors as E
from kafkasim.core.alter_partition_manager import (
    ALTER_ISR_TICK_MS,
    _timer_send_alter_partition,
    propose_isr,
)
from kafkasim.core.fake import FakeContext
from kafkasim.core.messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    BrokerHeartbeatRequest,
    BrokerHeartbeatResponse,
    BrokerRegistrationRequest,
    BrokerRegistrationResponse,
)
from kafkasim.core.partition import PendingShrinkIsr
from kafkasim.core.replica_manager import ReplicaManager
from kafkasim.runtime.broker_lifecycle import (
    NOT_RUNNING,
    PENDING_CONTROLLED_SHUTDOWN,
    RECOVERY,
    RUNNING,
    SHUTTING_DOWN,
    STARTING,
    BrokerLifecycleManager,
)
from kafkasim.runtime.kraft_cluster import raft_options
from kafkasim.runtime.metadata_cache import KRaftMetadataCache
from kafkasim.settings import config as kconfig
from kafkasim.settings import versions
from kafkasim.settings.javautil import JavaRandom

FENCE = BrokerRegistrationFencingChange.FENCE
UNFENCE = BrokerRegistrationFencingChange.UNFENCE
IN_CS = BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN

# ============================================================ AlterPartitionManagerTest
TOPIC = "test-topic"
BROKER_ID = 1
CONTROLLER = 9
#: provideMetadataVersions: IBP_3_5_IV1 (KIP-903), IBP_3_2_IV0 (KIP-704), IBP_2_7_IV2 (KIP-497)
METADATA_VERSIONS = ["3.5", "3.2", "2.8"]


def _manager_context(version: str = "3.5", partitions: int = 3, broker_epoch: int = 2):
    """Broker 1 leading ``test-topic`` partitions 0.. with ISR [1, 2, 3] at leader epoch 1,
    partition epoch 10; the controller is node 9; the broker epoch is ``broker_epoch``."""
    ctx = FakeContext(broker_id=BROKER_ID, kafka_version=version)
    ctx.broker_epoch = broker_epoch
    rm = ReplicaManager()
    rm.partitions = ctx.partitions
    ctx.replica_manager = rm
    ctx.metadata.controller_id = CONTROLLER
    for p in range(partitions):
        ctx.partition(TOPIC, p).make_leader(ctx, 1, (1, 2, 3), (1, 2, 3), 10, 1)
    ctx.take()
    return ctx


def _submit(ctx, p: int, new_isr=(1, 2)):
    """Partition p proposes ``new_isr`` (a shrink): AlterPartitionManager.submit."""
    part = ctx.partitions[(TOPIC, p)]
    removed = tuple(b for b in part.isr if b not in new_isr)
    propose_isr(ctx, part, "shrink", removed, tuple(new_isr))
    return part.pending


def _requests(ctx) -> list[AlterPartitionRequest]:
    return [m for _dst, m in ctx.sent if isinstance(m, AlterPartitionRequest)]


def _sent_partitions(req: AlterPartitionRequest) -> set[tuple[str, int]]:
    return {(t, p) for t, p, *_ in req.partitions}


def _answer(ctx, *partitions, error=E.NONE):
    """The controller's answer to the request in flight (``onComplete``)."""
    manager = ctx.alter_partition_manager
    manager.handle_alter_partition_response(ctx, CONTROLLER, AlterPartitionResponse(
        error, tuple(partitions), manager.corr))


def _ok(p: int, isr=(1, 2), partition_epoch: int = 11):
    return (TOPIC, p, E.NONE, BROKER_ID, 1, tuple(isr), partition_epoch)


def _failed(p: int, error: str):
    return (TOPIC, p, error, -1, -1, (), -1)


@pytest.mark.parametrize("version", METADATA_VERSIONS)
def test_basic(version):
    """AlterPartitionManagerTest.testBasic: a submit sends one AlterPartition at once."""
    ctx = _manager_context(version)
    _submit(ctx, 0)
    [(dst, req)] = ctx.sent
    assert dst == CONTROLLER and isinstance(req, AlterPartitionRequest)


def test_basic_with_broker_epoch():
    """AlterPartitionManagerTest.testBasicWithBrokerEpoch: broker id, broker epoch 101, and
    the new ISR with each member's broker epoch (Kafka's test hands them in; here a KRaft
    leader's Partition.addBrokerEpochToIsr adds its own and its followers' last-fetch ones)."""
    ctx = _manager_context("3.5", broker_epoch=101)
    ctx.metadata.kraft = True   # a KRaftMetadataCache
    part = ctx.partitions[(TOPIC, 0)]
    for b in (2, 3):
        part.get_replica(b).broker_epoch = 100 + b   # the epochs of their last fetches
    _submit(ctx, 0, (1, 2, 3))
    [req] = _requests(ctx)
    assert (req.broker_id, req.broker_epoch) == (BROKER_ID, 101)
    [(topic, p, leader_epoch, new_isr, partition_epoch)] = req.partitions
    assert (topic, p, leader_epoch, partition_epoch) == (TOPIC, 0, 1, 10)
    assert new_isr == ((1, 101), (2, 102), (3, 103))


@pytest.mark.parametrize("version", METADATA_VERSIONS)
def test_basic_sent_leader_recovery_state(version):
    """AlterPartitionManagerTest.testBasicSentLeaderRecoveryState (RECOVERED): the state is sent
    from IBP 3.2 (isLeaderRecoverySupported); before, the field is absent (read RECOVERED)."""
    ctx = _manager_context(version)
    _submit(ctx, 0, (1,))
    [req] = _requests(ctx)
    expected = () if version == "2.8" else (0,)     # LeaderRecoveryState.RECOVERED
    assert req.leader_recovery_states == expected


@pytest.mark.parametrize("version", METADATA_VERSIONS)
def test_overwrite_within_batch(version):
    """AlterPartitionManagerTest.testOverwriteWithinBatch: one update per partition; a second
    submit fails at once with OPERATION_NOT_ATTEMPTED; after the answer the partition may
    submit again, and the new request carries the new ISR."""
    ctx = _manager_context(version)
    first = _submit(ctx, 0, (1, 2))
    part = ctx.partitions[(TOPIC, 0)]
    assert part.pending is first                        # firstSubmitFuture not done
    _submit(ctx, 0, (1,))
    assert ctx.meters["FailedIsrUpdatesPerSec"] == 1    # failedSubmitFuture failed ...
    assert part.pending is None                         # ... OPERATION_NOT_ATTEMPTED
    assert ctx.alter_partition_manager.unsent == {(TOPIC, 0): first}
    assert len(_requests(ctx)) == 1
    _answer(ctx, _ok(0, (1, 2)))
    assert ctx.alter_partition_manager.unsent == {}
    assert part.isr == (1, 2, 3)    # the Partition left that proposal: its answer is stale
    _submit(ctx, 0, (1,))
    assert part.pending is not None                     # newSubmitFuture not done
    requests = _requests(ctx)
    assert len(requests) == 2
    [(topic, p, _le, new_isr, _pe)] = requests[-1].partitions
    # newIsrWithEpochs (v3, 3.5+: -1 epochs in ZooKeeper mode) or newIsr: one member
    assert (topic, p, new_isr) == (TOPIC, 0, ((1, -1),) if version == "3.5" else (1,))


@pytest.mark.parametrize("version", METADATA_VERSIONS)
def test_single_batch(version):
    """AlterPartitionManagerTest.testSingleBatch: the first submit goes alone, nine more wait
    for its answer; an answer without partition 0 leaves it queued, and the next request
    carries all ten."""
    ctx = _manager_context(version, partitions=10)
    _submit(ctx, 0)
    for p in range(1, 10):
        _submit(ctx, p)
    assert len(_requests(ctx)) == 1
    _answer(ctx)                                        # no partition in the answer
    requests = _requests(ctx)
    assert len(requests) == 2
    assert _sent_partitions(requests[-1]) == {(TOPIC, p) for p in range(10)}


def test_submit_from_callback():
    """AlterPartitionManagerTest.testSubmitFromCallback: a partition-level error clears the
    item before its callback runs, so the Partition's retry (a submit from the callback) is
    queued, sent once the answer is handled, and completed by the next answer."""
    ctx = _manager_context("3.2")
    pending = _submit(ctx, 0, (1, 2, 3))
    manager = ctx.alter_partition_manager
    _answer(ctx, _failed(0, E.UNKNOWN_SERVER_ERROR))
    part = ctx.partitions[(TOPIC, 0)]
    assert part.pending is pending                      # resubmitted, not refused
    assert manager.unsent == {(TOPIC, 0): pending}
    requests = _requests(ctx)
    assert len(requests) == 2 and _sent_partitions(requests[-1]) == {(TOPIC, 0)}
    _answer(ctx, _ok(0, (1, 2, 3), 10))                 # partition epoch unchanged
    assert part.pending is None and part.isr == (1, 2, 3)
    assert (TOPIC, 0) not in manager.unsent


def _retry_on_top_level_error(error: str) -> None:
    """testRetryOnErrorResponse: a top-level error keeps every item queued; the request goes
    again 50 ms later ("send-alter-partition"), and its answer clears the item."""
    ctx = _manager_context("3.2")
    _submit(ctx, 0)
    manager = ctx.alter_partition_manager
    _answer(ctx, error=error)
    assert (TOPIC, 0) in manager.unsent
    assert manager.inflight is None
    assert ctx.take()[-1] == f"timer _timer_send_alter_partition in {ALTER_ISR_TICK_MS} ms"
    assert len(_requests(ctx)) == 1
    _timer_send_alter_partition(ctx)                    # time.sleep(100); scheduler.tick()
    assert len(_requests(ctx)) == 2
    _answer(ctx, _ok(0))
    assert (TOPIC, 0) not in manager.unsent


def test_authorization_failed():
    """AlterPartitionManagerTest.testAuthorizationFailed."""
    _retry_on_top_level_error(E.CLUSTER_AUTHORIZATION_FAILED)


def test_stale_broker_epoch():
    """AlterPartitionManagerTest.testStaleBrokerEpoch."""
    _retry_on_top_level_error(E.STALE_BROKER_EPOCH)


def test_unknown_server():
    """AlterPartitionManagerTest.testUnknownServer."""
    _retry_on_top_level_error(E.UNKNOWN_SERVER_ERROR)


def _partition_error(error: str):
    """testPartitionError: the item's answer is a partition-level error; it is cleared from
    the queue and the Partition handled the error (its future failed)."""
    ctx = _manager_context("3.2")
    _submit(ctx, 0, (1, 2, 3))
    _answer(ctx, _failed(0, error))
    assert ctx.meters["FailedIsrUpdatesPerSec"] == 1
    return ctx


@pytest.mark.parametrize("error", [E.INVALID_UPDATE_VERSION, E.UNKNOWN_TOPIC_OR_PARTITION,
                                   E.INVALID_REQUEST])
def test_check_partition_error(error):
    """AlterPartitionManagerTest.testInvalidUpdateVersion, testUnknownTopicPartition,
    testInvalidRequest (checkPartitionError): a partition-level error clears the item, so a new
    submit for the partition is queued, not refused."""
    ctx = _partition_error(error)
    manager = ctx.alter_partition_manager
    assert manager.unsent == {}
    part = ctx.partitions[(TOPIC, 0)]
    assert part.pending is not None          # Partition: awaiting new metadata
    pending = PendingShrinkIsr((3,), (1, 2), ctx.now, 1, 10)
    part.pending = pending
    manager.submit(ctx, part, pending)
    assert manager.unsent == {(TOPIC, 0): pending}   # future not done
    assert ctx.meters["FailedIsrUpdatesPerSec"] == 1


def test_not_leader_or_follower():
    """AlterPartitionManagerTest.testNotLeaderOrFollower: the item is cleared; the Partition
    retries an error it does not know (handleAlterPartitionError's default case), so the
    retry is what is queued next."""
    ctx = _partition_error(E.NOT_LEADER_OR_FOLLOWER)
    part = ctx.partitions[(TOPIC, 0)]
    assert ctx.alter_partition_manager.unsent == {(TOPIC, 0): part.pending}
    assert len(_requests(ctx)) == 2


@pytest.mark.parametrize("version", METADATA_VERSIONS)
def test_one_in_flight(version):
    """AlterPartitionManagerTest.testOneInFlight: one request at a time; the items submitted
    meanwhile go in the next request, sent when the answer arrives."""
    ctx = _manager_context(version)
    for p in range(3):
        _submit(ctx, p)
    assert len(_requests(ctx)) == 1
    _answer(ctx)
    requests = _requests(ctx)
    assert len(requests) == 2
    assert _sent_partitions(requests[-1]) == {(TOPIC, 0), (TOPIC, 1), (TOPIC, 2)}


@pytest.mark.parametrize("version", METADATA_VERSIONS)
def test_partition_missing_in_response(version):
    """AlterPartitionManagerTest.testPartitionMissingInResponse: an item the answer leaves out
    stays queued and is sent again."""
    ctx = _manager_context(version)
    _submit(ctx, 0)
    assert _sent_partitions(_requests(ctx)[-1]) == {(TOPIC, 0)}
    _submit(ctx, 1)
    _submit(ctx, 2)
    _answer(ctx, _failed(0, E.INVALID_UPDATE_VERSION))
    parts = ctx.partitions
    assert ctx.meters["FailedIsrUpdatesPerSec"] == 1            # future1 failed
    assert _sent_partitions(_requests(ctx)[-1]) == {(TOPIC, 1), (TOPIC, 2)}
    _answer(ctx, _failed(2, E.INVALID_UPDATE_VERSION))
    assert ctx.meters["FailedIsrUpdatesPerSec"] == 2            # future3 failed
    assert (TOPIC, 1) in ctx.alter_partition_manager.unsent     # future2 not done
    assert _sent_partitions(_requests(ctx)[-1]) == {(TOPIC, 1)}
    _answer(ctx, _failed(1, E.INVALID_UPDATE_VERSION))
    assert ctx.meters["FailedIsrUpdatesPerSec"] == 3            # future2 failed
    assert ctx.alter_partition_manager.unsent == {}
    assert all(parts[(TOPIC, p)].isr == (1, 2, 3) for p in range(3))


class _FakeZk:
    """KafkaZkClient.conditionalUpdatePath as testZkBasic mocks it: version 1 writes (the new
    version is 2), version 3 fails."""

    def __init__(self) -> None:
        self.isr_changes: list = []
        self.isr_change_propagation = SimpleNamespace(
            record_isr_change=lambda tp, now: self.isr_changes.append(tp))

    @staticmethod
    def conditional_update_isr(ctx, part, new_isr) -> int:
        return {1: 2, 3: -1}[part.partition_epoch]


def test_zk_basic():
    """AlterPartitionManagerTest.testZkBasic (3.7.0, ZkAlterPartitionManager, IBP < 2.7-IV2):
    the leader writes the partition state znode itself; the right zkVersion commits the ISR
    with the new version and records the change for /isr_change_notification, a wrong one
    fails (InvalidUpdateVersionException). Run on 2.6, whose Partition.updateIsr did the
    same; 2.6 keeps the old ISR after the failure (no pending state to wait in)."""
    ctx = _manager_context("2.6", partitions=1)
    ctx.zk_lifecycle = zk = _FakeZk()
    part = ctx.partitions[(TOPIC, 0)]
    part.partition_epoch = 1
    _submit(ctx, 0, (1, 2))
    assert part.isr == (1, 2) and part.partition_epoch == 2
    assert zk.isr_changes == [(TOPIC, 0)]
    part.partition_epoch = 3
    _submit(ctx, 0, (1,))
    assert part.isr == (1, 2) and part.partition_epoch == 3
    assert ctx.meters["FailedIsrUpdatesPerSec"] == 1
    assert zk.isr_changes == [(TOPIC, 0)] and ctx.sent == []


@pytest.mark.parametrize("version, counted", [("2.3", 1), ("2.4", 0), ("2.6", 0)])
def test_zk_isr_meters_by_version(version, counted):
    """Partition.maybeShrinkIsr / maybeExpandIsr @2.3.0 mark IsrShrinksPerSec /
    IsrExpandsPerSec after updateIsr whatever its conditional write did; from 2.4.0
    (KAFKA-8371) only a write that succeeded counts. A failed write counts as a failure in
    both."""
    ctx = _manager_context(version, partitions=1)
    ctx.zk_lifecycle = _FakeZk()
    part = ctx.partitions[(TOPIC, 0)]
    part.partition_epoch = 3          # the write fails
    _submit(ctx, 0, (1, 2))
    assert part.isr == (1, 2, 3)
    assert ctx.meters["FailedIsrUpdatesPerSec"] == 1
    assert ctx.meters.get("IsrShrinksPerSec", 0) == counted
    part.partition_epoch = 1          # the write succeeds: counted in every version
    _submit(ctx, 0, (1, 2))
    assert part.isr == (1, 2) and ctx.meters["IsrShrinksPerSec"] == counted + 1


# ============================================================ BrokerLifecycleManagerTest
CONTROLLER_NODE = 3000   # new Node(3000, "localhost", 8021)


class LifecycleTestContext:
    """Kafka's RegistrationTestContext: broker 1 (``configProperties``: heartbeat every 100 ms,
    registration timeout 300 s) around a ``BrokerLifecycleManager``, with a clock and its
    timers, the requests sent, and controller node 3000 as the observer Raft client's leader
    (MockControllerNodeProvider). Also the broker the manager talks to."""

    def __init__(self, version: str = "4.0", config: dict | None = None) -> None:
        self.id, self.rack, self.incarnation = 1, None, 1
        self.now = 0
        self.rules = versions.rules_for(version)
        self.config = kconfig.with_simulator_fallbacks(kconfig.broker_config(
            {"broker.heartbeat.interval.ms": 100,
             "initial.broker.registration.timeout.ms": 300000, **(config or {})}, version))
        self.metadata = KRaftMetadataCache(1)
        self.replica_manager = ReplicaManager()
        self.broker_epoch = -1
        self.sent: list = []
        self.traces: list = []
        self.stopped: list[str] = []
        # no logs, so no stray ones at the first publish
        self.log_manager = SimpleNamespace(
            clean_shutdown_file=False, logs={},
            start_high_watermark_checkpoints=lambda ctx: None,
            delete_stray_kraft_replicas=lambda ctx, broker_id, image: True)
        self._timers: list = []
        self._seq = 0
        self.cluster = SimpleNamespace(
            transport=SimpleNamespace(close_listeners=lambda b: None,
                                      open_listeners=lambda b: None),
            engine=SimpleNamespace(rng=None))
        self.lifecycle = BrokerLifecycleManager(self, (CONTROLLER_NODE,), self.config,
                                                raft_options(self.rules))
        # the controller node provider: the Raft client's leader, no metadata log to fetch
        self.lifecycle.raft = SimpleNamespace(leader_id=CONTROLLER_NODE,
                                              start=lambda ctx: None)

    # -- the broker, as BrokerLifecycleManager sees it ------------------------------------------
    def send(self, dst, msg) -> None:
        self.sent.append((dst, msg))

    def schedule_timer(self, delay_ms: int, fn, *args) -> None:
        self._seq += 1
        heapq.heappush(self._timers, (self.now + delay_ms, self._seq, fn, args))

    def trace(self, kind: str, topic: str = "", partition: int = -1, detail=None) -> None:
        self.traces.append((self.now, kind, detail))

    def shutdown_cleanly(self) -> None:
        self.stopped.append("clean shutdown")

    def stop_process(self, kind: str) -> None:
        self.stopped.append(kind)

    # -- the test's handles ---------------------------------------------------------------------
    def advance(self, ms: int) -> None:
        """time.sleep(ms), running every timer due meanwhile."""
        end = self.now + ms
        while self._timers and self._timers[0][0] <= end:
            due, _seq, fn, args = heapq.heappop(self._timers)
            self.now = due
            fn(self, *args)
        self.now = end

    def requests(self, kind) -> list:
        return [m for dst, m in self.sent if isinstance(m, kind) and dst == CONTROLLER_NODE]

    def respond(self, response) -> None:
        """prepareResponseFrom + poll: the controller answers the request in flight."""
        lm = self.lifecycle
        corr = lm.inflight[0]
        response = dataclasses.replace(response, correlation_id=corr)
        if isinstance(response, BrokerRegistrationResponse):
            lm.on_registration_response(response)
        else:
            lm.on_heartbeat_response(response)


def _heartbeat_response(*, caught_up=False, fenced=True, should_shut_down=False):
    """BrokerHeartbeatResponseData's defaults: isCaughtUp false, isFenced true."""
    return BrokerHeartbeatResponse(E.NONE, caught_up, fenced, should_shut_down)


def _registered(previous_epoch: int = -1, epoch: int = 1000, version: str = "4.0"):
    ctx = LifecycleTestContext(version)
    lm = ctx.lifecycle
    lm.previous_epoch = previous_epoch
    lm.start()
    ctx.advance(0)
    ctx.respond(BrokerRegistrationResponse(E.NONE, epoch))
    ctx.advance(0)
    return ctx, lm


def _running(version: str = "4.0"):
    """testControlledShutdown's first steps: registered, caught up (RECOVERY), unfenced
    (RUNNING)."""
    ctx, lm = _registered(version=version)
    ctx.respond(_heartbeat_response(caught_up=True))
    assert lm.state == RECOVERY
    ctx.advance(20)
    ctx.respond(_heartbeat_response(fenced=False))
    assert lm.state == RUNNING
    return ctx, lm


def test_create_and_close():
    """BrokerLifecycleManagerTest.testCreateAndClose."""
    ctx = LifecycleTestContext()
    ctx.lifecycle.close()
    assert ctx.sent == []


def test_create_start_and_close():
    """BrokerLifecycleManagerTest.testCreateStartAndClose: NOT_RUNNING, STARTING once
    started, SHUTTING_DOWN once closed."""
    ctx = LifecycleTestContext()
    lm = ctx.lifecycle
    assert lm.state == NOT_RUNNING
    lm.start()
    assert lm.state == STARTING
    lm.close()
    assert lm.state == SHUTTING_DOWN
    ctx.advance(1000)
    assert ctx.requests(BrokerRegistrationRequest) == []   # the channel is shut down


def test_successful_registration():
    """BrokerLifecycleManagerTest.testSuccessfulRegistration: the registration carries the
    previous broker epoch (10); the answer's broker epoch (1000) is the manager's."""
    ctx = LifecycleTestContext()
    lm = ctx.lifecycle
    lm.previous_epoch = 10
    lm.start()
    ctx.advance(0)
    [req] = ctx.requests(BrokerRegistrationRequest)
    assert req.previous_broker_epoch == 10 and req.broker_id == 1
    ctx.respond(BrokerRegistrationResponse(E.NONE, 1000))
    assert lm.broker_epoch == 1000


def test_registration_timeout():
    """BrokerLifecycleManagerTest.testRegistrationTimeout: a refused registration
    (DUPLICATE_BROKER_REGISTRATION) is sent again after the backoff; once
    initial.broker.registration.timeout.ms passed without a registration the manager is
    SHUTTING_DOWN, with no broker epoch, and the broker's startup fails. Its logs were never
    loaded (LogManager.startup follows the catch-up): .kafka_cleanshutdown stays as found."""
    ctx = LifecycleTestContext()
    lm = ctx.lifecycle
    lm.clean_shutdown_marker = 10      # the file held broker epoch 10 (Broker.start read it)
    lm.start()
    ctx.advance(0)
    ctx.respond(BrokerRegistrationResponse(E.DUPLICATE_BROKER_REGISTRATION, -1))
    assert lm.inflight is None
    ctx.advance(100)                                   # resendExponentialBackoff: 100 ms
    assert len(ctx.requests(BrokerRegistrationRequest)) == 2
    ctx.respond(BrokerRegistrationResponse(E.DUPLICATE_BROKER_REGISTRATION, -1))
    ctx.advance(300000)
    assert lm.state == SHUTTING_DOWN
    assert lm.broker_epoch == -1
    assert ctx.stopped == ["registration timeout"]
    assert ctx.log_manager.clean_shutdown_file == 10
    assert ctx.traces[-1][1] == "broker_start_failed"
    sent = len(ctx.sent)
    ctx.advance(60000)
    assert len(ctx.sent) == sent


def test_registration_timeout_does_not_fire_once_registered():
    """RegistrationTimeoutEvent does nothing once the initial registration succeeded
    (initialRegistrationSucceeded), even if heartbeats fail afterwards."""
    ctx, lm = _registered()
    for _ in range(100):
        if lm.inflight is not None:
            ctx.respond(BrokerHeartbeatResponse(E.UNKNOWN_SERVER_ERROR, False, True, False))
        ctx.advance(5000)
    assert lm.failed_attempts > 10
    assert lm.state == STARTING and ctx.stopped == []


def test_controlled_shutdown():
    """BrokerLifecycleManagerTest.testControlledShutdown: STARTING -> RECOVERY (caught up) ->
    RUNNING (unfenced) -> PENDING_CONTROLLED_SHUTDOWN with a heartbeat in flight that wants to
    shut down -> SHUTTING_DOWN when the controller says shouldShutDown."""
    ctx, lm = _running()
    lm.begin_controlled_shutdown()
    ctx.advance(0)
    assert lm.state == PENDING_CONTROLLED_SHUTDOWN
    assert lm.inflight is not None                     # hasInFlightRequests
    assert ctx.requests(BrokerHeartbeatRequest)[-1].want_shut_down
    ctx.respond(_heartbeat_response(fenced=False, should_shut_down=True))
    assert lm.state == SHUTTING_DOWN
    assert ctx.stopped == ["clean shutdown"]           # controlledShutdownFuture completed


def test_begin_controlled_shutdown_twice():
    """BeginControlledShutdownEvent: a broker already in PENDING_CONTROLLED_SHUTDOWN stays
    there ("already in that state") and keeps heartbeating; it does not shut down at once."""
    ctx, lm = _running()
    lm.begin_controlled_shutdown()
    lm.begin_controlled_shutdown()
    assert lm.state == PENDING_CONTROLLED_SHUTDOWN and ctx.stopped == []


def test_begin_controlled_shutdown_when_not_running():
    """BeginControlledShutdownEvent in any state but RUNNING: "Skipping controlled shutdown",
    beginShutdown."""
    ctx, lm = _registered()
    lm.begin_controlled_shutdown()
    assert lm.state == SHUTTING_DOWN and ctx.stopped == ["clean shutdown"]


@pytest.mark.parametrize("version,serialized", [("3.7", False), ("3.8", True), ("4.0", True)])
def test_heartbeat_due_while_one_is_in_flight(version, serialized):
    """KAFKA-15950 (3.8): beginControlledShutdown while a heartbeat is in flight does not send a
    second one (CommunicationEvent: communicationInFlight); the answer schedules the next at
    once (nextSchedulingShouldBeImmediate), not 50 ms later. Before 3.8 the wantShutDown
    heartbeat went out at once."""
    ctx, lm = _running(version)
    ctx.advance(100)                                   # the next heartbeat is in flight
    heartbeats = len(ctx.requests(BrokerHeartbeatRequest))
    lm.begin_controlled_shutdown()
    ctx.advance(0)
    sent = ctx.requests(BrokerHeartbeatRequest)
    if not serialized:
        assert len(sent) == heartbeats + 1 and sent[-1].want_shut_down
        return
    assert len(sent) == heartbeats and not sent[-1].want_shut_down
    ctx.respond(_heartbeat_response(fenced=False))     # the answer to the old heartbeat
    ctx.advance(0)
    sent = ctx.requests(BrokerHeartbeatRequest)
    assert len(sent) == heartbeats + 1 and sent[-1].want_shut_down


def test_heartbeat_after_a_failure_is_never_immediate():
    """scheduleNextCommunicationAfterFailure: a communication that came due during the failed
    request does not make the retry immediate; it waits the backoff (100 ms)."""
    ctx, lm = _running("4.0")
    ctx.advance(100)
    lm.begin_controlled_shutdown()
    ctx.advance(0)
    heartbeats = len(ctx.requests(BrokerHeartbeatRequest))
    ctx.respond(BrokerHeartbeatResponse(E.UNKNOWN_SERVER_ERROR, False, True, False))
    ctx.advance(99)
    assert len(ctx.requests(BrokerHeartbeatRequest)) == heartbeats
    ctx.advance(1)
    assert len(ctx.requests(BrokerHeartbeatRequest)) == heartbeats + 1


# ============================================================ ClusterControlManagerTest
def _cluster_control(metadata_version=None, *, active: bool = True, **kw) -> ClusterControlManager:
    """ClusterControlManager.Builder as the tests build it: MockTime(0, 0, 0), session timeout
    1000 ns (1 ms here: kafkasim's sessions are in ms), a no-op BrokerUncleanShutdownHandler;
    ``activate()`` unless ``active=False``."""
    kw.setdefault("session_timeout_ms", 1)
    kw.setdefault("placer_random", JavaRandom(1))
    return ClusterControlManager(metadata_version=metadata_version, active=active,
                                 broker_unclean_shutdown_handler=lambda broker_id: [], **kw)


@pytest.mark.parametrize("mv", ["3.0-IV1", "3.3-IV2"])
def test_replay(mv):
    """ClusterControlManagerTest.testReplay: checkBrokerEpoch after a RegisterBrokerRecord;
    unfence and fence with Fence/UnfenceBrokerRecord before 3.3-IV2, with
    BrokerRegistrationChangeRecord from it."""
    metadata_version = MetadataVersion.parse(mv)
    cc = _cluster_control(metadata_version)
    assert not cc.is_unfenced(0)
    cc.replay(RegisterBrokerRecord(1, 100, "inc"), 100)
    cc.check_broker_epoch(1, 100)
    with pytest.raises(StaleBrokerEpochException):
        cc.check_broker_epoch(1, 101)
    with pytest.raises(StaleBrokerEpochException):
        cc.check_broker_epoch(2, 100)
    assert not cc.is_unfenced(0) and not cc.is_unfenced(1)
    change_record = not metadata_version.is_less_than(IBP_3_3_IV2)
    cc.replay(BrokerRegistrationChangeRecord(1, 100, fenced=UNFENCE) if change_record
              else UnfenceBrokerRecord(1, 100))
    assert not cc.is_unfenced(0) and cc.is_unfenced(1)
    cc.replay(BrokerRegistrationChangeRecord(1, 100, fenced=FENCE) if change_record
              else FenceBrokerRecord(1, 100))
    assert not cc.is_unfenced(0) and not cc.is_unfenced(1)


def test_replay_register_broker_record():
    """ClusterControlManagerTest.testReplayRegisterBrokerRecord: replaying a RegisterBrokerRecord
    again replaces the registration's fenced and in-controlled-shutdown flags."""
    cc = _cluster_control(active=False)
    assert not cc.is_unfenced(0) and not cc.in_controlled_shutdown(0)
    record = RegisterBrokerRecord(0, 100, "inc", None, fenced=True, in_controlled_shutdown=True)
    cc.replay(record, 100)
    assert not cc.is_unfenced(0) and cc.in_controlled_shutdown(0)
    record = dataclasses.replace(record, in_controlled_shutdown=False)
    cc.replay(record, 100)
    assert not cc.is_unfenced(0) and not cc.in_controlled_shutdown(0)
    assert cc.register_broker_record_offset(0) == 100
    cc.replay(dataclasses.replace(record, fenced=False), 100)
    assert cc.is_unfenced(0) and not cc.in_controlled_shutdown(0)


def test_replay_broker_registration_change_record():
    """ClusterControlManagerTest.testReplayBrokerRegistrationChangeRecord: entering controlled
    shutdown keeps the broker unfenced; an UNFENCE change keeps it in controlled shutdown."""
    cc = _cluster_control(active=False)
    cc.replay(RegisterBrokerRecord(0, 100, "inc", None, fenced=False), 100)
    assert cc.is_unfenced(0) and not cc.in_controlled_shutdown(0)
    cc.replay(BrokerRegistrationChangeRecord(0, 100, in_controlled_shutdown=IN_CS))
    assert cc.is_unfenced(0) and cc.in_controlled_shutdown(0)
    cc.replay(BrokerRegistrationChangeRecord(0, 100, fenced=UNFENCE))
    assert cc.is_unfenced(0) and cc.in_controlled_shutdown(0)


@pytest.mark.parametrize("mv", ["3.3-IV2", "3.3-IV3", "3.7-IV2", "latest"])
def test_register_broker_record_version(mv):
    """ClusterControlManagerTest.testRegisterBrokerRecordVersion: registerBroker at offset 123
    writes one RegisterBrokerRecord: epoch 123, fenced, not in controlled shutdown."""
    metadata_version = MetadataVersion.latest() if mv == "latest" else MetadataVersion.parse(mv)
    cc = _cluster_control(metadata_version)
    records, reply = cc.register_broker(0, "0H4fUu1xQEKXFYwB1aBjhg", None, -1, 123, 0)
    assert records == [RegisterBrokerRecord(0, 123, "0H4fUu1xQEKXFYwB1aBjhg", None,
                                            fenced=True, in_controlled_shutdown=False)]
    assert reply.epoch == 123


def test_unregister():
    """ClusterControlManagerTest.testUnregister."""
    cc = _cluster_control()
    cc.replay(RegisterBrokerRecord(1, 100, "fPZv1VBsRFmnlRvmGcOW9w", "arack"), 100)
    assert cc.broker_registrations[1] == BrokerRegistration(
        1, 100, "fPZv1VBsRFmnlRvmGcOW9w", "arack", fenced=True, in_controlled_shutdown=False)
    assert cc.register_broker_record_offset(1) == 100
    cc.replay(UnregisterBrokerRecord(1, 100))
    assert 1 not in cc.broker_registrations
    assert cc.register_broker_record_offset(1) is None


@pytest.mark.parametrize("num_usable_brokers", [3, 10])
def test_place_replicas(num_usable_brokers):
    """ClusterControlManagerTest.testPlaceReplicas: 100 placements of one RF-3 partition over
    the usable brokers, each three distinct brokers."""
    cc = _cluster_control()
    for i in range(num_usable_brokers):
        cc.replay(RegisterBrokerRecord(i, 100, f"inc{i}"), 100)
        cc.replay(UnfenceBrokerRecord(i, 100))
        cc.heartbeat_manager.touch(i, False, 0, 0)
    for i in range(num_usable_brokers):
        assert cc.is_unfenced(i), f"broker {i} was not unfenced."
    for _ in range(100):
        [replicas] = cc.place_replicas(0, 1, 3)
        assert len(set(replicas)) == 3
        assert all(0 <= b < num_usable_brokers for b in replicas)


@pytest.mark.parametrize("mv", ["3.3-IV2", "3.3-IV3"])
def test_registrations_to_records(mv):
    """ClusterControlManagerTest.testRegistrationsToRecords: BrokerRegistration.toRecord keeps
    the in-controlled-shutdown flag only from 3.3-IV3 (before, the loss is reported)."""
    metadata_version = MetadataVersion.parse(mv)
    cc = _cluster_control(metadata_version)
    assert not cc.is_unfenced(0)
    for i in range(3):
        cc.replay(RegisterBrokerRecord(i, 100, f"inc{i}", None), 100)
    for i in range(2):
        cc.replay(UnfenceBrokerRecord(i, 100))
    cc.replay(BrokerRegistrationChangeRecord(0, 100, in_controlled_shutdown=IN_CS))
    losses = []
    records = [cc.broker_registrations[i].to_record(metadata_version, handle_loss=losses.append)
               for i in range(3)]
    supported = metadata_version.is_in_controlled_shutdown_state_supported()
    assert records == [
        RegisterBrokerRecord(0, 100, "inc0", None, fenced=False,
                             in_controlled_shutdown=supported),
        RegisterBrokerRecord(1, 100, "inc1", None, fenced=False),
        RegisterBrokerRecord(2, 100, "inc2", None, fenced=True)]
    assert [e.loss for e in losses] == \
        ([] if supported else ["the inControlledShutdown state of one or more brokers"])


def test_registration_to_record_loss_raises_by_default():
    """ImageWriterOptions' default loss handler throws the UnwritableMetadataException."""
    registration = BrokerRegistration(0, 100, "inc0", None, fenced=False,
                                      in_controlled_shutdown=True)
    with pytest.raises(UnwritableMetadataException, match="metadata.version 3.3-IV2: the "
                       "inControlledShutdown state of one or more brokers"):
        registration.to_record(IBP_3_3_IV2)
    assert registration.to_record().in_controlled_shutdown


@pytest.mark.parametrize("new_incarnation_id", [False, True])
def test_re_registration_and_broker_epoch(new_incarnation_id):
    """ClusterControlManagerTest.testReRegistrationAndBrokerEpoch (KAFKA-16952): the same
    incarnation keeps broker epoch 100; a new one gets 111."""
    cc = _cluster_control(session_timeout_ms=9000)
    records, _ = cc.register_broker(1, "mISEfEFwQIuaD1gKCc5tzQ", None, -1, 100, 0)
    for r in records:
        cc.replay(r, 100)
    incarnation = "07OOcU7MQFeSmGAFPP2Zww" if new_incarnation_id else "mISEfEFwQIuaD1gKCc5tzQ"
    records, _ = cc.register_broker(1, incarnation, None, -1, 111, 0)
    for r in records:
        cc.replay(r, 111)
    assert cc.broker_registrations[1].incarnation_id == incarnation
    assert cc.broker_registrations[1].epoch == (111 if new_incarnation_id else 100)
