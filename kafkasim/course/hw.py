"""Notebook 03 (high watermark and commit): what "committed" means, the HW example from the
notes, the commit of offset 6 fetch by fetch, the one-fetch delay of followers, and what
consumers may read.

Concepts C13, C14 and C15.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafkasim.core import rules
from kafkasim.core.rules import ReplicaState
from kafkasim.course.common import (  # noqa: F401  (show_source: for the notebook)
    Stepper,
    Text,
    leo_hw,
    notebook_version,
    replica_state,
    settle,
    show_source,
    text_table,
)
from kafkasim.course.i18n import N_, tr
from kafkasim.course.narration import narrate
from kafkasim.runtime.cluster import Cluster
from kafkasim.viz.style import text_width

SEED = 3
TOPIC = "commit-demo"
HW_TOPIC = "hw-demo"


def high_watermark(leos: Mapping[int, int], isr: Sequence[int]) -> int:
    """HW as the leader computes it when every ISR member's LEO is known and no follower outside
    the ISR counts as caught up: Kafka's ``maybe_increment_leader_hw`` (kafkasim.core.rules)
    from a fresh leader, i.e. the smallest LEO in the ISR (exclusive: the first offset not yet on
    every ISR member)."""
    missing = [b for b in isr if b not in leos]
    if missing:
        raise ValueError(f"no LEO given for ISR member(s) {missing}")
    if not isr:
        raise ValueError("the ISR always holds at least the leader")
    leader_leo = max(leos[b] for b in isr)   # the leader is an ISR member; the rule needs its LEO
    followers = [ReplicaState(b, log_end_offset=leo) for b, leo in sorted(leos.items())]
    return rules.maybe_increment_leader_hw(leader_leo, -1, followers, tuple(isr), 0, 0,
                                           include_caught_up=False)


def log_listing(c: Cluster, topic: str, partition: int = 0) -> Text:
    """Each replica's offsets and values, with the leader's HW drawn as a bar: `|`."""
    leader = c.leader(topic, partition)
    hw = c.log(leader, topic, partition).high_watermark if leader >= 0 else 0
    lines = []
    for b in sorted(c.assignment(topic)[partition]):
        recs = c.log_records(b, topic, partition)
        cells = []
        for off, _ep, _v in recs:
            if off == hw:
                cells.append("|")
            cells.append(str(off))
        if len(recs) == hw:
            cells.append("|")
        role = narrate("leader") if b == leader else narrate("follower")
        # the logs line up: a translation puts the pad where it reads well (after the colon)
        pad = " " * (text_width(narrate("follower")) - text_width(role))
        lines.append(tr("broker {b} ({role}{pad}): {cells}", b=b, role=role, pad=pad,
                        cells=" ".join(cells)))
    lines.append(tr("'|' = the leader's high watermark, HW = {hw}: offsets 0..{last} "
                    "committed", hw=hw, last=hw - 1))
    return Text("\n".join(lines))


# -- C15: committing offset 6, fetch by fetch ----------------------------------------------------
def commit_process(seed: int = SEED, keep_snapshots: bool = False, *,
                   kafka_version: str | None = None) -> Stepper:
    """Offsets 0-5 replicated and committed; then the producer writes offset 6 (acks=all). A row
    per Produce/Fetch message until both followers know HW 7. (For ``checks.check_hw_row``; the
    notebook runs the same steps in its own cells.) ``kafka_version``: the notebook's
    ``KAFKA_VERSION`` unless named (``common.notebook_version``)."""
    version = notebook_version(kafka_version, "commit_process")
    c = Cluster(brokers=3, seed=seed, kafka_version=version)
    c.create_topic(TOPIC, 1, 3, assignment=[[1, 2, 3]])
    prod = c.producer("p", acks="all", linger_ms=0)
    for i in range(6):
        prod.send(TOPIC, f"m{i}", partition=0)
    prod.flush()
    settle(c)
    c.run(1000)      # quiet: both followers' fetches are parked on the leader
    s = Stepper(c, TOPIC, keep_snapshots=keep_snapshots)
    s.note("start: offsets 0-5 on every replica, HW 6")
    prod.send(TOPIC, "m6", partition=0)
    s.run_until(lambda cl: all(hw == 7 for _leo, hw in leo_hw(cl, TOPIC).values()), 5000)
    return s


def commit_messages(s: Stepper) -> Text:
    """Only the requests and responses in the commit: no separate acknowledgement exists."""
    kinds: dict[str, int] = {}
    for r in s.rows[1:]:
        k = r.what.split(" ", 1)[0]
        kinds[k] = kinds.get(k, 0) + 1
    return text_table([{"message": k, "count": n} for k, n in sorted(kinds.items())])


def follower_hw_delay(s: Stepper) -> Text:
    """When the leader's HW reached 7 and when each follower learned it."""
    first: dict[str, int] = {}
    for r in s.rows:
        for b, (_leo, hw) in r.state.items():
            key = tr("broker {b}", b=b)
            if hw == 7 and key not in first:
                first[key] = r.time_ms
    leader = s.c.leader(s.topic)
    t0 = first[tr("broker {b}", b=leader)]
    rows = [{"replica": k + (tr(" (leader)") if k == tr("broker {b}", b=leader) else ""),
             N_("HW 7 at t(ms)"): t, N_("after the leader (ms)"): t - t0}
            for k, t in sorted(first.items())]
    return text_table(rows)


def commit_facts(s: Stepper, hw: int = 7) -> dict:
    """What the commit's rows show: the message after which the leader's HW reached ``hw``
    (its type: "Produce", "Fetch", ...), whether the producer had its answer before every
    follower knew that HW ("before"/"after"), and how long after the leader the slower follower
    learned it (ms)."""
    leader = s.c.leader(s.topic)
    first: dict[int, tuple[int, str]] = {}
    answered = None
    for r in s.rows:
        for b, (_leo, b_hw) in r.state.items():
            if b_hw >= hw and b not in first:
                first[b] = (r.time_ms, r.what.split(" ", 1)[0])
        if answered is None and r.what.startswith("ProduceResponse"):
            answered = r.time_ms
    t_leader, moved_by = first[leader]
    followers = max(t for b, (t, _what) in first.items() if b != leader)
    return {"moved by": moved_by,
            "answered": "before" if answered is not None and answered < followers else "after",
            "delay ms": followers - t_leader}


def commit_frame(s: Stepper, i: int) -> Text:
    """Row ``i`` of the commit process as text: the step and every replica's log and HW."""
    i = max(0, min(i, len(s.rows) - 1))
    r = s.rows[i]
    lines = [tr("step {i}/{n}  t={t} ms  {what}", i=i + 1, n=len(s.rows), t=r.time_ms,
                what=narrate(r.what))]
    for b in sorted(r.state):
        leo, hw = r.state[b]
        cells = " ".join(("[" + str(o) + "]") if o < hw else f" {o} " for o in range(leo))
        lines.append("  " + tr("broker {b}", b=b) + f": {cells}   LEO {leo}  HW {hw}")
    lines.append("  " + tr("[n] = below this replica's HW (it knows n is committed)"))
    return Text("\n".join(lines))


def commit_view(s: Stepper, step: int = 1) -> list:
    """The commit player's view of row ``step`` (1-based): the text frame and the replica logs
    as they were right after it (needs ``commit_process(keep_snapshots=True)``)."""
    from kafkasim.viz import replica_logs

    i = max(1, min(step, len(s.rows))) - 1
    c = s.cluster_at(i)
    return [commit_frame(s, i), replica_logs(c, s.topic, s.partition)]


# -- the commit on a space-time diagram, arrows labelled ---------------------------
def arrow_label(what: str) -> str:
    """A Stepper row's message line, shortened to what its arrow carries: "Fetch from 7",
    "offset 6 · HW 6", "HW 7", "1 record", "acked 6"."""
    kind, _, rest = what.partition(": ")
    if kind.startswith("FetchResponse"):
        recs, _, hw = rest.rpartition(", ")
        return hw if recs == "no records" else f"{recs} · {hw}"
    if kind.startswith("Fetch"):
        return "Fetch from " + rest.rsplit(" ", 1)[-1]
    if kind.startswith("ProduceResponse"):
        return rest.replace("acked, offset", "acked")
    return rest


def label_arrows(fig, s: Stepper):
    """Write on each arrow of ``viz.spacetime``'s figure what the message carried, for the
    messages the Stepper ``s`` recorded (offsets, the fetch offset, the HW). Returns ``fig``."""
    ax = fig.axes[0]
    arrows = {p.get_gid(): p for p in ax.patches if str(p.get_gid()).startswith("msg:")}
    for r in s.rows:
        patch = arrows.get(f"msg:{r.msg_id}")
        if patch is None:
            continue
        (x0, y0), (x1, y1) = patch._posA_posB
        f = 0.5 / max(1.0, abs(y1 - y0))          # halfway to the first node line it crosses
        ax.annotate(arrow_label(r.what), (x0 + f * (x1 - x0), y0 + f * (y1 - y0)), fontsize=10,
                    ha="center", va="center", zorder=5,
                    bbox={"boxstyle": "round,pad=0.2", "fc": "white", "ec": "#888888"})
    return fig


def log_values(c: Cluster, topic: str, partition: int = 0) -> Text:
    """Each running replica's log as ``offset:value`` pairs."""
    lines = []
    for b in sorted(c.assignment(topic)[partition]):
        if c.brokers[b].is_running:
            vals = " ".join(f"{o}:{v}" for o, _e, v in c.log_records(b, topic, partition))
            lines.append(tr("broker {b} log: {vals}", b=b, vals=vals))
    return Text("\n".join(lines))


# -- exercises ------------------------------------------------------------------------------
def slow_broker_3_commit(seed: int = SEED, delay_ms: int = 40, *,
                         kafka_version: str | None = None) -> tuple[int, Stepper]:
    """Exercise 2's run (Kafka ``kafka_version``, the notebook's unless named): the commit of
    offset 6 (acks=all) when every message to and from broker 3 takes ``delay_ms`` longer; the
    write arrives while broker 3's Fetch is parked on the leader. Returns (ms from the leader's
    append to the producer's answer, the Stepper)."""
    version = notebook_version(kafka_version, "slow_broker_3_commit")
    c = Cluster(brokers=3, seed=seed, kafka_version=version)
    c.create_topic(TOPIC, partitions=1, replication_factor=3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all", linger_ms=0)
    p.send_many(TOPIC, [f"m{i}" for i in range(6)], partition=0)
    p.flush()
    c.run(1500)
    c.delay(delay_ms, src=3)
    c.delay(delay_ms, dst=3)
    wait = Stepper(c, TOPIC)      # until broker 3's Fetch from offset 6 is parked on the leader
    wait.run_until(lambda cl: bool(wait.rows) and wait.rows[-1].what.startswith("Fetch 3->1"),
                   5000)
    s = Stepper(c, TOPIC)
    p.send(TOPIC, "m6", partition=0)
    s.run_until(lambda cl: any(r.what.startswith("ProduceResponse") for r in s.rows), 5000)
    appended = next(r.time_ms for r in s.rows if r.what.startswith("Produce "))
    return s.rows[-1].time_ms - appended, s


def all_replicas_run(rule, seed: int = SEED, *,
                     kafka_version: str | None = None) -> tuple[Cluster, list, list]:
    """Exercise 3's run (Kafka ``kafka_version``, the notebook's unless named): broker 3 is cut
    off from the leader for 25 s (replica.lag.time.max.ms 10 s) while acks=all writes continue;
    with ``rule`` in place of maybe_increment_leader_hw. Returns (cluster, results of the
    writes, ISR changes seen)."""
    version = notebook_version(kafka_version, "all_replicas_run")
    c = Cluster(brokers=3, seed=seed, kafka_version=version,
                config={"replica.lag.time.max.ms": 10000})
    c.create_topic("seed003", partitions=1, replication_factor=3, assignment=[[1, 2, 3]])
    c.swap_rule("maybe_increment_leader_hw", rule)
    p = c.producer("p", acks="all", linger_ms=0,
                   **{"request.timeout.ms": 5000, "delivery.timeout.ms": 20000})
    first = p.send_many("seed003", ["a", "b"], partition=0)
    p.flush()
    c.cut(1, 3)
    c.run(16000)                                   # broker 3 leaves the ISR
    later = p.send_many("seed003", ["c", "d"], partition=0)
    c.run(25000)
    return c, first + later, c.isr("seed003")


# -- exercise 4: the failover where luck runs out --------------------------------------------------
def unlucky_failover(seed: int = SEED, *, kafka_version: str | None = None) -> Cluster:
    """Section 7's crash, but offset 7 reached broker 3 and not broker 2: leader 1 holds 0-9,
    broker 2 0-6 (its fetches' answers held), broker 3 0-7, HW 7, ISR [1, 2, 3]; then broker 1
    crashes and the controller elects a new leader. Returns the cluster 2 s after the election
    (broker 3 has fetched from the new leader)."""
    version = notebook_version(kafka_version, "unlucky_failover")
    c = Cluster(brokers=3, seed=seed, kafka_version=version)
    c.create_topic(HW_TOPIC, 1, 3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="1", linger_ms=0)
    p.send_many(HW_TOPIC, [f"m{i}" for i in range(7)], partition=0)
    c.run(1000)
    c.hold("FetchResponse", src=1, dst=2)         # broker 2 stops at offset 6
    p.send(HW_TOPIC, "m7", partition=0)
    c.run(200)                                    # broker 3 copies offset 7
    c.hold("FetchResponse", src=1, dst=3)
    p.send_many(HW_TOPIC, ["m8", "m9"], partition=0)
    c.run(200)                                    # 8 and 9 on broker 1 only
    c.crash(1)
    c.run_until(lambda cl: cl.leader(HW_TOPIC) not in (1, -1), 60000)
    c.run(2000)
    return c


# -- what the notebook's cells print, in the course's language ------------------------------------
def polled(records) -> Text:
    """How many records a poll returned and their offsets (section 3's consumer)."""
    offsets = [r.offset for r in records]
    if not offsets:
        return Text(tr("the consumer got no record"))
    return Text(tr("consumer got {n} record(s): offsets {first}..{last}", n=len(offsets),
                   first=offsets[0], last=offsets[-1]))


def poll_after(leo: int | None, hw: int, offsets: list[int], *, again: bool = False) -> Text:
    """A poll against the leader's LEO and HW: the first (``leo`` given) or the next one."""
    if again:
        return Text(tr("HW {hw} -> next poll: {offsets}", hw=hw, offsets=offsets))
    return Text(tr("leader LEO {leo} HW {hw} -> poll: {offsets}", leo=leo, hw=hw,
                   offsets=offsets))


def elected_after(c: Cluster, topic: str, after_ms: int) -> Text:
    """The new leader and how long after the crash the controller elected it."""
    return Text(tr("broker {b} elected {ms} ms after the crash", b=c.leader(topic), ms=after_ms))
