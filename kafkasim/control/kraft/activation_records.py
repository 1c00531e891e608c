"""What a controller writes when it becomes active:
``org.apache.kafka.controller.ActivationRecordsGenerator`` (3.6.0 .. 4.4, f86720838c) and the
part of ``org.apache.kafka.metadata.bootstrap.BootstrapMetadata`` it reads. The running
``QuorumController`` calls ``generate`` on activation (``complete_activation``); this is the one
copy of the activation rules.

On a log that finalized no metadata.version yet, the new active controller appends the
bootstrap records (metadata.version, the other features the bootstrap finalizes, and a
cluster-level ``min.insync.replicas`` when it enables Eligible Leader Replicas). From
metadata.version 3.6-IV1 (KIP-868) they go inside a metadata transaction (Begin ... End), as
several batches may be needed; before, as one atomic batch. A transaction a failed controller
left open is aborted first (``AbortTransactionRecord``); a metadata.version without
transactions cannot continue from one. On a log that has a metadata.version, only an open
transaction is aborted.

By release (``kafka_version``; the rules in kafkasim.settings.versions): 3.3 and 3.4 write the
bootstrap records alone (QuorumController.CompleteActivationEvent @3.4.0); 3.5 - 3.9 add a
ZkMigrationStateRecord NONE after them (``activation_writes_zk_migration_state``; 3.9 only from
metadata.version 3.6-IV1, ``zk_migration_state_needs_metadata_transactions``); 4.0 drops it and
adds the ELR ``min.insync.replicas``. Through 4.0 the bootstrap records are written when the
controller replayed no record at all (``is_empty``, LogReplayTracker.empty()); from 4.1
(KAFKA-18858) when no metadata.version was replayed. kafkasim runs no ZooKeeper migration
(zookeeper.metadata.migration.enable is false): its PRE_MIGRATION / MIGRATION branches are not
modelled.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkasim.control.kraft.metadata_version import (
    ELR_FEATURE_NAME,
    MINIMUM_KRAFT_VERSION,
    MetadataVersion,
)
from kafkasim.control.kraft.periodic_tasks import ControllerResult
from kafkasim.control.kraft.records import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
    ZkMigrationState,
    ZkMigrationStateRecord,
)
from kafkasim.settings.versions import DEFAULT_VERSION, rules_for

METADATA_VERSION = "metadata.version"


class BootstrapMetadata:
    """``BootstrapMetadata``: the records a new cluster's first active controller writes, and
    where they came from (``source``, for the log line)."""

    def __init__(self, records, source: str) -> None:
        self._records = tuple(records)
        self._source = source
        if self.feature_level(METADATA_VERSION) == 0:
            raise ValueError(f"No FeatureLevelRecord for {METADATA_VERSION} was found in the "
                             f"bootstrap metadata from {source}")

    @classmethod
    def from_version(cls, metadata_version: MetadataVersion, source: str) -> BootstrapMetadata:
        """``fromVersion``: a single metadata.version record."""
        return cls([FeatureLevelRecord(METADATA_VERSION, metadata_version.feature_level)],
                   source)

    def records(self) -> tuple:
        return self._records

    def source(self) -> str:
        return self._source

    def feature_level(self, name: str) -> int:
        """``featureLevel``: the level a FeatureLevelRecord of ``name`` sets, 0 when none."""
        for record in self._records:
            if type(record) is FeatureLevelRecord and record.name == name:
                return record.feature_level
        return 0

    def metadata_version(self) -> MetadataVersion:
        return MetadataVersion.from_feature_level(self.feature_level(METADATA_VERSION))

    def copy_with_feature_record(self, name: str, level: int) -> BootstrapMetadata:
        """``copyWithFeatureRecord``: the same records with ``name`` set to ``level`` (replacing
        a record of that feature in place, or appended)."""
        new = FeatureLevelRecord(name, level)
        records = [new if type(r) is FeatureLevelRecord and r.name == name else r
                   for r in self._records]
        if new not in records:
            records.append(new)
        return BootstrapMetadata(records, self._source)


class ActivationRecordsGenerator:
    """``ActivationRecordsGenerator``: static methods, as Kafka's. ``activation_message_consumer``
    receives the line Kafka logs at activation. ``kafka_version`` (keyword, kafkasim's): the
    release whose rules apply (default the newest)."""

    @staticmethod
    def records_for_empty_log(activation_message_consumer: Callable[[str], None],
                              transaction_start_offset: int,
                              bootstrap_metadata: BootstrapMetadata,
                              metadata_version: MetadataVersion,
                              default_min_in_sync_replicas: int, *,
                              kafka_version: str = DEFAULT_VERSION) -> ControllerResult:
        """``recordsForEmptyLog`` (ActivationRecordsGenerator.java:39@4.3.0, :34@3.9.0-rc3):
        [Abort,] Begin, the bootstrap records, [ZkMigrationStateRecord NONE (3.5 - 3.9),]
        [the ELR min.insync.replicas (4.x),] End; before metadata.version 3.6-IV1 no
        transaction records and one atomic batch."""
        transactions = metadata_version.is_metadata_transaction_supported()
        message, records = _empty_log_start(transaction_start_offset, bootstrap_metadata,
                                            metadata_version)
        records += bootstrap_metadata.records()
        if _writes_zk_migration_state(metadata_version, kafka_version):
            message += ("Setting the ZK migration state to NONE since this is a de-novo KRaft "
                        "cluster. ")
            records.append(ZkMigrationStateRecord(ZkMigrationState.NONE))
        if bootstrap_metadata.feature_level(ELR_FEATURE_NAME) > 0:
            records.append(ConfigRecord("BROKER", "", "min.insync.replicas",
                                        str(default_min_in_sync_replicas)))
        activation_message_consumer(message.strip())
        if transactions:
            records.append(EndTransactionRecord())
            return ControllerResult.of(records, None)
        return ControllerResult.atomic_of(records, None)

    @staticmethod
    def records_for_non_empty_log(activation_message_consumer: Callable[[str], None],
                                  transaction_start_offset: int,
                                  cur_metadata_version: MetadataVersion, *,
                                  kafka_version: str = DEFAULT_VERSION) -> ControllerResult:
        """``recordsForNonEmptyLog`` (ActivationRecordsGenerator.java:114@4.3.0, :117
        @3.9.0-rc3): abort a transaction left open, nothing else (3.5 - 3.9 also log the ZK
        migration state, NONE on a cluster created in KRaft mode)."""
        message = "Performing controller activation. "
        records: list = []
        if transaction_start_offset != -1:
            if not cur_metadata_version.is_metadata_transaction_supported():
                raise RuntimeError(
                    f"Detected in-progress transaction at offset {transaction_start_offset}, "
                    f"but the metadata.version {cur_metadata_version} does not support "
                    "transactions. Cannot continue.")
            message += (f"Aborting in-progress metadata transaction at offset "
                        f"{transaction_start_offset}. ")
            records.append(AbortTransactionRecord("Controller failover"))
        message += _non_empty_log_zk_message(cur_metadata_version, kafka_version)
        activation_message_consumer(message.strip())
        return ControllerResult.atomic_of(records, None)

    @staticmethod
    def generate(activation_message_consumer: Callable[[str], None],
                 transaction_start_offset: int, bootstrap_metadata: BootstrapMetadata,
                 cur_metadata_version: MetadataVersion | None,
                 default_min_in_sync_replicas: int, *, is_empty: bool | None = None,
                 kafka_version: str = DEFAULT_VERSION) -> ControllerResult:
        """``generate`` (ActivationRecordsGenerator.java:153@4.3.0): the bootstrap records when
        no metadata.version is known yet (``cur_metadata_version`` None, Kafka's
        Optional.empty), else the non-empty log's. Through 4.0 Kafka passes ``isEmpty``
        (LogReplayTracker.empty(), ActivationRecordsGenerator.java:218@3.9.0-rc3): given, it
        decides instead."""
        empty = cur_metadata_version is None if is_empty is None else is_empty
        if empty:
            return ActivationRecordsGenerator.records_for_empty_log(
                activation_message_consumer, transaction_start_offset, bootstrap_metadata,
                bootstrap_metadata.metadata_version(), default_min_in_sync_replicas,
                kafka_version=kafka_version)
        return ActivationRecordsGenerator.records_for_non_empty_log(
            activation_message_consumer, transaction_start_offset, cur_metadata_version,
            kafka_version=kafka_version)


def _empty_log_start(transaction_start_offset: int, bootstrap_metadata: BootstrapMetadata,
                     metadata_version: MetadataVersion) -> tuple[str, list]:
    """recordsForEmptyLog's first part (ActivationRecordsGenerator.java:49-89@4.3.0): the
    log line so far and the records before the bootstrap ones (Abort and Begin of a partial
    bootstrap transaction; Begin of a new one from 3.6-IV1)."""
    transactions = metadata_version.is_metadata_transaction_supported()
    count = len(bootstrap_metadata.records())
    source = bootstrap_metadata.source()
    message = "Performing controller activation. "
    if transaction_start_offset != -1:
        if not transactions:
            raise RuntimeError(
                f"Detected partial bootstrap records transaction at "
                f"{transaction_start_offset}, but the metadata.version {metadata_version} "
                "does not support transactions. Cannot continue.")
        message += (f"Aborting partial bootstrap records transaction at offset "
                    f"{transaction_start_offset}. Re-appending {count} bootstrap record(s) "
                    f"in new metadata transaction at metadata.version {metadata_version} "
                    f"from bootstrap source '{source}'. ")
        return message, [AbortTransactionRecord("Controller failover"),
                         BeginTransactionRecord("Bootstrap records")]
    in_transaction = "in metadata transaction " if transactions else ""
    message += (f"The metadata log appears to be empty. Appending {count} bootstrap "
                f"record(s) {in_transaction}at metadata.version {metadata_version} "
                f"from bootstrap source '{source}'. ")
    return message, [BeginTransactionRecord("Bootstrap records")] if transactions else []


def _writes_zk_migration_state(metadata_version: MetadataVersion, kafka_version: str) -> bool:
    """Whether an empty log's activation writes ZkMigrationStateRecord NONE: 3.5 - 3.9 at a
    metadata.version with migrations (3.4-IV0), 3.9 with transactions (3.6-IV1, KAFKA-17457;
    ActivationRecordsGenerator.java:91@3.9.0-rc3)."""
    rules = rules_for(kafka_version).controller
    if not rules.activation_writes_zk_migration_state:
        return False
    if rules.zk_migration_state_needs_metadata_transactions:
        return metadata_version.is_metadata_transaction_supported()
    return metadata_version.is_migration_supported()


def _non_empty_log_zk_message(metadata_version: MetadataVersion, kafka_version: str) -> str:
    """recordsForNonEmptyLog's log line about the ZK migration state (3.6 - 3.9,
    ActivationRecordsGenerator.java:145-171@3.9.0-rc3): kafkasim's state is always NONE."""
    rules = rules_for(kafka_version).controller
    if not rules.activation_writes_zk_migration_state:
        return ""
    message = ""
    if metadata_version == MINIMUM_KRAFT_VERSION:
        message += ("No metadata.version feature level record was found in the log. Treating "
                    f"the log as version {MINIMUM_KRAFT_VERSION}. ")
    if metadata_version.is_migration_supported():
        message += "Loaded ZK migration state of NONE. "
        if rules.zk_migration_state_needs_metadata_transactions:
            message += "This is expected because this is a de-novo KRaft cluster."
    return message
