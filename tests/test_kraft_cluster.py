"""KRaft mode end to end: the controller quorum, broker registration, heartbeats and fencing,
controlled shutdown, unclean-shutdown detection, failover and quorum loss (issue 12).

Facts from the fact sheet §7b/§7c and Kafka's sources: broker epoch = offset of the
RegisterBrokerRecord (ClusterControlManager.registerBroker with offsetControl.nextWriteOffset);
fencing after broker.session.timeout.ms (9000) without a heartbeat, heartbeats every
broker.heartbeat.interval.ms (2000) (BrokerHeartbeatManager, BrokerLifecycleManager);
controlled shutdown through the heartbeat's wantShutDown (CONTROLLED_SHUTDOWN, then
SHUTDOWN_NOW once the broker leads nothing); KIP-966's unclean-shutdown detection with the
``.kafka_cleanshutdown`` broker epoch (4.x); KRaft removed ZooKeeper mode in 4.0 (KIP-500).
"""

from __future__ import annotations

import os
import subprocess
import sys
import warnings

import pytest
from clusters import make_cluster

from kafkasim.control.kraft import records as R
from kafkasim.observe.snapshots import restore, snapshot
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.exceptions import ClusterError


def kraft(version="4.1", brokers=3, seed=1, **kw) -> Cluster:
    return make_cluster(brokers, kafka_version=version, seed=seed, settle_ms=3000, **kw)


def recv_times(c, kind: str, dst=None, src=None) -> list[int]:
    return [r[0] for r in c.trace.rows if r[1] == "recv" and r[5][0] == kind
            and (dst is None or r[2] == dst) and (src is None or r[5][1] == src)]


def rows(c, kind: str) -> list[tuple]:
    return [r for r in c.trace.rows if r[1] == kind]


# -- modes and bad input ------------------------------------------------------------------------
def test_zookeeper_mode_is_refused_from_4_0_naming_kip_500():
    with pytest.raises(ClusterError, match="KIP-500"):
        Cluster(3, kafka_version="4.0", metadata_mode="zookeeper")


def test_kraft_is_the_only_mode_of_4x_and_optional_in_3_3_to_3_9():
    assert Cluster(3, kafka_version="4.3").inspect.metadata_mode() == "kraft"
    assert Cluster(3, kafka_version="3.7").inspect.metadata_mode() == "zookeeper"
    assert Cluster(3, kafka_version="3.7", metadata_mode="kraft").inspect.metadata_mode() == "kraft"
    with pytest.raises(ClusterError, match="3.3"):
        Cluster(3, kafka_version="3.2", metadata_mode="kraft")


def test_even_and_single_voter_quorums_warn_with_the_majority_rule():
    with pytest.warns(UserWarning, match=r"4 voters tolerate 1 failure.*3 of 4"):
        Cluster(3, kafka_version="4.1", controllers=4)
    with pytest.warns(UserWarning, match="no fault tolerance"):
        Cluster(3, kafka_version="4.1", controllers=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        Cluster(3, kafka_version="4.1", controllers=3)


def test_combined_node_ids_and_empty_quorums_are_refused():
    with pytest.raises(ClusterError, match="both brokers and controllers"):
        Cluster(3, kafka_version="4.1", controllers=[1, 3000, 3001])
    with pytest.raises(ClusterError, match="at least 1"):
        Cluster(3, kafka_version="4.1", controllers=0)


def _observer_fetches(c: Cluster) -> list[tuple]:
    """Fetch requests the brokers' raft clients (observers) sent to the controllers."""
    return [r for r in c.trace.rows if r[1] == "send" and r[2] in c.brokers
            and r[5][0] == "RaftFetchRequest"]


def test_started_together_observers_ask_every_voter_until_one_leads():
    # KafkaRaftClient.maybeSendAnyVoterFetch: an Unattached voter answers NOT_LEADER_OR_FOLLOWER
    # at once, the error is handled (the voter is ready again), the observer asks the next one
    c = Cluster(3, kafka_version="4.1", seed=1)
    elected = next(r[0] for r in c.trace.rows if r[1] == "raft_transition"
                   and "Leader" in str(r[5]))
    early = [r for r in _observer_fetches(c) if r[0] < elected]
    assert len(early) > 500, len(early)
    assert {r[5][1] for r in early} == {3000, 3001, 3002}


def test_controllers_first_starts_the_brokers_once_the_quorum_has_a_leader():
    c = Cluster(3, kafka_version="4.1", seed=1, kraft_start="controllers_first")
    elected = next(r[0] for r in c.trace.rows if r[1] == "raft_transition"
                   and "Leader" in str(r[5]))
    starts = [r for r in c.trace.rows if r[1] == "broker_start"]
    assert len(starts) == 3 and all(r[0] >= elected for r in starts)
    assert not [r for r in _observer_fetches(c) if r[0] < elected]
    assert c.kraft.ready() and c.inspect.metadata_mode() == "kraft"
    c.create_topic("t", 1, 3)
    p = c.producer(acks="all")
    p.send("t", "v", partition=0)
    c.run(500)
    assert len(p.acked()) == 1


def test_kraft_start_is_checked_before_anything_is_built():
    with pytest.raises(ClusterError, match=r"kraft_start.*'together', 'controllers_first'.*"
                                           r"did you mean 'controllers_first'"):
        Cluster(3, kafka_version="4.1", kraft_start="controllers-first")
    with pytest.raises(ClusterError, match="ZooKeeper mode"):
        Cluster(3, kafka_version="3.7", kraft_start="controllers_first")
    assert Cluster(3, kafka_version="3.7", kraft_start="together").kraft is None


# -- registration ---------------------------------------------------------------------------------
def test_broker_epoch_is_the_offset_of_its_register_broker_record():
    c = kraft()
    log = c.kraft.active().raft.log
    offsets = {rec.broker_id: off for off, _e, rec in log.entries
               if isinstance(rec, R.RegisterBrokerRecord)}
    assert sorted(offsets) == [1, 2, 3]
    for b in c.brokers.values():
        assert b.broker_epoch == offsets[b.id]
        assert c.kraft.image.brokers[b.id].epoch == offsets[b.id]
        assert not c.kraft.image.brokers[b.id].fenced
        assert b.lifecycle.state == "RUNNING"


def test_brokers_heartbeat_every_broker_heartbeat_interval_ms():
    c = kraft()
    c.run(20000)
    times = [t for t in recv_times(c, "BrokerHeartbeatRequest", src=2) if t > 5000]
    gaps = {b - a for a, b in zip(times, times[1:], strict=False)}
    # the next heartbeat is scheduled 2000 ms after the answer: one round trip on top
    assert gaps and all(2000 <= g <= 2010 for g in gaps), gaps


def test_metadata_reaches_brokers_as_records_not_leader_and_isr():
    c = kraft()
    c.create_topic("t", 3, 3)
    sent = {r[5][0] for r in rows(c, "send")}
    assert "LeaderAndIsrRequest" not in sent and "UpdateMetadataRequest" not in sent
    assert "Fetch" in sent or "RaftFetchRequest" in sent
    for b in c.brokers.values():
        assert {tp for tp in b.replica_manager.partitions} == {("t", 0), ("t", 1), ("t", 2)}


# -- fencing ------------------------------------------------------------------------------------
def first_fence_check(c, after_ms: int) -> int:
    """Kafka 4.0+: the first run of the periodic maybeFenceStaleBroker task at or after
    ``after_ms``: every max(1, 9000 / 8) = 1,125 ms from the controller's activation (while no
    run has fenced anyone: such a run brings the next one 10 ms after it)."""
    active_at = rows(c, "controller_active")[-1][0]
    k = max(1, -(-(after_ms - active_at) // 1125))
    return active_at + k * 1125


@pytest.mark.parametrize("version", ["3.9", "4.0", "4.1"])
def test_a_crashed_broker_is_fenced_9_s_after_its_last_heartbeat(version):
    """3.9: a deferred event at the session deadline fences the broker one ms after it
    (QuorumController.rescheduleMaybeFenceStaleBrokers). 4.0+ (KAFKA-17793): the periodic
    maybeFenceStaleBroker task, every session timeout / 8, fences it at its first run after the
    deadline: within 112.5% of broker.session.timeout.ms of the last contact."""
    c = kraft(version, metadata_mode="kraft")
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    crash_at = c.now
    c.crash(1)
    c.run(15000)
    fenced = [r for r in rows(c, "broker_fenced") if r[5].broker == 1]
    assert len(fenced) == 1
    last = max(t for t in recv_times(c, "BrokerHeartbeatRequest", src=1) if t <= crash_at)
    # stale strictly after last contact + broker.session.timeout.ms (whole ms: one ms later)
    if version == "3.9":
        assert fenced[0][0] - last == 9001
        assert 9000 - 2000 <= fenced[0][0] - crash_at <= 9001
    else:
        assert fenced[0][0] == first_fence_check(c, last + 9001)
        assert 9001 <= fenced[0][0] - last <= 9000 + 1125
    assert c.leader("t", 0) == 2 and c.isr("t", 0) == [2, 3]
    assert c.kraft.image.brokers[1].fenced


def test_one_stale_broker_is_fenced_per_controller_event():
    c = kraft(brokers=4)
    c.crash(1)
    c.crash(2)
    c.run(15000)
    fenced = rows(c, "broker_fenced")
    assert sorted(r[5].broker for r in fenced) == [1, 2]
    # two separate maybeFenceReplicas events, each writing its own batch
    assert len({(r[0], r[5].broker) for r in fenced}) == 2


def test_a_restarted_broker_registers_again_and_is_unfenced_once_caught_up():
    c = kraft()
    c.crash(3)
    c.run(12000)
    assert c.kraft.image.brokers[3].fenced
    old_epoch = c.brokers[3].broker_epoch
    c.start(3)
    c.run(3000)
    assert not c.kraft.image.brokers[3].fenced
    assert c.brokers[3].broker_epoch > old_epoch


# -- controlled shutdown ------------------------------------------------------------------------
def test_controlled_shutdown_goes_through_the_heartbeat_and_moves_leaders_first():
    c = kraft(version="4.1", config={"min.insync.replicas": 2})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    epoch = c.brokers[1].broker_epoch
    c.shutdown(1)
    c.run_until(lambda c: c.brokers[1].state == "stopped", 10000)
    assert c.leader("t", 0) == 2
    assert 1 not in c.isr("t", 0)
    # the heartbeat asked to shut down; the controller answered shouldShutDown
    assert any(r[2] == 1 and r[5].kind == "controlled_shutdown" for r in rows(
        c, "controlled_shutdown"))
    # .kafka_cleanshutdown holds the epoch
    assert c.brokers[1].log_manager.clean_shutdown_file == epoch
    assert not any(r[5].broker == 1 for r in rows(c, "broker_fenced"))   # no session expiry


# -- KIP-966: ELR and unclean shutdowns ---------------------------------------------------------
def test_elr_keeps_the_replicas_that_left_the_isr_below_min_isr():
    c = kraft(version="4.1", config={"min.insync.replicas": 2})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    for b in (1, 2, 3):
        c.crash(b)
        c.run(12000)
    reg = c.kraft.image.partitions[("t", 0)]
    assert reg.leader == -1 and reg.isr == ()
    assert sorted(reg.elr) == [2, 3] and reg.last_known_elr == (3,)
    assert "Leader: none" in c.describe("t") and "Elr: " in c.describe("t")


def test_without_elr_the_last_isr_member_stays_listed_as_in_zookeeper_mode():
    c = kraft(version="4.0", config={"min.insync.replicas": 2})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    for b in (1, 2, 3):
        c.crash(b)
        c.run(12000)
    reg = c.kraft.image.partitions[("t", 0)]
    assert reg.leader == -1 and reg.isr == (3,) and reg.elr == ()


def test_an_unclean_restart_leaves_the_elr_a_clean_one_does_not():
    c = kraft(version="4.1", config={"min.insync.replicas": 2})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.crash(1)
    c.run(12000)                       # ISR [2, 3]: still at min ISR, no ELR
    assert c.kraft.image.partitions[("t", 0)].elr == ()
    c.shutdown(2)                      # clean: .kafka_cleanshutdown holds its epoch
    c.run_until(lambda c: c.brokers[2].state == "stopped", 10000)
    assert c.kraft.image.partitions[("t", 0)].elr == (2,)   # left the ISR below min ISR
    c.crash(3)
    c.run(12000)
    reg = c.kraft.image.partitions[("t", 0)]
    assert reg.leader == -1 and reg.isr == () and sorted(reg.elr) == [2, 3]
    c.start(3)                         # crashed: an unclean restart leaves ISR and ELR
    c.run(5000)
    reg = c.kraft.image.partitions[("t", 0)]
    assert 3 not in reg.elr and reg.leader == -1
    c.start(2)                         # clean restart: still eligible, elected from the ELR
    c.run(5000)
    reg = c.kraft.image.partitions[("t", 0)]
    assert reg.leader == 2 and reg.isr[0] == 2, c.describe("t")


# -- the controller quorum ------------------------------------------------------------------------
def test_the_quorum_elects_a_new_active_controller_when_it_crashes():
    c = kraft()
    old = c.controller_id()
    assert old in (3000, 3001, 3002)
    c.crash(old)
    c.run_until(lambda c: c.controller_id() not in (-1, old), 10000)
    assert c.now - 3000 < 5000     # fetch timeout 2 s + election timeout 1-2 s
    c.create_topic("after", 1, 3)
    assert c.leader("after", 0) in (1, 2, 3)


def test_quorum_loss_freezes_metadata_while_the_data_plane_goes_on():
    c = kraft(config={"min.insync.replicas": 1})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    active = c.controller_id()
    others = [n for n in (3000, 3001, 3002) if n != active]
    c.crash(others[0])
    c.crash(others[1])
    c.run(5000)
    assert c.controller_id() == -1        # the leader resigned: no majority fetches
    p = c.producer(acks="1")
    results = p.send_many("t", range(20), partition=0)
    c.run(3000)
    assert all(r.acked for r in results)   # leader 1 still serves produce requests
    c.crash(3)
    c.run(20000)
    assert c.kraft.image.brokers[3].fenced is False    # no controller to fence it
    with pytest.raises(ClusterError, match="no active controller"):
        c.create_topic("frozen", 1, 1)
    c.start(others[0])
    c.run(15000)
    assert c.controller_id() != -1
    assert c.kraft.image.brokers[3].fenced


# -- epochs by metadata.version -------------------------------------------------------------------
@pytest.mark.parametrize("version,bumps", [("3.5", True), ("3.7", False)])
def test_isr_shrink_bumps_the_leader_epoch_only_before_metadata_version_3_6(version, bumps):
    c = kraft(version=version, metadata_mode="kraft",
              config={"replica.lag.time.max.ms": 10000})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    epoch = c.inspect.partition_state("t", 0)["leader_epoch"]
    c.cut(1, 3)
    c.producer(acks="1").send_many("t", range(5), partition=0)
    c.run_until(lambda c: c.isr("t", 0) == [1, 2], 30000)
    assert (c.inspect.partition_state("t", 0)["leader_epoch"] > epoch) == bumps


# -- state as data ---------------------------------------------------------------------------------
def test_a_kraft_cluster_snapshots_and_replays_identically():
    c = kraft()
    c.create_topic("t", 2, 3)
    c.producer(acks="all").send_many("t", range(50))
    c.run(1000)
    d = restore(snapshot(c))
    for x in (c, d):
        x.crash(2)
        x.run(12000)
    assert c.trace.digest() == d.trace.digest()


_DIGEST = """
from kafkasim.runtime.cluster import Cluster
c = Cluster(3, kafka_version="4.1", seed=5)
c.run(2000); c.create_topic("t", 3, 3); c.producer(acks="all").send_many("t", range(30))
c.crash(c.controller_id()); c.crash(1); c.run(15000)
print(c.trace.digest())
"""


def test_kraft_traces_do_not_depend_on_string_hashing():
    out = set()
    for seed in ("0", "1", "4242"):
        env = dict(os.environ, PYTHONHASHSEED=seed)
        out.add(subprocess.run([sys.executable, "-c", _DIGEST], env=env, check=True,
                               capture_output=True, text=True).stdout.strip())
    assert len(out) == 1, out


# -- periodic controller work ---------------------------------------------------------------------
def test_kraft_auto_rebalance_moves_every_imbalanced_partition_back_ignoring_the_percentage():
    # 1 of 10 partitions led by broker 1 is imbalanced: 10% is not > 10%, so the ZooKeeper
    # controller would leave it; KRaft rebalances every imbalanced partition
    # (ReplicationControlManager.maybeBalancePartitionLeaders)
    c = kraft()
    assign = [[1, 2, 3]] + [[2, 3, 1]] * 9
    c.create_topic("t", assignment=assign)
    c.elect("t", [0], "preferred")
    c.shutdown(1)
    c.run_until(lambda c: c.brokers[1].state == "stopped", 10000)
    assert c.leader("t", 0) == 2
    c.start(1)
    c.run(10000)
    assert c.leader("t", 0) == 2       # not yet: the check runs every 300 s
    c.run(300_000)
    assert c.leader("t", 0) == 1


def test_leaderless_partitions_get_an_unclean_leader_from_the_periodic_retry():
    # unclean.leader.election.enable turned on after the partition went offline: the KRaft
    # controller retries unclean elections every unclean.leader.election.interval.ms
    c = kraft(version="4.0", config={"replica.lag.time.max.ms": 10000})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.cut(1, 2)
    c.cut(1, 3)
    c.producer(acks="1").send_many("t", range(5), partition=0)
    c.run_until(lambda c: c.isr("t", 0) == [1], 30000)
    c.heal()
    c.crash(1)
    c.run(12000)
    assert c.leader("t", 0) == -1
    c.alter_config("topics", "t", {"unclean.leader.election.enable": True})
    c.run(300_000 + 5000)
    assert c.leader("t", 0) in (2, 3)
    elections = [r for r in rows(c, "controller") if type(r[5]).__name__ == "LeaderElection"
                 and r[5].unclean]
    assert elections, "the election is traced as unclean (RECOVERING, KIP-704)"


# -- configs under ELR (KIP-966, ConfigurationControlManager) ----------------------------------
def test_elr_bootstraps_a_cluster_level_min_insync_replicas():
    c = kraft(version="4.1", config={"min.insync.replicas": 2})
    assert c.kraft.image.configs[("BROKER", "")]["min.insync.replicas"] == "2"
    assert c.kraft.image.features["eligible.leader.replicas.version"] == 1
    assert "eligible.leader.replicas.version" not in kraft(version="4.0").kraft.image.features


def test_broker_level_min_isr_is_refused_while_elr_is_on():
    c = kraft(version="4.1")
    with pytest.raises(ClusterError, match="Broker-level min.insync.replicas cannot be altered "
                                           "while ELR is enabled.*INVALID_CONFIG"):
        c.alter_config("brokers", 1, {"min.insync.replicas": 2})
    with pytest.raises(ClusterError, match="Cluster-level min.insync.replicas cannot be removed"):
        c.alter_config("brokers", None, {}, delete=["min.insync.replicas"])
    kraft(version="4.0").alter_config("brokers", 1, {"min.insync.replicas": 2})   # no ELR


def test_a_min_isr_change_clears_the_elr():
    c = kraft(version="4.1", config={"min.insync.replicas": 2})
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.crash(1)
    c.run(12000)
    c.crash(2)
    c.run(12000)
    assert c.kraft.image.partitions[("t", 0)].elr == (2,)
    c.alter_config("brokers", None, {"min.insync.replicas": 1})
    c.run(1000)
    assert c.kraft.image.partitions[("t", 0)].elr == ()   # ClearElrRecord (KAFKA-16540)


def test_session_expiry_is_the_heartbeat_deadline_and_zookeeper_sessions_do_not_exist():
    c = kraft()
    deadline = c.inspect.session_expiry_ms(1)
    last = max(recv_times(c, "BrokerHeartbeatRequest", src=1))
    assert deadline == last + 9000
    c.crash(1)
    c.run_until(lambda c: c.kraft.image.brokers[1].fenced, 15000)
    fenced_at = [r[0] for r in rows(c, "broker_fenced") if r[5].broker == 1][0]
    # stale one millisecond after the deadline, fenced at the next periodic check (4.0+)
    assert fenced_at == first_fence_check(c, deadline + 1)
    # committed after controller.quorum.append.linger.ms (25) and a replication round trip
    assert 25 <= c.now - fenced_at <= 35
    assert c.inspect.session_expiry_ms(1) == -1
    with pytest.raises(ClusterError, match="no ZooKeeper sessions.*broker.session.timeout.ms"):
        c.zk_control_plane.expire_session(2)


def test_a_starting_kraft_broker_refuses_connections_instead_of_answering_not_leader():
    """BrokerServer.startup (3.3 ... trunk) enables request processing -- starts the
    SocketServer's acceptors, which open the listeners' server sockets -- only after
    ``lifecycleManager.setReadyToUnfence()``, whose future (initialUnfenceFuture) completes when
    the controller unfences the broker (BrokerLifecycleManager: RECOVERY -> RUNNING). While
    STARTING or in RECOVERY a client's connect is refused: its NetworkClient marks the node
    DISCONNECTED with a reconnect backoff and the producer's batches wait (no attempt, no
    error; tests/test_connection_states.py has the backoff); the broker never answers
    NOT_LEADER_OR_FOLLOWER then. Here the leader is killed and restarted at once: the controller
    still names it leader (its old session lives), so the producer tries the new process.
    Before, that process answered NOT_LEADER_OR_FOLLOWER while STARTING."""
    c = Cluster(brokers=3, seed=1, kafka_version="4.1")
    assert c.run_until(lambda cl: cl.kraft.ready(), 30000)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(2000)
    p = c.producer("p", acks="all", linger_ms=0)
    assert p.send("t", "before", partition=0) and p.flush()
    b1 = c.brokers[1]
    c.restart(1)
    assert b1.lifecycle.state == "STARTING"
    results = [p.send("t", f"v{i}", partition=0) for i in range(5)]
    assert c.run_until(lambda cl: p.pending() == 0, 60000)
    assert all(r.status == "acked" for r in results)
    errors = [e for r in results for e in r.errors]
    assert errors == []
    refused = [r for r in c.trace.rows if r[1] == "connect_failed" and r[2] == "p"
               and r[5][0] == 1 and r[5][2] == "listener not open yet"]
    assert refused
    # once unfenced (RUNNING) the broker takes requests again
    assert c.run_until(lambda cl: b1.lifecycle.state == "RUNNING", 30000)


@pytest.mark.parametrize("call", ["create_topic", "alter_config"])
def test_an_admin_write_whose_controller_loses_leadership_fails_not_controller(call):
    """The active controller's Raft leadership ends under the append of an admin request's
    records (RaftClient.prepareAppend throws NotLeaderException: QuorumController renounces):
    the request fails NOT_CONTROLLER with a ClusterError naming the controller, and nothing of
    it stays. (Before, create_topic raised a bare KeyError looking up the topic it had not
    written.)"""
    from kafkasim.control.kraft.raft import NotLeaderError

    c = Cluster(brokers=3, controllers=3, seed=1)
    c.create_topic("t", partitions=1, replication_factor=3)
    c.run(1000)
    node = c.kraft.active()

    def resigned(ctx, records):
        raise NotLeaderError(f"Append failed because the replica {node.id} is not the leader")

    node.raft.append = resigned
    before = dict(c.topics.configs["t"])
    with pytest.raises(ClusterError, match=rf"controller {node.id} lost .*NOT_CONTROLLER"):
        if call == "create_topic":
            c.create_topic("u", partitions=1, replication_factor=3)
        else:
            c.alter_config("topics", "t", {"retention.ms": 1000})
    assert not node.controller.active
    assert "u" not in node.controller.replication_control.topics()
    assert "u" not in c.topics.configs and c.topics.configs["t"] == before
