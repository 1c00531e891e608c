"""StrongIsr: the controller's ISR holds every leader's records below its HW."""

from __future__ import annotations

from kafkasim.observe.checks.base import _IsrPrefix, register
from kafkasim.observe.checks.ghost import TP, Ghost


@register
class StrongIsr(_IsrPrefix):
    """As WeakIsr, but over the *controller's* ISR (ZooKeeper's partition state; in KRaft the
    committed metadata image): the ISR elections choose from, hence "committed data survives
    any clean election".

    StrongIsr of the public TLA+ models (Kip320.tla; teaching-scenarios "Definitions" and
    "Invariants" 1); violated by KIP-101 scenario 1. Allowed as WeakIsr.
    """

    name = "StrongIsr"
    source = ("teaching-scenarios Definitions (StrongIsr, Kip320.tla) and Invariants 1; "
              "KIP-101 scenario 1")
    what = "the controller's ISR"

    def members(self, g: Ghost, tp: TP, part) -> tuple[int, ...]:
        st = g.states.get(tp)
        return st[2] if st is not None else ()
