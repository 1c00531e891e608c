"""Issue 14: the player's broker tiles. Each shows what its broker believes (the partitions it
leads; the shown partition's leader, leader epoch and ISR from its own ReplicaManager), and a
click crashes a running broker or restarts a stopped one, through the same guarded action path as
the crash/restart buttons (so acting in the past forks). KRaft (the default, 4.3) and ZooKeeper
(3.7) both."""

from __future__ import annotations

import pytest

from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload
from kafkasim.scenarios.scenario import Scenario
from kafkasim.viz import style
from kafkasim.widgets import Player
from kafkasim.widgets._tiles import broker_tiles

VERSIONS = [None, "3.7"]      # None: the default version (KRaft)


def make(version, seed: int = 4, **kw) -> Player:
    c = Cluster(brokers=3, seed=seed, **({} if version is None else {"kafka_version": version}))
    c.create_topic("t", partitions=2, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    RateWorkload(c, p, "t", rate=50, duration_ms=60000)
    pl = Player(c, topic="t", checks=False, **kw)
    pl.run(3000)
    return pl


def expected_lines(c: Cluster, b: int, topic: str, partition: int) -> list[str]:
    """What broker ``b`` believes about ``topic``-``partition``, read from the cluster."""
    v = c.inspect.replica_view(b, topic, partition)
    if v["role"] == "leader":
        return [f"leader, epoch {v['leader_epoch']}", f"ISR {v['isr']}"]
    return [f"follows {v['leader']}, epoch {v['leader_epoch']}"]


@pytest.mark.parametrize("version", VERSIONS, ids=["kraft", "zk"])
def test_tiles_show_what_each_broker_believes(version):
    pl = make(version)
    c = pl.cluster
    assert (c.kraft is not None) == (version is None)
    tiles = pl.broker_tiles()
    assert [t.broker for t in tiles] == sorted(c.brokers)
    for partition in (0, 1):
        pl.select("t", partition)
        for t in pl.broker_tiles():
            assert t.state == "running" and t.action == "crash"
            lines = t.label.splitlines()
            assert lines[0].startswith(f"broker {t.broker} · running")
            for line in expected_lines(c, t.broker, "t", partition):
                assert line in lines, (line, lines)
            led = sorted(tp for tp, part in c.brokers[t.broker].replica_manager.partitions.items()
                         if part.is_leader)
            assert list(t.leads) == led
            assert (("leads " + ", ".join(f"{a}-{b}" for a, b in led)) if led else
                    "leads nothing") in lines
            leader = c.leader("t", partition)
            assert t.color == (style.LEADER if t.broker == leader else "#FFFFFF")
    # every partition has exactly one leader among the tiles
    assert sorted(tp for t in pl.broker_tiles() for tp in t.leads) == [("t", 0), ("t", 1)]


@pytest.mark.parametrize("version", VERSIONS, ids=["kraft", "zk"])
def test_toggle_broker_crashes_then_restarts(version):
    pl = make(version)
    leader = pl.cluster.leader("t", 0)
    assert pl.toggle_broker(leader) == "crash"
    assert pl.cluster.brokers[leader].state == "stopped"
    tile = next(t for t in pl.broker_tiles() if t.broker == leader)
    assert tile.state == "crashed" and tile.action == "restart" and tile.leads == ()
    assert tile.color == style.GREY and "crashed" in tile.label
    assert [a.name for a in pl.history.actions] == ["crash"]
    pl.run(500)
    expiry = pl.cluster.inspect.session_expiry_ms(leader)      # ZooKeeper: the old session's end
    assert pl.toggle_broker(leader) == "restart"
    assert [a.name for a in pl.history.actions] == ["crash", "start"]
    if version is None:            # KRaft: a new incarnation registers at once
        assert pl.cluster.brokers[leader].state == "running"
    else:                          # ZooKeeper: the old session must expire first (Kafka 0.9+)
        due = pl.cluster.inspect.supervised_start_ms(leader)
        assert due is not None and due > pl.now and due == expiry
        assert pl.cluster.brokers[leader].state == "stopped"
        tile = next(t for t in pl.broker_tiles() if t.broker == leader)
        assert "restart pending" in tile.label and f"starts at {due:,} ms" in tile.label
        pl.run(due - pl.now)
        assert pl.cluster.brokers[leader].state == "running"
    tile = next(t for t in pl.broker_tiles() if t.broker == leader)
    assert tile.state == "running" and tile.action == "crash"


@pytest.mark.parametrize("version", VERSIONS, ids=["kraft", "zk"])
def test_clicking_a_broker_in_the_past_forks_and_the_tiles_follow_every_move(version):
    """A click on a broker of the player's stage (``Stage.toggle_broker``) acts through
    ``Player.toggle_broker``; the broker's tile data follows every move."""
    pl = make(version)
    pl.run(5000)
    assert pl.widget is not None
    end = pl.now
    pl.seek(4000)
    assert pl.horizon == end

    def label(b):
        return next(t.label for t in pl.broker_tiles() if t.broker == b)

    pl.stage.toggle_broker(2)          # crash broker 2 at t=4000: the recorded future is gone
    assert pl.cluster.brokers[2].state == "stopped"
    assert pl.horizon == 4000 and [a.name for a in pl.history.actions] == ["crash"]
    assert label(2).startswith("broker 2 · crashed")
    assert pl.stage.code[-1] == "player.crash(2)"
    pl.seek(3000)                      # before the crash: the tile shows it running again
    assert label(2).startswith("broker 2 · running")
    pl.step()
    pl.stage.toggle_broker(2)          # in the past of the crash: another fork, crash at 3000
    assert [a.time_ms for a in pl.history.actions] == [pl.now]
    pl.run(100)
    pl.stage.toggle_broker(2)          # restart
    assert pl.history.actions[-1].name == "start"


def test_a_scenario_fork_from_a_tile_says_which_scripted_steps_are_dropped():
    pl = Player(Scenario.named("seed-isr-shrink-expand"), checks=False)
    pl.seek(600)
    assert pl.toggle_broker(1) == "crash"
    assert "later scripted step(s)" in pl.notice


def test_broker_tiles_without_a_topic_show_the_process_only():
    c = Cluster(brokers=2, seed=1)
    c.run(2000)
    tiles = broker_tiles(c)
    assert [t.broker for t in tiles] == [1, 2]
    assert all(t.leads == () and t.state == "running" for t in tiles)
    assert all(t.label.splitlines()[1] == "leads nothing" for t in tiles)


def test_the_next_event_dropdown_names_kinds_in_the_course_language_and_keeps_the_kind():
    """The "next event" dropdown: in English each option is the trace kind; in Korean a short
    Korean phrase with the kind in brackets; its value stays the kind (what next_event takes),
    and every kind of the trace has a label."""
    from kafkasim.core.events import EVENT_KINDS
    from kafkasim.course import i18n as rt
    from kafkasim.widgets._event_kinds import KIND_LABELS, kind_label

    assert set(KIND_LABELS) == set(EVENT_KINDS)
    try:
        rt.set_language("en")
        en = make(None)
        assert en.widget is not None
        assert all(label == value for label, value in en._ui.kind.options)
        rt.set_language("ko")
        ko = make(None)
        assert ko.widget is not None
        kinds = ko.event_kinds()
        assert [value for _label, value in ko._ui.kind.options] == kinds
        labels = dict(ko._ui.kind.options)
        assert labels[kind_label("hw")] == "hw" and kind_label("hw") == "하이 워터마크 변경 (hw)"
        assert kind_label("isr") == "ISR 변경 커밋 (isr)"
        assert all(label.endswith(f"({value})") and label != value
                   for label, value in ko._ui.kind.options)
        assert kind_label("drop") == "메시지 유실 (drop)"       # not the player's "drop"
        assert kind_label("no_such_kind") == "no_such_kind"
        ko._ui.kind.value = "hw"          # a value is a kind: the jump goes to the next one
        ko.seek(1000)
        before = ko.now
        ko._ui._jump()
        assert ko.now == min(r[0] for r in ko.history.trace_rows if r[1] == "hw" and r[0] > before)
    finally:
        rt.set_language(None)
