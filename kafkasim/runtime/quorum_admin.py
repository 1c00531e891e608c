"""``kafka-metadata-quorum add-controller`` / ``remove-controller`` (KIP-853, 3.9+).

Against the simulated quorum: the tool's own checks (tools MetadataQuorumCommand
.handleAddController / handleRemoveController), then the AddRaftVoter / RemoveRaftVoter checks
the Raft leader makes (raft AddVoterHandler / RemoveVoterHandler.handle*Request), in Kafka's
order.

kafkasim's quorum is static: its voters come from ``controller.quorum.voters`` (the ids given to
``Cluster``), which is ``kraft.version`` 0 -- a quorum formatted without ``--standalone`` or
``--initial-controllers``. On such a quorum Kafka refuses every voter change with
UNSUPPORTED_VERSION, and so does this module. A dynamic quorum (``kraft.version`` 1:
VotersRecord in the log, observers catching up before they can join) is not modelled, nor is
the upgrade of a static quorum to it with ``kafka-features`` (4.1, KAFKA-16538); see
docs/kraft.md. A refused call changes nothing.

Sources: apache/kafka trunk at 1eb7644 (2024-10-25, after the 3.9 branch):
tools/.../MetadataQuorumCommand.java, raft/.../internals/AddVoterHandler.java,
RemoveVoterHandler.java, server-common/.../KRaftVersion.java, clients/.../Uuid.java.
"""

from __future__ import annotations

import base64
import binascii

from kafkasim.control.kraft.raft import UNKNOWN
from kafkasim.settings.exceptions import ClusterError

#: KRaftVersion.FEATURE_NAME; the simulated quorum is always at level 0 (static voters)
KRAFT_VERSION_FEATURE = "kraft.version"
STATIC_KRAFT_VERSION = 0

#: Errors -> the exception the Admin client completes its future with
_EXCEPTIONS = {
    "REQUEST_TIMED_OUT": "org.apache.kafka.common.errors.TimeoutException",
    "UNSUPPORTED_VERSION": "org.apache.kafka.common.errors.UnsupportedVersionException",
}


class QuorumReconfigurationError(ClusterError):
    """A refused add-controller / remove-controller: ``error`` is Kafka's error name (for the
    leader's answers) or None for the tool's own argument checks (TerseException)."""

    def __init__(self, message: str, error: str | None = None) -> None:
        super().__init__(message)
        self.error = error


def add_controller(plane, config: dict, *, dry_run: bool = False) -> str:
    """``kafka-metadata-quorum --bootstrap-controller … --command-config <controller.properties>
    add-controller [--dry-run]``: ``config`` is the new controller's configuration (node.id,
    process.roles, controller.listener.names, listeners / advertised.listeners). Returns the
    line the tool prints; raises QuorumReconfigurationError with the tool's or the leader's
    message otherwise."""
    _require_dynamic_quorum_tool(plane, "add-controller")
    if not isinstance(config, dict):
        raise QuorumReconfigurationError(
            "You must supply the configuration file of the controller you are adding when "
            f"using add-controller (a dict of its properties, got {type(config).__name__})")
    from kafkasim.runtime.describe import directory_id

    controller_id = _controller_id(config)
    directory = directory_id(controller_id, plane.cluster.engine.seed)
    endpoints = _controller_endpoints(config)
    if not dry_run:
        _leader_checks(plane, "adding")
    listing = ", ".join(f"{name}://{_host(host)}:{port}" for name, host, port in endpoints)
    return (f"{'DRY RUN of adding' if dry_run else 'Added'} controller {controller_id} with "
            f"directory id {directory} and endpoints: {listing}")


def remove_controller(plane, controller_id: int, controller_directory_id: str, *,
                      dry_run: bool = False) -> str:
    """``kafka-metadata-quorum … remove-controller --controller-id N --controller-directory-id D
    [--dry-run]``. Returns the line the tool prints (Kafka's format string puts two spaces before
    "KRaft"); raises QuorumReconfigurationError otherwise."""
    _require_dynamic_quorum_tool(plane, "remove-controller")
    if isinstance(controller_id, bool) or not isinstance(controller_id, int):
        raise QuorumReconfigurationError(
            f"argument --controller-id/-i: could not convert {controller_id!r} (an integer node "
            f"id, voters {list(plane.voters)})")
    if controller_id < 0:
        raise QuorumReconfigurationError(f"Invalid negative --controller-id: {controller_id}")
    directory = _parse_uuid(controller_directory_id)
    if not dry_run:
        _leader_checks(plane, "removing")
    return (f"{'DRY RUN of removing ' if dry_run else 'Removed '} KRaft controller "
            f"{controller_id} with directory id {directory}")


def _require_dynamic_quorum_tool(plane, command: str) -> None:
    rules = plane.cluster.rules
    if not rules.raft.kraft_dynamic_quorum:
        raise QuorumReconfigurationError(
            f"kafka-metadata-quorum {command} does not exist in Kafka {rules.version}: it came "
            "with dynamic quorums in 3.9 (KIP-853); before, the tool only has describe")


def _controller_id(config: dict) -> int:
    """MetadataQuorumCommand.getControllerId."""
    if "node.id" not in config:
        raise QuorumReconfigurationError(
            "node.id not found in configuration file. Is this a valid controller configuration "
            "file?")
    try:
        node_id = int(str(config["node.id"]).strip())
    except ValueError:
        raise QuorumReconfigurationError(
            f"node.id must be an integer, got {config['node.id']!r} (Integer.parseInt)") from None
    if node_id < 0:
        raise QuorumReconfigurationError(
            "node.id was negative in configuration file. Is this a valid controller "
            "configuration file?")
    if "controller" not in str(config.get("process.roles", "")):
        raise QuorumReconfigurationError(
            "process.roles did not contain 'controller' in configuration file. Is this a valid "
            "controller configuration file?")
    return node_id


def _listener_map(text: str) -> dict[str, tuple[str, int]]:
    out: dict[str, tuple[str, int]] = {}
    for item in (s.strip() for s in str(text).split(",")):
        if not item:
            continue
        name, sep, rest = item.partition("://")
        host, colon, port = rest.rpartition(":")
        if not sep or not colon or not port.isdigit():
            raise QuorumReconfigurationError(
                f"Unable to parse {item} to a broker endpoint (expected NAME://host:port, "
                "e.g. CONTROLLER://controller3003:9093)")
        out[name.upper()] = (host.strip("[]"), int(port))
    return out


def _controller_endpoints(config: dict) -> list[tuple[str, str, int]]:
    """MetadataQuorumCommand.getControllerAdvertisedListeners: each controller listener name's
    endpoint, advertised.listeners over listeners; an empty host is localhost."""
    listeners = _listener_map(config.get("listeners", ""))
    listeners.update(_listener_map(config.get("advertised.listeners", "")))
    if "controller.listener.names" not in config:
        raise QuorumReconfigurationError(
            "controller.listener.names was not found. Is this a valid controller configuration "
            "file?")
    out = []
    for name in str(config["controller.listener.names"]).split(","):
        name = name.strip().upper()
        if name not in listeners:
            raise QuorumReconfigurationError(
                f"Cannot find information about controller listener name: {name}")
        host, port = listeners[name]
        out.append((name, host or "localhost", port))
    return out


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _parse_uuid(text) -> str:
    """Uuid.fromString (22 characters of URL-safe base64 for 16 bytes), with its messages."""
    prefix = "Failed to parse --controller-directory-id: "
    if not isinstance(text, str):
        raise QuorumReconfigurationError(f"{prefix}expected a base64 Uuid string, got {text!r}")
    if len(text) > 24:
        raise QuorumReconfigurationError(
            f"{prefix}Input string with prefix `{text[:24]}` is too long to be decoded as a "
            "base64 UUID")
    bad = next((c for c in text if not (c.isascii() and (c.isalnum() or c in "-_="))), None)
    if bad is not None:
        raise QuorumReconfigurationError(f"{prefix}Illegal base64 character {ord(bad):x}")
    try:
        raw = base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))
    except (binascii.Error, ValueError):
        raise QuorumReconfigurationError(
            f"{prefix}Input string `{text}` is not valid base64") from None
    if len(raw) != 16:
        raise QuorumReconfigurationError(
            f"{prefix}Input string `{text}` decoded as {len(raw)} bytes, which is not equal to "
            "the expected 16 bytes of a base64-encoded UUID")
    return text


def _leader_checks(plane, verb: str) -> None:
    """The first checks of AddVoterHandler / RemoveVoterHandler.handle*Request, in order: a
    leader that has not established its high watermark in this epoch answers
    REQUEST_TIMED_OUT; kraft.version 0 answers UNSUPPORTED_VERSION. (The pending-operation
    check never fires: no voter change is ever in flight here.)"""
    node = plane.raft_leader()
    if node is None:
        up = [i for i, n in plane.nodes.items() if n.state == "running"]
        raise QuorumReconfigurationError(
            f"no KRaft leader to send the request to (running controllers {up} of voters "
            f"{list(plane.voters)}): the Admin call times out", "REQUEST_TIMED_OUT")
    if node.raft.high_watermark == UNKNOWN:
        _refuse("REQUEST_TIMED_OUT", "Request timed out waiting for leader to establish HWM and "
                "fence previous voter changes")
    _refuse("UNSUPPORTED_VERSION",
            f"Cluster doesn't support {verb} voter because the {KRAFT_VERSION_FEATURE} feature "
            f"is {STATIC_KRAFT_VERSION}")


def _refuse(error: str, message: str) -> None:
    raise QuorumReconfigurationError(f"{_EXCEPTIONS[error]}: {message}", error)
