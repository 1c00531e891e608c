"""The names of KRaft snapshot files: ``org.apache.kafka.snapshot.Snapshots`` (raft, 2.8+, KIP-630).

A snapshot of ``__cluster_metadata-0`` (any Raft log) is a file in the partition's directory named
after its snapshot id, the end offset (20 digits) and the epoch (10 digits), zero-padded:
``<offset>-<epoch>.checkpoint``. It is written as ``<offset>-<epoch>-<random>.checkpoint.part``
(``createTempFile``) and renamed when frozen; before deletion it is renamed
``<offset>-<epoch>.checkpoint.deleted`` (``markForDelete``). ``parse`` reads a path back into a
``SnapshotPath``, or None for any other file of the directory.

kafkasim's Raft log keeps its snapshots in memory; these functions give the files' names and
work on real directories (pathlib paths), as Kafka's do.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

from kafkasim.core.leader_epoch import OffsetAndEpoch
from kafkasim.settings.javautil import java_parse_int, java_parse_long

SUFFIX = ".checkpoint"
PARTIAL_SUFFIX = f"{SUFFIX}.part"
DELETE_SUFFIX = f"{SUFFIX}.deleted"
OFFSET_WIDTH = 20
EPOCH_WIDTH = 10
#: ``BOOTSTRAP_SNAPSHOT_ID``: the 0-0 snapshot a formatted metadata log starts from
BOOTSTRAP_SNAPSHOT_ID = OffsetAndEpoch(0, 0)


class SnapshotPath(NamedTuple):
    """org.apache.kafka.snapshot.SnapshotPath: a snapshot file's path, its id and whether it is
    a partial (``.checkpoint.part``) or a deleted (``.checkpoint.deleted``) one."""

    path: Path
    snapshot_id: OffsetAndEpoch
    partial: bool
    deleted: bool


def _digits(value: int, width: int) -> str:
    """NumberFormat with setMinimumIntegerDigits(width), no grouping (a minus sign first)."""
    return f"-{-value:0{width}d}" if value < 0 else f"{value:0{width}d}"


def filename_from_snapshot_id(snapshot_id: OffsetAndEpoch) -> str:
    """``filenameFromSnapshotId``: ``<offset, 20 digits>-<epoch, 10 digits>``."""
    offset, epoch = snapshot_id
    return f"{_digits(offset, OFFSET_WIDTH)}-{_digits(epoch, EPOCH_WIDTH)}"


def snapshot_path(log_dir: str | Path, snapshot_id: OffsetAndEpoch) -> Path:
    """``snapshotPath``: the frozen snapshot's file in the log (partition) directory."""
    return Path(log_dir) / (filename_from_snapshot_id(snapshot_id) + SUFFIX)


def move_rename(source: str | Path, snapshot_id: OffsetAndEpoch) -> Path:
    """``moveRename``: the name a partial snapshot takes when frozen, beside it."""
    return Path(source).with_name(filename_from_snapshot_id(snapshot_id) + SUFFIX)


def delete_rename_path(source: str | Path, snapshot_id: OffsetAndEpoch) -> Path:
    """``deleteRenamePath``: the ``.checkpoint.deleted`` name beside ``source``."""
    return Path(source).with_name(filename_from_snapshot_id(snapshot_id) + DELETE_SUFFIX)


def create_temp_file(log_dir: str | Path, snapshot_id: OffsetAndEpoch) -> Path:
    """``createTempFile``: a new empty ``<id>-<n>.checkpoint.part`` in the directory (created
    if missing). Kafka's Files.createTempFile puts a random number in the name; kafkasim takes
    the first free ``n`` from 0 (deterministic)."""
    directory = Path(log_dir)
    directory.mkdir(parents=True, exist_ok=True)
    prefix = f"{filename_from_snapshot_id(snapshot_id)}-"
    n = 0
    while True:
        path = directory / f"{prefix}{n}{PARTIAL_SUFFIX}"
        try:
            os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            return path
        except FileExistsError:
            n += 1


def parse(path: str | Path) -> SnapshotPath | None:
    """``parse``: the snapshot a file name stands for, None when it does not end with
    ``.checkpoint``, ``.checkpoint.part`` or ``.checkpoint.deleted``. The offset is the first
    20 characters and the epoch the 10 after the dash (Long/Integer.parseInt: a
    NumberFormatException, here ValueError, when they are not numbers)."""
    path = Path(path)
    name = path.name
    if not name:
        return None
    partial = name.endswith(PARTIAL_SUFFIX)
    deleted = not partial and name.endswith(DELETE_SUFFIX)
    if not (partial or deleted or name.endswith(SUFFIX)):
        return None
    end_offset = java_parse_long(name[:OFFSET_WIDTH])
    epoch = java_parse_int(name[OFFSET_WIDTH + 1:OFFSET_WIDTH + EPOCH_WIDTH + 1])
    return SnapshotPath(path, OffsetAndEpoch(end_offset, epoch), partial, deleted)


def delete_if_exists(log_dir: str | Path, snapshot_id: OffsetAndEpoch) -> bool:
    """``deleteIfExists``: delete the snapshot's file and its ``.deleted`` rename; whether
    either existed (an IOError answers False)."""
    immutable = snapshot_path(log_dir, snapshot_id)
    renamed = delete_rename_path(immutable, snapshot_id)
    deleted = False
    try:
        for p in (immutable, renamed):
            if p.exists():
                p.unlink()
                deleted = True
    except OSError:
        return False
    return deleted


def mark_for_delete(log_dir: str | Path, snapshot_id: OffsetAndEpoch) -> Path:
    """``markForDelete``: rename the snapshot's file to its ``.checkpoint.deleted`` name."""
    immutable = snapshot_path(log_dir, snapshot_id)
    renamed = delete_rename_path(immutable, snapshot_id)
    os.replace(immutable, renamed)
    return renamed
