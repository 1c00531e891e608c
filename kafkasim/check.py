"""Invariant checkers: Kafka's replication safety properties, checked after every simulated event.

    >>> from kafkasim.check import check_all, make_suite, run_checked
    >>> run_checked(c, 5000)                      # run 5 s, raise at the first violation
    >>> suite = make_suite(on_violation="collect")
    >>> c.run(5000, check=suite); suite.violations   # or collect them all
    >>> check_all(c)                               # one full check of the current state

A check is a ``Checker``: calling it with the cluster (``checker(cluster)``) checks the state
*now*, so it plugs straight into ``Cluster.run(..., check=...)``, ``run_to`` and ``run_until``,
which call it after every event. The first violation is kept in ``checker.first`` (invariant,
simulated time, seed, the event that just ran, the brokers / offsets / record ids involved); it
is then raised as ``InvariantViolation`` (an ``AssertionError`` whose message names the seed) or
only collected, as chosen by ``on_violation``. A violation is reported once, not after every
later event.

The invariants (teaching-scenarios.md "Invariants the checkers must implement" and the TLA+
definitions), each documented on its class with its source. They hold in both control planes:
the controller's partition states are ZooKeeper's znodes or, in KRaft, the committed metadata
image (``cluster.kraft.image``); the last three are KRaft-only (no-ops under ZooKeeper):

===============================  ===========================================================
``NoAckedLoss``                  acked records stay at their offset on the current leader
``HwBelowIsrLeo``                a leader never sets its HW above the LEO of a committed-ISR
                                 member
``ConsistentRead``               reads stay below the served HW; an offset never reads two ways
``MonotoneLeaderHw``             a leader's HW never goes down while it stays leader
``LeaderInIsr``                  leader is none or a member of the ISR (both views)
``LogMatching``                  two live replicas agree (id and epoch) below min(their HWs)
``HwWithinLog``                  structural: log start <= HW <= LEO on every replica
``WeakIsr``                      a leader's cached ISR holds its records below its HW
``StrongIsr``                    the controller's ISR holds every leader's records below its HW
``LeaderCandidateCompleteness``  running members of the controller's ISR have LEO >= true_hw
``ValidHighWatermark``           the controller's ISR has LEO >= the controller leader's HW
``MonotoneTrueHw``               what the leader computes its HW from reaches true_hw
``ElrCompleteness``              KRaft: committed-ELR members hold every committed record
``LeaderFromIsrOrElr``           KRaft: a new leader comes from the previous ISR or ELR,
                                 unless the change is an unclean election (RECOVERING)
``RaftSafety``                   KRaft: the metadata quorum obeys Raft safety
===============================  ===========================================================

Checks are registered by name (``@register``, ``CHECKS``); the checks of one ``CheckSuite``
share a ``Ghost`` that follows the run once per event from the trace (acked records and who
held them, consumed records, truncations, power losses, the controller's partition states, the
monotone ``true_hw``). "Loss the configuration legitimately allows" is classified, not raised:
it is recorded in ``checker.allowed`` with ``allowed_because`` naming the reason --

- an unclean leader election (``LOSS_RULES``): for what was acked or read before it;
- power loss: an acked record is allowed to vanish when every replica that held it (when it
  was acked, or that replicated it later) lost power since, one of them losing it from its
  unflushed log (KIP-101 scenario 2: "every replica crashed at once"); a replica whose log a
  power loss cut may lack offsets at or above the cut (the lossy restart of the last in-sync
  replicas, KIP-966);
- acks=1: a record acknowledged by a leader that has since lost leadership.

LogMatching is never excused by a power loss (KIP-101 scenario 2 must still flag divergence).
``attach(cluster)`` runs a suite after every event however the simulation advances;
``classify_losses`` explains a list of lost acked records (the scenario report's
``allowed_losses``).

Checks are incremental, so checking after every event stays cheap: a log range already compared
is compared again only when the trace shows a truncation, a log shrank or changed identity, or
the leader changed. State edited by hand (tests, notebooks) is not in the trace: a checker
called when no event ran since its previous call, ``check_now(cluster)`` and ``check_all``
re-check everything.
"""

from __future__ import annotations

import json
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any, ClassVar, NamedTuple

from kafkasim.core.events import Event, LeaderElection, PowerLossTruncate

__all__ = [
    "CHECKS",
    "LOSS_RULES",
    "CheckSuite",
    "Checker",
    "ConsistentRead",
    "ElrCompleteness",
    "Ghost",
    "HwBelowIsrLeo",
    "HwWithinLog",
    "InvariantViolation",
    "LeaderCandidateCompleteness",
    "LeaderFromIsrOrElr",
    "LeaderInIsr",
    "LogMatching",
    "MonotoneLeaderHw",
    "MonotoneTrueHw",
    "NoAckedLoss",
    "RaftSafety",
    "StrongIsr",
    "ValidHighWatermark",
    "Violation",
    "WeakIsr",
    "acked_loss_reasons",
    "attach",
    "check_all",
    "classify_losses",
    "describe_event",
    "detach",
    "make_suite",
    "register",
    "run_checked",
    "suite_for",
]

RAISE = "raise"
COLLECT = "collect"
_MODES = (RAISE, COLLECT)

TP = tuple[str, int]


# ------------------------------------------------------------------------------------ results
@dataclass(frozen=True, slots=True)
class Violation:
    """One invariant violation, with everything needed to find and replay it."""

    invariant: str
    message: str
    time_ms: int
    seed: int
    kafka_version: str = ""
    topic: str = ""
    partition: int = -1
    brokers: tuple = ()
    offsets: tuple = ()
    record_ids: tuple = ()
    event: str | None = None          # the engine event that just ran, when known
    trace_row: tuple | None = None    # the last trace row written (what that event did)
    events_processed: int = 0
    source: str = ""
    allowed_because: str | None = None   # set when the configuration legitimately allows it
    key: tuple = field(default=(), compare=False, repr=False)

    def __str__(self) -> str:
        where = f" {self.topic}-{self.partition}" if self.topic else ""
        lines = [f"{self.invariant} violated{where} at t={self.time_ms} ms "
                 f"(seed={self.seed}, kafka_version={self.kafka_version!r}, "
                 f"event #{self.events_processed}): {self.message}"]
        if self.allowed_because:
            lines.append(f"  allowed by the configuration: {self.allowed_because}")
        if self.event is not None:
            lines.append(f"  event: {self.event}")
        if self.trace_row is not None:
            lines.append(f"  last trace row: {self.trace_row!r}")
        involved = []
        if self.brokers:
            involved.append(f"brokers={list(self.brokers)}")
        if self.offsets:
            involved.append(f"offsets={list(self.offsets)}")
        if self.record_ids:
            involved.append(f"record_ids={list(self.record_ids)}")
        if involved:
            lines.append("  involved: " + ", ".join(involved))
        if self.source:
            lines.append(f"  source: {self.source}")
        lines.append(f"  reproduce: the same actions on Cluster(seed={self.seed}, "
                     f"kafka_version={self.kafka_version!r}, ...)")
        return "\n".join(lines)


class InvariantViolation(AssertionError):
    """Raised by a checker in ``on_violation="raise"`` mode; ``.violation`` has the details."""

    def __init__(self, violation: Violation) -> None:
        super().__init__(str(violation))
        self.violation = violation


def _timer_name(fn) -> str:
    """A timer's name: its function's, without the ``_timer_`` prefix (``isr_expiration``)."""
    name = getattr(fn, "__name__", str(fn))
    return name.removeprefix("_timer_")


def describe_event(event) -> str:
    """A short text for an engine event tuple ``(time_ms, seq, kind, args)``."""
    time_ms, seq, kind, args = event
    detail = ""
    if kind == "deliver" and len(args) >= 3:   # kafkasim.runtime.network.DELIVERY
        src, dst, msg = args[:3]
        detail = f" {type(msg).__name__} {src} -> {dst}"
    elif kind == "broker_timer" and len(args) >= 3:
        detail = f" broker {args[0]}: {_timer_name(args[2])}"
    elif kind == "client_timer" and len(args) >= 2:
        detail = f" client {args[0]}: {_timer_name(args[1])}"
    elif kind == "controller_event" and args:
        detail = f" {args[0]}"
    elif kind == "timeouts" and args:
        detail = f" {args[0]}"
    elif kind == "call" and args:
        detail = f" {getattr(args[0], '__qualname__', repr(args[0]))}"
    seq_text = f" seq={seq}" if seq >= 0 else ""
    return f"t={time_ms} ms{seq_text} {kind}{detail}"


def _events_run(engine) -> int:
    """Events run so far, exact even from inside ``Engine.run`` (which adds its count to
    ``events_processed`` only when it returns): every event scheduled is queued or was run."""
    if not hasattr(engine, "scheduled"):
        return engine.events_processed
    return engine.scheduled - engine.pending()


# ------------------------------------------------------------------------------- ghost state
class Acked(NamedTuple):
    """An acknowledged record: where the producer was told it is, and who acked it."""

    offset: int
    record_id: int
    acks: int            # -1 (all), 1 or 0
    client: str
    time_ms: int
    leader: int          # broker whose leader append produced that offset (-1: unknown)
    leader_epoch: int    # the epoch of that append (-1: unknown)
    term: int            # the leadership term (Ghost.terms) of that broker when acked, -1 if
                         # it no longer led by then


class Consumed(NamedTuple):
    """The first time any consumer read an offset."""

    offset: int
    record_id: int
    leader_epoch: int
    client: str
    time_ms: int
    served_hw: int


#: Rules that turn a trace row into (topic-partition, reason) when the row marks an event after
#: which losing acknowledged data is legitimate (an unclean election, a lossy shutdown of MinISR
#: replicas...). The checks that find a loss on such a partition classify it as allowed instead of
#: raising. Extend with ``LOSS_RULES.append(fn)``.
LOSS_RULES: list[Callable[[tuple], tuple[TP, str] | None]] = []


def _unclean_election_rule(row: tuple) -> tuple[TP, str] | None:
    """The controller elected a replica outside the ISR (a ``LeaderElection`` record with
    ``unclean``; ``PartitionOffline``, "unclean election disabled", loses nothing)."""
    _t, kind, _node, topic, partition, detail = row
    if kind == "unclean_election" or \
            kind == "controller" and isinstance(detail, LeaderElection) and detail.unclean:
        return (topic, partition), "unclean leader election"
    return None


LOSS_RULES.append(_unclean_election_rule)


class Ghost:
    """Ghost variables of one checked run, brought up to date once per event (``update``).

    - ``acked``: topic-partition -> acknowledged records, in acknowledgement order;
    - ``consumed``: topic-partition -> offset -> first read; ``new_consumed`` this update;
    - ``states``: the controller's ``(leader, leader_epoch, isr)`` per partition: ZooKeeper's
      partition state znodes, or in KRaft the committed metadata image (``cluster.kraft.image``:
      what every node agrees on, not the active controller's uncommitted view);
    - ``local_leaders``: ``(broker, tp, Partition)`` for every replica that believes it leads;
    - ``replica_logs``: topic-partition -> [(broker, Log)] for every replica with a log;
    - ``true_hw``: the largest HW any non-stale leader reached (monotone by construction);
    - ``terms``: topic-partition -> (leadership term, leading broker or -1), from the trace's
      become_leader/become_follower rows (an epoch bump that keeps the leader is one term);
    - ``truncated``: (broker, tp) whose log the trace shows truncated since the last update;
    - ``loss_allowances``: topic-partition -> reasons loss became legitimate (``LOSS_RULES``);
      ``loss_events`` the same as ``(time_ms, reason, leader epoch it starts or None)``;
    - ``power_losses``: broker -> times it lost power (trace ``broker_power_loss``);
      ``power_truncations``: topic-partition -> ``(time_ms, broker, kept LEO, old LEO)`` for every
      log a power loss cut short (``truncate`` rows holding a ``PowerLossTruncate``);
    - ``holders``: record id -> {broker: time it was first seen holding it} for the brokers
      whose log held it at its offset when it was acked, or replicated it later (absent when
      the ack was only seen in a replay of the trace, not as it happened);
    - ``true_hw_time``: topic-partition -> when ``true_hw`` last rose;
    - ``hw_live``: (broker, tp) -> whether that replica's HW is current: True for a leader and
      for a follower once a fetch response set it since it last became follower or restarted;
      False from a restart (the HW read back from ``replication-offset-checkpoint``) or a
      become_follower until then (a stale checkpointed HW is not a claim about committed data);
    - ``elr``: KRaft: the committed ELR of each partition (``cluster.kraft.image``, KIP-966);
    - ``meta_changes``: KRaft: ``(tp, offset, record, before, after)`` for every committed
      PartitionRecord / PartitionChangeRecord since the last update, replayed in log order from
      the metadata log (so two changes committed by one event are both seen);
    - ``full``: True when everything must be re-checked (hand-edited state, ``check_now``).

    Loss classification (``loss_reasons``, ``record_loss_reasons``, ``replica_loss_reasons``):
    a loss is legitimate after an unclean election on the partition (``LOSS_RULES``, applied to
    what was acked or read at or before it) and when every replica that held an acked record
    lost power after it held it, with at least one of those power losses cutting it from a log
    (outside Kafka's "one in-sync replica survives" guarantee: KIP-101 scenario 2; the KIP-966
    spec disables NoCommittedRecordLostGlobally after MinISR lossy shutdowns).
    """

    APPEND_MEMORY = 4096   # leader appends remembered per partition (to attribute acks=1 acks)

    def __init__(self) -> None:
        self._cluster_ref: Callable[[], Any] | None = None
        self.reset()

    def reset(self) -> None:
        self.generation = getattr(self, "generation", 0) + 1   # checkers drop their state
        self.cursor = 0
        self.events_seen = -1
        self.full = True
        self.new_rows: list[tuple] = []
        self.truncated: set[tuple[int, TP]] = set()
        self.acked: dict[TP, list[Acked]] = {}
        self.appends: dict[TP, deque] = {}
        self.consumer_cursor: dict[str, int] = {}
        self.consumed: dict[TP, dict[int, Consumed]] = {}
        self.consumed_list: dict[TP, list[Consumed]] = {}
        self.new_consumed: list[tuple[str, Any, Consumed | None]] = []
        self.states: dict[TP, tuple[int, int, tuple[int, ...]]] = {}
        self.local_leaders: list[tuple[int, TP, Any]] = []
        self.replica_logs: dict[TP, list[tuple[int, Any]]] = {}
        self.true_hw: dict[TP, int] = {}
        self.terms: dict[TP, tuple[int, int]] = {}
        self.loss_allowances: dict[TP, list[str]] = {}
        self.loss_events: dict[TP, list[tuple[int, str, int | None]]] = {}
        self.power_losses: dict[int, list[int]] = {}
        self.power_truncations: dict[TP, list[tuple[int, int, int, int]]] = {}
        self.holders: dict[int, dict[int, int]] = {}
        self._acked_at: dict[TP, dict[int, list[int]]] = {}   # offset -> acked ids (holders)
        self.acked_by_id: dict[int, tuple[TP, Acked]] = {}
        self.true_hw_time: dict[TP, int] = {}
        self.hw_live: dict[tuple[int, TP], bool] = {}
        self.replicas: dict[TP, tuple[int, ...]] = {}
        self._live_acks = False
        self._full_next = False
        self.event: tuple | None = None      # set by run_checked: the engine event just run
        self._zk_cache: dict[str, tuple[str, Any]] = {}
        self._zk_key: tuple | None = None
        self._states_changed = True
        self.structural = True
        self.dirty: set[TP] = set()
        self.leader_info: dict[TP, tuple] = {}
        self._prev_row: tuple | None = None   # the row before the one update is applying
        # KRaft: committed metadata followed record by record (``_follow_metadata_log``)
        self.elr: dict[TP, tuple[int, ...]] = {}
        self.meta_changes: list[tuple] = []
        self.meta_image = None
        self.raft_key: tuple | None = None
        self.raft_changed = True

    def __getstate__(self) -> dict:
        """Plain data, with the checked cluster held strongly: pickled together with it (a
        History snapshot of a checked branch), the copy follows the copied cluster."""
        state = dict(self.__dict__)
        ref = self._cluster_ref
        state["_cluster_ref"] = ref() if ref is not None else None
        return state

    def __setstate__(self, state: dict) -> None:
        cluster = state.pop("_cluster_ref")
        self.__dict__.update(state)
        self._cluster_ref = weakref.ref(cluster) if cluster is not None else None

    def recheck_next(self) -> None:
        """Make the next update a full re-check (the state may have changed unobserved)."""
        self._full_next = True

    # -- context for reports -------------------------------------------------------------------
    def event_text(self) -> str | None:
        return describe_event(self.event) if self.event is not None else None

    def last_row(self, cluster) -> tuple | None:
        if self.new_rows:
            return self.new_rows[-1]
        rows = cluster.trace.rows
        return rows[-1] if rows else None

    def allow_loss(self, tp: TP, reason: str, time_ms: int | None = None,
                   epoch: int | None = None) -> None:
        """Record that loss on ``tp`` became legitimate (at ``time_ms``; default: now, or the
        start of time when unknown): records acked or read up to then may be lost, and so may
        records written in a leader epoch before ``epoch`` (the one this event starts: a
        deposed leader may still acknowledge writes in its old epoch)."""
        reasons = self.loss_allowances.setdefault(tp, [])
        if reason not in reasons:
            reasons.append(reason)
        if time_ms is None:
            ref = self._cluster_ref() if self._cluster_ref is not None else None
            time_ms = ref.now if ref is not None else 1 << 62
        self.loss_events.setdefault(tp, []).append((time_ms, reason, epoch))

    def _raise_true_hw(self, tp: TP, hw: int, time_ms: int) -> None:
        if hw > self.true_hw.get(tp, 0):
            self.true_hw[tp] = hw
            self.true_hw_time[tp] = time_ms

    # -- loss classification ---------------------------------------------------------------------
    def loss_reasons(self, tp: TP, since_ms: int = 0, epoch: int = -1) -> list[str]:
        """Partition-wide reasons (``LOSS_RULES`` rows, e.g. unclean elections) recorded at or
        after ``since_ms``, or starting a leader epoch after ``epoch`` (when >= 0): data acked or
        read before such a row, or written in an older epoch, may legitimately be lost."""
        out = []
        for t, reason, starts in self.loss_events.get(tp, ()):
            if t >= since_ms or (starts is not None and 0 <= epoch < starts):
                text = f"{reason} at t={t} ms"
                if text not in out:
                    out.append(text)
        return out

    def record_loss_reasons(self, tp: TP, offset: int, record_id: int, since_ms: int,
                            epoch: int = -1) -> list[str]:
        """Why losing record ``record_id`` (at ``offset``, acked or read at ``since_ms``) is
        legitimate; empty when it is a bug. Power loss counts when every broker that held it
        (``holders``; unknown: every replica of the partition, since ``since_ms``) lost power
        after it had the record, and a power loss cut it from at least one of their logs.
        ``epoch``: the leader epoch it was written in (-1: unknown)."""
        out = self.loss_reasons(tp, since_ms, epoch)
        truncs = self.power_truncations.get(tp)
        if not truncs:
            return out
        held = self.holders.get(record_id)
        if held is None:
            held = dict.fromkeys(self.replicas.get(tp, ()), since_ms)
        if held and all(any(t >= since for t in self.power_losses.get(b, ()))
                        for b, since in held.items()):
            cut = sorted({b for t, b, keep, end in truncs
                          if b in held and t >= held[b] and keep <= offset < end})
            if cut:
                out.append(f"power loss of every replica that held it ({sorted(held)}); it "
                           f"was cut from the unflushed log of {cut}")
        return out

    def stale(self, cluster, broker: int, tp: TP) -> bool:
        """The replica has not taken in the controller's current leader epoch (or is down)."""
        st = self.states.get(tp)
        b = cluster.brokers.get(broker)
        part = b.replica_manager.partitions.get(tp) if b is not None else None
        return st is not None and (part is None or part.leader_epoch < st[1])

    def replica_loss_reasons(self, tp: TP, brokers: Iterable[int], offset: int,
                             since_ms: int = 0, *, cluster=None) -> list[str]:
        """Why a replica of ``brokers`` may legitimately lack (or differ at) ``offset``: an
        unclean election on the partition (with ``cluster``: only while one of them is stale,
        i.e. has not followed the new leader yet -- once both have, divergence is a bug, as in
        KIP-279), or a power loss that cut that replica's log at or below ``offset`` (its log
        past that point was rebuilt from another replica)."""
        bs = set(brokers)
        out = []
        if cluster is None or any(self.stale(cluster, b, tp) for b in bs):
            out = self.loss_reasons(tp, since_ms)
        for t, b, keep, _end in self.power_truncations.get(tp, ()):
            if b in bs and keep <= offset:
                text = f"power loss of broker {b} at t={t} ms (its log was cut to {keep})"
                if text not in out:
                    out.append(text)
        return out

    # -- update --------------------------------------------------------------------------------
    def update(self, cluster, *, full: bool = False) -> None:
        """Bring the ghost variables up to date: apply each trace row written since the last
        call (one named step per kind, ``_UPDATE_STEPS``), then rescan the consumers, the
        controller's partition states and the replicas."""
        ref = self._cluster_ref() if self._cluster_ref is not None else None
        if ref is not cluster:
            self.reset()
            self._cluster_ref = weakref.ref(cluster)
        events = _events_run(cluster.engine)
        # no event since the last update, or a scheduled user callback (Cluster.at) just ran:
        # the state may have been edited by hand, outside the trace
        self.full = full or events == self.events_seen or self._full_next or \
            (self.event is not None and self.event[2] == "call")
        self._full_next = False
        self.events_seen = events
        trace = cluster.trace
        rows = trace.rows
        # the cursor is an absolute row number: a trace that spills (``Trace.spill_to``)
        # keeps only the rows since its last spill in ``rows``
        base = getattr(trace, "spilled", 0)
        n = base + len(rows)
        if self.cursor > n:   # the trace was replaced
            self.cursor = 0
            self.full = True
        if self.cursor < base:   # rows were spilled before this checker saw them
            self.full = True
        start = max(self.cursor, base)
        new = rows[start - base:]
        self.cursor = n
        self.new_rows = new
        self.meta_changes = []
        self.raft_changed = self.full
        self.truncated = set()
        self.dirty = dirty = set()
        self.structural = self.full
        self._live_acks = not self.full and start > 0
        self._prev_row = None
        steps = _UPDATE_STEPS
        for row in new:
            kind = row[1]
            if kind == "send" or kind == "recv":
                if kind == "recv" and row[5][0] in _STRUCTURAL_MESSAGES:
                    self.structural = True
                continue
            if kind.startswith("raft_"):
                # the metadata quorum's own rows (KRaft): they change no replica's role or log;
                # committed partition states are read from the image (``_read_states``)
                self.raft_changed = True
                continue
            if kind.startswith("controller_node"):
                self.raft_changed = True
            step = steps.get(kind)
            if kind in _DATA_KINDS:
                dirty.add((row[3], row[4]))
                if step is not None:
                    step(self, cluster, row)
            else:
                # a control-plane row: roles, ISR, faults, truncations... rescan everything
                self.structural = True
                if step is not None:
                    step(self, cluster, row)
                self._apply_loss_rules(row)
            self._prev_row = row
        self._scan_consumers(cluster)
        self._read_states(cluster)
        self._scan_replicas(cluster)

    # -- update steps: one per trace kind (``_UPDATE_STEPS``) --------------------------------
    def _step_hw(self, cluster, row) -> None:
        """A replica's HW moved: the controller's current leader raises ``true_hw``; a HW set
        by a fetch response (or by a leader) is current, one lowered by a truncation or read
        back at restart (the row right after "truncate" / "log_recovery") is not."""
        tp = (row[3], row[4])
        info = self.leader_info.get(tp)
        if info is not None and info[0] == row[2] and row[5] > self.true_hw.get(tp, 0):
            self._raise_true_hw(tp, row[5], row[0])
        prev = self._prev_row
        if prev is None or prev[2] != row[2] or prev[3] != row[3] or \
                prev[4] != row[4] or (prev[1] != "truncate" and prev[1] != "log_recovery"):
            self.hw_live[(row[2], tp)] = True

    def _step_append(self, cluster, row) -> None:
        """A leader appended: remember (first, last, leader, epoch) to attribute acks=1 acks."""
        tp = (row[3], row[4])
        first, last, epoch = row[5]
        q = self.appends.get(tp)
        if q is None:
            q = self.appends[tp] = deque(maxlen=self.APPEND_MEMORY)
        q.append((first, last, row[2], epoch))

    def _step_produce_result(self, cluster, row) -> None:
        if row[5][1] == "acked":
            self._on_acked(cluster, row)

    def _step_truncate(self, cluster, row) -> None:
        """A log was truncated; a power loss cut is remembered for loss classification."""
        tp = (row[3], row[4])
        self.truncated.add((row[2], tp))
        detail = row[5]
        if isinstance(detail, PowerLossTruncate):
            self.power_truncations.setdefault(tp, []).append(
                (row[0], row[2], detail.offset, detail.offset + detail.lost))

    def _step_power_loss(self, cluster, row) -> None:
        self.power_losses.setdefault(row[2], []).append(row[0])

    def _step_log_recovery(self, cluster, row) -> None:
        """A restart read the HW back from its checkpoint: not current until a fetch sets it."""
        self.hw_live[(row[2], (row[3], row[4]))] = False

    def _step_role(self, cluster, row) -> None:
        """become_leader / become_follower: leadership terms; a leader's HW is current, a new
        follower's is not until a fetch response sets it."""
        self._on_role(row)
        self.hw_live[(row[2], (row[3], row[4]))] = row[1] == "become_leader"

    def _apply_loss_rules(self, row) -> None:
        """``LOSS_RULES``: the row makes loss legitimate from its time (and from the leader
        epoch it starts, when its record has one)."""
        for rule in LOSS_RULES:
            hit = rule(row)
            if hit is not None:
                detail = row[5]
                epoch = getattr(detail, "leader_epoch", None) if isinstance(detail, Event) \
                    else None
                self.allow_loss(hit[0], hit[1], row[0], epoch)

    def _on_role(self, row) -> None:
        """Leadership terms from the trace: a new term whenever another broker starts leading,
        or the leading broker steps down."""
        tp = (row[3], row[4])
        cur = self.terms.get(tp)
        if row[1] == "become_leader":
            if cur is None:
                self.terms[tp] = (0, row[2])
            elif cur[1] != row[2]:
                self.terms[tp] = (cur[0] + 1, row[2])
        elif cur is not None and cur[1] == row[2]:
            self.terms[tp] = (cur[0] + 1, -1)

    def _on_acked(self, cluster, row) -> None:
        t, _kind, client_id, topic, partition, (rid, _status, offset) = row
        client = cluster.clients.get(client_id)
        acks = getattr(client, "acks", -1)
        tp = (topic, partition)
        leader = epoch = -1
        if offset is not None and offset >= 0:
            q = self.appends.get(tp)
            if q:
                for first, last, broker, ep in reversed(q):
                    if first <= offset <= last:
                        leader, epoch = broker, ep
                        break
        term = -1
        cur = self.terms.get(tp)
        if cur is not None and cur[1] == leader >= 0:
            term = cur[0]
        rec = Acked(offset if offset is not None else -1, rid, acks, client_id, t, leader, epoch,
                    term)
        self.acked.setdefault(tp, []).append(rec)
        self.acked_by_id[rid] = (tp, rec)
        if self._live_acks and rec.offset >= 0:
            # who holds it now, as it is acked (a replay of an old trace cannot know)
            held = {}
            for bid, broker in cluster.brokers.items():
                if _lookup(broker.logs.get(tp), rec.offset) == rid:
                    held[bid] = t
            self.holders[rid] = held
            self._acked_at.setdefault(tp, {}).setdefault(rec.offset, []).append(rid)

    def _on_replicated(self, cluster, row) -> None:
        """A follower appended [base, last]: it now holds the acked records there, if any."""
        at = self._acked_at.get((row[3], row[4]))
        if not at:
            return
        base, last = row[5]
        broker = cluster.brokers.get(row[2])
        log = broker.logs.get((row[3], row[4])) if broker is not None else None
        if log is None:
            return
        if last - base > len(at):
            offsets = [o for o in at if base <= o <= last]
        else:
            offsets = [o for o in range(base, last + 1) if o in at]
        for o in offsets:
            have = _lookup(log, o)
            for rid in at[o]:
                if rid == have:
                    self.holders[rid].setdefault(row[2], row[0])

    def _scan_consumers(self, cluster) -> None:
        self.new_consumed = []
        for cid, client in cluster.clients.items():
            consumed = getattr(client, "consumed", None)
            if consumed is None or not isinstance(consumed, list):
                continue
            start = self.consumer_cursor.get(cid, 0)
            n = len(consumed)
            if start > n:       # poll() handed back fewer than it fetched
                start = n
            if start == n:
                self.consumer_cursor[cid] = n
                continue
            now = cluster.now
            for rec in consumed[start:n]:
                tp = (rec.topic, rec.partition)
                by_offset = self.consumed.get(tp)
                if by_offset is None:
                    by_offset = self.consumed[tp] = {}
                    self.consumed_list[tp] = []
                prev = by_offset.get(rec.offset)
                if prev is None:
                    c = Consumed(rec.offset, rec.record_id, rec.leader_epoch, cid, now,
                                 rec.served_hw)
                    by_offset[rec.offset] = c
                    self.consumed_list[tp].append(c)
                    self.new_consumed.append((cid, rec, None))
                else:
                    self.new_consumed.append((cid, rec, prev))
            self.consumer_cursor[cid] = n

    def _read_states(self, cluster) -> None:
        """The controller's view: ZooKeeper's partition state znodes (parsed once per write), or
        in KRaft the committed metadata image, followed record by record
        (``_follow_metadata_log``)."""
        kraft = getattr(cluster, "kraft", None)
        if kraft is not None:
            # KRaft: the committed metadata image (changes only when its offset moves)
            img = kraft.image
            key = ("kraft", img.offset, len(cluster.topic_configs))
            self._states_changed = True
            if not self.full and key == self._zk_key:
                self._states_changed = False
                return
            self._zk_key = key
            self._follow_metadata_log(kraft, img.offset)
            states = {}
            elr = {}
            for tp, reg in img.partitions.items():
                self.replicas[tp] = tuple(reg.replicas)
                states[tp] = (reg.leader, reg.leader_epoch, tuple(reg.isr))
                if reg.elr:
                    elr[tp] = tuple(reg.elr)
            self.states = states
            self.elr = elr
            return
        zk = getattr(cluster, "zk", None)
        if zk is None:  # a control plane without ZooKeeper: use the public query
            self._states_changed = True
            states = {}
            for topic in cluster.topics():
                for p, reps in cluster.assignment(topic).items():
                    self.replicas[(topic, p)] = tuple(reps)
                    st = cluster.partition_state(topic, p)
                    states[(topic, p)] = (st["leader"], st["leader_epoch"], tuple(st["isr"]))
            self.states = states
            return
        # every ZooKeeper write bumps the zxid: unchanged zxid, unchanged states
        key = (getattr(zk, "zxid", None), len(zk.znodes), len(cluster.topic_configs))
        self._states_changed = True
        if not self.full and key[0] is not None and key == self._zk_key:
            self._states_changed = False
            return
        self._zk_key = key
        states = {}
        cache = self._zk_cache
        for topic in cluster.topic_configs:
            tpath = f"/brokers/topics/{topic}"
            parts = self._parsed(zk, cache, tpath)
            if parts is None:
                continue
            for p, reps in parts["partitions"].items():
                self.replicas[(topic, int(p))] = tuple(reps)
                d = self._parsed(zk, cache, f"{tpath}/partitions/{p}/state")
                if d is not None:
                    states[(topic, int(p))] = (d["leader"], d["leader_epoch"], tuple(d["isr"]))
        self.states = states

    def _follow_metadata_log(self, kraft, upto: int) -> None:
        """KRaft: replay the committed metadata records up to ``upto`` into a shadow
        ``MetadataImage``, noting each partition change with the registration before and after
        it (``meta_changes``). The records come from the raft log of a node that has committed
        them (controllers, then the brokers' observers); committed entries are the same on
        every node (Raft Log Matching; ``RaftSafety`` checks it)."""
        from kafkasim.control.kraft.image import MetadataImage

        shadow = self.meta_image
        if shadow is None:
            shadow = self.meta_image = MetadataImage()
        lo = shadow.offset + 1
        if upto < lo:
            return
        source = None
        for raft in _raft_clients(kraft.cluster):
            entries = raft.log.entries
            if len(raft.committed) > upto and len(entries) > upto:
                source = entries
                break
        if source is None:
            return   # not on any node's log (a bug RaftSafety reports); try again later
        parts = shadow.partitions
        changes = self.meta_changes
        for off in range(lo, upto + 1):
            record = source[off][2]
            before = None
            tid = getattr(record, "topic_id", None)
            if tid is not None and hasattr(record, "partition_id"):
                name = shadow.topic_names.get(tid)
                before = parts.get((name, record.partition_id)) if name is not None else None
            tp = shadow.replay(record, off)
            if tp is not None:
                changes.append((tp, off, record, before, parts[tp]))
        shadow.offset = upto

    @staticmethod
    def _parsed(zk, cache: dict, path: str):
        node = zk.get(path)
        if node is None:
            cache.pop(path, None)
            return None
        hit = cache.get(path)
        if hit is not None and hit[0] == node.data:
            return hit[1]
        value = json.loads(node.data)
        cache[path] = (node.data, value)
        return value

    def _scan_replicas(self, cluster) -> None:
        """Replica logs, the replicas that believe they lead, the controller's leaders.

        Roles and logs change only with control-plane events (become_leader/follower, broker
        start, LeaderAndIsr/StopReplica, controller writes), so they are rescanned only then."""
        if not (self.structural or self._states_changed):
            return
        brokers = cluster.brokers
        logs: dict[TP, list[tuple[int, Any]]] = {}
        leaders = []
        for bid, broker in brokers.items():
            for tp, log in broker.logs.items():
                logs.setdefault(tp, []).append((bid, log))
            for tp, part in broker.replica_manager.partitions.items():
                if part.is_leader:
                    leaders.append((bid, tp, part))
        self.replica_logs = logs
        self.local_leaders = leaders
        # the controller's leader of each partition: (leader, epoch, log, key, applied)
        info = {}
        for tp, (leader, epoch, _isr) in self.states.items():
            if leader < 0:
                continue
            broker = brokers.get(leader)
            if broker is None or not broker.is_running:
                continue
            lifecycle = broker.lifecycle
            if lifecycle is not None and not lifecycle.publishing:
                # a KRaft broker still starting (not yet caught up with the metadata log) has
                # no replica: it serves nothing, whatever its log dir holds (BrokerServer)
                continue
            part = broker.replica_manager.partitions.get(tp)
            applied = part is not None and part.is_leader and part.leader_epoch == epoch
            log = broker.logs.get(tp)
            key = (leader, epoch, id(log), log.log_start_offset if log is not None else 0)
            info[tp] = (leader, epoch, log, key, applied)
            if applied and log.high_watermark > self.true_hw.get(tp, 0):
                self._raise_true_hw(tp, log.high_watermark, cluster.now)
        self.leader_info = info


#: Data-path trace kinds: they never change roles, ISRs or which logs exist.
_DATA_KINDS = frozenset({
    "send", "recv", "hw", "append", "replicate", "produce_result", "consume", "hold", "drop",
    "produce_rejected", "produce_timed_out", "fetch_failed", "offset_commit", "isr_proposed",
})
#: Messages whose arrival can change roles or remove replicas.
_STRUCTURAL_MESSAGES = frozenset({"LeaderAndIsrRequest", "StopReplicaRequest"})
#: Ghost.update's step for each trace kind it follows (kinds absent here only mark partitions
#: dirty, data-path, or force a rescan, control-plane).
_UPDATE_STEPS: dict[str, Callable[[Ghost, Any, tuple], None]] = {
    "hw": Ghost._step_hw,
    "append": Ghost._step_append,
    "produce_result": Ghost._step_produce_result,
    "replicate": Ghost._on_replicated,
    "truncate": Ghost._step_truncate,
    "broker_power_loss": Ghost._step_power_loss,
    "log_recovery": Ghost._step_log_recovery,
    "become_leader": Ghost._step_role,
    "become_follower": Ghost._step_role,
}


# ----------------------------------------------------------------------------------- checkers
class Checker:
    """Base class: ``checker(cluster)`` checks the current state and reports violations.

    ``on_violation``: ``"raise"`` (default) raises ``InvariantViolation`` at the first new
    violation; ``"collect"`` only records. ``first`` is the first violation, ``violations`` all
    of them (up to ``max_violations``), ``allowed`` the losses the configuration allows.
    """

    name: ClassVar[str] = ""
    source: ClassVar[str] = ""

    def __init__(self, *, on_violation: str = RAISE, max_violations: int = 1000) -> None:
        if on_violation not in _MODES:
            raise ValueError(f"on_violation must be one of {_MODES}, got {on_violation!r}")
        self.on_violation = on_violation
        self.max_violations = max_violations
        self.ghost = Ghost()
        self._owns_ghost = True
        self._generation = -1
        self.first: Violation | None = None
        self.violations: list[Violation] = []
        self.allowed: list[Violation] = []
        self._seen: set[tuple] = set()

    def __repr__(self) -> str:
        state = "ok" if self.first is None else f"{len(self.violations)} violation(s)"
        return f"{type(self).__name__}({state})"

    @property
    def ok(self) -> bool:
        return self.first is None

    def reset(self) -> None:
        """Forget history and violations (e.g. before checking another cluster)."""
        self.ghost.reset()
        self.first = None
        self.violations = []
        self.allowed = []
        self._seen = set()
        self._reset_state()

    def _reset_state(self) -> None:
        """Subclasses: forget incremental state."""

    # -- entry points ----------------------------------------------------------------------------
    def __call__(self, cluster) -> None:
        if self._owns_ghost:
            self.ghost.update(cluster)
        self._report(cluster, self._run(cluster, self.ghost))

    def check_now(self, cluster) -> list[Violation]:
        """A full re-check of the current state; returns every violation present now, including
        ones reported before (in "raise" mode, raises at the first of them)."""
        self.ghost.update(cluster, full=True)
        return self._report(cluster, self._run(cluster, self.ghost), again=True)

    def _run(self, cluster, g: Ghost) -> Iterable[Violation]:
        if self._generation != g.generation:   # a new run or another cluster: start afresh
            self._reset_state()
            self._generation = g.generation
        return self.evaluate(cluster, g)

    def evaluate(self, cluster, g: Ghost) -> Iterable[Violation]:
        """Yield the violations in the current state (subclasses)."""
        raise NotImplementedError

    # -- reporting -------------------------------------------------------------------------------
    def violation(self, cluster, g: Ghost, key: tuple, message: str, *, topic: str = "",
                  partition: int = -1, brokers: Iterable = (), offsets: Iterable = (),
                  record_ids: Iterable = (), allowed_because: str | None = None) -> Violation:
        return Violation(
            invariant=self.name, message=message, time_ms=cluster.now,
            seed=cluster.engine.seed, kafka_version=getattr(cluster, "kafka_version", ""),
            topic=topic, partition=partition, brokers=tuple(brokers), offsets=tuple(offsets),
            record_ids=tuple(record_ids), event=g.event_text(), trace_row=g.last_row(cluster),
            events_processed=_events_run(cluster.engine), source=self.source,
            allowed_because=allowed_because, key=(self.name, *key))

    def _report(self, cluster, found: Iterable[Violation], *, again: bool = False
                ) -> list[Violation]:
        """Record new violations (each key once); raise at the first in "raise" mode.

        ``again``: also return (and raise for) violations already reported earlier."""
        out = []
        for v in found:
            if v.key in self._seen:
                if again:
                    out.append(v)
                continue
            self._seen.add(v.key)
            out.append(v)
            if v.allowed_because is not None:
                if len(self.allowed) < self.max_violations:
                    self.allowed.append(v)
                continue
            if self.first is None:
                self.first = v
            if len(self.violations) < self.max_violations:
                self.violations.append(v)
        if self.on_violation == RAISE:
            for v in out:
                if v.allowed_because is None:
                    raise InvariantViolation(v)
        return out

    def report(self) -> str:
        """Human-readable summary."""
        if self.first is None and not self.allowed:
            return f"{type(self).__name__}: no violation"
        out = [str(v) for v in self.violations]
        out += [f"[allowed] {v}" for v in self.allowed]
        return "\n".join(out)


#: Registered checks by name, in registration order.
CHECKS: dict[str, type[Checker]] = {}


def register(cls: type[Checker]) -> type[Checker]:
    """Class decorator: make a check available by its ``name`` (``make_suite``, ``check_all``)."""
    if not cls.name:
        raise ValueError(f"{cls.__name__} needs a non-empty name")
    CHECKS[cls.name] = cls
    return cls


class CheckSuite(Checker):
    """Several checks sharing one ``Ghost``; is itself a ``Checker`` (pass it as ``check=``)."""

    name = "suite"

    def __init__(self, checks: Iterable[Checker], *, on_violation: str = RAISE,
                 max_violations: int = 1000) -> None:
        super().__init__(on_violation=on_violation, max_violations=max_violations)
        self.checks = list(checks)
        for c in self.checks:
            c.ghost = self.ghost
            c._owns_ghost = False

    def __repr__(self) -> str:
        names = ", ".join(c.name for c in self.checks)
        state = "ok" if self.first is None else f"{len(self.violations)} violation(s)"
        return f"CheckSuite([{names}], {state})"

    @property
    def names(self) -> list[str]:
        return [c.name for c in self.checks]

    def __getitem__(self, name: str) -> Checker:
        for c in self.checks:
            if c.name == name:
                return c
        raise KeyError(name)

    def _reset_state(self) -> None:
        for c in self.checks:
            c._reset_state()

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        for c in self.checks:
            yield from c._run(cluster, g)

    def violations_of(self, name: str) -> list[Violation]:
        return [v for v in self.violations if v.invariant == name]


# ------------------------------------------------------------------------------ the invariants
class _LeaderPresence:
    """Incrementally verifies that expected (offset, record id) pairs are in a leader's log.

    ``marks[tp] = (leader key, records verified, leader LEO)``: records already verified against
    the same leader log are re-verified only after a truncation, a shrink of that log, a leader
    change, or in full mode.
    """

    __slots__ = ("marks",)

    def __init__(self) -> None:
        self.marks: dict[TP, tuple] = {}

    def start_index(self, g: Ghost, tp: TP, key: tuple, leader: int, leo: int) -> int:
        mark = self.marks.get(tp)
        if g.full or mark is None or mark[0] != key or leo < mark[2] or \
                (leader, tp) in g.truncated:
            return 0
        return mark[1]

    def done(self, tp: TP, key: tuple, n: int, leo: int) -> None:
        self.marks[tp] = (key, n, leo)


def _lookup(log, offset: int) -> int | None:
    """Record id at ``offset`` in ``log``, None when absent (past LEO or no log)."""
    if log is None:
        return None
    start = log.log_start_offset
    if start <= offset < log.log_end_offset:
        return log.ids[offset - start]
    return None


def acked_loss_reasons(g: Ghost, tp: TP, r: Acked, leader: int, term: int) -> list[str]:
    """Why losing acked record ``r`` from ``leader``'s log (in leadership ``term``) is allowed;
    empty when it is a bug."""
    reasons = []
    if r.acks == 1 and (r.term != term or r.leader != leader or r.term < 0):
        who = f"leader {r.leader}" if r.leader >= 0 else "its leader"
        reasons.append(f"acks=1 (acknowledged by {who} alone; leadership has moved since)")
    return reasons + g.record_loss_reasons(tp, r.offset, r.record_id, r.time_ms,
                                           r.leader_epoch)


@register
class NoAckedLoss(Checker):
    """Every acked record is at its acked offset in the current leader's log.

    acks=all: always, while the controller has a live leader (teaching-scenarios "Invariants" 1,
    ≈ LeaderCompleteness + StrongIsr of the KIP-966 TLA+ spec; KIP-101 scenario 1; Jepsen 2013
    "Call me maybe: Kafka"). acks=1: while the broker that appended it is still the leader in the
    same term (fact sheet §3: acks=1 answers right after the leader append); missing after the
    leadership moved, it is reported as *allowed* ("acks=1": Kafka promises nothing more). acks=0:
    never (no offset is returned). Records below the log start offset (deleted) are not checked.
    A loss the configuration allows (``Ghost.record_loss_reasons``: an unclean election after the
    ack, or a power loss of every replica that held it) is reported in ``allowed``, not raised.
    """

    name = "NoAckedLoss"
    source = ("teaching-scenarios.md Invariants 1 (LeaderCompleteness/StrongIsr, KIP-966 spec); "
              "KIP-101 scenario 1; Jepsen 2013; fact sheet §3")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._presence = _LeaderPresence()

    def _reset_state(self) -> None:
        self._presence = _LeaderPresence()

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        presence = self._presence
        info = g.leader_info
        for tp, recs in g.acked.items():
            found = info.get(tp)
            if found is None:
                continue
            leader, epoch, log, key, _applied = found
            term, term_leader = g.terms.get(tp, (-1, -1))
            if term_leader != leader:
                term = -2        # the controller's leader has not taken over: no acks=1 check
            key = (key, term)
            leo = log.log_end_offset if log is not None else 0
            start = log.log_start_offset if log is not None else 0
            i = presence.start_index(g, tp, key, leader, leo)
            n = len(recs)
            if i == n:
                continue
            for j in range(i, n):
                r = recs[j]
                off = r.offset
                if r.acks == 0 or off < 0 or off < start:
                    continue
                have = _lookup(log, off)
                if have == r.record_id:
                    continue
                reasons = acked_loss_reasons(g, tp, r, leader, term)
                acks = "all" if r.acks == -1 else str(r.acks)
                what = (f"offset {off} holds record {have} instead"
                        if have is not None else f"the leader's log ends at {leo}")
                yield self.violation(
                    cluster, g, (tp, off, r.record_id),
                    f"record {r.record_id} ({cluster.records.value(r.record_id)!r}), acked "
                    f"with acks={acks} to {r.client} at t={r.time_ms} ms at offset {off}, is "
                    f"missing from leader {leader}'s log (epoch {epoch}): {what}",
                    topic=tp[0], partition=tp[1], brokers=(leader,), offsets=(off,),
                    record_ids=(r.record_id,) if have is None else (r.record_id, have),
                    allowed_because="; ".join(reasons) if reasons else None)
            presence.done(tp, key, n, leo)


@register
class HwBelowIsrLeo(Checker):
    """A leader never sets its HW above the actual LEO of a member of its committed ISR.

    Checked whenever a leader's HW changes (and when a leader is first seen). Fact sheet §1
    (HW = min LEO over the maximal ISR, which contains the committed ISR; maybeIncrementLeaderHW);
    teaching-scenarios "Invariants" 5 (ValidHighWatermark, AsyncIsr.tla).
    """

    name = "HwBelowIsrLeo"
    source = ("fact sheet §1 (Partition.maybeIncrementLeaderHW, KIP-497 maximal ISR); "
              "teaching-scenarios Invariants 5 (ValidHighWatermark, AsyncIsr.tla)")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._last: dict[tuple[int, TP], tuple] = {}

    def _reset_state(self) -> None:
        self._last = {}

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        last = self._last
        seen = {}
        brokers = cluster.brokers
        for bid, tp, part in g.local_leaders:
            hw = part.log.high_watermark
            cur = (brokers[bid].incarnation, part.leader_epoch, hw)
            k = (bid, tp)
            seen[k] = cur
            if last.get(k) == cur:
                continue
            for m in part.isr:
                if m == bid:
                    continue
                mb = brokers.get(m)
                mlog = mb.logs.get(tp) if mb is not None else None
                mleo = mlog.log_end_offset if mlog is not None else 0
                if hw > mleo:
                    why = g.replica_loss_reasons(tp, (m,), mleo)
                    yield self.violation(
                        cluster, g, (tp, bid, part.leader_epoch, hw, m),
                        f"leader {bid} (epoch {part.leader_epoch}) set its HW to {hw} but ISR "
                        f"member {m} has LEO {mleo} (committed ISR {list(part.isr)})",
                        topic=tp[0], partition=tp[1], brokers=(bid, m), offsets=(hw, mleo),
                        allowed_because="; ".join(why) if why else None)
        self._last = seen


@register
class ConsistentRead(Checker):
    """Consumers read only committed data, and an offset never reads as two different records.

    (a) a consumer never receives a record at or past the HW served with it (fact sheet §1, "What
    consumers can read"); (b) two reads of one offset (by any consumers) return the same record
    id; (c) every consumed record is still at its offset on the current non-stale leader.
    teaching-scenarios "Invariants" 3 and the KIP-966 spec's ConsistentRead; KIP-101 scenario 1
    ("phantom read").
    """

    name = "ConsistentRead"
    source = ("teaching-scenarios Invariants 3 (ConsistentRead, KIP-966 spec); KIP-101 "
              "scenario 1; fact sheet §1 (reads capped at the HW)")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._presence = _LeaderPresence()

    def _reset_state(self) -> None:
        self._presence = _LeaderPresence()

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        for cid, rec, prev in g.new_consumed:
            tp = (rec.topic, rec.partition)
            if rec.offset >= rec.served_hw:
                yield self.violation(
                    cluster, g, ("past_hw", cid, tp, rec.offset),
                    f"consumer {cid} received record {rec.record_id} at offset {rec.offset}, "
                    f"at or past the high watermark {rec.served_hw} served with it",
                    topic=tp[0], partition=tp[1], offsets=(rec.offset, rec.served_hw),
                    record_ids=(rec.record_id,))
            if prev is not None and prev.record_id != rec.record_id:
                why = g.record_loss_reasons(tp, prev.offset, prev.record_id, prev.time_ms,
                                            prev.leader_epoch)
                yield self.violation(
                    cluster, g, ("two_reads", tp, rec.offset, prev.record_id, rec.record_id),
                    f"offset {rec.offset} read as record {prev.record_id} (epoch "
                    f"{prev.leader_epoch}) by {prev.client} at t={prev.time_ms} ms, but as "
                    f"record {rec.record_id} (epoch {rec.leader_epoch}) by {cid}",
                    topic=tp[0], partition=tp[1], offsets=(rec.offset,),
                    record_ids=(prev.record_id, rec.record_id),
                    allowed_because="; ".join(why) if why else None)
        presence = self._presence
        info = g.leader_info
        for tp, recs in g.consumed_list.items():
            found = info.get(tp)
            if found is None or not found[4]:
                continue   # no leader, or it has not taken over yet (stale)
            leader, epoch, log, key, _applied = found
            leo = log.log_end_offset if log is not None else 0
            start = log.log_start_offset if log is not None else 0
            i = presence.start_index(g, tp, key, leader, leo)
            n = len(recs)
            if i == n:
                continue
            for j in range(i, n):
                r = recs[j]
                if r.offset < start:
                    continue
                have = _lookup(log, r.offset)
                if have == r.record_id:
                    continue
                why = g.record_loss_reasons(tp, r.offset, r.record_id, r.time_ms,
                                            r.leader_epoch)
                what = (f"the leader has record {have} there" if have is not None
                        else f"the leader's log ends at {leo}")
                yield self.violation(
                    cluster, g, ("vanished", tp, r.offset, r.record_id),
                    f"record {r.record_id} read at offset {r.offset} by {r.client} at "
                    f"t={r.time_ms} ms is no longer on leader {leader} (epoch {epoch}): {what}",
                    topic=tp[0], partition=tp[1], brokers=(leader,), offsets=(r.offset,),
                    record_ids=(r.record_id,) if have is None else (r.record_id, have),
                    allowed_because="; ".join(why) if why else None)
            presence.done(tp, key, n, leo)


@register
class MonotoneLeaderHw(Checker):
    """A leader's HW never decreases while it remains leader (same broker, epoch, incarnation).

    Fact sheet §1 (UnifiedLog.maybeIncrementHighWatermark: "the leader's HW never moves
    backwards"). Local HWs may go down across leader changes (teaching-scenarios "Invariants" 7);
    the monotone committed HW is the ghost ``true_hw``.
    """

    name = "MonotoneLeaderHw"
    source = ("fact sheet §1 (UnifiedLog.maybeIncrementHighWatermark); teaching-scenarios "
              "Invariants 7")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._last: dict[tuple[int, TP], tuple[int, int, int]] = {}

    def _reset_state(self) -> None:
        self._last = {}

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        last = self._last
        seen = {}
        brokers = cluster.brokers
        for bid, tp, part in g.local_leaders:
            hw = part.log.high_watermark
            term = (brokers[bid].incarnation, part.leader_epoch)
            k = (bid, tp)
            prev = last.get(k)
            if prev is not None and prev[:2] == term and hw < prev[2]:
                yield self.violation(
                    cluster, g, (tp, bid, term, hw, prev[2]),
                    f"leader {bid} (epoch {part.leader_epoch}) lowered its HW from {prev[2]} "
                    f"to {hw}", topic=tp[0], partition=tp[1], brokers=(bid,),
                    offsets=(prev[2], hw))
                seen[k] = (*term, max(hw, prev[2]))   # report the drop once
            else:
                seen[k] = (*term, hw)
        self._last = seen


@register
class LeaderInIsr(Checker):
    """The leader is none or a member of the ISR, in the controller's and the leader's view.

    Kip320.tla LeaderInIsr, read as ``leader == None or leader in isr`` (teaching-scenarios
    "Invariants" 6 and Definitions); a running leader's cached ISR contains itself.
    """

    name = "LeaderInIsr"
    source = "teaching-scenarios Invariants 6 / Definitions (Kip320.tla LeaderInIsr)"

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        for tp, (leader, epoch, isr) in g.states.items():
            if leader >= 0 and leader not in isr:
                yield self.violation(
                    cluster, g, ("controller", tp, leader, epoch, isr),
                    f"the controller's state names leader {leader} (epoch {epoch}) outside "
                    f"its ISR {list(isr)}", topic=tp[0], partition=tp[1], brokers=(leader,))
        brokers = cluster.brokers
        for bid, tp, part in g.local_leaders:
            if bid not in part.isr and brokers[bid].is_running:
                yield self.violation(
                    cluster, g, ("local", tp, bid, part.leader_epoch, part.isr),
                    f"broker {bid} leads epoch {part.leader_epoch} but its cached ISR "
                    f"{list(part.isr)} does not contain it", topic=tp[0], partition=tp[1],
                    brokers=(bid,))


@register
class LogMatching(Checker):
    """Any two replicas hold identical records (id and leader epoch) below min(their local HWs).

    teaching-scenarios "Invariants" 2 (LogMatching, KIP-966 spec); KIP-101 scenario 2 (replica
    divergence). Compared: running replicas whose HW is current (``Ghost.hw_live``): a leader,
    or a follower once a fetch response set its HW since it last became follower or restarted.
    A stopped replica's HW, or the one a restarted broker reads back from its checkpoint before
    it has reconciled its log with the leader (OffsetsForLeaderEpoch / DivergingEpoch), is stale
    and not a claim about committed data: under leader epochs (0.11+) the divergent suffix is
    truncated first (KIP-101 scenario 2 "fixed"); before 0.11 it is kept and fetched past.
    Allowed after an unclean election (committed histories fork) while one of the two has not
    followed the new leader yet; not once both have (KIP-279: "the divergence is the bug"); never
    because of power loss (KIP-101 scenario 2: "Flag only LogMatching"). An excused divergence
    is compared again at every later check of the partition: once both replicas follow the new
    leader (the lagging one has fetched from it, truncating what the leader's epochs reject)
    and the logs still differ, it is reported.
    """

    name = "LogMatching"
    source = "teaching-scenarios Invariants 2 (LogMatching, KIP-966 spec); KIP-101 scenario 2"

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._marks: dict[tuple, tuple] = {}

    def _reset_state(self) -> None:
        self._marks = {}

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        marks = self._marks
        full = g.full
        truncated = g.truncated
        everything = full or g.structural
        dirty = g.dirty
        brokers = cluster.brokers
        live = g.hw_live
        for tp, holders in g.replica_logs.items():
            # compared ranges only grow with a HW (traced "hw" rows), and logs change below a HW
            # only by a traced truncation: a partition no data-path row touched is unchanged
            if not everything and tp not in dirty:
                continue
            current = [(b, log) for b, log in holders
                       if brokers[b].is_running and live.get((b, tp), False)]
            n = len(current)
            if n < len(holders):   # compare a replica afresh once its HW is current again
                skipped = {b for b, _log in holders} - {b for b, _log in current}
                for k in [k for k in marks if k[0] == tp and (k[1] in skipped
                                                             or k[2] in skipped)]:
                    del marks[k]
            for i in range(n):
                a, la = current[i]
                for j in range(i + 1, n):
                    b, lb = current[j]
                    yield from self._compare(cluster, g, tp, a, la, b, lb, marks, full,
                                             truncated)

    def _compare(self, cluster, g, tp, a, la, b, lb, marks, full, truncated):
        sa = la.log_start_offset
        sb = lb.log_start_offset
        leo_a = la.log_end_offset
        leo_b = lb.log_end_offset
        # (a HW above the LEO is HwWithinLog's business: compare what both logs hold)
        h = min(la.high_watermark, lb.high_watermark, leo_a, leo_b)
        lo = max(sa, sb)
        checked = h       # compared up to here: the next call starts at the mark
        k = (tp, a, b)
        ident = (id(la), id(lb), sa, sb)
        mark = marks.get(k)
        if full or mark is None or mark[0] != ident or leo_a < mark[2] or \
                leo_b < mark[3] or (a, tp) in truncated or (b, tp) in truncated:
            v = lo
        else:
            v = max(mark[1], lo)
        if v < h and (la.ids[v - sa:h - sa] != lb.ids[v - sb:h - sb]
                      or la.epochs[v - sa:h - sa] != lb.epochs[v - sb:h - sb]):
            o = v
            while o < h and la.ids[o - sa] == lb.ids[o - sb] and \
                    la.epochs[o - sa] == lb.epochs[o - sb]:
                o += 1
            ra, rb = la.ids[o - sa], lb.ids[o - sb]
            ea, eb = la.epochs[o - sa], lb.epochs[o - sb]
            # histories fork at an unclean election: excused while a replica still holds the
            # old one (has not followed the new leader); not once both have (KIP-279)
            why = g.loss_reasons(tp) if g.stale(cluster, a, tp) or g.stale(cluster, b, tp) \
                else []
            if why:
                # compare this divergence again until it is gone (the lagging replica truncated
                # against the new leader) or no longer excused (both follow it): then it is
                # reported under its own key, not swallowed as the excused one seen before
                checked = o
            yield self.violation(
                cluster, g, (tp, a, b, o, ra, ea, rb, eb) + (("excused",) if why else ()),
                f"replicas {a} and {b} differ at offset {o}, below both HWs "
                f"({la.high_watermark}, {lb.high_watermark}): broker {a} has record "
                f"{ra}@epoch {ea}, broker {b} has record {rb}@epoch {eb}",
                topic=tp[0], partition=tp[1], brokers=(a, b), offsets=(o,),
                record_ids=(ra, rb), allowed_because="; ".join(why) if why else None)
        marks[k] = (ident, max(v, checked), leo_a, leo_b)


@register
class HwWithinLog(Checker):
    """Every replica's HW lies within its log: log start offset <= HW <= LEO.

    Structural (TypeOk-style) rule from fact sheet §1: the leader raises its HW to at most its
    LEO; a follower clamps the leader's HW into [logStartOffset, own LEO]; truncation lowers the
    HW to the new LEO (UnifiedLog.updateHighWatermark / truncateTo).
    """

    name = "HwWithinLog"
    source = "fact sheet §1 (UnifiedLog.updateHighWatermark clamps; truncateTo); TypeOk"

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        everything = g.full or g.structural
        dirty = g.dirty
        for tp, holders in g.replica_logs.items():
            if not everything and tp not in dirty:
                continue
            for bid, log in holders:
                hw = log.high_watermark
                start = log.log_start_offset
                leo = log.log_end_offset
                if not start <= hw <= leo:
                    yield self.violation(
                        cluster, g, (tp, bid, hw, start, leo),
                        f"broker {bid}'s HW {hw} is outside its log [{start}, {leo}]",
                        topic=tp[0], partition=tp[1], brokers=(bid,), offsets=(hw, start, leo))


class _PrefixMarks:
    """Incrementally verifies that replica ``b`` holds leader ``a``'s records (id and epoch) at
    every offset below a bound: ranges already compared are compared again only after a
    truncation, a shrink or a change of identity of either log, or in full mode."""

    __slots__ = ("marks",)

    def __init__(self) -> None:
        self.marks: dict[tuple, tuple] = {}

    def first_problem(self, g: Ghost, tp: TP, a: int, la, b: int, lb, upto: int
                      ) -> tuple[int, str] | None:
        """``(offset, "differs")`` for the first offset below ``upto`` where the logs differ,
        else ``(offset, "missing")`` when ``lb`` ends before ``upto``, else None."""
        sa = la.log_start_offset
        h = min(upto, la.log_end_offset)
        if lb is None:
            return (0, "missing") if h > sa else None
        sb = lb.log_start_offset
        leo_b = lb.log_end_offset
        lo = max(sa, sb)
        hc = min(h, leo_b)
        k = (tp, a, b)
        ident = (id(la), id(lb), sa, sb)
        mark = self.marks.get(k)
        leo_a = la.log_end_offset
        if g.full or mark is None or mark[0] != ident or leo_a < mark[2] or \
                leo_b < mark[3] or (a, tp) in g.truncated or (b, tp) in g.truncated:
            v = lo
        else:
            v = max(mark[1], lo)
        found = None
        if v < hc and (la.ids[v - sa:hc - sa] != lb.ids[v - sb:hc - sb]
                       or la.epochs[v - sa:hc - sa] != lb.epochs[v - sb:hc - sb]):
            o = v
            while la.ids[o - sa] == lb.ids[o - sb] and la.epochs[o - sa] == lb.epochs[o - sb]:
                o += 1
            found = (o, "differs")
        self.marks[k] = (ident, max(v, hc), leo_a, leo_b)
        if found is None and leo_b < h:
            found = (max(leo_b, lo), "missing")
        return found


class _IsrPrefix(Checker):
    """WeakIsr / StrongIsr: a leader's committed prefix is held by every ISR member."""

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._prefix = _PrefixMarks()

    def _reset_state(self) -> None:
        self._prefix = _PrefixMarks()

    def members(self, g: Ghost, tp: TP, part) -> tuple[int, ...]:
        raise NotImplementedError

    what = ""

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        everything = g.full or g.structural or g._states_changed
        dirty = g.dirty
        brokers = cluster.brokers
        prefix = self._prefix
        for bid, tp, part in g.local_leaders:
            if not everything and tp not in dirty:
                continue
            la = part.log
            h = la.high_watermark
            if h <= la.log_start_offset:
                continue
            for r in self.members(g, tp, part):
                if r == bid:
                    continue
                rb = brokers.get(r)
                lb = rb.logs.get(tp) if rb is not None else None
                found = prefix.first_problem(g, tp, bid, la, r, lb, h)
                if found is None:
                    continue
                o, kind = found
                why = g.replica_loss_reasons(tp, (bid, r), o, cluster=cluster)
                if kind == "missing":
                    leo = lb.log_end_offset if lb is not None else 0
                    yield self.violation(
                        cluster, g, (tp, bid, part.leader_epoch, r, "missing"),
                        f"leader {bid} (epoch {part.leader_epoch}) has HW {h} but {r}, in "
                        f"{self.what} {list(self.members(g, tp, part))}, holds only offsets "
                        f"below {leo}", topic=tp[0], partition=tp[1], brokers=(bid, r),
                        offsets=(h, leo), record_ids=_ids_from(la, o, h),
                        allowed_because="; ".join(why) if why else None)
                else:
                    ra, rr = la.ids[o - la.log_start_offset], lb.ids[o - lb.log_start_offset]
                    ea = la.epochs[o - la.log_start_offset]
                    er = lb.epochs[o - lb.log_start_offset]
                    yield self.violation(
                        cluster, g, (tp, bid, r, o, "differs"),
                        f"leader {bid} (epoch {part.leader_epoch}, HW {h}) has record "
                        f"{ra}@epoch {ea} at offset {o} but {r}, in {self.what} "
                        f"{list(self.members(g, tp, part))}, has {rr}@epoch {er}",
                        topic=tp[0], partition=tp[1], brokers=(bid, r), offsets=(o,),
                        record_ids=(ra, rr), allowed_because="; ".join(why) if why else None)


def _ids_from(log, lo: int, hi: int, limit: int = 10) -> tuple:
    """Up to ``limit`` record ids of ``log`` in [lo, hi)."""
    s = log.log_start_offset
    lo = max(lo, s)
    hi = min(hi, log.log_end_offset, lo + limit)
    return tuple(log.ids[lo - s:hi - s]) if lo < hi else ()


@register
class WeakIsr(_IsrPrefix):
    """Every replica that believes it leads, with local HW h: every member of *its own cached*
    ISR holds the same records (id and epoch) at every offset below h.

    WeakIsr of the public TLA+ models of Kafka replication (Kip320.tla; teaching-scenarios
    "Definitions"). Violated by KIP-101 scenario 1 (a restarted follower truncates committed
    data to its own HW while it stays in the ISR) and KIP-279 (a replica keeps a divergent
    record after an unclean election). Allowed when the replica's log was cut at or below the
    offset by a power loss, or after an unclean election while the leader or that replica has
    not taken in the controller's current leader epoch (a deposed leader's old history).
    """

    name = "WeakIsr"
    source = "teaching-scenarios Definitions (WeakIsr, Kip320.tla); KIP-101 scenario 1"
    what = "its cached ISR"

    def members(self, g: Ghost, tp: TP, part) -> tuple[int, ...]:
        return part.isr


@register
class StrongIsr(_IsrPrefix):
    """As WeakIsr, but over the *controller's* ISR (ZooKeeper's partition state; in KRaft the
    committed metadata image): the ISR elections choose from, hence "committed data survives
    any clean election".

    StrongIsr of the public TLA+ models (Kip320.tla; teaching-scenarios "Definitions" and
    "Invariants" 1); violated by KIP-101 scenario 1. Allowed as WeakIsr.
    """

    name = "StrongIsr"
    source = ("teaching-scenarios Definitions (StrongIsr, Kip320.tla) and Invariants 1; "
              "KIP-101 scenario 1")
    what = "the controller's ISR"

    def members(self, g: Ghost, tp: TP, part) -> tuple[int, ...]:
        st = g.states.get(tp)
        return st[2] if st is not None else ()


@register
class LeaderCandidateCompleteness(Checker):
    """No running member of the controller's ISR has a LEO below ``true_hw``: whoever a clean
    election picks holds every committed offset.

    KIP-966 spec LeaderCandidateCompleteness (teaching-scenarios "Invariants" 4) over the ISR;
    its ELR half (KRaft, KIP-966) is ``ElrCompleteness``. A stopped member is skipped (it
    cannot be elected while down; a crash keeps its log, a power loss is judged when it runs
    again). Allowed when that replica's log was cut
    below ``true_hw`` by a power loss (KIP-101 scenario 2, the "last replica standing" of
    KIP-966), or after an unclean election since ``true_hw`` last rose.
    """

    name = "LeaderCandidateCompleteness"
    source = "teaching-scenarios Invariants 4 (LeaderCandidateCompleteness, KIP-966 spec)"

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        everything = g.full or g.structural or g._states_changed
        dirty = g.dirty
        brokers = cluster.brokers
        for tp, (leader, epoch, isr) in g.states.items():
            if not everything and tp not in dirty:
                continue
            thw = g.true_hw.get(tp, 0)
            if thw <= 0:
                continue
            for r in isr:
                b = brokers.get(r)
                if b is None or not b.is_running:
                    continue
                log = b.logs.get(tp)
                leo = log.log_end_offset if log is not None else 0
                if leo >= thw or (log is not None and log.log_start_offset >= thw):
                    continue
                why = g.replica_loss_reasons(tp, (r,), thw - 1, g.true_hw_time.get(tp, 0))
                yield self.violation(
                    cluster, g, (tp, r, epoch),
                    f"broker {r} is in the controller's ISR {list(isr)} (leader {leader}) and "
                    f"running, but its LEO {leo} is below true_hw {thw}: electing it would "
                    f"lose committed offsets {leo}..{thw - 1}",
                    topic=tp[0], partition=tp[1], brokers=(r,), offsets=(leo, thw),
                    allowed_because="; ".join(why) if why else None)


@register
class ValidHighWatermark(Checker):
    """Every member of the controller's ISR has a LEO at least the HW of the controller's
    leader (once that leader has taken over, i.e. leads in the controller's epoch).

    ValidHighWatermark of AsyncIsr.tla (teaching-scenarios "Invariants" 5, "Definitions"): with
    asynchronous ISR changes (KIP-497 AlterPartition, or the pre-2.7 leader-written ZooKeeper
    ISR) the leader's HW must stay within what the controller's ISR holds, not just its own
    cached ISR (``HwBelowIsrLeo``). Allowed after a power loss cut that member below the HW, or
    an unclean election.
    """

    name = "ValidHighWatermark"
    source = "teaching-scenarios Invariants 5 / Definitions (ValidHighWatermark, AsyncIsr.tla)"

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        everything = g.full or g.structural or g._states_changed
        dirty = g.dirty
        brokers = cluster.brokers
        for tp, (leader, epoch, log, _key, applied) in g.leader_info.items():
            if not applied or (not everything and tp not in dirty):
                continue
            hw = log.high_watermark
            for r in g.states[tp][2]:
                if r == leader:
                    continue
                b = brokers.get(r)
                rlog = b.logs.get(tp) if b is not None else None
                leo = rlog.log_end_offset if rlog is not None else 0
                if leo >= hw:
                    continue
                why = g.replica_loss_reasons(tp, (r,), hw - 1)
                yield self.violation(
                    cluster, g, (tp, leader, epoch, r),
                    f"leader {leader} (epoch {epoch}) has HW {hw} but {r}, in the controller's "
                    f"ISR {list(g.states[tp][2])}, has LEO {leo}",
                    topic=tp[0], partition=tp[1], brokers=(leader, r), offsets=(hw, leo),
                    allowed_because="; ".join(why) if why else None)


@register
class MonotoneTrueHw(Checker):
    """The committed HW never goes back: what the controller's leader computes its HW from
    reaches ``true_hw``.

    ``true_hw`` (the largest HW any non-stale leader reached) is monotone by construction, so
    what is checked is the leader's side (teaching-scenarios "Invariants" 7). Precisely: once
    the controller's leader (leading in the controller's epoch) has heard, in its current
    leadership, from every follower of its maximal ISR, its own LEO and the LEO it holds for
    each of them (their last fetch offsets) are at least ``true_hw`` -- so the HW it computes
    from its ISR (their minimum, fact sheet §1 Partition.maybeIncrementLeaderHW) never falls
    below what was committed before.

    Not checked: the HW value itself, which may legitimately stay lower for a while. A new
    leader starts from its follower HW and keeps it until every ISR follower has fetched once
    (fact sheet §1 "New leader quirk"; Vanlightly §6.4.1); followers outside the ISR that the
    leader counts as caught up (even retroactively, KAFKA-4485's previous-fetch rule) hold it
    until they catch up; it is recomputed only on appends, follower progress and ISR changes;
    and it freezes under min ISR from 3.7 (KAFKA-15583). Violated by KIP-101 scenario 1 (the
    new leader lacks a committed record). Allowed after a power loss cut the leader or an ISR
    member below ``true_hw``, or an unclean election since ``true_hw`` last rose.
    """

    name = "MonotoneTrueHw"
    source = ("teaching-scenarios Invariants 7 (monotone true_hw); fact sheet §1 "
              "(maybeIncrementLeaderHW, new leader quirk)")

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        everything = g.full or g.structural or g._states_changed
        dirty = g.dirty
        brokers = cluster.brokers
        for tp, (leader, epoch, log, _key, applied) in g.leader_info.items():
            if not applied or (not everything and tp not in dirty):
                continue
            thw = g.true_hw.get(tp, 0)
            broker = brokers[leader]
            part = broker.replica_manager.partitions.get(tp)
            if thw <= 0 or part is None:
                continue
            maximal = part.maximal_isr(broker)
            remote = part.remote
            short = []     # (broker, LEO) below true_hw
            leo = log.log_end_offset
            if leo < thw:
                short.append((leader, leo))
            waiting = False
            for r in maximal:
                if r == leader:
                    continue
                st = remote.get(r)
                if st is None or st.log_end_offset < 0:
                    waiting = True     # has not fetched from this leader yet: HW frozen
                    break
                if st.log_end_offset < thw:
                    short.append((r, st.log_end_offset))
            if waiting or not short:
                continue
            # a power loss that cut the leader (or an ISR member) below true_hw explains it
            why = g.replica_loss_reasons(tp, [leader, *[b for b, _l in short]], thw - 1,
                                         g.true_hw_time.get(tp, 0))
            detail = ", ".join(f"broker {b} at {lo}" for b, lo in short)
            yield self.violation(
                cluster, g, (tp, leader, epoch, thw, tuple(b for b, _l in short)),
                f"leader {leader} (epoch {epoch}, HW {log.high_watermark}) has heard from "
                f"its whole ISR {sorted(maximal)}, but the HW it computes cannot reach "
                f"true_hw {thw} (committed before): log end offsets {detail}",
                topic=tp[0], partition=tp[1], brokers=(leader, *[b for b, _l in short]),
                offsets=(log.high_watermark, thw),
                record_ids=_ids_from(log, min(lo for _b, lo in short), thw),
                allowed_because="; ".join(why) if why else None)


@register
class ElrCompleteness(Checker):
    """KRaft, KIP-966: every member of a partition's committed ELR (Eligible Leader Replicas,
    ``cluster.kraft.image``) holds all committed data: its LEO reaches ``true_hw`` and every
    record acknowledged with acks=all is at its offset in its log.

    The ELR exists because the leader's HW is frozen while the ISR is below min ISR (3.7+,
    KAFKA-15583): a replica leaving the ISR then holds everything below the HW, so electing it
    from the ELR (ISR := [it]) loses nothing (KIP-966; PartitionChangeBuilder
    ``maybePopulateTargetElr``; the KIP-966 TLA+ spec's LeaderCandidateCompleteness over
    ISR and ELR, teaching-scenarios "Invariants" 4). A stopped member is skipped (judged when
    it runs again; a crash keeps its log). Allowed when a power loss cut that member's log
    below the offset (a lossy restart: KIP-966 removes an uncleanly shut down broker from the
    ELR when it registers again, so it is a member only until then), or after an unclean
    election since ``true_hw`` last rose / the record was acked. ZooKeeper clusters have no
    ELR: a no-op there.
    """

    name = "ElrCompleteness"
    source = ("KIP-966 (ELR; PartitionChangeBuilder.maybePopulateTargetElr); KAFKA-15583 (HW "
              "frozen under min ISR); teaching-scenarios Invariants 4 (KIP-966 spec)")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._presence = _LeaderPresence()

    def _reset_state(self) -> None:
        self._presence = _LeaderPresence()

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        presence = self._presence
        if g._states_changed and presence.marks:
            # a replica that leaves the ELR is checked afresh if it joins again
            presence.marks = {k: m for k, m in presence.marks.items()
                              if k[1] in g.elr.get(k[0], ())}
        if not g.elr:
            return
        everything = g.full or g.structural or g._states_changed
        dirty = g.dirty
        brokers = cluster.brokers
        for tp, elr in g.elr.items():
            if not everything and tp not in dirty:
                continue
            thw = g.true_hw.get(tp, 0)
            recs = g.acked.get(tp, ())
            for r in elr:
                b = brokers.get(r)
                if b is None or not b.is_running:
                    continue
                log = b.logs.get(tp)
                leo = log.log_end_offset if log is not None else 0
                start = log.log_start_offset if log is not None else 0
                if leo < thw and start < thw:
                    why = g.replica_loss_reasons(tp, (r,), leo, g.true_hw_time.get(tp, 0))
                    yield self.violation(
                        cluster, g, (tp, r, "short", leo, thw),
                        f"broker {r} is in the committed ELR {list(elr)} but its LEO {leo} is "
                        f"below true_hw {thw}: electing it from the ELR would lose committed "
                        f"offsets {leo}..{thw - 1}",
                        topic=tp[0], partition=tp[1], brokers=(r,), offsets=(leo, thw),
                        allowed_because="; ".join(why) if why else None)
                key = (r, id(log), start)
                mark = presence.marks.get((tp, r))
                i = 0 if g.full or mark is None or mark[0] != key or leo < mark[2] or \
                    (r, tp) in g.truncated else mark[1]
                n = len(recs)
                for j in range(i, n):
                    rec = recs[j]
                    off = rec.offset
                    if rec.acks != -1 or off < start:
                        continue
                    have = _lookup(log, off)
                    if have == rec.record_id:
                        continue
                    why = g.replica_loss_reasons(tp, (r,), off, rec.time_ms)
                    what = (f"offset {off} holds record {have}" if have is not None
                            else f"its log ends at {leo}")
                    yield self.violation(
                        cluster, g, (tp, r, "record", off, rec.record_id),
                        f"broker {r} is in the committed ELR {list(elr)} but lacks record "
                        f"{rec.record_id}, acked with acks=all at offset {off} at "
                        f"t={rec.time_ms} ms: {what}",
                        topic=tp[0], partition=tp[1], brokers=(r,), offsets=(off,),
                        record_ids=(rec.record_id,) if have is None else (rec.record_id, have),
                        allowed_because="; ".join(why) if why else None)
                presence.done((tp, r), key, n, leo)


@register
class LeaderFromIsrOrElr(Checker):
    """KRaft: every committed leader change elects a replica of the previous ISR or ELR,
    unless it is an unclean election.

    PartitionChangeBuilder.electLeader / ``isValidNewLeader`` (3.3+; ELR from KIP-966): the
    new leader is in the target ISR, or in the ELR when the ISR is empty; anything else
    (``unclean.leader.election.enable``, or KIP-966's last known leader) is unclean and the
    record sets LeaderRecoveryState RECOVERING (KIP-704), as the controller's ``LeaderElection``
    trace row shows (``unclean``). Checked on every committed PartitionChangeRecord, replayed
    in log order (``Ghost.meta_changes``): a new leader outside the previous ISR and ELR
    requires the new registration to be RECOVERING. ZooKeeper clusters: a no-op.
    """

    name = "LeaderFromIsrOrElr"
    source = ("PartitionChangeBuilder.electLeader/isValidNewLeader (KRaft, 3.3+); KIP-966 "
              "(ELR); KIP-704 (LeaderRecoveryState RECOVERING on unclean election)")

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        from kafkasim.control.kraft.records import NO_LEADER, LeaderRecoveryState

        for tp, off, _record, before, after in g.meta_changes:
            if before is None or after.leader == before.leader or after.leader == NO_LEADER:
                continue
            if after.leader in before.isr or after.leader in before.elr:
                continue
            if after.leader_recovery_state == LeaderRecoveryState.RECOVERING:
                continue   # an unclean election (or the last known leader): loss allowed
            yield self.violation(
                cluster, g, (tp, off, after.leader, after.leader_epoch),
                f"metadata offset {off} makes broker {after.leader} leader (epoch "
                f"{after.leader_epoch}, was {before.leader}) though it was in neither the ISR "
                f"{list(before.isr)} nor the ELR {list(before.elr)}, and the change is not an "
                f"unclean election (LeaderRecoveryState stays RECOVERED)",
                topic=tp[0], partition=tp[1], brokers=(after.leader,), offsets=(off,))


def _raft_clients(cluster) -> list:
    """Every KafkaRaftClient of the metadata quorum: the controllers' (voters), then the
    brokers' (observers, ``BrokerLifecycleManager.raft``)."""
    kraft = getattr(cluster, "kraft", None)
    if kraft is None:
        return []
    out = [n.raft for _i, n in sorted(kraft.nodes.items())]
    for _b, broker in sorted(cluster.brokers.items()):
        lifecycle = getattr(broker, "lifecycle", None)
        if lifecycle is not None:
            out.append(lifecycle.raft)
    return out


@register
class RaftSafety(Checker):
    """KRaft: the ``__cluster_metadata`` quorum obeys Raft safety: at most one leader per
    epoch, committed entries never lost from a node's log nor committed two ways, a leader
    holds everything committed before its epoch, a leader's HW never decreases.

    Wraps ``kafkasim.control.kraft.raft_invariants.check_raft_safety`` over every raft client
    (controllers and the brokers' observers: KIP-595, the Raft paper's Election Safety, Log
    Matching, Leader Completeness; the KIP-966 spec's MetadataLogMatching). Evaluated when a
    node's raft state changed (a ``raft_*`` or controller node trace row, then log length,
    commits, elections, leader HWs compared). ZooKeeper: no-op.
    """

    name = "RaftSafety"
    source = ("KIP-595 (KafkaRaftClient); Raft paper 5.2-5.4 (Election Safety, Log Matching, "
              "Leader Completeness); KIP-966 spec MetadataLogMatching")

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        from kafkasim.control.kraft.raft_invariants import check_raft_safety

        if not g.raft_changed:
            return   # no raft_* / controller node row since the last check: nothing moved
        clients = _raft_clients(cluster)
        if not clients:
            return
        key = tuple((id(r), len(r.log.entries), r.log.entries[-1][1] if r.log.entries else -1,
                     len(r.committed), len(r.elected_epochs), len(r.leader_hw_history))
                    for r in clients)
        if key == g.raft_key and not g.full:
            return
        g.raft_key = key
        for problem in check_raft_safety(clients):
            yield self.violation(cluster, g, (problem,), problem)


# ---------------------------------------------------------------------------------- helpers
def make_suite(names: Iterable[str] | None = None, *, on_violation: str = RAISE,
               max_violations: int = 1000) -> CheckSuite:
    """A ``CheckSuite`` of the registered checks named (default: all of them)."""
    chosen = list(CHECKS) if names is None else list(names)
    unknown = [n for n in chosen if n not in CHECKS]
    if unknown:
        raise KeyError(f"unknown check(s) {unknown}; registered: {list(CHECKS)}")
    return CheckSuite([CHECKS[n](on_violation=on_violation) for n in chosen],
                      on_violation=on_violation, max_violations=max_violations)


_SUITES: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def suite_for(cluster, names: Iterable[str] | None = None, *,
              on_violation: str = RAISE) -> CheckSuite:
    """The suite attached to ``cluster`` for these check names (created on first use), so that
    successive ``check_all`` / ``run_checked`` calls share history (e.g. MonotoneLeaderHw)."""
    key = tuple(CHECKS) if names is None else tuple(names)
    per_cluster = _SUITES.get(cluster)
    if per_cluster is None:
        per_cluster = _SUITES[cluster] = {}
    suite = per_cluster.get(key)
    if suite is None:
        suite = per_cluster[key] = make_suite(key, on_violation=on_violation)
    suite.on_violation = on_violation
    return suite


def check_all(cluster, names: Iterable[str] | None = None, *,
              on_violation: str = RAISE) -> list[Violation]:
    """Fully check the current state with the cluster's suite; returns the new violations
    (raises ``InvariantViolation`` at the first one unless ``on_violation="collect"``)."""
    return suite_for(cluster, names, on_violation=on_violation).check_now(cluster)


class _CheckListener:
    """An engine listener (``Engine.add_listener``) running a checker after every event
    (``attach``). Engines pickle without listeners, so snapshots of an attached cluster carry no
    checker."""

    __slots__ = ("checker", "cluster")

    def __init__(self, checker: Checker, cluster) -> None:
        self.checker, self.cluster = checker, cluster

    def __call__(self, time_ms: int, kind: str, args: tuple) -> None:
        ghost = self.checker.ghost
        ghost.event = (time_ms, -1, kind, args)
        try:
            self.checker(self.cluster)
        finally:
            ghost.event = None


def attach(cluster, checker: Checker | None = None, *, on_violation: str = COLLECT) -> Checker:
    """Run ``checker`` (default: a new suite of every check) after every event of ``cluster``,
    however the simulation advances (``run``, ``run_until``, consumer polls, ``restart``...),
    until ``detach``; returns it. Violations name the event. In ``on_violation="raise"`` mode
    the ``InvariantViolation`` reaches the caller wrapped in the engine's ``SimulationError``
    (as its ``__cause__``); "collect" (the default) just records."""
    if checker is None:
        checker = make_suite(on_violation=on_violation)
    checker.ghost.recheck_next()   # whatever happened while it was not attached
    detach(cluster)
    cluster.engine.add_listener(_CheckListener(checker, cluster))
    return checker


def detach(cluster) -> None:
    """Stop the checker ``attach`` installed (a no-op when none is)."""
    engine = cluster.engine
    for fn in engine.listeners:
        if isinstance(fn, _CheckListener):
            engine.remove_listener(fn)


def classify_losses(cluster, record_ids: Iterable[int], checker: Checker | None = None
                    ) -> dict[int, str]:
    """For acked record ids found lost (e.g.
    ``kafkasim.scenarios.scenario.lost_acked``): record id ->
    why the configuration allows that loss; ids absent from the answer are bugs.

    Uses what ``checker`` (a suite that followed the run) classified as allowed (NoAckedLoss),
    else replays the trace: unclean elections after the ack, acks=1 records whose leader has
    moved on, power loss of every replica (without a live ghost: of every replica of the
    partition) that held it."""
    wanted = set(record_ids)
    out: dict[int, str] = {}
    found: set[int] = set()
    if checker is not None:
        checks = getattr(checker, "checks", [checker])
        for c in checks:
            if c.name != "NoAckedLoss":
                continue
            for v in c.allowed:
                rid = v.record_ids[0] if v.record_ids else None
                if rid in wanted:
                    out.setdefault(rid, v.allowed_because or "")
            for v in c.violations:
                if v.record_ids and v.record_ids[0] in wanted:
                    found.add(v.record_ids[0])
    rest = wanted - set(out) - found
    if not rest:
        return out
    g = Ghost()
    if checker is not None and checker.ghost._cluster_ref is not None and \
            checker.ghost._cluster_ref() is cluster:
        g = checker.ghost
    else:
        g.update(cluster, full=True)
    for rid in sorted(rest):
        hit = g.acked_by_id.get(rid)
        if hit is None:
            continue
        tp, rec = hit
        info = g.leader_info.get(tp)
        leader = info[0] if info is not None else -1
        term, term_leader = g.terms.get(tp, (-1, -1))
        if term_leader != leader:
            term = -2
        reasons = acked_loss_reasons(g, tp, rec, leader, term)
        if reasons:
            out[rid] = "; ".join(reasons)
    return out


def run_checked(cluster, ms: int, names: Iterable[str] | None = None, *,
                suite: Checker | None = None, on_violation: str = RAISE) -> Checker:
    """``cluster.run(ms)`` checking every invariant after every event; returns the suite.

    Unlike ``run(check=...)``, violations also name the engine event that just ran.
    """
    if ms < 0:
        raise ValueError(f"cannot run for a negative duration ({ms} ms)")
    if suite is None:
        suite = suite_for(cluster, names, on_violation=on_violation)
    engine = cluster.engine
    target = engine.now + ms
    ghost = suite.ghost
    try:
        while (nxt := engine.peek()) is not None and nxt.time_ms <= target:
            ghost.event = tuple(nxt)
            engine.step()
            suite(cluster)
    finally:
        ghost.event = None
    engine.now = max(engine.now, target)
    return suite
