"""Screenshots of the stage (kafkasim.widgets.stage) in JupyterLab at 1280x720, sidebar open, in
the light and the dark theme: docs/stage-light.png and docs/stage-dark.png (README links them).

    PYTHONPATH=$PWD .venv/bin/python scripts/stage_screenshots.py [outdir]

Starts a throw-away JupyterLab on 127.0.0.1 and Debian's Chromium (tests/browser/labdriver.py),
runs one cell with a stage, steps to a moment with messages in flight and a paused broker, and
saves the page.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "browser"))

from labdriver import (  # noqa: E402
    LabServer,
    Notebook,
    course_copy,
    generated_notebook,
    launch_browser,
    open_lab,
    stage_cell,
)

CELL = stage_cell().removesuffix("stage") + \
    "stage.pause_broker(1, 3_000, at_ms=c.now + 20)\nstage"

THEMES = {"light": "JupyterLab Light", "dark": "JupyterLab Dark"}

STEP_TO_TOKENS = """async (n) => {
  const box = document.querySelector('.ks-stage');
  const visible = () => [...box.querySelectorAll('.ks-token')]
      .filter(g => g.style.display !== 'none').length;
  for (let i = 0; i < 400 && visible() < n; i++) {
    box.querySelector('.ks-next').click();
    await new Promise(r => requestAnimationFrame(r));
  }
  return visible();
}"""


def main(out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory() as tmp:
        root = course_copy(Path(tmp) / "course", notebooks=["00-start-here.ipynb"])
        server = LabServer(root, Path(tmp) / "state")
        try:
            with sync_playwright() as p:
                browser = launch_browser(p)
                page = open_lab(browser, server, width=1280, height=720)
                nb = Notebook.open(page, generated_notebook(root, "stage.ipynb", [CELL]))
                assert nb.run_cell(0) == "ok"
                page.locator(".ks-stage .ks-node").first.wait_for(timeout=60_000)
                page.evaluate("() => window.jupyterapp.commands.execute("
                              "'notebook:hide-cell-code')")
                page.evaluate("() => { const s = document.querySelector('.ks-speed');"
                              " s.value = '-2'; s.dispatchEvent(new Event('input')); }")
                print("tokens in flight:", page.evaluate(STEP_TO_TOKENS, 3))
                page.evaluate("() => document.querySelector('.ks-stage').scrollIntoView()")
                for name, theme in THEMES.items():
                    page.evaluate("(t) => window.jupyterapp.commands.execute("
                                  "'apputils:change-theme', {theme: t})", theme)
                    page.wait_for_timeout(1500)
                    path = out / f"stage-{name}.png"
                    page.screenshot(path=str(path))
                    print("wrote", path)
                nb.close()
                browser.close()
        finally:
            server.stop()


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else REPO / "docs")
