"""The checkers skip an event that changed nothing they read (``Ghost.quiet``): an event that wrote
no trace row but sends and receipts of data-path messages, let no consumer read a record and left
the controller's partition states as they were. About 60 % of a fault schedule's events are such
(fetches that bring nothing new, timers), so the skip is most of what checking every event costs
less. It is sound only if every change of the state a check reads writes a trace row. This file
tests that: random fault schedules of every profile, checked after every event, and after each
event the audit below fingerprints everything the checks read; an event the ghost called quiet
must leave the fingerprint as it was. A new state change that writes no row fails here, naming
the event and what changed.
"""

from __future__ import annotations

import importlib

import pytest

from kafkasim.observe.checks import base as checks_base
from kafkasim.observe.checks.ghost import ControllerStateReader, _raft_clients, describe_event

fault_properties = importlib.import_module("test_fault_properties")

#: (profile, first seed, schedules): both controller modes, safe and unsafe configurations
BATCHES = [("safe", 0, 12), ("unclean", 0, 6), ("old", 0, 4), ("acks1", 0, 4),
           ("kraft", 0, 6), ("kraft40", 0, 3), ("kraft_unclean", 0, 3)]


def fingerprint(cluster) -> tuple:
    """What the checks read (``kafkasim.observe.checks``): every broker's process state, logs
    (start, end, HW, last record and epoch) and replicas (role, epoch, ISR, pending change),
    the controller's partition states and ELRs, the metadata quorum's logs and roles, and how
    many records each consumer has read."""
    brokers = []
    for bid, broker in sorted(cluster.brokers.items()):
        lifecycle = getattr(broker, "lifecycle", None)
        logs = tuple(
            (tp, id(log), log.log_start_offset, log.log_end_offset, log.high_watermark,
             log.ids[-1] if log.log_end_offset > log.log_start_offset else None,
             log.epochs[-1] if log.log_end_offset > log.log_start_offset else None)
            for tp, log in sorted(broker.logs.items()))
        parts = tuple(
            (tp, part.is_leader, part.leader_epoch, tuple(part.isr), part.pending is None)
            for tp, part in sorted(broker.replica_manager.partitions.items()))
        brokers.append((bid, broker.state, broker.is_running,
                        getattr(lifecycle, "publishing", None), logs, parts))
    states, elr = ControllerStateReader().read_states(cluster, True, {}, [])
    # RaftSafety judges the quorum when a raft_* row says it moved (a role, an epoch, a vote,
    # a high watermark): a record appended to a raft log is judged with the high watermark
    # that commits it, so the log's length alone is not part of what it reads per event
    raft = tuple((id(r), type(r.state).__name__, getattr(r.state, "epoch", None),
                  len(r.committed), len(r.elected_epochs), len(r.leader_hw_history))
                 for r in _raft_clients(cluster))
    consumed = tuple((cid, len(c.consumed)) for cid, c in sorted(cluster.clients.items())
                     if isinstance(getattr(c, "consumed", None), list) and c.consumed)
    return (tuple(brokers), tuple(sorted(states.items())),
            tuple(sorted((elr or {}).items())), raft, consumed)


class QuietAudit:
    """An engine listener run after the checkers' (``attach``): on every event their ghost
    called quiet, the fingerprint must not have moved."""

    def __init__(self, checker, cluster) -> None:
        self.checker, self.cluster = checker, cluster
        self.last = fingerprint(cluster)
        self.quiet = 0
        self.events = 0
        self.problems: list[str] = []

    def __call__(self, time_ms: int, kind: str, args: tuple) -> None:
        now = fingerprint(self.cluster)
        self.events += 1
        if self.checker.ghost.quiet:
            self.quiet += 1
            if now != self.last and len(self.problems) < 5:
                changed = [name for name, a, b in zip(
                    ("brokers", "controller states", "ELRs", "raft", "consumers"),
                    self.last, now, strict=True) if a != b]
                self.problems.append(
                    f"t={time_ms} ms, event {describe_event((time_ms, -1, kind, args))}: "
                    f"called quiet, but {', '.join(changed)} changed without a trace row")
        self.last = now


@pytest.mark.parametrize(("profile", "first", "n"), BATCHES,
                         ids=[b[0] for b in BATCHES])
def test_an_event_the_checks_skip_changed_nothing_they_read(monkeypatch, profile, first, n):
    audits: list[QuietAudit] = []
    real_attach = checks_base.attach

    def attach_with_audit(cluster, *a, **kw):
        checker = real_attach(cluster, *a, **kw)
        audit = QuietAudit(checker, cluster)
        cluster.engine.add_listener(audit)
        audits.append(audit)
        return checker

    monkeypatch.setattr(fault_properties, "attach", attach_with_audit)
    for seed in range(first, first + n):
        sc = fault_properties.generate(seed, profile)
        out = fault_properties.run_schedule(sc, every_event=True)
        audit = audits[-1]
        assert not audit.problems, f"{sc.reproduce()}\n" + "\n".join(audit.problems)
        assert not out.error, out.summary()
    quiet = sum(a.quiet for a in audits)
    events = sum(a.events for a in audits)
    # not vacuous: most events are quiet, and the others are checked
    assert 0.3 * events < quiet < 0.95 * events, (quiet, events)
