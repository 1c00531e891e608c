"""The core data path stays readable (issue 29, "a core you can read in an hour"): no function in
its modules is longer than 60 lines or above cyclomatic complexity 15 (``radon cc``), and no object
is built field by field through ``object.__new__``."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from radon.complexity import cc_visit

ROOT = Path(__file__).resolve().parents[1] / "kafkasim"
CORE = sorted((ROOT / "core").glob("*.py"))   # the data path package, every module of it
MAX_LINES = 60
MAX_COMPLEXITY = 15


def _functions(block, prefix=""):
    """Every function radon sees in ``block``: methods, nested functions and closures."""
    for method in getattr(block, "methods", ()):
        yield from _functions(method)
    for inner in getattr(block, "closures", ()):
        yield from _functions(inner)
    if not hasattr(block, "methods"):   # a function or method (a class is only a container)
        yield block
    for inner in getattr(block, "inner_classes", ()):
        yield from _functions(inner)


def _all_functions(path: Path) -> list:
    """Every function of the module once (radon lists methods both alone and in their class)."""
    seen = {}
    for block in cc_visit(path.read_text()):
        for fn in _functions(block):
            seen[(fn.fullname, fn.lineno)] = fn
    return list(seen.values())


def _offenders(path: Path) -> list[str]:
    out = []
    for fn in _all_functions(path):
        lines = fn.endline - fn.lineno + 1
        if lines > MAX_LINES or fn.complexity > MAX_COMPLEXITY:
            out.append(f"{path.name}:{fn.lineno} {fn.fullname}: {lines} lines, "
                       f"complexity {fn.complexity}")
    return out


@pytest.mark.parametrize("path", [p for p in CORE if p.exists()], ids=lambda p: p.name)
def test_short_simple_functions(path: Path) -> None:
    assert _offenders(path) == []


@pytest.mark.parametrize("path", [p for p in CORE if p.exists()], ids=lambda p: p.name)
def test_no_object_new(path: Path) -> None:
    hits = [f"{path.name}:{i}: {line.strip()}"
            for i, line in enumerate(path.read_text().splitlines(), 1)
            if re.search(r"\bobject\.__new__\b", line)]
    assert hits == []


def test_the_limits_see_a_long_complex_function(tmp_path: Path) -> None:
    branches = "".join(f"    if x == {i}:\n        x += {i}\n" for i in range(40))
    src = tmp_path / "long.py"
    src.write_text(f"def long(x):\n{branches}    return x\n")
    assert _offenders(src) == ["long.py:1 long: 82 lines, complexity 41"]
