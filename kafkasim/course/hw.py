"""Notebook 03 (high watermark and commit): what "committed" means, the HW example from the
notes, the commit of offset 6 fetch by fetch, the one-fetch delay of followers, and what
consumers may read.

Concepts C13, C14 and C15.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from kafkasim.cluster import Cluster
from kafkasim.course.common import (
    COURSE_VERSION,
    Stepper,
    Text,
    leo_hw,
    replica_state,
    settle,
    text_table,
)
from kafkasim.protocol import rules
from kafkasim.protocol.rules import ReplicaState
from kafkasim.scenario import Scenario

SEED = 3
TOPIC = "commit-demo"
HW_TOPIC = "hw-demo"


def high_watermark(leos: Mapping[int, int], isr: Sequence[int]) -> int:
    """HW as the leader computes it when every ISR member's LEO is known and no follower outside
    the ISR counts as caught up: Kafka's ``maybe_increment_leader_hw`` (kafkasim.protocol.rules)
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
        role = "leader  " if b == leader else "follower"
        lines.append(f"broker {b} ({role}): {' '.join(cells)}")
    lines.append(f"'|' = the leader's high watermark, HW = {hw}: offsets 0..{hw - 1} committed")
    return Text("\n".join(lines))


# -- C14: the notes' example ----------------------------------------------------------------------
def hw_example() -> Cluster:
    """The built-in scenario ``seed-high-watermark``: leader 0-9, followers 0-7 and 0-6."""
    run = Scenario.named("seed-high-watermark").run()
    return run.cluster


def read_all(c: Cluster, topic: str, partition: int = 0, group: str = "readers") -> Text:
    """A new consumer reads the partition from offset 0: what does it get?"""
    cons = c.consumer(group=group, name=f"reader-{group}-{c.now}",
                      auto_offset_reset="earliest")
    cons.assign(topic, [partition])
    got = cons.poll()
    offs = [r.offset for r in got]
    served = got[-1].served_hw if got else cons.last_hw.get((topic, partition))
    rng = f"offsets {offs[0]}..{offs[-1]}" if offs else "nothing"
    return Text(f"consumer got {len(got)} record(s): {rng} "
                f"({', '.join(str(r.value) for r in got)}); the fetch response said HW = "
                f"{served}")


def leader_failover(c: Cluster, topic: str = HW_TOPIC) -> Text:
    """Crash the leader and wait for the controller to elect another; report the new logs."""
    old = c.leader(topic, 0)
    old_hw = c.log(old, topic, 0).high_watermark
    c.crash(old)
    start = c.now
    c.run_until(lambda cl: cl.leader(topic, 0) not in (old, -1), 60000)
    elected = c.now - start
    c.run(1000)
    lines = [f"broker {old} crashed (its HW was {old_hw}); broker {c.leader(topic, 0)} was "
             f"elected {elected} ms later (zookeeper.session.timeout.ms = "
             f"{c.broker_config['zookeeper.session.timeout.ms']})", replica_state(c, topic)]
    for b in sorted(c.assignment(topic)[0]):
        if c.brokers[b].is_running:
            vals = " ".join(f"{o}:{v}" for o, _e, v in c.log_records(b, topic, 0))
            lines.append(f"broker {b} log: {vals}")
    return Text("\n".join(lines))


# -- C15: committing offset 6, fetch by fetch ----------------------------------------------------
def commit_process(seed: int = SEED, keep_snapshots: bool = False) -> Stepper:
    """Offsets 0-5 replicated and committed; then the producer writes offset 6 (acks=all). A row
    per Produce/Fetch message until both followers know HW 7."""
    c = Cluster(brokers=3, seed=seed, kafka_version=COURSE_VERSION)
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
            key = f"broker {b}"
            if hw == 7 and key not in first:
                first[key] = r.time_ms
    leader = s.c.leader(s.topic)
    t0 = first[f"broker {leader}"]
    rows = [{"replica": k + (" (leader)" if k == f"broker {leader}" else ""),
             "HW 7 at t(ms)": t, "after the leader (ms)": t - t0}
            for k, t in sorted(first.items())]
    return text_table(rows)


def commit_frame(s: Stepper, i: int) -> Text:
    """Row ``i`` of the commit process as text: the step and every replica's log and HW."""
    i = max(0, min(i, len(s.rows) - 1))
    r = s.rows[i]
    lines = [f"step {i + 1}/{len(s.rows)}  t={r.time_ms} ms  {r.what}"]
    for b in sorted(r.state):
        leo, hw = r.state[b]
        cells = " ".join(("[" + str(o) + "]") if o < hw else f" {o} " for o in range(leo))
        lines.append(f"  broker {b}: {cells}   LEO {leo}  HW {hw}")
    lines.append("  [n] = below this replica's HW (it knows n is committed)")
    return Text("\n".join(lines))


def reads_before_and_after(seed: int = SEED) -> Text:
    """A consumer polls while offset 6 is on the leader only, then after it is committed."""
    c = Cluster(brokers=3, seed=seed, kafka_version=COURSE_VERSION)
    c.create_topic(TOPIC, 1, 3, assignment=[[1, 2, 3]])
    prod = c.producer("p", acks="1", linger_ms=0)
    for i in range(6):
        prod.send(TOPIC, f"m{i}", partition=0)
    prod.flush()
    settle(c)
    for b in (2, 3):                             # no follower gets offset 6 for now
        c.hold(type="FetchResponse", src=1, dst=b)
    prod.send(TOPIC, "m6", partition=0)
    prod.flush()
    cons = c.consumer(group="g", name="reader", auto_offset_reset="earliest")
    cons.assign(TOPIC, [0])
    first = cons.poll()
    leo = c.log(1, TOPIC).log_end_offset
    line1 = (f"while offset 6 is on the leader only (leader LEO {leo}, HW "
             f"{c.high_watermark(TOPIC)}): poll returned offsets "
             f"{[r.offset for r in first]}")
    for b in (2, 3):
        c.release(type="FetchResponse", src=1, dst=b)
    settle(c)
    second = cons.poll()
    line2 = (f"after the followers copied it (HW {c.high_watermark(TOPIC)}): the next poll "
             f"returned offsets {[r.offset for r in second]}")
    return Text(line1 + "\n" + line2)


def commit_view(s: Stepper, step: int = 1) -> list:
    """The commit player's view of row ``step`` (1-based): the text frame and the replica logs
    as they were right after it (needs ``commit_process(keep_snapshots=True)``)."""
    from kafkasim.viz import replica_logs

    i = max(1, min(step, len(s.rows))) - 1
    c = s.cluster_at(i)
    return [commit_frame(s, i), replica_logs(c, s.topic, s.partition)]
