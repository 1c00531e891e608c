"""Notebook 00 (start here): the kernel's set-up check, as one call.

The widgets need the kernel's ``ipywidgets`` and JupyterLab's ``jupyterlab_widgets`` to be a
matching pair; ``make lab`` installs the pair pinned in ``requirements.txt``.
"""

from __future__ import annotations

import importlib.metadata as metadata
import platform
from pathlib import Path

from kafkasim.course.common import Text
from kafkasim.course.i18n import tr
from kafkasim.viz.style import text_width

REQUIREMENTS = Path(__file__).resolve().parents[2] / "requirements.txt"


def installed_versions() -> dict[str, str]:
    """The versions this kernel runs, by package name."""
    import kafkasim

    return {"Python": platform.python_version(), "kafkasim": kafkasim.__version__,
            "ipywidgets": metadata.version("ipywidgets"),
            "jupyterlab_widgets": metadata.version("jupyterlab_widgets")}


def pinned_versions(requirements: Path = REQUIREMENTS) -> dict[str, str]:
    """``name==version`` lines of requirements.txt, by name (comments ignored)."""
    pins: dict[str, str] = {}
    if not requirements.exists():     # an installed package without the course folder
        return pins
    for line in requirements.read_text(encoding="utf-8").splitlines():
        name, pinned, version = line.split("#")[0].strip().partition("==")
        if pinned:
            pins[name.strip().lower().replace("-", "_")] = version.strip()
    return pins


def setup_problems(versions: dict[str, str], pins: dict[str, str],
                   widget_manager_wanted: str) -> list[str]:
    """What is wrong with this set-up, in words (empty when nothing is).

    ``widget_manager_wanted`` is ipywidgets' own requirement on jupyterlab_widgets (its
    ``Requires-Dist`` line, e.g. ``jupyterlab_widgets~=3.0.15``)."""
    from packaging.requirements import Requirement

    problems = []
    wanted = Requirement(widget_manager_wanted)
    if not wanted.specifier.contains(versions["jupyterlab_widgets"]):
        problems.append(f"ipywidgets {versions['ipywidgets']} needs {wanted}, but "
                        f"jupyterlab_widgets {versions['jupyterlab_widgets']} is installed")
    for name in ("ipywidgets", "jupyterlab_widgets"):
        if name in pins and versions[name] != pins[name]:
            problems.append(f"this kernel has {name} {versions[name]}, but requirements.txt "
                            f"pins {pins[name]}")
    return problems


def setup_report() -> Text:
    """The versions this kernel runs, and whether the widgets will display. Raises with the fix
    (``make lab``, then restart the kernel) when the widget pair does not match."""
    versions = installed_versions()
    wanted = next(r for r in metadata.requires("ipywidgets") or []
                  if r.startswith("jupyterlab_widgets"))
    problems = setup_problems(versions, pinned_versions(), wanted.split(";")[0])
    lines = [f"{name:<20}{version}" for name, version in versions.items()]
    if problems:
        raise RuntimeError("; ".join(problems) + ". Run `make lab` from the course folder, "
                           "then restart the kernel.")
    lines.append(tr("widgets: kernel and JupyterLab versions match the pinned pair"))
    return Text("\n".join(lines))


def check_durable_design(replication_factor, min_insync_replicas):
    """Notebook 00's exercise: the smallest topic whose ``acks=all`` writes go on with any two of
    its brokers down, and whose acknowledged writes are always on at least two brokers."""
    from kafkasim.core.rules import effective_min_isr
    from kafkasim.course.checks import _form, _missing, _result, _want_int

    if (m := _missing(replication_factor, min_insync_replicas)) is not None:
        return m
    for value in (replication_factor, min_insync_replicas):
        if (m := _form(_want_int(value))) is not None:
            return m
    rf, wanted = replication_factor, min_insync_replicas
    if rf < 1 or wanted < 1:
        return _result(False, tr("replication.factor and min.insync.replicas are at least 1."))
    min_isr = effective_min_isr(wanted, rf)
    answer = tr("replication_factor = 4, min_insync_replicas = 2.")
    if min_isr < 2:
        return _result(False, tr("with min.insync.replicas={m}, the leader acknowledges an "
                                 "acks=all write while the ISR holds only itself: one lost disk "
                                 "then loses it.", m=wanted), answer=answer)
    if rf - min_isr < 2:
        return _result(False, tr("with {rf} replicas and {min_isr} required in sync, two brokers "
                                 "down leave an ISR of {left}: the leader refuses acks=all writes "
                                 "(NOT_ENOUGH_REPLICAS).", rf=rf, min_isr=min_isr,
                                 left=max(rf - 2, 0)), answer=answer)
    if rf > 4 or min_isr > 2:
        return _result(False, tr("both rules hold, but every record is stored {rf} times: a "
                                 "smaller replication.factor meets them too.", rf=rf),
                       answer=answer)
    return _result(True, tr("4 replicas, min.insync.replicas=2: with two brokers down the ISR "
                            "still holds 2, so acks=all writes go on, and each acknowledged "
                            "write is on at least 2 brokers. A third failure stops writes "
                            "(NOT_ENOUGH_REPLICAS) rather than keep one copy."))


# -- the first widget: what a replication factor gives one partition ------------------------------
def describe_rf(rf: int, min_insync_replicas: int = 2) -> Text:
    """What replication.factor=rf gives one partition whose producers use acks=all: the leader
    compares the ISR size with Kafka's effective min ISR (``Partition.effectiveMinIsr``:
    min.insync.replicas, capped at the replication factor since Kafka 3.7)."""
    from kafkasim.core.rules import effective_min_isr

    if not isinstance(rf, int) or isinstance(rf, bool) or rf < 1:
        raise ValueError(f"replication.factor must be an integer of at least 1, got {rf!r}")
    min_isr = effective_min_isr(min_insync_replicas, rf)
    followers = rf - 1
    if rf == 1:
        replicas = tr("replicas : 1 on 1 broker (1 leader, 0 followers)")
    elif followers == 1:
        replicas = tr("replicas : 2 on 2 brokers (1 leader, 1 follower)")
    else:
        replicas = tr("replicas : {rf} on {rf} brokers (1 leader, {followers} followers)",
                      rf=rf, followers=followers)
    lines = [f"replication.factor={rf}, min.insync.replicas={min_insync_replicas}, acks=all",
             "  " + replicas]
    if min_isr < min_insync_replicas:    # Partition.effectiveMinIsr, KAFKA-15583
        capped = tr("min ISR  : {configured} is capped at the replica count ({rf}) since "
                    "Kafka 3.7", configured=min_insync_replicas, rf=rf)
        indent = text_width(capped.partition(": ")[0]) + 2     # under the text, in any language
        lines += ["  " + capped,
                  "  " + " " * indent + tr("(before 3.7 every acks=all write failed: "
                                           "NOT_ENOUGH_REPLICAS)")]
    lines.append("  " + tr("writes   : succeed with up to {down} of those brokers down (the ISR "
                           "must keep {min_isr})", down=rf - min_isr, min_isr=min_isr))
    if rf == 1:
        lines.append("  " + tr("data     : a single copy; losing that broker's disk loses the "
                               "data"))
    else:
        lines.append("  " + tr("data     : a committed record is on every in-sync replica, so "
                               "with all {rf} in sync it survives losing {lost} brokers",
                               rf=rf, lost=rf - 1))
    return Text("\n".join(lines))


def moment(now_ms: int, crashed: int | None = None, after_s: int | None = None) -> Text:
    """The time line printed above a ``describe``: ``t = … ms`` (and how long after a crash)."""
    if crashed is None:
        return Text(tr("t = {now} ms", now=now_ms))
    return Text(tr("t = {now} ms, {after_s} s after broker {b} crashed", now=now_ms,
                   after_s=after_s, b=crashed))


def brokers_down_allowed(rf: int, min_insync_replicas: int = 2) -> int:
    """How many of a partition's ``rf`` brokers can be down while acks=all writes succeed: the
    replicas beyond Kafka's effective min ISR (``Partition.effectiveMinIsr``)."""
    from kafkasim.core.rules import effective_min_isr

    return rf - effective_min_isr(min_insync_replicas, rf)


#: notebook 00's choices: how soon a crashed leader's partition has a new leader
FAILOVER_SPANS = ("under 1 s", "1-5 s", "5-15 s", "over 15 s")


def new_leader_after(c, since_ms: int, topic: str, partition: int = 0) -> str:
    """The ``FAILOVER_SPANS`` choice for when a broker of ``c`` first became leader of
    ``topic-partition`` after ``since_ms`` (its ``become_leader`` trace row); the last one
    if none did."""
    t = next((t for t, kind, _node, tp, p, _d in c.trace.rows
              if t >= since_ms and kind == "become_leader" and tp == topic and p == partition),
             None)
    tops = (1000, 5000, 15000)
    if t is None:
        return FAILOVER_SPANS[-1]
    return next((s for s, top in zip(FAILOVER_SPANS, tops, strict=False) if t - since_ms < top),
                FAILOVER_SPANS[-1])
