"""Notebook 00's set-up check (kafkasim.course.start): a mismatched widget pair is reported."""

from __future__ import annotations

from kafkasim.course import start


def test_matching_pair_has_no_problems():
    v = {"ipywidgets": "8.1.9", "jupyterlab_widgets": "3.0.17"}
    assert start.setup_problems(v, dict(v), "jupyterlab_widgets~=3.0.17") == []


def test_mismatches_are_named_with_both_versions():
    v = {"ipywidgets": "8.1.9", "jupyterlab_widgets": "3.0.9"}
    problems = start.setup_problems(v, {"ipywidgets": "8.1.9", "jupyterlab_widgets": "3.0.17"},
                                    "jupyterlab_widgets~=3.0.17")
    assert len(problems) == 2
    assert "needs jupyterlab_widgets~=3.0.17" in problems[0] and "3.0.9" in problems[0]
    assert "pins 3.0.17" in problems[1]


def test_pins_are_read_from_requirements(tmp_path):
    req = tmp_path / "requirements.txt"
    req.write_text("# c\nipywidgets==8.1.9  # kernel side\njupyterlab-widgets==3.0.17\nx>=1\n")
    assert start.pinned_versions(req) == {"ipywidgets": "8.1.9", "jupyterlab_widgets": "3.0.17"}
    assert start.pinned_versions(tmp_path / "missing.txt") == {}


def test_this_kernel_passes():
    assert "match the pinned pair" in start.setup_report()


def test_the_design_exercise_grades_with_targeted_feedback():
    """Notebook 00's exercise: the smallest topic whose acks=all writes survive any two brokers
    down, with every acknowledged write on two brokers, is RF 4 with min.insync.replicas=2."""
    from kafkasim.course.checks import NO_ANSWER

    assert start.check_durable_design(4, 2).ok
    assert start.check_durable_design(None, None).message == NO_ANSWER
    too_few = start.check_durable_design(3, 2)       # two down leave an ISR of 1 < 2
    assert not too_few.ok and "NOT_ENOUGH_REPLICAS" in too_few.message
    lone = start.check_durable_design(5, 1)          # one copy may be all there is
    assert not lone.ok and "only itself" in lone.message
    wasteful = start.check_durable_design(5, 3)      # both rules hold, one copy more than needed
    assert not wasteful.ok and "smaller replication.factor" in wasteful.message
    form = start.check_durable_design("4", 2)
    assert not form.ok and "without quotes" in form.message


def test_describe_rf_says_when_min_isr_is_capped_at_the_replica_count():
    """Finding 00-2: RF 1 with min.insync.replicas=2 writes only because Partition.effectiveMinIsr
    caps min ISR at the replica count since 3.7 (KAFKA-15583); the output must say so."""
    capped = str(start.describe_rf(1))
    assert "min ISR  : 2 is capped at the replica count (1) since Kafka 3.7" in capped
    assert "before 3.7 every acks=all write failed" in capped
    assert "the ISR must keep 1" in capped
    assert "capped" not in str(start.describe_rf(3))
