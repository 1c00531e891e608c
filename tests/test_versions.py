"""Tests for kafkasim.settings.versions: version parsing/normalisation and per-release rules."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kafkasim.settings import versions
from kafkasim.settings.config import describe_profile
from kafkasim.settings.versions import (
    DEFAULT_VERSION,
    RULE_GROUPS,
    SUPPORTED_VERSIONS,
    RuleError,
    Rules,
    VersionError,
    normalize_version,
    parse_version,
    rule_group,
    rule_names,
    rules_for,
    version_at_least,
    version_tuple,
)

# ---------------------------------------------------------------------------- parsing


def test_supported_versions_are_ordered_oldest_first_and_include_the_brief_list():
    tuples = [version_tuple(v) for v in SUPPORTED_VERSIONS]
    assert tuples == sorted(tuples)
    assert len(set(tuples)) == len(tuples)
    for v in ("0.8.2", "0.10.2", "0.11.0", "2.0", "2.1", "2.4", "2.5", "2.7", "2.8", "3.7",
              "3.8", "3.9", "4.0", "4.1", "4.2", "4.3", "4.4"):
        assert v in SUPPORTED_VERSIONS
    # 4.4 is modelled but not the default: the course's saved outputs were executed on 4.3
    assert DEFAULT_VERSION == "4.3"
    assert isinstance(SUPPORTED_VERSIONS, tuple)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("3.7", (3, 7)),
        ("3.7.0", (3, 7)),
        ("3.7.1", (3, 7)),
        (" 3.7 ", (3, 7)),
        ("0.10.2.0", (0, 10, 2)),
        ("0.10.2.1", (0, 10, 2)),
        ("0.8.2.2", (0, 8, 2)),
        ("2.6", (2, 6)),
        ("2.0.0", (2, 0)),
        ("2.0.1", (2, 0, 1)),
        ("2.0.2", (2, 0, 1)),
        ("4.0.1", (4, 0)),
        ("4.1", (4, 1)),
        ("4.2.0", (4, 2)),
        ("4.3.1", (4, 3)),
        ("4.4", (4, 4)),
        ("4.4.1", (4, 4)),
        ("5.0", (4, 4)),
    ],
)
def test_parse_version_normalises_to_profile(text, expected):
    assert parse_version(text) == expected


def test_normalize_version_names_the_profile():
    assert normalize_version("3.7.1") == "3.7"
    assert normalize_version("0.10.2.0") == "0.10.2"
    assert normalize_version("0.9.0.1") == "0.9.0"
    assert normalize_version("1.1.1") == "1.1"


def test_version_tuple_keeps_all_parts():
    assert version_tuple("0.10.2.0") == (0, 10, 2, 0)
    assert version_tuple("3.7") == (3, 7)


@pytest.mark.parametrize("text", ["0.8.1", "0.8", "0.7.2"])
def test_versions_below_oldest_profile_are_rejected_with_supported_list(text):
    with pytest.raises(VersionError) as err:
        normalize_version(text)
    message = str(err.value)
    assert "older than every supported profile" in message
    assert "0.8.2" in message and "3.7" in message


@pytest.mark.parametrize("bad", ["", "3", "three.seven", "3.7-rc1", "3..7", "v3.7", "3.7.0.1.2"])
def test_malformed_versions_are_rejected(bad):
    with pytest.raises(VersionError, match="Invalid Kafka version"):
        parse_version(bad)


def test_non_string_version_is_rejected():
    with pytest.raises(VersionError, match="must be a string"):
        parse_version(3.7)  # type: ignore[arg-type]


def test_version_error_is_a_value_error():
    assert issubclass(VersionError, ValueError)


def test_version_at_least():
    assert version_at_least("2.5", "2.5")
    assert version_at_least("3.7.1", "3.7")
    assert not version_at_least("2.4", "2.5")
    assert version_at_least("0.10.2.0", "0.10.2")
    assert not version_at_least("0.9.0", "0.10.2")


@given(st.sampled_from([v for v in SUPPORTED_VERSIONS if v not in ("2.0", "2.0.1")]),
       st.integers(0, 9))
def test_patch_releases_map_to_their_minor_profile(profile, patch):
    assert normalize_version(f"{profile}.{patch}") == profile


@pytest.mark.parametrize(("text", "profile"), [
    ("2.0", "2.0"), ("2.0.0", "2.0"), ("2.0.1", "2.0.1"), ("2.0.2", "2.0.1"), ("2.0.1.5", "2.0.1"),
])
def test_2_0_1_is_a_profile_of_its_own(text, profile):
    # 2.0.1 shipped KAFKA-7128, KAFKA-7164 and KAFKA-7415 (git tag --contains of their commits)
    assert normalize_version(text) == profile


# ---------------------------------------------------------------------------- rules


def test_rules_is_frozen_with_bool_fields():
    rules = rules_for("3.7")
    assert isinstance(rules, Rules)
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.alter_isr = False  # type: ignore[misc]
    for name in rule_names():
        assert isinstance(getattr(rules, name), bool), name
    assert rules.version == "3.7"


def test_every_rule_is_documented_with_a_kafka_reference():
    for _attr, group, _title in RULE_GROUPS:
        for f in dataclasses.fields(group):
            assert f.metadata["ref"], f.name
            assert f.metadata["doc"], f.name
            assert f.metadata["since"] or f.metadata["until"], f.name


def test_rules_hold_the_groups_and_read_flat_names_through_them():
    rules = rules_for("3.7", {"hw_frozen_under_min_isr": False})
    assert [f.name for f in dataclasses.fields(Rules)] == \
        ["version"] + [attr for attr, _group, _title in RULE_GROUPS]
    for name in rule_names():
        group = getattr(rules, rule_group(name))
        assert getattr(group, name) is getattr(rules, name), name
    assert rules.isr.hw_frozen_under_min_isr is False and rules.hw_frozen_under_min_isr is False
    assert rule_group("fetch_sessions") == "fetch"
    with pytest.raises(AttributeError, match="Did you mean 'maximal_isr'"):
        rules.maximal_isrs  # noqa: B018
    with pytest.raises(RuleError, match="Did you mean 'maximal_isr'"):
        rule_group("maximal_isrs")


def test_brief_rule_names_exist():
    for name in (
        "isr_lag_max_messages",
        "caught_up_previous_fetch_rule",
        "isr_shrink_interval_half_lag",
        "leader_epoch_truncation",
        "offsets_for_leader_epoch_returns_epoch",
        "current_leader_epoch_fencing",
        "alter_isr",
        "maximal_isr",
        "fetch_diverging_epoch",
        "hw_frozen_under_min_isr",
        "caught_up_requires_isr_eligible",
        "last_fetch_leader_leo_max",
        "describe_space_after_colon",
        "describe_leader_minus_one",
        "describe_elr_columns",
        "describe_topic_id",
        "alter_partition_name",
        "error_not_leader_or_follower",
    ):
        assert name in rule_names()


# (rule, first profile where it is on) for rules that switch on at a release.
SINCE = [
    ("isr_lag_time_since_caught_up", "0.9.0", "0.8.2"),
    ("broker_registration_fails_on_foreign_znode", "0.9.0", "0.8.2"),
    ("caught_up_previous_fetch_rule", "0.10.2", "0.10.1"),
    ("isr_shrink_interval_half_lag", "0.10.2", "0.10.1"),
    ("reelected_leader_resets_follower_state", "0.10.2", "0.10.1"),
    ("hw_includes_caught_up_replicas", "0.10.2", "0.10.1"),
    ("leader_epoch_truncation", "0.11.0", "0.10.2"),
    ("offsets_for_leader_epoch_returns_epoch", "2.0", "1.1"),
    ("undefined_epoch_offset_truncates_to_fetch_offset", "1.1", "1.0"),   # KIP-113
    ("current_leader_epoch_fencing", "2.1", "2.0"),
    # KAFKA-7347 (ebd1354, first in 2.1.0)
    ("offsets_for_leader_epoch_not_replica_not_leader", "2.1", "2.0.1"),
    ("not_hosted_partition_not_leader", "2.0", "1.1"),   # KAFKA-6796
    ("controlled_shutdown_stops_fetching", "3.3", "3.2"),   # KAFKA-13858
    ("stop_replica_completes_delayed_requests", "2.4", "2.3"),   # KAFKA-9198
    ("stop_replica_checks_leader_epoch", "2.6", "2.5"),   # KIP-570
    ("stop_replica_accepts_equal_leader_epoch", "3.5", "3.4"),   # KAFKA-13972
    ("fetch_response_needs_same_leader_epoch", "4.1", "4.0"),   # KAFKA-18991
    ("follower_append_bounded_by_leader_epoch", "4.1", "4.0"),   # KAFKA-18723
    ("follower_append_restarts_empty_log_at_batch", "2.0", "1.1"),   # KAFKA-6975
    ("fetcher_marks_partition_failed_on_error", "2.3", "2.2"),   # KIP-461
    ("follower_hw_completes_delayed_fetch", "3.4", "3.3"),   # KAFKA-14334
    ("caught_up_when_leo_equals_leader", "2.1", "2.0"),
    # KAFKA-7128 / KAFKA-7164 / KAFKA-7415: fix commits contained in the 2.0.1 tag, not in 2.0.0
    ("isr_expand_requires_epoch_start_offset", "2.0.1", "2.0"),
    ("follower_truncates_after_missed_epoch", "2.0.1", "2.0"),
    ("epoch_cache_assigned_on_become_leader", "2.0.1", "2.0"),
    # KIP-320 / KAFKA-7395 (2.1.0): Partition.makeFollower skips only an unchanged epoch
    ("follower_truncates_on_every_new_epoch", "2.1", "2.0.1"),
    ("leader_epoch_assign_truncates_conflicts", "2.0.1", "2.0"),
    ("list_offsets_offset_not_available", "2.2", "2.1"),
    # KIP-320 ListOffsets v4; KIP-734 v7 (MAX_TIMESTAMP); KIP-405 v8 (EARLIEST_LOCAL_TIMESTAMP)
    ("list_offsets_leader_epoch", "2.1", "2.0.1"),
    ("list_offsets_max_timestamp", "3.0", "2.8"),
    ("list_offsets_earliest_local", "3.5", "3.4"),
    # KAFKA-16310 (9a6760f, first in 3.8.0)
    ("list_offsets_max_timestamp_batch_epoch", "3.8", "3.7"),
    # MetadataCache.getPartitionMetadata: KAFKA-6546 (2.0.0), KAFKA-10312 (2.7.0),
    # KAFKA-8442 (2.4.0), KAFKA-9261 (2.5.0)
    ("metadata_listener_not_found", "2.0", "1.1"),
    ("metadata_listener_error_checks_leader", "2.7", "2.6"),
    ("metadata_isr_without_leader", "2.4", "2.3"),
    ("metadata_leader_epoch_without_leader", "2.5", "2.4"),
    ("update_metadata_offline_replicas", "1.0", "0.11.0"),
    ("zk_unclean_election_on_default_change", "2.0", "1.1"),
    ("zk_unclean_election_on_topic_change", "2.1", "2.0.1"),
    ("controller_detects_bounced_brokers", "2.2", "2.1"),
    ("controlled_shutdown_checks_broker_epoch", "2.2", "2.1"),
    ("failover_takes_dead_replicas_offline", "2.3", "2.2"),
    ("offline_replica_updates_metadata_without_leader", "2.3", "2.2"),   # KAFKA-3143
    ("offline_replica_to_deletion_ineligible", "2.3", "2.2"),   # KAFKA-8237 (17c8016)
    ("alter_partition_rejects_ineligible", "3.3", "3.2"),
    ("fetch_from_follower", "2.4", "2.3"),
    # KAFKA-14372 (9d8b4e9): first in the 3.4.0 tag
    ("preferred_read_replica_isr_only", "3.4", "3.3"),
    ("alter_partition_reassignments", "2.4", "2.3"),
    ("describe_reassignment_columns", "2.6", "2.5"),
    ("describe_rf_excludes_adding", "2.5", "2.4"),
    # KIP-320 consumer side: KAFKA-7747 (409fabc, first in 2.3.0); KAFKA-9840 / KAFKA-10113
    # (cb379fb, first in 2.6.0)
    ("consumer_validates_position", "2.3", "2.2"),
    # OffsetCommit v6 / OffsetFetch v5 (CommittedLeaderEpoch): first in the 2.1.0 tag
    ("offset_commit_leader_epoch", "2.1", "2.0"),
    ("produce_response_current_leader", "3.7", "3.6"),
    # KAFKA-15415 (d817b1b, first in the 3.7.0 tag; back-ported to 3.6.1, not modelled)
    ("producer_retry_skips_backoff_on_new_leader", "3.7", "3.6"),
    ("exponential_retry_backoff", "3.7", "3.6"),
    ("idempotent_out_of_order_retried_when_not_next", "1.0", "0.11.0"),
    ("idempotent_expired_sequence_unresolved", "1.0", "0.11.0"),
    ("idempotent_out_of_order_bumps_epoch", "2.5", "2.4"),
    ("idempotent_send_fails_in_error_state", "3.2", "3.1"),
    ("idempotent_partition_epoch_updated_at_drain", "2.8", "2.7"),
    # KAFKA-1865 (0636928, first in 0.9.0.0)
    ("producer_flush_sends_lingering_batches", "0.9.0", "0.8.2"),
    ("producer_mutes_in_flight_partitions", "0.10.0", "0.9.0"),
    ("idempotent_duplicate_sequence_completes", "1.0", "0.11.0"),
    ("idempotent_unknown_producer_id_retried", "1.0", "0.11.0"),
    ("producer_sequence_wraps", "2.2", "2.1"),
    ("producer_metadata_keeps_newer_leader_epoch", "2.2", "2.1"),   # KAFKA-7738
    ("unknown_producer_accepted_at_any_sequence", "2.5", "2.4"),
    ("consumer_validation_undefined_resets", "2.6", "2.5"),
    # KAFKA-3977 (ff557f0, first in 0.10.1.0); KAFKA-14379 (b296e16, first in 3.4.0, back-ported
    # to 3.3.2, not modelled)
    ("consumer_discards_stale_out_of_range", "0.10.1", "0.10.0"),
    ("consumer_errors_clear_preferred_read_replica", "3.4", "3.3"),
    # #4644 (925d6a2, first in 2.0.0)
    ("consumer_list_offsets_skips_unavailable_leader", "2.0", "1.1"),
    ("consumer_fetch_skips_unavailable_node", "2.0", "1.1"),
    # KAFKA-7395 (bcef30d, first in 2.1.0)
    ("consumer_fetch_replica_not_available_refreshes", "2.1", "2.0"),
    # KAFKA-6833 (6a8ed79) and KAFKA-5098 (8c47a3e), first in 2.1.0
    ("producer_waits_for_partition_metadata", "2.1", "2.0"),
    ("producer_rejects_invalid_topics", "2.1", "2.0"),
    # KAFKA-9751 (d2cb2dc, first in 2.8.0)
    ("metadata_answers_invalid_topic", "2.8", "2.7"),
    # KAFKA-4032 (05d00b5, first in 0.10.1.0)
    ("metadata_auto_create_errors_per_topic", "0.10.1", "0.10.0"),
    # KAFKA-8862 (6612dd5, first in 4.0.0)
    ("producer_metadata_timeout_names_partition", "4.0", "3.9"),
    # KAFKA-7548 (1546fc3, first in 2.4.0)
    ("consumer_keeps_paused_fetches", "2.4", "2.3"),
    ("leader_election_tool", "2.4", "2.3"),
    ("describe_space_after_colon", "2.4", "2.3"),
    ("error_not_leader_or_follower", "2.6", "2.5"),
    ("alter_isr", "2.7", "2.6"),
    ("maximal_isr", "2.7", "2.6"),
    ("leader_epoch_cache_validates_entries", "2.7", "2.6"),
    ("log_start_past_end_deletes_segments", "2.3", "2.2"),
    ("partition_metadata_file", "2.8", "2.7"),
    ("zk_topic_ids", "2.8", "2.7"),   # KIP-516 in ZooKeeper mode
    ("leader_and_isr_creates_log_with_topic_id", "3.0", "2.8"),   # KAFKA-12426, KAFKA-13132
    ("recovery_checkpoint_only_after_truncation", "1.0", "0.11.0"),
    ("fetch_diverging_epoch", "2.8", "2.7"),
    ("fenced_partition_leaves_the_fetcher", "2.1", "2.0"),
    ("fenced_partition_checks_request_epoch", "2.5", "2.4"),
    ("epoch_answer_needs_same_leader_epoch", "2.2", "2.1"),
    ("fetch_sessions", "1.1", "1.0"),
    ("fetch_session_cache_sharded", "3.8", "3.7"),
    ("describe_topic_id", "2.8", "2.7"),
    ("kraft_mode", "2.8", "2.7"),
    ("alter_partition_name", "3.2", "3.1"),
    # Election.leaderForOffline @3.2.0: newRecoveringLeaderAndIsr (isLeaderRecoverySupported)
    ("zk_leader_recovery_state", "3.2", "3.1"),
    ("last_fetch_leader_leo_max", "3.3", "3.2"),
    ("reelected_leader_fetch_time_only_in_sync", "3.3", "3.2"),
    ("caught_up_requires_isr_eligible", "3.6", "3.5"),
    # KIP-903: 79b5f7f, 8c88cdb, d5e216d first in 3.5.0; KAFKA-15221 (d46781d) in 3.7.0
    ("isr_eligibility_checks_broker_epoch", "3.5", "3.4"),
    ("fetch_replica_epoch", "3.5", "3.4"),
    ("alter_partition_broker_epochs", "3.5", "3.4"),
    ("fetch_state_fences_stale_broker_epoch", "3.7", "3.6"),
    # KIP-380: 2155c6d first in 2.2.0; KAFKA-9839 (bd17085) in 2.6.0
    ("control_requests_carry_broker_epoch", "2.2", "2.1"),
    ("control_requests_accept_newer_broker_epoch", "2.6", "2.5"),
    ("hw_frozen_under_min_isr", "3.7", "3.6"),
    ("effective_min_isr_capped", "3.7", "3.6"),
    ("describe_elr_columns", "3.8", "3.7"),
    ("alter_isr_sent_on_submit", "2.8", "2.7"),
    ("alter_partition_accepts_equal_partition_epoch", "3.0", "2.8"),
    ("alter_partition_validates_epochs", "3.3", "3.2"),
    ("fetch_from_non_replica_error", "3.3", "3.2"),
    ("fetch_offset_below_log_start_before_divergence", "3.0", "2.8"),
    ("preferred_read_replica_answers_at_once", "3.2", "3.1"),
    # DelayedFetch.tryComplete: math.min(positionDiff, fetchSize) @0.9.0.0, uncapped @0.8.2.0
    ("delayed_fetch_caps_partition_bytes", "0.9.0", "0.8.2"),
    # KAFKA-16452: DelayedFetch.tryComplete "fetchOffset.messageOffset > endOffset.messageOffset"
    # first in 3.8.0 (3.7.0 compares segments only)
    ("delayed_fetch_completes_past_end_offset", "3.8", "3.7"),
    ("leader_and_isr_ignores_older_partition_epoch", "3.3", "3.2"),
    # KIP-833: docs/upgrade.html @3.3.0 "KRaft mode is production ready for new clusters"
    ("kraft_production_ready", "3.3", "3.2"),
    # BrokerRegistrationRequest.json: validVersions 0-1 @3.6.0, 0-3 with PreviousBrokerEpoch @3.7.0
    ("broker_registration_previous_epoch", "3.7", "3.6"),
    # QuorumConfig.QUORUM_BOOTSTRAP_SERVERS_CONFIG first in 3.9.0 (KIP-853)
    ("kraft_dynamic_quorum", "3.9", "3.8"),
    # KIP-996 Pre-Vote (KAFKA-17641 / KAFKA-17642, 4.0)
    ("kraft_pre_vote", "4.0", "3.9"),
    ("raft_check_quorum", "3.7", "3.6"),
    ("raft_begin_quorum_epoch_heartbeat", "3.9", "3.8"),
    ("raft_election_loss_waits_timeout", "4.1", "4.0"),
    ("raft_fast_hwm_replication", "4.1", "4.0"),
    ("raft_update_voter_static_quorum", "4.1", "4.0"),
    # KAFKA-17973: VoterSetHistory.addAt logs instead of throwing @4.0 (4ae681446f), not @3.9
    ("raft_voter_set_history_allows_non_overlapping", "4.0", "3.9"),
    # kafka.apache.org/40/operations/eligible-leader-replicas: available, not on by default
    ("elr_available", "4.0", "3.9"),
    # EligibleLeaderReplicasVersion.ELRV_1 bootstraps at IBP_4_1_IV0
    ("elr_enabled_by_default", "4.1", "4.0"),
    # KAFKA-18106 / KAFKA-18635: isCleanShutdown = stored epoch == PreviousBrokerEpoch
    ("unclean_shutdown_detection", "4.0", "3.9"),
    # KAFKA-17793 / apache/kafka PR #17502: PeriodicTaskControlManager in QuorumController @4.0.0
    ("periodic_controller_tasks", "4.0", "3.9"),
    # FeatureControlManager.updateFeatures @4.0 vs @3.9.0: KAFKA-16308 [3/N], KAFKA-18601
    ("feature_update_fails_as_a_whole", "4.0", "3.9"),
    ("metadata_version_floor_3_3_iv3", "4.0", "3.9"),
    ("kraft_version_feature_record_ignored", "4.0", "3.9"),   # KAFKA-18979
    # FeatureControlManager @4.1.0 (KAFKA-18858) and @4.2.0 (apache/kafka PR #20705)
    ("feature_control_metadata_version_unset_until_replayed", "4.1", "4.0"),
    ("metadata_downgrade_error_names_levels", "4.2", "4.1"),
    # BrokerServer @3.4.0: brokerSessionTimeoutMs / 2 // KAFKA-14392 (absent @3.3.0)
    ("broker_heartbeat_timeout_half_session", "3.4", "3.3"),
    # BrokerLifecycleManager @3.8.0: communicationInFlight // KAFKA-15950 (absent @3.7.0)
    ("broker_heartbeats_serialized", "3.8", "3.7"),
    # ZkData.ControllerZNode.encode: version 2 with kraftControllerEpoch @3.4.0 (KIP-866)
    ("controller_znode_v2", "3.4", "3.3"),
    # KAFKA-19432 (merged after the 4.1 branch)
    ("broker_heartbeat_interval_checked", "4.2", "4.1"),
    # KIP-1023 / KAFKA-17302 (release from the fact sheet, unverified)
    ("follower_fetch_from_last_tiered_offset", "4.3", "4.2"),
    # KAFKA-19975 / PR #21114 (3d267d4536): in 4.3.0 a9ce322153, not in 4.2.0 a18251bae0
    ("reassignment_waits_for_adding_replicas_only", "4.3", "4.2"),
    # KAFKA-16926 (6b187e9ff9): in 4.2.0 a18251bae0, not in 4.1.0 13f70256db
    ("raft_begin_quorum_epoch_skips_fetching_voters", "4.2", "4.1"),
    # KAFKA-16525 (b4f17a01e4): RequestManager.hasAnyInflightRequest @3.8.0, absent @3.7.0
    ("raft_request_manager_forgets_stale_connections", "3.8", "3.7"),
    # KAFKA-16538 (b97a130c08): FollowerState.updateVoterPeriodMs one fetch timeout @4.1.0
    # 13f70256db, three @4.0 4ae681446f
    ("raft_update_voter_period_one_fetch_timeout", "4.1", "4.0"),
    # KAFKA-17030 (e979fce94e): KafkaRaftClient.pollUnattachedCommon @4.0 4ae681446f, absent @3.9
    ("raft_unattached_voters_fetch", "4.0", "3.9"),
    # KAFKA-16532 (7495e70365): KafkaRaftClient.tryCompleteFetchRequest @3.9.0-rc3, absent @3.8.0
    ("raft_fetch_snapshot_for_empty_log", "3.9", "3.8"),
    # KAFKA-19354 (7339d65b27): pollFollowerAsObserver @4.2.0 a18251bae0, not @4.1.0 13f70256db
    ("raft_observer_fetches_from_best_node", "4.2", "4.1"),
    # KIP-1066 / KAFKA-19774 (a45d36ca5d): StripedReplicaPlacer's messages @4.3.0, not @4.2.0
    ("placement_messages_name_cordoned_dirs", "4.3", "4.2"),
    # KIP-1312 / KAFKA-20395 (c274a7348f): QuorumController.unregisterController @4.4
    # f86720838c, absent @4.3.0 a9ce322153
    ("controller_unregistration", "4.4", "4.3"),
    ("features_describe_node_id", "4.2", "4.1"),
    ("features_describe_padded_columns", "4.3", "4.2"),
    # KAFKA-19047 / PR #19296: ClusterControlManager.registerBroker's message @4.1.0
    ("duplicate_registration_message_names_session_expiry", "4.1", "4.0"),
    # KAFKA-18940 / PR #19156: PartitionRegistration.electionWasClean counts an ELR leader as clean
    ("unclean_metric_excludes_elr", "4.0", "3.9"),
    # KAFKA-19212 / PR #19590: TopicDelta election counts, ElectionFromEligibleLeaderReplicasPerSec
    ("election_metrics_from_records", "4.1", "4.0"),
    # PR #20629 (162db130f6): PartitionChangeBuilder.maybeUpdateLastKnownLeader @4.2.0
    ("last_known_leader_on_leader_loss", "4.2", "4.1"),
    # TopicCommand: KAFKA-14596 (tools, 3.7.0), KIP-351 / KIP-427 (2.3.0), PartitionDescription
    # @2.4.0, KAFKA-7139 (2.1.0), the AdminClient path's HashMap order (2.4.0)
    ("describe_report_options_combine", "3.7", "3.6"),
    ("describe_min_isr_filters", "2.3", "2.2"),
    ("describe_min_isr_filters_read_config", "2.4", "2.3"),
    ("describe_exclude_internal", "2.1", "2.0"),
    ("describe_topics_in_admin_result_order", "2.4", "2.3"),
    # the MBeans by release: KIP-96, KIP-143, KIP-164, KAFKA-5461, KAFKA-6753, KIP-427, KIP-352,
    # KIP-748, KAFKA-12670 (tests/test_replication_metrics_kafka.py)
    ("partition_replica_count_gauges", "0.10.2", "0.10.1"),
    ("failed_isr_updates_meter", "0.11.0", "0.10.2"),
    ("under_min_isr_metrics", "1.0", "0.11.0"),
    ("zk_global_counts", "1.0", "0.11.0"),
    ("offline_partitions_from_partition_states", "2.1", "2.0.1"),
    ("at_min_isr_metrics", "2.3", "2.2"),
    ("reassignment_metrics", "2.5", "2.4"),
    ("zk_broker_count_metrics", "3.1", "3.0"),
    ("kraft_unclean_elections_meter", "3.9", "3.8"),
    # raft-metrics current-state: KAFKA-14883 (observer), KAFKA-17642 (4.0 names)
    ("raft_state_observer", "3.5", "3.4"),
    ("raft_state_names_4_0", "4.0", "3.9"),
    # stray replicas: KAFKA-14616 (3.7, renamed -stray, kept), KAFKA-16814 (3.9, no topic id)
    ("kraft_stray_logs_renamed", "3.7", "3.6"),
    ("stray_log_without_topic_id_is_stray", "3.9", "3.8"),
]

# (rule, last profile where it is on, first profile where it is off).
UNTIL = [
    ("isr_lag_max_messages", "0.8.2", "0.9.0"),
    ("isr_meters_count_failed_writes", "2.3", "2.4"),   # KAFKA-8371
    ("describe_leader_minus_one", "2.3", "2.4"),
    ("preferred_replica_election_tool", "2.8", "3.0"),
    ("kraft_isr_shrink_bumps_leader_epoch", "3.5", "3.6"),
    ("zookeeper_mode", "3.9", "4.0"),
    ("raft_voted_state", "3.8", "3.9"),
    ("alter_isr_clear_pending_on_leader_and_isr", "2.8", "3.0"),
    ("invalid_producer_epoch_fences_producer", "2.6", "2.7"),   # KIP-588
]

# (rule, last profile before it, the profile it is on in, first profile after it): rules of one line
WINDOWS = [
    # KIP-392 (2.4) until KAFKA-10223 (2.6): a consumer's fetch for a known partition not hosted
    # here is REPLICA_NOT_AVAILABLE
    ("not_hosted_replica_not_available", "2.3", "2.4", "2.6"),
    # KAFKA-18138 (4.0): ClusterControlManager.activate tracks every registered broker; from 4.1
    # (KAFKA-19130) only the unfenced ones
    ("activate_tracks_fenced_brokers", "3.9", "4.0", "4.1"),
    # ReplicaManager.makeFollowers' `case None` (metadata cache's alive brokers): 0.9.0 - 3.9
    ("follower_skipped_without_alive_leader", "0.8.2", "0.9.0", "4.0"),
    # KIP-19 (0.9.0) until KIP-91 (2.1): queued batches expire by request.timeout.ms; KAFKA-3388
    # (0.10.0) walks each queue in order, skips muted partitions and counts a retry's backoff
    ("producer_batch_expiry_by_request_timeout", "0.8.2", "0.9.0", "2.1"),
    ("producer_batch_expiry_in_queue_order", "0.9.0", "0.10.0", "2.1"),
    # KAFKA-7897 (2.2) until KAFKA-10432 (2.7): LogSegment.recover skips leader epoch 0
    ("recovery_skips_leader_epoch_zero", "2.1", "2.2", "2.7"),
    # KAFKA-5793 (1.0) until KIP-360 (2.5): a batch of a producer the broker does not know, not
    # at sequence 0, is answered UNKNOWN_PRODUCER_ID
    ("unknown_producer_id_for_unknown_producer", "0.11.0", "1.0", "2.5"),
    # KAFKA-5494 (1.0) until KAFKA-6683 (1.1): a batch older than the five kept is answered
    # DUPLICATE_SEQUENCE_NUMBER
    ("duplicate_sequence_before_cached_batches", "0.11.0", "1.0", "1.1"),
    # KIP-98 (0.11) until KAFKA-7190 (2.4): a producer whose last batch is below the log start
    # is evicted (ProducerStateManager.truncateHead, loadFromSnapshot)
    ("producer_state_evicts_below_log_start", "0.10.2", "0.11.0", "2.4"),
    # KAFKA-5642 (1.1) until KAFKA-7482 (2.1): a controlled-shutdown election's LeaderAndIsr
    # skips the shutting-down broker
    ("controlled_shutdown_skips_shutting_down_broker", "1.0", "1.1", "2.1"),
    # KAFKA-5758 (1.0) until KAFKA-7104 (2.0): a follower fetch that moved the leader's HW is
    # answered with the new HW
    ("fetch_response_leader_state_after_follower_update", "0.11.0", "1.0", "2.0"),
    # KAFKA-15605 (3.7) until ZooKeeper's removal (4.0): a full LeaderAndIsr from a migrating
    # KRaft controller moves the logs it does not list aside
    ("full_leader_and_isr_finds_strays", "3.6", "3.7", "4.0"),
    # KIP-866 (3.5) until 4.0: a new KRaft cluster's activation also writes ZkMigrationStateRecord
    # NONE; KAFKA-17457 (3.9) only from metadata.version 3.6-IV1
    ("activation_writes_zk_migration_state", "3.4", "3.5", "4.0"),
    ("zk_migration_state_needs_metadata_transactions", "3.8", "3.9", "4.0"),
]


@pytest.mark.parametrize(("rule", "before", "on_in", "after"), WINDOWS)
def test_rule_is_on_in_its_releases_only(rule, before, on_in, after):
    assert [getattr(rules_for(v), rule) for v in ("0.8.2", before, on_in, after)] == \
        [False, False, True, False]
    assert getattr(rules_for(SUPPORTED_VERSIONS[-1]), rule) is False


@pytest.mark.parametrize(("rule", "on_in", "off_in"), SINCE)
def test_rule_switches_on_at_its_release(rule, on_in, off_in):
    assert getattr(rules_for(on_in), rule) is True
    assert getattr(rules_for(off_in), rule) is False
    assert getattr(rules_for("0.8.2"), rule) is False
    assert getattr(rules_for(SUPPORTED_VERSIONS[-1]), rule) is True


@pytest.mark.parametrize(("rule", "on_in", "off_in"), UNTIL)
def test_rule_switches_off_at_its_release(rule, on_in, off_in):
    assert getattr(rules_for(on_in), rule) is True
    assert getattr(rules_for(off_in), rule) is False
    assert getattr(rules_for("0.8.2"), rule) is True
    assert getattr(rules_for(SUPPORTED_VERSIONS[-1]), rule) is False


def test_every_rule_is_covered_by_the_tables():
    covered = [r for r, _, _ in SINCE] + [r for r, _, _ in UNTIL] + [w[0] for w in WINDOWS]
    assert sorted(covered) == sorted(rule_names())


def test_rules_for_brief_versions_spot_checks():
    r082 = rules_for("0.8.2")
    assert r082.isr_lag_max_messages and not r082.leader_epoch_truncation
    r0102 = rules_for("0.10.2")
    assert r0102.caught_up_previous_fetch_rule and not r0102.leader_epoch_truncation
    r24 = rules_for("2.4")
    assert r24.describe_space_after_colon and not r24.alter_isr
    assert not r24.describe_leader_minus_one
    r21 = rules_for("2.1")
    assert r21.describe_leader_minus_one and not r21.describe_space_after_colon
    r37 = rules_for("3.7")
    assert r37.hw_frozen_under_min_isr and not r37.describe_elr_columns
    assert r37.alter_partition_name and r37.zookeeper_mode
    assert rules_for("3.8").describe_elr_columns
    assert rules_for("3.7.1") == r37


def test_rules_default_version_is_the_newest_4x():
    assert rules_for() == rules_for("4.3")


def test_rules_patch_release_equals_minor_profile():
    assert rules_for("2.4.1") == rules_for("2.4")
    assert rules_for("2.4.1").version == "2.4"
    assert rules_for("2.0.0") == rules_for("2.0")
    assert rules_for("2.0.2") == rules_for("2.0.1")
    assert rules_for("2.0.1").version == "2.0.1"


def test_2_0_0_and_2_0_1_differ_in_the_2_0_1_replication_fixes():
    r200, r201, r21 = rules_for("2.0.0"), rules_for("2.0.1"), rules_for("2.1.0")
    changed = {n for n in rule_names() if getattr(r200, n) != getattr(r201, n)}
    assert changed == {"isr_expand_requires_epoch_start_offset",
                       "follower_truncates_after_missed_epoch",
                       "epoch_cache_assigned_on_become_leader",
                       "leader_epoch_assign_truncates_conflicts"}
    assert not r201.follower_truncates_on_every_new_epoch
    assert r21.follower_truncates_on_every_new_epoch and r21.follower_truncates_after_missed_epoch


def test_override_a_rule_by_name():
    rules = rules_for("3.7", {"hw_frozen_under_min_isr": False})
    assert rules.hw_frozen_under_min_isr is False
    assert rules.version == "3.7"
    # Everything else is untouched.
    baseline = rules_for("3.7")
    for name in rule_names():
        if name != "hw_frozen_under_min_isr":
            assert getattr(rules, name) == getattr(baseline, name)


def test_override_can_switch_an_old_rule_on():
    rules = rules_for("0.10.2", {"leader_epoch_truncation": True})
    assert rules.leader_epoch_truncation is True
    assert rules_for("0.10.2").leader_epoch_truncation is False


def test_unknown_rule_override_suggests_a_name():
    with pytest.raises(RuleError) as err:
        rules_for("3.7", {"hw_frozen_under_minisr": False})
    message = str(err.value)
    assert "Unknown rule 'hw_frozen_under_minisr'" in message
    assert "Did you mean 'hw_frozen_under_min_isr'?" in message


def test_unknown_rule_without_close_match_lists_known_rules():
    with pytest.raises(RuleError) as err:
        rules_for("3.7", {"zzz": True})
    assert "Did you mean" not in str(err.value)
    assert "alter_isr" in str(err.value)


def test_version_cannot_be_overridden_as_a_rule():
    with pytest.raises(RuleError, match="Unknown rule 'version'"):
        rules_for("3.7", {"version": "2.4"})  # type: ignore[dict-item]


@pytest.mark.parametrize("bad", [1, 0, "true", None])
def test_rule_override_value_must_be_bool(bad):
    with pytest.raises(RuleError, match="must be True or False"):
        rules_for("3.7", {"alter_isr": bad})


def test_rule_error_is_a_value_error():
    assert issubclass(RuleError, ValueError)


def test_a_profile_has_one_rules_object_and_overrides_never_reach_it():
    # rules_for remembers each profile's Rules (a cluster asks several times); an override
    # builds its own, before and after the profile's shared object exists
    flipped = rules_for("3.7.2", {"hw_frozen_under_min_isr": False})
    shared = rules_for("3.7")
    assert shared is rules_for("3.7.1") is rules_for(" 3.7 ")
    assert flipped is not shared and flipped.hw_frozen_under_min_isr is False
    assert shared.hw_frozen_under_min_isr is True
    again = rules_for("3.7", {"hw_frozen_under_min_isr": False})
    assert again == flipped and again is not shared
    assert rules_for("3.7").hw_frozen_under_min_isr is True
    with pytest.raises(RuleError):
        rules_for("3.7", {"alter_isr": "yes"})
    assert rules_for("3.7") is shared


@pytest.mark.parametrize("version, since", [(3.7, "3.7"), ("3.7", 3.7), (None, "2.4"),
                                            (["3.7"], "2.4"), ("3.x", "2.4"), ("3.7", "")])
def test_version_at_least_names_a_bad_version_whatever_its_type(version, since):
    # version_at_least remembers string pairs; anything else still gets VersionError
    with pytest.raises(VersionError):
        version_at_least(version, since)  # type: ignore[arg-type]
    with pytest.raises(VersionError):   # and again: a failure is never remembered as an answer
        version_at_least(version, since)  # type: ignore[arg-type]


def test_rules_are_hashable_and_deterministic():
    assert hash(rules_for("2.4")) == hash(rules_for("2.4.1"))
    assert rules_for("2.4") != rules_for("2.5")
    assert {rules_for("2.4"): 1}[rules_for("2.4.0")] == 1


# ---------------------------------------------------------------------------- describe_profile


def test_describe_profile_lists_differences_and_rules():
    text = describe_profile("2.4")
    lines = text.splitlines()
    assert lines[0].startswith("Kafka 2.4 profile")
    assert "Differs from the default profile 4.3" in text
    assert "alter_isr" in text and "KIP-497" in text
    assert "[x] describe_space_after_colon" in text
    assert "[ ] hw_frozen_under_min_isr" in text
    assert "broker replica.lag.time.max.ms = 10000 (4.3: 30000)" in text
    assert "producer acks = 1 (4.3: -1)" in text


def test_describe_default_profile():
    text = describe_profile()
    assert "This is the default profile." in text
    assert "Config defaults that differ" not in text
    assert "[x] hw_frozen_under_min_isr" in text


def test_describe_profile_is_deterministic():
    first = describe_profile("0.10.2.0").splitlines()
    second = describe_profile("0.10.2").splitlines()
    assert first[0] == "Kafka 0.10.2 profile (requested '0.10.2.0')"
    assert first[1:] == second[1:]


def test_describe_profile_rejects_bad_versions():
    with pytest.raises(VersionError):
        describe_profile("0.7")


def test_module_exports():
    for name in versions.__all__:
        assert hasattr(versions, name)


# ---------------------------------------------------------------------------- Kafka 4.x profiles


def test_4x_profiles_exist_and_4_3_stays_the_default():
    assert SUPPORTED_VERSIONS[-5:] == ("4.0", "4.1", "4.2", "4.3", "4.4")
    assert DEFAULT_VERSION == "4.3"


def test_elr_preview_in_4_0_and_default_from_4_1():
    # kafka.apache.org/40 and /41 operations/eligible-leader-replicas; EligibleLeaderReplicasVersion
    r39, r40, r41, r43 = (rules_for(v) for v in ("3.9", "4.0", "4.1", "4.3"))
    assert not r39.elr_available and not r39.elr_enabled_by_default
    assert r40.elr_available and not r40.elr_enabled_by_default
    assert r41.elr_available and r41.elr_enabled_by_default
    assert r43.elr_enabled_by_default and r43.describe_elr_columns


def test_kraft_rules_by_release():
    r32, r33, r40 = rules_for("3.2"), rules_for("3.3"), rules_for("4.0")
    # early access (kraft_mode) is not production readiness (KIP-833)
    assert r32.kraft_mode and not r32.kraft_production_ready
    assert r33.kraft_production_ready and r33.zookeeper_mode
    assert r40.kraft_production_ready and not r40.zookeeper_mode and r40.kraft_pre_vote
    assert not rules_for("3.9").kraft_pre_vote and rules_for("3.9").kraft_dynamic_quorum


def test_4x_profiles_differ_only_in_their_4x_rules():
    def changed(a, b):
        ra, rb = rules_for(a), rules_for(b)
        return {n for n in rule_names() if getattr(ra, n) != getattr(rb, n)}

    assert changed("3.9", "4.0") >= {"unclean_metric_excludes_elr"}
    assert changed("4.0", "4.1") == {"elr_enabled_by_default", "raft_election_loss_waits_timeout",
                                     "raft_fast_hwm_replication", "activate_tracks_fenced_brokers",
                                     "election_metrics_from_records",
                                     "raft_update_voter_static_quorum",
                                     "raft_update_voter_period_one_fetch_timeout",
                                     "fetch_response_needs_same_leader_epoch",
                                     "follower_append_bounded_by_leader_epoch",
                                     "feature_control_metadata_version_unset_until_replayed",
                                     "duplicate_registration_message_names_session_expiry"}
    assert changed("4.1", "4.2") == {"broker_heartbeat_interval_checked",
                                     "last_known_leader_on_leader_loss",
                                     "raft_begin_quorum_epoch_skips_fetching_voters",
                                     "raft_observer_fetches_from_best_node",
                                     "metadata_downgrade_error_names_levels",
                                     "features_describe_node_id"}
    assert changed("4.2", "4.3") == {"follower_fetch_from_last_tiered_offset",
                                     "reassignment_waits_for_adding_replicas_only",
                                     "placement_messages_name_cordoned_dirs",
                                     "features_describe_padded_columns"}
    # KIP-1312 (KAFKA-20395): the 4.4 change kafkasim models as a rule
    assert changed("4.3", "4.4") == {"controller_unregistration"}
