"""Notebook 02 (in-sync replicas): AR / ISR / OSR, the two lag rules, shrink and expand, who
records ISR changes, what makes followers fall behind, and tuning ``replica.lag.time.max.ms``.

Concepts C06, C07, C08, C09, C10 and C22.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kafkasim.cluster import Cluster
from kafkasim.course.common import (
    Text,
    isr_changes,
    leo_hw,
    meter_counts,
    replica_sets,
    replica_state,
    settle,
    text_table,
)
from kafkasim.scenario import Scenario
from kafkasim.workload import RateWorkload

SEED = 7
#: The mystery runs A-D of the troubleshooting exercise, in this order (graded by checks).
CAUSE_ORDER = ("slow disk", "GC pause", "broker overload", "network latency")
TOPIC = "isr-demo"


def _cluster(brokers=3, *, lag_ms: int = 10000, version: str = "3.7", seed: int = SEED,
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
def osr_example(seed: int = SEED) -> tuple[Cluster, Text, Text]:
    """Four replicas; broker 4 stops receiving data. Returns the cluster and its state before
    and after the leader drops broker 4 from the ISR."""
    c = _cluster(4, seed=seed)
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
def message_rule_example(behind: int, max_messages: int = 4) -> tuple[Cluster, Text]:
    """Kafka 0.8.2 with ``replica.lag.max.messages``: broker 103 stops ``behind`` messages short
    of the leader 101. Returns the state just after the first isr-expiration check."""
    c = Cluster(brokers=[101, 102, 103], seed=1, kafka_version="0.8.2",
                config={"replica.lag.max.messages": max_messages,
                        "replica.lag.time.max.ms": 10000})
    c.create_topic(TOPIC, 1, 3, assignment=[[101, 102, 103]])
    _produce(c, 5, prefix="a")
    settle(c)
    c.hold(type="FetchResponse", src=101, dst=103)
    if behind:
        _produce(c, behind, prefix="b")
    c.run_to(10001)          # the isr-expiration task runs every replica.lag.time.max.ms in 0.8
    c.run(50)
    leo = leo_hw(c, TOPIC)
    lag = leo[101][0] - leo[103][0]
    verdict = "out of the ISR" if 103 not in c.isr(TOPIC) else "still in the ISR"
    return c, Text(f"replica.lag.max.messages={max_messages}: broker 103 is {lag} message(s) "
                   f"behind the leader -> {verdict}   (ISR {c.isr(TOPIC)})")


LAG_RULE_SCENARIOS = (
    ("seed-lag-messages-steady", "0.8.2: replica.lag.max.messages=5", "steady 3 msg/s"),
    ("seed-lag-messages-burst", "0.8.2: replica.lag.max.messages=5", "burst 10 msg/s"),
    ("seed-lag-time-burst", "3.7: replica.lag.time.max.ms=10000", "burst 10 msg/s"),
)


def lag_rule_table() -> Text:
    """The three built-in lag-rule scenarios side by side: ISR shrinks and expands in 60 s."""
    rows = []
    for name, rule, load in LAG_RULE_SCENARIOS:
        run = Scenario.named(name).run()
        m = meter_counts(run.cluster)
        rows.append({"scenario": name, "rule": rule, "load": load,
                     "ISR shrinks": m["IsrShrinksPerSec"], "ISR expands": m["IsrExpandsPerSec"]})
    return text_table(rows)


BURST_SEGMENTS = [(0, 20000, 3), (20000, 30000, 10), (30000, 60000, 1)]


def burst_run(rule: str, segments=None, seed: int = SEED) -> Cluster:
    """Followers 250 ms away; 3 msg/s, then a 10 msg/s burst, then 1 msg/s, under the 0.8.2
    message rule (``rule="messages"``) or the modern time rule (``rule="time"``)."""
    if rule == "messages":
        c = _cluster(version="0.8.2", seed=seed, extra={"replica.lag.max.messages": 5})
    elif rule == "time":
        c = _cluster(seed=seed)
    else:
        raise ValueError(f"rule must be 'messages' or 'time', got {rule!r}")
    c.slow(2, network_ms=250)
    c.slow(3, network_ms=250)
    segs = segments or BURST_SEGMENTS
    RateWorkload(c, c.producer("load", acks="1"), TOPIC, segments=segs, partition=0)
    c.run(max(e for _s, e, _r in segs) + 2000)
    return c


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
    return Text(f"t={c.now} ms, leader {leader} LEO {part.log.log_end_offset}, "
                f"replica.lag.time.max.ms={lag_ms}\n{text_table(rows)}")


def fetching_but_behind(seed: int = SEED) -> tuple[Cluster, list[Text]]:
    """Broker 3 keeps fetching every few hundred ms but writes at most 10 records per fetch
    (a slow disk) while 50 records/s arrive: it leaves the ISR although it never stops
    fetching. Returns the cluster and the leader's view at a few moments."""
    c = _cluster(seed=seed)
    slow_disk(c, 3)
    RateWorkload(c, c.producer("load", acks="1"), TOPIC, rate=50, duration_ms=20000,
                 partition=0)
    views = []
    for t in (2000, 8000, 12000):
        c.run_to(t)
        views.append(follower_view(c))
    c.run_until(lambda cl: 3 not in cl.isr(TOPIC), 10000)
    c.run(10)
    views.append(follower_view(c))
    return c, views


# -- C09: shrink and expand with the notes' numbers -----------------------------------------------
@dataclass
class Stage:
    label: str
    time_ms: int
    text: Text


def shrink_expand_example(seed: int = SEED) -> tuple[Cluster, list[Stage]]:
    """Leader LEO 1000, broker 2 at 1000, broker 3 stuck at 800 -> ISR [1, 2]; then broker 3
    catches up and everyone reaches 1200 -> ISR [1, 2, 3] (replica.lag.time.max.ms = 10000)."""
    c = _cluster(seed=seed)
    stages = []
    _produce(c, 800, prefix="a")
    settle(c)
    c.hold(type="FetchResponse", src=1, dst=3)     # broker 3 stops receiving at offset 800
    _produce(c, 200, prefix="b")
    c.run(500)
    stages.append(Stage("broker 3 falls behind", c.now, replica_state(c, TOPIC)))
    c.run_until(lambda cl: cl.isr(TOPIC) == [1, 2], 20000)
    c.run(10)
    stages.append(Stage("the leader shrinks the ISR", c.now, replica_state(c, TOPIC)))
    c.release(type="FetchResponse", src=1, dst=3)
    _produce(c, 200, prefix="c")
    c.run_until(lambda cl: cl.isr(TOPIC) == [1, 2, 3], 5000)
    settle(c)
    stages.append(Stage("broker 3 catches up; the leader expands the ISR", c.now,
                        replica_state(c, TOPIC)))
    return c, stages


# -- C10: who records the ISR -------------------------------------------------------------------
def isr_change_path(version: str, seed: int = SEED) -> Text:
    """Drop a follower from the ISR under ``version`` and list how the change travels: the
    leader's proposal, AlterPartition (2.7+) or its own ZooKeeper write (before 2.7), and the
    metadata the controller sends out."""
    c = _cluster(version=version, seed=seed, assignment=[[2, 3, 1]])
    _produce(c, 1)
    settle(c)
    c.hold(type="FetchResponse", src=2, dst=3)
    _produce(c, 1, prefix="x")
    start = c.now
    c.run_until(lambda cl: 3 not in cl.isr(TOPIC), 30000)
    c.run(8000 if version < "2.7" else 50)
    if version < "2.7":
        c.run_until(lambda cl: bool(cl.trace.where("isr_change_notification")), 10000)
        c.run(20)
    rows = []
    for t, kind, node, _topic, _p, detail in c.trace.rows:
        if t < start:
            continue
        line = None
        if kind == "isr_proposed":
            line = f"leader {node} proposes {detail}"
        elif kind == "isr":
            old, new = detail
            line = (f"leader {node} writes ISR {list(new)} to ZooKeeper itself"
                    if version < "2.7" else f"leader {node} applies the committed ISR {list(new)}")
        elif kind == "controller":
            line = f"controller {node}: {detail}"
        elif kind == "isr_change_notification":
            line = f"broker {node} queues /isr_change_notification for the controller"
        elif kind == "send" and detail[0] in ("AlterPartitionRequest", "AlterPartitionResponse",
                                              "UpdateMetadataRequest"):
            line = f"{detail[0]} {node} -> {detail[1]}"
        if line:
            rows.append({"t(ms)": t, "event": line})
    ctl = c.controller_id()
    return Text(f"Kafka {version}: leader 2, controller {ctl}\n{text_table(rows)}")


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


def _time_out_of_isr(c: Cluster, broker: int, topic: str = TOPIC) -> int:
    out_since = None
    total = 0
    for t, kind, _node, tp, _p, detail in c.trace.rows:
        if kind != "isr" or tp != topic:
            continue
        old, new = detail
        if broker in old and broker not in new:
            out_since = t
        elif broker in new and broker not in old and out_since is not None:
            total += t - out_since
            out_since = None
    if out_since is not None:
        total += c.now - out_since
    return total


def troubleshoot(cause: str, *, lag_ms: int = 10000, rate: int = 50, duration_ms: int = 60000,
                 seed: int = SEED, sample_ms: int = 100) -> CauseRun:
    """Run 60 s of acks=all traffic at ``rate`` msg/s while ``cause`` hits broker 3 from t=5 s."""
    if cause not in CAUSES:
        raise ValueError(f"unknown cause {cause!r}; choose from {', '.join(CAUSES)}")
    c = _cluster(lag_ms=lag_ms, seed=seed)
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


def causes_table(runs: list[CauseRun]) -> Text:
    return text_table([r.summary() for r in runs])


# -- C08: tuning replica.lag.time.max.ms ----------------------------------------------------------
def stuck_follower_detection(lag_ms: int, seed: int = SEED) -> int:
    """Broker 3 stops receiving data at t=1 s: ms until the leader removes it from the ISR."""
    c = _cluster(lag_ms=lag_ms, seed=seed)
    _produce(c, 1)
    settle(c)
    c.run_to(1000)
    c.hold(type="FetchResponse", src=1, dst=3)
    _produce(c, 1, prefix="x")
    start = c.now
    if not c.run_until(lambda cl: 3 not in cl.isr(TOPIC), 4 * lag_ms):
        return -1
    return c.now - start


def pause_shrinks(lag_ms: int, pause_ms: int, seed: int = SEED) -> bool:
    """Does a single GC pause of ``pause_ms`` on broker 3 cost it its ISR membership?"""
    c = isr_under_pause(lag_ms, pause_ms, seed)
    shrunk = any(kind == "isr" and 3 in detail[0] and 3 not in detail[1]
                 for _t, kind, _n, _tp, _p, detail in c.trace.rows)
    return shrunk or _session_expired(c)


def _session_expired(c: Cluster) -> bool:
    return any(r[1] == "zk_session_expired" and r[2] == "zookeeper" for r in c.trace.rows)


def tradeoff_table(lags=(10000, 30000, 60000), pause_ms: int = 12000) -> Text:
    rows = []
    for lag in lags:
        det = stuck_follower_detection(lag)
        rows.append({"replica.lag.time.max.ms": lag,
                     f"a {pause_ms // 1000} s GC pause drops the follower?":
                         pause_shrinks(lag, pause_ms),
                     "a dead follower leaves the ISR after (s)": round(det / 1000, 1)})
    return text_table(rows)


# Broker 3's ZooKeeper pings go out every 6 s from t=0, so a pause from t=4 s up to 14 s long
# ends before its session (18 s since the last ping) can expire.
PAUSE_AT_MS = 4000


def isr_under_pause(lag_ms: int = 10000, pause_ms: int = 12000, seed: int = SEED,
                    rate: int = 20) -> Cluster:
    """Broker 3 pauses for ``pause_ms`` at t=4 s under ``lag_ms``; 45 s of acks=1 traffic."""
    c = _cluster(lag_ms=lag_ms, seed=seed)
    RateWorkload(c, c.producer("load", acks="1"), TOPIC, rate=rate, duration_ms=40000,
                 partition=0)
    if pause_ms > 0:
        c.at(PAUSE_AT_MS, _Pause(3, pause_ms))
    c.run(45000)
    return c


def mystery_runs(runs: list[CauseRun]) -> Text:
    """The cause runs as anonymous A-D (in CAUSE_ORDER), for the matching exercise."""
    by_cause = {r.cause: r for r in runs}
    rows = []
    for label, cause in zip("ABCD", CAUSE_ORDER, strict=True):
        row = by_cause[cause].summary()
        row.pop("cause")
        rows.append({"run": label, **row})
    return text_table(rows)


def behind_plot(runs: list[CauseRun]):
    """Records broker 3 is behind the leader, over time, one panel per cause."""
    from kafkasim.viz import style

    fig = style.new_figure(13, 2.2 * len(runs) + 0.8)
    axes = fig.subplots(len(runs), 1, sharex=True, squeeze=False).ravel()
    for ax, run in zip(axes, runs, strict=True):
        ax.plot([t / 1000 for t in run.times], run.behind, color=style.OUT_OF_ISR, lw=2,
                gid=f"behind:{run.cause}")
        for t, kind, _node, tp, _p, detail in run.cluster.trace.rows:
            if kind == "isr" and tp == TOPIC:
                old, new = detail
                shrink = len(new) < len(old)
                ax.axvline(t / 1000, color=style.OUT_OF_ISR if shrink else style.IN_ISR,
                           ls="--" if shrink else ":", lw=1.5)
        ax.set_title(f"{run.cause}: {CAUSES[run.cause]}", fontsize=style.SMALL, loc="left")
        ax.set_ylabel("records\nbehind", fontsize=style.SMALL)
        ax.grid(True, alpha=0.3)
    axes[-1].set_xlabel("time (s); dashed: ISR shrink, dotted: ISR expand", fontsize=style.SMALL)
    return fig


def pause_summary(lag_ms: int = 10000, pause_ms: int = 12000, seed: int = SEED,
                  c: Cluster | None = None) -> Text:
    """What a GC pause of ``pause_ms`` on broker 3 does under ``lag_ms``: the ISR changes."""
    c = c or isr_under_pause(lag_ms, pause_ms, seed)
    expired = [r for r in c.trace.rows if r[1] == "zk_session_expired" and r[2] == "zookeeper"]
    note = ""
    if expired:
        note = (f"\nbroker 3's ZooKeeper session expired at t={expired[0][0]} ms (no ping for "
                f"zookeeper.session.timeout.ms): the controller dropped it from the ISR too")
    return Text(f"replica.lag.time.max.ms={lag_ms}, GC pause of {pause_ms} ms at "
                f"t={PAUSE_AT_MS} ms\n{isr_changes(c, TOPIC)}{note}")


def pause_view(lag_ms: int = 10000, pause_ms: int = 12000) -> list:
    """The explorer's view: the summary and the ISR timeline."""
    from kafkasim.viz import isr_timeline

    c = isr_under_pause(lag_ms, pause_ms)
    return [pause_summary(lag_ms, pause_ms, c=c), isr_timeline(c, TOPIC)]
