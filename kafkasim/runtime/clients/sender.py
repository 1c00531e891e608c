"""The producer's I/O loop: Kafka's ``Sender``.

``send_producer_data`` asks the accumulator which leaders have a batch ready, keeps those it
can send to (NetworkClient.ready: connected, and fewer than
``max.in.flight.requests.per.connection`` requests outstanding), drains their batches into one
ProduceRequest per leader (``send_produce_request``) and sets its next wake-up.
``handle_produce_response`` completes each batch of an answer (``complete_batch``): done with
its offset, re-enqueued for a retry after its backoff (``reenqueue_batch``), or failed
(``fail_batch``). A batch past ``delivery.timeout.ms`` fails whether queued or in flight
(KIP-91).
"""

from __future__ import annotations

from itertools import count, repeat

from kafkasim.core import errors as E
from kafkasim.core.messages import ProduceRequest, ProduceResponse
from kafkasim.runtime.clients.produce_result import ACKED, FAILED, NO_ERRORS, PENDING
from kafkasim.runtime.clients.producer_batch import RECORD_SIZE, ProducerBatch
from kafkasim.runtime.clients.transaction_manager import (
    FATAL_ERROR,
    INITIALIZING,
    ProducerIdAndEpoch,
)

#: errors that make the producer ask for new metadata (their exceptions extend
#: InvalidMetadataException: Sender.completeBatch @0.8.2.0 .. @3.9.0 metadata.requestUpdate)
INVALID_METADATA = frozenset({
    E.NOT_LEADER_OR_FOLLOWER, E.NOT_LEADER_FOR_PARTITION, E.LEADER_NOT_AVAILABLE,
    E.UNKNOWN_TOPIC_OR_PARTITION, E.FENCED_LEADER_EPOCH, E.UNKNOWN_LEADER_EPOCH,
    E.NETWORK_EXCEPTION, E.KAFKA_STORAGE_ERROR, E.UNKNOWN_TOPIC_ID, E.INCONSISTENT_TOPIC_ID,
})


def _run_sender(producer, when: int | None = None) -> None:
    """The sender's wake-up (a "client_timer" event, ``when`` the time it was set for)."""
    producer.sender.send_producer_data(when)


def _timer_expiry(producer, when: int) -> None:
    """The sender's poll returns at the oldest batch's ``delivery.timeout.ms`` deadline."""
    producer.sender.expire_at_deadline(when)


class Sender:
    """The sender of one producer: its requests in flight and its wake-ups.

    ``in_flight``: correlation id -> [deadline, timeout id, broker, {tp: batch}], the request
    (its batches by partition: Sender.sendProduceRequest's recordsByPartition) and its request
    timeout (request.timeout.ms; deadline -1 without one), which TimeoutScheduler.fire_timeouts
    reads there."""

    def __init__(self, producer, accumulator, transaction_manager, in_flight: dict) -> None:
        self.producer = producer
        self.cluster = producer.cluster
        self.client_id = producer.client_id
        self.accumulator = accumulator
        self.transaction_manager = transaction_manager
        config = producer.config
        self.acks = config["acks"]
        self.retries = config["retries"]
        self.max_in_flight = config["max.in.flight.requests.per.connection"]
        self.rules = producer.cluster.rules.clients
        # Sender.guaranteeMessageOrder: max.in.flight 1 mutes a drained partition (0.10.0+)
        self.guarantee_message_order = self.max_in_flight == 1 and \
            self.rules.producer_mutes_in_flight_partitions
        # request.timeout.ms arrived with KIP-19 (0.9) and delivery.timeout.ms with KIP-91 (2.1);
        # the 0.8.2 producer's broker-side ack timeout (timeout.ms) defaulted to 30000 ms and it
        # had no client-side request or delivery timeout at all.
        self.ack_timeout_ms = config.get("request.timeout.ms", config.get("timeout.ms", 30000))
        self.request_timeout_ms = config.get("request.timeout.ms")
        self.delivery_timeout_ms = config.get("delivery.timeout.ms")
        # KAFKA-15415 (3.7+): the metadata's leader epochs, which ready and drain compare with
        # each batch's (None: a retry always waits its backoff)
        self.leader_epochs = producer.leader_epochs \
            if self.rules.producer_retry_skips_backoff_on_new_leader else None
        self.in_flight = in_flight
        self.in_flight_per_broker: dict[int, int] = {}
        self.wakeup_ms = -1
        # when the sender wakes for RecordAccumulator.nextExpiryTimeMs: the oldest pending
        # batch's delivery.timeout.ms deadline (-1: none set)
        self.expiry_wakeup_ms = -1
        self.running = True        # until initiate_close
        self.forced_close = False  # Sender.forceClose: the incomplete batches are aborted
        self.shut_down = False     # its I/O thread has ended (run() returned): it does nothing

    # -- closing ----------------------------------------------------------------------------
    def initiate_close(self) -> None:
        """Sender.initiateClose: the accumulator closes (every batch sendable at once), the
        loop stops taking sends, and wakes up to send what is left."""
        self.accumulator.close()
        self.running = False
        self.wakeup(0)

    def force_close(self) -> None:
        """Sender.forceClose: close without waiting for what is queued or in flight."""
        self.forced_close = True
        self.initiate_close()

    def is_running(self) -> bool:
        """Sender.isRunning."""
        return self.running

    def has_pending_work(self) -> bool:
        """What Sender.run waits for after a close before it ends: batches still queued
        (hasUndrained) or requests in flight, metadata ones too (inFlightRequestCount)."""
        return bool(self.in_flight) or self.producer.metadata.in_flight >= 0 or \
            self.accumulator.has_undrained()

    def shut_down_now(self) -> None:
        """The end of Sender.run: after a forced close every incomplete batch fails
        (abortIncompleteBatches); then the network client closes: a request still in flight is
        forgotten, its answer never read."""
        if self.forced_close:
            now = self.cluster.engine.now
            for b in self.accumulator.abort_incomplete_batches(now):
                self.report_batch(b, FAILED, E.PRODUCER_CLOSED_FORCEFULLY, -1, now)
        for corr in list(self.in_flight):
            self.release(corr)
        self.producer.metadata.in_flight = -1
        self.shut_down = True

    # -- wake-ups ---------------------------------------------------------------------------
    def wakeup(self, delay: int) -> None:
        """Run ``send_producer_data`` in ``delay`` ms, unless a wake-up is set sooner."""
        now = self.cluster.engine.now
        when = now + delay
        if self.wakeup_ms < now or when < self.wakeup_ms:
            self.wakeup_ms = when
            self.cluster.engine.schedule(delay, "client_timer", self.client_id, _run_sender,
                                         (when,))

    def arm_expiry(self, created_ms: int) -> None:
        """Wake the sender at the delivery.timeout.ms deadline of the oldest pending batch,
        created at ``created_ms`` (none without a delivery timeout, or while one is set):
        Sender.sendProducerData bounds its poll timeout by RecordAccumulator.nextExpiryTimeMs
        (KIP-91), so a batch that nothing else moves (no leader, no broker, a request that never
        returns) still fails at its deadline. Every pending batch is younger than this one, so
        one wake-up at a time is enough."""
        if self.expiry_wakeup_ms >= 0 or self.delivery_timeout_ms is None:
            return
        now = self.cluster.engine.now
        when = created_ms + self.delivery_timeout_ms
        self.expiry_wakeup_ms = when
        self.cluster.engine.schedule(max(0, when - now), "client_timer", self.client_id,
                                     _timer_expiry, (when,))

    def expire_at_deadline(self, when: int) -> None:
        """The sender's poll returns at the oldest batch's deadline: a sender pass (which fails
        the queued batches past it, RecordAccumulator.expiredBatches), the in-flight batches past
        it fail too (getExpiredInflightBatches), then the wake-up for the next oldest."""
        if when != self.expiry_wakeup_ms:
            return
        self.expiry_wakeup_ms = -1
        self.send_producer_data()
        self.get_expired_inflight_batches()
        oldest = self.accumulator.oldest_created_ms()
        for b in self._pending_in_flight():
            if oldest is None or b.created_ms < oldest:
                oldest = b.created_ms
        if oldest is not None:
            self.arm_expiry(oldest)

    # -- sending ----------------------------------------------------------------------------
    def send_producer_data(self, when: int | None = None) -> None:
        """Sender.sendProducerData: the leaders with a batch ready (RecordAccumulator.ready),
        less those the network client cannot send to now; their batches drained into one
        request each; new metadata asked for when a ready batch has no leader; the next
        wake-up when the next batch is due (or a refused node's reconnect backoff ends); the
        batches past delivery.timeout.ms failed."""
        if when == self.wakeup_ms:   # this is the wake-up still set: it is used
            self.wakeup_ms = -1
        if self.shut_down:
            return
        tm = self.transaction_manager
        # Sender.runOnce, before sendProducerData (2.5+): maybeResolveSequences and
        # bumpIdempotentEpochAndResetIdIfNeeded, when there is anything to do (1.0-2.4:
        # resetProducerIdIfNeeded, then maybeWaitForProducerId)
        if tm.partitions_with_unresolved_sequences:
            if tm.kip360:
                tm.maybe_resolve_sequences()
            else:
                tm.legacy.reset_producer_id_if_needed(self.producer)
        if tm.current_state == FATAL_ERROR:   # nothing more is sent
            self.maybe_abort_batches(tm.last_error)
            return
        if tm.epoch_bump_required:
            tm.bump_idempotent_epoch_and_reset_id_if_needed()
            if tm.current_state == INITIALIZING:
                self.init_producer_id()
        now = self.cluster.engine.now
        leaders = self.producer.leaders
        epochs = self.leader_epochs
        result = self.accumulator.ready(leaders, now, epochs)
        nodes, next_wake = self._sendable_nodes(result.ready_nodes, now)
        delay = result.next_ready_check_delay_ms
        if delay is not None and (next_wake is None or now + delay < next_wake):
            next_wake = now + delay
        if nodes:
            drained = self.accumulator.drain(leaders, nodes, now, epochs)
            if self.guarantee_message_order:   # mute all the partitions drained
                for batches in drained.values():
                    for tp in batches:
                        self.accumulator.mute_partition(tp)
            for broker, batches in drained.items():
                self.send_produce_request(broker, batches)
        if result.unknown_leader_topics:
            self.producer._refresh_metadata()
        if next_wake is not None:
            self.wakeup(next_wake - now)
        reset = False
        for b in self.accumulator.expired_batches(now, self.accumulator.muted):
            reset = self.fail_expired_batch(b) or reset
        if reset:   # 0.11: Sender.run's needsTransactionStateReset, once for them all
            self.transaction_manager.legacy.take_new_producer_id(self.producer)

    def maybe_abort_batches(self, error) -> None:
        """Sender.runOnce in the transaction manager's fatal state (0.11+): every incomplete
        batch, queued or in flight, fails with its last error (Sender.maybeAbortBatches,
        RecordAccumulator.abortBatches); an answer that comes later is ignored."""
        if error is None or not self.accumulator.has_incomplete():
            return
        name = error if isinstance(error, str) else type(error).__name__
        now = self.cluster.engine.now
        for b in self.accumulator.abort_incomplete_batches(now, name):
            self.report_batch(b, FAILED, name, -1, now)

    def init_producer_id(self) -> None:
        """The InitProducerId request bumpIdempotentEpochAndResetIdIfNeeded asked for (the epoch
        was exhausted at Short.MAX_VALUE), answered at once: a new producer id, epoch 0, one
        the cluster's registry never gave before (InitProducerIdHandler.handleResponse)."""
        producer = self.producer
        tm = self.transaction_manager
        new_id = self.cluster.records.producer_index(f"{self.client_id}\x00init{tm.changes}")
        tm.set_producer_id_and_epoch(ProducerIdAndEpoch(new_id, 0))
        producer.producer_id = new_id

    def fail_expired_batch(self, b: ProducerBatch) -> bool:
        """Sender.sendProducerData's expired batches: failBatch(.., TimeoutException, false),
        and (1.0+) one sent at least once (inRetry) leaves its sequence unresolved
        (TransactionManager.markSequenceUnresolved): the broker may have it. 0.11 resets the
        producer id instead (Sender.run @0.11.0.0: resetProducerId when an expired batch was
        in retry), and the sender gets a new one before it sends again: True when that reset
        is due."""
        self.fail_batch(b, E.DELIVERY_TIMEOUT, False)
        tm = self.transaction_manager
        if not (tm.idempotent and b.retry):
            return False
        if self.rules.idempotent_expired_sequence_unresolved:
            tm.mark_sequence_unresolved(b)
            return False
        return not tm.kip360

    def _sendable_nodes(self, ready_nodes: dict[int, None], now: int
                        ) -> tuple[dict[int, None], int | None]:
        """The ready leaders the sender can send to now (NetworkClient.ready: connected, and
        InFlightRequests.canSendMore), and when a refused or connecting one may be tried."""
        transport = self.cluster.transport
        gated = transport.gated   # (then transport.ready answers for each node)
        nodes: dict[int, None] = {}
        next_wake = None
        for node in ready_nodes:
            if gated and not transport.ready(self.client_id, node):
                # not ready (a connect under way or refused): its batches stay, no attempt
                # used; poll again when its connection delay ends
                delay = transport.connection_delay(self.client_id, node)
                if delay >= 0 and (next_wake is None or now + delay < next_wake):
                    next_wake = now + delay
            elif self.in_flight_per_broker.get(node, 0) < self.max_in_flight:
                nodes[node] = None
        return nodes, next_wake

    def send_produce_request(self, broker: int, batches: dict[tuple[str, int], ProducerBatch]
                             ) -> None:
        """Sender.sendProduceRequest: one ProduceRequest to ``broker`` with the batches drained
        for it, timed out after ``request.timeout.ms`` unless answered (acks=0: done once on
        the wire)."""
        producer = self.producer
        corr = producer.correlation = producer.correlation + 1
        partitions = [self._batch_header(b) for b in batches.values()]
        req = ProduceRequest(corr, self.client_id, self.acks, self.ack_timeout_ms,
                             tuple(partitions))
        self.cluster.transport.send(self.client_id, broker, req)
        if self.acks == 0:
            # acks=0: done as soon as it is on the wire, offset unknown (handleProduceResponse's
            # "acks = 0 case": completeBatch with NONE, which also unmutes)
            for b in batches.values():
                self.complete_batch(b, E.NONE, -1)
            return
        if self.request_timeout_ms is None:   # the 0.8.2 producer has no request timeout
            self.in_flight[corr] = [-1, -1, broker, batches]
        else:   # its request timeout, with the id and wake-up add_timeout gives
            owner = ("client", self.client_id)
            deadline = self.cluster.engine.now + self.request_timeout_ms
            timers = self.cluster.timeout_scheduler
            tid = timers.arm_timeout(owner, timers.timeouts[owner], deadline)
            self.in_flight[corr] = [deadline, tid, broker, batches]
        self.in_flight_per_broker[broker] = self.in_flight_per_broker.get(broker, 0) + 1

    def _batch_header(self, b: ProducerBatch) -> tuple:
        """The partition's entry of the request for batch ``b``: (topic, partition, record ids,
        sizes, producer id, epoch, base sequence), the last three -1 unless the producer is
        idempotent (KIP-98)."""
        topic, partition = b.tp
        sticky = self.producer.sticky
        if topic in sticky:   # KIP-480: the next batch of the topic goes to the next partition
            sticky[topic] += 1
        ids = b.record_ids
        sizes = (RECORD_SIZE,) * len(ids)
        if b.base_seq >= 0:
            return topic, partition, tuple(ids), sizes, b.producer_id, b.epoch, b.base_seq
        return topic, partition, tuple(ids), sizes, -1, -1, -1

    # -- answers ----------------------------------------------------------------------------
    def release(self, corr: int):
        """Take request ``corr`` off the wire (its request timeout is cancelled with it):
        (broker, {tp: batch}), or None when it is not in flight."""
        entry = self.in_flight.pop(corr, None)
        if entry is None:
            return None
        _deadline, _tid, broker, batches = entry
        self.in_flight_per_broker[broker] -= 1
        return broker, batches

    def handle_produce_response(self, msg: ProduceResponse) -> None:
        """Sender.handleProduceResponse: complete each batch of the answer, take the newer
        leaders it names (KIP-951) and send what is ready."""
        entry = self.release(msg.correlation_id)
        if entry is None:
            return
        batches = entry[1]
        starts = msg.log_start_offsets   # (empty: none known)
        for i, (topic, partition, err, base) in enumerate(msg.partitions):
            b = batches.get((topic, partition))
            if b is not None:
                self.complete_batch(b, err, base, starts[i] if starts else -1)
        if msg.current_leaders:
            self.update_partition_leadership(msg, self.cluster.engine.now)
        self.send_producer_data()

    def complete_batch(self, b: ProducerBatch, err: str, base_offset: int,
                       log_start_offset: int = -1) -> None:
        """Sender.completeBatch: acknowledged at ``base_offset``, or an error to retry or
        fail on (with the answer's log start offset); with max.in.flight 1 the partition is
        unmuted either way."""
        if err == E.NONE:
            self.complete(b, base_offset)
        else:
            self.retry_or_fail(b, err, base_offset, log_start_offset)
            if err in INVALID_METADATA:
                # metadata.requestUpdate(): the cached leader stays until an answer replaces
                # it (Sender.completeBatch @0.8.2.0, @3.9.0: retried or failed alike)
                self.producer._refresh_metadata()
        if self.guarantee_message_order:
            self.accumulator.unmute_partition(b.tp)

    def complete(self, b: ProducerBatch, base_offset: int) -> None:
        """Sender.completeBatch(batch, response): the transaction manager takes the batch's
        sequence as acknowledged (handleCompletedBatch, even when the batch expired meanwhile),
        then the batch completes (once)."""
        tm = self.transaction_manager
        if tm.idempotent and b.base_seq >= 0:
            tm.handle_completed_batch(b, base_offset)
        self.batch_done(b, ACKED, None, base_offset)

    def batch_done(self, b: ProducerBatch, status: str, error: str | None,
                   base_offset: int) -> bool:
        """ProducerBatch.done and its records' callbacks (completeFutureAndFireCallbacks): here
        one ``produce_result`` trace row per record, with its offset (acked) or error (failed).
        A batch completes once: a later completion is ignored (False)."""
        now = self.cluster.engine.now
        if not b.done(status, error, base_offset, now):
            return False
        self.accumulator.incomplete.remove(b)   # (maybeRemoveAndDeallocateBatch)
        self.report_batch(b, status, error, base_offset, now)
        return True

    def report_batch(self, b: ProducerBatch, status: str, error: str | None, base_offset: int,
                     now: int) -> None:
        """The records of batch ``b``, just done, are no longer pending; one trace row each."""
        ids = b.record_ids
        self.producer.n_pending -= len(ids)
        if status == ACKED:
            details = zip(ids, repeat(ACKED), count(base_offset) if base_offset >= 0 else
                          repeat(base_offset))
        else:
            details = zip(ids, repeat(status), repeat(error))
        # Trace.record of each row (now, "produce_result", client, topic, partition, (record
        # id, status, offset or error)), built by C loops: the fixed head plus each 1-tuple
        self.cluster.trace.rows.extend(map(((now, "produce_result", self.client_id) + b.tp)
                                           .__add__, zip(details)))

    def update_partition_leadership(self, msg: ProduceResponse, now: int) -> None:
        """KIP-951 (3.7+), after the answer's batches were completed or re-enqueued:
        Metadata.updatePartitionLeadership takes each current leader whose epoch is newer than
        the cached one and whose node the answer carries; a retry whose leader changed is then
        not backed off (RecordAccumulator.shouldBackoff, ProducerBatch
        .hasLeaderChangedForTheOngoingRetry). A metadata refresh stays requested."""
        producer = self.producer
        for topic, partition, leader, epoch in msg.current_leaders:
            tp = (topic, partition)
            if leader < 0 or epoch < 0 or leader not in msg.node_endpoints or \
                    epoch <= producer.leader_epochs.get(tp, -1) or tp not in producer.leaders:
                continue   # (the last: a partition the metadata does not know is skipped)
            producer.leaders[tp] = leader
            producer.leader_epochs[tp] = epoch
            producer.metadata.update_last_seen_epoch(tp, epoch)
            for b in self.accumulator.batches.get(tp, ()):
                if b.attempts > 0 and b.retry_at_ms > now:
                    b.retry_at_ms = now

    def retry_or_fail(self, b: ProducerBatch, err: str, base_offset: int = -1,
                      log_start_offset: int = -1) -> None:
        """A batch answered with ``err`` (or whose request failed), by Sender.completeBatch:
        re-enqueued when it can be retried (``can_retry``); DUPLICATE_SEQUENCE_NUMBER (1.0+)
        completes it as a success with the answer's offset (-1: the broker no longer knows
        it); else it fails, adjusting sequences only if it had retries left
        (``batch.attempts() < retries``: else the broker may have its sequence)."""
        fut = b.produce_future
        if fut.status != PENDING:   # it expired in flight (delivery.timeout.ms): done already
            return
        if fut.errors is NO_ERRORS:
            fut.errors = [err]
        else:
            fut.errors.append(err)
        tm = self.transaction_manager
        if err == E.OUT_OF_ORDER_SEQUENCE_NUMBER and not tm.kip360 and \
                not tm.legacy.can_retry_out_of_order(self.producer, b):
            self.batch_done(b, FAILED, err, -1)
            return
        if self.can_retry(b, err, log_start_offset):
            if not tm.kip360 and tm.legacy.drained_under_old_producer_id(b):
                self.batch_done(b, FAILED, E.OUT_OF_ORDER_SEQUENCE_NUMBER, -1)
                return
            self.reenqueue_batch(b)
        elif err == E.DUPLICATE_SEQUENCE_NUMBER and \
                self.rules.idempotent_duplicate_sequence_completes:
            self.complete(b, base_offset)
        else:
            retriable = err in E.RETRIABLE
            self.fail_batch(b, err if (not retriable or b.attempts > self.retries)
                            else E.DELIVERY_TIMEOUT, b.attempts <= self.retries)

    def can_retry(self, b: ProducerBatch, err: str, log_start_offset: int = -1) -> bool:
        """Sender.canRetry: an attempt left within ``retries``, ``delivery.timeout.ms`` not
        reached, and an error to retry: an idempotent producer's TransactionManager.canRetry
        (2.5+), else a retriable error (and, 1.0+, UNKNOWN_PRODUCER_ID for an idempotent
        producer, by TransactionManager.canRetry @2.4.0 and the answer's log start offset:
        ``IdempotenceBeforeKip360.can_retry_unknown_producer_id``)."""
        now = self.cluster.engine.now
        if b.attempts > self.retries or (
                self.delivery_timeout_ms is not None and
                b.has_reached_delivery_timeout(self.delivery_timeout_ms, now)):
            return False
        tm = self.transaction_manager
        if tm.idempotent and tm.kip360:
            return tm.can_retry(err, b, log_start_offset)
        return err in E.RETRIABLE or (
            err == E.UNKNOWN_PRODUCER_ID and tm.idempotent and
            self.rules.idempotent_unknown_producer_id_retried and
            tm.legacy.can_retry_unknown_producer_id(b, log_start_offset))

    def reenqueue_batch(self, b: ProducerBatch) -> None:
        """Sender.reenqueueBatch: back to the accumulator, due at the end of its retry backoff
        (``RecordAccumulator.reenqueue``). The cached leader stays: after the backoff the batch
        goes to whatever leader the metadata names then -- the same one again if no answer has
        replaced it, as Kafka's (an error saying the metadata is stale asks for new metadata in
        ``complete_batch``)."""
        now = self.cluster.engine.now
        self.accumulator.reenqueue(b, now)
        self.wakeup(b.retry_at_ms - now)

    def fail_batch(self, b: ProducerBatch, err: str, adjust_sequence_numbers: bool = True
                   ) -> None:
        """Sender.failBatch: the batch fails with ``err``; a sequenced one of an idempotent
        producer goes to TransactionManager.handleFailedBatch (2.5+: an epoch bump requested
        when it leaves a gap). Before 2.5: UNKNOWN_PRODUCER_ID (an OutOfOrderSequenceException)
        resets the producer id (``reset_producer_id_for``); a fatal error (before 2.7 also
        INVALID_PRODUCER_EPOCH: a ProducerFencedException) first leaves the producer in its fatal
        state (Sender.failBatch 0.11-1.1, maybeTransitionToErrorState); for any other error,
        0.11 counted sequences on success only, so the partition's next batch takes the failed
        one's sequence again (``IdempotenceBeforeKip360.release_sequence_of_failed_batch``);
        1.0+ (KAFKA-5494) drops the batch from the in-flight ones and moves the later sequences
        of its partition down (``IdempotenceBeforeKip360.handle_failed_batch``)."""
        done = self.batch_done(b, FAILED, err, -1)
        tm = self.transaction_manager
        if not tm.kip360 and tm.idempotent:   # (2.5+: in handle_failed_batch)
            tm.maybe_transition_to_error_state(err)
        if b.base_seq < 0:
            return
        if not tm.kip360 and err == E.UNKNOWN_PRODUCER_ID:
            tm.legacy.reset_producer_id_for(self.producer, b)
        elif not tm.kip360 and self.rules.idempotent_out_of_order_retried_when_not_next:
            tm.legacy.handle_failed_batch(b, adjust_sequence_numbers)
        elif not tm.kip360:
            tm.legacy.release_sequence_of_failed_batch(b)
        elif done:
            tm.handle_failed_batch(b, err, adjust_sequence_numbers)

    def get_expired_inflight_batches(self) -> None:
        """Sender.getExpiredInflightBatches: a sent batch delivery.timeout.ms old fails with a
        TimeoutException while its request is still in flight; the request keeps its slot
        (max.in.flight.requests.per.connection) and its answer, when it comes, is ignored."""
        now = self.cluster.engine.now
        limit = self.delivery_timeout_ms
        expired = [b for b in self._pending_in_flight()
                   if b.has_reached_delivery_timeout(limit, now)]
        for b in sorted(expired, key=lambda b: (b.created_ms, b.tp)):
            self.fail_expired_batch(b)

    def _pending_in_flight(self):
        """The unanswered batches of the requests on the wire (one that expired in flight is
        done, though its request keeps its slot)."""
        return (b for entry in self.in_flight.values() for b in entry[3].values()
                if b.produce_future.status == PENDING)

    def fail_request(self, corr: int, err: str) -> bool:
        """Request ``corr`` failed (timed out, or its connection broke): each of its batches is
        retried or fails with ``err`` (Sender.handleProduceResponse: completeBatch with
        REQUEST_TIMED_OUT or NETWORK_EXCEPTION); False when it was not in flight. The
        partitions' cached leaders stay: a disconnect only asks for new metadata
        (Metadata.requestUpdate, from NetworkClient.processDisconnection and from
        Sender.completeBatch for an InvalidMetadataException; Sender.java:593-598, :705-723
        @3.9.0-rc3, the same since 0.8.2.2), and the leader changes when the metadata that
        names another one arrives. Before, kafkasim forgot the leaders of a disconnected
        request's batches."""
        entry = self.release(corr)
        if entry is None:
            return False
        for b in entry[1].values():
            self.complete_batch(b, err, -1)
        return True
