"""What a controller writes when it becomes active:
``org.apache.kafka.controller.ActivationRecordsGenerator`` (4.3.0, a9ce322153) and the part of
``org.apache.kafka.metadata.bootstrap.BootstrapMetadata`` it reads.

On a log that finalized no metadata.version yet, the new active controller appends the
bootstrap records (metadata.version, the other features the bootstrap finalizes, and a
cluster-level ``min.insync.replicas`` when it enables Eligible Leader Replicas). From
metadata.version 3.6-IV1 (KIP-868) they go inside a metadata transaction (Begin ... End), as
several batches may be needed; before, as one atomic batch. A transaction a failed controller
left open is aborted first (``AbortTransactionRecord``); a metadata.version without
transactions cannot continue from one. On a log that has a metadata.version, only an open
transaction is aborted.

kafkasim's ``QuorumController`` writes the same bootstrap records without the transaction
records (``quorum_controller.activation_records_for_empty_log``): its offsets -- broker epochs
among them -- are those of a log without them. This module is Kafka's generator, for the
controller tests that drive it alone.
"""

from __future__ import annotations

from collections.abc import Callable

from kafkasim.control.kraft.metadata_version import MetadataVersion
from kafkasim.control.kraft.periodic_tasks import ControllerResult
from kafkasim.control.kraft.records import (
    AbortTransactionRecord,
    BeginTransactionRecord,
    ConfigRecord,
    EndTransactionRecord,
    FeatureLevelRecord,
)

METADATA_VERSION = "metadata.version"
ELR_FEATURE_NAME = "eligible.leader.replicas.version"


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
    receives the line Kafka logs at activation."""

    @staticmethod
    def records_for_empty_log(activation_message_consumer: Callable[[str], None],
                              transaction_start_offset: int,
                              bootstrap_metadata: BootstrapMetadata,
                              metadata_version: MetadataVersion,
                              default_min_in_sync_replicas: int) -> ControllerResult:
        """``recordsForEmptyLog``."""
        transactions = metadata_version.is_metadata_transaction_supported()
        count = len(bootstrap_metadata.records())
        source = bootstrap_metadata.source()
        message = "Performing controller activation. "
        records: list = []
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
            records += [AbortTransactionRecord("Controller failover"),
                        BeginTransactionRecord("Bootstrap records")]
        else:
            in_transaction = "in metadata transaction " if transactions else ""
            message += (f"The metadata log appears to be empty. Appending {count} bootstrap "
                        f"record(s) {in_transaction}at metadata.version {metadata_version} "
                        f"from bootstrap source '{source}'. ")
            if transactions:
                records.append(BeginTransactionRecord("Bootstrap records"))
        records += bootstrap_metadata.records()
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
                                  cur_metadata_version: MetadataVersion) -> ControllerResult:
        """``recordsForNonEmptyLog``: abort a transaction left open, nothing else."""
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
        activation_message_consumer(message.strip())
        return ControllerResult.atomic_of(records, None)

    @staticmethod
    def generate(activation_message_consumer: Callable[[str], None],
                 transaction_start_offset: int, bootstrap_metadata: BootstrapMetadata,
                 cur_metadata_version: MetadataVersion | None,
                 default_min_in_sync_replicas: int) -> ControllerResult:
        """``generate``: the bootstrap records when no metadata.version is known yet
        (``cur_metadata_version`` None, Kafka's Optional.empty), else the non-empty log's."""
        if cur_metadata_version is None:
            return ActivationRecordsGenerator.records_for_empty_log(
                activation_message_consumer, transaction_start_offset, bootstrap_metadata,
                bootstrap_metadata.metadata_version(), default_min_in_sync_replicas)
        return ActivationRecordsGenerator.records_for_non_empty_log(
            activation_message_consumer, transaction_start_offset, cur_metadata_version)
