"""No exercise's answer is given away above it.

For every graded exercise (a ``check_…(`` call in a notebook) ``ANSWERS`` lists the answer as a
learner would write or read it (numbers, broker lists, invariant names). The test reads everything
a learner sees before the exercise: markdown, code and saved outputs of all earlier cells, and the
exercise's own cell source. None of the answer's forms may appear there as a whole token.
The solutions themselves live in ``docs/instructor/NN-*.md``.
"""

from __future__ import annotations

import re
from pathlib import Path

import nbformat
import pytest

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
INSTRUCTOR = Path(__file__).resolve().parents[1] / "docs" / "instructor"

#: notebook number -> [(check function called in the exercise cell, [forms of its answer])].
#: Exercises whose answer is a fault sequence (graded by the checkers' verdict) have no single
#: answer to give away and are not listed.
ANSWERS: dict[str, list[tuple[str, list[str]]]] = {
    "90": [("check_loss_cause", ['answer="b"', "answer='b'"]),
           ("check_burst_threshold", ["answer=18", "messages > 18"])],
    "04": [("check_takeover", ["current_offset=8", "lag=4"]),
           ("check_rereads", ["poll(max_records=3)"]),
           ("check_output_reading", ["1242", "read_twice=42"])],
    "05": [("check_after_append", ["REQUEST_TIMED_OUT"]),
           ("check_acks_saves", ["check_acks_saves(my_faults)"]),
           ("check_describe_reading", ["rejoin=1", "clean_candidates=[3]"])],
    "06": [("check_slow_flapping", ["answer=set()"]),
           ("check_both_fire", ["check_both_fire(my_faults)"]),
           ("check_urp_reading", ["suspect=2", "highest_urp_broker=1"])],
    "07": [("check_detection_window", ["earliest_ms=4000", "latest_ms=6000", "4000 ms to 6000 ms",
                                       "4-6 s", "4–6 s", "earliest_ms=9000", "9-12 s", "9–12 s"]),
           ("check_quorum_tolerance", ["4 controllers tolerate 1", "tolerates 1 failure(s)",
                                       "answer=1"]),
           ("check_quorum_loss", ["is removed from the ISR: False",
                                  "serves its partitions again: False"])],
    "08": [("check_zk_election", ["answer=2", "answer=3"]),
           ("check_kraft_election", ["answer=1", "answer=None"])],
    "09": [("check_end_offset", ["(2, 9)"]),
           ("check_truncation", ["(7, False)"])],
    "10": [("check_loaded_hw", ["answer_hw = 8", "check_loaded_hw(8"]),
           ("check_power_loss_restart", ["check_power_loss_restart(0, 0)"]),
           ("check_allowed_loss", ["answer_fault = \"power_loss\""])],
    "11": [("check_rack_alternated", ["[1, 2, 4, 5, 3, 6, 7]"]),
           ("check_zk_replicas", ["[4, 5, 3]"]),
           ("check_rack_failure", ["answer=3"])],
    "12": [("check_rebalance", ["{\"3.7\": True, \"4.3\": True}"]),
           ("check_imbalance_count", ["answer=4", "PreferredReplicaImbalanceCount = 4",
                                      "PreferredReplicaImbalanceCount 4"])],
    "13": [("check_read_replica", ["replica=3, up_to=5"]),
           ("check_stale_read", ['wrong_on="3.3"', "wrong_on='3.3'", 'what="b"', "what='b'"])],
    "01": [("check_fetcher_total", ["13"]),
           ("check_lagging_follower", ['"FetchResponse", src=1, dst=3', "cut(1, 3)"]),
           ("check_idle_fetches", ["answer=50"])],
    "00": [("check_durable_design", ["replication_factor = 4", "replication_factor=4"])],
    "02a": [("check_removal_time", ["41000", "41 s", "removed_ms=41000"])],
    "02b": [("check_causes", ['"A": "slow disk"', '"B": "broker overload"',
                              '"C": "GC pause"', '"D": "network latency"']),
            ("check_flapping", ['c.release("FetchResponse", src=1, dst=3)'])],
    "03": [("check_last_committed", ["46"]), ("check_ack_delay", ["84", "84 ms"]),
           ("check_all_replicas_rule", ["f.log_end_offset for f in followers"]),
           ("check_unlucky_failover", ["new_leader=2, hw=7", "m7_readable=False"])],
}


def _path(num: str) -> Path:
    found = sorted(NOTEBOOKS.glob(f"{num}-*.ipynb"))
    assert found, f"no notebook {num}-*.ipynb"
    return found[0]


def _output_text(out) -> str:
    if out.get("output_type") == "stream":
        return out.get("text", "")
    data = out.get("data", {})
    shown = []
    for kind in ("text/plain", "text/markdown", "text/html"):
        value = data.get(kind)
        if isinstance(value, str):
            # a learner reads HTML's text, not its tags' attributes (an SVG's font-size="13")
            shown.append(_html_text(value) if kind == "text/html" else value)
    return re.sub(r"data:[\w/+.-]+;base64,[A-Za-z0-9+/=]+", "data:…", "\n".join(shown))


def _html_text(html: str) -> str:
    """The text of an HTML/SVG output: tags (with their attributes), scripts and styles dropped."""
    html = re.sub(r"<(script|style)\b.*?</\1>", " ", html, flags=re.S | re.I)
    return re.sub(r"<[^>]*>", " ", html)


def text_before(nb, check: str) -> str:
    """What a learner has seen when they reach the first cell calling ``check``: every earlier
    cell (source and outputs) and that cell's source."""
    seen = []
    for cell in nb.cells:
        if cell.cell_type == "code" and re.search(rf"\b{re.escape(check)}\(", cell.source):
            seen.append(cell.source)
            return "\n".join(seen)
        seen.append(cell.source)
        for out in cell.get("outputs", []):
            seen.append(_output_text(out))
    raise AssertionError(f"no cell calls {check}(")


def leaks(text: str, form: str) -> bool:
    """True if ``form`` appears in ``text`` as a whole token (not inside a longer number/word)."""
    return re.search(rf"(?<![\w.]){re.escape(form)}(?![\w])", text) is not None


def test_leak_detection():
    assert leaks("the answer is 11000 ms", "11000")
    assert not leaks("offset 110001", "11000") and not leaks("t=311000", "11000")
    assert leaks("ISR [1, 3]", "[1, 3]") and not leaks("v1.5", "5")
    html = {"data": {"text/html": '<text font-size="13" x="5">broker 1</text><td>13 ms</td>'}}
    assert _output_text(html).split() == ["broker", "1", "13", "ms"]
    assert not leaks(_output_text({"data": {"text/html": '<rect width="13"/>'}}), "13")


@pytest.mark.parametrize("num", sorted(ANSWERS))
def test_answers_are_not_shown_above_their_exercise(num):
    nb = nbformat.read(_path(num), as_version=4)
    for check, forms in ANSWERS[num]:
        assert forms, f"{num} {check}: list the answer's forms"
        before = text_before(nb, check)
        shown = [f for f in forms if leaks(before, f)]
        assert not shown, f"notebook {num}: the answer to {check} is shown above it: {shown}"


@pytest.mark.parametrize("num", sorted(ANSWERS))
def test_every_exercise_has_its_solution_for_the_instructor(num):
    guide = sorted(INSTRUCTOR.glob(f"{num}-*.md"))
    assert guide, f"docs/instructor/{num}-*.md is missing"
    text = guide[0].read_text(encoding="utf-8")
    for check, forms in ANSWERS[num]:
        assert check in text or any(f in text for f in forms), \
            f"docs/instructor/{guide[0].name} has no solution for {check} (name it, or {forms})"


def _saved_table(nb, marker: str) -> list[dict[str, str]]:
    """The text table printed by the first code cell whose source contains ``marker``."""
    cell = next(c for c in nb.cells if c.cell_type == "code" and marker in c.source)
    lines = "".join(o.get("text", "") for o in cell.outputs).splitlines()
    head = re.split(r"\s{2,}", lines[0].strip())
    return [dict(zip(head, re.split(r"\s{2,}", line.strip()), strict=True)) for line in lines[2:]
            if line.strip()]


def test_02b_mystery_runs_are_not_rows_of_section_6():
    """Exercise 1 of 02b must be read from the symptoms, not looked up: no mystery run shows the
    same ISR changes, lag and p99 as a row of section 6's table a few cells above."""
    nb = nbformat.read(_path("02b"), as_version=4)
    shown = _saved_table(nb, "summary = {cause: cause_summary")
    mystery = _saved_table(nb, "mystery = blind(")
    assert len(shown) == 4 and len(mystery) == 4
    same = ["ISR shrinks", "ISR expands", "max records behind", "p99 acks=all latency (ms)"]
    above = {tuple(row[k] for k in same) for row in shown}
    copied = [row["run"] for row in mystery if tuple(row[k] for k in same) in above]
    assert not copied, f"02b exercise 1: runs {copied} repeat a row of section 6's table"
