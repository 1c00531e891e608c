"""Notebook 04's exercise checks (consumer positions). Each prints PASS or what is wrong, and
returns a ``checks.CheckResult``; the answers come from the simulator (``positions``)."""

from __future__ import annotations

from kafkasim.course.checks import CheckResult, _missing, _result
from kafkasim.course.i18n import tr
from kafkasim.course.positions import rereads, takeover_outcome


def check_takeover(current_offset=None, log_end_offset=None, lag=None, *,
                   kafka_version: str | None = None) -> CheckResult:
    """Exercise 1: the three numbers of ``kafka-consumer-groups --describe`` after the takeover
    (on ``kafka_version``: the notebook's unless named)."""
    if (m := _missing(current_offset, log_end_offset, lag)) is not None:
        return m
    right = takeover_outcome(kafka_version)
    got = {"CURRENT-OFFSET": current_offset, "LOG-END-OFFSET": log_end_offset, "LAG": lag}
    wrong = [k for k in got if got[k] != right[k]]
    if not wrong:
        return _result(True, tr("CURRENT-OFFSET {current_offset} (the new member started at "
                                "the old commit and committed 3 records later), LOG-END-OFFSET "
                                "{log_end_offset} (the HW, now that the followers caught up), "
                                "LAG {lag}.",
                                current_offset=right['CURRENT-OFFSET'],
                                log_end_offset=right['LOG-END-OFFSET'], lag=right['LAG']))
    hints = {"CURRENT-OFFSET": tr("the new member starts at the group's committed offset, not "
                                  "at the old consumer's position; then it reads 3 and commits."),
             "LOG-END-OFFSET": tr("the column is the high watermark: where is it once the "
                                  "followers have caught up?"),
             "LAG": tr("LAG = LOG-END-OFFSET - CURRENT-OFFSET.")}
    return _result(False, f"{wrong[0]}: {hints[wrong[0]]}")


def check_rereads(steps=None, twice: int = 3, *, kafka_version: str | None = None) -> CheckResult:
    """Exercise 2: ``steps(consumer)`` must leave the group so that a new member reads exactly
    ``twice`` records a second time (and skips none), on ``kafka_version`` (the notebook's
    unless named)."""
    if (m := _missing(steps)) is not None:
        return m
    if not callable(steps):
        return _result(False, tr("pass your function itself: check_rereads(my_steps)."))
    first, second = rereads(steps, kafka_version)
    again = sorted(set(first) & set(second))
    skipped = sorted(set(range(20)) - set(first) - set(second))
    if skipped:
        return _result(False, tr("offsets {skipped} were never read by anyone: the group "
                                 "committed past what its consumer returned to you (commit "
                                 "after poll, not before).", skipped=skipped))
    if len(again) == twice:
        return _result(True, tr("the new member re-read offsets {again}: everything between "
                                "the last commit and the old consumer's position.", again=again))
    return _result(False, tr("the new member re-read {len_again} record(s) ({again}); it "
                             "starts at the last committed offset and reads what the old "
                             "consumer had read after it. Make that {twice}.",
                             len_again=len(again), again=again, twice=twice))


def check_output_reading(position=None, read_twice=None) -> CheckResult:
    """Exercise 3: CURRENT-OFFSET 1200, LOG-END-OFFSET 1250, LAG 50, records-lag 8. The
    consumer's position, and how many records its successor reads again after a crash."""
    if (m := _missing(position, read_twice)) is not None:
        return m
    hw, committed, records_lag = 1250, 1200, 8
    right_pos = hw - records_lag
    if position != right_pos:
        if position == committed + records_lag:
            return _result(False, tr("records-lag is measured from the HW, not from the "
                                     "committed offset."))
        return _result(False, tr("records-lag = HW - position, and the tool's LOG-END-OFFSET "
                                 "is the HW."))
    if read_twice != right_pos - committed:
        return _result(False, tr("a successor starts at CURRENT-OFFSET (the committed offset) "
                                 "and re-reads up to the old position."))
    return _result(True, tr("position = HW {hw} - records-lag {records_lag} = {right_pos}; a "
                            "successor starts at {committed} and reads {right_pos_committed} "
                            "records a second time.",
                            hw=hw, records_lag=records_lag, right_pos=right_pos,
                            committed=committed, right_pos_committed=right_pos - committed))
