"""Notebook 11 (racks and replica placement, concept C05): formatting and grading helpers.

The placement rules graded here are the simulator's own, which follow Kafka:

- ZooKeeper era / admin tools: ``kafka.admin.AdminUtils.assignReplicasToBrokers`` (rack-aware
  since 0.10.0, KIP-36) as ``kafkasim.control.placement.assign_replicas_to_brokers``;
- KRaft (today's default): ``org.apache.kafka.metadata.placement.StripedReplicaPlacer``
  (KIP-631, unchanged in substance since 3.0.0) as
  ``kafkasim.control.kraft.striped_placer.StripedReplicaPlacer``.

Availability after a rack failure is read from the cluster's partition state (leader and ISR),
as ``kafka-topics --describe --unavailable-partitions`` / ``--under-min-isr-partitions`` do.
"""

from __future__ import annotations

from kafkasim.control.kraft.striped_placer import StripedReplicaPlacer, UsableBroker
from kafkasim.control.placement import assign_replicas_to_brokers, rack_alternated_broker_list
from kafkasim.course.checks import CheckResult, _form, _result, _want_int, _want_ints, unanswered
from kafkasim.course.common import Text, notebook_version, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.javautil import JavaRandom

LAYOUTS = {
    "3 racks x 2": {1: "a", 2: "a", 3: "b", 4: "b", 5: "c", 6: "c"},
    "2 racks x 3": {1: "a", 2: "a", 3: "a", 4: "b", 5: "b", 6: "b"},
    "uneven 4+1+1": {1: "a", 2: "a", 3: "a", 4: "a", 5: "b", 6: "c"},
}
#: the names the explorer's view prints for the layouts and placers (tr() of the key)
_SHOWN = (N_("3 racks x 2"), N_("2 racks x 3"), N_("uneven 4+1+1"), N_("KRaft striped"),
          N_("AdminUtils (ZooKeeper era)"))


def parse_racks(text: str) -> dict[int, str]:
    """``"1:a 2:a 3:b"`` -> ``{1: "a", 2: "a", 3: "b"}`` (for the explorer)."""
    return {int(b): r for b, r in (item.split(":") for item in text.split())}


def zk_assignment(racks: dict[int, str], partitions: int, rf: int) -> dict[int, list[int]]:
    """AdminUtils.assignReplicasToBrokers with startIndex 0 and shift 0 (``fixedStartIndex=0``,
    the values its unit tests use; real Kafka draws both from an unseeded Random)."""
    return assign_replicas_to_brokers(sorted(racks), partitions, rf, racks=racks,
                                      fixed_start_index=0)


def kraft_assignment(racks: dict[int, str | None], partitions: int, rf: int,
                     seed: int = 0) -> dict[int, list[int]]:
    """StripedReplicaPlacer over unfenced brokers, with a seeded java.util.Random."""
    usable = [UsableBroker(b, racks[b]) for b in sorted(racks)]
    placed = StripedReplicaPlacer(JavaRandom(seed)).place(0, partitions, rf, usable)
    return dict(enumerate(placed))


def spread(assignment: dict[int, list[int]], racks: dict[int, str]) -> Text:
    """One row per partition: replicas, their racks, and how many distinct racks hold a copy."""
    return text_table([{"partition": p, "replicas": r,
                        "racks": "".join(racks.get(b) or "-" for b in r),
                        N_("distinct racks"): len({racks.get(b) for b in r})}
                       for p, r in sorted(assignment.items())])


def rack_status(cluster: Cluster, topic: str) -> Text:
    """Each partition after a failure: replicas, leader, ISR and its availability verdict."""
    rows = []
    for p, verdict in availability(cluster, topic).items():
        st = cluster.inspect.partition_state(topic, p)
        leader = st["leader"] if st["leader"] not in (None, -1) else "none"
        rows.append({"partition": p, "replicas": st["replicas"], "leader": leader,
                     "isr": st["isr"], "verdict": verdict})
    return text_table(rows)


def availability(cluster: Cluster, topic: str) -> dict[int, str]:
    """Partition -> "offline" (no leader), "below min ISR" (acks=all writes fail with
    NotEnoughReplicasException) or "ok"."""
    min_isr = int(cluster.topics.configs[topic]["min.insync.replicas"])
    out = {}
    for p in sorted(cluster.assignment(topic)):
        st = cluster.inspect.partition_state(topic, p)
        if st["leader"] in (None, -1):
            out[p] = "offline"
        else:
            out[p] = "below min ISR" if len(st["isr"]) < min_isr else "ok"
    return out


def count_verdicts(cluster: Cluster, topic: str) -> dict[str, int]:
    """How many partitions are offline, below min ISR, ok."""
    verdicts = list(availability(cluster, topic).values())
    return {v: verdicts.count(v) for v in ("offline", "below min ISR", "ok")}


def placement_view(layout: str = "3 racks x 2", placer: str = "KRaft striped",
                   rf: int = 3, partitions: int = 6) -> Text:
    """Explorer: one layout, one placer; the replicas and racks of each partition."""
    racks = LAYOUTS[layout]
    if placer == "KRaft striped":
        assign = kraft_assignment(racks, partitions, rf)
    else:
        assign = zk_assignment(racks, partitions, rf)
    return Text(f"{tr(placer)}, {tr(layout)}, RF {rf}\n" + spread(assign, racks))


def checker_verdict(suite) -> str:
    """The invariants a ``kafkasim.observe.checks.attach`` suite found violated, or that none
    was."""
    bad = sorted({v.invariant for v in suite.violations})
    if bad:
        return tr("VIOLATED {names}", names=", ".join(bad))
    return tr("no violation, no acknowledged write lost")


def checkers_line(suite) -> Text:
    """"checkers: " and ``checker_verdict`` of the suite."""
    return Text(tr("checkers: {verdict}", verdict=checker_verdict(suite)))


# -- exercises ----------------------------------------------------------------------------------
def _missing(answer, what: str) -> CheckResult | None:
    """"Not answered yet" for an answer left as None or ``...``, naming what replaces it (the
    exercise cells hold ``answer=...``)."""
    if answer is None or answer is Ellipsis:
        return unanswered(what)
    return None


def _a_list() -> str:
    return tr("a list of whole numbers in order, such as [1, 2, 3]")


def check_rack_alternated(racks: dict[int, str], answer=None) -> CheckResult:
    """The rack-alternated broker list AdminUtils builds first (fact sheet §9a)."""
    if (m := _missing(answer, _a_list())) is not None:
        return m
    if (m := _form(_want_ints(answer, ordered=True))) is not None:
        return m
    want = rack_alternated_broker_list(sorted(racks), racks)
    if list(answer) == want:
        return _result(True, tr("the rack-alternated list is {want}.", want=want))
    return _result(False, tr("group the brokers by rack (each group sorted by id), sort the "
                             "rack names, then take one broker from each rack in turn."))


def check_zk_replicas(racks: dict[int, str], partition: int, rf: int,
                      answer=None) -> CheckResult:
    """The replicas AdminUtils gives ``partition`` (startIndex 0, shift 0), leader first."""
    if (m := _missing(answer, _a_list())) is not None:
        return m
    if (m := _form(_want_ints(answer, ordered=True))) is not None:
        return m
    want = zk_assignment(racks, partition + 1, rf)[partition]
    if list(answer) == want:
        return _result(True, tr("partition {partition} gets {want}.",
                                partition=partition, want=want))
    if sorted(answer) == sorted(want):
        return _result(False, tr("right brokers, wrong order: the leader is list[p mod n], "
                                 "then walk on from there."))
    return _result(False, tr("start from the rack-alternated list: the leader is list[p mod "
                             "n]; each follower is the next broker whose rack holds no replica "
                             "yet."))


def rack_failure_verdicts(racks: dict[int, str], failed_rack: str, rf: int, min_isr: int,
                          partitions: int, seed: int, kafka_version: str | None = None
                          ) -> dict[str, int]:
    """Build a KRaft cluster with these racks, create the topic, crash every broker of
    ``failed_rack``, let the controller react for 30 s, count the verdicts."""
    c = Cluster(len(racks), racks=racks, seed=seed,
                kafka_version=notebook_version(kafka_version, "rack_failure_verdicts"))
    c.create_topic("t", partitions=partitions, replication_factor=rf,
                   config={"min.insync.replicas": min_isr})
    for b in sorted(b for b, r in racks.items() if r == failed_rack):
        c.crash(b)
    c.run(30_000)
    return count_verdicts(c, "t")


def check_rack_failure(racks: dict[int, str], failed_rack: str, rf: int, min_isr: int,
                       partitions: int, answer=None, seed: int = 11, *,
                       kafka_version: str | None = None) -> CheckResult:
    """How many partitions end up below min ISR when a whole rack fails (run and counted)."""
    if (m := _missing(answer, tr("a whole number such as 3"))) is not None:
        return m
    if (m := _form(_want_int(answer))) is not None:
        return m
    got = rack_failure_verdicts(racks, failed_rack, rf, min_isr, partitions, seed, kafka_version)
    want = got["below min ISR"] + got["offline"]
    if int(answer) == want:
        return _result(True, tr("{want} of {partitions} partitions lose acks=all writes (run: "
                                "{got}).", want=want, partitions=partitions, got=got))
    return _result(False, tr("count, per partition, the replicas left outside the failed rack; "
                             "with fewer than min.insync.replicas left, acks=all writes fail."))
