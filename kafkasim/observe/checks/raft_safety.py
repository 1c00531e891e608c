"""RaftSafety: KRaft: the metadata quorum obeys Raft safety."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.control.kraft.raft_invariants import RaftSafetyProgress, check_raft_safety
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
    commits, elections, leader HWs compared), and then only over what changed
    (``RaftSafetyProgress``): the whole check runs when that finds something, after a hand
    edit (a full re-check), or when it cannot judge a change alone. ZooKeeper: no-op.
    """

    name = "RaftSafety"
    source = ("KIP-595 (KafkaRaftClient); Raft paper 5.2-5.4 (Election Safety, Log Matching, "
              "Leader Completeness); KIP-966 spec MetadataLogMatching")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._progress = RaftSafetyProgress()

    def _reset_state(self) -> None:
        self._progress = RaftSafetyProgress()

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        if not g.raft_changed:
            return   # no raft_* / controller node row since the last check: nothing moved
        clients = _raft_clients(cluster)
        if not clients:
            return
        key = tuple((id(r), r.log.end_offset, r.log.entries[-1][1] if r.log.entries else -1,
                     len(r.committed), len(r.elected_epochs), len(r.leader_hw_history))
                    for r in clients)
        if key == g.raft_key and not g.full:
            return
        g.raft_key = key
        if g.full:   # the state may have been edited by hand: judge it whole, then from here
            self._progress = RaftSafetyProgress()
        elif self._progress.advance(clients):
            return   # everything new since the last check is safe (RaftSafetyProgress)
        for problem in check_raft_safety(clients):
            yield self.violation(cluster, g, (problem,), problem)
