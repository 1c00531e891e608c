"""kafka-metadata-quorum add-controller / remove-controller (KIP-853) against kafkasim's static
quorum: the tool's checks (MetadataQuorumCommand.handleAddController / handleRemoveController,
MetadataQuorumCommandUnitTest) and the leader's (AddVoterHandler / RemoveVoterHandler
.handle*Request), apache/kafka trunk 1eb7644."""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.raft import UNKNOWN
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.quorum_admin import QuorumReconfigurationError

NEW = {"node.id": 3003, "process.roles": "controller", "controller.listener.names": "CONTROLLER",
       "listeners": "CONTROLLER://controller3003:9093"}


@pytest.fixture(scope="module")
def kraft44():
    c = Cluster(3, seed=5, kafka_version="4.4")
    c.run(3000)
    return c


def _snapshot(c):
    return (c.now, list(c.kraft.voters), c.kraft.describe_quorum(status=True),
            len(c.trace.rows))


def test_add_controller_on_a_static_quorum_is_unsupported_version(kraft44):
    """AddVoterHandler: kraft.version 0 (controller.quorum.voters) cannot add a voter."""
    before = _snapshot(kraft44)
    with pytest.raises(QuorumReconfigurationError) as err:
        kraft44.kraft.add_controller(NEW)
    assert err.value.error == "UNSUPPORTED_VERSION"
    assert str(err.value) == ("org.apache.kafka.common.errors.UnsupportedVersionException: "
                              "Cluster doesn't support adding voter because the kraft.version "
                              "feature is 0")
    assert _snapshot(kraft44) == before          # refused: nothing changed


def test_remove_controller_on_a_static_quorum_is_unsupported_version(kraft44):
    with pytest.raises(QuorumReconfigurationError,
                       match="Cluster doesn't support removing voter because the "
                             "kraft.version feature is 0") as err:
        kraft44.kraft.remove_controller(3002, "9zuNR_7aQT6u34VJNx7XFw")
    assert err.value.error == "UNSUPPORTED_VERSION"
    assert kraft44.kraft.voters == (3000, 3001, 3002)


def test_remove_controller_with_the_zero_directory_id_is_an_invalid_request(kraft44):
    """KafkaRaftClient.handleRemoveVoterRequest: ReplicaKey.of maps Uuid.ZERO_UUID to no
    directory id, and a voter key without one is INVALID_REQUEST before the handler's checks
    (KafkaRaftClientReconfigTest.testRemoveVoterWithNoneVoterId's sibling for the directory)."""
    before = _snapshot(kraft44)
    with pytest.raises(QuorumReconfigurationError) as err:
        kraft44.kraft.remove_controller(3002, "AAAAAAAAAAAAAAAAAAAAAA")
    assert err.value.error == "INVALID_REQUEST"
    assert str(err.value) == ("org.apache.kafka.common.errors.InvalidRequestException: Remove "
                              "voter request didn't include a valid voter")
    assert _snapshot(kraft44) == before


def test_dry_runs_print_the_tools_lines_without_asking_the_leader(kraft44):
    # handleAddController / handleRemoveController: --dry-run skips the Admin call
    line = kraft44.kraft.add_controller(NEW, dry_run=True)
    assert line.startswith("DRY RUN of adding controller 3003 with directory id ")
    assert line.endswith(" and endpoints: CONTROLLER://controller3003:9093")
    assert kraft44.kraft.remove_controller(3002, "AAAAAAAAAAAAAAAAAAAAAA", dry_run=True) == \
        "DRY RUN of removing  KRaft controller 3002 with directory id AAAAAAAAAAAAAAAAAAAAAA"


@pytest.mark.parametrize(("config", "message"), [
    ({}, "node.id not found in configuration file. Is this a valid controller configuration "
         "file?"),
    ({**NEW, "node.id": -1}, "node.id was negative in configuration file."),
    ({**NEW, "process.roles": "broker"}, "process.roles did not contain 'controller' in "
                                         "configuration file."),
    ({k: v for k, v in NEW.items() if k != "controller.listener.names"},
     "controller.listener.names was not found. Is this a valid controller configuration file?"),
    ({**NEW, "controller.listener.names": "CONTROLLER2"},
     "Cannot find information about controller listener name: CONTROLLER2"),
])
def test_add_controller_config_checks(kraft44, config, message):
    # MetadataQuorumCommandUnitTest (testGetControllerId*, testGetControllerAdvertisedListeners*)
    with pytest.raises(QuorumReconfigurationError, match=message) as err:
        kraft44.kraft.add_controller(config, dry_run=True)
    assert err.value.error is None


def test_advertised_listener_wins_and_ipv6_is_bracketed(kraft44):
    cfg = {**NEW, "advertised.listeners": "CONTROLLER://[::1]:9094"}
    assert kraft44.kraft.add_controller(cfg, dry_run=True).endswith(
        "endpoints: CONTROLLER://[::1]:9094")


@pytest.mark.parametrize(("cid", "did", "message"), [
    (-1, "AAAAAAAAAAAAAAAAAAAAAA", "Invalid negative --controller-id: -1"),
    (3002, "xyz", "Failed to parse --controller-directory-id: Input string `xyz` decoded as 2 "
                  "bytes, which is not equal to the expected 16 bytes of a base64-encoded UUID"),
    (3002, "A" * 25, "Failed to parse --controller-directory-id: Input string with prefix `"
                     + "A" * 24 + "` is too long to be decoded as a base64 UUID"),
    (3002, "AAAA.AAA", "Failed to parse --controller-directory-id: Illegal base64 character 2e"),
])
def test_remove_controller_argument_checks(kraft44, cid, did, message):
    with pytest.raises(QuorumReconfigurationError) as err:
        kraft44.kraft.remove_controller(cid, did)
    assert str(err.value) == message


def test_a_leader_without_a_high_watermark_times_the_request_out():
    """AddVoterHandler's second check: a new leader that has not committed a record of its epoch
    answers REQUEST_TIMED_OUT before looking at kraft.version."""
    c = Cluster(3, seed=5, kafka_version="4.4")
    c.run(3000)
    old = c.controller_id()
    c.crash(old)
    for _ in range(20_000):
        c.run(1)
        leader = c.kraft.raft_leader()
        if leader is not None and leader.id != old and leader.raft.high_watermark == UNKNOWN:
            break
    else:
        pytest.fail("no moment with a new leader before its high watermark")
    with pytest.raises(QuorumReconfigurationError,
                       match="TimeoutException: Request timed out waiting for leader to "
                             "establish HWM and fence previous voter changes") as err:
        c.kraft.add_controller(NEW)
    assert err.value.error == "REQUEST_TIMED_OUT"


def test_the_commands_do_not_exist_before_3_9():
    c = Cluster(3, seed=5, kafka_version="3.8", metadata_mode="kraft")
    with pytest.raises(QuorumReconfigurationError, match="does not exist in Kafka 3.8: it came "
                                                         "with dynamic quorums in 3.9"):
        c.kraft.add_controller(NEW, dry_run=True)
    with pytest.raises(QuorumReconfigurationError, match="remove-controller does not exist"):
        c.kraft.remove_controller(3002, "AAAAAAAAAAAAAAAAAAAAAA", dry_run=True)


def test_add_controller_lists_every_controller_listener_as_kafka_does(kraft44):
    """MetadataQuorumCommandUnitTest.testGetControllerAdvertisedListenersWithRegularListeners
    (an empty host is localhost) and testAddControllerDryRun (endpoints joined with ", ")."""
    cfg = {"node.id": 5, "process.roles": "controller",
           "controller.listener.names": "CONTROLLER,CONTROLLER2",
           "listeners": "CONTROLLER://example.com:9092,CONTROLLER2://:9093"}
    assert kraft44.kraft.add_controller(cfg, dry_run=True).endswith(
        "and endpoints: CONTROLLER://example.com:9092, CONTROLLER2://localhost:9093")


# -- describe, against MetadataQuorumCommandTest's patterns ---------------------------------------
def test_describe_replication_matches_kafkas_patterns(kraft44):
    """MetadataQuorumCommandTest.testDescribeQuorumReplicationSuccessful (3 controllers,
    3 brokers, not co-located)."""
    import re

    lines = kraft44.kraft.describe_quorum(replication=True).split("\n")
    header, data = lines[0], [x for x in lines[1:] if x]
    assert re.fullmatch(r"NodeId\s+DirectoryId\s+LogEndOffset\s+Lag\s+LastFetchTimestamp\s+"
                        r"LastCaughtUpTimestamp\s+Status\s+", header)
    assert len(data) == 3 + 3
    row = r"\d+\s+\S+\s+\d+\s+\d+\s+-?\d+\s+-?\d+\s+{}\s*"
    assert re.search(row.format("Leader"), data[0])
    assert not any(re.search(row.format("Leader"), x) for x in data[1:])
    assert sum(bool(re.search(row.format("Follower"), x)) for x in data) == 2
    assert sum(bool(re.search(row.format("Observer"), x)) for x in data) == 3


def test_describe_status_matches_kafkas_patterns(kraft44):
    """MetadataQuorumCommandTest.testDescribeQuorumStatusSuccessful."""
    import re

    out = kraft44.kraft.describe_quorum(status=True).split("\n")
    assert re.fullmatch(r"ClusterId:\s+\S{22}", out[0])
    assert re.fullmatch(r"LeaderId:\s+\d+", out[1])
    assert re.fullmatch(r"LeaderEpoch:\s+\d+", out[2])
    assert re.fullmatch(r"HighWatermark:\s+-?\d+", out[3])
    assert re.fullmatch(r"MaxFollowerLag:\s+\d+", out[4])
    assert re.fullmatch(r"MaxFollowerLagTimeMs:\s+-?\d+", out[5])
    assert re.fullmatch(r'CurrentVoters:\s+\[\{"id":\s+\d+,\s+"directoryId":\s+\S+,\s+'
                        r'"endpoints":\s+\["\S+://\[?\S+]?:\d+",?.*]', out[6])
    assert re.fullmatch(r'CurrentObservers:\s+\[\{"id":\s+\d+,\s+"directoryId":\s+\S+}'
                        r'(,\s+\{"id":\s+\d+,\s+"directoryId":\s+\S+})*]', out[7])
