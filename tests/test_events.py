"""Typed trace events (kafkasim.core.events): every kind declared and documented, records render the
text (and repr) the trace always held, and a full run records only declared shapes."""

from __future__ import annotations

import pickle
from pathlib import Path

import pytest

from kafkasim.core import events as ev
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.trace import EVENT_KINDS, Trace
from kafkasim.scenarios.scenario import Scenario, builtin_names

# the ZooKeeper-era release these tests were written against (Kafka 4.x is KRaft only;
# its behaviour is tested in tests/test_kraft_*.py)
ZK = "3.7"

DOC = Path(__file__).resolve().parent.parent / "docs" / "trace-events.md"


def test_every_kind_has_a_record_and_every_record_a_known_kind():
    assert set(ev.EVENT_TYPES) == set(EVENT_KINDS)
    for kind, classes in ev.EVENT_TYPES.items():
        for cls in classes:
            assert cls.kind == kind and cls.__doc__, cls
            assert len(cls.field_docs) == len(cls.fields), cls


def test_the_docs_list_every_kind_record_and_field_and_are_generated_from_the_declarations():
    text = DOC.read_text()
    assert text == ev.markdown(), \
        "regenerate: python -m kafkasim.core.events > docs/trace-events.md"
    for kind, classes in ev.EVENT_TYPES.items():
        assert f"## `{kind}`" in text
        for cls in classes:
            assert f"### `{cls.__name__}`" in text
            for name in cls.fields:
                assert f"| `{name}` |" in text


@pytest.mark.parametrize(("record", "legacy"), [
    (ev.BecomeLeader(3, (1, 2)), "epoch 3, ISR [1, 2]"),
    (ev.Truncate(5, 2, "becoming follower: truncate to HW"),
     "to 5 (2 removed): becoming follower: truncate to HW"),
    (ev.PowerLossTruncate(4, 10), "power loss: 4 unflushed record(s) lost, log ends at 10"),
    (ev.PowerLoss(7), "7 unflushed record(s) lost"),
    (ev.LeaderElection("offline", True, 1, 2, (2,), 4),
     "UNCLEAN offline election: leader 1 -> 2, ISR [2], epoch 4"),
    (ev.LogRecovery(9, 8, "replication-offset-checkpoint", ((0, 0), (2, 5))),
     "LEO 9, HW 8 from replication-offset-checkpoint, epochs [(0, 0), (2, 5)]"),
    (ev.Cut(1, "producer-1", False), "cut 1->producer-1"),
    (ev.HoldMessages("FetchRequest", None, 2, ""), "hold type=FetchRequest to=2"),
    (ev.AlterConfig("topics", "t", (("min.insync.replicas", 2),)),
     "topics t: {'min.insync.replicas': 2}"),
    (ev.ZkSessionExpired(4, 2, "timeout", 6001),
     "session 4 of broker 2 not heard from for 6001 ms (zookeeper.session.timeout.ms)"),
    (ev.ControlledShutdown(1, "", -1), "asking controller 1"),
    (ev.ControlledShutdown(1, "NONE", 0),
     "controller answered NONE, 0 partition(s) still led here"),
])
def test_a_record_reads_and_digests_as_the_sentence_the_trace_held(record, legacy):
    assert str(record) == record.text == record.legacy == legacy
    assert repr(record) == repr(legacy)
    with_record, with_text = Trace(), Trace()
    with_record.rows.append((5, record.kind, 1, "t", 0, record))
    with_text.rows.append((5, record.kind, 1, "t", 0, legacy))
    assert with_record.digest() == with_text.digest()
    assert list(with_record.to_frame()["detail"]) == [legacy]
    assert legacy.split()[0] in record            # substring search, as on the string


def test_records_are_slotted_immutable_tuples_that_pickle():
    r = ev.BecomeFollower(2, 7)
    assert (r.leader, r.leader_epoch) == (2, 7) and r.as_dict() == {"leader": 2, "leader_epoch": 7}
    assert not hasattr(r, "__dict__")
    with pytest.raises(AttributeError):
        r.leader = 3
    back = pickle.loads(pickle.dumps(r))
    assert back == r and type(back) is ev.BecomeFollower
    with pytest.raises(TypeError, match="BecomeFollower takes 2 field"):
        ev.BecomeFollower(2)


def test_data_path_kinds_keep_plain_tuples_named_by_their_record():
    row = (3, "append", 1, "t", 0, (10, 14, 2))
    a = ev.typed(row)
    assert isinstance(a, ev.Append) and (a.first_offset, a.last_offset, a.leader_epoch) == \
        (10, 14, 2)
    assert repr(a) == repr((10, 14, 2)) and a == (10, 14, 2)
    assert ev.typed((3, "hw", 1, "t", 0, 12)).high_watermark == 12
    assert ev.typed((3, "become_leader", 1, "t", 0, "hand-written")) == "hand-written"


def _exercise_faults() -> Cluster:
    """A run that says most sentences: faults, config, sessions, commits, shutdowns."""
    c = Cluster(brokers=3, seed=3, kafka_version=ZK)
    c.create_topic("t", partitions=2, replication_factor=3, config={"min.insync.replicas": 2})
    p = c.producer(acks="all", linger_ms=0)
    for i in range(20):
        p.send("t", f"v{i}", partition=i % 2)
    c.run(300)
    c.alter_config("topics", "t", {"min.insync.replicas": 3})
    c.pause(2, 100)
    c.slow(3, network_ms=2)
    c.hold("FetchRequest", src=3)
    c.run(50)
    c.release()
    c.transport.drop("FetchRequest", src=2, count=3)
    c.cut(1, 3)
    c.run(200)
    c.heal()
    c.partition_network([1], [2, 3])
    c.run(200)
    c.heal()
    p.send("t", "rejected?", partition=0)
    c.run(12000)
    cons = c.consumer(group="g", auto_offset_reset="earliest")
    cons.assign("t")
    cons.poll(timeout_ms=500)
    cons.commit()
    c.zk_control_plane.expire_session(c.controller_id())
    c.run(2000)
    c.power_loss(1)
    c.run(500)
    c.start(1)
    c.shutdown(2)
    c.run(3000)
    return c


def test_every_recorded_detail_is_a_declared_record_of_its_kind():
    clusters = [Scenario.named(name).run().cluster for name in builtin_names()]
    clusters.append(_exercise_faults())
    seen: set[str] = set()
    for c in clusters:
        for row in c.trace.rows:
            kind, detail = row[1], row[5]
            classes = ev.EVENT_TYPES.get(kind)
            assert classes, f"undeclared kind {kind!r}: {row}"
            seen.add(kind)
            if isinstance(detail, ev.Event):
                assert type(detail) in classes, row
            else:   # only the data-path kinds store a plain tuple / int
                (cls,) = classes
                assert issubclass(cls, ev.TupleEvent | ev.ValueEvent), row
                named = ev.typed(row)
                assert isinstance(named, cls) and len(named) == len(cls.fields), row
    assert len(seen) >= 30, sorted(set(EVENT_KINDS) - seen)
