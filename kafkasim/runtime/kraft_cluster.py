"""The cluster's KRaft control plane: controller nodes, the metadata quorum, admin operations.

``Cluster(metadata_mode="kraft")`` (the only mode from Kafka 4.0) creates a quorum of controller
nodes (``controllers=3`` by default, ids 3000, 3001, ...; Kafka's examples number dedicated
controllers apart from brokers) replicating ``__cluster_metadata`` with KRaft's Raft, and gives
every broker a ``BrokerLifecycleManager``. The façade's views (``describe``, ``leader``,
``isr``, ...) read ``image``: the metadata every node agrees on, i.e. the committed records.
Admin operations (create topic, elections, config changes) go to the active controller, as
the admin client's requests are forwarded there.
"""

from __future__ import annotations

import warnings
from functools import partial

from kafkasim.control.kraft import records as R
from kafkasim.control.kraft.cluster_control import ClusterControlManager
from kafkasim.control.kraft.feature_control import (
    ELIGIBLE_LEADER_REPLICAS_VERSION as ELR_FEATURE_NAME,
)
from kafkasim.control.kraft.feature_control import bootstrap_records, production_features
from kafkasim.control.kraft.image import MetadataImage, load_snapshot
from kafkasim.control.kraft.metadata_version import MINIMUM_KRAFT_VERSION, MetadataVersion
from kafkasim.control.kraft.offset_control import published_entries
from kafkasim.control.kraft.replication_control import ReplicationControlManager
from kafkasim.control.kraft.striped_placer import StripedReplicaPlacer
from kafkasim.core import events as ev
from kafkasim.runtime.controller_server import ControllerServer
from kafkasim.settings import config as kconfig
from kafkasim.settings import limits
from kafkasim.settings.exceptions import ClusterError
from kafkasim.settings.javautil import JavaRandom
from kafkasim.settings.versions import version_at_least

DEDICATED_CONTROLLER_BASE_ID = 3000


def make_managers(settings: dict):
    """A fresh ClusterControlManager + ReplicationControlManager (what ``QuorumController``
    rebuilds its state into on claim and renounce). ``settings`` is plain data so the factory
    pickles with the cluster."""
    mv = MetadataVersion.parse(settings["metadata.version"])
    cc = ClusterControlManager(
        session_timeout_ms=settings["broker.session.timeout.ms"], metadata_version=mv,
        replica_placer=StripedReplicaPlacer(
            JavaRandom(settings["seed"]),
            cordoned_dirs_in_messages=settings["placement_messages_name_cordoned_dirs"]),
        registration_rules=settings["registration_rules"],
        heartbeat_options=settings["heartbeat_options"],
        activate_tracks_fenced=settings.get("activate_tracks_fenced", False),
        duplicate_registration_names_session_expiry=settings.get(
            "duplicate_registration_names_session_expiry", False))
    # FeatureControlManager starts at MINIMUM_KRAFT_VERSION (QuorumController's builder): the
    # metadata.version is the one a replayed FeatureLevelRecord finalized (the bootstrap's)
    rc = ReplicationControlManager(
        cc, metadata_version=MINIMUM_KRAFT_VERSION, elr_enabled=settings["elr_enabled"],
        default_min_isr=settings["min.insync.replicas"],
        default_unclean=settings["unclean.leader.election.enable"],
        default_replication_factor=settings["default.replication.factor"],
        default_num_partitions=settings["num.partitions"],
        topic_id_factory=partial(_topic_id, settings["seed"]),
        last_known_leader_must_be_acceptable=settings["last_known_leader_must_be_acceptable"],
        last_known_leader_on_leader_loss=settings["last_known_leader_on_leader_loss"],
        reassignment_waits_for_adding_replicas_only=settings.get(
            "reassignment_waits_for_adding_replicas_only", True))
    cc.broker_unclean_shutdown_handler = rc.handle_broker_unclean_shutdown
    cc.broker_shutdown_handler = rc.handle_broker_shutdown
    return cc, rc


def raft_options(rules) -> dict:
    """KafkaRaftClient's version-dependent behaviour for a release (kafkasim.settings.versions)."""
    raft = rules.raft
    return {
        "pre_vote": raft.kraft_pre_vote,
        "check_quorum": raft.raft_check_quorum,
        "begin_quorum_epoch_heartbeat": raft.raft_begin_quorum_epoch_heartbeat,
        "voted_state": raft.raft_voted_state,
        "election_loss_waits_timeout": raft.raft_election_loss_waits_timeout,
        "fast_hwm_replication": raft.raft_fast_hwm_replication,
        "update_voter_static": raft.raft_update_voter_static_quorum,
        "begin_quorum_epoch_skips_fetching_voters":
            raft.raft_begin_quorum_epoch_skips_fetching_voters,
        "forget_stale_connections": raft.raft_request_manager_forgets_stale_connections,
        "voter_set_non_overlapping": raft.raft_voter_set_history_allows_non_overlapping,
        "update_voter_period_one_fetch_timeout": raft.raft_update_voter_period_one_fetch_timeout,
        "unattached_voters_fetch": raft.raft_unattached_voters_fetch,
        "observer_fetches_from_best_node": raft.raft_observer_fetches_from_best_node,
        "fetch_snapshot_for_empty_log": raft.raft_fetch_snapshot_for_empty_log,
        # no quorum-state data_version: each write takes the kraft.version in force's
        # (FileQuorumStateStore.writeElectionState), 0 unless kraft.version 1 (KIP-853, 3.9+)
    }


def kraft_settings(kafka_version: str, rules, cfg: dict, seed: int) -> dict:
    """What the controllers of a KRaft cluster of ``kafka_version`` start with: the release's
    newest metadata.version, whether ELR is on (KIP-966: preview in 4.0, default from 4.1),
    the registration / heartbeat rules of that release (ClusterControlManager,
    BrokerHeartbeatManager), and the bootstrap records the first active controller writes
    (BootstrapMetadata as ``kafka-storage format`` computes it: metadata.version, then each
    production feature's default level above 0 by name -- group.version, transaction.version,
    share.version, streams.version and, with ELR, eligible.leader.replicas.version; the
    controller's activation adds the cluster-level min.insync.replicas ELR needs)."""
    from kafkasim.control.kraft.cluster_control import RegistrationRules

    mv = MetadataVersion.latest_for(kafka_version)
    elr = bool(rules.elections.elr_enabled_by_default) and mv.is_elr_supported()
    if rules.elections.unclean_shutdown_detection:
        registration = RegistrationRules.V4_0       # 4.x: PreviousBrokerEpoch vs the epoch
    elif rules.raft.kraft_dynamic_quorum:
        registration = RegistrationRules.V3_9       # 3.9: a new incarnation is unclean
    else:
        registration = RegistrationRules.V3_3       # 3.3-3.8: no detection in production
    periodic = bool(rules.controller.periodic_controller_tasks)   # KAFKA-17793 (4.0+)
    heartbeat = {
        "register_always_touches": bool(rules.controller.broker_registration_previous_epoch),
        "heartbeat_tracker": periodic}
    # kafka-storage format: metadata.version and every production feature at its default
    # level for it (4.0: group.version 1, transaction.version 2; 4.1: + ELR 1; 4.2+: +
    # share.version, streams.version), or ELR as the rule table (maybe overridden) says
    levels = {ELR_FEATURE_NAME: int(elr)} if ELR_FEATURE_NAME in production_features(
        kafka_version) else {}
    bootstrap = bootstrap_records(mv, kafka_version, levels)
    return {
        "metadata.version": mv.version(),
        "elr_enabled": elr,
        "seed": seed,
        "registration_rules": registration,
        "heartbeat_options": heartbeat,
        "broker.session.timeout.ms": cfg["broker.session.timeout.ms"],
        "min.insync.replicas": cfg["min.insync.replicas"],
        "unclean.leader.election.enable": cfg["unclean.leader.election.enable"],
        "default.replication.factor": cfg["default.replication.factor"],
        "num.partitions": cfg.get("num.partitions", 1),
        "last_known_leader_must_be_acceptable": version_at_least(kafka_version, "4.1"),
        # apache/kafka #20629 (4.2.0): PartitionChangeBuilder.maybeUpdateLastKnownLeader
        "last_known_leader_on_leader_loss": bool(rules.elections.last_known_leader_on_leader_loss),
        # KAFKA-19975 (4.3.0): PartitionReassignmentReplicas.maybeCompleteReassignment
        "reassignment_waits_for_adding_replicas_only":
            bool(rules.tools.reassignment_waits_for_adding_replicas_only),
        # KIP-1066 (4.3.0): StripedReplicaPlacer's refusals name cordoned log directories
        "placement_messages_name_cordoned_dirs":
            bool(rules.tools.placement_messages_name_cordoned_dirs),
        "periodic_tasks": periodic,
        # 4.0.0 (KAFKA-18138) starts a session for every registered broker on activation;
        # 4.1 (KAFKA-19130) for unfenced brokers only
        "activate_tracks_fenced": bool(rules.controller.activate_tracks_fenced_brokers),
        # 4.1 (KAFKA-19047): the duplicate-registration message's self-resolving hint
        "duplicate_registration_names_session_expiry":
            bool(rules.controller.duplicate_registration_message_names_session_expiry),
        "bootstrap_records": tuple(bootstrap),
    }


def _topic_id(seed: int, name: str) -> str:
    from kafkasim.runtime.describe import topic_id
    return topic_id(name, seed)


def controller_ids(controllers, broker_ids) -> tuple[int, ...]:
    """``controllers``: a count of dedicated controllers, or the list of node ids (ids that
    are also broker ids would make combined nodes, not modelled yet)."""
    if isinstance(controllers, bool) or not isinstance(controllers, (int, list, tuple)):
        raise ClusterError(f"controllers must be a count or a list of node ids, got "
                           f"{controllers!r}")
    if isinstance(controllers, int):
        if not 1 <= controllers <= limits.MAX_BROKERS:
            raise ClusterError(f"controllers must be at least 1 (a KRaft quorum needs a voter) "
                               f"and at most {limits.MAX_BROKERS} (limits.MAX_BROKERS, as a "
                               f"scenario's cluster.controllers), got {controllers}")
        ids = tuple(DEDICATED_CONTROLLER_BASE_ID + i for i in range(controllers))
    else:
        ids = tuple(controllers)
        if not ids or len(set(ids)) != len(ids) or any(
                not isinstance(i, int) or isinstance(i, bool) or i < 0 for i in ids):
            raise ClusterError(f"controllers must be distinct non-negative node ids, got "
                               f"{list(ids)}")
    both = sorted(set(ids) & set(broker_ids))
    if both:
        raise ClusterError(f"node ids {both} are both brokers and controllers: combined mode "
                           "(process.roles=broker,controller) is not modelled; use dedicated "
                           "controller ids")
    for text in kconfig.validate_quorum(list(ids)):   # Raft's majority rule, with the numbers
        warnings.warn(text, kconfig.ConfigWarning, stacklevel=3)
    return ids


def is_dynamic_quorum(rules, cfg: dict) -> bool:
    """KIP-853 (3.9+): controllers given ``controller.quorum.bootstrap.servers`` and no
    ``controller.quorum.voters`` are formatted with ``kafka-storage format
    --initial-controllers`` (every controller of ``Cluster(controllers=...)``): kraft.version 1,
    the voter set in a bootstrap checkpoint, then in VotersRecords of the log. Otherwise the
    quorum is static (kraft.version 0)."""
    return bool(rules.raft.kraft_dynamic_quorum and cfg.get("controller.quorum.bootstrap.servers")
                and not cfg.get("controller.quorum.voters"))


class KRaftControlPlane:
    """See the module docstring."""

    def __init__(self, cluster, ids: tuple[int, ...], settings: dict, raft_options: dict
                 ) -> None:
        self.cluster = cluster
        self.initial_voters = ids
        self.settings = settings
        self.raft_options = raft_options
        self.image = MetadataImage()
        self.managers = partial(make_managers, settings)
        cfg = dict(cluster.broker_config)
        cfg.setdefault("metadata.max.idle.interval.ms", 500)   # QuorumConfig / KRaftConfigs
        cfg["bootstrap_records"] = settings["bootstrap_records"]
        cfg["periodic_tasks"] = settings.get("periodic_tasks", False)
        cfg["kafka_version"] = cluster.kafka_version      # the controllers' feature ranges
        cfg["controller_ids"] = tuple(ids)
        self.node_config = cfg
        self.formatted_dynamic = is_dynamic_quorum(cluster.rules, cluster.broker_config)
        self.nodes: dict[int, ControllerServer] = {
            i: ControllerServer(cluster, i, ids, cfg, self._raft_options(i, True),
                                self.managers) for i in ids}

    def _raft_options(self, node_id: int, initial: bool) -> dict:
        """The Raft client's options for controller ``node_id``: with a dynamic quorum its
        directory id, kraft.version 1 and the bootstrap checkpoint's voter set (``initial``:
        formatted with --initial-controllers; else --no-initial-controllers, an observer)."""
        options = dict(self.raft_options)
        if not self.cluster.rules.raft.kraft_dynamic_quorum:
            return options
        from kafkasim.control.kraft.voter_set import ReplicaKey, VoterNode, VoterSet
        from kafkasim.runtime.describe import directory_id

        seed = self.cluster.engine.seed
        hosts = self._voter_hosts()
        # KRaftVersion.LATEST_PRODUCTION; every node has its meta.properties directory.id
        options.update(supported_kraft_version=(0, 1),
                       directory_id=directory_id(node_id, seed),
                       listeners=(("CONTROLLER", *hosts[node_id]),) if node_id in hosts else None,
                       auto_join=bool(self.cluster.broker_config.get(
                           "controller.quorum.auto.join.enable", False)))
        if initial and not self.formatted_dynamic:     # controller.quorum.voters
            # VoterSet.fromInetSocketAddresses: no directory ids, kraft.version range 0..0
            options["bootstrap_voters"] = VoterSet({v: VoterNode(
                ReplicaKey(v), (("CONTROLLER", *hosts[v]),), (0, 0))
                for v in self.initial_voters})
            return options
        voters = VoterSet({v: VoterNode(ReplicaKey(v, directory_id(v, seed)),
                                        (("CONTROLLER", *hosts[v]),))
                           for v in self.initial_voters}) if initial else VoterSet()
        options.update(kraft_version=1, bootstrap_voters=voters, observer=not initial)
        return options

    @property
    def dynamic(self) -> bool:
        """kraft.version 1 is in force (formatted so, or upgraded with kafka-features)."""
        node = self.raft_leader() or max(
            self.nodes.values(), key=lambda n: (n.raft.log.end_offset, -n.id))
        return node.raft.reconfig.history.last_kraft_version() >= 1

    @property
    def voters(self) -> tuple[int, ...]:
        """The voter ids in force: the Raft leader's voter set (the last VotersRecord of its
        log, committed or not), else the longest log's; ``controller.quorum.voters`` on a
        static quorum."""
        node = self.raft_leader() or max(
            self.nodes.values(), key=lambda n: (n.raft.log.end_offset, -n.id))
        return node.raft.voters

    def start_controller(self, node_id: int) -> ControllerServer:
        """Start a new controller process ``node_id`` for a dynamic quorum (KIP-853): formatted
        with ``kafka-storage format --no-initial-controllers``, with
        controller.quorum.bootstrap.servers, it joins as an observer and fetches the metadata
        log; ``add_controller`` then makes it a voter. Refused (nothing changes) on a static
        quorum or for an id already in use."""
        if isinstance(node_id, bool) or not isinstance(node_id, int) or node_id < 0:
            raise ClusterError(f"start_controller(node_id) must be a non-negative node id, got "
                               f"{node_id!r}")
        if not self.dynamic:
            raise ClusterError(
                "start_controller: the quorum is static (kraft.version 0, controller.quorum."
                "voters): a controller outside controller.quorum.voters cannot start. Build the "
                "cluster with config={'controller.quorum.bootstrap.servers': ...} (3.9+) for a "
                "dynamic quorum")
        if node_id in self.nodes or node_id in self.cluster.brokers:
            raise ClusterError(f"start_controller: node id {node_id} is already in use "
                               f"(controllers {sorted(self.nodes)}, brokers "
                               f"{sorted(self.cluster.brokers)})")
        node = ControllerServer(self.cluster, node_id, self.initial_voters, self.node_config,
                                self._raft_options(node_id, False), self.managers)
        self.nodes[node_id] = node
        node.start()
        return node

    # -- state --------------------------------------------------------------------------------
    def active(self) -> ControllerServer | None:
        for node in self.nodes.values():
            if node.state == "running" and node.controller.active:
                return node
        return None

    def ready(self) -> bool:
        """An active controller, and every running broker registered and unfenced."""
        if self.active() is None:
            return False
        brokers = self.image.brokers
        for b in self.cluster.brokers.values():
            if b.is_running:
                reg = brokers.get(b.id)
                if reg is None or reg.fenced or b.lifecycle.state != "RUNNING":
                    return False
        return True

    def unsettled_reasons(self) -> list[str]:
        """Why the control plane is not at rest yet (empty: it is), for settle checks and
        liveness checks after faults are healed. At rest means what Kafka converges to once
        every node is up and connected:

        - an active controller, and everything it wrote committed (an uncommitted tail other than
          NoOpRecords may still change the image: QuorumController defers the answers until
          then); the image -- what ``describe`` shows -- is what a stale quorum committed until
          a new active controller's first records commit;
        - every running broker registered, unfenced and RUNNING (BrokerLifecycleManager: a
          running broker heartbeats the active controller with wantFence=false, and
          BrokerHeartbeatManager.calculateNextBrokerState unfences it once its metadata offset
          reaches its registration's);
        - no leaderless partition with a live eligible replica: the controller elects an ISR
          member, else (KIP-966, ELR on) an unfenced ELR member
          (PartitionChangeBuilder.electLeader, ReplicationControlManager.handleBrokerUnfenced);
        - each partition's leader and ISR members hold the image's leader epoch (the brokers
          applied the committed metadata: BrokerMetadataPublisher -> ReplicaManager.applyDelta);
        - every running broker's metadata client follows the active controller in its epoch:
          one still following an old leader sends its heartbeats there, and the active
          controller fences it a session later (an observer that keeps picking an unreachable
          old leader from the bootstrap servers, KAFKA-19354's case).
        """
        out = []
        node = self.active()
        if node is None:
            out.append("no active controller")
        else:
            raft = node.raft
            pending = [r for _o, _e, r in raft.log.entries_between(raft.high_watermark,
                                                                   raft.log.end_offset)
                       if type(r) is not R.NoOpRecord]
            if pending:
                out.append(f"controller {node.id}: {len(pending)} metadata record(s) not "
                           f"committed (high watermark {raft.high_watermark}, log end "
                           f"{raft.log.end_offset})")
        brokers = self.image.brokers
        live = set()
        for b in sorted(self.cluster.brokers):
            br = self.cluster.brokers[b]
            if not br.is_running:
                continue
            reg = brokers.get(b)
            lm = br.lifecycle
            if reg is None or reg.fenced or reg.in_controlled_shutdown or \
                    lm.state != "RUNNING":
                state = "not registered" if reg is None else \
                    ("fenced" if reg.fenced else "in controlled shutdown"
                     if reg.in_controlled_shutdown else "unfenced")
                out.append(f"broker {b}: running ({lm.state}) but {state} in the metadata "
                           "image")
            else:
                live.add(b)
            if node is not None and (lm.raft.leader_id, lm.raft.epoch) != (node.id,
                                                                         node.raft.epoch):
                out.append(f"broker {b}: its metadata client follows {lm.raft.leader_id} in "
                           f"epoch {lm.raft.epoch}, not the active controller {node.id} "
                           f"(epoch {node.raft.epoch})")
        for tp, reg in sorted(self.image.partitions.items()):
            if reg.leader < 0:
                eligible = sorted(set(reg.isr) | set(reg.elr)) if reg.isr or reg.elr else []
                alive = [b for b in eligible if b in live]
                if alive:
                    out.append(f"partition {tp[0]}-{tp[1]}: no leader although eligible "
                               f"replica(s) {alive} are live (ISR {list(reg.isr)}, ELR "
                               f"{list(reg.elr)})")
                continue
            for b in (reg.leader, *(i for i in reg.isr if i != reg.leader)):
                br = self.cluster.brokers.get(b)
                if br is None or not br.is_running:
                    continue
                part = br.replica_manager.partitions.get(tp)
                known = None if part is None else part.leader_epoch
                if known != reg.leader_epoch:
                    out.append(f"partition {tp[0]}-{tp[1]}, broker {b}: knows leader epoch "
                               f"{known} of {reg.leader_epoch}")
        return out

    def leader_id(self) -> int:
        node = self.active()
        return node.id if node is not None else -1

    def on_committed(self, node: ControllerServer, hw: int) -> None:
        """Keep ``image`` at the longest committed prefix any node has seen, as a metadata
        loader publishes it (an open metadata transaction waits for its End)."""
        img = self.image
        if hw - 1 <= img.offset:
            return
        log = node.raft.log
        if log.below_log_start(img.offset + 1):   # the node's log starts at a snapshot past it
            load_snapshot(img, log.entries_between(0, log.start_offset))
        for offset, _epoch, record in published_entries(log.entries_between(img.offset + 1, hw)):
            img.replay(record, offset)

    # -- admin --------------------------------------------------------------------------------
    def controller_node_timer(self, node_id: int, incarnation: int, timer: str,
                              args: tuple) -> None:
        """The engine's "controller_node_timer" event: the timer of a controller process that
        still runs (a paused one runs it when it resumes)."""
        node = self.nodes.get(node_id)
        if node is None or node.state != "running" or node.incarnation != incarnation:
            return
        engine = self.cluster.engine
        if node.paused_until > engine.now:
            engine.schedule_at(node.paused_until, "controller_node_timer", node_id,
                               incarnation, timer, args)
            return
        node.on_timer(timer, args)

    def _require_active(self, what: str) -> ControllerServer:
        node = self.active()
        if node is None:
            up = [i for i, n in self.nodes.items() if n.state == "running"]
            raise ClusterError(
                f"cannot {what}: no active controller (the metadata quorum has no leader; "
                f"running controllers {up} of voters {list(self.voters)}, Raft needs "
                f"{len(self.voters) // 2 + 1})")
        return node

    def _write(self, node: ControllerServer, records, what: str, reason: str) -> None:
        """The active controller writes an admin request's records. Its Raft leadership may end
        under the append (the leader resigned: QuorumController renounces, and nothing of the
        request stays): then the request fails as Kafka's does, NOT_CONTROLLER."""
        if node.controller.write(node, records, reason=reason) < 0 and records:
            raise ClusterError(
                f"cannot {what}: controller {node.id} lost the metadata quorum's leadership "
                f"while writing it, so nothing was written (NOT_CONTROLLER). Run the cluster "
                f"until a new active controller is elected, then retry")
        node.controller.maybe_schedule_periodic(node)

    def create_topic(self, name: str, partitions: int, rf: int, assignment, configs: dict):
        node = self._require_active(f"create topic '{name}'")
        rc = node.controller.replication_control
        configs = {k: str(v).lower() if isinstance(v, bool) else str(v)
                   for k, v in configs.items()}
        if assignment is not None:
            # the admin client sends a manual assignment with -1 for both (NewTopic)
            partitions, rf = -1, -1
        records, result = rc.create_topic(name, partitions, rf, assignment, configs)
        if result.error != "NONE":
            raise ClusterError(f"Cannot create topic '{name}': {result.error_message} "
                               f"({result.error})")
        self._write(node, records, f"create topic '{name}'", "topic created")
        return {p: list(reg.replicas) for p, reg in sorted(rc.topics()[name].items())}

    def elect(self, tps, election_type: str) -> dict:
        node = self._require_active("run the election")
        records, results = node.controller.replication_control.elect_leaders(
            election_type.upper(), tps)
        self._write(node, records, "run the election", f"{election_type} (kafka-leader-election)")
        return {(r.topic, r.partition): r.error for r in results}

    def alter_partition_reassignments(self, reassignments: dict) -> dict:
        """AlterPartitionReassignments on the active controller (ReplicationControlManager
        .alterPartitionReassignments): ``{(topic, partition): target or None}``, grouped by
        topic in the order given; the records go in one batch. Returns ``{(topic, partition):
        (error, message)}``."""
        node = self._require_active("reassign partitions")
        topics: dict[str, list] = {}
        for (topic, partition), target in reassignments.items():
            topics.setdefault(topic, []).append((partition, target))
        records, response = node.controller.replication_control.alter_partition_reassignments(
            topics.items())
        self._write(node, records, "reassign partitions", "partition reassignment")
        return {(t.name, p.partition_index): (p.error, p.error_message)
                for t in response.responses for p in t.partitions}

    def list_partition_reassignments(self, tps=None) -> dict:
        """ListPartitionReassignments on the active controller: ``{(topic, partition):
        OngoingPartitionReassignment}`` of the partitions being reassigned (of ``tps``, or
        all)."""
        node = self._require_active("list partition reassignments")
        topics = None
        if tps is not None:
            topics = {}
            for topic, partition in tps:
                topics.setdefault(topic, []).append(partition)
            topics = topics.items()
        response = node.controller.replication_control.list_partition_reassignments(topics)
        return {(t.name, p.partition_index): p for t in response.topics for p in t.partitions}

    def alter_topic_configs(self, name: str, changed: dict, deleted) -> None:
        node = self._require_active(f"alter the configs of '{name}'")
        configs = {k: str(v).lower() if isinstance(v, bool) else str(v)
                   for k, v in changed.items()}
        configs.update({k: None for k in deleted})
        records = node.controller.replication_control.config_records("TOPIC", name, configs)
        self._write(node, records, f"alter the configs of '{name}'", f"config change of {name}")

    def alter_broker_configs(self, name, changed: dict, deleted) -> None:
        """``kafka-configs --entity-type brokers [--entity-name id | --entity-default]`` in
        KRaft: ConfigRecords for resource BROKER (name "" is the cluster-level default), checked
        as ConfigurationControlManager.validateAlterConfig does while ELR is on (no broker-level
        min.insync.replicas; the cluster-level one cannot be removed), with the ClearElrRecord a
        min.insync.replicas change brings."""
        from kafkasim.control.kraft.elr_safety import disallowed_min_isr_change

        resource = "" if name in (None, "", "default") else str(name)
        configs = {k: str(v).lower() if isinstance(v, bool) else str(v)
                   for k, v in changed.items()}
        configs.update({k: None for k in deleted})
        node = self._require_active("alter broker configs")
        rc = node.controller.replication_control
        elr = rc.is_elr_enabled()
        for k, v in configs.items():
            err = disallowed_min_isr_change(R.ConfigRecord("BROKER", resource, k, v), elr)
            if err is not None:
                raise ClusterError(f"{err} (INVALID_CONFIG)")
        records = rc.config_records("BROKER", resource, configs)
        self._write(node, records, "alter broker configs", "broker config change")

    def trace_start(self) -> None:
        self.cluster.trace.record("metadata_quorum", "kraft", "", -1,
                            ev.MetadataQuorum(tuple(self.voters)))

    # -- read side (kafka-metadata-quorum, the metadata log, quorum-state) ---------------------
    def _node(self, node_id: int) -> ControllerServer:
        node = self.nodes.get(node_id)
        if node is None:
            raise ClusterError(f"no controller {node_id}: the controllers are "
                               f"{list(self.voters)}")
        return node

    def raft_leader(self) -> ControllerServer | None:
        """The running controller whose Raft client is Leader (the highest epoch if a cut-off
        old leader has not resigned yet): the node that answers DescribeQuorum."""
        leaders = [n for n in self.nodes.values()
                   if n.state == "running" and n.raft.state_name == "Leader"]
        return max(leaders, key=lambda n: n.raft.epoch) if leaders else None

    def quorum_info(self) -> dict:
        """The DescribeQuorum answer of the Raft leader (KafkaRaftClient
        .handleDescribeQuorumRequest, RaftUtil.singletonDescribeQuorumResponse) plus the
        ClusterId (DescribeCluster), in the shape ``describe.describe_quorum_status`` reads.

        Since 3.9 (KIP-853) the answer carries directory ids and the voters' endpoints: the
        voters of a static quorum (``controller.quorum.voters``) have none (printed ``null`` /
        the zero Uuid); observers (brokers) send their metadata directory's ``directory.id`` in
        every Fetch. Endpoints are the voters' CONTROLLER listener: the host:port of
        ``controller.quorum.voters`` when configured, else ``controller<id>:9093`` (the way
        ZooKeeper-mode brokers here register as ``broker<id>:9092``)."""
        from kafkasim.runtime.describe import cluster_id, directory_id

        node = self.raft_leader()
        if node is None:
            up = [i for i, n in self.nodes.items() if n.state == "running"]
            raise ClusterError(
                "no active controller: the quorum has no majority or has not elected a leader "
                f"yet (running controllers {up} of voters {list(self.voters)}, Raft needs "
                f"{len(self.voters) // 2 + 1}); DescribeQuorum fails with "
                "NOT_LEADER_OR_FOLLOWER")
        seed = self.cluster.engine.seed
        kip853 = bool(self.cluster.rules.raft.kraft_dynamic_quorum)
        raw = node.raft.describe_quorum(self.cluster.engine.now)

        def row(r, voter: bool):
            rid = r["replica_id"]
            directory = None if voter or not kip853 else directory_id(rid, seed)
            return (rid, directory, r["log_end_offset"], r["last_fetch_timestamp"],
                    r["last_caught_up_timestamp"])
        endpoints = {}
        if kip853:
            hosts = self._voter_hosts()
            endpoints = {v: [f"CONTROLLER://{hosts[v][0]}:{hosts[v][1]}"] for v in node.raft.voters}
        if self.dynamic:    # the voter set's directory ids (KIP-853, kraft.version 1)
            voters = node.raft.reconfig.history.last_value()
            endpoints = {v: [f"{n}://{h}:{p}" for n, h, p in voters.voter_node(v).endpoints]
                         for v in voters.voter_ids()}
            dirs = {k.id: k.directory_id for k in voters.voter_keys()}
            observers = [(*row(r, False)[:1], directory_id(r["replica_id"], seed),
                          *row(r, False)[2:]) for r in raw["observers"]]
            return {"cluster_id": cluster_id(seed), "leader_id": raw["leader_id"],
                    "leader_epoch": raw["leader_epoch"],
                    "high_watermark": raw["high_watermark"],
                    "voters": [(*row(r, True)[:1], dirs.get(r["replica_id"]),
                                *row(r, True)[2:]) for r in raw["current_voters"]],
                    "observers": observers, "endpoints": endpoints}
        return {"cluster_id": cluster_id(seed), "leader_id": raw["leader_id"],
                "leader_epoch": raw["leader_epoch"], "high_watermark": raw["high_watermark"],
                "voters": [row(r, True) for r in raw["current_voters"]],
                "observers": [row(r, False) for r in raw["observers"]],
                "endpoints": endpoints}

    def _voter_hosts(self) -> dict[int, tuple[str, int]]:
        from kafkasim.settings.config import parse_quorum_voters

        configured = self.cluster.broker_config.get("controller.quorum.voters")
        hosts = parse_quorum_voters(configured) if configured else {}
        return {v: hosts.get(v, (f"controller{v}", 9093))
                for v in (*self.initial_voters, *getattr(self, "nodes", ()))}

    def describe_quorum(self, *, status: bool = False, replication: bool = False) -> str:
        """``kafka-metadata-quorum --bootstrap-server … describe --status`` or
        ``--replication`` (tools MetadataQuorumCommand; the two options exclude each other and
        one is required). The KIP-853 layout from 3.9, the older one before."""
        from kafkasim.runtime.describe import describe_quorum_replication, describe_quorum_status

        if status == replication:
            raise ClusterError("kafka-metadata-quorum describe: one of the arguments --status "
                               "--replication is required (and they exclude each other)")
        info = self.quorum_info()
        if all(v[0] != info["leader_id"] for v in info["voters"]):
            # MetadataQuorumCommand finds the leader among the voters with Optional.get()
            raise ClusterError(
                "kafka-metadata-quorum describe fails with java.util.NoSuchElementException: No "
                f"value present -- leader {info['leader_id']} is not one of the voters "
                f"{[v[0] for v in info['voters']]}: it removed itself and resigns once that "
                "VotersRecord commits (RemoveVoterHandler)")
        kip853 = bool(self.cluster.rules.raft.kraft_dynamic_quorum)
        if status:
            return describe_quorum_status(info, kip853)
        return describe_quorum_replication(info, kip853)

    def add_controller(self, config: dict, *, dry_run: bool = False) -> str:
        """``kafka-metadata-quorum … --command-config <controller.properties> add-controller``
        (KIP-853, 3.9+): see kafkasim.runtime.quorum_admin. The simulated quorum is static
        (kraft.version 0), so the leader answers UNSUPPORTED_VERSION, as Kafka's does."""
        from kafkasim.runtime.quorum_admin import add_controller

        return add_controller(self, config, dry_run=dry_run)

    def remove_controller(self, controller_id: int, controller_directory_id: str, *,
                          dry_run: bool = False) -> str:
        """``kafka-metadata-quorum … remove-controller --controller-id N
        --controller-directory-id D`` (KIP-853, 3.9+): see kafkasim.runtime.quorum_admin."""
        from kafkasim.runtime.quorum_admin import remove_controller

        return remove_controller(self, controller_id, controller_directory_id, dry_run=dry_run)

    def update_features(self, features: dict | None = None, *,
                        release_version: str | None = None, validate_only: bool = False
                        ) -> dict:
        """``kafka-features --bootstrap-controller … upgrade --feature kraft.version=1`` or
        ``upgrade --release-version X`` (Admin.updateFeatures): kraft.version, upgradable from
        0 (controller.quorum.voters) to 1 (dynamic) since Kafka 4.1 (KAFKA-16538); or
        metadata.version / eligible.leader.replicas.version, finalized by the active
        controller's FeatureControlManager (``{"eligible.leader.replicas.version": 1}`` turns
        KIP-966's ELR on in a 4.0 cluster, where it is off by default). See
        kafkasim.runtime.quorum_admin.update_features."""
        from kafkasim.runtime.quorum_admin import update_features

        return update_features(self, features, release_version=release_version,
                               validate_only=validate_only)

    def downgrade_features(self, features: dict, *, unsafe: bool = False,
                           validate_only: bool = False) -> dict:
        """``kafka-features --bootstrap-controller … downgrade [--unsafe] --feature name=level``
        for metadata.version and eligible.leader.replicas.version (0 turns ELR off): the
        active controller's FeatureControlManager refuses a metadata.version downgrade across a
        metadata format change, safe or unsafe (KAFKA-13896). See
        kafkasim.runtime.quorum_admin.downgrade_features."""
        from kafkasim.runtime.quorum_admin import downgrade_features

        return downgrade_features(self, features, unsafe=unsafe, validate_only=validate_only)

    def describe_features(self, *, node_id: int | None = None) -> str:
        """``kafka-features --bootstrap-server … describe [--node-id N]`` (FeatureCommand
        .handleDescribe): each feature a broker supports, its finalized level and the epoch
        (the metadata offset the broker's image is at). ``node_id`` (4.2+) picks the broker;
        see kafkasim.runtime.quorum_admin.describe_features."""
        from kafkasim.runtime.quorum_admin import describe_features

        return describe_features(self, node_id)

    def _log_node(self, node_id: int | None) -> ControllerServer:
        if node_id is not None:
            return self._node(node_id)
        node = self.active() or self.raft_leader()
        if node is None:   # the longest log, the lowest id on a tie
            node = max(self.nodes.values(), key=lambda n: (n.raft.log.end_offset, -n.id))
        return node

    def metadata_log(self, node: int | None = None) -> list[tuple]:
        """The ``__cluster_metadata`` log of a controller (default: the active controller, else
        the Raft leader, else the controller with the longest log) as rows (offset, epoch,
        record type, committed, fields: ``name=value`` of the record's fields that are set,
        None ones left out). Record types are Kafka's message names
        (RegisterBrokerRecord, PartitionChangeRecord, NoOpRecord, the LeaderChangeMessage
        control record, ...). ``committed``: the quorum committed this very entry (its offset is
        below the highest high watermark any node learned and a log that knows it committed
        has the same epoch there) -- an uncommitted tail may still be truncated."""
        import dataclasses

        target = self._log_node(node)
        ref = max(self.nodes.values(), key=lambda n: (n.raft.high_watermark, -n.id))
        ref_log = ref.raft.log
        # the image stops before an open metadata transaction; its records are committed too
        committed_end = min(max(self.image.offset + 1, ref.raft.high_watermark),
                            ref_log.end_offset)
        rows = []
        for offset, epoch, record in target.raft.log.entries:   # from its log start offset
            ref_entry = ref_log.entry_at(offset) if offset < committed_end else None
            committed = ref_entry is not None and ref_entry[1] == epoch
            if dataclasses.is_dataclass(record):
                fields = ", ".join(f"{f.name}={_short(getattr(record, f.name))}"
                                   for f in dataclasses.fields(record)
                                   if getattr(record, f.name) is not None)
            else:
                fields = repr(record)
            rows.append((offset, epoch, type(record).__name__, committed, fields))
        return rows

    def describe_metadata_log_dir(self, node: int | None = None) -> str:
        """The ``__cluster_metadata-0`` directory of a controller (default as ``metadata_log``)
        or a broker (its node id): the log's start and end offsets and high watermark, then
        each snapshot file (``<offset>-<epoch>.checkpoint``, KIP-630) with its records and
        estimated bytes, oldest first."""
        from kafkasim.control.kraft.raft_snapshots import snapshot_files

        broker = self.cluster.brokers.get(node) if node is not None else None
        if node is not None and broker is None and node not in self.nodes:
            raise ClusterError(
                f"describe_metadata_log_dir(node): no node {node!r}; the controllers are "
                f"{sorted(self.nodes)} and the brokers {sorted(self.cluster.brokers)}")
        raft = broker.lifecycle.raft if broker is not None else self._log_node(node).raft
        who = f"broker {node}" if broker is not None else f"controller {self._log_node(node).id}"
        log = raft.log
        lines = [f"__cluster_metadata-0 of {who}: log start offset {log.start_offset}, log end "
                 f"offset {log.end_offset}, high watermark {raft.high_watermark}"]
        for sid in sorted(log.snapshots):
            snap = log.snapshots[sid]
            lines.append(f"  {sid.offset:020d}-{sid.epoch:010d}.checkpoint  "
                         f"{len(snap.entries)} records, {snap.size_in_bytes} bytes")
        if not log.snapshots:
            lines.append("  (no snapshot)")
        on_disk = snapshot_files(log.log_dir)
        if log.log_dir is not None and log.log_dir.root is not None:
            lines.append(f"  on disk: {log.log_dir.root}/__cluster_metadata-0: "
                         f"{', '.join(on_disk) or 'no snapshot file'}")
        return "\n".join(lines)

    def metadata_log_frame(self, node: int | None = None):
        """``metadata_log`` as a pandas DataFrame (offset, epoch, record, committed, fields)."""
        import pandas as pd

        return pd.DataFrame(self.metadata_log(node),
                            columns=["offset", "epoch", "record", "committed", "fields"])

    def quorum_state(self, node: int) -> str:
        """The text of controller ``node``'s ``quorum-state`` file (FileQuorumStateStore): its
        last durable election state (leader epoch, leader id, voted id)."""
        return self._node(node).raft.quorum_state_json()


def _short(value) -> str:
    if isinstance(value, tuple):
        return "[" + ",".join(str(v) for v in value) + "]"
    return str(value)
