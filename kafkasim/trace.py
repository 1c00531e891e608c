"""The event trace: one typed row per thing that happened, convertible to a pandas DataFrame.

A row is ``(time_ms, kind, node, topic, partition, detail)`` made of ints, strings and tuples only,
so the trace digest is identical in every process. ``kind`` values are documented in
``EVENT_KINDS``; ``detail`` is a record of ``kafkasim.events`` (named fields, the text in
``str(detail)``), or for the hot data-path kinds the plain tuple / int its record class names.
Every kind, record and field: docs/trace-events.md.
"""

from __future__ import annotations

import hashlib

from kafkasim.events import EVENT_KINDS, TextEvent, typed

__all__ = ["COLUMNS", "EVENT_KINDS", "Trace"]

COLUMNS = ["time_ms", "event", "node", "topic", "partition", "detail"]


class Trace:
    __slots__ = ("rows", "enabled", "messages")

    def __init__(self, enabled: bool = True, messages: bool = True) -> None:
        self.rows: list[tuple] = []
        self.enabled = enabled
        self.messages = messages  # record send/recv of every RPC (needed for space-time diagrams)

    def __len__(self) -> int:
        return len(self.rows)

    def digest(self) -> str:
        """SHA-256 over every row's repr: equal digests mean identical runs.

        A record's repr is the repr of the plain detail rows held before records existed (the
        sentence, or the tuple), so digests of the same run are the same as then."""
        h = hashlib.sha256()
        for row in self.rows:
            h.update(repr(row).encode())
            h.update(b"\n")
        return h.hexdigest()

    def to_frame(self):
        import pandas as pd

        rows = [(t, k, n, tp, p, d if isinstance(d, str) else d.text if isinstance(d, TextEvent)
                 else ("" if d is None else repr(d)))
                for (t, k, n, tp, p, d) in self.rows]
        df = pd.DataFrame(rows, columns=COLUMNS)
        df["node"] = df["node"].astype(str)
        return df

    def events(self, kind: str | None = None) -> list[tuple]:
        """Rows (of ``kind``) with ``detail`` as its record (``kafkasim.events.typed``): the
        plain data-path tuples get their field names."""
        return [(*r[:5], typed(r)) for r in self.rows if kind is None or r[1] == kind]

    def where(self, kind: str | None = None, topic: str | None = None,
              partition: int | None = None, node=None) -> list[tuple]:
        return [r for r in self.rows
                if (kind is None or r[1] == kind) and (topic is None or r[3] == topic)
                and (partition is None or r[4] == partition) and (node is None or r[2] == node)]
