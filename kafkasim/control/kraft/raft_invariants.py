"""Safety properties of the KRaft quorum (KIP-595 / the Raft paper's Election Safety, Log
Matching on committed entries, Leader Completeness) checked over KafkaRaftClient instances.

The clients record what these checks need (``elected_epochs``, ``committed``,
``leader_hw_history``); that instrumentation survives ``start()`` so crashed-and-restarted
nodes still count. Pass every client of the quorum, voters and observers, up or down.
"""

from __future__ import annotations


def _epoch_at(log, offset: int, committed_epoch=None):
    """The epoch of the log's entry at ``offset``, None when the log does not have it. Below
    the log start a snapshot holds it, as part of an image, not as an entry (KIP-630): a
    snapshot is only made of committed entries (createNewSnapshot refuses an id above the
    high watermark or that the log does not hold), so the offset counts as held with the
    ``committed_epoch`` the caller expects."""
    entries = log.entries
    i = offset - getattr(log, "start_offset", 0)
    if 0 <= i < len(entries):
        return entries[i][1]
    if i < 0 and offset >= 0 and getattr(log, "snapshots", None):
        return committed_epoch
    return None


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
        for off in sorted(n.committed):
            epoch, known = n.committed[off]
            if _epoch_at(n.log, off, epoch) != epoch:
                have = _epoch_at(n.log, off)
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
        lead_epoch = n.state.epoch
        for off in sorted(committed):
            epoch, known, who = committed[off]
            if known <= lead_epoch and _epoch_at(n.log, off, epoch) != epoch:
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


class RaftSafetyProgress:
    """``check_raft_safety`` kept up to date from what changed since the last call, for a check
    after every event: over a long run the full check reads every committed entry of every node
    each time the quorum moves, and its cost grows with the run (20 simulated minutes of a
    3-controller cluster: 39 s with checks, 2.5 s without).

    ``advance(nodes)`` reads only the new elections, commits and leader high watermarks, and a
    node's commits again once its log was replaced (a truncation makes a new list), and answers
    True when all of it is safe. Anything else -- a problem, or a change it cannot judge alone
    (other nodes, a log or a history that shrank, an offset now known committed in an earlier
    epoch) -- answers False, for good: the caller then runs ``check_raft_safety``, which words
    the violations exactly as before. The state is the facts already verified."""

    def __init__(self) -> None:
        self.nodes: list = []
        self.failed = False
        self.leaders: dict[int, int] = {}            # epoch -> the node elected in it
        self.elected: dict[int, int] = {}            # node -> elected_epochs already read
        self.committed: list[tuple[int, int]] = []   # offset -> (entry epoch, earliest known)
        self.merged: dict[int, int] = {}             # node -> commits merged into ``committed``
        self.present: dict[int, tuple] = {}          # node -> (its log's list, commits found in it)
        self.complete: dict[int, tuple] = {}         # leader -> (epoch, log list, offsets checked)
        self.hw_read: dict[int, int] = {}            # node -> leader_hw_history entries read
        self.hw_top: dict[int, int] = {}             # epoch -> highest leader HW set in it
        self.hw_low: dict[int, int] = {}             # epoch -> lowest leader HW set in it
        self.hw_last: dict[tuple[int, int], int] = {}   # (node, epoch) -> its last leader HW

    def advance(self, nodes) -> bool:
        nodes = list(nodes)
        if self.failed:
            return False
        if self.nodes and (len(nodes) != len(self.nodes) or
                           any(a is not b for a, b in zip(nodes, self.nodes, strict=True))):
            self.failed = True   # another set of clients: judge it whole
            return False
        self.nodes = nodes
        ok = self._elections(nodes) and self._commits(nodes) and \
            self._completeness(nodes) and self._leader_hws(nodes)
        self.failed = not ok
        return ok

    def _elections(self, nodes) -> bool:
        """At most one leader per epoch, over the elections since the last call."""
        for n in nodes:
            epochs = n.elected_epochs
            read = self.elected.get(n.node_id, 0)
            if len(epochs) < read:
                return False
            for e in epochs[read:]:
                if self.leaders.setdefault(e, n.node_id) != n.node_id:
                    return False
            self.elected[n.node_id] = len(epochs)
        return True

    def _commits(self, nodes) -> bool:
        """Each node's new commits agree with every other node's, and every commit is still in
        its log (all of them again when the log is a new list)."""
        committed = self.committed
        for n in nodes:
            mine, entries = n.committed, n.log.entries
            merged = self.merged.get(n.node_id, 0)
            if len(mine) < merged:
                return False
            for off in range(merged, len(mine)):
                got = mine.get(off)   # a client commits offsets 0, 1, 2, ... in order
                if got is None:
                    return False
                epoch, known = got
                if off < len(committed):
                    if committed[off][0] != epoch or known < committed[off][1]:
                        return False
                elif off == len(committed):
                    committed.append((epoch, known))
                else:
                    return False
            self.merged[n.node_id] = len(mine)
            log, found = self.present.get(n.node_id, (None, 0))
            start = found if log is entries else 0
            for off in range(start, len(mine)):
                if _epoch_at(n.log, off, mine[off][0]) != mine[off][0]:
                    return False
            self.present[n.node_id] = (entries, len(mine))
        return True

    def _completeness(self, nodes) -> bool:
        """A leader holds every entry committed in its epoch or before: the offsets committed
        since its last check, or all of them for a new leader or a log that is a new list."""
        committed = self.committed
        for n in nodes:
            st = n.state
            if st is None or st.name != "Leader":
                self.complete.pop(n.node_id, None)
                continue
            entries, lead = n.log.entries, st.epoch
            mark = self.complete.get(n.node_id)
            start = mark[2] if mark is not None and mark[0] == lead and mark[1] is entries else 0
            for off in range(start, len(committed)):
                epoch, known = committed[off]
                if known <= lead and _epoch_at(n.log, off, epoch) != epoch:
                    return False
            self.complete[n.node_id] = (lead, entries, len(committed))
        return True

    def _leader_hws(self, nodes) -> bool:
        """A leader's HW rises within its epoch and never drops below an earlier epoch's: each
        new (epoch, HW) against the highest of every earlier epoch and the lowest of every
        later one."""
        top, low = self.hw_top, self.hw_low
        for n in nodes:
            history = n.leader_hw_history
            read = self.hw_read.get(n.node_id, 0)
            if len(history) < read:
                return False
            for e, hw in history[read:]:
                # (check_raft_safety's running maximum starts at -1)
                if hw < max([v for ep, v in top.items() if ep < e], default=-1) or \
                        any(v < hw for ep, v in low.items() if ep > e):
                    return False
                last = self.hw_last.get((n.node_id, e))
                if last is not None and hw <= last:
                    return False
                self.hw_last[(n.node_id, e)] = hw
                top[e] = max(top.get(e, hw), hw)
                low[e] = min(low.get(e, hw), hw)
            self.hw_read[n.node_id] = len(history)
        return True


def assert_raft_safety(nodes) -> None:
    """check_raft_safety, raising AssertionError with every violation."""
    problems = check_raft_safety(nodes)
    if problems:
        raise AssertionError("KRaft safety violated:\n  " + "\n  ".join(problems))
