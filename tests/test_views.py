"""Cluster's read-only views (kafkasim/runtime/views.py) and run_until's strict mode."""

from __future__ import annotations

import pytest

from kafkasim.runtime.cluster import Cluster, ClusterError, ConditionTimeout

# the ZooKeeper-era release these tests were written against (Kafka 4.x is KRaft only;
# its behaviour is tested in tests/test_kraft_*.py)
ZK = "3.7"


@pytest.fixture
def busy():
    c = Cluster(3, seed=3, kafka_version=ZK)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all")
    p.send_many("t", [f"v{i}" for i in range(5)], partition=0)
    assert p.flush()
    c.run(600)   # followers learn the final HW on their next fetch
    return c


def test_replica_view_shows_a_followers_own_state(busy):
    v = busy.inspect.replica_view(2, "t", 0)
    log = busy.log(2, "t", 0)
    assert v["role"] == "follower" and v["leader"] == 1
    assert v["leader_epoch"] == busy.inspect.partition_state("t", 0)["leader_epoch"]
    assert (v["log_end_offset"], v["high_watermark"]) == (log.log_end_offset,
                                                          log.high_watermark) == (5, 5)
    assert v["epoch_entries"] == [(e.epoch, e.start_offset)
                                  for e in log.leader_epoch_cache.entries]
    assert v["recovery_point"] == busy.inspect.recovery_point(2, "t", 0) == log.recovery_point
    assert busy.inspect.replica_view(1, "t", 0)["role"] == "leader"


def test_replica_view_lags_while_the_leader_and_isr_is_held(busy):
    """A follower's view changes only when the LeaderAndIsr request reaches it
    (ReplicaManager.becomeLeaderOrFollower), while ZooKeeper already has the new state."""
    busy.hold(type="LeaderAndIsrRequest", dst=3)
    busy.crash(1)
    assert busy.run_until(lambda c: c.leader("t", 0) == 2, 30000)
    busy.run(50)
    assert busy.inspect.replica_view(2, "t", 0)["leader"] == 2
    stale = busy.inspect.replica_view(3, "t", 0)
    assert stale["leader"] == 1 and stale["leader_epoch"] < busy.inspect.partition_state("t", 0)[
        "leader_epoch"]


def test_follower_states_are_the_leaders_replica_state(busy):
    fs = busy.inspect.follower_states("t", 0)
    part = busy.brokers[1].replica_manager.partitions[("t", 0)]
    assert sorted(fs) == [2, 3]
    for r, st in fs.items():
        real = part.remote[r]
        assert st == {"log_end_offset": real.log_end_offset,
                      "log_start_offset": real.log_start_offset,
                      "last_caught_up_time_ms": real.last_caught_up_time_ms,
                      "last_fetch_time_ms": real.last_fetch_time_ms,
                      "last_fetch_leader_log_end_offset": real.last_fetch_leader_log_end_offset}
        assert st["log_end_offset"] == 5 and 0 < st["last_fetch_time_ms"] <= busy.now
    with pytest.raises(ClusterError, match="does not lead"):
        busy.inspect.follower_states("t", 0, leader=2)


def test_controller_live_brokers_lag_a_crash_until_the_session_expires(busy):
    assert busy.inspect.controller_live_brokers() == [1, 2, 3]
    victim = 3 if busy.controller_id() != 3 else 2
    busy.crash(victim)
    assert victim in busy.inspect.controller_live_brokers()   # the ZooKeeper session still lives
    timeout = busy.brokers[1].config["zookeeper.session.timeout.ms"]
    busy.run(timeout + 1000)
    assert victim not in busy.inspect.controller_live_brokers()


def test_next_isr_expiration_is_the_scheduled_task(busy):
    """isr-expiration runs every replica.lag.time.max.ms / 2 (ReplicaManager.startup, 3.x)."""
    period = busy.brokers[1].config["replica.lag.time.max.ms"] // 2
    t = busy.inspect.next_isr_expiration_ms(1)
    assert busy.now < t <= busy.now + period
    busy.run_to(t)
    assert busy.inspect.next_isr_expiration_ms(1) == t + period
    busy.crash(1)
    assert busy.inspect.next_isr_expiration_ms(1) == -1


def test_log_is_readable_before_the_first_leader_and_isr():
    c = Cluster(3, seed=1, kafka_version=ZK)
    c.shutdown(3)    # a clean stop closes its ZooKeeper session: it may register again at once
    c.run_until(lambda cl: cl.brokers[3].state == "stopped", 60000, raise_on_timeout=True)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.start(3)
    log = c.log(3, "t", 0)    # no LeaderAndIsr yet: Kafka has not created the log
    assert (log.log_end_offset, log.high_watermark) == (0, 0)
    assert c.inspect.replica_view(3, "t", 0)["role"] == "none"
    c.create_topic("u", 1, 2, assignment=[[1, 2]])
    with pytest.raises(ClusterError, match="hosts no replica"):
        c.log(3, "u", 0)


def test_run_until_raises_when_asked_naming_the_condition_and_time():
    c = Cluster(3, seed=1, kafka_version=ZK)
    t0 = c.now
    assert c.run_until(lambda cl: cl.now > 10**9, 500) is False
    with pytest.raises(ConditionTimeout) as info:
        c.run_until(lambda cl: cl.now > 10**9, 500, raise_on_timeout=True)
    msg = str(info.value)
    assert "cl.now > 10**9" in msg and f"to {t0 + 1000} ms" in msg and "500 ms" in msg
    assert c.run_until(lambda cl: True, 10, raise_on_timeout=True) is True
