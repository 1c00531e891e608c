"""Exercise checks judge the form of an answer before its value, hint before they reveal, and
show PASS / Not quite as styled HTML that reads the same without colour (issue 15)."""

from __future__ import annotations

import pytest

from kafkasim.course import checks
from kafkasim.course.checks import (
    REVEAL_AFTER,
    CheckResult,
    check_fetcher_threads,
    check_group_lag,
    check_replica_sets,
    check_single_shrink_fires,
    check_write_outcome,
)
from kafkasim.course.controller import check_quorum_loss
from kafkasim.course.racks import check_rack_alternated

# run as in the notebooks, which set KAFKA_VERSION = "4.3" (conftest.py)
pytestmark = pytest.mark.usefixtures("notebook_kafka_version")


@pytest.fixture(autouse=True)
def fresh_tries():
    checks._wrong_tries.clear()
    yield
    checks._wrong_tries.clear()


def test_the_text_false_is_not_taken_for_true(capsys):
    r = check_single_shrink_fires("False")
    out = capsys.readouterr().out
    assert not r and "form" in out and "False without quotes" in out
    assert check_single_shrink_fires(False)          # the right answer, as a bool


def test_a_number_in_quotes_gets_a_form_hint_not_a_verdict(capsys):
    r = check_group_lag("3")
    out = capsys.readouterr().out
    assert not r and "Write 3 without quotes" in out and "LAG =" not in out


def test_sets_and_lists_both_work_where_order_does_not_matter(capsys):
    right = checks._osr_sets("4.3")
    assert check_replica_sets(set(right["AR"]), list(right["ISR"]), tuple(right["OSR"]))


def test_a_set_is_refused_where_order_matters(capsys):
    racks = {1: "a", 2: "a", 3: "b", 4: "b"}
    r = check_rack_alternated(racks, {1, 3, 2, 4})
    assert not r and "Order matters" in capsys.readouterr().out


def test_dict_of_bools_refuses_text_values(capsys):
    from kafkasim.course.controller import QUORUM_LOSS_OPERATIONS

    r = check_quorum_loss({k: "True" for k in QUORUM_LOSS_OPERATIONS})
    assert not r and "True without quotes" in capsys.readouterr().out


def test_wrong_answers_get_a_hint_first_and_the_answer_only_later(capsys):
    right = checks._max_fetchers(3, 6, 3, 1, "4.3")
    wrong = right - 1 if right > 1 else right + 5
    first = check_fetcher_threads(wrong, kafka_version="4.3")
    assert not first and "The answer" not in first.message
    assert f"after {REVEAL_AFTER} wrong tries" in first.message
    for _ in range(REVEAL_AFTER - 1):
        last = check_fetcher_threads(wrong, kafka_version="4.3")
    assert f"The answer: {right}" in last.message
    assert check_fetcher_threads(right, kafka_version="4.3")              # a PASS resets the count
    assert "The answer" not in check_fetcher_threads(wrong, kafka_version="4.3").message


def test_write_outcome_feedback_does_not_name_the_result_at_first(capsys):
    r = check_write_outcome("all", 2, 1, "ok")
    assert not r and "NOT_ENOUGH_REPLICAS" not in r.message
    r = check_write_outcome("all", 2, 1, 1)
    assert not r and "Put it in quotes" in r.message


def test_results_render_as_coloured_html_that_reads_without_colour():
    ok = CheckResult(True, "PASS: right")._repr_html_()
    bad = CheckResult(False, "Not quite: hint")._repr_html_()
    todo = CheckResult(False, checks.NO_ANSWER)._repr_html_()
    assert "PASS" in ok and "#228833" in ok
    assert "Not quite" in bad and "#cc3311" in bad
    assert "Not answered yet" in todo and "#cc3311" not in todo
    assert "<script" not in bad
    assert "&lt;b&gt;" in CheckResult(False, "Not quite: <b>")._repr_html_()   # escaped
