"""Broker sessions on the active KRaft controller:
``org.apache.kafka.controller.BrokerHeartbeatManager`` (KIP-631, trunk 1eb7644).

The manager keeps, per registered broker, the last contact time, the metadata offset it last
reported and its controlled-shutdown offset. Unfenced brokers sit in a list sorted by last
contact (oldest first), so the stale-session check looks at the head only
(``findOneStaleBroker``); the *active* brokers (unfenced, not shutting down) give the lowest
metadata offset a controlled shutdown waits for. Kafka counts time in monotonic nanoseconds;
the simulator passes integer milliseconds (``now_ms``) and the session timeout in ms
(``broker.session.timeout.ms``, default 9000).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

from kafkasim.control.kraft.striped_placer import UsableBroker
from kafkasim.core.errors import IllegalStateException
from kafkasim.settings.javautil import JavaHashMap, integer_hash_code, to_int32

LONG_MAX_VALUE = (1 << 63) - 1   # Long.MAX_VALUE: "no check needed" / "no active broker"


class BrokerIdAndEpoch(NamedTuple):
    """``org.apache.kafka.controller.BrokerIdAndEpoch``: the key of a broker's session."""

    id: int
    epoch: int


def broker_id_and_epoch_hash_code(key: BrokerIdAndEpoch) -> int:
    """``BrokerIdAndEpoch.hashCode``: ``Objects.hash(id, epoch)`` = 31 * (31 + id) +
    ``Long.hashCode(epoch)``, in Java's int arithmetic."""
    epoch = key.epoch & 0xFFFFFFFFFFFFFFFF
    return to_int32(31 * (31 + key.id) + to_int32(epoch ^ (epoch >> 32)))


class BrokerHeartbeatTracker:
    """``org.apache.kafka.controller.BrokerHeartbeatTracker`` (Kafka 4.0+, KAFKA-17793): the last
    contact time of each broker session, keyed by (broker id, broker epoch). A heartbeat writes
    its contact before the controller processes it (``trackBrokerHeartbeat``); the periodic
    ``maybeFenceStaleBroker`` task takes out one expired session per run
    (``maybe_remove_expired``). Sessions are expired strictly after the timeout.

    Kafka's map is a ConcurrentHashMap, iterated bucket by bucket: which of several expired
    sessions goes first follows that order (:class:`JavaHashMap`'s, the same for the table sizes
    a cluster's brokers fill)."""

    def __init__(self, session_timeout_ms: int) -> None:
        self.session_timeout_ms = session_timeout_ms
        self._contact_times = JavaHashMap(broker_id_and_epoch_hash_code)

    def update_contact_time(self, id_and_epoch: BrokerIdAndEpoch, now_ms: int) -> None:
        """``updateContactTime``."""
        self._contact_times.put(BrokerIdAndEpoch(*id_and_epoch), now_ms)

    def contact_time(self, id_and_epoch: BrokerIdAndEpoch) -> int | None:
        """``contactTime``: None (OptionalLong.empty) when the session is not tracked."""
        return self._contact_times.get(BrokerIdAndEpoch(*id_and_epoch))

    def maybe_remove_expired(self, now_ms: int) -> BrokerIdAndEpoch | None:
        """``maybeRemoveExpired``: remove and return the first expired session in map order,
        or None."""
        for key in self._contact_times.keys():
            if self.is_expired(self._contact_times.get(key), now_ms):
                self._contact_times.remove(key)
                return key
        return None

    def is_expired(self, time_ms: int, now_ms: int) -> bool:
        """``isExpired``: ``now > time and time + session timeout < now``."""
        return now_ms > time_ms and time_ms + self.session_timeout_ms < now_ms

    def has_valid_session(self, id_and_epoch: BrokerIdAndEpoch, now_ms: int) -> bool:
        """``hasValidSession``: tracked and not expired (fenced or not: the tracker does not
        know)."""
        t = self.contact_time(id_and_epoch)
        return t is not None and not self.is_expired(t, now_ms)

    def sessions(self) -> list[tuple[BrokerIdAndEpoch, int]]:
        """Every tracked session and its contact time, in map order (for views and tests)."""
        return self._contact_times.items()


class BrokerControlState:
    """``org.apache.kafka.controller.BrokerControlState``: (fenced, should_shut_down)."""

    FENCED = "FENCED"
    UNFENCED = "UNFENCED"
    CONTROLLED_SHUTDOWN = "CONTROLLED_SHUTDOWN"
    SHUTDOWN_NOW = "SHUTDOWN_NOW"

    _FLAGS = {FENCED: (True, False), UNFENCED: (False, False),
              CONTROLLED_SHUTDOWN: (False, False), SHUTDOWN_NOW: (True, True)}

    @staticmethod
    def fenced(state: str) -> bool:
        return BrokerControlState._FLAGS[state][0]

    @staticmethod
    def should_shut_down(state: str) -> bool:
        return BrokerControlState._FLAGS[state][1]

    @staticmethod
    def in_controlled_shutdown(state: str) -> bool:
        return state == BrokerControlState.CONTROLLED_SHUTDOWN


class BrokerControlStates(NamedTuple):
    """``org.apache.kafka.controller.BrokerControlStates``: the broker's state before and
    after a heartbeat, a ``(current, next)`` pair."""

    current: str
    next: str


class BrokerHeartbeatState:
    """``BrokerHeartbeatManager.BrokerHeartbeatState``. ``fenced`` means "not in the unfenced
    list" (Kafka: ``prev == null``)."""

    __slots__ = ("id", "last_contact_ms", "metadata_offset", "controlled_shutdown_offset",
                 "in_unfenced_list")

    def __init__(self, broker_id: int) -> None:
        self.id = broker_id
        self.last_contact_ms = 0
        self.metadata_offset = -1
        self.controlled_shutdown_offset = -1
        self.in_unfenced_list = False

    def fenced(self) -> bool:
        return not self.in_unfenced_list

    def shutting_down(self) -> bool:
        return self.controlled_shutdown_offset >= 0

    def __repr__(self) -> str:
        return (f"BrokerHeartbeatState(id={self.id}, last_contact_ms={self.last_contact_ms}, "
                f"metadata_offset={self.metadata_offset}, "
                f"controlled_shutdown_offset={self.controlled_shutdown_offset})")


class BrokerHeartbeatStateList:
    """``BrokerHeartbeatManager.BrokerHeartbeatStateList``: unfenced brokers sorted by last
    contact time; ``add`` walks back from the tail and inserts after the last entry whose
    contact time is <= the new one (ties keep arrival order)."""

    def __init__(self) -> None:
        self._items: list[BrokerHeartbeatState] = []

    def first(self) -> BrokerHeartbeatState | None:
        return self._items[0] if self._items else None

    def add(self, broker: BrokerHeartbeatState) -> None:
        i = len(self._items)
        while i > 0 and self._items[i - 1].last_contact_ms > broker.last_contact_ms:
            i -= 1
        self._items.insert(i, broker)
        broker.in_unfenced_list = True

    def remove(self, broker: BrokerHeartbeatState) -> None:
        if not broker.in_unfenced_list:
            raise RuntimeError(f"{broker} is not in the  list.")
        self._items.remove(broker)
        broker.in_unfenced_list = False

    def __iter__(self):
        return iter(list(self._items))


def metadata_offset_key(broker: BrokerHeartbeatState) -> tuple[int, int]:
    """``MetadataOffsetComparator``: by metadata offset, then broker id."""
    return (broker.metadata_offset, broker.id)


class BrokerHeartbeatManager:
    """``org.apache.kafka.controller.BrokerHeartbeatManager``: lives on the active controller
    only (ClusterControlManager.activate creates it and registers every known broker).

    Three rules changed between releases; the defaults are trunk's:

    - ``unfence_at_register_record_offset`` (KAFKA-13959, 3.3.0): a fenced broker is unfenced
      once its metadata offset reaches its RegisterBrokerRecord's offset; before 3.3 (False)
      it had to reach the controller's last committed offset, which a busy metadata log could
      delay indefinitely.
    - ``controlled_shutdown_offset_set_once`` (KAFKA-14292, 3.3.2 / 3.4.0): the
      controlled-shutdown offset is set by the first heartbeat only; before (False) every
      heartbeat moved it to the newest batch end, delaying the shutdown.
    - ``register_always_touches`` (3.7.0, commit 32576f61ce8): ``register`` touches the
      broker even if its fencing did not change, and ``touch`` of an unknown broker is an
      IllegalStateException; before (False) ``register`` of a known broker with unchanged
      fencing did nothing and ``touch`` created unknown brokers.
    """

    def __init__(self, session_timeout_ms: int, *,
                 unfence_at_register_record_offset: bool = True,
                 controlled_shutdown_offset_set_once: bool = True,
                 register_always_touches: bool = True,
                 heartbeat_tracker: bool = False) -> None:
        if session_timeout_ms <= 0:
            raise ValueError(f"broker.session.timeout.ms must be positive, got "
                             f"{session_timeout_ms}")
        self.session_timeout_ms = session_timeout_ms
        self.unfence_at_register_record_offset = unfence_at_register_record_offset
        self.controlled_shutdown_offset_set_once = controlled_shutdown_offset_set_once
        self.register_always_touches = register_always_touches
        # Kafka 4.0+ (KAFKA-17793): sessions live in a BrokerHeartbeatTracker keyed by broker
        # epoch, checked by the controller's periodic maybeFenceStaleBroker task; before, the
        # unfenced list sorted by last contact decided (next_check_time_ms, find_one_stale_broker)
        self.tracker = BrokerHeartbeatTracker(session_timeout_ms) if heartbeat_tracker else None
        # HashMap<Integer, BrokerHeartbeatState>: usable_brokers iterates it in Java's order
        self._brokers = JavaHashMap(integer_hash_code)
        self.unfenced = BrokerHeartbeatStateList()
        self._active: set[int] = set()   # TreeSet ordered by MetadataOffsetComparator

    # -- read side --------------------------------------------------------------------------
    def brokers(self) -> list[BrokerHeartbeatState]:
        """``brokers()``: the states in HashMap iteration order."""
        return self._brokers.values()

    def state(self, broker_id: int) -> BrokerHeartbeatState | None:
        return self._brokers.get(broker_id)

    def controlled_shutdown_offset(self, broker_id: int) -> int | None:
        """``controlledShutdownOffset``: None (OptionalLong.empty) unless shutting down."""
        broker = self._brokers.get(broker_id)
        if broker is None or broker.controlled_shutdown_offset == -1:
            return None
        return broker.controlled_shutdown_offset

    def active_brokers(self) -> list[BrokerHeartbeatState]:
        """The active set in MetadataOffsetComparator order."""
        return sorted((self._brokers.get(b) for b in self._active), key=metadata_offset_key)

    def lowest_active_offset(self) -> int:
        """``lowestActiveOffset``: the smallest metadata offset of an active broker, or
        Long.MAX_VALUE when there is none."""
        active = self.active_brokers()
        return active[0].metadata_offset if active else LONG_MAX_VALUE

    def has_valid_session(self, broker_id: int, now_ms: int, broker_epoch: int | None = None
                          ) -> bool:
        """``hasValidSession``: registered, unfenced and last contact + session timeout >= now
        (a broker is stale only strictly after the timeout). With the 4.0+ tracker: the session
        of ``broker_epoch`` is tracked and not expired, fenced or not."""
        if self.tracker is not None:
            if broker_epoch is None:
                raise ValueError("with the heartbeat tracker (Kafka 4.0+) a session is a broker "
                                 "id and epoch: pass broker_epoch")
            return self.tracker.has_valid_session(BrokerIdAndEpoch(broker_id, broker_epoch),
                                                  now_ms)
        broker = self._brokers.get(broker_id)
        return broker is not None and self._valid(broker, now_ms)

    def _valid(self, broker: BrokerHeartbeatState, now_ms: int) -> bool:
        if broker.fenced():
            return False
        return broker.last_contact_ms + self.session_timeout_ms >= now_ms

    def next_check_time_ms(self) -> int:
        """``nextCheckTimeNs``: when the oldest unfenced session expires (Long.MAX_VALUE when
        no broker is unfenced)."""
        first = self.unfenced.first()
        if first is None:
            return LONG_MAX_VALUE
        return first.last_contact_ms + self.session_timeout_ms

    def find_one_stale_broker(self, now_ms: int) -> int | None:
        """``findOneStaleBroker``: the unfenced broker with the oldest contact, if its session
        expired (the list is sorted, so if the head is not stale none is)."""
        first = self.unfenced.first()
        if first is not None and not self._valid(first, now_ms):
            return first.id
        return None

    def find_stale_brokers(self, now_ms: int) -> list[int]:
        """``findStaleBrokers`` (Kafka 2.8-3.0; replaced by findOneStaleBroker in 3.1.0,
        KAFKA-13173, so that the ISR changes of simultaneous expirations accumulate one
        broker at a time): every unfenced broker whose session expired, oldest contact
        first."""
        stale = []
        for broker in self.unfenced:
            if self._valid(broker, now_ms):
                break
            stale.append(broker.id)
        return stale

    def usable_brokers(self, id_to_rack: Callable[[int], str | None]) -> list[UsableBroker]:
        """``usableBrokers`` / ``UsableBrokerIterator``: every registered broker that is not
        shutting down, fenced ones included (flagged), in HashMap iteration order."""
        return [UsableBroker(b.id, id_to_rack(b.id), b.fenced())
                for b in self._brokers.values() if not b.shutting_down()]

    def current_broker_state(self, broker: BrokerHeartbeatState) -> str:
        """``currentBrokerState``: controlled shutdown wins over fenced."""
        if broker.shutting_down():
            return BrokerControlState.CONTROLLED_SHUTDOWN
        if broker.fenced():
            return BrokerControlState.FENCED
        return BrokerControlState.UNFENCED

    # -- mutations ----------------------------------------------------------------------------
    def fence(self, broker_id: int) -> None:
        """``fence``: take the broker out of the unfenced list and the active set."""
        broker = self._brokers.get(broker_id)
        if broker is not None:
            self._untrack(broker)

    def remove(self, broker_id: int) -> None:
        """``remove``: forget the broker (unregistration or a new incarnation)."""
        broker = self._brokers.remove(broker_id)
        if broker is not None:
            self._untrack(broker)

    def _untrack(self, broker: BrokerHeartbeatState) -> None:
        if not broker.fenced():
            self.unfenced.remove(broker)
            if not broker.shutting_down():
                self._active.discard(broker.id)

    def register(self, broker_id: int, fenced: bool, now_ms: int) -> None:
        """``register``: start tracking the broker if new and set its fencing state; a known
        broker whose fencing changes keeps its metadata offset, otherwise it resets to -1.
        Counts as a contact at ``now_ms``."""
        broker = self._brokers.get(broker_id)
        metadata_offset = -1
        if broker is None:
            self._brokers.put(broker_id, BrokerHeartbeatState(broker_id))
        elif broker.fenced() != fenced:
            metadata_offset = broker.metadata_offset
        elif not self.register_always_touches:
            return   # before 3.7: nothing to do when the fencing did not change
        self.touch(broker_id, fenced, metadata_offset, now_ms)

    def touch(self, broker_id: int, fenced: bool, metadata_offset: int, now_ms: int) -> None:
        """``touch``: a contact at ``now_ms`` reporting ``metadata_offset``. A fenced broker
        leaves controlled shutdown (its next heartbeat gets SHUTDOWN_NOW); an unfenced one is
        (re)inserted in the unfenced list and, unless shutting down, the active set."""
        if not self.register_always_touches and broker_id not in self._brokers:
            self._brokers.put(broker_id, BrokerHeartbeatState(broker_id))   # before 3.7
        broker = self._state_or_throw(broker_id)
        self._untrack(broker)
        broker.last_contact_ms = now_ms
        broker.metadata_offset = metadata_offset
        if fenced:
            broker.controlled_shutdown_offset = -1
        else:
            self.unfenced.add(broker)
            if not broker.shutting_down():
                self._active.add(broker.id)

    def maybe_update_controlled_shutdown_offset(self, broker_id: int, offset: int) -> None:
        """``maybeUpdateControlledShutdownOffset``: leave the active set; the offset is only
        set the first time (a broker already shutting down keeps its offset). Before
        KAFKA-14292 (``updateControlledShutdownOffset``) it was overwritten every time."""
        broker = self._state_or_throw(broker_id)
        if broker.fenced():
            raise RuntimeError("Fenced brokers cannot enter controlled shutdown.")
        self._active.discard(broker.id)
        if broker.controlled_shutdown_offset < 0 or not self.controlled_shutdown_offset_set_once:
            broker.controlled_shutdown_offset = offset

    def calculate_next_broker_state(
        self, broker_id: int, want_fence: bool, want_shut_down: bool,
        current_metadata_offset: int, register_broker_record_offset: int,
        has_leaderships: Callable[[], bool] | bool, last_committed_offset: int | None = None,
    ) -> BrokerControlStates:
        """``calculateNextBrokerState`` for a heartbeat (BrokerHeartbeatRequest's WantFence,
        WantShutDown, CurrentMetadataOffset):

        - FENCED: wants shutdown -> SHUTDOWN_NOW; does not want fencing and caught up to its
          RegisterBrokerRecord offset (before 3.3: to ``last_committed_offset``) -> UNFENCED;
          else FENCED.
        - UNFENCED: wants fencing -> SHUTDOWN_NOW if it also wants shutdown, else FENCED;
          wants shutdown -> CONTROLLED_SHUTDOWN if it leads partitions, else SHUTDOWN_NOW.
        - CONTROLLED_SHUTDOWN: still leading -> stay; else SHUTDOWN_NOW once its
          controlled-shutdown offset <= the lowest active broker's metadata offset.

        ``has_leaderships`` is evaluated lazily, as Kafka's Supplier. ``last_committed_offset``
        (the controller's last committed metadata offset) is only read with
        ``unfence_at_register_record_offset=False`` (Kafka 3.0-3.2)."""
        catch_up_offset = register_broker_record_offset
        if not self.unfence_at_register_record_offset:
            if last_committed_offset is None:
                raise ValueError("before KAFKA-13959 (3.3.0) unfencing compares with the "
                                 "controller's last committed offset: pass "
                                 "last_committed_offset")
            catch_up_offset = last_committed_offset
        if not self.register_always_touches and broker_id not in self._brokers:
            broker = BrokerHeartbeatState(broker_id)   # before 3.7: getOrDefault, i.e. FENCED
        else:
            broker = self._state_or_throw(broker_id)
        leads = has_leaderships if callable(has_leaderships) else (lambda: has_leaderships)
        current = self.current_broker_state(broker)
        s = BrokerControlState
        if current == s.FENCED:
            if want_shut_down:
                return BrokerControlStates(current, s.SHUTDOWN_NOW)
            if not want_fence and current_metadata_offset >= catch_up_offset:
                return BrokerControlStates(current, s.UNFENCED)
            return BrokerControlStates(current, s.FENCED)
        if current == s.UNFENCED:
            if want_fence:
                return BrokerControlStates(current,
                                           s.SHUTDOWN_NOW if want_shut_down else s.FENCED)
            if want_shut_down:
                return BrokerControlStates(
                    current, s.CONTROLLED_SHUTDOWN if leads() else s.SHUTDOWN_NOW)
            return BrokerControlStates(current, s.UNFENCED)
        if current == s.CONTROLLED_SHUTDOWN:
            if leads():
                return BrokerControlStates(current, s.CONTROLLED_SHUTDOWN)
            if broker.controlled_shutdown_offset <= self.lowest_active_offset():
                return BrokerControlStates(current, s.SHUTDOWN_NOW)
            return BrokerControlStates(current, s.CONTROLLED_SHUTDOWN)
        return BrokerControlStates(current, s.SHUTDOWN_NOW)

    def _state_or_throw(self, broker_id: int) -> BrokerHeartbeatState:
        broker = self._brokers.get(broker_id)
        if broker is None:
            raise IllegalStateException(f"Broker {broker_id} is not registered.")
        return broker


