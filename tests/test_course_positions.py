"""Notebook 04's graders and drawing (kafkasim/course/positions.py): the answers come from the
simulator, impossible explorer inputs are refused, and lag is HW - committed as in Kafka's
ConsumerGroupCommand."""

from __future__ import annotations

import pytest

from kafkasim.course import positions as P
from kafkasim.course import positions_checks as X

# run as in the notebooks, which set KAFKA_VERSION = "4.3" (conftest.py)
pytestmark = pytest.mark.usefixtures("notebook_kafka_version")


def test_explorer_refuses_impossible_positions():
    for args, word in (((5, 6, 0, 0), "replicated=6 > produced=5"),
                       ((10, 8, 9, 0), "consumed=9 > replicated=8"),
                       ((10, 8, 4, 5), "committed=5 > consumed=4"),
                       ((10, -1, 0, 0), "cannot be negative")):
        with pytest.raises(ValueError, match=word):
            P.positions_view(*args)
    P.validate_positions(10, 8, 6, 4)          # a possible state passes


def test_takeover_is_read_from_the_simulated_tool_output():
    out = P.takeover_outcome()
    # the new member starts at the committed offset (5), reads 3 and commits; the followers
    # caught up, so the tool's LOG-END-OFFSET is the HW = LEO 12
    assert out == {"CURRENT-OFFSET": 8, "LOG-END-OFFSET": 12, "LAG": 4}
    assert X.check_takeover(8, 12, 4)
    assert not X.check_takeover(10, 12, 2)     # started from the old position
    assert not X.check_takeover(8, 9, 1)       # the HW before the followers caught up
    assert not X.check_takeover(None, 12, 4)


def test_rereads_are_what_lies_between_commit_and_position():
    def three(consumer):
        consumer.poll(max_records=4)
        consumer.commit()
        consumer.poll(max_records=3)

    def commit_last(consumer):
        consumer.poll(max_records=5)
        consumer.commit()

    first, second = P.rereads(three)
    assert first == list(range(7)) and second[:3] == [4, 5, 6]
    assert X.check_rereads(three)
    assert not X.check_rereads(commit_last)
    assert not X.check_rereads("my_steps")


def test_check_output_reading():
    assert X.check_output_reading(1242, 42)
    assert not X.check_output_reading(1208, 8)     # records-lag counted from the commit
    assert not X.check_output_reading(1242, 50)    # the tool's LAG is not what is re-read


def test_positions_figure_marks_the_group_row():
    c, consumer = P.positions_demo(10, 8, 6, 4)
    fig = P.positions_figure(c, consumer)
    gids = {a.get_gid() for a in fig.axes[0].get_children() if a.get_gid()}
    assert {"consumer:committed", "consumer:position", "consumer:records-lag",
            "consumer:read, not committed", "HW:broker1", "LEO:broker1"} <= gids
    assert "group billing" in [t.get_text() for t in fig.axes[0].get_yticklabels()]
    table = P.positions_table(c, consumer, prediction={"committed": 4, "HW": 10})
    assert "4      group 'billing'" in table and " NO" in table and " yes" in table
