"""A KRaft controller node (``process.roles=controller``; kafka.server.ControllerServer).

It hosts a voter of the ``__cluster_metadata`` quorum (``KafkaRaftClient``) and a
``QuorumController`` that is active while this node leads the quorum. It is a process like a
broker: it can crash (its metadata log and ``quorum-state`` survive on disk), restart, be paused
or cut off by a network partition. Node ids of dedicated controllers are distinct from broker
ids (3000, 3001, 3002 by default here).
"""

from __future__ import annotations

from kafkasim.control.kraft.quorum_controller import QuorumController
from kafkasim.control.kraft.raft import KafkaRaftClient, LeaderState
from kafkasim.control.kraft.raft_messages import RAFT_MESSAGES
from kafkasim.control.kraft.raft_snapshots import MetadataLoader, configure_metadata_log
from kafkasim.core import events as ev

RUNNING = "running"
STOPPED = "stopped"
_RAFT_MESSAGE_TYPES = frozenset(RAFT_MESSAGES)   # the quorum's RPCs (KafkaRaftClient's)

CONTROLLER_TIMERS = frozenset({"write_no_op", "maybe_fence_replicas",
                               "maybe_balance_partition_leaders",
                               "maybe_elect_unclean_leaders", "periodic_task"})


def controller_log_dir(cluster, node_id: int):
    """The controller's metadata log directory (``metadata.log.dir``): ``controller-<id>``
    beside the brokers' ``broker-<id>`` when the cluster has ``log_dirs``, else in memory."""
    import os

    from kafkasim.core.checkpoint import LogDir

    roots = [b.log_manager.log_dir.root for b in cluster.brokers.values()]
    root = roots[0] if roots else None
    if root is None:
        return LogDir()
    return LogDir(os.path.join(os.path.dirname(root), f"controller-{node_id}"))


class ControllerServer:
    """See the module docstring. It is the ``ctx`` of its Raft client and of its
    QuorumController."""

    def __init__(self, cluster, node_id: int, voters: tuple[int, ...], config: dict,
                 raft_options: dict, managers) -> None:
        self.cluster = cluster
        self.id = node_id
        self.config = config
        self.state = STOPPED
        self.incarnation = 0
        self.paused_until = 0
        self.raft = KafkaRaftClient(node_id, voters, config, **raft_options)
        configure_metadata_log(self.raft.log, config, controller_log_dir(cluster, node_id))
        self.controller = QuorumController(node_id, managers, config)
        self.managers = managers
        # KIP-630: the snapshot side of this process's MetadataLoader (new at each start)
        self.metadata_loader = MetadataLoader.for_node(node_id, config, 0)

    def __repr__(self) -> str:
        role = "active" if self.controller.active else self.raft.state_name
        return f"ControllerServer({self.id}, {self.state}, {role})"

    # -- ctx ------------------------------------------------------------------------------------
    @property
    def now(self) -> int:
        return self.cluster.engine.now

    @property
    def is_running(self) -> bool:
        return self.state == RUNNING

    def send(self, dst, msg) -> None:
        self.cluster.transport.send(self.id, dst, msg)

    def schedule(self, delay_ms: int, timer: str, *args) -> None:
        self.cluster.engine.schedule(delay_ms, "controller_node_timer", self.id,
                                     self.incarnation, timer, args)

    def random_int(self, bound: int) -> int:
        return self.cluster.engine.rng.randrange(bound)

    def trace(self, kind: str, detail=None, topic: str = "", partition: int = -1) -> None:
        self.cluster.trace.record(kind, self.id, topic, partition, detail)

    def on_leader_change(self, leader_id: int, epoch: int) -> None:
        self.controller.on_leader_change(self, leader_id, epoch)

    def on_high_watermark(self, hw: int) -> None:
        self.controller.on_high_watermark(self, hw)
        self.cluster.kraft.on_committed(self, hw)
        self.metadata_loader.handle_commit(self, self.raft, hw)

    # -- process ------------------------------------------------------------------------------
    def start(self) -> None:
        if self.state == RUNNING:
            raise RuntimeError(f"controller {self.id} is already running")
        self.state = RUNNING
        self.incarnation += 1
        self.cluster.transport.network.incarnations[self.id] = self.incarnation
        self.paused_until = 0
        self.controller = QuorumController(self.id, self.managers, self.config)
        self.metadata_loader = MetadataLoader.for_node(self.id, self.config, self.now)
        self.trace("controller_node_start", ev.ControllerNodeStart())
        self.raft.start(self)

    def crash(self) -> None:
        """kill -9: the in-memory controller state is gone; the metadata log and quorum-state
        stay on disk."""
        if self.state != RUNNING:
            raise RuntimeError(f"controller {self.id} is not running")
        self._stop("crash")

    def shutdown(self) -> None:
        """A clean shutdown: a leader resigns first (EndQuorumEpoch), so the others elect a
        new leader without waiting for the fetch timeout."""
        if self.state != RUNNING:
            raise RuntimeError(f"controller {self.id} is not running")
        if isinstance(self.raft.state, LeaderState):   # a follower has nothing to resign
            self.raft.resign(self)
        self._stop("clean shutdown")

    def _stop(self, kind: str) -> None:
        self.state = STOPPED
        if self.controller.active:
            self.controller.active = False
        self.cluster.transport.network.incarnations[self.id] = self.incarnation + 1000000
        self.cluster.transport.reset_connections(self.id)
        self.trace("controller_node_stop", ev.ControllerNodeStop(kind))

    def on_peer_gone(self, dead: int) -> None:
        """A node's process died: the quorum request in flight to it fails now."""
        self.raft.on_peer_gone(self, dead)

    def on_disconnect(self, dst, msg) -> None:
        """A request's destination died: a quorum RPC fails at once (BROKER_NOT_AVAILABLE,
        KafkaNetworkChannel); QuorumController's own RPCs to brokers have no connection."""
        if type(msg) in _RAFT_MESSAGE_TYPES and msg.__class__.__name__.endswith(
                "Request"):
            self.raft.on_disconnect(self, dst, msg.correlation_id)

    def on_message(self, src, msg) -> None:
        if type(msg) in _RAFT_MESSAGE_TYPES:
            self.raft.handle(self, src, msg)
        else:
            self.controller.handle(self, src, msg)

    def on_timer(self, timer: str, args: tuple) -> None:
        if timer in CONTROLLER_TIMERS:
            self.controller.on_timer(self, timer, *args)
        else:
            self.raft.on_timer(self, timer, *args)
