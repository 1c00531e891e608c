"""A process that dies closes its connections: what its peers see, and when.

Kafka's clients learn that a broker died only from its connections: the dead process's kernel
closes its sockets (FIN/RST), which reach the peer one network latency later, behind every byte
the broker wrote before it died (TCP delivers in order). The peer's Selector completes the
receives still buffered on a closing channel before it reports the disconnect (Selector.close,
CloseMode.GRACEFUL, closingChannels; SelectorTest.testGracefulClose), and NetworkClient.poll
handles completed receives before disconnections (handleCompletedReceives, then
handleDisconnections -> processDisconnection -> cancelInFlightRequests), so a response sent before
the crash completes its request, and only the requests still unanswered fail as disconnected
(Sender: NETWORK_EXCEPTION, retried; SenderTest covers the disconnected response).
"""

from __future__ import annotations

from kafkasim.core import errors as E
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

ZK = "3.7"
CRASH_MS = 2000
LATENCY_MS = 50


def _sends(c: Cluster, name: str, src, dst, before: int | None = None) -> list[tuple]:
    """(time, msg_id) of every ``name`` message sent src -> dst (before ``before``)."""
    return [(r[0], r[5][2]) for r in c.trace.where("send")
            if r[2] == src and r[5][0] == name and r[5][1] == dst
            and (before is None or r[0] < before)]


def _recv_time(c: Cluster, msg_id: int) -> int | None:
    got = [r[0] for r in c.trace.where("recv") if r[5][2] == msg_id]
    return got[0] if got else None


def _produce_leader_crash(jitter_ms: int = 1, **producer):
    """The reported reproduction: Kafka 3.7, 50 ms latency, acks=1 at 20 records/s to a
    partition led by broker 1, which is killed at t = 2000 ms."""
    c = Cluster(3, kafka_version=ZK, latency_ms=LATENCY_MS, jitter_ms=jitter_ms, seed=1)
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.run(100)
    p = c.producer(acks="1", **producer)
    w = RateWorkload(c, p, "t", rate=20, duration_ms=6000, partition=0)
    c.run_to(CRASH_MS)
    c.crash(1)
    c.run(3000)
    return c, p, w


def test_response_sent_before_the_leader_died_acknowledges_its_records():
    """The leader's ProduceResponse written ~1950 ms reaches the producer ~2002 ms, after the
    crash but before the connection's FIN: the producer completes the batch with the response's
    base offset (NetworkClient.handleCompletedReceives precedes handleDisconnections)."""
    c, p, _w = _produce_leader_crash()
    late = [(t, mid) for t, mid in _sends(c, "ProduceResponse", 1, p.client_id, CRASH_MS)
            if _recv_time(c, mid) is not None and _recv_time(c, mid) > CRASH_MS]
    assert late, "the reproduction needs a response in flight at the crash"
    leader_appends = [r[5] for r in c.trace.where("append") if r[2] == 1 and r[0] < CRASH_MS]
    for _sent, mid in late:
        arrived = _recv_time(c, mid)
        acked = [r for r in c.trace.where("produce_result")
                 if r[0] == arrived and r[5][1] == "acked"]
        assert acked, f"response {mid} delivered at {arrived} acknowledged nothing"
        for row in acked:
            rid, _status, offset = row[5]
            assert p.results[rid].acked and p.results[rid].offset == offset
            assert p.results[rid].errors == [], "acknowledged on its first attempt"
            # the offset is the one broker 1 appended the record at before it died
            assert any(first <= offset <= last for first, last, _epoch in leader_appends)


def test_request_in_flight_to_the_dead_leader_fails_one_latency_after_the_crash():
    """The requests still unanswered fail as disconnected when the FIN arrives, crash +
    latency, never at the crash itself (retries=0 makes the failure final and visible)."""
    c, p, _w = _produce_leader_crash(jitter_ms=0, retries=0)
    failed = [r for r in p.results.values() if r.status == "failed"]
    assert failed
    fin = CRASH_MS + LATENCY_MS
    first = [r for r in failed if r.errors == [E.NETWORK_EXCEPTION] and r.done_ms <= fin]
    assert first, "requests in flight at the crash fail with the disconnect"
    assert all(r.done_ms == fin for r in first)
    assert all(r.done_ms >= fin for r in failed)


def test_after_the_disconnect_no_request_goes_to_the_dead_broker():
    """After the disconnect the metadata still names broker 1 leader (until the controller
    moves leadership), but the producer has no connection to it: NetworkClient.ready starts a
    connect, which the dead host refuses a round trip later ("Connection refused", the node
    blacked out for the reconnect backoff), so no ProduceRequest is sent and no attempt is
    used; the retried batches wait in the accumulator."""
    c, p, _w = _produce_leader_crash(jitter_ms=0, retries=1, retry_backoff_ms=100)
    fin = CRASH_MS + LATENCY_MS
    assert not [t for t, _mid in _sends(c, "ProduceRequest", p.client_id, 1) if t > fin]
    refused = [r for r in c.trace.where("connect_failed") if r[2] == p.client_id]
    assert refused and all(r[5][0] == 1 and r[5][2] == "connection refused" for r in refused)
    assert refused[0][0] >= fin + 2 * LATENCY_MS   # the SYN's round trip
    assert not [r for r in p.results.values()
                if r.errors == [E.NETWORK_EXCEPTION, E.NETWORK_EXCEPTION]]
    waiting = [r for r in p.results.values() if r.errors == [E.NETWORK_EXCEPTION]]
    assert waiting and all(r.status == "pending" for r in waiting)


def test_follower_fetchers_see_the_leader_die_one_latency_later():
    """ReplicaFetcherThread's Fetch in flight to the dead leader fails (NETWORK_EXCEPTION) when
    the connection's close reaches the follower, behind the FetchResponses sent before."""
    c = Cluster(3, kafka_version=ZK, latency_ms=LATENCY_MS, jitter_ms=0, seed=3)
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.run(CRASH_MS - c.now)
    c.crash(1)
    c.run(500)
    for follower in (2, 3):
        last = max([_recv_time(c, mid) or 0
                    for _t, mid in _sends(c, "FetchResponse", 1, follower, CRASH_MS)])
        failed = [r[0] for r in c.trace.where("fetch_failed") if r[2] == follower]
        assert failed and failed[0] == max(CRASH_MS + LATENCY_MS, last)


def test_extra_latency_delays_the_disconnect_as_it_delays_messages():
    """The close travels the link like any segment: a slow link (Cluster.slow) delays it."""
    c = Cluster(3, kafka_version=ZK, latency_ms=LATENCY_MS, jitter_ms=0, seed=3)
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.slow(3, network_ms=200)
    c.run(CRASH_MS - c.now)
    c.crash(1)
    c.run(1000)
    failed = {f: [r[0] for r in c.trace.where("fetch_failed") if r[2] == f] for f in (2, 3)}
    assert failed[2][0] == CRASH_MS + LATENCY_MS
    assert failed[3][0] >= CRASH_MS + LATENCY_MS + 200


def test_a_partitioned_peer_never_receives_the_close():
    """A peer the network partition cuts off from the dead broker gets no FIN: nothing arrives
    on that link, so it learns only by its own timeouts."""
    c = Cluster(3, kafka_version=ZK, latency_ms=LATENCY_MS, jitter_ms=0, seed=3)
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.run(CRASH_MS - 10 - c.now)
    c.partition_network([1, 2], [3])
    c.run(10)
    c.crash(1)
    c.run(5 * LATENCY_MS)
    failed = {f: [r[0] for r in c.trace.where("fetch_failed") if r[2] == f] for f in (2, 3)}
    assert failed[2] == [CRASH_MS + LATENCY_MS]
    assert all(t < CRASH_MS for t in failed[3]) or not failed[3]


def test_consumer_fetch_parked_in_the_dead_leader_fails_with_the_disconnect():
    """A consumer's Fetch waiting in the leader's purgatory (fetch.max.wait.ms) dies with the
    process; the consumer sees the connection close one latency later and looks the leader up
    again at once (a MetadataRequest then), instead of waiting out fetch.max.wait.ms. The poll
    itself goes on to its timeout, as KafkaConsumer.poll loops until records come
    (ClassicKafkaConsumer.poll @3.9.0): there are none to read."""
    c = Cluster(3, kafka_version=ZK, latency_ms=LATENCY_MS, jitter_ms=0, seed=3)
    c.create_topic("t", assignment=[[1, 2, 3]])
    c.run(500)
    cn = c.consumer(group="g", auto_offset_reset="earliest", fetch_max_wait_ms=5000)
    cn.assign("t")
    cn.poll(timeout_ms=200)                      # positions known, nothing to read
    crash_at = c.now + 100
    c.at(crash_at, _crash_1)
    start = c.now
    assert cn.poll(timeout_ms=3000) == []
    assert c.brokers[1].state == "stopped"
    assert c.now == start + 3000
    asked = [row[0] for row in c.trace.rows if row[0] >= crash_at and row[1] == "send"
             and row[2] == cn.client_id and row[5][0] == "MetadataRequest"]
    assert asked and asked[0] == crash_at + LATENCY_MS
    # the answers still name leader 1: its ZooKeeper session has not expired yet
    assert cn.leaders[("t", 0)] == 1


def _crash_1(cluster: Cluster) -> None:
    cluster.crash(1)


def test_a_producer_with_no_broker_to_ask_keeps_one_metadata_retry():
    """NetworkClient's metadata updater gives up when leastLoadedNode finds no node and the
    sender's one poll loop tries again after the backoff: however often the sender asks for
    metadata while every broker is down, one retry is pending at a time (the retries once
    piled up, one more chain per sender pass: 13,755 refresh attempts in one 80-s sweep run)."""
    from kafkasim.runtime.clients.producer import Producer

    c = Cluster(brokers=3, seed=3, kafka_version="3.7")
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all")
    p.send("t", "v0")
    c.run(2000)
    for b in sorted(c.brokers):
        c.crash(b)
    for i in range(1, 40):   # each send wakes the sender, which asks for metadata again
        p.send("t", f"v{i}")
        c.run(250)
        retries = [e for e in c.engine.pending_of("client_timer")
                   if e.args[1] is Producer._timer_metadata_timeout and e.args[2] == (-1,)]
        assert len(retries) <= 1, (i, retries)
        assert p.metadata.retry_at_ms >= c.now or not retries
    c.run_to(19000)   # past the old processes' ZooKeeper sessions
    c.start(1)
    c.start(2)
    c.start(3)
    assert p.flush(60000)
    assert p.metadata.retry_at_ms == -1
