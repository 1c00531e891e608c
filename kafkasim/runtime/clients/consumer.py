"""The consumer: assigned partitions, position, committed offset, fetches bounded by the HW.

``poll`` is KafkaConsumer.poll(Duration) of the classic consumer (ClassicKafkaConsumer.poll
@3.9.0, KafkaConsumer.poll before): until it has records or ``timeout_ms`` passes, it updates the
positions, returns what the fetch buffer holds, else sends a Fetch to each leader (or preferred
read replica) without one in flight and waits for the next answer. A fetch outlives the poll that
sent it: its answer, if it comes between polls, waits in the fetch buffer and moves the position
only when a poll collects it. The position is the next offset to read; the committed offset
is what the group resumes from (fact sheet §13). Consumers read only below the high watermark the
leader serves with each response.

Since 2.3 (KIP-320, KAFKA-7747) a position also carries the epoch of the last record consumed and
the leader (id, epoch) it was established against (SubscriptionState.FetchPosition). When the
metadata shows another leader or epoch, ``poll`` first validates the position with
OffsetsForLeaderEpoch (Fetcher.validateOffsetsIfNeeded); an end offset below the position means
the log was truncated under the consumer (SubscriptionState.maybeCompleteValidation).

Committed offsets carry a leader epoch since 2.1 (KIP-320: OffsetCommit v6, OffsetFetch v5). Since
2.3 the consumer commits the epoch of the last consumed record (SubscriptionState.allConsumed), and
a position restored from a committed offset keeps that epoch and is validated before the first
fetch (ConsumerCoordinator.refreshCommittedOffsetsIfNeeded -> SubscriptionState.seekUnvalidated),
so a group restarting after an unclean election detects that its committed position was truncated.

Beside ``Consumer`` (KafkaConsumer), as in Kafka: ``FetchCollector`` turns Fetch answers into
records for ``poll`` (with the fetch buffer), ``OffsetFetcher`` validates and resets positions,
``ConsumerMetadata`` (consumer_metadata.py) builds its Metadata requests: the subscription's
topics, with allowAutoTopicCreation (``allow.auto.create.topics``, KIP-361, 2.3+).
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType

from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core.messages import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    MetadataResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from kafkasim.runtime import validation
from kafkasim.runtime.clients.consumer_metadata import (
    ConsumerMetadata,
    ensure_subscribed_assignment,
)
from kafkasim.runtime.clients.consumer_network_client import (
    DEFAULT_REQUEST_TIMEOUT_MS,
    ConsumerNetworkClient,
)
from kafkasim.runtime.clients.subscription_state import (
    EpochEndOffset,
    FetchPosition,
    LeaderAndEpoch,
    OffsetAndMetadata,
    OffsetResetStrategy,
    SubscriptionState,
)
from kafkasim.runtime.topics import invalid_topic_reason
from kafkasim.settings import config as kconfig
from kafkasim.settings.exceptions import ClusterError

#: OffsetsForLeaderEpoch / Fetch replica id of a consumer (FetchRequest.CONSUMER_REPLICA_ID)
CONSUMER_REPLICA_ID = -1
#: rounds of the poll loop without the clock moving before its network poll waits 1 ms
_IDLE_ROUNDS = 3


class InvalidOffsetException(RuntimeError):
    """org.apache.kafka.clients.consumer.InvalidOffsetException: the consumer has no valid
    position for ``partitions`` and ``auto.offset.reset`` is ``none``."""

    def __init__(self, message: str, partitions) -> None:
        super().__init__(message)
        self.partitions = sorted(partitions)


class NoOffsetForPartitionException(InvalidOffsetException):
    """No committed offset and auto.offset.reset=none (SubscriptionState.resetMissingPositions)."""


class OffsetOutOfRangeException(InvalidOffsetException):
    """OFFSET_OUT_OF_RANGE with auto.offset.reset=none (Fetcher): tp -> the fetch offset."""

    def __init__(self, offsets: dict) -> None:
        super().__init__(
            "Fetch position out of range and auto.offset.reset is none: "
            + ", ".join(f"{t}-{p} offset {o}" for (t, p), o in sorted(offsets.items())),
            offsets)
        self.offset_out_of_range_partitions = dict(offsets)


class LogTruncationException(OffsetOutOfRangeException):
    """KIP-320 (2.3+): validation found the log truncated below the position and
    auto.offset.reset is none. ``divergent_offsets``: tp -> (first offset known to diverge, its
    leader epoch), only for partitions where the leader could say (2.6+: an undefined answer
    raises without one). ``offset_out_of_range_partitions``: tp -> the fetch position (2.6+,
    KAFKA-10113), before: tp -> the divergent offset."""

    def __init__(self, positions: dict, divergent: dict, fetch_offsets: bool = True) -> None:
        InvalidOffsetException.__init__(
            self,
            "Truncation detected (auto.offset.reset is none): "
            + ", ".join(f"{t}-{p} at offset {positions[(t, p)]}"
                        + (f", diverging from offset {d[0]} (epoch {d[1]})" if d else "")
                        for (t, p), d in sorted(divergent.items())),
            divergent)
        self.divergent_offsets = {tp: d for tp, d in divergent.items() if d is not None}
        self.offset_out_of_range_partitions = dict(positions) if fetch_offsets else \
            {tp: d[0] for tp, d in self.divergent_offsets.items()}

# Keys older consumers lacked, with the behaviour they had (no poll limit before KIP-41, no
# isolation before KIP-98, 1 MiB per partition, no whole-response limit before KIP-74).
_CONSUMER_FALLBACKS = {
    "max.poll.records": 2**31 - 1,
    "isolation.level": "read_uncommitted",
    "max.partition.fetch.bytes": 1048576,
    "fetch.max.bytes": 2**31 - 1,
}


@dataclass(slots=True, frozen=True)
class ConsumerRecord:
    topic: str
    partition: int
    offset: int
    leader_epoch: int
    record_id: int
    value: object
    served_hw: int     # the high watermark in the response that carried this record


class Consumer:
    """KafkaConsumer: ``assign``, ``seek``, ``poll``, ``commit``, ``position``, ``committed``.

    Where it reads is its ``subscriptions`` (SubscriptionState): one state per assigned
    partition, with its FetchPosition. ``leaders`` / ``leader_epochs`` are what its metadata
    says of each partition's leader (-1: unknown)."""

    def __init__(self, cluster, client_id: str, config: dict) -> None:
        self.cluster = cluster
        self.client_id = client_id
        self.config = kconfig.consumer_config(config, cluster.kafka_version)
        for key, value in _CONSUMER_FALLBACKS.items():
            self.config.setdefault(key, value)
        self.group_id = self.config.get("group.id") or None
        self.subscriptions = SubscriptionState(
            OffsetResetStrategy.of(self.config["auto.offset.reset"]),
            detects_unknown_truncation=cluster.rules.clients.consumer_validation_undefined_resets)
        self.leaders: dict[tuple[str, int], int] = {}
        self.leader_epochs: dict[tuple[str, int], int] = {}   # from metadata (KIP-320)
        self.nodes: frozenset[int] | None = None   # the metadata's live brokers (None: no answer)
        self.replicas: dict[tuple[str, int], tuple[int, ...]] = {}   # from metadata
        self._metadata_update_requested = False
        # what its Metadata requests ask for (allow.auto.create.topics: KIP-361, 2.3+; the key
        # is absent before, when the consumer always allowed creation) and when they expire
        self.metadata = ConsumerMetadata(
            self.subscriptions, self.config.get("allow.auto.create.topics", True),
            self.config.get("metadata.max.age.ms", 300000))
        self.consumed: list[ConsumerRecord] = []
        self.fetch_collector = FetchCollector(self)
        self.offset_fetcher = OffsetFetcher(self)
        # its requests on the wire (ConsumerNetworkClient); fetches outlive the poll that sent
        # them, their answers wait in the fetch buffer
        self.client = ConsumerNetworkClient(
            cluster, client_id, self.config.get("request.timeout.ms", DEFAULT_REQUEST_TIMEOUT_MS))
        self.errors: list[tuple[int, str, int, str]] = []

    def __repr__(self) -> str:
        return (f"Consumer({self.client_id!r}, group={self.group_id!r}, "
                f"positions={dict(self.positions)})")

    @property
    def assignment(self) -> list[tuple[str, int]]:
        """The assigned partitions, in the order they were assigned."""
        return self.subscriptions.assigned_partitions_list()

    @property
    def positions(self) -> MappingProxyType:
        """Read-only: each assigned partition's next offset, for those that have one."""
        return MappingProxyType({tp: s.position.offset
                                 for tp, s in self.subscriptions.assignment.items()
                                 if s.position is not None})

    # -- assignment -----------------------------------------------------------------------------
    def assign(self, topic: str | list[tuple[str, int]],
               partitions: list[int] | None = None) -> None:
        """KafkaConsumer.assign: the assignment becomes ``topic``'s partitions (all of them by
        default), replacing what was assigned; ``topic`` may also be a list of (topic,
        partition) pairs, for partitions of several topics. A partition kept keeps its state;
        fetched data of a partition dropped is dropped (Fetcher
        .clearBufferedDataForUnassignedPartitions)."""
        wanted = self._partitions_to_assign(topic, partitions)
        self.subscriptions.assign_from_user(wanted)
        self.fetch_collector.clear_buffered_data_for_unassigned_partitions()

    def subscribe(self, topic: str | list[str] | list[tuple[str, int]],
                  partitions: list[int] | None = None) -> None:
        """KafkaConsumer.subscribe: ``topic`` is one topic name or a list of them; the
        consumer, its group's only member, is assigned every partition of each (given
        partitions or (topic, partition) pairs, it is ``assign``). A topic that does not exist
        yet is subscribed to all the same: ``poll`` asks for its metadata, which creates it
        when the consumer's allow.auto.create.topics (2.3+) and the broker's
        auto.create.topics.enable both allow (``ConsumerMetadata``), and assigns its
        partitions once the metadata shows them."""
        c = self.cluster
        if type(topic) is str and (partitions is not None or topic in c.topics.configs):
            self.assign(topic, partitions)
            return
        topics = [topic] if type(topic) is str else \
            sorted(topic) if isinstance(topic, (set, frozenset)) and \
            all(type(t) is str for t in topic) else topic
        if partitions is not None or not isinstance(topics, (list, tuple)) or \
                not all(type(t) is str for t in topics):
            self.assign(topic, partitions)   # (topic, partition) pairs, or its error
            return
        for t in topics:
            reason = invalid_topic_reason(t)
            if reason is not None:
                raise ClusterError(f"subscribe(topic): {reason} (INVALID_TOPIC_EXCEPTION)")
        self.assign([(t, p) for t in dict.fromkeys(topics) if t in c.topics.configs
                     for p in c.assignment(t)])
        self.subscriptions.subscribe(topics)
        if any(t not in c.topics.configs for t in topics):
            self._metadata_update_requested = True   # requestUpdateForNewTopics

    def unsubscribe(self) -> None:
        """KafkaConsumer.unsubscribe: no topic subscribed, no partition assigned; fetched data
        is dropped. ``poll`` then throws IllegalStateException until the next assign or
        subscribe."""
        self.subscriptions.unsubscribe()
        self.fetch_collector.clear_buffered_data_for_unassigned_partitions()

    def _partitions_to_assign(self, topic, partitions) -> list[tuple[str, int]]:
        """The (topic, partition) pairs ``assign`` names, checked against the cluster."""
        validation.check_partition_list("assign", partitions)
        c = self.cluster
        if type(topic) is str:
            if topic not in c.topics.configs:
                raise ClusterError(c.topics.unknown_topic_message(topic))
            parts = list(c.assignment(topic)) if partitions is None else list(partitions)
            pairs = [(topic, p) for p in parts]
        elif partitions is None and isinstance(topic, (list, tuple)) and all(
                isinstance(tp, tuple) and len(tp) == 2 and type(tp[0]) is str for tp in topic):
            pairs = list(topic)
        else:
            raise ClusterError(f"assign / subscribe: topic must be one topic name, such as "
                               f"'t', got {topic!r} ({type(topic).__name__}); or a list of "
                               f"(topic, partition) pairs, such as [('t', 0), ('u', 1)]")
        for t, p in pairs:
            if t not in c.topics.configs:
                raise ClusterError(c.topics.unknown_topic_message(t))
            c.topics.check_partition(t, p)
        return pairs

    def seek(self, topic: str, partition: int, offset: int) -> None:
        """KafkaConsumer.seek: the next poll reads from ``offset``; the position has no epoch,
        so nothing is validated, and is established against the leader the metadata names."""
        self.cluster.topics.check_partition(topic, partition)
        validation.check_offset("seek", offset)
        tp = (topic, partition)
        if not self.subscriptions.is_assigned(tp):
            raise ClusterError(f"seek: partition {topic}-{partition} is not assigned to "
                               f"{self.client_id} (No current assignment for partition); "
                               f"assign it first: assign({topic!r}, [{partition}])")
        self.subscriptions.seek_unvalidated(tp, FetchPosition(offset, None,
                                                              self._current_leader(tp)))

    def seek_to_beginning(self, partitions=()) -> None:
        """KafkaConsumer.seekToBeginning: each partition (none named: every assigned one)
        awaits a reset to its earliest offset, done by the next poll."""
        self._request_reset(partitions, OffsetResetStrategy.EARLIEST)

    def seek_to_end(self, partitions=()) -> None:
        """KafkaConsumer.seekToEnd: each partition (none named: every assigned one) awaits a
        reset to its end offset (the HW, or the LSO under read_committed)."""
        self._request_reset(partitions, OffsetResetStrategy.LATEST)

    def _request_reset(self, partitions, strategy: OffsetResetStrategy) -> None:
        subs = self.subscriptions
        for tp in list(partitions) or subs.assigned_partitions_list():
            subs.request_offset_reset(tuple(tp), strategy)

    def pause(self, partitions) -> None:
        """KafkaConsumer.pause: no fetches for these (assigned) partitions until resumed."""
        for tp in partitions:
            self.subscriptions.pause(tuple(tp))

    def resume(self, partitions) -> None:
        """KafkaConsumer.resume: fetch these (assigned) partitions again."""
        for tp in partitions:
            self.subscriptions.resume(tuple(tp))

    def paused(self) -> set[tuple[str, int]]:
        """KafkaConsumer.paused: the assigned partitions paused now."""
        return self.subscriptions.paused_partitions()

    def position(self, topic: str, partition: int = 0) -> int | None:
        position = self.subscriptions.position_or_null((topic, partition))
        return None if position is None else position.offset

    def committed(self, topic: str, partition: int = 0) -> int | None:
        """The group's committed offset for the partition (None: nothing committed)."""
        if self.group_id is None:
            return None
        return self.cluster.group_offsets.get((self.group_id, topic, partition))

    def committed_offset_and_metadata(self, topic: str, partition: int = 0
                                      ) -> OffsetAndMetadata | None:
        """KafkaConsumer.committed: the committed offset with its leader epoch as OffsetFetch
        returns it (v5+, 2.1+; None before and when the commit carried none)."""
        key = (self.group_id, topic, partition)
        offset = self.committed(topic, partition)
        if offset is None:
            return None
        epoch = self.cluster.group_offsets.leader_epochs.get(key)
        with_epoch = self.cluster.rules.clients.offset_commit_leader_epoch   # KIP-320, 2.1+
        return OffsetAndMetadata(offset, epoch if with_epoch else None)

    def _current_leader(self, tp) -> LeaderAndEpoch:
        """Metadata.currentLeader: the leader and epoch the metadata names now."""
        return LeaderAndEpoch.of(self.leaders.get(tp, -1), self.leader_epochs.get(tp, -1))

    # -- polling ----------------------------------------------------------------------------
    def _send(self, broker: int, msg, kind: str) -> int:
        return self.client.send(broker, msg, kind)

    def _next_corr(self) -> int:
        return self.client.next_corr()

    def _await(self, timeout_ms: int) -> None:
        """Run until the requests sent (but fetches) are answered; what is unanswered after
        ``timeout_ms`` is abandoned (kafkasim's request timeout for them)."""
        self.client.await_requests(timeout_ms)

    def _refresh_metadata(self, timeout_ms: int) -> None:
        c = self.cluster
        # leastLoadedNode skips a node blacked out after a refused connect
        live = [b for b in c.inspect.running_brokers()
                if not c.transport.is_unavailable(self.client_id, b)]
        if not live:
            return
        request = self.metadata.new_metadata_request_builder().build(self._next_corr())
        self._send(live[0], request, "metadata")
        self._await(timeout_ms)

    # -- position validation (KIP-320, 2.3+) ----------------------------------------------------
    def _leader_for(self, tp) -> int:
        return self.leaders.get(tp, -1)

    def _node_if_online(self, tp, node: int) -> bool:
        """Cluster.nodeIfOnline: the metadata shows ``node`` alive (3.4+, KAFKA-14379: and among
        the partition's replicas)."""
        if self.nodes is None:
            return True   # no metadata answer yet
        if node not in self.nodes:
            return False
        return not self.cluster.rules.clients.consumer_errors_clear_preferred_read_replica or \
            node in self.replicas.get(tp, (node,))

    def _select_read_replica(self, tp) -> int:
        """AbstractFetch.selectReadReplica: the preferred read replica while its lease lasts
        (KIP-392) and the metadata shows it online, else the leader. An offline one is
        forgotten (3.4+: and new metadata asked for, Fetcher.requestMetadataUpdate)."""
        subs = self.subscriptions
        preferred = subs.preferred_read_replica(tp, self.cluster.now)
        if preferred is None or self._node_if_online(tp, preferred):
            return self._leader_for(tp) if preferred is None else preferred
        subs.clear_preferred_read_replica(tp)
        if self.cluster.rules.clients.consumer_errors_clear_preferred_read_replica:
            self._metadata_update_requested = True
        return self._leader_for(tp)

    def fetching_from(self, topic: str, partition: int = 0) -> int:
        """The broker this consumer fetches the partition from (a follower under KIP-392);
        changes nothing (selectReadReplica's forgetting an offline replica is left to the next
        fetch)."""
        tp = (topic, partition)
        preferred = self.subscriptions.preferred_read_replica(tp, self.cluster.now)
        if preferred is not None and self._node_if_online(tp, preferred):
            return preferred
        return self._leader_for(tp)

    def poll(self, timeout_ms: int = 1000, max_records: int | None = None
             ) -> list[ConsumerRecord]:
        """KafkaConsumer.poll(Duration) (ClassicKafkaConsumer.poll @3.9.0): until records come
        or ``timeout_ms`` passes, over and over: the assignment and positions
        (updateAssignmentMetadataIfNeeded), then ``_poll_for_fetches``. Returns at most
        max.poll.records records, or none when the time ran out. Raises
        OffsetOutOfRangeException for an out-of-range partition without a reset policy when it
        has no records to return."""
        validation.check_poll(timeout_ms, max_records)
        if not self.subscriptions.subscription:
            raise E.IllegalStateException(
                "Consumer is not subscribed to any topics or assigned any partitions: call "
                "assign() first")
        c = self.cluster
        deadline = c.now + timeout_ms
        limit = max_records if max_records is not None else self.config["max.poll.records"]
        idle_rounds = 0
        while True:   # do { ... } while (timer.notExpired())
            start = c.now
            ensure_subscribed_assignment(self, deadline - c.now)   # (coordinator.poll)
            if not self.assignment:
                return []
            self._update_fetch_positions(max(0, deadline - c.now))
            records = self._poll_for_fetches(deadline, limit, idle_rounds >= _IDLE_ROUNDS)
            if records or c.now >= deadline:
                return records
            idle_rounds = idle_rounds + 1 if c.now == start else 0

    def _poll_for_fetches(self, deadline: int, limit: int, step: bool) -> list[ConsumerRecord]:
        """ClassicKafkaConsumer.pollForFetches @3.9.0: the records already fetched if there are
        any (collectFetch); else fetches sent to every broker without one in flight
        (sendFetches), one network poll -- until an answer or disconnect comes, at most until
        ``deadline``, and at most retry.backoff.ms while a position is missing or nothing is
        in flight -- and what it brought (collectFetch). ``step``: the loop has gone round
        without the clock moving, the wait is at least 1 ms."""
        fc = self.fetch_collector
        before = {tp: s.position for tp, s in self.subscriptions.assignment.items()}
        start = len(self.consumed)
        fc.drain_fetch_buffer()
        fc.throw_if_failed_in_line(start, limit)
        # the answers that came since the last poll, in line behind the records buffered
        fc.initialize_completed_fetches()
        if len(self.consumed) == start:
            fc.throw_if_fetch_failed()
            self._send_fetches()
            wait = max(0, deadline - self.cluster.now)
            backoff = self.config.get("retry.backoff.ms", 100)
            if not self.subscriptions.has_all_fetch_positions() or \
                    not self.client.in_flight_fetches():
                wait = min(wait, backoff)
            self.client.poll(max(wait, 1) if step else wait)
            fc.initialize_completed_fetches()
        return fc.collect_fetch(start, limit, before)

    def _update_fetch_positions(self, timeout_ms: int) -> None:
        """KafkaConsumer.updateFetchPositions: metadata for partitions without a known leader,
        positions validated (KIP-320, 2.3+), then a position for each partition without one
        (refreshCommittedOffsetsIfNeeded, resetPositionsIfNeeded)."""
        # metadata.max.age.ms: the only refresh after an error Kafka's consumer only logs,
        # such as UNKNOWN_LEADER_EPOCH
        if self._metadata_update_requested or \
                self.metadata.time_to_next_update(self.cluster.now) == 0 or \
                any(self._leader_for(tp) < 0 for tp in self.assignment):
            self._metadata_update_requested = False
            self._refresh_metadata(timeout_ms)
        validate = self.cluster.rules.clients.consumer_validates_position
        if validate:
            self.offset_fetcher.validate_positions_if_needed(timeout_ms)
        if self._init_positions(timeout_ms) and validate:
            # KafkaConsumer.poll loops updateFetchPositions until the timeout: a committed
            # position awaiting validation is validated before it is fetched from
            self.offset_fetcher.validate_positions_if_needed(timeout_ms)

    def _send_fetches(self) -> None:
        """Fetcher.sendFetches: one FetchRequest per broker fetched from (the leader, or a
        preferred read replica under KIP-392) for the partitions with a position that is not
        awaiting validation, skipping a broker in its reconnect backoff."""
        cfg = self.config
        self.client.expire_fetches()
        for target, parts in self._prepare_fetch_requests().items():
            self._send(target, FetchRequest(
                self._next_corr(), CONSUMER_REPLICA_ID, cfg["fetch.max.wait.ms"],
                cfg["fetch.min.bytes"], cfg["fetch.max.bytes"], tuple(parts),
                cfg["isolation.level"], cfg.get("client.rack") or ""), "fetch")

    def _prepare_fetch_requests(self) -> dict[int, list[FetchPartition]]:
        """AbstractFetch.prepareFetchRequests: the fetchable partitions by broker, but those with
        fetched data still buffered (fetchablePartitions)."""
        validate = self.cluster.rules.clients.consumer_validates_position
        buffered = self.fetch_collector.buffered_partitions()
        by_target: dict[int, list[FetchPartition]] = {}
        for tp in self.subscriptions.fetchable_partitions(lambda tp: tp not in buffered):
            target = self._select_read_replica(tp)
            if target < 0 or _fetch_target_backing_off(self, target) or \
                    self.client.has_pending_fetch_request(target):
                continue   # (Fetcher: "awaiting reconnect backoff", 2.0+; a fetch pending)
            position = self.subscriptions.position(tp)
            # 2.3+: CurrentLeaderEpoch = position.currentLeader.epoch (KAFKA-7747)
            current_epoch = _or_undefined(position.current_leader.epoch) if validate else -1
            by_target.setdefault(target, []).append(FetchPartition(
                tp[0], tp[1], position.offset, current_epoch, -1, -1,
                self.config["max.partition.fetch.bytes"]))
        return by_target

    def _init_positions(self, timeout_ms: int) -> bool:
        """Positions for partitions without one: the committed offset (refreshCommittedOffsets
        IfNeeded), else auto.offset.reset (resetPositionsIfNeeded). True if a committed position
        awaits validation."""
        missing = [tp for tp, s in self.subscriptions.assignment.items() if s.position is None]
        if not missing:
            return False
        reset, to_validate = self._refresh_committed_offsets(missing)
        if reset:
            self.offset_fetcher.reset_positions_if_needed(reset, timeout_ms)
        return to_validate

    def _refresh_committed_offsets(self, missing: list) -> tuple[list, bool]:
        """ConsumerCoordinator.refreshCommittedOffsetsIfNeeded: each partition of ``missing``
        with a committed offset resumes from it (with its epoch, awaiting validation, 2.3+);
        returns the partitions left to reset and whether one awaits validation."""
        subs = self.subscriptions
        reset = []
        to_validate = False
        for tp in missing:
            committed = None if subs.is_offset_reset_needed(tp) else \
                self.committed_offset_and_metadata(*tp)
            if committed is None:
                reset.append(tp)
                continue
            # before 2.3: no FetchPosition epoch, nothing to validate
            epoch = committed.leader_epoch \
                if self.cluster.rules.clients.consumer_validates_position else None
            subs.seek_unvalidated(tp, FetchPosition(committed.offset, epoch,
                                                    self._current_leader(tp)))
            to_validate = to_validate or subs.awaiting_validation(tp)
        return reset, to_validate

    def commit(self, timeout_ms: int = 5000) -> dict[tuple[str, int], int]:
        """commitSync: store the current positions as the group's committed offsets."""
        validation.check_timeout("commit(timeout_ms)", timeout_ms)
        if self.group_id is None:
            raise RuntimeError("commit needs a group.id (create the consumer with group=...)")
        # SubscriptionState.allConsumed: position.offsetEpoch since 2.3 (KAFKA-7747), none before
        with_epoch = self.cluster.rules.clients.consumer_validates_position
        offsets = tuple((t, p, o.offset, _or_undefined(o.leader_epoch) if with_epoch else -1)
                        for (t, p), o in self.subscriptions.all_consumed().items())
        live = self.cluster.inspect.running_brokers()
        if not live:
            raise RuntimeError("no broker is running: cannot reach the group coordinator")
        # the group coordinator: the lowest live broker id (Kafka: leader of a __consumer_offsets
        # partition chosen by the group id's hash)
        self._send(live[0], OffsetCommitRequest(self._next_corr(), self.group_id, offsets),
                   "commit")
        self._await(timeout_ms)
        return {(t, p): off for t, p, off, _epoch in offsets}

    def lag(self, topic: str, partition: int = 0) -> int | None:
        """records-lag as the consumer computes it: HW - position (None: not assigned, no
        position or no fetch answered yet)."""
        tp = (topic, partition)
        if not self.subscriptions.is_assigned(tp):
            return None
        return self.subscriptions.partition_lag(tp)

    def on_peer_gone(self, dead: int) -> None:
        """The connection to broker ``dead`` closed (its process died): every request still in
        flight to it fails as disconnected (NetworkClient.cancelInFlightRequests), a Fetch
        parked in its purgatory included; and the metadata is refreshed before the next fetch
        from a partition ``dead`` led (DefaultMetadataUpdater.handleServerDisconnect:
        requestUpdate)."""
        for msg in self.client.requests_to(dead):
            self.on_disconnect(dead, msg)
        for tp, leader in self.leaders.items():
            if leader == dead:
                self.leaders[tp] = -1

    def on_disconnect(self, dst, msg) -> None:
        """The broker died: the request fails now; leaders are looked up again next poll."""
        corr = getattr(msg, "correlation_id", -1)
        if self.client.complete(corr)[0] is None:
            return
        self.client.forget(corr)
        if isinstance(msg, FetchRequest):
            # AbstractFetch.handleFetchFailure (3.4+): the session's partitions forget their
            # preferred read replica
            clear = self.cluster.rules.clients.consumer_errors_clear_preferred_read_replica
            for fp in msg.partitions:
                tp = (fp.topic, fp.partition)
                self.leaders[tp] = -1
                if clear:
                    self.subscriptions.clear_preferred_read_replica(tp)
        elif isinstance(msg, OffsetsForLeaderEpochRequest):
            for topic, partition, _current, _epoch in msg.partitions:
                self.leaders[(topic, partition)] = -1   # onFailure: metadata.requestUpdate()
        elif isinstance(msg, ListOffsetsRequest):   # the reset stays pending: asked again
            self.offset_fetcher.resetting.pop(msg.correlation_id, None)

    # -- responses --------------------------------------------------------------------------
    def on_message(self, src, msg) -> None:
        corr = getattr(msg, "correlation_id", -1)
        kind, request = self.client.complete(corr)
        if kind is None:
            return
        self._dispatch(msg, request)
        self.client.forget(corr)

    def _dispatch(self, msg, request) -> None:
        """The answer ``msg`` to ``request``, to the part of the consumer that takes it."""
        if isinstance(msg, MetadataResponse):
            self._on_metadata(msg)
        elif isinstance(msg, ListOffsetsResponse):
            self.offset_fetcher.handle_list_offsets_response(msg)
        elif isinstance(msg, FetchResponse):
            # FetchBuffer.add: initialized by the poll that collects it
            self.fetch_collector.completed_fetches.append((msg, request))
        elif isinstance(msg, OffsetsForLeaderEpochResponse):
            self.offset_fetcher.handle_validation_response(msg)
        elif isinstance(msg, OffsetCommitResponse):
            pass

    def _on_metadata(self, msg: MetadataResponse) -> None:
        """Metadata.update: each partition's leader, epoch and replicas, and the live nodes."""
        # KAFKA-7738 (2.2+): a row with an older leader epoch than the last seen is ignored
        stale = self.metadata.update(
            self.cluster.now, msg.partitions,
            self.cluster.rules.clients.producer_metadata_keeps_newer_leader_epoch)
        self.nodes = frozenset(msg.brokers)
        for topic, partition, err, leader, epoch, replicas, _isr in msg.partitions:
            if partition >= 0 and (topic, partition) not in stale:
                tp = (topic, partition)
                self.leaders[tp] = leader if err == E.NONE else -1
                self.leader_epochs[tp] = epoch if err == E.NONE else -1
                self.replicas[tp] = tuple(replicas)





class FetchCollector:
    """The consumer's fetched data on its way to ``poll``: Kafka's FetchCollector (with its
    FetchBuffer): each partition's answer initialized (errors handled, records taken at the
    position), the records past ``max.poll.records`` or of a paused partition buffered, and an
    OFFSET_OUT_OF_RANGE without a reset policy kept for ``poll`` to raise."""

    def __init__(self, consumer: Consumer) -> None:
        self.consumer = consumer
        # FetchBuffer's completed fetches not initialized yet: (FetchResponse, FetchRequest) in
        # the order they came; the next poll initializes them (FetchCollector.initialize)
        self.completed_fetches: list[tuple[FetchResponse, FetchRequest | None]] = []
        # FetchBuffer: records fetched but not yet returned by poll (past max.poll.records, or
        # of a paused partition, 2.4+), in the order they came
        self.fetch_buffer: list[ConsumerRecord] = []
        # completed fetches that failed OFFSET_OUT_OF_RANGE without a reset policy, in the order
        # they came: tp -> (fetch offset, whether the answer carried records)
        self.out_of_range: dict[tuple[str, int], tuple[int, bool]] = {}
        # answers with an error FetchCollector does not expect: tp -> the IllegalStateException
        # message, raised by the next poll with no records to return
        self.unexpected_errors: dict[tuple[str, int], str] = {}
        # how many buffered records are in line ahead of the first failed answer (None: no
        # failed answer in line); records that came after it wait behind it
        self.failed_at: int | None = None

    def _add_failure(self) -> None:
        """A failed answer joins the line, behind the records buffered now."""
        if self.failed_at is None:
            self.failed_at = len(self.fetch_buffer)

    def _settle(self) -> None:
        """No failed answer left in line: nothing holds the buffered records back."""
        if not self.unexpected_errors and not self.out_of_range:
            self.failed_at = None

    def buffered_partitions(self) -> set:
        """The partitions with fetched data not handed out yet (not fetched again until it
        is: AbstractFetch.fetchablePartitions)."""
        return {(r.topic, r.partition) for r in self.fetch_buffer} | set(self.out_of_range) | \
            {(pd.topic, pd.partition) for msg, _req in self.completed_fetches
             for pd in msg.partitions}

    def initialize_completed_fetches(self) -> None:
        """FetchCollector.collectFetch's initialize of each completed fetch in the buffer, in
        the order they came (``handle_fetch_response``)."""
        while self.completed_fetches:
            msg, request = self.completed_fetches.pop(0)
            self.handle_fetch_response(msg, request)

    def clear_buffered_data_for_unassigned_partitions(self) -> None:
        """Fetcher.clearBufferedDataForUnassignedPartitions: fetched data of partitions no
        longer assigned is dropped."""
        subs = self.consumer.subscriptions
        self.fetch_buffer = [r for r in self.fetch_buffer
                              if subs.is_assigned((r.topic, r.partition))]
        self.out_of_range = {tp: e for tp, e in self.out_of_range.items()
                              if subs.is_assigned(tp)}
        self.unexpected_errors = {tp: e for tp, e in self.unexpected_errors.items()
                                  if subs.is_assigned(tp)}
        if self.failed_at is not None:
            self.failed_at = min(self.failed_at, len(self.fetch_buffer))
        self._settle()

    def drain_fetch_buffer(self) -> None:
        """FetchCollector.fetchRecords over the buffered records: each one at its partition's
        position is handed out (the position moves past it); those of a paused partition stay
        buffered (2.4+); the others (partition unassigned, reset, sought elsewhere) are
        dropped. Only the records in line ahead of a failed answer: those behind it wait."""
        subs = self.consumer.subscriptions
        keep_paused = self.consumer.cluster.rules.clients.consumer_keeps_paused_fetches
        kept = []
        ahead = self.fetch_buffer if self.failed_at is None else \
            self.fetch_buffer[:self.failed_at]
        behind = self.fetch_buffer[len(ahead):]
        for r in ahead:
            tp = (r.topic, r.partition)
            if keep_paused and subs.is_paused(tp):
                kept.append(r)
                continue
            position = subs.position(tp) if subs.is_fetchable(tp) else None
            if position is not None and position.offset == r.offset:
                self.consumer.consumed.append(r)
                subs.position(tp, FetchPosition(r.offset + 1, r.leader_epoch,
                                                position.current_leader))
        if self.failed_at is not None:
            self.failed_at = len(kept)
        self.fetch_buffer = kept + behind

    def throw_if_failed_in_line(self, start: int, limit: int) -> None:
        """collectFetch reaching a failed answer after the buffered records ahead of it
        (``start``: where this poll's records begin in ``consumed``): with none collected its
        exception is thrown; with some, an unexpected error is thrown all the same (no
        KafkaException: the records are lost) unless ``limit`` records came first, and an
        OffsetOutOfRangeException waits for the next poll."""
        if self.failed_at is None or self.failed_at > 0:
            return
        collected = len(self.consumer.consumed) - start
        if not collected:
            self.throw_if_fetch_failed()
        elif self.unexpected_errors and collected < limit:
            del self.consumer.consumed[start:]
            self.throw_if_fetch_failed(collected=True)
        if self.failed_at is None:   # only stale answers were in line: on to the rest
            self.drain_fetch_buffer()

    def throw_if_fetch_failed(self, collected: bool = False) -> None:
        """What a poll raises for a failed fetch: the IllegalStateException of an answer with
        an unexpected error, forgotten unless records were ``collected`` before it in the same
        poll (FetchCollector.collectFetch 2.0+ keeps such a completed fetch: the next poll
        throws again); else, with no records collected, a pending OffsetOutOfRangeException."""
        if self.unexpected_errors:
            tp = next(iter(self.unexpected_errors))
            message = self.unexpected_errors[tp] if collected else \
                self.unexpected_errors.pop(tp)
            self._settle()
            raise E.IllegalStateException(message)
        if not collected:
            try:
                self.throw_if_offset_out_of_range()
            finally:
                self._settle()

    def throw_if_offset_out_of_range(self) -> None:
        """FetchCollector.handleInitializeErrors' OffsetOutOfRangeException, raised by a poll
        with no records to return: for the first failed answer whose fetch offset is still the
        position (stale ones are dropped); an answer that carried records stays buffered and
        raises again. Before 0.10.1 (Fetcher.throwIfOffsetOutOfRange) every such partition at
        once, and only once."""
        subs = self.consumer.subscriptions
        per_fetch = self.consumer.cluster.rules.clients.consumer_discards_stale_out_of_range
        current = {}
        for tp, (offset, has_records) in list(self.out_of_range.items()):
            position = subs.valid_position(tp) if subs.is_assigned(tp) else None
            if position is None or position.offset != offset or \
                    not (per_fetch or subs.is_fetchable(tp)):
                del self.out_of_range[tp]   # stale: the position moved since the fetch
                continue
            current[tp] = offset
            if per_fetch:
                if not has_records:
                    del self.out_of_range[tp]
                break
        if not per_fetch:
            self.out_of_range.clear()
        if current:
            raise OffsetOutOfRangeException(current)

    def collect_fetch(self, start: int, limit: int, before: dict) -> list[ConsumerRecord]:
        """FetchCollector.collectFetch: the records fetched by this poll, at most ``limit``
        (``max.poll.records``); the rest stays in the fetch buffer for the next poll: each
        position goes back to the first record not handed out, with the epoch of the record
        before it. With none to return, a pending OffsetOutOfRangeException is raised."""
        new = self.consumer.consumed[start:]
        if not new:
            self.throw_if_fetch_failed()
        elif self.unexpected_errors and len(new) < limit:
            # collectFetch reached the failed answer: IllegalStateException is no
            # KafkaException, so it is thrown with records collected; they are lost (their
            # positions moved past them)
            del self.consumer.consumed[start:]
            self.throw_if_fetch_failed(collected=True)
        if len(new) <= limit:
            return new
        subs = self.consumer.subscriptions
        for r in new[limit:]:
            tp = (r.topic, r.partition)
            position = subs.position(tp)
            if r.offset < position.offset:
                subs.position(tp, FetchPosition(r.offset, before[tp].offset_epoch,
                                                position.current_leader))
        for r in new[:limit]:
            tp = (r.topic, r.partition)
            position = subs.position(tp)
            if position.offset == r.offset + 1:
                subs.position(tp, FetchPosition(position.offset, r.leader_epoch,
                                                position.current_leader))
        del self.consumer.consumed[start + limit:]
        self.fetch_buffer = new[limit:] + self.fetch_buffer
        if self.failed_at is not None:
            self.failed_at += len(new) - limit   # they are ahead of the failed answer
        return new[:limit]

    def handle_fetch_response(self, msg: FetchResponse, request) -> None:
        """AbstractFetch.handleFetchSuccess, each partition's answer initialized at once
        (FetchCollector.initialize): ignored without a valid position (2.4+; before, when not
        fetchable), else an error is handled, or a success taken."""
        offsets = {} if request is None else \
            {(fp.topic, fp.partition): fp.fetch_offset for fp in request.partitions}
        subs = self.consumer.subscriptions
        keep_paused = self.consumer.cluster.rules.clients.consumer_keeps_paused_fetches
        for pd in msg.partitions:
            tp = (pd.topic, pd.partition)
            if not (subs.has_valid_position(tp) if keep_paused else subs.is_fetchable(tp)):
                continue   # unassigned, reset or (before 2.4) paused while in flight
            fetch_offset = offsets.get(tp, pd.records.base_offset)
            if pd.error != E.NONE:
                self._handle_initialize_errors(tp, pd, fetch_offset)
            else:
                self._handle_initialize_success(tp, pd, fetch_offset)

    def _handle_initialize_success(self, tp, pd, fetch_offset: int) -> None:
        """FetchCollector.handleInitializeSuccess: an answer for another offset than the
        position is stale and dropped; else the HW and log start offset are taken, a preferred
        read replica named (KIP-392) is fetched from next, and the records are consumed."""
        c = self.consumer.cluster
        subs = self.consumer.subscriptions
        if subs.position(tp).offset != fetch_offset:
            return   # "Discarding stale fetch response"
        if pd.high_watermark >= 0:
            subs.update_high_watermark(tp, pd.high_watermark)
        if pd.log_start_offset >= 0:
            subs.update_log_start_offset(tp, pd.log_start_offset)
        if pd.preferred_read_replica >= 0:
            subs.update_preferred_read_replica(
                tp, pd.preferred_read_replica,
                c.now + self.consumer.config.get("metadata.max.age.ms", 300000))
            c.trace.record("fetch_redirect", self.consumer.client_id, pd.topic, pd.partition,
                           ev.FetchRedirect(pd.preferred_read_replica))
        self._consume(tp, pd)

    def _handle_initialize_errors(self, tp, pd, fetch_offset: int) -> None:
        """FetchCollector.handleInitializeErrors: a leadership or unknown-partition error asks
        for new metadata (3.4+: and forgets the preferred read replica); OFFSET_OUT_OF_RANGE
        (``_on_offset_out_of_range``); UNKNOWN_LEADER_EPOCH and UNKNOWN_SERVER_ERROR are only
        logged. Any other error is unexpected: the next poll without records throws
        IllegalStateException ("Unexpected error code ...", the error's name here). Which error
        is which depends on the release (``fetch_error_kind``)."""
        error = pd.error
        self.consumer.errors.append((self.consumer.cluster.now, tp[0], tp[1], error))
        if error == E.OFFSET_OUT_OF_RANGE:
            self._on_offset_out_of_range(tp, pd, fetch_offset)
            return
        rules = self.consumer.cluster.rules.clients
        kind = fetch_error_kind(rules, error)
        if kind == "refresh":
            self.consumer.leaders[tp] = -1   # requestMetadataUpdate: the next poll asks
            if rules.consumer_errors_clear_preferred_read_replica:
                self.consumer.subscriptions.clear_preferred_read_replica(tp)
        elif kind == "unexpected":
            self._add_failure()
            self.unexpected_errors.setdefault(
                tp, f"Unexpected error code {error} while fetching at offset {fetch_offset} "
                    f"from topic-partition {tp[0]}-{tp[1]}")

    def _on_offset_out_of_range(self, tp, pd, fetch_offset: int) -> None:
        """From a preferred read replica: it is forgotten and the same offset fetched from the
        leader. From the leader: ignored if the position moved since (0.10.1+), else a reset
        by auto.offset.reset (not the committed offset), or with "none" an
        OffsetOutOfRangeException for poll to raise, the position kept."""
        subs = self.consumer.subscriptions
        if subs.clear_preferred_read_replica(tp) is not None:
            return
        if subs.position(tp).offset != fetch_offset and \
                self.consumer.cluster.rules.clients.consumer_discards_stale_out_of_range:
            return   # "Discarding stale fetch response"
        if subs.has_default_offset_reset_policy():
            subs.request_offset_reset_if_partition_assigned(tp)
        else:
            self._add_failure()
            self.out_of_range[tp] = (fetch_offset, len(pd.records) > 0)

    def _consume(self, tp, pd) -> None:
        """The records of ``pd`` that start at the position: consumed, the position moves past
        them with the epoch of the last one (FetchPosition.offsetEpoch); those of a paused
        partition wait in the fetch buffer (2.4+)."""
        c = self.consumer.cluster
        chunk = pd.records
        subs = self.consumer.subscriptions
        position = subs.position(tp)
        if not len(chunk) or position.offset != chunk.base_offset:
            return
        records = [ConsumerRecord(pd.topic, pd.partition, chunk.base_offset + i, chunk.epochs[i],
                                  rid, c.records.value(rid), pd.high_watermark)
                   for i, rid in enumerate(chunk.ids)]
        # paused, or in line behind an answer with an unexpected error (collectFetch throws
        # at that one first): buffered, for a later poll
        if subs.is_paused(tp) or self.failed_at is not None:
            self.fetch_buffer += records
        else:
            self.consumer.consumed += records
            subs.position(tp, FetchPosition(chunk.base_offset + len(chunk), chunk.epochs[-1],
                                            position.current_leader))
        c.trace.record("consume", self.consumer.client_id, pd.topic, pd.partition,
                       (chunk.base_offset, chunk.last_offset, pd.high_watermark))


class OffsetFetcher:
    """The consumer's position checks against the brokers: Kafka's OffsetFetcher. Validation of
    positions by OffsetsForLeaderEpoch (KIP-320, 2.3+) and resets by ListOffsets."""

    def __init__(self, consumer: Consumer) -> None:
        self.consumer = consumer
        self.validating: dict[int, dict] = {}   # correlation id -> {tp: position asked about}
        # correlation id -> {tp: the reset strategy a ListOffsets asked for}
        # (OffsetFetcher.resetPositionsAsync's partitionAutoOffsetResetStrategyMap)
        self.resetting: dict[int, dict] = {}
        # partitions found truncated under their position: tp -> (divergent offset, epoch),
        # None when unknown; raised by the next validate_positions_if_needed
        self.truncations: dict[tuple[str, int], tuple[int, int] | None] = {}

    def validate_positions_if_needed(self, timeout_ms: int) -> None:
        """OffsetFetcher.validatePositionsIfNeeded: a position established against another
        leader or epoch than the metadata's now awaits validation (if it has an epoch); ask each
        leader OffsetsForLeaderEpoch(CurrentLeaderEpoch, the position's epoch)."""
        subs = self.consumer.subscriptions
        by_leader: dict[int, list] = {}
        for tp in subs.assigned_partitions_list():
            current = self.consumer._current_leader(tp)
            if subs.maybe_validate_position_for_current_leader(tp, current):
                by_leader.setdefault(current.leader, []).append(tp)
        for leader, tps in by_leader.items():
            corr = self.consumer._next_corr()
            asked = self.validating[corr] = {tp: subs.position(tp) for tp in tps}
            self.consumer._send(leader, OffsetsForLeaderEpochRequest(
                corr, CONSUMER_REPLICA_ID,
                tuple((t, p, _or_undefined(pos.current_leader.epoch), pos.offset_epoch)
                      for (t, p), pos in asked.items())), "validate")
        if by_leader:
            self.consumer._await(timeout_ms)
            self.validating.clear()
        if self.truncations:
            found, self.truncations = self.truncations, {}
            rules = self.consumer.cluster.rules.clients
            undefined_resets = rules.consumer_validation_undefined_resets
            raise LogTruncationException({tp: subs.position(tp).offset for tp in found}, found,
                                         undefined_resets)

    def handle_validation_response(self, msg: OffsetsForLeaderEpochResponse) -> None:
        """OffsetFetcher's validation response: a partition whose position is still the one
        asked about completes its validation; an error asks for new metadata (retried next
        poll)."""
        asked = self.validating.pop(msg.correlation_id, {})
        subs = self.consumer.subscriptions
        for topic, partition, err, epoch, end_offset in msg.partitions:
            tp = (topic, partition)
            if tp not in asked or not subs.is_assigned(tp) or \
                    not subs.awaiting_validation(tp) or subs.position(tp) != asked[tp]:
                continue  # the position moved on meanwhile
            if err != E.NONE:
                self.consumer.leaders[tp] = -1   # metadata.requestUpdate(); retried next poll
                continue
            self.complete_validation(tp, asked[tp], EpochEndOffset(err, partition, epoch,
                                                                    end_offset))

    def complete_validation(self, tp, asked: FetchPosition, answer: EpochEndOffset) -> None:
        """SubscriptionState.maybeCompleteValidation, and the "consumer_truncation" row when it
        found the log truncated under the position: the position, the divergent offset (None:
        unknown) and what the consumer does (reset, seek, or LogTruncationException)."""
        subs = self.consumer.subscriptions
        truncation = subs.maybe_complete_validation(tp, asked, answer)
        if truncation is not None:
            divergent = truncation.divergent_offset
            self.truncations[tp] = None if divergent is None else \
                (divergent.offset, divergent.leader_epoch)
            outcome = (None if divergent is None else divergent.offset, "LogTruncationException")
        elif subs.is_offset_reset_needed(tp):
            outcome = (None, "reset")
        elif subs.position(tp).offset != asked.offset:
            outcome = (subs.position(tp).offset, "seek")
        else:
            return   # validated
        c = self.consumer
        c.cluster.trace.record("consumer_truncation", c.client_id, tp[0], tp[1],
                               (asked.offset, *outcome))

    def reset_positions_if_needed(self, reset: list, timeout_ms: int) -> None:
        """SubscriptionState.resetInitializingPositions (a partition still without a position
        awaits a reset by ``auto.offset.reset``; with "none", NoOffsetForPartitionException),
        then OffsetFetcher.resetPositionsIfNeeded: ListOffsets to each leader for every
        partition awaiting a reset, by that partition's strategy (resetStrategy(tp): e.g. LATEST
        after seekToEnd, whatever ``auto.offset.reset`` says)."""
        subs = self.consumer.subscriptions
        initializing = [tp for tp in reset if not subs.is_offset_reset_needed(tp)]
        if initializing and not subs.has_default_offset_reset_policy():
            raise NoOffsetForPartitionException(
                "Undefined offset with no reset policy for partitions: "
                + ", ".join(f"{t}-{p}" for t, p in sorted(initializing)), initializing)
        for tp in initializing:
            subs.request_offset_reset(tp)
        by_leader: dict[int, list] = {}
        # the current leader epoch of each (2.3+, KAFKA-7747: Fetcher.groupListOffsetRequests)
        c = self.consumer
        send_epoch = c.cluster.rules.clients.consumer_validates_position
        for tp in reset:
            leader = c._leader_for(tp)
            strategy = subs.reset_strategy(tp)
            if leader >= 0 and strategy not in (None, OffsetResetStrategy.NONE) and \
                    not self._awaiting_reconnect_backoff(leader):
                epoch = c.leader_epochs.get(tp, -1) if send_epoch else -1
                by_leader.setdefault(leader, []).append(
                    (tp[0], tp[1], strategy.timestamp(c.cluster.now), epoch, strategy))
        for leader, parts in by_leader.items():
            corr = c._next_corr()
            self.resetting[corr] = {(p[0], p[1]): p[4] for p in parts}
            # the consumer's isolation level (ListOffsets v2+, KIP-98): under read_committed
            # LATEST is the last stable offset (OffsetFetcher.resetPositionsAsync)
            c._send(leader, ListOffsetsRequest(corr, -1, tuple(p[:3] for p in parts),
                                               c.config["isolation.level"],
                                               tuple(p[3] for p in parts)),
                    "list_offsets")
        if by_leader:
            self.consumer._await(timeout_ms)

    def _awaiting_reconnect_backoff(self, leader: int) -> bool:
        """Fetcher.groupListOffsetRequests (2.0+, #4644): a leader in its reconnect backoff
        (NetworkClient.isUnavailable) is not asked; its partitions are retried next poll."""
        c = self.consumer
        return c.cluster.rules.clients.consumer_list_offsets_skips_unavailable_leader and \
            c.cluster.transport.is_unavailable(c.client_id, leader)

    def handle_list_offsets_response(self, msg: ListOffsetsResponse) -> None:
        """OffsetFetcherUtils.onSuccessfulRequestForResettingPositions: each offset is taken if
        the partition still awaits the reset the request asked for; an error asks for new
        metadata (retried next poll). A by_duration timestamp past every record is answered
        UNKNOWN_OFFSET (-1): handleListOffsetResponse leaves the partition out, so it still
        awaits its reset (asked again at the next poll)."""
        asked = self.resetting.pop(msg.correlation_id, {})
        subs = self.consumer.subscriptions
        for topic, partition, err, offset in msg.partitions:
            tp = (topic, partition)
            if err != E.NONE:
                self.consumer.leaders[tp] = -1
                continue
            strategy = asked.get(tp)
            if strategy is None or offset < 0:
                continue
            current = self.consumer._current_leader(tp)
            subs.maybe_seek_unvalidated(tp, FetchPosition(offset, None, current), strategy)


#: Fetch errors FetchCollector.handleInitializeErrors only logs (no metadata update);
#: UNKNOWN_LEADER_EPOCH since 2.3 (Fetcher.parseCompletedFetch @2.3.0)
_LOGGED_FETCH_ERRORS = frozenset({E.UNKNOWN_LEADER_EPOCH, "UNKNOWN_SERVER_ERROR"})
#: Fetch errors it answers with a metadata update (FetchCollector.handleInitializeErrors
#: @3.9.0; NOT_LEADER_FOR_PARTITION: the same error code's name before 2.6)
_METADATA_REFRESH_FETCH_ERRORS = frozenset({
    E.NOT_LEADER_OR_FOLLOWER, E.NOT_LEADER_FOR_PARTITION, E.REPLICA_NOT_AVAILABLE,
    E.KAFKA_STORAGE_ERROR, E.FENCED_LEADER_EPOCH, E.OFFSET_NOT_AVAILABLE,
    E.UNKNOWN_TOPIC_OR_PARTITION, E.UNKNOWN_TOPIC_ID, "INCONSISTENT_TOPIC_ID",
})
#: The fetch errors that joined those sets in 2.3.0 (KAFKA-7440 FENCED_LEADER_EPOCH and
#: UNKNOWN_LEADER_EPOCH, KAFKA-8365 OFFSET_NOT_AVAILABLE; later ones the brokers of older
#: releases never send): unexpected before (Fetcher.parseCompletedFetch @2.2.0)
_FETCH_ERRORS_SINCE_2_3 = frozenset({
    E.FENCED_LEADER_EPOCH, E.OFFSET_NOT_AVAILABLE, E.UNKNOWN_LEADER_EPOCH,
    E.UNKNOWN_TOPIC_ID, "INCONSISTENT_TOPIC_ID",
})


def fetch_error_kind(rules, error: str) -> str:
    """How the consumer takes a fetch error of its Kafka release (``rules``: its ClientRules):
    "refresh" (a metadata update), "logged" or "unexpected" (IllegalStateException)."""
    if error in _FETCH_ERRORS_SINCE_2_3 and not rules.consumer_validates_position:
        return "unexpected"
    if error == E.REPLICA_NOT_AVAILABLE and \
            not rules.consumer_fetch_replica_not_available_refreshes:
        return "unexpected"
    if error in _METADATA_REFRESH_FETCH_ERRORS:
        return "refresh"
    return "logged" if error in _LOGGED_FETCH_ERRORS else "unexpected"


def _fetch_target_backing_off(consumer: Consumer, node: int) -> bool:
    """Fetcher.prepareFetchRequests (2.0+, #4644): no Fetch to a node in its reconnect backoff
    (NetworkClient.isUnavailable); before, it was sent anyway."""
    return consumer.cluster.rules.clients.consumer_fetch_skips_unavailable_node and \
        consumer.cluster.transport.is_unavailable(consumer.client_id, node)


def _or_undefined(epoch: int | None) -> int:
    """An optional epoch on the wire: -1 for none."""
    return -1 if epoch is None else epoch
