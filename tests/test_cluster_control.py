"""ClusterControlManager: registration, fencing and broker epochs (metadata/src/test/java/org/
apache/kafka/controller/ClusterControlManagerTest.java, trunk 1eb7644; the 3.3-3.8 registration
rules from ClusterControlManager.registerBroker at tags 3.7.0 / 3.8.0)."""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.broker_heartbeat import IllegalStateException
from kafkasim.control.kraft.cluster_control import (
    BrokerHeartbeatReply,
    BrokerIdNotRegisteredException,
    BrokerRegistrationReply,
    ClusterControlManager,
    DuplicateBrokerRegistrationException,
    RegistrationRules,
    StaleBrokerEpochException,
    controlled_shutdown_records,
    fence_broker_record,
    unfence_broker_record,
)
from kafkasim.control.kraft.records import (
    BrokerRegistration,
    BrokerRegistrationChangeRecord,
    BrokerRegistrationFencingChange,
    BrokerRegistrationInControlledShutdownChange,
    FenceBrokerRecord,
    RegisterBrokerRecord,
    UnfenceBrokerRecord,
    UnregisterBrokerRecord,
)
from kafkasim.control.kraft.striped_placer import InvalidReplicationFactorException
from kafkasim.core import errors
from kafkasim.settings.javautil import JavaRandom

FENCE = BrokerRegistrationFencingChange.FENCE
UNFENCE = BrokerRegistrationFencingChange.UNFENCE
IN_CS = BrokerRegistrationInControlledShutdownChange.IN_CONTROLLED_SHUTDOWN


def new_ccm(active=True, **kw):
    kw.setdefault("session_timeout_ms", 1000)
    kw.setdefault("placer_random", JavaRandom(1))
    return ClusterControlManager(active=active, **kw)


def replay_all(ccm, records, first_offset, now_ms=None):
    for i, r in enumerate(records):
        ccm.replay(r, first_offset + i, now_ms=now_ms)


@pytest.mark.parametrize("registration_change_supported", [False, True])
def test_replay(registration_change_supported):
    """ClusterControlManagerTest.testReplay (IBP_3_0_IV1: Fence/UnfenceBrokerRecord;
    IBP_3_3_IV2: BrokerRegistrationChangeRecord)."""
    ccm = new_ccm()
    assert not ccm.is_unfenced(0)
    ccm.replay(RegisterBrokerRecord(1, 100, "inc"), 100)
    ccm.check_broker_epoch(1, 100)
    with pytest.raises(StaleBrokerEpochException):
        ccm.check_broker_epoch(1, 101)
    with pytest.raises(StaleBrokerEpochException):
        ccm.check_broker_epoch(2, 100)
    assert not ccm.is_unfenced(0) and not ccm.is_unfenced(1)
    if registration_change_supported:
        ccm.replay(BrokerRegistrationChangeRecord(1, 100, fenced=UNFENCE))
    else:
        ccm.replay(UnfenceBrokerRecord(1, 100))
    assert not ccm.is_unfenced(0) and ccm.is_unfenced(1)
    if registration_change_supported:
        ccm.replay(BrokerRegistrationChangeRecord(1, 100, fenced=FENCE))
    else:
        ccm.replay(FenceBrokerRecord(1, 100))
    assert not ccm.is_unfenced(0) and not ccm.is_unfenced(1)


def test_check_broker_epoch_messages():
    """checkBrokerEpoch: STALE_BROKER_EPOCH with Kafka's messages."""
    ccm = new_ccm()
    ccm.replay(RegisterBrokerRecord(1, 100, "inc"), 100)
    with pytest.raises(StaleBrokerEpochException) as e:
        ccm.check_broker_epoch(1, 101)
    assert str(e.value) == "Expected broker epoch 100, but got broker epoch 101"
    assert e.value.error == errors.STALE_BROKER_EPOCH
    with pytest.raises(StaleBrokerEpochException) as e:
        ccm.check_broker_epoch(2, 100)
    assert str(e.value) == "No broker registration found for broker id 2"


def test_replay_register_broker_record():
    """ClusterControlManagerTest.testReplayRegisterBrokerRecord (standby: no heartbeat
    manager)."""
    ccm = new_ccm(active=False)
    assert not ccm.is_unfenced(0) and not ccm.in_controlled_shutdown(0)
    rec = RegisterBrokerRecord(0, 100, "inc", None, fenced=True, in_controlled_shutdown=True)
    ccm.replay(rec, 100)
    assert not ccm.is_unfenced(0) and ccm.in_controlled_shutdown(0)
    ccm.replay(RegisterBrokerRecord(0, 100, "inc", None, fenced=True), 100)
    assert not ccm.is_unfenced(0) and not ccm.in_controlled_shutdown(0)
    assert ccm.register_broker_record_offset(0) == 100
    ccm.replay(RegisterBrokerRecord(0, 100, "inc", None, fenced=False), 100)
    assert ccm.is_unfenced(0) and not ccm.in_controlled_shutdown(0)
    with pytest.raises(RuntimeError, match="ClusterControlManager is not active."):
        ccm.heartbeat_manager  # noqa: B018


def test_replay_broker_registration_change_record():
    """ClusterControlManagerTest.testReplayBrokerRegistrationChangeRecord: unfencing keeps the
    in-controlled-shutdown flag (BrokerRegistration.cloneWith)."""
    ccm = new_ccm(active=False)
    ccm.replay(RegisterBrokerRecord(0, 100, "inc", None, fenced=False), 100)
    assert ccm.is_unfenced(0) and not ccm.in_controlled_shutdown(0)
    ccm.replay(BrokerRegistrationChangeRecord(0, 100, in_controlled_shutdown=IN_CS))
    assert ccm.is_unfenced(0) and ccm.in_controlled_shutdown(0)
    assert not ccm.is_active(0)
    ccm.replay(BrokerRegistrationChangeRecord(0, 100, fenced=UNFENCE))
    assert ccm.is_unfenced(0) and ccm.in_controlled_shutdown(0)


def test_replay_change_with_wrong_epoch_or_unknown_broker_or_bad_value():
    """replayRegistrationChange / replay(BrokerRegistrationChangeRecord) errors."""
    ccm = new_ccm()
    with pytest.raises(RuntimeError, match="no broker registration found for that id"):
        ccm.replay(FenceBrokerRecord(3, 100))
    ccm.replay(RegisterBrokerRecord(3, 100, "inc"), 100)
    with pytest.raises(RuntimeError, match="no broker registration with that epoch found"):
        ccm.replay(UnfenceBrokerRecord(3, 99))
    with pytest.raises(IllegalStateException, match="unknown value for fenced field: 2"):
        ccm.replay(BrokerRegistrationChangeRecord(3, 100, fenced=2))


def test_register_broker_record_contents():
    """ClusterControlManagerTest.testRegisterBrokerRecordVersion: a new broker registers
    fenced, not in controlled shutdown, with epoch = the offset passed in."""
    ccm = new_ccm()
    records, reply = ccm.register_broker(0, "0H4fUu1xQEKXFYwB1aBjhg", None, -1, 123, 0)
    assert records == [RegisterBrokerRecord(0, 123, "0H4fUu1xQEKXFYwB1aBjhg", None,
                                            fenced=True, in_controlled_shutdown=False)]
    assert reply == BrokerRegistrationReply(123, unclean_shutdown=True)
    assert ccm.registration(0) is None   # generation does not mutate the registrations


def test_register_requires_active_controller():
    ccm = new_ccm(active=False)
    with pytest.raises(RuntimeError, match="ClusterControlManager is not active."):
        ccm.register_broker(0, "inc", None, -1, 1, 0)


def test_unregister():
    """ClusterControlManagerTest.testUnregister."""
    ccm = new_ccm()
    ccm.replay(RegisterBrokerRecord(1, 100, "fPZv1VBsRFmnlRvmGcOW9w", "arack"), 100)
    assert ccm.broker_registrations[1] == BrokerRegistration(
        1, 100, "fPZv1VBsRFmnlRvmGcOW9w", "arack", fenced=True, in_controlled_shutdown=False)
    assert ccm.register_broker_record_offset(1) == 100
    assert ccm.unregister_broker_records(1) == [UnregisterBrokerRecord(1, 100)]
    ccm.replay(UnregisterBrokerRecord(1, 100))
    assert 1 not in ccm.broker_registrations
    assert ccm.register_broker_record_offset(1) is None
    assert ccm.heartbeat_manager.state(1) is None
    with pytest.raises(BrokerIdNotRegisteredException) as e:
        ccm.unregister_broker_records(1)
    assert str(e.value) == "Broker ID 1 is not currently registered"
    assert e.value.error == errors.BROKER_ID_NOT_REGISTERED


@pytest.mark.parametrize("num_usable_brokers", [3, 10])
def test_place_replicas(num_usable_brokers):
    """ClusterControlManagerTest.testPlaceReplicas: 100 placements of RF 3, distinct valid
    brokers."""
    ccm = new_ccm()
    for i in range(num_usable_brokers):
        ccm.replay(RegisterBrokerRecord(i, 100, f"inc{i}"), 100)
        ccm.replay(UnfenceBrokerRecord(i, 100))
        ccm.heartbeat_manager.touch(i, False, 0, 0)
    assert all(ccm.is_unfenced(i) for i in range(num_usable_brokers))
    for _ in range(100):
        [replicas] = ccm.place_replicas(0, 1, 3)
        assert len(set(replicas)) == 3
        assert all(0 <= b < num_usable_brokers for b in replicas)


def test_place_replicas_uses_racks_and_skips_shutting_down_brokers():
    """usableBrokers: racks from the registrations; a broker in controlled shutdown is not
    usable; a fenced one is, but never as leader."""
    ccm = new_ccm()
    for i, rack in enumerate(["a", "a", "b", "b"]):
        ccm.replay(RegisterBrokerRecord(i, 10 + i, f"inc{i}", rack, fenced=False), 10 + i)
    ccm.heartbeat_manager.maybe_update_controlled_shutdown_offset(3, 50)
    ccm.heartbeat_manager.fence(1)
    usable = {(u.id, u.rack, u.fenced) for u in ccm.usable_brokers()}
    assert usable == {(0, "a", False), (1, "a", True), (2, "b", False)}
    for replicas in ccm.place_replicas(0, 20, 2):
        assert replicas[0] in (0, 2)
        assert {ccm.registration(b).rack for b in replicas} == {"a", "b"}
    with pytest.raises(InvalidReplicationFactorException, match="only 3 broker"):
        ccm.place_replicas(0, 1, 4)


def test_registrations_flags():
    """ClusterControlManagerTest.testRegistrationsToRecords' set-up: three registered, two
    unfenced, broker 0 in controlled shutdown."""
    ccm = new_ccm()
    for i in range(3):
        ccm.replay(RegisterBrokerRecord(i, 100, f"inc{i}"), 100)
    for i in range(2):
        ccm.replay(UnfenceBrokerRecord(i, 100))
    ccm.replay(BrokerRegistrationChangeRecord(0, 100, in_controlled_shutdown=IN_CS))
    assert [ccm.is_unfenced(i) for i in range(3)] == [True, True, False]
    assert [ccm.is_active(i) for i in range(3)] == [False, True, False]
    assert [ccm.in_controlled_shutdown(i) for i in range(3)] == [True, False, False]
    assert ccm.fenced_broker_ids() == {2}


@pytest.mark.parametrize("new_incarnation", [False, True])
def test_re_registration_and_broker_epoch(new_incarnation):
    """ClusterControlManagerTest.testReRegistrationAndBrokerEpoch (KAFKA-16952, 3.9): the same
    incarnation keeps its epoch; a new one gets the new offset."""
    ccm = new_ccm()
    records, _ = ccm.register_broker(1, "mISEfEFwQIuaD1gKCc5tzQ", None, -1, 100, 0)
    replay_all(ccm, records, 100)
    inc = "07OOcU7MQFeSmGAFPP2Zww" if new_incarnation else "mISEfEFwQIuaD1gKCc5tzQ"
    records, reply = ccm.register_broker(1, inc, None, 100, 111, 0)
    replay_all(ccm, records, 111)
    assert ccm.broker_registrations[1].incarnation_id == inc
    assert ccm.broker_registrations[1].epoch == (111 if new_incarnation else 100)
    assert reply.epoch == ccm.broker_registrations[1].epoch
    assert reply.unclean_shutdown == new_incarnation


def _register_unfenced(ccm, broker_id, inc, offset, now):
    records, reply = ccm.register_broker(broker_id, inc, None, -1, offset, now)
    replay_all(ccm, records, offset, now)
    hb_records, hb_reply = ccm.process_broker_heartbeat(broker_id, reply.epoch, offset,
                                                        now_ms=now)
    replay_all(ccm, hb_records, offset + len(records), now)
    return reply.epoch, hb_records, hb_reply


def test_duplicate_broker_registration_while_session_is_live():
    """registerBroker: another incarnation with a valid session -> DUPLICATE_BROKER_REGISTRATION;
    once the session expired the new incarnation may register."""
    ccm = new_ccm()
    _register_unfenced(ccm, 1, "first", 10, 0)
    assert ccm.is_unfenced(1)
    with pytest.raises(DuplicateBrokerRegistrationException) as e:
        ccm.register_broker(1, "second", None, -1, 20, 500)
    assert str(e.value) == "Another broker is registered with that broker id."
    assert e.value.error == errors.DUPLICATE_BROKER_REGISTRATION
    records, reply = ccm.register_broker(1, "second", None, -1, 20, 1001)   # session 1000 ms
    assert reply.epoch == 20
    assert records[-1].incarnation_id == "second" and records[-1].fenced


def test_same_incarnation_amends_fenced_state():
    """3.9 registerBroker: the same incarnation re-registering keeps fenced=false, its
    in-controlled-shutdown flag and its epoch."""
    ccm = new_ccm()
    epoch, _, _ = _register_unfenced(ccm, 1, "inc", 10, 0)
    records, reply = ccm.register_broker(1, "inc", None, epoch, 30, 100)
    assert records == [RegisterBrokerRecord(1, 10, "inc", None, fenced=False)]
    assert reply == BrokerRegistrationReply(10, unclean_shutdown=False)


def _handler_log():
    calls = []

    def handler(broker_id):
        calls.append(broker_id)
        return [f"unclean-shutdown-records-for-{broker_id}"]
    return calls, handler


@pytest.mark.parametrize("rules,previous_epoch,detection,expect_unclean,expect_epoch", [
    # 3.3-3.7: no unclean-shutdown handling, always a new epoch
    (RegistrationRules.V3_3, 10, True, False, 30),
    # 3.8: PreviousBrokerEpoch from the clean-shutdown file matches -> clean; new epoch
    (RegistrationRules.V3_8, 10, True, False, 30),
    (RegistrationRules.V3_8, -1, True, True, 30),
    (RegistrationRules.V3_8, 10, False, True, 30),    # request < v2: always unclean
    # 3.9 / trunk: a new incarnation is an unclean shutdown whatever the previous epoch
    (RegistrationRules.V3_9, 10, True, True, 30),
])
def test_unclean_shutdown_detection_by_version(rules, previous_epoch, detection,
                                               expect_unclean, expect_epoch):
    """KIP-966 unclean-shutdown detection at re-registration (a restarted broker = a new
    incarnation), per ClusterControlManager.registerBroker at 3.7.0 / 3.8.0 / trunk: the
    handler's records (ReplicationControlManager.handleBrokerUncleanShutdown) come before
    the RegisterBrokerRecord."""
    calls, handler = _handler_log()
    ccm = new_ccm(registration_rules=rules, broker_unclean_shutdown_handler=handler)
    records, reply = ccm.register_broker(1, "old", None, -1, 10, 0)
    replay_all(ccm, [r for r in records if isinstance(r, RegisterBrokerRecord)], 10)
    calls.clear()
    records, reply = ccm.register_broker(1, "new", None, previous_epoch, 30, 2000,
                                         clean_shutdown_detection_enabled=detection)
    assert reply == BrokerRegistrationReply(expect_epoch, expect_unclean)
    assert calls == ([1] if expect_unclean else [])
    assert records[:-1] == (["unclean-shutdown-records-for-1"] if expect_unclean else [])
    assert records[-1] == RegisterBrokerRecord(1, expect_epoch, "new", None, fenced=True)


@pytest.mark.parametrize("previous_epoch,detection,clean", [
    (10, True, True), (-1, True, False), (10, False, False)])
def test_4_0_runs_the_shutdown_handler_for_every_new_incarnation(previous_epoch, detection,
                                                                 clean):
    """4.0 (KAFKA-18106, KAFKA-18635): a new incarnation always runs the BrokerShutdownHandler,
    told whether the restart was clean (PreviousBrokerEpoch == the registered epoch); the same
    incarnation runs nothing."""
    calls = []

    def handler(broker_id, is_clean):
        calls.append((broker_id, is_clean))
        return [f"shutdown-records-for-{broker_id}"]
    ccm = new_ccm(registration_rules=RegistrationRules.V4_0, broker_shutdown_handler=handler)
    records, _ = ccm.register_broker(1, "old", None, -1, 10, 0)
    replay_all(ccm, [r for r in records if isinstance(r, RegisterBrokerRecord)], 10)
    calls.clear()
    records, reply = ccm.register_broker(1, "new", None, previous_epoch, 30, 2000,
                                         clean_shutdown_detection_enabled=detection)
    assert calls == [(1, clean)]
    assert reply == BrokerRegistrationReply(30, not clean)
    assert records[0] == "shutdown-records-for-1"
    replay_all(ccm, records[-1:], 30)
    calls.clear()
    ccm.register_broker(1, "new", None, previous_epoch, 40, 2000)
    assert calls == []


def test_first_registration_counts_as_unclean_from_3_8():
    """3.8 and trunk: an unknown broker runs the handler (existing == null / new
    incarnation); 3.3-3.7 never do."""
    for rules, expected in ((RegistrationRules.V3_3, False), (RegistrationRules.V3_8, True),
                            (RegistrationRules.V3_9, True)):
        calls, handler = _handler_log()
        ccm = new_ccm(registration_rules=rules, broker_unclean_shutdown_handler=handler)
        _, reply = ccm.register_broker(4, "inc", None, -1, 5, 0)
        assert reply.unclean_shutdown is expected
        assert calls == ([4] if expected else [])


def test_same_incarnation_by_version():
    """Re-registration of the same incarnation: 3.3-3.7 write a fenced record with a new
    epoch; 3.8 amends fenced/in-controlled-shutdown but bumps the epoch; 3.9 and 4.x keep the
    epoch (KAFKA-16952)."""
    results = {}
    for rules in RegistrationRules.ALL:
        ccm = new_ccm(registration_rules=rules)
        epoch, _, _ = _register_unfenced(ccm, 1, "inc", 10, 0)
        records, reply = ccm.register_broker(1, "inc", None, epoch, 40, 100)
        results[rules] = (records[-1].fenced, reply.epoch)
    assert results == {RegistrationRules.V3_3: (True, 40), RegistrationRules.V3_8: (False, 40),
                       RegistrationRules.V3_9: (False, 10), RegistrationRules.V4_0: (False, 10)}


def test_fence_and_unfence_records_by_metadata_version():
    """ReplicationControlManager.handleBrokerFenced / handleBrokerUnfenced:
    BrokerRegistrationChangeRecord from 3.3-IV2 (isBrokerRegistrationChangeRecordSupported),
    Fence/UnfenceBrokerRecord before."""
    assert fence_broker_record(2, 7) == BrokerRegistrationChangeRecord(2, 7, fenced=FENCE)
    assert fence_broker_record(2, 7, registration_change_record_supported=False) == \
        FenceBrokerRecord(2, 7)
    assert unfence_broker_record(2, 7) == BrokerRegistrationChangeRecord(2, 7, fenced=UNFENCE)
    assert unfence_broker_record(2, 7, registration_change_record_supported=False) == \
        UnfenceBrokerRecord(2, 7)


def test_controlled_shutdown_record_by_metadata_version():
    """handleBrokerInControlledShutdown: the in-controlled-shutdown record only from 3.3-IV3
    and only if not already in controlled shutdown."""
    assert controlled_shutdown_records(2, 7) == [
        BrokerRegistrationChangeRecord(2, 7, in_controlled_shutdown=IN_CS)]
    assert controlled_shutdown_records(2, 7, in_controlled_shutdown_supported=False) == []
    assert controlled_shutdown_records(2, 7, already_in_controlled_shutdown=True) == []


class FakeMetadataVersion:
    """Stands for k1's MetadataVersion: ordered levels with ``parse``."""

    LEVELS = ["3.0-IV1", "3.3-IV2", "3.3-IV3", "3.9-IV0"]

    def __init__(self, s):
        self.i = self.LEVELS.index(s)

    @classmethod
    def parse(cls, s):
        return cls(s)

    def __ge__(self, other):
        return self.i >= other.i


@pytest.mark.parametrize("level,change_record,in_cs", [
    ("3.0-IV1", False, False), ("3.3-IV2", True, False), ("3.3-IV3", True, True)])
def test_gates_from_metadata_version(level, change_record, in_cs):
    ccm = new_ccm(metadata_version=FakeMetadataVersion(level))
    assert ccm.registration_change_record_supported is change_record
    assert ccm.in_controlled_shutdown_supported is in_cs


def test_heartbeat_unfences_once_caught_up_with_registration_record():
    """processBrokerHeartbeat: a registered broker stays fenced until its metadata offset
    reaches its RegisterBrokerRecord's offset, then gets unfenced (fact sheet §7c)."""
    ccm = new_ccm()
    records, reply = ccm.register_broker(1, "inc", None, -1, 10, 0)
    replay_all(ccm, records, 10)
    recs, hb = ccm.process_broker_heartbeat(1, 10, 9, now_ms=100)
    assert recs == [] and hb == BrokerHeartbeatReply(False, True, False, False)
    recs, hb = ccm.process_broker_heartbeat(1, 10, 10, now_ms=200)
    assert recs == [BrokerRegistrationChangeRecord(1, 10, fenced=UNFENCE)]
    assert hb == BrokerHeartbeatReply(True, False, False, False)
    replay_all(ccm, recs, 11)
    assert ccm.is_unfenced(1) and ccm.heartbeat_manager.has_valid_session(1, 1200)
    with pytest.raises(StaleBrokerEpochException):
        ccm.process_broker_heartbeat(1, 9, 10, now_ms=300)
    with pytest.raises(StaleBrokerEpochException, match="before registration"):
        ccm.process_broker_heartbeat(2, 9, 10, now_ms=300)


def test_controlled_shutdown_then_shutdown_now():
    """processBrokerHeartbeat: wantShutDown while leading -> CONTROLLED_SHUTDOWN (record with
    inControlledShutdown=1); once it leads nothing and the active brokers reached its
    controlled-shutdown offset -> SHUTDOWN_NOW, fencing it."""
    ccm = new_ccm()
    _register_unfenced(ccm, 1, "a", 10, 0)
    _register_unfenced(ccm, 2, "b", 20, 0)
    seen = []
    recs, hb = ccm.process_broker_heartbeat(
        1, 10, 30, want_shut_down=True, now_ms=100, has_leaderships=True,
        handle_broker_in_controlled_shutdown=lambda b, e: seen.append((b, e)) or
        ccm.controlled_shutdown_records(b, e))
    assert seen == [(1, 10)]
    assert recs == [BrokerRegistrationChangeRecord(1, 10, in_controlled_shutdown=IN_CS)]
    assert hb.in_controlled_shutdown and not hb.should_shut_down
    replay_all(ccm, recs, 40)
    ccm.heartbeat_manager.maybe_update_controlled_shutdown_offset(1, 40)   # batch end offset
    assert ccm.in_controlled_shutdown(1) and not ccm.is_active(1)
    ccm.process_broker_heartbeat(2, 20, 39, now_ms=150)          # broker 2 still behind 40
    recs, hb = ccm.process_broker_heartbeat(1, 10, 41, want_shut_down=True, now_ms=200)
    assert recs == [] and hb.in_controlled_shutdown and not hb.should_shut_down
    ccm.process_broker_heartbeat(2, 20, 40, now_ms=250)
    recs, hb = ccm.process_broker_heartbeat(1, 10, 41, want_shut_down=True, now_ms=300)
    assert recs == [BrokerRegistrationChangeRecord(1, 10, fenced=FENCE)]
    assert hb == BrokerHeartbeatReply(True, True, False, True)


def test_maybe_fence_one_stale_broker():
    """maybeFenceOneStaleBroker: one broker per call, oldest contact first, fenced in the
    heartbeat manager at once and by the record when replayed."""
    ccm = new_ccm()
    _register_unfenced(ccm, 1, "a", 10, 0)
    _register_unfenced(ccm, 2, "b", 20, 5)
    assert ccm.maybe_fence_one_stale_broker(1000) == ([], None)
    recs, fenced = ccm.maybe_fence_one_stale_broker(1006)
    assert fenced == 1 and recs == [BrokerRegistrationChangeRecord(1, 10, fenced=FENCE)]
    assert not ccm.heartbeat_manager.has_valid_session(1, 1006)
    replay_all(ccm, recs, 30)
    assert not ccm.is_unfenced(1)
    assert ccm.heartbeat_manager.next_check_time_ms() == 1005
    recs, fenced = ccm.maybe_fence_one_stale_broker(1006)
    assert fenced == 2
    assert ccm.maybe_fence_one_stale_broker(5000) == ([], None)


def test_activate_registers_known_brokers():
    """activate: every known registration gets a session from now (standby controllers keep
    none)."""
    ccm = new_ccm(active=False)
    ccm.replay(RegisterBrokerRecord(1, 10, "a", fenced=False), 10)
    ccm.replay(RegisterBrokerRecord(2, 11, "b"), 11)
    ccm.activate(500)
    hb = ccm.heartbeat_manager
    assert hb.has_valid_session(1, 1500) and not hb.has_valid_session(1, 1501)
    assert not hb.has_valid_session(2, 500)   # fenced
    ccm.deactivate()
    assert not ccm.is_active_controller()


def test_requires_placer_random():
    with pytest.raises(ValueError, match="placer_random"):
        ClusterControlManager(session_timeout_ms=1000)


def test_heartbeat_options_reach_the_heartbeat_manager():
    """Kafka 3.0-3.2 (before KAFKA-13959): processBrokerHeartbeat unfences once the broker
    reached the controller's last committed offset."""
    ccm = new_ccm(heartbeat_options={"unfence_at_register_record_offset": False})
    records, reply = ccm.register_broker(1, "inc", None, -1, 10, 0)
    replay_all(ccm, records, 10)
    recs, hb = ccm.process_broker_heartbeat(1, 10, 12, now_ms=100, last_committed_offset=20)
    assert recs == [] and hb.is_fenced and hb.is_caught_up
    recs, hb = ccm.process_broker_heartbeat(1, 10, 20, now_ms=200, last_committed_offset=20)
    assert recs == [BrokerRegistrationChangeRecord(1, 10, fenced=UNFENCE)] and not hb.is_fenced
