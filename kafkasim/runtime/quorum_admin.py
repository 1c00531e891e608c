"""``kafka-metadata-quorum add-controller`` / ``remove-controller`` (KIP-853, 3.9+).

Against the simulated quorum: the tool's own checks (tools MetadataQuorumCommand
.handleAddController / handleRemoveController), then the AddRaftVoter / RemoveRaftVoter checks
the Raft leader makes (raft AddVoterHandler / RemoveVoterHandler.handle*Request), in Kafka's
order.

A static quorum (``controller.quorum.voters``, ``kraft.version`` 0) refuses every voter change
with UNSUPPORTED_VERSION. A dynamic one (``controller.quorum.bootstrap.servers``, formatted with
``--initial-controllers``: kraft.version 1) takes the request to its Raft leader
(``KafkaRaftClient.add_voter`` / ``remove_voter``, kafkasim.control.kraft.raft_reconfig) and
runs simulated time until the leader answers, as the tool waits for the Admin call; success is
the tool's "Added controller ..." / "Removed  KRaft controller ..." line, anything else a
QuorumReconfigurationError with the Admin client's exception and the leader's message. A
refused call changes nothing; one that timed out after the leader appended its VotersRecord
leaves it in the log, as in Kafka.

Sources: apache/kafka trunk at 1eb7644 (2024-10-25, after the 3.9 branch):
tools/.../MetadataQuorumCommand.java, raft/.../internals/AddVoterHandler.java,
RemoveVoterHandler.java, server-common/.../KRaftVersion.java, clients/.../Uuid.java.
"""

from __future__ import annotations

import base64
import binascii

from kafkasim.settings.exceptions import ClusterError

#: KRaftVersion.FEATURE_NAME
KRAFT_VERSION_FEATURE = "kraft.version"
#: the features the active controller's FeatureControlManager finalizes here: metadata.version
#: and every production feature but kraft.version (Feature.PRODUCTION_FEATURES @4.3.0; the
#: ones a release lacks are refused by its controller, "does not support this feature")
CONTROLLER_FEATURES = frozenset({"metadata.version", "eligible.leader.replicas.version",
                                 "group.version", "transaction.version", "share.version",
                                 "streams.version"})

#: Errors -> the exception the Admin client completes its future with
_EXCEPTIONS = {
    "REQUEST_TIMED_OUT": "org.apache.kafka.common.errors.TimeoutException",
    "UNSUPPORTED_VERSION": "org.apache.kafka.common.errors.UnsupportedVersionException",
    "INVALID_REQUEST": "org.apache.kafka.common.errors.InvalidRequestException",
    "DUPLICATE_VOTER": "org.apache.kafka.common.errors.DuplicateVoterException",
    "VOTER_NOT_FOUND": "org.apache.kafka.common.errors.VoterNotFoundException",
    "NOT_LEADER_OR_FOLLOWER": "org.apache.kafka.common.errors.NotLeaderOrFollowerException",
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
        from kafkasim.control.kraft.voter_set import ReplicaKey

        node = _leader_checks(plane)
        if controller_id not in plane.nodes and plane.dynamic:
            raise QuorumReconfigurationError(
                f"no controller process {controller_id} runs: start it first with "
                f"c.kraft.start_controller({controller_id}) (formatted with "
                "--no-initial-controllers, it fetches as an observer), then add it; the leader's "
                "ApiVersions to it would fail (REQUEST_TIMED_OUT)")
        _wait(plane, node, node.raft.reconfig.add_voter(node, ReplicaKey(controller_id, directory),
                                               endpoints))
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
        from kafkasim.control.kraft.voter_set import ZERO_UUID, ReplicaKey

        node = _leader_checks(plane)
        key = ReplicaKey(controller_id, None if directory == ZERO_UUID else directory)
        _wait(plane, node, node.raft.reconfig.remove_voter(node, key))
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


def update_features(plane, features: dict | None, *, release_version: str | None = None,
                    validate_only: bool = False) -> dict:
    """See KRaftControlPlane.update_features. ``release_version`` upgrades every feature to
    that release's level -- kraft.version included (1 from 3.9): the trap of KAFKA-21426, a
    static quorum that a routine ``--release-version`` upgrade turns dynamic, irreversibly,
    while its nodes still have controller.quorum.voters. Returns {feature: level}; refused
    calls change nothing."""
    from kafkasim.settings.versions import version_at_least

    cluster = plane.cluster
    if (features is None) == (release_version is None):
        raise ClusterError("kafka-features upgrade: give exactly one of --feature (features="
                           "{'kraft.version': 1}) or --release-version (release_version='4.1')")
    if release_version is not None:
        if not isinstance(release_version, str) or not version_at_least(
                cluster.kafka_version, release_version):
            raise ClusterError(f"kafka-features upgrade --release-version {release_version!r}: "
                               f"not a release this cluster's software ({cluster.kafka_version}) "
                               "knows")
        features = {KRAFT_VERSION_FEATURE: 1 if version_at_least(release_version, "3.9") else 0}
    if isinstance(features, dict) and features and not set(features) - CONTROLLER_FEATURES:
        return _upgrade_controller_features(plane, features, validate_only)
    if not isinstance(features, dict) or set(features) - {KRAFT_VERSION_FEATURE}:
        other = sorted(set(features) - {KRAFT_VERSION_FEATURE}) if isinstance(features, dict) \
            else features
        raise ClusterError(f"kafka-features upgrade: only {KRAFT_VERSION_FEATURE} (alone) or "
                           f"{', '.join(sorted(CONTROLLER_FEATURES))} are modelled (got "
                           f"{other!r}){_did_you_mean(other)}")
    level = features[KRAFT_VERSION_FEATURE]
    if isinstance(level, bool) or level not in (0, 1):
        raise ClusterError(f"{KRAFT_VERSION_FEATURE} must be 0 or 1 (KRaftVersion), got "
                           f"{level!r}")
    if not version_at_least(cluster.kafka_version, "4.1"):
        if release_version is not None:
            return {}        # before 4.1 the kraft.version level cannot change
        raise ClusterError(f"{KRAFT_VERSION_FEATURE} cannot be upgraded in Kafka "
                           f"{cluster.kafka_version}: upgrading it came in 4.1 (KAFKA-16538); "
                           "before, only a quorum formatted dynamic is dynamic")
    return _upgrade_kraft_version(plane, level, validate_only)


def downgrade_features(plane, features: dict, *, unsafe: bool = False,
                       validate_only: bool = False) -> dict:
    """See KRaftControlPlane.downgrade_features: ``kafka-features downgrade [--unsafe]
    --feature name=level`` for metadata.version and the other features of CONTROLLER_FEATURES
    (UpdateFeatures with upgrade type SAFE_DOWNGRADE, or UNSAFE_DOWNGRADE)."""
    from kafkasim.control.kraft.feature_control import UpgradeType

    if not isinstance(features, dict) or not features or set(features) - CONTROLLER_FEATURES:
        raise ClusterError(f"kafka-features downgrade: only "
                           f"{', '.join(sorted(CONTROLLER_FEATURES))} are modelled (got "
                           f"{features!r}){_did_you_mean(features)}")
    kind = UpgradeType.UNSAFE_DOWNGRADE if unsafe else UpgradeType.SAFE_DOWNGRADE
    return _upgrade_controller_features(plane, features, validate_only, kind)


def _did_you_mean(names) -> str:
    """"; did you mean X?" for the first unknown feature name close to a modelled one."""
    import difflib

    known = sorted(CONTROLLER_FEATURES | {KRAFT_VERSION_FEATURE})
    for name in names if isinstance(names, (dict, list, tuple)) else ():
        if isinstance(name, str) and name not in known:
            close = difflib.get_close_matches(name, known, n=1)
            if close:
                return f"; did you mean {close[0]!r}?"
    return ""


def _upgrade_controller_features(plane, features: dict, validate_only: bool,
                                 upgrade_type=None) -> dict:
    """``kafka-features upgrade --feature metadata.version=N`` / ``eligible.leader.replicas
    .version=1`` (UpdateFeatures, upgrade type UPGRADE): the active controller's
    QuorumController.updateFeatures (FeatureControlManager's checks; enabling ELR also writes
    the cluster-level min.insync.replicas, KAFKA-16540), answered once its records commit.
    Refused: QuorumReconfigurationError with Kafka's InvalidUpdateVersionException text."""
    from kafkasim.control.kraft.feature_control import UpgradeType

    node = plane._require_active("update features")
    for name, level in features.items():
        if isinstance(level, bool) or not isinstance(level, int):
            raise ClusterError(f"{name} must be a feature level (an int), got {level!r}")
    kind = upgrade_type or UpgradeType.UPGRADE
    future = node.controller.update_features(
        node, dict(features), {name: kind for name in features}, validate_only)
    if not future.done():
        plane.cluster.run_until(lambda c: future.done(), timeout_ms=30000)
    if not future.done():
        _refuse("REQUEST_TIMED_OUT", _DEFAULT_MESSAGES["REQUEST_TIMED_OUT"])
    try:
        answer = future.get()
    except Exception as exc:     # NOT_CONTROLLER: the controller lost its leadership
        raise QuorumReconfigurationError(str(exc), getattr(exc, "error", None)) from exc
    # 4.x answers one error ("The update failed for all features since ..."); 3.9 one per
    # feature, which the Admin client raises as is
    prefix = "" if isinstance(answer, dict) else \
        "The update failed for all features since the following feature had an error: "
    for error in answer.values() if isinstance(answer, dict) else [answer]:
        if not error.is_success():
            raise QuorumReconfigurationError(
                "org.apache.kafka.common.errors.InvalidUpdateVersionException: "
                f"{prefix}{error.message}", error.error)
    return dict(features)


def _upgrade_kraft_version(plane, level: int, validate_only: bool) -> dict:
    from kafkasim.control.kraft.raft import LeaderState

    node = _leader_checks(plane)
    st = node.raft.state
    # what the voters' UpdateRaftVoter requests told this leader in its epoch
    # (LeaderState.volatileVoters, KAFKA-16538): a voter that has not sent one yet (3 x
    # controller.quorum.fetch.timeout.ms after it began following) still has its static
    # entry's range, which does not include kraft.version 1
    info = dict(st.volatile_voters or {}) if isinstance(st, LeaderState) else {}
    before = node.raft.log.end_offset
    failed = node.raft.reconfig.upgrade_kraft_version(node, level, info, validate_only)
    if failed is not None:
        raise QuorumReconfigurationError(
            f"org.apache.kafka.common.errors.InvalidUpdateVersionException: {failed[1]}",
            failed[0])
    end = node.raft.log.end_offset
    if end > before:     # the UpdateFeatures answer waits for the records to commit
        plane.cluster.run_until(lambda c: node.raft.high_watermark >= end,
                                timeout_ms=node.raft.request_timeout_ms)
    return {KRAFT_VERSION_FEATURE: level}


def _leader_checks(plane):
    """The Raft leader the Admin call reaches (REQUEST_TIMED_OUT with none)."""
    node = plane.raft_leader()
    if node is None:
        up = [i for i, n in plane.nodes.items() if n.state == "running"]
        raise QuorumReconfigurationError(
            f"no KRaft leader to send the request to (running controllers {up} of voters "
            f"{list(plane.voters)}): the Admin call times out", "REQUEST_TIMED_OUT")
    return node


def _wait(plane, node, op) -> None:
    """Run simulated time until the leader answers ``op`` (its pending-operation timer ends it
    with REQUEST_TIMED_OUT at the latest); raise on an error."""
    if not op.done:
        limit = node.raft.request_timeout_ms + node.raft.fetch_timeout_ms
        plane.cluster.run_until(lambda c: op.done, timeout_ms=limit)
    if not op.done:
        op.error = "REQUEST_TIMED_OUT"
    if op.error != "NONE":
        _refuse(op.error, op.message or _DEFAULT_MESSAGES.get(op.error, op.error))


#: Errors.message() for answers without a message of their own
_DEFAULT_MESSAGES = {
    "REQUEST_TIMED_OUT": "The request timed out.",
    "NOT_LEADER_OR_FOLLOWER": "For requests intended only for the leader, this error indicates "
                              "that the broker is not the current leader. For requests intended "
                              "for any replica, this error indicates that the broker is not a "
                              "replica of the topic partition.",
}


def _refuse(error: str, message: str) -> None:
    raise QuorumReconfigurationError(f"{_EXCEPTIONS[error]}: {message}", error)


def describe_features(plane, node_id: int | None = None) -> str:
    """See KRaftControlPlane.describe_features: Admin.describeFeatures sends ApiVersions to one
    broker (``node_id``, 4.2+; else the lowest running id, for the least loaded one) and prints
    its SupportedFeatures (BrokerFeatures.defaultSupportedFeatures: the same ranges as the
    controllers' QuorumFeatures) and FinalizedFeatures (KRaftMetadataCache.features: its
    metadata image's levels, as of the image's offset)."""
    from kafkasim.control.kraft.feature_control import QuorumFeatures
    from kafkasim.runtime.describe import describe_features as text

    cluster = plane.cluster
    tools = cluster.rules.tools
    if node_id is not None:
        if not tools.features_describe_node_id:
            raise ClusterError(f"kafka-features describe: --node-id is an option of 4.2+ "
                               f"(KAFKA-18786), not of {cluster.kafka_version}; leave node_id "
                               "out to ask an arbitrary broker")
        if isinstance(node_id, bool) or not isinstance(node_id, int) or node_id < 0:
            raise ClusterError(f"Invalid node id {node_id}: must be non-negative.")
    running = [b for _i, b in sorted(cluster.brokers.items())
               if b.is_running and getattr(b.metadata, "image", None) is not None]
    if node_id is not None:
        running = [b for b in running if b.id == node_id]
    if not running:
        which = "no broker is running" if node_id is None else \
            f"broker {node_id} is not a running broker (running: " \
            f"{sorted(b.id for b in cluster.brokers.values() if b.is_running)})"
        raise ClusterError(f"kafka-features describe: {which}; the Admin client would time out")
    features = running[0].metadata.features(1 if plane.dynamic else 0)
    supported = QuorumFeatures.default_supported_feature_map(False, cluster.kafka_version)
    return text(supported, features.finalized_features, features.finalized_features_epoch,
                bool(tools.features_describe_padded_columns))
