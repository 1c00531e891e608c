"""The front-end of ``Player``: its Stage plus one row of controls; every callback calls one
public Player method.

The picture is the player's ``Stage`` (``kafkasim.widgets.stage``): nodes, logs, the messages in
flight animated in the browser, narration, play / step / scrub over a window, the branch's
timeline; a click on a broker crashes or restarts it, a shift-click pauses it, a drag cuts a
link, a click on a message drops it, all through the Player's methods. Above it one row: the
time slider over the whole recorded branch, "jump to the next event of a kind" (the button names
that event and its time before the click), the topic and partition shown. Below it, one row of
toggles opens one section at a time: the readout (``kafka-topics --describe``, consumers,
invariants, actions), the ISR timeline and, in KRaft mode, the controller quorum, drawn only
while open. The whole player fits
one 1280x720 screen with JupyterLab's sidebar open; it carries no image until one is drawn.

Labels, tooltips and notices speak the course's language (``_render.tr``: Korean in a Korean
notebook, from kafkasim/course/locale/ko.po); each control also carries a stable CSS class
(``kafkasim-time``, ``kafkasim-jump``, ...: ``CONTROL_CLASSES``) by which browser tests find it in
any language. Broker ids, Kafka's names and config keys stay as they are.
"""

from __future__ import annotations

import html
from bisect import bisect_right

import ipywidgets as w

from kafkasim.widgets._event_kinds import kind_options
from kafkasim.widgets._render import img_tag, pre
from kafkasim.widgets._render import tr as _tr

#: gettext msgctxt of this module's messages: its one-word labels ("broker", "topic") are not
#: the course's table headers of the same word (kafkasim.course.i18n)
I18N_CONTEXT = "kafkasim.player"


def tr(message: str, /, **fields) -> str:
    """``_render.tr`` under this module's ``I18N_CONTEXT``."""
    return _tr(message, _context=I18N_CONTEXT, **fields)


_WIDE = {"description_width": "initial"}
_ROW = {"flex_flow": "row wrap", "align_items": "center"}   # rows wrap to the screen width

#: the stable CSS class of each control (the same in every language): kafkasim-<name>; the
#: stage's own controls carry ks-<name> classes (stage.js: ks-play, ks-next, ks-broker...)
CONTROL_CLASSES = ("time", "kind", "jump", "topic", "partition", "details", "player")

#: the closed sections under the stage, in order (the quorum one only in KRaft mode)
SECTIONS = ("readout", "isr", "quorum")


def _named(widget, name: str):
    """``widget`` with the CSS class ``kafkasim-<name>`` (``CONTROL_CLASSES``)."""
    assert name in CONTROL_CLASSES, name
    widget.add_class(f"kafkasim-{name}")
    return widget


class PlayerUI:
    """The player's Stage under one row of controls, with closed details below (module
    docstring)."""

    def __init__(self, player) -> None:
        from kafkasim.viz import style

        self.p = player
        big = bool(style.PRESENTATION)
        self.stage = player.stage
        self.slider = w.IntSlider(value=player.now, min=player.start_ms,
                                  max=max(player.horizon, player.start_ms + 1),
                                  description=tr("time (ms)"), continuous_update=False,
                                  style=_WIDE, layout=w.Layout(flex="1 1 240px",
                                                               min_width="200px"))
        _named(self.slider, "time").observe(self._on_slider, names="value")
        kinds = player.event_kinds()
        self.kind = _named(w.Dropdown(options=kind_options(kinds), value=_first_kind(kinds),
                                      description=tr("next"), style=_WIDE,
                                      layout=w.Layout(width="auto", min_width="230px")),
                           "kind")
        self.kind.observe(lambda _c: self._name_jump(), names="value")
        self.jump = _named(w.Button(description=tr("jump ▶"), layout=w.Layout(width="auto")),
                           "jump")
        self.jump.on_click(lambda _b: self._guard(self._jump)())
        topics = player.cluster.topics.names()
        self.topic = _named(w.Dropdown(options=topics, value=player.topic,
                                       description=tr("topic"), style=_WIDE,
                                       layout=w.Layout(width="auto")), "topic")
        self.partition = _named(w.Dropdown(options=self._partitions(player.topic),
                                           value=player.partition if player.topic else None,
                                           description=tr("partition"), style=_WIDE,
                                           layout=w.Layout(width="auto")), "partition")
        self.topic.observe(self._on_topic, names="value")
        self.partition.observe(self._on_partition, names="value")
        self.status = w.HTML()
        self.notice = w.HTML()
        titles = {"readout": tr("kafka-topics --describe, invariants, actions"),
                  "isr": tr("ISR timeline")}
        if getattr(player.cluster, "kraft", None) is not None:
            titles["quorum"] = tr("controller quorum and fencing")
        self.titles = titles
        self.opened: str | None = None     # the one section shown under the stage, if any
        self.toggles = {}
        for name, title in titles.items():
            b = w.ToggleButton(value=False, description=title, layout=w.Layout(width="auto"))
            b.observe(lambda c, n=name: self._on_toggle(n, c["new"]), names="value")
            self.toggles[name] = b
        self.section = w.HTML()
        self.details = _named(w.VBox([w.HBox(list(self.toggles.values()),
                                             layout=w.Layout(**_ROW)), self.section]),
                              "details")
        projector = [w.HTML(style.PROJECTOR_CSS)] if big else []
        self.box = _named(w.VBox([
            *projector,
            w.HBox([self.slider, self.kind, self.jump, self.topic, self.partition],
                   layout=w.Layout(**_ROW)),
            self.status,
            self.notice,
            self.stage,
            self.details,
        ]), "player")
        if big:
            self.box.add_class("kafkasim-projector")

    # -- callbacks: each calls one Player method ----------------------------------------------
    def _guard(self, fn):
        def call():
            try:
                fn()
            except (ValueError, RuntimeError) as exc:   # ClusterError is a ValueError
                self.p.status = str(exc)
                self.status.value = f"<span style='color:#c00'>{html.escape(str(exc))}</span>"
        return call

    def _jump(self) -> None:
        if self.kind.value is not None:
            self.p.next_event(self.kind.value)
            if self.p.status:           # nothing later: say so (refresh cleared the status)
                self.status.value = (f"<span style='color:#555'>{html.escape(self.p.status)}"
                                     "</span>")

    def _on_slider(self, change) -> None:
        if not self.p._syncing:
            self._guard(lambda: self.p.seek(change["new"]))()

    def _on_topic(self, change) -> None:
        if not self.p._syncing:
            self._guard(lambda: self.p.select(change["new"], 0))()

    def _on_partition(self, change) -> None:
        if not self.p._syncing and change["new"] is not None:
            self._guard(lambda: self.p.select(self.p.topic, change["new"]))()

    def _on_toggle(self, name: str, on: bool) -> None:
        if not self.p._syncing:
            self.show(name if on else None)

    def _partitions(self, topic):
        return list(range(self.p.cluster.topics.partition_count(topic))) if topic else []

    # -- view ------------------------------------------------------------------------------------
    def _name_jump(self) -> None:
        """The jump button says where it goes before the click: the next event of the chosen
        kind and its time (or that there is none on this branch)."""
        kind = self.kind.value
        t = None if kind is None else next_event_time(self.p, kind)
        if t is None:
            self.jump.description = tr("jump ▶")
            self.jump.tooltip = tr("no {kind} event after now on this branch", kind=kind)
            self.jump.disabled = True
        else:
            self.jump.description = tr("jump ▶ {t} ms", t=f"{t:,}")
            self.jump.tooltip = tr("seek to the next {kind} event, at t={t} ms", kind=kind,
                                   t=f"{t:,}")
            self.jump.disabled = False

    def show(self, name: str | None) -> None:
        """Open one section under the stage (``SECTIONS``: "readout", "isr", "quorum"), or
        close them all (None): what a click on its toggle does."""
        if name is not None and name not in self.titles:
            raise ValueError(f"no section {name!r}; choose from {', '.join(self.titles)}")
        self.opened = name
        self.p._syncing = True
        try:
            for n, b in self.toggles.items():
                b.value = n == name
        finally:
            self.p._syncing = False
        self._draw_details()

    def _draw_details(self) -> None:
        """Fill the open section only (the closed ones cost nothing per step)."""
        name, p = self.opened, self.p
        if name is None:
            value = ""
        elif name == "readout":
            value = pre(p.readout_text())
        else:
            data = p.isr_png() if name == "isr" else p.quorum_png()
            value = "" if data is None else img_tag(data, self.titles[name])
        self.section.value = value

    def refresh(self) -> None:
        """Bring every view up to date with the player (called after each Player method; the
        stage refreshes itself, ``Player._changed``)."""
        p = self.p
        p._syncing = True
        try:
            self.slider.max = max(p.horizon, p.start_ms + 1, self.slider.min)
            self.slider.value = p.now
            self.slider.max = max(p.horizon, p.start_ms + 1)
            kinds = p.event_kinds()
            if [value for _label, value in self.kind.options] != kinds:
                keep = self.kind.value if self.kind.value in kinds else _first_kind(kinds)
                self.kind.options = kind_options(kinds)
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
            # one topic, one partition: nothing to choose (a line of the screen saved for the
            # stage in projector mode, where the large controls wrap)
            self.topic.layout.display = "none" if len(self.topic.options) <= 1 else None
            self.partition.layout.display = "none" if len(self.partition.options) <= 1 else None
        finally:
            p._syncing = False
        self._name_jump()
        self._draw_details()
        self.notice.value = "" if not p.notice else (
            "<div style='border-left:4px solid #CCBB44;background:#fbf6dc;padding:4px 8px;"
            f"color:#111'><b>{html.escape(tr('Script dropped'))}</b>: "
            f"{html.escape(p.notice)}</div>")
        self.status.value = ""
        p.status = ""


def next_event_time(player, kind: str) -> int | None:
    """The time of the next trace row of ``kind`` after now on the player's branch (what
    ``Player.next_event`` jumps to), or None."""
    times = KindTimes.of(player).times(kind)
    i = bisect_right(times, player.now)
    return times[i] if i < len(times) else None


class KindTimes:
    """The times of a branch's trace rows, per kind (rows come in time order), kept on the
    player and extended with the rows added since: the jump button names its next event after
    every step, and scanning the rows after now for a rare kind cost up to 150 ms a step on
    notebook 07's scenario (tens of thousands of rows, most of them compressed)."""

    def __init__(self, rows) -> None:
        self.rows = rows
        self.seen = 0
        self.by_kind: dict[str, list[int]] = {}

    @classmethod
    def of(cls, player) -> KindTimes:
        rows = player.history.trace_rows
        index = getattr(player, "_kind_times", None)
        if index is None or index.rows is not rows or len(rows) < index.seen:
            index = player._kind_times = cls(rows)      # a new branch: index it again
        return index

    def times(self, kind: str) -> list[int]:
        rows, n = self.rows, len(self.rows)
        if self.seen < n:
            new = rows if self.seen == 0 else (rows[i] for i in range(self.seen, n))
            for row in new:
                self.by_kind.setdefault(row[1], []).append(row[0])
            self.seen = n
        return self.by_kind.get(kind, [])


def _first_kind(kinds):
    """The kind the jump dropdown starts on: an ISR change if there is one."""
    for k in ("isr", "become_leader", "broker_crash", "fault"):
        if k in kinds:
            return k
    return kinds[0] if kinds else None
