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
    probe = _paused_controller()
    probe.run(12000)
    t = _refusal(probe, 1)
    assert probe.controller_id() == 2
    c.run(t - 1 - c.now)             # just before broker 1 reads the refusal
    # as if controller 2's UpdateMetadata had come first (it arrives within a millisecond of
    # the refusal, before or after it by the seeded latencies)
    c.brokers[1].metadata.controller_id = 2
    c.run(1)
    assert _refusal(c, 1) == t
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


def _isr_change(c: Cluster, follower: int, pause_ms: int, limit_ms: int = 20000) -> None:
    """Pause ``follower`` until the leader shrinks the ISR, then let it catch up and rejoin."""
    before = list(c.isr("t"))
    c.pause(follower, pause_ms)
    assert c.run_until(lambda cl: follower not in cl.isr("t"), limit_ms)
    assert c.run_until(lambda cl: list(cl.isr("t")) == before or follower in cl.isr("t"),
                       limit_ms)


def test_new_alter_partition_after_a_failover_goes_to_the_cached_controller_first():
    """NodeToControllerRequestThread.generateRequests / doWork (NodeToControllerRequestThread
    .java; ``activeController``): the AlterPartition channel ("alter-partition", its own
    NodeToControllerChannelManager in BrokerServer) keeps the controller it last used until a
    disconnect or NOT_CONTROLLER clears it, so the first AlterPartition after the active
    controller resigned goes to the old controller, is answered NOT_CONTROLLER and goes on at
    once to the new one (handleResponse: ``maybeDisconnectAndUpdateController``,
    ``putFirst``). Before, kafkasim sent every new request to the controller of the moment."""
    c = Cluster(brokers=3, seed=1, kafka_version="4.1",
                config={"replica.lag.time.max.ms": 2000})
    assert c.run_until(lambda cl: cl.kraft.ready(), 30000)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    RateWorkload(c, c.producer(acks=1), "t", rate=20, duration_ms=60000, partition=0)
    c.run(2000)
    old = c.controller_id()
    apm = c.brokers[1].alter_partition_manager
    c.pause(3, 4000)
    assert c.run_until(lambda cl: 3 not in cl.isr("t"), 20000)   # shrink, through ``old``
    assert apm.cached == old
    node = c.kraft.nodes[old]
    node.raft.resign(node)
    assert c.run_until(lambda cl: cl.brokers[1].lifecycle.raft.leader_id not in (None, -1, old),
                       3000)
    new = c.brokers[1].lifecycle.raft.leader_id
    t = c.now
    assert c.run_until(lambda cl: 3 in cl.isr("t"), 20000)        # the expand
    sends = _alter_sends(c, 1, t)
    assert [d for _t, d in sends[:2]] == [old, new], sends
    assert _refusal(c, 1) >= t
    assert apm.cached == new


def test_zookeeper_alter_partition_to_a_dead_controller_fails_at_the_disconnect():
    """Kafka 2.7 ... 3.9, ZooKeeper mode: the connection to a controller whose process died
    breaks (the kernel's FIN/RST), and BrokerToControllerRequestThread.handleResponse
    (core/src/main/scala/kafka/server/BrokerToControllerChannelManagerImpl.scala @2.7.0;
    NodeToControllerRequestThread.handleResponse from 3.0) sees ``wasDisconnected``: it forgets
    the controller and puts the same request first in its queue. ``doWork`` takes the
    controller from the metadata cache again (``metadataCache.getControllerId``), still the
    dead broker until the new controller's UpdateMetadata, so the channel reconnects to it
    every reconnect backoff (50 ms, ``new NetworkClient(..., 50, 50, ...)``), each attempt
    refused at once, and reaches the new controller as soon as the broker learns of it.
    Before, kafkasim waited controller.socket.timeout.ms (30 s) after the crash."""
    c = Cluster(brokers=3, seed=1, kafka_version="3.7", config={"replica.lag.time.max.ms": 2000})
    c.create_topic("t", 1, 3, assignment=[[2, 1, 3]])
    c.run(3000)
    old = c.controller_id()
    assert old == 1
    apm = c.brokers[2].alter_partition_manager
    c.hold(type="AlterPartitionRequest", src=2, dst=old)
    c.pause(3, 8000)
    c.producer("p", acks=1).send("t", "x", partition=0)      # broker 3 lags: ISR shrink
    assert c.run_until(lambda cl: apm.inflight is not None, 10000)
    crashed = c.now
    c.crash(old)
    c.release()          # refused by the dead process: the RST comes back a round trip later
    assert c.run_until(lambda cl: apm.inflight is None, 60000)
    done = c.now
    sends = _alter_sends(c, 2, crashed + 1)
    assert sends[0][1] == old and sends[0][0] - crashed <= 2 * 2 + 1 + 50   # not 30 s
    gaps = [b[0] - a[0] for a, b in zip(sends, sends[1:], strict=False) if b[1] == old]
    assert gaps and all(50 < g <= 50 + 2 * 2 + 1 for g in gaps), gaps
    new = sends[-1][1]
    assert new == c.controller_id() != old
    took_over = min(r[0] for r in c.trace.rows if r[0] >= crashed and r[2] == 2
                    and r[1] == "recv" and r[5][0] == "UpdateMetadataRequest")
    assert sends[-1][0] - took_over <= 50 + 2 * 2 + 1
    assert done - crashed < 30000
