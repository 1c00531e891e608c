"""ValidHighWatermark: the controller's ISR has LEO >= the controller leader's HW."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, register
from kafkasim.observe.checks.ghost import Ghost


@register
class ValidHighWatermark(Checker):
    """Every member of the controller's ISR has a LEO at least the HW of the controller's
    leader (once that leader has taken over, i.e. leads in the controller's epoch).

    ValidHighWatermark of AsyncIsr.tla (teaching-scenarios "Invariants" 5, "Definitions"): with
    asynchronous ISR changes (KIP-497 AlterPartition, or the pre-2.7 leader-written ZooKeeper
    ISR) the leader's HW must stay within what the controller's ISR holds, not just its own
    cached ISR (``HwBelowIsrLeo``). Allowed after a power loss cut that member below the HW, or
    an unclean election.
    """

    name = "ValidHighWatermark"
    source = "teaching-scenarios Invariants 5 / Definitions (ValidHighWatermark, AsyncIsr.tla)"

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        everything = g.full or g.structural or g._states_changed
        dirty = g.dirty
        brokers = cluster.brokers
        for tp, (leader, epoch, log, _key, applied) in g.leader_info.items():
            if not applied or (not everything and tp not in dirty):
                continue
            hw = log.high_watermark
            for r in g.states[tp][2]:
                if r == leader:
                    continue
                b = brokers.get(r)
                rlog = b.logs.get(tp) if b is not None else None
                leo = rlog.log_end_offset if rlog is not None else 0
                if leo >= hw:
                    continue
                why = g.replica_loss_reasons(tp, (r,), hw - 1)
                yield self.violation(
                    cluster, g, (tp, leader, epoch, r),
                    f"leader {leader} (epoch {epoch}) has HW {hw} but {r}, in the controller's "
                    f"ISR {list(g.states[tp][2])}, has LEO {leo}",
                    topic=tp[0], partition=tp[1], brokers=(leader, r), offsets=(hw, leo),
                    allowed_because="; ".join(why) if why else None)
