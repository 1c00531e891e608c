"""Partition driven alone (kafkasim.protocol.fake.FakeContext), against Kafka's Partition."""

from __future__ import annotations

from kafkasim.protocol.fake import FakeContext


def test_a_follower_keeps_no_isr_and_no_remote_replica_state():
    """Partition.makeFollower -> updateAssignmentAndIsr(isr = Set.empty, isLeader = false): a
    follower knows neither the ISR nor its peers' fetch state (every version since 0.8)."""
    ctx = FakeContext(broker_id=1)
    part = ctx.partition("t", 0)
    part.make_leader(ctx, 1, (1, 2, 3), (1, 2, 3), 0, 1)
    assert part.isr == (1, 2, 3) and set(part.remote) == {2, 3}
    assert part.make_follower(ctx, 2, 2, (2, 3), (1, 2, 3), 1, 1)
    assert part.isr == () and part.remote == {} and not part.is_leader
    assert (part.leader_id, part.leader_epoch) == (2, 2)
    # leading again starts from fresh follower state (unknown LEOs), ISR from the request
    part.make_leader(ctx, 3, (1, 3), (1, 2, 3), 2, 1)
    assert part.isr == (1, 3)
    assert {r: st.log_end_offset for r, st in part.remote.items()} == {2: -1, 3: -1}
