"""docs/instructor-guide.md: its agendas add up to their stated durations (start times included),
and it lists every notebook with its teaching minutes and measured Run All time."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GUIDE = REPO / "docs" / "instructor-guide.md"


def _tables(text: str) -> dict[str, list[list[str]]]:
    """heading -> rows (cells stripped) of the first table under it."""
    out: dict[str, list[list[str]]] = {}
    heading = None
    for line in text.splitlines():
        if line.startswith("## "):
            heading = line[3:].strip()
        elif line.startswith("|") and heading and not re.match(r"^\|[-| ]+\|$", line):
            out.setdefault(heading, []).append([c.strip() for c in line.strip("|").split("|")])
    return out


def _minutes(clock: str) -> int:
    h, m = clock.split(":")
    return int(h) * 60 + int(m)


def test_agendas_add_up_and_their_clocks_follow():
    tables = _tables(GUIDE.read_text(encoding="utf-8"))
    agendas = {h: rows for h, rows in tables.items() if h.startswith("Agenda")}
    assert len(agendas) == 2
    for heading, rows in agendas.items():
        body = [r for r in rows[1:] if r[0]]
        total = int(re.sub(r"\D", "", rows[-1][2]))
        assert sum(int(r[2]) for r in body) == total, heading
        stated = re.search(r"(\d+) hours", heading)
        if stated:
            assert total == 60 * int(stated.group(1)), heading
        span = re.search(r"(\d\d:\d\d)–(\d\d:\d\d)", heading)
        if span:
            assert total == _minutes(span.group(2)) - _minutes(span.group(1)), heading
        for prev, row in zip(body, body[1:], strict=False):
            assert _minutes(row[0]) == _minutes(prev[0]) + int(prev[2]), (heading, row)


def test_every_notebook_is_listed_with_minutes_and_run_all_time():
    rows = _tables(GUIDE.read_text(encoding="utf-8"))["The notebooks"][1:]
    listed = {r[0].split()[0]: r for r in rows}
    numbers = {p.name.split("-")[0] for p in (REPO / "notebooks").glob("[0-9][0-9]*-*.ipynb")}
    assert set(listed) == numbers
    for num, row in listed.items():
        assert int(row[2]) > 0, num
        assert re.fullmatch(r"\d+ s", row[3]), f"{num}: Run All time {row[3]!r}"
        for link in re.findall(r"\]\(([^)]+)\)", row[4]):
            assert (GUIDE.parent / link).exists(), f"{num}: broken link {link}"
