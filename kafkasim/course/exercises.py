"""The graded exercises of notebooks 01-03 (issue 14): each ``check_...`` runs the learner's
answer (a number, a fault sequence, a rule) against the simulator and prints PASS or what is off.

Kept apart from the notebooks' table modules (basics, isr, hw) because ``checks`` imports those.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafkasim.course.basics import fetcher_thread_count, lagging_follower_run
from kafkasim.course.checks import CheckResult, _form, _missing, _result, _want_bool, _want_int
from kafkasim.course.common import isr_changes, meter_counts, notebook_version
from kafkasim.course.hw import (
    HW_TOPIC,
    all_replicas_run,
    high_watermark,
    slow_broker_3_commit,
    unlucky_failover,
)
from kafkasim.course.i18n import tr
from kafkasim.course.isr import TOPIC, flapping_run
from kafkasim.runtime.cluster import Cluster

__all__ = ["check_ack_delay", "check_all_replicas_rule", "check_fetcher_total", "check_flapping",
           "check_idle_fetches", "check_lagging_follower", "check_last_committed",
           "check_unlucky_failover"]


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


def check_lagging_follower(faults, *, kafka_version: str | None = None) -> CheckResult:
    """Exercise: ``faults(c)`` must leave broker 3 alive at LEO 2 while the leader (broker 1)
    and broker 2 reach LEO 5 (on ``kafka_version``: the notebook's unless named)."""
    if (m := _missing(faults)) is not None:
        return m
    if not callable(faults):
        return _result(False, tr("pass a function that takes the cluster, e.g. def "
                                 "my_faults(c): ..."))
    c = lagging_follower_run(faults, kafka_version=kafka_version)
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


def idle_fetch_count(replica_fetch_wait_max_ms: int, idle_ms: int, kafka_version: str,
                     follower: int = 2, leader: int = 1) -> int:
    """FetchRequests ``follower`` sends ``leader`` while nobody writes for ``idle_ms``, on the
    notes' topic (3 brokers, 3 partitions, RF 3) with ``replica.fetch.wait.max.ms`` set."""
    from kafkasim.course.basics import SEED
    from kafkasim.course.basics import TOPIC as P3R3

    c = Cluster(brokers=3, seed=SEED, kafka_version=kafka_version,
                config={"replica.fetch.wait.max.ms": replica_fetch_wait_max_ms})
    c.create_topic(P3R3, partitions=3, replication_factor=3)
    c.run(2000)
    start = c.now
    c.run(idle_ms)
    return sum(1 for t, kind, node, _tp, _p, d in c.trace.rows if t >= start and kind == "send"
               and node == follower and d[0] == "FetchRequest" and d[1] == leader)


def check_idle_fetches(answer, replica_fetch_wait_max_ms: int = 200, idle_ms: int = 10000, *,
                       kafka_version: str | None = None) -> CheckResult:
    """Exercise: with ``replica.fetch.wait.max.ms`` set and nobody writing for ``idle_ms``, how
    many FetchRequests does broker 2 send broker 1 (within 3 %)?"""
    version = notebook_version(kafka_version, "check_idle_fetches")
    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_int(answer))) is not None:
        return m
    right = idle_fetch_count(replica_fetch_wait_max_ms, idle_ms, version)
    if abs(answer - right) <= max(1, right * 0.03):
        return _result(True, tr("about {right}: with nothing to copy the leader parks each Fetch "
                                "for replica.fetch.wait.max.ms ({wait} ms) and answers it "
                                "empty, and the follower asks again at once: one round trip "
                                "per {wait} ms, records or not. That is why every pair of "
                                "brokers exchanged about as many FetchRequests in section 2, "
                                "and why fetches flow on a partition nobody writes to: the "
                                "next Fetch is how the follower learns of new records and how "
                                "the leader learns the follower's LEO.", right=right,
                                wait=replica_fetch_wait_max_ms))
    if answer == 0:
        return _result(False, tr("followers never stop asking: a follower does not know there "
                                 "is nothing new until it asks."),
                       answer=tr("about {right}.", right=right))
    if abs(answer - 2 * right) <= max(2, right * 0.06):
        return _result(False, tr("broker 2 follows two partitions, but only one is led by "
                                 "broker 1; and one Fetch carries all the partitions of its "
                                 "source broker anyway."), answer=tr("about {right}.", right=right))
    if answer > 2 * right:
        return _result(False, tr("too many: an empty Fetch is not answered at once. What does "
                                 "the leader do with a Fetch when it has nothing new?"),
                       answer=tr("about {right}.", right=right))
    return _result(False, tr("too few: how long does the leader hold an empty Fetch here (the "
                             "setting is not the default 500 ms), and what does the follower "
                             "do when the answer comes?"), answer=tr("about {right}.", right=right))


# -- hw (notebook 03) ------------------------------------------------------------------------------
def check_ack_delay(answer_ms, *, kafka_version: str | None = None) -> CheckResult:
    """Exercise: how long after the leader appends offset 6 does the acks=all producer get its
    answer, when broker 3's messages each take 40 ms longer (within 5 ms)?"""
    if (m := _missing(answer_ms)) is not None:
        return m
    took, s = slow_broker_3_commit(kafka_version=kafka_version)
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


def check_all_replicas_rule(rule, *, kafka_version: str | None = None) -> CheckResult:
    """Exercise: write seed 003's rule ("committed = on all RF replicas") as a
    ``maybe_increment_leader_hw`` and show what it does to acks=all writes once a follower is
    out of the ISR."""
    if (m := _missing(rule)) is not None:
        return m
    if not callable(rule):
        return _result(False, tr("pass your rule function, e.g. "
                                 "check_all_replicas_rule(all_replicas_hw)"))
    try:
        c, results, isr = all_replicas_run(rule, kafka_version=kafka_version)
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


def check_unlucky_failover(new_leader, hw, m7_readable, *,
                           kafka_version: str | None = None) -> CheckResult:
    """Exercise: section 7 again, but offset 7 reached broker 3 and not broker 2 (leader 1 holds
    0-9, broker 2 0-6, broker 3 0-7, HW 7). Broker 1 crashes. The new leader, its HW once broker
    3 has fetched, and whether a consumer can still read m7 (``unlucky_failover``)."""
    version = notebook_version(kafka_version, "check_unlucky_failover")
    if (m := _missing(new_leader, hw, m7_readable)) is not None:
        return m
    if (m := _form(_want_int(new_leader, "new_leader"), _want_int(hw, "hw"),
                   _want_bool(m7_readable, "m7_readable"))) is not None:
        return m
    c = unlucky_failover(kafka_version=version)
    leader = c.leader(HW_TOPIC)
    right_hw = c.high_watermark(HW_TOPIC)
    readable = any(v == "m7" for off, _e, v in c.log_records(leader, HW_TOPIC) if off < right_hw)
    reveal = tr("new_leader={leader}, hw={hw}, m7_readable={readable}.", leader=leader,
                hw=right_hw, readable=readable)
    if new_leader != leader:
        return _result(False, tr("the controller does not look at the logs: it takes the first "
                                 "live ISR member in assignment order."), answer=reveal)
    if hw != right_hw:
        hint = (tr("a HW above the new leader's LEO would count records the leader does not "
                   "have.") if hw > right_hw else
                tr("the HW never goes back below what was committed (offsets 0-6)."))
        return _result(False, hint, answer=reveal)
    if m7_readable != readable:
        return _result(False, tr("m7 was never committed, and the new leader does not have it. "
                                 "What does broker 3 do with a record its new leader lacks?"),
                       answer=reveal)
    return _result(True, tr("broker {leader} leads with offsets 0-6 (LEO 7). Broker 3 learns from "
                            "it that epoch 0 ends at 7 (since 2.8 in the answer to its Fetch, "
                            "which names epoch 0; before, by OffsetsForLeaderEpoch), truncates "
                            "offset 7 and fetches from there: HW {hw}, and m7 is gone. Section 7 "
                            "kept m7 only because the broker that happened to win had it; the "
                            "committed records 0-6 survive whoever wins. The HW only counts what "
                            "every ISR member has, so raising it after an election (section 7's 8)"
                            " never makes a record readable that the new ISR lacks.",
                            leader=leader, hw=right_hw))


# -- isr (notebook 02) -----------------------------------------------------------------------------
def check_flapping(faults, *, kafka_version: str | None = None) -> CheckResult:
    """Exercise: make broker 3 leave the ISR and come back at least twice in 60 s, without
    stopping any broker (no crash, no restart, no pause longer than the lag time... the leader
    must do it), on ``kafka_version`` (the notebook's KAFKA_VERSION unless named)."""
    version = notebook_version(kafka_version, "check_flapping")
    if (m := _missing(faults)) is not None:
        return m
    if not callable(faults):
        return _result(False, tr("pass a function that takes the cluster, e.g. def "
                                 "my_faults(c): ..."))
    c = flapping_run(faults, kafka_version=version)
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
