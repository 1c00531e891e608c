"""Scenario files: a cluster, topics, clients and a script of steps, run deterministically.

A scenario is TOML data (format documented in docs/scenario-format.md): the same file runs from the
command line (``kafkasim run FILE --json``), from a notebook (``Scenario.load(FILE).run()``) and as
one row of a sweep. Errors name the file and the line of the offending step.
"""

from __future__ import annotations

import difflib
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from kafkasim.core import events as ev
from kafkasim.core.match import MatchError, check_node, checked_filter
from kafkasim.runtime.engine import EventLimitExceeded
from kafkasim.runtime.network import ZOOKEEPER
from kafkasim.runtime.topics import assignment_conflict, invalid_topic_reason
from kafkasim.scenarios import schema as schema
from kafkasim.settings import limits
from kafkasim.settings.config import ConfigError
from kafkasim.settings.exceptions import ClusterError

if TYPE_CHECKING:   # loading and checking a file needs no cluster: `kafkasim run` refuses fast
    from kafkasim.runtime.cluster import Cluster
    from kafkasim.runtime.workload import RateWorkload
from kafkasim.settings.versions import VersionError

REPORT_FORMAT_VERSION = 1


def builtin_dir():
    """The built-in scenarios as an importlib.resources Traversable (a dir or inside a zip)."""
    from importlib.resources import files

    return files("kafkasim") / "scenarios"


def builtin_names() -> list[str]:
    return sorted(e.name[:-5] for e in builtin_dir().iterdir() if e.name.endswith(".toml"))


class ScenarioError(ValueError):
    """A malformed scenario: the message names the file, the line and what is wrong."""


TOP_KEYS = {"name", "description", "seed", "pin_seed", "kafka_version", "rules", "cluster",
            "topics", "clients", "steps", "check"}
CLUSTER_KEYS = {"brokers", "broker_ids", "racks", "config", "latency_ms", "jitter_ms",
                "metrics_interval_ms", "metadata_mode", "controllers"}
TOPIC_KEYS = {"name", "partitions", "replication_factor", "assignment", "config"}
CLIENT_KEYS = {"name", "type", "config", "group"}
TRIGGER_KEYS = {"at_ms", "after_ms"}
#: keys of which a table holds one at most: each says the same thing another way, and which
#: one wins would be silent (a step's time; a produce step's records; the cluster's brokers)
EXCLUSIVE_KEYS = (("at_ms", "after_ms"), ("values", "count", "rate", "segments"),
                  ("brokers", "broker_ids"))
MESSAGE_FILTER_KEYS = {"type", "from", "to", "count", "where"}

# action -> (required keys, optional keys)
ACTIONS: dict[str, tuple[set[str], set[str]]] = {
    "produce": ({"topic"}, {"partition", "key", "values", "count", "rate", "duration_ms",
                            "segments", "producer", "acks", "wait", "timeout_ms", "label"}),
    "consume": ({"topic"}, {"partitions", "group", "consumer", "max_records", "timeout_ms",
                            "label"}),
    "commit": (set(), {"consumer", "group"}),
    "pause": ({"broker", "ms"}, set()),
    "slow": ({"broker"}, {"network_ms", "disk_ms"}),
    "partition": (set(), {"groups", "cut", "one_way"}),
    "heal": (set(), set()),
    "hold": ({"messages"}, set()),
    "release": (set(), {"messages"}),
    "drop": ({"messages"}, set()),
    "delay": ({"messages", "ms"}, set()),
    "alter_config": ({"entity_type", "name", "configs"}, {"delete"}),
    "run": ({"ms"}, set()),
    "await": ({"until"}, {"timeout_ms"}),
    "settle": (set(), {"timeout_ms"}),
    "expect": ({"that"}, {"label"}),
    "describe": (set(), {"topic", "under_replicated_partitions", "unavailable_partitions",
                         "under_min_isr_partitions", "at_min_isr_partitions", "label"}),
    "snapshot": ({"label"}, set()),
    "crash": ({"broker"}, set()),
    "power_loss": ({"broker"}, set()),
    "shutdown": ({"broker"}, {"wait", "timeout_ms"}),
    "start": ({"broker"}, set()),
    "restart": ({"broker"}, {"clean", "down_ms"}),
    "expire_session": ({"broker"}, set()),
    "elect": ({"topic"}, {"partitions", "type"}),
    "create_topic": ({"name"}, {"partitions", "replication_factor", "assignment", "config",
                                "wait"}),
    # KIP-853 dynamic controller quorums (KRaft, 3.9+)
    "start_controller": ({"controller"}, set()),
    "add_controller": ({"controller"}, set()),
    "remove_controller": ({"controller"}, {"directory_id"}),
    "update_features": (set(), {"features", "release_version"}),
}
#: actions of the KRaft control plane only
KRAFT_ONLY_ACTIONS = {"start_controller", "add_controller", "remove_controller",
                      "update_features"}

# actions whose ``broker`` names a broker (or, in KRaft mode, a controller node) process
BROKER_ACTIONS = {"pause", "slow", "crash", "power_loss", "shutdown", "start", "restart",
                  "expire_session"}

CONDITIONS = {"hw", "leo", "isr", "leader", "acked", "failed", "consumed", "time_ms",
              "under_replicated", "isr_shrinks", "isr_expands", "controller", "broker",
              "lost_acked", "leader_epoch", "unclean_elections", "log",
              "elr", "last_known_elr", "fenced", "metadata_leader_epoch", "voters"}
# clauses and actions that exist in one metadata mode only (validate names Kafka's rule)
KRAFT_ONLY_CONDITIONS = {
    "elr": "the ELR (KIP-966 eligible leader replicas) is KRaft partition state",
    "last_known_elr": "LastKnownElr (KIP-966) is KRaft partition state",
    "fenced": "brokers are fenced by the KRaft controller (BrokerHeartbeatManager); ZooKeeper "
              "mode has no fencing",
    "metadata_leader_epoch": "the epoch of the __cluster_metadata Raft quorum exists in KRaft "
                             "mode only (ZooKeeper mode has /controller_epoch)",
    "voters": "the voters of the __cluster_metadata Raft quorum exist in KRaft mode only",
}
KRAFT_READY_TIMEOUT_MS = 60000


@dataclass
class StepResult:
    index: int
    action: str
    time_ms: int
    ok: bool = True
    detail: str = ""


@dataclass
class Scenario:
    data: dict
    source: str = "<scenario>"
    text: str = ""
    step_lines: list[int] = field(default_factory=list)

    # -- loading ----------------------------------------------------------------------------
    @staticmethod
    def load(path: str | Path) -> Scenario:
        p = Path(path)
        try:
            raw = p.read_bytes()
        except OSError as exc:
            raise ScenarioError(f"{p}: cannot read scenario file: {exc.strerror}") from exc
        try:
            text = raw.decode("utf-8-sig")   # a byte-order mark is read and ignored
        except UnicodeDecodeError as exc:
            line = raw[:exc.start].count(b"\n") + 1
            raise ScenarioError(f"{p}: line {line}: not UTF-8 text (TOML files are UTF-8): "
                                f"byte {exc.object[exc.start]:#04x} at offset {exc.start}"
                                ) from None
        return Scenario.loads(text, str(p))

    @staticmethod
    def loads(text: str, source: str = "<scenario>") -> Scenario:
        text = text.removeprefix("\ufeff")   # a byte-order mark (an editor's UTF-8 signature)
        data = schema.parse_toml(text, source, ScenarioError)
        lines = [i + 1 for i, line in enumerate(text.splitlines())
                 if re.match(r"^\s*\[\[\s*steps\s*\]\]", line)]
        sc = Scenario(data, source, text, lines)
        sc.validate()
        if not any(data.get(k) for k in ("cluster", "topics", "clients", "steps")):
            # an empty file, a comment, a name: refused, not run as a default empty run
            raise ScenarioError(f"{source}: the scenario file says nothing to run: give "
                                "[cluster], [[topics]], [[clients]] and its script as "
                                "[[steps]] tables (docs/scenario-format.md)")
        return sc

    @staticmethod
    def named(name: str) -> Scenario:
        """A scenario shipped with kafkasim (``kafkasim/scenarios/<name>.toml``); works when the
        package is imported from a zip too (Spark executors)."""
        base = builtin_dir()
        file = name if name.endswith(".toml") else name + ".toml"
        entry = base / file
        try:
            exists = entry.is_file()
        except OSError:   # e.g. a name too long for the file system
            exists = False
        if not exists:
            known = builtin_names()
            close = difflib.get_close_matches(name, known, n=1)
            hint = f" Did you mean '{close[0]}'?" if close else ""
            raise ScenarioError(f"No built-in scenario '{name}'.{hint} Known: {', '.join(known)}")
        return Scenario.loads(entry.read_text(encoding="utf-8"), f"kafkasim/scenarios/{file}")

    def _where(self, step: int | None = None) -> str:
        if step is not None and step < len(self.step_lines):
            return f"{self.source}: line {self.step_lines[step]}: step {step + 1}"
        return self.source

    def _fail(self, msg: str, step: int | None = None) -> ScenarioError:
        return ScenarioError(f"{self._where(step)}: {msg}")

    def _check_keys(self, d: dict, allowed: set[str], what: str, step: int | None = None) -> None:
        if not isinstance(d, dict):
            raise self._fail(f"{what} must be a table, got {type(d).__name__}", step)
        for k in d:
            if k not in allowed:
                close = difflib.get_close_matches(k, sorted(allowed), n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise self._fail(f"unknown key '{k}' in {what}{hint}", step)

    def _line_of(self, key: str, value=None) -> str:
        """``line N: `` of the first line setting ``key`` (or opening table ``[key]``; with
        ``value``, the first line setting it to that value), or ""."""
        last = key.rsplit(".", 1)[-1]
        pat = re.compile(rf'^\s*(\[+\s*{re.escape(last)}\s*\]+|"?{re.escape(last)}"?\s*=)'
                         rf'|[{{,]\s*"?{re.escape(last)}"?\s*=')
        for i, line in enumerate(self.text.splitlines()):
            if pat.search(line) and (value is None or json.dumps(value) in line):
                return f"line {i + 1}: "
        return ""

    def _schema(self, fn, *args, step: int | None = None) -> None:
        """Run a kafkasim.scenarios.schema check; a SchemaError names file, line and key."""
        try:
            fn(*args)
        except schema.SchemaError as exc:
            if step is None:
                raise ScenarioError(f"{self.source}: {self._line_of(exc.key)}{exc}") from None
            raise self._fail(str(exc), step) from None

    def validate(self) -> None:
        """Check keys and values against the scenario schema (kafkasim.scenarios.schema) before
        anything runs; errors name the file, the line, the key and what is allowed."""
        d = self.data
        self._check_keys(d, TOP_KEYS, "the scenario")
        self._schema(schema.check_table, "", d, schema.TOP_KEYS)
        self._check_version()
        cluster = d.get("cluster", {})
        self._check_keys(cluster, CLUSTER_KEYS, "[cluster]")
        self._check_exclusive(cluster, "[cluster]")
        self._schema(schema.check_table, "cluster", cluster, schema.CLUSTER_KEYS)
        mode = self.metadata_mode()
        if mode == "zookeeper" and "controllers" in cluster:
            raise self._fail("[cluster]: controllers applies to KRaft mode only (dedicated "
                             "controller nodes voting in the __cluster_metadata quorum); in "
                             "ZooKeeper mode the controller is the broker holding /controller. "
                             "Set metadata_mode = \"kraft\" (Kafka 3.3+) or drop controllers")
        topics = d.get("topics", [])
        if not isinstance(topics, list):
            raise self._fail("topics must be an array of tables ([[topics]])")
        total = 0
        for t in topics:
            self._check_keys(t, TOPIC_KEYS, "[[topics]] entry")
            if "name" not in t:
                raise self._fail("every [[topics]] entry needs a name")
            self._schema(schema.check_table, "topics", t, schema.TOPIC_KEYS)
            reason = invalid_topic_reason(t["name"])
            if reason is not None:
                line = self._line_of("name", t["name"])
                raise ScenarioError(f"{self.source}: {line}topics.name: Topic name is invalid: "
                                    f"{reason} (Kafka's Topic.validate)")
            conflict = assignment_conflict(t.get("partitions"), t.get("replication_factor"),
                                           t.get("assignment"))
            if conflict:
                line = self._line_of("name", t["name"])
                raise ScenarioError(f"{self.source}: {line}topics '{t['name']}': {conflict}")
            total += t.get("partitions", len(t.get("assignment", [0])))
        if total > limits.MAX_PARTITIONS:
            raise self._fail(f"the topics have {total} partitions in all, more than "
                             f"limits.MAX_PARTITIONS = {limits.MAX_PARTITIONS}")
        clients = d.get("clients", [])
        if not isinstance(clients, list):
            raise self._fail("clients must be an array of tables ([[clients]])")
        for cl in clients:
            self._check_keys(cl, CLIENT_KEYS, "[[clients]] entry")
            self._schema(schema.check_table, "clients", cl, schema.CLIENT_KEYS)
            for key in cl.get("config", {}):
                if key in ("name", "group"):   # Cluster.producer/consumer's own parameters
                    raise self._fail(f"client {cl.get('name', '?')!r}: '{key}' is not a "
                                     f"{cl.get('type', 'client')} config key (Kafka's keys "
                                     "have dots, e.g. acks, linger.ms)")
            if cl.get("type") not in ("producer", "consumer") or not isinstance(
                    cl.get("name"), str):
                raise self._fail(f"client {cl.get('name', '?')!r}: needs a name and type "
                                 f"'producer' or 'consumer', got {cl.get('type')!r}")
        steps = d.get("steps", [])
        if not isinstance(steps, list):
            raise self._fail("steps must be an array of tables ([[steps]])")
        for i, st in enumerate(steps):
            if not isinstance(st, dict) or "do" not in st:
                raise self._fail("every step needs a 'do' key naming its action", i)
            action = st["do"]
            if not isinstance(action, str) or action not in ACTIONS:
                close = difflib.get_close_matches(str(action), sorted(ACTIONS), n=1)
                hint = f"; did you mean '{close[0]}'?" if close else ""
                raise self._fail(f"unknown action '{action}'{hint} (known: "
                                 f"{', '.join(sorted(ACTIONS))})", i)
            required, optional = ACTIONS[action]
            self._check_keys(st, required | optional | TRIGGER_KEYS | {"do"},
                             f"'{action}' step", i)
            missing = sorted(required - set(st))
            if missing:
                raise self._fail(f"'{action}' step is missing {', '.join(missing)}", i)
            self._check_exclusive(st, f"'{action}' step", i)
            self._schema(schema.check_step, action, st, step=i)
            if action in KRAFT_ONLY_ACTIONS and mode == "zookeeper":
                raise self._fail(f"{action}: controllers of a KRaft quorum (KIP-853) exist in "
                                 "KRaft mode only; this scenario runs ZooKeeper mode (set "
                                 "metadata_mode = \"kraft\" or kafka_version 3.9+)", i)
            if action == "expire_session" and mode == "kraft":
                raise self._fail(
                    "expire_session: KRaft mode has no ZooKeeper sessions. A KRaft broker is "
                    "fenced by the active controller when no heartbeat reached it for "
                    "broker.session.timeout.ms (BrokerHeartbeatManager); use crash, pause or a "
                    "network partition cutting the broker from the controllers instead", i)
            for cond_key in ("until", "that"):
                if cond_key in st:
                    self._check_condition(cond_key, st[cond_key], i, mode)
        self._check_racks()
        self._check_pinned_seed()
        for i, st in enumerate(steps):   # every step is well formed: check what they name
            self._check_names(i, st)

    def _check_exclusive(self, table: dict, what: str, step: int | None = None) -> None:
        """At most one key of each EXCLUSIVE_KEYS group in ``table``."""
        for group in EXCLUSIVE_KEYS:
            given = [k for k in group if k in table]
            if len(given) > 1:
                raise self._fail(f"{what} gives both {given[0]} and {given[1]}: give one of "
                                 f"{', '.join(group)} (with both, one would be silently "
                                 "ignored)", step)

    # -- names: nodes, producers and consumers a step refers to --------------------------------
    def _check_names(self, i: int, st: dict) -> None:
        """Nodes in filters, faults and conditions exist in this scenario (brokers, KRaft
        controllers or ZooKeeper, clients where a filter or a network fault allows them), and
        so do the producers and consumers steps and conditions name; did-you-mean otherwise."""
        if "messages" in st:
            self._message_filter(st["messages"], i)
        nodes = self.known_nodes()
        try:
            if st["do"] == "partition" and not st.get("groups") and not st.get("cut"):
                raise MatchError("a 'partition' step needs groups = [[...], [...]] or cut = "
                                 "[[a, b], ...]: without them it cuts nothing")
            self._check_groups(st.get("groups"), nodes)
            for a, b in st.get("cut", []):
                check_node(a, nodes, "cut")
                check_node(b, nodes, "cut")
                if a == b:
                    raise MatchError(f"cut [{a!r}, {b!r}] joins a node to itself: a node always "
                                     "reaches itself, so cut two different nodes")
            if "broker" in st and st["do"] in BROKER_ACTIONS:
                check_node(st["broker"], self._processes(), f"'{st['do']}' broker")
            for key in ("until", "that"):
                for clause, spec in st.get(key, {}).items():
                    self._check_clause_names(clause, spec)
        except MatchError as exc:
            raise self._fail(str(exc), i) from None
        self._check_client(i, st, "producer", "producer")
        self._check_client(i, st, "consumer", "consumer")

    @staticmethod
    def _check_groups(groups, nodes: list) -> None:
        """``partition`` groups: known nodes, each in one group, at least two groups (one
        group alone cuts nothing)."""
        if groups is None:
            return
        if len(groups) < 2:
            raise MatchError(f"partition groups {groups!r} cut nothing: give two groups or "
                             "more (nodes in different groups cannot reach each other)")
        seen: set = set()
        for g in groups:
            for node in g:
                check_node(node, nodes, "partition groups")
                if node in seen:
                    raise MatchError(f"node {node!r} is in two partition groups")
                seen.add(node)

    def _processes(self) -> list:
        """Broker ids and, in KRaft mode, controller node ids (what ``broker =`` may name)."""
        return [n for n in self.server_ids() if n != ZOOKEEPER]

    def _check_clause_names(self, clause: str, spec) -> None:
        """The broker ids and client names inside one condition clause."""
        if not isinstance(spec, dict):
            return
        brokers = self.broker_ids()
        if "broker" in spec:
            check_node(spec["broker"], brokers, f"condition '{clause}' broker")
        if clause == "broker":
            check_node(spec["id"], self._processes(), "condition 'broker' id")
        for key in ("is", "not"):
            if clause in ("leader", "controller") and key in spec and spec[key] != -1:
                known = brokers if clause == "leader" or self.metadata_mode() != "kraft" \
                    else [n for n in self._processes() if n not in brokers]
                check_node(spec[key], known, f"condition '{clause}' {key} (-1: none)")
        if clause in ("isr", "elr", "last_known_elr", "fenced"):
            for key in ("equals", "contains", "excludes"):
                for b in _as_list(spec.get(key, [])):
                    check_node(b, brokers, f"condition '{clause}' {key}")
        for key, kind in (("producer", "producer"), ("consumer", "consumer")):
            if key in spec:
                self._known_client(spec[key], kind, f"condition '{clause}'")

    def _check_client(self, i: int, st: dict, key: str, kind: str) -> None:
        if key in st:
            try:
                self._known_client(st[key], kind, f"'{st['do']}' step")
            except MatchError as exc:
                raise self._fail(str(exc), i) from None

    def _known_client(self, name, kind: str, what: str) -> None:
        known = self.client_names(kind)
        if name not in known:
            hint = schema.suggest(name, known)
            raise MatchError(f"{what} names {kind} {name!r}, which this scenario does not "
                             f"have{hint} ({kind}s: {', '.join(known) or 'none'}; declare it "
                             f"in [[clients]] with type = \"{kind}\")")

    def _check_racks(self) -> None:
        """``[cluster] racks`` maps broker ids (TOML keys are strings: ``racks = { 1 = "a" }``)
        to rack names."""
        racks = self.data.get("cluster", {}).get("racks", {})
        brokers = self.broker_ids()
        for key, rack in racks.items():
            if not (key.isascii() and key.isdigit() and int(key) in brokers):
                raise ScenarioError(
                    f"{self.source}: {self._line_of('racks')}cluster.racks: key {key!r} is not "
                    f"a broker id of this cluster (racks maps broker ids to rack names, e.g. "
                    f"racks = {{ 1 = \"a\", 2 = \"b\" }}; brokers: {brokers})")
            if not isinstance(rack, str):
                raise ScenarioError(f"{self.source}: {self._line_of('racks')}cluster.racks."
                                    f"{key} must be a rack name (a string), got {rack!r}")

    def _check_pinned_seed(self) -> None:
        if self.data.get("pin_seed") and "seed" not in self.data:
            raise ScenarioError(f"{self.source}: {self._line_of('pin_seed')}pin_seed = true "
                                "needs the seed it pins: add seed = N")

    def _check_version(self) -> None:
        """An unknown ``kafka_version`` or rule override is refused at load time, with the known
        versions listed (kafkasim.settings.versions)."""
        from kafkasim.settings import versions

        try:
            version = versions.check_known_version(self.data.get("kafka_version")
                                                   or versions.DEFAULT_VERSION)
            versions.rules_for(version, self.data.get("rules"))
        except (VersionError, ValueError, TypeError) as exc:
            key = "rules" if "kafka_version" not in self.data else "kafka_version"
            raise ScenarioError(f"{self.source}: {self._line_of(key)}{exc}") from None

    def _check_condition(self, where: str, cond: dict, step: int,
                         mode: str | None = None) -> None:
        self._check_keys(cond, CONDITIONS, "condition", step)
        self._schema(schema.check_condition, where, cond, step=step)
        for key, spec in cond.items():
            self._schema(schema.check_clause, key, spec, step=step)
        if mode == "zookeeper":
            for key in sorted(set(cond) & set(KRAFT_ONLY_CONDITIONS)):
                raise self._fail(f"condition '{key}' needs KRaft mode: "
                                 f"{KRAFT_ONLY_CONDITIONS[key]}; this scenario runs ZooKeeper "
                                 "mode (set metadata_mode = \"kraft\" or kafka_version 4.0+)",
                                 step)

    def metadata_mode(self) -> str | None:
        """``"zookeeper"`` or ``"kraft"``: what ``[cluster] metadata_mode`` and
        ``kafka_version`` select (kafkasim.settings.modes.metadata_mode_for); None when the version
        or
        rule overrides are invalid (build() reports those)."""
        from kafkasim.settings import versions
        from kafkasim.settings.modes import metadata_mode_for

        try:
            version = versions.normalize_version(self.data.get("kafka_version")
                                                 or versions.DEFAULT_VERSION)
            rules = versions.rules_for(version, self.data.get("rules"))
        except (VersionError, ValueError, TypeError):
            return None
        try:
            return metadata_mode_for(version, self.data.get("cluster", {}).get("metadata_mode"),
                                     rules=rules)
        except ValueError as exc:
            raise self._fail(f"[cluster]: {exc}") from exc

    def _message_filter(self, m: dict, step: int) -> dict:
        """A step's ``messages`` table as Cluster.hold/drop/release/delay keywords, validated
        (an unknown message type, field, comparison or node names the closest known one)."""
        self._check_keys(m, MESSAGE_FILTER_KEYS, "messages filter", step)
        f = {"type": m.get("type"), "src": m.get("from"), "dst": m.get("to"),
             "where": m.get("where")}
        try:
            checked_filter(f["type"], f["src"], f["dst"], m.get("count", -1), f["where"],
                           nodes=self.known_nodes(), loopback=() if self.metadata_mode() == "kraft"
                           else self.broker_ids())
        except MatchError as exc:
            raise self._fail(f"messages filter: {exc}", step) from exc
        return f

    # -- the nodes and clients a scenario names -----------------------------------------------
    def broker_ids(self) -> list[int]:
        cl = self.data.get("cluster", {})
        if "broker_ids" in cl:
            return list(cl["broker_ids"])
        return list(range(1, cl.get("brokers", 3) + 1))

    def server_ids(self) -> list:
        """Broker ids, then the KRaft controller node ids (Cluster's numbering: ``controllers
        = 3`` is 3000, 3001, 3002) or, in ZooKeeper mode, "zookeeper"."""
        if self.metadata_mode() != "kraft":
            return [*self.broker_ids(), ZOOKEEPER]
        from kafkasim.runtime.kraft_cluster import DEDICATED_CONTROLLER_BASE_ID

        ctl = self.data.get("cluster", {}).get("controllers", 3)
        ids = list(ctl) if isinstance(ctl, list) else [DEDICATED_CONTROLLER_BASE_ID + i
                                                        for i in range(ctl)]
        return [*self.broker_ids(), *ids]

    def client_names(self, kind: str | None = None) -> list[str]:
        """The clients of ``[[clients]]`` and those steps create without naming one
        (``producer-acks-all``, ``consumer-scenario-group``); ``kind``: "producer" or
        "consumer" only."""
        names = [cl["name"] for cl in self.data.get("clients", [])
                 if kind in (None, cl["type"])]
        for st in self.data.get("steps", []):
            if st["do"] == "produce" and "producer" not in st and kind != "consumer":
                names.append(auto_producer_name(st))
            elif st["do"] in ("consume", "commit") and "consumer" not in st \
                    and kind != "producer":
                names.append(auto_consumer_name(st))
        return list(dict.fromkeys(names))

    def known_nodes(self) -> list:
        """Every node of this scenario's network, named as Cluster names them (the nodes a
        message filter or a network fault may name)."""
        return [*self.server_ids(), *self.client_names()]

    # -- running ----------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.data.get("name", Path(self.source).stem)

    def build(self, seed: int | None = None,
              max_events: int | None = limits.DEFAULT_MAX_EVENTS) -> Cluster:
        d = self.data
        self._refuse_other_seed(seed)
        cl = d.get("cluster", {})
        if "broker_ids" in cl:
            brokers: Any = list(cl["broker_ids"])
        else:
            brokers = cl.get("brokers", 3)
        racks = {int(k): v for k, v in cl.get("racks", {}).items()}
        try:
            from kafkasim.runtime.cluster import Cluster  # not needed to check a file

            kraft = {k: cl[k] for k in ("metadata_mode", "controllers") if k in cl}
            return Cluster(brokers, seed=d.get("seed", 0) if seed is None else seed,
                           kafka_version=d.get("kafka_version"), config=cl.get("config"),
                           racks=racks, rules=d.get("rules"),
                           latency_ms=cl.get("latency_ms", 1), jitter_ms=cl.get("jitter_ms", 1),
                           metrics_interval_ms=cl.get("metrics_interval_ms", 1000),
                           max_events=max_events, **kraft)
        except EventLimitExceeded as exc:
            raise self._fail(f"[cluster]: {exc}") from exc
        except (ClusterError, ConfigError, VersionError, ValueError, TypeError) as exc:
            raise self._fail(f"[cluster]: {exc}") from exc

    def _refuse_other_seed(self, seed: int | None) -> None:
        """A scenario with ``pin_seed = true`` is about the run its ``seed`` gives (its steps
        name node ids that seed's elections pick): another seed is refused, not run into
        expectations that cannot hold."""
        pinned = self.data.get("seed", 0)
        if self.data.get("pin_seed") and seed is not None and seed != pinned:
            raise self._fail(f"this scenario runs with seed {pinned} only (pin_seed = true: its "
                             f"steps name node ids that seed's elections pick), not seed {seed}: "
                             f"run it with seed {pinned} (no --seed; in a sweep, seeds = "
                             f"[{pinned}]), or copy the file and set pin_seed = false to explore "
                             "other seeds")

    def run(self, seed: int | None = None, check=None,
            max_events: int | None = limits.DEFAULT_MAX_EVENTS) -> ScenarioRun:
        """Build and execute. ``check``: a ``kafkasim.observe.checks`` checker (or suite) run
        after every event, True for a collecting suite of every invariant, None for the
        scenario's own top-level ``check = true|false`` (default false). ``max_events``: the
        engine's event budget (kafkasim.settings.limits.DEFAULT_MAX_EVENTS; None: unlimited); past
        it
        the run stops with a ScenarioError naming the limit."""
        cluster = self.build(seed, max_events)
        run = ScenarioRun(self, cluster, check=self.data.get("check", False)
                          if check is None else check)
        try:
            run.execute()
        except EventLimitExceeded as exc:   # while creating topics or clients
            raise self._fail(str(exc)) from exc
        return run


class ScenarioRun:
    """One execution of a scenario: the cluster, its clients, step results and the report."""

    def __init__(self, scenario: Scenario, cluster: Cluster, check=None) -> None:
        self.scenario = scenario
        self.cluster = cluster
        # invariant checkers run after every event (kafkasim.observe.checks.attach)
        self.check = None
        if check is not None and check is not False:
            from kafkasim.observe.checks import attach

            self.check = attach(cluster, None if check is True else check)
        self.producers: dict[str, Any] = {}
        self.consumers: dict[str, Any] = {}
        self.steps: list[StepResult] = []
        self.expectations: list[dict] = []
        self.outputs: list[dict] = []
        self.snapshots: dict[str, bytes] = {}
        self.workloads: list[RateWorkload] = []
        self.conditions = Conditions(self)

    def _fail(self, msg: str, step: int | None = None) -> ScenarioError:
        return self.scenario._fail(msg, step)

    def execute(self) -> None:
        d = self.scenario.data
        c = self.cluster
        if c.kraft is not None:
            self._await_kraft_ready()
        for t in d.get("topics", []):
            try:
                c.create_topic(t["name"], t.get("partitions", 1), t.get("replication_factor"),
                               assignment=t.get("assignment"), config=t.get("config"))
            except (ClusterError, ConfigError, ValueError) as exc:
                raise self._fail(f"topic '{t['name']}': {exc}") from exc
        for cl in d.get("clients", []):
            try:
                if cl["type"] == "producer":
                    self.producers[cl["name"]] = c.producer(cl["name"], **cl.get("config", {}))
                else:
                    self.consumers[cl["name"]] = c.consumer(cl.get("group"), cl["name"],
                                                            **cl.get("config", {}))
            except (ClusterError, ConfigError, ValueError) as exc:
                raise self._fail(f"client '{cl['name']}': {exc}") from exc
        for i, st in enumerate(d.get("steps", [])):
            try:
                self._wait_trigger(st)
                res = getattr(self, "_do_" + st["do"])(i, st)
            except ScenarioError:
                raise
            except EventLimitExceeded as exc:
                raise self._fail(str(exc), i) from exc
            except (ClusterError, ConfigError, ValueError, KeyError, TypeError) as exc:
                # a KeyError's str() is the repr of its key ("'q'"): show its message
                detail = exc.args[0] if isinstance(exc, KeyError) and exc.args else exc
                raise self._fail(f"'{st['do']}' failed: {detail}", i) from exc
            self.steps.append(StepResult(i, st["do"], c.now, True, res or ""))

    def _await_kraft_ready(self) -> None:
        """KRaft: a new cluster is usable once the quorum has elected an active controller and
        every broker has registered and been unfenced (it caught up with the metadata log:
        BrokerLifecycleManager, ClusterControlManager). Topics are created after that, as an
        admin client would (CreateTopics needs the active controller and unfenced brokers)."""
        c = self.cluster

        def ready(cl) -> bool:
            img = cl.kraft.image
            return cl.controller_id() >= 0 and all(
                b in img.brokers and not img.brokers[b].fenced for b in cl.brokers)

        if not c.run_until(ready, KRAFT_READY_TIMEOUT_MS):
            img = c.kraft.image
            raise self._fail(
                f"the KRaft cluster did not come up within {KRAFT_READY_TIMEOUT_MS} ms: active "
                f"controller {c.controller_id()}, unfenced brokers "
                f"{list(img.unfenced_brokers())} of {sorted(c.brokers)}")

    def _wait_trigger(self, st: dict) -> None:
        c = self.cluster
        if "at_ms" in st:
            if st["at_ms"] > c.now:
                c.run_to(st["at_ms"])
        if "after_ms" in st:
            c.run(st["after_ms"])

    # -- clients ----------------------------------------------------------------------------
    def _producer(self, st: dict):
        name = st.get("producer")
        if name is not None:
            if name not in self.producers:
                raise KeyError(f"unknown producer '{name}'; declared: {sorted(self.producers)}")
            return self.producers[name]
        key = auto_producer_name(st)
        if key not in self.producers:
            cfg = {"acks": st["acks"]} if "acks" in st else {}
            self.producers[key] = self.cluster.producer(key, **cfg)
        return self.producers[key]

    def _consumer(self, st: dict):
        name = st.get("consumer")
        if name is not None:
            if name not in self.consumers:
                raise KeyError(f"unknown consumer '{name}'; declared: {sorted(self.consumers)}")
            return self.consumers[name]
        group = st.get("group", "scenario-group")
        key = auto_consumer_name(st)
        if key not in self.consumers:
            self.consumers[key] = self.cluster.consumer(group, key,
                                                        auto_offset_reset="earliest")
        return self.consumers[key]

    # -- actions ----------------------------------------------------------------------------
    def _do_produce(self, i: int, st: dict) -> str:
        p = self._producer(st)
        c = self.cluster
        topic = st["topic"]
        # a step naming a topic (or partition) the scenario's cluster lacks is a mistake in the
        # file: said at once, with the closest name (Kafka's send would wait max.block.ms for
        # its metadata and fail with a TimeoutException)
        c.topics.check_topic(topic)
        if st.get("partition") is not None:
            c.topics.check_partition(topic, st["partition"])
        if "rate" in st or "segments" in st:
            from kafkasim.runtime.workload import RateWorkload

            w = RateWorkload(c, p, topic, rate=st.get("rate", 0),
                             duration_ms=st.get("duration_ms", 0),
                             segments=st.get("segments"), partition=st.get("partition"),
                             name=f"workload-{i + 1}")
            self.workloads.append(w)
            return f"workload {w.client_id}: {topic} until t={w.end_ms} ms"
        values = st.get("values")
        if values is None:
            n = st.get("count", 1)
            values = [f"s{i + 1}-{k}" for k in range(n)]
        results = [p.send(topic, v, key=st.get("key"), partition=st.get("partition"))
                   for v in values]
        if st.get("wait", False):
            c.run_until(lambda cl: all(r.status != "pending" for r in results),
                        st.get("timeout_ms", 60000))
        return f"{len(results)} record(s) to {topic} via {p.client_id}"

    def _do_consume(self, i: int, st: dict) -> str:
        cons = self._consumer(st)
        cons.assign(st["topic"], st.get("partitions"))
        got = cons.poll(st.get("timeout_ms", 1000), st.get("max_records"))
        return f"{len(got)} record(s): {[r.value for r in got][:20]}"

    def _do_commit(self, i: int, st: dict) -> str:
        cons = self._consumer(st)
        return f"committed {cons.commit()}"

    def _do_pause(self, i: int, st: dict) -> str:
        self.cluster.pause(st["broker"], st["ms"])
        return f"broker {st['broker']} paused for {st['ms']} ms"

    def _do_slow(self, i: int, st: dict) -> str:
        self.cluster.slow(st["broker"], st.get("network_ms", 0), st.get("disk_ms", 0))
        return f"broker {st['broker']} slowed"

    def _do_partition(self, i: int, st: dict) -> str:
        c = self.cluster
        if "groups" in st:
            groups = [list(g) for g in st["groups"]]
            if any(_controller_node(self.cluster, n) is not None for g in groups for n in g):
                # Cluster.partition_network only knows broker ids: the same partition as cuts
                # of every link between two groups (unlisted nodes still reach everyone)
                for gi, ga in enumerate(groups):
                    for gb in groups[gi + 1:]:
                        for a in ga:
                            for b in gb:
                                c.cut(a, b)
            else:
                c.partition_network(*groups)
        for a, b in st.get("cut", []):
            c.cut(a, b, both_ways=not st.get("one_way", False))
        return "network partitioned"

    def _do_heal(self, i: int, st: dict) -> str:
        self.cluster.heal()
        return "network healed"

    def _filter(self, m: dict, i: int) -> dict:
        return self.scenario._message_filter(m, i)

    def _do_hold(self, i: int, st: dict) -> str:
        f = self._filter(st["messages"], i)
        self.cluster.hold(**f, count=st["messages"].get("count", -1))
        return f"holding {f}"

    def _do_delay(self, i: int, st: dict) -> str:
        f = self._filter(st["messages"], i)
        self.cluster.delay(st["ms"], **f, count=st["messages"].get("count", -1))
        return f"delaying {f} by {st['ms']} ms"

    def _do_release(self, i: int, st: dict) -> str:
        f = self._filter(st.get("messages", {}), i)
        n = self.cluster.release(**f)
        return f"released {n} message(s)"

    def _do_drop(self, i: int, st: dict) -> str:
        f = self._filter(st["messages"], i)
        n = self.cluster.transport.drop(**f, count=st["messages"].get("count", -1))
        return f"dropping {f} ({n} held message(s) discarded)"

    def _do_alter_config(self, i: int, st: dict) -> str:
        self.cluster.alter_config(st["entity_type"], st["name"], st["configs"], st.get("delete"))
        return f"{st['entity_type']} {st['name']}: {st['configs']}"

    def _do_run(self, i: int, st: dict) -> str:
        self.cluster.run(st["ms"])
        return f"ran {st['ms']} ms"

    def _do_await(self, i: int, st: dict) -> str:
        cond = st["until"]
        timeout = st.get("timeout_ms", 30000)
        ok = self.cluster.run_until(lambda c: self.conditions.holds(cond)[0], timeout)
        if not ok:
            _, actual = self.conditions.holds(cond)
            raise self._fail(f"await timed out after {timeout} ms: {json.dumps(cond)} "
                             f"never held (now: {actual})", i)
        return f"{json.dumps(cond)} holds"

    def _do_settle(self, i: int, st: dict) -> str:
        timeout = st.get("timeout_ms", 30000)
        ok = self.cluster.run_until(lambda c: _settled(c), timeout)
        if not ok:
            raise self._fail(f"settle: replication still in progress after {timeout} ms", i)
        return "settled"

    def _do_expect(self, i: int, st: dict) -> str:
        ok, actual = self.conditions.holds(st["that"])
        self.expectations.append({"step": i + 1, "label": st.get("label", ""),
                                  "condition": st["that"], "ok": ok, "actual": actual,
                                  "time_ms": self.cluster.now})
        return f"{'PASS' if ok else 'FAIL'}: {json.dumps(st['that'])} (actual: {actual})"

    def _do_describe(self, i: int, st: dict) -> str:
        text = self.cluster.describe(
            st.get("topic"),
            under_replicated_partitions=st.get("under_replicated_partitions", False),
            unavailable_partitions=st.get("unavailable_partitions", False),
            under_min_isr_partitions=st.get("under_min_isr_partitions", False),
            at_min_isr_partitions=st.get("at_min_isr_partitions", False))
        self.outputs.append({"step": i + 1, "label": st.get("label", "describe"),
                             "time_ms": self.cluster.now, "text": text})
        return text

    def _do_snapshot(self, i: int, st: dict) -> str:
        from kafkasim.observe.snapshots import snapshot

        self.snapshots[st["label"]] = snapshot(self.cluster)
        self.outputs.append({"step": i + 1, "label": st["label"], "time_ms": self.cluster.now,
                             "text": json.dumps(partition_report(self.cluster))})
        return f"snapshot '{st['label']}'"

    def _node_name(self, node_id) -> str:
        return f"{'controller' if _controller_node(self.cluster, node_id) else 'broker'} {node_id}"

    def _do_crash(self, i: int, st: dict) -> str:
        self.cluster.crash(st["broker"])
        return f"{self._node_name(st['broker'])} crashed"

    def _do_power_loss(self, i: int, st: dict) -> str:
        if _controller_node(self.cluster, st["broker"]) is not None:
            raise self._fail(f"power_loss is not modelled for controller {st['broker']}: a "
                             "KRaft voter flushes __cluster_metadata before its offsets count "
                             "toward the quorum's high watermark (KafkaRaftClient), so use "
                             "crash", i)
        self.cluster.power_loss(st["broker"])
        return f"broker {st['broker']} lost power"

    def _do_shutdown(self, i: int, st: dict) -> str:
        c = self.cluster
        c.shutdown(st["broker"])
        if st.get("wait", True):
            b = _controller_node(self.cluster, st["broker"]) or c.brokers[st["broker"]]
            if not c.run_until(lambda cl: b.state == "stopped", st.get("timeout_ms", 60000)):
                raise self._fail(f"broker {st['broker']} did not finish shutting down", i)
        return f"{self._node_name(st['broker'])} shut down cleanly"

    def _do_start(self, i: int, st: dict) -> str:
        self.cluster.start(st["broker"])
        return f"{self._node_name(st['broker'])} started"

    def _do_restart(self, i: int, st: dict) -> str:
        c = self.cluster
        node = _controller_node(self.cluster, st["broker"])
        if node is None:
            c.restart(st["broker"], clean=st.get("clean", False), wait_ms=st.get("down_ms", 0))
            return f"broker {st['broker']} restarted"
        # a controller node: no session to wait for; its metadata log survives either way
        if node.state == "running":
            (c.shutdown if st.get("clean", False) else c.crash)(st["broker"])
        if st.get("down_ms", 0):
            c.run(st["down_ms"])
        c.start(st["broker"])
        return f"controller {st['broker']} restarted"

    def _do_expire_session(self, i: int, st: dict) -> str:
        self.cluster.zk_control_plane.expire_session(st["broker"])
        return f"broker {st['broker']}'s ZooKeeper session expired"

    def _do_create_topic(self, i: int, st: dict) -> str:
        """``kafka-topics --create`` during the run (KRaft: a CreateTopics the active
        controller must commit; it fails while the metadata quorum has no leader)."""
        assign = self.cluster.create_topic(st["name"], st.get("partitions", 1),
                                           st.get("replication_factor"),
                                           assignment=st.get("assignment"),
                                           config=st.get("config"), wait=st.get("wait", True))
        return f"topic {st['name']} created: {assign}"

    def _do_start_controller(self, i: int, st: dict) -> str:
        """A new controller process, formatted with --no-initial-controllers: an observer of
        a dynamic quorum until added (KIP-853)."""
        self.cluster.kraft.start_controller(st["controller"])
        return f"controller {st['controller']} started as an observer"

    def _do_add_controller(self, i: int, st: dict) -> str:
        """``kafka-metadata-quorum add-controller`` with the controller's own configuration."""
        cid = st["controller"]
        return self.cluster.kraft.add_controller({
            "node.id": cid, "process.roles": "controller",
            "controller.listener.names": "CONTROLLER",
            "listeners": f"CONTROLLER://controller{cid}:9093"})

    def _do_remove_controller(self, i: int, st: dict) -> str:
        """``kafka-metadata-quorum remove-controller``; ``directory_id`` defaults to the
        controller's own (its meta.properties directory.id)."""
        from kafkasim.runtime.describe import directory_id

        cid = st["controller"]
        directory = st.get("directory_id", directory_id(cid, self.cluster.engine.seed))
        return self.cluster.kraft.remove_controller(cid, directory)

    def _do_update_features(self, i: int, st: dict) -> str:
        """``kafka-features upgrade --feature kraft.version=1`` or ``--release-version``."""
        done = self.cluster.kraft.update_features(st.get("features"),
                                                  release_version=st.get("release_version"))
        return f"features upgraded: {done}"

    def _do_elect(self, i: int, st: dict) -> str:
        res = self.cluster.elect(st["topic"], st.get("partitions"), st.get("type", "preferred"))
        return f"{st.get('type', 'preferred')} election: {res}"

    # -- report -----------------------------------------------------------------------------
    def report(self) -> dict:
        c = self.cluster
        prods = {}
        for name, p in self.producers.items():
            prods[name] = {
                "acks": p.config["acks"],
                "acked": [r.record_id for r in p.results.values() if r.status == "acked"],
                "failed": [{"id": r.record_id, "error": r.error}
                           for r in p.results.values() if r.status == "failed"],
                "pending": [r.record_id for r in p.results.values() if r.status == "pending"],
            }
        consumed = {name: [[r.topic, r.partition, r.offset, r.record_id] for r in x.consumed]
                    for name, x in self.consumers.items()}
        lost = lost_acked(c, self.producers.values())
        from kafkasim.observe.checks import classify_losses

        allowed = classify_losses(c, lost, self.check)
        violations = [] if self.check is None else [
            {"name": v.invariant, "time_ms": v.time_ms,
             "details": {"message": v.message, "topic": v.topic, "partition": v.partition,
                         "brokers": list(v.brokers), "offsets": list(v.offsets),
                         "record_ids": list(v.record_ids), "event": v.event, "seed": v.seed}}
            for v in self.check.violations]
        latest = c.metrics.latest()
        metrics: dict[str, dict[str, float]] = {}
        for (broker, mbean), v in latest.items():
            metrics.setdefault(mbean, {})[str(broker)] = v
        extra = {} if c.kraft is None else {"quorum": quorum_report(c)}
        return {
            "format_version": REPORT_FORMAT_VERSION,
            "scenario": self.scenario.name,
            "source": self.scenario.source,
            "seed": c.engine.seed,
            "kafka_version": c.kafka_version,
            "metadata_mode": c.inspect.metadata_mode(),
            **extra,
            "end_time_ms": c.now,
            "partitions": partition_report(c),
            "records": {str(rid): c.records.value(rid) for rid in range(1, len(c.records) + 1)},
            "producers": prods,
            "consumed": consumed,
            "lost_acked": lost,
            "allowed_losses": [{"record_id": rid, "reason": allowed[rid]}
                               for rid in lost if rid in allowed],
            "violations": violations,
            "expectations": self.expectations,
            "outputs": self.outputs,
            "steps": [{"step": s.index + 1, "do": s.action, "time_ms": s.time_ms,
                       "detail": s.detail} for s in self.steps],
            "metrics": {k: metrics[k] for k in sorted(metrics)},
            "describe": c.describe(),
            "events": len(c.trace),
            "trace_digest": c.trace.digest(),
        }

    @property
    def passed(self) -> bool:
        return all(e["ok"] for e in self.expectations)


class Conditions:
    """The condition tables of ``await`` and ``expect`` steps: each clause (``hw``, ``isr``,
    ``acked``, ...) evaluated against a run's cluster and clients as (holds, actual value)."""

    def __init__(self, run: ScenarioRun) -> None:
        self.cluster = run.cluster
        self.producers = run.producers   # the run's dicts, filled as it creates its clients
        self.consumers = run.consumers

    def holds(self, cond: dict) -> tuple[bool, Any]:
        """Evaluate every clause of a condition table; returns (all hold, actual values)."""
        ok = True
        actual: dict[str, Any] = {}
        for key, spec in cond.items():
            clause = _CLAUSES.get(key)
            if clause is None:
                continue   # validate() rejects unknown clauses before the run
            held, actual[key] = clause(self, key, spec)
            ok &= held
        return bool(ok), actual

    def _clause_offset(self, key: str, spec: dict) -> tuple[bool, Any]:
        """``hw`` / ``leo`` of a replica (the leader's by default)."""
        c = self.cluster
        topic, part = spec["topic"], spec.get("partition", 0)
        broker = spec.get("broker", c.leader(topic, part))
        log = c.log(broker, topic, part) if broker >= 0 else None
        v = (log.high_watermark if key == "hw" else log.log_end_offset) if log else -1
        return _compare(v, spec), v

    def _clause_isr(self, key: str, spec: dict) -> tuple[bool, Any]:
        isr = self.cluster.isr(spec["topic"], spec.get("partition", 0))
        return _members(isr, spec), isr

    def _clause_leader(self, key: str, spec: dict) -> tuple[bool, Any]:
        leader = self.cluster.leader(spec["topic"], spec.get("partition", 0))
        ok = True
        if "is" in spec:
            ok &= leader == spec["is"]
        if "none" in spec:   # none = false: the partition has a leader
            ok &= (leader < 0) == bool(spec["none"])
        return ok, leader

    def _clause_results(self, key: str, spec: dict) -> tuple[bool, Any]:
        """``acked`` / ``failed``: produce results with that status (and error)."""
        prods = [self.producers[spec["producer"]]] if "producer" in spec \
            else list(self.producers.values())
        rs = [r for p in prods for r in p.results.values()
              if r.status == key and ("error" not in spec or r.error == spec["error"])]
        return _compare(len(rs), spec), len(rs)

    def _clause_consumed(self, key: str, spec: dict) -> tuple[bool, Any]:
        conss = [self.consumers[spec["consumer"]]] if "consumer" in spec \
            else list(self.consumers.values())
        n = sum(len(x.consumed) for x in conss)
        return _compare(n, spec), n

    def _clause_time(self, key: str, spec) -> tuple[bool, Any]:
        now = self.cluster.now
        return _compare(now, spec if isinstance(spec, dict) else {"at_least": spec}), now

    def _clause_isr_changes(self, key: str, spec: dict) -> tuple[bool, Any]:
        """``isr_shrinks`` / ``isr_expands``: the IsrShrinksPerSec / IsrExpandsPerSec counts."""
        meter = "IsrShrinksPerSec" if key == "isr_shrinks" else "IsrExpandsPerSec"
        n = sum(b.meters[meter] for b in self.cluster.brokers.values()
                if "broker" not in spec or b.id == spec["broker"])
        return _compare(n, spec), n

    def _clause_controller(self, key: str, spec: dict) -> tuple[bool, Any]:
        cid = self.cluster.controller_id()
        ok = True
        if "is" in spec:
            ok &= cid == spec["is"]
        if "not" in spec:
            ok &= cid != spec["not"]
        if "none" in spec:   # none = false: some controller is active
            ok &= (cid < 0) == bool(spec["none"])
        return ok, cid

    def _clause_broker(self, key: str, spec: dict) -> tuple[bool, Any]:
        """A broker's (or, in KRaft mode, a controller node's) process state."""
        b = _controller_node(self.cluster, spec["id"]) or self.cluster.brokers[spec["id"]]
        return b.state == spec["state"], b.state

    def _clause_elr(self, key: str, spec: dict) -> tuple[bool, Any]:
        """``elr`` / ``last_known_elr``: the partition's eligible leader replicas / last known
        ELR in the committed metadata image (PartitionRegistration, KIP-966)."""
        reg = self.cluster.kraft.image.partitions[(spec["topic"], spec.get("partition", 0))]
        members = list(reg.elr if key == "elr" else reg.last_known_elr)
        return _members(members, spec), members

    def _clause_fenced(self, key: str, spec: dict) -> tuple[bool, Any]:
        """``fenced``: ``{ broker = 1, is = true }`` for one broker, or ``equals`` /
        ``contains`` / ``excludes`` / ``size`` over the fenced brokers, as the committed
        metadata image registers them (BrokerRegistration.fenced; an unregistered broker counts
        as fenced: no leader may be placed on it)."""
        img = self.cluster.kraft.image
        fenced = sorted(b for b in self.cluster.brokers
                        if b not in img.brokers or img.brokers[b].fenced)
        if "broker" in spec:
            is_fenced = spec["broker"] in fenced
            return is_fenced == spec.get("is", True), is_fenced
        return _members(fenced, spec), fenced

    def _clause_metadata_leader_epoch(self, key: str, spec: dict) -> tuple[bool, Any]:
        """The epoch of the __cluster_metadata quorum: the highest epoch a running voter has
        seen (KafkaRaftClient quorum state); it grows by one per election."""
        nodes = [n for n in self.cluster.kraft.nodes.values() if n.state == "running"]
        e = max((n.raft.epoch for n in nodes), default=-1)
        return _compare(e, spec), e

    def _clause_voters(self, key: str, spec: dict) -> tuple[bool, Any]:
        """The voter set in force (KIP-853: the last VotersRecord of the Raft leader's log,
        committed or not; controller.quorum.voters on a static quorum)."""
        voters = list(self.cluster.kraft.voters)
        return _members(voters, spec), voters

    def _clause_lost_acked(self, key: str, spec: dict) -> tuple[bool, Any]:
        n = len(lost_acked(self.cluster, self.producers.values()))
        return _compare(n, spec), n

    def _clause_leader_epoch(self, key: str, spec: dict) -> tuple[bool, Any]:
        st = self.cluster.inspect.partition_state(spec["topic"], spec.get("partition", 0))
        e = st["leader_epoch"]
        return _compare(e, spec), e

    def _clause_unclean_elections(self, key: str, spec: dict) -> tuple[bool, Any]:
        """UncleanLeaderElectionsPerSec. ZooKeeper mode: the controller broker's meter. KRaft:
        the unclean elections the active controller made (QuorumControllerMetrics counts those
        ControllerStats meters; here: its LeaderElection trace rows marked unclean, i.e. whose
        record set LeaderRecoveryState RECOVERING, KIP-704)."""
        c = self.cluster
        if c.kraft is not None:
            n = sum(1 for row in c.trace.rows if row[1] == "controller"
                    and isinstance(row[5], ev.LeaderElection) and row[5].unclean)
        else:
            n = sum(b.meters["UncleanLeaderElectionsPerSec"] for b in c.brokers.values())
        return _compare(n, spec), n

    def _clause_log(self, key: str, spec: dict) -> tuple[bool, Any]:
        vals = [v for _o, _e, v in self.cluster.log_records(spec["broker"], spec["topic"],
                                                            spec.get("partition", 0))]
        ok = True
        if "equals" in spec:
            ok &= vals == spec["equals"]
        if "contains" in spec:
            ok &= all(v in vals for v in _as_list(spec["contains"]))
        if "excludes" in spec:
            ok &= all(v not in vals for v in _as_list(spec["excludes"]))
        return ok, vals

    def _clause_under_replicated(self, key: str, spec: dict) -> tuple[bool, Any]:
        n = self.cluster.describe(under_replicated_partitions=True).count("\n")
        return _compare(n, spec), n


# condition clause -> the Conditions method evaluating it (as (holds, actual value))
_CLAUSES = {
    "hw": Conditions._clause_offset,
    "leo": Conditions._clause_offset,
    "isr": Conditions._clause_isr,
    "leader": Conditions._clause_leader,
    "acked": Conditions._clause_results,
    "failed": Conditions._clause_results,
    "consumed": Conditions._clause_consumed,
    "time_ms": Conditions._clause_time,
    "isr_shrinks": Conditions._clause_isr_changes,
    "isr_expands": Conditions._clause_isr_changes,
    "controller": Conditions._clause_controller,
    "broker": Conditions._clause_broker,
    "lost_acked": Conditions._clause_lost_acked,
    "leader_epoch": Conditions._clause_leader_epoch,
    "unclean_elections": Conditions._clause_unclean_elections,
    "log": Conditions._clause_log,
    "under_replicated": Conditions._clause_under_replicated,
    "elr": Conditions._clause_elr,
    "last_known_elr": Conditions._clause_elr,
    "fenced": Conditions._clause_fenced,
    "metadata_leader_epoch": Conditions._clause_metadata_leader_epoch,
    "voters": Conditions._clause_voters,
}
assert set(_CLAUSES) == CONDITIONS


def auto_producer_name(st: dict) -> str:
    """The producer a ``produce`` step naming none uses: one per ``acks`` value."""
    return f"producer-acks-{st.get('acks', 'default')}"


def auto_consumer_name(st: dict) -> str:
    """The consumer a ``consume`` / ``commit`` step naming none uses: one per group."""
    return f"consumer-{st.get('group', 'scenario-group')}"


def _controller_node(c: Cluster, node_id):
    """The KRaft controller node with this id (steps naming a ``broker`` accept controller
    node ids in KRaft mode), else None."""
    kraft = c.kraft
    return kraft.nodes.get(node_id) if kraft is not None else None


def partition_report(c: Cluster) -> list[dict]:
    out = []
    for topic in c.topics.names():
        for p in c.assignment(topic):
            st = c.inspect.partition_state(topic, p)
            reps = []
            for b in st["replicas"]:
                log = c.brokers[b].logs.get((topic, p))
                reps.append({
                    "broker": b,
                    "state": c.brokers[b].state,
                    "leo": log.log_end_offset if log else 0,
                    "hw": log.high_watermark if log else 0,
                    "log_start": log.log_start_offset if log else 0,
                    "log": [[int(rid), int(ep)] for rid, ep in zip(log.ids, log.epochs,
                                                                  strict=True)] if log else [],
                })
            row = {"topic": topic, "partition": p, "leader": st["leader"],
                   "leader_epoch": st["leader_epoch"], "isr": st["isr"], "replicas": reps}
            if c.kraft is not None:   # KIP-966 state of the committed PartitionRegistration
                reg = c.kraft.image.partitions[(topic, p)]
                row["elr"] = list(reg.elr)
                row["last_known_elr"] = list(reg.last_known_elr)
            out.append(row)
    return out


def quorum_report(c: Cluster) -> dict:
    """KRaft: the metadata quorum (voters, running nodes, active controller, highest Raft
    epoch) and the brokers the committed image has fenced."""
    nodes = c.kraft.nodes
    img = c.kraft.image
    return {
        "voters": list(c.kraft.voters),
        "running": [i for i, n in nodes.items() if n.state == "running"],
        "active_controller": c.controller_id(),
        "epoch": max((n.raft.epoch for n in nodes.values() if n.state == "running"),
                     default=-1),
        "committed_offset": img.offset,
        "fenced_brokers": sorted(b for b in c.brokers
                                 if b not in img.brokers or img.brokers[b].fenced),
    }


def lost_acked(c: Cluster, producers) -> list[int]:
    """Acked record ids (with a known offset) absent at their offset from the replica that
    holds the partition's committed data: the leader, or while offline the last ISR member
    (its log is on disk and it leads again when it returns)."""
    lost = []
    holders = {}   # (topic, partition) -> the log holding its committed data, or None
    for p in producers:
        for r in p.results.values():
            if r.status != "acked" or r.offset < 0:
                continue
            tp = (r.topic, r.partition)
            if tp not in holders:
                holders[tp] = _committed_log(c, tp)
            log = holders[tp]
            if log is None or not (log.log_start_offset <= r.offset < log.log_end_offset) or \
                    log.record_id_at(r.offset) != r.record_id:
                lost.append(r.record_id)
    return sorted(lost)


def _committed_log(c: Cluster, tp: tuple):
    """The log of the replica holding ``tp``'s committed data (``lost_acked``), or None."""
    st = c.inspect.partition_state(*tp)
    holder = st["leader"] if st["leader"] >= 0 else (st["isr"][-1] if st["isr"] else -1)
    return c.brokers[holder].logs.get(tp) if holder >= 0 else None


def _settled(c: Cluster) -> bool:
    """Replication is at rest: every ISR member of every led partition holds the leader's log
    up to the HW, no client request is pending, and (KRaft) the control plane is at rest too
    (``KRaftControlPlane.unsettled_reasons``: an active controller with nothing uncommitted,
    every running broker unfenced, no leaderless partition with a live ISR or ELR member)."""
    # With incremental fetch sessions (KIP-227, 1.1+) a follower's HW may stay behind on an idle
    # partition: after truncating on a diverging epoch it does not apply that answer's HW
    # (AbstractFetcherThread, KAFKA-14704: "updated by the next fetch"), yet the leader's
    # session cached it as sent (CachedPartition.maybeUpdateResponseData) and sends it again
    # only when it changes. Such a follower (its fetch state's ``hw_missed``) counts as settled.
    sessions = c.rules.fetch.fetch_sessions
    for topic in c.topics.names():
        for p in c.assignment(topic):
            leader = c.leader(topic, p)
            if leader < 0:
                continue
            llog = c.brokers[leader].logs[(topic, p)]
            for b in c.isr(topic, p):
                log = c.brokers[b].logs.get((topic, p))
                if log is None or log.log_end_offset != llog.log_end_offset or \
                        (log.high_watermark != llog.log_end_offset and
                         not (sessions and b != leader and _hw_missed(c, b, (topic, p)))):
                    return False
    if not all(p.pending() == 0 for p in c.clients.values() if hasattr(p, "pending")
               and callable(p.pending)):
        return False
    return c.kraft is None or not c.kraft.unsettled_reasons()


def _hw_missed(c: Cluster, broker: int, tp) -> bool:
    """Did broker's fetcher skip the HW of an answer for ``tp`` that its leader will not send
    again (see ``_settled``)?"""
    for thread in c.brokers[broker].fetchers.values():
        st = thread.partitions.get(tp)
        if st is not None:
            return st.hw_missed
    return False


def _members(members: list, spec: dict) -> bool:
    """A set-valued clause: ``equals`` (any order), ``contains``, ``excludes``, ``size``."""
    ok = True
    if "equals" in spec:
        ok &= sorted(members) == sorted(spec["equals"])
    if "contains" in spec:
        ok &= all(b in members for b in _as_list(spec["contains"]))
    if "excludes" in spec:
        ok &= all(b not in members for b in _as_list(spec["excludes"]))
    if "size" in spec:
        ok &= len(members) == spec["size"]
    return ok


def _as_list(v) -> list:
    return list(v) if isinstance(v, (list, tuple)) else [v]


def _compare(value: int, spec: dict) -> bool:
    ok = True
    if "at_least" in spec:
        ok &= value >= spec["at_least"]
    if "at_most" in spec:
        ok &= value <= spec["at_most"]
    if "equals" in spec:
        ok &= value == spec["equals"]
    return ok
