"""MonotoneLeaderHw: a leader's HW never goes down while it stays leader."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, register
from kafkasim.observe.checks.ghost import TP, Ghost


@register
class MonotoneLeaderHw(Checker):
    """A leader's HW never decreases while it remains leader (same broker, epoch, incarnation).

    Fact sheet §1 (UnifiedLog.maybeIncrementHighWatermark: "the leader's HW never moves
    backwards"). Local HWs may go down across leader changes (teaching-scenarios "Invariants" 7);
    the monotone committed HW is the ghost ``true_hw``.
    """

    name = "MonotoneLeaderHw"
    source = ("fact sheet §1 (UnifiedLog.maybeIncrementHighWatermark); teaching-scenarios "
              "Invariants 7")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._last: dict[tuple[int, TP], tuple[int, int, int]] = {}

    def _reset_state(self) -> None:
        self._last = {}

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        last = self._last
        seen = {}
        brokers = cluster.brokers
        for bid, tp, part in g.local_leaders:
            hw = part.log.high_watermark
            term = (brokers[bid].incarnation, part.leader_epoch)
            k = (bid, tp)
            prev = last.get(k)
            if prev is not None and prev[:2] == term and hw < prev[2]:
                yield self.violation(
                    cluster, g, (tp, bid, term, hw, prev[2]),
                    f"leader {bid} (epoch {part.leader_epoch}) lowered its HW from {prev[2]} "
                    f"to {hw}", topic=tp[0], partition=tp[1], brokers=(bid,),
                    offsets=(prev[2], hw))
                seen[k] = (*term, max(hw, prev[2]))   # report the drop once
            else:
                seen[k] = (*term, hw)
        self._last = seen
