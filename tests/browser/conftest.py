"""Fixtures of the browser suite: one JupyterLab on a copy of the course, one Chromium, one page.

Both are started once per pytest session, and only when a browser test is collected. The lab
serves a temp copy of notebooks/ and assets/ (so the repository stays clean) with a random token
on a free 127.0.0.1 port; its kernels are this venv's Python with this checkout on PYTHONPATH.

Set KAFKASIM_SKIP_BROWSER=1 to skip the suite explicitly (e.g. on a machine without Chromium);
otherwise a missing Chromium or Playwright fails the tests with what to install.
"""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path

import pytest
from labdriver import LabServer, chromium_path, course_copy, launch_browser, open_lab

SKIP = os.environ.get("KAFKASIM_SKIP_BROWSER", "").strip() not in ("", "0")


def pytest_collection_modifyitems(items):
    for item in items:
        if "lab_page" in getattr(item, "fixturenames", ()):
            item.add_marker(pytest.mark.browser)
            if SKIP:
                item.add_marker(pytest.mark.skip(reason="KAFKASIM_SKIP_BROWSER is set"))


@pytest.fixture(scope="session")
def course_root(tmp_path_factory) -> Path:
    return course_copy(tmp_path_factory.mktemp("course"))


@pytest.fixture(scope="session")
def lab_server(course_root, tmp_path_factory):
    server = LabServer(course_root, tmp_path_factory.mktemp("jupyter-state"))
    yield server
    server.stop()


@pytest.fixture(scope="session")
def browser():
    if chromium_path() is None:
        pytest.fail("Chromium not found: run scripts/check-chromium.sh (as root it installs "
                    "Debian's chromium), or set KAFKASIM_SKIP_BROWSER=1 to skip the browser suite")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        pytest.fail("playwright is not installed: pip install -r requirements.txt")
    with sync_playwright() as p:
        b = launch_browser(p)
        yield b
        b.close()


@pytest.fixture(scope="session")
def lab_page(browser, lab_server):
    page = open_lab(browser, lab_server)
    yield page
    page.close()


@pytest.fixture
def shots(tmp_path, request):
    """``with shots(notebook): ...`` saves a screenshot when the block fails, and prints where."""

    @contextmanager
    def guard(nb, cell: int | None = None):
        try:
            yield
        except BaseException:
            name = re.sub(r"[^\w.-]+", "_", request.node.name)
            path = tmp_path / "screenshots" / f"{name}.png"
            try:
                nb.screenshot(path, cell)
                print(f"screenshot: {path}")
            except Exception as exc:       # the page may be gone; the failure still counts
                print(f"screenshot failed: {exc}")
            raise

    return guard
