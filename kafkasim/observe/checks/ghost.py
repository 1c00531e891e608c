"""The shadow (ghost) state of a checked run: what the invariant checkers remember of it.

``Ghost`` follows the run once per event from the trace -- acknowledged and consumed records
and who held them, truncations, power losses, leadership terms, the controller's partition
states (ZooKeeper's znodes or KRaft's committed metadata image), the monotone ``true_hw`` --
and classifies the loss the configuration legitimately allows (``LOSS_RULES``: unclean
elections; power loss of every replica that held a record; acks=1 after the leadership
moved). Every check of one ``CheckSuite`` reads the same ``Ghost``.
"""

from __future__ import annotations

import json
import weakref
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

from kafkasim.core.events import Event, LeaderElection, PowerLossTruncate

TP = tuple[str, int]


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
    elif kind == "queued_controller_event" and len(args) >= 3:
        detail = f" broker {args[0]}: {args[2]}"
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


def _lookup(log, offset: int) -> int | None:
    """Record id at ``offset`` in ``log``, None when absent (past LEO or no log)."""
    if log is None:
        return None
    start = log.log_start_offset
    if start <= offset < log.log_end_offset:
        return log.ids[offset - start]
    return None


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


class LeaderAppends:
    """The last leader appends of each partition, ``(first, last, leader, epoch)``: which
    leader (and epoch) produced an acked offset, to attribute an acks=1 ack."""

    MEMORY = 4096   # appends remembered per partition

    def __init__(self) -> None:
        self.by_tp: dict[TP, deque] = {}

    def append(self, row) -> None:
        """A leader appended: remember (first, last, leader, epoch)."""
        tp = (row[3], row[4])
        first, last, epoch = row[5]
        q = self.by_tp.get(tp)
        if q is None:
            q = self.by_tp[tp] = deque(maxlen=self.MEMORY)
        q.append((first, last, row[2], epoch))

    def leader_of(self, tp: TP, offset: int) -> tuple[int, int]:
        """(leader, epoch) of the latest remembered append holding ``offset``; (-1, -1)."""
        q = self.by_tp.get(tp)
        if q:
            for first, last, broker, ep in reversed(q):
                if first <= offset <= last:
                    return broker, ep
        return -1, -1


class LossLedger:
    """Loss classification of one checked run: why losing data on a partition is legitimate.

    - ``loss_allowances``: topic-partition -> reasons loss became legitimate (``LOSS_RULES``);
      ``loss_events`` the same as ``(time_ms, reason, leader epoch it starts or None)``;
    - ``power_truncations``: topic-partition -> ``(time_ms, broker, kept LEO, old LEO)`` for every
      log a power loss cut short (``truncate`` rows holding a ``PowerLossTruncate``);
    - ``holders``: record id -> {broker: time it was first seen holding it} for the brokers
      whose log held it at its offset when it was acked, or replicated it later (absent when
      the ack was only seen in a replay of the trace, not as it happened);
    - ``replicas`` and ``power_losses``: the Ghost's (the same dicts, which the Ghost fills).
    """

    def __init__(self, replicas: dict[TP, tuple[int, ...]],
                 power_losses: dict[int, list[int]]) -> None:
        self.replicas = replicas
        self.power_losses = power_losses
        self.loss_allowances: dict[TP, list[str]] = {}
        self.loss_events: dict[TP, list[tuple[int, str, int | None]]] = {}
        self.power_truncations: dict[TP, list[tuple[int, int, int, int]]] = {}
        self.holders: dict[int, dict[int, int]] = {}
        self.acked_at: dict[TP, dict[int, list[int]]] = {}   # offset -> acked ids (holders)

    def allow_loss(self, tp: TP, reason: str, time_ms: int, epoch: int | None = None) -> None:
        """Loss on ``tp`` became legitimate at ``time_ms`` (``Ghost.allow_loss``)."""
        reasons = self.loss_allowances.setdefault(tp, [])
        if reason not in reasons:
            reasons.append(reason)
        self.loss_events.setdefault(tp, []).append((time_ms, reason, epoch))

    def apply_loss_rules(self, row) -> None:
        """``LOSS_RULES``: the row makes loss legitimate from its time (and from the leader
        epoch it starts, when its record has one)."""
        for rule in LOSS_RULES:
            hit = rule(row)
            if hit is not None:
                detail = row[5]
                epoch = getattr(detail, "leader_epoch", None) if isinstance(detail, Event) \
                    else None
                self.allow_loss(hit[0], hit[1], row[0], epoch)

    def on_acked(self, cluster, tp: TP, rec: Acked) -> None:
        """Who holds ``rec`` now, as it is acked (a replay of an old trace cannot know)."""
        rid = rec.record_id
        held = {}
        for bid, broker in cluster.brokers.items():
            if _lookup(broker.logs.get(tp), rec.offset) == rid:
                held[bid] = rec.time_ms
        self.holders[rid] = held
        self.acked_at.setdefault(tp, {}).setdefault(rec.offset, []).append(rid)

    def on_replicated(self, cluster, row) -> None:
        """A follower appended [base, last]: it now holds the acked records there, if any."""
        at = self.acked_at.get((row[3], row[4]))
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


class ControllerStateReader:
    """Reads the controller's partition states for a Ghost: ZooKeeper's partition state znodes
    (each parsed once per write, ``zk_cache``), or in KRaft the committed metadata image,
    followed record by record into a shadow ``MetadataImage`` (``follow_metadata_log``).
    ``key``: what the states were last read at (a zxid, or the image's offset)."""

    def __init__(self) -> None:
        self.zk_cache: dict[str, tuple[str, Any]] = {}
        self.key: tuple | None = None
        self.meta_image = None

    def read_states(self, cluster, full: bool, replicas: dict, meta_changes: list):
        """``(states, elr or None)`` -- ``(leader, leader_epoch, isr)`` per partition, and in
        KRaft the committed ELRs -- or None when unchanged since the last read (and not
        ``full``). Fills ``replicas`` (each partition's replicas) and, in KRaft,
        ``meta_changes``."""
        kraft = getattr(cluster, "kraft", None)
        if kraft is not None:
            # KRaft: the committed metadata image (changes only when its offset moves)
            img = kraft.image
            key = ("kraft", img.offset, len(cluster.topics.configs))
            if not full and key == self.key:
                return None
            self.key = key
            self.follow_metadata_log(kraft, img.offset, meta_changes)
            states = {}
            elr = {}
            for tp, reg in img.partitions.items():
                replicas[tp] = tuple(reg.replicas)
                states[tp] = (reg.leader, reg.leader_epoch, tuple(reg.isr))
                if reg.elr:
                    elr[tp] = tuple(reg.elr)
            return states, elr
        zk = getattr(cluster, "zk", None)
        if zk is None:  # a control plane without ZooKeeper: use the public query
            states = {}
            for topic in cluster.topics.names():
                for p, reps in cluster.assignment(topic).items():
                    replicas[(topic, p)] = tuple(reps)
                    st = cluster.inspect.partition_state(topic, p)
                    states[(topic, p)] = (st["leader"], st["leader_epoch"], tuple(st["isr"]))
            return states, None
        # every ZooKeeper write bumps the zxid: unchanged zxid, unchanged states
        key = (getattr(zk, "zxid", None), len(zk.znodes), len(cluster.topics.configs))
        if not full and key[0] is not None and key == self.key:
            return None
        self.key = key
        states = {}
        cache = self.zk_cache
        for topic in cluster.topics.configs:
            tpath = f"/brokers/topics/{topic}"
            parts = _parsed(zk, cache, tpath)
            if parts is None:
                continue
            for p, reps in parts["partitions"].items():
                replicas[(topic, int(p))] = tuple(reps)
                d = _parsed(zk, cache, f"{tpath}/partitions/{p}/state")
                if d is not None:
                    states[(topic, int(p))] = (d["leader"], d["leader_epoch"], tuple(d["isr"]))
        return states, None

    def follow_metadata_log(self, kraft, upto: int, changes: list) -> None:
        """KRaft: replay the committed metadata records up to ``upto`` into a shadow
        ``MetadataImage``, noting each partition change with the registration before and after
        it (``changes``: ``Ghost.meta_changes``). The records come from the raft log of a node
        that has committed them (controllers, then the brokers' observers); committed entries
        are the same on every node (Raft Log Matching; ``RaftSafety`` checks it)."""
        from kafkasim.control.kraft.image import MetadataImage

        shadow = self.meta_image
        if shadow is None:
            shadow = self.meta_image = MetadataImage()
        lo = shadow.offset + 1
        if upto < lo:
            return
        source = fallback = None
        for raft in _raft_clients(kraft.cluster):
            log = raft.log
            if len(raft.committed) > upto and log.end_offset > upto:
                if log.start_offset <= lo:
                    source = log
                    break
                fallback = fallback or log
        if source is None and fallback is not None:
            # every log that has ``upto`` starts past the shadow: a snapshot holds the image,
            # not the entries (KIP-630), so the shadow loads it and notes no change
            from kafkasim.control.kraft.image import load_snapshot

            source, lo = fallback, fallback.start_offset
            load_snapshot(shadow, source.entries_between(0, lo))
        if source is None:
            return   # not on any node's log (a bug RaftSafety reports); try again later
        from kafkasim.control.kraft.offset_control import published_end, published_entries

        parts = shadow.partitions
        pending = source.entries_between(lo, upto + 1)
        for off, _epoch, record in published_entries(pending):   # as a metadata loader
            before = None
            tid = getattr(record, "topic_id", None)
            if tid is not None and hasattr(record, "partition_id"):
                name = shadow.topic_names.get(tid)
                before = parts.get((name, record.partition_id)) if name is not None else None
            tp = shadow.replay(record, off)
            if tp is not None:
                changes.append((tp, off, record, before, parts[tp]))
        shadow.offset = published_end(pending, upto + 1) - 1


def _parsed(zk, cache: dict, path: str):
    """The JSON of znode ``path``, parsed once per write (``cache``: path -> (data, value))."""
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
    - ``power_losses``: broker -> times it lost power (trace ``broker_power_loss``);
    - ``losses``: the ``LossLedger`` (loss allowances and events, power truncations, holders);
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
    - ``quiet``: nothing a check reads changed in the last update (``_nothing_changed``).

    Loss classification (``losses.loss_reasons``, ``losses.record_loss_reasons``,
    ``replica_loss_reasons``):
    a loss is legitimate after an unclean election on the partition (``LOSS_RULES``, applied to
    what was acked or read at or before it) and when every replica that held an acked record
    lost power after it held it, with at least one of those power losses cutting it from a log
    (outside Kafka's "one in-sync replica survives" guarantee: KIP-101 scenario 2; the KIP-966
    spec disables NoCommittedRecordLostGlobally after MinISR lossy shutdowns).
    """

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
        self.appends = LeaderAppends()
        self.consumer_cursor: dict[str, int] = {}
        self.consumed: dict[TP, dict[int, Consumed]] = {}
        self.consumed_list: dict[TP, list[Consumed]] = {}
        self.new_consumed: list[tuple[str, Any, Consumed | None]] = []
        self.states: dict[TP, tuple[int, int, tuple[int, ...]]] = {}
        self.local_leaders: list[tuple[int, TP, Any]] = []
        self.replica_logs: dict[TP, list[tuple[int, Any]]] = {}
        self.true_hw: dict[TP, int] = {}
        self.terms: dict[TP, tuple[int, int]] = {}
        self.power_losses: dict[int, list[int]] = {}
        self.acked_by_id: dict[int, tuple[TP, Acked]] = {}
        self.true_hw_time: dict[TP, int] = {}
        self.hw_live: dict[tuple[int, TP], bool] = {}
        self.replicas: dict[TP, tuple[int, ...]] = {}
        # loss classification: why losing data on a partition is legitimate
        self.losses = LossLedger(self.replicas, self.power_losses)
        self._live_acks = False
        self._full_next = False
        self.event: tuple | None = None      # set by run_checked: the engine event just run
        self._states_changed = True
        self.state_reader = ControllerStateReader()
        self.structural = True
        self.dirty: set[TP] = set()
        self.leader_info: dict[TP, tuple] = {}
        self._prev_row: tuple | None = None   # the row before the one update is applying
        # KRaft: committed metadata followed record by record (``state_reader``)
        self.elr: dict[TP, tuple[int, ...]] = {}
        self.meta_changes: list[tuple] = []
        self.raft_key: tuple | None = None
        self.raft_changed = True
        self.quiet = False

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
        if time_ms is None:
            ref = self._cluster_ref() if self._cluster_ref is not None else None
            time_ms = ref.now if ref is not None else 1 << 62
        self.losses.allow_loss(tp, reason, time_ms, epoch)

    def _raise_true_hw(self, tp: TP, hw: int, time_ms: int) -> None:
        if hw > self.true_hw.get(tp, 0):
            self.true_hw[tp] = hw
            self.true_hw_time[tp] = time_ms

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
            out = self.losses.loss_reasons(tp, since_ms)
        for t, b, keep, _end in self.losses.power_truncations.get(tp, ()):
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
                self.losses.apply_loss_rules(row)
            self._prev_row = row
        self._scan_consumers(cluster)
        self._read_states(cluster)
        self._scan_replicas(cluster)
        self.quiet = _nothing_changed(self)

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

    def _step_produce_result(self, cluster, row) -> None:
        """A record was acked: remember where, by which leader append and leadership term,
        and (live) which brokers hold it. A failed record adds nothing."""
        if row[5][1] != "acked":
            return
        t, _kind, client_id, topic, partition, (rid, _status, offset) = row
        client = cluster.clients.get(client_id)
        acks = getattr(client, "acks", -1)
        tp = (topic, partition)
        leader, epoch = self.appends.leader_of(tp, offset) \
            if offset is not None and offset >= 0 else (-1, -1)
        term = -1
        cur = self.terms.get(tp)
        if cur is not None and cur[1] == leader >= 0:
            term = cur[0]
        rec = Acked(offset if offset is not None else -1, rid, acks, client_id, t, leader, epoch,
                    term)
        self.acked.setdefault(tp, []).append(rec)
        self.acked_by_id[rid] = (tp, rec)
        if self._live_acks and rec.offset >= 0:
            self.losses.on_acked(cluster, tp, rec)

    def _step_truncate(self, cluster, row) -> None:
        """A log was truncated; a power loss cut is remembered for loss classification."""
        tp = (row[3], row[4])
        self.truncated.add((row[2], tp))
        detail = row[5]
        if isinstance(detail, PowerLossTruncate):
            self.losses.power_truncations.setdefault(tp, []).append(
                (row[0], row[2], detail.offset, detail.offset + detail.lost))

    def _step_power_loss(self, cluster, row) -> None:
        self.power_losses.setdefault(row[2], []).append(row[0])

    def _step_log_recovery(self, cluster, row) -> None:
        """A restart read the HW back from its checkpoint: not current until a fetch sets it."""
        self.hw_live[(row[2], (row[3], row[4]))] = False

    def _step_role(self, cluster, row) -> None:
        """become_leader / become_follower: leadership terms; a leader's HW is current, a new
        follower's is not until a fetch response sets it."""
        tp = (row[3], row[4])
        self.hw_live[(row[2], tp)] = row[1] == "become_leader"
        # leadership terms: a new term whenever another broker starts leading, or the leading
        # broker steps down
        cur = self.terms.get(tp)
        if row[1] == "become_leader":
            if cur is None:
                self.terms[tp] = (0, row[2])
            elif cur[1] != row[2]:
                self.terms[tp] = (cur[0] + 1, row[2])
        elif cur is not None and cur[1] == row[2]:
            self.terms[tp] = (cur[0] + 1, -1)

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
        """The controller's view: ZooKeeper's partition state znodes, or in KRaft the committed
        metadata image (``ControllerStateReader``); unchanged since the last update: the
        states stay (``_states_changed`` False)."""
        read = self.state_reader.read_states(cluster, self.full, self.replicas,
                                             self.meta_changes)
        self._states_changed = read is not None
        if read is not None:
            self.states, elr = read
            if elr is not None:
                self.elr = elr

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


def _nothing_changed(g: Ghost) -> bool:
    """Nothing any check reads has changed since the last update: the event wrote no row but
    sends and receipts of data-path messages, no consumer read a record, and the controller's
    states are as they were. A check would find what it found last time, so
    ``Checker.__call__`` skips the checks (about 60% of a fault schedule's events: fetches that
    return nothing new, timers). That every state change a check reads writes a row is itself
    tested (tests/test_check_quiet_events.py)."""
    return not (g.full or g.structural or g.dirty or g.truncated or g.raft_changed or
                g.meta_changes or g.new_consumed or g._states_changed)


#: Data-path trace kinds: they never change roles, ISRs or which logs exist.
_DATA_KINDS = frozenset({
    "send", "recv", "hw", "append", "replicate", "produce_result", "consume", "hold", "drop",
    "produce_rejected", "produce_timed_out", "fetch_failed", "offset_commit", "isr_proposed",
})
#: Messages whose arrival can change roles or remove replicas.
_STRUCTURAL_MESSAGES = frozenset({"LeaderAndIsrRequest", "StopReplicaRequest"})
def _step_append(g: Ghost, cluster, row) -> None:
    """A leader appended (``LeaderAppends.append``)."""
    g.appends.append(row)


def _step_replicate(g: Ghost, cluster, row) -> None:
    """A follower appended: the acked records it now holds (``LossLedger.on_replicated``)."""
    g.losses.on_replicated(cluster, row)


#: Ghost.update's step for each trace kind it follows (kinds absent here only mark partitions
#: dirty, data-path, or force a rescan, control-plane).
_UPDATE_STEPS: dict[str, Callable[[Ghost, Any, tuple], None]] = {
    "hw": Ghost._step_hw,
    "append": _step_append,
    "produce_result": Ghost._step_produce_result,
    "replicate": _step_replicate,
    "truncate": Ghost._step_truncate,
    "broker_power_loss": Ghost._step_power_loss,
    "log_recovery": Ghost._step_log_recovery,
    "become_leader": Ghost._step_role,
    "become_follower": Ghost._step_role,
}


def acked_loss_reasons(g: Ghost, tp: TP, r: Acked, leader: int, term: int) -> list[str]:
    """Why losing acked record ``r`` from ``leader``'s log (in leadership ``term``) is allowed;
    empty when it is a bug."""
    reasons = []
    if r.acks == 1 and (r.term != term or r.leader != leader or r.term < 0):
        who = f"leader {r.leader}" if r.leader >= 0 else "its leader"
        reasons.append(f"acks=1 (acknowledged by {who} alone; leadership has moved since)")
    return reasons + g.losses.record_loss_reasons(tp, r.offset, r.record_id, r.time_ms,
                                           r.leader_epoch)
