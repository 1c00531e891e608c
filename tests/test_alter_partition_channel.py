"""The broker-to-controller channel's answer to NOT_CONTROLLER for AlterPartition
(NodeToControllerRequestThread.handleResponse, mirrored after
NodeToControllerRequestThreadTest.testNotController): the same request goes first in the queue
and is sent again at once to the controller known now; to the same node only after the
NetworkClient's 50 ms reconnect backoff; with no controller known, after 100 ms polls."""

from __future__ import annotations

from kafkasim.core.alter_partition_manager import (
    CONTROLLER_CHANNEL_POLL_MS,
    CONTROLLER_CHANNEL_RECONNECT_BACKOFF_MS,
)
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

PAUSE_AT, PAUSE_MS = 630, 6520


def _paused_controller() -> Cluster:
    """ZooKeeper-era cluster whose controller (broker 1) stalls for 6.5 s: broker 2 takes over,
    and broker 1, resumed, asks itself to shrink an ISR and is refused (NOT_CONTROLLER)."""
    c = Cluster(brokers=3, seed=0, kafka_version="3.7", latency_ms=1, jitter_ms=1,
                config={"replica.lag.time.max.ms": 3000, "replica.socket.timeout.ms": 5000,
                        "zookeeper.session.timeout.ms": 5000})
    c.create_topic("t", partitions=2, replication_factor=3, config={"min.insync.replicas": 2})
    p = c.producer(acks="all", linger_ms=2)
    for q in range(2):
        RateWorkload(c, p, "t", rate=40, duration_ms=3722, partition=q, name=f"w{q}")
    assert c.controller_id() == 1
    c.run(PAUSE_AT)
    c.pause(1, PAUSE_MS)
    return c


def _alter_sends(c: Cluster, broker: int, since: int) -> list[tuple[int, int]]:
    return [(r[0], r[5][1]) for r in c.trace.rows
            if r[0] >= since and r[1] == "send" and r[2] == broker
            and r[5][0] == "AlterPartitionRequest"]


def _refusal(c: Cluster, broker: int) -> int:
    times = [r[0] for r in c.trace.rows if r[1] == "isr_update_failed" and r[2] == broker
             and "NOT_CONTROLLER" in str(r[5])]
    assert times, "the scenario no longer produces a NOT_CONTROLLER answer"
    return times[0]


def test_not_controller_resends_at_once_to_the_controller_known_now():
    c = _paused_controller()
    c.run(12000)
    t = _refusal(c, 1)
    assert c.controller_id() == 2
    # the same millisecond, to the new controller (before: controller.socket.timeout.ms later)
    assert _alter_sends(c, 1, t)[0] == (t, 2)


def test_not_controller_from_the_controller_still_known_waits_the_reconnect_backoff():
    c = _paused_controller()
    probe = _paused_controller()
    probe.run(12000)
    t = _refusal(probe, 1)
    c.run(t - 1 - c.now)             # just before broker 1 reads the refusal
    b1 = c.brokers[1]
    b1.metadata.controller_id = 1    # as if it had not learned of the new controller yet
    c.run(1)
    assert _refusal(c, 1) == t
    sends = _alter_sends(c, 1, t)
    assert sends == [], "resent before the reconnect backoff"
    c.run(CONTROLLER_CHANNEL_RECONNECT_BACKOFF_MS)
    # after the backoff the channel resolves the controller again: broker 1 has learned of
    # broker 2 meanwhile (UpdateMetadata), so the request goes there
    assert _alter_sends(c, 1, t)[0] == (t + CONTROLLER_CHANNEL_RECONNECT_BACKOFF_MS, 2)


def test_not_controller_with_no_controller_known_polls_every_100_ms():
    c = _paused_controller()
    probe = _paused_controller()
    probe.run(12000)
    t = _refusal(probe, 1)
    c.run(t - 1 - c.now)
    b1 = c.brokers[1]
    b1.metadata.controller_id = -1   # no controller known
    c.run(1)
    polls = 0
    while not _alter_sends(c, 1, t):
        polls += 1
        assert polls < 100, "never resent"
        c.run(CONTROLLER_CHANNEL_POLL_MS)
    sent_at, to = _alter_sends(c, 1, t)[0]
    # sent on a poll (every 100 ms after the refusal), to the controller learned by then
    assert sent_at == t + polls * CONTROLLER_CHANNEL_POLL_MS and polls >= 1
    assert to == c.controller_id() == 2


def test_unanswered_request_is_resent_after_the_timeout_and_the_reconnect_backoff():
    """NetworkClient fails a request unanswered within controller.socket.timeout.ms as a
    disconnect and closes the connection (ClusterConnectionStates.disconnected: a new attempt
    to that node waits its reconnect backoff); the channel puts the request first again and
    sends it to the controller known now, the same one here, 50 ms after the timeout."""
    # (a broker that dies is taken out of the ISR by the ZooKeeper controller itself: a GC pause
    # makes the leader shrink the ISR through AlterPartition)
    c = Cluster(brokers=3, seed=2, kafka_version="3.7",
                config={"replica.lag.time.max.ms": 3000, "controller.socket.timeout.ms": 5000})
    c.create_topic("t", partitions=1, replication_factor=3)
    leader, controller = c.leader("t", 0), c.controller_id()
    assert leader != controller
    follower = next(b for b in (1, 2, 3) if b not in (leader, controller))
    RateWorkload(c, c.producer(acks=1), "t", rate=50, duration_ms=20000, partition=0)
    c.run(1000)
    t = c.now
    c.transport.drop(type="AlterPartitionRequest", src=leader, count=1)
    c.pause(follower, 5000)   # lags: the leader shrinks the ISR, its first AlterPartition is lost
    c.run(20000)
    lost = [r[0] for r in c.trace.rows if r[0] >= t and r[1] == "drop" and r[2] == leader
            and r[5][0] == "AlterPartitionRequest"]
    sends = _alter_sends(c, leader, t)
    assert len(lost) == 1 and sends, (lost, sends)
    assert sends[0] == (lost[0] + 5000 + CONTROLLER_CHANNEL_RECONNECT_BACKOFF_MS, controller)
