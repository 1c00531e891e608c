"""The consumer's requests on the wire: Kafka's ConsumerNetworkClient (over NetworkClient).

It numbers and sends the consumer's requests and remembers which are unanswered. Two lives:

- Metadata, ListOffsets, OffsetsForLeaderEpoch and OffsetCommit requests are awaited where they
  are sent (``await_requests``: kafkasim runs the simulation until they are answered, and gives
  up on what is still unanswered when its timeout passes).
- Fetch requests outlive the poll that sent them, as in Kafka (Fetcher's
  nodesWithPendingFetchRequests): at most one per node at a time; an answer that arrives
  between two polls waits in the fetch buffer for the next one (``FetchCollector``); a fetch
  unanswered after ``request.timeout.ms`` is given up (NetworkClient.handleTimedOutRequests).

``poll`` is ConsumerNetworkClient.poll(timer, pollCondition): one NetworkClient.poll, which
returns at the first answer or disconnect, or when its timeout passes.
"""

from __future__ import annotations

#: KafkaConsumer's request.timeout.ms where kafkasim's consumer config has no such key
#: (ConsumerConfig @2.0.0+: 30000, KIP-266)
DEFAULT_REQUEST_TIMEOUT_MS = 30000

FETCH = "fetch"


class ConsumerNetworkClient:
    """One consumer's requests: ``pending`` (correlation id -> kind), ``sent_to`` (correlation
    id -> (broker, request)), the request-timeout deadline of each fetch in flight, and
    ``wakeups``: how many answers and disconnects it has taken (each ends a ``poll``)."""

    def __init__(self, cluster, client_id: str, request_timeout_ms: int) -> None:
        self.cluster = cluster
        self.client_id = client_id
        self.request_timeout_ms = request_timeout_ms
        self.correlation = 0
        self.pending: dict[int, str] = {}
        self.sent_to: dict[int, tuple] = {}
        self.fetch_deadlines: dict[int, int] = {}
        self.wakeups = 0

    def next_corr(self) -> int:
        self.correlation += 1
        return self.correlation

    def send(self, broker: int, msg, kind: str) -> int:
        """ConsumerNetworkClient.send: ``msg`` goes to ``broker``, awaited as ``kind``."""
        corr = msg.correlation_id
        self.pending[corr] = kind
        self.sent_to[corr] = (broker, msg)
        if kind == FETCH:
            self.fetch_deadlines[corr] = self.cluster.now + self.request_timeout_ms
        self.cluster.transport.send(self.client_id, broker, msg)
        return corr

    def complete(self, corr: int) -> tuple[str | None, object]:
        """The answer (or failure) of request ``corr`` came: its kind (None: not awaited any
        more) and the request."""
        kind = self.pending.pop(corr, None)
        request = self.sent_to.get(corr, (None, None))[1]   # (``forget`` drops it)
        self.fetch_deadlines.pop(corr, None)
        if kind is not None:
            self.wakeups += 1
        return kind, request

    def forget(self, corr: int) -> None:
        """Request ``corr`` is dealt with: its record goes."""
        self.sent_to.pop(corr, None)

    def _awaiting(self) -> bool:
        return any(kind != FETCH for kind in self.pending.values())

    def await_requests(self, timeout_ms: int) -> None:
        """Run until every request but the fetches is answered, or ``timeout_ms`` passes;
        what is unanswered then is given up (its answer will be ignored)."""
        self.cluster.run_until(lambda _c: not self._awaiting(), timeout_ms)
        for corr in [c for c, kind in self.pending.items() if kind != FETCH]:
            del self.pending[corr]
        for corr in [c for c in self.sent_to if c not in self.pending]:
            del self.sent_to[corr]

    def _fetches(self) -> list[int]:
        """The correlation ids of the fetches unanswered, oldest first."""
        return [corr for corr, kind in self.pending.items() if kind == FETCH]

    def has_pending_fetch_request(self, node: int) -> bool:
        """Fetcher.nodesWithPendingFetchRequests: a fetch to ``node`` is unanswered."""
        return any(self.sent_to[corr][0] == node for corr in self._fetches()
                   if corr in self.sent_to)

    def in_flight_fetches(self) -> int:
        return len(self._fetches())

    def expire_fetches(self) -> None:
        """NetworkClient.handleTimedOutRequests: a fetch unanswered after request.timeout.ms is
        given up (its node may be fetched from again)."""
        now = self.cluster.now
        for corr in list(self.fetch_deadlines):
            if corr not in self.pending or self.fetch_deadlines[corr] <= now:
                self.complete(corr)
                self.forget(corr)

    def next_fetch_deadline(self) -> int | None:
        return min((self.fetch_deadlines[c] for c in self._fetches() if c in self.fetch_deadlines),
                   default=None)

    def poll(self, timeout_ms: int) -> None:
        """ConsumerNetworkClient.poll: wait for the next answer or disconnect, at most
        ``timeout_ms`` (bounded by the first fetch's request timeout)."""
        deadline = self.next_fetch_deadline()
        if deadline is not None:
            timeout_ms = max(0, min(timeout_ms, deadline - self.cluster.now))
        wakeups = self.wakeups
        self.cluster.run_until(lambda _c: self.wakeups != wakeups, timeout_ms)
        self.expire_fetches()

    def requests_to(self, node: int) -> list:
        """The unanswered requests sent to ``node``."""
        return [msg for corr, (dst, msg) in self.sent_to.items()
                if dst == node and corr in self.pending]
