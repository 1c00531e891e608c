"""The producer: ``KafkaProducer`` over the simulated network, with per-record results and Kafka's
errors.

Kafka's shape, one class per module: ``send`` appends a record to its partition's batch in the
``RecordAccumulator`` (``record_accumulator``); the ``Sender`` (``sender``) drains batches that
are full (``batch.size``) or old enough (``linger.ms``) into one ProduceRequest per leader
broker, with at most ``max.in.flight.requests.per.connection`` requests outstanding per broker,
and completes, retries or fails each ``ProducerBatch`` (``producer_batch``) by the answer.
Retriable errors are retried after a backoff until ``delivery.timeout.ms``: ``retry.backoff.ms``
before 3.7, and from 3.7 (KIP-580) that doubled at each attempt up to ``retry.backoff.max.ms``,
with 20 % jitter (``RetryBackoff``). An idempotent producer's ids and sequence numbers are its
``TransactionManager``'s (``transaction_manager``). NOT_LEADER_OR_FOLLOWER also refreshes
metadata, at most once per refresh backoff (``ProducerMetadata``: Metadata.timeToAllowUpdate),
which from 3.7 grows the same way; with no error, the metadata is refreshed
``metadata.max.age.ms`` after the last update. This module keeps KafkaProducer's public calls, the
partitioner and the metadata updates (NetworkClient's DefaultMetadataUpdater).
"""

from __future__ import annotations

from kafkasim.core import errors as E
from kafkasim.core.errors import IllegalArgumentException
from kafkasim.core.messages import (
    MetadataRequest,
    MetadataResponse,
    ProduceRequest,
    ProduceResponse,
)
from kafkasim.runtime import validation
from kafkasim.runtime.clients import metadata_wait
from kafkasim.runtime.clients.produce_result import (
    ACKED,
    FAILED,
    NO_ERRORS,
    PENDING,
    ProduceRequestResult,
    ProduceResult,
    ProduceResults,
)
from kafkasim.runtime.clients.producer_batch import RECORD_SIZE, ProducerBatch
from kafkasim.runtime.clients.producer_metadata import (
    METADATA_MAX_AGE_MS,
    ProducerMetadata,
    RetryBackoff,
)
from kafkasim.runtime.clients.record_accumulator import ExpiryRule, RecordAccumulator
from kafkasim.runtime.clients.sender import Sender
from kafkasim.runtime.clients.subscription_state import IllegalStateException
from kafkasim.runtime.clients.transaction_manager import FATAL_ERROR, TransactionManager
from kafkasim.settings import config as kconfig
from kafkasim.settings import limits
from kafkasim.settings.javautil import murmur2, to_positive

__all__ = ["METADATA_MAX_AGE_MS", "NO_ERRORS", "PENDING", "RECORD_SIZE", "ProduceRequestResult",
           "ProduceResult", "ProduceResults", "Producer", "ProducerBatch", "ProducerMetadata",
           "RecordAccumulator", "RetryBackoff", "Sender", "TransactionManager"]


def _retry_metadata(producer: Producer, delay_ms: int) -> None:
    """Try the refresh again in ``delay_ms``, unless a retry is pending already."""
    md = producer.metadata
    if md.retry_at_ms < 0:
        md.retry_at_ms = producer.cluster.engine.now + delay_ms
        producer._schedule(delay_ms, Producer._timer_metadata_timeout, -1)


class Producer:
    """KafkaProducer: ``send`` queues records in the ``accumulator``, the ``sender`` sends them;
    each record's ``ProduceResult`` fills in as the simulation runs."""

    def __init__(self, cluster, client_id: str, config: dict) -> None:
        cfg = dict(config)
        cfg.setdefault("client.id", client_id)
        self.cluster = cluster
        self.client_id = client_id
        self.config = kconfig.producer_config(cfg, cluster.kafka_version)
        self.acks = self.config["acks"]
        # fixed for the producer's life: read once here, not per record on the hot path
        self.linger_ms = self.config["linger.ms"]
        # KIP-98 idempotence (effectively on by default since 3.2): each batch carries
        # (producer id, epoch, sequence) so the leader drops a retried duplicate
        self.producer_index = cluster.records.producer_index(client_id)
        self.producer_id = self.producer_index   # the transaction manager's producer id
        # the sender's requests on the wire, by correlation id (Sender.in_flight)
        self.in_flight: dict[int, list] = {}
        self.transaction_manager = TransactionManager(
            bool(self.config.get("enable.idempotence", False)) and self.acks == -1,
            self.producer_id, self.in_flight, cluster.rules.clients)
        self.results = ProduceResults(cluster.records)
        self.n_pending = 0   # results still PENDING (pending() runs after every event in flush)
        self.leaders: dict[tuple[str, int], int] = {}
        # the leader epoch the producer's metadata has for each partition (Metadata
        # .lastSeenLeaderEpochs): a KIP-951 current leader is taken only when newer
        self.leader_epochs: dict[tuple[str, int], int] = {}
        self.partition_counts: dict[str, int] = {}
        self.retry_backoff = RetryBackoff.for_producer(cluster, client_id, self.config)
        rules = cluster.rules.clients
        expiry = ExpiryRule(self.config["request.timeout.ms"],
                            rules.producer_batch_expiry_in_queue_order) \
            if rules.producer_batch_expiry_by_request_timeout else None
        self.accumulator = RecordAccumulator(self.config["batch.size"], self.linger_ms,
                                             self.retry_backoff,
                                             self.config.get("delivery.timeout.ms"),
                                             self.transaction_manager, expiry)
        self.batches = self.accumulator.batches   # (the same dict: the queues by partition)
        self.sender = Sender(self, self.accumulator, self.transaction_manager, self.in_flight)
        cluster.timeout_scheduler.timeouts_of(("client", client_id), self.in_flight,
                                              Producer._on_request_timeout)
        self.correlation = 0
        self.metadata = ProducerMetadata(self.config["metadata.max.age.ms"])
        self.sticky: dict[str, int] = {}
        # KafkaProducer.maxBlockTimeMs and the sends waiting for metadata (waitOnMetadata)
        self.max_block_ms = metadata_wait.max_block_ms(self.config, cfg)
        self.metadata_waits: list[metadata_wait.MetadataWait] = []
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
        """KafkaProducer.send: queue one record; returns its result object (the Future), filled
        in as the simulation runs. A topic or partition the producer's metadata does not know
        yet waits for it up to ``max.block.ms`` (``metadata_wait``), then fails with a
        TimeoutException; a topic that is not a string or a partition that is not a
        non-negative int raises at once (IllegalArgumentException: ClusterError)."""
        rid = self._send_run(topic, (value,), key, partition)
        return self.results[rid]

    def send_many(self, topic: str, values, **kw) -> list[ProduceResult]:
        values = validation.record_values("send_many", values)
        if not values:
            return []
        first = self._send_run(topic, values, **kw)
        res = self.results
        return [res[rid] for rid in range(first, first + len(values))]

    def partitions_for(self, topic: str) -> list[metadata_wait.PartitionInfo]:
        """KafkaProducer.partitionsFor: the topic's partitions in the producer's metadata,
        waiting (running the simulation) up to ``max.block.ms`` for them
        (``metadata_wait.partitions_for``)."""
        return metadata_wait.partitions_for(self, topic)

    def _send_run(self, topic: str, values, key=None, partition: int | None = None,
                  prefix: str | None = None) -> int:
        """``send`` of each of ``values`` (non-empty) in order, all with the same key and
        partition; returns the first record id (the records get consecutive ids). With a
        ``prefix``, ``values`` is a range of numbers and the values are ``"<prefix>-<n>"``
        (``RecordRegistry.new_numbered``: a generated workload's)."""
        c = self.cluster
        if not self.sender.running:   # KafkaProducer.throwIfProducerClosed
            raise IllegalStateException("Cannot perform operation after producer has been closed")
        counts = c.topics.partition_counts
        if type(topic) is not str:
            c.topics.check_topic(topic)   # names what the topic should be
        n = counts[topic] if topic in counts else None
        if n is None or partition is not None and (
                partition is True or partition is False or not (
                    isinstance(partition, int) and 0 <= partition < n)):
            # KafkaProducer.waitOnMetadata: the topic, or the partition, is not known yet
            if not metadata_wait.must_wait(self, topic, partition, n):
                c.topics.check_partition(topic, partition)   # raises: the caller's error
            first = self._new_records(values, prefix)
            metadata_wait.wait_on_metadata(self, topic, first, first + len(values), key,
                                           partition)
            return first
        if partition is None:
            # the same for every record of the run: the key is the same and the sticky
            # partition only moves when the sender drains a batch
            partition = self._partition_for(topic, key, n)
        first = self._new_records(values, prefix)
        k = len(values)
        results = self.results
        results.count += k
        self.n_pending += k
        self._append((topic, partition), first, first + k, results.runs)
        return first

    def _new_records(self, values, prefix: str | None) -> int:
        """The record ids of ``values`` (consecutive; the first returned)."""
        records = self.cluster.records
        if prefix is not None:
            return records.new_numbered(prefix, values)
        if len(values) == 1:
            return records.new(values[0])
        return records.new_many(values)

    def _append(self, tp: tuple[str, int], first: int, end: int, runs: list) -> None:
        """The rest of KafkaProducer.doSend for records ``first .. end - 1`` (their partition
        known): RecordAccumulator.append, and the sender woken as the append asks; each piece
        of a batch is one run appended to ``runs``."""
        now = self.cluster.engine.now
        acc = self.accumulator
        if acc.append(tp, first, end, now, runs):
            self.sender.arm_expiry(now)
        # one wake-up for the run after linger.ms (a sooner one set already stays); at once
        # when the partition's last batch is full (KafkaProducer.doSend: sender.wakeup() for
        # RecordAppendResult.batchIsFull, ``dq.size() > 1 || last.isFull()``) or a flush is on.
        # (Kafka wakes it for a new batch too: that pass finds the batch lingering and sets
        # the same wake-up, so kafkasim spares the event.)
        if self.transaction_manager.current_state == FATAL_ERROR:
            self._fail_send_in_error_state(tp)
        queue = acc.batches[tp]
        full = len(queue) > 1 or len(queue[-1].record_ids) * RECORD_SIZE >= acc.batch_size
        self.sender.wakeup(0 if full or acc.flushes_in_progress else self.linger_ms)

    def _fail_send_in_error_state(self, tp: tuple[str, int]) -> None:
        """KafkaProducer.doSend after the append, in the transaction manager's fatal state:
        (3.2+) TransactionManager.maybeAddPartition raises a KafkaException (thrown to the
        caller, the sender not woken; before 3.2 an idempotent producer's send does not check);
        the sender, whose loop polls every retry.backoff.ms in that state, aborts the records
        appended (Sender.maybeAbortBatches)."""
        self.sender.wakeup(self.config["retry.backoff.ms"])
        if self.cluster.rules.clients.idempotent_send_fails_in_error_state:
            self.transaction_manager.maybe_add_partition(tp)

    def flush(self, timeout_ms: int = 120000) -> bool:
        """KafkaProducer.flush: every batch is made sendable at once, linger.ms or not
        (RecordAccumulator.beginFlush) and the sender woken; then the simulation runs until
        every batch incomplete at the call is acked or failed (awaitFlushCompletion), for at
        most ``timeout_ms`` (kafkasim's bound: Kafka's flush waits as long as it takes). False
        when that ran out. The 0.8.2 producer has no flush() (KAFKA-1865, 0.9.0): there this
        only waits, the batches keep their linger.ms."""
        acc = self.accumulator
        if not self.cluster.rules.clients.producer_flush_sends_lingering_batches:
            return self._await_results(acc.incomplete.request_results(), timeout_ms)
        acc.begin_flush()
        self.sender.wakeup(0)
        return acc.await_flush_completion(lambda results: self._await_results(results,
                                                                             timeout_ms))

    def _await_results(self, results: list[ProduceRequestResult], timeout_ms: int) -> bool:
        """Run the simulation until every batch result of ``results`` is done (ProduceRequest
        Result.await for each), for at most ``timeout_ms``."""
        def completed(_c) -> bool:
            while results and results[-1].status != PENDING:
                results.pop()
            return not results
        return self.cluster.run_until(completed, timeout_ms)

    def close(self, timeout_ms: int | None = None) -> None:
        """KafkaProducer.close / close(Duration): the sender sends what is queued at once
        (Sender.initiateClose) and the simulation runs until nothing is queued or in flight,
        for at most ``timeout_ms`` (None: as long as it takes, Long.MAX_VALUE; kafkasim stops
        at limits.MAX_TIME_MS); what is left then fails with KafkaException "Producer is closed
        forcefully." (Sender.forceClose: 0 fails everything at once). The producer then does
        nothing more: ``send`` raises IllegalStateException. Closing again does nothing. A send
        still waiting for its topic's metadata fails at once with KafkaException "Producer closed
        while send in progress" (``metadata_wait.fail_all_on_close``)."""
        if timeout_ms is not None:
            if type(timeout_ms) is int and timeout_ms < 0:
                raise IllegalArgumentException("The timeout cannot be negative.")
            validation.check_timeout("close(timeout_ms)", timeout_ms)
        sender = self.sender
        if sender.shut_down:
            return
        metadata_wait.fail_all_on_close(self)
        wait = limits.MAX_TIME_MS if timeout_ms is None else timeout_ms
        if wait > 0:
            sender.initiate_close()
            self.cluster.run_until(lambda c: not sender.has_pending_work(), wait)
        if sender.has_pending_work() or wait == 0:
            sender.force_close()
        sender.shut_down_now()

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
        if self.sender.shut_down:   # closed: the network client reads nothing more
            return
        if isinstance(msg, ProduceResponse):
            self._on_produce_response(src, msg)
        elif isinstance(msg, MetadataResponse):
            self._on_metadata(msg)

    def on_peer_gone(self, dead: int) -> None:
        """The close of a dead broker's connection arrives (NetworkClient.processDisconnection):
        the requests in flight to it fail now (NETWORK_EXCEPTION, retried), and if the producer
        was talking to it (a request in flight, or it leads a partition the producer knows of)
        the metadata is refreshed (handleServerDisconnect: requestUpdate). The cached leaders
        stay until new metadata names others (``Sender.fail_request``): meanwhile a batch for
        the dead leader waits for a connect, refused (``Transport.ready``)."""
        if self.sender.shut_down:
            return
        gone = [corr for corr, entry in self.in_flight.items() if entry[2] == dead]
        for corr in gone:
            self.sender.fail_request(corr, E.NETWORK_EXCEPTION)
        if gone or dead in self.leaders.values():
            self._refresh_metadata()
            self.sender.send_producer_data()

    def on_disconnect(self, dst, msg) -> None:
        """The broker a request went to died: fail it now, ask for new metadata and retry once
        it names the partition's leader (``msg`` None: a connect to it failed)."""
        if self.sender.shut_down:
            return
        if isinstance(msg, ProduceRequest):
            if not self.sender.fail_request(msg.correlation_id, E.NETWORK_EXCEPTION):
                return
            self._refresh_metadata()
            self.sender.send_producer_data()
        elif isinstance(msg, MetadataRequest) and msg.correlation_id == self.metadata.in_flight:
            self.metadata.in_flight = -1
            self.metadata.failed_update(self.cluster.engine.now)
            self._refresh_metadata()
        elif msg is None:
            # a connect to ``dst`` failed (Transport.connect_failed): NetworkClient
            # .processDisconnection -> handleServerDisconnect asks for new metadata; the sender
            # polls again when the node's reconnect backoff ends
            self._refresh_metadata()
            self.sender.send_producer_data()

    # -- metadata ---------------------------------------------------------------------------
    def _refresh_metadata(self) -> None:
        md = self.metadata
        if md.in_flight >= 0 or self.sender.shut_down:
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
        c.transport.send(self.client_id, target,
                         MetadataRequest(self.correlation, metadata_wait.request_topics(self)))
        self._schedule(self.sender.request_timeout_ms or 30000, Producer._timer_metadata_timeout,
                       self.correlation)

    def _on_metadata(self, msg: MetadataResponse) -> None:
        if msg.correlation_id != self.metadata.in_flight:
            return
        self.metadata.in_flight = -1
        # KAFKA-7738 (2.2+): a row with an older leader epoch than the last seen is ignored
        stale = self.metadata.update(
            self.cluster.engine.now, msg.partitions,
            self.cluster.rules.clients.producer_metadata_keeps_newer_leader_epoch)
        counts: dict[str, int] = {}
        for topic, partition, err, leader, epoch, _replicas, _isr in msg.partitions:
            if partition < 0:
                continue
            counts[topic] = max(counts.get(topic, 0), partition + 1)
            if stale and (topic, partition) in stale:
                continue
            self.leaders[(topic, partition)] = leader if err == E.NONE else -1
            self.leader_epochs[(topic, partition)] = epoch if err == E.NONE else -1
        self.partition_counts.update(counts)
        self._arm_metadata_max_age()
        metadata_wait.on_metadata(self, msg.partitions)
        self.sender.send_producer_data()

    def _arm_metadata_max_age(self) -> None:
        """Wake the sender when ``metadata.max.age.ms`` has passed since the last successful
        update (NetworkClient's poll timeout is at most Metadata.timeToNextUpdate), unless a
        wake-up for it is set already."""
        md = self.metadata
        if md.expiry_wakeup_ms >= 0:
            return
        md.expiry_wakeup_ms = md.last_successful_refresh_ms + md.metadata_expire_ms
        self._schedule(md.time_to_expire(self.cluster.engine.now),
                       Producer._timer_metadata_max_age, md.expiry_wakeup_ms)

    def _timer_metadata_max_age(self, when: int) -> None:
        """The metadata is ``metadata.max.age.ms`` old: DefaultMetadataUpdater.maybeUpdate
        asks for an update (within the refresh backoff) even though no error asked for it. If
        an update succeeded since the wake-up was set, it waits for that one's age instead."""
        md = self.metadata
        if when != md.expiry_wakeup_ms:
            return
        md.expiry_wakeup_ms = -1
        if md.time_to_expire(self.cluster.engine.now) > 0:
            self._arm_metadata_max_age()
        else:
            self._refresh_metadata()

    # -- the sender's answers and timeouts (the Sender does the work) -------------------------
    def _on_produce_response(self, src, msg: ProduceResponse) -> None:
        self.sender.handle_produce_response(msg)

    def _on_request_timeout(self, corr: int) -> None:
        """request.timeout.ms passed with no answer to request ``corr``: its batches are
        retried (or fail), with new metadata asked for."""
        if self.sender.fail_request(corr, E.REQUEST_TIMED_OUT):
            self._refresh_metadata()
            self.sender.send_producer_data()
