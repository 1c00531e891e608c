"""kafkasim.course.narration: the simulator's English words read in the course language where
the course shows them (issue 34), and stay exactly as they are in English."""

from __future__ import annotations

import pytest

from kafkasim.course import i18n as rt
from kafkasim.course.common import text_table
from kafkasim.course.narration import TEMPLATES, WORDS, _pattern, narrate


@pytest.fixture
def korean():
    rt.set_language("ko")
    yield
    rt.set_language(None)


def test_english_is_returned_unchanged():
    rt.set_language("en")
    try:
        for text in ("follower", "Fetch 2->1: broker 2 asks from offset 7", "orders"):
            assert narrate(text) == text
        assert text_table([{"broker": 1, "role": "leader"}]).splitlines()[0] == "broker  role"
    finally:
        rt.set_language(None)


def test_every_word_and_template_has_a_korean_entry():
    table = rt.catalog("ko")
    missing = [m for m in WORDS + TEMPLATES if ("kafkasim.course", m) not in table]
    assert not missing


def test_stepper_and_checker_messages_read_in_korean_with_agreeing_particles(korean):
    assert narrate("Fetch 2->1: broker 2 asks from offset 7") == \
        "Fetch 2->1: 브로커 2가 오프셋 7부터 요청"
    assert narrate("Fetch 3->1: broker 3 asks from offset 7") == \
        "Fetch 3->1: 브로커 3이 오프셋 7부터 요청"
    said = narrate("broker 2 is in the controller's ISR [1, 2] (leader 1) and running, but its "
                   "LEO 56 is below true_hw 456: electing it would lose committed offsets 56..455")
    assert said.startswith("브로커 2는 컨트롤러의 ISR [1, 2](리더 1)에 있고")
    assert "LEO 56이" in said and "56..455를 잃습니다" in said
    # a list field is narrated item by item
    said = narrate("leader 2 (epoch 1, HW 0) has heard from its whole ISR [2], but the HW it "
                   "computes cannot reach true_hw 5 (committed before): log end offsets broker 2 "
                   "at 0, broker 3 at 0")
    assert said.endswith("브로커 2에서 0, 브로커 3에서 0")


def test_unknown_text_and_names_stay(korean):
    for text in ("orders", "NOT_ENOUGH_REPLICAS", "min.insync.replicas=2", "", "Kafka 3.7"):
        assert narrate(text) == text


def test_a_table_translates_its_headers_and_values(korean):
    lines = text_table([{"broker": 1, "role": "leader", "state": "running", "in ISR": True},
                        {"broker": 2, "role": "follower", "state": "stopped", "in ISR": False}]
                       ).splitlines()
    assert lines[0].split() == ["브로커", "역할", "상태", "ISR", "안"]
    assert lines[2].split() == ["1", "리더", "실행", "중", "예"]
    assert lines[3].split() == ["2", "팔로워", "중지됨", "아니요"]


def test_a_field_named_twice_must_match_the_same_text():
    rx = _pattern("Fetch {src}->{dst}: broker {src} asks")
    assert rx.fullmatch("Fetch 2->1: broker 2 asks")
    assert not rx.fullmatch("Fetch 2->1: broker 3 asks")


def test_a_kraft_refusal_without_a_quorum_reads_in_korean_whatever_the_action(korean):
    """ClusterError 'cannot {what}: no active controller ...': every action kraft_cluster names
    (create a topic, run an election, alter topic or broker configs) is a catalog phrase, so the
    Korean sentence has no English verb in it."""
    import re

    from clusters import make_cluster

    from kafkasim.settings.exceptions import ClusterError

    c = make_cluster(3, kafka_version="4.1", seed=1, settle_ms=3000)
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    for n in (3000, 3001, 3002):
        if n != c.controller_id():
            c.crash(n)
    c.run(5000)
    acts = [lambda: c.create_topic("frozen", 1, 1), lambda: c.elect("t", None, "preferred"),
            lambda: c.alter_config("topics", "t", {"min.insync.replicas": 2}),
            lambda: c.alter_config("brokers", 1, {"replica.lag.time.max.ms": 20000})]
    said = []
    for act in acts:
        with pytest.raises(ClusterError, match="no active controller") as err:
            act()
        said.append(narrate(str(err.value)))
    assert all(s.endswith("Raft에는 2대가 필요)") for s in said), said
    assert not [s for s in said if re.search(r"cannot|election|alter|create|configs", s)], said
