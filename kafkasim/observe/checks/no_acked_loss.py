"""NoAckedLoss: acked records stay at their offset on the current leader."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, _LeaderPresence, register
from kafkasim.observe.checks.ghost import Ghost, _lookup, acked_loss_reasons


@register
class NoAckedLoss(Checker):
    """Every acked record is at its acked offset in the current leader's log.

    acks=all: always, while the controller has a live leader (teaching-scenarios "Invariants" 1,
    ≈ LeaderCompleteness + StrongIsr of the KIP-966 TLA+ spec; KIP-101 scenario 1; Jepsen 2013
    "Call me maybe: Kafka"). acks=1: while the broker that appended it is still the leader in the
    same term (fact sheet §3: acks=1 answers right after the leader append); missing after the
    leadership moved, it is reported as *allowed* ("acks=1": Kafka promises nothing more). acks=0:
    never (no offset is returned). A record below the leader's log start offset counts as lost
    once no replica's log holds it any more, whatever moved the log start (kafkasim models no
    retention or DeleteRecords; a hand-edited log-start-offset-checkpoint does it). A loss the
    configuration allows (``LossLedger.record_loss_reasons``: an unclean election after the
    ack, or a power loss of every replica that held it) is reported in ``allowed``, not
    raised.
    """

    name = "NoAckedLoss"
    source = ("teaching-scenarios.md Invariants 1 (LeaderCompleteness/StrongIsr, KIP-966 spec); "
              "KIP-101 scenario 1; Jepsen 2013; fact sheet §3")

    def __init__(self, **kw) -> None:
        super().__init__(**kw)
        self._presence = _LeaderPresence()
        # tp -> {(offset, record id): acked record} below the leader's log start that some
        # replica still held when last looked at (looked at again at every evaluation)
        self._below_start: dict = {}

    def _reset_state(self) -> None:
        self._presence = _LeaderPresence()
        self._below_start = {}

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        presence = self._presence
        info = g.leader_info
        for tp, recs in g.acked.items():
            found = info.get(tp)
            if found is None:
                continue
            leader, epoch, log, key, _applied = found
            term, term_leader = g.terms.get(tp, (-1, -1))
            if term_leader != leader:
                term = -2        # the controller's leader has not taken over: no acks=1 check
            key = (key, term)
            leo = log.log_end_offset if log is not None else 0
            start = log.log_start_offset if log is not None else 0
            i = presence.start_index(g, tp, key, leader, leo)
            n = len(recs)
            if i == n:
                continue
            for j in range(i, n):
                r = recs[j]
                off = r.offset
                if r.acks == 0 or off < 0:
                    continue
                if off < start:
                    self._below_start.setdefault(tp, {})[(off, r.record_id)] = r
                    continue
                have = _lookup(log, off)
                if have == r.record_id:
                    continue
                reasons = acked_loss_reasons(g, tp, r, leader, term)
                acks = "all" if r.acks == -1 else str(r.acks)
                what = (f"offset {off} holds record {have} instead"
                        if have is not None else f"the leader's log ends at {leo}")
                yield self.violation(
                    cluster, g, (tp, off, r.record_id),
                    f"record {r.record_id} ({cluster.records.value(r.record_id)!r}), acked "
                    f"with acks={acks} to {r.client} at t={r.time_ms} ms at offset {off}, is "
                    f"missing from leader {leader}'s log (epoch {epoch}): {what}",
                    topic=tp[0], partition=tp[1], brokers=(leader,), offsets=(off,),
                    record_ids=(r.record_id,) if have is None else (r.record_id, have),
                    allowed_because="; ".join(reasons) if reasons else None)
            presence.done(tp, key, n, leo)
        if self._below_start:
            yield from self._gone_below_start(cluster, g)

    def _gone_below_start(self, cluster, g: Ghost) -> Iterator[Violation]:
        """Acked records below the leader's log start: lost once no replica holds them."""
        info = g.leader_info
        for tp in sorted(self._below_start):
            pending = self._below_start[tp]
            found = info.get(tp)
            holders = g.replica_logs.get(tp, ())
            for (off, rid), r in sorted(pending.items()):
                if found is None or any(_lookup(lg, off) == rid for _b, lg in holders):
                    continue
                del pending[(off, rid)]
                leader, epoch, log, _key, _applied = found
                term = g.terms.get(tp, (-1, -1))[0]
                reasons = acked_loss_reasons(g, tp, r, leader, term)
                start = log.log_start_offset if log is not None else 0
                acks = "all" if r.acks == -1 else str(r.acks)
                yield self.violation(
                    cluster, g, (tp, off, rid),
                    f"record {rid} ({cluster.records.value(rid)!r}), acked with acks={acks} to "
                    f"{r.client} at t={r.time_ms} ms at offset {off}, is below leader {leader}'s "
                    f"log start offset {start} (epoch {epoch}) and no replica holds it any more",
                    topic=tp[0], partition=tp[1], brokers=(leader,), offsets=(off,),
                    record_ids=(rid,), allowed_because="; ".join(reasons) if reasons else None)
            if not pending:
                del self._below_start[tp]
