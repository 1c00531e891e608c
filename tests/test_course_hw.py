"""Notebook 03's checks and the labelled space-time diagram (kafkasim.course.hw)."""

from __future__ import annotations

import pytest

from kafkasim.core import rules
from kafkasim.course import exercises, hw
from kafkasim.course.common import Stepper, leo_hw
from kafkasim.runtime.cluster import Cluster

# run as in the notebooks, which set KAFKA_VERSION = "4.3" (conftest.py)
pytestmark = pytest.mark.usefixtures("notebook_kafka_version")


def test_check_last_committed_is_the_hw_minus_one():
    leos, isr = {1: 53, 2: 47, 3: 41, 4: 50}, [1, 2, 4]
    assert hw.high_watermark(leos, isr) == 47
    assert exercises.check_last_committed(leos, isr, 46)
    assert not exercises.check_last_committed(leos, isr, 47)      # the HW itself
    assert not exercises.check_last_committed(leos, isr, 40)      # counting broker 3


def test_ack_waits_for_the_slow_followers_round_trip():
    """Partition.checkEnoughReplicasReachOffset: acks=all completes once the HW passes the
    record, i.e. after the slowest ISR member's next Fetch: two slow trips, not one."""
    took, s = hw.slow_broker_3_commit(delay_ms=40)
    assert 80 <= took <= 90
    assert exercises.check_ack_delay(took) and not exercises.check_ack_delay(took // 2)
    faster, _ = hw.slow_broker_3_commit(delay_ms=10)
    assert faster < took


def _all_replicas_hw(leader_leo, current_hw, followers, maximal, now_ms,
                     replica_lag_time_max_ms, **kwargs):
    return max(current_hw, min([leader_leo] + [f.log_end_offset for f in followers]))


def test_all_replicas_rule_stalls_acks_all_writes_and_kafkas_does_not():
    assert exercises.check_all_replicas_rule(_all_replicas_hw)
    assert not exercises.check_all_replicas_rule(rules.maybe_increment_leader_hw)
    _c, results, isr = hw.all_replicas_run(_all_replicas_hw)
    assert isr == [1, 2] and [r.acked for r in results] == [True, True, False, False]


def test_label_arrows_names_what_each_message_carried():
    c = Cluster(brokers=3, seed=hw.SEED)
    c.create_topic(hw.TOPIC, partitions=1, replication_factor=3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all", linger_ms=0)
    p.send_many(hw.TOPIC, [f"m{i}" for i in range(6)], partition=0)
    c.run(1500)
    s = Stepper(c, hw.TOPIC)
    p.send(hw.TOPIC, "m6", partition=0)
    s.run_until(lambda cl: all(h == 7 for _leo, h in leo_hw(cl, hw.TOPIC).values()), 5000)
    from kafkasim.viz import spacetime

    t1 = s.rows[-1].time_ms
    fig = hw.label_arrows(spacetime(c, t1 - 3, t1 + 1, types=["Fetch"]), s)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels.count("HW 7") == 2          # both FetchResponses that carry the new HW
    fig = hw.label_arrows(spacetime(c, s.rows[0].time_ms, s.rows[0].time_ms + 8), s)
    labels = [t.get_text() for t in fig.axes[0].texts]
    assert labels.count("Fetch from 7") == 2 and labels.count("offset 6 · HW 6") == 2
    assert hw.arrow_label("ProduceResponse 1->p: acked, offset 6") == "acked 6"


def test_check_unlucky_failover_replays_the_crash_with_the_luck_reversed():
    """Notebook 03 exercise 4: leader 1 holds 0-9, broker 2 0-6, broker 3 0-7, HW 7. The
    controller elects the first live ISR member in assignment order (broker 2, whatever its log:
    PartitionChangeBuilder / offlinePartitionLeaderElection); broker 3 truncates to where epoch 0
    ends on the new leader (OffsetsForLeaderEpoch, 7): HW 7, m7 gone."""
    from kafkasim.course.hw import HW_TOPIC, unlucky_failover

    c = unlucky_failover(kafka_version="4.3")
    assert c.leader(HW_TOPIC) == 2 and c.high_watermark(HW_TOPIC) == 7
    assert [v for _o, _e, v in c.log_records(3, HW_TOPIC)] == [f"m{i}" for i in range(7)]
    assert exercises.check_unlucky_failover(2, 7, False, kafka_version="4.3")
    for wrong in ((3, 7, False), (2, 8, False), (2, 6, False), (2, 7, True)):
        result = exercises.check_unlucky_failover(*wrong, kafka_version="4.3")
        assert not result and not result.unanswered, wrong
    assert exercises.check_unlucky_failover(None, None, None, kafka_version="4.3").unanswered
    assert not exercises.check_unlucky_failover(2, "7", False, kafka_version="4.3")   # form
