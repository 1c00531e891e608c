"""Kafka configuration keys, defaults and validation, by Kafka's own names, version by version.

Learners configure the simulator with the keys they would put in ``server.properties``,
``kafka-configs --add-config`` or a client's ``Properties``; this module knows, for every
supported ``kafka_version``, which of those keys exist, their type, default, unit and valid range,
and it parses values the way Kafka's ``ConfigDef`` does (strings such as ``"30000"`` or ``"TRUE"``
as well as native ints and booleans). Mistakes raise :class:`ConfigError` with Kafka-style
messages ("Invalid value 0 for configuration min.insync.replicas: Value must be at least 1") plus
the hints a learner needs (did-you-mean, which kind of config a key belongs to, which release
added or removed it).

Sources, all checked in ``github:apache/kafka`` at the release tags: ``KafkaConfig`` (Scala,
<= 3.7) and its Java successors ``ReplicationConfigs`` / ``ServerLogConfigs`` / ``KRaftConfigs`` /
``ZkConfigs``; ``LogConfig`` and ``ServerTopicConfigSynonyms`` for topic configs;
``ProducerConfig`` / ``KafkaProducer`` and ``ConsumerConfig`` / ``KafkaConsumer`` for clients.
4.0 values that post-date the source snapshot come from KIP-1030 and the 4.0 upgrade notes.

Registries are plain dicts in a fixed insertion order, and nothing iterates over a set, so every
function here is deterministic.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkasim.settings.javautil import (
    java_duration_parse,
    java_hashmap_iteration_order,
    java_hashmap_spread,
    java_hashtable_iteration_order,
    java_string_hash,
    to_int32,
)
from kafkasim.settings.modes import KRAFT, ZOOKEEPER, metadata_mode_for
from kafkasim.settings.versions import (
    DEFAULT_VERSION,
    SUPPORTED_VERSIONS,
    describe_rules,
    normalize_version,
    rules_for,
    version_at_least,
)

__all__ = [
    "BROKER",
    "CONSUMER",
    "INT_MAX",
    "KINDS",
    "LONG_MAX",
    "PRODUCER",
    "TOPIC",
    "ConfigDef",
    "ConfigError",
    "ConfigWarning",
    "Range",
    "Synonym",
    "ValidString",
    "Versioned",
    "broker_config",
    "by_version",
    "consumer_config",
    "default_differences",
    "describe_profile",
    "with_simulator_fallbacks",
    "describe_configs",
    "keys_for",
    "parse_value",
    "parse_quorum_voters",
    "producer_config",
    "registry",
    "topic_config",
    "topic_overrides_for_describe",
    "validate_key",
    "validate_quorum",
]

INT_MIN, INT_MAX = -(2**31), 2**31 - 1  # java.lang.Integer
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1  # java.lang.Long


class ConfigError(ValueError):
    """An unknown, mistyped, out-of-range, version-unavailable or inconsistent configuration."""


class ConfigWarning(UserWarning):
    """A setting Kafka accepts but ignores or logs an error about (the broker still starts)."""


# --------------------------------------------------------------------------------------------
# Building blocks: version-dependent values and validators (ConfigDef.Range / ValidString)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Versioned:
    """A value that changed between releases: ``(since_version, value)`` steps, oldest first."""

    steps: tuple[tuple[str, Any], ...]

    def at(self, version: str) -> Any:
        """The value in force in ``version`` (the last step whose release is <= it)."""
        value = None
        for since, step_value in self.steps:
            if version_at_least(version, since):
                value = step_value
        return value


def by_version(*steps: tuple[str, Any]) -> Versioned:
    """Shorthand: ``by_version(("0.8.2", 10000), ("2.5", 30000))``."""
    return Versioned(tuple(steps))


def _resolve(spec: Any, version: str) -> Any:
    """Evaluate a plain value, a :class:`Versioned`, or a callable ``f(version)``."""
    if isinstance(spec, Versioned):
        return spec.at(version)
    if callable(spec) and not isinstance(spec, (Range, ValidString)):
        return spec(version)
    return spec


def _java_str(value: Any) -> str:
    """Render a value the way Java prints it in messages and describe output."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(_java_str(v) for v in value)
    return str(value)


def _invalid(name: str, value: Any, message: str) -> ConfigError:
    # org.apache.kafka.common.config.ConfigException(name, value, message)
    return ConfigError(f"Invalid value {_java_str(value)} for configuration {name}: {message}")


@dataclass(frozen=True)
class Range:
    """Numeric bounds, like Kafka's ``ConfigDef.Range.atLeast`` / ``between``."""

    min: int | float | None = None
    max: int | float | None = None

    def check(self, name: str, value: Any) -> None:
        """Raise ConfigError unless ``min <= value <= max`` (same wording as Kafka)."""
        if value is None:
            raise _invalid(name, value, "Value must be non-null")
        if self.min is not None and value < self.min:
            raise _invalid(name, value, f"Value must be at least {self.min}")
        if self.max is not None and value > self.max:
            raise _invalid(name, value, f"Value must be no more than {self.max}")

    def __str__(self) -> str:
        if self.max is None:
            return f"[{self.min},...]"
        if self.min is None:
            return f"[...,{self.max}]"
        return f"[{self.min},...,{self.max}]"


@dataclass(frozen=True)
class ValidString:
    """An enumerated string, like Kafka's ``ConfigDef.ValidString.in`` (case-sensitive)."""

    choices: tuple[str, ...]

    def check(self, name: str, value: Any) -> None:
        """Raise ConfigError unless ``value`` is one of the choices."""
        if value not in self.choices:
            raise _invalid(name, value, f"String must be one of: {', '.join(self.choices)}")

    def __str__(self) -> str:
        return f"[{', '.join(self.choices)}]"


@dataclass(frozen=True)
class ValidList:
    """A list whose every element is one of ``choices`` (Kafka's ``ConfigDef.ValidList.in``)."""

    choices: tuple[str, ...]

    def check(self, name: str, value: Any) -> None:
        """Raise ConfigError naming the first element that is not a choice (ValidString wording)."""
        for element in value or ():
            ValidString(self.choices).check(name, element)

    def __str__(self) -> str:
        return f"[{', '.join(self.choices)}]"


#: AutoOffsetResetStrategy.StrategyType (4.0+) but by_duration, which carries a duration
AUTO_OFFSET_RESET_TYPES = ("latest", "earliest", "none")
BY_DURATION = "by_duration"


def parse_auto_offset_reset(value: Any) -> tuple[str, int | None]:
    """AutoOffsetResetStrategy.fromString (clients 4.0+, KIP-1106): ``(type, duration)``, the
    duration in nanoseconds for ``by_duration:<ISO-8601 duration>`` (java.time.Duration.parse,
    not negative), else None. The names are lower case only. ValueError with the message of
    Kafka's IllegalArgumentException otherwise (the consumer's strategy raises it as that)."""
    if value is None:
        raise ValueError("Auto offset reset strategy is null")
    if value == BY_DURATION:
        raise ValueError("<:duration> part is missing in by_duration auto offset reset strategy.")
    if value in AUTO_OFFSET_RESET_TYPES:
        return value, None
    if isinstance(value, str) and value.startswith(BY_DURATION + ":"):
        try:
            duration = java_duration_parse(value[len(BY_DURATION) + 1:])
        except ValueError:
            duration = -1
        if duration < 0:   # (fromString's own check, inside the try that rewords it)
            raise ValueError("Unable to parse duration string in by_duration offset reset "
                             "strategy.")
        return BY_DURATION, duration
    raise ValueError(f"Unknown auto offset reset strategy: {value}")


@dataclass(frozen=True)
class AutoOffsetResetValidator:
    """AutoOffsetResetStrategy.Validator (4.0+): earliest, latest, none or
    by_duration:<duration>."""

    def check(self, name: str, value: Any) -> None:
        try:
            parse_auto_offset_reset(value)
        except ValueError:
            raise _invalid(name, value, (
                f"Invalid value `{_java_str(value)}` for configuration {name}. The value must be "
                "either 'earliest', 'latest', 'none' or of the format "
                "'by_duration:<PnDTnHnMn.nS.>'.")) from None

    def __str__(self) -> str:
        # Validator.toString: the StrategyType values in their declared order
        return "[latest, earliest, none, by_duration:PnDTnHnMn.nS]"


#: Utils.HOST_PORT_PATTERN (clients/.../common/utils/Utils.java, trunk): optional scheme, optional
#: [..] around an IPv6 host, then :port; the whole string must match.
_HOST_PORT = re.compile(r"(?:[0-9a-zA-Z\-%._]*://)?\[?([0-9a-zA-Z\-%._:]*)]?:([0-9]+)")


def _host_port(entry: str) -> tuple[str | None, int | None]:
    """Utils.getHost / Utils.getPort: (host, port); (None, None) if the entry does not match.
    An empty host is refused too (Kafka would go on with an empty host name)."""
    match = _HOST_PORT.fullmatch(entry)
    if match is None:
        return None, None
    return (match.group(1) or None), int(match.group(2))


def parse_quorum_voters(value: Any) -> dict[int, tuple[str, int]]:
    """Parse ``controller.quorum.voters`` (``"1@host:9093,2@host:9094"`` or a list of entries)
    into {voter id: (host, port)}, in the given order, with Kafka's error texts
    (QuorumConfig.parseVoterConnections). A repeated id keeps its last entry, as Kafka's HashMap
    does; :func:`validate_quorum` warns about it.
    """
    if isinstance(value, str):
        entries = [part.strip() for part in value.split(",")] if value.strip() else []
    else:
        entries = [str(part).strip() for part in value or ()]
    voters: dict[int, tuple[str, int]] = {}
    name = "controller.quorum.voters"
    for entry in entries:
        parts = entry.split("@")
        if len(parts) != 2:
            raise ConfigError(
                f"Invalid configuration value for {name}. Each entry should be in the form "
                "`{id}@{host}:{port}`."
            )
        text = parts[0].strip()
        digits = text[1:] if text[:1] in "+-" else text
        if not digits.isdigit() or not -(2**31) <= int(text) <= 2**31 - 1:
            raise ConfigError(f"Failed to parse voter ID as an integer from {parts[0]}")
        host, port = _host_port(parts[1])
        if host is None:
            raise ConfigError(
                f"Failed to parse host name from entry {entry} for the configuration {name}. "
                "Each entry should be in the form `{id}@{host}:{port}`."
            )
        if port is None:  # pragma: no cover - the pattern needs a port to match at all
            raise ConfigError(
                f"Failed to parse host port from entry {entry} for the configuration {name}. "
                "Each entry should be in the form `{id}@{host}:{port}`."
            )
        voters.pop(int(text), None)
        voters[int(text)] = (host, port)
    return voters


@dataclass(frozen=True)
class QuorumVoters:
    """QuorumConfig.ControllerQuorumVotersValidator: entries parse as ``{id}@{host}:{port}``."""

    def check(self, name: str, value: Any) -> None:
        """Raise ConfigError with Kafka's text for a malformed entry."""
        if value is None:
            raise _invalid(name, value, "Value must be non-null")
        parse_quorum_voters(value)

    def __str__(self) -> str:
        return "non-empty list"


@dataclass(frozen=True)
class QuorumBootstrapServers:
    """QuorumConfig.ControllerQuorumBootstrapServersValidator: entries are ``{host}:{port}``."""

    def check(self, name: str, value: Any) -> None:
        """Raise ConfigError with Kafka's text for a malformed entry."""
        for entry in value or ():
            host, port = _host_port(entry)
            if host is None:
                raise ConfigError(
                    f"Failed to parse host name from {entry} for the configuration {name}. "
                    'Each entry should be in the form "{host}:{port}"'
                )

    def __str__(self) -> str:
        return "non-empty list"


def validate_quorum(voters: list[int]) -> list[str]:
    """Warnings about a KRaft controller quorum of ``voters`` (voter ids), by Raft's majority rule.

    A Raft quorum of n voters needs a majority, n // 2 + 1, to elect a leader and to commit a
    record, so it survives (n - 1) // 2 voter failures (KIP-595; KafkaRaftClient). An even n
    tolerates no more failures than n - 1; a single voter tolerates none. No voters at all is a
    ConfigError: KRaft needs controller.quorum.voters or controller.quorum.bootstrap.servers
    (KafkaConfig.validateValues).
    """
    ids = list(voters)
    if not ids:
        raise ConfigError(
            "A KRaft quorum needs at least one voter: with 0 voters no controller can be elected "
            "(Raft needs a majority of the voters). Set controller.quorum.voters, e.g. "
            "'1@localhost:9093,2@localhost:9094,3@localhost:9095'"
        )
    out: list[str] = []
    seen: list[int] = []
    for voter in ids:
        if voter in seen:
            out.append(
                f"voter id {voter} is listed more than once; Kafka keeps one entry per id "
                "(QuorumConfig.parseVoterConnections), so the quorum is smaller than the list"
            )
        else:
            seen.append(voter)
    n = len(seen)
    majority = n // 2 + 1
    tolerated = (n - 1) // 2

    def failures(k: int) -> str:
        return f"{k} failure" if k == 1 else f"{k} failures"

    if n == 1:
        out.append(
            f"1 voter ({seen[0]}): a single-controller quorum has no fault tolerance; Raft needs a "
            "majority (1 of 1) to elect a leader and commit metadata, so if that controller is "
            "down no metadata can change (no leader elections, no ISR changes, no fencing)"
        )
    elif n % 2 == 0:
        out.append(
            f"{n} voters tolerate {failures(tolerated)}, the same as {n - 1}: Raft needs a "
            f"majority ({majority} of {n}) to elect a leader and commit, so the extra voter adds "
            f"no fault tolerance; use {n - 1} or {n + 1} voters"
        )
    return out


Validator = Range | ValidString | ValidList | QuorumVoters | QuorumBootstrapServers | \
    AutoOffsetResetValidator


@dataclass(frozen=True)
class Synonym:
    """A broker config that supplies a topic config's default, times ``factor`` (unit change)."""

    broker_key: str
    factor: int = 1


@dataclass(frozen=True)
class ConfigDef:
    """One configuration key: Kafka's name, type, default, validity and history."""

    name: str
    #: Kafka's ConfigDef.Type, lower-case: int, long, short, double, boolean, string, list, class.
    type: str
    #: A value, a :class:`Versioned`, or a callable taking the profile name.
    default: Any
    #: One line, our own words.
    doc: str
    unit: str | None = None
    #: A :class:`Range` / :class:`ValidString`, a :class:`Versioned` of them, or None.
    valid: Any = None
    #: First release (profile) that has the key; None means "at least since 0.8.2".
    since: str | None = None
    #: First release without the key.
    removed_in: str | None = None
    #: KIP / JIRA behind ``since`` / ``removed_in`` (for error messages).
    change_ref: str | None = None
    #: Key to use instead once this one is removed.
    replacement: str | None = None
    #: What a learner does instead once the key is removed, when no single key replaces it.
    removal_note: str | None = None
    #: Topic configs only: broker configs giving the default, highest priority first
    #: (ServerTopicConfigSynonyms.ALL_TOPIC_CONFIG_SYNONYMS).
    synonyms: tuple[Synonym, ...] = ()
    #: Kafka defines it with defineInternal (not in the public docs).
    internal: bool = False
    #: Metadata mode the key is read in ("zookeeper" or "kraft"); None means both. Kafka's
    #: ConfigDef still accepts the key in the other mode and ignores it.
    mode: str | None = None
    #: Optional hook: raw value -> value before type parsing (acks accepts ints).
    pre: Callable[[Any], Any] | None = None
    #: Optional hook: parsed value -> value stored in the resolved config (acks -> int).
    post: Callable[[Any], Any] | None = None

    def exists_in(self, version: str) -> bool:
        """Whether the key exists in ``version``'s profile."""
        if self.since is not None and not version_at_least(version, self.since):
            return False
        return self.removed_in is None or not version_at_least(version, self.removed_in)

    def default_for(self, version: str) -> Any:
        """The default in ``version`` (after the ``post`` hook)."""
        value = _resolve(self.default, version)
        return self.post(value) if self.post is not None and value is not None else value

    def validator_for(self, version: str) -> Validator | None:
        """The validator in force in ``version``."""
        return _resolve(self.valid, version)


def _cfg(name: str, type_: str, default: Any, doc: str, **kw: Any) -> tuple[str, ConfigDef]:
    return name, ConfigDef(name=name, type=type_, default=default, doc=doc, **kw)


def _acks_pre(value: Any) -> Any:
    # acks is a STRING config in Kafka; we also accept the ints 0, 1, -1.
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return value


def _acks_post(value: Any) -> int:
    # ProducerConfig.parseAcks: "all" -> -1, otherwise the number.
    return -1 if value == "all" else int(value)


_AT_LEAST_0 = Range(0)
_AT_LEAST_1 = Range(1)
_SEGMENT_BYTES_VALID = by_version(
    # log.segment.bytes: LegacyRecord.RECORD_OVERHEAD_V0 (Message.MinHeaderSize before 2.0) =
    # 14 bytes; KIP-1030 raised the broker key's minimum to 1 MiB in 4.0 (ServerLogConfigs).
    ("0.8.2", Range(14)),
    ("4.0", Range(1024 * 1024)),
)
#: segment.bytes (the topic key): 14 bytes until 4.1, where KAFKA-19080 gave it the broker
#: key's 1 MiB (LogConfig @4.0.0: atLeast(LegacyRecord.RECORD_OVERHEAD_V0); @4.1.0: atLeast(1024
#: * 1024), with the internal.segment.bytes escape for Kafka's own tests)
_TOPIC_SEGMENT_BYTES_VALID = by_version(("0.8.2", Range(14)), ("4.1", Range(1024 * 1024)))
#: the six controller.quorum.* timeouts: no validator until 4.1, atLeast(0) since (QuorumConfig)
_QUORUM_TIMEOUT_VALID = by_version(("2.8", None), ("4.1", _AT_LEAST_0))

#: The note for the two ZooKeeper-only controlled-shutdown keys Kafka 4.0 removed.
_KRAFT_SHUTDOWN_NOTE = (
    "No key replaces it: a KRaft broker asks for controlled shutdown in its heartbeats "
    "(every broker.heartbeat.interval.ms) until the controller lets it go; "
    "controlled.shutdown.enable remains"
)

# --------------------------------------------------------------------------------------------
# Registries
# --------------------------------------------------------------------------------------------

#: Broker configs (server.properties). KafkaConfig / ReplicationConfigs / ServerLogConfigs.
BROKER: dict[str, ConfigDef] = dict(
    [
        _cfg(
            "broker.id", "int", by_version(("0.8.2", None), ("0.9.0", -1)),
            "Unique id of this broker; -1 lets the broker generate one (0.8.x required it).",
            since=None,
        ),
        _cfg(
            "broker.rack", "string", None,
            "Rack of this broker, used for rack-aware replica placement.",
            since="0.10.0", change_ref="KIP-36",
        ),
        _cfg(
            "num.replica.fetchers", "int", 1,
            "Fetcher threads per source broker used to replicate partitions.",
            # no validator until 4.2 (ReplicationConfigs: atLeast(1) since; before, the runtime
            # bound below refuses 0 with the reason)
            unit="threads", valid=by_version(("0.8.2", None), ("4.2", _AT_LEAST_1)),
        ),
        _cfg(
            "controller.socket.timeout.ms", "int", 30000,
            "Socket timeout of controller-to-broker channels.",
            unit="ms",
        ),
        _cfg(
            "replica.fetch.wait.max.ms", "int", 500,
            "Longest time the leader parks a follower fetch when there is no new data.",
            unit="ms",
        ),
        _cfg(
            "replica.fetch.min.bytes", "int", 1,
            "Bytes a follower fetch waits for before the leader answers (up to the wait max).",
            unit="bytes",
        ),
        _cfg(
            "replica.fetch.max.bytes", "int", 1024 * 1024,
            "Per-partition size hint of a follower fetch; the first batch is always returned.",
            unit="bytes",
            # No validator before 0.10.1 (checked against message.max.bytes instead, KIP-74).
            valid=by_version(("0.8.2", None), ("0.10.1", _AT_LEAST_0)),
        ),
        _cfg(
            "replica.fetch.response.max.bytes", "int", 10 * 1024 * 1024,
            "Size hint for a whole follower fetch response.",
            unit="bytes", valid=_AT_LEAST_0, since="0.10.1", change_ref="KIP-74",
        ),
        _cfg(
            # KafkaApis.handleFetchRequest: the fetch's MaxBytes is at most this, for consumers
            # and followers alike (KafkaConfig @2.5.0, atLeast(1024))
            "fetch.max.bytes", "int", 55 * 1024 * 1024,
            "Most bytes the broker returns for one fetch request (caps the request's MaxBytes).",
            unit="bytes", valid=Range(1024), since="2.5", change_ref="KIP-541",
        ),
        _cfg(
            "replica.fetch.backoff.ms", "int", 1000,
            "How long a follower waits before retrying a partition after a fetch error.",
            unit="ms", valid=_AT_LEAST_0, since="0.9.0", change_ref="KafkaConfig @0.9.0.0",
        ),
        _cfg(
            "replica.socket.timeout.ms", "int", 30000,
            "Socket timeout of follower fetch requests; must be >= replica.fetch.wait.max.ms.",
            unit="ms",
        ),
        _cfg(
            "replica.lag.time.max.ms", "long", by_version(("0.8.2", 10000), ("2.5", 30000)),
            "A follower not caught up for this long is removed from the ISR (10 s before 2.5).",
            unit="ms",
        ),
        _cfg(
            "replica.lag.max.messages", "long", 4000,
            "0.8.x only: a follower this many messages behind the leader leaves the ISR.",
            unit="messages", removed_in="0.9.0",
            change_ref="KIP-16 / KAFKA-1546, automated replica lag tuning",
            replacement="replica.lag.time.max.ms",
        ),
        _cfg(
            "replica.high.watermark.checkpoint.interval.ms", "long", 5000,
            "How often each broker writes replication-offset-checkpoint (the HW file).",
            unit="ms",
        ),
        _cfg(
            "log.flush.interval.messages", "long", LONG_MAX,
            "Messages appended to a partition before its log is fsynced.",
            unit="messages", valid=_AT_LEAST_1,
        ),
        _cfg(
            "log.flush.interval.ms", "long", None,
            "Longest time data may stay unflushed; unset means log.flush.scheduler.interval.ms.",
            unit="ms",
        ),
        _cfg(
            "log.flush.scheduler.interval.ms", "long", LONG_MAX,
            "How often the log flusher checks whether a log needs flushing.",
            unit="ms",
        ),
        _cfg(
            "log.flush.offset.checkpoint.interval.ms", "int", 60000,
            "How often recovery-point-offset-checkpoint is written.",
            unit="ms", valid=_AT_LEAST_0,
        ),
        _cfg(
            "log.flush.start.offset.checkpoint.interval.ms", "int", 60000,
            "How often log-start-offset-checkpoint is written.",
            unit="ms", valid=_AT_LEAST_0, since="0.11.0", change_ref="KafkaConfig @0.11.0.0",
        ),
        _cfg(
            "log.initial.task.delay.ms", "long", 30000,
            "How long after startup the LogManager first runs its periodic tasks (log "
            "flusher, recovery-point and log-start-offset checkpoints); LogManager"
            ".InitialTaskDelayMs, 30000, before.",
            unit="ms", valid=_AT_LEAST_0, since="3.8", change_ref="KAFKA-16552",
            internal=True,
        ),
        _cfg(
            "log.retention.hours", "int", 168,
            "Hours to keep a log segment; used when log.retention.ms/minutes are unset.",
            unit="hours",
        ),
        _cfg(
            "log.retention.minutes", "int", None,
            "Minutes to keep a log segment; used when log.retention.ms is unset.",
            unit="minutes",
        ),
        _cfg(
            "log.retention.ms", "long", None,
            "Milliseconds to keep a log segment (-1: forever); overrides minutes and hours.",
            unit="ms",
        ),
        _cfg(
            "log.retention.check.interval.ms", "long", 5 * 60 * 1000,
            "How often the kafka-log-retention task deletes the segments retention lets go "
            "(LogManager.cleanupLogs; first run after the log manager's initial task delay).",
            unit="ms", valid=_AT_LEAST_1,
        ),
        _cfg(
            "log.segment.bytes", "int", 1024 * 1024 * 1024,
            "Size at which a partition's active segment is rolled.",
            unit="bytes", valid=_SEGMENT_BYTES_VALID,
        ),
        _cfg(
            "message.max.bytes", "int", by_version(("0.8.2", 1000012), ("2.5", 1048588)),
            "Largest record batch the broker accepts (1000012 before 2.5, KAFKA-4203).",
            unit="bytes", valid=_AT_LEAST_0,
        ),
        _cfg(
            "min.insync.replicas", "int", 1,
            "Smallest ISR with which an acks=all produce is accepted (topic default).",
            unit="replicas", valid=_AT_LEAST_1,
        ),
        _cfg(
            "unclean.leader.election.enable", "boolean",
            by_version(("0.8.2", True), ("0.11.0", False)),
            "Allow an out-of-sync replica to become leader (true before 0.11.0, KIP-106).",
        ),
        _cfg(
            "auto.create.topics.enable", "boolean", True,
            "Create a topic a Metadata request names but the cluster lacks (num.partitions, "
            "default.replication.factor); the request must allow it (producers do).",
        ),
        _cfg(
            "default.replication.factor", "int", 1,
            "Replication factor of automatically created topics.",
            unit="replicas",
        ),
        _cfg(
            "num.partitions", "int", 1,
            "Partition count of automatically created topics.",
            unit="partitions", valid=_AT_LEAST_1,
        ),
        _cfg(
            "auto.leader.rebalance.enable", "boolean", True,
            "Periodically move leadership back to preferred replicas.",
        ),
        _cfg(
            "leader.imbalance.check.interval.seconds", "long", 300,
            "How often the controller checks for leader imbalance.",
            unit="seconds", valid=by_version(("0.8.2", None), ("3.2", _AT_LEAST_1)),
        ),
        # Removed in 4.0 with ZooKeeper mode: docs/zk2kraft.html "Removal Zookeeper configs"
        # (Kafka 4.0); KAFKA-18743, apache/kafka PR #18821 for the percentage.
        _cfg(
            "leader.imbalance.per.broker.percentage", "int", 10,
            "Imbalance ratio per broker above which a preferred election runs (ZK controller).",
            unit="percent", mode=ZOOKEEPER, removed_in="4.0",
            change_ref="KAFKA-18743, apache/kafka PR #18821: only the ZooKeeper controller read it",
            removal_note=(
                "No key replaces it: the KRaft controller runs a preferred election for every "
                "partition not led by its preferred replica, every "
                "leader.imbalance.check.interval.seconds, while auto.leader.rebalance.enable is "
                "true"
            ),
        ),
        _cfg(
            "controlled.shutdown.enable", "boolean", True,
            "Move leadership away from a broker before it shuts down cleanly.",
        ),
        _cfg(
            "controlled.shutdown.max.retries", "int", 3,
            "ZooKeeper mode: controlled shutdown attempts before the broker shuts down anyway "
            "(KafkaServer.controlledShutdown).",
            mode=ZOOKEEPER, removed_in="4.0",
            change_ref="ZooKeeper mode removed, Kafka 4.0 docs/zk2kraft.html",
            removal_note=_KRAFT_SHUTDOWN_NOTE,
        ),
        _cfg(
            "controlled.shutdown.retry.backoff.ms", "long", 5000,
            "ZooKeeper mode: wait between controlled shutdown attempts.",
            unit="ms", mode=ZOOKEEPER, removed_in="4.0",
            change_ref="ZooKeeper mode removed, Kafka 4.0 docs/zk2kraft.html",
            removal_note=_KRAFT_SHUTDOWN_NOTE,
        ),
        _cfg(
            "zookeeper.session.timeout.ms", "int", by_version(("0.8.2", 6000), ("2.5", 18000)),
            "ZooKeeper session timeout; a broker whose session expires is considered dead.",
            unit="ms", removed_in="4.0",
            change_ref="ZooKeeper mode removed, KIP-500; Kafka 4.0 docs/zk2kraft.html",
            replacement="broker.session.timeout.ms", mode=ZOOKEEPER,
        ),
        # KRaftConfigs defines both without a validator (null): Kafka accepts any int.
        _cfg(
            "broker.session.timeout.ms", "int", 9000,
            "KRaft: a broker without a heartbeat for this long is fenced.",
            unit="ms", since="2.8", change_ref="KIP-631", mode=KRAFT,
        ),
        _cfg(
            "broker.heartbeat.interval.ms", "int", 2000,
            "KRaft: interval between broker heartbeats to the controller.",
            unit="ms", since="2.8", change_ref="KIP-631", mode=KRAFT,
        ),
        _cfg(
            "initial.broker.registration.timeout.ms", "int", 60000,
            "KRaft: a starting broker that could not register with the controller quorum "
            "within this time shuts down (BrokerLifecycleManager's RegistrationTimeoutEvent).",
            unit="ms", since="2.8", change_ref="KIP-631", mode=KRAFT,
        ),
        _cfg(
            "unclean.leader.election.interval.ms", "long", 300000,
            "KRaft controller: how often it tries unclean elections for leaderless partitions.",
            unit="ms", valid=_AT_LEAST_1, since="3.9", change_ref="ReplicationConfigs @3.9",
            internal=True, mode=KRAFT,
        ),
        # KafkaConfig @3.3.0 (KRaftConfigs @3.9.0): INT, 500, atLeast(0); 0 means none
        # (KafkaConfig.metadataMaxIdleIntervalNs is empty, QuorumController writes no NoOpRecord).
        _cfg(
            "metadata.max.idle.interval.ms", "int", 500,
            "KRaft controller: how often the active controller writes a NoOpRecord to the "
            "metadata log when nothing else is written, so the high watermark keeps moving; 0 "
            "turns it off.",
            unit="ms", valid=_AT_LEAST_0, since="3.3", change_ref="KIP-835 (KafkaConfig @3.3.0)",
            mode=KRAFT,
        ),
        # KIP-630 snapshots of __cluster_metadata (kafkasim.control.kraft.raft_snapshots):
        # KafkaConfig @3.0.0 / KRaftConfigs @3.9.0-rc3: LONG 20 MiB atLeast(1); the interval
        # LONG 1 h atLeast(0) from 3.4 (KIP-876); the retention LONGs, 100 MiB by size from
        # 3.4 (KAFKA-14393; Defaults.LogRetentionBytes -1 before) and 7 days by time.
        _cfg(
            "metadata.log.max.record.bytes.between.snapshots", "long", 20 * 1024 * 1024,
            "KRaft: a node writes a new metadata snapshot once this many bytes of records were "
            "committed since its last one.",
            unit="bytes", valid=_AT_LEAST_1, since="3.0", change_ref="KIP-630", mode=KRAFT,
        ),
        _cfg(
            "metadata.log.max.snapshot.interval.ms", "long", 3600000,
            "KRaft: a node writes a new metadata snapshot once this long passed since its last "
            "one and new records were committed; 0 turns time-based snapshots off.",
            unit="ms", valid=_AT_LEAST_0, since="3.4", change_ref="KIP-876", mode=KRAFT,
        ),
        _cfg(
            "metadata.max.retention.bytes", "long",
            by_version(("3.0", -1), ("3.4", 100 * 1024 * 1024)),
            "KRaft: the metadata log and its snapshots may hold this many bytes before the "
            "oldest snapshot is deleted and the log start offset moves to the next one; -1 "
            "means no limit.",
            unit="bytes", since="3.0", change_ref="KIP-630 (default KAFKA-14393, 3.4)",
            mode=KRAFT,
        ),
        _cfg(
            "metadata.max.retention.ms", "long", 604800000,
            "KRaft: how long a metadata snapshot is kept before it is deleted (and the log "
            "start offset moves to the next snapshot); -1 means no limit.",
            unit="ms", since="3.0", change_ref="KIP-630", mode=KRAFT,
        ),
        # KRaftConfigs @4.0 (4ae681446f) and @4.3.0, KAFKA-16446 (apache/kafka PR #15622):
        # defineInternal, LONG, 60000 atLeast(100) / 2000 atLeast(0); the QuorumController's
        # EventPerformanceMonitor (kafkasim.control.kraft.event_performance).
        _cfg(
            "controller.performance.sample.period.ms", "long", 60000,
            "KRaft controller: how often the active controller logs a summary of how many "
            "events it handled and how long they took (generatePeriodicPerformanceMessage).",
            unit="ms", valid=Range(100), since="4.0", change_ref="KAFKA-16446 (KRaftConfigs @4.0)",
            internal=True, mode=KRAFT,
        ),
        _cfg(
            "controller.performance.always.log.threshold.ms", "long", 2000,
            "KRaft controller: an event that takes at least this long is logged as an error at "
            "once.",
            unit="ms", valid=_AT_LEAST_0, since="4.0",
            change_ref="KAFKA-16446 (KRaftConfigs @4.0)", internal=True, mode=KRAFT,
        ),
        # KRaftConfigs (KafkaConfig before 3.8): process.roles / node.id, KIP-631, 2.8.
        _cfg(
            "process.roles", "list", (),
            "KRaft: the roles of this node, broker and/or controller; empty means ZooKeeper "
            "mode (3.x).",
            valid=ValidList(("broker", "controller")), since="2.8", change_ref="KIP-631",
            mode=KRAFT,
        ),
        _cfg(
            "node.id", "int", -1,
            "KRaft: id of this node (required there); a synonym of broker.id, which must match.",
            # 4.0: no default and atLeast(0) (KRaftConfigs); the cluster sets each node's id, so
            # the default here stays -1 ("not set in the template") and only a value set
            # explicitly is checked
            valid=by_version(("2.8", None), ("4.0", _AT_LEAST_0)),
            since="2.8", change_ref="KIP-631",
        ),
        # QuorumConfig (RaftConfig before 3.8), KIP-595; same defaults since 2.8; the timeouts
        # have no validator until 4.1 (atLeast(0) since: _QUORUM_TIMEOUT_VALID).
        _cfg(
            "controller.quorum.voters", "list", (),
            "KRaft: the static controller quorum, comma-separated {id}@{host}:{port} entries.",
            valid=QuorumVoters(), since="2.8", change_ref="KIP-595", mode=KRAFT,
        ),
        _cfg(
            "controller.quorum.bootstrap.servers", "list", (),
            "KRaft: {host}:{port} endpoints to discover a dynamic controller quorum (KIP-853).",
            valid=QuorumBootstrapServers(), since="3.9", change_ref="KIP-853", mode=KRAFT,
        ),
        _cfg(
            "controller.quorum.election.timeout.ms", "int", 1000,
            "KRaft: longest time without fetching from the leader before a new election.",
            unit="ms", valid=_QUORUM_TIMEOUT_VALID, since="2.8", change_ref="KIP-595", mode=KRAFT,
        ),
        _cfg(
            "controller.quorum.fetch.timeout.ms", "int", 2000,
            "KRaft: a voter without a successful fetch from the leader for this long becomes a "
            "candidate; a leader without fetches from a majority for this long resigns.",
            unit="ms", valid=_QUORUM_TIMEOUT_VALID, since="2.8", change_ref="KIP-595", mode=KRAFT,
        ),
        _cfg(
            "controller.quorum.election.backoff.max.ms", "int", 1000,
            "KRaft: upper bound of the exponential backoff between elections.",
            unit="ms", valid=_QUORUM_TIMEOUT_VALID, since="2.8", change_ref="KIP-595", mode=KRAFT,
        ),
        _cfg(
            "controller.quorum.auto.join.enable", "boolean", False,
            "KRaft: a controller that is not a voter of a dynamic quorum adds itself with "
            "AddRaftVoter (and first removes a voter with its id but another directory id).",
            since="4.2", change_ref="KAFKA-19078", mode=KRAFT,
        ),
        # KIP-1219 / KAFKA-19541 (PR #21028): QuorumConfig @4.3.0 a9ce322153 (not @4.2.0
        # a18251bae0) defines both, INT, default 1048576, atLeast(1); they replace the internal
        # internal.metadata.max.batch.size.in.bytes. kafkasim's Raft log counts records, not
        # bytes: the values are validated and described, not used.
        _cfg(
            "controller.quorum.fetch.max.bytes", "int", 1048576,
            "KRaft: most bytes a metadata Fetch returns (at least one batch, even a larger "
            "one).",
            unit="bytes", valid=_AT_LEAST_1, since="4.3", change_ref="KIP-1219", mode=KRAFT,
        ),
        _cfg(
            "controller.quorum.fetch.snapshot.max.bytes", "int", 1048576,
            "KRaft: most bytes of a metadata snapshot one FetchSnapshot returns.",
            unit="bytes", valid=_AT_LEAST_1, since="4.3", change_ref="KIP-1219", mode=KRAFT,
        ),
        _cfg(
            "controller.quorum.append.linger.ms", "int", 25,
            "KRaft: how long the leader lets writes accumulate before flushing them to disk.",
            unit="ms", valid=_QUORUM_TIMEOUT_VALID, since="2.8", change_ref="KIP-595", mode=KRAFT,
        ),
        _cfg(
            "controller.quorum.request.timeout.ms", "int", 2000,
            "KRaft: how long a quorum request waits for its response before it is retried.",
            unit="ms", valid=_QUORUM_TIMEOUT_VALID, since="2.8", change_ref="KIP-595", mode=KRAFT,
        ),
        _cfg(
            "controller.quorum.retry.backoff.ms", "int", 20,
            "KRaft: wait before retrying a failed quorum request.",
            unit="ms", valid=_QUORUM_TIMEOUT_VALID, since="2.8", change_ref="KIP-595", mode=KRAFT,
        ),
        _cfg(
            "max.incremental.fetch.session.cache.slots", "int", 1000,
            "Most incremental fetch sessions a broker keeps (FetchSessionCache, KIP-227).",
            unit="sessions", valid=_AT_LEAST_0, since="1.1", change_ref="KIP-227",
        ),
        _cfg(
            "replica.selector.class", "string", None,
            "ReplicaSelector class for fetch-from-follower; unset means always the leader.",
            since="2.4", change_ref="KIP-392",
        ),
    ]
)

#: Topic configs (kafka-configs --entity-type topics). LogConfig; defaults come from the broker
#: synonyms listed (ServerTopicConfigSynonyms), else from the plain default here.
TOPIC: dict[str, ConfigDef] = dict(
    [
        _cfg(
            "min.insync.replicas", "int", 1,
            "Smallest ISR with which an acks=all produce is accepted.",
            unit="replicas", valid=_AT_LEAST_1, synonyms=(Synonym("min.insync.replicas"),),
        ),
        _cfg(
            "unclean.leader.election.enable", "boolean",
            by_version(("0.8.2", True), ("0.11.0", False)),
            "Allow an out-of-sync replica of this topic to become leader.",
            synonyms=(Synonym("unclean.leader.election.enable"),),
        ),
        _cfg(
            "flush.messages", "long", LONG_MAX,
            "Messages appended before this topic's log is fsynced.",
            unit="messages", valid=by_version(("0.8.2", _AT_LEAST_0), ("3.3", _AT_LEAST_1)),
            synonyms=(Synonym("log.flush.interval.messages"),),
        ),
        _cfg(
            "flush.ms", "long", LONG_MAX,
            "Longest time this topic's data may stay unflushed.",
            unit="ms", valid=_AT_LEAST_0,
            synonyms=(Synonym("log.flush.interval.ms"), Synonym("log.flush.scheduler.interval.ms")),
        ),
        _cfg(
            "retention.ms", "long", 7 * 24 * 3600 * 1000,
            "How long this topic keeps a segment (-1: forever).",
            unit="ms", valid=by_version(("0.8.2", None), ("2.2", Range(-1))),
            synonyms=(
                Synonym("log.retention.ms"),
                Synonym("log.retention.minutes", 60_000),
                Synonym("log.retention.hours", 3_600_000),
            ),
        ),
        _cfg(
            "segment.bytes", "int", 1024 * 1024 * 1024,
            "Size at which this topic's active segment is rolled.",
            unit="bytes", valid=_TOPIC_SEGMENT_BYTES_VALID,
            synonyms=(Synonym("log.segment.bytes"),),
        ),
        _cfg(
            "max.message.bytes", "int", by_version(("0.8.2", 1000012), ("2.5", 1048588)),
            "Largest record batch this topic accepts.",
            unit="bytes", valid=_AT_LEAST_0, synonyms=(Synonym("message.max.bytes"),),
        ),
    ]
)

#: Producer configs. ProducerConfig (+ KafkaProducer's post-processing).
PRODUCER: dict[str, ConfigDef] = dict(
    [
        _cfg(
            "acks", "string", by_version(("0.8.2", "1"), ("3.0", "all")),
            "Acknowledgements required: 0, 1 or all (-1). Default 1 before 3.0 (KIP-679).",
            valid=ValidString(("all", "-1", "0", "1")), pre=_acks_pre, post=_acks_post,
        ),
        _cfg(
            "retries", "int", by_version(("0.8.2", 0), ("2.1", INT_MAX)),
            "Resends of a failed batch (0 before 2.1; since then bounded by delivery.timeout.ms).",
            valid=Range(0, INT_MAX),
        ),
        _cfg(
            "linger.ms", "long", by_version(("0.8.2", 0), ("4.0", 5)),
            "How long the producer waits to fill a batch (5 since 4.0, KIP-1030).",
            unit="ms", valid=_AT_LEAST_0,
        ),
        _cfg(
            "batch.size", "int", 16384,
            "Target batch size per partition.",
            unit="bytes", valid=_AT_LEAST_0,
        ),
        _cfg(
            "max.in.flight.requests.per.connection", "int", 5,
            "Unacknowledged requests allowed per broker connection.",
            unit="requests", valid=_AT_LEAST_1,
        ),
        _cfg(
            "request.timeout.ms", "int", 30000,
            "How long the producer waits for a produce response (also sent as its timeout).",
            unit="ms", valid=_AT_LEAST_0, since="0.9.0", change_ref="KIP-19",
        ),
        _cfg(
            "delivery.timeout.ms", "int", 120000,
            "Upper bound on the time to report success or failure of a send.",
            unit="ms", valid=_AT_LEAST_0, since="2.1", change_ref="KIP-91",
        ),
        _cfg(
            "retry.backoff.ms", "long", 100,
            "Wait before retrying a failed request (from 3.7 the first wait, doubled per "
            "attempt up to retry.backoff.max.ms).",
            unit="ms", valid=_AT_LEAST_0,
        ),
        _cfg(
            "retry.backoff.max.ms", "long", 1000,
            "Upper bound of the exponential retry backoff, with 20 % jitter; below "
            "retry.backoff.ms it is the constant wait.",
            unit="ms", valid=_AT_LEAST_0, since="3.7", change_ref="KIP-580",
        ),
        _cfg(
            "metadata.max.age.ms", "long", 300000,
            "Refresh the metadata this long after the last update even if no error asked for "
            "it, to learn of new leaders.",
            unit="ms", valid=_AT_LEAST_0,
        ),
        _cfg(
            "max.block.ms", "long", 60000,
            "How long send() waits for the metadata of a topic (or partition) it does not know "
            "before its result fails with a TimeoutException.",
            unit="ms", valid=_AT_LEAST_0, since="0.9.0", change_ref="KIP-19",
        ),
        _cfg(
            "metadata.fetch.timeout.ms", "long", 60000,
            "How long send() waits for a topic's metadata (0.8.2; deprecated for max.block.ms "
            "in 0.9, which it still overrides when set).",
            unit="ms", valid=_AT_LEAST_0, removed_in="0.11.0", change_ref="KIP-19",
            replacement="max.block.ms",
        ),
        _cfg(
            "enable.idempotence", "boolean", by_version(("0.11.0", False), ("3.0", True)),
            "Producer ids and sequence numbers prevent duplicates on retry (KIP-98, KIP-679).",
            since="0.11.0", change_ref="KIP-98",
        ),
        _cfg("client.id", "string", "", "Logical name of the client in logs and metrics."),
    ]
)

#: Consumer configs. ConsumerConfig (+ KafkaConsumer's post-processing). 0.8.2 describes the
#: 0.8.2 clients jar's ConsumerConfig; the Java consumer became usable in 0.9.0.
CONSUMER: dict[str, ConfigDef] = dict(
    [
        _cfg(
            "group.id", "string", by_version(("0.8.2", ""), ("2.2", None)),
            "Consumer group; unset (null) since 2.2 (KIP-289), empty string before.",
        ),
        _cfg(
            "auto.offset.reset", "string", by_version(("0.8.2", "largest"), ("0.9.0", "latest")),
            "Where to start without a committed offset: latest, earliest, none (an error), or "
            "(4.0+, KIP-1106) by_duration:<ISO-8601 duration>, the first record at most that "
            "long ago.",
            valid=by_version(
                ("0.8.2", ValidString(("largest", "smallest"))),
                ("0.9.0", ValidString(("latest", "earliest", "none"))),
                ("4.0", AutoOffsetResetValidator()),
            ),
        ),
        _cfg(
            "enable.auto.commit", "boolean", True,
            "Commit the position periodically in the background.",
        ),
        _cfg(
            "auto.commit.interval.ms", "int", 5000,
            "Interval between automatic offset commits.",
            unit="ms", valid=_AT_LEAST_0,
        ),
        _cfg(
            "fetch.min.bytes", "int", by_version(("0.8.2", 1024), ("0.10.0", 1)),
            "Bytes a fetch waits for before the broker answers.",
            unit="bytes", valid=_AT_LEAST_0,
        ),
        _cfg(
            "fetch.max.wait.ms", "int", 500,
            "Longest time the broker parks a consumer fetch without enough data.",
            unit="ms", valid=_AT_LEAST_0,
        ),
        _cfg(
            "max.poll.records", "int", by_version(("0.10.0", INT_MAX), ("0.10.1", 500)),
            "Most records returned by one poll().",
            unit="records", valid=_AT_LEAST_1, since="0.10.0", change_ref="KIP-41",
        ),
        _cfg(
            "isolation.level", "string", "read_uncommitted",
            "read_committed reads up to the LSO, read_uncommitted up to the HW.",
            valid=ValidString(("read_committed", "read_uncommitted")),
            since="0.11.0", change_ref="KIP-98",
        ),
        _cfg(
            "max.partition.fetch.bytes", "int", 1048576,
            "Per-partition size hint of a consumer fetch (the first batch is always returned).",
            unit="bytes", valid=_AT_LEAST_0, since="0.9.0", change_ref="ConsumerConfig @0.9.0.0",
        ),
        _cfg(
            "fetch.max.bytes", "int", 52428800,
            "Whole-response size hint of a consumer fetch.",
            unit="bytes", valid=_AT_LEAST_0, since="0.10.1", change_ref="KIP-74",
        ),
        _cfg(
            "allow.auto.create.topics", "boolean", True,
            "Whether the consumer's Metadata requests let the broker create a subscribed topic "
            "(kafkasim's consumer asks for every topic, so it never creates one).",
            since="2.3", change_ref="KIP-361",
        ),
        _cfg(
            "client.rack", "string", "",
            "Rack of the consumer, for fetching from a nearby follower.",
            since="2.4", change_ref="KIP-392",
        ),
        _cfg(
            "metadata.max.age.ms", "long", 300000,
            "Forced metadata refresh interval; also how long a preferred read replica is kept.",
            unit="ms", valid=_AT_LEAST_0, since="0.9.0", change_ref="ConsumerConfig @0.9.0.0",
        ),
        _cfg(
            "request.timeout.ms", "int",
            by_version(("0.9.0", 40000), ("0.10.1", 305000), ("2.0", 30000)),
            "How long the consumer waits for an answer (a fetch included) before giving the "
            "request up.",
            unit="ms", valid=_AT_LEAST_0, since="0.9.0",
            change_ref="ConsumerConfig @0.9.0.0 / @0.10.1.0 (KIP-62) / @2.0.0 (KIP-266)",
        ),
        _cfg(
            "retry.backoff.ms", "long", 100,
            "Wait before asking again after a failed request; the longest network wait of a "
            "poll while a position is missing or nothing is in flight.",
            unit="ms", valid=_AT_LEAST_0, since="0.9.0", change_ref="ConsumerConfig @0.9.0.0",
        ),
        _cfg("client.id", "string", "", "Logical name of the client in logs and metrics."),
    ]
)

#: Every registry by kind, in a fixed order.
KINDS: dict[str, dict[str, ConfigDef]] = {
    "broker": BROKER,
    "topic": TOPIC,
    "producer": PRODUCER,
    "consumer": CONSUMER,
}


# --------------------------------------------------------------------------------------------
# Lookup and validation of keys
# --------------------------------------------------------------------------------------------


def registry(kind: str) -> dict[str, ConfigDef]:
    """The registry for ``kind`` ("broker", "topic", "producer" or "consumer")."""
    try:
        return KINDS[kind]
    except KeyError:
        raise ConfigError(
            f"Unknown config kind {kind!r}; expected one of: {', '.join(KINDS)}"
        ) from None


def keys_for(kind: str, version: str = DEFAULT_VERSION) -> tuple[str, ...]:
    """Keys of ``kind`` that exist in ``version``, in registry order."""
    profile = normalize_version(version)
    return tuple(name for name, d in registry(kind).items() if d.exists_in(profile))


def _other_kind_hint(kind: str, key: str) -> str:
    """Explain that ``key`` belongs to another kind (and name the synonym if there is one)."""
    if kind == "broker":
        for topic_key, tdef in TOPIC.items():
            if topic_key == key and tdef.synonyms:
                return (
                    f" '{key}' is a topic config, not a broker config; the broker-wide "
                    f"default is '{tdef.synonyms[0].broker_key}'."
                )
    if kind == "topic" and key in BROKER:
        for topic_key, tdef in TOPIC.items():
            if any(s.broker_key == key for s in tdef.synonyms):
                return (
                    f" '{key}' is a broker config, not a topic config; the topic-level "
                    f"config is '{topic_key}'."
                )
    for other, reg in KINDS.items():
        if other != kind and key in reg:
            return f" '{key}' is a {other} config, not a {kind} config."
    return ""


#: Kafka topic configs (org.apache.kafka.common.config.TopicConfig) that kafkasim does not model:
#: they are real, so an unknown-config error says so instead of suggesting a typo. Compaction,
#: retention by size or time of segments, timestamps, compression, tiered storage and throttles
#: do not change who is in the ISR or where the high watermark is.
UNMODELLED_TOPIC_CONFIGS = frozenset((
    "cleanup.policy", "compression.type", "compression.gzip.level", "compression.lz4.level",
    "compression.zstd.level", "delete.retention.ms", "file.delete.delay.ms",
    "follower.replication.throttled.replicas", "index.interval.bytes",
    "leader.replication.throttled.replicas", "local.retention.bytes", "local.retention.ms",
    "max.compaction.lag.ms", "message.downconversion.enable", "message.format.version",
    "message.timestamp.after.max.ms", "message.timestamp.before.max.ms",
    "message.timestamp.difference.max.ms", "message.timestamp.type",
    "min.cleanable.dirty.ratio", "min.compaction.lag.ms", "preallocate",
    "remote.log.copy.disable", "remote.log.delete.on.disable", "remote.storage.enable",
    "retention.bytes", "segment.index.bytes", "segment.jitter.ms", "segment.ms",
))


#: Kafka configs kafkasim does not model that Kafka 4.0 removed, by kind: key -> (removed_in,
#: reference, what replaces it). Sources: Kafka 4.0 docs/zk2kraft.html ("Removal Zookeeper
#: configs") and KIP-724 ("log.message.format.version & message.format.version are removed").
REMOVED_UNMODELLED_CONFIGS: dict[str, dict[str, tuple[str, str, str]]] = {
    "broker": {
        "zookeeper.connect": ("4.0", "ZooKeeper mode removed, KIP-500",
                              "use controller.quorum.bootstrap.servers (or "
                              "controller.quorum.voters)"),
        "zookeeper.connection.timeout.ms": ("4.0", "ZooKeeper mode removed, KIP-500",
                                            "KRaft has no ZooKeeper connection"),
        "control.plane.listener.name": ("4.0", "ZooKeeper mode removed, docs/zk2kraft.html",
                                        "use controller.listener.names"),
        "inter.broker.protocol.version": ("4.0", "ZooKeeper mode removed, docs/zk2kraft.html",
                                          "metadata.version (kafka-features) sets the "
                                          "feature level"),
        "broker.id.generation.enable": ("4.0", "ZooKeeper mode removed, docs/zk2kraft.html",
                                        "set node.id"),
        "reserved.broker.max.id": ("4.0", "ZooKeeper mode removed, docs/zk2kraft.html",
                                   "set node.id"),
        "log.message.format.version": ("4.0", "KIP-724",
                                       "every record batch is written in format v2"),
    },
    "topic": {
        "message.format.version": ("4.0", "KIP-724",
                                   "every record batch is written in format v2"),
    },
}


def _removed_unmodelled(kind: str, key: str, profile: str) -> str | None:
    """The error text for a real Kafka key kafkasim does not model, once Kafka removed it."""
    entry = REMOVED_UNMODELLED_CONFIGS.get(kind, {}).get(key)
    if entry is None:
        return None
    removed_in, ref, instead = entry
    if not version_at_least(profile, removed_in):
        return (f"'{key}' is a Kafka {kind} config that kafkasim does not model (it does not "
                f"change the ISR or the high watermark); Kafka {removed_in} removed it ({ref}).")
    return (f"The {kind} config '{key}' was removed in Kafka {removed_in} ({ref}); it does not "
            f"exist in Kafka {profile} (the last release line with it is "
            f"{_line_before(removed_in)}): {instead}.")


def _line_before(version: str) -> str:
    """The modelled release line just before ``version`` (the last one with a removed key)."""
    index = SUPPORTED_VERSIONS.index(normalize_version(version))
    return SUPPORTED_VERSIONS[max(index - 1, 0)]


def _unavailable_message(kind: str, key: str, defn: ConfigDef, profile: str) -> str:
    """Why a declared key is missing from ``profile``: removed (by what, and what instead) or
    not added yet (by what)."""
    ref = f" ({defn.change_ref})" if defn.change_ref else ""
    if defn.removed_in is not None and version_at_least(profile, defn.removed_in):
        message = (
            f"The {kind} config '{key}' was removed in Kafka {defn.removed_in}{ref}; "
            f"it does not exist in Kafka {profile} (the last release line with it is "
            f"{_line_before(defn.removed_in)})."
        )
        if defn.replacement:
            message += f" Use '{defn.replacement}' instead."
        if defn.removal_note:
            message += f" {defn.removal_note}."
        return message
    return (
        f"The {kind} config '{key}' does not exist in Kafka {profile}; "
        f"it was added in {defn.since}{ref}."
    )


def validate_key(kind: str, key: str, version: str = DEFAULT_VERSION) -> ConfigDef:
    """Return the ConfigDef of ``key``, or raise ConfigError if it is unknown in ``version``."""
    reg = registry(kind)
    profile = normalize_version(version)
    defn = reg.get(key)
    if defn is None:
        removed = _removed_unmodelled(kind, key, profile)
        if removed is not None:
            raise ConfigError(removed)
        if kind == "topic" and key in UNMODELLED_TOPIC_CONFIGS:
            raise ConfigError(
                f"'{key}' is a Kafka topic config that kafkasim does not model (it does not "
                f"change the ISR or the high watermark); the topic configs kafkasim models "
                f"are: {', '.join(sorted(reg))}.")
        message = f"Unknown {kind} config '{key}'."
        hint = _other_kind_hint(kind, key)
        if hint:
            message += hint
        else:
            close = difflib.get_close_matches(str(key), list(reg), n=1, cutoff=0.6)
            if close:
                message += f" Did you mean '{close[0]}'?"
        raise ConfigError(message)
    if not defn.exists_in(profile):
        raise ConfigError(_unavailable_message(kind, key, defn, profile))
    return defn


# --------------------------------------------------------------------------------------------
# Parsing values (ConfigDef.parseType) and validating them
# --------------------------------------------------------------------------------------------


def java_trim(text: str) -> str:
    """Java's ``String.trim()`` (ConfigDef.parseType trims values with it): strips the characters
    up to U+0020 (spaces and control characters) at both ends, not Unicode spaces such as
    U+00A0 (no-break space), which Python's ``str.strip()`` would remove too."""
    return text.strip("".join(map(chr, range(0x21))))


def _parse_integer(name: str, value: Any, bits: int) -> int:
    label = {16: "SHORT", 32: "INT", 64: "LONG"}[bits]
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if isinstance(value, bool) or not isinstance(value, (int, str)):
        raise _invalid(
            name, value,
            f"Expected value to be a {bits}-bit integer, but it was a {type(value).__name__}",
        )
    if isinstance(value, str):
        text = java_trim(value)
        digits = text[1:] if text[:1] in "+-" else text
        if not digits.isdigit() or not digits.isascii():
            raise _invalid(name, value, f"Not a number of type {label}")
        number = int(text)
    else:
        number = value
    if not low <= number <= high:
        # Java's Integer.parseInt / Long.parseLong reject values that overflow.
        raise _invalid(name, value, f"Not a number of type {label}")
    return number


def parse_value(defn: ConfigDef, value: Any, version: str = DEFAULT_VERSION) -> Any:
    """Parse ``value`` like Kafka's ConfigDef.parseType, then apply the validator of ``version``."""
    name = defn.name
    if defn.pre is not None:
        value = defn.pre(value)
    if value is None:
        parsed: Any = None
    elif defn.type == "int":
        parsed = _parse_integer(name, value, 32)
    elif defn.type == "short":
        parsed = _parse_integer(name, value, 16)
    elif defn.type == "long":
        parsed = _parse_integer(name, value, 64)
    elif defn.type == "double":
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            raise _invalid(
                name, value, f"Expected value to be a double, but it was a {type(value).__name__}"
            )
        try:
            parsed = float(java_trim(value) if isinstance(value, str) else value)
        except ValueError:
            raise _invalid(name, value, "Not a number of type DOUBLE") from None
    elif defn.type == "boolean":
        if isinstance(value, bool):
            parsed = value
        elif isinstance(value, str) and java_trim(value).lower() in ("true", "false"):
            parsed = java_trim(value).lower() == "true"
        else:
            raise _invalid(name, value, "Expected value to be either true or false")
    elif defn.type in ("string", "class"):
        if not isinstance(value, str):
            raise _invalid(
                name, value, f"Expected value to be a string, but it was a {type(value).__name__}"
            )
        parsed = java_trim(value)
    elif defn.type == "list":
        if isinstance(value, str):
            text = java_trim(value)
            parsed = tuple(java_trim(part) for part in text.split(",")) if text else ()
        elif isinstance(value, (list, tuple)):
            parsed = tuple(java_trim(str(v)) for v in value)
        else:
            raise _invalid(
                name, value,
                f"Expected a comma separated list, but it was a {type(value).__name__}",
            )
    else:  # pragma: no cover - registries only use the types above
        raise ConfigError(f"Unsupported config type {defn.type!r} for {name}")
    validator = defn.validator_for(normalize_version(version))
    if validator is not None:
        validator.check(name, parsed)
    if defn.post is not None and parsed is not None:
        parsed = defn.post(parsed)
    return parsed


def _parse_overrides(
    kind: str, overrides: Mapping[str, Any] | None, profile: str
) -> dict[str, Any]:
    """Validate and parse user overrides, keeping their order."""
    parsed: dict[str, Any] = {}
    if not overrides:
        return parsed
    if not isinstance(overrides, Mapping):
        raise ConfigError(
            f"{kind} config overrides must be a mapping of key -> value, "
            f"got {type(overrides).__name__}"
        )
    for key, value in overrides.items():
        if not isinstance(key, str):
            raise ConfigError(f"{kind} config keys must be strings, got {key!r}")
        defn = validate_key(kind, key, profile)
        parsed[key] = parse_value(defn, value, profile)
    return parsed


def _resolve_all(kind: str, explicit: Mapping[str, Any], profile: str) -> dict[str, Any]:
    """Every key of ``kind`` in ``profile`` -> explicit value or default, in registry order."""
    out: dict[str, Any] = {}
    for name, defn in registry(kind).items():
        if defn.exists_in(profile):
            out[name] = explicit[name] if name in explicit else defn.default_for(profile)
    return out


# --------------------------------------------------------------------------------------------
# Broker
# --------------------------------------------------------------------------------------------


def _retention_ms(cfg: Mapping[str, Any]) -> int:
    # KafkaConfig.logRetentionTimeMillis: ms, else minutes, else hours; negative means -1.
    if cfg.get("log.retention.ms") is not None:
        millis = cfg["log.retention.ms"]
    elif cfg.get("log.retention.minutes") is not None:
        millis = cfg["log.retention.minutes"] * 60_000
    else:
        millis = cfg["log.retention.hours"] * 3_600_000
    return -1 if millis < 0 else millis


def broker_config(
    overrides: Mapping[str, Any] | None = None,
    version: str = DEFAULT_VERSION,
    *,
    metadata_mode: str | None = None,
) -> dict[str, Any]:
    """Full broker config for ``version``: every key -> typed value (None = unset).

    With ``metadata_mode`` ("zookeeper" / "kraft", checked by
    :func:`kafkasim.settings.modes.metadata_mode_for`) the keys of the other mode are checked too:
    Kafka's
    ConfigDef accepts them and ignores them, so setting one emits a :class:`ConfigWarning`, except
    ``process.roles``, which is what selects KRaft mode in a 3.x ``server.properties`` and so
    contradicts ZooKeeper mode (ConfigError). Without ``metadata_mode`` no mode check is done.
    """
    profile = normalize_version(version)
    explicit = _parse_overrides("broker", overrides, profile)
    cfg = _resolve_all("broker", explicit, profile)
    if metadata_mode is not None:
        _check_metadata_mode(explicit, profile, metadata_mode_for(profile, metadata_mode))
    _check_kraft_node(cfg, explicit)
    _check_broker_heartbeat(cfg, profile)
    _check_runtime_ranges(cfg, profile)

    # Cross-checks from KafkaConfig.validateValues (paraphrased).
    wait_ms = cfg["replica.fetch.wait.max.ms"]
    if wait_ms > cfg["replica.socket.timeout.ms"]:
        raise ConfigError(
            f"replica.fetch.wait.max.ms ({wait_ms}) must not exceed replica.socket.timeout.ms "
            f"({cfg['replica.socket.timeout.ms']}): a parked follower fetch would time out its "
            "own socket (KafkaConfig.validateValues)"
        )
    if wait_ms > cfg["replica.lag.time.max.ms"]:
        raise ConfigError(
            f"replica.fetch.wait.max.ms ({wait_ms}) must be less than or equal to "
            f"replica.lag.time.max.ms ({cfg['replica.lag.time.max.ms']}): otherwise followers of "
            "an idle leader would keep dropping out of the ISR (KafkaConfig.validateValues)"
        )
    if not version_at_least(profile, "0.10.1"):
        # Before KIP-74 (0.10.1) a follower could not fetch a batch larger than its fetch size.
        if cfg["replica.fetch.max.bytes"] < cfg["message.max.bytes"]:
            raise ConfigError(
                f"replica.fetch.max.bytes ({cfg['replica.fetch.max.bytes']}) must be at least "
                f"message.max.bytes ({cfg['message.max.bytes']}) before Kafka 0.10.1, or "
                "followers could not replicate the largest batches (KafkaConfig, removed by KIP-74)"
            )
    retention = _retention_ms(cfg)
    if version_at_least(profile, "0.9.0"):
        if not (retention >= 1 or retention == -1):
            raise ConfigError(
                f"log retention resolves to {retention} ms; log.retention.ms must be -1 "
                "(unlimited) or at least 1 (KafkaConfig.validateValues)"
            )
    elif retention < 1:
        # 0.8.x read the retention keys with getIntInRange(1, Int.MaxValue); unlimited (-1)
        # retention arrived in 0.9.0 (KAFKA-1990).
        raise ConfigError(
            f"log retention resolves to {retention} ms; Kafka {profile} requires at least 1 "
            "(unlimited retention, -1, was added in 0.9.0 by KAFKA-1990)"
        )
    # Kafka has no check between replica.fetch.response.max.bytes and replica.fetch.max.bytes:
    # both are size hints and the first batch is always returned (KIP-74).
    return cfg


def _check_metadata_mode(explicit: Mapping[str, Any], profile: str, mode: str) -> None:
    """Keys of the other metadata mode: ignored by Kafka (warn), process.roles contradicts ZK."""
    for key in explicit:
        defn = BROKER[key]
        if defn.mode is None or defn.mode == mode:
            continue
        if key == "process.roles" and explicit[key]:
            raise ConfigError(
                f"process.roles={_java_str(explicit[key])} makes a Kafka {profile} node a KRaft "
                "node (KafkaConfig.usesSelfManagedQuorum: process.roles non-empty), which "
                "contradicts metadata_mode='zookeeper'; remove process.roles or use "
                "metadata_mode='kraft'"
            )
        if key == "process.roles":
            continue  # empty process.roles is what ZooKeeper mode means
        other = "ZooKeeper" if defn.mode == ZOOKEEPER else "KRaft"
        this = "ZooKeeper" if mode == ZOOKEEPER else "KRaft"
        warnings.warn(
            ConfigWarning(
                f"'{key}' is a {other}-mode setting; Kafka {profile} in {this} mode accepts it "
                "but ignores it, so it has no effect here"
            ),
            stacklevel=4,
        )


def _scala_set(ids: list[int]) -> str:
    return "Set(" + ", ".join(str(i) for i in ids) + ")"


def _check_kraft_node(cfg: Mapping[str, Any], explicit: Mapping[str, Any]) -> None:
    """KafkaConfig.validateValues / parseProcessRoles checks of one KRaft node's identity.

    Only keys set explicitly are checked: the simulator's broker config is a template shared by
    all nodes, which the cluster completes per node (node.id, process.roles).
    """
    if "node.id" in explicit and "broker.id" in explicit:
        if explicit["node.id"] != explicit["broker.id"]:
            raise ConfigError(
                "You must set `node.id` to the same value as `broker.id`. (node.id="
                f"{explicit['node.id']}, broker.id={explicit['broker.id']}; KafkaConfig)"
            )
    roles = list(explicit.get("process.roles") or ())
    if not roles:
        return
    if len(set(roles)) != len(roles):
        raise ConfigError(
            f"Duplicate role names found in `process.roles`: {_java_str(roles)}"
        )
    # KafkaConfig populates node.id from broker.id (and back) when only one is set.
    node_id = cfg.get("node.id")
    if (node_id is None or node_id < 0) and cfg.get("broker.id") is not None:
        node_id = cfg["broker.id"]
    if node_id is None or node_id < 0:
        raise ConfigError(
            "Missing configuration `node.id` which is required when `process.roles` is "
            "defined (i.e. when running in KRaft mode)."
        )
    voter_ids = list(parse_quorum_voters(cfg.get("controller.quorum.voters") or ()))
    if not voter_ids and not cfg.get("controller.quorum.bootstrap.servers"):
        raise ConfigError(
            "If using process.roles, either controller.quorum.bootstrap.servers must contain "
            "the set of bootstrap controllers or controller.quorum.voters must contain a "
            "parseable set of controllers."
        )
    if "controller" in roles and voter_ids and node_id not in voter_ids:
        raise ConfigError(
            "If process.roles contains the 'controller' role, the node id "
            f"{node_id} must be included in the set of voters "
            f"controller.quorum.voters={_scala_set(voter_ids)}"
        )
    if roles == ["broker"] and node_id in voter_ids:
        raise ConfigError(
            "If process.roles contains just the 'broker' role, the node id "
            f"{node_id} must not be included in the set of voters "
            f"controller.quorum.voters={_scala_set(voter_ids)}"
        )


#: Keys Kafka defines without a ConfigDef validator whose values below the bound make the broker
#: fail once running; refused at configuration time, with the reason Kafka would fail.
_RUNTIME_LOWER_BOUNDS: dict[str, tuple[int, str]] = {
    "num.replica.fetchers": (
        1, "ReplicationConfigs defines it without a validator before 4.2, but "
           "AbstractFetcherManager.getFetcherId takes the partition's hash modulo the number of "
           "fetchers per broker, so 0 fails with an ArithmeticException (/ by zero) the first "
           "time a replica becomes a follower"),
    "leader.imbalance.check.interval.seconds": (
        0, "Kafka defines it without a validator before 3.2 (atLeast(1) since); the controller "
           "schedules the next auto-rebalance check that many seconds after the last, and a "
           "delay in the past cannot be simulated"),
    "broker.session.timeout.ms": (
        1, "KRaftConfigs defines it without a validator; a session of 0 ms ends the instant it "
           "starts, so the controller's BrokerHeartbeatManager would fence every broker as it "
           "registers, a cluster that never becomes ready, which the simulator refuses"),
    "zookeeper.session.timeout.ms": (
        1, "ZkConfigs/KafkaConfig define it without a validator; the ZooKeeper server clamps a "
           "requested session timeout to its minSessionTimeout (2 x tickTime), which the "
           "simulated ZooKeeper does not model, so a timeout below 1 ms cannot be simulated"),
}


#: millisecond keys without a validator whose negative values Kafka handles itself: the periodic
#: tasks (KafkaScheduler runs a task with a period <= 0 once) and the retention keys (-1:
#: unlimited, checked with the other retention rules)
_NEGATIVE_MS_HANDLED = frozenset({
    "replica.high.watermark.checkpoint.interval.ms", "log.flush.scheduler.interval.ms",
    "log.retention.ms", "log.flush.interval.ms"})


def _check_runtime_ranges(cfg: Mapping[str, Any], profile: str) -> None:
    for key, (low, why) in _RUNTIME_LOWER_BOUNDS.items():
        value = cfg.get(key)
        if value is not None and value < low:
            raise ConfigError(f"Invalid value {value} for configuration {key}: must be at least "
                              f"{low} ({why})")
    for key, defn in BROKER.items():
        value = cfg.get(key)
        if isinstance(value, int) and value < 0 and defn.unit == "ms" and \
                key not in _NEGATIVE_MS_HANDLED and defn.validator_for(profile) is None:
            raise ConfigError(
                f"Invalid value {value} for configuration {key}: must be at least 0 (Kafka "
                "defines it without a validator, but it is a time or timeout: a negative value "
                "has no meaning and the simulator cannot schedule it)")


def _check_broker_heartbeat(cfg: Mapping[str, Any], profile: str) -> None:
    """KAFKA-19432 (4.2): an ERROR log, not a failure, if the heartbeat interval is more than half
    the broker session timeout (a single late heartbeat could then fence the broker). Kafka's
    text, from KafkaConfig.validateValues (4.x)."""
    if not rules_for(profile).controller.broker_heartbeat_interval_checked:
        return
    interval, session = cfg["broker.heartbeat.interval.ms"], cfg["broker.session.timeout.ms"]
    if interval * 2 > session:
        warnings.warn(
            ConfigWarning(
                f"broker.heartbeat.interval.ms ({interval} ms) must be less than or equal to "
                f"half of the broker.session.timeout.ms ({session} ms). The "
                "broker.session.timeout.ms is configured on controller. The "
                "broker.heartbeat.interval.ms is configured on broker. If a broker doesn't send "
                "heartbeat request within broker.session.timeout.ms, it loses broker lease. "
                "Please increase broker.session.timeout.ms or decrease "
                f"broker.heartbeat.interval.ms. (Kafka {profile} logs this as an ERROR and starts "
                "anyway; KafkaConfig.validateValues, KAFKA-19432)"
            ),
            stacklevel=4,
        )


# --------------------------------------------------------------------------------------------
# Topic
# --------------------------------------------------------------------------------------------


def _from_broker(defn: ConfigDef, broker: Mapping[str, Any], profile: str) -> Any:
    """A topic config's default: the first broker synonym that is set (LogConfig defaults)."""
    for synonym in defn.synonyms:
        value = broker.get(synonym.broker_key)
        if value is not None:
            if synonym.factor != 1:
                value = value * synonym.factor
            return value
    return defn.default_for(profile)


def topic_config(
    overrides: Mapping[str, Any] | None = None,
    broker: Mapping[str, Any] | None = None,
    version: str = DEFAULT_VERSION,
) -> dict[str, Any]:
    """Effective topic config: topic overrides on top of the broker's defaults.

    ``broker`` is a resolved broker config (from :func:`broker_config`); None means all broker
    defaults. This mirrors ``kafka-configs --alter --entity-type topics --add-config``.
    """
    profile = normalize_version(version)
    broker_cfg = broker_config(None, profile) if broker is None else broker
    explicit = _parse_overrides("topic", overrides, profile)
    out: dict[str, Any] = {}
    for name, defn in TOPIC.items():
        if not defn.exists_in(profile):
            continue
        if name in explicit:
            out[name] = explicit[name]
        else:
            out[name] = _from_broker(defn, broker_cfg, profile)
    if out.get("retention.ms") is not None and out["retention.ms"] < -1:
        out["retention.ms"] = -1  # LogConfig treats any negative retention as unlimited
    return out


def _hashmap_order(names: list[str], capacity: int = 64) -> list[str]:
    """Iteration order of the java.util.HashMap inside admin ``Config`` (``capacity`` buckets).

    The names are put in the order the broker sent them, which comes from a Scala 2.13
    mutable.HashMap (ordered by spread hash inside a bucket); we use that, then the name.
    """

    def sent(name: str) -> tuple[int, str]:
        return to_int32(java_hashmap_spread(java_string_hash(name))), name

    return java_hashmap_iteration_order(sorted(names, key=sent), java_string_hash, capacity)


def describe_configs(
    topic_overrides: Mapping[str, Any] | None = None,
    broker_overrides: Mapping[str, Any] | None = None,
    version: str = DEFAULT_VERSION,
) -> list[str]:
    """The ``Configs:`` entries of ``kafka-topics --describe``, as ``["k=v", ...]`` in order.

    Since 2.4 the tool asks the admin API and prints entries whose source is not
    DEFAULT_CONFIG: topic overrides, and topic configs whose broker synonym was set in
    server.properties (``broker_overrides``). The order is that of the java.util.HashMap inside
    admin ``Config``. Before 2.4 (``--zookeeper`` path) only the topic overrides stored in
    ZooKeeper are printed, in java.util.Properties order (Java 8 Hashtable; JVM-dependent).
    """
    profile = normalize_version(version)
    broker_explicit = _parse_overrides("broker", broker_overrides, profile)
    broker_cfg = broker_config(broker_overrides, profile)
    topic_explicit = _parse_overrides("topic", topic_overrides, profile)
    effective = topic_config(topic_overrides, broker_cfg, profile)
    if rules_for(profile).tools.describe_space_after_colon:  # admin-client path, 2.4+
        names = [
            name
            for name, defn in TOPIC.items()
            if defn.exists_in(profile)
            and (
                name in topic_explicit
                or any(s.broker_key in broker_explicit for s in defn.synonyms)
            )
        ]
        ordered = _hashmap_order(names)
    else:  # ZooKeeper path: only the topic's own overrides
        ordered = java_hashtable_iteration_order(list(topic_explicit), java_string_hash)
    return [f"{name}={_java_str(effective[name])}" for name in ordered]


def topic_overrides_for_describe(
    topic_overrides: Mapping[str, Any] | None = None,
    broker_overrides: Mapping[str, Any] | None = None,
    version: str = DEFAULT_VERSION,
) -> str:
    """The ``Configs:`` field of ``kafka-topics --describe`` as one ``"k=v,k=v"`` string."""
    return ",".join(describe_configs(topic_overrides, broker_overrides, version))


# --------------------------------------------------------------------------------------------
# Producer and consumer
# --------------------------------------------------------------------------------------------


def _idempotence(cfg: dict[str, Any], explicit: Mapping[str, Any], profile: str) -> None:
    """Resolve enable.idempotence and the settings it implies, as KafkaProducer/ProducerConfig."""
    user_set = "enable.idempotence" in explicit
    if version_at_least(profile, "3.2"):
        # KAFKA-13598 / KAFKA-13673 (3.2): on by default; conflicting settings disable it
        # silently unless the user asked for idempotence explicitly.
        if not cfg["enable.idempotence"]:
            return
        conflicts = []
        if cfg["retries"] == 0:
            conflicts.append("Must set retries to non-zero when using the idempotent producer.")
        if cfg["acks"] != -1:
            conflicts.append(
                "Must set acks to all in order to use the idempotent producer. "
                "Otherwise we cannot guarantee idempotence."
            )
        in_flight = cfg["max.in.flight.requests.per.connection"]
        if in_flight > 5 and version_at_least(profile, "4.0"):
            # KAFKA-17927 (4.0): idempotence is the default, so more than 5 is an error
            # whether enable.idempotence was set or not (after the checks above, which raise
            # first when it was set)
            raise ConfigError(
                conflicts[0] if user_set and conflicts else
                "To use the idempotent producer, max.in.flight.requests.per.connection must "
                f"be set to at most 5. Current value is {in_flight}."
            )
        if in_flight > 5:
            conflicts.append(
                "Must set max.in.flight.requests.per.connection to at most 5 "
                "to use the idempotent producer."
            )
        if conflicts:
            if user_set:
                raise ConfigError(conflicts[0])
            cfg["enable.idempotence"] = False
        return
    # 0.11 .. 3.1: only an explicit enable.idempotence=true turns it on. (3.0 and 3.1 declare
    # the default as true, but ProducerConfig.idempotenceEnabled() also required the user to set
    # it, so it stayed off; KAFKA-13598 fixed that in 3.2.)
    enabled = user_set and bool(explicit["enable.idempotence"])
    cfg["enable.idempotence"] = enabled
    if not enabled:
        return
    if "retries" not in explicit:
        cfg["retries"] = INT_MAX
    elif cfg["retries"] == 0:
        raise ConfigError("Must set retries to non-zero when using the idempotent producer.")
    in_flight = cfg["max.in.flight.requests.per.connection"]
    if not version_at_least(profile, "1.0"):
        # 0.11.0 required exactly one request in flight.
        if "max.in.flight.requests.per.connection" not in explicit:
            cfg["max.in.flight.requests.per.connection"] = 1
        elif in_flight != 1:
            raise ConfigError(
                "Must set max.in.flight.requests.per.connection to 1 in order to use the "
                "idempotent producer. Otherwise we cannot guarantee idempotence."
            )
    elif in_flight > 5:
        raise ConfigError(
            "Must set max.in.flight.requests.per.connection to at most 5 "
            "to use the idempotent producer."
        )
    if "acks" not in explicit:
        cfg["acks"] = -1
    elif cfg["acks"] != -1:
        raise ConfigError(
            "Must set acks to all in order to use the idempotent producer. "
            "Otherwise we cannot guarantee idempotence."
        )


def producer_config(
    overrides: Mapping[str, Any] | None = None, version: str = DEFAULT_VERSION
) -> dict[str, Any]:
    """Full producer config for ``version``, with acks as an int (-1, 0, 1).

    ``enable.idempotence`` is the *effective* value (what the producer really does), and the
    settings KafkaProducer derives from it (acks, retries, in-flight limit) are applied.
    """
    profile = normalize_version(version)
    explicit = _parse_overrides("producer", overrides, profile)
    cfg = _resolve_all("producer", explicit, profile)
    if "enable.idempotence" in cfg:
        _idempotence(cfg, explicit, profile)
    if "delivery.timeout.ms" in cfg:
        # KafkaProducer.configureDeliveryTimeout (2.1+).
        floor = min(cfg["linger.ms"] + cfg["request.timeout.ms"], INT_MAX)
        if cfg["delivery.timeout.ms"] < floor:
            if "delivery.timeout.ms" in explicit:
                raise ConfigError(
                    f"delivery.timeout.ms ({cfg['delivery.timeout.ms']}) should be equal to or "
                    f"larger than linger.ms + request.timeout.ms ({floor})"
                )
            cfg["delivery.timeout.ms"] = floor
    return cfg


def consumer_config(
    overrides: Mapping[str, Any] | None = None, version: str = DEFAULT_VERSION
) -> dict[str, Any]:
    """Full consumer config for ``version``."""
    profile = normalize_version(version)
    explicit = _parse_overrides("consumer", overrides, profile)
    cfg = _resolve_all("consumer", explicit, profile)
    if version_at_least(profile, "2.2") and cfg["group.id"] is None:
        # KafkaConsumer / ConsumerConfig.maybeOverrideEnableAutoCommit (KIP-289).
        if "enable.auto.commit" not in explicit:
            cfg["enable.auto.commit"] = False
        elif cfg["enable.auto.commit"]:
            raise ConfigError(
                "enable.auto.commit cannot be set to true when default group id (null) is used."
            )
    return cfg


# --------------------------------------------------------------------------------------------
# Version comparison (used by versions.describe_profile)
# --------------------------------------------------------------------------------------------


def _show(value: Any) -> str:
    return '""' if value == "" else _java_str(value)


def _default_configs(profile: str) -> dict[str, dict[str, Any]]:
    broker = broker_config(None, profile)
    return {
        "broker": broker,
        "topic": topic_config(None, broker, profile),
        "producer": producer_config(None, profile),
        "consumer": consumer_config(None, profile),
    }


def default_differences(version: str, baseline: str = DEFAULT_VERSION) -> list[str]:
    """Lines describing keys whose existence or effective default differs between profiles."""
    profile, base = normalize_version(version), normalize_version(baseline)
    lines: list[str] = []
    if profile == base:
        return lines
    here_all, there_all = _default_configs(profile), _default_configs(base)
    for kind, reg in KINDS.items():
        here, there = here_all[kind], there_all[kind]
        for name in reg:
            if name in here and name in there:
                if here[name] != there[name]:
                    a, b = _show(here[name]), _show(there[name])
                    lines.append(f"{kind} {name} = {a} ({base}: {b})")
            elif name in here:
                lines.append(f"{kind} {name} exists here but not in {base}")
            elif name in there:
                lines.append(f"{kind} {name} does not exist here (exists in {base})")
    return lines


def describe_profile(version: str = DEFAULT_VERSION) -> str:
    """A human-readable summary of a version profile: its rules, how they differ from the
    default profile, and the config defaults that differ (``kafkasim versions VERSION``)."""
    profile = normalize_version(version)
    lines = describe_rules(version)
    diffs = default_differences(profile, DEFAULT_VERSION)
    if diffs:
        lines.append(f"Config defaults that differ from {DEFAULT_VERSION}:")
        lines.extend(f"  {line}" for line in diffs)
    return "\n".join(lines)


#: Keys the simulator reads that older releases did not have, with the behaviour those releases
#: had: no whole-response fetch limit before KIP-74 (0.10.1), no broker cap on a fetch's MaxBytes
#: before KIP-541 (2.5); a failed partition fetch is retried after a second, as later releases'
#: replica.fetch.backoff.ms default does.
SIMULATOR_FALLBACKS = {
    "replica.fetch.response.max.bytes": 2**31 - 1,
    "fetch.max.bytes": 2**31 - 1,
    "replica.fetch.backoff.ms": 1000,
}


def with_simulator_fallbacks(cfg: dict) -> dict:
    """``cfg`` (a resolved broker config) with ``SIMULATOR_FALLBACKS`` for the keys its release
    lacks."""
    for key, old_behaviour in SIMULATOR_FALLBACKS.items():
        cfg.setdefault(key, old_behaviour)
    return cfg
