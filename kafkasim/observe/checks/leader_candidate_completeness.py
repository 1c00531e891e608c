"""LeaderCandidateCompleteness: running members of the controller's ISR have LEO >= true_hw."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, register
from kafkasim.observe.checks.ghost import Ghost


@register
class LeaderCandidateCompleteness(Checker):
    """No running member of the controller's ISR has a LEO below ``true_hw``: whoever a clean
    election picks holds every committed offset.

    KIP-966 spec LeaderCandidateCompleteness (teaching-scenarios "Invariants" 4) over the ISR;
    its ELR half (KRaft, KIP-966) is ``ElrCompleteness``. A stopped member is skipped (it
    cannot be elected while down; a crash keeps its log, a power loss is judged when it runs
    again). Allowed when that replica's log was cut
    below ``true_hw`` by a power loss (KIP-101 scenario 2, the "last replica standing" of
    KIP-966), or after an unclean election since ``true_hw`` last rose.
    """

    name = "LeaderCandidateCompleteness"
    source = "teaching-scenarios Invariants 4 (LeaderCandidateCompleteness, KIP-966 spec)"

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        everything = g.full or g.structural or g._states_changed
        dirty = g.dirty
        brokers = cluster.brokers
        for tp, (leader, epoch, isr) in g.states.items():
            if not everything and tp not in dirty:
                continue
            thw = g.true_hw.get(tp, 0)
            if thw <= 0:
                continue
            for r in isr:
                b = brokers.get(r)
                if b is None or not b.is_running:
                    continue
                log = b.logs.get(tp)
                leo = log.log_end_offset if log is not None else 0
                if leo >= thw or (log is not None and log.log_start_offset >= thw):
                    continue
                why = g.replica_loss_reasons(tp, (r,), thw - 1, g.true_hw_time.get(tp, 0))
                yield self.violation(
                    cluster, g, (tp, r, epoch),
                    f"broker {r} is in the controller's ISR {list(isr)} (leader {leader}) and "
                    f"running, but its LEO {leo} is below true_hw {thw}: electing it would "
                    f"lose committed offsets {leo}..{thw - 1}",
                    topic=tp[0], partition=tp[1], brokers=(r,), offsets=(leo, thw),
                    allowed_because="; ".join(why) if why else None)
