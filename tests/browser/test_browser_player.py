"""Issue 32 in a real browser: a Player in a notebook is its stage under one row of controls.

In a notebook at 1280x720 with JupyterLab's sidebar open, the player renders the stage (brokers,
logs, messages in flight), fits the screen (controls, nodes, logs, narration), carries no broken
image; tokens move between frames while it plays; every click on step changes what the stage
shows (and the next event is named before the click); the time slider seeks; a click on a broker
crashes it through the player (the call is shown, the kernel's cluster changed); a click on a
message drops it; the keyboard plays, steps and restarts; the page asks nothing of any host but
127.0.0.1. The same player in Korean fits the screen too, and so it does in projector mode (large
type, the diagram's words larger), the sidebar open as well, on a ZooKeeper scenario and on a
KRaft one (controllers, three partitions: the topic and partition pickers shown).
"""

from __future__ import annotations

import json

import pytest
from labdriver import Notebook, generated_notebook, player_control
from test_browser_stage import TWO_FRAMES, outside_requests, window_arrived

SETUP = ("from kafkasim.course import *\n"
         "from kafkasim.scenarios.scenario import Scenario\n")
PLAYER = ("player = Player(Scenario.named('seed-isr-shrink-expand'), show_isr=True)\n"
          "player.seek(14_000)\n"
          "player")

#: what the stage shows, as one string: time, narration, visible tokens, every node's drawing
SHOWN = """(root) => {
  const box = root.querySelector('.ks-stage');
  const toks = [...box.querySelectorAll('.ks-token')].filter(g => g.style.display !== 'none')
      .map(g => g.dataset.id + '@' + g.getAttribute('transform'));
  const nodes = [...box.querySelectorAll('.ks-node')].map(g => g.getAttribute('class') + ':' +
      g.textContent + ':' + [...g.querySelectorAll('.ks-cells > g')]
        .filter(c => c.style.display !== 'none').length);
  return JSON.stringify([box.querySelector('.ks-time').textContent,
                         box.querySelector('.ks-narration').textContent, toks, nodes]);
}"""

BROKEN_IMAGES = ("() => [...document.querySelectorAll('img')]"
                 ".filter(i => !i.complete || i.naturalWidth === 0 || i.naturalHeight === 0)"
                 ".map(i => i.outerHTML.slice(0, 120))")


def shown(cell) -> str:
    return cell.locator(".kafkasim-player").first.evaluate(SHOWN)


def fits_the_screen(page, cell, sidebar: bool = True) -> tuple[float, float]:
    """(the player's height, the notebook panel's height) at 1280x720 with the left sidebar
    open (or closed, as a presenter projects), the player scrolled to the top (the page and
    its sidebar go back as they were after)."""
    size = page.viewport_size
    page.set_viewport_size({"width": 1280, "height": 720})
    toggle = "() => window.jupyterapp.commands.execute('application:toggle-left-area')"
    collapsed = page.evaluate("() => window.jupyterapp.shell.leftCollapsed")
    try:
        if collapsed == sidebar:
            page.evaluate(toggle)
        page.wait_for_timeout(800)
        assert page.evaluate("() => window.jupyterapp.shell.leftCollapsed") != sidebar
        box = cell.locator(".kafkasim-player").first
        box.evaluate("b => b.scrollIntoView({block: 'start'})")
        page.wait_for_timeout(300)
        panel = page.locator(".jp-NotebookPanel-notebook").first.bounding_box()
        width = box.bounding_box()["width"]
        assert width <= panel["width"], (width, panel)
        return box.bounding_box()["height"], panel["height"]
    finally:
        if page.evaluate("() => window.jupyterapp.shell.leftCollapsed") != collapsed:
            page.evaluate(toggle)
        page.set_viewport_size(size)


def stage_idle(page) -> None:
    window_arrived(page)
    page.wait_for_timeout(50)


def kernel_says(nb, cell: int, code: str) -> str:
    assert nb.run_cell(cell, code) == "ok"
    out = nb.cells()[cell]["outputs"]
    return "".join("".join(o.get("text", "")) for o in out)


def test_player_is_its_stage_fits_the_screen_and_every_step_shows_something(
        course_root, lab_page, shots):
    page = lab_page
    seen, listener = outside_requests(page)
    nb = Notebook.open(page, generated_notebook(course_root, "zz-player-stage.ipynb",
                                                [SETUP + PLAYER, "print('ok')"]))
    try:
        with shots(nb):
            assert nb.run_cell(0) == "ok"
            cell = nb.cell_locator(0)
            stage = cell.locator(".kafkasim-player .ks-stage").first
            stage.locator(".ks-broker").first.wait_for(timeout=60_000)
            assert stage.locator(".ks-broker").count() == 3
            assert stage.locator(".ks-cells").count() == 3          # the logs
            height, screen = fits_the_screen(page, cell)
            assert height <= screen, f"the player is {height:.0f} px tall, the screen {screen}"
            assert not page.evaluate(BROKEN_IMAGES)
            assert not cell.locator("img").count()                 # no picture until asked

            # every step click changes what the stage shows; the next event is named first
            steps = 0
            for _ in range(25):
                named = stage.locator(".ks-up-next").inner_text()
                assert named.strip() and stage.locator(".ks-next").get_attribute("title")
                before = shown(cell)
                stage.locator(".ks-next").click()
                stage_idle(page)
                after = shown(cell)
                assert after != before, f"step {steps + 1} changed nothing: {before}"
                if named.startswith("next, at"):        # the step went where it said
                    t = named.split("at ", 1)[1].split(" ms", 1)[0]
                    assert t in json.loads(after)[1], (named, after)
                steps += 1

            # the time slider seeks the player; the stage follows
            slider = player_control(cell, "time")
            before = stage.locator(".ks-time").inner_text()
            nb.drag_slider(slider, 0.3)
            page.wait_for_function(
                "(b) => document.querySelector('.ks-stage .ks-time').textContent !== b",
                arg=before, timeout=30_000)
            stage_idle(page)

            # tokens move between frames while it plays slowly
            page.evaluate("() => { const s = document.querySelector('.ks-stage .ks-speed');"
                          " s.value = '-2'; s.dispatchEvent(new Event('input')); }")
            moved = []
            for _ in range(8):       # (a 1 ms hop lasts 100 ms at 1/100: try a few messages)
                for _ in range(60):      # a message that travels (a held one waits mid-way)
                    if stage.locator(".ks-token:not(.ks-held)").evaluate_all(
                            "gs => gs.filter(g => g.style.display !== 'none').length"):
                        break
                    stage.locator(".ks-next").click()
                    stage_idle(page)
                stage.locator(".ks-play").click()
                first, second = page.evaluate(TWO_FRAMES, ".kafkasim-player .ks-stage")
                stage.locator(".ks-play").click()
                stage_idle(page)
                moved = [i for i in first if i in second and first[i] != second[i]]
                if moved:
                    break
                stage.locator(".ks-next").click()
                stage_idle(page)
            assert moved, f"no token moved while playing: {first} -> {second}"

            # a click on a token drops it, through the player
            tok = stage.locator(".ks-token").evaluate_all(
                "gs => gs.filter(g => g.style.display !== 'none').map(g => g.dataset.id)")[0]
            stage.locator(f".ks-token[data-id='{tok}']").click(force=True)
            page.wait_for_function(
                "(id) => document.querySelector('.ks-stage .ks-code').textContent"
                ".includes(`player.drop_message(${id})`)", arg=tok, timeout=30_000)
            stage_idle(page)
            assert not stage.locator(".ks-error").inner_text().strip()

            # a click on broker 2 crashes it through the player: the call is shown
            stage.locator(".ks-broker[data-node='2']").click()
            page.wait_for_function("() => document.querySelector('.ks-stage .ks-code')"
                                   ".textContent.includes('player.crash(2)')", timeout=30_000)
            stage_idle(page)
            assert "ks-crashed" in stage.locator(".ks-broker[data-node='2']").get_attribute(
                "class")
            assert "stopped" in kernel_says(nb, 1, "print(player.cluster.brokers[2].state)")

            # keyboard: space plays and pauses, → steps, 2 restarts broker 2
            stage.focus()
            page.keyboard.press("Space")
            assert "Pause" in stage.locator(".ks-play").inner_text()
            page.keyboard.press("Space")
            assert "Play" in stage.locator(".ks-play").inner_text()
            before = shown(cell)
            page.keyboard.press("ArrowRight")
            stage_idle(page)
            assert shown(cell) != before, "→ changed nothing"
            page.keyboard.press("2")
            page.wait_for_function("() => document.querySelector('.ks-stage .ks-code')"
                                   ".textContent.includes('player.restart(2)')", timeout=30_000)
            stage_idle(page)
            # (in ZooKeeper mode it starts once its old session expired: a start is pending)
            assert "start 2" in kernel_says(nb, 1, "print(player.history.actions[-1].name, "
                                                   "player.history.actions[-1].args[0])")
            assert stage.locator(".ks-narration").get_attribute("aria-live") == "polite"
            assert not page.evaluate(BROKEN_IMAGES)
            assert not nb.problems()
            assert not seen, f"requests outside 127.0.0.1: {seen[:5]}"
    finally:
        page.remove_listener("request", listener)
        nb.close()


KRAFT_PLAYER = ("player = Player(Scenario.named('kraft-controller-failover'), topic='orders')\n"
                "player.seek(30_000)\n"
                "player")


@pytest.mark.parametrize("variant", ["ko", "projector", "projector-kraft"])
def test_player_in_korean_and_in_projector_mode_fits_the_screen(course_root, lab_page, shots,
                                                                variant):
    name = f"ko/zz-player-{variant}.ipynb" if variant == "ko" else f"zz-player-{variant}.ipynb"
    big = "from kafkasim.viz import style\nstyle.set_presentation(True)\n" \
        if variant.startswith("projector") else ""
    player = KRAFT_PLAYER if variant == "projector-kraft" else PLAYER
    cells = [SETUP + big + player, "from kafkasim.viz import style\nstyle.set_presentation(False)"]
    nb = Notebook.open(lab_page, generated_notebook(course_root, name, cells))
    try:
        with shots(nb):
            assert nb.run_all() == "ok"
            cell = nb.cell_locator(0)
            stage = cell.locator(".kafkasim-player .ks-stage").first
            stage.locator(".ks-broker").first.wait_for(timeout=60_000)
            height, screen = fits_the_screen(lab_page, cell)     # the sidebar open
            assert height <= screen, f"the player is {height:.0f} px tall, the screen {screen}"
            if variant == "ko":
                assert "한 단계" in stage.locator(".ks-next").inner_text()
            else:
                assert "ks-big" in stage.get_attribute("class")
                size = stage.locator(".ks-play").evaluate(
                    "b => parseFloat(getComputedStyle(b).fontSize)")
                assert size >= 17, size
                # no control is cut: every select shows its whole value
                cut = cell.locator("select").evaluate_all(
                    "ss => ss.filter(s => s.scrollWidth > s.clientWidth + 1).length")
                assert not cut
                assert cell.locator(".kafkasim-projector").first.evaluate(
                    "b => b.getBoundingClientRect().width") <= 1280
            assert not lab_page.evaluate(BROKEN_IMAGES)
            assert not nb.problems()
    finally:
        nb.close()
