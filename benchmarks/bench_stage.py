"""The stage (issue 32) in Chromium: animation frame rate with 200 messages in flight, the time
from a click on a broker to its new state on the stage, and the player (now its stage) on the
notebooks' scenarios next to the player before issue 32 (matplotlib frames), in the same run.

- ``fps_200``: animation frames per second over 3 s of playing with 200 tokens in flight (a
  window whose tokens are replaced by 200 synthetic ones between the six nodes: the frame cost
  depends on how many are drawn, not on where they came from); ``frame_gap_p95_ms`` the 95th
  percentile of the gaps between frames;
- ``click_p50_ms`` / ``click_p95_ms``: a click on broker 2 (alternately crash and restart) to the
  broker drawn in its new state, through the kernel (``Cluster.crash``/``start`` and the next
  window). The click is acknowledged on the broker in the same frame (a pending outline).

- ``player_*`` (the notebooks' scenarios: 02 ISR shrink and expand, 07 KRaft controller
  failover, 08 Jepsen 2013, each a ``Player`` of ``Scenario.named`` in a notebook cell):
  ``seek`` the time slider dragged (``bench_browser._player``: input to the cell's last DOM
  change), ``step`` a click on step and ``key`` the → key to the stage showing something else,
  ``fault`` a click on a broker (crash, restart); ``*_unchanged`` counts inputs that changed
  nothing. ``old_player_*``: the same cells and the same drags and clicks on the player of commit
  ``BASE`` (main before this change: step button, crash/restart buttons, PNG frames), from a
  ``git archive`` of it served by its own JupyterLab, in the same run.
- ``player_<action>_browser_cpu_ms`` / ``_kernel_cpu_ms``: the CPU one input took, in the
  browser's main thread and in the kernel (``_Cpu``): what the machine's load multiplies into
  latency; ``idle``: per second of a shown player left alone.
- ``base_*`` (and ``ratio_*``, now / base): the same figures for the stage of ``STAGE_BASE``,
  measured by this file on a ``git archive`` of it with its own lab, in the same run.

Targets (issue 32): >= 50 frames/s with 200 in flight, click or key to visible change <= 100 ms
p95, a seek <= 300 ms p95 on the notebooks' scenarios.
A measurement: a missed target is reported, it does not fail the run. The lab and the browser are
the browser suite's (tests/browser/labdriver.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))

from labdriver import (  # noqa: E402  (the browser suite's driver)
    LabServer,
    Notebook,
    course_copy,
    generated_notebook,
    launch_browser,
    open_lab,
    percentile,
    player_control,
    stage_cell,
)

CELLS = [
    stage_cell(),
    # 200 tokens in flight for the whole window, between the six nodes
    "w = dict(stage.window)\n"
    "ids = [n['id'] for n in w['nodes'] if n['kind'] != 'client']\n"
    "toks = []\n"
    "for i in range(200):\n"
    "    a, b = ids[i % len(ids)], ids[(i * 7 + 1) % len(ids)]\n"
    "    b = ids[(i + 1) % len(ids)] if a == b else b\n"
    "    toks.append(dict(w['tokens'][0], id=10**6 + i, src=a, dst=b, sent=w['t0'] + i % 50,\n"
    "                     recv=w['t0'] + 2000 - i % 37, fate='delivered', held=False))\n"
    "w['tokens'], w['serial'], w['t1'] = toks, -1, w['t0'] + 2000   # 3 s of play fit in it\n"
    "w['more'] = False              # (not to be replaced by its extension while it plays)\n"
    "stage.window = w",
]

FPS = """async () => {
  const box = document.querySelector('.ks-stage');
  const s = box.querySelector('.ks-speed'); s.value = '-1'; s.dispatchEvent(new Event('input'));
  box.querySelector('.ks-play').click();
  await new Promise(r => setTimeout(r, 300));
  const gaps = []; let last = null; const t0 = performance.now();
  while (performance.now() - t0 < 3000) {
    const now = await new Promise(r => requestAnimationFrame(r));
    if (last !== null) gaps.push(now - last);
    last = now;
  }
  const shown = [...box.querySelectorAll('.ks-token')].filter(g => g.style.display !== 'none');
  box.querySelector('.ks-play').click();
  gaps.sort((a, b) => a - b);
  return {fps: gaps.length / 3, gap_p95: gaps[Math.floor(gaps.length * 0.95)],
          visible: shown.length};
}"""

CLICK = """async (node) => {
  const sel = `.ks-broker[data-node='${node}']`;
  const before = document.querySelector(sel).classList.contains('ks-crashed');
  const t0 = performance.now();
  document.querySelector(sel).dispatchEvent(new MouseEvent('click', {bubbles: true}));
  while (performance.now() - t0 < 10000) {
    const g = document.querySelector(sel);
    if (g && g.classList.contains('ks-crashed') !== before &&
        !document.querySelector('.ks-stage').classList.contains('ks-waiting'))
      return performance.now() - t0;
    await new Promise(r => requestAnimationFrame(r));
  }
  return -1;
}"""


BASE = "d8f5e36"          # main before the player became its stage (issue 32)
#: the stage before its round trips and per-frame drawing were cut (no request when it renders,
#: extension in the background, a still stage draws nothing): measured by its own bench_stage
#: in its own lab, in the same run (KAFKASIM_BENCH_STAGE_BASE: another commit, or 0 to skip)
STAGE_BASE = "39eafc4"
SCENARIOS = (   # (notebook, the player as the notebook builds it, on the scenario it shows)
    ("02", "Player(Scenario.named('seed-isr-shrink-expand'), show_isr=True)"),
    ("07", "Player(Scenario.named('kraft-controller-failover'), topic='orders')"),
    ("08", "Player(Scenario.named('jepsen-2013-unsafe'), show_isr=True)"),
)
PLAYER_CELL = ("from kafkasim.course import *\n"
               "from kafkasim.scenarios.scenario import Scenario\n"
               "player = {player}\n"
               "player")

#: run inside a ``git archive`` of BASE: its own lab driver and bench_browser drive its player
OLD_DRIVER = """
import json, sys, tempfile
from pathlib import Path
root = Path(sys.argv[1]); sys.path[:0] = [str(root / 'tests' / 'browser'), str(root)]
from labdriver import (LabServer, Notebook, course_copy, generated_notebook, launch_browser,
                       open_lab)
from benchmarks import bench_browser
from playwright.sync_api import sync_playwright
cells, reps = json.loads(sys.argv[2]), int(sys.argv[3])
timings = []
with tempfile.TemporaryDirectory() as tmp:
    course = course_copy(Path(tmp) / 'course', ['00-start-here.ipynb'])
    server = LabServer(course, Path(tmp) / 'state')
    try:
        with sync_playwright() as p:
            browser = launch_browser(p)
            page = open_lab(browser, server, width=1280, height=720)
            for i, cell in enumerate(cells):
                nb = Notebook.open(page, generated_notebook(course, f'old-{i}.ipynb', [cell]))
                try:
                    assert nb.run_cell(0) == 'ok'
                    bench_browser._player(nb, 0, reps)
                    timings += nb.timings
                finally:
                    nb.close()
            browser.close()
    finally:
        server.stop()
print(json.dumps(bench_browser.summarize(timings)))
"""


def _player_cells(quick: bool) -> list[str]:
    return [PLAYER_CELL.format(player=p) for _nb, p in SCENARIOS[:1 if quick else None]]


class _Cpu:
    """CPU time per action, which the machine's load does not scale as it does latency: the
    browser's main-thread busy time (CDP ``Performance.getMetrics`` TaskDuration) and the
    kernels' CPU time (the lab server's child processes), in ms, summed per action."""

    def __init__(self, page, server) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Performance.enable")
        self.server = server
        self.ms: dict[str, list[float]] = {}
        self.n: dict[str, int] = {}

    def now(self) -> tuple[float, float]:
        import psutil

        m = {x["name"]: x["value"] for x in self.cdp.send("Performance.getMetrics")["metrics"]}
        kernel = 0.0
        for child in psutil.Process(self.server.proc.pid).children(recursive=True):
            try:
                t = child.cpu_times()
                kernel += t.user + t.system
            except psutil.Error:
                pass
        return m["TaskDuration"] * 1000, kernel * 1000

    def count(self, action: str, do, n: int = 1):
        b0, k0 = self.now()
        out = do()
        b1, k1 = self.now()
        acc = self.ms.setdefault(action, [0.0, 0.0])
        acc[0] += b1 - b0
        acc[1] += k1 - k0
        self.n[action] = self.n.get(action, 0) + n
        return out

    def summary(self) -> dict:
        out = {}
        for action, (browser, kernel) in self.ms.items():
            n = max(self.n[action], 1)
            out[f"{action}_browser_cpu_ms"] = round(browser / n, 1)
            out[f"{action}_kernel_cpu_ms"] = round(kernel / n, 1)
        return out


def _drive_player(nb, cpu: _Cpu, reps: int) -> None:
    """bench_browser._player's inputs one by one (seek, step, fault), then ``reps`` → keys,
    each counted by ``cpu``, after two seconds of the player left alone (``idle``)."""
    from benchmarks import bench_browser

    box = nb.cell_locator(0)
    stage = box.locator(".ks-stage").first
    stage.locator(".ks-broker").first.wait_for(timeout=60_000)
    nb.page.wait_for_timeout(1000)
    cpu.count("idle", lambda: nb.page.wait_for_timeout(2000), n=2)
    slider = player_control(box, "time")
    broker = stage.locator(".ks-broker").first
    for r in range(reps):
        f = bench_browser.FRACTIONS[r % len(bench_browser.FRACTIONS)]
        cpu.count("seek", lambda f=f: nb.timed(0, "seek", lambda: nb.drag_slider(slider, f)))
        cpu.count("step", lambda: bench_browser.stage_step(nb, 0))
        cpu.count("fault", lambda: nb.timed(0, "fault", broker.click))
    for _ in range(reps):
        cpu.count("key", lambda: bench_browser.stage_step(nb, 0, "key", key=True))


def _players_now(page, server, root: Path, cells: list[str], reps: int) -> dict:
    """This checkout's player (its stage) on ``cells``: bench_browser's seek/step/fault plus
    the → key, summarized, with the CPU each took (``_Cpu``; ``idle``: a second of the shown
    player left alone)."""
    from benchmarks import bench_browser

    cpu = _Cpu(page, server)
    timings = []
    for i, cell in enumerate(cells):
        nb = Notebook.open(page, generated_notebook(root, f"bench-player-{i}.ipynb", [cell]))
        try:
            if nb.run_cell(0) != "ok":
                raise RuntimeError(f"the player cell did not run: {cell}")
            _drive_player(nb, cpu, reps)
            timings += nb.timings
        finally:
            nb.close()
    out = bench_browser.summarize(timings)
    keys = [t.ms for t in timings if t.action == "key"]
    out.update({"key_n": len(keys), "key_p50_ms": round(percentile(keys, 50), 1),
                "key_p95_ms": round(percentile(keys, 95), 1),
                "key_unchanged": sum(1 for t in timings if t.action == "key" and not t.changed)})
    out.update(cpu.summary())
    return out


def _players_old(cells: list[str], reps: int) -> dict:
    """The player of commit BASE on the same cells, in its own lab (a ``git archive`` of it)."""
    with tempfile.TemporaryDirectory(prefix="kafkasim-bench-old-") as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", BASE],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        out = subprocess.run([sys.executable, "-c", OLD_DRIVER, tmp, json.dumps(cells),
                              str(reps)], capture_output=True, text=True, timeout=3600)
        if out.returncode != 0:
            raise RuntimeError(f"the old player's bench failed: {out.stderr[-2000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])


def _stage_base(ref: str, quick: bool) -> dict:
    """This benchmark on commit ``ref``'s stage and player (a ``git archive`` of it with its
    own lab, this file copied into it), the old player left out."""
    with tempfile.TemporaryDirectory(prefix="kafkasim-bench-base-") as tmp:
        archive = subprocess.run(["git", "-C", str(REPO), "archive", ref],
                                 check=True, capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        # this file, not the base's: the same measurements of the base's stage and player
        (Path(tmp) / "benchmarks" / "bench_stage.py").write_bytes(Path(__file__).read_bytes())
        env = dict(os.environ, KAFKASIM_BENCH_OLD_PLAYER="0", KAFKASIM_BENCH_STAGE_BASE="0",
                   PYTHONPATH=tmp)
        code = ("import json, sys; sys.path.insert(0, sys.argv[1]); "
                "from benchmarks import bench_stage; "
                "print(json.dumps(bench_stage.run(quick=sys.argv[2] == '1')))")
        out = subprocess.run([sys.executable, "-c", code, tmp, "1" if quick else "0"],
                             capture_output=True, text=True, timeout=3600, env=env, cwd=tmp)
        if out.returncode != 0:
            raise RuntimeError(f"the base stage's bench failed: {out.stderr[-2000:]}")
        return json.loads(out.stdout.strip().splitlines()[-1])


def run(quick: bool = False) -> dict:
    """This checkout's stage and player; then (unless switched off) the stage of
    ``STAGE_BASE`` (``base_*``, with now/base ratios) and the player of ``BASE``
    (``old_player_*``), each in its own lab, in the same run."""
    out = _run_now(quick)
    ref = os.environ.get("KAFKASIM_BENCH_STAGE_BASE", STAGE_BASE)
    if ref != "0":
        base = _stage_base(ref, quick)
        out["stage_base"] = ref
        for k in ("fps_200", "click_p50_ms", "click_p95_ms", *(
                f"player_{a}_{q}" for a in ("idle", "seek", "step", "key", "fault")
                for q in ("p50_ms", "p95_ms", "max_ms", "unchanged", "browser_cpu_ms",
                          "kernel_cpu_ms"))):
            if k in base:
                out[f"base_{k}"] = base[k]
                if k.endswith("_ms") and k in out and base[k]:
                    out[f"ratio_{k}"] = round(out[k] / base[k], 2)
        out["base_load_avg_1m_start"] = base.get("load_avg_1m_start")
    if os.environ.get("KAFKASIM_BENCH_OLD_PLAYER", "1") != "0":
        old = _players_old(_player_cells(quick), 3 if quick else 8)
        for action in ("seek", "step", "fault"):
            for k in ("n", "p50_ms", "p95_ms", "max_ms", "unchanged"):
                if f"{action}_{k}" in old:
                    out[f"old_player_{action}_{k}"] = old[f"{action}_{k}"]
    out["load_avg_1m_end_all"] = round(os.getloadavg()[0], 2)
    return out


def _run_now(quick: bool) -> dict:
    from playwright.sync_api import sync_playwright

    load_start = round(os.getloadavg()[0], 2)
    clicks = 4 if quick else 20
    with tempfile.TemporaryDirectory(prefix="kafkasim-bench-stage-") as tmp:
        root = course_copy(Path(tmp) / "course", ["00-start-here.ipynb"])
        server = LabServer(root, Path(tmp) / "state")
        try:
            with sync_playwright() as p:
                browser = launch_browser(p)
                try:
                    page = open_lab(browser, server, width=1280, height=720)
                    nb = Notebook.open(page, generated_notebook(root, "bench-stage.ipynb", CELLS))
                    try:
                        if nb.run_cell(0) != "ok":
                            raise RuntimeError("the stage cell did not run")
                        page.locator(".ks-stage .ks-node").first.wait_for(timeout=60_000)
                        times = []
                        for _ in range(clicks):
                            times.append(page.evaluate(CLICK, 2))
                            page.wait_for_timeout(150)
                        if nb.run_cell(1) != "ok":
                            raise RuntimeError("the 200-token cell did not run")
                        page.wait_for_timeout(500)
                        fps = page.evaluate(FPS)
                    finally:
                        nb.close()
                    players = _players_now(page, server, root, _player_cells(quick),
                                           3 if quick else 8)
                finally:
                    browser.close()
        finally:
            server.stop()
    if min(times) < 0:
        raise RuntimeError(f"a click never changed the broker's state: {times}")
    out = {"fps_200": round(fps["fps"], 1), "frame_gap_p95_ms": round(fps["gap_p95"], 1),
           "tokens_drawn": fps["visible"], "clicks": len(times),
           "click_p50_ms": round(percentile(times, 50), 1),
           "click_p95_ms": round(percentile(times, 95), 1)}
    out["meets_target_fps"] = out["fps_200"] >= 50
    out["meets_target_click"] = out["click_p95_ms"] <= 100
    out["player_scenarios"] = " ".join(nb for nb, _p in SCENARIOS[:1 if quick else None])
    keep = ("n", "p50_ms", "p95_ms", "max_ms", "unchanged")
    for action in ("seek", "step", "key", "fault"):
        for k in keep:
            if f"{action}_{k}" in players:
                out[f"player_{action}_{k}"] = players[f"{action}_{k}"]
    for action in ("idle", "seek", "step", "key", "fault"):
        for k in ("browser_cpu_ms", "kernel_cpu_ms"):
            out[f"player_{action}_{k}"] = players[f"{action}_{k}"]
    out["meets_target_player_seek"] = players["seek_p95_ms"] <= 300
    out["meets_target_player_step_key"] = max(players["step_p95_ms"],
                                              players["key_p95_ms"]) <= 100
    out["load_avg_1m_start"], out["load_avg_1m_end"] = load_start, round(os.getloadavg()[0], 2)
    return out


if __name__ == "__main__":
    print(run(quick="--quick" in sys.argv))
