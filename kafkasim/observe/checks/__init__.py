"""Invariant checkers: Kafka's replication safety properties, checked after every simulated event.

    >>> from kafkasim.observe.checks import check_all, make_suite, run_checked
    >>> run_checked(c, 5000)                      # run 5 s, raise at the first violation
    >>> suite = make_suite(on_violation="collect")
    >>> c.run(5000, check=suite); suite.violations   # or collect them all
    >>> check_all(c)                               # one full check of the current state

A check is a ``Checker``: calling it with the cluster (``checker(cluster)``) checks the state
*now*, so it plugs straight into ``Cluster.run(..., check=...)``, ``run_to`` and ``run_until``,
which call it after every event. The first violation is kept in ``checker.first`` (invariant,
simulated time, seed, the event that just ran, the brokers / offsets / record ids involved); it
is then raised as ``InvariantViolation`` (an ``AssertionError`` whose message names the seed) or
only collected, as chosen by ``on_violation``. A violation is reported once, not after every
later event.

The invariants (teaching-scenarios.md "Invariants the checkers must implement" and the TLA+
definitions), each documented on its class with its source. They hold in both control planes:
the controller's partition states are ZooKeeper's znodes or, in KRaft, the committed metadata
image (``cluster.kraft.image``); the last three are KRaft-only (no-ops under ZooKeeper):

===============================  ===========================================================
``NoAckedLoss``                  acked records stay at their offset on the current leader
``HwBelowIsrLeo``                a leader never sets its HW above the LEO of a committed-ISR
                                 member
``ConsistentRead``               reads stay below the served HW; an offset never reads two ways
``MonotoneLeaderHw``             a leader's HW never goes down while it stays leader
``LeaderInIsr``                  leader is none or a member of the ISR (both views)
``LogMatching``                  two live replicas agree (id and epoch) below min(their HWs)
``HwWithinLog``                  structural: log start <= HW <= LEO on every replica
``WeakIsr``                      a leader's cached ISR holds its records below its HW
``StrongIsr``                    the controller's ISR holds every leader's records below its HW
``LeaderCandidateCompleteness``  running members of the controller's ISR have LEO >= true_hw
``ValidHighWatermark``           the controller's ISR has LEO >= the controller leader's HW
``MonotoneTrueHw``               what the leader computes its HW from reaches true_hw
``ElrCompleteness``              KRaft: committed-ELR members hold every committed record
``LeaderFromIsrOrElr``           KRaft: a new leader comes from the previous ISR or ELR,
                                 unless the change is an unclean election (RECOVERING)
``RaftSafety``                   KRaft: the metadata quorum obeys Raft safety
===============================  ===========================================================

One module per invariant (``no_acked_loss``, ``log_matching``...); the shadow state in
``ghost``; the base class, registry and API in ``base``.

Checks are registered by name (``@register``, ``CHECKS``); the checks of one ``CheckSuite``
share a ``Ghost`` that follows the run once per event from the trace (acked records and who
held them, consumed records, truncations, power losses, the controller's partition states, the
monotone ``true_hw``). "Loss the configuration legitimately allows" is classified, not raised:
it is recorded in ``checker.allowed`` with ``allowed_because`` naming the reason --

- an unclean leader election (``LOSS_RULES``): for what was acked or read before it;
- power loss: an acked record is allowed to vanish when every replica that held it (when it
  was acked, or that replicated it later) lost power since, one of them losing it from its
  unflushed log (KIP-101 scenario 2: "every replica crashed at once"); a replica whose log a
  power loss cut may lack offsets at or above the cut (the lossy restart of the last in-sync
  replicas, KIP-966);
- acks=1: a record acknowledged by a leader that has since lost leadership.

LogMatching is never excused by a power loss (KIP-101 scenario 2 must still flag divergence).
``attach(cluster)`` runs a suite after every event however the simulation advances;
``classify_losses`` explains a list of lost acked records (the scenario report's
``allowed_losses``).

Checks are incremental, so checking after every event stays cheap: a log range already compared
is compared again only when the trace shows a truncation, a log shrank or changed identity, or
the leader changed. State edited by hand (tests, notebooks) is not in the trace: a checker
called when no event ran since its previous call, ``check_now(cluster)`` and ``check_all``
re-check everything.
"""

from __future__ import annotations

from kafkasim.observe.checks.base import (
    CHECKS,
    Checker,
    CheckSuite,
    InvariantViolation,
    Violation,
    attach,
    check_all,
    classify_losses,
    detach,
    make_suite,
    register,
    run_checked,
    suite_for,
)
from kafkasim.observe.checks.ghost import LOSS_RULES, Ghost, acked_loss_reasons, describe_event

# isort: off
# Importing a checker's module registers it: this order is ``CHECKS``' order, the order in which a
# suite runs its checks and reports what they find.
from kafkasim.observe.checks.no_acked_loss import NoAckedLoss
from kafkasim.observe.checks.hw_below_isr_leo import HwBelowIsrLeo
from kafkasim.observe.checks.consistent_read import ConsistentRead
from kafkasim.observe.checks.monotone_leader_hw import MonotoneLeaderHw
from kafkasim.observe.checks.leader_in_isr import LeaderInIsr
from kafkasim.observe.checks.log_matching import LogMatching
from kafkasim.observe.checks.hw_within_log import HwWithinLog
from kafkasim.observe.checks.weak_isr import WeakIsr
from kafkasim.observe.checks.strong_isr import StrongIsr
from kafkasim.observe.checks.leader_candidate_completeness import LeaderCandidateCompleteness
from kafkasim.observe.checks.valid_high_watermark import ValidHighWatermark
from kafkasim.observe.checks.monotone_true_hw import MonotoneTrueHw
from kafkasim.observe.checks.elr_completeness import ElrCompleteness
from kafkasim.observe.checks.leader_from_isr_or_elr import LeaderFromIsrOrElr
from kafkasim.observe.checks.raft_safety import RaftSafety
# isort: on

__all__ = [
    "CHECKS",
    "LOSS_RULES",
    "CheckSuite",
    "Checker",
    "ConsistentRead",
    "ElrCompleteness",
    "Ghost",
    "HwBelowIsrLeo",
    "HwWithinLog",
    "InvariantViolation",
    "LeaderCandidateCompleteness",
    "LeaderFromIsrOrElr",
    "LeaderInIsr",
    "LogMatching",
    "MonotoneLeaderHw",
    "MonotoneTrueHw",
    "NoAckedLoss",
    "RaftSafety",
    "StrongIsr",
    "ValidHighWatermark",
    "Violation",
    "WeakIsr",
    "acked_loss_reasons",
    "attach",
    "check_all",
    "classify_losses",
    "describe_event",
    "detach",
    "make_suite",
    "register",
    "run_checked",
    "suite_for",
]
