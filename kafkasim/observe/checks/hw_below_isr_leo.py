"""HwBelowIsrLeo: a leader never sets its HW above the LEO of a committed-ISR member."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, register
from kafkasim.observe.checks.ghost import TP, Ghost


@register
class HwBelowIsrLeo(Checker):
    """A leader never sets its HW above the actual LEO of a member of its committed ISR.

    Checked whenever a leader's HW changes (and when a leader is first seen). Fact sheet §1
    (HW = min LEO over the maximal ISR, which contains the committed ISR; maybeIncrementLeaderHW);
    teaching-scenarios "Invariants" 5 (ValidHighWatermark, AsyncIsr.tla).
    """

    name = "HwBelowIsrLeo"
    source = ("fact sheet §1 (Partition.maybeIncrementLeaderHW, KIP-497 maximal ISR); "
              "teaching-scenarios Invariants 5 (ValidHighWatermark, AsyncIsr.tla)")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._last: dict[tuple[int, TP], tuple] = {}

    def _reset_state(self) -> None:
        self._last = {}

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        last = self._last
        seen = {}
        brokers = cluster.brokers
        for bid, tp, part in g.local_leaders:
            hw = part.log.high_watermark
            cur = (brokers[bid].incarnation, part.leader_epoch, hw)
            k = (bid, tp)
            seen[k] = cur
            if last.get(k) == cur:
                continue
            for m in part.isr:
                if m == bid:
                    continue
                mb = brokers.get(m)
                mlog = mb.logs.get(tp) if mb is not None else None
                mleo = mlog.log_end_offset if mlog is not None else 0
                if hw > mleo:
                    why = g.replica_loss_reasons(tp, (m,), mleo)
                    yield self.violation(
                        cluster, g, (tp, bid, part.leader_epoch, hw, m),
                        f"leader {bid} (epoch {part.leader_epoch}) set its HW to {hw} but ISR "
                        f"member {m} has LEO {mleo} (committed ISR {list(part.isr)})",
                        topic=tp[0], partition=tp[1], brokers=(bid, m), offsets=(hw, mleo),
                        allowed_because="; ".join(why) if why else None)
        self._last = seen
