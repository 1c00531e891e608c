"""The stage: watch messages travel between the brokers, and touch the cluster (issue 32).

    >>> stage = Stage(cluster, topic="orders")   # or player.stage
    >>> stage                                    # in JupyterLab: the animated stage
    >>> stage.toggle_broker(2, at_ms=4_350)      # what a click on broker 2 does
    >>> stage.drop_message(2843, at_ms=4_440)    # what a click on a message does
    >>> print(stage.text())                      # the stage as text (nbval, GitHub)

Python sends a window of the near future once (``_stage_window.stage_window``: messages with
their send and receive times, every node's state each time it changed); the browser animates it
(``static/stage.js``, requestAnimationFrame) at the speed the learner sets, from 1/100 of real
time to 100x, with no round trip per frame. When the learner acts at time ``t`` of the window, the
stage moves the cluster to ``t`` and calls the same method a cell would (``cluster.crash(2)``,
``cluster.transport.drop(msg_id=...)``, ``producer.send(...)``; for a player,
``player.crash(2)``...), shows that call as code under the stage, and sends the new window.
Showing the stage costs no round trip (stage.js only notes that it is watched, and at which
speed); when the learner steps or plays near a window's end, stage.js asks in the background
for the same window reaching further (``extend``), so that it rarely waits for the kernel there.

Without a front end the stage shows text (``text()``: deterministic, nbval compares it) and a
still SVG picture with the messages in flight (``svg()``).

The stage speaks the course's language: the window's labels and narration come translated from
``_stage_window``; every word ``stage.js`` shows (buttons, tooltips, ARIA labels, badges) is
looked up in the synced ``strings`` trait, English -> translation, built with ``tr`` (msgctxt
``kafkasim.player``) when the widget is made (``ui_strings``). The English is the key.
"""

from __future__ import annotations

from pathlib import Path

import anywidget
import traitlets

from kafkasim.observe.history import ACTION_OWNERS
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.exceptions import ClusterError
from kafkasim.viz import style
from kafkasim.widgets._render import widget_bundle
from kafkasim.widgets._stage_window import (
    N_,
    REASONS,
    WINDOW_MS,
    _check_window_ms,
    stage_window,
    tr,
    window_svg,
    window_text,
)

I18N_CONTEXT = "kafkasim.player"

STATIC = Path(__file__).parent / "static"
PAUSE_MS = 5000            # a shift-click pauses a broker this long (a long GC pause)
CODE_LINES = 6             # calls shown under the stage
WATCH_S = 8                # a window holds about this many seconds of watching at the speed set
START_SPEED = 10 ** -1.5   # simulated ms per real ms stage.js starts at (its SPEEDS.start)
MIN_WINDOW_MS = 250
MIN_STOPS = 8              # a speed-sized window with fewer steps in it reaches on to window_ms
ACTIONS = ("toggle", "pause", "drop", "produce", "cut", "seek", "advance", "refresh", "extend",
           "watch")

#: every string stage.js shows (its T("...") keys; tests/test_stage.py checks they match)
JS_STRINGS = (
    N_("kafkasim stage: space plays or pauses, arrows step, digits crash or restart brokers, "
       "shift+digit pauses, p produces"),
    N_("play / pause (space)"), N_("▶ Play"), N_("❚❚ Pause"),
    N_("step back (←)"), N_("◀ step"), N_("next message or change (→)"), N_("step ▶"),
    N_("time in this window"), N_("speed"), N_("speed, 1/100 to 100 times real time"),
    N_("produce one record (p)"), N_("Produce"),
    N_("the player's branch: click to go there; marks: actions (blue), first invariant "
       "violation (red)"),
    N_("the equivalent calls"), N_("# the calls your clicks make appear here"),
    N_("keys and clicks"),
    N_("Keys: space play/pause · ← → step · 1-9 crash/restart broker · shift+1-9 pause it · "
       "p produce. Click a broker to crash/restart it (shift-click: pause), drag from one node "
       "to another to cut their link (again: heal), click a message to drop it; hover a "
       "message for its fields."),
    N_(" ★ leader"), N_(" · controller"),
    N_("✕ CRASHED"), N_("❚❚ PAUSED"), N_("FENCED"), N_("shutting down"), N_("✂ ISOLATED"),
    N_("down: click to restart"), N_("no replica of this partition"),
    N_("epoch {epoch} · ISR [{isr}]"), N_("follows {leader} · epoch {epoch}"),
    N_("no partition state yet"), N_("LEO {leo} · HW {hw}"), N_(" · log start {start}"),
    N_("pausing…"), N_("starting…"), N_("crashing…"),
    N_("branch {start}–{end} ms"),
    N_("held by a fault"), N_("still on the wire"), N_("lost at {t} ms"),
    N_("arrives at {t} ms"), N_("sent at {t} ms, {where}"), N_("click: drop this message"),
    N_("✂ cut"),
    N_("Press play (space) or step (→) to watch the messages."), N_("t = {t} ms: {text}"),
    N_("next, at {t} ms: {text}"), N_("next: the following window (step or play on)"),
    N_("t = {t} ms · {n} in flight"), N_("stage at t = {t} ms, {n} messages in flight"),
)


def ui_strings() -> dict[str, str]:
    """English -> the course's language for every string stage.js shows (its ``strings``
    trait), the reasons a message is lost included (the tooltip names them)."""
    return {s: tr(s) for s in (*JS_STRINGS, *REASONS)}


class _ClusterDriver:
    """Acts on a Cluster the way a cell does; ``name`` is what the shown code calls it."""

    def __init__(self, cluster: Cluster, name: str) -> None:
        self.cluster = cluster
        self.name = name
        self.producer = None

    def move_to(self, t: int) -> list[str]:
        if t <= self.cluster.now:
            return []
        self.cluster.run_to(t)
        return [f"{self.name}.run_to({t})"]

    def call(self, method: str, *args, **kwargs) -> tuple[object, str]:
        owner = ACTION_OWNERS.get(method)      # drop: cluster.transport.drop
        target = getattr(self.cluster, owner) if owner else self.cluster
        result = getattr(target, method)(*args, **kwargs)
        path = f"{self.name}.{owner}" if owner else self.name
        return result, f"{path}.{method}({_args(args, kwargs)})"

    def timeline(self) -> None:
        """A Cluster has no recorded branch to show (a Player has)."""
        return None

    def next_change(self, _after_ms: int) -> None:
        """A Cluster has no recorded future (a Player's branch may have)."""
        return None

    def seek(self, t: int) -> list[str]:
        if t < self.cluster.now:
            raise ValueError(f"a Cluster cannot go back to t={t} ms (it is at "
                             f"{self.cluster.now} ms): a Player can (Player(cluster).stage)")
        return self.move_to(t)

    def produce(self, topic: str, value, partition: int) -> tuple[object, list[str]]:
        lines = []
        if self.producer is None or self.producer.client_id not in self.cluster.clients:
            self.producer = self.cluster.clients.get("stage-producer") or \
                self.cluster.producer("stage-producer", acks="all")
            lines.append(f'producer = {self.name}.producer("stage-producer", acks="all")')
        result = self.producer.send(topic, value, partition=partition)
        lines.append(f"producer.send({_args((topic, value), {'partition': partition})})")
        return result, lines


class _PlayerDriver:
    """Acts through a Player (its History forks when the stage acts in the recorded past)."""

    def __init__(self, player, name: str) -> None:
        self.player = player
        self.name = name

    @property
    def cluster(self) -> Cluster:
        return self.player.cluster

    def move_to(self, t: int) -> list[str]:
        if t <= self.player.now:
            return []
        self.player.seek(t)
        return [f"{self.name}.seek({t})"]

    def call(self, method: str, *args, **kwargs) -> tuple[object, str]:
        named = {"start": "restart", "pause": "pause_broker", "drop": "drop_message"}
        method = named.get(method, method)
        if method == "drop_message":
            args, kwargs = (kwargs["msg_id"],), {}
        if method == "restart":
            kwargs = {}          # Player.restart waits for the old ZooKeeper session itself
        result = getattr(self.player, method)(*args, **kwargs)
        return result, f"{self.name}.{method}({_args(args, kwargs)})"

    def timeline(self) -> dict:
        """The player's branch: its span and marks (actions, the first invariant violation)."""
        p = self.player
        return {"start": p.start_ms, "end": max(p.horizon, p.now),
                "marks": [{"t": t, "kind": kind, "label": label}
                          for t, kind, label in p.markers()]}

    def next_change(self, after_ms: int) -> int | None:
        """When the recorded branch next changes from outside the engine (History)."""
        return self.player.history.next_change(after_ms)

    def seek(self, t: int) -> list[str]:
        self.player.seek(t)
        return [f"{self.name}.seek({t})"]

    def produce(self, topic: str, value, partition: int) -> tuple[object, list[str]]:
        result = self.player.produce(value, partition=partition)
        return result, [f"{self.name}.produce({_args((value,), {'partition': partition})})"]


def _is_player(source) -> bool:
    """A ``widgets.player.Player`` (by its interface: the player imports this module)."""
    return all(hasattr(source, a) for a in ("history", "seek", "drop_message", "cluster"))


def _stops(window: dict) -> int:
    """How many steps ``window`` holds: its narrated moments after its start (a message
    arrives or is lost, a node changes; stage.js's ``stops``)."""
    return len({n["t"] for n in window["narration"] if window["t0"] < n["t"] <= window["t1"]})


def _args(args, kwargs) -> str:
    return ", ".join([repr(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()])


class Stage(anywidget.AnyWidget):
    """The animated stage over a ``Cluster`` or a ``Player`` (module docstring).

    ``topic``/``partition``: the partition whose logs the brokers show (default: the first
    topic, or the player's). ``window_ms``: how much simulated time one window holds (the
    browser asks for the next one when playing reaches its end). ``name``: how the shown code
    names the cluster or player (default ``cluster`` / ``player``). ``sized_to_watch``: size
    every window to ``WATCH_S`` seconds of watching at the front end's speed from the first one
    (a player's stage: a seek computes a quarter second, not ``window_ms``)."""

    _esm = STATIC / "stage.js"
    _css = STATIC / "stage.css"
    window = traitlets.Dict().tag(sync=True)
    code = traitlets.List(traitlets.Unicode()).tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    autoplay = traitlets.Bool(False).tag(sync=True)
    strings = traitlets.Dict().tag(sync=True)    # stage.js's words: English -> translation

    def __init__(self, source, topic: str | None = None, partition: int = 0,
                 window_ms: int = WINDOW_MS, *, name: str | None = None,
                 autoplay: bool = False, sized_to_watch: bool = False) -> None:
        super().__init__()
        self.strings = ui_strings()      # before the front end renders: it reads them once
        self._serial = 0
        # simulated ms per real ms the front end plays at (it says with every request); with
        # ``sized_to_watch`` the first windows assume its starting speed: short and cheap
        self._speed = START_SPEED if sized_to_watch else None
        self._watched = False      # a front end shows the stage (it has sent a request)
        # projector mode as it was when the stage was made (a later set_presentation(False),
        # as a notebook's last cell does, leaves a stage on screen as it is)
        self.presentation = bool(style.PRESENTATION)
        if isinstance(source, Cluster):
            self._driver = _ClusterDriver(source, name or "cluster")
        elif _is_player(source):
            self._driver = _PlayerDriver(source, name or "player")
            topic = source.topic if topic is None else topic
            partition = source.partition if topic == source.topic and partition == 0 \
                else partition
        else:
            raise TypeError(f"Stage needs a Cluster or a Player, got {type(source).__name__}")
        topics = self.cluster.topics.names()
        self.topic = topic if topic is not None else (topics[0] if topics else None)
        if self.topic is not None:
            self.cluster.topics.check_partition(self.topic, partition)
        self.partition = partition
        self.window_ms = _check_window_ms(window_ms)
        self.calls: list[str] = []
        self.acting = False      # an action in progress (a player's own refreshes wait for it)
        self.autoplay = autoplay
        self.on_msg(self._on_front_end)
        self.refresh()

    def __repr__(self) -> str:
        return (f"Stage(t={self.cluster.now} ms, window to {self.window['t1']} ms, "
                f"topic={self.topic!r}, partition={self.partition}, "
                f"{len(self.window['tokens'])} message(s) in the window)")

    @property
    def cluster(self) -> Cluster:
        """The live cluster (for a player: the player's cluster now)."""
        return self._driver.cluster

    # -- the window ---------------------------------------------------------------------------
    def refresh(self, reach: bool = False) -> None:
        """Send a new window starting at the cluster's time now: ``window_ms`` long, or, while
        the front end plays slowly, about ``WATCH_S`` seconds of its watching (cheaper, so a
        click shows its effect sooner). ``reach``: as long as it may be (``extend``)."""
        ms = self.window_ms
        if self._speed is not None:
            ms = max(MIN_WINDOW_MS, min(ms, round(self._speed * WATCH_S * 1000)))
        known = self.cluster.topics.names()
        shown = self.topic if self.topic in known else None  # (not created yet?)
        # a window runs a copy of the cluster, which knows nothing of a recorded story step or
        # action still to come: it ends there, and the next one starts from the changed state
        now, change = self.cluster.now, self._driver.next_change(self.cluster.now)
        longest = self.window_ms if change is None else min(self.window_ms, change - now)
        window = stage_window(self.cluster, shown, self.partition,
                              longest if reach else min(ms, longest))
        if self._watched and ms < longest and _stops(window) < MIN_STOPS and not reach:
            # a quiet stretch, in the browser: reach on (up to ``window_ms``) so that steps have
            # somewhere to go there instead of asking the kernel for another near-empty window
            # (a round trip every step or two in notebooks 02 and 08's quiet seconds); without
            # a front end (nbval, a cell's print) the window, and its text, stay as they were
            window = stage_window(self.cluster, shown, self.partition, longest)
        window["timeline"] = self._driver.timeline()
        window["presentation"] = self.presentation     # projector mode: bigger controls
        window["more"] = window["t1"] - now < longest   # ``extend`` can reach further
        window["extended"] = reach      # the same start, further: the front end plays on
        self._serial += 1
        window["serial"] = self._serial     # a new window even when nothing changed
        self.window = window

    def extend(self, t0) -> bool:
        """What the front end asks, in the background, when the learner steps or plays in a
        window that could reach further with few steps left (stage.js ``EXTEND_AT``): the
        same window reaching as far as it may, the cluster unmoved, so that step and play go
        on without waiting for the kernel at the window's end. Nothing (False) when the
        window has moved on from ``t0`` or reaches as far already."""
        if t0 != self.window["t0"] or not self.window.get("more"):
            return False
        self.refresh(reach=True)
        return True

    def text(self, t: int | None = None) -> str:
        """The stage at ``t`` (default: the window's start) as plain text, messages in flight
        included; deterministic."""
        return window_text(self.window, t)

    def svg(self, t: int | None = None) -> str:
        """A still SVG picture of the stage at ``t`` (default: the window's start)."""
        return window_svg(self.window, t)

    # -- acting: each is what a click does, through the methods a cell calls -------------------
    def _at(self, at_ms) -> list[str]:
        w = self.window
        if at_ms is None:
            return []
        if isinstance(at_ms, bool) or not isinstance(at_ms, (int, float)):
            raise ValueError(f"at_ms must be a time in ms, got {at_ms!r}")
        t = int(at_ms)
        if not w["t0"] <= t <= w["t1"]:
            raise ValueError(f"at_ms={t} is outside the stage's window "
                             f"({w['t0']} .. {w['t1']} ms)")
        return self._driver.move_to(t)

    def _done(self, lines: list[str]) -> list[str]:
        self.calls += lines
        self.code = self.calls[-CODE_LINES:]
        self.error = ""
        self.refresh()
        return lines

    def _broker_or_controller(self, node: int):
        c = self.cluster
        kraft = getattr(c, "kraft", None)
        if node in c.brokers:
            return c.brokers[node]
        if kraft is not None and node in kraft.nodes:
            return kraft.nodes[node]
        known = sorted(c.brokers) + (sorted(kraft.nodes) if kraft is not None else [])
        raise ClusterError(f"Unknown node {node!r}; brokers and controllers are {known}")

    def toggle_broker(self, node: int, at_ms: float | None = None) -> list[str]:
        """What a click on a broker (or KRaft controller) does at ``at_ms`` of the window:
        crash it if it runs, start it if it is crashed. Returns the calls made."""
        proc = self._broker_or_controller(node)
        lines = self._at(at_ms)
        if proc.state == "stopped":
            kwargs = {"retry": True} if node in self.cluster.brokers and \
                getattr(self.cluster, "kraft", None) is None else {}
            _, line = self._driver.call("start", node, **kwargs)
        else:
            _, line = self._driver.call("crash", node)
        return self._done(lines + [line])

    def pause_broker(self, broker: int, ms: int = PAUSE_MS,
                     at_ms: float | None = None) -> list[str]:
        """What a shift-click on a broker does: pause it for ``ms`` (a long GC pause)."""
        self._broker_or_controller(broker)
        lines = self._at(at_ms)
        _, line = self._driver.call("pause", broker, ms)
        return self._done(lines + [line])

    def drop_message(self, msg_id: int, at_ms: float | None = None) -> list[str]:
        """What a click on a message does: lose it on the wire
        (``cluster.transport.drop(msg_id=...)``)."""
        if isinstance(msg_id, bool) or not isinstance(msg_id, int):
            raise ValueError(f"msg_id must be a message id (an int), got {msg_id!r}")
        lines = self._at(at_ms)
        _, line = self._driver.call("drop", msg_id=msg_id)
        return self._done(lines + [line])

    def produce(self, value=None, at_ms: float | None = None) -> list[str]:
        """What the Produce button does: send one record (acks=all) to the partition in view."""
        if self.topic is None:
            raise ClusterError("the cluster has no topic to produce to")
        lines = self._at(at_ms)
        if value is None:
            value = f"v{len(self.calls)}"
        _, sent = self._driver.produce(self.topic, value, self.partition)
        return self._done(lines + sent)

    def cut_link(self, a, b, at_ms: float | None = None) -> list[str]:
        """What a drag from node ``a`` to node ``b`` does: cut the link between them (both
        ways); when it is cut already, heal the network (``cluster.heal()``)."""
        self._broker_or_controller(a)
        self._broker_or_controller(b)
        if a == b:
            raise ValueError(f"drag from one node to another to cut their link (got {a} twice)")
        lines = self._at(at_ms)
        links = self.cluster.transport.network.cut_links
        if links.get((a, b)) or links.get((b, a)):
            _, line = self._driver.call("heal")
        else:
            _, line = self._driver.call("cut", a, b)
        return self._done(lines + [line])

    def seek(self, time_ms: int) -> list[str]:
        """What a click on a mark of the timeline does: go to ``time_ms`` (a Player goes back
        or forth on its branch; a Cluster only forth) and send the window from there."""
        if isinstance(time_ms, bool) or not isinstance(time_ms, (int, float)) or time_ms < 0:
            raise ValueError(f"seek needs a time in ms >= 0, got {time_ms!r}")
        return self._done(self._driver.seek(int(time_ms)))

    def advance(self) -> list[str]:
        """Move the cluster to the window's end and send the next window (Play does this)."""
        return self._done(self._driver.move_to(self.window["t1"]))

    # -- the front end --------------------------------------------------------------------------
    def handle(self, content: dict) -> list[str]:
        """Do what the front end asks (``_handle``), refreshing the window once at the end."""
        self.acting = True
        try:
            return self._handle(content)
        finally:
            self.acting = False

    def _handle(self, content: dict) -> list[str]:
        """Do what the front end asks: ``{"action": "toggle" | "pause" | "drop" | "produce" |
        "cut" | "seek" | "advance" | "refresh" | "extend" | "watch", "node" / "to" / "msg_id": ...,
        "t": time in the window (for "seek": anywhere on a player's branch), "speed": simulated ms
        per real ms}``. "extend" and "watch" send no window unless there is one to send: the
        front end does not wait for them."""
        if not isinstance(content, dict) or content.get("action") not in ACTIONS:
            got = content.get("action") if isinstance(content, dict) else content
            raise ValueError(f"unknown stage action {got!r}; choose from {', '.join(ACTIONS)}")
        action, t = content["action"], content.get("t")
        speed = content.get("speed")
        if isinstance(speed, (int, float)) and not isinstance(speed, bool) and speed > 0:
            self._speed = float(speed)
            self._watched = True       # every request of stage.js says its speed
        if action == "toggle":
            return self.toggle_broker(content.get("node"), at_ms=t)
        if action == "pause":
            return self.pause_broker(content.get("node"), at_ms=t)
        if action == "drop":
            return self.drop_message(content.get("msg_id"), at_ms=t)
        if action == "produce":
            return self.produce(at_ms=t)
        if action == "cut":
            return self.cut_link(content.get("node"), content.get("to"), at_ms=t)
        if action == "advance":
            return self.advance()
        if action == "seek":
            return self.seek(t)
        if action == "extend":      # in the background: the front end does not wait for it
            self.extend(content.get("t0"))
            return []
        if action == "watch":       # stage.js rendered (its speed noted above): no window back
            return []
        self.refresh()
        return []

    def _on_front_end(self, _widget, content, _buffers) -> None:
        try:
            self.handle(content)
        except (ClusterError, ValueError, TypeError) as exc:
            self.error = f"{type(exc).__name__}: {exc}"
            self.refresh()      # the front end waits for a window after every request

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs) -> dict:
        """The stage, with its text and a still picture as fallbacks (``widget_bundle``)."""
        return widget_bundle(_AsWidget(self), self.text(),
                             self.svg() + f"<pre style='font-size:11px'>{_escape(self.text())}"
                             "</pre>")


class _AsWidget:
    """The anywidget's own mime bundle (``AnyWidget._repr_mimebundle_``)."""

    def __init__(self, stage: Stage) -> None:
        self.stage = stage

    def _repr_mimebundle_(self, **kwargs) -> dict:
        out = anywidget.AnyWidget._repr_mimebundle_(self.stage, **kwargs)
        return out[0] if isinstance(out, tuple) else (out or {})


def _escape(text: str) -> str:
    import html

    return html.escape(text)
