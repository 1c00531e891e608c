"""The protocol core's boundaries, checked on the source with ``ast``.

* ``Partition``, ``ReplicaManager`` and ``ReplicaFetcherThread`` type their ``ctx`` with a Protocol
  of ``kafkasim.core.interfaces`` and use no ``ctx.<name>`` the Protocol does not declare, so a
  new context (``FakeContext``, a notebook's own) only has to implement the Protocol.
* The core imports nothing from the layers above it (broker, cluster, course, viz, widgets), not
  even for type checking.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kafkasim
from kafkasim.core.fake import FakeContext
from kafkasim.runtime.cluster import Cluster

ROOT = Path(kafkasim.__file__).parent
INTERFACES = ROOT / "core" / "interfaces.py"

CTX_PROTOCOLS = {
    "core/partition.py": "PartitionContext",
    "core/replica_manager.py": "ReplicaManagerContext",
    "core/fetcher.py": "FetcherContext",
    "core/alter_partition_manager.py": "AlterPartitionContext",
}

CORE_MODULES = (
    "core/rules.py", "core/partition.py", "core/replica_manager.py",
    "core/fetcher.py", "core/alter_partition_manager.py", "core/messages.py",
    "core/interfaces.py", "core/fake.py",
    "core/log.py", "core/leader_epoch.py", "core/checkpoint.py",
)
FORBIDDEN = ("kafkasim.runtime.broker", "kafkasim.runtime.cluster", "kafkasim.course",
             "kafkasim.viz", "kafkasim.widgets")


def _tree(rel: str | Path) -> ast.Module:
    path = rel if isinstance(rel, Path) else ROOT / rel
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def _declared(protocol: str) -> set[str]:
    """Names a Protocol of interfaces.py declares, with those of its bases."""
    classes = {n.name: n for n in _tree(INTERFACES).body if isinstance(n, ast.ClassDef)}
    names: set[str] = set()
    todo = [protocol]
    while todo:
        cls = classes[todo.pop()]
        for item in cls.body:
            if isinstance(item, ast.FunctionDef):
                names.add(item.name)
            elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                names.add(item.target.id)
        todo += [b.id for b in cls.bases if isinstance(b, ast.Name) and b.id in classes]
    return names


def _ctx_uses(tree: ast.Module) -> dict[str, int]:
    """ctx.<name> -> first line using it."""
    uses: dict[str, int] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) \
                and node.value.id == "ctx":
            uses.setdefault(node.attr, node.lineno)
    return uses


@pytest.mark.parametrize("module, protocol", sorted(CTX_PROTOCOLS.items()))
def test_core_uses_only_what_its_context_protocol_declares(module, protocol):
    declared = _declared(protocol)
    undeclared = {name: line for name, line in _ctx_uses(_tree(module)).items()
                  if name not in declared}
    assert not undeclared, (f"{module} uses ctx attributes {protocol} does not declare "
                            f"(name: line): {undeclared}")


@pytest.mark.parametrize("module, protocol", sorted(CTX_PROTOCOLS.items()))
def test_every_ctx_parameter_is_typed_with_the_protocol(module, protocol):
    untyped = []
    for node in ast.walk(_tree(module)):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for arg in node.args.args + node.args.kwonlyargs:
                if arg.arg == "ctx" and (arg.annotation is None
                                         or ast.unparse(arg.annotation) != protocol):
                    untyped.append((node.name, node.lineno))
    assert not untyped, f"{module}: ctx not annotated as {protocol} in {untyped}"


@pytest.mark.parametrize("module", CORE_MODULES)
def test_core_imports_nothing_from_the_layers_above(module):
    bad = []
    for node in ast.walk(_tree(module)):   # anywhere, TYPE_CHECKING blocks included
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        else:
            continue
        bad += [(n, node.lineno) for n in names
                if any(n == f or n.startswith(f + ".") for f in FORBIDDEN)]
    assert not bad, f"{module} imports from {FORBIDDEN}: {bad}"


@pytest.mark.parametrize("protocol", sorted(set(CTX_PROTOCOLS.values())))
def test_broker_and_fake_context_implement_the_protocols(protocol):
    broker = Cluster(brokers=1, seed=1).brokers[1]
    fake = FakeContext()
    for ctx in (broker, fake):
        missing = sorted(n for n in _declared(protocol) if not hasattr(ctx, n))
        assert not missing, f"{type(ctx).__name__} lacks {protocol} members {missing}"
