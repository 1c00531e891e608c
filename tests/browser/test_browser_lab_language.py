"""`make lab LANG=ko` seen in Chromium: scripts/lab.sh with an absolute and a relative
KAFKASIM_LAB_DIR opens JupyterLab in Korean (its menus from the Korean language pack) with no
"get notified about Jupyter news?" prompt, and the start page is the Korean edition's.

The browser suite's own lab (conftest.lab_server) is not lab.sh; this starts lab.sh itself."""
from __future__ import annotations

import os
import re
import subprocess
import threading
import time
from pathlib import Path

import pytest
from labdriver import REPO, free_port
from processes import stop_process_group

SKIP = os.environ.get("KAFKASIM_SKIP_BROWSER", "").strip() not in ("", "0")
pytestmark = [pytest.mark.browser, pytest.mark.slow,
              pytest.mark.skipif(SKIP, reason="KAFKASIM_SKIP_BROWSER is set")]


class ScriptLab:
    """scripts/lab.sh --lang=ko on a free port, LANG=ko in its environment (as `make lab LANG=ko`
    leaves it), its URL read from its log."""

    def __init__(self, tmp_path: Path, relative: bool):
        self.port = free_port()
        self.lab_dir = tmp_path / "lab"
        named = os.path.relpath(self.lab_dir, REPO) if relative else str(self.lab_dir)
        env = {**os.environ, "LANG": "ko", "KAFKASIM_LAB_DIR": named,
               "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime")}
        self.proc = subprocess.Popen(
            [str(REPO / "scripts/lab.sh"), "--lang=ko", f"--port={self.port}",
             "--ServerApp.port_retries=0"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            start_new_session=True)
        self.log: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self):
        for line in self.proc.stderr:
            self.log.append(line)

    def url(self, timeout_s: float = 120) -> str:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for line in self.log:
                m = re.search(r"http://127\.0\.0\.1:\d+/\S*\?token=\S+", line)
                if m:
                    return m.group(0)
            if self.proc.poll() is not None:
                break
            time.sleep(0.2)
        raise AssertionError("lab.sh printed no URL:\n" + "".join(self.log[-40:]))

    def stop(self):
        stop_process_group(self.proc)


@pytest.mark.parametrize("relative", [False, True], ids=["absolute-dir", "relative-dir"])
def test_make_lab_korean_opens_a_korean_jupyterlab_without_the_news_prompt(
        browser, tmp_path, relative):
    lab = ScriptLab(tmp_path, relative)
    page = None
    try:
        url = lab.url()
        assert "/lab/tree/notebooks/ko/00-start-here.ipynb" in url
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url, wait_until="domcontentloaded")
        # (lab.sh does not expose window.jupyterapp: wait for the menu bar itself)
        page.wait_for_selector("#jp-menu-panel .lm-MenuBar-itemLabel", timeout=120_000)
        menus = page.locator("#jp-menu-panel .lm-MenuBar-itemLabel").all_inner_texts()
        assert "파일" in menus and "File" not in menus, menus
        # the start notebook opened: its Korean title is on the page
        page.wait_for_selector(".jp-Notebook .jp-RenderedMarkdown h1", timeout=120_000)
        # JupyterLab asks about news a moment after start-up, as a toast; give it the time
        page.wait_for_timeout(3000)
        toasts = page.locator(".Toastify__toast").all_inner_texts()
        assert not [t for t in toasts if "news" in t.lower() or "뉴스" in t], toasts
        assert not [line for line in lab.log if "Cannot set LC_" in line or
                    "unsupported locale" in line], lab.log
    finally:
        if page is not None:
            page.close()
        lab.stop()
