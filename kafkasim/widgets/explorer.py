"""Config explorers: controls labelled with Kafka's config keys, bound to a re-run and a redraw.

    >>> def build(acks="all", min_insync_replicas=2):
    ...     c = Cluster(brokers=3, seed=1)
    ...     c.create_topic("t", 1, 3, config={"min.insync.replicas": min_insync_replicas})
    ...     ...
    ...     return c
    >>> ex = explore(build, {"acks": ["all", "1", "0"], "min.insync.replicas": (1, 3)})
    >>> ex.update(acks="1")         # exactly what moving the "acks" control does
    >>> ex                          # in JupyterLab: the controls, the answer, the figure

Controls follow ``ipywidgets.interact``'s shorthand: a list (or dict label -> value) is a
dropdown, a ``(min, max[, step])`` tuple a slider, a widget is used as it is. They are keyed by
Kafka's names; ``build`` gets them as keyword arguments with dots as underscores
(``min.insync.replicas`` -> ``min_insync_replicas``), and so does ``update``, which also takes
the dotted names (``update(**{"replica.lag.time.max.ms": 10000})``). Every combination of values
is built once (an LRU cache), so moving a control back is instant.

The answer (``summary``'s text) sits right under the controls, so it changes where the learner
is looking; the figure follows it only when ``draw`` draws something: an explorer whose answer
is text alone (a number, a table) shows no image at all, live or in its saved rendering.
"""

from __future__ import annotations

import html
import inspect
import sys
from collections import OrderedDict

from matplotlib.figure import Figure

from kafkasim.viz import style
from kafkasim.widgets._render import img_tag, narrate, png, pre, tr, widget_bundle


def py_name(key: str) -> str:
    """A Kafka config key as a Python name: ``min.insync.replicas`` -> ``min_insync_replicas``."""
    return key.replace(".", "_").replace("-", "_")


# Average advance of a character in JupyterLab's UI font (13 px; 20 px in projector mode),
# generous so that a label or value is never cut; a control is never wider than a 1280 screen
CHAR_PX, CHAR_PX_PROJECTOR, MAX_WIDTH_PX = 8, 13, 1200


def _readout(x, step) -> str:
    """How a slider's readout writes ``x`` (an int slider: ``22000``; a float one: ``0.50``)."""
    return str(x) if isinstance(x, int) and isinstance(step, int) else f"{x:.2f}"


class Control:
    """One control: its Kafka key, allowed values, default, and how to build its widget."""

    def __init__(self, key: str, spec, default=None) -> None:
        self.key = key
        self.name = py_name(key)
        self.spec = spec
        self.widget_given = None
        self.options = None        # [(label, value)] for a dropdown
        self.range = None          # (min, max, step) for a slider
        if isinstance(spec, dict):
            self.options = [(str(k), v) for k, v in spec.items()]
        elif isinstance(spec, list):    # a text value shows in the course language
            self.options = [(narrate(v) if isinstance(v, str) else str(v), v) for v in spec]
        elif isinstance(spec, tuple) and len(spec) in (2, 3) and all(
                isinstance(x, (int, float)) and not isinstance(x, bool) for x in spec):
            lo, hi = spec[0], spec[1]
            step = spec[2] if len(spec) == 3 else (1 if all(isinstance(x, int) for x in spec)
                                                  else (hi - lo) / 100)
            if not lo < hi or step <= 0:
                raise ValueError(f"control {key!r}: a slider needs min < max and step > 0, "
                                 f"got {spec!r}")
            self.range = (lo, hi, step)
        elif hasattr(spec, "observe") and hasattr(spec, "value"):
            self.widget_given = spec
        else:
            raise TypeError(f"control {key!r}: use a list or dict (dropdown), a (min, max[, step]) "
                            f"tuple (slider) or an ipywidgets widget, got {spec!r}")
        if self.options is not None and not self.options:
            raise ValueError(f"control {key!r} has no options")
        if default is None or not self._allows(default):
            default = self._first()
        self.default = default

    def _first(self):
        if self.options is not None:
            return self.options[0][1]
        if self.range is not None:
            return self.range[0]
        return self.widget_given.value

    def _allows(self, value) -> bool:
        if self.options is not None:
            return any(v == value and type(v) is type(value) for _l, v in self.options)
        if self.range is not None:
            return isinstance(value, (int, float)) and not isinstance(value, bool) and \
                self.range[0] <= value <= self.range[1]
        return True

    def check(self, value):
        if not self._allows(value):
            if self.options is not None:
                allowed = ", ".join(repr(v) for _l, v in self.options)
                raise ValueError(f"{self.key}={value!r} is not one of the choices: {allowed}")
            lo, hi, _s = self.range
            raise ValueError(f"{self.key}={value!r} is outside the control's range [{lo}, {hi}]")
        return value

    def shown(self, value) -> str:
        """``value`` as the control shows it: a dropdown's label where it is not the value's own
        text (a translated choice: ``랙 3개 x 2``), else the value's repr."""
        if isinstance(self.spec, list):       # (a dict's labels are the caller's own)
            for label, v in self.options:
                if v == value and type(v) is type(value) and label != str(v):
                    return label
        return repr(value)

    def width_px(self, projector: bool = False) -> int:
        """How wide the control must be so that neither its label (the Kafka key) nor its
        longest value is cut: 420 px at least, more for long keys or values, and in projector
        mode (20 px type, ``viz.style.PROJECTOR_CSS``) more again."""
        char, least = (CHAR_PX_PROJECTOR, 560) if projector else (CHAR_PX, 420)
        if self.options is not None:
            value = max(len(label) for label, _v in self.options) * char + 40   # + the arrow
        else:     # the track, then the readout of the widest value
            lo, hi, step = self.range
            digits = max(len(_readout(x, step)) for x in (lo, hi))
            value = 180 + digits * char + 24
        return min(MAX_WIDTH_PX, max(least, len(self.key) * char + 24 + value))

    def make_widget(self, value, continuous_update: bool, projector: bool = False):
        import ipywidgets as w

        wide = {"description_width": "initial"}
        layout = w.Layout(width=f"{self.width_px(projector)}px", max_width="100%")
        if self.widget_given is not None:
            wid = self.widget_given
            if not getattr(wid, "description", ""):
                wid.description = self.key
            wid.value = value
            return wid
        if self.options is not None:
            return w.Dropdown(options=self.options, value=value, description=self.key,
                              style=wide, layout=layout)
        lo, hi, step = self.range
        cls = w.IntSlider if all(isinstance(x, int) for x in self.range) else w.FloatSlider
        return cls(value=value, min=lo, max=hi, step=step, description=self.key, style=wide,
                   layout=layout, continuous_update=continuous_update)


class Explorer:
    """Controls -> ``build(**values)`` -> ``draw(result, fig)`` and ``summary(result)``.

    ``draw`` draws into the (reused, cleared) Figure it is given, or returns a Figure of its own;
    by default a Cluster's (or ScenarioRun's) first topic is drawn with ``viz.replica_logs``.
    A ``draw`` that leaves the Figure empty (nothing drawn: ``drawn``) draws nothing: then there is
    no figure (``figure()`` is None, ``png()`` is empty) and the widget shows no image.
    ``summary`` returns the text shown right under the controls (default:
    ``kafka-topics --describe``).
    """

    def __init__(self, build, controls: dict, draw=None, *, summary=None,
                 values: dict | None = None, cache_size: int = 32,
                 continuous_update: bool = False, figsize=(13, 4.5),
                 precompute: bool = False) -> None:
        if not controls:
            raise ValueError("an explorer needs at least one control")
        self.precompute = precompute
        self.build = build
        self.draw = draw
        self.summarize = summary
        self.cache_size = cache_size
        self.continuous_update = continuous_update
        self.figsize = figsize
        defaults = _defaults(build)
        self.controls = [Control(k, spec, defaults.get(py_name(k))) for k, spec in
                         controls.items()]
        self._by_name = {}
        for ctl in self.controls:
            self._by_name[ctl.key] = ctl
            self._by_name[ctl.name] = ctl
        self._values = {ctl.key: ctl.default for ctl in self.controls}
        self._cache: OrderedDict[tuple, dict] = OrderedDict()
        self.builds = 0       # calls of ``build`` (cache misses)
        self.hits = 0         # updates answered from the cache
        self._fig = None
        self._ui = None
        self._syncing = False
        if values:
            self._set(values)

    def __repr__(self) -> str:
        vals = ", ".join(f"{k}={v!r}" for k, v in self._values.items())
        return f"Explorer({vals}; {self.builds} build(s), {self.hits} cache hit(s))"

    # -- values and results -------------------------------------------------------------------
    @property
    def values(self) -> dict:
        """The current value of each control, by Kafka key."""
        return dict(self._values)

    @property
    def kwargs(self) -> dict:
        """The current values as ``build`` receives them (Python names)."""
        return {ctl.name: self._values[ctl.key] for ctl in self.controls}

    def _key(self) -> tuple:
        return tuple((ctl.key, self._values[ctl.key]) for ctl in self.controls)

    def _set(self, values: dict) -> None:
        new = dict(self._values)
        for k, v in values.items():
            ctl = self._by_name.get(k)
            if ctl is None:
                known = ", ".join(c.key for c in self.controls)
                raise KeyError(f"no control named {k!r}; controls: {known}")
            new[ctl.key] = ctl.check(v)
        self._values = new

    def _entry(self) -> dict:
        key = self._key()
        entry = self._cache.get(key)
        if entry is not None:
            self._cache.move_to_end(key)
            return entry
        result = self.build(**self.kwargs)
        self.builds += 1
        entry = {"result": result, "png": None, "summary": None}
        self._cache[key] = entry
        while len(self._cache) > self.cache_size:
            self._cache.popitem(last=False)
        return entry

    @property
    def result(self):
        """What ``build`` returned for the current values (built now if not cached)."""
        return self._entry()["result"]

    def update(self, **values):
        """Set some controls (Kafka keys or Python names) and re-run; returns the result.

        This is what moving a control does: cached values come back without re-running. When
        ``build`` refuses the values (raises ValueError: an impossible combination), the
        controls go back to the values before and the error propagates (the widget shows it)."""
        before = self._values
        self._set(values)
        cached = self._key() in self._cache
        try:
            result = self._entry()["result"]
        except ValueError:
            self._values = before
            raise
        self.hits += cached
        if self._ui is not None:
            self._refresh()
        return result

    # -- drawing --------------------------------------------------------------------------------
    def figure(self) -> Figure | None:
        """Draw the current result (one Figure, cleared and redrawn in place); None when
        ``draw`` drew nothing (a text-only answer: no blank image)."""
        result = self.result
        if self._fig is None:
            self._fig = style.new_figure(*self.figsize)
        fig = self._fig
        fig.clear()
        out = (self.draw or _default_draw)(result, fig)
        if isinstance(out, Figure) and out is not fig:
            if "matplotlib.pyplot" in sys.modules:    # a pyplot figure: do not leak it
                sys.modules["matplotlib.pyplot"].close(out)
            fig = out
        return fig if drawn(fig) else None

    def summary(self) -> str:
        """Text for the current result (``summary(result)``; default: describe output)."""
        entry = self._entry()
        if entry["summary"] is None:
            fn = self.summarize or _default_summary
            entry["summary"] = str(fn(entry["result"]) or "")
        return entry["summary"]

    def png(self) -> bytes:
        """The current figure as PNG (cached per combination of values); empty bytes when
        there is no figure (``figure()`` is None)."""
        entry = self._entry()
        if entry["png"] is None:
            fig = self.figure()
            entry["png"] = png(fig) if fig is not None else b""
        return entry["png"]

    def combinations(self) -> list[dict]:
        """Every combination of the controls' values (dropdowns only), in control order."""
        import itertools

        if any(ctl.options is None for ctl in self.controls):
            raise ValueError("precompute needs dropdowns only: a slider has too many values")
        names = [ctl.key for ctl in self.controls]
        return [dict(zip(names, vals, strict=True)) for vals in
                itertools.product(*[[v for _l, v in ctl.options] for ctl in self.controls])]

    def render_all(self) -> int:
        """Build and render every combination now (``precompute=True`` does this when the
        widget is built), so that every later change is a cache hit; returns how many. Values
        ``build`` refuses are skipped (the widget says so when they are chosen)."""
        combos = self.combinations()
        if len(combos) > self.cache_size:
            raise ValueError(f"{len(combos)} combinations do not fit the cache "
                             f"(cache_size={self.cache_size})")
        current, done = self._values, 0
        try:
            for values in combos:
                self._values = values
                try:
                    self.png()
                    self.summary()
                    done += 1
                except ValueError:
                    continue
        finally:
            self._values = current
        return done

    # -- the widget -----------------------------------------------------------------------------
    @property
    def widget(self):
        """Controls, then the answer (status and summary) right under them, then the figure
        when there is one (ipywidgets; built on first use). In projector mode
        (``viz.style.set_presentation``) the controls are in large type, each as wide as its
        label and its longest value need."""
        if self._ui is None:
            import ipywidgets as w

            projector = style.PRESENTATION
            ctls = {}
            for ctl in self.controls:
                wid = ctl.make_widget(self._values[ctl.key], self.continuous_update, projector)
                wid.observe(self._observer(ctl.key), names="value")
                ctls[ctl.key] = wid
            self._ui = {
                "controls": ctls,
                "image": None,               # made when there is a first figure to show
                "summary": w.HTML(),
                "status": w.HTML(),
                "head": [w.HTML(style.PROJECTOR_CSS)] if projector else [],
            }
            self._ui["box"] = box = w.VBox(self._children(b""))
            box.add_class("kafkasim-explorer")
            if projector:
                box.add_class("kafkasim-projector")
            if self.precompute:
                self.render_all()
            self._refresh()
        return self._ui["box"]

    def _children(self, data: bytes) -> list:
        """The box's rows: CSS (projector), controls, status, summary, the figure if any."""
        import ipywidgets as w

        ui = self._ui
        if "controls_box" not in ui:
            ui["controls_box"] = w.VBox(list(ui["controls"].values()))
        rows = [*ui["head"], ui["controls_box"], ui["status"], ui["summary"]]
        if data:
            if ui["image"] is None:
                ui["image"] = w.Image(format="png", layout=w.Layout(max_width="100%"))
            ui["image"].value = data
            rows.append(ui["image"])
        return rows

    def _observer(self, key: str):
        def on_change(change):
            if self._syncing:
                return
            try:
                self.update(**{key: change["new"]})
            except (ValueError, KeyError, RuntimeError) as exc:
                self._sync_controls()      # the refused value snaps back
                self._ui["status"].value = (
                    "<span style='color:#c00'>"
                    + html.escape(tr("refused: {error}", error=exc)) + "</span>")
        return on_change

    def _sync_controls(self) -> None:
        self._syncing = True
        try:
            for key, wid in self._ui["controls"].items():
                if wid.value != self._values[key]:
                    wid.value = self._values[key]
        finally:
            self._syncing = False

    def _refresh(self) -> None:
        ui = self._ui
        self._sync_controls()
        ui["status"].value = ""
        text = self.summary()
        ui["summary"].value = pre(text) if text else ""
        rows = self._children(self.png())
        if list(ui["box"].children) != rows:     # the figure comes or goes with the values
            ui["box"].children = rows

    def _repr_mimebundle_(self, include=None, exclude=None, **kwargs) -> dict:
        """The widget, with a still image and the summary as fallbacks (``widget_bundle``)."""
        title = getattr(self, "title", None)
        vals = ", ".join(f"{ctl.key}={ctl.shown(self._values[ctl.key])}" for ctl in self.controls)
        summary = self.summary()
        text = "\n".join(x for x in (title, tr("Explorer: {vals}", vals=vals), summary) if x)
        data = self.png()
        static = ((f"<b>{html.escape(title)}</b><br>" if title else "")
                  + f"<div><code>{html.escape(vals)}</code></div>"
                  + (pre(summary) if summary else "")
                  + (img_tag(data, title or tr("explorer figure")) if data else ""))
        return widget_bundle(self.widget, text, static)


def explore(build, controls: dict, draw=None, **kw) -> Explorer:
    """``Explorer(build, controls, draw, **kw)``: bind Kafka config controls to a re-run."""
    return Explorer(build, controls, draw, **kw)


def drawn(fig: Figure) -> bool:
    """Whether ``fig`` has anything drawn in it: an axes that shows something, or artists
    placed on the figure itself. A ``draw`` that left the Figure empty, or only added an axes
    switched off with nothing in it, drew nothing (it would be a blank image)."""
    return bool(any(_axes_drawn(ax) for ax in fig.axes) or fig.texts or fig.images or fig.lines
                or fig.patches or fig.artists or fig.legends or getattr(fig, "subfigs", None))


def _axes_drawn(ax) -> bool:
    return bool(ax.axison or ax.has_data() or ax.texts or ax.tables or ax.artists or ax.images
                or ax.get_legend() is not None or ax.get_title())


def _defaults(fn) -> dict:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return {}
    return {n: p.default for n, p in sig.parameters.items()
            if p.default is not inspect.Parameter.empty}


def _cluster_of(result):
    from kafkasim.runtime.cluster import Cluster

    if isinstance(result, Cluster):
        return result
    c = getattr(result, "cluster", None)
    return c if isinstance(c, Cluster) else None


def _default_draw(result, fig):
    from kafkasim import viz

    c = _cluster_of(result)
    ax = fig.add_subplot()
    if c is None or not c.topics.names():
        ax.set_axis_off()
        ax.text(0.5, 0.5, tr("pass draw=... to draw this result"), ha="center", va="center",
                transform=ax.transAxes, fontsize=style.FONT)
        return fig
    viz.replica_logs(c, c.topics.names()[0], 0, ax=ax)
    return fig


def _default_summary(result) -> str:
    c = _cluster_of(result)
    if c is None:
        return repr(result)
    return f"t = {c.now:,} ms, seed {c.engine.seed}\n{c.describe()}"
