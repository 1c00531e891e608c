"""LogMatching: two live replicas agree (id and epoch) below min(their HWs)."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, register
from kafkasim.observe.checks.ghost import Ghost


@register
class LogMatching(Checker):
    """Any two replicas hold identical records (id and leader epoch) below min(their local HWs).

    teaching-scenarios "Invariants" 2 (LogMatching, KIP-966 spec); KIP-101 scenario 2 (replica
    divergence). Compared: running replicas whose HW is current (``Ghost.hw_live``): a leader,
    or a follower once a fetch response set its HW since it last became follower or restarted.
    A stopped replica's HW, or the one a restarted broker reads back from its checkpoint before
    it has reconciled its log with the leader (OffsetsForLeaderEpoch / DivergingEpoch), is stale
    and not a claim about committed data: under leader epochs (0.11+) the divergent suffix is
    truncated first (KIP-101 scenario 2 "fixed"); before 0.11 it is kept and fetched past.
    Allowed after an unclean election (committed histories fork) while one of the two has not
    followed the new leader yet; not once both have (KIP-279: "the divergence is the bug"); never
    because of power loss (KIP-101 scenario 2: "Flag only LogMatching"). An excused divergence
    is compared again at every later check of the partition: once both replicas follow the new
    leader (the lagging one has fetched from it, truncating what the leader's epochs reject)
    and the logs still differ, it is reported.
    """

    name = "LogMatching"
    source = "teaching-scenarios Invariants 2 (LogMatching, KIP-966 spec); KIP-101 scenario 2"

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._marks: dict[tuple, tuple] = {}

    def _reset_state(self) -> None:
        self._marks = {}

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        marks = self._marks
        full = g.full
        truncated = g.truncated
        everything = full or g.structural
        dirty = g.dirty
        brokers = cluster.brokers
        live = g.hw_live
        for tp, holders in g.replica_logs.items():
            # compared ranges only grow with a HW (traced "hw" rows), and logs change below a HW
            # only by a traced truncation: a partition no data-path row touched is unchanged
            if not everything and tp not in dirty:
                continue
            current = [(b, log) for b, log in holders
                       if brokers[b].is_running and live.get((b, tp), False)]
            n = len(current)
            if n < len(holders):   # compare a replica afresh once its HW is current again
                skipped = {b for b, _log in holders} - {b for b, _log in current}
                for k in [k for k in marks if k[0] == tp and (k[1] in skipped
                                                             or k[2] in skipped)]:
                    del marks[k]
            for i in range(n):
                a, la = current[i]
                for j in range(i + 1, n):
                    b, lb = current[j]
                    yield from self._compare(cluster, g, tp, a, la, b, lb, marks, full,
                                             truncated)

    def _compare(self, cluster, g, tp, a, la, b, lb, marks, full, truncated):
        sa = la.log_start_offset
        sb = lb.log_start_offset
        leo_a = la.log_end_offset
        leo_b = lb.log_end_offset
        # (a HW above the LEO is HwWithinLog's business: compare what both logs hold)
        h = min(la.high_watermark, lb.high_watermark, leo_a, leo_b)
        lo = max(sa, sb)
        checked = h       # compared up to here: the next call starts at the mark
        k = (tp, a, b)
        ident = (id(la), id(lb), sa, sb)
        mark = marks.get(k)
        if full or mark is None or mark[0] != ident or leo_a < mark[2] or \
                leo_b < mark[3] or (a, tp) in truncated or (b, tp) in truncated:
            v = lo
        else:
            v = max(mark[1], lo)
        if v < h and (la.ids[v - sa:h - sa] != lb.ids[v - sb:h - sb]
                      or la.epochs[v - sa:h - sa] != lb.epochs[v - sb:h - sb]):
            o = v
            while o < h and la.ids[o - sa] == lb.ids[o - sb] and \
                    la.epochs[o - sa] == lb.epochs[o - sb]:
                o += 1
            ra, rb = la.ids[o - sa], lb.ids[o - sb]
            ea, eb = la.epochs[o - sa], lb.epochs[o - sb]
            # histories fork at an unclean election: excused while a replica still holds the
            # old one (has not followed the new leader); not once both have (KIP-279)
            why = g.losses.loss_reasons(tp) if g.stale(cluster, a, tp) or g.stale(cluster, b, tp) \
                else []
            if why:
                # compare this divergence again until it is gone (the lagging replica truncated
                # against the new leader) or no longer excused (both follow it): then it is
                # reported under its own key, not swallowed as the excused one seen before
                checked = o
            yield self.violation(
                cluster, g, (tp, a, b, o, ra, ea, rb, eb) + (("excused",) if why else ()),
                f"replicas {a} and {b} differ at offset {o}, below both HWs "
                f"({la.high_watermark}, {lb.high_watermark}): broker {a} has record "
                f"{ra}@epoch {ea}, broker {b} has record {rb}@epoch {eb}",
                topic=tp[0], partition=tp[1], brokers=(a, b), offsets=(o,),
                record_ids=(ra, rb), allowed_because="; ".join(why) if why else None)
        marks[k] = (ident, max(v, checked), leo_a, leo_b)
