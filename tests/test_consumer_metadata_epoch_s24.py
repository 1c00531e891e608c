"""KAFKA-7738 (2.2+) for the consumer: Kafka's client ``Metadata`` -- which the consumer's
``ConsumerMetadata`` extends, as the producer's ``ProducerMetadata`` does -- keeps the newest
leader epoch seen per partition and ignores a MetadataResponse row with an older one (a broker
whose metadata cache lags answered), so the consumer keeps fetching from the new leader
(``Metadata.updateLatestMetadata`` @2.8.0 / @3.9.0-rc3; ``updatePartitionInfo`` @2.2.0). Before
2.2 every answer replaced the cached leader. The producer's side and MetadataTest's cases on
ProducerMetadata are in tests/test_producer_s24_kafka.py; here MetadataTest.testRejectOldMetadata
and testStaleMetadata @3.9.0-rc3 on ConsumerMetadata, and the consumer's cached leader by
release.
"""

from __future__ import annotations

import pytest

from kafkasim.core import errors as E
from kafkasim.core.messages import MetadataResponse
from kafkasim.runtime.clients.consumer_metadata import ConsumerMetadata
from kafkasim.runtime.clients.subscription_state import SubscriptionState
from kafkasim.runtime.cluster import Cluster

TP = ("t", 0)


def _row(epoch: int, leader: int = 1, isr=(1, 2, 3)):
    """A MetadataResponse partition row of TP."""
    return (TP[0], TP[1], E.NONE, leader, epoch, (1, 2, 3), tuple(isr))


def test_reject_old_metadata_on_consumer_metadata():
    """MetadataTest.testRejectOldMetadata on ConsumerMetadata: the first epoch is taken, an
    older one (empty ISR) rejected, the same one taken, an answer without the partition keeps
    the last seen epoch, the partition back with an older epoch is rejected."""
    md = ConsumerMetadata(SubscriptionState())
    assert md.update(10, [_row(100)], keep_newer_epoch=True) == frozenset()
    assert md.last_seen_leader_epoch(TP) == 100
    assert md.update(20, [_row(99, isr=())], keep_newer_epoch=True) == {TP}
    assert md.update(20, [_row(100, isr=())], keep_newer_epoch=True) == frozenset()
    assert md.update(20, [], keep_newer_epoch=True) == frozenset()
    assert md.last_seen_leader_epoch(TP) == 100
    assert md.update(30, [_row(99)], keep_newer_epoch=True) == {TP}
    assert md.last_successful_refresh_ms == 30


def test_stale_metadata_without_the_rule_is_taken():
    """Before KAFKA-7738 (the rule off): an older epoch is no news but nothing is refused."""
    md = ConsumerMetadata(SubscriptionState())
    md.update(1, [_row(10)])
    assert md.update(2, [_row(9)]) == frozenset()
    assert md.last_seen_leader_epoch(TP) == 10


def _consumer_after(version: str, rows):
    """A consumer of a ``version`` cluster assigned t-0, given MetadataResponses with ``rows``
    in turn (as its Metadata requests' answers); its cached (leader, leader epoch)."""
    c = Cluster(3, kafka_version=version, seed=1)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    consumer = c.consumer(group="g", name="c")
    consumer.assign("t", [0])
    for i, row in enumerate(rows):
        consumer._on_metadata(MetadataResponse(1000 + i, (1, 2, 3), 1, (row,)))
    return consumer.leaders[TP], consumer.leader_epochs[TP]


@pytest.mark.parametrize(("version", "cached"), [
    ("2.1", (1, 4)),          # every answer replaces the cached leader
    ("2.2", (2, 5)),          # KAFKA-7738: the older epoch's row is ignored
    ("3.9", (2, 5)),
    ("4.3", (2, 5)),
])
def test_a_stale_answer_does_not_send_the_consumer_back_to_the_old_leader(version, cached):
    """The consumer learnt leader 2 in epoch 5; a lagging broker then answers leader 1 in epoch
    4. From 2.2 the consumer keeps leader 2 (its fetches go on to the new leader); 2.1 takes the
    stale row and fetches from the deposed leader until it is told NOT_LEADER."""
    assert _consumer_after(version, [_row(5, leader=2), _row(4, leader=1)]) == cached
