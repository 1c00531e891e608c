"""Kafka's error codes by their ``Errors`` enum names (clients/.../protocol/Errors.java), and the
exceptions the broker's own classes throw (``OffsetOutOfRangeException``,
``IllegalArgumentException``)."""

from __future__ import annotations

NONE = "NONE"
OFFSET_OUT_OF_RANGE = "OFFSET_OUT_OF_RANGE"
UNKNOWN_TOPIC_OR_PARTITION = "UNKNOWN_TOPIC_OR_PARTITION"
LEADER_NOT_AVAILABLE = "LEADER_NOT_AVAILABLE"
# (9) a replica not hosted here, asked of a broker that need not lead it (2.4-2.5)
REPLICA_NOT_AVAILABLE = "REPLICA_NOT_AVAILABLE"
# NOT_LEADER_FOR_PARTITION before 2.6 (KAFKA-10223)
NOT_LEADER_OR_FOLLOWER = "NOT_LEADER_OR_FOLLOWER"
NOT_LEADER_FOR_PARTITION = "NOT_LEADER_FOR_PARTITION"
REQUEST_TIMED_OUT = "REQUEST_TIMED_OUT"
NETWORK_EXCEPTION = "NETWORK_EXCEPTION"
STALE_CONTROLLER_EPOCH = "STALE_CONTROLLER_EPOCH"
NOT_ENOUGH_REPLICAS = "NOT_ENOUGH_REPLICAS"
NOT_ENOUGH_REPLICAS_AFTER_APPEND = "NOT_ENOUGH_REPLICAS_AFTER_APPEND"
INVALID_REQUIRED_ACKS = "INVALID_REQUIRED_ACKS"
FENCED_LEADER_EPOCH = "FENCED_LEADER_EPOCH"
UNKNOWN_LEADER_EPOCH = "UNKNOWN_LEADER_EPOCH"
OFFSET_NOT_AVAILABLE = "OFFSET_NOT_AVAILABLE"
INVALID_UPDATE_VERSION = "INVALID_UPDATE_VERSION"
INELIGIBLE_REPLICA = "INELIGIBLE_REPLICA"
OPERATION_NOT_ATTEMPTED = "OPERATION_NOT_ATTEMPTED"
NOT_CONTROLLER = "NOT_CONTROLLER"
STALE_BROKER_EPOCH = "STALE_BROKER_EPOCH"
UNKNOWN_TOPIC_ID = "UNKNOWN_TOPIC_ID"
INVALID_REQUEST = "INVALID_REQUEST"
UNKNOWN_SERVER_ERROR = "UNKNOWN_SERVER_ERROR"
NEW_LEADER_ELECTED = "NEW_LEADER_ELECTED"
OUT_OF_ORDER_SEQUENCE_NUMBER = "OUT_OF_ORDER_SEQUENCE_NUMBER"
# DuplicateSequenceException (code 46): the broker has the batch but no longer its offset
DUPLICATE_SEQUENCE_NUMBER = "DUPLICATE_SEQUENCE_NUMBER"
# UnknownProducerIdException (code 59, 1.0+): the broker has no state for the producer id; an
# OutOfOrderSequenceException, not a RetriableException
UNKNOWN_PRODUCER_ID = "UNKNOWN_PRODUCER_ID"
INVALID_PRODUCER_EPOCH = "INVALID_PRODUCER_EPOCH"
# errors whose exception leaves an idempotent producer's TransactionManager in its fatal state
# (maybeTransitionToErrorState: ClusterAuthorizationException, TransactionalIdAuthorization
# Exception, ProducerFencedException, UnsupportedVersionException); no simulated broker answers
# a produce with them
CLUSTER_AUTHORIZATION_FAILED = "CLUSTER_AUTHORIZATION_FAILED"
TRANSACTIONAL_ID_AUTHORIZATION_FAILED = "TRANSACTIONAL_ID_AUTHORIZATION_FAILED"
PRODUCER_FENCED = "PRODUCER_FENCED"
UNSUPPORTED_VERSION = "UNSUPPORTED_VERSION"
INVALID_REPLICATION_FACTOR = "INVALID_REPLICATION_FACTOR"
TOPIC_ALREADY_EXISTS = "TOPIC_ALREADY_EXISTS"
INVALID_CONFIG = "INVALID_CONFIG"
INVALID_PARTITIONS = "INVALID_PARTITIONS"
INVALID_REPLICA_ASSIGNMENT = "INVALID_REPLICA_ASSIGNMENT"
NO_REASSIGNMENT_IN_PROGRESS = "NO_REASSIGNMENT_IN_PROGRESS"   # code 85 (KIP-455, 2.4)
INVALID_TOPIC_EXCEPTION = "INVALID_TOPIC_EXCEPTION"
ELECTION_NOT_NEEDED = "ELECTION_NOT_NEEDED"
PREFERRED_LEADER_NOT_AVAILABLE = "PREFERRED_LEADER_NOT_AVAILABLE"
ELIGIBLE_LEADERS_NOT_AVAILABLE = "ELIGIBLE_LEADERS_NOT_AVAILABLE"
BROKER_ID_NOT_REGISTERED = "BROKER_ID_NOT_REGISTERED"
# incremental fetch sessions (KIP-227, 1.1): Errors.java codes 70 and 71
FETCH_SESSION_ID_NOT_FOUND = "FETCH_SESSION_ID_NOT_FOUND"
INVALID_FETCH_SESSION_EPOCH = "INVALID_FETCH_SESSION_EPOCH"
# (UNKNOWN_SERVER_ERROR and CLUSTER_AUTHORIZATION_FAILED, codes -1 and 31, are also the
# controller's top-level AlterPartition errors the broker retries 50 ms later:
# DefaultAlterPartitionManager.handleAlterPartitionResponse)
# client-side outcome when delivery.timeout.ms expires
# (org.apache.kafka.common.errors.TimeoutException)
DELIVERY_TIMEOUT = "TimeoutException"
# client-side outcome of a batch a forced close aborts (KafkaProducer.close with a timeout that
# runs out, or 0: RecordAccumulator.abortIncompleteBatches, KafkaException "Producer is closed
# forcefully.")
PRODUCER_CLOSED_FORCEFULLY = "KafkaException"

# Errors a producer retries: their exception is a RetriableException in Kafka's client, but
# OUT_OF_ORDER_SEQUENCE_NUMBER's (an ApiException), which an idempotent producer retries in
# order (TransactionManager.canRetry, checked before this set).
RETRIABLE = frozenset({
    NOT_LEADER_OR_FOLLOWER, NOT_LEADER_FOR_PARTITION, LEADER_NOT_AVAILABLE, REQUEST_TIMED_OUT,
    NETWORK_EXCEPTION, NOT_ENOUGH_REPLICAS, NOT_ENOUGH_REPLICAS_AFTER_APPEND,
    UNKNOWN_TOPIC_OR_PARTITION, FENCED_LEADER_EPOCH, UNKNOWN_LEADER_EPOCH, OFFSET_NOT_AVAILABLE,
    OUT_OF_ORDER_SEQUENCE_NUMBER,  # retried in order by an idempotent producer
})

# KRaft broker registration: Errors.java codes 101 and 102 (KIP-631; BROKER_ID_NOT_REGISTERED
# above)
DUPLICATE_BROKER_REGISTRATION = "DUPLICATE_BROKER_REGISTRATION"
# KIP-1312 / KAFKA-20395 (4.4): Errors.java code 136, "The given controller ID was not
# registered." (UnregisterController; @4.4 f86720838c)
CONTROLLER_ID_NOT_REGISTERED = "CONTROLLER_ID_NOT_REGISTERED"


class OffsetOutOfRangeException(RuntimeError):
    """org.apache.kafka.common.errors.OffsetOutOfRangeException, as the broker's log throws it
    (UnifiedLog.read / LocalLog.read for an offset outside [log start, LEO],
    UnifiedLog.maybeIncrementLogStartOffset past the high watermark); ReplicaManager answers it
    as the OFFSET_OUT_OF_RANGE error. Not the consumer's exception of the same name
    (``kafkasim.runtime.clients.consumer.OffsetOutOfRangeException``,
    org.apache.kafka.clients.consumer)."""

    error = OFFSET_OUT_OF_RANGE

    def __init__(self, message: str) -> None:
        super().__init__(f"{OFFSET_OUT_OF_RANGE}: {message}")


class NotLeaderOrFollowerException(RuntimeError):
    """org.apache.kafka.common.errors.NotLeaderOrFollowerException, as the leader's Replica
    throws it for a stale follower fetch (Replica.updateFetchStateOrThrow, KAFKA-15221, 3.7+: a
    broker epoch older than the metadata cache's); ReplicaManager answers it as the
    NOT_LEADER_OR_FOLLOWER error of that partition."""

    error = NOT_LEADER_OR_FOLLOWER

    def __init__(self, message: str) -> None:
        super().__init__(f"{NOT_LEADER_OR_FOLLOWER}: {message}")


class UnexpectedAppendOffsetException(RuntimeError):
    """kafka.common.UnexpectedAppendOffsetException: a follower's append whose first offset is
    below the log end offset (UnifiedLog.append with assignOffsets = false). ``first_offset`` and
    ``last_offset`` are the fetched records' (Partition.appendRecordsToFollowerOrFutureReplica
    reads them to restart an empty log at the batch, KAFKA-6975)."""

    def __init__(self, message: str, first_offset: int, last_offset: int) -> None:
        super().__init__(message)
        self.first_offset = first_offset
        self.last_offset = last_offset


class ApiException(RuntimeError):
    """org.apache.kafka.common.errors.ApiException, as a broker's classes throw it
    (``Errors.exception(message)``): ``error`` is the error's name, what KafkaApis answers
    (Errors.forException). Partition.localLogWithEpochOrThrow throws FENCED_LEADER_EPOCH,
    UNKNOWN_LEADER_EPOCH or NOT_LEADER_OR_FOLLOWER, fetchOffsetForTimestamp
    OFFSET_NOT_AVAILABLE, ReplicaManager.getPartitionOrException NOT_LEADER_OR_FOLLOWER or
    UNKNOWN_TOPIC_OR_PARTITION."""

    def __init__(self, error: str, message: str = "") -> None:
        super().__init__(f"{error}: {message}" if message else error)
        self.error = error


INCONSISTENT_TOPIC_ID = "INCONSISTENT_TOPIC_ID"


class InconsistentTopicIdException(ApiException):
    """org.apache.kafka.common.errors.InconsistentTopicIdException (2.8+): a topic id that
    differs from the one already recorded for the partition (PartitionMetadataFile.record)."""

    def __init__(self, message: str) -> None:
        super().__init__(INCONSISTENT_TOPIC_ID, message)


class KafkaException(RuntimeError):
    """org.apache.kafka.common.KafkaException: a generic Kafka error (LogOffsetMetadata
    .positionDiff of offsets that cannot be compared)."""


class IllegalArgumentException(ValueError):
    """java.lang.IllegalArgumentException, as the broker's log throws it (UnifiedLog.truncateTo
    of a negative offset, maybeIncrementHighWatermark past the log end offset)."""


class IllegalStateException(RuntimeError):
    """java.lang.IllegalStateException: a call the object's state does not allow (a heartbeat
    from an unregistered broker, a KRaft transition QuorumState refuses, a non-monotonic update
    of the Raft leader's own end offset)."""


KAFKA_STORAGE_ERROR = "KAFKA_STORAGE_ERROR"


class KafkaStorageException(RuntimeError):
    """org.apache.kafka.common.errors.KafkaStorageException: a log dir file could not be read or
    written (CheckpointFileWithFailureHandler wraps the IOException in it, and the log dir goes
    offline through the LogDirFailureChannel)."""

    error = KAFKA_STORAGE_ERROR


#: the Kafka exceptions above: what a Kafka ``catch { case t: Throwable => ... }`` on the broker
#: catches in kafkasim (AbstractFetcherThread's markPartitionFailed paths, KIP-461). A plain
#: RuntimeError is a limit of kafkasim's model (e.g. a gap its dense log cannot hold) and a
#: Python error is a bug: neither is caught there.
KAFKA_EXCEPTIONS = (OffsetOutOfRangeException, NotLeaderOrFollowerException,
                    UnexpectedAppendOffsetException, ApiException, KafkaException,
                    IllegalArgumentException, IllegalStateException, KafkaStorageException)
