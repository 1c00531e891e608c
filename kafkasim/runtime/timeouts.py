"""The cluster's timers: process timers and cancellable request timeouts (``TimeoutScheduler``).

A process's timer (a broker's periodic task, a client's linger) is an engine "broker_timer" /
"client_timer" event calling a plain function of the process, ``fn(process, *args)``, if the
process that set it still runs (a paused one runs it when it resumes).

Request timeouts are almost always cancelled (the answer arrives first), so they cost no engine
event unless they fire (Kafka's purgatories use a timing wheel likewise). An owner's timeouts sit
in one FIFO per delay: a request timeout of a given length is added in deadline order, so each
FIFO is sorted by (deadline, id). An entry is the list [deadline, id, fn, args] and is the handle
``add_timeout`` returns: cancelling it sets its fn to None (firing does too), and cancelled
entries at a FIFO's head are popped when the next timeout is added to it or when the owner wakes
up. A request timeout of a replica fetcher or a producer is no FIFO entry but the request's
in-flight entry [deadline, id, ...] (Broker.send_from_fetcher, Sender.send_produce_request), read
here as if it were one: answering the request, which pops that entry, cancels it. Likewise a
broker's purgatory timeout (DelayedFetch / DelayedProduce, Broker.schedule_timeout) is no FIFO
entry: the parked operation, with its deadline_ms and timeout_id, is it, and completing the
operation (taking it out of its purgatory) cancels it.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple

# an owner's wake-up time when no "timeouts" event is pending (TimeoutScheduler.timeouts_of):
# later than any deadline, so "is this timeout due before the next wake-up?" is one comparison
NO_WAKE_UP = 1 << 62


class DueTimeout(NamedTuple):
    """A timeout that is due: what fires it, and the handle that says whether it still may.

    ``kind`` is "timer" (a FIFO entry, the handle ``add_timeout`` returned), "request" (a
    request in flight: ``handle`` is its in-flight entry, ``args`` its correlation id) or
    "parked" (a purgatory operation: ``handle`` is the operation, ``purgatory`` its map).
    Sorted by (deadline, id): the order one heap over all timeouts would give."""

    deadline_ms: int
    timeout_id: int
    kind: str
    fn: Callable
    args: tuple
    handle: Any
    purgatory: dict | None = None

    def claim(self, requests: dict | None) -> bool:
        """Mark the timeout fired; False when it was cancelled, answered or completed by a
        timeout that fired just before it (then it does not fire)."""
        if self.kind == "timer":
            if self.handle[2] is None:
                return False
            self.handle[2] = None    # fired: a later cancel_timeout is a no-op
        elif self.kind == "request":
            if requests.get(self.args[0]) is not self.handle:
                return False
            self.handle[0] = -1      # fired (the broker may be paused: the entry stays till then)
        else:
            op = self.handle
            if self.purgatory.get(self.args[0]) is not op or op.timeout_id is None:
                return False
            op.timeout_id = None     # fired (the broker may be paused: it stays parked)
        return True


class TimeoutScheduler:
    """The cluster's process timers and request timeouts (engine events "broker_timer",
    "client_timer" and "timeouts")."""

    def __init__(self, cluster) -> None:
        self.cluster = cluster
        # owner -> [{delay: deque of entries}, wake-up time, requests in flight or None, their
        # timer, parked operations]; owner is ("broker", id, incarnation) or ("client", id)
        self.timeouts: dict[tuple, list] = {}
        # broker id -> its running (or last) process's entry in timeouts (Broker.start)
        self.process_timeouts: dict[int, list] = {}
        self.next_timeout_id = 0

    def broker_timer(self, broker_id: int, incarnation: int, fn: Callable, args: tuple
                     ) -> None:
        """Call ``fn(broker, *args)`` if the broker process that set the timer still runs."""
        cluster = self.cluster
        b = cluster.brokers[broker_id]
        if not b.is_running or b.incarnation != incarnation:
            return
        if b.paused_until > cluster.engine.now:
            cluster.engine.schedule_at(b.paused_until, "broker_timer", broker_id, incarnation, fn,
                                       args)
            return
        fn(b, *args)   # a timer task: a plain function of the broker (broker._timer_...)

    def client_timer(self, client_id: str, fn: Callable, args: tuple) -> None:
        """Call ``fn(client, *args)``: ``fn`` is a plain function of the client's class."""
        client = self.cluster.clients.get(client_id)
        if client is not None:
            fn(client, *args)

    def add_timeout(self, owner: tuple, delay_ms: int, fn: Callable, args: tuple) -> list:
        """Call the owner's timer ``fn(owner object, *args)`` after ``delay_ms`` unless
        cancelled first (``cancel_timeout`` with the handle returned).
        ``owner`` is ("broker", id, incarnation) or ("client", client id)."""
        deadline = self.cluster.engine.now + delay_ms
        entry = self.timeouts_of(owner)
        try:
            fifo = entry[0][delay_ms]
        except KeyError:   # the owner's first timeout of this length
            fifo = entry[0][delay_ms] = deque()
        while fifo and fifo[0][2] is None:   # cancelled heads
            fifo.popleft()
        handle = [deadline, self.arm_timeout(owner, entry, deadline), fn, args]
        fifo.append(handle)
        return handle

    def arm_timeout(self, owner: tuple, entry: list, deadline: int) -> int:
        """A new timeout of ``owner`` (its ``timeouts_of`` entry) due at ``deadline``: its id,
        and the owner's wake-up moved earlier if it is due first (none pending: NO_WAKE_UP).
        (Broker.schedule_timeout and Broker.send_from_fetcher do this inline: every request.)"""
        tid = self.next_timeout_id
        self.next_timeout_id = tid + 1
        if deadline < entry[1]:
            entry[1] = deadline
            self.cluster.engine.schedule_at(deadline, "timeouts", owner)
        return tid

    def timeouts_of(self, owner: tuple, requests: dict | None = None,
                    on_timeout: Callable | None = None, purgatories: tuple = ()) -> list:
        """The owner's [{delay: FIFO}, wake-up time, requests, on_timeout, purgatories], made
        the first time. The wake-up time is that of the owner's "timeouts" event still to come
        (scheduled when it was set; the event sets it anew), or NO_WAKE_UP when none is: a
        timeout due before it moves it earlier, with an event of its own. ``requests`` (a
        broker process's fetch_inflight, made when it starts, or a producer's in_flight) maps a
        correlation id to [deadline (-1: none, or fired), timeout id, ...]: the request
        timeouts of the requests in flight, each calling the owner's timer
        ``on_timeout(owner object, corr)`` when due. ``purgatories`` (a broker process's) are
        pairs (operations, timer): ``operations`` maps an id to a parked operation with
        ``deadline_ms`` and ``timeout_id`` (None once fired), whose timeout calls
        ``timer(owner object, id)`` when due."""
        entry = self.timeouts.get(owner)
        if entry is None:
            entry = self.timeouts[owner] = [{}, NO_WAKE_UP, requests, on_timeout, purgatories]
        return entry

    def compact(self) -> None:
        """Drop the cancelled entries inside long FIFOs (cancelled out of order), so snapshots
        stay small. Only cancelled entries go, so this changes no wake-up time: it runs with the
        metrics sample."""
        for entry in self.timeouts.values():
            for fifo in entry[0].values():
                if len(fifo) > 512:
                    keep = [e for e in fifo if e[2] is not None]
                    if len(fifo) > 2 * len(keep):
                        fifo.clear()
                        fifo.extend(keep)

    @staticmethod
    def cancel_timeout(handle: list | None) -> None:
        """Cancel a timeout that has not fired (a no-op once it fired or was cancelled, and
        for None: no timeout was set)."""
        if handle is not None:
            handle[2] = None

    @staticmethod
    def _due_timeouts(fifos: dict, now: int, requests: dict | None, on_timeout,
                      purgatories: tuple) -> list[DueTimeout]:
        """Pop the live entries due by ``now`` (and the cancelled ones ahead of live ones), and
        list them with the requests in flight and the parked operations whose timeout is due,
        in (deadline, id) order."""
        due = []
        for fifo in fifos.values():
            while fifo and (fifo[0][0] <= now or fifo[0][2] is None):
                e = fifo.popleft()
                if e[2] is not None:
                    due.append(DueTimeout(e[0], e[1], "timer", e[2], e[3], e))
        if requests:
            for corr, f in requests.items():
                if 0 <= f[0] <= now:
                    due.append(DueTimeout(f[0], f[1], "request", on_timeout, (corr,), f))
        for ops, timer in purgatories:
            for op_id, op in ops.items():
                if op.deadline_ms <= now and op.timeout_id is not None:
                    due.append(DueTimeout(op.deadline_ms, op.timeout_id, "parked", timer,
                                          (op_id,), op, ops))
        due.sort(key=lambda d: (d.deadline_ms, d.timeout_id))
        return due

    def fire_timeouts(self, owner: tuple) -> None:
        entry = self.timeouts[owner]
        fifos = entry[0]
        now = self.cluster.engine.now
        requests, on_timeout, purgatories = entry[2], entry[3], entry[4]
        due = self._due_timeouts(fifos, now, requests, on_timeout, purgatories)
        while due:
            for d in due:
                if not d.claim(requests):
                    continue
                if owner[0] == "broker":
                    self.broker_timer(owner[1], owner[2], d.fn, d.args)
                else:
                    self.client_timer(owner[1], d.fn, d.args)
            # a handler may add one
            due = self._due_timeouts(fifos, now, requests, on_timeout, purgatories)
        heads = [fifo[0][0] for fifo in fifos.values() if fifo]
        if requests:
            heads += [f[0] for f in requests.values() if f[0] >= 0]
        for ops, _timer in purgatories:
            heads += [op.deadline_ms for op in ops.values() if op.timeout_id is not None]
        if heads:
            nxt = min(heads)
            if entry[1] <= now or nxt < entry[1]:
                entry[1] = nxt
                self.cluster.engine.schedule_at(nxt, "timeouts", owner)
        else:
            entry[1] = NO_WAKE_UP
