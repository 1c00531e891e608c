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

import base64
import binascii
import json
import os
import re
from pathlib import Path
from typing import NamedTuple

from kafkasim.core.errors import (
    IllegalArgumentException,
    InconsistentTopicIdException,
    KafkaStorageException,
)
from kafkasim.core.leader_epoch import EpochEntry
from kafkasim.settings.javautil import java_parse_int, java_parse_long, java_split_whitespaces

REPLICATION_OFFSET_CHECKPOINT = "replication-offset-checkpoint"
RECOVERY_POINT_CHECKPOINT = "recovery-point-offset-checkpoint"
LOG_START_OFFSET_CHECKPOINT = "log-start-offset-checkpoint"
LEADER_EPOCH_CHECKPOINT = "leader-epoch-checkpoint"
#: PartitionMetadataFile.PARTITION_METADATA_FILE_NAME (KIP-516, 2.8+): the partition's topic id
PARTITION_METADATA_FILE = "partition.metadata"
CHECKPOINT_VERSION = 0
#: CleanShutdownFileHandler.CLEAN_SHUTDOWN_FILE_NAME (LogLoader.CleanShutdownFile before 3.7)
CLEAN_SHUTDOWN_FILE = ".kafka_cleanshutdown"
CLEAN_SHUTDOWN_VERSION = 0

_MALFORMED = 'Kafka: IOException "Malformed line in checkpoint file"'
_BAD_FIELD = ('Kafka 3.1+: NumberFormatException {nfe}, not wrapped; before 3.1: IOException '
              '"Malformed line in checkpoint file"')


class CorruptCheckpointError(KafkaStorageException, ValueError):
    """A checkpoint file Kafka refuses to read: ``path`` and ``line`` (1-based; None when the
    problem is the whole file) say where. Kafka wraps the IOException in KafkaStorageException
    "Error while reading checkpoint file <path>" (CheckpointFileWithFailureHandler.read)."""

    def __init__(self, path: str, line: int | None, message: str) -> None:
        where = f"{path}: line {line}: " if line is not None else f"{path}: "
        super().__init__(where + message)
        self.path = path
        self.line = line


class TopicPartitionOffset(NamedTuple):
    """OffsetCheckpointFile.TopicPartitionOffset: one line of an offset checkpoint."""

    topic_partition: tuple[str, int]
    offset: int


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


class OffsetCheckpointFormatter:
    """OffsetCheckpointFile.Formatter: ``topic partition offset`` (int partition, long
    offset), one TopicPartitionOffset a line."""

    FIELDS = "topic partition offset"

    def to_string(self, entry: TopicPartitionOffset) -> str:
        (topic, partition), offset = entry
        return f"{topic} {partition} {offset}"

    def convert(self, fields: list[str]) -> TopicPartitionOffset:
        """The entry of a line's three fields (NumberFormatException: ``_FieldError``)."""
        return TopicPartitionOffset((fields[0], _int("partition", fields[1])),
                                    _long("offset", fields[2]))

    def from_string(self, line: str) -> TopicPartitionOffset | None:
        """``fromString``: the entry, or None (Optional.empty) when the line has not three
        whitespace-separated fields."""
        fields = java_split_whitespaces(line)
        return self.convert(fields) if len(fields) == 3 else None


class LeaderEpochCheckpointFormatter:
    """LeaderEpochCheckpointFile.Formatter: ``epoch startOffset`` (int epoch, long start
    offset), one EpochEntry a line."""

    FIELDS = "epoch startOffset"

    def to_string(self, entry: EpochEntry) -> str:
        epoch, start_offset = entry
        return f"{epoch} {start_offset}"

    def convert(self, fields: list[str]) -> EpochEntry:
        return EpochEntry(_int("epoch", fields[0]), _long("start offset", fields[1]))

    def from_string(self, line: str) -> EpochEntry | None:
        fields = java_split_whitespaces(line)
        return self.convert(fields) if len(fields) == 2 else None


OFFSET_FORMATTER = OffsetCheckpointFormatter()
EPOCH_FORMATTER = LeaderEpochCheckpointFormatter()


def format_entries(entries, formatter, version: int = CHECKPOINT_VERSION) -> str:
    """CheckpointFile.write's text: the version, the number of entries, one entry a line."""
    lines = [str(version), str(len(entries))]
    lines += [formatter.to_string(e) for e in entries]
    return "\n".join(lines) + "\n"


def format_offsets(entries: list[tuple[str, int, int]]) -> str:
    """``topic partition offset`` lines (OffsetCheckpointFile)."""
    return format_entries([TopicPartitionOffset((t, p), o) for t, p, o in entries],
                          OFFSET_FORMATTER)


def format_epochs(entries: list[tuple[int, int]]) -> str:
    """``epoch startOffset`` lines (LeaderEpochCheckpointFile)."""
    return format_entries(entries, EPOCH_FORMATTER)


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


def _entry(line: str, path: str, number: int, formatter) -> tuple:
    """One entry line through the formatter, refused as Kafka refuses it."""
    fields = java_split_whitespaces(line)
    if len(fields) != len(formatter.FIELDS.split()):
        raise CorruptCheckpointError(
            path, number, f"malformed line in checkpoint file: {line!r} has {len(fields)} "
            f"whitespace-separated field(s), expected {formatter.FIELDS!r} ({_MALFORMED})")
    try:
        return formatter.convert(fields)
    except _FieldError as e:
        nfe = f'For input string: "{e.text}"'
        raise CorruptCheckpointError(
            path, number, f"malformed line in checkpoint file: {line!r}: {e.field} "
            f"{e.text!r} is not a Java {e.java_type} ({_BAD_FIELD.format(nfe=nfe)})"
        ) from None


def parse_entries(text: str, path: str, formatter,
                  version: int = CHECKPOINT_VERSION) -> list[tuple]:
    """CheckpointReadBuffer.read over ``text``: the entries of a file of ``version``."""
    lines = _reader_lines(text)
    if not lines:
        return []  # an empty file reads as zero entries
    found = _header_int(lines[0], path, 1, "version")
    if found != version:
        raise CorruptCheckpointError(
            path, 1, f"unrecognized version {found} of the checkpoint file, expected version "
            f'{version} (Kafka: IOException "Unrecognised version")')
    if len(lines) == 1:
        return []  # no count line: reads as zero entries
    expected = _header_int(lines[1], path, 2, "entry count")
    if expected < 0:
        raise CorruptCheckpointError(
            path, 2, f"negative entry count {expected} (Kafka 3.1+: IllegalArgumentException "
            f'"Illegal Capacity: {expected}" from new ArrayList; before 3.1: IOException '
            f'"Expected {expected} entries")')
    entries = [_entry(line, path, number, formatter)
               for number, line in enumerate(lines[2:], start=3)]
    if len(entries) != expected:
        raise CorruptCheckpointError(
            path, None, f"expected {expected} entries in checkpoint file, but found only "
            f'{len(entries)} (Kafka: IOException "Expected [{expected}] entries")')
    return entries


def parse_offsets(text: str, path: str) -> list[tuple[str, int, int]]:
    """OffsetCheckpointFile.read: ``topic partition offset`` (int partition, long offset)."""
    return [(t, p, o) for (t, p), o in parse_entries(text, path, OFFSET_FORMATTER)]


def parse_epochs(text: str, path: str) -> list[EpochEntry]:
    """LeaderEpochCheckpointFile.read: ``epoch startOffset`` (int epoch, long start offset)."""
    return parse_entries(text, path, EPOCH_FORMATTER)


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

    def exists(self, rel: str) -> bool:
        """Whether the file exists (``File.exists``), whatever it holds."""
        if self.root is None:
            return rel in self.files
        return (Path(self.root) / rel).exists()

    def delete(self, rel: str) -> None:
        self.files.pop(rel, None)
        if self.root is not None:
            target = Path(self.root) / rel
            if target.exists():
                target.unlink()

    def listing(self) -> list[str]:
        return sorted(self.files)

    def rename_dir(self, old: str, new: str) -> None:
        """UnifiedLog.renameDir (LocalLog.renameDir: Utils.atomicMoveWithFallback of the
        partition's directory): every file under ``old/`` is now under ``new/``."""
        prefix = old.rstrip("/") + "/"
        for rel in sorted(k for k in self.files if k.startswith(prefix)):
            self.files[new.rstrip("/") + "/" + rel[len(prefix):]] = self.files.pop(rel)
        if self.root is not None:
            source = Path(self.root) / old
            if source.is_dir():
                os.replace(source, Path(self.root) / new)


class LogDirFailureChannel:
    """LogDirFailureChannel: the log dirs that failed, each recorded once (a checkpoint file
    that could not be read or written takes its log dir offline)."""

    __slots__ = ("max_size", "offline_log_dirs")

    def __init__(self, max_size: int = 1) -> None:
        self.max_size = max_size
        self.offline_log_dirs: dict[str, str] = {}   # log dir -> the first error's message

    def has_offline_log_dir(self, log_dir: str) -> bool:
        return log_dir in self.offline_log_dirs

    def maybe_add_offline_log_dir(self, log_dir: str, msg: str, error: Exception) -> None:
        """``maybeAddOfflineLogDir``: the first failure of ``log_dir`` takes it offline."""
        self.offline_log_dirs.setdefault(log_dir, f"{msg}: {error}")


def _store_for(file: str | Path) -> tuple[LogDir, str]:
    """The LogDir holding ``file`` (its directory) and the file's name in it; like Kafka's
    ``Files.createFile``, a missing directory is refused (NoSuchFileException)."""
    path = Path(file)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"{path}: no such directory {path.parent}")
    return LogDir(path.parent), path.name


class CheckpointFileWithFailureHandler:
    """CheckpointFileWithFailureHandler over CheckpointFile: ``file`` in Kafka's text format of
    ``version``, entries written and read through ``formatter``. Opening it creates the file
    empty if it is missing. A read or write that fails raises KafkaStorageException (a
    malformed file: ``CorruptCheckpointError``, naming the file and line) and tells the
    ``log_dir_failure_channel`` that ``log_dir`` failed.

    ``file`` is a path; or, with ``store`` (a broker's ``LogDir``, which may hold its files in
    memory), a path relative to it."""

    __slots__ = ("file", "formatter", "log_dir", "log_dir_failure_channel", "rel", "store",
                 "version")

    def __init__(self, file: str | Path, version: int, formatter,
                 log_dir_failure_channel: LogDirFailureChannel | None = None,
                 log_dir: str | None = None, *, store: LogDir | None = None) -> None:
        if store is None:
            store, rel = _store_for(file)
        else:
            rel = str(file)
        self.store, self.rel = store, rel
        self.file = store.path(rel)
        self.version = version
        self.formatter = formatter
        self.log_dir_failure_channel = log_dir_failure_channel
        self.log_dir = log_dir if log_dir is not None else os.path.dirname(self.file)
        store.create_if_missing(rel)

    def _fail(self, msg: str, error: Exception) -> KafkaStorageException:
        if self.log_dir_failure_channel is not None:
            self.log_dir_failure_channel.maybe_add_offline_log_dir(self.log_dir, msg, error)
        if isinstance(error, KafkaStorageException):
            return error
        return KafkaStorageException(f"{msg}: {error}")

    def _dir_exists(self) -> bool:
        root = self.store.root
        return root is None or os.path.isdir(os.path.dirname(os.path.join(root, self.rel)))

    def write(self, entries) -> None:
        """CheckpointFile.write: the file's text replaced atomically (``.tmp``, fsync, rename);
        a missing directory fails it (FileNotFoundException -> KafkaStorageException)."""
        msg = f"Error while writing to checkpoint file {self.file}"
        if not self._dir_exists():
            raise self._fail(msg, FileNotFoundError(f"{self.file}.tmp (No such file or directory)"))
        try:
            self.store.write_atomic(self.rel, format_entries(list(entries), self.formatter,
                                                             self.version))
        except OSError as e:
            raise self._fail(msg, e) from None

    def write_if_dir_exists(self, entries) -> None:
        """``writeIfDirExists``: as ``write``, but a directory gone meanwhile (a partition being
        deleted) only skips the write (Kafka logs a warning)."""
        if self._dir_exists():
            self.write(entries)

    def read(self) -> list:
        """CheckpointReadBuffer.read of the file: its entries, in order."""
        msg = f"Error while reading checkpoint file {self.file}"
        try:
            text = self.store.read(self.rel)
        except CorruptCheckpointError as e:
            raise self._fail(msg, e) from None
        if text is None:
            raise self._fail(msg, FileNotFoundError(f"{self.file} (No such file or directory)"))
        try:
            return parse_entries(text, self.file, self.formatter, self.version)
        except CorruptCheckpointError as e:
            raise self._fail(msg, e) from None


class OffsetCheckpointFile:
    """OffsetCheckpointFile: ``replication-offset-checkpoint``, ``recovery-point-offset-
    checkpoint`` and ``log-start-offset-checkpoint``, a (topic, partition) -> offset map."""

    CURRENT_VERSION = CHECKPOINT_VERSION
    Formatter = OffsetCheckpointFormatter

    __slots__ = ("checkpoint",)

    def __init__(self, file: str | Path,
                 log_dir_failure_channel: LogDirFailureChannel | None = None, *,
                 store: LogDir | None = None) -> None:
        self.checkpoint = CheckpointFileWithFailureHandler(
            file, CHECKPOINT_VERSION, OFFSET_FORMATTER, log_dir_failure_channel, store=store)

    @property
    def file(self) -> str:
        return self.checkpoint.file

    def write(self, offsets) -> None:
        """``write(Map<TopicPartition, Long>)``: one line per partition, in the map's order."""
        self.checkpoint.write([TopicPartitionOffset(tp, o) for tp, o in offsets.items()])

    def read(self) -> dict[tuple[str, int], int]:
        """``read``: (topic, partition) -> offset (a partition listed twice: the last line)."""
        return {tp: offset for tp, offset in self.checkpoint.read()}


class LazyOffsetCheckpoints:
    """LazyOffsetCheckpoints: the offset checkpoint file of each log dir, each read at most
    once, at the first ``fetch`` that needs it."""

    __slots__ = ("checkpoints", "offsets")

    def __init__(self, checkpoints_by_log_dir) -> None:
        self.checkpoints = dict(checkpoints_by_log_dir)
        self.offsets: dict[str, dict[tuple[str, int], int]] = {}

    def fetch(self, log_dir: str, topic_partition: tuple[str, int]) -> int | None:
        """The partition's checkpointed offset in ``log_dir``, None if it has none; a log dir
        without a checkpoint file is an IllegalArgumentException."""
        offsets = self.offsets.get(log_dir)
        if offsets is None:
            checkpoint = self.checkpoints.get(log_dir)
            if checkpoint is None:
                raise IllegalArgumentException(f"No checkpoint file for log dir {log_dir}")
            offsets = self.offsets[log_dir] = checkpoint.read()
        return offsets.get(topic_partition)


class LeaderEpochCheckpointFile:
    """``<topic>-<partition>/leader-epoch-checkpoint`` (LeaderEpochCheckpointFile, KIP-101,
    0.11+): ``write`` replaces the file's EpochEntry lines atomically, ``read`` returns them. A
    ``LeaderEpochFileCache`` holding one flushes every change to it (LeaderEpochFileCache.flush).
    Its log dir (for the LogDirFailureChannel) is the partition directory's parent."""

    CURRENT_VERSION = CHECKPOINT_VERSION
    FORMATTER = EPOCH_FORMATTER

    __slots__ = ("checkpoint",)

    def __init__(self, file: str | Path,
                 log_dir_failure_channel: LogDirFailureChannel | None = None, *,
                 store: LogDir | None = None) -> None:
        parent = os.path.dirname(os.path.dirname(store.path(str(file)) if store is not None
                                                 else os.path.abspath(file)))
        self.checkpoint = CheckpointFileWithFailureHandler(
            file, CHECKPOINT_VERSION, EPOCH_FORMATTER, log_dir_failure_channel, parent,
            store=store)

    @staticmethod
    def new_file(directory: str | Path) -> str:
        """``newFile(dir)``: the partition directory's leader-epoch-checkpoint."""
        return os.path.join(directory, LEADER_EPOCH_CHECKPOINT)

    @property
    def file(self) -> str:
        return self.checkpoint.file

    def write(self, epochs) -> None:
        self.checkpoint.write(epochs)

    def write_if_dir_exists(self, epochs) -> None:
        """``writeIfDirExists`` (the asynchronous flush after a truncation, 3.8+)."""
        self.checkpoint.write_if_dir_exists(epochs)

    def read(self) -> list[EpochEntry]:
        return self.checkpoint.read()


class InMemoryLeaderEpochCheckpoint:
    """InMemoryLeaderEpochCheckpoint (3.5-3.7: the epochs a remote log segment carries): the
    entries held in memory; ``read_as_byte_buffer`` is the text the file would hold, in UTF-8."""

    __slots__ = ("epochs",)

    def __init__(self) -> None:
        self.epochs: list[EpochEntry] = []

    def write(self, epochs) -> None:
        self.epochs = list(epochs)

    def read(self) -> list[EpochEntry]:
        return list(self.epochs)

    def read_as_byte_buffer(self) -> bytes:
        return format_entries(self.epochs, EPOCH_FORMATTER).encode("utf-8")


class CleanShutdownFileHandler:
    """``<log.dir>/.kafka_cleanshutdown`` (CleanShutdownFileHandler, 3.7+, KIP-966): written
    at a clean shutdown with the broker epoch, ``{"version":0,"brokerEpoch":N}``; ``read`` gives
    the epoch, None when the file is absent or holds none (unknown fields are ignored)."""

    __slots__ = ("store",)

    CLEAN_SHUTDOWN_FILE_NAME = CLEAN_SHUTDOWN_FILE

    def __init__(self, dir_path: str | Path | LogDir) -> None:
        self.store = dir_path if isinstance(dir_path, LogDir) else LogDir(dir_path)

    @property
    def clean_shutdown_file(self) -> str:
        return self.store.path(CLEAN_SHUTDOWN_FILE)

    def write(self, broker_epoch: int, version: int = CLEAN_SHUTDOWN_VERSION) -> None:
        self.store.write_atomic(CLEAN_SHUTDOWN_FILE,
                                f'{{"version":{version},"brokerEpoch":{int(broker_epoch)}}}')

    def read(self) -> int | None:
        try:   # Kafka catches any exception and answers OptionalLong.empty()
            epoch = json.loads(self.store.read(CLEAN_SHUTDOWN_FILE))["brokerEpoch"]
        except (ValueError, KeyError, TypeError):
            return None
        return epoch if type(epoch) is int else None

    def delete(self) -> None:
        self.store.delete(CLEAN_SHUTDOWN_FILE)

    def exists(self) -> bool:
        return self.store.exists(CLEAN_SHUTDOWN_FILE)


class PartitionMetadata(NamedTuple):
    """PartitionMetadata (KIP-516, 2.8+): ``partition.metadata``'s version and topic id."""

    version: int
    topic_id: str

    def encode(self) -> str:
        """``encode``: two lines, no newline after the second."""
        return f"version: {self.version}\ntopic_id: {self.topic_id}"


def uuid_from_string(text: str) -> str:
    """Uuid.fromString's checks on a topic id (kafkasim keeps ids as their base64 text):
    at most 24 characters, decoding (URL-safe base64) to 16 bytes; IllegalArgumentException
    otherwise."""
    if len(text) > 24:
        raise IllegalArgumentException(f"Input string with prefix `{text[:24]}` is too long to "
                                       "be decoded as a base64 UUID")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (ValueError, binascii.Error):
        raise IllegalArgumentException(f"Illegal base64 character in `{text}`") from None
    if len(raw) != 16:
        raise IllegalArgumentException(
            f"Input string `{text}` decoded as {len(raw)} bytes, which is not equal to the "
            "expected 16 bytes of a base64-encoded UUID")
    return text


_ZERO_UUID = "AAAAAAAAAAAAAAAAAAAAAA"


def _parse_partition_metadata(text: str, location: str) -> PartitionMetadata:
    """PartitionMetadataReadBuffer.read: ``version: N`` then ``topic_id: <id>``, each split
    on ``:\\s+`` into exactly two parts; IOException (as CorruptCheckpointError) for a
    malformed line, a negative version or the zero topic id."""
    lines = _reader_lines(text)
    line = lines[0] if lines else None

    def malformed() -> CorruptCheckpointError:
        return CorruptCheckpointError(location, None, "Malformed line in partition metadata "
                                      f"file [{location}]: {line}")
    if line is None:
        raise malformed()
    parts = re.split(r":\s+", line)
    if len(parts) != 2:
        raise malformed()
    try:
        version = java_parse_int(parts[1])
    except ValueError:
        raise malformed() from None
    if version < PartitionMetadataFile.CURRENT_VERSION:
        raise CorruptCheckpointError(location, None, "Unrecognized version of partition "
                                     f"metadata file ({location}): {version}")
    line = lines[1] if len(lines) > 1 else None
    parts = re.split(r":\s+", line) if line is not None else []
    if len(parts) != 2:
        raise malformed()
    topic_id = uuid_from_string(parts[1])
    if topic_id == _ZERO_UUID:
        raise CorruptCheckpointError(location, None, "Invalid topic ID in partition metadata "
                                     f"file ({location})")
    return PartitionMetadata(version, topic_id)


class PartitionMetadataFile:
    """``<topic>-<partition>/partition.metadata`` (PartitionMetadataFile, KIP-516, 2.8+):
    ``record`` keeps the topic id to write (a different one than already recorded is an
    InconsistentTopicIdException), ``maybe_flush`` writes it atomically if one is pending
    (``version: 0`` and ``topic_id: <id>``), ``read`` parses the file. A failed read or write
    raises KafkaStorageException and takes the log dir (the partition directory's parent)
    offline through the LogDirFailureChannel. Opening it does not create the file.

    ``file`` is a path; or, with ``store`` (a broker's ``LogDir``), a path relative to it."""

    CURRENT_VERSION = 0
    PARTITION_METADATA_FILE_NAME = PARTITION_METADATA_FILE

    __slots__ = ("dirty_topic_id", "file", "log_dir_failure_channel", "rel", "store")

    def __init__(self, file: str | Path,
                 log_dir_failure_channel: LogDirFailureChannel | None = None, *,
                 store: LogDir | None = None) -> None:
        if store is None:   # rooted at the log dir: the partition directory is not created
            path = Path(os.path.abspath(file))
            store, rel = LogDir(path.parent.parent), f"{path.parent.name}/{path.name}"
        else:
            rel = str(file)
        self.store, self.rel = store, rel
        self.file = store.path(rel)
        self.log_dir_failure_channel = log_dir_failure_channel
        self.dirty_topic_id: str | None = None

    @staticmethod
    def new_file(directory: str | Path) -> str:
        """``newFile(dir)``: the partition directory's partition.metadata."""
        return os.path.join(directory, PARTITION_METADATA_FILE)

    def _log_dir(self) -> str:
        return os.path.dirname(os.path.dirname(os.path.abspath(self.file)))

    def _fail(self, msg: str, error: Exception) -> KafkaStorageException:
        if self.log_dir_failure_channel is not None:
            self.log_dir_failure_channel.maybe_add_offline_log_dir(self._log_dir(), msg, error)
        return KafkaStorageException(f"{msg}: {error}")

    def record(self, topic_id: str) -> None:
        """``record``: the topic id to flush next; refuses one that differs from a pending id."""
        if self.dirty_topic_id is not None and self.dirty_topic_id != topic_id:
            raise InconsistentTopicIdException(
                f"Tried to record topic ID {topic_id} to file but had already recorded "
                f"{self.dirty_topic_id}")
        self.dirty_topic_id = topic_id

    def maybe_flush(self) -> None:
        """``maybeFlush``: write the pending topic id (``.tmp``, fsync, rename), then none is
        pending; nothing happens without one."""
        topic_id = self.dirty_topic_id
        if topic_id is None:
            return
        msg = f"Error while writing partition metadata file {self.file}"
        if self.store.root is not None and not os.path.isdir(os.path.dirname(self.file)):
            # new FileOutputStream(<file>.tmp) in a directory that is gone
            raise self._fail(msg, FileNotFoundError(f"{self.file}.tmp (No such file or "
                                                    "directory)"))
        try:
            self.store.write_atomic(self.rel, PartitionMetadata(self.CURRENT_VERSION,
                                                                topic_id).encode())
        except OSError as e:
            raise self._fail(msg, e) from None
        self.dirty_topic_id = None

    def read(self) -> PartitionMetadata:
        """``read``: the file's version and topic id."""
        msg = f"Error while reading partition metadata file {self.file}"
        try:
            text = self.store.read(self.rel)
            if text is None:
                raise FileNotFoundError(f"NoSuchFileException: {self.file}")
            return _parse_partition_metadata(text, self.file)
        except (CorruptCheckpointError, OSError) as e:
            raise self._fail(msg, e) from None

    def exists(self) -> bool:
        return self.store.exists(self.rel)

    def delete(self) -> None:
        """``delete``: Files.delete, NoSuchFileException when there is no file."""
        if not self.exists():
            raise FileNotFoundError(self.file)
        self.store.delete(self.rel)
