"""KRaft quorum controller: broker re-registration, the periodic tasks and the event performance
monitor, ported at 4.1.0 (confluentinc 13f70256db) and 4.3.0 (a9ce322153).

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
- BrokerHeartbeatTrackerTest @4.3.0: the hasValidSession cases and
  testIsExpiredIsFalseForTenNanosecondsAfter (kafkasim counts milliseconds: ten nanoseconds
  after the contact is the contact's millisecond).
- OffsetControlManagerTest @4.3.0: testActivateAndDeactivate / testActivateFailsIfAlreadyActive
  / testDeactivateFailsIfNotActive / testActivateFailsIfNewNextWriteOffsetIsNegative are not
  ported: kafkasim has no OffsetControlManager class (QuorumController keeps
  ``last_committed`` itself, and the Raft client owns the next write offset); the snapshot and
  transaction cases neither (no snapshots loaded by the controller, no
  Begin/EndTransactionRecords).

Scenarios are Kafka's; code is our own.
"""

from __future__ import annotations

import pytest
from test_quorum_controller_kafka import (
    ControllerEnv,
    bootstrap,
    create_topics,
    heartbeat,
    partition,
    register_brokers_and_unfence,
)

from kafkasim.control.kraft.cluster_control import (
    DUPLICATE_REGISTRATION_MESSAGE,
    DUPLICATE_REGISTRATION_MESSAGE_4_1,
    DuplicateBrokerRegistrationException,
)
from kafkasim.control.kraft.replication_control import CreatableTopic
from kafkasim.core.messages import BrokerRegistrationRequest


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
