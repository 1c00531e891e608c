"""A tiny deterministic driver for KafkaRaftClient quorums (tests and the lead's glue tests).

A heap of (time, seq, action) events; every message takes ``delay_ms`` (1 ms); ``random_int``
comes from one seeded ``random.Random``. Crashed nodes drop what they receive and ignore their
old timers (incarnation numbers); ``partition``/``heal`` block links in both directions.
"""

from __future__ import annotations

import heapq
import random

from kafkasim.control.kraft.raft import KafkaRaftClient, assert_raft_safety


class NodeContext:
    """RaftContext for one node of the driver."""

    def __init__(self, driver: RaftDriver, node_id: int):
        self.driver, self.node_id = driver, node_id

    @property
    def now(self) -> int:
        return self.driver.now

    def send(self, dst, msg) -> None:
        d = self.driver
        d.trace.append((d.now, self.node_id, "send", (dst, type(msg).__name__)))
        d.push(d.now + d.delay_ms, ("deliver", self.node_id, dst, msg))

    def schedule(self, delay_ms, timer, *args) -> None:
        d = self.driver
        d.push(d.now + delay_ms, ("timer", self.node_id, d.incarnation[self.node_id], timer, args))

    def random_int(self, bound: int) -> int:
        return self.driver.rng.randrange(bound)

    def trace(self, kind, detail) -> None:
        self.driver.trace.append((self.driver.now, self.node_id, kind, detail))

    def on_leader_change(self, leader_id, epoch) -> None:
        self.driver.leader_changes.append((self.driver.now, self.node_id, leader_id, epoch))

    def on_high_watermark(self, hw) -> None:
        self.driver.hw_updates.append((self.driver.now, self.node_id, hw))


class RaftDriver:
    def __init__(self, voters, observers=(), *, seed=0, pre_vote=True, config=None,
                 delay_ms=1, check_quorum=True, check_safety=True, **client_kwargs):
        self.rng = random.Random(seed)
        self.now, self.delay_ms, self._seq = 0, delay_ms, 0
        self.heap: list = []
        self.trace: list = []
        self.leader_changes: list = []
        self.hw_updates: list = []
        self.blocked: set[tuple[int, int]] = set()
        self.check_safety = check_safety
        self.nodes: dict[int, KafkaRaftClient] = {}
        for n in list(voters) + list(observers):
            self.nodes[n] = KafkaRaftClient(n, voters, dict(config or {}), pre_vote=pre_vote,
                                            observer=n not in voters, check_quorum=check_quorum,
                                            **client_kwargs)
        self.ctx = {n: NodeContext(self, n) for n in self.nodes}
        self.incarnation = dict.fromkeys(self.nodes, 0)
        self.up: set[int] = set()

    def push(self, at, action) -> None:
        self._seq += 1
        heapq.heappush(self.heap, (at, self._seq, action))

    def start(self, *ids) -> RaftDriver:
        for n in ids or sorted(self.nodes):
            self.up.add(n)
            self.incarnation[n] += 1
            self.nodes[n].start(self.ctx[n])
        return self

    def crash(self, n) -> None:
        """The process dies: in-memory state is gone; log and quorum-state stay on disk."""
        self.up.discard(n)
        self.incarnation[n] += 1
        self.trace.append((self.now, n, "crash", None))

    def restart(self, n) -> None:
        self.trace.append((self.now, n, "restart", None))
        self.start(n)

    def partition(self, *groups) -> None:
        """Only nodes of the same group can talk (nodes in no group talk to everyone)."""
        where = {n: i for i, g in enumerate(groups) for n in g}
        for a in self.nodes:
            for b in self.nodes:
                if a in where and b in where and where[a] != where[b]:
                    self.blocked.add((a, b))

    def heal(self) -> None:
        self.blocked.clear()

    def step(self) -> None:
        at, _seq, action = heapq.heappop(self.heap)
        self.now = at
        if action[0] == "deliver":
            _k, src, dst, msg = action
            if dst in self.up and (src, dst) not in self.blocked:
                self.nodes[dst].handle(self.ctx[dst], src, msg)
        else:
            _k, node, inc, timer, args = action
            if node in self.up and inc == self.incarnation[node]:
                self.nodes[node].on_timer(self.ctx[node], timer, *args)
        if self.check_safety:
            assert_raft_safety(self.nodes.values())

    def run_until(self, t: int) -> None:
        while self.heap and self.heap[0][0] <= t:
            self.step()
        self.now = max(self.now, t)

    def run_for(self, ms: int) -> None:
        self.run_until(self.now + ms)

    def wait_for(self, predicate, timeout_ms=30_000, step_ms=10) -> bool:
        end = self.now + timeout_ms
        while self.now < end:
            if predicate():
                return True
            self.run_for(step_ms)
        return predicate()

    # --- views -----------------------------------------------------------------------------
    def leaders(self) -> list[int]:
        return [n for n in sorted(self.up) if self.nodes[n].state_name == "Leader"]

    def leader(self):
        """The live leader with the highest epoch, or None."""
        best = [(self.nodes[n].epoch, n) for n in self.leaders()]
        return max(best)[1] if best else None

    def wait_for_leader(self, timeout_ms=30_000, among=None):
        def ok():
            ld = self.leader()
            return ld is not None and (among is None or ld in among)
        self.wait_for(ok, timeout_ms)
        return self.leader()

    def append(self, n, records) -> int:
        return self.nodes[n].append(self.ctx[n], list(records))
