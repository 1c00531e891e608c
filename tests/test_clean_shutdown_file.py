"""``.kafka_cleanshutdown`` as a real file in the log dir (issue 30).

Kafka: LogManager.shutdown writes it in every log dir that finished loading
(CleanShutdownFileHandler.write, 3.7+, KAFKA-15582: ``{"version":0,"brokerEpoch":N}``, -1 when
the broker has no epoch to give; an empty file, Files.createFile, before 3.7); LogManager
.loadLogs reads it, deletes it and loads the logs as cleanly shut down; a crash leaves no file,
so the next start recovers from the recovery point. Tests after LogManagerTest
.testCleanShutdownFileWithBrokerEpoch and LogLoaderTest.testCleanShutdownFile.
"""

from __future__ import annotations

import json
import os

from kafkasim.runtime.cluster import Cluster


def _marker(c, broker: int) -> str:
    return os.path.join(c.brokers[broker].log_manager.log_dir.root, ".kafka_cleanshutdown")


def test_clean_shutdown_file_with_broker_epoch(tmp_path):
    c = Cluster(3, kafka_version="4.1", log_dirs=str(tmp_path), seed=2)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(1000)
    epoch = c.brokers[1].broker_epoch
    assert epoch >= 0 and not os.path.exists(_marker(c, 1))
    c.shutdown(1)
    c.run_until(lambda cl: cl.brokers[1].state == "stopped", 10000)
    with open(_marker(c, 1), encoding="utf-8") as f:
        assert json.loads(f.read()) == {"version": 0, "brokerEpoch": epoch}
    c.start(1)
    assert not os.path.exists(_marker(c, 1))        # read, then deleted, at load
    assert c.brokers[1].lifecycle.previous_epoch == epoch


def test_a_crash_leaves_no_file_and_a_hand_made_one_makes_the_restart_clean(tmp_path):
    c = Cluster(3, kafka_version="4.1", log_dirs=str(tmp_path), seed=2)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(1000)
    c.crash(2)
    c.run(1000)
    assert not os.path.exists(_marker(c, 2))
    with open(_marker(c, 2), "w", encoding="utf-8") as f:
        f.write('{"version":0,"brokerEpoch":42}')
    c.start(2)
    assert c.brokers[2].lifecycle.previous_epoch == 42
    assert not os.path.exists(_marker(c, 2))


def test_before_3_7_the_file_is_empty(tmp_path):
    c = Cluster(3, kafka_version="3.6", log_dirs=str(tmp_path), seed=2)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    c.run(1000)
    c.shutdown(1)
    c.run_until(lambda cl: cl.brokers[1].state == "stopped", 30000)
    with open(_marker(c, 1), encoding="utf-8") as f:
        assert f.read() == ""
    assert c.brokers[1].log_manager.clean_shutdown_file is True
