"""Issue 14 in a real browser: stepping the player moves the messages in flight, and a click on a
broker tile crashes that broker (the tile and the player's readout say so), a second click
restarts it (KRaft, the default version: a new incarnation registers at once). The same in a
notebook of notebooks/ko/ (issue 18): the tiles and the player's words are Korean, and the
controls are found by their stable classes (``kafkasim-step``), as in English."""

from __future__ import annotations

import pytest
from labdriver import Notebook, generated_notebook, player_control

CELLS = [
    "from kafkasim.course import *\n"
    "c = Cluster(3, seed=3)\n"
    "c.create_topic('orders', 1, 3)\n"
    "p = c.producer(acks='all')\n"
    "RateWorkload(c, p, 'orders', rate=20, duration_ms=20_000)\n"
    "player = Player(c, topic='orders', checks=False)\n"
    "player.run(2_000)\n"
    "player",
]

FLIGHT = "svg.kafkasim-flight"


def tile_text(cell, broker: int) -> str:
    return cell.locator(f"button.kafkasim-tile-{broker}").first.inner_text()


WORDS = {   # (notebook, tile head running / crashed, "Actions on this branch:", epoch)
    "en": ("zz-tiles.ipynb", "broker 1 · running", "broker 1 · crashed",
           "Actions on this branch:", "epoch"),
    "ko": ("ko/zz-tiles.ipynb", "브로커 1 · 실행 중", "브로커 1 · 크래시됨", "이 분기의 조작:",
           "에포크"),
}


@pytest.mark.parametrize("lang", sorted(WORDS))
def test_step_moves_messages_and_a_tile_click_crashes_and_restarts(course_root, lab_page, shots,
                                                                   lang):
    name, running, crashed_head, actions, epoch = WORDS[lang]
    nb = Notebook.open(lab_page, generated_notebook(course_root, name, CELLS))
    try:
        with shots(nb):
            assert nb.run_all() == "ok"
            assert not nb.problems()
            cell = nb.cell_locator(0)
            svg = cell.locator(FLIGHT).first
            svg.wait_for(timeout=60_000)
            tiles = cell.locator("button.kafkasim-tile")
            assert tiles.count() == 3
            # stepping with "messages in flight" on redraws the messages
            drawn = svg.evaluate("s => s.outerHTML")
            t = nb.timed(0, "step", lambda: player_control(cell, "step").click())
            assert t.changed
            after = cell.locator(FLIGHT).first.evaluate("s => s.outerHTML")
            assert after != drawn, "stepping did not change the messages-in-flight drawing"
            # the tiles show what each broker believes, one line each (the button keeps newlines)
            before = tile_text(cell, 1)
            assert before.startswith(running) and "\n" in before
            assert epoch in before
            text = nb.signature(0)
            t = nb.timed(0, "tile crash", lambda: cell.locator("button.kafkasim-tile-1").click())
            assert t.changed, "clicking broker 1's tile changed nothing"
            crashed = tile_text(cell, 1)
            assert crashed.startswith(crashed_head), crashed
            assert nb.signature(0) != text
            assert "crash" in cell.inner_text().split(actions)[-1]
            t = nb.timed(0, "tile restart", lambda: cell.locator("button.kafkasim-tile-1").click())
            assert t.changed, "clicking the crashed broker's tile changed nothing"
            assert tile_text(cell, 1).startswith(running), tile_text(cell, 1)
            assert "start" in cell.inner_text().split(actions)[-1]
            if lang == "ko":        # the controls' labels are Korean too
                assert player_control(cell, "crash").inner_text().strip() == "크래시"
            assert not nb.problems()
    finally:
        nb.close()
