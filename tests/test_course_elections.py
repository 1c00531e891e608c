"""Notebook 08's grading helpers (kafkasim.course.elections): each check passes on the answer the
simulator's rule gives and fails on another, and the fault-sequence exercise is graded by the
NoAckedLoss checker on Kafka 4.0 (ELR off) against 4.1 (ELR on, KIP-966)."""

from __future__ import annotations

from kafkasim.control.kraft.partition_change import PartitionChangeBuilder
from kafkasim.course.elections import (
    check_elr_saves,
    check_kraft_election,
    check_zk_election,
    kraft_election,
    zk_election,
)


def test_zk_election_follows_offline_partition_leader_election():
    # PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection (Election.scala):
    # the first live ISR member in assignment order, else (unclean) the first live replica.
    assert zk_election([1, 2, 3], [1], [2, 3], False) == "no leader (offline)"
    assert zk_election([1, 2, 3], [1], [2, 3], True) == "2 (unclean)"
    assert zk_election([1, 2, 3], [1, 3], [2, 3], False) == "3 (clean)"


def test_kraft_ladder_rungs():
    # PartitionChangeBuilderTest: ISR first, then ELR when the ISR is empty
    # (testElectFromElr), the last known leader (testLastKnownLeader...), then unclean.
    assert kraft_election([1, 2, 3], [2, 3], acceptable=[2, 3]) == (2, False)
    assert kraft_election([1, 2, 3], [], elr=[3], acceptable=[2, 3]) == (3, False)
    assert kraft_election([1, 2, 3], [], last_known_elr=[1], acceptable=[1, 2, 3]) == (1, True)
    assert kraft_election([1, 2, 3], [], elr=[3], acceptable=[2]) == (None, False)
    assert kraft_election([1, 2, 3], [], elr=[3], acceptable=[2], unclean=True) == (2, True)
    # KAFKA-19522 (4.1.0): a fenced last known leader is not elected
    assert kraft_election([1, 2, 3], [], last_known_elr=[3], acceptable=[1, 2]) == (None, False)


def test_kraft_election_has_no_last_known_leader_rung_without_elr():
    # canElectLastKnownLeader needs ELR on: off in 4.0 (ELRV_1 bootstraps at 4.1-IV0)
    assert kraft_election([1, 2, 3], [], last_known_elr=[1], acceptable=[1, 2, 3],
                          kafka_version="4.0") == (None, False)


def test_kraft_election_uses_the_builder(monkeypatch):
    calls = []
    real = PartitionChangeBuilder.elect_leader

    def spy(self):
        calls.append(self.partition)
        return real(self)

    monkeypatch.setattr(PartitionChangeBuilder, "elect_leader", spy)
    kraft_election([1, 2, 3], [2], acceptable=[2])
    assert calls and calls[0].isr == (2,)


def test_check_zk_election(capsys):
    assert check_zk_election([3, 1, 2], [1, 2], [2, 3], False, answer=2)
    assert not check_zk_election([3, 1, 2], [1, 2], [2, 3], False, answer=3)
    assert check_zk_election([1, 2, 3], [1], [3], True, answer=3)
    assert check_zk_election([1, 2, 3], [1], [2, 3], False, answer=None)   # offline
    assert not check_zk_election([1, 2, 3], [1], [2, 3], False, answer=...)
    assert "Not answered yet" in capsys.readouterr().out


def test_check_kraft_election():
    assert check_kraft_election([], [2], [], [1, 3], True, "4.1", answer=1)
    assert not check_kraft_election([], [2], [], [1, 3], True, "4.1", answer=2)
    assert check_kraft_election([], [], [3], [1, 2], False, "4.1", answer=None)
    assert not check_kraft_election([], [], [3], [1, 2], False, "4.1", answer=3)


def _cut_in_order(first: int, second: int, loss: str):
    def faults(c):
        c.run(5000)
        c.cut(1, first)
        c.run_until(lambda c: c.isr("payments") == sorted({1, 2, 3} - {first}), 30000)
        c.run(5000)
        c.cut(1, second)
        c.run_until(lambda c: c.isr("payments") == [1], 30000)
        getattr(c, loss)(1)
        c.heal()
        c.run(15000)
        c.start(1)
        c.run(10000)
    return faults


def test_check_elr_saves_passes_when_40_loses_and_41_does_not():
    # Cut broker 2 first: it misses records committed with ISR [1, 3]; broker 3 leaves below min
    # ISR. 4.0 (unclean on) elects broker 2, the first acceptable replica: acked records lost
    # (allowed: unclean). 4.1 elects broker 3 from the ELR cleanly (KIP-966).
    assert check_elr_saves(_cut_in_order(2, 3, "crash"))


def test_check_elr_saves_fails_when_40_loses_nothing():
    # KIP-966's own order (3 then 2) with unclean election on: 4.0 elects broker 2, which has
    # every committed record, so nothing is lost on either version.
    assert not check_elr_saves(_cut_in_order(3, 2, "power_loss"))
    assert not check_elr_saves(lambda c: c.run(5000))


def test_check_elr_saves_needs_a_function():
    assert not check_elr_saves(None)
    assert not check_elr_saves(42)


def test_ladder_view_names_the_rung():
    from kafkasim.course.elections import ladder_view

    assert "elected: 3, from the ELR (clean)" in ladder_view(isr="", elr="3", fenced="1")
    assert "elected: none" in ladder_view(isr="", elr="2", fenced="1,2")
    assert "elected: 1, unclean" in ladder_view(isr="", elr="2", fenced="2", unclean=True)
    assert "last known leader" in ladder_view(isr="", elr="", last_known_elr="3", fenced="1")
    # 4.0: no last-known-leader rung (ELR off)
    assert "elected: none" in ladder_view(isr="", elr="", last_known_elr="3", fenced="1",
                                          kafka_version="4.0")


def test_election_exercises_say_what_a_wrong_answer_missed():
    # exercise 2: replicas [3, 1, 2], ISR [1, 2], live 2 and 3, unclean off -> 2
    ex2 = ([3, 1, 2], [1, 2], [2, 3], False)
    assert "not in the ISR, and a live ISR member exists" in str(check_zk_election(*ex2, answer=3))
    assert "is down" in str(check_zk_election(*ex2, answer=1))
    assert "the first loop elects it" in str(check_zk_election(*ex2, answer=None))
    # a live ISR member later in assignment order: the order is the point
    assert "assignment order" in str(check_zk_election([1, 2, 3], [2, 3], [2, 3], False, answer=3))
    one_isr = ([1, 2, 3], [1])
    assert "nobody outside the ISR" in str(check_zk_election(*one_isr, [2, 3], False, answer=2))
    assert "the second loop elects it" in str(check_zk_election(*one_isr, [3], True, answer=None))
    # exercises 4 and 5: a fenced ELR member, a fenced last known leader
    ex5 = dict(isr=[], elr=[], last_known_elr=[3], acceptable=[1, 2], unclean=False,
               kafka_version="4.1")
    assert "not acceptable" in str(check_kraft_election(**ex5, answer=3))
    assert "KAFKA-19522" in str(check_kraft_election(**ex5, answer=3))
    assert "walk the ladder" in str(check_kraft_election(isr=[], elr=[2], last_known_elr=[],
                                                         acceptable=[1, 3], unclean=True,
                                                         kafka_version="4.1", answer=3))
