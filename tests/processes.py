"""Process helpers shared by the tests that start JupyterLab (``from processes import
stop_process_group``; tests/ is on ``sys.path`` through its conftest)."""

from __future__ import annotations

import os
import signal
import subprocess


def stop_process_group(proc: subprocess.Popen, timeout_s: float = 30) -> None:
    """Stop a process started with ``start_new_session=True`` and everything it spawned:
    SIGTERM to its process group, SIGKILL if it has not exited within ``timeout_s``."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGTERM)
    try:
        proc.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=timeout_s)
