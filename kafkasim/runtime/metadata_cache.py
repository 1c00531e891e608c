"""A broker's metadata cache (kafka.server.MetadataCache): what it tells clients, and the ISR
and replica-selector checks that ask it which brokers are alive.

Two caches, as in Kafka (3.7 has both; 4.0 only the KRaft one):

* ``ZkMetadataCache`` (ZooKeeper mode): the controller's UpdateMetadata requests fill it
  (``update_metadata``: the live brokers with their listeners replace the previous ones; each
  partition state is added, or removed when its leader is -2, LeaderDuringDelete). A broker is
  alive when the last UpdateMetadata listed it.
* ``KRaftMetadataCache``: a view of the broker's ``MetadataImage`` (``set_image``). A broker is
  alive when it is registered and not fenced (``getAliveBrokers``, ``hasAliveBroker``,
  ``getPartitionReplicaEndpoints``); a registered broker in controlled shutdown is alive.

``get_topic_metadata`` answers a Metadata request's topics as Kafka's ``getPartitionMetadata``
does: a leader that is not alive (ZooKeeper) or not registered (KRaft) is LEADER_NOT_AVAILABLE
with no leader id; a leader without the request's listener is LISTENER_NOT_FOUND (Metadata v6+)
or LEADER_NOT_AVAILABLE; with ``error_unavailable_endpoints`` (Metadata v0) the replicas and
ISR keep only brokers alive with the listener, and a shorter list is REPLICA_NOT_AVAILABLE.

kafkasim's own fields, read by the rest of the broker: ``controller_id``, ``controller_epoch``,
``live_brokers`` (the brokers whose replicas may be in an ISR: ZooKeeper, the alive ones;
KRaft, the unfenced ones not in controlled shutdown, Partition.isReplicaIsrEligible) and
``partitions`` ((topic, partition) -> PartitionState).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, ClassVar, NamedTuple

from kafkasim.core import errors as E
from kafkasim.core.messages import (
    DEFAULT_LISTENER,
    ZERO_UUID,
    PartitionState,
    UpdateMetadataBroker,
    UpdateMetadataRequest,
)
from kafkasim.settings.versions import rules_for

if TYPE_CHECKING:
    from kafkasim.control.kraft.image import MetadataImage
    from kafkasim.settings.versions import ClientRules

LEADER_DURING_DELETE = -2   # LeaderAndIsr.LeaderDuringDelete: the partition's topic is deleted
NO_LEADER_ID = -1           # MetadataResponse.NO_LEADER_ID
KRAFT_CONTROLLER_EPOCH = -1  # KRaft partition states carry no controller epoch
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state"})   # Topic.isInternal
LISTENER_NOT_FOUND = "LISTENER_NOT_FOUND"
REPLICA_NOT_AVAILABLE = "REPLICA_NOT_AVAILABLE"


class Node(NamedTuple):
    """org.apache.kafka.common.Node: a broker's address on one listener."""

    id: int
    host: str
    port: int
    rack: str | None = None

    def is_empty(self) -> bool:
        """``isEmpty``: no host or no port (Node.noNode())."""
        return not self.host or self.port < 0


NO_NODE = Node(-1, "", -1)   # Node.noNode()


class BrokerMetadata(NamedTuple):
    """kafka.admin.BrokerMetadata: a live broker's id and rack."""

    id: int
    rack: str | None


@dataclass(frozen=True, slots=True)
class MetadataResponsePartition:
    """MetadataResponseData.MetadataResponsePartition."""

    error_code: str
    partition_index: int
    leader_id: int
    leader_epoch: int
    replica_nodes: tuple[int, ...]
    isr_nodes: tuple[int, ...]
    offline_replicas: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True)
class MetadataResponseTopic:
    """MetadataResponseData.MetadataResponseTopic."""

    error_code: str
    name: str
    topic_id: str
    is_internal: bool
    partitions: tuple[MetadataResponsePartition, ...]


@dataclass(slots=True)
class MetadataCache:
    """What the two caches share: kafkasim's fields and Kafka's queries over
    ``_partition_states``, ``_alive_node`` and ``_leader_alive`` (each cache's own)."""

    #: whether this is KRaftMetadataCache (Partition's ``case kRaftMetadataCache``: broker
    #: epochs, fencing and controlled shutdown decide ISR eligibility)
    kraft: ClassVar[bool] = False
    broker_id: int = -1
    controller_id: int = -1
    controller_epoch: int = -1
    live_brokers: tuple[int, ...] = ()
    partitions: dict[tuple[str, int], PartitionState] = field(default_factory=dict)
    #: the Kafka release whose getPartitionMetadata answers (None: the newest); its rules are
    #: ``rules.clients.metadata_*``
    kafka_version: str | None = None

    @staticmethod
    def zk_metadata_cache(broker_id: int, metadata_version: str | None = None
                          ) -> ZkMetadataCache:
        """``MetadataCache.zkMetadataCache(brokerId, metadataVersion)``; the version is the
        Kafka release (``"2.4"``) the cache answers as."""
        return ZkMetadataCache(broker_id, kafka_version=metadata_version)

    @property
    def client_rules(self) -> ClientRules:
        """The ClientRules of ``kafka_version`` (the newest release's without one)."""
        rules = rules_for(self.kafka_version) if self.kafka_version else rules_for()
        return rules.clients

    @staticmethod
    def kraft_metadata_cache(broker_id: int) -> KRaftMetadataCache:
        """``MetadataCache.kRaftMetadataCache(brokerId)``."""
        return KRaftMetadataCache(broker_id)

    k_raft_metadata_cache = kraft_metadata_cache

    # -- each cache's own ---------------------------------------------------------------------
    def _partition_states(self, topic: str) -> list[PartitionState] | None:
        raise NotImplementedError

    def _alive_node(self, broker_id: int, listener_name: str) -> Node | None:
        """getAliveEndpoint: the leader's node on the listener, None if it has none."""
        raise NotImplementedError

    def _leader_alive(self, broker_id: int) -> bool:
        """Whether a leader without the listener is still alive (LISTENER_NOT_FOUND)."""
        raise NotImplementedError

    def _has_alive_endpoint(self, broker_id: int, listener_name: str) -> bool:
        """hasAliveEndpoint / maybeFilterAliveReplicas' test."""
        raise NotImplementedError

    def _offline_replicas(self, st: PartitionState, listener_name: str) -> tuple[int, ...]:
        raise NotImplementedError

    def topic_id(self, topic: str) -> str:
        return ZERO_UUID

    # -- Kafka's queries ----------------------------------------------------------------------
    def get_topic_metadata(self, topics, listener_name: str = DEFAULT_LISTENER,
                           error_unavailable_endpoints: bool = False,
                           error_unavailable_listeners: bool = False
                           ) -> list[MetadataResponseTopic]:
        """``getTopicMetadata``: one MetadataResponseTopic per known topic of ``topics`` (an
        unknown one is left out), its partitions in order."""
        out = []
        for topic in topics:
            states = self._partition_states(topic)
            if states is None:
                continue
            partitions = tuple(
                self._partition_metadata(st, listener_name, error_unavailable_endpoints,
                                         error_unavailable_listeners)
                for st in sorted(states, key=lambda st: st.partition))
            out.append(MetadataResponseTopic(E.NONE, topic, self.topic_id(topic),
                                             topic in INTERNAL_TOPICS, partitions))
        return out

    def _filter_alive(self, brokers: tuple[int, ...], listener_name: str,
                      error_unavailable_endpoints: bool) -> tuple[int, ...]:
        """maybeFilterAliveReplicas: every broker, or (Metadata v0) only the alive ones with
        the listener."""
        if not error_unavailable_endpoints:
            return tuple(brokers)
        return tuple(b for b in brokers if self._has_alive_endpoint(b, listener_name))

    def _partition_metadata(self, st: PartitionState, listener_name: str,
                            error_unavailable_endpoints: bool,
                            error_unavailable_listeners: bool) -> MetadataResponsePartition:
        """getPartitionMetadata for one partition."""
        replicas = self._filter_alive(st.replicas, listener_name, error_unavailable_endpoints)
        isr = self._filter_alive(st.isr, listener_name, error_unavailable_endpoints)
        offline = self._offline_replicas(st, listener_name)
        leader = self._alive_node(st.leader, listener_name)
        if leader is None:
            return self._leader_not_available(st, listener_name, error_unavailable_listeners,
                                              replicas, isr, offline)
        error = E.NONE
        if len(replicas) < len(st.replicas) or len(isr) < len(st.isr):
            error = REPLICA_NOT_AVAILABLE
        return MetadataResponsePartition(error, st.partition, leader.id, st.leader_epoch,
                                         replicas, isr, offline)

    def _leader_not_available(self, st: PartitionState, listener_name: str,
                              error_unavailable_listeners: bool, replicas: tuple[int, ...],
                              isr: tuple[int, ...], offline: tuple[int, ...]
                              ) -> MetadataResponsePartition:
        """getPartitionMetadata's ``case None``: no leader node on the listener. LISTENER_NOT_FOUND
        (2.0+, Metadata v6+) when the leader is alive (2.0-2.6: when the cache's own broker
        is, KAFKA-10312); the ISR is empty before 2.4 (KAFKA-8442), the leader epoch -1 before
        2.5 (KAFKA-9261)."""
        rules = self.client_rules
        error = E.LEADER_NOT_AVAILABLE
        alive_id = st.leader if rules.metadata_listener_error_checks_leader else self.broker_id
        if error_unavailable_listeners and rules.metadata_listener_not_found \
                and self._leader_alive(alive_id):
            error = LISTENER_NOT_FOUND
        if not rules.metadata_isr_without_leader:
            isr = ()
        epoch = st.leader_epoch if rules.metadata_leader_epoch_without_leader else -1
        return MetadataResponsePartition(error, st.partition, NO_LEADER_ID, epoch, replicas, isr,
                                         offline)

    def get_partition_info(self, topic: str, partition_id: int) -> PartitionState | None:
        """``getPartitionInfo``: the partition's state, None if the cache has none."""
        for st in self._partition_states(topic) or ():
            if st.partition == partition_id:
                return st
        return None

    def get_all_topics(self) -> set[str]:
        raise NotImplementedError

    def get_topic_partitions(self, topic: str) -> set[tuple[str, int]]:
        return {(topic, st.partition) for st in self._partition_states(topic) or ()}

    def num_partitions(self, topic: str) -> int | None:
        states = self._partition_states(topic)
        return None if states is None else len(states)

    def contains(self, topic_or_partition: str | tuple[str, int]) -> bool:
        """``contains(topic)`` / ``contains(TopicPartition)``."""
        if isinstance(topic_or_partition, str):
            return self._partition_states(topic_or_partition) is not None
        return self.get_partition_info(*topic_or_partition) is not None

    def get_alive_broker_nodes(self, listener_name: str = DEFAULT_LISTENER) -> list[Node]:
        """``getAliveBrokerNodes``: the alive brokers' nodes on the listener, by id."""
        nodes = (self.get_alive_broker_node(b.id, listener_name) for b in self.get_alive_brokers())
        return sorted((n for n in nodes if n is not None), key=lambda n: n.id)

    def get_alive_brokers(self) -> list[BrokerMetadata]:
        raise NotImplementedError

    def get_alive_broker_node(self, broker_id: int, listener_name: str = DEFAULT_LISTENER
                              ) -> Node | None:
        raise NotImplementedError

    def has_alive_broker(self, broker_id: int) -> bool:
        raise NotImplementedError


@dataclass(slots=True)
class ZkMetadataCache(MetadataCache):
    """kafka.server.metadata.ZkMetadataCache: what the controller's UpdateMetadata said."""

    # aliveBrokers: broker id -> its UpdateMetadataBroker (listeners by name, rack)
    alive_brokers: dict[int, UpdateMetadataBroker] = field(default_factory=dict)
    # MetadataSnapshot.topicIds (KIP-516, UpdateMetadata v7+, 2.8): topic -> id
    topic_ids: dict[str, str] = field(default_factory=dict)

    def update_metadata(self, correlation_id: int, request: UpdateMetadataRequest
                        ) -> list[tuple[str, int]]:
        """``updateMetadata``: the request's live brokers replace the cached ones; each
        partition state is cached, or removed when its leader is LeaderDuringDelete (-2). The
        partitions removed, in the request's order. (ReplicaManager.maybeUpdateMetadataCache
        refuses an older controller epoch first, and records the request's.)"""
        self.controller_id = request.controller_id if request.controller_id >= 0 else -1
        brokers = [b if isinstance(b, UpdateMetadataBroker) else UpdateMetadataBroker(b)
                   for b in request.live_brokers]
        self.alive_brokers = {b.id: b for b in brokers}
        self.live_brokers = tuple(b.id for b in brokers)
        for topic, topic_id in request.topic_ids:   # ZkMetadataCache.scala:548@3.9.0-rc3
            if topic_id == ZERO_UUID:
                self.topic_ids.pop(topic, None)
            else:
                self.topic_ids[topic] = topic_id
        deleted: dict[tuple[str, int], None] = {}
        for st in request.partition_states:
            tp = (st.topic, st.partition)
            if st.leader == LEADER_DURING_DELETE:
                self.partitions.pop(tp, None)
                deleted[tp] = None
            else:
                self.partitions[tp] = st
                deleted.pop(tp, None)
        return list(deleted)

    def _partition_states(self, topic: str) -> list[PartitionState] | None:
        states = [st for (t, _p), st in self.partitions.items() if t == topic]
        return states or None

    def topic_id(self, topic: str) -> str:
        """``getTopicId``: the id UpdateMetadata gave ``topic``, Uuid.ZERO_UUID without one."""
        return self.topic_ids.get(topic, ZERO_UUID)

    def _alive_node(self, broker_id: int, listener_name: str) -> Node | None:
        return self.get_alive_broker_node(broker_id, listener_name)

    def _leader_alive(self, broker_id: int) -> bool:
        return broker_id in self.alive_brokers

    def _has_alive_endpoint(self, broker_id: int, listener_name: str) -> bool:
        return self.get_alive_broker_node(broker_id, listener_name) is not None

    def _offline_replicas(self, st: PartitionState, listener_name: str) -> tuple[int, ...]:
        return ()   # (UpdateMetadataPartitionState.offlineReplicas: no log dir fails here)

    def get_all_topics(self) -> set[str]:
        return {t for t, _p in self.partitions}

    def get_alive_brokers(self) -> list[BrokerMetadata]:
        return [BrokerMetadata(b.id, b.rack) for b in self.alive_brokers.values()]

    def get_alive_broker_node(self, broker_id: int, listener_name: str = DEFAULT_LISTENER
                              ) -> Node | None:
        """``getAliveBrokerNode``: the broker's node on the listener, if it is alive and has
        that listener."""
        broker = self.alive_brokers.get(broker_id)
        if broker is None:
            return None
        for ep in broker.endpoints:
            if ep.listener == listener_name:
                return Node(broker.id, ep.host, ep.port, broker.rack)
        return None

    def has_alive_broker(self, broker_id: int) -> bool:
        return broker_id in self.alive_brokers

    def get_partition_replica_endpoints(self, tp: tuple[str, int], listener_name: str
                                        ) -> dict[int, Node]:
        """``getPartitionReplicaEndpoints``: the partition's replicas alive with the listener."""
        st = self.partitions.get(tp)
        if st is None:
            return {}
        nodes = {r: self.get_alive_broker_node(r, listener_name) for r in st.replicas}
        return {r: n for r, n in nodes.items() if n is not None and not n.is_empty()}


def partition_state(tp: tuple[str, int], reg) -> PartitionState:
    """A KRaft PartitionRegistration as the PartitionState the caches hold (no controller
    epoch: -1, as KRaftMetadataCache.getPartitionInfo answers)."""
    return PartitionState(tp[0], tp[1], KRAFT_CONTROLLER_EPOCH, reg.leader, reg.leader_epoch,
                          tuple(reg.isr), reg.partition_epoch, tuple(reg.replicas),
                          reg.leader_recovery_state, adding_replicas=tuple(reg.adding_replicas),
                          removing_replicas=tuple(reg.removing_replicas))


class FinalizedFeatures(NamedTuple):
    """``org.apache.kafka.server.common.FinalizedFeatures``: the finalized feature levels a
    broker's metadata holds (metadata.version among them) and the metadata offset they are as
    of (``finalized_features_epoch``, what ApiVersions answers as FinalizedFeaturesEpoch)."""

    metadata_version: int
    finalized_features: dict[str, int]
    finalized_features_epoch: int


@dataclass(slots=True)
class KRaftMetadataCache(MetadataCache):
    """kafka.server.metadata.KRaftMetadataCache: a view of the broker's MetadataImage."""

    kraft: ClassVar[bool] = True
    image: MetadataImage | None = None

    def set_image(self, image: MetadataImage, changed=None) -> None:
        """``setImage``; and kafkasim's fields: the ISR-eligible brokers, and the partition
        states of ``changed`` (None: every partition)."""
        self.image = image
        self.live_brokers = image.live_brokers()
        parts = self.partitions
        for tp in image.partitions if changed is None else changed:
            reg = image.partitions.get(tp)
            if reg is None:
                parts.pop(tp, None)
            else:
                parts[tp] = partition_state(tp, reg)

    def current_image(self) -> MetadataImage | None:
        return self.image

    def features(self, kraft_version: int = 0) -> FinalizedFeatures:
        """``features``: the image's finalized levels, kraft.version (the Raft client's level,
        ``kraft_version``) when above 0, as of the image's offset (KRaftMetadataCache.java:514
        @4.3.0; 3.9 adds kraft.version even at 0, which describes the same)."""
        image = self.image
        if image is None or "metadata.version" not in image.features:
            raise RuntimeError("No metadata.version in the metadata image yet")
        finalized = dict(image.features)
        if kraft_version > 0:
            finalized["kraft.version"] = kraft_version
        return FinalizedFeatures(image.features["metadata.version"], finalized, image.offset)

    def _brokers(self) -> dict:
        return self.image.brokers if self.image is not None else {}

    def _partition_states(self, topic: str) -> list[PartitionState] | None:
        image = self.image
        if image is None or topic not in image.topic_ids:
            return None
        return [partition_state(tp, reg) for tp, reg in image.partitions.items()
                if tp[0] == topic]

    def topic_id(self, topic: str) -> str:
        image = self.image
        return image.topic_ids.get(topic, ZERO_UUID) if image is not None else ZERO_UUID

    def _alive_node(self, broker_id: int, listener_name: str) -> Node | None:
        # (Kafka's getAliveEndpoint: any registered broker, fenced or not)
        broker = self._brokers().get(broker_id)
        node = broker.node(listener_name) if broker is not None else None
        return Node(*node) if node is not None else None

    def _leader_alive(self, broker_id: int) -> bool:
        return broker_id in self._brokers()

    def _has_alive_endpoint(self, broker_id: int, listener_name: str) -> bool:
        return self.get_alive_broker_node(broker_id, listener_name) is not None

    def _offline_replicas(self, st: PartitionState, listener_name: str) -> tuple[int, ...]:
        """getOfflineReplicas: replicas not registered, fenced, or without the listener."""
        return tuple(r for r in st.replicas if not self._has_alive_endpoint(r, listener_name))

    def get_all_topics(self) -> set[str]:
        return set(self.image.topic_ids) if self.image is not None else set()

    def get_alive_brokers(self) -> list[BrokerMetadata]:
        return [BrokerMetadata(b.id, b.rack) for b in self._brokers().values() if not b.fenced]

    def get_alive_broker_node(self, broker_id: int, listener_name: str = DEFAULT_LISTENER
                              ) -> Node | None:
        broker = self._brokers().get(broker_id)
        if broker is None or broker.fenced:
            return None
        node = broker.node(listener_name)
        return Node(*node) if node is not None else None

    def has_alive_broker(self, broker_id: int) -> bool:
        broker = self._brokers().get(broker_id)
        return broker is not None and not broker.fenced

    def is_broker_fenced(self, broker_id: int) -> bool:
        broker = self._brokers().get(broker_id)
        return broker is not None and broker.fenced

    def is_broker_shutting_down(self, broker_id: int) -> bool:
        broker = self._brokers().get(broker_id)
        return broker is not None and broker.in_controlled_shutdown

    def get_alive_broker_epoch(self, broker_id: int) -> int | None:
        """``getAliveBrokerEpoch``: the broker epoch of an unfenced registered broker."""
        broker = self._brokers().get(broker_id)
        return broker.epoch if broker is not None and not broker.fenced else None

    def get_partition_replica_endpoints(self, tp: tuple[str, int], listener_name: str
                                        ) -> dict[int, Node]:
        """``getPartitionReplicaEndpoints``: the unfenced registered brokers with the listener
        among the replicas -- of every partition of the topic, as Kafka's loop does."""
        image = self.image
        if image is None or tp[0] not in image.topic_ids:
            return {}
        out = {}
        for (topic, _p), reg in image.partitions.items():
            if topic != tp[0]:
                continue
            for r in reg.replicas:
                node = self.get_alive_broker_node(r, listener_name)
                if node is not None and not node.is_empty():
                    out[r] = node
        return out


def new_metadata_cache(broker_id: int, kraft: bool, kafka_version: str | None = None
                       ) -> MetadataCache:
    """The cache a broker process starts with: KRaft's, or ZooKeeper's answering as the
    broker's Kafka release (``MetadataCache.zkMetadataCache(brokerId, metadataVersion)``)."""
    if kraft:
        return KRaftMetadataCache(broker_id)
    return MetadataCache.zk_metadata_cache(broker_id, kafka_version)
