"""The simulator's words on a translated screen: table headers and values, trace and stepper
narration, the invariant checkers' messages.

The simulator below the course layer speaks English, as Kafka's own logs do: a checker's message
("leader 1 (epoch 0) has HW 2 but 2, in its cached ISR [1, 2, 3], holds only offsets below 0"), a
trace event's detail ("process killed; page cache survives"), a role ("follower"). Where the
course or a widget shows such a text to a learner, it goes through ``narrate``: in English it is
returned unchanged; in another language an exact catalog entry translates it, else the first
``TEMPLATES`` entry whose English form matches the whole text does, its fields carried over (and
narrated in turn: a field may be a role or a nested message). The templates and the words are
``N_()`` marks, so ``scripts/i18n.py`` files them in ``kafkasim/course/locale/<lang>.po`` like any
course message, where a translation names a field's particle (``{b:가}``). Kafka's own names stay
as Kafka prints them: a template keeps ``FetchResponse``, ``true_hw``, config keys.
"""

from __future__ import annotations

import re
from functools import cache

from kafkasim.course.i18n import N_, catalog, language, tr

#: Single words and short phrases a table shows as a header or a value (roles, states, verdicts).
WORDS = (
    N_("role"), N_("state"), N_("follower"), N_("leader"), N_("stopped"), N_("running"),
    N_("crashed"), N_("offline"), N_("paused"), N_("fenced"), N_("(empty)"), N_("(no truncation)"),
    N_("(no ISR change)"), N_("loaded"), N_("truncation"), N_("event"), N_("change"),
    N_("old ISR"), N_("new ISR"), N_("by"), N_("shrink"), N_("expand"), N_("what happened"),
    N_("node"), N_("detail"), N_("followers"), N_("thread"), N_("partition"), N_("replicas"),
    N_("racks"), N_("rack"), N_("isr"), N_("verdict"), N_("leads"), N_("result"),
    N_("latency (ms)"), N_("leader LEO"), N_("acked at (ms)"), N_("LOST"), N_("record"),
    N_("offset"), N_("committed"), N_("fields"), N_("epoch"), N_("message"), N_("count"),
    N_("replica"), N_("cause"), N_("ISR shrinks"), N_("ISR expands"), N_("s out of ISR"),
    N_("max records behind"), N_("p99 acks=all latency (ms)"), N_("LEO (leader's view)"),
    N_("last fetch (ms ago)"), N_("last caught up (ms ago)"), N_("out of sync?"), N_("run"),
    N_("broker overload"), N_("network latency"), N_("slow disk"), N_("client"), N_("group"),
    N_("topic"), N_("position"), N_("swapped"), N_("acked"), N_("produced"), N_("replicated"),
    N_("consumed"), N_("type"), N_("meaning"), N_("alert"), N_("expression"), N_("pending"),
    N_("firing"), N_("incident"), N_("until"), N_("value"), N_("from"), N_("to"),
    N_("observer"), N_("voter"), N_("controller"), N_("broker"), N_("in ISR"), N_("request"),
    N_("recv"), N_("drop"), N_("below min ISR"), N_("preferred"), N_("granted"), N_("rejected"),
    N_("controlled shutdown"), N_("gauge"), N_("meter"),
    # headers the notebooks' own tables use (02a/02b isr_changes, 05, 07, 08, 12)
    N_("time_ms"), N_("live"), N_("error"), N_("answer"), N_("you (acks=all)"),
)

#: Whole-text patterns: the English form, with ``{fields}``, of a message the simulator or the
#: course prints; a field matches any text, a field named twice the same text.
TEMPLATES = (
    # the stepper (kafkasim.course.common.describe_message) and the course's own notes
    N_("Fetch {src}->{dst}: broker {b} asks from offset {o}"),
    N_("Fetch {src}->{dst}: consumer asks from offset {o}"),
    N_("FetchResponse {src}->{dst}: no records, HW {hw}"),
    N_("FetchResponse {src}->{dst}: offset {o}, HW {hw}"),
    N_("FetchResponse {src}->{dst}: offsets {first}-{last}, HW {hw}"),
    N_("Produce {src}->{dst}: {n} record"),
    N_("Produce {src}->{dst}: {n} records"),
    N_("ProduceResponse {src}->{dst}: acked, offset {o}"),
    N_("start: offsets 0-{last} on every replica, HW {hw}"),
    N_("sends {request} to broker {b}"),
    N_("gets {response} from broker {b}"),
    N_("{request} lost: {why}"),
    N_("{tp}: leader {leader}, ISR {isr}"),
    # trace event details (kafkasim.core.events)
    N_("process killed; page cache survives"),
    N_("fencing broker {b}: no heartbeat for broker.session.timeout.ms"),
    N_("session {s} of broker {b} not heard from for {ms} ms (zookeeper.session.timeout.ms)"),
    N_("active controller in epoch {e}"),
    N_("{tp}: broker {b} fenced (session expired) election: leader {old} -> {new}, ISR {isr}, "
       "epoch {e}"),
    N_("{tp}: epoch {e}, ISR {isr}"),
    N_("epoch {e}, ISR {isr}"),
    N_("{tp}: leader {leader}, epoch {e}"),
    N_("controller {c}: AlterPartition from {b}: ISR {old} -> {new}"),
    N_("controller {c}: AlterPartition from broker {b}: leader {leader}, ISR {isr}, epoch {e}, "
       "partition epoch {pe}"),
    N_("shrink {who}: {old} -> {new}"),
    N_("expand {who}: {old} -> {new}"),
    N_("broker {b} elected from the ELR"),
    N_("brokers failed: {brokers}"),
    N_("{tp}: {how} election: leader {old} -> {new}, ISR {isr}, epoch {e}"),
    N_("UNCLEAN {how}"),
    N_("{request} -> broker {b}"),
    # the KRaft quorum's Raft (kafkasim.core.events.RaftTransition, RaftVote): Kafka's state names
    N_("{a} -> {z} in epoch {e}, leader {leader}, voted for {v}"),
    N_("{a} -> {z} in epoch {e}, voted for {v}"),
    N_("{a} -> {z} in epoch {e}, leader {leader}"),
    N_("{a} -> {z} in epoch {e}"),
    N_("PreVote for {c} in epoch {e}: {result}"),
    N_("vote for {c} in epoch {e}: {result}"),
    N_("to {o} ({n} removed): {why}"),
    N_("becoming follower: truncate to HW"),
    N_("OffsetsForLeaderEpoch answered epoch {e} end offset {o}"),
    N_("diverging epoch {e} ends at {o}"),
    # the invariant checkers (kafkasim.observe.checks)
    N_("leader {leader} (epoch {e}) has HW {hw} but {b}, in its cached ISR {isr}, holds only "
       "offsets below {leo}"),
    N_("leader {leader} (epoch {e}) has HW {hw} but {b}, in the controller's ISR {isr}, holds "
       "only offsets below {leo}"),
    N_("leader {leader} (epoch {e}) has HW {hw} but {b}, in the controller's ISR {isr}, has LEO "
       "{leo}"),
    N_("leader {leader} (epoch {e}) has HW {hw} but {b}, in its cached ISR {isr}, has LEO {leo}"),
    N_("leader {leader} (epoch {e}) set its HW to {hw} but ISR member {b} has LEO {leo} "
       "(committed ISR {isr})"),
    N_("broker {b} is in the controller's ISR {isr} (leader {leader}) and running, but its LEO "
       "{leo} is below true_hw {thw}: electing it would lose committed offsets {lost}"),
    N_("broker {b} is in the committed ELR {elr} but its LEO {leo} is below true_hw {thw}: "
       "electing it from the ELR would lose committed offsets {lost}"),
    N_("leader {leader} (epoch {e}, HW {hw}) has heard from its whole ISR {isr}, but the HW it "
       "computes cannot reach true_hw {thw} (committed before): log end offsets {leos}"),
    N_("record {r} ({value}), acked with acks=all to {client} at t={t} ms at offset {o}, is "
       "missing from leader {leader}'s log (epoch {e}): the leader's log ends at {leo}"),
    N_("record {r} ({value}), acked with acks=all to {client} at t={t} ms at offset {o}, is "
       "missing from leader {leader}'s log (epoch {e}): the leader has record {other} there"),
    N_("broker {b} at {leo}"),
    N_("leader {leader}"),
    N_("replicas {a} and {b} differ at offset {o}, below both HWs ({hws}): broker {a} has record "
       "{r}@epoch {e}, broker {b} has record {other}@epoch {e2}"),
    # the engine event a violation names (kafkasim.observe.checks.ghost.event_text)
    N_("t={t} ms seq={s} deliver {request} {src} -> {dst}"),
    N_("t={t} ms deliver {request} {src} -> {dst}"),
    # why a checker allows a loss (kafkasim.observe.checks: LOSS_RULES, ghost), and its messages
    N_("unclean leader election at t={t} ms"),
    N_("power loss of broker {b} at t={t} ms (its log was cut to {o})"),
    N_("acks=1 (acknowledged by leader {leader} alone; leadership has moved since)"),
    N_("acks=1 (acknowledged by its leader alone; leadership has moved since)"),
    N_("the controller's state names leader {leader} (epoch {e}) outside its ISR {isr}"),
    # the moments notebook 08's runs name
    N_("broker {b} is the last replica standing"),
    N_("broker {b} fenced"),
    N_("broker {b} back"),
    # errors a notebook cell prints (kafkasim.course.common.error_line)
    N_("Truncation detected (auto.offset.reset is none): {tp} at offset {o}, diverging from "
       "offset {d} (epoch {e})"),
    N_("cannot {what}: no active controller (the metadata quorum has no leader; running "
       "controllers {up} of voters {voters}, Raft needs {n})"),
    N_("create topic {name}"), N_("run the election"), N_("alter the configs of {name}"),
    N_("alter broker configs"),
    # a topic Kafka refuses (kafkasim.runtime.topics, kraft_cluster): Kafka's own messages
    # (StripedReplicaPlacer, ReplicationControlManager; AdminUtils in ZooKeeper mode)
    N_("Cannot create topic '{name}': {why} ({code})"),
    N_("Unable to replicate the partition {rf} time(s): {why}"),
    N_("The target replication factor of {rf} cannot be reached because only {n} broker(s) are "
       "registered."),
    # the same two from Kafka 4.3 (KIP-1066: log directories can be cordoned)
    N_("All brokers are currently fenced, or have all their log directories cordoned."),
    N_("The target replication factor of {rf} cannot be reached because only {n} broker(s) are "
       "registered or some brokers have all their log directories cordoned."),
    N_("Replication factor: {rf} larger than available brokers: {n}."),
    N_("{n} invalid run spec(s); nothing was run:"),
    N_("run {i} ({params}) seed {s}: {error}"),
    N_("Unknown {kind} config {key}. Did you mean {near}?"),
    N_("cluster.replication_factor {rf} is larger than the number of brokers ({n}): Kafka "
       "refuses the topic (INVALID_REPLICATION_FACTOR)"),
    # notebook 90's case labels (its tables show them: kafkasim.experiments.notebook.shown)
    N_("messages > {n}"),
    N_("messages > {n}, steady {r}/s"),
    N_("messages > {n}, {r}/s"),
    N_("time > {n} s"),
    N_("time > {n} s, {r}/s"),
    N_("torture: {r}/min, up to {n} down"),
    N_("gentler: {r}/min, one at a time"),
    N_("The {kind} config {key} was removed in Kafka {v} ({ref}); it does not exist in Kafka "
       "{profile} (the last release line with it is {line}). {instead}"),
    N_("KAFKA-18743, apache/kafka PR #18821: only the ZooKeeper controller read it"),
    N_("No key replaces it: the KRaft controller runs a preferred election for every partition "
       "not led by its preferred replica, every leader.imbalance.check.interval.seconds, while "
       "auto.leader.rebalance.enable is true."),
)

#: Where each invariant checker's rule comes from (``Checker.source``, printed in a violation's
#: report): the study notes' teaching scenarios, the fact sheet, KIPs and Kafka's classes, whose
#: names stay as they are spelled. tests/test_i18n_outputs.py keeps this list equal to the
#: registered checkers' sources.
CHECKER_SOURCES = (
    N_("teaching-scenarios.md Invariants 1 (LeaderCompleteness/StrongIsr, KIP-966 spec); KIP-101 "
       "scenario 1; Jepsen 2013; fact sheet §3"),
    N_("fact sheet §1 (Partition.maybeIncrementLeaderHW, KIP-497 maximal ISR); teaching-scenarios "
       "Invariants 5 (ValidHighWatermark, AsyncIsr.tla)"),
    N_("teaching-scenarios Invariants 3 (ConsistentRead, KIP-966 spec); KIP-101 scenario 1; fact "
       "sheet §1 (reads capped at the HW)"),
    N_("fact sheet §1 (UnifiedLog.maybeIncrementHighWatermark); teaching-scenarios Invariants 7"),
    N_("teaching-scenarios Invariants 6 / Definitions (Kip320.tla LeaderInIsr)"),
    N_("teaching-scenarios Invariants 2 (LogMatching, KIP-966 spec); KIP-101 scenario 2"),
    N_("fact sheet §1 (UnifiedLog.updateHighWatermark clamps; truncateTo); TypeOk"),
    N_("teaching-scenarios Definitions (WeakIsr, Kip320.tla); KIP-101 scenario 1"),
    N_("teaching-scenarios Definitions (StrongIsr, Kip320.tla) and Invariants 1; KIP-101 "
       "scenario 1"),
    N_("teaching-scenarios Invariants 4 (LeaderCandidateCompleteness, KIP-966 spec)"),
    N_("teaching-scenarios Invariants 5 / Definitions (ValidHighWatermark, AsyncIsr.tla)"),
    N_("teaching-scenarios Invariants 7 (monotone true_hw); fact sheet §1 "
       "(maybeIncrementLeaderHW, new leader quirk)"),
    N_("KIP-966 (ELR; PartitionChangeBuilder.maybePopulateTargetElr); KAFKA-15583 (HW frozen under "
       "min ISR); teaching-scenarios Invariants 4 (KIP-966 spec)"),
    N_("PartitionChangeBuilder.electLeader/isValidNewLeader (KRaft, 3.3+); KIP-966 (ELR); KIP-704 "
       "(LeaderRecoveryState RECOVERING on unclean election)"),
    N_("KIP-595 (KafkaRaftClient); Raft paper 5.2-5.4 (Election Safety, Log Matching, Leader "
       "Completeness); KIP-966 spec MetadataLogMatching"),
)

#: Fields that stand for one token (a broker id, an offset, a time): they match no space, so a
#: template cannot swallow a list ("broker 2 at 0, broker 3 at 0" is two "broker {b} at {leo}").
_TOKEN_FIELDS = frozenset("b leader e hw leo o n src dst s ms c r t thw pe first last "
                          "client tp request a z v rf code".split())

_FIELD = re.compile(r"\{(\w+)\}")


@cache
def _pattern(template: str) -> re.Pattern:
    """The regular expression of a template: its literal text, each field any text (a field
    named again: the same text)."""
    out, seen, pos = [], {}, 0
    for m in _FIELD.finditer(template):
        begin, end = m.span()       # (not m.start(): a cluster's verb, to the hands-on test)
        out.append(re.escape(template[pos:begin]))
        name = m.group(1)
        any_text = r"[^\s,]+?" if name in _TOKEN_FIELDS else ".+?"
        out.append(f"(?P={name})" if name in seen else f"(?P<{name}>{any_text})")
        seen[name] = True
        pos = end
    out.append(re.escape(template[pos:]))
    return re.compile("".join(out), re.DOTALL)


@cache
def _most_specific_first() -> tuple[str, ...]:
    """The templates, the one with the most literal text first: a text that two templates match
    takes the more specific one."""
    return tuple(sorted(TEMPLATES, key=lambda t: -len(_FIELD.sub("", t))))


def narrate(text: str) -> str:
    """``text`` (a simulator message, a role, a table header) in the course language: an exact
    catalog entry, else the first template that matches the whole text, else ``text``."""
    if language() == "en" or not isinstance(text, str) or not text.strip():
        return text
    table = catalog(language())
    exact = table.get(("kafkasim.course", text))
    if exact:
        return exact
    for template in _most_specific_first():
        if ("kafkasim.course", template) not in table:
            continue
        m = _pattern(template).fullmatch(text)
        if m:
            fields = {k: _narrate_field(v) for k, v in m.groupdict().items()}
            return tr(template, **fields)
    return text


def _narrate_field(text: str) -> str:
    """A template's field in the course language: as a whole, else item by item when it is a
    comma-separated list ("broker 2 at 0, broker 3 at 0")."""
    said = narrate(text)
    if said == text and ", " in text:
        said = ", ".join(narrate(part) for part in text.split(", "))
    return said


def narrate_lines(text: str) -> str:
    """``narrate`` of each line of ``text``, and of each line's part after ``: `` when the whole
    line matches nothing (a checker's "Name: message")."""
    out = []
    for line in text.split("\n"):
        said = narrate(line)
        if said == line and ": " in line:
            head, _, rest = line.partition(": ")
            said = f"{head}: {narrate(rest)}"
        out.append(said)
    return "\n".join(out)
