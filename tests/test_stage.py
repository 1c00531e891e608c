"""The stage's data and actions without a browser (issue 32): the window JSON is deterministic and
holds a token for every message in flight, each action calls the Cluster (or Player) method a
cell would and shows it as code, bad input gives clear errors, and the text and still picture
show the messages in flight."""

from __future__ import annotations

import json

import pytest
from clusters import make_cluster

from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.exceptions import ClusterError
from kafkasim.widgets import Player, Stage
from kafkasim.widgets._stage_window import in_flight_at, stage_window, window_svg, window_text


def busy_cluster(seed: int = 3) -> Cluster:
    from kafkasim.runtime.workload import RateWorkload

    c = make_cluster(seed=seed, topic="orders")
    RateWorkload(c, c.producer(acks="all"), "orders", rate=50, duration_ms=30_000)
    c.run(2000)
    return c


def at_messages(c: Cluster) -> None:
    """Step until a message is on the wire."""
    while not c.inspect.messages_in_flight():
        c.step()


def test_window_is_deterministic_json_and_leaves_the_cluster_alone():
    a, b = busy_cluster(), busy_cluster()
    now, digest = a.now, a.trace.digest()
    wa, wb = stage_window(a, "orders", 0, 1500), stage_window(b, "orders", 0, 1500)
    assert json.dumps(wa, sort_keys=True) == json.dumps(wb, sort_keys=True)
    assert (a.now, a.trace.digest()) == (now, digest)      # a copy ran, not the cluster
    assert wa["t0"] == now and wa["t1"] == now + 1500
    assert {n["kind"] for n in wa["nodes"]} >= {"broker", "controller", "client"}
    assert wa["frames"][0]["t"] == now and wa["narration"]
    assert all(f["t"] <= g["t"] for f, g in zip(wa["frames"], wa["frames"][1:], strict=False))


def test_every_message_in_flight_is_a_token_with_its_times():
    c = busy_cluster()
    at_messages(c)
    w = stage_window(c, "orders", 0, 500)
    wire = {f["msg_id"]: f for f in c.inspect.messages_in_flight()}
    tokens = {t["id"]: t for t in in_flight_at(w, c.now)}
    assert set(wire) == set(tokens)
    for mid, f in wire.items():
        tok = tokens[mid]
        assert (tok["src"], tok["dst"], tok["type"], tok["sent"]) == \
            (f["src"], f["dst"], f["type"], f["sent_ms"])
        assert tok["recv"] == f["arrives_ms"] and tok["fate"] == "delivered"
        assert tok["fields"].startswith(tok["type"])
    text = window_text(w)
    assert f"Messages in flight at t = {c.now:,} ms: {len(wire)}" in text
    assert all(f"#{mid} " in text for mid in wire)
    svg = window_svg(w)
    assert svg.startswith("<svg") and svg.count('class="token"') == len(wire)


def test_a_click_on_a_broker_crashes_and_restarts_it_through_the_cluster():
    c = busy_cluster()
    stage = Stage(c, name="c")
    t = stage.window["t0"] + 120
    assert stage.toggle_broker(2, at_ms=t) == [f"c.run_to({t})", "c.crash(2)"]
    assert c.now == t and c.brokers[2].state == "stopped"
    assert stage.window["t0"] == t                                 # a new window from there
    assert stage.window["frames"][0]["nodes"]["2"]["state"] == "crashed"
    assert stage.handle({"action": "toggle", "node": 2}) == ["c.start(2)"]
    assert c.brokers[2].state != "stopped"
    assert stage.code[-2:] == ["c.crash(2)", "c.start(2)"]
    stage.handle({"action": "pause", "node": 1})
    assert stage.window["frames"][0]["nodes"]["1"]["state"] == "paused"


def test_a_click_on_a_token_drops_that_message():
    c = busy_cluster()
    stage = Stage(c, name="c")
    tok = next(t for t in stage.window["tokens"] if t["sent"] > stage.window["t0"])
    lines = stage.handle({"action": "drop", "msg_id": tok["id"], "t": tok["sent"] + 0.5})
    assert lines[-1] == f"c.transport.drop(msg_id={tok['id']})"
    assert tok["id"] not in {f["msg_id"] for f in c.inspect.messages_in_flight()}
    row = c.trace.rows[-1]
    assert row[1] == "drop" and row[5][2] == tok["id"] and row[5][3] == "dropped by hand"


def test_produce_and_advance_move_the_cluster_as_a_cell_would():
    c = busy_cluster()
    stage = Stage(c, name="c", window_ms=800)
    t1 = stage.window["t1"]
    lines = stage.produce("hello")
    assert lines[-1] == "producer.send('orders', 'hello', partition=0)"
    assert stage.advance() == [f"c.run_to({t1})"] and c.now == t1


def test_player_stage_acts_through_the_player():
    c = busy_cluster()
    player = Player(c, topic="orders", checks=False)
    stage = player.stage
    assert player.stage is stage
    stage.toggle_broker(1, at_ms=stage.window["t0"] + 50)
    assert stage.code[-1] == "player.crash(1)" and player.cluster.brokers[1].state == "stopped"
    assert "crash(1)" in player.readout_text()
    at_messages(player.cluster)
    stage.refresh()
    mid = player.cluster.inspect.messages_in_flight()[0]["msg_id"]
    stage.drop_message(mid)
    assert stage.code[-1] == f"player.drop_message({mid})"
    assert any(a.name == "drop" for a in player.history.actions)


def test_bad_input_gives_clear_errors():
    c = busy_cluster()
    stage = Stage(c)
    with pytest.raises(ValueError, match="unknown stage action 'fly'"):
        stage.handle({"action": "fly"})
    with pytest.raises(ClusterError, match="Unknown node 9; brokers and controllers are"):
        stage.toggle_broker(9)
    with pytest.raises(ValueError, match="outside the stage's window"):
        stage.toggle_broker(1, at_ms=stage.window["t1"] + 1)
    with pytest.raises(ClusterError, match=r"drop\(msg_id=123456\): no such message in flight"):
        stage.drop_message(123456)
    with pytest.raises(ValueError, match="window_ms must be a whole number"):
        Stage(c, window_ms=0)
    with pytest.raises(TypeError, match="Stage needs a Cluster or a Player"):
        Stage("orders")
    with pytest.raises(ClusterError, match="give no type, src, dst"):
        c.transport.drop("FetchRequest", msg_id=1)
    stage._on_front_end(stage, {"action": "toggle", "node": 9}, [])   # shown, not raised
    assert stage.error.startswith("ClusterError: Unknown node 9")


def test_without_a_front_end_the_stage_shows_text_and_a_still_picture():
    stage = Stage(busy_cluster())
    bundle = stage._repr_mimebundle_()
    assert bundle["text/plain"] == stage.text()
    assert bundle["text/plain"].startswith("Stage at t = ")
    assert "LEADER epoch" in bundle["text/plain"]
    assert "<svg" in bundle["text/html"]
    assert "application/vnd.jupyter.widget-view+json" in bundle


def test_isolated_and_zookeeper_mode_are_shown():
    c = Cluster(3, seed=2, kafka_version="3.7")           # ZooKeeper mode
    c.create_topic("orders", 1, 3)
    c.run(3000)
    stage = Stage(c, name="c")
    assert stage.window["mode"] == "zookeeper"
    assert [n["kind"] for n in stage.window["nodes"]].count("zookeeper") == 1
    controller = c.controller_id()
    assert stage.window["frames"][0]["nodes"][str(controller)]["controller"]
    c.partition_network([1], [2, 3])
    stage.refresh()
    assert stage.window["frames"][0]["nodes"]["1"]["isolated"]
    assert not stage.window["frames"][0]["nodes"]["2"]["isolated"]
    assert "broker 1   running, isolated" in stage.text()
    stage.toggle_broker(3)
    stage.toggle_broker(3)            # a ZooKeeper broker restarts once its session expired
    assert stage.code[-1] == "c.start(3, retry=True)"


def test_a_drag_between_two_nodes_cuts_their_link_and_again_heals():
    c = busy_cluster()
    stage = Stage(c, name="c")
    assert stage.handle({"action": "cut", "node": 1, "to": 3}) == ["c.cut(1, 3)"]
    assert stage.window["frames"][0]["nodes"]["cuts"] == [[1, 3]]
    assert not c.transport.network.can_reach(1, 3)
    assert "links cut: 1 - 3" in stage.text()
    assert stage.cut_link(3, 1) == ["c.heal()"]
    assert stage.window["frames"][0]["nodes"]["cuts"] == [] and c.transport.network.can_reach(1, 3)
    with pytest.raises(ValueError, match="drag from one node to another"):
        stage.cut_link(2, 2)


def test_a_player_stage_has_a_timeline_and_seeks_back():
    player = Player(busy_cluster(), topic="orders", checks=False)
    player.run(3000)
    stage = player.stage
    assert stage.window["t0"] == player.now
    stage.toggle_broker(2)
    tl = stage.window["timeline"]
    assert tl["start"] == player.start_ms and tl["end"] >= player.now
    assert [m["kind"] for m in tl["marks"]] == ["action"]
    back = player.start_ms + 1000
    assert stage.handle({"action": "seek", "t": back}) == [f"player.seek({back})"]
    assert player.now == back and stage.window["t0"] == back
    with pytest.raises(ValueError, match="a Cluster cannot go back"):
        Stage(busy_cluster()).seek(0)


def test_the_window_follows_the_speed_the_front_end_plays_at():
    stage = Stage(busy_cluster(), window_ms=2000)
    w = stage.window
    assert w["t1"] - w["t0"] == 2000                       # from a cell: the whole window
    stage.handle({"action": "refresh", "speed": 0.06})     # ~8 s of watching at 0.06x
    assert stage.window["t1"] - stage.window["t0"] == 480
    stage.handle({"action": "refresh", "speed": 0.001})
    assert stage.window["t1"] - stage.window["t0"] == 250  # never shorter
    stage.handle({"action": "refresh", "speed": 50})
    assert stage.window["t1"] - stage.window["t0"] == 2000  # never longer than window_ms
    watched = Stage(busy_cluster(), window_ms=2000, sized_to_watch=True)   # a player's stage
    assert watched.window["t1"] - watched.window["t0"] == 253   # 8 s at the start speed


def test_a_cluster_without_the_topic_yet_shows_its_nodes():
    c = Cluster(3, seed=1)
    c.run(1000)
    stage = Stage(c)
    assert stage.topic is None and stage.window["topic"] is None
    assert "broker 1" in stage.text() and "LEADER" not in stage.text()
    with pytest.raises(ClusterError, match="no topic to produce to"):
        stage.produce()
    c.create_topic("orders", 1, 3)
    player = Player(c, topic="orders", checks=False)
    player.run(2000)
    player.seek(player.start_ms)          # the topic exists from the start here; seek anyway
    assert player.stage.window["topic"] == "orders"


# -- the stage in the course's language --------------------------------------------------------
def _hangul(text: str) -> bool:
    return any("\uac00" <= ch <= "\ud7a3" for ch in text)


def test_the_stage_speaks_the_course_language_and_english_is_unchanged():
    """Korean: the strings stage.js shows, the node labels, the narration, the text and the still
    picture are Korean; Kafka names stay; the data the browser acts on stays English."""
    from kafkasim.course import i18n as rt
    from kafkasim.widgets.stage import JS_STRINGS

    try:
        rt.set_language("en")
        en = Stage(busy_cluster(), name="c", window_ms=800)
        en.toggle_broker(2)
        assert en.strings == {s: s for s in en.strings} and set(JS_STRINGS) <= set(en.strings)
        assert en.strings["▶ Play"] == "▶ Play"
        assert any(n["text"].startswith("broker ") for n in en.window["narration"])
        assert en.text().startswith("Stage at t = ") and "broker 2   crashed" in en.text()
        assert not any(_hangul(x) for x in [en.text(), en.svg()]
                       + [n["text"] for n in en.window["narration"]])

        rt.set_language("ko")
        ko = Stage(busy_cluster(), name="c", window_ms=800)
        ko.toggle_broker(2)
        assert set(ko.strings) == set(en.strings)
        untranslated = [k for k, v in ko.strings.items() if not _hangul(v)]
        assert untranslated == ["LEO {leo} · HW {hw}", "t = {t} ms: {text}"]   # no words
        assert ko.strings["▶ Play"] == "▶ 재생"
        assert ko.strings["dropped by hand"] == "수동으로 유실시킴"     # a reason, in the tooltip
        w = ko.window
        brokers = [n for n in w["nodes"] if n["kind"] == "broker"]
        assert [n["label"] for n in brokers] == ["브로커 1", "브로커 2", "브로커 3"]
        assert w["narration"] and all(_hangul(n["text"]) for n in w["narration"])
        assert any("FetchRequest" in n["text"] for n in w["narration"])   # Kafka names stay
        assert w["frames"][0]["nodes"]["2"]["state"] == "crashed"        # the data stays English
        assert {t["fate"] for t in w["tokens"]} <= {"delivered", "dropped", "held", "in flight"}
        text = ko.text()
        assert text.startswith("t = ") and "브로커 2   크래시됨" in text and "KRaft 모드" in text
        assert "전송 중인 메시지" in text and "LEO" in text
        assert "브로커" in ko.svg() and "전송 중인 메시지" in ko.svg()
    finally:
        rt.set_language(None)


def test_stage_js_shows_no_english_literal_and_asks_python_for_every_word():
    """Every text, title and ARIA label stage.js sets comes from T("..."), whose keys are exactly
    the strings Python translates (JS_STRINGS); no visible string literal with words is left."""
    import re

    from kafkasim.widgets.stage import JS_STRINGS, STATIC

    js = (STATIC / "stage.js").read_text(encoding="utf-8")
    lit = r'"(?:[^"\\]|\\.)*"'
    keys = {"".join(json.loads(x) for x in re.findall(lit, m.group(1)))
            for m in re.finditer(rf"\bT\(\s*((?:{lit}\s*\+?\s*)+)", js)}
    assert keys == set(JS_STRINGS)
    bare = re.sub(rf"\bT\(\s*(?:{lit}\s*\+?\s*)+", "T(", js)         # the keys gone
    bare = re.sub(r"//[^\n]*", "", bare)                                  # comments gone
    wordy = re.compile(r"[A-Za-z]{2,}")

    def words(expr: str) -> list[str]:
        expr = re.sub(r"\$\{[^}]*\}", "", expr)                      # template fields gone
        expr = re.sub(rf"[=!]==\s*{lit}", "", expr)              # compared, not shown
        expr = re.sub(rf"\w\(\s*{lit}\s*\)", "", expr)          # a key: model.get("code")
        return [s for s in re.findall(rf"{lit}|`[^`]*`", expr) if wordy.search(s)]

    found = []
    for m in re.finditer(r'(?:\btext|\btitle|"aria-label"|"data-empty")\s*:\s*('
                         rf"{lit}|`[^`]*`)", bare):
        found.append(m.group(1))
    for m in re.finditer(r"(?:\.textContent|\.title)\s*=\s*([^;]*);", bare):
        found += words(m.group(1))
    for m in re.finditer(r'setAttribute\(\s*"(?:aria-label|title)"\s*,\s*([^;]*);', bare):
        found += words(m.group(1))
    assert found == []
    css = (STATIC / "stage.css").read_text(encoding="utf-8")
    assert not re.search(r'content:\s*"[^"]*[A-Za-z]{2,}', css)   # the CSS shows no words either


def test_a_quiet_window_reaches_on_to_the_next_thing_that_happens():
    """Once a front end shows the stage, a speed-sized window with fewer than MIN_STOPS
    narrated moments after its start (a quiet stretch) is computed again up to ``window_ms``:
    step goes on in the browser, not to another near-empty window through the kernel; where
    much happens the short window stays, and without a front end nothing changes."""
    from kafkasim.scenarios.scenario import Scenario
    from kafkasim.widgets.stage import MIN_STOPS

    def stops(w):
        return len({n["t"] for n in w["narration"] if w["t0"] < n["t"] <= w["t1"]})

    pl = Player(Scenario.named("jepsen-2013-unsafe"), checks=False)
    stage = pl.stage
    pl.seek(11_100)                       # nothing narrated in the first 253 ms
    assert stage.window["t1"] - stage.window["t0"] == 253   # no front end: as it was (nbval)
    assert stops(stage.window) == 0
    stage.handle({"action": "refresh", "speed": 10 ** -1.5})    # stage.js, once it renders
    w = stage.window
    assert w["t1"] - w["t0"] == stage.window_ms == 2000 and stops(w) >= 1
    pl.seek(20_351)                       # the slider, from now on: the same
    assert stage.window["t1"] - stage.window["t0"] == 2000 and stops(stage.window) >= 1
    busy = Stage(busy_cluster(), window_ms=2000, sized_to_watch=True)   # 50 records/s
    busy.handle({"action": "refresh", "speed": 10 ** -1.5})
    assert busy.window["t1"] - busy.window["t0"] == 253 and stops(busy.window) >= MIN_STOPS


def _still_labels(svg: str) -> list[tuple[float, float, str]]:
    import re

    return [(float(x), float(y), text) for x, y, text in re.findall(
        r'<text x="(-?\d+)" y="(-?\d+)" font-size="11"[^>]*paint-order="stroke">([^<]*)</text>',
        svg)]


def test_still_picture_labels_cover_no_node_box_and_no_other_label():
    """The still SVG (the static book, GitHub) places each message's label as stage.js does:
    never over a node's box or another label, inside the picture; a label with no free place
    is left out (its fields stay in the token's tooltip): two messages at one spot have their
    labels side by side, not drawn over each other (notebook 08's "UpdateMetadata L2 e1")."""
    from kafkasim.scenarios.scenario import Scenario
    from kafkasim.widgets._stage_window import H, W, label_width, node_boxes

    def overlap(a, b):
        return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]

    pl = Player(Scenario.named("seed-isr-shrink-expand"), checks=False)
    shown = 0
    for t in (2_327, 8_533, 10_860, 14_000):
        pl.seek(t)
        w = pl.stage.window
        boxes = node_boxes(w["nodes"])
        for at in range(w["t0"], w["t1"], 29):
            svg = window_svg(w, at)
            labels = [(x, y - 11, x + label_width(s), y + 3) for x, y, s in _still_labels(svg)]
            assert len(labels) <= len(in_flight_at(w, at))
            for i, lab in enumerate(labels):
                assert 0 <= lab[0] and lab[2] <= W and 0 <= lab[1] and lab[3] <= H
                assert not any(overlap(lab, b) for b in boxes), (at, lab)
                assert not any(overlap(lab, other) for other in labels[i + 1:]), (at, lab)
            shown += len(labels)
    assert shown > 20                       # labels are shown where there is room
    twin = dict(w, tokens=[dict(w["tokens"][0], id=1, sent=w["t0"], recv=w["t0"] + 10),
                           dict(w["tokens"][0], id=2, sent=w["t0"], recv=w["t0"] + 10)])
    (x1, y1, s1), (x2, y2, s2) = _still_labels(window_svg(twin, w["t0"] + 5))
    assert s1 == s2 and not overlap((x1, y1 - 11, x1 + label_width(s1), y1 + 3),
                                    (x2, y2 - 11, x2 + label_width(s2), y2 + 3))


def test_a_stage_keeps_the_projector_mode_it_was_made_in():
    """A window sent after Run All may have switched projector mode off again (a notebook's
    last cell): the stage on screen stays as it was made."""
    from kafkasim.viz import style

    style.set_presentation(True)
    try:
        stage = Stage(busy_cluster())
    finally:
        style.set_presentation(False)
    stage.handle({"action": "refresh", "speed": 0.03})
    assert stage.window["presentation"] is True
    assert Stage(busy_cluster()).window["presentation"] is False


def test_a_window_ends_where_the_recorded_story_changes_the_cluster():
    """A window runs a copy of the cluster, which does not know the story's next step: the
    window ends at that step, and the next window (from the recorded state) shows it."""
    from kafkasim.widgets._stage_window import frame_at

    def story(c):
        c.run(1500)
        c.crash(3)
        c.run(1500)

    player = Player(busy_cluster(), topic="orders", checks=False, story=story)
    crash_at = player.start_ms + 1500
    assert player.history.next_change(player.start_ms) == crash_at
    player.seek(crash_at - 100)
    stage = player.stage
    assert stage.window["t1"] == crash_at
    assert frame_at(stage.window, crash_at)["nodes"]["3"]["state"] == "running"
    player.seek(crash_at)
    assert frame_at(stage.window, crash_at)["nodes"]["3"]["state"] == "crashed"
    assert player.history.next_change(crash_at) is None
    # a fork in the past drops the story's later steps and what it recorded of them
    player.seek(crash_at - 500)
    stage.toggle_broker(1)
    assert all(c < crash_at for c in player.history.changes)
    assert player.history.next_change(player.now) is None


def test_a_window_running_low_is_extended_in_the_background_without_moving_the_cluster():
    """stage.js says once that it shows the stage ("watch": no window back, no round trip
    per display); when the learner steps or plays in a window with few steps left it asks for
    the same window reaching further
    ("extend"): same start, later end, the cluster unmoved, marked ``extended`` so the front end
    plays on from where it is. A stale or needless extension sends nothing."""
    stage = Stage(busy_cluster(), window_ms=2000, sized_to_watch=True)
    serial, now = stage.window["serial"], stage.cluster.now
    assert stage.handle({"action": "watch", "speed": 10 ** -1.5}) == []
    assert stage.window["serial"] == serial and stage._watched          # nothing sent back
    w = stage.window
    assert w["t1"] - w["t0"] == 253 and w["more"] is True and w["extended"] is False
    assert stage.handle({"action": "extend", "t0": w["t0"] - 1}) == []    # stale: nothing
    assert stage.window["serial"] == serial
    assert stage.handle({"action": "extend", "t0": w["t0"], "speed": 10 ** -1.5}) == []
    x = stage.window
    assert x["serial"] == serial + 1 and x["extended"] is True and x["more"] is False
    assert (x["t0"], x["t1"]) == (w["t0"], w["t0"] + 2000) and stage.cluster.now == now
    assert x["tokens"][:3] == w["tokens"][:3] and len(x["narration"]) > len(w["narration"])
    assert stage.extend(x["t0"]) is False and stage.window["serial"] == serial + 1  # as far
    stage.toggle_broker(2)                      # an action: a window of its own, not extended
    assert stage.window["extended"] is False and stage.window["more"] is True


def test_a_long_state_in_the_still_picture_leaves_the_broker_name_alone():
    """A leader paused and cut off: its state ('❚❚ 일시 정지됨 · 격리됨') does not fit beside
    '브로커 1 ★ 리더' in the still picture's box, so it sits on the box's top edge (as stage.js
    places it); a short state stays on the name's line."""
    import re

    from kafkasim.course import i18n as rt
    from kafkasim.widgets._stage_window import _svg_broker

    node = {"x": 300, "y": 200, "label": "브로커 1"}
    red = r'<text x="[\d.]+" y="([\d.]+)"[^>]*fill="#B00"[^>]*>([^<]*)<'
    head_y = r'<text x="[\d.]+" y="([\d.]+)"[^>]*font-weight="bold" text-anchor="start"'
    try:
        rt.set_language("ko")
        crowded = _svg_broker(node, {"state": "paused", "role": "leader", "isolated": True})
        alone = _svg_broker(node, {"state": "paused", "role": "follower"})
    finally:
        rt.set_language(None)
    (y, text), = re.findall(red, crowded)
    assert "격리됨" in text and float(y) < float(re.search(head_y, crowded).group(1)) - 12
    (y, text), = re.findall(red, alone)
    assert text == "❚❚ 일시 정지됨" and y == re.search(head_y, alone).group(1)
