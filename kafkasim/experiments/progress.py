"""Progress display for sweeps: an ipywidgets bar in a notebook, one updating line in a terminal,
occasional lines otherwise (logs, pipes). Display only: wall time never reaches the results."""

from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


def _in_notebook() -> bool:
    shell = sys.modules.get("IPython")
    if shell is None:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


class Progress:
    """``update(done, errors)`` as runs finish; ``close()`` at the end.

    ``enabled=None`` shows progress unless running under tests
    (``kafkasim.experiments.spark.testing()``).
    ``phase(text, eta_s)`` says what the sweep is doing or waiting for ("waiting for Spark:
    ...", "on Spark"); the time left is estimated from the runs finished *in the current phase*
    (a phase that starts by waiting for a JVM must not make the rest look slower than it is),
    or from ``eta_s`` until the phase has finished a run.
    """

    def __init__(self, total: int, label: str, *, enabled: bool | None = None,
                 stream=None, clock=time.perf_counter) -> None:
        if enabled is None:
            from kafkasim.experiments.spark import testing

            enabled = not testing()
        self.total = max(total, 0)
        self.label = label
        self.enabled = enabled and total > 0
        self.stream = stream if stream is not None else sys.stderr
        self.clock = clock
        self.started = clock()
        self.done = 0
        self.errors = 0
        self.phase_text = ""
        self._phase_start = (self.started, 0)   # (time, runs done) when the phase began
        self._phase_eta: tuple[float, float] | None = None   # (time given, seconds)
        self._last_shown = -1.0
        self._last_fraction = -1.0
        self._widget = None
        self._text = None
        self.kind = "none"
        if not self.enabled:
            return
        if _in_notebook():
            try:
                import ipywidgets as widgets
                from IPython.display import display

                self._widget = widgets.IntProgress(value=0, min=0, max=self.total,
                                                   description="runs",
                                                   layout=widgets.Layout(width="50%"))
                self._text = widgets.Label(value=self._status())
                display(widgets.HBox([self._widget, self._text]))
                self.kind = "widget"
                return
            except Exception:  # no widget front-end: fall back to text
                self._widget = None
        isatty = getattr(self.stream, "isatty", None)
        self.kind = "line" if isatty is not None and isatty() else "log"
        self._show(force=True)

    def eta_s(self) -> float | None:
        """Seconds left: runs left over the current phase's rate (runs finished in it over the
        time since it began), else the phase's own estimate; None when unknown."""
        if self.done >= self.total:
            return 0.0
        now = self.clock()
        t0, d0 = self._phase_start
        if self.done > d0 and now > t0:
            return (self.total - self.done) * (now - t0) / (self.done - d0)
        if self._phase_eta is not None:
            given, seconds = self._phase_eta
            return max(0.0, seconds - (now - given))
        return None

    def _status(self) -> str:
        elapsed = self.clock() - self.started
        rate = self.done / elapsed if elapsed > 0 and self.done else 0.0
        errs = f", {self.errors} error(s)" if self.errors else ""
        eta = self.eta_s()
        left = f", ~{eta:.0f} s left" if eta is not None and self.done < self.total else ""
        phase = f" {self.phase_text}:" if self.phase_text else ""
        return (f"{self.label}:{phase} {self.done}/{self.total} ({rate:.1f} runs/s{errs}, "
                f"{elapsed:.0f} s{left})")

    def phase(self, text: str, eta_s: float | None = None) -> None:
        """Enter a phase: say what the sweep does (or waits for) now; restart the rate."""
        now = self.clock()
        if text != self.phase_text:
            self._phase_start = (now, self.done)
        self.phase_text = text
        self._phase_eta = (now, eta_s) if eta_s is not None else None
        if self.enabled:
            self._show(force=True)

    def _show(self, force: bool = False) -> None:
        now = self.clock()
        fraction = self.done / self.total if self.total else 1.0
        if self.kind == "widget":
            self._widget.value = self.done
            if force or now - self._last_shown >= 0.2:
                self._text.value = self._status()
                self._last_shown = now
        elif self.kind == "line":
            if force or now - self._last_shown >= 0.2:
                self.stream.write("\r" + self._status())
                self.stream.flush()
                self._last_shown = now
        elif self.kind == "log":
            if force or fraction - self._last_fraction >= 0.1:
                self.stream.write(self._status() + "\n")
                self.stream.flush()
                self._last_fraction = fraction

    def update(self, done: int, errors: int = 0) -> None:
        self.done, self.errors = done, errors
        if self.enabled:
            self._show(force=done >= self.total)

    def close(self) -> None:
        if not self.enabled:
            return
        if self.kind == "widget":
            self._text.value = self._status()
            self._widget.bar_style = "danger" if self.errors else "success"
        elif self.kind == "line":
            self.stream.write("\r" + self._status() + "\n")
            self.stream.flush()
        elif self.kind == "log" and self._last_fraction < 1.0:
            self.stream.write(self._status() + "\n")
            self.stream.flush()
        self.enabled = False
