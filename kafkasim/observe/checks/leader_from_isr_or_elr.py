"""LeaderFromIsrOrElr: KRaft: a new leader comes from the previous ISR or ELR, unless unclean."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, register
from kafkasim.observe.checks.ghost import Ghost


@register
class LeaderFromIsrOrElr(Checker):
    """KRaft: every committed leader change elects a replica of the previous ISR or ELR,
    unless it is an unclean election.

    PartitionChangeBuilder.electLeader / ``isValidNewLeader`` (3.3+; ELR from KIP-966): the
    new leader is in the target ISR, or in the ELR when the ISR is empty; anything else
    (``unclean.leader.election.enable``, or KIP-966's last known leader) is unclean and the
    record sets LeaderRecoveryState RECOVERING (KIP-704), as the controller's ``LeaderElection``
    trace row shows (``unclean``). Checked on every committed PartitionChangeRecord, replayed
    in log order (``Ghost.meta_changes``): a new leader outside the previous ISR and ELR
    requires the new registration to be RECOVERING. ZooKeeper clusters: a no-op.
    """

    name = "LeaderFromIsrOrElr"
    source = ("PartitionChangeBuilder.electLeader/isValidNewLeader (KRaft, 3.3+); KIP-966 "
              "(ELR); KIP-704 (LeaderRecoveryState RECOVERING on unclean election)")

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        from kafkasim.control.kraft.records import NO_LEADER, LeaderRecoveryState

        for tp, off, _record, before, after in g.meta_changes:
            if before is None or after.leader == before.leader or after.leader == NO_LEADER:
                continue
            if after.leader in before.isr or after.leader in before.elr:
                continue
            if after.leader_recovery_state == LeaderRecoveryState.RECOVERING:
                continue   # an unclean election (or the last known leader): loss allowed
            yield self.violation(
                cluster, g, (tp, off, after.leader, after.leader_epoch),
                f"metadata offset {off} makes broker {after.leader} leader (epoch "
                f"{after.leader_epoch}, was {before.leader}) though it was in neither the ISR "
                f"{list(before.isr)} nor the ELR {list(before.elr)}, and the change is not an "
                f"unclean election (LeaderRecoveryState stays RECOVERED)",
                topic=tp[0], partition=tp[1], brokers=(after.leader,), offsets=(off,))
