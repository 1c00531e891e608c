"""The lazy read of quiet fetch-session partitions (``kafkasim.core.quiet_sessions``, not
Kafka's) answers exactly as the plain path: the same requests get the same responses with it on
and off, and the followers' lag clocks read the same."""

from __future__ import annotations

import pytest

from kafkasim.core import quiet_sessions
from kafkasim.core.fake import FakeContext
from kafkasim.core.messages import FetchPartition, FetchRequest, ProduceRequest
from kafkasim.core.replica_manager import ReplicaManager
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.transport import Transport


def _messages(lazy: bool, run, monkeypatch) -> tuple[list, dict]:
    """Every message the run sends (requests and responses, in order), and the lag clocks."""
    sent = []
    original = Transport.send

    def spy(self, src, dst, msg):
        sent.append((self.cluster.engine.now, src, dst, msg))
        original(self, src, dst, msg)

    with monkeypatch.context() as m:
        m.setattr(Transport, "send", spy)
        m.setattr(quiet_sessions, "LAZY", lazy)
        c = run()
    clocks = {(b.id, tp, r): (st.last_caught_up_time_ms, st.last_fetch_time_ms)
              for b in c.brokers.values() if b.is_running
              for tp, p in b.replica_manager.partitions.items() if p.is_leader
              for r, st in p.remote.items()}
    return sent, clocks


def _run(version: str):
    def run():
        c = Cluster(brokers=3, seed=3, kafka_version=version)
        c.create_topic("t", partitions=8, replication_factor=3)
        p = c.producer(acks="all", linger_ms=5)
        c.run(2000)
        for i in range(120):
            p.send("t", key=str(i), value="v", partition=i % 3)
            c.run(9)
        c.crash(c.leader("t", 1))
        c.run(3000)
        for i in range(60):
            p.send("t", key=str(i), value="w", partition=i % 8)
            c.run(13)
        c.run(15_000)
        return c
    return run


@pytest.mark.parametrize("version", ["2.8", "3.7"])
def test_same_requests_get_the_same_responses(version, monkeypatch):
    lazy_sent, lazy_clocks = _messages(True, _run(version), monkeypatch)
    plain_sent, plain_clocks = _messages(False, _run(version), monkeypatch)
    assert len(lazy_sent) > 1000
    assert lazy_sent == plain_sent
    assert lazy_clocks == plain_clocks


def _leader() -> tuple[FakeContext, ReplicaManager]:
    ctx = FakeContext(1, kafka_version="3.7")
    rm = ctx.replica_manager = ReplicaManager()   # (FakeContext.partition_changed unquiets)
    for p in range(4):
        part = ctx.partition("t", p)
        part.make_leader(ctx, 1, (1, 2, 3), (1, 2, 3), 0, 1)
        rm.partitions[("t", p)] = part
    return ctx, rm


def _drive(lazy: bool, monkeypatch) -> tuple[list, int]:
    """One follower's session against a ReplicaManager alone: a full fetch, incremental
    fetches while one partition takes records and the others stay idle, a forgotten partition,
    parked fetches answered by appends and timeouts. Returns every message sent to the follower
    with its lag clocks, and how many fetches found quiet partitions."""
    monkeypatch.setattr(quiet_sessions, "LAZY", lazy)
    ctx, rm = _leader()
    corr = 0
    offsets = dict.fromkeys(range(4), 0)
    session_id, epoch = 0, 0

    def fetch(parts, to_forget=()):
        nonlocal corr
        corr += 1
        fps = tuple(FetchPartition("t", p, offsets[p], 1, -1, 0, 1 << 20) for p in parts)
        rm.fetch_messages(ctx, 2, FetchRequest(corr, 2, 500, 1, 1 << 20, fps,
                                               session_id=session_id, session_epoch=epoch,
                                               to_forget=to_forget))

    def answers() -> list:
        return [m for dst, m in ctx.sent if dst == 2]

    fetch(range(4))
    for df_id in sorted(rm.delayed_fetch):
        rm.on_fetch_timeout(ctx, df_id)
    session_id, epoch = answers()[-1].session_id, 1
    quiet_seen = 0
    for step in range(12):
        quiet_seen += bool(rm.quiet)
        if step % 3 == 0:
            rm.append_records(ctx, "producer-1", ProduceRequest(
                step, "producer-1", 1, 30_000, (("t", 0, (step,), (100,), -1, -1, -1),)))
        offsets[0] = rm.partitions[("t", 0)].log.log_end_offset
        fetch([0] if step % 3 == 1 else [], to_forget=(("t", 3),) if step == 6 else ())
        epoch += 1
        ctx.now += 50
        for df_id in sorted(rm.delayed_fetch):
            rm.on_fetch_timeout(ctx, df_id)
    quiet_sessions.settle_all(rm)
    clocks = {r: (st.last_caught_up_time_ms, st.last_fetch_time_ms)
              for part in rm.partitions.values() for r, st in part.remote.items()}
    return [*answers(), clocks], quiet_seen


def test_a_replica_manager_alone_answers_the_same(monkeypatch):
    lazy, quiet_seen = _drive(True, monkeypatch)
    plain, none_quiet = _drive(False, monkeypatch)
    assert quiet_seen > 5 and none_quiet == 0   # the lazy read did leave partitions unread
    assert len(lazy) > 12 and lazy == plain
