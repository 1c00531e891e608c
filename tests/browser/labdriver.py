"""Drive the course in a real browser: a throw-away JupyterLab and the system's Chromium.

Used by tests/browser/ (the browser suite run by ``make test``) and by benchmarks/bench_browser.py.

- ``course_copy(dest)`` copies notebooks/ and assets/ into a temp dir, so nothing the browser does
  (autosave, outputs, checkpoints) touches the repository.
- ``LabServer`` starts ``jupyter lab`` from this interpreter (the venv's, so its ``python3`` kernel
  is the venv's too) on a free 127.0.0.1 port with a random token, with every Jupyter directory
  (config, runtime, settings, workspaces) inside the temp dir, and waits until the server answers.
- ``chromium_path()`` finds Debian's Chromium (``apt-get install chromium``, which
  scripts/check-chromium.sh runs); never Playwright's own download (``playwright install``).
- ``Notebook`` opens one notebook in the lab page, runs all cells, collects problems (widget render
  errors, tracebacks, stderr from the kernel, including from widget callbacks) and drives widgets
  found by their visible labels and ipywidgets' standard CSS classes, timing each action from the
  user's input event to the last change of the rendered output.
"""

from __future__ import annotations

import json
import math
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted(p.name for p in (REPO / "notebooks").glob("[0-9][0-9]*-*.ipynb"))
# the Korean edition as a Korean learner starts it: its start page and a notebook with exercises
# (a kernel started in notebooks/ko/ prints the course's feedback in Korean)
KOREAN = [f"ko/{n}" for n in ("00-start-here.ipynb", "09-leader-epoch-and-truncation.ipynb")
          if (REPO / "notebooks" / "ko" / n).exists()]

# JupyterLab user settings for the test lab: no news pop-up, every cell kept in the DOM (so a
# widget's render error is visible wherever the cell is), no autosave timer racing the test.
LAB_SETTINGS = {
    "@jupyterlab/apputils-extension/notification.jupyterlab-settings": {
        "fetchNews": "false", "checkForUpdates": False},
    "@jupyterlab/notebook-extension/tracker.jupyterlab-settings": {"windowingMode": "none"},
    "@jupyterlab/docmanager-extension/plugin.jupyterlab-settings": {"autosave": False},
}

COURSE_FILES = ("README.md", "requirements.txt", "pyproject.toml")

# stderr every notebook may show in the kernel's log (never in a cell): when a notebook with saved
# widget outputs opens, JupyterLab's widget manager asks the kernel for the widgets' state on the
# control comm before the notebook has imported ipywidgets, and ipykernel logs that it has no such
# comm target; the manager then falls back to the saved state. Nothing is shown to the learner.
ALLOW_EVERYWHERE = (
    r"No such comm target registered: jupyter\.widget\.control\s*",
    r"No such comm: [0-9a-f-]+\s*",
)

IMAGES = "\n--images--\n"     # separates a signature's text from its images

WIDGET_ERRORS = ("Error displaying widget", "model not found", "Failed to load model class",
                 "Could not create a view")


def chromium_path() -> str | None:
    """Debian's Chromium (or chromium-browser elsewhere), or None when it is not installed."""
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    return None


def course_copy(dest: Path, notebooks: list[str] | None = None) -> Path:
    """Copy notebooks (all numbered ones by default) and assets/ under dest/; returns dest."""
    (dest / "notebooks").mkdir(parents=True, exist_ok=True)
    for name in notebooks or NOTEBOOKS + KOREAN:
        (dest / "notebooks" / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / "notebooks" / name, dest / "notebooks" / name)
    if (REPO / "assets").is_dir():
        shutil.copytree(REPO / "assets", dest / "assets", dirs_exist_ok=True)
    for name in COURSE_FILES:     # notebook 00 reads ../requirements.txt; others link ../README.md
        shutil.copy2(REPO / name, dest / name)
    return dest


def generated_notebook(course_root: Path, name: str, sources: list[str]) -> str:
    """Write a notebook of code cells into the lab's course copy; its path for Notebook.open."""
    import nbformat

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3 (ipykernel)",
                                 "language": "python"}
    path = course_root / "notebooks" / name       # "ko/x.ipynb": a kernel that speaks Korean
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return f"notebooks/{name}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class LabServer:
    """``jupyter lab`` on a free loopback port with a random token, serving ``root``."""

    def __init__(self, root: Path, state: Path, timeout_s: float = 90.0) -> None:
        self.root = root
        self.token = secrets.token_hex(16)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        settings = state / "lab-settings"
        for rel, values in LAB_SETTINGS.items():
            f = settings / rel
            f.parent.mkdir(parents=True, exist_ok=True)
            f.write_text(json.dumps(values))
        env = dict(os.environ)
        env.update({
            "JUPYTER_CONFIG_DIR": str(state / "config"),
            "JUPYTER_RUNTIME_DIR": str(state / "runtime"),
            "JUPYTERLAB_SETTINGS_DIR": str(settings),
            "JUPYTERLAB_WORKSPACES_DIR": str(state / "workspaces"),
            "IPYTHONDIR": str(state / "ipython"),
            # the kernels import this checkout's kafkasim, whatever the venv's editable install is
            "PYTHONPATH": os.pathsep.join(filter(None, [str(REPO), env.get("PYTHONPATH")])),
        })
        # the kernels run as under `make lab`: Jupyter's inline backend, no test-only settings,
        # predictions left for the learner (notebooks/conftest.py pre-answers them for nbval, and
        # in a whole `make test` its environment would otherwise reach these kernels too)
        for name in ("MPLBACKEND", "KAFKASIM_TESTING", "KAFKASIM_PREDICTIONS"):
            env.pop(name, None)
        self.log_path = state / "jupyter.log"
        self._log = open(self.log_path, "w")  # noqa: SIM115 (closed in stop)
        args = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
                f"--port={self.port}", "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}", f"--ServerApp.root_dir={root}",
                "--LabApp.expose_app_in_browser=True", "--LabApp.news_url=None",
                "--ServerApp.open_browser=False"]
        if hasattr(os, "getuid") and os.getuid() == 0:
            args.append("--allow-root")
        self.proc = subprocess.Popen(args, cwd=root, env=env, stdout=self._log,
                                     stderr=subprocess.STDOUT)
        self._wait(timeout_s)

    def _wait(self, timeout_s: float) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"jupyter lab exited with {self.proc.returncode}:\n{self.log()}")
            try:
                with urllib.request.urlopen(f"{self.url}/api/status?token={self.token}",
                                            timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                time.sleep(0.25)
        self.stop()
        raise RuntimeError(f"jupyter lab did not answer within {timeout_s:.0f} s:\n{self.log()}")

    def lab_url(self, path: str = "") -> str:
        return f"{self.url}/lab{'/tree/' + path if path else ''}?token={self.token}"

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._log.close()


def launch_browser(playwright, **kwargs):
    path = chromium_path()
    if path is None:
        raise RuntimeError("Chromium not found: run scripts/check-chromium.sh "
                           "(Debian: apt-get install chromium)")
    return playwright.chromium.launch(
        executable_path=path, headless=True,
        args=["--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu"], **kwargs)


def open_lab(browser, server: LabServer, width: int = 1280, height: int = 900):
    """A page with JupyterLab loaded and its application object ready."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(server.lab_url(), wait_until="domcontentloaded")
    page.wait_for_function("() => window.jupyterapp && window.jupyterapp.started !== undefined",
                           timeout=120_000)
    page.evaluate("() => window.jupyterapp.started")
    page.wait_for_function("() => document.querySelector('#jp-main-dock-panel') !== null",
                           timeout=60_000)
    return page


# -- in-page helpers ---------------------------------------------------------------------------
# Installed once per notebook: the panel, its cells, problem collection from the kernel's iopub
# channel, and the action timer (input event -> last DOM change in the watched output).
_INSTALL = r"""
async ([path, timeoutMs]) => {
  const app = window.jupyterapp;
  const panel = await app.commands.execute('docmanager:open', {path, factory: 'Notebook'});
  // a notebook without a known kernelspec asks for a kernel in a dialog: never wait forever
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error(
    `${path}: no kernel after ${timeoutMs} ms (a kernel selection dialog?)`)), timeoutMs));
  await Promise.race([Promise.all([panel.context.ready, panel.sessionContext.ready]), timeout]);
  app.shell.activateById(panel.id);
  const ks = window.__ks = {panel, iopub: [], status: 'unknown', statusLog: [],
                            armed: false, t0: null, lastMut: null, busySeen: false, idleAt: null};
  panel.sessionContext.iopubMessage.connect((_, msg) => {
    const t = msg.header.msg_type;
    if (t === 'error') {
      ks.iopub.push({kind: 'traceback', parent: msg.parent_header.msg_type || '',
                     text: msg.content.ename + ': ' + msg.content.evalue + '\n' +
                           (msg.content.traceback || []).join('\n')});
    } else if (t === 'stream' && msg.content.name === 'stderr') {
      ks.iopub.push({kind: 'stderr', parent: msg.parent_header.msg_type || '',
                     text: msg.content.text});
    }
  });
  panel.sessionContext.statusChanged.connect((_, s) => {
    ks.status = s;
    if (!ks.armed) return;
    if (s === 'busy') ks.busySeen = true;
    if (s === 'idle' && ks.busySeen) ks.idleAt = performance.now();
  });
  ks.status = panel.sessionContext.session?.kernel?.status || 'unknown';
  const mark = () => { if (ks.armed) ks.t0 = performance.now(); };
  document.addEventListener('pointerup', mark, true);
  document.addEventListener('change', mark, true);
  document.addEventListener('keyup', mark, true);
  return panel.content.widgets.length;
}
"""

_RUN_ALL = r"""
async ([timeoutMs, above]) => {
  const ks = window.__ks, panel = ks.panel;
  let command = 'notebook:run-all-cells';
  if (above !== null) {
    panel.content.activeCellIndex = above;
    command = 'notebook:run-all-above';
  }
  const run = window.jupyterapp.commands.execute(command);
  const timeout = new Promise(r => setTimeout(() => r('timeout'), timeoutMs));
  const res = await Promise.race([run, timeout]);
  if (res === 'timeout') return 'timeout';
  const t1 = performance.now();
  while (panel.sessionContext.session?.kernel?.status !== 'idle') {
    if (performance.now() - t1 > 30000) return 'kernel never idle';
    await new Promise(r => setTimeout(r, 100));
  }
  // widget views render asynchronously (and so do their errors): wait for a quiet notebook
  let last = performance.now();
  const obs = new MutationObserver(() => { last = performance.now(); });
  obs.observe(panel.node, {subtree: true, childList: true, attributes: true, characterData: true});
  const t2 = performance.now();
  const loading = () => [...panel.node.querySelectorAll('.jp-OutputArea-output')]
      .some(o => (o.textContent || '').trim() === 'Loading widget...');
  while ((performance.now() - last < 500 || loading()) && performance.now() - t2 < 20000)
    await new Promise(r => setTimeout(r, 50));
  obs.disconnect();
  return 'ok';
}
"""

_CELLS = r"""
() => window.__ks.panel.content.widgets.map((c, i) => ({
  index: i, type: c.model.type, source: c.model.sharedModel.getSource(),
  count: c.model.type === 'code' ? c.model.executionCount : null,
  outputs: c.model.type === 'code' ? c.model.outputs.toJSON() : []}))
"""

_DOM_PROBLEMS = r"""
(needles) => {
  const out = [];
  window.__ks.panel.content.widgets.forEach((c, i) => {
    const area = c.model.type === 'code' && c.node.querySelector('.jp-Cell-outputArea');
    if (!area) return;
    const text = area.textContent || '';
    for (const n of needles) if (text.includes(n)) out.push({cell: i, kind: 'widget', text: n});
    // ipywidgets' error view (a widget whose model or view class could not be loaded)
    if (area.querySelector('.jupyter-widgets-error-widget'))
      out.push({cell: i, kind: 'widget', text: 'widget error view (' +
                (area.querySelector('.jupyter-widgets-error-widget').title ||
                 'its model or view class could not be loaded') + ')'});
    if (text.includes('Loading widget...'))
      out.push({cell: i, kind: 'widget', text: 'a widget never rendered (Loading widget...)'});
    if (text.includes('Traceback (most recent call last)'))
      out.push({cell: i, kind: 'traceback', text: 'Traceback shown in the cell'});
  });
  return out;
}
"""

# Signature of what a cell shows: its output text and the src of every image in it (ipywidgets
# gives an Image a new blob URL only when its bytes change; the inline backend a new data URL).
_SIGNATURE = r"""
(i) => {
  const node = window.__ks.panel.content.widgets[i].node.querySelector('.jp-Cell-outputArea')
               || window.__ks.panel.content.widgets[i].node;
  const imgs = [...node.querySelectorAll('img')].map(im => im.src.length + ':' +
               im.src.slice(0, 64) + im.src.slice(-64));
  return (node.innerText || '') + '\n--images--\n' + imgs.join('\n');
}
"""

_ARM = r"""
(i) => {
  const ks = window.__ks;
  if (ks.observer) ks.observer.disconnect();
  const node = ks.panel.content.widgets[i].node;
  ks.armed = true; ks.t0 = null; ks.lastMut = null; ks.busySeen = false; ks.idleAt = null;
  ks.observer = new MutationObserver(() => { ks.lastMut = performance.now(); });
  ks.observer.observe(node, {subtree: true, childList: true, attributes: true,
                             characterData: true});
}
"""

_SETTLED = r"""
(quietMs) => {
  const ks = window.__ks, now = performance.now();
  if (ks.t0 === null || !ks.busySeen || ks.idleAt === null) return false;
  if (ks.status !== 'idle') return false;
  return now - Math.max(ks.lastMut || 0, ks.idleAt) > quietMs;
}
"""

_DISARM = r"""
() => {
  const ks = window.__ks;
  ks.armed = false;
  if (ks.observer) { ks.observer.disconnect(); ks.observer = null; }
  return {t0: ks.t0, lastMut: ks.lastMut, idleAt: ks.idleAt};
}
"""

_RUN_CELL = r"""
async ([i, source]) => {
  const ks = window.__ks, panel = ks.panel, nb = panel.content;
  if (source !== null) nb.widgets[i].model.sharedModel.setSource(source);
  nb.activeCellIndex = i;
  nb.mode = 'command';
  const run = window.jupyterapp.commands.execute('notebook:run-cell');
  const timeout = new Promise(r => setTimeout(() => r('timeout'), 300000));
  if (await Promise.race([run, timeout]) === 'timeout') return 'timeout';
  const t1 = performance.now();
  while (panel.sessionContext.session?.kernel?.status !== 'idle') {
    if (performance.now() - t1 > 60000) return 'kernel never idle';
    await new Promise(r => setTimeout(r, 50));
  }
  return 'ok';
}
"""

_CLOSE = r"""
async () => {
  const ks = window.__ks;
  if (!ks) return;
  if (ks.observer) ks.observer.disconnect();
  try {
    await Promise.race([ks.panel.sessionContext.shutdown(),
                        new Promise(r => setTimeout(r, 30000))]);
  } catch (e) {}
  ks.panel.dispose();
  window.__ks = null;
}
"""

# Pictures a learner would see as an empty box or a broken icon, in every cell's output: an <img>
# that did not load (naturalWidth or naturalHeight 0: no data, a bad blob, a 0x0 placeholder) and
# an <img> or 2-d <canvas> whose pixels are all one colour (a matplotlib figure with nothing
# drawn). `player`: the image is in a cell that shows a player (its step button).
_IMAGE_PROBLEMS = r"""
async () => {
  const out = [];
  const cells = window.__ks.panel.content.widgets;
  const oneColour = (source, w, h) => {
    const scale = Math.min(1, 600 / Math.max(w, h));   // a thin line survives 600 px
    const cw = Math.max(1, Math.round(w * scale)), ch = Math.max(1, Math.round(h * scale));
    const cv = document.createElement('canvas');
    cv.width = cw; cv.height = ch;
    const ctx = cv.getContext('2d', {willReadFrequently: true});
    ctx.drawImage(source, 0, 0, cw, ch);
    const d = new Uint32Array(ctx.getImageData(0, 0, cw, ch).data.buffer);
    for (let k = 1; k < d.length; k++) if (d[k] !== d[0]) return false;
    return true;
  };
  for (let i = 0; i < cells.length; i++) {
    const area = cells[i].model.type === 'code' &&
                 cells[i].node.querySelector('.jp-Cell-outputArea');
    if (!area) continue;
    const player = !!area.querySelector('.kafkasim-step');
    for (const img of area.querySelectorAll('img')) {
      try { await Promise.race([img.decode(), new Promise(r => setTimeout(r, 3000))]); }
      catch (e) {}
      const what = `img ${img.naturalWidth}x${img.naturalHeight} ` +
                   `(${(img.getAttribute('alt') || img.src || '').slice(0, 60)})`;
      if (!img.naturalWidth || !img.naturalHeight) {
        out.push({cell: i, kind: 'broken image', what, player});
      } else {
        try {
          if (oneColour(img, img.naturalWidth, img.naturalHeight))
            out.push({cell: i, kind: 'blank image', what, player});
        } catch (e) { out.push({cell: i, kind: 'unreadable image', what: what + ' ' + e, player}); }
      }
    }
    // (the stage's token layer, .ks-canvas, is a transparent overlay on its SVG picture: empty
    // whenever no message is in flight, so it is not a picture of its own)
    for (const cv of area.querySelectorAll('canvas:not(.ks-canvas)')) {
      if (!cv.width || !cv.height) {
        out.push({cell: i, kind: 'broken image', what: `canvas ${cv.width}x${cv.height}`, player});
        continue;
      }
      let ctx = null;
      try { ctx = cv.getContext('2d'); } catch (e) {}
      if (ctx && oneColour(cv, cv.width, cv.height))     // (a WebGL canvas: not checked)
        out.push({cell: i, kind: 'blank image', what: `canvas ${cv.width}x${cv.height}`, player});
    }
  }
  return out;
}
"""

# The screen the course is written for: 1280x720 with JupyterLab's left sidebar (files) open.
SCREEN = {"width": 1280, "height": 720}


@dataclass
class Problem:
    cell: int | None
    kind: str          # widget | traceback | stderr | run
    text: str

    def __str__(self) -> str:
        where = f"cell {self.cell}" if self.cell is not None else "kernel"
        return f"[{self.kind}] {where}: {self.text.strip()[:600]}"


@dataclass
class Timing:
    action: str
    ms: float          # input event -> last change of the watched cell's DOM
    changed: bool


@dataclass
class Notebook:
    """One notebook open in the lab page (``__ks`` in the page holds its panel and listeners)."""

    page: object
    path: str
    timings: list[Timing] = field(default_factory=list)

    @classmethod
    def open(cls, page, path: str) -> Notebook:
        page.evaluate(_INSTALL, [path, 120_000])
        page.wait_for_function(
            "() => window.__ks.panel.sessionContext.session?.kernel?.status === 'idle'",
            timeout=120_000)
        return cls(page, path)

    def wait_idle(self, timeout_s: float = 60.0) -> None:
        """Wait until the notebook's kernel is idle."""
        self.page.wait_for_function(
            "() => window.__ks.panel.sessionContext.session?.kernel?.status === 'idle'",
            timeout=timeout_s * 1000)

    def close(self) -> None:
        self.page.evaluate(_CLOSE)

    # -- running ---------------------------------------------------------------------------------
    def run_all(self, timeout_s: float = 300.0) -> str:
        """Run > Run All Cells; 'ok' once it finished and the kernel is idle."""
        return self.page.evaluate(_RUN_ALL, [int(timeout_s * 1000), None])

    def run_above(self, index: int, timeout_s: float = 300.0) -> str:
        """Run > Run All Above Selected Cell, with cell ``index`` selected."""
        return self.page.evaluate(_RUN_ALL, [int(timeout_s * 1000), index])

    def cells(self) -> list[dict]:
        return self.page.evaluate(_CELLS)

    def run_cell(self, index: int, source: str | None = None) -> str:
        return self.page.evaluate(_RUN_CELL, [index, source])

    def problems(self, allow: list[str] = ()) -> list[Problem]:
        """Widget render errors in the DOM, tracebacks and stderr (cell outputs and every iopub
        message of the kernel, so widget callbacks count too), minus stderr matching ``allow``."""
        allowed = [re.compile(a, re.S) for a in (*ALLOW_EVERYWHERE, *allow)]

        def stderr_ok(text: str) -> bool:
            rest = text
            for a in allowed:
                rest = a.sub("", rest)
            return not rest.strip()

        out: list[Problem] = []
        for d in self.page.evaluate(_DOM_PROBLEMS, list(WIDGET_ERRORS)):
            out.append(Problem(d["cell"], d["kind"], d["text"]))
        for c in self.cells():
            if c["type"] != "code":
                continue
            for o in c["outputs"]:
                if o.get("output_type") == "error":
                    out.append(Problem(c["index"], "traceback",
                                       f"{o.get('ename')}: {o.get('evalue')}"))
                elif o.get("output_type") == "stream" and o.get("name") == "stderr":
                    text = "".join(o.get("text", ""))
                    if not stderr_ok(text):
                        out.append(Problem(c["index"], "stderr", text))
        for m in self.page.evaluate("() => window.__ks.iopub"):
            if m["parent"] == "execute_request":
                continue      # already seen in the cell's outputs above
            if m["kind"] == "traceback" or not stderr_ok(m["text"]):
                out.append(Problem(None, m["kind"], f"(from a {m['parent']}) {m['text']}"))
        return out

    def screenshot(self, path: Path, cell: int | None = None) -> Path:
        if cell is not None:
            self.page.evaluate("(i) => window.__ks.panel.content.widgets[i].node"
                               ".scrollIntoView({block: 'start'})", cell)
        path.parent.mkdir(parents=True, exist_ok=True)
        self.page.screenshot(path=str(path))
        return path

    def image_problems(self) -> list[dict]:
        """Broken and blank (one-colour) images and canvases in the cells' outputs, each as
        ``{cell, kind, what, player}`` (``_IMAGE_PROBLEMS``)."""
        return self.page.evaluate(_IMAGE_PROBLEMS)

    def learner_screen(self) -> None:
        """Resize the page to ``SCREEN`` and open the left sidebar (the file browser)."""
        self.page.set_viewport_size(SCREEN)
        self.page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")

    # -- finding things ----------------------------------------------------------------------------
    def find_cell(self, pattern: str, flags=re.M) -> int | None:
        rx = re.compile(pattern, flags)
        for c in self.cells():
            if c["type"] == "code" and rx.search(c["source"]):
                return c["index"]
        return None

    def cell_locator(self, index: int):
        self.page.evaluate("(i) => window.__ks.panel.content.widgets[i].node"
                           ".scrollIntoView({block: 'center'})", index)
        return self.page.locator(".jp-Notebook .jp-Cell").nth(index)

    def signature(self, index: int) -> str:
        return self.page.evaluate(_SIGNATURE, index)

    # -- acting, timed ---------------------------------------------------------------------------
    def timed(self, index: int, action: str, do, quiet_ms: int = 200,
              timeout_s: float = 60.0) -> Timing:
        """Run ``do()`` (mouse or keyboard input on cell ``index``), wait until the kernel is idle
        again and the cell's DOM has been still for ``quiet_ms``; time from the input event to
        the cell's last DOM change."""
        # an earlier input's work (a player's produce, say) may still hold the kernel: arming
        # while it is busy would miss the busy edge of this input and wait for ever
        self.wait_idle(timeout_s)
        before = self.signature(index)
        self.page.evaluate(_ARM, index)
        try:
            do()
            self.page.wait_for_function(_SETTLED, arg=quiet_ms, timeout=timeout_s * 1000,
                                        polling=25)
        finally:
            marks = self.page.evaluate(_DISARM)
        end = marks["lastMut"] if marks["lastMut"] is not None else marks["idleAt"]
        t = Timing(action, round(max(0.0, end - marks["t0"]), 1), self.signature(index) != before)
        self.timings.append(t)
        return t

    def drag_slider(self, slider, fraction: float) -> None:
        """Drag a noUiSlider handle (ipywidgets' sliders) to ``fraction`` of its track."""
        slider.scroll_into_view_if_needed()
        handle = slider.locator(".noUi-handle").first
        track = slider.locator(".noUi-base, .noUi-target").first
        hb, tb = handle.bounding_box(), track.bounding_box()
        mouse = self.page.mouse
        mouse.move(hb["x"] + hb["width"] / 2, hb["y"] + hb["height"] / 2)
        mouse.down()
        x = tb["x"] + tb["width"] * fraction
        mouse.move(x, hb["y"] + hb["height"] / 2, steps=4)
        mouse.up()

    def slider_fraction(self, slider) -> float:
        hb = slider.locator(".noUi-handle").first.bounding_box()
        tb = slider.locator(".noUi-base, .noUi-target").first.bounding_box()
        return (hb["x"] + hb["width"] / 2 - tb["x"]) / max(tb["width"], 1)


def widget_slider(cell, label: str | None = None):
    """The first ipywidgets slider in ``cell``, or the one whose description matches ``label``."""
    sliders = cell.locator(".widget-slider")
    if label is not None:
        sliders = sliders.filter(has=cell.page.locator(".widget-label",
                                                         has_text=re.compile(label, re.I)))
    return sliders.first


def player_control(cell, name: str):
    """A player control by its stable class ``kafkasim-<name>`` (``step``, ``crash``, ``time``,
    ...: kafkasim.widgets._player_ui.CONTROL_CLASSES), whatever language its label is in."""
    return cell.locator(f".kafkasim-{name}").first


def widget_button(cell, label: str):
    return cell.locator("button.widget-button, button.jupyter-button").filter(
        has_text=re.compile(label, re.I)).first


def stage_cell(language: str | None = None) -> str:
    """The stage's demo cell: a 3-broker cluster (seed 3) with 50 acks=all records/s on
    'orders', run 2 s, and a Stage of it named 'c' (the browser tests, bench_stage and
    scripts/stage_screenshots.py show this one); ``language`` sets the course's language first."""
    lang = ("from kafkasim.course import i18n\n"
            f"i18n.set_language({language!r})\n") if language else ""
    return ("from kafkasim.course import *\n"
            "from kafkasim.widgets import Stage\n"
            + lang +
            "c = Cluster(3, seed=3)\n"
            "c.create_topic('orders', 1, 3)\n"
            "RateWorkload(c, c.producer(acks='all'), 'orders', rate=50, duration_ms=60_000)\n"
            "c.run(2_000)\n"
            "stage = Stage(c, name='c')\n"
            "stage")


def percentile(values: list[float], q: float) -> float:
    """Nearest-rank percentile (q in 0..100) of a non-empty list."""
    xs = sorted(values)
    k = max(0, min(len(xs) - 1, math.ceil(q / 100 * len(xs)) - 1))
    return xs[k]
