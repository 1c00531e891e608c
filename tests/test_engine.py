"""Behaviour tests for kafkasim.runtime.engine: event order, run/step semantics, errors,
snapshots."""

from __future__ import annotations

import pickle

import pytest

from kafkasim.runtime.engine import Engine, SimulationError


class Recorder:
    """Handlers that log (time, kind, args) and are picklable (module-level class)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.log: list[tuple] = []
        engine.on("a", self.a)
        engine.on("b", self.b)

    def a(self, *args) -> None:
        self.log.append((self.engine.now, "a", args))

    def b(self, *args) -> None:
        self.log.append((self.engine.now, "b", args))


class Chain:
    """A self-rescheduling event that draws from the engine's RNG (for snapshot tests)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.log: list[tuple[int, int, float]] = []
        engine.on("tick", self.tick)
        engine.on("spawn", self.spawn)

    def tick(self, n: int) -> None:
        draw = self.engine.rng.random()
        self.log.append((self.engine.now, n, draw))
        self.engine.schedule(self.engine.rng.randint(0, 7), "tick", n + 1)

    def spawn(self, n: int) -> None:
        self.log.append((self.engine.now, -n, self.engine.rng.random()))
        self.engine.schedule(self.engine.rng.randint(1, 20), "spawn", n + 1)


def _boom(*args) -> None:
    raise KeyError("broken handler")


# ------------------------------------------------------------------------------ ordering


def test_events_run_in_time_order_regardless_of_scheduling_order():
    e = Engine(seed=1)
    rec = Recorder(e)
    e.schedule(30, "a", 3)
    e.schedule(10, "a", 1)
    e.schedule(20, "b", 2)
    e.run()
    assert rec.log == [(10, "a", (1,)), (20, "b", (2,)), (30, "a", (3,))]


def test_ties_at_the_same_millisecond_run_in_scheduling_order():
    e = Engine(seed=1)
    rec = Recorder(e)
    # interleave schedule() and schedule_at() at the same time: the global seq decides
    e.schedule(5, "b", 1)
    e.schedule_at(5, "a", 2)
    e.schedule(5, "a", 3)
    e.schedule_at(5, "b", 4)
    e.schedule(4, "b", 0)
    e.run()
    assert [args[0] for _t, _k, args in rec.log] == [0, 1, 2, 3, 4]
    assert [t for t, _k, _a in rec.log] == [4, 5, 5, 5, 5]


def test_schedule_returns_increasing_sequence_numbers():
    e = Engine()
    Recorder(e)
    seqs = [e.schedule(0, "a"), e.schedule_at(0, "a"), e.schedule(9, "b")]
    assert seqs == sorted(seqs) and len(set(seqs)) == 3


def test_event_scheduled_by_a_handler_at_zero_delay_runs_after_already_queued_ties():
    e = Engine()
    log = []

    def first():
        log.append("first")
        e.schedule(0, "late")

    e.on("first", first)
    e.on("other", lambda: log.append("other"))
    e.on("late", lambda: log.append("late"))
    e.schedule(1, "first")
    e.schedule(1, "other")
    e.run(until=1)
    assert log == ["first", "other", "late"]


# ------------------------------------------------------------------------------ run / step


def test_run_until_runs_events_at_exactly_until_and_sets_the_clock():
    e = Engine()
    rec = Recorder(e)
    e.schedule(100, "a", "at-until")
    e.schedule(101, "a", "after")
    n = e.run(until=100)
    assert n == 1
    assert rec.log == [(100, "a", ("at-until",))]
    assert e.now == 100
    assert e.pending() == 1
    assert e.peek_time() == 101


def test_run_until_advances_the_clock_past_the_last_event():
    e = Engine()
    Recorder(e)
    e.schedule(10, "a")
    e.run(until=250)
    assert e.now == 250
    # an empty queue still moves the clock
    e.run(until=400)
    assert e.now == 400
    assert e.pending() == 0


def test_run_until_in_the_past_never_moves_the_clock_back():
    e = Engine()
    Recorder(e)
    e.run(until=50)
    e.run(until=20)
    assert e.now == 50


def test_run_without_until_drains_the_queue_and_leaves_clock_at_last_event():
    e = Engine()
    rec = Recorder(e)
    e.schedule(7, "a")
    e.schedule(3, "b")
    assert e.run() == 2
    assert e.now == 7
    assert len(rec.log) == 2
    assert e.events_processed == 2


def test_run_with_max_events_stops_early_and_does_not_jump_to_until():
    e = Engine()
    rec = Recorder(e)
    for t in (1, 2, 3, 4):
        e.schedule(t, "a", t)
    assert e.run(until=100, max_events=2) == 2
    assert [a[0] for _t, _k, a in rec.log] == [1, 2]
    assert e.now == 2
    assert e.pending() == 2


def test_step_runs_exactly_one_event_and_reports_an_empty_queue():
    e = Engine()
    rec = Recorder(e)
    e.schedule(5, "a", 1)
    e.schedule(5, "b", 2)
    assert e.step() is True
    assert rec.log == [(5, "a", (1,))]
    assert e.now == 5 and e.pending() == 1
    assert e.step() is True
    assert e.step() is False
    assert e.events_processed == 2


def test_schedule_relative_to_the_current_clock():
    e = Engine()
    rec = Recorder(e)
    e.run(until=1000)
    e.schedule(5, "a")
    e.run()
    assert rec.log == [(1005, "a", ())]


# ------------------------------------------------------------------------------ errors


def test_schedule_in_the_past_raises():
    e = Engine()
    Recorder(e)
    with pytest.raises(ValueError, match="in the past"):
        e.schedule(-1, "a")
    assert e.pending() == 0


def test_schedule_at_a_past_time_is_clamped_to_now():
    e = Engine()
    rec = Recorder(e)
    e.run(until=500)
    e.schedule_at(100, "a")
    e.run()
    assert rec.log == [(500, "a", ())]


def test_seed_must_be_an_int():
    with pytest.raises(TypeError, match="seed"):
        Engine(seed="1")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        Engine(seed=True)


@pytest.mark.parametrize("driver", ["run", "step"])
def test_failing_handler_raises_simulation_error_naming_time_event_and_seed(driver):
    e = Engine(seed=4242)
    Recorder(e)
    e.on("boom", _boom)
    e.schedule(3, "a")
    e.schedule(17, "boom", "payload", 9)
    with pytest.raises(SimulationError) as info:
        if driver == "run":
            e.run()
        else:
            while e.step():
                pass
    msg = str(info.value)
    assert "t=17 ms" in msg
    assert "boom" in msg and "'payload'" in msg
    assert "seed=4242" in msg
    assert "KeyError" in msg and "broken handler" in msg
    assert isinstance(info.value.__cause__, KeyError)
    assert e.now == 17


def test_unregistered_event_kind_is_a_simulation_error():
    e = Engine(seed=3)
    e.schedule(1, "nobody-handles-this")
    with pytest.raises(SimulationError, match="nobody-handles-this"):
        e.run()


def test_simulation_error_from_a_nested_handler_is_not_rewrapped():
    e = Engine(seed=1)

    def inner():
        raise SimulationError("original message")

    e.on("x", inner)
    e.schedule(0, "x")
    with pytest.raises(SimulationError) as info:
        e.run()
    assert str(info.value) == "original message"


# ------------------------------------------------------------------------------ determinism


def _chain_engine(seed: int) -> tuple[Engine, Chain]:
    e = Engine(seed=seed)
    ch = Chain(e)
    e.schedule(0, "tick", 0)
    e.schedule(0, "spawn", 1)
    return e, ch


def test_same_seed_same_run_different_seed_different_run():
    e1, c1 = _chain_engine(11)
    e2, c2 = _chain_engine(11)
    e3, c3 = _chain_engine(12)
    for e in (e1, e2, e3):
        e.run(until=300)
    assert c1.log == c2.log
    assert c1.log != c3.log


def test_pickle_snapshot_continues_identically():
    e, ch = _chain_engine(99)
    e.run(until=200)
    blob = pickle.dumps((e, ch))
    e2, ch2 = pickle.loads(blob)
    assert e2.now == e.now == 200
    assert e2.pending() == e.pending()
    before = len(ch.log)
    assert ch2.log == ch.log

    e.run(until=600)
    e2.run(until=600)
    assert len(ch.log) > before + 10  # the continuation really ran
    assert ch2.log == ch.log            # same events, same times, same RNG draws
    assert e2.events_processed == e.events_processed
    # the RNG state itself was carried over, not re-seeded
    assert e2.rng.random() == e.rng.random()
    assert e2.seed == 99


def test_snapshot_is_independent_of_the_original():
    e, ch = _chain_engine(5)
    e.run(until=50)
    e2, ch2 = pickle.loads(pickle.dumps((e, ch)))
    e.run(until=500)
    assert e2.now == 50
    assert len(ch2.log) < len(ch.log)
    # the restored RNG continues mid-stream: it is not re-seeded from the seed
    assert ch2.log
    e3, _ = pickle.loads(pickle.dumps((e2, ch2)))
    nxt = e3.rng.random()
    assert nxt == e2.rng.random()
    assert nxt != Engine(seed=5).rng.random()


# ------------------------------------------------------------------------------ public hooks
@pytest.mark.parametrize("driver", ["run", "step"])
def test_listeners_run_after_every_event_in_order_with_time_kind_and_args(driver):
    e = Engine(seed=1)
    rec = Recorder(e)
    seen: list[tuple] = []
    e.add_listener(lambda t, kind, args: seen.append(("first", t, kind, args, len(rec.log))))
    e.add_listener(lambda t, kind, args: seen.append(("second", t, kind, args)))
    e.schedule(5, "a", 1)
    e.schedule(2, "b", "x", 2)
    if driver == "run":
        assert e.run() == 2
    else:
        while e.step():
            pass
    # after the handler (it has logged), every listener, in the order added
    assert seen == [("first", 2, "b", ("x", 2), 1), ("second", 2, "b", ("x", 2)),
                    ("first", 5, "a", (1,), 2), ("second", 5, "a", (1,))]


def test_a_listener_added_by_a_handler_sees_the_rest_of_the_run_and_can_be_removed():
    e = Engine(seed=1)
    seen: list[int] = []

    def listener(t, kind, args):
        seen.append(t)

    e.on("add", lambda: e.add_listener(listener))
    e.on("tick", lambda: None)
    e.schedule(1, "add")
    for t in (2, 3):
        e.schedule(t, "tick")
    e.run(until=3)
    assert seen == [2, 3] and e.listeners == (listener,)    # the events after the one adding it
    e.remove_listener(listener)
    e.remove_listener(listener)      # a no-op when absent
    e.schedule(1, "tick")
    e.run()
    assert seen == [2, 3] and e.listeners == ()


@pytest.mark.parametrize("driver", ["run", "step"])
def test_a_failing_listener_stops_the_run_like_a_failing_handler(driver):
    e = Engine(seed=9)
    Recorder(e)
    e.add_listener(_boom)
    e.schedule(4, "a", "payload")
    with pytest.raises(SimulationError, match="t=4 ms") as info:
        e.run() if driver == "run" else e.step()
    assert isinstance(info.value.__cause__, KeyError) and "seed=9" in str(info.value)


def test_peek_names_the_next_event_without_running_it():
    e = Engine(seed=1)
    rec = Recorder(e)
    assert e.peek() is None
    e.schedule(7, "b", "late")
    seq = e.schedule(3, "a", "early")
    nxt = e.peek()
    assert (nxt.time_ms, nxt.seq, nxt.kind, nxt.args) == (3, seq, "a", ("early",))
    assert rec.log == [] and e.now == 0 and e.pending() == 2 and e.scheduled == 2
    e.step()
    assert e.peek().kind == "b" and rec.log == [(3, "a", ("early",))]


def test_a_pickled_engine_carries_no_listeners():
    e = Engine(seed=5)
    Recorder(e)
    seen: list[int] = []
    e.add_listener(lambda t, kind, args: seen.append(t))    # not even picklable
    e.schedule(1, "a")
    copy = pickle.loads(pickle.dumps(e))
    assert copy.listeners == () and e.listeners != ()
    copy.run()
    assert seen == []


def test_a_handler_registered_while_listening_is_followed_too_and_unwrapped_after():
    e = Engine(seed=2)
    seen: list[str] = []
    calls: list[str] = []

    def listener(t, kind, args):
        seen.append(kind)

    e.add_listener(listener)
    e.on("late", lambda: calls.append("late"))
    e.schedule(1, "late")
    e.run()
    assert calls == ["late"] and seen == ["late"]
    e.remove_listener(listener)
    e.schedule(1, "late")
    e.run()
    assert calls == ["late", "late"] and seen == ["late"]
