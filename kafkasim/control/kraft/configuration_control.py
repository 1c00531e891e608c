"""ConfigurationControlManager: the KRaft controller's dynamic configs, as far as the
ReplicationControlManager reads them.

Follows org.apache.kafka.controller.ConfigurationControlManager: ``replay(ConfigRecord)``,
``getTopicConfig`` (topic, then the controller node's dynamic config, then the cluster default)
and ``deleteTopicConfigs``. Config validation and the ELR safety records live in
kafkasim.control.kraft.elr_safety.
"""

from __future__ import annotations

from kafkasim.control.kraft.records import ConfigRecord


class ConfigurationControlManager:
    """org.apache.kafka.controller.ConfigurationControlManager (the stored configs only)."""

    def __init__(self, node_id: int | None = None, *, default_min_isr: int = 1,
                 default_unclean: bool = False) -> None:
        self.node_id = node_id
        # the static (server.properties) values behind min.insync.replicas and
        # unclean.leader.election.enable when no dynamic config sets them
        self.default_min_isr = default_min_isr
        self.default_unclean = default_unclean
        self._configs: dict[tuple[str, str], dict[str, str]] = {}

    def replay(self, record: ConfigRecord) -> None:
        """replay(ConfigRecord): set the value, or remove it when the record's value is None."""
        key = (record.resource_type, record.resource_name)
        if record.value is None:
            self._configs.get(key, {}).pop(record.name, None)
        else:
            self._configs.setdefault(key, {})[record.name] = record.value

    def get_topic_config(self, topic: str, key: str) -> str | None:
        """getTopicConfig: topic, then the controller node's dynamic config, then the cluster
        default ("" BROKER resource); None when unset."""
        levels = [("TOPIC", topic)]
        if self.node_id is not None:
            levels.append(("BROKER", str(self.node_id)))
        levels.append(("BROKER", ""))
        for level in levels:
            value = self._configs.get(level, {}).get(key)
            if value is not None:
                return value
        return None

    def current_topic_config(self, topic: str) -> dict[str, str]:
        """currentTopicConfig: a copy of the topic's own dynamic configs."""
        return dict(self._configs.get(("TOPIC", topic), {}))

    def delete_topic_configs(self, name: str) -> None:
        """deleteTopicConfigs: drop a deleted topic's configs."""
        self._configs.pop(("TOPIC", name), None)
