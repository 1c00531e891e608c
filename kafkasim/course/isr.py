"""Notebook 02 (in-sync replicas): AR / ISR / OSR, the two lag rules, shrink and expand, who
records ISR changes, what makes followers fall behind, and tuning ``replica.lag.time.max.ms``.

Concepts C06, C07, C08, C09, C10 and C22.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkasim.core.events import PartitionStateChange
from kafkasim.course.common import (  # noqa: F401  (show_source: for the notebook)
    Text,
    isr_changes,
    leo_hw,
    meter_counts,
    notebook_version,
    replica_sets,
    replica_state,
    settle,
    show_source,
    text_table,
)
from kafkasim.course.i18n import N_, tr
from kafkasim.course.narration import narrate
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

SEED = 7
TOPIC = "isr-demo"


def _cluster(brokers=3, *, version: str, lag_ms: int = 10000, seed: int = SEED,
             extra: dict | None = None, assignment=None, topic: str = TOPIC) -> Cluster:
    cfg = {"replica.lag.time.max.ms": lag_ms}
    cfg.update(extra or {})
    c = Cluster(brokers=brokers, seed=seed, kafka_version=version, config=cfg)
    ids_ = list(c.brokers)
    c.create_topic(topic, 1, len(ids_), assignment=assignment or [ids_])
    return c


def _produce(c: Cluster, n: int, topic: str = TOPIC, prefix: str = "m", acks: str = "1") -> None:
    name = f"p-acks{acks}"
    prod = c.clients.get(name) or c.producer(name, acks=acks)
    for i in range(n):
        prod.send(topic, f"{prefix}{i}", partition=0)
    prod.flush()


# -- C06: AR, ISR, OSR ---------------------------------------------------------------------------
def osr_example(seed: int = SEED, *,
                kafka_version: str | None = None) -> tuple[Cluster, Text, Text]:
    """Four replicas of Kafka ``kafka_version`` (the notebook's unless named); broker 4 stops
    receiving data. Returns the cluster and its state before and after the leader drops broker
    4 from the ISR."""
    c = _cluster(4, seed=seed, version=notebook_version(kafka_version, "osr_example"))
    _produce(c, 5, prefix="a")
    settle(c)
    c.hold(type="FetchResponse", src=1, dst=4)     # broker 4's fetches get no answer
    _produce(c, 5, prefix="b")
    c.run(200)
    before = Text(f"t={c.now} ms\n{replica_state(c, TOPIC)}\n{sets_line(c)}")
    c.run_until(lambda cl: 4 not in cl.isr(TOPIC), 20000)
    c.run(100)
    after = Text(f"t={c.now} ms\n{replica_state(c, TOPIC)}\n{sets_line(c)}")
    return c, before, after


def sets_line(c: Cluster, topic: str = TOPIC, partition: int = 0) -> Text:
    s = replica_sets(c, topic, partition)
    return Text(f"AR = {s['AR']}   ISR = {s['ISR']}   OSR = {s['OSR']}")


# -- C07: the 0.8 message-count rule --------------------------------------------------------------
def message_rule_line(c: Cluster, max_messages: int, topic: str = TOPIC) -> Text:
    """How far broker 103 is behind leader 101, and whether it is still in the ISR."""
    leo = leo_hw(c, topic)
    lag = leo[101][0] - leo[103][0]
    verdict = tr("out of the ISR") if 103 not in c.isr(topic) else tr("still in the ISR")
    return Text(tr("replica.lag.max.messages={max_messages}: broker 103 is {lag} message(s) "
                   "behind the leader -> {verdict}   (ISR {isr})", max_messages=max_messages,
                   lag=lag, verdict=verdict, isr=c.isr(topic)))


LAG_RULE_SCENARIOS = (
    ("seed-lag-messages-steady", "0.8.2: replica.lag.max.messages=5", N_("steady 3 msg/s")),
    ("seed-lag-messages-burst", "0.8.2: replica.lag.max.messages=5", N_("burst 10 msg/s")),
    ("seed-lag-time-burst", "3.7: replica.lag.time.max.ms=10000", N_("burst 10 msg/s")),
)   # the load labels are narrated where a table shows them (common.text_table)


# -- C08: the time rule, as the leader sees it ----------------------------------------------------
def follower_view(c: Cluster, topic: str = TOPIC, partition: int = 0) -> Text:
    """What the leader knows about each follower (kafka.cluster.Replica state), and the verdict
    of ``isFollowerOutOfSync`` right now."""
    leader = c.leader(topic, partition)
    part = c.brokers[leader].replica_manager.partitions[(topic, partition)]
    lag_ms = c.brokers[leader].config["replica.lag.time.max.ms"]
    rows = []
    for b, st in sorted(part.remote.items()):
        since = c.now - st.last_caught_up_time_ms
        rows.append({"follower": b, "LEO (leader's view)": st.log_end_offset,
                     "last fetch (ms ago)": c.now - st.last_fetch_time_ms,
                     "last caught up (ms ago)": since if since < 10**9 else "never",
                     "out of sync?": part.is_follower_out_of_sync(c.brokers[leader], b)})
    return Text(tr("t={now} ms, leader {leader} LEO {leo}, replica.lag.time.max.ms={lag_ms}",
                   now=c.now, leader=leader, leo=part.log.log_end_offset, lag_ms=lag_ms)
                + f"\n{text_table(rows)}")


# -- C22: causes ----------------------------------------------------------------------------------
def slow_disk(c: Cluster, broker: int, write_ms: int = 300, records_per_write: int = 10) -> None:
    """Model a slow disk on ``broker``: a write of up to ``records_per_write`` fetched records
    takes up to ``write_ms`` (so at most ~records_per_write/write_ms throughput)."""
    c.alter_config("brokers", broker, {"replica.fetch.max.bytes": 100 * records_per_write})
    c.slow(broker, disk_ms=write_ms / records_per_write)


def _latency_spikes(c: Cluster, broker: int, start: int, spikes=((0, 20000), (30000, 45000)),
                    extra_ms: int = 6000) -> None:
    for s, e in spikes:
        c.at(start + s, _SlowNet(broker, extra_ms))
        c.at(start + e, _SlowNet(broker, 0))


@dataclass(frozen=True)
class _SlowNet:
    broker: int
    ms: int

    def __call__(self, c: Cluster) -> None:
        c.slow(self.broker, network_ms=self.ms)


@dataclass(frozen=True)
class _Pause:
    broker: int
    ms: int

    def __call__(self, c: Cluster) -> None:
        c.pause(self.broker, self.ms)


CAUSES = {
    "network latency": "broker 3's links get 6 s slower twice (for 20 s, then for 15 s)",
    "slow disk": "broker 3 writes fetched data at most 10 records per 300 ms (~33/s)",
    "broker overload": "broker 3's request threads are busy 450 ms of every 500 ms",
    "GC pause": "broker 3 stops the world once, for 12 s",
}

# The causes as the lag plot titles them (translated where drawn).
CAUSE_TITLES = (N_("network latency"), N_("slow disk"), N_("broker overload"), N_("GC pause"))


@dataclass
class CauseRun:
    cause: str
    cluster: Cluster
    times: list[int] = field(default_factory=list)
    behind: list[int] = field(default_factory=list)     # leader LEO - broker 3 LEO
    latencies: list[int] = field(default_factory=list)  # acks=all produce latencies (ms)

    def summary(self) -> dict:
        m = meter_counts(self.cluster)
        lat = sorted(self.latencies)
        out_ms = _time_out_of_isr(self.cluster, 3)
        return {"cause": self.cause, "ISR shrinks": m["IsrShrinksPerSec"],
                "ISR expands": m["IsrExpandsPerSec"], "s out of ISR": round(out_ms / 1000, 1),
                "max records behind": max(self.behind or [0]),
                "p99 acks=all latency (ms)": lat[int(len(lat) * 0.99)] if lat else None}


def _isr_after(kind: str, detail) -> tuple | None:
    """The ISR a trace row leaves the partition with, or None if the row does not set one: a
    leader's committed change (``isr``), or a controller write of the partition's state
    (``PartitionStateChange``: a KRaft fencing's PartitionChangeRecord, ZooKeeper mode's
    DeadRemovedFromIsr, an election, a controlled shutdown), which no leader shrink follows."""
    if kind == "isr":
        return tuple(detail[1])
    if kind == "controller" and isinstance(detail, PartitionStateChange):
        return detail.partition_state()[2]
    return None


def _time_out_of_isr(c: Cluster, broker: int, topic: str = TOPIC, partition: int = 0) -> int:
    """Milliseconds ``broker`` spent outside the ISR of ``topic-partition``, whoever removed it
    (the leader's shrink or the controller's)."""
    out_since = None
    total = 0
    for t, kind, _node, tp, p, detail in c.trace.rows:
        if tp != topic or p != partition or (isr := _isr_after(kind, detail)) is None:
            continue
        if broker not in isr and out_since is None:
            out_since = t
        elif broker in isr and out_since is not None:
            total += t - out_since
            out_since = None
    if out_since is not None:
        total += c.now - out_since
    return total


def troubleshoot(cause: str, *, lag_ms: int = 10000, rate: int = 50, duration_ms: int = 60000,
                 seed: int = SEED, sample_ms: int = 100,
                 kafka_version: str | None = None) -> CauseRun:
    """Run 60 s of acks=all traffic at ``rate`` msg/s while ``cause`` hits broker 3 from t=5 s,
    on Kafka ``kafka_version`` (the notebook's unless named)."""
    if cause not in CAUSES:
        raise ValueError(f"unknown cause {cause!r}; choose from {', '.join(CAUSES)}")
    c = _cluster(lag_ms=lag_ms, seed=seed, version=notebook_version(kafka_version, "troubleshoot"))
    w = RateWorkload(c, c.producer("load", acks="all"), TOPIC, rate=rate,
                     duration_ms=duration_ms, partition=0)
    start = 5000
    if cause == "network latency":
        _latency_spikes(c, 3, start)
    elif cause == "slow disk":
        c.at(start, lambda cl: slow_disk(cl, 3))
    elif cause == "broker overload":
        for k in range(start, duration_ms, 500):
            c.at(k, _Pause(3, 450))
    elif cause == "GC pause":
        c.at(PAUSE_AT_MS, _Pause(3, 12000))
    run = CauseRun(cause, c)
    while c.now < duration_ms + 2000:
        c.run(sample_ms)
        s = leo_hw(c, TOPIC)
        run.times.append(c.now)
        run.behind.append(s[1][0] - s[3][0])
    run.latencies = [r.latency_ms for r in w.results if r.status == "acked"]
    return run


# -- C08: tuning replica.lag.time.max.ms ----------------------------------------------------------
def stuck_follower_detection(lag_ms: int, seed: int = SEED, *,
                             kafka_version: str | None = None) -> int:
    """Broker 3 stops receiving data at t=1 s: ms until the leader removes it from the ISR (on
    Kafka ``kafka_version``, the notebook's unless named)."""
    c = _cluster(lag_ms=lag_ms, seed=seed,
                 version=notebook_version(kafka_version, "stuck_follower_detection"))
    _produce(c, 1)
    settle(c)
    c.run_to(1000)
    c.hold(type="FetchResponse", src=1, dst=3)
    _produce(c, 1, prefix="x")
    start = c.now
    if not c.run_until(lambda cl: 3 not in cl.isr(TOPIC), 4 * lag_ms):
        return -1
    return c.now - start


# Broker 3's ZooKeeper pings go out every 6 s from t=0, so a pause from t=4 s up to 14 s long
# ends before its session (18 s since the last ping) can expire.
PAUSE_AT_MS = 4000


def isr_under_pause(lag_ms: int = 10000, pause_ms: int = 12000, seed: int = SEED,
                    rate: int = 20, *, kafka_version: str | None = None) -> Cluster:
    """Broker 3 pauses for ``pause_ms`` at t=4 s under ``lag_ms``; 45 s of acks=1 traffic on
    Kafka ``kafka_version`` (the notebook's unless named)."""
    c = _cluster(lag_ms=lag_ms, seed=seed,
                 version=notebook_version(kafka_version, "isr_under_pause"))
    RateWorkload(c, c.producer("load", acks="1"), TOPIC, rate=rate, duration_ms=40000,
                 partition=0)
    if pause_ms > 0:
        c.at(PAUSE_AT_MS, _Pause(3, pause_ms))
    c.run(45000)
    return c


def pause_summary(lag_ms: int = 10000, pause_ms: int = 12000, seed: int = SEED,
                  c: Cluster | None = None, *, kafka_version: str | None = None) -> Text:
    """What a GC pause of ``pause_ms`` on broker 3 does under ``lag_ms``: the ISR changes (of
    ``c``, else of a run on ``kafka_version``, the notebook's unless named)."""
    c = c or isr_under_pause(lag_ms, pause_ms, seed, kafka_version=kafka_version)
    expired = [r for r in c.trace.rows if r[1] == "zk_session_expired" and r[2] == "zookeeper"]
    fenced = [r for r in c.trace.rows if r[1] == "broker_fenced"]
    note = ""
    if expired:
        note = "\n" + tr("broker 3's ZooKeeper session expired at t={t} ms (no ping for "
                         "zookeeper.session.timeout.ms): the controller dropped it from the ISR "
                         "too", t=expired[0][0])
    elif fenced:
        note = "\n" + tr("the controller fenced broker 3 at t={t} ms (no heartbeat for "
                         "broker.session.timeout.ms) and dropped it from the ISR itself: no "
                         "leader shrink", t=fenced[0][0])
    return Text(tr("replica.lag.time.max.ms={lag_ms}, GC pause of {pause_ms} ms at t={at} ms",
                   lag_ms=lag_ms, pause_ms=pause_ms, at=PAUSE_AT_MS)
                + f"\n{isr_changes(c, TOPIC)}{note}")


def pause_view(lag_ms: int = 10000, pause_ms: int = 12000,
               kafka_version: str | None = None) -> list:
    """The explorer's view: the summary and the ISR timeline (``kafka_version``: the notebook
    passes it)."""
    from kafkasim.viz import isr_timeline

    c = isr_under_pause(lag_ms, pause_ms, kafka_version=kafka_version)
    return [pause_summary(lag_ms, pause_ms, c=c), isr_timeline(c, TOPIC)]


# -- C10: how an ISR change travels (read from the trace) ----------------------------------------
def isr_change_events(c: Cluster, since_ms: int, topic: str = TOPIC) -> Text:
    """The ISR change of ``topic`` after ``since_ms`` as it travelled: the leader's proposal,
    AlterPartition (2.7+) or the leader's own ZooKeeper write and /isr_change_notification
    (before 2.7), and the metadata the controller sent out."""
    zk_write = c.kafka_version < "2.7"
    rows = []
    for t, kind, node, tp, _p, detail in c.trace.rows:
        if t < since_ms:
            continue
        line = None
        if kind == "isr_proposed":
            line = tr("leader {node} proposes {detail}", node=node, detail=narrate(str(detail)))
        elif kind == "isr" and tp == topic:
            isr = list(detail[1])
            line = (tr("leader {node} writes ISR {isr} to ZooKeeper itself", node=node, isr=isr)
                    if zk_write else tr("leader {node} applies the committed ISR {isr}",
                                        node=node, isr=isr))
        elif kind == "controller":
            line = f"controller {node}: {detail}"
        elif kind == "isr_change_notification":
            line = tr("broker {node} queues /isr_change_notification for the controller",
                      node=node)
        elif kind == "send" and detail[0] in ("AlterPartitionRequest", "AlterPartitionResponse",
                                              "UpdateMetadataRequest"):
            line = f"{detail[0]} {node} -> {detail[1]}"
        if line:
            rows.append({"t(ms)": t, "event": line})
    return Text(tr("Kafka {version}: leader {leader}, controller {controller}",
                   version=c.kafka_version, leader=c.leader(topic),
                   controller=c.controller_id()) + f"\n{text_table(rows)}")


#: notebook 02b section 5's prediction choices: how long the controller takes to know an ISR change
LEARN_SPANS = ("under 100 ms", "100 ms - 5 s", "5-10 s", "over 10 s")


def controller_knows_after(c: Cluster, since_ms: int, topic: str = TOPIC) -> int:
    """ms from the leader's ISR decision after ``since_ms`` (its proposal, or before 2.7 its own
    ZooKeeper write) to the first sign that the controller has it: a ``controller`` row of the
    trace, or an ``UpdateMetadataRequest`` it sends. -1 if either is missing."""
    decided = None
    for t, kind, _node, tp, _p, detail in c.trace.rows:
        if t < since_ms:
            continue
        if decided is None and (kind == "isr_proposed"
                                or kind == "isr" and tp == topic and c.kafka_version < "2.7"):
            decided = t
        elif decided is not None and (kind == "controller" or kind == "send"
                                      and detail[0] == "UpdateMetadataRequest"):
            return t - decided
    return -1


def learn_span(ms: int) -> str:
    """The ``LEARN_SPANS`` choice that ``ms`` falls in."""
    tops = (100, 5000, 10000, None)
    return next(s for s, top in zip(LEARN_SPANS, tops, strict=True)
                if top is None or 0 <= ms < top)


def brokers_learn_by(c: Cluster, since_ms: int) -> str:
    """How the brokers heard of the change after ``since_ms``: ``"UpdateMetadataRequest"`` if the
    controller sent any, else ``"the metadata log"`` (KRaft: each broker reads the record)."""
    sent = any(t >= since_ms and kind == "send" and detail[0] == "UpdateMetadataRequest"
               for t, kind, _n, _tp, _p, detail in c.trace.rows)
    return "UpdateMetadataRequest" if sent else "the metadata log"


# -- C22: what an operator sees (read-only samples) ----------------------------------------------
def lag_sample(c: Cluster, load, follower: int = 3, topic: str = TOPIC) -> dict:
    """One sample of a follower's lag, three ways: records behind the leader's LEO, ms since the
    leader last saw it caught up (the ISR rule's clock, Replica.lastCaughtUpTimeMs), and the
    records the producer holds that are not yet acknowledged (its backlog)."""
    leader = c.leader(topic)
    part = c.brokers[leader].replica_manager.partitions[(topic, 0)]
    st = part.remote.get(follower)
    caught = c.now - st.last_caught_up_time_ms if st is not None else 0
    return {"t": c.now, "behind": part.log.log_end_offset - c.log(follower, topic).log_end_offset,
            "since caught up": min(caught, c.now),
            "backlog": sum(1 for r in load.results if r.status == "pending")}


def _cluster_of(run) -> Cluster:
    """The cluster of a run: a ``CauseRun`` or a notebook's ``(cluster, load, samples)``."""
    return run.cluster if isinstance(run, CauseRun) else run[0]


def blind(runs: dict) -> dict:
    """``runs`` (cause -> run) under the labels A, B, C, ... in an order that hides the causes:
    sorted by a hash of each run's trace digest (a fingerprint of the whole simulation), the
    same in every process. No answer key is kept anywhere: ``checks.check_causes`` reads each
    run's cause back from the faults its trace recorded (``fault_cause``)."""
    import hashlib

    def key(run) -> str:
        text = "kafkasim.course.isr.blind:" + _cluster_of(run).trace.digest()
        return hashlib.sha256(text.encode()).hexdigest()

    ordered = sorted(runs.values(), key=key)
    return dict(zip("ABCDEFGHIJKLMNOPQRSTUVWXYZ", ordered, strict=False))


def fault_cause(run, broker: int = 3) -> str | None:
    """Which of ``CAUSES`` was done to ``broker`` in a run, from the fault records of its trace
    (what was injected, not the symptoms): a slowed disk, a slowed link, one long pause (a GC
    pause) or many short ones (request threads kept busy). None if none of these."""
    pauses, disk, network = [], False, False
    for _t, kind, node, _topic, _p, detail in _cluster_of(run).trace.rows:
        if kind != "fault" or node != broker:
            continue
        name = type(detail).__name__
        if name == "Slow":
            disk |= detail.disk_ms > 0
            network |= detail.network_ms > 0
        elif name == "Pause":
            pauses.append(detail.ms)
    if disk:
        return "slow disk"
    if network:
        return "network latency"
    if len(pauses) == 1:
        return "GC pause"
    if len(pauses) > 1:
        return "broker overload"
    return None


def cause_summary(cause: str, c: Cluster, load, samples: list[dict]) -> dict:
    """One row of the causes table: ISR changes, time out of the ISR, lag, acks=all p99."""
    m = meter_counts(c)
    lat = sorted(r.latency_ms for r in load.results if r.status == "acked")
    return {"cause": cause, "ISR shrinks": m["IsrShrinksPerSec"],
            "ISR expands": m["IsrExpandsPerSec"],
            "s out of ISR": round(_time_out_of_isr(c, 3) / 1000, 1),
            "max records behind": max((s["behind"] for s in samples), default=0),
            "p99 acks=all latency (ms)": lat[int(len(lat) * 0.99)] if lat else None}


def lag_plot(runs: dict):
    """Records behind over time, one panel per cause (``runs``: cause -> (cluster, samples))."""
    from kafkasim.viz import style

    fig = style.new_figure(13, 2.2 * len(runs) + 0.8)
    axes = fig.subplots(len(runs), 1, sharex=True, squeeze=False).ravel()
    for ax, (cause, (c, samples)) in zip(axes, runs.items(), strict=True):
        ax.plot([s["t"] / 1000 for s in samples], [s["behind"] for s in samples],
                color=style.OUT_OF_ISR, lw=2, gid=f"behind:{cause}")
        _isr_lines(ax, c)
        ax.set_title(tr(cause), fontsize=style.SMALL, loc="left")
        ax.set_ylabel(tr("records\nbehind"), fontsize=style.SMALL)
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel(tr("time (s); dashed: ISR shrink, dotted: ISR expand"),
                        fontsize=style.SMALL)
    return fig


def _isr_lines(ax, c: Cluster) -> None:
    from kafkasim.viz import style

    for t, kind, _node, tp, _p, detail in c.trace.rows:
        if kind == "isr" and tp == TOPIC:
            shrink = len(detail[1]) < len(detail[0])
            ax.axvline(t / 1000, color=style.OUT_OF_ISR if shrink else style.IN_ISR,
                       ls="--" if shrink else ":", lw=1.5)


def operator_plot(c: Cluster, samples: list[dict], lag_ms: int):
    """A GC pause as an operator sees it: records behind (flat: the producer is blocked), the
    producer's unacknowledged backlog (where the lag really piles up), and the time since the
    follower last caught up (what the ISR rule measures), against replica.lag.time.max.ms."""
    from kafkasim.viz import style

    fig = style.new_figure(13, 7.4)
    axes = fig.subplots(3, 1, sharex=True).ravel()
    ts = [s["t"] / 1000 for s in samples]
    panels = (("behind", tr("records behind\n(leader LEO - LEO)")),
              ("backlog", tr("producer backlog\n(not yet acked)")),
              ("since caught up", tr("ms since broker 3\nlast caught up")))
    for ax, (key, label) in zip(axes, panels, strict=True):
        ax.plot(ts, [s[key] for s in samples], lw=2, color=style.OUT_OF_ISR, gid=f"op:{key}")
        ax.set_ylabel(label, fontsize=style.SMALL)
        ax.grid(True, alpha=0.3)
        _isr_lines(ax, c)
    axes[2].axhline(lag_ms, color="black", ls="-.", lw=1)
    axes[2].text(ts[0], lag_ms, " replica.lag.time.max.ms", va="bottom", fontsize=style.SMALL)
    axes[2].set_xlabel(tr("time (s); dashed: ISR shrink, dotted: ISR expand"),
                       fontsize=style.SMALL)
    return fig


# -- exercises --------------------------------------------------------------------------------
def flapping_run(faults, seed: int = SEED, *, kafka_version: str | None = None) -> Cluster:
    """02b exercise 2's run: the notebook's Kafka (4.3), replica.lag.time.max.ms=10000, 20
    records/s (acks=1) for 60 s; ``faults(c)`` is called at t=1 s and may schedule more with
    ``c.at``."""
    version = notebook_version(kafka_version, "flapping_run")
    c = Cluster(brokers=3, seed=seed, kafka_version=version,
                config={"replica.lag.time.max.ms": 10000})
    c.create_topic(TOPIC, partitions=1, replication_factor=3, assignment=[[1, 2, 3]])
    RateWorkload(c, c.producer("load", acks="1"), TOPIC, rate=20, duration_ms=60000,
                 partition=0)
    c.run_to(1000)
    faults(c)
    c.run_to(62000)
    return c


# -- printed lines of notebooks 02a and 02b (course language; the same code in every edition) -----
#: the column headers of 02a's rule table and 02b's tuning table (their cells build the rows;
#: text_table narrates the headers)
TUNING_COLUMNS = (N_("scenario"), N_("rule"), N_("load"), N_("stuck (alive) leaves after (s)"),
                  N_("crashed, KRaft 4.3 (s)"), N_("crashed, ZooKeeper 3.7 (s)"),
                  N_("12 s GC pause drops it, 3.7"))

_MOMENTS = {"behind": N_("--- t={now} ms: broker 3 falls behind"),
            "shrink": N_("--- t={now} ms: the leader shrinks the ISR"),
            "expand": N_("--- t={now} ms: broker 3 catches up; the leader expands the ISR")}


def isr_moment(c: Cluster, moment: str, topic: str = TOPIC) -> Text:
    """02b section 4's stages (``moment``: "behind", "shrink" or "expand"): the time, what
    happened, and every replica's LEO, HW and ISR membership."""
    if moment not in _MOMENTS:
        raise ValueError(f"moment must be one of {sorted(_MOMENTS)}, got {moment!r}")
    return Text(tr(_MOMENTS[moment], now=c.now) + "\n" + replica_state(c, topic))


def rule_outcome(name: str, c: Cluster, load: RateWorkload, verdict: str,
                 topic: str = TOPIC) -> Text:
    """02a's rule swap, one line per rule: the ISR, the acknowledged writes, p99 latency, HW and
    LEO after the run, and the checkers' verdict."""
    lat = sorted(r.latency_ms for r in load.results if r.acked)
    p99 = lat[int(len(lat) * .99)] if lat else "-"
    return Text(tr("{name}: ISR {isr}, acked {acked} of {sent}, p99 latency {p99} ms, HW {hw} "
                   "of LEO {leo}; {verdict}", name=name, isr=c.isr(topic), acked=len(lat),
                   sent=len(load.results), p99=p99, hw=c.high_watermark(topic),
                   leo=c.log(c.leader(topic), topic).log_end_offset, verdict=verdict))
