"""Projector mode, as a workshop shows it: an explorer's controls in large type, none cut, within
a 1280-pixel-wide screen (the player's projector mode is checked with its stage in
test_browser_player.py)."""

from __future__ import annotations

from labdriver import Notebook, generated_notebook

EXPLORER_CELLS = [
    "from kafkasim.course import *\nfrom kafkasim.viz import style\nstyle.set_presentation(True)",
    "def where(placer='AdminUtils (ZooKeeper era)', replica_lag_time_max_ms=22000,\n"
    "          unclean_leader_election_enable=False):\n"
    "    return f'{placer}: replica.lag.time.max.ms={replica_lag_time_max_ms}'\n"
    "explore(where, {'placer': ['KRaft striped', 'AdminUtils (ZooKeeper era)'],\n"
    "                'replica.lag.time.max.ms': (10000, 22000, 250),\n"
    "                'unclean.leader.election.enable': [False, True]}, title='projector')",
    "style.set_presentation(False)",
]

_CUT = r"""
(box) => {
  const cut = [];
  const fits = (el, what) => {
    if (el.scrollWidth > el.clientWidth + 1) cut.push(`${what} "${el.textContent.trim()}" ` +
                                                      `${el.scrollWidth} > ${el.clientWidth}`);
  };
  box.querySelectorAll('.widget-label').forEach(l => fits(l, 'label'));
  box.querySelectorAll('.widget-readout').forEach(r => fits(r, 'readout'));
  const ctx = document.createElement('canvas').getContext('2d');
  box.querySelectorAll('select').forEach(s => {
    const st = getComputedStyle(s);
    ctx.font = `${st.fontWeight} ${st.fontSize} ${st.fontFamily}`;
    const text = s.options[s.selectedIndex].text;
    const room = s.clientWidth - parseFloat(st.paddingLeft) - parseFloat(st.paddingRight);
    if (ctx.measureText(text).width > room) cut.push(`select "${text}" needs ` +
        `${Math.ceil(ctx.measureText(text).width)} px, has ${room}`);
  });
  const fonts = [...box.querySelectorAll('.widget-label')].map(
      l => parseFloat(getComputedStyle(l).fontSize));
  return {cut, font: Math.min(...fonts), width: box.getBoundingClientRect().width};
}
"""


def test_explorer_controls_are_large_and_whole_in_projector_mode(course_root, lab_page, shots):
    page = Notebook.open(lab_page, generated_notebook(course_root, "zz-projector-explorer.ipynb",
                                                     EXPLORER_CELLS))
    viewport = lab_page.viewport_size
    try:
        with shots(page):
            page.learner_screen()
            assert page.run_all() == "ok"
            assert not page.problems()
            cell = page.cell_locator(1)
            box = cell.locator(".kafkasim-explorer.kafkasim-projector").first
            box.wait_for(timeout=60_000)
            # the longest option chosen for each dropdown: the widest text each must show
            selects = box.locator("select")
            for k in range(selects.count()):
                options = selects.nth(k).evaluate("s => [...s.options].map(o => o.text)")
                selects.nth(k).select_option(label=max(options, key=len))
            page.page.wait_for_timeout(300)
            got = box.evaluate(_CUT)
            assert got["font"] >= 19, got
            assert got["width"] <= 1280, got
            assert not got["cut"], got["cut"]
    finally:
        page.close()
        lab_page.set_viewport_size(viewport)
