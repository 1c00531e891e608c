"""Notebook 05's graders (kafkasim/course/acks.py): answers come from the simulator (Kafka's two
acks=all checks, Partition.appendRecordsToLeader and checkEnoughReplicasReachOffset, and the 3.7
HW freeze, KAFKA-15583), the construct exercise is graded by the NoAckedLoss checker, and the
explorer refuses impossible inputs."""

from __future__ import annotations

import pytest

from kafkasim.course import acks as A
from kafkasim.course import acks_checks as X


def test_explorer_refuses_impossible_writes():
    with pytest.raises(ValueError, match="isr_size=4"):
        A.outcome_view("all", 2, 4)
    with pytest.raises(ValueError, match="isr_size=0"):
        A.outcome_view("all", 2, 0)
    with pytest.raises(ValueError, match="acks='2'"):
        A.outcome_view("2", 2, 1)
    with pytest.raises(ValueError, match="min.insync.replicas=0"):
        A.outcome_view("all", 0, 1)


def test_write_shrunk_below_min_isr_after_the_append(notebook_kafka_version):
    """3.6: the HW passes the record with ISR [1] -> NOT_ENOUGH_REPLICAS_AFTER_APPEND; since 3.7
    the HW is frozen below min ISR, so the DelayedProduce expires (REQUEST_TIMED_OUT)."""
    assert A.after_append("3.6") == "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
    assert A.after_append(None) == "REQUEST_TIMED_OUT"
    assert X.check_after_append("REQUEST_TIMED_OUT", "not_enough_replicas_after_append")
    assert not X.check_after_append("NOT_ENOUGH_REPLICAS_AFTER_APPEND",
                                    "NOT_ENOUGH_REPLICAS_AFTER_APPEND")
    assert not X.check_after_append("REQUEST_TIMED_OUT", "ok")


def test_acks_saves_is_graded_by_the_checkers():
    def cut_then_kill(c):
        c.run(5000)
        c.cut(1, 2)
        c.cut(1, 3)
        c.run(3000)
        c.crash(1)
        c.heal()
        c.run(15000)

    def nothing(c):
        c.run(5000)

    assert X.check_acks_saves(cut_then_kill, kafka_version="4.3")
    assert not X.check_acks_saves(nothing, kafka_version="4.3")
    assert not X.check_acks_saves("my_faults")
    with pytest.raises(ValueError, match=r"exercise_cluster: no Kafka version"):
        X.check_acks_saves(nothing)        # no hidden default outside a notebook


def test_describe_reading():
    assert X.check_describe_reading(1, [3])
    assert not X.check_describe_reading(1, [1, 3])    # broker 1 left while at min ISR
    assert not X.check_describe_reading(2, [3])
    assert not X.check_describe_reading(1, "x")


def test_holders_and_outcome_read_the_cluster(notebook_kafka_version):
    res, c = A._write("1", 2, 1, version=None)
    assert res["result"] == "ok" and res["appended on the leader"]
    assert not res["readable by consumers"]             # HW frozen below min ISR (3.7+)
    assert A.holders(c, "x") == [1]


def test_acks_all_ok_at_words_the_ladder_as_the_prediction_choices():
    """Notebook 05's ladder predictions are scored with this: the ISR sizes whose acks=all write
    was acknowledged, in the order the ladder took them."""
    def rungs(*outcomes):
        return [{"ISR": [1, 2, 3][:3 - i], "acks=all": o} for i, o in enumerate(outcomes)]
    assert A.acks_all_ok_at(rungs("ok", "ok", "NOT_ENOUGH_REPLICAS")) == "3 and 2"
    assert A.acks_all_ok_at(rungs("ok", "NOT_ENOUGH_REPLICAS", "NOT_ENOUGH_REPLICAS")) == "3 only"
    assert A.acks_all_ok_at(rungs("ok", "ok", "ok")) == "3, 2 and 1"
    assert A.acks_all_ok_at(rungs("NOT_ENOUGH_REPLICAS")) == "none"


def test_where_a_topic_override_shows_in_describe():
    """Notebook 05 section 3's scores: --describe lists only a topic's overrides, on the topic
    line's Configs:, never the broker default nor on the partition lines."""
    from kafkasim.course.acks import configs_shown, override_shown_on
    from kafkasim.runtime.cluster import Cluster

    c = Cluster(brokers=3, seed=5, kafka_version="4.3")
    c.create_topic("orders", 1, 3, assignment=[[1, 2, 3]])
    before = c.describe("orders")
    c.alter_config("topics", "orders", {"min.insync.replicas": 2})
    after = c.describe("orders")
    assert configs_shown(before) == "nothing"
    assert configs_shown(after) == "min.insync.replicas=2"
    assert override_shown_on(after, "min.insync.replicas=2") == "the topic line's Configs:"
    assert override_shown_on(before, "min.insync.replicas=2") == \
        "nowhere: only kafka-configs --describe"
    assert override_shown_on("Topic: t\tConfigs: \n\tPartition: 0 x=1", "x=1") == \
        "each partition line"
