"""Notebook 13 (fetch from follower, KIP-392): the printed poll lines of section 3 and the runs
and checks of exercises 2 and 3. Every cluster is built in a visible cell of the notebook.

- Exercise 2: a follower learns a new high watermark in the answer to its next fetch, which an
  idle leader parks for up to ``replica.fetch.wait.max.ms`` (``DelayedFetch``: a follower's fetch
  completes as soon as new records reach ``replica.fetch.min.bytes``, else at the wait's end);
  the follower then completes the consumer fetches waiting on it.
- Exercise 3: ``ReplicaManager.findPreferredReadReplica`` offered any follower holding the fetch
  offset on 2.4-3.3 and only ISR members since 3.4 (KAFKA-14372,
  ``preferred_read_replica_isr_only``): a consumer sent to a cut-off follower reads that
  follower's frozen high watermark and stops there.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

from kafkasim.course.checks import CheckResult, _form, _missing, _result, _want_int
from kafkasim.course.common import Text
from kafkasim.course.i18n import tr
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.versions import FetchRules

__all__ = ["FollowerWait", "check_follower_wait", "check_stale_read", "follower_wait",
           "polled_lines", "stale_read_choices"]

TOPIC = "orders"
#: the first release whose leader offers only in-sync followers (KAFKA-14372)
ISR_ONLY_SINCE = next(f.metadata["since"] for f in dataclasses.fields(FetchRules)
                      if f.name == "preferred_read_replica_isr_only")


def polled_lines(records, after_ms: int) -> Text:
    """A poll's records as one sentence line: offset, value, the HW the response carried."""
    if not records:
        return Text(tr("after {ms} ms: no records yet", ms=after_ms))
    got = ", ".join(tr("offset {offset} = {value!r} (served with HW {hw})", offset=r.offset,
                       value=r.value, hw=r.served_hw) for r in records)
    return Text(tr("after {ms} ms: {records}", ms=after_ms, records=got))


# -- exercise 2: when does a follower's consumer get the acknowledged record? ---------------------
@dataclass(frozen=True, slots=True)
class FollowerWait:
    """Exercise 2's run as the check reads it: the consumer's broker, the leader, the leader's
    ``replica.fetch.wait.max.ms`` and how long after the acknowledgement the record arrived."""

    served_by: int
    leader: int
    wait_max_ms: int
    waited_ms: int


def _arrival_ms(c: Cluster, consumer, offset: int) -> int | None:
    """When ``consumer`` received ``offset``: the trace's ``consume`` row that carried it."""
    for row in c.trace.rows:
        if row[1] == "consume" and row[2] == consumer.client_id and row[3] == TOPIC:
            first, last = row[5][0], row[5][1]
            if first <= offset <= last:
                return row[0]
    return None


def follower_wait(c: Cluster, consumer, ack_ms: int, value: str = "late") -> FollowerWait | None:
    """The run of exercise 2 read back: None if ``consumer`` has not received ``value`` yet."""
    offset = next((r.offset for r in consumer.consumed if r.value == value), None)
    arrived = None if offset is None else _arrival_ms(c, consumer, offset)
    if arrived is None:
        return None
    return FollowerWait(consumer.fetching_from(TOPIC),
                        c.inspect.partition_state(TOPIC, 0)["leader"],
                        c.broker_config["replica.fetch.wait.max.ms"], arrived - ack_ms)


def _near(answer: int, value: int) -> bool:
    return abs(answer - value) <= max(50, value // 10)


def _wait_hint(run: FollowerWait, answer: int) -> str:
    if answer < 100:
        return tr("that is the leader's consumer: its HW moved at the acknowledgement. Broker "
                  "{b} hears of the new HW only in the answer to its next fetch.", b=run.served_by)
    if _near(answer, 500):
        return tr("500 ms is the default replica.fetch.wait.max.ms; this cluster sets it to "
                  "{w} ms.", w=run.wait_max_ms)
    if _near(answer, run.wait_max_ms):
        return tr("the leader parks the follower's fetch for up to {w} ms, unless something "
                  "ends the wait sooner: what else reaches the leader before then?",
                  w=run.wait_max_ms)
    if answer > run.wait_max_ms:
        return tr("the wait never lasts longer than replica.fetch.wait.max.ms ({w} ms): then the "
                  "leader answers, records or not, with its HW.", w=run.wait_max_ms)
    return tr("what ends the leader's wait on the follower's parked fetch, and when?")


def check_follower_wait(c: Cluster, consumer, ack_ms: int, *, answer_ms=None) -> CheckResult:
    """Exercise 2: about how many ms after the acknowledgement (``ack_ms``) does the follower's
    consumer get ``late``? Right within 10% (at least 50 ms) of the run's time."""
    miss = _missing(answer_ms)
    if miss is not None:
        return miss
    problem = _form(_want_int(answer_ms, "answer_ms"))
    if problem is not None:
        return problem
    run = follower_wait(c, consumer, ack_ms)
    if run is None:
        return _result(False, tr("the consumer has not received {value!r} yet: run the cell "
                                 "above to the end first.", value="late"))
    reveal = tr("about {ms} ms", ms=run.waited_ms)
    if run.served_by == run.leader:
        return _result(False, tr("this run's consumer reads from the leader: give it a rack "
                                 "with a follower and no leader."), answer=reveal)
    if not _near(answer_ms, run.waited_ms):
        return _result(False, _wait_hint(run, answer_ms), answer=reveal)
    return _result(True, tr("{ms} ms. With nothing new to send, the leader parked broker {b}'s "
                            "fetch until {value!r} arrived; that answer carried the new HW, and "
                            "broker {b} then completed the consumer's waiting fetch. Without "
                            "it: {w} ms.", ms=run.waited_ms, b=run.served_by, value="next",
                            w=run.wait_max_ms))


# -- exercise 3: a consumer sent to a cut-off follower ---------------------------------------------
CHOICES = ("a", "b", "c", "d")


def stale_read_choices() -> Text:
    """Exercise 3's answers to choose from, in the course's language."""
    return Text("\n".join([
        tr("a: it reads w0-w4 before they are committed"),
        tr("b: it reads v0-v4, then nothing more: w0-w4 are committed but never come"),
        tr("c: a fetch fails with OFFSET_OUT_OF_RANGE and it starts over from "
           "auto.offset.reset"),
        tr("d: nothing goes wrong: it reads all ten records")]))


def _stale_outcome(c: Cluster, consumer) -> str:
    """What the consumer's reads were: a (above a served HW), c (OFFSET_OUT_OF_RANGE), b (stopped
    below the leader's HW), d (all of it)."""
    if any(r.offset >= r.served_hw for r in consumer.consumed):
        return "a"
    if any(err[3] == "OFFSET_OUT_OF_RANGE" for err in consumer.errors):
        return "c"
    leader_hw = max(r["HW"] for r in c.replica_table(TOPIC, 0) if r["role"] == "leader")
    return "b" if len(consumer.consumed) < leader_hw else "d"


def _what_hint(what: str, cut_off: int) -> str:
    return {
        "a": tr("a follower serves only below its own HW, and its HW is never above the "
                "leader's: nothing uncommitted is read."),
        "b": tr("look again at what the consumer got on that release."),
        "c": tr("the consumer never asks beyond broker {b}'s log end: a fetch at a replica's LEO "
                "returns no records, not an error.", b=cut_off),
        "d": tr("on one release the leader still sends the consumer to broker {b}: what is its "
                "HW, and can it ever move while it is cut off?", b=cut_off),
    }[what]


def check_stale_read(readers: dict, clusters: dict, *, wrong_on=None, what=None,
                     cut_off: int = 3) -> CheckResult:
    """Exercise 3: on which release does the rack consumer's read go wrong (``wrong_on``, a
    version string), and how (``what``, one of a-d)? Graded from the runs."""
    miss = _missing(wrong_on, what)
    if miss is not None:
        return miss
    wrong_on = wrong_on.strip() if isinstance(wrong_on, str) else wrong_on
    what = what.strip().lower() if isinstance(what, str) else what
    if wrong_on not in readers:
        return _result(False, tr("wrong_on is one of {versions}, as a string.",
                                 versions=sorted(readers)))
    if what not in CHOICES:
        return _result(False, tr("what is one of 'a', 'b', 'c', 'd'."))
    outcome = {v: _stale_outcome(clusters[v], readers[v]) for v in sorted(readers)}
    bad = [v for v, o in outcome.items() if o != "d"]
    right_on = bad[0] if bad else None
    reveal = tr("wrong_on={v!r}, what={w!r}", v=right_on, w=outcome.get(right_on, "d"))
    if wrong_on != right_on:
        isr_only = clusters[wrong_on].rules.fetch.preferred_read_replica_isr_only
        return _result(False, tr("on {v} the leader's candidates are {rule}. Is broker {b} one "
                                 "of them there?", v=wrong_on,
                                 rule=tr("in-sync followers only") if isr_only
                                 else tr("any follower holding the fetch offset"), b=cut_off),
                       answer=reveal)
    if what != outcome[right_on]:
        return _result(False, _what_hint(what, cut_off), answer=reveal)
    reader = readers[right_on]
    return _result(True, tr("on {v} the leader sends the rack consumer to broker {b}, out of "
                            "the ISR but still holding offset 0. It reads {n} records, up to "
                            "broker {b}'s frozen HW, then nothing: the committed rest never "
                            "comes. Since {since} (KAFKA-14372) only ISR members are "
                            "candidates, so the leader serves it itself.", v=right_on,
                            b=reader.fetching_from(TOPIC), n=len(reader.consumed),
                            since=ISR_ONLY_SINCE))
