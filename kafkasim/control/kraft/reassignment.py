"""Partition reassignment on the KRaft controller (KIP-455 as KIP-631's controller runs it, 3.0+).

Follows org.apache.kafka.controller.PartitionReassignmentReplicas and PartitionReassignmentRevert
(metadata module, 3.7.0 and trunk; the same rules since 3.0) and the request and response data
of AlterPartitionReassignments / ListPartitionReassignments that
``ReplicationControlManager.alter_partition_reassignments`` and
``list_partition_reassignments`` take and give.

A reassignment goes through two PartitionChangeRecords: the first puts the target replicas in
front of the replica list, followed by the replicas being removed, and sets ``adding_replicas``
/ ``removing_replicas``; once the ISR holds every adding replica (4.3.0+, KAFKA-19975; every
target replica when more are removed than added, and before 4.3.0 always) and at least one
replica that stays, ``PartitionChangeBuilder`` writes the second, which drops the
removing replicas from the replicas and the ISR and clears both lists (``maybe_complete
_reassignment``). Cancelling reverts to the replicas before the reassignment
(``PartitionReassignmentRevert``).

Kafka's accessor methods (``removing()``, ``replicas()``, ``unclean()``, ...) are plain fields
here. JBOD directories (``PartitionAssignment.directories``) are not modelled.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from kafkasim.control.kraft.cluster_control import ControllerApiException
from kafkasim.core import errors as E

NO_REASSIGNMENT_IN_PROGRESS = E.NO_REASSIGNMENT_IN_PROGRESS
#: the default message of Errors.NO_REASSIGNMENT_IN_PROGRESS
NO_REASSIGNMENT_IN_PROGRESS_MESSAGE = "No partition reassignment is in progress."


class InvalidReplicaAssignmentException(ControllerApiException):
    """org.apache.kafka.common.errors.InvalidReplicaAssignmentException."""

    error = E.INVALID_REPLICA_ASSIGNMENT


class UnknownTopicOrPartitionException(ControllerApiException):
    """org.apache.kafka.common.errors.UnknownTopicOrPartitionException."""

    error = E.UNKNOWN_TOPIC_OR_PARTITION


class InvalidReplicationFactorException(ControllerApiException):
    """org.apache.kafka.common.errors.InvalidReplicationFactorException, as
    ReplicationControlManager.validatePartitionReplicationFactorUnchanged throws it."""

    error = E.INVALID_REPLICATION_FACTOR


class NoReassignmentInProgressException(ControllerApiException):
    """org.apache.kafka.common.errors.NoReassignmentInProgressException."""

    error = NO_REASSIGNMENT_IN_PROGRESS

    def __init__(self, message: str = NO_REASSIGNMENT_IN_PROGRESS_MESSAGE) -> None:
        super().__init__(message)


class PartitionAssignment(NamedTuple):
    """org.apache.kafka.metadata.placement.PartitionAssignment without its directories."""

    replicas: tuple[int, ...]


def _replicas_of(assignment) -> list[int]:
    """A PartitionAssignment's replicas, or the list itself."""
    return list(getattr(assignment, "replicas", assignment))


class CompletedReassignment(NamedTuple):
    """PartitionReassignmentReplicas.CompletedReassignment."""

    replicas: list[int]
    isr: list[int]


def is_reassignment_in_progress(part) -> bool:
    """The static PartitionReassignmentReplicas.isReassignmentInProgress(PartitionRegistration):
    some replica is being added or removed."""
    return bool(part.removing_replicas or part.adding_replicas)


class PartitionReassignmentReplicas:
    """org.apache.kafka.controller.PartitionReassignmentReplicas. Kafka's two constructors:
    ``(removing, adding, replicas)`` of a reassignment in progress, or ``(current, target)``
    assignments (PartitionAssignment or replica lists): removing = current - target and adding
    = target - current, both sorted (Kafka's TreeSet), and replicas = target + removing."""

    __slots__ = ("removing", "adding", "replicas")

    def __init__(self, removing_or_current, adding_or_target, replicas=None) -> None:
        if replicas is not None:
            self.removing = list(removing_or_current)
            self.adding = list(adding_or_target)
            self.replicas = list(replicas)
            return
        current = _replicas_of(removing_or_current)
        target = _replicas_of(adding_or_target)
        self.removing = sorted(set(current) - set(target))
        self.adding = sorted(set(target) - set(current))
        self.replicas = target + self.removing

    def is_reassignment_in_progress(self) -> bool:
        return bool(self.removing or self.adding)

    def maybe_complete_reassignment(self, target_isr: Iterable[int], *,
                                    wait_for_adding_only: bool = True
                                    ) -> CompletedReassignment | None:
        """maybeCompleteReassignment: the replicas and ISR without the removing replicas, or
        None while the reassignment must wait (or when there is none). It waits while the ISR
        without the removing replicas is empty, and (4.3.0+, KAFKA-19975) until every adding
        replica is in it, and until every target replica is in it only when the reassignment
        removes more replicas than it adds. ``wait_for_adding_only=False`` is Kafka before
        4.3.0: every target replica must be in the ISR (an out-of-sync replica the
        reassignment keeps blocks it)."""
        if not self.is_reassignment_in_progress():
            return None
        new_isr = list(target_isr)
        new_replicas = list(self.replicas)
        if self.removing:
            new_isr = [r for r in new_isr if r not in self.removing]
            if not new_isr:
                return None
            new_replicas = [r for r in new_replicas if r not in self.removing]
            if not new_replicas:
                return None
        must_be_in_isr = new_replicas
        if wait_for_adding_only and len(self.adding) >= len(self.removing):
            must_be_in_isr = self.adding
        if not set(must_be_in_isr) <= set(new_isr):
            return None
        return CompletedReassignment(new_replicas, new_isr)

    def original_replicas(self) -> list[int]:
        """originalReplicas: the replicas without the adding ones."""
        return [r for r in self.replicas if r not in self.adding]

    def __eq__(self, other) -> bool:
        if not isinstance(other, PartitionReassignmentReplicas):
            return NotImplemented
        return (self.removing, self.adding, self.replicas) == \
            (other.removing, other.adding, other.replicas)

    __hash__ = None  # mutable lists, as Kafka's (its hashCode is never used as a key)

    def __repr__(self) -> str:
        return (f"PartitionReassignmentReplicas(removing={self.removing}, "
                f"adding={self.adding}, replicas={self.replicas})")


class PartitionReassignmentRevert:
    """org.apache.kafka.controller.PartitionReassignmentRevert: the replicas and ISR after
    cancelling the reassignment of ``registration``: the adding replicas leave both. If no ISR
    member is left, the first original replica is the ISR and the revert is ``unclean`` (the
    caller refuses it unless unclean.leader.election.enable is on for the topic)."""

    __slots__ = ("replicas", "isr", "unclean")

    def __init__(self, registration) -> None:
        ongoing = PartitionReassignmentReplicas(registration.removing_replicas,
                                                registration.adding_replicas,
                                                registration.replicas)
        self.replicas = ongoing.original_replicas()
        self.isr = [r for r in registration.isr if r not in ongoing.adding]
        self.unclean = False
        if not self.isr:
            if not self.replicas:
                raise InvalidReplicaAssignmentException(
                    "Invalid replica assignment: addingReplicas contains all replicas.")
            self.isr = [self.replicas[0]]
            self.unclean = True

    def __eq__(self, other) -> bool:
        if not isinstance(other, PartitionReassignmentRevert):
            return NotImplemented
        return (self.replicas, self.isr, self.unclean) == \
            (other.replicas, other.isr, other.unclean)

    __hash__ = None

    def __repr__(self) -> str:
        return (f"PartitionReassignmentRevert(replicas={self.replicas}, isr={self.isr}, "
                f"unclean={str(self.unclean).lower()})")


# -- request and response data --------------------------------------------------------------
class ReassignablePartition(NamedTuple):
    """AlterPartitionReassignmentsRequestData.ReassignablePartition: ``replicas`` None cancels."""

    partition_index: int
    replicas: tuple[int, ...] | None = None


class ReassignableTopic(NamedTuple):
    """AlterPartitionReassignmentsRequestData.ReassignableTopic."""

    name: str
    partitions: tuple = ()


class ReassignablePartitionResponse(NamedTuple):
    """AlterPartitionReassignmentsResponseData.ReassignablePartitionResponse."""

    partition_index: int
    error: str = E.NONE
    error_message: str | None = None


class ReassignableTopicResponse(NamedTuple):
    name: str
    partitions: tuple[ReassignablePartitionResponse, ...] = ()


class AlterPartitionReassignmentsResponse(NamedTuple):
    """AlterPartitionReassignmentsResponseData (top-level error NONE, message null).
    ``allow_replication_factor_change`` echoes the request's (KIP-860, response v1 in 4.1;
    true, the field's default, for older requests)."""

    responses: tuple[ReassignableTopicResponse, ...] = ()
    error: str = E.NONE
    error_message: str | None = None
    allow_replication_factor_change: bool = True


class OngoingPartitionReassignment(NamedTuple):
    """ListPartitionReassignmentsResponseData.OngoingPartitionReassignment."""

    partition_index: int
    replicas: tuple[int, ...]
    adding_replicas: tuple[int, ...]
    removing_replicas: tuple[int, ...]


class OngoingTopicReassignment(NamedTuple):
    name: str
    partitions: tuple[OngoingPartitionReassignment, ...] = ()


class ListPartitionReassignmentsResponse(NamedTuple):
    """ListPartitionReassignmentsResponseData: no topics when nothing is being reassigned."""

    topics: tuple[OngoingTopicReassignment, ...] = ()
    error: str = E.NONE
    error_message: str | None = None


def api_error(exc: ControllerApiException) -> tuple[str, str | None]:
    """ApiError.fromThrowable: the error and the exception's message, None when that is the
    error's default message (a NoReassignmentInProgressException as the controller throws it)
    or when the exception has none (Kafka's no-argument constructors leave it null)."""
    message = str(exc)
    if not message:
        return exc.error, None
    if exc.error == NO_REASSIGNMENT_IN_PROGRESS and message == NO_REASSIGNMENT_IN_PROGRESS_MESSAGE:
        return exc.error, None
    return exc.error, message
