"""Kafka 4.0's periodic controller tasks and broker session tracker (KAFKA-17793).

After Kafka's ``PeriodicTaskControlManagerTest`` and ``BrokerHeartbeatTrackerTest``
(metadata/src/test/java/org/apache/kafka/controller/, apache/kafka PR #17502), in simulated
milliseconds, and the timing they give a cluster: the 4.x controller fences a silent broker at
its first periodic check after the session ends, and elects preferred leaders on the grid of its
activation; the 3.9 controller keeps one deferred event per deadline."""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.broker_heartbeat import (
    BrokerHeartbeatManager,
    BrokerHeartbeatTracker,
    BrokerIdAndEpoch,
    broker_id_and_epoch_hash_code,
)
from kafkasim.control.kraft.periodic_tasks import (
    ERROR_PERIOD_MS,
    ControllerResult,
    PeriodicControlTaskException,
    PeriodicTask,
    PeriodicTaskControlManager,
    maybe_fence_stale_broker_period_ms,
)
from tests.clusters import make_cluster


# -- PeriodicTaskControlManagerTest --------------------------------------------------------------
class FakePeriodicTask:
    """PeriodicTaskControlManagerTest.FakePeriodicTask."""

    def __init__(self, name: str, period_ms: int) -> None:
        self.num_calls = 0
        self.continuation = False
        self.should_fail = False
        self.task = PeriodicTask(name, self._op, period_ms)

    def _op(self) -> ControllerResult:
        self.num_calls += 1
        if self.should_fail:
            self.should_fail = False
            raise RuntimeError("uh oh")
        again, self.continuation = self.continuation, False
        return ControllerResult([], again)


class Env:
    """PeriodicTaskControlManagerTestEnv: a deferred queue keyed by tag, and a clock."""

    def __init__(self) -> None:
        self.now = 0
        self.tasks: list[tuple[int, int, str, object]] = []   # (deadline, seq, tag, op)
        self.seq = 0
        self.manager = PeriodicTaskControlManager(self, lambda: self.now)

    def schedule_deferred(self, tag, deadline_ms, op) -> None:
        self.cancel_deferred(tag)
        self.seq += 1
        self.tasks.append((deadline_ms, self.seq, tag, op))

    def cancel_deferred(self, tag) -> None:
        self.tasks = [t for t in self.tasks if t[2] != tag]

    def num_deferred(self) -> int:
        return len(self.tasks)

    def advance_time(self, ms: int) -> None:
        self.now += ms
        while self.tasks:
            first = min(self.tasks)
            if first[0] > self.now:
                return
            self.tasks.remove(first)
            try:
                first[3]()
            except PeriodicControlTaskException:
                pass


def test_activate():
    env = Env()
    assert not env.manager.active()
    env.manager.activate()
    assert env.manager.active()
    assert env.num_deferred() == 0
    with pytest.raises(RuntimeError, match="already active"):
        env.manager.activate()


def test_deactivate():
    env = Env()
    env.manager.activate()
    env.manager.deactivate()
    assert not env.manager.active()
    assert env.num_deferred() == 0


def test_register_task_when_deactivated():
    env = Env()
    env.manager.register_task(FakePeriodicTask("foo", 100).task)
    assert env.num_deferred() == 0


def test_register_task_when_activated_then_deactivate():
    env = Env()
    env.manager.activate()
    env.manager.register_task(FakePeriodicTask("foo", 100).task)
    assert env.num_deferred() == 1
    env.manager.deactivate()
    assert env.num_deferred() == 0


def test_register_task_and_advance_time():
    foo, bar = FakePeriodicTask("foo", 100), FakePeriodicTask("bar", 50)
    env = Env()
    env.manager.activate()
    env.manager.register_task(foo.task)
    env.manager.register_task(bar.task)
    assert env.num_deferred() == 2
    env.advance_time(50)
    assert (foo.num_calls, bar.num_calls, env.num_deferred()) == (0, 1, 2)
    env.advance_time(50)
    assert (foo.num_calls, bar.num_calls, env.num_deferred()) == (1, 2, 2)


def test_continuation():
    """A run that left work undone comes back after the immediate period (10 ms), then the
    period counts from that run."""
    foo, bar = FakePeriodicTask("foo", 100), FakePeriodicTask("bar", 50)
    bar.continuation = True
    env = Env()
    env.manager.activate()
    env.manager.register_task(foo.task)
    env.manager.register_task(bar.task)
    env.advance_time(50)
    assert (foo.num_calls, bar.num_calls) == (0, 1)
    env.advance_time(10)
    assert bar.num_calls == 2
    env.advance_time(40)
    assert (foo.num_calls, bar.num_calls, env.num_deferred()) == (1, 2, 2)
    env.advance_time(10)
    assert bar.num_calls == 3


def test_register_task_and_unregister():
    foo, bar = FakePeriodicTask("foo", 100), FakePeriodicTask("bar", 50)
    env = Env()
    env.manager.activate()
    env.manager.register_task(foo.task)
    env.manager.register_task(bar.task)
    env.advance_time(50)
    env.manager.unregister_task("foo")
    assert env.num_deferred() == 1
    env.manager.unregister_task("bar")
    assert env.num_deferred() == 0
    env.advance_time(200)
    assert (foo.num_calls, bar.num_calls) == (0, 1)


def test_rescheduling_after_failure():
    """A failing run is retried after 5 minutes, and reported as PeriodicControlTaskException."""
    foo = FakePeriodicTask("foo", 100)
    foo.should_fail = True
    env = Env()
    env.manager.activate()
    env.manager.register_task(foo.task)
    with pytest.raises(PeriodicControlTaskException, match="foo: periodic task failed: uh oh"):
        env.manager.run(foo.task)
    assert env.tasks[0][0] == ERROR_PERIOD_MS
    env.advance_time(ERROR_PERIOD_MS)
    assert foo.num_calls == 2


def test_a_task_registered_twice_keeps_the_first():
    env = Env()
    env.manager.activate()
    first, second = FakePeriodicTask("foo", 100), FakePeriodicTask("foo", 10)
    env.manager.register_task(first.task)
    env.manager.register_task(second.task)
    env.advance_time(100)
    assert (first.num_calls, second.num_calls) == (1, 0)


def test_maybe_fence_stale_broker_period_is_an_eighth_of_the_session():
    """QuorumController.maybeFenceStaleBrokerPeriodNs: max(1 ms, session / 8)."""
    assert maybe_fence_stale_broker_period_ms(9000) == 1125
    assert maybe_fence_stale_broker_period_ms(12000) == 1500
    assert maybe_fence_stale_broker_period_ms(5) == 1


# -- BrokerHeartbeatTrackerTest ------------------------------------------------------------------
TEST_BROKERS = (BrokerIdAndEpoch(0, 0), BrokerIdAndEpoch(1, 100), BrokerIdAndEpoch(2, 200))


def tracker() -> BrokerHeartbeatTracker:
    return BrokerHeartbeatTracker(10)


def test_update_contact_time():
    t = tracker()
    assert t.contact_time(BrokerIdAndEpoch(1, 100)) is None
    t.update_contact_time(BrokerIdAndEpoch(1, 100), 0)
    assert t.contact_time(BrokerIdAndEpoch(1, 100)) == 0


def test_maybe_remove_expired_with_empty_tracker():
    assert tracker().maybe_remove_expired(0) is None


def test_maybe_remove_expired_with_all_up_to_date():
    t = tracker()
    for b in TEST_BROKERS:
        t.update_contact_time(b, 0)
    assert t.maybe_remove_expired(10) is None


def test_maybe_remove_expired_with_all_expired():
    t = tracker()
    for b in TEST_BROKERS:
        t.update_contact_time(b, 0)
    expired = []
    while (e := t.maybe_remove_expired(11)) is not None:
        expired.append(e)
    assert sorted(expired) == sorted(TEST_BROKERS)


def test_expired_sessions_leave_in_concurrent_hash_map_order():
    """Objects.hash(id, epoch) = 31 * (31 + id) + Long.hashCode(epoch); the table has 16 buckets:
    (1, 100) -> 1092 & 15 = 4, (2, 200) -> 1223 & 15 = 7, (3, 5) -> 1059 & 15 = 3."""
    assert broker_id_and_epoch_hash_code(BrokerIdAndEpoch(1, 100)) == 1092
    t = tracker()
    for b in (BrokerIdAndEpoch(2, 200), BrokerIdAndEpoch(1, 100), BrokerIdAndEpoch(3, 5)):
        t.update_contact_time(b, 0)
    order = [t.maybe_remove_expired(11) for _ in range(3)]
    assert order == [(3, 5), (1, 100), (2, 200)]


def test_has_valid_session():
    t = tracker()
    for b in TEST_BROKERS:
        t.update_contact_time(b, 0)
    assert t.has_valid_session(BrokerIdAndEpoch(2, 200), 10)
    assert not t.has_valid_session(BrokerIdAndEpoch(3, 300), 10)    # unknown broker
    assert not t.has_valid_session(BrokerIdAndEpoch(2, 100), 10)    # unknown broker epoch
    assert not t.has_valid_session(BrokerIdAndEpoch(2, 200), 11)


@pytest.mark.parametrize(("time_ms", "now_ms", "expired"), [
    (456, 456, False),           # testIsExpiredIsFalseForTheCurrentTime
    (456, 466, False),           # ...ForTenAfter: the session is 10 long, stale strictly after
    (456, 467, True),            # testIsExpiredIsTrueAfterExpirationTime
    (456, 0, False),             # testIsExpiredIsFalseForPreviousTime
])
def test_is_expired(time_ms, now_ms, expired):
    assert tracker().is_expired(time_ms, now_ms) is expired


def test_the_manager_asks_the_tracker_for_a_session_by_epoch():
    hb = BrokerHeartbeatManager(9000, heartbeat_tracker=True)
    hb.register(1, False, 0)
    with pytest.raises(ValueError, match="broker_epoch"):
        hb.has_valid_session(1, 0)
    assert not hb.has_valid_session(1, 0, broker_epoch=7)     # registered, but never heard from
    hb.tracker.update_contact_time(BrokerIdAndEpoch(1, 7), 0)
    assert hb.has_valid_session(1, 9000, broker_epoch=7)
    assert not hb.has_valid_session(1, 9001, broker_epoch=7)


# -- what a cluster does with them ---------------------------------------------------------------
def _rows(c, kind):
    return [r for r in c.trace.rows if r[1] == kind]


def test_two_silent_brokers_are_fenced_10_ms_apart_at_the_same_check():
    """Both sessions end before one check: the task fences one, comes back 10 ms later
    (immediate period: its run did work) for the other, as QuorumController's
    maybeFenceStaleBroker does with ControllerResult.response = true."""
    c = make_cluster(4, kafka_version="4.1", settle_ms=3000)
    c.crash(1)
    c.crash(2)
    c.run(15000)
    fenced = [(r[0], r[5].broker) for r in _rows(c, "broker_fenced")]
    assert sorted(b for _t, b in fenced) == [1, 2]
    assert fenced[1][0] - fenced[0][0] == 10


def test_3_9_fences_two_silent_brokers_each_at_its_own_deadline():
    c = make_cluster(4, kafka_version="3.9", metadata_mode="kraft", settle_ms=3000)
    c.crash(1)
    c.crash(2)
    c.run(15000)
    fenced = [r[0] for r in _rows(c, "broker_fenced")]
    assert len(fenced) == 2 and fenced[1] - fenced[0] != 10


@pytest.mark.parametrize("version", ["4.0", "4.1"])
def test_preferred_leaders_come_back_on_the_activation_grid(version):
    """4.0+: electPreferred runs every leader.imbalance.check.interval.seconds from the
    controller's activation, imbalance or not (3.9: one event that interval after the
    imbalance appears)."""
    c = make_cluster(3, kafka_version=version, settle_ms=3000,
                     config={"leader.imbalance.check.interval.seconds": 20})
    active_at = _rows(c, "controller_active")[-1][0]
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(1000)
    c.crash(1)
    assert c.run_until(lambda cl: cl.leader("t", 0) == 2, 15000)
    c.start(1)
    assert c.run_until(lambda cl: cl.leader("t", 0) == 1, 60000)
    back = [r[0] for r in _rows(c, "controller") if "preferred" in str(r[5])]
    assert back and (back[0] - active_at) % 20000 == 0, (back, active_at)


def test_3_9_elects_the_preferred_leader_an_interval_after_the_imbalance():
    c = make_cluster(3, kafka_version="3.9", metadata_mode="kraft", settle_ms=3000,
                     config={"leader.imbalance.check.interval.seconds": 20})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(1000)
    c.crash(1)
    assert c.run_until(lambda cl: cl.leader("t", 0) == 2, 15000)
    c.start(1)
    assert c.run_until(lambda cl: cl.leader("t", 0) == 1, 60000)
    moved = [r for r in _rows(c, "controller") if r[3] == "t" and "-> 2" in str(r[5])]
    back = [r[0] for r in _rows(c, "controller") if "preferred" in str(r[5])]
    assert moved and back and back[0] - moved[0][0] == 20000, (moved[:1], back)


def _leaderless_until_unclean_is_allowed(version: str):
    """t-0's ISR shrinks to its leader 1, which crashes: offline (unclean election off).
    15 s later the topic allows unclean elections. Returns (cluster, activation time, time
    the partition went offline)."""
    c = make_cluster(3, kafka_version=version, metadata_mode="kraft", settle_ms=3000,
                     config={"replica.lag.time.max.ms": 2000})
    active_at = _rows(c, "controller_active")[-1][0]
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(1000)
    c.pause(2, 8000)
    c.pause(3, 8000)
    c.producer("p", acks=1).send("t", "x", partition=0)
    assert c.run_until(lambda cl: cl.isr("t") == [1], 15000)
    c.crash(1)
    assert c.run_until(lambda cl: cl.leader("t", 0) == -1, 20000)
    offline = [r[0] for r in _rows(c, "controller") if "offline" in str(r[5])][-1]
    c.run(15000)
    c.alter_config("topics", "t", {"unclean.leader.election.enable": True})
    assert c.run_until(lambda cl: cl.leader("t", 0) in (2, 3), 700000)
    return c, active_at, offline


def _unclean_elections(c) -> list[int]:
    return [r[0] for r in _rows(c, "controller") if "periodic retry" in str(r[5])]


def test_elect_unclean_runs_on_the_activation_grid():
    """4.0+ (KAFKA-17793, QuorumController.registerElectUnclean): ``electUnclean`` is a periodic
    task, first run ``uncleanLeaderElectionCheckIntervalMs`` (5 min) after the controller's
    activation and then every 5 min, leaderless partitions or not; a partition that became
    electable waits for the next point of that grid (here about 4.5 min after the config
    change)."""
    c, active_at, offline = _leaderless_until_unclean_is_allowed("4.0")
    elected = _unclean_elections(c)
    assert elected and (elected[0] - active_at) % 300000 == 0, (elected, active_at)
    assert elected[0] - offline != 300000


def test_3_9_elects_unclean_an_interval_after_a_partition_went_leaderless():
    """3.9 (QuorumController.maybeScheduleNextElectUncleanLeaders, apache/kafka 1eb7644): after
    every write event, if some partition is leaderless and no election event is scheduled, one
    is deferred by ``uncleanLeaderElectionCheckIntervalNs`` (5 min): the retry comes 5 min after
    the partition went offline, not on a grid of the activation."""
    c, active_at, offline = _leaderless_until_unclean_is_allowed("3.9")
    elected = _unclean_elections(c)
    assert elected and elected[0] - offline == 300000, (elected, offline)
    assert (elected[0] - active_at) % 300000 != 0
