"""Notebook 06's exercise checks (monitoring). Each prints PASS or what is wrong, and returns a
``checks.CheckResult``; the answers come from the simulated, scraped series (``monitoring``)."""

from __future__ import annotations

from kafkasim.course.checks import CheckResult, _missing, _result
from kafkasim.course.i18n import tr
from kafkasim.course.monitoring import (
    MINUTE,
    RULES,
    URP_OUTPUT,
    _fired,
    _rule_names,
    alert_report,
    exercise_cluster,
    minsec,
    slow_flapping_alerts,
)


def check_slow_flapping(answer=None, *, kafka_version: str) -> CheckResult:
    """Exercise 1: which rules fire when broker 3 drops out for 20 s every 6 minutes, on Kafka
    ``kafka_version`` (the notebook's)?"""
    if (m := _missing(answer)) is not None:
        return m
    got = _rule_names(answer)
    if got is None:
        return _result(False, tr("answer with a set of rule names, e.g. {\"URP\"}, or set()."))
    fired = set(slow_flapping_alerts(kafka_version=kafka_version))
    if got == fired:
        return _result(True, tr("{sorted_fired_or_no_alert}: one shrink keeps the 5-minute "
                                "rate above 0 for just under 5 minutes, and the next one comes "
                                "6 minutes later, so the expression turns false in between and "
                                "'for: 5m' starts again each time.",
                                sorted_fired_or_no_alert=sorted(fired) or tr("no alert")))
    if "KafkaISRShrinking" in got - fired:
        return _result(False, tr("KafkaISRShrinking needs rate(...[5m]) > 0 at every "
                                 "evaluation for 5 minutes. How long does one shrink keep the "
                                 "rate above 0, and how far apart are the shrinks?"))
    return _result(False, tr("compare how long each expression stays true with 'for: 5m'."))


def check_both_fire(faults=None, *, kafka_version: str) -> CheckResult:
    """Exercise 2: ``faults(c)`` (cuts and heals within 20 minutes) must make both of the notes'
    alert rules fire on a cluster of Kafka ``kafka_version`` (the notebook's), judged on the
    scraped series as Prometheus would."""
    if (m := _missing(faults)) is not None:
        return m
    if not callable(faults):
        return _result(False, tr("pass a function that takes the cluster, e.g. def "
                                 "my_faults(c): ..."))
    c = exercise_cluster(kafka_version=kafka_version)
    faults(c)
    if c.now > 20 * MINUTE:
        return _result(False, tr("your faults ran to {minsec_c_now}; keep them within 20:00.",
                                 minsec_c_now=minsec(c.now)))
    c.heal()
    c.run_to(25 * MINUTE)
    fired = _fired(c)
    print(alert_report(c, timeline=False))
    if fired == {r.name for r in RULES}:
        return _result(True, tr("both fire: a replica that stays out (URP > 0 for 5 minutes) "
                                "and shrinks that keep coming (a shrink in every 5-minute "
                                "window)."))
    missing = sorted({r.name for r in RULES} - fired)
    why = {"KafkaUnderReplicatedPartitions": tr("some leader must report URP > 0 at every "
                                                "scrape for 5 minutes: one replica has to stay "
                                                "out."),
           "KafkaISRShrinking": tr("the same leader must see a new shrink before each previous "
                                   "one leaves the 5-minute window, for 5 minutes.")}
    return _result(False, tr("{v_0} did not fire: {why_missing_0}",
                             v_0=missing[0], why_missing_0=why[missing[0]]))


def check_urp_reading(suspect=None, highest_urp_broker=None) -> CheckResult:
    """Exercise 3: from URP_OUTPUT, the broker to look at, and the broker whose
    UnderReplicatedPartitions gauge is highest."""
    if (m := _missing(suspect, highest_urp_broker)) is not None:
        return m
    lines = [{k: v.strip() for k, _, v in (f.partition(":") for f in ln.strip("\n").split("\t")
                                             if f)} for ln in URP_OUTPUT.splitlines()]
    missing = [sorted(set(ln["Replicas"].split(",")) - set(ln["Isr"].split(","))) for ln in lines]
    common = set.intersection(*(set(m) for m in missing))
    by_leader: dict[str, int] = {}
    for ln in lines:
        by_leader[ln["Leader"]] = by_leader.get(ln["Leader"], 0) + 1
    top = max(by_leader, key=lambda b: by_leader[b])
    if {str(suspect)} != common:
        return _result(False, tr("for each line, Replicas minus Isr names who left; which "
                                 "broker is missing from every line?"))
    if str(highest_urp_broker) != top:
        return _result(False, tr("UnderReplicatedPartitions is reported by each partition's "
                                 "leader, not by the broker that fell behind."))
    return _result(True, tr("broker {suspect} is missing from every ISR; broker {top} leads "
                            "{by_leader_top} of the under-replicated partitions, so its gauge "
                            "reads {by_leader_top} (broker {suspect}'s reads 0 for these).",
                            suspect=suspect, top=top, by_leader_top=by_leader[top]))
