"""A disconnect does not make the producer forget a partition's leader.

Sender.handleProduceResponse completes every batch of a disconnected request with
NETWORK_EXCEPTION (retried, or failed when out of retries); NetworkException is an
InvalidMetadataException, so completeBatch calls metadata.requestUpdate, and
NetworkClient.processDisconnection -> DefaultMetadataUpdater.handleServerDisconnect requests an
update too (Sender.java:593-598 and :705-723, NetworkClient.java:1168-1190, Metadata.java:200
@3.9.0-rc3; the same at 0.8.2.2, NetworkClient.handleDisconnections, and at 4.3.0). Neither
touches the cached cluster: the partition's leader stays the disconnected broker until
metadata naming another arrives, so the retry goes to it again (a new connect; refused while
its process is gone). Before, kafkasim set the leader of each batch of a disconnected request
to unknown (-1).
"""

from __future__ import annotations

import pytest

from tests.test_producer_dead_leader import _one_record_acked
from tests.test_producer_internals_kafka import TP0, SenderHarness


def _disconnect(h: SenderHarness, corr: int) -> None:
    """client.disconnect(node): the held request ``corr`` fails as disconnected."""
    msg = next(env.msg for env in h.c.transport.network.held
               if env.msg.correlation_id == corr)
    h.p.on_disconnect(1, msg)


def test_retries_resends_to_the_same_leader_before_any_new_metadata():
    """SenderTest.testRetries@3.9.0-rc3 (its first half: "receive error", "reconnect",
    "resend"): after the disconnect the batch is back in the accumulator, its partition's
    leader still broker 1, and once the retry backoff has passed it is sent to broker 1 again,
    while the metadata update the disconnect asked for is still unanswered (held here)."""
    h = SenderHarness(retries=1, enable_idempotence=False)
    p = h.p
    h.c.hold(type="MetadataRequest")
    r = h.append()
    h.run_once()
    ((corr, _),) = h.requests()
    _disconnect(h, corr)
    assert h.requests() == [] and r.errors == ["NETWORK_EXCEPTION"]
    assert p.leaders[TP0] == 1
    assert p.metadata.in_flight >= 0   # the update the disconnect asked for, unanswered
    h.run_once(100)   # retry.backoff.ms 50
    ((corr2, batches),) = h.requests()
    assert corr2 != corr and list(batches) == [TP0] and p.in_flight[corr2][2] == 1
    h.respond(corr2, (TP0, "NONE", 0))
    assert r.status == "acked" and r.attempts == 2


@pytest.mark.parametrize("version", ["0.8.2", "2.0", "3.7", "4.3"])
def test_the_leader_of_a_dead_broker_stays_until_the_metadata_names_another(version):
    """The whole path on a cluster: the leader's process dies with a batch in flight; when the
    close reaches the producer (one link later) the batch fails NETWORK_EXCEPTION and
    the producer asks for metadata, its leader still the dead broker; the first metadata
    answers name it too (the controller has not noticed yet), and the batch waits on refused
    connects, its leader unchanged, until the new leader is elected."""
    c, p = _one_record_acked(version, retries=5, linger_ms=0)   # (4.x: 5 ms default)
    dead = c.leader("t", 0)
    f = p.send("t", "b", partition=0)
    c.run(1)
    c.crash(dead)
    for _ in range(20):   # until the close arrives (one link later)
        c.run(1)
        if f.errors:
            break
    assert f.errors == ["NETWORK_EXCEPTION"] and f.status == "pending"
    assert p.leaders[("t", 0)] == dead
    assert p.metadata.in_flight >= 0
    c.run(40_000)
    assert f.status == "acked" and p.leaders[("t", 0)] == c.leader("t", 0) != dead
