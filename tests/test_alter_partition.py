"""AlterPartition (KIP-497) as Kafka's brokers and ZooKeeper controller handle it.

Broker side: kafka.cluster.Partition (submitAlterPartition, handleAlterPartitionError,
handleAlterPartitionUpdate) and kafka.server.DefaultAlterPartitionManager (one queued item per
partition, one request in flight). Controller side: KafkaController.processAlterPartition. Each test
names the Kafka unit test (PartitionTest, AlterPartitionManagerTest, ControllerIntegrationTest) or
source it mirrors.
"""

from __future__ import annotations

import pytest
from clusters import make_cluster

from kafkasim.core import errors as E
from kafkasim.core.messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    LeaderAndIsrRequest,
    PartitionState,
)
from kafkasim.runtime.cluster import Cluster

TP = ("t", 0)


def _apm(b):
    """The broker's AlterPartitionManager (kafkasim.core.alter_partition_manager)."""
    return b.alter_partition_manager


def _cluster(version: str = "3.7", partitions: int = 1) -> Cluster:
    c = make_cluster(seed=1, kafka_version=version, latency_ms=1, jitter_ms=0,
                     config={"replica.lag.time.max.ms": 3000,
                             "zookeeper.session.timeout.ms": 120000,
                             "auto.leader.rebalance.enable": False},
                     topic="t", partitions=partitions, assignment=[[1, 2, 3]] * partitions,
                     topic_config={"min.insync.replicas": 1}, settle_ms=1000)
    assert c.controller_id() == 1 and c.leader("t") == 1
    return c


def _pending_shrink(version: str = "3.7", partitions: int = 1):
    """Broker 3 stops fetching; leader 1 proposes a shrink whose AlterPartition is held."""
    c = _cluster(version, partitions)
    c.hold(type="AlterPartitionRequest")
    c.pause(3, 60000)
    p = c.producer(acks=1)
    for i in range(partitions):
        p.send("t", "x", partition=i)
    b = c.brokers[1]
    part = b.replica_manager.partitions[TP]
    assert c.run_until(lambda cl: part.pending is not None, 10000)
    return c, b, part


def _answer(b, results, error=E.NONE):
    """Deliver an AlterPartitionResponse for the request in flight."""
    b.on_message(1, AlterPartitionResponse(error, tuple(results), _apm(b).corr))


def _failure(tp, err):
    return (tp[0], tp[1], err, -1, -1, (), -1)


# ------------------------------------------------------------------ Partition's callbacks

@pytest.mark.parametrize("error", [E.UNKNOWN_TOPIC_OR_PARTITION, E.FENCED_LEADER_EPOCH,
                                   E.INVALID_UPDATE_VERSION, E.NEW_LEADER_ELECTED])
def test_known_errors_keep_the_change_pending_until_new_metadata(error):
    """PartitionTest.testAlterIsrUnknownTopic / testAlterIsrInvalidVersion /
    testAlterIsrNewLeaderElected: the state stays PendingShrinkIsr, nothing is queued again, and
    no new ISR change is tried while it is pending."""
    c, b, part = _pending_shrink()
    pending = part.pending
    failed = b.meters["FailedIsrUpdatesPerSec"]
    _answer(b, [_failure(TP, error)])
    assert part.pending is pending and part.isr == (1, 2, 3)
    assert _apm(b).unsent == {} and _apm(b).inflight is None
    assert b.meters["FailedIsrUpdatesPerSec"] == failed + 1
    c.run(5000)   # isr-expiration runs again: Partition.maybeShrinkIsr skips while in flight
    assert part.pending is pending and _apm(b).unsent == {}


def test_unexpected_error_is_resubmitted():
    """PartitionTest.testAlterIsrUnexpectedError: an unknown error retries the same proposal."""
    c, b, part = _pending_shrink()
    pending = part.pending
    sent = _apm(b).corr
    _answer(b, [_failure(TP, "UNKNOWN_SERVER_ERROR")])
    assert part.pending is pending
    assert _apm(b).unsent == {TP: pending} and _apm(b).inflight == ((TP, pending),)
    assert _apm(b).corr == sent + 1   # a new request went out at once


@pytest.mark.parametrize("error", [E.INELIGIBLE_REPLICA, E.OPERATION_NOT_ATTEMPTED])
def test_ineligible_or_not_attempted_falls_back_to_the_committed_isr(error):
    """Partition.handleAlterPartitionError (3.3+): partitionState = lastCommittedState, so the
    next isr-expiration pass can propose again (PartitionTest.testIsrNotExpandedIfReplicaIs
    FencedOrShutdown answers INELIGIBLE_REPLICA)."""
    c, b, part = _pending_shrink()
    _answer(b, [_failure(TP, error)])
    assert part.pending is None and part.isr == (1, 2, 3)
    c.run(2000)
    assert part.pending is not None and part.pending.proposed_isr == (1, 2)


def test_success_for_another_leader_epoch_or_older_partition_epoch_is_ignored():
    """Partition.handleAlterPartitionUpdate: a stale leader epoch or an older partition epoch is
    ignored (markFailed) and the change stays pending."""
    c, b, part = _pending_shrink()
    pending = part.pending
    failed = b.meters["FailedIsrUpdatesPerSec"]
    _answer(b, [("t", 0, E.NONE, 1, part.leader_epoch + 1, (1, 2), part.partition_epoch + 1)])
    assert part.pending is pending and part.isr == (1, 2, 3)
    assert b.meters["FailedIsrUpdatesPerSec"] == failed + 1


@pytest.mark.parametrize(("version", "commits"), [("3.0", True), ("2.8", False)])
def test_success_with_an_unchanged_partition_epoch(version, commits):
    """KAFKA-12751 (3.0): "No update was performed since proposed and actual state are the same"
    commits the change; 2.7-2.8 ignored it (zkVersion <= current) and stayed pending."""
    c, b, part = _pending_shrink(version)
    shrinks = b.meters["IsrShrinksPerSec"]
    _answer(b, [("t", 0, E.NONE, 1, part.leader_epoch, (1, 2), part.partition_epoch)])
    assert (part.pending is None) == commits
    assert part.isr == ((1, 2) if commits else (1, 2, 3))
    assert b.meters["IsrShrinksPerSec"] == shrinks + int(commits)


def test_answer_to_another_request_is_ignored():
    """An answer whose correlation id is not the request in flight (the channel gave up on it)
    completes nothing."""
    c, b, part = _pending_shrink()
    pending = part.pending
    b.on_message(1, AlterPartitionResponse(E.NONE, (("t", 0, E.NONE, 1, part.leader_epoch,
                                                     (1, 2), part.partition_epoch + 1),),
                                           _apm(b).corr - 1))
    assert part.pending is pending and _apm(b).inflight is not None


def test_not_controller_answer_requeues_the_request():
    """NodeToControllerRequestThread.handleResponse: NOT_CONTROLLER anywhere in the answer puts
    the request back in the channel's queue; nothing reaches the partition."""
    c, b, part = _pending_shrink()
    pending = part.pending
    _answer(b, [_failure(TP, E.NOT_CONTROLLER)])
    assert part.pending is pending and _apm(b).inflight == ((TP, pending),)
    assert b.meters["FailedIsrUpdatesPerSec"] == 0


def test_top_level_error_retries_after_50_ms():
    """DefaultAlterPartitionManager (AlterPartitionManagerTest.testStaleBrokerEpoch /
    testRetryOnTopLevelError): a top-level error keeps the items queued and schedules
    "send-alter-partition" 50 ms later."""
    c, b, part = _pending_shrink()
    sent = _apm(b).corr
    _answer(b, [], error=E.STALE_BROKER_EPOCH)
    assert _apm(b).inflight is None and TP in _apm(b).unsent
    c.run(49)
    assert _apm(b).corr == sent
    c.run(2)
    assert _apm(b).corr == sent + 1 and _apm(b).inflight is not None


# ------------------------------------------------------------------ the manager

def test_one_request_in_flight_batches_the_next_changes():
    """DefaultAlterPartitionManager (AlterPartitionManagerTest.testOneInFlight /
    testSubmitFromCallback): one request in flight per broker; other partitions' changes wait in
    unsentIsrUpdates and go out in the next request, sent as soon as the answer arrives."""
    c = _cluster(partitions=2)
    b = c.brokers[1]
    c.hold(type="AlterPartitionRequest")
    c.pause(3, 60000)
    p = c.producer(acks=1)
    for i in (0, 1):
        p.send("t", "x", partition=i)
    parts = [b.replica_manager.partitions[("t", i)] for i in (0, 1)]
    assert c.run_until(lambda cl: all(pt.pending is not None for pt in parts), 10000)
    # one isr-expiration pass proposed both shrinks: the first went out at once, the second
    # waits in unsentIsrUpdates for the answer (inflightRequest)
    assert [tp for tp, _ in _apm(b).inflight] == [("t", 0)]
    assert list(_apm(b).unsent) == [("t", 0), ("t", 1)]
    c.hold(type="AlterPartitionRequest")
    c.run(1000)
    assert [tp for tp, _ in _apm(b).inflight] == [("t", 0)]   # nothing else was sent
    assert c.release(type="AlterPartitionRequest") == 1
    assert c.run_until(lambda cl: parts[0].pending is None, 1000)
    assert [tp for tp, _ in _apm(b).inflight] == [("t", 1)]   # sent right after the answer
    assert c.run_until(lambda cl: parts[1].pending is None, 1000)
    assert [pt.isr for pt in parts] == [(1, 2), (1, 2)]


def test_leader_and_isr_race_not_attempted_until_the_answer_arrives():
    """PartitionTest.testAlterIsrLeaderAndIsrRace (3.0+, KAFKA-12686): a LeaderAndIsr resets
    the ISR state while the shrink is in flight; the next shrink is not attempted
    (OPERATION_NOT_ATTEMPTED, back to the committed ISR) until the old answer arrives."""
    c, b, part = _pending_shrink()
    epoch, pe = part.leader_epoch, part.partition_epoch
    b.on_message(1, LeaderAndIsrRequest(1, b.metadata.controller_epoch, (
        PartitionState("t", 0, b.metadata.controller_epoch, 1, epoch + 1, (1, 2, 3), pe + 1,
                       (1, 2, 3)),)))
    assert part.pending is None and part.leader_epoch == epoch + 1
    failed = b.meters["FailedIsrUpdatesPerSec"]
    c.run(5000)   # the lag clocks restarted with the epoch; isr-expiration tries the shrink again
    assert part.pending is None and b.meters["FailedIsrUpdatesPerSec"] > failed
    assert any(r[1] == "isr_update_failed" and "OPERATION_NOT_ATTEMPTED" in str(r[5])
               for r in c.trace.rows)
    # the old answer (FENCED_LEADER_EPOCH: epoch moved) frees the queue; the next shrink goes out
    _answer(b, [_failure(TP, E.FENCED_LEADER_EPOCH)])
    assert part.pending is None and _apm(b).unsent == {}
    c.run(2000)
    assert part.pending is not None and _apm(b).inflight == ((TP, part.pending),)
    assert part.pending.leader_epoch == epoch + 1


def test_leader_and_isr_clears_the_queued_item_before_3_0():
    """2.7-2.8: Partition.makeLeader called alterIsrManager.clearPending, so the next shrink is
    queued at once (removed in 3.0 by KAFKA-12686)."""
    c, b, part = _pending_shrink("2.8")
    epoch, pe = part.leader_epoch, part.partition_epoch
    b.on_message(1, LeaderAndIsrRequest(1, b.metadata.controller_epoch, (
        PartitionState("t", 0, b.metadata.controller_epoch, 1, epoch + 1, (1, 2, 3), pe + 1,
                       (1, 2, 3)),)))
    assert _apm(b).unsent == {}
    c.run(5000)
    assert part.pending is not None and _apm(b).unsent == {TP: part.pending}
    assert not any(r[1] == "isr_update_failed" for r in c.trace.rows)


@pytest.mark.parametrize(("version", "immediate"), [("2.7", False), ("2.8", True)])
def test_2_7_sends_from_a_50_ms_task(version, immediate):
    """AlterIsrManager @2.7.0: queued items are sent by "send-alter-isr" every 50 ms from the
    broker's start; from 2.8 submit sends at once."""
    c, b, part = _pending_shrink(version)
    proposed = [r[0] for r in c.trace.rows if r[1] == "isr_proposed"][-1]
    c.run(60)
    sends = [r[0] for r in c.trace.rows   # AlterIsrRequest on the wire before 3.2
             if r[1] == "hold" or (r[1] == "send" and r[2] == 1
                                   and r[5][0] == "AlterIsrRequest")]
    first = [t for t in sends if t >= proposed][0]
    if immediate:
        assert first == proposed
    else:
        assert proposed < first <= proposed + 50
        assert (first - _apm(b).started_ms) % 50 == 0


# ------------------------------------------------------------------ the ZooKeeper controller

def _ask(c, version_partitions, broker_id=1, broker_epoch=None):
    """Run the controller's processAlterPartition on a request; return its answer."""
    ctl = c.brokers[c.controller_id()]
    sent = []
    ctl.send = lambda dst, msg: sent.append(msg)
    b = c.brokers[broker_id]
    req = AlterPartitionRequest(broker_id, b.broker_epoch if broker_epoch is None
                                else broker_epoch, tuple(version_partitions), 7)
    c.zk_control_plane.run_controller(ctl, "alter_partition", (broker_id, req))
    del ctl.send
    answers = [m for m in sent if isinstance(m, AlterPartitionResponse)]
    assert len(answers) == 1 and answers[0].correlation_id == 7
    return answers[0]


def _zk_state(c):
    st = c.inspect.partition_state("t", 0)
    return st["leader_epoch"], tuple(st["isr"]), st["partition_epoch"]


@pytest.mark.parametrize(("case", "expected"), [
    ("newer partition epoch", E.NOT_CONTROLLER),
    ("newer leader epoch", E.NOT_CONTROLLER),
    ("older leader epoch", E.FENCED_LEADER_EPOCH),
    ("older partition epoch", E.INVALID_UPDATE_VERSION),
    ("same state, older partition epoch", E.NONE),
    ("dead replica", E.INELIGIBLE_REPLICA),
    ("unknown partition", E.UNKNOWN_TOPIC_OR_PARTITION),
])
def test_zk_controller_answers_3_7(case, expected):
    """KafkaController.tryProcessAlterPartition @3.7.0 (KAFKA-14154 NOT_CONTROLLER for a leader
    ahead of the controller, KAFKA-14144 equalsAllowStalePartitionEpoch before the partition epoch
    fence, KIP-841 INELIGIBLE_REPLICA); ControllerIntegrationTest.testAlterPartitionErrors."""
    c = _cluster()
    c.shutdown(3)   # controlled shutdown: the controller drops 3 from the ISR (epoch + 1)
    assert c.run_until(lambda cl: cl.brokers[3].state == "stopped" and 3 not in cl.isr("t"),
                       30000)
    le, isr, pe = _zk_state(c)
    assert isr == (1, 2) and pe >= 1
    req = {
        "newer partition epoch": ("t", 0, le, (1,), pe + 1),
        "newer leader epoch": ("t", 0, le + 1, (1,), pe),
        "older leader epoch": ("t", 0, le - 1, (1,), pe),
        "older partition epoch": ("t", 0, le, (1,), pe - 1),
        "same state, older partition epoch": ("t", 0, le, (1, 2), pe - 1),
        "dead replica": ("t", 0, le, (1, 2, 3), pe),
        "unknown partition": ("t", 5, le, (1,), pe),
    }[case]
    resp = _ask(c, [req])
    assert resp.error == E.NONE
    (_t, _p, err, leader, epoch, new_isr, version), = resp.partitions
    assert err == expected
    if expected == E.NONE:
        assert (leader, epoch, new_isr, version) == (1, le, (1, 2), pe)
    assert _zk_state(c) == (le, isr, pe)   # nothing written


@pytest.mark.parametrize(("case", "expected"), [
    ("newer partition epoch", E.INVALID_UPDATE_VERSION),
    ("older partition epoch", E.INVALID_UPDATE_VERSION),
    ("same state, newer partition epoch", E.NONE),
    ("older leader epoch", E.FENCED_LEADER_EPOCH),
])
def test_zk_controller_answers_before_3_3(case, expected):
    """KafkaController.processAlterIsr @2.7.0-@3.2.0: an older leader epoch is fenced, an
    identical (leader, epoch, ISR) is answered whatever its zkVersion (equalsIgnoreZk), anything
    else is a conditional write at the request's zkVersion (bad version: INVALID_UPDATE_VERSION)."""
    c = _cluster("3.2")
    c.shutdown(3)   # controlled shutdown: the controller drops 3 from the ISR (epoch + 1)
    assert c.run_until(lambda cl: cl.brokers[3].state == "stopped" and 3 not in cl.isr("t"),
                       30000)
    le, isr, pe = _zk_state(c)
    req = {
        "newer partition epoch": ("t", 0, le, (1,), pe + 1),
        "older partition epoch": ("t", 0, le, (1,), pe - 1),
        "same state, newer partition epoch": ("t", 0, le, (1, 2), pe + 5),
        "older leader epoch": ("t", 0, le - 1, (1,), pe),
    }[case]
    (_t, _p, err, *_rest), = _ask(c, [req]).partitions
    assert err == expected
    assert _zk_state(c) == (le, isr, pe)


def test_zk_controller_writes_the_isr_without_bumping_the_leader_epoch():
    """processAlterPartition: zkClient.updateLeaderAndIsr at the request's partition epoch; the
    answer carries the new zkVersion; UpdateMetadata goes out for the partition."""
    c = _cluster()
    le, isr, pe = _zk_state(c)
    (_t, _p, err, leader, epoch, new_isr, version), = _ask(c, [("t", 0, le, (1, 2), pe)]).partitions
    assert (err, leader, epoch, new_isr, version) == (E.NONE, 1, le, (1, 2), pe + 1)
    assert _zk_state(c) == (le, (1, 2), pe + 1)


def test_zk_controller_stale_or_unknown_broker_epoch():
    """ControllerIntegrationTest.testAlterPartitionErrors: a stale broker epoch or an unknown
    broker (not in liveBrokerIdAndEpochs) -> top-level STALE_BROKER_EPOCH."""
    c = _cluster()
    le, _isr, pe = _zk_state(c)
    assert _ask(c, [("t", 0, le, (1, 2), pe)], broker_epoch=-5).error == E.STALE_BROKER_EPOCH
    c.shutdown(2)
    assert c.run_until(lambda cl: 2 not in
                       cl.zk_control_plane.controller_broker().controller.context.live_brokers,
                       30000)
    b2 = c.brokers[2]
    assert _ask(c, [("t", 0, le, (1,), pe)], broker_id=2,
                broker_epoch=b2.broker_epoch).error == E.STALE_BROKER_EPOCH


# ------------------------------------------------------------------ makeLeader / makeFollower

@pytest.mark.parametrize(("version", "ignored"), [("3.7", True), ("3.2", False)])
def test_leader_and_isr_with_an_older_partition_epoch_is_ignored(version, ignored):
    """PartitionTest.testIgnoreLeaderPartitionStateChangeWithOlderPartitionEpoch /
    testIgnoreFollowerPartitionStateChangeWithOlderPartitionEpoch (KAFKA-13790, 3.3+)."""
    c, b, part = _pending_shrink(version)
    assert c.release(type="AlterPartitionRequest") == 1
    assert c.run_until(lambda cl: part.pending is None, 1000)
    epoch, pe = part.leader_epoch, part.partition_epoch
    # a state from before the AlterPartition (older partition epoch), with a newer leader epoch
    for leader in (1, 2):
        b.on_message(1, LeaderAndIsrRequest(1, b.metadata.controller_epoch, (
            PartitionState("t", 0, b.metadata.controller_epoch, leader, epoch + leader,
                           (1, 2, 3), pe - 1, (1, 2, 3)),)))
        if ignored:
            assert (part.leader_epoch, part.partition_epoch, part.is_leader) == (epoch, pe, True)
        else:
            assert part.leader_epoch == epoch + leader
            assert part.is_leader == (leader == 1)
    if ignored:
        assert any(r[1] == "leader_and_isr_ignored" for r in c.trace.rows)


def test_follower_has_no_remote_replica_state_and_a_new_leader_starts_fresh():
    """PartitionTest.testFollowerShouldNotHaveAnyRemoteReplicaStates: makeFollower clears
    remoteReplicasMap; becoming leader again starts every follower from an unknown LEO
    (Replica.resetReplicaState with isNewLeader = true)."""
    c = _cluster()
    c.producer(acks="all").send("t", "x", partition=0)
    c.run(1000)
    b = c.brokers[1]
    part = b.replica_manager.partitions[TP]
    assert part.remote[2].log_end_offset == 1
    epoch, pe = part.leader_epoch, part.partition_epoch
    cepoch = b.metadata.controller_epoch
    b.on_message(1, LeaderAndIsrRequest(1, cepoch, (
        PartitionState("t", 0, cepoch, 2, epoch + 1, (1, 2, 3), pe + 1, (1, 2, 3)),)))
    assert not part.is_leader and part.remote == {}
    b.on_message(1, LeaderAndIsrRequest(1, cepoch, (
        PartitionState("t", 0, cepoch, 1, epoch + 2, (1, 2, 3), pe + 2, (1, 2, 3)),)))
    assert part.is_leader
    assert {r: st.log_end_offset for r, st in part.remote.items()} == {2: -1, 3: -1}
