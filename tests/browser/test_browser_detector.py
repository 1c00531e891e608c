"""The browser suite's detector fails when a widget fails to render: proved on a notebook broken
on purpose (a widget view whose model does not exist, a widget whose model class no front-end
module provides, stderr, and a traceback), generated into the lab's temp copy of the course."""

from __future__ import annotations

from labdriver import Notebook, generated_notebook

BROKEN = [
    # A widget view referring to a model the kernel never created: "model not found".
    'from IPython.display import display\n'
    'display({"application/vnd.jupyter.widget-view+json": {"model_id": "0" * 32,\n'
    '         "version_major": 2, "version_minor": 0}}, raw=True)',
    # A widget whose model class lives in a front-end module nobody installed.
    'import ipywidgets, traitlets\n'
    'class Broken(ipywidgets.DOMWidget):\n'
    '    _model_name = traitlets.Unicode("NoSuchModel").tag(sync=True)\n'
    '    _model_module = traitlets.Unicode("no-such-module").tag(sync=True)\n'
    '    _model_module_version = traitlets.Unicode("9.9.9").tag(sync=True)\n'
    '    _view_name = traitlets.Unicode("NoSuchView").tag(sync=True)\n'
    '    _view_module = traitlets.Unicode("no-such-module").tag(sync=True)\n'
    '    _view_module_version = traitlets.Unicode("9.9.9").tag(sync=True)\n'
    'Broken()',
    'import sys\nprint("a warning nobody allowed", file=sys.stderr)',
    'ipywidgets.IntSlider(description="fine")',
    'raise RuntimeError("broken on purpose")',
]


def test_detector_reports_broken_widgets_stderr_and_tracebacks(course_root, lab_page, shots):
    path = generated_notebook(course_root, "zz-broken-on-purpose.ipynb", BROKEN)
    page = Notebook.open(lab_page, path)
    try:
        with shots(page):
            assert page.run_all() == "ok"
            problems = page.problems()
            by_cell = {(p.cell, p.kind) for p in problems}
            text = "\n".join(str(p) for p in problems)
            assert (0, "widget") in by_cell, text            # model not found
            assert (1, "widget") in by_cell, text            # model class not found
            assert (2, "stderr") in by_cell, text
            assert (4, "traceback") in by_cell, text
            assert not any(p.cell == 3 for p in problems), text   # a working widget is fine
            assert "model not found" in text
            # a notebook's allow-list removes exactly the stderr it names
            allowed = page.problems(allow=[r"a warning nobody allowed\n"])
            assert not any(p.kind == "stderr" and p.cell == 2 for p in allowed)
            assert len(allowed) == len(problems) - 1
    finally:
        page.close()
