"""QuorumControllerTest (the replication part), ported from Kafka.

Follows metadata/src/test/java/org/apache/kafka/controller/QuorumControllerTest.java at trunk
1eb7644 (Oct 2024, 4.0 development), plus the ELR cases trunk added for 4.0 after it
(testElrEnabledByDefault, testUncleanShutdownBrokerElrEnabled -- the renamed and reworked
testUncleanShutdownBroker, ported in both shapes --, testUncleanShutdownElrDisabled,
testMinIsrUpdateWithElr: KAFKA-16540 and the KIP-966 follow-ups). Kafka behaviour by
kafkasim's 4.0 rules; a test's bootstrap picks its metadata.version as Kafka's does
(``SIMPLE_BOOTSTRAP`` is 3.7-IV0).

Every operation goes through kafkasim's ``QuorumController`` by Kafka's names
(``register_broker``, ``process_broker_heartbeat``, ``create_topics``, ``alter_partition``,
``unregister_broker``, ``incremental_alter_configs``, ``describe_configs``): each returns a
``ControllerFuture`` completed once its records are committed, as Kafka's CompletableFutures
are. ``ControllerEnv`` stands for QuorumControllerTestEnv over a LocalLogManagerTestEnv of one
controller: a real single-voter ``KafkaRaftClient`` (node 3000) on a virtual clock. Kafka's
``TestUtils.waitForCondition`` over wall-clock time becomes :meth:`ControllerEnv.wait_for`, which
runs the simulated clock in 10 ms steps; ``time.sleep`` of Kafka's MockTime becomes
:meth:`ControllerEnv.sleep` (the clock moves, no timer fires); ``setMaxReadOffset`` (records
written but not readable yet) becomes controller.quorum.append.linger.ms (records written but
not appended yet). Broker epochs are asserted as what they are in both systems, the offset of
the RegisterBrokerRecord: after kafkasim's LeaderChangeMessage at offset 0 the activation writes
Begin, the bootstrap records and End (ActivationRecordsGenerator, metadata.version 3.6-IV1+), so
a 3.7-IV0 bootstrap's first broker epoch is 4; Kafka's LocalLogManager counts its offsets
otherwise and adds a RegisterControllerRecord, which kafkasim does not model. ``testToImages``
(RecordTestUtils' image round trip) is not ported.

Left out, not modelled by kafkasim: testTimeouts and testEarlyControllerResults (no deadlines on the
controller's event queue, no DeleteTopics / CreatePartitions / reassignment requests),
testIsNodeIdRegisteredWithDynamicQuorum (no ControllerRegistration), the controller
registrations and ProducerIdsRecord of testSnapshotSaveAndLoad (no ControllerRegistration, no
AllocateProducerIds), testFatalMetadataReplayErrorOnActive, testFatalMetadataErrorDuringSnapshot
Loading and testFatalMetadataErrorDuringLogLoading (no fault handlers, no snapshots),
testAppendRecords and testAppendRecordsAtomically (no maxRecordsPerBatch); all of
QuorumControllerMetricsIntegrationTest (NewActiveControllersCount, TimedOutBrokerHeartbeatCount,
EventQueueOperationsTimedOutCount and EventQueueOperationsStartedCount are not modelled; the
KafkaController gauges kafkasim does model are covered by tests/test_kraft_views.py).

Related: tests/test_quorum_controller_s24_kafka.py (testActivationRecords33 / 34 / NonEmptyLog /
PartialBootstrap / PartialTransaction / PartialTransactionNoSupport @4.3.0, on
ActivationRecordsGenerator and OffsetControlManager driven alone, and the running
controller's activation records by release), tests/test_quorum_controller_s23_kafka.py
(testRegisterBrokerKRaftVersions @4.3.0, with the request's feature ranges passed as
``features=``; updateFeatures; NoOpRecord cadence),
tests/test_replication_control_manager_kafka.py (ReplicationControlManagerTest),
tests/test_broker_lifecycle_kafka.py (ClusterControlManagerTest), tests/test_periodic_tasks.py
(the periodic tasks' timing), tests/test_elr_safety.py (ConfigurationControlManager's ELR rules).
"""

from __future__ import annotations

import heapq

import pytest

from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.cluster_control import (
    BrokerHeartbeatReply,
    BrokerIdNotRegisteredException,
    DuplicateBrokerRegistrationException,
    UnknownTopicOrPartitionException,
)
from kafkasim.control.kraft.configuration_control import (
    SET,
    ApiError,
    ConfigResource,
    ResultOrError,
)
from kafkasim.control.kraft.controller_api import ConfigResourceExistenceChecker
from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.quorum_controller import QuorumController
from kafkasim.control.kraft.raft import KafkaRaftClient, RaftLog
from kafkasim.control.kraft.raft_messages import LeaderChangeMessage
from kafkasim.control.kraft.replication_control import CreatableTopic
from kafkasim.core import errors as E
from kafkasim.core.messages import (
    AlterPartitionRequest,
    BrokerHeartbeatRequest,
    BrokerRegistrationRequest,
)
from kafkasim.runtime.bootstrap import version_profile
from kafkasim.runtime.controller_server import CONTROLLER_TIMERS
from kafkasim.runtime.kraft_cluster import kraft_settings, make_managers, raft_options

NODE = 3000
NO_LEADER = R.NO_LEADER
BROKER0 = ConfigResource("BROKER", "0")
SIMPLE_BOOTSTRAP = "3.7-IV0"        # QuorumControllerTest.SIMPLE_BOOTSTRAP
ELR_FEATURE = "eligible.leader.replicas.version"
UNFENCE = R.BrokerRegistrationFencingChange.UNFENCE


def feature(name: str, level: int) -> R.FeatureLevelRecord:
    return R.FeatureLevelRecord(name, level)


def bootstrap(mv: str, *extra) -> tuple:
    """BootstrapMetadata.fromVersion(mv) (+ ``extra`` records: fromRecords)."""
    return (feature("metadata.version", MetadataVersion.parse(mv).feature_level), *extra)


class ControllerEnv:
    """QuorumControllerTestEnv with one controller; it is also the controller's ``ctx``."""

    def __init__(self, bootstrap_records=None, *, session_timeout_ms: int = 9000,
                 leader_imbalance_check_interval_s: int = 300, linger_ms: int = 0,
                 log=(), version: str = "4.0", config: dict | None = None,
                 kraft_version: int = 0) -> None:
        self.now = 0
        self._timers: list = []
        self._seq = 0
        self.sent: list = []
        profile = version_profile(version, None, {
            "broker.session.timeout.ms": session_timeout_ms,
            "broker.heartbeat.interval.ms": min(2000, session_timeout_ms // 2),
            "leader.imbalance.check.interval.seconds": leader_imbalance_check_interval_s,
            **(config or {})}, "kraft")
        cfg = dict(profile.broker_config)
        settings = kraft_settings(version, profile.rules, cfg, 1)
        boot = bootstrap(latest_testing()) if bootstrap_records is None else bootstrap_records
        mv = MetadataVersion.from_feature_level(boot[0].feature_level)
        # QuorumControllerTestEnv: setEligibleLeaderReplicasEnabled(mv.isElrSupported())
        settings.update({"metadata.version": mv.version(), "elr_enabled": mv.is_elr_supported(),
                         "bootstrap_records": tuple(boot)})
        cfg.setdefault("metadata.max.idle.interval.ms", 500)
        cfg.update(bootstrap_records=tuple(boot), periodic_tasks=settings["periodic_tasks"],
                   kafka_version=version, controller_ids=(NODE,))
        quorum = {"controller.quorum.append.linger.ms": linger_ms}
        self.raft = KafkaRaftClient(NODE, (NODE,), quorum, log=RaftLog(log),
                                    kraft_version=kraft_version, **raft_options(profile.rules))
        self.controller = QuorumController(NODE, lambda: make_managers(settings), cfg)
        self.raft.start(self)
        self.advance(0)
        assert self.controller.active

    # -- the controller node's ctx ------------------------------------------------------------
    def send(self, dst, msg) -> None:
        self.sent.append((dst, msg))

    def schedule(self, delay_ms: int, timer: str, *args) -> None:
        self._seq += 1
        heapq.heappush(self._timers, (self.now + delay_ms, self._seq, timer, args))

    def random_int(self, bound: int) -> int:
        return 0

    def trace(self, *args, **kwargs) -> None:
        pass

    def on_leader_change(self, leader_id: int, epoch: int) -> None:
        self.controller.on_leader_change(self, leader_id, epoch)

    def on_high_watermark(self, hw: int) -> None:
        self.controller.on_high_watermark(self, hw)

    # -- the clock ----------------------------------------------------------------------------
    def advance(self, ms: int) -> None:
        """Run the clock ``ms`` forward, firing every timer due on the way."""
        end = self.now + ms
        while self._timers and self._timers[0][0] <= end:
            at, _seq, timer, args = heapq.heappop(self._timers)
            self.now = max(self.now, at)
            target = self.controller if timer in CONTROLLER_TIMERS else self.raft
            target.on_timer(self, timer, *args)
        self.now = end

    def get(self, future, timeout_ms: int = 5000):
        """CompletableFuture.get(): run the clock until the operation completes (its records
        committed), then its value (or its exception, raised)."""
        assert self.wait_for(future.done, timeout_ms, step_ms=1), "the operation never completed"
        return future.get()

    def sleep(self, ms: int) -> None:
        """MockTime.sleep: the clock moves, nothing runs."""
        self.now += ms

    def wait_for(self, condition, timeout_ms: int, step_ms: int = 10) -> bool:
        """TestUtils.waitForCondition in simulated time."""
        waited = 0
        while not condition():
            if waited >= timeout_ms:
                return False
            self.advance(step_ms)
            waited += step_ms
        return True

    # -- shortcuts ------------------------------------------------------------------------------
    @property
    def active(self) -> QuorumController:
        return self.controller

    def metadata_records(self) -> list:
        """logEnv.allRecords() without the Raft control records."""
        return [r for _o, _e, r in self.raft.log.entries if not isinstance(r, LeaderChangeMessage)]


def latest_testing() -> str:
    return "4.0-IV3"    # MetadataVersion.latestTesting() at 1eb7644


def register_broker(env: ControllerEnv, broker_id: int, *, incarnation: str | None = None,
                    previous_broker_epoch: int = -1) -> int:
    reply = env.get(env.active.register_broker(env, BrokerRegistrationRequest(
        broker_id, incarnation or f"incarnation-{broker_id}-{env.now}", None,
        previous_broker_epoch)))
    return reply.epoch


def heartbeat(env: ControllerEnv, broker_id: int, epoch: int, *, want_fence=False,
              want_shut_down=False, offset=100000) -> BrokerHeartbeatReply:
    return env.get(env.active.process_broker_heartbeat(env, BrokerHeartbeatRequest(
        broker_id, epoch, offset, want_fence, want_shut_down)))


def send_broker_heartbeat_to_unfence_brokers(env, brokers, broker_epochs) -> None:
    """QuorumControllerIntegrationTestUtils.sendBrokerHeartbeatToUnfenceBrokers."""
    for b in brokers:
        assert heartbeat(env, b, broker_epochs[b]) == \
            BrokerHeartbeatReply(True, False, False, False)


def register_brokers_and_unfence(env, num_brokers: int) -> dict[int, int]:
    """QuorumControllerIntegrationTestUtils.registerBrokersAndUnfence."""
    epochs = {}
    for b in range(num_brokers):
        epochs[b] = register_broker(env, b, incarnation=f"kxAT73dKQsitIedpiPtwB{b}")
        heartbeat(env, b, epochs[b])
    return epochs


def create_topics(env, *topics: CreatableTopic) -> dict:
    return env.get(env.active.create_topics(env, topics))


def all_fenced(env, brokers) -> bool:
    return not any(env.active.cluster_control.is_unfenced(b) for b in brokers)


def fence_while_heartbeating(env, keep, fence, epochs, timeout_ms) -> bool:
    """The waitForCondition loop of the fencing tests: ``keep`` heartbeat, ``fence`` do not."""
    def fenced() -> bool:
        send_broker_heartbeat_to_unfence_brokers(env, keep, epochs)
        return all_fenced(env, fence)
    return env.wait_for(fenced, timeout_ms)


def partition(env, topic: str, pid: int = 0) -> R.PartitionRegistration:
    """replicationControl().getPartition(topicId, partitionId)."""
    return env.active.replication_control.partition(topic, pid)


# -- configuration operations ---------------------------------------------------------------------
def test_configuration_operations():
    """Set a config, validate-only first, and read it back."""
    env = ControllerEnv()
    register_broker(env, 0)
    active = env.active
    assert active.incremental_alter_configs(
        env, {BROKER0: {"baz": (SET, "123")}}, True).get() == {BROKER0: ApiError()}
    assert active.describe_configs(env, {BROKER0: []}).get() == {BROKER0: ResultOrError({})}
    assert active.incremental_alter_configs(
        env, {BROKER0: {"baz": (SET, "123")}}, False).get() == {BROKER0: ApiError()}
    assert active.describe_configs(env, {BROKER0: []}).get() == \
        {BROKER0: ResultOrError({"baz": "123"})}


def test_delayed_configuration_operations():
    """An incrementalAlterConfigs completes only once its records can be read from the log;
    until then describeConfigs shows the committed configs."""
    env = ControllerEnv(linger_ms=25)
    register_broker(env, 0)
    future1 = env.active.incremental_alter_configs(env, {BROKER0: {"baz": (SET, "123")}}, False)
    assert not future1.done()
    assert env.active.describe_configs(env, {BROKER0: []}).get() == \
        {BROKER0: ResultOrError({})}
    env.advance(25)
    assert future1.get() == {BROKER0: ApiError()}


# -- fencing ---------------------------------------------------------------------------------
def test_fence_multiple_brokers():
    """Brokers that stop heartbeating are fenced one by one; the survivor ends up the only ISR
    member and leader, and the partitions are imbalanced."""
    all_brokers, keep, fence = [1, 2, 3, 4, 5], [1], [2, 3, 4, 5]
    session_timeout_ms = 1000
    env = ControllerEnv(bootstrap(SIMPLE_BOOTSTRAP), session_timeout_ms=session_timeout_ms)
    epochs = {b: register_broker(env, b) for b in all_brokers}
    assert all_fenced(env, all_brokers)
    send_broker_heartbeat_to_unfence_brokers(env, all_brokers, epochs)
    result = create_topics(env, CreatableTopic("foo", 5, 5))["foo"]
    assert result.error == E.NONE
    assert fence_while_heartbeating(env, keep, fence, epochs, session_timeout_ms * 3)
    send_broker_heartbeat_to_unfence_brokers(env, keep, epochs)
    assert env.active.cluster_control.is_unfenced(1)
    assert all_fenced(env, fence)
    assert partition(env, "foo").isr == (1,)
    assert partition(env, "foo").leader == 1
    assert env.active.replication_control.are_partition_leaders_imbalanced()


def test_elr_enabled_by_default():
    """A bootstrap that finalizes eligible.leader.replicas.version 1 gets a cluster-level
    min.insync.replicas at activation."""
    env = ControllerEnv(bootstrap("4.0-IV1", feature(ELR_FEATURE, 1)), session_timeout_ms=500)
    assert "min.insync.replicas" in env.active.configuration_control.cluster_config()


def test_elr_enabled_by_default_activation_records():
    """testElrEnabledByDefault, continued (ActivationRecordsGenerator.recordsForEmptyLog): the
    cluster-level min.insync.replicas, at the controller's static value, comes after the
    bootstrap records, inside the bootstrap transaction (ActivationRecordsGenerator.java:97
    @4.0 4ae681446f)."""
    env = ControllerEnv(bootstrap("4.0-IV1", feature(ELR_FEATURE, 1)))
    assert env.metadata_records() == [
        R.BeginTransactionRecord("Bootstrap records"),
        feature("metadata.version", MetadataVersion.parse("4.0-IV1").feature_level),
        feature(ELR_FEATURE, 1),
        R.ConfigRecord("BROKER", "", "min.insync.replicas", "1"),
        R.EndTransactionRecord()]


def _three_brokers_all_fenced_with_elr(env):
    """The common start of the unclean-shutdown tests with ELR: three brokers, foo (RF 3,
    min.insync.replicas 2), then every broker fenced: ISR empty, two replicas in the ELR, the
    last leader in the LastKnownElr."""
    all_brokers = [1, 2, 3]
    epochs = {b: register_broker(env, b) for b in all_brokers}
    assert all_fenced(env, all_brokers)
    send_broker_heartbeat_to_unfence_brokers(env, all_brokers, epochs)
    assert create_topics(env, CreatableTopic("foo", 1, 3))["foo"].error == E.NONE
    env.active.configuration_control.replay(
        R.ConfigRecord("TOPIC", "foo", "min.insync.replicas", "2"))
    assert env.wait_for(lambda: all_fenced(env, all_brokers), 500 * 30)
    p = partition(env, "foo")
    assert len(p.last_known_elr) == 1, p
    assert p.isr == () and p.leader == NO_LEADER, p
    assert len(p.elr) == 2, p
    return epochs, p


def test_unclean_shutdown_broker_elr_enabled():
    """An unclean restart removes the broker from the ELR but not from the LastKnownElr; a clean
    re-registration (previous broker epoch) keeps the ELR; the ELR member that unfences is
    elected and ELR and LastKnownElr are cleared."""
    env = ControllerEnv(bootstrap("4.0-IV1"), session_timeout_ms=500)
    epochs, p = _three_brokers_all_fenced_with_elr(env)
    last_known_elr = p.last_known_elr
    unclean = last_known_elr[0]
    to_be_leader = p.elr[1] if p.elr[0] == unclean else p.elr[0]
    epochs[unclean] = register_broker(env, unclean)
    p = partition(env, "foo")
    assert p.elr == (to_be_leader,), p
    assert p.last_known_elr == last_known_elr, p
    epochs[to_be_leader] = register_broker(env, to_be_leader,
                                           previous_broker_epoch=epochs[to_be_leader])
    p = partition(env, "foo")
    assert p.elr == (to_be_leader,), p
    assert p.last_known_elr == last_known_elr, p
    send_broker_heartbeat_to_unfence_brokers(env, [to_be_leader], epochs)
    assert env.wait_for(lambda: env.active.cluster_control.is_unfenced(to_be_leader), 1500)
    p = partition(env, "foo")
    assert (p.isr, p.elr, p.last_known_elr, p.leader) == ((to_be_leader,), (), (), to_be_leader)


def test_unclean_shutdown_broker():
    """testUncleanShutdownBroker (trunk 1eb7644): the ELR member that restarts uncleanly leaves
    the ELR, a second unclean restart of the last known leader keeps the LastKnownElr, and the
    other ELR member is elected once unfenced."""
    env = ControllerEnv(bootstrap("4.0-IV1"), session_timeout_ms=500)
    epochs, p = _three_brokers_all_fenced_with_elr(env)
    last_known_elr = p.last_known_elr
    if last_known_elr[0] == p.elr[0]:
        unclean, to_be_leader = p.elr[0], p.elr[1]
    else:
        unclean, to_be_leader = p.elr[1], p.elr[0]
    register_broker(env, unclean)
    assert partition(env, "foo").elr == (to_be_leader,)
    register_broker(env, last_known_elr[0], incarnation="again")
    assert partition(env, "foo").last_known_elr == last_known_elr
    send_broker_heartbeat_to_unfence_brokers(env, [to_be_leader], epochs)
    p = partition(env, "foo")
    assert (p.isr, p.elr, p.last_known_elr, p.leader) == ((to_be_leader,), (), (), to_be_leader)


def test_unclean_shutdown_elr_disabled():
    """Without ELR, each unclean restart of the leader moves leadership (epoch + 1) and takes
    it out of the ISR, except the last ISR member, which stays with no leader."""
    env = ControllerEnv(bootstrap("4.0-IV0"), session_timeout_ms=500)
    epochs = {b: register_broker(env, b) for b in (1, 2, 3)}
    send_broker_heartbeat_to_unfence_brokers(env, [1, 2, 3], epochs)
    assert create_topics(env, CreatableTopic("foo", 1, 3))["foo"].error == E.NONE
    # wait for the sessions to end (Kafka's test also keeps the stale-broker check from running)
    env.sleep(500 + 1)
    for i in range(3):
        p = partition(env, "foo")
        assert p.elr == () and p.last_known_elr == (), p
        prev_leader, prev_epoch = p.leader, p.leader_epoch
        register_broker(env, prev_leader, incarnation=f"restart-{i}")
        p = partition(env, "foo")
        assert p.leader != prev_leader and p.leader_epoch != prev_epoch, p
        if i == 2:
            assert p.isr == (prev_leader,) and p.leader == NO_LEADER, p
        else:
            assert prev_leader not in p.isr, p


def test_unclean_restart_with_a_live_session_is_a_duplicate_registration():
    """testUncleanShutdownElrDisabled, continued: without the wait, the broker's session is still
    valid and a new incarnation is refused (ClusterControlManager.registerBroker)."""
    env = ControllerEnv(bootstrap("4.0-IV0"), session_timeout_ms=500)
    epoch = register_broker(env, 1)
    heartbeat(env, 1, epoch)
    future = env.active.register_broker(env, BrokerRegistrationRequest(1, "other", None))
    with pytest.raises(DuplicateBrokerRegistrationException,
                       match="Another broker is registered with that broker id."):
        future.get()


def test_min_isr_update_with_elr():
    """Lowering min.insync.replicas (topic, then cluster level) through incrementalAlterConfigs
    writes a ConfigRecord and a ClearElrRecord; replaying them clears the ELR."""
    keep, fence = [1], [2, 3]
    env = ControllerEnv(bootstrap("4.0-IV1"), session_timeout_ms=300)
    epochs = {b: register_broker(env, b) for b in (1, 2, 3)}
    assert all_fenced(env, [1, 2, 3])
    send_broker_heartbeat_to_unfence_brokers(env, [1, 2, 3], epochs)
    results = create_topics(env, CreatableTopic("foo", 1, 3), CreatableTopic("bar", 1, 3))
    assert results["foo"].error == results["bar"].error == E.NONE
    configs = env.active.configuration_control
    configs.replay(R.ConfigRecord("BROKER", "", "min.insync.replicas", "2"))
    assert fence_while_heartbeating(env, keep, fence, epochs, 300 * 30)
    send_broker_heartbeat_to_unfence_brokers(env, keep, epochs)
    assert env.active.cluster_control.is_unfenced(1) and all_fenced(env, fence)
    p = partition(env, "foo")
    assert p.isr == (1,) and len(p.elr) == 1, p

    rc = env.active.replication_control
    for resource, topic in ((ConfigResource("TOPIC", "foo"), "foo"),
                            (ConfigResource("BROKER", ""), "bar")):
        assert partition(env, topic).isr == (1,) and len(partition(env, topic).elr) == 1
        records, _results = configs.incremental_alter_configs(
            {resource: {"min.insync.replicas": (SET, "1")}}, True)
        assert len(records) == 2, records
        configs.replay(records[0])
        rc.replay(records[1])
        p = partition(env, topic)
        assert p.elr == () and p.isr == (1,), p


def test_min_isr_update_through_the_controller_clears_elr():
    """testMinIsrUpdateWithElr through the controller: QuorumController.incrementalAlterConfigs
    writes both records, and the committed ClearElrRecord empties foo's ELR; with ELR on, a
    broker-level min.insync.replicas is refused with INVALID_CONFIG and writes nothing
    (ConfigurationControlManager.validateAlterConfig)."""
    env = ControllerEnv(bootstrap("4.0-IV1"), session_timeout_ms=300)
    epochs = {b: register_broker(env, b) for b in (1, 2, 3)}
    send_broker_heartbeat_to_unfence_brokers(env, [1, 2, 3], epochs)
    create_topics(env, CreatableTopic("foo", 1, 3, configs={"min.insync.replicas": "2"}))
    assert fence_while_heartbeating(env, [1], [2, 3], epochs, 300 * 30)
    assert len(partition(env, "foo").elr) == 1
    end = env.raft.log.end_offset
    broker = ConfigResource("BROKER", "1")
    results = env.active.incremental_alter_configs(
        env, {broker: {"min.insync.replicas": (SET, "1")}}, False).get()
    assert results == {broker: ApiError(
        E.INVALID_CONFIG, "Broker-level min.insync.replicas cannot be altered while ELR is "
                          "enabled.")}
    foo = ConfigResource("TOPIC", "foo")
    assert env.active.incremental_alter_configs(
        env, {foo: {"min.insync.replicas": (SET, "1")}}, False).get() == {foo: ApiError()}
    written = [r for _o, _e, r in env.raft.log.entries_between(end, env.raft.log.end_offset)
               if not isinstance(r, R.NoOpRecord)]
    assert written == [R.ConfigRecord("TOPIC", "foo", "min.insync.replicas", "1"),
                       R.ClearElrRecord("foo")]
    assert partition(env, "foo").elr == ()


# -- preferred leaders --------------------------------------------------------------------------
def test_balance_partition_leaders():
    """After a fenced broker comes back and rejoins the ISR of the partition it prefers, the
    periodic preferred election moves leadership back: no partition stays imbalanced."""
    all_brokers, keep, fence = [1, 2, 3], [1, 2], [3]
    session_timeout_ms = 2000
    env = ControllerEnv(bootstrap(SIMPLE_BOOTSTRAP), session_timeout_ms=session_timeout_ms,
                        leader_imbalance_check_interval_s=1)
    epochs = {b: register_broker(env, b) for b in all_brokers}
    assert all_fenced(env, all_brokers)
    send_broker_heartbeat_to_unfence_brokers(env, all_brokers, epochs)
    result = create_topics(env, CreatableTopic("foo", 3, 3))["foo"]
    assert result.error == E.NONE
    assert fence_while_heartbeating(env, keep, fence, epochs, session_timeout_ms * 3)
    send_broker_heartbeat_to_unfence_brokers(env, keep, epochs)
    rc = env.active.replication_control
    assert rc.are_partition_leaders_imbalanced()
    for b in fence:
        epochs[b] = register_broker(env, b)
    send_broker_heartbeat_to_unfence_brokers(env, all_brokers, epochs)
    imbalanced = rc.brokers_to_isrs.imbalanced_partitions()
    assert len(imbalanced) == 1
    pid = imbalanced[0][1]
    p = partition(env, "foo", pid)
    response = env.active.alter_partition(env, AlterPartitionRequest(
        p.leader, epochs[p.leader],
        ((result.topic_id, pid, p.leader_epoch, (1, 2, 3), p.partition_epoch),))).get()
    assert response.partitions[0][2] == E.NONE

    def balanced() -> bool:
        if env.now % (session_timeout_ms // 2) == 0:
            send_broker_heartbeat_to_unfence_brokers(env, all_brokers, epochs)
        return not rc.are_partition_leaders_imbalanced()
    assert env.wait_for(balanced, 1000 * 10), "leaders were not balanced after unfencing"


# -- the metadata log ---------------------------------------------------------------------------
def test_no_op_record_write_after_timeout():
    """The active controller writes a NoOpRecord every metadata.max.idle.interval.ms, so the
    high watermark keeps moving with nothing else to write."""
    env = ControllerEnv()
    assert env.raft.high_watermark is not None
    first = env.raft.high_watermark
    assert env.wait_for(lambda: env.raft.high_watermark > first, 1000)
    second = env.raft.high_watermark
    assert env.wait_for(lambda: env.raft.high_watermark > second, 1000)
    assert isinstance(env.raft.log.entries[-1][2], R.NoOpRecord)


def test_unregister_broker():
    """createTopics fails while every broker is fenced; once the broker is unfenced it
    succeeds, and unregistering the broker leaves its partition without a leader."""
    env = ControllerEnv()
    active = env.active
    epoch = register_broker(env, 0)
    assert epoch == next(o for o, _e, r in env.raft.log.entries
                         if isinstance(r, R.RegisterBrokerRecord))
    foo = CreatableTopic("foo", 1, 1)
    result = active.create_topics(env, [foo]).get()["foo"]
    assert result.error == E.INVALID_REPLICATION_FACTOR
    assert result.error_message == "Unable to replicate the partition 1 time(s): All brokers " \
                                   "are currently fenced."
    assert heartbeat(env, 0, epoch) == BrokerHeartbeatReply(True, False, False, False)
    assert active.create_topics(env, [foo]).get()["foo"].error == E.NONE
    rc = active.replication_control
    assert [pid for _info, pid in rc.partitions_with_broker_in_isr(0)] == [0]
    assert active.unregister_broker(env, 0).get() is None
    assert [pid for _info, pid in rc.brokers_to_isrs.partitions_with_no_leader()] == [0]


def test_unregister_unknown_broker():
    """testUnregisterBroker, continued: ReplicationControlManager.unregisterBroker refuses an
    unknown broker (BrokerIdNotRegisteredException)."""
    env = ControllerEnv()
    with pytest.raises(BrokerIdNotRegisteredException,
                       match="Broker ID 7 is not currently registered"):
        env.active.unregister_broker(env, 7).get()


def test_snapshot_save_and_load():
    """The records a session writes, in order (Kafka's generateTestRecords @4.0 4ae681446f,
    without its RegisterControllerRecord): the bootstrap's metadata.version between Begin and
    EndTransactionRecords, four fenced registrations, three unfencings, then the topic and its
    manually assigned partitions."""
    env = ControllerEnv(bootstrap(SIMPLE_BOOTSTRAP))
    epochs = {}
    for i in range(4):
        epochs[i] = register_broker(env, i, incarnation=f"kxAT73dKQsitIedpiPtwB{i}")
    for i in range(3):
        assert heartbeat(env, i, epochs[i]) == BrokerHeartbeatReply(True, False, False, False)
    foo_id = create_topics(env, CreatableTopic(
        "foo", -1, -1, assignments={0: [0, 1, 2], 1: [1, 2, 0]}))["foo"].topic_id
    expected = [R.BeginTransactionRecord("Bootstrap records"),
                feature("metadata.version", MetadataVersion.parse(SIMPLE_BOOTSTRAP).feature_level),
                R.EndTransactionRecord()]
    assert epochs[0] == 4     # LeaderChangeMessage, Begin, FeatureLevelRecord, End before it
    expected += [R.RegisterBrokerRecord(i, epochs[i], f"kxAT73dKQsitIedpiPtwB{i}", None,
                                        fenced=True) for i in range(4)]
    expected += [R.BrokerRegistrationChangeRecord(i, epochs[i], fenced=UNFENCE)
                 for i in range(3)]
    expected += [R.TopicRecord("foo", foo_id),
                 R.PartitionRecord(0, foo_id, (0, 1, 2), (0, 1, 2), leader=0, leader_epoch=0,
                                   partition_epoch=0),
                 R.PartitionRecord(1, foo_id, (1, 2, 0), (1, 2, 0), leader=1, leader_epoch=0,
                                   partition_epoch=0)]
    assert env.metadata_records() == expected


def test_config_resource_existence_checker():
    """The cluster-level resource and registered brokers exist; other brokers and unknown
    topics do not."""
    env = ControllerEnv()
    register_brokers_and_unfence(env, 5)
    create_topics(env, CreatableTopic("foo", 1, 3))
    checker = ConfigResourceExistenceChecker(env.active.cluster_control,
                                             env.active.replication_control, env.raft.voters)
    checker.accept(ConfigResource("BROKER", ""))
    checker.accept(ConfigResource("BROKER", "3"))
    checker.accept(ConfigResource("BROKER", str(NODE)))    # a controller node
    with pytest.raises(BrokerIdNotRegisteredException, match="No node with id 10 found."):
        checker.accept(ConfigResource("BROKER", "10"))
    checker.accept(ConfigResource("TOPIC", "foo"))
    with pytest.raises(UnknownTopicOrPartitionException, match="The topic 'bar' does not exist."):
        checker.accept(ConfigResource("TOPIC", "bar"))


def test_incremental_alter_configs_of_an_unknown_resource():
    """testConfigResourceExistenceChecker through the controller: incrementalAlterConfigs of an
    unknown broker or topic answers the checker's error and writes nothing."""
    env = ControllerEnv()
    register_brokers_and_unfence(env, 1)
    bar, b10 = ConfigResource("TOPIC", "bar"), ConfigResource("BROKER", "10")
    end = env.raft.log.end_offset
    results = env.active.incremental_alter_configs(
        env, {bar: {"min.insync.replicas": (SET, "2")}, b10: {"baz": (SET, "1")}}, False).get()
    assert results == {
        bar: ApiError(E.UNKNOWN_TOPIC_OR_PARTITION, "The topic 'bar' does not exist."),
        b10: ApiError(E.BROKER_ID_NOT_REGISTERED, "No node with id 10 found.")}
    assert env.raft.log.end_offset == end


# QuorumControllerTest.COMPLEX_BOOTSTRAP @4.3.0: metadata.version MINIMUM_VERSION (3.3-IV3; 3.3-IV1
# at 1eb7644 -- a 4.x controller supports nothing below 3.3-IV3, KAFKA-18601, and its
# FeatureControlManager refuses to replay a lower level)
COMPLEX_BOOTSTRAP = bootstrap("3.3-IV3", R.ConfigRecord("BROKER", "", "foo", "bar"))


def test_insert_bootstrap_records_to_empty_log():
    """An empty log gets the bootstrap records: their metadata.version and cluster config."""
    env = ControllerEnv(COMPLEX_BOOTSTRAP)
    assert env.active.replication_control.metadata_version == MetadataVersion.parse("3.3-IV3")
    assert env.active.feature_control.metadata_version() == MetadataVersion.parse("3.3-IV3")
    default = ConfigResource("BROKER", "")
    assert env.active.describe_configs(env, {default: []}).get() == \
        {default: ResultOrError({"foo": "bar"})}


PRE_PRODUCTION_RECORDS = (
    R.RegisterBrokerRecord(123, 42, "v78Gbc6sQXK0y5qqRxiryw", None),
    R.UnfenceBrokerRecord(123, 42),
    R.TopicRecord("bar", "cxBT72dK4si8Ied1iP4wBA"),
)


def test_upgrade_from_pre_production_version():
    """A log that already has records but no metadata.version (a pre-production 3.0 log; Kafka
    loads it from a snapshot, here it is the log) is read as 3.0-IV1, and the bootstrap records
    are not written: its ConfigRecord is not applied."""
    log = [(i, 0, r) for i, r in enumerate(PRE_PRODUCTION_RECORDS)]
    env = ControllerEnv(COMPLEX_BOOTSTRAP, log=log)
    assert env.active.replication_control.metadata_version == MetadataVersion.parse("3.0-IV1")
    assert env.active.configuration_control.get_configs(ConfigResource("BROKER", "")) == {}
    assert env.active.cluster_control.is_unfenced(123)
    assert not any(isinstance(r, R.FeatureLevelRecord) for r in env.metadata_records())


def test_operations_on_an_inactive_controller_fail_with_not_controller():
    """QuorumController's operations on a controller that renounced (or never claimed) fail
    with NOT_CONTROLLER (ControllerExceptions.newWrongControllerException), and so do the
    ones still waiting for their records to commit (deferredEventQueue.failAll)."""
    env = ControllerEnv(linger_ms=25)
    env.advance(25)   # the bootstrap records are committed
    pending = env.active.register_broker(env, BrokerRegistrationRequest(0, "x", None))
    assert not pending.done()
    env.active.renounce(env)
    assert pending.exception().error == E.NOT_CONTROLLER
    future = env.active.process_broker_heartbeat(env, BrokerHeartbeatRequest(0, 2, 0, False,
                                                                             False))
    assert future.exception().error == E.NOT_CONTROLLER
