"""Messages on the wire between a cluster's processes: ``Transport``.

``send`` puts a message on the ``Network`` (held, dropped, or delivered after the link's
latency as an engine "deliver" event whose arguments are ``kafkasim.runtime.network.DELIVERY``),
``deliver`` hands it to its destination (a broker's KafkaApis, a KRaft controller, a client or
the ZooKeeper ensemble), unless the destination process is gone, paused or cut off. A process
that dies closes its connections (``reset_connections``): each peer learns it when the close
arrives (``disconnect``) and fails the requests it had in flight there.

A request to a KRaft broker whose listeners are not open yet (STARTING or RECOVERY) never goes on
the wire: the sender's NetworkClient first has to connect, and the broker's kernel refuses the
connect (``initiate_connect``). The refusal reaches the sender a round trip later
(``connect_failed``): the node is DISCONNECTED and blacked out for its reconnect backoff
(``kafkasim.runtime.network_client.ClusterConnectionStates``), the requests that waited for the
connection fail as disconnected, and the client asks for new metadata.
"""

from __future__ import annotations

import random

from kafkasim.core import events as ev
from kafkasim.core.match import MatchError, checked_filter
from kafkasim.core.messages import (
    FetchRequest,
    FetchResponse,
    LeaderAndIsrRequest,
    ProduceRequest,
    StopReplicaRequest,
    UpdateMetadataRequest,
)
from kafkasim.runtime.broker import STOPPED
from kafkasim.runtime.kafka_apis import handle_fetcher_response
from kafkasim.runtime.network import ZOOKEEPER, MessageFilter, Network, delivery_envelope
from kafkasim.runtime.network_client import (
    CLIENT_RECONNECT_BACKOFF_MAX_MS,
    CLIENT_RECONNECT_BACKOFF_MS,
    ClusterConnectionStates,
)
from kafkasim.settings.exceptions import ClusterError

# LeaderAndIsr, UpdateMetadata and StopReplica travel on the controller's channels
# (ZkControlPlane.queue_controller_request keeps what they could not send)
_CONTROLLER_REQUESTS = (LeaderAndIsrRequest, UpdateMetadataRequest, StopReplicaRequest)


class Transport:
    """Message delivery between the cluster's processes (brokers, KRaft controllers, clients
    and the ZooKeeper ensemble) over the ``Network``: ``send`` puts a message on the wire,
    ``deliver`` hands it to its destination, a process that dies closes its connections
    (``reset_connections``) and each peer learns it when the close arrives (``disconnect``).
    Engine events "deliver" and "disconnect"."""

    def __init__(self, cluster, network: Network, controller_queues: dict) -> None:
        self.cluster = cluster
        self.network = network
        self.brokers = cluster.brokers
        self.clients = cluster.clients
        self.trace = cluster.trace
        self.controller_queues = controller_queues   # ZkControlPlane's (the same dict)
        self.wire_names: dict[type, str] = {}   # message class -> its RPC name in this version
        #: KRaft brokers whose listeners are not open yet (STARTING or RECOVERY: BrokerServer
        #: .startup enables request processing only once the broker is unfenced)
        self.listeners_closed: set[int] = set()
        #: each sender's connection states with a connect under way or failed (a sender whose
        #: connections are all READY has no entry): NetworkClient.connectionStates
        self.connection_states: dict = {}
        #: requests waiting for a connect under way, by (sender, node) (ConsumerNetworkClient's
        #: unsent requests; a replica fetcher's awaitReady)
        self.unsent: dict[tuple, list] = {}
        #: (client, broker) pairs whose connection the client saw closed by the broker's dead
        #: process (its close, or the refusal of a request, reached the client): the client's
        #: next request needs a new connect, refused while no process listens
        #: (NetworkClient: DISCONNECTED, then initiateConnect fails with "Connection refused").
        #: A new process of the broker clears its pairs (``forget_process``)
        self.closed_by_peer: set[tuple] = set()
        #: some controller channel holds requests back, some listener is closed or some sender
        #: holds connection states: only then may a send not go straight on the wire, so the
        #: usual send tests this alone (``regate`` keeps it, after every change of
        #: ``controller_queues``, ``listeners_closed`` or ``connection_states``)
        self.gated = False
        #: the reconnect backoff's jitter (ExponentialBackoff draws from ThreadLocalRandom):
        #: seeded, and apart from the engine's generator so message latencies stay as they were
        self.reconnect_rng = random.Random(f"{cluster.engine.seed}:reconnect")

    def send(self, src, dst, msg) -> None:
        """Put ``msg`` on the wire from ``src`` to ``dst``: held, dropped, or delivered after
        the link's latency (a "deliver" event), unless the controller channel queues it."""
        if self.gated:
            queues = self.controller_queues
            if queues and isinstance(msg, _CONTROLLER_REQUESTS) and (src, dst) in queues:
                queues[(src, dst)].append(msg)  # keep the channel's order
                return
            if self.connect(src, dst, msg):
                return   # no connection yet: the request waits for the connect or fails with it
        net = self.network
        engine = self.cluster.engine
        now = engine.now
        if not net.plain:   # a partition, cut, hold, drop, delay or extra latency is set
            env = net.envelope(src, dst, msg, now)
            msg_id = env.msg_id
            fate = net.classify(env)
            if fate == "unreachable" and isinstance(msg, _CONTROLLER_REQUESTS):
                self.cluster.zk_control_plane.queue_controller_request(src, dst, msg)
                return
            if fate == "hold":
                net.held.append(env)
                self.trace.record("hold", src, "", -1, (self.wire_name(msg), dst, msg_id))
                return
            if fate != "send":
                net.dropped += 1
                self.trace.record("drop", src, "", -1,
                                    (self.wire_name(msg), dst, msg_id, fate))
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

    # -- connecting (NetworkClient.ready / initiateConnect, ClusterConnectionStates) ----------
    def close_listeners(self, broker_id: int) -> None:
        """The KRaft broker ``broker_id`` starts: its listeners stay closed until it is
        unfenced (``open_listeners``)."""
        self.listeners_closed.add(broker_id)
        self.regate()

    def open_listeners(self, broker_id: int) -> None:
        """The broker's listeners open (BrokerServer.startup enables request processing), or
        its process is gone (refused as such)."""
        self.listeners_closed.discard(broker_id)
        self.regate()

    def regate(self) -> None:
        """``gated``: a controller channel queues requests, a listener is closed, or a sender
        holds connection states."""
        self.gated = bool(self.controller_queues or self.listeners_closed or
                          self.connection_states or self.closed_by_peer)

    def closed_by(self, dead, client) -> None:
        """``client`` saw its connection to broker ``dead`` closed while no process of it runs:
        its next request to it must connect anew (refused until the broker starts again)."""
        gone = self.brokers.get(dead)
        if gone is not None and gone.state == STOPPED:
            self.closed_by_peer.add((client, dead))
            self.regate()

    def refuses(self, src, dst) -> bool:
        """A connect from ``src`` to ``dst`` would be refused: ``dst``'s listeners are not open
        yet, or ``src`` saw the connection closed by ``dst``'s dead process."""
        return dst in self.listeners_closed or (src, dst) in self.closed_by_peer

    def connect(self, src, dst, msg) -> bool:
        """Before ``msg`` leaves ``src``: True if it cannot, there being no connection to
        ``dst`` (a KRaft broker whose listeners are not open yet): it waits for the connect
        under way, or starts one, or -- the node blacked out after a refused connect -- fails
        at once (ConsumerNetworkClient.checkDisconnects: ``connectionFailed``). A request to an
        open listener makes the connection READY (its backoff is reset)."""
        states = self.connection_states.get(src)
        if not self.refuses(src, dst) or not type(msg).__name__.endswith("Request") or \
                not (self.network.plain or self.network.can_reach(src, dst)):
            # (a connect the network loses is not modelled: the request is lost as before)
            if states is not None and dst in states.node_state:
                self.forget_connection(src, dst)
            return False
        states = states or self.states_of(src)
        self.unsent.setdefault((src, dst), []).append(msg)
        if not states.is_connecting(dst):
            if states.can_connect(dst, self.cluster.engine.now):
                self.initiate_connect(src, dst)
            else:   # blacked out: NetworkClient.ready is false, connectionFailed true
                self.cluster.engine.schedule(0, "connect_failed", src, dst,
                                             self.network.incarnations.get(src, 0), False)
        return True

    def ready(self, src, dst) -> bool:
        """NetworkClient.ready: True if ``src`` can send to ``dst`` now; otherwise a connect is
        under way (its outcome calls ``src``'s ``on_disconnect(dst, None)``) or the node is
        blacked out (``connection_delay`` says for how long), or this starts a connect."""
        states = self.connection_states.get(src)
        if states is None and not self.refuses(src, dst):
            return True
        now = self.cluster.engine.now
        if states is not None and (states.is_connecting(dst) or states.is_blacked_out(dst, now)):
            return False
        if not self.refuses(src, dst) or \
                not (self.network.plain or self.network.can_reach(src, dst)):
            if states is not None:
                self.forget_connection(src, dst)
            return True
        self.initiate_connect(src, dst)
        return False

    def is_unavailable(self, src, dst) -> bool:
        """NetworkClient.isUnavailable: ``dst`` is blacked out for ``src`` (a refused connect's
        reconnect backoff is not over)."""
        states = self.connection_states.get(src)
        return states is not None and states.is_blacked_out(dst, self.cluster.engine.now)

    def connection_delay(self, src, dst) -> int:
        """ClusterConnectionStates.connectionDelay: ms before ``src`` may connect to ``dst``
        (0: now; -1: a connect is under way)."""
        states = self.connection_states.get(src)
        return 0 if states is None else states.connection_delay(dst, self.cluster.engine.now)

    def states_of(self, src) -> ClusterConnectionStates:
        """``src``'s connection states: a client's NetworkClient backs off reconnect.backoff.ms
        (50) doubling to reconnect.backoff.max.ms (1000); a replica fetcher's (BrokerBlockingSender
        builds its NetworkClient with 0 and 0) does not."""
        states = self.connection_states.get(src)
        if states is None:
            backoff = (CLIENT_RECONNECT_BACKOFF_MS, CLIENT_RECONNECT_BACKOFF_MAX_MS) \
                if src in self.clients else (0, 0)
            states = self.connection_states[src] = ClusterConnectionStates(
                *backoff, self.reconnect_rng)
            self.regate()
        return states

    def forget_connection(self, src, dst) -> None:
        """ClusterConnectionStates.ready / remove: ``src`` keeps no state for ``dst``."""
        states = self.connection_states.get(src)
        if states is not None:
            states.ready(dst)
            if not states.node_state:
                del self.connection_states[src]
                self.regate()

    def forget_process(self, node) -> None:
        """``node`` (a broker) starts a new process: the last one's connects are gone."""
        if self.connection_states.pop(node, None) is not None:
            self.regate()
            for key in [k for k in self.unsent if k[0] == node]:
                del self.unsent[key]
        if self.closed_by_peer:   # its listeners accept connects again
            self.closed_by_peer = {k for k in self.closed_by_peer if k[1] != node}
            self.regate()

    def initiate_connect(self, src, dst) -> None:
        """NetworkClient.initiateConnect: CONNECTING; the SYN reaches ``dst`` after the link's
        latency and ``dst``'s kernel answers RST (no server socket listens), which reaches
        ``src`` a round trip after the connect began (Network.close_arrival: after what ``dst``
        sent before; no jitter drawn)."""
        net = self.network
        engine = self.cluster.engine
        self.states_of(src).connecting(dst, engine.now)
        syn = engine.now + net.latency_ms
        if net.extra_latency:
            syn += net.extra_latency.get(src, 0) + net.extra_latency.get(dst, 0)
        engine.schedule_at(net.close_arrival(dst, src, syn), "connect_failed", src, dst,
                           net.incarnations.get(src, 0), True)

    def connect_failed(self, src, dst, incarnation: int, attempted: bool) -> None:
        """The refusal of ``src``'s connect to ``dst`` arrives (``attempted``), or a request
        found ``dst`` blacked out: NetworkClient.processDisconnection -> disconnected (the next
        reconnect backoff, trace ``connect_failed``), the requests waiting for the connection
        fail as disconnected (``on_disconnect``), metadataUpdater.handleServerDisconnect
        (a client's ``on_disconnect(dst, None)``: it asks for new metadata)."""
        node = self.brokers.get(src)
        if node is not None:
            if not node.is_running or self.network.incarnations.get(src, 0) != incarnation:
                return   # that process and its sockets are gone (forget_process)
        else:
            node = self.clients.get(src)
        states = self.connection_states.get(src)
        if node is None or states is None or attempted != states.is_connecting(dst):
            return
        waiting = self.unsent.pop((src, dst), [])
        if not attempted and not waiting:
            return   # (an earlier event failed them)
        if attempted:
            backoff = states.disconnected(dst, self.cluster.engine.now)
            if src not in self.clients:   # BrokerBlockingSender.sendRequest: close(node)
                self.forget_connection(src, dst)
            self.trace.record("connect_failed", src, "", -1,
                              (dst, backoff, "listener not open yet"
                               if dst in self.listeners_closed else "connection refused"))
        for msg in waiting:
            node.on_disconnect(dst, msg)
        if src in self.clients:
            node.on_disconnect(dst, None)   # the client's metadata updater hears of it

    def drop(self, type: str | None = None, src=None, dst=None, count: int = -1, *,
             where: dict | None = None, msg_id: int | None = None) -> int:
        """Drop matching messages from now on (``count`` of them, or all; ``Network.undrop``
        stops); also discards matching messages currently held. Selects as ``Cluster.hold``
        does; returns how many held messages it discarded. ``drop(msg_id=17)`` instead loses
        the one message 17 now on the wire (``inspect.messages_in_flight()``), nothing later."""
        if msg_id is not None:
            if any(x is not None for x in (type, src, dst, where)) or count != -1:
                raise ClusterError("drop(msg_id=...) loses one message on the wire: give no "
                                   "type, src, dst, count or where with it")
            if isinstance(msg_id, bool) or not isinstance(msg_id, int):
                raise ClusterError(f"drop(msg_id) must be a message id (an int), got {msg_id!r}")
            self.drop_in_flight(msg_id)
            return 1
        flt = self.message_filter(type, src, dst, count, where, what="drop")
        net = self.network
        net.drops.append(flt)
        net.faults_changed()
        gone = net.release(MessageFilter(type, src, dst, where=where))
        record = self.trace.record
        for env in gone:
            record("drop", env.src, "", -1, (self.wire_name(env.msg), env.dst, env.msg_id,
                                             "dropped while held"))
        record("fault", "network", "", -1,
               ev.DropMessages(type, src, dst, str(where) if where else ""))
        return len(gone)

    def message_filter(self, type, src, dst, count: int = -1, where: dict | None = None, *,
                       what: str) -> MessageFilter:
        """The MessageFilter of ``Cluster.hold`` / ``drop`` / ``delay`` / ``release``: its
        endpoints must name nodes of this cluster (``Cluster.inspect.nodes()``), two different
        ones but for a ZooKeeper-mode broker (a controller talks to its own broker), its count be -1
        or from 1, its type and ``where`` fields known (kafkasim.core.match.checked_filter).
        ClusterError names the argument, the closest known name and the valid values; nothing
        has changed when it is raised."""
        try:
            return checked_filter(type, src, dst, count, where,
                                  nodes=self.cluster.inspect.nodes(),
                                  loopback=() if self.cluster.kraft is not None else self.brokers)
        except MatchError as exc:
            raise ClusterError(f"{what}: {exc}") from None

    def drop_in_flight(self, msg_id: int) -> str:
        """Lose the message ``msg_id`` now: it is on the wire (a pending "deliver") or held,
        and never arrives (a "drop" trace row, reason "dropped by hand"). Returns its wire
        name; a ``ClusterError`` names the messages on the wire when it is not one of them."""
        engine = self.cluster.engine
        env = None
        for pending in engine.pending_of("deliver"):
            if pending.args[4] == msg_id:
                engine.cancel(pending.seq)
                env = delivery_envelope(pending.args)
                break
        if env is None:
            held = [e for e in self.network.held if e.msg_id == msg_id]
            if held:
                env = held[0]
                self.network.held = [e for e in self.network.held if e.msg_id != msg_id]
        if env is None:
            on_wire = sorted(r["msg_id"] for r in self.cluster.inspect.messages_in_flight())
            shown = ", ".join(map(str, on_wire[:20])) + (" ..." if len(on_wire) > 20 else "")
            raise ClusterError(f"drop(msg_id={msg_id!r}): no such message in flight at "
                               f"t={engine.now} ms; in flight: {shown or 'none'}")
        self.network.dropped += 1
        name = self.wire_name(env.msg)
        self.cluster.trace.record("drop", env.src, "", -1,
                                  (name, env.dst, msg_id, "dropped by hand"))
        return name

    def wire_name(self, msg) -> str:
        """The RPC's name in this Kafka version (AlterPartition was AlterIsr before 3.2)."""
        cls = type(msg)
        name = self.wire_names.get(cls)
        if name is None:
            name = cls.__name__
            if name.startswith("AlterPartition") and \
                    not self.cluster.rules.alter_partition.alter_partition_name:   # 3.2+
                name = "AlterIsr" + name[len("AlterPartition"):]
            self.wire_names[cls] = name
        return name

    def deliver(self, src, dst, msg, sent_ms: int, msg_id: int, incarnation: int,
                name: str | None = None) -> None:
        """The message ``msg_id`` (the Envelope's fields: kafkasim.runtime.network.DELIVERY)
        reaches its
        destination, unless it is gone, paused or cut off; ``name`` is the RPC's wire name when
        the send computed it."""
        net = self.network
        engine = self.cluster.engine
        broker = self.brokers.get(dst)   # None for clients, controllers and ZooKeeper
        if broker is None and self.cluster.kraft is not None:
            broker = self.cluster.kraft.nodes.get(dst)
        if broker is not None:
            # a running process's incarnation is its entry in Network.incarnations (start()
            # sets both; only a stop moves the network's on)
            if broker.state == STOPPED or broker.incarnation != incarnation:
                net.dropped += 1
                self.trace.record("drop", dst, "", -1, (self.wire_name(msg), src, msg_id,
                                                  "destination process gone"))
                self.send_close(dst, src, msg)   # the refusal travels back
                return
            if self.listeners_closed and dst in self.listeners_closed and \
                    type(msg).__name__.endswith("Request"):
                # a KRaft broker still STARTING or in RECOVERY: its port is not open yet, so
                # the connection is refused; the client sees a disconnect and retries
                net.dropped += 1
                self.trace.record("drop", dst, "", -1, (self.wire_name(msg), src, msg_id,
                                                  "listener not open yet"))
                self.send_close(dst, src, msg)
                return
            if broker.paused_until > engine.now:
                engine.schedule_at(broker.paused_until, "deliver", src, dst, msg, sent_ms, msg_id,
                                   incarnation, name)
                return
        if not net.plain and not net.can_reach(src, dst):
            if isinstance(msg, _CONTROLLER_REQUESTS):
                self.cluster.zk_control_plane.queue_controller_request(src, dst, msg)
                return
            net.dropped += 1
            self.trace.record("drop", dst, "", -1, (self.wire_name(msg), src, msg_id,
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
            self.cluster.zk_control_plane.zk_request(src, msg)
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
                self.send_close(dead, b.id, None)
        for client_id, client in self.clients.items():
            if hasattr(client, "on_peer_gone"):
                self.send_close(dead, client_id, None)
        if self.cluster.kraft is not None:
            for node in self.cluster.kraft.nodes.values():
                if node.id != dead and node.is_running and hasattr(node, "on_peer_gone"):
                    self.send_close(dead, node.id, None)

    def send_close(self, dead, peer, msg) -> None:
        """``dead``'s kernel closes its connection to ``peer`` now: the FIN of a connection it
        had (``msg`` None), or the RST refusing ``msg``, a request that reached the dead process
        (the sender fails it when the RST arrives, a round trip after it sent it)."""
        engine = self.cluster.engine
        engine.schedule_at(self.network.close_arrival(dead, peer, engine.now), "disconnect",
                           dead, peer, self.network.incarnations.get(peer, 0), msg)

    def disconnect(self, dead, peer, incarnation: int, msg) -> None:
        """The close of ``dead``'s connection reaches ``peer``, whose NetworkClient reports the
        disconnect: every request in flight to ``dead`` fails (``on_peer_gone(dead)``), or the
        refused request ``msg`` does (``on_disconnect(dead, msg)``). A peer that died or
        restarted since had no such connection any more; a paused one sees it when it resumes;
        a close the network partition cuts off is lost, like any segment (the peer learns by
        its own timeouts)."""
        net = self.network
        node = self.brokers.get(peer)
        if node is None and self.cluster.kraft is not None:
            node = self.cluster.kraft.nodes.get(peer)
        if node is not None:
            if not node.is_running or net.incarnations.get(peer, 0) != incarnation:
                return
            if node.paused_until > self.cluster.engine.now:
                self.cluster.engine.schedule_at(node.paused_until, "disconnect", dead, peer,
                                        incarnation, msg)
                return
        else:
            node = self.clients.get(peer)
            if node is None:
                return
        if (net.groups or net.cut_links) and not net.can_reach(dead, peer):
            return
        if peer in self.clients:
            self.closed_by(dead, peer)
        if msg is None:
            handler = getattr(node, "on_peer_gone", None)
            if handler is not None:
                handler(dead)
        else:
            handler = getattr(node, "on_disconnect", None)
            if handler is not None:
                handler(dead, msg)
