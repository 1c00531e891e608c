"""A heartbeat answered STALE_BROKER_EPOCH only backs off (BrokerLifecycleManager's
BrokerHeartbeatResponseEvent, 3.3.0 ... trunk: every error goes to
scheduleNextCommunicationAfterFailure); the broker keeps its registration and its epoch and
heartbeats again. kafkasim used to re-register, which no Kafka version does."""

from __future__ import annotations

from kafkasim.core import errors as E
from kafkasim.core.messages import BrokerHeartbeatResponse
from kafkasim.runtime.cluster import Cluster


def _sends(c: Cluster, broker: int, since: int, name: str) -> list[tuple[int, int]]:
    return [(r[0], r[5][1]) for r in c.trace.rows
            if r[0] >= since and r[1] == "send" and r[2] == broker and r[5][0] == name]


def test_stale_broker_epoch_backs_off_and_keeps_the_registration():
    c = Cluster(brokers=3, seed=3)   # today's Kafka: KRaft
    assert c.run_until(lambda cl: cl.controller_id() >= 0 and not any(
        b.lifecycle.is_fenced for b in cl.brokers.values()), 30000)
    lm = c.brokers[1].lifecycle
    assert c.run_until(lambda cl: lm.inflight is not None, 5000)
    epoch, attempts = lm.broker_epoch, lm.failed_attempts
    corr = lm.inflight[0]
    t = c.now
    lm.on_heartbeat_response(BrokerHeartbeatResponse(E.STALE_BROKER_EPOCH, True, False, False,
                                                     corr))
    assert lm.registered and lm.broker_epoch == epoch
    assert lm.failed_attempts == attempts + 1          # the exponential backoff's count
    c.run(5000)
    assert _sends(c, 1, t, "BrokerRegistrationRequest") == []
    assert _sends(c, 1, t, "BrokerHeartbeatRequest"), "no heartbeat after the backoff"
    assert lm.broker_epoch == epoch and not lm.is_fenced
