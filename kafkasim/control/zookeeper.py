"""A ZooKeeper ensemble reduced to what Kafka's ZK mode uses: versioned znodes, ephemeral nodes.

Znode paths and JSON payloads follow Kafka's ZkData (fact sheet §7a). Each write bumps the znode's
``version`` (the zkVersion, later called partition epoch). Ephemeral nodes belong to a session and
vanish with it; while that session lives nobody else can create them (NodeExists). Data watches
report changes of watched paths. Writes with an expected version fail with ``BadVersion`` like a
conditional ``setData``. Iteration is always in sorted path order, never in hash order.
"""

from __future__ import annotations

import json
from dataclasses import dataclass


class BadVersion(Exception):
    """KeeperException.BadVersionException: the conditional write lost a race."""


class NodeExists(Exception):
    """KeeperException.NodeExistsException."""


@dataclass(slots=True)
class Znode:
    data: str
    version: int = 0
    ephemeral_owner: int = 0  # session id, 0 for persistent nodes
    czxid: int = 0            # creation zxid (Kafka uses the broker znode's czxid as broker epoch)
    parsed: object = None     # cache of json.loads(data), reset on every write

    def json(self):
        if self.parsed is None:
            self.parsed = json.loads(self.data)
        return self.parsed


@dataclass(slots=True)
class Session:
    """A client session: alive while the client is heard from within its timeout."""

    session_id: int
    owner: int            # broker id
    timeout_ms: int
    last_heard_ms: int


class ZooKeeper:
    __slots__ = ("znodes", "zxid", "next_session_id", "sessions", "data_watches", "notify")

    def __init__(self) -> None:
        self.znodes: dict[str, Znode] = {}
        self.zxid = 0
        self.next_session_id = 1
        self.sessions: dict[int, Session] = {}
        # paths whose data changes are reported to ``notify(path)`` (a ZNodeChangeHandler's
        # data watch, re-registered after each change as Kafka's ZooKeeperClient does)
        self.data_watches: set[str] = set()
        self.notify = None

    def new_session(self, owner: int = -1, timeout_ms: int = 18000, now: int = 0) -> int:
        sid = self.next_session_id
        self.next_session_id += 1
        self.sessions[sid] = Session(sid, owner, timeout_ms, now)
        return sid

    def session_alive(self, session_id: int) -> bool:
        return session_id in self.sessions

    def touch(self, session_id: int, now: int) -> bool:
        """A ping from the session's client; False if the session already expired."""
        s = self.sessions.get(session_id)
        if s is None:
            return False
        s.last_heard_ms = now
        return True

    def exists(self, path: str) -> bool:
        return path in self.znodes

    def get(self, path: str) -> Znode | None:
        return self.znodes.get(path)

    def create(self, path: str, data: str, ephemeral_owner: int = 0) -> Znode:
        if path in self.znodes:
            raise NodeExists(path)
        self.zxid += 1
        node = Znode(data, 0, ephemeral_owner, self.zxid)
        self.znodes[path] = node
        return node

    def set(self, path: str, data: str, expected_version: int = -1) -> int:
        node = self.znodes.get(path)
        if node is None:
            raise KeyError(path)
        if expected_version >= 0 and node.version != expected_version:
            raise BadVersion(f"{path}: expected version {expected_version}, is {node.version}")
        self.zxid += 1
        node.data = data
        node.parsed = None
        node.version += 1
        if path in self.data_watches and self.notify is not None:
            self.notify(path)
        return node.version

    def delete(self, path: str) -> None:
        self.znodes.pop(path, None)

    def children(self, path: str) -> list[str]:
        prefix = path.rstrip("/") + "/"
        out = []
        for p in sorted(self.znodes):
            if p.startswith(prefix) and "/" not in p[len(prefix):]:
                out.append(p[len(prefix):])
        return out

    def close_session(self, session_id: int) -> list[str]:
        """Session expired or closed: its ephemeral nodes disappear. Returns their paths."""
        self.sessions.pop(session_id, None)
        gone = sorted(p for p, n in self.znodes.items() if n.ephemeral_owner == session_id)
        for p in gone:
            del self.znodes[p]
        return gone


def partition_state_path(topic: str, partition: int) -> str:
    return f"/brokers/topics/{topic}/partitions/{partition}/state"


def partition_state_json(leader: int, leader_epoch: int, isr, controller_epoch: int,
                         leader_recovery_state: int = 0) -> str:
    """TopicPartitionStateZNode.encode: ``leader_recovery_state`` (KIP-704, 3.2+) is written only
    when it is not RECOVERED (0); decode reads a missing field as RECOVERED."""
    data = {"controller_epoch": controller_epoch, "leader": leader, "version": 1,
            "leader_epoch": leader_epoch, "isr": list(isr)}
    if leader_recovery_state:
        data["leader_recovery_state"] = leader_recovery_state
    return json.dumps(data, separators=(",", ":"))


class ReassignPartitionsZNode:
    """kafka.zk.ReassignPartitionsZNode: /admin/reassign_partitions, where tools before KIP-455
    (and ZooKeeper-mode admins after it) wrote the targets of a reassignment. kafkasim keeps the
    codec only: the ZooKeeper controller takes the decoded content as its
    ZkPartitionReassignment event (``KafkaController.process_zk_partition_reassignment``)."""

    path = "/admin/reassign_partitions"

    @staticmethod
    def encode(reassignment: dict) -> bytes:
        """LegacyPartitionAssignment version 1: ``{tp: replicas}`` in the map's order."""
        partitions = [{"topic": t, "partition": p, "replicas": [int(r) for r in reps]}
                      for (t, p), reps in reassignment.items()]
        return json.dumps({"version": 1, "partitions": partitions},
                          separators=(",", ":")).encode()

    @staticmethod
    def decode(data: bytes) -> dict:
        """``{(topic, partition): [replicas]}``; JSON that does not parse raises
        ``json.JSONDecodeError`` (Kafka's Left(JsonProcessingException))."""
        doc = json.loads(data)
        return {(a["topic"], a["partition"]): list(a["replicas"]) for a in doc["partitions"]}
