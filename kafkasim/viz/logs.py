"""Replica logs side by side: one row per replica, one cell per record, HW and LEO marked.

Offsets run along x and record ``o`` fills [o, o+1), so a marker at x = N sits on the boundary
*before* offset N. That is what Kafka's exclusive offsets mean: "HW=7" is the first offset not yet
committed (offsets 0..6 are), "LEO=10" the offset the next append gets.
"""

from __future__ import annotations

from dataclasses import dataclass

from matplotlib.collections import PolyCollection
from matplotlib.patches import Patch
from matplotlib.ticker import MaxNLocator

from kafkasim.viz import style
from kafkasim.viz.style import tr

I18N_CONTEXT = "kafkasim.viz"   # gettext msgctxt of the words drawn (style.tr)


@dataclass(frozen=True)
class ReplicaRow:
    """One replica's log as drawn: its role, its offsets and the records in the window."""

    broker: int
    label: str                 # "broker 1 (leader, ISR)"
    state: str                 # Broker.state: running / stopped / shutting down
    paused: bool
    is_leader: bool
    in_isr: bool
    hosted: bool               # False: the broker has no log for this partition (yet)
    log_start_offset: int
    log_end_offset: int        # LEO (exclusive)
    high_watermark: int        # this replica's own HW (exclusive)
    offsets: tuple[int, ...]   # offsets of the records in the window
    epochs: tuple[int, ...]    # their leader epochs
    values: tuple[str, ...]    # their values (the record registry's text)

    @property
    def greyed(self) -> bool:
        return self.state == "stopped"


@dataclass(frozen=True)
class ReplicaLogView:
    """What ``replica_logs`` draws: the partition state, the offset window and one row per
    replica (in assignment order, preferred leader first)."""

    topic: str
    partition: int
    leader: int
    leader_epoch: int
    isr: tuple[int, ...]
    committed: int | None      # the leader's HW: offsets below it are committed (None: unknown)
    start: int                 # window [start, end) of offsets shown
    end: int
    rows: tuple[ReplicaRow, ...]


def row_label(broker: int, *, is_leader: bool, in_isr: bool, state: str, paused: bool,
              hosted: bool = True) -> str:
    """"broker 1 (leader, ISR)", "broker 3 (follower, out of ISR, stopped)"..."""
    parts = ["leader" if is_leader else "follower", "ISR" if in_isr else "out of ISR"]
    if state != "running":
        parts.append(state)
    elif paused:
        parts.append("paused")
    if not hosted:
        parts.append("no log")
    return f"broker {broker} ({', '.join(parts)})"


def replica_log_rows(cluster, topic: str, partition: int = 0, *, max_records: int = 60,
                     start_offset: int | None = None) -> ReplicaLogView:
    """The data behind ``replica_logs``: at most ``max_records`` offsets, by default the last
    ones (ending at the largest LEO), or from ``start_offset`` on."""
    if max_records < 1:
        raise ValueError(f"max_records must be >= 1, got {max_records}")
    st = cluster.inspect.partition_state(topic, partition)
    leader, isr = st["leader"], tuple(st["isr"])
    logs = {}
    for b in st["replicas"]:
        log = cluster.brokers[b].logs.get((topic, partition))
        if log is not None:
            logs[b] = log
    if logs:
        lowest = min(log.log_start_offset for log in logs.values())
        highest = max(log.log_end_offset for log in logs.values())
    else:
        lowest = highest = 0
    if start_offset is None:
        start = max(lowest, highest - max_records)
        end = highest
    else:
        start = max(0, start_offset)
        end = max(start, min(highest, start + max_records))
    leader_log = logs.get(leader)
    committed = leader_log.high_watermark if leader_log is not None else None
    values = cluster.records.value
    now = cluster.now
    rows = []
    for b in st["replicas"]:
        broker = cluster.brokers[b]
        log = logs.get(b)
        paused = broker.paused_until > now
        if log is None:
            offsets, epochs, texts = (), (), ()
            ls = leo = hw = 0
        else:
            ls, leo, hw = log.log_start_offset, log.log_end_offset, log.high_watermark
            lo, hi = max(start, ls), min(end, leo)
            if hi > lo:
                offsets = tuple(range(lo, hi))
                epochs = tuple(log.epochs[lo - ls:hi - ls])
                texts = tuple(str(values(r)) for r in log.ids[lo - ls:hi - ls])
            else:
                offsets, epochs, texts = (), (), ()
        rows.append(ReplicaRow(
            broker=b,
            label=row_label(b, is_leader=b == leader, in_isr=b in isr, state=broker.state,
                            paused=paused, hosted=log is not None),
            state=broker.state, paused=paused, is_leader=b == leader, in_isr=b in isr,
            hosted=log is not None, log_start_offset=ls, log_end_offset=leo, high_watermark=hw,
            offsets=offsets, epochs=epochs, values=texts))
    return ReplicaLogView(topic, partition, leader, st["leader_epoch"], isr, committed,
                          start, end, tuple(rows))


def _cell_text(value: str, offset: int, cell_pt: float, font_pt: float) -> str:
    """The record's value if it fits in the cell, else its offset, else nothing."""
    room = (cell_pt - 6) / (0.65 * font_pt)   # characters that fit, ~0.65 em each, 3 pt margins
    if len(value) <= room:
        return value
    text = str(offset)
    return text if len(text) <= room else ""


def replica_logs(cluster, topic: str, partition: int = 0, *, max_records: int = 60,
                 start_offset: int | None = None, ax=None):
    """Draw the replicas' logs side by side (records coloured by leader epoch, HW/LEO markers,
    committed offsets shaded). Returns the Figure.

    With ``ax``, draws into those axes, replacing what they showed but keeping the axes and
    their ticks: the fast way for a widget to redraw after every simulation step."""
    view = replica_log_rows(cluster, topic, partition, max_records=max_records,
                            start_offset=start_offset)
    n = len(view.rows)
    own = ax is None
    ax = _prepare_axes(n, ax)
    fig = ax.figure
    lo, hi = view.start, max(view.end, view.start + 1)

    # committed offsets (below the leader's HW) get a shaded background
    if view.committed is not None and view.committed > lo:
        ax.axvspan(lo, min(view.committed, hi), color=style.COMMITTED, zorder=0,
                   gid="committed")

    # an estimate of one cell's width in points, to decide what text fits inside it
    cell_pt = ax.get_position().width * fig.get_figwidth() * 72 / (hi - lo)
    epochs_seen: set[int] = set()
    for i, row in enumerate(view.rows):
        _draw_row(ax, row, n - 1 - i, view.committed, cell_pt, lo, hi, epochs_seen)
    _style_axes(ax, view, lo, hi, cell_pt)
    _add_legend(ax, epochs_seen, own)
    return fig


def _prepare_axes(n: int, ax):
    """New axes sized for ``n`` rows, or ``ax`` emptied for a redraw."""
    if ax is None:
        # fixed margins rather than a layout engine: measuring every text on each redraw would
        # cost more than the drawing itself (widgets redraw on every simulation step)
        height = 1.25 * n + 1.9
        fig = style.new_figure(13, height, layout=None)
        ax = fig.add_subplot()
        fig.subplots_adjust(left=2.6 / 13, right=0.97, top=1 - 0.55 / height,
                            bottom=1.25 / height)
    else:
        style.clear_contents(ax)
    return ax


def _draw_row(ax, row: ReplicaRow, y: float, committed: int | None, cell_pt: float, lo: int,
              hi: int, epochs_seen: set[int]) -> None:
    """One replica's records (cells coloured by leader epoch, uncommitted ones hatched), their
    values where they fit, and its HW and LEO markers; adds the epochs drawn to
    ``epochs_seen``."""
    verts = [((o, y - 0.22), (o + 1, y - 0.22), (o + 1, y + 0.22), (o, y + 0.22))
             for o in row.offsets]
    if row.greyed:   # a stopped broker's log survives on disk: drawn, but greyed out
        faces, edges = ["white"] * len(verts), style.DARK_GREY
    else:
        faces, edges = [style.epoch_color(e) for e in row.epochs], "white"
        epochs_seen.update(row.epochs)
    ax.add_collection(PolyCollection(verts, facecolors=faces, edgecolors=edges,
                                     linewidths=1.5, zorder=2, gid=f"cells:broker{row.broker}"))
    if committed is not None:
        unc = [v for v, o in zip(verts, row.offsets, strict=True) if o >= committed]
        if unc:
            ax.add_collection(PolyCollection(
                unc, facecolors="none", edgecolors=style.DARK_GREY, hatch="//",
                linewidths=0, zorder=3, gid=f"uncommitted:broker{row.broker}"))
    text_color = style.DARK_GREY if row.greyed else "black"
    for o, v in zip(row.offsets, row.values, strict=True):
        t = _cell_text(v, o, cell_pt, style.SMALL)
        if t:
            ax.text(o + 0.5, y, t, ha="center", va="center", fontsize=style.SMALL,
                    color=text_color, zorder=4, clip_on=True)
    if not row.hosted:
        return
    _marker(ax, row.high_watermark, y, lo, hi, f"HW={row.high_watermark}", style.HW_COLOR,
            "-", above=True, gid=f"HW:broker{row.broker}")
    _marker(ax, row.log_end_offset, y, lo, hi, f"LEO={row.log_end_offset}",
            style.LEO_COLOR, "--", above=False, gid=f"LEO:broker{row.broker}")


def _style_axes(ax, view: ReplicaLogView, lo: int, hi: int, cell_pt: float) -> None:
    """Limits, row labels, offset ticks, spines and the title."""
    n = len(view.rows)
    margin = max(0.8, 40 / cell_pt)     # room for a centred "LEO=1200" at either edge
    ax.set_xlim(lo - margin, hi + margin)
    ax.set_ylim(-0.55, n - 0.45)
    ax.set_yticks(range(n), [_tick_label(row) for row in view.rows[::-1]], fontsize=style.FONT)
    for tick, row in zip(ax.get_yticklabels(), view.rows[::-1], strict=True):
        if row.greyed:
            tick.set_color(style.DARK_GREY)
    ax.tick_params(axis="x", labelsize=style.SMALL)
    if cell_pt >= 0.65 * style.SMALL * len(str(hi)) + 8:     # a tick per offset if they fit
        ax.set_xticks(range(lo, hi + 1))
    else:     # a fresh automatic locator (a reused Axes may hold the fixed one set above)
        ax.xaxis.set_major_locator(MaxNLocator("auto", steps=[1, 2, 2.5, 5, 10], integer=True))
    ax.set_xlabel(tr("offset"), fontsize=style.FONT)
    for side in ("top", "right", "left"):
        ax.spines[side].set_visible(False)
    ax.tick_params(axis="y", length=0)
    committed = (tr("none") if view.committed is None
                 else tr("offsets < {committed}", committed=view.committed))
    ax.set_title(tr("{topic}-{partition}   leader epoch {epoch}   committed: {committed}",
                    topic=view.topic, partition=view.partition, epoch=view.leader_epoch,
                    committed=committed), fontsize=style.TITLE)


def _add_legend(ax, epochs_seen: set[int], own: bool) -> None:
    """The epoch colours and committed/uncommitted keys: under the figure when it is ours,
    right of the axes when drawing into a widget's axes."""
    handles = [Patch(facecolor=style.epoch_color(e), label=tr("leader epoch {e}", e=e))
               for e in sorted(epochs_seen)]
    handles.append(Patch(facecolor=style.COMMITTED, label=tr("committed (< leader HW)")))
    handles.append(Patch(facecolor="white", edgecolor=style.DARK_GREY, hatch="//",
                         label=tr("not committed")))
    if own:
        ax.figure.legend(handles=handles, loc="lower center", bbox_to_anchor=(0.5, 0.0),
                         ncol=len(handles), fontsize=style.SMALL, frameon=False)
    else:
        ax.legend(handles=handles, loc="upper left", bbox_to_anchor=(1.01, 1.0),
                  fontsize=style.SMALL, frameon=False)


def _tick_label(row: ReplicaRow) -> str:
    """The row label on up to three short lines: broker, role and ISR, then its state."""
    lines = [tr("broker {b}", b=row.broker),
             (tr("leader") if row.is_leader else tr("follower")) + ", "
             + (tr("ISR") if row.in_isr else tr("out of ISR"))]
    if row.state != "running" or row.paused or not row.hosted:
        lines.append(", ".join(x for x in (_state_word(row.state) if row.state != "running" else "",
                                           tr("paused") if row.paused and row.state == "running"
                                           else "", "" if row.hosted else tr("no log")) if x))
    return "\n".join(lines)


def _state_word(state: str) -> str:
    """A stopped broker's ``Broker.state`` as drawn, in the course language."""
    return {"stopped": tr("stopped"), "shutting down": tr("shutting down")}.get(state, state)


def _marker(ax, x: int, y: float, lo: int, hi: int, label: str, color: str, ls: str, *,
            above: bool, gid: str) -> None:
    """A vertical bar on a row at boundary ``x`` with its label above or below the row; an
    offset left of the window is drawn at the window's edge with an arrow in its label."""
    shown = min(max(x, lo), hi)
    if x < lo:
        label = "◀ " + label
    ax.plot([shown, shown], [y - 0.3, y + 0.3], color=color, lw=3, ls=ls, zorder=5, gid=gid,
            solid_capstyle="butt")
    ax.text(shown, y + 0.31 if above else y - 0.31, label, ha="center",
            va="bottom" if above else "top", fontsize=style.SMALL, color=color, zorder=5,
            fontweight="bold")
