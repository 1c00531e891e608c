"""RaftSafety: KRaft: the metadata quorum obeys Raft safety."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, register
from kafkasim.observe.checks.ghost import Ghost, _raft_clients


@register
class RaftSafety(Checker):
    """KRaft: the ``__cluster_metadata`` quorum obeys Raft safety: at most one leader per
    epoch, committed entries never lost from a node's log nor committed two ways, a leader
    holds everything committed before its epoch, a leader's HW never decreases.

    Wraps ``kafkasim.control.kraft.raft_invariants.check_raft_safety`` over every raft client
    (controllers and the brokers' observers: KIP-595, the Raft paper's Election Safety, Log
    Matching, Leader Completeness; the KIP-966 spec's MetadataLogMatching). Evaluated when a
    node's raft state changed (a ``raft_*`` or controller node trace row, then log length,
    commits, elections, leader HWs compared). ZooKeeper: no-op.
    """

    name = "RaftSafety"
    source = ("KIP-595 (KafkaRaftClient); Raft paper 5.2-5.4 (Election Safety, Log Matching, "
              "Leader Completeness); KIP-966 spec MetadataLogMatching")

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        from kafkasim.control.kraft.raft_invariants import check_raft_safety

        if not g.raft_changed:
            return   # no raft_* / controller node row since the last check: nothing moved
        clients = _raft_clients(cluster)
        if not clients:
            return
        key = tuple((id(r), len(r.log.entries), r.log.entries[-1][1] if r.log.entries else -1,
                     len(r.committed), len(r.elected_epochs), len(r.leader_hw_history))
                    for r in clients)
        if key == g.raft_key and not g.full:
            return
        g.raft_key = key
        for problem in check_raft_safety(clients):
            yield self.violation(cluster, g, (problem,), problem)
