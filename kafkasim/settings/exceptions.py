"""The errors the cluster façade raises, in a module of their own so that the clients, the
workload and the read views can raise them without importing ``kafkasim.runtime.cluster`` (no import
cycles). ``kafkasim.runtime.cluster`` re-exports them."""

from __future__ import annotations


class ClusterError(ValueError):
    """A request the cluster cannot satisfy (unknown topic, impossible replication factor...)."""


class UnexpectedKeywordError(ClusterError, TypeError):
    """A façade method was called with a keyword it does not take: the message names the
    method, its keywords and the closest one (``kafkasim.runtime.validation.keyword_hints``).
    A ``TypeError`` as Python's own would be, and the façade's ``ClusterError``."""


class ConditionTimeout(ClusterError, TimeoutError):
    """``run_until(..., raise_on_timeout=True)``: the condition did not hold in time."""


class BrokerStartupError(ClusterError):
    """KafkaServer.startup failed: the broker process shut down and exited (it stays stopped).
    ``retry_at_ms`` is when the ZooKeeper session holding its registration expires at the latest
    (-1 if unknown): a start after that succeeds."""

    def __init__(self, message: str, retry_at_ms: int = -1) -> None:
        super().__init__(message)
        self.retry_at_ms = retry_at_ms
