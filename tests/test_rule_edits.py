"""Editing a rule's source changes what runs (issue 29: one copy of every rule, and it runs).

For every replication rule kafkasim follows, each test replaces the rule function in its module
(``monkeypatch.setattr(module, name, broken)``, as a learner editing ``rules.py`` would), builds a
default cluster (``Cluster(brokers=3, seed=1)``; ZooKeeper mode on 3.9 where the rule only exists
there) and checks that a run depending on the rule comes out differently, in a named way: the HW,
the ISR, what acks=all answered, where a follower truncated, who was elected, duplicates in the
log. Where the rule is swappable (``kafkasim.core.rules.RULES``), ``Cluster.swap_rule`` with
the same broken function must give the same outcome as the edit: there is no second copy of the
rule for either to miss.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest
from clusters import make_cluster

from kafkasim.control.kraft import partition_change as pc
from kafkasim.control.kraft.activation_records import ActivationRecordsGenerator
from kafkasim.control.kraft.records import NO_LEADER, NoOpRecord, RegisterBrokerRecord
from kafkasim.core import errors as E
from kafkasim.core import producer_state, rules
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

ZK = {"kafka_version": "3.9", "metadata_mode": "zookeeper"}

Setup = Callable[[Cluster], None]

#: rules.py's rules a cluster cannot swap: ``end_offset_for`` is the leader epoch cache's own
#: method (storage, no cluster at hand); edit it in rules.py
NOT_SWAPPABLE = {"end_offset_for"}


def _none(c: Cluster) -> None:
    pass


def _cluster(setup: Setup, brokers: int = 3, **kw) -> Cluster:
    c = make_cluster(brokers, seed=1, **kw)
    setup(c)
    return c


def _topic(c: Cluster, min_isr: int = 2) -> int:
    """Topic ``t``: one partition, RF 3; returns its leader."""
    c.create_topic("t", partitions=1, replication_factor=3,
                   config={"min.insync.replicas": min_isr})
    c.run(500)
    return c.leader("t")


def _values(c: Cluster, broker: int) -> list:
    return [v for _offset, _epoch, v in c.log_records(broker, "t")]


def outcomes(monkeypatch, module, name: str, broken: Callable, scenario: Callable, **kw):
    """(Kafka's outcome, the outcome with the rule edited in its module, the outcome with the
    rule swapped by ``Cluster.swap_rule``, or None when the rule is not swappable)."""
    kafka = scenario(_none, **kw)
    monkeypatch.setattr(module, name, broken)
    edited = scenario(_none, **kw)
    monkeypatch.undo()
    swapped = None
    if module is rules and name not in NOT_SWAPPABLE:
        swapped = scenario(lambda c: c.swap_rule(name, broken), **kw)
    return kafka, edited, swapped


def _assert_swap_is_the_edit(name: str, edited, swapped) -> None:
    assert swapped == edited, f"swap_rule({name!r}) and editing rules.{name} differ"


# -- scenarios ---------------------------------------------------------------------------------
def acks_all_run(setup: Setup, **kw):
    """Five acks=all records on a healthy cluster: (leader HW, records acknowledged)."""
    c = _cluster(setup, **kw)
    _topic(c)
    p = c.producer(acks="all")
    for i in range(5):
        p.send("t", f"v{i}")
    c.run(1000)
    return c.high_watermark("t"), len(p.acked())


def held_followers_run(setup: Setup, **kw):
    """Three acks=all records while no follower gets a fetch answer: (HW, acknowledged)."""
    c = _cluster(setup, **kw)
    leader = _topic(c)
    for b in c.brokers:
        if b != leader:
            c.hold("FetchResponse", src=leader, dst=b)
    p = c.producer(acks="all")
    for i in range(3):
        p.send("t", f"v{i}")
    c.run(300)
    return c.high_watermark("t"), len(p.acked())


def stalled_follower_run(setup: Setup, **kw):
    """One follower stops fetching while 20 records/s arrive for 50 s: (that follower, ISR)."""
    c = _cluster(setup, **kw)
    leader = _topic(c)
    stalled = max(b for b in c.brokers if b != leader)
    c.hold("FetchRequest", src=stalled)
    RateWorkload(c, c.producer(acks=1), "t", rate=20, duration_ms=50_000, partition=0)
    c.run(50_000)
    return stalled, c.isr("t")


def rejoin_run(setup: Setup, **kw):
    """As ``stalled_follower_run``, then the follower fetches again for 5 s: (that follower,
    ISR)."""
    c = _cluster(setup, **kw)
    leader = _topic(c)
    stalled = max(b for b in c.brokers if b != leader)
    c.hold("FetchRequest", src=stalled)
    RateWorkload(c, c.producer(acks=1), "t", rate=20, duration_ms=55_000, partition=0)
    c.run(50_000)
    c.release()
    c.run(5000)
    return stalled, c.isr("t")


def steady_run(setup: Setup, **kw):
    """20 records/s for 60 s; from 35 s on the followers get no fetch answer for 16 s (more than
    the ISR expiration task's period, less than replica.lag.time.max.ms), so they are behind the
    leader's LEO when it runs: the ISR at the end of those 16 s."""
    c = _cluster(setup, **kw)
    _topic(c)
    RateWorkload(c, c.producer(acks=1), "t", rate=20, duration_ms=60_000, partition=0)
    c.run(35_000)
    c.hold("FetchResponse")
    c.run(16_000)
    return c.isr("t")


def under_min_isr_run(setup: Setup, **kw):
    """min ISR 2, both followers crashed, one acks=all send: (ISR, leader LEO, status, errors
    of the attempts)."""
    c = _cluster(setup, **kw)
    leader = _topic(c)
    for b in sorted(c.brokers):
        if b != leader:
            c.crash(b)
    c.run(20_000)
    isr = c.isr("t")
    r = c.producer(acks="all").send("t", "x")
    c.run(40_000)
    return isr, c.log(leader, "t").log_end_offset, r.status, r.errors[:1]


def follower_catch_up_run(setup: Setup, **kw):
    """A follower restarts 30,000 records behind (a fetch brings ~10,000): the largest amount by
    which its HW ever exceeded its LEO."""
    c = _cluster(setup, **kw)
    leader = _topic(c, min_isr=1)
    follower = max(b for b in c.brokers if b != leader)
    c.crash(follower)
    c.run(15_000)                     # fenced: out of the ISR, the HW moves without it
    RateWorkload(c, c.producer(acks=1), "t", rate=10_000, duration_ms=3000, partition=0)
    c.run(4000)
    worst = [0]

    def above_leo(c: Cluster) -> None:
        log = c.brokers[follower].logs.get(("t", 0))
        if log is not None and log.high_watermark - log.log_end_offset > worst[0]:
            worst[0] = log.high_watermark - log.log_end_offset

    c.start(follower)
    c.run(10_000, check=above_leo)
    return worst[0]


def divergence_run(setup: Setup, **kw):
    """The leader appends 3 records (acks=1) no follower gets, crashes; the new leader takes 2
    other records; the old leader comes back: (old leader, new leader, old leader's log, new
    leader's log, the old leader's truncations)."""
    c = _cluster(setup, **kw)
    old = _topic(c, min_isr=1)
    for b in c.brokers:
        if b != old:
            c.hold("FetchResponse", src=old, dst=b)
    p = c.producer(acks=1)
    for i in range(3):
        p.send("t", f"old{i}")
    c.run(200)
    c.crash(old)
    c.run(15_000)
    new = c.leader("t")
    q = c.producer(acks=1)
    for i in range(2):
        q.send("t", f"new{i}")
    c.run(1000)
    c.release()
    c.start(old)
    c.run(10_000)
    truncations = [r[5] for r in c.trace.rows if r[1] == "truncate" and r[2] == old]
    return old, new, _values(c, old), _values(c, new), truncations


def failover_run(setup: Setup, **kw):
    """The leader crashes: (old leader, new leader)."""
    c = _cluster(setup, **kw)
    old = _topic(c)
    c.crash(old)
    c.run(25_000)
    return old, c.leader("t")


def controlled_shutdown_run(setup: Setup, **kw):
    """The leader shuts down cleanly: (old leader, new leader)."""
    c = _cluster(setup, **kw)
    old = _topic(c)
    c.shutdown(old)
    c.run(15_000)
    return old, c.leader("t")


def preferred_run(setup: Setup, **kw):
    """The preferred leader crashes, comes back, and a preferred election runs: (preferred
    replica, leader after the election)."""
    c = _cluster(setup, **kw)
    preferred = _topic(c)
    c.crash(preferred)
    c.run(25_000)
    c.start(preferred)
    c.run(15_000)
    c.elect("t", election_type="preferred")
    c.run(5000)
    return preferred, c.leader("t")


def reassign_run(setup: Setup, **kw):
    """Four brokers; the partition moves off its leader: (target replicas, leader elected
    when the reassignment completes)."""
    c = _cluster(setup, brokers=4, **kw)
    old = _topic(c)
    target = [b for b in sorted(c.brokers) if b != old]
    c.admin().alter_partition_reassignments_result({("t", 0): target})
    c.run(3000)   # done (the auto leader rebalance, 5 s after start, has not run yet)
    return target, c.leader("t")


def elr_run(setup: Setup, **kw):
    """KRaft, min ISR 2: both followers, then the leader, shut down; the last follower to leave
    starts again: (that follower, the partition's leader after)."""
    c = _cluster(setup, **kw)
    leader = _topic(c)
    a, b = (x for x in sorted(c.brokers) if x != leader)
    c.shutdown(a)
    c.run(15_000)
    c.shutdown(b)
    c.run(15_000)
    c.shutdown(leader)
    c.run(15_000)
    c.start(b)
    c.run(20_000)
    return b, c.leader("t")


def lost_response_run(setup: Setup, **kw):
    """An idempotent producer's second batch: its response is lost and it is retried: the
    leader's log."""
    c = _cluster(setup, **kw)
    _topic(c)
    p = c.producer(**{"acks": "all", "enable.idempotence": True})
    p.send("t", "a")
    c.run(1000)
    c.transport.drop("ProduceResponse", count=1)
    p.send("t", "b")
    c.run(60_000)
    return _values(c, c.leader("t"))


def failover_retry_run(setup: Setup, **kw):
    """An idempotent batch reaches every replica, its response is lost with its leader, and the
    producer retries on the new leader, which knows the batch only from what it fetched: the
    new leader's log."""
    c = _cluster(setup, **kw)
    old = _topic(c)
    p = c.producer(**{"acks": "all", "enable.idempotence": True})
    p.send("t", "a")
    c.run(1000)
    c.hold("ProduceResponse")
    p.send("t", "b")
    c.run(1000)
    c.crash(old)
    c.run(60_000)
    return _values(c, c.leader("t"))


# -- broken variants ---------------------------------------------------------------------------
def hw_never_moves(leader_leo, current_hw, followers, maximal, now_ms, lag_ms, **kw):
    return current_hw


def never_out_of_sync(state, leader_leo, now_ms, lag_ms, **kw):
    return False


def never_in_sync(follower_leo, leader_hw, leader_epoch_start_offset, **kw):
    return False


def never_caught_up(state, fetch_offset, leader_leo, now_ms, **kw):
    return state.last_caught_up_time_ms


def acks_all_done_at_once(high_watermark, required_offset, maximal_isr_size, min_isr):
    return True, E.NONE


def min_isr_ignored(isr, min_isr):
    return E.NONE


def min_isr_is_one(min_insync_replicas, replica_count, *, capped=True):
    return 1


def end_offset_always_leo(entries, requested_epoch, log_end_offset, **kw):
    return requested_epoch, log_end_offset


def never_truncate(leader_epoch, leader_end_offset, follower_entries, follower_leo,
                   fetch_offset):
    return follower_leo, True


def follower_hw_unclamped(leader_hw, log_start_offset, log_end_offset):
    return leader_hw


def _last(candidates, ok):
    return next((r for r in reversed(list(candidates)) if ok(r)), None)


def offline_picks_last(assignment, isr, live, unclean_enabled):
    live = set(live)
    return _last(assignment, lambda r: r in live and r in isr), False


def controlled_shutdown_picks_last(assignment, isr, live, shutting_down):
    live, down = set(live), set(shutting_down)
    return _last(assignment, lambda r: r in live and r in isr and r not in down)


def reassign_picks_last(reassignment, isr, live):
    live = set(live)
    return _last(reassignment, lambda r: r in live and r in isr)


def preferred_never(assignment, isr, live):
    return None


def kraft_elect_any_picks_last(builder):
    p = builder.partition
    if pc.is_valid_new_leader(builder, p.leader):
        return pc.ElectionResult(p.leader, False)
    last = _last(builder.target_replicas, lambda r: pc.is_valid_new_leader(builder, r))
    return pc.ElectionResult(NO_LEADER if last is None else last, False)


def kraft_preferred_never(builder):
    return pc.ElectionResult(builder.partition.leader, False)


def elr_never_populated(builder):
    builder.target_elr = []
    builder.target_last_known_elr = []


def accepts_duplicates(states, ident, unknown_producer="append", duplicate_before_cache=False):
    return "append", -1


def never_records_producers(states, batches):
    pass


# -- the tests ---------------------------------------------------------------------------------
def test_leader_hw_rule_edit_stops_the_hw(monkeypatch):
    kafka, edited, swapped = outcomes(monkeypatch, rules, "maybe_increment_leader_hw",
                                      hw_never_moves, acks_all_run)
    assert kafka == (5, 5)            # HW 5, every acks=all record acknowledged
    assert edited == (0, 0)           # the HW never moves: nothing acknowledged
    _assert_swap_is_the_edit("maybe_increment_leader_hw", edited, swapped)


def test_out_of_sync_rule_edit_keeps_a_stalled_follower_in_the_isr(monkeypatch):
    kafka, edited, swapped = outcomes(monkeypatch, rules, "is_follower_out_of_sync",
                                      never_out_of_sync, stalled_follower_run)
    stalled, isr = kafka
    assert stalled not in isr and len(isr) == 2
    assert edited == (stalled, [1, 2, 3])
    _assert_swap_is_the_edit("is_follower_out_of_sync", edited, swapped)


def test_in_sync_rule_edit_keeps_a_returning_follower_out_of_the_isr(monkeypatch):
    kafka, edited, swapped = outcomes(monkeypatch, rules, "is_follower_in_sync", never_in_sync,
                                      rejoin_run)
    stalled, isr = kafka
    assert sorted(isr) == [1, 2, 3]   # it fetched up to the HW again and rejoined
    assert stalled not in edited[1] and len(edited[1]) == 2
    _assert_swap_is_the_edit("is_follower_in_sync", edited, swapped)


def test_caught_up_rule_edit_drops_fetching_followers_from_the_isr(monkeypatch):
    kafka, edited, swapped = outcomes(monkeypatch, rules, "updated_last_caught_up_time_ms",
                                      never_caught_up, steady_run)
    assert kafka == [1, 2, 3]
    assert len(edited) == 1           # never caught up: both followers leave the ISR
    _assert_swap_is_the_edit("updated_last_caught_up_time_ms", edited, swapped)


def test_acks_all_rule_edit_acknowledges_before_the_hw(monkeypatch):
    kafka, edited, swapped = outcomes(monkeypatch, rules, "check_enough_replicas_reach_offset",
                                      acks_all_done_at_once, held_followers_run)
    assert kafka == (0, 0)
    assert edited == (0, 3)           # done at once: acknowledged with the HW still at 0
    _assert_swap_is_the_edit("check_enough_replicas_reach_offset", edited, swapped)


def test_min_isr_check_edit_appends_under_min_isr(monkeypatch):
    kafka, edited, swapped = outcomes(monkeypatch, rules, "check_min_isr_before_append",
                                      min_isr_ignored, under_min_isr_run)
    isr, leo, _status, errors = kafka
    assert len(isr) == 1 and leo == 0 and errors == [E.NOT_ENOUGH_REPLICAS]
    _isr, leo, _status, errors = edited
    assert leo == 1 and errors != [E.NOT_ENOUGH_REPLICAS]   # appended although under min ISR
    _assert_swap_is_the_edit("check_min_isr_before_append", edited, swapped)


def test_effective_min_isr_edit_acknowledges_under_min_isr(monkeypatch):
    kafka, edited, swapped = outcomes(monkeypatch, rules, "effective_min_isr", min_isr_is_one,
                                      under_min_isr_run)
    assert kafka[1:3] == (0, "pending")
    assert edited[1:] == (1, "acked", [])   # min ISR 1: appended and acknowledged at once
    _assert_swap_is_the_edit("effective_min_isr", edited, swapped)


def test_end_offset_for_edit_leaves_the_old_leader_diverged(monkeypatch):
    kafka, edited, _ = outcomes(monkeypatch, rules, "end_offset_for", end_offset_always_leo,
                                divergence_run)
    _old, _new, old_log, new_log, truncations = kafka
    assert old_log == new_log == ["new0", "new1"]
    assert str(truncations[0]).startswith("to 0 ")      # the diverging epoch ends at 0
    _old, _new, old_log, new_log, truncations = edited
    assert old_log == ["old0", "old1"] and new_log == ["new0", "new1"]
    assert str(truncations[0]).startswith("to 2 ")      # the epoch "ends" at the new LEO
    assert "end_offset_for" not in rules.RULES


def test_truncation_rule_edit_never_truncates_to_the_divergence(monkeypatch):
    kafka, edited, swapped = outcomes(monkeypatch, rules, "get_offset_truncation_state",
                                      never_truncate, divergence_run)
    assert kafka[2] == kafka[3] == ["new0", "new1"]
    _old, _new, old_log, new_log, truncations = edited
    assert old_log == ["old0", "old1", "old2"] and new_log == ["new0", "new1"]   # diverged
    assert not any(str(t).startswith("to 0 ") for t in truncations)
    _assert_swap_is_the_edit("get_offset_truncation_state", edited, swapped)


def test_follower_hw_edit_puts_the_hw_above_the_leo(monkeypatch):
    kafka, edited, swapped = outcomes(monkeypatch, rules, "update_high_watermark",
                                      follower_hw_unclamped, follower_catch_up_run)
    assert kafka == 0                 # min(leader HW, own LEO): never above the LEO
    assert edited > 10_000            # the leader's HW while ~20,000 records short
    _assert_swap_is_the_edit("update_high_watermark", edited, swapped)


@pytest.mark.parametrize("name, broken, scenario", [
    ("offline_partition_leader_election", offline_picks_last, failover_run),
    ("controlled_shutdown_partition_leader_election", controlled_shutdown_picks_last,
     controlled_shutdown_run),
    ("preferred_replica_partition_leader_election", preferred_never, preferred_run),
    ("reassign_partition_leader_election", reassign_picks_last, reassign_run),
])
def test_zookeeper_election_edit_changes_the_leader(monkeypatch, name, broken, scenario):
    kafka, edited, swapped = outcomes(monkeypatch, rules, name, broken, scenario, **ZK)
    assert kafka != edited, f"editing rules.{name} changed nothing"
    if scenario is preferred_run:
        assert kafka[1] == kafka[0] and edited[1] != edited[0]   # no longer moves back
    _assert_swap_is_the_edit(name, edited, swapped)


def test_kraft_election_order_edit_changes_the_new_leader(monkeypatch):
    kafka, edited, _ = outcomes(monkeypatch, pc, "elect_any_leader", kraft_elect_any_picks_last,
                                failover_run)
    (old, new), (old2, new2) = kafka, edited
    assert old == old2 and new != new2 and new2 not in (old, NO_LEADER)


def test_kraft_preferred_election_edit_keeps_the_leader_away(monkeypatch):
    kafka, edited, _ = outcomes(monkeypatch, pc, "elect_preferred_leader",
                                kraft_preferred_never, preferred_run)
    assert kafka[1] == kafka[0] and edited[1] != edited[0]


def test_elr_edit_leaves_the_partition_leaderless(monkeypatch):
    kafka, edited, _ = outcomes(monkeypatch, pc, "maybe_populate_target_elr",
                                elr_never_populated, elr_run)
    restarted, leader = kafka
    assert leader == restarted        # elected from the ELR
    assert edited == (restarted, NO_LEADER)


def test_idempotent_append_edit_appends_a_retried_batch_twice(monkeypatch):
    kafka, edited, _ = outcomes(monkeypatch, producer_state, "check_append", accepts_duplicates,
                                lost_response_run)
    assert kafka == ["a", "b"]
    assert edited == ["a", "b", "b"]   # the retry appended again


def test_producer_state_update_edit_lets_a_new_leader_append_a_duplicate(monkeypatch):
    kafka, edited, _ = outcomes(monkeypatch, producer_state, "update", never_records_producers,
                                failover_retry_run)
    assert kafka == ["a", "b"]
    assert edited[0] == "a" and edited.count("b") > 1   # the new leader appended the retry


def latest_epoch_ends_at_zero(entries, requested_epoch, log_end_offset, **kw):
    """A broken endOffsetFor: every epoch "ends" at offset 0."""
    return requested_epoch, 0


def steady_fetch_run(setup: Setup, **kw):
    """Five acks=all records on a healthy cluster, no fault: (the followers' truncations,
    records acknowledged). Every follower Fetch carries LastFetchedEpoch = the leader's latest
    epoch, so the leader asks endOffsetFor about it on every fetch."""
    c = _cluster(setup, **kw)
    leader = _topic(c)
    p = c.producer(acks="all")
    for i in range(5):
        p.send("t", f"v{i}")
    c.run(1000)
    truncations = [r for r in c.trace.rows if r[1] == "truncate" and r[2] != leader]
    return len(truncations), len(p.acked())


def test_end_offset_for_edit_reaches_the_steady_state_fetch(monkeypatch):
    """No shortcut beside the rule: a follower on the leader's latest epoch is answered by
    endOffsetFor itself (its own fast path: the latest epoch ends at the LEO), so editing the
    rule moves a healthy run too."""
    kafka, edited, _ = outcomes(monkeypatch, rules, "end_offset_for", latest_epoch_ends_at_zero,
                                steady_fetch_run)
    assert kafka == (0, 5)
    assert edited[0] > 0   # the followers are told they diverge at 0, and truncate


# -- the KRaft controller's activation records -------------------------------------------------
def activation_run(setup: Setup, **kw):
    """A default KRaft cluster's first registration: (its broker epoch -- the offset of the
    RegisterBrokerRecord, after the activation records --, the record types before it)."""
    c = _cluster(setup, **kw)
    c.run(2000)
    entries = c.kraft.active().raft.log.entries
    first = next(o for o, _e, r in entries if type(r) is RegisterBrokerRecord)
    return entries[first][2].broker_epoch, [type(r).__name__ for _o, _e, r in entries[:first]]


def _activation_with_an_extra_no_op(*args, **kwargs):
    """recordsForEmptyLog, edited: one NoOpRecord before the bootstrap transaction."""
    result = _KAFKA_RECORDS_FOR_EMPTY_LOG(*args, **kwargs)
    return result._replace(records=[NoOpRecord(), *result.records])


_KAFKA_RECORDS_FOR_EMPTY_LOG = ActivationRecordsGenerator.records_for_empty_log


def test_activation_records_edit_moves_the_broker_epochs(monkeypatch):
    """ActivationRecordsGenerator.records_for_empty_log is the copy the running controller
    calls (QuorumController.complete_activation): editing it moves every offset after it, the
    broker epochs among them."""
    kafka, edited, _ = outcomes(monkeypatch, ActivationRecordsGenerator, "records_for_empty_log",
                                staticmethod(_activation_with_an_extra_no_op), activation_run)
    assert kafka[1][1] == "BeginTransactionRecord" and kafka[1][-1] == "EndTransactionRecord"
    assert edited == (kafka[0] + 1, [kafka[1][0], "NoOpRecord", *kafka[1][1:]])
