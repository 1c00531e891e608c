"""Exercise checks: each ``check_…`` prints PASS or says what is wrong (and why), and returns a
``CheckResult`` (truthy when correct) that shows nothing more in a notebook.

The right answers come from the simulator wherever one exists, not from a table typed in here.
"""

from __future__ import annotations

import html
import sys
from functools import lru_cache

from kafkasim.course.common import notebook_version
from kafkasim.course.i18n import tr

NO_ANSWER = "Not answered yet: replace None with your answer and run the cell again."


def no_answer(what: str | None = None) -> str:
    """``NO_ANSWER`` in the course language; with ``what`` (already translated, e.g.
    ``tr("a number")``), the message of an exercise whose placeholder is ``...``."""
    if what is not None:
        return tr("Not answered yet: replace ... with {what} and run again.", what=what)
    return tr("Not answered yet: replace None with your answer and run the cell again.")
REVEAL_AFTER = 2      # wrong tries at one check before its feedback states the right answer

# wrong tries per check since its last PASS (one learner, one kernel)
_wrong_tries: dict[str, int] = {}

_STYLES = {   # (border, background, label colour): the label's words carry the meaning too
    "pass": ("#228833", "#e8f5ea", "#17601f"),
    "fail": ("#cc3311", "#fdecea", "#a32a0e"),
    "todo": ("#777777", "#f2f2f2", "#444444"),
}


class CheckResult:
    """The outcome of a check. ``bool(result)`` is True when the answer was right."""

    def __init__(self, ok: bool, message: str, *, unanswered: bool = False) -> None:
        self.ok = ok
        self.message = message
        self.unanswered = unanswered

    def __bool__(self) -> bool:
        return self.ok

    def __repr__(self) -> str:
        return self.message

    def _repr_html_(self) -> str:
        todo = self.unanswered or self.message == no_answer()
        kind = "pass" if self.ok else ("todo" if todo else "fail")
        return feedback_html(kind, self.message)

    def _ipython_display_(self) -> None:
        """Already shown by the check: show nothing more in a notebook."""


def feedback_html(kind: str, message: str) -> str:
    """A check's message as a coloured box whose first word (PASS / Not quite / Not answered
    yet) says the same without colour."""
    border, background, label = _STYLES[kind]
    head, sep, rest = message.partition(": ")
    if not sep:
        head, rest = message, ""
    mark = {"pass": "✔ ", "fail": "✘ ", "todo": "… "}[kind]
    return (f"<div style='border-left:5px solid {border};background:{background};"
            f"padding:6px 10px;margin:4px 0;white-space:pre-wrap;font-family:sans-serif'>"
            f"<b style='color:{label}'>{mark}{html.escape(head)}</b>{sep and ': '}"
            f"{html.escape(rest)}</div>")


def _show(result: CheckResult) -> CheckResult:
    """Print the message (tests, scripts), or in a notebook kernel display it styled, with the
    same text as its plain-text form (what nbval compares)."""
    ip = None
    if "IPython" in sys.modules:
        from IPython import get_ipython

        ip = get_ipython()
    if ip is None or getattr(ip, "kernel", None) is None:
        print(result.message)
        return result
    from IPython.display import display

    display({"text/plain": result.message, "text/html": result._repr_html_()}, raw=True)
    return result


def _check_name(depth: int = 2) -> str:
    """The name of the check_… function calling us (the key of its wrong-try count)."""
    f = sys._getframe(depth)
    while f is not None and not f.f_code.co_name.startswith("check_"):
        f = f.f_back
    return f.f_code.co_name if f is not None else "?"


def _result(ok: bool, message: str, *, answer: str | None = None) -> CheckResult:
    """PASS or "Not quite": ``message`` is the explanation (PASS) or a hint that must not give
    the answer away; ``answer`` (what the right answer is) is added only after
    ``REVEAL_AFTER`` wrong tries at the same check."""
    name = _check_name()
    if ok:
        _wrong_tries.pop(name, None)
        return _show(CheckResult(True, tr("PASS: {message}", message=message)))
    text = tr("Not quite: {message}", message=message)
    if answer is not None:
        tries = _wrong_tries[name] = _wrong_tries.get(name, 0) + 1
        if tries >= REVEAL_AFTER:
            text += tr("\nThe answer: {answer}", answer=answer)
        else:
            text += tr("\n(Try again: after {n} wrong tries this check shows the answer.)",
                       n=REVEAL_AFTER)
    return _show(CheckResult(False, text))


def unanswered(what: str | None = None) -> CheckResult:
    """Show "Not answered yet" (``no_answer``), styled as such rather than as a wrong answer:
    what every check says to an answer left as ``None`` (or as ``...``, with ``what``)."""
    return _show(CheckResult(False, no_answer(what), unanswered=True))


def _missing(*answers) -> CheckResult | None:
    if any(a is None or a is Ellipsis for a in answers):
        return unanswered()
    return None


# -- the form of an answer: checked before it is judged -------------------------------------------
def _what(value) -> str:
    if isinstance(value, str):
        return tr("the text {value!r} (in quotes)", value=value)
    if isinstance(value, bool):
        return tr("the bool {value}", value=value)
    if isinstance(value, (set, frozenset)):
        return tr("the set {value!r} (a set has no order)", value=value)
    return f"{type(value).__name__} {value!r}"


def _form_error(name: str, value, expected: str, fix: str = "") -> str:
    """What is wrong with the form of an answer (not whether it is right)."""
    return tr("{name} should be {expected}; you gave {given}.", name=name, expected=expected,
              given=_what(value)) + (f" {fix}" if fix else "")


def _form(*problems: str | None) -> CheckResult | None:
    """Show the first form problem found (the ``_want_…`` helpers) as a FAIL, or None."""
    for problem in problems:
        if problem is not None:
            return _show(CheckResult(False, tr("Not quite (form): {problem}", problem=problem)))
    return None


def _want_bool(value, name: str = "answer") -> str | None:
    """None if ``value`` is True or False; else what is wrong (``"False"`` in quotes is
    text, and any non-empty text counts as true in Python)."""
    if isinstance(value, bool):
        return None
    fix = ""
    if isinstance(value, str) and value.strip().lower() in ("true", "false", "yes", "no"):
        word = "True" if value.strip().lower() in ("true", "yes") else "False"
        fix = (tr("Write {word} without quotes: any non-empty text, even 'False', counts as "
                  "true in Python.", word=word))
    return _form_error(name, value, tr("True or False"), fix)


def _want_int(value, name: str = "answer") -> str | None:
    """None if ``value`` is a whole number (an int, not a bool); else what is wrong with it."""
    if isinstance(value, int) and not isinstance(value, bool):
        return None
    fix = ""
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        fix = tr("Write {value_strip} without quotes.", value_strip=value.strip())
    elif isinstance(value, float) and value.is_integer():
        return None
    elif isinstance(value, (list, tuple, set)) and len(value) == 1:
        fix = tr("Write the number itself, not a collection of one.")
    return _form_error(name, value, tr("a whole number such as 3"), fix)


def _want_ints(value, name: str = "answer", *, ordered: bool = False) -> str | None:
    """None if ``value`` is a collection of whole numbers (a list or tuple when ``ordered``;
    a list, tuple or set otherwise); else what is wrong with its form."""
    kinds = (list, tuple) if ordered else (list, tuple, set, frozenset, range)
    expected = (tr("a list of whole numbers in order, such as [1, 2, 3]") if ordered else
                tr("a list (or set) of whole numbers, such as [1, 2]"))
    if isinstance(value, kinds) and all(isinstance(x, int) and not isinstance(x, bool)
                                        for x in value):
        return None
    fix = ""
    if ordered and isinstance(value, (set, frozenset)):
        fix = tr("Order matters here: use square brackets [ ], not braces { }.")
    elif isinstance(value, int) and not isinstance(value, bool):
        fix = tr("Put it in brackets: [{value}].", value=value)
    elif isinstance(value, str):
        fix = tr("Write the numbers without quotes, in brackets: [1, 2].")
    elif isinstance(value, kinds):
        fix = tr("Each element must be a number without quotes.")
    return _form_error(name, value, expected, fix)


def _want_text(value, choices, name: str = "answer") -> str | None:
    """None if ``value`` is one of ``choices`` (text, any case); else a message listing them (the
    choices only, never which one is right)."""
    if isinstance(value, str) and value.strip().lower() in {str(c).lower() for c in choices}:
        return None
    listed = ", ".join(repr(str(c)) for c in choices)
    return _form_error(name, value, tr("one of {listed}", listed=listed))


def _as_int_list(xs) -> list[int] | None:
    try:
        return sorted(int(x) for x in xs)
    except (TypeError, ValueError):
        return None


# -- 01 replication basics ------------------------------------------------------------------------
@lru_cache(maxsize=4)
def _p3r3_leaders(seed: int, kafka_version: str) -> dict[int, int]:
    from kafkasim.course.basics import TOPIC, p3r3_cluster

    c = p3r3_cluster(seed, kafka_version=kafka_version)
    return {p: c.leader(TOPIC, p) for p in c.assignment(TOPIC)}


def check_leader(partition: int, answer, *, kafka_version: str | None = None) -> CheckResult:
    """Which broker leads ``partition`` of topic-p3-r3 (seed 1), on ``kafka_version`` (the
    notebook's KAFKA_VERSION unless named)?"""
    from kafkasim.course.basics import SEED

    version = notebook_version(kafka_version, "check_leader")
    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_int(answer))) is not None:
        return m
    leaders = _p3r3_leaders(SEED, version)
    if partition not in leaders:
        return _result(False, tr("topic-p3-r3 has partitions {sorted_leaders}, not {partition}.",
                                 sorted_leaders=sorted(leaders), partition=partition))
    right = leaders[partition]
    if answer == right:
        return _result(True, tr("broker {right} leads partition {partition}: the first broker "
                                "in its replica list, so that is where producers send its "
                                "records.", right=right, partition=partition))
    return _result(False, tr("broker {answer} holds a follower copy (or no copy) of partition "
                             "{partition}. Look for 'Leader:' on the partition's line of the "
                             "--describe output.", answer=answer, partition=partition))


@lru_cache(maxsize=8)
def _max_fetchers(brokers: int, partitions: int, rf: int, seed: int, kafka_version: str) -> int:
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(brokers=brokers, seed=seed, kafka_version=kafka_version)
    c.create_topic("t", partitions, rf)
    return max(len(b.fetchers) for b in c.brokers.values())


def check_fetcher_threads(answer, brokers: int = 3, partitions: int = 6,
                          replication_factor: int = 3, *,
                          kafka_version: str | None = None) -> CheckResult:
    """Most ReplicaFetcherThreads any one broker runs (num.replica.fetchers = 1), on
    ``kafka_version`` (the notebook's KAFKA_VERSION unless named)."""
    version = notebook_version(kafka_version, "check_fetcher_threads")
    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_int(answer))) is not None:
        return m
    right = _max_fetchers(brokers, partitions, replication_factor, 1, version)
    if answer == right:
        return _result(True, tr("{right}: one fetcher thread per broker it follows, and there "
                                "are only {brokers_1} other brokers, however many partitions "
                                "there are. Each thread puts all its partitions in one Fetch "
                                "request.", right=right, brokers_1=brokers - 1))
    if isinstance(answer, int) and answer > brokers - 1:
        return _result(False, tr("a broker never needs more threads than there are other "
                                 "brokers ({brokers_1}) when num.replica.fetchers = 1: "
                                 "partitions with the same leader share one thread.",
                                 brokers_1=brokers - 1))
    return _result(False, tr("threads are per source broker, not per partition: count the "
                             "brokers the busiest broker follows."),
                   answer=tr("{right} (the simulator's count on the busiest broker).",
                             right=right))


def check_leo(leo, last_offset, existing: int = 2, sent: int = 4, *,
              kafka_version: str | None = None) -> CheckResult:
    """A partition holds offsets 0..existing-1; ``sent`` more records are appended, on
    ``kafka_version`` (the notebook's KAFKA_VERSION unless named)."""
    from kafkasim.runtime.cluster import Cluster

    version = notebook_version(kafka_version, "check_leo")
    if (m := _missing(leo, last_offset)) is not None:
        return m
    if (m := _form(_want_int(leo, "leo"),
                   _want_int(last_offset, "last_offset"))) is not None:
        return m
    c = Cluster(brokers=3, seed=1, kafka_version=version)
    c.create_topic("t", 1, 3)
    prod = c.producer(acks="all")
    results = [prod.send("t", f"v{i}", partition=0) for i in range(existing + sent)]
    prod.flush()
    right_leo = c.log(c.leader("t"), "t").log_end_offset
    right_last = results[-1].offset
    if (leo, last_offset) == (right_leo, right_last):
        return _result(True, tr("LEO {right_leo}, last offset {right_last}: the LEO is the "
                                "offset the NEXT record will get, one past the last record.",
                                right_leo=right_leo, right_last=right_last))
    reveal = tr("LEO {right_leo}, last offset {right_last}.",
                right_leo=right_leo, right_last=right_last)
    if leo == right_last:
        return _result(False, tr("the LEO is not the last record's offset but the next free "
                                 "one."),
                       answer=reveal)
    return _result(False, tr("offsets start at 0 and each record takes the next one; count the "
                             "{existing} records already there and the {sent} sent.",
                             existing=existing, sent=sent),
                   answer=reveal)


# -- 02 in-sync replicas --------------------------------------------------------------------------
@lru_cache(maxsize=2)
def _osr_sets(kafka_version: str) -> dict[str, list[int]]:
    from kafkasim.course.common import replica_sets
    from kafkasim.course.isr import TOPIC, osr_example

    c, _before, _after = osr_example(kafka_version=kafka_version)
    return replica_sets(c, TOPIC)


def check_replica_sets(ar, isr, osr, *, kafka_version: str | None = None) -> CheckResult:
    """AR, ISR and OSR of the 4-replica example once the leader has dropped broker 4 (on
    ``kafka_version``: the notebook's unless named)."""
    if (m := _missing(ar, isr, osr)) is not None:
        return m
    if (m := _form(_want_ints(ar, "ar"), _want_ints(isr, "isr"),
                   _want_ints(osr, "osr"))) is not None:
        return m
    right = _osr_sets(notebook_version(kafka_version, "check_replica_sets"))
    got = {"AR": _as_int_list(ar), "ISR": _as_int_list(isr), "OSR": _as_int_list(osr)}
    wrong = [k for k in ("AR", "ISR", "OSR") if got[k] != sorted(right[k])]
    if not wrong:
        return _result(True, tr("AR = ISR + OSR: every assigned replica is either in sync or "
                                "not."))
    k = wrong[0]
    hint = {"AR": tr("AR lists every assigned replica, in sync or not."),
            "ISR": tr("the ISR includes the leader itself."),
            "OSR": tr("OSR = AR minus ISR.")}[k]
    return _result(False, tr("{k} is not right. {hint}", k=k, hint=hint),
                   answer=f"{k} = {sorted(right[k])}")


def check_message_rule(leader_leo: int, follower_leo: int, max_messages: int, in_sync
                       ) -> CheckResult:
    """Kafka 0.8: in the ISR by the message rule? (``in_sync`` True/False)."""
    if (m := _missing(in_sync)) is not None:
        return m
    if (m := _form(_want_bool(in_sync, "in_sync"))) is not None:
        return m
    lag = leader_leo - follower_leo
    right = lag <= max_messages
    if bool(in_sync) == right:
        return _result(True, tr("{lag} message(s) behind with "
                                "replica.lag.max.messages={max_messages}: "
                                "{in_if_right_else_out_of} the ISR (out only when MORE than "
                                "the limit behind).",
                                lag=lag, max_messages=max_messages,
                                in_if_right_else_out_of=tr("in") if right else tr("out of")))
    return _result(False, tr("the follower is {lag} behind; 0.8 removed it only when the lag "
                             "was greater than {max_messages}.",
                             lag=lag, max_messages=max_messages),
                   answer=tr("{right} ({in_if_right_else_out_of} the ISR).",
                             right=right,
                             in_if_right_else_out_of=tr("in") if right else tr("out of")))


def check_removal_time(removed_ms, lag_ms: int = 24000, caught_up_ms: int = 5000,
                       first_run_ms: int = 5000, period_ms: int = 12000) -> CheckResult:
    """A follower last caught up at ``caught_up_ms``, then stuck while writes go on; the leader's
    isr-expiration task runs at ``first_run_ms`` and every ``period_ms`` after. At which run is
    it removed? Judged by Kafka's rule as kafkasim writes it (``rules.is_follower_out_of_sync``:
    strictly more than replica.lag.time.max.ms since the last catch-up)."""
    from kafkasim.core.rules import ReplicaState, is_follower_out_of_sync

    if (m := _missing(removed_ms)) is not None:
        return m
    if (m := _form(_want_int(removed_ms, "removed_ms"))) is not None:
        return m
    stuck = ReplicaState(broker_id=3, log_end_offset=0, last_caught_up_time_ms=caught_up_ms)
    runs = range(first_run_ms, caught_up_ms + 3 * lag_ms, period_ms)
    right = next(t for t in runs if is_follower_out_of_sync(stuck, 1, t, lag_ms))
    boundary = caught_up_ms + lag_ms
    if removed_ms == right:
        return _result(True, tr("at {right} ms. The run at {boundary} ms sees exactly {lag_ms} ms "
                                "since the last catch-up, and Kafka removes a follower only after "
                                "MORE than replica.lag.time.max.ms (now - lastCaughtUpTimeMs > "
                                "lag), so the next run does.",
                                right=right, boundary=boundary, lag_ms=lag_ms))
    if removed_ms == boundary and boundary in runs:
        hint = tr("at {boundary} ms exactly {lag_ms} ms have passed since the last catch-up: is "
                  "that enough for Kafka's comparison?", boundary=boundary, lag_ms=lag_ms)
    elif removed_ms not in runs:
        hint = tr("the leader removes a follower only when its isr-expiration task runs: at "
                  "t = {first_run_ms} + k × {period_ms} ms.", first_run_ms=first_run_ms,
                  period_ms=period_ms)
    elif removed_ms < boundary:
        hint = tr("out of sync needs more than {lag_ms} ms since the last catch-up (t = "
                  "{caught_up_ms}).", lag_ms=lag_ms, caught_up_ms=caught_up_ms)
    else:
        hint = tr("an earlier run already finds it out of sync.")
    return _result(False, hint, answer=tr("{right} ms.", right=right))


def check_causes(answer: dict, mystery: dict | None = None) -> CheckResult:
    """Match the anonymous runs A-D (``mystery``: label -> run, from ``isr.blind``) to their
    causes. The right answer is read from each run's own trace (the faults injected into it,
    ``isr.fault_cause``), so no answer key exists for a learner to print."""
    if not isinstance(answer, dict) and answer is not None and answer is not Ellipsis:
        return _form(_form_error("answer", answer, tr("a dict such as {'A': 'GC pause', ...}")))
    if (m := _missing(answer, *(answer or {}).values())) is not None:
        return m
    if not isinstance(mystery, dict) or not mystery:
        return _form(_form_error("mystery", mystery, tr("the runs A-D: check_causes(answer, "
                                                        "mystery)")))
    from kafkasim.course.isr import fault_cause

    right = {str(k).upper(): fault_cause(run) for k, run in mystery.items()}
    got = {str(k).upper(): str(v).strip().lower() for k, v in answer.items()}
    wrong = [k for k in sorted(right) if got.get(k) != (right[k] or "").lower()]
    if not wrong:
        return _result(True, tr("disk: lag that only grows, out for good; GC: one long freeze, cut "
                                "short in KRaft by the controller's fencing; overload: short "
                                "stalls with the ISR intact; network: long stalls that come back."))
    k = wrong[0]
    clues = {"slow disk": tr("it never rejoins and its lag keeps growing"),
             "GC pause": tr("one long freeze: in KRaft the controller fences the broker after "
                            "broker.session.timeout.ms, so the leader counts an expand without "
                            "a shrink of its own"),
             "broker overload": tr("no ISR change at all, but produce latency went up"),
             "network latency": tr("long stalls that come back: the p99 adds two of them up")}
    return _result(False, tr("run {k} is not '{got_get_k}': look for the run where "
                             "{clues_right_k}.",
                             k=k, got_get_k=got.get(k),
                             clues_right_k=clues.get(right[k], tr("none of the four causes"))))


# -- 03 high watermark ----------------------------------------------------------------------------
def check_hw(leos: dict, isr, answer) -> CheckResult:
    """HW of a partition whose replicas have ``leos`` (broker -> LEO) and ISR ``isr``."""
    from kafkasim.course.hw import high_watermark

    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_int(answer))) is not None:
        return m
    right = high_watermark(leos, isr)
    if answer == right:
        return _result(True, tr("HW {right}: the smallest LEO in the ISR. Offsets 0..{right_1} "
                                "are committed.", right=right, right_1=right - 1))
    if answer == right - 1:
        return _result(False, tr("that is the last committed offset; Kafka's HW is exclusive: "
                                 "the first offset NOT yet committed (one more)."))
    outside = [b for b in leos if b not in isr]
    if outside and answer == min(leos.values()):
        return _result(False, tr("broker(s) {outside} are out of the ISR and do not hold the "
                                 "HW back.", outside=outside))
    return _result(False, tr("take the smallest LEO among the ISR members."))


def check_readable(hw: int, answer) -> CheckResult:
    """Which offsets can a consumer read when the HW is ``hw`` (log starts at 0)?"""
    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_ints(answer))) is not None:
        return m
    got = _as_int_list(answer)
    right = list(range(hw))
    if got == right:
        return _result(True, tr("offsets 0..{hw_1}: everything below the HW, never the HW "
                                "itself.", hw_1=hw - 1))
    if got == list(range(hw + 1)):
        return _result(False, tr("offset {hw} is the first offset NOT yet committed: consumers "
                                 "stop just before it.", hw=hw))
    return _result(False, tr("consumers read from the start up to, not including, the HW "
                             "({hw}).", hw=hw))


@lru_cache(maxsize=4)
def _hw_row(kafka_version: str) -> tuple[int, int]:
    from kafkasim.course.hw import TOPIC, commit_process

    s = commit_process(kafka_version=kafka_version)
    leader = s.c.leader(TOPIC)
    for i, r in enumerate(s.rows):
        if r.state[leader][1] == 7:
            return i + 1, leader
    raise AssertionError("the leader's HW never reached 7")


def check_hw_row(answer, *, kafka_version: str | None = None) -> CheckResult:
    """In the commit table, on which row (#) does the leader's HW become 7 (on
    ``kafka_version``, the notebook's KAFKA_VERSION unless named)?"""
    version = notebook_version(kafka_version, "check_hw_row")
    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_int(answer))) is not None:
        return m
    row, _leader = _hw_row(version)
    if answer == row:
        return _result(True, tr("row {row}: the second follower's fetch from offset 7 tells "
                                "the leader that both followers hold offset 6.", row=row))
    if isinstance(answer, int) and answer < row:
        return _result(False, tr("at that row at least one follower has not yet asked for "
                                 "offset 7, so the leader cannot know it holds offset 6."))
    return _result(False, tr("look for the first row where the leader's HW column changes."),
                   answer=tr("row {row}.", row=row))


# -- 04 consumer positions ------------------------------------------------------------------------
def check_positions(committed, position, hw, leo, *,
                    kafka_version: str | None = None) -> CheckResult:
    """The four positions of the notebook's second scenario (``positions_quiz``, on
    ``kafka_version``: the notebook's unless named)."""
    from kafkasim.course.positions import quiz_positions

    if (m := _missing(committed, position, hw, leo)) is not None:
        return m
    if (m := _form(_want_int(committed, "committed"), _want_int(position, "position"),
                   _want_int(hw, "hw"), _want_int(leo, "leo"))) is not None:
        return m
    right = quiz_positions(kafka_version)
    got = {"committed": committed, "position": position, "HW": hw, "LEO": leo}
    wrong = [k for k in got if got[k] != right[k]]
    if not wrong:
        return _result(True, tr("committed {committed} <= position {position} <= HW {hw} <= "
                                "LEO {leo}.",
                                committed=right['committed'], position=right['position'],
                                hw=right['HW'], leo=right['LEO']))
    k = wrong[0]
    hints = {"committed": tr("the committed offset is the position at the last commit() (the "
                             "next record to read after a restart)."),
             "position": tr("the position is the offset of the next record poll() will return."),
             "HW": tr("the HW is the smallest LEO in the ISR."),
             "LEO": tr("the LEO is the leader's next free offset (one past its last record).")}
    return _result(False, tr("{k} is not right: {hints_k}", k=k, hints_k=hints[k]),
                   answer=f"{k} = {right[k]}.")


def check_group_lag(answer, *, kafka_version: str | None = None) -> CheckResult:
    """The LAG column of kafka-consumer-groups in the quiz scenario (on ``kafka_version``: the
    notebook's unless named)."""
    from kafkasim.course.positions import quiz_positions

    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_int(answer))) is not None:
        return m
    right = quiz_positions(kafka_version)
    lag = right["HW"] - right["committed"]
    if answer == lag:
        return _result(True, tr("LAG = LOG-END-OFFSET - CURRENT-OFFSET = HW {hw} - committed "
                                "{committed} = {lag}.",
                                hw=right['HW'], committed=right['committed'], lag=lag))
    if answer == right["LEO"] - right["committed"]:
        return _result(False, tr("the tool's LOG-END-OFFSET column is the high watermark, not "
                                 "the leader's LEO."))
    if answer == right["HW"] - right["position"]:
        return _result(False, tr("that is the consumer's own records-lag (HW - position); the "
                                 "tool uses the committed offset."))
    return _result(False, tr("LAG = LOG-END-OFFSET (the HW) - CURRENT-OFFSET (the committed "
                             "offset)."),
                   answer=f"{lag}.")


# -- 05 acks and min.insync.replicas --------------------------------------------------------------
@lru_cache(maxsize=32)
def _outcome(acks: str, min_isr: int, isr_size: int) -> str:
    from kafkasim.course.acks import write_outcome

    return write_outcome(acks, min_isr, isr_size)["result"]


def check_write_outcome(acks, min_isr: int, isr_size: int, answer) -> CheckResult:
    """RF 3: the result of one write (``"ok"`` or an error name such as NOT_ENOUGH_REPLICAS)."""
    if (m := _missing(answer)) is not None:
        return m
    if not isinstance(answer, str):
        return _form(_form_error("answer", answer, tr("text: 'ok' or an error name such as "
                                                      "'NOT_ENOUGH_REPLICAS'"),
                                                      tr("Put it in quotes.")))
    right = _outcome(str(acks), min_isr, isr_size)
    got = str(answer).strip().upper()
    if got == right.upper():
        why = (tr("acks=all checks min.insync.replicas against the ISR before appending")
               if str(acks) in ("all", "-1") else
               tr("only acks=all looks at min.insync.replicas"))
        return _result(True, f"{right}: {why}.")
    if str(acks) not in ("all", "-1"):
        return _result(False, tr("acks=0 and acks=1 never check min.insync.replicas."))
    return _result(False, tr("acks=all compares the ISR size ({isr_size}) with "
                             "min.insync.replicas ({min_isr}) before it appends.",
                             isr_size=isr_size, min_isr=min_isr),
                   answer=f"{right}.")


def check_tolerated_failures(replication_factor: int, min_isr: int, answer) -> CheckResult:
    """How many replicas may drop out of the ISR while acks=all writes keep succeeding?"""
    from kafkasim.course.acks import max_broker_failures

    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_int(answer))) is not None:
        return m
    right = max_broker_failures(replication_factor, min_isr)
    if answer == right:
        extra = " Any single failure stops acks=all writes." if right == 0 else ""
        return _result(True, tr("RF {replication_factor} - min ISR {min_isr} = {right}.{extra}",
                                replication_factor=replication_factor, min_isr=min_isr,
                                right=right, extra=extra))
    return _result(False, tr("acks=all needs at least min.insync.replicas members in the ISR; "
                             "the rest may be lost."), answer=f"{right}.")


def check_hw_freeze(version: str, answer) -> CheckResult:
    """ISR [leader] below min ISR 2, an acks=1 write acked: can a consumer read it?"""
    from kafkasim.course.acks import hw_freeze

    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_bool(answer))) is not None:
        return m
    res = hw_freeze(version)
    right = "while-alone" in res["consumer reads"]
    if bool(answer) == right:
        why = (tr("before 3.7 the HW still advances with only the leader in the ISR")
               if right else tr("since 3.7 (KIP-966 groundwork) the HW stays put below min ISR"))
        return _result(True, tr("{yes_no}: {why}.", yes_no=tr("yes") if right else tr("no"),
                                why=why))
    return _result(False, tr("in Kafka {version} the leader's HW is {hw} and its LEO "
                             "{leader_leo}: consumers read only below the HW.",
                             version=version, hw=res['HW'], leader_leo=res['leader LEO']))


# -- 06 monitoring --------------------------------------------------------------------------------
@lru_cache(maxsize=4)
def _alerts(kind: str, kafka_version: str) -> dict[str, bool]:
    from kafkasim.course.monitoring import alerts_for

    return alerts_for(kind, kafka_version=kafka_version)


def check_alerts(kind: str, answer, *, kafka_version: str) -> CheckResult:
    """Which alert rules fire for incident ``kind`` on Kafka ``kafka_version`` (the notebook's)?
    ``answer`` is a set of rule names (or of the words "URP" / "shrink")."""
    if (m := _missing(answer)) is not None:
        return m
    if isinstance(answer, str) or not isinstance(answer, (set, frozenset, list, tuple)):
        return _form(_form_error("answer", answer, tr("a set of rule names, such as {'URP'} or "
                                                      "set() for none"),
                                                      tr("Put the names in braces { }.")))
    fired = {name for name, ok in _alerts(kind, kafka_version).items() if ok}
    aliases = {"urp": "KafkaUnderReplicatedPartitions",
               "underreplicated": "KafkaUnderReplicatedPartitions",
               "shrink": "KafkaISRShrinking", "shrinking": "KafkaISRShrinking",
               "isrshrinking": "KafkaISRShrinking"}
    got = set()
    for a in answer:
        key = str(a).strip()
        got.add(aliases.get(key.lower().replace("_", "").replace("kafka", ""), key))
    if got == fired:
        return _result(True, f"{kind}: {sorted(fired) or tr('no alert')}.")
    missing = sorted(fired - got)
    extra = sorted(got - fired)
    if missing:
        return _result(False, tr("{v_0} does fire during the {kind}: look at how long its "
                                 "expression stays true compared with 'for: 5m'.",
                                 v_0=missing[0], kind=kind))
    return _result(False, tr("{v_0} does not fire during the {kind}: its expression is not "
                             "true for 5 minutes in a row.", v_0=extra[0], kind=kind))


def check_left_isr(replicas: str, isr: str, answer) -> CheckResult:
    """From a describe line's ``Replicas:`` and ``Isr:`` lists, which broker(s) left the ISR?"""
    if (m := _missing(answer)) is not None:
        return m
    if not (isinstance(answer, int) and not isinstance(answer, bool)) and \
            (m := _form(_want_ints(answer))) is not None:
        return m
    reps = [int(x) for x in replicas.split(",")]
    ins = {int(x) for x in isr.split(",")}
    right = sorted(b for b in reps if b not in ins)
    got = _as_int_list(answer if isinstance(answer, (list, tuple, set)) else [answer])
    if got == right:
        return _result(True, tr("broker(s) {right}: assigned (Replicas) but not in sync (Isr).",
                                right=right))
    return _result(False, tr("compare the two lists: Replicas minus Isr."))


def check_single_shrink_fires(answer) -> CheckResult:
    """One ISR shrink and nothing else: does rate(IsrShrinksPerSec[5m]) > 0 for 5m fire?"""
    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_bool(answer))) is not None:
        return m
    if answer is False:
        return _result(True, tr("no: one increase keeps the 5-minute rate above 0 for a little "
                                "less than 5 minutes (until the sample before it leaves the "
                                "window), so 'for: 5m' is never met."))
    return _result(False, tr("the rate is above 0 only while the window holds samples from "
                             "both sides of the increase: just under 5 minutes."))
