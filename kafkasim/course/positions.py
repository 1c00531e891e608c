"""Notebook 04 (consumer positions): formatting and grading for the last committed offset, the
current position, the high watermark, the log end offset, and lag as ``kafka-consumer-groups``
reports it. The notebook builds its clusters and consumers in its own cells; this module reads
them (tables, a drawing) and grades the exercises.

Concept C12. Kafka: ``KafkaConsumer.position`` / ``committed``, ``ConsumerGroupCommand``
(``LOG-END-OFFSET`` is ``Admin.listOffsets(latest)``, which brokers answer with the HW for
``read_uncommitted`` clients: ``Partition.fetchOffsetForTimestamp``), the consumer metric
``records-lag`` (``FetchMetricsManager``: HW - position).
"""

from __future__ import annotations

from functools import lru_cache

from kafkasim.course.common import Text, notebook_version, settle, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.observe.snapshots import restore, snapshot
from kafkasim.runtime.cluster import Cluster

SEED = 4
TOPIC = "orders"
GROUP = "billing"


# -- reading a cluster and a consumer (formatting only) -------------------------------------------
def positions(c: Cluster, consumer, topic: str = TOPIC, partition: int = 0) -> dict:
    """The four offsets: the group's committed offset and the consumer's position (None before
    the first commit / poll), the leader's HW and LEO."""
    log = c.log(c.leader(topic, partition), topic, partition)
    return {"committed": consumer.committed(topic, partition),
            "position": consumer.position(topic, partition),
            "HW": log.high_watermark, "LEO": log.log_end_offset}


def positions_table(c: Cluster, consumer, topic: str = TOPIC, partition: int = 0, *,
                    prediction: dict | None = None) -> Text:
    """The four offsets, who keeps each, and (with ``prediction``) what you predicted."""
    p = positions(c, consumer, topic, partition)
    group = consumer.config.get("group.id", "?")
    where = {"committed": tr("group '{group}' (the __consumer_offsets topic)", group=group),
             "position": tr("the consumer's memory"), "HW": tr("the leader"),
             "LEO": tr("the leader")}
    names = {"committed": tr("last committed offset"), "position": tr("current position"),
             "HW": tr("high watermark (HW)"), "LEO": tr("log end offset (LEO)")}
    rows = []
    for k in ("committed", "position", "HW", "LEO"):
        row = {"offset": names[k], "value": p[k], N_("kept by"): where[k]}
        if prediction is not None:
            guess = prediction.get(k)
            row[tr("you predicted")] = guess
            row[tr("match")] = "" if guess is None else (tr("yes") if guess == p[k] else tr("NO"))
        rows.append(row)
    lag = consumer.lag(topic, partition)   # None before the consumer has a position
    return Text(text_table(rows) + "\n" + tr("consumer's records-lag (HW - position): {lag}",
                                              lag="-" if lag is None else lag))


def log_line(p: dict) -> str:
    """The leader's log as one line of cells with the four positions marked under it."""
    n = max(p["LEO"], 1)
    cells = [f"[{o:>2}]" if o < p["HW"] else f"({o:>2})" for o in range(n)]
    under = [" " * 4 for _ in range(n + 1)]
    for label, key in (("C", "committed"), ("P", "position"), ("H", "HW"), ("L", "LEO")):
        v = p[key]
        if v is not None and 0 <= v <= n:
            under[v] = (under[v].strip() + label).ljust(4)
    return ("".join(cells) + "\n" + "".join(under).rstrip() +
            "\n" + tr("[n] committed (below HW)   (n) on the leader only   C committed offset, "
                      "P position, H HW, L LEO (each marks the start of that offset's cell)"))


def positions_figure(c: Cluster, consumer, topic: str = TOPIC, partition: int = 0):
    """``viz.replica_logs`` (each replica's log, HW and LEO) with a row for the consumer group
    under it: the committed offset, the position, and what lies between them (read, not yet
    committed: re-read after a crash) and between the position and the HW (records-lag)."""
    from kafkasim.viz import replica_logs, style

    p = positions(c, consumer, topic, partition)
    fig = replica_logs(c, topic, partition)
    ax = fig.axes[0]
    y = -1.0
    lo, hi = ax.get_xlim()
    ax.set_ylim(-1.75, ax.get_ylim()[1])
    height = fig.get_figheight() + 1.25
    fig.set_figheight(height)
    fig.subplots_adjust(bottom=1.25 / height, top=1 - 0.55 / height)
    committed = p["committed"] if p["committed"] is not None else 0
    position = p["position"] if p["position"] is not None else committed
    spans = ((committed, position, style.PAUSED, "read, not committed",
              tr("read, not committed")),
             (position, p["HW"], style.IN_ISR, "records-lag", "records-lag"))
    for a, b, color, label, shown in spans:
        if b > a:
            ax.broken_barh([(a, b - a)], (y - 0.2, 0.4), facecolors=color, alpha=0.6,
                           gid=f"consumer:{label}")
            ax.text((a + b) / 2, y, shown, ha="center", va="center", fontsize=style.SMALL)
    for x, label, shown, color, above in (
            (p["committed"], "committed", tr("committed"), style.OUT_OF_ISR, True),
            (p["position"], "position", tr("position"), style.LEADER, False)):
        if x is None:
            continue
        ax.plot([x, x], [y - 0.3, y + 0.3], color=color, lw=3, zorder=5, gid=f"consumer:{label}")
        ax.text(x, y + 0.31 if above else y - 0.31, f"{shown}={x}", ha="center",
                va="bottom" if above else "top", fontsize=style.SMALL, color=color,
                fontweight="bold")
    ticks = list(ax.get_yticks())
    labels = [t.get_text() for t in ax.get_yticklabels()]
    group = tr("group {group}", group=consumer.config.get("group.id", "?"))
    ax.set_yticks([y, *ticks], [group, *labels],
                  fontsize=style.FONT)
    ax.set_xlim(lo, hi)
    return fig


def group_lag(c: Cluster, group: str, topic: str = TOPIC, partition: int = 0) -> dict:
    """``kafka-consumer-groups --describe``'s numbers for one partition, read from its output."""
    for line in c.describe_group(group).splitlines():
        cols = line.split()
        if len(cols) >= 6 and cols[0] == group and cols[1] == topic and cols[2] == str(partition):
            return {"CURRENT-OFFSET": cols[3], "LOG-END-OFFSET": cols[4], "LAG": cols[5]}
    raise ValueError(f"group {group!r} has no committed offset for {topic}-{partition}")


# -- the explorer ---------------------------------------------------------------------------------
def validate_positions(produced: int, replicated: int, consumed: int, committed: int) -> None:
    """Refuse impossible states: committed <= consumed <= replicated <= produced, all >= 0.
    A consumer reads only below the HW, so it cannot have consumed more than was replicated."""
    vals = {"produced": produced, "replicated": replicated, "consumed": consumed,
            "committed": committed}
    neg = [k for k, v in vals.items() if v < 0]
    if neg:
        raise ValueError(f"{neg[0]}={vals[neg[0]]}: a count of records cannot be negative")
    why = {("replicated", "produced"): "followers copy only what the leader has",
           ("consumed", "replicated"): "a consumer reads only below the high watermark, i.e. "
                                       "records every ISR member has",
           ("committed", "consumed"): "commit() saves the position: a group cannot commit "
                                      "past what its consumer has read"}
    for (a, b), reason in why.items():
        if vals[a] > vals[b]:
            raise ValueError(f"impossible: {a}={vals[a]} > {b}={vals[b]} ({reason})")


def positions_demo(produced: int = 10, replicated: int = 8, consumed: int = 6,
                   committed: int = 4, seed: int = SEED, *, kafka_version: str | None = None):
    """The explorer's cluster (the notebook's section 2 with other numbers, on Kafka
    ``kafka_version``, the notebook's unless named): ``produced`` records of which the followers
    copied ``replicated``; the consumer read ``committed``, committed, and read up to
    ``consumed``. Returns (cluster, consumer)."""
    validate_positions(produced, replicated, consumed, committed)
    version = notebook_version(kafka_version, "positions_demo")
    c = Cluster(brokers=3, seed=seed, kafka_version=version)
    c.create_topic(TOPIC, 1, 3, assignment=[[1, 2, 3]])
    producer = c.producer("orders-app", acks="1", linger_ms=0)
    consumer = c.consumer(group=GROUP, name=f"{GROUP}-1", auto_offset_reset="earliest")
    consumer.subscribe(TOPIC)   # joins the group: gets its only partition
    producer.send_many(TOPIC, [f"order-{i}" for i in range(replicated)], partition=0)
    producer.flush()
    settle(c)
    if produced > replicated:
        for b in (2, 3):
            c.hold(type="FetchResponse", src=1, dst=b)
        producer.send_many(TOPIC, [f"order-{i}" for i in range(replicated, produced)],
                           partition=0)
        producer.flush()
    consumer.poll(max_records=committed)     # max_records=0 still sets the position (to 0)
    consumer.commit()
    if consumed > committed:
        consumer.poll(max_records=consumed - committed)
    return c, consumer


def positions_view(produced: int = 10, replicated: int = 8, consumed: int = 6,
                   committed: int = 4, kafka_version: str | None = None) -> list:
    """The explorer's view: the positions table, ``kafka-consumer-groups`` and the figure
    (``kafka_version``: the notebook's, which passes it)."""
    c, consumer = positions_demo(produced, replicated, consumed, committed,
                                 kafka_version=notebook_version(kafka_version, "positions_view"))
    text = Text(positions_table(c, consumer) + "\n\n" + c.describe_group(GROUP).strip("\n"))
    return [text, positions_figure(c, consumer)]


# -- graders --------------------------------------------------------------------------------------
def quiz_positions(kafka_version: str | None = None) -> dict:
    """``checks.check_positions``' scenario: 12 records, the last 3 not yet replicated; the
    consumer reads 5, commits, reads 2 more."""
    return _quiz_positions(notebook_version(kafka_version, "quiz_positions"))


@lru_cache(maxsize=2)
def _quiz_positions(kafka_version: str) -> dict:
    c, consumer = positions_demo(12, 9, 7, 5, seed=SEED + 10, kafka_version=kafka_version)
    return positions(c, consumer)


def takeover_outcome(kafka_version: str | None = None) -> dict:
    """Exercise 1: 12 records, the followers have the first 9; the consumer reads 7 and commits
    after 5; the followers catch up; the consumer dies; a new member of the group reads 3
    records and commits. What does kafka-consumer-groups print?"""
    return _takeover_outcome(notebook_version(kafka_version, "takeover_outcome"))


@lru_cache(maxsize=2)
def _takeover_outcome(kafka_version: str) -> dict:
    c, _old = positions_demo(12, 9, 7, 5, seed=SEED + 10, kafka_version=kafka_version)
    for b in (2, 3):
        c.release(type="FetchResponse", src=1, dst=b)
    settle(c)
    new = c.consumer(group=GROUP, name=f"{GROUP}-2", auto_offset_reset="earliest")
    new.subscribe(TOPIC)
    new.poll(max_records=3)
    new.commit()
    return {k: int(v) for k, v in group_lag(c, GROUP).items()}


@lru_cache(maxsize=2)
def _rereads_cluster_bytes(kafka_version: str) -> bytes:
    c = Cluster(brokers=3, seed=SEED + 20, kafka_version=kafka_version)
    c.create_topic(TOPIC, 1, 3, assignment=[[1, 2, 3]])
    producer = c.producer("orders-app", acks="all", linger_ms=0)
    producer.send_many(TOPIC, [f"order-{i}" for i in range(20)], partition=0)
    producer.flush()
    settle(c)
    return snapshot(c)


def rereads(steps, kafka_version: str | None = None) -> tuple[list[int], list[int]]:
    """Run the learner's ``steps(consumer)`` on a fresh consumer of group billing (20 records,
    all replicated, Kafka ``kafka_version``: the notebook's unless named), then let a new member
    take over and read everything. Returns (offsets the first consumer read, offsets the new
    member read)."""
    c = restore(_rereads_cluster_bytes(notebook_version(kafka_version, "rereads")))
    first = c.consumer(group=GROUP, name=f"{GROUP}-1", auto_offset_reset="earliest")
    first.subscribe(TOPIC)
    read: list[int] = []
    real_poll = first.poll

    def poll(*args, **kwargs):
        got = real_poll(*args, **kwargs)
        read.extend(r.offset for r in got)
        return got

    first.poll = poll
    steps(first)
    new = c.consumer(group=GROUP, name=f"{GROUP}-2", auto_offset_reset="earliest")
    new.subscribe(TOPIC)
    return read, [r.offset for r in new.poll(max_records=100)]


def read_twice(successor, read: list[int], first) -> Text:
    """What the group's new member ``successor`` read (``read``: its offsets) and which of those
    offsets the first member ``first`` had already read (below its position)."""
    again = sorted(set(read) & set(range(first.position(TOPIC))))
    return Text(tr("{name} read offsets {offsets}", name=successor.client_id, offsets=read) + "\n" +
                tr("read a second time: {offsets}", offsets=again))
