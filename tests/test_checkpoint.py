"""Checkpoint files: Kafka's text format, atomic writes, cadence, restart recovery, bad files."""

from __future__ import annotations

import os
import re

import pytest
from clusters import make_cluster

from kafkasim.core.checkpoint import (
    CorruptCheckpointError,
    LogDir,
    format_epochs,
    format_offsets,
    parse_epochs,
    parse_offsets,
)
from kafkasim.core.leader_epoch import LeaderEpochFileCache
from kafkasim.core.log import Log
from kafkasim.runtime.cluster import Cluster


def test_offset_checkpoint_format_matches_kafka():
    text = format_offsets([("foo", 0, 42), ("foo", 1, 17)])
    assert text == "0\n2\nfoo 0 42\nfoo 1 17\n"  # the fact sheet's example
    assert parse_offsets(text, "f") == [("foo", 0, 42), ("foo", 1, 17)]
    assert format_epochs([(0, 0), (3, 120)]) == "0\n2\n0 0\n3 120\n"


def test_reader_splits_entries_on_any_ascii_whitespace_like_kafkas_formatter():
    # OffsetCheckpointFile.Formatter / LeaderEpochCheckpointFile.Formatter split on \s+
    assert parse_offsets("0\n1\nfoo   2\t7\n", "f") == [("foo", 2, 7)]
    assert parse_offsets("0\n1\nfoo 2 7   \n", "f") == [("foo", 2, 7)]  # trailing: dropped
    assert parse_epochs("0\n1\n3\x0b120\n", "f") == [(3, 120)]
    # Integer.parseInt / Long.parseLong take a sign
    assert parse_offsets("0\n1\nfoo +2 -7\n", "f") == [("foo", 2, -7)]


def test_lines_end_at_cr_lf_or_crlf_like_bufferedreader_readline():
    assert parse_offsets("0\r\n1\r\nfoo 0 5\r\n", "f") == [("foo", 0, 5)]
    assert parse_offsets("0\r1\rfoo 0 5", "f") == [("foo", 0, 5)]  # last line unterminated


@pytest.mark.parametrize("text", ["", "0\n", "0", "0\r\n"])
def test_empty_file_and_version_only_file_read_as_no_entries(text):
    # CheckpointReadBuffer.read: readLine() == null after the version (or at once) -> empty list
    assert parse_offsets(text, "f") == []
    assert parse_epochs(text, "f") == []


def test_version_only_file_still_checks_the_version():
    with pytest.raises(CorruptCheckpointError, match="line 1: unrecognized version 1"):
        parse_offsets("1\n", "f")


@pytest.mark.parametrize("text, line, words", [
    ("1\n0\n", 1, "unrecognized version 1"),
    ("x\n0\n", 1, "malformed version 'x'"),
    (" 0\n0\n", 1, "malformed version ' 0'"),       # Integer.parseInt: no spaces around
    ("0 \n0\n", 1, "malformed version '0 '"),
    ("0\nzz\n", 2, "malformed entry count 'zz'"),
    ("0\n1 \nt 0 1\n", 2, "malformed entry count '1 '"),
    ("0\n1_0\n", 2, "malformed entry count '1_0'"),  # Python int() would take it
    ("0\n-1\n", 2, "Illegal Capacity: -1"),          # new ArrayList<>(-1)
    ("0\n1\nfoo 0\n", 3, "has 2 whitespace-separated field(s)"),
    ("0\n1\n foo 0 1\n", 3, "has 4 whitespace-separated field(s)"),  # leading "" field
    ("0\n1\nfoo\u00a00 1\n", 3, "has 2 whitespace-separated field(s)"),  # NBSP is not \s
    ("0\n1\n\n", 3, "has 1 whitespace-separated field(s)"),  # a blank line is an entry
    ("0\n1\nfoo zero 3\n", 3, "partition 'zero' is not a Java int"),
    ("0\n1\nfoo 2147483648 3\n", 3, "partition '2147483648' is not a Java int"),
    ("0\n1\nfoo 0 9223372036854775808\n", 3, "offset '9223372036854775808' is not a Java long"),
    ("0\n1\nfoo 0 1_000\n", 3, "offset '1_000' is not a Java long"),
    ("0\n1\nfoo 0 \U0001d7cf\n", 3, "is not a Java long"),  # Python int() reads this as 1
])
def test_malformed_files_name_file_and_line(text, line, words):
    with pytest.raises(CorruptCheckpointError) as e:
        parse_offsets(text, "/data/replication-offset-checkpoint")
    msg = str(e.value)
    assert msg.startswith(f"/data/replication-offset-checkpoint: line {line}:")
    assert words in msg
    assert e.value.line == line and e.value.path == "/data/replication-offset-checkpoint"


def test_a_byte_order_mark_makes_the_version_line_malformed():
    # Java's UTF-8 decoder keeps U+FEFF, and Integer.parseInt refuses it
    with pytest.raises(CorruptCheckpointError, match="line 1: malformed version"):
        parse_offsets("\ufeff0\n0\n", "f")


def test_bmp_unicode_digits_parse_as_java_does():
    # Character.digit(ch, 10) accepts any BMP decimal digit (Java 17 prints 34 for "\u0663\u0664")
    assert parse_epochs("0\n1\n\u0663 \u0663\u0664\n", "f") == [(3, 34)]


@pytest.mark.parametrize("text, words", [
    ("0\n1\n2147483648 0\n", "epoch '2147483648' is not a Java int"),
    ("0\n1\n1 0 0\n", "has 3 whitespace-separated field(s)"),
])
def test_epoch_file_fields_are_int_epoch_and_long_offset(text, words):
    with pytest.raises(CorruptCheckpointError, match="line 3: .*" + re.escape(words)):
        parse_epochs(text, "f")


@pytest.mark.parametrize("text, found", [
    ("0\n2\nfoo 0 1\n", 1),                       # a missing line
    ("0\n1\nfoo 0 1\nfoo 1 2\n", 2),              # an extra line: read to the end of the file
    ("0\n1\n", 0),
])
def test_wrong_count_is_refused(text, found):
    expected = int(text.split("\n")[1])
    with pytest.raises(CorruptCheckpointError) as e:
        parse_offsets(text, "f")
    assert str(e.value) == (f"f: expected {expected} entries in checkpoint file, but found only "
                            f'{found} (Kafka: IOException "Expected [{expected}] entries")')
    assert e.value.line is None


def test_invalid_utf8_is_refused_naming_file_and_line(tmp_path):
    d = LogDir(tmp_path)
    (tmp_path / "replication-offset-checkpoint").write_bytes(b"0\n1\nt\xff 0 1\n")
    with pytest.raises(CorruptCheckpointError) as e:
        d.read("replication-offset-checkpoint")
    assert e.value.line == 3
    assert str(e.value).startswith(f"{tmp_path / 'replication-offset-checkpoint'}: line 3: ")
    assert "not valid UTF-8" in str(e.value)


def test_a_directory_in_place_of_a_checkpoint_is_refused_naming_it(tmp_path):
    d = LogDir(tmp_path)
    (tmp_path / "recovery-point-offset-checkpoint").mkdir()
    d.create_if_missing("recovery-point-offset-checkpoint")  # FileAlreadyExists: ignored
    with pytest.raises(CorruptCheckpointError, match="is a directory"):
        d.read("recovery-point-offset-checkpoint")


def test_opening_a_checkpoint_creates_it_empty(tmp_path):
    # CheckpointFile's constructor: Files.createFile, FileAlreadyExistsException ignored
    d = LogDir(tmp_path)
    d.create_if_missing("t-0/leader-epoch-checkpoint")
    assert (tmp_path / "t-0" / "leader-epoch-checkpoint").read_text() == ""
    (tmp_path / "t-0" / "leader-epoch-checkpoint").write_text("0\n0\n")
    d.create_if_missing("t-0/leader-epoch-checkpoint")
    assert d.read("t-0/leader-epoch-checkpoint") == "0\n0\n"
    mem = LogDir()
    mem.create_if_missing("replication-offset-checkpoint")
    assert mem.read("replication-offset-checkpoint") == "" and mem.writes == 0


def test_a_started_broker_has_its_checkpoint_files_even_before_writing_them():
    c = Cluster(brokers=1, seed=1)
    c.create_topic("t", partitions=1, replication_factor=1)
    c.run(10)
    files = c.brokers[1].log_manager.log_dir.listing()
    assert {"replication-offset-checkpoint", "recovery-point-offset-checkpoint",
            "log-start-offset-checkpoint"} <= set(files)


def test_atomic_write_to_a_real_directory(tmp_path):
    d = LogDir(tmp_path / "broker-1")
    d.write_atomic("t-0/leader-epoch-checkpoint", format_epochs([(0, 0)]))
    d.write_atomic("replication-offset-checkpoint", format_offsets([("t", 0, 5)]))
    assert (tmp_path / "broker-1" / "replication-offset-checkpoint").read_text() == "0\n1\nt 0 5\n"
    assert not list((tmp_path / "broker-1").rglob("*.tmp"))  # renamed over, nothing left
    assert d.read("t-0/leader-epoch-checkpoint") == "0\n1\n0 0\n"
    assert d.read("missing") is None


def _cluster(**kw) -> Cluster:
    return make_cluster(seed=5, topic="t", partitions=2, records=20, **kw)


def test_hw_checkpoint_cadence_is_replica_high_watermark_checkpoint_interval():
    c = _cluster()
    b = c.brokers[1]
    c.run(5000 - c.now % 5000 - 1)
    before = b.log_manager.log_dir.writes
    c.run(5000)
    # one replication-offset-checkpoint write per 5000 ms (plus nothing else on an idle broker)
    assert b.log_manager.log_dir.writes - before == 1


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


# -- recovery point: Kafka's flushes only, not the OS's page-cache write-back ------------------
def _one_partition(**config) -> Cluster:
    c = Cluster(brokers=2, seed=3, config=config)
    c.create_topic("t", partitions=1, replication_factor=2, assignment=[[1, 2]])
    p = c.producer(acks="all", linger_ms=0)
    for i in range(6):
        p.send("t", f"v{i}", partition=0)
        c.run(20)
    p.flush()
    return c


def test_page_cache_write_back_is_durable_but_does_not_move_the_recovery_point():
    # Kafka's recoveryPoint moves only in UnifiedLog.flush / LocalLog.markFlushed; the kernel's
    # dirty-page write-back (dirty_expire_centisecs = 30 s) happens behind Kafka's back
    c = _one_partition()
    c.run(61000)  # write-back done, and a "kafka-recovery-point-checkpoint" run after it
    log = c.log(2, "t", 0)
    assert log.log_end_offset == 6
    assert log.durable_offset == 6
    assert log.recovery_point == 0
    assert log.unflushed_messages() == 6  # what flush.messages counts
    log_dir = c.brokers[2].log_manager.log_dir
    rps = parse_offsets(log_dir.read("recovery-point-offset-checkpoint"), "f")
    assert rps == [("t", 0, 0)]
    c.power_loss(2)  # ... yet the written-back records survive a power loss
    assert c.log(2, "t", 0).log_end_offset == 6


def test_power_loss_before_write_back_loses_what_kafka_did_not_flush():
    c = _one_partition()
    c.power_loss(2)
    assert c.log(2, "t", 0).log_end_offset == 0


def test_flush_messages_moves_the_recovery_point_and_the_checkpoint():
    c = _one_partition(**{"log.flush.interval.messages": 4})
    log = c.log(2, "t", 0)
    assert (log.recovery_point, log.durable_offset) == (4, 4)
    c.run(60000)
    log_dir = c.brokers[2].log_manager.log_dir
    rps = parse_offsets(log_dir.read("recovery-point-offset-checkpoint"), "f")
    assert rps == [("t", 0, 4)]


def test_log_flusher_flushes_after_flush_ms_since_the_last_flush():
    # LogManager.startup: kafka-log-flusher first runs after InitialTaskDelayMs (30000), then
    # every log.flush.scheduler.interval.ms; LogManager.flushDirtyLogs: time.milliseconds -
    # log.lastFlushTime >= flush.ms -> flush
    c = _one_partition(**{"log.flush.scheduler.interval.ms": 1000, "log.flush.interval.ms": 5000})
    log = c.log(2, "t", 0)
    c.run(30000 - c.now - 1)
    assert log.recovery_point == 0  # flush.ms elapsed long ago, but the flusher has not run
    c.run(2)
    assert log.recovery_point == log.log_end_offset == 6
    p = c.producer(acks="all", linger_ms=0)
    p.send("t", "w", partition=0)
    p.flush()
    flushed = c.brokers[2].log_manager.last_flush_ms[("t", 0)]
    c.run(max(0, flushed + 5000 - c.now - 1001))
    assert log.recovery_point == 6  # flush.ms not yet elapsed since the last flush
    c.run(2002)
    assert log.recovery_point == log.log_end_offset == 7


def test_unclean_restart_recovers_from_the_checkpointed_recovery_point_and_keeps_the_data():
    # LogLoader.recoverLog: no clean shutdown file -> recovery point = min(checkpoint, LEO)
    c = _one_partition(**{"log.flush.interval.messages": 4})
    c.run(60000)  # checkpoint: t-0 -> 4
    c.crash(2)
    c.run(20000)   # its old ZooKeeper session expires (else the start fails: NodeExists)
    c.start(2)
    log = c.log(2, "t", 0)
    assert log.log_end_offset == 6  # records above the recovery point are re-read and kept
    assert log.recovery_point == 4
    assert log.unflushed_messages() == 2


def test_clean_restart_sets_the_recovery_point_to_the_log_end():
    c = _one_partition()
    c.shutdown(2)
    c.run_until(lambda cl: cl.brokers[2].state == "stopped", 60000)
    c.start(2)
    log = c.log(2, "t", 0)
    assert log.recovery_point == log.log_end_offset == 6


@pytest.mark.parametrize("name, resetting", [
    ("recovery-point-offset-checkpoint", "resetting the recovery checkpoint to 0"),
    ("log-start-offset-checkpoint", "resetting to the base offset of the first segment"),
])
def test_malformed_recovery_point_or_log_start_file_only_warns(tmp_path, name, resetting):
    # LogManager.loadLogs reads these two inside try { ... } catch (Exception) { warn }
    c = Cluster(brokers=2, seed=3, log_dirs=str(tmp_path),
                config={"log.flush.interval.messages": 4})
    c.create_topic("t", partitions=1, replication_factor=2, assignment=[[1, 2]])
    p = c.producer(acks="all", linger_ms=0)
    for i in range(6):
        p.send("t", f"v{i}", partition=0)
    p.flush()
    c.run(60000)
    checkpointed = parse_offsets(
        (tmp_path / "broker-2" / "recovery-point-offset-checkpoint").read_text(), "f")
    assert checkpointed == [("t", 0, 6)]
    c.crash(2)
    c.run(20000)   # its old ZooKeeper session expires (else the start fails: NodeExists)
    (tmp_path / "broker-2" / name).write_text("0\n1\nt 0 zz\n")
    c.start(2)
    assert c.brokers[2].state == "running"
    warns = c.trace.where("checkpoint_warning")
    assert len(warns) == 1 and resetting in str(warns[0][5]) and name in str(warns[0][5])
    log = c.log(2, "t", 0)
    assert log.log_end_offset == 6
    assert log.recovery_point == (0 if name.startswith("recovery") else 6)


@pytest.mark.parametrize("version, refused", [("3.7", True), ("2.6", False)])
def test_negative_epoch_in_leader_epoch_checkpoint_fails_the_load_since_2_7(tmp_path, version,
                                                                           refused):
    # LeaderEpochFileCache constructor (2.7+): checkpoint.read().forEach(this::assign) ->
    # IllegalArgumentException "Received invalid partition leader epoch entry"
    c = Cluster(brokers=2, seed=3, log_dirs=str(tmp_path), kafka_version=version)
    c.create_topic("t", partitions=1, replication_factor=2, assignment=[[1, 2]])
    p = c.producer(acks="all")
    for i in range(6):
        p.send("t", f"v{i}", partition=0)
    p.flush()
    c.run(100)
    c.crash(2)
    c.run(20000)   # its old ZooKeeper session expires (else the start fails: NodeExists)
    path = tmp_path / "broker-2" / "t-0" / "leader-epoch-checkpoint"
    path.write_text("0\n2\n0 0\n-1 4\n")
    if refused:
        with pytest.raises(CorruptCheckpointError, match="invalid partition leader epoch entry"):
            c.start(2)
        return
    c.start(2)
    assert c.log(2, "t", 0).leader_epoch_cache.entries == [(0, 0), (-1, 4)]


@pytest.mark.parametrize("version, legacy", [("2.0", True), ("2.1", False), ("3.7", False)])
def test_brokers_give_their_logs_the_epoch_cache_rules_of_their_version(version, legacy):
    c = Cluster(brokers=1, seed=1, kafka_version=version)
    c.create_topic("t", partitions=1, replication_factor=1)
    c.run(10)
    cache = c.log(1, "t", 0).leader_epoch_cache
    assert cache.truncates_conflicts is not legacy
    assert cache.validates_entries is (version == "3.7")
    assert c.brokers[1].log_manager.log_dir.read("t-0/leader-epoch-checkpoint") is not None


# -- the epoch cache owns leader-epoch-checkpoint ------------------------------------------------
class _RecordingCheckpoint:
    def __init__(self) -> None:
        self.written: list[list[tuple[int, int]]] = []

    def write(self, entries) -> None:
        self.written.append([tuple(e) for e in entries])


def test_epoch_cache_rewrites_its_checkpoint_after_each_change():
    # LeaderEpochFileCache (3.7.0): assign -> writeToFile(true) only if the entries changed,
    # truncateFromEnd / truncateFromStart -> writeToFile(false) only if entries were removed,
    # clearAndFlush -> writeToFile(true) always (2.0.0: flush() in assign, clearAndFlushLatest,
    # clearAndFlushEarliest, clearAndFlush)
    cp = _RecordingCheckpoint()
    cache = LeaderEpochFileCache(checkpoint=cp)
    assert cache.assign(0, 0) and cp.written == [[(0, 0)]]
    assert not cache.assign(0, 5) and len(cp.written) == 1        # same epoch: no change
    cache.assign(2, 10)
    cache.assign(3, 20)
    assert cp.written[-1] == [(0, 0), (2, 10), (3, 20)]
    assert not cache.truncate_from_end(25) and len(cp.written) == 3
    assert cache.truncate_from_end(20) and cp.written[-1] == [(0, 0), (2, 10)]
    assert cache.truncate_from_start(12) and cp.written[-1] == [(2, 12)]
    cache.clear_and_flush()
    cache.clear_and_flush()
    assert cp.written[-2:] == [[], []]


def test_power_loss_keeps_the_epoch_file_and_tells_no_listener():
    # a power loss runs no Kafka code: the fsynced leader-epoch-checkpoint keeps what it had,
    # and LogLoader's truncateFromEnd(LEO) at the restart reconciles it (LogManager.load_logs)
    cp = _RecordingCheckpoint()
    log = Log("t", 0)
    log.leader_epoch_cache.checkpoint = cp
    log.append_as_leader([1, 2], [10, 10], 0, 0)
    log.append_as_leader([3], [10], 1, 0)
    told = []
    log.listener = type("L", (), {"on_truncate": lambda self, *a: told.append(a)})()
    written = len(cp.written)
    assert log.lose_unsynced(2) == 1
    assert log.leader_epoch_cache.entries == [(0, 0)]
    assert len(cp.written) == written and told == []
    assert cp.written[-1] == [(0, 0), (1, 2)]          # the file as Kafka last wrote it
    assert log.truncate_to(0, "test") == 2 and len(told) == 1 and cp.written[-1] == []


def test_no_leader_epoch_checkpoint_before_kip_101():
    # LeaderEpochCheckpointFile arrived with KIP-101 (0.11): a 0.10 broker's cache has no file
    c = Cluster(brokers=1, seed=1, kafka_version="0.10.2")
    c.create_topic("t", partitions=1, replication_factor=1)
    p = c.producer(acks=1)
    p.send("t", "v", partition=0)
    p.flush()
    assert c.log(1, "t", 0).leader_epoch_cache.checkpoint is None
    assert c.brokers[1].log_manager.log_dir.read("t-0/leader-epoch-checkpoint") is None


def test_loading_a_log_truncates_the_epoch_cache_and_rewrites_its_file(tmp_path):
    # LogLoader.load -> leaderEpochCache.truncateFromEnd(nextOffset): an entry past the log end
    # (a tail lost before the restart) leaves the cache and the file (LeaderEpochFileCache
    # writes its checkpoint whenever truncateFromEnd removes entries)
    c = Cluster(brokers=2, seed=3, log_dirs=str(tmp_path))
    c.create_topic("t", partitions=1, replication_factor=2, assignment=[[1, 2]])
    p = c.producer(acks="all")
    for i in range(6):
        p.send("t", f"v{i}", partition=0)
    p.flush()
    c.run(100)
    c.shutdown(2)
    c.run_until(lambda cl: cl.brokers[2].state == "stopped", 60000, raise_on_timeout=True)
    path = tmp_path / "broker-2" / "t-0" / "leader-epoch-checkpoint"
    assert parse_epochs(path.read_text(), str(path)) == [(0, 0)]
    path.write_text("0\n2\n0 0\n7 100\n")   # epoch 7 would start past the log end (6)
    c.start(2)
    assert c.log(2, "t", 0).leader_epoch_cache.entries == [(0, 0)]
    assert parse_epochs(path.read_text(), str(path)) == [(0, 0)]
