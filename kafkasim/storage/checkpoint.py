"""Checkpoint files in Kafka's text format, written atomically to a broker's log dir.

Format (CheckpointFile / CheckpointWriteBuffer / CheckpointReadBuffer, fact sheet §6): line 1 is
the version (``0``), line 2 the number of entries, then one entry per line with fields separated
by a space. Readers accept any whitespace between fields and refuse a wrong version, a malformed
line or a wrong count. Writes go to ``<name>.tmp``, are flushed, then renamed over the file.

``LogDir`` is a broker's log directory. It always keeps the files' bytes in memory (so a whole
simulation stays picklable) and, when the cluster was given a real directory, also writes them
there, so learners can ``cat`` them — and edit them to see Kafka refuse a malformed file.
"""

from __future__ import annotations

import os
from pathlib import Path

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
CHECKPOINT_VERSION = 0


class CorruptCheckpointError(ValueError):
    """Kafka: KafkaStorageException / IOException "Malformed line in checkpoint file"."""


def format_offsets(entries: list[tuple[str, int, int]]) -> str:
    """``topic partition offset`` lines (OffsetCheckpointFile)."""
    lines = [str(CHECKPOINT_VERSION), str(len(entries))]
    lines += [f"{t} {p} {o}" for t, p, o in entries]
    return "\n".join(lines) + "\n"


def format_epochs(entries: list[tuple[int, int]]) -> str:
    """``epoch startOffset`` lines (LeaderEpochCheckpointFile)."""
    lines = [str(CHECKPOINT_VERSION), str(len(entries))]
    lines += [f"{e} {o}" for e, o in entries]
    return "\n".join(lines) + "\n"


def _parse(text: str, path: str, n_fields: int, convert) -> list[tuple]:
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    if not lines:
        return []  # an empty file reads as zero entries
    try:
        version = int(lines[0].strip())
    except ValueError:
        raise CorruptCheckpointError(
            f"{path}: line 1: malformed version {lines[0]!r} (expected {CHECKPOINT_VERSION})"
        ) from None
    if version != CHECKPOINT_VERSION:
        raise CorruptCheckpointError(
            f"{path}: line 1: unrecognized version of the checkpoint file: {version} "
            f"(expected {CHECKPOINT_VERSION})")
    if len(lines) < 2:
        raise CorruptCheckpointError(f"{path}: line 2: missing entry count")
    try:
        expected = int(lines[1].strip())
    except ValueError:
        raise CorruptCheckpointError(
            f"{path}: line 2: malformed entry count {lines[1]!r}") from None
    entries = []
    for i, line in enumerate(lines[2:], start=3):
        fields = line.split()
        if len(fields) != n_fields:
            raise CorruptCheckpointError(
                f"{path}: line {i}: malformed line in checkpoint file: {line!r} "
                f"(expected {n_fields} fields)")
        try:
            entries.append(convert(fields))
        except ValueError:
            raise CorruptCheckpointError(
                f"{path}: line {i}: malformed line in checkpoint file: {line!r}") from None
    if len(entries) != expected:
        raise CorruptCheckpointError(
            f"{path}: expected {expected} entries in checkpoint file, but found {len(entries)}")
    return entries


def parse_offsets(text: str, path: str) -> list[tuple[str, int, int]]:
    return _parse(text, path, 3, lambda f: (f[0], int(f[1]), int(f[2])))


def parse_epochs(text: str, path: str) -> list[tuple[int, int]]:
    return _parse(text, path, 2, lambda f: (int(f[0]), int(f[1])))


class LogDir:
    """One broker's log.dirs entry: checkpoint files by relative path."""

    __slots__ = ("files", "root", "writes")

    def __init__(self, root: str | Path | None = None) -> None:
        self.files: dict[str, str] = {}
        self.root = str(root) if root is not None else None
        self.writes = 0
        if self.root is not None:
            Path(self.root).mkdir(parents=True, exist_ok=True)

    def path(self, rel: str) -> str:
        return os.path.join(self.root, rel) if self.root is not None else rel

    def write_atomic(self, rel: str, text: str) -> None:
        """CheckpointFile.write: write ``.tmp``, flush + fsync, then rename over the file."""
        self.files[rel] = text
        self.writes += 1
        if self.root is None:
            return
        target = Path(self.root) / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(target.name + ".tmp")
        with open(tmp, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)  # Utils.atomicMoveWithFallback

    def read(self, rel: str) -> str | None:
        """The file's text, or None when it does not exist (a missing file reads as empty)."""
        if self.root is not None:
            target = Path(self.root) / rel
            if not target.exists():
                return None
            return target.read_text(encoding="utf-8")
        return self.files.get(rel)

    def delete(self, rel: str) -> None:
        self.files.pop(rel, None)
        if self.root is not None:
            target = Path(self.root) / rel
            if target.exists():
                target.unlink()

    def listing(self) -> list[str]:
        return sorted(self.files)
