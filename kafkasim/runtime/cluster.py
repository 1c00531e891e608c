"""``Cluster``: the façade learners use — brokers, ZooKeeper, network, clients, trace, metrics.

    >>> c = Cluster(brokers=3, seed=1)
    >>> c.create_topic("orders", partitions=3, replication_factor=3)
    >>> p = c.producer(acks="all"); r = p.send("orders", "hello", partition=0); c.run(100)
    >>> print(c.describe("orders"))

Everything is deterministic given (configuration, actions, seed). The whole cluster is plain data:
``kafkasim.observe.snapshots.snapshot(cluster)`` returns bytes and ``restore(data)`` brings back an
identical simulation.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable

from kafkasim.control.zookeeper import ZooKeeper
from kafkasim.core import events as ev
from kafkasim.core import quiet_sessions
from kafkasim.core import rules as kafka_rules
from kafkasim.core.log import Log
from kafkasim.core.match import MatchError, check_node
from kafkasim.core.rules import RULES, RuleBook
from kafkasim.runtime import validation
from kafkasim.runtime.bootstrap import (
    create_brokers,
    create_controllers,
    register_handlers,
    start_processes,
    version_profile,
)
from kafkasim.runtime.broker import RUNNING, Broker
from kafkasim.runtime.clients.admin import Admin
from kafkasim.runtime.clients.consumer import Consumer
from kafkasim.runtime.clients.producer import Producer
from kafkasim.runtime.describe import (
    admin_topic_order,
    describe_group,
    describe_topics,
    reassigning_adding,
)
from kafkasim.runtime.engine import Engine
from kafkasim.runtime.metadata_cache import INTERNAL_TOPICS
from kafkasim.runtime.metrics import MetricsRecorder
from kafkasim.runtime.network import Network
from kafkasim.runtime.rows import RunList
from kafkasim.runtime.timeouts import TimeoutScheduler
from kafkasim.runtime.topics import TopicRegistry, create_topic
from kafkasim.runtime.trace import Trace
from kafkasim.runtime.transport import Transport
from kafkasim.runtime.views import ClusterInspector, known_broker
from kafkasim.runtime.zk_cluster import ZkControlPlane
from kafkasim.settings import config as kconfig
from kafkasim.settings import limits
from kafkasim.settings.exceptions import BrokerStartupError, ClusterError, ConditionTimeout
from kafkasim.settings.javautil import JavaRandom

__all__ = ["BrokerStartupError", "Cluster", "ClusterError", "CommittedOffsets", "ConditionTimeout",
           "NumberedValue", "RecordRegistry"]



class NumberedValue(tuple):
    """The value of each record of a generated run (``RateWorkload``): ``"<prefix>-<n>"`` where
    ``n`` is the record id minus ``offset``. One shared ``(prefix, offset)`` stands for the run's
    values in ``RecordRegistry.values``; ``RecordRegistry.value`` makes a record's text when
    asked, so a run stores no string per record."""

    __slots__ = ()


class RecordRegistry:
    """What each record id stands for, once per cluster: its value (the key and the producing
    client pick the partition and the batch, and nothing reads them back, so they are not
    kept); and the producers' names, whose index is each producer's id."""

    __slots__ = ("values", "producer_names")

    def __init__(self) -> None:
        # record ids start at 1; a run of records with one value holds it once
        self.values = RunList([None])
        self.producer_names: list[str] = []

    def producer_index(self, name: str) -> int:
        try:
            return self.producer_names.index(name)
        except ValueError:
            self.producer_names.append(name)
            return len(self.producer_names) - 1

    def new(self, value) -> int:
        self.values.append(value)
        return len(self.values) - 1

    def new_many(self, values) -> int:
        """``new`` for each of ``values``; returns the first of their consecutive record ids."""
        first = len(self.values)
        self.values.extend(values)
        return first

    def new_numbered(self, prefix: str, ns: range) -> int:
        """``new_many`` for the values ``f"{prefix}-{n}"`` for each ``n`` of ``ns`` (one step
        apart), kept as one ``NumberedValue``; returns the first of their record ids."""
        values = self.values
        first = values.length   # len(values), read without the call (every workload tick)
        # the previous run's value when it continues it (the same prefix and offset: a workload
        # that alone sends), so a long run keeps no object per run
        last = values.items[-1]   # the last run's value (values[-1], without the search)
        nv = last if type(last) is NumberedValue and last[1] == first - ns.start and \
            last[0] == prefix else NumberedValue((prefix, first - ns.start))
        values.repeat(nv, len(ns))
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


class CommittedOffsets(dict):
    """The committed offsets of every consumer group (the __consumer_offsets topic):
    (group, topic, partition) -> offset, and in ``leader_epochs`` the CommittedLeaderEpoch of
    each commit, None when the commit carried none (KIP-320, OffsetCommit v6+;
    GroupMetadataManager offset value v3)."""

    def __init__(self) -> None:
        super().__init__()
        self.leader_epochs: dict[tuple[str, str, int], int | None] = {}


@validation.keyword_hints
class Cluster:
    """The learner's façade: build a cluster, create topics, make clients, inject faults, run
    simulated time and read the result. Read-only views for tests and scenarios are on
    ``inspect`` (kafkasim.runtime.views), the topics' registry on ``topics``
    (kafkasim.runtime.topics)."""

    def __init__(self, brokers: int | list[int] = 3, *, seed: int = 0,
                 kafka_version: str | None = None, config: dict | None = None,
                 racks: dict[int, str] | None = None, rules: dict | None = None,
                 latency_ms: int = 1, jitter_ms: int = 1, metrics_interval_ms: int = 1000,
                 trace_messages: bool = True, per_partition_metrics: bool = True,
                 log_dirs: str | None = None, metadata_mode: str | None = None,
                 controllers: int | list[int] = 3, kraft_start: str = "together",
                 max_events: int | None = limits.DEFAULT_MAX_EVENTS) -> None:
        validation.check_cluster_args(
            seed=seed, racks=racks, config=config, rules=rules, max_events=max_events,
            trace_messages=trace_messages, per_partition_metrics=per_partition_metrics,
            log_dirs=log_dirs, kraft_start=kraft_start)
        ids, racks = _broker_ids(brokers, racks)
        for what, ms, lo in (("latency_ms", latency_ms, 0), ("jitter_ms", jitter_ms, 0),
                             ("metrics_interval_ms", metrics_interval_ms, 1)):
            # whole, finite ms (the engine's clock), checked before anything is built
            if isinstance(ms, bool) or not isinstance(ms, int) or \
                    not lo <= ms <= limits.MAX_TIME_MS:
                raise ClusterError(f"Cluster({what}) must be a whole number of milliseconds "
                                   f"from {lo} to {limits.MAX_TIME_MS:,} "
                                   f"(limits.MAX_TIME_MS), got {ms!r}")
        profile = version_profile(kafka_version, rules, config, metadata_mode)
        if kraft_start != "together" and profile.metadata_mode != "kraft":
            raise ClusterError(
                f"Cluster(kraft_start={kraft_start!r}) orders the start of a KRaft cluster's "
                f"controllers and brokers; this cluster (Kafka {profile.kafka_version}) runs "
                "ZooKeeper mode: leave kraft_start out, or choose KRaft (Kafka 4.x, or "
                "metadata_mode='kraft' from 3.3)")
        self.kafka_version = profile.kafka_version
        self.rules = profile.rules
        self.rulebook = RuleBook()   # the rule functions (kafkasim.core.rules): swap_rule
        self.broker_config = profile.broker_config
        self.engine = Engine(seed)   # clock, event queue, seeded RNG (its seed: engine.seed)
        network = Network(latency_ms, jitter_ms)
        self.zk = ZooKeeper()
        self.zk_control_plane = ZkControlPlane(self)   # sessions, controller election, events
        self.zk.notify = self.zk_control_plane.zk_data_changed
        self.trace = Trace(messages=trace_messages, clock=self)
        self.metrics = MetricsRecorder(metrics_interval_ms, per_partition_metrics)
        self.records = RecordRegistry()
        self.topics = TopicRegistry(broker_overrides=profile.broker_overrides,
                                    placement_rng=JavaRandom(seed))
        self.group_offsets = CommittedOffsets()
        self.clients: dict[str, object] = {}
        # process timers and cancellable request timeouts (kafkasim.runtime.timeouts)
        self.timeout_scheduler = TimeoutScheduler(self)
        self.inspect = ClusterInspector(self)
        self.engine.max_events = max_events   # EventLimitExceeded past it (None: unlimited)
        self.brokers: dict[int, Broker] = create_brokers(self, ids, racks, log_dirs)
        # message delivery over the network (kafkasim.runtime.transport.Transport)
        self.transport = Transport(self, network, self.zk_control_plane.controller_queues)
        self.kraft = None
        if profile.metadata_mode == "kraft":
            self.kraft = create_controllers(self, controllers, ids)
            self.kraft.trace_start()
        register_handlers(self)
        start_processes(self, ids, controllers_first=kraft_start == "controllers_first")
        self.inspect.ready_ms = self.now

    def __repr__(self) -> str:
        return (f"Cluster(brokers={list(self.brokers)}, kafka_version={self.kafka_version!r}, "
                f"seed={self.engine.seed}, now={self.now} ms)")

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
            _settle_fetch_sessions(self.brokers)
            return
        e = self.engine
        while e.peek_time() is not None and e.peek_time() <= time_ms:
            e.step()
            check(self)
        e.now = max(e.now, time_ms)
        _settle_fetch_sessions(self.brokers)

    def run_until(self, condition: Callable[[Cluster], bool], timeout_ms: int = 60000,
                  *, check: Callable[[Cluster], None] | None = None,
                  raise_on_timeout: bool = False) -> bool:
        """Run event by event until ``condition(cluster)`` holds; False after ``timeout_ms``,
        or with ``raise_on_timeout`` a ``ConditionTimeout`` naming the condition and the times."""
        validation.check_callable("run_until(condition)", condition)
        validation.check_callable("run_until(check)", check, optional=True)
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
                _settle_fetch_sessions(self.brokers)
                return True
        e.now = max(e.now, deadline)
        _settle_fetch_sessions(self.brokers)
        if condition(self):
            return True
        if raise_on_timeout:
            raise ConditionTimeout(
                f"run_until: condition {_condition_name(condition)} did not hold within "
                f"{timeout_ms} ms (ran from {start} ms to {e.now} ms)")
        return False

    def step(self) -> bool:
        out = self.engine.step()
        _settle_fetch_sessions(self.brokers)
        return out

    def at(self, time_ms: int, fn: Callable[[Cluster], None]) -> None:
        """Call ``fn(cluster)`` at an absolute simulated time (must be picklable for snapshots)."""
        validation.check_schedule_time(self, time_ms, fn)
        self.engine.schedule_at(time_ms, "call", fn)

    # -- topics and configs -------------------------------------------------------------------
    def create_topic(self, name: str, partitions: int = 1, replication_factor: int | None = None,
                     *, assignment: list[list[int]] | None = None, config: dict | None = None,
                     wait: bool = True) -> dict[int, list[int]]:
        """``kafka-topics --create``: validate, assign replicas, write ZooKeeper; the controller
        then elects leaders. With ``wait`` the simulation runs until every replica knows its
        role. Returns the assignment (partition -> replicas, preferred leader first)."""
        validation.check_topic_config("create_topic", config)
        validation.check_flag("create_topic(wait)", wait)
        return create_topic(self, name, partitions, replication_factor, assignment, config, wait)

    def alter_config(self, entity_type: str, name, configs: dict,
                     delete: list[str] | None = None) -> None:
        """``kafka-configs --alter --add-config k=v [--delete-config k]`` for topics or brokers."""
        validation.check_alter_config(self, entity_type, name, configs, delete)
        unclean_before = self.zk_control_plane.controller_unclean_default()
        topics = self.topics
        if entity_type == "topics":
            topics.check_topic(name)
            overrides = dict(topics.overrides[name])
            overrides.update(configs)
            for k in delete or []:
                overrides.pop(k, None)
            config = kconfig.topic_config(overrides, self.broker_config, self.kafka_version)
            if self.kraft is not None:   # (may fail: then nothing here changes either)
                self.kraft.alter_topic_configs(name, configs, delete or [])
            topics.configs[name] = config
            topics.overrides[name] = overrides
        elif entity_type == "brokers":
            overrides = dict(topics.broker_overrides)
            overrides.update(configs)
            for k in delete or []:
                overrides.pop(k, None)
            # Validated before anything is written, so a refused key leaves no ConfigRecord.
            new = kconfig.with_simulator_fallbacks(
                kconfig.broker_config(overrides, self.kafka_version))
            if self.kraft is not None:
                self.kraft.alter_broker_configs(name, configs, delete or [])
            targets = list(self.brokers) if name in (None, "", "default") else [name]
            for bid in targets:
                broker = known_broker(self.brokers, bid)
                cfg = dict(new)
                cfg["broker.id"] = bid
                cfg["broker.rack"] = broker.rack
                broker.config.clear()
                broker.config.update(cfg)
            if name in (None, "", "default"):
                topics.broker_overrides = overrides
                self.broker_config = new
            topics.reconfigure(self.broker_config, self.kafka_version)
        else:
            raise ClusterError(f"Unknown entity type {entity_type!r}: use 'topics' or 'brokers'")
        for broker in self.brokers.values():   # the logs' configs (LogManager.updateTopicConfig)
            broker.log_manager.update_topic_configs(topics.configs)
        if self.kraft is None:   # the config change notification reaches the ZK controller
            self.zk_control_plane.config_changed(entity_type, name, unclean_before)
        self.trace.record("alter_config", "admin", name if entity_type == "topics" else "", -1,
                          ev.AlterConfig(entity_type, name, tuple(configs.items())))

    def assignment(self, topic: str) -> dict[int, list[int]]:
        if self.kraft is not None:
            self.topics.check_topic(topic)
            return {tp[1]: list(r.replicas) for tp, r in
                    sorted(self.kraft.image.partitions.items()) if tp[0] == topic}
        node = self.zk.get(f"/brokers/topics/{topic}")
        if node is None:
            raise ClusterError(self.topics.unknown_topic_message(topic))
        return {int(p): list(r) for p, r in sorted(node.json()["partitions"].items(),
                                                   key=lambda kv: int(kv[0]))}

    def leader(self, topic: str, partition: int = 0) -> int:
        return self.inspect.partition_state(topic, partition)["leader"]

    def isr(self, topic: str, partition: int = 0) -> list[int]:
        return self.inspect.partition_state(topic, partition)["isr"]

    def log(self, broker: int, topic: str, partition: int = 0):
        """The replica's Log on ``broker`` (raises if the broker hosts no such replica).

        A replica whose broker has not received its first LeaderAndIsr yet has no log on disk
        (Kafka creates it then: ReplicaManager.becomeLeaderOrFollower); this returns an empty
        log in its place (LEO 0, HW 0), not attached to the broker."""
        validation.check_fault_node(self, broker, "log(broker)", controllers=False)
        self.topics.check_partition(topic, partition)
        log = known_broker(self.brokers, broker).logs.get((topic, partition))
        if log is None:
            replicas = self.assignment(topic)[partition]
            if broker not in replicas:
                raise ClusterError(f"Broker {broker} hosts no replica of {topic}-{partition}; "
                                   f"replicas are {replicas}")
            return Log(topic, partition)
        return log

    def replica_table(self, topic: str, partition: int = 0) -> list[dict]:
        """One row per assigned replica: broker, role, LEO, HW, log start, epoch, in ISR."""
        st = self.inspect.partition_state(topic, partition)
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
                 topics_with_overrides: bool = False, exclude_internal: bool = False) -> str:
        """``kafka-topics --describe`` text for the cluster's Kafka version (``exclude_internal``:
        --exclude-internal, 2.1+, leaves out __consumer_offsets and __transaction_state)."""
        validation.check_topic_names("describe", topic)
        validation.check_flag("describe(exclude_internal)", exclude_internal)
        names = self.topics.names() if topic is None else ([topic] if isinstance(topic, str)
                                                     else list(topic))
        if exclude_internal:
            if not self.rules.tools.describe_exclude_internal:
                raise ClusterError("exclude-internal is not a recognized option (kafka-topics "
                                   f"has it since 2.1; this cluster runs {self.kafka_version})")
            names = [n for n in names if n not in INTERNAL_TOPICS]
        names = admin_topic_order(names) if self.rules.tools.describe_topics_in_admin_result_order \
            else sorted(names)
        registry = self.topics
        image = self.kraft.image if self.kraft is not None else None
        if image is not None:
            live = list(image.unfenced_brokers())
        else:
            live = [b.id for b in self.brokers.values() if b.is_running and
                    self.zk.exists(f"/brokers/ids/{b.id}")]
        topics = []
        for name in names:
            registry.check_topic(name)
            assign = self.assignment(name)
            states = self.inspect.partition_states(name)
            min_isr = registry.configs[name]["min.insync.replicas"]
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
            topics.append({"name": name, "id": registry.ids[name],
                           "configs": kconfig.describe_configs(registry.overrides[name],
                                                               registry.broker_overrides,
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
    def producer(self, name: str | None = None, **config):
        """A producer client; ``config`` uses Kafka's keys with dots or underscores
        (``acks="all"``, ``linger_ms=5``)."""

        name = _client_name(self.clients, "producer", name)
        p = Producer(self, name, _dotted(config))
        self.clients[name] = p
        return p

    def admin(self):
        """An admin client (create/describe topics, configs, elections, offsets)."""

        return Admin(self)

    def consumer(self, group: str | None = None, name: str | None = None, **config):

        name = _client_name(self.clients, "consumer", name)
        cfg = _dotted(config)
        if group is not None:
            cfg["group.id"] = group
        c = Consumer(self, name, cfg)
        self.clients[name] = c
        return c

    # -- faults the data plane supports ------------------------------------------------------------
    def pause(self, broker: int, ms: int) -> None:
        """Stall a broker for ``ms`` (a stop-the-world GC pause): it handles nothing meanwhile."""
        validation.check_fault_node(self, broker, "pause(broker)")
        _check_ms("pause(ms)", ms)
        if ms <= 0:
            raise ClusterError(f"pause(ms): pause needs a positive duration (ms >= 1), got "
                               f"{ms} ms")
        b = _controller_node(self.kraft, broker) or known_broker(self.brokers, broker)
        b.paused_until = max(b.paused_until, self.now + ms)
        self.trace.record("fault", broker, "", -1, ev.Pause(ms))

    def slow(self, broker: int, network_ms: int = 0, disk_ms: float = 0) -> None:
        """Add latency to every link of a broker (``network_ms`` each way) and/or make its disk
        slow: writing fetched records takes ``disk_ms`` per record (fractions allowed), so a
        follower on a slow disk falls behind under load."""
        validation.check_fault_node(self, broker, "slow(broker)", controllers=False)
        b = known_broker(self.brokers, broker)
        _check_ms("slow(network_ms)", network_ms)
        if isinstance(disk_ms, bool) or not isinstance(disk_ms, (int, float)) or \
                not 0 <= disk_ms <= limits.MAX_TIME_MS:
            raise ClusterError(f"slow(disk_ms) must be a finite number of ms from 0 to "
                               f"{limits.MAX_TIME_MS}, got {disk_ms!r}")
        if network_ms < 0 or disk_ms < 0:
            raise ValueError(f"slow needs non-negative delays, got network_ms={network_ms}, "
                             f"disk_ms={disk_ms}")
        self.transport.network.set_extra_latency(broker, network_ms)
        b.log_manager.disk_delay_ms = disk_ms
        self.trace.record("fault", broker, "", -1, ev.Slow(network_ms, disk_ms))

    def partition_network(self, *groups) -> None:
        """Split nodes into groups that cannot reach each other (clients reach everyone)."""
        for g in groups:
            if not isinstance(g, (list, tuple, set, frozenset, range)):
                raise ClusterError(f"partition_network: each group is a list of node ids, such "
                                   f"as partition_network([1, 2], [3]), got {g!r}")
        gl = [list(g) for g in groups]
        seen: set = set()
        for g in gl:
            for node in g:
                _check_node(self, node, "partition groups")
                if node in seen:
                    raise ClusterError(f"partition_network: node {node!r} is in two partition "
                                       f"groups {gl}")
                seen.add(node)
        if len([g for g in gl if g]) < 2:
            raise ClusterError(f"partition_network{tuple(gl)!r} cuts nothing: give two or more "
                               "groups of node ids, such as partition_network([1, 2], [3]) "
                               "(nodes left out still reach everyone)")
        self.transport.network.partition(gl)
        self.trace.record("fault", "network", "", -1,
                          ev.NetworkPartition(tuple(tuple(g) for g in gl)))

    def cut(self, a, b, both_ways: bool = True) -> None:
        """Cut the link from ``a`` to ``b`` (and back with ``both_ways``); both must be known
        nodes and distinct (a node always reaches itself)."""
        _check_node(self, a, "cut")
        _check_node(self, b, "cut")
        validation.check_flag("cut(both_ways)", both_ways)
        if a == b:
            raise ClusterError(f"cut({a!r}, {b!r}): a link joins two different nodes")
        self.transport.network.cut(a, b, both_ways)
        self.trace.record("fault", "network", "", -1, ev.Cut(a, b, both_ways))

    def heal(self) -> None:
        self.transport.network.heal()
        self.trace.record("fault", "network", "", -1, ev.Heal())

    def hold(self, type: str | None = None, src=None, dst=None, count: int = -1, *,
             where: dict | None = None) -> None:
        """Keep matching messages in flight until ``release`` (or ``drop_held``). ``where``
        selects by content, e.g. ``hold("FetchResponse", dst=3,
        where={"high_watermark": {"ge": 2}})`` (kafkasim/core/match.py)."""
        flt = self.transport.message_filter(type, src, dst, count, where, what="hold")
        net = self.transport.network
        net.holds.append(flt)
        net.faults_changed()
        self.trace.record("fault", "network", "", -1,
                          ev.HoldMessages(type, src, dst, str(where) if where else ""))

    def release(self, type: str | None = None, src=None, dst=None, *,
                where: dict | None = None) -> int:
        """Stop holding matching messages and deliver those held, in their original order."""
        flt = self.transport.message_filter(type, src, dst, where=where, what="release")
        net = self.transport.network
        net.holds = [h for h in net.holds if not h.same_selection(flt)] \
            if any(x is not None for x in (type, src, dst, where)) else []
        net.faults_changed()
        envs = net.release(flt)
        for env in envs:
            self.engine.schedule_at(net.delivery_time(env, self.now, self.engine.rng),
                                    "deliver", env.src, env.dst, env.msg, env.sent_ms,
                                    env.msg_id, net.incarnations.get(env.dst, 0))
        self.trace.record("fault", "network", "", -1, ev.ReleaseMessages(len(envs)))
        return len(envs)

    def delay(self, ms: int, type: str | None = None, src=None, dst=None, count: int = -1, *,
              where: dict | None = None) -> None:
        """Add ``ms`` of latency to matching messages from now on (``count`` of them, or all).
        Links keep their order: later messages on the same link arrive after a delayed one."""
        if not isinstance(ms, int) or isinstance(ms, bool) or ms <= 0:
            raise ClusterError(f"delay needs a positive whole number of ms, got {ms!r}")
        _check_ms("delay(ms)", ms)
        flt = self.transport.message_filter(type, src, dst, count, where, what="delay")
        net = self.transport.network
        net.delays.append((flt, ms))
        net.faults_changed()
        self.trace.record("fault", "network", "", -1,
                          ev.DelayMessages(type, src, dst, str(where) if where else "", ms))

    # -- broker failures ------------------------------------------------------------------------
    def crash(self, broker: int) -> None:
        """kill -9 a broker: in-memory state is lost, the log dir (and page cache) survives; its
        ZooKeeper session expires after zookeeper.session.timeout.ms. In KRaft mode a controller
        node id crashes that controller (its metadata log survives)."""
        validation.check_fault_node(self, broker, "crash(broker)")
        node = _controller_node(self.kraft, broker)
        if node is not None:
            if node.state != "running":
                raise ClusterError(f"controller {broker} is not running")
            node.crash()
            return
        b = known_broker(self.brokers, broker)
        if b.state == "stopped":
            raise ClusterError(f"broker {broker} is not running")
        b.crash()

    def power_loss(self, broker: int) -> None:
        """Pull the plug: like a crash, and every log loses its unflushed suffix."""
        validation.check_fault_node(self, broker, "power_loss(broker)")
        if _controller_node(self.kraft, broker) is not None:
            raise ClusterError(
                f"power_loss({broker}): {broker} is a KRaft controller node, and a voter "
                f"flushes its metadata log before it counts toward the quorum's high "
                f"watermark, so there is no unflushed tail to lose. Use crash({broker}); "
                f"power_loss takes a broker: {sorted(self.brokers)}")
        known_broker(self.brokers, broker).power_loss()

    def shutdown(self, broker: int) -> None:
        """Clean, controlled shutdown: leadership moves away first, then the process stops."""
        validation.check_fault_node(self, broker, "shutdown(broker)")
        node = _controller_node(self.kraft, broker)
        if node is not None:
            if node.state != "running":
                raise ClusterError(f"controller {broker} is not running")
            node.shutdown()
            return
        b = known_broker(self.brokers, broker)
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
        validation.check_fault_node(self, broker, "start(broker)")
        validation.check_flag("start(retry)", retry)
        from kafkasim.control.zookeeper import NodeExists

        node = _controller_node(self.kraft, broker)
        if node is not None:
            if node.state == "running":
                raise ClusterError(f"controller {broker} is already running")
            node.start()
            return True
        b = known_broker(self.brokers, broker)
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

    def restart(self, broker: int, clean: bool = False, wait_ms: int = 0) -> None:
        """Crash (or shut down cleanly) and start again after ``wait_ms``. After a crash the new
        process cannot register while the old ZooKeeper session lives (see ``start``): it fails
        (traced) and is started again, like under a process supervisor, once that session has
        expired."""
        validation.check_fault_node(self, broker, "restart(broker)", controllers=False)
        b = known_broker(self.brokers, broker)
        _check_ms("restart(wait_ms)", wait_ms)      # before the crash: a bad call changes nothing
        validation.check_flag("restart(clean)", clean)
        if clean:
            self.shutdown(broker)
            self.run_until(lambda c: b.state == "stopped", 60000)
        elif b.state != "stopped":
            b.crash()
        if wait_ms:
            self.run(wait_ms)
        self.start(broker, retry=True)

    def elect(self, topic: str, partitions: list[int] | None = None,
              election_type: str = "preferred") -> dict:
        """``kafka-leader-election --election-type preferred|unclean``: ask the controller."""
        if election_type not in ("preferred", "unclean"):
            kinds = ("preferred", "unclean")
            raise ClusterError(f"elect(election_type) must be 'preferred' or 'unclean', got "
                               f"{election_type!r}{validation.did_you_mean(election_type, kinds)}")
        validation.check_partition_list("elect", partitions)
        topics = self.topics
        parts = list(range(topics.partition_count(topic))) if partitions is None else partitions
        for p in parts:
            topics.check_partition(topic, p)
        if self.kraft is not None:
            return dict(self.kraft.elect([(topic, p) for p in parts], election_type))
        ctl = self.zk_control_plane.controller_broker()
        if ctl is None:
            raise ClusterError("no active controller to run the election")
        results = self.zk_control_plane.run_controller(
            ctl, "elect", ([(topic, p) for p in parts], election_type))
        return dict(results or {})

    def controller_id(self) -> int:
        """The active controller: the broker holding /controller (ZooKeeper mode) or the
        controller node leading the metadata quorum (KRaft); -1 when there is none."""
        if self.kraft is not None:
            return self.kraft.leader_id()
        b = self.zk_control_plane.controller_broker()
        return b.id if b is not None else -1

    # -- the run as data frames (the whole simulation as bytes: observe.snapshots.snapshot) ---
    def trace_frame(self):
        return self.trace.to_frame()

    def metrics_frame(self):
        return self.metrics.to_frame()

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
        self.trace.record("rule_swapped", "cluster", detail=ev.RuleSwapped(
            name, f"{getattr(fn, '__module__', '?')}.{getattr(fn, '__qualname__', repr(fn))}"))
        return old

    def rule(self, name: str) -> Callable:
        """The function this cluster uses for Kafka's rule ``name`` (see ``swap_rule``)."""
        if name not in RULES:
            raise ClusterError(f"unknown rule {name!r}; rules: {', '.join(RULES)}")
        return getattr(self.rulebook, name)


def _broker_ids(brokers, racks: dict | None) -> tuple[list[int], dict[int, str]]:
    """Validate ``Cluster(brokers=..., racks=...)``: (broker ids, racks by broker id)."""
    allowed = (f"a broker count from 1 to {limits.MAX_BROKERS} (limits.MAX_BROKERS) or a list "
               "of broker ids")
    if isinstance(brokers, bool) or not isinstance(brokers, (int, list, tuple)):
        raise ClusterError(f"Cluster(brokers) must be {allowed}, got {brokers!r} "
                           f"({type(brokers).__name__})")
    n = brokers if isinstance(brokers, int) else len(brokers)
    if n > limits.MAX_BROKERS:
        raise ClusterError(f"{n} brokers: more than limits.MAX_BROKERS = {limits.MAX_BROKERS}")
    ids = list(range(1, brokers + 1)) if isinstance(brokers, int) else list(brokers)
    if not ids:
        raise ClusterError(f"a cluster needs at least one broker: Cluster(brokers) must be "
                           f"{allowed}, got {brokers!r}")
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


def _client_name(clients: dict, prefix: str, name: str | None) -> str:
    """``name``, or the first free ``<prefix>-<n>``; ClusterError if a client has the name."""
    if name is None:
        n = 1
        while f"{prefix}-{n}" in clients:
            n += 1
        name = f"{prefix}-{n}"
    if name in clients:
        raise ClusterError(f"a client named {name!r} already exists")
    return name


def _controller_node(kraft, node_id):
    """The KRaft controller node ``node_id`` (None in ZooKeeper mode or for another id)."""
    return kraft.nodes.get(node_id) if kraft is not None else None


def _check_node(cluster: Cluster, node, what: str) -> None:
    """ClusterError unless ``node`` is a node of the simulated network (``inspect.nodes``):
    kafkasim.core.match.check_node, the check of scenario files, with its did-you-mean."""
    try:
        check_node(node, cluster.inspect.nodes(), what)
    except MatchError as exc:
        text = str(exc)
        raise ClusterError(text[:1].upper() + text[1:]) from None


def _settle_fetch_sessions(brokers: dict) -> None:
    """Write the follower lag clocks the leaders keep lazily for quiet partitions of
    incremental fetch sessions (kafkasim.core.quiet_sessions.LAZY), so that
    ``Partition.remote`` reads as Kafka's would (after every run of the engine)."""
    for b in brokers.values():
        if b.replica_manager.quiet:
            quiet_sessions.settle_all(b.replica_manager)


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
