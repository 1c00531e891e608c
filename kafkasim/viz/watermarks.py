"""HW and LEO of each replica over time, as step lines rebuilt from the trace.

LEO moves with "append" (leader), "replicate" (follower) and "truncate" rows; HW with "hw" rows,
and a truncation below the HW pulls the HW down with it (``Log.truncate_to``). After a restart
the HW comes from the replication-offset-checkpoint file, which the trace does not record, so it
is unknown (None, a gap in the line) until the next "hw" row; if none follows, the replica's
current HW is known and used.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from kafkasim.core.events import LogWiped, PowerLossTruncate, Truncate
from kafkasim.viz import style
from kafkasim.viz.style import tr

I18N_CONTEXT = "kafkasim.viz"   # gettext msgctxt of the words drawn (style.tr)


class WatermarkPoint(NamedTuple):
    """Replica ``broker``'s LEO and HW from ``time_ms`` on (hw None: not known from the trace)."""

    time_ms: int
    broker: int
    leo: int
    hw: int | None


def hw_leo_series(cluster, topic: str, partition: int = 0) -> list[WatermarkPoint]:
    """Change points of every replica's (LEO, HW), in time order, ending with the state now."""
    cluster.topics.check_partition(topic, partition)
    replicas = cluster.assignment(topic)[partition]
    state: dict[int, list] = {}          # broker -> [leo, hw]
    out: list[WatermarkPoint] = []
    unknown_since: dict[int, int] = {}   # broker -> index in out where its HW became unknown

    def emit(t: int, b: int) -> None:
        leo, hw = state[b]
        out.append(WatermarkPoint(t, b, leo, hw))

    for t, kind, node, tp, p, detail in cluster.trace.rows:
        if kind == "log_recovery":
            if node in state:
                state[node][1] = None          # HW re-read from the checkpoint file
                unknown_since[node] = len(out)
                emit(t, node)
            continue
        if p != partition or tp != topic or node not in replicas:
            continue
        if kind in ("become_leader", "become_follower"):
            if node not in state:               # the log is created on the first LeaderAndIsr
                state[node] = [0, 0]
                emit(t, node)
            continue
        s = state.get(node)
        if s is None:
            continue
        leo, hw = s
        if kind in ("append", "replicate"):
            leo = detail[1] + 1
        elif kind == "hw":
            hw = detail
            unknown_since.pop(node, None)
        elif kind == "truncate" and isinstance(detail, (Truncate, PowerLossTruncate)):
            leo = min(leo, detail.offset)
            hw = None if hw is None else min(hw, leo)
        elif kind == "truncate" and isinstance(detail, LogWiped):
            leo = hw = detail.offset
            unknown_since.pop(node, None)
        else:
            continue
        if [leo, hw] != s:
            state[node] = [leo, hw]
            emit(t, node)
    # no "hw" row since a restart: the HW never changed, so the current one holds since then
    for b, i in unknown_since.items():
        hw = cluster.brokers[b].logs[(topic, partition)].high_watermark
        for j in range(i, len(out)):
            if out[j].broker == b:
                out[j] = out[j]._replace(hw=hw if out[j].leo >= hw else out[j].leo)
    now = cluster.now
    for b in replicas:
        log = cluster.brokers[b].logs.get((topic, partition))
        if log is not None:
            out.append(WatermarkPoint(now, b, log.log_end_offset, log.high_watermark))
    return out


def hw_leo_timeline(cluster, topic: str, partition: int = 0):
    """Draw each replica's LEO (top) and HW (bottom) over time as step lines. Returns the
    Figure. Replicas that agree overlap, so earlier brokers get wider lines to stay visible."""
    points = hw_leo_series(cluster, topic, partition)
    replicas = cluster.assignment(topic)[partition]
    fig = style.new_figure(13, 8)
    ax_leo, ax_hw = fig.subplots(2, 1, sharex=True, sharey=True)
    n = len(replicas)
    for i, b in enumerate(replicas):
        pts = [pt for pt in points if pt.broker == b]
        if not pts:
            continue
        color = style.broker_color(i)
        lw = 2 + 2.5 * (n - 1 - i)
        times = [pt.time_ms for pt in pts]
        ax_leo.step(times, [pt.leo for pt in pts], where="post", color=color, lw=lw,
                    label=tr("broker {b}", b=b), gid=f"LEO:broker{b}")
        ax_hw.step(times, [math.nan if pt.hw is None else pt.hw for pt in pts], where="post",
                   color=color, lw=lw, label=tr("broker {b}", b=b), gid=f"HW:broker{b}")
    ax_leo.set_title(tr("{topic}-{partition}: log end offset (LEO) and high watermark (HW) "
                        "of each replica", topic=topic, partition=partition),
                     fontsize=style.TITLE)
    ax_leo.set_ylabel("LEO", fontsize=style.FONT)
    ax_hw.set_ylabel("HW", fontsize=style.FONT)
    ax_hw.set_xlabel(tr("time (ms)"), fontsize=style.FONT)
    for ax in (ax_leo, ax_hw):
        ax.tick_params(labelsize=style.SMALL)
        ax.grid(True, alpha=0.3)
        ax.yaxis.get_major_locator().set_params(integer=True)
    ax_leo.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), fontsize=style.SMALL,
                  frameon=False)
    if any(pt.hw is None for pt in points):
        ax_hw.text(0.01, 0.95, tr("gaps: HW re-read from the checkpoint file after a restart "
                                  "(not in the trace)"), transform=ax_hw.transAxes,
                   fontsize=style.SMALL, va="top")
    return fig
