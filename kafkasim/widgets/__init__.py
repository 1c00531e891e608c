"""ipywidgets front-ends over ``kafkasim.viz``: the player and config explorers.

Every widget is a thin view: whatever a slider or button does is a plain method you can call from
a cell (and that pytest and nbval call, since they never render widgets).

    Player(cluster_or_scenario_run, topic=None, partition=0, every_ms=1000)
        .run(ms) .step() .seek(t) .play_tick()       moving in time (History underneath)
        .crash(b) .restart(b) .pause_broker(b, ms)   faults; in the past they fork a new future
        .produce(value) .cut(a, b) .heal()
        .readout() .readout_text() .figure()         what the widget shows
        .widget                                      the ipywidgets box (built on first use)
    Explorer(build, controls, draw) / explore(...)   config controls -> re-run -> redraw
        .update(**values) .figure() .summary() .widget
    with_fallback(widget, text)                      any widget, with text where it cannot show
    Stage(cluster_or_player, topic=None) / player.stage   messages moving between the brokers
        .toggle_broker(b, at_ms) .pause_broker(b) .drop_message(id) .produce() .advance()
        .text() .svg() .window                       what a click does; what it shows

Players and explorers display as the widget plus a still image and readable text
(``_repr_mimebundle_``), which is what a notebook shows before it runs and on GitHub/nbviewer.
"""

from kafkasim.widgets._render import with_fallback
from kafkasim.widgets.explorer import Explorer, explore
from kafkasim.widgets.player import Player

__all__ = ["Explorer", "Player", "Stage", "explore", "with_fallback"]


def __getattr__(name: str):
    """``Stage`` is imported on first use: anywidget costs ~0.1 s to import."""
    if name == "Stage":
        from kafkasim.widgets.stage import Stage

        return Stage
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
