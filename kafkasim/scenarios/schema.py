"""The value schema of scenario files: types, ranges and allowed names of every key.

``kafkasim.scenarios.scenario`` checks which keys a table may have; this module checks their values
before
anything runs: integer milliseconds within :data:`kafkasim.settings.limits.MAX_TIME_MS`, finite
numbers,
counts and sizes within the limits of :mod:`kafkasim.settings.limits`, known comparison keys in
conditions (``equal = 999`` is refused with "did you mean 'equals'"), known broker states,
election and entity types. A check raises :class:`SchemaError` with the key path and what is
allowed; the loader adds the file and line.
"""

from __future__ import annotations

import difflib
import math
import tomllib
from collections.abc import Callable
from typing import Any

from kafkasim.core.match import MatchError, check_error_name
from kafkasim.settings import limits as L

Check = Callable[[Any], None]


class SchemaError(ValueError):
    """A value of the wrong type or out of range; ``key`` is the dotted path of the key."""

    def __init__(self, key: str, message: str) -> None:
        super().__init__(f"{key} {message}" if message.startswith("must") else
                         f"{key}: {message}")
        self.key = key


def parse_toml(text: str, source: str, error: type[Exception]) -> dict:
    """``tomllib.loads`` whose failures are ``error(source: invalid TOML: ...)``, nesting too
    deep for the parser (it recurses per level) included."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise error(f"{source}: invalid TOML: {exc}") from exc
    except RecursionError:
        raise error(f"{source}: invalid TOML: arrays or inline tables nested too deeply for "
                    "the parser (a scenario or sweep needs a few levels)") from None


class _Bad(Exception):
    pass


def suggest(name: str, known) -> str:
    close = difflib.get_close_matches(str(name), sorted(known), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def _is_int(v) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def integer(lo: int, hi: int, what: str = "") -> Check:
    def check(v):
        if not _is_int(v):
            raise _Bad(f"must be an integer{f' ({what})' if what else ''}, got {v!r}")
        _range(v, lo, hi)
    return check


def _range(v, lo, hi, unit: str = "", note: str = "") -> None:
    if v < lo:
        raise _Bad(f"must be at least {lo}{unit}, got {v}")
    if v > hi:
        raise _Bad(f"must be at most {hi}{unit}{note}, got {v}")


def ms(lo: int = 0, hi: int = L.MAX_TIME_MS) -> Check:
    """Simulated time: integer milliseconds (kafkasim's virtual clock is integer ms)."""
    def check(v):
        if not _is_int(v):
            raise _Bad(f"must be integer milliseconds, got {v!r}")
        _range(v, lo, hi, " ms", " (limits.MAX_TIME_MS is one simulated day)"
               if hi == L.MAX_TIME_MS else "")
    return check


def number(lo: float, hi: float) -> Check:
    def check(v):
        if isinstance(v, bool) or not isinstance(v, (int, float)) or not math.isfinite(v):
            raise _Bad(f"must be a finite number, got {v!r}")
        _range(v, lo, hi)
    return check


def string(v) -> None:
    if not isinstance(v, str):
        raise _Bad(f"must be a string, got {v!r}")


def boolean(v) -> None:
    if not isinstance(v, bool):
        raise _Bad(f"must be true or false, got {v!r}")


def table(v) -> None:
    if not isinstance(v, dict):
        raise _Bad(f"must be a table, got {v!r}")


def one_of(*choices) -> Check:
    def check(v):
        if v not in choices or isinstance(v, bool):
            raise _Bad(f"must be one of {', '.join(repr(c) for c in choices)}, got {v!r}"
                       f"{suggest(v, [str(c) for c in choices])}")
    return check


def either(*checks: Check) -> Check:
    def check(v):
        errors = []
        for c in checks:
            try:
                c(v)
                return
            except _Bad as exc:
                errors.append(str(exc))
        raise _Bad(" or ".join(errors))
    return check


def list_of(item: Check, max_len: int = L.MAX_RECORDS, min_len: int = 0) -> Check:
    def check(v):
        if not isinstance(v, list):
            raise _Bad(f"must be an array, got {v!r}")
        if not min_len <= len(v) <= max_len:
            raise _Bad(f"must have between {min_len} and {max_len} entries, got {len(v)}")
        for i, x in enumerate(v):
            try:
                item(x)
            except _Bad as exc:
                raise _Bad(f"entry {i}: {exc}") from None
    return check


BROKER = integer(0, L.INT_MAX, "a broker id")
NODE = either(BROKER, string)          # a broker/controller id, "zookeeper" or a client id
PARTITION = integer(0, L.MAX_PARTITIONS - 1, "a partition index")
COUNT = integer(0, L.LONG_MAX, "a count")
VALUE = either(string, integer(-L.LONG_MAX - 1, L.LONG_MAX))   # a record value or key
MEMBERS = either(BROKER, list_of(BROKER, L.MAX_BROKERS))

# comparison keys of numeric clauses (ScenarioRun._compare) and set clauses (_members)
_CMP = {"at_least": COUNT, "at_most": COUNT, "equals": COUNT}
_SET = {"equals": list_of(BROKER, L.MAX_BROKERS), "contains": MEMBERS, "excludes": MEMBERS,
        "size": integer(0, L.MAX_BROKERS)}
_TP = {"topic": string, "partition": PARTITION}

#: condition clause -> allowed keys and their checks
CLAUSES: dict[str, dict[str, Check]] = {
    "hw": {**_TP, "broker": BROKER, **_CMP},
    "leo": {**_TP, "broker": BROKER, **_CMP},
    "isr": {**_TP, **_SET},
    "elr": {**_TP, **_SET},
    "last_known_elr": {**_TP, **_SET},
    "leader": {**_TP, "is": integer(-1, L.INT_MAX), "none": boolean},
    "acked": {"producer": string, "error": string, **_CMP},
    "failed": {"producer": string, "error": string, **_CMP},
    "consumed": {"consumer": string, **_CMP},
    "time_ms": _CMP,
    "under_replicated": _CMP,
    "isr_shrinks": {"broker": BROKER, **_CMP},
    "isr_expands": {"broker": BROKER, **_CMP},
    "controller": {"is": integer(-1, L.INT_MAX), "not": integer(-1, L.INT_MAX),
                   "none": boolean},
    "broker": {"id": BROKER, "state": one_of("running", "stopped", "shutting down")},
    "lost_acked": _CMP,
    "leader_epoch": {**_TP, **_CMP},
    "unclean_elections": _CMP,
    "log": {**_TP, "broker": BROKER, "equals": list_of(VALUE), "contains": either(
        VALUE, list_of(VALUE)), "excludes": either(VALUE, list_of(VALUE))},
    "fenced": {"broker": BROKER, "is": boolean, **_SET},
    "metadata_leader_epoch": _CMP,
    "voters": _SET,
}
#: condition clause -> its comparison keys: a clause needs at least one (the other keys select
#: what is compared: topic, partition, broker, producer, error...), or it would always hold
_CMP_KEYS = ("at_least", "at_most", "equals")
_SET_KEYS = ("equals", "contains", "excludes", "size")
CLAUSE_COMPARISONS: dict[str, tuple[str, ...]] = {
    **{k: _CMP_KEYS for k in ("hw", "leo", "acked", "failed", "consumed", "time_ms",
                              "under_replicated", "isr_shrinks", "isr_expands", "lost_acked",
                              "leader_epoch", "unclean_elections", "metadata_leader_epoch")},
    **{k: _SET_KEYS for k in ("isr", "elr", "last_known_elr", "voters")},
    "leader": ("is", "none"),
    "controller": ("is", "not", "none"),
    "broker": ("state",),
    "log": ("equals", "contains", "excludes"),
    # ``{ broker = 1 }`` alone means ``is = true`` (the broker is fenced)
    "fenced": ("broker", "is", *_SET_KEYS),
}
#: keys a clause must have
CLAUSE_REQUIRED = {"hw": ("topic",), "leo": ("topic",), "isr": ("topic",), "elr": ("topic",),
                   "last_known_elr": ("topic",), "leader": ("topic",),
                   "leader_epoch": ("topic",), "broker": ("id", "state"),
                   "log": ("broker", "topic")}


def _segment(v) -> None:
    if not isinstance(v, list) or len(v) != 3:
        raise _Bad(f"a segment is [start_ms, end_ms, rate], got {v!r}")
    ms()(v[0])
    ms()(v[1])
    if v[1] < v[0]:
        raise _Bad(f"a segment ends before it starts: {v!r}")
    number(0, L.MAX_RATE)(v[2])


def _acks(v) -> None:
    """Kafka's acks values: "all", "-1", "0", "1" or the integers -1, 0, 1 (not 1.0, not a
    string with spaces around it)."""
    if v in ("all", "-1", "0", "1") and isinstance(v, str) or _is_int(v) and v in (-1, 0, 1):
        return
    raise _Bad(f"must be one of 'all', -1, 0, 1 (Kafka's acks), got {v!r}"
               f"{suggest(v, ['all', '-1', '0', '1']) if isinstance(v, str) else ''}")


#: step key -> check (the same key means the same thing in every action)
STEP_KEYS: dict[str, Check] = {
    "at_ms": ms(), "after_ms": ms(),
    "topic": string, "partition": PARTITION, "key": VALUE,
    "values": list_of(VALUE, L.MAX_RECORDS), "count": integer(1, L.MAX_RECORDS, "a count"),
    "rate": number(0, L.MAX_RATE), "duration_ms": ms(),
    "segments": list_of(_segment, 10_000, 1),
    "producer": string, "consumer": string, "group": string, "label": string,
    "acks": _acks,
    "wait": boolean, "timeout_ms": ms(),
    "partitions": list_of(PARTITION, L.MAX_PARTITIONS), "max_records": integer(
        1, L.MAX_RECORDS, "a count"),
    "broker": BROKER, "ms": ms(),
    "network_ms": ms(), "disk_ms": number(0, L.MAX_TIME_MS),
    "groups": list_of(list_of(NODE, 1000), 1000),
    "cut": list_of(list_of(NODE, 2, 2), 10_000), "one_way": boolean,
    "entity_type": one_of("topics", "brokers"), "name": either(string, BROKER),
    "configs": table, "delete": list_of(string, 1000),
    "under_replicated_partitions": boolean, "unavailable_partitions": boolean,
    "under_min_isr_partitions": boolean, "at_min_isr_partitions": boolean,
    "clean": boolean, "down_ms": ms(),
    "type": one_of("preferred", "unclean"),
    "replication_factor": integer(1, L.MAX_BROKERS, "a replication factor"),
    "assignment": list_of(list_of(BROKER, L.MAX_BROKERS), L.MAX_PARTITIONS),
    "config": table,
    "controller": BROKER, "directory_id": string, "features": table,
    "release_version": string,
}
#: action-specific ranges tighter than STEP_KEYS
ACTION_KEYS: dict[str, dict[str, Check]] = {
    "pause": {"ms": ms(1)},
    "create_topic": {"name": string, "partitions": integer(1, L.MAX_PARTITIONS,
                                                           "a partition count")},
}
MESSAGE_KEYS: dict[str, Check] = {"type": string, "from": NODE, "to": NODE,
                                  "count": integer(1, L.LONG_MAX, "a count"), "where": table}

CLUSTER_KEYS: dict[str, Check] = {
    "brokers": integer(1, L.MAX_BROKERS, "a broker count"),
    "broker_ids": list_of(BROKER, L.MAX_BROKERS, 1),
    "racks": table, "config": table,
    "latency_ms": ms(0, 60_000), "jitter_ms": ms(0, 60_000),
    "metrics_interval_ms": ms(1),
    "metadata_mode": string,   # its values: kafkasim.settings.modes.metadata_mode_for
    "controllers": either(integer(1, L.MAX_BROKERS, "a controller count"),
                          list_of(BROKER, L.MAX_BROKERS, 1)),
}
TOPIC_KEYS: dict[str, Check] = {
    "name": string, "partitions": integer(1, L.MAX_PARTITIONS, "a partition count"),
    "replication_factor": integer(1, L.MAX_BROKERS, "a replication factor"),
    "assignment": list_of(list_of(BROKER, L.MAX_BROKERS, 1), L.MAX_PARTITIONS, 1),
    "config": table,
}
CLIENT_KEYS: dict[str, Check] = {"name": string, "type": one_of("producer", "consumer"),
                                 "config": table, "group": string}
TOP_KEYS: dict[str, Check] = {
    "name": string, "description": string, "seed": integer(-L.LONG_MAX - 1, L.LONG_MAX,
                                                           "a seed"),
    "pin_seed": boolean, "kafka_version": string, "rules": table, "check": boolean,
}


def check_value(key: str, value: Any, spec: Check) -> None:
    try:
        spec(value)
    except _Bad as exc:
        raise SchemaError(key, str(exc)) from None


def check_table(where: str, data: dict, specs: dict[str, Check]) -> None:
    """Check the values of ``data``'s keys that ``specs`` knows (unknown keys are reported by
    the loader's key check)."""
    for k, v in data.items():
        if k in specs:
            check_value(f"{where}.{k}" if where else k, v, specs[k])


def check_condition(where: str, cond: Any) -> None:
    """A condition table (``that`` / ``until``) must name at least one clause: an empty one
    would hold always."""
    if isinstance(cond, dict) and not cond:
        raise SchemaError(where, "an empty condition holds always: name at least one clause "
                          f"(one of {', '.join(sorted(CLAUSES))}) with a comparison, e.g. "
                          "{ lost_acked = { equals = 0 } }")


def check_clause(key: str, spec: Any) -> None:
    """One condition clause: its keys known (did-you-mean), their values typed and bounded,
    at least one comparison (a clause without one would always hold), error names Kafka's."""
    allowed = CLAUSES[key]
    if key == "time_ms" and not isinstance(spec, dict):
        check_value(key, spec, ms())
        return
    if not isinstance(spec, dict):
        raise SchemaError(key, f"must be a table of {', '.join(sorted(allowed))}, got {spec!r}")
    for k in spec:
        if k not in allowed:
            raise SchemaError(f"{key}.{k}", f"unknown comparison or field '{k}' in condition "
                              f"'{key}' (allowed: {', '.join(sorted(allowed))})"
                              f"{suggest(k, allowed)}")
    missing = [k for k in CLAUSE_REQUIRED.get(key, ()) if k not in spec]
    if missing:
        raise SchemaError(key, f"condition '{key}' needs {', '.join(missing)}")
    check_table(key, spec, allowed)
    _check_comparison(key, spec)
    if "error" in spec:
        _check_error_name(f"{key}.error", spec["error"])


def _check_comparison(key: str, spec: dict) -> None:
    """The clause compares something; ``fenced``'s ``broker`` form takes no set comparison."""
    comparisons = CLAUSE_COMPARISONS[key]
    if not any(k in spec for k in comparisons):
        raise SchemaError(key, f"condition '{key}' has no comparison, so it would always hold: "
                          f"add one of {', '.join(comparisons)}")
    if key == "fenced":
        sets = [k for k in _SET_KEYS if k in spec]
        if "broker" in spec and sets:
            raise SchemaError(key, f"condition 'fenced' with a broker compares that broker "
                              f"(is = true|false); {', '.join(sets)} compare the set of fenced "
                              "brokers: use two clauses or drop one")
        if "is" in spec and "broker" not in spec:
            raise SchemaError(key, "condition 'fenced': 'is' needs the broker it is about "
                              "({ broker = 1, is = true })")


def _check_error_name(key: str, name: Any) -> None:
    try:
        check_error_name(name, key)
    except MatchError as exc:
        raise SchemaError(key, str(exc).removeprefix(f"{key}: ")) from None


def check_step(action: str, step: dict) -> None:
    specs = {**STEP_KEYS, **ACTION_KEYS.get(action, {})}
    check_table("", {k: v for k, v in step.items() if k not in ("do", "messages", "until",
                                                               "that")}, specs)
    if "messages" in step and isinstance(step["messages"], dict):
        check_table("messages", step["messages"], MESSAGE_KEYS)
    if action == "produce":
        n = len(step.get("values", ())) or step.get("count", 1)
        if "rate" in step:
            n = step["rate"] * step.get("duration_ms", 0) / 1000
        for seg in step.get("segments", ()):
            n += seg[2] * (seg[1] - seg[0]) / 1000
        if n > L.MAX_RECORDS:
            raise SchemaError("rate", f"the step would produce about {int(n)} records, more "
                              f"than limits.MAX_RECORDS = {L.MAX_RECORDS}")
