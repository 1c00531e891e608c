"""Snapshots of a simulation: whole (``snapshot``/``restore``), and sharing what only ever grows, so
keeping one a second stays linear (``dump``/``load``).

``snapshot(cluster)`` pickles everything (the self-contained form: files, Spark), so a History
keeping such a snapshot every simulated second would copy every record, producer result and trace
row again each second: O(T²) time and memory. Most of a long run's state only ever grows at its
end, and what is already there never changes:

- a replica's log columns (``Log.epochs``, ``ids``, ``timestamps``, ``sizes``) and its
  idempotent batch headers (``Log.producer_batches``), and KRaft's metadata log
  (``RaftLog.entries``): appended in place; a truncation or a new log start *replaces* the
  sequence (``Log._truncate``, ``maybe_increment_log_start_offset``, ``RaftLog.truncate_to``);
- the record registry (``RecordRegistry``: the value of every record id, as a ``RunList``);
- a workload's record ids (``RateWorkload.record_runs``); a KRaft client's safety instrumentation
  (``KafkaRaftClient.elected_epochs``, ``leader_hw_history``, and ``committed``: a dict that
  only gains keys, shared by its length like the lists);
- a producer's results (``Producer.results``, a ``ProduceResults``): its runs of records up
  to the first one whose batch is still pending (an acked or failed ``ProduceRequestResult``
  never changes again: ``ProducerBatch.done`` skips a batch already done), the older of them
  kept as columns (``CompactRuns``, whose slices from the start copy the columns);
- the trace and metrics rows;
- what the invariant checks learnt of acknowledged records (``Ghost.acked`` lists and the
  ``acked_by_id`` dict: one entry per acknowledgement, never changed), for a checked History.

``dump(obj)`` pickles ``obj`` with those sequences replaced by ``(reference, length)``: the
snapshot is ``Snapshot(blob, refs)``, ``refs`` holding the live sequences themselves (shared, not
copied). ``load(snapshot)`` rebuilds the state with fresh copies of the first ``length`` items
(one C-level slice each), so the restored simulation appends to its own sequences and never to
those other snapshots share. A producer's runs of records are shared likewise: the settled
prefix as a reference to its list (its length kept in ``ProduceResults.settled``), the pending
rest by value; the ProduceResults built from them are not pickled (built again on access).

Everything else is pickled as usual. A snapshot is only valid in the process that took it (it
holds live objects); ``snapshot(cluster)`` stays the self-contained form (Spark, files).
"""

from __future__ import annotations

import gc
import io
import pickle
import zlib
from contextvars import ContextVar
from itertools import islice
from typing import NamedTuple

from kafkasim.control.kraft.raft import KafkaRaftClient, RaftLog
from kafkasim.core.log import Log
from kafkasim.observe.checks import Ghost
from kafkasim.runtime.clients.produce_result import CompactRuns, ProduceResults
from kafkasim.runtime.cluster import Cluster, RecordRegistry
from kafkasim.runtime.metrics import MetricsRecorder
from kafkasim.runtime.rows import CompactRows
from kafkasim.runtime.trace import Trace
from kafkasim.runtime.workload import RateWorkload
from kafkasim.settings.exceptions import ClusterError

__all__ = ["Snapshot", "dump", "load", "restore", "snapshot", "snapshot_bytes"]


def snapshot(cluster: Cluster) -> bytes:
    """The whole simulation (state, pending events, RNG) as bytes."""
    return pickle.dumps(cluster, protocol=pickle.HIGHEST_PROTOCOL)


def restore(data: bytes) -> Cluster:
    """The Cluster a :func:`snapshot` saved. For trusted snapshots only: a snapshot is a
    pickle, and unpickling data from an untrusted source can run arbitrary code (see the
    warning in Python's ``pickle`` documentation). Restore only bytes this program (or you)
    produced with ``snapshot()``; never a file received from someone else."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise ClusterError(f"restore(data) needs the bytes snapshot() returned, got "
                           f"{type(data).__name__}")
    try:
        c = pickle.loads(data)
    except Exception as exc:   # truncated or foreign bytes: UnpicklingError, EOFError, ...
        raise ClusterError(f"restore(data): these {len(data):,} bytes are not a kafkasim "
                           f"snapshot ({type(exc).__name__}: {exc})") from None
    if not isinstance(c, Cluster):
        raise ClusterError(f"restore(data): the bytes hold a {type(c).__name__}, not a "
                           "Cluster snapshot")
    return c


class Snapshot(NamedTuple):
    """A pickled state (``blob``) and the live append-only sequences it shares (``refs``);
    ``compressed``: the blob is zlib-compressed (``dump(obj, compress=True)``)."""

    blob: bytes
    refs: tuple
    compressed: bool = False


_LOADING: ContextVar = ContextVar("kafkasim_snapshot_refs")


class _Pickler(pickle.Pickler):
    def __init__(self, file) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self.refs: list = []
        self.ref_index: dict[int, int] = {}

    def share(self, seq) -> tuple[int, int]:
        i = self.ref_index.get(id(seq))
        if i is None:
            i = self.ref_index[id(seq)] = len(self.refs)
            self.refs.append(seq)
        return i, len(seq)

    def reducer_override(self, obj):
        t = type(obj)
        if t is Log:
            state = {s: getattr(obj, s) for s in _LOG_PLAIN}
            cols = tuple(self.share(getattr(obj, s)) for s in _LOG_SHARED)
            return _new, (Log,), (state, cols), None, None, _set_log
        if t is Trace or t is MetricsRecorder:
            state = {s: getattr(obj, s) for s in t.__slots__ if s != "rows"}
            return _new, (t,), (state, self.share(obj.rows)), None, None, _set_rows
        if t is RecordRegistry:
            return _new, (t,), (obj.producer_names, self.share(obj.values)), None, None, \
                _set_registry
        if t is RaftLog:
            return _new, (t,), (self.share(obj.entries), obj.snapshot_state()), None, None, \
                _set_raft_log
        if t is RateWorkload or t is KafkaRaftClient:
            state = dict(obj.__dict__)
            for name in _GROWING[t]:
                state[name] = _Shared(*self.share(state[name]))
            return _new, (t,), state, None, None, _set_dict
        if t is Ghost:
            state = obj.__getstate__()
            state["acked"] = {tp: _Shared(*self.share(recs)) for tp, recs in obj.acked.items()}
            state["acked_by_id"] = _Shared(*self.share(obj.acked_by_id))
            return _new, (t,), state, None, None, _set_ghost
        if t is ProduceResults:
            k = obj.settled_prefix()
            shared = _SharedResults(self.share(obj.runs)[0], k, obj.runs[k:], obj.count)
            return _new, (t,), (obj.records, shared), None, None, _set_results
        return NotImplemented


# attributes that only grow: a workload's record ids; a Raft client's safety instrumentation
# (elections won, HWs set, the epoch each committed offset had: inserted, never changed)
_GROWING = {RateWorkload: ("record_runs",),
            KafkaRaftClient: ("elected_epochs", "leader_hw_history", "committed")}
_LOG_SHARED = ("epochs", "ids", "timestamps", "sizes", "producer_batches")
_LOG_PLAIN = tuple(s for s in Log.__slots__ if s not in _LOG_SHARED)


class _Shared(NamedTuple):
    index: int
    length: int


class _SharedResults(NamedTuple):
    runs: int              # the shared list of runs, of which the first ``settled``
    settled: int
    pending: list          # the rest, by value
    count: int


def _new(cls):
    return cls.__new__(cls)


def _copy(ref: tuple[int, int]):
    """A fresh copy of the first ``length`` items of shared sequence ``index``."""
    refs, copies = _LOADING.get()
    got = copies.get(ref)
    if got is None:
        seq = refs[ref[0]]
        if len(seq) < ref[1]:
            raise RuntimeError(f"a shared {type(seq).__name__} shrank from {ref[1]} to "
                               f"{len(seq)} items since the snapshot: it must only grow")
        got = copies[ref] = dict(islice(seq.items(), ref[1])) if type(seq) is dict else \
            seq[:ref[1]]
    return got


def _set_log(obj: Log, state) -> None:
    plain, cols = state
    for name, value in plain.items():
        setattr(obj, name, value)
    for name, ref in zip(_LOG_SHARED, cols, strict=True):
        setattr(obj, name, _copy(ref))


def _set_rows(obj, state) -> None:
    plain, rows = state
    for name, value in plain.items():
        setattr(obj, name, value)
    rows = _copy(rows)
    # a prefix of rows that were never compacted slices to a plain list
    obj.rows = rows if isinstance(rows, CompactRows) else CompactRows(rows)


def _set_registry(obj: RecordRegistry, state) -> None:
    obj.producer_names, values = state
    obj.values = _copy(values)


def _set_raft_log(obj: RaftLog, state) -> None:
    if isinstance(state[0], int):       # taken before KIP-630 snapshots: the entries only
        state = (state, {})
    ref, extra = state
    obj.restore_snapshot_state(extra)
    obj.replace_entries(_copy(ref), extra.get("start_offset", 0))


def _set_dict(obj, state: dict) -> None:
    for name in _GROWING[type(obj)]:
        state[name] = _copy(tuple(state[name]))
    obj.__dict__.update(state)


def _set_ghost(obj: Ghost, state: dict) -> None:
    state["acked"] = {tp: _copy(tuple(ref)) for tp, ref in state["acked"].items()}
    state["acked_by_id"] = _copy(tuple(state["acked_by_id"]))
    obj.__setstate__(state)


def _set_results(obj: ProduceResults, state) -> None:
    obj.records, shared = state
    obj.runs = CompactRuns.joined(_copy((shared.runs, shared.settled)), shared.pending)
    obj.count = shared.count
    obj.views = {}
    obj.settled = shared.settled


def dump(obj, *, compress: bool = False) -> Snapshot:
    """Pickle ``obj`` sharing its append-only sequences (module docstring). ``compress``: keep
    the blob zlib-compressed (level 1: ~1 ms for a 9-broker cluster's ~280 KB, which shrinks
    to a fraction), for snapshots kept long (a History keeps one a simulated second)."""
    f = io.BytesIO()
    p = _Pickler(f)
    was = gc.isenabled()
    gc.disable()    # pickling allocates no cycles; collections would scan the whole heap
    try:
        p.dump(obj)
    finally:
        if was:
            gc.enable()
    blob = f.getvalue()
    if compress:
        return Snapshot(zlib.compress(blob, 1), tuple(p.refs), True)
    return Snapshot(blob, tuple(p.refs))


def load(snap: Snapshot):
    """The object ``dump`` pickled, with fresh copies of the shared sequences."""
    token = _LOADING.set((snap.refs, {}))
    was = gc.isenabled()
    gc.disable()
    try:
        return pickle.loads(zlib.decompress(snap.blob) if snap.compressed else snap.blob)
    finally:
        _LOADING.reset(token)
        if was:
            gc.enable()


def snapshot_bytes(snap: Snapshot) -> int:
    """Bytes the snapshot holds on its own (its blob, compressed if it is; the shared sequences
    are counted once, by whoever holds them)."""
    return len(snap.blob)
