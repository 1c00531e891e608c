"""The player and explorers from plain Python: seek/step/fork, readout, Play ticks, caching, and
the ipywidgets front-ends built headless (no browser: every control calls a plain method)."""

from __future__ import annotations

import ipywidgets as w
import pytest
from matplotlib.figure import Figure

from kafkasim.runtime.cluster import Cluster, ClusterError
from kafkasim.runtime.workload import RateWorkload
from kafkasim.scenarios.scenario import Scenario
from kafkasim.widgets import Explorer, Player, explore

# the ZooKeeper-era release these tests were written against (Kafka 4.x is KRaft only;
# its behaviour is tested in tests/test_kraft_*.py)
ZK = "3.7"

PNG = b"\x89PNG\r\n\x1a\n"


def make(seed: int = 1, **kw) -> Player:
    c = Cluster(brokers=3, seed=seed, kafka_version=ZK)
    c.create_topic("t", partitions=2, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    RateWorkload(c, p, "t", rate=50, duration_ms=30000)
    return Player(c, topic="t", **kw)


def state(c: Cluster) -> tuple:
    return (c.now, c.trace.digest(),
            tuple((b, tp, log.log_end_offset, log.high_watermark)
                  for b, br in sorted(c.brokers.items()) for tp, log in sorted(br.logs.items())))


def walk(widget):
    """Every widget inside a box, depth first."""
    yield widget
    for child in getattr(widget, "children", ()):
        yield from walk(child)


# -- moving in time ----------------------------------------------------------------------------
def test_seek_back_and_forth_lands_on_identical_states():
    pl = make(checks=False)
    pl.run(8000)
    end = state(pl.cluster)
    pl.seek(3500)
    mid = state(pl.cluster)
    assert pl.now == 3500 and mid != end
    pl.seek(pl.horizon)
    assert state(pl.cluster) == end
    pl.seek(3500)
    assert state(pl.cluster) == mid
    pl.seek(-100)                       # clamped to the start of the recording
    assert pl.now == pl.start_ms


def test_step_runs_exactly_one_event():
    pl = make(checks=False)
    n = pl.cluster.engine.events_processed
    assert pl.step()
    assert pl.cluster.engine.events_processed == n + 1


def test_play_tick_advances_by_tick_ms_and_extends_the_horizon():
    pl = make(checks=False, tick_ms=250)
    t0 = pl.now
    pl.play_tick()
    assert pl.now == t0 + 250 and pl.horizon == t0 + 250
    pl.run(2000)
    pl.seek(t0)
    horizon = pl.horizon
    pl.play_tick()                      # inside the recorded branch: replays, no new future
    assert pl.now == t0 + 250 and pl.horizon == horizon


def test_acting_in_the_past_forks_a_new_future():
    pl = make(checks=False)
    pl.run(10000)
    original = state(pl.cluster)
    pl.seek(4000)
    pl.crash(2)
    assert pl.horizon == 4000           # the recorded future is gone
    assert [a.name for a in pl.history.actions] == ["crash"]
    pl.seek(original[0])
    assert pl.now == original[0] and state(pl.cluster) != original
    assert pl.cluster.brokers[2].state == "stopped"
    assert "Isr: " in pl.readout()["describe"]


def test_replaying_the_same_actions_gives_the_same_trace():
    def script(pl: Player) -> None:
        pl.run(3000)
        pl.pause_broker(3, 2000)
        pl.run(1000)
        pl.cut(1, 2)
        pl.run(4000)
        pl.heal()
        pl.produce("hello")
        pl.step()
        pl.crash(2)                     # after a step: applied once the millisecond is over
        pl.run(2000)
        pl.restart(2)
        pl.run(3000)

    a, b = make(), make()
    script(a)
    script(b)
    assert a.cluster.trace.digest() == b.cluster.trace.digest()
    assert a.history.replay().trace.digest() == a.cluster.trace.digest()
    digest = a.cluster.trace.digest()
    a.seek(0)
    a.seek(a.horizon)                   # scrubbing replays the branch exactly
    assert a.cluster.trace.digest() == digest


def test_an_action_after_a_step_is_what_a_replay_gives():
    pl = make(checks=False)
    pl.run(2000)
    pl.step()
    pl.crash(3)                         # the rest of the millisecond runs first, as on replay
    live = state(pl.cluster)
    pl.seek(0)
    pl.seek(live[0])
    assert state(pl.cluster) == live


@pytest.mark.parametrize("name", [
    "seed-high-watermark", "seed-commit-offset-6", "seed-acks-min-isr", "kip101-scenario1-old",
    "jepsen-2013-unsafe", "offline-unclean-on",
    pytest.param("controller-failover", marks=pytest.mark.slow),
])
def test_recording_a_scenario_reproduces_it_exactly(name):
    run = Scenario.named(name).run()
    pl = Player(run, checks=False)
    assert pl.cluster.trace.digest() == run.cluster.trace.digest()
    for t in (0, pl.horizon // 3, pl.horizon // 2, pl.horizon):
        pl.seek(t)
    assert pl.cluster.trace.digest() == run.cluster.trace.digest(), \
        f"seed={run.cluster.engine.seed}"


def test_a_failed_action_is_not_recorded():
    pl = make(checks=False)
    pl.run(1000)
    pl.crash(2)
    with pytest.raises(ClusterError, match="not running"):
        pl.crash(2)
    with pytest.raises(ClusterError, match="Unknown broker 9"):
        pl.pause_broker(9, 100)
    assert [a.name for a in pl.history.actions] == ["crash"]
    pl.run(1000)
    pl.seek(500)
    pl.seek(pl.horizon)                 # replay does not trip over a failed action
    assert pl.cluster.brokers[2].state == "stopped"
    pl.restart(2)                       # a stopped broker is started
    assert pl.history.actions[-1].name == "start"


# -- readout -----------------------------------------------------------------------------------
def test_readout_after_the_high_watermark_scenario():
    run = Scenario.named("seed-high-watermark").run()
    pl = Player(run)
    r = pl.readout()
    assert r["topic"] == "hw-demo" and r["time_ms"] == run.cluster.now
    assert r["describe"].splitlines()[1] == \
        "\tTopic: hw-demo\tPartition: 0\tLeader: 1\tReplicas: 1,2,3\tIsr: 1,2,3"
    assert r["describe"] == run.cluster.describe("hw-demo")
    assert [(x["broker"], x["LEO"], x["HW"]) for x in r["replicas"]] == \
        [(1, 10, 7), (2, 8, 7), (3, 7, 7)]
    [row] = r["consumers"]
    assert (row["group"], row["position"], row["HW"], row["LEO"], row["records_lag"]) == \
        ("readers", 7, 7, 10, 0)
    text = r["text"]
    assert "$ kafka-topics --describe --topic hw-demo" in text
    assert r["describe"].rstrip() in text
    assert "First invariant violation: none" in text
    assert r["first_violation"] is None


def test_a_recorded_scenario_can_be_scrubbed_from_its_start():
    run = Scenario.named("seed-isr-shrink-expand").run()
    pl = Player(run)
    assert pl.start_ms == 0 and pl.horizon == run.cluster.now
    pl.seek(run.cluster.now // 2)
    assert pl.now == run.cluster.now // 2
    pl.seek(pl.horizon)
    assert pl.cluster.trace.digest() == run.cluster.trace.digest()


def test_first_violation_is_reported_and_kept_or_dropped_by_forks():
    pl = Player(Scenario.named("kip101-scenario1-old").run())
    v = pl.first_violation()
    assert v is not None and v.invariant
    assert ("violation", v.time_ms) in [(k, t) for t, k, _l in pl.markers()]
    assert f"{v.invariant} violated" in pl.readout_text()
    assert "background" in pl.timeline_html()
    # acting after the violation keeps it: it is on the common prefix
    pl.seek(pl.horizon)
    pl.produce("after")
    assert pl.first_violation() == v
    # acting before it discards that future; the new branch is checked again
    pl.seek(0)
    pl.heal()
    pl.run(100)
    assert pl.readout()["first_violation"] is None
    assert pl.readout()["checked_to_ms"] == pl.horizon


def test_a_live_cluster_is_checked_up_to_the_horizon():
    pl = make()
    pl.run(5000)
    r = pl.readout()
    assert r["checked"] and r["first_violation"] is None
    assert (r["checked_from_ms"], r["checked_to_ms"]) == (pl.start_ms, pl.horizon)
    assert Player(pl.cluster, checks=False).readout()["checked"] is False


def test_consumer_positions_in_the_readout():
    c = Cluster(brokers=3, seed=3, kafka_version=ZK)
    c.create_topic("t", partitions=1, replication_factor=3)
    p = c.producer(acks="all")
    for i in range(5):
        p.send("t", f"v{i}", partition=0)
    c.run(200)
    cons = c.consumer("g", auto_offset_reset="earliest")
    cons.assign("t")
    cons.poll(1000, max_records=3)
    cons.commit()
    pl = Player(c)
    [row] = pl.readout()["consumers"]
    assert (row["committed"], row["position"], row["HW"], row["LEO"]) == (3, 3, 5, 5)
    assert (row["LAG"], row["records_lag"]) == (2, 2)
    assert "records_lag" in pl.readout_text()


# -- figures -----------------------------------------------------------------------------------
def test_figure_shows_the_selected_partition_and_is_reused():
    pl = make(checks=False)
    pl.run(2000)
    fig = pl.figure()
    assert isinstance(fig, Figure)
    assert fig.axes[0].get_title().startswith("t-0")
    pl.select(partition=1)
    assert pl.figure() is fig
    assert fig.axes[0].get_title().startswith("t-1")
    labels = " ".join(t.get_text() for t in fig.axes[0].get_yticklabels())
    assert all(f"broker {b}" in labels for b in (1, 2, 3))
    assert pl.png().startswith(PNG)
    isr = pl.isr_figure()
    assert any(line.get_gid() == "now" for line in isr.axes[0].lines)
    with pytest.raises(ClusterError):
        pl.select(partition=7)


# -- the widget, headless --------------------------------------------------------------------
def test_player_widget_builds_headless_and_controls_call_the_player():
    """Issue 32: the player's picture is its Stage under one row of controls; no image widget
    (no hidden 0x0 image); the slider seeks, the stage's clicks act through the player, the
    jump button names where it goes before the click."""
    from kafkasim.widgets.stage import Stage

    pl = make(checks=False, tick_ms=100)
    pl.run(1000)
    box = pl.widget
    assert isinstance(box, w.VBox) and pl.widget is box
    parts = list(walk(box))
    assert pl.stage in parts and isinstance(pl.stage, Stage)
    assert not any(isinstance(x, w.Image) for x in parts)
    slider = next(x for x in parts if isinstance(x, w.IntSlider))
    t0 = pl.now
    slider.value = t0 - 500             # scrubbing is a seek; the stage follows
    assert pl.now == t0 - 500 and pl.stage.window["t0"] == pl.now
    pl.stage.handle({"action": "toggle", "node": 1, "t": pl.now + 10})   # a click on broker 1
    assert pl.cluster.brokers[1].state == "stopped" and pl.horizon == pl.now
    assert pl.stage.code[-2:] == [f"player.seek({t0 - 490})", "player.crash(1)"]
    assert slider.value == pl.now and slider.max == pl.horizon
    pl.stage._on_front_end(pl.stage, {"action": "pause", "node": 9}, [])
    assert "Unknown node 9" in pl.stage.error         # an error is shown, not raised
    pl.seek(pl.start_ms)
    ui = pl._ui
    later = [(t, k) for t, k, *_ in pl.history.trace_rows if t > pl.now]
    ui.kind.value = later[-1][1]                  # a kind that happens later on
    nxt = next(t for t, k in later if k == ui.kind.value)
    assert ui.jump.description == f"jump ▶ {nxt:,} ms" and ui.kind.value in ui.jump.tooltip
    ui.jump.click()
    assert pl.now == nxt


# -- explorer ----------------------------------------------------------------------------------
def test_explorer_update_reruns_and_caches():
    calls = []

    def build(acks="all", min_insync_replicas=2):
        calls.append((acks, min_insync_replicas))
        c = Cluster(brokers=3, seed=1, kafka_version=ZK)
        c.create_topic("t", 1, 3, config={"min.insync.replicas": min_insync_replicas})
        c.producer(acks=acks).send("t", "x", partition=0)
        c.run(100)
        return c

    ex = explore(build, {"acks": ["all", "1", "0"], "min.insync.replicas": (1, 3)})
    assert ex.values == {"acks": "all", "min.insync.replicas": 2}   # build's defaults
    first = ex.result
    assert calls == [("all", 2)]
    second = ex.update(acks="1")
    assert calls[-1] == ("1", 2) and second is not first
    ex.update(**{"min.insync.replicas": 3})                         # Kafka's dotted key
    assert calls[-1] == ("1", 3)
    back = ex.update(acks="all", min_insync_replicas=2)              # moving back: cached
    assert back is first and ex.builds == 3 and ex.hits == 1
    assert "min.insync.replicas=2" in ex.summary()
    assert isinstance(ex.figure(), Figure) and ex.figure() is ex.figure()
    with pytest.raises(ValueError, match="acks='2' is not one of"):
        ex.update(acks="2")
    with pytest.raises(ValueError, match="outside"):
        ex.update(min_insync_replicas=5)
    with pytest.raises(KeyError, match="no control named 'linger.ms'"):
        ex.update(**{"linger.ms": 5})
    assert ex.values == {"acks": "all", "min.insync.replicas": 2}


def test_explorer_cache_is_bounded_and_custom_draw_is_used():
    drawn = []

    def draw(result, fig):
        ax = fig.add_subplot()
        ax.bar([0], [result])
        drawn.append(result)

    ex = Explorer(lambda replica_lag_time_max_ms=10000: replica_lag_time_max_ms // 1000,
                  {"replica.lag.time.max.ms": [10000, 30000, 60000]}, draw,
                  summary=lambda r: f"{r} s", cache_size=2)
    for v in (10000, 30000, 60000, 10000):
        ex.update(replica_lag_time_max_ms=v)
    assert ex.builds == 4                 # 10000 fell out of a cache of two
    assert ex.summary() == "10 s"
    ex.figure()
    assert drawn == [10]


def test_explorer_widget_builds_headless_and_controls_update():
    ex = Explorer(lambda acks="all": Cluster(brokers=1, seed=0, config={}, kafka_version=ZK),
                  {"acks": ["all", "1"]})
    box = ex.widget
    dropdown = next(x for x in walk(box) if isinstance(x, w.Dropdown))
    image = next(x for x in walk(box) if isinstance(x, w.Image))
    assert dropdown.description == "acks" and bytes(image.value).startswith(PNG)
    dropdown.value = "1"
    assert ex.values == {"acks": "1"} and ex.builds == 2
    ex.update(acks="all")
    assert dropdown.value == "all" and ex.hits == 1


# -- issue 15: fallbacks, layout, play speed, jumps, dropped script, frames, refusals -----------
@pytest.fixture(scope="module")
def isr_player():
    return Player(Scenario.named("seed-isr-shrink-expand"), show_isr=True)


def test_player_and_explorer_have_a_readable_static_fallback(isr_player, notebook_kafka_version):
    bundle = isr_player._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    text = bundle["text/plain"]
    assert text.startswith("Player(t=") and "kafka-topics --describe" in text
    assert "Messages in flight at t = " in text            # the stage's text rendering
    assert "VBox(" not in text
    page = bundle["text/html"]
    assert "<svg" in page and "Messages in flight" in page and "<img" not in page
    assert bundle == isr_player._repr_mimebundle_()          # deterministic (nbval)
    from kafkasim.course import explore as course_explore
    from kafkasim.course.positions import positions_view

    ex = course_explore(positions_view, {"produced": (1, 16, 1), "consumed": (0, 16, 1)},
                        values={"produced": 10, "consumed": 6}, title="Positions")
    b = ex._repr_mimebundle_()
    assert b["text/plain"].startswith("Positions\nExplorer: produced=10, consumed=6")
    assert "VBox(" not in b["text/plain"] and "<img" in b["text/html"]


def test_player_rows_wrap_and_buttons_keep_their_labels(isr_player):
    box = isr_player.widget
    rows = [x for x in walk(box) if isinstance(x, w.HBox)]
    assert rows and all(r.layout.flex_flow == "row wrap" for r in rows)
    buttons = [x for x in walk(box) if isinstance(x, w.Button)]
    assert buttons and all(b.layout.width in (None, "auto") for b in buttons)
    assert any(b.description.startswith("jump ▶") for b in buttons)
    dropdowns = [x for x in walk(box) if isinstance(x, w.Dropdown)]
    assert all(d.layout.width == "auto" for d in dropdowns)   # "become_leader" is not cut
    kind = isr_player._ui.kind
    assert int(kind.layout.min_width.removesuffix("px")) >= 230
    slider = next(x for x in walk(box) if isinstance(x, w.IntSlider))
    assert "%" not in str(slider.layout.width) and slider.layout.min_width


def test_default_play_speed_plays_a_story_in_a_watchable_number_of_ticks(isr_player):
    from kafkasim.widgets.player import PLAY_TICKS, auto_tick_ms

    span = isr_player.horizon - isr_player.start_ms
    assert span > 15_000 and isr_player.tick_ms == auto_tick_ms(span)
    assert -(-span // isr_player.tick_ms) <= PLAY_TICKS
    assert auto_tick_ms(3_000) == 100 and auto_tick_ms(69_000) == 1000
    assert make(checks=False, tick_ms=50).tick_ms == 50


def test_jump_to_the_next_event_of_a_kind():
    pl = Player(Scenario.named("seed-isr-shrink-expand"), checks=False)
    pl.seek(pl.start_ms)
    isr_rows = [t for t, kind, *_ in pl.history.trace_rows if kind == "isr"]
    assert "isr" in pl.event_kinds() and len(isr_rows) >= 2
    assert pl.next_event("isr") == isr_rows[0] and pl.now == isr_rows[0]
    assert pl.next_event("isr") == isr_rows[1]
    pl.seek(pl.horizon)
    assert pl.next_event("isr") is None and "no 'isr' event" in pl.status
    from kafkasim.course import i18n as rt
    try:
        rt.set_language("ko")
        assert pl.next_event("isr") is None and "이후 'isr' 이벤트가 없습니다" in pl.status
    finally:
        rt.set_language(None)
    with pytest.raises(ValueError, match="did you mean 'isr'"):
        pl.next_event("isrr")
    ui = pl.widget and pl._ui
    pl.seek(pl.start_ms)
    ui.kind.value = "isr"
    ui.jump.click()
    assert pl.now == isr_rows[0]


def test_acting_in_the_past_of_a_scenario_says_which_scripted_steps_are_dropped():
    pl = Player(Scenario.named("seed-isr-shrink-expand"), checks=False)
    later = [(t, s) for t, s in pl.script if t > 600]
    assert later                              # the scenario releases the hold later on
    pl.seek(600)
    pl.crash(1)
    assert f"{len(later)} later scripted step(s)" in pl.notice
    assert "release at t=15,001 ms" in pl.notice and "Note: " in pl.readout_text()
    assert all(t <= 600 for t, _s in pl.script)
    assert "Script dropped" in (pl.widget and pl._ui.notice.value)
    plain = make(checks=False)
    plain.run(2000)
    plain.seek(1000)
    plain.crash(1)
    assert plain.notice == ""                 # a cluster has no script to drop


def test_player_frames_are_cached_per_state_and_dropped_on_a_fork(isr_player):
    pl = isr_player
    assert pl.widget is not None
    ui = pl._ui
    ui.show(None)
    renders = pl._frames.isr_panel.renders
    pl.seek(3000)
    pl.seek(9000)
    assert pl._frames.isr_panel.renders == renders       # closed: nothing drawn per step
    ui.toggles["isr"].value = True                 # a click on the ISR timeline toggle
    first = ui.section.value
    assert "data:image/png;base64," in first
    renders = pl._frames.isr_panel.renders
    pl.seek(3000)
    pl.seek(9000)
    assert ui.section.value == first
    assert pl._frames.isr_panel.renders == renders + 1          # only t=3000 was drawn
    ui.toggles["readout"].value = True
    assert "kafka-topics --describe" in ui.section.value and not ui.toggles["isr"].value
    ui.toggles["readout"].value = False
    assert ui.section.value == "" and ui.opened is None
    with pytest.raises(ValueError, match="choose from readout, isr"):
        ui.show("quorum")
    pl.seek(3000)
    pl.pause_broker(2, 1000)
    panel = pl._frames.isr_panel
    assert not panel.frames or all(k[3] == pl._frames.branch for k in panel.frames)


def test_seeking_before_a_topic_exists_shows_a_message_not_an_error():
    pl = Player(Scenario.named("kraft-controller-failover"), topic="audit", checks=False)
    assert pl.widget is not None
    pl.seek(pl.start_ms)
    assert "audit" not in pl.cluster.topics.names()
    assert "does not exist at this time" in pl.readout_text()
    assert pl.stage.window["topic"] is None and not pl.stage.error
    assert pl.stage.window["t0"] == pl.start_ms


def test_explorer_refuses_impossible_values_and_keeps_the_last_good_ones(notebook_kafka_version):
    from kafkasim.course import explore as course_explore
    from kafkasim.course.positions import positions_demo, positions_view

    with pytest.raises(ValueError, match="high watermark"):
        positions_demo(produced=10, replicated=8, consumed=16, committed=4)
    with pytest.raises(ValueError, match="committed=7 > consumed=6"):
        positions_demo(produced=10, replicated=8, consumed=6, committed=7)
    ex = course_explore(positions_view, {"produced": (1, 16, 1), "replicated": (0, 16, 1),
                                         "consumed": (0, 16, 1), "committed": (0, 16, 1)},
                        values={"produced": 10, "replicated": 8, "consumed": 6, "committed": 4})
    assert ex.widget is not None
    good = ex._ui["image"].value
    with pytest.raises(ValueError):
        ex.update(consumed=16)
    assert ex.values["consumed"] == 6
    ex._ui["controls"]["consumed"].value = 16      # what dragging the slider does
    assert ex._ui["controls"]["consumed"].value == 6
    assert "refused" in ex._ui["status"].value and ex._ui["image"].value == good


def test_precompute_renders_every_dropdown_combination_once():
    calls = []

    def build(acks="all", min_isr=2):
        calls.append((acks, min_isr))
        if acks == "0" and min_isr == 3:
            raise ValueError("refused")
        return f"{acks}/{min_isr}"

    ex = explore(build, {"acks": ["all", "1", "0"], "min_isr": [1, 2, 3]}, precompute=True)
    assert ex.widget is not None
    assert sorted(set(calls)) == sorted((a, m) for a in ("all", "1", "0") for m in (1, 2, 3))
    n = len(calls)
    ex._ui["controls"]["acks"].value = "1"
    ex._ui["controls"]["min_isr"].value = 3
    assert len(calls) == n and ex.values == {"acks": "1", "min_isr": 3}
    with pytest.raises(ValueError, match="dropdowns only"):
        explore(build, {"acks": ["all"], "min_isr": (1, 3)}).combinations()


def test_with_fallback_gives_any_widget_readable_text():
    from kafkasim.widgets import with_fallback

    box = w.VBox([w.IntSlider(value=3, description="replication.factor")])
    bundle = with_fallback(box, "replication.factor = 3")._repr_mimebundle_()
    assert bundle["text/plain"] == "replication.factor = 3"
    assert "replication.factor = 3" in bundle["text/html"]
    assert bundle["application/vnd.jupyter.widget-view+json"]["model_id"] == box.model_id


def _checked(checker) -> tuple:
    """What a branch's checks know: violations, allowed losses, ghost variables."""
    suite = checker.suite
    g = suite.ghost
    return (checker.first, [v.key for v in suite.violations], [v.key for v in suite.allowed],
            sorted(g.true_hw.items()), sorted((tp, len(a)) for tp, a in g.acked.items()),
            sorted(g.power_losses.items()), sorted(g.terms.items()), g.cursor)


def test_a_fork_resumes_the_checks_from_their_last_snapshot_before_it(monkeypatch):
    from kafkasim.widgets.recording import BranchChecker, CheckedHistory

    pl = make()
    pl.run(4000)
    pl.crash(2)
    pl.run(5000)
    assert pl.first_violation() is None and pl.checker.checked_to == pl.horizon
    loaded = []
    load = CheckedHistory._load
    monkeypatch.setattr(CheckedHistory, "_load",
                        lambda self, snap: loaded.append(snap) or load(self, snap))
    pl.seek(6400)
    pl.cut(1, 3)                  # a fork 2.6 s before what was checked
    shadow = pl.checker.shadow
    # resumed from the checks' snapshot at 6 s (not from the start), then checked to 6.4 s
    assert len(loaded) == 1 and loaded[0] is shadow.snaps[shadow.times.index(6000)]
    pl.run(3000)
    assert pl.first_violation() is None
    # the same branch checked from its start by a fresh checker knows exactly the same
    fresh = BranchChecker(pl.checker.base, 0, pl.start_ms)
    assert fresh.follow(pl.history) is None
    assert _checked(fresh) == _checked(pl.checker)
    assert fresh.shadow.cluster.trace.digest() == pl.cluster.trace.digest()


# -- issues 14 and 18: messages in flight in the player, projector mode -----------------------
def test_player_shows_the_messages_in_flight_on_its_stage():
    pl = make(checks=False)
    pl.run(2000)
    pl.widget                           # noqa: B018  (builds the UI)
    win = pl.stage.window
    assert win["t0"] == pl.now and win["tokens"]
    assert {"Fetch"} <= {tok["api"] for tok in win["tokens"]}
    assert f"Messages in flight at t = {pl.now:,} ms" in pl.stage.text()
    t = pl.now
    pl.run(300)                         # a cell moves the player: the stage follows
    assert pl.stage.window["t0"] == pl.now == t + 300


def test_projector_mode_is_large_type_high_contrast_and_course_wide():
    from kafkasim.viz import style

    normal = style.FONT
    try:
        pl = make(checks=False, presentation=True)
        assert style.PRESENTATION and style.FONT > normal and style.SMALL > 12
        box = pl.widget
        assert "kafkasim-projector" in box._dom_classes
        assert isinstance(box.children[0], w.HTML) and "font-size: 20px" in box.children[0].value
        assert pl.stage.window["presentation"] is True        # the stage enlarges too
        assert all(d.layout.width == "auto" for d in walk(box) if isinstance(d, w.Dropdown))
    finally:
        style.set_presentation(False)
    assert style.FONT == normal and not style.PRESENTATION
    plain = make(checks=False)
    assert "kafkasim-projector" not in plain.widget._dom_classes


# -- issue 18: the player's controls and tiles in the course's language -----------------------
def test_player_controls_speak_the_course_language_and_keep_stable_classes():
    """Labels, tooltips and the stage's words go through the course's tr() (Korean in a Korean
    notebook); every control keeps its kafkasim-<name> class, by which the browser tests find
    it in any language. English labels are unchanged."""
    from kafkasim.course import i18n as rt
    from kafkasim.widgets._player_ui import CONTROL_CLASSES

    def controls(pl):
        return {cls: x for x in walk(pl.widget) for cls in CONTROL_CLASSES
                if f"kafkasim-{cls}" in getattr(x, "_dom_classes", ())}

    try:
        rt.set_language("en")
        en = make(checks=False)
        en.run(1000)
        ctl = controls(en)
        assert set(ctl) == set(CONTROL_CLASSES)
        assert [ctl[k].description for k in ("time", "kind", "topic")] == \
            ["time (ms)", "next", "topic"]
        assert en._ui.toggles["readout"].description == \
        "kafka-topics --describe, invariants, actions"
        rt.set_language("ko")
        ko = make(checks=False)
        ko.run(1000)
        ctl = controls(ko)
        assert [ctl[k].description for k in ("time", "kind", "topic")] == \
            ["시간 (ms)", "다음", "토픽"]
        assert ko._ui.toggles["isr"].description == "ISR 타임라인"
        assert ko.stage.strings["step ▶"] != "step ▶"                # the stage speaks Korean
        ko.stage.toggle_broker(1)                  # broker 1 crashes, through the player
        assert ko.cluster.brokers[1].state == "stopped"
        assert ko.broker_tiles()[0].state == "crashed"         # the data stays English
    finally:
        rt.set_language(None)


# -- issue 32: an explorer shows only what it computes, the answer under its controls ---------
def _rows(ex):
    """The explorer box's rows, by kind: controls, status/summary (HTML), image."""
    assert ex.widget is not None   # built (a titled CourseExplorer wraps the box in another)
    return [type(r).__name__ for r in ex._ui["box"].children]


def test_text_only_explorer_shows_no_figure_live_or_saved():
    from kafkasim.course import explore as course_explore
    from kafkasim.course.epochs import end_offset_view

    ex = course_explore(end_offset_view, {"requested_epoch": (0, 5, 1),
                                          "log_end_offset": (7, 15, 1)},
                        values={"requested_epoch": 2, "log_end_offset": 10}, title="epochs")
    assert ex.figure() is None and ex.png() == b""
    # the answer is the row right under the controls; no image anywhere in the widget
    assert _rows(ex) == ["VBox", "HTML", "HTML"]
    assert not any(isinstance(x, w.Image) for x in walk(ex._titled or ex.widget))
    answer = ex._ui["summary"].value
    assert "<pre" in answer and "10" in answer
    ex._ui["controls"]["log_end_offset"].value = 12          # what moving the slider does
    assert ex._ui["summary"].value != answer and ex.values["log_end_offset"] == 12
    bundle = ex._repr_mimebundle_()
    assert "<img" not in bundle["text/html"] and "<pre" in bundle["text/html"]


def test_explorer_figure_comes_and_goes_with_the_values():
    """A function that draws for some values only: the image row is there exactly when a
    figure is, and it follows the text answer."""
    from kafkasim.viz import style

    def build(n=0):
        if not n:
            return f"n={n}: nothing to draw"
        fig = style.new_figure(4, 2)
        fig.add_subplot().bar(range(n), range(n))
        return [f"n={n}", fig]

    from kafkasim.course import explore as course_explore

    ex = course_explore(build, {"n": [0, 1, 2]})
    assert _rows(ex) == ["VBox", "HTML", "HTML"]
    ex.update(n=2)
    assert _rows(ex) == ["VBox", "HTML", "HTML", "Image"]
    assert bytes(ex._ui["box"].children[-1].value).startswith(PNG)
    html = ex._repr_mimebundle_()["text/html"]
    assert html.index("<pre") < html.index("<img")              # the answer, then the figure
    ex.update(n=0)
    assert _rows(ex) == ["VBox", "HTML", "HTML"]
    assert "<img" not in ex._repr_mimebundle_()["text/html"]


def test_a_draw_that_draws_nothing_gives_no_figure():
    ex = Explorer(lambda n=1: n, {"n": [1, 2]}, lambda result, fig: None,
                  summary=lambda r: f"n = {r}")
    assert ex.figure() is None and ex.png() == b""
    assert "<img" not in ex._repr_mimebundle_()["text/html"]

    def blank(result, fig):          # what course explorers drew before issue 32
        fig.add_subplot().set_axis_off()

    assert Explorer(lambda n=1: n, {"n": [1, 2]}, blank, summary=str).png() == b""
    drawn = Explorer(lambda n=1: n, {"n": [1, 2]},
                     lambda result, fig: fig.text(0.5, 0.5, str(result)))
    assert drawn.png().startswith(PNG)          # text placed on the figure itself is drawn


def test_explorer_controls_fit_their_labels_and_values_in_projector_mode():
    from kafkasim.viz import style
    from kafkasim.widgets.explorer import CHAR_PX, CHAR_PX_PROJECTOR

    controls = {"placer": ["KRaft striped", "AdminUtils (ZooKeeper era)"],
                "replica.lag.time.max.ms": (10000, 22000, 250)}
    style.set_presentation(True)
    try:
        ex = Explorer(lambda placer="KRaft striped", replica_lag_time_max_ms=10000: 1,
                      controls, lambda r, fig: None, summary=str)
        box = ex.widget
    finally:
        style.set_presentation(False)
    assert "kafkasim-projector" in box._dom_classes
    from kafkasim.course import explore as course_explore

    style.set_presentation(True)
    try:
        titled = course_explore(lambda n=1: str(n), {"n": [1, 2]}, title="t").widget
    finally:
        style.set_presentation(False)
    assert "kafkasim-projector" in titled._dom_classes        # its title in large type too
    assert isinstance(box.children[0], w.HTML) and "font-size: 20px" in box.children[0].value
    placer, lag = (ex._ui["controls"][k] for k in ("placer", "replica.lag.time.max.ms"))
    wide = int(placer.layout.width.removesuffix("px"))
    # the label and the longest option, each at the projector's character width, fit
    assert wide >= (len("placer") + len("AdminUtils (ZooKeeper era)")) * CHAR_PX_PROJECTOR
    assert int(lag.layout.width.removesuffix("px")) >= \
        (len("replica.lag.time.max.ms") + len("22000")) * CHAR_PX_PROJECTOR + 180
    assert placer.layout.max_width == "100%"
    plain = Explorer(lambda placer="KRaft striped", replica_lag_time_max_ms=10000: 1,
                     controls, lambda r, fig: None, summary=str).widget
    assert "kafkasim-projector" not in plain._dom_classes
    assert all(int(c.layout.width.removesuffix("px")) >= 420
               for c in plain.children[0].children)
    assert CHAR_PX < CHAR_PX_PROJECTOR


def test_notebook_text_explorers_save_no_image(notebook_kafka_version):
    """Notebooks 08-13's explorers answer in text: their saved rendering (text/html, what the
    static book and GitHub show) has the answer and no image (it had a blank 936x324 PNG)."""
    from kafkasim.course import explore as course_explore
    from kafkasim.course.checkpoints import restart_view
    from kafkasim.course.elections import ladder_view
    from kafkasim.course.epochs import end_offset_view
    from kafkasim.course.follower_fetch import rack_view
    from kafkasim.course.racks import placement_view
    from kafkasim.course.rebalance import rebalance_view

    for view, controls in ((ladder_view, {"isr": ["", "2"], "elr": ["2", ""]}),
                           (end_offset_view, {"requested_epoch": (0, 5, 1)}),
                           (restart_view, {"fault": ["crash"]}),
                           (placement_view, {"rf": [2, 3]}),
                           (rebalance_view, {"not_led": [1, 2]}),
                           (rack_view, {"client_rack": ["b", "a"]})):
        ex = course_explore(view, controls)
        html = ex._repr_mimebundle_()["text/html"]
        assert "<img" not in html and "<pre" in html, view.__name__
        assert not any(isinstance(x, w.Image) for x in walk(ex.widget)), view.__name__


def test_jump_button_index_matches_a_scan_of_the_rows_on_every_branch():
    """The jump button's per-kind index of row times (``KindTimes``) names the same next event
    as a scan of the branch's rows, after seeks back and forth, a fork, and rows added."""
    from kafkasim.widgets._player_ui import next_event_time

    def scanned(pl, kind):
        return next((t for t, k, *_ in pl.history.trace_rows if t > pl.now and k == kind), None)

    pl = Player(Scenario.named("seed-isr-shrink-expand"), checks=False)
    kinds = pl.event_kinds()
    for t in (pl.start_ms, pl.horizon // 3, pl.horizon // 2, pl.horizon):
        pl.seek(t)
        assert [next_event_time(pl, k) for k in kinds] == [scanned(pl, k) for k in kinds]
    pl.seek(pl.horizon // 3)
    pl.crash(2)                                  # a fork: a new branch, its own rows
    pl.run(3000)
    assert [next_event_time(pl, k) for k in kinds] == [scanned(pl, k) for k in kinds]
    pl.seek(pl.horizon // 4)
    assert next_event_time(pl, "isr") == scanned(pl, "isr")
