"""Argument checks the ``Cluster`` façade and its clients run first, before any work.

Every check raises ``ClusterError`` naming the call and argument, the value it got and what is
allowed (the valid range or type, the known names with a did-you-mean), so that a learner's
typo is never a Python ``TypeError`` from deep inside the simulator, never a silent no-op, and
never a half-done change: a call that fails here has not touched the cluster. Kafka's own
errors (INVALID_PARTITIONS, UNKNOWN_TOPIC_OR_PARTITION, ...) stay where Kafka raises them; these
are the checks Kafka's clients and tools make before a request is sent.
"""

from __future__ import annotations

import difflib
import functools
import inspect
import itertools
import os
import re
from collections.abc import Iterable

from kafkasim.settings import config as kconfig
from kafkasim.settings import limits
from kafkasim.settings.exceptions import ClusterError, UnexpectedKeywordError

__all__ = [
    "check_alter_config", "check_callable", "check_cluster_args", "check_fault_node",
    "check_offset_spec", "check_schedule_time", "check_topic_config", "check_topic_names",
    "did_you_mean", "keyword_hints", "record_values",
]

#: ``Admin.list_offsets`` specs (org.apache.kafka.clients.admin.OffsetSpec) kafkasim answers
OFFSET_SPECS = ("latest", "earliest")


def did_you_mean(value, known: Iterable) -> str:
    """'; did you mean X?' for the known name closest to ``value`` ('' if none is close). A
    node written as text around its id ('broker-1', '1') suggests that id."""
    by_text = {str(k): k for k in known}
    close = difflib.get_close_matches(str(value), sorted(by_text), n=1)
    if close:
        return f"; did you mean {by_text[close[0]]!r}?"
    m = re.fullmatch(r"\D*?(\d+)", str(value).strip()) if isinstance(value, str) else None
    if m and int(m.group(1)) in by_text.values():
        return f"; did you mean {int(m.group(1))!r}?"
    return ""


def keyword_hints(cls: type) -> type:
    """Class decorator for a public façade (``Cluster``, ``Player``): a public method called
    with a keyword it does not take raises ``UnexpectedKeywordError`` (a ClusterError and a
    TypeError) naming the method, the keywords it takes and the closest one (Python's own
    message has no did-you-mean), before the method runs."""
    for name, fn in list(vars(cls).items()):
        if not name.startswith("_") and inspect.isfunction(fn):
            setattr(cls, name, _with_keyword_hint(cls.__name__, fn))
    return cls


def _with_keyword_hint(owner: str, fn):
    params = inspect.signature(fn).parameters
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return fn   # it takes any keyword
    names = tuple(n for n, p in list(params.items())[1:]
                  if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY))

    @functools.wraps(fn)
    def method(*args, **kwargs):
        for key in kwargs:
            if key not in names:
                raise UnexpectedKeywordError(
                    f"{owner}.{fn.__name__}() got an unexpected keyword argument "
                    f"{key!r} (it takes: {', '.join(names) or 'none'})"
                    f"{did_you_mean(key, names)}")
        return fn(*args, **kwargs)
    return method


def _is_int(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _type_name(value) -> str:
    return type(value).__name__


# -- Cluster(...) ------------------------------------------------------------------------------
#: ``Cluster(kraft_start=...)``: how a KRaft cluster's processes start
#: (``bootstrap.start_processes``)
KRAFT_START_ORDERS = ("together", "controllers_first")


def check_cluster_args(*, seed, racks, config, rules, max_events, trace_messages,
                       per_partition_metrics, log_dirs, kraft_start="together") -> None:
    """``Cluster.__init__``'s arguments other than brokers, versions and times (checked where
    they are read): their types and ranges, before anything is built."""
    if not _is_int(seed) or not -limits.LONG_MAX - 1 <= seed <= limits.LONG_MAX:
        raise ClusterError(f"Cluster(seed) must be a whole number (a Java long, from "
                           f"{-limits.LONG_MAX - 1} to {limits.LONG_MAX}), got {seed!r} "
                           f"({_type_name(seed)})")
    for what, value in (("config", config), ("rules", rules), ("racks", racks)):
        if value is not None and not isinstance(value, dict):
            raise ClusterError(f"Cluster({what}) must be a dict or None, got {value!r} "
                               f"({_type_name(value)})")
    for key in config or {}:
        if not isinstance(key, str):
            raise ClusterError(f"Cluster(config): config keys are Kafka's names as strings "
                               f"(e.g. 'min.insync.replicas'), got {key!r}")
    for broker, rack in (racks or {}).items():
        if not isinstance(rack, str) or not rack.strip():
            raise ClusterError(f"Cluster(racks): broker {broker!r}'s rack must be a non-empty "
                               f"string (broker.rack), got {rack!r} ({_type_name(rack)})")
    if max_events is not None and (not _is_int(max_events) or max_events < 1):
        raise ClusterError(f"Cluster(max_events) must be None (no limit) or a whole number of "
                           f"events from 1 (default {limits.DEFAULT_MAX_EVENTS:,}), got "
                           f"{max_events!r}")
    for what, value in (("trace_messages", trace_messages),
                        ("per_partition_metrics", per_partition_metrics)):
        if not isinstance(value, bool):
            raise ClusterError(f"Cluster({what}) must be True or False, got {value!r}")
    if log_dirs is not None and not isinstance(log_dirs, (str, os.PathLike)):
        raise ClusterError(f"Cluster(log_dirs) must be None or a directory path, got "
                           f"{log_dirs!r} ({_type_name(log_dirs)})")
    if not isinstance(kraft_start, str) or kraft_start not in KRAFT_START_ORDERS:
        hint = did_you_mean(kraft_start, KRAFT_START_ORDERS) if isinstance(kraft_start, str) \
            else ""
        raise ClusterError(f"Cluster(kraft_start) must be one of {list(KRAFT_START_ORDERS)}, "
                           f"got {kraft_start!r}{hint}")


# -- faults and time ---------------------------------------------------------------------------
def check_fault_node(cluster, node, call: str, *, controllers: bool = True) -> None:
    """``node`` of a fault call (``crash``, ``shutdown``, ``start``, ``pause``, ...) must be a
    broker id, or with ``controllers`` in KRaft mode a controller node id: the error lists both
    kinds and the closest id."""
    brokers = sorted(cluster.brokers)
    ctl = sorted(cluster.kraft.nodes) if controllers and cluster.kraft is not None else []
    if _is_int(node) and (node in cluster.brokers or node in ctl):
        return
    known = f"brokers are {brokers}" + (f", KRaft controllers are {ctl}" if ctl else "")
    kind = "broker or controller node id" if ctl else "broker id"
    if not _is_int(node):
        raise ClusterError(f"{call}: a {kind} is an int, got {node!r} ({_type_name(node)})"
                           f"{did_you_mean(node, brokers + ctl)} ({known})")
    others = sorted(cluster.kraft.nodes) if not controllers and cluster.kraft is not None \
        else []
    if node in others:
        raise ClusterError(f"{call}: {node} is a KRaft controller node; {call.split('(')[0]} "
                           f"takes a broker id: {brokers}")
    raise ClusterError(f"Unknown broker {node}; {known} ({call})"
                       f"{did_you_mean(node, brokers + ctl)}")


def check_schedule_time(cluster, time_ms, fn) -> None:
    """``Cluster.at(time_ms, fn)``: an integer simulated time from 0 to now +
    limits.MAX_TIME_MS (a time already past runs at once, as the engine clamps it), and a
    callable."""
    hi = cluster.now + limits.MAX_TIME_MS
    if not _is_int(time_ms) or not 0 <= time_ms <= hi:
        raise ClusterError(f"at(time_ms) must be an absolute simulated time in integer ms from "
                           f"0 to now + limits.MAX_TIME_MS (t={hi}; now is t={cluster.now}), "
                           f"got {time_ms!r}")
    check_callable("at(fn)", fn)


def check_flag(what: str, value) -> None:
    """A yes/no argument (``restart(clean)``, ``cut(both_ways)``, ``create_topic(wait)``) is
    True or False: 'no' or 0 would otherwise read as its truth value."""
    if not isinstance(value, bool):
        raise ClusterError(f"{what} must be True or False, got {value!r} ({_type_name(value)})")


def check_callable(what: str, fn, optional: bool = False) -> None:
    if (fn is None and optional) or callable(fn):
        return
    raise ClusterError(f"{what} must be a function of the cluster, got {fn!r} "
                       f"({_type_name(fn)})")


# -- topics and configs ------------------------------------------------------------------------
def check_topic_config(call: str, config) -> None:
    """A topic's config overrides: None or a dict of Kafka's config names (str)."""
    if config is None:
        return
    if not isinstance(config, dict):
        raise ClusterError(f"{call}: config must be a dict of topic configs such as "
                           f"{{'min.insync.replicas': 2}}, got {config!r} ({_type_name(config)})")
    for key in config:
        if not isinstance(key, str):
            raise ClusterError(f"{call}: config keys are Kafka's names as strings, got {key!r}")


def check_topic_names(call: str, names, optional: bool = True) -> None:
    """A topic name or a list of them (None: every topic, when ``optional``)."""
    if names is None and optional:
        return
    items = [names] if isinstance(names, str) else names
    if not isinstance(items, (list, tuple)) or not all(isinstance(n, str) for n in items):
        raise ClusterError(f"{call}: topic must be a topic name or a list of names"
                           f"{' (or None for every topic)' if optional else ''}, got {names!r}")


def check_alter_config(cluster, entity_type, name, configs, delete) -> None:
    """``alter_config``'s arguments, before anything is written: the entity, the configs as a
    dict of names, ``delete`` as a list of names, and for brokers a known broker id (or
    None / '' / 'default' for the cluster default)."""
    entity_types = ("topics", "brokers")
    if entity_type not in entity_types:
        raise ClusterError(f"Unknown entity type {entity_type!r} in alter_config"
                           f"{did_you_mean(entity_type, entity_types)} (entity types: 'topics', "
                           "'brokers')")
    check_topic_config("alter_config", configs)
    if configs is None:
        raise ClusterError("alter_config: configs must be a dict (use {} to only delete)")
    if delete is not None and (not isinstance(delete, (list, tuple))
                               or not all(isinstance(k, str) for k in delete)):
        raise ClusterError(f"alter_config: delete must be a list of config names, such as "
                           f"['min.insync.replicas'], got {delete!r}")
    if entity_type == "brokers" and name not in (None, "", "default"):
        check_fault_node(cluster, name, "alter_config(brokers, name)", controllers=False)
    _check_deleted_names(cluster, entity_type, delete or [])
    fixed = sorted(k for k in configs if k in READ_ONLY_BROKER_CONFIGS)
    if entity_type == "brokers" and fixed:   # DynamicBrokerConfig.validateConfigs
        raise ClusterError(f"alter_config(brokers): Cannot update these configs dynamically: "
                           f"Set({', '.join(fixed)}) (INVALID_REQUEST; they are read-only, "
                           "set when a broker starts)")


#: broker configs the simulator sets per broker and Kafka never updates dynamically (not in
#: DynamicBrokerConfig.AllDynamicConfigs): altering them is refused, not silently overwritten
READ_ONLY_BROKER_CONFIGS = ("broker.id", "broker.rack", "node.id")


def _check_deleted_names(cluster, entity_type, delete) -> None:
    """``kafka-configs --delete-config`` refuses a name the entity does not describe
    (ConfigCommand: "Invalid config(s): ..."): a misspelt name would otherwise delete nothing."""
    kind = "topic" if entity_type == "topics" else "broker"
    for key in delete:
        try:
            kconfig.validate_key(kind, key, cluster.kafka_version)
        except kconfig.ConfigError as exc:   # names a real but unmodelled key as such
            raise ClusterError(f"alter_config(delete): Invalid config(s): {key}: {exc}") from None


# -- clients -----------------------------------------------------------------------------------
def record_values(call: str, values) -> list:
    """``send_many``'s values as a list: any iterable of values that is not itself text, a
    mapping or a single value, of at most limits.MAX_RECORDS values (counted before any is
    sent: a generator is read at most one value past the limit)."""
    if isinstance(values, (str, bytes, dict)) or not hasattr(values, "__iter__"):
        raise ClusterError(f"{call}: values must be a list of record values, got {values!r} "
                           f"({_type_name(values)})")
    sized = hasattr(values, "__len__")
    if not sized:
        values = list(itertools.islice(values, limits.MAX_RECORDS + 1))
    n = len(values)
    if n > limits.MAX_RECORDS:
        raise ClusterError(f"{call}: {n:,}{'' if sized else ' or more'} values, more than "
                           f"limits.MAX_RECORDS = "
                           f"{limits.MAX_RECORDS:,} records in one call")
    return list(values)


def check_offset_spec(spec) -> None:
    """``Admin.list_offsets`` spec: one of OFFSET_SPECS (Kafka's OffsetSpec.latest/earliest)."""
    if spec not in OFFSET_SPECS:
        raise ClusterError(f"list_offsets: unknown spec {spec!r}{did_you_mean(spec, OFFSET_SPECS)}"
                           f"; specs: {', '.join(OFFSET_SPECS)} (OffsetSpec)")


def check_partition_list(call: str, partitions) -> None:
    """A list of partition indexes (None: every partition of the topic)."""
    if partitions is None:
        return
    if not isinstance(partitions, (list, tuple, range)) or \
            not all(_is_int(p) for p in partitions):
        raise ClusterError(f"{call}: partitions must be a list of partition indexes (ints), "
                           f"such as [0, 1], or None for all, got {partitions!r}")


def check_offset(call: str, offset) -> None:
    """A log offset: an int from 0 (KafkaConsumer.seek: 'seek offset must not be a negative
    number')."""
    if not _is_int(offset) or offset < 0:
        raise ClusterError(f"{call}: offset must be a whole number from 0 (seek offset must "
                           f"not be a negative number), got {offset!r}")


def check_poll(timeout_ms, max_records) -> None:
    """``Consumer.poll``: a timeout of whole ms from 0 (KafkaConsumer: 'Timeout must not be
    negative') and max_records None or from 1 (max.poll.records)."""
    if not _is_int(timeout_ms) or not 0 <= timeout_ms <= limits.MAX_TIME_MS:
        raise ClusterError(f"poll(timeout_ms) must be whole ms from 0 to "
                           f"{limits.MAX_TIME_MS} (limits.MAX_TIME_MS), got {timeout_ms!r}")
    if max_records is not None and (not _is_int(max_records) or max_records < 1):
        raise ClusterError(f"poll(max_records) must be None (max.poll.records) or a whole "
                           f"number from 1, got {max_records!r}")


def check_timeout(call: str, timeout_ms) -> None:
    """A client call's timeout: whole ms from 0 to limits.MAX_TIME_MS."""
    if not _is_int(timeout_ms) or not 0 <= timeout_ms <= limits.MAX_TIME_MS:
        raise ClusterError(f"{call} must be whole ms from 0 to {limits.MAX_TIME_MS} "
                           f"(limits.MAX_TIME_MS), got {timeout_ms!r}")


#: the keys of one ``Admin.create_topics`` entry (NewTopic's fields)
NEW_TOPIC_KEYS = ("name", "num_partitions", "replication_factor", "assignment", "configs")


def check_new_topics(topics) -> None:
    """``Admin.create_topics``: a list of dicts with a name and NewTopic's fields only."""
    if not isinstance(topics, (list, tuple)) or not all(isinstance(t, dict) for t in topics):
        raise ClusterError(f"create_topics: topics must be a list of dicts such as "
                           f"[{{'name': 't', 'num_partitions': 3, 'replication_factor': 3}}], "
                           f"got {topics!r}")
    for i, t in enumerate(topics):
        for key in t:
            if key not in NEW_TOPIC_KEYS:
                raise ClusterError(f"create_topics: topic {i}: unknown key {key!r}"
                                   f"{did_you_mean(key, NEW_TOPIC_KEYS)} (keys: "
                                   f"{', '.join(NEW_TOPIC_KEYS)})")
        if "name" not in t:
            raise ClusterError(f"create_topics: topic {i} has no 'name'")


# -- reading the run ---------------------------------------------------------------------------
def check_trace_kind(call: str, kind, kinds) -> None:
    """A trace filter's ``kind``: None or one of the trace's event kinds (a misspelt kind used to
    select nothing, silently)."""
    if kind is None or (isinstance(kind, str) and kind in kinds):
        return
    raise ClusterError(f"{call}: unknown trace kind {kind!r}{did_you_mean(kind, sorted(kinds))}"
                       f" (kinds: {', '.join(sorted(kinds))})")


def check_directory(call: str, directory) -> None:
    if not isinstance(directory, (str, os.PathLike)) or not os.fspath(directory):
        raise ClusterError(f"{call}: directory must be a path (str or os.PathLike), got "
                           f"{directory!r} ({_type_name(directory)})")


def check_seek_time(now: int, time_ms) -> None:
    """``History.seek``: integer ms from 0 to now + limits.MAX_TIME_MS."""
    if not _is_int(time_ms) or not 0 <= time_ms <= now + limits.MAX_TIME_MS:
        raise ClusterError(f"seek(time_ms) must be a simulated time in integer ms, not "
                           f"negative, from 0 to now + limits.MAX_TIME_MS "
                           f"(t={now + limits.MAX_TIME_MS}), got {time_ms!r}")


# -- generated workloads -----------------------------------------------------------------------
def _rate_ok(rate) -> bool:
    return isinstance(rate, (int, float)) and not isinstance(rate, bool) and \
        0 <= rate <= limits.MAX_RATE   # False for nan and inf


def check_workload(rate, duration_ms, segments, start_ms, tick_ms) -> None:
    """``RateWorkload``'s arguments, before anything is scheduled: a rate of records/s from 0
    to limits.MAX_RATE (above 0 without segments), whole ms within limits.MAX_TIME_MS, segments
    as [start_ms, end_ms, rate] with 0 <= start < end, and at most limits.MAX_RECORDS records
    in all (the limits of a scenario's produce step)."""
    what = "RateWorkload"
    if segments is None:
        if not _rate_ok(rate) or rate <= 0:
            raise ClusterError(f"{what}(rate) must be records/s above 0 and at most "
                               f"limits.MAX_RATE = {limits.MAX_RATE:,}, got {rate!r}")
        if not _is_int(duration_ms) or not 1 <= duration_ms <= limits.MAX_TIME_MS:
            raise ClusterError(f"{what}(duration_ms) must be whole ms from 1 to "
                               f"{limits.MAX_TIME_MS:,} (limits.MAX_TIME_MS), got "
                               f"{duration_ms!r}")
        segments = [(0, duration_ms, rate)]
    elif not isinstance(segments, (list, tuple)) or not segments:
        raise ClusterError(f"{what}(segments) must be a non-empty list of (start_ms, end_ms, "
                           f"rate), got {segments!r}")
    total = 0.0
    for seg in segments:
        ok = isinstance(seg, (list, tuple)) and len(seg) == 3 and all(
            _is_int(t) and 0 <= t <= limits.MAX_TIME_MS for t in seg[:2]) and \
            seg[0] < seg[1] and _rate_ok(seg[2])
        if not ok:
            raise ClusterError(f"{what}(segments): each segment is (start_ms, end_ms, rate) "
                               f"with whole ms 0 <= start_ms < end_ms <= {limits.MAX_TIME_MS:,} "
                               f"and a rate from 0 to {limits.MAX_RATE:,} records/s, got {seg!r}")
        total += seg[2] * (seg[1] - seg[0]) / 1000
    if total > limits.MAX_RECORDS:
        raise ClusterError(f"{what}: about {total:,.0f} records, more than limits.MAX_RECORDS "
                           f"= {limits.MAX_RECORDS:,} (lower the rate or the duration)")
    for arg, value in (("start_ms", start_ms), ("tick_ms", tick_ms)):
        if value is not None and (not _is_int(value) or value < (arg == "tick_ms")):
            raise ClusterError(f"{what}({arg}) must be None or whole ms "
                               f"{'from 1' if arg == 'tick_ms' else 'from 0'}, got {value!r}")

