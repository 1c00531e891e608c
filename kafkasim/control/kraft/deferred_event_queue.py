"""The controller's purgatory: ``org.apache.kafka.deferred.DeferredEventQueue`` (server-common,
4.3.0 a9ce322153; ``ControllerPurgatory`` in the controller package until apache/kafka PR #13555,
3.5).

An operation whose records are written but not yet committed waits here under the offset of its
last record. When the controller learns that everything up to an offset is committed it
completes every event at or below it (``complete_up_to``); when it loses leadership it fails
them all (``fail_all``). Events are added in offset order: an offset below the highest pending
one is refused. Within one offset, events complete in the order they were added.
"""

from __future__ import annotations

from typing import Protocol


class DeferredEvent(Protocol):
    """``org.apache.kafka.deferred.DeferredEvent``: ``complete(None)`` on success, else with the
    exception the event fails with."""

    def complete(self, exception: BaseException | None) -> None: ...


class DeferredEventQueue:
    """See the module docstring. ``log_context`` is accepted for Kafka's signature (unused)."""

    def __init__(self, log_context=None) -> None:
        # offset -> its events; filled in increasing offset order, so iteration is sorted
        self._pending: dict[int, list[DeferredEvent]] = {}

    def complete_up_to(self, offset: int) -> None:
        """``completeUpTo``: complete (successfully) every event at or below ``offset``."""
        while self._pending and next(iter(self._pending)) <= offset:
            self._pop_first().complete(None)

    def _pop_first(self) -> DeferredEvent:
        """Take the first event of the lowest offset off the queue (before completing it: a
        completion may add more)."""
        key = next(iter(self._pending))
        events = self._pending[key]
        event = events.pop(0)
        if not events:
            del self._pending[key]
        return event

    def fail_all(self, exception: BaseException) -> None:
        """``failAll``: complete every pending event with ``exception``."""
        while self._pending:
            self._pop_first().complete(exception)

    def add(self, offset: int, event: DeferredEvent) -> None:
        """``add``: ``event`` completes once ``offset`` is committed."""
        last = self.highest_pending_offset()
        if last is not None and offset < last:
            raise ValueError(f"There is already a deferred event with offset {last}. We should "
                             f"not add one with an offset of {offset} which is lower than that.")
        self._pending.setdefault(offset, []).append(event)

    def highest_pending_offset(self) -> int | None:
        """``highestPendingOffset``: None (OptionalLong.empty) when nothing is pending."""
        return next(reversed(self._pending), None) if self._pending else None

    def __len__(self) -> int:
        """How many events are pending."""
        return sum(len(events) for events in self._pending.values())
