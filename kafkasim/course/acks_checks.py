"""Notebook 05's exercise checks (acks and min.insync.replicas). Each prints PASS or what is
wrong, and returns a ``checks.CheckResult``; the answers come from the simulator (``acks``), the
construct exercise from the NoAckedLoss checker."""

from __future__ import annotations

from collections.abc import Callable

from kafkasim.course.acks import after_append, run_exercise
from kafkasim.course.checks import CheckResult, _missing, _result
from kafkasim.course.elections import acked_losses, verdict
from kafkasim.course.i18n import tr
from kafkasim.runtime.cluster import Cluster
from kafkasim.scenarios.scenario import lost_acked


def check_after_append(today=None, kafka_3_6=None) -> CheckResult:
    """Exercise 1: the producer's answer on today's Kafka and on 3.6."""
    if (m := _missing(today, kafka_3_6)) is not None:
        return m
    right = {"today": after_append(None), "3.6": after_append("3.6")}
    got = {"today": str(today).strip().upper(), "3.6": str(kafka_3_6).strip().upper()}
    if got["3.6"] != right["3.6"]:
        return _result(False, tr("Kafka 3.6: the leader shrinks the ISR to [1] after "
                                 "replica.lag.time.max.ms; then the HW (the min LEO of the "
                                 "ISR) passes the record. Which branch of "
                                 "check_enough_replicas_reach_offset runs then?"))
    if got["today"] != right["today"]:
        return _result(False, tr("today: once the ISR is [1] it is below min.insync.replicas. "
                                 "What does the HW do then (section 5), and so does "
                                 "check_enough_replicas_reach_offset ever say 'done'? What "
                                 "ends the wait instead?"))
    return _result(True, tr("3.6: {v_3_6} (the HW passed the record with an ISR of one; the "
                            "record stays in the log). Today: {today} (the HW is frozen below "
                            "min ISR, the wait ends at request.timeout.ms; the record stays in "
                            "the log and may still be committed later). The producer's own "
                            "30 s timer starts before the broker's, so it fires first: the "
                            "callback gets a TimeoutException, 'Disconnected from node 1 due "
                            "to timeout' (Sender.handleProduceResponse). With the default "
                            "replica.lag.time.max.ms (30 s), 3.6 would time out too: the ISR "
                            "shrinks only after the request has expired.",
                            v_3_6=right['3.6'], today=right['today']))


def check_acks_saves(faults: Callable[[Cluster], None] | None,
                     kafka_version: str | None = None) -> CheckResult:
    """Exercise 2: ``faults(c)`` must lose acknowledged records with acks=1 and min ISR 1, and
    lose none with acks=all and min ISR 2, as the NoAckedLoss checker judges (on the notebook's
    ``KAFKA_VERSION`` unless ``kafka_version`` names one)."""
    if (m := _missing(faults)) is not None:
        return m
    if not callable(faults):
        return _result(False, tr("pass a function that takes the cluster, e.g. def "
                                 "my_faults(c): ..."))
    lost = {}
    for acks, min_isr in (("1", 1), ("all", 2)):
        c, p, suite = run_exercise(faults, acks, min_isr, kafka_version)
        v, a = acked_losses(suite)
        lost[acks] = (v + a, len(lost_acked(c, [p])), len(p.acked()))
        print(tr("--- acks={acks}, min.insync.replicas={min_isr}: {acked} acked, {failed} "
                 "refused or timed out", acks=acks, min_isr=min_isr, acked=len(p.acked()),
                 failed=len(p.failed())))
        print(verdict(suite))
    if lost["1"][0] == 0:
        return _result(False, tr("with acks=1 the checker found no acknowledged record lost: "
                                 "the leader must acknowledge records its followers do not "
                                 "have yet, then stop being leader for good."))
    if lost["all"][0] or lost["all"][1]:
        return _result(False, tr("acks=all with min.insync.replicas=2 lost acknowledged "
                                 "records too: did your faults keep a replica that had them "
                                 "from being elected?"))
    if lost["all"][2] == 0:
        return _result(False, tr("acks=all acknowledged nothing at all: a setting that refuses "
                                 "every write saves nothing worth saving. Let the writes "
                                 "succeed before the fault."))
    return _result(True, tr("acks=1 lost {v_0} acknowledged record(s); acks=all with min ISR 2 "
                            "lost none: every acknowledged write was on two brokers.",
                            v_0=lost['1'][0]))


def check_describe_reading(rejoin=None, clean_candidates=None) -> CheckResult:
    """Exercise 3: min.insync.replicas=2, the describe line above. How many replicas must rejoin
    the ISR before acks=all writes succeed again, and which brokers may the controller elect
    cleanly if broker 2 dies now?"""
    if (m := _missing(rejoin, clean_candidates)) is not None:
        return m
    if rejoin != 1:
        return _result(False, tr("acks=all needs an ISR of at least min.insync.replicas "
                                 "members; the ISR is [2]."))
    try:
        got = sorted(int(x) for x in clean_candidates)
    except (TypeError, ValueError):
        return _result(False, tr("give a list of broker ids, e.g. [1] or []."))
    if got != [3]:
        return _result(False, tr("with the ISR empty, the KRaft ladder takes an acceptable ELR "
                                 "member; broker 1 left the ISR while it was still at min ISR "
                                 "(records were committed without it)."))
    return _result(True, tr("one more ISR member (ISR [2] < min ISR 2); broker 3, from the "
                            "ELR: it left when the ISR fell below min ISR, after which the HW "
                            "froze, so it holds every committed record."))
