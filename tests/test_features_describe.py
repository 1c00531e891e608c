"""``kafka-features --bootstrap-server … describe`` against a simulated KRaft cluster
(``KRaftControlPlane.describe_features``), checked against FeatureCommand.handleDescribe
(FeatureCommand.scala @3.3.2, FeatureCommand.java @4.1.0 13f70256db / 4.2.0 a18251bae0 /
4.3.0 a9ce322153), BrokerFeatures.defaultSupportedFeatures and KRaftMetadataCache.features.

What a broker answers: every feature it supports (metadata.version from 3.3-IV3 -- 3.0-IV1
before 4.0 -- to the release's latest production level, and each production feature whose
latest production level is above 0), the level the cluster finalized (0 when none: the
formatter wrote no record), and the epoch: the metadata offset the broker's image is at.
"""

from __future__ import annotations

import pytest

from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.exceptions import ClusterError


def cluster(version: str, **kwargs) -> Cluster:
    c = Cluster(3, seed=7, kafka_version=version, metadata_mode="kraft", **kwargs)
    c.run(3000)
    return c


def epoch(c: Cluster, broker: int = 1) -> int:
    return c.brokers[broker].metadata.image.offset


def test_describe_features_4_3_pads_its_columns():
    """FeatureCommand.java:251 @4.3.0 (KAFKA-19941): "Feature: %-40s  SupportedMinVersion:
    %-15s ..."; a new 4.3 cluster has every production feature finalized at its formatter
    default (kraft.version 0: a static quorum)."""
    c = cluster("4.3")
    e = epoch(c)
    rows = [("eligible.leader.replicas.version", "0", "1", "1"),
            ("group.version", "0", "1", "1"),
            ("kraft.version", "0", "1", "0"),
            ("metadata.version", "3.3-IV3", "4.3-IV0", "4.3-IV0"),
            ("share.version", "0", "1", "1"),
            ("streams.version", "0", "1", "1"),
            ("transaction.version", "0", "2", "2")]
    assert c.kraft.describe_features() == "".join(
        f"Feature: {f:<40}  SupportedMinVersion: {lo:<15}  SupportedMaxVersion: {hi:<15}  "
        f"FinalizedVersionLevel: {fin:<15}  Epoch: {e}\n" for f, lo, hi, fin in rows)


def test_describe_features_4_0_tabs_and_unfinalized_elr():
    """FeatureCommand.java @4.1.0: tab-separated; at 4.0 ELR is supported (0-1) but the
    formatter finalizes no level for it (ELRV_1 bootstraps at 4.1-IV0)."""
    c = cluster("4.0")
    e = epoch(c)
    assert c.kraft.describe_features().splitlines() == [
        f"Feature: {f}\tSupportedMinVersion: {lo}\tSupportedMaxVersion: {hi}\t"
        f"FinalizedVersionLevel: {fin}\tEpoch: {e}" for f, lo, hi, fin in [
            ("eligible.leader.replicas.version", "0", "1", "0"),
            ("group.version", "0", "1", "1"),
            ("kraft.version", "0", "1", "0"),
            ("metadata.version", "3.3-IV3", "4.0-IV3", "4.0-IV3"),
            ("transaction.version", "0", "2", "2")]]


def test_describe_features_3_3_metadata_version_only():
    """BrokerFeatures.defaultSupportedFeatures @3.3.2: metadata.version from 3.0-IV1
    (MINIMUM_KRAFT_VERSION) to the latest level."""
    c = cluster("3.3")
    assert c.kraft.describe_features() == (
        "Feature: metadata.version\tSupportedMinVersion: 3.0-IV1\tSupportedMaxVersion: "
        f"3.3-IV3\tFinalizedVersionLevel: 3.3-IV3\tEpoch: {epoch(c)}\n")


def test_describe_features_sees_an_upgrade_and_a_new_epoch():
    """A finalized level raised with kafka-features upgrade shows once the broker's image has
    the FeatureLevelRecord; the epoch is the image's new offset."""
    c = cluster("4.0", rules={"elr_enabled_by_default": False})
    before = epoch(c)
    c.kraft.update_features({"eligible.leader.replicas.version": 1})
    c.run(2000)
    line = [x for x in c.kraft.describe_features().splitlines()
            if x.startswith("Feature: eligible.leader.replicas.version\t")]
    assert line == ["Feature: eligible.leader.replicas.version\tSupportedMinVersion: 0\t"
                    f"SupportedMaxVersion: 1\tFinalizedVersionLevel: 1\tEpoch: {epoch(c)}"]
    assert epoch(c) > before


def test_describe_features_node_id():
    """--node-id (4.2+, KAFKA-18786): the named broker answers; a negative id is refused as
    FeatureCommand.handleDescribe does; 4.1's tool has no such option."""
    c = cluster("4.2")
    assert c.kraft.describe_features(node_id=2).endswith(f"Epoch: {epoch(c, 2)}\n")
    with pytest.raises(ClusterError, match=r"^Invalid node id -1: must be non-negative\.$"):
        c.kraft.describe_features(node_id=-1)
    with pytest.raises(ClusterError, match=r"broker 7 is not a running broker \(running: "
                                           r"\[1, 2, 3\]\)"):
        c.kraft.describe_features(node_id=7)
    with pytest.raises(ClusterError, match="--node-id is an option of 4.2"):
        cluster("4.1").kraft.describe_features(node_id=1)


def test_describe_features_dynamic_quorum_finalizes_kraft_version_1():
    """KRaftMetadataCache.features @4.3.0: kraft.version is the Raft client's level, 1 on a
    quorum formatted with --initial-controllers (KIP-853)."""
    servers = ",".join(f"controller{3000 + i}:9093" for i in range(3))
    c = cluster("4.1", controllers=3, config={"controller.quorum.bootstrap.servers": servers})
    assert f"Feature: kraft.version\tSupportedMinVersion: 0\tSupportedMaxVersion: 1\t" \
           f"FinalizedVersionLevel: 1\tEpoch: {epoch(c)}" in c.kraft.describe_features()


def test_formatted_features_can_be_downgraded_and_refused_by_release():
    """The features the formatter finalizes go through the controller's FeatureControlManager
    like metadata.version: group.version 1 -> 0 (a safe downgrade: FeatureLevelRecord level 0
    removes it, describe shows 0); share.version 2 is beyond what a 4.3 controller supports;
    a 4.0 controller has no share.version."""
    from kafkasim.runtime.quorum_admin import QuorumReconfigurationError

    c = cluster("4.3")
    assert c.kraft.downgrade_features({"group.version": 0}) == {"group.version": 0}
    c.run(1000)
    assert "group.version" not in c.kraft.active().controller.feature_control \
        .finalized_features().feature_map
    assert [x.split()[-3] for x in c.kraft.describe_features().splitlines()
            if x.startswith("Feature: group.version ")] == ["0"]
    with pytest.raises(QuorumReconfigurationError, match="Invalid update version 2 for feature "
                       "share.version. Local controller 300[0-9] only supports versions 0-1"):
        c.kraft.update_features({"share.version": 2})
    with pytest.raises(QuorumReconfigurationError, match="feature share.version. Local "
                       "controller 300[0-9] does not support this feature."):
        cluster("4.0").kraft.update_features({"share.version": 1})


def test_misspelled_feature_is_refused_with_a_suggestion():
    """A name kafkasim's kafka-features does not model is refused before anything is sent,
    naming the modelled ones and the closest."""
    c = cluster("4.3")
    before = len(c.kraft.metadata_log())
    with pytest.raises(ClusterError, match=r"only eligible.leader.replicas.version, group.version"
                       r".*; did you mean 'group.version'\?"):
        c.kraft.downgrade_features({"group.versoin": 0})
    with pytest.raises(ClusterError, match=r"did you mean 'share.version'\?"):
        c.kraft.update_features({"shares.version": 1})
    assert len(c.kraft.metadata_log()) == before
