"""A producer and a leader whose process is gone.

The close of the dead broker's connections reaches the producer one link latency after the
crash (NetworkClient.processDisconnection): requests in flight fail NETWORK_EXCEPTION, and the
producer asks for new metadata (DefaultMetadataUpdater.handleServerDisconnect). From then on
it has no connection to that broker: a batch for it waits in the accumulator while each
connect is refused ("Connection refused", the reconnect backoff growing 50 ms to 1 s), and
no attempt is used, until the metadata names a new leader. Before 2.1 a batch that waits
longer than request.timeout.ms fails with a TimeoutException (KIP-19); from 2.1 the bound is
delivery.timeout.ms (KIP-91); the 0.8.2 producer has neither (KAFKA-1788).
"""

from __future__ import annotations

import pytest

from kafkasim.runtime.cluster import Cluster


def _one_record_acked(version: str, rf: int = 3, **producer):
    """A cluster whose producer has had record ``a`` acknowledged."""
    c = Cluster(3, seed=1, kafka_version=version)
    c.create_topic("t", 1, rf)
    p = c.producer(acks="all", **producer)
    p.send("t", "a", partition=0)
    c.run(1000)
    return c, p


def _crash_the_leader(version: str, rf: int = 3, **producer):
    """One record acknowledged, then the leader crashes; 2 s later (the close arrived long
    ago) the producer sends ``b``."""
    c, p = _one_record_acked(version, rf, **producer)
    dead = c.leader("t", 0)
    c.crash(dead)
    crash_ms = c.now
    c.run(2000)
    return c, p, dead, crash_ms


@pytest.mark.parametrize("version", ["2.0", "3.7", "4.3"])
def test_a_batch_for_a_dead_leader_waits_for_the_new_one_without_an_attempt(version):
    c, p, dead, _ = _crash_the_leader(version)
    sent_ms = c.now
    f = p.send("t", "b", partition=0)
    c.run(40_000)
    assert f.status == "acked" and c.leader("t", 0) != dead
    # one send, to the new leader: the refused connects used no attempt and no retry
    assert (f.attempts, f.errors) == (1, [])
    refused = [r for r in c.trace.where("connect_failed") if r[0] >= sent_ms]
    assert refused and all(r[2] == p.client_id and r[5][0] == dead for r in refused)
    assert all(r[5][2] == "connection refused" for r in refused)
    backoffs = [r[5][1] for r in refused]
    assert max(backoffs) <= 1000 * 1.2 and backoffs[-1] > backoffs[0]   # 50 ms growing to 1 s


def test_the_close_makes_an_idle_producer_ask_for_metadata():
    c, p, dead, crash_ms = _crash_the_leader("3.7")
    asks = [r for r in c.trace.rows if r[1] == "send" and r[2] == p.client_id
            and r[5][0] == "MetadataRequest" and r[0] > crash_ms]
    assert asks and asks[0][0] == crash_ms + c.transport.network.latency_ms
    assert not [r for r in c.trace.rows if r[1] == "send" and r[2] == p.client_id
                and r[5][0] == "ProduceRequest" and r[0] > crash_ms]


def test_a_request_in_flight_at_the_crash_still_fails_with_the_connection():
    # the request went out on the open connection; the reset fails it (NETWORK_EXCEPTION)
    c, p = _one_record_acked("3.7")
    dead = c.leader("t", 0)
    f = p.send("t", "b", partition=0)
    c.run(1)    # on the wire
    c.crash(dead)
    c.run(40_000)
    assert f.status == "acked" and f.errors[0] == "NETWORK_EXCEPTION" and f.attempts >= 2


@pytest.mark.parametrize("version", ["0.9.0", "0.10.2", "2.0"])
def test_before_2_1_a_batch_waiting_longer_than_request_timeout_fails(version):
    # RF 1: no other replica can lead; the batch waits, then expires (TimeoutException)
    c, p, _dead, _ = _crash_the_leader(version, rf=1)
    sent_ms = c.now
    f = p.send("t", "b", partition=0)
    c.run(60_000)
    assert (f.status, f.error, f.attempts) == ("failed", "TimeoutException", 0)
    timeout = p.config["request.timeout.ms"]
    assert timeout < f.done_ms - sent_ms <= timeout + 1000   # at the sender's next wake-up


def test_from_2_1_the_bound_is_delivery_timeout():
    c, p, _dead, _ = _crash_the_leader("2.1", rf=1)
    sent_ms = c.now
    f = p.send("t", "b", partition=0)
    c.run(200_000)
    assert (f.status, f.error, f.attempts) == ("failed", "TimeoutException", 0)
    assert f.done_ms - sent_ms == p.config["delivery.timeout.ms"]


def test_the_0_8_2_producer_keeps_the_batch():
    # KAFKA-1788: no request timeout, no delivery timeout: it waits for the leader
    c, p, dead, _ = _crash_the_leader("0.8.2", rf=1)
    f = p.send("t", "b", partition=0)
    c.run(200_000)
    assert (f.status, f.attempts) == ("pending", 0)
    c.start(dead)
    c.run(30_000)
    assert f.status == "acked" and f.attempts == 1


def test_a_restarted_broker_is_connected_to_again():
    c, p, dead, _ = _crash_the_leader("3.7", rf=1)
    f = p.send("t", "b", partition=0)
    c.run(5_000)
    assert f.status == "pending" and (p.client_id, dead) in c.transport.closed_by_peer
    c.start(dead, retry=True)   # once the old process's ZooKeeper session has expired
    c.run_until(lambda cl: cl.brokers[dead].state == "running", 30_000)
    assert c.transport.closed_by_peer == set()
    c.run(30_000)
    assert f.status == "acked" and f.attempts == 1 and f.errors == []


def test_a_consumer_refreshes_its_metadata_after_the_close_before_fetching():
    # DefaultMetadataUpdater.handleServerDisconnect: the close asks for new metadata, so the
    # next poll asks for it instead of trying the dead leader first
    c, _p = _one_record_acked("3.7")
    cons = c.consumer(auto_offset_reset="earliest")
    cons.assign("t")
    assert [r.value for r in cons.poll(1000)] == ["a"]
    dead = c.leader("t", 0)
    c.crash(dead)
    c.run(2000)
    polled_ms = c.now
    cons.poll(500)
    sent = [(r[5][0], r[5][1]) for r in c.trace.rows
            if r[1] == "send" and r[2] == cons.client_id and r[0] >= polled_ms]
    assert sent and sent[0][0] == "MetadataRequest" and sent[0][1] != dead
    assert ("FetchRequest", dead) not in sent
