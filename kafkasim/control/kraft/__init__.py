"""The KRaft control plane (Kafka 2.8+, the only mode since 4.0; KIP-500, KIP-595, KIP-631).

Pure, I/O-free modules named for Kafka's classes:

- ``records``: the metadata records of ``__cluster_metadata`` (RegisterBrokerRecord,
  PartitionRecord, PartitionChangeRecord, ...) and the registrations they build;
- ``metadata_version``: ``metadata.version`` levels and the features they gate;
- ``partition_change``: ``PartitionChangeBuilder`` (elections, ISR/ELR upkeep, epoch bumps);
- ``replication_control``: ``ReplicationControlManager`` (topics, AlterPartition, fencing,
  elections, rebalance);
- ``cluster_control`` / ``broker_heartbeat``: ``ClusterControlManager`` and
  ``BrokerHeartbeatManager`` (registration, heartbeats, fencing, controlled shutdown);
- ``striped_placer``: ``StripedReplicaPlacer`` (replica placement for new topics);
- ``raft``: ``KafkaRaftClient`` (the quorum replicating ``__cluster_metadata``).
"""
