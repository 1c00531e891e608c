"""MonotoneTrueHw: what the leader computes its HW from reaches true_hw."""

from __future__ import annotations

from collections.abc import Iterator

from kafkasim.observe.checks.base import Checker, Violation, _ids_from, register
from kafkasim.observe.checks.ghost import Ghost


@register
class MonotoneTrueHw(Checker):
    """The committed HW never goes back: what the controller's leader computes its HW from
    reaches ``true_hw``.

    ``true_hw`` (the largest HW any non-stale leader reached) is monotone by construction, so
    what is checked is the leader's side (teaching-scenarios "Invariants" 7). Precisely: once
    the controller's leader (leading in the controller's epoch) has heard, in its current
    leadership, from every follower of its maximal ISR, its own LEO and the LEO it holds for
    each of them (their last fetch offsets) are at least ``true_hw`` -- so the HW it computes
    from its ISR (their minimum, fact sheet §1 Partition.maybeIncrementLeaderHW) never falls
    below what was committed before.

    Not checked: the HW value itself, which may legitimately stay lower for a while. A new
    leader starts from its follower HW and keeps it until every ISR follower has fetched once
    (fact sheet §1 "New leader quirk"; Vanlightly §6.4.1); followers outside the ISR that the
    leader counts as caught up (even retroactively, KAFKA-4485's previous-fetch rule) hold it
    until they catch up; it is recomputed only on appends, follower progress and ISR changes;
    and it freezes under min ISR from 3.7 (KAFKA-15583). Violated by KIP-101 scenario 1 (the
    new leader lacks a committed record). Allowed after a power loss cut the leader or an ISR
    member below ``true_hw``, or an unclean election since ``true_hw`` last rose.
    """

    name = "MonotoneTrueHw"
    source = ("teaching-scenarios Invariants 7 (monotone true_hw); fact sheet §1 "
              "(maybeIncrementLeaderHW, new leader quirk)")

    def evaluate(self, cluster, g: Ghost) -> Iterator[Violation]:
        everything = g.full or g.structural or g._states_changed
        dirty = g.dirty
        brokers = cluster.brokers
        for tp, (leader, epoch, log, _key, applied) in g.leader_info.items():
            if not applied or (not everything and tp not in dirty):
                continue
            thw = g.true_hw.get(tp, 0)
            broker = brokers[leader]
            part = broker.replica_manager.partitions.get(tp)
            if thw <= 0 or part is None:
                continue
            maximal = part.maximal_isr(broker)
            remote = part.remote
            short = []     # (broker, LEO) below true_hw
            leo = log.log_end_offset
            if leo < thw:
                short.append((leader, leo))
            waiting = False
            for r in maximal:
                if r == leader:
                    continue
                st = remote.get(r)
                if st is None or st.log_end_offset < 0:
                    waiting = True     # has not fetched from this leader yet: HW frozen
                    break
                if st.log_end_offset < thw:
                    short.append((r, st.log_end_offset))
            if waiting or not short:
                continue
            # a power loss that cut the leader (or an ISR member) below true_hw explains it
            why = g.replica_loss_reasons(tp, [leader, *[b for b, _l in short]], thw - 1,
                                         g.true_hw_time.get(tp, 0))
            detail = ", ".join(f"broker {b} at {lo}" for b, lo in short)
            yield self.violation(
                cluster, g, (tp, leader, epoch, thw, tuple(b for b, _l in short)),
                f"leader {leader} (epoch {epoch}, HW {log.high_watermark}) has heard from "
                f"its whole ISR {sorted(maximal)}, but the HW it computes cannot reach "
                f"true_hw {thw} (committed before): log end offsets {detail}",
                topic=tp[0], partition=tp[1], brokers=(leader, *[b for b, _l in short]),
                offsets=(log.high_watermark, thw),
                record_ids=_ids_from(log, min(lo for _b, lo in short), thw),
                allowed_because="; ".join(why) if why else None)
