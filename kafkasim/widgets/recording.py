"""Engine hooks behind the player: record a scripted run into a ``History``; check every event.

``History`` snapshots only inside its own ``run``/``seek``. A scenario drives the cluster itself
(``Cluster.run``, ``run_until``, consumer polls), so to make it scrubbable the cluster's engine is
swapped for a ``HookedEngine`` while the scenario runs. The hooked engine snapshots into the
History whenever the cluster was changed from outside between two engine calls (a scenario step:
records sent, a fault injected...) and at every ``every_ms`` boundary, so that replaying engine
events from any snapshot lands exactly where the scripted run was. It can also call an invariant
checker after every event (``kafkasim.observe.checks``). It pickles as a plain ``Engine``:
snapshots never carry the hooks.

``BranchChecker`` finds the first invariant violation on a player's current branch: a separate
copy of the cluster replays the branch's actions with every event checked. That copy is itself a
History whose snapshots carry the checks' state with the cluster (``CheckedHistory``), so after a
fork the checks resume from the last snapshot before the fork point: at most one snapshot
interval is checked again, not the whole branch.
"""

from __future__ import annotations

from kafkasim.observe import snapshots
from kafkasim.observe.checks import CheckSuite, Violation, make_suite
from kafkasim.observe.history import History
from kafkasim.runtime.clients.consumer import Consumer
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.engine import Engine

_FOREVER = 1 << 62


def _plain_engine() -> Engine:
    return Engine.__new__(Engine)


class HookedEngine(Engine):
    """An ``Engine`` that calls ``checker(cluster)`` after every event and tells ``recorder``
    when it is entered and left (see module docstring)."""

    __slots__ = ("hook_cluster", "checker", "recorder")

    @classmethod
    def install(cls, cluster: Cluster, *, checker=None, recorder=None) -> HookedEngine:
        """Replace ``cluster.engine`` by a hooked engine in the same state."""
        eng = cls.__new__(cls)
        Engine.__setstate__(eng, cluster.engine.__getstate__())
        for fn in cluster.engine.listeners:   # observers (attached checkers) stay attached
            eng.add_listener(fn)
        eng.hook_cluster = cluster
        eng.checker = checker
        eng.recorder = recorder
        cluster.engine = eng
        return eng

    @staticmethod
    def uninstall(cluster: Cluster) -> None:
        """Put a plain ``Engine`` (same state) back in place of a hooked one."""
        eng = cluster.engine
        if isinstance(eng, HookedEngine):
            plain = _plain_engine()
            plain.__setstate__(eng.__getstate__())
            cluster.engine = plain

    def __reduce_ex__(self, protocol):
        return (_plain_engine, (), self.__getstate__())

    # -- running --------------------------------------------------------------------------------
    def _checked_step(self) -> bool:
        ghost = getattr(self.checker, "ghost", None)
        if ghost is not None and self.pending():
            ghost.event = tuple(self.peek())
        ok = Engine.step(self)
        if ok:
            self.checker(self.hook_cluster)
            if getattr(self.checker, "first", None) is not None:
                self.checker = None    # only the first violation matters: stop paying for checks
        return ok

    def _run(self, until: int | None, max_events: int | None) -> int:
        if self.checker is None:
            return Engine.run(self, until, max_events)
        stop = _FOREVER if until is None else until
        count = 0
        while (nxt := self.peek_time()) is not None and nxt <= stop and count != max_events:
            if self.checker is None:
                left = None if max_events is None else max_events - count
                return count + Engine.run(self, until, left)
            self._checked_step()
            count += 1
        if until is not None and count != max_events and until > self.now:
            self.now = until
        return count

    def run(self, until: int | None = None, max_events: int | None = None) -> int:
        rec = self.recorder
        if rec is None:
            return self._run(until, max_events)
        rec.enter()
        count = 0
        try:
            if until is not None and max_events is None:
                b = rec.next_boundary(self.now)
                while b <= until:
                    count += self._run(b, None)
                    rec.boundary()
                    b = rec.next_boundary(self.now)
            return count + self._run(until, None if max_events is None else max_events - count)
        finally:
            rec.leave()

    def step(self) -> bool:
        rec = self.recorder
        if rec is not None:
            rec.enter()
            nxt = self.peek_time()
            if nxt is not None:   # clock boundaries crossed with no event on them: snapshot there
                b = rec.next_boundary(self.now)
                while b < nxt:
                    self.now = b
                    rec.boundary()
                    b = rec.next_boundary(b)
        try:
            return self._checked_step() if self.checker is not None else Engine.step(self)
        finally:
            if rec is not None:
                rec.leave()


class _Recorder:
    """Snapshots a History at clock boundaries and after outside changes to its cluster."""

    def __init__(self, history: History) -> None:
        self.history = history
        self.every = history.every_ms
        self.key = self._key()

    def _key(self) -> tuple:
        """Changes whenever a scenario step touched the cluster: events scheduled, trace rows,
        records sent, timeouts added, clients created, consumer positions moved."""
        c = self.history.cluster
        clients = tuple((len(cl.client.pending), tuple(cl.positions.items()))
                        for cl in c.clients.values() if isinstance(cl, Consumer))
        return (c.engine.scheduled, len(c.trace.rows), len(c.records),
                c.timeout_scheduler.next_timeout_id, len(c.clients), clients)

    def next_boundary(self, now: int) -> int:
        return (now // self.every + 1) * self.every

    def enter(self) -> None:
        if self._key() != self.key:
            h = self.history
            if not h.changes or h.changes[-1] < h.cluster.now:
                h.changes.append(h.cluster.now)
            h._snapshot()

    def leave(self) -> None:
        self.key = self._key()

    def boundary(self) -> None:
        self.history._snapshot()


def record_scenario(scenario, seed: int | None = None, every_ms: int = 1000, *,
                    checker=None):
    """Run ``scenario`` from its start while recording it into a History.

    Returns ``(history, scenario_run)``; with ``checker``, every event is checked too."""
    from kafkasim.scenarios.scenario import ScenarioRun

    cluster = scenario.build(seed)
    # every snapshot is kept: those taken after a scenario step are what replays start from
    history = History(cluster, every_ms, max_snapshots=None)
    rec = _Recorder(history)
    HookedEngine.install(cluster, checker=checker, recorder=rec)
    try:
        run = ScenarioRun(scenario, cluster)
        run.execute()
        rec.enter()        # the last step may have changed the cluster after the last event
    finally:
        HookedEngine.uninstall(cluster)
    history.horizon = cluster.now
    return history, run


def record_story(cluster: Cluster, story, every_ms: int = 1000, *, checker=None):
    """Run ``story(cluster)`` (a notebook cell's function: produce, crash, cut, heal, run...)
    from the cluster's current state while recording it into a History, as
    ``record_scenario`` records a scenario file's steps.

    Returns ``(history, result)``, ``result`` being what ``story`` returned."""
    if not callable(story):
        raise TypeError(f"story must be a function of the cluster, got {type(story).__name__}")
    history = History(cluster, every_ms, max_snapshots=None)
    rec = _Recorder(history)
    HookedEngine.install(cluster, checker=checker, recorder=rec)
    try:
        result = story(cluster)
        rec.enter()
    finally:
        HookedEngine.uninstall(cluster)
    history.cluster = cluster
    history.horizon = cluster.now
    return history, result


class CheckedHistory(History):
    """A History whose cluster runs every check of ``suite`` after every event, and whose
    snapshots hold the suite's state (ghost variables, incremental marks, violations found)
    with the cluster's, so a restored snapshot goes on checking exactly as the first run did."""

    def __init__(self, cluster: Cluster, every_ms: int, suite: CheckSuite) -> None:
        self.suite = suite
        HookedEngine.install(cluster, checker=suite)
        super().__init__(cluster, every_ms)

    def _dump(self) -> snapshots.Snapshot:
        return snapshots.dump((self.cluster, self.suite))

    def _load(self, snap: snapshots.Snapshot) -> Cluster:
        cluster, suite = snapshots.load(snap)
        self.suite = suite
        HookedEngine.install(cluster, checker=suite if suite.first is None else None)
        return cluster


class BranchChecker:
    """The first invariant violation on a History's current branch.

    A copy of the cluster taken at ``base`` (``kafkasim.observe.snapshots.dump`` of it, or the
    bytes of ``snapshots.snapshot(cluster)``; after ``base_actions`` of the branch's actions, at
    ``base_time``)
    replays the branch's later actions with every check of ``kafkasim.observe.checks`` run after
    every event, lazily, up to the branch's horizon. ``first`` and ``checked_from`` carry what was
    checked before ``base_time`` (while a scenario was recorded); a fresh copy's checks learn the
    earlier history from the trace.
    """

    def __init__(self, base: snapshots.Snapshot | bytes, base_actions: int, base_time: int,
                 names=None, *, first: Violation | None = None,
                 checked_from: int | None = None) -> None:
        self.names = None if names is None else list(names)
        self.base = base
        self.base_actions = base_actions
        self.base_time = base_time
        self.checked_from = base_time if checked_from is None else checked_from
        self.first = first
        self.shadow: CheckedHistory | None = None
        self.applied = base_actions

    @property
    def suite(self) -> CheckSuite | None:
        return None if self.shadow is None else self.shadow.suite

    @property
    def checked_to(self) -> int:
        """How far the branch is checked (simulated ms)."""
        return self.base_time if self.shadow is None else self.shadow.now

    def _start(self, every_ms: int) -> CheckedHistory:
        base = self.base
        cluster = snapshots.load(base) if isinstance(base, snapshots.Snapshot) else \
            snapshots.restore(base)
        suite = make_suite(self.names, on_violation="collect")
        self.shadow = CheckedHistory(cluster, every_ms, suite)
        self.applied = self.base_actions
        return self.shadow

    def _found(self) -> bool:
        suite = self.suite
        if self.first is None and suite is not None and suite.first is not None:
            self.first = suite.first
        return self.first is not None

    def follow(self, history: History) -> Violation | None:
        """Check the branch up to its horizon; the first violation, or None."""
        if self.first is not None:
            return self.first
        shadow = self.shadow or self._start(history.every_ms)
        actions = history.actions
        while self.applied < len(actions):
            a = actions[self.applied]
            if a.time_ms > shadow.now:
                shadow.seek(a.time_ms)
            if self._found():
                return self.first
            shadow.act(a.name, *a.args, **dict(a.kwargs))
            self.applied += 1
        if history.horizon > shadow.now:
            shadow.seek(history.horizon)
        self._found()
        return self.first

    def fork(self, history: History) -> None:
        """Called just before an action in the past: keep what the new branch shares."""
        events = history.cluster.engine.events_processed
        if self.first is not None and self.first.events_processed <= events:
            return   # found on the common prefix: still the first violation
        self.first = None
        shadow = self.shadow
        if shadow is not None and shadow.cluster.engine.events_processed <= events:
            return   # not checked past the fork point yet: carry on from where it is
        t = history.now
        if t >= self.base_time:
            if shadow is not None:
                # checked past the fork point: back to the checks' last snapshot before it,
                # then check up to it again (at most one snapshot interval); ``follow``
                # applies the new branch's actions from there
                shadow.seek(t)
                self.applied = sum(1 for a in history.actions if a.time_ms <= t)
            return
        # the fork is before the base copy (a recorded scenario, checked while it was
        # recorded): restart the checks at the fork point, their memory rebuilt from the trace
        self.shadow = None
        self.base = snapshots.dump(history.cluster)
        self.base_actions = sum(1 for a in history.actions if a.time_ms <= t)
        self.base_time = t
        self.applied = self.base_actions
