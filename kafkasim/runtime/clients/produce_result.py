"""What a send returns: one ProduceRequestResult per batch and a ProduceResult per record.

Kafka's producer completes a batch once (ProducerBatch.done -> completeFutureAndFireCallbacks
sets its ProduceRequestResult: base offset, error); each ``send`` got a FutureRecordMetadata
holding that result and the record's index in the batch, so a record's offset is the batch's
base offset plus its index and its outcome is the batch's. ``ProduceRequestResult`` is the
batch's, ``ProduceResult`` the record's view of it, and ``ProduceResults`` the producer's
``results`` mapping, which builds a record's ProduceResult when first asked for it.
"""

from __future__ import annotations

from array import array
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
    # the exception's message, when kafkasim has one to give (a send whose wait for metadata
    # failed: KafkaProducer.waitOnMetadata's TimeoutException / InvalidTopicException)
    message: str | None = None

    def __reduce__(self):
        # a flat tuple pickles several times faster than a slotted dataclass's state dict
        args = (self.topic, self.partition, self.status, self.base_offset, self.error,
                self.attempts, self.errors, self.done_ms)
        return (ProduceRequestResult, args if self.message is None else args + (self.message,))


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

    @property
    def message(self) -> str | None:
        """The failure's message (the Java exception's getMessage), where kafkasim has one:
        a send whose wait for metadata failed; None otherwise."""
        return self.result.message

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
        # (-1: a send waiting for its topic's metadata, not partitioned yet)
        where = f"{self.topic}-{self.partition}" if self.partition >= 0 else self.topic
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


#: runs held as tuples before the settled ones among them become columns (``compact``)
COMPACT_RUNS_AT = 4096
#: the newest runs kept as tuples after a compaction (where sends and completions happen)
KEEP_RUNS = 512

_STATUSES = (ACKED, FAILED)   # a settled run's status code: its index here


class SettledRuns:
    """Runs of records whose batches are settled (acked or failed: they never change again),
    as columns: each run's first record id, count, send time and index in its batch, and its
    batch's ProduceRequestResult (topic-partition and error name as indexes into ``names``,
    status as an index into (acked, failed), base offset, attempts, completion time; the
    ``errors`` and ``messages`` of the few that had any, by run). ~50 bytes a run instead of
    ~270 as a tuple with its result."""

    __slots__ = ("firsts", "counts", "sent", "indexes", "tps", "statuses", "base_offsets",
                 "error_names", "attempts", "done", "errors", "names", "name_index", "messages")

    def __init__(self) -> None:
        self.firsts, self.counts = array("q"), array("i")
        self.sent, self.indexes = array("q"), array("i")
        self.tps, self.statuses = array("i"), array("b")
        self.base_offsets, self.error_names = array("q"), array("i")
        self.attempts, self.done = array("i"), array("q")
        self.errors: dict[int, list] = {}   # run -> the errors of its batch (when it had any)
        self.messages: dict[int, str] = {}  # run -> its result's message (when it has one)
        self.names: list = []               # (topic, partition) pairs and error names
        self.name_index: dict = {}

    def __len__(self) -> int:
        return len(self.firsts)

    def _name(self, value) -> int:
        i = self.name_index.get(value)
        if i is None:
            i = self.name_index[value] = len(self.names)
            self.names.append(value)
        return i

    def append(self, run: tuple) -> None:
        first, n, sent_ms, fut, index = run
        if fut.errors:
            self.errors[len(self.firsts)] = fut.errors
        if fut.message is not None:
            self.messages[len(self.firsts)] = fut.message
        self.firsts.append(first)
        self.counts.append(n)
        self.sent.append(sent_ms)
        self.indexes.append(index)
        self.tps.append(self._name((fut.topic, fut.partition)))
        self.statuses.append(_STATUSES.index(fut.status))
        self.base_offsets.append(fut.base_offset)
        self.error_names.append(self._name(fut.error))
        self.attempts.append(fut.attempts)
        self.done.append(fut.done_ms)

    def run(self, j: int) -> tuple:
        """Run ``j`` as the tuple ``ProduceResults.runs`` holds, with a ProduceRequestResult
        equal to its batch's."""
        topic, partition = self.names[self.tps[j]]
        fut = ProduceRequestResult(topic, partition, _STATUSES[self.statuses[j]],
                                   self.base_offsets[j], self.names[self.error_names[j]],
                                   self.attempts[j], self.errors.get(j, NO_ERRORS),
                                   self.done[j], self.messages.get(j))
        return (self.firsts[j], self.counts[j], self.sent[j], fut, self.indexes[j])

    def prefix(self, n: int) -> SettledRuns:
        """A copy of the first ``n`` runs (C-level slices)."""
        out = SettledRuns()
        for name in ("firsts", "counts", "sent", "indexes", "tps", "statuses", "base_offsets",
                     "error_names", "attempts", "done"):
            setattr(out, name, getattr(self, name)[:n])
        out.errors = {j: e for j, e in self.errors.items() if j < n}
        out.messages = {j: m for j, m in self.messages.items() if j < n}
        out.names = list(self.names)
        out.name_index = dict(self.name_index)
        return out

    def __reduce__(self):
        return (_settled_runs, tuple(getattr(self, name) for name in SettledRuns.__slots__))


def _settled_runs(*fields) -> SettledRuns:
    """A SettledRuns from its pickled fields (one pickled before ``messages`` existed keeps
    it empty)."""
    out = SettledRuns()
    for name, value in zip(SettledRuns.__slots__, fields, strict=False):
        setattr(out, name, value)
    return out


class CompactRuns(list):
    """``ProduceResults.runs``: the runs of records in the order sent, the older settled ones
    kept as columns (``settled``, a ``SettledRuns``), the rest as the list's own tuples. It
    *is* a list (the producer appends with ``list.append``) and reads as the list of every run
    would: ``len``, iteration, indexing, slicing (from the start: a ``CompactRuns`` sharing
    nothing changeable), pickling."""

    __slots__ = ("settled",)

    def __init__(self, runs=()) -> None:
        super().__init__(runs)
        self.settled = SettledRuns()

    def __len__(self) -> int:
        return len(self.settled) + list.__len__(self)

    def __iter__(self):
        settled = self.settled
        yield from map(settled.run, range(len(settled)))
        yield from list.__iter__(self)

    def __getitem__(self, index):
        base = len(self.settled)
        if isinstance(index, slice):
            start, stop, step = index.indices(len(self))
            if step != 1:
                return list(self)[index]
            if start == 0:
                out = CompactRuns(list.__getitem__(self, slice(0, max(stop - base, 0))))
                out.settled = self.settled.prefix(min(stop, base))
                return out
            if start >= base:
                return list.__getitem__(self, slice(start - base, max(stop - base, 0)))
            return [self[i] for i in range(start, stop)]
        if index < 0:
            index += len(self)
        if 0 <= index < base:
            return self.settled.run(index)
        if index < 0:
            raise IndexError("run index out of range")
        return list.__getitem__(self, index - base)

    def find(self, rid: int):
        """The run holding record ``rid``, or None (runs' first ids increase)."""
        live = list.__len__(self)
        settled = self.settled
        if live and rid >= list.__getitem__(self, 0)[0]:
            j = bisect_right(self, rid, lo=len(settled), key=_first_id) - 1
            run = self[j]
        else:
            j = bisect_right(settled.firsts, rid) - 1
            if j < 0:
                return None
            run = settled.run(j)
        return run if rid < run[0] + run[1] else None

    def compact_to(self, n: int) -> None:
        """Make runs up to ``n`` (all settled) columns."""
        k = n - len(self.settled)
        if k <= 0:
            return
        append = self.settled.append
        for run in list.__getitem__(self, slice(0, k)):
            append(run)
        del self[:k]   # list's own __delitem__: the tuples now held as columns

    def __eq__(self, other):
        if isinstance(other, list):
            return list(self) == list(other)
        return NotImplemented

    __hash__ = None

    def __add__(self, other):
        return list(self) + list(other)

    def __reduce__(self):
        return (_compact_runs, (self.settled, list(list.__iter__(self))))

    @staticmethod
    def joined(prefix, more: list) -> CompactRuns:
        """The runs of ``prefix`` (a CompactRuns or a list) followed by ``more``."""
        if not isinstance(prefix, CompactRuns):
            return CompactRuns([*prefix, *more])
        out = CompactRuns([*list.__iter__(prefix), *more])
        out.settled = prefix.settled
        return out


def _compact_runs(settled: SettledRuns, live: list) -> CompactRuns:
    out = CompactRuns(live)
    out.settled = settled
    return out


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
        # (first id, count, send time, batch result, index in batch) tuples, the older settled
        # ones as columns
        self.runs = CompactRuns()
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
        if type(rid) is not int:
            return None
        return self.runs.find(rid)

    def settled_prefix(self) -> int:
        """How many runs, from the first, have an acked or failed batch: those up to
        (excluding) the first pending one (counted on from ``settled``: they stay settled)."""
        runs = self.runs
        k = self.settled
        n = len(runs)
        while k < n and runs[k][3].status != PENDING:
            k += 1
        self.settled = k
        return k

    def compact(self) -> None:
        """Keep the settled runs but the newest ``KEEP_RUNS`` as columns, once
        ``COMPACT_RUNS_AT`` runs are tuples (at each metrics sample,
        ``bootstrap.metrics_sample``); reads answer as before."""
        runs = self.runs
        if list.__len__(runs) < COMPACT_RUNS_AT:
            return
        runs.compact_to(min(self.settled_prefix(), len(runs) - KEEP_RUNS))

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
    r.runs, r.count = runs if isinstance(runs, CompactRuns) else CompactRuns(runs), count
    return r
