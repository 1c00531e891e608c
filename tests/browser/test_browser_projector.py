"""Projector mode and the messages-in-flight panel, as a workshop shows them: a player built with
``presentation=True`` renders its controls in large type within a 1280-pixel-wide screen, and the
messages panel draws the cluster as SVG with a hover title on each message."""

from __future__ import annotations

from labdriver import Notebook, generated_notebook

CELLS = [
    "from kafkasim.course import *\n"
    "c = Cluster(3, seed=3)\n"
    "c.create_topic('orders', 1, 3)\n"
    "p = c.producer(acks='all')\n"
    "RateWorkload(c, p, 'orders', rate=20, duration_ms=20_000)\n"
    "player = Player(c, topic='orders', presentation=True, checks=False)\n"
    "player.run(2_000)\n"
    "player",
    "from kafkasim.viz import style\nstyle.set_presentation(False)",
]


def test_projector_mode_and_messages_render_in_the_browser(course_root, lab_page, shots):
    page = Notebook.open(lab_page, generated_notebook(course_root, "zz-projector.ipynb", CELLS))
    try:
        with shots(page):
            assert page.run_all() == "ok"
            assert not page.problems()
            cell = page.cell_locator(0)
            box = cell.locator(".kafkasim-projector").first
            box.wait_for(timeout=60_000)
            size = box.locator("button").first.evaluate(
                "b => parseFloat(getComputedStyle(b).fontSize)")
            assert size >= 19, size
            assert box.evaluate("b => b.getBoundingClientRect().width") <= 1280
            svg = cell.locator("svg.kafkasim-flight").first
            svg.wait_for(timeout=30_000)
            assert svg.locator("g.node").count() >= 3            # the brokers (and controllers)
            titles = svg.locator("g.message title")
            if titles.count():
                assert " → " in titles.first.text_content()
    finally:
        page.close()
