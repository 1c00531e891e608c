"""Holds, drops and delays that select messages by content (kafkasim/core/match.py)."""

from __future__ import annotations

import pytest
from clusters import make_cluster

from kafkasim.core.log import RecordChunk
from kafkasim.core.match import MatchError
from kafkasim.core.messages import (
    Envelope,
    FetchPartitionData,
    FetchResponse,
    LeaderAndIsrRequest,
)
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.network import MessageFilter
from kafkasim.runtime.transport import Transport
from kafkasim.scenarios.scenario import Scenario, ScenarioError

# the ZooKeeper-era release these tests were written against (Kafka 4.x is KRaft only;
# its behaviour is tested in tests/test_kraft_*.py)
ZK = "3.7"


def _fetch_response(*parts) -> Envelope:
    datas = tuple(FetchPartitionData(t, p, "NONE", hw, 0, RecordChunk.empty(hw))
                  for t, p, hw in parts)
    return Envelope(1, 3, FetchResponse(7, datas), 0)


def test_partition_clauses_hold_together_on_one_entry():
    env = _fetch_response(("a", 0, 1), ("b", 0, 9))
    assert MessageFilter("FetchResponse", where={"high_watermark": {"ge": 5}}).matches(env)
    assert not MessageFilter("FetchResponse", where={"topic": "a",
                                                     "high_watermark": {"ge": 5}}).matches(env)
    assert MessageFilter("FetchResponse", where={"topic": "b", "high_watermark": {
        "ge": 5, "lt": 10}}).matches(env)
    assert MessageFilter("FetchResponse", where={"correlation_id": 7}).matches(env)
    assert not MessageFilter("FetchResponse", dst=2,
                             where={"correlation_id": 7}).matches(env)
    assert MessageFilter("FetchResponse", where={"topic": {"in": ["x", "b"]},
                                                 "record_count": 0}).matches(env)


@pytest.mark.parametrize("kw, words", [
    ({"type": "FetchRespose"}, ["unknown message type 'FetchRespose'", "'FetchResponse'"]),
    ({"type": "FetchResponse", "where": {"high_watermak": 2}},
     ["no field 'high_watermak'", "did you mean 'high_watermark'"]),
    ({"type": "LeaderAndIsrRequest", "where": {"leader_epoch": {"gte": 1}}},
     ["unknown comparison 'gte'", "did you mean 'ge'"]),
    ({"type": "LeaderAndIsrRequest", "where": {"leader_epoch": {"grater": 1}}},
     ["unknown comparison 'grater'"]),
    ({"where": {"leader_epoch": 1}}, ["needs the message 'type'"]),
])
def test_unknown_type_field_or_comparison_is_an_error(kw, words):
    with pytest.raises(MatchError) as info:
        MessageFilter(**kw)
    for w in words:
        assert w in str(info.value)


def _loaded_cluster():
    c = make_cluster(seed=5, kafka_version=ZK, topic="t", assignment=[[1, 2, 3]])
    return c, c.producer("p", acks="all", linger_ms=0)


def test_hold_the_fetch_response_to_broker_3_carrying_hw_at_least_2():
    c, p = _loaded_cluster()
    c.hold("FetchResponse", src=1, dst=3, where={"high_watermark": {"ge": 2}})
    for i in range(5):
        p.send("t", f"v{i}", partition=0)
        c.run(50)
    held = [env.msg for env in c.transport.network.held]
    assert held and all(env.dst == 3 for env in c.transport.network.held)
    assert all(any(d.high_watermark >= 2 for d in m.partitions) for m in held)
    # broker 3 waits for the held answer, so it stops fetching: the HW stays where it was
    # when the leader first answered it with HW 2, and broker 3 never learns it
    assert c.inspect.replica_view(3, "t", 0)["high_watermark"] < 2 <= c.high_watermark("t", 0)
    assert c.release("FetchResponse", src=1, dst=3,
                     where={"high_watermark": {"ge": 2}}) == len(held)
    assert p.flush()
    c.run(1000)
    assert c.inspect.replica_view(3, "t", 0)["high_watermark"] == 5


def test_hold_leader_and_isr_by_leader_epoch():
    """The controller (broker 1) crashes: its successor first takes the dead replica offline
    (leader -1, epoch 1: ReplicaStateMachine.startup, 2.3+), then elects (epoch 2). The
    followers do not apply epoch 1 (makeFollowers: leader -1 is no alive broker, the
    ``case None`` branch), and holding the LeaderAndIsr of epoch 2 leaves them at epoch 0
    until it is released."""
    c, _p = _loaded_cluster()
    c.hold("LeaderAndIsrRequest", where={"leader_epoch": 2})
    c.crash(1)
    assert c.run_until(lambda cl: cl.inspect.partition_state("t", 0)["leader_epoch"] == 2, 30000)
    c.run(100)
    held = [env.msg for env in c.transport.network.held if isinstance(env.msg, LeaderAndIsrRequest)]
    assert held and all(s.leader_epoch == 2 for m in held for s in m.partition_states)
    assert all(c.inspect.replica_view(b, "t", 0)["leader_epoch"] == 0 for b in (2, 3))
    c.release()
    c.run(100)
    assert all(c.inspect.replica_view(b, "t", 0)["leader_epoch"] == 2 for b in (2, 3))


def test_drop_and_delay_select_by_content():
    c, p = _loaded_cluster()
    c.transport.drop("ProduceResponse", where={"error": "NONE", "base_offset": 0}, count=1)
    r0 = p.send("t", "a", partition=0)
    c.run(100)
    assert r0.status == "pending"      # its answer was dropped; the retry gets the duplicate
    assert p.flush() and r0.acked and r0.offset == 0
    c.delay(300, "ProduceResponse", where={"base_offset": {"ge": 1}}, count=1)
    r1 = p.send("t", "b", partition=0)
    assert p.flush() and r1.acked and r1.latency_ms >= 300
    r2 = p.send("t", "c", partition=0)
    assert p.flush() and r2.latency_ms < 300   # count=1: only one was delayed


SCENARIO = """
name = "hold-by-content"
seed = 5
[cluster]
brokers = 3
[[topics]]
name = "t"
assignment = [[1, 2, 3]]
[[clients]]
name = "p"
type = "producer"
config = { acks = "all", "linger.ms" = 0 }
[[steps]]
do = "hold"
messages = { type = "FetchResponse", from = 1, to = 3, where = { high_watermark = { ge = 2 } } }
[[steps]]
do = "produce"
topic = "t"
partition = 0
producer = "p"
values = ["a", "b", "c", "d"]
wait = true
[[steps]]
do = "run"
ms = 500
[[steps]]
do = "expect"
label = "broker 3 never learns HW 2"
that = { hw = { topic = "t", broker = 3, at_most = 1 } }
[[steps]]
do = "expect"
that = { hw = { topic = "t", broker = 2, equals = 4 } }
[[steps]]
do = "release"
[[steps]]
do = "run"
ms = 1000
[[steps]]
do = "expect"
that = { hw = { topic = "t", broker = 3, equals = 4 } }
"""


def test_scenario_hold_step_with_where():
    run = Scenario.loads(SCENARIO, "hold.toml").run()
    assert [e["ok"] for e in run.expectations] == [True, True, True]
    assert "where" in run.steps[0].detail


@pytest.mark.parametrize("bad, words", [
    ('where = { high_watermak = { ge = 2 } }', ["line 13: step 1", "high_watermark"]),
    ('where = { high_watermark = { gte = 2 } }', ["line 13: step 1", "did you mean 'ge'"]),
])
def test_scenario_filter_errors_name_the_line_and_suggest(bad, words):
    text = SCENARIO.replace('where = { high_watermark = { ge = 2 } }', bad)
    with pytest.raises(ScenarioError) as info:
        Scenario.loads(text, "hold.toml")
    for w in words:
        assert w in str(info.value)


def test_tuple_entry_names_fit_the_messages_the_simulation_sends(monkeypatch):
    """The names match.py gives the items of per-partition tuples must fit what is sent."""
    from kafkasim.core import match

    seen = {}
    orig = Transport.send

    def spy(self, src, dst, msg):   # every message leaves through Transport.send
        seen.setdefault(type(msg).__name__, msg)
        return orig(self, src, dst, msg)

    monkeypatch.setattr(Transport, "send", spy)
    c = Cluster(3, seed=2, kafka_version="2.8")   # 2.8: OffsetsForLeaderEpoch after failover
    c.create_topic("t", 1, 3, assignment=[[1, 2, 3]])
    p = c.producer("p", acks="all")
    p.send_many("t", ["a", "b"], partition=0)
    assert p.flush()
    cons = c.consumer("g")
    cons.assign("t")
    cons.poll(2000)
    cons.commit()
    c.run(500)
    c.shutdown(1)
    c.run(3000)
    c.crash(2)
    c.run(40000)
    checked = 0
    for name, (attr, names) in match._TUPLE_ENTRIES.items():
        msg = seen.get(name)
        if msg is None or not getattr(msg, attr):
            continue
        assert all(len(entry) == len(names) for entry in getattr(msg, attr)), name
        checked += 1
    assert {"ProduceRequest", "ProduceResponse", "MetadataResponse"} <= set(seen)
    assert checked >= 5, sorted(seen)
