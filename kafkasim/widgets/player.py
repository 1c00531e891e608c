"""The player: scrub, play and step through a simulated cluster, inject faults, fork the future.

    >>> p = Player(cluster, topic="orders")        # or Player(Scenario.named("...").run())
    >>> p = Player(cluster, story=my_story)        # my_story(cluster) recorded: scrub all of it
    >>> p.run(5000); p.crash(2); p.run(20000)
    >>> p.seek(3000); p.produce("late")            # acting in the past forks a new future
    >>> print(p.readout_text()); p.figure()
    >>> p.toggle_broker(1)                         # what a click on broker 1's tile does
    >>> p                                          # in JupyterLab: the widget

In the widget, the player's picture is its ``Stage`` (``player.stage``): the brokers with their
logs, LEO, HW, leader epoch and ISR view, the messages in flight moving between them, narration
and the branch's timeline, under one row of controls (time slider, jump to the next event of a
kind, topic and partition). Click a broker to crash or restart it, shift-click to pause it, drag
between two nodes to cut their link, click a message to drop it: each goes through the methods
below and shows the call. It fits one 1280x720 screen.

Every button and slider of the widget calls one of these methods, so a cell (and pytest, and
nbval, which never renders widgets) can do exactly what a click does. Time travel is
``kafkasim.observe.history.History``: a snapshot every ``every_ms`` of simulated time, so moving the
slider restores the nearest snapshot and replays at most ``every_ms``. ``player.cluster`` is the
live cluster at the current time; it is a new object after every seek.
"""

from __future__ import annotations

import html
from collections import OrderedDict

from kafkasim import viz
from kafkasim.observe import snapshots
from kafkasim.observe.checks import Violation, make_suite
from kafkasim.observe.history import History
from kafkasim.runtime.clients.consumer import Consumer
from kafkasim.runtime.cluster import Cluster, ClusterError
from kafkasim.runtime.validation import keyword_hints
from kafkasim.settings import limits
from kafkasim.viz import style
from kafkasim.widgets._frames import FRAMES_KEPT, Panel, fit_margins
from kafkasim.widgets._render import TICK_CHOICES, narrate, png, pre, text_width, tr, widget_bundle
from kafkasim.widgets.recording import BranchChecker, record_scenario, record_story

PLAY_TICKS = 80         # a recorded story plays in at most this many ticks by default (~40 s)
PASSIVE_STEPS = frozenset({"run", "await", "settle", "expect", "describe", "snapshot"})


def auto_tick_ms(span_ms: int) -> int:
    """The default simulated time per Play tick: the smallest choice of at least 100 ms that
    plays ``span_ms`` (the recorded story) in at most ``PLAY_TICKS`` ticks, so an 18 s session
    timeout is seconds of watching, not minutes."""
    for t in TICK_CHOICES:
        if t >= 100 and -(-span_ms // t) <= PLAY_TICKS:
            return t
    return TICK_CHOICES[-1]


def _auto_every_ms(horizon: int) -> int:
    """A snapshot every second, or every horizon/100 (rounded up to seconds) for long runs."""
    return max(1000, -(-horizon // 100000) * 1000)


def _story_history(cluster, story, every_ms: int | None, checks):
    """(History, BranchChecker | None, about) for ``story(cluster)`` recorded from the
    cluster's current state (``record_story``)."""
    if not isinstance(cluster, Cluster):
        raise TypeError(f"Player(..., story=...) needs a Cluster to run the story on, got "
                        f"{type(cluster).__name__}")
    names = None if checks is True else checks
    suite = make_suite(names, on_violation="collect") if checks else None
    start = cluster.now
    history, _result = record_story(cluster, story, every_ms or 1000, checker=suite)
    checker = None
    if checks:
        checker = BranchChecker(snapshots.dump(history.cluster), 0, history.now, names,
                                first=suite.first, checked_from=start)
    name = getattr(story, "__name__", "story")
    about = tr("story {name}, seed {seed}", name=repr(name), seed=cluster.engine.seed)
    return history, checker, about


def _history_for(source, every_ms: int | None, checks):
    """(History, BranchChecker | None, about, script) for a Cluster, Scenario or ScenarioRun;
    ``script``: the scenario's scripted steps that act on the cluster, as (time_ms, step)."""
    from kafkasim.scenarios.scenario import Scenario, ScenarioRun

    names = None if checks is True else checks
    if isinstance(source, (Scenario, ScenarioRun)):
        if isinstance(source, Scenario):
            source = source.run()     # cheap next to recording; tells how long the story is
        scenario, seed = source.scenario, source.cluster.engine.seed
        if every_ms is None:
            every_ms = _auto_every_ms(source.cluster.now)
        suite = make_suite(names, on_violation="collect") if checks else None
        history, run = record_scenario(scenario, seed, every_ms, checker=suite)
        script = [(st.time_ms, st.action) for st in run.steps if st.action not in PASSIVE_STEPS]
        if run.cluster.trace.digest() == source.cluster.trace.digest():
            checker = None
            if checks:
                checker = BranchChecker(snapshots.dump(history.cluster), 0, history.now, names,
                                        first=suite.first, checked_from=history.times[0])
            return history, checker, tr("scenario {name}, seed {seed}", name=repr(scenario.name),
                                        seed=seed), script
        about = tr("scenario {name}, seed {seed}, changed after it ended: the player starts "
                   "from the cluster's current state", name=repr(scenario.name), seed=seed)
        source = source.cluster
    elif isinstance(source, Cluster):
        about = tr("cluster, seed {seed}", seed=source.engine.seed)
    else:
        raise TypeError(f"Player needs a Cluster, a Scenario or a ScenarioRun, got "
                        f"{type(source).__name__}")
    checker = BranchChecker(snapshots.dump(source), 0, source.now, names) if checks else None
    return History(source, every_ms or 1000), checker, about, []


@keyword_hints
class Player:
    """Time slider, play/step and fault buttons over one cluster's History (module docstring).

    ``source``: a ``Cluster`` (the player drives it from its current state), a ``Scenario``, or a
    ``ScenarioRun`` (the scenario is recorded again from its start, so its whole story can be
    scrubbed). ``topic``/``partition``: what the figure shows (default: the first topic).
    ``every_ms``: simulated time between snapshots (default 1000; for a long scenario, a
    hundredth of it): a seek replays at most that much.
    ``story``: a function of the cluster (a notebook cell's produce, crash, cut, heal, run...):
    it runs on ``source``, a Cluster, from its current state while the player records it, so the
    whole story can be scrubbed like a scenario's (what it returns is not kept: run the story on
    a cluster of its own for that).
    ``tick_ms``: simulated time one Play tick runs (default: ``auto_tick_ms`` of the recorded
    story, at least 100 ms). ``checks``: True (every registered invariant
    of ``kafkasim.observe.checks``), a list of check names, or False.
    In the widget, clicking a broker on the stage crashes or restarts it (``toggle_broker``).
    """

    def __init__(self, source, topic: str | None = None, partition: int = 0,
                 every_ms: int | None = None, *, tick_ms: int | None = None, checks=True,
                 show_isr: bool = False, max_records: int = 40,
                 presentation: bool | None = None, show_messages: bool = True,
                 story=None) -> None:
        if tick_ms is not None and tick_ms <= 0:
            raise ValueError(f"tick_ms must be > 0, got {tick_ms}")
        if story is not None:
            self.history, self.checker, self.about = _story_history(source, story, every_ms,
                                                                    checks)
            self.script = []
        else:
            self.history, self.checker, self.about, self.script = _history_for(source, every_ms,
                                                                               checks)
        self.start_ms = self.history.times[0]
        self.notice = ""          # what the last fork dropped of the scenario's script
        self._kinds = None
        topics = self.cluster.topics.names()
        self.topic = topic if topic is not None else (topics[0] if topics else None)
        self.partition = partition
        if self.topic is not None:
            self.cluster.topics.check_partition(self.topic, partition)
        self.tick_ms = tick_ms if tick_ms is not None else \
            auto_tick_ms(self.horizon - self.start_ms)
        # kept for the notebooks that pass them: the stage always shows the messages in flight,
        # and the ISR timeline opens with its toggle under the stage (closed at first, so the
        # player fits one screen)
        self.show_isr = show_isr
        self.show_messages = show_messages
        if presentation is not None:          # projector mode, course-wide (viz.style)
            from kafkasim.viz import style as _style

            _style.set_presentation(presentation)
        self.max_records = max_records
        self.status = ""
        self._frames = PlayerFrames(self)   # its figures and cached PNG frames
        self._ui = None
        self._syncing = False
        self._mid_ms = False      # step() left events of the current millisecond to run

    def __repr__(self) -> str:
        return (f"Player(t={self.now} ms, recorded to {self.horizon} ms, topic={self.topic!r}, "
                f"partition={self.partition}, {len(self.history.actions)} action(s))")

    # -- where we are -------------------------------------------------------------------------
    @property
    def cluster(self) -> Cluster:
        """The live cluster at the current time (replaced by every seek)."""
        return self.history.cluster

    @property
    def now(self) -> int:
        return self.history.now

    @property
    def horizon(self) -> int:
        """The furthest simulated time on the current branch."""
        return self.history.horizon

    # -- moving in time -------------------------------------------------------------------------
    def run(self, ms: int) -> None:
        """Run ``ms`` of simulated time (replaying the recorded future where there is one)."""
        self.history.run(ms)
        self._moved()

    def step(self) -> bool:
        """Run the next event, whatever it is (a message delivered, a timer firing)."""
        ok = self.history.step()
        self._moved()
        return ok

    def seek(self, time_ms: int) -> None:
        """Jump to ``time_ms`` on the current branch (restore a snapshot, replay from it)."""
        self.history.seek(max(int(time_ms), self.start_ms))
        self._moved()

    def event_kinds(self) -> list[str]:
        """The kinds of trace rows on the current branch (recorded future included), sorted:
        what ``next_event`` can jump to."""
        rows = self.history.trace_rows
        if self._kinds is None or self._kinds[0] is not rows or self._kinds[1] != len(rows):
            self._kinds = (rows, len(rows), sorted({row[1] for row in rows}))
        return list(self._kinds[2])

    def next_event(self, kind: str) -> int | None:
        """Jump to the next trace row of ``kind`` after now on this branch (its time, with every
        event of that millisecond run); None, and no move, when there is none."""
        kinds = self.event_kinds()
        if kind not in kinds:
            import difflib

            close = difflib.get_close_matches(kind, kinds, n=1)
            hint = f"; did you mean {close[0]!r}?" if close else ""
            raise ValueError(f"no trace rows of kind {kind!r} on this branch{hint}")
        now = self.now
        for row in self.history.trace_rows:
            if row[0] > now and row[1] == kind:
                self.seek(row[0])
                return row[0]
        self.status = tr("no {kind} event after t={t} ms on this branch", kind=repr(kind),
                         t=f"{now:,}")
        return None

    def _moved(self) -> None:
        nxt = self.cluster.engine.peek_time()
        self._mid_ms = nxt is not None and nxt <= self.now
        self._changed()

    def play_tick(self) -> None:
        """What one tick of the Play button does: run ``tick_ms`` of simulated time."""
        self.run(self.tick_ms)

    def select(self, topic: str | None = None, partition: int | None = None) -> None:
        """Show another topic-partition."""
        topic = self.topic if topic is None else topic
        partition = 0 if partition is None and topic != self.topic else \
            (self.partition if partition is None else partition)
        self.cluster.topics.check_partition(topic, partition)
        self.topic, self.partition = topic, partition
        self._changed()

    # -- acting (in the past this forks a new future) -------------------------------------------
    def _act(self, name: str, *args, **kwargs):
        h = self.history
        if self._mid_ms and h.now > self.start_ms:
            # step() stopped inside a millisecond; a replay applies actions after all of its
            # events, so finish it first (seeking there replays it completely)
            t = h.now
            h.seek(t - 1)
            h.seek(t)
        self._mid_ms = False
        forks = h.horizon > h.now or any(a.time_ms > h.now for a in h.actions)
        if forks and self.checker is not None:
            self.checker.fork(h)
        dropped = [(t, step) for t, step in self.script if t > h.now] if forks else []
        n = len(h.actions)
        self._frames.new_branch()
        try:
            result = h.act(name, *args, **kwargs)
        except Exception:
            if len(h.actions) > n:   # History keeps a failed action; it must not be replayed
                del h.actions[n:]
            self._changed()
            raise
        if dropped:
            # the recorded future held the scenario's later steps: they are not actions of the
            # History (a scenario drives the cluster itself), so the new branch goes without them
            self.script = [(t, step) for t, step in self.script if t <= h.now]
            steps = ", ".join(f"{step} at t={t:,} ms" for t, step in dropped)
            self.notice = tr("Acting at t={now} ms forked a new future: the scenario's {n} "
                             "later scripted step(s) will not happen on this branch ({steps}). "
                             "A new Player of the scenario plays its whole script again.",
                             now=f"{h.now:,}", n=len(dropped), steps=steps)
        self._changed()
        return result

    def _broker(self, broker: int):
        b = self.cluster.brokers.get(broker)
        if b is None:
            raise ClusterError(f"Unknown broker {broker}; brokers are "
                               f"{sorted(self.cluster.brokers)}")
        return b

    def crash(self, broker: int) -> None:
        """kill -9 ``broker``: its ZooKeeper session expires later, its log dir survives."""
        if self._broker(broker).state == "stopped":
            raise ClusterError(tr("broker {broker} is not running", broker=broker))
        self._act("crash", broker)

    def restart(self, broker: int) -> None:
        """Start a stopped broker; crash and start again a running one."""
        if self._broker(broker).state == "stopped":
            # a crashed broker starts once its old ZooKeeper session has expired (Cluster.start)
            self._act("start", broker, retry=True)
        else:
            self._act("restart", broker)

    def toggle_broker(self, broker: int) -> str:
        """What a click on ``broker``'s tile does: crash it if it runs (paused included),
        restart it if it is stopped. Returns "crash" or "restart"."""
        if self._broker(broker).state == "stopped":
            self.restart(broker)
            return "restart"
        self.crash(broker)
        return "crash"

    def broker_tiles(self) -> list:
        """Each broker's tile now (``kafkasim.widgets._tiles.BrokerTile``, cluster broker
        order): state, the partitions it leads, and its view of the shown partition."""
        from kafkasim.widgets._tiles import broker_tiles

        topic = self.topic if _topic_shown(self.cluster, self.topic, self.partition) else None
        return broker_tiles(self.cluster, topic, self.partition)

    def pause_broker(self, broker: int, ms: int = 10000) -> None:
        """Stall ``broker`` for ``ms`` (a long GC pause): it handles nothing meanwhile."""
        self._broker(broker)
        if isinstance(ms, bool) or not isinstance(ms, int) or not 1 <= ms <= limits.MAX_TIME_MS:
            raise ClusterError(f"pause_broker(ms): the pause is integer milliseconds from 1 to "
                               f"{limits.MAX_TIME_MS} (limits.MAX_TIME_MS, one simulated day), "
                               f"got {ms!r}")
        self._act("pause", broker, ms)

    def produce(self, value=None, partition: int | None = None):
        """Send one record (acks=all) to the shown topic; returns its ProduceResult."""
        if self.topic is None:
            raise ClusterError(tr("the cluster has no topic to produce to"))
        partition = self.partition if partition is None else partition
        self.cluster.topics.check_partition(self.topic, partition)
        return self._act("produce", self.topic, value, partition=partition)

    def cut(self, a, b) -> None:
        """Cut the network link between nodes ``a`` and ``b`` (both ways)."""
        if a == b:
            raise ValueError(f"cannot cut a node from itself ({a!r})")
        self._act("cut", a, b)

    def heal(self) -> None:
        """Heal every network fault."""
        self._act("heal")

    def drop_message(self, msg_id: int) -> None:
        """Lose the message ``msg_id`` now on the wire (``cluster.transport.drop(msg_id=...)``)."""
        self._act("drop", msg_id=msg_id)

    # -- what the readout shows ----------------------------------------------------------------
    def first_violation(self) -> Violation | None:
        """The first invariant violation on the current branch (checked up to its horizon)."""
        return None if self.checker is None else self.checker.follow(self.history)

    def consumer_rows(self) -> list[dict]:
        """Per consumer and partition: committed offset, position, HW, LEO and lags.

        LAG is kafka-consumer-groups' (HW − committed offset); records_lag is the consumer's own
        metric (HW − position)."""
        c = self.cluster
        rows, seen = [], set()

        def leader_offsets(topic, p):
            leader = c.leader(topic, p)
            if leader < 0:
                return None, None
            log = c.brokers[leader].logs.get((topic, p))
            return (None, None) if log is None else (log.high_watermark, log.log_end_offset)

        for cid, cl in c.clients.items():
            if not isinstance(cl, Consumer):
                continue
            for topic, p in sorted(set(cl.assignment) | set(cl.positions)):
                group = cl.group_id
                committed = c.group_offsets.get((group, topic, p)) if group else None
                position = cl.positions.get((topic, p))
                hw, leo = leader_offsets(topic, p)
                rows.append(_consumer_row(group, cid, topic, p, committed, position, hw, leo))
                seen.add((group, topic, p))
        for (group, topic, p), committed in sorted(c.group_offsets.items()):
            if (group, topic, p) not in seen:
                hw, leo = leader_offsets(topic, p)
                rows.append(_consumer_row(group, None, topic, p, committed, None, hw, leo))
        return rows

    def markers(self) -> list[tuple[int, str, str]]:
        """(time_ms, kind, label) for the timeline: actions on the branch, first violation."""
        out = [(a.time_ms, "action", a.describe()) for a in self.history.actions]
        v = self.first_violation()
        if v is not None:
            out.append((v.time_ms, "violation", tr("{invariant} violated at t={t} ms",
                                                    invariant=v.invariant, t=v.time_ms)))
        return sorted(out, key=lambda m: m[0])

    def readout(self) -> dict:
        """Everything the readout shows, as data (``"text"`` is the printed form)."""
        c, h = self.cluster, self.history
        v = self.first_violation()
        shown = _topic_shown(c, self.topic, self.partition)   # (not created yet at this time?)
        out = {
            "time_ms": c.now,
            "horizon_ms": h.horizon,
            "start_ms": self.start_ms,
            "seed": c.engine.seed,
            "topic": self.topic,
            "partition": self.partition,
            "describe": c.describe(self.topic) if shown else
            ("" if self.topic is None else f"Topic {self.topic!r} does not exist at this time."),
            "replicas": c.replica_table(self.topic, self.partition) if shown else [],
            "consumers": self.consumer_rows(),
            "first_violation": v,
            "checked": self.checker is not None,
            "checked_from_ms": None if self.checker is None else self.checker.checked_from,
            "checked_to_ms": None if self.checker is None else self.checker.checked_to,
            "actions": [a.describe() for a in h.actions],
            "about": self.about,
            "notice": self.notice,
        }
        out["text"] = _readout_text(out)
        return out

    def readout_text(self) -> str:
        return self.readout()["text"]

    # -- drawing (PlayerFrames draws and caches) -----------------------------------------------
    def figure(self):
        """The replica logs of the shown partition: one Figure and Axes, redrawn in place, and
        only when what it shows (``viz.replica_log_rows``) changed since the last call."""
        return self._frames.figure()

    def isr_figure(self):
        """ISR membership over time up to now, with the current time and first violation."""
        return self._frames.isr_figure()

    def quorum_figure(self):
        """KRaft mode only (None in ZooKeeper mode): the controller quorum and broker fencing
        up to now (``viz.quorum_timeline``), with the current time."""
        return self._frames.quorum_figure()

    def isr_png(self) -> bytes | None:
        """``isr_figure()`` as PNG, drawn into a reused figure with estimated margins and
        cached per state (``kafkasim.widgets._frames``); None with no topic at this time."""
        return self._frames.isr_png()

    def quorum_png(self) -> bytes | None:
        """``quorum_figure()`` as PNG (KRaft mode only), reused figure, cached per state."""
        return self._frames.quorum_png()

    def timeline_html(self) -> str:
        """A strip under the slider: actions (blue), first violation (red), now (black)."""
        lo, hi = self.start_ms, max(self.horizon, self.start_ms + 1)

        def left(t):
            return f"{100.0 * (min(max(t, lo), hi) - lo) / (hi - lo):.3f}%"

        colors = {"action": style.IN_ISR, "violation": style.OUT_OF_ISR}
        marks = [f"<div title='{html.escape(label, quote=True)}' style='position:absolute;"
                 f"left:{left(t)};top:0;width:3px;height:14px;background:{colors[kind]}'></div>"
                 for t, kind, label in self.markers()]
        now = html.escape(tr("now: t={t} ms", t=self.now), quote=True)
        marks.append(f"<div title='{now}' style='position:absolute;"
                     f"left:{left(self.now)};top:-3px;width:2px;height:20px;background:#000'>"
                     "</div>")
        v = self.first_violation()
        legend = html.escape(
            tr("first violation: {name} at t={t} ms", name=v.invariant, t=v.time_ms)
            if v is not None else tr("no invariant violated on this branch")
            if self.checker is not None else tr("invariant checks off"))
        legend = (f"<span style='color:{style.OUT_OF_ISR}'>■ {legend}</span>" if v is not None
                  else f"<span>{legend}</span>")
        return ("<div style='position:relative;height:14px;background:#eee;margin:2px 0'>"
                + "".join(marks) + "</div>"
                f"<div style='font-size:11px'><span style='color:{style.IN_ISR}'>■ "
                f"{html.escape(tr('actions'))}</span> · {legend}</div>")

    # -- the widget -----------------------------------------------------------------------------
    @property
    def stage(self):
        """The animated stage over this player (``kafkasim.widgets.stage.Stage``): messages
        moving between the brokers; its clicks act through this player's methods."""
        if self._frames.stage is None:
            from kafkasim.widgets.stage import Stage

            # windows of ~8 s of watching at the speed set (a seek computes only that much)
            self._frames.stage = Stage(self, sized_to_watch=True)
        return self._frames.stage

    @property
    def widget(self):
        """The ipywidgets front-end (built on first use; calls only the methods above)."""
        if self._ui is None:
            from kafkasim.widgets._player_ui import PlayerUI

            self._ui = PlayerUI(self)
            self._changed()
        return self._ui.box

    def flight_html(self) -> str:
        """The messages on the wire now, between the nodes, and what each broker believes
        (``viz.flight.flight_svg``): hover a message for its fields."""
        from kafkasim.viz.flight import flight_svg

        if self.topic is not None and self.topic not in self.cluster.topics.names():
            return flight_svg(self.cluster)
        return flight_svg(self.cluster, self.topic, self.partition)

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs) -> dict:
        """The widget (its stage under one row of controls), with the stage's still picture
        (the messages in flight drawn) and text plus the readout as fallbacks
        (``widget_bundle``)."""
        box = self.widget
        stage = self.stage
        text = f"{self!r}\n{stage.text()}\n\n{self.readout_text()}"
        static = (f"<b>t = {self.now:,} ms</b> · "
                  + tr("recorded to {horizon} ms", horizon=f"{self.horizon:,}")
                  + stage.svg() + pre(stage.text()) + pre(self.readout_text()))
        return widget_bundle(box, text, static)

    def _changed(self) -> None:
        if self._ui is not None:
            self._ui.refresh()
        if self._frames.stage is not None and not self._frames.stage.acting:
            self._frames.stage.refresh()

    def png(self) -> bytes:
        """The figure as PNG, cached per view (what ``viz.replica_log_rows`` returns): going
        back to something already shown costs no drawing."""
        return self._frames.png()


class PlayerFrames:
    """The figures and PNG frames of one Player: the replica-log figure redrawn in place, its
    PNGs cached per view, and the ISR / quorum panels cached per state (branch, time, events
    processed). ``new_branch``: an action forked a new future, the other branches' frames go."""

    def __init__(self, player: Player) -> None:
        self.player = player
        self.fig = None
        self.ax = None
        self.fig_key = None
        self.pngs: OrderedDict = OrderedDict()
        self.isr_panel = Panel(top_in=1.15)      # room for the title's pad
        self.quorum_panel = Panel()
        self.branch = 0          # bumped by every action: cached frames of other branches die
        self.stage = None        # the player's Stage, made on first use (Player.stage)

    def new_branch(self) -> None:
        self.branch += 1
        self.isr_panel.clear()
        self.quorum_panel.clear()

    def view(self):
        """What the replica-log figure shows (None: no topic to show at this time)."""
        p = self.player
        c = p.cluster
        if not _topic_shown(p.cluster, p.topic, p.partition):
            return None
        return (p.topic, p.partition,
                viz.replica_log_rows(c, p.topic, p.partition,
                                     max_records=p.max_records))

    def figure(self):
        """The replica logs of the shown partition: one Figure and Axes, redrawn in place, and
        only when what it shows (``viz.replica_log_rows``) changed since the last call."""
        p = self.player
        c = p.cluster
        key = self.view()
        if self.fig is not None and key is not None and key == self.fig_key:
            return self.fig
        n = len(key[2].rows) if key is not None else 1
        size = (13.0, 1.25 * n + 1.6)
        if self.fig is None:
            self.fig = style.new_figure(*size, layout=None)   # margins set below: faster
            self.ax = self.fig.add_subplot()
        fig, ax = self.fig, self.ax
        if tuple(fig.get_size_inches()) != size:
            fig.set_size_inches(*size)
        if key is None or self.fig_key is None:
            ax.clear()           # from or to the "no topic" text: start from fresh axes
        if key is None:
            ax.set_axis_off()
            what = (tr("no topic yet: create one, then select it") if p.topic is None else
                    tr("topic {topic} does not exist at t={now} ms", topic=repr(p.topic),
                       now=f"{p.now:,}"))
            ax.text(0.5, 0.5, what, ha="center", va="center", fontsize=style.FONT,
                    transform=ax.transAxes)
        else:
            ax.set_axis_on()
            viz.replica_logs(c, p.topic, p.partition, max_records=p.max_records, ax=ax)
            fit_margins(fig, ax)
        self.fig_key = key
        return fig

    def isr_figure(self):
        """ISR membership over time up to now, with the current time and first violation."""
        p = self.player
        if p.topic is None:
            return None
        fig = viz.isr_timeline(p.cluster, p.topic, p.partition)
        self.isr_marks(fig.axes[0])
        return fig

    def isr_marks(self, ax) -> None:
        p = self.player
        ax.axvline(p.now, color="black", lw=2, gid="now")
        v = p.first_violation()
        if v is not None and v.time_ms <= p.now:
            ax.axvline(v.time_ms, color=style.OUT_OF_ISR, lw=2.5, ls="--", gid="violation")

    def quorum_figure(self):
        """KRaft mode only (None in ZooKeeper mode): the controller quorum and broker fencing
        up to now (``viz.quorum_timeline``), with the current time."""
        p = self.player
        if getattr(p.cluster, "kraft", None) is None:
            return None
        from kafkasim.viz.quorum import quorum_timeline

        fig = quorum_timeline(p.cluster)
        fig.axes[0].axvline(p.now, color="black", lw=2, gid="now")
        return fig

    def state_key(self) -> tuple:
        """Which state of which branch the player is at: (branch, time, events processed)."""
        p = self.player
        return (self.branch, p.now, p.cluster.engine.events_processed)

    def isr_png(self) -> bytes | None:
        """``isr_figure()`` as PNG, drawn into a reused figure with estimated margins and
        cached per state (``kafkasim.widgets._frames``); None with no topic at this time."""
        p = self.player
        if not _topic_shown(p.cluster, p.topic, p.partition):
            return None
        v = p.first_violation()
        key = ("isr", p.topic, p.partition, *self.state_key(),
               None if v is None else v.time_ms)
        n = len(p.cluster.assignment(p.topic)[p.partition])

        def draw(ax):
            viz.isr_timeline(p.cluster, p.topic, p.partition, ax=ax)
            self.isr_marks(ax)
        return self.isr_panel.render(key, 1.0 * n + 2.0, draw)

    def quorum_png(self) -> bytes | None:
        """``quorum_figure()`` as PNG (KRaft mode only), reused figure, cached per state."""
        p = self.player
        kraft = getattr(p.cluster, "kraft", None)
        if kraft is None:
            return None
        from kafkasim.viz.quorum import fencing_intervals, quorum_intervals, quorum_timeline

        c = p.cluster

        def height():
            lanes = len({iv.node for iv in quorum_intervals(c)}) + \
                len({iv.broker for iv in fencing_intervals(c)})
            return 0.7 * max(1, lanes) + 2.2

        def draw(ax):
            quorum_timeline(c, ax=ax)
            ax.axvline(p.now, color="black", lw=2, gid="now")
        return self.quorum_panel.render(("quorum", *self.state_key()), height, draw)

    def png(self) -> bytes:
        """The figure as PNG, cached per view (what ``viz.replica_log_rows`` returns): going
        back to something already shown costs no drawing."""
        key = self.view()
        if key is not None and key in self.pngs:
            self.pngs.move_to_end(key)
            return self.pngs[key]
        fig = self.figure()
        data = png(fig)
        if key is not None:
            self.pngs[key] = data
            while len(self.pngs) > FRAMES_KEPT:
                self.pngs.popitem(last=False)
        return data


def _topic_shown(c: Cluster, topic: str | None, partition: int) -> bool:
    """The shown topic-partition exists at this time (created, with a partition state)."""
    if topic is None or topic not in c.topics.names():
        return False
    try:
        c.inspect.partition_state(topic, partition)
    except (KeyError, ClusterError):
        return False
    return True


def _consumer_row(group, client, topic, p, committed, position, hw, leo) -> dict:
    return {"group": group, "client": client, "topic": topic, "partition": p,
            "committed": committed, "position": position, "HW": hw, "LEO": leo,
            "LAG": None if committed is None or hw is None else hw - committed,
            "records_lag": None if position is None or hw is None else hw - position}


#: The consumer table's columns: the course's words for the first six (translated headers),
#: kafka-consumer-groups' LAG and the consumer's records-lag metric as Kafka names them.
CONSUMER_COLUMNS = ("group", "client", "topic", "partition", "committed", "position", "HW",
                    "LEO", "LAG", "records_lag")


def _consumer_table(consumers: list[dict]) -> list[str]:
    """The consumer rows as a text table, its headers in the course language (aligned by
    display width: a Hangul header takes two columns a character)."""
    heads = tuple(narrate(k) for k in CONSUMER_COLUMNS)
    table = [heads] + [tuple("-" if row[k] is None else str(row[k]) for k in CONSUMER_COLUMNS)
                       for row in consumers]
    widths = [max(text_width(row[i]) for row in table) for i in range(len(heads))]
    return ["  ".join(s + " " * (w - text_width(s)) for s, w in zip(row, widths, strict=True))
            .rstrip() for row in table]


def violation_lines(v: Violation) -> list[str]:
    """``str(v)`` (``Violation.__str__``'s lines) in the course language: the labels through
    ``tr``, the checker's message, the engine event, the configuration's excuse and the
    checker's source through ``narrate``; the field names (``seed=``, ``kafka_version=``,
    ``brokers=``), the trace row and ``Cluster(...)`` stay as the code spells them."""
    where = f" {v.topic}-{v.partition}" if v.topic else ""
    lines = [tr("{invariant} violated{where} at t={t} ms (seed={seed}, kafka_version={version}, "
                "event #{n}): {message}", invariant=v.invariant, where=where, t=v.time_ms,
                seed=v.seed, version=repr(v.kafka_version), n=v.events_processed,
                message=narrate(v.message))]
    if v.allowed_because:
        lines.append("  " + tr("allowed by the configuration: {why}",
                               why=narrate(v.allowed_because)))
    if v.event is not None:
        lines.append("  " + tr("event: {event}", event=narrate(v.event)))
    if v.trace_row is not None:
        lines.append("  " + tr("last trace row: {row}", row=repr(v.trace_row)))
    involved = [f"{name}={list(values)}" for name, values in
                (("brokers", v.brokers), ("offsets", v.offsets), ("record_ids", v.record_ids))
                if values]
    if involved:
        lines.append("  " + tr("involved: {what}", what=", ".join(involved)))
    if v.source:
        lines.append("  " + tr("source: {source}", source=narrate(v.source)))
    lines.append("  " + tr("reproduce: the same actions on Cluster(seed={seed}, "
                           "kafka_version={version}, ...)", seed=v.seed,
                           version=repr(v.kafka_version)))
    return lines


def _readout_text(r: dict) -> str:
    lines = [tr("t = {now} ms · this branch runs {start} .. {horizon} ms · {about}",
                now=f"{r['time_ms']:,}", start=f"{r['start_ms']:,}",
                horizon=f"{r['horizon_ms']:,}", about=r["about"])]
    if r["topic"] is not None:
        lines += ["", f"$ kafka-topics --describe --topic {r['topic']}", r["describe"].rstrip()]
    if r["consumers"]:
        lines += ["", tr("Consumers (LAG = HW - committed; records_lag = HW - position)")]
        lines += _consumer_table(r["consumers"])
    lines.append("")
    v = r["first_violation"]
    if not r["checked"]:
        lines.append(tr("Invariant checks: off"))
    elif v is None:
        lines.append(tr("First invariant violation: none (checked {start} .. {end} ms)",
                        start=f"{r['checked_from_ms']:,}", end=f"{r['checked_to_ms']:,}"))
    else:
        lines.append(tr("First invariant violation:"))
        lines += ["  " + s for s in violation_lines(v)]
    if r["actions"]:
        lines += ["", tr("Actions on this branch:")] + ["  " + a for a in r["actions"]]
    if r.get("notice"):
        lines += ["", tr("Note: {notice}", notice=r["notice"])]
    return "\n".join(lines)
