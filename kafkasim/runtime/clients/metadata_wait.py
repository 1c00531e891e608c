"""The producer's wait for a topic's metadata: KafkaProducer.waitOnMetadata, as a simulator does it.

Kafka's ``send`` first makes sure its metadata knows the record's topic (and, from 2.1, its
partition: KAFKA-6833): it adds the topic to the producer's metadata (ProducerMetadata.add),
asks for an update (requestUpdateForTopic), wakes the sender and blocks its caller until an
update brings the topic, asking again after each update that does not, for at most
``max.block.ms`` (0.8.2: ``metadata.fetch.timeout.ms``; 0.9 and 0.10 take that deprecated key
over ``max.block.ms`` when it is set). Then the record is appended as any other. If the time
runs out, ``send`` returns a future failed with a TimeoutException ("Topic %s not present in
metadata after %d ms."; before 2.1 "Failed to update metadata after %d ms."): doSend catches the
ApiException, completes the callback and the interceptors with it and returns a FutureFailure.
From 2.1 (KAFKA-5098) a metadata answer that calls the topic invalid (INVALID_TOPIC_EXCEPTION)
ends the wait with an InvalidTopicException the same way.

A simulated ``send`` cannot block its caller for simulated time, so the record waits instead:
it gets its record id and a pending ``ProduceResult`` at once (the run of records it heads holds
a result of its own, ``MetadataWait.result``), the producer asks for metadata naming the topic,
and each metadata answer is checked. When one brings the topic (and the partition) in time, the
records go to the accumulator exactly as a send would have put them there then, and their
results become their batch's. When ``max.block.ms`` passes first, the result fails with
Kafka's exception and message; for a learner kafkasim adds what the cluster knows (the topic
does not exist, did you mean another; the partitions it has). A producer closed while a send
waits fails it with a KafkaException ("Producer closed while send in progress.",
KafkaProducer.doSend when ``metadata.isClosed()``).

A send to a topic kafkasim's cluster has (and a partition it has) does not wait here: the
producer's first metadata answer comes within a round trip, and meanwhile the records wait in
the accumulator for a leader, as testMetadataFetch describes.
"""

from __future__ import annotations

import difflib
from typing import NamedTuple

from kafkasim.core import errors as E
from kafkasim.core.errors import ApiException, IllegalStateException, KafkaException
from kafkasim.runtime.clients.produce_result import (
    ACKED,
    FAILED,
    NO_ERRORS,
    PENDING,
    ProduceRequestResult,
)
from kafkasim.settings import limits

#: KafkaProducer.doSend's message for a send waiting on metadata when the producer closes
CLOSED_WHILE_WAITING = "Producer closed while send in progress"


class MetadataWait:
    """One send waiting for its topic's metadata: the records ``first .. end - 1`` (one
    ``send`` or ``send_many``), their key and partition (None: the partitioner picks it once
    the count is known), when they were sent, when the wait ends (``deadline_ms``), their run
    in the producer's results and its pending result."""

    __slots__ = ("topic", "partition", "key", "first", "end", "sent_ms", "deadline_ms", "run",
                 "result", "last_error")

    def __init__(self, topic: str, partition: int | None, key, first: int, end: int,
                 sent_ms: int, deadline_ms: int, run: tuple,
                 result: ProduceRequestResult) -> None:
        self.topic = topic
        self.partition = partition
        self.key = key
        self.first = first
        self.end = end
        self.sent_ms = sent_ms
        self.deadline_ms = deadline_ms
        self.run = run
        self.result = result
        # the error the last metadata answer gave for the topic (Metadata.getError: the cause
        # of the TimeoutException), None when it gave none
        self.last_error: str | None = None

    def __reduce__(self):
        return (_wait, (self.topic, self.partition, self.key, self.first, self.end,
                        self.sent_ms, self.deadline_ms, self.run, self.result, self.last_error))


def _wait(*fields) -> MetadataWait:
    wait = MetadataWait(*fields[:-1])
    wait.last_error = fields[-1]
    return wait


class PartitionInfo(NamedTuple):
    """What KafkaProducer.partitionsFor returns of a partition here: its topic, index and
    leader (the producer's metadata keeps no replicas or ISR; -1: no leader known)."""

    topic: str
    partition: int
    leader: int


def max_block_ms(config: dict, explicit) -> int:
    """KafkaProducer's ``maxBlockTimeMs`` for the metadata wait: ``metadata.fetch.timeout.ms``
    at 0.8.2 (no ``max.block.ms`` yet); at 0.9 and 0.10 that deprecated key when the user set
    it (``explicit``: the keys given), else ``max.block.ms``."""
    if "max.block.ms" not in config:
        return config["metadata.fetch.timeout.ms"]
    if "metadata.fetch.timeout.ms" in config and "metadata.fetch.timeout.ms" in explicit:
        return config["metadata.fetch.timeout.ms"]
    return config["max.block.ms"]


def must_wait(producer, topic: str, partition, n: int | None) -> bool:
    """Whether a send to ``topic`` (``n`` partitions in kafkasim's cluster, None: no such
    topic) and ``partition`` waits for metadata: an unknown topic always; a partition past the
    count from 2.1 (KAFKA-6833; before, the send is refused at once). A partition that is not
    a non-negative int is the caller's error (ProducerRecord: IllegalArgumentException) and is
    refused at once."""
    if partition is not None and (isinstance(partition, bool) or not isinstance(partition, int)
                                  or partition < 0):
        return False
    if n is None:
        return True
    return partition is not None and partition >= n and \
        producer.cluster.rules.clients.producer_waits_for_partition_metadata


def wait_on_metadata(producer, topic: str, first: int, end: int, key,
                     partition: int | None) -> None:
    """KafkaProducer.waitOnMetadata for a send: records ``first .. end - 1`` (their ids just
    made) wait for ``topic``'s metadata: their run gets a pending result of its own, the
    producer asks for metadata naming the topic (requestUpdateForTopic; within its refresh
    backoff), and the wait ends after ``max.block.ms``."""
    now = producer.cluster.engine.now
    result = ProduceRequestResult(topic, -1 if partition is None else partition, PENDING, -1,
                                  None, 0, NO_ERRORS)
    run = (first, end - first, now, result, 0)
    results = producer.results
    results.runs.append(run)
    results.count += end - first
    producer.n_pending += end - first
    wait = MetadataWait(topic, partition, key, first, end, now, now + producer.max_block_ms,
                        run, result)
    producer.metadata_waits.append(wait)
    if _known_invalid(producer, topic):
        fail(producer, wait, E.INVALID_TOPIC_EXCEPTION, topic)   # InvalidTopicException(topic)
        return
    producer._refresh_metadata()
    if producer.max_block_ms == 0:
        # Metadata.awaitUpdate(version, 0) times out at once: the send's future has failed
        # when send returns (the update asked for still goes out)
        on_max_block_elapsed(producer, wait)
    elif producer.max_block_ms <= limits.MAX_TIME_MS:   # (longer: it never ends in a run)
        producer._schedule(producer.max_block_ms, on_max_block_elapsed, wait)


def _known_invalid(producer, topic: str) -> bool:
    """waitOnMetadata's first check (2.1+, KAFKA-5098): the cached metadata already calls the
    topic invalid (Cluster.invalidTopics), so the send fails at once, without a request."""
    return topic in producer.metadata.invalid_topics and \
        producer.cluster.rules.clients.producer_rejects_invalid_topics


def request_topics(producer) -> tuple[str, ...]:
    """The topics a MetadataRequest names: none (every topic) while no send waits, as kafkasim's
    producer asks; else the producer's topics and the ones sends wait for (ProducerMetadata's
    topics: a Metadata request for all topics would not name a missing one)."""
    waits = producer.metadata_waits
    if not waits:
        return ()
    topics = set(producer.partition_counts)
    topics.update(tp[0] for tp in producer.batches)
    topics.update(w.topic for w in waits)
    return tuple(sorted(topics))


def on_metadata(producer, rows) -> None:
    """A metadata answer arrived (its rows already taken into the producer's metadata): every
    waiting send whose topic (and partition) it brings goes on; one whose topic it calls
    invalid fails (2.1+, KAFKA-5098); while sends still wait, another update is asked for
    (the loop of waitOnMetadata; the refresh backoff spaces them)."""
    waits = producer.metadata_waits
    if not waits:
        return
    errors = {row[0]: row[2] for row in rows if row[1] < 0}
    counts = producer.partition_counts
    rules = producer.cluster.rules.clients
    for wait in list(waits):
        wait.last_error = errors.get(wait.topic)
        if wait.last_error == E.INVALID_TOPIC_EXCEPTION and \
                rules.producer_rejects_invalid_topics:
            # Metadata.maybeThrowExceptionForTopic: InvalidTopicException(Set)
            fail(producer, wait, E.INVALID_TOPIC_EXCEPTION, f"Invalid topics: [{wait.topic}]")
            continue
        n = counts.get(wait.topic)
        if not n:
            continue
        if wait.partition is None or wait.partition < n:
            _proceed(producer, wait, n)
        elif not rules.producer_waits_for_partition_metadata:
            # waitOnMetadata before 2.1: the topic is known, the partition is past its count
            fail(producer, wait, E.PRODUCER_CLOSED_FORCEFULLY,
                 f"Invalid partition given with record: {wait.partition} is not in the range "
                 f"[0...{n}).")
    if waits:
        producer._refresh_metadata()


def on_max_block_elapsed(producer, wait: MetadataWait) -> None:
    """``max.block.ms`` passed and the send still waits (a timer of the producer's): its
    result fails with a TimeoutException (Metadata.awaitUpdate timed out)."""
    if wait.result.status != PENDING or wait not in producer.metadata_waits:
        return
    fail(producer, wait, E.DELIVERY_TIMEOUT, timeout_message(producer, wait))


def timeout_message(producer, wait: MetadataWait) -> str:
    """The TimeoutException's message, and what kafkasim's cluster knows of the topic."""
    ms = producer.max_block_ms
    n = producer.partition_counts.get(wait.topic)
    rules = producer.cluster.rules.clients
    if not rules.producer_waits_for_partition_metadata:
        msg = f"Failed to update metadata after {ms} ms."
    elif n and wait.partition is not None and rules.producer_metadata_timeout_names_partition:
        msg = (f"Partition {wait.partition} of topic {wait.topic} with partition count {n} is "
               f"not present in metadata after {ms} ms.")
    else:
        msg = f"Topic {wait.topic} not present in metadata after {ms} ms."
    return f"{msg} {_hint(producer.cluster.topics, wait.topic, wait.partition)}"


def _hint(topics, topic: str, partition: int | None) -> str:
    """kafkasim's word to a learner: the topic does not exist (did you mean a close name?), or
    the partitions it has."""
    n = topics.partition_counts.get(topic)
    if n is None:
        close = difflib.get_close_matches(topic, topics.names(), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        return f"(Topic '{topic}' does not exist.{hint})"
    if partition is not None and partition >= n:
        return (f"(Topic '{topic}' has partitions 0..{n - 1}; partition {partition} does not "
                "exist.)")
    return f"(Topic '{topic}' exists: its metadata did not reach the producer in time.)"


def fail(producer, wait: MetadataWait, error: str, message: str) -> None:
    """The waiting send's result fails with ``error`` (doSend's FutureFailure; the callback and
    interceptors would see it now): one ``produce_result`` trace row per record."""
    producer.metadata_waits.remove(wait)
    now = producer.cluster.engine.now
    result = wait.result
    result.status = FAILED
    result.error = error
    result.message = message
    result.done_ms = now
    producer.n_pending -= wait.end - wait.first
    producer.cluster.trace.rows.extend(
        (now, "produce_result", producer.client_id, wait.topic, result.partition,
         (rid, FAILED, error)) for rid in range(wait.first, wait.end))


def fail_all_on_close(producer) -> None:
    """The producer closed while sends wait: each fails with a KafkaException (doSend: the
    metadata is closed)."""
    for wait in list(producer.metadata_waits):
        fail(producer, wait, E.PRODUCER_CLOSED_FORCEFULLY, CLOSED_WHILE_WAITING)


def _proceed(producer, wait: MetadataWait, n: int) -> None:
    """The metadata brought the topic and partition: the records are appended now (the rest of
    doSend), their run replaced by the runs of the batches they went to."""
    producer.metadata_waits.remove(wait)
    if wait.run is None:   # partitionsFor's wait: nothing to send
        wait.result.status = ACKED
        return
    partition = wait.partition
    if partition is None:
        partition = producer._partition_for(wait.topic, wait.key, n)
    runs: list = []
    try:
        producer._append((wait.topic, partition), wait.first, wait.end, runs)
    except KafkaException:
        # (3.2+) the transaction manager is in its fatal state: Kafka throws to the blocked
        # caller; the records appended are aborted by the sender as for any send then
        pass
    _replace_run(producer.results, wait.run,
                 [(f, k, wait.sent_ms, fut, i) for f, k, _t, fut, i in runs])


def _replace_run(results, run: tuple, new_runs: list) -> None:
    """Put ``new_runs`` (the same records, in order) where ``run`` is in ``results.runs`` (a
    pending run: never among the settled columns), and point the ProduceResults built for its
    records at their batches."""
    live = results.runs
    for i, r in enumerate(list.__iter__(live)):
        if r[0] == run[0]:   # (a record id is in one run only)
            list.__setitem__(live, slice(i, i + 1), new_runs)
            break
    views = results.views
    for first, k, _sent, fut, index in new_runs:
        for rid in range(first, first + k):
            view = views.get(rid)
            if view is not None:
                view.result = fut
                view.batch_index = index + rid - first


def partitions_for(producer, topic: str) -> list[PartitionInfo]:
    """KafkaProducer.partitionsFor: waitOnMetadata(topic, no partition) and the topic's
    partitions. Like ``flush``, a call that blocks in Kafka runs the simulation here: until an
    answer brings the topic, for at most ``max.block.ms``; then (or when the metadata calls the
    topic invalid, 2.1+) it raises the ApiException Kafka throws (TimeoutException, its cause
    the topic's last metadata error; InvalidTopicException). A topic that is not a string is
    the caller's error (Kafka: NullPointerException "topic cannot be null")."""
    c = producer.cluster
    if type(topic) is not str:
        c.topics.check_topic(topic)
    if not producer.sender.running:
        raise IllegalStateException("Cannot perform operation after producer has been closed")
    if _known_invalid(producer, topic):
        raise ApiException(E.INVALID_TOPIC_EXCEPTION, topic)
    if topic not in producer.partition_counts:
        now = c.engine.now
        wait = MetadataWait(topic, None, None, 0, 0, now, now + producer.max_block_ms, None,
                            ProduceRequestResult(topic, -1, PENDING, -1, None, 0, NO_ERRORS))
        producer.metadata_waits.append(wait)
        if producer.max_block_ms <= limits.MAX_TIME_MS:
            producer._schedule(producer.max_block_ms, on_max_block_elapsed, wait)
        producer._refresh_metadata()
        c.run_until(lambda _c: wait.result.status != PENDING,
                    min(producer.max_block_ms, limits.MAX_TIME_MS))
        _raise_if_failed(producer, wait)
    leaders = producer.leaders
    return [PartitionInfo(topic, p, leaders.get((topic, p), -1))
            for p in range(producer.partition_counts[topic])]


def _raise_if_failed(producer, wait: MetadataWait) -> None:
    """partitionsFor's wait ended without the topic: Kafka's exception, thrown."""
    result = wait.result
    if result.status == PENDING:   # (a max.block.ms past kafkasim's longest run)
        fail(producer, wait, E.DELIVERY_TIMEOUT, timeout_message(producer, wait))
    if result.status != FAILED:
        return
    exc = ApiException(result.error, result.message)
    if result.error == E.DELIVERY_TIMEOUT and wait.last_error is not None:
        raise exc from ApiException(wait.last_error)   # TimeoutException(message, cause)
    raise exc
