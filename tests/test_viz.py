"""kafkasim.viz: each drawing is checked by its data and by the artists it made (found by gid),
never by pixels. Scenarios are the built-in ones, so every failure reproduces from the scenario
file's seed (printed by the scenario's name in the test id)."""

from __future__ import annotations

import os

os.environ.setdefault("MPLBACKEND", "Agg")

import importlib.util  # noqa: E402
from pathlib import Path  # noqa: E402

import matplotlib.pyplot as plt  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402

from kafkasim.runtime.cluster import Cluster  # noqa: E402
from kafkasim.scenarios.scenario import Scenario  # noqa: E402
from kafkasim.viz import (  # noqa: E402
    broker_status_intervals,
    cluster_layout,
    cluster_map,
    epoch_color,
    hw_leo_series,
    hw_leo_timeline,
    isr_intervals,
    isr_timeline,
    leader_changes,
    message_arrows,
    metric_series,
    metrics,
    partition_history,
    replica_log_rows,
    replica_logs,
    save,
    spacetime,
    trace_to_csv,
    trace_to_parquet,
)

# the ZooKeeper-era release these tests were written against (Kafka 4.x is KRaft only;
# its behaviour is tested in tests/test_kraft_*.py)
ZK = "3.7"

BENCH = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_viz.py"
_RUNS: dict[str, Cluster] = {}


def scenario_cluster(name: str) -> Cluster:
    """The cluster after a built-in scenario (run once per test session; tests only read it)."""
    if name not in _RUNS:
        _RUNS[name] = Scenario.named(name).run().cluster
    return _RUNS[name]


@pytest.fixture(autouse=True)
def no_pyplot_figures():
    """The library makes Figures without pyplot: nothing may be left in pyplot's registry."""
    before = set(plt.get_fignums())
    yield
    leaked = set(plt.get_fignums()) - before
    plt.close("all")
    assert not leaked, f"kafkasim.viz registered figures with pyplot: {sorted(leaked)}"


def close(fig) -> None:
    plt.close(fig)


def by_gid(fig, gid: str):
    found = [a for ax in fig.axes for a in ax.get_children() if a.get_gid() == gid]
    assert found, f"no artist with gid {gid!r}"
    return found


def one(fig, gid: str):
    found = by_gid(fig, gid)
    assert len(found) == 1, (gid, found)
    return found[0]


# -- replica logs ---------------------------------------------------------------------------------
def test_replica_log_rows_seed_high_watermark():
    c = scenario_cluster("seed-high-watermark")
    view = replica_log_rows(c, "hw-demo", 0)
    assert (view.leader, view.committed, view.start, view.end) == (1, 7, 0, 10)
    rows = {r.broker: r for r in view.rows}
    assert [rows[b].log_end_offset for b in (1, 2, 3)] == [10, 8, 7]
    assert [rows[b].high_watermark for b in (1, 2, 3)] == [7, 7, 7]
    assert rows[1].offsets == tuple(range(10))
    assert rows[1].values[:3] == ("m0", "m1", "m2")
    assert rows[1].label == "broker 1 (leader, ISR)"
    assert rows[3].label == "broker 3 (follower, ISR)"


def test_replica_logs_markers_sit_on_exclusive_boundaries():
    c = scenario_cluster("seed-high-watermark")
    fig = replica_logs(c, "hw-demo", 0)
    try:
        for b in (1, 2, 3):
            assert list(one(fig, f"HW:broker{b}").get_xdata()) == [7, 7]
        assert [one(fig, f"LEO:broker{b}").get_xdata()[0] for b in (1, 2, 3)] == [10, 8, 7]
        assert len(one(fig, "cells:broker1").get_paths()) == 10
        assert len(one(fig, "cells:broker3").get_paths()) == 7
        span = one(fig, "committed")         # committed shading: offsets 0..6, i.e. [0, 7)
        assert (span.get_x(), span.get_x() + span.get_width()) == (0, 7)
        assert len(one(fig, "uncommitted:broker1").get_paths()) == 3    # offsets 7, 8, 9
        assert len(one(fig, "uncommitted:broker2").get_paths()) == 1
        assert not [a for a in fig.axes[0].get_children()
                    if a.get_gid() == "uncommitted:broker3"]
        texts = {t.get_text() for t in fig.axes[0].texts}
        assert {"HW=7", "LEO=10", "LEO=8", "LEO=7", "m0", "m9"} <= texts
        ticks = [t.get_text() for t in fig.axes[0].get_yticklabels()]
        assert "broker 1\nleader, ISR" in ticks
    finally:
        close(fig)


def test_replica_logs_epoch_colours_differ_after_leader_change():
    c = scenario_cluster("kip101-scenario1-fixed")
    view = replica_log_rows(c, "kip101", 0)
    rows = {r.broker: r for r in view.rows}
    assert rows[1].epochs == (0, 0, 1)           # m1, m2 in epoch 0; m3 by the new leader
    assert rows[2].label == "broker 2 (follower, out of ISR, stopped)"
    fig = replica_logs(c, "kip101", 0)
    try:
        faces = one(fig, "cells:broker1").get_facecolors()
        assert tuple(faces[0]) == tuple(faces[1]) == to_rgba(epoch_color(0))
        assert tuple(faces[2]) == to_rgba(epoch_color(1))
        assert tuple(faces[1]) != tuple(faces[2])
        stopped = one(fig, "cells:broker2").get_facecolors()   # greyed out: no epoch colours
        assert all(tuple(f) == to_rgba("white") for f in stopped)
        legend = [t.get_text() for lg in fig.legends for t in lg.get_texts()]
        assert "leader epoch 0" in legend and "leader epoch 1" in legend
    finally:
        close(fig)


def test_replica_logs_window_and_redraw_into_same_axes():
    c = scenario_cluster("seed-isr-shrink-expand")
    view = replica_log_rows(c, "isr-demo", 0, max_records=5)
    assert (view.start, view.end) == (1195, 1200)
    assert all(r.offsets == tuple(range(1195, 1200)) for r in view.rows)
    early = replica_log_rows(c, "isr-demo", 0, max_records=10, start_offset=100)
    assert (early.start, early.end) == (100, 110)
    fig = replica_logs(c, "isr-demo", 0, max_records=5)
    try:
        ax = fig.axes[0]
        counts = (len(ax.collections), len(ax.lines), len(ax.texts), len(ax.patches))
        replica_logs(c, "isr-demo", 0, max_records=5, ax=ax)
        replica_logs(c, "isr-demo", 0, max_records=5, ax=ax)
        # redrawing replaces the contents instead of piling up (one more legend, on the axes)
        assert (len(ax.collections), len(ax.lines), len(ax.texts), len(ax.patches)) == counts
        assert ax.get_legend() is not None
        assert list(one(fig, "HW:broker1").get_xdata()) == [1200, 1200]
    finally:
        close(fig)
    fig = replica_logs(c, "isr-demo", 0, max_records=10, start_offset=100)
    try:  # the HW lies right of this window: its marker is clamped to the window's end
        assert list(one(fig, "HW:broker1").get_xdata()) == [110, 110]
    finally:
        close(fig)


# -- ISR and HW/LEO timelines ---------------------------------------------------------------------
def test_isr_timeline_shows_broker_3_out_between_the_isr_rows():
    c = scenario_cluster("seed-isr-shrink-expand")
    shrink, expand = [r for r in c.trace.rows if r[1] == "isr" and r[3] == "isr-demo"]
    assert shrink[5] == ((1, 2, 3), (1, 2)) and expand[5] == ((1, 2), (1, 2, 3))
    ivs = isr_intervals(c, "isr-demo", 0)
    out3 = [iv for iv in ivs if iv.broker == 3 and not iv.in_isr]
    assert [(iv.start_ms, iv.end_ms) for iv in out3] == [(shrink[0], expand[0])]
    for b in (1, 2):
        assert [(iv.in_isr, iv.end_ms) for iv in ivs if iv.broker == b] == [(True, c.now)]
    assert [(ch.leader, ch.leader_epoch) for ch in leader_changes(c, "isr-demo", 0)] == [(1, 0)]
    fig = isr_timeline(c, "isr-demo", 0)
    try:
        (path,) = one(fig, "out:broker3").get_paths()
        xs = path.vertices[:, 0]
        assert (xs.min(), xs.max()) == (shrink[0], expand[0])
        assert len(one(fig, "ISR:broker3").get_paths()) == 2
    finally:
        close(fig)


def test_isr_timeline_marks_the_leader_change():
    c = scenario_cluster("kip101-scenario1-fixed")
    changes = leader_changes(c, "kip101", 0)
    assert [(ch.leader, ch.leader_epoch, ch.previous) for ch in changes] == \
        [(2, 0, -1), (1, 1, 2)]
    fig = isr_timeline(c, "kip101", 0)
    try:
        (lead1,) = one(fig, "leader:broker1").get_paths()
        assert lead1.vertices[:, 0].min() == changes[1].time_ms
        stopped = by_gid(fig, "stopped:broker2")      # broker 2 crashed and stays down
        assert stopped
    finally:
        close(fig)


SCENARIOS = sorted(p.stem for p in (Path(__file__).resolve().parents[1] / "kafkasim" /
                                    "scenarios").glob("*.toml"))


@pytest.mark.parametrize("name", SCENARIOS)
def test_trace_reconstruction_ends_in_the_cluster_state(name):
    """What the timelines rebuild from the trace agrees with the state the cluster holds now."""
    c = scenario_cluster(name)
    for topic in c.topics.names():
        for p in range(c.topics.partition_count(topic)):
            st = c.inspect.partition_state(topic, p)
            last = partition_history(c, topic, p)[-1]
            assert (last.leader, last.leader_epoch, list(last.isr)) == \
                (st["leader"], st["leader_epoch"], st["isr"]), (name, topic, p)
            points = hw_leo_series(c, topic, p)
            for b in st["replicas"]:
                mine = [pt for pt in points if pt.broker == b]
                log = c.brokers[b].logs.get((topic, p))
                if log is None:
                    continue
                # the last change point rebuilt from the trace equals the log's state now
                assert (mine[-2].leo, mine[-2].hw) == (log.log_end_offset, log.high_watermark), \
                    (name, topic, p, b)


def test_hw_leo_series_and_timeline():
    c = scenario_cluster("seed-high-watermark")
    points = hw_leo_series(c, "hw-demo", 0)
    final = {pt.broker: (pt.leo, pt.hw) for pt in points}
    assert final == {1: (10, 7), 2: (8, 7), 3: (7, 7)}
    leader = [pt for pt in points if pt.broker == 1]
    assert [pt.time_ms for pt in leader] == sorted(pt.time_ms for pt in leader)
    assert all(pt.hw <= pt.leo for pt in points)
    fig = hw_leo_timeline(c, "hw-demo", 0)
    try:
        assert one(fig, "LEO:broker1").get_ydata()[-1] == 10
        assert one(fig, "HW:broker3").get_ydata()[-1] == 7
    finally:
        close(fig)


def test_hw_unknown_after_restart_until_the_trace_says():
    c = scenario_cluster("kip101-scenario1-fixed")
    b1 = [pt for pt in hw_leo_series(c, "kip101", 0) if pt.broker == 1]
    recovered = next(i for i, pt in enumerate(b1) if pt.hw is None)
    assert b1[recovered].leo == 2                 # the log survives the crash, the HW is re-read
    assert b1[recovered + 1].hw is not None


# -- space-time diagram ---------------------------------------------------------------------------
def _pairs(c: Cluster, start: int, end: int) -> dict[int, str]:
    """send/recv pairs by message id, computed straight from the trace, overlapping the window."""
    sent = {r[5][2]: (r[0], r[5][0]) for r in c.trace.rows if r[1] == "send" and r[0] <= end}
    recv = {r[5][2]: r[0] for r in c.trace.rows if r[1] == "recv"}
    return {mid: typ for mid, (_t, typ) in sent.items() if mid in recv and recv[mid] >= start}


@pytest.mark.parametrize("name,start,end", [("kip101-scenario1-fixed", 6000, 6300),
                                            ("kip101-scenario1-fixed", 12000, 12700),
                                            ("seed-high-watermark", 500, 730)])
def test_spacetime_arrows_match_the_send_recv_pairs(name, start, end):
    c = scenario_cluster(name)
    arrows = message_arrows(c, start, end)
    delivered = {a.msg_id: a.type_name for a in arrows if a.fate == "delivered"}
    assert delivered == _pairs(c, start, end)
    for a in arrows:
        assert a.send_ms <= end and (a.recv_ms is None or a.recv_ms >= start)
    fig = spacetime(c, start, end)
    try:
        drawn = [a for a in fig.axes[0].patches if str(a.get_gid()).startswith("msg:")]
        assert len(drawn) == len(arrows)
        legend = {t.get_text() for t in fig.axes[0].get_legend().get_texts()}
        assert {a.api for a in arrows} <= legend
    finally:
        close(fig)


def test_spacetime_dropped_held_and_filters():
    c = scenario_cluster("kip101-scenario1-fixed")
    # the follower's fetcher keeps sending to the dead leader and each request is refused (the
    # producer, which saw its connection close, no longer sends: its connects are refused)
    dropped = [a for a in message_arrows(c, 11000, 11700) if a.fate == "dropped"]
    assert [(a.type_name, a.src, a.dst, a.reason) for a in dropped] == \
        [("FetchRequest", 1, 2, "destination process gone")]
    fig = spacetime(c, 11000, 11700)
    try:
        xs = [ln for ln in fig.axes[0].lines if ln.get_marker() == "X"]
        assert len(xs) == 1 and xs[0].get_xdata()[0] == dropped[0].recv_ms
    finally:
        close(fig)
    hw = scenario_cluster("seed-high-watermark")
    held = [a for a in message_arrows(hw, 500, 730) if a.held]
    assert {(a.src, a.dst, a.fate) for a in held} == {(1, 3, "held"), (1, 2, "held")}
    fetch = message_arrows(hw, 0, hw.now, types=["Fetch"])
    assert fetch and {a.api for a in fetch} == {"Fetch"}
    assert {a.is_response for a in fetch} == {False, True}
    brokers = message_arrows(hw, 0, hw.now, nodes=[1, 2, 3])
    assert brokers and all(a.src in (1, 2, 3) and a.dst in (1, 2, 3) for a in brokers)
    with pytest.raises(ValueError, match="before it starts"):
        message_arrows(hw, 10, 5)


# -- cluster map ----------------------------------------------------------------------------------
def test_cluster_map_marks_crashed_broker_controller_and_racks():
    c = Cluster(brokers=3, seed=1, racks={1: "a", 2: "b", 3: "c"}, kafka_version=ZK)
    c.create_topic("t", partitions=3, replication_factor=3)
    layout = cluster_layout(c)
    assert [g.rack for g in layout] == ["a", "b", "c"]
    boxes = {b.broker: b for g in layout for b in g.brokers}
    assert [b for b, box in boxes.items() if box.controller] == [c.controller_id()]
    leaders = {(r.topic, r.partition): b for b, box in boxes.items() for r in box.replicas
               if r.leader}
    assert leaders == {("t", p): c.leader("t", p) for p in range(3)}
    fig = cluster_map(c)
    try:
        assert one(fig, f"controller:{c.controller_id()}").get_text().startswith("★")
    finally:
        close(fig)

    c.crash(1)
    c.pause(3, 5000)
    c.run(10)
    boxes = {b.broker: b for g in cluster_layout(c) for b in g.brokers}
    assert (boxes[1].state, boxes[2].state, boxes[3].paused) == ("stopped", "running", True)
    fig = cluster_map(c)
    try:
        assert one(fig, "broker:1").get_hatch() == "xx"
        assert one(fig, "status:1").get_text() == "STOPPED"
        assert one(fig, "status:3").get_text() == "PAUSED"
        assert one(fig, "broker:2").get_hatch() is None
        assert not [a for ax in fig.axes for a in ax.get_children() if a.get_gid() == "status:2"]
    finally:
        close(fig)


def test_broker_status_intervals():
    c = Cluster(brokers=3, seed=1, kafka_version=ZK)
    c.run(100)
    c.pause(2, 300)
    c.crash(3)
    c.run(500)
    c.zk_control_plane.expire_session(3)   # else the new process could not register (NodeExists)
    c.start(3)
    c.run(100)
    spans = {(s.broker, s.status): (s.start_ms, s.end_ms) for s in broker_status_intervals(c)}
    assert spans == {(2, "paused"): (100, 400), (3, "stopped"): (100, 600)}


# -- metrics --------------------------------------------------------------------------------------
def test_metrics_use_kafka_names():
    c = scenario_cluster("seed-isr-shrink-expand")
    frame = metric_series(c, ["UnderReplicatedPartitions", "IsrShrinksPerSec"], broker=1)
    assert list(dict.fromkeys(frame["mbean"])) == [
        "kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions",
        "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec:Count",
        "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec:Rate",
    ]
    assert set(frame["broker"]) == {1}
    fig = metrics(c, ["UnderReplicatedPartitions", "IsrShrinksPerSec:Count"])
    try:
        titles = [ax.get_title().replace("\n", "") for ax in fig.axes if ax.get_visible()]
        assert titles == ["kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions",
                          "kafka.server:type=ReplicaManager,name=IsrShrinksPerSec:Count"]
        legend = [t.get_text() for t in fig.legends[0].get_texts()]
        assert legend == ["broker 1", "broker 2", "broker 3"]
    finally:
        close(fig)
    with pytest.raises(ValueError, match="Did you mean UnderReplicatedPartitions"):
        metric_series(c, ["UnderReplicatedPartition"])


@pytest.mark.parametrize("name", ["offline-unclean-off", "kip101-scenario2-old"])
def test_every_drawing_renders_after_failures(name):
    """No leader (offline partition), truncations, restarts: every drawing still renders."""
    c = scenario_cluster(name)
    topic = c.topics.names()[0]
    if c.leader(topic, 0) < 0:
        assert replica_log_rows(c, topic, 0).committed is None
    for draw in (lambda: replica_logs(c, topic, 0), lambda: isr_timeline(c, topic, 0),
                 lambda: hw_leo_timeline(c, topic, 0), lambda: spacetime(c, 0, c.now),
                 lambda: cluster_map(c), lambda: metrics(c)):
        fig = draw()
        try:
            fig.canvas.draw()
        finally:
            close(fig)


# -- export ---------------------------------------------------------------------------------------
def test_save_png_and_svg(tmp_path):
    c = scenario_cluster("seed-high-watermark")
    fig = replica_logs(c, "hw-demo", 0)
    try:
        png = save(fig, tmp_path / "logs.png")
        svg = save(fig, tmp_path / "logs.SVG")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert "<svg" in svg.read_text(encoding="utf-8")[:2000]
        with pytest.raises(ValueError, match="extension must be one of"):
            save(fig, tmp_path / "logs.gif")
    finally:
        close(fig)


def test_figures_display_as_png_without_pyplot():
    """A notebook that never imports pyplot still shows the drawing (IPython's display)."""
    from IPython.core.formatters import DisplayFormatter

    fig = cluster_map(Cluster(brokers=3, seed=1, kafka_version=ZK))
    try:
        data, _md = DisplayFormatter().format(fig)
        assert data["image/png"][:8] == b"\x89PNG\r\n\x1a\n"
    finally:
        close(fig)


def test_trace_csv_and_parquet_round_trip(tmp_path):
    c = scenario_cluster("kip101-scenario1-fixed")
    csv = pd.read_csv(trace_to_csv(c, tmp_path / "trace.csv"))
    parquet = pd.read_parquet(trace_to_parquet(c, tmp_path / "trace.parquet"))
    assert len(csv) == len(parquet) == len(c.trace.rows)
    assert list(csv.columns) == list(parquet.columns) == \
        ["time_ms", "event", "node", "topic", "partition", "detail"]
    assert list(parquet["time_ms"]) == [r[0] for r in c.trace.rows]
    assert (parquet["event"] == "send").sum() == sum(r[1] == "send" for r in c.trace.rows)


# -- benchmark smoke ------------------------------------------------------------------------------
@pytest.mark.slow
def test_bench_viz_quick():
    spec = importlib.util.spec_from_file_location("_smoke_bench_viz", BENCH)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    out = module.run(quick=True)
    assert out["records_per_log"] == 200
    for key, value in out.items():
        assert isinstance(value, (bool, int, float, str)), (key, value)
    assert out["redraw_new_figure_ms_median"] > 0 and out["seek_snapshot_bytes"] > 0
    assert isinstance(out["meets_target_redraw"], bool)
    assert isinstance(out["meets_target_seek"], bool)


def _contents(ax) -> list:
    """What an Axes shows: its artists' gids and texts, its tick labels and title (not where
    matplotlib put them)."""
    arts = sorted((type(a).__name__, str(a.get_gid())) for a in
                  [*ax.collections, *ax.lines, *ax.patches])
    texts = sorted(t.get_text() for t in ax.texts)
    ticks = [t.get_text() for t in ax.get_yticklabels()]
    legend = [t.get_text() for t in ax.get_legend().get_texts()] if ax.get_legend() else []
    return [arts, texts, ticks, legend, ax.get_title(), ax.get_xlim(), ax.get_ylim()]


def test_isr_timeline_into_reused_axes_draws_what_a_new_figure_draws():
    from kafkasim.viz.style import new_figure

    a = scenario_cluster("seed-isr-shrink-expand")
    b = scenario_cluster("jepsen-2013-unsafe")
    ax = new_figure(13, 5, layout=None).add_subplot()
    isr_timeline(b, "jepsen", 0, ax=ax)            # something else drawn first
    isr_timeline(a, "isr-demo", 0, ax=ax)
    fresh = isr_timeline(a, "isr-demo", 0)
    assert _contents(ax) == _contents(fresh.axes[0])
    close(fresh)


def test_quorum_timeline_into_reused_axes_and_filtered_rows_match():
    from kafkasim.viz import quorum as Q
    from kafkasim.viz.style import new_figure

    c = scenario_cluster("kraft-controller-failover")
    ax = new_figure(13, 5, layout=None).add_subplot()
    Q.quorum_timeline(c, end_ms=20_000, ax=ax)
    Q.quorum_timeline(c, ax=ax)
    fresh = Q.quorum_timeline(c)
    assert _contents(ax) == _contents(fresh.axes[0])
    close(fresh)
    every, end = Q.trace_rows(c)
    some, end2 = Q.trace_rows(c, Q._FENCING_KINDS)
    assert end == end2 and some == [r for r in every if r[1] in Q._FENCING_KINDS]
    frame = c.trace_frame()
    assert Q.quorum_intervals(frame) == Q.quorum_intervals(c, end_ms=Q.trace_rows(frame)[1])


def test_replica_logs_reused_axes_after_many_redraws_match_a_fresh_drawing():
    from kafkasim.viz.style import new_figure

    c = scenario_cluster("seed-isr-shrink-expand")
    ax = new_figure(13, 5, layout=None).add_subplot()
    for n in (3, 60, 5):           # a fixed tick per offset, then automatic ticks, then fixed
        replica_logs(c, "isr-demo", 0, max_records=n, ax=ax)
    fresh = new_figure(13, 5, layout=None).add_subplot()
    replica_logs(c, "isr-demo", 0, max_records=5, ax=fresh)
    assert _contents(ax) == _contents(fresh)
    assert [t.get_text() for t in ax.get_xticklabels()] == \
        [t.get_text() for t in fresh.get_xticklabels()]
def test_cluster_map_keeps_long_topic_names_whole_inside_their_badges():
    """Issue 14: the map cut "topic-p3-r3" to "topic-p…"; badges now fit the longest name."""
    c = Cluster(brokers=3, seed=1)
    c.create_topic("topic-p3-r3", partitions=3, replication_factor=3)
    fig = cluster_map(c)
    try:
        fig.canvas.draw()
        renderer = fig.canvas.get_renderer()
        for b in (1, 2, 3):
            for p in range(3):
                badge = one(fig, f"replica:topic-p3-r3-{p}@{b}")
                label = next(t for t in fig.axes[0].texts
                             if t.get_text() == f"topic-p3-r3-{p}"
                             and badge.contains_point(
                                 fig.axes[0].transData.transform(t.get_position())))
                assert badge.get_window_extent(renderer).contains(
                    *label.get_window_extent(renderer).min) and badge.get_window_extent(
                    renderer).contains(*label.get_window_extent(renderer).max)
        assert "KRaft node" in fig._suptitle.get_text()    # not "controller: broker 3000"
    finally:
        close(fig)
