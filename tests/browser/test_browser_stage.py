"""Issue 32 in a real browser: the stage animates messages (a token's position changes between
frames), a click on a broker crashes it (the cluster changes, the equivalent call is shown),
hovering a message shows its fields, a click on it drops it, a drag between two brokers cuts
their link, the keyboard plays, steps and restarts, and the page asks nothing of any host but
127.0.0.1."""

from __future__ import annotations

import re

from labdriver import Notebook, generated_notebook, stage_cell

CELLS = [
    stage_cell(),
    "print('broker 2:', c.brokers[2].state, '| now', c.now)",
]

VISIBLE_TOKEN = "(sel) => [...document.querySelectorAll(sel + ' .ks-token')]" \
    ".filter(g => g.style.display !== 'none').map(g => [g.dataset.id, g.getAttribute('transform')])"


#: the visible tokens on two animation frames 40 ms apart (at 1/100x: 0.4 ms of simulated time),
#: sampled again (up to 25 times) until a token present in both has moved: on a slow machine a
#: token may arrive between the two frames of one sample
TWO_FRAMES = """async (sel) => {
  const pick = () => Object.fromEntries([...document.querySelectorAll(sel + ' .ks-token')]
      .filter(g => g.style.display !== 'none')
      .map(g => [g.dataset.id, g.getAttribute('transform')]));
  const frame = () => new Promise(r => requestAnimationFrame(r));
  let pair = [{}, {}];
  for (let i = 0; i < 25; i++) {
    await frame();
    const a = pick();
    await new Promise(r => setTimeout(r, 40));
    await frame();
    pair = [a, pick()];
    if (Object.keys(a).some(k => k in pair[1] && pair[1][k] !== a[k])) break;
  }
  return pair;
}"""


#: how many pixels of the stage's token canvas are painted
PAINTED = """() => {
  const c = document.querySelector('.ks-stage .ks-canvas');
  if (!c.width || !c.height) return 0;
  const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
  let n = 0;
  for (let i = 3; i < d.length; i += 4) if (d[i]) n++;
  return n;
}"""


def outside_requests(page):
    seen: list[str] = []

    def on_request(req):
        url = req.url
        if not re.match(r"^(https?|wss?)://127\.0\.0\.1[:/]", url) and \
                not url.startswith(("data:", "blob:", "about:")):
            seen.append(url)
    page.on("request", on_request)
    return seen, on_request


def visible_tokens(page) -> list:
    return page.evaluate(VISIBLE_TOKEN, ".ks-stage")


def step_until_tokens(page, stage, tries: int = 200) -> list:
    for _ in range(tries):
        toks = visible_tokens(page)
        if toks:
            return toks
        stage.locator(".ks-next").click()
        page.wait_for_timeout(30)
    raise AssertionError("no message in flight after stepping")


def window_arrived(page) -> None:
    """The stage has its new window (it waits for one after every action)."""
    page.wait_for_function("() => !document.querySelector('.ks-stage')"
                           ".classList.contains('ks-waiting')", timeout=30_000)


def code_shown(stage) -> str:
    return stage.locator(".ks-code").inner_text()


def kernel_says(nb, cell: int = 1) -> str:
    assert nb.run_cell(cell) == "ok"
    out = nb.cells()[cell]["outputs"]
    return "".join("".join(o.get("text", "")) for o in out)


def test_stage_moves_tokens_and_clicks_act_on_the_cluster(course_root, lab_page, shots):
    page = lab_page
    seen, listener = outside_requests(page)
    nb = Notebook.open(page, generated_notebook(course_root, "zz-stage.ipynb", CELLS))
    try:
        with shots(nb):
            assert nb.run_cell(0) == "ok"
            stage = page.locator(".ks-stage").first
            stage.locator(".ks-node").first.wait_for(timeout=60_000)
            assert stage.locator(".ks-broker").count() == 3
            assert "running" in kernel_says(nb)

            # tokens move between frames: play slowly from a moment with messages in flight
            page.evaluate("() => { const s = document.querySelector('.ks-speed');"
                          " s.value = '-2'; s.dispatchEvent(new Event('input')); }")
            step_until_tokens(page, stage)
            stage.locator(".ks-play").click()
            before, after = page.evaluate(TWO_FRAMES, ".ks-stage")
            stage.locator(".ks-play").click()          # pause again
            moved = [i for i in before if i in after and after[i] != before[i]]
            assert moved, f"no token moved while playing: {before} -> {after}"

            # a click on broker 2 crashes it, through the call a cell makes
            stage.locator(".ks-broker[data-node='2']").click()
            page.wait_for_function("() => document.querySelector('.ks-code').textContent"
                                   ".includes('c.crash(2)')", timeout=30_000)
            window_arrived(page)
            page.wait_for_function("() => document.querySelector(\".ks-broker[data-node='2']\")"
                                   ".classList.contains('ks-crashed')", timeout=30_000)
            assert "c.crash(2)" in code_shown(stage)
            assert "stopped" in kernel_says(nb)

            # hovering a message shows its fields; a click on it drops it
            toks = step_until_tokens(page, stage)
            msg_id = toks[0][0]
            token = stage.locator(f".ks-token[data-id='{msg_id}']")
            token.hover(force=True)
            tip = stage.locator(".ks-tip")
            tip.wait_for(state="visible", timeout=5_000)
            kind = token.get_attribute("data-type")
            assert f"#{msg_id} {kind}" in tip.inner_text() and "sent at" in tip.inner_text()
            stage.locator(f".ks-token[data-id='{msg_id}']").click(force=True)
            page.wait_for_function(
                f"() => document.querySelector('.ks-code').textContent"
                f".includes('c.transport.drop(msg_id={msg_id})')", timeout=30_000)
            window_arrived(page)
            assert not stage.locator(".ks-error").inner_text().strip()

            # a drag from broker 1 to broker 3 cuts their link
            a = stage.locator(".ks-broker[data-node='1'] .ks-box").bounding_box()
            b = stage.locator(".ks-broker[data-node='3'] .ks-box").bounding_box()
            page.mouse.move(a["x"] + a["width"] / 2, a["y"] + a["height"] / 2)
            page.mouse.down()
            page.mouse.move(b["x"] + b["width"] / 2, b["y"] + b["height"] / 2, steps=8)
            page.mouse.up()
            page.wait_for_function("() => document.querySelector('.ks-code').textContent"
                                   ".includes('c.cut(1, 3)')", timeout=30_000)
            window_arrived(page)
            stage.locator(".ks-cut").first.wait_for(state="attached", timeout=30_000)
            assert stage.locator(".ks-cut").count() == 1
            assert "crash(1)" not in code_shown(stage) and "crash(3)" not in code_shown(stage)

            # keyboard: space plays and pauses, the right arrow steps, digit 2 restarts broker 2
            stage.focus()
            page.keyboard.press("Space")
            assert "Pause" in stage.locator(".ks-play").inner_text()
            page.keyboard.press("Space")
            assert "Play" in stage.locator(".ks-play").inner_text()
            t0 = stage.locator(".ks-time").inner_text()
            for _ in range(20):
                page.keyboard.press("ArrowRight")
                page.wait_for_timeout(30)
                if stage.locator(".ks-time").inner_text() != t0:
                    break
            assert stage.locator(".ks-time").inner_text() != t0, "→ did not step"
            page.keyboard.press("2")
            page.wait_for_function("() => document.querySelector('.ks-code').textContent"
                                   ".includes('c.start(2)')", timeout=30_000)
            window_arrived(page)
            assert "running" in kernel_says(nb)
            narration = stage.locator(".ks-narration")
            assert narration.get_attribute("aria-live") == "polite"
            assert narration.inner_text().strip()

            # the dark theme: the messages are still drawn (the canvas was left blank once,
            # painted while the theme's style sheets were being swapped)
            step_until_tokens(page, stage)
            assert page.evaluate(PAINTED) > 0
            page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme',"
                          " {theme: 'JupyterLab Dark'})")
            page.wait_for_function("() => document.body.dataset.jpThemeName === "
                                   "'JupyterLab Dark'", timeout=30_000)
            page.wait_for_timeout(800)
            assert page.evaluate(PAINTED) > 0, "no message drawn after switching to the dark theme"
            page.evaluate("() => window.jupyterapp.commands.execute('apputils:change-theme',"
                          " {theme: 'JupyterLab Light'})")      # (the lab's other tests)
            assert not nb.problems()
            assert not seen, f"requests outside 127.0.0.1: {seen[:5]}"
    finally:
        page.remove_listener("request", listener)
        nb.close()


PLAYER_CELLS = [
    "from kafkasim.course import *\n"
    "c = Cluster(3, seed=4)\n"
    "c.create_topic('orders', 1, 3)\n"
    "RateWorkload(c, c.producer(acks='all'), 'orders', rate=50, duration_ms=60_000)\n"
    "c.run(2_000)\n"
    "player = Player(c, topic='orders', checks=False)\n"
    "player.run(3_000)\n"
    "player.stage",
]


def test_player_stage_acts_through_the_player_and_its_timeline_goes_back(course_root, lab_page,
                                                                         shots):
    page = lab_page
    nb = Notebook.open(page, generated_notebook(course_root, "zz-stage-player.ipynb",
                                                PLAYER_CELLS))
    try:
        with shots(nb):
            assert nb.run_cell(0) == "ok"
            stage = page.locator(".ks-stage").first
            stage.locator(".ks-node").first.wait_for(timeout=60_000)
            track = stage.locator(".ks-tl-track")
            assert track.is_visible()
            stage.locator(".ks-broker[data-node='3']").click()
            page.wait_for_function("() => document.querySelector('.ks-code').textContent"
                                   ".includes('player.crash(3)')", timeout=30_000)
            window_arrived(page)
            stage.locator(".ks-tl-action").first.wait_for(timeout=30_000)
            box = track.bounding_box()
            page.mouse.click(box["x"] + 2, box["y"] + box["height"] / 2)   # near the start
            page.wait_for_function("() => /player\\.seek\\(\\d+\\)/.test("
                                   "document.querySelector('.ks-code').textContent)",
                                   timeout=30_000)
            window_arrived(page)
            assert not stage.locator(".ks-error").inner_text().strip()
            # back before the crash: broker 3 runs in the new window
            page.wait_for_function("() => !document.querySelector(\".ks-broker[data-node='3']\")"
                                   ".classList.contains('ks-crashed')", timeout=30_000)
            assert not nb.problems()
    finally:
        nb.close()


KOREAN_CELLS = [stage_cell("ko")]

HANGUL = re.compile("[\uac00-\ud7a3]")


def test_korean_stage_shows_korean_words(course_root, lab_page, shots):
    """In the Korean edition the buttons, titles, ARIA labels, broker boxes, narration and the
    token tooltip are Korean (the strings trait); the keys and classes work the same."""
    page = lab_page
    nb = Notebook.open(page, generated_notebook(course_root, "zz-stage-ko.ipynb", KOREAN_CELLS))
    try:
        with shots(nb):
            assert nb.run_cell(0) == "ok"
            stage = page.locator(".ks-stage").first
            stage.locator(".ks-node").first.wait_for(timeout=60_000)
            assert stage.locator(".ks-play").inner_text().strip() == "▶ 재생"
            assert HANGUL.search(stage.locator(".ks-play").get_attribute("title"))
            assert HANGUL.search(stage.get_attribute("aria-label"))
            assert HANGUL.search(stage.locator(".ks-keys").inner_text())
            assert HANGUL.search(stage.locator(".ks-narration").inner_text())
            assert "브로커 1" in stage.locator(".ks-broker[data-node='1'] .ks-head").text_content()
            assert HANGUL.search(stage.locator(".ks-time").inner_text())
            empty = page.evaluate("() => getComputedStyle(document.querySelector('.ks-code'),"
                                  " '::before').content")
            assert HANGUL.search(empty), empty
            toks = step_until_tokens(page, stage)
            assert HANGUL.search(stage.locator(".ks-narration").inner_text())
            stage.locator(f".ks-token[data-id='{toks[0][0]}']").hover(force=True)
            tip = stage.locator(".ks-tip")
            tip.wait_for(state="visible", timeout=5_000)
            assert "ms에 전송" in tip.inner_text() and "클릭" in tip.inner_text()
            stage.locator(".ks-broker[data-node='2']").click()
            page.wait_for_function("() => document.querySelector('.ks-code').textContent"
                                   ".includes('c.crash(2)')", timeout=30_000)
            window_arrived(page)
            page.wait_for_function("() => document.querySelector(\".ks-broker[data-node='2'] "
                                   ".ks-badge\").textContent.includes('크래시됨')",
                                   timeout=30_000)
            assert not nb.problems()
    finally:
        nb.close()


#: a leader that is also paused and cut off from the other brokers (ZooKeeper mode, 3.7): its
#: badge reads "❚❚ 일시 정지 · ✂ 격리" beside "브로커 k ★ 리더", the longest pair the top line holds
CROWDED_CELL = ("from kafkasim.course import i18n\ni18n.set_language('ko')\n"
                "from kafkasim.course import *\nfrom kafkasim.widgets import Stage\n"
                "c = Cluster(3, seed=3, kafka_version='3.7')\nk = c.controller_id()\n"
                "c.create_topic('orders', 1, 3,\n"
                "               assignment=[[k] + [b for b in (1, 2, 3) if b != k]])\n"
                "c.run(2000)\n"
                "for b in {1, 2, 3} - {k}:\n    c.cut(k, b)\n"
                "c.pause(k, 60_000)\nc.run(300)\nstage = Stage(c, name='c')\nstage")

#: per broker box with a badge: its name, and whether the badge stays clear of the name (right of
#: it on the top line, or above it on the box's edge)
TOP_LINE = """() => [...document.querySelectorAll('.ks-stage .ks-broker')]
  .filter(g => g.querySelector('.ks-badge').textContent)
  .map(g => { const head = g.querySelector('.ks-head'), badge = g.querySelector('.ks-badge');
              const h = head.getBBox(), b = badge.getBBox();
              return [head.textContent, h.x + h.width < b.x || b.y + b.height <= h.y]; })"""


def test_a_long_korean_badge_never_covers_the_broker_name(course_root, lab_page, shots):
    nb = Notebook.open(lab_page, generated_notebook(course_root, "zz-stage-crowded-ko.ipynb",
                                                    [CROWDED_CELL]))
    try:
        with shots(nb):
            assert nb.run_cell(0) == "ok"
            stage = lab_page.locator(".ks-stage").first
            stage.locator(".ks-broker .ks-badge").filter(has_text="격리").first.wait_for(
                timeout=60_000)
            lines = lab_page.evaluate(TOP_LINE)
            assert any("★" in name for name, _clear in lines), lines
            assert all(clear for _name, clear in lines), lines
            assert not nb.problems()
    finally:
        nb.close()
