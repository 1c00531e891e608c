"""kafka.server.ReplicaManager at 4.3.0, driven by Kafka's names: the fetch / produce / KIP-392
cases of core/src/test/scala/unit/kafka/server/ReplicaManagerTest.scala read at 4.3.0
(confluentinc mirror a9ce322153). In 4.x there is no ZooKeeper path: every case sets leaders and
followers with ``applyDelta`` (``createLeaderDelta`` / ``createFollowerDelta`` /
``topicsCreateDelta``), where tests/test_replica_manager_kafka.py ported the 3.7.0 cases through
``becomeLeaderOrFollower``. Each test names the Kafka test and the tag.

Adaptation to kafkasim. The broker is test_replica_manager_kafka's ``Broker`` (a
``kafkasim.core.fake.FakeContext``, broker 0, brokers 0-2 alive) at version 4.3; Kafka's
``applyDelta`` of one PartitionRecord is ``apply_partition_state(kraft=True)`` (``kdelta``).
Kafka's ``topicsCreateDelta(startId, isStartIdLeader)`` has replicas and ISR (startId,
startId + 1) and partition epoch 0; ``createLeaderDelta`` / ``createFollowerDelta`` have
partition epoch 0 at every leader epoch. Kafka's ``appendRecords`` helper is an acks=-1 produce;
``fetchPartitionAsFollower`` / ``fetchPartitionAsConsumer`` are ``Broker.fetch``; a consumer
fetch without ClientMetadata (Fetch v0-v10) is a FetchRequest whose ``rack_id`` is None. The
``testDelta*`` cases replay Kafka's TopicsDelta records on a KRaft image
(test_replica_manager_more_kafka's ``KRaftBroker``, at 4.3).

Besides ReplicaManagerTest: Partition.getLocalLog / DelayedFetch for a consumer at a replica
whose partition has no leader, DelayedProduce's Case A, and Partition.appendRecordsToLeader's
min-ISR check at 4.3 (each names the Kafka source it follows).
"""

from __future__ import annotations

import pytest
from test_replica_manager_kafka import (
    RACK_AWARE,
    TOPIC,
    TP,
    Broker,
    assert_follower_state_not_updated_if_log_read_fails,
)
from test_replica_manager_more_kafka import (
    FOO_UUID,
    LOCAL,
    NO_LEADER,
    OTHER,
    KRaftBroker,
    fetcher_of,
    partition_record,
    topics_change_delta,
    topics_create_delta,
    topics_delete_delta,
)

from kafkasim.control.kraft import records as R
from kafkasim.core import errors as E
from kafkasim.core.fetcher import FETCHING
from kafkasim.core.messages import FetchPartition, FetchRequest, PartitionState

V4 = "4.3"


class KBroker(Broker):
    """A 4.3 Broker whose leaders and followers come from KRaft deltas."""

    def __init__(self, version: str = V4, **kw) -> None:
        super().__init__(version, **kw)

    def kdelta(self, leader, epoch, isr, replicas=None, *, partition=0, partition_epoch=0,
               topic=TOPIC) -> str:
        """applyDelta of one PartitionRecord (ReplicaManagerTest.createLeaderDelta & co.)."""
        replicas = tuple(isr if replicas is None else replicas)
        st = PartitionState(topic, partition, -1, leader, epoch, tuple(isr), partition_epoch,
                            replicas)
        return self.rm.apply_partition_state(self, st, kraft=True)


# -- produce --------------------------------------------------------------------------------------
def test_clear_purgatory_on_becoming_follower_kraft():
    """ReplicaManagerTest.testClearPurgatoryOnBecomingFollower @4.3.0: an acks=-1 produce
    waiting at the leader (createLeaderDelta, replicas and ISR 0, 1) answers
    NOT_LEADER_OR_FOLLOWER once a delta makes broker 1 the leader at epoch 1."""
    b = KBroker()
    assert b.kdelta(0, 0, (0, 1)) == E.NONE
    corr = b.produce()
    assert b.produce_answer(corr) is None
    b.kdelta(1, 1, (0, 1))
    assert b.produce_answer(corr).partitions[0][2] == E.NOT_LEADER_OR_FOLLOWER
    assert not b.rm.delayed_produce


def test_receive_out_of_order_sequence_exception_with_log_start_offset_kraft():
    """ReplicaManagerTest.testReceiveOutOfOrderSequenceExceptionWithLogStartOffset @4.3.0:
    three idempotent batches (producer 234, epoch 5, sequences 0-2) are appended; sequence 13
    is refused OUT_OF_ORDER_SEQUENCE_NUMBER and the log start offset stays 0."""
    b = KBroker()
    b.kdelta(0, 0, (0, 1))
    for seq in range(3):
        b.produce(1, acks=1, seq=(234, 5, seq))
    assert b.part().log.log_start_offset == 0 and b.part().log.log_end_offset == 3
    corr = b.produce(1, seq=(234, 5, 13))
    assert b.produce_answer(corr).partitions[0][2] == E.OUT_OF_ORDER_SEQUENCE_NUMBER
    assert b.part().log.log_end_offset == 3


def test_illegal_required_acks_kraft():
    """ReplicaManagerTest.testIllegalRequiredAcks @4.3.0: requiredAcks 3 is
    INVALID_REQUIRED_ACKS, for a partition this broker does not even host."""
    b = KBroker()
    corr = b.produce(1, acks=3)
    assert b.produce_answer(corr).partitions[0][2] == "INVALID_REQUIRED_ACKS"
    assert TP not in b.rm.partitions


def test_append_records_to_leader():
    """ReplicaManagerTest.testAppendRecordsToLeader @4.3.0: an acks=1 append to foo-0 (led here,
    replicas and ISR 0) and to bar-0 (no such partition in the metadata): foo's record lands at
    offset 0 with no error, bar answers UNKNOWN_TOPIC_OR_PARTITION."""
    b = KBroker()
    b.metadata.partitions.pop(("bar", 0), None)
    b.kdelta(0, 0, (0,))
    corr = b.corr()
    from kafkasim.core.messages import ProduceRequest

    entries = ((TOPIC, 0, (1,), (10,), -1, -1, -1), ("bar", 0, (2,), (10,), -1, -1, -1))
    b.rm.append_records(b, "producer", ProduceRequest(corr, "producer", 1, 1000, entries))
    answer = {(t, p): (err, base) for t, p, err, base in b.produce_answer(corr).partitions}
    assert answer[TP] == (E.NONE, 0)
    assert answer[("bar", 0)][0] == E.UNKNOWN_TOPIC_OR_PARTITION
    assert b.part().log.log_end_offset == 1


# -- fetch ----------------------------------------------------------------------------------------
def test_fetch_beyond_high_watermark_kraft():
    """ReplicaManagerTest.testFetchBeyondHighWatermark @4.3.0: leader of replicas 0-2 with two
    records and HW 0; follower 1 fetching offset 1 gets records, a consumer fetching offset 1
    gets no error and no records."""
    b = KBroker()
    b.kdelta(0, 0, (0, 1, 2))
    for _ in range(2):
        b.produce(1)
    follower = b.fetch_data(b.fetch(1, 1))
    assert follower.error == E.NONE and list(follower.records.ids)
    consumer = b.fetch_data(b.fetch(-1, 1))
    assert consumer.error == E.NONE and not list(consumer.records.ids)


def test_follower_state_not_updated_if_log_read_fails_kraft():
    """ReplicaManagerTest.testFollowerStateNotUpdatedIfLogReadFails @4.3.0 (topicsCreateDelta at
    leader epoch 5): the follower's state starts unknown (-1, -1); a good fetch at offset 0
    sets it to (0, 0); a fetch at epoch 4 is FENCED_LEADER_EPOCH and one with a diverging
    last fetched epoch answers the diverging epoch, neither moving the follower's state."""
    b = KBroker()
    b.kdelta(0, 5, (0, 1))
    assert_follower_state_not_updated_if_log_read_fails(b)


def test_fetch_messages_when_not_follower_for_one_partition_kraft():
    """ReplicaManagerTest.testFetchMessagesWhenNotFollowerForOnePartition @4.3.0: replica 1
    fetches foo-0 (replicas 0, 1) and foo-1 (replicas 0, 2) at leader epoch 0 with MinBytes 0;
    foo-0 answers records and the HW before the fetch (0) then moves to 1; foo-1 answers
    UNKNOWN_LEADER_EPOCH and its HW stays 0."""
    b = KBroker()
    b.kdelta(0, 0, (0, 1), partition=0)
    b.kdelta(0, 0, (0, 2), partition=1)
    for _ in range(2):
        b.produce(1, partitions=(0, 1))
    corr = b.fetch(1, 1, epoch=0, partitions=(0, 1), max_wait_ms=1000, min_bytes=0)
    tp0, tp1 = b.fetch_data(corr, 0), b.fetch_data(corr, 1)
    assert (tp0.error, tp0.high_watermark) == (E.NONE, 0) and list(tp0.records.ids)
    assert tp1.error == E.UNKNOWN_LEADER_EPOCH
    assert b.part(0).log.high_watermark == 1
    assert b.part(1).log.high_watermark == 0


def test_become_follower_when_leader_is_unchanged_but_missed_leader_update_kraft():
    """ReplicaManagerTest.testBecomeFollowerWhenLeaderIsUnchangedButMissedLeaderUpdate @4.3.0:
    a follower of broker 1 at epoch 1 (topicsCreateDelta(0, isStartIdLeader = false)) whose
    log ends at 10 gets epoch 3 with the same leader: its fetcher restarts at epoch 3, fetching
    from its log end with its last fetched epoch (no truncation first: expectTruncation =
    false), as in 3.7.0 through becomeLeaderOrFollower."""
    b = KBroker()
    b.kdelta(1, 1, (0, 1))
    log = b.part().log
    log.append_as_leader(list(range(10)), [10] * 10, 1, 0)   # (as replicated: localLogOffset 10)
    log.update_high_watermark(5)
    b.kdelta(1, 3, (0, 1))
    (key,) = b.fetchers
    st = b.fetchers[key].partitions[TP]
    assert key[0] == 1 and st.current_leader_epoch == 3 and st.state == FETCHING
    assert (st.fetch_offset, st.last_fetched_epoch) == (10, 1)


# -- fetch from follower (KIP-392) ----------------------------------------------------------------
def _rack_broker(**kw) -> KBroker:
    return KBroker(config={"replica.selector.class": RACK_AWARE},
                   racks={0: "rack-a", 1: "rack-b"}, **kw)


def test_preferred_replica_as_follower_kraft():
    """ReplicaManagerTest.testPreferredReplicaAsFollower @4.3.0 and
    testFetchFromFollowerShouldNotRunPreferLeaderSelect @4.3.0 (createFollowerDelta: follower
    0 in rack-b, leader 1 in rack-a, epoch 1): a follower serves a consumer in the leader's rack
    itself and names no preferred read replica (only a leader computes one)."""
    b = KBroker(config={"replica.selector.class": RACK_AWARE}, racks={1: "rack-a", 0: "rack-b"})
    b.kdelta(1, 1, (0, 1))
    pd = b.fetch_data(b.fetch(-1, 0, rack="rack-a"))
    assert pd.error == E.NONE and pd.preferred_read_replica == -1


def test_preferred_replica_as_leader_kraft():
    """ReplicaManagerTest.testPreferredReplicaAsLeader @4.3.0: leader 0 (rack-b) with follower 1
    in rack-a, which has not fetched yet (not caught up); a consumer in rack-a is served by the
    leader, which names no preferred read replica."""
    b = KBroker(config={"replica.selector.class": RACK_AWARE}, racks={1: "rack-a", 0: "rack-b"})
    b.kdelta(0, 1, (0, 1))
    pd = b.fetch_data(b.fetch(-1, 0, epoch=1, rack="rack-a"))
    assert pd.error == E.NONE and pd.preferred_read_replica == -1


def test_preferred_replica_as_leader_when_same_rack_follower_is_out_of_isr_kraft():
    """ReplicaManagerTest.testPreferredReplicaAsLeaderWhenSameRackFollowerIsOutOfIsr @4.3.0:
    the follower in the consumer's rack (rack-b) is not in the ISR (createLeaderDelta, ISR 0 of
    replicas 0, 1) though it has fetched; the leader serves the fetch and names no replica."""
    b = _rack_broker()
    b.kdelta(0, 1, (0,), (0, 1))
    b.produce(1)
    b.fetch(1, 0, epoch=1)
    assert b.part().in_sync_replica_ids() == {0}
    pd = b.fetch_data(b.fetch(-1, 0, rack="rack-b"))
    assert pd.error == E.NONE and pd.preferred_read_replica == -1


def test_fetch_should_return_immediately_when_preferred_read_replica_is_defined_kraft():
    """ReplicaManagerTest.testFetchShouldReturnImmediatelyWhenPreferredReadReplicaIsDefined
    @4.3.0 (topicsCreateDelta(0, isStartIdLeader = true), epoch 1): once follower 1 (rack-b)
    has fetched, a consumer in rack-b with MinBytes 1 and MaxWaitMs 5000 is answered at once
    naming replica 1, and nothing is parked."""
    b = _rack_broker()
    b.kdelta(0, 1, (0, 1))
    b.fetch(1, 0, epoch=1)
    corr = b.fetch(-1, 0, rack="rack-b", min_bytes=1, max_wait_ms=5000)
    assert not b.rm.delayed_fetch
    assert b.fetch_data(corr).preferred_read_replica == 1


def test_follower_fetch_with_default_selector_no_forced_hw_propagation_kraft():
    """ReplicaManagerTest.testFollowerFetchWithDefaultSelectorNoForcedHwPropagation @4.3.0: the
    follower's fetch at the LEO moves the HW to 2 but answers the HW before it (0); its next
    fetch, with nothing new, parks, and the HW (2) reaches it when MaxWaitMs expires."""
    b = KBroker()
    b.kdelta(0, 1, (0, 1))
    produce = b.produce(2)
    assert b.fetch_data(b.fetch(1, 2, epoch=1, min_bytes=0)).high_watermark == 0
    assert b.produce_answer(produce).partitions[0][2] == E.NONE
    corr = b.fetch(1, 2, epoch=1, min_bytes=1000, max_wait_ms=1000)
    assert b.fetch_answer(corr) is None
    (df_id,) = b.rm.delayed_fetch
    b.rm.on_fetch_timeout(b, df_id)
    assert b.fetch_data(corr).high_watermark == 2


def test_fetch_follower_not_allowed_for_older_clients_kraft():
    """ReplicaManagerTest.testFetchFollowerNotAllowedForOlderClients @4.3.0, its ClientMetadata
    half: a follower (createFollowerDelta, leader 1, epoch 0) serves a consumer sending
    ClientMetadata and CurrentLeaderEpoch 0 with no error."""
    b = KBroker()
    b.kdelta(1, 0, (0, 1))
    assert b.fetch_data(b.fetch(-1, 0, epoch=0, rack="rack-a")).error == E.NONE


@pytest.mark.parametrize("epoch", [1, -1])
def test_fetch_from_leader_always_allowed_kraft(epoch):
    """ReplicaManagerTest.testFetchFromLeaderAlwaysAllowed @4.3.0: a consumer with
    ClientMetadata reads the leader (epoch 1) with or without a CurrentLeaderEpoch."""
    b = KBroker()
    b.kdelta(0, 1, (0, 1))
    assert b.fetch_data(b.fetch(-1, 0, epoch=epoch, rack="")).error == E.NONE


def test_become_follower_while_new_client_fetch_in_purgatory_kraft():
    """ReplicaManagerTest.testBecomeFollowerWhileNewClientFetchInPurgatory @4.3.0: a consumer
    fetch (ClientMetadata, CurrentLeaderEpoch 1) parked at the leader answers
    FENCED_LEADER_EPOCH when a delta makes broker 1 the leader at epoch 2."""
    b = KBroker()
    b.kdelta(0, 1, (0, 1))
    corr = b.fetch(-1, 0, epoch=1, max_wait_ms=10, rack="rack-a")
    assert b.fetch_answer(corr) is None
    b.kdelta(1, 2, (0, 1))
    assert b.fetch_data(corr).error == E.FENCED_LEADER_EPOCH


# -- applyDelta through a KRaft image (4.3.0) -----------------------------------------------------
def _kraft(is_start_id_leader: bool) -> KRaftBroker:
    """topicsCreateDelta(localId 0, isStartIdLeader) applied to a 4.3 broker's image."""
    b = KRaftBroker(V4)
    b.apply_delta(*topics_create_delta(LOCAL, is_start_id_leader))
    part = b.part()
    assert part.is_leader is is_start_id_leader and part.get_leader_epoch() == 0
    return b


def test_delta_from_leader_to_follower_at_4_3():
    """ReplicaManagerTest.testDeltaFromLeaderToFollower @4.3.0: the leader of epoch 0 (ISR 0,
    1, no fetcher) acknowledges an acks=-1 produce once follower 1 fetched it; a
    topicsChangeDelta naming broker 1 leader (epoch 1) makes it a follower that refuses
    produces (NOT_LEADER_OR_FOLLOWER) and fetches from broker 1."""
    b = _kraft(True)
    assert b.part().in_sync_replica_ids() == {LOCAL, OTHER} and fetcher_of(b) is None
    corr = b.produce(3)
    b.fetch(OTHER, 3)
    assert b.produce_answer(corr).partitions[0][2] == E.NONE
    b.apply_delta(*topics_change_delta(LOCAL, False))
    assert b.produce_answer(b.produce(3)).partitions[0][2] == E.NOT_LEADER_OR_FOLLOWER
    assert not b.part().is_leader and b.part().get_leader_epoch() == 1
    assert fetcher_of(b)[0] == OTHER


def test_delta_from_follower_to_leader_at_4_3():
    """ReplicaManagerTest.testDeltaFromFollowerToLeader @4.3.0: a follower of epoch 0 refuses
    a produce; made leader (epoch 1) it stops its fetcher and acknowledges an acks=-1 produce
    once the follower fetched it."""
    b = _kraft(False)
    assert fetcher_of(b)[0] == OTHER
    assert b.produce_answer(b.produce(3)).partitions[0][2] == E.NOT_LEADER_OR_FOLLOWER
    b.apply_delta(*topics_change_delta(LOCAL, True))
    corr = b.produce(3)
    b.fetch(OTHER, 3)
    assert b.produce_answer(corr).partitions[0][2] == E.NONE
    part = b.part()
    assert part.is_leader and part.get_leader_epoch() == 1 and fetcher_of(b) is None
    assert part.in_sync_replica_ids() == {LOCAL, OTHER}


def test_delta_follower_with_no_change_at_4_3():
    """ReplicaManagerTest.testDeltaFollowerWithNoChange @4.3.0: the same PartitionRecord
    applied again leaves the follower (epoch 0) fetching from the same leader."""
    b = _kraft(False)
    part, (leader, state) = b.part(), fetcher_of(b)
    b.apply_delta(*topics_create_delta(LOCAL, False)[1:])
    assert b.part() is part and not part.is_leader and part.get_leader_epoch() == 0
    assert fetcher_of(b)[0] == leader and fetcher_of(b)[1] is state


@pytest.mark.parametrize("is_leader", [False, True])
def test_delta_to_not_replica_at_4_3(is_leader):
    """ReplicaManagerTest.testDeltaFollowerToNotReplica / testDeltaLeaderToNotReplica @4.3.0: a
    topicsChangeDelta moving the replicas to (1, 2) removes the replica: no hosted partition,
    no fetcher, no log."""
    b = _kraft(is_leader)
    b.apply_delta(*topics_change_delta(OTHER, True))
    assert TP not in b.rm.partitions and fetcher_of(b) is None and TP not in b.logs


def test_delta_to_follower_completes_produce_at_4_3():
    """ReplicaManagerTest.testDeltaToFollowerCompletesProduce @4.3.0: an acks=-1 produce parked
    at the leader of epoch 0 answers NOT_LEADER_OR_FOLLOWER when topicsChangeDelta makes it a
    follower of epoch 1."""
    b = _kraft(True)
    corr = b.produce(3)
    assert b.produce_answer(corr) is None
    b.apply_delta(*topics_change_delta(LOCAL, False))
    assert not b.part().is_leader and b.part().get_leader_epoch() == 1
    assert b.produce_answer(corr).partitions[0][2] == E.NOT_LEADER_OR_FOLLOWER


def test_delta_to_follower_completes_fetch_at_4_3():
    """ReplicaManagerTest.testDeltaToFollowerCompletesFetch @4.3.0: a follower fetch parked at
    the leader (MinBytes never reached) answers NOT_LEADER_OR_FOLLOWER when the delta makes
    the broker a follower of epoch 1."""
    b = _kraft(True)
    corr = b.fetch(OTHER, 0, min_bytes=1 << 30, max_wait_ms=1000)
    assert b.fetch_answer(corr) is None
    b.apply_delta(*topics_change_delta(LOCAL, False))
    assert b.part().get_leader_epoch() == 1
    assert b.fetch_data(corr).error == E.NOT_LEADER_OR_FOLLOWER


def test_fetcher_are_not_restarted_if_leader_epoch_is_not_bumped():
    """ReplicaManagerTest.testFetcherAreNotRestartedIfLeaderEpochIsNotBumped @4.3.0 (the
    3.7.0 ...WithKRaftPath): a PartitionChangeRecord adding replica 2 bumps the partition epoch
    (1) but not the leader epoch (0), and the fetcher is kept; one naming broker 2 leader bumps
    both (1, 2) and restarts the fetcher at broker 2, epoch 1, offset 0."""
    b = KRaftBroker(V4)
    b.apply_delta(R.TopicRecord(TOPIC, FOO_UUID), partition_record(LOCAL, LOCAL + 1))
    part = b.part()
    assert (part.is_leader, part.get_leader_epoch(), part.get_partition_epoch()) == (False, 0, 0)
    leader, state = fetcher_of(b)
    assert (leader, state.current_leader_epoch, state.fetch_offset) == (1, 0, 0)
    b.apply_delta(R.PartitionChangeRecord(0, FOO_UUID, isr=(0, 1), replicas=(0, 1, 2)))
    assert (part.is_leader, part.get_leader_epoch(), part.get_partition_epoch()) == (False, 0, 1)
    assert fetcher_of(b)[1] is state
    b.apply_delta(R.PartitionChangeRecord(0, FOO_UUID, isr=(0, 1, 2), leader=2,
                                          replicas=(0, 1, 2)))
    assert (part.is_leader, part.get_leader_epoch(), part.get_partition_epoch()) == (False, 1, 2)
    leader, state = fetcher_of(b)
    assert (leader, state.current_leader_epoch, state.fetch_offset) == (2, 1, 0)


def test_replicas_are_stopped_while_in_controlled_shutdown():
    """ReplicaManagerTest.testReplicasAreStoppedWhileInControlledShutdown @4.3.0 (the 3.7.0
    ...WithKRaft): foo-0 a follower in the ISR, foo-1 the leader alone in its ISR, foo-2 a
    follower out of the ISR. After beginControlledShutdown, the controller's records (foo-0's
    ISR shrinks to its leader, foo-1 loses its leader) make foo-0 and foo-1 followers of
    leader epoch 1 and partition epoch 1 with their fetchers stopped; foo-2 stays at (0, 0)
    and keeps fetching."""
    b = KRaftBroker(V4)
    replicas = (LOCAL, LOCAL + 1)
    b.apply_delta(
        R.TopicRecord(TOPIC, FOO_UUID),
        R.PartitionRecord(0, FOO_UUID, replicas, replicas, leader=LOCAL + 1),
        R.PartitionRecord(1, FOO_UUID, replicas, (LOCAL,), leader=LOCAL),
        R.PartitionRecord(2, FOO_UUID, replicas, (LOCAL + 1,), leader=LOCAL + 1),
    )
    assert [b.part(p).is_leader for p in range(3)] == [False, True, False]
    b.rm.begin_controlled_shutdown()
    b.apply_delta(
        R.PartitionChangeRecord(0, FOO_UUID, isr=(LOCAL + 1,), leader=LOCAL + 1,
                                replicas=replicas),
        R.PartitionChangeRecord(1, FOO_UUID, isr=(LOCAL,), leader=NO_LEADER, replicas=replicas),
    )
    for p, epochs in ((0, (1, 1)), (1, (1, 1)), (2, (0, 0))):
        part = b.part(p)
        assert not part.is_leader
        assert (part.get_leader_epoch(), part.get_partition_epoch()) == epochs
    assert fetcher_of(b, (TOPIC, 0)) is None and fetcher_of(b, (TOPIC, 1)) is None
    assert fetcher_of(b, (TOPIC, 2)) is not None


@pytest.mark.parametrize("is_leader", [False, True])
def test_delta_to_removed_topic_at_4_3(is_leader):
    """ReplicaManagerTest.testDeltaFollowerRemovedTopic / testDeltaLeaderToRemovedTopic @4.3.0:
    a RemoveTopicRecord (topicsDeleteDelta) lists the topic's local replicas in
    TopicsDelta.localChanges' deletes, and applyDelta stops them with deleteLocalLog = true:
    no hosted partition, no fetcher, no log; the metadata cache no longer knows the partition.
    (kafkasim published no change for a deleted topic before: the replica stayed.)"""
    b = _kraft(is_leader)
    b.apply_delta(*topics_delete_delta())
    assert TP not in b.rm.partitions and fetcher_of(b) is None and TP not in b.logs
    assert TP not in b.metadata.partitions


# -- a consumer without ClientMetadata (Fetch v0-v10) --------------------------------------------
def _old_client_fetch(b: Broker, epoch: int = -1, max_wait_ms: int = 0) -> int:
    """fetchPartitionAsConsumer without clientMetadata: a FetchRequest whose rack_id is None."""
    corr = b.corr()
    fp = FetchPartition(TOPIC, 0, 0, epoch, -1, 0, 100)
    b.rm.fetch_messages(b, "consumer", FetchRequest(corr, -1, max_wait_ms, 1, 1 << 20, (fp,),
                                                    rack_id=None))
    return corr


@pytest.mark.parametrize("version", ["3.9", V4])
def test_fetch_follower_not_allowed_for_older_clients(version):
    """ReplicaManagerTest.testFetchFollowerNotAllowedForOlderClients @4.3.0 / @3.9.0: at a
    follower (createFollowerDelta: leader 1, epoch 0) a consumer fetch with ClientMetadata
    (v11+) reads with no error; one without (an older client) is NOT_LEADER_OR_FOLLOWER
    (FetchParams.fetchOnlyFromLeader)."""
    b = KBroker(version)
    b.kdelta(1, 0, (0, 1))
    assert b.fetch_data(b.fetch(-1, 0, epoch=0, rack="")).error == E.NONE
    assert b.fetch_data(_old_client_fetch(b, epoch=0)).error == E.NOT_LEADER_OR_FOLLOWER


def test_fetch_follower_not_allowed_for_older_clients_before_kip_392():
    """ReplicaManager.fetchMessages @2.3.0: no fetch from a follower at all (KIP-392 came in
    2.4): a consumer fetch at a follower is NOT_LEADER_FOR_PARTITION with or without a rack."""
    b = Broker("2.3")
    b.lair(1, 0, (0, 1))
    assert b.fetch_data(b.fetch(-1, 0, epoch=0, rack="rack-a")).error == E.NOT_LEADER_FOR_PARTITION
    assert b.fetch_data(_old_client_fetch(b, epoch=0)).error == E.NOT_LEADER_FOR_PARTITION


@pytest.mark.parametrize("version", ["3.9", V4])
def test_become_follower_while_old_client_fetch_in_purgatory(version):
    """ReplicaManagerTest.testBecomeFollowerWhileOldClientFetchInPurgatory @4.3.0 / @3.9.0: a
    consumer fetch without ClientMetadata nor CurrentLeaderEpoch parked at the leader (epoch
    0, replicas and ISR 0) answers NOT_LEADER_OR_FOLLOWER at once when a delta makes the broker
    a follower of broker 1 at epoch 2 (DelayedFetch Case A: fetchOnlyFromLeader)."""
    b = KBroker(version)
    b.kdelta(0, 0, (0,))
    corr = _old_client_fetch(b, max_wait_ms=10)
    assert b.fetch_answer(corr) is None
    b.kdelta(1, 2, (0, 1))
    assert b.fetch_data(corr).error == E.NOT_LEADER_OR_FOLLOWER
    assert not b.rm.delayed_fetch



# -- a consumer at a follower whose partition has no leader --------------------------------------
def _follower_without_leader(version: str = V4) -> KBroker:
    """A follower of broker 1 (epoch 1) holding records 0-2 with HW 2, then a delta with no
    leader (NO_LEADER, epoch 2): the partition stays hosted, its log kept."""
    b = KBroker(version)
    b.kdelta(1, 1, (0, 1))
    log = b.part().log
    log.append_as_leader([7, 8, 9], [10] * 3, 1, 0)   # (as replicated from leader 1)
    log.update_high_watermark(2)
    b.kdelta(-1, 2, (0,), (0, 1))
    assert not b.part().is_leader and b.part().leader_id == -1
    return b


@pytest.mark.parametrize("version", ["3.9", V4])
def test_consumer_reads_a_follower_whose_partition_has_no_leader(version):
    """Partition.getLocalLog(requireLeader = false) @4.3.0 (Partition.scala:384-401; 2.4.0
    Partition.scala:361-381 the same): a consumer fetch with ClientMetadata at a non-leader
    replica checks the CurrentLeaderEpoch, then reads its log whatever the leader is, NO_LEADER
    included: records below the replica's HW. Without ClientMetadata it is
    NOT_LEADER_OR_FOLLOWER (fetchOnlyFromLeader)."""
    b = _follower_without_leader(version)
    pd = b.fetch_data(b.fetch(-1, 0, epoch=2, rack="rack-a"))
    assert (pd.error, list(pd.records.ids), pd.high_watermark) == (E.NONE, [7, 8], 2)
    assert b.fetch_data(b.fetch(-1, 0, epoch=1, rack="rack-a")).error == E.FENCED_LEADER_EPOCH
    assert b.fetch_data(_old_client_fetch(b, epoch=2)).error == b.not_leader_error()


def test_consumer_fetch_parked_at_a_follower_stays_when_its_leader_goes():
    """DelayedFetch.tryComplete @4.3.0 (Case A/B: fetchOffsetSnapshot(epoch, fetchOnlyFromLeader
    = false) does not throw at a non-leader replica): a consumer fetch with ClientMetadata parked
    at a follower (nothing above its HW) is not completed when the partition loses its leader;
    it is answered at MaxWaitMs, with no error."""
    b = KBroker()
    b.kdelta(1, 1, (0, 1))
    corr = b.fetch(-1, 0, rack="rack-a", max_wait_ms=500)
    assert b.fetch_answer(corr) is None
    (df_id,) = b.rm.delayed_fetch
    b.kdelta(-1, 1, (0,), (0, 1), partition_epoch=1)
    assert not b.rm.try_complete_fetch(b, df_id)
    b.rm.on_fetch_timeout(b, df_id)
    assert b.fetch_data(corr).error == E.NONE


# -- DelayedProduce Case A: the partition left this broker ---------------------------------------
def test_delayed_produce_of_a_deleted_topic_answers_unknown_topic_or_partition():
    """DelayedProduce.tryComplete Case A @4.3.0 (server DelayedProduce.java; ReplicaManager.
    getPartitionOrError): an acks=-1 produce parked at the leader when its topic is deleted
    (RemoveTopicRecord: BrokerMetadataPublisher sets the metadata cache's image, then applyDelta
    stops the replica) answers UNKNOWN_TOPIC_OR_PARTITION, the metadata cache no longer knowing
    the partition; a replica moved away (topicsChangeDelta to replicas 1, 2) answers
    NOT_LEADER_OR_FOLLOWER, as the cache still knows it."""
    b = _kraft(True)
    corr = b.produce(3)
    assert b.produce_answer(corr) is None
    b.apply_delta(*topics_delete_delta())
    assert b.produce_answer(corr).partitions[0][2] == E.UNKNOWN_TOPIC_OR_PARTITION
    b = _kraft(True)
    corr = b.produce(3)
    b.apply_delta(*topics_change_delta(OTHER, True))
    assert b.produce_answer(corr).partitions[0][2] == E.NOT_LEADER_OR_FOLLOWER


# -- acks=-1 and min.insync.replicas at 4.3 (Partition.appendRecordsToLeader) -------------------
def test_acks_all_below_min_isr_is_not_enough_replicas_at_4_3():
    """Partition.appendRecordsToLeader @4.3.0 (Partition.scala:1229-1238): a leader whose ISR
    (0) is below min.insync.replicas 2 (effective min ISR min(2, 3 replicas)) refuses an acks=-1
    batch NOT_ENOUGH_REPLICAS without appending it; acks=1 is appended."""
    b = KBroker(topic_config={"min.insync.replicas": 2})
    b.kdelta(0, 1, (0,), (0, 1, 2))
    assert b.produce_answer(b.produce(2)).partitions == ((TOPIC, 0, E.NOT_ENOUGH_REPLICAS, -1),)
    assert b.part().log.log_end_offset == 0
    assert b.produce_answer(b.produce(2, acks=1)).partitions == ((TOPIC, 0, E.NONE, 0),)


def test_effective_min_isr_is_capped_at_the_replication_factor_at_4_3():
    """Partition.effectiveMinIsr @4.3.0 (Partition.scala:246-248): min.insync.replicas 3 on a
    partition of two replicas counts as 2, so a full ISR takes an acks=-1 batch, acknowledged
    once the follower has it."""
    b = KBroker(topic_config={"min.insync.replicas": 3})
    b.kdelta(0, 1, (0, 1))
    corr = b.produce(1)
    b.fetch(1, 1, epoch=1)
    assert b.produce_answer(corr).partitions[0][2] == E.NONE


def test_produce_to_a_follower_is_not_leader_or_follower_at_4_3():
    """ReplicaManager.appendRecords -> Partition.appendRecordsToLeader @4.3.0: a follower
    (createFollowerDelta, leader 1) answers NOT_LEADER_OR_FOLLOWER for acks -1 and 1 alike and
    appends nothing."""
    b = KBroker()
    b.kdelta(1, 1, (0, 1))
    for acks in (-1, 1):
        assert b.produce_answer(b.produce(1, acks=acks)).partitions[0][2] == \
            E.NOT_LEADER_OR_FOLLOWER
    assert b.part().log.log_end_offset == 0


@pytest.mark.parametrize(("version", "error"), [
    ("2.3", E.UNKNOWN_TOPIC_OR_PARTITION),
    ("2.4", E.NOT_LEADER_FOR_PARTITION),
    ("3.9", E.NOT_LEADER_OR_FOLLOWER),
])
def test_delayed_produce_case_a_error_by_version(version, error):
    """DelayedProduce.tryComplete Case A, a partition this broker no longer hosts while its
    metadata cache still knows it: UNKNOWN_TOPIC_OR_PARTITION at 2.3.0 (DelayedProduce.scala:
    96-98); getPartitionOrError's not-leader error from 2.4.0 (KAFKA-9198, commit 876eada),
    NOT_LEADER_FOR_PARTITION until KAFKA-10223 renamed it (2.6). As Kafka's DelayedFetchTest
    mocks getPartitionOrException, the partition is taken out of the partition map and the
    purgatory is checked."""
    b = Broker(version)
    b.lair(0, 1, (0, 1))
    corr = b.produce(1)
    assert b.produce_answer(corr) is None
    del b.rm.partitions[TP]
    b.rm.try_complete_produces(b, TP)
    assert b.produce_answer(corr).partitions[0][2] == error
