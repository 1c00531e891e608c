"""How long the controller's events take: ``org.apache.kafka.controller.EventPerformanceMonitor``
(Kafka 4.0+, KAFKA-16446, apache/kafka PR #15622).

The quorum controller hands the monitor every event it finishes, with the event's name and its
processing time. An event at or above ``controller.performance.always.log.threshold.ms`` (2 s)
is logged at once as an error; every ``controller.performance.sample.period.ms`` (60 s) the
active controller's ``generatePeriodicPerformanceMessage`` task logs a one-line summary of the
period (how many events, their mean time, the slowest one) and starts the next period afresh.

Kafka measures nanoseconds of wall time; the simulator's controller handles an event in no
simulated time, so inside a simulated cluster every event takes 0 ns and the summary only counts
events (the slowest is then the first one of the period: a tie keeps the earlier event). The
monitor keeps the lines it logged (``logged``, the latest :data:`LOG_HISTORY`) instead of
writing a log or a trace row: it changes no state that other code reads.
"""

from __future__ import annotations

from collections import deque
from decimal import ROUND_HALF_EVEN, Decimal
from functools import wraps

NS_PER_MS = 1_000_000
#: KRaftConfigs.CONTROLLER_PERFORMANCE_SAMPLE_PERIOD_MS_DEFAULT (60 s), in ns
DEFAULT_PERIOD_NS = 60_000 * NS_PER_MS
#: KRaftConfigs.CONTROLLER_PERFORMANCE_ALWAYS_LOG_THRESHOLD_MS_DEFAULT (2 s), in ns
DEFAULT_ALWAYS_LOG_THRESHOLD_NS = 2_000 * NS_PER_MS
#: how many logged lines the monitor keeps
LOG_HISTORY = 16

INFO = "INFO"
ERROR = "ERROR"


def _check_ns(name: str, value, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int number of nanoseconds, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be at least {minimum} ns, got {value}")
    return value


class EventPerformanceMonitor:
    """See the module docstring. ``period_ns`` is the summary period,
    ``always_log_threshold_ns`` the time from which a single event is logged as an error."""

    class Builder:
        """``EventPerformanceMonitor.Builder`` (Kafka's defaults: 60 s, 2 s)."""

        def __init__(self) -> None:
            self.log_context = None
            self.period_ns = DEFAULT_PERIOD_NS
            self.always_log_threshold_ns = DEFAULT_ALWAYS_LOG_THRESHOLD_NS

        def set_log_context(self, log_context) -> EventPerformanceMonitor.Builder:
            self.log_context = log_context
            return self

        def set_period_ns(self, period_ns: int) -> EventPerformanceMonitor.Builder:
            self.period_ns = period_ns
            return self

        def set_always_log_threshold_ns(self, threshold_ns: int) -> EventPerformanceMonitor.Builder:
            self.always_log_threshold_ns = threshold_ns
            return self

        def build(self) -> EventPerformanceMonitor:
            return EventPerformanceMonitor(self.period_ns, self.always_log_threshold_ns)

    def __init__(self, period_ns: int = DEFAULT_PERIOD_NS,
                 always_log_threshold_ns: int = DEFAULT_ALWAYS_LOG_THRESHOLD_NS) -> None:
        self._period_ns = _check_ns("period_ns", period_ns, 1)
        self.always_log_threshold_ns = _check_ns("always_log_threshold_ns",
                                                 always_log_threshold_ns, 0)
        self.logged: deque[tuple[str, str]] = deque(maxlen=LOG_HISTORY)
        self.reset()

    def period_ns(self) -> int:
        """``periodNs``."""
        return self._period_ns

    def slowest_event(self) -> tuple[str | None, int]:
        """``slowestEvent``: (name, duration in ns), (None, 0) before any event."""
        return self.slowest_event_name, self.slowest_event_duration_ns

    def reset(self) -> None:
        """``reset``: a new period, with no event seen."""
        self.slowest_event_name: str | None = None
        self.slowest_event_duration_ns = 0
        self.total_event_duration_ns = 0
        self.num_events = 0

    def observe_event(self, name: str, duration_ns: int) -> None:
        """``observeEvent``: count the event; log an error when it was exceptionally slow."""
        message = self.do_observe_event(name, duration_ns)
        if message is not None:
            self.logged.append((ERROR, message))

    def do_observe_event(self, name: str, duration_ns: int) -> str | None:
        """``doObserveEvent``: count the event and return the message to log about it (None when
        it took less than the always-log threshold). The slowest event keeps the earlier of
        two equally slow ones."""
        if self.slowest_event_name is None or self.slowest_event_duration_ns < duration_ns:
            self.slowest_event_name = name
            self.slowest_event_duration_ns = duration_ns
        self.total_event_duration_ns += duration_ns
        self.num_events += 1
        if duration_ns < self.always_log_threshold_ns:
            return None
        return (f"Exceptionally slow controller event {name} took "
                f"{duration_ns // NS_PER_MS} ms.")

    def generate_periodic_performance_message(self) -> str:
        """``generatePeriodicPerformanceMessage``: log the period's summary (INFO) and start a
        new period. Returns the line logged."""
        message = self.periodic_performance_message()
        self.logged.append((INFO, message))
        self.reset()
        return message

    def periodic_performance_message(self) -> str:
        """``periodicPerformanceMessage``: the summary of the period so far."""
        head = f"In the last {self._period_ns // NS_PER_MS} ms period, "
        if self.num_events == 0:
            return head + "there were no controller events completed."
        mean = format_ns_as_decimal_ms(self.total_event_duration_ns // self.num_events)
        slowest = format_ns_as_decimal_ms(self.slowest_event_duration_ns)
        return (f"{head}{self.num_events} controller events were completed, which took an "
                f"average of {mean} ms each. The slowest event was {self.slowest_event_name}, "
                f"which took {slowest} ms.")

    @staticmethod
    def format_ns_as_decimal_ms(duration_ns: int) -> str:
        """``formatNsAsDecimalMs``."""
        return format_ns_as_decimal_ms(duration_ns)


def format_ns_as_decimal_ms(duration_ns: int) -> str:
    """``EventPerformanceMonitor.formatNsAsDecimalMs``: whole microseconds (truncated), as a
    double of milliseconds, printed with two decimals as Java's ``DecimalFormat("#0.00")`` does
    (half-even rounding of the double's exact value)."""
    micros = -(-duration_ns // 1000) if duration_ns < 0 else duration_ns // 1000   # toMicros
    exact = Decimal(micros / 1000)
    return str(exact.quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN))


def performance_monitor_for(config: dict) -> EventPerformanceMonitor:
    """The monitor ``QuorumController``'s constructor builds from ControllerServer's
    ``controller.performance.sample.period.ms`` / ``controller.performance.always.log
    .threshold.ms`` (Kafka's defaults when the config lacks them)."""
    period_ms = config.get("controller.performance.sample.period.ms",
                           DEFAULT_PERIOD_NS // NS_PER_MS)
    threshold_ms = config.get("controller.performance.always.log.threshold.ms",
                              DEFAULT_ALWAYS_LOG_THRESHOLD_NS // NS_PER_MS)
    return EventPerformanceMonitor(period_ms * NS_PER_MS, threshold_ms * NS_PER_MS)


def controller_event(name: str):
    """Mark a QuorumController operation as the controller event ``name`` (Kafka's
    ``appendWriteEvent`` / ``appendReadEvent`` tag): once it has run -- answered, failed or
    refused -- the controller's ``performance_monitor`` (None before 4.0) observes it, taking no
    simulated time (QuorumController.handleEventEnd / handleEventException)."""
    def decorate(operation):
        @wraps(operation)
        def event(self, *args, **kwargs):
            try:
                return operation(self, *args, **kwargs)
            finally:
                if self.performance_monitor is not None:
                    self.performance_monitor.observe_event(name, 0)
        return event
    return decorate
