"""No class in the kafkasim package grows to 60 members or more.

A class's members are what ``vars(cls)`` holds for it -- its methods, properties and class
attributes (``__slots__`` entries included) -- plus the instance attributes its methods assign
(``self.x = ...``), and the same of every base class defined in the package (a mixin does not
make a class smaller). Counted with ``ast`` so nothing is imported. A class that grows past the
limit holds more than one job: give the other job a class of its own."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import kafkasim

LIMIT = 60
PACKAGE = Path(kafkasim.__file__).parent
#: classes still at or above the limit, each with the size it may not grow past (issue 29
#: left them for their owners' steps): shrink the number as a class is split, drop the entry
#: once it is under the limit
KNOWN_OFFENDERS = {
}


def _own_members(node: ast.ClassDef) -> set[str]:
    names: set[str] = set()
    for item in node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(item.name)
        elif isinstance(item, ast.Assign):
            for target in item.targets:
                if isinstance(target, ast.Name):
                    names.add(target.id)
            if any(isinstance(t, ast.Name) and t.id == "__slots__" for t in item.targets) and \
                    isinstance(item.value, (ast.Tuple, ast.List)):
                names.update(e.value for e in item.value.elts if isinstance(e, ast.Constant))
        elif isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
            names.add(item.target.id)
    for fn in node.body:
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.args.args:
            continue
        self_name = fn.args.args[0].arg
        for sub in ast.walk(fn):
            targets = sub.targets if isinstance(sub, ast.Assign) else \
                [sub.target] if isinstance(sub, (ast.AnnAssign, ast.AugAssign)) else []
            for t in targets:
                for el in (t.elts if isinstance(t, ast.Tuple) else [t]):
                    if isinstance(el, ast.Attribute) and isinstance(el.value, ast.Name) and \
                            el.value.id == self_name:
                        names.add(el.attr)
    return names


@cache
def class_members() -> dict[str, set[str]]:
    """``module.Class`` -> its member names (its package base classes' included); parsed once
    per process (the tests only read it)."""
    classes: dict[str, tuple[ast.ClassDef, str]] = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        module = ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                classes[f"{module}.{node.name}"] = (node, module)
    by_name: dict[str, list[str]] = {}
    for qual in classes:
        by_name.setdefault(qual.rsplit(".", 1)[1], []).append(qual)

    def members(qual: str, seen: frozenset = frozenset()) -> set[str]:
        node, _module = classes[qual]
        names = _own_members(node)
        for base in node.bases:
            base_name = base.id if isinstance(base, ast.Name) else \
                base.attr if isinstance(base, ast.Attribute) else None
            for other in by_name.get(base_name, ()):
                if other not in seen and other != qual:
                    names |= members(other, seen | {qual})
        return names

    return {qual: members(qual) for qual in classes}


def test_no_class_has_sixty_members_or_more():
    sizes = {qual: len(names) for qual, names in class_members().items()}
    offenders = sorted(((n, q) for q, n in sizes.items()
                        if n >= LIMIT and n > KNOWN_OFFENDERS.get(q, LIMIT - 1)), reverse=True)
    listing = ", ".join(f"{q} ({n})" for n, q in offenders)
    assert not offenders, f"classes with >= {LIMIT} members: {listing}"


def test_known_offenders_are_still_offenders_at_their_recorded_size():
    """An entry of KNOWN_OFFENDERS goes (or its number drops) as soon as its class shrinks."""
    sizes = {qual: len(names) for qual, names in class_members().items()}
    stale = {q: (limit, sizes.get(q)) for q, limit in KNOWN_OFFENDERS.items()
             if sizes.get(q) != limit}
    assert not stale, f"update KNOWN_OFFENDERS (recorded, now): {stale}"


def test_the_counter_sees_methods_class_attributes_and_instance_attributes():
    tree = ast.parse("class A:\n    x = 1\n    __slots__ = ('s',)\n"
                     "    def __init__(self):\n        self.a = 1\n        self.b, self.c = 2, 3\n"
                     "    @property\n    def p(self):\n        return self.a\n")
    assert _own_members(tree.body[0]) == {"x", "__slots__", "s", "__init__", "a", "b", "c", "p"}
