"""The admin client: Kafka's ``Admin`` operations over the simulated cluster.

Method names follow ``org.apache.kafka.clients.admin.Admin`` (snake_case); each returns plain
data. They act through the controller and ZooKeeper as the ``kafka-topics``, ``kafka-configs``,
``kafka-leader-election``, ``kafka-reassign-partitions`` and ``kafka-consumer-groups``
tools do.
"""

from __future__ import annotations

from kafkasim.runtime import validation
from kafkasim.runtime.views import known_broker
from kafkasim.settings.exceptions import ClusterError


class Admin:
    def __init__(self, cluster) -> None:
        self.cluster = cluster

    def create_topics(self, topics: list[dict]) -> dict[str, dict[int, list[int]]]:
        """Each dict: name, num_partitions, replication_factor, optional assignment, configs."""
        validation.check_new_topics(topics)
        out = {}
        for t in topics:
            out[t["name"]] = self.cluster.create_topic(
                t["name"], t.get("num_partitions", 1), t.get("replication_factor"),
                assignment=t.get("assignment"), config=t.get("configs"))
        return out

    def describe_topics(self, names: list[str] | None = None) -> dict[str, list[dict]]:
        """Per topic, per partition: leader, replicas, isr (as the metadata reports them)."""
        validation.check_topic_names("describe_topics", names)
        c = self.cluster
        names = c.topics.names() if names is None else list(names)
        return {n: [dict(partition=p, **{k: v for k, v in c.inspect.partition_state(n, p).items()
                                         if k in ("leader", "replicas", "isr")})
                    for p in c.assignment(n)] for n in names}

    def describe_configs(self, entity_type: str, name) -> dict:
        c = self.cluster
        if entity_type == "topics":
            c.topics.check_topic(name)
            return dict(c.topics.configs[name])
        return dict(known_broker(c.brokers, name).config)

    def incremental_alter_configs(self, entity_type: str, name, set_: dict | None = None,
                                  delete: list[str] | None = None) -> None:
        """kafka-configs --alter --add-config k=v --delete-config k."""
        self.cluster.alter_config(entity_type, name, set_ or {}, delete)

    def elect_leaders(self, election_type: str, topic: str,
                      partitions: list[int] | None = None) -> dict:
        return self.cluster.elect(topic, partitions, election_type)

    def alter_partition_reassignments(self, reassignments: dict) -> dict:
        """Admin.alterPartitionReassignments (KIP-455): ``{(topic, partition): [replicas] or
        None}`` (None cancels); per partition the error name ("NONE" when accepted). The
        error messages too: ``alter_partition_reassignments_result``."""
        return {tp: err for tp, (err, _msg) in
                self.alter_partition_reassignments_result(reassignments).items()}

    def alter_partition_reassignments_result(self, reassignments: dict) -> dict:
        """``kafka-reassign-partitions --execute`` / Admin.alterPartitionReassignments (KIP-455,
        Kafka 2.4+) with Kafka's AlterPartitionReassignmentsResult: ``{(topic, partition):
        [target replicas] or None}`` (None cancels). ZooKeeper mode: the controller starts each
        reassignment (KafkaController.onPartitionReassignment); KRaft: the active controller
        writes it (ReplicationControlManager.alterPartitionReassignments). Either way it
        completes by itself once every target replica is in the ISR. Returns ``{(topic,
        partition): (error, message)}``: error "NONE" (message None) when accepted."""
        c = self.cluster
        if not c.rules.tools.alter_partition_reassignments:
            raise ClusterError(
                f"AlterPartitionReassignments needs Kafka 2.4 or newer (KIP-455); in "
                f"{c.kafka_version} kafka-reassign-partitions wrote /admin/reassign_partitions, "
                "a path kafkasim does not model")
        todo = {}   # an unknown partition is answered UNKNOWN_TOPIC_OR_PARTITION, not raised
        for key, target in reassignments.items():
            topic, partition = key
            todo[(topic, partition)] = None if target is None else [int(b) for b in target]
        if c.kraft is not None:
            return c.kraft.alter_partition_reassignments(todo)
        ctl = c.zk_control_plane.controller_broker()
        if ctl is None:
            raise ClusterError("no active controller to run the reassignment (NOT_CONTROLLER)")
        return dict(c.zk_control_plane.run_controller(ctl, "alter_reassignments", (todo,)) or {})

    def list_partition_reassignments(self, partitions=None) -> dict:
        """``kafka-reassign-partitions --list`` / Admin.listPartitionReassignments: the
        reassignments in progress, ``{(topic, partition): {"replicas", "adding_replicas",
        "removing_replicas"}}`` (the ZooKeeper controller's context, or the KRaft active
        controller's partitions)."""
        tps = None if partitions is None else [tuple(tp) for tp in partitions]
        c = self.cluster
        if c.kraft is not None:
            ongoing = c.kraft.list_partition_reassignments(tps)
        else:
            ctl = c.zk_control_plane.controller_broker()
            if ctl is None:
                raise ClusterError("no active controller to list reassignments (NOT_CONTROLLER)")
            ongoing = ctl.controller.list_partition_reassignments(tps)
        return {tp: {"replicas": list(ra.replicas), "adding_replicas": list(ra.adding_replicas),
                     "removing_replicas": list(ra.removing_replicas)}
                for tp, ra in ongoing.items()}

    def list_offsets(self, topic: str, partition: int = 0, spec: str = "latest") -> int:
        """OffsetSpec.latest() is the HW for clients; earliest() the log start offset."""
        validation.check_offset_spec(spec)
        c = self.cluster
        leader = c.leader(topic, partition)
        if leader < 0:
            return -1
        log = c.brokers[leader].logs[(topic, partition)]
        return log.high_watermark if spec == "latest" else log.log_start_offset

    def list_consumer_group_offsets(self, group: str) -> dict[tuple[str, int], int]:
        return {(t, p): off for (g, t, p), off in sorted(self.cluster.group_offsets.items())
                if g == group}
