"""The ipywidgets front-end of ``Player``: every callback calls one public Player method.

Labels, tooltips and notices speak the course's language (``_render.tr``: Korean in a Korean
notebook, from kafkasim/course/locale/ko.po); each control also carries a stable CSS class
(``kafkasim-step``, ``kafkasim-crash``, ``kafkasim-time``, ...: ``CONTROL_CLASSES``) by which
browser tests find it in any language. Broker ids, Kafka's names and config keys stay as they are.
"""

from __future__ import annotations

import html

import ipywidgets as w

from kafkasim.widgets._render import TICK_CHOICES, pre
from kafkasim.widgets._render import tr as _tr

#: gettext msgctxt of this module's messages: its one-word labels ("broker", "topic") are not
#: the course's table headers of the same word (kafkasim.course.i18n)
I18N_CONTEXT = "kafkasim.player"


def tr(message: str, /, **fields) -> str:
    """``_render.tr`` under this module's ``I18N_CONTEXT``."""
    return _tr(message, _context=I18N_CONTEXT, **fields)

_WIDE = {"description_width": "initial"}
SPEEDS = tuple((f"{t // 1000} s" if t >= 1000 else f"{t} ms", t) for t in TICK_CHOICES)
PLAY_INTERVAL_MS = 500      # wall time between two Play ticks (each tick runs ``tick_ms``)
_ROW = {"flex_flow": "row wrap", "align_items": "center"}   # rows wrap to the screen width


#: the stable CSS class of each control (the same in every language): kafkasim-<name>
CONTROL_CLASSES = ("time", "play", "speed", "kind", "jump", "back", "step", "run", "broker",
                   "crash", "restart", "pause", "pause-ms", "cut", "peer", "heal", "produce",
                   "value", "topic", "partition", "isr", "messages")


def _named(widget, name: str):
    """``widget`` with the CSS class ``kafkasim-<name>`` (``CONTROL_CLASSES``)."""
    assert name in CONTROL_CLASSES, name
    widget.add_class(f"kafkasim-{name}")
    return widget


def _button(name: str, label: str, tooltip: str, callback, style: str = "") -> w.Button:
    b = w.Button(description=label, tooltip=tooltip, button_style=style,
                 layout=w.Layout(width="auto"))
    b.on_click(lambda _b: callback())
    return _named(b, name)


class PlayerUI:
    """Slider + Play + step/run, fault buttons, figure and readout for one ``Player``."""

    def __init__(self, player) -> None:
        self.p = player
        c = player.cluster
        brokers = sorted(c.brokers)
        nodes = brokers + ["zookeeper"]
        self.title = w.HTML()
        # time
        self.slider = w.IntSlider(value=player.now, min=player.start_ms,
                                  max=max(player.horizon, player.start_ms + 1),
                                  description=tr("time (ms)"), continuous_update=False,
                                  style=_WIDE, layout=w.Layout(flex="1 1 320px",
                                                               min_width="240px"))
        _named(self.slider, "time").observe(self._on_slider, names="value")
        self.play = w.Play(value=0, min=0, max=10**9, step=1, interval=PLAY_INTERVAL_MS,
                           show_repeat=False, description=tr("play"))
        _named(self.play, "play").observe(self._on_play, names="value")
        self.speed = w.Dropdown(options=_speeds(player.tick_ms), value=player.tick_ms,
                                description=tr("sim time per tick"), style=_WIDE,
                                layout=w.Layout(width="220px"))
        _named(self.speed, "speed").observe(self._on_speed, names="value")
        self.timeline = w.HTML(layout=w.Layout(width="100%"))
        kinds = player.event_kinds()
        self.kind = _named(w.Dropdown(options=kinds, value=_first_kind(kinds),
                                      description=tr("next"), layout=w.Layout(width="200px")),
                           "kind")
        self.jump = _button("jump", tr("jump ▶"),
                            tr("seek to the next trace event of the chosen kind"),
                            self._guard(self._jump))
        moves = [
            _button("back", tr("◀ back"), tr("seek one tick back"), self._guard(self._back)),
            _button("step", tr("step ▶"), tr("run the next event (one message or timer)"),
                    self._guard(player.step)),
            _button("run", tr("run ▶▶"), tr("run one tick of simulated time"),
                    self._guard(player.play_tick)),
        ]
        # faults
        self.broker = _named(w.Dropdown(options=brokers, value=brokers[0],
                                        description=tr("broker"),
                                        layout=w.Layout(width="140px")), "broker")
        self.pause_ms = _named(w.BoundedIntText(value=10000, min=1, max=10**7, step=1000,
                                                description=tr("for (ms)"), style=_WIDE,
                                                layout=w.Layout(width="150px")), "pause-ms")
        self.peer = _named(w.Dropdown(options=nodes, value=nodes[1 % len(nodes)],
                                      description="↔", style=_WIDE,
                                      layout=w.Layout(width="140px")), "peer")
        self.value = _named(w.Text(value="", placeholder=tr("value (empty: r<id>)"),
                                   layout=w.Layout(width="170px")), "value")
        broker = self.broker
        faults = [
            broker,
            _button("crash", tr("crash"), tr("kill -9 the broker"),
                    self._guard(lambda: player.crash(broker.value)), "danger"),
            _button("restart", tr("restart"),
                    tr("start a stopped broker (crash and start a running one)"),
                    self._guard(lambda: player.restart(broker.value)), "success"),
            _button("pause", tr("pause"), tr("stall the broker (a long GC pause)"),
                    self._guard(lambda: player.pause_broker(broker.value, self.pause_ms.value)),
                    "warning"),
            self.pause_ms,
            _button("cut", tr("cut"),
                    tr("cut the network link between the broker and the node on the right"),
                    self._guard(lambda: player.cut(broker.value, self.peer.value)), "warning"),
            self.peer,
            _button("heal", tr("heal"), tr("heal every network fault"), self._guard(player.heal),
                    "success"),
        ]
        produce = [
            _button("produce", tr("produce"),
                    tr("send one record (acks=all) to the shown partition"),
                    self._guard(lambda: player.produce(self.value.value or None)), "info"),
            self.value,
        ]
        # what is shown
        topics = c.topics.names()
        self.topic = _named(w.Dropdown(options=topics, value=player.topic,
                                       description=tr("topic"),
                                       layout=w.Layout(width="200px")), "topic")
        self.partition = _named(w.Dropdown(options=self._partitions(player.topic),
                                           value=player.partition if player.topic else None,
                                           description=tr("partition"), style=_WIDE,
                                           layout=w.Layout(width="140px")), "partition")
        self.topic.observe(self._on_topic, names="value")
        self.partition.observe(self._on_partition, names="value")
        self.isr = _named(w.Checkbox(value=player.show_isr, description=tr("ISR timeline"),
                                     indent=False, layout=w.Layout(width="130px")), "isr")
        self.isr.observe(self._on_isr, names="value")
        self.image = w.Image(format="png", layout=w.Layout(max_width="100%"))
        self.isr_image = w.Image(format="png", layout=w.Layout(max_width="100%"))
        self.readout = w.HTML()
        self.status = w.HTML()
        # KRaft mode: the controller quorum / broker fencing panel (none in ZooKeeper mode)
        self.quorum_image = None
        if getattr(player.cluster, "kraft", None) is not None:
            self.quorum_image = w.Image(format="png", layout=w.Layout(max_width="100%"))
        self.notice = w.HTML()
        self.flight = w.HTML(layout=w.Layout(max_width="100%"))
        self.messages = _named(w.Checkbox(value=player.show_messages,
                                          description=tr("messages in flight"), indent=False,
                                          layout=w.Layout(width="170px")), "messages")
        self.messages.observe(self._on_messages, names="value")
        from kafkasim.viz import style
        from kafkasim.widgets._tiles import TileRow

        # one tile per broker: click to crash / restart it (Player.toggle_broker)
        self.tiles = TileRow(lambda b: self._guard(lambda: player.toggle_broker(b))())
        projector = [w.HTML(style.PROJECTOR_CSS)] if style.PRESENTATION else []
        self.box = w.VBox([
            *projector,
            self.title,
            w.HBox([self.play, self.speed, self.slider, self.kind, self.jump],
                   layout=w.Layout(**_ROW)),
            self.timeline,
            w.HBox(moves + produce + [self.topic, self.partition, self.isr, self.messages],
                   layout=w.Layout(**_ROW)),
            w.HBox(faults, layout=w.Layout(**_ROW)),
            self.tiles.box,
            self.notice,
            self.status,
            self.flight,
            self.image,
            self.isr_image,
            *([self.quorum_image] if self.quorum_image is not None else []),
            self.readout,
        ])
        if style.PRESENTATION:
            self.box.add_class("kafkasim-projector")

    # -- callbacks: each calls one Player method ----------------------------------------------
    def _guard(self, fn):
        def call():
            try:
                fn()
            except (ValueError, RuntimeError) as exc:   # ClusterError is a ValueError
                self.p.status = str(exc)
                self.status.value = f"<span style='color:#c00'>{exc}</span>"
        return call

    def _jump(self) -> None:
        if self.kind.value is not None:
            self.p.next_event(self.kind.value)
            if self.p.status:           # nothing later: say so (refresh cleared the status)
                self.status.value = f"<span style='color:#555'>{self.p.status}</span>"

    def _back(self) -> None:
        self.p.seek(self.p.now - self.p.tick_ms)

    def _on_slider(self, change) -> None:
        if not self.p._syncing:
            self._guard(lambda: self.p.seek(change["new"]))()

    def _on_play(self, change) -> None:
        # Stop resets the Play value to 0: only forward ticks run the simulation
        if not self.p._syncing and change["new"] > change["old"]:
            self._guard(self.p.play_tick)()

    def _on_speed(self, change) -> None:
        self.p.tick_ms = change["new"]

    def _on_topic(self, change) -> None:
        if not self.p._syncing:
            self._guard(lambda: self.p.select(change["new"], 0))()

    def _on_partition(self, change) -> None:
        if not self.p._syncing and change["new"] is not None:
            self._guard(lambda: self.p.select(self.p.topic, change["new"]))()

    def _on_messages(self, change) -> None:
        self.p.show_messages = bool(change["new"])
        self.refresh()

    def _on_isr(self, change) -> None:
        self.p.show_isr = change["new"]
        self.refresh()

    def _partitions(self, topic):
        return list(range(self.p.cluster.topics.partition_count(topic))) if topic else []

    # -- view ------------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Bring every view up to date with the player (called after each Player method)."""
        p = self.p
        p._syncing = True
        try:
            self.slider.max = max(p.horizon, p.start_ms + 1, self.slider.min)
            self.slider.value = p.now
            self.slider.max = max(p.horizon, p.start_ms + 1)
            kinds = p.event_kinds()
            if list(self.kind.options) != kinds:
                keep = self.kind.value if self.kind.value in kinds else _first_kind(kinds)
                self.kind.options = kinds
                self.kind.value = keep
            topics = p.cluster.topics.names()
            if list(self.topic.options) != topics:
                self.topic.options = topics
            if p.topic is not None and p.topic in topics:   # (not created yet at this time)
                self.topic.value = p.topic
                parts = self._partitions(p.topic)
                if list(self.partition.options) != parts:
                    self.partition.options = parts
                self.partition.value = p.partition
        finally:
            p._syncing = False
        self.title.value = (f"<b>t = {p.now:,} ms</b> &nbsp; "
                            + tr("recorded to {horizon} ms", horizon=f"{p.horizon:,}") + " · "
                            + tr("{n} action(s) on this branch", n=len(p.history.actions)))
        self.timeline.value = p.timeline_html()
        self.tiles.update(p.broker_tiles())
        if p.show_messages:
            self.flight.value = p.flight_html()
            self.flight.layout.display = None
        else:
            self.flight.layout.display = "none"
        self.image.value = p.png()
        isr = p.isr_png() if p.show_isr else None
        if isr is not None:
            self.isr_image.value = isr
            self.isr_image.layout.display = None
        else:
            self.isr_image.layout.display = "none"
        if self.quorum_image is not None:
            self.quorum_image.value = p.quorum_png()
        self.readout.value = pre(p.readout_text())
        self.notice.value = "" if not p.notice else (
            "<div style='border-left:4px solid #CCBB44;background:#fbf6dc;padding:4px 8px'>"
            f"<b>{html.escape(tr('Script dropped'))}</b>: {html.escape(p.notice)}</div>")
        self.status.value = ""
        p.status = ""


def _first_kind(kinds):
    """The kind the jump dropdown starts on: an ISR change if there is one."""
    for k in ("isr", "become_leader", "broker_crash", "fault"):
        if k in kinds:
            return k
    return kinds[0] if kinds else None


def _speeds(current: int):
    opts = list(SPEEDS)
    if current not in [v for _l, v in opts]:
        opts.append((f"{current} ms", current))
        opts.sort(key=lambda o: o[1])
    return opts
