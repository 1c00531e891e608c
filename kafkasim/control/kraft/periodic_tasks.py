"""The quorum controller's periodic tasks (Kafka 4.0+, KAFKA-17793, apache/kafka PR #17502):
``org.apache.kafka.controller.PeriodicTask`` and ``PeriodicTaskControlManager``.

Since 4.0 the active controller runs its timed work as fixed-rate tasks instead of one-off
deferred events scheduled at each need (3.9 and earlier: ``QuorumController`` keeps that older
scheduling). A task registered with the manager runs only while the controller is active: the
first run comes one period after activation, then one period after each run, except that a
run that says it left work undone (``ControllerResult.response`` True) is followed after
``immediate_period_ms`` (10 ms), and a run that raised after 5 minutes. Kafka's tasks (see
``QuorumController.register_periodic_tasks``): ``writeNoOpRecord`` every
``metadata.max.idle.interval.ms``, ``maybeFenceStaleBroker`` every
``max(1 ms, broker.session.timeout.ms / 8)``, ``electPreferred`` every
``leader.imbalance.check.interval.seconds`` (when auto rebalance is on), ``electUnclean`` every
``unclean.leader.election.interval.ms`` (5 min), ``generatePeriodicPerformanceMessage`` every
``controller.performance.sample.period.ms`` (60 s; ``expireDelegationTokens`` is not
registered: no delegation tokens).

The manager schedules through a ``QueueAccessor`` (the controller's deferred event queue, whose
deferred events are keyed by tag: scheduling a tag again replaces the earlier event). Times are
simulated milliseconds where Kafka counts nanoseconds.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import NamedTuple, Protocol

from kafkasim.settings.javautil import JavaHashMap, java_string_hash

#: PeriodicTask.IMMEDIATE_PERIOD_NS: the delay after a run that left work undone
IMMEDIATE_PERIOD_MS = 10
#: PeriodicTaskControlManager.nextDelayTimeNs after a failed run
ERROR_PERIOD_MS = 5 * 60 * 1000


class ControllerResult(NamedTuple):
    """``org.apache.kafka.controller.ControllerResult``: the records an operation generates and
    its response (for a periodic task: True when it should run again soon)."""

    records: list
    response: object = None
    is_atomic: bool = False     # ControllerResult.isAtomic: the records go in one batch

    @classmethod
    def of(cls, records, response) -> ControllerResult:
        """ControllerResult.of: records that need not be written atomically."""
        return cls(list(records), response, False)

    @classmethod
    def atomic_of(cls, records, response) -> ControllerResult:
        """ControllerResult.atomicOf: records written as one atomic batch."""
        return cls(list(records), response, True)


class PeriodicTask(NamedTuple):
    """``org.apache.kafka.controller.PeriodicTask``: ``op()`` returns a ControllerResult whose
    response says whether work is left (run again after ``immediate_period_ms``)."""

    name: str
    op: Callable[[], ControllerResult]
    period_ms: int
    verbose: bool = False          # PeriodicTaskFlag.VERBOSE: Kafka logs every run at INFO
    immediate_period_ms: int = IMMEDIATE_PERIOD_MS


class PeriodicControlTaskException(RuntimeError):
    """``PeriodicControlTaskException``: a periodic task failed (counted, not a failover)."""


class QueueAccessor(Protocol):
    """``PeriodicTaskControlManager.QueueAccessor``."""

    def schedule_deferred(self, tag: str, deadline_ms: int,
                          op: Callable[[], ControllerResult]) -> None: ...

    def cancel_deferred(self, tag: str) -> None: ...


def maybe_fence_stale_broker_period_ms(session_timeout_ms: int) -> int:
    """``QuorumController.maybeFenceStaleBrokerPeriodNs``: eight checks per session timeout,
    so a broker is fenced within 112.5% of ``broker.session.timeout.ms`` (at least 1 ms)."""
    return max(1, session_timeout_ms // 8)


class PeriodicTaskControlManager:
    """See the module docstring. ``time`` returns the current simulated time in ms."""

    def __init__(self, queue_accessor: QueueAccessor, time: Callable[[], int]) -> None:
        if queue_accessor is None:
            raise ValueError("You must set queueAccessor")
        self.queue_accessor = queue_accessor
        self.time = time
        self._active = False
        # HashMap<String, PeriodicTask>: activate() reschedules the tasks in its order
        self.tasks = JavaHashMap(java_string_hash)

    def active(self) -> bool:
        return self._active

    def register_task(self, task: PeriodicTask) -> None:
        """``registerTask``: a task with a name already registered is ignored."""
        if task.name in self.tasks:
            return
        self.tasks.put(task.name, task)
        self._reschedule(task, immediate=False, error=False)

    def unregister_task(self, task_name: str) -> None:
        """``unregisterTask``: its scheduled run is cancelled."""
        task = self.tasks.remove(task_name)
        if task is not None:
            self._reschedule(task, immediate=False, error=False)

    def activate(self) -> None:
        """``activate`` (QuorumController, once the activation records are applied): every
        task's first run one period from now."""
        if self._active:
            raise RuntimeError("Can't activate already active PeriodicTaskControlManager.")
        self._active = True
        for task in self.tasks.values():
            self._reschedule(task, immediate=False, error=False)

    def deactivate(self) -> None:
        """``deactivate`` (renounce): every scheduled run is cancelled."""
        if not self._active:
            return
        self._active = False
        for task in self.tasks.values():
            self._reschedule(task, immediate=False, error=False)

    def run(self, task: PeriodicTask) -> ControllerResult:
        """``PeriodicTaskOperation.get``: run the task, reschedule it, and hand its records on
        (the response is dropped: the queue writes records only)."""
        try:
            result = task.op()
        except Exception as exc:
            self._reschedule(task, immediate=False, error=True)
            raise PeriodicControlTaskException(
                f"{task.name}: periodic task failed: {exc}") from exc
        self._reschedule(task, immediate=bool(result.response), error=False)
        return ControllerResult(result.records, None)

    def next_delay_time_ms(self, task: PeriodicTask, immediate: bool, error: bool) -> int:
        """``nextDelayTimeNs``."""
        if immediate:
            return task.immediate_period_ms
        if error:
            return ERROR_PERIOD_MS
        return task.period_ms

    def _reschedule(self, task: PeriodicTask, *, immediate: bool, error: bool) -> None:
        if not self._active or task.name not in self.tasks:
            self.queue_accessor.cancel_deferred(task.name)
            return
        deadline = self.time() + self.next_delay_time_ms(task, immediate, error)
        self.queue_accessor.schedule_deferred(task.name, deadline, partial(self.run, task))
