"""The course's one import: ``from kafkasim.course import *``.

It brings the simulator (``Cluster``, ``Scenario``, ``RateWorkload``), the player
(``kafkasim.widgets.Player``), the text tables and the message-by-message ``Stepper`` the
notebooks print, the exercise checks, and ``explore`` (``kafkasim.widgets.Explorer`` over the
notebooks' plain functions); and it fixes the plot style. Each notebook then imports its own
demos, e.g. ``from kafkasim.course.isr import *``.

Every simulation is seeded (each notebook module has a ``SEED``), so every run of a notebook
prints the same numbers.
"""

from __future__ import annotations

import importlib.abc
import importlib.util
import sys
from collections.abc import Callable

from kafkasim.course.checks import (
    CheckResult,
    check_alerts,
    check_causes,
    check_fetcher_threads,
    check_group_lag,
    check_hw,
    check_hw_freeze,
    check_hw_row,
    check_leader,
    check_left_isr,
    check_leo,
    check_message_rule,
    check_positions,
    check_readable,
    check_removal_time,
    check_replica_sets,
    check_single_shrink_fires,
    check_tolerated_failures,
    check_write_outcome,
)
from kafkasim.course.common import (
    Stepper,
    Text,
    error_line,
    isr_changes,
    leo_hw,
    meter_counts,
    player_state,
    replica_sets,
    replica_state,
    settle,
    text_table,
)
from kafkasim.course.explore import explore, show
from kafkasim.course.predictions import predict, ready
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload
from kafkasim.scenarios.scenario import Scenario
from kafkasim.widgets import Player

SEED = 1


def setup() -> None:
    """Plot and table style for every notebook: readable on a projector, no pandas truncation,
    and Hangul drawn with an installed Korean font (``kafkasim.viz.style.use_hangul_fallback``)."""
    import matplotlib as mpl

    from kafkasim.viz.style import use_hangul_fallback

    mpl.rcParams.update({
        "figure.figsize": (11, 4),
        "figure.dpi": 100,
        "font.size": 12,
        "axes.titlesize": 14,
        "axes.spines.top": False,
        "axes.spines.right": False,
    })
    use_hangul_fallback()
    # Figures made without pyplot (kafkasim.viz) display as PNG like pyplot's do.
    try:
        from IPython import get_ipython
        from IPython.core.pylabtools import select_figure_formats

        shell = get_ipython()
        if shell is not None:
            select_figure_formats(shell, {"png"}, bbox_inches="tight")
    except ImportError:  # pragma: no cover - IPython comes with Jupyter
        pass
    # pandas (with pyarrow, ~0.25 s) is imported by the cells that make a table of it, not here
    when_imported("pandas", _pandas_display)


def _pandas_display(pd) -> None:
    """Tables of up to 30 columns, 160 characters wide, untruncated."""
    pd.set_option("display.max_columns", 30)
    pd.set_option("display.width", 160)


class _AfterImport(importlib.abc.MetaPathFinder):
    """Runs ``then(module)`` once the module ``name`` has been executed, on its first import by
    anyone (``when_imported``); it leaves ``sys.meta_path`` as it finds that import."""

    def __init__(self, name: str, then: Callable) -> None:
        self.name, self.then = name, then

    def find_spec(self, fullname, path, target=None):
        if fullname != self.name:
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(fullname)   # the finders that import it
        if spec is None or spec.loader is None:
            return spec
        exec_module = spec.loader.exec_module   # (this spec's own loader object)

        def exec_then(module) -> None:
            exec_module(module)
            self.then(module)

        spec.loader.exec_module = exec_then
        return spec


def when_imported(name: str, then: Callable) -> None:
    """``then(module)`` now if ``name`` is imported, else right after its first import."""
    if name in sys.modules:
        then(sys.modules[name])
    elif not any(isinstance(f, _AfterImport) and f.name == name and f.then is then
                 for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterImport(name, then))


setup()

from kafkasim.course.acks_checks import (  # noqa: E402  (notebook 05)
    check_acks_saves,
    check_after_append,
    check_describe_reading,
)
from kafkasim.course.checkpoints import (  # noqa: E402  (notebook 10)
    check_allowed_loss,
    check_loaded_hw,
    check_power_loss_restart,
)
from kafkasim.course.controller import (  # noqa: E402  (notebook 07)
    check_detection_window,
    check_forgetful_controller,
    check_quorum_loss,
    check_quorum_tolerance,
)
from kafkasim.course.elections import (  # noqa: E402  (notebook 08)
    check_elr_saves,
    check_kraft_election,
    check_zk_election,
)
from kafkasim.course.epochs import (  # noqa: E402  (notebook 09)
    check_divergence,
    check_end_offset,
    check_truncation,
)
from kafkasim.course.follower_fetch import (  # noqa: E402  (notebook 13)
    check_read_replica,
)
from kafkasim.course.monitoring_checks import (  # noqa: E402  (notebook 06)
    check_both_fire,
    check_slow_flapping,
    check_urp_reading,
)
from kafkasim.course.positions_checks import (  # noqa: E402  (notebook 04)
    check_output_reading,
    check_rereads,
    check_takeover,
)
from kafkasim.course.racks import (  # noqa: E402  (notebook 11)
    check_rack_alternated,
    check_rack_failure,
    check_zk_replicas,
)
from kafkasim.course.rebalance import (  # noqa: E402  (notebook 12)
    check_imbalance_count,
    check_rebalance,
    check_restore,
)

__all__ = [
    "SEED", "CheckResult", "Cluster", "Player", "RateWorkload", "Scenario", "Stepper", "Text",
    "check_alerts", "check_causes", "check_detection_window", "check_divergence",
    "check_forgetful_controller", "check_quorum_loss", "check_quorum_tolerance",
    "check_elr_saves", "check_end_offset", "check_allowed_loss", "check_loaded_hw",
    "check_power_loss_restart", "check_read_replica",
    "check_imbalance_count", "check_rebalance", "check_restore", "check_rack_alternated",
    "check_rack_failure", "check_zk_replicas",
    "check_kraft_election", "check_truncation", "check_zk_election", "check_fetcher_threads",
    "check_group_lag", "check_hw",
    "check_hw_freeze", "check_hw_row", "check_leader", "check_left_isr", "check_leo",
    "check_message_rule", "check_positions", "check_readable", "check_replica_sets",
    "check_removal_time", "check_single_shrink_fires", "check_tolerated_failures",
    "check_write_outcome", "error_line", "explore", "isr_changes", "leo_hw", "meter_counts",
    "player_state", "predict", "ready", "replica_sets",
    "replica_state", "settle", "setup", "show", "text_table",
]
# notebooks 04-06 (issue 14)
__all__ += ["check_acks_saves", "check_after_append", "check_both_fire", "check_describe_reading",
            "check_output_reading", "check_rereads", "check_slow_flapping", "check_takeover",
            "check_urp_reading"]
