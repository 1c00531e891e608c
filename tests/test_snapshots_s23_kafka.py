"""The names of KRaft snapshot files (``kafkasim.core.snapshots``).

Ports raft/src/test/java/org/apache/kafka/snapshot/SnapshotsTest.java (4.3.0, confluentinc
mirror a9ce322153) against ``kafkasim.core.snapshots`` (org.apache.kafka.snapshot.Snapshots).
Adaptation: ``TestUtils.RANDOM`` is a seeded ``random.Random``; testDeleteSnapshot's
FileRawSnapshotWriter.create + freeze is the frozen file written directly (kafkasim's Raft log
keeps its snapshots in memory).
"""

from __future__ import annotations

import os
import random
from pathlib import Path

import pytest

from kafkasim.core import snapshots as Snapshots
from kafkasim.core.leader_epoch import OffsetAndEpoch

INT_MAX = 2**31 - 1


def _snapshot_id(seed: int) -> OffsetAndEpoch:
    rng = random.Random(seed)
    return OffsetAndEpoch(rng.randrange(INT_MAX), rng.randrange(INT_MAX))


def test_valid_snapshot_filename(tmp_path):
    """SnapshotsTest.testValidSnapshotFilename @4.3.0."""
    snapshot_id = _snapshot_id(1)
    path = Snapshots.snapshot_path(tmp_path, snapshot_id)
    snapshot_path = Snapshots.parse(path)
    assert snapshot_path.path == path
    assert snapshot_path.snapshot_id == snapshot_id
    assert not snapshot_path.partial and not snapshot_path.deleted


def test_valid_partial_snapshot_filename(tmp_path):
    """SnapshotsTest.testValidPartialSnapshotFilename @4.3.0."""
    snapshot_id = _snapshot_id(2)
    path = Snapshots.create_temp_file(tmp_path, snapshot_id)
    path.unlink()   # only the path is needed
    snapshot_path = Snapshots.parse(path)
    assert snapshot_path.path == path
    assert snapshot_path.snapshot_id == snapshot_id
    assert snapshot_path.partial


def test_valid_deleted_snapshot_filename(tmp_path):
    """SnapshotsTest.testValidDeletedSnapshotFilename @4.3.0."""
    snapshot_id = _snapshot_id(3)
    path = Snapshots.snapshot_path(tmp_path, snapshot_id)
    deleted_path = Snapshots.delete_rename_path(path, snapshot_id)
    snapshot_path = Snapshots.parse(deleted_path)
    assert snapshot_path.snapshot_id == snapshot_id
    assert snapshot_path.deleted


@pytest.mark.parametrize("name", [
    "00000000000000000000.log",          # log files
    "00000000000000000000.snapshot",     # producer snapshots
    "00000000000000000000.index",        # offset indexes
    "00000000000000000000.timeindex",
    "leader-epoch-checkpoint",
    "partition.metadata",
])
def test_invalid_snapshot_filenames(name):
    """SnapshotsTest.testInvalidSnapshotFilenames @4.3.0: none of a partition directory's
    other files parses as a snapshot."""
    assert Snapshots.parse(Path("/") / name) is None


@pytest.mark.parametrize("rename_before_deleting", [True, False])
def test_delete_snapshot(tmp_path, rename_before_deleting):
    """SnapshotsTest.testDeleteSnapshot @4.3.0: the frozen file, renamed to
    ``.checkpoint.deleted`` or not, is deleted by deleteIfExists."""
    snapshot_id = _snapshot_id(4)
    snapshot_path = Snapshots.snapshot_path(tmp_path, snapshot_id)
    snapshot_path.write_bytes(b"")   # FileRawSnapshotWriter.create(...).freeze()
    assert snapshot_path.exists()
    if rename_before_deleting:
        os.replace(snapshot_path, Snapshots.delete_rename_path(snapshot_path, snapshot_id))
    assert Snapshots.delete_if_exists(tmp_path, snapshot_id)
    assert not snapshot_path.exists()
    assert not Snapshots.delete_rename_path(snapshot_path, snapshot_id).exists()


def test_snapshot_file_names_are_zero_padded_offset_and_epoch(tmp_path):
    """Snapshots.filenameFromSnapshotId @4.3.0: 20 digits of end offset, a dash, 10 of epoch;
    the bootstrap snapshot 0-0 is ``00000000000000000000-0000000000.checkpoint``;
    markForDelete renames a frozen snapshot to ``.checkpoint.deleted``."""
    assert Snapshots.snapshot_path(tmp_path, Snapshots.BOOTSTRAP_SNAPSHOT_ID).name == \
        "00000000000000000000-0000000000.checkpoint"
    assert Snapshots.filename_from_snapshot_id(OffsetAndEpoch(1234, 5)) == \
        "00000000000000001234-0000000005"
    frozen = Snapshots.snapshot_path(tmp_path, OffsetAndEpoch(1234, 5))
    frozen.write_bytes(b"")
    marked = Snapshots.mark_for_delete(tmp_path, OffsetAndEpoch(1234, 5))
    assert marked.name == "00000000000000001234-0000000005.checkpoint.deleted"
    assert not frozen.exists() and marked.exists()
    assert Snapshots.parse(marked).deleted
