"""What the protocol core needs from the world around it: narrow, typed interfaces.

Kafka's ``Partition`` talks to the rest of the broker through a few collaborators (its
``AlterPartitionListener``, ``DelayedOperations``, the log and a clock); kafkasim's core does the
same. ``Partition``, ``ReplicaManager`` and ``ReplicaFetcherThread`` receive a ``ctx`` that
satisfies one of the protocols below and use nothing else. The broker
(``kafkasim.runtime.broker.Broker``)
is the real implementation; ``kafkasim.core.fake.FakeContext`` is a small one that records
what the core asked for, so each piece can be driven alone in a test (``tests/testdata``).

The pieces, smallest first:

- ``Clock`` — the simulated time, integer milliseconds;
- ``Settings`` — the broker's configs, a topic's configs, the version's rule flags
  (``kafkasim.settings.versions.Rules``) and the rule functions (``kafkasim.core.rules.RuleBook``);
- ``IsrChanges`` — where a leader sends a proposed ISR (AlterPartition, or a ZooKeeper write
  before 2.7) and how it knows which brokers may join the ISR;
- ``Outbox`` — sending a message, request timeouts, trace events;
- ``FollowerLogs`` — the follower's logs and setting a follower's HW. Appends and truncations
  are ``Log`` methods the core calls directly; what follows a log change (trace, flush,
  producer state) is the log's ``LogListener`` (``kafkasim.core.log``), and the epoch cache
  writes leader-epoch-checkpoint itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:   # types only: the core imports nothing above itself at run time
    from kafkasim.core.fetcher import ReplicaFetcherThread
    from kafkasim.core.log import Log
    from kafkasim.core.partition import Partition
    from kafkasim.core.rules import RuleBook
    from kafkasim.settings.versions import Rules


class Clock(Protocol):
    @property
    def now(self) -> int:
        """Simulated time in ms."""


class Settings(Protocol):
    config: Mapping[str, Any]

    @property
    def rules(self) -> Rules:
        """The Kafka version's rule flags, by group (``rules.isr.hw_frozen_under_min_isr``)."""

    @property
    def rulebook(self) -> RuleBook:
        """The rule functions in force (Kafka's unless a learner swapped one)."""

    def topic_config(self, topic: str) -> Mapping[str, Any]:
        """The topic's effective configs (min.insync.replicas, unclean.leader.election.enable)."""


class IsrChanges(Protocol):
    #: the broker's own broker epoch (Partition's localBrokerEpochSupplier); -1 before it has one
    broker_epoch: int
    #: the broker's MetadataCache (kafka.server.MetadataCache): ``controller_id``,
    #: ``controller_epoch``, ``contains(tp)``; a KRaft one (``kraft`` True) also knows each
    #: broker's epoch (``get_alive_broker_epoch``), which Partition.isReplicaIsrEligible checks
    #: (KIP-903, 3.5+)
    metadata: Any

    def is_isr_eligible(self, broker_id: int) -> bool:
        """May this broker's replica join the ISR (ZK mode: alive in the metadata cache; KRaft:
        registered, unfenced and not in controlled shutdown)?"""

    def isr_eligible_brokers(self) -> Sequence[int]:
        """Every broker that is ISR-eligible now."""

    def propose_isr(self, part: Partition, kind: str, replicas: tuple[int, ...],
                    new_isr: tuple[int, ...]) -> None:
        """Submit an ISR change ("expand" adding ``replicas`` / "shrink" removing them)."""


class Outbox(Protocol):
    id: int

    def send(self, dst: int | str, msg: Any) -> None:
        """Send ``msg`` to a broker id or a client name."""

    def schedule_timeout(self, delay_ms: int, name: str, *args: Any) -> Any:
        """The purgatory timeout of the operation just parked ("produce_timeout" /
        "fetch_timeout", args its id); returns its id. Taking the operation out of its
        purgatory cancels it."""

    def trace(self, kind: str, topic: str = "", partition: int = -1, detail: Any = None
              ) -> None:
        """Record a trace event (kafkasim.runtime.trace.EVENT_KINDS)."""


class PartitionContext(Clock, Settings, IsrChanges, Protocol):
    """What ``Partition`` uses."""

    def partition_changed(self, tp: tuple[str, int]) -> None:
        """The partition's role, ISR or HW changed: incremental fetch sessions that stopped
        reading it (kafkasim.core.quiet_sessions.LAZY) read it again."""


class ReplicaManagerContext(PartitionContext, Outbox, Protocol):
    """What ``ReplicaManager`` uses on top of ``PartitionContext``."""

    def not_leader_error(self) -> str:
        """NOT_LEADER_OR_FOLLOWER (NOT_LEADER_FOR_PARTITION before 2.6)."""

    def cluster_racks(self) -> Mapping[int, str | None]:
        """broker.rack of each broker alive in the metadata cache, and this broker's own
        (KIP-392's replica selector: MetadataCache.getPartitionReplicaEndpoints)."""

    def mark_meter(self, name: str, count: int = 1) -> None:
        """Mark a broker meter (``...PerSec``, e.g. IncrementalFetchSessionEvictionsPerSec)."""

    # becomeLeaderOrFollower / stopReplicas (ReplicaManager's LeaderAndIsr section) also use the
    # metadata cache (``metadata``), the fetcher threads, the log manager and the
    # AlterPartitionManager
    fetchers: dict[tuple[int, int], ReplicaFetcherThread]   # (leader, fetcher id) -> thread
    log_manager: Any                # get_or_create_log(ctx, topic, partition[, topic_id]),
                                    # get_log(tp), delete_log(tp), all_logs,
                                    # find_stray_replicas, async_delete(ctx, tp, is_stray)
    alter_partition_manager: Any    # clear_pending(tp) (2.7-2.8)


class FollowerLogs(Protocol):
    logs: Mapping[tuple[str, int], Log]
    #: the hosted partitions (ReplicaManager.getPartition), whose
    #: appendRecordsToFollowerOrFutureReplica takes the fetched records
    partitions: Mapping[tuple[str, int], Partition]

    def local_log(self, topic: str, partition: int) -> Log: ...

    def set_follower_hw(self, tp: tuple[str, int], leader_hw: int) -> None: ...


class FetcherContext(Clock, Settings, FollowerLogs, Protocol):
    """What ``ReplicaFetcherThread`` uses."""

    #: the broker's own broker epoch, sent in each Fetch (ReplicaState.ReplicaEpoch, KIP-903)
    broker_epoch: int

    def next_correlation_id(self) -> int: ...

    def send_from_fetcher(self, thread: ReplicaFetcherThread, req: Any, timeout_ms: int
                          ) -> None:
        """Send a Fetch / OffsetsForLeaderEpoch request with ``timeout_ms`` to answer."""

    def schedule_fetcher_wakeup(self, thread: ReplicaFetcherThread, when: int) -> None: ...

    def trace_fetcher(self, thread: ReplicaFetcherThread, kind: str, reason: str) -> None: ...

    def trace(self, kind: str, topic: str = "", partition: int = -1, detail: Any = None
              ) -> None:
        """Record a trace event about one partition (kafkasim.runtime.trace.EVENT_KINDS)."""


class AlterPartitionContext(ReplicaManagerContext, Protocol):
    """What ``AlterPartitionManager`` and the ISR-change callbacks
    (``kafkasim.core.alter_partition_manager``) use on top of ``ReplicaManagerContext``."""

    lifecycle: Any                  # KRaft's BrokerLifecycleManager; None in ZooKeeper mode
    replica_manager: Any            # partitions, on_hw_increased, try_complete_produces
    # before 2.7, ZooKeeper mode: conditional_update_isr(ctx, part, new_isr) -> new version or
    # -1, propagate_isr_changes(ctx, tps) and the broker's IsrChangePropagation
    # (kafkasim.runtime.zk_broker_lifecycle.ZkBrokerLifecycle)
    zk_lifecycle: Any

    def schedule_timer(self, delay_ms: int, fn: Any, *args: Any) -> None:
        """Call ``fn(ctx, *args)`` after ``delay_ms`` while this broker process runs."""
