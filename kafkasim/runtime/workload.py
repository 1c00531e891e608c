"""Generated produce workloads: a steady rate, or a schedule of rate segments (bursts).

A workload drives one producer from simulated timers: every ``tick_ms`` it sends the records that
became due since the last tick (``rate`` records per second, rounded down cumulatively), so 1,000
records/s over 60 s is exactly 60,000 records whatever the tick. Values are generated as
``"<name>-<n>"`` unless ``values`` is given.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkasim.runtime import validation
from kafkasim.runtime.rows import RangeList
from kafkasim.settings.exceptions import ClusterError


@dataclass(slots=True)
class Segment:
    start_ms: int      # relative to the workload's start
    end_ms: int
    rate: float        # records per second

    def due(self, t: int) -> int:
        """Records due in this segment by relative time ``t`` (exclusive of ``end_ms``)."""
        start = self.start_ms
        if t <= start:
            return 0
        end = self.end_ms
        return int(self.rate * ((t if t < end else end) - start) / 1000.0 + 1e-9)


class RateWorkload:
    """Produce to ``topic`` at ``rate`` records/s from ``start_ms`` (absolute) for ``duration_ms``.

    ``segments`` replaces the single rate with [(start, end, rate), ...] relative to the start,
    e.g. ``[(0, 10000, 3), (10000, 12000, 10)]`` for a steady 3 msg/s then a 10 msg/s burst.
    """

    def __init__(self, cluster, producer, topic: str, *, rate: float = 0.0,
                 duration_ms: int = 0, segments: list[tuple[int, int, float]] | None = None,
                 start_ms: int | None = None, partition: int | None = None,
                 tick_ms: int | None = None, name: str | None = None) -> None:
        validation.check_workload(rate, duration_ms, segments, start_ms, tick_ms)
        if segments is None:
            if rate <= 0 or duration_ms <= 0:
                raise ValueError(f"a rate workload needs rate > 0 and duration_ms > 0, got "
                                 f"rate={rate}, duration_ms={duration_ms}")
            segments = [(0, duration_ms, rate)]
        segs = []
        for s in segments:
            start, end, r = s
            if not (0 <= start < end) or r < 0:
                raise ValueError(f"bad workload segment {s!r}: need 0 <= start < end and "
                                 "rate >= 0")
            segs.append(Segment(int(start), int(end), float(r)))
        if topic not in cluster.topics.configs:
            raise ClusterError(cluster.topics.unknown_topic_message(topic))
        if partition is not None:
            cluster.topics.check_partition(topic, partition)
        self.cluster = cluster
        self.producer = producer
        self.topic = topic
        self.partition = partition
        self.segments = segs
        self.start_ms = cluster.now if start_ms is None else start_ms
        self.end_ms = self.start_ms + max(s.end_ms for s in segs)
        max_rate = max(s.rate for s in segs) or 1.0
        linger = producer.config["linger.ms"]
        self.tick_ms = tick_ms or max(1, int(1000 // max_rate), linger)
        self.sent = 0
        # the ids of the records sent, one range a tick (a tick's ids are consecutive:
        # Producer._send_run), kept as two arrays (RangeList); the results live once, in the
        # producer
        self.record_runs: RangeList = RangeList()
        self.client_id = name or f"workload-{producer.client_id}-{topic}"
        if self.client_id in cluster.clients:
            raise ValueError(f"a client named {self.client_id!r} already exists")
        cluster.clients[self.client_id] = self
        cluster.engine.schedule_at(self.start_ms, "client_timer", self.client_id,
                                   RateWorkload._timer_tick, ())

    @property
    def results(self) -> list:
        """The ProduceResult of every record sent so far, in order."""
        res = self.producer.results
        return [res[rid] for run in self.record_runs for rid in run]

    @property
    def record_ids(self) -> list[int]:
        """The id of every record sent so far, in order."""
        return [rid for run in self.record_runs for rid in run]

    def due(self, t_abs: int) -> int:
        t = t_abs - self.start_ms
        total = 0
        for s in self.segments:
            total += s.due(t)
        return total

    def _timer_tick(self) -> None:
        """Send what the rate segments owe by now, then tick again (until the end)."""
        engine = self.cluster.engine
        now = engine.now
        end_ms = self.end_ms
        t = (now if now < end_ms else end_ms) - self.start_ms
        target = 0
        for s in self.segments:   # self.due(), without the extra call
            target += s.due(t)
        sent = self.sent
        if sent < target:
            self.sent = sent + 1  # what a failing first send leaves, as one send per record did
            # the values "<name>-<n>" for n = sent + 1 .. target, made when asked
            # (RecordRegistry.new_numbered)
            first = self.producer._send_run(self.topic, range(sent + 1, target + 1), None,
                                            self.partition, self.client_id)
            self.record_runs.append(range(first, first + target - sent))
            self.sent = target
        if now < end_ms:
            nxt = now + self.tick_ms
            engine.schedule_at(nxt if nxt < end_ms else end_ms, "client_timer", self.client_id,
                               RateWorkload._timer_tick, ())

    def on_message(self, src, msg) -> None:
        """Workloads receive no messages (their producer does)."""
