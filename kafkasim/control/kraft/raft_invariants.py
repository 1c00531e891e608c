"""Safety properties of the KRaft quorum (KIP-595 / the Raft paper's Election Safety, Log
Matching on committed entries, Leader Completeness) checked over KafkaRaftClient instances.

The clients record what these checks need (``elected_epochs``, ``committed``,
``leader_hw_history``); that instrumentation survives ``start()`` so crashed-and-restarted
nodes still count. Pass every client of the quorum, voters and observers, up or down.
"""

from __future__ import annotations


def check_raft_safety(nodes) -> list[str]:
    """Violations found (empty when safe):

    - at most one leader per epoch (QuorumState: a vote is persisted before it is granted);
    - committed entries agree across nodes and are never lost from a node's log;
    - a leader holds every entry committed in its epoch or before (Leader Completeness);
    - a leader's high watermark never decreases, within its epoch and across epochs.
    """
    nodes = list(nodes)
    out: list[str] = []
    leaders: dict[int, set[int]] = {}
    for n in nodes:
        for e in n.elected_epochs:
            leaders.setdefault(e, set()).add(n.node_id)
    for e in sorted(leaders):
        if len(leaders[e]) > 1:
            out.append(f"epoch {e} has more than one leader: {sorted(leaders[e])}")

    committed: dict[int, tuple[int, int, int]] = {}   # offset -> (entry epoch, known at, node)
    for n in nodes:
        entries = n.log.entries
        for off in sorted(n.committed):
            epoch, known = n.committed[off]
            if off >= len(entries) or entries[off][1] != epoch:
                have = entries[off][1] if off < len(entries) else None
                out.append(f"node {n.node_id} lost committed offset {off} (epoch {epoch}); "
                           f"its log has epoch {have}")
            prev = committed.get(off)
            if prev is not None and prev[0] != epoch:
                out.append(f"offset {off} committed with epoch {prev[0]} on node {prev[2]} "
                           f"but epoch {epoch} on node {n.node_id}")
            if prev is None or known < prev[1]:
                committed[off] = (epoch, known, n.node_id)

    for n in nodes:
        if n.state is None or n.state.name != "Leader":
            continue
        entries, lead_epoch = n.log.entries, n.state.epoch
        for off in sorted(committed):
            epoch, known, who = committed[off]
            if known <= lead_epoch and (off >= len(entries) or entries[off][1] != epoch):
                out.append(f"leader {n.node_id} of epoch {lead_epoch} lacks offset {off} "
                           f"(epoch {epoch}) committed in epoch {known} (seen by node {who})")
                break

    history = sorted((e, i, hw, n.node_id) for n in nodes
                     for i, (e, hw) in enumerate(n.leader_hw_history))
    best_before: dict[int, int] = {}
    running = -1
    for e in sorted({h[0] for h in history}):
        best_before[e] = running
        running = max([running] + [h[2] for h in history if h[0] == e])
    last: dict[tuple[int, int], int] = {}
    for e, _i, hw, node in history:
        if hw < best_before[e]:
            out.append(f"leader {node} of epoch {e} exposed high watermark {hw} below "
                       f"{best_before[e]} committed in an earlier epoch")
        key = (node, e)
        if key in last and hw <= last[key]:
            out.append(f"leader {node} high watermark went from {last[key]} to {hw} in epoch {e}")
        last[key] = hw
    return out


def assert_raft_safety(nodes) -> None:
    """check_raft_safety, raising AssertionError with every violation."""
    problems = check_raft_safety(nodes)
    if problems:
        raise AssertionError("KRaft safety violated:\n  " + "\n  ".join(problems))
