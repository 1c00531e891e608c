"""ClusterControlManagerTest cases of 4.1.0 (13f70256db) about broker re-registration and the
heartbeat sessions the active controller starts: the clean-shutdown detection that decides
how a restarted broker leaves its partitions (``BrokerShutdownHandler``, KAFKA-18635), and the
duplicate-registration check that keeps a second incarnation out while the first one's session
lives.

Adaptations: kafkasim's ClusterControlManager at 4.x is ``registration_rules=V4_0`` with the
BrokerHeartbeatTracker (``heartbeat_options={"heartbeat_tracker": True}``) and, as 4.1
(KAFKA-19130), ``activate_tracks_fenced=False``; Kafka's MockTime(0, 20, 1000) starts at 1000
ms; ``registerBroker``'s features, cluster id and log dirs are not modelled. Scenarios are
Kafka's; code is our own.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.broker_heartbeat import BrokerIdAndEpoch
from kafkasim.control.kraft.cluster_control import (
    ClusterControlManager,
    DuplicateBrokerRegistrationException,
    RegistrationRules,
)
from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.records import (
    BrokerRegistrationChangeRecord,
    BrokerRegistrationInControlledShutdownChange,
    PartitionChangeRecord,
    RegisterBrokerRecord,
)
from kafkasim.core import errors
from kafkasim.settings.javautil import JavaRandom

IN_CS = BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN
START_MS = 1000   # MockTime(0L, 20L, 1000L)


def new_ccm(**kw) -> ClusterControlManager:
    kw.setdefault("session_timeout_ms", 1000)
    return ClusterControlManager(placer_random=JavaRandom(1),
                                 metadata_version=MetadataVersion.parse("3.3-IV3"),
                                 registration_rules=RegistrationRules.V4_0,
                                 heartbeat_options={"heartbeat_tracker": True}, **kw)


def replay_all(ccm, records, offset=0):
    """RecordTestUtils.replayAll on the ClusterControlManager: its own records (the handler's
    PartitionChangeRecords belong to the ReplicationControlManager)."""
    for i, r in enumerate(records):
        if not isinstance(r, PartitionChangeRecord):
            ccm.replay(r, offset + i)


@pytest.mark.parametrize("is_clean_shutdown", [False, True])
def test_re_registration_with_clean_shutdown_detection(is_clean_shutdown):
    """ClusterControlManagerTest.testReRegistrationWithCleanShutdownDetection @4.1.0: a new
    incarnation of broker 1 (in controlled shutdown) registers with PreviousBrokerEpoch 100
    (clean) or 10 (unclean): the handler is told which, the registration takes the new epoch
    111 and the new incarnation, and the controlled-shutdown flag is gone."""
    calls = []

    def handler(broker_id, clean):
        calls.append((broker_id, clean))
        return [] if clean else [PartitionChangeRecord(0, "t")]

    ccm = new_ccm(broker_shutdown_handler=handler, active=True)
    records, _ = ccm.register_broker(1, "mISEfEFwQIuaD1gKCc5tzQ", None, -1, 100)
    records.append(BrokerRegistrationChangeRecord(1, 100, in_controlled_shutdown=IN_CS))
    replay_all(ccm, records, 100)
    assert ccm.broker_registrations[1].in_controlled_shutdown
    calls.clear()
    records, _ = ccm.register_broker(1, "07OOcU7MQFeSmGAFPP2Zww", None,
                                     100 if is_clean_shutdown else 10, 111)
    replay_all(ccm, records, 111)
    reg = ccm.broker_registrations[1]
    assert reg.incarnation_id == "07OOcU7MQFeSmGAFPP2Zww"
    assert not reg.in_controlled_shutdown
    assert reg.epoch == 111
    assert len(records) == (1 if is_clean_shutdown else 2)
    assert calls == [(1, is_clean_shutdown)]


def test_broker_contact_times_are_updated_on_cluster_control_activation():
    """ClusterControlManagerTest.testBrokerContactTimesAreUpdatedOnClusterControlActivation
    @4.1.0 (KAFKA-19130): activation starts a session for the unfenced broker 1 only, under
    its registered epoch."""
    ccm = new_ccm()
    ccm.replay(RegisterBrokerRecord(0, 100, "Mj3CW3OSRi29cFeNJlXuAQ"), 10002)
    ccm.replay(RegisterBrokerRecord(1, 123, "TyNK6XSSQJaJc2q9uflNHg", fenced=False), 10005)
    ccm.activate(START_MS)
    tracker = ccm.heartbeat_manager.tracker
    assert tracker.contact_time(BrokerIdAndEpoch(0, 100)) is None
    assert tracker.contact_time(BrokerIdAndEpoch(1, 123)) == START_MS
    assert tracker.contact_time(BrokerIdAndEpoch(1, 124)) is None
    assert tracker.contact_time(BrokerIdAndEpoch(2, 100)) is None


def test_broker_contact_times_on_activation_in_4_0():
    """The same activation at 4.0 (KAFKA-18138, before KAFKA-19130): the fenced broker 0 gets a
    session too."""
    ccm = new_ccm(activate_tracks_fenced=True)
    ccm.replay(RegisterBrokerRecord(0, 100, "Mj3CW3OSRi29cFeNJlXuAQ"), 10002)
    ccm.replay(RegisterBrokerRecord(1, 123, "TyNK6XSSQJaJc2q9uflNHg", fenced=False), 10005)
    ccm.activate(START_MS)
    tracker = ccm.heartbeat_manager.tracker
    assert tracker.contact_time(BrokerIdAndEpoch(0, 100)) == START_MS
    assert tracker.contact_time(BrokerIdAndEpoch(1, 123)) == START_MS


def test_duplicate_broker_registration_with_active_old_broker():
    """ClusterControlManagerTest.testDuplicateBrokerRegistrationWithActiveOldBroker @4.1.0:
    half a session after activation a new incarnation of the unfenced broker 0 is refused;
    once the session has expired it registers."""
    ccm = new_ccm()
    ccm.replay(RegisterBrokerRecord(0, 100, "Mj3CW3OSRi29cFeNJlXuAQ", fenced=False), 10002)
    ccm.activate(START_MS)
    assert ccm.heartbeat_manager.tracker.contact_time(BrokerIdAndEpoch(0, 100)) == START_MS
    with pytest.raises(DuplicateBrokerRegistrationException) as e:
        ccm.register_broker(0, "0H4fUu1xQEKXFYwB1aBjhg", None, -1, 101, START_MS + 500)
    assert e.value.error == errors.DUPLICATE_BROKER_REGISTRATION
    records, reply = ccm.register_broker(0, "0H4fUu1xQEKXFYwB1aBjhg", None, -1, 101,
                                         START_MS + 1500)
    assert reply.epoch == 101 and records[-1].incarnation_id == "0H4fUu1xQEKXFYwB1aBjhg"


def test_duplicate_broker_registration_with_inactive_broker():
    """ClusterControlManagerTest.testDuplicateBrokerRegistrationWithInactiveBroker @4.1.0: the
    fenced broker 0 has no session, so a new incarnation registers at once; broker 1, unfenced
    but in controlled shutdown, keeps its session from the activation and a new incarnation is
    refused half a session later."""
    ccm = new_ccm()
    ccm.replay(RegisterBrokerRecord(0, 100, "Mj3CW3OSRi29cFeNJlXuAQ"), 10002)
    ccm.replay(RegisterBrokerRecord(1, 200, "TyNK6XSSQJaJc2q9uflNHg", fenced=False,
                                    in_controlled_shutdown=True), 20002)
    ccm.activate(START_MS)
    ccm.heartbeat_manager.maybe_update_controlled_shutdown_offset(1, 20002)
    tracker = ccm.heartbeat_manager.tracker
    assert tracker.contact_time(BrokerIdAndEpoch(0, 100)) is None
    assert tracker.contact_time(BrokerIdAndEpoch(1, 200)) == START_MS
    ccm.register_broker(0, "0H4fUu1xQEKXFYwB1aBjhg", None, -1, 101, START_MS + 500)
    with pytest.raises(DuplicateBrokerRegistrationException):
        ccm.register_broker(1, "b66ybsWIQoygs01vdjH07A", None, -1, 101, START_MS + 500)
