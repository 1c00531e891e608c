"""Broker registrations on the KRaft controller:
``org.apache.kafka.controller.ClusterControlManager`` (KIP-631; trunk 1eb7644, with the 3.3-3.8
registration rules kept as options).

Generation never mutates the replicated state, replay does (as in Kafka): ``register_broker``
returns ``(records, reply)``; the registrations change only in ``replay(record, offset)``. The
exception is the heartbeat manager, which is the active controller's soft state: Kafka's
``registerBroker`` and ``processBrokerHeartbeat`` update it while generating, and so do these.

Kafka's clock is replaced by ``now_ms`` arguments (integer ms). The metadata-version gates
(``MetadataVersion.isBrokerRegistrationChangeRecordSupported`` = 3.3-IV2,
``isInControlledShutdownStateSupported`` = 3.3-IV3) are plain booleans here, or read from a
``metadata_version`` object having those predicates.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import NamedTuple

from kafkasim.control.kraft.broker_heartbeat import (
    BrokerControlState,
    BrokerHeartbeatManager,
    BrokerIdAndEpoch,
    IllegalStateException,
)
from kafkasim.control.kraft.periodic_tasks import ControllerResult
from kafkasim.control.kraft.records import (
    BrokerRegistration,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    ControllerRegistration,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    RegisterControllerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
    UnregisterControllerRecord,
)
from kafkasim.control.kraft.striped_placer import StripedReplicaPlacer, UsableBroker
from kafkasim.core import errors
from kafkasim.settings.javautil import (
    JavaRandom,
    java_hashmap_iteration_order,
    java_string_hash,
)

DEFAULT_SESSION_TIMEOUT_MS = 9000   # ClusterControlManager.DEFAULT_SESSION_TIMEOUT_NS (9 s)


class ControllerApiException(Exception):
    """A Kafka ``ApiException`` the controller answers with; ``error`` is the Errors name."""

    error = errors.NONE


class DuplicateBrokerRegistrationException(ControllerApiException):
    error = errors.DUPLICATE_BROKER_REGISTRATION


#: registerBroker's message for a second incarnation while the first one's session lives
DUPLICATE_REGISTRATION_MESSAGE = "Another broker is registered with that broker id."
#: 4.1+ (KAFKA-19047, rule ``duplicate_registration_message_names_session_expiry``)
DUPLICATE_REGISTRATION_MESSAGE_4_1 = (
    DUPLICATE_REGISTRATION_MESSAGE + " If the broker was recently restarted this should "
    "self-resolve once the heartbeat manager expires the broker's session.")


class StaleBrokerEpochException(ControllerApiException):
    error = errors.STALE_BROKER_EPOCH


class BrokerIdNotRegisteredException(ControllerApiException):
    error = errors.BROKER_ID_NOT_REGISTERED


class NotControllerException(ControllerApiException):
    """The request reached a controller that is not (or no longer) the active one
    (ControllerExceptions.newWrongControllerException)."""

    error = errors.NOT_CONTROLLER


class UnknownTopicOrPartitionException(ControllerApiException):
    error = errors.UNKNOWN_TOPIC_OR_PARTITION


class InvalidRequestException(ControllerApiException):
    error = errors.INVALID_REQUEST


class UnsupportedVersionException(ControllerApiException):
    error = errors.UNSUPPORTED_VERSION


class InvalidRegistrationException(ControllerApiException):
    error = "INVALID_REGISTRATION"      # Errors.INVALID_REGISTRATION (KIP-858, 3.7)


class ControllerIdNotRegisteredException(ControllerApiException):
    """``ControllerIdNotRegisteredException`` (KIP-1312, 4.4): unregistering an unknown
    controller."""

    error = errors.CONTROLLER_ID_NOT_REGISTERED


def process_registration_feature(broker_id: int, finalized: dict, name: str, min_supported: int,
                                 max_supported: int) -> None:
    """``ClusterControlManager.processRegistrationFeature``: the broker's supported range of a
    feature must contain the finalized level (metadata.version must be finalized; any other
    feature defaults to 0), else UnsupportedVersionException."""
    if name == "metadata.version":
        if name not in finalized:
            raise ValueError(f"Feature with name 'metadata.version' not found in "
                             f"finalizedFeatures {finalized}")
        level = finalized[name]
    else:
        level = finalized.get(name, 0)
    if not min_supported <= level <= max_supported:
        raise UnsupportedVersionException(
            f"Unable to register because the broker does not support finalized version {level} "
            f"of {name}. The broker wants a version between {min_supported} and "
            f"{max_supported}, inclusive.")


def check_registration_features(broker_id: int, features, finalized_features) -> None:
    """registerBroker's feature checks (4.x): every feature the request lists (name, min, max)
    must cover its finalized level; the request must list metadata.version
    (InvalidRegistrationException); every finalized feature above 0 that it does not list
    counts as supported in [0, 0] (checked in Java HashMap order of the names).
    ``finalized_features``: a FinalizedControllerFeatures or a name -> level dict."""
    finalized = dict(getattr(finalized_features, "feature_map", finalized_features))
    unverified = dict(finalized)
    for name, low, high in features:
        process_registration_feature(broker_id, finalized, name, low, high)
        unverified.pop(name, None)
    if not any(name == "metadata.version" for name, _low, _high in features):
        raise InvalidRegistrationException("Request features do not contain 'metadata.version'")
    for name in java_hashmap_iteration_order(list(unverified), java_string_hash):
        if unverified[name] != 0:
            process_registration_feature(broker_id, finalized, name, 0, 0)


class RegistrationRules:
    """Which ``ClusterControlManager.registerBroker`` rules apply (they changed three times):

    - ``V3_3`` (3.3.0-3.7.x): every registration gets the new broker epoch and a fenced
      record; no unclean-shutdown handling (3.7 only logs a KIP-966 TODO).
    - ``V3_8`` (3.8.x, KAFKA-15586, KIP-966): the BrokerUncleanShutdownHandler runs when the
      request is older than v2, the broker is unknown, or its PreviousBrokerEpoch (from the
      ``.kafka_cleanshutdown`` file) differs from the registered epoch; a re-registration of
      the same incarnation keeps fenced / in-controlled-shutdown but still gets a new epoch.
    - ``V3_9`` (3.9.x and trunk 1eb7644, KAFKA-16952): the handler runs iff the incarnation
      id is new; the same incarnation amends its registration and keeps its broker epoch.
    - ``V4_0`` (4.0+, KAFKA-18106 #18045, KAFKA-18635 #18277): as 3.9, but a new incarnation
      runs the BrokerShutdownHandler (``ReplicationControlManager.handleBrokerShutdown``)
      with ``isCleanShutdown`` = its PreviousBrokerEpoch equals the registered epoch: an
      unclean restart leaves every ISR and ELR while ELR is on; a clean one, or any restart
      with ELR off, leaves the ISRs as a fenced broker does.
    """

    V3_3 = "3.3"
    V3_8 = "3.8"
    V3_9 = "3.9"
    V4_0 = "4.0"
    ALL = (V3_3, V3_8, V3_9, V4_0)


@dataclass(frozen=True, slots=True)
class BrokerRegistrationReply:
    """``BrokerRegistrationReply`` (+ ``unclean_shutdown``: whether the broker
    unclean-shutdown handler ran for this registration, KIP-966)."""

    epoch: int
    unclean_shutdown: bool = False


@dataclass(frozen=True, slots=True)
class BrokerHeartbeatReply:
    """``BrokerHeartbeatReply``: caught up with its registration record, fenced, in
    controlled shutdown, should shut down."""

    is_caught_up: bool
    is_fenced: bool
    in_controlled_shutdown: bool
    should_shut_down: bool


# -- record helpers (ReplicationControlManager.handleBroker*, the registration part) ----------
def fence_broker_record(broker_id: int, broker_epoch: int, *,
                        registration_change_record_supported: bool = True):
    """The record ``ReplicationControlManager.handleBrokerFenced`` ends with:
    BrokerRegistrationChangeRecord(fenced=FENCE) from metadata.version 3.3-IV2
    (``isBrokerRegistrationChangeRecordSupported``), FenceBrokerRecord before."""
    if registration_change_record_supported:
        return BrokerRegistrationChangeRecord(broker_id, broker_epoch,
                                              fenced=BrokerRegistrationFencingChange.FENCE)
    return FenceBrokerRecord(broker_id, broker_epoch)


def unfence_broker_record(broker_id: int, broker_epoch: int, *,
                          registration_change_record_supported: bool = True):
    """The record ``handleBrokerUnfenced`` starts with: BrokerRegistrationChangeRecord(fenced=
    UNFENCE) from 3.3-IV2, UnfenceBrokerRecord before."""
    if registration_change_record_supported:
        return BrokerRegistrationChangeRecord(broker_id, broker_epoch,
                                              fenced=BrokerRegistrationFencingChange.UNFENCE)
    return UnfenceBrokerRecord(broker_id, broker_epoch)


def controlled_shutdown_records(broker_id: int, broker_epoch: int, *,
                                in_controlled_shutdown_supported: bool = True,
                                already_in_controlled_shutdown: bool = False) -> list:
    """The record ``handleBrokerInControlledShutdown`` starts with:
    BrokerRegistrationChangeRecord(inControlledShutdown=1) from metadata.version 3.3-IV3
    (``isInControlledShutdownStateSupported``) unless the registration already says so;
    nothing before 3.3-IV3."""
    if not in_controlled_shutdown_supported or already_in_controlled_shutdown:
        return []
    return [BrokerRegistrationChangeRecord(
        broker_id, broker_epoch,
        in_controlled_shutdown=BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN)]


def unregister_broker_record(broker_id: int, broker_epoch: int) -> UnregisterBrokerRecord:
    """The record ``handleBrokerUnregistered`` ends with."""
    return UnregisterBrokerRecord(broker_id, broker_epoch)


_FENCING = {BrokerRegistrationFencingChange.FENCE: True,
            BrokerRegistrationFencingChange.UNFENCE: False,
            BrokerRegistrationFencingChange.NONE: None}
_IN_CONTROLLED_SHUTDOWN = {
    BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN: True,
    BrokerRegistrationInControlledShutdownChange.NONE: None}


class ClusterControlManager:
    """``org.apache.kafka.controller.ClusterControlManager``.

    The heartbeat manager exists only while this controller is active (``activate`` /
    ``deactivate``, as QuorumController does on claiming / renouncing leadership); pass
    ``active=True`` to start active. ``broker_unclean_shutdown_handler(broker_id) -> records``
    is Kafka's BrokerUncleanShutdownHandler (ReplicationControlManager
    .handleBrokerUncleanShutdown: leave every ISR and ELR; it does nothing below
    metadata.version 4.0-IV1). ``placer_random`` seeds the StripedReplicaPlacer (Kafka: ``new
    Random()``) unless a ``replica_placer`` is given. ``heartbeat_options`` are the
    BrokerHeartbeatManager's version rules (see there); ``registration_rules`` the
    registerBroker rules (RegistrationRules).
    """

    def __init__(self, *, session_timeout_ms: int = DEFAULT_SESSION_TIMEOUT_MS,
                 metadata_version=None, placer_random: JavaRandom | None = None,
                 replica_placer: StripedReplicaPlacer | None = None,
                 broker_unclean_shutdown_handler: Callable[[int], list] | None = None,
                 broker_shutdown_handler: Callable[[int, bool], list] | None = None,
                 registration_rules: str = RegistrationRules.V3_9,
                 registration_change_record_supported: bool | None = None,
                 in_controlled_shutdown_supported: bool | None = None,
                 heartbeat_options: dict | None = None,
                 activate_tracks_fenced: bool = False,
                 duplicate_registration_names_session_expiry: bool = False,
                 active: bool = False, now_ms: int = 0) -> None:
        if registration_rules not in RegistrationRules.ALL:
            raise ValueError(f"registration_rules must be one of {RegistrationRules.ALL}, "
                             f"got {registration_rules!r}")
        if replica_placer is None:
            if placer_random is None:
                raise ValueError("ClusterControlManager needs placer_random (a seeded "
                                 "JavaRandom; Kafka uses new Random()) or a replica_placer")
            replica_placer = StripedReplicaPlacer(placer_random)
        self.session_timeout_ms = session_timeout_ms
        self.heartbeat_options = dict(heartbeat_options or {})
        # 4.0 (KAFKA-18138): activate() starts a session for every registered broker, fenced
        # ones too; 4.1 (KAFKA-19130): for unfenced brokers only. Heartbeat tracker only.
        self.activate_tracks_fenced = activate_tracks_fenced
        # 4.1+ (KAFKA-19047): the duplicate-registration message says it resolves itself once
        # the old session expires (only the message: the refusal is the same in every release)
        self.duplicate_registration_message = DUPLICATE_REGISTRATION_MESSAGE_4_1 \
            if duplicate_registration_names_session_expiry else DUPLICATE_REGISTRATION_MESSAGE
        self.replica_placer = replica_placer
        self.broker_unclean_shutdown_handler = broker_unclean_shutdown_handler
        self.broker_shutdown_handler = broker_shutdown_handler
        self.registration_rules = registration_rules
        self.registration_change_record_supported = _gate(
            registration_change_record_supported, metadata_version,
            "is_broker_registration_change_record_supported", "3.3-IV2")
        self.in_controlled_shutdown_supported = _gate(
            in_controlled_shutdown_supported, metadata_version,
            "is_in_controlled_shutdown_state_supported", "3.3-IV3")
        self.metadata_version = metadata_version
        self.broker_registrations: dict[int, BrokerRegistration] = {}
        # controllerRegistrations (KIP-919): kafkasim's controllers send no
        # ControllerRegistrationRequest, so only replayed records fill it
        self.controller_registrations: dict[int, ControllerRegistration] = {}
        self._register_broker_record_offsets: dict[int, int] = {}
        self._heartbeat_manager: BrokerHeartbeatManager | None = None
        self._now_ms = now_ms
        if active:
            self.activate(now_ms)

    # -- active / standby ---------------------------------------------------------------------
    def activate(self, now_ms: int | None = None) -> None:
        """``activate``: a fresh heartbeat manager registering every known broker (so every
        unfenced broker gets a full session from now)."""
        now = self._clock(now_ms)
        hb = self._heartbeat_manager = BrokerHeartbeatManager(self.session_timeout_ms,
                                                              **self.heartbeat_options)
        for registration in self.broker_registrations.values():
            hb.register(registration.id, registration.fenced, now)
            if hb.tracker is not None and (self.activate_tracks_fenced or
                                           not registration.fenced):
                hb.tracker.update_contact_time(
                    BrokerIdAndEpoch(registration.id, registration.epoch), now)

    def deactivate(self) -> None:
        self._heartbeat_manager = None

    def is_active_controller(self) -> bool:
        return self._heartbeat_manager is not None

    @property
    def heartbeat_manager(self) -> BrokerHeartbeatManager:
        """``heartbeatManager()``: only on the active controller."""
        if self._heartbeat_manager is None:
            raise RuntimeError("ClusterControlManager is not active.")
        return self._heartbeat_manager

    def _clock(self, now_ms: int | None) -> int:
        if now_ms is not None:
            if now_ms < self._now_ms:
                raise ValueError(f"time went backwards: now_ms {now_ms} < {self._now_ms}")
            self._now_ms = now_ms
        return self._now_ms

    # -- registration ------------------------------------------------------------------------
    def register_broker(self, broker_id: int, incarnation_id: str, rack: str | None = None,
                        previous_broker_epoch: int = -1, new_record_offset: int = 0,
                        now_ms: int | None = None,
                        clean_shutdown_detection_enabled: bool = True, *,
                        features=None, finalized_features=None):
        """``registerBroker``: ``(records, BrokerRegistrationReply)``.

        ``new_record_offset`` is the new broker epoch: QuorumController passes
        ``offsetControl.nextWriteOffset()``, the offset of the first record this call returns
        (the RegisterBrokerRecord is last, after any unclean-shutdown records).
        ``previous_broker_epoch`` is BrokerRegistrationRequest v2's PreviousBrokerEpoch (-1
        when the broker found no clean-shutdown file); ``clean_shutdown_detection_enabled``
        False stands for a request older than v2 (3.8 rules: always unclean).

        Raises DuplicateBrokerRegistrationException ("Another broker is registered with that
        broker id.", 4.1+ with a hint that it resolves once the old session expires) when a
        different incarnation holds a live session -- also when the registered broker is in
        controlled shutdown (KAFKA-19047 let that one in, KAFKA-19130 undid it before 4.1.0).
        ``features`` (the request's (name, min, max) supported ranges) with
        ``finalized_features`` (the controller's FinalizedControllerFeatures) are checked as
        Kafka does
        (:func:`check_registration_features`); None skips the check (kafkasim's brokers
        all run the controller's release)."""
        hb = self.heartbeat_manager
        now = self._clock(now_ms)
        existing = self.broker_registrations.get(broker_id)
        new_incarnation = existing is None or existing.incarnation_id != incarnation_id
        if existing is not None and new_incarnation and \
                hb.has_valid_session(broker_id, now, existing.epoch):
            raise DuplicateBrokerRegistrationException(self.duplicate_registration_message)
        if features is not None:
            check_registration_features(broker_id, features, finalized_features or {})
        records, unclean = self._shutdown_records(broker_id, existing, new_incarnation,
                                                  previous_broker_epoch,
                                                  clean_shutdown_detection_enabled)
        record = RegisterBrokerRecord(broker_id, new_record_offset, incarnation_id, rack)
        rules = self.registration_rules
        if not new_incarnation and rules != RegistrationRules.V3_3:   # amend
            record = replace(record, fenced=existing.fenced,
                             in_controlled_shutdown=existing.in_controlled_shutdown)
            if rules in (RegistrationRules.V3_9, RegistrationRules.V4_0):
                record = replace(record, broker_epoch=existing.epoch)
        records.append(record)
        if new_incarnation:
            hb.remove(broker_id)   # drop any session of the old incarnation
        hb.register(broker_id, record.fenced, now)
        return records, BrokerRegistrationReply(record.broker_epoch, unclean)

    def _shutdown_records(self, broker_id: int, existing, new_incarnation: bool,
                          previous_broker_epoch: int, detection_enabled: bool
                          ) -> tuple[list, bool]:
        """The records the registration's shutdown handling writes before its
        RegisterBrokerRecord, and whether the version judged the restart unclean."""
        rules = self.registration_rules
        if rules == RegistrationRules.V3_3:
            return [], False
        clean = detection_enabled and existing is not None and \
            previous_broker_epoch == existing.epoch
        if rules == RegistrationRules.V3_8:
            unclean = not clean
        else:
            unclean = new_incarnation and (rules == RegistrationRules.V3_9 or not clean)
        if rules == RegistrationRules.V4_0 and new_incarnation and \
                self.broker_shutdown_handler is not None:
            return list(self.broker_shutdown_handler(broker_id, not unclean)), unclean
        if unclean and self.broker_unclean_shutdown_handler is not None:
            return list(self.broker_unclean_shutdown_handler(broker_id)), unclean
        return [], unclean

    def register_broker_record_offset(self, broker_id: int) -> int | None:
        """``registerBrokerRecordOffset``: where the broker's RegisterBrokerRecord was
        replayed (a broker is unfenced once its metadata offset reaches it)."""
        return self._register_broker_record_offsets.get(broker_id)

    def check_broker_epoch(self, broker_id: int, broker_epoch: int) -> None:
        """``checkBrokerEpoch``: StaleBrokerEpochException unless registered with that epoch."""
        registration = self.broker_registrations.get(broker_id)
        if registration is None:
            raise StaleBrokerEpochException(
                f"No broker registration found for broker id {broker_id}")
        if registration.epoch != broker_epoch:
            raise StaleBrokerEpochException(
                f"Expected broker epoch {registration.epoch}, but got broker epoch "
                f"{broker_epoch}")

    # -- controller registrations (KIP-919, 3.7-IV0; unregistration KIP-1312, 4.4-IV2) ---------
    def register_controller(self, request, incarnation_id: str = "", *, listeners=(),
                            features=(), metadata_version=None) -> ControllerResult:
        """``registerController``: one RegisterControllerRecord (atomic), written as asked.
        ``request``: the controller id, or a ControllerRegistrationRequest-like object with
        ``controller_id`` (and optionally ``incarnation_id``, ``listeners``, ``features``).
        ``metadata_version``: the finalized level (default: the one this manager was built
        with; none: the latest)."""
        controller_id = getattr(request, "controller_id", request)
        incarnation_id = getattr(request, "incarnation_id", incarnation_id)
        listeners = getattr(request, "listeners", listeners)
        features = getattr(request, "features", features)
        if not self._metadata_version_supports("is_controller_registration_supported",
                                               metadata_version):
            raise UnsupportedVersionException("The current MetadataVersion is too old to "
                                              "support controller registrations.")
        record = RegisterControllerRecord(controller_id, incarnation_id, False, tuple(listeners),
                                          tuple(features))
        return ControllerResult.atomic_of([record], None)

    def unregister_controller(self, controller_id: int, *,
                              metadata_version=None) -> ControllerResult:
        """``unregisterController`` (ClusterControlManager.java:503@4.4 f86720838c): one
        UnregisterControllerRecord (atomic); UnsupportedVersionException below metadata.version
        4.4-IV2, ControllerIdNotRegisteredException for an id with no registration."""
        if not self._metadata_version_supports("is_controller_unregistration_supported",
                                               metadata_version):
            raise UnsupportedVersionException("The current MetadataVersion is too old to "
                                              "support controller unregistration.")
        if controller_id not in self.controller_registrations:
            raise ControllerIdNotRegisteredException(
                f"Controller ID {controller_id} is not currently registered.")
        return ControllerResult.atomic_of([UnregisterControllerRecord(controller_id)], None)

    def _metadata_version_supports(self, predicate: str, metadata_version) -> bool:
        mv = metadata_version if metadata_version is not None else self.metadata_version
        return True if mv is None else bool(getattr(mv, predicate)())

    # -- replay ---------------------------------------------------------------------------------
    def replay(self, record, offset: int | None = None, now_ms: int | None = None) -> None:
        """Apply a committed (or, on the active controller, just generated) record."""
        if isinstance(record, RegisterBrokerRecord):
            if offset is None:
                raise ValueError("replaying a RegisterBrokerRecord needs its offset")
            self._replay_register(record, offset, now_ms)
        elif isinstance(record, UnregisterBrokerRecord):
            self._replay_unregister(record)
        elif isinstance(record, RegisterControllerRecord):
            self.controller_registrations[record.controller_id] = ControllerRegistration(
                record.controller_id, record.incarnation_id, record.zk_migration_ready,
                record.end_points, record.features)
        elif isinstance(record, UnregisterControllerRecord):
            if self.controller_registrations.pop(record.controller_id, None) is None:
                raise RuntimeError(f"Unable to replay {record}: no controller registration "
                                   "found for that id")
        elif isinstance(record, FenceBrokerRecord):
            self._replay_change(record, record.id, record.epoch, True, None, now_ms)
        elif isinstance(record, UnfenceBrokerRecord):
            self._replay_change(record, record.id, record.epoch, False, None, now_ms)
        elif isinstance(record, BrokerRegistrationChangeRecord):
            if record.fenced not in _FENCING:
                raise IllegalStateException(f"Unable to replay {record}: unknown value for "
                                            f"fenced field: {record.fenced:x}")
            if record.in_controlled_shutdown not in _IN_CONTROLLED_SHUTDOWN:
                raise IllegalStateException(
                    f"Unable to replay {record}: unknown value for inControlledShutdown "
                    f"field: {record.in_controlled_shutdown:x}")
            self._replay_change(record, record.broker_id, record.broker_epoch,
                                _FENCING[record.fenced],
                                _IN_CONTROLLED_SHUTDOWN[record.in_controlled_shutdown], now_ms)
        else:
            raise TypeError(f"ClusterControlManager does not replay {type(record).__name__}")

    def _replay_register(self, record: RegisterBrokerRecord, offset: int,
                         now_ms: int | None) -> None:
        self._register_broker_record_offsets[record.broker_id] = offset
        prev = self.broker_registrations.get(record.broker_id)
        self.broker_registrations[record.broker_id] = BrokerRegistration(
            record.broker_id, record.broker_epoch, record.incarnation_id, record.rack,
            record.fenced, record.in_controlled_shutdown, record.end_points)
        if self._heartbeat_manager is not None:
            if prev is not None:
                self._heartbeat_manager.remove(record.broker_id)
            self._heartbeat_manager.register(record.broker_id, record.fenced,
                                             self._clock(now_ms))

    def _replay_unregister(self, record: UnregisterBrokerRecord) -> None:
        self._register_broker_record_offsets.pop(record.broker_id, None)
        registration = self.broker_registrations.get(record.broker_id)
        if registration is None:
            raise RuntimeError(f"Unable to replay {record}: no broker registration found "
                               "for that id")
        if registration.epoch != record.broker_epoch:
            raise RuntimeError(f"Unable to replay {record}: no broker registration with that "
                               "epoch found")
        if self._heartbeat_manager is not None:
            self._heartbeat_manager.remove(record.broker_id)
        del self.broker_registrations[record.broker_id]

    def _replay_change(self, record, broker_id: int, broker_epoch: int,
                       fenced: bool | None, in_controlled_shutdown: bool | None,
                       now_ms: int | None) -> None:
        """``replayRegistrationChange`` / ``BrokerRegistration.cloneWith``: unfencing does not
        clear in-controlled-shutdown."""
        cur = self.broker_registrations.get(broker_id)
        if cur is None:
            raise RuntimeError(f"Unable to replay {record}: no broker registration found for "
                               "that id")
        if cur.epoch != broker_epoch:
            raise RuntimeError(f"Unable to replay {record}: no broker registration with that "
                               "epoch found")
        nxt = replace(cur,
                      fenced=cur.fenced if fenced is None else fenced,
                      in_controlled_shutdown=cur.in_controlled_shutdown
                      if in_controlled_shutdown is None else in_controlled_shutdown)
        self.broker_registrations[broker_id] = nxt
        if self._heartbeat_manager is not None:
            self._heartbeat_manager.register(broker_id, nxt.fenced, self._clock(now_ms))

    # -- queries --------------------------------------------------------------------------------
    def registration(self, broker_id: int) -> BrokerRegistration | None:
        return self.broker_registrations.get(broker_id)

    def is_unfenced(self, broker_id: int) -> bool:
        """``isUnfenced``: False for an unknown broker."""
        r = self.broker_registrations.get(broker_id)
        return r is not None and not r.fenced

    def in_controlled_shutdown(self, broker_id: int) -> bool:
        r = self.broker_registrations.get(broker_id)
        return r is not None and r.in_controlled_shutdown

    def is_active(self, broker_id: int) -> bool:
        """``isActive``: registered, unfenced and not in controlled shutdown (the leader
        election's "acceptable" broker)."""
        r = self.broker_registrations.get(broker_id)
        return r is not None and not r.fenced and not r.in_controlled_shutdown

    def fenced_broker_ids(self) -> set[int]:
        return {r.id for r in self.broker_registrations.values() if r.fenced}

    def usable_brokers(self) -> list[UsableBroker]:
        """``usableBrokers``: the heartbeat manager's brokers not shutting down, with their
        racks (active controller only)."""
        return self.heartbeat_manager.usable_brokers(
            lambda broker_id: self.broker_registrations[broker_id].rack)

    @property
    def cordoned_dirs_in_messages(self) -> bool:
        """The placer's refusals use 4.3's wording (KIP-1066: brokers whose log directories
        are all cordoned)."""
        return self.replica_placer.cordoned_dirs_in_messages

    def place_replicas(self, start_partition: int, num_partitions: int,
                       num_replicas: int) -> list[list[int]]:
        """``replicaPlacer().place(new PlacementSpec(...), clusterDescriber)`` over the usable
        brokers; raises InvalidReplicationFactorException as Kafka."""
        return self.replica_placer.place(start_partition, num_partitions, num_replicas,
                                         self.usable_brokers())

    # -- record generation for the controller ---------------------------------------------------
    def fence_broker_records(self, broker_id: int) -> list:
        """The registration record of ``handleBrokerFenced`` (the caller adds the ISR
        changes before it, as Kafka does)."""
        registration = self.broker_registrations.get(broker_id)
        if registration is None:
            raise RuntimeError(f"Can't find broker registration for broker {broker_id}")
        return [fence_broker_record(
            broker_id, registration.epoch,
            registration_change_record_supported=self.registration_change_record_supported)]

    def unfence_broker_records(self, broker_id: int, broker_epoch: int) -> list:
        """The registration record of ``handleBrokerUnfenced`` (leaderless partitions are then
        elected by the caller)."""
        return [unfence_broker_record(
            broker_id, broker_epoch,
            registration_change_record_supported=self.registration_change_record_supported)]

    def controlled_shutdown_records(self, broker_id: int, broker_epoch: int) -> list:
        """The registration record of ``handleBrokerInControlledShutdown``, if any."""
        return controlled_shutdown_records(
            broker_id, broker_epoch,
            in_controlled_shutdown_supported=self.in_controlled_shutdown_supported,
            already_in_controlled_shutdown=self.in_controlled_shutdown(broker_id))

    def unregister_broker_records(self, broker_id: int) -> list:
        """``ReplicationControlManager.unregisterBroker``'s final record;
        BrokerIdNotRegisteredException for an unknown broker."""
        registration = self.broker_registrations.get(broker_id)
        if registration is None:
            raise BrokerIdNotRegisteredException(
                f"Broker ID {broker_id} is not currently registered")
        return [unregister_broker_record(broker_id, registration.epoch)]

    def process_broker_heartbeat(
        self, broker_id: int, broker_epoch: int, current_metadata_offset: int, *,
        want_fence: bool = False, want_shut_down: bool = False, now_ms: int | None = None,
        has_leaderships: Callable[[], bool] | bool = False,
        handle_broker_fenced: Callable[[int], list] | None = None,
        handle_broker_unfenced: Callable[[int, int], list] | None = None,
        handle_broker_in_controlled_shutdown: Callable[[int, int], list] | None = None,
        last_committed_offset: int | None = None,
    ):
        """``QuorumController.processBrokerHeartbeat`` + ``ReplicationControlManager
        .processBrokerHeartbeat``: ``(records, BrokerHeartbeatReply)``.

        The ``handle_*`` callbacks are ReplicationControlManager's (ISR / leader changes plus
        the registration record); without them only the registration records are produced.
        The heartbeat manager is touched with the next state's fencing. When the reply says
        ``in_controlled_shutdown``, the caller must call
        ``heartbeat_manager.maybe_update_controlled_shutdown_offset(broker_id, end_offset)``
        with the last offset of the batch these records go into
        (``processBatchEndOffset``). ``last_committed_offset`` is only needed with the
        pre-3.3 unfencing rule (heartbeat option ``unfence_at_register_record_offset=False``)."""
        now = self._clock(now_ms)
        register_offset = self.register_broker_record_offset(broker_id)
        if register_offset is None:
            raise StaleBrokerEpochException(
                f"Receive a heartbeat from broker {broker_id} before registration")
        self.check_broker_epoch(broker_id, broker_epoch)
        hb = self.heartbeat_manager
        states = hb.calculate_next_broker_state(broker_id, want_fence, want_shut_down,
                                                current_metadata_offset, register_offset,
                                                has_leaderships, last_committed_offset)
        records: list = []
        s = BrokerControlState
        if states.current != states.next:
            if states.next in (s.FENCED, s.SHUTDOWN_NOW):
                records = (handle_broker_fenced or self.fence_broker_records)(broker_id)
            elif states.next == s.UNFENCED:
                records = (handle_broker_unfenced or self.unfence_broker_records)(
                    broker_id, broker_epoch)
            elif states.next == s.CONTROLLED_SHUTDOWN:
                records = (handle_broker_in_controlled_shutdown
                           or self.controlled_shutdown_records)(broker_id, broker_epoch)
        hb.touch(broker_id, s.fenced(states.next), current_metadata_offset, now)
        reply = BrokerHeartbeatReply(current_metadata_offset >= register_offset,
                                     s.fenced(states.next),
                                     s.in_controlled_shutdown(states.next),
                                     s.should_shut_down(states.next))
        return list(records), reply

    def maybe_fence_one_stale_broker(self, now_ms: int | None = None, *,
                                     handle_broker_fenced: Callable[[int], list] | None = None
                                     ) -> tuple[list, int | None]:
        """``ReplicationControlManager.maybeFenceOneStaleBroker``: fence at most one broker
        whose session expired (oldest contact first): its records, then
        ``heartbeat_manager.fence``. Returns ``(records, fenced broker id or None)``; the
        controller reschedules at ``heartbeat_manager.next_check_time_ms()``."""
        now = self._clock(now_ms)
        hb = self.heartbeat_manager
        broker_id = hb.find_one_stale_broker(now)
        if broker_id is None:
            return [], None
        records = (handle_broker_fenced or self.fence_broker_records)(broker_id)
        hb.fence(broker_id)
        return list(records), broker_id


    def track_broker_heartbeat(self, broker_id: int, broker_epoch: int,
                               now_ms: int | None = None) -> bool:
        """``trackBrokerHeartbeat`` (4.0+): record the heartbeat's contact in the session
        tracker before the controller processes it (whatever its epoch). False when this
        controller is not active."""
        hb = self._heartbeat_manager
        if hb is None:
            return False
        if hb.tracker is not None:
            hb.tracker.update_contact_time(BrokerIdAndEpoch(broker_id, broker_epoch),
                                           self._clock(now_ms))
        return True

    def maybe_fence_stale_session(self, now_ms: int | None = None, *,
                                  handle_broker_fenced: Callable[[int], list] | None = None
                                  ) -> StaleSessionCheck:
        """Kafka 4.0+'s ``ReplicationControlManager.maybeFenceOneStaleBroker`` (the periodic
        ``maybeFenceStaleBroker`` task; 3.x: :meth:`maybe_fence_one_stale_broker`): take one
        expired session out of the tracker. A session of an unknown broker or of an older
        epoch is just dropped; a live registration's broker is fenced (its records, then
        ``heartbeat_manager.fence``). ``again`` (the ControllerResult's response) is True
        whenever a session was taken out: the task then runs again 10 ms later."""
        now = self._clock(now_ms)
        hb = self.heartbeat_manager
        expired = hb.tracker.maybe_remove_expired(now)
        if expired is None:
            return StaleSessionCheck([], None, False)
        registration = self.broker_registrations.get(expired.id)
        if registration is None:
            hb.remove(expired.id)
            return StaleSessionCheck([], None, True)
        if registration.epoch != expired.epoch:
            return StaleSessionCheck([], None, True)
        records = (handle_broker_fenced or self.fence_broker_records)(expired.id)
        hb.fence(expired.id)
        return StaleSessionCheck(list(records), expired.id, True)


class StaleSessionCheck(NamedTuple):
    """What one run of the 4.0+ ``maybeFenceStaleBroker`` task did."""

    records: list
    broker: int | None    # the broker fenced, if any
    again: bool           # a session was taken out: run again soon


def _gate(explicit: bool | None, metadata_version, predicate: str, level: str) -> bool:
    """An explicit boolean wins; else the metadata version's predicate, or its comparison with
    ``type(metadata_version).parse(level)``; else True (a current metadata.version)."""
    if explicit is not None:
        return explicit
    if metadata_version is None:
        return True
    if hasattr(metadata_version, predicate):
        return bool(getattr(metadata_version, predicate)())
    return metadata_version >= type(metadata_version).parse(level)
