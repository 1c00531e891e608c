"""A client's view of its connections: ``ClusterConnectionStates`` and ``ExponentialBackoff``.

Kafka's NetworkClient sends a request only on a READY connection. To a node it has no connection
to it first connects (``NetworkClient.initiateConnect`` -> ``ClusterConnectionStates.connecting``);
a connect the peer refuses (no server socket listening: a KRaft broker that is STARTING or in
RECOVERY has not opened its listeners yet) leaves the node DISCONNECTED
(``ClusterConnectionStates.disconnected``) and *blacked out* for its reconnect backoff: no new
connect before ``lastConnectAttemptMs + reconnectBackoffMs``. The backoff grows with each failed
attempt, ``reconnect.backoff.ms * 2^failures`` up to ``reconnect.backoff.max.ms``, times a jitter
factor drawn uniformly from [0.8, 1.2) (``RECONNECT_BACKOFF_JITTER``; none when the two configs
are equal, ``ExponentialBackoff``'s ``expMax`` being 0); a connection that becomes READY resets it.

kafkasim models the connect only where it fails that way (``kafkasim.runtime.transport``); an
open listener accepts at once, as before. The jitter comes from a seeded stream of its own, so the
message latencies the engine's generator draws are unchanged.
"""

from __future__ import annotations

import math
import random

__all__ = ["CLIENT_RECONNECT_BACKOFF_MAX_MS", "CLIENT_RECONNECT_BACKOFF_MS", "CONNECTING",
           "DISCONNECTED", "ClusterConnectionStates", "ExponentialBackoff", "NodeConnectionState"]

#: CommonClientConfigs: ``reconnect.backoff.ms`` and ``reconnect.backoff.max.ms`` (KIP-144, 0.11)
#: defaults of the producer, the consumer and the admin client
CLIENT_RECONNECT_BACKOFF_MS = 50
CLIENT_RECONNECT_BACKOFF_MAX_MS = 1000
#: ClusterConnectionStates.RECONNECT_BACKOFF_EXP_BASE and RECONNECT_BACKOFF_JITTER
RECONNECT_BACKOFF_EXP_BASE = 2
RECONNECT_BACKOFF_JITTER = 0.2

CONNECTING = "CONNECTING"
DISCONNECTED = "DISCONNECTED"


class ExponentialBackoff:
    """org.apache.kafka.common.utils.ExponentialBackoff: ``initial * multiplier^attempts``
    (the exponent capped where it reaches ``max_ms``) times a factor drawn uniformly from
    [1 - jitter, 1 + jitter), truncated to whole ms and capped at ``max_ms``."""

    __slots__ = ("initial_interval", "multiplier", "max_interval", "jitter", "exp_max")

    def __init__(self, initial_ms: int, multiplier: int, max_ms: int, jitter: float) -> None:
        self.initial_interval = min(max_ms, initial_ms)
        self.multiplier = multiplier
        self.max_interval = max_ms
        self.jitter = jitter
        self.exp_max = math.log(max_ms / max(initial_ms, 1)) / math.log(multiplier) \
            if max_ms > initial_ms else 0.0

    def backoff(self, attempts: int, rng: random.Random) -> int:
        if self.exp_max == 0:
            return self.initial_interval
        term = self.initial_interval * self.multiplier ** min(attempts, self.exp_max)
        factor = rng.uniform(1 - self.jitter, 1 + self.jitter) if self.jitter else 1.0
        return min(int(factor * term), self.max_interval)


class NodeConnectionState:
    """ClusterConnectionStates.NodeConnectionState: the fields the reconnect backoff reads."""

    __slots__ = ("state", "last_connect_attempt_ms", "failed_attempts", "reconnect_backoff_ms")

    def __init__(self, state: str, now: int, reconnect_backoff_ms: int) -> None:
        self.state = state
        self.last_connect_attempt_ms = now
        self.failed_attempts = 0
        self.reconnect_backoff_ms = reconnect_backoff_ms


class ClusterConnectionStates:
    """One client's connection states, by node. A node without an entry is connected (or
    connects at once); an entry exists from a connect attempt that had to wait until the
    connection is READY again (``ready`` forgets it)."""

    __slots__ = ("node_state", "reconnect_backoff", "rng")

    def __init__(self, reconnect_backoff_ms: int, reconnect_backoff_max_ms: int,
                 rng: random.Random) -> None:
        self.node_state: dict = {}
        self.reconnect_backoff = ExponentialBackoff(reconnect_backoff_ms,
                                                    RECONNECT_BACKOFF_EXP_BASE,
                                                    reconnect_backoff_max_ms,
                                                    RECONNECT_BACKOFF_JITTER)
        self.rng = rng

    def can_connect(self, node, now: int) -> bool:
        st = self.node_state.get(node)
        return st is None or st.state == DISCONNECTED and \
            now - st.last_connect_attempt_ms >= st.reconnect_backoff_ms

    def is_blacked_out(self, node, now: int) -> bool:
        st = self.node_state.get(node)
        return st is not None and st.state == DISCONNECTED and \
            now - st.last_connect_attempt_ms < st.reconnect_backoff_ms

    def is_connecting(self, node) -> bool:
        st = self.node_state.get(node)
        return st is not None and st.state == CONNECTING

    def connection_delay(self, node, now: int) -> int:
        """How long until a connect to ``node`` may start (0: now); -1 while one is under way
        (its outcome wakes the client)."""
        st = self.node_state.get(node)
        if st is None:
            return 0
        if st.state == CONNECTING:
            return -1
        return max(st.reconnect_backoff_ms - (now - st.last_connect_attempt_ms), 0)

    def connecting(self, node, now: int) -> None:
        st = self.node_state.get(node)
        if st is None:
            self.node_state[node] = NodeConnectionState(
                CONNECTING, now, self.reconnect_backoff.backoff(0, self.rng))
        else:
            st.state = CONNECTING
            st.last_connect_attempt_ms = now

    def disconnected(self, node, now: int) -> int:
        """The connect failed: DISCONNECTED, blacked out for the next backoff (returned)."""
        st = self.node_state[node]
        st.last_connect_attempt_ms = now
        # updateReconnectBackoff: backoff(failedAttempts), then failedAttempts++
        st.reconnect_backoff_ms = self.reconnect_backoff.backoff(st.failed_attempts, self.rng)
        st.failed_attempts += 1
        st.state = DISCONNECTED
        return st.reconnect_backoff_ms

    def ready(self, node) -> None:
        """The connection is READY: resetReconnectBackoff (the entry is forgotten)."""
        self.node_state.pop(node, None)

    remove = ready   # NetworkClient.close(node): connectionStates.remove
