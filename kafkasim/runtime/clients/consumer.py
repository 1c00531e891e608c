"""The consumer: assigned partitions, position, committed offset, fetches bounded by the HW.

``poll`` sends one Fetch per leader for the assigned partitions and runs the simulation until the
answers arrive (or ``timeout_ms``). The position is the next offset to read; the committed offset
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
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core.messages import (
    FetchPartition,
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    ListOffsetsResponse,
    MetadataRequest,
    MetadataResponse,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from kafkasim.runtime import validation
from kafkasim.settings import config as kconfig
from kafkasim.settings.exceptions import ClusterError

#: OffsetsForLeaderEpoch / Fetch replica id of a consumer (FetchRequest.CONSUMER_REPLICA_ID)
CONSUMER_REPLICA_ID = -1


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
class OffsetAndMetadata:
    """org.apache.kafka.clients.consumer.OffsetAndMetadata: a committed offset and the leader
    epoch of the last record consumed before it (None: unknown; KIP-320, 2.1+)."""
    offset: int
    leader_epoch: int | None = None
    metadata: str = ""


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
    def __init__(self, cluster, client_id: str, config: dict) -> None:
        self.cluster = cluster
        self.client_id = client_id
        self.config = kconfig.consumer_config(config, cluster.kafka_version)
        for key, value in _CONSUMER_FALLBACKS.items():
            self.config.setdefault(key, value)
        self.group_id = self.config.get("group.id") or None
        self.assignment: list[tuple[str, int]] = []
        self.positions: dict[tuple[str, int], int] = {}
        self.leaders: dict[tuple[str, int], int] = {}
        self.leader_epochs: dict[tuple[str, int], int] = {}   # from metadata (KIP-320)
        # FetchPosition.offsetEpoch: epoch of the last consumed record (None: unknown) and
        # FetchPosition.currentLeader: (leader, epoch) the position was established against
        self.position_epochs: dict[tuple[str, int], int | None] = {}
        self.position_leaders: dict[tuple[str, int], tuple[int, int]] = {}
        self.awaiting_validation: set[tuple[str, int]] = set()     # FetchStates.AWAIT_VALIDATION
        self.reset_pending: set[tuple[str, int]] = set()            # FetchStates.AWAIT_RESET
        self._validating: dict[int, dict] = {}   # correlation id -> {tp: position asked about}
        self._truncations: dict[tuple[str, int], tuple[int, int] | None] = {}
        self._truncated_at: dict[tuple[str, int], int] = {}
        self.consumed: list[ConsumerRecord] = []
        self.correlation = 0
        self.pending: dict[int, str] = {}        # correlation id -> kind of request outstanding
        self.sent_to: dict[int, tuple] = {}      # correlation id -> (broker, request)
        self.last_hw: dict[tuple[str, int], int] = {}
        # KIP-392: tp -> (broker to fetch from instead of the leader, valid until ms)
        self.preferred: dict[tuple[str, int], tuple[int, int]] = {}
        self.errors: list[tuple[int, str, int, str]] = []

    def __repr__(self) -> str:
        return (f"Consumer({self.client_id!r}, group={self.group_id!r}, "
                f"positions={dict(self.positions)})")

    # -- assignment -----------------------------------------------------------------------------
    def assign(self, topic: str, partitions: list[int] | None = None) -> None:
        """Manually assign partitions (all of the topic's by default)."""
        validation.check_partition_list("assign", partitions)
        c = self.cluster
        if type(topic) is not str:
            raise ClusterError(f"assign / subscribe: topic must be one topic name, such as "
                               f"'t', got {topic!r} ({type(topic).__name__})")
        if topic not in c.topics.configs:
            raise ClusterError(c.topics.unknown_topic_message(topic))
        parts = list(c.assignment(topic)) if partitions is None else list(partitions)
        for p in parts:
            c.topics.check_partition(topic, p)
            tp = (topic, p)
            if tp not in self.assignment:
                self.assignment.append(tp)

    subscribe = assign

    def seek(self, topic: str, partition: int, offset: int) -> None:
        self.cluster.topics.check_partition(topic, partition)
        validation.check_offset("seek", offset)
        if offset < 0:
            raise ValueError(f"cannot seek to a negative offset ({offset})")
        self._set_position((topic, partition), offset)

    def _set_position(self, tp, offset: int) -> None:
        """A position without epoch (seek, reset, committed offset): nothing to validate until a
        record is consumed; established against the leader the metadata names now."""
        self.positions[tp] = offset
        self.position_epochs[tp] = None
        self.position_leaders[tp] = (self.leaders.get(tp, -1), self.leader_epochs.get(tp, -1))
        self.awaiting_validation.discard(tp)
        self.reset_pending.discard(tp)

    def position(self, topic: str, partition: int = 0) -> int | None:
        return self.positions.get((topic, partition))

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

    def _seek_unvalidated(self, tp, offset: int, offset_epoch: int | None) -> None:
        """SubscriptionState.seekUnvalidated (2.3+): the position from a committed offset, with
        its committed epoch, established against the metadata's current leader; with an epoch
        on both sides it awaits validation (TopicPartitionState.validatePosition)."""
        self._set_position(tp, offset)
        self.position_epochs[tp] = offset_epoch
        if offset_epoch is not None and self.position_leaders[tp][1] >= 0:
            self.awaiting_validation.add(tp)

    # -- polling ----------------------------------------------------------------------------
    def _send(self, broker: int, msg, kind: str) -> int:
        self.pending[msg.correlation_id] = kind
        self.sent_to[msg.correlation_id] = (broker, msg)
        self.cluster.transport.send(self.client_id, broker, msg)
        return msg.correlation_id

    def _next_corr(self) -> int:
        self.correlation += 1
        return self.correlation

    def _await(self, timeout_ms: int) -> None:
        self.cluster.run_until(lambda c: not self.pending, timeout_ms)
        self.pending.clear()   # anything unanswered by now is abandoned (request timeout)
        self.sent_to.clear()

    def _refresh_metadata(self, timeout_ms: int) -> None:
        c = self.cluster
        # leastLoadedNode skips a node blacked out after a refused connect
        live = [b for b in c.inspect.running_brokers()
                if not c.transport.is_unavailable(self.client_id, b)]
        if not live:
            return
        self._send(live[0], MetadataRequest(self._next_corr(), ()), "metadata")
        self._await(timeout_ms)

    # -- position validation (KIP-320, 2.3+) ----------------------------------------------------
    def _validate_positions(self, timeout_ms: int) -> None:
        """Fetcher.validateOffsetsIfNeeded: a position established against another leader or
        epoch than the metadata's now awaits validation (if it has an epoch); ask each leader
        OffsetsForLeaderEpoch(CurrentLeaderEpoch, the position's epoch)."""
        by_leader: dict[int, list] = {}
        for tp in self.assignment:
            if tp not in self.positions or tp in self.reset_pending:
                continue  # AWAIT_RESET: nothing to validate
            leader = self._leader_for(tp)
            if leader < 0:
                continue  # maybeValidatePosition ignores metadata without a leader
            current = (leader, self.leader_epochs.get(tp, -1))
            if self.position_leaders.get(tp) != current:
                self.position_leaders[tp] = current
                self.preferred.pop(tp, None)   # preferredReadReplica = null
                if self.position_epochs.get(tp) is not None and current[1] >= 0:
                    self.awaiting_validation.add(tp)
                else:  # no epoch information: skip validation
                    self.awaiting_validation.discard(tp)
            if tp in self.awaiting_validation:
                by_leader.setdefault(leader, []).append(tp)
        for leader, tps in by_leader.items():
            corr = self._next_corr()
            self._validating[corr] = {tp: self._fetch_position(tp) for tp in tps}
            self._send(leader, OffsetsForLeaderEpochRequest(
                corr, CONSUMER_REPLICA_ID,
                tuple((t, p, self.position_leaders[(t, p)][1], self.position_epochs[(t, p)])
                      for t, p in tps)), "validate")
        if by_leader:
            self._await(timeout_ms)
            self._validating.clear()
        if self._truncations:
            found, self._truncations = self._truncations, {}
            undefined_resets = self.cluster.rules.clients.consumer_validation_undefined_resets
            raise LogTruncationException({tp: self.positions[tp] for tp in found}, found,
                                         undefined_resets)

    def _fetch_position(self, tp) -> tuple:
        return (self.positions.get(tp), self.position_epochs.get(tp),
                self.position_leaders.get(tp))

    def _complete_validation(self, tp, epoch: int, end_offset: int) -> None:
        """SubscriptionState.maybeCompleteValidation."""
        c = self.cluster
        position = self.positions[tp]
        can_reset = self.config["auto.offset.reset"] != "none"   # hasDefaultOffsetResetPolicy
        if (end_offset < 0 or epoch < 0) and c.rules.clients.consumer_validation_undefined_resets:
            # KAFKA-9840 / KAFKA-10113 (2.6+): a truncation of unknown extent
            c.trace.record("consumer_truncation", self.client_id, tp[0], tp[1],
                     (position, None, "reset" if can_reset else "LogTruncationException"))
            if can_reset:
                del self.positions[tp]
                self.reset_pending.add(tp)
                self.awaiting_validation.discard(tp)
            else:
                self._truncations[tp] = None
        elif end_offset < position:
            c.trace.record("consumer_truncation", self.client_id, tp[0], tp[1],
                     (position, end_offset, "seek" if can_reset else "LogTruncationException"))
            if can_reset:
                # seekValidated: the first offset known to diverge, with its epoch
                self.positions[tp] = end_offset
                self.position_epochs[tp] = epoch
                self.awaiting_validation.discard(tp)
            else:
                self._truncations[tp] = (end_offset, epoch)
        else:
            self.awaiting_validation.discard(tp)

    def _on_validation(self, msg: OffsetsForLeaderEpochResponse) -> None:
        asked = self._validating.pop(msg.correlation_id, {})
        for topic, partition, err, epoch, end_offset in msg.partitions:
            tp = (topic, partition)
            if tp not in asked or tp not in self.awaiting_validation or \
                    self._fetch_position(tp) != asked[tp]:
                continue  # the position moved on meanwhile
            if err != E.NONE:
                self.leaders[tp] = -1   # metadata.requestUpdate(); retried next poll
                continue
            self._complete_validation(tp, epoch, end_offset)

    def _leader_for(self, tp) -> int:
        return self.leaders.get(tp, -1)

    def _fetch_target(self, tp) -> int:
        pref = self.preferred.get(tp)
        if pref is not None and pref[1] > self.cluster.now:
            return pref[0]
        self.preferred.pop(tp, None)
        return self._leader_for(tp)

    def fetching_from(self, topic: str, partition: int = 0) -> int:
        """The broker this consumer fetches the partition from (a follower under KIP-392)."""
        return self._fetch_target((topic, partition))

    def poll(self, timeout_ms: int = 1000, max_records: int | None = None
             ) -> list[ConsumerRecord]:
        """Fetch from the leaders of the assigned partitions; returns the new records."""
        validation.check_poll(timeout_ms, max_records)
        if not self.assignment:
            raise RuntimeError("Consumer is not assigned any partitions: call assign() first")
        self._update_fetch_positions(timeout_ms)
        epochs_before = dict(self.position_epochs)
        start = len(self.consumed)
        deadline = self.cluster.now + timeout_ms
        for _round in range(2):  # a redirect to a preferred read replica costs one round
            redirects = len(self.preferred)
            self._send_fetches()
            self._await(max(0, deadline - self.cluster.now))
            if len(self.consumed) > start or len(self.preferred) <= redirects:
                break
        limit = max_records if max_records is not None else self.config["max.poll.records"]
        return self._collect_fetch(start, limit, epochs_before)

    def _update_fetch_positions(self, timeout_ms: int) -> None:
        """KafkaConsumer.updateFetchPositions: metadata for partitions without a known leader,
        positions validated (KIP-320, 2.3+), then a position for each partition without one
        (refreshCommittedOffsetsIfNeeded, resetPositionsIfNeeded)."""
        if any(self._leader_for(tp) < 0 for tp in self.assignment):
            self._refresh_metadata(timeout_ms)
        validate = self.cluster.rules.clients.consumer_validates_position
        if validate:
            self._validate_positions(timeout_ms)
        if self._init_positions(timeout_ms) and validate:
            # KafkaConsumer.poll loops updateFetchPositions until the timeout: a committed
            # position awaiting validation is validated before it is fetched from
            self._validate_positions(timeout_ms)

    def _send_fetches(self) -> None:
        """Fetcher.sendFetches: one FetchRequest per broker fetched from (the leader, or a
        preferred read replica under KIP-392) for the partitions with a position that is not
        awaiting validation, skipping a broker in its reconnect backoff."""
        cfg = self.config
        for target, parts in self._prepare_fetch_requests().items():
            self._send(target, FetchRequest(
                self._next_corr(), CONSUMER_REPLICA_ID, cfg["fetch.max.wait.ms"],
                cfg["fetch.min.bytes"], cfg["fetch.max.bytes"], tuple(parts),
                cfg["isolation.level"], cfg.get("client.rack") or ""), "fetch")

    def _prepare_fetch_requests(self) -> dict[int, list[FetchPartition]]:
        """AbstractFetch.prepareFetchRequests: the fetchable partitions by broker."""
        validate = self.cluster.rules.clients.consumer_validates_position
        by_target: dict[int, list[FetchPartition]] = {}
        for tp in self.assignment:
            target = self._fetch_target(tp)
            if target < 0 or tp not in self.positions or tp in self.awaiting_validation \
                    or self.cluster.transport.is_unavailable(self.client_id, target):
                continue   # (Fetcher: "awaiting reconnect backoff")
            # 2.3+: CurrentLeaderEpoch = position.currentLeader.epoch (KAFKA-7747)
            current_epoch = self.position_leaders.get(tp, (-1, -1))[1] if validate else -1
            by_target.setdefault(target, []).append(FetchPartition(
                tp[0], tp[1], self.positions[tp], current_epoch, -1, -1,
                self.config["max.partition.fetch.bytes"]))
        return by_target

    def _collect_fetch(self, start: int, limit: int, epochs_before: dict) -> list[ConsumerRecord]:
        """FetchCollector.collectFetch: the records fetched by this poll, at most ``limit``
        (``max.poll.records``); the rest is fetched again next time: each position goes back
        to the first record not handed out."""
        new = self.consumed[start:]
        if len(new) <= limit:
            return new
        for r in new[limit:]:
            tp = (r.topic, r.partition)
            if r.offset < self.positions[tp]:
                self.positions[tp] = r.offset
                self.position_epochs[tp] = epochs_before.get(tp)
        for r in new[:limit]:
            tp = (r.topic, r.partition)
            if self.positions[tp] == r.offset + 1:
                self.position_epochs[tp] = r.leader_epoch
        del self.consumed[start + limit:]
        return new[:limit]

    def _init_positions(self, timeout_ms: int) -> bool:
        """Positions for partitions without one: the committed offset (refreshCommittedOffsets
        IfNeeded), else auto.offset.reset (resetPositionsIfNeeded). True if a committed position
        awaits validation."""
        missing = [tp for tp in self.assignment if tp not in self.positions]
        if not missing:
            return False
        reset, to_validate = self._refresh_committed_offsets(missing)
        if reset:
            self._reset_positions(reset, timeout_ms)
        return to_validate

    def _refresh_committed_offsets(self, missing: list) -> tuple[list, bool]:
        """ConsumerCoordinator.refreshCommittedOffsetsIfNeeded: each partition of ``missing``
        with a committed offset resumes from it (with its epoch, awaiting validation, 2.3+);
        returns the partitions left to reset and whether one awaits validation."""
        reset = []
        to_validate = False
        for tp in missing:
            committed = None if tp in self.reset_pending else \
                self.committed_offset_and_metadata(*tp)
            if committed is None:
                reset.append(tp)
            elif self.cluster.rules.clients.consumer_validates_position:
                self._seek_unvalidated(tp, committed.offset, committed.leader_epoch)
                to_validate = to_validate or tp in self.awaiting_validation
            else:
                self._set_position(tp, committed.offset)   # before 2.3: no FetchPosition epoch
        return reset, to_validate

    def _reset_positions(self, reset: list, timeout_ms: int) -> None:
        """OffsetFetcher.resetPositionsIfNeeded: ListOffsets (earliest or latest, by
        ``auto.offset.reset``) to each leader; with the policy "none", an exception instead."""
        policy = self.config["auto.offset.reset"]
        if policy == "none":
            out_of_range = [tp for tp in reset if tp in self._truncated_at]
            if out_of_range:
                # Fetcher: OFFSET_OUT_OF_RANGE without a reset policy
                raise OffsetOutOfRangeException({tp: self._truncated_at.pop(tp)
                                                 for tp in out_of_range})
            raise NoOffsetForPartitionException(
                "Undefined offset with no reset policy for partitions: "
                + ", ".join(f"{t}-{p}" for t, p in sorted(reset)), reset)
        by_leader: dict[int, list] = {}
        ts = -2 if policy in ("earliest", "smallest") else -1
        for tp in reset:
            leader = self._leader_for(tp)
            if leader >= 0:
                by_leader.setdefault(leader, []).append((tp[0], tp[1], ts))
        for leader, parts in by_leader.items():
            self._send(leader, ListOffsetsRequest(self._next_corr(), -1, tuple(parts)),
                       "list_offsets")
        if by_leader:
            self._await(timeout_ms)

    def commit(self, timeout_ms: int = 5000) -> dict[tuple[str, int], int]:
        """commitSync: store the current positions as the group's committed offsets."""
        validation.check_timeout("commit(timeout_ms)", timeout_ms)
        if self.group_id is None:
            raise RuntimeError("commit needs a group.id (create the consumer with group=...)")
        # SubscriptionState.allConsumed: position.offsetEpoch since 2.3 (KAFKA-7747), none before
        with_epoch = self.cluster.rules.clients.consumer_validates_position
        offsets = tuple((t, p, off, self._committable_epoch((t, p)) if with_epoch else -1)
                        for (t, p), off in self.positions.items())
        live = self.cluster.inspect.running_brokers()
        if not live:
            raise RuntimeError("no broker is running: cannot reach the group coordinator")
        # the group coordinator: the lowest live broker id (Kafka: leader of a __consumer_offsets
        # partition chosen by the group id's hash)
        self._send(live[0], OffsetCommitRequest(self._next_corr(), self.group_id, offsets),
                   "commit")
        self._await(timeout_ms)
        return {(t, p): off for t, p, off, _epoch in offsets}

    def _committable_epoch(self, tp) -> int:
        epoch = self.position_epochs.get(tp)
        return -1 if epoch is None else epoch

    def lag(self, topic: str, partition: int = 0) -> int | None:
        """records-lag as the consumer computes it: HW - position."""
        pos = self.positions.get((topic, partition))
        hw = self.last_hw.get((topic, partition))
        return None if pos is None or hw is None else hw - pos

    def on_peer_gone(self, dead: int) -> None:
        """The connection to broker ``dead`` closed (its process died): every request still in
        flight to it fails as disconnected (NetworkClient.cancelInFlightRequests), a Fetch
        parked in its purgatory included."""
        gone = [msg for corr, (dst, msg) in self.sent_to.items()
                if dst == dead and corr in self.pending]
        for msg in gone:
            self.on_disconnect(dead, msg)

    def on_disconnect(self, dst, msg) -> None:
        """The broker died: the request fails now; leaders are looked up again next poll."""
        if self.pending.pop(getattr(msg, "correlation_id", -1), None) is None:
            return
        if isinstance(msg, FetchRequest):
            for fp in msg.partitions:
                self.leaders[(fp.topic, fp.partition)] = -1
        elif isinstance(msg, OffsetsForLeaderEpochRequest):
            for topic, partition, _current, _epoch in msg.partitions:
                self.leaders[(topic, partition)] = -1   # onFailure: metadata.requestUpdate()

    # -- responses --------------------------------------------------------------------------
    def on_message(self, src, msg) -> None:
        kind = self.pending.pop(getattr(msg, "correlation_id", -1), None)
        if kind is None:
            return
        if isinstance(msg, MetadataResponse):
            for topic, partition, err, leader, epoch, _r, _i in msg.partitions:
                if partition >= 0:
                    self.leaders[(topic, partition)] = leader if err == E.NONE else -1
                    self.leader_epochs[(topic, partition)] = epoch if err == E.NONE else -1
        elif isinstance(msg, ListOffsetsResponse):
            for topic, partition, err, offset in msg.partitions:
                if err == E.NONE:
                    self._set_position((topic, partition), offset)
                else:
                    self.leaders[(topic, partition)] = -1
        elif isinstance(msg, FetchResponse):
            self._on_fetch(msg)
        elif isinstance(msg, OffsetsForLeaderEpochResponse):
            self._on_validation(msg)
        elif isinstance(msg, OffsetCommitResponse):
            pass

    def _on_fetch(self, msg: FetchResponse) -> None:
        c = self.cluster
        for pd in msg.partitions:
            tp = (pd.topic, pd.partition)
            if pd.preferred_read_replica >= 0:
                self.preferred[tp] = (pd.preferred_read_replica,
                                      c.now + self.config.get("metadata.max.age.ms", 300000))
                c.trace.record("fetch_redirect", self.client_id, pd.topic, pd.partition,
                         ev.FetchRedirect(pd.preferred_read_replica))
                continue
            if pd.error != E.NONE:
                self.preferred.pop(tp, None)  # errors clear the preferred replica
                self.errors.append((c.now, pd.topic, pd.partition, pd.error))
                if pd.error == E.OFFSET_OUT_OF_RANGE:
                    # requestOffsetReset: auto.offset.reset applies on the next poll (not the
                    # committed offset); with none the next poll throws
                    if tp in self.positions:
                        self._truncated_at[tp] = self.positions.pop(tp)
                        self.reset_pending.add(tp)
                else:
                    self.leaders[tp] = -1
                continue
            self.last_hw[tp] = pd.high_watermark
            chunk = pd.records
            if not len(chunk) or self.positions.get(tp) != chunk.base_offset:
                continue
            for i, rid in enumerate(chunk.ids):
                self.consumed.append(ConsumerRecord(pd.topic, pd.partition,
                                                    chunk.base_offset + i, chunk.epochs[i], rid,
                                                    c.records.value(rid), pd.high_watermark))
            self.positions[tp] = chunk.base_offset + len(chunk)
            self.position_epochs[tp] = chunk.epochs[-1]   # FetchPosition.offsetEpoch
            c.trace.record("consume", self.client_id, pd.topic, pd.partition,
                     (chunk.base_offset, chunk.last_offset, pd.high_watermark))
