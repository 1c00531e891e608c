"""kafkasim.course.controller (notebook 07): the exercise checks with right, wrong and missing
answers, and the rules they grade against the simulator's own runs.

Rules mirrored: ZooKeeper session expiry (ClientCnxn pings every sessionTimeout / 3, the server
expires a session sessionTimeout after the last ping), KRaft fencing (BrokerHeartbeatManager:
QuorumController.rescheduleMaybeFenceStaleBrokers fires at lastContact +
broker.session.timeout.ms), Raft majorities (KafkaRaftClient / QuorumState: a leader needs the
votes of a majority of the voters), and PartitionLeaderElectionAlgorithms.
offlinePartitionLeaderElection (the first live ISR member in assignment order)."""

from __future__ import annotations

import pytest

from kafkasim.course import controller as ctl
from kafkasim.runtime.cluster import Cluster

# run as in the notebooks, which set KAFKA_VERSION = "4.3" (conftest.py)
pytestmark = pytest.mark.usefixtures("notebook_kafka_version")

CRASH_TIMES = range(10000, 16001, 250)


def leader_moved(c, topic: str, partition: int, old_leader: int, timeout_ms: int = 40000) -> int:
    """Run ``c`` until ``topic-partition`` has a live leader other than ``old_leader``; the time."""
    moved = c.run_until(lambda cl: cl.leader(topic, partition) not in (old_leader, -1), timeout_ms)
    assert moved, f"{topic}-{partition} has no new leader after {timeout_ms} ms"
    return c.now


def _leader_moved_after(mode: str, crash_ms: int, config: dict) -> int:
    c = Cluster(brokers=3, seed=ctl.SEED, config=config,
                kafka_version="3.7" if mode == "zookeeper" else None)
    c.create_topic("orders", 1, 3, assignment=[[2, 3, 1]])
    c.run_to(crash_ms)
    c.crash(2)
    return leader_moved(c, "orders", 0, old_leader=2) - crash_ms


@pytest.mark.parametrize("mode,config,args", [
    ("zookeeper", {"zookeeper.session.timeout.ms": 6000}, (6000, None)),       # exercise 1
    ("zookeeper", {}, (18000, None)),                                           # section 2
    ("kraft", {"broker.session.timeout.ms": 12000,
               "broker.heartbeat.interval.ms": 3000}, (12000, 3000)),          # exercise 2
    ("kraft", {}, (9000, 2000)),                                                # section 2
])
def test_detection_window_matches_the_simulator(mode, config, args):
    lo, hi = ctl.detection_window(mode, *args)
    seen = [_leader_moved_after(mode, t, config) for t in CRASH_TIMES]
    # every delay falls in the window (plus a few ms of network and election), and the crash
    # phases spread them over a whole ping / heartbeat cycle (in KRaft 4.x the periodic session
    # check's grid then adds 0 .. timeout / 8, at a phase the seed fixes)
    assert all(lo <= d <= hi + 100 for d in seen), (lo, hi, seen)
    cycle = args[0] // 3 if mode == "zookeeper" else args[1]
    assert max(seen) - min(seen) >= cycle - 2 * 250, seen   # sampled every 250 ms


def test_detection_window_rejects_bad_input():
    with pytest.raises(ValueError, match="mode"):
        ctl.detection_window("raft", 9000)
    with pytest.raises(ValueError, match="broker.heartbeat.interval.ms"):
        ctl.detection_window("kraft", 9000, 10000)


def test_check_detection_window(capsys):
    assert not ctl.check_detection_window("zookeeper", 6000, None, None)
    assert "Not answered" in capsys.readouterr().out
    assert ctl.check_detection_window("zookeeper", 6000, 4000, 6000)
    # Kafka 4.0+: fenced at the first periodic check (every 12000 / 8 = 1500 ms) after the
    # session ends; 3.9: at the session's end
    assert ctl.check_detection_window("kraft", 12000, 9000, 13500, heartbeat_interval_ms=3000)
    assert "every 1500 ms" in capsys.readouterr().out
    assert not ctl.check_detection_window("kraft", 12000, 9000, 12000, heartbeat_interval_ms=3000)
    assert "latest" in capsys.readouterr().out
    assert ctl.check_detection_window("kraft", 12000, 9000, 12000, heartbeat_interval_ms=3000,
                                      kafka_version="3.9")
    assert not ctl.check_detection_window("kraft", 12000, 10000, 13500,
                                          heartbeat_interval_ms=3000)
    assert "earliest" in capsys.readouterr().out
    assert not ctl.check_detection_window("zookeeper", 6000, 4000, 18000)
    assert "latest" in capsys.readouterr().out


@pytest.mark.parametrize("voters", [3, 5])
def test_quorum_tolerance_matches_the_simulator(voters):
    c = Cluster(brokers=3, seed=ctl.SEED, controllers=voters)
    c.run(3000)
    for _ in range(ctl.quorum_tolerance(voters)):
        active = c.controller_id()
        c.crash(next(n for n in sorted(c.kraft.nodes) if n != active
                     and c.kraft.nodes[n].state == "running"))
    c.crash(c.controller_id())          # one more than tolerated would still leave a majority?
    c.run(8000)
    running = sum(1 for n in c.kraft.nodes.values() if n.state == "running")
    assert running == voters - ctl.quorum_tolerance(voters) - 1
    assert (c.controller_id() >= 0) == (running > voters // 2)


def test_quorum_of_five_survives_two_failures_not_three():
    c = Cluster(brokers=3, seed=ctl.SEED, controllers=5)
    c.run(3000)
    for _ in range(2):
        c.crash(c.controller_id())
        c.run(8000)
        assert c.controller_id() >= 0
    c.crash(c.controller_id())
    c.run(8000)
    assert c.controller_id() == -1


def test_check_quorum_tolerance(capsys):
    assert not ctl.check_quorum_tolerance(5, None)
    assert ctl.check_quorum_tolerance(5, 2)
    assert ctl.check_quorum_tolerance(3, 1)
    assert not ctl.check_quorum_tolerance(5, 3)
    # notebook 07's exercise 3: four controllers tolerate one failure, as three do
    assert ctl.check_quorum_tolerance(4, 1)
    wrong = ctl.check_quorum_tolerance(4, 2)    # the even-number trap gets its own feedback
    assert not wrong and "need 3 for a majority" in wrong.message
    assert "majority" in capsys.readouterr().out


def test_quorum_loss_outcomes_follow_the_data_plane_control_plane_split():
    """Leaders serve produce and fetch without a controller; an ISR shrink (AlterPartition) and a
    restarted broker's return (registration, unfencing) need a committed metadata record."""
    out = ctl.quorum_loss_outcomes()
    assert list(out) == list(ctl.QUORUM_LOSS_OPERATIONS)
    assert out == {
        "a consumer reads from a partition whose leader is alive": True,
        "an acks=1 write to a partition whose leader is alive": True,
        "a follower that stopped fetching is removed from the ISR": False,
        "a broker restarted after a crash serves its partitions again": False,
    }


def test_check_quorum_loss(capsys):
    blank = dict.fromkeys(ctl.QUORUM_LOSS_OPERATIONS)
    assert not ctl.check_quorum_loss(blank)
    assert "Not answered" in capsys.readouterr().out
    right = ctl.quorum_loss_outcomes()
    assert ctl.check_quorum_loss(dict(right))
    wrong = dict(right)
    wrong[ctl.QUORUM_LOSS_OPERATIONS[2]] = True
    assert not ctl.check_quorum_loss(wrong)
    assert "1 wrong" in capsys.readouterr().out
    assert not ctl.check_quorum_loss("yes")


def _loses_with_forgetful(c):
    """Broker 2 stays alive but out of sync; writes acked by 1 and 3 only; leader 1 dies."""
    p = c.producer("p", acks="all")
    p.send("orders", "first", partition=0)
    p.flush()
    c.run(1000)
    c.cut(1, 2)
    for i in range(5):
        p.send("orders", f"x{i}", partition=0)
    p.flush()                          # acked once the leader drops 2 from the ISR (30 s)
    assert c.isr("orders") == [1, 3]
    c.crash(1)
    c.run(25000)


def test_first_live_replica_differs_from_kafka_only_outside_the_isr():
    kafka = Cluster(brokers=3, kafka_version="3.7").rule("offline_partition_leader_election")
    assert ctl.first_live_replica([1, 2, 3], [1, 3], {2, 3}, False) == (2, False)
    assert kafka([1, 2, 3], [1, 3], {2, 3}, False) == (3, False)
    assert ctl.first_live_replica([1, 2, 3], [2, 3], {2, 3}, False) == \
        kafka([1, 2, 3], [2, 3], {2, 3}, False)


def test_check_forgetful_controller(capsys):
    assert not ctl.check_forgetful_controller(None)
    assert not ctl.check_forgetful_controller("crash 1")
    assert not ctl.check_forgetful_controller(lambda c: c.run(1000))
    assert "found nothing" in capsys.readouterr().out
    assert ctl.check_forgetful_controller(_loses_with_forgetful)
    assert "NoAckedLoss" in capsys.readouterr().out

    def breaks_both(c):
        c.swap_rule("offline_partition_leader_election", ctl.first_live_replica)
        _loses_with_forgetful(c)

    assert not ctl.check_forgetful_controller(breaks_both)
    assert "Kafka's own election too" in capsys.readouterr().out


def test_control_events_show_the_zookeeper_fan_out():
    c = Cluster(brokers=3, seed=ctl.SEED, kafka_version="3.7")
    c.create_topic("orders", 1, 3, assignment=[[2, 3, 1]])
    c.run_to(10000)
    c.crash(2)
    moved = leader_moved(c, "orders", 0, old_leader=2)
    c.run(1000)
    text = str(ctl.control_events(c, 10000, moved + 50))
    for needle in ("zk_session_expired", "LeaderAndIsrRequest -> broker 1",
                   "LeaderAndIsrRequest -> broker 3", "UpdateMetadataRequest -> broker 1",
                   "become_leader"):
        assert needle in text
    assert "-> broker 2" not in text              # nothing is sent to the dead broker


def test_kraft_views_show_records_not_requests():
    c = Cluster(brokers=3, seed=ctl.SEED)
    c.create_topic("orders", 1, 3, assignment=[[2, 3, 1]])
    c.run_to(10000)
    c.crash(2)
    moved = leader_moved(c, "orders", 0, old_leader=2)
    c.run(100)
    events = str(ctl.control_events(c, 10000, moved + 50))
    assert "broker_fenced" in events and "LeaderAndIsr" not in events
    records = str(ctl.metadata_records(c, last=2))
    assert "PartitionChangeRecord" in records and "BrokerRegistrationChangeRecord" in records
    assert "NoOpRecord" not in records
    c.run(2000)                      # the active controller appends a NoOpRecord every 500 ms
    assert "NoOpRecord" in str(ctl.metadata_records(c, last=2, noop=True))


def test_client_requests_and_retried_errors_after_a_preferred_election():
    c = Cluster(brokers=3, seed=ctl.SEED)
    c.create_topic("orders", 1, 3, assignment=[[2, 3, 1]], config={"min.insync.replicas": 2})
    p = c.producer("p", acks="all")
    from kafkasim.runtime.workload import RateWorkload

    RateWorkload(c, p, "orders", rate=20, duration_ms=20000)
    c.run_to(5000)
    c.shutdown(2)
    c.run(3000)
    c.start(2)
    c.run_until(lambda cl: len(cl.isr("orders")) == 3, 30000)
    start = c.now
    c.elect("orders", election_type="preferred")
    c.run(20000)
    text = str(ctl.client_requests(c, "p", start, start + 300))
    assert "sends MetadataRequest" in text and "sends ProduceRequest to broker 2" in text
    summary = str(ctl.retried_errors(p))
    assert "NOT_LEADER_OR_FOLLOWER" in summary and "failed 0" in summary


def test_acked_without_controller_counts_acks_while_no_controller_is_active():
    """Notebook 07 section 5 scores "does the producer notice?" with this: a leader serves
    produce without a controller, so acks keep coming between the active controller's death and
    the next controller_active row."""
    from kafkasim.runtime.workload import RateWorkload

    c = Cluster(brokers=3, seed=ctl.SEED, kafka_version="4.3")
    c.create_topic("orders", 1, 3, assignment=[[2, 3, 1]])
    p = c.producer("p", acks="all")
    RateWorkload(c, p, "orders", rate=20, duration_ms=20000)
    c.run_to(8000)
    crash_at, old = c.now, c.controller_id()
    c.crash(old)
    assert ctl.acked_without_controller(c, p, crash_at) == 0      # nothing yet: no time passed
    c.run_until(lambda cl: cl.controller_id() not in (old, -1), 15000)
    gap = c.now - crash_at
    during = ctl.acked_without_controller(c, p, crash_at)
    c.run(3000)
    assert ctl.acked_without_controller(c, p, crash_at) == during  # ends at controller_active
    assert during >= gap // 50 - 2, (during, gap)                  # ~20/s: the producer went on
