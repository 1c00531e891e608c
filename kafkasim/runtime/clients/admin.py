"""The admin client: Kafka's ``Admin`` operations over the simulated cluster.

Method names follow ``org.apache.kafka.clients.admin.Admin`` (snake_case); each returns plain
data. They act through the controller and ZooKeeper as the ``kafka-topics``, ``kafka-configs``,
``kafka-leader-election``, ``kafka-reassign-partitions`` and ``kafka-consumer-groups``
tools do.
"""

from __future__ import annotations


class Admin:
    def __init__(self, cluster) -> None:
        self.cluster = cluster

    def create_topics(self, topics: list[dict]) -> dict[str, dict[int, list[int]]]:
        """Each dict: name, num_partitions, replication_factor, optional assignment, configs."""
        out = {}
        for t in topics:
            out[t["name"]] = self.cluster.create_topic(
                t["name"], t.get("num_partitions", 1), t.get("replication_factor"),
                assignment=t.get("assignment"), config=t.get("configs"))
        return out

    def describe_topics(self, names: list[str] | None = None) -> dict[str, list[dict]]:
        """Per topic, per partition: leader, replicas, isr (as the metadata reports them)."""
        c = self.cluster
        names = c.topics() if names is None else list(names)
        return {n: [dict(partition=p, **{k: v for k, v in c.partition_state(n, p).items()
                                         if k in ("leader", "replicas", "isr")})
                    for p in c.assignment(n)] for n in names}

    def describe_configs(self, entity_type: str, name) -> dict:
        c = self.cluster
        if entity_type == "topics":
            c.partition_count(name)
            return dict(c.topic_configs[name])
        return dict(c._broker(name).config)

    def incremental_alter_configs(self, entity_type: str, name, set_: dict | None = None,
                                  delete: list[str] | None = None) -> None:
        """kafka-configs --alter --add-config k=v --delete-config k."""
        self.cluster.alter_config(entity_type, name, set_ or {}, delete)

    def elect_leaders(self, election_type: str, topic: str,
                      partitions: list[int] | None = None) -> dict:
        return self.cluster.elect(topic, partitions, election_type)

    def alter_partition_reassignments(self, reassignments: dict) -> dict:
        """Admin.alterPartitionReassignments (KIP-455): ``{(topic, partition): [replicas] or
        None}`` (None cancels); per partition the error name ("NONE" when accepted)."""
        return {tp: err for tp, (err, _msg) in
                self.cluster.alter_partition_reassignments(reassignments).items()}

    def list_partition_reassignments(self, partitions=None) -> dict:
        """Admin.listPartitionReassignments: per partition in reassignment, its replicas,
        adding_replicas and removing_replicas."""
        return self.cluster.list_partition_reassignments(partitions)

    def list_offsets(self, topic: str, partition: int = 0, spec: str = "latest") -> int:
        """OffsetSpec.latest() is the HW for clients; earliest() the log start offset."""
        c = self.cluster
        leader = c.leader(topic, partition)
        if leader < 0:
            return -1
        log = c.brokers[leader].logs[(topic, partition)]
        return log.high_watermark if spec == "latest" else log.log_start_offset

    def list_consumer_group_offsets(self, group: str) -> dict[tuple[str, int], int]:
        return {(t, p): off for (g, t, p), off in sorted(self.cluster.group_offsets.items())
                if g == group}
