"""The package has no import cycles (imports inside functions included), so each layer can be read
and tested from the bottom up. The one exception is declared: the experiments runner hands a sweep
to Spark (``experiments.distributed``) only when asked, and the distributed side calls the runner
back on the executors."""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "kafkasim"
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


def test_no_import_cycles():
    mods = _modules()
    graph = {m: _imports(p, mods) - {m} for m, p in mods.items()}
    unexpected = [c for c in _cycles(graph) if c not in ALLOWED_CYCLES]
    assert not unexpected, f"import cycles: {[sorted(c) for c in unexpected]}"


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [{"a", "b"}]


def test_versions_and_config_and_cluster_and_consumer_are_not_cyclic():
    mods = _modules()
    assert "kafkasim.config" not in _imports(mods["kafkasim.versions"], mods)
    assert "kafkasim.cluster" not in _imports(mods["kafkasim.clients.consumer"], mods)
