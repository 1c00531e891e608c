"""The engine is sealed: its event heap (``_queue``) and sequence counter (``_seq``) are touched
only by ``kafkasim/runtime/engine.py``; everyone else schedules and reads through its public methods
(``schedule``, ``schedule_at``, ``schedule_args_at``, ``peek``, ``peek_time``, ``pending``,
``pending_of``, ``pending_events``), which keep the (time_ms, seq) order."""

from __future__ import annotations

import ast
from pathlib import Path

from kafkasim.runtime.engine import Engine, PendingEvent

ROOT = Path(__file__).resolve().parent.parent
ENGINE = ROOT / "kafkasim" / "engine.py"
PRIVATE = {"_queue", "_seq"}


def _engine_subclasses(tree: ast.Module) -> set[str]:
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.ClassDef)
            and any(getattr(b, "id", getattr(b, "attr", None)) == "Engine" for b in n.bases)}


def test_nobody_outside_the_engine_touches_its_queue():
    offenders = []
    for folder in ("kafkasim", "tests", "benchmarks", "scripts"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path == ENGINE:
                continue
            tree = ast.parse(path.read_text(encoding="utf-8"))
            subclasses = _engine_subclasses(tree)
            for cls in ast.walk(tree):
                inside_subclass = isinstance(cls, ast.ClassDef) and cls.name in subclasses
                for node in ast.walk(cls) if inside_subclass or cls is tree else ():
                    if isinstance(node, ast.Attribute) and node.attr in PRIVATE and (
                            inside_subclass or "engine" in ast.unparse(node.value).lower()):
                        offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert not offenders, f"the engine's queue touched outside engine.py: {sorted(set(offenders))}"


def test_schedule_args_at_keeps_time_then_sequence_order():
    e = Engine(seed=1)
    seen = []
    e.on("x", lambda *args: seen.append(args))
    e.schedule_at(5, "x", "a")
    e.schedule_args_at(5, "x", ("b",))
    e.schedule(2, "x", "c")
    e.schedule_args_at(1, "x", ("d", 1))
    assert sorted(e.pending_events()) == [
        PendingEvent(1, 3, "x", ("d", 1)), PendingEvent(2, 2, "x", ("c",)),
        PendingEvent(5, 0, "x", ("a",)), PendingEvent(5, 1, "x", ("b",))]
    e.run()
    assert seen == [("d", 1), ("c",), ("a",), ("b",)] and e.pending_events() == []
