"""Notebook 04 (consumer positions): last committed offset, current position, high watermark,
log end offset, and lag as ``kafka-consumer-groups`` reports it.

Concept C12.
"""

from __future__ import annotations

from functools import lru_cache

from kafkasim.cluster import Cluster
from kafkasim.course.common import COURSE_VERSION, Text, settle, text_table

SEED = 4
TOPIC = "orders"
GROUP = "billing"


class PositionsDemo:
    """A 1-partition RF 3 topic, a producer, and a consumer in group ``billing``.

    ``produce(n, replicate=False)`` sends records that the followers do not copy yet (their
    fetch answers are held), so the HW stays where it is; ``replicate()`` lets them catch up."""

    def __init__(self, seed: int = SEED, topic: str = TOPIC, group: str = GROUP) -> None:
        self.topic = topic
        self.group = group
        c = self.c = Cluster(brokers=3, seed=seed, kafka_version=COURSE_VERSION)
        c.create_topic(topic, 1, 3, assignment=[[1, 2, 3]])
        self.producer = c.producer("orders-app", acks="1", linger_ms=0)
        self.consumer = c.consumer(group=group, name=f"{group}-1", auto_offset_reset="earliest")
        self.consumer.assign(topic, [0])
        self.holding = False
        self.sent = 0

    def produce(self, n: int, *, replicate: bool = True) -> None:
        c = self.c
        if not replicate and not self.holding:
            settle(c)
            for b in (2, 3):
                c.hold(type="FetchResponse", src=1, dst=b)
            self.holding = True
        elif replicate and self.holding:
            self.replicate()
        for _ in range(n):
            self.producer.send(self.topic, f"order-{self.sent}", partition=0)
            self.sent += 1
        self.producer.flush()
        if replicate:
            settle(c)

    def replicate(self) -> None:
        """Let the followers copy everything: the HW catches up with the LEO."""
        if self.holding:
            for b in (2, 3):
                self.c.release(type="FetchResponse", src=1, dst=b)
            self.holding = False
        settle(self.c)

    def poll(self, max_records: int) -> list[int]:
        return [r.offset for r in self.consumer.poll(max_records=max_records)]

    def commit(self) -> None:
        self.consumer.commit()

    def positions(self) -> dict:
        c = self.c
        leader = c.leader(self.topic)
        log = c.log(leader, self.topic)
        return {"committed": self.consumer.committed(self.topic, 0),
                "position": self.consumer.position(self.topic, 0),
                "HW": log.high_watermark, "LEO": log.log_end_offset}

    def table(self) -> Text:
        p = self.positions()
        cons = self.consumer
        rows = [
            {"name": "last committed offset", "value": p["committed"],
             "where it lives": f"group '{self.group}' (the __consumer_offsets topic)",
             "meaning": "where a restarted consumer resumes"},
            {"name": "current position", "value": p["position"],
             "where it lives": "the consumer's memory",
             "meaning": "the next offset poll() returns"},
            {"name": "high watermark (HW)", "value": p["HW"], "where it lives": "the leader",
             "meaning": "first offset not yet on every ISR member"},
            {"name": "log end offset (LEO)", "value": p["LEO"], "where it lives": "the leader",
             "meaning": "the offset the next record will get"},
        ]
        lag = cons.lag(self.topic, 0)
        return Text(text_table(rows) + f"\nconsumer's records-lag (HW - position): {lag}")

    def group_text(self) -> Text:
        return Text(self.c.describe_group(self.group).strip("\n"))


def positions_walkthrough(seed: int = SEED) -> tuple[PositionsDemo, list[tuple[str, Text]]]:
    """The four positions taking shape step by step (10 records, 8 replicated, 6 read,
    4 committed)."""
    d = PositionsDemo(seed)
    steps = []
    d.produce(8)
    steps.append(("8 records produced and replicated", d.table()))
    d.produce(2, replicate=False)
    steps.append(("2 more records on the leader only", d.table()))
    d.poll(4)
    d.commit()
    steps.append(("the consumer reads 4 records and commits", d.table()))
    d.poll(2)
    steps.append(("it reads 2 more, not committed yet", d.table()))
    return d, steps


@lru_cache(maxsize=1)
def quiz_positions() -> dict:
    """The exercise's scenario: 12 records, the last 3 not yet replicated; the consumer reads
    5, commits, reads 2 more."""
    d = PositionsDemo(seed=SEED + 10, topic="quiz", group="quiz-group")
    d.produce(9)
    d.produce(3, replicate=False)
    d.poll(5)
    d.commit()
    d.poll(2)
    return d.positions()


QUIZ_TEXT = ("12 records are produced; the followers copy the first 9 but not the last 3. The "
             "consumer reads 5 records, commits, then reads 2 more.")


def check_positions_order(produced: int, replicated: int, consumed: int, committed: int) -> None:
    """Raise ValueError unless 0 <= committed <= consumed <= replicated <= produced, naming the
    rule a state breaks: followers copy only what the leader has; a consumer reads only below
    the high watermark (here: what every replica holds); it commits a position it reached."""
    for name, v in (("produced", produced), ("replicated", replicated), ("consumed", consumed),
                    ("committed", committed)):
        if v < 0:
            raise ValueError(f"{name}={v}: a count of records cannot be negative")
    if replicated > produced:
        raise ValueError(f"replicated={replicated} > produced={produced}: followers copy only "
                         "records the leader has (replicated <= produced)")
    if consumed > replicated:
        raise ValueError(f"consumed={consumed} > replicated={replicated}: a consumer reads only "
                         f"below the high watermark, which is {replicated} here (the records "
                         "every ISR member holds), so consumed <= replicated"
                         + (f" (and only {produced} were produced)" if consumed > produced
                            else ""))
    if committed > consumed:
        raise ValueError(f"committed={committed} > consumed={consumed}: the consumer commits "
                         "its position, the offset after the last record it read, so "
                         "committed <= consumed")


def positions_demo(produced: int = 10, replicated: int = 8, consumed: int = 6,
                   committed: int = 4, seed: int = SEED) -> PositionsDemo:
    """A PositionsDemo brought to the state the four numbers describe. Impossible numbers are
    refused (ValueError saying which rule they break), never clamped:
    committed <= consumed <= replicated <= produced."""
    check_positions_order(produced, replicated, consumed, committed)
    d = PositionsDemo(seed)
    if replicated:
        d.produce(replicated)
    if produced > replicated:
        d.produce(produced - replicated, replicate=False)
    d.poll(committed)          # poll(max_records=0) still sets the position (to 0)
    d.commit()
    if consumed > committed:
        d.poll(consumed - committed)
    return d


def positions_text(produced: int = 10, replicated: int = 8, consumed: int = 6,
                   committed: int = 4) -> Text:
    """The explorer's text: a one-line picture of the log, the positions table and the
    consumer-groups output."""
    d = positions_demo(produced, replicated, consumed, committed)
    return Text(log_line(d.positions()) + "\n\n" + d.table() + "\n\n" + d.group_text())


def positions_view(produced: int = 10, replicated: int = 8, consumed: int = 6,
                   committed: int = 4) -> list:
    """The explorer's view: the text and the leader's and followers' logs."""
    from kafkasim.viz import replica_logs

    d = positions_demo(produced, replicated, consumed, committed)
    text = Text(log_line(d.positions()) + "\n\n" + d.table() + "\n\n" + d.group_text())
    return [text, replica_logs(d.c, d.topic)]


def restart_consumer(d: PositionsDemo) -> Text:
    """The consumer dies without committing; a new member of the same group takes over the
    partition. Where does it start, and what does it read?"""
    before = d.positions()
    d.c.clients.pop(d.consumer.client_id, None)
    new = d.c.consumer(group=d.group, name=f"{d.group}-2", auto_offset_reset="earliest")
    new.assign(d.topic, [0])
    got = [r.offset for r in new.poll()]
    d.consumer = new
    return Text(f"the old consumer had read up to position {before['position']} but committed "
                f"{before['committed']}\nthe new consumer starts at the committed offset and "
                f"reads offsets {got}: offsets {before['committed']}.."
                f"{before['position'] - 1} a second time")


def log_line(p: dict) -> str:
    """The leader's log as one line of cells with the four positions marked under it."""
    n = max(p["LEO"], 1)
    cells = []
    for o in range(n):
        if o < p["HW"]:
            cells.append(f"[{o:>2}]")
        else:
            cells.append(f"({o:>2})")
    marks = []
    for label, key in (("C", "committed"), ("P", "position"), ("H", "HW"), ("L", "LEO")):
        v = p[key]
        if v is not None:
            marks.append((v, label))
    under = [" " * 4 for _ in range(n + 1)]
    for v, label in marks:
        if 0 <= v <= n:
            under[v] = (under[v].strip() + label).ljust(4)
    return ("".join(cells) + "\n" + "".join(under).rstrip() +
            "\n[n] committed (below HW)   (n) on the leader only   C committed offset, "
            "P position, H HW, L LEO (each marks the start of that offset's cell)")
