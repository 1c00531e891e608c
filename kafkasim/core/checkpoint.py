"""Checkpoint files in Kafka's text format, written atomically to a broker's log dir.

Format (server-common CheckpointFile / CheckpointWriteBuffer / CheckpointReadBuffer, 3.1+; before
3.1 core's kafka.server.checkpoints.CheckpointFile; fact sheet §6): line 1 is the version (``0``),
line 2 the number of entries, then one entry per line with fields separated by a space. Writes go
to ``<name>.tmp``, are flushed, then renamed over the file.

The reader is exactly as strict as Kafka's ``CheckpointReadBuffer.read``:

* lines end at ``\n``, ``\r`` or ``\r\n`` (``BufferedReader.readLine``); the bytes must be valid
  UTF-8 (``Files.newBufferedReader(path, UTF_8)``: MalformedInputException);
* an empty file, or one holding only the version line, reads as zero entries;
* the version and the count are ``Integer.parseInt`` of the whole line: no surrounding spaces;
* each further line, up to the end of the file, is one entry: fields split with
  ``Pattern.compile("\\s+")`` (ASCII whitespace; a leading space makes an empty first field), the
  partition and epoch parsed with ``Integer.parseInt``, offsets with ``Long.parseLong``
  (OffsetCheckpointFile.Formatter / LeaderEpochCheckpointFile.Formatter);
* the number of entry lines must equal the count: extra and missing lines are both refused.

Every refusal is a :class:`CorruptCheckpointError` naming the file and the line, with the
exception Kafka throws. Kafka 3.1+ lets a NumberFormatException from an entry's fields escape
unwrapped, and a negative count fails in ``new ArrayList<>(count)``; before 3.1 both were reported
as IOException "Malformed line" / "Expected N entries", wrapped in KafkaStorageException.

``LogDir`` is a broker's log directory. It always keeps the files' text in memory (so a whole
simulation stays picklable) and, when the cluster was given a real directory, also writes them
there, so learners can ``cat`` them — and edit them to see Kafka refuse a malformed file.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from kafkasim.settings.javautil import java_parse_int, java_parse_long, java_split_whitespaces

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
CHECKPOINT_VERSION = 0

_MALFORMED = 'Kafka: IOException "Malformed line in checkpoint file"'
_BAD_FIELD = ('Kafka 3.1+: NumberFormatException {nfe}, not wrapped; before 3.1: IOException '
              '"Malformed line in checkpoint file"')


class CorruptCheckpointError(ValueError):
    """A checkpoint file Kafka refuses to read: ``path`` and ``line`` (1-based; None when the
    problem is the whole file) say where. Kafka wraps the IOException in KafkaStorageException
    "Error while reading checkpoint file <path>" (CheckpointFileWithFailureHandler.read)."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        where = f"{path}: line {line}: " if line is not None else f"{path}: "
        super().__init__(where + message)
        self.path = path
        self.line = line


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


_LINE_END = re.compile(r"\r\n|\r|\n")


def _reader_lines(text: str) -> list[str]:
    """The lines ``BufferedReader.readLine`` returns, in order, until it returns null."""
    lines = _LINE_END.split(text)
    if lines[-1] == "":
        lines.pop()  # a terminator at the end of the file does not start another line
    return lines


def _header_int(line: str, path: str, number: int, what: str) -> int:
    try:
        return java_parse_int(line)
    except ValueError:
        raise CorruptCheckpointError(
            path, number, f"malformed {what} {line!r}: Integer.parseInt refuses it ({_MALFORMED})"
        ) from None


def _parse(text: str, path: str, fields_doc: str,
           convert: Callable[[list[str]], tuple]) -> list[tuple]:
    """CheckpointReadBuffer.read over ``text``; ``convert`` parses one entry's fields."""
    lines = _reader_lines(text)
    if not lines:
        return []  # an empty file reads as zero entries
    version = _header_int(lines[0], path, 1, "version")
    if version != CHECKPOINT_VERSION:
        raise CorruptCheckpointError(
            path, 1, f"unrecognized version {version} of the checkpoint file, expected version "
            f'{CHECKPOINT_VERSION} (Kafka: IOException "Unrecognised version")')
    if len(lines) == 1:
        return []  # no count line: reads as zero entries
    expected = _header_int(lines[1], path, 2, "entry count")
    if expected < 0:
        raise CorruptCheckpointError(
            path, 2, f"negative entry count {expected} (Kafka 3.1+: IllegalArgumentException "
            f'"Illegal Capacity: {expected}" from new ArrayList; before 3.1: IOException '
            f'"Expected {expected} entries")')
    entries = []
    for number, line in enumerate(lines[2:], start=3):
        fields = java_split_whitespaces(line)
        if len(fields) != len(fields_doc.split()):
            raise CorruptCheckpointError(
                path, number, f"malformed line in checkpoint file: {line!r} has {len(fields)} "
                f"whitespace-separated field(s), expected {fields_doc!r} ({_MALFORMED})")
        try:
            entries.append(convert(fields))
        except _FieldError as e:
            raise CorruptCheckpointError(
                path, number, f"malformed line in checkpoint file: {line!r}: {e.field} "
                f"{e.text!r} is not a Java {e.java_type} "
                f"({_BAD_FIELD.format(nfe=f'For input string: {chr(34)}{e.text}{chr(34)}')})"
            ) from None
    if len(entries) != expected:
        raise CorruptCheckpointError(
            path, None, f"expected {expected} entries in checkpoint file, but found only "
            f'{len(entries)} (Kafka: IOException "Expected [{expected}] entries")')
    return entries


class _FieldError(ValueError):
    def __init__(self, field: str, text: str, java_type: str) -> None:
        super().__init__(field)
        self.field, self.text, self.java_type = field, text, java_type


def _int(field: str, text: str) -> int:
    try:
        return java_parse_int(text)
    except ValueError:
        raise _FieldError(field, text, "int") from None


def _long(field: str, text: str) -> int:
    try:
        return java_parse_long(text)
    except ValueError:
        raise _FieldError(field, text, "long") from None


def parse_offsets(text: str, path: str) -> list[tuple[str, int, int]]:
    """OffsetCheckpointFile.read: ``topic partition offset`` (int partition, long offset)."""
    return _parse(text, path, "topic partition offset",
                  lambda f: (f[0], _int("partition", f[1]), _long("offset", f[2])))


def parse_epochs(text: str, path: str) -> list[tuple[int, int]]:
    """LeaderEpochCheckpointFile.read: ``epoch startOffset`` (int epoch, long start offset)."""
    return _parse(text, path, "epoch startOffset",
                  lambda f: (_int("epoch", f[0]), _long("start offset", f[1])))


def _create_exclusive(tmp: Path) -> int:
    """Open ``tmp`` for writing, created exclusively (O_CREAT | O_EXCL, and O_NOFOLLOW where the
    platform has it): a ``.tmp`` left by a crash, or a symlink planted there, is unlinked (never
    followed) and the file created anew, so a checkpoint write cannot be redirected."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        return os.open(tmp, flags, 0o644)
    except FileExistsError:
        os.unlink(tmp)   # removes the link itself, not its target
        return os.open(tmp, flags, 0o644)


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
        fd = _create_exclusive(tmp)
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)  # Utils.atomicMoveWithFallback

    def create_if_missing(self, rel: str) -> None:
        """``new CheckpointFile(file, ...)``: ``Files.createFile``, ignoring FileAlreadyExists, so
        a checkpoint file exists (empty) from the moment Kafka opens it."""
        if self.root is not None:
            target = Path(self.root) / rel
            target.parent.mkdir(parents=True, exist_ok=True)
            if not target.exists() and not target.is_symlink():
                target.touch()
            return
        self.files.setdefault(rel, "")

    def read(self, rel: str) -> str | None:
        """The file's text, or None when it does not exist (Kafka would create it empty). Bytes
        that are not UTF-8, or a directory where the file should be, are refused as Kafka's
        reader refuses them (MalformedInputException / IOException)."""
        if self.root is None:
            return self.files.get(rel)
        target = Path(self.root) / rel
        path = str(target)
        try:
            data = target.read_bytes()
        except FileNotFoundError:
            return None
        except IsADirectoryError:
            raise CorruptCheckpointError(
                path, None, 'is a directory, not a checkpoint file (Kafka: IOException "Is a '
                'directory" -> KafkaStorageException "Error while reading checkpoint file")'
            ) from None
        except OSError as e:
            raise CorruptCheckpointError(
                path, None, f"cannot be read: {e.strerror} (Kafka: IOException -> "
                f'KafkaStorageException "Error while reading checkpoint file")') from None
        try:
            return data.decode("utf-8")
        except UnicodeDecodeError as e:
            line = len(_reader_lines(data[:e.start].decode("utf-8") + "x"))
            raise CorruptCheckpointError(
                path, line, f"byte 0x{data[e.start]:02x} at offset {e.start} is not valid UTF-8 "
                '(Kafka: MalformedInputException -> KafkaStorageException "Error while reading '
                'checkpoint file")') from None

    def delete(self, rel: str) -> None:
        self.files.pop(rel, None)
        if self.root is not None:
            target = Path(self.root) / rel
            if target.exists():
                target.unlink()

    def listing(self) -> list[str]:
        return sorted(self.files)


class LeaderEpochCheckpointFile:
    """``<topic>-<partition>/leader-epoch-checkpoint`` in a broker's ``LogDir``
    (LeaderEpochCheckpointFile, KIP-101, 0.11+): ``write`` replaces the file's entries, in
    Kafka's format, atomically. A ``LeaderEpochFileCache`` holding one flushes every change to it
    (LeaderEpochFileCache.flush / writeToFile)."""

    __slots__ = ("log_dir", "rel")

    def __init__(self, log_dir: LogDir, topic: str, partition: int) -> None:
        self.log_dir = log_dir
        self.rel = f"{topic}-{partition}/{LEADER_EPOCH_CHECKPOINT}"

    def create_if_missing(self) -> None:
        """``new LeaderEpochCheckpointFile(...)`` creates the file empty if it is missing."""
        self.log_dir.create_if_missing(self.rel)

    def write(self, entries) -> None:
        self.log_dir.write_atomic(self.rel, format_epochs([tuple(e) for e in entries]))
