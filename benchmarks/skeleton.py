"""The floor under the reference workload: the same events with none of Kafka's rules.

A per-message simulation of the reference workload (3 brokers, RF 3, acks=all, 1,000 records/s,
linger.ms=5) cannot run faster in CPython than the bare message traffic it must carry. This module
runs exactly that traffic and nothing else, so ``bench_workload`` can report kafkasim's speed as a
ratio against it (measured in the same process, same minute):

- one heap of ``(time, seq, kind, args)`` events, as kafkasim's engine;
- every 5 ms a workload tick hands 5 records to the producer; the sender wakes when the batch's
  linger expires and sends one Produce request;
- the leader appends (columnar arrays), answers the two parked follower fetches; each follower
  appends and fetches again; the leader moves the HW on the second fetch and answers the produce;
- every message is a slotted dataclass inside an envelope, travels 1-2 ms (seeded jitter, FIFO per
  link) and leaves a ``send`` and a ``recv`` trace row; appends, replication, HW moves and acks
  leave rows too.

What it leaves out is the point: no configs, versions, ISR, epochs, purgatories, timeouts,
producer state, errors or checks. It is a measuring stick, not a simulator.
"""

from __future__ import annotations

import gc
import heapq
import random
import time
from array import array
from contextlib import contextmanager
from dataclasses import dataclass

LEADER, F1, F2, PRODUCER = 1, 2, 3, "producer-1"
TICK_MS = 5          # the workload tick (= linger.ms)
RECORDS_PER_TICK = 5  # 1,000 records/s


@dataclass(slots=True)
class _Envelope:
    src: object
    dst: object
    msg: object
    sent_ms: int
    msg_id: int


@dataclass(slots=True)
class _Produce:
    correlation_id: int
    ids: tuple


@dataclass(slots=True)
class _FetchResponse:
    correlation_id: int
    base_offset: int
    ids: array
    high_watermark: int


@dataclass(slots=True)
class _Fetch:
    correlation_id: int
    replica_id: int
    fetch_offset: int


@dataclass(slots=True)
class _ProduceResponse:
    correlation_id: int
    base_offset: int


class Skeleton:
    """Message traffic of the reference workload on a bare event heap."""

    def __init__(self, seed: int = 1) -> None:
        self.queue: list = []
        self.seq = 0
        self.now = 0
        self.rng = random.Random(seed)
        self.rows: list = []
        self.msg_id = 0
        self.last_delivery: dict = {}
        self.logs = {b: array("q") for b in (LEADER, F1, F2)}
        self.follower_leo = {F1: 0, F2: 0}
        self.parked = {F1: 0, F2: 0}        # follower -> fetch offset of its parked fetch
        self.hw = 0
        self.next_record = 1
        self.accumulating: list = []
        self.waiting: dict = {}            # produce correlation id -> required offset
        self.corr = 0
        self.events = 0
        self.handlers = {"tick": self.tick, "sender": self.sender, "deliver": self.deliver}

    def schedule(self, t: int, kind: str, *args) -> None:
        heapq.heappush(self.queue, (t, self.seq, kind, args))
        self.seq += 1

    def send(self, src, dst, msg) -> None:
        env = _Envelope(src, dst, msg, self.now, self.msg_id)
        self.msg_id += 1
        self.rows.append((self.now, "send", src, "", -1, (type(msg).__name__, dst, env.msg_id)))
        t = self.now + 1 + int(self.rng.random() * 2)
        link = (src, dst)
        t = max(t, self.last_delivery.get(link, 0))
        self.last_delivery[link] = t
        self.schedule(t, "deliver", env)

    # -- producer side ----------------------------------------------------------------------
    def tick(self, end_ms: int) -> None:
        if not self.accumulating:
            self.schedule(self.now + TICK_MS, "sender")
        first = self.next_record
        self.accumulating.extend(range(first, first + RECORDS_PER_TICK))
        self.next_record = first + RECORDS_PER_TICK
        if self.now + TICK_MS < end_ms:
            self.schedule(self.now + TICK_MS, "tick", end_ms)

    def sender(self) -> None:
        ids = tuple(self.accumulating)
        self.accumulating = []
        self.corr += 1
        self.send(PRODUCER, LEADER, _Produce(self.corr, ids))

    # -- brokers ----------------------------------------------------------------------------
    def deliver(self, env: _Envelope) -> None:
        self.rows.append((self.now, "recv", env.dst, "", -1,
                          (type(env.msg).__name__, env.src, env.msg_id)))
        msg = env.msg
        if type(msg) is _Produce:
            log = self.logs[LEADER]
            base = len(log)
            log.extend(msg.ids)
            self.rows.append((self.now, "append", LEADER, "t", 0, (base, len(log) - 1, 0)))
            self.waiting[msg.correlation_id] = len(log)
            for f in (F1, F2):
                if f in self.parked:
                    offset = self.parked.pop(f)
                    self.send(LEADER, f, _FetchResponse(0, offset, log[offset:], self.hw))
        elif type(msg) is _Fetch:
            self.follower_leo[msg.replica_id] = msg.fetch_offset
            hw = min(self.follower_leo.values())
            if hw > self.hw:
                self.hw = hw
                self.rows.append((self.now, "hw", LEADER, "t", 0, hw))
                for corr, required in list(self.waiting.items()):
                    if required <= hw:
                        del self.waiting[corr]
                        self.send(LEADER, PRODUCER, _ProduceResponse(corr, required))
            self.parked[msg.replica_id] = msg.fetch_offset
        elif type(msg) is _FetchResponse:
            log = self.logs[env.dst]
            log.extend(msg.ids)
            self.rows.append((self.now, "replicate", env.dst, "t", 0, (msg.base_offset, len(log))))
            self.send(env.dst, LEADER, _Fetch(0, env.dst, len(log)))
        else:
            for _ in range(RECORDS_PER_TICK):
                self.rows.append((self.now, "produce_ack", PRODUCER, "t", 0, msg.base_offset))

    def run(self, duration_ms: int) -> float:
        """Run the workload for ``duration_ms`` plus its drain; returns the wall seconds."""
        self.schedule(0, "tick", duration_ms)
        queue, handlers, pop = self.queue, self.handlers, heapq.heappop
        with collector_paused():   # as kafkasim's Engine.run pauses it
            t0 = time.perf_counter()
            while queue:
                self.now, _seq, kind, args = pop(queue)
                self.events += 1
                handlers[kind](*args)
            # the cyclic collector's pass over what the run allocated (its young generation),
            # as bench_workload._drive pays it for kafkasim
            settle_collector()
            return time.perf_counter() - t0


@contextmanager
def collector_paused():
    """The cyclic collector paused for the block (restored after it), as ``Engine.run`` pauses
    it: a measurement inside then ends with ``settle_collector``."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def settle_collector() -> None:
    """Collect the young generation now: the pass over every container a run allocated while
    the collector was paused. Each side of a comparison (kafkasim's reference workload, this
    skeleton; the partition counts of ``bench_partitions``) pays it once inside its timing, so
    that none pays another's garbage or a full collection the process's counters happened to
    pick."""
    gc.collect(0)


def measure(duration_ms: int, repeats: int) -> dict:
    best = None
    for _ in range(repeats):
        sk = Skeleton()
        wall = sk.run(duration_ms)
        if best is None or wall < best[0]:
            best = (wall, sk)
    wall, sk = best
    return {"wall_s": wall, "sim_s": sk.now / 1000, "events": sk.events,
            "records": len(sk.logs[LEADER]), "acked_hw": sk.hw}
