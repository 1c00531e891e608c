"""``AlterPartitionManager`` driven alone through ``FakeContext`` (no cluster): a leader's ISR
shrink is queued, sent in one AlterPartition, and committed by the controller's answer; a second
proposal for the same partition while one is in flight completes at once with
OPERATION_NOT_ATTEMPTED (3.0+)."""

from __future__ import annotations

from kafkasim.core import errors as E
from kafkasim.core.alter_partition_manager import propose_isr
from kafkasim.core.fake import FakeContext
from kafkasim.core.messages import AlterPartitionRequest, AlterPartitionResponse
from kafkasim.core.replica_manager import ReplicaManager

CONTROLLER = 9


def _leader(version: str = "3.7"):
    ctx = FakeContext(broker_id=1, kafka_version=version)
    rm = ReplicaManager()
    rm.partitions = ctx.partitions
    ctx.replica_manager = rm
    ctx.metadata.controller_id = CONTROLLER
    part = ctx.partition("t", 0)
    part.make_leader(ctx, 1, (1, 2, 3), (1, 2, 3), 0, 1)
    ctx.take()
    return ctx, part


def test_a_shrink_is_sent_once_and_committed_by_the_answer():
    ctx, part = _leader()
    propose_isr(ctx, part, "shrink", (3,), (1, 2))
    manager = ctx.alter_partition_manager
    (dst, req), = ctx.sent
    assert dst == CONTROLLER and isinstance(req, AlterPartitionRequest)
    # AlterPartition v3 (3.5+, KIP-903): each member with its broker epoch, -1 in ZooKeeper mode
    assert req.partitions == (("t", 0, 1, ((1, -1), (2, -1)), 0),) and \
        req.correlation_id == manager.corr
    assert part.pending is not None and tuple(part.isr) == (1, 2, 3)
    manager.handle_alter_partition_response(ctx, CONTROLLER, AlterPartitionResponse(
        E.NONE, (("t", 0, E.NONE, 1, 1, (1, 2), 1),), manager.corr))
    assert tuple(part.isr) == (1, 2) and part.pending is None and part.partition_epoch == 1
    assert manager.unsent == {} and manager.inflight is None
    assert ctx.meters.get("IsrShrinksPerSec") == 1


def test_a_second_proposal_while_one_is_queued_is_not_attempted():
    ctx, part = _leader()
    propose_isr(ctx, part, "shrink", (3,), (1, 2))
    pending = part.pending
    propose_isr(ctx, part, "shrink", (2, 3), (1,))
    assert len(ctx.sent) == 1                       # nothing else went out
    assert part.pending is None                     # fell back to the committed ISR
    assert ctx.alter_partition_manager.unsent == {("t", 0): pending}
    assert ctx.meters.get("FailedIsrUpdatesPerSec") == 1
