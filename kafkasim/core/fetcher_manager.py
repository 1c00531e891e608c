"""``ReplicaFetcherManager`` (kafka.server.AbstractFetcherManager): the broker's fetcher threads,
one per (source broker, fetcher id), and the partitions it hands them.

A partition goes to the thread of its leader and of ``getFetcherId`` (its topic's hash and
partition modulo ``num.replica.fetchers``). Removing partitions never stops a thread: a thread
left with none idles until ``shutdown_idle_fetcher_threads`` runs, which ReplicaManager calls at
the end of becomeLeaderOrFollower and of applyDelta (when it made leaders or followers),
KafkaApis at the end of handleStopReplicaRequest, and resizeThreadPool
(AbstractFetcherManager.scala:66-96,192-215, ReplicaManager.scala:2066,2765, KafkaApis.scala:372
@3.9.0-rc3; ReplicaManager.scala:2404@4.3.0; the same since 0.8.2). Before this kafkasim
dropped a thread the moment its last partition left it, so a partition leaving and joining the
same leader's thread in one state change got a fresh thread (no request in flight, a new fetch
session) where Kafka keeps the running one.

The manager is a view over the broker's ``fetchers`` dict (Kafka's ``fetcherThreadMap``,
(leader id, fetcher id) -> ReplicaFetcherThread), so the threads stay where the runtime and
the course read them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkasim.core.fetcher import (
    PartitionFetchState,
    ReplicaFetcherThread,
    fetcher_id_for,
)

if TYPE_CHECKING:   # types only
    from kafkasim.core.interfaces import ReplicaManagerContext


class ReplicaFetcherManager:
    """kafka.server.ReplicaFetcherManager / AbstractFetcherManager of the broker ``ctx``."""

    __slots__ = ("ctx",)

    def __init__(self, ctx: ReplicaManagerContext) -> None:
        self.ctx = ctx

    @property
    def fetcher_thread_map(self) -> dict:
        """``fetcherThreadMap``: (source broker id, fetcher id) -> its thread."""
        return self.ctx.fetchers

    @property
    def num_fetchers_per_broker(self) -> int:
        """``numFetchersPerBroker``: num.replica.fetchers."""
        return self.ctx.config["num.replica.fetchers"]

    def get_fetcher_id(self, topic_partition: tuple[str, int]) -> int:
        """``getFetcherId``: Utils.abs(31 * topic.hashCode + partition) % numFetchersPerBroker
        (AbstractFetcherManager.scala:108-112@3.9.0-rc3)."""
        return fetcher_id_for(topic_partition[0], topic_partition[1],
                              self.num_fetchers_per_broker)

    def get_fetcher(self, topic_partition: tuple[str, int]) -> ReplicaFetcherThread | None:
        """``getFetcher``: the thread fetching the partition, None if none does."""
        for thread in self.ctx.fetchers.values():
            if thread.fetch_state(topic_partition) is not None:
                return thread
        return None

    def create_fetcher_thread(self, fetcher_id: int, source_broker: int) -> ReplicaFetcherThread:
        """``createFetcherThread``: ReplicaFetcherThread-<fetcherId>-<sourceBroker>."""
        return ReplicaFetcherThread(self.ctx.id, source_broker, fetcher_id)

    def add_fetcher_for_partitions(self, partition_and_offsets: dict) -> None:
        """``addFetcherForPartitions`` (tp -> InitialFetchState): each partition goes to the
        thread of (its leader, its fetcher id), made and started the first time; a thread
        takes its partitions at once (AbstractFetcherThread.addPartitions) and then runs."""
        ctx = self.ctx
        groups: dict = {}
        for tp, initial in partition_and_offsets.items():
            groups.setdefault((initial.leader, self.get_fetcher_id(tp)), {})[tp] = initial
        for (leader, fetcher_id), initial_states in groups.items():
            thread = self._thread(leader, fetcher_id)
            thread.add_partitions(ctx, initial_states)
            thread.do_work(ctx)

    def add_fetch_states(self, fetch_states: dict) -> None:
        """kafkasim's addFetcherForPartitions for states ReplicaManager built itself
        (tp -> (leader id, PartitionFetchState): ``ReplicaManager.initial_fetch_state``, which
        also truncates a pre-0.11 follower to its HW): the same grouping, thread making and
        start as ``add_fetcher_for_partitions``."""
        groups: dict = {}
        for tp, (leader, state) in fetch_states.items():
            groups.setdefault((leader, self.get_fetcher_id(tp)), []).append((tp, state))
        for (leader, fetcher_id), states in groups.items():
            thread = self._thread(leader, fetcher_id)
            for tp, state in states:
                thread.add_partition(tp, state)
            thread.do_work(self.ctx)

    def _thread(self, leader: int, fetcher_id: int) -> ReplicaFetcherThread:
        """The running thread of (leader, fetcher id), reused; else a new one, started."""
        key = (leader, fetcher_id)
        thread = self.ctx.fetchers.get(key)
        if thread is None:
            thread = self.ctx.fetchers[key] = self.create_fetcher_thread(fetcher_id, leader)
        return thread

    def remove_fetcher_for_partitions(self, partitions) -> dict:
        """``removeFetcherForPartitions``: every thread drops these partitions (their fetch
        states are returned) and they are no longer failed (failedPartitions.removeAll); a
        thread left with none keeps running, idle."""
        fetch_states: dict[tuple[str, int], PartitionFetchState] = {}
        tps = list(partitions)
        for thread in self.ctx.fetchers.values():
            for tp in tps:
                thread.failed_partitions.pop(tp, None)
            fetch_states.update(thread.remove_partitions(
                [tp for tp in tps if tp in thread.partitions]))
        return fetch_states

    def shutdown_idle_fetcher_threads(self) -> None:
        """``shutdownIdleFetcherThreads``: every thread with no partition is shut down and
        forgotten (a request it has in flight is then answered to no one)."""
        fetchers = self.ctx.fetchers
        for key in [k for k, thread in fetchers.items() if not thread.partitions]:
            del fetchers[key]

    def close_all_fetchers(self) -> None:
        """``closeAllFetchers``: every thread is shut down."""
        self.ctx.fetchers.clear()

    def partition_count(self) -> int:
        """The partitions the threads fetch (the threads' ``partitionCount`` summed)."""
        return sum(len(thread.partitions) for thread in self.ctx.fetchers.values())
