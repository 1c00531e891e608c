"""A log dir's ``meta.properties``: ``org.apache.kafka.metadata.properties.MetaProperties``.

Version 0 (ZooKeeper brokers: ``broker.id``, ``cluster.id``) and version 1 (KRaft, written by
``kafka-storage format``: ``node.id`` and ``cluster.id`` both required), with ``directory.id``
(KIP-858, 3.7+) in either. Read at 4.3.0 (confluentinc a9ce322153: MetaProperties,
MetaPropertiesVersion, PropertiesUtils.loadRequiredIntProp); before 3.7 the same file was
core's BrokerMetadataCheckpoint / RawMetaProperties. Errors are Java RuntimeExceptions, here
``MetaPropertiesError`` with Kafka's message.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum

from kafkasim.core.checkpoint import uuid_from_string
from kafkasim.settings.javautil import java_parse_int

VERSION_PROP = "version"
CLUSTER_ID_PROP = "cluster.id"
BROKER_ID_PROP = "broker.id"
NODE_ID_PROP = "node.id"
DIRECTORY_ID_PROP = "directory.id"
META_PROPERTIES_NAME = "meta.properties"
_JAVA_TRIM = "".join(map(chr, range(33)))   # String.trim: every char <= ' '


class MetaPropertiesError(RuntimeError):
    """The RuntimeException MetaProperties and MetaPropertiesVersion throw."""


class MetaPropertiesVersion(Enum):
    """MetaPropertiesVersion: V0 (``broker.id``) or V1 (``node.id``, KRaft)."""

    V0 = 0
    V1 = 1

    @property
    def number(self) -> int:
        return self.value

    def number_string(self) -> str:
        return str(self.value)

    def has_broker_id(self) -> bool:
        return self is MetaPropertiesVersion.V0

    def always_has_node_id(self) -> bool:
        return self is not MetaPropertiesVersion.V0

    def always_has_cluster_id(self) -> bool:
        return self is not MetaPropertiesVersion.V0

    @staticmethod
    def from_number(number: int) -> MetaPropertiesVersion:
        """``fromNumber``: 0 or 1, else "Unknown meta.properties version number N"."""
        if number == 0:
            return MetaPropertiesVersion.V0
        if number == 1:
            return MetaPropertiesVersion.V1
        raise MetaPropertiesError(f"Unknown meta.properties version number {number}")

    @staticmethod
    def from_number_string(number_string: str) -> MetaPropertiesVersion:
        """``fromNumberString``: Integer.parseInt of the trimmed string, then fromNumber."""
        try:
            number = java_parse_int(number_string.strip(_JAVA_TRIM))
        except ValueError:
            raise MetaPropertiesError(
                f"Invalid meta.properties version string '{number_string}'") from None
        return MetaPropertiesVersion.from_number(number)


def load_required_int_prop(props: Mapping[str, str], key: str) -> int:
    """PropertiesUtils.loadRequiredIntProp."""
    value = props.get(key)
    if value is None:
        raise MetaPropertiesError(f"Failed to find {key}")
    try:
        return java_parse_int(value)
    except ValueError:
        raise MetaPropertiesError(f"Unable to read {key} as a base-10 number.") from None


@dataclass(frozen=True)
class MetaProperties:
    """MetaProperties: version, cluster id, node id and directory id (each but the version
    may be absent: None). Built with ``MetaProperties.Builder``."""

    version: MetaPropertiesVersion
    cluster_id: str | None = None
    node_id: int | None = None
    directory_id: str | None = None

    def __str__(self) -> str:
        out = f"MetaProperties(version={self.version.number}"
        if self.cluster_id is not None:
            out += f", clusterId={self.cluster_id}"
        if self.node_id is not None:
            out += f", nodeId={self.node_id}"
        if self.directory_id is not None:
            out += f", directoryId={self.directory_id}"
        return out + ")"

    def to_properties(self) -> dict[str, str]:
        """``toProperties``: V0 writes the node id as ``broker.id`` (when known), V1 as
        ``node.id``."""
        props = {VERSION_PROP: self.version.number_string()}
        if self.cluster_id is not None:
            props[CLUSTER_ID_PROP] = self.cluster_id
        if self.version.has_broker_id():
            if self.node_id is not None:
                props[BROKER_ID_PROP] = str(self.node_id)
        else:
            props[NODE_ID_PROP] = str(self.node_id)
        if self.directory_id is not None:
            props[DIRECTORY_ID_PROP] = self.directory_id
        return props


class Builder:
    """MetaProperties.Builder: empty (V0), from a MetaProperties, or from the properties a
    ``meta.properties`` file holds (``Builder(Properties)``: version, default 0; V0's optional
    ``broker.id``, V1's required ``node.id``; ``cluster.id``; ``directory.id`` as a Uuid)."""

    def __init__(self, source: MetaProperties | Mapping[str, str] | None = None) -> None:
        self.version = MetaPropertiesVersion.V0
        self.cluster_id: str | None = None
        self.node_id: int | None = None
        self.directory_id: str | None = None
        if isinstance(source, MetaProperties):
            self.version, self.cluster_id = source.version, source.cluster_id
            self.node_id, self.directory_id = source.node_id, source.directory_id
        elif source is not None:
            self._load(source)

    def _load(self, props: Mapping[str, str]) -> None:
        self.version = MetaPropertiesVersion.from_number_string(
            props.get(VERSION_PROP, MetaPropertiesVersion.V0.number_string()))
        if self.version.has_broker_id():
            if BROKER_ID_PROP in props:
                self.node_id = load_required_int_prop(props, BROKER_ID_PROP)
        else:
            self.node_id = load_required_int_prop(props, NODE_ID_PROP)
        self.cluster_id = props.get(CLUSTER_ID_PROP)
        if DIRECTORY_ID_PROP in props:
            try:
                self.directory_id = uuid_from_string(props[DIRECTORY_ID_PROP])
            except ValueError as e:
                raise MetaPropertiesError(
                    f"Unable to read {DIRECTORY_ID_PROP} as a Uuid: {e}") from None

    def set_version(self, version: MetaPropertiesVersion) -> Builder:
        self.version = version
        return self

    def set_cluster_id(self, cluster_id: str | None) -> Builder:
        self.cluster_id = cluster_id
        return self

    def set_node_id(self, node_id: int | None) -> Builder:
        self.node_id = node_id
        return self

    def set_directory_id(self, directory_id: str | None) -> Builder:
        self.directory_id = directory_id
        return self

    def build(self) -> MetaProperties:
        """``build``: beyond V0 the cluster id and the node id are required."""
        if self.version is not MetaPropertiesVersion.V0:
            if self.cluster_id is None:
                raise MetaPropertiesError("cluster.id was not found.")
            if self.node_id is None:
                raise MetaPropertiesError("node.id was not found.")
        return MetaProperties(self.version, self.cluster_id, self.node_id, self.directory_id)


MetaProperties.Builder = Builder   # Kafka's nested class name
