"""Text output exactly as Kafka's command-line tools print it.

``describe_topics`` follows ``kafka-topics.sh --describe`` (TopicCommand, fact sheet §11) for the
selected version: tab-separated ``Name: value`` fields, ``Leader: none`` when offline, the ``Elr``
columns since 3.8, no space after colons before 2.4. ``describe_group`` follows
``kafka-consumer-groups.sh --describe`` (ConsumerGroupCommand, §13). ``describe_features``
follows ``kafka-features describe`` (FeatureCommand.handleDescribe).
"""

from __future__ import annotations

import uuid

from kafkasim.settings.javautil import java_hashmap_iteration_order, java_string_hash


def topic_id(name: str, seed: int) -> str:
    """A stable TopicId (Kafka uses a random UUID; ours is derived from the name and seed)."""
    import base64
    import hashlib

    raw = hashlib.sha256(f"{seed}:{name}".encode()).digest()[:16]
    u = uuid.UUID(bytes=raw, version=4)
    return base64.urlsafe_b64encode(u.bytes).decode().rstrip("=")


def cluster_id(seed: int) -> str:
    """A stable ClusterId (``kafka-storage random-uuid`` gives a random Uuid, 22 characters of
    URL-safe base64; ours is derived from the seed like ``topic_id``)."""
    return topic_id("\x00cluster.id", seed)


def directory_id(node_id: int, seed: int) -> str:
    """A stable ``directory.id`` of a node's metadata log directory (meta.properties, KIP-858;
    Kafka draws a random Uuid when formatting)."""
    return topic_id(f"\x00directory.id:{node_id}", seed)


def admin_topic_order(names) -> list[str]:
    """The order kafka-topics --describe prints topics in since 2.4: TopicCommand asks for the
    sorted names; KafkaAdminClient.describeTopics keys its futures by them in a
    ``HashMap(n)``, DescribeTopicsResult copies that map (``new HashMap<>(map)``) and
    ``allTopicNames()`` fills a ``HashMap(n)`` from the copy, whose values TopicCommand prints
    (java.util.HashMap iteration order, kafkasim.settings.javautil)."""
    n = len(names)
    futures = java_hashmap_iteration_order(sorted(names), java_string_hash, n)
    copied = java_hashmap_iteration_order(futures, java_string_hash, int(n / 0.75 + 1.0))
    return java_hashmap_iteration_order(copied, java_string_hash, n)


def _ids(ids) -> str:
    return ",".join(str(i) for i in ids)


#: the partition report options of kafka-topics --describe: (describe_topics keyword, option)
REPORT_OPTIONS = (("under_replicated", "under-replicated-partitions"),
                  ("under_min_isr", "under-min-isr-partitions"),
                  ("at_min_isr", "at-min-isr-partitions"),
                  ("unavailable", "unavailable-partitions"))


def check_describe_options(rules, reports: dict[str, bool], topics_with_overrides: bool) -> None:
    """TopicCommandOptions.checkArgs for --describe: the min-ISR options exist since 2.3; no
    report option goes with --topics-with-overrides; before 3.7 (the Scala TopicCommand) each
    report option also refused the others. ClusterError with Kafka's message otherwise."""
    from kafkasim.settings.exceptions import ClusterError

    used = [opt for key, opt in REPORT_OPTIONS if reports.get(key)]
    for opt in ("under-min-isr-partitions", "at-min-isr-partitions"):
        if opt in used and not rules.tools.describe_min_isr_filters:
            raise ClusterError(f"{opt} is not a recognized option (kafka-topics has it since "
                               f"2.3; this cluster runs {rules.version})")
    others = ["topics-with-overrides"] if topics_with_overrides else []
    if not rules.tools.describe_report_options_combine:
        others = used[1:] + others
    if used and others:
        raise ClusterError(f'Option "[{used[0]}]" can\'t be used with option "[{others[0]}]"')


def partition_reported(p: dict, rules, reports: dict[str, bool]) -> bool:
    """DescribeOptions.shouldPrintTopicPartition once a report option is given: the partition
    matches any of them (PartitionDescription.isUnderReplicated, hasUnavailablePartitions,
    isUnderMinIsr, isAtMinIsrPartitions). 2.3's --zookeeper path compared the ISR with a min ISR
    of 0 (``describe_min_isr_filters_read_config``)."""
    leader, isr = p["leader"], len(p["isr"])
    rf = len(p["replicas"]) - reassigning_adding(p.get("reassignment"), rules)
    no_leader = leader < 0
    if rules.tools.describe_min_isr_filters_read_config:
        min_isr, under_min = p["min_isr"], no_leader or isr < p["min_isr"]
    else:
        min_isr, under_min = 0, False
    return bool(
        (reports.get("under_replicated") and isr < rf)
        or (reports.get("unavailable") and (no_leader or leader not in p["live_brokers"]))
        or (reports.get("under_min_isr") and under_min)
        or (reports.get("at_min_isr") and isr == min_isr))


def describe_topics(topics: list[dict], rules, *, under_replicated: bool = False,
                    unavailable: bool = False, under_min_isr: bool = False,
                    at_min_isr: bool = False, topics_with_overrides: bool = False) -> str:
    """Render ``kafka-topics --describe``. Each topic dict: name, id, configs (non-default k=v
    list), replication_factor, partitions: [dict(partition, leader, replicas, isr, min_isr,
    live_brokers, reassignment: (adding, removing) or None)]. A report option prints only the
    partitions it reports, without the topic lines."""
    reports = {"under_replicated": under_replicated, "unavailable": unavailable,
               "under_min_isr": under_min_isr, "at_min_isr": at_min_isr}
    check_describe_options(rules, reports, topics_with_overrides)
    sp = " " if rules.tools.describe_space_after_colon else ""
    filtered = any(reports.values())
    lines: list[str] = []
    for t in topics:
        if topics_with_overrides and not t["configs"]:
            continue
        if not filtered:
            fields = [f"Topic:{sp}{t['name']}"]
            if rules.tools.describe_topic_id and t.get("id"):
                fields.append(f"TopicId:{sp}{t['id']}")
            fields.append(f"PartitionCount:{sp}{len(t['partitions'])}")
            fields.append(f"ReplicationFactor:{sp}{t['replication_factor']}")
            fields.append(f"Configs:{sp}{','.join(t['configs'])}")
            lines.append("\t".join(fields))
        if topics_with_overrides:
            continue
        for p in sorted(t["partitions"], key=lambda p: p["partition"]):
            if filtered and not partition_reported(p, rules, reports):
                continue
            lines.append(_partition_line(t["name"], p, rules))
    return "\n".join(lines) + ("\n" if lines else "")


def _partition_line(topic: str, p: dict, rules) -> str:
    """PartitionDescription.printDescription: one tab-separated partition line."""
    leader = p["leader"]
    if leader < 0:
        leader_s = "-1" if rules.tools.describe_leader_minus_one else "none"
    else:
        leader_s = str(leader)
    reassigning = p.get("reassignment")
    # partition lines always had a space after the colons; only the summary line
    # lacked it before 2.4
    fields = ["", f"Topic: {topic}", f"Partition: {p['partition']}",
              f"Leader: {leader_s}", f"Replicas: {_ids(p['replicas'])}",
              f"Isr: {_ids(p['isr'])}"]
    if reassigning and rules.tools.describe_reassignment_columns:   # since 2.6
        fields += [f"Adding Replicas: {_ids(reassigning[0])}",
                   f"Removing Replicas: {_ids(reassigning[1])}"]
    if rules.tools.describe_elr_columns:
        # KRaft answers DescribeTopicPartitions (3.8+) with the lists, possibly empty;
        # ZooKeeper-mode brokers report no ELR: N/A (TopicCommand.PartitionDescription)
        elr = p.get("elr")
        if elr is None:
            fields += ["Elr: N/A", "LastKnownElr: N/A"]
        else:
            fields += [f"Elr: {_ids(elr[0])}", f"LastKnownElr: {_ids(elr[1])}"]
    return "\t".join(fields)


def reassigning_adding(reassignment, rules) -> int:
    """TopicCommand.getReplicationFactor: how many adding replicas not to count while a
    reassignment (adding, removing) is in progress -- since 2.5 while removing replicas remain,
    since 2.6 also for adding replicas only."""
    if not reassignment or not rules.tools.describe_rf_excludes_adding:
        return 0
    adding, removing = reassignment
    if removing or (adding and rules.tools.describe_reassignment_columns):
        return len(adding)
    return 0


def describe_group(group: str, rows: list[tuple]) -> str:
    """Render ``kafka-consumer-groups --describe``; rows: (topic, partition, committed | None,
    log end offset (the HW) | None, consumer id | None, host | None, client id | None)."""
    def w(v, width):
        s = "-" if v is None else str(v)
        return s.ljust(width)

    gw = max(15, len(group))
    tw = max([15] + [len(r[0]) for r in rows])
    cw = max([15] + [len(r[4] or "-") for r in rows])
    hw = max([15] + [len(r[5] or "-") for r in rows])
    out = ["\n" + " ".join([w("GROUP", gw), w("TOPIC", tw), w("PARTITION", 10),
                            w("CURRENT-OFFSET", 15), w("LOG-END-OFFSET", 15), w("LAG", 15),
                            w("CONSUMER-ID", cw), w("HOST", hw), "CLIENT-ID"])]
    for topic, partition, committed, leo, cid, host, client in rows:
        lag = None if committed is None or leo is None else leo - committed
        out.append("\n" + " ".join([w(group, gw), w(topic, tw), w(partition, 10),
                                    w(committed, 15), w(leo, 15), w(lag, 15), w(cid, cw),
                                    w(host, hw), "-" if client is None else client]))
    return "".join(out).rstrip() + "\n"


# -- kafka-metadata-quorum describe (tools MetadataQuorumCommand) ------------------------------
def _pretty_table(headers: list[str], rows: list[list[str]]) -> str:
    """ToolsUtils.prettyPrintTable: each cell left-justified to its column's width and followed
    by a tab (so every line ends with one)."""
    widths = [len(h) for h in headers]
    for row in rows:
        for i, v in enumerate(row):
            widths[i] = max(widths[i], len(v))
    return "".join("".join(v.ljust(widths[i]) + "\t" for i, v in enumerate(r)) + "\n"
                   for r in [headers, *rows])


def _quorum_node(replica, endpoints) -> str:
    """MetadataQuorumCommand.Node.toString (3.9+, KIP-853)."""
    rid, directory_id = replica[0], replica[1]
    out = f'{{"id": {rid}, "directoryId": ' + \
        ("null" if directory_id is None else f'"{directory_id}"')
    eps = endpoints.get(rid, [])
    if eps:
        out += ', "endpoints": [' + ", ".join(f'"{e}"' for e in eps) + "]"
    return out + "}"


def describe_quorum_status(info: dict, kip853: bool = True) -> str:
    """``kafka-metadata-quorum --bootstrap-server … describe --status``.

    ``info``: leader_id, leader_epoch, high_watermark, cluster_id, voters and observers as
    (id, directory id or None, log end offset, last fetch ms or -1, last caught-up ms or -1),
    endpoints {id: [listener strings]}. Since 3.9 (KIP-853) the voter and observer lists print
    each node as JSON-like objects; before, as ``[id,id,…]``."""
    voters, observers = info["voters"], info["observers"]
    leader = next(v for v in voters if v[0] == info["leader_id"])
    lagging = min(voters, key=lambda v: v[2])   # Comparator.comparingLong(logEndOffset)
    max_lag = leader[2] - lagging[2]
    if lagging is leader:
        lag_ms = 0
    elif leader[4] >= 0 and lagging[4] >= 0:
        lag_ms = leader[4] - lagging[4]
    else:
        lag_ms = -1
    if kip853:
        eps = info.get("endpoints", {})
        cur_v = "[" + ", ".join(_quorum_node(v, eps) for v in voters) + "]"
        cur_o = "[" + ", ".join(_quorum_node(o, eps) for o in observers) + "]"
    else:
        cur_v = "[" + ",".join(str(v[0]) for v in voters) + "]"
        cur_o = "[" + ",".join(str(o[0]) for o in observers) + "]"
    return (f"ClusterId:              {info['cluster_id']}\n"
            f"LeaderId:               {info['leader_id']}\n"
            f"LeaderEpoch:            {info['leader_epoch']}\n"
            f"HighWatermark:          {info['high_watermark']}\n"
            f"MaxFollowerLag:         {max_lag}\n"
            f"MaxFollowerLagTimeMs:   {lag_ms}\n"
            f"CurrentVoters:          {cur_v}\n"
            f"CurrentObservers:       {cur_o}\n")


def describe_quorum_replication(info: dict, kip853: bool = True) -> str:
    """``kafka-metadata-quorum … describe --replication``: the leader, then the other voters
    (Follower), then the observers (brokers), with LogEndOffset, Lag (leader LEO − LEO) and the
    last fetch / caught-up timestamps (-1 when unknown). DirectoryId since 3.9 (KIP-853)."""
    voters = info["voters"]
    leader = next(v for v in voters if v[0] == info["leader_id"])
    rows = []
    for status, group in (("Leader", [leader]),
                          ("Follower", [v for v in voters if v[0] != info["leader_id"]]),
                          ("Observer", info["observers"])):
        for r in group:
            row = [str(r[0])]
            if kip853:
                row.append("AAAAAAAAAAAAAAAAAAAAAA" if r[1] is None else r[1])  # Uuid.ZERO_UUID
            row += [str(r[2]), str(leader[2] - r[2]), str(r[3]), str(r[4]), status]
            rows.append(row)
    headers = ["NodeId"] + (["DirectoryId"] if kip853 else []) + \
        ["LogEndOffset", "Lag", "LastFetchTimestamp", "LastCaughtUpTimestamp", "Status"]
    return _pretty_table(headers, rows)


def describe_features(supported: dict, finalized: dict, epoch: int | None,
                      padded: bool) -> str:
    """``kafka-features describe`` (FeatureCommand.handleDescribe, FeatureCommand.java:238
    @4.3.0): one line per supported feature, sorted by name, with the supported range
    (``supported``: name -> (min, max)), the finalized level (0 when none) and the finalized
    features' epoch ("-" when unknown); metadata.version levels as their names
    (``levelToString``). 4.3+ (KAFKA-19941) pads the columns; before, tabs separate them."""
    from kafkasim.control.kraft.metadata_version import MetadataVersion

    def level(feature: str, value: int) -> str:
        if feature != "metadata.version":
            return str(value)
        try:
            return MetadataVersion.from_feature_level(value).version()
        except (KeyError, ValueError):
            return f"UNKNOWN {value}"

    shown = "-" if epoch is None else str(epoch)
    lines = []
    for feature in sorted(supported):
        low, high = supported[feature]
        values = (feature, level(feature, low), level(feature, high),
                  level(feature, finalized.get(feature, 0)))
        if padded:
            lines.append("Feature: {:<40}  SupportedMinVersion: {:<15}  SupportedMaxVersion: "
                         "{:<15}  FinalizedVersionLevel: {:<15}  Epoch: {}".format(*values, shown))
        else:
            lines.append("Feature: {}\tSupportedMinVersion: {}\tSupportedMaxVersion: {}\t"
                         "FinalizedVersionLevel: {}\tEpoch: {}".format(*values, shown))
    return "\n".join(lines) + "\n"
