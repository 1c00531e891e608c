"""The ZooKeeper-mode control plane a cluster hosts: ``ZkControlPlane``.

The ZooKeeper-mode counterpart of ``kafkasim.runtime.kraft_cluster.KRaftControlPlane``: the
ZooKeeper
ensemble's side of the sessions (pings, expiry, closing a session removes its ephemeral znodes
and fires the watches), the /controller election among the brokers, the controller's event
queue (KafkaController's ControllerEventManager: broker changes, topic creation, ISR change
notifications, AlterPartition, controlled shutdown, preferred-leader elections,
reassignments), each run on the broker that is controller and fenced by its epoch, and the
controller's channels to the brokers (ControllerChannelManager: a queue per broker whose
RequestSendThread retries a request it could not send).

The cluster's ZooKeeper (``cluster.zk``) is the ensemble's data; its engine events
"controller_event", "try_controller", "zk_session_check" and "controller_resend" are handled
here.
"""

from __future__ import annotations

import json

from kafkasim.core import events as ev
from kafkasim.runtime.broker import RUNNING, Broker
from kafkasim.runtime.network import ZOOKEEPER
from kafkasim.settings.exceptions import ClusterError

CONTROLLER_RETRY_BACKOFF_MS = 300  # RequestSendThread's back-off after a failed send
UNCLEAN = "unclean.leader.election.enable"

#: The controller's events (ControllerEventManager) by name -> the KafkaController method that
#: processes them, called as ``method(broker, zk, *args)``
CONTROLLER_OPERATIONS = {
    "broker_change": "on_broker_change",                     # BrokerChange
    "topic_change": "on_new_topic",                          # TopicChange
    "isr_change": "on_isr_change_notification",              # IsrChangeNotification (<2.7)
    "alter_partition": "process_alter_partition",            # AlterPartitionReceived
    "controlled_shutdown": "controlled_shutdown",            # ControlledShutdown
    "auto_rebalance": "auto_rebalance",                      # AutoPreferredReplicaLeaderElection
    "elect": "elect_leaders",                                # ReplicaLeaderElection (admin)
    "zk_preferred_election": "process_zk_preferred_replica_election",   # (ZooKeeper)
    "reassignment_isr_change": "maybe_complete_reassignment",  # PartitionReassignmentIsrChange
    "alter_reassignments": "alter_partition_reassignments",  # ApiPartitionReassignment
    "zk_reassignments": "process_zk_partition_reassignment",  # ZkPartitionReassignment
    "unclean_leader_election_enable": "on_unclean_leader_election_enable",
    "topic_unclean_leader_election_enable": "on_unclean_leader_election_enable",
}


class ZkControlPlane:
    """ZooKeeper's sessions, the controller election and the controller's event queue and
    channels, for one cluster."""

    def __init__(self, cluster) -> None:
        self.cluster = cluster
        # (controller, broker) -> the requests the channel could not send yet (RequestSendThread
        # retries them after CONTROLLER_RETRY_BACKOFF_MS)
        self.controller_queues: dict[tuple, list] = {}

    def register_handlers(self, engine) -> None:
        """The engine events this control plane handles."""
        engine.on("controller_event", self.controller_event)
        engine.on("zk_session_check", self.zk_session_check)
        engine.on("try_controller", self.try_become_controller)
        engine.on("controller_resend", self.controller_resend)
        engine.on("queued_controller_event", self.queued_controller_event)

    def controller_broker(self) -> Broker | None:
        """The broker that holds /controller and runs its KafkaController (None: none now)."""
        node = self.cluster.zk.get("/controller")
        if node is None:
            return None
        b = self.cluster.brokers.get(json.loads(node.data)["brokerid"])
        return b if b is not None and b.controller is not None and b.is_running else None

    def on_broker_registered(self, broker: Broker) -> None:
        """A broker (re)registered in ZooKeeper: it tries to become controller when there is
        none (KafkaController.elect); otherwise the controller's BrokerChange watch fires."""
        if not self.cluster.zk.exists("/controller"):
            self.try_become_controller(broker.id)
        self.cluster.engine.schedule(0, "controller_event", "broker_change", ())

    def try_become_controller(self, broker_id: int) -> None:
        """Create the ephemeral /controller and bump /controller_epoch; the first one wins."""
        b = self.cluster.brokers[broker_id]
        zk = self.cluster.zk
        if zk.exists("/controller") or b.state != RUNNING or \
                not zk.session_alive(b.zk_lifecycle.session_id) \
                or not self.cluster.transport.network.can_reach(broker_id, ZOOKEEPER):
            return
        if b.paused_until > self.cluster.engine.now:
            self.cluster.engine.schedule_at(b.paused_until, "try_controller", broker_id)
            return
        epoch_node = zk.get("/controller_epoch")
        epoch = (int(epoch_node.data) if epoch_node else 0) + 1
        zk.create("/controller", self.controller_znode_data(broker_id),
                  ephemeral_owner=b.zk_lifecycle.session_id)
        if epoch_node is None:
            zk.create("/controller_epoch", str(epoch))
        else:
            zk.set("/controller_epoch", str(epoch))
        b.zk_lifecycle.become_controller(b, epoch)

    def controller_znode_data(self, broker_id: int) -> str:
        """ZkData ``ControllerZNode.encode``: version 1 (brokerid, timestamp); since 3.4
        (KIP-866) version 2 with kraftControllerEpoch, -1 for a ZooKeeper controller."""
        data = {"version": 1, "brokerid": broker_id, "timestamp": str(self.cluster.engine.now)}
        if self.cluster.rules.controller.controller_znode_v2:
            data.update(version=2, kraftControllerEpoch=-1)
        return json.dumps(data, separators=(",", ":"))

    def controller_event(self, name: str, args: tuple) -> None:
        """A ZooKeeper watch fired: ControllerEventManager.put puts the event on the queue of the
        active controller (the broker /controller names now)."""
        ctl = self.controller_broker()
        if ctl is None:
            return  # no active controller: the next one reads everything at failover
        self.queued_controller_event(ctl.id, ctl.controller.controller_epoch, name, args)

    def queued_controller_event(self, broker_id: int, controller_epoch: int, name: str,
                                args: tuple) -> None:
        """ControllerEventThread: the controller that queued the event runs it, a paused one
        when it resumes, even if it lost /controller meanwhile (its first ZooKeeper write then
        fails with ControllerMovedException and it resigns); a controller that resigned took its
        queue with it."""
        b = self.cluster.brokers[broker_id]
        if b.controller is None or b.controller.controller_epoch != controller_epoch or \
                not b.is_running:
            return
        if b.paused_until > self.cluster.engine.now:
            self.cluster.engine.schedule_at(b.paused_until, "queued_controller_event", broker_id,
                                            controller_epoch, name, args)
            return
        self.run_controller(b, name, args)

    def run_controller(self, broker: Broker, name: str, args: tuple):
        """Run one controller operation on ``broker``'s controller, fenced by its epoch; returns
        what the operation answers (ElectLeaders' and AlterPartitionReassignments' results per
        partition), None when it did not run now."""
        from kafkasim.control.controller import ControllerMovedError

        c = broker.controller
        if c is None:
            return
        if not self.cluster.transport.network.can_reach(broker.id, ZOOKEEPER):
            # ZooKeeper unreachable: the operation waits for the connection to come back
            self.cluster.engine.schedule(1000, "queued_controller_event", broker.id,
                                         c.controller_epoch, name, args)
            return
        operation = CONTROLLER_OPERATIONS.get(name)
        if operation is None:
            raise ValueError(f"unknown controller operation {name!r}; known: "
                             f"{sorted(CONTROLLER_OPERATIONS)}")
        try:
            return getattr(c, operation)(broker, self.cluster.zk, *args)
        except ControllerMovedError as exc:
            broker.zk_lifecycle.resign_controller(broker, str(exc))
        return None

    def controller_unclean_default(self) -> bool | None:
        """The active controller's broker's unclean.leader.election.enable (None: no
        controller)."""
        ctl = self.controller_broker()
        return None if ctl is None else bool(ctl.config[UNCLEAN])

    def config_changed(self, entity_type: str, name, unclean_before: bool | None) -> None:
        """A config change notification (/config/changes) reached the brokers. A topic whose
        own unclean.leader.election.enable override is true (TopicConfigHandler, 2.1+) or the
        controller's broker whose default turned true (DynamicLogConfig.reconfigure, 2.0+) has
        the controller retry the offline partitions' elections."""
        rules = self.cluster.rules.elections
        if entity_type == "topics":
            override = self.cluster.topics.overrides[name].get(UNCLEAN)
            if rules.zk_unclean_election_on_topic_change and \
                    str(override).strip().lower() == "true":
                self.cluster.engine.schedule(1, "controller_event",
                                             "topic_unclean_leader_election_enable", (name,))
        elif rules.zk_unclean_election_on_default_change and unclean_before is False and \
                self.controller_unclean_default():
            self.cluster.engine.schedule(1, "controller_event", "unclean_leader_election_enable",
                                         ())

    def zk_data_changed(self, path: str) -> None:
        """A watched partition state znode changed (PartitionReassignmentIsrChangeHandler, the
        controller's watch on a reassigning partition before AlterIsr)."""
        parts = path.split("/")   # /brokers/topics/<t>/partitions/<p>/state
        self.cluster.engine.schedule(1, "controller_event", "reassignment_isr_change",
                                     ((parts[3], int(parts[5])),))

    def notify_isr_change(self, tps) -> None:
        """Before 2.7: an /isr_change_notification znode fires the controller's
        IsrChangeNotification handler."""
        self.cluster.engine.schedule(0, "controller_event", "isr_change", (tuple(tps),))

    def zk_request(self, src, msg) -> None:
        """A message to the ZooKeeper ensemble: a session's ping."""
        from kafkasim.core.messages import ZkPing, ZkPingResponse

        if isinstance(msg, ZkPing):
            alive = self.cluster.zk.touch(msg.session_id, self.cluster.engine.now)
            if alive:
                self.watch_session(msg.session_id)
            self.cluster.transport.send(ZOOKEEPER, src, ZkPingResponse(msg.session_id, alive))

    def watch_session(self, session_id: int) -> None:
        """Check the session once its timeout passed since the last ping heard."""
        s = self.cluster.zk.sessions.get(session_id)
        if s is not None:
            self.cluster.engine.schedule(s.timeout_ms, "zk_session_check", session_id,
                                         s.last_heard_ms)

    def zk_session_check(self, session_id: int, heard_ms: int) -> None:
        """No ping came for the session's timeout: it expires."""
        s = self.cluster.zk.sessions.get(session_id)
        if s is None or s.last_heard_ms != heard_ms:
            return
        waited = self.cluster.engine.now - heard_ms
        self.cluster.trace.record("zk_session_expired", ZOOKEEPER, "", -1,
                            ev.ZkSessionExpired(session_id, s.owner, "timeout", waited))
        self.close_session(session_id)

    def expire_session(self, broker: int) -> None:
        """Expire a broker's ZooKeeper session now (as if it had been silent too long)."""
        cluster = self.cluster
        b = cluster.brokers.get(broker)
        if b is None:
            raise ClusterError(f"Unknown broker {broker}; brokers are {sorted(cluster.brokers)}")
        if cluster.kraft is not None:
            raise ClusterError(
                f"Kafka {cluster.kafka_version} runs in KRaft mode: there are no ZooKeeper "
                "sessions. A broker is fenced when the active controller has had no heartbeat "
                "from it for broker.session.timeout.ms; cut it off from the controllers (cut / "
                "partition_network) or pause it to see that")
        if not cluster.zk.session_alive(b.zk_lifecycle.session_id):
            raise ClusterError(f"broker {broker} has no live ZooKeeper session")
        cluster.trace.record("zk_session_expired", ZOOKEEPER, "", -1,
                             ev.ZkSessionExpired(b.zk_lifecycle.session_id, broker, "request", -1))
        self.close_session(b.zk_lifecycle.session_id)

    def close_session(self, session_id: int) -> None:
        """Expire or close a session: its ephemeral znodes vanish and the watches fire."""
        cluster = self.cluster
        engine = cluster.engine
        gone = cluster.zk.close_session(session_id)
        if any(p.startswith("/brokers/ids/") for p in gone):
            engine.schedule(1, "controller_event", "broker_change", ())
        if "/controller" in gone:
            cluster.trace.record("controller", ZOOKEEPER, "", -1, ev.ControllerReelection())
            for bid in sorted(cluster.brokers):
                delay = 1 + int(engine.rng.random() * (cluster.transport.network.jitter_ms + 1))
                engine.schedule(delay, "try_controller", bid)

    def queue_controller_request(self, src, dst, msg) -> None:
        """ControllerChannelManager keeps a queue per broker and its RequestSendThread retries a
        request it could not send (backing off), so controller requests survive partitions."""
        q = self.controller_queues.get((src, dst))
        if q is None:
            self.controller_queues[(src, dst)] = [msg]
            self.cluster.transport.regate()
            self.cluster.engine.schedule(CONTROLLER_RETRY_BACKOFF_MS, "controller_resend", src,
                                         dst)
        else:
            q.append(msg)

    def controller_resend(self, src, dst) -> None:
        """RequestSendThread's retry: send the queued requests if the controller still is and
        reaches the broker; back off again otherwise."""
        q = self.controller_queues.get((src, dst))
        if q is None:
            return
        sender = self.cluster.brokers.get(src)
        if sender is None or not sender.is_running or sender.controller is None or \
                not self.cluster.zk.exists(f"/brokers/ids/{dst}"):
            del self.controller_queues[(src, dst)]  # the channel is gone with its controller
            self.cluster.transport.regate()
            return
        engine = self.cluster.engine
        network = self.cluster.transport.network
        if sender.paused_until > engine.now or not network.can_reach(src, dst):
            engine.schedule(CONTROLLER_RETRY_BACKOFF_MS, "controller_resend", src, dst)
            return
        del self.controller_queues[(src, dst)]
        self.cluster.transport.regate()
        for msg in q:
            self.cluster.transport.send(src, dst, msg)
