"""The foundation: layout, pinned set-up, Makefile and CI wiring, benchmark runner, JupyterLab.

These guard the promise of the README: on a fresh machine, `make lab` and `make test` do all the
set-up, and CI runs exactly `make test`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import importlib.metadata as metadata
import json
import os
import re
import socket
import stat
import subprocess
import sys
import textwrap
import threading
import time
import urllib.error
import urllib.request
import uuid
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from processes import stop_process_group

from benchmarks import run as bench_run

REPO = Path(__file__).resolve().parents[1]


def pinned_requirements() -> dict[str, Requirement]:
    reqs = {}
    for line in (REPO / "requirements.txt").read_text().splitlines():
        line = line.split("#")[0].strip()
        if line:
            req = Requirement(line)
            reqs[canonical(req.name)] = req
    return reqs


def canonical(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


# --- Layout and pins ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path",
    [
        "README.md",
        "requirements.txt",
        "pyproject.toml",
        "Makefile",
        ".ci/run",
        "kafkasim/__init__.py",
        "kafkasim/experiments/spark.py",
        "notebooks/00-start-here.ipynb",
        "tests/conftest.py",
        "benchmarks/run.py",
        "scripts/check-java.sh",
    ],
)
def test_layout(path):
    assert (REPO / path).is_file(), f"{path} is missing"


@pytest.mark.parametrize(
    "script", [".ci/run", *(f"scripts/{p.name}" for p in (REPO / "scripts").glob("*.sh"))]
)
def test_shell_scripts_are_executable_and_strict(script):
    path = REPO / script
    assert path.stat().st_mode & stat.S_IXUSR, (
        f"{script} is not executable (git update-index --chmod=+x)"
    )
    text = path.read_text()
    assert text.startswith("#!/usr/bin/env bash\n")
    assert re.search(r"^set -e?uo pipefail$", text, re.M), f"{script} lacks set -euo pipefail"


def test_every_requirement_is_pinned_exactly():
    reqs = pinned_requirements()
    loose = [str(r) for r in reqs.values() if not str(r.specifier).startswith("==")]
    assert not loose, f"unpinned requirements: {loose}"
    for name in (
        "jupyterlab",
        "ipywidgets",
        "jupyterlab-widgets",
        "matplotlib",
        "pandas",
        "pyarrow",
        "pyspark",
        "nbval",
        "pytest",
        "hypothesis",
        "ruff",
    ):
        assert name in reqs, f"{name} is not pinned in requirements.txt"
    assert "connect" in reqs["pyspark"].extras
    assert str(reqs["pyspark"].specifier).startswith("==4.3.")
    # pyspark 4.3 warns on pandas 3.
    assert int(str(reqs["pandas"].specifier).removeprefix("==").split(".")[0]) < 3


def test_installed_versions_are_the_pinned_ones():
    wrong = {}
    for name, req in pinned_requirements().items():
        want = str(req.specifier).removeprefix("==")
        have = metadata.version(name)
        if have != want:
            wrong[name] = f"installed {have}, pinned {want}"
    assert not wrong, f"the venv differs from requirements.txt (re-run make): {wrong}"


def test_widget_pair_is_consistent():
    # A kernel/front-end widget mismatch shows as "Error displaying widget" in the browser only.
    reqs = pinned_requirements()
    needs = [Requirement(r) for r in metadata.requires("ipywidgets") or []]
    lab_widgets = next(r for r in needs if canonical(r.name) == "jupyterlab-widgets")
    pinned_lab_widgets = str(reqs["jupyterlab-widgets"].specifier).removeprefix("==")
    assert lab_widgets.specifier.contains(pinned_lab_widgets), (lab_widgets, pinned_lab_widgets)


def test_console_script_is_installed():
    scripts = metadata.entry_points(group="console_scripts")
    (entry,) = [ep for ep in scripts if ep.name == "kafkasim"]
    assert entry.value == "kafkasim.tools.cli:main"
    exe = Path(sys.executable).parent / "kafkasim"
    assert exe.is_file()
    result = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "usage: kafkasim" in result.stdout


def test_package_is_installed_editable_from_this_checkout():
    import kafkasim

    assert Path(kafkasim.__file__).resolve().parent == REPO / "kafkasim"
    assert metadata.version("kafkasim") == kafkasim.__version__


def test_readme_gives_the_commands_and_a_toc_slot():
    readme = (REPO / "README.md").read_text()
    for command in ("make lab", "make test", "make bench"):
        assert f"`{command}`" in readme or f"\n{command}" in readme, command
    assert readme.count("<!-- toc -->") == 1 and readme.count("<!-- /toc -->") == 1
    assert readme.index("<!-- toc -->") < readme.index("<!-- /toc -->")


# A newcomer reads the README in two minutes (issue 33): `wc -w README.md`, Korean pointer and
# the generated road map included: 406 words now, every notebook's summary one short line.
README_WORDS = 420
SUMMARY_WORDS = 12


def test_readme_is_a_two_minute_read():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    words = len(readme.split())
    assert words <= README_WORDS, f"README.md has {words} words (wc -w), budget {README_WORDS}"
    for heading in ("## The stage", "## Two commands", "## Course contents", "## In a workshop",
                    "## 한국어판", "(docs/stage-light.png)", "(docs/setup.md)",
                    "(docs/instructor-guide.md)", "set_presentation(True)", "LAB_LANG=ko"):
        assert heading in readme, f"README.md lost {heading!r}"
    korean = readme[readme.index("## 한국어판"):].split("\n## ")[0]
    assert len(korean.split()) <= 20, "the Korean section is a pointer, not a second README"


def test_the_road_maps_new_summaries_stay_one_short_line():
    """metadata.kafkasim.summary feeds the README's road map (scripts/make_toc.py): every
    notebook's summary stays one short line."""
    import json

    paths = sorted((REPO / "notebooks").glob("[0-9][0-9]*-*.ipynb"))
    assert len(paths) >= 17
    for path in paths:
        name = path.stem
        nb = json.loads(path.read_text(encoding="utf-8"))
        summary = nb["metadata"]["kafkasim"]["summary"]
        assert len(summary.split()) <= SUMMARY_WORDS and "\n" not in summary, (name, summary)


def test_jupyter_security_is_not_disabled():
    for path in ("Makefile", "scripts/lab.sh"):
        text = (REPO / path).read_text()
        for weakening in (
            "token=''",
            'token=""',
            "token= ",
            "password=",
            "disable_check_xsrf",
            "--ip=0.0.0.0",
            "--ip=*",
            "allow_origin",
        ):
            assert weakening not in text, f"{path} contains {weakening!r}"
    assert "--ip=127.0.0.1" in (REPO / "scripts/lab.sh").read_text()


# --- Makefile and CI wiring -----------------------------------------------------------------------


def make_dry_run(target: str, *variables: str) -> str:
    # Under `make test` this runs inside make: drop the parent's flags and directory messages.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MAKELEVEL", "MFLAGS")}
    result = subprocess.run(
        ["make", "--no-print-directory", "-n", target, *variables],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 0, result.stderr
    return result.stdout


def test_make_test_lints_then_runs_one_pytest():
    commands = make_dry_run("test").splitlines()
    assert "scripts/check-java.sh" in commands[0]
    ruff = next(i for i, c in enumerate(commands) if "ruff check" in c)
    pytest_runs = [i for i, c in enumerate(commands) if "scripts/pytest.sh" in c]
    assert len(pytest_runs) == 1 and ruff < pytest_runs[0]


def test_setup_checks_the_hangul_font_without_failing_on_it():
    commands = make_dry_run("setup").splitlines()
    assert any("scripts/check-fonts.sh" in c for c in commands)
    text = (REPO / "scripts/check-fonts.sh").read_text()
    assert "fc-list :lang=ko" in text and "fonts-nanum" in text
    assert re.search(r"^set -uo pipefail$", text, re.M), "a missing font must not fail the set-up"


def test_make_lab_and_bench_use_the_venv():
    assert "scripts/lab.sh" in make_dry_run("lab")
    assert ".venv/bin/python -m benchmarks.run" in make_dry_run("bench")


def test_pytest_wrapper_turns_no_tests_into_a_failure(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[tool.pytest.ini_options]\n")
    result = subprocess.run(
        [
            str(REPO / "scripts/pytest.sh"),
            str(tmp_path),
            "--rootdir",
            str(tmp_path),
            "-c",
            str(tmp_path / "pyproject.toml"),
            "-p",
            "no:cacheprovider",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        # the wrapper's exit code is what is tested, not pytest-xdist's workers (-n 0: none
        # started; one per core cost 12.9 CPU-s here against 4.1)
        env={**os.environ, "PYTEST_WORKERS": "0"},
    )
    assert result.returncode == 1, result.stdout + result.stderr
    assert "collected no tests" in result.stderr


def fake_make(tmp_path: Path, output: str, rc: int) -> dict[str, str]:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    make = bin_dir / "make"
    make.write_text(f"#!/bin/sh\ncat <<'OUT'\n{output}\nOUT\nexit {rc}\n")
    make.chmod(0o755)
    return {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}


@pytest.mark.parametrize(
    ("output", "rc", "ok"),
    [
        (
            "kafkasim: ran 9 tests and 3 notebook cells (1 notebooks)\n"
            "==== 12 passed, 3 skipped in 4.5s ====",
            0,
            True,
        ),
        (
            "kafkasim: ran 12 tests and 0 notebook cells (0 notebooks)\n"
            "==== 12 passed in 4.5s ====",
            0,
            False,
        ),
        ("==== 12 passed in 4.5s ====", 0, False),
        ("==== no tests ran in 0.01s ====", 0, False),
        ("==== 1 failed, 11 passed in 4.5s ====", 2, False),
        ("ruff: 3 errors", 2, False),
    ],
)
def test_ci_run_runs_make_test_and_checks_the_summary(tmp_path, output, rc, ok):
    env = fake_make(tmp_path, output, rc)
    result = subprocess.run(
        [str(REPO / ".ci/run")], capture_output=True, text=True, env=env, timeout=60
    )
    assert (result.returncode == 0) is ok, result.stdout + result.stderr
    if "no tests ran" in output:
        assert "no tests ran" in result.stderr


# --- Benchmark runner -----------------------------------------------------------------------------


def test_bench_runner_discovers_runs_and_records(tmp_path, capsys):
    (tmp_path / "bench_fast.py").write_text(
        textwrap.dedent(
            """
        def run(quick=False):
            return {"events_per_s": 1234567.0, "quick_mode": quick}
        """
        )
    )
    (tmp_path / "bench_broken.py").write_text(
        "def run(quick=False):\n    raise ValueError('boom')\n"
    )
    (tmp_path / "helper.py").write_text("raise AssertionError('not a benchmark')\n")
    results = tmp_path / "results"

    status = bench_run.main(["--quick", "--dir", str(tmp_path), "--results", str(results)])

    assert status == 1  # one benchmark failed, the other still ran
    fast = json.loads((results / "fast.json").read_text())
    assert fast["figures"] == {"events_per_s": 1234567.0, "quick_mode": True}
    assert fast["environment"]["python"] == sys.version.split()[0]
    broken = json.loads((results / "broken.json").read_text())
    assert broken["error"] == "ValueError: boom"
    out = capsys.readouterr().out
    assert re.search(r"fast\s+events_per_s\s+1,234,567", out)
    assert re.search(r"broken\s+ERROR\s+ValueError: boom", out)


def test_bench_runner_with_nothing_to_run(tmp_path, capsys):
    assert bench_run.main(["--dir", str(tmp_path), "--results", str(tmp_path / "r")]) == 0
    assert "no benchmarks" in capsys.readouterr().out
    assert bench_run.main(["nosuch", "--dir", str(tmp_path)]) == 1


# --- JupyterLab: served on 127.0.0.1, token required, the start notebook runs in it ---------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def http_status(url: str, token: str | None = None) -> int:
    request = urllib.request.Request(url)
    if token:
        request.add_header("Authorization", f"token {token}")
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status
    except urllib.error.HTTPError as err:
        return err.code


class LabServer:
    """scripts/lab.sh (what `make lab` runs) on a free port, with its token read from its log."""

    def __init__(self, tmp_path: Path, lang: str = "en", relative: bool = False,
                 extra_env: dict | None = None):
        self.port = free_port()
        self.start = ("notebooks/ko/00-start-here.ipynb" if lang == "ko"
                      else "notebooks/00-start-here.ipynb")
        self.lab_dir = tmp_path / "lab"     # the course copy the lab serves (lab/ by default)
        # KAFKASIM_LAB_DIR absolute, or relative to the repository (where `make lab` runs)
        named = os.path.relpath(self.lab_dir, REPO) if relative else str(self.lab_dir)
        env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"),
               "KAFKASIM_LAB_DIR": named, **(extra_env or {})}
        self.proc = subprocess.Popen(
            [str(REPO / "scripts/lab.sh"), f"--lang={lang}", f"--port={self.port}",
             "--ServerApp.port_retries=0"],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            start_new_session=True,
        )
        self.log: list[str] = []
        self.url_line = threading.Event()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        for line in self.proc.stderr:
            self.log.append(line)
            if "?token=" in line:
                self.url_line.set()

    def wait_for_token(self, timeout: float = 120) -> str:
        if not self.url_line.wait(timeout):
            raise AssertionError("JupyterLab printed no URL:\n" + "".join(self.log[-40:]))
        line = next(line for line in self.log if "?token=" in line)
        url = re.search(r"http://\S+", line).group(0)
        assert url.startswith(f"http://127.0.0.1:{self.port}/lab/tree/{self.start}")
        # The URL is logged a moment before the socket accepts connections.
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=5).close()
                break
            except OSError as err:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    log = "".join(self.log[-40:])
                    raise AssertionError(f"JupyterLab is not listening:\n{log}") from err
                time.sleep(0.2)
        return url.split("?token=")[1]

    def stop(self):
        stop_process_group(self.proc)
        self.reader.join(timeout=10)   # the log ends with the process group
        if not self.reader.is_alive():
            self.proc.stderr.close()


async def run_cells_in_kernel(
    base: str, token: str, kernel_id: str, cells: list[str]
) -> list[dict]:
    """Execute cells over the server's kernel websocket; return each cell's iopub messages."""
    from tornado.httpclient import HTTPRequest
    from tornado.websocket import websocket_connect

    ws_url = base.replace("http://", "ws://") + f"/api/kernels/{kernel_id}/channels"
    conn = await websocket_connect(HTTPRequest(ws_url, headers={"Authorization": f"token {token}"}))
    session = uuid.uuid4().hex
    results = []
    try:
        for code in cells:
            msg_id = uuid.uuid4().hex
            await conn.write_message(
                json.dumps(
                    {
                        "header": {
                            "msg_id": msg_id,
                            "msg_type": "execute_request",
                            "session": session,
                            "username": "test",
                            "version": "5.3",
                            "date": "",
                        },
                        "parent_header": {},
                        "metadata": {},
                        "channel": "shell",
                        "content": {
                            "code": code,
                            "silent": False,
                            "store_history": True,
                            "user_expressions": {},
                            "allow_stdin": False,
                            "stop_on_error": True,
                        },
                    }
                )
            )
            # Done when the shell reply AND iopub's "idle" for this request have both arrived:
            # the two channels are not ordered with respect to each other.
            iopub, reply, idle = [], None, False
            while reply is None or not idle:
                raw = await asyncio.wait_for(conn.read_message(), timeout=120)
                assert raw is not None, "kernel websocket closed"
                msg = _decode_ws_message(raw)
                if msg.get("parent_header", {}).get("msg_id") != msg_id:
                    continue
                if msg["channel"] == "iopub":
                    iopub.append(msg)
                    idle = idle or (
                        msg["msg_type"] == "status"
                        and msg["content"].get("execution_state") == "idle"
                    )
                elif msg["msg_type"] == "execute_reply":
                    reply = msg["content"]
            assert reply["status"] == "ok", f"cell failed in JupyterLab's kernel:\n{code}\n{reply}"
            results.append(iopub)
    finally:
        conn.close()
    return results


def _decode_ws_message(raw) -> dict:
    """A kernel message from the websocket: text frames are JSON; messages with binary buffers
    (widget state, for one) come as Jupyter's binary frame: a count of offsets, the offsets
    (4-byte big-endian each), then the JSON message and the buffers."""
    if isinstance(raw, str):
        return json.loads(raw)
    n = int.from_bytes(raw[:4], "big")
    offsets = [int.from_bytes(raw[4 + 4 * i:8 + 4 * i], "big") for i in range(n)]
    end = offsets[1] if n > 1 else len(raw)
    return json.loads(raw[offsets[0]:end].decode("utf-8"))


def non_loopback_address() -> str | None:
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent; this only picks the outgoing interface
            address = s.getsockname()[0]
        except OSError:
            return None
    return None if address.startswith("127.") else address


def test_make_lab_keeps_the_course_language_apart_from_the_locale():
    """`make lab LAB_LANG=ko` (or LANG=ko, a ko* LANG) chooses the Korean edition; LAB_LANG wins
    over LANG both ways."""
    assert "--lang=ko" in make_dry_run("lab", "LAB_LANG=ko")
    assert "--lang=ko" in make_dry_run("lab", "LANG=ko")
    assert "--lang=ko" in make_dry_run("lab", "LANG=ko_KR.UTF-8")
    assert "--lang=en" in make_dry_run("lab", "LANG=C.UTF-8")
    assert "--lang=en" in make_dry_run("lab", "LANG=ko", "LAB_LANG=en")


def lab_setting(base: str, token: str, plugin: str) -> dict:
    """A plugin's settings as the running JupyterLab reads them (its JUPYTERLAB_SETTINGS_DIR)."""
    with urllib.request.urlopen(f"{base}/lab/api/settings/{plugin}?token={token}",
                                timeout=60) as response:
        return json.load(response)["settings"]


@pytest.mark.slow
@pytest.mark.parametrize("relative", [False, True], ids=["absolute-dir", "relative-dir"])
def test_make_lab_in_korean_opens_the_korean_start_page_with_the_korean_interface(
        tmp_path, relative):
    """`make lab LANG=ko` with an absolute and a relative KAFKASIM_LAB_DIR: the Korean edition's
    start page; JupyterLab itself reads the Korean locale and "never fetch news" (no first-run
    news prompt) from the lab's settings; LANG=ko, which is no installed locale, gives the kernels
    C.UTF-8, so setlocale(LC_ALL, '') succeeds."""
    server = LabServer(tmp_path, lang="ko", relative=relative, extra_env={"LANG": "ko"})
    try:
        token = server.wait_for_token()
        base = f"http://127.0.0.1:{server.port}"
        assert http_status(f"{base}/lab/tree/{server.start}?token={token}") == 200
        with urllib.request.urlopen(f"{base}/lab/api/translations/?token={token}",
                                    timeout=60) as response:
            packs = json.load(response)["data"]
        assert "ko_KR" in packs, sorted(packs)
        settings = (server.lab_dir / ".jupyterlab-settings/ko/@jupyterlab/translation-extension"
                    / "plugin.jupyterlab-settings")
        assert json.loads(settings.read_text()) == {"locale": "ko_KR"}
        assert lab_setting(base, token,
                           "@jupyterlab/translation-extension:plugin")["locale"] == "ko_KR"
        notification = lab_setting(base, token, "@jupyterlab/apputils-extension:notification")
        assert notification["fetchNews"] == "false", notification
        copy = server.lab_dir / server.start
        assert copy.read_bytes() == (REPO / server.start).read_bytes()
        assert any("not installed here; the lab runs with C.UTF-8" in line for line in server.log)

        request = urllib.request.Request(
            f"{base}/api/kernels", method="POST", data=json.dumps({"name": "python3"}).encode(),
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=60) as response:
            kernel_id = json.load(response)["id"]
        cell = ("import locale, os\n"
                "print(locale.setlocale(locale.LC_ALL, ''), os.environ.get('LANG'))")
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            outputs = pool.submit(asyncio.run,
                                  run_cells_in_kernel(base, token, kernel_id, [cell])).result()
        text = "".join(m["content"].get("text", "") for m in outputs[0])
        assert text.split() == ["C.UTF-8", "C.UTF-8"], text
    finally:
        server.stop()


@pytest.mark.slow
def test_make_lab_serves_on_loopback_with_a_token_and_runs_the_start_notebook(tmp_path):
    import nbformat

    server = LabServer(tmp_path)
    try:
        token = server.wait_for_token()
        base = f"http://127.0.0.1:{server.port}"

        assert http_status(f"{base}/api/status") == 403  # no token, no entry
        assert http_status(f"{base}/api/status", token) == 200
        assert http_status(f"{base}/lab/tree/notebooks/00-start-here.ipynb?token={token}") == 200

        other = non_loopback_address()
        if other:
            with socket.socket() as s, pytest.raises(OSError):
                s.settimeout(5)
                s.connect((other, server.port))

        request = urllib.request.Request(
            f"{base}/api/sessions",
            method="POST",
            data=json.dumps(
                {
                    "path": "notebooks/00-start-here.ipynb",
                    "type": "notebook",
                    "name": "",
                    "kernel": {"name": "python3"},
                }
            ).encode(),
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=60) as response:
            kernel_id = json.load(response)["kernel"]["id"]

        nb = nbformat.read(REPO / "notebooks/00-start-here.ipynb", as_version=4)
        cells = [c.source for c in nb.cells if c.cell_type == "code"]
        # in a thread of its own: the browser suite's Playwright (sync API) keeps an event loop
        # running in this thread for the whole session, and asyncio.run refuses to nest
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            outputs = pool.submit(asyncio.run,
                                  run_cells_in_kernel(base, token, kernel_id, cells)).result()

        # The kernel JupyterLab starts is the venv's: the versions cell passed its pin checks
        # (status ok above), and the widget cell created a live widget model.
        widget_views = [
            m
            for cell in outputs
            for m in cell
            if "application/vnd.jupyter.widget-view+json" in m.get("content", {}).get("data", {})
        ]
        # the RF slider and the player of "A first look at a cluster"
        assert len(widget_views) >= 2
        text = "".join(m["content"].get("text", "") for cell in outputs for m in cell)
        assert "widgets: kernel and JupyterLab versions match the pinned pair" in text

        # The lab serves a copy: saving a notebook there leaves the repository's untouched.
        original = (REPO / "notebooks/00-start-here.ipynb").read_bytes()
        copy = server.lab_dir / "notebooks/00-start-here.ipynb"
        assert copy.read_bytes() == original
        nb.cells[0].source += "\n\nA learner's note."
        save = urllib.request.Request(
            f"{base}/api/contents/notebooks/00-start-here.ipynb",
            method="PUT",
            data=json.dumps({"type": "notebook", "format": "json", "content": nb}).encode(),
            headers={"Authorization": f"token {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(save, timeout=60) as response:
            assert response.status == 200
        assert b"A learner's note." in copy.read_bytes()
        assert (REPO / "notebooks/00-start-here.ipynb").read_bytes() == original
    finally:
        server.stop()
    assert server.proc.returncode is not None


def test_make_lab_never_overwrites_a_directory_it_did_not_make(tmp_path):
    """KAFKASIM_LAB_DIR naming an existing, non-empty directory without lab.sh's marker is
    refused (exit 2) before anything in it is replaced: its assets/, README.md and
    requirements.txt stay as they were."""
    theirs = tmp_path / "mine"
    (theirs / "assets").mkdir(parents=True)
    (theirs / "assets" / "photo.png").write_bytes(b"not yours")
    (theirs / "README.md").write_text("my notes")
    env = {**os.environ, "KAFKASIM_LAB_DIR": str(theirs)}
    done = subprocess.run([str(REPO / "scripts/lab.sh"), "--port=1"], cwd=REPO, env=env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "was not made by 'make lab'" in done.stderr and str(theirs) in done.stderr
    assert (theirs / "README.md").read_text() == "my notes"
    assert (theirs / "assets" / "photo.png").read_bytes() == b"not yours"
    assert not (theirs / "notebooks").exists() and not (theirs / ".kafkasim-lab").exists()
