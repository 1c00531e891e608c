"""HwWithinLog: structural: log start <= HW <= LEO on every replica."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, register
from kafkasim.observe.checks.ghost import Ghost


@register
class HwWithinLog(Checker):
    """Every replica's HW lies within its log: log start offset <= HW <= LEO.

    Structural (TypeOk-style) rule from fact sheet §1: the leader raises its HW to at most its
    LEO; a follower clamps the leader's HW into [logStartOffset, own LEO]; truncation lowers the
    HW to the new LEO (UnifiedLog.updateHighWatermark / truncateTo).
    """

    name = "HwWithinLog"
    source = "fact sheet §1 (UnifiedLog.updateHighWatermark clamps; truncateTo); TypeOk"

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        everything = g.full or g.structural
        dirty = g.dirty
        for tp, holders in g.replica_logs.items():
            if not everything and tp not in dirty:
                continue
            for bid, log in holders:
                hw = log.high_watermark
                start = log.log_start_offset
                leo = log.log_end_offset
                if not start <= hw <= leo:
                    yield self.violation(
                        cluster, g, (tp, bid, hw, start, leo),
                        f"broker {bid}'s HW {hw} is outside its log [{start}, {leo}]",
                        topic=tp[0], partition=tp[1], brokers=(bid,), offsets=(hw, start, leo))
