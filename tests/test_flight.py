"""The messages-in-flight view: what is on the wire now, what each message says, and the picture
(each message a dot between its sender and receiver, its fields in a hover title; each broker's
own view of the partition in its box)."""

from __future__ import annotations

import re

from clusters import make_cluster

from kafkasim.viz.flight import broker_belief, flight_svg, message_summary


def _busy_cluster():
    c = make_cluster(seed=4, kafka_version="3.7", config={"replica.fetch.wait.max.ms": 500},
                     topic="t", assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all")
    c.run(3000)
    p.send("t", "x", partition=0)
    return c


def test_messages_in_flight_are_what_the_engine_will_deliver():
    c = _busy_cluster()
    seen = set()
    for _ in range(200):
        c.step()
        flights = c.inspect.messages_in_flight()
        for f in flights:
            assert f["sent_ms"] <= c.now <= f["arrives_ms"]
            assert f["held"] is False
            seen.add(f["type"])
        assert [f["msg_id"] for f in flights] == sorted(f["msg_id"] for f in flights)
    assert {"ProduceRequest", "FetchRequest", "FetchResponse"} <= seen


def test_a_held_message_is_shown_as_held():
    c = _busy_cluster()
    c.hold("FetchResponse", 1, 2)
    c.run(1000)
    held = [f for f in c.inspect.messages_in_flight() if f["held"]]
    assert held and all(f["type"] == "FetchResponse" and (f["src"], f["dst"]) == (1, 2)
                        and f["arrives_ms"] == -1 for f in held)
    svg = flight_svg(c, "t")
    assert "held by the scenario" in svg


def test_summaries_name_the_fields_that_matter():
    c = _busy_cluster()
    texts = {}
    for _ in range(300):
        c.step()
        for f in c.inspect.messages_in_flight():
            texts.setdefault(f["type"], message_summary(f["message"], "t", 0))
    short, full = texts["FetchRequest"]
    assert re.fullmatch(r"Fetch @\d+", short) and "fetch_offset=" in full and \
        "current_leader_epoch=" in full
    short, full = texts["FetchResponse"]
    assert short.startswith("HW ") and "high_watermark=" in full
    assert texts["ProduceRequest"][0] == "Produce 1"


def test_the_picture_has_one_dot_per_message_and_each_brokers_belief():
    c = _busy_cluster()
    for _ in range(60):
        c.step()
        flights = [f for f in c.inspect.messages_in_flight() if "Raft" not in f["type"]]
        if len(flights) >= 2:
            break
    svg = flight_svg(c, "t")
    assert svg.count('class="message"') == len(flights) >= 2
    for f in flights:
        assert f"{f['type']} {f['src']} → {f['dst']}" in svg
    assert broker_belief(c, 1, "t")[1] == "leader, epoch 0"
    assert "follows 1, epoch 0" in svg and "ISR [1, 2, 3]" in svg
    c.crash(2)
    assert broker_belief(c, 2, "t") == ["broker 2", "down"]
    assert flight_svg(c, "t", only=("Produce",)).count('class="message"') <= 1


def test_a_korean_learner_reads_the_token_labels_in_korean():
    """The stage's token labels come from the catalog (kafkasim.viz): a response, an acked
    produce and a heartbeat read in Korean once the course speaks it, in English before."""
    from kafkasim.course import i18n

    class BeginQuorumEpochResponse:
        __slots__ = ()

    c = _busy_cluster()
    produce_response = None
    for _ in range(300):
        c.step()
        for f in c.inspect.messages_in_flight():
            if f["type"] == "ProduceResponse":
                produce_response = f["message"]
    assert produce_response is not None
    msg = BeginQuorumEpochResponse()
    assert message_summary(msg)[0] == "BeginQuorumEpoch resp"
    assert message_summary(produce_response, "t", 0)[0] == "acked"
    try:
        i18n.set_language("ko")
        assert message_summary(msg)[0] == "BeginQuorumEpoch 응답"
        assert message_summary(produce_response, "t", 0)[0] == "ACK"
    finally:
        i18n.set_language(None)
    assert message_summary(msg)[0] == "BeginQuorumEpoch resp"
