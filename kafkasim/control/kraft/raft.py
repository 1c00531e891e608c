"""KafkaRaftClient for the ``__cluster_metadata`` quorum as a pure, deterministic state machine.

Follows org.apache.kafka.raft (KIP-595): QuorumState and its EpochStates (Unattached,
Prospective, Candidate, Leader, Follower, Resigned: kafkasim.control.kraft.epoch_states; the
client holds the current one and makes the transitions), LeaderState's high-watermark rule,
RequestManager's one-request-per-destination with request timeout and retry backoff, and the
leader's long-poll fetch purgatory. The baseline is trunk 2024-10 (3.9); options switch on later
rules: ``pre_vote`` (KIP-996, 4.0), ``election_loss_waits_timeout`` (KAFKA-18345, 4.1),
``fast_hwm_replication`` (KAFKA-14145, 4.1); ``begin_quorum_epoch_heartbeat=False`` and
``voted_state=True`` give releases before 3.9 (KAFKA-16536, KAFKA-17067),
``check_quorum=False`` before 3.7 (KAFKA-15489).

Kafka's client runs a poll loop: every poll handles at most one inbound message and then polls
the current state, which returns how long it may sleep. Here ``handle``/``on_timer``/``append``
play that role and end with ``_poll``, which re-arms one "poll" timer at the earliest deadline
(stale timers are ignored by generation number). Time is the caller's virtual ms; randomness is
``ctx.random_int`` (Java's ``Random.nextInt(bound)``).

Voters: ``controller.quorum.voters`` is kraft.version 0, one static voter set; kraft.version 1
(KIP-853, 3.9+) reads the voter set from the VotersRecord control records of the log
(voter_set.VoterSetHistory: in force once appended, dropped on truncation), and the leader
handles AddRaftVoter / RemoveRaftVoter / UpdateRaftVoter (raft_reconfig). A replica with a
directory id speaks 3.9's RPCs: its Vote / BeginQuorumEpoch name the voter asked (a replica
that is not that key answers INVALID_VOTER_KEY), its Fetch carries its directory id (the
leader keys replicas by ReplicaKey). Snapshots (KIP-630: createSnapshot, the log start offset,
FetchSnapshot) are ``raft_snapshots``'s, the client's ``snapshots`` collaborator and the log's
base class. Simplifications: no cluster ids, the log never loses flushed entries, no batch size
limits (appends
linger controller.quorum.append.linger.ms, then drain as one batch), no graceful-shutdown
timer, no listener (handleCommit) API: the glue reads the log below ``on_high_watermark``.
"""

from __future__ import annotations

import functools
from typing import Protocol

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft.epoch_states import (
    NEVER,
    UNKNOWN,
    CandidateState,
    EpochState,
    FollowerState,
    LeaderState,
    ProspectiveState,
    QuorumState,
    ReplicaState,
    ResignedState,
    UnattachedState,
)
from kafkasim.control.kraft.leader_and_epoch import LeaderAndEpoch
from kafkasim.control.kraft.quorum_state_store import (
    FileQuorumStateStore,
    parse_quorum_state_json,
)
from kafkasim.control.kraft.raft_errors import NotLeaderError
from kafkasim.control.kraft.raft_invariants import assert_raft_safety, check_raft_safety
from kafkasim.control.kraft.raft_reconfig import RaftReconfig
from kafkasim.control.kraft.raft_snapshots import (
    SNAPSHOT_CLEANER_INTERVAL_MS,
    MetadataLogConfig,
    MetadataLogSnapshots,
    RaftSnapshotHandler,
)
from kafkasim.control.kraft.voter_set import (
    ReplicaKey,
    VoterSet,
    VoterSetHistory,
)
from kafkasim.core import events as ev
from kafkasim.core.errors import IllegalArgumentException, IllegalStateException

__all__ = ["KafkaRaftClient", "RaftLog", "RaftContext", "NotLeaderError", "RequestManager",
           "IllegalStateException", "IllegalArgumentException", "ResignNotLeaderError",
           "QuorumState", "EpochState", "UnattachedState", "ProspectiveState",
           "CandidateState", "LeaderState", "FollowerState", "ResignedState", "ReplicaState",
           "check_raft_safety", "assert_raft_safety", "QUORUM_CONFIG_DEFAULTS",
           "parse_quorum_state_json", "LeaderAndEpoch"]

MAX_FETCH_WAIT_MS = 500           # KafkaRaftClient.MAX_FETCH_WAIT_MS
RETRY_BACKOFF_BASE_MS = 100       # KafkaRaftClient.RETRY_BACKOFF_BASE_MS
OBSERVER_SESSION_TIMEOUT_MS = 300_000  # LeaderState.OBSERVER_SESSION_TIMEOUT_MS

QUORUM_CONFIG_DEFAULTS = {        # org.apache.kafka.raft.QuorumConfig
    "controller.quorum.election.timeout.ms": 1000,
    "controller.quorum.fetch.timeout.ms": 2000,
    "controller.quorum.election.backoff.max.ms": 1000,
    "controller.quorum.request.timeout.ms": 2000,
    "controller.quorum.retry.backoff.ms": 20,
    "controller.quorum.append.linger.ms": 25,
}


class ResignNotLeaderError(NotLeaderError, IllegalArgumentException):
    """KafkaRaftClient.resign by a replica that is not the leader of the epoch: Kafka's
    IllegalArgumentException, and kafkasim's NotLeaderError."""


class RaftContext(Protocol):
    """What the cluster glue gives the client (its clock, network, timers and callbacks)."""

    @property
    def now(self) -> int: ...
    def send(self, dst: int, msg) -> None: ...
    def schedule(self, delay_ms: int, timer: str, *args) -> None: ...
    def random_int(self, bound: int) -> int: ...
    def trace(self, kind: str, detail) -> None: ...
    def on_leader_change(self, leader_id: int, epoch: int) -> None: ...
    def on_high_watermark(self, hw: int) -> None: ...



# --- ReplicatedLog -------------------------------------------------------------------------------
class RaftLog(MetadataLogSnapshots):
    """The replicated metadata log (ReplicatedLog / KafkaMetadataLog): ``entries`` are (offset,
    epoch, record) from ``start_offset`` (0 until snapshots let it advance: KIP-630, the
    snapshot half is ``raft_snapshots.MetadataLogSnapshots``). Epoch 0 is the "primordial"
    epoch of an empty log (ReplicatedLog.lastFetchedEpoch). ``epochs`` is the log's leader
    epoch cache, (epoch, start offset) of each run of one epoch, oldest first: KafkaMetadataLog
    answers endOffsetForEpoch from UnifiedLog's LeaderEpochFileCache, not by reading records,
    and so does ``end_offset_for_epoch`` (every Raft Fetch asks it). ``high_watermark`` is
    the log's (ReplicatedLog.updateHighWatermark), what createNewSnapshot checks."""

    __slots__ = ("entries", "epochs", "start_offset", "high_watermark", "snapshots", "config",
                 "log_dir")

    def __init__(self, entries=(), start_offset: int = 0):
        self.high_watermark = 0
        self.snapshots: dict = {}
        self.config = MetadataLogConfig()
        self.log_dir = None
        self.replace_entries(list(entries), start_offset)

    def __getstate__(self):
        state = {"entries": self.entries}     # the epoch cache is rebuilt from them
        state.update(self.snapshot_state())
        return None, state

    def __setstate__(self, state) -> None:
        state = state[1]
        self.restore_snapshot_state(state)
        self.replace_entries(state["entries"], state.get("start_offset", 0))

    def snapshot_state(self) -> dict:
        """What a pickle keeps besides the entries (History snapshots share the entries)."""
        return {"start_offset": self.start_offset, "high_watermark": self.high_watermark,
                "snapshots": self.snapshots, "config": self.config, "log_dir": self.log_dir}

    def restore_snapshot_state(self, state: dict) -> None:
        self.high_watermark = state.get("high_watermark", 0)
        self.snapshots = state.get("snapshots", {})
        self.config = state.get("config", MetadataLogConfig())
        self.log_dir = state.get("log_dir")

    def replace_entries(self, entries: list, start_offset: int | None = None) -> None:
        """Take ``entries`` as the whole log (a restore) and rebuild its epoch cache."""
        if start_offset is not None:
            self.start_offset = start_offset
        self.entries: list[tuple[int, int, object]] = entries
        self.epochs: list[tuple[int, int]] = []
        for offset, epoch, _ in entries:
            self._assign_epoch(epoch, offset)

    def _assign_epoch(self, epoch: int, offset: int) -> None:
        """LeaderEpochFileCache.assign as UnifiedLog calls it on append: a batch of a new
        epoch starts that epoch's run."""
        epochs = self.epochs
        if not epochs or epochs[-1][0] != epoch:
            epochs.append((epoch, offset))

    @property
    def end_offset(self) -> int:
        return self.start_offset + len(self.entries)

    @property
    def last_fetched_epoch(self) -> int:
        """KafkaMetadataLog.lastFetchedEpoch: the last entry's epoch; an empty log that starts
        at its latest snapshot's offset has that snapshot's epoch; else 0."""
        if self.entries:
            return self.entries[-1][1]
        if self.snapshots:
            latest = self.latest_snapshot_id()
            if latest.offset == self.start_offset:
                return latest.epoch
        return 0

    def entry_at(self, offset: int):
        """The (offset, epoch, record) at ``offset`` in the log, None when the log does not
        have it -- below the log start neither: the snapshot there holds the image's
        records, not the entries (KIP-630)."""
        i = offset - self.start_offset
        if 0 <= i < len(self.entries):
            return self.entries[i]
        return None

    def end_offset_for_epoch(self, epoch: int) -> tuple[int, int]:
        """ReplicatedLog.endOffsetForEpoch: (end offset, epoch) of the largest epoch <= ``epoch``
        -- the start offset of the first larger epoch; (log end offset, last epoch) when no
        larger epoch exists. Returned as Kafka's OffsetAndEpoch, offset first. An epoch below
        the log's first one, whose end is the log start, answers the earliest snapshot's id
        (KafkaMetadataLog.endOffsetForEpoch)."""
        lower = 0
        for e, start in self.epochs:
            if e > epoch:
                if self.snapshots and lower == 0 and start == self.start_offset:
                    earliest = self.earliest_snapshot_id()
                    if earliest.offset == start:
                        return earliest.offset, earliest.epoch
                return start, lower
            lower = e
        return self.end_offset, self.last_fetched_epoch

    def validate_offset_and_epoch(self, offset: int, epoch: int) -> tuple[str, tuple[int, int]]:
        """ReplicatedLog.validateOffsetAndEpoch: VALID; SNAPSHOT with the latest snapshot id
        when the leader's log no longer has the offset (below its start, or at it in another
        epoch, or an epoch older than the earliest snapshot's); or DIVERGING with the largest
        (end offset, epoch) the follower may keep."""
        if self.start_offset == 0 and offset == 0:
            return "VALID", (0, 0)
        if self.snapshots:
            earliest = self.earliest_snapshot_id()
            if offset < self.start_offset or epoch < earliest.epoch or \
                    (offset == self.start_offset and epoch != earliest.epoch):
                return "SNAPSHOT", tuple(self.latest_snapshot_id())
        end, end_epoch = self.end_offset_for_epoch(epoch)
        if end_epoch != epoch or end < offset:
            return "DIVERGING", (end, end_epoch)
        return "VALID", (offset, epoch)

    def truncate_to(self, offset: int) -> None:
        # a new list, not ``del`` in place: History snapshots share the old one and rely on
        # it only ever growing (kafkasim.observe.snapshots)
        if offset < self.end_offset:
            self.entries = self.entries[:max(offset - self.start_offset, 0)]
            self.epochs = [e for e in self.epochs if e[1] < offset]

    def truncate_fully_and_start_at(self, offset: int) -> None:
        """UnifiedLog.truncateFullyAndStartAt: an empty log from ``offset`` (its high
        watermark there too)."""
        self.entries, self.epochs, self.start_offset = [], [], offset
        self.high_watermark = offset

    def maybe_increment_log_start_offset(self, offset: int) -> bool:
        """UnifiedLog.maybeIncrementLogStartOffset (SnapshotGenerated): drop the entries below
        ``offset``; the epoch cache keeps the run that covers it, from ``offset``
        (LeaderEpochFileCache.truncateFromStart)."""
        if offset <= self.start_offset or offset > self.high_watermark:
            return False
        self.entries = self.entries[offset - self.start_offset:]
        below = [e for e in self.epochs if e[1] <= offset]
        self.epochs = ([(below[-1][0], offset)] if below else []) + \
            [e for e in self.epochs if e[1] > offset]
        self.start_offset = offset
        return True

    def truncate_to_end_offset(self, end_offset: int, epoch: int) -> int:
        """ReplicatedLog.truncateToEndOffset: the truncation offset for the leader's diverging
        (end offset, epoch)."""
        if epoch == 0:
            offset = min(end_offset, self.end_offset)
        else:
            local_end, local_epoch = self.end_offset_for_epoch(epoch)
            offset = min(local_end, end_offset) if local_epoch == epoch else local_end
        self.truncate_to(offset)
        return offset

    def append_as_leader(self, records, epoch: int) -> int:
        if not records:
            raise ValueError("ReplicatedLog.appendAsLeader: the record set is empty")
        first = self.end_offset
        self._assign_epoch(epoch, first)
        for i, r in enumerate(records):
            self.entries.append((first + i, epoch, r))
        return first

    def append_as_follower(self, entries) -> None:
        for offset, epoch, record in entries:
            if offset != self.end_offset:
                raise ValueError(f"appendAsFollower: batch offset {offset} does not match the log "
                                 f"end offset {self.end_offset}")
            self._assign_epoch(epoch, offset)
            self.entries.append((offset, epoch, record))

    def entries_between(self, start: int, end: int) -> list:
        """(offset, epoch, record) for offsets in [start, end). From below the log start: the
        snapshot at the log start first, all its records (the image, MetadataImage.write),
        each at the snapshot's last contained offset and epoch -- what QuorumController
        .handleLoadSnapshot replays them with -- then the log from its start. A reader whose
        state is past 0 but below the log start must start over from an empty state (as
        MetadataLoader does with a SnapshotManifest); ``below_log_start`` tells it."""
        s0 = self.start_offset
        out = self.entries[max(start - s0, 0):max(end - s0, 0)]
        if start < s0 and self.snapshots and end > start:
            snapshot = self.snapshots.get(self.earliest_snapshot_id())
            if snapshot is not None:
                last, epoch = snapshot.snapshot_id.offset - 1, snapshot.snapshot_id.epoch
                out = [(last, epoch, r) for r in snapshot.entries] + out
        return out

    def below_log_start(self, next_offset: int) -> bool:
        """Whether a reader at ``next_offset`` (> 0) fell below the log start, so that
        ``entries_between`` gives it a snapshot to load rather than the entries it missed."""
        return 0 < next_offset < self.start_offset and bool(self.snapshots)

    def read(self, start: int) -> tuple:
        return tuple(self.entries[max(start - self.start_offset, 0):])


# --- RequestManager ------------------------------------------------------------------------------
class _Connection:
    """RequestManager.ConnectionState: READY, AWAITING_RESPONSE or BACKING_OFF."""

    __slots__ = ("state", "last_send", "last_fail", "inflight")

    def __init__(self):
        self.state, self.last_send, self.last_fail, self.inflight = "READY", 0, 0, None


class RequestManager:
    """org.apache.kafka.raft.RequestManager: at most one request in flight per destination; a
    request times out after controller.quorum.request.timeout.ms, a failed one backs off
    controller.quorum.retry.backoff.ms."""

    def __init__(self, retry_backoff_ms: int, request_timeout_ms: int, *,
                 forget_ready_on_scan: bool = True):
        self.retry_backoff_ms, self.request_timeout_ms = retry_backoff_ms, request_timeout_ms
        self.connections: dict[int, _Connection] = {}
        # Kafka's scans forget ready connections (``_forget_if_ready``); the client's own
        # manager as its release does (``forget_stale_connections``: KAFKA-16525, 3.8+)
        self.forget_ready_on_scan = forget_ready_on_scan

    def _timed_out(self, c, now):
        return c.state == "AWAITING_RESPONSE" and now >= c.last_send + self.request_timeout_ms

    def _backoff_complete(self, c, now):
        return c.state == "BACKING_OFF" and now >= c.last_fail + self.retry_backoff_ms

    def is_ready(self, dst, now) -> bool:
        c = self.connections.get(dst)
        if c is None:
            return True
        if self._backoff_complete(c, now) or self._timed_out(c, now):
            del self.connections[dst]
            return True
        return c.state == "READY"

    def has_request_timed_out(self, dst, now) -> bool:
        c = self.connections.get(dst)
        return c is not None and self._timed_out(c, now)

    def is_backing_off(self, dst, now) -> bool:
        c = self.connections.get(dst)
        return c is not None and c.state == "BACKING_OFF" and not self._backoff_complete(c, now)

    def has_inflight(self, dst, now) -> bool:
        c = self.connections.get(dst)
        return c is not None and c.state == "AWAITING_RESPONSE" and not self._timed_out(c, now)

    def _forget_if_ready(self, dst, now) -> bool:
        """hasAnyInflightRequest / backoffBeforeAvailableBootstrapServer remove, as they scan,
        every connection whose request timed out or whose backoff is over: a response to
        such a request is no longer expected (isResponseExpected)."""
        c = self.connections[dst]
        if not self.forget_ready_on_scan:
            return False
        if self._timed_out(c, now) or self._backoff_complete(c, now):
            del self.connections[dst]
            return True
        return False

    def has_any_inflight(self, now) -> bool:
        """hasAnyInflightRequest: scans the connections (here in id order; Kafka's HashMap of
        id strings), forgetting the ready ones, up to the first with a request in flight."""
        for d in sorted(self.connections):
            if not self._forget_if_ready(d, now) and self.has_inflight(d, now):
                return True
        return False

    def remaining_request_time(self, dst, now) -> int:
        c = self.connections.get(dst)
        if c is None or not self.has_inflight(dst, now):
            return 0
        return c.last_send + self.request_timeout_ms - now

    def remaining_backoff(self, dst, now) -> int:
        c = self.connections.get(dst)
        if c is None or not self.is_backing_off(dst, now):
            return 0
        return c.last_fail + self.retry_backoff_ms - now

    def is_response_expected(self, dst, correlation_id) -> bool:
        c = self.connections.get(dst)
        return c is not None and c.inflight == correlation_id

    def on_response_result(self, dst, correlation_id, success: bool, now) -> None:
        if self.is_response_expected(dst, correlation_id):
            if success:
                del self.connections[dst]
            else:
                c = self.connections[dst]
                c.state, c.last_fail, c.inflight = "BACKING_OFF", now, None

    def on_request_sent(self, dst, correlation_id, now) -> None:
        c = self.connections.setdefault(dst, _Connection())
        c.state, c.last_send, c.inflight = "AWAITING_RESPONSE", now, correlation_id

    def reset(self, dst) -> None:
        self.connections.pop(dst, None)

    def reset_all(self) -> None:
        self.connections.clear()

    def find_ready_bootstrap_server(self, servers, now, random_int):
        """RequestManager.findReadyBootstrapServer: the first ready server from a random start,
        unless a request to any node is still in flight."""
        if self.has_any_inflight(now):
            return None
        n = len(servers)
        start = random_int(n)
        for i in range(n):
            s = servers[(start + i) % n]
            if self.is_ready(s, now):
                return s
        return None

    def backoff_before_available_bootstrap_server(self, servers, now) -> int:
        """backoffBeforeAvailableBootstrapServer: the remaining request time of the first
        connection with one in flight, else 0 if a bootstrap server is ready, else the least
        remaining backoff (at most controller.quorum.retry.backoff.ms)."""
        best = self.retry_backoff_ms
        for d in sorted(self.connections):
            if self._forget_if_ready(d, now):
                continue
            if self.has_inflight(d, now):
                return self.remaining_request_time(d, now)
            if self.is_backing_off(d, now):
                best = min(best, self.remaining_backoff(d, now))
        if any(self.is_ready(s, now) for s in servers):
            return 0
        return best


# --- KafkaRaftClient -----------------------------------------------------------------------------
class KafkaRaftClient:
    """org.apache.kafka.raft.KafkaRaftClient for one node of the metadata quorum.

    ``pre_vote``: Kafka 4.0+ (KIP-996): a voter whose fetch or election timer expires becomes
    Prospective and asks for PreVotes before bumping the epoch; without it (3.x) it becomes a
    Candidate at once. ``check_quorum`` (KAFKA-15489, 3.7+): a leader that hears no fetch from a
    majority within 1.5 x controller.quorum.fetch.timeout.ms resigns.
    ``election_loss_waits_timeout`` (KAFKA-18345, 4.1+): a Candidate that lost waits out its
    election timeout instead of a random exponential backoff. ``fast_hwm_replication``
    (KAFKA-14145, 4.1+): fetches carry the fetcher's high watermark; the leader answers at once
    when it knows a higher one and completes parked fetches whenever its high watermark moves.
    ``update_voter_static`` (KAFKA-16538, 4.1+): the voters of a static quorum send each new
    leader UpdateRaftVoter, which it keeps in memory (raft_reconfig).
    ``update_voter_period_one_fetch_timeout`` (KAFKA-16538, 4.1+): a follower's update-voter
    period (UpdateRaftVoter, auto-join) is one controller.quorum.fetch.timeout.ms, not three.
    ``voter_set_non_overlapping`` (KAFKA-17973, 4.0+): the voter-set history accepts a voter set
    read from the log whose majority does not overlap the previous one's (3.9: an
    IllegalArgumentException, VoterSetHistory.addAt).
    ``begin_quorum_epoch_heartbeat`` (KAFKA-16536, 3.9+): the leader re-sends BeginQuorumEpoch
    to every voter each fetch.timeout / 2; before, only to voters that have not acknowledged it
    (by response or fetch); ``begin_quorum_epoch_skips_fetching_voters`` (KAFKA-16926, 4.2+):
    only to the voters that have not fetched for that long. ``forget_stale_connections``
    (KAFKA-16525, 3.8+): the request manager's scans drop a connection whose request timed out
    or whose backoff is over, so a late response to it is ignored.
    ``observer_fetches_from_best_node`` (KAFKA-19354, 4.2+): an observer whose fetch timeout
    expired goes on with maybeSendFetchToBestNode (the leader once its connection is usable
    again) instead of fetching from a bootstrap server only.
    ``voted_state`` (before 3.9, KAFKA-17067): an Unattached voter that granted its vote is the
    separate VotedState, named "Voted". ``observer``: a broker (not in ``voters``) that only
    fetches.
    ``log``/``quorum_state`` are what survived a crash.
    """

    def __init__(self, node_id: int, voters, config: dict | None = None, *, pre_vote: bool,
                 observer: bool = False, log: RaftLog | None = None,
                 quorum_state: dict | None = None, check_quorum: bool = True,
                 election_loss_waits_timeout: bool = False,
                 fast_hwm_replication: bool = False, begin_quorum_epoch_heartbeat: bool = True,
                 voted_state: bool = False, kraft_version: int = 0,
                 directory_id: str | None = None, bootstrap_voters: VoterSet | None = None,
                 supported_kraft_version: tuple[int, int] | None = None,
                 auto_join: bool = False, listeners: tuple | None = None,
                 update_voter_static: bool = False, unattached_voters_fetch: bool = False,
                 voter_set_non_overlapping: bool = False,
                 begin_quorum_epoch_skips_fetching_voters: bool = False,
                 forget_stale_connections: bool = False,
                 update_voter_period_one_fetch_timeout: bool = False,
                 observer_fetches_from_best_node: bool = False,
                 fetch_snapshot_for_empty_log: bool = False):
        self.node_id = node_id
        static = bootstrap_voters if bootstrap_voters is not None else VoterSet.of(voters)
        # KIP-853: the voter set's history, the directory id, the bootstrap servers
        history = VoterSetHistory(static, kraft_version,
                                  allow_non_overlapping=voter_set_non_overlapping)
        self.reconfig = RaftReconfig(self, history, directory_id,
                                     tuple(sorted(voters)), supported_kraft_version, auto_join,
                                     listeners)
        self.voters = static.voter_ids()
        if observer == (node_id in self.voters):
            raise ValueError(f"node {node_id}: observer={observer} but the voter set is "
                             f"{list(self.voters)} (QuorumState.isVoter)")
        config = config or {}
        cfg = {}
        for key, default in QUORUM_CONFIG_DEFAULTS.items():
            value = int(config.get(key, default))
            if value < 0:
                raise ValueError(f"{key} must be >= 0, got {value} (QuorumConfig)")
            cfg[key] = value
        self.election_timeout_ms = cfg["controller.quorum.election.timeout.ms"]
        self.fetch_timeout_ms = cfg["controller.quorum.fetch.timeout.ms"]
        self.election_backoff_max_ms = cfg["controller.quorum.election.backoff.max.ms"]
        self.request_timeout_ms = cfg["controller.quorum.request.timeout.ms"]
        self.retry_backoff_ms = cfg["controller.quorum.retry.backoff.ms"]
        self.append_linger_ms = cfg["controller.quorum.append.linger.ms"]
        self.pre_vote, self.observer, self.check_quorum = pre_vote, observer, check_quorum
        self.election_loss_waits_timeout = election_loss_waits_timeout
        self.fast_hwm_replication = fast_hwm_replication
        self.reconfig.update_voter_static = update_voter_static
        # KAFKA-16538 (4.1): FollowerState.updateVoterPeriodMs is one fetch timeout, not three
        self.reconfig.update_voter_period_fetch_timeouts = (
            1 if update_voter_period_one_fetch_timeout else 3)
        self.begin_quorum_epoch_heartbeat = begin_quorum_epoch_heartbeat
        self.voted_state = voted_state
        self.log = log if log is not None else RaftLog()
        self.store = FileQuorumStateStore(quorum_state)   # the quorum-state file
        self.state: EpochState | None = None
        # instrumentation for check_raft_safety (not Kafka state; survives start())
        self.elected_epochs: list[int] = []
        self.committed: dict[int, tuple[int, int]] = {}   # offset -> (entry epoch, epoch known)
        self.leader_hw_history: list[tuple[int, int]] = []  # (epoch, hw) as the leader set it
        # monotonic across restarts, so timers and responses of an earlier run never match
        self._poll_gen = 0
        self._handler = RaftRequestHandler(self)
        self._poller = RaftPollLoop(self, unattached_voters_fetch,
                                    begin_quorum_epoch_skips_fetching_voters,
                                    forget_stale_connections, observer_fetches_from_best_node)
        self._transitions = QuorumTransitions(self)
        # KIP-630: createSnapshot, FetchSnapshot, the log cleaner (raft_snapshots)
        self.snapshots = RaftSnapshotHandler(self, fetch_snapshot_for_empty_log)

    # --- read side ---------------------------------------------------------------------------
    @property
    def state_name(self) -> str:
        """EpochState.name: Unattached, Voted (before 3.9), Prospective (4.0+), Candidate, Leader,
        Follower, Resigned; "Stopped" before start()."""
        st = self.state
        if st is None:
            return "Stopped"
        if self.voted_state and isinstance(st, UnattachedState) and st.voted_id != UNKNOWN:
            return "Voted"
        return st.name

    def quorum(self) -> QuorumState:
        """KafkaRaftClient.quorum(): the QuorumState queries (is_voter, is_leader, ...)."""
        return QuorumState(self)

    @property
    def epoch(self) -> int:
        return self.state.epoch if self.state else self.store.read_election_state()[0]

    @property
    def leader_id(self) -> int:
        return self.state.leader_id if self.state else UNKNOWN

    @property
    def voted_id(self) -> int:
        return self.state.voted_id if self.state else UNKNOWN

    @property
    def high_watermark(self) -> int:
        """QuorumState.highWatermark: -1 while unknown (a new leader until it commits)."""
        return self.state.high_watermark if self.state else UNKNOWN

    @property
    def persisted_quorum_state(self) -> dict:
        """The last election state written durably (what a restart reads back); the file's
        data_version and voted directory id are in ``quorum_state_json``."""
        epoch, leader, voted = self.store.read_election_state()
        return {"leader_epoch": epoch, "leader_id": leader, "voted_id": voted}

    def quorum_state_json(self) -> str:
        """The ``quorum-state`` file (FileQuorumStateStore): each write takes data_version
        ``kraftVersion.quorumStateVersion()`` of the kraft.version in force then -- 0 (a static
        quorum, every release before 3.9) with the voters, 1 (kraft.version 1, KIP-853) with
        the voted directory id (Uuid.ZERO_UUID when none). A state given to the constructor
        and not written since is shown at the current kraft.version."""
        return self.store.quorum_state_json(self.voters,
                                            self.reconfig.history.last_kraft_version())

    def describe_quorum(self, now: int | None = None) -> dict:
        """DescribeQuorum (leader only, RaftUtil.singletonDescribeQuorumResponse): per voter and
        observer the log end offset, last fetch and last caught-up timestamps (-1 unknown)."""
        st = self.state
        if not isinstance(st, LeaderState):
            raise NotLeaderError(f"DescribeQuorum: node {self.node_id} is {self.state_name}, "
                                 "not the leader (NOT_LEADER_OR_FOLLOWER)")
        leo = self.log.end_offset

        def row(s: ReplicaState):
            local = s.replica_id == self.node_id
            t = now if (local and now is not None) else s.last_fetch_timestamp
            return {"replica_id": s.replica_id,
                    "log_end_offset": s.end_offset if s.end_offset is not None else -1,
                    "last_fetch_timestamp": t,
                    "last_caught_up_timestamp": t if local else s.last_caught_up_timestamp}
        observers = st.observer_states
        if now is not None:
            observers = {k: v for k, v in observers.items()
                         if now - v.last_fetch_timestamp < OBSERVER_SESSION_TIMEOUT_MS}
        return {"leader_id": self.node_id, "leader_epoch": st.epoch,
                "high_watermark": st.high_watermark, "log_end_offset": leo,
                "current_voters": [row(s) for s in st.voter_states.values()],
                "observers": [row(observers[k]) for k in sorted(
                    observers, key=lambda k: (k.id, k.directory_id or ""))]}

    # --- lifecycle ---------------------------------------------------------------------------
    def start(self, ctx) -> None:
        """KafkaRaftClient.initialize + QuorumState.initialize: resume from the persisted
        election state and the log; in-memory state (timers, requests, votes) starts afresh."""
        self._ctx = ctx
        self._requests = RequestManager(
            self.retry_backoff_ms, self.request_timeout_ms,
            forget_ready_on_scan=self._poller.forget_stale_connections)
        self._handler._purgatory = {}
        self.snapshots.next_clean_ms = ctx.now + SNAPSHOT_CLEANER_INTERVAL_MS   # a new Timer
        self._poll_gen += 1
        self._poll_at = None
        self._transitions.fired = None
        self.state = None
        self.reconfig.initialize(ctx)
        self._transition(ctx, self._transitions.initialize(ctx), durable=True)
        self._transitions.fire_leader_change(ctx)
        if isinstance(self.state, CandidateState):      # onBecomeCandidate
            self._transitions._maybe_transition_forward(ctx)
        elif self.quorum().is_only_voter():
            # KafkaRaftClient.initialize: a single voter stands for election at once (2.8+)
            self._transitions._to_voting_state(ctx)
        self._poll(ctx)

    # --- snapshots (KIP-630) -------------------------------------------------------------------
    def create_snapshot(self, snapshot_id, last_contained_log_timestamp: int = 0):
        """KafkaRaftClient.createSnapshot: a SnapshotWriter for a snapshot ending at
        ``snapshot_id`` (offset, epoch) -- the offset at most the high watermark, held by the
        log -- or None when the log refuses it (below its start offset, or it exists);
        an IllegalStateException before ``start`` (raft_snapshots.RaftSnapshotHandler)."""
        return self.snapshots.create_snapshot(snapshot_id, last_contained_log_timestamp)

    def latest_snapshot_id(self):
        """KafkaRaftClient.latestSnapshotId: the log's latest snapshot id, None without one."""
        return self.log.latest_snapshot_id()

    # --- public operations -------------------------------------------------------------------
    def append(self, ctx, records: list) -> int:
        """RaftClient.prepareAppend + schedulePreparedAppend as QuorumController uses them: the
        records get their offsets now (BatchAccumulator) and reach the log when the batch is
        drained, controller.quorum.append.linger.ms after the first pending append. Returns the
        first offset. Pending records die with the leadership (the accumulator is closed)."""
        st = self.state
        if not isinstance(st, LeaderState):
            raise NotLeaderError(f"Append failed because the replica {self.node_id} is not the "
                                 f"current leader (it is {self.state_name} in epoch {self.epoch})")
        records = list(records)
        if not records:
            raise ValueError("Append failed: the record list is empty")
        first = self.log.end_offset + len(st.pending)
        if not st.pending:
            st.linger_deadline = ctx.now + self.append_linger_ms   # maybeResetLinger
        st.pending.extend(records)
        self._poll(ctx)
        return first

    def prepare_append(self, ctx, epoch: int, records: list) -> int:
        """RaftClient.prepareAppend(epoch, records) (BatchAccumulator.append): ``append`` for the
        leader of ``epoch``; an older epoch is a NotLeaderError (NotLeaderException), a
        newer one an IllegalArgumentException."""
        st = self.state
        if isinstance(st, LeaderState) and epoch < st.epoch:
            raise NotLeaderError(f"Append failed because the given epoch {epoch} is stale. "
                                 f"Current leader epoch = {st.epoch}")
        if isinstance(st, LeaderState) and epoch > st.epoch:
            raise IllegalArgumentException(f"Attempt to append from epoch {epoch} which is "
                                           f"larger than the current epoch {st.epoch}")
        return self.append(ctx, records)

    def next_write_offset(self) -> int:
        """The offset the next appended record gets (OffsetControlManager.nextWriteOffset):
        the log end plus the records still lingering in the accumulator."""
        st = self.state
        pending = len(st.pending) if isinstance(st, LeaderState) else 0
        return self.log.end_offset + pending

    def epoch_start_offset(self) -> int | None:
        """Where the current leader's epoch starts (its LeaderChange record); None unless
        leader."""
        st = self.state
        return st.epoch_start_offset if isinstance(st, LeaderState) else None

    def resign(self, ctx, epoch: int | None = None) -> None:
        """KafkaRaftClient.resign(epoch) (None: the current epoch): the leader steps down on its
        next poll and sends EndQuorumEpoch (LeaderState.requestResign). A negative epoch or
        one past the current is an IllegalArgumentException; an older epoch, or this epoch's
        leader already Resigned, is a call already fulfilled (nothing happens); a replica that
        is not this epoch's leader refuses (ResignNotLeaderError)."""
        current = self.epoch
        epoch = current if epoch is None else epoch
        if epoch < 0:
            raise IllegalArgumentException(
                f"Attempt to resign from an invalid negative epoch {epoch}")
        if epoch > current:
            raise IllegalArgumentException(f"Attempt to resign from epoch {epoch} which is "
                                           f"larger than the current epoch {current}")
        if epoch < current:
            return
        if self.leader_id != self.node_id:
            raise ResignNotLeaderError(f"Cannot resign from epoch {epoch} since node "
                                       f"{self.node_id} is not the leader")
        st = self.state
        if isinstance(st, LeaderState):
            st.resign_requested = True
            self._poll(ctx)

    def on_timer(self, ctx, timer: str, *args) -> None:
        if self.state is None:
            return
        if timer == "poll":
            if args[0] != self._poll_gen:
                return          # stale
            self._poll_at = None
        elif timer == "fetch_expire":
            parked = self._handler._purgatory.pop(args[0], None)
            if parked is not None:    # REQUEST_TIMED_OUT in purgatory: the original response
                src, _req, response = parked
                ctx.send(src, response)
        self._poll(ctx)

    def on_disconnect(self, ctx, dst: int, correlation_id: int) -> None:
        """The connection to ``dst`` broke (its process died) with this request unanswered:
        KafkaNetworkChannel completes it with an error response, BROKER_NOT_AVAILABLE
        (clientResponse.wasDisconnected; InterBrokerSendThread fails a request at once when
        the connection fails), which every response handler treats as a failure
        (handleTopLevelError returns false), so RequestManager backs off
        controller.quorum.retry.backoff.ms. An observer whose leader is backing off asks
        another voter (pollFollowerAsObserver), which is how it learns a new leader. Kafka
        2.8+ (kafka.raft.KafkaNetworkChannel, in Java from 3.7)."""
        if self.state is None or not self._requests.is_response_expected(dst, correlation_id):
            return
        self._requests.on_response_result(dst, correlation_id, False, ctx.now)
        if isinstance(self.state, LeaderState):     # an ApiVersions to a new voter failed
            self.reconfig.handle_api_versions_response(ctx, dst, None)
        self._poll(ctx)

    def on_peer_gone(self, ctx, dead: int) -> None:
        """``dead``'s process died: the request in flight to it fails now (connection reset)."""
        c = self._requests.connections.get(dead) if self.state is not None else None
        if c is not None and c.inflight is not None:
            self.on_disconnect(ctx, dead, c.inflight)

    def handle(self, ctx, src: int, msg) -> None:
        """KafkaRaftClient.handleInboundMessage: requests are answered at once (or parked,
        Fetch); a response is handled only if it is the one expected from ``src``."""
        if self.state is None:
            return
        name = type(msg).__name__
        if name.endswith("Request"):
            handler = getattr(self._handler, "_handle_" + _snake(name))
            response = handler(ctx, src, msg)
            if response is not None:
                ctx.send(src, response)
        else:
            if self._requests.is_response_expected(src, msg.correlation_id):
                ok = getattr(self._handler, "_handle_" + _snake(name))(ctx, src, msg)
                self._requests.on_response_result(src, msg.correlation_id, ok, ctx.now)
            else:
                ctx.trace("raft_ignored_response", ev.RaftIgnoredResponse(src, name))
        self._poll(ctx)

    # --- transitions (QuorumState.transitionTo* + KafkaRaftClient's wrappers) -----------------
    def _transition(self, ctx, new: EpochState, durable: bool) -> None:
        """durableTransitionTo writes the election state before the state changes (a vote is
        persisted before it is answered); memoryTransitionTo only for Resigned/Prospective."""
        old = self.state
        if isinstance(old, LeaderState) and (old.add_voter_state or old.remove_voter_state):
            self.reconfig.close(ctx, old)
        if durable:
            # FileQuorumStateStore.writeElectionState(state.election(), lastKraftVersion()):
            # the vote's directory id is the candidate's (its own for a Candidate, the
            # VoteRequest's CandidateDirectoryId for a vote granted; KIP-853)
            election = new.election()
            voted = election.voted_key
            self.store.write_election_state(
                election.epoch, election.leader_id_or_sentinel(),
                voted.id if voted else UNKNOWN,
                kraft_version=self.reconfig.history.last_kraft_version(), voters=self.voters,
                voted_directory_id=voted.directory_id if voted else None)
        self.state = new
        ctx.trace("raft_transition", ev.RaftTransition(
            old.name if old else None, new.name, new.epoch, new.leader_id, new.voted_id))

    def _to_unattached(self, ctx, epoch: int, leader_id: int = UNKNOWN) -> None:
        st, now = self.state, ctx.now
        if epoch < st.epoch or (epoch == st.epoch and not isinstance(st, ProspectiveState)):
            raise IllegalStateException(f"Cannot transition to Unattached with epoch {epoch} "
                                        f"from {st.name} in epoch {st.epoch}")
        if self.observer:
            deadline = NEVER
        elif self._transitions._keeps_election_timer(st):
            deadline = st.election_deadline
        else:
            deadline = now + self._transitions.random_election_timeout(ctx)
        voted = st.voted_key if epoch == st.epoch else None    # the vote of this epoch stays
        self._transition(ctx, UnattachedState(
            epoch, deadline, leader_id, voted.id if voted else UNKNOWN, st.high_watermark,
            voters=self.voters, voted_directory_id=voted.directory_id if voted else None),
            durable=True)
        self._transitions.fire_leader_change(ctx)
        self._requests.reset_all()

    def _to_follower(self, ctx, epoch: int, leader_id: int) -> None:
        st = self.state
        if leader_id == self.node_id:
            raise IllegalStateException(f"Cannot transition to Follower with leader {leader_id} "
                                        f"and epoch {epoch} since it matches the local node.id")
        if epoch < st.epoch or (epoch == st.epoch and isinstance(st, (FollowerState, LeaderState))):
            raise IllegalStateException(f"Cannot transition to Follower with leader {leader_id} "
                                        f"and epoch {epoch} from {st.name} in epoch {st.epoch}")
        voted = st.voted_key if (self.pre_vote and epoch == st.epoch) else None
        self._transition(ctx, FollowerState(
            epoch, leader_id, ctx.now + self.fetch_timeout_ms, voted.id if voted else UNKNOWN,
            st.high_watermark, voters=self.voters, fetch_timeout_ms=self.fetch_timeout_ms,
            voted_directory_id=voted.directory_id if voted else None), durable=True)
        self._transitions.fire_leader_change(ctx)
        # onBecomeFollower
        self._requests.reset_all()
        self._handler._complete_purgatory_exceptionally(ctx, M.NOT_LEADER_OR_FOLLOWER)

    def _to_candidate(self, ctx) -> None:
        st = self.state
        if self.observer or isinstance(st, LeaderState):
            raise IllegalStateException(f"Cannot transition to Candidate from {st.name}")
        if self.pre_vote:
            if not isinstance(st, ProspectiveState):
                raise IllegalStateException(
                    f"Only Prospective may become Candidate, not {st.name}")
            retries = st.retries
        else:
            retries = st.retries + 1 if isinstance(st, CandidateState) else 1
        new = CandidateState(self.node_id, st.epoch + 1, self.voters,
                             ctx.now + self._transitions.random_election_timeout(ctx), retries,
                             st.high_watermark, local_directory_id=self.reconfig.directory_id)
        self._transition(ctx, new, durable=True)
        self._transitions.fire_leader_change(ctx)
        if not self._transitions._maybe_transition_forward(ctx):
            self._requests.reset_all()

    def _flush_leader_log(self, ctx, st: LeaderState) -> None:
        """flushLeaderLog / updateLeaderEndOffsetAndTimestamp: new local end offset, maybe a new
        high watermark, then parked fetches waiting for data complete."""
        leo = self.log.end_offset
        self.reconfig.update_voters(ctx)
        if st.update_local_state(leo):
            self._on_high_watermark(ctx, st.high_watermark)
        self._handler._complete_purgatory(ctx, leo)

    def _on_high_watermark(self, ctx, hw: int) -> None:
        st = self.state
        if isinstance(st, LeaderState):
            self.leader_hw_history.append((st.epoch, hw))
        self.log.high_watermark = max(self.log.high_watermark, hw)
        for offset in range(len(self.committed), hw):
            if offset not in self.committed:
                entry = self.log.entry_at(offset)
                if entry is not None:
                    self.committed[offset] = (entry[1], st.epoch)
        ctx.trace("raft_high_watermark", ev.RaftHighWatermark(st.epoch, hw))
        ctx.on_high_watermark(hw)
        if self.fast_hwm_replication and isinstance(st, LeaderState):
            # KAFKA-14145 (4.1): onUpdateLeaderHighWatermark completes every deferred fetch
            self._handler._complete_purgatory(ctx, None)
        if isinstance(st, LeaderState) and (st.add_voter_state or st.remove_voter_state):
            self.reconfig.high_watermark_updated(ctx, st)

    # --- poll --------------------------------------------------------------------------------
    def _poll(self, ctx) -> None:
        """KafkaRaftClient.poll without the blocking wait: poll the current state until it has
        nothing to do now, then arm one timer for the earliest deadline."""
        now = ctx.now
        self.snapshots.maybe_clean(now)
        for _ in range(32):
            wait = self._poller._poll_current_state(ctx, now)
            if wait > 0:
                break
        wait = max(1, min(wait, NEVER))
        at = now + wait
        if self._poll_at is None or at < self._poll_at or self._poll_at <= now:
            if at < NEVER // 2:
                self._poll_gen += 1
                self._poll_at = at
                ctx.schedule(wait, "poll", self._poll_gen)


class RaftRequestHandler:
    """KafkaRaftClient's handle*Request / handle*Response for Vote, BeginQuorumEpoch,
    EndQuorumEpoch and Fetch, with maybeHandleCommonResponse, the voter-only / leader-only
    request validation and the fetch purgatory (ThresholdPurgatory). One per client, kept across
    restarts (the park sequence is monotonic); ``start`` empties the purgatory."""

    def __init__(self, client: KafkaRaftClient) -> None:
        self.client = client
        self._purgatory: dict[int, tuple] = {}
        self._park_seq = 0

    def _maybe_handle_common_response(self, ctx, error, leader_id, epoch):
        """KafkaRaftClient.maybeHandleCommonResponse: None = not handled here; True/False =
        handled (False: back off)."""
        st = self.client.state
        if epoch < st.epoch or error == M.UNKNOWN_LEADER_EPOCH:
            return True
        if epoch > st.epoch or error in (M.FENCED_LEADER_EPOCH, M.NOT_LEADER_OR_FOLLOWER):
            self.client._transitions._maybe_transition(ctx, leader_id, epoch)
            return True
        if leader_id != UNKNOWN and st.leader_id == UNKNOWN:
            self.client._to_follower(ctx, epoch, leader_id)
            return None if error == M.NONE else True
        if error == M.BROKER_NOT_AVAILABLE:
            return False
        if error == M.INVALID_REQUEST:
            raise RuntimeError("Received unexpected invalid request error")
        return None

    def _validate_voter_only_request(self, remote_id, request_epoch):
        if request_epoch < self.client.state.epoch:
            return M.FENCED_LEADER_EPOCH
        if remote_id < 0:
            return M.INVALID_REQUEST
        return None

    def _validate_leader_only_request(self, request_epoch):
        st = self.client.state
        if request_epoch < st.epoch:
            return M.FENCED_LEADER_EPOCH
        if request_epoch > st.epoch:
            return M.UNKNOWN_LEADER_EPOCH
        if not isinstance(st, LeaderState):
            return M.NOT_LEADER_OR_FOLLOWER
        return None

    # --- Vote --------------------------------------------------------------------------------
    def _vote_response(self, req, error, granted):
        st = self.client.state
        return M.VoteResponse(req.correlation_id, error, st.leader_id, st.epoch, granted)

    def _handle_vote_request(self, ctx, src, req: M.VoteRequest):
        """KafkaRaftClient.handleVoteRequest."""
        pre = req.pre_vote
        if pre and not self.client.pre_vote:     # VoteRequest v2 is unknown before 4.0
            return M.VoteResponse(req.correlation_id, "UNSUPPORTED_VERSION", UNKNOWN, UNKNOWN,
                                  False)
        illegal = (req.last_offset_epoch > req.candidate_epoch if pre
                   else req.last_offset_epoch >= req.candidate_epoch)
        if req.last_offset < 0 or req.last_offset_epoch < 0 or illegal:
            return self._vote_response(req, M.INVALID_REQUEST, False)
        error = self._validate_voter_only_request(req.candidate_id, req.candidate_epoch)
        if error:
            return self._vote_response(req, error, False)
        if req.candidate_epoch > self.client.state.epoch:
            self.client._to_unattached(ctx, req.candidate_epoch)
        if not self._is_valid_voter_key(req.voter_id, req.voter_directory_id):
            return self._vote_response(req, M.INVALID_VOTER_KEY, False)
        up_to_date = ((req.last_offset_epoch, req.last_offset)
                      >= (self.client.log.last_fetched_epoch, self.client.log.end_offset))
        candidate = ReplicaKey(req.candidate_id, req.candidate_directory_id)
        granted = self.client.state.can_grant_vote(candidate, up_to_date, pre)
        st = self.client.state
        if not pre and granted and st.voted_id == UNKNOWN and isinstance(
                st, (UnattachedState, ProspectiveState)):
            self.client._transitions._add_voted_state(ctx, candidate)
        ctx.trace("raft_vote", ev.RaftVote(req.candidate_id, req.candidate_epoch, bool(pre),
                                           bool(granted)))
        return self._vote_response(req, M.NONE, granted)

    def _handle_vote_response(self, ctx, src, resp: M.VoteResponse) -> bool:
        if resp.error == "UNSUPPORTED_VERSION":
            if isinstance(self.client.state, ProspectiveState):   # a voter without PreVote
                self.client._to_candidate(ctx)
                return True
            return False
        handled = self._maybe_handle_common_response(ctx, resp.error, resp.leader_id,
                                                     resp.leader_epoch)
        if handled is not None:
            return handled
        if resp.error != M.NONE:
            return False
        st = self.client.state
        if isinstance(st, (ProspectiveState, CandidateState)):
            if resp.vote_granted:
                st.record_granted_vote(src)
            else:
                st.record_rejected_vote(src)
            if resp.vote_granted:
                self.client._transitions._maybe_transition_forward(ctx)
            elif st.is_vote_rejected() and not st.backing_off:
                # the vote is lost: back off at once rather than wait for the election timeout
                st.backing_off = True
                if isinstance(st, CandidateState):
                    if self.client.election_loss_waits_timeout:     # KAFKA-18345 (4.1)
                        st.backoff_deadline = st.election_deadline
                    else:
                        st.backoff_deadline = ctx.now + self._binary_exponential_backoff(
                            ctx, st.retries)
        return True

    def _is_valid_voter_key(self, voter_id: int, voter_directory_id: str | None) -> bool:
        """KafkaRaftClient.isValidVoterKey (KIP-853, 3.9): a Vote or BeginQuorumEpoch that
        names a voter (v1) is meant for this replica only if the id is the local one and the
        directory id, when named, the local directory's."""
        if voter_id < 0:
            return True      # v0: no voter key in the request
        if voter_id != self.client.node_id:
            return False
        return voter_directory_id is None or voter_directory_id == self.client.reconfig.directory_id

    def _binary_exponential_backoff(self, ctx, retries: int) -> int:
        """KafkaRaftClient.binaryExponentialElectionBackoffMs."""
        return min(RETRY_BACKOFF_BASE_MS * ctx.random_int(2 << min(20, retries - 1)),
                   self.client.election_backoff_max_ms)

    def _strict_exponential_backoff(self, position: int, total: int) -> int:
        """KafkaRaftClient.strictExponentialElectionBackoffMs."""
        if position == 0:
            return 0
        if position < 0 or position >= total:
            return self.client.election_backoff_max_ms
        base = self.client.election_backoff_max_ms >> (total - 1)
        return min(self.client.election_backoff_max_ms, base << (position - 1))

    # --- BeginQuorumEpoch / EndQuorumEpoch ----------------------------------------------------
    def _handle_begin_quorum_epoch_request(self, ctx, src, req):
        error = self._validate_voter_only_request(req.leader_id, req.leader_epoch)
        if not error:
            self.client._transitions._maybe_transition(ctx, req.leader_id, req.leader_epoch)
            if not self._is_valid_voter_key(req.voter_id, req.voter_directory_id):
                error = M.INVALID_VOTER_KEY
        st = self.client.state
        return M.BeginQuorumEpochResponse(req.correlation_id, error or M.NONE, st.leader_id,
                                          st.epoch)

    def _handle_begin_quorum_epoch_response(self, ctx, src, resp) -> bool:
        handled = self._maybe_handle_common_response(ctx, resp.error, resp.leader_id,
                                                     resp.leader_epoch)
        if handled is not None:
            return handled
        if resp.error != M.NONE:
            return False
        st = self.client.state
        if isinstance(st, LeaderState) and src in st.voter_states:
            st.add_acknowledgement_from(src)
        return True

    def _handle_end_quorum_epoch_request(self, ctx, src, req):
        error = self._validate_voter_only_request(req.leader_id, req.leader_epoch)
        if not error:
            self.client._transitions._maybe_transition(ctx, req.leader_id, req.leader_epoch)
            st = self.client.state
            if isinstance(st, FollowerState) and st.leader_id == req.leader_id:
                succ = list(req.preferred_successors)
                pos = succ.index(self.client.node_id) if self.client.node_id in succ else len(succ)
                backoff = self._strict_exponential_backoff(pos, len(succ))
                st.fetch_deadline = ctx.now + backoff    # FollowerState.overrideFetchTimeout
        st = self.client.state
        return M.EndQuorumEpochResponse(req.correlation_id, error or M.NONE, st.leader_id,
                                        st.epoch)

    def _handle_end_quorum_epoch_response(self, ctx, src, resp) -> bool:
        handled = self._maybe_handle_common_response(ctx, resp.error, resp.leader_id,
                                                     resp.leader_epoch)
        if handled is not None:
            return handled
        if resp.error != M.NONE:
            return False
        st = self.client.state
        if isinstance(st, ResignedState):
            st.acknowledge_resignation(src)
        return True

    # --- FetchSnapshot (KIP-630: raft_snapshots.RaftSnapshotHandler) --------------------------
    def _handle_fetch_snapshot_request(self, ctx, src, req):
        return self.client.snapshots.handle_fetch_snapshot_request(ctx, src, req)

    def _handle_fetch_snapshot_response(self, ctx, src, resp) -> bool:
        return self.client.snapshots.handle_fetch_snapshot_response(ctx, src, resp)

    # --- ApiVersions (KIP-853: the leader asks a controller it adds) -------------------------
    def _handle_api_versions_request(self, ctx, src, req: M.ApiVersionsRequest):
        return M.ApiVersionsResponse(req.correlation_id, M.NONE,
                                     self.client.reconfig.supported_kraft_version)

    def _handle_api_versions_response(self, ctx, src, resp: M.ApiVersionsResponse) -> bool:
        """KafkaRaftClient.handleApiVersionsResponse: ignored unless leader."""
        if not isinstance(self.client.state, LeaderState):
            return True
        return self.client.reconfig.handle_api_versions_response(ctx, src, resp)

    # --- AddRaftVoter / RemoveRaftVoter (an auto-joining observer's, KIP-853) ----------------
    def _handle_add_raft_voter_request(self, ctx, src, req: M.AddRaftVoterRequest):
        from kafkasim.control.kraft.voter_set import ReplicaKey
        op = self.client.reconfig.add_voter(
            ctx, ReplicaKey(req.voter_id, req.voter_directory_id), req.endpoints)
        return self.client.reconfig.respond(ctx, src, req, op, M.AddRaftVoterResponse)

    def _handle_remove_raft_voter_request(self, ctx, src, req: M.RemoveRaftVoterRequest):
        from kafkasim.control.kraft.voter_set import ReplicaKey
        op = self.client.reconfig.remove_voter(
            ctx, ReplicaKey(req.voter_id, req.voter_directory_id))
        return self.client.reconfig.respond(ctx, src, req, op, M.RemoveRaftVoterResponse)

    def _handle_add_raft_voter_response(self, ctx, src, resp) -> bool:
        return self.client.reconfig.handle_auto_join_response(ctx, resp)

    _handle_remove_raft_voter_response = _handle_add_raft_voter_response

    # --- UpdateRaftVoter (KIP-853: a voter's listeners / kraft.version range) -----------------
    def _handle_update_raft_voter_request(self, ctx, src, req: M.UpdateRaftVoterRequest):
        """KafkaRaftClient.handleUpdateVoterRequest: the leader-only checks, then
        UpdateVoterHandler (RaftReconfig.handle_update_voter_request)."""
        st = self.client.state
        error = self._validate_leader_only_request(req.current_leader_epoch)
        low, high = req.supported_kraft_version
        if error is None and (req.voter_directory_id is None or low < 0 or high < low
                              or not any(e[0] == "CONTROLLER" for e in req.endpoints)):
            error = M.INVALID_REQUEST
        if error is None:
            error = self.client.reconfig.handle_update_voter_request(ctx, st, req)
        st = self.client.state
        return M.UpdateRaftVoterResponse(req.correlation_id, error, st.leader_id, st.epoch)

    def _handle_update_raft_voter_response(self, ctx, src, resp) -> bool:
        """KafkaRaftClient.handleUpdateVoterResponse: a newer epoch or leader is taken. 3.9 and
        4.0: any other answer is handled (the follower tries again after its next
        update-voter period if its entry still differs). 4.1+ (KAFKA-16538): NONE or
        UNSUPPORTED_VERSION mark this epoch's leader updated (``setHasUpdatedLeader``: no more
        UpdateRaftVoter to it) and count as a successful fetch
        (``resetFetchTimeoutForSuccessfulFetch``); another error backs off
        (``handleUnexpectedError``)."""
        handled = self._maybe_handle_common_response(ctx, resp.error, resp.leader_id,
                                                     resp.leader_epoch)
        if handled is not None:
            return handled
        st = self.client.state
        if not self.client.reconfig.update_voter_static or not isinstance(st, FollowerState):
            return True
        if resp.error in (M.NONE, "UNSUPPORTED_VERSION"):
            st.set_has_updated_leader()
            st.fetch_deadline = ctx.now + self.client.fetch_timeout_ms
            return True
        return False

    # --- Fetch -------------------------------------------------------------------------------
    def _empty_fetch_response(self, req, error):
        st = self.client.state
        return M.RaftFetchResponse(req.correlation_id, error, st.leader_id, st.epoch, UNKNOWN)

    def _handle_raft_fetch_request(self, ctx, src, req: M.RaftFetchRequest):
        """KafkaRaftClient.handleFetchRequest: answer at once on error, data or divergence;
        otherwise park in the fetch purgatory until data arrives or max_wait_ms passes."""
        if (req.max_wait_ms < 0 or req.fetch_offset < 0 or req.last_fetched_epoch < 0
                or req.last_fetched_epoch > req.current_leader_epoch):
            return self._empty_fetch_response(req, M.INVALID_REQUEST)
        response = self._try_complete_fetch(ctx, src, req)
        if (response.error != M.NONE or response.records or req.max_wait_ms == 0
                or response.diverging_epoch != -1 or response.diverging_end_offset != -1
                or response.snapshot_epoch != -1 or response.snapshot_end_offset != -1
                or req.high_watermark < response.high_watermark):   # KAFKA-14145 (v18)
            return response
        self._park_seq += 1
        self._purgatory[self._park_seq] = (src, req, response)
        ctx.schedule(req.max_wait_ms, "fetch_expire", self._park_seq)
        return None

    def _try_complete_fetch(self, ctx, src, req) -> M.RaftFetchResponse:
        """KafkaRaftClient.tryCompleteFetchRequest: validate the fetch position against the log
        (diverging epoch), record the replica's progress, maybe advance the high watermark."""
        error = self._validate_leader_only_request(req.current_leader_epoch)
        if error:
            return self._empty_fetch_response(req, error)
        st: LeaderState = self.client.state
        kind, (end, epoch) = self.client.snapshots.validate_fetch(req.fetch_offset,
                                                                  req.last_fetched_epoch)
        records, div_epoch, div_end = (), -1, -1
        if kind == "SNAPSHOT":      # KIP-630: the follower fetches the snapshot first
            return M.RaftFetchResponse(req.correlation_id, M.NONE, st.leader_id, st.epoch,
                                       st.high_watermark, snapshot_end_offset=end,
                                       snapshot_epoch=epoch)
        if kind == "VALID":
            records = self.client.log.read(req.fetch_offset)
            # FetchRequest.replicaId(request): a fetch with no replica id (-1) is answered but
            # not tracked
            replica = ReplicaKey(req.replica_id, req.replica_directory_id)
            if st.update_replica_state(replica, ctx.now, req.fetch_offset,
                                       self.client.log.end_offset):
                self.client._on_high_watermark(ctx, st.high_watermark)
        else:
            div_epoch, div_end = epoch, end
        return M.RaftFetchResponse(req.correlation_id, M.NONE, st.leader_id, st.epoch,
                                   st.high_watermark, records, div_epoch, div_end)

    def _complete_purgatory(self, ctx, leo: int | None) -> None:
        """ThresholdPurgatory.maybeComplete(leo): parked fetches below the new end offset, by
        ascending fetch offset then arrival (``leo`` None: completeAll)."""
        ready = sorted((req.fetch_offset, seq) for seq, (_s, req, _r) in self._purgatory.items()
                       if leo is None or req.fetch_offset < leo)
        for _off, seq in ready:
            parked = self._purgatory.pop(seq, None)    # a nested completion may have taken it
            if parked is not None:
                src, req, _resp = parked
                ctx.send(src, self._try_complete_fetch(ctx, src, req))

    def _complete_purgatory_exceptionally(self, ctx, error) -> None:
        for seq in sorted(self._purgatory):
            src, req, _resp = self._purgatory.pop(seq)
            ctx.send(src, self._empty_fetch_response(req, error))

    def _handle_raft_fetch_response(self, ctx, src, resp: M.RaftFetchResponse) -> bool:
        """KafkaRaftClient.handleFetchResponse: truncate on a diverging epoch (never below the
        high watermark), else append and take min(leader HW, log end offset)."""
        handled = self._maybe_handle_common_response(ctx, resp.error, resp.leader_id,
                                                     resp.leader_epoch)
        if handled is not None:
            return handled
        st = self.client.state
        if resp.error != M.NONE or not isinstance(st, FollowerState):
            return False
        if resp.diverging_epoch < 0 and (resp.snapshot_epoch >= 0
                                         or resp.snapshot_end_offset >= 0):
            self.client.snapshots.on_fetch_response_snapshot(ctx, st, resp)
        elif resp.diverging_epoch >= 0:
            if st.high_watermark != UNKNOWN and resp.diverging_end_offset < st.high_watermark:
                raise RuntimeError(f"The leader requested truncation to offset "
                                   f"{resp.diverging_end_offset}, which is below the current "
                                   f"high watermark {st.high_watermark} "
                                   f"(node {self.client.node_id})")
            before = self.client.log.end_offset
            offset = self.client.log.truncate_to_end_offset(resp.diverging_end_offset,
                                                     resp.diverging_epoch)
            ctx.trace("raft_truncate", ev.RaftTruncate(before, offset, st.leader_id, st.epoch))
            if self.client.reconfig.history.truncate_new_entries(offset):
                self.client.reconfig.voters_changed(ctx)
        else:
            if resp.records:
                self.client.log.append_as_follower(
                    e for e in resp.records if e[0] >= self.client.log.end_offset)
                self.client.reconfig.update_voters(ctx)
            if resp.high_watermark >= 0:     # updateFollowerHighWatermark
                hw = min(self.client.log.end_offset, resp.high_watermark)
                if st.update_high_watermark(hw):
                    self.client._on_high_watermark(ctx, hw)
        st.reset_fetch_timeout_for_successful_fetch(ctx.now)
        return True



def _begin_quorum_epoch_targets(client, st: LeaderState, now, skips: bool) -> list[int]:
    """The voters of a BeginQuorumEpoch heartbeat: every other voter (3.9-4.1, KAFKA-16536);
    4.2+ (KAFKA-16926) only those that have not fetched for fetch.timeout / 2
    (LeaderState.needToSendBeginQuorumRequests)."""
    if skips:
        return st.need_to_send_begin_quorum_requests(now)
    return [v for v in client.voters if v != client.node_id]


class RaftPollLoop:
    """KafkaRaftClient.pollCurrentState and its poll* methods per state, with the outbound
    requests (maybeSendRequest, the Vote / Fetch request builders). The correlation id is
    monotonic across restarts."""

    def __init__(self, client: KafkaRaftClient, unattached_voters_fetch: bool = False,
                 begin_quorum_epoch_skips_fetching_voters: bool = False,
                 forget_stale_connections: bool = False,
                 observer_fetches_from_best_node: bool = False) -> None:
        self.client = client
        self._correlation = 0
        # KAFKA-17030 (4.0): see KafkaRaftClient's ``unattached_voters_fetch``
        self.unattached_voters_fetch = unattached_voters_fetch
        # KAFKA-16926 (4.2): see KafkaRaftClient's ``begin_quorum_epoch_skips_fetching_voters``
        self.begin_quorum_epoch_skips_fetching_voters = begin_quorum_epoch_skips_fetching_voters
        # KAFKA-16525 (3.8): see KafkaRaftClient's ``forget_stale_connections``
        self.forget_stale_connections = forget_stale_connections
        # KAFKA-19354 (4.2): see KafkaRaftClient's ``observer_fetches_from_best_node``
        self.observer_fetches_from_best_node = observer_fetches_from_best_node

    def _poll_current_state(self, ctx, now) -> int:
        st = self.client.state
        if isinstance(st, LeaderState):
            return self._poll_leader(ctx, st, now)
        if isinstance(st, CandidateState):
            return self._poll_candidate(ctx, st, now)
        if isinstance(st, ProspectiveState):
            return self._poll_prospective(ctx, st, now)
        if isinstance(st, FollowerState):
            if self.client.observer:
                return self._poll_follower_as_observer(ctx, st, now)
            return self._poll_follower_as_voter(ctx, st, now)
        if isinstance(st, UnattachedState):
            if self.client.observer:
                # pollUnattachedAsObserver also wakes at the (meaningless) election deadline;
                # once past it Kafka re-polls in a busy loop that sends nothing, so skip that
                wait = self._maybe_send_any_voter_fetch(ctx)
                if st.election_deadline > now:
                    wait = min(wait, st.election_deadline - now)
                return wait
            if now >= st.election_deadline:
                self.client._transitions._to_voting_state(ctx)
                return 0
            if self.unattached_voters_fetch:     # KAFKA-17030 (4.0): pollUnattachedCommon
                return min(self._maybe_send_any_voter_fetch(ctx), st.election_deadline - now)
            return st.election_deadline - now
        return self._poll_resigned(ctx, st, now)

    def _poll_leader(self, ctx, st: LeaderState, now) -> int:
        self.client._transitions.fire_leader_change(ctx)
        check = st.time_until_check_quorum_expires(now) if self.client.check_quorum else NEVER
        if st.resign_requested or check == 0:
            ctx.trace("raft_resign", ev.RaftResign(st.epoch, check == 0))
            self.client._transitions._to_resigned(
                ctx, st.non_leader_voters_by_descending_fetch_offset())
            return 0
        change = NEVER
        if st.add_voter_state is not None or st.remove_voter_state is not None:
            change = self.client.reconfig.maybe_expire_pending_operation(ctx, st, now)
        if st.pending and now >= st.linger_deadline:   # maybeAppendBatches
            batch, st.pending, st.linger_deadline = st.pending, [], NEVER
            self.client.log.append_as_leader(batch, st.epoch)
            self.client._flush_leader_log(ctx, st)
        drain = st.linger_deadline - now if st.pending else NEVER
        if not self.client.begin_quorum_epoch_heartbeat:     # before 3.9: until acknowledged
            begin = NEVER
            for v, rs in st.voter_states.items():
                if not rs.has_acknowledged_leader:
                    begin = min(begin, self._maybe_send(
                        ctx, v, functools.partial(self._build_begin_quorum_epoch_request, v)))
        elif st.time_until_begin_quorum_epoch_timer_expires(now) == 0:
            begin = NEVER           # maybeSendBeginQuorumEpochRequests
            for v in _begin_quorum_epoch_targets(self.client, st, now,
                                                 self.begin_quorum_epoch_skips_fetching_voters):
                begin = min(begin, self._maybe_send(
                    ctx, v, functools.partial(self._build_begin_quorum_epoch_request, v)))
            st.reset_begin_quorum_epoch_timer(now)
        else:
            begin = st.time_until_begin_quorum_epoch_timer_expires(now)
        return min(begin, check, drain, change)

    def _maybe_send_vote_requests(self, ctx, st) -> int:
        if st.is_vote_rejected():
            return NEVER
        wait = NEVER
        for v in st.epoch_election.unrecorded_voters():
            wait = min(wait, self._maybe_send(ctx, v, functools.partial(
                self._build_vote_request, v)))
        return wait

    def _poll_candidate(self, ctx, st: CandidateState, now) -> int:
        if st.backing_off:
            if now >= st.backoff_deadline:
                # 3.x: a new Candidate; 4.0: Prospective again
                self.client._transitions._to_voting_state(ctx)
                return 0
            return st.backoff_deadline - now
        if now >= st.election_deadline:
            if self.client.election_loss_waits_timeout:     # KAFKA-18345 (4.1): no extra backoff
                self.client._transitions._to_voting_state(ctx)
                return 0
            st.backing_off = True
            st.backoff_deadline = now + self.client._handler._binary_exponential_backoff(
                ctx, st.retries)
            return st.backoff_deadline - now
        return min(self._maybe_send_vote_requests(ctx, st), st.election_deadline - now)

    def _poll_prospective(self, ctx, st: ProspectiveState, now) -> int:
        """pollProspective (4.0): on a lost or timed-out PreVote round, go back to following the
        last known leader, or to Unattached (whose election timeout is the backoff)."""
        if st.backing_off or now >= st.election_deadline:
            if st.leader_id != UNKNOWN and st.leader_endpoints_known:
                self.client._to_follower(ctx, st.epoch, st.leader_id)
            else:
                self.client._to_unattached(ctx, st.epoch, st.leader_id)
            return 0
        return min(self._maybe_send_vote_requests(ctx, st), st.election_deadline - now)

    def _poll_follower_as_voter(self, ctx, st: FollowerState, now) -> int:
        if now >= st.fetch_deadline:
            ctx.trace("raft_fetch_timeout", ev.RaftFetchTimeout(st.leader_id, st.epoch))
            self.client._transitions._to_voting_state(ctx)
            return 0
        reconfig = self.client.reconfig
        if reconfig.should_send_update_voter_request(st):
            wait = reconfig.maybe_update_voter(ctx, st, now)
            if wait is not None:
                return min(wait, st.fetch_deadline - now)
        if self.unattached_voters_fetch:     # KAFKA-17030 (4.0)
            return self._maybe_send_fetch_to_best_node(ctx, st, now)
        return min(self._maybe_send(ctx, st.leader_id, self._build_fetch_request),
                   st.fetch_deadline - now)

    def _poll_follower_as_observer(self, ctx, st: FollowerState, now) -> int:
        if self.client.reconfig.auto_join:     # controller.quorum.auto.join.enable (4.2)
            wait = self.client.reconfig.maybe_auto_join(ctx, st, now)
            if wait is not None:
                return wait
        if now >= st.fetch_deadline and not self.observer_fetches_from_best_node:
            return self._maybe_send_any_voter_fetch(ctx)   # before 4.2 (KAFKA-19354)
        return self._maybe_send_fetch_to_best_node(ctx, st, now)

    def _maybe_send_fetch_to_best_node(self, ctx, st: FollowerState, now) -> int:
        """maybeSendFetchToBestNode: the leader unless its request timed out or its connection
        backs off; then any ready bootstrap server, to learn of a new leader."""
        leader = st.leader_id
        if self.client._requests.has_request_timed_out(leader, now):
            self.client._requests.reset(leader)
            wait = self._maybe_send_any_voter_fetch(ctx)
        elif self.client._requests.is_backing_off(leader, now):
            wait = self._maybe_send_any_voter_fetch(ctx)
        elif not self.client._requests.has_any_inflight(now):
            wait = self._maybe_send(ctx, leader, self._build_fetch_request)
        else:
            wait = self.client._requests.backoff_before_available_bootstrap_server(
                self.client.reconfig.bootstrap_servers, now)
        if now >= st.fetch_deadline:
            # an observer past its fetch timeout (4.2+): Kafka's min with remainingFetchTimeMs
            # is 0 and its poll loop spins; nothing changes until the wait above is over or a
            # message arrives, so the next poll is at that time
            return wait
        return min(wait, st.fetch_deadline - now)

    def _poll_resigned(self, ctx, st: ResignedState, now) -> int:
        wait = NEVER
        for v in list(st.unacked_voters):
            wait = min(wait, self._maybe_send(ctx, v, lambda c: M.EndQuorumEpochRequest(
                c, st.epoch, self.client.node_id, st.preferred_successors)))
        if now >= st.election_deadline:
            # 4.0: Resigned -> Unattached(epoch + 1); so a leader the voter set no longer has
            if self.client.pre_vote or self.client.observer:
                self.client._to_unattached(ctx, st.epoch + 1)
            else:
                self.client._to_candidate(ctx)
            return 0
        return min(wait, st.election_deadline - now)


    def _maybe_send(self, ctx, dst: int, build) -> int:
        """KafkaRaftClient.maybeSendRequest: the time to wait before ``dst`` can be retried."""
        now = ctx.now
        if self.client._requests.is_backing_off(dst, now):
            return self.client._requests.remaining_backoff(dst, now)
        if self.client._requests.is_ready(dst, now):
            self._correlation += 1
            ctx.send(dst, build(self._correlation))
            self.client._requests.on_request_sent(dst, self._correlation, now)
        return self.client._requests.remaining_request_time(dst, now)

    def _remote_voter_key(self, voter_id: int) -> tuple[int, str | None]:
        """The (VoterId, VoterDirectoryId) a Vote / BeginQuorumEpoch v1 names (KIP-853: a
        replica with a directory id speaks 3.9's RPCs): the voter as the local voter set
        knows it; (-1, None) for v0."""
        if self.client.reconfig.directory_id is None:
            return UNKNOWN, None
        node = self.client.reconfig.history.last_value().voter_node(voter_id)
        return voter_id, node.voter_key.directory_id if node is not None else None

    def _build_vote_request(self, voter_id, corr):
        c = self.client
        remote_id, remote_directory = self._remote_voter_key(voter_id)
        return M.VoteRequest(corr, c.state.epoch, c.node_id, c.log.last_fetched_epoch,
                             c.log.end_offset, isinstance(c.state, ProspectiveState),
                             remote_id, c.reconfig.directory_id, remote_directory)

    def _build_begin_quorum_epoch_request(self, voter_id, corr):
        remote_id, remote_directory = self._remote_voter_key(voter_id)
        return M.BeginQuorumEpochRequest(corr, self.client.state.epoch, self.client.node_id,
                                         remote_id, remote_directory)

    def _build_fetch_request(self, corr):
        """buildFetchRequest, or buildFetchSnapshotRequest while a snapshot is being fetched
        (maybeSendFetchOrFetchSnapshot)."""
        c = self.client
        st = c.state
        if isinstance(st, FollowerState) and st.fetching_snapshot is not None:
            return c.snapshots.build_fetch_snapshot_request(corr, st)
        req = M.RaftFetchRequest(corr, c.node_id, c.state.epoch, c.log.end_offset,
                                 c.log.last_fetched_epoch, MAX_FETCH_WAIT_MS,
                                 replica_directory_id=c.reconfig.directory_id)
        if self.client.fast_hwm_replication:
            req.high_watermark = self.client.state.high_watermark
        return req

    def _maybe_send_any_voter_fetch(self, ctx) -> int:
        now = ctx.now
        requests, voters = self.client._requests, self.client.reconfig.bootstrap_servers
        dst = requests.find_ready_bootstrap_server(voters, now, ctx.random_int)
        if dst is not None:
            return self._maybe_send(ctx, dst, self._build_fetch_request)
        return requests.backoff_before_available_bootstrap_server(voters, now)



class QuorumTransitions:
    """QuorumState.initialize and the QuorumState.transitionTo* steps KafkaRaftClient wraps
    (Prospective, Resigned, the voted state, onBecomeLeader) and KafkaRaftClient
    .maybeTransition; the client keeps transitionToUnattached / Follower / Candidate. The
    state itself stays ``client.state``."""

    def __init__(self, client: KafkaRaftClient) -> None:
        self.client = client
        self.fired = None       # the (leader, epoch) the listeners last heard of

    def random_election_timeout(self, ctx) -> int:
        """QuorumState.randomElectionTimeoutMs: timeout + Random.nextInt(timeout)."""
        timeout = self.client.election_timeout_ms
        if timeout == 0:
            return 0
        return timeout + ctx.random_int(timeout)

    def fire_leader_change(self, ctx) -> None:
        """ListenerContext.maybeFireLeaderChange: once per (leader, epoch)."""
        key = (self.client.state.leader_id, self.client.state.epoch)
        if key != self.fired:
            self.fired = key
            ctx.on_leader_change(*key)

    def initialize(self, ctx) -> EpochState:
        """QuorumState.initialize: the state the persisted election and the log end resume.
        3.9: a vote outranks a leader; 4.0 (KIP-996) keeps both (leader first). A leader
        whose endpoints the voter set lacks (3.9+, KIP-853: not a voter any more) cannot be
        fetched from: Unattached in its epoch, the leader known, until a BeginQuorumEpoch or
        a response names it with its endpoints (before 3.9 the static voter set always holds
        the persisted leader)."""
        now = ctx.now
        client = self.client
        election = client.store.read_election()
        epoch, leader = election.epoch, election.leader_id_or_sentinel()
        voted = election.voted_key
        me, voters = client.node_id, client.voters
        if election.has_voted() and me is None:     # a replica without a node id never votes
            raise IllegalStateException(f"Initialized quorum state ({election}) with a voted "
                                        "candidate but without a local id")
        timeout = self.random_election_timeout(ctx)
        if epoch < client.log.last_fetched_epoch:
            return UnattachedState(client.log.last_fetched_epoch, now + timeout, voters=voters)
        if leader == me:
            return ResignedState(me, epoch, voters, now + timeout, ())
        if election.has_voted() and election.is_voted_candidate(
                ReplicaKey(me, client.reconfig.directory_id)):
            return CandidateState(me, epoch, voters, now + timeout, 1, UNKNOWN,
                                  local_directory_id=client.reconfig.directory_id)
        kept = voted if client.pre_vote and voted is not None else ReplicaKey(UNKNOWN)
        kept_vote, voted_dir = kept.id, kept.directory_id
        if voted is not None and not (client.pre_vote and leader != UNKNOWN):
            return UnattachedState(epoch, now + timeout, voted_id=voted.id, voters=voters,
                                   voted_directory_id=voted.directory_id)
        if leader != UNKNOWN and not self._leader_endpoints_known(leader):
            return UnattachedState(epoch, now + timeout, leader, kept_vote, voters=voters,
                                   voted_directory_id=voted_dir)
        if leader != UNKNOWN:
            return FollowerState(epoch, leader, now + client.fetch_timeout_ms, kept_vote, UNKNOWN,
                                 voters=voters, voted_directory_id=voted_dir,
                                 fetch_timeout_ms=client.fetch_timeout_ms)
        return UnattachedState(epoch, now + timeout, voters=voters)

    def _leader_endpoints_known(self, leader_id: int) -> bool:
        """``partitionState.lastVoterSet().listeners(leaderId)`` is not empty."""
        node = self.client.reconfig.history.last_value().voter_node(leader_id)
        return node is not None and bool(node.endpoints)

    def _to_prospective(self, ctx) -> None:
        st = self.client.state
        if self.client.observer or isinstance(st, (LeaderState, ProspectiveState)):
            raise IllegalStateException(f"Cannot transition to Prospective from {st.name}")
        retries = st.retries + 1 if isinstance(st, CandidateState) else 1
        new = ProspectiveState(self.client.node_id, st.epoch, self.client.voters,
                               ctx.now + self.random_election_timeout(ctx), retries,
                               st.leader_id, st.voted_id, st.high_watermark,
                               st.leader_endpoints_known)
        self.client._transition(ctx, new, durable=False)
        self.fire_leader_change(ctx)
        if not self._maybe_transition_forward(ctx):
            self.client._requests.reset_all()

    def _to_voting_state(self, ctx) -> None:
        """4.0: Prospective first (KIP-996); before: Candidate."""
        if self.client.pre_vote:
            self._to_prospective(ctx)
        else:
            self.client._to_candidate(ctx)

    def _maybe_transition_forward(self, ctx) -> bool:
        st = self.client.state
        if not st.is_vote_granted():
            return False
        if isinstance(st, ProspectiveState):
            self.client._to_candidate(ctx)
        else:
            self._on_become_leader(ctx)
        return True

    def _on_become_leader(self, ctx) -> None:
        """onBecomeLeader: the epoch starts at the log end offset; the LeaderChange control
        record is written at once so the high watermark can advance (KIP-595).
        QuorumState.transitionToLeader: only a voter's Candidate with a majority of votes
        granted (IllegalStateException otherwise, the state unchanged)."""
        st, now = self.client.state, ctx.now
        if self.client.observer:
            raise IllegalStateException(
                f"Cannot transition to Leader since the local id ({self.client.node_id}) is not "
                f"one of the voters {list(self.client.voters)}")
        if not isinstance(st, CandidateState):
            raise IllegalStateException(f"Cannot transition to Leader from current state "
                                        f"{st.name} in epoch {st.epoch}")
        if not st.is_vote_granted():
            raise IllegalStateException("Cannot become leader without majority votes granted")
        start = self.client.log.end_offset
        reconfig = self.client.reconfig
        leader = LeaderState(self.client.node_id, st.epoch, start, reconfig.history.last_value(),
                             st.granting_voters(), now, self.client.fetch_timeout_ms,
                             local_directory_id=reconfig.directory_id)
        self.client._transition(ctx, leader, durable=True)
        self.client.reconfig.init_volatile_voters(leader)
        self.client.elected_epochs.append(leader.epoch)
        records = [M.LeaderChangeMessage(self.client.node_id, self.client.voters,
                                         leader.granting_voters)]
        # appendStartOfEpochControlRecords: the bootstrap checkpoint's voter set goes into the
        # log with the first leader's LeaderChange, and so does a leader's changed entry
        records += self.client.reconfig.start_of_epoch_control_records()
        self.client.log.append_as_leader(records, leader.epoch)
        self.client._flush_leader_log(ctx, leader)
        self.client._requests.reset_all()
        self.fire_leader_change(ctx)

    def _to_resigned(self, ctx, successors) -> None:
        """QuorumState.transitionToResigned: a memory transition, only from Leader."""
        st = self.client.state
        if not isinstance(st, LeaderState):
            raise IllegalStateException(f"Invalid transition to Resigned state from {st.name} "
                                        f"in epoch {st.epoch}")
        self.client._handler._complete_purgatory_exceptionally(ctx, M.NOT_LEADER_OR_FOLLOWER)
        self.client._transition(ctx, ResignedState(
            self.client.node_id, st.epoch, self.client.voters,
            ctx.now + self.random_election_timeout(ctx), successors), durable=False)
        self.client._requests.reset_all()

    def _add_voted_state(self, ctx, candidate) -> None:
        """QuorumState.unattachedAddVotedState / prospectiveAddVotedState (3.x:
        transitionToUnattachedVotedState) in the current epoch: record the binding vote for
        ``candidate`` (an id, or a ReplicaKey whose directory id is recorded too: KIP-853),
        reset the election timer. Never a vote for the local id, and only from an Unattached
        (4.0: or Prospective) that has not voted yet: IllegalStateException otherwise."""
        st, now = self.client.state, ctx.now
        key = candidate if isinstance(candidate, ReplicaKey) else ReplicaKey(candidate)
        if key.id == self.client.node_id:
            raise IllegalStateException(
                f"Cannot transition to Voted for {key.id} and epoch {st.epoch} since it "
                "matches the local broker.id")
        nominee = isinstance(st, ProspectiveState) and self.client.pre_vote
        if not isinstance(st, UnattachedState) and not nominee or st.voted_id != UNKNOWN:
            raise IllegalStateException(
                f"Cannot transition to Voted for {key.id} and epoch {st.epoch} from the "
                f"current state {self.client.state_name} (voted for {st.voted_id})")
        timeout = self.random_election_timeout(ctx)
        if isinstance(st, UnattachedState):
            new = UnattachedState(st.epoch, now + timeout, st.leader_id, key.id,
                                  st.high_watermark, voted_directory_id=key.directory_id)
        else:
            new = ProspectiveState(self.client.node_id, st.epoch, self.client.voters,
                                   now + timeout, st.retries, st.leader_id, key.id,
                                   st.high_watermark, st.leader_endpoints_known,
                                   voted_directory_id=key.directory_id)
        self.client._transition(ctx, new, durable=True)

    def unattached_add_voted_state(self, ctx, epoch: int, candidate) -> None:
        """QuorumState.unattachedAddVotedState (4.0+): the vote of an Unattached that has not
        voted, in its own epoch; IllegalStateException otherwise (a Prospective too)."""
        self._check_add_voted(epoch, candidate, UnattachedState)
        self._add_voted_state(ctx, candidate)

    def prospective_add_voted_state(self, ctx, epoch: int, candidate) -> None:
        """QuorumState.prospectiveAddVotedState (4.0+): the same for a Prospective."""
        self._check_add_voted(epoch, candidate, ProspectiveState)
        self._add_voted_state(ctx, candidate)

    def _check_add_voted(self, epoch: int, candidate, kind) -> None:
        st = self.client.state
        key = candidate if isinstance(candidate, ReplicaKey) else ReplicaKey(candidate)
        if key.id != self.client.node_id and (
                not isinstance(st, kind) or epoch != st.epoch or st.voted_id != UNKNOWN):
            raise IllegalStateException(f"Cannot add voted key ({key}) to current state "
                                        f"({st.name}) in epoch {epoch}")

    def _keeps_election_timer(self, st: EpochState) -> bool:
        """transitionToUnattached: Candidate and Unattached keep their election deadline, and
        from 4.0 (KIP-996) a Prospective whose PreVotes are not lost and a Resigned leader;
        any other state (before 4.0 Resigned too) draws randomElectionTimeoutMs."""
        if isinstance(st, (CandidateState, UnattachedState)):
            return True
        if isinstance(st, ProspectiveState):
            return not st.is_vote_rejected()
        return isinstance(st, ResignedState) and self.client.pre_vote

    def _has_consistent_leader(self, epoch, leader_id) -> bool:
        st = self.client.state
        if leader_id != UNKNOWN and leader_id == self.client.node_id:
            return isinstance(st, LeaderState)
        return (epoch != st.epoch or leader_id == UNKNOWN or st.leader_id == UNKNOWN
                or leader_id == st.leader_id)

    def _maybe_transition(self, ctx, leader_id: int, epoch: int) -> None:
        """KafkaRaftClient.maybeTransition: follow a larger epoch, or a newly learnt leader of
        the current one; two leaders in one epoch is an IllegalStateException in Kafka."""
        st = self.client.state
        if not self._has_consistent_leader(epoch, leader_id):
            raise IllegalStateException(
                f"Received request or response with leader {leader_id} and epoch {epoch} which "
                f"is inconsistent with current leader {st.leader_id} and epoch {st.epoch} "
                f"(node {self.client.node_id})")
        if epoch > st.epoch:
            if leader_id != UNKNOWN:
                self.client._to_follower(ctx, epoch, leader_id)
            else:
                self.client._to_unattached(ctx, epoch)
        elif leader_id != UNKNOWN and (st.leader_id == UNKNOWN or not st.leader_endpoints_known):
            # the leader of this epoch was unknown, or known without endpoints (restarted with
            # a leader outside the voter set): every 3.9+ message that names the leader carries
            # its endpoints ("leaderEndpoints.size() > quorum.leaderEndpoints().size()")
            self.client._to_follower(ctx, epoch, leader_id)


@functools.cache
def _snake(name: str) -> str:
    """``FetchSnapshotRequest`` -> ``fetch_snapshot_request`` (the handler's name; remembered
    per message class, it is asked for every message)."""
    out = []
    for i, ch in enumerate(name):
        if ch.isupper() and i:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)
