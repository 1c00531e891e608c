"""Time travel over a simulation: recorded snapshots, seek, step, and forking a new future.

``History`` drives a ``Cluster`` and keeps a snapshot every ``every_ms`` of simulated time, plus
the list of actions (produce, crash, cut, ...) applied at each time. ``seek(t)`` restores the
latest snapshot at or before ``t`` and replays forward (runs are deterministic, so this lands on
exactly the state the first run had at ``t``). Acting while the clock is in the past forks: the
recorded future is discarded and the new action becomes part of the history. Replaying the same
actions on the same seed gives the same trace.

Snapshots share what only ever grows (log records, producer results, the record registry, the
trace and metrics rows: ``kafkasim.observe.snapshots``) instead of copying it, so a snapshot costs
the
mutable state only and recording grows linearly with simulated time.

Bounded memory: a History keeps at most ``max_snapshots`` snapshots (default 1,000: a thousand
simulated seconds at one a second, more than any notebook of the course records). Past that it
thins them, dropping every second one except the first and the newest, so older stretches have
a snapshot every 2, 4, 8... ``every_ms`` and a seek there replays that much; its memory is then
at most ``max_snapshots`` times one snapshot's mutable state (``Snapshot.blob``, kept
zlib-compressed: ~57 KB instead of ~280 KB for a 9-broker cluster with 50 partitions; the shared
sequences are the live cluster's own). ``max_snapshots=None`` keeps every snapshot.
"""

from __future__ import annotations

import bisect
import gc
from dataclasses import dataclass

from kafkasim.observe import snapshots
from kafkasim.runtime import validation
from kafkasim.runtime.cluster import Cluster


@dataclass(frozen=True)
class Action:
    time_ms: int
    name: str          # a Cluster method name, e.g. "crash", "send"
    args: tuple
    kwargs: tuple      # sorted (key, value) pairs

    def describe(self) -> str:
        a = ", ".join([repr(x) for x in self.args] + [f"{k}={v!r}" for k, v in self.kwargs])
        return f"t={self.time_ms} ms: {self.name}({a})"


ACTIONS = ("crash", "start", "restart", "power_loss", "shutdown", "pause", "slow",
           "partition_network", "cut", "heal", "expire_session", "elect", "produce",
           "alter_config", "drop")

#: Actions that are not Cluster methods: the Cluster attribute that carries each
#: (``cluster.transport.drop``, ``cluster.zk_control_plane.expire_session``)
ACTION_OWNERS = {"drop": "transport", "expire_session": "zk_control_plane"}


MAX_SNAPSHOTS = 1000

#: Restores kept out of the collector's way before the discarded clusters are let go
#: (``_Collector``); each discarded cluster of the course's players is ~5 MB.
UNFREEZE_EVERY = 8


class _Collector:
    """Keeps what a restore loads, with the recorded history, out of the cyclic garbage
    collector's way (``gc.freeze()``), so that seeking and forking do not pay for collections.

    A full collection traverses every container: after two simulated minutes of the player's
    workload that is the trace rows, the records and the producer results, ~180 ms against a
    fork's 100 ms budget, and one came every two or three restores (each restore adds a
    cluster's worth of long-lived objects, which is what triggers one). The restored objects
    are made with the collector off (``snapshots.load``), so each restore also paid a young
    collection over all of them (~12 ms).

    Frozen objects are still freed when their reference count drops to zero; only cyclic
    garbage among them waits: here the live cluster each restore replaces. So after
    ``UNFREEZE_EVERY`` frozen restores everything is unfrozen and stays so until the collector
    has run a full collection (which frees those clusters); then freezing starts again. Memory
    above a run without freezing is at most that many discarded clusters. Nothing here changes
    a run (the collector never does), only when memory is given back. Does nothing while the
    caller has the collector disabled."""

    def __init__(self) -> None:
        self.frozen_restores = 0
        self.unfrozen_at: int | None = None   # full collections counted at the unfreeze

    @staticmethod
    def _full_collections() -> int:
        return gc.get_stats()[-1]["collections"]

    def after_restore(self) -> None:
        if not gc.isenabled():
            return
        if self.unfrozen_at is not None:
            if self._full_collections() == self.unfrozen_at:
                return                       # the discarded clusters are not collected yet
            self.unfrozen_at = None
        if self.frozen_restores >= UNFREEZE_EVERY:
            gc.unfreeze()
            self.frozen_restores = 0
            self.unfrozen_at = self._full_collections()
            return
        gc.freeze()
        self.frozen_restores += 1


_collector = _Collector()


class History:
    def __init__(self, cluster: Cluster, every_ms: int = 1000, *,
                 max_snapshots: int | None = MAX_SNAPSHOTS) -> None:
        if every_ms <= 0:
            raise ValueError(f"every_ms must be > 0, got {every_ms}")
        if max_snapshots is not None and max_snapshots < 2:
            raise ValueError(f"max_snapshots must be >= 2 (the first and the newest) or None, "
                             f"got {max_snapshots}")
        self.cluster = cluster
        self.every_ms = every_ms
        self.max_snapshots = max_snapshots
        self.actions: list[Action] = []
        # times at which a recorded story or scenario step changed the branch from outside the
        # engine (``widgets.recording``); a snapshot taken then holds the change
        self.changes: list[int] = []
        self.times: list[int] = []
        self.snaps: list[snapshots.Snapshot] = []
        self.horizon = cluster.now     # the furthest time simulated on the current branch
        self.producer = None
        self._branch_rows: list | None = None   # the branch's trace up to the horizon
        self._snapshot()

    # -- snapshots ----------------------------------------------------------------------------
    def _snapshot(self) -> None:
        t = self.cluster.now
        if self.times and self.times[-1] >= t:
            i = bisect.bisect_left(self.times, t)
            del self.times[i:]
            del self.snaps[i:]
        self.times.append(t)
        self.snaps.append(self._dump())
        if self.max_snapshots is not None and len(self.snaps) > self.max_snapshots:
            self._thin()

    def _thin(self) -> None:
        """Drop every second snapshot but the first and the newest (module docstring)."""
        n = len(self.snaps)
        keep = [0, *range(2, n - 1, 2), n - 1]
        self.times = [self.times[i] for i in keep]
        self.snaps = [self.snaps[i] for i in keep]

    def _dump(self) -> snapshots.Snapshot:
        """The snapshot of the current state (subclasses add what they follow the run with),
        compressed: a History keeps one every ``every_ms`` (``snapshots.dump``)."""
        return snapshots.dump(self.cluster, compress=True)

    def _load(self, snap: snapshots.Snapshot) -> Cluster:
        """The cluster of a snapshot ``_dump`` took (a fresh copy)."""
        return snapshots.load(snap)

    @property
    def trace_rows(self) -> list:
        """The trace rows of the current branch up to its horizon, the recorded future included
        (after a seek back the live cluster holds only the rows up to now; the rows it had
        before stay shared, unchanged, until an action forks the branch)."""
        return self._keep_branch_rows()

    def _keep_branch_rows(self) -> list:
        live = self.cluster.trace.rows
        if self._branch_rows is None or len(live) >= len(self._branch_rows):
            self._branch_rows = live
        return self._branch_rows

    def _restore(self, index: int) -> None:
        self._keep_branch_rows()   # before the live cluster (and its rows) is replaced
        c = self._load(self.snaps[index])
        self.cluster = c
        if self.producer is not None:
            self.producer = c.clients.get(self.producer.client_id)
        _collector.after_restore()

    # -- moving in time -----------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.cluster.now

    def _advance(self, target: int) -> None:
        """Run forward to ``target``, snapshotting at every multiple of every_ms, replaying
        recorded actions due on the way."""
        c = self.cluster
        pending = [a for a in self.actions if c.now < a.time_ms <= target]
        for a in pending:
            self._run_with_snapshots(a.time_ms)
            self._apply(a)
        self._run_with_snapshots(target)
        self._extend_horizon()

    def _extend_horizon(self) -> None:
        c = self.cluster
        if c.now > self.horizon:
            self.horizon = c.now

    def _run_with_snapshots(self, target: int) -> None:
        c = self.cluster
        while c.now < target:
            nxt = (c.now // self.every_ms + 1) * self.every_ms
            stop = min(nxt, target)
            c.run_to(stop)
            if stop == nxt and (not self.times or self.times[-1] < stop):
                self._snapshot()

    def run(self, ms: int) -> None:
        """Advance simulated time by ``ms`` (replaying the recorded future if there is one)."""
        if ms < 0:
            raise ValueError(f"cannot run for a negative duration ({ms} ms)")
        self._advance(self.now + ms)

    def step(self) -> bool:
        """Run exactly one event (the next thing that happens)."""
        c = self.cluster
        t = c.engine.peek_time()
        if t is None:
            return False
        due = [a for a in self.actions if c.now < a.time_ms <= t]
        if due:
            self._advance(due[0].time_ms)
            return True
        ok = c.step()
        self._extend_horizon()
        return ok

    def seek(self, time_ms: int) -> None:
        """Put the cluster in the state it has at ``time_ms`` on the current branch."""
        validation.check_seek_time(self.now, time_ms)
        if time_ms < 0:
            raise ValueError(f"cannot seek to a negative time ({time_ms} ms)")
        i = bisect.bisect_right(self.times, time_ms) - 1
        if time_ms < self.now or i >= 0 and self.times[i] > self.now:
            self._restore(max(i, 0))
        self._advance(time_ms)

    # -- acting (forks when in the past) --------------------------------------------------------
    def act(self, name: str, *args, **kwargs):
        """Apply a Cluster action now; in the past this discards the recorded future (a fork).

        The current millisecond is finished first (replays apply actions after every event of
        their millisecond), and an action that fails is neither applied nor recorded.
        """
        if name not in ACTIONS:
            raise ValueError(f"unknown action {name!r}; choose from {', '.join(ACTIONS)}")
        c = self.cluster
        c.run_to(c.now)
        t = self.now
        action = Action(t, name, tuple(args), tuple(sorted(kwargs.items())))
        result = self._apply(action)   # raises before anything is recorded
        if any(a.time_ms > t for a in self.actions) or self.horizon > t:
            self.actions = [a for a in self.actions if a.time_ms <= t]
            i = bisect.bisect_right(self.times, t)
            del self.times[i:]
            del self.snaps[i:]
            self.horizon = t
            self.changes = [c for c in self.changes if c <= t]
            self._branch_rows = None     # the recorded future is gone
        self.actions.append(action)
        return result

    def next_change(self, after_ms: int) -> int | None:
        """The first time after ``after_ms`` at which the branch is changed from outside the
        engine (a recorded action, a story or scenario step), or None: a copy of the cluster run
        on from ``after_ms`` (the stage's window) does not know of it."""
        times = [a.time_ms for a in self.actions if a.time_ms > after_ms]
        i = bisect.bisect_right(self.changes, after_ms)
        if i < len(self.changes):
            times.append(self.changes[i])
        return min(times, default=None)

    def snapshot_now(self) -> None:
        """Record a snapshot of the current state (e.g. while a script drives the cluster)."""
        self._snapshot()
        self._extend_horizon()

    def _apply(self, a: Action):
        c = self.cluster
        kwargs = dict(a.kwargs)
        if a.name == "produce":
            if self.producer is None or self.producer.client_id not in c.clients:
                self.producer = c.clients.get("player-producer") or \
                    c.producer("player-producer", acks="all")
            return self.producer.send(*a.args, **kwargs)
        owner = getattr(c, ACTION_OWNERS[a.name]) if a.name in ACTION_OWNERS else c
        return getattr(owner, a.name)(*a.args, **kwargs)

    # -- convenience ------------------------------------------------------------------------
    def crash(self, broker: int):
        return self.act("crash", broker)

    def start(self, broker: int):
        return self.act("start", broker)

    def pause(self, broker: int, ms: int):
        return self.act("pause", broker, ms)

    def produce(self, topic: str, value=None, partition: int | None = None):
        return self.act("produce", topic, value, partition=partition)

    def cut(self, a, b):
        return self.act("cut", a, b)

    def heal(self):
        return self.act("heal")

    def replay(self) -> Cluster:
        """A fresh run of the recorded actions from the first snapshot (for checking)."""
        h = History(snapshots.load(self.snaps[0]), self.every_ms)   # the cluster only
        h.actions = list(self.actions)
        h._advance(self.horizon)
        return h.cluster
