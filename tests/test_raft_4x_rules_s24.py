"""Three KRaft client rules of the 4.x releases that the release profiles now switch on
(KafkaRaftClient options; rules in kafkasim.settings.versions, tables in tests/test_versions.py):

- KAFKA-17030 (4.0, e979fce94e): an Unattached voter fetches from the bootstrap servers while its
  election timer runs, and a follower voter whose Fetch to the leader timed out sends the next
  to a bootstrap server (``raft_unattached_voters_fetch``; its KafkaRaftClientTest ports are in
  tests/test_raft_client_extra_kafka.py, run with the option);
- KAFKA-16538 (4.1, b97a130c08): FollowerState.updateVoterPeriodMs is one fetch timeout, not
  three (``raft_update_voter_period_one_fetch_timeout``; tests/test_kraft_reconfig.py runs its
  cluster tests with both periods, tests/test_raft_s24_kafka.py the client's);
- KAFKA-19354 (4.2, 7339d65b27): KafkaRaftClient.pollFollowerAsObserver always calls
  maybeSendFetchToBestNode; at 4.1 (13f70256db) an observer whose fetch timeout had expired
  sent every Fetch to a bootstrap server (``raft_observer_fetches_from_best_node``, below).
"""

from __future__ import annotations

import pytest
from test_raft_client_kafka import Ctx
from test_raft_states_kafka import TEST_CONFIG

from kafkasim.control.kraft import raft_messages as M
from kafkasim.control.kraft.raft import KafkaRaftClient
from kafkasim.runtime.kraft_cluster import raft_options
from kafkasim.settings.versions import rules_for

LOCAL, LEADER, OTHER = 10, 11, 12


@pytest.mark.parametrize(("version", "option", "on"), [
    ("3.9", "unattached_voters_fetch", False), ("4.0", "unattached_voters_fetch", True),
    ("4.0", "update_voter_period_one_fetch_timeout", False),
    ("4.1", "update_voter_period_one_fetch_timeout", True),
    ("4.1", "observer_fetches_from_best_node", False),
    ("4.2", "observer_fetches_from_best_node", True),
    ("4.3", "observer_fetches_from_best_node", True),
])
def test_release_profiles_switch_the_client_options(version, option, on):
    assert raft_options(rules_for(version))[option] is on


def _silent_leader_destinations(version: str) -> list[list[int]]:
    """An observer following LEADER (epoch 0) whose Fetches nobody answers: where each Fetch
    went, one request timeout (5 s) apart, up to past the fetch timeout (50 s).
    ``Ctx(random=1)``: findReadyBootstrapServer's random start picks OTHER."""
    options = raft_options(rules_for(version))
    c = KafkaRaftClient(LOCAL, (LEADER, OTHER), TEST_CONFIG, pre_vote=True, observer=True,
                        quorum_state={"leader_epoch": 0, "leader_id": LEADER, "voted_id": -1},
                        observer_fetches_from_best_node=options["observer_fetches_from_best_node"])
    ctx = Ctx(random=1)
    c.start(ctx)
    sent = []
    for _ in range(12):
        sent.append([dst for dst, _req in ctx.take(M.RaftFetchRequest)])
        ctx.advance(c, c.request_timeout_ms)
    assert c.fetch_timeout_ms == 50_000 and c.request_timeout_ms == 5_000
    return sent


@pytest.mark.parametrize(("version", "past_fetch_timeout"), [
    ("4.1", [[OTHER], [OTHER]]),      # maybeSendFetchToAnyBootstrap only
    ("4.2", [[LEADER], [OTHER]]),     # maybeSendFetchToBestNode, as before the timeout
])
def test_observer_past_its_fetch_timeout_fetches_from_the_best_node_from_4_2(
        version, past_fetch_timeout):
    """KafkaRaftClientTest.testObserverFollowerSendFetchToBestNode @4.2.0 (KAFKA-19354): within
    the fetch timeout the observer alternates -- the leader, and after that Fetch timed out a
    bootstrap server, then the leader again -- in both releases; past the fetch timeout 4.1
    fetches from bootstrap servers only, 4.2 goes on choosing the best node."""
    sent = _silent_leader_destinations(version)
    within = [[LEADER], [OTHER]] * 5
    assert sent[:10] == within
    assert sent[10:] == past_fetch_timeout
