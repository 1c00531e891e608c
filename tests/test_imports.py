"""The package is laid out by layer, each importing only from the layers below it (imports inside
functions included), and has no import cycles, so each layer can be read and tested from the bottom
up. The layers, lowest first, are ``LAYERS`` (docs/architecture.md draws them). The one declared
cycle: the experiments runner hands a sweep to Spark (``experiments.distributed``) only when asked,
and the distributed side calls the runner back on the executors."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kafkasim"
#: The package's layers, lowest first: a module may import from its own layer and those before it.
LAYERS = (
    "settings",     # configs, versions, modes, limits, façade errors, Java helpers
    "core",         # the data path: rules, Partition, ReplicaManager, fetcher, sessions, log
    "control",      # ZooKeeper and its controller, the KRaft quorum and controller, placement
    "runtime",      # engine, network, broker shell, clients, the Cluster façade, trace, metrics
    "observe",      # invariant checkers, history, snapshots
    "scenarios",    # scenario files and their schema
    "viz",          # teaching: drawings
    "widgets",      # teaching: the player and explorers
    "course",       # teaching: the notebooks' helpers and checks
    "experiments",  # seeded sweeps, Spark
    "tools",        # the kafkasim command, the fuzzer, the Spark cluster launcher
)
ALLOWED_CYCLES = [
    {"kafkasim.experiments.distributed", "kafkasim.experiments.runner",
     "kafkasim.experiments.spec"},
]


def _modules() -> dict[str, Path]:
    mods = {}
    for p in PACKAGE.rglob("*.py"):
        parts = p.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        mods[name] = p
    return mods


def _imports(path: Path, mods: dict[str, Path]) -> set[str]:
    tree = ast.parse(path.read_text())
    for node in ast.walk(tree):   # typing-only imports are not run
        if isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING":
            node.body = []
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and \
                node.module.startswith("kafkasim"):
            for a in node.names:
                full = f"{node.module}.{a.name}"
                out.add(full if full in mods else node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("kafkasim")}
    return {m for m in out if m in mods}


def _cycles(graph: dict[str, set[str]]) -> list[set[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = set()
            while True:
                w = stack.pop()
                on.discard(w)
                comp.add(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


@cache
def _graph() -> dict[str, set[str]]:
    """module -> the package modules it imports (itself left out); parsed once per process (the
    tests only read it)."""
    mods = _modules()
    return {m: _imports(p, mods) - {m} for m, p in mods.items()}


def test_no_import_cycles():
    graph = _graph()
    unexpected = [c for c in _cycles(graph) if c not in ALLOWED_CYCLES]
    assert not unexpected, f"import cycles: {[sorted(c) for c in unexpected]}"


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [{"a", "b"}]


def test_versions_and_config_and_cluster_and_consumer_are_not_cyclic():
    mods = _modules()
    assert "kafkasim.settings.config" not in _imports(mods["kafkasim.settings.versions"], mods)
    consumer = mods["kafkasim.runtime.clients.consumer"]
    assert "kafkasim.runtime.cluster" not in _imports(consumer, mods)


def _layer(module: str) -> int | None:
    """The index in LAYERS of a module's layer; None for the package root (``__version__``)."""
    parts = module.split(".")
    if len(parts) == 1:
        return None
    assert parts[1] in LAYERS, f"{module} is in no layer: put it in one of {LAYERS}"
    return LAYERS.index(parts[1])


def test_every_module_sits_in_a_layer_and_imports_only_from_below():
    upward = []
    for m, deps in sorted(_graph().items()):
        mine = _layer(m)
        for dep in sorted(deps):
            theirs = _layer(dep)
            if mine is not None and theirs is not None and theirs > mine:
                upward.append(f"{m} ({LAYERS[mine]}) imports {dep} ({LAYERS[theirs]})")
    assert not upward, "upward imports:\n  " + "\n  ".join(upward)


def test_the_layer_check_sees_an_upward_import():
    assert _layer("kafkasim.core.partition") < _layer("kafkasim.runtime.broker")
    assert _layer("kafkasim") is None


def test_docs_architecture_draws_todays_modules():
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "architecture", PACKAGE.parent / "scripts" / "architecture.py")
    arch = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(arch)
    assert arch.OUT.read_text(encoding="utf-8") == arch.render(), \
        "docs/architecture.md is out of date: run .venv/bin/python scripts/architecture.py"
