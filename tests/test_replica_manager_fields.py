"""The leader's answers and parked operations (FetchPartitionData, FetchResponse,
ProduceResponse, DelayedFetch, DelayedProduce and its ProducePartitionStatus records) hold every
field, to what the class's own constructor would hold, and behave (equal, repr, pickle) as
constructed ones."""

from __future__ import annotations

import dataclasses
import pickle

from kafkasim.core.messages import FetchPartitionData, FetchResponse, ProduceResponse
from kafkasim.core.replica_manager import (
    DelayedFetch,
    DelayedProduce,
    PartitionResponse,
    ProducePartitionStatus,
)
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.transport import Transport
from kafkasim.runtime.workload import RateWorkload


def _rebuilt(obj):
    cls = type(obj)
    names = cls._fields if hasattr(cls, "_fields") else [f.name for f in dataclasses.fields(cls)]
    return cls(*(getattr(obj, name) for name in names))


def _run(monkeypatch, ms: int):
    sent = []
    original = Transport.send

    def spy(self, src, dst, msg):
        sent.append(msg)
        original(self, src, dst, msg)

    monkeypatch.setattr(Transport, "send", spy)
    c = Cluster(brokers=3, seed=1, kafka_version="3.7")
    c.create_topic("t", partitions=1, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    RateWorkload(c, p, "t", rate=1000, duration_ms=ms, partition=0)
    return c, sent


def test_answers_built_field_by_field_equal_constructed_ones(monkeypatch):
    c, sent = _run(monkeypatch, 200)
    c.run(300)
    fetches = [m for m in sent if type(m) is FetchResponse]
    produces = [m for m in sent if type(m) is ProduceResponse]
    datas = [pd for m in fetches for pd in m.partitions]
    assert all(type(pd) is FetchPartitionData for pd in datas)
    assert len(produces) > 10 and sum(len(pd.records) for pd in datas) > 100
    for msg in fetches + produces + datas:
        rebuilt = _rebuilt(msg)   # AttributeError if a field was left unset
        assert rebuilt == msg and repr(rebuilt) == repr(msg)
        assert pickle.loads(pickle.dumps(msg)) == msg
    assert all(pd.diverging_epoch is None and pd.preferred_read_replica == -1
               for pd in datas if pd.error == "NONE")


def test_parked_operations_hold_every_field(monkeypatch):
    c, _ = _run(monkeypatch, 50)
    seen = {DelayedFetch: [], DelayedProduce: []}
    for _ in range(40):
        c.run(1)
        for b in c.brokers.values():
            rm = b.replica_manager
            # the process's next timeouts event
            wake_up = c.timeout_scheduler.process_timeouts[b.id][1]
            for op in [*rm.delayed_fetch.values(), *rm.delayed_produce.values()]:
                # parked: its purgatory timeout is set and live (an id, not None: not fired),
                # and the process wakes up no later than the operation's deadline
                assert 0 <= op.timeout_id < c.timeout_scheduler.next_timeout_id
                assert c.now <= wake_up <= op.deadline_ms
            seen[DelayedFetch] += [(op, c.now) for op in rm.delayed_fetch.values()]
            seen[DelayedProduce] += [(op, c.now) for op in rm.delayed_produce.values()]
    assert len(seen[DelayedFetch]) > 10 and len(seen[DelayedProduce]) > 3
    for ops in seen.values():
        for op, _now in ops:
            rebuilt = _rebuilt(op)   # (a parked fetch's session points back at it: no repr)
            assert rebuilt == op
    for df, now in seen[DelayedFetch]:
        # parked at most 1 ms before ``now``, for the request's MaxWaitMs
        assert now < df.deadline_ms <= now + df.request.max_wait_ms
        assert df.context is not None and list(df.partitions)
        assert df.request.replica_id in (1, 2, 3)
    for dp, now in seen[DelayedProduce]:
        assert now < dp.deadline_ms <= now + 30_000   # request.timeout.ms (default 30 s)
        assert isinstance(dp.client, str)
        for st in dp.status.values():
            assert type(st) is ProducePartitionStatus and _rebuilt(st) == st
            assert type(st.response_status) is PartitionResponse
            assert st.acks_pending or st.response_status.error != "NONE" or \
                st.required_offset > st.response_status.base_offset >= 0
