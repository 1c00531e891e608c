"""The producer: accumulator, sender, acks, retries and per-record results with Kafka's errors.

Follows KafkaProducer's shape: ``send`` appends a record to a per-partition batch; the sender
drains batches that are full (``batch.size``) or old enough (``linger.ms``) into one
ProduceRequest per leader broker, with at most ``max.in.flight.requests.per.connection`` requests
outstanding per broker. Retriable errors are retried after a backoff until
``delivery.timeout.ms``: ``retry.backoff.ms`` before 3.7, and from 3.7 (KIP-580) that doubled at
each attempt up to ``retry.backoff.max.ms``, with 20 % jitter (``RetryBackoff``).
NOT_LEADER_OR_FOLLOWER also refreshes metadata, at most once per refresh backoff
(``ProducerMetadata``: Metadata.timeToAllowUpdate), which from 3.7 grows the same way.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from itertools import chain, count, repeat
from typing import NamedTuple

from kafkasim.core import errors as E
from kafkasim.core.messages import (
    MetadataRequest,
    MetadataResponse,
    ProduceRequest,
    ProduceResponse,
)
from kafkasim.runtime import validation
from kafkasim.runtime.clients.produce_result import (
    ACKED,
    FAILED,
    NO_ERRORS,
    PENDING,
    ProduceRequestResult,
    ProduceResult,
    ProduceResults,
)
from kafkasim.runtime.network_client import ExponentialBackoff
from kafkasim.settings import config as kconfig
from kafkasim.settings.javautil import murmur2, to_positive

#: the bytes a record counts for batch.size and for fetch sizes
RECORD_SIZE = 100
#: ProducerConfig metadata.max.age.ms's default (not a declared producer config here: the
#: producer refreshes on demand only)
METADATA_MAX_AGE_MS = 300_000
#: CommonClientConfigs.RETRY_BACKOFF_EXP_BASE and RETRY_BACKOFF_JITTER (KIP-580, 3.7)
RETRY_BACKOFF_EXP_BASE = 2
RETRY_BACKOFF_JITTER = 0.2


@dataclass(init=False)
class _Batch:
    """Kafka's ProducerBatch: its records (each counts ``RECORD_SIZE`` bytes) and what
    the sender needs. A new batch (RecordAccumulator.append's ``new ProducerBatch``) sets its
    partition, records, creation time and result; the other fields keep their class defaults
    until the sender sets them."""

    tp: tuple[str, int]
    record_ids: list[int]
    created_ms: int
    attempts: int = 0
    retry_at_ms: int = 0
    base_seq: int = -1        # idempotent producers: assigned at the first send, kept on retries
    epoch: int = 0
    producer_id: int = -1     # ... with the producer id of that moment
    seq_reset: bool = False   # ProducerBatch.sequenceHasBeenReset: rewritten by an epoch bump
    produce_future: ProduceRequestResult | None = None   # the outcome of all its records

    def __init__(self, tp: tuple[str, int], record_ids: list[int], created_ms: int,
                 produce_future: ProduceRequestResult) -> None:
        self.tp = tp
        self.record_ids = record_ids
        self.created_ms = created_ms
        self.produce_future = produce_future


def _on_the_wire(producer, tp: tuple[str, int]):
    """The batches of ``tp`` in the producer's requests in flight."""
    return (entry[3][tp] for entry in producer.in_flight.values() if tp in entry[3])


def _precedes(x: _Batch, b: _Batch) -> bool:
    """``x`` is an unanswered batch of ``b``'s producer id and epoch with an earlier sequence."""
    return x is not b and x.produce_future.status == PENDING and \
        0 <= x.base_seq < b.base_seq and (x.producer_id, x.epoch) == (b.producer_id, b.epoch)


class TransactionManager:
    """What Kafka's TransactionManager keeps for an idempotent producer (KIP-98): its producer
    id and epoch and the next sequence number of each partition; ``bump_epoch`` starts a new
    epoch after a sequenced batch failed for good (KIP-360)."""

    def __init__(self, idempotent: bool, producer_id: int) -> None:
        self.idempotent = idempotent
        # the id InitProducerId would hand out: one per producer client, stable for its life
        self.producer_id = producer_id
        self.producer_epoch = 0
        self.next_seq: dict[tuple[str, int], int] = {}

    def bump_epoch(self) -> None:
        """A sequenced batch failed for good: start a new producer epoch with sequences from 0
        (KIP-360), so the gap it leaves is not an OUT_OF_ORDER_SEQUENCE_NUMBER forever."""
        if self.idempotent:
            self.producer_epoch += 1
            self.next_seq.clear()

    def reset_producer_id(self, new_id: int) -> None:
        """TransactionManager.resetProducerId (0.11 ... 2.4): after an
        OutOfOrderSequenceException the idempotent producer drops its producer id and every
        sequence number and gets a new id (InitProducerId; ``new_id`` here), epoch 0."""
        self.producer_id = new_id
        self.producer_epoch = 0
        self.next_seq.clear()

    def is_next_sequence(self, producer, b: _Batch) -> bool:
        """TransactionManager.isNextSequence (lastAckedSequence + 1 == baseSequence): no batch of
        ``b``'s partition with an earlier sequence of the same producer id and epoch is still
        unanswered (in flight or queued) at ``producer``."""
        queued = producer.batches.get(b.tp, ())
        return not any(_precedes(x, b) for x in chain(queued, _on_the_wire(producer, b.tp)))

    def should_stop_drain(self, producer, first: _Batch) -> bool:
        """RecordAccumulator.shouldStopDrainBatchesForPartition's sequence test (1.0+, KAFKA-5494):
        a queue's first batch that already has a sequence is a retry, and it is drained only if
        it is the first in-flight sequence of its partition: no batch of the partition with an
        earlier sequence (same producer id and epoch) is on the wire. Retries of a partition so
        go one request at a time, in sequence order. (0.11 allowed idempotence only with
        max.in.flight.requests.per.connection 1, which has the same effect.)"""
        return any(_precedes(x, first) for x in _on_the_wire(producer, first.tp))

    def can_retry(self, producer, b: _Batch) -> bool:
        """An idempotent batch answered OUT_OF_ORDER_SEQUENCE_NUMBER (OutOfOrderSequenceException
        is not a RetriableException), by Sender.canRetry / TransactionManager.canRetry:
        - 1.0+: retried when it is not the next sequence (an earlier batch is unanswered) or its
          sequence was rewritten: the gap may still close (0.11.0: never retried);
        - 2.5+ (KIP-360), the next sequence: a real gap (the leader lost acknowledged batches).
          requestEpochBumpForPartition, and before the retry bumpIdempotentProducerEpoch: a new
          epoch, the partition's unanswered batches renumbered from sequence 0
          (startSequencesAtBeginning); retried;
        - before 2.5: the batch fails and, if it carries the current producer id, the producer
          resets it (Sender.failBatch 0.11-1.x / TransactionManager.handleFailedBatch 2.0-2.4:
          resetProducerId) -- a new id, sequences from 0."""
        if b.base_seq < 0 or not self.idempotent:
            return True
        rules = producer.cluster.rules.clients
        if rules.idempotent_out_of_order_retried_when_not_next and (
                b.seq_reset or not self.is_next_sequence(producer, b)):
            return True
        if rules.idempotent_out_of_order_bumps_epoch:
            self.bump_idempotent_producer_epoch(producer, b)
            return True
        if b.producer_id == self.producer_id:
            # InitProducerId hands out a new id: one the cluster's registry never gave before
            self.reset_producer_id(producer.cluster.records.producer_index(
                f"{producer.client_id}\x00{self.producer_id}"))
            producer.producer_id = self.producer_id
        return False

    def bump_idempotent_producer_epoch(self, producer, b: _Batch) -> None:
        """TransactionManager.bumpIdempotentProducerEpoch (2.5+): epoch + 1, and
        startSequencesAtBeginning for ``b``'s partition: its unanswered batches (``b`` first in
        sequence order) get the new epoch and sequences from 0; other partitions start from 0
        at their next new batch."""
        self.bump_epoch()
        tp = b.tp
        pending = [b] + [x for x in producer.batches.get(tp, ()) if x.base_seq >= 0] + [
            entry[3][tp] for entry in producer.in_flight.values() if tp in entry[3]]
        seq = 0
        for x in sorted({id(x): x for x in pending}.values(), key=lambda x: x.base_seq):
            if x.produce_future.status != PENDING:
                continue
            x.base_seq, x.epoch, x.producer_id, x.seq_reset = seq, self.producer_epoch, \
                self.producer_id, True
            seq += len(x.record_ids)
        self.next_seq[tp] = seq


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
    nothing new backs off further). ``last_seen_epochs`` is Metadata.lastSeenLeaderEpochs."""

    __slots__ = ("in_flight", "last_refresh_ms", "retry_at_ms", "attempts",
                 "equivalent_responses", "last_successful_refresh_ms", "last_seen_epochs")

    def __init__(self) -> None:
        self.in_flight = -1
        self.last_refresh_ms = -1
        self.retry_at_ms = -1
        self.attempts = 0
        self.equivalent_responses = 0
        self.last_successful_refresh_ms = -1
        self.last_seen_epochs: dict[tuple[str, int], int] = {}

    def time_to_allow_update(self, now: int, backoff: RetryBackoff) -> int:
        """Metadata.timeToAllowUpdate: ms until an update may be asked for (0: now)."""
        if self.last_refresh_ms < 0:
            return 0
        for_attempts = self.last_refresh_ms + backoff.backoff(max(self.attempts - 1, 0)) - now
        # an update due by metadata.max.age.ms starts the count of equivalent responses over
        if self.last_successful_refresh_ms + METADATA_MAX_AGE_MS <= now:
            self.equivalent_responses = 0
        n = self.equivalent_responses
        for_equivalent = self.last_refresh_ms + (backoff.backoff(n - 1) if n > 0 else 0) - now
        return max(for_attempts, for_equivalent, 0)

    def failed_update(self, now: int) -> None:
        """Metadata.failedUpdate: the request failed or timed out."""
        self.last_refresh_ms = now
        self.attempts += 1

    def update(self, now: int, partitions) -> None:
        """Metadata.update with a full response, ``partitions`` its MetadataResponse rows
        (leader epoch -1: none). The count of equivalent responses grows by one, unless some
        partition's epoch is new or newer than the last seen (updateLatestMetadata)."""
        self.last_refresh_ms = self.last_successful_refresh_ms = now
        self.attempts = 0
        self.equivalent_responses += 1
        seen = self.last_seen_epochs
        for topic, partition, _err, _leader, epoch, _replicas, _isr in partitions:
            if partition < 0:   # a topic-level error row
                continue
            tp = (topic, partition)
            last = seen.get(tp)
            if epoch < 0:   # no leader epoch: forgotten, and the response counts as new
                seen.pop(tp, None)
                self.equivalent_responses = 0
            elif last is None or epoch > last:
                seen[tp] = epoch
                self.equivalent_responses = 0


class RetryBackoff(NamedTuple):
    """A batch's retry backoff (RecordAccumulator.retryBackoff; Metadata.refreshBackoff is
    built alike) and the generator its jitter draws from (ExponentialBackoff uses
    ThreadLocalRandom; here a seeded generator of the producer's own, apart from the engine's,
    so message latencies stay as they were)."""

    exponential: ExponentialBackoff
    rng: random.Random

    @classmethod
    def for_producer(cls, cluster, client_id: str, config: dict) -> RetryBackoff:
        """From 3.7 (KIP-580) ``retry.backoff.ms * 2^(attempts - 1)`` up to
        ``retry.backoff.max.ms``, with 20 % jitter; before, ``retry.backoff.ms`` every time."""
        initial = config["retry.backoff.ms"]
        if cluster.rules.clients.exponential_retry_backoff:
            exponential = ExponentialBackoff(initial, RETRY_BACKOFF_EXP_BASE,
                                             config["retry.backoff.max.ms"],
                                             RETRY_BACKOFF_JITTER)
        else:
            exponential = ExponentialBackoff(initial, RETRY_BACKOFF_EXP_BASE, initial, 0.0)
        return cls(exponential, random.Random(f"{cluster.engine.seed}:{client_id}:retry-backoff"))

    def backoff(self, attempts: int) -> int:
        """ms to wait before the retry after ``attempts + 1`` sends (the jitter is drawn once
        per retry here; Kafka draws again at each readiness check, so its wait ends at the
        first check that falls past a draw)."""
        return self.exponential.backoff(attempts, self.rng)


def _retry_metadata(producer: Producer, delay_ms: int) -> None:
    """Try the refresh again in ``delay_ms``, unless a retry is pending already."""
    md = producer.metadata
    if md.retry_at_ms < 0:
        md.retry_at_ms = producer.cluster.engine.now + delay_ms
        producer._schedule(delay_ms, Producer._timer_metadata_timeout, -1)


class Producer:
    def __init__(self, cluster, client_id: str, config: dict) -> None:
        cfg = dict(config)
        cfg.setdefault("client.id", client_id)
        self.cluster = cluster
        self.client_id = client_id
        self.config = kconfig.producer_config(cfg, cluster.kafka_version)
        self.acks = self.config["acks"]
        cfg_ = self.config
        # fixed for the producer's life: read once here, not per record on the hot path
        self.linger_ms = cfg_["linger.ms"]
        self.batch_size = cfg_["batch.size"]
        self.max_in_flight = cfg_["max.in.flight.requests.per.connection"]
        # request.timeout.ms arrived with KIP-19 (0.9) and delivery.timeout.ms with KIP-91 (2.1);
        # the 0.8.2 producer's broker-side ack timeout (timeout.ms) defaulted to 30000 ms and it
        # had no client-side request or delivery timeout at all.
        self.ack_timeout_ms = cfg_.get("request.timeout.ms", cfg_.get("timeout.ms", 30000))
        self.request_timeout_ms = cfg_.get("request.timeout.ms")
        self.delivery_timeout_ms = cfg_.get("delivery.timeout.ms")
        # a batch is past delivery.timeout.ms at this age (none without one: virtual time starts
        # at 0, so no age reaches it)
        self._expiry_ms = self.delivery_timeout_ms if self.delivery_timeout_ms is not None \
            else 1 << 62
        # KIP-98 idempotence (effectively on by default since 3.2): each batch carries
        # (producer id, epoch, sequence) so the leader drops a retried duplicate
        self.producer_index = cluster.records.producer_index(client_id)
        self.producer_id = self.producer_index   # the transaction manager's producer id
        self.transaction_manager = TransactionManager(
            bool(cfg_.get("enable.idempotence", False)) and self.acks == -1, self.producer_id)
        self.results = ProduceResults(cluster.records)
        self.n_pending = 0   # results still PENDING (pending() runs after every event in flush)
        self.leaders: dict[tuple[str, int], int] = {}
        # the leader epoch the producer's metadata has for each partition (Metadata
        # .lastSeenLeaderEpochs): a KIP-951 current leader is taken only when newer
        self.leader_epochs: dict[tuple[str, int], int] = {}
        self.partition_counts: dict[str, int] = {}
        self.batches: dict[tuple[str, int], list[_Batch]] = {}
        # corr -> [deadline, timeout id, broker, {tp: batch}]: the request (its batches by
        # partition: Sender.sendProduceRequest's recordsByPartition) and its request timeout
        # (request.timeout.ms; deadline -1 without one), which TimeoutScheduler.fire_timeouts
        # reads here
        self.in_flight: dict[int, list] = {}
        cluster.timeout_scheduler.timeouts_of(("client", client_id), self.in_flight,
                                              Producer._on_request_timeout)
        self.in_flight_per_broker: dict[int, int] = {}
        self.correlation = 0
        self.metadata = ProducerMetadata()
        self.sender_wakeup_ms = -1
        # when the sender wakes for RecordAccumulator.nextExpiryTimeMs: the oldest pending
        # batch's delivery.timeout.ms deadline (-1: none set)
        self.expiry_wakeup_ms = -1
        self.sticky: dict[str, int] = {}
        self.retry_backoff = RetryBackoff.for_producer(cluster, client_id, cfg_)
        self._refresh_metadata()

    def __repr__(self) -> str:
        runs = self.results.runs
        acked = sum(run[1] for run in runs if run[3].status == ACKED)
        failed = sum(run[1] for run in runs if run[3].status == FAILED)
        return (f"Producer({self.client_id!r}, acks={self.config['acks']}, sent={len(self.results)}"
                f", acked={acked}, failed={failed})")

    # -- public API -----------------------------------------------------------------------------
    def send(self, topic: str, value=None, *, key=None, partition: int | None = None
             ) -> ProduceResult:
        """Queue one record; returns its result object, filled in as the simulation runs."""
        if type(topic) is not str:
            self.cluster.topics.check_topic(topic)   # names what the topic should be
        rid = self._send_run(topic, (value,), key, partition)
        return self.results[rid]

    def send_many(self, topic: str, values, **kw) -> list[ProduceResult]:
        values = validation.record_values("send_many", values)
        if not values:
            return []
        first = self._send_run(topic, values, **kw)
        res = self.results
        return [res[rid] for rid in range(first, first + len(values))]

    def _send_run(self, topic: str, values, key=None, partition: int | None = None,
                  prefix: str | None = None) -> int:
        """``send`` of each of ``values`` (non-empty) in order, all with the same key and
        partition; returns the first record id (the records get consecutive ids). With a
        ``prefix``, ``values`` is a range of numbers and the values are ``"<prefix>-<n>"``
        (``RecordRegistry.new_numbered``: a generated workload's)."""
        c = self.cluster
        # TopicRegistry.partition_count, inlined: it raises for an unknown topic
        counts = c.topics.partition_counts
        n = counts[topic] if topic in counts else c.topics.partition_count(topic)
        if partition is None:
            # the same for every record of the run: the key is the same and the sticky
            # partition only moves when the sender drains a batch
            partition = self._partition_for(topic, key, n)
        elif partition is True or partition is False or not (
                isinstance(partition, int) and 0 <= partition < n):
            c.topics.check_partition(topic, partition)
        now = c.engine.now
        k = len(values)
        if prefix is not None:
            first = c.records.new_numbered(prefix, values)
        elif k == 1:
            first = c.records.new(values[0])
        else:
            first = c.records.new_many(values)
        end = first + k
        results = self.results
        runs = results.runs
        results.count += k
        self.n_pending += k
        # append to the open batch while (records + 1) * record_size <= batch.size, i.e. while
        # it holds fewer than ``cap`` records, then to new ones (a new batch takes at least one)
        tp = (topic, partition)
        queue = self.batches.setdefault(tp, [])
        cap = self.batch_size // RECORD_SIZE
        batch = queue[-1] if queue and queue[-1].attempts == 0 else None
        index = len(batch.record_ids) if batch is not None else 0
        rid = first
        while rid < end:
            if batch is None or index >= cap:
                fut = ProduceRequestResult(topic, partition, PENDING, -1, None, 0, NO_ERRORS)
                batch = _Batch(tp, [], now, fut)
                queue.append(batch)
                index = 0
                if self.expiry_wakeup_ms < 0 and self.delivery_timeout_ms is not None:
                    self._arm_expiry(now + self.delivery_timeout_ms)
            take = cap - index if cap > index else 1
            stop = rid + take if take < end - rid else end
            batch.record_ids.extend(range(rid, stop))
            # the records' FutureRecordMetadata(batch result, index in the batch, now), as one
            # run of Producer.results (ProduceResults builds a ProduceResult when asked)
            runs.append((rid, stop - rid, now, batch.produce_future, index))
            index += stop - rid
            rid = stop
        # one wake-up for the run: the first send's schedules it, the others found it set
        # (_wake_sender(linger.ms), inlined)
        when = now + self.linger_ms
        if self.sender_wakeup_ms < now or when < self.sender_wakeup_ms:
            self.sender_wakeup_ms = when
            c.engine.schedule(self.linger_ms, "client_timer", self.client_id,
                              Producer._timer_sender, (when,))
        return first

    def flush(self, timeout_ms: int = 120000) -> bool:
        """Run the simulation until every record sent so far is acked or failed."""
        return self.cluster.run_until(lambda c: self.pending() == 0, timeout_ms)

    def pending(self) -> int:
        """How many records sent are neither acked nor failed (a counter: flush and
        ``Cluster.run_until`` ask after every event)."""
        return self.n_pending

    def acked(self) -> list[ProduceResult]:
        return self.results.with_status(ACKED)

    def failed(self) -> list[ProduceResult]:
        return self.results.with_status(FAILED)

    def _partition_for(self, topic: str, key, n: int) -> int:
        if key is not None:
            data = key if isinstance(key, bytes) else str(key).encode()
            return to_positive(murmur2(data)) % n  # Kafka's default (murmur2) key partitioner
        # no key: sticky partitioning, switching partition when a batch is sent (KIP-480)
        return self.sticky.setdefault(topic, 0) % n

    # -- timers and messages ------------------------------------------------------------------
    def _schedule(self, delay: int, fn, *args) -> None:
        """Call ``fn(self, *args)`` after ``delay`` (``fn``: a ``Producer._timer_...``)."""
        self.cluster.engine.schedule(delay, "client_timer", self.client_id, fn, args)

    def _wake_sender(self, delay: int) -> None:
        now = self.cluster.engine.now
        when = now + delay
        if self.sender_wakeup_ms < now or when < self.sender_wakeup_ms:
            self.sender_wakeup_ms = when
            self.cluster.engine.schedule(delay, "client_timer", self.client_id,
                                         Producer._timer_sender, (when,))

    def _timer_metadata_timeout(self, corr: int) -> None:
        """A MetadataRequest ``corr`` timed out, or (``corr`` -1) the retry of a refresh that
        found no broker to ask is due."""
        md = self.metadata
        if corr < 0:
            md.retry_at_ms = -1
        if md.in_flight == corr:
            if corr >= 0:   # the request timed out
                md.failed_update(self.cluster.engine.now)
            md.in_flight = -1
            self._refresh_metadata()

    def on_message(self, src, msg) -> None:
        if isinstance(msg, ProduceResponse):
            self._on_produce_response(src, msg)
        elif isinstance(msg, MetadataResponse):
            self._on_metadata(msg)

    def on_peer_gone(self, dead: int) -> None:
        """The broker died with our requests in flight: fail them now and retry elsewhere."""
        gone = [corr for corr, entry in self.in_flight.items() if entry[2] == dead]
        for corr in gone:
            _broker, batches = self._release(corr)
            for b in batches.values():
                self.leaders[b.tp] = -1
                self._retry_or_fail(b, E.NETWORK_EXCEPTION)
        if gone:
            self._refresh_metadata()
            self._run_sender()

    def on_disconnect(self, dst, msg) -> None:
        """The broker a request went to died: fail it now and retry elsewhere (``msg`` None:
        a connect to it failed)."""
        if isinstance(msg, ProduceRequest):
            entry = self._release(msg.correlation_id)
            if entry is None:
                return
            for b in entry[1].values():
                self.leaders[b.tp] = -1
                self._retry_or_fail(b, E.NETWORK_EXCEPTION)
            self._refresh_metadata()
            self._run_sender()
        elif isinstance(msg, MetadataRequest) and msg.correlation_id == self.metadata.in_flight:
            self.metadata.in_flight = -1
            self.metadata.failed_update(self.cluster.engine.now)
            self._refresh_metadata()
        elif msg is None:
            # a connect to ``dst`` failed (Transport.connect_failed): NetworkClient
            # .processDisconnection -> handleServerDisconnect asks for new metadata; the sender
            # polls again when the node's reconnect backoff ends
            self._refresh_metadata()
            self._run_sender()

    # -- metadata ---------------------------------------------------------------------------
    def _refresh_metadata(self) -> None:
        md = self.metadata
        if md.in_flight >= 0:
            return
        c = self.cluster
        wait = md.time_to_allow_update(c.engine.now, self.retry_backoff)
        if wait > 0:
            _retry_metadata(self, wait)
            return
        # leastLoadedNode skips a node blacked out after a refused connect
        live = [b for b in sorted(c.brokers) if c.brokers[b].is_running
                and not c.transport.is_unavailable(self.client_id, b)]
        if not live:
            # "Give up sending metadata request since no node is available": try again after
            # retry.backoff.ms
            _retry_metadata(self, self.config["retry.backoff.ms"])
            return
        # least-loaded node: rotate through the bootstrap list deterministically
        target = live[self.correlation % len(live)]
        self.correlation += 1
        md.in_flight = self.correlation
        c.transport.send(self.client_id, target, MetadataRequest(self.correlation, ()))
        self._schedule(self.request_timeout_ms or 30000, Producer._timer_metadata_timeout,
                       self.correlation)

    def _on_metadata(self, msg: MetadataResponse) -> None:
        if msg.correlation_id != self.metadata.in_flight:
            return
        self.metadata.in_flight = -1
        self.metadata.update(self.cluster.engine.now, msg.partitions)
        counts: dict[str, int] = {}
        for topic, partition, err, leader, epoch, _replicas, _isr in msg.partitions:
            if partition < 0:
                continue
            counts[topic] = max(counts.get(topic, 0), partition + 1)
            self.leaders[(topic, partition)] = leader if err == E.NONE else -1
            self.leader_epochs[(topic, partition)] = epoch if err == E.NONE else -1
        self.partition_counts.update(counts)
        self._run_sender()

    # -- sender -----------------------------------------------------------------------------
    def _run_sender(self, when: int | None = None) -> None:
        """Sender.sendProducerData: drain each queue's first batch once it is full or due
        (linger.ms, or retry.backoff.ms for a retry) into one request per leader; wake again
        when the next batch is due; fail batches past delivery.timeout.ms (_expire_batches).
        The sender's wake-up timer runs it as ``_timer_sender`` with the time it was set for."""
        if when == self.sender_wakeup_ms:   # this is the wake-up still set: it is used
            self.sender_wakeup_ms = -1
        now = self.cluster.engine.now
        # a queue's first batch created at or before this is past delivery.timeout.ms
        expired_at = now - self._expiry_ms
        expire = False
        need_metadata = False
        next_wake = None
        per_broker: dict[int, dict[tuple[str, int], _Batch]] = {}
        transport = self.cluster.transport
        client_id = self.client_id
        gated = transport.gated   # (then transport.ready answers for each leader)
        for tp, queue in self.batches.items():
            if not queue:
                continue
            batch = queue[0]
            # a first attempt is due linger.ms after its creation, a retry at its back-off's end
            # (set only once a batch was sent)
            ready_at = batch.created_ms + self.linger_ms if batch.attempts == 0 else \
                batch.retry_at_ms
            if ready_at > now and len(batch.record_ids) * RECORD_SIZE < self.batch_size:
                if next_wake is None or ready_at < next_wake:
                    next_wake = ready_at
                # (a first attempt that is not due yet is younger than linger.ms, which
                # ProducerConfig keeps below delivery.timeout.ms)
                if batch.created_ms <= expired_at:
                    expire = True
                continue
            leader = self.leaders.get(tp, -1)
            if leader < 0:
                need_metadata = True
            elif gated and leader not in per_broker and not transport.ready(client_id, leader):
                # Sender.sendProducerData: the node is not ready (a connect under way or
                # refused): its batches stay, no attempt used; poll until its connection delay
                delay = transport.connection_delay(client_id, leader)
                if delay >= 0 and (next_wake is None or now + delay < next_wake):
                    next_wake = now + delay
            elif batch.base_seq >= 0 and batch.attempts > 0 and \
                    self.transaction_manager.should_stop_drain(self, batch):
                pass   # a retry waits for its partition's earlier sequence on the wire
            elif leader in per_broker or \
                    self.in_flight_per_broker.get(leader, 0) < self.max_in_flight:
                per_broker.setdefault(leader, {})[tp] = queue.pop(0)
                if not queue:
                    continue
                batch = queue[0]
            if batch.created_ms <= expired_at:
                expire = True
        if per_broker:
            self._send_batches(per_broker)
        if need_metadata:
            self._refresh_metadata()
        if next_wake is not None:
            # _wake_sender(next_wake - now), inlined
            if self.sender_wakeup_ms < now or next_wake < self.sender_wakeup_ms:
                self.sender_wakeup_ms = next_wake
                self.cluster.engine.schedule(next_wake - now, "client_timer", self.client_id,
                                             Producer._timer_sender, (next_wake,))
        if expire:
            # a queue's oldest batch is past delivery.timeout.ms (it seldom is)
            self._expire_batches()

    _timer_sender = _run_sender   # the sender's wake-up: _run_sender(when)

    def _arm_expiry(self, when: int) -> None:
        """Wake the sender at ``when``, the oldest pending batch's delivery.timeout.ms deadline:
        Sender.sendProducerData bounds its poll timeout by RecordAccumulator.nextExpiryTimeMs
        (KIP-91), so a batch that nothing else moves (no leader, no broker, a request that never
        returns) still fails at its deadline. Every pending batch is younger than this one, so
        one wake-up at a time is enough."""
        now = self.cluster.engine.now
        self.expiry_wakeup_ms = when
        self.cluster.engine.schedule(max(0, when - now), "client_timer", self.client_id,
                                     Producer._timer_expiry, (when,))

    def _timer_expiry(self, when: int) -> None:
        """The sender's poll returns at the oldest batch's deadline: a sender pass (which fails
        the queued batches past it, RecordAccumulator.expiredBatches), the in-flight batches past
        it fail too (Sender.getExpiredInflightBatches), then the wake-up for the next oldest."""
        if when != self.expiry_wakeup_ms:
            return
        self.expiry_wakeup_ms = -1
        self._run_sender()
        self._expire_in_flight()
        oldest = None
        for queue in self.batches.values():
            if queue and (oldest is None or queue[0].created_ms < oldest):
                oldest = queue[0].created_ms
        for entry in self.in_flight.values():
            for b in entry[3].values():
                if b.produce_future.status == PENDING and (oldest is None
                                                           or b.created_ms < oldest):
                    oldest = b.created_ms
        if oldest is not None and self.expiry_wakeup_ms < 0:
            self._arm_expiry(oldest + self.delivery_timeout_ms)

    def _expire_in_flight(self) -> None:
        """Sender.getExpiredInflightBatches: a sent batch delivery.timeout.ms old fails with a
        TimeoutException while its request is still in flight; the request keeps its slot
        (max.in.flight.requests.per.connection) and its answer, when it comes, is ignored."""
        now = self.cluster.engine.now
        limit = self.delivery_timeout_ms
        expired = [b for entry in self.in_flight.values() for b in entry[3].values()
                   if b.produce_future.status == PENDING and now - b.created_ms >= limit]
        for b in sorted(expired, key=lambda b: (b.created_ms, b.tp)):
            self._complete(b, FAILED, E.DELIVERY_TIMEOUT, -1)
            if b.base_seq >= 0:
                self.transaction_manager.bump_epoch()

    def _send_batches(self, per_broker: dict[int, dict[tuple[str, int], _Batch]]) -> None:
        """One ProduceRequest per broker with the batches the sender drained for it."""
        c = self.cluster
        sticky = self.sticky
        client_id = self.client_id
        tm = self.transaction_manager
        idempotent = tm.idempotent
        next_seq = tm.next_seq
        size = (RECORD_SIZE,)   # every record's size
        for broker, batches in per_broker.items():
            corr = self.correlation = self.correlation + 1
            partitions = []
            for b in batches.values():
                attempts = b.attempts = b.attempts + 1
                b.produce_future.attempts = attempts
                ids = b.record_ids
                tp = b.tp
                base_seq = b.base_seq
                if base_seq < 0 and idempotent:
                    # the batch's first sequence and producer epoch, assigned once (retries
                    # keep them: RecordAccumulator.drain)
                    base_seq = b.base_seq = next_seq.get(tp, 0)
                    b.epoch = tm.producer_epoch
                    b.producer_id = tm.producer_id
                    next_seq[tp] = base_seq + len(ids)
                topic = tp[0]
                if topic in sticky:
                    sticky[topic] += 1
                if base_seq >= 0:   # the batch header's idempotence fields (KIP-98)
                    partitions.append((topic, tp[1], tuple(ids), size * len(ids),
                                       b.producer_id, b.epoch, base_seq))
                else:
                    partitions.append((topic, tp[1], tuple(ids), size * len(ids), -1, -1, -1))
            req = ProduceRequest(corr, client_id, self.acks, self.ack_timeout_ms,
                                 tuple(partitions))
            c.transport.send(client_id, broker, req)
            if self.acks == 0:
                # acks=0: done as soon as it is on the wire, offset unknown
                for b in batches.values():
                    self._complete(b, ACKED, E.NONE, -1)
                continue
            if self.request_timeout_ms is None:   # the 0.8.2 producer has no request timeout
                self.in_flight[corr] = [-1, -1, broker, batches]
            else:   # its request timeout, with the id and wake-up add_timeout gives
                owner = ("client", client_id)
                deadline = c.engine.now + self.request_timeout_ms
                timers = c.timeout_scheduler
                tid = timers.arm_timeout(owner, timers.timeouts[owner], deadline)
                self.in_flight[corr] = [deadline, tid, broker, batches]
            per_broker_count = self.in_flight_per_broker
            per_broker_count[broker] = per_broker_count.get(broker, 0) + 1

    def _expire_batches(self) -> None:
        """delivery.timeout.ms: a batch older than this fails with a TimeoutException."""
        now = self.cluster.engine.now
        limit = self.delivery_timeout_ms
        if limit is None:
            return
        for queue in self.batches.values():
            while queue and now - queue[0].created_ms >= limit:
                b = queue.pop(0)
                self._complete(b, FAILED, E.DELIVERY_TIMEOUT, -1)
                if b.base_seq >= 0:
                    self.transaction_manager.bump_epoch()

    def _complete(self, b: _Batch, status: str, error: str, base_offset: int) -> None:
        """ProducerBatch.done: set the batch's ProduceRequestResult once (a batch completes
        once: a later completion is ignored), then each record's callback in order
        (completeFutureAndFireCallbacks): here one ``produce_result`` trace row per record with
        its offset (acked) or error (failed)."""
        fut = b.produce_future
        if fut.status != PENDING:
            return
        c = self.cluster
        now = c.engine.now
        fut.status = status
        fut.base_offset = base_offset
        fut.done_ms = now
        ids = b.record_ids
        self.n_pending -= len(ids)
        # Trace.record, inlined: one trace row per record, (now, "produce_result", client,
        # topic, partition, (record id, status, offset or error)), the rows built by C loops:
        # the row's fixed head plus the 1-tuple holding each record's detail
        if status == ACKED:
            fut.error = None
            details = zip(ids, repeat(ACKED), count(base_offset) if base_offset >= 0 else
                          repeat(base_offset))
        else:
            fut.error = error
            details = zip(ids, repeat(status), repeat(error))
        c.trace.rows.extend(map(((now, "produce_result", self.client_id) + b.tp).__add__,
                                zip(details)))

    def _release(self, corr: int):
        entry = self.in_flight.pop(corr, None)
        if entry is None:
            return None
        _deadline, _tid, broker, batches = entry   # popped: its request timeout is cancelled
        self.in_flight_per_broker[broker] -= 1
        return broker, batches

    def _on_produce_response(self, src, msg: ProduceResponse) -> None:
        entry = self.in_flight.pop(msg.correlation_id, None)   # _release, inlined
        if entry is None:
            return
        _deadline, _tid, broker, batches = entry   # popped: its request timeout is cancelled
        self.in_flight_per_broker[broker] -= 1
        now = self.cluster.engine.now
        for topic, partition, err, base in msg.partitions:
            b = batches.get((topic, partition))
            if b is None:
                continue
            if err != E.NONE:
                self._retry_or_fail(b, err)
                continue
            # _complete(b, ACKED, E.NONE, base), inlined (every acked batch)
            fut = b.produce_future
            if fut.status != PENDING:
                continue
            fut.status = ACKED
            fut.base_offset = base
            fut.error = None
            fut.done_ms = now
            ids = b.record_ids
            self.n_pending -= len(ids)
            self.cluster.trace.rows.extend(map(
                (now, "produce_result", self.client_id, topic, partition).__add__,
                zip(zip(ids, repeat(ACKED), count(base) if base >= 0 else repeat(base)))))
        if msg.current_leaders:
            self._update_partition_leadership(msg, now)
        self._run_sender()

    def _update_partition_leadership(self, msg: ProduceResponse, now: int) -> None:
        """KIP-951 (3.7+), after the answer's batches were completed or re-enqueued:
        Metadata.updatePartitionLeadership takes each current leader whose epoch is newer than
        the cached one and whose node the answer carries; a retry whose leader changed is then
        not backed off (RecordAccumulator.shouldBackoff, ProducerBatch
        .hasLeaderChangedForTheOngoingRetry). A metadata refresh stays requested."""
        for topic, partition, leader, epoch in msg.current_leaders:
            tp = (topic, partition)
            if leader < 0 or epoch < 0 or leader not in msg.node_endpoints or \
                    epoch <= self.leader_epochs.get(tp, -1):
                continue
            self.leaders[tp] = leader
            self.leader_epochs[tp] = epoch
            for b in self.batches.get(tp, ()):
                if b.attempts > 0 and b.retry_at_ms > now:
                    b.retry_at_ms = now

    def _on_request_timeout(self, corr: int) -> None:
        entry = self._release(corr)
        if entry is None:
            return
        for b in entry[1].values():
            self._retry_or_fail(b, E.REQUEST_TIMED_OUT)
        self._refresh_metadata()
        self._run_sender()

    def _retry_or_fail(self, b: _Batch, err: str) -> None:
        now = self.cluster.now
        fut = b.produce_future
        if fut.status != PENDING:   # it expired in flight (delivery.timeout.ms): done already
            return
        if fut.errors is NO_ERRORS:
            fut.errors = [err]
        else:
            fut.errors.append(err)
        if err == E.OUT_OF_ORDER_SEQUENCE_NUMBER and \
                not self.transaction_manager.can_retry(self, b):
            self._complete(b, FAILED, err, -1)
            return
        retriable = err in E.RETRIABLE
        within = self.delivery_timeout_ms is None or \
            now - b.created_ms < self.delivery_timeout_ms
        if retriable and b.attempts <= self.config["retries"] and within:
            backoff = self.retry_backoff.backoff(b.attempts - 1)
            b.retry_at_ms = now + backoff
            queue = self.batches.setdefault(b.tp, [])
            if b.base_seq >= 0:
                # RecordAccumulator.insertInSequenceOrder: retries keep sequence order
                i = 0
                while i < len(queue) and 0 <= queue[i].base_seq < b.base_seq:
                    i += 1
                queue.insert(i, b)
            else:
                queue.insert(0, b)  # retried batches go first
            if err in (E.NOT_LEADER_OR_FOLLOWER, E.NOT_LEADER_FOR_PARTITION,
                       E.LEADER_NOT_AVAILABLE, E.UNKNOWN_TOPIC_OR_PARTITION,
                       E.FENCED_LEADER_EPOCH):
                self.leaders[b.tp] = -1
                self._refresh_metadata()
            self._wake_sender(backoff)
            return
        final = err if (retriable is False or b.attempts > self.config["retries"]) \
            else E.DELIVERY_TIMEOUT
        self._complete(b, FAILED, final, -1)
        if b.base_seq >= 0:
            self.transaction_manager.bump_epoch()
