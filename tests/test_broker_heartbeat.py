"""BrokerHeartbeatManager (metadata/src/test/java/org/apache/kafka/controller/
BrokerHeartbeatManagerTest.java, trunk 1eb7644). Kafka's test uses MockTime starting at 0 ns and a
10 ms session (10_000_000 ns); here time is integer ms, so the numbers are the same in ms."""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.broker_heartbeat import (
    LONG_MAX_VALUE,
    BrokerControlState,
    BrokerControlStates,
    BrokerHeartbeatManager,
    BrokerHeartbeatState,
    BrokerHeartbeatStateList,
    IllegalStateException,
    metadata_offset_key,
)
from kafkasim.control.kraft.striped_placer import UsableBroker

FENCED = BrokerControlState.FENCED
UNFENCED = BrokerControlState.UNFENCED
CONTROLLED_SHUTDOWN = BrokerControlState.CONTROLLED_SHUTDOWN
SHUTDOWN_NOW = BrokerControlState.SHUTDOWN_NOW


class Clock:
    def __init__(self) -> None:
        self.now = 0

    def sleep(self, ms: int) -> None:
        self.now += ms


def new_manager():
    return BrokerHeartbeatManager(10), Clock()


def test_has_valid_session():
    """BrokerHeartbeatManagerTest.testHasValidSession."""
    m, t = new_manager()
    assert not m.has_valid_session(0, t.now)
    for b in range(3):
        m.register(b, True, t.now)
    m.touch(0, False, 0, t.now)
    t.sleep(5)
    m.touch(1, False, 0, t.now)
    m.touch(2, False, 0, t.now)
    assert [m.has_valid_session(b, t.now) for b in range(4)] == [True, True, True, False]
    t.sleep(6)
    assert [m.has_valid_session(b, t.now) for b in range(4)] == [False, True, True, False]
    m.remove(2)
    assert not m.has_valid_session(2, t.now)
    m.remove(1)
    assert not m.has_valid_session(1, t.now)


def test_session_expires_strictly_after_timeout():
    """hasValidSession: lastContact + sessionTimeout >= now is still valid."""
    m, _ = new_manager()
    m.register(0, False, 100)
    assert m.has_valid_session(0, 110)
    assert m.find_one_stale_broker(110) is None
    assert not m.has_valid_session(0, 111)
    assert m.find_one_stale_broker(111) == 0


def test_fenced_broker_has_no_valid_session():
    m, _ = new_manager()
    m.register(0, True, 0)
    assert not m.has_valid_session(0, 0)


def _unfenced_ids(m):
    return [b.id for b in m.unfenced]


def test_find_one_stale_broker():
    """BrokerHeartbeatManagerTest.testFindOneStaleBroker."""
    m, t = new_manager()
    assert not m.has_valid_session(0, t.now)
    for b in range(3):
        m.register(b, True, t.now)
    m.touch(0, False, 0, t.now)
    t.sleep(5)
    m.touch(1, False, 0, t.now)
    t.sleep(1)
    m.touch(2, False, 0, t.now)
    assert _unfenced_ids(m) == [0, 1, 2]
    assert m.find_one_stale_broker(t.now) is None
    t.sleep(5)
    assert m.find_one_stale_broker(t.now) == 0
    m.fence(0)
    assert m.find_one_stale_broker(t.now) is None
    assert _unfenced_ids(m) == [1, 2]
    t.sleep(20)
    assert m.find_one_stale_broker(t.now) == 1
    assert m.find_stale_brokers(t.now) == [1, 2]
    m.fence(1)
    assert m.find_one_stale_broker(t.now) == 2
    m.fence(2)
    assert m.find_one_stale_broker(t.now) is None
    assert _unfenced_ids(m) == []


def test_next_check_time():
    """BrokerHeartbeatManagerTest.testNextCheckTimeNs (ms instead of ns)."""
    m, t = new_manager()
    assert m.next_check_time_ms() == LONG_MAX_VALUE
    for b in range(4):
        m.register(b, True, t.now)
    m.touch(0, False, 0, t.now)
    t.sleep(2)
    m.touch(1, False, 0, t.now)
    t.sleep(1)
    m.touch(2, False, 0, t.now)
    t.sleep(1)
    m.touch(3, False, 0, t.now)
    assert m.find_one_stale_broker(t.now) is None
    assert m.next_check_time_ms() == 10
    t.sleep(7)
    assert m.next_check_time_ms() == 10
    assert m.find_one_stale_broker(t.now) == 0
    m.fence(0)
    assert m.next_check_time_ms() == 12
    t.sleep(3)
    assert m.find_one_stale_broker(t.now) == 1
    m.fence(1)
    assert m.find_one_stale_broker(t.now) == 2
    m.fence(2)
    assert m.next_check_time_ms() == 14


def test_metadata_offset_comparator():
    """BrokerHeartbeatManagerTest.testMetadataOffsetComparator."""
    b1, b2, b3 = (BrokerHeartbeatState(i) for i in (1, 2, 3))
    assert sorted([b3, b1, b2], key=metadata_offset_key) == [b1, b2, b3]
    b1.metadata_offset, b2.metadata_offset, b3.metadata_offset = 800, 400, 100
    assert sorted([b1, b2, b3], key=metadata_offset_key) == [b3, b2, b1]


def _usable_set(m):
    return set(m.usable_brokers(lambda i: "rack1" if i % 2 == 0 else "rack2"))


def test_usable_broker_iterator():
    """BrokerHeartbeatManagerTest.testUsableBrokerIterator."""
    m, t = new_manager()
    assert _usable_set(m) == set()
    for b in range(5):
        m.register(b, True, t.now)
    for b, fenced, off in ((0, False, 100), (1, False, 100), (2, False, 98), (3, False, 100),
                           (4, True, 100)):
        m.touch(b, fenced, off, t.now)
    assert m.lowest_active_offset() == 98
    expected = {UsableBroker(0, "rack1", False), UsableBroker(1, "rack2", False),
                UsableBroker(2, "rack1", False), UsableBroker(3, "rack2", False),
                UsableBroker(4, "rack1", True)}
    assert _usable_set(m) == expected
    m.maybe_update_controlled_shutdown_offset(2, 0)
    assert m.lowest_active_offset() == 100
    with pytest.raises(RuntimeError, match="Fenced brokers cannot enter controlled shutdown."):
        m.maybe_update_controlled_shutdown_offset(4, 0)
    m.touch(4, False, 100, t.now)
    m.maybe_update_controlled_shutdown_offset(4, 0)
    expected -= {UsableBroker(2, "rack1", False), UsableBroker(4, "rack1", True)}
    assert _usable_set(m) == expected


def test_usable_brokers_follow_java_hashmap_order():
    """usableBrokers iterates HashMap<Integer, BrokerHeartbeatState>: bucket id & 15 first,
    so broker 16 (bucket 0) comes before broker 1, and 17 (bucket 1) right after 1."""
    m, t = new_manager()
    for b in (17, 2, 1, 16):
        m.register(b, False, t.now)
    assert [u.id for u in m.usable_brokers(lambda i: None)] == [16, 17, 1, 2]


def test_controlled_shutdown_offset_is_only_updated_once():
    """BrokerHeartbeatManagerTest.testControlledShutdownOffsetIsOnlyUpdatedOnce."""
    m, t = new_manager()
    for b in range(5):
        m.register(b, True, t.now)
    for b, fenced, off in ((0, False, 100), (1, False, 100), (2, False, 98), (3, False, 100),
                           (4, True, 100)):
        m.touch(b, fenced, off, t.now)
    assert m.controlled_shutdown_offset(2) is None
    m.maybe_update_controlled_shutdown_offset(2, 98)
    assert m.controlled_shutdown_offset(2) == 98
    m.maybe_update_controlled_shutdown_offset(2, 99)
    assert m.controlled_shutdown_offset(2) == 98
    assert m.controlled_shutdown_offset(3) is None
    m.maybe_update_controlled_shutdown_offset(3, 101)
    assert m.controlled_shutdown_offset(3) == 101
    m.maybe_update_controlled_shutdown_offset(3, 102)
    assert m.controlled_shutdown_offset(3) == 101


def test_broker_heartbeat_state_list():
    """BrokerHeartbeatManagerTest.testBrokerHeartbeatStateList."""
    lst = BrokerHeartbeatStateList()
    assert lst.first() is None
    assert list(lst) == []
    brokers = [BrokerHeartbeatState(i) for i in range(4)]
    for b, contact in zip(brokers, (200, 100, 50, 150), strict=True):
        b.last_contact_ms = contact
        lst.add(b)
    b0, b1, b2, b3 = brokers
    assert lst.first() is b2
    assert list(lst) == [b2, b1, b3, b0]
    lst.remove(b1)
    assert list(lst) == [b2, b3, b0]
    with pytest.raises(RuntimeError, match="is not in the  list"):
        lst.remove(b1)


def test_calculate_next_broker_state():
    """BrokerHeartbeatManagerTest.testCalculateNextBrokerState."""
    m, t = new_manager()
    for b in range(6):
        m.register(b, True, t.now)
    for b, fenced, off in ((0, True, 100), (1, False, 98), (2, False, 100), (3, False, 100),
                           (4, True, 100), (5, False, 99)):
        m.touch(b, fenced, off, t.now)
    m.maybe_update_controlled_shutdown_offset(5, 99)
    assert m.lowest_active_offset() == 98

    def calc(b, want_fence=False, want_shut_down=False, offset=0, leads=False):
        return m.calculate_next_broker_state(b, want_fence, want_shut_down, offset, 100,
                                             lambda: leads)

    assert calc(0, want_shut_down=True) == BrokerControlStates(FENCED, SHUTDOWN_NOW)
    assert calc(0, offset=100) == BrokerControlStates(FENCED, UNFENCED)
    assert calc(0, offset=50) == BrokerControlStates(FENCED, FENCED)
    assert calc(0, want_fence=True) == BrokerControlStates(FENCED, FENCED)

    assert calc(1, want_shut_down=True, leads=True) == BrokerControlStates(
        UNFENCED, CONTROLLED_SHUTDOWN)
    assert calc(1, want_shut_down=True) == BrokerControlStates(UNFENCED, SHUTDOWN_NOW)
    assert calc(1) == BrokerControlStates(UNFENCED, UNFENCED)

    assert calc(5, want_shut_down=True, leads=True) == BrokerControlStates(
        CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN)
    # broker 1 (offset 98) holds the lowest active offset below 5's shutdown offset 99
    assert calc(5, want_shut_down=True) == BrokerControlStates(
        CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN)
    m.fence(1)
    assert calc(5, want_shut_down=True) == BrokerControlStates(CONTROLLED_SHUTDOWN, SHUTDOWN_NOW)
    assert calc(5, want_shut_down=True, leads=True) == BrokerControlStates(
        CONTROLLED_SHUTDOWN, CONTROLLED_SHUTDOWN)
    for b in (6, 7):
        with pytest.raises(IllegalStateException) as e:
            calc(b, want_shut_down=True, leads=True)
        assert str(e.value) == f"Broker {b} is not registered."


def test_unfenced_broker_wanting_fence_and_shutdown():
    """calculateNextBrokerState, UNFENCED + wantFence: SHUTDOWN_NOW if it also wants to shut
    down, else FENCED; the states carry BrokerControlState's flags."""
    m, t = new_manager()
    m.register(0, False, t.now)
    current, nxt = m.calculate_next_broker_state(0, True, True, 0, 0, lambda: True)
    assert (current, nxt) == (UNFENCED, SHUTDOWN_NOW)
    assert m.calculate_next_broker_state(0, True, False, 0, 0, lambda: True).next == FENCED
    assert BrokerControlState.fenced(SHUTDOWN_NOW) and BrokerControlState.should_shut_down(
        SHUTDOWN_NOW)
    assert not BrokerControlState.fenced(CONTROLLED_SHUTDOWN)
    assert BrokerControlState.in_controlled_shutdown(CONTROLLED_SHUTDOWN)


def test_has_leaderships_evaluated_lazily():
    """The Supplier<Boolean> is only asked when the broker wants to shut down."""
    m, t = new_manager()
    m.register(0, False, t.now)

    def boom():
        raise AssertionError("must not be evaluated")

    assert m.calculate_next_broker_state(0, False, False, 0, 0, boom).next == UNFENCED


def test_fenced_touch_leaves_controlled_shutdown():
    """touch(fenced=true) clears the controlled shutdown offset (the broker's next heartbeat
    then gets SHUTDOWN_NOW via FENCED + wantShutDown)."""
    m, t = new_manager()
    m.register(0, False, t.now)
    m.maybe_update_controlled_shutdown_offset(0, 5)
    assert m.current_broker_state(m.state(0)) == CONTROLLED_SHUTDOWN
    m.touch(0, True, 5, t.now)
    assert m.controlled_shutdown_offset(0) is None
    assert m.calculate_next_broker_state(0, False, True, 5, 0, lambda: False).next == \
        SHUTDOWN_NOW


def test_register_keeps_metadata_offset_only_on_fencing_change():
    """register: a known broker whose fencing state changes keeps its metadata offset;
    otherwise the offset resets to -1."""
    m, t = new_manager()
    m.register(0, True, t.now)
    m.touch(0, True, 42, t.now)
    m.register(0, False, t.now)
    assert m.state(0).metadata_offset == 42
    m.register(0, False, t.now)
    assert m.state(0).metadata_offset == -1


def test_touch_throws_exception_unless_registered():
    """BrokerHeartbeatManagerTest.testTouchThrowsExceptionUnlessRegistered."""
    m, t = new_manager()
    m.register(1, True, t.now)
    m.register(3, True, t.now)
    for b in (2, 4):
        with pytest.raises(IllegalStateException) as e:
            m.touch(b, False, 0, t.now)
        assert str(e.value) == f"Broker {b} is not registered."


# -- rules of older releases ---------------------------------------------------------------------
def test_unfence_at_last_committed_offset_before_3_3():
    """KAFKA-13959 (3.3.0): before, a fenced broker was unfenced only once it reached the
    controller's last committed offset (BrokerHeartbeatManager.calculateNextBrokerState at
    3.2.0), which a busy metadata log keeps moving; from 3.3 its RegisterBrokerRecord offset."""
    old = BrokerHeartbeatManager(10, unfence_at_register_record_offset=False)
    new = BrokerHeartbeatManager(10)
    for m in (old, new):
        m.register(0, True, 0)
    # caught up with its registration record (100) but not with the committed offset (150)
    assert old.calculate_next_broker_state(0, False, False, 120, 100, lambda: False,
                                           last_committed_offset=150).next == FENCED
    assert new.calculate_next_broker_state(0, False, False, 120, 100, lambda: False,
                                           last_committed_offset=150).next == UNFENCED
    assert old.calculate_next_broker_state(0, False, False, 150, 100, lambda: False,
                                           last_committed_offset=150).next == UNFENCED
    with pytest.raises(ValueError, match="last_committed_offset"):
        old.calculate_next_broker_state(0, False, False, 150, 100, lambda: False)


def test_controlled_shutdown_offset_overwritten_before_kafka_14292():
    """KAFKA-14292 (3.3.2 / 3.4.0): updateControlledShutdownOffset used to move the offset to
    every new batch end, so a broker in controlled shutdown could wait forever; since then only
    the first heartbeat sets it (testControlledShutdownOffsetIsOnlyUpdatedOnce)."""
    old = BrokerHeartbeatManager(10, controlled_shutdown_offset_set_once=False)
    old.register(2, False, 0)
    old.maybe_update_controlled_shutdown_offset(2, 98)
    old.maybe_update_controlled_shutdown_offset(2, 99)
    assert old.controlled_shutdown_offset(2) == 99


def test_register_without_fencing_change_before_3_7():
    """Before 3.7.0 (commit 32576f61ce8) register() of a known broker whose fencing did not
    change did nothing (no contact, offset kept), touch() created unknown brokers and
    calculateNextBrokerState treated an unknown broker as FENCED."""
    old = BrokerHeartbeatManager(10, register_always_touches=False)
    old.register(0, False, 0)
    old.touch(0, False, 42, 0)
    old.register(0, False, 5)
    assert old.state(0).metadata_offset == 42 and old.state(0).last_contact_ms == 0
    old.touch(9, False, 7, 1)
    assert old.has_valid_session(9, 1)
    assert old.calculate_next_broker_state(5, False, True, 0, 0, lambda: False) == (
        FENCED, SHUTDOWN_NOW)
    new = BrokerHeartbeatManager(10)
    new.register(0, False, 0)
    new.touch(0, False, 42, 0)
    new.register(0, False, 5)
    assert new.state(0).metadata_offset == -1 and new.state(0).last_contact_ms == 5
