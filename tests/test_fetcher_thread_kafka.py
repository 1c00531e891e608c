"""Kafka's follower-fetcher unit tests, ported to ``kafkasim.core.fetcher.ReplicaFetcherThread``.

The sources are ``core/src/test/scala/unit/kafka/server/AbstractFetcherThreadTest.scala`` (tags
2.4.0 and 3.7.0) and ``ReplicaFetcherThreadTest.scala`` (tag 2.7.0). Each test names the Kafka
test it follows and checks what that test checks, adapted to kafkasim's API:

* The thread runs alone against ``kafkasim.core.fake.FakeContext``; the leader is
  ``MockLeader`` below, which answers Fetch and OffsetsForLeaderEpoch by the rules of Kafka's
  test leader (``MockLeaderEndPoint`` at 3.7.0): one record batch per fetch, the
  current-leader-epoch check (FENCED_LEADER_EPOCH / UNKNOWN_LEADER_EPOCH), OFFSET_OUT_OF_RANGE
  outside [log start, LEO], and a diverging epoch worked out from the follower's
  LastFetchedEpoch. Its logs are ``kafkasim.core.log.Log`` objects written with
  ``append_as_leader``, one call per batch.
* Kafka's ``doWork`` sends a request and waits for the answer. kafkasim's thread sends one
  request and carries on when the answer arrives. ``Env.run_round`` plays one ``doWork``: it
  answers requests until a Fetch built from the current fetch state has been answered, or
  until nothing is in flight. Kafka's mock fetcher backs off for 0 ms, so each round first
  moves the clock past ``replica.fetch.backoff.ms``.
* Kafka's mock follower treats an empty log as having latest epoch 0. Where a Kafka test relies
  on that, the follower's epoch cache gets an entry (0, 0) here, so the thread also sends
  OffsetsForLeaderEpoch for epoch 0.
* Kafka's ``addPartitions`` picks the initial fetch state. Here the test builds it as Kafka
  would: ``Fetching`` with LastFetchedEpoch when truncation on fetch is in use (IBP 2.7-IV1,
  kafkasim 2.8+), ``Truncating`` otherwise.

Tests left out: metrics, corrupt records, storage failures, topic ids, and the ListOffsets paths
(testFencedOffsetResetAfterOutOfRange, testRetryAfterUnknownLeaderEpochInLatestOffsetFetch).
kafkasim models none of these; for OFFSET_OUT_OF_RANGE it reads the leader's log start offset
and LEO from the Fetch answer.

Writing these found two places where kafkasim's fetcher did not do what Kafka does, both fixed
with the tests: a partition answered FENCED_LEADER_EPOCH kept fetching (Kafka 2.1+ drops it until
the next LeaderAndIsr: ``test_fenced_truncation``, ``test_fenced_fetch``), and an
OffsetsForLeaderEpoch answer for a partition whose leader epoch changed meanwhile was applied
(Kafka 2.2+ drops it: ``test_leader_epoch_change_during_*``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from kafkasim.core import errors as E
from kafkasim.core.fake import FakeContext
from kafkasim.core.fetcher import (
    FETCHING,
    TRUNCATING,
    PartitionFetchState,
    ReplicaFetcherThread,
    become_follower_needed,
)
from kafkasim.core.log import Log, RecordChunk
from kafkasim.core.messages import (
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    OffsetsForLeaderEpochRequest,
    OffsetsForLeaderEpochResponse,
)

FOLLOWER, LEADER = 2, 1
TP = ("topic", 0)
UNDEFINED = -1            # UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET
UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"
INCONSISTENT_TOPIC_ID = "INCONSISTENT_TOPIC_ID"


def batch(epoch: int, *ids: int) -> tuple[int, tuple[int, ...]]:
    """One record batch: its partition leader epoch and its records (given by record id)."""
    return epoch, ids


# -- the leader -----------------------------------------------------------------------------------
@dataclass
class LeaderPartition:
    log: Log
    batches: list = field(default_factory=list)   # (base offset, record count, epoch)
    leader_epoch: int = 0
    hw: int = 0


class MockLeader:
    """Answers requests the way Kafka's MockLeaderEndPoint (3.7.0) does."""

    def __init__(self) -> None:
        self.parts: dict[tuple[str, int], LeaderPartition] = {}

    def set_state(self, tp, batches, leader_epoch: int, hw: int, log_start: int = 0) -> None:
        log = Log(*tp)
        if log_start:
            log.truncate_fully_and_start_at(log_start)
        lp = LeaderPartition(log, [], leader_epoch, hw)
        for epoch, ids in batches:
            first, _ = log.append_as_leader(list(ids), [10] * len(ids), epoch, 0)
            lp.batches.append((first, len(ids), epoch))
        self.parts[tp] = lp

    def state(self, tp) -> LeaderPartition:
        return self.parts[tp]

    @staticmethod
    def epoch_error(current_epoch: int, lp: LeaderPartition) -> str | None:
        """checkExpectedLeaderEpoch: -1 means the request did not carry an epoch."""
        if current_epoch == UNDEFINED:
            return None
        if current_epoch < lp.leader_epoch:
            return E.FENCED_LEADER_EPOCH
        if current_epoch > lp.leader_epoch:
            return E.UNKNOWN_LEADER_EPOCH
        return None

    @staticmethod
    def lookup(lp: LeaderPartition, epoch: int) -> tuple[int, int]:
        """lookupEndOffsetForEpoch: the first batch with a higher epoch ends ``epoch``; the
        answer names the epoch of the batch before it (or the higher epoch itself when there
        is none); no higher batch at all: undefined."""
        lower = UNDEFINED
        for base, _n, e in lp.batches:
            if e > epoch:
                return (e if lower == UNDEFINED else lower), base
            lower = e
        return UNDEFINED, UNDEFINED

    def diverging(self, lp: LeaderPartition, last_fetched_epoch: int, fetch_offset: int):
        """divergingEpochAndOffset: only when the request carries a LastFetchedEpoch."""
        if last_fetched_epoch < 0 or not lp.batches:
            return None
        epoch, end = self.lookup(lp, last_fetched_epoch)
        if end == UNDEFINED or epoch == UNDEFINED:
            return None
        if epoch < last_fetched_epoch or end < fetch_offset:
            return epoch, end
        return None

    def fetch(self, req: FetchRequest) -> FetchResponse:
        out = []
        for fp in req.partitions:
            lp = self.parts[(fp.topic, fp.partition)]
            log = lp.log
            err = self.epoch_error(fp.current_leader_epoch, lp)
            div = self.diverging(lp, fp.last_fetched_epoch, fp.fetch_offset)
            records = RecordChunk.empty(fp.fetch_offset)
            if err is None:
                if not log.log_start_offset <= fp.fetch_offset <= log.log_end_offset:
                    err = E.OFFSET_OUT_OF_RANGE
                else:
                    err = E.NONE
                    if div is None:
                        nxt = [(b, n) for b, n, _e in lp.batches if b >= fp.fetch_offset]
                        if nxt:
                            base, n = nxt[0]
                            records = log.read(base, base + n, 10**9)
            out.append(FetchPartitionData(fp.topic, fp.partition, err, lp.hw,
                                          log.log_start_offset, records, div,
                                          log_end_offset=log.log_end_offset))
        # session id 0: the leader keeps no session, so every fetch is a full one
        return FetchResponse(req.correlation_id, tuple(out), E.NONE, 0)

    def epochs(self, req: OffsetsForLeaderEpochRequest) -> OffsetsForLeaderEpochResponse:
        out = []
        for topic, partition, current, epoch in req.partitions:
            lp = self.parts[(topic, partition)]
            err = self.epoch_error(current, lp)
            if err is not None:
                out.append((topic, partition, err, UNDEFINED, UNDEFINED))
            else:
                out.append((topic, partition, E.NONE, *self.lookup(lp, epoch)))
        return OffsetsForLeaderEpochResponse(req.correlation_id, tuple(out))


# -- the follower and its thread ------------------------------------------------------------------
class Env:
    def __init__(self, version: str = "3.7", **config) -> None:
        cfg = {k.replace("_", "."): v for k, v in config.items()}
        self.ctx = FakeContext(FOLLOWER, kafka_version=version, config=cfg or None)
        self.leader = MockLeader()
        self.th = ReplicaFetcherThread(FOLLOWER, LEADER, 0)
        self.callback = None   # run once, after the leader worked out its next answer
        self.answered: list = []

    # setup
    def replica(self, tp=TP, batches=(), hw: int = 0, epoch_zero: bool = False) -> Log:
        """The follower's log; ``epoch_zero``: an empty log whose latest epoch is 0, as the
        epoch Kafka's mock follower reports for an empty log."""
        log = self.ctx.partition(*tp).log
        for epoch, ids in batches:
            log.append_as_leader(list(ids), [10] * len(ids), epoch, 0)
        if epoch_zero:
            log.leader_epoch_cache.assign(0, 0)
        log.high_watermark = hw
        self.ctx.take()
        return log

    def add(self, tp=TP, offset: int = 0, epoch: int = 0, state: str = FETCHING,
            last_fetched_epoch: int = UNDEFINED) -> PartitionFetchState:
        st = PartitionFetchState(offset, epoch, state, last_fetched_epoch=last_fetched_epoch)
        self.th.add_partition(tp, st)
        return st

    def log(self, tp=TP) -> Log:
        return self.ctx.logs[tp]

    def st(self, tp=TP) -> PartitionFetchState | None:
        return self.th.partitions.get(tp)

    # requests
    def pending(self):
        """The request in flight (the last one the thread sent), or None."""
        if self.th.in_flight < 0:
            return None
        for _dst, msg in reversed(self.ctx.sent):
            if getattr(msg, "correlation_id", None) == self.th.in_flight:
                return msg
        raise AssertionError("the request in flight was not sent")

    def sent(self, kind) -> list:
        return [m for _d, m in self.ctx.sent if isinstance(m, kind)]

    def deliver(self, resp) -> None:
        if isinstance(resp, FetchResponse):
            self.th.on_fetch_response(self.ctx, resp)
        else:
            self.th.on_offsets_for_leader_epoch(self.ctx, resp)

    def answer(self) -> object:
        req = self.pending()
        resp = self.leader.fetch(req) if isinstance(req, FetchRequest) else \
            self.leader.epochs(req)
        if self.callback is not None:
            cb, self.callback = self.callback, None
            cb()
        self.answered.append(req)
        self.deliver(resp)
        return req

    def _current(self, req: FetchRequest) -> bool:
        """Was this Fetch built from the partitions' current fetch state?"""
        for fp in req.partitions:
            st = self.st((fp.topic, fp.partition))
            if st is None or st.state != FETCHING or st.fetch_offset != fp.fetch_offset:
                return False
        return True

    def run_round(self, advance: bool = True) -> None:
        """One AbstractFetcherThread.doWork (see the module docstring)."""
        if advance:
            self.ctx.now += self.ctx.config["replica.fetch.backoff.ms"]
        if self.th.in_flight < 0:
            self.th.do_work(self.ctx)
        for _ in range(50):
            req = self.pending()
            if req is None:
                return
            done = isinstance(req, FetchRequest) and self._current(req)
            self.answer()
            if done:
                return
        raise AssertionError("the round never ended")

    def run_until_logs_match(self, tp=TP, rounds: int = 20) -> None:
        for _ in range(rounds):
            self.run_round()
            if records(self.log(tp)) == records(self.leader.state(tp).log):
                return
        raise AssertionError(f"logs never matched: {records(self.log(tp))} vs "
                             f"{records(self.leader.state(tp).log)}")

    def outbox_lines(self, prefix: str) -> list[str]:
        return [line for line in self.ctx.outbox if line.startswith(prefix)]


def records(log: Log) -> list[tuple[int, int, int]]:
    """(offset, leader epoch, record id) of every record."""
    return [(o, e, r) for o, e, r, _t in log.records()]


# -- AbstractFetcherThreadTest ---------------------------------------------------------------------
def test_simple_fetch():
    # Kafka: AbstractFetcherThreadTest.testSimpleFetch (3.7.0)
    env = Env("3.7")
    env.replica()
    env.add(offset=0, epoch=0, last_fetched_epoch=0)
    env.leader.set_state(TP, [batch(0, 1, 2)], leader_epoch=0, hw=2)
    env.run_round()
    assert env.log().log_end_offset == 2
    assert env.log().high_watermark == 2


def test_delay():
    # Kafka: AbstractFetcherThreadTest.testDelay (3.7.0). The leader cannot answer (Kafka: the
    # fetch throws); every partition waits fetchBackOffMs before the next fetch.
    env = Env("3.7", replica_fetch_backoff_ms=250)
    env.replica()
    env.add(offset=0, epoch=0, last_fetched_epoch=0)
    env.th.do_work(env.ctx)
    req = env.pending()
    assert isinstance(req, FetchRequest)
    n_sent = len(env.ctx.sent)
    env.th.on_request_failed(env.ctx, req.correlation_id, "UnknownTopicIdException")
    assert env.st().delayed_until_ms == 250
    assert len(env.ctx.sent) == n_sent                  # no fetch before the backoff
    assert "fetcher wakes up at 250" in env.ctx.outbox
    env.ctx.now = 249
    env.th.on_wakeup(env.ctx, 249)
    assert len(env.ctx.sent) == n_sent
    env.ctx.now = 250
    env.th.on_wakeup(env.ctx, 250)
    assert len(env.ctx.sent) == n_sent + 1 and isinstance(env.pending(), FetchRequest)


def test_partitions_in_error():
    # Kafka: AbstractFetcherThreadTest.testPartitionsInError (3.7.0)
    env = Env("3.7", replica_fetch_backoff_ms=250)
    tps = [("topic1", 0), ("topic2", 0), ("topic3", 0)]
    for tp in tps:
        env.replica(tp)
        env.add(tp, offset=0, epoch=0, last_fetched_epoch=0)
    env.th.do_work(env.ctx)
    req = env.pending()
    errors = [E.UNKNOWN_TOPIC_ID, INCONSISTENT_TOPIC_ID, E.NONE]
    parts = tuple(FetchPartitionData(t, p, err, 0, 0, RecordChunk.empty(0))
                  for (t, p), err in zip(tps, errors, strict=True))
    env.deliver(FetchResponse(req.correlation_id, parts))
    assert all(env.st(tp) is not None for tp in tps)
    # only the partitions with an error are delayed
    assert env.st(tps[0]).delayed_until_ms > env.ctx.now
    assert env.st(tps[1]).delayed_until_ms > env.ctx.now
    assert env.st(tps[2]).delayed_until_ms <= env.ctx.now


@pytest.mark.parametrize("version", ["3.7", "2.4"])
def test_fenced_truncation(version):
    # Kafka: AbstractFetcherThreadTest.testFencedTruncation (3.7.0: the fence comes in the
    # Fetch answer, as the partition starts Fetching; 2.4.0: in the OffsetsForLeaderEpoch
    # answer, as the partition starts Truncating)
    env = Env(version)
    env.replica(epoch_zero=version == "2.4")
    if version == "3.7":
        env.add(offset=0, epoch=0, last_fetched_epoch=0)
    else:
        env.add(offset=0, epoch=0, state=TRUNCATING)
    env.leader.set_state(TP, [batch(1, 1, 2)], leader_epoch=1, hw=2)
    env.run_round()
    # no progress
    assert env.log().log_end_offset == 0
    assert env.log().high_watermark == 0
    # fenced: the fetcher no longer tracks the partition (failedPartitions holds it)
    assert env.st() is None


def test_fenced_fetch():
    # Kafka: AbstractFetcherThreadTest.testFencedFetch (3.7.0)
    env = Env("3.7")
    env.replica()
    env.add(offset=0, epoch=0, last_fetched_epoch=0)
    env.leader.set_state(TP, [batch(0, 1, 2)], leader_epoch=0, hw=2)
    env.run_round()
    assert env.log().log_end_offset == 2            # caught up
    env.leader.state(TP).leader_epoch += 1           # a new leader epoch on the leader
    env.run_round()
    assert env.st() is None
    assert TP in env.th.failed_partitions
    assert any("FENCED_LEADER_EPOCH" in line for line in env.ctx.outbox)
    env.add(offset=2, epoch=1, last_fetched_epoch=0)   # the LeaderAndIsr with the new epoch
    assert TP not in env.th.failed_partitions
    env.leader.set_state(TP, [batch(0, 1, 2), batch(1, 3)], leader_epoch=1, hw=3)
    env.run_until_logs_match()


def test_a_fenced_answer_to_an_older_request_epoch_retries():
    # AbstractFetcherThread.onPartitionFenced @2.5.0+: the partition's epoch moved on since the
    # request was sent (a LeaderAndIsr came meanwhile): it stays and retries after the backoff
    env = Env("3.7")
    env.replica()
    env.add(offset=0, epoch=0, last_fetched_epoch=0)
    env.leader.set_state(TP, [batch(0, 1, 2)], leader_epoch=1, hw=2)

    def new_epoch_meanwhile():
        env.th.partitions[TP].current_leader_epoch = 1
        env.th.changed(TP)

    env.callback = new_epoch_meanwhile
    env.run_round()
    st = env.st()
    assert st is not None and TP not in env.th.failed_partitions
    assert st.current_leader_epoch == 1 and st.delayed_until_ms > env.ctx.now
    env.run_until_logs_match()


def test_unknown_leader_epoch_in_truncation():
    # Kafka: AbstractFetcherThreadTest.testUnknownLeaderEpochInTruncation (2.4.0; the same at
    # 3.7.0 with forceTruncation): the follower's epoch is ahead of the leader's
    env = Env("2.4")
    env.replica(epoch_zero=True)
    env.add(offset=0, epoch=1, state=TRUNCATING)
    env.leader.set_state(TP, [batch(0, 1)], leader_epoch=0, hw=2)
    env.run_round()
    # nothing fetched, still truncating
    assert env.log().log_end_offset == 0
    assert env.st().state == TRUNCATING
    env.leader.state(TP).leader_epoch += 1
    env.run_round()
    assert env.log().log_end_offset == 1
    assert env.st().state == FETCHING


def test_unknown_leader_epoch_while_fetching():
    # Kafka: AbstractFetcherThreadTest.testUnknownLeaderEpochWhileFetching (3.7.0)
    env = Env("3.7")
    env.replica()
    env.add(offset=0, epoch=1, last_fetched_epoch=0)
    env.leader.set_state(TP, [batch(0, 1), batch(0, 2)], leader_epoch=1, hw=2)
    env.run_round()
    assert env.log().log_end_offset == 1 and env.st().state == FETCHING
    env.leader.state(TP).leader_epoch = 0             # the leader's epoch goes back
    env.run_round()
    assert env.log().log_end_offset == 1 and env.st().state == FETCHING
    env.leader.state(TP).leader_epoch = 1
    env.run_round()
    assert env.log().log_end_offset == 2 and env.st().state == FETCHING


@pytest.mark.parametrize("version", ["3.7", "2.4"])
def test_truncation(version):
    # Kafka: AbstractFetcherThreadTest.testTruncation (3.7.0: by diverging epochs in Fetch
    # answers; 2.4.0: by rounds of OffsetsForLeaderEpoch, KIP-279)
    env = Env(version)
    env.replica(batches=[batch(0, 1), batch(2, 2), batch(4, 3)], hw=0)
    if version == "3.7":
        env.add(offset=3, epoch=5, last_fetched_epoch=4)
    else:
        env.add(offset=3, epoch=5, state=TRUNCATING)
    env.leader.set_state(TP, [batch(1, 1), batch(3, 2), batch(5, 3)], leader_epoch=5, hw=2)
    env.run_until_logs_match()
    leader = env.leader.state(TP).log
    assert env.log().log_start_offset == leader.log_start_offset
    assert env.log().log_end_offset == leader.log_end_offset
    assert env.log().high_watermark == env.leader.state(TP).hw


def test_truncate_to_high_watermark_if_leader_epoch_request_not_supported():
    # Kafka: AbstractFetcherThreadTest.testTruncateToHighWatermarkIfLeaderEpochRequestNotSupported
    # (3.7.0): no OffsetsForLeaderEpoch (kafkasim: before 0.11, KIP-101), truncate to the HW
    env = Env("0.10.2")
    env.replica(batches=[batch(0, 1), batch(2, 2), batch(4, 3)], hw=2)
    env.add(offset=2, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    assert env.sent(OffsetsForLeaderEpochRequest) == []
    assert env.outbox_lines("truncate to ") == ["truncate to 2 (1 removed): no leader epoch: "
                                                "truncate to HW"]
    assert env.log().log_end_offset == 2
    assert env.st().fetch_offset == 2
    assert env.st().is_ready_for_fetch(env.ctx.now)


def test_truncate_to_high_watermark_if_leader_epoch_info_not_available():
    # Kafka: AbstractFetcherThreadTest.testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable
    # (3.7.0): the follower's log has no epochs (old message format): truncate to the HW
    env = Env("3.7")
    log = env.replica(batches=[batch(0, 1), batch(2, 2), batch(4, 3)], hw=2)
    log.leader_epoch_cache.clear()
    env.add(offset=2, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    assert env.sent(OffsetsForLeaderEpochRequest) == []
    assert len(env.outbox_lines("truncate to 2 ")) == 1
    assert env.log().log_end_offset == 2
    assert env.st().fetch_offset == 2
    assert env.st().is_ready_for_fetch(env.ctx.now)


def test_truncation_skipped_if_no_epoch_change():
    # Kafka: AbstractFetcherThreadTest.testTruncationSkippedIfNoEpochChange (3.7.0). Kafka's
    # addPartitions keeps the fetch state when the leader epoch is the same; in kafkasim that
    # check is Partition.makeFollower's (become_follower_needed): the fetcher is left alone.
    env = Env("3.7")
    env.replica(epoch_zero=True)
    env.add(offset=0, epoch=5, state=TRUNCATING)
    env.leader.set_state(TP, [batch(1, 1), batch(3, 2), batch(5, 3)], leader_epoch=5, hw=2)
    env.run_round()                       # one truncation, then one batch
    assert env.log().log_end_offset == 1
    assert len(env.sent(OffsetsForLeaderEpochRequest)) == 1
    # the same leader epoch again: no restart of the fetcher
    assert not become_follower_needed(env.ctx.rules, 5, 5)
    env.run_round()
    assert len(env.sent(OffsetsForLeaderEpochRequest)) == 1
    assert env.log().log_end_offset == 2


def test_truncation_on_fetch_skipped_if_partition_removed():
    # Kafka: AbstractFetcherThreadTest.testTruncationOnFetchSkippedIfPartitionRemoved (3.7.0);
    # the diverging epochs come in Fetch answers here (Kafka calls truncateOnFetchResponse)
    env = Env("3.7")
    env.replica(batches=[batch(0, 1), batch(2, 2), batch(4, 3), batch(4, 4), batch(4, 5)],
                hw=2)
    env.add(offset=5, epoch=4, last_fetched_epoch=4)
    env.th.do_work(env.ctx)
    req = env.pending()
    env.deliver(FetchResponse(req.correlation_id, (FetchPartitionData(
        *TP, E.NONE, 2, 0, RecordChunk.empty(5), (4, 3)),)))
    assert env.outbox_lines("truncate to ") == [
        "truncate to 3 (2 removed): diverging epoch 4 ends at 3"]
    req = env.pending()                   # the next fetch, from offset 3
    removed = env.th.remove_partition(TP)
    assert removed.fetch_offset == 3
    env.deliver(FetchResponse(req.correlation_id, (FetchPartitionData(
        *TP, E.NONE, 2, 0, RecordChunk.empty(3), (4, 2)),)))
    assert len(env.outbox_lines("truncate to ")) == 1
    assert env.log().log_end_offset == 3


def test_follower_fetch_out_of_range_high():
    # Kafka: AbstractFetcherThreadTest.testFollowerFetchOutOfRangeHigh (3.7.0)
    env = Env("3.7")
    env.replica(batches=[batch(0, 1), batch(2, 2), batch(4, 3)], hw=0)
    env.add(offset=3, epoch=4, last_fetched_epoch=4)
    env.leader.set_state(TP, [batch(0, 1), batch(2, 2), batch(4, 3)], leader_epoch=4, hw=2)
    env.run_round()
    assert env.log().log_end_offset == 3
    assert env.st().state == FETCHING
    # the leader's log changes without a truncation phase: it is empty now
    env.leader.set_state(TP, [], leader_epoch=4, hw=0)
    env.run_round()
    assert env.log().log_end_offset == 0
    assert env.log().log_start_offset == 0
    assert env.log().high_watermark == 0


def test_follower_fetch_out_of_range_low():
    # Kafka: AbstractFetcherThreadTest.testFollowerFetchOutOfRangeLow (3.7.0): the follower's
    # fetch offset is below the leader's log start offset
    env = Env("3.7")
    env.replica(batches=[batch(0, 1)], hw=0)
    env.add(offset=3, epoch=0, last_fetched_epoch=0)
    env.leader.set_state(TP, [batch(4, 3)], leader_epoch=0, hw=2, log_start=2)
    env.run_round()                       # truncation by the diverging epoch
    env.run_round()                       # OFFSET_OUT_OF_RANGE: start over at the log start
    assert env.st().state == FETCHING
    assert env.log().log_start_offset == 2
    assert records(env.log()) == []
    env.run_until_logs_match()
    leader = env.leader.state(TP)
    assert env.log().log_start_offset == leader.log.log_start_offset
    assert env.log().log_end_offset == leader.log.log_end_offset
    assert env.log().high_watermark == leader.hw


def _leader_epoch_change_during_fetch_epochs_from_leader(leader_epoch_on_leader: int) -> None:
    # Kafka: AbstractFetcherThreadTest.testLeaderEpochChangeDuringFetchEpochsFromLeader (3.7.0)
    tp = ("topic", 1)
    env = Env("3.7")
    env.replica(tp, epoch_zero=True)
    env.add(tp, offset=0, epoch=0, state=TRUNCATING)
    env.leader.set_state(tp, [batch(0, 1)], leader_epoch=leader_epoch_on_leader, hw=0)

    def new_epoch_meanwhile():
        # a LeaderAndIsr of epoch 1 while OffsetsForLeaderEpoch is in flight
        env.th.remove_partition(tp)
        env.add(tp, offset=0, epoch=1, state=TRUNCATING)

    env.callback = new_epoch_meanwhile
    env.run_round()
    # the answer is for the old epoch: dropped, not applied (no truncation, no backoff from
    # it); kafkasim's thread then asks again at once, at the new epoch (Kafka's next doWork)
    first, again = env.answered[0], env.answered[1]
    assert isinstance(first, OffsetsForLeaderEpochRequest) and first.partitions[0][2] == 0
    assert isinstance(again, OffsetsForLeaderEpochRequest) and again.partitions[0][2] == 1
    st = env.st(tp)
    assert st.current_leader_epoch == 1
    if leader_epoch_on_leader < 1:
        # the leader, still at epoch 0, cannot answer for epoch 1 (UNKNOWN_LEADER_EPOCH)
        assert st.state == TRUNCATING
        env.leader.set_state(tp, [batch(0, 1)], leader_epoch=1, hw=0)
        env.run_round()
    assert records(env.log(tp)) == records(env.leader.state(tp).log)


def test_leader_epoch_change_during_fenced_fetch_epochs_from_leader():
    # Kafka: AbstractFetcherThreadTest.testLeaderEpochChangeDuringFencedFetchEpochsFromLeader
    # (3.7.0): the leader is at the new epoch already and fences the old one
    _leader_epoch_change_during_fetch_epochs_from_leader(1)


def test_leader_epoch_change_during_successful_fetch_epochs_from_leader():
    # Kafka: AbstractFetcherThreadTest.testLeaderEpochChangeDuringSuccessfulFetchEpochsFromLeader
    # (3.7.0): the leader is still at the old epoch and answers
    _leader_epoch_change_during_fetch_epochs_from_leader(0)


@pytest.mark.parametrize("version", ["3.7", "2.4"])
def test_truncate_to_epoch_end_offsets_during_remove_partitions(version):
    # Kafka: AbstractFetcherThreadTest.testTruncateToEpochEndOffsetsDuringRemovePartitions
    # (3.7.0: the partition is Fetching and the mock leader's callback runs during the Fetch;
    # 2.4.0: it is Truncating and the callback runs during OffsetsForLeaderEpoch)
    env = Env(version)
    if version == "3.7":
        env.replica()
        env.add(offset=0, epoch=0, last_fetched_epoch=0)
    else:
        env.replica(epoch_zero=True)
        env.add(offset=0, epoch=0, state=TRUNCATING)
    env.leader.set_state(TP, [batch(0, 1)], leader_epoch=0, hw=0)
    env.callback = lambda: env.th.remove_partition(TP)
    env.run_round()
    assert env.st() is None
    env.leader.set_state(TP, [batch(0, 1)], leader_epoch=1, hw=0)
    env.run_round()
    assert records(env.log()) == []
    assert env.th.in_flight < 0


def test_diverging_epochs():
    # Kafka: AbstractFetcherThreadTest.testDivergingEpochs (3.7.0)
    env = Env("3.7")
    env.replica(batches=[batch(0, 1), batch(2, 2), batch(4, 3)], hw=0)
    env.add(offset=3, epoch=5, last_fetched_epoch=env.log().latest_epoch())
    assert env.log().log_end_offset == 3
    assert env.st().state == FETCHING and env.st().last_fetched_epoch == 4
    env.leader.set_state(TP, [batch(0, 1), batch(2, 2), batch(5, 4)], leader_epoch=5, hw=2)
    env.run_round()
    assert env.st().state == FETCHING and env.st().last_fetched_epoch == 2
    env.run_until_logs_match()
    assert env.st().state == FETCHING and env.st().last_fetched_epoch == 5


def test_truncate_on_fetch_does_not_process_partition_data():
    # Kafka: AbstractFetcherThreadTest.testTruncateOnFetchDoesNotProcessPartitionData (3.7.0)
    env = Env("3.7")
    env.replica(batches=[batch(0, 1), batch(0, 2), batch(2, 3), batch(4, 4), batch(4, 5),
                         batch(4, 6)], hw=1)
    env.add(offset=3, epoch=5, last_fetched_epoch=env.log().latest_epoch())
    assert env.log().log_end_offset == 6
    assert env.st().last_fetched_epoch == 4
    env.leader.set_state(TP, [batch(0, 1), batch(0, 2), batch(2, 3), batch(5, 7), batch(5, 8)],
                         leader_epoch=5, hw=4)
    env.run_round()
    # one truncation, no partition data processed, so the HW did not move
    assert len(env.outbox_lines("truncate to ")) == 1
    assert env.outbox_lines("replicate ") == []
    assert env.log().log_end_offset == 3
    assert env.log().high_watermark == 1
    env.run_until_logs_match()
    assert env.st().state == FETCHING and env.st().last_fetched_epoch == 5
    assert len(env.outbox_lines("truncate to ")) == 1
    assert len(env.outbox_lines("replicate ")) >= 1
    assert env.log().log_end_offset == 5
    assert env.log().high_watermark == 4


# -- ReplicaFetcherThreadTest (2.7.0): truncation by OffsetsForLeaderEpoch ------------------------
T1P0, T1P1 = ("topic1", 0), ("topic1", 1)


def _follower_with_epochs(env: Env, tp, epochs: list[tuple[int, int]], hw: int) -> Log:
    """A follower log of (epoch, record count) runs."""
    return env.replica(tp, [batch(e, *range(n)) for e, n in epochs], hw=hw)


def _answer_epochs(env: Env, answers: dict) -> OffsetsForLeaderEpochRequest:
    req = env.pending()
    assert isinstance(req, OffsetsForLeaderEpochRequest)
    env.deliver(OffsetsForLeaderEpochResponse(req.correlation_id, tuple(
        (t, p, *answers[(t, p)]) for t, p, _c, _e in req.partitions)))
    return req


def test_fetch_leader_epoch_second_time_if_leader_replies_with_epoch_not_known_to_follower():
    # Kafka: ReplicaFetcherThreadTest
    # .shouldFetchLeaderEpochSecondTimeIfLeaderRepliesWithEpochNotKnownToFollower (2.7.0)
    env = Env("2.7")
    for tp in (T1P0, T1P1):
        # epoch 3 ends at 120, latest epoch 5, LEO 200
        _follower_with_epochs(env, tp, [(3, 1), (3, 119), (5, 80)], hw=198)
        env.add(tp, offset=198, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, 4, 155), T1P1: (E.NONE, 4, 143)})
    # loop 1: both partitions must ask again
    assert len(env.sent(OffsetsForLeaderEpochRequest)) == 2
    assert env.sent(FetchRequest) == []
    _answer_epochs(env, {T1P0: (E.NONE, 3, 101), T1P1: (E.NONE, 3, 102)})
    assert len(env.sent(OffsetsForLeaderEpochRequest)) == 2
    assert len(env.sent(FetchRequest)) == 1
    truncated = [line.split()[2] for line in env.outbox_lines("truncate to ")]
    assert "101" in truncated and "102" in truncated
    assert env.log(T1P0).log_end_offset == 101 and env.log(T1P1).log_end_offset == 102


def test_use_leader_end_offset_if_inter_broker_version_below_20():
    # Kafka: ReplicaFetcherThreadTest.shouldUseLeaderEndOffsetIfInterBrokerVersionBelow20
    # (2.7.0): v0 answers carry no epoch (kafkasim: before 2.0, KIP-279)
    env = Env("1.1")
    for tp in (T1P0, T1P1):
        _follower_with_epochs(env, tp, [(3, 120), (5, 80)], hw=198)
        env.add(tp, offset=198, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, UNDEFINED, 155), T1P1: (E.NONE, UNDEFINED, 143)})
    assert len(env.sent(OffsetsForLeaderEpochRequest)) == 1
    assert len(env.sent(FetchRequest)) == 1
    assert env.log(T1P0).log_end_offset == 155 and env.log(T1P1).log_end_offset == 143
    assert env.st(T1P0).state == FETCHING and env.st(T1P1).state == FETCHING


def test_truncate_to_initial_fetch_offset_if_leader_returns_undefined_offset():
    # Kafka: ReplicaFetcherThreadTest
    # .shouldTruncateToInitialFetchOffsetIfLeaderReturnsUndefinedOffset (2.7.0)
    env = Env("2.7")
    _follower_with_epochs(env, T1P0, [(5, 150)], hw=100)
    env.add(T1P0, offset=100, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, UNDEFINED, UNDEFINED)})
    assert env.outbox_lines("truncate to ")[0].startswith("truncate to 100 ")
    assert env.log(T1P0).log_end_offset == 100


def test_poll_indefinitely_if_leader_returns_any_exception():
    # Kafka: ReplicaFetcherThreadTest.shouldPollIndefinitelyIfLeaderReturnsAnyException (2.7.0)
    env = Env("2.7")
    for tp in (T1P0, T1P1):
        _follower_with_epochs(env, tp, [(5, 300)], hw=100)
        env.add(tp, offset=100, epoch=5, state=TRUNCATING)
    errors = {T1P0: (E.NOT_LEADER_OR_FOLLOWER, UNDEFINED, UNDEFINED),
              T1P1: (UNKNOWN_SERVER_ERROR, UNDEFINED, UNDEFINED)}
    for _ in range(4):
        env.ctx.now += env.ctx.config["replica.fetch.backoff.ms"]
        env.th.do_work(env.ctx)
        _answer_epochs(env, errors)
    assert env.outbox_lines("truncate to ") == []
    assert len(env.sent(OffsetsForLeaderEpochRequest)) == 4
    # a new leader answers for topic1-0
    errors[T1P0] = (E.NONE, 5, 156)
    env.ctx.now += env.ctx.config["replica.fetch.backoff.ms"]
    env.th.do_work(env.ctx)
    _answer_epochs(env, errors)
    assert env.outbox_lines("truncate to ")[-1].startswith("truncate to 156 ")
    assert env.log(T1P0).log_end_offset == 156 and env.log(T1P1).log_end_offset == 300


def test_move_partitions_out_of_truncating_log_state():
    # Kafka: ReplicaFetcherThreadTest.shouldMovePartitionsOutOfTruncatingLogState (2.7.0): the
    # follower's latest epoch 4 ends at its LEO 0
    env = Env("2.7")
    for tp in (T1P0, T1P1):
        log = env.replica(tp)
        log.leader_epoch_cache.assign(4, 0)
        env.add(tp, offset=0, epoch=4, state=TRUNCATING)
    assert env.st(T1P0).state == TRUNCATING and env.st(T1P1).state == TRUNCATING
    env.th.do_work(env.ctx)
    _answer_epochs(env, {T1P0: (E.NONE, 4, 1), T1P1: (E.NONE, 4, 1)})
    assert env.st(T1P0).state == FETCHING and env.st(T1P1).state == FETCHING
    assert env.log(T1P0).log_end_offset == 0 and env.log(T1P1).log_end_offset == 0


def test_filter_partitions_made_leader_during_leader_epoch_request():
    # Kafka: ReplicaFetcherThreadTest.shouldFilterPartitionsMadeLeaderDuringLeaderEpochRequest
    # (2.7.0): topic1-0 leaves the thread while OffsetsForLeaderEpoch is in flight
    env = Env("2.7")
    for tp in (T1P0, T1P1):
        _follower_with_epochs(env, tp, [(5, 100)], hw=98)
        env.add(tp, offset=98, epoch=5, state=TRUNCATING)
    env.th.do_work(env.ctx)
    env.th.remove_partition(T1P0)
    _answer_epochs(env, {T1P0: (E.NONE, 5, 52), T1P1: (E.NONE, 5, 49)})
    truncations = env.outbox_lines("truncate to ")
    assert len(truncations) == 1 and truncations[0].startswith("truncate to 49 ")
    assert env.log(T1P0).log_end_offset == 100
    assert env.log(T1P1).log_end_offset == 49
