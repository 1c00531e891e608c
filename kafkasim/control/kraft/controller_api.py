"""What QuorumController's Kafka-named operations return, and how the network's requests get
their answers from them.

Kafka's ``QuorumController`` (org.apache.kafka.controller.Controller) answers every operation
with a ``CompletableFuture`` that completes once the records the operation wrote are committed
(the deferred event queue's ``completeUpTo``), or at once when it wrote nothing, and fails with
the operation's ``ApiException`` (or NOT_CONTROLLER when the controller renounces first).
:class:`ControllerFuture` is that future in simulated time: ``get()`` of a future that is not
done yet raises, because nothing else would ever complete it -- run the clock (the Raft client
commits) first.

The broker's BrokerRegistration, BrokerHeartbeat and AlterPartition requests reach the same
operations through ``QuorumController.handle``; the ``answer_*`` functions turn a completed
future into the response message sent back. ``ConfigResourceExistenceChecker`` is
QuorumController's inner class of that name (incrementalAlterConfigs refuses an unknown broker
or topic).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from kafkasim.control.kraft.cluster_control import (
    BrokerIdNotRegisteredException,
    InvalidRequestException,
    NotControllerException,
    UnknownTopicOrPartitionException,
)
from kafkasim.core import errors as E
from kafkasim.core.messages import (
    AlterPartitionResponse,
    BrokerHeartbeatResponse,
    BrokerRegistrationResponse,
)
from kafkasim.settings.javautil import java_parse_int

_PENDING = object()


class ControllerFuture:
    """A ``CompletableFuture`` of a controller operation. ``callback(value, exception)`` runs
    once, when the future completes (at once if it already has)."""

    __slots__ = ("_value", "_exception", "_callbacks")

    def __init__(self, callback: Callable[[object, Exception | None], None] | None = None
                 ) -> None:
        self._value = _PENDING
        self._exception: Exception | None = None
        self._callbacks: list = [] if callback is None else [callback]

    def done(self) -> bool:
        """isDone: completed, normally or exceptionally."""
        return self._value is not _PENDING or self._exception is not None

    def completed_exceptionally(self) -> bool:
        return self._exception is not None

    def get(self):
        """The value; the operation's exception if it failed. A future not completed yet
        raises RuntimeError: its records are not committed (advance the simulated clock)."""
        if self._exception is not None:
            raise self._exception
        if self._value is _PENDING:
            raise RuntimeError("the controller operation is not complete: its records are not "
                               "committed yet (run the clock until the Raft high watermark "
                               "passes them)")
        return self._value

    def exception(self) -> Exception | None:
        return self._exception

    def complete(self, value) -> None:
        if not self.done():
            self._value = value
            self._run_callbacks()

    def complete_exceptionally(self, exception: Exception) -> None:
        if not self.done():
            self._exception = exception
            self._run_callbacks()

    def when_complete(self, callback: Callable[[object, Exception | None], None]) -> None:
        self._callbacks.append(callback)
        if self.done():
            self._run_callbacks()

    def _run_callbacks(self) -> None:
        callbacks, self._callbacks = self._callbacks, []
        value = None if self._value is _PENDING else self._value
        for callback in callbacks:
            callback(value, self._exception)


def not_controller() -> NotControllerException:
    return NotControllerException("This controller is not the active controller.")


# -- the network's answers --------------------------------------------------------------------
def answer_registration(ctx, dst, request, reply, exception) -> None:
    """The BrokerRegistrationResponse of a completed ``registerBroker``."""
    if exception is None:
        ctx.send(dst, BrokerRegistrationResponse(E.NONE, reply.epoch, request.correlation_id))
        return
    message = "" if isinstance(exception, NotControllerException) else str(exception)
    ctx.send(dst, BrokerRegistrationResponse(_error(exception), -1, request.correlation_id,
                                             message))


def answer_heartbeat(ctx, dst, request, reply, exception) -> None:
    """The BrokerHeartbeatResponse of a completed ``processBrokerHeartbeat`` (an error answers
    fenced, not caught up)."""
    if exception is None:
        ctx.send(dst, BrokerHeartbeatResponse(E.NONE, reply.is_caught_up, reply.is_fenced,
                                              reply.should_shut_down, request.correlation_id))
        return
    ctx.send(dst, BrokerHeartbeatResponse(_error(exception), False, True, False,
                                          request.correlation_id))


def answer_alter_partition(ctx, dst, request, response, exception) -> None:
    """The AlterPartitionResponse of a completed ``alterPartition``."""
    if exception is None:
        ctx.send(dst, response)
        return
    ctx.send(dst, AlterPartitionResponse(_error(exception), (), request.correlation_id))


def _error(exception: Exception) -> str:
    error = getattr(exception, "error", None)
    if error is None:
        raise exception
    return error


# -- QuorumController.ConfigResourceExistenceChecker -------------------------------------------
class ConfigResourceExistenceChecker:
    """``accept(resource)`` raises unless the config resource exists: the cluster-level BROKER
    resource "" always does; a BROKER resource must name a registered broker or a controller
    (``controller_ids``); a TOPIC resource an existing topic."""

    __slots__ = ("cluster_control", "replication_control", "controller_ids")

    def __init__(self, cluster_control, replication_control,
                 controller_ids: Iterable[int] = ()) -> None:
        self.cluster_control = cluster_control
        self.replication_control = replication_control
        self.controller_ids = frozenset(controller_ids)

    def __call__(self, resource) -> None:
        self.accept(resource)

    def accept(self, resource) -> None:
        rtype, name = resource
        if rtype == "BROKER":
            if name == "":
                return
            try:
                node_id = java_parse_int(name)
            except ValueError:
                raise InvalidRequestException(f"Invalid broker name {name}") from None
            if node_id not in self.cluster_control.broker_registrations and \
                    node_id not in self.controller_ids:
                raise BrokerIdNotRegisteredException(f"No node with id {node_id} found.")
        elif rtype == "TOPIC" and self.replication_control.topic_id(name) is None:
            raise UnknownTopicOrPartitionException(f"The topic '{name}' does not exist.")
