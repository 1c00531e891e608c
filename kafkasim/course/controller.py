"""Notebook 07 (the controller and failover): what the controller does; ZooKeeper mode (Kafka
3.7: /controller, the controller epoch, 18 s sessions, LeaderAndIsr / UpdateMetadata) against
KRaft (the controller quorum, the metadata log, heartbeats and fencing); controller failover,
quorum loss, and clients that get NOT_LEADER_OR_FOLLOWER and refresh their metadata.

Concepts C03 and C11. The notebook builds every cluster in its own cells; this module only
formats what they did and grades the exercises (solutions: docs/instructor/07-controller-and-
failover.md).
"""

from __future__ import annotations

from functools import lru_cache

from kafkasim.control.kraft.periodic_tasks import maybe_fence_stale_broker_period_ms
from kafkasim.course.checks import CheckResult, _form, _missing, _result, _want_bool, _want_int
from kafkasim.course.common import Name, Text, error_line, notebook_version, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.course.narration import narrate
from kafkasim.settings.versions import version_at_least

__all__ = [
    "QUORUM_LOSS_OPERATIONS", "SEED", "check_detection_window", "check_forgetful_controller",
    "BOOTSTRAP_SERVERS", "check_quorum_loss", "check_quorum_tolerance", "client_requests",
    "control_events", "controller_properties", "directory_of",
    "acked_meanwhile", "acked_without_controller", "controller_back", "controller_failover",
    "controller_line",
    "detection_window", "error_line", "first_live_replica", "leader_moved", "metadata_records",
    "quorum_loss_outcomes", "quorum_tolerance", "raft_events", "retried_errors", "show_writes",
    "zk_controller_moved",
]

SEED = 3

#: trace kinds that show the control plane at work (both modes)
CONTROL_KINDS = ("broker_crash", "zk_session_expired", "controller_elected", "controller",
                 "broker_fenced", "controller_active", "become_leader", "become_follower")
#: control-plane RPCs (ZooKeeper mode) worth a row
CONTROL_RPCS = ("LeaderAndIsrRequest", "UpdateMetadataRequest")


def _detail(d) -> str:
    text = getattr(d, "text", None)
    return text if isinstance(text, str) else str(d)


def control_events(c, start_ms: int = 0, end_ms: int | None = None) -> Text:
    """The control-plane rows of ``c``'s trace in [start_ms, end_ms]: crashes, session expiry or
    fencing, elections, the controller's requests (ZooKeeper mode) and the brokers' reactions."""
    end = c.now if end_ms is None else end_ms
    rows = []
    for t, kind, node, topic, part, d in c.trace.rows:
        if t < start_ms or t > end:
            continue
        if kind == "send" and d[0] in CONTROL_RPCS:
            rows.append({"t(ms)": t, "event": Name("send"), "node": node,
                         "detail": f"{d[0]} -> broker {d[1]}"})
        elif kind in CONTROL_KINDS:
            where = f"{topic}-{part}: " if topic else ""
            rows.append({"t(ms)": t, "event": Name(kind), "node": node,   # the trace's own kind
                         "detail": where + _detail(d)})
    return text_table(rows)


def controller_line(c) -> Text:
    """The controller now: ZooKeeper mode's (the /controller znode's broker) or KRaft's active
    controller (-1: none)."""
    cid = c.controller_id()
    if getattr(c, "kraft", None) is None:
        return Text(tr("controller: {id}", id=cid))
    if cid < 0:
        return Text(tr("active controller: {id} (-1: none)", id=cid))
    return Text(tr("active controller: {id}", id=cid))


def leader_moved(c, moved_ms: int, crash_ms: int = 10000, topic: str = "orders") -> Text:
    """The partition's new leader and when it took over, counted from the crash."""
    return Text(tr("new leader {leader} at t={t} ms: {after} ms after the crash",
                   leader=c.leader(topic), t=moved_ms, after=moved_ms - crash_ms))


def zk_controller_moved(c, crash_ms: int) -> Text:
    """ZooKeeper mode: the new controller, when it won /controller, and the controller epoch."""
    return Text(tr("controller {id} at t={t} ms ({after} ms after the crash), "
                   "/controller_epoch = {epoch}", id=c.controller_id(), t=c.now,
                   after=c.now - crash_ms, epoch=c.zk.get("/controller_epoch").data))


def controller_failover(c, old: int, crash_ms: int) -> Text:
    """KRaft: the killed active controller and the one active now, with the time between."""
    return Text(tr("{old} killed at t={crash}; {new} active at t={t} ({after} ms later)",
                   old=old, crash=crash_ms, new=c.controller_id(), t=c.now,
                   after=c.now - crash_ms))


def acked_meanwhile(producer, acked_before: int) -> Text:
    """How many of the producer's records were acknowledged since it had ``acked_before``."""
    return Text(tr("records acked meanwhile: {n}", n=len(producer.acked()) - acked_before))


def acked_without_controller(c, producer, crash_ms: int) -> int:
    """How many of the producer's records were acknowledged between ``crash_ms`` (the active
    controller died) and the next ``controller_active`` row of ``c``'s trace (a new one took over;
    until now if none has)."""
    end = next((t for t, kind, *_rest in c.trace.rows
                if t >= crash_ms and kind == "controller_active"), c.now)
    return sum(1 for r in producer.acked() if crash_ms <= r.done_ms <= end)


def controller_back(c, back_ms: int, topic: str, partition: int = 0) -> Text:
    """KRaft after a quorum loss: when the quorum had an active controller again, and when the
    partition had its leader back."""
    return Text(tr("active controller {id} at t={back}; {tp} led by {leader} at t={t} "
                   "({after} ms later)", id=c.controller_id(), back=back_ms,
                   tp=f"{topic}-{partition}", leader=c.leader(topic, partition), t=c.now,
                   after=c.now - back_ms))


def _write(w) -> str:
    if w.status == "acked":
        return tr("{tp}: acked at offset {o}", tp=f"{w.topic}-{w.partition}", o=w.offset)
    return f"{w.topic}-{w.partition}: {narrate(w.status)}"


def show_writes(*writes) -> Text:
    """Each write (a ``send`` result): its partition and whether it was acknowledged."""
    return Text("   ".join(_write(w) for w in writes))


#: the Raft rows of the trace (KRaft's quorum: state changes, votes, the new active controller)
RAFT_KINDS = ("raft_transition", "raft_vote", "controller_active")


def raft_events(c, start_ms: int = 0) -> Text:
    """The metadata quorum's Raft rows since ``start_ms``: each controller's state changes and
    votes, then the new active controller."""
    rows = [{"t (ms)": t, "event": Name(kind), "node": node, "detail": _detail(d)}
            for t, kind, node, _topic, _part, d in c.trace.rows
            if t >= start_ms and kind in RAFT_KINDS and str(node) in map(str, c.kraft.nodes)]
    return text_table(rows)


def _cut(fields: str, width: int) -> str:
    """``fields`` ("a=1, b=[2,3], c=...") cut to ``width`` characters after a whole field."""
    head = fields[:width - 2]
    at = head.rfind(", ")
    return (head[:at + 1] if at > 0 else head) + " …"


#: controller.quorum.bootstrap.servers of a cluster formatted with --initial-controllers (3.9+,
#: KIP-853): its voter set lives in the metadata log (a VotersRecord), so it can change
BOOTSTRAP_SERVERS = "controller3000:9093,controller3001:9093,controller3002:9093"


def controller_properties(node_id: int) -> dict:
    """The new controller's own configuration, which ``kafka-metadata-quorum --command-config
    <controller.properties> add-controller`` reads (``c.kraft.add_controller``)."""
    return {"node.id": node_id, "process.roles": "controller",
            "controller.listener.names": "CONTROLLER",
            "listeners": f"CONTROLLER://controller{node_id}:9093"}


def directory_of(c, node_id: int) -> str:
    """A controller's directory id (``directory.id`` in its meta.properties; ``kafka-metadata-quorum
    describe --replication`` prints it), which ``remove-controller`` needs beside the node id."""
    from kafkasim.runtime.describe import directory_id

    return directory_id(node_id, c.engine.seed)


def metadata_records(c, last: int = 8, *, noop: bool = False, width: int = 110) -> Text:
    """The last ``last`` records of the active controller's ``__cluster_metadata`` log (NoOpRecord
    left out unless ``noop``), fields cut to ``width`` characters."""
    rows = []
    for offset, epoch, rec, committed, fields in c.kraft.metadata_log():
        if rec == "NoOpRecord" and not noop:
            continue
        f = fields if len(fields) <= width else _cut(fields, width)
        rows.append({"offset": offset, "epoch": epoch, "record": rec,
                     "committed": "yes" if committed else "no", "fields": f})
    return text_table(rows[-last:])


def client_requests(c, client: str, start_ms: int, end_ms: int) -> Text:
    """What ``client`` sent and received in [start_ms, end_ms] (Produce and Metadata only)."""
    rows = []
    for t, kind, node, _tp, _p, d in c.trace.rows:
        if t < start_ms or t > end_ms or kind not in ("send", "recv", "drop"):
            continue
        name = d[0]
        if not (name.startswith("Produce") or name.startswith("Metadata")):
            continue
        if kind == "send" and node == client:
            rows.append({"t(ms)": t, client: f"sends {name} to broker {d[1]}"})
        elif kind == "recv" and node == client:
            rows.append({"t(ms)": t, client: f"gets {name} from broker {d[1]}"})
        elif kind == "drop" and d[1] == client:
            rows.append({"t(ms)": t, client: f"{name} lost: {d[3]}"})
    return text_table(rows)


def retried_errors(producer) -> Text:
    """How many records were retried, by the error their first attempt got."""
    counts: dict[str, int] = {}
    results = list(producer.results.values())
    for r in results:
        for err in r.errors[:1]:
            counts[err] = counts.get(err, 0) + 1
    rows = [{N_("first error"): e, N_("records retried"): n} for e, n in sorted(counts.items())]
    pending = producer.pending()
    return Text(f"{text_table(rows)}\n" + tr("acked {acked}, failed {failed}, pending {pending}, "
                                             "of {n} records", acked=len(producer.acked()),
                                             failed=len(producer.failed()), pending=pending,
                                             n=len(results)))


# -- exercises ------------------------------------------------------------------------------------
def fence_check_period_ms(session_timeout_ms: int, kafka_version: str | None = None) -> int:
    """How often the KRaft controller looks for expired broker sessions: every
    ``max(1, broker.session.timeout.ms / 8)`` from Kafka 4.0 (the periodic maybeFenceStaleBroker
    task, KAFKA-17793); 0 before, when a deferred event fired at each session's own deadline.
    ``kafka_version``: the notebook's unless named."""
    if not version_at_least(notebook_version(kafka_version, "fence_check_period_ms"), "4.0"):
        return 0
    return maybe_fence_stale_broker_period_ms(session_timeout_ms)


def detection_window(mode: str, session_timeout_ms: int, heartbeat_interval_ms: int | None = None,
                     kafka_version: str | None = None) -> tuple[int, int]:
    """Earliest and latest time after a kill -9 at which the controller acts on it.

    ZooKeeper: the broker's ZooKeeper client pings every ``zookeeper.session.timeout.ms / 3``
    (ClientCnxn: readTimeout = 2/3 of the negotiated timeout, a ping after half of it) and the
    server expires the session ``zookeeper.session.timeout.ms`` after the last ping it heard.
    KRaft: a BrokerHeartbeat every ``broker.heartbeat.interval.ms``; the session ends
    ``broker.session.timeout.ms`` after the last one, and from Kafka 4.0 the broker is fenced at
    the controller's next periodic check, up to ``fence_check_period_ms`` later
    (``kafka_version``: the cluster's, the notebook's unless named)."""
    if mode == "zookeeper":
        return session_timeout_ms - session_timeout_ms // 3, session_timeout_ms
    if mode == "kraft":
        interval = 2000 if heartbeat_interval_ms is None else heartbeat_interval_ms
        if not 0 < interval <= session_timeout_ms:
            raise ValueError(f"broker.heartbeat.interval.ms ({interval}) must be > 0 and at "
                             f"most broker.session.timeout.ms ({session_timeout_ms})")
        period = fence_check_period_ms(session_timeout_ms, kafka_version)
        return session_timeout_ms - interval, session_timeout_ms + period
    raise ValueError(f"mode must be 'zookeeper' or 'kraft', got {mode!r}")


def check_detection_window(mode: str, session_timeout_ms: int, earliest_ms, latest_ms, *,
                           heartbeat_interval_ms: int | None = None,
                           kafka_version: str | None = None) -> CheckResult:
    """Predict the earliest and latest delay (ms after the crash) before the controller acts."""
    if (m := _missing(earliest_ms, latest_ms)) is not None:
        return m
    if (m := _form(_want_int(earliest_ms, "earliest_ms"),
                   _want_int(latest_ms, "latest_ms"))) is not None:
        return m
    lo, hi = detection_window(mode, session_timeout_ms, heartbeat_interval_ms, kafka_version)
    tol = 300
    if abs(earliest_ms - lo) <= tol and abs(latest_ms - hi) <= tol:
        why = (tr("the last ZooKeeper ping was at most timeout/3 before the crash")
               if mode == "zookeeper" else tr("the last heartbeat was at most one interval "
                                              "earlier"))
        text = tr("between {lo} and {hi} ms after the crash: {why}, and the session ends "
                  "{session_timeout_ms} ms after it.", lo=lo, hi=hi, why=why,
                  session_timeout_ms=session_timeout_ms)
        period = fence_check_period_ms(session_timeout_ms, kafka_version) \
            if mode == "kraft" else 0
        if period:
            text += " " + tr("The controller looks for ended sessions every {period} ms (the "
                             "session timeout / 8, Kafka 4.0+), so the fence can come up to "
                             "{period} ms later.", period=period)
        return _result(True, text)
    if abs(latest_ms - hi) > tol:
        return _result(False, tr("the latest case: the broker had just been heard from when it "
                                 "died. How long does the controller then wait?"))
    return _result(False, tr("the earliest case: the broker dies just before it would have "
                             "been heard from again. How long ago was it last heard from?"))


def quorum_tolerance(voters: int) -> int:
    """How many of ``voters`` controllers may be down while a majority can still elect a
    leader and commit records (Raft: a majority of the voters, QuorumState/LeaderState)."""
    if voters < 1:
        raise ValueError(f"a quorum needs at least one voter, got {voters}")
    return (voters - 1) // 2


def check_quorum_tolerance(voters: int, answer) -> CheckResult:
    """How many controllers of ``voters`` can fail with metadata changes still possible?"""
    if (m := _missing(answer)) is not None:
        return m
    if (m := _form(_want_int(answer))) is not None:
        return m
    right = quorum_tolerance(voters)
    need = voters // 2 + 1
    if answer == right:
        return _result(True, tr("{right}: the quorum needs a majority, {need} of {voters} "
                                "voters, to elect a leader and to commit a record.",
                                right=right, need=need, voters=voters))
    if voters % 2 == 0 and answer == voters // 2:
        return _result(False, tr("{voters} voters need {need} for a majority, so only {right} may "
                                 "be down: an even number adds a vote to win, not a failure to "
                                 "survive ({fewer} voters tolerate as many).", voters=voters,
                                 need=need, right=right, fewer=voters - 1))
    return _result(False, tr("count the majority of {voters} voters first: a leader needs that "
                             "many votes and every commit that many copies.", voters=voters))


QUORUM_LOSS_OPERATIONS = (
    "a consumer reads from a partition whose leader is alive",
    "an acks=1 write to a partition whose leader is alive",
    "a follower that stopped fetching is removed from the ISR",
    "a broker restarted after a crash serves its partitions again",
)


def quorum_loss_outcomes(seed: int = 5, kafka_version: str | None = None) -> dict[str, bool]:
    """Run it on Kafka ``kafka_version`` (the notebook's unless named): 3 controllers, 2 crashed
    (the active one and a standby); which operations still succeed? Topic events: events-0 led
    by 2, events-1 led by 1, replication factor 3."""
    return _quorum_loss_outcomes(seed, notebook_version(kafka_version, "quorum_loss_outcomes"))


@lru_cache(maxsize=2)
def _quorum_loss_outcomes(seed: int, kafka_version: str) -> dict[str, bool]:
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(brokers=3, seed=seed, kafka_version=kafka_version)
    c.create_topic("events", 2, 3, assignment=[[2, 1, 3], [1, 3, 2]])
    p_all = c.producer("p-all", acks="all")
    p_one = c.producer("p-one", acks="1", retries=3)
    p_all.send("events", "before", partition=1)
    p_all.flush()
    c.run(1000)
    active = c.controller_id()
    c.crash(active)
    c.crash(next(n for n in sorted(c.kraft.nodes) if n != active))
    c.run(5000)
    reader = c.consumer(group="g", name="reader", auto_offset_reset="earliest")
    reader.assign("events", [1])
    read = [r.value for r in reader.poll()] == ["before"]
    c.cut(1, 3)                                   # follower 3 of events-1 stops fetching
    w1 = p_one.send("events", "while frozen", partition=1)
    c.run(40000)                                  # > replica.lag.time.max.ms (30 s)
    removed = 3 not in c.isr("events", 1)
    c.heal()
    c.crash(2)
    c.run(2000)
    c.start(2)
    c.run(20000)
    w0 = p_one.send("events", "to the restarted leader", partition=0)
    c.run(5000)
    return {QUORUM_LOSS_OPERATIONS[0]: read, QUORUM_LOSS_OPERATIONS[1]: w1.acked,
            QUORUM_LOSS_OPERATIONS[2]: removed, QUORUM_LOSS_OPERATIONS[3]: w0.acked}


def check_quorum_loss(answer: dict, *, kafka_version: str | None = None) -> CheckResult:
    """``{operation: True/False}``: which still work with 2 of 3 controllers down (on
    ``kafka_version``: the notebook's unless named)?"""
    if not isinstance(answer, dict):
        return _result(False, tr("answer with the dict of the exercise, True or False per "
                                 "operation."))
    if (m := _missing(*[answer.get(k) for k in QUORUM_LOSS_OPERATIONS])) is not None:
        return m
    if (m := _form(*(_want_bool(answer[k], f"answer[{k!r}]")
                     for k in QUORUM_LOSS_OPERATIONS))) is not None:
        return m
    right = quorum_loss_outcomes(kafka_version=kafka_version)
    wrong = [k for k in QUORUM_LOSS_OPERATIONS if bool(answer[k]) != right[k]]
    if not wrong:
        return _result(True, tr("leaders serve produce and fetch without a controller; an ISR "
                                "change (AlterPartition) and a broker's return (registration, "
                                "unfencing) need a committed record, so a majority of the "
                                "quorum."))
    return _result(False, tr("{len_wrong} wrong, e.g. {v_0!r}. Ask of each: does it need a new "
                             "record in the metadata log, or only a leader that is alive?",
                             len_wrong=len(wrong), v_0=wrong[0]))


# -- the checker exercise: a controller that ignores the ISR ---------------------------------------
#: The forgetful-controller exercise runs ZooKeeper mode's controller (its
#: offline_partition_leader_election is the rule swapped): Kafka 3.7, as notebook 07 says.
FORGETFUL_CONTROLLER_VERSION = "3.7"


def first_live_replica(assignment, isr, live, unclean_enabled):
    """A controller that forgets the ISR: the first live replica in assignment order."""
    live = set(live)
    for r in assignment:
        if r in live:
            return r, False        # it even believes the election was clean
    return None, False


def _run_faults(faults, swap: bool) -> list[str]:
    from kafkasim.observe.checks import attach
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(brokers=3, seed=SEED, kafka_version=FORGETFUL_CONTROLLER_VERSION)
    c.create_topic("orders", 1, 3, assignment=[[1, 2, 3]], config={"min.insync.replicas": 1})
    if swap:
        c.swap_rule("offline_partition_leader_election", first_live_replica)
    checker = attach(c)
    faults(c)
    c.run(1000)
    return [f"{v.invariant} at t={v.time_ms} ms: {v.message}" for v in checker.violations]


def check_forgetful_controller(faults) -> CheckResult:
    """``faults(c)`` drives a Kafka 3.7 cluster (topic orders, replicas [1, 2, 3], min ISR 1).
    It must make the checkers flag the forgetful controller's election, and leave Kafka's
    election clean."""
    if (m := _missing(faults)) is not None:
        return m
    if not callable(faults):
        return _result(False, tr("pass a function faults(c) that acts on the cluster c."))
    with_bug = _run_faults(faults, swap=True)
    with_kafka = _run_faults(faults, swap=False)
    if not with_bug:
        return _result(False, tr("the checkers found nothing with the forgetful controller. It "
                                 "only differs from Kafka when the first live replica is NOT "
                                 "in the ISR: leave an out-of-sync replica alive, with "
                                 "acknowledged writes it lacks, and kill the leader."))
    if with_kafka:
        return _result(False, tr("your faults break Kafka's own election too ({violation}); find "
                                 "a sequence where only the forgetful controller fails.",
                                 violation=with_kafka[0]))
    return _result(True, tr("the forgetful controller broke it, Kafka's did not:\n  {violation}",
                            violation=with_bug[0]))
