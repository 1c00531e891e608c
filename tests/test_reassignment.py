"""Partition reassignment as the ZooKeeper controller runs it since KIP-455 (Kafka 2.4):
``Admin.alterPartitionReassignments`` / ``kafka-reassign-partitions`` and
KafkaController.onPartitionReassignment. Each test names the Kafka source or test it mirrors.
"""

from __future__ import annotations

import json

import pytest
from clusters import make_cluster

from kafkasim.runtime.cluster import Cluster, ClusterError


def _cluster(n: int = 4, version: str = "3.7") -> Cluster:
    return make_cluster(n, seed=1, kafka_version=version,
                        config={"auto.leader.rebalance.enable": False})


def _topic_znode(c: Cluster, topic: str) -> dict:
    return json.loads(c.zk.get(f"/brokers/topics/{topic}").data)


def test_partition_reassignment_moves_a_single_replica_with_three_epoch_bumps():
    """ControllerIntegrationTest.testPartitionReassignment (3.7.0): a partition on the
    controller alone moves to the other broker; the final state has the new leader at
    InitialLeaderEpoch + 3 (A1 bump, B3 reassign election, B4 removal of the old replica from
    the ISR), the topic znode holds the target without adding/removing replicas and no
    reassignment is in progress."""
    c = _cluster(2)
    ctl = c.controller_id()
    other = [b for b in (1, 2) if b != ctl][0]
    c.create_topic("t", 1, assignment=[[ctl]])
    assert c.admin().alter_partition_reassignments_result({("t", 0): [other]}) == {
        ("t", 0): ("NONE", None)}
    assert c.run_until(lambda cl: not cl.admin().list_partition_reassignments(), 30000)
    c.run(100)   # the controller's last requests reach the brokers
    st = c.inspect.partition_state("t", 0)
    assert (st["leader"], st["leader_epoch"], st["isr"]) == (other, 3, [other])
    assert _topic_znode(c, "t")["partitions"] == {"0": [other]}
    assert _topic_znode(c, "t")["adding_replicas"] == {}
    assert _topic_znode(c, "t")["removing_replicas"] == {}
    # B5: the removed replica got StopReplica(deletePartition=true): its log is gone
    assert ("t", 0) not in c.brokers[ctl].logs
    assert ("t", 0) not in c.brokers[ctl].replica_manager.partitions


def test_reassignment_end_to_end_under_load_loses_nothing():
    """KafkaController.onPartitionReassignment phases (3.7.0 doc comment): ORS [1, 2, 3],
    TRS [4, 2, 3] gives RS [4, 2, 3, 1], AR [4], RR [1] (ReplicaAssignment.reassignTo); the
    leader epoch is bumped (A1), broker 4 starts as a follower, catches up and joins the ISR;
    then broker 4 leads (ReassignPartitionLeaderElectionStrategy: first target replica alive and
    in the ISR), broker 1 leaves the ISR, is stopped and deleted, and the topic znode holds
    RS = TRS. Records produced with acks=all meanwhile are all kept."""
    c = _cluster(4)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]], config={"min.insync.replicas": 2})
    p = c.producer(acks="all", linger_ms=1)
    sent = [p.send("t", f"a{i}", partition=0) for i in range(50)]
    c.run(300)
    c.hold(type="FetchResponse", dst=4)      # keep broker 4 behind while we look
    admin = c.admin()
    assert admin.alter_partition_reassignments({("t", 0): [4, 2, 3]}) == {("t", 0): "NONE"}
    assert admin.list_partition_reassignments() == {
        ("t", 0): {"replicas": [4, 2, 3, 1], "adding_replicas": [4], "removing_replicas": [1]}}
    st = c.inspect.partition_state("t", 0)
    assert (st["leader"], st["leader_epoch"], st["replicas"]) == (1, 1, [4, 2, 3, 1])
    assert _topic_znode(c, "t")["adding_replicas"] == {"0": [4]}
    assert _topic_znode(c, "t")["removing_replicas"] == {"0": [1]}
    sent += [p.send("t", f"b{i}", partition=0) for i in range(50)]
    c.run(200)
    # TopicCommand (2.6+): Adding/Removing Replicas columns; ReplicationFactor = RS - AR
    text = c.describe("t")
    assert "\tReplicationFactor: 3\t" in text
    assert "\tReplicas: 4,2,3,1\tIsr: 1,2,3\tAdding Replicas: 4\tRemoving Replicas: 1" in text
    assert c.brokers[4].replica_manager.partitions[("t", 0)].leader_epoch == 1
    c.release()
    sent += [p.send("t", f"c{i}", partition=0) for i in range(50)]
    assert c.run_until(lambda cl: not cl.admin().list_partition_reassignments(), 30000)
    # brokers 2 and 3 keep their fetcher thread to broker 4 across the two LeaderAndIsr
    # (epochs 2 and 3, AbstractFetcherManager reuses the running thread): its Fetch in flight at
    # epoch 2 answers FENCED_LEADER_EPOCH, and the partition, at epoch 3 by then, backs off
    # replica.fetch.backoff.ms (onPartitionFenced, 2.5+) before the HW can move again
    c.run(2000)
    st = c.inspect.partition_state("t", 0)
    assert st["replicas"] == [4, 2, 3] and st["leader"] == 4
    assert sorted(st["isr"]) == [2, 3, 4]
    assert st["leader_epoch"] == 3
    assert all(r.status == "acked" for r in sent)
    values = [v for _o, _e, v in c.log_records(4, "t")]
    assert values == [f"a{i}" for i in range(50)] + [f"b{i}" for i in range(50)] + \
        [f"c{i}" for i in range(50)]
    assert c.log(2, "t").log_end_offset == c.log(3, "t").log_end_offset == 150
    assert ("t", 0) not in c.brokers[1].logs and not c.brokers[1].fetchers
    assert [str(r[5]) for r in c.trace.rows if r[1] == "stop_replica" and r[2] == 1] == [
        "deletePartition=false: fetcher stopped", "deletePartition=true: log deleted"]
    text = c.describe("t")
    assert "Adding Replicas" not in text and "\tReplicas: 4,2,3\t" in text


def test_invalid_reassignments_are_refused_per_partition():
    """PlaintextAdminIntegrationTest.testInvalidAlterPartitionReassignments (3.7.0): unknown
    partitions get UNKNOWN_TOPIC_OR_PARTITION; a broker that is not alive, negative ids and
    duplicates get INVALID_REPLICA_ASSIGNMENT (KafkaController.validateReplicas)."""
    c = _cluster(3)
    c.create_topic("r", 4, 3)
    admin = c.admin()
    res = admin.alter_partition_reassignments({("topicA", 0): [1, 2, 3], ("r", 4): [1, 2, 3]})
    assert res == {("topicA", 0): "UNKNOWN_TOPIC_OR_PARTITION",
                   ("r", 4): "UNKNOWN_TOPIC_OR_PARTITION"}
    res = admin.alter_partition_reassignments_result({
        ("r", 0): [1, 2, 3, 4], ("r", 1): [-3, -2, -1], ("r", 2): [1, 2, 2], ("r", 3): []})
    assert {tp: err for tp, (err, _m) in res.items()} == dict.fromkeys(
        [("r", 0), ("r", 1), ("r", 2), ("r", 3)], "INVALID_REPLICA_ASSIGNMENT")
    assert res[("r", 0)][1].startswith("Replica assignment has brokers that are not alive.")
    assert res[("r", 2)][1] == ("Duplicate replica ids in partition reassignment replica list: "
                                "[1, 2, 2]")
    assert res[("r", 3)][1] == "Empty replica list specified in partition reassignment."
    assert admin.list_partition_reassignments() == {}
    # maybeBuildReassignment: cancelling (None) where nothing is in progress
    assert admin.alter_partition_reassignments({("r", 0): None}) == {
        ("r", 0): "NO_REASSIGNMENT_IN_PROGRESS"}


def test_list_reassignments_does_not_show_non_reassigning_partitions():
    """PlaintextAdminIntegrationTest.testListReassignmentsDoesNotShowNonReassigningPartitions."""
    c = _cluster(3)
    c.create_topic("l", 1, 3)
    assert c.admin().list_partition_reassignments([("l", 0)]) == {}
    assert c.admin().list_partition_reassignments() == {}


def test_cancelling_a_reassignment_stops_the_added_replica():
    """maybeBuildReassignment with no target reverts to the origin replicas (ORS);
    updateCurrentReassignment (U3) sends StopReplica to the replicas no longer wanted and the
    reassignment completes at once (ORS is in the ISR)."""
    c = _cluster(4)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer(acks="all")
    for i in range(5):
        p.send("t", f"m{i}", partition=0)
    c.run(200)
    c.hold(type="FetchResponse", dst=4)   # broker 4 cannot catch up
    c.admin().alter_partition_reassignments_result({("t", 0): [1, 2, 4]})
    c.run(500)
    assert c.admin().list_partition_reassignments()[("t", 0)]["adding_replicas"] == [4]
    assert c.admin().alter_partition_reassignments_result({("t", 0): None}) == {
        ("t", 0): ("NONE", None)}
    c.release()
    c.run(500)
    assert c.admin().list_partition_reassignments() == {}
    st = c.inspect.partition_state("t", 0)
    assert st["replicas"] == [1, 2, 3] and sorted(st["isr"]) == [1, 2, 3]
    assert ("t", 0) not in c.brokers[4].logs
    assert _topic_znode(c, "t")["partitions"] == {"0": [1, 2, 3]}


def test_reassignment_resumes_after_controller_failover():
    """initializePartitionReassignments (KafkaController.onControllerFailover): a new controller
    reads adding/removing replicas from the topic znode and carries the reassignment on; the
    removed replica, dead by then, gets no StopReplica (the controller has no channel to it)."""
    c = _cluster(4)
    old = c.controller_id()
    others = [b for b in (1, 2, 3, 4) if b != old]
    c.create_topic("t", 1, 3, assignment=[[old, others[0], others[1]]])
    p = c.producer(acks="all")
    for i in range(5):
        p.send("t", f"m{i}", partition=0)
    c.run(200)
    target = [others[2], others[0], others[1]]
    c.hold(type="FetchResponse", dst=others[2])
    c.admin().alter_partition_reassignments_result({("t", 0): target})
    c.run(200)
    assert _topic_znode(c, "t")["adding_replicas"] == {"0": [others[2]]}
    c.crash(old)                          # the controller (and removed replica) dies
    assert c.run_until(lambda cl: cl.controller_id() not in (-1, old), 60000)
    assert c.admin().list_partition_reassignments()[("t", 0)] == {
        "replicas": target + [old], "adding_replicas": [others[2]], "removing_replicas": [old]}
    c.release()
    assert c.run_until(lambda cl: not cl.admin().list_partition_reassignments(), 60000)
    c.run(500)
    st = c.inspect.partition_state("t", 0)
    assert st["replicas"] == target and sorted(st["isr"]) == sorted(target)
    assert st["leader"] in target
    assert _topic_znode(c, "t")["adding_replicas"] == {}
    assert ("t", 0) in c.brokers[old].logs   # never told to delete it


@pytest.mark.parametrize("version", ["2.4", "2.7", "3.7"])
def test_reassignment_completes_as_soon_as_the_target_is_in_sync(version):
    """Before 2.7 the leader writes the ISR to ZooKeeper and the controller's
    PartitionReassignmentIsrChangeHandler (a watch on the state znode) completes the
    reassignment; since AlterIsr (2.7) processAlterPartition calls maybeCompleteReassignment.
    Either way it does not wait for the batched ISR-change notification."""
    c = _cluster(4, version)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer(acks="all")
    for i in range(10):
        p.send("t", f"m{i}", partition=0)
    c.run(500)
    c.admin().alter_partition_reassignments_result({("t", 0): [1, 2, 4]})
    assert c.run_until(lambda cl: 4 in cl.isr("t") or not cl.admin().list_partition_reassignments(),
                       30000)
    t_isr = c.now
    assert c.run_until(lambda cl: not cl.admin().list_partition_reassignments(), 30000)
    assert c.now - t_isr <= 5
    c.run(200)
    st = c.inspect.partition_state("t", 0)
    assert st["replicas"] == [1, 2, 4] and sorted(st["isr"]) == [1, 2, 4] and st["leader"] == 1
    # A1 bump, then B3 (leader 1 stays: epoch bump to shrink the replica set), B4 (3 leaves)
    assert st["leader_epoch"] == 3
    assert not c.zk.data_watches


@pytest.mark.parametrize(("version", "rf", "columns"), [
    ("2.4", 4, False),     # TopicCommand @2.4.0: ReplicationFactor = replicas
    ("2.5", 3, False),     # @2.5.0: replicas - adding while removing replicas remain
    ("3.7", 3, True),      # @2.6.0+: and the Adding/Removing Replicas columns
])
def test_describe_during_a_reassignment(version, rf, columns):
    """kafka-topics --describe while [1, 2, 3] moves to [4, 2, 3] (TopicCommand
    getReplicationFactor / PartitionDescription.printDescription per release)."""
    c = _cluster(4, version)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer(acks="all")
    for i in range(5):
        p.send("t", f"m{i}", partition=0)
    c.run(500)
    c.hold(type="FetchResponse", dst=4)
    c.admin().alter_partition_reassignments_result({("t", 0): [4, 2, 3]})
    c.run(100)
    text = c.describe("t")
    assert f"ReplicationFactor: {rf}\t" in text
    assert ("\tAdding Replicas: 4\tRemoving Replicas: 1" in text) == columns
    # under-replicated: RF - |ISR| > 0 with the same RF
    assert (c.describe("t", under_replicated_partitions=True) != "") == (rf > 3)


def test_reassignment_needs_kafka_2_4():
    """KIP-455 added AlterPartitionReassignments in 2.4.0."""
    c = _cluster(3, "2.3")
    c.create_topic("t", 1, 3)
    with pytest.raises(ClusterError, match="KIP-455"):
        c.admin().alter_partition_reassignments_result({("t", 0): [1, 2]})
