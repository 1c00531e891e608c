"""The replica fetcher appends through Partition.appendRecordsToFollowerOrFutureReplica
(ReplicaFetcherThread.processPartitionData: ``partition.appendRecordsToFollowerOrFutureReplica(
records, isFuture = false)``, ReplicaFetcherThread.scala @3.9.0; with the fetch state's current
leader epoch @4.3.0), so KAFKA-6975's rule runs in the fetcher's path: a follower whose log is
empty at its log start offset (after truncateFullyAndStartAt) takes a fetched batch that
contains that offset by restarting its log at the batch's first offset (the leader's log start
inside a batch, after DeleteRecords; Partition.scala:1321-1347@3.7.0, 1189-1217@4.3.0).

kafkasim's leader reads from the fetch offset exactly, so the fetcher below is answered by hand
(tests/test_fetcher_thread_kafka's ``Env``: a ReplicaFetcherThread on a FakeContext). A batch
the follower refuses (UnexpectedAppendOffsetException) marks the partition failed
(AbstractFetcherThread.processFetchRequest's ``case t: Throwable => markPartitionFailed``,
AbstractFetcherThread.scala:392-396@3.9.0; KIP-461, 2.3.0); before 2.3 the fetcher thread
stopped, which kafkasim does not model (the refusal is raised).
"""

from __future__ import annotations

import pytest
from test_fetcher_thread_kafka import TP, Env

from kafkasim.core import errors as E
from kafkasim.core.fetcher import FETCHING
from kafkasim.core.log import Log
from kafkasim.core.messages import FetchPartitionData, FetchRequest, FetchResponse


def _leader_records(base: int, count: int, epoch: int):
    """``count`` records of leader epoch ``epoch`` from offset ``base``, as a leader reads
    them."""
    log = Log(*TP)
    log.truncate_fully_and_start_at(base)
    log.append_as_leader(list(range(count)), [10] * count, epoch, 0)
    return log.read(base, base + count, 10**9)


@pytest.mark.parametrize("version", ["3.9", "4.3"])
def test_fetcher_restarts_an_empty_follower_log_at_the_batch(version):
    """The follower's log was restarted at 5 (empty: LEO = log start = 5) and fetches from 5;
    the leader's batch holds offsets 4-6 (its log start, 5, inside it). The follower's log
    restarts at 4 and takes the batch: LEO 7, log start 4 (the leader's log start, 5, then
    moves it up: maybeIncrementLogStartOffset), next fetch from 7."""
    env = Env(version)
    log = env.replica()
    env.ctx.partitions[TP].truncate_fully_and_start_at(5)
    env.add(offset=5, epoch=0)
    env.th.do_work(env.ctx)
    req = env.pending()
    assert isinstance(req, FetchRequest) and req.partitions[0].fetch_offset == 5
    pd = FetchPartitionData(TP[0], TP[1], E.NONE, 7, 5, _leader_records(4, 3, 0),
                            log_end_offset=7)
    env.deliver(FetchResponse(req.correlation_id, (pd,), E.NONE, 0))
    assert log.log_end_offset == 7
    assert log.log_start_offset == 5 and log.high_watermark == 7
    st = env.st()
    assert (st.state, st.fetch_offset) == (FETCHING, 7)



def _refused_batch(env: Env):
    """The empty follower log at 5 fetching from 5 is answered offsets 2-3 (wholly below)."""
    log = env.replica()
    env.ctx.partitions[TP].truncate_fully_and_start_at(5)
    env.add(offset=5, epoch=0)
    env.th.do_work(env.ctx)
    req = env.pending()
    pd = FetchPartitionData(TP[0], TP[1], E.NONE, 5, 5, _leader_records(2, 2, 0),
                            log_end_offset=5)
    return log, FetchResponse(req.correlation_id, (pd,), E.NONE, 0)


@pytest.mark.parametrize("version", ["2.3", "3.9", "4.3"])
def test_refused_append_marks_the_partition_failed(version):
    """A batch wholly below the empty log's start is refused (UnexpectedAppendOffsetException,
    not a restart: it does not contain the log start); the partition leaves the fetcher as a
    failed partition until the next LeaderAndIsr, the log unchanged."""
    env = Env(version)
    log, resp = _refused_batch(env)
    env.deliver(resp)
    assert (log.log_end_offset, log.log_start_offset) == (5, 5)
    assert env.st() is None and TP in env.th.failed_partitions
    assert any("removed until the next LeaderAndIsr" in line
               for line in env.outbox_lines("ReplicaFetcherThread"))


def test_refused_append_is_raised_before_2_3():
    """AbstractFetcherThread.processFetchRequest @2.2.0 rethrows it as a KafkaException and the
    thread stops; kafkasim raises it."""
    env = Env("2.2")
    log, resp = _refused_batch(env)
    with pytest.raises(E.UnexpectedAppendOffsetException):
        env.deliver(resp)
    assert (log.log_end_offset, log.log_start_offset) == (5, 5)
