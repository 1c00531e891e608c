"""Cancellable request timeouts (TimeoutScheduler.add_timeout / cancel_timeout,
Broker.schedule_timeout, the replica fetcher's request timeout).

A follower's fetcher has one request in flight and waits for it up to replica.socket.timeout.ms
(ReplicaFetcherBlockingSend.sendRequest: NetworkClientUtils.sendAndReceive with the socket
timeout as the request timeout); when it passes, the request fails with a timeout and every
partition backs off replica.fetch.backoff.ms (AbstractFetcherThread.processFetchRequest:
handlePartitionsWithErrors). A broker paused at that moment (a stop-the-world GC) handles the
timeout when the pause ends.
"""

from __future__ import annotations

from clusters import make_cluster

from kafkasim.observe.snapshots import restore, snapshot
from kafkasim.runtime.cluster import Cluster

ZK = "3.7"
SOCKET_TIMEOUT_MS = 5000   # replica.socket.timeout.ms (30000 by default)
BACKOFF_MS = 1000          # replica.fetch.backoff.ms


def _cluster_with_a_lost_fetch(seed: int = 1):
    """Broker 2's next FetchRequest is lost; returns the cluster and the time it was dropped."""
    c = make_cluster(seed=seed, kafka_version=ZK,
                     config={"replica.socket.timeout.ms": SOCKET_TIMEOUT_MS}, topic="t")
    p = c.producer("p", acks="all")
    c.run(100)
    c.transport.drop("FetchRequest", src=2, count=1)
    p.send_many("t", ["a", "b"], partition=0)
    c.run(200)
    drops = [r[0] for r in c.trace.rows if r[1] == "drop" and r[2] == 2]
    assert len(drops) == 1
    return c, drops[0]


def _failures(c: Cluster, broker: int) -> list[tuple[int, str]]:
    return [(r[0], str(r[5])) for r in c.trace.rows if r[1] == "fetch_failed" and r[2] == broker]


def test_a_lost_follower_fetch_fails_after_replica_socket_timeout_ms_and_is_retried():
    c, dropped = _cluster_with_a_lost_fetch()
    c.run(SOCKET_TIMEOUT_MS + BACKOFF_MS + 1000)
    assert _failures(c, 2) == [(dropped + SOCKET_TIMEOUT_MS,
                                "ReplicaFetcherThread-0-1: REQUEST_TIMED_OUT")]
    # the retry after replica.fetch.backoff.ms catches up
    assert c.brokers[2].logs[("t", 0)].log_end_offset == 2
    # answered fetches never time out: no other failure on any broker
    assert _failures(c, 3) == []


def test_a_paused_follower_handles_its_fetch_timeout_once_when_the_pause_ends():
    c, dropped = _cluster_with_a_lost_fetch()
    c.run_to(dropped + SOCKET_TIMEOUT_MS - 100)
    c.pause(2, 400)                       # the timeout falls inside the pause
    c.run(SOCKET_TIMEOUT_MS)
    assert _failures(c, 2) == [(dropped + SOCKET_TIMEOUT_MS + 300,
                                "ReplicaFetcherThread-0-1: REQUEST_TIMED_OUT")]
    assert c.brokers[2].logs[("t", 0)].log_end_offset == 2


def test_a_pending_fetch_timeout_survives_snapshot_and_restore():
    c, dropped = _cluster_with_a_lost_fetch()
    c.run_to(dropped + 1000)
    restored = restore(snapshot(c))
    for cl in (c, restored):
        cl.run(SOCKET_TIMEOUT_MS + BACKOFF_MS)
    assert _failures(restored, 2) == _failures(c, 2) == [
        (dropped + SOCKET_TIMEOUT_MS, "ReplicaFetcherThread-0-1: REQUEST_TIMED_OUT")]
    assert restored.trace.digest() == c.trace.digest()


def test_add_timeout_returns_a_handle_that_cancels_it_and_fires_in_deadline_then_id_order():
    c = Cluster(3, seed=1, kafka_version=ZK)
    ts = c.timeout_scheduler
    fired = []

    def timer(broker, name):
        fired.append((c.now, name))
        if name == "first":               # cancels a timeout due in the same millisecond
            ts.cancel_timeout(later)

    owner = ("broker", 1, c.brokers[1].incarnation)
    start = c.now
    ts.add_timeout(owner, 300, timer, ("first",))
    cancelled = ts.add_timeout(owner, 300, timer, ("cancelled",))
    ts.cancel_timeout(cancelled)
    c.run(100)
    later = ts.add_timeout(owner, 200, timer, ("same deadline, cancelled by first",))
    ts.add_timeout(owner, 200, timer, ("same deadline, added last",))
    ts.cancel_timeout(None)                # no timeout was set (the 0.8.2 producer): a no-op
    c.run(1000)
    assert fired == [(start + 300, "first"), (start + 300, "same deadline, added last")]
    fired.clear()
    ts.cancel_timeout(cancelled)           # cancelling again, or after firing: a no-op
    c.run(1000)
    assert fired == []
    assert all(not fifo for fifo in ts.timeouts[owner][0].values())


def _produce_one_with_a_lost_response(version: str, **producer):
    c = Cluster(3, seed=1, kafka_version=version)
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all", **producer)
    c.run(100)
    c.transport.drop("ProduceResponse", count=1)
    sent = c.now
    p.send_many("t", ["a"], partition=0)
    return c, p, sent


def _produce_requests(c: Cluster, client: str) -> list[int]:
    return [r[0] for r in c.trace.rows
            if r[1] == "send" and r[2] == client and r[5][0] == "ProduceRequest"]


def test_a_lost_produce_response_times_out_after_request_timeout_ms_and_the_batch_is_retried():
    """The producer fails a request unanswered after request.timeout.ms (KIP-19; NetworkClient
    .handleTimedOutRequests -> Sender: a retriable TimeoutException) and retries the batch after
    retry.backoff.ms (100; from 3.7 with KIP-580's 20 % jitter, so 80-120 ms at the first retry);
    idempotence keeps the retry from being written twice."""
    c, p, sent = _produce_one_with_a_lost_response("3.7", request_timeout_ms=1000, retries=3)
    c.run(3000)
    first, retry = _produce_requests(c, "p")
    assert first == sent and sent + 1000 + 80 <= retry <= sent + 1000 + 120, (sent, retry)
    (r,) = p.results.values()
    assert (r.status, r.offset, r.errors) == ("acked", 0, ["REQUEST_TIMED_OUT"])
    assert c.brokers[1].logs[("t", 0)].log_end_offset == 1


def test_the_0_8_2_producer_has_no_request_timeout_so_a_lost_response_is_never_retried():
    """request.timeout.ms arrived with KIP-19 (0.9): the 0.8.2 producer waits for ever."""
    c, p, sent = _produce_one_with_a_lost_response("0.8.2")
    c.run(60000)
    assert _produce_requests(c, "p") == [sent]
    (r,) = p.results.values()
    assert r.status == "pending"


def test_a_restarted_follower_never_sees_its_previous_process_fetch_timeout():
    """A request timeout belongs to the process that sent the request: after a crash the new
    process (a new incarnation) fetches afresh, and the old request's deadline passes silently;
    the new process's own lost fetch times out replica.socket.timeout.ms after it was sent."""
    c, dropped = _cluster_with_a_lost_fetch()
    c.run_to(dropped + 500)
    c.restart(2, clean=True)   # a clean shutdown closes the ZooKeeper session: back at once
    assert c.brokers[2].is_running and c.now < dropped + SOCKET_TIMEOUT_MS
    c.run_to(dropped + SOCKET_TIMEOUT_MS + 500)
    assert _failures(c, 2) == []
    c.transport.drop("FetchRequest", src=2, count=1)
    c.run(1000)
    drops = [r[0] for r in c.trace.rows if r[1] == "drop" and r[2] == 2]
    assert len(drops) == 2
    c.run(SOCKET_TIMEOUT_MS + BACKOFF_MS)
    assert _failures(c, 2) == [(drops[1] + SOCKET_TIMEOUT_MS,
                                "ReplicaFetcherThread-0-1: REQUEST_TIMED_OUT")]


def test_a_batch_waiting_behind_max_in_flight_expires_at_delivery_timeout_ms():
    """KIP-91: a batch still in the accumulator fails with a TimeoutException once it is
    delivery.timeout.ms old (RecordAccumulator.expiredBatches), and the sender wakes for it:
    Sender.sendProducerData bounds its poll timeout by RecordAccumulator.nextExpiryTimeMs, the
    deadline of the oldest batch at the head of a queue. Here ``b`` waits behind
    max.in.flight.requests.per.connection=1 while ``a`` times out (request.timeout.ms) and backs
    off (retry.backoff.ms)."""
    c = Cluster(3, seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all", linger_ms=5, request_timeout_ms=1000,
                   delivery_timeout_ms=1200, retry_backoff_ms=300, retries=1000,
                   max_in_flight_requests_per_connection=1)
    c.run(100)
    c.transport.drop("ProduceResponse", count=10)
    sent = c.now
    a = p.send("t", "a", partition=0)
    c.run(50)
    b = p.send("t", "b", partition=0)
    c.run(3000)
    # a: sent at +5, timed out at +1005 and queued again until its back-off ends at +1305; the
    # sender wakes at its deadline, +1200, and fails it there, never resent
    assert (a.status, a.error, a.attempts, a.errors, a.done_ms - sent) == \
        ("failed", "TimeoutException", 1, ["REQUEST_TIMED_OUT"], 1200)
    # b: queued at +50; the pass at +1200 drained nothing (a, backing off, was the queue's head)
    # and then expired a, so b's own deadline, +1250, is the next wake-up: that pass sends it
    # (ready, a free in-flight slot) and then finds it in flight and 1,200 ms old
    # (Sender.getExpiredInflightBatches runs after the drain): failed at once
    assert (b.status, b.error, b.attempts, b.errors, b.done_ms - sent) == \
        ("failed", "TimeoutException", 1, [], 1250)


def test_a_batch_with_no_broker_to_go_to_fails_at_delivery_timeout_ms():
    """Every broker is down: no leader, no metadata answer, no response will ever move the
    batch. The sender still wakes at its deadline (RecordAccumulator.nextExpiryTimeMs) and fails
    it with a TimeoutException, delivery.timeout.ms after send() created it."""
    for version in ("3.7", "4.1"):
        c = Cluster(3, seed=1, kafka_version=version)
        c.create_topic("t", 1, 3)
        p = c.producer("p", acks="all", delivery_timeout_ms=40_000, request_timeout_ms=30_000)
        c.run(1000)
        for b in list(c.brokers):
            c.crash(b)
        c.run(100)
        created = c.now
        r = p.send("t", "x", partition=0)
        c.run(39_999)
        assert r.status == "pending", version
        c.run(1)
        assert (r.status, r.error, r.done_ms - created) == \
            ("failed", "TimeoutException", 40_000), version
        assert p.pending() == 0


def test_a_sent_batch_past_delivery_timeout_ms_fails_in_flight_and_its_answer_is_ignored():
    """Sender.getExpiredInflightBatches: a batch resent late in its life is still in flight at
    its deadline; it fails there with a TimeoutException. Its request keeps its in-flight slot
    until it completes (here by request.timeout.ms), and that completion changes nothing."""
    c = Cluster(3, seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all", linger_ms=5, request_timeout_ms=1000,
                   delivery_timeout_ms=1200, retry_backoff_ms=100, retries=1000)
    c.run(100)
    c.transport.drop("ProduceResponse", count=10)
    sent = c.now
    a = p.send("t", "a", partition=0)
    c.run(1150)
    # sent at +5, timed out at +1005, resent at +1105 when its back-off ended
    assert (a.status, a.attempts, a.errors) == ("pending", 2, ["REQUEST_TIMED_OUT"])
    assert len(p.in_flight) == 1
    c.run(50)
    assert (a.status, a.error, a.done_ms - sent) == ("failed", "TimeoutException", 1200)
    assert len(p.in_flight) == 1           # the request still holds its slot
    c.run(1000)                            # its request timeout at +2105: nothing to retry
    assert not p.in_flight and not any(p.batches.values())
    assert (a.status, a.error, a.attempts, a.errors, a.done_ms - sent) == \
        ("failed", "TimeoutException", 2, ["REQUEST_TIMED_OUT"], 1200)
    results = [r for r in c.trace.rows if r[1] == "produce_result" and r[2] == "p"]
    assert len(results) == 1               # one outcome per record


def _park_a_produce(**producer):
    """An acks=all produce parked on the leader while both followers are paused (no fetch, so
    no HW move): returns the cluster, the leader and the DelayedProduce's deadline."""
    c = Cluster(3, seed=1, kafka_version=ZK)
    c.create_topic("t", 1, 3)
    p = c.producer("p", acks="all", request_timeout_ms=2000, retries=0, **producer)
    c.run(100)
    leader = c.leader("t", 0)
    for b in c.brokers:
        if b != leader:
            c.pause(b, 10000)
    p.send_many("t", ["a"], partition=0)
    c.run(50)
    (dp,) = c.brokers[leader].replica_manager.delayed_produce.values()
    return c, leader, dp.deadline_ms


def _timed_out(c: Cluster) -> list[tuple[int, int]]:
    return [(r[0], r[2]) for r in c.trace.rows if r[1] == "produce_timed_out"]


def test_a_parked_produce_times_out_at_its_deadline_also_after_snapshot_and_restore():
    """DelayedProduce expires timeout_ms after it was parked (DelayedOperationPurgatory's timer:
    DelayedProduce.onExpiration answers REQUEST_TIMED_OUT). The parked operation is its own
    timeout, so a restored copy fires it at the same time and answers the same way."""
    c, leader, deadline = _park_a_produce()
    restored = restore(snapshot(c))
    for cl in (c, restored):
        cl.run(3000)
        assert _timed_out(cl) == [(deadline, leader)]
        assert not cl.brokers[leader].replica_manager.delayed_produce
    assert restored.trace.digest() == c.trace.digest()


def test_a_paused_leader_handles_its_produce_timeout_once_when_the_pause_ends():
    c, leader, deadline = _park_a_produce()
    c.run_to(deadline - 100)
    c.pause(leader, 400)                  # the deadline falls inside the pause
    c.run(3000)
    assert _timed_out(c) == [(deadline + 300, leader)]


def test_a_restarted_leader_never_sees_its_previous_process_produce_timeout():
    """The purgatory dies with the process: the old DelayedProduce's deadline passes silently."""
    c, leader, deadline = _park_a_produce()
    c.crash(leader)
    c.restart(leader)
    assert not c.brokers[leader].replica_manager.delayed_produce
    c.run(3000)
    assert _timed_out(c) == []
