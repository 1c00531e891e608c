"""Execute notebooks in place, top to bottom in a fresh kernel, so they are saved with outputs.

    .venv/bin/python scripts/execute-notebooks.py notebooks/00-start-here.ipynb [...]

nbval compares the saved outputs of cells tagged `nbval-check-output` with a fresh run, so re-run
this after editing a notebook. Volatile metadata (execution timestamps, widget model state with
random ids) is dropped so that re-executing an unchanged notebook gives an unchanged file.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import nbformat
from nbclient import NotebookClient


def execute(path: Path, timeout: int) -> None:
    nb = nbformat.read(path, as_version=4)
    # The same environment as under `make test` (see notebooks/conftest.py).
    os.environ.setdefault("KAFKASIM_TESTING", "1")
    # Nobody clicks "Lock in" here: each prediction takes its example answer and says so
    # (kafkasim.widgets.prediction); a learner's JupyterLab does not set it.
    os.environ.setdefault("KAFKASIM_PREDICTIONS", "example")
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        resources={"metadata": {"path": str(path.parent)}},
        record_timing=False,
        store_widget_state=False,
    )
    client.execute()
    for cell in nb.cells:
        cell.metadata.pop("execution", None)
    nb.metadata.pop("widgets", None)
    nbformat.validate(nb)
    nbformat.write(nb, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("notebooks", nargs="+", type=Path)
    parser.add_argument("--timeout", type=int, default=600, help="seconds per cell")
    args = parser.parse_args(argv)
    for path in args.notebooks:
        print(f"executing {path}", flush=True)
        execute(path, args.timeout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
