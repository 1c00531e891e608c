"""KRaft quorum controller: broker re-registration, the periodic tasks, the event performance
monitor, the offsets, activation records and purgatory, ported at 4.1.0 (confluentinc
13f70256db) and 4.3.0 (a9ce322153).

- KAFKA-19047 (apache/kafka PR #19296) made ``ClusterControlManager.registerBroker`` accept a
  new incarnation of a broker in controlled shutdown while its session lived, and reworded the
  DuplicateBrokerRegistrationException. KAFKA-19130 (PR #19454) took the controlled-shutdown
  condition out again before 4.1.0 shipped (and rewrote
  ClusterControlManagerTest.testDuplicateBrokerRegistrationWithInactiveBroker to expect the
  refusal), so no release lets such a broker in: only the message changed (rule
  ``duplicate_registration_message_names_session_expiry``, 4.1+). The ClusterControlManager
  cases themselves are in tests/test_cluster_control_more_kafka.py; here the QuorumController
  answers by release.
- EventPerformanceMonitorTest @4.3.0 (all 12 cases) on
  ``kafkasim.control.kraft.event_performance.EventPerformanceMonitor`` (KAFKA-16446, 4.0+), and
  QuorumController's ``generatePeriodicPerformanceMessage`` task (period
  ``controller.performance.sample.period.ms``).
- OffsetControlManagerTest @4.3.0, all 16 cases, on the new
  ``kafkasim.control.kraft.offset_control.OffsetControlManager`` (with the SnapshotRegistry
  epochs it drives and TrackingSnapshotRegistry's operation list). kafkasim's QuorumController
  does not use it: it keeps the same offsets itself (its open transaction's start too).
- ActivationRecordsGeneratorTest @4.3.0 (all 5 cases) and QuorumControllerTest
  .testActivationRecords33 / 34 / NonEmptyLog / PartialBootstrap / PartialTransaction /
  PartialTransactionNoSupport @4.3.0 on ``kafkasim.control.kraft.activation_records`` (the
  generator with KIP-868 transaction records, which the running QuorumController calls on
  activation: tests/test_activation_records_s26.py).
- DeferredEventQueueTest @4.3.0 (server-common; ControllerPurgatoryTest until apache/kafka PR
  #13555), all 3 cases, on ``kafkasim.control.kraft.deferred_event_queue.DeferredEventQueue``,
  the purgatory QuorumController keeps its waiting operations in.

Not ported: ClusterControlManagerTest.testRegisterControlWithUnsupportedMetadataVersion (no
controller registrations), testDefaultDir / testHasOnlineDir /
testRegisterWithDuplicateDirectoryId (no log directory ids on registrations);
QuorumControllerTest.testFatalMetadataErrorDuring* / testFatalMetadataReplayErrorOnActive (no
fault handlers), testTimeouts / testEarlyControllerResults (no event deadlines), testToImages,
testAppendRecordsAtomically (no maxRecordsPerBatch). BrokerHeartbeatManagerTest,
BrokerHeartbeatTrackerTest and PeriodicTaskControlManagerTest @4.3.0 are ported already
(tests/test_broker_heartbeat.py, tests/test_periodic_tasks.py).

Scenarios are Kafka's; code is our own.
"""

from __future__ import annotations

import re

import pytest
from test_quorum_controller_kafka import (
    ControllerEnv,
    bootstrap,
    create_topics,
    heartbeat,
    partition,
    register_brokers_and_unfence,
)

from kafkasim.control.kraft.activation_records import (
    ActivationRecordsGenerator,
    BootstrapMetadata,
)
from kafkasim.control.kraft.cluster_control import (
    DUPLICATE_REGISTRATION_MESSAGE,
    DUPLICATE_REGISTRATION_MESSAGE_4_1,
    DuplicateBrokerRegistrationException,
)
from kafkasim.control.kraft.controller_api import ControllerFuture
from kafkasim.control.kraft.deferred_event_queue import DeferredEventQueue
from kafkasim.control.kraft.event_performance import (
    EventPerformanceMonitor,
    format_ns_as_decimal_ms,
)
from kafkasim.control.kraft.feature_control import FeatureControlManager, QuorumFeatures
from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.offset_control import (
    Batch,
    OffsetAndEpoch,
    OffsetControlManager,
    SnapshotRegistry,
)
from kafkasim.control.kraft.records import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
)
from kafkasim.control.kraft.replication_control import CreatableTopic
from kafkasim.core.messages import BrokerRegistrationRequest
from kafkasim.settings.config import ConfigError


# -- KAFKA-19047 / KAFKA-19130: re-registering while the old session lives -------------------
@pytest.mark.parametrize(("version", "message"), [
    ("4.0", DUPLICATE_REGISTRATION_MESSAGE),
    ("4.1", DUPLICATE_REGISTRATION_MESSAGE_4_1),
    ("4.3", DUPLICATE_REGISTRATION_MESSAGE_4_1),
])
def test_duplicate_registration_message_by_release(version, message):
    """ClusterControlManager.registerBroker @4.0 (4ae681446f) vs @4.1.0 (KAFKA-19047): a new
    incarnation of an unfenced broker with a live session is refused; from 4.1 the message
    adds that it resolves itself once the old session expires."""
    env = ControllerEnv(bootstrap("4.0-IV3"), session_timeout_ms=1000, version=version)
    register_brokers_and_unfence(env, 1)
    future = env.active.register_broker(env, BrokerRegistrationRequest(0, "restarted", None))
    with pytest.raises(DuplicateBrokerRegistrationException) as e:
        env.get(future)
    assert str(e.value) == message


@pytest.mark.parametrize("version", ["4.0", "4.1", "4.3", "4.4"])
def test_broker_in_controlled_shutdown_cannot_re_register_while_its_session_lives(version):
    """testDuplicateBrokerRegistrationWithInactiveBroker as KAFKA-19130 left it (@4.1.0 ..
    @4.3.0): a broker in controlled shutdown whose session is still valid is not let in under a
    new incarnation -- KAFKA-19047's exception for it never shipped. Once the session has
    expired (and the broker was fenced), the new incarnation registers."""
    env = ControllerEnv(bootstrap("4.0-IV3"), session_timeout_ms=1000, version=version)
    epochs = register_brokers_and_unfence(env, 2)
    create_topics(env, CreatableTopic("foo", 1, 2))
    leader = partition(env, "foo").leader
    reply = heartbeat(env, leader, epochs[leader], want_shut_down=True, offset=0)
    assert reply.in_controlled_shutdown and not reply.should_shut_down
    assert env.active.cluster_control.in_controlled_shutdown(leader)
    future = env.active.register_broker(env, BrokerRegistrationRequest(leader, "again", None))
    with pytest.raises(DuplicateBrokerRegistrationException):
        env.get(future)
    other = 1 - leader
    for _ in range(4):   # the other broker keeps its session; the shutting-down one goes quiet
        env.advance(400)
        heartbeat(env, other, epochs[other])
    assert not env.active.cluster_control.is_unfenced(leader)
    reply = env.get(env.active.register_broker(
        env, BrokerRegistrationRequest(leader, "again", None)))
    assert reply.epoch > epochs[leader]


# -- EventPerformanceMonitorTest @4.3.0 (KAFKA-16446) -----------------------------------------
MS = 1_000_000     # ns per ms
S = 1000 * MS


def test_default_period_ns():
    """EventPerformanceMonitorTest.testDefaultPeriodNs."""
    assert EventPerformanceMonitor.Builder().build().period_ns() == 60 * S


def test_slowest_event_with_no_events():
    """EventPerformanceMonitorTest.testSlowestEventWithNoEvents."""
    assert EventPerformanceMonitor.Builder().build().slowest_event() == (None, 0)


def test_slowest_event_with_three_events():
    """EventPerformanceMonitorTest.testSlowestEventWithThreeEvents."""
    monitor = EventPerformanceMonitor.Builder().build()
    monitor.observe_event("fastEvent", 2 * MS)
    monitor.observe_event("slowEvent", 100 * MS)
    assert monitor.slowest_event() == ("slowEvent", 100 * MS)


def test_log_slow_event():
    """EventPerformanceMonitorTest.testLogSlowEvent."""
    monitor = EventPerformanceMonitor.Builder().build()
    assert monitor.do_observe_event("slowEvent", 5 * S) == \
        "Exceptionally slow controller event slowEvent took 5000 ms."


def test_do_not_log_fast_event():
    """EventPerformanceMonitorTest.testDoNotLogFastEvent."""
    monitor = EventPerformanceMonitor.Builder().build()
    assert monitor.do_observe_event("slowEvent", 250 * MS) is None


@pytest.mark.parametrize(("duration_ns", "text"), [
    (0, "0.00"),                     # testFormatNsAsDecimalMsWithZero
    (100 * MS, "100.00"),            # testFormatNsAsDecimalMsWith100
    (123456789, "123.46"),           # testFormatNsAsDecimalMsWith123456789
])
def test_format_ns_as_decimal_ms(duration_ns, text):
    """EventPerformanceMonitorTest.testFormatNsAsDecimalMsWithZero / With100 /
    With123456789."""
    assert EventPerformanceMonitor.format_ns_as_decimal_ms(duration_ns) == text


def test_format_ns_as_decimal_ms_rounds_the_doubles_exact_value_half_even():
    """formatNsAsDecimalMs: DecimalFormat("#0.00") rounds the double's exact value half-even:
    1.015 ms is the double 1.01499.. (down), 0.125 ms exactly half (to the even 0.12)."""
    assert format_ns_as_decimal_ms(1_015_000) == "1.01"
    assert format_ns_as_decimal_ms(125_000) == "0.12"
    assert format_ns_as_decimal_ms(1_999) == "0.00"     # whole microseconds first


def test_periodic_performance_message_with_no_events():
    """EventPerformanceMonitorTest.testPeriodicPerformanceMessageWithNoEvents."""
    assert EventPerformanceMonitor.Builder().build().periodic_performance_message() == \
        "In the last 60000 ms period, there were no controller events completed."


def test_periodic_performance_message_with_one_event():
    """EventPerformanceMonitorTest.testPeriodicPerformanceMessageWithOneEvent."""
    monitor = EventPerformanceMonitor.Builder().build()
    monitor.observe_event("myEvent", 12 * MS)
    assert monitor.periodic_performance_message() == (
        "In the last 60000 ms period, 1 controller events were completed, which took an "
        "average of 12.00 ms each. The slowest event was myEvent, which took 12.00 ms.")


def three_events() -> EventPerformanceMonitor:
    monitor = EventPerformanceMonitor.Builder().build()
    monitor.observe_event("myEvent", 12 * MS)
    monitor.observe_event("myEvent2", 19 * MS)
    monitor.observe_event("myEvent3", 1 * MS)
    return monitor


def test_periodic_performance_message_with_three_events():
    """EventPerformanceMonitorTest.testPeriodicPerformanceMessageWithThreeEvents."""
    assert three_events().periodic_performance_message() == (
        "In the last 60000 ms period, 3 controller events were completed, which took an "
        "average of 10.67 ms each. The slowest event was myEvent2, which took 19.00 ms.")


def test_generate_periodic_performance_message_resets_state():
    """EventPerformanceMonitorTest.testGeneratePeriodicPerformanceMessageResetsState; the line
    generated is kept as logged at INFO."""
    monitor = three_events()
    line = monitor.generate_periodic_performance_message()
    assert monitor.periodic_performance_message() == \
        "In the last 60000 ms period, there were no controller events completed."
    assert list(monitor.logged) == [("INFO", line)]


def test_slow_event_is_logged_as_an_error_and_counted():
    """EventPerformanceMonitor.observeEvent: an event at the always-log threshold is logged at
    ERROR (and still counted in the period)."""
    monitor = EventPerformanceMonitor.Builder().set_always_log_threshold_ns(2 * S).build()
    monitor.observe_event("fast", 2 * S - 1)
    monitor.observe_event("slow", 2 * S)
    assert list(monitor.logged) == [("ERROR",
                                     "Exceptionally slow controller event slow took 2000 ms.")]
    assert monitor.num_events == 2 and monitor.slowest_event() == ("slow", 2 * S)


@pytest.mark.parametrize(("kwargs", "error", "text"), [
    ({"period_ns": 0}, ValueError, "period_ns must be at least 1 ns, got 0"),
    ({"always_log_threshold_ns": -1}, ValueError, "always_log_threshold_ns must be at least 0"),
    ({"period_ns": 1.5}, TypeError, "period_ns must be an int"),
])
def test_monitor_rejects_bad_periods(kwargs, error, text):
    with pytest.raises(error, match=text):
        EventPerformanceMonitor(**kwargs)


# -- QuorumController's generatePeriodicPerformanceMessage task (4.0+) -------------------------
def test_performance_message_task_is_registered_with_kafkas_name_and_period():
    """QuorumController.registerGeneratePeriodicPerformanceMessage @4.3.0: the task runs every
    controller.performance.sample.period.ms (60 s by default), writes nothing and logs the
    period's summary; expireDelegationTokens is not registered (no delegation tokens)."""
    env = ControllerEnv(bootstrap("4.0-IV3"), version="4.3")
    tasks = env.active.periodic.tasks
    task = tasks.get("generatePeriodicPerformanceMessage")
    assert task is not None and task.period_ms == 60000 and not task.verbose
    assert "expireDelegationTokens" not in tasks
    end = env.raft.log.end_offset
    env.advance(59_000)
    assert list(env.active.performance_monitor.logged) == []
    no_ops = env.raft.log.end_offset - end
    env.advance(1_000)
    [(level, line)] = env.active.performance_monitor.logged
    assert level == "INFO"
    assert re.fullmatch(r"In the last 60000 ms period, \d+ controller events were completed, "
                        r"which took an average of 0\.00 ms each\. The slowest event was "
                        r"[\w\[\]]+, which took 0\.00 ms\.", line), line
    assert "The slowest event was completeActivation[1]," in line   # the period's first
    assert int(line.split(", ")[1].split()[0]) >= no_ops   # every writeNoOpRecord run counted


def test_performance_message_counts_the_controllers_events():
    """QuorumController.handleEventEnd feeds every event to the monitor: with NoOpRecords off
    and a period of 1 s, the summary counts the period's operations and periodic runs (in the
    simulator each takes no time: the slowest is the period's first)."""
    env = ControllerEnv(bootstrap("4.0-IV3"), version="4.3", session_timeout_ms=8000, config={
        "controller.performance.sample.period.ms": 1000, "metadata.max.idle.interval.ms": 0})
    monitor = env.active.performance_monitor
    env.advance(1000 - env.now % 1000)   # the first summary
    monitor.logged.clear()
    register_brokers_and_unfence(env, 1)   # registerBroker, processBrokerHeartbeat
    env.advance(1000 - env.now % 1000)
    assert monitor.logged, "no summary in the period"
    line = monitor.logged[-1][1]
    assert "controller events were completed" in line
    assert "The slowest event was" in line


def test_performance_sample_period_config():
    """KRaftConfigs @4.0 / @4.3.0: controller.performance.sample.period.ms (LONG, 60000,
    atLeast(100)) and controller.performance.always.log.threshold.ms (LONG, 2000, atLeast(0)),
    both internal, 4.0+."""
    assert ControllerEnv(bootstrap("4.0-IV3"), version="4.3", config={
        "controller.performance.sample.period.ms": 100}).active.periodic.tasks.get(
            "generatePeriodicPerformanceMessage").period_ms == 100
    with pytest.raises(ConfigError, match="controller.performance.sample.period.ms"):
        ControllerEnv(bootstrap("4.0-IV3"), version="4.3",
                      config={"controller.performance.sample.period.ms": 99})
    with pytest.raises(ConfigError, match="controller.performance.always.log.threshold.ms"):
        ControllerEnv(bootstrap("4.0-IV3"), version="4.3",
                      config={"controller.performance.always.log.threshold.ms": -1})
    with pytest.raises(ConfigError, match="controller.performance.sample.period.ms"):
        ControllerEnv(bootstrap("3.9-IV0"), version="3.9",
                      config={"controller.performance.sample.period.ms": 1000})


def test_3_9_has_no_performance_monitor():
    """QuorumController @3.9.0: no EventPerformanceMonitor (KAFKA-16446 is 4.0)."""
    env = ControllerEnv(bootstrap("3.9-IV0"), version="3.9")
    assert env.active.performance_monitor is None
    register_brokers_and_unfence(env, 1)
    env.advance(120_000)


# -- OffsetControlManagerTest @4.3.0 -----------------------------------------------------------
def fake_batch(last_offset: int, epoch: int, append_timestamp: int) -> Batch:
    """OffsetControlManagerTest.newFakeBatch (one NoOpRecord; only these three fields count)."""
    return Batch(last_offset, epoch, append_timestamp)


def test_offset_control_initial_values():
    """OffsetControlManagerTest.testInitialValues."""
    oc = OffsetControlManager()
    assert oc.current_snapshot_id() is None and oc.current_snapshot_name() is None
    assert (oc.last_committed_offset(), oc.last_committed_epoch(), oc.last_stable_offset(),
            oc.transaction_start_offset(), oc.next_write_offset()) == (-1, -1, -1, -1, -1)
    assert not oc.active()
    assert oc.snapshot_registry().epochs_list() == [-1]


def test_offset_control_activate():
    """OffsetControlManagerTest.testActivate."""
    oc = OffsetControlManager()
    oc.activate(1000)
    assert oc.next_write_offset() == 1000 and oc.active() and oc.metrics().active()
    assert oc.snapshot_registry().epochs_list() == [-1]


def test_activate_fails_if_already_active():
    """OffsetControlManagerTest.testActivateFailsIfAlreadyActive."""
    oc = OffsetControlManager()
    oc.activate(1000)
    with pytest.raises(RuntimeError) as e:
        oc.activate(2000)
    assert str(e.value) == "Can't activate already active OffsetControlManager."
    assert oc.next_write_offset() == 1000


def test_activate_fails_if_new_next_write_offset_is_negative():
    """OffsetControlManagerTest.testActivateFailsIfNewNextWriteOffsetIsNegative."""
    with pytest.raises(RuntimeError) as e:
        OffsetControlManager().activate(-2)
    assert str(e.value) == "Invalid negative newNextWriteOffset -2."


def test_activate_and_deactivate():
    """OffsetControlManagerTest.testActivateAndDeactivate."""
    oc = OffsetControlManager()
    oc.activate(1000)
    assert oc.next_write_offset() == 1000
    oc.deactivate()
    assert oc.next_write_offset() == -1


def test_deactivate_fails_if_not_active():
    """OffsetControlManagerTest.testDeactivateFailsIfNotActive."""
    with pytest.raises(RuntimeError) as e:
        OffsetControlManager().deactivate()
    assert str(e.value) == "Can't deactivate inactive OffsetControlManager."


def test_offset_control_handle_commit_batch():
    """OffsetControlManagerTest.testHandleCommitBatch."""
    oc = OffsetControlManager()
    oc.handle_commit_batch(fake_batch(1000, 200, 3000))
    assert oc.snapshot_registry().epochs_list() == [1000]
    assert (oc.last_committed_offset(), oc.last_committed_epoch(), oc.last_stable_offset(),
            oc.transaction_start_offset(), oc.next_write_offset()) == (1000, 200, 1000, -1, -1)
    assert not oc.active() and not oc.metrics().active()
    m = oc.metrics()
    assert (m.last_applied_record_offset(), m.last_committed_record_offset(),
            m.last_applied_record_timestamp()) == (1000, 1000, 3000)


def test_handle_schedule_atomic_append():
    """OffsetControlManagerTest.testHandleScheduleAtomicAppend."""
    oc = OffsetControlManager()
    oc.handle_schedule_append(2000)
    assert oc.next_write_offset() == 2001
    assert oc.metrics().last_applied_record_offset() == 2000
    assert oc.last_stable_offset() == -1 and oc.last_committed_offset() == -1
    assert oc.snapshot_registry().epochs_list() == [-1, 2000]
    oc.handle_commit_batch(fake_batch(2000, 200, 3000))
    assert oc.last_stable_offset() == 2000 and oc.last_committed_offset() == 2000
    assert oc.snapshot_registry().epochs_list() == [2000]


def test_handle_load_snapshot():
    """OffsetControlManagerTest.testHandleLoadSnapshot (a TrackingSnapshotRegistry: kafkasim's
    SnapshotRegistry records the same operations)."""
    registry = SnapshotRegistry()
    oc = OffsetControlManager(snapshot_registry=registry)
    oc.begin_load_snapshot(OffsetAndEpoch(4000, 300))
    assert registry.operations == ["snapshot[-1]", "reset"]
    assert oc.current_snapshot_id() == OffsetAndEpoch(4000, 300)
    assert oc.current_snapshot_name() == "00000000000000004000-0000000300"
    assert registry.epochs_list() == []
    oc.end_load_snapshot(3456)
    assert registry.operations == ["snapshot[-1]", "reset", "snapshot[4000]"]
    assert oc.current_snapshot_id() is None and oc.current_snapshot_name() is None
    assert registry.epochs_list() == [4000]
    assert (oc.last_committed_offset(), oc.last_committed_epoch(), oc.last_stable_offset(),
            oc.transaction_start_offset(), oc.next_write_offset()) == (4000, 300, 4000, -1, -1)
    m = oc.metrics()
    assert (m.last_committed_record_offset(), m.last_applied_record_offset(),
            m.last_applied_record_timestamp()) == (4000, 4000, 3456)


@pytest.mark.parametrize("record", [BeginTransactionRecord(), EndTransactionRecord(),
                                    AbortTransactionRecord()])
def test_transaction_record_not_allowed_in_snapshot(record):
    """OffsetControlManagerTest.testBeginTransactionRecordNotAllowedInSnapshot /
    testEndTransactionRecordNotAllowedInSnapshot /
    testAbortTransactionRecordNotAllowedInSnapshot."""
    oc = OffsetControlManager()
    oc.begin_load_snapshot(OffsetAndEpoch(4000, 300))
    with pytest.raises(RuntimeError) as e:
        oc.replay(record, 1000)
    assert str(e.value) == f"{type(record).__name__} cannot appear within a snapshot."


def test_end_load_snapshot_fails_when_not_in_snapshot():
    """OffsetControlManagerTest.testEndLoadSnapshotFailsWhenNotInSnapshot."""
    with pytest.raises(RuntimeError) as e:
        OffsetControlManager().end_load_snapshot(1000)
    assert str(e.value) == "Can't end loading snapshot, because there is no current snapshot."


@pytest.mark.parametrize("aborted", [False, True])
def test_replay_transaction(aborted):
    """OffsetControlManagerTest.testReplayTransaction."""
    registry = SnapshotRegistry()
    oc = OffsetControlManager(snapshot_registry=registry)
    oc.replay(BeginTransactionRecord(), 1500)
    assert oc.transaction_start_offset() == 1500
    assert registry.epochs_list() == [-1, 1499]
    oc.handle_commit_batch(fake_batch(1550, 100, 2000))
    assert (oc.last_committed_offset(), oc.last_committed_epoch(),
            oc.last_stable_offset()) == (1550, 100, 1499)
    assert registry.epochs_list() == [1499]
    if aborted:
        oc.replay(AbortTransactionRecord(), 1600)
        assert registry.operations == ["snapshot[-1]", "snapshot[1499]", "revert[1499]"]
    else:
        oc.replay(EndTransactionRecord(), 1600)
        assert registry.operations == ["snapshot[-1]", "snapshot[1499]"]
    assert oc.transaction_start_offset() == -1 and oc.last_stable_offset() == 1499
    oc.handle_commit_batch(fake_batch(1650, 100, 2100))
    assert oc.last_stable_offset() == 1650
    assert registry.epochs_list() == [1650]


def test_load_snapshot_clears_transactional_state():
    """OffsetControlManagerTest.testLoadSnapshotClearsTransactionalState."""
    registry = SnapshotRegistry()
    oc = OffsetControlManager(snapshot_registry=registry)
    oc.replay(BeginTransactionRecord(), 1500)
    oc.begin_load_snapshot(OffsetAndEpoch(4000, 300))
    assert oc.transaction_start_offset() == -1
    assert registry.operations == ["snapshot[-1]", "snapshot[1499]", "reset"]


def test_transaction_records_out_of_order_are_refused():
    """OffsetControlManager.replay: a second BeginTransactionRecord, or an End/Abort with no
    open transaction, is refused with Kafka's message; anything else is not a transaction
    record."""
    oc = OffsetControlManager()
    with pytest.raises(RuntimeError, match="^Can't replay an EndTransactionRecord at 7 because "
                                           "there is no open transaction.$"):
        oc.replay(EndTransactionRecord(), 7)
    oc.replay(BeginTransactionRecord(), 10)
    with pytest.raises(RuntimeError, match="transaction at 10 was never closed"):
        oc.replay(BeginTransactionRecord(), 12)
    with pytest.raises(TypeError, match="BeginTransactionRecord"):
        oc.replay("NoOpRecord", 13)
    assert oc.transaction_start_offset() == 10


# -- ActivationRecordsGeneratorTest and QuorumControllerTest.testActivationRecords* @4.3.0 ---
def expect_message(text: str):
    seen = []

    def consumer(message: str) -> None:
        assert message == text
        seen.append(message)
    return consumer, seen


@pytest.mark.parametrize(("mv", "atomic", "count", "in_transaction"), [
    ("3.3-IV3", True, 1, ""),                            # testActivationMessageForEmptyLog
    ("3.4-IV0", True, 1, ""),                            # ...ForEmptyLogAtMv3_4
    ("3.6-IV1", False, 3, "in metadata transaction "),   # ...ForEmptyLogAtMv3_6
])
def test_activation_message_for_empty_log(mv, atomic, count, in_transaction):
    """ActivationRecordsGeneratorTest.testActivationMessageForEmptyLog / AtMv3_4 / AtMv3_6:
    one bootstrap record, as one atomic batch before 3.6-IV1 and between Begin and End
    TransactionRecords from it."""
    version = MetadataVersion.parse(mv)
    consumer, seen = expect_message(
        "Performing controller activation. The metadata log appears to be empty. Appending 1 "
        f"bootstrap record(s) {in_transaction}at metadata.version {mv} from bootstrap source "
        "'test'.")
    result = ActivationRecordsGenerator.records_for_empty_log(
        consumer, -1, BootstrapMetadata.from_version(version, "test"), version, 2)
    assert seen and result.is_atomic is atomic and len(result.records) == count


def test_activation_message_for_empty_log_at_mv3_6_with_transaction():
    """ActivationRecordsGeneratorTest.testActivationMessageForEmptyLogAtMv3_6WithTransaction:
    a bootstrap transaction left open at offset 0 is aborted, then written again."""
    version = MetadataVersion.parse("3.6-IV1")
    consumer, seen = expect_message(
        "Performing controller activation. Aborting partial bootstrap records transaction at "
        "offset 0. Re-appending 1 bootstrap record(s) in new metadata transaction at "
        "metadata.version 3.6-IV1 from bootstrap source 'test'.")
    result = ActivationRecordsGenerator.records_for_empty_log(
        consumer, 0, BootstrapMetadata.from_version(version, "test"), version, 2)
    assert seen and not result.is_atomic and len(result.records) == 4


def test_activation_message_for_empty_log_at_mv4_0_with_transaction_and_elr():
    """ActivationRecordsGeneratorTest.testActivationMessageForEmptyLogAtMv4_0WithTransactionAndElr:
    with ELR finalized the records end with a cluster-level min.insync.replicas."""
    version = MetadataVersion.parse("4.0-IV1")
    consumer, seen = expect_message(
        "Performing controller activation. Aborting partial bootstrap records transaction at "
        "offset 0. Re-appending 2 bootstrap record(s) in new metadata transaction at "
        "metadata.version 4.0-IV1 from bootstrap source 'test'.")
    bootstrap_metadata = BootstrapMetadata.from_version(version, "test") \
        .copy_with_feature_record("eligible.leader.replicas.version", 1)
    result = ActivationRecordsGenerator.records_for_empty_log(
        consumer, 0, bootstrap_metadata, version, 2)
    assert seen and not result.is_atomic and len(result.records) == 6
    assert ConfigRecord("BROKER", "", "min.insync.replicas", "2") in result.records


def activation_feature_control(mv: str) -> FeatureControlManager:
    """QuorumControllerTest.getActivationRecords: the records generate() gives a log without a
    metadata.version, replayed into a FeatureControlManager."""
    version = MetadataVersion.parse(mv)
    features = FeatureControlManager(quorum_features=QuorumFeatures(
        0, QuorumFeatures.default_supported_feature_map(True), []))
    features.replay(FeatureLevelRecord("metadata.version", version.feature_level))
    result = ActivationRecordsGenerator.generate(
        lambda _msg: None, -1, BootstrapMetadata.from_version(version, "test"), None, 3)
    for record in result.records:
        if type(record) is FeatureLevelRecord:
            features.replay(record)
    return features


@pytest.mark.parametrize("mv", ["3.3-IV3", "3.4-IV0", "3.9-IV0"])
def test_activation_records(mv):
    """QuorumControllerTest.testActivationRecords33 / testActivationRecords34 /
    testActivationRecordsNonEmptyLog: the metadata.version the activation records finalize."""
    assert activation_feature_control(mv).metadata_version_or_throw() == \
        MetadataVersion.parse(mv)


def test_activation_records_partial_bootstrap():
    """QuorumControllerTest.testActivationRecordsPartialBootstrap: a bootstrap transaction open
    at offset 0 is aborted, a new one begun and ended; not one atomic batch."""
    result = ActivationRecordsGenerator.generate(
        lambda _msg: None, 0, BootstrapMetadata.from_version(MetadataVersion.parse("3.6-IV1"),
                                                             "test"), None, 3)
    assert not result.is_atomic
    assert type(result.records[0]) is AbortTransactionRecord
    assert type(result.records[1]) is BeginTransactionRecord
    assert type(result.records[-1]) is EndTransactionRecord


def open_transaction_at_10() -> OffsetControlManager:
    oc = OffsetControlManager()
    oc.replay(BeginTransactionRecord(), 10)
    oc.handle_commit_batch(Batch(20, 1, 1))
    return oc


def test_activation_records_partial_transaction():
    """QuorumControllerTest.testActivationRecordsPartialTransaction: on a log with a
    metadata.version, an open transaction is aborted (one atomic batch)."""
    oc = open_transaction_at_10()
    mv = MetadataVersion.parse("3.6-IV1")
    result = ActivationRecordsGenerator.generate(
        lambda _msg: None, oc.transaction_start_offset(),
        BootstrapMetadata.from_version(mv, "test"), mv, 3)
    assert result.is_atomic
    oc.replay(result.records[0], 21)
    assert oc.transaction_start_offset() == -1


def test_activation_records_partial_transaction_no_support():
    """QuorumControllerTest.testActivationRecordsPartialTransactionNoSupport: an open
    transaction under a metadata.version without transactions cannot be continued."""
    oc = open_transaction_at_10()
    mv = MetadataVersion.parse("3.6-IV0")
    with pytest.raises(RuntimeError, match="Detected in-progress transaction at offset 10, but "
                                           "the metadata.version 3.6-IV0 does not support "
                                           "transactions. Cannot continue."):
        ActivationRecordsGenerator.generate(
            lambda _msg: None, oc.transaction_start_offset(),
            BootstrapMetadata.from_version(mv, "test"), mv, 3)


def test_bootstrap_metadata_needs_a_metadata_version():
    """BootstrapMetadata's constructor: no metadata.version record is an error naming the
    source."""
    with pytest.raises(ValueError, match="No FeatureLevelRecord for metadata.version was found "
                                         "in the bootstrap metadata from test"):
        BootstrapMetadata([FeatureLevelRecord("eligible.leader.replicas.version", 1)], "test")


# -- DeferredEventQueueTest @4.3.0 (ControllerPurgatoryTest before apache/kafka PR #13555) ----
class SampleDeferredEvent:
    """DeferredEventQueueTest.SampleDeferredEvent: a future completed by ``complete``."""

    def __init__(self) -> None:
        self.future = ControllerFuture()

    def complete(self, exception) -> None:
        if exception is None:
            self.future.complete(None)
        else:
            self.future.complete_exceptionally(exception)


def test_complete_events():
    """DeferredEventQueueTest.testCompleteEvents."""
    queue = DeferredEventQueue()
    event1, event2, event3 = SampleDeferredEvent(), SampleDeferredEvent(), SampleDeferredEvent()
    queue.add(1, event1)
    assert queue.highest_pending_offset() == 1
    queue.add(1, event2)
    assert queue.highest_pending_offset() == 1
    queue.add(3, event3)
    assert queue.highest_pending_offset() == 3
    queue.complete_up_to(2)
    assert event1.future.done() and event2.future.done() and not event3.future.done()
    queue.complete_up_to(4)
    assert event3.future.done()
    assert queue.highest_pending_offset() is None


def test_fail_on_incorrect_ordering():
    """DeferredEventQueueTest.testFailOnIncorrectOrdering (Kafka: IllegalArgumentException);
    the refused event is not added."""
    queue = DeferredEventQueue()
    queue.add(2, SampleDeferredEvent())
    with pytest.raises(ValueError, match="There is already a deferred event with offset 2. We "
                                         "should not add one with an offset of 1 which is "
                                         "lower than that."):
        queue.add(1, SampleDeferredEvent())
    assert len(queue) == 1


def test_fail_events():
    """DeferredEventQueueTest.testFailEvents."""
    queue = DeferredEventQueue()
    event1, event2, event3 = SampleDeferredEvent(), SampleDeferredEvent(), SampleDeferredEvent()
    queue.add(1, event1)
    queue.add(3, event2)
    queue.add(3, event3)
    queue.complete_up_to(2)
    assert event1.future.done() and not event2.future.done() and not event3.future.done()
    queue.fail_all(RuntimeError("failed"))
    for event in (event2, event3):
        assert event.future.done()
        with pytest.raises(RuntimeError, match="failed"):
            event.future.get()


def test_operations_wait_in_the_purgatory_until_committed():
    """QuorumController: an operation's future waits in the deferredEventQueue under its last
    record's offset and completes once the high watermark passes it (completeUpTo the last
    stable offset)."""
    env = ControllerEnv(bootstrap("4.0-IV3"), version="4.3", linger_ms=5)
    future = env.active.register_broker(env, BrokerRegistrationRequest(0, "a", None))
    queue = env.active.deferred_event_queue
    assert not future.done() and queue.highest_pending_offset() is not None
    env.get(future)
    assert queue.highest_pending_offset() is None or \
        queue.highest_pending_offset() >= env.raft.high_watermark
