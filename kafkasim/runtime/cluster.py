"""``Cluster``: the façade learners use — brokers, ZooKeeper, network, clients, trace, metrics.

    >>> c = Cluster(brokers=3, seed=1)
    >>> c.create_topic("orders", partitions=3, replication_factor=3)
    >>> p = c.producer(acks="all"); r = p.send("orders", "hello", partition=0); c.run(100)
    >>> print(c.describe("orders"))

Everything is deterministic given (configuration, actions, seed). The whole cluster is plain data:
``snapshot()`` returns bytes and ``Cluster.restore()`` brings back an identical simulation.
"""

from __future__ import annotations

import difflib
import json
import pickle
from array import array
from collections.abc import Callable
from dataclasses import dataclass, field

from kafkasim.control.placement import PlacementError, assign_replicas_to_brokers
from kafkasim.core import events as ev
from kafkasim.core import rules as kafka_rules
from kafkasim.core.log import Log
from kafkasim.core.rules import RULES, RuleBook
from kafkasim.runtime.broker import RUNNING, Broker
from kafkasim.runtime.clients.admin import Admin
from kafkasim.runtime.clients.consumer import Consumer
from kafkasim.runtime.clients.producer import Producer
from kafkasim.runtime.describe import describe_group, describe_topics, reassigning_adding, topic_id
from kafkasim.runtime.engine import Engine
from kafkasim.runtime.metrics import MetricsRecorder
from kafkasim.runtime.network import ZOOKEEPER, MessageFilter, Network
from kafkasim.runtime.timeouts import TimeoutScheduler
from kafkasim.runtime.trace import Trace
from kafkasim.runtime.transport import Transport
from kafkasim.runtime.views import StateViews
from kafkasim.runtime.zk_cluster import ZkControlPlane
from kafkasim.settings import config as kconfig
from kafkasim.settings import limits, versions
from kafkasim.settings.exceptions import BrokerStartupError, ClusterError, ConditionTimeout
from kafkasim.settings.javautil import JavaRandom
from kafkasim.settings.modes import metadata_mode_for

__all__ = ["BrokerStartupError", "Cluster", "ClusterError", "ConditionTimeout", "NumberedValue",
           "RecordRegistry"]



class NumberedValue(tuple):
    """The value of each record of a generated run (``RateWorkload``): ``"<prefix>-<n>"`` where
    ``n`` is the record id minus ``offset``. One shared ``(prefix, offset)`` stands for the run's
    values in ``RecordRegistry.values``; ``RecordRegistry.value`` makes a record's text when
    asked, so a run stores no string per record."""

    __slots__ = ()


class RecordRegistry:
    """What each record id stands for, once per cluster: value, key and producing client."""

    __slots__ = ("values", "keys", "producers", "producer_names")

    def __init__(self) -> None:
        self.values: list = [None]   # record ids start at 1
        self.keys: list = [None]
        self.producers = array("i", [0])
        self.producer_names: list[str] = []

    def producer_index(self, name: str) -> int:
        try:
            return self.producer_names.index(name)
        except ValueError:
            self.producer_names.append(name)
            return len(self.producer_names) - 1

    def new(self, producer: int, value, key) -> int:
        self.values.append(value)
        self.keys.append(key)
        self.producers.append(producer)
        return len(self.values) - 1

    def new_many(self, producer: int, values, key) -> int:
        """``new`` for each of ``values`` (all with ``key``); returns the first of their
        consecutive record ids."""
        k = len(values)
        first = len(self.values)
        self.values.extend(values)
        self.keys.extend([key] * k)
        self.producers.extend(array("i", (producer,)) * k)
        return first

    def new_numbered(self, producer: int, prefix: str, ns: range, key) -> int:
        """``new_many`` for the values ``f"{prefix}-{n}"`` for each ``n`` of ``ns`` (one step
        apart), kept as one ``NumberedValue``; returns the first of their record ids."""
        k = len(ns)
        first = len(self.values)
        self.values.extend([NumberedValue((prefix, first - ns.start))] * k)
        self.keys.extend([key] * k)
        self.producers.extend(array("i", (producer,)) * k)
        return first

    def value(self, record_id: int):
        v = self.values[record_id]
        if v is None:
            return f"r{record_id}"
        if type(v) is NumberedValue:
            return f"{v[0]}-{record_id - v[1]}"
        return v

    def __len__(self) -> int:
        return len(self.values) - 1


@dataclass(slots=True)
class AdminState:
    """What the Admin API's calls change or return, apart from the topics themselves: static
    broker overrides and topic overrides (AlterConfigs), the replica placement RNG
    (CreateTopics), the last ElectLeaders and AlterPartitionReassignments results."""

    broker_overrides: dict = field(default_factory=dict)
    topic_overrides: dict = field(default_factory=dict)
    placement_rng: JavaRandom | None = None
    last_election_results: dict = field(default_factory=dict)
    last_reassignment_results: dict = field(default_factory=dict)



class Cluster(StateViews):
    def __init__(self, brokers: int | list[int] = 3, *, seed: int = 0,
                 kafka_version: str | None = None, config: dict | None = None,
                 racks: dict[int, str] | None = None, rules: dict | None = None,
                 latency_ms: int = 1, jitter_ms: int = 1, metrics_interval_ms: int = 1000,
                 trace_messages: bool = True, per_partition_metrics: bool = True,
                 log_dirs: str | None = None, metadata_mode: str | None = None,
                 controllers: int | list[int] = 3,
                 max_events: int | None = limits.DEFAULT_MAX_EVENTS) -> None:
        ids, racks = _broker_ids(brokers, racks)
        self.seed = seed
        self._init_version(kafka_version, rules, config, metadata_mode)
        self._init_state(seed, latency_ms, jitter_ms, metrics_interval_ms, trace_messages,
                         per_partition_metrics)
        self.engine.max_events = max_events   # EventLimitExceeded past it (None: unlimited)
        self._create_brokers(ids, racks, log_dirs)
        # message delivery over the network (kafkasim.runtime.transport.Transport); ``send`` is its
        # own
        self.transport = Transport(self, self.network, self.zk_control_plane.controller_queues)
        self.send = self.transport.send
        self.kraft = None
        if self.metadata_mode == "kraft":
            self._create_controllers(controllers, ids)
        self._register_handlers()
        if self.kraft is not None:
            for node in self.kraft.nodes.values():
                node.start()
        for b in ids:
            self.brokers[b].start()
        self.engine.schedule(0, "metrics_sample")
        self.run(0)
        if self.kraft is not None:
            # KRaft start-up: the quorum elects a leader and every broker registers, catches up
            # with the metadata log and is unfenced (BrokerServer.startup blocks on it), as
            # ZooKeeper mode's registration does at construction
            self.run_until(lambda c: c.kraft.ready(), timeout_ms=60000)
        self.ready_ms = self.now   # when construction returned: 0 in ZooKeeper mode

    def _init_version(self, kafka_version: str | None, rules: dict | None,
                      config: dict | None, metadata_mode: str | None = None) -> None:
        """The version profile, its rule table, the metadata mode (ZooKeeper or KRaft) and
        the broker configuration they imply."""
        self.kafka_version = versions.normalize_version(kafka_version or versions.DEFAULT_VERSION)
        self.rules = versions.rules_for(self.kafka_version, rules)
        self.rulebook = RuleBook()   # the rule functions (kafkasim.core.rules): swap_rule
        try:
            self.metadata_mode = metadata_mode_for(self.kafka_version, metadata_mode,
                                                   rules=self.rules)
        except ValueError as exc:
            raise ClusterError(str(exc)) from None
        self.admin_state = AdminState()
        self.admin_state.broker_overrides = dict(config or {})
        self.broker_config = kconfig.with_simulator_fallbacks(
            kconfig.broker_config(self.admin_state.broker_overrides, self.kafka_version,
                                  metadata_mode=self.metadata_mode))

    def _init_state(self, seed: int, latency_ms: int, jitter_ms: int, metrics_interval_ms: int,
                    trace_messages: bool, per_partition_metrics: bool) -> None:
        """Clock, network, ZooKeeper, trace, metrics and the cluster-wide tables (empty)."""
        self.engine = Engine(seed)
        self.network = Network(latency_ms, jitter_ms)
        from kafkasim.control.zookeeper import ZooKeeper
        self.zk = ZooKeeper()
        self.zk_control_plane = ZkControlPlane(self)   # sessions, controller election, events
        self.zk.notify = self.zk_control_plane.zk_data_changed
        self.trace = Trace(messages=trace_messages)
        self.metrics = MetricsRecorder(metrics_interval_ms, per_partition_metrics)
        self.records = RecordRegistry()
        self.admin_state.topic_overrides = {}
        self.topic_configs: dict[str, dict] = {}
        self.topic_ids: dict[str, str] = {}
        self.partition_counts: dict[str, int] = {}
        self.group_offsets: dict[tuple[str, str, int], int] = {}
        # (group, topic, partition) -> CommittedLeaderEpoch of the committed offset, None when the
        # commit carried none (KIP-320, OffsetCommit v6+; GroupMetadataManager offset value v3)
        self.group_offset_leader_epochs: dict[tuple[str, str, int], int | None] = {}
        self.clients: dict[str, object] = {}
        self.admin_state.last_election_results = {}
        self.admin_state.last_reassignment_results = {}
        self.admin_state.placement_rng = JavaRandom(seed)
        # process timers and cancellable request timeouts (kafkasim.runtime.timeouts)
        self.timeout_scheduler = TimeoutScheduler(self)

    def _create_brokers(self, ids: list[int], racks: dict[int, str],
                        log_dirs: str | None) -> None:
        """One Broker per id with the cluster's broker config plus its broker.id/broker.rack."""
        self.brokers: dict[int, Broker] = {}
        for b in ids:
            cfg = dict(self.broker_config)
            cfg["broker.id"] = b
            if b in racks:
                cfg["broker.rack"] = racks[b]
            self.brokers[b] = Broker(self, b, racks.get(b), cfg,
                                     None if log_dirs is None else f"{log_dirs}/broker-{b}")

    def _create_controllers(self, controllers, broker_ids) -> None:
        """KRaft: the controller quorum and each broker's lifecycle manager."""
        from kafkasim.runtime.broker_lifecycle import BrokerLifecycleManager
        from kafkasim.runtime.kraft_cluster import (
            KRaftControlPlane,
            controller_ids,
            kraft_settings,
            raft_options,
        )
        ids = controller_ids(controllers, broker_ids)
        settings = kraft_settings(self.kafka_version, self.rules, self.broker_config,
                                  self.seed)
        options = raft_options(self.rules)
        self.kraft = KRaftControlPlane(self, ids, settings, options)
        for b in self.brokers.values():
            b.lifecycle = BrokerLifecycleManager(b, ids, b.config, options)
        self.kraft.trace_start()

    def _register_handlers(self) -> None:
        """The engine's event kinds and the Cluster methods that handle them."""
        e = self.engine
        e.on("deliver", self.transport.deliver)
        e.on("disconnect", self.transport.disconnect)
        timers = self.timeout_scheduler
        e.on("broker_timer", timers.broker_timer)
        e.on("client_timer", timers.client_timer)
        e.on("timeouts", timers.fire_timeouts)
        e.on("metrics_sample", self._metrics_sample)
        e.on("call", self._call)
        e.on("supervisor_start", self._supervisor_start)
        self.zk_control_plane.register_handlers(e)
        if self.kraft is not None:
            e.on("controller_node_timer", self.kraft.controller_node_timer)

    def __repr__(self) -> str:
        return (f"Cluster(brokers={list(self.brokers)}, kafka_version={self.kafka_version!r}, "
                f"seed={self.seed}, now={self.now} ms)")

    # -- time -------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.engine.now

    def run(self, ms: int = 0, *, check: Callable[[Cluster], None] | None = None) -> None:
        """Advance simulated time by ``ms`` milliseconds (running every event due)."""
        _check_ms("run(ms)", ms)
        self.run_to(self.engine.now + ms, check=check)

    def run_to(self, time_ms: int, *, check: Callable[[Cluster], None] | None = None) -> None:
        _check_ms("run_to(time_ms)", time_ms, self.engine.now + limits.MAX_TIME_MS)
        if check is None:
            self.engine.run(until=time_ms)
            self.settle_fetch_sessions()
            return
        e = self.engine
        while e.peek_time() is not None and e.peek_time() <= time_ms:
            e.step()
            check(self)
        e.now = max(e.now, time_ms)
        self.settle_fetch_sessions()

    def settle_fetch_sessions(self) -> None:
        """Write the follower lag clocks the leaders keep lazily for quiet partitions of
        incremental fetch sessions (kafkasim.core.quiet_sessions.LAZY), so that
        ``Partition.remote`` reads as Kafka's would."""
        for b in self.brokers.values():
            if b.replica_manager.quiet:
                b.replica_manager.settle_fetch_sessions()

    def run_until(self, condition: Callable[[Cluster], bool], timeout_ms: int = 60000,
                  *, check: Callable[[Cluster], None] | None = None,
                  raise_on_timeout: bool = False) -> bool:
        """Run event by event until ``condition(cluster)`` holds; False after ``timeout_ms``,
        or with ``raise_on_timeout`` a ``ConditionTimeout`` naming the condition and the times."""
        _check_ms("run_until(timeout_ms)", timeout_ms)
        e = self.engine
        start = e.now
        deadline = start + timeout_ms
        if condition(self):
            return True
        while e.peek_time() is not None and e.peek_time() <= deadline:
            e.step()
            if check is not None:
                check(self)
            if condition(self):
                self.settle_fetch_sessions()
                return True
        e.now = max(e.now, deadline)
        self.settle_fetch_sessions()
        if condition(self):
            return True
        if raise_on_timeout:
            raise ConditionTimeout(
                f"run_until: condition {_condition_name(condition)} did not hold within "
                f"{timeout_ms} ms (ran from {start} ms to {e.now} ms)")
        return False

    def step(self) -> bool:
        out = self.engine.step()
        self.settle_fetch_sessions()
        return out

    def at(self, time_ms: int, fn: Callable[[Cluster], None]) -> None:
        """Call ``fn(cluster)`` at an absolute simulated time (must be picklable for snapshots)."""
        self.engine.schedule_at(time_ms, "call", fn)

    # -- event dispatch ---------------------------------------------------------------------
    def record(self, kind: str, node, topic: str = "", partition: int = -1, detail=None) -> None:
        self.trace.rows.append((self.engine.now, kind, node, topic, partition, detail))

    def _call(self, fn) -> None:
        fn(self)

    def _metrics_sample(self) -> None:
        if self.trace.spill_dir is not None:   # every row so far was checked: spill them
            self.trace.maybe_spill()
        self.timeout_scheduler.compact()
        self.metrics.sample(self.engine.now, self.brokers.values(),
                            None if self.kraft is None else self.kraft.nodes.values())
        self.engine.schedule(self.metrics.interval_ms, "metrics_sample")

    # -- ZooKeeper-driven control plane -------------------------------------------------------
    # -- ZooKeeper sessions -------------------------------------------------------------------
    # -- topics and configs -------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = 1, replication_factor: int | None = None,
                     *, assignment: list[list[int]] | None = None, config: dict | None = None,
                     wait: bool = True) -> dict[int, list[int]]:
        """``kafka-topics --create``: validate, assign replicas, write ZooKeeper; the controller
        then elects leaders. With ``wait`` the simulation runs until every replica knows its
        role. Returns the assignment (partition -> replicas, preferred leader first)."""
        reason = invalid_topic_reason(name)
        if reason is not None:
            raise ClusterError(f"Topic name is invalid: {reason} (INVALID_TOPIC_EXCEPTION)")
        if name in self.topic_configs:
            raise ClusterError(f"Topic '{name}' already exists. (TOPIC_ALREADY_EXISTS)")
        overrides = dict(config or {})
        tconf = kconfig.topic_config(overrides, self.broker_config, self.kafka_version)
        if self.kraft is not None:
            return self._create_topic_kraft(name, partitions, replication_factor, assignment,
                                            overrides, tconf, wait)
        live = sorted(b.id for b in self.brokers.values() if b.is_running)
        if assignment is not None:
            assign = self._validate_assignment(name, assignment)
        else:
            rf = replication_factor if replication_factor is not None \
                else self.broker_config["default.replication.factor"]
            racks = {b.id: b.rack for b in self.brokers.values()
                     if b.is_running and b.rack is not None}
            try:
                assign = assign_replicas_to_brokers(live, partitions, rf, racks=racks,
                                                    rng=self.admin_state.placement_rng)
            except PlacementError as exc:
                raise ClusterError(f"Cannot create topic '{name}': {exc} "
                                   "(INVALID_REPLICATION_FACTOR)") from exc
        self.admin_state.topic_overrides[name] = overrides
        self.topic_configs[name] = tconf
        self.topic_ids[name] = topic_id(name, self.seed)
        self.partition_counts[name] = len(assign)
        self.zk.create(f"/brokers/topics/{name}", json.dumps(
            {"version": 3, "partitions": {str(p): r for p, r in assign.items()},
             "adding_replicas": {}, "removing_replicas": {}}, separators=(",", ":")))
        self.engine.schedule(0, "controller_event", "topic_change", (name,))
        if wait:
            self.run_until(lambda c: c._topic_ready(name), timeout_ms=30000)
        return assign

    def _create_topic_kraft(self, name, partitions, replication_factor, assignment, overrides,
                            tconf, wait) -> dict[int, list[int]]:
        """KRaft: CreateTopics goes to the active controller, which places replicas with the
        StripedReplicaPlacer over the unfenced brokers and writes TopicRecord, ConfigRecords
        and PartitionRecords (ReplicationControlManager.createTopic)."""
        rf = replication_factor if replication_factor is not None \
            else self.broker_config["default.replication.factor"]
        assign_in = None
        if assignment is not None:
            assign_in = [self._validate_assignment(name, assignment)[p]
                         for p in range(len(assignment))]
        assign = self.kraft.create_topic(name, partitions, rf, assign_in, overrides)
        self.admin_state.topic_overrides[name] = overrides
        self.topic_configs[name] = tconf
        self.topic_ids[name] = topic_id(name, self.seed)
        self.partition_counts[name] = len(assign)
        if wait:
            self.run_until(lambda c: c._topic_ready(name), timeout_ms=30000)
        return assign

    def _validate_assignment(self, name, assignment) -> dict[int, list[int]]:
        if not assignment:
            raise ClusterError(f"Cannot create topic '{name}': the replica assignment is empty")
        if not isinstance(assignment, (list, tuple)):
            raise ClusterError(f"Cannot create topic '{name}': the replica assignment is a list "
                               f"of replica lists, got {assignment!r}")
        out = {}
        rf = -1
        for p, reps in enumerate(assignment):
            if not isinstance(reps, (list, tuple)) or not all(
                    isinstance(b, int) and not isinstance(b, bool) for b in reps):
                raise ClusterError(f"Cannot create topic '{name}': partition {p}'s replicas must "
                                   f"be a list of broker ids, got {reps!r}")
            reps = list(reps)
            if not reps:   # ReplicationControlManager.createTopic (KRaft)
                raise ClusterError(f"Cannot create topic '{name}': The manual partition "
                                   "assignment includes an empty replica list. "
                                   "(INVALID_REPLICA_ASSIGNMENT)")
            rf = len(reps) if rf < 0 else rf
            if len(reps) != rf:
                raise ClusterError(
                    f"Cannot create topic '{name}': partition {p} has {len(reps)} replicas but "
                    f"partition 0 has {rf}; all partitions must have the same replication factor")
            if len(set(reps)) != len(reps):
                raise ClusterError(f"Cannot create topic '{name}': duplicate replica in "
                                   f"partition {p}: {reps}")
            unknown = [b for b in reps if b not in self.brokers]
            if unknown:
                raise ClusterError(f"Cannot create topic '{name}': unknown broker(s) {unknown} "
                                   f"in partition {p}; brokers are {sorted(self.brokers)}")
            out[p] = reps
        return out

    def _topic_ready(self, name: str) -> bool:
        if self.kraft is not None and name not in self.kraft.image.topic_ids:
            return False
        for tp, (leader, epoch, _isr, _v) in self._partition_states(name).items():
            if leader < 0:
                return True  # offline from the start: nothing to wait for
            b = self.brokers[leader]
            part = b.replica_manager.partitions.get(tp)
            if part is None or not part.is_leader or part.leader_epoch != epoch:
                return False
            for r in part.replicas:
                rb = self.brokers[r]
                if rb.is_running and tp not in rb.metadata.partitions:
                    return False
        return bool(self._partition_states(name))

    def alter_config(self, entity_type: str, name, configs: dict,
                     delete: list[str] | None = None) -> None:
        """``kafka-configs --alter --add-config k=v [--delete-config k]`` for topics or brokers."""
        if entity_type == "topics":
            if name not in self.topic_configs:
                raise ClusterError(self._unknown_topic(name))
            overrides = dict(self.admin_state.topic_overrides[name])
            overrides.update(configs)
            for k in delete or []:
                overrides.pop(k, None)
            self.topic_configs[name] = kconfig.topic_config(overrides, self.broker_config,
                                                            self.kafka_version)
            self.admin_state.topic_overrides[name] = overrides
            if self.kraft is not None:
                self.kraft.alter_topic_configs(name, configs, delete or [])
        elif entity_type == "brokers":
            if self.kraft is not None:
                self.kraft.alter_broker_configs(name, configs, delete or [])
            overrides = dict(self.admin_state.broker_overrides)
            overrides.update(configs)
            for k in delete or []:
                overrides.pop(k, None)
            new = kconfig.with_simulator_fallbacks(
                kconfig.broker_config(overrides, self.kafka_version))
            targets = list(self.brokers) if name in (None, "", "default") else [name]
            for bid in targets:
                if bid not in self.brokers:
                    raise ClusterError(f"Unknown broker {bid}; brokers are {sorted(self.brokers)}")
                cfg = dict(new)
                cfg["broker.id"] = bid
                cfg["broker.rack"] = self.brokers[bid].rack
                self.brokers[bid].config.clear()
                self.brokers[bid].config.update(cfg)
            if name in (None, "", "default"):
                self.admin_state.broker_overrides = overrides
                self.broker_config = new
            for t, ov in self.admin_state.topic_overrides.items():
                self.topic_configs[t] = kconfig.topic_config(ov, self.broker_config,
                                                             self.kafka_version)
        else:
            raise ClusterError(f"Unknown entity type {entity_type!r}: use 'topics' or 'brokers'")
        self.record("alter_config", "admin", name if entity_type == "topics" else "", -1,
                    ev.AlterConfig(entity_type, name, tuple(configs.items())))

    def _unknown_topic(self, name) -> str:
        import difflib

        close = difflib.get_close_matches(str(name), list(self.topic_configs), n=1)
        hint = f" Did you mean '{close[0]}'?" if close else ""
        return f"Topic '{name}' does not exist (UNKNOWN_TOPIC_OR_PARTITION).{hint}"

    def partition_count(self, topic: str) -> int:
        if topic not in self.topic_configs:
            raise ClusterError(self._unknown_topic(topic))
        return self.partition_counts[topic]

    def check_partition(self, topic: str, partition: int) -> None:
        n = self.partition_count(topic)
        if not isinstance(partition, int) or not 0 <= partition < n:
            raise ClusterError(f"Topic '{topic}' has partitions 0..{n - 1}; partition "
                               f"{partition} does not exist (UNKNOWN_TOPIC_OR_PARTITION)")

    # -- state queries ------------------------------------------------------------------------
    def _partition_states(self, topic: str) -> dict[tuple[str, int], tuple]:
        """Authoritative partition state, as ZooKeeper holds it (KRaft: the committed metadata
        image): (topic, partition) -> (leader, leader epoch, isr, partition epoch)."""
        if self.kraft is not None:
            return {tp: (r.leader, r.leader_epoch, tuple(r.isr), r.partition_epoch)
                    for tp, r in sorted(self.kraft.image.partitions.items()) if tp[0] == topic}
        out = {}
        node = self.zk.get(f"/brokers/topics/{topic}")
        if node is None:
            return out
        for p in sorted(node.json()["partitions"], key=int):
            st = self.zk.get(f"/brokers/topics/{topic}/partitions/{p}/state")
            if st is not None:
                d = st.json()
                out[(topic, int(p))] = (d["leader"], d["leader_epoch"], tuple(d["isr"]),
                                        st.version)
        return out

    def topics(self) -> list[str]:
        return sorted(self.topic_configs)

    def assignment(self, topic: str) -> dict[int, list[int]]:
        if self.kraft is not None:
            if topic not in self.topic_configs:
                raise ClusterError(self._unknown_topic(topic))
            return {tp[1]: list(r.replicas) for tp, r in
                    sorted(self.kraft.image.partitions.items()) if tp[0] == topic}
        node = self.zk.get(f"/brokers/topics/{topic}")
        if node is None:
            raise ClusterError(self._unknown_topic(topic))
        return {int(p): list(r) for p, r in sorted(node.json()["partitions"].items(),
                                                   key=lambda kv: int(kv[0]))}

    def partition_state(self, topic: str, partition: int) -> dict:
        """Leader, leader epoch, ISR and zkVersion as ZooKeeper holds them."""
        self.check_partition(topic, partition)
        leader, epoch, isr, version = self._partition_states(topic)[(topic, partition)]
        return {"leader": leader, "leader_epoch": epoch, "isr": list(isr),
                "replicas": self.assignment(topic)[partition], "partition_epoch": version}

    def leader(self, topic: str, partition: int = 0) -> int:
        return self.partition_state(topic, partition)["leader"]

    def isr(self, topic: str, partition: int = 0) -> list[int]:
        return self.partition_state(topic, partition)["isr"]

    def log(self, broker: int, topic: str, partition: int = 0):
        """The replica's Log on ``broker`` (raises if the broker hosts no such replica).

        A replica whose broker has not received its first LeaderAndIsr yet has no log on disk
        (Kafka creates it then: ReplicaManager.becomeLeaderOrFollower); this returns an empty
        log in its place (LEO 0, HW 0), not attached to the broker."""
        self.check_partition(topic, partition)
        if broker not in self.brokers:
            raise ClusterError(f"Unknown broker {broker}; brokers are {sorted(self.brokers)}")
        log = self.brokers[broker].logs.get((topic, partition))
        if log is None:
            replicas = self.assignment(topic)[partition]
            if broker not in replicas:
                raise ClusterError(f"Broker {broker} hosts no replica of {topic}-{partition}; "
                                   f"replicas are {replicas}")
            return Log(topic, partition)
        return log

    def replica_table(self, topic: str, partition: int = 0) -> list[dict]:
        """One row per assigned replica: broker, role, LEO, HW, log start, epoch, in ISR."""
        st = self.partition_state(topic, partition)
        rows = []
        for b in st["replicas"]:
            broker = self.brokers[b]
            log = broker.logs.get((topic, partition))
            rows.append({
                "broker": b,
                "role": "leader" if b == st["leader"] else "follower",
                "state": broker.state,
                "LEO": log.log_end_offset if log else 0,
                "HW": log.high_watermark if log else 0,
                "log_start": log.log_start_offset if log else 0,
                "in_isr": b in st["isr"],
            })
        return rows

    def log_records(self, broker: int, topic: str, partition: int = 0) -> list[tuple]:
        """(offset, leader epoch, value) for every record of a replica's log."""
        log = self.log(broker, topic, partition)
        return [(off, ep, self.records.value(rid)) for off, ep, rid, _ts in log.records()]

    def describe(self, topic: str | list[str] | None = None, *,
                 under_replicated_partitions: bool = False, unavailable_partitions: bool = False,
                 under_min_isr_partitions: bool = False, at_min_isr_partitions: bool = False,
                 topics_with_overrides: bool = False) -> str:
        """``kafka-topics --describe`` text for the cluster's Kafka version."""
        names = self.topics() if topic is None else ([topic] if isinstance(topic, str)
                                                     else list(topic))
        admin = self.admin_state
        image = self.kraft.image if self.kraft is not None else None
        if image is not None:
            live = list(image.unfenced_brokers())
        else:
            live = [b.id for b in self.brokers.values() if b.is_running and
                    self.zk.exists(f"/brokers/ids/{b.id}")]
        topics = []
        for name in names:
            if name not in self.topic_configs:
                raise ClusterError(self._unknown_topic(name))
            assign = self.assignment(name)
            states = self._partition_states(name)
            min_isr = self.topic_configs[name]["min.insync.replicas"]
            znode = self.zk.get(f"/brokers/topics/{name}").json() if image is None else {}
            parts = []
            for p, reps in assign.items():
                leader, _e, isr, _v = states.get((name, p), (-1, -1, (), -1))
                if image is not None:
                    reg = image.partitions[(name, p)]
                    ar, rr = list(reg.adding_replicas), list(reg.removing_replicas)
                    elr = (list(reg.elr), list(reg.last_known_elr))
                else:
                    ar = znode.get("adding_replicas", {}).get(str(p), [])
                    rr = znode.get("removing_replicas", {}).get(str(p), [])
                    elr = None
                parts.append({"partition": p, "leader": leader, "replicas": reps,
                              "isr": list(isr), "min_isr": min_isr, "live_brokers": live,
                              "reassignment": (ar, rr) if ar or rr else None, "elr": elr})
            rf = len(assign[0]) - reassigning_adding(parts[0]["reassignment"], self.rules) \
                if assign else 0
            topics.append({"name": name, "id": self.topic_ids[name],
                           "configs": kconfig.describe_configs(admin.topic_overrides[name],
                                                               admin.broker_overrides,
                                                               self.kafka_version),
                           "replication_factor": rf,
                           "partitions": parts})
        return describe_topics(topics, self.rules,
                               under_replicated=under_replicated_partitions,
                               unavailable=unavailable_partitions,
                               under_min_isr=under_min_isr_partitions,
                               at_min_isr=at_min_isr_partitions,
                               topics_with_overrides=topics_with_overrides)

    def high_watermark(self, topic: str, partition: int = 0) -> int:
        """The HW a client sees: the current leader's HW (−1 with no leader)."""
        leader = self.leader(topic, partition)
        if leader < 0:
            return -1
        return self.brokers[leader].logs[(topic, partition)].high_watermark

    def describe_group(self, group: str) -> str:
        """``kafka-consumer-groups --describe --group G`` (LOG-END-OFFSET is the HW)."""
        rows = []
        keys = sorted(k for k in self.group_offsets if k[0] == group)
        if not keys:
            raise ClusterError(f"Consumer group '{group}' does not exist.")
        members = {}
        for c in self.clients.values():
            if getattr(c, "group_id", None) == group:
                for tp in getattr(c, "assignment", []):
                    members[tp] = c
        for _g, topic, partition in keys:
            hw = self.high_watermark(topic, partition)
            member = members.get((topic, partition))
            rows.append((topic, partition, self.group_offsets[(group, topic, partition)],
                         hw if hw >= 0 else None,
                         f"{member.client_id}-0" if member else None,
                         "/127.0.0.1" if member else None,
                         member.client_id if member else None))
        return describe_group(group, rows)

    # -- clients ----------------------------------------------------------------------------
    def _client_name(self, prefix: str, name: str | None) -> str:
        if name is None:
            n = 1
            while f"{prefix}-{n}" in self.clients:
                n += 1
            name = f"{prefix}-{n}"
        if name in self.clients:
            raise ClusterError(f"a client named {name!r} already exists")
        return name

    def producer(self, name: str | None = None, **config):
        """A producer client; ``config`` uses Kafka's keys with dots or underscores
        (``acks="all"``, ``linger_ms=5``)."""

        name = self._client_name("producer", name)
        p = Producer(self, name, _dotted(config))
        self.clients[name] = p
        return p

    def admin(self):
        """An admin client (create/describe topics, configs, elections, offsets)."""

        return Admin(self)

    def consumer(self, group: str | None = None, name: str | None = None, **config):

        name = self._client_name("consumer", name)
        cfg = _dotted(config)
        if group is not None:
            cfg["group.id"] = group
        c = Consumer(self, name, cfg)
        self.clients[name] = c
        return c

    # -- faults the data plane supports ------------------------------------------------------------
    def _controller_node(self, node_id):
        return self.kraft.nodes.get(node_id) if self.kraft is not None else None

    def _broker(self, broker_id: int) -> Broker:
        b = self.brokers.get(broker_id)
        if b is None:
            raise ClusterError(f"Unknown broker {broker_id}; brokers are {sorted(self.brokers)}")
        return b

    def pause(self, broker: int, ms: int) -> None:
        """Stall a broker for ``ms`` (a stop-the-world GC pause): it handles nothing meanwhile."""
        _check_ms("pause(ms)", ms)
        if ms <= 0:
            raise ValueError(f"pause needs a positive duration, got {ms} ms")
        b = self._controller_node(broker) or self._broker(broker)
        b.paused_until = max(b.paused_until, self.now + ms)
        self.record("fault", broker, "", -1, ev.Pause(ms))

    def slow(self, broker: int, network_ms: int = 0, disk_ms: float = 0) -> None:
        """Add latency to every link of a broker (``network_ms`` each way) and/or make its disk
        slow: writing fetched records takes ``disk_ms`` per record (fractions allowed), so a
        follower on a slow disk falls behind under load."""
        b = self._broker(broker)
        _check_ms("slow(network_ms)", network_ms)
        if isinstance(disk_ms, bool) or not isinstance(disk_ms, (int, float)) or \
                not 0 <= disk_ms <= limits.MAX_TIME_MS:
            raise ClusterError(f"slow(disk_ms) must be a finite number of ms from 0 to "
                               f"{limits.MAX_TIME_MS}, got {disk_ms!r}")
        if network_ms < 0 or disk_ms < 0:
            raise ValueError(f"slow needs non-negative delays, got network_ms={network_ms}, "
                             f"disk_ms={disk_ms}")
        self.network.set_extra_latency(broker, network_ms)
        b.log_manager.disk_delay_ms = disk_ms
        self.record("fault", broker, "", -1, ev.Slow(network_ms, disk_ms))

    def _known_nodes(self) -> list:
        """Every node of the simulated network: brokers, KRaft controller nodes, ZooKeeper
        (ZooKeeper mode) and the clients created so far."""
        nodes: list = sorted(self.brokers)
        if self.kraft is not None:
            nodes += sorted(self.kraft.nodes)
        else:
            nodes.append(ZOOKEEPER)
        return nodes + sorted(str(c) for c in self.clients)

    def _check_node(self, node, what: str) -> None:
        if isinstance(node, bool) or not isinstance(node, (int, str)) or (
                node not in self.brokers and self._controller_node(node) is None
                and not (node == ZOOKEEPER and self.kraft is None)
                and node not in self.clients):
            raise ClusterError(f"Unknown node {node!r} in {what}; nodes are "
                               f"{self._known_nodes()}")

    def partition_network(self, *groups) -> None:
        """Split nodes into groups that cannot reach each other (clients reach everyone)."""
        gl = [list(g) for g in groups]
        for g in gl:
            for node in g:
                self._check_node(node, "partition groups")
        self.network.partition(gl)
        self.record("fault", "network", "", -1, ev.NetworkPartition(tuple(tuple(g) for g in gl)))

    def cut(self, a, b, both_ways: bool = True) -> None:
        """Cut the link from ``a`` to ``b`` (and back with ``both_ways``); both must be known
        nodes and distinct (a node always reaches itself)."""
        self._check_node(a, "cut")
        self._check_node(b, "cut")
        if a == b:
            raise ClusterError(f"cut({a!r}, {b!r}): a link joins two different nodes")
        self.network.cut(a, b, both_ways)
        self.record("fault", "network", "", -1, ev.Cut(a, b, both_ways))

    def heal(self) -> None:
        self.network.heal()
        self.record("fault", "network", "", -1, ev.Heal())

    def hold(self, type: str | None = None, src=None, dst=None, count: int = -1, *,
             where: dict | None = None) -> None:
        """Keep matching messages in flight until ``release`` (or ``drop_held``). ``where``
        selects by content, e.g. ``hold("FetchResponse", dst=3,
        where={"high_watermark": {"ge": 2}})`` (kafkasim/core/match.py)."""
        flt = MessageFilter(type, src, dst, count, where)
        self.network.holds.append(flt)
        self.network.faults_changed()
        self.record("fault", "network", "", -1,
                    ev.HoldMessages(type, src, dst, str(where) if where else ""))

    def release(self, type: str | None = None, src=None, dst=None, *,
                where: dict | None = None) -> int:
        """Stop holding matching messages and deliver those held, in their original order."""
        flt = MessageFilter(type, src, dst, where=where)
        self.network.holds = [h for h in self.network.holds if not h.same_selection(flt)] \
            if any(x is not None for x in (type, src, dst, where)) else []
        self.network.faults_changed()
        envs = self.network.release(flt)
        for env in envs:
            self.engine.schedule_at(self.network.delivery_time(env, self.now, self.engine.rng),
                                    "deliver", env.src, env.dst, env.msg, env.sent_ms,
                                    env.msg_id, self.network.incarnations.get(env.dst, 0))
        self.record("fault", "network", "", -1, ev.ReleaseMessages(len(envs)))
        return len(envs)

    def drop(self, type: str | None = None, src=None, dst=None, count: int = -1, *,
             where: dict | None = None, msg_id: int | None = None) -> int:
        """Drop matching messages from now on (``count`` of them, or all); also discards
        matching messages currently held. ``drop(msg_id=17)`` instead loses the one message
        17 now on the wire (``messages_in_flight()``), and nothing later."""
        if msg_id is not None:
            if any(x is not None for x in (type, src, dst, where)) or count != -1:
                raise ClusterError("drop(msg_id=...) loses one message on the wire: give no "
                                   "type, src, dst, count or where with it")
            if isinstance(msg_id, bool) or not isinstance(msg_id, int):
                raise ClusterError(f"drop(msg_id) must be a message id (an int), got {msg_id!r}")
            self.transport.drop_in_flight(msg_id)
            return 1
        flt = MessageFilter(type, src, dst, count, where)
        self.network.drops.append(flt)
        self.network.faults_changed()
        gone = self.network.release(MessageFilter(type, src, dst, where=where))
        for env in gone:
            self.record("drop", env.src, "", -1, (self.transport.wire_name(env.msg), env.dst,
                                                  env.msg_id, "dropped while held"))
        self.record("fault", "network", "", -1,
                    ev.DropMessages(type, src, dst, str(where) if where else ""))
        return len(gone)

    def delay(self, ms: int, type: str | None = None, src=None, dst=None, count: int = -1, *,
              where: dict | None = None) -> None:
        """Add ``ms`` of latency to matching messages from now on (``count`` of them, or all).
        Links keep their order: later messages on the same link arrive after a delayed one."""
        if not isinstance(ms, int) or isinstance(ms, bool) or ms <= 0:
            raise ClusterError(f"delay needs a positive whole number of ms, got {ms!r}")
        _check_ms("delay(ms)", ms)
        flt = MessageFilter(type, src, dst, count, where)
        self.network.delays.append((flt, ms))
        self.network.faults_changed()
        self.record("fault", "network", "", -1,
                    ev.DelayMessages(type, src, dst, str(where) if where else "", ms))

    def undelay(self) -> None:
        self.network.delays = []
        self.network.faults_changed()

    def undrop(self) -> None:
        self.network.drops = []
        self.network.faults_changed()

    # -- broker failures ------------------------------------------------------------------------
    def crash(self, broker: int) -> None:
        """kill -9 a broker: in-memory state is lost, the log dir (and page cache) survives; its
        ZooKeeper session expires after zookeeper.session.timeout.ms. In KRaft mode a controller
        node id crashes that controller (its metadata log survives)."""
        node = self._controller_node(broker)
        if node is not None:
            if node.state != "running":
                raise ClusterError(f"controller {broker} is not running")
            node.crash()
            return
        b = self._broker(broker)
        if b.state == "stopped":
            raise ClusterError(f"broker {broker} is not running")
        b.crash()

    def power_loss(self, broker: int) -> None:
        """Pull the plug: like a crash, and every log loses its unflushed suffix."""
        self._broker(broker).power_loss()

    def shutdown(self, broker: int) -> None:
        """Clean, controlled shutdown: leadership moves away first, then the process stops."""
        node = self._controller_node(broker)
        if node is not None:
            if node.state != "running":
                raise ClusterError(f"controller {broker} is not running")
            node.shutdown()
            return
        b = self._broker(broker)
        if b.state != RUNNING:
            raise ClusterError(f"broker {broker} is not running")
        b.begin_controlled_shutdown()

    def start(self, broker: int, *, retry: bool = False) -> bool:
        """Start a stopped broker: it recovers its logs from the checkpoint files and registers
        in ZooKeeper. Since Kafka 0.9 a broker that crashed cannot register while the
        ZooKeeper session of its previous process lives (zookeeper.session.timeout.ms after its
        last ping): the start fails with ``BrokerStartupError`` and the broker stays stopped.
        With ``retry`` the failure is not raised: like a process supervisor, the broker is
        started again once that session has expired. True if the broker runs now."""
        from kafkasim.control.zookeeper import NodeExists

        node = self._controller_node(broker)
        if node is not None:
            if node.state == "running":
                raise ClusterError(f"controller {broker} is already running")
            node.start()
            return True
        b = self._broker(broker)
        if self.kraft is not None:
            if b.state != "stopped":
                raise ClusterError(f"broker {broker} is already running")
            b.start()   # KRaft: a new incarnation registers; no session to wait for
            return True
        if b.state != "stopped":
            raise ClusterError(f"broker {broker} is already running")
        node = self.zk.get(f"/brokers/ids/{broker}")
        old = self.zk.sessions.get(node.ephemeral_owner) if node is not None else None
        try:
            b.start()
        except NodeExists as exc:
            at = old.last_heard_ms + old.timeout_ms if old is not None else -1
            if retry:
                self.engine.schedule_at(max(at, self.now + 1), "supervisor_start", broker)
                return False
            raise BrokerStartupError(
                f"Broker {broker} failed to start: {exc}. The ZooKeeper session of its previous "
                f"process still holds /brokers/ids/{broker}; it expires "
                f"zookeeper.session.timeout.ms ({old.timeout_ms if old else '?'} ms) after the "
                f"last ping, at t={at} ms: start the broker again after that "
                "(KafkaZkClient.registerBroker, KafkaServer.startup).", at) from exc
        return True

    def supervised_start_ms(self, broker: int) -> int | None:
        """When the process supervisor of ``start(broker, retry=True)`` starts the stopped
        ``broker`` again (its old ZooKeeper session has expired then); None if no start waits."""
        due = [e.time_ms for e in self.engine.pending_of("supervisor_start") if e.args == (broker,)]
        return due[0] if due else None

    def _supervisor_start(self, broker: int) -> None:
        if self.brokers[broker].state == "stopped":
            self.start(broker, retry=True)

    def restart(self, broker: int, clean: bool = False, wait_ms: int = 0) -> None:
        """Crash (or shut down cleanly) and start again after ``wait_ms``. After a crash the new
        process cannot register while the old ZooKeeper session lives (see ``start``): it fails
        (traced) and is started again, like under a process supervisor, once that session has
        expired."""
        b = self._broker(broker)
        if clean:
            self.shutdown(broker)
            self.run_until(lambda c: b.state == "stopped", 60000)
        elif b.state != "stopped":
            b.crash()
        if wait_ms:
            self.run(wait_ms)
        self.start(broker, retry=True)

    def session_expiry_ms(self, broker: int) -> int:
        """When the ZooKeeper session holding /brokers/ids/<broker> expires if no ping comes
        (last ping + zookeeper.session.timeout.ms); -1 when the broker is not registered.
        KRaft: when the active controller fences the broker if no heartbeat comes (its last
        contact + broker.session.timeout.ms, stale one millisecond later); -1 when fenced or
        when no controller is active."""
        if self.kraft is not None:
            node = self.kraft.active()
            b = self._broker(broker)
            if node is None:
                return -1
            st = node.controller.cluster_control.heartbeat_manager.state(b.id)
            if st is None or st.fenced():
                return -1
            return st.last_contact_ms + self.broker_config["broker.session.timeout.ms"]
        node = self.zk.get(f"/brokers/ids/{self._broker(broker).id}")
        s = self.zk.sessions.get(node.ephemeral_owner) if node is not None else None
        return -1 if s is None else s.last_heard_ms + s.timeout_ms

    def expire_session(self, broker: int) -> None:
        """Expire a broker's ZooKeeper session now (as if it had been silent too long)."""
        b = self._broker(broker)
        if self.kraft is not None:
            raise ClusterError(
                f"Kafka {self.kafka_version} runs in KRaft mode: there are no ZooKeeper sessions. "
                "A broker is fenced when the active controller has had no heartbeat from it for "
                "broker.session.timeout.ms; cut it off from the controllers (cut / "
                "partition_network) or pause it to see that")
        if not self.zk.session_alive(b.zk_lifecycle.session_id):
            raise ClusterError(f"broker {broker} has no live ZooKeeper session")
        self.record("zk_session_expired", ZOOKEEPER, "", -1,
                    ev.ZkSessionExpired(b.zk_lifecycle.session_id, broker, "request", -1))
        self.zk_control_plane.close_session(b.zk_lifecycle.session_id)

    def elect(self, topic: str, partitions: list[int] | None = None,
              election_type: str = "preferred") -> dict:
        """``kafka-leader-election --election-type preferred|unclean``: ask the controller."""
        if election_type not in ("preferred", "unclean"):
            raise ClusterError(f"election type must be 'preferred' or 'unclean', got "
                               f"{election_type!r}")
        parts = list(range(self.partition_count(topic))) if partitions is None else partitions
        for p in parts:
            self.check_partition(topic, p)
        if self.kraft is not None:
            self.admin_state.last_election_results = self.kraft.elect([(topic, p) for p in parts],
                                                          election_type)
            return dict(self.admin_state.last_election_results)
        ctl = self.zk_control_plane.controller_broker()
        if ctl is None:
            raise ClusterError("no active controller to run the election")
        self.admin_state.last_election_results = {}
        self.zk_control_plane.run_controller(ctl, "elect",
                                             ([(topic, p) for p in parts], election_type))
        return dict(self.admin_state.last_election_results)

    def alter_partition_reassignments(self, reassignments: dict) -> dict:
        """``kafka-reassign-partitions --execute`` / Admin.alterPartitionReassignments (KIP-455,
        Kafka 2.4+): ``{(topic, partition): [target replicas] or None}`` (None cancels). The
        controller starts each reassignment (KafkaController.onPartitionReassignment); it
        completes by itself once every target replica is in the ISR. Returns
        ``{(topic, partition): (error, message)}``, error "NONE" when accepted."""
        if not self.rules.alter_partition_reassignments:
            raise ClusterError(
                f"AlterPartitionReassignments needs Kafka 2.4 or newer (KIP-455); in "
                f"{self.kafka_version} kafka-reassign-partitions wrote /admin/reassign_partitions, "
                "a path kafkasim does not model")
        if self.kraft is not None:
            raise ClusterError(
                "partition reassignment is not modelled in KRaft mode yet (the KRaft controller "
                "writes adding/removing replicas into PartitionChangeRecords); use "
                "kafka_version='3.9' or older in ZooKeeper mode to study KIP-455")
        todo = {}   # an unknown partition is answered UNKNOWN_TOPIC_OR_PARTITION, not raised
        for key, target in reassignments.items():
            topic, partition = key
            todo[(topic, partition)] = None if target is None else [int(b) for b in target]
        ctl = self.zk_control_plane.controller_broker()
        if ctl is None:
            raise ClusterError("no active controller to run the reassignment (NOT_CONTROLLER)")
        self.admin_state.last_reassignment_results = {}
        self.zk_control_plane.run_controller(ctl, "alter_reassignments", (todo,))
        return dict(self.admin_state.last_reassignment_results)

    def list_partition_reassignments(self, partitions=None) -> dict:
        """``kafka-reassign-partitions --list`` / Admin.listPartitionReassignments: the
        reassignments in progress, ``{(topic, partition): {"replicas", "adding_replicas",
        "removing_replicas"}}`` (from the controller's context)."""
        ctl = self.zk_control_plane.controller_broker()
        if ctl is None:
            raise ClusterError("no active controller to list reassignments (NOT_CONTROLLER)")
        tps = None if partitions is None else [tuple(tp) for tp in partitions]
        return {tp: {"replicas": list(rs), "adding_replicas": list(ar),
                     "removing_replicas": list(rr)}
                for tp, (rs, ar, rr) in ctl.controller.list_partition_reassignments(tps).items()}

    def controller_id(self) -> int:
        """The active controller: the broker holding /controller (ZooKeeper mode) or the
        controller node leading the metadata quorum (KRaft); -1 when there is none."""
        if self.kraft is not None:
            return self.kraft.leader_id()
        b = self.zk_control_plane.controller_broker()
        return b.id if b is not None else -1

    # -- state as data ------------------------------------------------------------------------
    def snapshot(self) -> bytes:
        """The whole simulation (state, pending events, RNG) as bytes."""
        return pickle.dumps(self, protocol=pickle.HIGHEST_PROTOCOL)

    @staticmethod
    def restore(data: bytes) -> Cluster:
        """The Cluster a :meth:`snapshot` saved. For trusted snapshots only: a snapshot is a
        pickle, and unpickling data from an untrusted source can run arbitrary code (see the
        warning in Python's ``pickle`` documentation). Restore only bytes this program (or you)
        produced with ``snapshot()``; never a file received from someone else."""
        c = pickle.loads(data)
        if not isinstance(c, Cluster):
            raise TypeError("not a Cluster snapshot")
        return c

    def trace_frame(self):
        return self.trace.to_frame()

    def metrics_frame(self):
        return self.metrics.to_frame()

    def trace_digest(self) -> str:
        return self.trace.digest()

    def running_brokers(self) -> list[int]:
        return [b.id for b in self.brokers.values() if b.state == RUNNING]

    # -- swappable rules ----------------------------------------------------------------------
    def swap_rule(self, name: str, fn: Callable | None = None) -> Callable:
        """Make every partition of this cluster use ``fn`` for Kafka's rule ``name`` (one of
        ``kafkasim.core.rules.RULES``, same signature as Kafka's function there); ``fn=None``
        puts Kafka's own rule back. Returns the rule that was in place. The checkers
        (``kafkasim.observe.checks.attach``) show what a different rule breaks."""
        if name not in RULES:
            near = difflib.get_close_matches(name, RULES, n=1)
            hint = f" (did you mean {near[0]!r}?)" if near else ""
            raise ClusterError(f"unknown rule {name!r}{hint}; swappable rules: {', '.join(RULES)}")
        if fn is None:
            fn = getattr(kafka_rules, name)
        elif not callable(fn):
            raise ClusterError(f"swap_rule({name!r}, ...) needs a function, got {fn!r}")
        old = getattr(self.rulebook, name)
        setattr(self.rulebook, name, fn)
        self.record("rule_swapped", "cluster", detail=ev.RuleSwapped(
            name, f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"))
        return old

    def rule(self, name: str) -> Callable:
        """The function this cluster uses for Kafka's rule ``name`` (see ``swap_rule``)."""
        if name not in RULES:
            raise ClusterError(f"unknown rule {name!r}; rules: {', '.join(RULES)}")
        return getattr(self.rulebook, name)


def _broker_ids(brokers, racks: dict | None) -> tuple[list[int], dict[int, str]]:
    """Validate ``Cluster(brokers=..., racks=...)``: (broker ids, racks by broker id)."""
    if isinstance(brokers, bool) or not isinstance(brokers, (int, list, tuple)):
        raise ClusterError(f"brokers must be a count or a list of broker ids, got {brokers!r}")
    n = brokers if isinstance(brokers, int) else len(brokers)
    if n > limits.MAX_BROKERS:
        raise ClusterError(f"{n} brokers: more than limits.MAX_BROKERS = {limits.MAX_BROKERS}")
    ids = list(range(1, brokers + 1)) if isinstance(brokers, int) else list(brokers)
    if not ids:
        raise ClusterError("a cluster needs at least one broker")
    if len(set(ids)) != len(ids) or any(not isinstance(b, int) or isinstance(b, bool) or
                                        not 0 <= b <= limits.INT_MAX for b in ids):
        raise ClusterError(f"broker ids must be distinct ints from 0 to {limits.INT_MAX} "
                           f"(broker.id is a Java int), got {ids}")
    racks = dict(racks or {})
    unknown = sorted(b for b in racks if b not in ids)
    if unknown:
        raise ClusterError(f"racks given for unknown broker ids {unknown}; brokers are {ids}")
    return ids, racks


def _condition_name(condition) -> str:
    """A condition's name for an error message: its source line for a lambda."""
    name = getattr(condition, "__qualname__", None) or repr(condition)
    if name.endswith("<lambda>"):
        import inspect

        try:
            src = inspect.getsource(condition).strip()
        except (OSError, TypeError):
            return name
        return f"{name} ({src})"
    return name


def _dotted(config: dict) -> dict:
    return {k.replace("_", "."): v for k, v in config.items()}


_TOPIC_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")
TOPIC_NAME_MAX_LENGTH = 249   # org.apache.kafka.common.internals.Topic.MAX_NAME_LENGTH


def invalid_topic_reason(name) -> str | None:
    """Why ``name`` is not a legal topic name, or None: the rules of Kafka's
    ``Topic.validate`` / ``detectInvalidTopic`` (clients, 2.x to trunk): not empty, not ``.``
    or ``..``, at most 249 characters, only ASCII alphanumerics, ``.``, ``_`` and ``-``."""
    if not isinstance(name, str):
        return f"a topic name is a string, got {name!r}"
    if not name:
        return "the empty string is not allowed"
    if name in (".", ".."):
        return f"'{name}' is not allowed"
    if len(name) > TOPIC_NAME_MAX_LENGTH:
        return (f"the length of '{name}' is longer than the max allowed length "
                f"{TOPIC_NAME_MAX_LENGTH}")
    if any(ch not in _TOPIC_CHARS for ch in name):
        return (f"'{name}' contains one or more characters other than ASCII alphanumerics, "
                "'.', '_' and '-'")
    return None


def _check_ms(what: str, value, hi: int = limits.MAX_TIME_MS) -> None:
    """Simulated time is integer milliseconds (the engine's clock), finite and at most
    ``hi`` (limits.MAX_TIME_MS, one simulated day, for a duration)."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise ClusterError(f"{what} must be integer milliseconds, got {value!r}")
    if value < 0:
        raise ClusterError(f"{what}: cannot run for a negative duration ({value} ms)")
    if value > hi:
        raise ClusterError(f"{what} = {value} ms is beyond limits.MAX_TIME_MS "
                           f"({limits.MAX_TIME_MS} ms, one simulated day)")
