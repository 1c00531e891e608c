"""``metadata.version``: the KRaft feature level that gates record formats and controller rules.

Mirrors org.apache.kafka.server.common.MetadataVersion (server-common), KRaft levels only
(feature level >= 1, i.e. 3.0-IV1 onwards; the ZooKeeper-era IBP levels have feature level -1
and no KRaft meaning).

Sources:

- 3.0-IV1 .. 4.0-IV3 (feature levels 1..25), the predicates and the record versions: read from
  MetadataVersion.java at trunk 1eb7644 (2024-10-25, pre-4.0). In that snapshot only 4.0-IV0 was
  production; 4.0.0 shipped with 4.0-IV3 as its latest level.
- 4.1-IV0 (26), 4.1-IV1 (27), 4.2-IV0 (28), 4.2-IV1 (29), 4.3-IV0 (30): not in the snapshot.
  Taken from later copies of MetadataVersion.java found with the search tool (a 4.5-dev era copy
  listing these levels with ``isElrSupported`` still at 4.0-IV1, and notes on 4.1.0 giving
  ``LATEST_PRODUCTION = IBP_4_1_IV1``). The latest level per release (4.1 -> 4.1-IV1,
  4.2 -> 4.2-IV1, 4.3 -> 4.3-IV0) was not verified against Apache's own tags then; it is now:
  the levels 22..31, their didMetadataChange flags, MINIMUM_VERSION (3.3-IV3) and
  LATEST_PRODUCTION (4.0-IV3, 4.1-IV1, 4.2-IV1, 4.3-IV0) match MetadataVersion.java at the
  4.0 / 4.1.0 / 4.2.0 / 4.3.0 release commits of the confluentinc mirror (4ae681446f,
  13f70256db, a18251bae0, a9ce322153).
- 4.4-IV0 (31, no metadata change: share-group DLQ, KIP-1191), 4.4-IV1 (32: CIDR ACL host
  patterns, KIP-1276) and 4.4-IV2 (33: controller unregistration, KIP-1312), both with metadata
  changes: checked in MetadataVersion.java at the 4.4 branch (confluentinc f86720838c, also at its
  tip 8d3916cfe1 of 2026-08-21), where the enum ends at IBP_4_4_IV2 (latestTesting). That branch
  still has ``LATEST_PRODUCTION = IBP_4_3_IV0`` (kafkatest LATEST_STABLE_METADATA_VERSION
  "4.3-IV0"); trunk set ``LATEST_PRODUCTION = IBP_4_4_IV2`` right after the 4.4 branch cut
  (0656d96675, "Bump trunk to 4.5.0-SNAPSHOT"), and the 4.4 upgrade notes say KIP-1312
  "requires metadata version 4.4-IV2". kafkasim keeps 4.4 -> 4.4-IV2 as the release's latest
  level (what ``--release-version 4.4`` names); whether 4.4.0 shipped 4.4-IV2 as production is
  **not verified against a release tag**.
- ``eligible.leader.replicas.version`` (EligibleLeaderReplicasVersion, not in the snapshot):
  ELRV_1 needs metadata.version >= 4.0-IV1 and is bootstrapped on new clusters at 4.1-IV0
  (EligibleLeaderReplicasVersion.ELRV_1 at 4.0 4ae681446f and 4.3.0 a9ce322153).
"""

from __future__ import annotations

from functools import total_ordering

FEATURE_NAME = "metadata.version"
ELR_FEATURE_NAME = "eligible.leader.replicas.version"   # EligibleLeaderReplicasVersion.FEATURE_NAME

# (release, sub-version, feature level, didMetadataChange) in Kafka's enum order.
_LEVELS: tuple[tuple[str, str, int, bool], ...] = (
    ("3.0", "IV1", 1, True),    # ListOffsets v7 (KIP-734); first KRaft level
    ("3.1", "IV0", 2, False),   # topic ids in Fetch (KIP-516)
    ("3.2", "IV0", 3, True),    # leader recovery for unclean election (KIP-704)
    ("3.3", "IV0", 4, False),   # metadata.version feature flag (KIP-778)
    ("3.3", "IV1", 5, True),    # NoOpRecord (KIP-835)
    ("3.3", "IV2", 6, True),    # BrokerRegistrationChangeRecord replaces Fence/UnfenceBrokerRecord
    ("3.3", "IV3", 7, True),    # InControlledShutdown in broker records (KIP-841)
    ("3.4", "IV0", 8, True),    # ZK migration (KIP-866)
    ("3.5", "IV0", 9, False),   # tiered storage (KIP-405)
    ("3.5", "IV1", 10, False),  # replica epoch in Fetch (KIP-903)
    ("3.5", "IV2", 11, True),   # SCRAM in KRaft
    ("3.6", "IV0", 12, False),  # no leader-epoch bump on controller ISR shrink (KAFKA-15021)
    ("3.6", "IV1", 13, True),   # metadata transactions
    ("3.6", "IV2", 14, True),   # delegation tokens in KRaft
    ("3.7", "IV0", 15, True),   # controller registration (KIP-919)
    ("3.7", "IV1", 16, False),  # reserved
    ("3.7", "IV2", 17, True),   # JBOD in KRaft (directory assignment)
    ("3.7", "IV3", 18, False),  # was reserved for ELR, moved to 4.0-IV1
    ("3.7", "IV4", 19, False),  # Fetch v16 (KIP-951)
    ("3.8", "IV0", 20, False),
    ("3.9", "IV0", 21, False),  # ListOffsets v9 (KIP-1005)
    ("4.0", "IV0", 22, False),  # GroupVersion bootstrap (KIP-848)
    ("4.0", "IV1", 23, True),   # ELR records (KIP-966)
    ("4.0", "IV2", 24, False),  # TransactionVersion bootstrap (KIP-890)
    ("4.0", "IV3", 25, False),  # async remote LIST_OFFSETS (KIP-1075)
    ("4.1", "IV0", 26, False),  # not in the snapshot (see module docstring)
    ("4.1", "IV1", 27, False),
    ("4.2", "IV0", 28, False),
    ("4.2", "IV1", 29, False),
    ("4.3", "IV0", 30, True),
    ("4.4", "IV0", 31, False),  # not in the snapshot either (see module docstring)
    ("4.4", "IV1", 32, True),
    ("4.4", "IV2", 33, True),
)


#: MetadataVersion.latestTesting()'s feature level per release (the enum's last level at its tag)
_LATEST_TESTING_LEVEL = {"3.9": 23, "4.0": 26, "4.1": 29, "4.2": 30, "4.3": 31, "4.4": 33}


@total_ordering
class MetadataVersion:
    """org.apache.kafka.server.common.MetadataVersion (the KRaft levels). Instances are
    interned: one object per level, ordered by Kafka's enum order (== feature level order)."""

    __slots__ = ("release", "sub_version", "feature_level", "did_metadata_change", "_ordinal")

    VERSIONS: tuple[MetadataVersion, ...] = ()
    _BY_NAME: dict[str, MetadataVersion] = {}

    def __init__(self, release: str, sub_version: str, feature_level: int,
                 did_metadata_change: bool, ordinal: int) -> None:
        self.release = release
        self.sub_version = sub_version
        self.feature_level = feature_level
        self.did_metadata_change = did_metadata_change
        self._ordinal = ordinal

    # -- identity and order ----------------------------------------------------------------
    def version(self) -> str:
        """MetadataVersion.version(): e.g. ``"3.7-IV4"``."""
        return f"{self.release}-{self.sub_version}"

    def short_version(self) -> str:
        """MetadataVersion.shortVersion(): the release, e.g. ``"3.7"``."""
        return self.release

    def __str__(self) -> str:
        return self.version()

    def __repr__(self) -> str:
        return f"MetadataVersion({self.version()!r})"

    def __eq__(self, other: object) -> bool:
        if isinstance(other, str):
            try:
                other = MetadataVersion.parse(other)
            except ValueError:
                return False
        return isinstance(other, MetadataVersion) and self._ordinal == other._ordinal

    def __hash__(self) -> int:
        return self.feature_level

    def __lt__(self, other: MetadataVersion | str) -> bool:
        if isinstance(other, str):
            other = MetadataVersion.parse(other)
        return self._ordinal < other._ordinal

    def is_at_least(self, other: MetadataVersion | str) -> bool:
        return not self < other

    def is_less_than(self, other: MetadataVersion | str) -> bool:
        return self < other

    # -- lookup ----------------------------------------------------------------------------
    @classmethod
    def parse(cls, s: str) -> MetadataVersion:
        """MetadataVersion.fromVersionString: ``"3.7-IV4"`` names a level, ``"3.7"`` (or
        ``"3.7.1"``: only the first two segments count) the latest level of that release.
        Unknown values raise ValueError listing the supported ones, as Kafka 4.x does."""
        if isinstance(s, MetadataVersion):
            return s
        segments = str(s).split(".")
        key = ".".join(segments[:2]) if len(segments) > 2 else str(s)
        mv = cls._BY_NAME.get(key)
        if mv is None:
            supported = ", ".join(v.version() for v in cls.VERSIONS)
            raise ValueError(f"Unknown metadata.version '{s}'. Supported metadata.version are: "
                             f"{supported}")
        return mv

    @classmethod
    def from_version_string(cls, s: str) -> MetadataVersion:
        """MetadataVersion.fromVersionString (same as :meth:`parse`)."""
        return cls.parse(s)

    @classmethod
    def latest_for(cls, kafka_version: str) -> MetadataVersion:
        """The latest level of a release (``"3.7"`` -> 3.7-IV4, ``"4.1.0"`` -> 4.1-IV1): what
        ``kafka-storage format --release-version X`` / ``fromVersionString("X")`` gives."""
        return cls.parse(kafka_version)

    @classmethod
    def from_feature_level(cls, level: int) -> MetadataVersion:
        """MetadataVersion.fromFeatureLevel."""
        for mv in cls.VERSIONS:
            if mv.feature_level == level:
                return mv
        raise ValueError(f"No MetadataVersion with feature level {level}. Valid feature levels "
                         f"are from {cls.VERSIONS[0].feature_level} to "
                         f"{cls.VERSIONS[-1].feature_level}.")

    @classmethod
    def latest(cls) -> MetadataVersion:
        return cls.VERSIONS[-1]

    # -- feature gates (MetadataVersion.isXxx) ---------------------------------------------
    def is_leader_recovery_supported(self) -> bool:
        """3.2-IV0, KIP-704: unclean election marks the partition RECOVERING."""
        return self.is_at_least(IBP_3_2_IV0)

    def is_no_op_record_supported(self) -> bool:
        return self.is_at_least(IBP_3_3_IV1)

    def is_broker_registration_change_record_supported(self) -> bool:
        """3.3-IV2: fencing via BrokerRegistrationChangeRecord (not Fence/UnfenceBrokerRecord)."""
        return self.is_at_least(IBP_3_3_IV2)

    def is_in_controlled_shutdown_state_supported(self) -> bool:
        """3.3-IV3, KIP-841: brokers in controlled shutdown leave ISRs."""
        return self.is_at_least(IBP_3_3_IV3)

    def is_migration_supported(self) -> bool:
        return self.is_at_least(IBP_3_4_IV0)

    def is_leader_epoch_bump_required_on_isr_shrink(self) -> bool:
        """Before 3.6-IV0 a controller ISR shrink bumps the leader epoch (KAFKA-15021)."""
        return not self.is_at_least(IBP_3_6_IV0)

    def is_metadata_transaction_supported(self) -> bool:
        return self.is_at_least(IBP_3_6_IV1)

    def is_controller_registration_supported(self) -> bool:
        return self.is_at_least(IBP_3_7_IV0)

    def is_controller_unregistration_supported(self) -> bool:
        """4.4-IV2, KIP-1312 (KAFKA-20395): UnregisterControllerRecord
        (MetadataVersion.isControllerUnregistrationSupported @4.4 f86720838c)."""
        return self.is_at_least(IBP_4_4_IV2)

    def is_cordoned_log_dirs_supported(self) -> bool:
        """4.3-IV0, KIP-1066: cordoned log directories in the broker records
        (isCordonedLogDirsSupported @4.3.0 a9ce322153; kafkasim models no log directories)."""
        return self.is_at_least(IBP_4_3_IV0)

    def is_directory_assignment_supported(self) -> bool:
        """3.7-IV2: JBOD in KRaft (PartitionRecord/PartitionChangeRecord directories)."""
        return self.is_at_least(IBP_3_7_IV2)

    def is_elr_supported(self) -> bool:
        """4.0-IV1, KIP-966: the ELR fields exist in partition records. Whether ELR is *used*
        is the separate ``eligible.leader.replicas.version`` feature (>= 1)."""
        return self.is_at_least(IBP_4_0_IV1)

    def register_broker_record_version(self) -> int:
        """MetadataVersion.registerBrokerRecordVersion: 4 with cordoned log dirs (4.3-IV0,
        @4.3.0 a9ce322153), 3 with log dirs, 2 with the migration flag, 1 with
        inControlledShutdown (the 4.x floor, MINIMUM_VERSION 3.3-IV3), else 0 (3.x)."""
        if self.is_cordoned_log_dirs_supported():
            return 4
        if self.is_directory_assignment_supported():
            return 3
        if self.is_migration_supported():
            return 2
        if self.is_in_controlled_shutdown_state_supported():
            return 1
        return 0

    def partition_change_record_version(self) -> int:
        """MetadataVersion.partitionChangeRecordVersion: 2 with ELR, 1 with directories, else 0."""
        if self.is_elr_supported():
            return 2
        if self.is_directory_assignment_supported():
            return 1
        return 0

    def partition_record_version(self) -> int:
        """MetadataVersion.partitionRecordVersion (same ladder as the change record)."""
        return self.partition_change_record_version()

    def previous(self) -> MetadataVersion | None:
        """MetadataVersion.previous(): the level before this one (None for the first)."""
        return MetadataVersion.VERSIONS[self._ordinal - 1] if self._ordinal > 0 else None

    @staticmethod
    def check_if_metadata_changed(source: MetadataVersion, target: MetadataVersion) -> bool:
        """MetadataVersion.checkIfMetadataChanged: whether some level above the lower of the
        two, up to the higher, changed the metadata format (``didMetadataChange``) -- what makes
        a downgrade between them lose information (FeatureControlManager refuses it)."""
        if source == target:
            return False
        high, low = (target, source) if source < target else (source, target)
        version = high
        while not version.did_metadata_change and version != low:
            prev = version.previous()
            if prev is None:
                break
            version = prev
        return version != low

    @classmethod
    def latest_production(cls, kafka_version: str = "4.3") -> MetadataVersion:
        """MetadataVersion.latestProduction() of a release (LATEST_PRODUCTION, e.g. 4.3-IV0
        at 4.3.0)."""
        return cls.latest_for(kafka_version)

    @classmethod
    def latest_testing(cls, kafka_version: str = "4.3") -> MetadataVersion:
        """MetadataVersion.latestTesting() of a release: the last level its enum lists, read at
        3.9.0 (4.0-IV1), 4.0 (4.1-IV0), 4.1.0 (4.2-IV1), 4.2.0 (4.3-IV0), 4.3.0 (4.4-IV0) and
        the 4.4 branch f86720838c (4.4-IV2); releases before 3.9: their latest production level
        (not read)."""
        release = ".".join(str(kafka_version).split(".")[:2])
        level = _LATEST_TESTING_LEVEL.get(release)
        if level is None:
            return cls.latest_for(release)
        return cls.from_feature_level(level)

    def is_production_for(self, kafka_version: str) -> bool:
        """Whether this level is at most the latest level of release ``kafka_version``."""
        return self <= MetadataVersion.latest_for(kafka_version)

    # -- eligible.leader.replicas.version (EligibleLeaderReplicasVersion) ------------------
    def default_elr_feature_level(self) -> int:
        """The ``eligible.leader.replicas.version`` a new cluster formatted at this
        metadata.version gets: ELRV_1 bootstraps at 4.1-IV0 (on by default from 4.1; a preview
        to enable by hand in 4.0), else ELRV_0."""
        return 1 if self.is_at_least(IBP_4_1_IV0) else 0

    def supports_elr_feature_level(self, level: int) -> bool:
        """ELRV_1 depends on metadata.version >= 4.0-IV1."""
        return level <= 0 or self.is_elr_supported()


def _build() -> None:
    versions = []
    for i, (release, sub, level, changed) in enumerate(_LEVELS):
        versions.append(MetadataVersion(release, sub, level, changed, i))
    MetadataVersion.VERSIONS = tuple(versions)
    by_name: dict[str, MetadataVersion] = {}
    for mv in versions:
        by_name[mv.version()] = mv
    for mv in versions:           # a bare release maps to its latest level
        by_name[mv.release] = mv
    MetadataVersion._BY_NAME = by_name
    for mv in versions:           # MetadataVersion.IBP_3_7_IV4 etc., as Kafka's enum constants
        setattr(MetadataVersion, f"IBP_{mv.release.replace('.', '_')}_{mv.sub_version}", mv)


_build()

IBP_3_0_IV1 = MetadataVersion.parse("3.0-IV1")
IBP_3_2_IV0 = MetadataVersion.parse("3.2-IV0")
IBP_3_3_IV0 = MetadataVersion.parse("3.3-IV0")
IBP_3_3_IV1 = MetadataVersion.parse("3.3-IV1")
IBP_3_3_IV2 = MetadataVersion.parse("3.3-IV2")
IBP_3_3_IV3 = MetadataVersion.parse("3.3-IV3")
IBP_3_4_IV0 = MetadataVersion.parse("3.4-IV0")
IBP_3_5_IV2 = MetadataVersion.parse("3.5-IV2")
IBP_3_6_IV0 = MetadataVersion.parse("3.6-IV0")
IBP_3_6_IV1 = MetadataVersion.parse("3.6-IV1")
IBP_3_7_IV0 = MetadataVersion.parse("3.7-IV0")
IBP_3_7_IV2 = MetadataVersion.parse("3.7-IV2")
IBP_4_0_IV0 = MetadataVersion.parse("4.0-IV0")
IBP_4_0_IV1 = MetadataVersion.parse("4.0-IV1")
IBP_4_1_IV0 = MetadataVersion.parse("4.1-IV0")
IBP_4_3_IV0 = MetadataVersion.parse("4.3-IV0")
IBP_4_4_IV2 = MetadataVersion.parse("4.4-IV2")

MINIMUM_KRAFT_VERSION = IBP_3_0_IV1        # MetadataVersion.MINIMUM_KRAFT_VERSION (3.x)
MINIMUM_BOOTSTRAP_VERSION = IBP_3_3_IV0    # MetadataVersion.MINIMUM_BOOTSTRAP_VERSION (3.x)
MINIMUM_VERSION_4X = IBP_3_3_IV3           # MetadataVersion.MINIMUM_VERSION in 4.x
MINIMUM_VERSION = MINIMUM_VERSION_4X        # (KAFKA-18601, 4.0)
