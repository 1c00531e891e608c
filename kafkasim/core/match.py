"""Selecting messages by content: the ``where`` clause of holds, drops and delays.

A ``where`` table maps a field name to a value (equality) or to a comparison table::

    {"high_watermark": {"ge": 2}}                 # FetchResponse carrying HW >= 2
    {"leader_epoch": 1, "topic": "t"}             # LeaderAndIsr with leader epoch 1 for t
    {"isr": {"contains": 3}, "error": "NONE"}     # AlterPartitionResponse putting 3 in the ISR

Comparisons: ``eq``, ``ne``, ``lt``, ``le``, ``gt``, ``ge``, ``in`` (a list of values) and
``contains`` (a member of a list field such as ``isr``); ``equals``, ``at_least`` and
``at_most`` (the words of scenario conditions) mean ``eq``, ``ge`` and ``le``. Lists compare as
tuples.

Fields are those of the message's dataclass in kafkasim.core.messages (Kafka's field names in
snake_case), at two levels:

- message fields (``correlation_id``, ``replica_id``, ``controller_epoch``, ...) are compared
  with the message itself;
- partition fields are those of one entry of the message's per-partition list (a FetchResponse
  partition's ``high_watermark``, a LeaderAndIsr partition state's ``leader_epoch``...). The
  message matches when ONE of its partition entries satisfies every partition clause together,
  so ``{topic = "t", partition = 0, high_watermark = {ge = 2}}`` means "the entry of t-0 has
  HW >= 2". A name that is both (``controller_epoch`` of LeaderAndIsr) is the message field.

``record_count`` (records carried) is a partition field of FetchResponse. An AlterPartition's
``new_isr`` is compared as broker ids, also where it carries their broker epochs (v3, 3.5+,
KIP-903). The clause needs the
message type; an unknown type, field or comparison is an error with the closest known name.
Matching reads only the message, so it is deterministic.
"""

from __future__ import annotations

import dataclasses
import difflib
import operator
import re
from dataclasses import dataclass, field

from kafkasim.core import errors as E
from kafkasim.core import messages as M


class MatchError(ValueError):
    """A message filter that names an unknown message type, field or comparison."""


COMPARISONS = {
    "eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le,
    "gt": operator.gt, "ge": operator.ge,
    "in": lambda v, allowed: v in allowed,
    "contains": lambda v, member: member in v,
}
# the words scenario conditions use, accepted here too
ALIASES = {"equals": "eq", "at_least": "ge", "at_most": "le"}
_HINTS = {"gte": "ge", "lte": "le", "neq": "ne", "==": "eq", ">=": "ge", "<=": "le"}

# per-partition entries that are plain tuples: (attribute of the message, names of the items),
# in the order messages.py documents them
_TUPLE_ENTRIES: dict[str, tuple[str, tuple[str, ...]]] = {
    "ProduceRequest": ("partitions", ("topic", "partition", "record_ids", "record_sizes",
                                      "producer_id", "producer_epoch", "base_sequence")),
    "ProduceResponse": ("partitions", ("topic", "partition", "error", "base_offset")),
    "OffsetsForLeaderEpochRequest": ("partitions", ("topic", "partition", "current_leader_epoch",
                                                    "leader_epoch")),
    "OffsetsForLeaderEpochResponse": ("partitions", ("topic", "partition", "error",
                                                     "leader_epoch", "end_offset")),
    "AlterPartitionRequest": ("partitions", ("topic", "partition", "leader_epoch", "new_isr",
                                             "partition_epoch")),
    "AlterPartitionResponse": ("partitions", ("topic", "partition", "error", "leader",
                                              "leader_epoch", "isr", "partition_epoch")),
    "MetadataResponse": ("partitions", ("topic", "partition", "error", "leader", "leader_epoch",
                                        "replicas", "isr")),
    "ListOffsetsRequest": ("partitions", ("topic", "partition", "timestamp")),
    "ListOffsetsResponse": ("partitions", ("topic", "partition", "error", "offset")),
    "StopReplicaRequest": ("partitions", ("topic", "partition")),
    "LeaderAndIsrResponse": ("partition_errors", ("topic", "partition", "error")),
    "ControlledShutdownResponse": ("remaining_partitions", ("topic", "partition")),
    "OffsetCommitRequest": ("offsets", ("topic", "partition", "offset",
                                        "committed_leader_epoch")),
}

# per-partition entries that are dataclasses: (attribute of the message, entry class)
_CLASS_ENTRIES: dict[str, tuple[str, type]] = {
    "FetchRequest": ("partitions", M.FetchPartition),
    "FetchResponse": ("partitions", M.FetchPartitionData),
    "LeaderAndIsrRequest": ("partition_states", M.PartitionState),
    "UpdateMetadataRequest": ("partition_states", M.PartitionState),
}

_DERIVED = {("FetchResponse", "record_count"): "records"}   # field -> the attribute it counts
#: tuple items a clause compares through a view: AlterPartition v3's NewIsrWithEpochs as ids
_VIEWS = {("AlterPartitionRequest", "new_isr"): M.new_isr_broker_ids}


def message_types() -> dict[str, type]:
    """Every RPC the simulator sends, by name (plus the AlterIsr names of releases before 3.2)."""
    out = {cls.__name__: cls for cls in M.Message.__subclasses__()}
    for name in list(out):
        if name.startswith("AlterPartition"):
            out["AlterIsr" + name[len("AlterPartition"):]] = out[name]
    return out


def _fields(cls: type) -> list[str]:
    if hasattr(cls, "_fields"):   # a NamedTuple entry (FetchPartition)
        return list(cls._fields)
    return [f.name for f in dataclasses.fields(cls)]


def message_fields(type_name: str) -> tuple[list[str], list[str]]:
    """(message fields, partition fields) a ``where`` clause may name for ``type_name``."""
    cls = message_types()[type_name]
    name = cls.__name__
    container = None
    part: list[str] = []
    if name in _TUPLE_ENTRIES:
        container, part = _TUPLE_ENTRIES[name][0], list(_TUPLE_ENTRIES[name][1])
    elif name in _CLASS_ENTRIES:
        container, entry = _CLASS_ENTRIES[name]
        part = _fields(entry)
    part += [f for (t, f) in _DERIVED if t == name]
    if name == "FetchResponse":
        part.remove("records")
    msg = [f for f in _fields(cls) if f != container]
    return msg, part


def _suggest(word: str, known) -> str:
    close = difflib.get_close_matches(str(word), sorted(known), n=1)
    return f"; did you mean '{close[0]}'?" if close else ""


def check_type(type_name: str) -> None:
    known = message_types()
    if not isinstance(type_name, str):
        raise MatchError(f"a message type is a name such as 'FetchResponse', got {type_name!r} "
                         f"({type(type_name).__name__})")
    if type_name not in known:
        raise MatchError(f"unknown message type '{type_name}'{_suggest(type_name, known)}")


def _norm(v):
    return tuple(v) if isinstance(v, list) else v


def _clause(type_name: str, field_name: str, op: str, value) -> tuple[str, str, object]:
    """One comparison of a ``where`` clause, checked: (field, op, value)."""
    op = ALIASES.get(op, op)
    if op not in COMPARISONS:
        hint = f"; did you mean '{_HINTS[op]}'?" if op in _HINTS \
            else _suggest(op, COMPARISONS)
        raise MatchError(f"unknown comparison '{op}' for {type_name}.{field_name}"
                         f"{hint} (use one of {', '.join(COMPARISONS)}, or "
                         f"{', '.join(ALIASES)})")
    if op == "in":
        if not isinstance(value, (list, tuple)):
            raise MatchError(f"'in' for {type_name}.{field_name} needs a list of "
                             f"values, got {value!r}")
        if field_name == "error":
            for v in value:
                check_error_name(v, f"{type_name}.error")
        return field_name, op, tuple(_norm(x) for x in value)
    if field_name == "error" and op in ("eq", "ne"):
        check_error_name(value, f"{type_name}.error")
    return field_name, op, _norm(value)


def error_names() -> list[str]:
    """The error names messages and results carry: Kafka's ``Errors`` enum names kafkasim knows
    (kafkasim.core.errors) and the client's TimeoutException (delivery.timeout.ms)."""
    return sorted({v for k, v in vars(E).items() if k.isupper() and isinstance(v, str)})


def check_error_name(name, what: str) -> None:
    """``name`` is one of ``error_names()``; else MatchError with the closest one."""
    known = error_names()
    if name not in known:
        raise MatchError(f"{what}: unknown error name {name!r}{_suggest(name, known)} "
                         f"(Kafka's Errors names: {', '.join(known)})")


def compile_where(type_name: str | None, where: dict) -> tuple[tuple, tuple, str, object]:
    """Validate ``where`` for ``type_name``; returns (message clauses, partition clauses,
    partition container attribute, item names or None) where a clause is (field, op, value)."""
    if not isinstance(where, dict):
        raise MatchError(f"'where' must be a table of field -> value, got {where!r}")
    if type_name is None:
        raise MatchError("a 'where' clause needs the message 'type' (its fields depend on it)")
    check_type(type_name)
    msg_fields, part_fields = message_fields(type_name)
    cls_name = message_types()[type_name].__name__
    msg_clauses, part_clauses = [], []
    for field_name, spec in where.items():
        if field_name in msg_fields:
            target = msg_clauses
        elif field_name in part_fields:
            target = part_clauses
        else:
            where_known = msg_fields + part_fields
            raise MatchError(f"{type_name} has no field '{field_name}'"
                             f"{_suggest(field_name, where_known)} (fields: "
                             f"{', '.join(where_known)})")
        ops = spec.items() if isinstance(spec, dict) else [("eq", spec)]
        for op, value in ops:
            target.append(_clause(type_name, field_name, op, value))
    container, items = None, None
    if cls_name in _TUPLE_ENTRIES:
        container, names = _TUPLE_ENTRIES[cls_name]
        items = {n: (i, _VIEWS.get((cls_name, n))) for i, n in enumerate(names)}
    elif cls_name in _CLASS_ENTRIES:
        container = _CLASS_ENTRIES[cls_name][0]
    return tuple(msg_clauses), tuple(part_clauses), container, items


def _entry_value(entry, field_name: str, items):
    if items is not None:
        index, view = items[field_name]
        return entry[index] if view is None else view(entry[index])
    if field_name == "record_count":
        return len(entry.records)
    return getattr(entry, field_name)


def _holds(value, op: str, expected) -> bool:
    try:
        return bool(COMPARISONS[op](_norm(value), expected))
    except TypeError:   # e.g. ge between an int and a string: the clause does not hold
        return False


def matches(msg, compiled) -> bool:
    """Whether ``msg`` satisfies the compiled ``where`` clause."""
    msg_clauses, part_clauses, container, items = compiled
    for field_name, op, expected in msg_clauses:
        if not _holds(getattr(msg, field_name), op, expected):
            return False
    if not part_clauses:
        return True
    for entry in getattr(msg, container):
        if all(_holds(_entry_value(entry, f, items), op, expected)
               for f, op, expected in part_clauses):
            return True
    return False


Node = int | str


def check_node(node, known, what: str) -> None:
    """``node`` must name a node of the simulated network: one of ``known`` (broker ids, KRaft
    controller ids, "zookeeper" in ZooKeeper mode, client ids, as the caller lists them for its
    cluster). Raises MatchError naming ``what``, the node, the closest known name and the known
    nodes. Scenario files (kafkasim.scenarios.scenario) and Cluster's filters and faults use
    this same check."""
    known = list(known)
    if not isinstance(node, bool) and isinstance(node, (int, str)) and node in known:
        return
    by_text = {str(k): k for k in known}
    close = difflib.get_close_matches(str(node), sorted(by_text), n=1)
    digits = re.fullmatch(r"\D*?(\d+)", node.strip()) if isinstance(node, str) else None
    if not close and digits and int(digits.group(1)) in known:
        close = [digits.group(1)]   # 'broker-1', ' 1': the node id written as text
    hint = f"; did you mean {by_text[close[0]]!r}?" if close else ""
    raise MatchError(f"unknown node {node!r} in {what}{hint} (nodes: "
                     f"{', '.join(repr(k) for k in known)})")


def check_count(count, what: str = "count") -> None:
    """A filter's ``count``: -1 (every matching message) or how many messages, at least 1."""
    if isinstance(count, bool) or not isinstance(count, int) or not (count == -1 or count >= 1):
        raise MatchError(f"{what} must be -1 (every matching message) or a whole number of "
                         f"messages from 1, got {count!r}")


def checked_filter(type: str | None = None, src: Node | None = None, dst: Node | None = None,
                   count: int = -1, where: dict | None = None, *, nodes,
                   loopback=()) -> MessageFilter:
    """A MessageFilter whose endpoints name known ``nodes`` (see ``check_node``), two different
    ones unless the node is in ``loopback`` (a ZooKeeper-mode broker: the controller sends its
    own broker LeaderAndIsr over the network), and whose count is -1 or positive: the one
    validation path of ``[[steps]] messages`` tables and of Cluster.hold / drop / delay /
    release. Raises MatchError."""
    for endpoint, name in ((src, "'from' (src)"), (dst, "'to' (dst)")):
        if endpoint is not None:
            check_node(endpoint, nodes, f"message filter {name}")
    if src is not None and src == dst and src not in loopback:
        where_ok = "only a ZooKeeper-mode broker (the controller's requests to its own broker)" \
            if loopback else "no node of this cluster"
        raise MatchError(f"message filter 'from' (src) and 'to' (dst) are both {src!r}: it "
                         f"would match nothing, {where_ok} sends messages to itself; give two "
                         f"different nodes, or leave one out")
    check_count(count, "message filter count")
    return MessageFilter(type, src, dst, count, where)


@dataclass(slots=True)
class MessageFilter:
    """Matches messages by type name, endpoints and content; None matches anything.

    ``where`` selects by the message's fields (see ``compile_where`` above), e.g.
    ``MessageFilter("FetchResponse", dst=3, where={"high_watermark": {"ge": 2}})``. An unknown
    type, field or comparison raises ``MatchError`` naming the closest known one."""

    type: str | None = None
    src: Node | None = None
    dst: Node | None = None
    count: int = -1          # how many messages still to match (-1: unlimited)
    where: dict | None = None
    compiled: tuple | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if self.type is not None:
            check_type(self.type)
        if self.where:
            self.compiled = compile_where(self.type, self.where)

    def matches(self, env: M.Envelope) -> bool:
        if self.count == 0:
            return False
        if self.type is not None and env.msg.type_name != self.type and \
                env.msg.type_name != self.type.replace("AlterIsr", "AlterPartition"):
            return False
        if self.src is not None and env.src != self.src:
            return False
        if self.dst is not None and env.dst != self.dst:
            return False
        return self.compiled is None or matches(env.msg, self.compiled)

    def same_selection(self, other: MessageFilter) -> bool:
        """Selects the same messages (type, endpoints and content; the count aside)."""
        return (self.type, self.src, self.dst, self.where or None) == \
            (other.type, other.src, other.dst, other.where or None)

    def describe(self) -> str:
        parts = [f"type={self.type}" if self.type else "any type"]
        if self.src is not None:
            parts.append(f"from={self.src}")
        if self.dst is not None:
            parts.append(f"to={self.dst}")
        if self.where:
            parts.append(f"where {self.where}")
        return " ".join(parts)
