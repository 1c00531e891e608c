"""ConsistentRead: reads stay below the served HW; an offset never reads two ways."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, _LeaderPresence, register
from kafkasim.observe.checks.ghost import Ghost, _lookup


@register
class ConsistentRead(Checker):
    """Consumers read only committed data, and an offset never reads as two different records.

    (a) a consumer never receives a record at or past the HW served with it (fact sheet §1, "What
    consumers can read"); (b) two reads of one offset (by any consumers) return the same record
    id; (c) every consumed record is still at its offset on the current non-stale leader.
    teaching-scenarios "Invariants" 3 and the KIP-966 spec's ConsistentRead; KIP-101 scenario 1
    ("phantom read").
    """

    name = "ConsistentRead"
    source = ("teaching-scenarios Invariants 3 (ConsistentRead, KIP-966 spec); KIP-101 "
              "scenario 1; fact sheet §1 (reads capped at the HW)")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._presence = _LeaderPresence()

    def _reset_state(self) -> None:
        self._presence = _LeaderPresence()

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        for cid, rec, prev in g.new_consumed:
            tp = (rec.topic, rec.partition)
            if rec.offset >= rec.served_hw:
                yield self.violation(
                    cluster, g, ("past_hw", cid, tp, rec.offset),
                    f"consumer {cid} received record {rec.record_id} at offset {rec.offset}, "
                    f"at or past the high watermark {rec.served_hw} served with it",
                    topic=tp[0], partition=tp[1], offsets=(rec.offset, rec.served_hw),
                    record_ids=(rec.record_id,))
            if prev is not None and prev.record_id != rec.record_id:
                why = g.losses.record_loss_reasons(tp, prev.offset, prev.record_id, prev.time_ms,
                                            prev.leader_epoch)
                yield self.violation(
                    cluster, g, ("two_reads", tp, rec.offset, prev.record_id, rec.record_id),
                    f"offset {rec.offset} read as record {prev.record_id} (epoch "
                    f"{prev.leader_epoch}) by {prev.client} at t={prev.time_ms} ms, but as "
                    f"record {rec.record_id} (epoch {rec.leader_epoch}) by {cid}",
                    topic=tp[0], partition=tp[1], offsets=(rec.offset,),
                    record_ids=(prev.record_id, rec.record_id),
                    allowed_because="; ".join(why) if why else None)
        presence = self._presence
        info = g.leader_info
        for tp, recs in g.consumed_list.items():
            found = info.get(tp)
            if found is None or not found[4]:
                continue   # no leader, or it has not taken over yet (stale)
            leader, epoch, log, key, _applied = found
            leo = log.log_end_offset if log is not None else 0
            start = log.log_start_offset if log is not None else 0
            i = presence.start_index(g, tp, key, leader, leo)
            n = len(recs)
            if i == n:
                continue
            for j in range(i, n):
                r = recs[j]
                if r.offset < start:
                    continue
                have = _lookup(log, r.offset)
                if have == r.record_id:
                    continue
                why = g.losses.record_loss_reasons(tp, r.offset, r.record_id, r.time_ms,
                                            r.leader_epoch)
                what = (f"the leader has record {have} there" if have is not None
                        else f"the leader's log ends at {leo}")
                yield self.violation(
                    cluster, g, ("vanished", tp, r.offset, r.record_id),
                    f"record {r.record_id} read at offset {r.offset} by {r.client} at "
                    f"t={r.time_ms} ms is no longer on leader {leader} (epoch {epoch}): {what}",
                    topic=tp[0], partition=tp[1], brokers=(leader,), offsets=(r.offset,),
                    record_ids=(r.record_id,) if have is None else (r.record_id, have),
                    allowed_because="; ".join(why) if why else None)
            presence.done(tp, key, n, leo)
