"""Every course helper runs the Kafka the notebook names: no cluster is built on a hidden default
version (issue 33, "one version story"). Read from the source of ``kafkasim.course``: a
``Cluster(...)`` call must pass ``kafka_version=`` and the value must come from the caller
(a parameter without a default), from ``common.notebook_version`` (the caller's, else the
notebook's ``KAFKA_VERSION``, else an error), or from a module constant that names a version
on purpose (``..._VERSION``)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import kafkasim.course
from kafkasim.course import basics, controller, hw, isr, positions
from kafkasim.course.common import notebook_version

COURSE = Path(kafkasim.course.__file__).parent


def _required_params(fn: ast.FunctionDef) -> set[str]:
    a = fn.args
    positional = a.posonlyargs + a.args
    with_default = {p.arg for p in positional[len(positional) - len(a.defaults):]} \
        if a.defaults else set()
    kw_default = {p.arg for p, d in zip(a.kwonlyargs, a.kw_defaults, strict=True)
                  if d is not None}
    return {p.arg for p in positional + a.kwonlyargs} - with_default - kw_default


def _is_notebook_version(node) -> bool:
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) == "notebook_version"


def _version_constants(tree: ast.Module) -> set[str]:
    return {t.id for n in tree.body if isinstance(n, ast.Assign) for t in n.targets
            if isinstance(t, ast.Name) and t.id.endswith("VERSION")
            and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)}


def _assigned_from_notebook_version(fn: ast.FunctionDef, name: str) -> bool:
    sources = [n.value for n in ast.walk(fn) if isinstance(n, ast.Assign)
               and any(getattr(t, "id", None) == name for t in n.targets)]
    return bool(sources) and all(_is_notebook_version(v) for v in sources)


def hidden_versions(source: str) -> list[str]:
    """``Cluster(...)`` calls in ``source`` whose Kafka version the caller did not choose."""
    tree = ast.parse(source)
    constants = _version_constants(tree)
    found = []
    for fn in ast.walk(tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        for call in ast.walk(fn):
            if not (isinstance(call, ast.Call)
                    and getattr(call.func, "id", getattr(call.func, "attr", None)) == "Cluster"):
                continue
            value = {k.arg: k.value for k in call.keywords}.get("kafka_version")
            if value is None:
                found.append(f"{fn.name} line {call.lineno}: no kafka_version")
            elif _is_notebook_version(value):
                continue
            elif not isinstance(value, ast.Name):
                found.append(f"{fn.name} line {call.lineno}: kafka_version={ast.unparse(value)}")
            elif not (value.id in _required_params(fn) or value.id in constants
                      or _assigned_from_notebook_version(fn, value.id)):
                found.append(f"{fn.name} line {call.lineno}: kafka_version={value.id} has a "
                             "default the notebook did not choose")
    return found


def test_every_course_cluster_names_its_kafka_version():
    bad = {p.name: hidden_versions(p.read_text(encoding="utf-8"))
           for p in sorted(COURSE.glob("*.py"))}
    bad = {name: found for name, found in bad.items() if found}
    assert not bad, f"course helpers building a Cluster on a version nobody chose: {bad}"
    for p in COURSE.glob("*.py"):
        assert "DEFAULT_VERSION" not in p.read_text(encoding="utf-8"), p.name


def test_the_source_check_catches_each_way_of_hiding_a_version():
    assert hidden_versions("def f(seed):\n    return Cluster(3, seed=seed)\n")
    assert hidden_versions("def f():\n    return Cluster(3, kafka_version='3.7')\n")
    assert hidden_versions("def f(v='3.7'):\n    return Cluster(3, kafka_version=v)\n")
    assert hidden_versions("def f(*, v=None):\n    return Cluster(3, kafka_version=v)\n")
    assert hidden_versions("def f():\n    v = '3.7'\n    return Cluster(3, kafka_version=v)\n")
    assert not hidden_versions("def f(v):\n    return Cluster(3, kafka_version=v)\n")
    assert not hidden_versions("def f(v=None):\n    v = notebook_version(v, 'f')\n"
                               "    return Cluster(3, kafka_version=v)\n")
    assert not hidden_versions("OLD_VERSION = '3.7'\n"
                               "def f():\n    return Cluster(3, kafka_version=OLD_VERSION)\n")


@pytest.mark.parametrize("helper", [
    lambda: basics.lagging_follower_run(lambda c: None),
    lambda: basics.placement_view(3, 3, 3),
    lambda: hw.slow_broker_3_commit(),
    lambda: hw.all_replicas_run(None),
    lambda: positions.positions_demo(),
    lambda: positions.rereads(lambda consumer: None),
    lambda: controller.quorum_loss_outcomes(),
    lambda: controller.fence_check_period_ms(9000),
    lambda: isr.pause_view(),
    lambda: isr.osr_example(),
], ids=["lagging_follower_run", "placement_view", "slow_broker_3_commit", "all_replicas_run",
        "positions_demo", "rereads", "quorum_loss_outcomes", "fence_check_period_ms",
        "pause_view", "osr_example"])
def test_outside_a_notebook_a_helper_asks_for_the_version(helper):
    """No notebook, no kafka_version: the helper says what to pass instead of picking one."""
    with pytest.raises(ValueError, match='pass kafka_version="4.3"'):
        helper()


def test_a_named_version_is_the_one_that_runs():
    c, _consumer = positions.positions_demo(kafka_version="3.7")
    assert c.kafka_version == "3.7"
    assert basics.lagging_follower_run(lambda c: None, kafka_version="2.6").kafka_version == "2.6"
    assert notebook_version("4.1", "test") == "4.1"
