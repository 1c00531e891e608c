"""The consumer's partition state (org.apache.kafka.clients.consumer.internals.SubscriptionState).

One ``TopicPartitionState`` per assigned partition, in assignment order, holds where the
consumer reads next and whether it may read there:

- ``FetchPosition``: the next offset, the leader epoch of the last record consumed before it
  (``offset_epoch``, None: unknown) and the leader (id, epoch) the position was established
  against (``current_leader``, a ``LeaderAndEpoch``). KIP-320 (2.3+) compares that leader with
  the metadata's to decide that a position must be validated.
- ``FetchState``: INITIALIZING (no position yet), FETCHING, AWAIT_RESET (auto.offset.reset
  will give a position), AWAIT_VALIDATION (OffsetsForLeaderEpoch must confirm the position
  first). A state that does not require a position drops it, as Kafka's ``transitionState``
  does, and an invalid transition is ignored.
- the high watermark, log start offset and last stable offset of the last fetch (the lag), the
  preferred read replica and its lease (KIP-392), paused, the reset strategy.

``maybe_complete_validation`` is the rule that turns an OffsetsForLeaderEpoch answer into "the
position is fine", "seek back to the first offset known to diverge" or, with
``auto.offset.reset=none``, a ``LogTruncation`` the consumer raises.

Topic partitions are ``(topic, partition)`` tuples. Methods are Kafka's, in snake case; a
method that Kafka overloads as getter and setter (``position``) takes the value as an optional
second argument. Asking about a partition that is not assigned raises ``IllegalStateException``
("No current assignment for partition"), as Kafka's ``assignedState`` does.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field

from kafkasim.core.errors import IllegalArgumentException, IllegalStateException
from kafkasim.settings.config import parse_auto_offset_reset
from kafkasim.settings.javautil import java_duration_string

__all__ = [
    "AutoOffsetResetStrategy", "EpochEndOffset", "FetchPosition", "FetchState",
    "IllegalStateException", "LeaderAndEpoch", "LogTruncation", "OffsetAndMetadata",
    "OffsetResetStrategy", "SubscriptionState", "TopicPartitionState", "UNDEFINED_EPOCH",
    "UNDEFINED_EPOCH_OFFSET",
]

#: OffsetsForLeaderEpoch's "no such epoch" answer (RecordBatch.NO_PARTITION_LEADER_EPOCH,
#: OffsetsForLeaderEpochResponse.UNDEFINED_EPOCH_OFFSET)
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1


class AutoOffsetResetStrategy:
    """AutoOffsetResetStrategy (clients 4.0+; the OffsetResetStrategy enum before): where a
    partition without a position starts. ``earliest`` / ``latest`` (the 0.8.2 names
    ``smallest`` / ``largest`` read as these), ``none`` (NoOffsetForPartitionException), or
    (4.0+, KIP-1106) ``by_duration:<ISO-8601 duration>``: the first record whose timestamp is at
    most that long before now. Equal when their type and duration are (``EARLIEST``, ``LATEST``
    and ``NONE`` are single objects)."""

    __slots__ = ("type", "duration_ns")
    EARLIEST: AutoOffsetResetStrategy
    LATEST: AutoOffsetResetStrategy
    NONE: AutoOffsetResetStrategy

    def __init__(self, type_: str, duration_ns: int | None = None) -> None:
        self.type = type_
        self.duration_ns = duration_ns   # by_duration's, else None

    @classmethod
    def from_string(cls, value: str | None) -> AutoOffsetResetStrategy:
        """AutoOffsetResetStrategy.fromString: IllegalArgumentException for anything but the
        lower-case names and a non-negative by_duration."""
        try:
            type_, duration = parse_auto_offset_reset(value)
        except ValueError as e:
            raise IllegalArgumentException(str(e)) from None
        return cls(type_, duration) if duration is not None else _BY_NAME[type_]

    @classmethod
    def of(cls, value: str | AutoOffsetResetStrategy) -> AutoOffsetResetStrategy:
        """``value`` as a strategy: a strategy, a 0.8.2 name, or ``from_string``."""
        if isinstance(value, cls):
            return value
        return cls.from_string({"smallest": "earliest", "largest": "latest"}.get(value, value))

    @property
    def name(self) -> str:
        """AutoOffsetResetStrategy.name: the type, e.g. "by_duration"."""
        return self.type

    def timestamp(self, now_ms: int | None = None) -> int | None:
        """AutoOffsetResetStrategy.timestamp: the ListOffsets target, EARLIEST_TIMESTAMP (-2) or
        LATEST_TIMESTAMP (-1); by_duration ``now_ms`` (the simulated clock, Kafka's
        Instant.now()) less the duration, in whole ms (Instant.toEpochMilli); None for none."""
        if self.duration_ns is not None:
            if now_ms is None:
                raise ValueError("a by_duration strategy's timestamp needs the time: "
                                 "timestamp(cluster.now)")
            return (now_ms * 1_000_000 - self.duration_ns) // 1_000_000
        return {"earliest": -2, "latest": -1}.get(self.type)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, AutoOffsetResetStrategy) and \
            (self.type, self.duration_ns) == (other.type, other.duration_ns)

    def __hash__(self) -> int:
        return hash((self.type, self.duration_ns))

    def __reduce__(self) -> tuple:
        # EARLIEST, LATEST and NONE unpickle as themselves (a snapshot keeps them one object)
        if self.duration_ns is None:
            return (_named_strategy, (self.type,))
        return (AutoOffsetResetStrategy, (self.type, self.duration_ns))

    def __repr__(self) -> str:
        # AutoOffsetResetStrategy.toString (its Duration as java.time prints it)
        extra = "" if self.duration_ns is None else \
            f", duration={java_duration_string(self.duration_ns)}"
        return f"AutoOffsetResetStrategy{{type={self.type}{extra}}}"


AutoOffsetResetStrategy.EARLIEST = AutoOffsetResetStrategy("earliest")
AutoOffsetResetStrategy.LATEST = AutoOffsetResetStrategy("latest")
AutoOffsetResetStrategy.NONE = AutoOffsetResetStrategy("none")
_BY_NAME = {s.type: s for s in (AutoOffsetResetStrategy.EARLIEST, AutoOffsetResetStrategy.LATEST,
                                AutoOffsetResetStrategy.NONE)}


def _named_strategy(type_: str) -> AutoOffsetResetStrategy:
    """EARLIEST, LATEST or NONE by name (how they unpickle)."""
    return _BY_NAME[type_]


#: the clients' name for it before 4.0 (an enum of the three first)
OffsetResetStrategy = AutoOffsetResetStrategy


class FetchState(enum.Enum):
    """SubscriptionState.FetchStates: (valid transitions, requires a position, has a valid
    position)."""
    INITIALIZING = ("FETCHING AWAIT_RESET AWAIT_VALIDATION", False, False)
    FETCHING = ("FETCHING AWAIT_RESET AWAIT_VALIDATION", True, True)
    AWAIT_RESET = ("FETCHING AWAIT_RESET", False, False)
    AWAIT_VALIDATION = ("FETCHING AWAIT_RESET AWAIT_VALIDATION", True, False)

    def __init__(self, transitions: str, requires_position: bool, has_valid_position: bool):
        self._transitions = frozenset(transitions.split())
        self._requires_position = requires_position
        self._has_valid_position = has_valid_position

    def valid_transitions(self) -> frozenset[str]:
        return self._transitions

    def requires_position(self) -> bool:
        return self._requires_position

    def has_valid_position(self) -> bool:
        return self._has_valid_position

    def transition_to(self, new_state: FetchState) -> FetchState:
        """The new state if the move is allowed, else this one."""
        return new_state if new_state.name in self._transitions else self


@dataclass(frozen=True, slots=True)
class LeaderAndEpoch:
    """Metadata.LeaderAndEpoch: the partition's leader and its epoch (None: unknown)."""
    leader: int | None = None
    epoch: int | None = None

    @classmethod
    def no_leader_or_epoch(cls) -> LeaderAndEpoch:
        return cls(None, None)

    @classmethod
    def of(cls, leader: int, epoch: int) -> LeaderAndEpoch:
        """From the metadata's ints, -1 meaning unknown."""
        return cls(None if leader < 0 else leader, None if epoch < 0 else epoch)


@dataclass(frozen=True, slots=True)
class FetchPosition:
    """SubscriptionState.FetchPosition: the next offset to fetch, the epoch of the record
    before it and the leader the position was established against."""
    offset: int
    offset_epoch: int | None = None
    current_leader: LeaderAndEpoch = field(default_factory=LeaderAndEpoch.no_leader_or_epoch)


@dataclass(slots=True, frozen=True)
class OffsetAndMetadata:
    """org.apache.kafka.clients.consumer.OffsetAndMetadata: a committed offset and the leader
    epoch of the last record consumed before it (None: unknown; KIP-320, 2.1+)."""
    offset: int
    leader_epoch: int | None = None
    metadata: str = ""


@dataclass(frozen=True, slots=True)
class EpochEndOffset:
    """OffsetForLeaderEpochResponseData.EpochEndOffset: the leader's answer for one partition."""
    error: str = "NONE"
    partition: int = 0
    leader_epoch: int = UNDEFINED_EPOCH
    end_offset: int = UNDEFINED_EPOCH_OFFSET


@dataclass(frozen=True, slots=True)
class LogTruncation:
    """SubscriptionState.LogTruncation: validation found the log truncated below
    ``fetch_position`` and no reset policy applies; ``divergent_offset``: the first offset known
    to diverge and its epoch (None: the leader could not say)."""
    topic_partition: tuple[str, int]
    fetch_position: FetchPosition
    divergent_offset: OffsetAndMetadata | None


class TopicPartitionState:
    """SubscriptionState.TopicPartitionState: one assigned partition's fetch state."""

    __slots__ = ("fetch_state", "position", "high_watermark", "log_start_offset",
                 "last_stable_offset", "paused", "reset_strategy", "next_retry_time_ms",
                 "preferred_read_replica", "preferred_read_replica_expire_time_ms",
                 "end_offset_requested")

    def __init__(self) -> None:
        self.fetch_state = FetchState.INITIALIZING
        self.position: FetchPosition | None = None
        self.high_watermark: int | None = None
        self.log_start_offset: int | None = None
        self.last_stable_offset: int | None = None
        self.paused = False
        self.reset_strategy: OffsetResetStrategy | None = None
        self.next_retry_time_ms: int | None = None
        self.preferred_read_replica: int | None = None
        self.preferred_read_replica_expire_time_ms: int | None = None
        self.end_offset_requested = False

    def __repr__(self) -> str:
        return f"TopicPartitionState({self.fetch_state.name}, {self.position})"

    def transition_state(self, new_state: FetchState, position: FetchPosition | None = None,
                         keep_position: bool = False) -> bool:
        """transitionState: move to ``new_state`` if allowed, then set ``position`` (unless
        ``keep_position``); a state that needs no position drops it. True if it moved."""
        if self.fetch_state.transition_to(new_state) is not new_state:
            return False
        self.fetch_state = new_state
        if not keep_position:
            self.position = position
        self.next_retry_time_ms = None
        if self.position is None and new_state.requires_position():
            raise IllegalStateException(
                f"Transitioned subscription state to {new_state.name}, but position is null")
        if not new_state.requires_position():
            self.position = None
        return True

    # -- position -----------------------------------------------------------------------------
    def seek_validated(self, position: FetchPosition) -> None:
        if self.transition_state(FetchState.FETCHING, position):
            self.reset_strategy = None

    def seek_unvalidated(self, position: FetchPosition) -> None:
        self.seek_validated(position)
        self.validate_position(position)

    def validate_position(self, position: FetchPosition) -> None:
        """With an epoch on both sides the position awaits validation; without, it is used."""
        if position.offset_epoch is not None and position.current_leader.epoch is not None:
            self.transition_state(FetchState.AWAIT_VALIDATION, position)
        else:   # no epoch information: skip validation
            self.transition_state(FetchState.FETCHING, position)

    def maybe_validate_position(self, current: LeaderAndEpoch) -> bool:
        """A position established against another leader or epoch than ``current`` is
        validated again (and the preferred read replica forgotten); True if it awaits
        validation."""
        if self.fetch_state is FetchState.AWAIT_RESET or current.leader is None:
            return False
        position = self.position
        if position is not None and position.current_leader != current:
            self.validate_position(FetchPosition(position.offset, position.offset_epoch, current))
            self.preferred_read_replica = None
        return self.fetch_state is FetchState.AWAIT_VALIDATION

    def update_position_leader_no_validation(self, current: LeaderAndEpoch) -> None:
        """The leader cannot validate (no usable OffsetsForLeaderEpoch): fetch from here."""
        if self.position is not None:
            position = self.position
            self.transition_state(FetchState.FETCHING,
                                  FetchPosition(position.offset, position.offset_epoch, current))

    def complete_validation(self) -> None:
        if self.position is not None:
            self.transition_state(FetchState.FETCHING, keep_position=True)

    def reset(self, strategy: OffsetResetStrategy) -> None:
        if self.transition_state(FetchState.AWAIT_RESET):
            self.reset_strategy = strategy

    def set_position(self, position: FetchPosition) -> None:
        if not self.has_valid_position():
            raise IllegalStateException(
                "Cannot set a new position without a valid current position")
        self.position = position

    # -- questions ----------------------------------------------------------------------------
    def has_valid_position(self) -> bool:
        return self.fetch_state.has_valid_position()

    def has_position(self) -> bool:
        return self.position is not None

    def awaiting_validation(self) -> bool:
        return self.fetch_state is FetchState.AWAIT_VALIDATION

    def awaiting_reset(self) -> bool:
        return self.fetch_state is FetchState.AWAIT_RESET

    def awaiting_retry_backoff(self, now_ms: int) -> bool:
        return self.next_retry_time_ms is not None and now_ms < self.next_retry_time_ms

    def should_initialize(self) -> bool:
        return self.fetch_state is FetchState.INITIALIZING

    def is_fetchable(self) -> bool:
        return not self.paused and self.has_valid_position()

    # -- preferred read replica (KIP-392) -----------------------------------------------------
    def get_preferred_read_replica(self, time_ms: int) -> int | None:
        """The replica to fetch from while its lease lasts (expired after ``time_ms`` passes
        the expiry time)."""
        expire = self.preferred_read_replica_expire_time_ms
        if expire is not None and time_ms > expire:
            self.preferred_read_replica = None
            return None
        return self.preferred_read_replica

    def update_preferred_read_replica(self, replica: int, expire_time_ms: int) -> None:
        """A new replica starts a lease; the same replica again keeps the one it has."""
        if self.preferred_read_replica is None or replica != self.preferred_read_replica:
            self.preferred_read_replica = replica
            self.preferred_read_replica_expire_time_ms = expire_time_ms

    def clear_preferred_read_replica(self) -> int | None:
        removed = self.preferred_read_replica
        if removed is not None:
            self.preferred_read_replica = None
            self.preferred_read_replica_expire_time_ms = None
        return removed


class SubscriptionState:
    """SubscriptionState: the assigned partitions' states, in assignment order.

    ``default_reset_strategy``: auto.offset.reset. ``detects_unknown_truncation``: since 2.6
    (KAFKA-9840 / KAFKA-10113) an OffsetsForLeaderEpoch answer without an end offset or epoch
    is a truncation of unknown extent (a reset, or a LogTruncation without a divergent
    offset); before, its end offset -1 was compared with the position like any other, so the
    position became -1."""

    def __init__(self, default_reset_strategy: str | OffsetResetStrategy = "latest", *,
                 detects_unknown_truncation: bool = True) -> None:
        self.default_reset_strategy = OffsetResetStrategy.of(default_reset_strategy)
        self.detects_unknown_truncation = detects_unknown_truncation
        self.assignment: dict[tuple[str, int], TopicPartitionState] = {}
        # the topics subscribed to (subscribe), or those of the user's assignment
        # (assignFromUser's manualSubscribedTopics), in the order they were named
        self.subscription: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"SubscriptionState({self.assignment})"

    # -- assignment ---------------------------------------------------------------------------
    def assign_from_user(self, partitions) -> bool:
        """The assignment becomes ``partitions`` (in that order); a partition kept keeps its
        state. True if it changed."""
        wanted = list(dict.fromkeys(partitions))
        self.subscription = tuple(dict.fromkeys(t for t, _p in wanted))
        if wanted == list(self.assignment):
            return False
        self.assignment = {tp: self.assignment.get(tp) or TopicPartitionState() for tp in wanted}
        return True

    def subscribe(self, topics, listener=None) -> bool:
        """SubscriptionState.subscribe (changeSubscription): the topics subscribed to become
        ``topics`` (a set is taken in sorted order); the group then assigns their partitions.
        True if it changed. ``listener`` (a ConsumerRebalanceListener) is accepted and unused:
        no rebalance is modelled."""
        if isinstance(topics, (set, frozenset)):
            topics = sorted(topics)
        wanted = tuple(dict.fromkeys(topics))
        if wanted == self.subscription:
            return False
        self.subscription = wanted
        return True

    def metadata_topics(self) -> tuple[str, ...]:
        """SubscriptionState.metadataTopics: the topics the consumer's Metadata requests name
        (those subscribed to, or those of the user's assignment)."""
        return self.subscription

    def assigned_state(self, tp) -> TopicPartitionState:
        state = self.assignment.get(tp)
        if state is None:
            raise IllegalStateException(f"No current assignment for partition {_name(tp)}")
        return state

    def assigned_partitions(self) -> set[tuple[str, int]]:
        return set(self.assignment)

    def assigned_partitions_list(self) -> list[tuple[str, int]]:
        return list(self.assignment)

    def num_assigned_partitions(self) -> int:
        return len(self.assignment)

    def is_assigned(self, tp) -> bool:
        return tp in self.assignment

    def unsubscribe(self) -> None:
        self.assignment = {}
        self.subscription = ()

    # -- positions ----------------------------------------------------------------------------
    def seek(self, tp, offset: int) -> None:
        """A position with no epoch and no leader: nothing to validate."""
        self.seek_validated(tp, FetchPosition(offset))

    def seek_validated(self, tp, position: FetchPosition) -> None:
        self.assigned_state(tp).seek_validated(position)

    def seek_unvalidated(self, tp, position: FetchPosition) -> None:
        self.assigned_state(tp).seek_unvalidated(position)

    def maybe_seek_unvalidated(self, tp, position: FetchPosition,
                               requested_reset_strategy: OffsetResetStrategy) -> None:
        """A reset's answer: taken only if the partition still awaits that same reset."""
        state = self.assignment.get(tp)
        if state is not None and state.awaiting_reset() and \
                state.reset_strategy == requested_reset_strategy:
            state.seek_unvalidated(position)

    def position(self, tp, position: FetchPosition | None = None) -> FetchPosition | None:
        """The partition's position; with ``position``, set it (the current one must be valid)."""
        state = self.assigned_state(tp)
        if position is not None:
            state.set_position(position)
        return state.position

    def position_or_null(self, tp) -> FetchPosition | None:
        state = self.assignment.get(tp)
        return None if state is None else state.position

    def valid_position(self, tp) -> FetchPosition | None:
        state = self.assigned_state(tp)
        return state.position if state.has_valid_position() else None

    def has_valid_position(self, tp) -> bool:
        state = self.assignment.get(tp)
        return state is not None and state.has_valid_position()

    def has_all_fetch_positions(self) -> bool:
        return all(s.has_valid_position() for s in self.assignment.values())

    def all_consumed(self) -> dict[tuple[str, int], OffsetAndMetadata]:
        """What a commit stores: every valid position with the epoch of its last record."""
        return {tp: OffsetAndMetadata(s.position.offset, s.position.offset_epoch)
                for tp, s in self.assignment.items() if s.has_valid_position()}

    # -- validation (KIP-320) -----------------------------------------------------------------
    def maybe_validate_position_for_current_leader(
            self, tp, leader_and_epoch: LeaderAndEpoch, *,
            usable_offsets_for_leader_epoch: bool = True) -> bool:
        """Validate the position if it was established against another leader or epoch; a
        leader that cannot answer OffsetsForLeaderEpoch is fetched from without validation.
        True if the partition awaits validation."""
        state = self.assignment.get(tp)
        if state is None:
            return False
        if leader_and_epoch.leader is not None and not usable_offsets_for_leader_epoch:
            state.update_position_leader_no_validation(leader_and_epoch)
            return False
        return state.maybe_validate_position(leader_and_epoch)

    def maybe_complete_validation(self, tp, request_position: FetchPosition,
                                  epoch_end_offset: EpochEndOffset) -> LogTruncation | None:
        """The leader's end offset for the position's epoch: at or past the position, the
        position is valid; below it, the log was truncated under the consumer: seek to the end
        offset (the first offset known to diverge), or with no reset policy return the
        truncation. Ignored if the position moved since the request."""
        state = self.assignment.get(tp)
        if state is None or not state.awaiting_validation() or state.position != request_position:
            return None
        current = state.position
        end, epoch = epoch_end_offset.end_offset, epoch_end_offset.leader_epoch
        if self.detects_unknown_truncation and \
                (end == UNDEFINED_EPOCH_OFFSET or epoch == UNDEFINED_EPOCH):
            if self.has_default_offset_reset_policy():
                self.request_offset_reset(tp)
                return None
            return LogTruncation(tp, request_position, None)
        if end < current.offset:
            if self.has_default_offset_reset_policy():
                state.seek_validated(FetchPosition(end, epoch, current.current_leader))
                return None
            return LogTruncation(tp, request_position, OffsetAndMetadata(end, epoch))
        state.complete_validation()
        return None

    def awaiting_validation(self, tp) -> bool:
        return self.assigned_state(tp).awaiting_validation()

    def complete_validation(self, tp) -> None:
        self.assigned_state(tp).complete_validation()

    def partitions_needing_validation(self, now_ms: int) -> list[tuple[str, int]]:
        return [tp for tp, s in self.assignment.items()
                if s.awaiting_validation() and not s.awaiting_retry_backoff(now_ms)]

    # -- resets -------------------------------------------------------------------------------
    def has_default_offset_reset_policy(self) -> bool:
        return self.default_reset_strategy != OffsetResetStrategy.NONE

    def request_offset_reset(self, tp, strategy: str | OffsetResetStrategy | None = None) -> None:
        """The partition awaits a reset by ``strategy`` (default: auto.offset.reset)."""
        strategy = self.default_reset_strategy if strategy is None else \
            OffsetResetStrategy.of(strategy)
        self.assigned_state(tp).reset(strategy)

    def request_offset_reset_if_partition_assigned(self, tp) -> None:
        if tp in self.assignment:
            self.request_offset_reset(tp)

    def is_offset_reset_needed(self, tp) -> bool:
        return self.assigned_state(tp).awaiting_reset()

    def reset_strategy(self, tp) -> OffsetResetStrategy | None:
        return self.assigned_state(tp).reset_strategy

    def initializing_partitions(self) -> list[tuple[str, int]]:
        return [tp for tp, s in self.assignment.items() if s.should_initialize()]

    def reset_initializing_positions(self) -> list[tuple[str, int]]:
        """Every partition still without a position awaits a reset by auto.offset.reset;
        returns them (with ``none``: they stay as they are, for NoOffsetForPartition)."""
        initializing = self.initializing_partitions()
        if self.has_default_offset_reset_policy():
            for tp in initializing:
                self.request_offset_reset(tp)
        return initializing

    def partitions_needing_reset(self, now_ms: int) -> list[tuple[str, int]]:
        return [tp for tp, s in self.assignment.items()
                if s.awaiting_reset() and not s.awaiting_retry_backoff(now_ms)]

    def request_failed(self, partitions, next_retry_time_ms: int) -> None:
        for tp in partitions:
            state = self.assignment.get(tp)
            if state is not None:
                state.next_retry_time_ms = next_retry_time_ms

    # -- fetching -----------------------------------------------------------------------------
    def is_fetchable(self, tp) -> bool:
        state = self.assignment.get(tp)
        return state is not None and state.is_fetchable()

    def fetchable_partitions(self, is_available=lambda tp: True) -> list[tuple[str, int]]:
        return [tp for tp, s in self.assignment.items() if s.is_fetchable() and is_available(tp)]

    def pause(self, tp) -> None:
        self.assigned_state(tp).paused = True

    def resume(self, tp) -> None:
        self.assigned_state(tp).paused = False

    def is_paused(self, tp) -> bool:
        state = self.assignment.get(tp)
        return state is not None and state.paused

    def paused_partitions(self) -> set[tuple[str, int]]:
        return {tp for tp, s in self.assignment.items() if s.paused}

    # -- what the last fetch said -------------------------------------------------------------
    def update_high_watermark(self, tp, high_watermark: int) -> None:
        state = self.assigned_state(tp)
        state.high_watermark = high_watermark
        state.end_offset_requested = False

    def update_log_start_offset(self, tp, log_start_offset: int) -> None:
        self.assigned_state(tp).log_start_offset = log_start_offset

    def update_last_stable_offset(self, tp, last_stable_offset: int) -> None:
        state = self.assigned_state(tp)
        state.last_stable_offset = last_stable_offset
        state.end_offset_requested = False

    def try_updating_high_watermark(self, tp, high_watermark: int) -> bool:
        return self._if_assigned(tp, self.update_high_watermark, high_watermark)

    def try_updating_log_start_offset(self, tp, log_start_offset: int) -> bool:
        return self._if_assigned(tp, self.update_log_start_offset, log_start_offset)

    def try_updating_last_stable_offset(self, tp, last_stable_offset: int) -> bool:
        return self._if_assigned(tp, self.update_last_stable_offset, last_stable_offset)

    def _if_assigned(self, tp, update, value) -> bool:
        if tp not in self.assignment:
            return False
        update(tp, value)
        return True

    def partition_lag(self, tp, isolation_level: str = "read_uncommitted") -> int | None:
        """records-lag: the end offset (HW, or LSO under read_committed) minus the position."""
        state = self.assigned_state(tp)
        end = self.partition_end_offset(tp, isolation_level)
        return None if state.position is None or end is None else end - state.position.offset

    def partition_end_offset(self, tp, isolation_level: str = "read_uncommitted") -> int | None:
        state = self.assigned_state(tp)
        return state.last_stable_offset if isolation_level == "read_committed" \
            else state.high_watermark

    def partition_lead(self, tp) -> int | None:
        """records-lead: the position minus the log start offset."""
        state = self.assigned_state(tp)
        if state.log_start_offset is None or state.position is None:
            return None
        return state.position.offset - state.log_start_offset

    # -- preferred read replica (KIP-392) -----------------------------------------------------
    def preferred_read_replica(self, tp, time_ms: int) -> int | None:
        state = self.assignment.get(tp)
        return None if state is None else state.get_preferred_read_replica(time_ms)

    def update_preferred_read_replica(self, tp, replica: int, expire_time_ms: int) -> None:
        self.assigned_state(tp).update_preferred_read_replica(replica, expire_time_ms)

    def try_updating_preferred_read_replica(self, tp, replica: int, expire_time_ms: int) -> bool:
        if tp not in self.assignment:
            return False
        self.update_preferred_read_replica(tp, replica, expire_time_ms)
        return True

    def clear_preferred_read_replica(self, tp) -> int | None:
        state = self.assignment.get(tp)
        return None if state is None else state.clear_preferred_read_replica()


def _name(tp) -> str:
    """A TopicPartition's toString: ``topic-partition``."""
    return f"{tp[0]}-{tp[1]}"
