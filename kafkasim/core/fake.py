"""``FakeContext``: a small stand-in for the broker, to drive one core piece alone.

It implements every interface of ``kafkasim.core.interfaces`` with plain data: a clock you set,
Kafka's default configs for a version, and an ``outbox`` list that records, in order, what the
core asked for (messages sent, ISR proposals, timers, trace events, and, as the listener of its
logs, their changes). Golden
transcript tests (``tests/testdata``) and notebooks use it to show one rule at work without a
cluster around it:

    >>> from kafkasim.core.fake import FakeContext
    >>> ctx = FakeContext(broker_id=1)
    >>> part = ctx.partition("t", 0)
    >>> part.make_leader(ctx, 1, (1, 2, 3), (1, 2, 3), 0, 1)   # isNewLeader
    True
"""

from __future__ import annotations

from typing import Any

from kafkasim.core import errors as E
from kafkasim.core.alter_partition_manager import AlterPartitionManager
from kafkasim.core.log import Log
from kafkasim.core.partition import Partition, prepare_isr_change
from kafkasim.core.rules import RuleBook
from kafkasim.core.state_change import find_stray_replicas
from kafkasim.settings import config as kconfig
from kafkasim.settings import versions


class FakeLogManager:
    """LogManager.getOrCreateLog / asyncDelete over the fake's ``logs``."""

    def __init__(self, logs: dict[tuple[str, int], Log]) -> None:
        self.logs = logs
        self.stray_logs: dict[tuple[str, int], Log] = {}   # LogManager.strayLogs

    def get_or_create_log(self, ctx: Any, topic: str, partition: int,
                          topic_id: str | None = None) -> Log:
        """The partition's log, a new one the first time; ``topic_id`` is given to a log
        without one (the fake's logs keep no partition.metadata, so they take none)."""
        log = self.logs.get((topic, partition))
        if log is None:
            log = self.logs[(topic, partition)] = Log(topic, partition)
            log.listener = ctx
            log.producer_states.evicts_below_log_start = \
                ctx.rules.clients.producer_state_evicts_below_log_start
        if topic_id is not None:
            log.assign_topic_id(topic_id)
        return log

    def get_log(self, tp) -> Log | None:
        """LogManager.getLog: the partition's log, None if there is none."""
        return self.logs.get(tp)

    def delete_log(self, tp) -> None:
        self.logs.pop(tp, None)

    @property
    def all_logs(self) -> list[Log]:
        """LogManager.allLogs."""
        return list(self.logs.values())

    @staticmethod
    def find_stray_replicas(broker_id: int, request: Any, logs) -> list[tuple[str, int]]:
        """LogManager.findStrayReplicas (kafkasim.core.state_change.find_stray_replicas)."""
        return find_stray_replicas(broker_id, request, logs)

    def async_delete(self, ctx: Any, tp, is_stray: bool = False) -> Log | None:
        """LogManager.asyncDelete: the log leaves the fake's logs; a stray one is kept in
        ``stray_logs`` (the fake has no directories to rename)."""
        log = self.logs.pop(tp, None)
        if log is not None and is_stray:
            self.stray_logs[tp] = log
        return log

    @staticmethod
    def start_high_watermark_checkpoints(ctx: Any) -> None:
        """The highwatermark-checkpoint task: the fake writes no checkpoint files."""


class FakeMetadataCache:
    """The fake broker's MetadataCache: the controller it knows and the partitions it was told
    of (none unless a test adds them: Kafka's tests build an empty one); a ZooKeeper one, or
    with ``kraft`` a KRaft one that knows broker epochs (``broker_epochs``)."""

    def __init__(self, kraft: bool = False, broker_epochs: dict[int, int] | None = None,
                 context: FakeContext | None = None) -> None:
        self._context = context   # whose ``live_brokers`` are the alive brokers
        self.controller_id = -1
        self.controller_epoch = -1
        self.partitions: dict[tuple[str, int], Any] = {}
        # a KRaftMetadataCache's: the epoch of each registered, unfenced broker
        self.kraft = kraft
        self.broker_epochs: dict[int, int] = dict(broker_epochs or {})

    def get_alive_broker_epoch(self, broker_id: int) -> int | None:
        """KRaftMetadataCache.getAliveBrokerEpoch."""
        return self.broker_epochs.get(broker_id)

    def has_alive_broker(self, broker_id: int) -> bool:
        """MetadataCache.hasAliveBroker: one of the fake context's live brokers."""
        return self._context is not None and broker_id in self._context.live_brokers

    def contains(self, tp: tuple[str, int]) -> bool:
        """MetadataCache.contains(tp)."""
        return tp in self.partitions


class FakeContext:
    """Clock + settings + ISR changes + outbox + follower logs, all recorded in ``outbox``."""

    # the broker's collaborators that becomeLeaderOrFollower and AlterPartition reach: none
    # unless a test sets one (a ReplicaManager set here is told of partition changes)
    replica_manager = None
    lifecycle = None        # ZooKeeper mode (KRaft's BrokerLifecycleManager otherwise)
    zk_lifecycle = None     # before 2.7: the leader's own ZooKeeper writes
    broker_epoch = 0

    def __init__(self, broker_id: int = 1, *, kafka_version: str = versions.DEFAULT_VERSION,
                 config: dict | None = None, topic_config: dict | None = None,
                 live_brokers: tuple[int, ...] = (1, 2, 3), kraft: bool = False,
                 broker_epochs: dict[int, int] | None = None) -> None:
        self.id = broker_id
        self.now = 0
        self.kafka_version = versions.normalize_version(kafka_version)
        self.rules = versions.rules_for(self.kafka_version)
        self.rulebook = RuleBook()
        self.config = kconfig.with_simulator_fallbacks(
            kconfig.broker_config(config or {}, self.kafka_version))
        self._topic_config = kconfig.topic_config(topic_config or {}, self.config,
                                                  self.kafka_version)
        self.live_brokers = tuple(live_brokers)
        self.logs: dict[tuple[str, int], Log] = {}
        self.partitions: dict[tuple[str, int], Partition] = {}
        self.outbox: list[str] = []
        self.sent: list[tuple[Any, Any]] = []
        self._correlation = 0
        self._timeouts = 0
        self.meters: dict[str, int] = {}
        # ``kraft``: a KRaftMetadataCache, with ``broker_epochs`` (id -> epoch) of the unfenced
        # brokers; else a ZooKeeper one
        self.metadata = FakeMetadataCache(kraft, broker_epochs, self)
        self.fetchers: dict = {}
        self.log_manager = FakeLogManager(self.logs)
        self.alter_partition_manager = AlterPartitionManager()

    # -- building ---------------------------------------------------------------------------
    def partition(self, topic: str, partition: int) -> Partition:
        """The local replica of ``topic-partition`` (log created on first use)."""
        tp = (topic, partition)
        if tp not in self.partitions:
            self.logs[tp] = Log(topic, partition)
            self.logs[tp].listener = self
            self.logs[tp].producer_states.evicts_below_log_start = \
                self.rules.clients.producer_state_evicts_below_log_start
            self.partitions[tp] = Partition(topic, partition, self.id, self.logs[tp])
        return self.partitions[tp]

    def take(self) -> list[str]:
        """The outbox lines recorded since the last ``take`` (and clears them)."""
        out, self.outbox = self.outbox, []
        return out

    # -- Settings -----------------------------------------------------------------------------
    def topic_config(self, topic: str) -> dict:
        return self._topic_config

    def not_leader_error(self) -> str:
        return E.NOT_LEADER_OR_FOLLOWER if self.rules.tools.error_not_leader_or_follower \
            else E.NOT_LEADER_FOR_PARTITION

    def cluster_racks(self) -> dict:
        return {}

    def partition_changed(self, tp) -> None:
        rm = getattr(self, "replica_manager", None)
        if rm is not None:
            rm.unquiet(self, tp)

    def mark_meter(self, name: str, count: int = 1) -> None:
        self.meters[name] = self.meters.get(name, 0) + count
        self.outbox.append(f"meter {name} +{count}")

    # -- IsrChanges ---------------------------------------------------------------------------
    def is_isr_eligible(self, broker_id: int) -> bool:
        return broker_id in self.live_brokers

    def isr_eligible_brokers(self) -> tuple[int, ...]:
        return self.live_brokers

    def propose_isr(self, part: Partition, kind: str, replicas: tuple, new_isr: tuple) -> None:
        part.pending = prepare_isr_change(part, kind, replicas, new_isr, self.now,
                                          part.add_broker_epoch_to_isr(self, new_isr))
        self.outbox.append(f"AlterPartition {kind} {list(replicas)}: ISR {list(part.isr)} -> "
                           f"{list(new_isr)} (leader epoch {part.leader_epoch}, partition "
                           f"epoch {part.partition_epoch})")

    # -- Outbox -------------------------------------------------------------------------------
    def schedule_timer(self, delay_ms: int, fn, *args) -> None:
        self.outbox.append(f"timer {fn.__name__} in {delay_ms} ms")

    def send(self, dst, msg) -> None:
        self.sent.append((dst, msg))
        self.outbox.append(f"send to {dst}: {describe(msg)}")

    def schedule_timeout(self, delay_ms: int, name: str, *args) -> int:
        self._timeouts += 1
        self.outbox.append(f"timer {name} in {delay_ms} ms")
        return self._timeouts

    def trace(self, kind: str, topic: str = "", partition: int = -1, detail=None) -> None:
        self.outbox.append(f"trace {kind} {detail}" if detail is not None else f"trace {kind}")

    # -- LogListener of every log: the log changes, recorded ----------------------------------
    def on_append(self, log: Log, first: int, last: int, as_leader: bool) -> None:
        if as_leader:
            self.outbox.append(f"append {first}..{last} at leader epoch {log.epochs[-1]}")
        else:
            self.outbox.append(f"replicate {first}..{last}")

    def on_truncate(self, log: Log, offset: int, removed: int, reason: str,
                    old_high_watermark: int) -> None:
        if removed:
            self.outbox.append(f"truncate to {offset} ({removed} removed): {reason}")

    def on_wipe(self, log: Log, start_offset: int) -> None:
        self.outbox.append(f"log wiped, restarts at {start_offset}")

    # -- FollowerLogs ---------------------------------------------------------------------------
    def local_log(self, topic: str, partition: int) -> Log:
        return self.logs[(topic, partition)]

    def set_follower_hw(self, tp, leader_hw: int) -> None:
        log = self.logs[tp]
        old = log.high_watermark
        if log.update_high_watermark(leader_hw) != old:
            self.outbox.append(f"hw {log.high_watermark}")

    # -- fetcher plumbing -----------------------------------------------------------------------
    def next_correlation_id(self) -> int:
        self._correlation += 1
        return self._correlation

    def send_from_fetcher(self, thread, req, timeout_ms: int) -> None:
        self.send(thread.leader_id, req)

    def schedule_fetcher_wakeup(self, thread, when: int) -> None:
        self.outbox.append(f"fetcher wakes up at {when}")

    def trace_fetcher(self, thread, kind: str, reason: str) -> None:
        self.outbox.append(f"{thread.name}: {kind} {reason}")


def describe(msg) -> str:
    """One line naming a message's type and the fields a learner reads."""
    name = type(msg).__name__
    if name == "FetchRequest":
        parts = ", ".join(
            f"{p.topic}-{p.partition} offset {p.fetch_offset} epoch {p.current_leader_epoch}"
            + (f" last fetched epoch {p.last_fetched_epoch}" if p.last_fetched_epoch >= 0 else "")
            for p in msg.partitions)
        return f"FetchRequest(replica {msg.replica_id}: {parts})"
    if name == "FetchResponse":
        parts = []
        for pd in msg.partitions:
            s = f"{pd.topic}-{pd.partition} {pd.error} HW {pd.high_watermark}"
            if len(pd.records.ids):
                s += f" records {pd.records.base_offset}..{pd.records.last_offset}"
            if pd.diverging_epoch is not None:
                s += f" diverging epoch {pd.diverging_epoch[0]} ends at {pd.diverging_epoch[1]}"
            parts.append(s)
        return f"FetchResponse({'; '.join(parts)})"
    if name == "ProduceResponse":
        return "ProduceResponse(" + "; ".join(f"{t}-{p} {err} base offset {base}"
                                              for t, p, err, base in msg.partitions) + ")"
    if name == "OffsetsForLeaderEpochRequest":
        return "OffsetsForLeaderEpochRequest(" + "; ".join(
            f"{t}-{p} current epoch {c} epoch {e}" for t, p, c, e in msg.partitions) + ")"
    if name == "OffsetsForLeaderEpochResponse":
        return "OffsetsForLeaderEpochResponse(" + "; ".join(
            f"{t}-{p} {err} epoch {e} end offset {o}" for t, p, err, e, o in msg.partitions) + ")"
    return repr(msg)
