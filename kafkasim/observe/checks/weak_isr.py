"""WeakIsr: a leader's cached ISR holds its records below its HW."""

from __future__ import annotations

from kafkasim.observe.checks.base import _IsrPrefix, register
from kafkasim.observe.checks.ghost import TP, Ghost


@register
class WeakIsr(_IsrPrefix):
    """Every replica that believes it leads, with local HW h: every member of *its own cached*
    ISR holds the same records (id and epoch) at every offset below h.

    WeakIsr of the public TLA+ models of Kafka replication (Kip320.tla; teaching-scenarios
    "Definitions"). Violated by KIP-101 scenario 1 (a restarted follower truncates committed
    data to its own HW while it stays in the ISR) and KIP-279 (a replica keeps a divergent
    record after an unclean election). Allowed when the replica's log was cut at or below the
    offset by a power loss, or after an unclean election while the leader or that replica has
    not taken in the controller's current leader epoch (a deposed leader's old history).
    """

    name = "WeakIsr"
    source = "teaching-scenarios Definitions (WeakIsr, Kip320.tla); KIP-101 scenario 1"
    what = "its cached ISR"

    def members(self, g: Ghost, tp: TP, part) -> tuple[int, ...]:
        return part.isr
