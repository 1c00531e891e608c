"""The player: scrub, play and step through a simulated cluster, inject faults, fork the future.

    >>> p = Player(cluster, topic="orders")        # or Player(Scenario.named("...").run())
    >>> p.run(5000); p.crash(2); p.run(20000)
    >>> p.seek(3000); p.produce("late")            # acting in the past forks a new future
    >>> print(p.readout_text()); p.figure()
    >>> p                                          # in JupyterLab: the widget

Every button and slider of the widget calls one of these methods, so a cell (and pytest, and
nbval, which never renders widgets) can do exactly what a click does. Time travel is
``kafkasim.history.History``: a snapshot every ``every_ms`` of simulated time, so moving the
slider restores the nearest snapshot and replays at most ``every_ms``. ``player.cluster`` is the
live cluster at the current time; it is a new object after every seek.
"""

from __future__ import annotations

import html

from kafkasim import snapshots, viz
from kafkasim.check import Violation, make_suite
from kafkasim.clients.consumer import Consumer
from kafkasim.cluster import Cluster, ClusterError
from kafkasim.history import History
from kafkasim.viz import style
from kafkasim.widgets._render import png, pre
from kafkasim.widgets.recording import BranchChecker, record_scenario


def _auto_every_ms(horizon: int) -> int:
    """A snapshot every second, or every horizon/100 (rounded up to seconds) for long runs."""
    return max(1000, -(-horizon // 100000) * 1000)


def _history_for(source, every_ms: int | None, checks):
    """(History, BranchChecker | None, about) for a Cluster, Scenario or ScenarioRun."""
    from kafkasim.scenario import Scenario, ScenarioRun

    names = None if checks is True else checks
    if isinstance(source, (Scenario, ScenarioRun)):
        if isinstance(source, Scenario):
            source = source.run()     # cheap next to recording; tells how long the story is
        scenario, seed = source.scenario, source.cluster.seed
        if every_ms is None:
            every_ms = _auto_every_ms(source.cluster.now)
        suite = make_suite(names, on_violation="collect") if checks else None
        history, run = record_scenario(scenario, seed, every_ms, checker=suite)
        if run.cluster.trace_digest() == source.cluster.trace_digest():
            checker = None
            if checks:
                checker = BranchChecker(snapshots.dump(history.cluster), 0, history.now, names,
                                        first=suite.first, checked_from=history.times[0])
            return history, checker, f"scenario {scenario.name!r}, seed {seed}"
        about = (f"scenario {scenario.name!r}, seed {seed}, changed after it ended: the player "
                 "starts from the cluster's current state")
        source = source.cluster
    elif isinstance(source, Cluster):
        about = f"cluster, seed {source.seed}"
    else:
        raise TypeError(f"Player needs a Cluster, a Scenario or a ScenarioRun, got "
                        f"{type(source).__name__}")
    checker = BranchChecker(snapshots.dump(source), 0, source.now, names) if checks else None
    return History(source, every_ms or 1000), checker, about


class Player:
    """Time slider, play/step and fault buttons over one cluster's History (module docstring).

    ``source``: a ``Cluster`` (the player drives it from its current state), a ``Scenario``, or a
    ``ScenarioRun`` (the scenario is recorded again from its start, so its whole story can be
    scrubbed). ``topic``/``partition``: what the figure shows (default: the first topic).
    ``every_ms``: simulated time between snapshots (default 1000; for a long scenario, a
    hundredth of it): a seek replays at most that much.
    ``tick_ms``: simulated time one Play tick runs. ``checks``: True (every registered invariant
    of ``kafkasim.check``), a list of check names, or False.
    """

    def __init__(self, source, topic: str | None = None, partition: int = 0,
                 every_ms: int | None = None, *, tick_ms: int = 100, checks=True,
                 show_isr: bool = False, max_records: int = 40) -> None:
        if tick_ms <= 0:
            raise ValueError(f"tick_ms must be > 0, got {tick_ms}")
        self.history, self.checker, self.about = _history_for(source, every_ms, checks)
        self.start_ms = self.history.times[0]
        topics = self.cluster.topics()
        self.topic = topic if topic is not None else (topics[0] if topics else None)
        self.partition = partition
        if self.topic is not None:
            self.cluster.check_partition(self.topic, partition)
        self.tick_ms = tick_ms
        self.show_isr = show_isr
        self.max_records = max_records
        self.status = ""
        self._fig = None
        self._fig_key = None
        self._png = None
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
        self.cluster.check_partition(topic, partition)
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
        n = len(h.actions)
        try:
            return h.act(name, *args, **kwargs)
        except Exception:
            if len(h.actions) > n:   # History keeps a failed action; it must not be replayed
                del h.actions[n:]
            raise
        finally:
            self._changed()

    def _broker(self, broker: int):
        b = self.cluster.brokers.get(broker)
        if b is None:
            raise ClusterError(f"Unknown broker {broker}; brokers are "
                               f"{sorted(self.cluster.brokers)}")
        return b

    def crash(self, broker: int) -> None:
        """kill -9 ``broker``: its ZooKeeper session expires later, its log dir survives."""
        if self._broker(broker).state == "stopped":
            raise ClusterError(f"broker {broker} is not running")
        self._act("crash", broker)

    def restart(self, broker: int) -> None:
        """Start a stopped broker; crash and start again a running one."""
        if self._broker(broker).state == "stopped":
            # a crashed broker starts once its old ZooKeeper session has expired (Cluster.start)
            self._act("start", broker, retry=True)
        else:
            self._act("restart", broker)

    def pause_broker(self, broker: int, ms: int = 10000) -> None:
        """Stall ``broker`` for ``ms`` (a long GC pause): it handles nothing meanwhile."""
        self._broker(broker)
        if ms <= 0:
            raise ValueError(f"pause needs a positive duration, got {ms} ms")
        self._act("pause", broker, ms)

    def produce(self, value=None, partition: int | None = None):
        """Send one record (acks=all) to the shown topic; returns its ProduceResult."""
        if self.topic is None:
            raise ClusterError("the cluster has no topic to produce to")
        partition = self.partition if partition is None else partition
        self.cluster.check_partition(self.topic, partition)
        return self._act("produce", self.topic, value, partition=partition)

    def cut(self, a, b) -> None:
        """Cut the network link between nodes ``a`` and ``b`` (both ways)."""
        if a == b:
            raise ValueError(f"cannot cut a node from itself ({a!r})")
        self._act("cut", a, b)

    def heal(self) -> None:
        """Heal every network fault."""
        self._act("heal")

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
            out.append((v.time_ms, "violation", f"{v.invariant} violated at t={v.time_ms} ms"))
        return sorted(out, key=lambda m: m[0])

    def readout(self) -> dict:
        """Everything the readout shows, as data (``"text"`` is the printed form)."""
        c, h = self.cluster, self.history
        v = self.first_violation()
        out = {
            "time_ms": c.now,
            "horizon_ms": h.horizon,
            "start_ms": self.start_ms,
            "seed": c.seed,
            "topic": self.topic,
            "partition": self.partition,
            "describe": c.describe(self.topic) if self.topic is not None else "",
            "replicas": c.replica_table(self.topic, self.partition) if self.topic else [],
            "consumers": self.consumer_rows(),
            "first_violation": v,
            "checked": self.checker is not None,
            "checked_from_ms": None if self.checker is None else self.checker.checked_from,
            "checked_to_ms": None if self.checker is None else self.checker.checked_to,
            "actions": [a.describe() for a in h.actions],
            "about": self.about,
        }
        out["text"] = _readout_text(out)
        return out

    def readout_text(self) -> str:
        return self.readout()["text"]

    # -- drawing --------------------------------------------------------------------------------
    def figure(self):
        """The replica logs of the shown partition: one Figure, redrawn in place, and only when
        what it shows (``viz.replica_log_rows``) changed since the last call."""
        c = self.cluster
        if self.topic is None:
            key = None
        else:
            key = (self.topic, self.partition,
                   viz.replica_log_rows(c, self.topic, self.partition,
                                        max_records=self.max_records))
        if self._fig is not None and key is not None and key == self._fig_key:
            return self._fig
        n = len(key[2].rows) if key is not None else 1
        size = (13.0, 1.25 * n + 1.6)
        if self._fig is None:
            self._fig = style.new_figure(*size, layout=None)   # margins set below: faster
        fig = self._fig
        fig.clear()
        if tuple(fig.get_size_inches()) != size:
            fig.set_size_inches(*size)
        ax = fig.add_subplot()
        if key is None:
            ax.set_axis_off()
            ax.text(0.5, 0.5, "no topic yet: create one, then select it", ha="center",
                    va="center", fontsize=style.FONT, transform=ax.transAxes)
        else:
            viz.replica_logs(c, self.topic, self.partition, max_records=self.max_records, ax=ax)
            _fit_margins(fig, ax)
        self._fig_key = key
        return fig

    def isr_figure(self):
        """ISR membership over time up to now, with the current time and first violation."""
        if self.topic is None:
            return None
        fig = viz.isr_timeline(self.cluster, self.topic, self.partition)
        ax = fig.axes[0]
        ax.axvline(self.now, color="black", lw=2, gid="now")
        v = self.first_violation()
        if v is not None and v.time_ms <= self.now:
            ax.axvline(v.time_ms, color=style.OUT_OF_ISR, lw=2.5, ls="--", gid="violation")
        return fig

    def quorum_figure(self):
        """KRaft mode only (None in ZooKeeper mode): the controller quorum and broker fencing
        up to now (``viz.quorum_timeline``), with the current time."""
        if getattr(self.cluster, "kraft", None) is None:
            return None
        from kafkasim.viz.quorum import quorum_timeline

        fig = quorum_timeline(self.cluster)
        fig.axes[0].axvline(self.now, color="black", lw=2, gid="now")
        return fig

    def timeline_html(self) -> str:
        """A strip under the slider: actions (blue), first violation (red), now (black)."""
        lo, hi = self.start_ms, max(self.horizon, self.start_ms + 1)

        def left(t):
            return f"{100.0 * (min(max(t, lo), hi) - lo) / (hi - lo):.3f}%"

        colors = {"action": style.IN_ISR, "violation": style.OUT_OF_ISR}
        marks = [f"<div title='{html.escape(label, quote=True)}' style='position:absolute;"
                 f"left:{left(t)};top:0;width:3px;height:14px;background:{colors[kind]}'></div>"
                 for t, kind, label in self.markers()]
        marks.append(f"<div title='now: t={self.now} ms' style='position:absolute;"
                     f"left:{left(self.now)};top:-3px;width:2px;height:20px;background:#000'>"
                     "</div>")
        v = self.first_violation()
        legend = (f"<span style='color:{style.OUT_OF_ISR}'>■ first violation: {v.invariant} at "
                  f"t={v.time_ms} ms</span>" if v is not None else
                  "<span>no invariant violated on this branch</span>"
                  if self.checker is not None else "<span>invariant checks off</span>")
        return ("<div style='position:relative;height:14px;background:#eee;margin:2px 0'>"
                + "".join(marks) + "</div>"
                f"<div style='font-size:11px'><span style='color:{style.IN_ISR}'>■ actions"
                f"</span> · {legend}</div>")

    # -- the widget -----------------------------------------------------------------------------
    @property
    def widget(self):
        """The ipywidgets front-end (built on first use; calls only the methods above)."""
        if self._ui is None:
            from kafkasim.widgets._player_ui import PlayerUI

            self._ui = PlayerUI(self)
            self._changed()
        return self._ui.box

    def _ipython_display_(self) -> None:
        from IPython.display import display

        display(self.widget)

    def _changed(self) -> None:
        if self._ui is not None:
            self._ui.refresh()

    def png(self) -> bytes:
        """The figure as PNG (rendered again only when the figure was redrawn)."""
        fig = self.figure()
        if self._png is None or self._png[0] != self._fig_key:
            self._png = (self._fig_key, png(fig))
        return self._png[1]

    def readout_html(self) -> str:
        return pre(self.readout_text())


def _fit_margins(fig, ax) -> None:
    """Room for the replica labels (left), the legend (right), title and offset axis: a layout
    estimated from the text, much cheaper than matplotlib's constrained layout."""
    w, h = fig.get_size_inches()

    def longest(texts, size):
        n = max((len(line) for t in texts for line in t.get_text().splitlines()), default=0)
        return 0.62 * size / 72 * n

    left = 0.35 + longest(ax.get_yticklabels(), style.FONT)
    legend = ax.get_legend()
    right = 0.9 + longest(legend.get_texts(), style.SMALL) if legend is not None else 0.3
    fig.subplots_adjust(left=min(left / w, 0.45), right=max(1 - right / w, 0.5),
                        top=1 - 0.8 / h, bottom=0.8 / h)


def _consumer_row(group, client, topic, p, committed, position, hw, leo) -> dict:
    return {"group": group, "client": client, "topic": topic, "partition": p,
            "committed": committed, "position": position, "HW": hw, "LEO": leo,
            "LAG": None if committed is None or hw is None else hw - committed,
            "records_lag": None if position is None or hw is None else hw - position}


def _readout_text(r: dict) -> str:
    lines = [f"t = {r['time_ms']:,} ms · this branch runs {r['start_ms']:,} .. "
             f"{r['horizon_ms']:,} ms · {r['about']}"]
    if r["topic"] is not None:
        lines += ["", f"$ kafka-topics --describe --topic {r['topic']}", r["describe"].rstrip()]
    if r["consumers"]:
        cols = ("group", "client", "topic", "partition", "committed", "position", "HW", "LEO",
                "LAG", "records_lag")
        table = [cols] + [tuple("-" if row[k] is None else str(row[k]) for k in cols)
                          for row in r["consumers"]]
        widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
        lines += ["", "Consumers (LAG = HW - committed; records_lag = HW - position)"]
        lines += ["  ".join(s.ljust(w) for s, w in zip(row, widths, strict=True)).rstrip()
                  for row in table]
    lines.append("")
    v = r["first_violation"]
    if not r["checked"]:
        lines.append("Invariant checks: off")
    elif v is None:
        lines.append(f"First invariant violation: none (checked {r['checked_from_ms']:,} .. "
                     f"{r['checked_to_ms']:,} ms)")
    else:
        lines.append("First invariant violation:")
        lines += ["  " + s for s in str(v).splitlines()]
    if r["actions"]:
        lines += ["", "Actions on this branch:"] + ["  " + a for a in r["actions"]]
    return "\n".join(lines)
