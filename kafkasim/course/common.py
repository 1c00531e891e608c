"""Helpers every notebook uses: plain-text tables, replica state rows, and a stepper that runs a
cluster message by message and records what each delivery changed.

Tables are plain text (``Text``) so that nbval can compare them exactly and a learner can read
them in any front-end.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from kafkasim.course.i18n import tr
from kafkasim.course.narration import narrate
from kafkasim.observe.snapshots import restore, snapshot
from kafkasim.runtime.cluster import Cluster
from kafkasim.viz.style import text_width


def cached(maxsize: int) -> Callable[[Callable], Callable]:
    """``functools.lru_cache`` keyed by the arguments as the signature binds them, defaults
    filled in: ``f()``, ``f(100)`` and ``f(n=100)`` are one entry when 100 is the default
    (``lru_cache`` alone keeps three, and a notebook cell that shows a grade computed it again).
    The wrapper has ``cache_clear`` and ``cache_info``."""
    def decorate(fn: Callable) -> Callable:
        signature = inspect.signature(fn)

        @functools.lru_cache(maxsize=maxsize)
        def by_arguments(args: tuple, kwargs: tuple):
            return fn(*args, **dict(kwargs))

        @functools.wraps(fn)
        def call(*args, **kwargs):
            bound = signature.bind(*args, **kwargs)
            bound.apply_defaults()
            return by_arguments(bound.args, tuple(bound.kwargs.items()))

        call.cache_clear = by_arguments.cache_clear
        call.cache_info = by_arguments.cache_info
        return call
    return decorate


def notebook_version(kafka_version: str | None, helper: str) -> str:
    """The Kafka release a course helper runs: ``kafka_version`` when the caller names one, else
    the ``KAFKA_VERSION`` the notebook set in its first code cell. There is no hidden default:
    outside a notebook that sets it, the caller must name the version.

    >>> notebook_version("4.3", "check_leo")
    '4.3'
    """
    if kafka_version is not None:
        if not isinstance(kafka_version, str):
            raise TypeError(f"{helper}: kafka_version must be a release string such as \"4.3\" "
                            f"(0.8.2 to 4.x), not {type(kafka_version).__name__} "
                            f"{kafka_version!r}")
        return kafka_version
    found = _notebook_namespace().get("KAFKA_VERSION")
    if isinstance(found, str):
        return found
    raise ValueError(f"{helper}: no Kafka version: pass kafka_version=\"4.3\" (any release from "
                     f"0.8.2 to 4.x), or set KAFKA_VERSION in the notebook's first code cell")


def _notebook_namespace() -> dict:
    """The running notebook's variables ({} outside IPython)."""
    try:
        from IPython import get_ipython
    except ImportError:           # pragma: no cover - IPython is a course requirement
        return {}
    ip = get_ipython()
    return getattr(ip, "user_ns", None) or {}


class Text(str):
    """A string that shows as itself (no quotes) when it is the last value of a cell."""

    def __repr__(self) -> str:
        return str(self)


class Name(str):
    """A name the learner or Kafka gave (a client id, a node, a topic): a table cell shows it as
    it is in every language, even when it spells a course word (a producer called "writer" is
    not the capstone's 쓰는 쪽)."""


def text_table(rows: Iterable[dict | Sequence], columns: Sequence[str] | None = None,
               *, title: str | None = None) -> Text:
    """Left-aligned, fixed-width text table of ``rows`` (dicts or sequences)."""
    rows = list(rows)
    if columns is None:
        if rows and isinstance(rows[0], dict):
            columns = list(rows[0])
        else:
            columns = [str(i) for i in range(len(rows[0]) if rows else 0)]
    cells = [[_fmt(r.get(c) if isinstance(r, dict) else r[i]) for i, c in enumerate(columns)]
             for r in rows]
    heads = [narrate(c) for c in columns]   # a header reads in the course language (narration)
    widths = [max([text_width(c)] + [text_width(row[i]) for row in cells])
              for i, c in enumerate(heads)]
    out = []
    if title:
        out.append(title)
    out.append("  ".join(_ljust(c, w) for c, w in zip(heads, widths, strict=True)).rstrip())
    out.append("  ".join("-" * w for w in widths))
    for row in cells:
        out.append("  ".join(_ljust(v, w) for v, w in zip(row, widths, strict=True)).rstrip())
    return Text("\n".join(out))




def _ljust(text: str, width: int) -> str:
    return text + " " * (width - text_width(text))


def _fmt(v) -> str:
    if v is None:
        return "-"
    if isinstance(v, bool):
        return tr("yes") if v else tr("no")
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(str(x) for x in v) + "]"
    if isinstance(v, float):
        return f"{v:g}"
    if isinstance(v, Name):
        return str(v)           # the learner's or Kafka's name: never translated
    if isinstance(v, str):
        return narrate(v)       # a role, a state, a trace detail: in the course language
    return str(v)


def ids(xs: Iterable[int]) -> str:
    """``[1, 2, 3]`` -> ``"1,2,3"``, as Kafka's tools print broker lists."""
    return ",".join(str(x) for x in xs)


# -- replica state ------------------------------------------------------------------------------
def replica_state(c: Cluster, topic: str, partition: int = 0) -> Text:
    """One line per replica: broker, role, LEO, HW and ISR membership, plus the ISR itself."""
    st = c.inspect.partition_state(topic, partition)
    rows = []
    for r in c.replica_table(topic, partition):
        role = r["role"] if r["state"] != "stopped" else "stopped"
        rows.append({"broker": r["broker"], "role": role, "LEO": r["LEO"], "HW": r["HW"],
                     "in ISR": r["in_isr"]})
    t = text_table(rows)
    head = narrate(f"{topic}-{partition}: leader {st['leader']}, ISR {st['isr']}")
    return Text(f"{head}\n{t}")


def leo_hw(c: Cluster, topic: str, partition: int = 0) -> dict[int, tuple[int, int]]:
    """broker -> (LEO, HW) for every assigned replica."""
    return {r["broker"]: (r["LEO"], r["HW"]) for r in c.replica_table(topic, partition)}


def replica_sets(c: Cluster, topic: str, partition: int = 0) -> dict[str, list[int]]:
    """AR (assigned replicas), ISR and OSR (assigned but out of sync) of a partition."""
    st = c.inspect.partition_state(topic, partition)
    ar = list(st["replicas"])
    isr = list(st["isr"])
    return {"AR": ar, "ISR": isr, "OSR": [b for b in ar if b not in isr]}


def settle(c: Cluster, timeout_ms: int = 30000) -> bool:
    """Run until every ISR replica has the leader's log and HW and no produce is pending."""
    from kafkasim.scenarios.scenario import _settled

    return c.run_until(_settled, timeout_ms)


def isr_changes(c: Cluster, topic: str | None = None, partition: int | None = None) -> Text:
    """Every committed ISR change in the trace, with who made it."""
    rows = []
    for t, kind, node, tp, p, detail in c.trace.rows:
        if topic is not None and tp != topic or partition is not None and p != partition:
            continue
        if kind == "isr":
            old, new = detail
            what = "shrink" if len(new) < len(old) else "expand"
            rows.append({"time_ms": t, "change": what, "old ISR": list(old), "new ISR": list(new),
                         "by": f"leader {node}"})
    if not rows:
        return Text(narrate("(no ISR change)"))
    return text_table(rows)


def meter_counts(c: Cluster) -> dict[str, int]:
    """Cluster-wide IsrShrinksPerSec / IsrExpandsPerSec counts."""
    return {m: sum(b.meters[m] for b in c.brokers.values())
            for m in ("IsrShrinksPerSec", "IsrExpandsPerSec")}


# -- message-by-message stepping ----------------------------------------------------------------
@dataclass
class StepRow:
    time_ms: int
    what: str
    state: dict[int, tuple[int, int]]    # broker -> (LEO, HW) after the step
    isr: tuple[int, ...]
    snapshot: bytes | None = None        # the whole cluster after the step (keep_snapshots)
    msg_id: int | None = None            # the delivered message (its arrow in viz.spacetime)


def next_event(c: Cluster):
    """The next engine event as (time, kind, args), or None (reads the queue, does not run it)."""
    nxt = c.engine.peek()
    return None if nxt is None else (nxt.time_ms, nxt.kind, nxt.args)


def describe_message(msg, src, dst, topic: str, partition: int) -> str | None:
    """A short English line for a Produce/Fetch message about ``topic-partition``, else None."""
    name = type(msg).__name__
    if name == "ProduceRequest":
        for t, p, rids, *_rest in msg.partitions:
            if (t, p) == (topic, partition):
                n = len(rids)
                return f"Produce {src}->{dst}: {n} record{'s' if n != 1 else ''}"
    elif name == "ProduceResponse":
        for t, p, err, base in msg.partitions:
            if (t, p) == (topic, partition):
                return f"ProduceResponse {src}->{dst}: " + \
                    (f"acked, offset {base}" if err == "NONE" else err)
    elif name == "FetchRequest":
        for fp in msg.partitions:
            if (fp.topic, fp.partition) == (topic, partition):
                who = f"broker {src}" if msg.replica_id >= 0 else "consumer"
                return f"Fetch {src}->{dst}: {who} asks from offset {fp.fetch_offset}"
    elif name == "FetchResponse":
        for pd in msg.partitions:
            if (pd.topic, pd.partition) == (topic, partition):
                n = len(pd.records)
                recs = "no records" if n == 0 else (
                    f"offset {pd.records.base_offset}" if n == 1
                    else f"offsets {pd.records.base_offset}-{pd.records.base_offset + n - 1}")
                return f"FetchResponse {src}->{dst}: {recs}, HW {pd.high_watermark}"
    return None


class Stepper:
    """Run a cluster one event at a time, keeping a row per Produce/Fetch message delivered for
    one partition (and per change of any replica's LEO, HW or the ISR)."""

    def __init__(self, c: Cluster, topic: str, partition: int = 0, *,
                 keep_snapshots: bool = False) -> None:
        self.c = c
        self.topic = topic
        self.partition = partition
        self.keep_snapshots = keep_snapshots
        self.rows: list[StepRow] = []
        self._last = self._state()

    def _add(self, what: str, state, isr, msg_id: int | None = None) -> None:
        snap = snapshot(self.c) if self.keep_snapshots else None
        self.rows.append(StepRow(self.c.now, what, state, isr, snap, msg_id))

    def cluster_at(self, i: int) -> Cluster:
        """The cluster as it was after row ``i`` (0-based; needs keep_snapshots)."""
        snap = self.rows[i].snapshot
        if snap is None:
            raise ValueError("this Stepper was created without keep_snapshots=True")
        return restore(snap)

    def _state(self):
        return leo_hw(self.c, self.topic, self.partition), tuple(self.c.isr(self.topic,
                                                                           self.partition))

    def note(self, what: str) -> None:
        """Add a row describing something done from outside (e.g. ``producer.send``)."""
        state, isr = self._state()
        self._add(what, state, isr)
        self._last = (state, isr)

    def step(self) -> bool:
        c = self.c
        ev = next_event(c)
        if ev is None:
            return False
        what = msg_id = None
        if ev[1] == "deliver":
            src, dst, msg, _sent_ms, msg_id = ev[2][:5]   # kafkasim.runtime.network.DELIVERY
            what = describe_message(msg, src, dst, self.topic, self.partition)
            if what is None:
                msg_id = None
        c.step()
        state, isr = self._state()
        if what is None and (state, isr) != self._last:
            what = "timer"
        if what is not None:
            self._add(what, state, isr, msg_id)
        self._last = (state, isr)
        return True

    def run_until(self, cond: Callable[[Cluster], bool], timeout_ms: int = 10000) -> bool:
        deadline = self.c.now + timeout_ms
        while not cond(self.c):
            ev = next_event(self.c)
            if ev is None or ev[0] > deadline:
                return False
            self.step()
        return True

    def table(self, brokers: Sequence[int] | None = None, *, fields: Sequence[str] = ("LEO", "HW"),
              changes_only: bool = False) -> Text:
        """The recorded rows; one LEO and/or HW column per broker (sorted by id)."""
        brokers = list(brokers) if brokers is not None else \
            sorted(self.c.assignment(self.topic)[self.partition])
        out = []
        prev = None
        for i, r in enumerate(self.rows):
            key = (r.state, r.isr)
            if changes_only and key == prev:
                continue
            prev = key
            row = {"#": i + 1, "t(ms)": r.time_ms, "what happened": r.what}
            for b in brokers:
                leo, hw = r.state[b]
                if "LEO" in fields:
                    row[f"b{b} LEO"] = leo
                if "HW" in fields:
                    row[f"b{b} HW"] = hw
            if "ISR" in fields:
                row["ISR"] = list(r.isr)
            out.append(row)
        return text_table(out)


def show_source(*fns: Callable) -> Text:
    """The source of Kafka's rule(s) as the simulator writes them, to print in a cell."""
    import inspect

    return Text("\n".join(inspect.getsource(fn) for fn in fns))


def player_state(player) -> Text:
    """A ``kafkasim.widgets.Player``'s current time, leader, ISR and every replica's LEO/HW."""
    r = player.readout()
    c = player.cluster
    st = c.inspect.partition_state(r["topic"], r["partition"])
    rows = [{"broker": x["broker"], "role": x["role"] if x["state"] != "stopped" else "stopped",
             "LEO": x["LEO"], "HW": x["HW"], "in ISR": x["in_isr"]} for x in r["replicas"]]
    head = narrate(f"{r['topic']}-{r['partition']}: leader {st['leader']}, ISR {st['isr']}")
    return Text(f"t={r['time_ms']} ms  {head}\n{text_table(rows)}")


def error_line(err: BaseException) -> Text:
    """An exception as a cell prints it: its class name (Kafka's, where it is one) and its
    message in the course language."""
    lines = []
    for line in str(err).split("\n"):
        body = line.lstrip()
        lines.append(line[:len(line) - len(body)] + narrate(body))
    return Text(f"{type(err).__name__}: " + "\n".join(lines))
