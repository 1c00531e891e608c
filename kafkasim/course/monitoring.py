"""Notebook 06 (monitoring): formatting and grading for Kafka's replication metrics over
simulated time, ``kafka-topics --describe --under-replicated-partitions``, and the notes' two
Prometheus alert rules evaluated on the simulated series. The notebook builds its cluster and
its incidents in its own cells; this module reads the metric rows (series, PromQL ``rate``, alert
states, tables, a drawing) and grades the exercises.

Concepts C20 and C21. Kafka: ``ReplicaManager`` (UnderReplicatedPartitions, IsrShrinksPerSec,
IsrExpandsPerSec), ``Partition`` (InSyncReplicasCount), ``TopicCommand``
(``--under-replicated-partitions``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkasim.course.common import Text, cached, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.course.narration import narrate
from kafkasim.runtime import metrics as M
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

SEED = 6
# No Kafka version here: notebook 06 names the one it runs (today's 4.x, KRaft) and passes it to
# every helper that builds a cluster (``kafka_version=``).
TOPIC = "payments"
MINUTE = 60000
SCRAPE_MS = 15000          # how often "Prometheus" scrapes the brokers' JMX metrics
FIVE_MIN = 5 * MINUTE
RATE = 2                   # records per second produced during the incidents

URP = M.UNDER_REPLICATED
SHRINKS = M.ISR_SHRINKS + ":Count"
EXPANDS = M.ISR_EXPANDS + ":Count"


@dataclass(frozen=True)
class _Isolate:
    """Cut broker ``broker`` off from the other brokers (it still reaches the controllers, or
    ZooKeeper, and clients): its fetches fail, so it drops out of the ISRs it follows in."""

    broker: int
    others: tuple[int, ...]

    def __call__(self, c: Cluster) -> None:
        for o in self.others:
            c.cut(self.broker, o)


@dataclass(frozen=True)
class _Heal:
    def __call__(self, c: Cluster) -> None:
        c.heal()


# Incidents on broker 3, each a list of (start, end) ms offsets during which it is cut off.
INCIDENTS = {
    "blip": [(0, 30000)],                                  # one 30 s network blip
    "outage": [(0, 7 * MINUTE)],                           # a 7-minute outage
    "flapping": [(k, k + 20000) for k in range(0, 10 * MINUTE, MINUTE)],   # 20 s of every 60 s
}
INCIDENT_TEXT = {
    "blip": N_("broker 3 cut off from the other brokers once, for 30 s"),
    "outage": N_("broker 3 cut off for 7 minutes"),
    "flapping": N_("broker 3 cut off for 20 s of every minute, for 10 minutes"),
}
TIMELINE = (("blip", 2 * MINUTE), ("outage", 9 * MINUTE), ("flapping", 24 * MINUTE))


def monitored_cluster(seed: int = SEED, scrape_ms: int = SCRAPE_MS, *,
                      kafka_version: str) -> Cluster:
    """Three brokers of Kafka ``kafka_version`` (the notebook's), topic ``payments`` (3
    partitions, RF 3, led by brokers 1, 2, 1), with replica.lag.time.max.ms = 10000 and metrics
    sampled every ``scrape_ms``."""
    c = Cluster(brokers=3, seed=seed, config={"replica.lag.time.max.ms": 10000},
                kafka_version=kafka_version,
                metrics_interval_ms=scrape_ms)
    c.create_topic(TOPIC, 3, 3, assignment=[[1, 2, 3], [2, 1, 3], [1, 3, 2]])
    return c


def schedule_incident(c: Cluster, kind: str, start_ms: int) -> int:
    """Schedule incident ``kind`` from ``start_ms``; returns when it ends."""
    if kind not in INCIDENTS:
        raise ValueError(f"unknown incident {kind!r}; choose from {', '.join(INCIDENTS)}")
    end = start_ms
    for s, e in INCIDENTS[kind]:
        c.at(start_ms + s, _Isolate(3, (1, 2)))
        c.at(start_ms + e, _Heal())
        end = start_ms + e
    return end


TOTAL_MS = 40 * MINUTE


# -- metric series ------------------------------------------------------------------------------
def series(c: Cluster, mbean: str) -> dict[int, list[tuple[int, float]]]:
    """broker -> [(time_ms, value), ...] for one MBean (``...PerSec:Count`` for meters)."""
    out: dict[int, list[tuple[int, float]]] = {}
    for t, b, name, v in c.metrics.rows:
        if name == mbean:
            out.setdefault(b, []).append((t, v))
    return out


def cluster_total(c: Cluster, mbean: str) -> list[tuple[int, float]]:
    """The sum over brokers at each scrape."""
    by_t: dict[int, float] = {}
    for t, _b, name, v in c.metrics.rows:
        if name == mbean:
            by_t[t] = by_t.get(t, 0) + v
    return sorted(by_t.items())


def prom_rate(samples: list[tuple[int, float]], at_ms: int, window_ms: int = FIVE_MIN
              ) -> float | None:
    """PromQL ``rate(counter[window])`` at ``at_ms`` (per second), without Prometheus's
    extrapolation: the counter's increase between the first and last sample inside
    ``(at - window, at]``, over the time between them. None with fewer than two samples."""
    inside = [(t, v) for t, v in samples if at_ms - window_ms < t <= at_ms]
    if len(inside) < 2:
        return None
    increase = 0.0
    for (_t0, v0), (_t1, v1) in zip(inside, inside[1:], strict=False):
        increase += v1 - v0 if v1 >= v0 else v1          # a counter reset starts from 0
    span_s = (inside[-1][0] - inside[0][0]) / 1000
    return increase / span_s if span_s > 0 else None


@dataclass(frozen=True)
class Rule:
    name: str
    expr: str
    for_ms: int


RULES = (
    Rule("KafkaUnderReplicatedPartitions",
         "kafka_server_ReplicaManager_UnderReplicatedPartitions > 0", FIVE_MIN),
    Rule("KafkaISRShrinking", "rate(kafka_server_ReplicaManager_IsrShrinksPerSec[5m]) > 0",
         FIVE_MIN),
)


def condition_series(c: Cluster, rule: Rule) -> dict[int, list[tuple[int, bool]]]:
    """broker -> [(evaluation time, expression true?)], one evaluation per scrape."""
    out: dict[int, list[tuple[int, bool]]] = {}
    if rule.name == "KafkaUnderReplicatedPartitions":
        for b, pts in series(c, URP).items():
            out[b] = [(t, v > 0) for t, v in pts]
    elif rule.name == "KafkaISRShrinking":
        for b, pts in series(c, SHRINKS).items():
            out[b] = [(t, (prom_rate(pts, t) or 0) > 0) for t, _v in pts]
    else:
        raise ValueError(f"unknown rule {rule.name}")
    return out


def alert_states(points: list[tuple[int, bool]], for_ms: int) -> list[tuple[int, str]]:
    """Prometheus's alert state at each evaluation: "inactive", "pending" (true for less than
    ``for``) or "firing" (true at every evaluation for at least ``for``)."""
    out = []
    since = None
    for t, ok in points:
        if not ok:
            since = None
            out.append((t, "inactive"))
            continue
        if since is None:
            since = t
        out.append((t, "firing" if t - since >= for_ms else "pending"))
    return out


def firing_intervals(states: list[tuple[int, str]]) -> list[tuple[int, int]]:
    """[(first firing evaluation, first evaluation no longer firing), ...]"""
    out = []
    start = None
    last_t = None
    for t, s in states:
        if s == "firing" and start is None:
            start = t
        elif s != "firing" and start is not None:
            out.append((start, t))
            start = None
        last_t = t
    if start is not None:
        out.append((start, last_t))
    return out


def alert_report(c: Cluster, for_ms: int | None = None, *, timeline: bool = True) -> Text:
    """Every firing period of both rules, per broker series (``for_ms`` overrides 'for: 5m';
    ``timeline``: name the TIMELINE incident each falls in)."""
    rows = []
    for rule in RULES:
        for b, pts in sorted(condition_series(c, rule).items()):
            for s, e in firing_intervals(alert_states(pts, for_ms or rule.for_ms)):
                row = {"alert": rule.name, "broker": b, N_("firing from"): minsec(s),
                       "until": minsec(e)}
                if timeline:
                    row[N_("during")] = incident_at(s)
                rows.append(row)
    return text_table(rows) if rows else Text(tr("(no alert fired)"))


def incident_at(t: int) -> str:
    """Which TIMELINE incident a time falls in (or just after)."""
    best = "-"
    for kind, start in TIMELINE:
        end = start + max(e for _s, e in INCIDENTS[kind])
        if start <= t <= end + FIVE_MIN + MINUTE:
            best = kind
    return best


def minsec(ms: int) -> str:
    s = ms // 1000
    return f"{s // 60:02d}:{s % 60:02d}"


def incident_summary(c: Cluster) -> Text:
    """Per incident: how long partitions were under-replicated, how many shrinks, which alert
    fired."""
    urp_total = cluster_total(c, URP)
    shrinks_total = cluster_total(c, SHRINKS)
    fired = {}
    for rule in RULES:
        for _b, pts in condition_series(c, rule).items():
            for s, _e in firing_intervals(alert_states(pts, rule.for_ms)):
                fired.setdefault(incident_at(s), set()).add(rule.name)
    rows = []
    for kind, start in TIMELINE:
        end = start + max(e for _s, e in INCIDENTS[kind])
        window = [(t, v) for t, v in urp_total if start <= t <= end + MINUTE]
        urp_s = sum(SCRAPE_MS for _t, v in window if v > 0) // 1000
        sh = [v for t, v in shrinks_total if start <= t <= end + MINUTE]
        rows.append({"incident": kind, "what": tr(INCIDENT_TEXT[kind]),
                     N_("scrapes with URP > 0 (s)"): urp_s,
                     "ISR shrinks": int(sh[-1] - sh[0]) if sh else 0,
                     N_("alerts fired"): ", ".join(sorted(fired.get(kind, ()))) or "none"})
    return text_table(rows)


@cached(maxsize=8)
def single_incident(kind: str = "outage", seed: int = SEED, *, kafka_version: str) -> Cluster:
    """One incident starting at t=1 min, then quiet until 5 minutes after it ends (run once per
    kind, seed and version, however they are passed: the graded check's ``alerts_for`` and the
    explorer's ``incident_view`` read the same run)."""
    c = monitored_cluster(seed, kafka_version=kafka_version)
    end = max(e for _s, e in INCIDENTS[kind]) + MINUTE
    total = end + FIVE_MIN + MINUTE
    RateWorkload(c, c.producer("load", acks="all"), TOPIC, rate=RATE, duration_ms=total)
    schedule_incident(c, kind, MINUTE)
    c.run_to(total)
    return c


def alerts_for(kind: str, seed: int = SEED, for_ms: int | None = None, *,
               kafka_version: str) -> dict[str, bool]:
    """Which of the two rules fire during incident ``kind`` (run on its own)."""
    c = single_incident(kind, seed, kafka_version=kafka_version)
    out = {}
    for rule in RULES:
        out[rule.name] = any(firing_intervals(alert_states(pts, for_ms or rule.for_ms))
                             for pts in condition_series(c, rule).values())
    return out


def _incident_rows(c: Cluster, for_ms: int | None = None) -> list[dict]:
    rows = []
    for rule in RULES:
        spans = []
        for b, pts in sorted(condition_series(c, rule).items()):
            for s, e in firing_intervals(alert_states(pts, for_ms or rule.for_ms)):
                spans.append(tr("broker {b}: {start}-{end}", b=b, start=minsec(s), end=minsec(e)))
        rows.append({"alert": rule.name, "expression": rule.expr,
                     "firing": "; ".join(spans) or tr("never")})
    return rows


def validate_incident(incident: str, for_minutes) -> None:
    """Refuse what the explorer cannot show: an unknown incident, or a ``for`` that is not a
    positive number of minutes (Prometheus's ``for`` is a duration >= 0; 0 would fire on the
    first true evaluation, which is the rule without ``for``)."""
    if incident not in INCIDENTS:
        raise ValueError(f"unknown incident {incident!r}; choose from {', '.join(INCIDENTS)}")
    if isinstance(for_minutes, bool) or not isinstance(for_minutes, int) or for_minutes < 1:
        raise ValueError(f"for_minutes={for_minutes!r}: give the alert rules' 'for' as a whole "
                         "number of minutes >= 1")


def incident_view(incident: str = "outage", for_minutes: int = 5, *, kafka_version: str) -> list:
    """The explorer's view: one incident, both rules with ``for: <for_minutes>m``, the metrics
    and the alert states over time, on Kafka ``kafka_version`` (the notebook's)."""
    validate_incident(incident, for_minutes)
    c = single_incident(incident, kafka_version=kafka_version)
    for_ms = for_minutes * MINUTE
    text = Text(tr("{incident} (from 01:00); rules evaluated every {s} s with 'for: {m}m'",
                   incident=tr(INCIDENT_TEXT[incident]), s=SCRAPE_MS // 1000, m=for_minutes)
                + f"\n{text_table(_incident_rows(c, for_ms))}")
    return [text, alerts_plot(c, for_ms)]


def alerts_plot(c: Cluster, for_ms: int | None = None):
    """Three panels over time: UnderReplicatedPartitions per broker, the IsrShrinksPerSec
    count, and each rule's state (pending / firing) per broker."""
    from kafkasim.viz import style

    # fixed margins (the labels are known): a layout engine would cost more than the drawing
    fig = style.new_figure(13, 7.5, layout=None)
    ax1, ax2, ax3 = fig.subplots(3, 1, sharex=True)
    fig.subplots_adjust(right=0.98, top=0.96, bottom=0.08, hspace=0.3)
    brokers = sorted(c.brokers)
    for b, pts in sorted(series(c, URP).items()):
        ax1.step([t / MINUTE for t, _v in pts], [v for _t, v in pts], where="post", lw=2,
                 color=style.broker_color(brokers.index(b)), label=tr("broker {b}", b=b),
                 gid=f"urp@broker{b}")
    ax1.set_title(tr("UnderReplicatedPartitions (per broker)"), fontsize=style.SMALL,
                  loc="left")
    ax1.legend(loc="upper right", fontsize=style.SMALL, frameon=False)
    for b, pts in sorted(series(c, SHRINKS).items()):
        ax2.step([t / MINUTE for t, _v in pts], [v for _t, v in pts], where="post", lw=2,
                 color=style.broker_color(brokers.index(b)), gid=f"shrinks@broker{b}")
    ax2.set_title(tr("IsrShrinksPerSec count (per broker)"), fontsize=style.SMALL, loc="left")
    colors = {"pending": style.PAUSED, "firing": style.OUT_OF_ISR}
    labels = []
    y = 0
    for rule in RULES:
        for b, pts in sorted(condition_series(c, rule).items()):
            states = alert_states(pts, for_ms or rule.for_ms)
            spans: dict[str, list] = {"pending": [], "firing": []}
            for i, (t, st) in enumerate(states):
                if st == "inactive":
                    continue
                end = states[i + 1][0] if i + 1 < len(states) else t + SCRAPE_MS
                spans[st].append((t / MINUTE, (end - t) / MINUTE))
            for st, xs in spans.items():     # one collection per state: far cheaper to draw
                if xs:
                    ax3.broken_barh(xs, (y - 0.35, 0.7), facecolors=colors[st],
                                    gid=f"{rule.name}@broker{b}:{st}")
            labels.append(f"{rule.name.replace('Kafka', '')} b{b}")
            y += 1
    ax3.set_yticks(range(len(labels)), labels, fontsize=style.SMALL)
    longest = max((len(x) for x in labels), default=0)     # ~0.62 em per character
    fig.subplots_adjust(left=min(0.45, (0.4 + 0.62 * style.SMALL / 72 * longest) / 13))
    ax3.set_title(tr("alert state (yellow: pending, red: firing)"), fontsize=style.SMALL,
                  loc="left")
    ax3.set_xlabel(tr("time (minutes)"), fontsize=style.SMALL)
    for ax in (ax1, ax2):
        ax.yaxis.get_major_locator().set_params(integer=True)
        ax.grid(True, alpha=0.3)
    return fig


MBEANS = (
    (M.UNDER_REPLICATED, "gauge", N_("partitions this broker leads whose ISR is smaller than "
                                     "the replica list")),
    (M.partition_mbean("InSyncReplicasCount", "<t>", "<p>"), "gauge",
     N_("ISR size of one partition, reported by its leader (0 on the other brokers)")),
    (M.ISR_SHRINKS, "meter", N_("ISR shrinks committed on partitions this broker leads")),
    (M.ISR_EXPANDS, "meter", N_("ISR expansions committed on partitions this broker leads")),
    (M.UNDER_MIN_ISR, "gauge", N_("led partitions whose ISR is below min.insync.replicas")),
    (M.MAX_LAG, "gauge", N_("largest lag of this broker's follower replicas, in records "
                            "behind the leader's HW")),
    (M.OFFLINE_PARTITIONS, "gauge", N_("partitions without a leader, reported by every KRaft "
                                       "controller (ZooKeeper mode: the active controller "
                                       "only)")),
)


def mbean_table() -> Text:
    return text_table([{"MBean": m, "type": narrate(k), "meaning": tr(d)} for m, k, d in MBEANS])


# -- exercises ------------------------------------------------------------------------------
def _fired(c: Cluster) -> set[str]:
    return {rule.name for rule in RULES
            if any(firing_intervals(alert_states(pts, rule.for_ms))
                   for pts in condition_series(c, rule).values())}


_ALIASES = {"urp": "KafkaUnderReplicatedPartitions", "underreplicated":
            "KafkaUnderReplicatedPartitions", "underreplicatedpartitions":
            "KafkaUnderReplicatedPartitions", "shrink": "KafkaISRShrinking", "shrinking":
            "KafkaISRShrinking", "isrshrinking": "KafkaISRShrinking"}


def _rule_names(answer) -> set[str] | None:
    if isinstance(answer, str) or not hasattr(answer, "__iter__"):
        return None
    return {_ALIASES.get(str(a).strip().lower().replace("_", "").replace("kafka", ""), str(a))
            for a in answer}


#: exercise 1: broker 3 cut off for 20 s every 6 minutes, four times
SLOW_FLAPPING = [(k, k + 20000) for k in range(0, 24 * MINUTE, 6 * MINUTE)]


@cached(maxsize=2)
def slow_flapping_alerts(seed: int = SEED, *, kafka_version: str) -> frozenset[str]:
    """The rules that fire when broker 3 is cut off for 20 s every 6 minutes (4 times)."""
    c = monitored_cluster(seed, kafka_version=kafka_version)
    end = MINUTE + SLOW_FLAPPING[-1][1] + FIVE_MIN + MINUTE
    RateWorkload(c, c.producer("load", acks="all"), TOPIC, rate=RATE, duration_ms=end)
    for s, e in SLOW_FLAPPING:
        c.at(MINUTE + s, _Isolate(3, (1, 2)))
        c.at(MINUTE + e, _Heal())
    c.run_to(end)
    return frozenset(_fired(c))


def exercise_cluster(seed: int = SEED, *, kafka_version: str):
    """The exercise's cluster: notebook 06's (3 brokers of Kafka ``kafka_version``, topic
    payments led by brokers 1, 2, 1, replica.lag.time.max.ms 10 s, scraped every 15 s) with
    acks=all traffic for 25 minutes. Returns the cluster."""
    c = monitored_cluster(seed, kafka_version=kafka_version)
    RateWorkload(c, c.producer("load", acks="all"), TOPIC, rate=RATE, duration_ms=25 * MINUTE)
    return c


#: exercise 3: a --under-replicated-partitions output to read, as Kafka 3.8+ prints it (the
#: ``Elr:`` / ``LastKnownElr:`` columns, KAFKA-15585; empty: no ISR below min ISR)
URP_OUTPUT = "\n".join(
    f"\tTopic: {t}\tPartition: {p}\tLeader: {leader}\tReplicas: {replicas}\tIsr: {isr}"
    "\tElr: \tLastKnownElr: "
    for t, p, leader, replicas, isr in (("payments", 0, 1, "1,2,3", "1,3"),
                                        ("payments", 1, 3, "3,2,1", "3,1"),
                                        ("orders", 4, 1, "4,1,2", "1,4")))


def fired_by_incident(c: Cluster) -> dict[str, str]:
    """Per incident of the notebook's timeline: which of the two rules fired ("neither",
    "URP only", "shrink only" or "both"), as notebook 06's predictions ask."""
    fired: dict[str, set[str]] = {kind: set() for kind, _start in TIMELINE}
    for rule in RULES:
        for _b, pts in condition_series(c, rule).items():
            for s, _e in firing_intervals(alert_states(pts, rule.for_ms)):
                fired.setdefault(incident_at(s), set()).add(rule.name)
    names = {frozenset(): "neither", frozenset({"KafkaUnderReplicatedPartitions"}): "URP only",
             frozenset({"KafkaISRShrinking"}): "shrink only"}
    return {kind: names.get(frozenset(fired[kind]), "both") for kind, _start in TIMELINE}
