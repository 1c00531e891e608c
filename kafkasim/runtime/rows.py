"""Append-only row lists that keep their older rows compressed, out of memory.

A long run writes rows faster than anything else it keeps: a 9-broker cluster at 1,000 records/s
writes ~400,000 trace rows per simulated minute, ~50 MB as Python tuples. ``CompactRows`` is the
list the trace and the metrics keep their rows in. It *is* a ``list`` (the hot paths append to it
with ``list.append``/``list.extend``, C calls), and it answers every read as the list of all rows
written would -- ``len``, iteration, indexing, slicing, ``==``, ``in``, ``index``, ``count``,
pickling -- while only its last rows stay in memory:

``compact()`` (called once per metrics interval, ``bootstrap.metrics_sample``) moves all but the
last ``KEEP_ROWS`` rows, once ``COMPACT_AT`` are held, into *chunks* of at most ``CHUNK_ROWS``
rows (so reading one old row back, as a seek into the past does, unpickles a few thousand rows,
not the first 56,000): the rows pickled and zlib-compressed (~7 bytes a row instead of ~120),
written to a temporary file that has no name (``tempfile.TemporaryFile``: created
exclusively, unlinked at once or never linked, so nothing can be planted in its place, and gone
with the process). Reading a compacted row reads its chunk
back (the latest chunk read is cached). After that first chunk, a list compacts as soon as
``CHUNK_ROWS`` new rows are held beyond the ``KEEP_ROWS``: the rows written out are then a few
simulated seconds old, still in the processor's caches, and pickling them costs less than cold
rows do (``benchmarks/bench_workload.py``: the reference workload's 240,000 rows took 0.17-0.19 s
in four chunks of 56,000, 0.13-0.15 s in chunks of 4,000).

Chunks never change once written, so a slice from the start (``rows[:n]``, what a History
snapshot's restore takes, ``kafkasim.observe.snapshots``) shares them and copies only the rows
still in memory: seeking and forking stay cheap, and each fork compacts into the same file.
Pickling (``Cluster.snapshot``, ``copy.deepcopy``, a process boundary) writes every row, as a
plain list would.

A run shorter than ``COMPACT_AT`` rows is never compacted: its rows are the list's own items.
"""

from __future__ import annotations

import bisect
import os
import pickle
import tempfile
import threading
import zlib
from array import array
from itertools import chain, islice

__all__ = ["CHUNK_ROWS", "COMPACT_AT", "KEEP_ROWS", "CompactRows", "RangeList", "RunList"]

#: rows held in memory before the older ones are compacted (at the next metrics sample)
COMPACT_AT = 60_000
#: rows kept in memory after a compaction (the last ones: what checkers and ``rows[-1]`` read)
KEEP_ROWS = 4_000
#: once a list has compacted, new rows beyond ``KEEP_ROWS`` that make the next chunk
CHUNK_ROWS = 4_000


class _ChunkFile:
    """One nameless temporary file holding the compressed chunks of one family of row lists (a
    trace and the copies History restores from it); append-only, closed when unreferenced."""

    __slots__ = ("file", "size", "pid", "lock", "cached", "__weakref__")

    def __init__(self) -> None:
        self.file = tempfile.TemporaryFile(prefix="kafkasim-rows-")
        self.size = 0
        self.pid = os.getpid()
        self.lock = threading.Lock()
        self.cached: tuple = (-1, None)    # (offset, rows) of the last chunk read

    def __del__(self) -> None:
        # closed here, not by the file object's own finalizer, which warns (ResourceWarning:
        # "unclosed file") when nothing closed it; nothing to close if creating it failed
        file = getattr(self, "file", None)
        if file is not None:
            file.close()

    def write(self, data: bytes) -> int:
        with self.lock:
            offset = self.size
            if hasattr(os, "pwrite"):   # at an offset: a forked process shares the file position
                os.pwrite(self.file.fileno(), data, offset)
            else:
                self.file.seek(offset)
                self.file.write(data)
                self.file.flush()
            self.size = offset + len(data)
        return offset

    def rows(self, offset: int, nbytes: int) -> list:
        cached = self.cached
        if cached[0] == offset:
            return cached[1]
        if hasattr(os, "pread"):
            data = os.pread(self.file.fileno(), nbytes, offset)
        else:
            with self.lock:
                self.file.seek(offset)
                data = self.file.read(nbytes)
        rows = pickle.loads(zlib.decompress(data))
        self.cached = (offset, rows)
        return rows


class CompactRows(list):
    """A list of rows whose first ``_base`` rows live in compressed chunks (module docstring);
    the list's own items are the rows after them."""

    __slots__ = ("_chunks", "_ends", "_base")

    def __init__(self, iterable=()) -> None:
        list.__init__(self, iterable)
        self._chunks: tuple = ()   # (file, offset, nbytes, nrows) per chunk, oldest first
        self._ends: tuple = ()     # cumulative row counts: chunk i holds rows _ends[i-1].._ends[i]
        self._base = 0             # rows in chunks

    # -- writing ----------------------------------------------------------------------------
    def compact(self, at: int | None = None, keep: int | None = None) -> bool:
        """Move all but the last ``keep`` rows into a chunk once ``at`` rows are in memory (by
        default ``COMPACT_AT``, then ``keep + CHUNK_ROWS`` once a chunk is written); True when
        it did."""
        keep = KEEP_ROWS if keep is None else keep
        if at is None:
            at = keep + CHUNK_ROWS if self._base else COMPACT_AT
        held = list.__len__(self)
        if held < at or held <= keep:
            return False
        n = held - keep
        store = self._chunks[-1][0] if self._chunks else None
        if store is None or store.pid != os.getpid():   # a forked process writes its own file
            store = _ChunkFile()
        for start in range(0, n, CHUNK_ROWS):   # chunks of at most CHUNK_ROWS rows: reading
            rows = list.__getitem__(self, slice(start, min(n, start + CHUNK_ROWS)))
            data = zlib.compress(pickle.dumps(rows, pickle.HIGHEST_PROTOCOL), 1)
            offset = store.write(data)          # one row back (a seek) reads one small chunk
            self._chunks = (*self._chunks, (store, offset, len(data), len(rows)))
            self._base += len(rows)
            self._ends = (*self._ends, self._base)
        list.__delitem__(self, slice(0, n))
        return True

    def _chunk(self, i: int) -> list:
        store, offset, nbytes, _n = self._chunks[i]
        return store.rows(offset, nbytes)

    def _expand(self) -> None:
        """Bring every row back into memory (before an edit that is not an append)."""
        if self._base:
            rows = list(self)
            list.__init__(self, rows)
            self._chunks, self._ends, self._base = (), (), 0

    # -- reading ----------------------------------------------------------------------------
    def __len__(self) -> int:
        return self._base + list.__len__(self)

    def __bool__(self) -> bool:
        return self._base > 0 or list.__len__(self) > 0

    def __iter__(self):
        if not self._base:
            return list.__iter__(self)
        return chain(chain.from_iterable(self._chunk(i) for i in range(len(self._chunks))),
                     list.__iter__(self))

    def __reversed__(self):
        if not self._base:
            return list.__reversed__(self)
        return chain(list.__reversed__(self), chain.from_iterable(
            reversed(self._chunk(i)) for i in range(len(self._chunks) - 1, -1, -1)))

    def __getitem__(self, index):
        base = self._base
        if not base:
            return list.__getitem__(self, index)
        if isinstance(index, slice):
            return self._slice(index)
        i = index.__index__()
        n = base + list.__len__(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("list index out of range")
        if i >= base:
            return list.__getitem__(self, i - base)
        c = bisect.bisect_right(self._ends, i)
        return self._chunk(c)[i - (self._ends[c - 1] if c else 0)]

    def _slice(self, index: slice):
        base = self._base
        start, stop, step = index.indices(base + list.__len__(self))
        if step != 1:
            return list(self)[index]
        if start >= base:     # the rows in memory (a checker's new rows)
            return list.__getitem__(self, slice(start - base, stop - base))
        if start == 0 and stop > 0:
            return self._prefix(stop)
        return list(islice(self, start, stop)) if stop > start else []

    def _prefix(self, stop: int) -> CompactRows:
        """The first ``stop`` rows (History's restore): the chunks wholly inside them are
        shared, and only the rows past the last of those are held in memory (at most one chunk
        read back, when the prefix ends inside a chunk written after the snapshot was taken)."""
        base = self._base
        if stop >= base:
            out = CompactRows(list.__getitem__(self, slice(0, stop - base)))
            out._chunks, out._ends, out._base = self._chunks, self._ends, base
            return out
        c = bisect.bisect_right(self._ends, stop)   # chunks 0..c-1 end at or before stop
        kept = self._ends[c - 1] if c else 0
        out = CompactRows(self._chunk(c)[:stop - kept] if stop > kept else ())
        out._chunks, out._ends, out._base = self._chunks[:c], self._ends[:c], kept
        return out

    def __contains__(self, row) -> bool:
        return any(r == row for r in self) if self._base else list.__contains__(self, row)

    def index(self, row, start=0, stop=None):
        if not self._base:
            return list.index(self, row, start, *(() if stop is None else (stop,)))
        n = len(self)
        lo, hi, _ = slice(start, stop).indices(n)
        for i, r in enumerate(islice(self, lo, hi), lo):
            if r == row:
                return i
        raise ValueError(f"{row!r} is not in list")

    def count(self, row) -> int:
        return sum(1 for r in self if r == row) if self._base else list.count(self, row)

    def copy(self) -> list:
        return list(self)

    def __eq__(self, other):
        if not self._base and not (isinstance(other, CompactRows) and other._base):
            return list.__eq__(self, other)
        if not isinstance(other, list):
            return NotImplemented
        return len(self) == len(other) and all(a == b for a, b in zip(self, other, strict=True))

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    __hash__ = None

    def __add__(self, other):
        return list(self) + list(other)

    def __repr__(self) -> str:
        return repr(list(self)) if self._base else list.__repr__(self)

    def __reduce__(self):
        return (CompactRows, (list(self),))

    def __copy__(self):
        out = CompactRows(list.__getitem__(self, slice(None)))
        out._chunks, out._ends, out._base = self._chunks, self._ends, self._base
        return out


def _expanding(name: str):
    method = getattr(list, name)

    def edit(self, *args):
        self._expand()
        return method(self, *args)

    edit.__name__ = name
    edit.__doc__ = f"list.{name}, with every row brought back into memory first."
    return edit


def _comparing(name: str):
    method = getattr(list, name)

    def compare(self, other):
        return method(list(self) if self._base else self, other)

    compare.__name__ = name
    return compare


for _name in ("__setitem__", "__delitem__", "insert", "pop", "remove", "sort", "reverse",
              "__imul__"):
    setattr(CompactRows, _name, _expanding(_name))
for _name in ("__lt__", "__le__", "__gt__", "__ge__", "__mul__", "__rmul__"):
    setattr(CompactRows, _name, _comparing(_name))


def _clear(self) -> None:
    list.clear(self)
    self._chunks, self._ends, self._base = (), (), 0


CompactRows.clear = _clear


class RangeList:
    """A list of ``range`` objects (step 1) kept as two arrays, their starts and stops: 16
    bytes a range instead of ~130 (``RateWorkload.record_runs``, one range a tick). Reads as a
    list of the ranges would: ``len``, iteration, indexing, slicing (a ``RangeList``), ``==``."""

    __slots__ = ("starts", "stops")

    def __init__(self, ranges=()) -> None:
        self.starts = array("q")
        self.stops = array("q")
        for r in ranges:
            self.append(r)

    def append(self, r: range) -> None:
        if type(r) is not range or r.step != 1:
            raise TypeError(f"a RangeList holds ranges of step 1, got {r!r}")
        self.starts.append(r.start)
        self.stops.append(r.stop)

    def __len__(self) -> int:
        return len(self.starts)

    def __iter__(self):
        return map(range, self.starts, self.stops)

    def __getitem__(self, index):
        if isinstance(index, slice):
            out = RangeList()
            out.starts, out.stops = self.starts[index], self.stops[index]
            return out
        return range(self.starts[index], self.stops[index])

    def __eq__(self, other):
        if isinstance(other, RangeList):
            return self.starts == other.starts and self.stops == other.stops
        if isinstance(other, list):
            return list(self) == other
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"RangeList({list(self)!r})"

    def __reduce__(self):
        return (_range_list, (self.starts, self.stops))


def _range_list(starts, stops) -> RangeList:
    out = RangeList()
    out.starts, out.stops = starts, stops
    return out


class RunList:
    """A list whose consecutive repeats of one object are kept as one run: the index each run
    starts at (``starts``) and its object (``items``), 8 bytes and a pointer a run instead of a
    pointer an item (``RecordRegistry``'s values: a generated run of records shares one
    value). Reads as the list would: ``len``, indexing (the very object
    stored), iteration, slicing from the start (a ``RunList``), ``==``, pickling. Only grows."""

    __slots__ = ("starts", "items", "length")

    def __init__(self, items=()) -> None:
        self.starts = array("q")
        self.items: list = []
        self.length = 0
        self.extend(items)

    def append(self, item) -> None:
        if not self.items or self.items[-1] is not item:
            self.starts.append(self.length)
            self.items.append(item)
        self.length += 1

    def repeat(self, item, k: int) -> None:
        """``extend([item] * k)`` without the list."""
        items = self.items
        if items and items[-1] is item:   # the last run goes on (a registry's usual case)
            self.length += k
        elif k > 0:
            self.starts.append(self.length)
            items.append(item)
            self.length += k

    def extend(self, items) -> None:
        for item in items:
            self.append(item)

    def __len__(self) -> int:
        return self.length

    def __getitem__(self, index):
        if isinstance(index, slice):
            start, stop, step = index.indices(self.length)
            if start != 0 or step != 1:
                return list(self)[index]
            out = RunList()
            j = bisect.bisect_left(self.starts, stop)   # runs starting below ``stop``
            out.starts, out.items, out.length = self.starts[:j], self.items[:j], stop
            return out
        if index < 0:
            index += self.length
        if not 0 <= index < self.length:
            raise IndexError("RunList index out of range")
        return self.items[bisect.bisect_right(self.starts, index) - 1]

    def __iter__(self):
        ends = chain(islice(self.starts, 1, None), (self.length,))
        for start, end, item in zip(self.starts, ends, self.items, strict=True):
            for _ in range(end - start):
                yield item

    def __eq__(self, other):
        if isinstance(other, (RunList, list, tuple)):
            return len(self) == len(other) and all(
                a is b or a == b for a, b in zip(self, other, strict=True))
        return NotImplemented

    __hash__ = None

    def __repr__(self) -> str:
        return f"RunList({list(self)!r})"

    def __reduce__(self):
        return (_run_list, (self.starts, self.items, self.length))


def _run_list(starts, items, length) -> RunList:
    out = RunList()
    out.starts, out.items, out.length = starts, items, length
    return out
