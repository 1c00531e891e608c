"""Golden behaviour tests in the etcd-raft style: scripts of steps against ONE core piece (a
Partition, a ReplicaFetcherThread) driven by ``kafkasim.core.fake.FakeContext``, each step
followed by the expected transcript (what the piece sent or proposed, and its state after).

Files: ``tests/testdata/*.txt``. A block is

    command key=value ...        (lines starting with # are comments)
    ----
    expected output lines
    <blank line>

Regenerate after an intended change and review the diff before committing:

    KAFKASIM_REWRITE=1 .venv/bin/python -m pytest tests/test_transcripts.py -o addopts=""
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from kafkasim.core.fake import FakeContext
from kafkasim.core.fetcher import (
    FETCHING,
    TRUNCATING,
    PartitionFetchState,
    ReplicaFetcherThread,
)
from kafkasim.core.log import RecordChunk
from kafkasim.core.messages import (
    FetchPartition,
    FetchPartitionData,
    FetchRequest,
    FetchResponse,
    OffsetsForLeaderEpochResponse,
    ProduceRequest,
)
from kafkasim.core.partition import apply_isr_update
from kafkasim.core.replica_manager import ReplicaManager

TESTDATA = Path(__file__).parent / "testdata"
REWRITE = os.environ.get("KAFKASIM_REWRITE") == "1"
TOPIC = "t"


def _ints(v: str) -> tuple[int, ...]:
    return tuple(int(x) for x in v.split(",") if x != "")


def _chunk(base: int, epochs: tuple[int, ...]):
    from array import array
    n = len(epochs)
    return RecordChunk(base, array("i", epochs), array("i", range(1000 + base, 1000 + base + n)),
                       array("q", [0] * n), array("i", [100] * n), ())


class Driver:
    """Interprets one transcript file against a FakeContext."""

    def __init__(self) -> None:
        self.ctx: FakeContext | None = None
        self.part = None
        self.thread: ReplicaFetcherThread | None = None

    # -- commands ---------------------------------------------------------------------------
    def cmd_broker(self, id="1", version="3.7", live="1,2,3", **cfg) -> None:
        config = {k.replace("_", "."): int(v) for k, v in cfg.items()}
        self.ctx = FakeContext(int(id), kafka_version=version, config=config,
                               live_brokers=_ints(live))
        self.part = self.ctx.partition(TOPIC, 0)
        self.thread = None
        self.rm = ReplicaManager()
        self.rm.partitions[(TOPIC, 0)] = self.part
        self.correlation = 0

    def cmd_tick(self, ms) -> None:
        self.ctx.now += int(ms)

    def cmd_leader(self, epoch, isr, replicas, partition_epoch="0") -> None:
        hw = self.part.log.high_watermark
        self.part.make_leader(self.ctx, int(epoch), _ints(isr), _ints(replicas),
                              int(partition_epoch), 1)
        if self.part.log.high_watermark > hw:
            self.ctx.outbox.append("HW moved")

    def cmd_follower(self, leader, epoch, isr, replicas, partition_epoch="0") -> None:
        self.part.make_follower(self.ctx, int(leader), int(epoch), _ints(isr), _ints(replicas),
                                int(partition_epoch), 1)

    def cmd_append(self, n) -> None:
        log = self.part.log
        log.append_as_leader(list(range(int(n))), [100] * int(n), self.part.leader_epoch,
                             self.ctx.now)
        if self.part.maybe_increment_leader_hw(self.ctx):
            self.ctx.outbox.append("HW moved")

    def cmd_fetch(self, replica, offset, log_start="0") -> None:
        leo = self.part.log.log_end_offset
        if self.part.update_follower_fetch_state(self.ctx, int(replica), int(offset),
                                                 int(log_start), leo):
            self.ctx.outbox.append("HW moved")

    def cmd_shrink(self) -> None:
        self.part.maybe_shrink_isr(self.ctx)

    def cmd_committed(self, isr, partition_epoch) -> None:
        if apply_isr_update(self.part, self.ctx, _ints(isr), int(partition_epoch)):
            self.ctx.outbox.append("HW moved")

    def cmd_acks(self, offset) -> None:
        done, err = self.part.check_enough_replicas_reach_offset(self.ctx, int(offset))
        self.ctx.outbox.append(f"acks=all up to {offset}: {'done' if done else 'waiting'}, "
                               f"{err}")

    # ReplicaManager (leader side): whole requests, with the purgatories
    def cmd_produce(self, acks, n, timeout_ms="30000") -> None:
        self.correlation += 1
        ids = tuple(range(100 * self.correlation, 100 * self.correlation + int(n)))
        req = ProduceRequest(self.correlation, "producer-1", int(acks), int(timeout_ms),
                             ((TOPIC, 0, ids, (100,) * int(n), -1, -1, -1),))
        self.rm.append_records(self.ctx, "producer-1", req)

    def cmd_replica_fetch(self, replica, offset, epoch, max_wait_ms="500") -> None:
        self.correlation += 1
        fp = FetchPartition(TOPIC, 0, int(offset), int(epoch), -1, 0, 1 << 20)
        req = FetchRequest(self.correlation, int(replica), int(max_wait_ms), 1, 1 << 20, (fp,))
        self.rm.fetch_messages(self.ctx, int(replica), req)

    def cmd_produce_timeout(self) -> None:
        for dp_id in sorted(self.rm.delayed_produce):
            self.rm.on_produce_timeout(self.ctx, dp_id)

    def cmd_fetch_timeout(self) -> None:
        for df_id in sorted(self.rm.delayed_fetch):
            self.rm.on_fetch_timeout(self.ctx, df_id)

    # fetcher (follower side)
    def cmd_log(self, epochs, hw="0") -> None:
        """Give the local log records with these leader epochs (one per record)."""
        log = self.part.log
        listener, log.listener = log.listener, None   # setting the scene: not recorded
        log.append_as_follower(_chunk(log.log_end_offset, _ints(epochs)))
        log.listener = listener
        log.update_high_watermark(int(hw))

    def cmd_fetcher(self, leader, epoch, state="Fetching") -> None:
        log = self.part.log
        self.thread = ReplicaFetcherThread(self.ctx.id, int(leader), 0)
        st = PartitionFetchState(log.log_end_offset if state == FETCHING else log.high_watermark,
                                 int(epoch), state, last_fetched_epoch=log.latest_epoch()
                                 if state == FETCHING else -1)
        self.thread.partitions[(TOPIC, 0)] = st

    def cmd_do_work(self) -> None:
        self.thread.do_work(self.ctx)

    def cmd_epoch_answer(self, epoch, end_offset, error="NONE") -> None:
        resp = OffsetsForLeaderEpochResponse(self.thread.in_flight,
                                             ((TOPIC, 0, error, int(epoch), int(end_offset)),))
        self.thread.on_offsets_for_leader_epoch(self.ctx, resp)

    def cmd_fetch_answer(self, hw, epochs="", error="NONE", diverging="", leo="-1") -> None:
        st = self.thread.partitions[(TOPIC, 0)]
        chunk = _chunk(st.fetch_offset, _ints(epochs)) if epochs else \
            RecordChunk.empty(st.fetch_offset)
        div = _ints(diverging) if diverging else None
        pd = FetchPartitionData(TOPIC, 0, error, int(hw), 0, chunk, div, int(leo))
        self.thread.on_fetch_response(self.ctx, FetchResponse(self.thread.in_flight, (pd,)))

    # -- output -----------------------------------------------------------------------------
    def state(self) -> str:
        p, log = self.part, self.part.log
        pend = "" if p.pending is None else \
            f" pending {p.pending.kind} {list(p.pending.replicas)}"
        head = (f"{'leader' if p.is_leader else 'follower'} epoch {p.leader_epoch}: "
                f"LEO {log.log_end_offset} HW {log.high_watermark} ISR {list(p.isr)}{pend} "
                f"epochs {[tuple(e) for e in log.leader_epoch_cache.entries]}")
        lines = [head]
        never = -(1 << 50)
        for r, st in sorted(p.remote.items()):
            caught = "never" if st.last_caught_up_time_ms == never else st.last_caught_up_time_ms
            lines.append(f"  follower {r}: LEO {st.log_end_offset} lastCaughtUpTimeMs {caught}")
        if self.thread is not None:
            for (t, q), st in sorted(self.thread.partitions.items()):
                lines.append(f"  fetch {t}-{q}: {st.state} offset {st.fetch_offset} "
                             f"last fetched epoch {st.last_fetched_epoch}")
        return "\n".join(lines)

    def run(self, command: str) -> str:
        name, *args = command.split()
        kwargs = dict(a.split("=", 1) for a in args)
        getattr(self, "cmd_" + name.replace("-", "_"))(**kwargs)
        out = self.ctx.take() if self.ctx else []
        return "\n".join(out + [self.state()])


def _parse(text: str):
    """Blocks of (comment/command lines, expected output)."""
    blocks, lines = [], text.split("\n")
    i = 0
    while i < len(lines):
        pre = []
        while i < len(lines) and lines[i] != "----":
            pre.append(lines[i])
            i += 1
        if i >= len(lines):
            break
        i += 1   # ----
        out = []
        while i < len(lines) and lines[i] != "":
            out.append(lines[i])
            i += 1
        i += 1
        blocks.append((pre, "\n".join(out)))
    return blocks


def _files():
    return sorted(TESTDATA.glob("*.txt"))


@pytest.mark.parametrize("path", _files(), ids=lambda p: p.stem)
def test_transcript(path: Path) -> None:
    blocks = _parse(path.read_text())
    assert blocks, f"{path}: no blocks"
    d = Driver()
    rewritten = []
    for pre, expected in blocks:
        commands = [x for x in pre if x.strip() and not x.startswith("#")]
        assert len(commands) == 1, f"{path}: each block has one command, got {commands}"
        got = d.run(commands[0])
        rewritten.append("\n".join(pre) + "\n----\n" + got + "\n")
        if not REWRITE:
            assert got == expected, (f"{path}: after `{commands[0]}`\n--- expected\n"
                                     f"{expected}\n--- got\n{got}\n(KAFKASIM_REWRITE=1 "
                                     "regenerates; review the diff)")
    if REWRITE:
        path.write_text("\n".join(rewritten))


def test_every_transcript_command_is_covered():
    used = set()
    for path in _files():
        for pre, _ in _parse(path.read_text()):
            used |= {x.split()[0] for x in pre if x.strip() and not x.startswith("#")}
    declared = {n[4:].replace("_", "-") for n in dir(Driver) if n.startswith("cmd_")}
    assert declared <= used, f"commands without a transcript: {sorted(declared - used)}"
    assert TRUNCATING and FETCHING
