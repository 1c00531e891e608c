"""The course is hands-on: the learner's cells build and change the clusters, not hidden helpers.

``kafkasim.course`` keeps formatting (tables, drawings) and grading (``check_…``) only. A course
helper that builds a cluster or changes one (``Cluster(...)``, a scenario run, ``crash``, ``run``,
``hold`` ...), directly or through another course function, must not be called from a notebook
cell: the learner should see and change those steps. Graders (``check_…``) may replay the learner's
own fault sequence on fresh clusters; that is how they grade it.

Notebooks still being rewritten to this rule are listed in ``PENDING`` (issue 14).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
COURSE_PKG = REPO / "kafkasim" / "course"
NOTEBOOKS = REPO / "notebooks"

# notebooks not yet rewritten to the hands-on rule (issue 14): remove a number once it complies
PENDING: set[str] = set()

#: method calls that change a cluster (or run a scenario, which builds one)
MUTATORS = {
    "create_topic", "producer", "consumer", "crash", "restart", "start", "stop", "pause",
    "pause_broker", "cut", "heal", "hold", "drop", "delay", "release", "run", "run_until",
    "swap_rule", "alter_config", "shutdown", "power_loss", "controlled_shutdown", "send",
    "elect_leaders", "alter_partition_reassignments", "incremental_alter_configs",
}
BUILDERS = {"Cluster", "Scenario"}
#: graders not named check_…: the capstone (notebook 14) grades the learner's own rules by running
#: them, and Kafka's beside them, on 100 fresh clusters under seeded fault schedules (a sweep, as
#: a check_… replays a fault sequence); the learner's part is the rules, written in visible cells,
#: and every schedule can be printed (schedule_table)
GRADERS = {"capstone.grade", "capstone.kafka_grade"}


def _course_functions() -> dict[str, ast.FunctionDef]:
    """Every module-level function of kafkasim.course, by name (public and private)."""
    found: dict[str, ast.FunctionDef] = {}
    for path in sorted(COURSE_PKG.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, ast.FunctionDef):
                found[f"{path.stem}.{node.name}"] = node
    return found


def _direct_effects(fn: ast.FunctionDef) -> tuple[bool, set[str]]:
    """(does ``fn`` itself build or change a cluster, the bare names it calls)."""
    changes, calls = False, set()
    for node in ast.walk(fn):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name):
            calls.add(f.id)
            changes |= f.id in BUILDERS
        elif isinstance(f, ast.Attribute):
            changes |= f.attr in MUTATORS
            if isinstance(f.value, ast.Name) and f.value.id in BUILDERS:
                changes = True
    return changes, calls


def cluster_changing_helpers() -> set[str]:
    """Course functions (``module.name``, graders excepted) that build or change a cluster,
    directly or through other course functions (bare-name calls resolved within the module first,
    then anywhere in the package)."""
    funcs = _course_functions()
    effects = {q: _direct_effects(fn) for q, fn in funcs.items()}
    by_name: dict[str, list[str]] = {}
    for q in funcs:
        by_name.setdefault(q.split(".", 1)[1], []).append(q)
    changing = {q for q, (direct, _c) in effects.items() if direct}
    grew = True
    while grew:
        grew = False
        for q, (_d, calls) in effects.items():
            if q in changing:
                continue
            mod = q.split(".", 1)[0]
            targets = [f"{mod}.{n}" if f"{mod}.{n}" in funcs else t
                       for n in calls for t in by_name.get(n, [])]
            if any(t in changing for t in targets):
                changing.add(q)
                grew = True
    return {q for q in changing
            if not q.split(".", 1)[1].startswith("check_") and q not in GRADERS}


def _namespace(nb) -> dict:
    """What the notebook's ``from kafkasim.course... import *`` lines bring in, in their order."""
    ns: dict = {}
    for cell in nb.cells:
        if cell.cell_type == "code":
            for line in cell.source.splitlines():
                if re.match(r"from kafkasim\.course(\.\w+)? import \*", line.strip()):
                    exec(line.split("#")[0].strip(), ns)
    return ns


def _qualified(obj) -> str | None:
    mod = getattr(obj, "__module__", "") or ""
    if callable(obj) and mod.startswith("kafkasim.course."):
        return f"{mod.rsplit('.', 1)[1]}.{getattr(obj, '__name__', '')}"
    return None


def _cell_calls(source: str) -> set[str]:
    code = "\n".join(line for line in source.splitlines()
                     if not re.match(r"\s*[%!]", line))
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return set()
    return {n.func.id for n in ast.walk(tree)
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}


def _defined_in(nb) -> set[str]:
    """Functions the notebook defines itself (visible code the learner can change)."""
    names = set()
    for cell in nb.cells:
        if cell.cell_type == "code":
            for line in cell.source.splitlines():
                m = re.match(r"def (\w+)\(", line)
                if m:
                    names.add(m.group(1))
    return names


def notebooks() -> list[Path]:
    return sorted(NOTEBOOKS.glob("[0-9][0-9]*-*.ipynb"))


def test_the_analysis_finds_builders_and_spares_graders_and_formatters():
    helpers = cluster_changing_helpers()
    assert "common.settle" in helpers          # runs a cluster until it is quiet
    assert "isr.osr_example" in helpers        # builds a cluster out of the learner's sight
    assert not any(n.split(".")[1].startswith("check_") for n in helpers)
    assert "common.text_table" not in helpers and "epoch_table" not in helpers
    assert "racks.placement_view" not in helpers   # pure placement arithmetic, no cluster


@pytest.mark.parametrize("path", notebooks(), ids=lambda p: p.name.split("-")[0])
def test_no_cell_calls_a_course_helper_that_builds_or_changes_a_cluster(path):
    if path.name.split("-")[0] in PENDING:
        pytest.skip(f"{path.name}: being rewritten to the hands-on rule (issue 14)")
    nb = nbformat.read(path, as_version=4)
    helpers = cluster_changing_helpers()
    ns = _namespace(nb)
    own = _defined_in(nb)
    offending = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type == "code":
            hidden = sorted(n for n in _cell_calls(cell.source) - own
                            if _qualified(ns.get(n)) in helpers)
            if hidden:
                offending.append(f"cell {i}: {', '.join(hidden)}")
    assert not offending, (f"{path.name} calls course helpers that build or change a cluster "
                           f"out of the learner's sight: {offending}")
