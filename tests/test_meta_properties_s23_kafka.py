"""A log dir's ``meta.properties`` (``kafkasim.core.meta_properties``).

Ports, at 4.3.0 (confluentinc mirror a9ce322153):
* metadata/src/test/java/org/apache/kafka/metadata/properties/MetaPropertiesTest.java;
* metadata/src/test/java/org/apache/kafka/metadata/properties/MetaPropertiesVersionTest.java;
and checks that the meta.properties ``kafka-storage format`` writes for a KRaft node reads back
through MetaProperties.Builder. Java's Optional/OptionalInt are None or the value; Uuids are
their base64 text; Properties is a dict.
"""

from __future__ import annotations

import pytest

from kafkasim.core.meta_properties import (
    MetaProperties,
    MetaPropertiesError,
    MetaPropertiesVersion,
)
from kafkasim.runtime.cluster import Cluster

V0, V1 = MetaPropertiesVersion.V0, MetaPropertiesVersion.V1
CLUSTER = "zd2vLVrZQlCLJj8-k7A10w"
DIRECTORY = "3Adc4FjfTeypRWROmQDNIQ"


# -- MetaPropertiesTest @4.3.0 ------------------------------------------------------------------


@pytest.mark.parametrize("cluster_id, node_id, directory_id, expected", [
    (None, None, None, "MetaProperties(version=0)"),                       # WithNothing
    (CLUSTER, None, None, f"MetaProperties(version=0, clusterId={CLUSTER})"),   # JustClusterId
    (None, 0, None, "MetaProperties(version=0, nodeId=0)"),                # JustNodeId
    (CLUSTER, 0, None, f"MetaProperties(version=0, clusterId={CLUSTER}, nodeId=0)"),
    (CLUSTER, 0, DIRECTORY,                                                  # WithAll
     f"MetaProperties(version=0, clusterId={CLUSTER}, nodeId=0, directoryId={DIRECTORY})"),
])
def test_v0_serialization(cluster_id, node_id, directory_id, expected):
    """MetaPropertiesTest.testV0SerializationWith{Nothing,JustClusterId,JustNodeId,
    JustClusterIdAndNodeId,All} @4.3.0: V0 writes the node id as broker.id; the properties
    read back to an equal MetaProperties."""
    meta = MetaProperties.Builder().set_version(V0).set_cluster_id(cluster_id) \
        .set_node_id(node_id).set_directory_id(directory_id).build()
    assert (meta.version, meta.cluster_id, meta.node_id, meta.directory_id) == \
        (V0, cluster_id, node_id, directory_id)
    props = {"version": "0"}
    if cluster_id is not None:
        props["cluster.id"] = cluster_id
    if node_id is not None:
        props["broker.id"] = str(node_id)
    if directory_id is not None:
        props["directory.id"] = directory_id
    props2 = meta.to_properties()
    assert props2 == props
    meta2 = MetaProperties.Builder(props2).build()
    assert meta2 == meta and hash(meta2) == hash(meta) and str(meta2) == str(meta)
    assert str(meta) == expected


@pytest.mark.parametrize("cluster_id, node_id, directory_id, expected", [
    (CLUSTER, 0, None, f"MetaProperties(version=1, clusterId={CLUSTER}, nodeId=0)"),
    (CLUSTER, 1, DIRECTORY,
     f"MetaProperties(version=1, clusterId={CLUSTER}, nodeId=1, directoryId={DIRECTORY})"),
    ("my@cluster@id", 2, None, "MetaProperties(version=1, clusterId=my@cluster@id, nodeId=2)"),
])
def test_v1_serialization(cluster_id, node_id, directory_id, expected):
    """MetaPropertiesTest.testV1SerializationWithoutDirectoryId / WithDirectoryId /
    WithNonUuidClusterId @4.3.0: V1 writes node.id."""
    meta = MetaProperties.Builder().set_version(V1).set_cluster_id(cluster_id) \
        .set_node_id(node_id).set_directory_id(directory_id).build()
    assert (meta.version, meta.cluster_id, meta.node_id, meta.directory_id) == \
        (V1, cluster_id, node_id, directory_id)
    props = {"version": "1", "cluster.id": cluster_id, "node.id": str(node_id)}
    if directory_id is not None:
        props["directory.id"] = directory_id
    props2 = meta.to_properties()
    assert props2 == props
    meta2 = MetaProperties.Builder(props2).build()
    assert meta2 == meta and hash(meta2) == hash(meta) and str(meta2) == str(meta)
    assert str(meta) == expected


def test_cluster_id_required_in_v1():
    """MetaPropertiesTest.testClusterIdRequiredInV1 @4.3.0."""
    with pytest.raises(MetaPropertiesError) as e:
        MetaProperties.Builder().set_version(V1).set_node_id(1).build()
    assert str(e.value) == "cluster.id was not found."


def test_node_id_required_in_v1():
    """MetaPropertiesTest.testNodeIdRequiredInV1 @4.3.0."""
    with pytest.raises(MetaPropertiesError) as e:
        MetaProperties.Builder().set_version(V1).set_cluster_id(CLUSTER).build()
    assert str(e.value) == "node.id was not found."


# -- MetaPropertiesVersionTest @4.3.0 -----------------------------------------------------------


def test_version_numbers():
    """MetaPropertiesVersionTest.testV0ToNumber, testV0ToNumberString, testV0FromNumber,
    testV0FromNumberString and the four V1 cases @4.3.0."""
    assert (V0.number, V0.number_string()) == (0, "0")
    assert (V1.number, V1.number_string()) == (1, "1")
    assert MetaPropertiesVersion.from_number(0) is V0
    assert MetaPropertiesVersion.from_number(1) is V1
    assert MetaPropertiesVersion.from_number_string("0") is V0
    assert MetaPropertiesVersion.from_number_string("1") is V1


def test_from_invalid_number():
    """MetaPropertiesVersionTest.testFromInvalidNumber @4.3.0."""
    with pytest.raises(MetaPropertiesError) as e:
        MetaPropertiesVersion.from_number(2)
    assert str(e.value) == "Unknown meta.properties version number 2"


def test_from_invalid_string():
    """MetaPropertiesVersionTest.testFromInvalidString @4.3.0."""
    with pytest.raises(MetaPropertiesError) as e:
        MetaPropertiesVersion.from_number_string("orange")
    assert str(e.value) == "Invalid meta.properties version string 'orange'"


def test_has_broker_id_always_has_node_and_cluster_id():
    """MetaPropertiesVersionTest.testHasBrokerId, testAlwaysHasNodeId,
    testAlwaysHasClusterId @4.3.0."""
    assert V0.has_broker_id() and not V1.has_broker_id()
    assert not V0.always_has_node_id() and V1.always_has_node_id()
    assert not V0.always_has_cluster_id() and V1.always_has_cluster_id()


# -- what kafkasim writes -----------------------------------------------------------------------


def _read_properties(text: str) -> dict[str, str]:
    """java.util.Properties.load of a simple file: ``#`` comments, ``key=value`` lines."""
    return dict(line.split("=", 1) for line in text.splitlines()
                if line and not line.startswith("#"))


@pytest.mark.parametrize("version, has_directory", [("4.3", True), ("3.6", False)])
def test_kafka_storage_format_writes_meta_properties_v1(tmp_path, version, has_directory):
    """``kafka-storage format`` writes MetaProperties V1 (node.id, cluster.id, and
    directory.id since 3.7, KIP-858): it reads back through Builder(Properties).build()."""
    c = Cluster(3, kafka_version=version, log_dirs=str(tmp_path), seed=2,
                **({"metadata_mode": "kraft"} if version == "3.6" else {}))
    text = c.brokers[2].log_manager.log_dir.read("meta.properties")
    meta = MetaProperties.Builder(_read_properties(text)).build()
    assert (meta.version, meta.node_id) == (V1, 2)
    assert meta.cluster_id is not None
    assert (meta.directory_id is not None) == has_directory
    assert meta.to_properties() == _read_properties(text)
