"""Notebook 10's helpers and exercise checks (kafkasim/course/checkpoints.py).

The answers come from Kafka's restart rules as kafkasim implements them: the HW is loaded from
replication-offset-checkpoint (ReplicaManager.checkpointHighWatermarks every
replica.high.watermark.checkpoint.interval.ms = 5000, and at shutdown; LogManager.loadLogs), a
power loss keeps only flushed or written-back data, and a clean shutdown flushes every log
(LogManager.shutdown) and writes .kafka_cleanshutdown.
"""

from __future__ import annotations

import pytest

from kafkasim.course.checkpoints import (
    FAULTS,
    _replay,
    _setup,
    check_allowed_loss,
    check_loaded_hw,
    check_power_loss_restart,
    checkpoint_files,
    clean_shutdown_file,
    loaded,
    recoveries,
    replica_table,
)

# graded as in the notebooks, which set KAFKA_VERSION = "4.3" (conftest.py)
pytestmark = pytest.mark.usefixtures("notebook_kafka_version")


def test_restart_loads_the_checkpointed_hw_not_the_leaders():
    c, _p = _setup()
    leader = c.leader("t")
    follower = min(b for b in (1, 2, 3) if b != leader)
    on_disk = c.brokers[follower].log_manager.log_dir.read("replication-offset-checkpoint").split()
    checkpointed = int(on_disk[-1])
    assert checkpointed < c.log(leader, "t").high_watermark
    leo, hw = _replay("crash")
    assert (leo, hw) == (c.log(follower, "t").log_end_offset, checkpointed)


def test_clean_shutdown_checkpoints_the_hw_in_memory():
    leo, hw = _replay("shutdown")
    assert hw == leo > 0


def test_power_loss_keeps_only_durable_data_and_clamps_the_hw():
    leo, hw = _replay("power_loss")
    c, _p = _setup()
    follower = min(b for b in (1, 2, 3) if b != c.leader("t"))
    assert leo == c.log(follower, "t").durable_offset
    assert hw <= leo


def test_check_loaded_hw():
    _leo, hw = _replay("crash", 6000)
    assert check_loaded_hw(hw, wait_ms=6000)
    assert not check_loaded_hw(hw - 1, wait_ms=6000)
    assert not check_loaded_hw(None)
    assert check_loaded_hw(_replay("crash")[1], wait_ms=0)


def test_check_power_loss_restart():
    leo, hw = _replay("power_loss")
    assert check_power_loss_restart(leo, hw)
    assert not check_power_loss_restart(leo + 8, hw)
    assert not check_power_loss_restart(leo, hw + 5)
    assert not check_power_loss_restart(None, None)


def test_check_allowed_loss_is_graded_by_the_checkers():
    results = {f: bool(check_allowed_loss(f)) for f in FAULTS}
    assert results == {"crash": False, "power_loss": True, "shutdown": False}
    assert not check_allowed_loss("reboot")


def test_views_show_the_files_and_recoveries(tmp_path):
    c, _p = _setup()
    text = str(checkpoint_files(c, 2))
    assert "replication-offset-checkpoint" in text and "t-0/leader-epoch-checkpoint" in text
    assert "recovery point" in str(replica_table(c))
    assert "no log recovery" in str(recoveries(c))
    c.crash(2)
    c.run(100)
    c.start(2)
    shown = str(recoveries(c))
    assert "replication-offset-checkpoint" in shown and "0: 0" in shown   # epoch 0 from offset 0
    assert "[(" not in shown and loaded(c, 2) == {"LEO": 8, "HW": 5}


def test_clean_shutdown_file_shows_the_file_as_kafka_writes_it():
    """After a controlled shutdown the helper prints .kafka_cleanshutdown itself:
    CleanShutdownFileHandler's JSON with the broker epoch (3.7+); a broker that crashed has
    none, which is said, naming the broker."""
    c, _p = _setup()
    c.shutdown(2)
    c.run_until(lambda cl: cl.brokers[2].state == "stopped", 60000)
    epoch = c.brokers[2].previous_broker_epoch()
    assert epoch > 0
    assert str(clean_shutdown_file(c, 2)).splitlines() == [
        "--- broker-2/.kafka_cleanshutdown", f'{{"version":0,"brokerEpoch":{epoch}}}']
    c.crash(3)
    with pytest.raises(ValueError, match=r"broker=3.*\.kafka_cleanshutdown"):
        clean_shutdown_file(c, 3)
