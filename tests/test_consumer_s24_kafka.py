"""The consumer's Metadata requests and auto topic creation (KIP-361), failed fetch answers in
line, and more replication cases of the consumer's fetcher, ported from Kafka's tests.

Ported (each test names its Kafka test and tag):

- ConsumerMetadataTest @3.9.0-rc3: testUserAssignment, testNormalSubscription (the request's
  topics and allowAutoTopicCreation).
- ConsumerTopicCreationTest @3.9.0-rc3 (ZooKeeper, broker x consumer flags) and @4.3.0 (KRaft,
  the classic consumer's cases), and KafkaConsumer @2.2.0 (its Metadata always allowed
  creation): a subscription to a missing topic creates it only when both allow it.
- FetchCollector.collectFetch @3.9.0-rc3 / FetcherTest.testCompletedFetchRemoval @2.8.0 (its
  out-of-range part): a failed answer stays in line; an unexpected error is thrown even with
  records collected (they are lost), an OffsetOutOfRangeException waits for the next poll.
- KIP-320 at 2.8.0 / 3.9.0-rc3 / 4.3.0: FetcherTest / OffsetFetcherTest
  testOffsetValidationWithGivenEpochOffset's five cases and its valid case;
  SubscriptionStateTest testTruncationDetectionWith/WithoutResetPolicy at cluster level (an
  unclean election under a consumer); testEpochSetInFetchRequest,
  testSubscriptionPositionUpdatedWithEpoch, testLeaderEpochInConsumerRecord.
- KIP-392 at 2.8.0 / 3.9.0-rc3 / 4.3.0: testPreferredReadReplica, ...OffsetError,
  testFetchErrorShouldClearPreferredReadReplica, testFetchDisconnectedShouldClear
  PreferredReadReplica (KAFKA-14379, 3.4+).
- Out of range at 2.8.0 / 3.9.0-rc3 / 4.3.0: testFetchOffsetOutOfRange,
  testStaleOutOfRangeError, testFetchOffsetOutOfRangeException, testFetchedRecordsAfterSeek,
  testSeekBeforeException.
- SubscriptionStateTest @4.3.0: testIsFetchableOnManualAssignment,
  testFetchablePartitionsPerformsCheapChecksFirst.
- ListOffsets isolation level: FetcherTest.testListOffsetSend{ReadCommitted,ReadUncommitted}
  @2.8.0 (OffsetFetcherTest @3.9.0-rc3 / @4.3.0).
- KafkaConsumerTest @3.9.0-rc3: testSubscription (without ``subscription()``),
  testSubscriptionOnEmptyTopic, testSubscriptionOnNullTopic, testAssignOnEmptyTopicInPartition.

At 4.3.0 the FetcherTest cases are FetchRequestManagerTest's (the same assertions for the
classic consumer's Fetcher). Kafka's MockClient answers are scripted: handed to the consumer
outside a poll (``Scripted`` / ``At`` of test_consumer_fetcher_kafka and
test_consumer_versions_kafka) or inside one (``_answer_in_poll``, when the order of answers
within a poll matters).

Not ported: pattern and broker-regex subscriptions (every topic or topic ids asked for),
transient topics (offsetsForTimes), groupSubscribe and the rebalance states (kafkasim models no
group protocol: a subscribing consumer is its group's only member), KIP-951 leader updates
(testValidPartitionLeadershipUpdate), corrupt records (testCompletedFetchRemoval's tp3),
ApiVersions (testOffsetValidationSkippedForOldResponse).
"""

from __future__ import annotations

import pytest

from kafkasim.core.errors import IllegalStateException
from kafkasim.core.messages import (
    FetchRequest,
    FetchResponse,
    ListOffsetsRequest,
    MetadataRequest,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)
from kafkasim.runtime.clients.consumer import LogTruncationException, OffsetOutOfRangeException
from kafkasim.runtime.clients.consumer_metadata import ConsumerMetadata
from kafkasim.runtime.clients.subscription_state import (
    FetchPosition,
    LeaderAndEpoch,
    OffsetResetStrategy,
    SubscriptionState,
)
from kafkasim.runtime.cluster import Cluster


def _cluster(version: str = "3.9", mode: str | None = None, brokers: int = 1,
             **config) -> Cluster:
    conf = {k.replace("_", "."): v for k, v in config.items()}
    c = Cluster(brokers, seed=1, kafka_version=version, metadata_mode=mode, latency_ms=1,
                jitter_ms=0, config=conf or None)
    return c


# -- ConsumerMetadataTest ------------------------------------------------------------------------
def test_user_assignment():
    """ConsumerMetadataTest.testUserAssignment @3.9.0-rc3: after assignFromUser the Metadata
    request names the assigned partitions' topics, and only those of the latest assignment;
    allowAutoTopicCreation is what the ConsumerMetadata was built with (false there)."""
    subscription = SubscriptionState()
    metadata = ConsumerMetadata(subscription, False, 50000)
    subscription.assign_from_user([("foo", 0), ("bar", 0)])
    builder = metadata.new_metadata_request_builder()
    assert set(builder.topics) == {"foo", "bar"}
    assert builder.allow_auto_topic_creation is False
    assert metadata.allow_auto_topic_creation() is False
    subscription.assign_from_user([("baz", 0)])
    assert set(metadata.new_metadata_request_builder().topics) == {"baz"}


def test_normal_subscription():
    """ConsumerMetadataTest.testNormalSubscription @3.9.0-rc3 (the consumer's own
    subscription): the request names the topics subscribed to, none of them assigned yet."""
    subscription = SubscriptionState()
    metadata = ConsumerMetadata(subscription, True, 50000)
    subscription.subscribe(["foo", "bar"])
    request = metadata.new_metadata_request_builder().build(7)
    assert isinstance(request, MetadataRequest)
    assert (request.correlation_id, set(request.topics)) == (7, {"foo", "bar"})
    assert request.allow_auto_topic_creation is True
    assert subscription.assigned_partitions_list() == []


def test_metadata_request_builder_after_unsubscribe():
    """(new) SubscriptionState.unsubscribe @3.9.0-rc3 clears the subscription: nothing left
    for the consumer's Metadata requests to name."""
    subscription = SubscriptionState()
    metadata = ConsumerMetadata(subscription)
    subscription.subscribe(["foo"])
    subscription.unsubscribe()
    assert metadata.new_metadata_request_builder().topics == ()


# -- ConsumerTopicCreationTest ------------------------------------------------------------------
@pytest.mark.parametrize("broker_allows", [True, False])
@pytest.mark.parametrize("consumer_allows", [True, False])
@pytest.mark.parametrize("version,mode", [("2.3", None), ("3.9", None), ("4.3", None)])
def test_auto_topic_creation(version, mode, broker_allows, consumer_allows):
    """ConsumerTopicCreationTest.testAutoTopicCreation @3.9.0-rc3 / @4.3.0 (classic consumer):
    one broker, topic-1 created with one record; the consumer subscribes to topic-1 and
    topic-2 (missing) and polls until it has consumed the record; topic-2 then exists only if
    the broker's auto.create.topics.enable and the consumer's allow.auto.create.topics are
    both true."""
    c = _cluster(version, mode, auto_create_topics_enable=broker_allows)
    c.create_topic("topic-1", 1, 1)
    c.run(500)
    c.producer("p").send("topic-1", "value", partition=0)
    c.run(500)
    cons = c.consumer("my-test", auto_offset_reset="earliest", metadata_max_age_ms=100,
                      allow_auto_create_topics=consumer_allows)
    cons.subscribe(["topic-1", "topic-2"])
    consumed = []
    for _ in range(20):
        consumed += cons.poll(100)
        if consumed:
            break
    assert [r.value for r in consumed] == ["value"]
    created = "topic-2" in c.topics.configs
    assert created == (broker_allows and consumer_allows)
    if created:   # the next polls assign it too (the group's only member)
        for _ in range(10):
            cons.poll(100)
        assert ("topic-2", 0) in cons.assignment


@pytest.mark.parametrize("broker_allows", [True, False])
@pytest.mark.parametrize("consumer_allows", [True, False])
def test_classic_consumer_topic_creation_kraft(broker_allows, consumer_allows):
    """ConsumerTopicCreationTest.testClassicConsumerTopicCreationIfConsumer{Allow,Disallow}
    ToCreateTopic @4.3.0 (KRaft): subscribe to a missing topic, one poll of 1000 ms; the topic
    exists afterwards only when both flags allow it (the broker forwards CreateTopics to the
    controller). Once created, this poll's metadata shows it and it is assigned."""
    c = _cluster("4.3", "kraft", auto_create_topics_enable=broker_allows)
    c.run(500)
    cons = c.consumer("g", allow_auto_create_topics=consumer_allows)
    cons.subscribe(["topic"])
    assert cons.poll(1000) == []
    assert ("topic" in c.topics.configs) == (broker_allows and consumer_allows)
    assert cons.assignment == ([("topic", 0)] if broker_allows and consumer_allows else [])


@pytest.mark.parametrize("version", ["0.10.2", "2.2"])
def test_consumer_before_kip_361_always_allows_creation(version):
    """KafkaConsumer @2.2.0 (new Metadata(..., allowAutoTopicCreation = true, ...)) and the
    Metadata v0-v3 requests of older clients, which always allowed creation: a subscription to
    a missing topic creates it whenever the broker allows; the consumer has no
    allow.auto.create.topics key to turn that off (KIP-361 added it in 2.3)."""
    c = _cluster(version)
    c.run(500)
    cons = c.consumer("g", auto_offset_reset="earliest")
    assert "allow.auto.create.topics" not in cons.config
    assert cons.metadata.allow_auto_topic_creation() is True
    cons.subscribe("auto")
    cons.poll(1000)
    assert "auto" in c.topics.configs and cons.assignment == [("auto", 0)]
    c.producer("p").send("auto", "x")
    c.run(500)
    assert [r.value for r in cons.poll(1000)] == ["x"]


def test_consumer_metadata_request_carries_its_flag():
    """(new) KafkaConsumer @3.9.0-rc3 builds its ConsumerMetadata with allow.auto.create.topics:
    the Metadata request it sends names its assigned topics (not every topic) and carries the
    flag."""
    c = _cluster("3.9")
    c.create_topic("t", 1, 1)
    c.create_topic("u", 1, 1)
    c.run(500)
    cons = c.consumer("g", allow_auto_create_topics=False)
    cons.assign("t")
    sent = []
    real = c.transport.send
    c.transport.send = lambda src, dst, msg: (sent.append(msg), real(src, dst, msg))[1]
    try:
        cons.poll(100)
    finally:
        c.transport.send = real
    [request] = [m for m in sent if isinstance(m, MetadataRequest)]
    assert request.topics == ("t",) and request.allow_auto_topic_creation is False


def test_assign_keeps_refusing_a_missing_topic():
    """(new) kafkasim's assign still refuses a topic that does not exist (with the closest
    name); only subscribe waits for one."""
    c = _cluster("3.9")
    c.create_topic("orders", 1, 1)
    with pytest.raises(Exception, match="Did you mean 'orders'"):
        c.consumer("g").assign("order")
    with pytest.raises(Exception, match="INVALID_TOPIC_EXCEPTION"):
        c.consumer("g").subscribe("a b")


# -- FetchCollector.collectFetch: an unexpected error with records collected --------------------
def _answer_in_poll(s, order):
    """Answers the poll's FetchRequests while it waits (Kafka's MockClient answering inside
    client.poll): one FetchResponse per entry of ``order`` (tp, data), in that order, each for
    the request that asked for tp."""
    def _await(_timeout_ms):
        asked = {(fp.topic, fp.partition): corr
                 for corr, (_b, req) in list(s.cons.client.sent_to.items())
                 if isinstance(req, FetchRequest) and corr in s.cons.client.pending
                 for fp in req.partitions}
        for tp, data in order:
            if tp in asked:
                broker, _req = s.cons.client.sent_to[asked[tp]]
                s.cons.on_message(broker, FetchResponse(asked[tp], (data,)))
                s.cons.client.pending[asked[tp]] = "fetch"   # one answer per partition here
        s.cons.client.pending.clear()
        s.cons.client.sent_to.clear()
        s.cons.client.fetch_deadlines.clear()

    s.cons.client.poll = _await


def _two_partitions():
    from test_consumer_fetcher_kafka import Scripted
    s = Scripted()
    s.assign(0, 1)
    s.subs.seek(("t", 0), 0)
    s.subs.seek(("t", 1), 0)
    return s


def test_unexpected_error_after_collected_records_is_thrown_and_they_are_lost():
    """FetchCollector.collectFetch @3.9.0-rc3 (Fetcher.fetchedRecords 2.0+): records collected,
    then a completed fetch whose initialization throws IllegalStateException ("Unexpected error
    code"): it is no KafkaException, so poll throws although records were collected; they are
    lost (the position moved past them), and the failed fetch stays in line (it had records
    before it), so the next poll throws again; then polling goes on."""
    s = _two_partitions()
    tp0, tp1 = ("t", 0), ("t", 1)
    _answer_in_poll(s, [(tp0, s.data(tp0, 0, 3)), (tp1, s.data(tp1, 0, err="NOT_CONTROLLER"))])
    with pytest.raises(IllegalStateException, match="Unexpected error code NOT_CONTROLLER "
                       "while fetching at offset 0 from topic-partition t-1"):
        s.cons.poll(100)
    assert s.subs.position(tp0).offset == 3   # the three records are gone for the caller
    assert not s.cons.consumed
    with pytest.raises(IllegalStateException, match="NOT_CONTROLLER"):
        s.cons.poll(100)
    _answer_in_poll(s, [(tp0, s.data(tp0, 3, 1)), (tp1, s.data(tp1, 0, 2))])
    assert sorted((r.partition, r.offset) for r in s.cons.poll(100)) == [(0, 3), (1, 0), (1, 1)]


def test_unexpected_error_first_in_line_keeps_the_records_behind_it():
    """FetchCollector.collectFetch @3.9.0-rc3: the failed completed fetch first in line is
    thrown with nothing collected (and removed: it had no records); the records of the answer
    behind it stay in the fetch buffer and the next poll returns them."""
    s = _two_partitions()
    tp0, tp1 = ("t", 0), ("t", 1)
    _answer_in_poll(s, [(tp1, s.data(tp1, 0, err="NOT_CONTROLLER")), (tp0, s.data(tp0, 0, 3))])
    with pytest.raises(IllegalStateException, match="NOT_CONTROLLER"):
        s.cons.poll(100)
    assert s.subs.position(tp0).offset == 0
    _answer_in_poll(s, [])
    assert [(r.partition, r.offset) for r in s.cons.poll(100)] == [(0, 0), (0, 1), (0, 2)]


def test_max_poll_records_reached_before_the_unexpected_error():
    """FetchCollector.collectFetch @3.9.0-rc3: with max.poll.records records collected the
    loop ends before the failed fetch is initialized: the records are returned, and the next
    poll (with the rest of the records still in line) returns them before throwing."""
    from test_consumer_fetcher_kafka import Scripted
    s = Scripted(max_poll_records=3)
    s.assign(0, 1)
    tp0, tp1 = ("t", 0), ("t", 1)
    s.subs.seek(tp0, 0)
    s.subs.seek(tp1, 0)
    _answer_in_poll(s, [(tp0, s.data(tp0, 0, 3)), (tp1, s.data(tp1, 0, err="NOT_CONTROLLER"))])
    assert [r.offset for r in s.cons.poll(100)] == [0, 1, 2]
    with pytest.raises(IllegalStateException, match="NOT_CONTROLLER"):
        s.cons.poll(100)


# -- KIP-320 offset validation at 2.8.0, 3.9.0-rc3 and 4.3.0 -------------------------------------
UNDEFINED_EPOCH = -1
UNDEFINED_EPOCH_OFFSET = -1
VALIDATION_VERSIONS = ["2.8", "3.9", "4.3"]


def _validating(version: str, policy: str):
    """FetcherTest @2.8.0 / OffsetFetcherTest @3.9.0-rc3, @4.3.0 testOffsetValidationWithGiven
    EpochOffset's set-up: t-0 assigned, the metadata names its leader with epoch 1 (epochOne);
    the position 5 of epoch 1, established against that leader, awaits validation."""
    from test_consumer_fetcher_kafka import capture
    c = Cluster(3, seed=1, kafka_version=version, latency_ms=1, jitter_ms=0)
    c.create_topic("t", 1, 3)
    c.run(500)
    cons = c.consumer(auto_offset_reset=policy)
    sent = capture(cons)
    cons.assign("t")
    cons._refresh_metadata(1000)
    cons.leader_epochs[("t", 0)] = 1   # metadataUpdateWith(..., tp -> epochOne)
    leader = cons.leaders[("t", 0)]
    cons.subscriptions.seek_unvalidated(
        ("t", 0), FetchPosition(5, 1, LeaderAndEpoch(leader, 1)))
    return c, cons, sent


def _answer_validation(cons, epoch: int, end_offset: int, seen: list):
    """The leader's OffsetsForLeaderEpoch answer, scripted (client.respond in Kafka's test)."""

    def _await(_timeout_ms):
        for corr, (_b, req) in list(cons.client.sent_to.items()):
            if isinstance(req, OffsetsForLeaderEpochRequest) and corr in cons.client.pending:
                seen.append(req.partitions)
                del cons.client.pending[corr]
                cons.offset_fetcher.handle_validation_response(OffsetsForLeaderEpochResponse(
                    corr, (("t", 0, "NONE", epoch, end_offset),)))
        cons.client.pending.clear()
        cons.client.sent_to.clear()

    cons._await = _await


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
@pytest.mark.parametrize("epoch,end_offset,policy", [
    (UNDEFINED_EPOCH, 0, "earliest"),        # ...ResetOffsetForUndefinedEpochWithDefined...
    (2, UNDEFINED_EPOCH_OFFSET, "earliest"),  # ...ForUndefinedOffsetWithDefinedResetPolicy
    (UNDEFINED_EPOCH, 0, "none"),            # ...ForUndefinedEpochWithUndefinedResetPolicy
    (2, UNDEFINED_EPOCH_OFFSET, "none"),      # ...ForUndefinedOffsetWithUndefinedResetPolicy
    (1, 1, "none"),                          # ...TriggerLogTruncationForBadOffsetWithUndefined...
])
def test_offset_validation_with_given_epoch_offset(version, epoch, end_offset, policy):
    """FetcherTest @2.8.0 testOffsetValidationResetOffsetFor{UndefinedEpoch,UndefinedOffset}
    With{Defined,Undefined}ResetPolicy and testOffsetValidationTriggerLogTruncationForBadOffset
    WithUndefinedResetPolicy (OffsetFetcherTest @3.9.0-rc3 / @4.3.0: ...resetPositionFor...),
    all testOffsetValidationWithGivenEpochOffset: OffsetsForLeaderEpoch(current epoch 1, epoch
    1) goes to the leader and the partition awaits validation; the scripted answer (epoch,
    end offset) is below the position 5. Without a reset policy: LogTruncationException with
    the fetch position (KAFKA-10113, 2.6+) and the divergent offset only when the answer
    defines one; the partition still awaits validation. With one: validation ends (the
    partition is reset, or sought to the divergent offset)."""
    _c, cons, _sent = _validating(version, policy)
    seen: list = []
    _answer_validation(cons, epoch, end_offset, seen)
    subs = cons.subscriptions
    if policy == "none":
        with pytest.raises(LogTruncationException) as err:
            cons.offset_fetcher.validate_positions_if_needed(0)
        assert err.value.offset_out_of_range_partitions == {("t", 0): 5}
        undefined = end_offset == UNDEFINED_EPOCH_OFFSET or epoch == UNDEFINED_EPOCH
        assert err.value.divergent_offsets == ({} if undefined else {("t", 0): (end_offset,
                                                                                  epoch)})
        assert subs.awaiting_validation(("t", 0))
    else:
        cons.offset_fetcher.validate_positions_if_needed(0)
        assert not subs.awaiting_validation(("t", 0))
    assert seen == [(("t", 0, 1, 1),)]


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_offset_validation_with_a_valid_end_offset(version):
    """OffsetFetcherTest.testOffsetValidationWithGivenEpochOffset's valid case @2.8.0 /
    @3.9.0-rc3 / @4.3.0 (no exception, maybeCompleteValidation): epoch 1 ends at 10, past the
    position 5: validated, the position kept with its epoch."""
    _c, cons, _sent = _validating(version, "none")
    _answer_validation(cons, 1, 10, [])
    cons.offset_fetcher.validate_positions_if_needed(0)
    subs = cons.subscriptions
    assert not subs.awaiting_validation(("t", 0))
    assert (subs.position(("t", 0)).offset, subs.position(("t", 0)).offset_epoch) == (5, 1)


# -- KIP-320 truncation detection end to end (SubscriptionStateTest at cluster level) ----------
@pytest.mark.parametrize("version", ["2.8", "3.9", "4.3"])
def test_truncation_detection_without_reset_policy(version):
    """SubscriptionStateTest.testTruncationDetectionWithoutResetPolicy @2.8.0 / @3.9.0-rc3 /
    @4.3.0, at cluster level: the consumer read 0-9 from leader 1 (epoch 0); broker 2, holding
    only 0-4, is elected uncleanly. The next polls validate the position 10 and throw
    LogTruncationException: divergent offset 5 of epoch 0, fetch position 10; the position is
    kept until the application seeks."""
    from truncation_setup import elect_the_follower_uncleanly, leader_ahead_of_its_follower
    c, p = leader_ahead_of_its_follower(version)
    cons = c.consumer(group="g", auto_offset_reset="none")
    cons.assign("t")
    cons.seek("t", 0, 0)
    assert len(cons.poll(2000)) == 10
    elect_the_follower_uncleanly(c, p, 5)
    with pytest.raises(LogTruncationException) as err:
        for _ in range(4):
            cons.poll(1000)
    assert err.value.divergent_offsets == {("t", 0): (5, 0)}
    assert err.value.offset_out_of_range_partitions == {("t", 0): 10}
    assert cons.position("t", 0) == 10
    cons.seek("t", 0, 5)
    assert [r.value for r in cons.poll(1000)] == [f"n{i}" for i in range(5, 10)]


@pytest.mark.parametrize("version", ["2.8", "3.9", "4.3"])
def test_truncation_detection_with_reset_policy(version):
    """SubscriptionStateTest.testTruncationDetectionWithResetPolicy @2.8.0 / @3.9.0-rc3 / @4.3.0, at
    cluster level: with a reset policy the position 10 is sought to the divergent offset 5
    (seekValidated with the epoch the leader answered) and the new leader's records 5-9 are
    read; nothing is thrown."""
    from truncation_setup import elect_the_follower_uncleanly, leader_ahead_of_its_follower
    c, p = leader_ahead_of_its_follower(version)
    cons = c.consumer(group="g", auto_offset_reset="latest")
    cons.assign("t")
    cons.seek("t", 0, 0)
    assert len(cons.poll(2000)) == 10
    elect_the_follower_uncleanly(c, p, 5)
    got = []
    for _ in range(4):
        got += cons.poll(1000)
    assert [(r.offset, r.value) for r in got] == [(i, f"n{i}") for i in range(5, 10)]
    assert [r[5] for r in c.trace.where("consumer_truncation")] == [(10, 5, "seek")]


# -- SubscriptionStateTest @4.3.0 --------------------------------------------------------------
def test_is_fetchable_on_manual_assignment():
    """SubscriptionStateTest.testIsFetchableOnManualAssignment @4.3.0: assigned partitions are
    not fetchable without a valid position, and are once sought."""
    state = SubscriptionState()
    state.assign_from_user([("t", 0), ("t", 1)])
    assert state.assigned_partitions() == {("t", 0), ("t", 1)}
    assert not state.is_fetchable(("t", 0)) and not state.is_fetchable(("t", 1))
    state.seek(("t", 0), 1)
    state.seek(("t", 1), 1)
    assert state.is_fetchable(("t", 0)) and state.is_fetchable(("t", 1))


def test_fetchable_partitions_performs_cheap_checks_first():
    """SubscriptionStateTest.testFetchablePartitionsPerformsCheapChecksFirst @4.3.0: the
    caller's predicate (is the partition's data buffered) is not asked about a paused
    partition; once resumed it is, and the partition is fetchable."""
    state = SubscriptionState()
    state.assign_from_user([("t", 0)])
    state.seek(("t", 0), 100)
    assert state.is_fetchable(("t", 0))
    state.pause(("t", 0))
    asked = []
    assert state.fetchable_partitions(lambda tp: asked.append(tp) or True) == []
    assert asked == []
    state.resume(("t", 0))
    assert state.fetchable_partitions(lambda tp: asked.append(tp) or True) == [("t", 0)]
    assert asked == [("t", 0)]


def test_completed_fetch_removal_out_of_range_in_line():
    """FetcherTest.testCompletedFetchRemoval @2.8.0 (the parts kafkasim models; the corrupt
    tp3 batch is not): reset policy none, one answer with tp1's records, tp0
    OFFSET_OUT_OF_RANGE, tp2's records, in that order. The first poll returns tp1's records
    only (the OffsetOutOfRangeException, a KafkaException, waits: records were collected); the
    next throws it for tp0 alone; the one after returns tp2's records."""
    from test_consumer_fetcher_kafka import Scripted
    s = Scripted(reset="none", partitions=3)
    s.assign(0, 1, 2)
    tp0, tp1, tp2 = ("t", 0), ("t", 1), ("t", 2)
    for tp in (tp0, tp1, tp2):
        s.cons.seek("t", tp[1], 1)
    _answer_in_poll(s, [(tp1, s.data(tp1, 1, 3)),
                        (tp0, s.data(tp0, 1, err="OFFSET_OUT_OF_RANGE")),
                        (tp2, s.data(tp2, 1, 2))])
    assert [(r.partition, r.offset) for r in s.cons.poll(100)] == [(1, 1), (1, 2), (1, 3)]
    assert s.subs.position(tp1).offset == 4 and s.subs.position(tp2).offset == 1
    _answer_in_poll(s, [])
    with pytest.raises(OffsetOutOfRangeException) as err:
        s.cons.poll(100)
    assert err.value.offset_out_of_range_partitions == {tp0: 1}
    assert [(r.partition, r.offset) for r in s.cons.poll(100)] == [(2, 1), (2, 2)]
    assert s.subs.position(tp2).offset == 3


def test_records_past_max_poll_records_come_before_the_failed_answer():
    """FetchCollector.collectFetch @3.9.0-rc3: the rest of a completed fetch partly returned
    (max.poll.records) is next in line, ahead of a failed answer that came after it: the next
    poll collects those records, then reaches the failed answer and throws (an unexpected
    error: the records are lost); the poll after throws it again."""
    from test_consumer_fetcher_kafka import Scripted
    s = Scripted(max_poll_records=3)
    s.assign(0, 1)
    tp0, tp1 = ("t", 0), ("t", 1)
    s.subs.seek(tp0, 0)
    s.subs.seek(tp1, 0)
    _answer_in_poll(s, [(tp0, s.data(tp0, 0, 5)), (tp1, s.data(tp1, 0, err="NOT_CONTROLLER"))])
    assert [r.offset for r in s.cons.poll(100)] == [0, 1, 2]
    with pytest.raises(IllegalStateException, match="NOT_CONTROLLER"):
        s.cons.poll(100)
    assert s.subs.position(tp0).offset == 5   # records 3 and 4 were collected, then lost
    with pytest.raises(IllegalStateException, match="NOT_CONTROLLER"):
        s.cons.poll(100)


# -- KIP-392 preferred read replica at 2.8.0, 3.9.0-rc3 and 4.3.0 ----------------------------------
def _preferred_at(version: str):
    """FetcherTest.testPreferredReadReplica's first steps: t-0 at 0; before any answer the
    leader is fetched from; the first answer names a follower as preferred read replica."""
    from test_consumer_versions_kafka import At
    s = At(version)
    s.assign(0)
    s.subs.seek(("t", 0), 0)
    follower = next(b for b in (1, 2, 3) if b != s.leader(("t", 0)))
    assert s.cons.fetching_from("t", 0) == s.leader(("t", 0))
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(("t", 0), 0, 3, pref=follower))
    assert s.fetch_records() == {("t", 0): [0, 1, 2]}
    return s, follower


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_preferred_read_replica(version):
    """FetcherTest.testPreferredReadReplica @2.8.0 / @3.9.0-rc3 (FetchRequestManagerTest
    @4.3.0): the replica the answer names is fetched from next; one the metadata does not
    know (99) falls back to the leader; from 3.4 (KAFKA-14379) that also asks for new
    metadata."""
    s, follower = _preferred_at(version)
    assert s.cons.fetching_from("t", 0) == follower
    (corr,) = s.send_fetches()
    assert s.cons.client.sent_to[corr][0] == follower
    s.respond(corr, s.data(("t", 0), 3, 3, pref=99))
    assert s.fetch_records() == {("t", 0): [3, 4, 5]}
    assert s.cons.fetching_from("t", 0) == s.leader(("t", 0))
    (corr,) = s.send_fetches()
    assert s.cons.client.sent_to[corr][0] == s.leader(("t", 0))
    assert s.cons._metadata_update_requested == (version != "2.8")


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_preferred_read_replica_offset_error(version):
    """FetcherTest.testPreferredReadReplicaOffsetError @2.8.0 / @3.9.0-rc3
    (FetchRequestManagerTest @4.3.0): OFFSET_OUT_OF_RANGE from the preferred replica forgets
    it; the same position is fetched from the leader, no reset."""
    s, _follower = _preferred_at(version)
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(("t", 0), 3, err="OFFSET_OUT_OF_RANGE"))
    assert s.subs.preferred_read_replica(("t", 0), s.c.now) is None
    assert s.cons.fetching_from("t", 0) == s.leader(("t", 0))
    assert not s.subs.is_offset_reset_needed(("t", 0))
    assert s.subs.position(("t", 0)).offset == 3


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_fetch_error_should_clear_preferred_read_replica(version):
    """FetcherTest.testFetchErrorShouldClearPreferredReadReplica @3.9.0-rc3 / @4.3.0
    (KAFKA-14379, 3.4+): NOT_LEADER_OR_FOLLOWER from the preferred replica forgets it; at
    @2.8.0 (Fetcher.parseCompletedFetch) it was kept until its lease ended. New metadata is
    asked for in both."""
    s, follower = _preferred_at(version)
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(("t", 0), 3, err="NOT_LEADER_OR_FOLLOWER"))
    assert s.fetch_records() == {}
    kept = s.subs.preferred_read_replica(("t", 0), s.c.now)
    assert kept == (follower if version == "2.8" else None)
    assert s.cons.leaders[("t", 0)] == -1   # requestMetadataUpdate: the next poll asks


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_fetch_disconnected_should_clear_preferred_read_replica(version):
    """FetcherTest.testFetchDisconnectedShouldClearPreferredReadReplica @3.9.0-rc3 / @4.3.0
    (AbstractFetch.handleFetchFailure, 3.4+): a disconnect from the preferred replica forgets
    it; at @2.8.0 the replica was kept."""
    s, follower = _preferred_at(version)
    (corr,) = s.send_fetches()
    s.disconnect(corr)
    kept = s.subs.preferred_read_replica(("t", 0), s.c.now)
    assert kept == (follower if version == "2.8" else None)


# -- out-of-range handling at 2.8.0, 3.9.0-rc3 and 4.3.0 ----------------------------------------
def _scripted_at(version: str, reset: str, *partitions: int, **config):
    from test_consumer_versions_kafka import At
    s = At(version, reset, **config)
    s.assign(*partitions)
    return s


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_fetch_offset_out_of_range(version):
    """FetcherTest.testFetchOffsetOutOfRange @2.8.0 / @3.9.0-rc3 (FetchRequestManagerTest
    @4.3.0): OFFSET_OUT_OF_RANGE at the position with a reset policy: no records, the
    partition awaits a reset and has no position."""
    s = _scripted_at(version, "earliest", 0)
    s.subs.seek(("t", 0), 0)
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(("t", 0), 0, 3, err="OFFSET_OUT_OF_RANGE"))
    assert s.fetch_records() == {}
    assert s.subs.is_offset_reset_needed(("t", 0))
    assert s.subs.valid_position(("t", 0)) is None and s.cons.position("t", 0) is None


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_stale_out_of_range_error(version):
    """FetcherTest.testStaleOutOfRangeError @2.8.0 / @3.9.0-rc3 (FetchRequestManagerTest
    @4.3.0): an OFFSET_OUT_OF_RANGE that arrives after a seek neither resets nor throws; the
    position stays where the seek put it."""
    s = _scripted_at(version, "earliest", 0)
    s.subs.seek(("t", 0), 0)
    (corr,) = s.send_fetches()
    s.subs.seek(("t", 0), 1)
    s.respond(corr, s.data(("t", 0), 0, 3, err="OFFSET_OUT_OF_RANGE"))
    assert s.fetch_records() == {}
    assert not s.subs.is_offset_reset_needed(("t", 0))
    assert s.subs.position(("t", 0)).offset == 1


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_fetch_offset_out_of_range_exception(version):
    """FetcherTest.testFetchOffsetOutOfRangeException @2.8.0 / @3.9.0-rc3
    (FetchRequestManagerTest @4.3.0): reset policy none, an OFFSET_OUT_OF_RANGE answer that
    carried records: no reset; the next two polls both throw OffsetOutOfRangeException for
    t-0 at offset 0 (the failed fetch had records: it stays in line)."""
    s = _scripted_at(version, "none", 0, max_poll_records=2)
    s.subs.seek(("t", 0), 0)
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(("t", 0), 0, 3, err="OFFSET_OUT_OF_RANGE"))
    assert not s.subs.is_offset_reset_needed(("t", 0))
    for _ in range(2):
        with pytest.raises(OffsetOutOfRangeException) as err:
            s.cons.poll(0)
        assert err.value.offset_out_of_range_partitions == {("t", 0): 0}


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_fetched_records_after_seek(version):
    """FetcherTest.testFetchedRecordsAfterSeek @2.8.0 / @3.9.0-rc3 (FetchRequestManagerTest
    @4.3.0): reset policy none, OFFSET_OUT_OF_RANGE, then a seek before the records are
    collected: nothing is thrown and nothing returned (the answer is stale)."""
    s = _scripted_at(version, "none", 0, max_poll_records=2)
    s.subs.seek(("t", 0), 0)
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(("t", 0), 0, 3, err="OFFSET_OUT_OF_RANGE"))
    assert not s.subs.is_offset_reset_needed(("t", 0))
    s.subs.seek(("t", 0), 2)
    _answer_in_poll(s, [])
    assert s.cons.poll(0) == []


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_seek_before_exception(version):
    """FetcherTest.testSeekBeforeException @2.8.0 / @3.9.0-rc3 (FetchRequestManagerTest
    @4.3.0): reset policy none, max.poll.records 2: t-0's records 1-3 give 2, one stays
    buffered; t-1 is added and its fetch answers OFFSET_OUT_OF_RANGE: the next poll returns
    t-0's buffered record (ahead of the failed answer; OffsetOutOfRangeException is a
    KafkaException, so records collected win); after a seek of t-1 to 10 the failed answer is
    stale: no exception, nothing returned."""
    s = _scripted_at(version, "none", 0, max_poll_records=2)
    tp0, tp1 = ("t", 0), ("t", 1)
    s.subs.seek(tp0, 1)
    _answer_in_poll(s, [(tp0, s.data(tp0, 1, 3))])
    assert [r.offset for r in s.cons.poll(0)] == [1, 2]
    s.cons.assign([tp0, tp1])
    s.cons.seek("t", 1, 1)
    _answer_in_poll(s, [(tp1, s.data(tp1, 1, err="OFFSET_OUT_OF_RANGE"))])
    fetched = s.send_fetches()
    assert len(fetched) == 1 and [fp.partition for fp in
                                  s.cons.client.sent_to[fetched[0]][1].partitions] == [1]
    s.cons.client.poll(0)
    assert [(r.partition, r.offset) for r in s.cons.poll(0)] == [(0, 3)]
    s.subs.seek(tp1, 10)
    _answer_in_poll(s, [])
    assert s.cons.poll(0) == []


# -- the fetch position's leader epoch at 2.8.0, 3.9.0-rc3 and 4.3.0 ------------------------------
@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_epoch_set_in_fetch_request(version):
    """FetcherTest.testEpochSetInFetchRequest @2.8.0 / @3.9.0-rc3 (FetchRequestManagerTest
    @4.3.0): the FetchRequest carries the metadata's leader epoch (99) as
    CurrentLeaderEpoch, at the position (10)."""
    s = _scripted_at(version, "earliest", 0)
    s.cons.leader_epochs[("t", 0)] = 99
    s.cons.seek("t", 0, 10)
    (corr,) = s.send_fetches()
    req = s.cons.client.sent_to[corr][1]
    assert [(fp.fetch_offset, fp.current_leader_epoch) for fp in req.partitions] == [(10, 99)]


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_subscription_position_updated_with_epoch(version):
    """FetcherTest.testSubscriptionPositionUpdatedWithEpoch @2.8.0 / @3.9.0-rc3
    (FetchRequestManagerTest @4.3.0): the position takes the leader epoch of the last record
    fetched, and a commit carries it (SubscriptionState.allConsumed)."""
    s = _scripted_at(version, "earliest", 0)
    s.subs.seek(("t", 0), 0)
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(("t", 0), 0, epochs=[1, 1, 1]))
    assert s.fetch_records() == {("t", 0): [0, 1, 2]}
    position = s.subs.position(("t", 0))
    assert (position.offset, position.offset_epoch) == (3, 1)
    consumed = s.subs.all_consumed()[("t", 0)]
    assert (consumed.offset, consumed.leader_epoch) == (3, 1)


@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
def test_leader_epoch_in_consumer_record(version):
    """FetcherTest.testLeaderEpochInConsumerRecord @2.8.0 / @3.9.0-rc3 (FetchRequestManagerTest
    @4.3.0): each record carries its batch's leader epoch; the position ends with the last
    one's."""
    s = _scripted_at(version, "earliest", 0)
    s.subs.seek(("t", 0), 0)
    (corr,) = s.send_fetches()
    s.respond(corr, s.data(("t", 0), 0, epochs=[1, 1, 8, 13, 13, 13]))
    assert [r.leader_epoch for r in s.cons.consumed] == [1, 1, 8, 13, 13, 13]
    assert s.subs.position(("t", 0)).offset_epoch == 13


def test_unsubscribe_then_poll_throws():
    """KafkaConsumerTest.testPollWithNoSubscription / KafkaConsumer.unsubscribe @3.9.0-rc3: after
    unsubscribe (of a subscription to a topic not created yet, here) poll throws
    IllegalStateException; nothing was created."""
    c = _cluster("3.9", auto_create_topics_enable=False)
    cons = c.consumer("g")
    cons.subscribe(["missing"])
    assert cons.poll(100) == []
    cons.unsubscribe()
    assert cons.assignment == [] and cons.metadata.new_metadata_request_builder().topics == ()
    with pytest.raises(IllegalStateException, match="not subscribed to any topics"):
        cons.poll(100)


# -- ListOffsets isolation level ------------------------------------------------------------------
@pytest.mark.parametrize("version", VALIDATION_VERSIONS)
@pytest.mark.parametrize("isolation", ["read_uncommitted", "read_committed"])
def test_list_offsets_sends_isolation_level(version, isolation):
    """FetcherTest.testListOffsetSend{ReadUncommitted,ReadCommitted} @2.8.0 (OffsetFetcherTest
    @3.9.0-rc3 / @4.3.0, testListOffsetsSendsIsolationLevel): a partition awaiting a reset to
    LATEST sends ListOffsets with the consumer's isolation level; the answer's offset (5)
    becomes the position, fetchable, no reset pending."""
    from test_consumer_fetcher_kafka import capture
    c = Cluster(3, seed=1, kafka_version=version, latency_ms=1, jitter_ms=0)
    c.create_topic("t", 1, 3)
    p = c.producer("p")
    for i in range(5):
        p.send("t", f"v{i}", partition=0)
    c.run(1000)
    cons = c.consumer(auto_offset_reset="earliest", isolation_level=isolation)
    sent = capture(cons)
    cons.assign("t")
    cons._refresh_metadata(1000)
    subs = cons.subscriptions
    subs.request_offset_reset(("t", 0), OffsetResetStrategy.LATEST)
    cons.offset_fetcher.reset_positions_if_needed([("t", 0)], 1000)
    [request] = [m for _b, m in sent if isinstance(m, ListOffsetsRequest)]
    assert request.isolation_level == isolation
    assert not subs.is_offset_reset_needed(("t", 0)) and subs.is_fetchable(("t", 0))
    assert subs.position(("t", 0)).offset == 5


# -- KafkaConsumerTest @3.9.0-rc3: subscribe, assign, unsubscribe -------------------------------
def test_subscription():
    """KafkaConsumerTest.testSubscription @3.9.0-rc3 (classic protocol), without
    ``subscription()`` (kafkasim's Consumer has no such accessor; its SubscriptionState's
    ``metadata_topics`` stands in): subscribing to a topic gives no assignment until the
    group assigns (here: the topic does not exist and cannot be created); subscribing to
    nothing leaves nothing; assign gives exactly the partition; unsubscribe clears it."""
    c = _cluster("3.9", auto_create_topics_enable=False)
    c.create_topic("other", 1, 1)
    c.run(500)
    cons = c.consumer("g")
    cons.subscribe(["test"])
    assert cons.subscriptions.metadata_topics() == ("test",) and cons.assignment == []
    cons.subscribe([])
    assert cons.subscriptions.metadata_topics() == () and cons.assignment == []
    cons.assign([("other", 0)])
    assert cons.assignment == [("other", 0)]
    cons.unsubscribe()
    assert cons.subscriptions.metadata_topics() == () and cons.assignment == []


@pytest.mark.parametrize("call", [
    lambda cons: cons.subscribe(["  "]),            # testSubscriptionOnEmptyTopic
    lambda cons: cons.subscribe([None]),            # testSubscriptionOnNullTopic
    lambda cons: cons.assign([("  ", 0)]),          # testAssignOnEmptyTopicInPartition
])
def test_subscription_on_blank_topic_is_refused(call):
    """KafkaConsumerTest.testSubscriptionOnEmptyTopic, testSubscriptionOnNullTopic,
    testAssignOnEmptyTopicInPartition @3.9.0-rc3: a blank or missing topic name is refused
    (Kafka: IllegalArgumentException; kafkasim: ClusterError naming the problem), and the
    consumer is left unsubscribed."""
    from kafkasim.settings.exceptions import ClusterError
    c = _cluster("3.9")
    cons = c.consumer("g")
    with pytest.raises(ClusterError):
        call(cons)
    assert cons.assignment == [] and cons.subscriptions.metadata_topics() == ()


def test_subscribe_takes_a_set_in_sorted_order():
    """(new) KafkaConsumer.subscribe(Collection) / SubscriptionState.subscribe(Set, Optional
    listener): a set of topic names is taken in sorted order (no hash order: runs stay
    deterministic); the listener argument is accepted."""
    state = SubscriptionState()
    assert state.subscribe({"b", "a", "c"}, None)
    assert state.metadata_topics() == ("a", "b", "c")
    assert not state.subscribe(["a", "b", "c"])
    c = _cluster("3.9", auto_create_topics_enable=False)
    cons = c.consumer("g")
    cons.subscribe({"y", "x"})
    assert cons.subscriptions.metadata_topics() == ("x", "y")
