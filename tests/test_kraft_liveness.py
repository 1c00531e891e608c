"""KRaft liveness after a controller failover: fenced brokers unfence, offline partitions get a
leader, and the settle check does not call a cluster settled before that.

Found by random fault schedule 1590 of the "kraft" profile (tests/test_fault_properties.py:
Kafka 4.1, ELR on, broker.session.timeout.ms 4000): the active controller 3000 is cut off from
every node, then controller 3002 crashes. Still active, 3000 fences the three brokers (no
heartbeat reaches it) and takes the partition offline (Leader: none, ISR empty, ELR 1,3) in
records no majority commits, then resigns (check quorum). After the heal 3000 wins epoch 3
(its log is the longest) and commits those records: the image says every broker is fenced.

Real Kafka recovers: each broker keeps heartbeating the active controller with wantFence=false
(BrokerLifecycleManager), and the new active controller's BrokerHeartbeatManager unfences a
fenced broker whose metadata offset reached its registration record's
(calculateNextBrokerState); ReplicationControlManager.handleBrokerUnfenced then elects the
unfenced ELR member (KIP-966). What the simulator missed:

1. KAFKA-14392 (3.4.0): the broker's heartbeat channel gives up on an unanswered heartbeat after
   broker.session.timeout.ms / 2 (BrokerServer: NodeToControllerChannelManagerImpl(...,
   brokerSessionTimeoutMs / 2), request timeout min(controller.socket.timeout.ms, that)); the
   simulator waited controller.socket.timeout.ms (30 s by default) as Kafka 3.3.0 did, so one
   heartbeat lost to the partition silenced the broker long after the failover. The retry
   backoff is ExponentialBackoff(100, 2, broker.session.timeout.ms), not half of it.
2. The settle check looked at the committed image only: with no active controller and a stale
   image (the failover's records not committed yet) it called the run settled, 1 s before the
   end, so no check saw the partition stay offline. ``KRaftControlPlane.unsettled_reasons`` now
   requires an active controller with nothing uncommitted, every running broker unfenced and
   RUNNING, no leaderless partition with a live ISR/ELR member, and replicas at the image's
   leader epoch.
"""

from __future__ import annotations

from kafkasim.control.kraft import records as R
from kafkasim.core import events as ev
from kafkasim.core.messages import BrokerHeartbeatRequest
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload
from kafkasim.scenarios.scenario import _settled
from tests.test_fault_properties import generate, run_schedule

#: broker.session.timeout.ms of the replay: schedule 1590 has 4000, but Kafka 4.0+ fences at the
#: periodic maybeFenceStaleBroker check (up to a session / 8 after the deadline), and at 4000 the
#: isolated controller then resigns (check quorum) before its fence records are appended; at
#: 3600 the story the replay is about happens again (fences written, uncommitted, re-election)
SESSION_MS = 3600
TOPIC = "t"


def test_schedule_1590_kraft_settles_with_nothing_lost():
    """The schedule itself, through the property suite's runner: before the fix it "settled"
    with t-0 offline (Elr: 1,3) and 197 acknowledged records unreadable."""
    out = run_schedule(generate(1590, "kraft"))
    assert not out.error, out.summary()
    assert out.settled, out.stuck
    assert out.ok and not out.lost, out.summary()
    assert out.acked > 0 and out.ghost_acked == out.acked


def test_schedule_1987_settles_only_once_the_brokers_follow_the_active_controller():
    """Random schedule 1987 of the "kraft" profile (4.1), after KAFKA-17030 moved the runs'
    timers: the active controller 3001 is isolated; 3002 wins epoch 2, but the brokers'
    metadata clients, past their fetch timeout, keep picking 3001 from the bootstrap servers
    (a random start each time; before 4.2 an observer fetches from no other node then,
    KAFKA-19354) and so heartbeat it, not 3002. The settle check used to call the run settled
    right after the heal, with the image still showing every broker unfenced; 3002 then fenced
    the three brokers (no heartbeat for a session) and the partitions ended offline, 104
    acknowledged records unreadable. ``unsettled_reasons`` now also requires every broker's
    metadata client to follow the active controller in its epoch: the run settles after the
    brokers found 3002, unfenced and re-elected, and nothing is lost."""
    out = run_schedule(generate(1987, "kraft"))
    assert not out.error, out.summary()
    assert out.settled, out.stuck
    assert out.ok and not out.lost, out.summary()
    assert out.acked > 0 and out.ghost_acked == out.acked


def _steady_kraft_cluster() -> Cluster:
    """Three brokers on 4.1, the quorum ready and 3 s of steady heartbeats behind them."""
    c = Cluster(brokers=3, seed=1, kafka_version="4.1")
    assert c.run_until(lambda cl: cl.kraft.ready(), 30000)
    c.run(3000)
    return c


def _heartbeat_attempts(c: Cluster, broker: int) -> list[int]:
    """Times broker ``broker`` put a BrokerHeartbeatRequest on the wire (sent or lost)."""
    return [r[0] for r in c.trace.rows if r[1] in ("send", "drop") and r[2] == broker
            and r[5][0] == "BrokerHeartbeatRequest"]


def _replay_1590(version: str = "4.1", config: dict | None = None, rules: dict | None = None,
                 seed: int = 1596):
    """Schedule 1590's faults, driven directly: returns the cluster right after the heal, the
    heal time, the producer and the isolated controller (checked not vacuous: it fenced every
    broker in records nobody committed). The schedule isolated the active controller and then
    crashed another (3000 and 3002 before KAFKA-17030 moved the first election's timers: 4.x
    Unattached voters fetch from the bootstrap servers, drawing on the run's seeded generator);
    the replay takes whichever is active and crashes the highest other id. Its cluster's seed is
    1596: with KAFKA-17030 on, seed 1590's timers make the other surviving voter win after the
    heal, the isolated controller's fence records are truncated and the story does not happen;
    on 1596 it does, with 3000 isolated as in the schedule."""
    cfg = {"replica.lag.time.max.ms": 3000, "replica.socket.timeout.ms": 5000,
           "broker.session.timeout.ms": SESSION_MS, "min.insync.replicas": 2}
    cfg.update(config or {})
    c = Cluster(brokers=3, seed=seed, kafka_version=version, config=cfg, latency_ms=1,
                jitter_ms=1, controllers=3, rules=rules)
    assert c.run_until(lambda cl: cl.controller_id() >= 0 and not any(
        b.lifecycle.is_fenced for b in cl.brokers.values()), 30000)
    c.create_topic(TOPIC, partitions=1, replication_factor=3,
                   config={"unclean.leader.election.enable": False})
    producer = c.producer(acks="all", retries=3, linger_ms=2)
    RateWorkload(c, producer, TOPIC, rate=40, duration_ms=4930, partition=0)
    start = c.now
    c.run_to(start + 1207)
    active = c.controller_id()
    assert active >= 0
    victim = max(n for n in c.kraft.nodes if n != active)
    for other in [*sorted(c.kraft.nodes), *sorted(c.brokers)]:   # ctl_isolate active
        if other != active:
            c.cut(active, other)
    c.run_to(start + 2305)
    c.crash(victim)                                                # ctl_crash
    c.run_to(start + 4930)
    # not vacuous: cut off, the active controller fenced every broker and took t-0 offline,
    # uncommitted
    isolated = c.kraft.nodes[active]
    fenced = {r.broker_id for _o, _e, r in isolated.raft.log.entries_between(
        isolated.raft.high_watermark, isolated.raft.log.end_offset)
        if type(r) is R.BrokerRegistrationChangeRecord
        and r.fenced == R.BrokerRegistrationFencingChange.FENCE}
    assert fenced == {1, 2, 3}
    assert c.leader(TOPIC) >= 0            # the committed image does not know yet
    c.heal()
    c.start(victim)
    return c, c.now, producer, active


def _recovery(c: Cluster, heal_ms: int, limit_ms: int = 60000):
    """Run until the failover has committed the partition offline (Leader: none, ELR set) and
    then the partition is led and every broker unfenced in the image; returns that ELR (None if
    never seen), when the new active controller claimed, and when it was over (-1 if never
    within ``limit_ms``)."""
    seen = {"elr": None, "active_at": -1}

    def done(cl) -> bool:
        reg = cl.kraft.image.partitions[(TOPIC, 0)]
        if reg.leader < 0 and reg.elr and seen["elr"] is None:
            seen["elr"] = tuple(reg.elr)
            assert not _settled(cl), cl.kraft.unsettled_reasons()
        if cl.controller_id() >= 0 and seen["active_at"] < 0:
            seen["active_at"] = cl.now
        # over once the failover's offline state was committed and then repaired
        return seen["elr"] is not None and reg.leader >= 0 and \
            all(not b.fenced for b in cl.kraft.image.brokers.values()) and \
            len(cl.kraft.image.brokers) == 3
    ok = c.run_until(done, limit_ms)
    return seen["elr"], seen["active_at"], c.now if ok else -1


def test_brokers_fenced_by_an_isolated_controller_unfence_after_its_reelection():
    """Kafka's defaults (controller.socket.timeout.ms 30000): the partition gets a leader from its
    ELR and every broker unfences within the bound Kafka's timeouts give. After the heal at H a
    broker's heartbeat in flight into the cut fails by H + session/2 (the channel's retry
    timeout, KAFKA-14392), its backoff is at most broker.session.timeout.ms, and an attempt that
    reaches a controller that is not active yet (NOT_CONTROLLER) is resent by the channel
    within its retry timeout or, past it, backs off at most that again:
    every broker's next heartbeat reaches the new active controller (claimed at A) by
    max(H + 1.5 x session, A + session); that heartbeat unfences it (wantFence=false, metadata
    offset past its registration) and its unfencing elects the ELR member, committed a few ms
    later."""
    c, heal, _producer, _isolated = _replay_1590()
    elr, active_at, done = _recovery(c, heal)
    assert elr, "the failover never committed the offline partition (vacuous)"
    assert active_at > heal and done > 0, c.kraft.unsettled_reasons()
    bound = max(heal + SESSION_MS // 2 + SESSION_MS, active_at + SESSION_MS) + 100
    assert done <= bound, (done, bound, heal, active_at)
    assert c.leader(TOPIC) in elr     # elected from the ELR (KIP-966): the ISR was empty
    elections = [r for r in c.trace.rows if r[1] == "controller" and
                 isinstance(r[5], ev.LeaderElection) and r[0] > heal]
    assert elections and elections[0][5].new_leader in elr
    # and the cluster settles: ISR back to three, nothing pending
    assert c.run_until(lambda cl: _settled(cl) and len(cl.isr(TOPIC)) == 3, 60000), \
        c.kraft.unsettled_reasons()


def test_before_kafka_3_4_a_lost_heartbeat_waits_controller_socket_timeout():
    """The same run with KAFKA-14392 switched off (Kafka 3.3.0's channel: request timeout
    controller.socket.timeout.ms, 30 s): the brokers stay fenced and the partition offline
    until the heartbeat lost in the cut times out, ~30 s after it was sent."""
    c, heal, _producer, _isolated = _replay_1590(
        rules={"broker_heartbeat_timeout_half_session": False})
    lost = max(t for t in _heartbeat_attempts(c, 1) if t < heal)
    elr, _active_at, done = _recovery(c, heal)
    assert elr and done > lost + 30000


# --------------------------------------------------------------------- the heartbeat channel
def test_heartbeat_channel_timeouts_by_version():
    """BrokerServer @3.4.0+: the "heartbeat" channel's retryTimeoutMs is
    brokerSessionTimeoutMs / 2 and its request timeout min(controller.socket.timeout.ms, that)
    (KAFKA-14392); @3.3.0 they were broker.session.timeout.ms and controller.socket.timeout.ms."""
    cases = [("4.1", {}, (4500, 4500)),                                   # defaults 30000 / 9000
             ("3.4", {"metadata_mode": "kraft"}, (4500, 4500)),
             ("4.1", {"controller.socket.timeout.ms": 1000}, (1000, 4500)),
             ("4.1", {"broker.session.timeout.ms": 4000}, (2000, 2000)),
             ("3.3", {"metadata_mode": "kraft"}, (30000, 9000))]
    for version, cfg, expected in cases:
        cfg = dict(cfg)
        mode = cfg.pop("metadata_mode", None)
        extra = {"metadata_mode": mode} if mode else {}
        c = Cluster(brokers=1, seed=1, kafka_version=version, config=cfg, **extra)
        assert c.brokers[1].lifecycle.channel_timeouts() == expected, (version, cfg)


def _heartbeat_gaps(c: Cluster, broker: int, since: int) -> list[int]:
    times = [t for t in _heartbeat_attempts(c, broker) if t >= since]
    return [b - a for a, b in zip(times, times[1:], strict=False)]


def test_unanswered_heartbeat_is_resent_until_the_retry_timeout_then_backs_off():
    """NodeToControllerRequestThreadTest.testRetryTimeout / testRequestsSent: an attempt that
    gets no answer (disconnected after the request timeout) goes back to the head of the queue
    and is sent again while the request is younger than retryTimeoutMs; past it the item fails
    with onTimeout and BrokerLifecycleManager backs off 100 ms (first failure) before a new
    heartbeat. controller.socket.timeout.ms 1000, session 9000: five attempts 1,050 ms apart
    (the request timeout closes the connection, ClusterConnectionStates.disconnected, and the
    channel's NetworkClient reconnects to the same controller only after its 50 ms reconnect
    backoff); the last at 4.2 s is younger than 4.5 s, its failure at 5.2 s ends the request,
    and a new heartbeat goes 100 ms later."""
    c = Cluster(brokers=3, seed=1, kafka_version="4.1",
                config={"controller.socket.timeout.ms": 1000})
    assert c.run_until(lambda cl: cl.kraft.ready(), 30000)
    c.run(3000)
    t0 = c.now
    c.transport.drop(type="BrokerHeartbeatRequest", src=1, count=5)
    c.run(8000)
    gaps = _heartbeat_gaps(c, 1, t0)
    assert gaps[:5] == [1050, 1050, 1050, 1050, 1100], gaps
    assert not c.kraft.image.brokers[1].fenced   # the new heartbeat came within the session


def test_heartbeat_backoff_doubles_up_to_the_session_timeout():
    """BrokerLifecycleManager.resendExponentialBackoff = ExponentialBackoff(100, 2,
    brokerSessionTimeoutMs, 0.02) (3.3.0 ... trunk; the 2 % jitter left out): with every
    heartbeat lost, each request fails after the retry timeout (session / 2, KAFKA-14392) and the
    next waits min(100 * 2^n, session) more."""
    c = _steady_kraft_cluster()
    session = c.brokers[1].config["broker.session.timeout.ms"]
    retry = c.brokers[1].lifecycle.channel_timeouts()[1]
    t0 = c.now
    c.transport.drop(type="BrokerHeartbeatRequest", src=1)
    c.run(90000)
    gaps = _heartbeat_gaps(c, 1, t0)
    expected = [retry + min(100 * 2 ** n, session) for n in range(len(gaps))]
    assert len(gaps) >= 9 and gaps == expected, gaps
    assert max(gaps) == retry + session


# ------------------------------------------------------------------------ the settle check
def test_not_settled_without_an_active_controller():
    """A quorum without a majority has no active controller: the committed image is stale and
    nothing can change it, so replication is not at rest (``KRaftControlPlane
    .unsettled_reasons``) even though every ISR member holds the leader's log."""
    c = Cluster(brokers=3, seed=1, kafka_version="4.1")
    c.create_topic(TOPIC, 1, 3)
    assert c.run_until(_settled, 30000)
    active = c.controller_id()
    for node in sorted(c.kraft.nodes):
        if node != active:
            c.crash(node)
    c.run(20000)
    assert c.controller_id() < 0
    assert not _settled(c) and "no active controller" in c.kraft.unsettled_reasons()
    for node in sorted(c.kraft.nodes):
        if c.kraft.nodes[node].state != "running":
            c.start(node)
    assert c.run_until(_settled, 60000), c.kraft.unsettled_reasons()


def test_not_settled_while_a_running_broker_is_fenced():
    """A broker cut off from every controller is fenced once its session expires
    (BrokerHeartbeatManager) while it runs and its replica stays in sync until the ISR shrinks:
    not at rest. Once reconnected, its next heartbeat (wantFence=false) unfences it."""
    c = Cluster(brokers=3, seed=1, kafka_version="4.1")
    c.create_topic(TOPIC, 1, 3)
    assert c.run_until(_settled, 30000)
    for ctl in sorted(c.kraft.nodes):
        c.cut(3, ctl)
    assert c.run_until(lambda cl: cl.kraft.image.brokers[3].fenced, 30000)
    assert not _settled(c)
    assert any(r.startswith("broker 3:") for r in c.kraft.unsettled_reasons())
    c.heal()
    assert c.run_until(lambda cl: _settled(cl) and len(cl.isr(TOPIC)) == 3, 60000), \
        c.kraft.unsettled_reasons()
    assert not c.kraft.image.brokers[3].fenced


# ------------------------------------------------------------------- renounce while resigned
def test_a_controller_that_resigned_reverts_to_its_last_committed_offset():
    """OffsetControlManager.deactivate (QuorumController.renounce) reverts to lastStableOffset,
    the last committed offset handleCommitBatch recorded (OffsetControlManagerTest
    .testHandleCommitBatch), not to what the Raft client knows now: a Resigned client knows no
    high watermark. The isolated controller of schedule 1590 keeps the committed partition
    (leader 3, full ISR) and drops its uncommitted fencing."""
    c, _heal, _producer, isolated = _replay_1590()
    node = c.kraft.nodes[isolated]
    assert node.raft.state_name == "Resigned" and not node.controller.active
    renounce = [r for r in c.trace.rows if r[1] == "controller_renounce" and r[2] == isolated]
    assert renounce and renounce[-1][5].high_watermark == c.kraft.image.offset + 1
    reg = node.controller.replication_control.partition(TOPIC, 0)
    assert reg == c.kraft.image.partitions[(TOPIC, 0)] and reg.leader == 3
    assert not any(b.fenced for b in node.controller.cluster_control.broker_registrations.values())


# ------------------------------------------------------------------ NOT_CONTROLLER, disconnect
def _heartbeat_sends(c: Cluster, broker: int, since: int) -> list[tuple[int, int]]:
    """(time, destination) of each BrokerHeartbeatRequest broker ``broker`` sent since then."""
    return [(r[0], r[5][1]) for r in c.trace.rows if r[1] == "send" and r[2] == broker
            and r[0] >= since and r[5][0] == "BrokerHeartbeatRequest"]


def test_not_controller_answer_resends_the_same_heartbeat_at_once_to_the_new_controller():
    """NodeToControllerRequestThreadTest.testNotController: the old controller answers
    NOT_CONTROLLER; the channel forgets it, puts the same queue item first and sends it at once
    to the controller resolved now (RaftControllerNodeProvider: the raft client's leader). The
    item's callback (BrokerLifecycleManager's heartbeat response handler, which backs off on
    an error) runs only on the real answer. Here the heartbeat goes first to standby 3001, as
    if it had been the controller when the request was generated."""
    c = _steady_kraft_cluster()
    lm = c.brokers[1].lifecycle
    active = c.controller_id()
    assert c.run_until(lambda cl: lm.inflight is None, 5000)
    assert active == lm.raft.leader_id and active != 3001 and lm.failed_attempts == 0
    b = c.brokers[1]
    created = c.now
    heartbeats = len(_heartbeat_sends(c, 1, 0))
    lm._send(3001, BrokerHeartbeatRequest(b.id, lm.broker_epoch, lm.image.offset, False, False),
             created)
    first_corr = lm.inflight[0]
    assert c.run_until(lambda cl: lm.inflight is None or lm.inflight[0] != first_corr, 1000)
    answered = c.now                      # NOT_CONTROLLER from 3001 arrived
    assert lm.inflight is not None and lm.inflight[2] == active   # resent ...
    assert lm.inflight[3] == created                               # ... the same queue item
    sends = _heartbeat_sends(c, 1, created)
    assert sends[:2] == [(created, 3001), (answered, active)]      # ... at once
    assert len(_heartbeat_sends(c, 1, 0)) == heartbeats + 2
    assert c.run_until(lambda cl: lm.inflight is None, 1000)
    assert lm.failed_attempts == 0        # the handler saw success, never the error
    assert not lm.is_fenced and lm.state == "RUNNING"


def test_not_controller_from_the_only_known_controller_retries_after_the_reconnect_backoff():
    """The active controller 3000, cut off from the other controllers, resigns (check quorum)
    and answers NOT_CONTROLLER while the brokers' raft clients still name it leader: the
    channel reconnects to the same node after its 50 ms reconnect backoff
    (NodeToControllerChannelManagerImpl: NetworkClient reconnectBackoffMs = reconnectBackoffMax
    = 50) and sends the same item again -- no lifecycle backoff (failedAttempts stays 0) --
    until the raft client learns the new leader, which then gets the item at the channel's
    next pass; the item is older than retryTimeoutMs only if that takes more than
    broker.session.timeout.ms / 2."""
    c = _steady_kraft_cluster()
    old = c.controller_id()
    for node in sorted(c.kraft.nodes):
        if node != old:
            c.cut(old, node)
    t0 = c.now
    attempts = []
    assert c.run_until(lambda cl: attempts.append(cl.brokers[1].lifecycle.failed_attempts) or (
        cl.controller_id() not in (-1, old) and any(
            dst == cl.controller_id() for _t, dst in _heartbeat_sends(cl, 1, t0))), 30000)
    new = c.controller_id()
    sends = _heartbeat_sends(c, 1, t0)
    to_old = [t for t, dst in sends if dst == old]
    gaps = [b - a for a, b in zip(to_old, to_old[1:], strict=False)]
    assert len(gaps) >= 5, sends
    # resend after the backoff plus one round trip (latency 1 ms, jitter 1 ms)
    assert all(50 < g <= 50 + 2 * 2 + 1 for g in gaps[1:]), gaps
    assert set(attempts) == {0}
    assert sends[-1][1] == new
    assert c.run_until(lambda cl: cl.brokers[1].lifecycle.inflight is None, 1000)
    assert not c.kraft.image.brokers[1].fenced and c.brokers[1].lifecycle.failed_attempts == 0


def test_a_controller_change_keeps_the_request_in_flight():
    """NodeToControllerRequestThread.doWork (3.3.0 ... trunk): with a controller cached the
    channel only polls its NetworkClient, so a new active controller does not touch the request
    in flight; ``handleResponse`` forgets the old node only on a disconnect or a NOT_CONTROLLER
    answer. Here broker 1's heartbeat is held on the way to the active controller, which then
    resigns (RaftClient.resign): the heartbeat stays in flight to it, the same item, after the
    new leader is known. Released, it reaches the old controller, which is no longer active and
    answers NOT_CONTROLLER; only then does the same queue item go to the new controller
    (testNotController). Before, kafkasim dropped the request at the leader change and sent a
    new heartbeat at once."""
    c = _steady_kraft_cluster()
    lm = c.brokers[1].lifecycle
    old = c.controller_id()
    assert c.run_until(lambda cl: lm.inflight is None, 5000)
    c.hold(type="BrokerHeartbeatRequest", src=1, dst=old)
    assert c.run_until(lambda cl: lm.inflight is not None, 5000)
    corr, kind, dst, created, _msg = lm.inflight
    assert (kind, dst) == ("heartbeat", old)
    node = c.kraft.nodes[old]
    node.raft.resign(node)
    assert c.run_until(lambda cl: lm.raft.leader_id not in (None, -1, old), 3000)
    new = lm.raft.leader_id
    assert lm.inflight is not None and lm.inflight[:4] == (corr, "heartbeat", old, created)
    assert not _heartbeat_sends(c, 1, created + 1)      # nothing new on the wire
    c.release()
    assert c.run_until(lambda cl: lm.inflight is None or lm.inflight[2] == new, 1000)
    assert lm.inflight is not None and lm.inflight[3] == created   # the same queue item
    assert [d for _t, d in _heartbeat_sends(c, 1, created + 1)] == [new]
    assert c.run_until(lambda cl: lm.inflight is None, 1000)
    assert lm.failed_attempts == 0 and not lm.is_fenced


def test_alter_partition_in_flight_to_a_controller_that_dies_goes_to_the_new_one():
    """The AlterPartition channel keeps its request in flight across a controller change too;
    a controller process that dies breaks the connection (the kernel's RST/FIN), which
    NodeToControllerRequestThread.handleResponse treats as ``wasDisconnected``: the same
    request goes first in the queue and on to the controller the Raft client names once it
    knows one. Here the leader's ISR shrink is held on the way to the active controller, which
    then crashes: the request reaches the new controller without waiting for
    controller.socket.timeout.ms (30 s)."""
    c = Cluster(brokers=3, seed=1, kafka_version="4.1",
                config={"replica.lag.time.max.ms": 2000})
    assert c.run_until(lambda cl: cl.kraft.ready(), 30000)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(3000)
    old = c.controller_id()
    leader = c.brokers[1]
    apm = leader.alter_partition_manager
    c.hold(type="AlterPartitionRequest", src=1, dst=old)
    c.pause(3, 6000)                     # broker 3 stops fetching ...
    c.producer("p", acks=1).send("t", "x", partition=0)   # ... and falls behind: ISR shrink
    assert c.run_until(lambda cl: apm.inflight is not None, 10000)
    assert apm.sent_to == old
    crashed = c.now
    c.crash(old)
    c.release()        # (a held message is refused by the dead process, as on a real network)
    assert c.run_until(lambda cl: apm.inflight is None, 15000)
    assert c.now - crashed < 10000
    assert c.isr("t") == [1, 2]


def test_new_heartbeat_after_a_failover_goes_to_the_cached_controller_first():
    """NodeToControllerRequestThread.generateRequests / doWork
    (server/src/main/java/org/apache/kafka/server/NodeToControllerRequestThread.java, and
    NodeToControllerChannelManager.scala before): every request, a new one as well as a resent
    one, goes to the channel's ``activeController``; ``doWork`` asks the
    ControllerNodeProvider (``getControllerInfo``) only while none is cached, and only
    ``handleResponse`` clears it, on a disconnect or a NOT_CONTROLLER answer
    (``maybeDisconnectAndUpdateController``). So after the active controller resigns with
    nothing in flight, broker 1's next heartbeat still goes to the old controller although the
    raft client already names the new one; its NOT_CONTROLLER answer sends the same item on to
    the new controller at once (testNotController), with no lifecycle backoff. Before,
    kafkasim sent each new heartbeat to the raft client's leader of the moment."""
    c = _steady_kraft_cluster()
    lm = c.brokers[1].lifecycle
    old = c.controller_id()
    assert c.run_until(lambda cl: lm.inflight is None, 5000)
    assert lm.cached_controller == old
    node = c.kraft.nodes[old]
    node.raft.resign(node)
    assert c.run_until(lambda cl: lm.raft.leader_id not in (None, -1, old)
                       and lm.inflight is None, 3000)
    new = lm.raft.leader_id
    t = c.now
    assert lm.cached_controller == old        # a leader change leaves the cache alone
    assert c.run_until(lambda cl: len(_heartbeat_sends(cl, 1, t)) >= 2, 5000)
    first, second = _heartbeat_sends(c, 1, t)[:2]
    assert (first[1], second[1]) == (old, new)
    assert second[0] - first[0] <= 2 * 2 + 1   # one round trip: no backoff in between
    assert c.run_until(lambda cl: lm.inflight is None, 1000)
    assert lm.cached_controller == new and lm.failed_attempts == 0 and not lm.is_fenced
