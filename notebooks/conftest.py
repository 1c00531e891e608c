"""nbval settings for every notebook under notebooks/.

`make test` runs nbval with --nbval-lax (pyproject.toml): every cell must run without error, and
only cells tagged `nbval-check-output` (scripts/nbval_tags.py) must reproduce their saved output.
Here we decide what that comparison ignores, and give the notebook kernels the test environment.
"""

from __future__ import annotations

import os
import sys

# nbval kernels inherit this process's environment. kafkasim.experiments.spark reads
# KAFKASIM_TESTING to turn
# off Spark's console progress bar; PYSPARK_PYTHON keeps Spark's workers on the venv's python.
os.environ.setdefault("KAFKASIM_TESTING", "1")
# Nobody clicks "Lock in" here: each prediction takes its example answer and says so
# (kafkasim.widgets.prediction); a learner's JupyterLab does not set it.
os.environ.setdefault("KAFKASIM_PREDICTIONS", "example")
os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
os.environ.setdefault("PYSPARK_PYTHON", sys.executable)

# Regex -> replacement, applied to both saved and fresh output before comparing.
SANITIZE = {
    # A figure's text repr ("<Figure size 640x480 with 1 Axes>"): compare plots by data instead.
    r"<Figure size \d+(\.\d+)?x\d+(\.\d+)? with \d+ Axes>": "<Figure>",
    r"<matplotlib\.[\w.]+ object at 0x[0-9a-f]+>": "<matplotlib object>",
    r"\[<matplotlib\.[^\]]*\]": "[<matplotlib objects>]",
    # Any other object repr with a memory address.
    r" at 0x[0-9a-f]+": " at 0x…",
}


def pytest_collectstart(collector):
    """Adjust each notebook's nbval collector before its cells are collected."""
    if collector.path is None or collector.path.suffix != ".ipynb":
        return
    # Warnings and library chatter on stderr (Spark's log4j lines, deprecations) vary by machine.
    collector.skip_compare = (*collector.skip_compare, "stderr")
    collector.sanitize_patterns.update(SANITIZE)
