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
