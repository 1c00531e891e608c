"""``org.apache.kafka.raft.LeaderAndEpoch``: the leader a KRaft replica knows, with the epoch.

What ``QuorumState.leaderAndEpoch()`` (and ``KafkaRaftClient.leaderAndEpoch()``) answers and
what the RaftClient listeners are told on a leader change. The leader id is Kafka's
``OptionalInt``: None when unknown. Kafka's constructor refuses a null OptionalInt; here None
already means "empty", so the check refuses what is not an int or None (a bool included).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LeaderAndEpoch:
    """A record of (leader id or None, epoch); equal when both are."""

    leader_id: int | None
    epoch: int

    def __post_init__(self) -> None:
        if self.leader_id is not None and (
                isinstance(self.leader_id, bool) or not isinstance(self.leader_id, int)):
            raise TypeError(f"LeaderAndEpoch: leader_id must be an int or None (unknown), got "
                            f"{self.leader_id!r}")
        if isinstance(self.epoch, bool) or not isinstance(self.epoch, int):
            raise TypeError(f"LeaderAndEpoch: epoch must be an int, got {self.epoch!r}")

    def is_leader(self, node_id: int) -> bool:
        """isLeader(nodeId): the leader is known and is ``node_id``."""
        return self.leader_id is not None and self.leader_id == node_id


#: LeaderAndEpoch.UNKNOWN: no leader, epoch 0
UNKNOWN_LEADER_AND_EPOCH = LeaderAndEpoch(None, 0)
