"""ElrCompleteness: KRaft: committed-ELR members hold every committed record."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, _LeaderPresence, register
from kafkasim.observe.checks.ghost import Ghost, _lookup


@register
class ElrCompleteness(Checker):
    """KRaft, KIP-966: every member of a partition's committed ELR (Eligible Leader Replicas,
    ``cluster.kraft.image``) holds all committed data: its LEO reaches ``true_hw`` and every
    record acknowledged with acks=all is at its offset in its log.

    The ELR exists because the leader's HW is frozen while the ISR is below min ISR (3.7+,
    KAFKA-15583): a replica leaving the ISR then holds everything below the HW, so electing it
    from the ELR (ISR := [it]) loses nothing (KIP-966; PartitionChangeBuilder
    ``maybePopulateTargetElr``; the KIP-966 TLA+ spec's LeaderCandidateCompleteness over
    ISR and ELR, teaching-scenarios "Invariants" 4). A stopped member is skipped (judged when
    it runs again; a crash keeps its log). Allowed when a power loss cut that member's log
    below the offset (a lossy restart: KIP-966 removes an uncleanly shut down broker from the
    ELR when it registers again, so it is a member only until then), or after an unclean
    election since ``true_hw`` last rose / the record was acked. ZooKeeper clusters have no
    ELR: a no-op there.
    """

    name = "ElrCompleteness"
    source = ("KIP-966 (ELR; PartitionChangeBuilder.maybePopulateTargetElr); KAFKA-15583 (HW "
              "frozen under min ISR); teaching-scenarios Invariants 4 (KIP-966 spec)")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._presence = _LeaderPresence()

    def _reset_state(self) -> None:
        self._presence = _LeaderPresence()

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        presence = self._presence
        if g._states_changed and presence.marks:
            # a replica that leaves the ELR is checked afresh if it joins again
            presence.marks = {k: m for k, m in presence.marks.items()
                              if k[1] in g.elr.get(k[0], ())}
        if not g.elr:
            return
        everything = g.full or g.structural or g._states_changed
        dirty = g.dirty
        brokers = cluster.brokers
        for tp, elr in g.elr.items():
            if not everything and tp not in dirty:
                continue
            thw = g.true_hw.get(tp, 0)
            recs = g.acked.get(tp, ())
            for r in elr:
                b = brokers.get(r)
                if b is None or not b.is_running:
                    continue
                log = b.logs.get(tp)
                leo = log.log_end_offset if log is not None else 0
                start = log.log_start_offset if log is not None else 0
                if leo < thw and start < thw:
                    why = g.replica_loss_reasons(tp, (r,), leo, g.true_hw_time.get(tp, 0))
                    yield self.violation(
                        cluster, g, (tp, r, "short", leo, thw),
                        f"broker {r} is in the committed ELR {list(elr)} but its LEO {leo} is "
                        f"below true_hw {thw}: electing it from the ELR would lose committed "
                        f"offsets {leo}..{thw - 1}",
                        topic=tp[0], partition=tp[1], brokers=(r,), offsets=(leo, thw),
                        allowed_because="; ".join(why) if why else None)
                key = (r, id(log), start)
                mark = presence.marks.get((tp, r))
                i = 0 if g.full or mark is None or mark[0] != key or leo < mark[2] or \
                    (r, tp) in g.truncated else mark[1]
                n = len(recs)
                for j in range(i, n):
                    rec = recs[j]
                    off = rec.offset
                    if rec.acks != -1 or off < start:
                        continue
                    have = _lookup(log, off)
                    if have == rec.record_id:
                        continue
                    why = g.replica_loss_reasons(tp, (r,), off, rec.time_ms)
                    what = (f"offset {off} holds record {have}" if have is not None
                            else f"its log ends at {leo}")
                    yield self.violation(
                        cluster, g, (tp, r, "record", off, rec.record_id),
                        f"broker {r} is in the committed ELR {list(elr)} but lacks record "
                        f"{rec.record_id}, acked with acks=all at offset {off} at "
                        f"t={rec.time_ms} ms: {what}",
                        topic=tp[0], partition=tp[1], brokers=(r,), offsets=(off,),
                        record_ids=(rec.record_id,) if have is None else (rec.record_id, have),
                        allowed_because="; ".join(why) if why else None)
                presence.done((tp, r), key, n, leo)
