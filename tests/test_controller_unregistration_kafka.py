"""KIP-1312 / KAFKA-20395 (Kafka 4.4): unregistering a controller. Ported from
ClusterControlManagerTest @4.4 (confluentinc f86720838c): testUnregisterController,
testUnregisterUnknownController, testUnregisterControllerWithUnsupportedMetadataVersion; plus
QuorumController.unregisterController (QuorumController.java:2161@4.4) and the release rule
``controller_unregistration``.

Adaptations: ClusterControlManager reads the finalized metadata.version from the one it was
built with (or a ``metadata_version=`` argument) where Kafka asks its FeatureControlManager;
kafkasim's controllers send no ControllerRegistrationRequest, so a registration comes from a
RegisterControllerRecord the test writes. Scenarios are Kafka's; code is our own.
"""

from __future__ import annotations

import pytest
from test_quorum_controller_kafka import NODE, ControllerEnv, bootstrap

from kafkasim.control.kraft.cluster_control import (
    ClusterControlManager,
    ControllerIdNotRegisteredException,
    InvalidRequestException,
    UnsupportedVersionException,
)
from kafkasim.control.kraft.metadata_version import MINIMUM_VERSION, MetadataVersion
from kafkasim.control.kraft.records import (
    RegisterControllerRecord,
    UnregisterControllerRecord,
)
from kafkasim.core import errors
from kafkasim.settings.javautil import JavaRandom
from kafkasim.settings.versions import rules_for


def cluster_control(mv) -> ClusterControlManager:
    ccm = ClusterControlManager(placer_random=JavaRandom(1), metadata_version=mv,
                                heartbeat_options={"heartbeat_tracker": True})
    ccm.activate(0)
    return ccm


def replay_all(ccm: ClusterControlManager, records) -> None:
    for offset, record in enumerate(records):
        ccm.replay(record, offset)


def test_unregister_controller():
    """ClusterControlManagerTest.testUnregisterController @4.4: a registered controller's
    UnregisterControllerRecord (one record) removes its registration."""
    ccm = cluster_control(MetadataVersion.IBP_4_4_IV2)
    register = ccm.register_controller(1)
    replay_all(ccm, register.records)
    assert 1 in ccm.controller_registrations
    unregister = ccm.unregister_controller(1)
    assert unregister.records == [UnregisterControllerRecord(1)]
    assert unregister.is_atomic
    replay_all(ccm, unregister.records)
    assert 1 not in ccm.controller_registrations


def test_unregister_unknown_controller():
    """ClusterControlManagerTest.testUnregisterUnknownController @4.4: an id with no
    registration is refused (ControllerIdNotRegisteredException), and replaying an
    UnregisterControllerRecord for it fails."""
    ccm = cluster_control(MetadataVersion.IBP_4_4_IV2)
    with pytest.raises(ControllerIdNotRegisteredException) as e:
        ccm.unregister_controller(1)
    assert str(e.value) == "Controller ID 1 is not currently registered."
    assert e.value.error == errors.CONTROLLER_ID_NOT_REGISTERED
    with pytest.raises(RuntimeError, match="no controller registration found for that id"):
        ccm.replay(UnregisterControllerRecord(1), 0)


def test_unregister_controller_with_unsupported_metadata_version():
    """ClusterControlManagerTest.testUnregisterControllerWithUnsupportedMetadataVersion @4.4:
    below metadata.version 4.4-IV2 (here MINIMUM_VERSION, 3.3-IV3) the request is refused
    before the registration is looked at."""
    ccm = cluster_control(MINIMUM_VERSION)
    with pytest.raises(UnsupportedVersionException) as e:
        ccm.unregister_controller(1)
    assert str(e.value) == ("The current MetadataVersion is too old to support controller "
                            "unregistration.")
    replay_all(ccm, [RegisterControllerRecord(1, "inc")])
    with pytest.raises(UnsupportedVersionException):
        ccm.unregister_controller(1, metadata_version=MetadataVersion.IBP_4_4_IV1)
    assert ccm.unregister_controller(1, metadata_version=MetadataVersion.IBP_4_4_IV2).records


def test_register_controller_needs_3_7_iv0():
    """ClusterControlManager.registerController @4.4: KIP-919 registrations need
    metadata.version 3.7-IV0; the record carries the request's id and incarnation."""
    with pytest.raises(UnsupportedVersionException, match="support controller registrations"):
        cluster_control(MetadataVersion.parse("3.6-IV2")).register_controller(1)
    result = cluster_control(MetadataVersion.parse("3.7-IV0")).register_controller(2, "inc-2")
    assert result.records == [RegisterControllerRecord(2, "inc-2")]


def test_controller_unregistration_is_a_4_4_rule():
    assert rules_for("4.4").controller.controller_unregistration
    assert not rules_for("4.3").controller.controller_unregistration


def _env_with_registered_controller(version: str, mv: str, controller_id: int = 2):
    env = ControllerEnv(bootstrap(mv), version=version)
    env.active.write(env, [RegisterControllerRecord(controller_id, "inc")])
    env.advance(10)
    assert controller_id in env.active.cluster_control.controller_registrations
    return env


def test_quorum_controller_unregisters_another_controller():
    """QuorumController.unregisterController @4.4: the record is committed, then replayed by
    every controller (here: the active one, after a rebuild from the log too)."""
    env = _env_with_registered_controller("4.4", "4.4-IV2")
    assert env.get(env.active.unregister_controller(env, 2)) is None
    assert 2 not in env.active.cluster_control.controller_registrations
    assert UnregisterControllerRecord(2) in env.metadata_records()


def test_quorum_controller_cannot_unregister_itself():
    env = _env_with_registered_controller("4.4", "4.4-IV2", controller_id=NODE)
    with pytest.raises(InvalidRequestException,
                       match="Controller cannot unregister itself while it is active."):
        env.get(env.active.unregister_controller(env, NODE))
    assert NODE in env.active.cluster_control.controller_registrations


@pytest.mark.parametrize(("version", "mv", "exception", "text"), [
    ("4.4", "4.4-IV2", ControllerIdNotRegisteredException, "Controller ID 7 is not currently"),
    ("4.4", "4.3-IV0", UnsupportedVersionException, "too old to support controller unreg"),
    ("4.3", "4.3-IV0", UnsupportedVersionException, "does not exist in Kafka 4.3"),
])
def test_quorum_controller_refusals(version, mv, exception, text):
    """An unknown id, a metadata.version below 4.4-IV2, and a release before 4.4 (no
    UnregisterController API): the future fails, no record is written."""
    env = ControllerEnv(bootstrap(mv), version=version)
    before = len(env.metadata_records())
    with pytest.raises(exception, match=text):
        env.get(env.active.unregister_controller(env, 7))
    assert len(env.metadata_records()) == before
