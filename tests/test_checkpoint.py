"""Checkpoint files: Kafka's text format, atomic writes, cadence, restart recovery, bad files."""

from __future__ import annotations

import os

import pytest

from kafkasim.cluster import Cluster
from kafkasim.storage.checkpoint import (
    CorruptCheckpointError,
    LogDir,
    format_epochs,
    format_offsets,
    parse_epochs,
    parse_offsets,
)


def test_offset_checkpoint_format_matches_kafka():
    text = format_offsets([("foo", 0, 42), ("foo", 1, 17)])
    assert text == "0\n2\nfoo 0 42\nfoo 1 17\n"  # the fact sheet's example
    assert parse_offsets(text, "f") == [("foo", 0, 42), ("foo", 1, 17)]
    assert format_epochs([(0, 0), (3, 120)]) == "0\n2\n0 0\n3 120\n"


def test_reader_accepts_any_whitespace_and_empty_files():
    assert parse_offsets("0\n1\nfoo   2\t7\n", "f") == [("foo", 2, 7)]
    assert parse_offsets("", "f") == []
    assert parse_epochs("0\n0\n", "f") == []


@pytest.mark.parametrize("text, line, words", [
    ("1\n0\n", 1, "unrecognized version"),
    ("x\n0\n", 1, "malformed version"),
    ("0\nzz\n", 2, "malformed entry count"),
    ("0\n1\nfoo 0\n", 3, "malformed line"),
    ("0\n1\nfoo zero 3\n", 3, "malformed line"),
])
def test_malformed_files_name_file_and_line(text, line, words):
    with pytest.raises(CorruptCheckpointError) as e:
        parse_offsets(text, "/data/replication-offset-checkpoint")
    msg = str(e.value)
    assert msg.startswith(f"/data/replication-offset-checkpoint: line {line}:")
    assert words in msg


def test_wrong_count_is_refused():
    with pytest.raises(CorruptCheckpointError, match="expected 2 entries .* found 1"):
        parse_offsets("0\n2\nfoo 0 1\n", "f")


def test_atomic_write_to_a_real_directory(tmp_path):
    d = LogDir(tmp_path / "broker-1")
    d.write_atomic("t-0/leader-epoch-checkpoint", format_epochs([(0, 0)]))
    d.write_atomic("replication-offset-checkpoint", format_offsets([("t", 0, 5)]))
    assert (tmp_path / "broker-1" / "replication-offset-checkpoint").read_text() == "0\n1\nt 0 5\n"
    assert not list((tmp_path / "broker-1").rglob("*.tmp"))  # renamed over, nothing left
    assert d.read("t-0/leader-epoch-checkpoint") == "0\n1\n0 0\n"
    assert d.read("missing") is None


def _cluster(**kw) -> Cluster:
    c = Cluster(brokers=3, seed=5, **kw)
    c.create_topic("t", partitions=2, replication_factor=3)
    p = c.producer(acks="all")
    for i in range(20):
        p.send("t", f"v{i}", partition=i % 2)
    p.flush()
    return c


def test_hw_checkpoint_cadence_is_replica_high_watermark_checkpoint_interval():
    c = _cluster()
    b = c.brokers[1]
    c.run(5000 - c.now % 5000 - 1)
    before = b.log_dir.writes
    c.run(5000)
    # one replication-offset-checkpoint write per 5000 ms (plus nothing else on an idle broker)
    assert b.log_dir.writes - before == 1


def test_files_written_by_a_run_parse_back_to_the_same_state(tmp_path):
    c = _cluster(log_dirs=str(tmp_path))
    c.shutdown(2)
    c.run_until(lambda cl: cl.brokers[2].state == "stopped", 60000)
    b = c.brokers[2]
    root = tmp_path / "broker-2"
    hws = dict(((t, p), o) for t, p, o in parse_offsets(
        (root / "replication-offset-checkpoint").read_text(), "f"))
    rps = dict(((t, p), o) for t, p, o in parse_offsets(
        (root / "recovery-point-offset-checkpoint").read_text(), "f"))
    for tp, log in b.logs.items():
        assert hws[tp] == log.high_watermark
        assert rps[tp] == log.log_end_offset  # a clean shutdown flushes everything
        epochs = parse_epochs((root / f"{tp[0]}-{tp[1]}" / "leader-epoch-checkpoint").read_text(),
                              "f")
        assert [tuple(e) for e in log.leader_epoch_cache.entries] == epochs
    # and a restart reads them back
    snapshot = {tp: (log.high_watermark, list(log.leader_epoch_cache.entries))
                for tp, log in b.logs.items()}
    c.start(2)
    for tp, log in b.logs.items():
        assert (log.high_watermark, list(log.leader_epoch_cache.entries)) == snapshot[tp]


def test_restart_refuses_a_malformed_checkpoint_naming_file_and_line(tmp_path):
    c = _cluster(log_dirs=str(tmp_path))
    c.crash(3)
    path = tmp_path / "broker-3" / "replication-offset-checkpoint"
    path.write_text("0\n2\nt 0 9\nt one 9\n")
    with pytest.raises(CorruptCheckpointError) as e:
        c.start(3)
    assert str(e.value).startswith(f"{os.fspath(path)}: line 4: malformed line")


def test_power_loss_keeps_only_the_flushed_prefix():
    c = Cluster(brokers=2, seed=3, config={"log.flush.interval.messages": 5})
    c.create_topic("t", partitions=1, replication_factor=2, assignment=[[1, 2]])
    p = c.producer(acks="all", linger_ms=0)
    for i in range(7):
        p.send("t", f"v{i}", partition=0)
        c.run(20)
    p.flush()
    log = c.log(2, "t", 0)
    assert log.log_end_offset == 7 and log.recovery_point == 5
    c.power_loss(2)
    assert c.log(2, "t", 0).log_end_offset == 5
    assert c.brokers[2].state == "stopped"


def test_crash_keeps_the_page_cache():
    c = _cluster()
    leo = c.log(3, "t", 0).log_end_offset
    c.crash(3)
    assert c.log(3, "t", 0).log_end_offset == leo
