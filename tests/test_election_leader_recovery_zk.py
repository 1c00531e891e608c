"""KIP-704 leader recovery state in ZooKeeper mode (Kafka 3.2+).

Sources (apache/kafka, tags 3.2.0 and 3.7.0): ``Election.leaderForOffline`` (a leader from
outside the ISR gets ``LeaderAndIsr.newRecoveringLeaderAndIsr`` when isLeaderRecoverySupported, IBP
3.2-IV0+; every other election and ISR removal keeps the state read, ``newLeaderAndIsr`` /
``newEpoch``), ``TopicPartitionStateZNode.encode`` (``leader_recovery_state`` written only when not
RECOVERED; decode reads a missing field as RECOVERED), ``Partition.makeLeader`` (the leader marks
the partition RECOVERED; its next AlterPartition carries it, ``AlterPartitionManager.buildRequest``)
and ``KafkaController.processAlterPartition`` (INVALID_REQUEST for a RECOVERING ISR of more than
one replica and for RECOVERED -> RECOVERING; since 3.3 after the epoch checks, in 3.2 before them;
ControllerIntegrationTest.testAlterPartitionErrors / testAlterPartitionErrorsAfterUncleanElection).
Before 3.2 none of it: no field, no check.
"""

from __future__ import annotations

import pytest
from test_controller_state_machines_kafka import BROKER_ID, TP, _harness
from test_election_algorithms_kafka import _cut_off_followers, _zk_state

from kafkasim.control.zookeeper import partition_state_json, partition_state_path
from kafkasim.core import errors as E
from kafkasim.core.messages import (
    AlterPartitionRequest,
    AlterPartitionResponse,
    LeaderAndIsrRequest,
)

RECOVERED, RECOVERING = 0, 1
OTHER = BROKER_ID + 1


# -- the whole cluster: unclean election, then the leader clears the state ----------------------
@pytest.mark.parametrize(("version", "recovery_state"), [("3.1", None), ("3.2", 1), ("3.7", 1)])
def test_unclean_election_marks_recovering_until_the_leader_expands_the_isr(version,
                                                                           recovery_state):
    """Leader 1 (alone in the ISR) dies; out-of-sync 2 is elected uncleanly. Since 3.2 the state
    znode says ``leader_recovery_state: 1`` and the LeaderAndIsr to 2 carries RECOVERING; 2 marks
    the partition RECOVERED (Partition.makeLeader), and when 3 catches up its AlterPartition
    (ISR [2, 3], RECOVERED) rewrites the znode without the field."""
    c = _cut_off_followers(version, {"unclean.leader.election.enable": True})
    assert c.run_until(lambda cl: _zk_state(cl)["leader"] == 2, 30000)
    assert _zk_state(c)["isr"] == [2]
    assert _zk_state(c).get("leader_recovery_state") == recovery_state
    assert c.run_until(lambda cl: _zk_state(cl)["isr"] == [2, 3], 30000)
    assert "leader_recovery_state" not in _zk_state(c)
    ctl = c.zk_control_plane.controller_broker().controller
    assert ctl.leader_recovery_state(("t", 0)) == RECOVERED
    recovered = [r for r in c.trace.rows if r[1] == "leader_recovered"]
    commits = [str(r[5]) for r in c.trace.rows if r[1] == "controller"
               and str(r[5]).startswith("AlterPartition from 2")]
    if recovery_state is None:
        assert recovered == []
        assert not any("RECOVERING" in s for s in commits)
    else:
        assert [(r[2], r[3], r[4]) for r in recovered] == [(2, "t", 0)]
        assert commits == ["AlterPartition from 2: ISR [2] -> [2, 3], "
                           "leader recovery state RECOVERING -> RECOVERED"]


# -- the controller: elections ----------------------------------------------------------------
def _put_recovering(h, leader=BROKER_ID, isr=(BROKER_ID,), replicas=(BROKER_ID, OTHER)):
    """A partition whose state znode is RECOVERING (an earlier unclean election), read into the
    controller's cache as a failover would (putPartitionLeadershipInfo)."""
    h.put_partition(TP, list(replicas))
    h.zk.create(partition_state_path(*TP),
                partition_state_json(leader, 3, isr, 50, RECOVERING))
    h.ctl._refresh(h.zk, TP)


@pytest.mark.parametrize(("version", "recovery_state"), [("3.1", None), ("3.2", 1)])
def test_unclean_election_sends_recovering_in_leader_and_isr(version, recovery_state):
    """Election.leaderForOffline: newRecoveringLeaderAndIsr, and the LeaderAndIsr partition state
    carries it (ControllerChannelManagerTest.testLeaderAndIsrRequestSent with RECOVERING)."""
    h = _harness(version=version)
    h.put_partition(TP, [OTHER, BROKER_ID], OTHER, [OTHER])
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "unclean") == [TP]
    assert h.state().get("leader_recovery_state") == recovery_state
    (_dst, msg), = h.sent(LeaderAndIsrRequest)
    assert [s.leader_recovery_state for s in msg.partition_states] == [recovery_state or 0]


def test_clean_election_keeps_the_recovering_state():
    """A clean election (leader in the ISR) is ``newLeaderAndIsr``: the leader recovery state read
    is kept, RECOVERING included ("keep the previous leader recovery state")."""
    h = _harness(live=(BROKER_ID, OTHER))
    _put_recovering(h, leader=-1, isr=(BROKER_ID,))
    assert h.ctl.handle_state_changes(h.ctx, h.zk, [TP], "offline") == [TP]
    st = h.state()
    assert (st["leader"], st["isr"], st["leader_recovery_state"]) == (BROKER_ID, [BROKER_ID], 1)
    assert h.ctx.meters["UncleanLeaderElectionsPerSec"] == 0


def test_offline_replica_keeps_the_recovering_state():
    """doRemoveReplicasFromIsr: ``newLeaderAndIsr(NoLeader, isr)`` keeps RECOVERING."""
    h = _harness(live=(OTHER,))
    _put_recovering(h)
    h.ctl.offline_replica(h.ctx, h.zk, BROKER_ID, [TP], reason="broker failure")
    st = h.state()
    assert (st["leader"], st["leader_epoch"], st["leader_recovery_state"]) == (-1, 4, 1)


def test_controller_failover_reads_the_recovering_state():
    """onControllerFailover reads the state znodes (decode): the LeaderAndIsr it resends is
    RECOVERING."""
    h = _harness()
    _put_recovering(h)
    h.ctl.context.recovering.clear()   # a new controller object knows nothing yet
    h.ctx.schedule_controller_timer = lambda *_args: None   # auto rebalance: not looked at
    h.ctl.on_controller_failover(h.ctx, h.zk)
    assert h.ctl.leader_recovery_state(TP) == RECOVERING
    states = [s for _d, m in h.sent(LeaderAndIsrRequest) for s in m.partition_states]
    assert states and all(s.leader_recovery_state == RECOVERING for s in states)


# -- the controller: AlterPartition -------------------------------------------------------------
def _alter(h, isr, recovery, leader_epoch=3, partition_epoch=0, broker=BROKER_ID):
    """processAlterPartition of one partition: the answer's (error, leader, epoch, isr,
    version)."""
    req = AlterPartitionRequest(broker, h.ctl.context.broker_epochs[broker],
                                (("t", 0, leader_epoch, tuple(isr), partition_epoch),), 7,
                                (recovery,))
    h.ctl.process_alter_partition(h.ctx, h.zk, broker, req)
    (answer,) = [m for _d, m in h.sent(AlterPartitionResponse)][-1:]
    assert answer.error == E.NONE
    return answer.partitions[0][2:]


@pytest.mark.parametrize(("version", "isr", "recovery", "fields", "expected"), [
    # testAlterPartitionErrorsAfterUncleanElection: a RECOVERING ISR of two
    ("3.7", (BROKER_ID, OTHER), RECOVERING, {}, E.INVALID_REQUEST),
    # ... epoch errors take precedence since 3.3 (the leader may work with outdated state)
    ("3.7", (BROKER_ID, OTHER), RECOVERING, {"partition_epoch": 1}, E.NOT_CONTROLLER),
    ("3.7", (BROKER_ID, OTHER), RECOVERING, {"leader_epoch": 2}, E.FENCED_LEADER_EPOCH),
    ("3.7", (BROKER_ID, OTHER), RECOVERING, {"leader_epoch": 4}, E.NOT_CONTROLLER),
    # 3.2 (processAlterPartition @3.2.0) checks the leader recovery state first
    ("3.2", (BROKER_ID, OTHER), RECOVERING, {"leader_epoch": 2}, E.INVALID_REQUEST),
    ("3.2", (BROKER_ID, OTHER), RECOVERING, {}, E.INVALID_REQUEST),
])
def test_zk_controller_refuses_a_recovering_isr_expansion(version, isr, recovery, fields,
                                                         expected):
    h = _harness(live=(BROKER_ID, OTHER), version=version)
    _put_recovering(h)
    before = h.state()
    err, *_ = _alter(h, isr, recovery, **fields)
    assert err == expected
    assert h.state() == before   # nothing written
    assert h.ctl.leader_recovery_state(TP) == RECOVERING


@pytest.mark.parametrize("isr", [(BROKER_ID,), (BROKER_ID, OTHER)])
def test_zk_controller_refuses_recovered_to_recovering(isr):
    """testAlterPartitionErrors: a RECOVERED partition asked to go RECOVERING -> INVALID_REQUEST,
    whatever the ISR."""
    h = _harness(live=(BROKER_ID, OTHER))
    h.put_partition(TP, [BROKER_ID, OTHER], BROKER_ID, [BROKER_ID], leader_epoch=3)
    err, *_ = _alter(h, isr, RECOVERING)
    assert err == E.INVALID_REQUEST
    assert "leader_recovery_state" not in h.state() and h.state()["zk_version"] == 0


@pytest.mark.parametrize("isr", [(BROKER_ID,), (BROKER_ID, OTHER)])
def test_zk_controller_accepts_recovered_from_the_leader(isr):
    """The leader's AlterPartition with RECOVERED clears the state: not the current state (the
    equality check includes the leader recovery state), so written even with the same ISR; the
    znode loses its ``leader_recovery_state`` field and the zkVersion moves on."""
    h = _harness(live=(BROKER_ID, OTHER))
    _put_recovering(h)
    assert _alter(h, isr, RECOVERED) == (E.NONE, BROKER_ID, 3, isr, 1)
    st = h.state()
    assert "leader_recovery_state" not in st and st["isr"] == list(isr)
    assert h.ctl.leader_recovery_state(TP) == RECOVERED


def test_zk_controller_answers_an_unchanged_recovering_state():
    """RECOVERING with the ISR [leader] the partition already has: equalsAllowStalePartitionEpoch,
    answered with the current state, nothing written."""
    h = _harness(live=(BROKER_ID, OTHER))
    _put_recovering(h)
    assert _alter(h, (BROKER_ID,), RECOVERING) == (E.NONE, BROKER_ID, 3, (BROKER_ID,), 0)
    assert h.state()["zk_version"] == 0 and h.state()["leader_recovery_state"] == 1


def test_before_3_2_alter_isr_knows_no_leader_recovery_state():
    """processAlterIsr @3.1.0: AlterIsr has no LeaderRecoveryState; an ISR expansion is written
    whatever the field says, and the znode never gets one."""
    h = _harness(live=(BROKER_ID, OTHER), version="3.1")
    h.put_partition(TP, [BROKER_ID, OTHER], BROKER_ID, [BROKER_ID], leader_epoch=3)
    assert _alter(h, (BROKER_ID, OTHER), RECOVERING) == (E.NONE, BROKER_ID, 3,
                                                         (BROKER_ID, OTHER), 1)
    assert "leader_recovery_state" not in h.state()
