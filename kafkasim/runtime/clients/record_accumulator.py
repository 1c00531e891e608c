"""The producer's queues of batches, one per partition: Kafka's ``RecordAccumulator``.

``append`` puts a run of records into the partition's open batch and new ones; the sender asks
``ready`` which leaders have a batch to send and when the next one will, then ``drain`` takes the
first batch of each partition led by a node it can send to (lingering or not: a node is ready
when one of its partitions is). With max.in.flight.requests.per.connection 1 the sender mutes a
partition while its batch is in flight (``mute_partition``, 0.10.0+). A retried batch goes back with
``reenqueue``, in sequence order; ``expired_batches`` takes out those past
``delivery.timeout.ms`` (KIP-91, 2.1+), or before 2.1 those that waited in the queue longer than
``request.timeout.ms`` (KIP-19, ``ExpiryRule``). Every batch made and not yet done, queued or in
flight, is in ``incomplete`` (``IncompleteBatches``) until the sender ``deallocate``s it: a flush
(``begin_flush`` .. ``await_flush_completion``) makes every batch sendable at once and waits for
those, a closed accumulator (``close``) sends every batch at once, and a forced close fails them
(``abort_incomplete_batches``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafkasim.core import errors as E
from kafkasim.runtime.clients.produce_result import NO_ERRORS, PENDING, ProduceRequestResult
from kafkasim.runtime.clients.producer_batch import RECORD_SIZE, ProducerBatch
from kafkasim.runtime.clients.producer_metadata import RetryBackoff
from kafkasim.runtime.clients.transaction_manager import TransactionManager

TopicPartition = tuple[str, int]


class ReadyCheckResult(NamedTuple):
    """RecordAccumulator.ReadyCheckResult: the leaders with a batch ready to send (in the order
    their partitions were found: a dict used as an ordered set), how long until the next batch
    that is not ready yet will be (None: none waits) and the topics of ready batches whose
    leader is unknown (in the order found)."""

    ready_nodes: dict[int, None]
    next_ready_check_delay_ms: int | None
    unknown_leader_topics: list[str]


class ExpiryRule(NamedTuple):
    """How a 0.9-2.0 accumulator expires queued batches by ``request.timeout.ms`` (before
    KIP-91's delivery timeout): ``in_queue_order`` is KAFKA-3388's walk (0.10.0+: stop at a
    queue's first live batch, skip muted partitions, a retry's backoff counts), else 0.9.0's."""

    request_timeout_ms: int
    in_queue_order: bool = True


class IncompleteBatches:
    """Kafka's IncompleteBatches: the batches made and not yet done (queued, in flight or
    re-enqueued), oldest first, keyed by identity (a ProducerBatch compares by value)."""

    __slots__ = ("batches",)

    def __init__(self, batches=()) -> None:
        self.batches: dict[int, ProducerBatch] = {id(b): b for b in batches}

    def __reduce__(self):
        # the keys are identities: a copy or a restore keys its own batches anew
        return (IncompleteBatches, (list(self.batches.values()),))

    def add(self, batch: ProducerBatch) -> None:
        self.batches[id(batch)] = batch

    def remove(self, batch: ProducerBatch) -> None:
        """IncompleteBatches.remove (a batch not in the set: nothing)."""
        self.batches.pop(id(batch), None)

    def copy_all(self) -> list[ProducerBatch]:
        return list(self.batches.values())

    def request_results(self) -> list[ProduceRequestResult]:
        """IncompleteBatches.requestResults: each batch's result, what a flush waits for."""
        return [b.produce_future for b in self.batches.values()]

    def is_empty(self) -> bool:
        return not self.batches


def skip_backoff_on_new_leader(batch: ProducerBatch, leader_epoch: int | None, now: int
                               ) -> None:
    """RecordAccumulator.ready / drainBatchesForOneNode (3.7+, KAFKA-15415): the first batch
    of a partition takes the metadata's leader epoch (ProducerBatch.maybeUpdateLeaderEpoch);
    a retry whose leader changed for this attempt is not backed off (shouldBackoff:
    ``!hasLeaderChanged && shouldWaitMore``): it is due now."""
    batch.maybe_update_leader_epoch(leader_epoch)
    if batch.retry_at_ms > now and batch.has_leader_changed_for_the_ongoing_retry():
        batch.retry_at_ms = now


class RecordAccumulator:
    """Per-partition queues of ``ProducerBatch``; the first batch of a queue is the next to go.

    Kafka's constructor's settings, in its order: ``batch.size``, ``linger.ms``, the retry
    backoff (``retry_backoff``: a ``RetryBackoff``, by default KIP-580's over
    ``retry.backoff.ms`` 100 and ``retry.backoff.max.ms`` 1000), ``delivery.timeout.ms``
    (None: the 2.0-and-older producer, which has none) and the idempotent producer's
    ``TransactionManager`` (None: not idempotent); then ``request_timeout_expiry``, the
    0.9-2.0 producer's ``ExpiryRule`` (None: none, as in 0.8.2 and from 2.1)."""

    def __init__(self, batch_size: int = 16384, linger_ms: int = 0,
                 retry_backoff: RetryBackoff | None = None,
                 delivery_timeout_ms: int | None = 120_000,
                 transaction_manager: TransactionManager | None = None,
                 request_timeout_expiry: ExpiryRule | None = None) -> None:
        self.batch_size = batch_size
        self.linger_ms = linger_ms
        self.retry_backoff = retry_backoff if retry_backoff is not None else \
            RetryBackoff.of(100, 1000)
        self.delivery_timeout_ms = delivery_timeout_ms
        tm = transaction_manager
        self.transaction_manager = tm if tm is not None and tm.idempotent else None
        self.request_timeout_expiry = request_timeout_expiry
        self.batches: dict[TopicPartition, list[ProducerBatch]] = {}
        # RecordAccumulator.muted: partitions with a batch in flight under
        # max.in.flight.requests.per.connection 1 (membership only)
        self.muted: set[TopicPartition] = set()
        self.incomplete = IncompleteBatches()
        # callers of begin_flush whose await_flush_completion has not returned
        self.flushes_in_progress = 0
        self.closed = False   # close(): the producer is shutting down

    def begin_flush(self) -> None:
        """RecordAccumulator.beginFlush: every batch is sendable at once (linger.ms or not)
        until the matching ``await_flush_completion`` returns."""
        self.flushes_in_progress += 1

    def flush_in_progress(self) -> bool:
        """RecordAccumulator.flushInProgress."""
        return self.flushes_in_progress > 0

    def await_flush_completion(self, wait: Callable[[list[ProduceRequestResult]], bool] | None
                               = None) -> bool:
        """RecordAccumulator.awaitFlushCompletion: wait for the results of the batches that are
        incomplete now (``wait(results)`` runs the simulation until they are done, True when
        they all are; without it, nothing can move: True when they are done already). The
        flush ends either way, even when ``wait`` raises."""
        results = self.incomplete.request_results()
        try:
            if wait is None:
                return all(r.status != PENDING for r in results)
            return wait(results)
        finally:
            self.flushes_in_progress -= 1

    def has_incomplete(self) -> bool:
        """RecordAccumulator.hasIncomplete: a batch made and not yet done, sent or not."""
        return not self.incomplete.is_empty()

    def has_undrained(self) -> bool:
        """RecordAccumulator.hasUndrained: a batch still queued (never sent, or to retry)."""
        return any(self.batches.values())

    def deallocate(self, batch: ProducerBatch) -> None:
        """RecordAccumulator.deallocate: the batch is done with (completed, failed or aborted)."""
        self.incomplete.remove(batch)

    def close(self) -> None:
        """RecordAccumulator.close: from now every batch is sendable at once."""
        self.closed = True

    def abort_incomplete_batches(self, now: int = 0, error: str = E.PRODUCER_CLOSED_FORCEFULLY
                                 ) -> list[ProducerBatch]:
        """RecordAccumulator.abortIncompleteBatches (a forced close): every incomplete batch,
        queued or in flight, fails with ``error`` (KafkaException "Producer is closed
        forcefully.") and leaves its queue; the batches aborted, for the sender to report."""
        aborted = [b for b in self.incomplete.copy_all() if b.abort(error, now)]
        self.incomplete = IncompleteBatches()
        for queue in self.batches.values():   # (every queued batch was incomplete)
            queue.clear()
        return aborted

    def mute_partition(self, tp: TopicPartition) -> None:
        """RecordAccumulator.mutePartition: nothing of ``tp`` is ready or drained until
        ``unmute_partition``."""
        self.muted.add(tp)

    def unmute_partition(self, tp: TopicPartition) -> None:
        """RecordAccumulator.unmutePartition."""
        self.muted.discard(tp)

    def get_deque(self, tp: TopicPartition) -> list[ProducerBatch] | None:
        """RecordAccumulator.getDeque: the partition's queue (None before its first batch)."""
        return self.batches.get(tp)

    def append(self, tp: TopicPartition, first: int, end: int, now: int,
               runs: list | None = None) -> bool:
        """RecordAccumulator.append of records ``first .. end - 1``: into the partition's last
        batch while it has room (``(records + 1) * RECORD_SIZE <= batch.size``; a retried batch
        takes no new records), then into new ones (a new batch takes at least one). Each piece
        is one run of ``runs`` (the records' FutureRecordMetadata: the batch's result and the
        index in it). True when it opened a batch."""
        if runs is None:
            runs = []
        queue = self.batches.setdefault(tp, [])
        cap = self.batch_size // RECORD_SIZE
        batch = queue[-1] if queue and queue[-1].attempts == 0 else None
        index = len(batch.record_ids) if batch is not None else 0
        opened = False
        rid = first
        while rid < end:
            if batch is None or index >= cap:
                fut = ProduceRequestResult(tp[0], tp[1], PENDING, -1, None, 0, NO_ERRORS)
                batch = ProducerBatch(tp, [], now, fut)
                queue.append(batch)
                self.incomplete.batches[id(batch)] = batch   # (IncompleteBatches.add)
                index = 0
                opened = True
            take = cap - index if cap > index else 1
            stop = rid + take if take < end - rid else end
            batch.record_ids.extend(range(rid, stop))
            batch.last_append_ms = now
            runs.append((rid, stop - rid, now, batch.produce_future, index))
            index += stop - rid
            rid = stop
        return opened

    def time_left_ms(self, queue: list[ProducerBatch], now: int) -> int:
        """RecordAccumulator.batchReady's ``timeLeftMs`` for the first batch of a partition's
        (non-empty) ``queue``: 0 when it may be sent now, else how long it still waits. A retry
        waits for the end of its backoff (``retry_at_ms``), full or not: Kafka sends a batch
        when ``sendable && !backingOff``, and drain skips a batch still backing off. A first
        attempt waits ``linger.ms`` from its creation, unless it is full (``batch.size``:
        ProducerBatch.isFull, or another batch follows it: ``dequeSize > 1``), a flush is in
        progress or the accumulator is closed (batchReady's ``sendable``)."""
        batch = queue[0]
        if batch.attempts:
            return batch.retry_at_ms - now if batch.retry_at_ms > now else 0
        if len(queue) > 1 or len(batch.record_ids) * RECORD_SIZE >= self.batch_size or \
                self.flushes_in_progress or self.closed:
            return 0
        ready_at = batch.created_ms + self.linger_ms
        return ready_at - now if ready_at > now else 0

    def ready(self, leaders: dict[TopicPartition, int], now: int,
              leader_epochs: dict[TopicPartition, int] | None = None) -> ReadyCheckResult:
        """RecordAccumulator.ready: the leaders of the partitions whose first batch may be sent
        now, by the producer's metadata (``leaders``; -1: unknown). A muted partition with a
        known leader counts for nothing (batchReady's ``!isMuted(part)``). With the
        metadata's ``leader_epochs`` (3.7+, KAFKA-15415) a retry whose leader epoch moved
        since its last attempt is not backed off (``skip_backoff_on_new_leader``)."""
        ready_nodes: dict[int, None] = {}
        next_delay = None
        unknown: list[str] = []
        muted = self.muted
        for tp, queue in self.batches.items():
            if not queue or (muted and tp in muted and leaders.get(tp, -1) >= 0):
                continue
            if leader_epochs is not None:
                skip_backoff_on_new_leader(queue[0], leader_epochs.get(tp), now)
            left = self.time_left_ms(queue, now)
            if left:
                if next_delay is None or left < next_delay:
                    next_delay = left
                continue
            leader = leaders.get(tp, -1)
            if leader >= 0:
                ready_nodes[leader] = None
            elif tp[0] not in unknown:
                unknown.append(tp[0])
        return ReadyCheckResult(ready_nodes, next_delay, unknown)

    def drain(self, leaders: dict[TopicPartition, int], nodes, now: int,
              leader_epochs: dict[TopicPartition, int] | None = None
              ) -> dict[int, dict[TopicPartition, ProducerBatch]]:
        """RecordAccumulator.drain / drainBatchesForOneNode: for each node of ``nodes`` (the
        ready ones the sender can send to), the first batch of each partition it leads, by
        node, each counting an attempt (``ProducerBatch.drained``). Kafka checks no linger.ms
        here: once a node is ready, every partition of it with a batch goes, lingering or not;
        it skips a muted partition and a retry still backing off. An idempotent producer's
        batch stays when ``TransactionManager.should_stop_drain`` says so
        (shouldStopDrainBatchesForPartition; Kafka then stops draining the node, ``break``,
        where kafkasim, which has no per-node drain order, goes on with its other partitions);
        a new batch gets its producer id, epoch and first sequence here, as in Kafka's
        drain. With ``leader_epochs`` (3.7+) each batch first takes its partition's leader
        epoch (ProducerBatch.maybeUpdateLeaderEpoch), so a retry to a new leader is not backed
        off."""
        tm = self.transaction_manager
        muted = self.muted
        drained: dict[int, dict[TopicPartition, ProducerBatch]] = {}
        for tp, queue in self.batches.items():
            if not queue or (muted and tp in muted):
                continue
            batch = queue[0]
            leader = leaders.get(tp, -1)
            if leader not in nodes:
                continue
            if leader_epochs is not None:
                skip_backoff_on_new_leader(batch, leader_epochs.get(tp), now)
            if batch.attempts and batch.retry_at_ms > now:
                continue
            if tm is not None:
                if tm.should_stop_drain(batch):
                    continue
                if batch.base_seq < 0:
                    tm.set_producer_state_at_drain(batch)
            batch.drained()
            drained.setdefault(leader, {})[tp] = queue.pop(0)
        return drained

    def reenqueue(self, batch: ProducerBatch, now: int) -> None:
        """RecordAccumulator.reenqueue: a batch to retry goes back first in its queue (a
        sequenced one in sequence order: insertInSequenceOrder, so retries keep it), due when
        its retry backoff ends (KIP-580 from 3.7: it grows with the batch's attempts)."""
        batch.retry_at_ms = now + self.retry_backoff.backoff(batch.attempts - 1)
        batch.reenqueued(now)
        queue = self.batches.setdefault(batch.tp, [])
        if batch.base_seq >= 0:
            i = 0
            while i < len(queue) and 0 <= queue[i].base_seq < batch.base_seq:
                i += 1
            queue.insert(i, batch)
        else:
            queue.insert(0, batch)

    def expired_batches(self, now: int, muted=()) -> list[ProducerBatch]:
        """RecordAccumulator.expiredBatches: take out the batches at the head of their queues
        that reached ``delivery.timeout.ms``; before 2.1, those that waited longer than
        ``request.timeout.ms`` (``ExpiryRule``; ``muted``: the partitions with a batch in
        flight under max.in.flight.requests.per.connection 1). None in 0.8.2."""
        expired: list[ProducerBatch] = []
        limit = self.delivery_timeout_ms
        if limit is None:
            if self.request_timeout_expiry is not None:
                self._expire_by_request_timeout(now, muted, expired)
            return expired
        for queue in self.batches.values():
            while queue and queue[0].has_reached_delivery_timeout(limit, now):
                expired.append(queue.pop(0))
        return expired

    def _expire_by_request_timeout(self, now: int, muted, expired: list) -> None:
        """RecordAccumulator.expiredBatches @0.10.0-2.0 (abortExpiredBatches @0.9.0): each
        queue from its head. A batch counts as full when it has no room, and from 0.10.0 also
        when another batch follows it."""
        rule = self.request_timeout_expiry
        timeout = rule.request_timeout_ms
        backoff = self.retry_backoff.exponential.initial_interval
        for tp, queue in self.batches.items():
            if not queue or (rule.in_queue_order and tp in muted):
                continue
            last = queue[-1]
            i = 0
            while i < len(queue):
                b = queue[i]
                full = len(b.record_ids) * RECORD_SIZE >= self.batch_size or \
                    (rule.in_queue_order and b is not last)
                if b.maybe_expire(timeout, backoff, now, self.linger_ms, full) \
                        if rule.in_queue_order else \
                        b.maybe_expire_0_9(timeout, now, self.linger_ms, full):
                    expired.append(queue.pop(i))
                elif rule.in_queue_order or not b.retry:
                    break   # stop at the first batch that has not expired (0.9: unless retried)
                else:
                    i += 1

    def oldest_created_ms(self) -> int | None:
        """The creation time of the oldest first batch of a queue (None: every queue is
        empty): RecordAccumulator.nextExpiryTimeMs is this plus ``delivery.timeout.ms``."""
        oldest = None
        for queue in self.batches.values():
            if queue and (oldest is None or queue[0].created_ms < oldest):
                oldest = queue[0].created_ms
        return oldest
