"""How a ``Cluster`` is put together: its version profile, brokers, KRaft controllers, the
engine's event handlers, and the start of every process.

``Cluster.__init__`` calls these in order; each returns what the cluster keeps (nothing here
holds state of its own). The three cluster-level events ("call", "metrics_sample",
"supervisor_start") are handled by the plain functions below, bound to the cluster with
``functools.partial`` so a snapshot pickles them.
"""

from __future__ import annotations

from functools import partial
from typing import NamedTuple

from kafkasim.runtime.broker import Broker
from kafkasim.runtime.clients.producer import Producer
from kafkasim.settings import config as kconfig
from kafkasim.settings import versions
from kafkasim.settings.exceptions import ClusterError
from kafkasim.settings.modes import metadata_mode_for

KRAFT_READY_TIMEOUT_MS = 60000


class VersionProfile(NamedTuple):
    """The Kafka version a cluster runs, its rule table, its metadata mode ("zookeeper" or
    "kraft"), the broker overrides given and the broker configuration they resolve to."""

    kafka_version: str
    rules: versions.Rules
    metadata_mode: str
    broker_overrides: dict
    broker_config: dict


def version_profile(kafka_version: str | None, rules: dict | None, config: dict | None,
                    metadata_mode: str | None) -> VersionProfile:
    """The version profile, its rule table, the metadata mode (ZooKeeper or KRaft) and
    the broker configuration they imply."""
    # a version of no modelled release line ("4.9", "5.0", "3.10") is refused with the list,
    # as scenario and sweep files are; a patch release maps to its line ("3.7.1" -> 3.7)
    version = versions.check_known_version(kafka_version or versions.DEFAULT_VERSION)
    table = versions.rules_for(version, rules)
    try:
        mode = metadata_mode_for(version, metadata_mode, rules=table)
    except ValueError as exc:
        raise ClusterError(str(exc)) from None
    overrides = dict(config or {})
    broker_config = kconfig.with_simulator_fallbacks(
        kconfig.broker_config(overrides, version, metadata_mode=mode))
    return VersionProfile(version, table, mode, overrides, broker_config)


def create_brokers(cluster, ids: list[int], racks: dict[int, str],
                   log_dirs: str | None) -> dict[int, Broker]:
    """One Broker per id with the cluster's broker config plus its broker.id/broker.rack."""
    brokers: dict[int, Broker] = {}
    for b in ids:
        cfg = dict(cluster.broker_config)
        cfg["broker.id"] = b
        if b in racks:
            cfg["broker.rack"] = racks[b]
        brokers[b] = Broker(cluster, b, racks.get(b), cfg,
                            None if log_dirs is None else f"{log_dirs}/broker-{b}")
    return brokers


def create_controllers(cluster, controllers, broker_ids):
    """KRaft: the controller quorum (a KRaftControlPlane, returned) and each broker's
    lifecycle manager."""
    from kafkasim.runtime.broker_lifecycle import BrokerLifecycleManager
    from kafkasim.runtime.kraft_cluster import (
        KRaftControlPlane,
        controller_ids,
        kraft_settings,
        raft_options,
    )
    from kafkasim.runtime.metadata_cache import KRaftMetadataCache
    ids = controller_ids(controllers, broker_ids)
    settings = kraft_settings(cluster.kafka_version, cluster.rules, cluster.broker_config,
                              cluster.engine.seed)
    options = raft_options(cluster.rules)
    kraft = KRaftControlPlane(cluster, ids, settings, options)
    for b in cluster.brokers.values():
        b.lifecycle = BrokerLifecycleManager(b, ids, b.config, options)
        b.metadata = KRaftMetadataCache(b.id)
        format_log_dir(cluster, b)
    return kraft


#: ``Properties.store``'s date comment: the simulated clock's 0, the epoch (Kafka writes the
#: wall-clock time of ``kafka-storage format``)
META_PROPERTIES_DATE = "Thu Jan 01 00:00:00 UTC 1970"


def format_log_dir(cluster, broker) -> None:
    """``kafka-storage format`` (KRaft): the log dir's ``meta.properties``, as MetaProperties
    .toProperties and PropertiesUtils.writePropertiesFile write it (``Properties.store`` with an
    empty comment, then the date; keys sorted, as JDK 18+ stores them): version 1, the cluster
    id, the node id and, since 3.7 (KIP-858), the directory's own Uuid."""
    from kafkasim.runtime.describe import cluster_id, directory_id

    seed = cluster.engine.seed
    props = {"cluster.id": cluster_id(seed), "node.id": str(broker.id), "version": "1"}
    if versions.version_at_least(cluster.kafka_version, "3.7"):
        props["directory.id"] = directory_id(broker.id, seed)
    lines = ["#", "#" + META_PROPERTIES_DATE, *(f"{k}={v}" for k, v in sorted(props.items()))]
    broker.log_manager.log_dir.write_atomic("meta.properties", "\n".join(lines) + "\n")


def register_handlers(cluster) -> None:
    """The engine's event kinds and what handles them."""
    e = cluster.engine
    transport = cluster.transport
    e.on("deliver", transport.deliver)
    e.on("disconnect", transport.disconnect)
    e.on("connect_failed", transport.connect_failed)
    timers = cluster.timeout_scheduler
    e.on("broker_timer", timers.broker_timer)
    e.on("client_timer", timers.client_timer)
    e.on("timeouts", timers.fire_timeouts)
    e.on("metrics_sample", partial(metrics_sample, cluster))
    e.on("call", partial(call, cluster))
    e.on("supervisor_start", partial(supervisor_start, cluster))
    cluster.zk_control_plane.register_handlers(e)
    if cluster.kraft is not None:
        e.on("controller_node_timer", cluster.kraft.controller_node_timer)


def start_processes(cluster, broker_ids: list[int], *, controllers_first: bool = False) -> None:
    """Start the KRaft controller nodes and every broker, schedule the first metrics sample,
    and run until the cluster is ready.

    ``controllers_first`` (``Cluster(kraft_start="controllers_first")``): start the brokers
    only once the controllers' quorum has elected its leader, as an operator who starts the
    controllers first does. Started together, each broker's raft client (an observer) asks
    one voter after another for the leader while the election runs, about a second in which
    the voters answer NOT_LEADER_OR_FOLLOWER at once and it asks again (KafkaRaftClient
    .maybeSendAnyVoterFetch; RequestManager.onResponseResult makes the voter ready again
    on a handled error): a thousand Fetch round trips before anything else happens."""
    kraft = cluster.kraft
    if kraft is not None:
        for node in kraft.nodes.values():
            node.start()
    if kraft is not None and controllers_first:
        cluster.engine.schedule(0, "metrics_sample")
        cluster.run_until(lambda c: c.kraft.active() is not None,
                          timeout_ms=KRAFT_READY_TIMEOUT_MS)
        for b in broker_ids:
            cluster.brokers[b].start()
    else:
        for b in broker_ids:
            cluster.brokers[b].start()
        cluster.engine.schedule(0, "metrics_sample")
    cluster.run(0)
    if kraft is not None:
        # KRaft start-up: the quorum elects a leader and every broker registers, catches up
        # with the metadata log and is unfenced (BrokerServer.startup blocks on it), as
        # ZooKeeper mode's registration does at construction
        cluster.run_until(lambda c: c.kraft.ready(), timeout_ms=KRAFT_READY_TIMEOUT_MS)


def call(cluster, fn) -> None:
    """The "call" event (``Cluster.at``): ``fn(cluster)``."""
    fn(cluster)


def metrics_sample(cluster) -> None:
    """The "metrics_sample" event, every metrics interval: spill or compact checked trace rows
    and metrics rows (``kafkasim.runtime.rows``), compact the timeout queues, the producers'
    settled results (``ProduceResults.compact``) and the logs' newest idempotent batch headers
    (``ProducerBatches.pack``) and sample the metrics."""
    cluster.trace.compact()   # every row so far was checked: spill or compact them
    compact = getattr(cluster.metrics.rows, "compact", None)
    if compact is not None:
        compact()
    cluster.timeout_scheduler.compact()
    for broker in cluster.brokers.values():
        for log in broker.logs.values():
            log.producer_batches.pack()
    for client in cluster.clients.values():
        if isinstance(client, Producer):   # its settled results as columns
            client.results.compact()
    cluster.metrics.sample(cluster.engine.now, cluster.brokers.values(),
                           None if cluster.kraft is None else cluster.kraft.nodes.values())
    cluster.engine.schedule(cluster.metrics.interval_ms, "metrics_sample")


def supervisor_start(cluster, broker: int) -> None:
    """The "supervisor_start" event (``Cluster.start(broker, retry=True)``): start the broker
    again if it is still stopped."""
    if cluster.brokers[broker].state == "stopped":
        cluster.start(broker, retry=True)
