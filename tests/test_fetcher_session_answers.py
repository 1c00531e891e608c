"""How ``ReplicaFetcherThread`` takes a leader's answers within an incremental fetch session
(KIP-227; FetchSessionHandler.handleResponse as RemoteLeaderEndPoint.fetch calls it, 3.7):
an answer naming a partition outside the session is ignored and the next fetch is full
(verifyIncrementalFetchResponsePartitions, then nextCloseExistingAttemptNew); an empty or
one-partition answer of the session moves the session to its next epoch."""

from __future__ import annotations

from kafkasim.core import errors as E
from kafkasim.core.fake import FakeContext
from kafkasim.core.fetch_session import INITIAL_EPOCH
from kafkasim.core.fetcher import FETCHING, PartitionFetchState, ReplicaFetcherThread
from kafkasim.core.log import Log
from kafkasim.core.messages import FetchPartitionData, FetchRequest, FetchResponse

SESSION_ID = 77


def _answer(corr: int, *parts, session_id: int = SESSION_ID, error: str = E.NONE):
    return FetchResponse(corr, tuple(parts), error, session_id)


def _records(leader: Log, start: int, end: int, hw: int, topic="t", partition=0):
    return FetchPartitionData(topic, partition, E.NONE, hw, 0,
                              leader.read(start, end, 10**9))


def _setup():
    ctx = FakeContext(2, kafka_version="3.7")
    ctx.partition("t", 0)
    ctx.partition("u", 0)
    leader = Log("t", 0)
    leader.append_as_leader([1, 2, 3], [10] * 3, 0, 100)
    th = ReplicaFetcherThread(2, 1, 0)
    th.add_partition(("t", 0), PartitionFetchState(0, 0, FETCHING))
    th.do_work(ctx)                                  # the full fetch opening the session
    full = ctx.sent[-1][1]
    assert isinstance(full, FetchRequest) and full.session_epoch == INITIAL_EPOCH
    th.on_fetch_response(ctx, _answer(full.correlation_id, _records(leader, 0, 1, 0)))
    assert (th.session.session_id, th.session.epoch) == (SESSION_ID, 1)
    return ctx, th, leader


def test_one_partition_answers_move_the_session_on():
    ctx, th, leader = _setup()
    inc = ctx.sent[-1][1]
    assert (inc.session_id, inc.session_epoch) == (SESSION_ID, 1)
    assert [fp.fetch_offset for fp in inc.partitions] == [1]
    th.on_fetch_response(ctx, _answer(inc.correlation_id, _records(leader, 1, 3, 1)))
    assert ctx.logs[("t", 0)].log_end_offset == 3 and ctx.logs[("t", 0)].high_watermark == 1
    assert th.session.epoch == 2
    nxt = ctx.sent[-1][1]
    assert nxt.session_epoch == 2 and [fp.fetch_offset for fp in nxt.partitions] == [3]
    # an empty incremental answer (nothing changed) is used too
    th.on_fetch_response(ctx, _answer(nxt.correlation_id))
    assert th.session.epoch == 3 and ctx.sent[-1][1].session_epoch == 3


def test_an_answer_naming_a_partition_outside_the_session_is_ignored():
    ctx, th, leader = _setup()
    inc = ctx.sent[-1][1]
    other = Log("u", 0)
    other.append_as_leader([9], [10], 0, 100)
    th.on_fetch_response(ctx, _answer(inc.correlation_id,
                                      _records(other, 0, 1, 1, topic="u")))
    assert ctx.logs[("u", 0)].log_end_offset == 0          # nothing appended
    assert ctx.logs[("t", 0)].log_end_offset == 1
    assert th.session.epoch == INITIAL_EPOCH and th.session.session_id == SESSION_ID
    again = ctx.sent[-1][1]                                # sent at once, full, same session
    assert again.correlation_id != inc.correlation_id
    assert (again.session_id, again.session_epoch) == (SESSION_ID, INITIAL_EPOCH)
    assert [(fp.topic, fp.fetch_offset) for fp in again.partitions] == [("t", 1)]


def test_a_session_error_or_a_closed_session_goes_back_to_a_full_fetch():
    ctx, th, _leader = _setup()
    inc = ctx.sent[-1][1]
    th.on_fetch_response(ctx, _answer(inc.correlation_id, session_id=0,
                                      error=E.FETCH_SESSION_ID_NOT_FOUND))
    assert (th.session.session_id, th.session.epoch) == (0, INITIAL_EPOCH)
    assert ctx.sent[-1][1].session_epoch == INITIAL_EPOCH
