"""ZooKeeper-mode controller: controlled shutdown and broker registration, as Kafka does them.

Each test names the Kafka source or unit test it mirrors.
"""

from __future__ import annotations

import pytest

from kafkasim.core import events as ev
from kafkasim.runtime.cluster import BrokerStartupError, Cluster


def _controlled_shutdown(c: Cluster, broker: int) -> None:
    """KafkaController.controlledShutdown(id, brokerEpoch, callback) called directly, as
    ControllerIntegrationTest does: the broker keeps running (its state is not SHUTTING_DOWN, so
    the answer is ignored); only the controller's actions are exercised."""
    ctl = c.zk_control_plane.controller_broker()
    c.zk_control_plane.run_controller(ctl, "controlled_shutdown", (broker, broker))
    c.run(100)


def _stop_replicas(c: Cluster, broker: int) -> list[tuple]:
    return [(r[3], r[4], str(r[5])) for r in c.trace.rows
            if r[1] == "stop_replica" and r[2] == broker]


def _answers(c: Cluster, broker: int) -> list[int]:
    """remainingPartitions counts of the ControlledShutdownResponses the broker received."""
    return [r[5].remaining for r in c.trace.rows
            if r[1] == "controlled_shutdown" and r[2] == broker
            and isinstance(r[5], ev.ControlledShutdown) and r[5].error]


def test_controlled_shutdown_moves_leaders_and_takes_followers_out_of_the_isr():
    """ControllerIntegrationTest.testControlledShutdown (3.7.0): assignment [0, 1, 2]; shutting
    down 2 (a follower) leaves ISR [0, 1] and leader 0; then 1 leaves ISR [0]; then 0, the last
    one, stays leader and is reported as a remaining partition."""
    c = Cluster(brokers=[0, 1, 2], seed=1, kafka_version="3.7",
                config={"auto.leader.rebalance.enable": False})
    c.create_topic("test", 1, 3, assignment=[[0, 1, 2]])
    c.run(500)
    _controlled_shutdown(c, 2)
    st = c.inspect.partition_state("test", 0)
    assert (st["leader"], st["isr"], st["leader_epoch"]) == (0, [0, 1], 1)
    # KafkaController.doControlledShutdown + ReplicaStateMachine(OfflineReplica): the follower
    # gets StopReplica (deletePartition=false) twice and fetches no more; LeaderAndIsr with
    # the bumped epoch goes to the other replicas only
    assert _stop_replicas(c, 2) == [("test", 0, "deletePartition=false: fetcher stopped")] * 2
    assert not c.brokers[2].fetchers
    assert c.brokers[2].replica_manager.partitions[("test", 0)].leader_epoch == 0
    assert c.brokers[0].replica_manager.partitions[("test", 0)].isr == (0, 1)
    for b in (0, 1, 2):   # UpdateMetadata reached every live or shutting-down broker
        assert c.brokers[b].metadata.partitions[("test", 0)].isr == (0, 1)
    _controlled_shutdown(c, 1)
    st = c.inspect.partition_state("test", 0)
    assert (st["leader"], st["isr"], st["leader_epoch"]) == (0, [0], 2)
    _controlled_shutdown(c, 0)
    st = c.inspect.partition_state("test", 0)
    # PartitionLeaderElectionAlgorithms.controlledShutdownPartitionLeaderElection: no live,
    # in-sync, not-shutting-down replica: the leader does not change
    assert (st["leader"], st["isr"], st["leader_epoch"]) == (0, [0], 2)
    assert _answers(c, 0) == []   # broker 0 is not shutting down: it ignores the answer


def test_controlled_shutdown_of_a_leader_elects_the_next_in_sync_replica():
    """ControlledShutdownPartitionLeaderElectionStrategy (Election.leaderForControlledShutdown):
    the first replica in assignment order that is alive, in the ISR and not shutting down; the
    new ISR drops every shutting-down broker; the old leader follows the new one."""
    c = Cluster(brokers=3, seed=1, kafka_version="3.7",
                config={"auto.leader.rebalance.enable": False})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer(acks="all")
    r = p.send("t", "m0", partition=0)
    c.run(500)
    c.shutdown(1)
    assert c.run_until(lambda cl: cl.brokers[1].state == "stopped", 30000)
    st = c.inspect.partition_state("t", 0)
    assert (st["leader"], st["isr"], st["leader_epoch"]) == (2, [2, 3], 1)
    assert r.status == "acked" and _answers(c, 1) == [0]
    assert _stop_replicas(c, 1) == []   # it led the partition: no StopReplica


def test_controlled_shutdown_ignores_single_replica_partitions():
    """doControlledShutdown acts only on partitions with more than one assigned replica, and
    partitionLeadersOnBroker lists only those, so an RF-1 partition never blocks a shutdown."""
    c = Cluster(brokers=2, seed=1, kafka_version="3.7")
    c.create_topic("one", 1, 1, assignment=[[1]])
    c.create_topic("two", 1, 2, assignment=[[2, 1]])
    c.run(500)
    t0 = c.now
    c.shutdown(1)
    assert c.run_until(lambda cl: cl.brokers[1].state == "stopped", 30000)
    assert c.now - t0 < 100 and _answers(c, 1) == [0]
    assert c.inspect.partition_state("one", 0)["leader_epoch"] == 0
    assert c.inspect.partition_state("two", 0)["isr"] == [2]


def test_broker_retries_controlled_shutdown_while_it_still_leads_partitions():
    """KafkaServer.controlledShutdown: a response with remainingPartitions is a failed attempt;
    the broker sleeps controlled.shutdown.retry.backoff.ms (5000) and retries, at most
    controlled.shutdown.max.retries (3) attempts, then shuts down anyway."""
    c = Cluster(brokers=2, seed=1, kafka_version="3.7",
                config={"auto.leader.rebalance.enable": False})
    c.create_topic("t", 1, 2, assignment=[[1, 2]])
    c.crash(2)
    assert c.run_until(lambda cl: cl.isr("t") == [1], 60000)
    t0 = c.now
    c.shutdown(1)
    assert c.run_until(lambda cl: cl.brokers[1].state == "stopped", 60000)
    assert _answers(c, 1) == [1, 1, 1]
    assert 10000 <= c.now - t0 < 10100   # two back-offs of 5000 ms
    assert c.inspect.partition_state("t", 0)["leader"] == 1   # nobody could take over


@pytest.mark.parametrize(("version", "answer"), [("3.7", "STALE_BROKER_EPOCH"), ("2.1", "NONE")])
def test_controller_rejects_controlled_shutdown_with_stale_broker_epoch(version, answer):
    """ControllerIntegrationTest.testControllerRejectControlledShutdownRequestWithStaleBroker
    Epoch (3.7.0): brokerEpoch - 1 gets StaleBrokerEpochException (KIP-380, since 2.2.0);
    before, the request was not checked."""
    c = Cluster(brokers=2, seed=1, kafka_version=version,
                config={"auto.leader.rebalance.enable": False})
    c.create_topic("t", 1, 2, assignment=[[1, 2]])
    ctl = c.zk_control_plane.controller_broker()
    other = 3 - ctl.id
    b = c.brokers[other]
    b.state = "shutting down"          # so that it records the answer it gets
    b.zk_lifecycle.attempts_left = b.zk_lifecycle.awaiting = 0
    c.zk_control_plane.run_controller(ctl, "controlled_shutdown",
                                      (other, other, b.broker_epoch - 1))
    c.run(100)
    answers = [r[5] for r in c.trace.rows if r[1] == "controlled_shutdown" and r[2] == other
               and isinstance(r[5], ev.ControlledShutdown) and r[5].error]
    assert answers[0].error == answer


# ---------------------------------------------------------------------- broker registration
def test_crashed_broker_cannot_register_while_its_old_session_lives():
    """ServerStartupTest.testConflictBrokerRegistration / KafkaZkClientTest.testRegisterBrokerInfo
    (3.7.0): registering /brokers/ids/<id> while another session owns it throws
    NodeExistsException and leaves the registration unchanged (KafkaZkClient.CheckedEphemeral
    .getAfterNodeExists); KafkaServer.startup then shuts the process down. Once the crashed
    process's session has expired (zookeeper.session.timeout.ms without a ping) it starts."""
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer(acks=1)
    for i in range(5):
        p.send("t", f"m{i}", partition=0)
    c.run(1000)
    znode = c.zk.get("/brokers/ids/3")
    owner, epoch = znode.ephemeral_owner, c.brokers[3].broker_epoch
    c.crash(3)
    c.run(1000)
    expiry = c.inspect.session_expiry_ms(3)
    with pytest.raises(BrokerStartupError, match=r"Error while creating ephemeral at "
                       r"/brokers/ids/3, node already exists and owner '0x[0-9a-f]+' does not "
                       r"match current session") as err:
        c.start(3)
    assert err.value.retry_at_ms == expiry
    assert c.brokers[3].state == "stopped"
    assert c.zk.get("/brokers/ids/3") is znode and znode.ephemeral_owner == owner
    kinds = [r[1] for r in c.trace.rows if r[2] == 3 and r[0] == c.now]
    assert kinds[-2:] == ["broker_registration_failed", "broker_start_failed"]
    # LogManager.shutdown ran: the log is flushed and its recovery point checkpointed
    log = c.brokers[3].logs[("t", 0)]
    assert log.recovery_point == log.log_end_offset == 5
    # the new process's own session was closed; the old one is the only one left for broker 3
    assert [s.session_id for s in c.zk.sessions.values() if s.owner == 3] == [owner]
    c.run(expiry - c.now - 1)
    with pytest.raises(BrokerStartupError):
        c.start(3)                                 # one ms too early
    c.run(1)
    assert c.start(3)                              # the old session has just expired
    assert c.brokers[3].state == "running" and c.brokers[3].broker_epoch > epoch
    assert c.run_until(lambda cl: sorted(cl.isr("t")) == [1, 2, 3], 30000)


def test_kafka_0_8_2_broker_waits_for_its_old_registration_to_go():
    """ZkUtils.createEphemeralPathExpectConflictHandleZKBug @0.8.2.0: the broker finds its own
    registration from an older session, backs off zookeeper.session.timeout.ms and retries until
    ZooKeeper has deleted it; the process stays up meanwhile."""
    c = Cluster(brokers=2, seed=1, kafka_version="0.8.2")
    c.create_topic("t", 1, 2, assignment=[[1, 2]])
    c.crash(2)
    c.run(100)
    c.start(2)
    b = c.brokers[2]
    assert b.state == "running"
    owner = c.zk.get("/brokers/ids/2").ephemeral_owner
    assert owner != b.zk_lifecycle.session_id
    assert c.run_until(lambda cl: cl.zk.get("/brokers/ids/2") is not None
                       and cl.zk.get("/brokers/ids/2").ephemeral_owner == b.zk_lifecycle.session_id,
                       30000)
    assert any(r[1] == "broker_registration_backoff" and r[2] == 2 for r in c.trace.rows)
    assert c.run_until(lambda cl: sorted(cl.isr("t")) == [1, 2], 30000)


def test_session_expiry_of_a_live_broker_re_registers_it():
    """A running broker whose session expired re-registers with a new session at once (the old
    session's ephemeral znode went with it): KafkaController's RegisterBrokerAndReelect."""
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    old = c.brokers[2].zk_lifecycle.session_id
    c.zk_control_plane.expire_session(2)
    assert c.run_until(lambda cl: cl.zk.get("/brokers/ids/2") is not None, 30000)
    assert c.zk.get("/brokers/ids/2").ephemeral_owner == c.brokers[2].zk_lifecycle.session_id != old


def test_restart_after_a_crash_comes_up_once_the_old_session_expired():
    """Cluster.restart: the start right after kill -9 fails (NodeExists, traced); like a process
    supervisor the simulator starts the broker again when the old session has expired."""
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(1000)
    c.restart(2)
    assert c.brokers[2].state == "stopped"
    expiry = c.inspect.session_expiry_ms(2)
    assert c.run_until(lambda cl: cl.brokers[2].state == "running", 30000)
    assert c.now == expiry
    assert [r[1] for r in c.trace.rows if r[2] == 2 and r[1].startswith("broker_")] == [
        "broker_start", "broker_crash", "broker_registration_failed", "broker_start_failed",
        "broker_start"]


def test_controlled_shutdown_retry_configs_are_kafkas_keys_with_their_defaults():
    # KafkaConfig: controlled.shutdown.max.retries (INT, 3), controlled.shutdown.retry.backoff.ms
    # (LONG, 5000)
    from kafkasim.settings import config as kconfig
    from kafkasim.settings.config import ConfigError

    cfg = kconfig.broker_config({}, "3.7")
    assert cfg["controlled.shutdown.max.retries"] == 3
    assert cfg["controlled.shutdown.retry.backoff.ms"] == 5000
    with pytest.raises(ConfigError, match="controlled.shutdown.max.retries"):
        kconfig.broker_config({"controlled.shutdown.max.retries": "not_a_number"}, "3.7")


def test_online_partition_to_online_transition():
    """PartitionStateMachineTest.testOnlinePartitionToOnlineTransition: an online partition
    whose preferred replica already leads, taken to OnlinePartition with
    PreferredReplicaPartitionLeaderElectionStrategy, gets a new leader epoch
    (``leaderAndIsr.newLeader(brokerId)``), written to its state znode, and a LeaderAndIsr to
    its replicas. Only KafkaController.processReplicaLeaderElection skips such partitions
    (ELECTION_NOT_NEEDED), so the admin path keeps the epoch. Before, kafkasim's strategy
    itself answered "nothing to do"."""
    c = Cluster(3, seed=1, kafka_version="3.7")
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(2000)
    tp = ("t", 0)
    zk_state = c.zk.get("/brokers/topics/t/partitions/0/state").json()
    assert zk_state["leader"] == 1
    epoch = zk_state["leader_epoch"]
    # the admin path: nothing elected, nothing bumped
    assert c.elect("t", [0]) == {tp: "ELECTION_NOT_NEEDED"}
    c.run(500)
    assert c.zk.get("/brokers/topics/t/partitions/0/state").json()["leader_epoch"] == epoch
    ctl = c.zk_control_plane.controller_broker()
    since = c.now
    assert ctl.controller.handle_state_changes(ctl, c.zk, [tp], "preferred") == [tp]
    zk_state = c.zk.get("/brokers/topics/t/partitions/0/state").json()
    assert (zk_state["leader"], zk_state["leader_epoch"]) == (1, epoch + 1)
    sent = sorted(r[5][1] for r in c.trace.rows if r[1] == "send" and r[0] >= since
                  and r[5][0] == "LeaderAndIsrRequest")
    assert sent == [1, 2, 3]
    c.run(500)
    assert c.leader("t") == 1
    for b in (1, 2, 3):
        assert c.brokers[b].replica_manager.partitions[tp].leader_epoch == epoch + 1


@pytest.mark.parametrize(("version", "payload"), [
    # ZkData.ControllerZNode.encode @3.3.0: version 1, brokerid, timestamp
    ("3.3", {"version": 1, "brokerid": 1, "timestamp": "0"}),
    # @3.4.0 (KIP-866, ZooKeeper to KRaft migration): version 2 adds kraftControllerEpoch, -1
    # for a ZooKeeper controller; the keys keep this order (a four-entry Scala Map)
    ("3.4", {"version": 2, "brokerid": 1, "timestamp": "0", "kraftControllerEpoch": -1}),
    ("3.9", {"version": 2, "brokerid": 1, "timestamp": "0", "kraftControllerEpoch": -1}),
])
def test_controller_znode_is_written_in_the_versions_layout(version, payload):
    import json

    c = Cluster(brokers=3, seed=1, kafka_version=version)
    c.run(1000)
    data = c.zk.get("/controller").data
    assert json.loads(data) == payload
    assert list(json.loads(data)) == list(payload)
    assert data == json.dumps(payload, separators=(",", ":"))
