"""Every config key kafkasim declares, pinned to the Kafka release lines that have it (issue 30).

Each row is (kind, key, since, removed_in) with the source read for it. ``None`` since means the
key is in the oldest modelled line (0.8.2); ``None`` removed_in means it is still in 4.3.
Sources read for this table:

- [zk2kraft] Kafka 4.0 ``docs/zk2kraft.html`` ("Significant Changes in Kafka 4.0 Release",
  "Removal Zookeeper configs"): removes ``controlled.shutdown.max.retries``,
  ``controlled.shutdown.retry.backoff.ms``, ``leader.imbalance.per.broker.percentage``
  (KAFKA-18743, apache/kafka PR #18821), ``zookeeper.*``, ``inter.broker.protocol.version``,
  ``control.plane.listener.name``, ``broker.id.generation.enable``, ``reserved.broker.max.id``.
  ``controlled.shutdown.enable`` and ``controller.socket.timeout.ms`` are not in the list.
- [KIP-724] "log.message.format.version & message.format.version are removed" in 4.0.
- [RC@3.9] ``server/.../ReplicationConfigs.java`` at 3.9.0-rc3: still defines
  ``leader.imbalance.per.broker.percentage`` and ``unclean.leader.election.interval.ms``.
- [KC@2.8] ``KafkaConfig.scala`` at 2.8.0 (absent at 2.7.0): ``broker.session.timeout.ms``,
  ``broker.heartbeat.interval.ms``, ``process.roles``, ``node.id``,
  ``initial.broker.registration.timeout.ms`` (internal in 2.8, public from 3.0) (KIP-631);
  [RaftConfig@2.8] ``raft/.../RaftConfig.java`` at 2.8.0: ``controller.quorum.*`` (KIP-595).
- [CC@0.8.2] ``clients/.../ConsumerConfig.java`` and ``ProducerConfig.java`` at 0.8.2.2: no
  ``metadata.max.age.ms`` in the consumer, no ``request.timeout.ms`` in the producer.
- the rest: the fact sheet (``shared/reference/kafka-replication-facts.md``, section 0) and the
  ``change_ref`` of each ConfigDef (KIP-36, KIP-74, KIP-227, KIP-392, KIP-41, KIP-98, KIP-91,
  KIP-853, KIP-16).
"""

from __future__ import annotations

import pytest

from kafkasim.runtime.cluster import Cluster
from kafkasim.settings import versions
from kafkasim.settings.config import (
    KINDS,
    ConfigError,
    broker_config,
    describe_profile,
    keys_for,
    topic_config,
    validate_key,
)
from kafkasim.settings.versions import SUPPORTED_VERSIONS

VERSION_TABLE = [
    # broker (KafkaConfig / ReplicationConfigs / ServerLogConfigs / KRaftConfigs / QuorumConfig)
    ("broker", "broker.id", None, None),                       # node.id's synonym in KRaft
    ("broker", "broker.rack", "0.10.0", None),                  # KIP-36
    ("broker", "num.replica.fetchers", None, None),
    ("broker", "controller.socket.timeout.ms", None, None),     # not in [zk2kraft]
    ("broker", "replica.fetch.wait.max.ms", None, None),
    ("broker", "replica.fetch.min.bytes", None, None),
    ("broker", "replica.fetch.max.bytes", None, None),
    ("broker", "replica.fetch.response.max.bytes", "0.10.1", None),    # KIP-74
    ("broker", "fetch.max.bytes", "2.5", None),                 # KIP-541
    ("broker", "replica.fetch.backoff.ms", "0.9.0", None),
    ("broker", "replica.socket.timeout.ms", None, None),
    ("broker", "replica.lag.time.max.ms", None, None),
    ("broker", "replica.lag.max.messages", None, "0.9.0"),    # KIP-16, 0.9.0 upgrade notes
    ("broker", "replica.high.watermark.checkpoint.interval.ms", None, None),
    ("broker", "log.flush.interval.messages", None, None),
    ("broker", "log.flush.interval.ms", None, None),
    ("broker", "log.flush.scheduler.interval.ms", None, None),
    ("broker", "log.flush.offset.checkpoint.interval.ms", None, None),
    ("broker", "log.flush.start.offset.checkpoint.interval.ms", "0.11.0", None),
    ("broker", "log.initial.task.delay.ms", "3.8", None),   # KAFKA-16552, defineInternal
    ("broker", "log.retention.hours", None, None),
    ("broker", "log.retention.minutes", None, None),
    ("broker", "log.retention.ms", None, None),
    ("broker", "log.retention.check.interval.ms", None, None),   # KafkaConfig@0.8.2.0:155
    ("broker", "log.segment.bytes", None, None),
    ("broker", "message.max.bytes", None, None),
    ("broker", "min.insync.replicas", None, None),
    ("broker", "unclean.leader.election.enable", None, None),
    ("broker", "auto.create.topics.enable", None, None),
    ("broker", "default.replication.factor", None, None),
    ("broker", "num.partitions", None, None),
    ("broker", "auto.leader.rebalance.enable", None, None),
    ("broker", "leader.imbalance.check.interval.seconds", None, None),
    ("broker", "leader.imbalance.per.broker.percentage", None, "4.0"),  # [zk2kraft], [RC@3.9]
    ("broker", "controlled.shutdown.enable", None, None),                # not in [zk2kraft]
    ("broker", "controlled.shutdown.max.retries", None, "4.0"),          # [zk2kraft]
    ("broker", "controlled.shutdown.retry.backoff.ms", None, "4.0"),     # [zk2kraft]
    ("broker", "zookeeper.session.timeout.ms", None, "4.0"),             # [zk2kraft]
    ("broker", "broker.session.timeout.ms", "2.8", None),                # [KC@2.8]
    ("broker", "broker.heartbeat.interval.ms", "2.8", None),             # [KC@2.8]
    ("broker", "initial.broker.registration.timeout.ms", "2.8", None),   # [KC@2.8]
    ("broker", "unclean.leader.election.interval.ms", "3.9", None),      # [RC@3.9]
    ("broker", "metadata.max.idle.interval.ms", "3.3", None),   # KafkaConfig @3.3.0 (KIP-835)
    ("broker", "metadata.log.max.record.bytes.between.snapshots", "3.0", None),   # KIP-630
    ("broker", "metadata.log.max.snapshot.interval.ms", "3.4", None),   # KIP-876
    ("broker", "metadata.max.retention.bytes", "3.0", None),   # KafkaConfig @3.0.0
    ("broker", "metadata.max.retention.ms", "3.0", None),      # KafkaConfig @3.0.0
    ("broker", "controller.performance.sample.period.ms", "4.0", None),         # KAFKA-16446
    ("broker", "controller.performance.always.log.threshold.ms", "4.0", None),  # KAFKA-16446
    ("broker", "process.roles", "2.8", None),                            # [KC@2.8]
    ("broker", "node.id", "2.8", None),                                  # [KC@2.8]
    ("broker", "controller.quorum.voters", "2.8", None),                 # [RaftConfig@2.8]
    ("broker", "controller.quorum.bootstrap.servers", "3.9", None),      # KIP-853
    ("broker", "controller.quorum.auto.join.enable", "4.2", None),       # KAFKA-19078
    # KIP-1219: QuorumConfig @4.3.0 a9ce322153, absent @4.2.0 a18251bae0
    ("broker", "controller.quorum.fetch.max.bytes", "4.3", None),
    ("broker", "controller.quorum.fetch.snapshot.max.bytes", "4.3", None),
    ("broker", "controller.quorum.election.timeout.ms", "2.8", None),
    ("broker", "controller.quorum.fetch.timeout.ms", "2.8", None),
    ("broker", "controller.quorum.election.backoff.max.ms", "2.8", None),
    ("broker", "controller.quorum.append.linger.ms", "2.8", None),
    ("broker", "controller.quorum.request.timeout.ms", "2.8", None),
    ("broker", "controller.quorum.retry.backoff.ms", "2.8", None),
    ("broker", "max.incremental.fetch.session.cache.slots", "1.1", None),  # KIP-227
    ("broker", "replica.selector.class", "2.4", None),                     # KIP-392
    # topic (LogConfig / TopicConfig): none of the modelled ones was removed
    ("topic", "min.insync.replicas", None, None),
    ("topic", "unclean.leader.election.enable", None, None),
    ("topic", "flush.messages", None, None),
    ("topic", "flush.ms", None, None),
    ("topic", "retention.ms", None, None),
    ("topic", "segment.bytes", None, None),
    ("topic", "max.message.bytes", None, None),
    # producer (ProducerConfig); 4.0 removed no producer key kafkasim models
    ("producer", "acks", None, None),
    ("producer", "retries", None, None),
    ("producer", "linger.ms", None, None),
    ("producer", "batch.size", None, None),
    ("producer", "max.in.flight.requests.per.connection", None, None),
    ("producer", "request.timeout.ms", "0.9.0", None),          # KIP-19; [CC@0.8.2]
    ("producer", "delivery.timeout.ms", "2.1", None),           # KIP-91
    ("producer", "retry.backoff.ms", None, None),
    ("producer", "retry.backoff.max.ms", "3.7", None),          # KIP-580
    ("producer", "metadata.max.age.ms", None, None),            # [CC@0.8.2]
    ("producer", "max.block.ms", "0.9.0", None),                # KIP-19
    ("producer", "metadata.fetch.timeout.ms", None, "0.11.0"),  # deprecated by KIP-19
    ("producer", "enable.idempotence", "0.11.0", None),         # KIP-98
    ("producer", "client.id", None, None),
    # consumer (ConsumerConfig); 4.0 removed no consumer key kafkasim models
    ("consumer", "group.id", None, None),
    ("consumer", "auto.offset.reset", None, None),
    ("consumer", "enable.auto.commit", None, None),
    ("consumer", "auto.commit.interval.ms", None, None),
    ("consumer", "fetch.min.bytes", None, None),
    ("consumer", "fetch.max.wait.ms", None, None),
    ("consumer", "max.poll.records", "0.10.0", None),           # KIP-41
    ("consumer", "isolation.level", "0.11.0", None),            # KIP-98
    ("consumer", "max.partition.fetch.bytes", "0.9.0", None),
    ("consumer", "fetch.max.bytes", "0.10.1", None),            # KIP-74
    ("consumer", "allow.auto.create.topics", "2.3", None),      # KIP-361
    ("consumer", "client.rack", "2.4", None),                   # KIP-392
    ("consumer", "metadata.max.age.ms", "0.9.0", None),         # [CC@0.8.2]
    ("consumer", "request.timeout.ms", "0.9.0", None),          # ConsumerConfig @0.9.0.0
    ("consumer", "retry.backoff.ms", "0.9.0", None),            # ConsumerConfig @0.9.0.0
    ("consumer", "client.id", None, None),
]


def test_the_table_covers_every_declared_key():
    declared = {(kind, key) for kind, reg in KINDS.items() for key in reg}
    pinned = {(kind, key) for kind, key, _since, _removed in VERSION_TABLE}
    assert declared == pinned


@pytest.mark.parametrize(("kind", "key", "since", "removed_in"), VERSION_TABLE,
                         ids=[f"{k}:{n}" for k, n, _s, _r in VERSION_TABLE])
def test_since_and_removed_in_match_kafka(kind, key, since, removed_in):
    defn = KINDS[kind][key]
    assert (defn.since, defn.removed_in) == (since, removed_in)
    for version in SUPPORTED_VERSIONS:
        present = defn.exists_in(version)
        assert (key in keys_for(kind, version)) == present
        if not present:   # the error names the version that removed or added the key
            said = f"was removed in Kafka {removed_in} " if removed_in and \
                versions.version_at_least(version, removed_in) else \
                f"does not exist in Kafka {version}; it was added in {since}"
            with pytest.raises(ConfigError) as info:
                validate_key(kind, key, version)
            assert f"'{key}'" in str(info.value) and said in str(info.value)


@pytest.mark.parametrize("version", ["4.0", "4.1", "4.2", "4.3"])
def test_no_zookeeper_only_key_survives_in_4_x(version):
    assert [k for k, d in KINDS["broker"].items()
            if d.mode == "zookeeper" and d.exists_in(version)] == []
    cfg = broker_config(None, version)
    for key in ("leader.imbalance.per.broker.percentage", "controlled.shutdown.max.retries",
                "controlled.shutdown.retry.backoff.ms", "zookeeper.session.timeout.ms"):
        assert key not in cfg


def test_3_9_still_has_the_zookeeper_keys():
    cfg = broker_config(None, "3.9")
    assert cfg["leader.imbalance.per.broker.percentage"] == 10
    assert cfg["controlled.shutdown.max.retries"] == 3
    assert cfg["controlled.shutdown.retry.backoff.ms"] == 5000


def test_removed_percentage_error_names_version_jira_and_what_kraft_does():
    with pytest.raises(ConfigError) as e:
        broker_config({"leader.imbalance.per.broker.percentage": 5}, "4.3")
    text = str(e.value)
    assert "'leader.imbalance.per.broker.percentage' was removed in Kafka 4.0" in text
    assert "KAFKA-18743" in text and "#18821" in text
    assert "last release line with it is 3.9" in text
    assert "leader.imbalance.check.interval.seconds" in text   # what happens instead


def test_removed_controlled_shutdown_retries_error_says_what_kraft_does():
    with pytest.raises(ConfigError, match=r"removed in Kafka 4\.0.*heartbeats"):
        validate_key("broker", "controlled.shutdown.retry.backoff.ms", "4.0")


def test_removed_zookeeper_session_timeout_names_its_replacement():
    with pytest.raises(ConfigError, match=r"removed in Kafka 4\.0.*Use "
                                          r"'broker\.session\.timeout\.ms' instead"):
        validate_key("broker", "zookeeper.session.timeout.ms", "4.2")


def test_key_before_since_names_the_version_that_added_it():
    with pytest.raises(ConfigError, match=r"does not exist in Kafka 3\.8; it was added in 3\.9 "
                                          r"\(KIP-853\)"):
        validate_key("broker", "controller.quorum.bootstrap.servers", "3.8")


def test_unmodelled_keys_removed_in_4_0_say_so():
    with pytest.raises(ConfigError, match=r"'message\.format\.version' was removed in Kafka 4\.0 "
                                          r"\(KIP-724\)"):
        topic_config({"message.format.version": "3.0"}, None, "4.3")
    with pytest.raises(ConfigError, match=r"kafkasim does not model"):
        topic_config({"message.format.version": "3.0"}, None, "3.9")
    with pytest.raises(ConfigError, match=r"'inter\.broker\.protocol\.version' was removed in "
                                          r"Kafka 4\.0"):
        broker_config({"inter.broker.protocol.version": "3.9"}, "4.0")
    with pytest.raises(ConfigError, match=r"controller\.quorum\.bootstrap\.servers"):
        broker_config({"zookeeper.connect": "zk:2181"}, "4.1")


def test_a_4_x_cluster_refuses_the_percentage_and_keeps_its_config():
    with pytest.raises(ConfigError, match="removed in Kafka 4.0"):
        Cluster(3, seed=1, config={"leader.imbalance.per.broker.percentage": 5})
    c = Cluster(3, seed=1)
    c.run(5000)
    before = {b: dict(broker.config) for b, broker in c.brokers.items()}
    metadata_before = list(c.kraft.metadata_log())
    with pytest.raises(ConfigError, match="removed in Kafka 4.0"):
        c.alter_config("brokers", None, {"leader.imbalance.per.broker.percentage": 5})
    c.run(1000)
    assert {b: dict(broker.config) for b, broker in c.brokers.items()} == before
    written = list(c.kraft.metadata_log())[len(metadata_before):]
    assert [r for r in written if r[2] != "NoOpRecord"] == []    # no ConfigRecord was written
    assert "leader.imbalance.per.broker.percentage" not in c.broker_config


def test_a_3_9_zookeeper_cluster_still_reads_the_percentage():
    c = Cluster(3, seed=1, kafka_version="3.9", metadata_mode="zookeeper",
                config={"leader.imbalance.per.broker.percentage": 5})
    assert c.broker_config["leader.imbalance.per.broker.percentage"] == 5


def test_listings_of_a_version_leave_its_removed_keys_out():
    for key in ("leader.imbalance.per.broker.percentage", "controlled.shutdown.max.retries",
                "zookeeper.session.timeout.ms"):
        assert key in describe_profile("3.9")
        assert key not in describe_profile("4.3")
        assert key in keys_for("broker", "3.9")
        assert key not in keys_for("broker", "4.0")


def test_kip_1219_quorum_fetch_byte_limits():
    """KIP-1219 (KAFKA-19541): QuorumConfig @4.3.0 a9ce322153 defines
    controller.quorum.fetch.max.bytes and controller.quorum.fetch.snapshot.max.bytes (INT,
    default 1048576, atLeast(1)); QuorumConfig @4.2.0 a18251bae0 has neither."""
    for key in ("controller.quorum.fetch.max.bytes", "controller.quorum.fetch.snapshot.max.bytes"):
        assert validate_key("broker", key, "4.3").default_for("4.3") == 1048576
        assert broker_config({key: 1}, "4.4")[key] == 1
        with pytest.raises(ConfigError, match=f"{key}: Value must be at least 1"):
            broker_config({key: 0}, "4.3")
        with pytest.raises(ConfigError,
                           match=r"does not exist in Kafka 4\.2; it was added in 4\.3"):
            broker_config({key: 1}, "4.2")
