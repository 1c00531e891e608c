"""A broker's replica state changes: ReplicaManager.applyDelta's path (KRaft) and
becomeLeaderOrFollower's makeLeaders / makeFollowers (ZooKeeper mode), with the steps they share.

``make_leaders`` / ``make_followers`` are becomeLeaderOrFollower's two batches
(ReplicaManager.scala:405-558@0.8.2.2, :733-909@0.10.2.0, :1143-1332@1.1.0,
:1346-1540@2.4.0, :1542-1732@2.8.0, :2182-2366@3.9.0-rc3; the same steps at every tag): the
fetchers of all the new leaders removed at once, then Partition.makeLeader each; then
Partition.makeFollower for each follower whose leader is alive, the fetchers of the ones it
answered true for removed at once, their delayed produces and fetches completed, and their
fetchers added in one addFetcherForPartitions (each fetcher thread then runs once).

``apply_local_changes`` is applyDelta (ReplicaManager.scala:2720-2910@3.9.0-rc3,
:2359-2525@4.3.0): the local changes of a metadata delta (TopicsDelta.localChanges, in Kafka's
HashSet / HashMap order: kafkasim.control.kraft.image.local_changes_of) are applied in three
batches -- the deletes (stopPartitions with deleteLocalLog: fetchers removed, partitions and logs
gone), then the partitions this broker now leads (applyLocalLeadersDelta: their fetchers removed
first, then Partition.makeLeader each), then those it follows (applyLocalFollowersDelta:
Partition.makeFollower each; then, for the ones with a new leader epoch, their fetchers removed,
added again from the new position, and their delayed requests completed; the ones a controlled
shutdown stops are stopped last) -- and, when leaders or followers changed, the fetcher threads
left idle shut down (shutdownIdleFetcherThreads). Before, kafkasim applied the changed partitions
one by one in record order, each follower's fetcher added (and its thread woken) on its own.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, NamedTuple

from kafkasim.core import events as ev
from kafkasim.core.fetcher import become_follower_needed
from kafkasim.core.fetcher_manager import ReplicaFetcherManager
from kafkasim.core.messages import LEADER_AND_ISR_TYPE_FULL, PartitionState
from kafkasim.core.partition import Partition, is_stale_partition_epoch

if TYPE_CHECKING:   # types only
    from kafkasim.core.interfaces import ReplicaManagerContext
    from kafkasim.core.replica_manager import ReplicaManager


def leader_alive_for_follower(ctx: ReplicaManagerContext, leader: int) -> bool:
    """ReplicaManager.makeFollowers (ZooKeeper mode): "only change partition state when the
    leader is available". A leader the metadata cache does not list alive takes the `case None`
    branch: the local log exists (KAFKA-1647), but no Partition.makeFollower, no truncation and
    no fetcher (rule ``follower_skipped_without_alive_leader``)."""
    return not ctx.rules.fetch.follower_skipped_without_alive_leader or \
        ctx.metadata.has_alive_broker(leader)


def give_log_topic_id(ctx: ReplicaManagerContext, part: Partition | None, st: PartitionState,
                      topic_id: str | None) -> None:
    """makeLeader / makeFollower's createLogIfNotExists(topicId) (3.0+, KAFKA-12426): the log
    of a partition that took the request's state, or of a follower whose leader is not alive
    (makeFollowers creates its log all the same, KAFKA-1647), gets the request's topic id if
    it has none (LogManager.getOrCreateLog(topicId) / UnifiedLog.assignTopicId:
    partition.metadata is written before any record). A state skipped for its stale
    partition epoch creates nothing."""
    if topic_id is None or part is None or part.log.topic_id is not None or \
            not ctx.rules.controller.leader_and_isr_creates_log_with_topic_id:
        return
    if part.leader_epoch == st.leader_epoch or \
            (st.leader != ctx.id and not leader_alive_for_follower(ctx, st.leader)):
        part.log.assign_topic_id(topic_id)


def reassignment_state(ctx: ReplicaManagerContext, st) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The adding and removing replicas a partition state gives the Partition's assignment
    state: from 2.5 (KIP-352, OngoingReassignmentState); before, the Partition kept none."""
    if not ctx.rules.metrics.reassignment_metrics:
        return (), ()
    return tuple(st.adding_replicas), tuple(st.removing_replicas)


def _stops_fetching_in_controlled_shutdown(ctx: ReplicaManagerContext, rm: ReplicaManager,
                                           st: PartitionState) -> bool:
    """applyLocalFollowersDelta (KRaft, 3.3+, KAFKA-13858): during controlled shutdown a
    replica with no leader, or one this broker is out of the ISR of, stops fetching."""
    return rm.is_in_controlled_shutdown and (st.leader < 0 or ctx.id not in st.isr) and \
        ctx.rules.controller.controlled_shutdown_stops_fetching


def _keeps_fetching(ctx: ReplicaManagerContext, tp, st: PartitionState, old_leader: int,
                    old_epoch: int) -> bool:
    """Partition.makeFollower returned false (the same leader, and an epoch that needs no
    become-follower steps): the partition keeps its fetcher and fetch position (no
    truncation). Fetches before 2.1 carry no epoch; the stored one only keeps a rule override
    of fencing consistent. A partition with no fetcher (marked failed, or stopped) stays
    without one: ReplicaManager.makeFollowers and (KRaft) applyLocalFollowersDelta restart
    fetchers only for the partitions makeFollower answered true for (3.0.0 through 3.9.0 and
    4.3.0). True when so (traced as skipped)."""
    if st.leader < 0 or old_leader != st.leader or \
            become_follower_needed(ctx.rules, old_epoch, st.leader_epoch):
        return False
    for (leader, _fid), thread in ctx.fetchers.items():
        if leader == st.leader and tp in thread.partitions:
            thread.partitions[tp].current_leader_epoch = st.leader_epoch
    for thread in ctx.fetchers.values():
        if tp in thread.partitions:
            thread.changed(tp)
    ctx.trace("become_follower", st.topic, st.partition,
              ev.BecomeFollowerSkipped(st.leader, st.leader_epoch))
    return True


def get_or_create_partition(rm: ReplicaManager, ctx: ReplicaManagerContext, st: PartitionState,
                            kraft: bool) -> Partition | None:
    """The hosted Partition a state change applies to, made (with its log) the first time
    (ReplicaManager.getOrCreatePartition in KRaft); None when the state is older than the
    partition's partition epoch (makeLeader / makeFollower return false: skipped, traced)."""
    tp = (st.topic, st.partition)
    part = rm.partitions.get(tp)
    if part is None:
        part = Partition(st.topic, st.partition, ctx.id,
                         ctx.log_manager.get_or_create_log(ctx, st.topic, st.partition))
        rm.partitions[tp] = part
    elif is_stale_partition_epoch(part, ctx, st.partition_epoch) or \
            (kraft and st.partition_epoch < part.partition_epoch):
        ctx.trace("leader_and_isr_ignored", st.topic, st.partition,
                  ev.LeaderAndIsrIgnored(st.partition_epoch, part.partition_epoch))
        return None
    if ctx.rules.alter_partition.alter_isr_clear_pending_on_leader_and_isr:
        ctx.alter_partition_manager.clear_pending(tp)   # alterIsrManager.clearPending (2.7-2.8)
    return part


class FollowerChange(NamedTuple):
    """What becoming follower asks of the fetchers: ``was_leader`` (its waiting produces and
    fetches fail) and ``stop`` (a KRaft broker in controlled shutdown stops fetching it instead
    of restarting its fetcher)."""

    was_leader: bool
    stop: bool


def become_follower(rm: ReplicaManager, ctx: ReplicaManagerContext, part: Partition,
                    st: PartitionState, kraft: bool) -> FollowerChange | None:
    """Partition.makeFollower and its answer: None when the partition keeps its fetcher and
    fetch position (the same leader, no new leader epoch; ``_keeps_fetching``), else what
    ReplicaManager does next (``FollowerChange``), traced as become_follower."""
    was_leader = part.is_leader
    old_leader, old_epoch = part.leader_id, part.leader_epoch
    part.make_follower(ctx, st.leader, st.leader_epoch, st.isr, st.replicas,
                       st.partition_epoch, st.controller_epoch, *reassignment_state(ctx, st))
    stop = kraft and _stops_fetching_in_controlled_shutdown(ctx, rm, st)
    if not stop and not was_leader and \
            _keeps_fetching(ctx, part.tp, st, old_leader, old_epoch):
        return None
    ctx.trace("become_follower", st.topic, st.partition,
              ev.BecomeFollower(st.leader, st.leader_epoch))
    return FollowerChange(was_leader, stop)


def make_leaders(rm: ReplicaManager, ctx: ReplicaManagerContext, partition_states: dict,
                 topic_ids: dict) -> None:
    """ReplicaManager.makeLeaders (ZooKeeper mode) for ``partition_states`` (tp -> state, the
    request's partitionsToBeLeader): "first stop fetchers for all the partitions"
    (removeFetcherForPartitions once), then each partition (its log made if new) becomes
    leader (Partition.makeLeader; a state older than its partition epoch is skipped, 3.3+,
    its fetcher removed all the same). ``topic_ids``: topic -> the request's id or None."""
    ReplicaFetcherManager(ctx).remove_fetcher_for_partitions(partition_states)
    for st in partition_states.values():
        part = get_or_create_partition(rm, ctx, st, kraft=False)
        if part is not None:
            rm.make_leader(ctx, part, st, False)
        give_log_topic_id(ctx, rm.partitions.get((st.topic, st.partition)), st,
                          topic_ids.get(st.topic))


def make_followers(rm: ReplicaManager, ctx: ReplicaManagerContext, partition_states: dict,
                   topic_ids: dict) -> None:
    """ReplicaManager.makeFollowers (ZooKeeper mode) for ``partition_states`` (the request's
    partitionsToBeFollower): each partition (its log made if new, KAFKA-1647) whose new leader
    is alive becomes follower (Partition.makeFollower); for the ones it answered true for
    (partitionsToMakeFollower), removeFetcherForPartitions once ("stopping the fetchers must be
    done first in order to initialize the fetch position correctly"), their delayed produces
    and fetches completed (completeDelayedFetchOrProduceRequests; a pre-0.11 follower's log is
    cut to its HW as its fetch state is made, ``ReplicaManager.initial_fetch_state``), then
    addFetcherForPartitions once for all of them."""
    to_start = []
    for st in partition_states.values():
        part = get_or_create_partition(rm, ctx, st, kraft=False)
        if part is not None and leader_alive_for_follower(ctx, st.leader):
            change = become_follower(rm, ctx, part, st, False)
            if change is not None:
                to_start.append((part, st, change.was_leader))
        give_log_topic_id(ctx, rm.partitions.get((st.topic, st.partition)), st,
                          topic_ids.get(st.topic))
    if not to_start:
        return
    manager = ReplicaFetcherManager(ctx)
    manager.remove_fetcher_for_partitions([part.tp for part, _st, _w in to_start])
    for part, _st, was_leader in to_start:
        complete_delayed_requests(rm, ctx, part.tp, was_leader)
    manager.add_fetch_states({
        part.tp: (st.leader, rm.initial_fetch_state(ctx, part, st.leader_epoch))
        for part, st, _was_leader in to_start if st.leader >= 0})


class LocalFollowers(NamedTuple):
    """applyLocalFollowersDelta's two lists: ``to_start`` (partition, state, was leader) whose
    fetcher restarts, and ``to_stop`` (partition, was leader) a controlled shutdown stops."""

    to_start: list
    to_stop: list


def apply_local_changes(rm: ReplicaManager, ctx: ReplicaManagerContext, changes) -> None:
    """ReplicaManager.applyDelta for ``changes`` (a LocalReplicaChanges: ``deletes``,
    ``leaders``, ``followers``, each in Kafka's iteration order): deletes first ("we might
    subsequently create new partitions with the same names"), then leaders, then followers,
    then shutdownIdleFetcherThreads if any partition became leader or follower."""
    for tp in changes.deletes:   # stopPartitions(deleteLocalLog = true)
        rm.stop_replica(ctx, tp, delete=True)
    if not changes.leaders and not changes.followers:
        return
    if changes.leaders:
        apply_local_leaders_delta(rm, ctx, changes.leaders)
    if changes.followers:
        apply_local_followers_delta(rm, ctx, changes.followers)
    ReplicaFetcherManager(ctx).shutdown_idle_fetcher_threads()


def apply_local_leaders_delta(rm: ReplicaManager, ctx: ReplicaManagerContext,
                              local_leaders: dict) -> None:
    """applyLocalLeadersDelta: the fetchers of every new or changed leader removed first, then
    each partition (made if new) becomes leader (Partition.makeLeader)."""
    ReplicaFetcherManager(ctx).remove_fetcher_for_partitions(local_leaders)
    for st in local_leaders.values():
        part = get_or_create_partition(rm, ctx, st, kraft=True)
        if part is not None:
            rm.make_leader(ctx, part, st, True)


def apply_local_followers_delta(rm: ReplicaManager, ctx: ReplicaManagerContext,
                                local_followers: dict) -> None:
    """applyLocalFollowersDelta: every partition (made if new) becomes follower
    (Partition.makeFollower, always: a replica with no leader steps down too); the ones with a
    new leader epoch restart fetching -- their fetchers removed, then added in one
    addFetcherForPartitions from ReplicaManager.initialFetchOffset (each thread then runs once),
    then their delayed produces and fetches completed -- and, in a controlled shutdown, the ones
    with no leader or without this broker in the ISR stop fetching (stopPartitions,
    deleteLocalLog = false)."""
    followers = LocalFollowers([], [])
    for st in local_followers.values():
        part = get_or_create_partition(rm, ctx, st, kraft=True)
        if part is None:
            continue
        change = become_follower(rm, ctx, part, st, True)
        if change is None:
            continue
        if change.stop:
            followers.to_stop.append((part, change.was_leader))
        else:
            followers.to_start.append((part, st, change.was_leader))
    manager = ReplicaFetcherManager(ctx)
    if followers.to_start:
        manager.remove_fetcher_for_partitions([p.tp for p, _st, _w in followers.to_start])
        manager.add_fetch_states({
            part.tp: (st.leader, rm.initial_fetch_state(ctx, part, st.leader_epoch))
            for part, st, _was_leader in followers.to_start if st.leader >= 0})
        for part, _st, was_leader in followers.to_start:
            complete_delayed_requests(rm, ctx, part.tp, was_leader)
    if followers.to_stop:
        manager.remove_fetcher_for_partitions([p.tp for p, _w in followers.to_stop])
        for part, was_leader in followers.to_stop:
            complete_delayed_requests(rm, ctx, part.tp, was_leader)


def complete_delayed_requests(rm: ReplicaManager, ctx: ReplicaManagerContext, tp,
                              was_leader: bool) -> None:
    """completeDelayedFetchOrProduceRequests for a partition that became follower: the
    produces and fetches waiting on it as leader fail; a consumer fetch parked at it as
    follower (KIP-392) is tried again -- fenced by the new leader epoch, it answers
    FENCED_LEADER_EPOCH."""
    if was_leader:
        rm.fail_waiting(ctx, tp)
    else:
        rm.wake_consumer_fetches(ctx, tp)


def find_stray_replicas(broker_id: int, request, logs) -> list[tuple[str, int]]:
    """LogManager.findStrayReplicas (3.7-3.9, LogManager.scala:1652@3.9.0-rc3): the partitions
    of ``logs`` a full LeaderAndIsr (``request.type`` FULL; an incremental one is a
    RuntimeError) does not list, or lists with another topic id, in the order of ``logs``. A log
    without a topic id is a RuntimeError (KAFKA-21022 would make it stray; in no release).
    ``broker_id`` is Kafka's argument, unused there too."""
    if request.type != LEADER_AND_ISR_TYPE_FULL:
        raise RuntimeError("Cannot use incremental LeaderAndIsrRequest to find strays.")
    listed = {(st.topic, st.partition): request.topic_id(st.topic)
              for st in request.partition_states}
    strays = []
    for log in logs:
        if log.topic_id is None:
            raise RuntimeError(f"The log dir {log.topic}-{log.partition} does not have a topic "
                               "ID, which is not allowed when running in KRaft mode.")
        tp = (log.topic, log.partition)
        if tp not in listed or listed[tp] != log.topic_id:
            strays.append(tp)
    return strays
