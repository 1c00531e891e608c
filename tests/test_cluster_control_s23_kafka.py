"""ClusterControlManagerTest's registration feature checks, ported at 4.3.0 (confluentinc
a9ce322153): testRegistrationWithUnsupportedFeature, testRegistrationWithUnsupportedKraftVersion
and testRegistrationWithUnsupportedMetadataVersion. A registering broker must support the
finalized level of every feature (ClusterControlManager.registerBroker /
processRegistrationFeature), with the finalized levels taken from a FeatureControlManager.

Adaptations: the request's features are (name, min, max) triples passed as ``features=`` to
``register_broker`` with ``finalized_features=`` (kafkasim's simulated brokers carry no feature
ranges, so the simulator itself does not pass them); cluster id and log directories are not
modelled. Scenarios are Kafka's; code is our own.
"""

from __future__ import annotations

import pytest

from kafkasim.control.kraft.cluster_control import (
    ClusterControlManager,
    InvalidRegistrationException,
    RegistrationRules,
    UnsupportedVersionException,
)
from kafkasim.control.kraft.feature_control import (
    KRAFT_VERSION,
    TEST_FEATURE_VERSION,
    FeatureControlManager,
    FinalizedControllerFeatures,
    QuorumFeatures,
    VersionRange,
)
from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.records import FeatureLevelRecord, RegisterBrokerRecord
from kafkasim.core import errors
from kafkasim.settings.javautil import JavaRandom

MV = "metadata.version"
LEVEL = {v: MetadataVersion.parse(v).feature_level for v in ("3.3-IV3", "3.4-IV0", "3.5-IV0",
                                                             "3.6-IV0", "3.7-IV0", "3.9-IV0")}


def managers(supported: dict, mv: str) -> tuple[ClusterControlManager, FeatureControlManager]:
    features = FeatureControlManager(quorum_features=QuorumFeatures(0, supported, [0]))
    features.replay(FeatureLevelRecord(MV, LEVEL[mv]))
    ccm = ClusterControlManager(placer_random=JavaRandom(1),
                                metadata_version=MetadataVersion.parse(mv),
                                registration_rules=RegistrationRules.V4_0,
                                heartbeat_options={"heartbeat_tracker": True})
    ccm.activate(0)
    return ccm, features


def register(ccm, features, finalized) -> list:
    records, _reply = ccm.register_broker(0, "0H4fUu1xQEKXFYwB1aBjhg", None, -1, 123, 0,
                                          False, features=features,
                                          finalized_features=finalized)
    return records


def test_registration_with_unsupported_feature():
    """ClusterControlManagerTest.testRegistrationWithUnsupportedFeature @4.3.0: the broker does
    not list test.feature.version, finalized at 1, so it counts as supporting 0 only."""
    ccm, fc = managers({MV: VersionRange.of(LEVEL["3.3-IV3"], LEVEL["3.7-IV0"]),
                        TEST_FEATURE_VERSION: VersionRange.of(0, 1)}, "3.7-IV0")
    fc.replay(FeatureLevelRecord(TEST_FEATURE_VERSION, 1))
    with pytest.raises(UnsupportedVersionException) as info:
        register(ccm, [(MV, LEVEL["3.3-IV3"], LEVEL["3.7-IV0"])], fc.finalized_features())
    assert str(info.value) == ("Unable to register because the broker does not support "
                               "finalized version 1 of test.feature.version. The broker wants a "
                               "version between 0 and 0, inclusive.")
    assert info.value.error == errors.UNSUPPORTED_VERSION


def test_registration_with_unsupported_kraft_version():
    """ClusterControlManagerTest.testRegistrationWithUnsupportedKraftVersion @4.3.0: with
    kraft.version 1 among the finalized features (the QuorumController adds the Raft client's),
    a broker listing none or [0, 0] is refused, one listing [1, 1] registers."""
    ccm, fc = managers({MV: VersionRange.of(LEVEL["3.3-IV3"], LEVEL["3.9-IV0"]),
                        KRAFT_VERSION: VersionRange.of(1, 1)}, "3.9-IV0")
    finalized = FinalizedControllerFeatures(
        {**fc.finalized_features().feature_map, KRAFT_VERSION: 1}, (1 << 63) - 1)
    mv = (MV, LEVEL["3.9-IV0"], LEVEL["3.9-IV0"])
    message = ("Unable to register because the broker does not support finalized version 1 of "
               "kraft.version. The broker wants a version between 0 and 0, inclusive.")
    for request_features in ([mv], [mv, (KRAFT_VERSION, 0, 0)]):
        with pytest.raises(UnsupportedVersionException) as info:
            register(ccm, request_features, finalized)
        assert str(info.value) == message
    records = register(ccm, [mv, (KRAFT_VERSION, 1, 1)], finalized)
    assert [type(r) for r in records] == [RegisterBrokerRecord]


@pytest.mark.parametrize("broker_level", ["3.3-IV3", "3.4-IV0"])
def test_registration_with_unsupported_metadata_version(broker_level):
    """ClusterControlManagerTest.testRegistrationWithUnsupportedMetadataVersion @4.3.0: at
    metadata.version 3.5-IV0 (9) a broker supporting only 7 or only 8 is refused."""
    ccm, fc = managers({MV: VersionRange.of(LEVEL["3.5-IV0"], LEVEL["3.6-IV0"])}, "3.5-IV0")
    level = LEVEL[broker_level]
    with pytest.raises(UnsupportedVersionException) as info:
        register(ccm, [(MV, level, level)], fc.finalized_features())
    assert str(info.value) == (f"Unable to register because the broker does not support "
                               f"finalized version 9 of metadata.version. The broker wants a "
                               f"version between {level} and {level}, inclusive.")


def test_registration_without_metadata_version_is_invalid():
    """ClusterControlManager.registerBroker @4.3.0: a request whose features leave out
    metadata.version fails with InvalidRegistrationException."""
    ccm, fc = managers({MV: VersionRange.of(LEVEL["3.5-IV0"], LEVEL["3.6-IV0"])}, "3.5-IV0")
    with pytest.raises(InvalidRegistrationException) as info:
        register(ccm, [], fc.finalized_features())
    assert str(info.value) == "Request features do not contain 'metadata.version'"
