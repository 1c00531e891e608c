"""The event trace: one typed row per thing that happened, convertible to a pandas DataFrame.

A row is ``(time_ms, kind, node, topic, partition, detail)`` made of ints, strings and tuples only,
so the trace digest is identical in every process. ``kind`` values are documented in
``EVENT_KINDS``; ``detail`` is a record of ``kafkasim.core.events`` (named fields, the text in
``str(detail)``), or for the hot data-path kinds the plain tuple / int its record class names.
Every kind, record and field: docs/trace-events.md.

Bounded memory by default: ``rows`` is a ``CompactRows`` (``kafkasim.runtime.rows``), a list that
holds every row of the run for every reader while, once 60,000 rows are in memory, the next
metrics sample compacts all but the last 4,000 into a nameless temporary file, and from then on
every 4,000 new rows (``CHUNK_ROWS``) (a 3-broker cluster
at 1,000 records/s writes ~5,000 rows per simulated second with message tracing, ~1 MiB: a run
of up to ~12 simulated seconds is never compacted). Reading compacted rows reads them back; a
History's restore shares them. ``spill_to`` is the other way, for Parquet files: once ``rows`` holds
``max_rows`` rows, the next metrics sample (``Cluster._metrics_sample``, once per
``metrics_interval_ms``) writes them to a Parquet file in the spill directory (the columns of
``to_frame`` plus ``repr``, each row's repr) and starts a new list; ``spilled`` counts the rows
written out. ``digest()`` and ``to_frame()`` read the files back, so they cover the whole run
and are identical to an unspilled trace's; ``rows``, ``events`` and ``where`` (and the views and
checks built on them) hold the rows since the last spill only. The invariant checkers follow
the trace by absolute row number (``total``), so they see every row before it is spilled.
"""

from __future__ import annotations

import hashlib
import itertools
import os
import tempfile

from kafkasim.core.events import EVENT_KINDS, TextEvent, typed
from kafkasim.runtime import validation
from kafkasim.runtime.rows import CompactRows

__all__ = ["COLUMNS", "EVENT_KINDS", "Trace"]

COLUMNS = ["time_ms", "event", "node", "topic", "partition", "detail"]
_PARTS = itertools.count()   # spill file names unique within the process (branches of a History)


def _detail_text(d) -> str:
    return d if isinstance(d, str) else d.text if isinstance(d, TextEvent) else \
        ("" if d is None else repr(d))


class Trace:
    __slots__ = ("rows", "enabled", "messages", "spilled", "spill_dir", "spill_rows",
                 "spill_files", "clock")

    def __init__(self, enabled: bool = True, messages: bool = True, clock=None) -> None:
        self.rows: list[tuple] = CompactRows()
        # what ``record`` stamps rows with (its ``now``): the cluster, whose engine a widget may
        # replace by a hooked one in the same state (kafkasim.widgets.recording.HookedEngine)
        self.clock = clock
        self.enabled = enabled
        self.messages = messages  # record send/recv of every RPC (needed for space-time diagrams)
        self.spilled = 0          # rows written to spill_files (no longer in rows)
        self.spill_dir: str | None = None
        self.spill_rows = 0
        self.spill_files: tuple[str, ...] = ()

    def __setstate__(self, state) -> None:
        """Snapshots taken before spilling existed carry no spill fields."""
        _dict, slots = state if isinstance(state, tuple) else (None, state)
        for name in Trace.__slots__:
            setattr(self, name, slots.get(name, _SPILL_DEFAULTS.get(name)))
        if type(self.rows) is list:   # a snapshot taken before rows were compacted
            self.rows = CompactRows(self.rows)

    def record(self, kind: str, node, topic: str = "", partition: int = -1, detail=None) -> None:
        """Append a row (now, kind, node, topic, partition, detail), stamped with the clock's
        current time."""
        self.rows.append((self.clock.now, kind, node, topic, partition, detail))

    def __len__(self) -> int:
        return self.spilled + len(self.rows)

    @property
    def total(self) -> int:
        """Rows written since the start, spilled ones included (an absolute row number)."""
        return self.spilled + len(self.rows)

    # -- bounded memory -----------------------------------------------------------------------
    def spill_to(self, directory: str, max_rows: int = 100_000) -> None:
        """Keep at most about ``max_rows`` rows in memory: older ones go to Parquet files in
        ``directory`` (module docstring)."""
        validation.check_directory("spill_to", directory)
        if not isinstance(max_rows, int) or isinstance(max_rows, bool) or max_rows < 1:
            raise ValueError(f"max_rows must be an int >= 1, got {max_rows!r}")
        try:
            import pyarrow.parquet  # noqa: F401  (now, not at the first spill hours later)
        except ImportError as exc:
            raise ImportError(f"Trace.spill_to writes Parquet files with pyarrow, which cannot "
                              f"be imported: {exc} (pip install pyarrow)") from exc
        os.makedirs(directory, exist_ok=True)
        self.spill_dir = os.fspath(directory)
        self.spill_rows = max_rows

    def compact(self) -> bool:
        """Compact the older rows in memory (``kafkasim.runtime.rows``) unless they spill to
        Parquet (``spill_to``); True when it did."""
        if self.spill_dir is not None:
            return self.maybe_spill()
        compact = getattr(self.rows, "compact", None)
        return compact() if compact is not None else False

    def maybe_spill(self) -> bool:
        """Write the rows out when ``max_rows`` are held; True when it did."""
        rows = self.rows
        if self.spill_dir is None or len(rows) < self.spill_rows:
            return False
        import pyarrow as pa
        import pyarrow.parquet as pq

        cols = list(zip(*rows, strict=True))
        table = pa.table({
            "time_ms": pa.array(cols[0], pa.int64()),
            "event": pa.array(cols[1], pa.string()),
            "node": pa.array([str(n) for n in cols[2]], pa.string()),
            "topic": pa.array(cols[3], pa.string()),
            "partition": pa.array(cols[4], pa.int64()),
            "detail": pa.array([_detail_text(d) for d in cols[5]], pa.string()),
            "repr": pa.array([repr(r) for r in rows], pa.string()),
        })
        # a fresh file under an unpredictable name, created exclusively (mkstemp: O_CREAT |
        # O_EXCL, so a file or symlink planted under a guessed name is never opened)
        fd, path = tempfile.mkstemp(prefix=f"trace-{next(_PARTS):06d}-{self.spilled:012d}-",
                                    suffix=".parquet", dir=self.spill_dir)
        with os.fdopen(fd, "wb") as out:
            pq.write_table(table, out)
        self.spill_files = (*self.spill_files, path)
        self.spilled += len(rows)
        # a new list, not cleared in place: History snapshots may share this one (a list
        # subclass keeps its class and slot attributes: the experiments' availability hook)
        fresh = type(rows)()
        for name in getattr(type(rows), "__slots__", ()):
            if name not in CompactRows.__slots__:   # not the compacted rows just written out
                setattr(fresh, name, getattr(rows, name))
        self.rows = fresh
        return True

    def _spilled_column(self, name: str):
        import pyarrow.parquet as pq

        for path in self.spill_files:
            yield from pq.read_table(path, columns=[name]).column(name).to_pylist()

    # -- reading ------------------------------------------------------------------------------
    def digest(self) -> str:
        """SHA-256 over every row's repr: equal digests mean identical runs.

        A record's repr is the repr of the plain detail rows held before records existed (the
        sentence, or the tuple), so digests of the same run are the same as then. Spilled rows
        count with the repr written with them."""
        h = hashlib.sha256()
        for text in self._spilled_column("repr"):
            h.update(text.encode())
            h.update(b"\n")
        for row in self.rows:
            h.update(repr(row).encode())
            h.update(b"\n")
        return h.hexdigest()

    def to_frame(self):
        import pandas as pd

        rows = [(t, k, n, tp, p, _detail_text(d)) for (t, k, n, tp, p, d) in self.rows]
        df = pd.DataFrame(rows, columns=COLUMNS)
        df["node"] = df["node"].astype(str)
        if self.spill_files:
            import pyarrow.parquet as pq

            parts = [pq.read_table(p, columns=COLUMNS).to_pandas() for p in self.spill_files]
            df = pd.concat([*parts, df], ignore_index=True)
        return df

    def events(self, kind: str | None = None) -> list[tuple]:
        """Rows (of ``kind``) with ``detail`` as its record (``kafkasim.core.events.typed``): the
        plain data-path tuples get their field names."""
        validation.check_trace_kind("trace.events", kind, EVENT_KINDS)
        return [(*r[:5], typed(r)) for r in self.rows if kind is None or r[1] == kind]

    def where(self, kind: str | None = None, topic: str | None = None,
              partition: int | None = None, node=None) -> list[tuple]:
        validation.check_trace_kind("trace.where", kind, EVENT_KINDS)
        return [r for r in self.rows
                if (kind is None or r[1] == kind) and (topic is None or r[3] == topic)
                and (partition is None or r[4] == partition) and (node is None or r[2] == node)]


_SPILL_DEFAULTS = {"spilled": 0, "spill_dir": None, "spill_rows": 0, "spill_files": ()}
