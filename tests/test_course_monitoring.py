"""Notebook 06's graders (kafkasim/course/monitoring.py): the notes' two Prometheus rules judged on
the simulated, scraped ReplicaManager series; the explorer refuses impossible inputs."""

from __future__ import annotations

import pytest

from kafkasim.course import monitoring as M
from kafkasim.course import monitoring_checks as X

V = "4.3"   # the Kafka notebook 06 runs: the answers are graded on it


def test_helpers_have_no_hidden_kafka_version():
    """Every helper that builds a cluster takes the notebook's version; none falls back on one."""
    assert not hasattr(M, "KAFKA_VERSION")
    calls = (lambda: M.monitored_cluster(), lambda: M.exercise_cluster(),
             lambda: M.alerts_for("blip"), lambda: M.incident_view("blip", 5),
             lambda: M.slow_flapping_alerts(), lambda: X.check_slow_flapping(set()),
             lambda: X.check_both_fire(lambda c: None))
    for call in calls:
        with pytest.raises(TypeError, match="kafka_version"):
            call()


def test_explorer_refuses_unknown_incidents_and_bad_for():
    with pytest.raises(ValueError, match="unknown incident 'outgae'"):
        M.incident_view("outgae", 5, kafka_version="4.3")
    for bad in (0, -5, 2.5, True):
        with pytest.raises(ValueError, match="for_minutes"):
            M.incident_view("blip", bad, kafka_version="4.3")


def test_shrinks_six_minutes_apart_fire_no_alert():
    """One increase keeps rate(...[5m]) > 0 for just under 5 minutes; with the next shrink six
    minutes later the expression turns false in between, so 'for: 5m' is never met."""
    assert M.slow_flapping_alerts(kafka_version=V) == frozenset()
    assert X.check_slow_flapping(set(), kafka_version=V)
    assert not X.check_slow_flapping({"shrink"}, kafka_version=V)
    assert not X.check_slow_flapping("URP", kafka_version=V)


def test_both_fire_needs_a_replica_out_and_repeated_shrinks():
    def both(c):
        c.run_to(M.MINUTE)
        c.cut(3, 1)
        c.cut(3, 2)                       # broker 3 stays out: URP on brokers 1 and 2
        for _ in range(7):                # broker 2 flaps on broker 1's partitions
            c.cut(2, 1)
            c.run(20000)
            c.heal()
            c.cut(3, 1)
            c.cut(3, 2)
            c.run(40000)

    def outage_only(c):
        c.run_to(M.MINUTE)
        c.cut(3, 1)
        c.cut(3, 2)
        c.run(8 * M.MINUTE)

    assert X.check_both_fire(both, kafka_version=V)
    assert not X.check_both_fire(outage_only, kafka_version=V)
    assert not X.check_both_fire(42, kafka_version=V)


def test_urp_reading():
    assert X.check_urp_reading(2, 1)
    assert X.check_urp_reading("2", "1")
    assert not X.check_urp_reading(3, 1)
    assert not X.check_urp_reading(2, 2)    # the lagging broker does not report it


def test_one_incident_is_run_once_however_it_is_asked_for(monkeypatch):
    """Notebook 06's graded alert check (``alerts_for``, with the seed) and its explorer
    (``incident_view``, without) read the same simulated incident: it is not run twice."""
    blip = M.single_incident("blip", kafka_version=V)
    monkeypatch.setattr(M, "monitored_cluster", None)   # building another would fail
    assert M.single_incident("blip", M.SEED, kafka_version=V) is blip
    assert M.single_incident(kind="blip", seed=M.SEED, kafka_version=V) is blip
    M.alerts_for("blip", kafka_version=V)
    M.incident_view("blip", 5, kafka_version=V)
