"""``KafkaController`` in ZooKeeper mode: partition state, elections, AlterPartition, shutdown.

The controller runs inside one broker (``ctx``). It owns the partition state znodes
(``/brokers/topics/<t>/partitions/<p>/state``) and tells brokers what to do with LeaderAndIsr and
UpdateMetadata requests (fact sheet §7a, §8). Elections follow PartitionStateMachine's strategies:
offline (first live ISR replica in assignment order, else unclean if the topic allows it),
controlled shutdown, preferred. Elections read the state znode from ZooKeeper, and one that finds
no leader writes and sends nothing. Every leader change writes ``leader_epoch + 1``; a dead
replica's OfflineReplica transition (ReplicaStateMachine) takes it out of the ISR with an epoch
bump too, but never empties the ISR (a dead leader leaves leader -1). A new partition with no
online replica, or whose state znode exists, stays uninitialised (NewPartition) until a broker
change retries it. Writes are conditional on the zkVersion read and fenced by the controller
epoch: a controller that lost ``/controller`` can no longer change anything.
Controlled shutdown follows doControlledShutdown (leaders elected away, followed partitions get
StopReplica and OfflineReplica); partition reassignment follows KIP-455's onPartitionReassignment
(adding/removing replicas in the topic znode, completed once the target replicas are in sync).
"""

from __future__ import annotations

import json

from kafkasim.control.controller_context import ControllerContext, ReplicaAssignment
from kafkasim.control.kraft.reassignment import NO_REASSIGNMENT_IN_PROGRESS_MESSAGE
from kafkasim.control.kraft.records import LeaderRecoveryState
from kafkasim.control.state_machines import (
    NewPartition,
    NewReplica,
    OfflinePartition,
    OfflineReplica,
    OnlinePartition,
    OnlineReplica,
    PartitionAndReplica,
)
from kafkasim.control.zookeeper import (
    BadVersion,
    ZooKeeper,
    partition_state_json,
    partition_state_path,
)
from kafkasim.core import errors as E
from kafkasim.core import events as ev
from kafkasim.core.messages import (
    UNKNOWN_BROKER_EPOCH,
    ZERO_UUID,
    AlterPartitionRequest,
    AlterPartitionResponse,
    ControlledShutdownResponse,
    LeaderAndIsrRequest,
    PartitionState,
    StopReplicaRequest,
    UpdateMetadataRequest,
    new_isr_broker_ids,
)

# org.apache.kafka.common.protocol.Errors used by AlterPartitionReassignments (KIP-455)
INVALID_REPLICA_ASSIGNMENT = E.INVALID_REPLICA_ASSIGNMENT
NO_REASSIGNMENT_IN_PROGRESS = E.NO_REASSIGNMENT_IN_PROGRESS


class ControllerMovedError(RuntimeError):
    """Kafka's ControllerMovedException: another broker holds a newer controller epoch."""


class KafkaController:
    __slots__ = ("broker_id", "controller_epoch", "context")

    def __init__(self, broker_id: int, controller_epoch: int) -> None:
        self.broker_id = broker_id
        self.controller_epoch = controller_epoch
        self.context = ControllerContext()

    # -- ZooKeeper access, fenced by the controller epoch ----------------------------------------
    def _check_epoch(self, zk: ZooKeeper) -> None:
        node = zk.get("/controller_epoch")
        if node is None or int(node.data) != self.controller_epoch:
            raise ControllerMovedError(
                f"controller epoch {self.controller_epoch} is stale (ZooKeeper has "
                f"{node.data if node else 'none'})")

    def _online(self) -> list[int]:
        """ControllerContext.liveBrokerIds (isReplicaOnline): live brokers not in controlled
        shutdown."""
        return self.context.live_broker_ids()

    @staticmethod
    def _read_state(zk: ZooKeeper, tp) -> tuple | None:
        """getTopicPartitionStatesRaw + TopicPartitionStateZNode.decode: (leader, leader epoch,
        ISR, zkVersion, controller epoch, leader recovery state) as ZooKeeper holds it (no
        ``leader_recovery_state`` field: RECOVERED), None on NONODE. The controller's cache is
        not touched."""
        node = zk.get(partition_state_path(*tp))
        if node is None:
            return None
        d = node.json()
        return (d["leader"], d["leader_epoch"], tuple(d["isr"]), node.version,
                d["controller_epoch"],
                d.get("leader_recovery_state", LeaderRecoveryState.RECOVERED))

    def _refresh(self, zk: ZooKeeper, tp) -> tuple[int, int, tuple[int, ...], int] | None:
        """Read the state znode into the cache (putPartitionLeadershipInfo); without a znode the
        cached leadership info, None if there is none."""
        st = self._read_state(zk, tp)
        if st is None:
            return self.context.states.get(tp)
        self._cache(tp, st[:4], st[5])
        return st[:4]

    def _cache(self, tp, state: tuple, recovery: int) -> None:
        """putPartitionLeadershipInfo: the cached (leader, leader epoch, ISR, zkVersion) and
        leader recovery state."""
        self.context.states[tp] = state
        if recovery == LeaderRecoveryState.RECOVERING:
            self.context.recovering.add(tp)
        else:
            self.context.recovering.discard(tp)

    def leader_recovery_state(self, tp) -> int:
        """The cached LeaderAndIsr's leaderRecoveryState (KIP-704): RECOVERING or RECOVERED."""
        return LeaderRecoveryState.RECOVERING if tp in self.context.recovering \
            else LeaderRecoveryState.RECOVERED

    def _write(self, ctx, zk: ZooKeeper, tp, leader: int, epoch: int, isr, version: int,
               recovery: int | None = None) -> None:
        """updateLeaderAndIsr: a write conditional on the zkVersion read (BadVersion when a
        pre-2.7 leader changed the ISR meanwhile: the caller reads again and retries) and fenced
        by the controller epoch (ControllerMovedError). ``recovery``: the leader recovery state
        to write; None keeps the cached one (LeaderAndIsr.newLeaderAndIsr / newEpoch)."""
        self._check_epoch(zk)
        if recovery is None:
            recovery = self.leader_recovery_state(tp)
        path = partition_state_path(*tp)
        data = partition_state_json(leader, epoch, isr, self.controller_epoch, recovery)
        version = zk.set(path, data, version)
        self._cache(tp, (leader, epoch, tuple(isr), version), recovery)

    # -- requests to brokers (ControllerBrokerRequestBatch) -------------------------------------
    def _state(self, tp, with_offline_replicas: bool = False,
               update_metadata: bool = False) -> PartitionState:
        """A partition's state in a request: LeaderAndIsr's carries the reassignment's adding
        and removing replicas (v3+, 2.4); UpdateMetadata's (``update_metadata``) does not, and
        ``with_offline_replicas`` names the replicas not isReplicaOnline
        (addUpdateMetadataRequestForBrokers)."""
        cc = self.context
        leader, epoch, isr, version = cc.states[tp]
        replicas = cc.assignments[tp]
        offline = tuple(r for r in replicas if not cc.is_replica_online(r)) \
            if with_offline_replicas else ()
        adding = () if update_metadata else cc.adding.get(tp, ())
        removing = () if update_metadata else cc.removing.get(tp, ())
        return PartitionState(tp[0], tp[1], self.controller_epoch, leader, epoch, isr, version,
                              replicas, self.leader_recovery_state(tp), offline, adding,
                              removing)

    def broker_epoch_for(self, ctx, broker_id: int) -> int:
        """The broker epoch a control request to ``broker_id`` carries (KIP-380, 2.2+): the
        controller's view, ControllerContext.liveBrokerIdAndEpochs; before 2.2 none (-1)."""
        if not ctx.rules.controller.control_requests_carry_broker_epoch:
            return UNKNOWN_BROKER_EPOCH
        return self.context.broker_epochs.get(broker_id, UNKNOWN_BROKER_EPOCH)

    def stop_replica_epochs(self, ctx, tps) -> tuple[int, ...]:
        """The leader epochs a StopReplica for ``tps`` carries (KIP-570, 2.6+), read as
        addStopReplicaRequestForBrokers reads them: when the request is added, before the
        state change that adds it bumps the epoch (OfflineReplica). Before 2.6 none (``()``)."""
        if not ctx.rules.fetch.stop_replica_checks_leader_epoch:
            return ()
        return tuple(self.context.leader_epoch(tp) for tp in tps)

    def send_stop_replica(self, ctx, broker_id: int, tps, delete: bool,
                          epochs: tuple[int, ...] | None = None) -> None:
        """A StopReplica for ``tps`` to ``broker_id`` (deletePartition = ``delete``), with the
        partitions' leader epochs ``epochs`` (read now when not given: ``stop_replica_epochs``)."""
        tps = tuple(tps)
        if epochs is None:
            epochs = self.stop_replica_epochs(ctx, tps)
        ctx.send(broker_id, StopReplicaRequest(self.broker_id, self.controller_epoch, tps,
                                               delete, self.broker_epoch_for(ctx, broker_id),
                                               epochs))

    def send_leader_and_isr(self, ctx, tps, only: list[int] | None = None) -> None:
        """One LeaderAndIsr per live replica broker, with the states of its partitions."""
        self._send_leader_and_isr_to(ctx, {
            tp: [b for b in self.context.assignments[tp] if only is None or b in only]
            for tp in tps})

    def _send_leader_and_isr_to(self, ctx, recipients: dict) -> None:
        """addLeaderAndIsrRequestForBrokers per partition, then sendLeaderAndIsrRequest: one
        request per broker, only to live (or shutting-down) brokers; partitions without
        leadership info are skipped."""
        by_broker: dict[int, list[PartitionState]] = {}
        live = self.context.live_brokers
        for tp, brokers in recipients.items():
            if tp not in self.context.states:
                continue
            st = self._state(tp)
            for b in dict.fromkeys(brokers):
                if b in live:
                    by_broker.setdefault(b, []).append(st)
        with_ids = ctx.rules.controller.zk_topic_ids
        for b in sorted(by_broker):
            states = tuple(by_broker[b])
            ctx.send(b, LeaderAndIsrRequest(
                self.broker_id, self.controller_epoch, states, tuple(live),
                self.broker_epoch_for(ctx, b),
                request_topic_ids(self.context, states) if with_ids else ()))

    def send_update_metadata(self, ctx, tps) -> None:
        """addUpdateMetadataRequestForBrokers(liveOrShuttingDownBrokerIds, tps): partitions
        without leadership info are left out; the request goes out all the same. Since 1.0
        each partition names its offline replicas."""
        offline = ctx.rules.controller.update_metadata_offline_replicas
        states = tuple(self._state(tp, offline, update_metadata=True)
                       for tp in tps if tp in self.context.states)
        topic_ids = request_topic_ids(self.context, states) \
            if ctx.rules.controller.zk_topic_ids else ()
        for b in self.context.live_brokers:
            ctx.send(b, UpdateMetadataRequest(self.broker_id, self.controller_epoch, states,
                                              tuple(self.context.live_brokers),
                                              self.broker_epoch_for(ctx, b), topic_ids))

    def _send_state_changes(self, ctx, recipients: dict) -> None:
        """sendRequestsToBrokers after elections: LeaderAndIsr to each partition's recipients,
        UpdateMetadata for them to every broker."""
        if recipients:
            self._send_leader_and_isr_to(ctx, recipients)
            self.send_update_metadata(ctx, list(recipients))

    # -- failover ---------------------------------------------------------------------------
    def on_controller_failover(self, ctx, zk: ZooKeeper) -> None:
        """onControllerFailover: read ZooKeeper, handle brokers that died meanwhile, resend."""
        cc = self.context
        cc.live_brokers = sorted(int(b) for b in zk.children("/brokers/ids"))
        cc.broker_epochs = {b: zk.get(f"/brokers/ids/{b}").czxid for b in cc.live_brokers}
        cc.assignments.clear()
        cc.states.clear()
        cc.adding.clear()
        cc.removing.clear()
        cc.reassigning.clear()
        cc.offline.clear()
        cc.recovering.clear()
        cc.partition_states.clear()
        cc.replica_states.clear()
        cc.topic_ids.clear()
        cc.topic_names.clear()
        zk.data_watches.clear()   # the old controller's handlers (re-registered on resume)
        for topic in zk.children("/brokers/topics"):
            znode = zk.get(f"/brokers/topics/{topic}").json()
            process_topic_ids(cc, topic, znode)
            assignment = znode["partitions"]
            for p in sorted(assignment, key=int):
                tp = (topic, int(p))
                cc.assignments[tp] = tuple(assignment[p])
                ar = tuple(znode.get("adding_replicas", {}).get(p, ()))
                rr = tuple(znode.get("removing_replicas", {}).get(p, ()))
                if ar or rr:
                    cc.adding[tp], cc.removing[tp] = ar, rr
                    cc.reassigning.append(tp)
                if zk.exists(partition_state_path(topic, int(p))):
                    self._refresh(zk, tp)
        tps = list(cc.states)
        self.send_update_metadata(ctx, tps)
        if tps:
            self.send_leader_and_isr(ctx, tps)
        cc.initialize_replica_state()   # replicaStateMachine.startup
        if ctx.rules.controller.failover_takes_dead_replicas_offline:
            # replicaStateMachine.startup (2.3+): the replicas on brokers that are not live go
            # OfflineReplica
            for b in sorted({r for reps in cc.assignments.values() for r in reps
                             if r not in cc.live_brokers}):
                self.offline_replica(ctx, zk, b, [tp for tp, reps in cc.assignments.items()
                                                  if b in reps], reason="controller failover")
        # partitionStateMachine.startup: initializePartitionState (a partition whose leader is
        # not online is OfflinePartition, one without leadership info NewPartition), then
        # triggerOnlinePartitionStateChange
        cc.initialize_partition_state()
        self.trigger_online_partition_state_change(ctx, zk)
        # initializePartitionReassignments: resume every reassignment found in ZooKeeper
        for tp in list(cc.reassigning):
            if tp in cc.states:
                self.on_partition_reassignment(ctx, zk, tp,
                                               cc.partition_full_replica_assignment(tp))
        if ctx.config["auto.leader.rebalance.enable"]:
            ctx.schedule_controller_timer(5000, self.controller_epoch, "auto_rebalance")

    def on_resignation(self) -> None:
        """onControllerResignation: this controller object is dropped by its broker; its
        in-memory context goes with it (nothing to undo in the simulation)."""

    # -- broker changes ----------------------------------------------------------------------
    def on_broker_change(self, ctx, zk: ZooKeeper) -> None:
        """BrokerChange watch: onBrokerStartup for new (or bounced) brokers, onBrokerFailure for
        the ones whose /brokers/ids znode vanished."""
        cc = self.context
        now_live = sorted(int(b) for b in zk.children("/brokers/ids"))
        epochs = {b: zk.get(f"/brokers/ids/{b}").czxid for b in now_live}
        dead = [b for b in cc.live_brokers if b not in now_live]
        restarted = [b for b in now_live if b in cc.broker_epochs and b not in dead
                     and cc.broker_epochs[b] != epochs[b]]
        # before KIP-380 (2.2) a restarted broker was only seen as (re)started, not as failed
        bounced = restarted if ctx.rules.controller.controller_detects_bounced_brokers else []
        new = [b for b in now_live if b not in cc.live_brokers] + restarted
        if dead or bounced:
            ctx.trace("controller", detail=ev.BrokersFailed(tuple(sorted(dead + bounced))))
            cc.live_brokers = [b for b in cc.live_brokers if b not in dead and b not in bounced]
            cc.shutting_down = [b for b in cc.shutting_down if b in cc.live_brokers]
            self.on_broker_failure(ctx, zk, dead + bounced)
        if new:
            ctx.trace("controller", detail=ev.BrokersStarted(tuple(sorted(new))))
            cc.live_brokers = sorted({*cc.live_brokers, *new})
            cc.broker_epochs = epochs
            cc.put_replica_states([r for r in cc.replicas_for_partition(cc.assignments)
                                   if r.replica in new], OnlineReplica)   # onBrokerStartup
            self.send_update_metadata(ctx, list(cc.states))
            # replicas OnlineReplica: LeaderAndIsr for the partitions with leadership info
            theirs = [tp for tp, reps in cc.assignments.items()
                      if tp in cc.states and any(b in reps for b in new)]
            if theirs:
                self.send_leader_and_isr(ctx, theirs, only=new)
            self.trigger_online_partition_state_change(ctx, zk)
            # onBrokerStartup -> maybeResumeReassignments: target replicas on a new broker
            for tp in list(cc.reassigning):
                full = cc.partition_full_replica_assignment(tp)
                if any(b in new for b in full.target_replicas):
                    self.on_partition_reassignment(ctx, zk, tp, full)
        cc.broker_epochs = epochs

    def on_broker_failure(self, ctx, zk: ZooKeeper, dead: list[int]) -> None:
        """onBrokerFailure -> onReplicasBecomeOffline: partitions whose leader is not online go
        OfflinePartition and, with the new ones, through triggerOnlinePartitionStateChange; then
        each dead broker's replicas go OfflineReplica (doRemoveReplicasFromIsr), one broker after
        the other (sorted: Kafka groups them in hash order). If no replica went offline and no
        election succeeded, an UpdateMetadata without partitions tells the brokers."""
        cc = self.context
        self._mark_offline_leaders()
        elected = self.trigger_online_partition_state_change(ctx, zk)
        offline_replicas = False
        for b in sorted(dead):
            tps = [tp for tp, reps in cc.assignments.items() if b in reps]
            if tps:
                offline_replicas = True
                self.offline_replica(ctx, zk, b, tps, reason="broker failure")
        if not offline_replicas and not elected:
            self.send_update_metadata(ctx, [])

    def _mark_offline_leaders(self) -> None:
        """partitionsWithOfflineLeader -> OfflinePartition: the cached leader is not online."""
        cc = self.context
        online = self._online()
        for tp, st in cc.states.items():
            if st[0] not in online:
                cc.put_partition_state(tp, OfflinePartition)

    def trigger_online_partition_state_change(self, ctx, zk: ZooKeeper,
                                              topic: str | None = None) -> list:
        """triggerOnlinePartitionStateChange (of every topic, or of ``topic``): NewPartition and
        OfflinePartition partitions -> OnlinePartition with
        OfflinePartitionLeaderElectionStrategy(false); returns the partitions that came
        online."""
        cc = self.context
        tps = [tp for tp in cc.assignments if (topic is None or tp[0] == topic)
               and (tp not in cc.states or tp in cc.offline)]
        return self.handle_state_changes(ctx, zk, tps, "offline") if tps else []

    def on_unclean_leader_election_enable(self, ctx, zk: ZooKeeper,
                                          topic: str | None = None) -> None:
        """processUncleanLeaderElectionEnable (the brokers' default turned on, 2.0+) and
        processTopicUncleanLeaderElectionEnable (a topic's override is on, 2.1+): the offline
        partitions (of ``topic``) go through the offline election again, which now reads the
        new config and may elect an out-of-sync replica."""
        self.trigger_online_partition_state_change(ctx, zk, topic)

    # -- elections -------------------------------------------------------------------------------
    def _elect(self, ctx, zk: ZooKeeper, tp, strategy: str) -> tuple[int, ...] | None:
        """doElectLeaderForPartitions for one partition: read the state znode from ZooKeeper (not
        the cache: before 2.7 a leader writes its own ISR), run the strategy, write
        ``newLeaderAndIsr`` conditionally on the zkVersion read (keeping the leader recovery state
        read; an unclean election, a leader from outside the ISR, writes
        ``newRecoveringLeaderAndIsr`` since 3.2, KIP-704); on BadVersion read and elect again
        (electLeaderForPartitions). Returns the LeaderAndIsr recipients
        (ElectionResult.liveReplicas); None when the election fails (StateChangeFailedException:
        no state znode, one written by a newer controller, or no leader): nothing written."""
        while True:
            st = self._read_state(zk, tp)
            if st is None or st[4] > self.controller_epoch:
                return None
            elected = self._leader_for(ctx, tp, strategy, st[2])
            if elected is None:
                return None
            new_leader, new_isr, unclean, recipients = elected
            recovery = LeaderRecoveryState.RECOVERING \
                if unclean and ctx.rules.elections.zk_leader_recovery_state else st[5]
            try:
                self._write(ctx, zk, tp, new_leader, st[1] + 1, new_isr, st[3], recovery)
            except BadVersion:
                continue
            self.context.put_partition_state(tp, OnlinePartition)
            ctx.trace("controller", tp[0], tp[1],
                      ev.LeaderElection(strategy, unclean, st[0], new_leader, tuple(new_isr),
                                        st[1] + 1))
            return tuple(recipients)

    def _leader_for(self, ctx, tp, strategy: str, isr: tuple[int, ...]) -> tuple | None:
        """Election.leaderFor{Offline,Reassign,PreferredReplica,ControlledShutdown}: (new leader,
        new ISR, unclean, LeaderAndIsr recipients), None if no leader. The election orders are
        kafkasim.core.rules' PartitionLeaderElectionAlgorithms."""
        cc = self.context
        replicas = cc.assignments[tp]
        online = self._online()
        rb = ctx.rulebook
        if strategy in ("offline", "unclean"):
            return self._leader_for_offline(ctx, tp, strategy, isr, online)
        if strategy == "preferred":
            # elects the preferred replica even when it already leads: a new leader epoch and a
            # LeaderAndIsr all the same (PartitionStateMachineTest.testOnlinePartitionToOnline
            # Transition); callers that must not bump the epoch skip such partitions first
            # (elect_leaders, auto_rebalance). Recipients: the assignment
            leader = rb.preferred_replica_partition_leader_election(replicas, isr, online)
            return None if leader is None else (leader, isr, False, replicas)
        if strategy == "reassign":
            # the ISR is kept (LeaderAndIsr.newLeader); recipients: the target replicas
            target = cc.partition_full_replica_assignment(tp).target_replicas
            leader = rb.reassign_partition_leader_election(target, isr, online)
            return None if leader is None else (leader, isr, False, target)
        if strategy == "controlled_shutdown":
            return self._leader_for_controlled_shutdown(ctx, tp, isr)
        raise ValueError(f"unknown election strategy {strategy!r}")

    def _leader_for_controlled_shutdown(self, ctx, tp, isr) -> tuple | None:
        """Election.leaderForControlledShutdown (includeShuttingDownBrokers): the new ISR drops
        every shutting-down broker. Recipients: the live or shutting-down replicas; 1.1-2.0
        (KAFKA-5642 until KAFKA-7482) the online replicas only, without the shutting-down
        broker."""
        cc = self.context
        replicas = cc.assignments[tp]
        sd = cc.shutting_down
        leader = ctx.rulebook.controlled_shutdown_partition_leader_election(
            replicas, isr, cc.live_brokers, sd)
        if leader is None:
            return None
        reachable = self._online() \
            if ctx.rules.controller.controlled_shutdown_skips_shutting_down_broker \
            else cc.live_brokers
        return (leader, tuple(r for r in isr if r not in sd), False,
                tuple(r for r in replicas if r in reachable))

    def _leader_for_offline(self, ctx, tp, strategy: str, isr, online) -> tuple | None:
        """collectUncleanLeaderElectionState + Election.leaderForOffline: the first online ISR
        member in assignment order, else (OfflinePartitionLeaderElectionStrategy(true), or the
        topic's unclean.leader.election.enable) the first online replica, alone in the ISR
        (offlinePartitionLeaderElection marks UncleanLeaderElectionsPerSec). Recipients: the
        online replicas (a broker in controlled shutdown is not online)."""
        replicas = self.context.assignments[tp]
        allow = strategy == "unclean" or \
            ctx.topic_config(tp[0])["unclean.leader.election.enable"]
        leader, unclean = ctx.rulebook.offline_partition_leader_election(
            replicas, isr, online, allow)
        if leader is None:
            return None
        if unclean:
            ctx.mark_meter("UncleanLeaderElectionsPerSec")
            self.context.stats.unclean_leader_election_rate.mark()
        new_isr = (leader,) if unclean else tuple(r for r in isr if r in online)
        return leader, new_isr, unclean, tuple(r for r in replicas if r in online)

    def elect_leaders(self, ctx, zk: ZooKeeper, tps, election_type: str) -> dict:
        """kafka-leader-election --election-type preferred|unclean (KIP-460)."""
        results = {}
        elected = {}
        for tp in tps:
            if tp not in self.context.states:
                results[tp] = E.UNKNOWN_TOPIC_OR_PARTITION
                continue
            self._refresh(zk, tp)
            leader = self.context.states[tp][0]
            if election_type == "unclean" and leader >= 0 and leader in self.context.live_brokers:
                results[tp] = "ELECTION_NOT_NEEDED"
                continue
            if election_type == "preferred" and self.context.assignments[tp][0] == leader:
                # processReplicaLeaderElection: partitions whose preferred replica already
                # leads are not elected (alreadyValidLeader, 2.3+)
                results[tp] = "ELECTION_NOT_NEEDED"
                continue
            recipients = self._elect(ctx, zk, tp, election_type)
            if recipients is not None:
                elected[tp] = recipients
                results[tp] = E.NONE
            else:
                results[tp] = "PREFERRED_LEADER_NOT_AVAILABLE"
        self._send_state_changes(ctx, elected)
        return results

    def process_zk_preferred_replica_election(self, ctx, zk: ZooKeeper, tps) -> dict:
        """processReplicaLeaderElection(ZkTriggered): the partitions an admin wrote to
        /admin/preferred_replica_election (kafkasim keeps no such znode, the caller hands its
        content over) get a preferred election, then removePartitionsFromPreferredReplicaElection
        deletes the znode, conditionally on the controller epoch's zkVersion (a controller that
        moved fails there with ControllerMovedException)."""
        results = self.elect_leaders(ctx, zk, tps, "preferred")
        self._check_epoch(zk)
        return results

    def handle_state_changes(self, ctx, zk: ZooKeeper, tps, strategy: str,
                             new: list | None = None) -> list:
        """PartitionStateMachine.handleStateChanges(partitions, OnlinePartition, strategy):
        partitions without leadership info (NewPartition) are initialized
        (initializeLeaderAndIsrForPartitions), the others go through the election strategy
        (``"preferred"``, ``"offline"``, ``"unclean"``, ``"reassign"``,
        ``"controlled_shutdown"``); one batch of LeaderAndIsr (to each partition's recipients)
        and UpdateMetadata follows. Returns the partitions now online, in ``tps`` order.
        ``new``: the partitions to initialize when the caller knows them (the NewPartition
        ones of ZkPartitionStateMachine), by default those without leadership info."""
        cc = self.context
        if new is None:
            new = [tp for tp in tps if tp not in cc.states]
        recipients = self._initialize_leader_and_isr_for_partitions(ctx, zk, new)
        for tp in tps:
            if tp not in new:
                elected = self._elect(ctx, zk, tp, strategy)
                if elected is not None:
                    recipients[tp] = elected
        self._send_state_changes(ctx, recipients)
        return [tp for tp in tps if tp in recipients]

    def auto_rebalance(self, ctx, zk: ZooKeeper) -> None:
        """checkAndTriggerAutoLeaderRebalance: per preferred broker, imbalance > percentage."""
        cc = self.context
        pct = ctx.config["leader.imbalance.per.broker.percentage"]
        by_pref: dict[int, list] = {}
        for tp, reps in cc.assignments.items():
            by_pref.setdefault(reps[0], []).append(tp)
        todo = []
        for b in sorted(by_pref):
            tps = by_pref[b]
            # topicsNotInPreferredReplica: partitions with leadership info led by another broker
            not_led = [tp for tp in tps if tp in cc.states and cc.states[tp][0] != b]
            if tps and len(not_led) / len(tps) > pct / 100.0:
                todo += [tp for tp in not_led if b in cc.live_brokers
                         and b in cc.states[tp][2]]
        if todo:
            ctx.trace("controller", detail=ev.AutoLeaderRebalance(len(todo)))
            self.elect_leaders(ctx, zk, todo, "preferred")

    # -- controlled shutdown ---------------------------------------------------------------------
    def controlled_shutdown(self, ctx, zk: ZooKeeper, src: int, broker_id: int,
                            broker_epoch: int = -1) -> None:
        """KafkaController.doControlledShutdown (ZK mode, 0.8.2 .. 3.9).

        Only partitions with more than one assigned replica and a leader are acted on. Those the
        broker leads get a new leader from ControlledShutdownPartitionLeaderElectionStrategy (the
        new ISR drops every shutting-down broker). For those it only follows, the broker gets a
        StopReplica (deletePartition=false) and its replica goes to OfflineReplica, which
        removes it from the ISR with a leader-epoch bump and sends LeaderAndIsr to the other
        replicas. The answer lists the RF>1 partitions it still leads
        (ControllerContext.partitionLeadersOnBroker)."""
        cc = self.context
        if ctx.rules.controller.controlled_shutdown_checks_broker_epoch and broker_epoch >= 0 and \
                broker_epoch < cc.broker_epochs.get(broker_id, -1):
            # KIP-380: a request from an older incarnation of the broker
            ctx.send(src, ControlledShutdownResponse("STALE_BROKER_EPOCH"))
            return
        if broker_id not in cc.live_brokers:
            ctx.send(src, ControlledShutdownResponse("BROKER_NOT_AVAILABLE"))
            return
        if broker_id not in cc.shutting_down:
            cc.shutting_down.append(broker_id)
        led, followed = [], []
        for tp, reps in cc.assignments.items():
            if broker_id not in reps or len(reps) < 2 or tp not in cc.states:
                continue
            leader = self._refresh(zk, tp)[0]
            (led if leader == broker_id else followed).append(tp)
        self.handle_state_changes(ctx, zk, led, "controlled_shutdown")
        if followed:
            self.send_stop_replica(ctx, broker_id, followed, False)
            self.offline_replica(ctx, zk, broker_id, followed)
        remaining = tuple(tp for tp, st in cc.states.items()
                          if st[0] == broker_id and len(cc.assignments[tp]) > 1)
        ctx.send(src, ControlledShutdownResponse(E.NONE, remaining))

    def offline_replica(self, ctx, zk: ZooKeeper, replica: int, tps, reason: str =
                        "controlled shutdown") -> None:
        """ReplicaStateMachine -> OfflineReplica (doRemoveReplicasFromIsr): where the replica is
        in the ISR (as ZooKeeper holds it) it leaves it (an ISR of one is kept as it is; the
        leader becomes -1 if it led) with leader_epoch + 1; the other replicas get LeaderAndIsr
        for every partition with leadership info, every broker UpdateMetadata (a partition
        without leadership info only that; before 2.3, KAFKA-3143, nothing), and the replica, if
        live or shutting down, StopReplica (deletePartition=false)."""
        cc = self.context
        epochs = self.stop_replica_epochs(ctx, tps)   # before the ISR removal bumps them
        with_info = [tp for tp in tps if self._remove_replica_from_isr(ctx, zk, tp, replica,
                                                                        reason)]
        self._send_leader_and_isr_to(ctx, {
            tp: [b for b in cc.assignments[tp] if b != replica] for tp in with_info})
        if ctx.rules.controller.offline_replica_updates_metadata_without_leader:
            self.send_update_metadata(ctx, tps)
        elif with_info:   # before 2.3 only addLeaderAndIsrRequestForBrokers added one
            self.send_update_metadata(ctx, with_info)
        if replica in cc.live_brokers:
            self.send_stop_replica(ctx, replica, tps, False, epochs)
        cc.put_replica_states([PartitionAndReplica(tp, replica) for tp in tps], OfflineReplica)

    def _remove_replica_from_isr(self, ctx, zk: ZooKeeper, tp, replica: int,
                                 reason: str) -> bool:
        """doRemoveReplicasFromIsr for one partition: ``newLeaderAndIsr(leader or NoLeader,
        isr - replica unless it is the last)``, written conditionally on the zkVersion read
        (read again and retried on BadVersion). False if the partition has no leadership
        info."""
        while True:
            st = self._refresh(zk, tp)
            if st is None:
                return False
            leader, epoch, isr, version = st
            if replica not in isr:
                return True
            new_leader = -1 if leader == replica else leader
            new_isr = isr if len(isr) == 1 else tuple(r for r in isr if r != replica)
            try:
                self._write(ctx, zk, tp, new_leader, epoch + 1, new_isr, version)
            except BadVersion:
                continue
            break
        if reason != "broker failure":
            detail = ev.ReplicaOffline(reason, replica, tuple(isr), tuple(new_isr), new_leader,
                                       epoch + 1)
        elif new_leader == leader:
            detail = ev.DeadRemovedFromIsr((replica,), tuple(isr), tuple(new_isr), epoch + 1)
        else:   # the dead replica led and the election found no leader: offline
            detail = ev.PartitionOffline(tuple(new_isr), epoch + 1)
        ctx.trace("controller", tp[0], tp[1], detail)
        return True

    # -- topics -----------------------------------------------------------------------------
    def on_new_topic(self, ctx, zk: ZooKeeper, topic: str) -> None:
        """onNewPartitionCreation: the topic's partitions go NewPartition, then OnlinePartition
        (initializeLeaderAndIsrForPartitions). Partitions this controller already has leadership
        info for are left alone."""
        self._check_epoch(zk)
        znode = zk.get(f"/brokers/topics/{topic}").json()
        assignment = znode["partitions"]
        cc = self.context
        process_topic_ids(cc, topic, znode)
        new = []
        for p in sorted(assignment, key=int):
            tp = (topic, int(p))
            if tp not in cc.states:
                cc.assignments[tp] = tuple(assignment[p])
                cc.put_partition_state_if_not_exists(tp, NewPartition)
                new.append(tp)
        cc.put_replica_states(cc.replicas_for_partition(new), NewReplica)
        self._send_state_changes(ctx, self._initialize_leader_and_isr_for_partitions(ctx, zk, new))
        cc.put_replica_states(cc.replicas_for_partition(new), OnlineReplica)

    def _initialize_leader_and_isr_for_partitions(self, ctx, zk: ZooKeeper, tps) -> dict:
        """initializeLeaderAndIsrForPartitions: the online replicas (isReplicaOnline: not in
        controlled shutdown) form the ISR, the first leads, at leader epoch 0;
        createTopicPartitionStatesRaw creates the state znode. A partition with no online
        replica ("No assigned replica is alive") or whose znode already exists (NODEEXISTS)
        stays NewPartition: nothing written, nothing sent. Returns tp -> LeaderAndIsr recipients
        (the ISR) of the partitions initialized."""
        if tps:
            self._check_epoch(zk)
        online = self._online()
        out = {}
        for tp in tps:
            isr = tuple(r for r in self.context.assignments[tp] if r in online)
            path = partition_state_path(*tp)
            if not isr or zk.exists(path):
                continue
            zk.create(path, partition_state_json(isr[0], 0, isr, self.controller_epoch))
            self._cache(tp, (isr[0], 0, isr, 0), LeaderRecoveryState.RECOVERED)
            self.context.put_partition_state(tp, OnlinePartition)
            out[tp] = isr
            ctx.trace("controller", tp[0], tp[1], ev.NewPartition(isr[0], isr, 0))
        return out

    # -- partition reassignment (KIP-455) -------------------------------------------------------
    def alter_partition_reassignments(self, ctx, zk: ZooKeeper, reassignments) -> dict:
        """processApiPartitionReassignment (ZK controller, 2.4+): validate each target
        (validateReplicas), build the reassignment (maybeBuildReassignment; None cancels; no
        reassignment to cancel: NO_REASSIGNMENT_IN_PROGRESS) and start them
        (maybeTriggerPartitionReassignment). Returns tp -> (error, message)."""
        results = {}
        todo = {}
        for tp, target in reassignments.items():
            err = None if target is None else self.validate_replicas(tp, list(target))
            if err is not None:
                results[tp] = (INVALID_REPLICA_ASSIGNMENT, err)
                continue
            new = self.maybe_build_reassignment(tp, target)
            if new is None:
                # new ApiError(NO_REASSIGNMENT_IN_PROGRESS): the error's default message
                results[tp] = (NO_REASSIGNMENT_IN_PROGRESS, NO_REASSIGNMENT_IN_PROGRESS_MESSAGE)
            else:
                todo[tp] = new
        results.update(self.maybe_trigger_partition_reassignment(ctx, zk, todo))
        return results

    def process_zk_partition_reassignment(self, ctx, zk: ZooKeeper, reassignments) -> dict:
        """processZkPartitionReassignment: the targets an admin wrote to
        /admin/reassign_partitions (``{tp: [replicas]}``; kafkasim keeps no such znode, the
        caller hands its content over). Unlike the API, the targets are not validated: a target
        broker that is down makes a reassignment that waits for it. Returns tp -> (error,
        message)."""
        todo = {tp: self.maybe_build_reassignment(tp, target)
                for tp, target in reassignments.items()}
        return self.maybe_trigger_partition_reassignment(ctx, zk, todo)

    def validate_replicas(self, tp, replicas: list[int]) -> str | None:
        """validateReplicas: the error message of an invalid target (empty, duplicates, a
        negative id, an adding replica on a broker that is not live), None if it is valid."""
        if not replicas:
            return "Empty replica list specified in partition reassignment."
        if len(set(replicas)) != len(replicas):
            return f"Duplicate replica ids in partition reassignment replica list: {replicas}"
        if any(r < 0 for r in replicas):
            return f"Invalid broker id in replica list: {replicas}"
        adding = self.context.partition_full_replica_assignment(tp).reassign_to(
            replicas).adding_replicas
        live = self.context.live_broker_ids()
        if not all(r in live for r in adding):
            return (f"Replica assignment has brokers that are not alive. Replica list: "
                    f"{list(adding)}, live broker list: {list(live)}")
        return None

    def maybe_build_reassignment(self, tp, target) -> ReplicaAssignment | None:
        """maybeBuildReassignment: the current assignment reassigned to ``target``; a None
        target cancels a reassignment in progress (back to the origin replicas) and is None
        when there is none."""
        current = self.context.partition_full_replica_assignment(tp)
        if target is None:
            return current.reassign_to(current.origin_replicas) \
                if current.is_being_reassigned else None
        return current.reassign_to(target)

    def maybe_trigger_partition_reassignment(self, ctx, zk: ZooKeeper, reassignments) -> dict:
        """maybeTriggerPartitionReassignment: onPartitionReassignment for each partition that
        exists; UNKNOWN_TOPIC_OR_PARTITION for the others (kafkasim also answers it for a
        partition without leadership info yet, whose epoch bump Kafka fails on with
        UNKNOWN_SERVER_ERROR). Returns tp -> (error, message), message None with NONE."""
        cc = self.context
        results = {}
        for tp, new in reassignments.items():
            if not cc.partition_replica_assignment(tp) or tp not in cc.states:
                results[tp] = (E.UNKNOWN_TOPIC_OR_PARTITION, "The partition does not exist.")
                continue
            self.on_partition_reassignment(ctx, zk, tp, new)
            results[tp] = (E.NONE, None)   # ApiError.NONE: no message
        return results

    def list_partition_reassignments(self, tps=None) -> dict:
        """processListPartitionReassignments: tp -> ReplicaAssignment of the partitions being
        reassigned (of ``tps``, or all)."""
        cc = self.context
        wanted = cc.reassigning if tps is None else [tp for tp in tps if tp in cc.assignments]
        return {tp: cc.partition_full_replica_assignment(tp) for tp in wanted
                if cc.partition_full_replica_assignment(tp).is_being_reassigned}

    def on_partition_reassignment(self, ctx, zk: ZooKeeper, tp, new: ReplicaAssignment) -> None:
        """KafkaController.onPartitionReassignment (2.4+). U1/U2: write RS = TRS + ORS with
        AR = TRS - ORS and RR = ORS - TRS to the topic znode and memory (U3: stop replicas an
        earlier reassignment added that are no longer wanted). While some target replica is not
        in the ISR (A): bump the leader epoch, send LeaderAndIsr to ORS + AR and start AR as
        NewReplica. Once all of TRS is in the ISR (B): RS = TRS; move the leader into TRS
        (ReassignPartitionLeaderElectionStrategy) or else bump the epoch; RR go OfflineReplica
        (out of the ISR, epoch + 1 each, StopReplica) and NonExistentReplica (StopReplica with
        deletePartition=true); the topic znode gets RS = TRS; UpdateMetadata to every broker."""
        cc = self.context
        self._update_current_reassignment(ctx, zk, tp, new)
        target = new.target_replicas
        if not self._reassignment_complete(zk, tp, new):
            ctx.trace("controller", tp[0], tp[1], ev.ReassignmentStarted(
                new.replicas, new.adding_replicas, new.removing_replicas))
            self._update_leader_epoch_and_send(ctx, zk, tp, new)                      # A1
            for r in new.adding_replicas:                                              # A2
                # NewReplica: LeaderAndIsr to the new replica (if it is alive), UpdateMetadata
                self.send_leader_and_isr(ctx, [tp], only=[r])
                self.send_update_metadata(ctx, [tp])
                cc.put_replica_state(PartitionAndReplica(tp, r), NewReplica)
            return
        ctx.trace("controller", tp[0], tp[1],
                  ev.ReassignmentComplete(tuple(target)))
        completed = ReplicaAssignment(target)
        cc.put_replica_states([PartitionAndReplica(tp, r) for r in new.adding_replicas],
                              OnlineReplica)                                           # B1
        cc.update_partition_full_replica_assignment(tp, completed)                     # B2
        leader = self._refresh(zk, tp)[0]                                             # B3
        if leader not in target or not cc.is_replica_online(leader):
            self.handle_state_changes(ctx, zk, [tp], "reassign")
        else:
            self._update_leader_epoch_and_send(ctx, zk, tp, completed)
        if new.removing_replicas:                                                     # B4, B5
            self._stop_removed_replicas(ctx, zk, tp, new.removing_replicas)
        self._write_assignment(zk, tp[0])                                             # B6
        if tp in cc.reassigning:                                                      # B7
            cc.reassigning.remove(tp)
            zk.data_watches.discard(partition_state_path(*tp))
        self.send_update_metadata(ctx, [tp])                                          # B8

    def maybe_complete_reassignment(self, ctx, zk: ZooKeeper, tp) -> None:
        """maybeCompleteReassignment: an ISR change may complete a reassignment."""
        if tp in self.context.reassigning:
            full = self.context.partition_full_replica_assignment(tp)
            if self._reassignment_complete(zk, tp, full):
                self.on_partition_reassignment(ctx, zk, tp, full)

    def _update_current_reassignment(self, ctx, zk: ZooKeeper, tp,
                                     new: ReplicaAssignment) -> None:
        cc = self.context
        current = cc.partition_full_replica_assignment(tp)
        if current != new:
            cc.update_partition_full_replica_assignment(tp, new)                      # U2
            self._write_assignment(zk, tp[0])                                         # U1
            unneeded = tuple(r for r in current.replicas if r not in new.replicas)    # U3
            if unneeded:
                self._stop_removed_replicas(ctx, zk, tp, unneeded)
        if tp not in cc.reassigning:
            cc.reassigning.append(tp)
        if not ctx.rules.alter_partition.alter_isr:   # PartitionReassignmentIsrChangeHandler (<2.7)
            zk.data_watches.add(partition_state_path(*tp))

    def _reassignment_complete(self, zk: ZooKeeper, tp, full: ReplicaAssignment) -> bool:
        """isReassignmentComplete: nothing to reassign, or every target replica in the ISR (as
        ZooKeeper holds it)."""
        if not full.is_being_reassigned:
            return True
        isr = self._refresh(zk, tp)[2]
        return all(r in isr for r in full.target_replicas)

    def _update_leader_epoch_and_send(self, ctx, zk: ZooKeeper, tp, full) -> None:
        """updateLeaderEpochAndSendRequest: leader_epoch + 1 with the same leader and ISR (so the
        replicas learn the new replica set), LeaderAndIsr to ORS and AR, UpdateMetadata."""
        while True:   # updateLeaderEpoch: read again and retry on BadVersion
            leader, epoch, isr, version = self._refresh(zk, tp)
            try:
                self._write(ctx, zk, tp, leader, epoch + 1, isr, version)
                break
            except BadVersion:
                continue
        ctx.trace("controller", tp[0], tp[1],
                  ev.ReassignmentEpochBump(epoch + 1, full.replicas))
        self.send_leader_and_isr(ctx, [tp])
        self.send_update_metadata(ctx, [tp])

    def _stop_removed_replicas(self, ctx, zk: ZooKeeper, tp, removed) -> None:
        """stopRemovedReplicasOfReassignedPartition: OfflineReplica (out of the ISR, epoch + 1
        for each, LeaderAndIsr to the remaining replicas, StopReplica without delete), then
        ReplicaDeletionStarted (StopReplica with deletePartition=true) and NonExistentReplica."""
        cc = self.context
        epochs = {}   # each removed replica's OfflineReplica StopReplica: the epoch before its bump
        for r in removed:
            epochs[r] = self.stop_replica_epochs(ctx, (tp,))
            self._remove_replica_from_isr(ctx, zk, tp, r, "reassignment")
        live_removed = [r for r in removed if r in cc.live_brokers]
        self.send_leader_and_isr(ctx, [tp], only=[b for b in cc.live_brokers
                                                  if b not in removed])
        self.send_update_metadata(ctx, [tp])
        for r in live_removed:
            self.send_stop_replica(ctx, r, (tp,), False, epochs[r])
        for r in live_removed:
            self.send_stop_replica(ctx, r, (tp,), True)
        for r in removed:   # ReplicaDeletionStarted, ReplicaDeletionSuccessful, NonExistentReplica
            cc.remove_replica_state(PartitionAndReplica(tp, r))

    def _write_assignment(self, zk: ZooKeeper, topic: str) -> None:
        """setTopicAssignmentRaw: the topic znode with partitions, adding_replicas and
        removing_replicas (TopicZNode version 3), fenced by the controller epoch."""
        self._check_epoch(zk)
        cc = self.context
        path = f"/brokers/topics/{topic}"
        data = dict(zk.get(path).json())
        tps = sorted((tp for tp in cc.assignments if tp[0] == topic), key=lambda t: t[1])
        data["partitions"] = {str(p): list(cc.assignments[(t, p)]) for t, p in tps}
        data["adding_replicas"] = {str(p): list(cc.adding[(t, p)]) for t, p in tps
                                   if cc.adding.get((t, p))}
        data["removing_replicas"] = {str(p): list(cc.removing[(t, p)]) for t, p in tps
                                     if cc.removing.get((t, p))}
        zk.set(path, json.dumps(data, separators=(",", ":")))

    # -- AlterPartition (KIP-497) ---------------------------------------------------------------
    def process_alter_partition(self, ctx, zk: ZooKeeper, src: int,
                                req: AlterPartitionRequest) -> None:
        """KafkaController.processAlterPartition (processAlterIsr before 3.2): check the broker
        epoch, then each partition's epochs (and since 3.2 its leader recovery state, KIP-704),
        write ZooKeeper conditionally on the partition epoch, send UpdateMetadata for every
        partition asked about, answer."""
        results = []
        changed = []
        cc = self.context
        if req.broker_id not in cc.live_brokers or \
                cc.broker_epochs.get(req.broker_id) != req.broker_epoch:
            # unknown broker, or a stale broker epoch
            ctx.send(src, AlterPartitionResponse(E.STALE_BROKER_EPOCH, (), req.correlation_id))
            return
        if not _known_recovery_states(ctx, req):
            # LeaderRecoveryState.of throws IllegalArgumentException while the request is read:
            # processAlterPartition answers UNKNOWN_SERVER_ERROR for the whole request
            ctx.send(src, AlterPartitionResponse(E.UNKNOWN_SERVER_ERROR, (), req.correlation_id))
            return
        for i, (topic, partition, leader_epoch, new_isr, partition_epoch) in \
                enumerate(req.partitions):
            tp = (topic, partition)
            cur = cc.states.get(tp)
            if cur is None:
                results.append((topic, partition, E.UNKNOWN_TOPIC_OR_PARTITION, -1, -1, (), -1))
                continue
            new_isr = new_isr_broker_ids(new_isr)   # v3: the epochs are not checked here
            recovery = _requested_recovery_state(ctx, req, i)
            err = self._check_alter_partition(ctx, req.broker_id, leader_epoch, new_isr,
                                              partition_epoch, cur, recovery,
                                              self.leader_recovery_state(tp))
            if err is None:
                # already in the requested state: answer with it (equalsIgnoreZk before 3.3,
                # equalsAllowStalePartitionEpoch since, KAFKA-14144)
                results.append((topic, partition, E.NONE, *cur))
                continue
            if err != E.NONE:
                results.append((topic, partition, err, -1, -1, (), -1))
                continue
            was_recovering = tp in cc.recovering
            written = self._update_leader_and_isr(ctx, zk, src, req, tp,
                                                  (leader_epoch, new_isr, partition_epoch),
                                                  recovery)
            if written is None:
                results.append((topic, partition, E.INVALID_UPDATE_VERSION, -1, -1, (), -1))
                continue
            results.append((topic, partition, E.NONE, *written))
            changed.append(tp)
            ctx.trace("controller", topic, partition,
                      ev.AlterPartitionCommitted(src, tuple(cur[2]), new_isr,
                                                 was_recovering and tp not in cc.recovering))
        ctx.send(src, AlterPartitionResponse(E.NONE, tuple(results), req.correlation_id))
        asked = [(t, p) for t, p, *_ in req.partitions if (t, p) in cc.states]
        if asked:
            # sendUpdateMetadataRequest(liveOrShuttingDownBrokerIds, partitionsToAlter.keySet):
            # every partition asked about, changed or not (2.7+). Kafka queues it on the
            # controller channel before answering; the two travel independently.
            self.send_update_metadata(ctx, asked)
        for tp in changed:   # processAlterPartition -> maybeCompleteReassignment
            self.maybe_complete_reassignment(ctx, zk, tp)

    def _update_leader_and_isr(self, ctx, zk: ZooKeeper, src: int, req: AlterPartitionRequest,
                               tp, proposed: tuple, recovery: int) -> tuple | None:
        """zkClient.updateLeaderAndIsr for one partition of an AlterPartition: a conditional
        write at the request's partition epoch of (leader epoch, ISR, leader recovery state); the
        leader epoch is NOT bumped by an AlterPartition, only the zkVersion. Returns the new
        (leader, leader epoch, ISR, zkVersion), None on BadVersion."""
        leader_epoch, new_isr, partition_epoch = proposed
        try:
            self._check_epoch(zk)
        except ControllerMovedError:
            # processAlterPartition catches the ControllerMovedException of the write
            ctx.send(src, AlterPartitionResponse(E.UNKNOWN_SERVER_ERROR, (), req.correlation_id))
            raise
        data = partition_state_json(req.broker_id, leader_epoch, new_isr, self.controller_epoch,
                                    recovery)
        try:
            new_version = zk.set(partition_state_path(*tp), data, partition_epoch)
        except BadVersion:
            return None
        state = (req.broker_id, leader_epoch, new_isr, new_version)
        self._cache(tp, state, recovery)
        return state

    def _check_alter_partition(self, ctx, broker_id: int, leader_epoch: int, new_isr: tuple,
                               partition_epoch: int, cur: tuple, recovery: int = 0,
                               cur_recovery: int = 0) -> str | None:
        """One partition of an AlterPartition, in KafkaController's order. None: the partition is
        already in the requested state (leader recovery state included); E.NONE: write it; else
        the error."""
        leader, epoch, isr, version = cur
        same = leader == broker_id and leader_epoch == epoch and new_isr == isr and \
            recovery == cur_recovery
        if ctx.rules.alter_partition.alter_partition_validates_epochs:
            # 3.3+: KAFKA-14154 / KAFKA-14144 / KIP-841
            if partition_epoch > version or leader_epoch > epoch:
                return E.NOT_CONTROLLER     # the leader knows newer state than this controller
            if leader_epoch < epoch:
                return E.FENCED_LEADER_EPOCH
            if same and partition_epoch <= version:
                return None
            if partition_epoch < version:
                return E.INVALID_UPDATE_VERSION
            if _invalid_leader_recovery(new_isr, recovery, cur_recovery):
                return E.INVALID_REQUEST
        else:
            # 2.7-3.2 (processAlterIsr): fence an older leader epoch, accept an identical state,
            # else a conditional ZooKeeper write (INVALID_UPDATE_VERSION on a bad zkVersion);
            # 3.2 (processAlterPartition) first checks the leader recovery state
            if _invalid_leader_recovery(new_isr, recovery, cur_recovery):
                return E.INVALID_REQUEST
            if leader_epoch < epoch:
                return E.FENCED_LEADER_EPOCH
            if same:
                return None
        cc = self.context
        if ctx.rules.alter_partition.alter_partition_rejects_ineligible and \
                any(r not in cc.live_brokers or r in cc.shutting_down for r in new_isr):
            # KIP-841: liveBrokerIds excludes shutting-down brokers
            return E.INELIGIBLE_REPLICA
        return E.NONE

    def on_isr_change_notification(self, ctx, zk: ZooKeeper, tps) -> None:
        """Pre-2.7: a leader wrote ZK itself; reload those states and propagate them."""
        for tp in tps:
            if tp in self.context.assignments:
                self._refresh(zk, tp)
        self.send_update_metadata(ctx, [tp for tp in tps if tp in self.context.states])
        # (before 2.7 a reassignment completes through the state znode's watch instead,
        # see ``_update_current_reassignment``)


def process_topic_ids(cc: ControllerContext, topic: str, znode: dict) -> None:
    """KafkaController.processTopicIds for one topic (KafkaController.scala:1660@2.8.0,
    :1710@3.9.0-rc3): the id its znode holds (TopicZNode.decode "topic_id") goes into the
    controller's context (addTopicId). kafkasim's topics get their id when created
    (``zk_topic_ids``), so KafkaZkClient.setTopicIds, which gives one to a topic created
    without, has nothing to do and is not modelled."""
    topic_id = znode.get("topic_id")
    if topic_id is not None:
        cc.add_topic_id(topic, topic_id)


def request_topic_ids(cc: ControllerContext, states) -> tuple[tuple[str, str], ...]:
    """The topic ids of a LeaderAndIsr (v5+) or UpdateMetadata (v7+):
    ControllerBrokerRequestBatch.sendLeaderAndIsrRequest's topicIds and the
    UpdateMetadataTopicStates' (ControllerChannelManager.scala:548, :620@3.9.0-rc3): each
    topic of the request's partition states with the controller's id for it,
    Uuid.ZERO_UUID for one it has none for, in the order the states name them."""
    topics = dict.fromkeys(st.topic for st in states)
    return tuple((t, cc.topic_ids.get(t, ZERO_UUID)) for t in topics)


def _requested_recovery_state(ctx, req: AlterPartitionRequest, i: int) -> int:
    """The ``i``-th partition's LeaderRecoveryState in an AlterPartition: the field exists since
    3.2 (KIP-704; AlterPartitionManager.buildRequest sets it from IBP 3.2-IV0), RECOVERED when
    absent."""
    if not ctx.rules.elections.zk_leader_recovery_state or not req.leader_recovery_states:
        return LeaderRecoveryState.RECOVERED
    return req.leader_recovery_states[i]


def _known_recovery_states(ctx, req: AlterPartitionRequest) -> bool:
    """Every LeaderRecoveryState of an AlterPartition (3.2+, KIP-704) is RECOVERED (0) or
    RECOVERING (1); before 3.2 the field does not exist."""
    return not ctx.rules.elections.zk_leader_recovery_state or all(
        s in (LeaderRecoveryState.RECOVERED, LeaderRecoveryState.RECOVERING)
        for s in req.leader_recovery_states)


def _invalid_leader_recovery(new_isr: tuple, recovery: int, cur_recovery: int) -> bool:
    """processAlterPartition (3.2+, KIP-704): INVALID_REQUEST when a RECOVERING leader asks for
    an ISR of more than one replica, or when the state would go RECOVERED -> RECOVERING."""
    if recovery != LeaderRecoveryState.RECOVERING:
        return False
    return len(new_isr) > 1 or cur_recovery == LeaderRecoveryState.RECOVERED
