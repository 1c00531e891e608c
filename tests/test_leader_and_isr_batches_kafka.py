"""ReplicaManager.becomeLeaderOrFollower's two batches (ZooKeeper mode): every partition state
of a LeaderAndIsr is checked first, the ones that pass split into partitionsToBeLeader and
partitionsToBeFollower, then makeLeaders runs on all the leaders (removeFetcherForPartitions once,
then Partition.makeLeader each) and makeFollowers on all the followers (Partition.makeFollower
each, removeFetcherForPartitions once, the delayed requests completed, addFetcherForPartitions
once). The same steps at 0.8.2.2, 0.10.2.0, 1.1.0, 2.4.0, 2.8.0 and 3.9.0-rc3
(ReplicaManager.scala:326-396@0.8.2.2, :1893-2080@3.9.0-rc3). Kafka's ReplicaManagerTest has no
case of its own for the order (its ZooKeeper cases send one partition at a time), so these check
the source's steps on kafkasim's FakeContext broker (tests/test_replica_manager_kafka.Broker).
"""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core.messages import FetchRequest, LeaderAndIsrRequest, PartitionState
from tests.test_replica_manager_kafka import CONTROLLER, TOPIC, Broker


def _state(partition: int, leader: int, epoch: int = 1, *, isr=(0, 1), partition_epoch=0,
           replicas=None) -> PartitionState:
    return PartitionState(TOPIC, partition, 0, leader, epoch, tuple(isr), partition_epoch,
                          tuple(isr if replicas is None else replicas))


def _lair(b: Broker, *states: PartitionState):
    b.outbox.clear()
    b.rm.become_leader_or_follower(b, CONTROLLER, LeaderAndIsrRequest(CONTROLLER, 0, states))
    return [m for d, m in b.sent if d == CONTROLLER][-1]


def _fetches_to(b: Broker, leader: int) -> list[FetchRequest]:
    return [m for d, m in b.sent if d == leader and isinstance(m, FetchRequest)]


@pytest.mark.parametrize("version", ["0.8.2", "0.10.2", "1.1", "2.4", "2.8", "3.7"])
def test_leaders_are_made_before_followers_whatever_the_request_order(version):
    """becomeLeaderOrFollower (ReplicaManager.scala:373-378@0.8.2.2, :2038-2047@3.9.0-rc3):
    makeLeaders runs on partitionsToBeLeader before makeFollowers on partitionsToBeFollower, so
    a request listing a follower, a leader and a follower makes the leader first; the answer
    still has every partition's error."""
    b = Broker(version)
    answer = _lair(b, _state(0, 1), _state(1, 0), _state(2, 1))
    changes = [line.split()[1] for line in b.outbox
               if line.startswith(("trace become_leader", "trace become_follower"))]
    assert changes == ["become_leader", "become_follower", "become_follower"]
    assert dict(((t, p), e) for t, p, e in answer.partition_errors) == {
        (TOPIC, 0): E.NONE, (TOPIC, 1): E.NONE, (TOPIC, 2): E.NONE}
    assert b.part(1).is_leader and not b.part(0).is_leader and not b.part(2).is_leader


@pytest.mark.parametrize("version", ["0.8.2", "2.4", "3.7"])
def test_followers_of_one_leader_get_their_fetcher_in_one_add(version):
    """makeFollowers (ReplicaManager.scala:526-531@0.8.2.2, :2330-2341@3.9.0-rc3): the fetchers
    of all the new followers are added in one addFetcherForPartitions, so the fetcher thread
    of their leader starts with both partitions and its first FetchRequest carries both
    (kafkasim added them one by one: the first fetch carried the first partition only)."""
    b = Broker(version)
    _lair(b, _state(0, 1), _state(1, 1))
    (fetch,) = _fetches_to(b, 1)
    assert [(p.topic, p.partition) for p in fetch.partitions] == [(TOPIC, 0), (TOPIC, 1)]
    (thread,) = b.fetchers.values()
    assert set(thread.partitions) == {(TOPIC, 0), (TOPIC, 1)}


def test_a_follower_whose_leader_is_not_alive_gets_a_log_but_no_fetcher():
    """makeFollowers' `case None` (KAFKA-1647; ReplicaManager.scala:2283-2292@3.9.0-rc3): a
    follower whose leader the metadata cache does not list alive gets its log and no
    Partition.makeFollower nor fetcher; the batch's other follower gets its fetcher."""
    b = Broker("3.7")
    answer = _lair(b, _state(0, 5, isr=(0, 5)), _state(1, 1))
    assert dict(((t, p), e) for t, p, e in answer.partition_errors) == {
        (TOPIC, 0): E.NONE, (TOPIC, 1): E.NONE}
    assert (TOPIC, 0) in b.rm.partitions and b.part(0).leader_id != 5
    (thread,) = b.fetchers.values()
    assert thread.leader_id == 1 and set(thread.partitions) == {(TOPIC, 1)}


def test_make_leaders_removes_the_fetcher_of_a_state_skipped_for_its_partition_epoch():
    """makeLeaders (ReplicaManager.scala:2199-2204@3.9.0-rc3): "first stop fetchers for all
    the partitions", then Partition.makeLeader each; a state older than the partition's
    partition epoch (KAFKA-13790, 3.3+) makes makeLeader answer false, yet its fetcher is
    gone already."""
    b = Broker("3.7")
    _lair(b, _state(0, 1, 1, partition_epoch=5))
    assert any((TOPIC, 0) in t.partitions for t in b.fetchers.values())
    _lair(b, _state(0, 0, 2, partition_epoch=3))
    assert not b.part(0).is_leader and b.part(0).get_partition_epoch() == 5
    assert not any((TOPIC, 0) in t.partitions for t in b.fetchers.values())


def test_leader_and_follower_in_one_request_fail_the_old_leaders_produce_first():
    """makeFollowers (ReplicaManager.scala:2316-2321@3.9.0-rc3): the fetchers of the partitions
    made follower are removed, then their delayed produces and fetches completed
    (completeDelayedFetchOrProduceRequests), then the fetchers added: a produce waiting on
    the old leader answers NOT_LEADER_OR_FOLLOWER, and the new fetcher starts after it."""
    b = Broker("3.7")
    _lair(b, _state(0, 0, 1))
    corr = b.produce(1, -1)
    b.sent.clear()
    _lair(b, _state(1, 0, 1), _state(0, 1, 2))
    kinds = [type(m).__name__ for _d, m in b.sent]
    assert kinds.index("ProduceResponse") < kinds.index("FetchRequest")
    produce = b.produce_answer(corr)
    assert [error for _t, _p, error, _o in produce.partitions] == [E.NOT_LEADER_OR_FOLLOWER]
