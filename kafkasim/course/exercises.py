"""The graded exercises of notebooks 01-03 (issue 14): each ``check_...`` runs the learner's
answer (a number, a fault sequence, a rule) against the simulator and prints PASS or what is off.

Kept apart from the notebooks' table modules (basics, isr, hw) because ``checks`` imports those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafkasim.course.basics import fetcher_thread_count, lagging_follower_run
from kafkasim.course.checks import CheckResult, _missing, _result
from kafkasim.course.common import isr_changes, meter_counts
from kafkasim.course.hw import all_replicas_run, high_watermark, slow_broker_3_commit
from kafkasim.course.i18n import tr
from kafkasim.course.isr import TOPIC, flapping_run
from kafkasim.runtime.cluster import Cluster

__all__ = ["check_ack_delay", "check_all_replicas_rule", "check_fetcher_total", "check_flapping",
           "check_lagging_follower", "check_last_committed"]


# -- basics (notebook 01) --------------------------------------------------------------------------
def check_fetcher_total(c: Cluster, answer) -> CheckResult:
    """Exercise: how many ReplicaFetcherThreads does the whole cluster ``c`` run?"""
    if (m := _missing(answer)) is not None:
        return m
    right = fetcher_thread_count(c)
    if answer == right:
        return _result(True, tr("{right} threads: each broker runs one per *other broker that "
                                "leads a partition it follows* (num.replica.fetchers=1), so "
                                "count distinct leaders per broker, not partitions.", right=right))
    hint = (tr(" That is one per partition copy; partitions with the same leader share a "
               "thread.")
            if answer > right else tr(" Some broker follows partitions of several leaders."))
    return _result(False, tr("{answer} is not what the simulator runs.{hint}",
                             answer=answer, hint=hint))


def check_lagging_follower(faults) -> CheckResult:
    """Exercise: ``faults(c)`` must leave broker 3 alive at LEO 2 while the leader (broker 1)
    and broker 2 reach LEO 5."""
    if (m := _missing(faults)) is not None:
        return m
    if not callable(faults):
        return _result(False, tr("pass a function that takes the cluster, e.g. def "
                                 "my_faults(c): ..."))
    c = lagging_follower_run(faults)
    leos = {r["broker"]: r["LEO"] for r in c.replica_table("lag")}
    print(c.describe("lag"))
    print(tr("LEOs:"), leos)
    if not c.brokers[3].is_running:
        return _result(False, tr("broker 3 must stay up: a stopped broker is not a lagging "
                                 "follower."))
    if c.leader("lag", 0) != 1:
        return _result(False, tr("broker {c_leader_lag_0} leads now: keep broker 1 the leader.",
                                 c_leader_lag_0=c.leader('lag', 0)))
    if leos != {1: 5, 2: 5, 3: 2}:
        return _result(False, tr("wanted LEOs {{1: 5, 2: 5, 3: 2}}, got {leos}.", leos=leos))
    return _result(True, tr("broker 3 is alive and fetching, but nothing reaches it: its LEO "
                            "stays at 2 while the leader's grows. Notebook 02 shows what the "
                            "leader does about it."))


# -- hw (notebook 03) ------------------------------------------------------------------------------
def check_ack_delay(answer_ms) -> CheckResult:
    """Exercise: how long after the leader appends offset 6 does the acks=all producer get its
    answer, when broker 3's messages each take 40 ms longer (within 5 ms)?"""
    if (m := _missing(answer_ms)) is not None:
        return m
    took, s = slow_broker_3_commit()
    print(s.table(fields=("LEO", "HW")))
    if abs(answer_ms - took) <= 5:
        return _result(True, tr("{took} ms: the FetchResponse to broker 3 (+40 ms) and broker "
                                "3's next Fetch back (+40 ms) are both needed before the HW "
                                "passes offset 6: an acks=all write waits for the slowest ISR "
                                "member's round trip.", took=took))
    if abs(answer_ms - took / 2) <= 5:
        return _result(False, tr("that counts one trip. The leader learns that broker 3 holds "
                                 "offset 6 only from broker 3's *next* Fetch."))
    return _result(False, tr("the simulator answers after {took} ms. Which messages must cross "
                             "broker 3's slow link before the HW can move?", took=took))


def check_all_replicas_rule(rule) -> CheckResult:
    """Exercise: write seed 003's rule ("committed = on all RF replicas") as a
    ``maybe_increment_leader_hw`` and show what it does to acks=all writes once a follower is
    out of the ISR."""
    if (m := _missing(rule)) is not None:
        return m
    if not callable(rule):
        return _result(False, tr("pass your rule function, e.g. "
                                 "check_all_replicas_rule(all_replicas_hw)"))
    try:
        c, results, isr = all_replicas_run(rule)
    except TypeError as exc:
        return _result(False, tr("your rule must take maybe_increment_leader_hw's arguments: "
                                 "{exc}", exc=exc))
    first, later = results[:2], results[2:]
    print(tr("ISR at the end:"), isr, tr("  writes:"), [r.status if r.error is None else r.error
                                                        for r in results])
    if not all(r.acked for r in first):
        return _result(False, tr("with every replica healthy your rule must still commit: the "
                                 "first two writes were not acknowledged."))
    if isr != [1, 2]:
        return _result(False, tr("ISR at the end is {isr}: broker 3 should have left it.",
                                 isr=isr))
    if any(r.acked for r in later):
        return _result(False, tr("the writes after broker 3 left were acknowledged: your rule "
                                 "still lets the HW pass broker 3's LEO. Count *every* "
                                 "follower, in the ISR or not."))
    return _result(True, tr("with 'all RF replicas' the HW waits for broker 3 for ever: "
                            "acks=all writes time out although two in-sync copies exist. Kafka "
                            "commits on the ISR so that a dead follower costs time (the lag "
                            "timeout), not availability."))


def check_last_committed(leos: Mapping[int, int], isr: Sequence[int], answer) -> CheckResult:
    """Exercise: the offset of the last committed record, for these LEOs and this ISR (no
    follower outside the ISR caught up)."""
    if (m := _missing(answer)) is not None:
        return m
    hw = high_watermark(leos, isr)
    if answer == hw - 1:
        return _result(True, tr("offset {hw_1}: the HW is {hw} (the smallest LEO in the ISR) "
                                "and it is exclusive, so the last committed offset is one "
                                "below it.", hw_1=hw - 1, hw=hw))
    if answer == hw:
        return _result(False, tr("{hw} is the HW itself, the first offset *not* committed.",
                                 hw=hw))
    smallest = min(leos.values())
    if answer in (smallest, smallest - 1):
        return _result(False, tr("a replica outside the ISR does not hold the HW back."))
    return _result(False, tr("which replicas does maybe_increment_leader_hw look at, and is "
                             "the HW inclusive?"))


# -- isr (notebook 02) -----------------------------------------------------------------------------
def check_flapping(faults) -> CheckResult:
    """Exercise: make broker 3 leave the ISR and come back at least twice in 60 s, without
    stopping any broker (no crash, no restart, no pause longer than the lag time... the leader
    must do it)."""
    if (m := _missing(faults)) is not None:
        return m
    if not callable(faults):
        return _result(False, tr("pass a function that takes the cluster, e.g. def "
                                 "my_faults(c): ..."))
    c = flapping_run(faults)
    print(isr_changes(c, TOPIC))
    stopped = [b for b in c.brokers if not c.brokers[b].is_running]
    m = meter_counts(c)
    fenced = [r for r in c.trace.rows if r[1] in ("zk_session_expired", "broker_fenced")]
    if stopped:
        return _result(False, tr("broker(s) {stopped} are down at the end: keep every broker "
                                 "up.", stopped=stopped))
    if fenced:
        return _result(False, tr("the controller fenced a broker: the leader's lag check "
                                 "should do the work, not the controller's session timeout."))
    if m["IsrShrinksPerSec"] >= 2 and m["IsrExpandsPerSec"] >= 2:
        return _result(True, tr("{isrshrinkspersec} shrinks and {isrexpandspersec} expands by "
                                "the leader: each time broker 3 was not caught up for more "
                                "than 10 s it left, and it rejoined as soon as its LEO reached "
                                "the HW. This is what flapping looks like in IsrShrinksPerSec "
                                "/ IsrExpandsPerSec.",
                                isrshrinkspersec=m['IsrShrinksPerSec'],
                                isrexpandspersec=m['IsrExpandsPerSec']))
    return _result(False, tr("{isrshrinkspersec} shrink(s), {isrexpandspersec} expand(s): "
                             "broker 3 must stay behind for more than 10 s (up to 15 s until "
                             "the next isr-expiration run), then catch up, twice.",
                             isrshrinkspersec=m['IsrShrinksPerSec'],
                             isrexpandspersec=m['IsrExpandsPerSec']))
