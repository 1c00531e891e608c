"""Notebook 90 (experiments at scale): what its tables, figures and prose claim, checked against
the simulator (issue 14: the fault model behind each loss figure, the fetch-wait latency claim,
the acks=1 / acks=all demo, no Spark log lines in the saved outputs)."""

from __future__ import annotations

import re
from pathlib import Path

import matplotlib
import nbformat
import pytest

from kafkasim.experiments import Sweep
from kafkasim.experiments.notebook import (
    availability_table,
    check_fetch_wait,
    columns_table,
    elr_table,
    fault_model,
    fetch_wait_effect,
    hw_latency_table,
    loss_table,
    plot_availability,
    plot_loss,
    sweep_line,
)

matplotlib.use("Agg")

REPO = Path(__file__).resolve().parents[1]
NOTEBOOK = REPO / "notebooks" / "90-experiments-at-scale.ipynb"
KOREAN = REPO / "notebooks" / "ko" / "90-experiments-at-scale.ipynb"

LOSS_BASE = {"kafka_version": "3.7", "duration_ms": 6000, "drain_ms": 2000, "check": False,
             "broker": {"zookeeper.session.timeout.ms": 6000}, "workload": {"rate": 20}}
CRASHES = {"kind": "crash", "rate_per_min": 6, "down_ms": [5000, 20000], "max_down": 3}


def _cell(cell_id: str) -> str:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    return next(c.source for c in nb.cells if c.get("id") == cell_id)


def _loss_sweep(faults: dict, seeds: int = 1):
    return Sweep(base={**LOSS_BASE, "faults": faults},
                 grid={"producer.acks": ["1", "all"], "topic.min.insync.replicas": [1],
                       "topic.unclean.leader.election.enable": [False, True]},
                 seeds=seeds, name="t").run(mode="serial", progress=False)


def test_every_loss_figure_states_its_fault_model():
    results = _loss_sweep(CRASHES, seeds=2)
    caption = fault_model(results)
    for part in ("crash at random", "6/min across the cluster", "down 5\u201320 s",
                 "at most 3 down at once", "6 s of writes at 20 records/s", "2 s to finish",
                 "2 seeds"):
        assert part in caption, (part, caption)
    table = loss_table(results)
    assert caption in table.caption and caption in table._repr_html_() and caption in repr(table)
    assert caption in table.round(2).caption          # survives the formatting the notebook does
    avail = availability_table(results, by=("topic.unclean.leader.election.enable",))
    assert caption in avail.caption
    ax = plot_loss(table)
    assert "6/min" in ax.get_title()
    left, _right = plot_availability(results)
    assert "6/min" in left.figure._suptitle.get_text()


def test_the_caption_follows_the_sweep_not_a_constant():
    """Change the fault plan and the caption changes with it: it is read from the specs."""
    power = fault_model(_loss_sweep({"kind": "power_loss", "rate_per_min": 3, "down_ms": 4000}))
    assert "power_loss at random, 3/min" in power and "down 4 s" in power
    assert "at most 1 down at once" in power           # faults.max_down's default
    both = Sweep(base={**LOSS_BASE, "faults": CRASHES},
                 grid={"faults.kind": ["crash", "power_loss"]}, seeds=1,
                 name="t").run(mode="serial", progress=False)
    assert "crash or power_loss at random" in fault_model(both)
    scripted = Sweep(base={**LOSS_BASE,
                           "faults": {"steps": [{"at_ms": 2000, "do": "crash", "broker": 1}]}},
                     seeds=1, name="t").run(mode="serial", progress=False)
    assert "faults: crash of broker 1 at 2 s" in fault_model(scripted)
    quiet = Sweep(base=LOSS_BASE, seeds=1, name="t").run(mode="serial", progress=False)
    assert fault_model(quiet).startswith("faults: none")


def test_the_demo_sweep_shows_what_acks_all_saves():
    """Section 1's demo (the notebook's own cell): acks=1 loses acknowledged records when the
    leader dies before its distant followers fetched them, acks=all loses none."""
    scope = {"Sweep": Sweep, "print": lambda *a, **k: None, "KAFKA_VERSION": "4.3",
             "sweep_line": sweep_line}
    exec(_cell("6b757377"), scope)
    rows = scope["demo"].run(mode="serial", progress=False)
    by_acks = {acks: list(g["lost_acked"]) for acks, g in rows.groupby("producer.acks")}
    assert all(n > 0 for n in by_acks["1"]), by_acks
    assert all(n == 0 for n in by_acks["all"]), by_acks
    assert (rows["status"] == "ok").all()


@pytest.fixture(scope="module")
def latency_results():
    """Section 5's sweep (50 records/s, acks=all), one seed."""
    return Sweep(
        base={"kafka_version": "4.3", "duration_ms": 20000, "drain_ms": 2000, "check": False,
              "producer": {"acks": "all"}, "workload": {"rate": 50}},
        grid={"broker.replica.fetch.wait.max.ms": [10, 100, 500, 2000],
              "cluster.latency_ms": [5, 20, 50]},
        seeds=1, name="latency").run(mode="serial", progress=False)


def _p(table, latency, wait, col="hw_p50_ms"):
    row = table[(table["cluster.latency_ms"] == latency) &
                (table["broker.replica.fetch.wait.max.ms"] == wait)]
    return float(row[col].iloc[0])


def test_fetch_wait_costs_only_when_a_wait_runs_out_before_records_arrive(latency_results):
    """What section 5's prose says the table shows: flat at 20 ms (every fetch finds records),
    a wait equal to the round trip slower at 5 ms (p99) and 50 ms (p50), 10 ms vs 2000 ms the
    same at 50 records/s."""
    t = hw_latency_table(latency_results)
    for wait in (10, 100, 500):
        assert _p(t, 20, wait) == pytest.approx(_p(t, 20, 2000), rel=0.05)
    assert _p(t, 50, 100) > 1.2 * _p(t, 50, 500)
    assert _p(t, 50, 10) == pytest.approx(_p(t, 50, 2000), rel=0.05)
    assert _p(t, 5, 10, "hw_p99_ms") > 1.3 * _p(t, 5, 100, "hw_p99_ms")
    assert fetch_wait_effect(latency_results)[0] == "same"


def test_exercise_3_is_graded_from_the_quiet_partition_runs():
    """On a quiet partition (2 records/s) fetches nearly always find nothing new: a short wait
    keeps running out, so raising it makes produce -> HW faster; the check grades what the runs
    measured, whatever the learner's spelling."""
    quiet = Sweep(
        base={"kafka_version": "4.3", "duration_ms": 20000, "drain_ms": 2000, "check": False,
              "producer": {"acks": "all"}, "workload": {"rate": 2}},
        grid={"broker.replica.fetch.wait.max.ms": [10, 2000], "cluster.latency_ms": [50]},
        seeds=1, name="quiet").run(mode="serial", progress=False)
    verdict, short_p50, long_p50, *_ = fetch_wait_effect(quiet)
    assert verdict == "faster" and long_p50 < short_p50
    assert check_fetch_wait(quiet, answer="faster").ok
    assert check_fetch_wait(quiet, answer=" Faster").ok
    assert not check_fetch_wait(quiet, answer="same").ok
    assert not check_fetch_wait(quiet, answer=None).ok
    assert not check_fetch_wait(quiet, answer=True).ok


SPARK_LOG = re.compile(
    r"\b(WARN|INFO|ERROR)\b\s+\w*\s*[\w.$]+:|log4j|NativeCodeLoader|SparkContext|"
    r"Setting default log level|Using Spark's default|\[Stage \d+|WARNING: An illegal|"
    r"Exception in thread|py4j|JavaGateway|org\.apache\.")


@pytest.mark.parametrize("path", [NOTEBOOK, KOREAN], ids=["en", "ko"])
def test_saved_outputs_have_no_spark_log_lines(path):
    """Spark's log4j lines and the JVM's warnings go to the log file kafkasim.experiments.spark
    names, never
    into the notebook: no stderr stream, no log line in any saved output."""
    if not path.exists():
        pytest.skip(f"{path.name} not built")
    nb = nbformat.read(path, as_version=4)
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            assert out.get("name") != "stderr", (cell.get("id"), out.get("text", "")[:300])
            text = out.get("text", "") + "\n".join(
                v for k, v in out.get("data", {}).items()
                if k.startswith("text/") and isinstance(v, str))
            m = SPARK_LOG.search(text)
            assert m is None, (cell.get("id"), text[max(0, m.start() - 80):m.end() + 80])


def test_spark_log_pattern_catches_the_usual_lines():
    for line in ("24/11/24 04:00:01 WARN NativeCodeLoader: Unable to load native-hadoop library",
                 "Setting default log level to \"WARN\".",
                 "[Stage 0:>                                                          (0 + 2) / 2]",
                 "log4j:WARN No appenders could be found"):
        assert SPARK_LOG.search(line), line
    assert not SPARK_LOG.search("128 runs, serial")


def test_captions_and_checks_speak_the_course_language_in_the_course_style(capsys):
    """Notebook 90's captions and checks go through the course's ``tr()`` (Korean in
    kafkasim/course/locale/ko.po) and its grader: an answer left as None is "Not answered yet"
    (grey), as in every other notebook, not a wrong answer."""
    from kafkasim.course import i18n as rt
    from kafkasim.experiments.notebook import check_no_loss_config, measured_under

    results = _loss_sweep(CRASHES)
    try:
        rt.set_language("en")
        todo = check_no_loss_config(results, acks=None, min_isr=None, unclean=None)
        assert todo.unanswered and todo.message.startswith("Not answered yet: ")
        assert "#777777" in todo._repr_html_()
        assert measured_under(results).startswith("Measured under faults: crash at random")
        wrong = check_no_loss_config(results, acks="0", min_isr=1, unclean=True)
        assert wrong.message == "Not quite: acks=0, min ISR 1, unclean=True is not in the sweep."
        rt.set_language("ko")
        assert check_no_loss_config(results, None, None, None).message.startswith(
            "아직 답하지 않았습니다: ")
        caption = loss_table(results).caption
        assert caption.startswith("측정 조건: 장애: 클러스터 전체에서 분당 6회 무작위 크래시")
        assert "시드 1개" in caption and "초당 레코드 20개 쓰기" in caption
        # a figure's caption is in the course language too (drawn with a Hangul font), and a
        # table shows its headers translated while the data keeps its English column names
        assert loss_table(results).round(2).figure_caption.startswith("측정 조건: 장애: ")
        ax = plot_loss(loss_table(results))
        assert "측정 조건: 장애: " in ax.get_title()
        assert "runs" in loss_table(results).columns
        assert "runs" not in loss_table(results)._repr_html_()
        ax.figure.clf()
        assert check_no_loss_config(results, "0", 1, True).message == (
            "아쉽습니다: acks=0, min ISR 1, unclean=True는 이 스윕에 없습니다.")
    finally:
        rt.set_language(None)
    capsys.readouterr()


def test_elr_saves_what_4_0_loses_when_the_followers_stall_and_the_leader_loses_power():
    """Section 3's scripted case: followers 2 and 3 paused (fenced, out of the ISR, into the ELR
    on 4.1), then leader 1 loses power and comes back. 4.0 re-elects it (the last ISR member)
    and its lost tail is lost for good; 4.1 elects an ELR member and loses nothing."""
    base = {**LOSS_BASE, "kafka_version": "4.3", "broker": {"replica.lag.time.max.ms": 5000},
            "duration_ms": 60000, "drain_ms": 30000, "producer": {"acks": "all"},
            "topic": {"min.insync.replicas": 2, "unclean.leader.election.enable": False},
            "faults": {"steps": [{"at_ms": 10000, "do": "pause", "broker": 2, "ms": 30000},
                                 {"at_ms": 10000, "do": "pause", "broker": 3, "ms": 30000},
                                 {"at_ms": 25000, "do": "power_loss", "broker": 1},
                                 {"at_ms": 50000, "do": "start", "broker": 1}]}}
    rows = Sweep(base, grid={"kafka_version": ["4.0", "4.1"]}, seeds=1,
                 name="elr").run(mode="serial", progress=False)
    lost = dict(zip(rows["kafka_version"], rows["lost_acked"], strict=True))
    assert lost["4.0"] > 0 and lost["4.1"] == 0, lost
    table = elr_table(rows, by=("kafka_version",))
    assert list(table["ELR"]) == ["off", "on"] and list(table["faults/min"]) == ["scripted"] * 2
    assert list(table["P(loss)"]) == [1.0, 0.0]
    assert table.caption.startswith("Measured under faults: ")


def test_tables_round_their_floats_and_list_columns_by_group():
    rows = _loss_sweep(CRASHES, seeds=3)
    for table in (loss_table(rows), availability_table(rows)):
        for col in table.columns:
            if table[col].dtype.kind == "f":
                assert all(v != v or round(v, 3) == v for v in table[col]), col
    text = str(columns_table(rows))
    assert "err_NOT_ENOUGH_REPLICAS" in text and "lost_acked" in text
    assert max(len(line) for line in text.splitlines()) <= 120
    assert "[" not in text   # a table, not a Python list
    mix = _loss_sweep({"kind": ["pause", "power_loss"], "rate_per_min": 6, "down_ms": 4000})
    assert "faults: pause + power_loss at random, 6/min" in fault_model(mix)
