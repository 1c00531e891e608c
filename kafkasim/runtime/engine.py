"""The discrete-event engine: a virtual clock in integer milliseconds and one event queue.

Events are plain tuples ``(time_ms, seq, kind, args)`` in a heap. ``seq`` is a global counter,
so events due at the same millisecond run in the order they were scheduled: ties never depend on
hashing, object ids or wall time. ``kind`` names a handler registered by the layer above; the queue
itself holds only data, which is what makes a whole simulation picklable (snapshots, Spark).

Public hooks for observers (invariant checkers, experiment runners, time travel): ``peek()`` names
the next event without running it, ``add_listener(fn)`` calls ``fn(time_ms, kind, args)`` after
every event. Listeners are observers, not state: a pickled engine carries none. While there is
one, each handler is wrapped to call them, so the run loop itself never looks for listeners
and costs the same as without hooks.
"""

from __future__ import annotations

import gc
import random
from collections.abc import Callable
from heapq import heapify, heappop, heappush
from typing import Any, NamedTuple

__all__ = ["Engine", "EventLimitExceeded", "PendingEvent", "SimulationError"]

_FOREVER = 1 << 62


class SimulationError(RuntimeError):
    """An event handler failed; the message names the simulated time, the event and the seed."""


class EventLimitExceeded(SimulationError):
    """The engine processed ``max_events`` events in all and more were due: a guard against
    runaway input (a period of 0, a huge simulated time). The message names the limit and how to
    raise it."""


class PendingEvent(NamedTuple):
    """An event in the queue, as ``peek`` shows it (the queue's own tuple layout)."""

    time_ms: int
    seq: int
    kind: str
    args: tuple


class _Notifying:
    """A handler followed by the engine's listeners (installed while the engine has any)."""

    __slots__ = ("handler", "kind", "engine")

    def __init__(self, handler: Callable[..., Any], kind: str, engine: Engine) -> None:
        self.handler, self.kind, self.engine = handler, kind, engine

    def __call__(self, *args: Any) -> None:
        self.handler(*args)
        engine = self.engine
        for fn in engine._listeners:
            fn(engine.now, self.kind, args)


class Engine:
    """Virtual clock + event heap + one seeded RNG (``random.Random``: same in every process)."""

    __slots__ = ("now", "seed", "rng", "_queue", "_seq", "_handlers", "events_processed",
                 "_listeners", "max_events")

    def __init__(self, seed: int = 0) -> None:
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise TypeError(f"seed must be an int, got {seed!r}")
        self.now = 0
        self.seed = seed
        self.rng = random.Random(seed)
        self._queue: list[tuple[int, int, str, tuple]] = []
        self._seq = 0
        self._handlers: dict[str, Callable[..., Any]] = {}
        self.events_processed = 0
        self._listeners: tuple[Callable[[int, str, tuple], Any], ...] = ()
        #: total events this engine may process (None: unlimited); see EventLimitExceeded
        self.max_events: int | None = None

    # -- wiring -----------------------------------------------------------------------------
    def on(self, kind: str, handler: Callable[..., Any]) -> None:
        """Register the handler for events of ``kind`` (called as ``handler(*args)``)."""
        self._handlers[kind] = _Notifying(handler, kind, self) if self._listeners else handler

    def add_listener(self, fn: Callable[[int, str, tuple], Any]) -> None:
        """Call ``fn(time_ms, kind, args)`` after every event from now on (also the rest of a
        ``run`` in progress), in the order listeners were added. An exception it raises stops
        the run like a failing handler (wrapped in ``SimulationError``, as ``__cause__``)."""
        if not self._listeners:   # wrap in place: a run in progress sees it at its next event
            handlers = self._handlers
            for kind, handler in list(handlers.items()):
                handlers[kind] = _Notifying(handler, kind, self)
        self._listeners = (*self._listeners, fn)

    def remove_listener(self, fn: Callable[[int, str, tuple], Any]) -> None:
        """Stop calling ``fn`` (a no-op when it is not a listener)."""
        if fn not in self._listeners:
            return
        i = self._listeners.index(fn)
        self._listeners = self._listeners[:i] + self._listeners[i + 1:]
        if not self._listeners:
            handlers = self._handlers
            for kind, handler in list(handlers.items()):
                handlers[kind] = _bare(handler)

    @property
    def listeners(self) -> tuple[Callable[[int, str, tuple], Any], ...]:
        return self._listeners

    @property
    def scheduled(self) -> int:
        """How many events were ever scheduled (the next event's sequence number)."""
        return self._seq

    # -- scheduling -------------------------------------------------------------------------
    def schedule(self, delay_ms: int, kind: str, *args: Any) -> int:
        """Schedule ``kind(*args)`` after ``delay_ms`` (>= 0); returns the sequence number."""
        if delay_ms < 0:
            raise ValueError(f"cannot schedule {kind} {delay_ms} ms in the past")
        seq = self._seq
        self._seq = seq + 1
        heappush(self._queue, (self.now + delay_ms, seq, kind, args))
        return seq

    def schedule_at(self, time_ms: int, kind: str, *args: Any) -> int:
        """Schedule at an absolute time (clamped to now)."""
        seq = self._seq
        self._seq = seq + 1
        now = self.now
        heappush(self._queue, (time_ms if time_ms > now else now, seq, kind, args))
        return seq

    def schedule_args_at(self, time_ms: int, kind: str, args: tuple) -> int:
        """``schedule_at`` for a caller that already holds the event's arguments as a tuple
        (the network's deliveries: no packing per message); returns the sequence number."""
        seq = self._seq
        self._seq = seq + 1
        now = self.now
        heappush(self._queue, (time_ms if time_ms > now else now, seq, kind, args))
        return seq

    def cancel(self, seq: int) -> bool:
        """Take the scheduled event with sequence number ``seq`` off the queue (it will not
        run); False when no such event is pending."""
        queue = self._queue
        for i, entry in enumerate(queue):
            if entry[1] == seq:
                queue[i] = queue[-1]
                queue.pop()
                heapify(queue)
                return True
        return False

    # -- running ----------------------------------------------------------------------------
    def peek_time(self) -> int | None:
        """Time of the next event, or None when the queue is empty."""
        return self._queue[0][0] if self._queue else None

    def peek(self) -> PendingEvent | None:
        """The next event (time, sequence number, kind, args) without running it; None when
        the queue is empty."""
        return PendingEvent(*self._queue[0]) if self._queue else None

    def pending(self) -> int:
        return len(self._queue)

    def pending_events(self) -> list[PendingEvent]:
        """Every scheduled event, in no particular order (sort them for time order)."""
        return [PendingEvent(*e) for e in self._queue]

    def pending_of(self, kind: str) -> list[PendingEvent]:
        """The scheduled events of ``kind``, earliest first (e.g. a supervised broker start)."""
        return [PendingEvent(*e) for e in sorted(e for e in self._queue if e[2] == kind)]

    def step(self) -> bool:
        """Run exactly one event. Returns False when there was none."""
        if not self._queue:
            return False
        if self.max_events is not None and self.events_processed >= self.max_events:
            raise self._limit_error()
        time_ms, seq, kind, args = heappop(self._queue)
        self.now = time_ms
        self.events_processed += 1
        try:
            self._handlers[kind](*args)
        except SimulationError:
            raise
        except Exception as exc:  # never swallow: name the event, the time and the seed
            raise SimulationError(
                f"event {kind}{args!r} failed at t={time_ms} ms (seed={self.seed}): "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        return True

    def run(self, until: int | None = None, max_events: int | None = None) -> int:
        """Run events due at or before ``until`` (absolute ms); the clock then reads ``until``.

        With ``until=None`` run until the queue is empty. Returns the number of events run.
        The cyclic garbage collector is paused meanwhile: simulation state is acyclic plain
        data freed by reference counting, and full collections over a long run's trace would
        otherwise cost a fifth of the time.
        """
        queue = self._queue
        handlers = self._handlers
        pop = heappop
        count = 0
        stop = until if until is not None else _FOREVER
        limit = max_events if max_events is not None else -1
        budget = -1 if self.max_events is None else max(0, self.max_events
                                                         - self.events_processed)
        if budget >= 0 and (limit < 0 or budget < limit):
            limit = budget
        else:
            budget = -1   # the caller's max_events stops first: no error
        gc_was_enabled = gc.isenabled()
        gc.disable()
        try:
            # the loop counts the events itself (``count`` is the number of the event being
            # run): cheaper per event than a counter compared against the limit
            # each event is popped first and pushed back if it is not due yet (once per run:
            # cheaper than looking at the head before every pop)
            for count in range(1, (limit if limit >= 0 else _FOREVER) + 1):
                try:
                    time_ms, seq, kind, args = pop(queue)
                except IndexError:   # the queue is empty
                    count -= 1
                    break
                if time_ms > stop:
                    heappush(queue, (time_ms, seq, kind, args))
                    count -= 1
                    break
                self.now = time_ms
                handlers[kind](*args)
        except SimulationError:
            raise
        except Exception as exc:
            raise SimulationError(
                f"event {kind}{args!r} failed at t={time_ms} ms (seed={self.seed}): "
                f"{type(exc).__name__}: {exc}"
            ) from exc
        finally:
            self.events_processed += count
            if gc_was_enabled:
                gc.enable()
        if count == budget and queue and queue[0][0] <= stop:
            raise self._limit_error()
        if until is not None and count != limit and until > self.now:
            self.now = until
        return count

    def _limit_error(self) -> EventLimitExceeded:
        return EventLimitExceeded(
            f"the simulation processed its limit of {self.max_events} events at "
            f"t={self.now} ms (seed={self.seed}) and more were due: runaway input? Raise the "
            "limit with Cluster(max_events=...) or Scenario.run(max_events=...) "
            "(kafkasim.settings.limits.DEFAULT_MAX_EVENTS)")

    # -- state as data ----------------------------------------------------------------------
    def __getstate__(self) -> dict:
        return {
            "now": self.now,
            "seed": self.seed,
            "rng": self.rng.getstate(),
            "queue": list(self._queue),
            "seq": self._seq,
            "handlers": {kind: _bare(h) for kind, h in self._handlers.items()},
            "events_processed": self.events_processed,
            "max_events": self.max_events,
        }

    def __setstate__(self, state: dict) -> None:
        self.now = state["now"]
        self.seed = state["seed"]
        self.rng = random.Random()
        self.rng.setstate(state["rng"])
        self._queue = list(state["queue"])
        self._seq = state["seq"]
        self._handlers = state["handlers"]
        self.events_processed = state["events_processed"]
        self.max_events = state.get("max_events")
        self._listeners = ()


def _bare(handler: Callable[..., Any]) -> Callable[..., Any]:
    return handler.handler if isinstance(handler, _Notifying) else handler
