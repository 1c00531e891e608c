"""Issue 16: a leader-epoch-checkpoint that parses but is wrong, loaded as Kafka loads it.

Kafka 2.7+ rebuilds the cache by assigning the file's entries one by one (LeaderEpochFileCache's
constructor: ``checkpoint.read().forEach(this::assign)``, KAFKA-10435), so entries out of order
are dropped by ``assign``'s rules; LogLoader.load then truncates the cache to the log end offset
(``truncateFromEnd(nextOffset)``) and to the log start (``truncateFromStart``). What is left is
trusted: an epoch newer than any the leader knows makes the leader answer the follower's fetches
with OFFSET_OUT_OF_RANGE (Partition.readRecords: "Could not determine the end offset of the last
fetched epoch"), and the follower keeps its log and its latest epoch
(AbstractFetcherThread.fetchOffsetAndTruncate), in 3.7 and trunk alike.
"""

from __future__ import annotations

import os

import pytest

from kafkasim.core.checkpoint import CorruptCheckpointError, LogDir
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.describe import cluster_id


def _restart_with_checkpoint(tmp_path, version: str, text: str):
    c = Cluster(3, kafka_version=version, log_dirs=str(tmp_path), seed=1)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all")
    for i in range(10):
        p.send("t", f"v{i}")
    c.run(2000)
    c.crash(2)
    c.run(20000)   # the old ZooKeeper session expires
    path = c.brokers[2].log_manager.log_dir.path("t-0/leader-epoch-checkpoint")
    with open(path, "w", encoding="utf-8") as f:
        f.write(text.replace("|", "\n"))
    c.start(2)
    c.run(1000)
    return c


def _messages_per_minute(c) -> int:
    sent = c.transport.network.stats["sent"]
    c.run(60000)
    return c.transport.network.stats["sent"] - sent


@pytest.mark.parametrize("text,entries", [
    ("0|2|0 0|5 100|", [(0, 0)]),        # a start offset beyond the log end: truncateFromEnd
    ("0|2|5 0|0 3|", [(0, 3)]),          # epochs not increasing: assign drops 5 -> 0
    ("0|2|0 5|1 3|", [(1, 3)]),          # start offsets not increasing: assign drops 0 -> 5
    ("0|1|0 999|", []),                  # beyond the log end
])
def test_wrong_checkpoint_cleaned_on_load_and_follower_rejoins(tmp_path, text, entries):
    c = _restart_with_checkpoint(tmp_path, "3.7", text)
    cache = c.brokers[2].logs[("t", 0)].leader_epoch_cache
    # what load left (then the follower appended as it replicated)
    assert [tuple(e) for e in cache.entries][:len(entries)] == entries or not entries
    per_min = _messages_per_minute(c)
    assert per_min < 1000          # fetches at replica.fetch.wait.max.ms, not a tight loop
    assert 2 in c.isr("t", 0)


def test_epoch_newer_than_the_leaders_is_kept_and_fetches_fail_as_in_kafka(tmp_path):
    """A huge epoch inside the log survives load in Kafka too (assign accepts it, it starts
    below the log end); Kafka's leader then answers every fetch OFFSET_OUT_OF_RANGE and the
    follower retries at once: it never rejoins the ISR until an operator repairs the file."""
    c = _restart_with_checkpoint(tmp_path, "3.7", "0|2|0 0|2147483647 3|")
    cache = c.brokers[2].logs[("t", 0)].leader_epoch_cache
    assert cache.latest_epoch() == 2147483647
    assert _messages_per_minute(c) > 10_000
    assert 2 not in c.isr("t", 0)


@pytest.mark.parametrize("text", ["0|1|99 0|", "0|2|0 0|7 3|"])
def test_a_follower_looping_on_an_epoch_above_the_leaders_says_so_once(tmp_path, text):
    """Issue 30: Kafka loops too (Partition.readRecords answers OFFSET_OUT_OF_RANGE, "Could not
    determine the end offset of the last fetched epoch"; AbstractFetcherThread
    .fetchOffsetAndTruncate keeps the follower's log and its latest epoch, and
    handleOutOfRangeError returns without a backoff), so the loop stays; one trace row per
    partition says why, naming the file to repair."""
    c = _restart_with_checkpoint(tmp_path, "3.7", text)
    assert _messages_per_minute(c) > 10_000
    rows = [r for r in c.trace.rows if r[1] == "fetch_out_of_range" and r[2] == 2]
    assert len(rows) == 1
    epoch = 99 if "99" in text else 7
    msg = str(rows[0][5])
    assert (rows[0][3], rows[0][4]) == ("t", 0)
    assert f"last fetched epoch {epoch}" in msg and "leader-epoch-checkpoint" in msg
    assert "above the leader's epoch 1" in msg


def test_checkpoint_before_2_7_is_taken_as_it_is(tmp_path):
    """Before KAFKA-10435 (2.7) the file was read without assigning: the entries stand."""
    c = _restart_with_checkpoint(tmp_path, "2.6", "0|2|5 0|0 3|")
    assert 2 in c.isr("t", 0)


@pytest.mark.parametrize("make", ["dir", "utf8", "negative"])
def test_unreadable_checkpoint_is_the_checkpoint_error_naming_file_and_line(tmp_path, make):
    c = Cluster(3, kafka_version="3.7", log_dirs=str(tmp_path), seed=1)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(1000)
    c.crash(2)
    c.run(20000)
    path = c.brokers[2].log_manager.log_dir.path("t-0/leader-epoch-checkpoint")
    os.unlink(path)
    if make == "dir":
        os.mkdir(path)
    elif make == "utf8":
        with open(path, "wb") as f:
            f.write(b"0\n1\n0 \xff\n")
    else:
        with open(path, "w", encoding="utf-8") as f:
            f.write("0\n1\n-3 0\n")
    with pytest.raises(CorruptCheckpointError) as info:
        c.start(2)
    msg = str(info.value)
    assert "leader-epoch-checkpoint" in msg
    if make == "utf8":
        assert "line 3" in msg


def test_checkpoint_tmp_symlink_is_not_followed(tmp_path):
    d = LogDir(tmp_path / "logs")
    victim = tmp_path / "victim"
    victim.write_text("precious\n", encoding="utf-8")
    os.symlink(victim, tmp_path / "logs" / "replication-offset-checkpoint.tmp")
    d.write_atomic("replication-offset-checkpoint", "0\n0\n")
    assert victim.read_text(encoding="utf-8") == "precious\n"
    assert (tmp_path / "logs" / "replication-offset-checkpoint").read_text() == "0\n0\n"
    assert not (tmp_path / "logs" / "replication-offset-checkpoint").is_symlink()


def _log_start_ahead(tmp_path, version: str):
    """Issue 30: six acked records; broker 2 restarts with ``t 0 1000`` in its
    log-start-offset-checkpoint (LEO 6), then leads (1 and 3 crash in turn), then all run."""
    from kafkasim.observe.checks import attach
    c = Cluster(3, kafka_version=version, log_dirs=str(tmp_path), seed=1)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    suite = attach(c, on_violation="collect")
    p = c.producer("p", acks="all")
    for i in range(6):
        p.send("t", f"v{i}")
    c.run(2000)
    assert len(p.acked()) == 6
    c.crash(2)
    c.run(20000)
    with open(c.brokers[2].log_manager.log_dir.path("log-start-offset-checkpoint"), "w",
              encoding="utf-8") as f:
        f.write("0\n1\nt 0 1000\n")
    c.start(2)
    c.run(3000)
    return c, suite


def test_log_start_checkpoint_ahead_of_the_log_end_deletes_all_segments(tmp_path):
    """LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd (Log.recoverLog since 2.3,
    KAFKA-8306): a log start offset checkpointed past the log end deletes every segment and
    the log restarts empty at the checkpointed offset, with a warning; the follower then meets
    the leader's lower LEO (OFFSET_OUT_OF_RANGE) and truncates to it (fetchOffsetAndTruncate)."""
    c, _ = _log_start_ahead(tmp_path, "3.7")
    warn = [r for r in c.trace.rows if r[1] == "checkpoint_warning" and r[2] == 2]
    assert any("logEndOffset (6) is smaller than logStartOffset (1000)" in str(r[5])
               for r in warn)
    log = c.brokers[2].logs[("t", 0)]
    assert (log.log_start_offset, log.log_end_offset) == (6, 6)   # truncated to the leader's LEO


def test_no_acked_loss_flags_acked_records_no_replica_holds_below_the_log_start(tmp_path):
    """Whatever moved the log start (here a hand-edited log-start-offset-checkpoint), acked
    records that no replica holds any more are a loss, not 'deleted records'."""
    c, suite = _log_start_ahead(tmp_path, "3.7")
    c.crash(1)
    c.run(20000)
    c.crash(3)
    c.run(20000)
    c.start(1)
    c.start(3)
    c.run(30000)
    assert all(c.brokers[b].logs[("t", 0)].log_start_offset == 6 for b in (1, 2, 3))
    lost = [v for v in suite.violations if v.invariant == "NoAckedLoss"]
    assert sorted(v.offsets[0] for v in lost) == [0, 1, 2, 3, 4, 5]
    assert "no replica holds it" in lost[0].message and "log start offset 6" in lost[0].message


@pytest.mark.parametrize("version, mode, meta, directory_id, cleaner", [
    ("4.3", None, True, True, True),
    ("3.6", "kraft", True, False, True),     # directory.id came with KIP-858 (3.7)
    ("3.7", None, False, False, True),       # ZooKeeper mode: no kafka-storage format here
    ("0.9.0", None, False, False, False),    # log.cleaner.enable was false in 0.9.0.0
])
def test_log_dir_holds_meta_properties_and_cleaner_checkpoint_as_kafka_writes_them(
        tmp_path, version, mode, meta, directory_id, cleaner):
    """A KRaft log dir holds the meta.properties kafka-storage format wrote (MetaProperties:
    version 1, cluster.id, node.id, directory.id since 3.7); every broker whose log cleaner runs
    by default holds an empty cleaner-offset-checkpoint (LogCleanerManager)."""
    c = Cluster(3, kafka_version=version, metadata_mode=mode, log_dirs=str(tmp_path), seed=1)
    c.run(100)
    root = tmp_path / "broker-2"
    assert (root / "cleaner-offset-checkpoint").exists() is cleaner
    if cleaner:
        assert (root / "cleaner-offset-checkpoint").read_text() == ""
    assert (root / "meta.properties").exists() is meta
    if not meta:
        return
    lines = (root / "meta.properties").read_text().splitlines()
    assert lines[:2] == ["#", "#Thu Jan 01 00:00:00 UTC 1970"]
    props = dict(line.split("=", 1) for line in lines[2:])
    assert props["version"] == "1" and props["node.id"] == "2"
    assert props["cluster.id"] == cluster_id(1)   # what kafka-metadata-quorum describe shows
    assert ("directory.id" in props) is directory_id
    assert list(props) == sorted(props)
