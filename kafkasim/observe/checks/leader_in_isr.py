"""LeaderInIsr: the leader is none or a member of the ISR (both views)."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, register
from kafkasim.observe.checks.ghost import Ghost


@register
class LeaderInIsr(Checker):
    """The leader is none or a member of the ISR, in the controller's and the leader's view.

    Kip320.tla LeaderInIsr, read as ``leader == None or leader in isr`` (teaching-scenarios
    "Invariants" 6 and Definitions); a running leader's cached ISR contains itself.
    """

    name = "LeaderInIsr"
    source = "teaching-scenarios Invariants 6 / Definitions (Kip320.tla LeaderInIsr)"

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        for tp, (leader, epoch, isr) in g.states.items():
            if leader >= 0 and leader not in isr:
                yield self.violation(
                    cluster, g, ("controller", tp, leader, epoch, isr),
                    f"the controller's state names leader {leader} (epoch {epoch}) outside "
                    f"its ISR {list(isr)}", topic=tp[0], partition=tp[1], brokers=(leader,))
        brokers = cluster.brokers
        for bid, tp, part in g.local_leaders:
            if bid not in part.isr and brokers[bid].is_running:
                yield self.violation(
                    cluster, g, ("local", tp, bid, part.leader_epoch, part.isr),
                    f"broker {bid} leads epoch {part.leader_epoch} but its cached ISR "
                    f"{list(part.isr)} does not contain it", topic=tp[0], partition=tp[1],
                    brokers=(bid,))
