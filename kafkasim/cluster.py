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
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from kafkasim import config as kconfig
from kafkasim import events as ev
from kafkasim import limits, versions
from kafkasim.broker import RUNNING, STOPPED, Broker
from kafkasim.clients.admin import Admin
from kafkasim.clients.consumer import Consumer
from kafkasim.clients.producer import Producer
from kafkasim.describe import describe_group, describe_topics, reassigning_adding, topic_id
from kafkasim.engine import Engine
from kafkasim.exceptions import BrokerStartupError, ClusterError, ConditionTimeout
from kafkasim.kafka_apis import handle_fetcher_response
from kafkasim.metrics import MetricsRecorder
from kafkasim.modes import metadata_mode_for
from kafkasim.network import MessageFilter, Network
from kafkasim.protocol import rules as kafka_rules
from kafkasim.protocol.javautil import JavaRandom
from kafkasim.protocol.messages import (
    FetchRequest,
    FetchResponse,
    LeaderAndIsrRequest,
    ProduceRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kafkasim.protocol.placement import PlacementError, assign_replicas_to_brokers
from kafkasim.protocol.rules import RULES, RuleBook
from kafkasim.storage.log import Log
from kafkasim.trace import Trace
from kafkasim.views import StateViews

ZOOKEEPER = "zookeeper"  # the ZooKeeper ensemble's node name on the simulated network
CONTROLLER_RETRY_BACKOFF_MS = 300  # RequestSendThread's back-off after a failed send


__all__ = ["BrokerStartupError", "Cluster", "ClusterError", "ConditionTimeout", "NumberedValue",
           "RecordRegistry"]

_CONTROLLER_REQUESTS = (LeaderAndIsrRequest, UpdateMetadataRequest, StopReplicaRequest)


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


# an owner's wake-up time when no "timeouts" event is pending (Cluster.timeouts_of): later than
# any deadline, so "is this timeout due before the next wake-up?" is one comparison
NO_WAKE_UP = 1 << 62

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
        self.rulebook = RuleBook()   # the rule functions (kafkasim.protocol.rules): swap_rule
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
        from kafkasim.protocol.zookeeper import ZooKeeper
        self.zk = ZooKeeper()
        self.zk.notify = self._zk_data_changed
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
        # request timeouts that are almost always cancelled live in per-owner FIFOs (one per
        # delay), so they cost no engine event unless they fire (Kafka's purgatories use a timing
        # wheel likewise): owner -> [{delay: deque of entries}, wake-up time, requests in
        # flight or None, their timer, parked operations]. An entry is the list [deadline, id,
        # fn, args] and is its own handle: cancelling it sets fn to None.
        self.timeouts: dict[tuple, list] = {}
        # broker id -> its running (or last) process's entry in timeouts (Broker.start)
        self.process_timeouts: dict[int, list] = {}
        self.next_timeout_id = 0
        self.controller_queues: dict[tuple, list] = {}
        self.wire_names: dict[type, str] = {}   # message class -> its RPC name in this version

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
        from kafkasim.broker_lifecycle import BrokerLifecycleManager
        from kafkasim.kraft_cluster import (
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

    def on_metadata_committed(self, node, hw: int) -> None:
        self.kraft.on_committed(node, hw)

    def _controller_node_timer(self, node_id: int, incarnation: int, timer: str,
                               args: tuple) -> None:
        node = self.kraft.nodes.get(node_id)
        if node is None or node.state != "running" or node.incarnation != incarnation:
            return
        if node.paused_until > self.engine.now:
            self.engine.schedule_at(node.paused_until, "controller_node_timer", node_id,
                                    incarnation, timer, args)
            return
        node.on_timer(timer, args)

    def _register_handlers(self) -> None:
        """The engine's event kinds and the Cluster methods that handle them."""
        e = self.engine
        e.on("deliver", self._deliver)
        e.on("disconnect", self._disconnect)
        e.on("broker_timer", self._broker_timer)
        e.on("client_timer", self._client_timer)
        e.on("controller_event", self._controller_event)
        e.on("metrics_sample", self._metrics_sample)
        e.on("call", self._call)
        e.on("timeouts", self._fire_timeouts)
        e.on("zk_session_check", self._zk_session_check)
        e.on("try_controller", self._try_become_controller)
        e.on("controller_resend", self._controller_resend)
        e.on("supervisor_start", self._supervisor_start)
        e.on("controller_node_timer", self._controller_node_timer)

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
        incremental fetch sessions (kafkasim.protocol.fetch_session.LAZY), so that
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

    def send(self, src, dst, msg) -> None:
        if self.controller_queues and isinstance(msg, _CONTROLLER_REQUESTS) and \
                (src, dst) in self.controller_queues:
            self.controller_queues[(src, dst)].append(msg)  # keep the channel's order
            return
        net = self.network
        engine = self.engine
        now = engine.now
        if not net.plain:   # a partition, cut, hold, drop, delay or extra latency is set
            env = net.envelope(src, dst, msg, now)
            msg_id = env.msg_id
            fate = net.classify(env)
            if fate == "unreachable" and isinstance(msg, _CONTROLLER_REQUESTS):
                self._queue_controller_request(src, dst, msg)
                return
            if fate == "hold":
                net.held.append(env)
                self.record("hold", src, "", -1, (self.wire_name(msg), dst, msg_id))
                return
            if fate != "send":
                net.dropped += 1
                self.record("drop", src, "", -1, (self.wire_name(msg), dst, msg_id, fate))
                return
            t = net.delivery_time(env, now, engine.rng)
        else:
            # nothing can hold or drop it: Network.envelope and Network.delivery_time, inlined
            # (every message): the same message id, seeded latency draw and per-link FIFO
            msg_id = net.next_msg_id
            net.next_msg_id = msg_id + 1
            t = now + net.latency_ms
            if net.jitter_ms:
                t += int(engine.rng.random() * (net.jitter_ms + 1))  # uniform on 0..jitter
            link = (src, dst)
            last = net.last_delivery.get(link, 0)
            if t < last:
                t = last
            net.last_delivery[link] = t
        trace = self.trace
        if trace.messages:
            try:
                name = self.wire_names[type(msg)]
            except KeyError:
                name = self.wire_name(msg)
            trace.rows.append((now, "send", src, "", -1, (name, dst, msg_id)))
        else:
            name = None
        # the delivery event carries the Envelope's fields flat (DELIVERY: no object to build
        # per message; Network.delivery_envelope makes one for readers), the destination's
        # incarnation and the wire name for its recv row
        engine.schedule_args_at(t, "deliver",
                                (src, dst, msg, now, msg_id, net.incarnations.get(dst, 0), name))

    def _queue_controller_request(self, src, dst, msg) -> None:
        """ControllerChannelManager keeps a queue per broker and its RequestSendThread retries a
        request it could not send (backing off), so controller requests survive partitions."""
        q = self.controller_queues.get((src, dst))
        if q is None:
            self.controller_queues[(src, dst)] = [msg]
            self.engine.schedule(CONTROLLER_RETRY_BACKOFF_MS, "controller_resend", src, dst)
        else:
            q.append(msg)

    def _controller_resend(self, src, dst) -> None:
        q = self.controller_queues.get((src, dst))
        if q is None:
            return
        sender = self.brokers.get(src)
        if sender is None or not sender.is_running or sender.controller is None or \
                not self.zk.exists(f"/brokers/ids/{dst}"):
            del self.controller_queues[(src, dst)]  # the channel is gone with its controller
            return
        if sender.paused_until > self.engine.now or not self.network.can_reach(src, dst):
            self.engine.schedule(CONTROLLER_RETRY_BACKOFF_MS, "controller_resend", src, dst)
            return
        del self.controller_queues[(src, dst)]
        for msg in q:
            self.send(src, dst, msg)

    def wire_name(self, msg) -> str:
        """The RPC's name in this Kafka version (AlterPartition was AlterIsr before 3.2)."""
        cls = type(msg)
        name = self.wire_names.get(cls)
        if name is None:
            name = cls.__name__
            if name.startswith("AlterPartition") and not self.rules.alter_partition_name:
                name = "AlterIsr" + name[len("AlterPartition"):]
            self.wire_names[cls] = name
        return name

    def _deliver(self, src, dst, msg, sent_ms: int, msg_id: int, incarnation: int,
                 name: str | None = None) -> None:
        """The message ``msg_id`` (the Envelope's fields: kafkasim.network.DELIVERY) reaches its
        destination, unless it is gone, paused or cut off; ``name`` is the RPC's wire name when
        the send computed it."""
        net = self.network
        engine = self.engine
        broker = self.brokers.get(dst)   # None for clients, controllers and ZooKeeper
        if broker is None and self.kraft is not None:
            broker = self.kraft.nodes.get(dst)
        if broker is not None:
            # a running process's incarnation is its entry in Network.incarnations (start()
            # sets both; only a stop moves the network's on)
            if broker.state == STOPPED or broker.incarnation != incarnation:
                net.dropped += 1
                self.record("drop", dst, "", -1, (self.wire_name(msg), src, msg_id,
                                                  "destination process gone"))
                self._send_close(dst, src, msg)   # the refusal travels back
                return
            if broker.paused_until > engine.now:
                engine.schedule_at(broker.paused_until, "deliver", src, dst, msg, sent_ms, msg_id,
                                   incarnation, name)
                return
        if not net.plain and not net.can_reach(src, dst):
            if isinstance(msg, _CONTROLLER_REQUESTS):
                self._queue_controller_request(src, dst, msg)
                return
            net.dropped += 1
            self.record("drop", dst, "", -1, (self.wire_name(msg), src, msg_id,
                                              "network partition"))
            return
        net.delivered += 1
        trace = self.trace
        if trace.messages:
            if name is None:
                name = self.wire_name(msg)
            trace.rows.append((engine.now, "recv", dst, "", -1, (name, src, msg_id)))
        if broker is not None:
            # Broker.on_message (KafkaApis.handle) looks the handler up by type; the steady
            # traffic goes to its handler directly (every message to a broker). Only brokers are
            # sent these three (a KRaft controller's quorum fetch is RaftFetch*)
            cls = type(msg)
            if cls is FetchRequest:   # kafka_apis.handle_fetch_request
                broker.replica_manager.fetch_messages(broker, src, msg)
            elif cls is ProduceRequest:   # kafka_apis.handle_produce_request
                broker.replica_manager.append_records(broker, src, msg)
            elif cls is FetchResponse:
                handle_fetcher_response(broker, src, msg)
            else:
                broker.on_message(src, msg)
        elif dst == ZOOKEEPER:
            self._zk_request(src, msg)
        else:
            client = self.clients.get(dst)
            if client is not None:
                client.on_message(src, msg)

    def reset_connections(self, dead: int) -> None:
        """Node ``dead``'s process is gone (kill -9, power loss or shutdown) and its kernel closes
        every connection. A peer learns it only when the close reaches it (Network.close_arrival:
        one link latency later, after every response ``dead`` sent before), and then fails the
        requests it still has in flight to ``dead`` (``on_peer_gone``: NetworkClient
        .processDisconnection -> cancelInFlightRequests, a disconnected ClientResponse), requests
        parked in ``dead``'s purgatories included."""
        for b in self.brokers.values():
            if b.id != dead and b.is_running:
                self._send_close(dead, b.id, None)
        for client_id, client in self.clients.items():
            if hasattr(client, "on_peer_gone"):
                self._send_close(dead, client_id, None)
        if self.kraft is not None:
            for node in self.kraft.nodes.values():
                if node.id != dead and node.is_running and hasattr(node, "on_peer_gone"):
                    self._send_close(dead, node.id, None)

    def _send_close(self, dead, peer, msg) -> None:
        """``dead``'s kernel closes its connection to ``peer`` now: the FIN of a connection it
        had (``msg`` None), or the RST refusing ``msg``, a request that reached the dead process
        (the sender fails it when the RST arrives, a round trip after it sent it)."""
        self.engine.schedule_at(self.network.close_arrival(dead, peer, self.engine.now),
                                "disconnect", dead, peer,
                                self.network.incarnations.get(peer, 0), msg)

    def _disconnect(self, dead, peer, incarnation: int, msg) -> None:
        """The close of ``dead``'s connection reaches ``peer``, whose NetworkClient reports the
        disconnect: every request in flight to ``dead`` fails (``on_peer_gone(dead)``), or the
        refused request ``msg`` does (``on_disconnect(dead, msg)``). A peer that died or
        restarted since had no such connection any more; a paused one sees it when it resumes;
        a close the network partition cuts off is lost, like any segment (the peer learns by
        its own timeouts)."""
        net = self.network
        node = self.brokers.get(peer)
        if node is None and self.kraft is not None:
            node = self.kraft.nodes.get(peer)
        if node is not None:
            if not node.is_running or net.incarnations.get(peer, 0) != incarnation:
                return
            if node.paused_until > self.engine.now:
                self.engine.schedule_at(node.paused_until, "disconnect", dead, peer,
                                        incarnation, msg)
                return
        else:
            node = self.clients.get(peer)
            if node is None:
                return
        if (net.groups or net.cut_links) and not net.can_reach(dead, peer):
            return
        if msg is None:
            handler = getattr(node, "on_peer_gone", None)
            if handler is not None:
                handler(dead)
        else:
            handler = getattr(node, "on_disconnect", None)
            if handler is not None:
                handler(dead, msg)

    def _broker_timer(self, broker_id: int, incarnation: int, fn: Callable, args: tuple
                      ) -> None:
        b = self.brokers[broker_id]
        if not b.is_running or b.incarnation != incarnation:
            return
        if b.paused_until > self.engine.now:
            self.engine.schedule_at(b.paused_until, "broker_timer", broker_id, incarnation, fn,
                                    args)
            return
        fn(b, *args)   # a timer task: a plain function of the broker (broker._timer_...)

    def _client_timer(self, client_id: str, fn: Callable, args: tuple) -> None:
        """Call ``fn(client, *args)``: ``fn`` is a plain function of the client's class."""
        client = self.clients.get(client_id)
        if client is not None:
            fn(client, *args)

    # -- cancellable timeouts ------------------------------------------------------------------
    # An owner's timeouts sit in one FIFO per delay: a request timeout of a given length is
    # added in deadline order, so each FIFO is sorted by (deadline, id). An entry is the list
    # [deadline, id, fn, args] and is the handle add_timeout returns: cancelling it sets its fn
    # to None (firing does too), and cancelled entries at a FIFO's head are popped when the next
    # timeout is added to it or when the owner wakes up (most are cancelled: the answers arrive
    # first, in request order). A request timeout of a replica fetcher or a producer is no FIFO
    # entry but the request's in-flight entry [deadline, id, ...] (Broker.send_from_fetcher,
    # Producer._send_batches), read here as if it were one: answering the request, which pops
    # that entry, cancels it. Likewise a broker's purgatory timeout (DelayedFetch /
    # DelayedProduce, Broker.schedule_timeout) is no FIFO entry: the parked operation, with its
    # deadline_ms and timeout_id, is it, and completing the operation (taking it out of its
    # purgatory) cancels it.
    def add_timeout(self, owner: tuple, delay_ms: int, fn: Callable, args: tuple) -> list:
        """Call the owner's timer ``fn(owner object, *args)`` after ``delay_ms`` unless
        cancelled first (``cancel_timeout`` with the handle returned).
        ``owner`` is ("broker", id, incarnation) or ("client", client id)."""
        deadline = self.engine.now + delay_ms
        entry = self.timeouts_of(owner)
        try:
            fifo = entry[0][delay_ms]
        except KeyError:   # the owner's first timeout of this length
            fifo = entry[0][delay_ms] = deque()
        while fifo and fifo[0][2] is None:   # cancelled heads
            fifo.popleft()
        handle = [deadline, self.arm_timeout(owner, entry, deadline), fn, args]
        fifo.append(handle)
        return handle

    def arm_timeout(self, owner: tuple, entry: list, deadline: int) -> int:
        """A new timeout of ``owner`` (its ``timeouts_of`` entry) due at ``deadline``: its id,
        and the owner's wake-up moved earlier if it is due first (none pending: NO_WAKE_UP).
        (Broker.schedule_timeout and Broker.send_from_fetcher do this inline: every request.)"""
        tid = self.next_timeout_id
        self.next_timeout_id = tid + 1
        if deadline < entry[1]:
            entry[1] = deadline
            self.engine.schedule_at(deadline, "timeouts", owner)
        return tid

    def timeouts_of(self, owner: tuple, requests: dict | None = None,
                    on_timeout: Callable | None = None, purgatories: tuple = ()) -> list:
        """The owner's [{delay: FIFO}, wake-up time, requests, on_timeout, purgatories], made
        the first time. The wake-up time is that of the owner's "timeouts" event still to come
        (scheduled when it was set; the event sets it anew), or NO_WAKE_UP when none is: a
        timeout due before it moves it earlier, with an event of its own. ``requests`` (a
        broker process's fetch_inflight, made when it starts, or a producer's in_flight) maps a
        correlation id to [deadline (-1: none, or fired), timeout id, ...]: the request
        timeouts of the requests in flight, each calling the owner's timer
        ``on_timeout(owner object, corr)`` when due. ``purgatories`` (a broker process's) are
        pairs (operations, timer): ``operations`` maps an id to a parked operation with
        ``deadline_ms`` and ``timeout_id`` (None once fired), whose timeout calls
        ``timer(owner object, id)`` when due."""
        entry = self.timeouts.get(owner)
        if entry is None:
            entry = self.timeouts[owner] = [{}, NO_WAKE_UP, requests, on_timeout, purgatories]
        return entry

    def _compact_timeouts(self) -> None:
        """Drop the cancelled entries inside long FIFOs (cancelled out of order), so snapshots
        stay small. Only cancelled entries go, so this changes no wake-up time: it runs with the
        metrics sample."""
        for entry in self.timeouts.values():
            for fifo in entry[0].values():
                if len(fifo) > 512:
                    keep = [e for e in fifo if e[2] is not None]
                    if len(fifo) > 2 * len(keep):
                        fifo.clear()
                        fifo.extend(keep)

    @staticmethod
    def cancel_timeout(handle: list | None) -> None:
        """Cancel a timeout that has not fired (a no-op once it fired or was cancelled, and
        for None: no timeout was set)."""
        if handle is not None:
            handle[2] = None

    @staticmethod
    def _due_timeouts(fifos: dict, now: int, requests: dict | None, on_timeout,
                      purgatories: tuple) -> list:
        """Pop the live entries due by ``now`` (and the cancelled ones ahead of live ones), with
        the requests in flight whose timeout is due as [deadline, id, on_timeout, (corr,),
        their in-flight entry], and the parked operations whose timeout is due as [deadline,
        id, timer, (op id,), the operation, its purgatory]."""
        due = []
        for fifo in fifos.values():
            while fifo and (fifo[0][0] <= now or fifo[0][2] is None):
                e = fifo.popleft()
                if e[2] is not None:
                    due.append(e)
        if requests:
            for corr, f in requests.items():
                if 0 <= f[0] <= now:
                    due.append([f[0], f[1], on_timeout, (corr,), f])
        for ops, timer in purgatories:
            for op_id, op in ops.items():
                if op.deadline_ms <= now and op.timeout_id is not None:
                    due.append([op.deadline_ms, op.timeout_id, timer, (op_id,), op, ops])
        due.sort()   # (deadline, id): the order one heap over all timeouts would give
        return due

    def _fire_timeouts(self, owner: tuple) -> None:
        entry = self.timeouts[owner]
        fifos = entry[0]
        now = self.engine.now
        requests, on_timeout, purgatories = entry[2], entry[3], entry[4]
        due = self._due_timeouts(fifos, now, requests, on_timeout, purgatories)
        while due:
            for e in due:
                fn = e[2]
                if fn is None:
                    continue   # cancelled by a timeout that fired just before
                if len(e) == 5:   # a request in flight
                    if requests.get(e[3][0]) is not e[4]:
                        continue   # answered or failed by a timeout that fired just before
                    e[4][0] = -1   # fired (the broker may be paused: the entry stays till then)
                elif len(e) == 6:   # a parked operation
                    op = e[4]
                    if e[5].get(e[3][0]) is not op or op.timeout_id is None:
                        continue   # completed or timed out by a timeout that fired just before
                    op.timeout_id = None   # fired (the broker may be paused: it stays parked)
                else:
                    e[2] = None    # fired: a later cancel_timeout is a no-op
                if owner[0] == "broker":
                    self._broker_timer(owner[1], owner[2], fn, e[3])
                else:
                    self._client_timer(owner[1], fn, e[3])
            # a handler may add one
            due = self._due_timeouts(fifos, now, requests, on_timeout, purgatories)
        heads = [fifo[0][0] for fifo in fifos.values() if fifo]
        if requests:
            heads += [f[0] for f in requests.values() if f[0] >= 0]
        for ops, _timer in purgatories:
            heads += [op.deadline_ms for op in ops.values() if op.timeout_id is not None]
        if heads:
            nxt = min(heads)
            if entry[1] <= now or nxt < entry[1]:
                entry[1] = nxt
                self.engine.schedule_at(nxt, "timeouts", owner)
        else:
            entry[1] = NO_WAKE_UP

    def _call(self, fn) -> None:
        fn(self)

    def _metrics_sample(self) -> None:
        if self.trace.spill_dir is not None:   # every row so far was checked: spill them
            self.trace.maybe_spill()
        self._compact_timeouts()
        self.metrics.sample(self.engine.now, self.brokers.values(),
                            None if self.kraft is None else self.kraft.nodes.values())
        self.engine.schedule(self.metrics.interval_ms, "metrics_sample")

    # -- ZooKeeper-driven control plane -------------------------------------------------------
    def controller_broker(self) -> Broker | None:
        node = self.zk.get("/controller")
        if node is None:
            return None
        b = self.brokers.get(json.loads(node.data)["brokerid"])
        return b if b is not None and b.controller is not None and b.is_running else None

    def on_broker_registered(self, broker: Broker) -> None:
        """A broker (re)registered in ZooKeeper: it tries to become controller when there is
        none (KafkaController.elect); otherwise the controller's BrokerChange watch fires."""
        if not self.zk.exists("/controller"):
            self._try_become_controller(broker.id)
        self.engine.schedule(0, "controller_event", "broker_change", ())

    def _try_become_controller(self, broker_id: int) -> None:
        """Create the ephemeral /controller and bump /controller_epoch; the first one wins."""
        b = self.brokers[broker_id]
        zk = self.zk
        if zk.exists("/controller") or b.state != RUNNING or \
                not zk.session_alive(b.zk_lifecycle.session_id) \
                or not self.network.can_reach(broker_id, ZOOKEEPER):
            return
        if b.paused_until > self.engine.now:
            self.engine.schedule_at(b.paused_until, "try_controller", broker_id)
            return
        epoch_node = zk.get("/controller_epoch")
        epoch = (int(epoch_node.data) if epoch_node else 0) + 1
        zk.create("/controller", json.dumps(
            {"version": 1, "brokerid": broker_id, "timestamp": str(self.engine.now)},
            separators=(",", ":")), ephemeral_owner=b.zk_lifecycle.session_id)
        if epoch_node is None:
            zk.create("/controller_epoch", str(epoch))
        else:
            zk.set("/controller_epoch", str(epoch))
        b.zk_lifecycle.become_controller(b, epoch)

    def _controller_event(self, name: str, args: tuple) -> None:
        ctl = self.controller_broker()
        if ctl is None:
            return  # no active controller: the next one reads everything at failover
        if ctl.paused_until > self.engine.now:
            self.engine.schedule_at(ctl.paused_until, "controller_event", name, args)
            return
        self.run_controller(ctl, name, args)

    def run_controller(self, broker: Broker, name: str, args: tuple) -> None:
        """Run one controller operation on ``broker``'s controller, fenced by its epoch."""
        from kafkasim.protocol.controller import ControllerMovedError

        c = broker.controller
        if c is None:
            return
        if not self.network.can_reach(broker.id, ZOOKEEPER):
            # ZooKeeper unreachable: the operation waits for the connection to come back
            self.engine.schedule(1000, "controller_event", name, args)
            return
        zk = self.zk
        try:
            if name == "broker_change":
                c.on_broker_change(broker, zk)
            elif name == "topic_change":
                c.on_new_topic(broker, zk, args[0])
            elif name == "isr_change":
                c.on_isr_change_notification(broker, zk, args[0])
            elif name == "alter_partition":
                c.process_alter_partition(broker, zk, *args)
            elif name == "controlled_shutdown":
                c.controlled_shutdown(broker, zk, *args)
            elif name == "auto_rebalance":
                c.auto_rebalance(broker, zk)
            elif name == "elect":
                self.admin_state.last_election_results = c.elect_leaders(broker, zk, *args)
            elif name == "reassignment_isr_change":
                c.maybe_complete_reassignment(broker, zk, args[0])
            elif name == "alter_reassignments":
                self.admin_state.last_reassignment_results = \
                    c.alter_partition_reassignments(broker, zk, *args)
            else:
                raise ValueError(f"unknown controller operation {name!r}")
        except ControllerMovedError as exc:
            broker.zk_lifecycle.resign_controller(broker, str(exc))

    def _zk_data_changed(self, path: str) -> None:
        """A watched partition state znode changed (PartitionReassignmentIsrChangeHandler, the
        controller's watch on a reassigning partition before AlterIsr)."""
        parts = path.split("/")   # /brokers/topics/<t>/partitions/<p>/state
        self.engine.schedule(1, "controller_event", "reassignment_isr_change",
                             ((parts[3], int(parts[5])),))

    def notify_isr_change(self, tps) -> None:
        self.engine.schedule(0, "controller_event", "isr_change", (tuple(tps),))

    # -- ZooKeeper sessions -------------------------------------------------------------------
    def _zk_request(self, src, msg) -> None:
        from kafkasim.protocol.messages import ZkPing, ZkPingResponse

        if isinstance(msg, ZkPing):
            alive = self.zk.touch(msg.session_id, self.engine.now)
            if alive:
                self.watch_session(msg.session_id)
            self.send(ZOOKEEPER, src, ZkPingResponse(msg.session_id, alive))

    def watch_session(self, session_id: int) -> None:
        s = self.zk.sessions.get(session_id)
        if s is not None:
            self.engine.schedule(s.timeout_ms, "zk_session_check", session_id, s.last_heard_ms)

    def _zk_session_check(self, session_id: int, heard_ms: int) -> None:
        s = self.zk.sessions.get(session_id)
        if s is None or s.last_heard_ms != heard_ms:
            return
        self.record("zk_session_expired", ZOOKEEPER, "", -1,
                    ev.ZkSessionExpired(session_id, s.owner, "timeout", self.engine.now - heard_ms))
        self.close_session(session_id)

    def close_session(self, session_id: int) -> None:
        """Expire or close a session: its ephemeral znodes vanish and the watches fire."""
        gone = self.zk.close_session(session_id)
        if any(p.startswith("/brokers/ids/") for p in gone):
            self.engine.schedule(1, "controller_event", "broker_change", ())
        if "/controller" in gone:
            self.record("controller", ZOOKEEPER, "", -1, ev.ControllerReelection())
            for bid in sorted(self.brokers):
                delay = 1 + int(self.engine.rng.random() * (self.network.jitter_ms + 1))
                self.engine.schedule(delay, "try_controller", bid)

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
        where={"high_watermark": {"ge": 2}})`` (kafkasim/protocol/match.py)."""
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
             where: dict | None = None) -> int:
        """Drop matching messages from now on (``count`` of them, or all); also discards
        matching messages currently held."""
        flt = MessageFilter(type, src, dst, count, where)
        self.network.drops.append(flt)
        self.network.faults_changed()
        gone = self.network.release(MessageFilter(type, src, dst, where=where))
        for env in gone:
            self.record("drop", env.src, "", -1, (self.wire_name(env.msg), env.dst, env.msg_id,
                                                  "dropped while held"))
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
        from kafkasim.protocol.zookeeper import NodeExists

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
        self.close_session(b.zk_lifecycle.session_id)

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
        ctl = self.controller_broker()
        if ctl is None:
            raise ClusterError("no active controller to run the election")
        self.admin_state.last_election_results = {}
        self.run_controller(ctl, "elect", ([(topic, p) for p in parts], election_type))
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
        ctl = self.controller_broker()
        if ctl is None:
            raise ClusterError("no active controller to run the reassignment (NOT_CONTROLLER)")
        self.admin_state.last_reassignment_results = {}
        self.run_controller(ctl, "alter_reassignments", (todo,))
        return dict(self.admin_state.last_reassignment_results)

    def list_partition_reassignments(self, partitions=None) -> dict:
        """``kafka-reassign-partitions --list`` / Admin.listPartitionReassignments: the
        reassignments in progress, ``{(topic, partition): {"replicas", "adding_replicas",
        "removing_replicas"}}`` (from the controller's context)."""
        ctl = self.controller_broker()
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
        b = self.controller_broker()
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
        ``kafkasim.protocol.rules.RULES``, same signature as Kafka's function there); ``fn=None``
        puts Kafka's own rule back. Returns the rule that was in place. The checkers
        (``kafkasim.check.attach``) show what a different rule breaks."""
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
