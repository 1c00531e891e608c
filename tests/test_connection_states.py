"""A connection to a KRaft broker that is not listening yet fails at the *connect*.

Kafka's NetworkClient sends a request only on a READY connection; a connect the peer refuses
leaves the node DISCONNECTED and blacked out for a reconnect backoff that doubles with each
failure (``ClusterConnectionStates.disconnected`` / ``updateReconnectBackoff``,
``ExponentialBackoff(reconnect.backoff.ms, 2, reconnect.backoff.max.ms, 0.2)``). A KRaft broker
opens its listeners only once unfenced (``BrokerServer.startup``: ``enableRequestProcessing``
after ``initialUnfenceFuture``), so while it is STARTING or in RECOVERY every client's connect to
it is refused: the producer's batches stay in the accumulator (no attempt used), the consumer
skips the node ("awaiting reconnect backoff"), a follower's fetcher fails its fetch
(``BrokerBlockingSender.sendRequest``: ``awaitReady`` throws, ``close(node)`` forgets the state,
the fetcher backs off ``replica.fetch.backoff.ms``). No request goes on the wire.

Sources: clients/.../ClusterConnectionStates.java, common/utils/ExponentialBackoff.java,
ClusterConnectionStatesTest, NetworkClientTest, core/.../BrokerBlockingSender.scala @1eb7644.
"""

from __future__ import annotations

import random

import pytest

from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.network_client import ClusterConnectionStates


def _states(backoff_ms: int, max_ms: int) -> ClusterConnectionStates:
    return ClusterConnectionStates(backoff_ms, max_ms, random.Random(7))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_exponential_reconnect_backoff(seed):
    """ClusterConnectionStatesTest.verifyReconnectExponentialBackoff: ten failed connects;
    each backoff is 10 s * 2^min(i, log2(60 / 10)) within 20 % jitter."""
    states = ClusterConnectionStates(10_000, 60_000, random.Random(seed))
    now = 0
    exp_max = 2.584962500721156   # log(60000 / 10000) / log(2)
    for i in range(10):
        states.connecting("1001", now)
        states.disconnected("1001", now)
        expected = round(2 ** min(i, exp_max) * 10_000)
        delay = states.connection_delay("1001", now)
        assert abs(delay - expected) <= 0.2 * expected
        assert delay <= 60_000
        now += delay + 1


def test_max_reconnect_backoff():
    """ClusterConnectionStatesTest.testMaxReconnectBackoff: a hundred failures never back off
    beyond reconnect.backoff.max.ms; canConnect is false until the backoff is over."""
    states = _states(10_000, 60_000)
    now = 0
    states.connecting("1001", now)
    now += 1000
    states.disconnected("1001", now)
    for _ in range(100):
        backoff = states.connection_delay("1001", now)
        assert backoff <= 60_000
        assert not states.can_connect("1001", now)
        assert states.is_blacked_out("1001", now)
        now += backoff + 1
        assert states.can_connect("1001", now)
        states.connecting("1001", now)
        assert states.connection_delay("1001", now) == -1   # a connect under way
        now += 10
        states.disconnected("1001", now)


def test_connection_delay_with_no_exponential_backoff():
    """NetworkClientTest.testConnectionDelayDisconnectedWithNoExponentialBackoff: with
    reconnect.backoff.ms = reconnect.backoff.max.ms the backoff is that value, no jitter
    (ExponentialBackoff's expMax is 0), however many connects failed; a READY connection
    forgets it (resetReconnectBackoff)."""
    states = _states(50, 50)
    for _ in range(5):
        states.connecting(1, 0)
        states.disconnected(1, 0)
        assert states.connection_delay(1, 0) == 50
    states.ready(1)
    assert states.connection_delay(1, 0) == 0 and states.can_connect(1, 0)


def _restarted_leader(seed: int = 1):
    """A 4.1 cluster whose partition leader, broker 1, restarts at once: the controller still
    names it leader (its session lives) while the new process is STARTING."""
    c = Cluster(brokers=3, seed=seed, kafka_version="4.1")
    assert c.run_until(lambda cl: cl.kraft.ready(), 30000)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(2000)
    return c


def test_producer_connect_to_a_starting_broker_fails_without_sending_or_using_an_attempt():
    """NetworkClientTest.testConnectionDelayDisconnected, for the producer: the connect to the
    STARTING leader is refused a round trip later (trace ``connect_failed``), the node is
    blacked out 50 ms * 2^n (+-20 %, at most 1000 ms) and the batches wait in the accumulator:
    no ProduceRequest leaves for broker 1 while it does not listen, no attempt is used and no
    error is recorded (Sender.sendProducerData: ``client.ready`` is false). Before, the
    request went on the wire and the peer's reset failed it with NETWORK_EXCEPTION."""
    c = _restarted_leader()
    p = c.producer("p", acks="all", linger_ms=0)
    assert p.send("t", "before", partition=0) and p.flush()
    t0 = c.now
    c.restart(1)
    results = [p.send("t", f"v{i}", partition=0) for i in range(5)]
    assert c.run_until(lambda cl: p.pending() == 0, 60000)
    assert all(r.status == "acked" and r.errors == [] and r.attempts == 1 for r in results)
    refused = [r for r in c.trace.rows if r[0] >= t0 and r[1] == "connect_failed"
               and r[2] == "p"]
    assert len(refused) >= 4
    for n, row in enumerate(refused):
        dst, backoff, reason = row[5]
        assert (dst, reason) == (1, "listener not open yet")
        base = 50 * 2 ** min(n, 4.321928094887363)   # log2(1000 / 50)
        assert 0.8 * base <= backoff <= min(1.2 * base, 1000), (n, backoff)
    # the next connect waits out the backoff: the refusals are at least that far apart
    for prev, nxt in zip(refused, refused[1:], strict=False):
        assert nxt[0] - prev[0] >= prev[5][1]
    assert refused[0][0] - t0 == 2   # SYN and RST: one round trip at 1 ms a way
    # no ProduceRequest left for broker 1 (the controller fenced it after its session and
    # broker 2 took over: the batches went there on their first attempt)
    assert not [r for r in c.trace.rows if r[0] >= t0 and r[1] in ("send", "drop")
                and r[5][0] == "ProduceRequest"
                and (r[1] == "send" and r[5][1] == 1 or r[1] == "drop" and r[2] == 1)]
    assert [r for r in c.trace.rows if r[0] >= t0 and r[1] == "recv" and r[2] == 2
            and r[5][0] == "ProduceRequest"]


def test_consumer_and_follower_fetchers_fail_the_connect_to_a_starting_broker():
    """The consumer's fetch and the followers' fetches to the STARTING leader never leave:
    the consumer's connect is refused and it skips the node while it is blacked out
    (Fetcher.prepareFetchRequests: ``isUnavailable``); a follower's fetcher has no reconnect
    backoff (BrokerBlockingSender: NetworkClient(..., 0, 0, ...), ``close(node)`` after the
    failure), its fetch fails and it backs off replica.fetch.backoff.ms as for any error."""
    c = _restarted_leader()
    p = c.producer("p", acks="all", linger_ms=0)
    assert p.send("t", "before", partition=0) and p.flush()
    consumer = c.consumer("c")
    consumer.assign("t", [0])
    consumer.poll(500)
    mark = len(c.trace.rows)   # (rows of the restart's millisecond before it went to the old one)
    c.restart(1)
    for _ in range(20):
        consumer.poll(100)   # (it polls until its timeout: KafkaConsumer.poll's loop)
        c.run(100)
    rows = c.trace.rows[mark:]
    mine = [r for r in rows if r[1] == "connect_failed" and r[2] == consumer.client_id]
    assert len(mine) >= 3 and all(r[5][0] == 1 for r in mine)
    assert [r[5][1] for r in mine[:4]] == sorted(r[5][1] for r in mine[:4])   # it grows
    for prev, nxt in zip(mine, mine[1:], strict=False):   # no connect while blacked out
        assert nxt[0] - prev[0] >= prev[5][1]
    followers = [r for r in rows if r[1] == "connect_failed" and r[2] in (2, 3)]
    assert {r[2] for r in followers} == {2, 3}
    assert all(r[5][1] == 0 for r in followers)   # no reconnect backoff of their own
    for b in (2, 3):
        times = [r[0] for r in followers if r[2] == b]
        gaps = [y - x for x, y in zip(times, times[1:], strict=False)]
        assert gaps and min(gaps) >= 1000
    # not one Fetch went on the wire to broker 1 while it did not listen
    assert not [r for r in rows if r[1] in ("send", "drop") and r[5][1] == 1
                and r[5][0] == "FetchRequest"]


def test_reconnect_jitter_is_seeded_and_leaves_the_message_latencies_alone():
    """Same seed, same backoffs; the jitter has a generator of its own, so the messages'
    latencies (the engine's draws) are those of a run without the refusals' draws."""
    def backoffs(seed):
        c = _restarted_leader(seed)
        p = c.producer("p", acks="all", linger_ms=0)
        p.send("t", "before", partition=0)
        p.flush()
        c.restart(1)
        p.send("t", "x", partition=0)
        c.run(5000)
        return [r[5][1] for r in c.trace.rows if r[1] == "connect_failed" and r[2] == "p"]
    assert backoffs(1) == backoffs(1)
    assert backoffs(1) != backoffs(2)


def _gate_holds(c) -> bool:
    t = c.transport
    return t.gated == bool(t.controller_queues or t.listeners_closed or t.connection_states)


def test_send_gate_follows_listeners_and_connection_states():
    """``Transport.gated``, the one test a send makes before it goes on the wire, is set
    exactly while a listener is closed or a sender holds connection states: on through the
    restarted leader's STARTING (a producer's refused connects), off again once every
    listener is open and every connection READY."""
    c = _restarted_leader()
    p = c.producer("p", acks="all", linger_ms=0)
    assert not c.transport.gated
    c.restart(1)
    assert c.transport.gated and _gate_holds(c)
    results = [p.send("t", f"v{i}", partition=0) for i in range(3)]
    seen_states = False
    for _ in range(6000):
        c.run(10)
        assert _gate_holds(c)
        seen_states = seen_states or bool(c.transport.connection_states)
        if p.pending() == 0:
            break
    assert seen_states and all(r.status == "acked" for r in results)
    assert c.run_until(lambda cl: not cl.transport.listeners_closed, 60000)
    assert _gate_holds(c)


def test_send_gate_follows_the_controller_channel_queues():
    """ZooKeeper mode: a controller request the network cannot carry waits in its channel's
    queue (ControllerChannelManager); the gate is on while a queue holds one, off once the
    channel has sent them after the heal. (A crashed broker makes the isolated controller
    send: its UpdateMetadata to the others cannot pass.)"""
    c = Cluster(brokers=3, seed=3, kafka_version="3.7", metadata_mode="zookeeper")
    c.create_topic("t", 1, 3)
    c.run(1000)
    ctrl = c.zk_control_plane.controller_broker().id
    others = [b for b in c.brokers if b != ctrl]
    c.partition_network([ctrl], others)
    c.crash(others[0])   # seen once its ZooKeeper session expires
    queued = False
    for _ in range(300):
        c.run(100)
        assert _gate_holds(c)
        queued = queued or bool(c.transport.controller_queues)
    c.heal()
    c.run(5000)
    assert queued and _gate_holds(c) and not c.transport.gated
