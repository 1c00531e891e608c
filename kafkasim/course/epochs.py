"""Notebook 09 (leader epoch and truncation): tables of the leader-epoch cache and of the
truncations a run made, the checkers' verdict, and the exercise checks.

Concept C17: since Kafka 0.11 (KIP-101) a replica that becomes a follower truncates where the
leader's epochs say its log diverges (LeaderEpochFileCache.endOffsetFor answered through
OffsetsForLeaderEpoch, since 2.8 also through the Fetch response's DivergingEpoch), not to its own
high watermark. Nothing here builds a cluster the notebook does not show, except
``check_divergence``, which replays the learner's fault sequence on fresh clusters to grade it.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from kafkasim.core import rules
from kafkasim.course.checks import CheckResult, _form, _missing, _result, _want_bool
from kafkasim.course.common import Text, text_table
from kafkasim.course.i18n import N_, tr
from kafkasim.course.narration import narrate
from kafkasim.observe.checks import attach
from kafkasim.runtime.cluster import Cluster

SEED = 9
TOPIC = "t"
OLD, FIXED = "0.10.2", "0.11.0"
SAFETY = ("LogMatching", "NoAckedLoss")

__all__ = [
    "EXAMPLE_CACHE", "end_offset_view",
    "SEED", "answer_and_truncation", "check_divergence", "check_end_offset", "check_truncation",
    "checkers_and_first_loss", "checkers_line", "checkpoint_text", "epoch_cache_table",
    "epoch_table", "producer_line", "read_line", "run_summary", "show_source", "truncation_report",
    "truncations", "verdict",
]


# -- what the notebook prints ----------------------------------------------------------------------
def show_source(fn) -> Text:
    """The source of a kafkasim rule function, as text."""
    return Text(inspect.getsource(fn).rstrip())


def epoch_table(cluster: Cluster, topic: str = TOPIC, partition: int = 0) -> Text:
    """Per replica: its records as offset:epoch:value, the leader-epoch cache, LEO and HW.
    Before Kafka 0.11 there was no LeaderEpochFileCache and no epoch in a record's batch
    (message format v0/v1; KIP-101 came with v2): both print as "-"."""
    has_cache = cluster.rules.fetch.leader_epoch_truncation
    rows = []
    for b in sorted(cluster.assignment(topic)[partition]):
        log = cluster.log(b, topic, partition)
        rows.append({
            "broker": b,
            N_("records (offset epoch value)"): " ".join(
                f"{o}:{e if has_cache else '-'}:{v}"
                for o, e, v in cluster.log_records(b, topic, partition)),
            N_("epoch cache [(epoch, start)]"): [tuple(e) for e in log.leader_epoch_cache.entries]
            if has_cache else "-",
            "LEO": log.log_end_offset, "HW": log.high_watermark})
    return text_table(rows)


def epoch_cache_table(cluster: Cluster, broker: int, topic: str = TOPIC,
                      partition: int = 0) -> Text:
    """A replica's leader-epoch cache (``LeaderEpochFileCache``), one row per entry: the epoch
    and the offset of its first record."""
    entries = cluster.log(broker, topic, partition).leader_epoch_cache.entries
    return text_table([{N_("leader epoch"): e.epoch, N_("start offset"): e.start_offset}
                       for e in entries], columns=[N_("leader epoch"), N_("start offset")])


def checkpoint_text(cluster: Cluster, broker: int, topic: str = TOPIC, partition: int = 0) -> Text:
    """The broker's ``<topic>-<partition>/leader-epoch-checkpoint`` file as written on its disk
    (version line, entry count, one "epoch start-offset" line each), or a note if it has none."""
    log_dir = cluster.brokers[broker].log_manager.log_dir
    text = log_dir.read(f"{topic}-{partition}/leader-epoch-checkpoint")
    return Text(text if text else "(no leader-epoch-checkpoint: before Kafka 0.11)")


def truncations(cluster: Cluster, topic: str = TOPIC) -> Text:
    """Every truncation the trace shows for ``topic``: when, on which broker, and why."""
    rows = [{"t (ms)": r[0], "broker": r[2], "truncation": str(r[5])}
            for r in cluster.trace.rows if r[1] == "truncate" and r[3] == topic]
    return text_table(rows) if rows else Text(narrate("(no truncation)"))


class Invariants(list):
    """Names of violated invariants: a list that prints as "LogMatching, WeakIsr" (or "none")."""

    def __str__(self) -> str:
        return ", ".join(self) if self else tr("none")

    __repr__ = __str__


def verdict(suite) -> Invariants:
    """The invariants a collecting checker suite found violated (allowed losses excluded)."""
    return Invariants(sorted({v.invariant for v in suite.violations}))


def _writes(writes) -> str:
    """Each write's value and status: "m1 acked, m2 acked"."""
    return ", ".join(f"{w.value} {narrate(w.status)}" for w in writes)


def producer_line(writes) -> Text:
    """What became of the producer's writes (``send`` results)."""
    return Text(tr("producer: {writes}", writes=_writes(writes)))


def checkers_line(suite) -> Text:
    """"checkers: " and the invariants the suite found violated."""
    return Text(tr("checkers: {verdict}", verdict=verdict(suite)))


def run_summary(c: Cluster, writes, suite, topic: str = TOPIC) -> Text:
    """One line per run: the Kafka version, the writes, the leader now, the checkers' verdict."""
    return Text(tr("Kafka {version}: producer {writes}, leader {leader}, checkers {verdict}",
                   version=c.kafka_version, writes=_writes(writes), leader=c.leader(topic),
                   verdict=verdict(suite)))


def checkers_and_first_loss(suite) -> Text:
    """Every invariant violated, and the first acknowledged record lost (NoAckedLoss)."""
    lost = [v for v in suite.violations if v.invariant == "NoAckedLoss"]
    head = tr("all: {verdict}", verdict=verdict(suite))
    return Text(head + (" | " + narrate(lost[0].message) if lost else ""))


def answer_and_truncation(answer, state) -> Text:
    """The leader's OffsetsForLeaderEpoch answer (epoch, end offset) and the follower's
    truncation state (offset, truncation completed) it leads to."""
    return Text(tr("leader answers {answer}", answer=answer) + "\n" +
                tr("follower truncates to {state}", state=state))


def read_line(consumer, records, topic: str = TOPIC, partition: int = 0) -> Text:
    """The values a consumer read and its position after them."""
    return Text(tr("read: {values} | position {position}",
                   values=" ".join(str(r.value) for r in records),
                   position=consumer.position(topic, partition)))


def truncation_report(err) -> Text:
    """A consumer's LogTruncationException: its message, then each partition's first offset
    known to diverge and that offset's leader epoch."""
    lines = [f"{type(err).__name__}: {narrate(str(err))}"]
    for (topic, part), (offset, epoch) in sorted(err.divergent_offsets.items()):
        lines.append(tr("divergent: {tp} from offset {o} (epoch {e})", tp=f"{topic}-{part}",
                        o=offset, e=epoch))
    return Text("\n".join(lines))


# -- exercises ----------------------------------------------------------------------------------
#: A leader's epoch cache for the explorer of section 3: (epoch, start offset).
EXAMPLE_CACHE = ((0, 0), (1, 3), (4, 7))


def end_offset_view(requested_epoch: int = 1, log_end_offset: int = 10) -> Text:
    """What a leader with ``EXAMPLE_CACHE`` answers to OffsetsForLeaderEpoch(requested_epoch):
    kafkasim's ``rules.end_offset_for`` (LeaderEpochFileCache.endOffsetFor)."""
    epoch, end = rules.end_offset_for(EXAMPLE_CACHE, requested_epoch, log_end_offset)
    if epoch < 0:
        return Text(tr("cache {cache}, LEO {leo}", cache=list(EXAMPLE_CACHE), leo=log_end_offset)
                    + f"\nOffsetsForLeaderEpoch({requested_epoch}) -> UNDEFINED_EPOCH (-1, -1): "
                    + tr("no cached epoch is that new or that old"))
    what = tr("the leader's current epoch: it ends at the LEO") if end == log_end_offset else \
        tr("an older epoch: it ends where the next cached epoch starts")
    return Text(tr("cache {cache}, LEO {leo}", cache=list(EXAMPLE_CACHE), leo=log_end_offset)
                + f"\nOffsetsForLeaderEpoch({requested_epoch}) -> "
                + tr("(epoch {epoch}, end offset {end}): {what}", epoch=epoch, end=end, what=what))


def check_end_offset(entries, requested_epoch: int, log_end_offset: int, answer=None
                     ) -> CheckResult:
    """Exercise: what a leader with cache ``entries`` and this LEO answers to
    OffsetsForLeaderEpoch(``requested_epoch``) since 2.1: (epoch, end offset)."""
    missing = _missing(answer)
    if missing is not None:
        return missing
    right = rules.end_offset_for([tuple(e) for e in entries], requested_epoch, log_end_offset)
    try:
        given = tuple(int(x) for x in answer)
    except (TypeError, ValueError):
        return _result(False, tr("answer with a pair (epoch, end offset), got {answer!r}",
                                 answer=answer))
    if given == right:
        return _result(True, tr("the leader answers {right}.", right=right))
    if len(given) == 2 and given[1] == right[1]:
        return _result(False, tr("the end offset is right, the epoch is not: since KIP-279 the "
                                 "answer names the largest epoch the leader has at or below "
                                 "the one asked."))
    return _result(False, tr("look for the first cached epoch above the requested one: where "
                             "it starts is where the requested epoch ended (the latest epoch "
                             "ends at the LEO)."))


def check_truncation(leader_answer, follower_entries, follower_leo: int, answer=None
                     ) -> CheckResult:
    """Exercise: where a follower (cache ``follower_entries``, LEO ``follower_leo``) truncates
    given the leader's (epoch, end offset), and whether it must ask again: (offset, complete)."""
    missing = _missing(answer)
    if missing is not None:
        return missing
    ep, end = leader_answer
    right = rules.get_offset_truncation_state(ep, end, [tuple(e) for e in follower_entries],
                                              follower_leo, follower_leo)
    try:
        given = (int(answer[0]), answer[1])
    except (TypeError, ValueError, IndexError, KeyError):
        return _result(False, tr("answer with (offset, complete), got {answer!r}", answer=answer))
    if (m := _form(_want_bool(given[1], "complete (the second item)"))) is not None:
        return m
    if given == right:
        return _result(True, tr("truncate to {v_0}; ", v_0=right[0])
                       + (tr("done.") if right[1]
                          else tr("then ask again for the next epoch down.")))
    if given[0] == right[0]:
        return _result(False, tr("the offset is right; is the follower sure it agrees with the "
                                 "leader below it? Does it know the leader's epoch, or only an "
                                 "older one?"))
    return _result(False, tr("first find, in the follower's own cache, the largest epoch <= "
                             "the epoch in the leader's answer, and where the follower's copy "
                             "of it ends."))


def _run_faults(faults: Callable, version: str | None, seed: int = SEED) -> tuple[list[str], dict]:
    """A fresh exercise cluster (the set-up the notebook shows), ``faults(c, p)`` on it, checked
    after every event. Returns (violated invariants, facts about the run)."""
    c = Cluster(3, seed=seed, kafka_version=version, config={"controlled.shutdown.enable": False})
    suite = attach(c)
    c.create_topic(TOPIC, 1, 2, assignment=[[1, 2]], config={"min.insync.replicas": 1})
    p = c.producer("p", acks="all", retries=5)
    faults(c, p)
    c.run(1000)
    facts = {
        "acked": sum(1 for r in c.trace.rows if r[1] == "produce_result" and r[5][1] == "acked"),
        "swapped": any(r[1] == "rule_swapped" for r in c.trace.rows),
    }
    return verdict(suite), facts


def check_divergence(faults: Callable | None = None, seed: int = SEED) -> CheckResult:
    """Exercise graded by the checkers: ``faults(c, p)`` run on the notebook's set-up must make
    LogMatching or NoAckedLoss fail under Kafka 0.10.2 and neither under 0.11.0 or today's Kafka."""
    missing = _missing(faults)
    if missing is not None:
        return missing
    if not callable(faults):
        return _result(False, tr("pass your function itself (faults=my_faults), got {faults!r}",
                                 faults=faults))
    found = {}
    for version in (OLD, FIXED, None):
        try:
            bad, facts = _run_faults(faults, version, seed)
        except Exception as exc:   # the learner's code: report, do not crash the notebook
            return _result(False, tr("your faults raised under Kafka {version_or_today}: "
                                     "{error}: {exc}",
                                     version_or_today=version or tr("today"),
                                     error=type(exc).__name__, exc=exc))
        if facts["swapped"]:
            return _result(False, tr("no swap_rule here: use faults (crash, restart, hold, "
                                     "power_loss...) and let each version's own rule act."))
        if not facts["acked"]:
            return _result(False, tr("nothing was acknowledged: produce something first."))
        found[version or "today"] = [v for v in bad if v in SAFETY]
    if not found[OLD]:
        return _result(False, tr("under 0.10.2 the checkers found no LogMatching or "
                                 "NoAckedLoss violation. Hint: the follower must lose "
                                 "(truncate) or keep a record because of its HW at the moment "
                                 "it becomes a follower."))
    still = {v: f for v, f in found.items() if v != OLD and f}
    if still:
        return _result(False, tr("0.10.2 broke {found_old}, but so did {still}: that is not "
                                 "the high watermark's fault. Find a sequence the leader epoch "
                                 "fixes.", found_old=found[OLD], still=still))
    return _result(True, tr("0.10.2 violates {found_old}; 0.11.0 and today's Kafka keep the "
                            "replicas consistent.", found_old=found[OLD]))
