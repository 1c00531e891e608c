"""BrokersToIsrsTest and BrokerToElrsTest, ported from Kafka (4.1.0, 13f70256db).

Kafka's BrokersToIsrs / BrokersToElrs are indexes the ReplicationControlManager updates on every
replay (``update(topicId, partitionId, prevIsr, nextIsr, prevLeader, nextLeader)``). kafkasim
answers the same queries from the partitions themselves, so each ``update`` of Kafka's test is a
replayed PartitionRecord (a new partition) or PartitionChangeRecord (a change), and the queries
go to ``ReplicationControlManager.brokers_to_isrs``: ``iterator(brokerId, leadersOnly)``,
``partitions_with_no_leader`` and ``partitions_with_broker_in_elr``. Kafka's tests compare sets
of TopicIdPartition; so do these. Scenarios are Kafka's; code is our own.
"""

from __future__ import annotations

from kafkasim.control.kraft.records import (
    PartitionChangeRecord,
    PartitionRecord,
    TopicRecord,
)
from kafkasim.control.kraft.replication_control import ReplicationControlManager

UUIDS = ("z5XgH_fQSAK3-RYoF2ymgw", "U52uRe20RsGI0RvpcTx33Q")


class _NoCluster:
    broker_registrations: dict = {}


def new_rc() -> ReplicationControlManager:
    rc = ReplicationControlManager(_NoCluster(), metadata_version="4.0-IV1", elr_enabled=True)
    for i, topic_id in enumerate(UUIDS):
        rc.replay(TopicRecord(f"t{i}", topic_id))
    return rc


def add(rc, topic, pid, isr, leader=-1, elr=()):
    """update(topicId, partitionId, null, nextIsr, -1, nextLeader) for a new partition."""
    rc.replay(PartitionRecord(pid, UUIDS[topic], tuple(sorted(isr)), tuple(isr), leader=leader,
                              eligible_leader_replicas=tuple(elr)))


def to_set(iterator) -> set[tuple[str, int]]:
    return {(info.id, pid) for info, pid in iterator}


def tip(topic, pid):
    return UUIDS[topic], pid


def test_iterator():
    """BrokersToIsrsTest.testIterator."""
    rc = new_rc()
    b2i = rc.brokers_to_isrs
    assert to_set(b2i.iterator(1, False)) == set()
    add(rc, 0, 0, [1, 2, 3], leader=1)
    add(rc, 1, 1, [2, 3, 4], leader=4)
    assert to_set(b2i.iterator(1, False)) == {tip(0, 0)}
    assert to_set(b2i.iterator(2, False)) == {tip(0, 0), tip(1, 1)}
    assert to_set(b2i.iterator(4, False)) == {tip(1, 1)}
    assert to_set(b2i.iterator(5, False)) == set()
    add(rc, 1, 2, [3, 2, 1], leader=3)
    assert to_set(b2i.iterator(2, False)) == {tip(0, 0), tip(1, 1), tip(1, 2)}


def test_leaders_only_iterator():
    """BrokersToIsrsTest.testLeadersOnlyIterator: the leader moving 1 -> 2 moves the
    partition between the leaders-only iterators."""
    rc = new_rc()
    b2i = rc.brokers_to_isrs
    add(rc, 0, 0, [1, 2, 3], leader=1)
    add(rc, 1, 1, [2, 3, 4], leader=4)
    assert to_set(b2i.iterator(1, True)) == {tip(0, 0)}
    assert to_set(b2i.iterator(2, True)) == set()
    assert to_set(b2i.iterator(4, True)) == {tip(1, 1)}
    rc.replay(PartitionChangeRecord(0, UUIDS[0], leader=2))
    assert to_set(b2i.iterator(1, True)) == set()
    assert to_set(b2i.iterator(2, True)) == {tip(0, 0)}


def test_no_leader():
    """BrokersToIsrsTest.testNoLeader: a partition whose leader goes to -1 is listed by
    partitionsWithNoLeader (and by nobody's leaders-only iterator)."""
    rc = new_rc()
    b2i = rc.brokers_to_isrs
    add(rc, 0, 2, [1, 2, 3], leader=3)
    assert to_set(b2i.iterator(3, True)) == {tip(0, 2)}
    assert to_set(b2i.iterator(2, True)) == set()
    assert to_set(b2i.partitions_with_no_leader()) == set()
    rc.replay(PartitionChangeRecord(2, UUIDS[0], leader=-1))
    assert to_set(b2i.partitions_with_no_leader()) == {tip(0, 2)}
    assert to_set(b2i.iterator(3, True)) == set()


def test_elr_iterator():
    """BrokerToElrsTest.testIterator: partitionsWithBrokerInElr."""
    rc = new_rc()
    assert to_set(rc.partitions_with_broker_in_elr(1)) == set()
    add(rc, 0, 0, [5], leader=5, elr=[1, 2, 3])
    add(rc, 1, 1, [5], leader=5, elr=[2, 3, 4])
    assert to_set(rc.partitions_with_broker_in_elr(1)) == {tip(0, 0)}
    assert to_set(rc.partitions_with_broker_in_elr(2)) == {tip(0, 0), tip(1, 1)}
    assert to_set(rc.partitions_with_broker_in_elr(4)) == {tip(1, 1)}
    assert to_set(rc.partitions_with_broker_in_elr(5)) == set()
    add(rc, 1, 2, [5], leader=5, elr=[3, 2, 1])
    assert to_set(rc.partitions_with_broker_in_elr(2)) == {tip(0, 0), tip(1, 1), tip(1, 2)}
    rc.replay(PartitionChangeRecord(2, UUIDS[1], eligible_leader_replicas=()))
    assert to_set(rc.partitions_with_broker_in_elr(2)) == {tip(0, 0), tip(1, 1)}
