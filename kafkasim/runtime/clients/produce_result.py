"""What a send returns: one ProduceRequestResult per batch and a ProduceResult per record.

Kafka's producer completes a batch once (ProducerBatch.done -> completeFutureAndFireCallbacks
sets its ProduceRequestResult: base offset, error); each ``send`` got a FutureRecordMetadata
holding that result and the record's index in the batch, so a record's offset is the batch's
base offset plus its index and its outcome is the batch's. ``ProduceRequestResult`` is the
batch's, ``ProduceResult`` the record's view of it, and ``ProduceResults`` the producer's
``results`` mapping, which builds a record's ProduceResult when first asked for it.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Mapping
from dataclasses import dataclass, field
from operator import itemgetter

PENDING = "pending"
ACKED = "acked"
FAILED = "failed"


class _NoErrors(list):
    """The ``errors`` of every batch result that has had none: one shared, unchangeable empty
    list (a result gets its own list at its first error), so a long run's results do not each
    hold an empty list. Compares, iterates and pickles as the empty list it is."""

    __slots__ = ()

    def _unchangeable(self, *args, **kwargs):
        raise TypeError("a ProduceResult without errors shares this empty list: assign a new "
                        "list to .errors instead of changing it")

    append = extend = insert = remove = pop = clear = sort = reverse = _unchangeable
    __setitem__ = __delitem__ = __iadd__ = __imul__ = _unchangeable

    def __reduce__(self):
        return (_no_errors, ())


NO_ERRORS = _NoErrors()


def _no_errors() -> _NoErrors:
    return NO_ERRORS


@dataclass(slots=True)
class ProduceRequestResult:
    """The outcome of one batch, shared by all its records: Kafka's ProduceRequestResult (one
    per ProducerBatch, its ``produceFuture``), set once when the batch completes
    (ProducerBatch.done -> completeFutureAndFireCallbacks: base offset and error), plus what the
    simulator reports of the batch's sends: the error of every failed attempt (``errors``), the
    attempts so far and when it completed. A record's outcome is its batch's (from 3.0 a failed
    batch's records can carry different exceptions, ``errorsByIndex``, from the broker's
    KIP-467 record errors of INVALID_RECORD: the simulated broker returns none)."""

    topic: str
    partition: int
    status: str = PENDING
    base_offset: int = -1     # the batch's first offset once acked (-1: acks=0, or failed)
    error: str | None = None
    attempts: int = 0
    errors: list[str] = field(default_factory=list)   # error of every failed attempt
    done_ms: int = -1

    def __reduce__(self):
        # a flat tuple pickles several times faster than a slotted dataclass's state dict
        return (ProduceRequestResult, (self.topic, self.partition, self.status,
                                       self.base_offset, self.error, self.attempts,
                                       self.errors, self.done_ms))


class ProduceResult:
    """The outcome of one ``send``: offset once acknowledged, or Kafka's error name.

    Kafka's FutureRecordMetadata: the batch's ProduceRequestResult (``result``) and the record's
    index in its batch (``batch_index``); its offset is the batch's base offset plus that index
    and its status, error, attempts, errors and completion time are the batch's, so a batch's
    completion settles all its records at once. ``ProduceResult(record_id, topic, partition,
    value, status, offset, error, attempts, errors, sent_ms, done_ms)`` builds one on a result of
    its own."""

    __slots__ = ("record_id", "value", "sent_ms", "result", "batch_index")

    #: the fields, in the constructor's order
    FIELDS = ("record_id", "topic", "partition", "value", "status", "offset", "error",
              "attempts", "errors", "sent_ms", "done_ms")

    def __init__(self, record_id: int, topic: str, partition: int, value: object,
                 status: str = PENDING, offset: int = -1, error: str | None = None,
                 attempts: int = 0, errors: list[str] | None = None, sent_ms: int = -1,
                 done_ms: int = -1) -> None:
        self.record_id = record_id
        self.value = value
        self.sent_ms = sent_ms
        self.result = ProduceRequestResult(topic, partition, status, offset, error, attempts,
                                           [] if errors is None else errors, done_ms)
        self.batch_index = 0

    @property
    def topic(self) -> str:
        return self.result.topic

    @property
    def partition(self) -> int:
        return self.result.partition

    @property
    def status(self) -> str:
        return self.result.status

    @property
    def offset(self) -> int:
        """FutureRecordMetadata.valueOrError: the batch's base offset plus the record's index
        (-1 while pending, after a failure, or with acks=0)."""
        base = self.result.base_offset
        return base + self.batch_index if base >= 0 else -1

    @property
    def error(self) -> str | None:
        return self.result.error

    @property
    def attempts(self) -> int:
        return self.result.attempts

    @property
    def errors(self) -> list[str]:
        return self.result.errors

    @property
    def done_ms(self) -> int:
        return self.result.done_ms

    def _fields(self) -> tuple:
        return tuple(getattr(self, name) for name in ProduceResult.FIELDS)

    def __eq__(self, other):
        if type(other) is not ProduceResult:
            return NotImplemented
        return self._fields() == other._fields()

    __hash__ = None   # equal by value and changing as the simulation runs, as the dataclass was

    def __reduce__(self):
        # the view itself: a record's result keeps following its batch's after a restore
        return (_view, (self.record_id, self.value, self.sent_ms, self.result,
                        self.batch_index))

    @property
    def acked(self) -> bool:
        return self.result.status == ACKED

    @property
    def latency_ms(self) -> int:
        done = self.result.done_ms
        return done - self.sent_ms if done >= 0 else -1

    def __repr__(self) -> str:
        where = f"{self.topic}-{self.partition}"
        if self.status == ACKED:
            return f"<acked {self.value!r} at {where}@{self.offset}>"
        if self.status == FAILED:
            return f"<failed {self.value!r} to {where}: {self.error}>"
        return f"<pending {self.value!r} to {where}>"


def _view(record_id: int, value, sent_ms: int, result: ProduceRequestResult,
          batch_index: int) -> ProduceResult:
    """The ProduceResult of the ``batch_index``-th record of the batch whose result is
    ``result`` (FutureRecordMetadata(result, batchIndex, createTimestamp, ...))."""
    r = object.__new__(ProduceResult)   # the fields set here, as in Producer._send_run
    r.record_id = record_id
    r.value = value
    r.sent_ms = sent_ms
    r.result = result
    r.batch_index = batch_index
    return r


class ProduceResults(Mapping):
    """``Producer.results``: the ProduceResult of every record sent, by record id, in the order
    sent. A record's ProduceResult is built on its first access and kept (``results[rid] is
    results[rid]``); until then it is known by the run of records it was sent in: a send appends
    one ``(first record id, count, send time, batch result, batch index of the first)`` per
    batch its records went to (their ids are consecutive: ``RecordRegistry.new_many``), so a
    send stores no object per record, and a batch's completion settles its records by setting
    its ProduceRequestResult once. The record values are the cluster's record registry's."""

    __slots__ = ("records", "runs", "count", "views", "settled")

    def __init__(self, records) -> None:
        self.records = records    # the cluster's RecordRegistry (values)
        self.runs: list[tuple[int, int, int, ProduceRequestResult, int]] = []
        self.count = 0            # records in all runs
        self.views: dict[int, ProduceResult] = {}   # the ProduceResults built so far
        # how many runs, from the first, are known to be acked or failed (they stay so): where
        # kafkasim.observe.snapshots resumes counting the prefix it shares
        self.settled = 0

    def _build(self, rid: int, run: tuple) -> ProduceResult:
        first, _n, sent_ms, fut, index = run
        r = self.views[rid] = _view(rid, self.records.value(rid), sent_ms, fut,
                                    index + rid - first)
        return r

    def _run_of(self, rid):
        """The run holding record ``rid``, or None."""
        runs = self.runs
        if type(rid) is not int:
            return None
        j = bisect_right(runs, rid, key=_first_id) - 1   # the last run starting at or before
        if j < 0 or rid >= runs[j][0] + runs[j][1]:
            return None
        return runs[j]

    def __getitem__(self, rid) -> ProduceResult:
        r = self.views.get(rid)
        if r is None:
            run = self._run_of(rid)
            if run is None:
                raise KeyError(rid)
            r = self._build(rid, run)
        return r

    def __contains__(self, rid) -> bool:
        return rid in self.views or self._run_of(rid) is not None

    def __iter__(self):
        for first, n, _sent, _fut, _index in self.runs:
            yield from range(first, first + n)

    def __len__(self) -> int:
        return self.count

    def __repr__(self) -> str:
        return repr(dict(self.items()))

    def values(self) -> list[ProduceResult]:
        """Every ProduceResult, in the order sent (built where not yet), as a list."""
        return self.with_status(None)

    def items(self) -> list[tuple[int, ProduceResult]]:
        """Every (record id, ProduceResult), in the order sent, as a list."""
        return [(r.record_id, r) for r in self.with_status(None)]

    def with_status(self, status: str | None) -> list[ProduceResult]:
        """The results whose batch has this status (None: all), in the order sent."""
        views = self.views
        out = []
        for run in self.runs:
            if status is None or run[3].status == status:
                first = run[0]
                for rid in range(first, first + run[1]):
                    r = views.get(rid)
                    out.append(r if r is not None else self._build(rid, run))
        return out

    def __reduce__(self):
        # the runs; the ProduceResults built so far are built again on access
        return (_results, (self.records, self.runs, self.count))


_first_id = itemgetter(0)   # a run's first record id


def _results(records, runs: list, count: int) -> ProduceResults:
    r = ProduceResults(records)
    r.runs, r.count = runs, count
    return r
