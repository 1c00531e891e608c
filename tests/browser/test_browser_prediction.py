"""Issue 33 in a real browser: a prediction widget takes a number and a choice, refuses a bad
number with the argument's error, locks in with "Lock in", can be changed until the run cell
starts, and is locked once it has; the run cell sees the answers. In the Korean edition every
word of the widget is Korean. Screenshots of both are saved (``KAFKASIM_SHOTS_DIR`` keeps them)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from labdriver import Notebook, generated_notebook

SETUP = ("from kafkasim.course import *\n"
         "p = predict('How many brokers receive a ProduceRequest?', kind='number', low=0, high=3)\n"
         "q = predict('Which broker becomes the leader?', choices=['broker 2', 'broker 3'])\n"
         "display(p, q)")
CELLS = [SETUP, "print('ready:', ready(p, q), '|', p.value, '|', q.value)"]
KOREAN_CELLS = ["from kafkasim.course import i18n\ni18n.set_language('ko')\n" + SETUP, CELLS[1]]


def kernel_says(nb, cell: int) -> str:
    assert nb.run_cell(cell) == "ok"
    return "".join("".join(o.get("text", "")) for o in nb.cells()[cell]["outputs"])


def keep(path: Path) -> None:
    target = os.environ.get("KAFKASIM_SHOTS_DIR")
    if target:
        Path(target).mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, Path(target) / path.name)


def status(widget) -> str:
    return widget.locator(".ks-predict-status").inner_text()


def test_prediction_locks_in_and_locks_when_the_run_cell_starts(course_root, lab_page, shots,
                                                                tmp_path):
    page = lab_page
    nb = Notebook.open(page, generated_notebook(course_root, "zz-predict.ipynb", CELLS))
    try:
        with shots(nb):
            assert nb.run_cell(0) == "ok"
            number = page.locator(".ks-predict").nth(0)
            choice = page.locator(".ks-predict").nth(1)
            number.wait_for(timeout=60_000)
            assert "ProduceRequest" in number.locator(".ks-predict-question").inner_text()

            # a bad number: Python's error, nothing locked in
            number.locator(".ks-predict-input").fill("three")
            number.locator(".ks-predict-lock").click()
            page.wait_for_function("() => document.querySelector('.ks-predict-error')"
                                   ".textContent.includes('a whole number')", timeout=30_000)
            assert status(number) == ""

            number.locator(".ks-predict-input").fill("2")
            number.locator(".ks-predict-lock").click()
            page.wait_for_function("() => document.querySelector('.ks-predict-status')"
                                   ".textContent.includes('Locked in: 2')", timeout=30_000)
            assert number.locator(".ks-predict-input").is_disabled()
            number.locator(".ks-predict-change").click()          # changeable before the run
            page.wait_for_function("() => !document.querySelector('.ks-predict-input').disabled",
                                   timeout=30_000)
            number.locator(".ks-predict-input").fill("3")
            number.locator(".ks-predict-input").press("Enter")
            choice.locator(".ks-predict-lock").click()             # no choice picked yet
            assert "pick one answer first" in choice.locator(".ks-predict-error").inner_text()
            choice.locator("input[type=radio]").nth(0).check()
            choice.locator(".ks-predict-lock").click()
            page.wait_for_function("() => [...document.querySelectorAll('.ks-predict-status')]"
                                   ".every(s => s.textContent.startsWith('Locked in'))",
                                   timeout=30_000)
            shot = nb.screenshot(tmp_path / "prediction-en-locked-in.png", 0)
            keep(shot)

            # the run cell locks both and sees the answers
            assert kernel_says(nb, 1).strip() == "ready: True | 3 | broker 2"
            page.wait_for_function("() => [...document.querySelectorAll('.ks-predict-status')]"
                                   ".every(s => s.textContent.includes('The experiment has run'))",
                                   timeout=30_000)
            assert number.locator(".ks-predict-change").is_hidden()
            assert number.locator(".ks-predict-lock").is_hidden()
            assert choice.locator("input[type=radio]").nth(1).is_disabled()
            keep(nb.screenshot(tmp_path / "prediction-en-run.png", 0))
    finally:
        nb.close()


def test_korean_prediction_speaks_korean(course_root, lab_page, shots, tmp_path):
    page = lab_page
    nb = Notebook.open(page, generated_notebook(course_root, "ko/zz-predict-ko.ipynb",
                                                KOREAN_CELLS))
    try:
        with shots(nb):
            assert nb.run_cell(0) == "ok"
            widget = page.locator(".ks-predict").nth(0)
            widget.wait_for(timeout=60_000)
            assert widget.locator(".ks-predict-lock").inner_text() == "확정"
            assert widget.locator(".ks-predict-label").inner_text().strip() == "내 예측"
            assert "ProduceRequest" in widget.locator(".ks-predict-question").inner_text()
            assert "브로커" in widget.locator(".ks-predict-question").inner_text()
            choice = page.locator(".ks-predict").nth(1)
            assert choice.locator(".ks-predict-choice").nth(0).inner_text().strip() == "브로커 2"
            widget.locator(".ks-predict-input").fill("3")
            widget.locator(".ks-predict-lock").click()
            page.wait_for_function("() => document.querySelector('.ks-predict-status')"
                                   ".textContent.startsWith('확정했습니다')", timeout=30_000)
            keep(nb.screenshot(tmp_path / "prediction-ko.png", 0))
            out = kernel_says(nb, 1)
            assert "ready: False" in out and "먼저 위의 예측에 답하고" in out
    finally:
        nb.close()
