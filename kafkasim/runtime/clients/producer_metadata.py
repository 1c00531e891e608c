"""The producer's metadata updates and backoffs: Kafka's ``ProducerMetadata``, ``RetryBackoff``.

``ProducerMetadata`` is ``Metadata.timeToAllowUpdate``'s state; ``RetryBackoff`` is KIP-580's
backoff (``retry.backoff.ms`` doubled per attempt up to ``retry.backoff.max.ms``, with jitter,
from 3.7).
"""

from __future__ import annotations

import random
from typing import NamedTuple

from kafkasim.core.errors import INVALID_TOPIC_EXCEPTION
from kafkasim.runtime.clients.client_metadata import NEW, STALE, update_latest_metadata
from kafkasim.runtime.network_client import ExponentialBackoff

#: ProducerConfig metadata.max.age.ms's default
METADATA_MAX_AGE_MS = 300_000
#: CommonClientConfigs.RETRY_BACKOFF_EXP_BASE and RETRY_BACKOFF_JITTER (KIP-580, 3.7)
RETRY_BACKOFF_EXP_BASE = 2
RETRY_BACKOFF_JITTER = 0.2


class ProducerMetadata:
    """The producer's metadata update state (ProducerMetadata, and NetworkClient's
    DefaultMetadataUpdater that asks for it): the MetadataRequest in flight (its correlation
    id; -1 when none); when the last update ended, by a response or a failure
    (Metadata.lastRefreshMs; -1 before the first); and the time of the single retry the sender
    waits for (-1 when none is pending). The sender's poll loop has one timeout, so a refresh
    asked for again while a retry is pending adds no second one.

    Metadata.timeToAllowUpdate: no MetadataRequest within the refresh backoff of the last
    update's end, so a partition without a leader is asked about at most once per backoff, not
    once per round trip. Before 3.7 the backoff is ``retry.backoff.ms``. From 3.7 (KIP-580) it
    grows as a batch's retry backoff does (``RetryBackoff``), by the larger of two counts: the
    updates that failed since the last success (``attempts``), and the responses in a row that
    brought no new or newer leader epoch (``equivalent_responses``, Metadata
    .equivalentResponseCount: a refresh asked for because of stale metadata that brings
    nothing new backs off further). ``last_seen_epochs`` is Metadata.lastSeenLeaderEpochs;
    ``invalid_topics`` the last answer's Cluster.invalidTopics.

    ``metadata_expire_ms`` (``metadata.max.age.ms``, Metadata.metadataExpireMs): an update is
    due this long after the last successful one even if nothing asked for it
    (Metadata.timeToNextUpdate's ``timeToExpire``); ``expiry_wakeup_ms`` is when the sender
    wakes for it (-1: no wake-up set)."""

    __slots__ = ("in_flight", "last_refresh_ms", "retry_at_ms", "attempts",
                 "equivalent_responses", "last_successful_refresh_ms", "last_seen_epochs",
                 "metadata_expire_ms", "expiry_wakeup_ms", "invalid_topics")

    def __init__(self, metadata_expire_ms: int = METADATA_MAX_AGE_MS) -> None:
        self.metadata_expire_ms = metadata_expire_ms
        self.expiry_wakeup_ms = -1
        self.in_flight = -1
        self.last_refresh_ms = -1
        self.retry_at_ms = -1
        self.attempts = 0
        self.equivalent_responses = 0
        self.last_successful_refresh_ms = -1
        self.last_seen_epochs: dict[tuple[str, int], int] = {}
        # the topics the last answer called INVALID_TOPIC_EXCEPTION (Cluster.invalidTopics)
        self.invalid_topics: frozenset[str] = frozenset()

    def time_to_allow_update(self, now: int, backoff: RetryBackoff) -> int:
        """Metadata.timeToAllowUpdate: ms until an update may be asked for (0: now)."""
        if self.last_refresh_ms < 0:
            return 0
        for_attempts = self.last_refresh_ms + backoff.backoff(max(self.attempts - 1, 0)) - now
        # an update due by metadata.max.age.ms starts the count of equivalent responses over
        if not self.time_to_expire(now):
            self.equivalent_responses = 0
        n = self.equivalent_responses
        for_equivalent = self.last_refresh_ms + (backoff.backoff(n - 1) if n > 0 else 0) - now
        return max(for_attempts, for_equivalent, 0)

    def time_to_expire(self, now: int) -> int:
        """Metadata.timeToNextUpdate's ``timeToExpire`` (no update requested): ms until
        ``metadata.max.age.ms`` has passed since the last successful update (0: due now)."""
        due = self.last_successful_refresh_ms + self.metadata_expire_ms
        return due - now if due > now else 0

    def failed_update(self, now: int) -> None:
        """Metadata.failedUpdate: the request failed or timed out."""
        self.last_refresh_ms = now
        self.attempts += 1

    def update(self, now: int, partitions, keep_newer_epoch: bool = False
               ) -> frozenset[tuple[str, int]]:
        """Metadata.update with a full response, ``partitions`` its MetadataResponse rows
        (leader epoch -1: none). The count of equivalent responses grows by one, unless some
        partition's epoch is new or newer than the last seen (updateLatestMetadata).

        Returns the partitions whose row the producer must not take: with
        ``keep_newer_epoch`` (the rule ``producer_metadata_keeps_newer_leader_epoch``, 2.2+,
        KAFKA-7738), a row whose leader epoch is older than the last seen one is stale (a
        broker whose metadata cache lags answered), and the previously cached leader stays
        (updateLatestMetadata: ``newEpoch >= currentEpoch`` takes the row, else the cache's)."""
        self.last_refresh_ms = self.last_successful_refresh_ms = now
        self.attempts = 0
        self.equivalent_responses += 1
        seen = self.last_seen_epochs
        invalid = []
        stale = []
        for topic, partition, err, _leader, epoch, _replicas, _isr in partitions:
            if partition < 0:   # a topic-level error row
                if err == INVALID_TOPIC_EXCEPTION:
                    invalid.append(topic)
                continue
            tp = (topic, partition)
            verdict = update_latest_metadata(seen, tp, epoch, keep_newer_epoch)
            if verdict == NEW:   # no leader epoch, or a new or newer one: the answer is news
                self.equivalent_responses = 0
            elif verdict == STALE:
                stale.append(tp)
        self.invalid_topics = frozenset(invalid)
        return frozenset(stale)

    def last_seen_leader_epoch(self, tp: tuple[str, int]) -> int | None:
        """Metadata.lastSeenLeaderEpoch: the newest leader epoch seen for ``tp`` (None:
        Optional.empty, no epoch known)."""
        return self.last_seen_epochs.get(tp)

    def update_last_seen_epoch_if_newer(self, tp: tuple[str, int], leader_epoch: int) -> bool:
        """Metadata.updateLastSeenEpochIfNewer: an epoch learnt outside a metadata answer is
        kept when the partition has a known epoch and this one is newer (True); a partition
        without an epoch keeps none (False). ``leader_epoch`` must be at least 0."""
        if isinstance(leader_epoch, bool) or not isinstance(leader_epoch, int) or \
                leader_epoch < 0:
            raise ValueError(f"leader_epoch: invalid leader epoch {leader_epoch!r} "
                             "(must be an int >= 0)")
        old = self.last_seen_epochs.get(tp)
        if old is None or leader_epoch <= old:
            return False
        self.last_seen_epochs[tp] = leader_epoch
        return True

    def update_last_seen_epoch(self, tp: tuple[str, int], epoch: int) -> None:
        """Metadata.updatePartitionLeadership's ``lastSeenLeaderEpochs.put`` (KIP-951, 3.7+):
        a newer leader taken from a produce answer is the last seen epoch from now on."""
        self.last_seen_epochs[tp] = epoch


class RetryBackoff(NamedTuple):
    """A batch's retry backoff (RecordAccumulator.retryBackoff; Metadata.refreshBackoff is
    built alike) and the generator its jitter draws from (ExponentialBackoff uses
    ThreadLocalRandom; here a seeded generator of the producer's own, apart from the engine's,
    so message latencies stay as they were)."""

    exponential: ExponentialBackoff
    rng: random.Random

    @classmethod
    def of(cls, retry_backoff_ms: int, retry_backoff_max_ms: int | None = None,
           seed: str = "retry-backoff") -> RetryBackoff:
        """KIP-580 (3.7+): ``retry_backoff_ms * 2^(attempts - 1)`` up to
        ``retry_backoff_max_ms``, with 20 % jitter drawn from a generator seeded by ``seed``;
        without a maximum (before 3.7), ``retry_backoff_ms`` every time."""
        if retry_backoff_max_ms is None:
            exponential = ExponentialBackoff(retry_backoff_ms, RETRY_BACKOFF_EXP_BASE,
                                             retry_backoff_ms, 0.0)
        else:
            exponential = ExponentialBackoff(retry_backoff_ms, RETRY_BACKOFF_EXP_BASE,
                                             retry_backoff_max_ms, RETRY_BACKOFF_JITTER)
        return cls(exponential, random.Random(seed))

    @classmethod
    def for_producer(cls, cluster, client_id: str, config: dict) -> RetryBackoff:
        """The producer's: exponential from 3.7 (KIP-580), constant before; its jitter seeded
        by the cluster's seed and the client id."""
        exponential = cluster.rules.clients.exponential_retry_backoff
        return cls.of(config["retry.backoff.ms"],
                      config["retry.backoff.max.ms"] if exponential else None,
                      f"{cluster.engine.seed}:{client_id}:retry-backoff")

    def backoff(self, attempts: int) -> int:
        """ms to wait before the retry after ``attempts + 1`` sends (the jitter is drawn once
        per retry here; Kafka draws again at each readiness check, so its wait ends at the
        first check that falls past a draw)."""
        return self.exponential.backoff(attempts, self.rng)
