"""Typed trace events: the ``detail`` of every trace row as a declared record with named fields.

A trace row is ``(time_ms, kind, node, topic, partition, detail)`` (``kafkasim.runtime.trace``).
Each
record below declares one shape of ``detail`` for one ``kind``: its fields (ints, strings, tuples
of those) and the exact text the learner reads (``text`` / ``str()``, used by
``Trace.to_frame`` and printed output). Readers take fields (``row[5].leader_epoch``), never
parse the text.

Records are immutable tuples (``__slots__ = ()``: no per-instance dict), so they pickle with the
rest of a simulation and compare by value. Two families:

* ``TextEvent``: today's detail was a sentence; ``repr()`` is the repr of that sentence, so a
  row's repr, and therefore ``Trace.digest``, is byte-identical to a row holding the string.
  ``"x" in record`` searches the sentence, as it did on the string.
* ``TupleEvent`` (and ``ValueEvent``): the hot data-path kinds (one row per message, per append,
  per record acked) whose detail is and stays a plain tuple (or int) built at the call site,
  because building a record there would cost every simulated message. The class names the
  fields; ``Send.of(row[5])`` (or ``typed(row)``) gives the named view of a stored tuple.

``EVENT_TYPES`` maps each kind to its record classes (a kind such as "controller" or "fault"
has one record per sentence it can say); ``docs/trace-events.md`` is generated from these
declarations (``python -m kafkasim.core.events > docs/trace-events.md``).
"""

from __future__ import annotations

from operator import itemgetter
from typing import Any, ClassVar

__all__ = ["Event", "TextEvent", "TupleEvent", "ValueEvent", "EVENT_KINDS", "EVENT_TYPES", "typed",
           "markdown"]


class Event(tuple):
    """Base of every trace record: a tuple whose items are the declared ``fields``."""

    __slots__ = ()
    kind: ClassVar[str] = ""                 # the trace kind it is recorded under
    fields: ClassVar[tuple[str, ...]] = ()   # its field names, in order
    field_docs: ClassVar[tuple[str, ...]] = ()   # one line per field (docs)

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        if "__slots__" not in cls.__dict__:
            raise TypeError(f"{cls.__name__} must declare __slots__ = () (records are slotted)")
        if "fields" in cls.__dict__:
            for i, name in enumerate(cls.fields):
                setattr(cls, name, property(itemgetter(i), doc=f"field {i} of {cls.__name__}"))
        if cls.kind and not cls.__name__.startswith("_"):
            EVENT_TYPES.setdefault(cls.kind, []).append(cls)

    def __new__(cls, *values: Any) -> Event:
        if len(values) != len(cls.fields):
            raise TypeError(f"{cls.__name__} takes {len(cls.fields)} field(s) "
                            f"{cls.fields}, got {len(values)}: {values!r}")
        return tuple.__new__(cls, values)

    def __getnewargs__(self) -> tuple:
        return tuple(self)

    @property
    def text(self) -> str:
        """What the learner reads for this event (the trace's detail column)."""
        raise NotImplementedError

    @property
    def legacy(self) -> Any:
        """The plain value a trace row held for this event before records existed."""
        raise NotImplementedError

    def __str__(self) -> str:
        return self.text

    def as_dict(self) -> dict[str, Any]:
        return dict(zip(self.fields, self, strict=True))


class TextEvent(Event):
    """A record whose legacy detail is the sentence ``render()`` returns."""

    __slots__ = ()

    def render(self) -> str:
        raise NotImplementedError

    @property
    def text(self) -> str:
        return self.render()

    @property
    def legacy(self) -> str:
        return self.render()

    def __repr__(self) -> str:   # the row's repr (and the trace digest) as with the sentence
        return repr(self.render())

    def __contains__(self, part: object) -> bool:   # substring search, as on the sentence
        return isinstance(part, str) and part in self.render()


class TupleEvent(Event):
    """A data-path record: the call site stores the plain tuple; this names its items."""

    __slots__ = ()

    @classmethod
    def of(cls, detail: tuple) -> TupleEvent:
        return tuple.__new__(cls, detail)

    @property
    def text(self) -> str:
        return tuple.__repr__(self)

    @property
    def legacy(self) -> tuple:
        return tuple(self)

    __repr__ = tuple.__repr__


class ValueEvent(Event):
    """A data-path record whose plain detail is its single field (an int)."""

    __slots__ = ()

    @classmethod
    def of(cls, detail: Any) -> ValueEvent:
        return tuple.__new__(cls, (detail,))

    @property
    def text(self) -> str:
        return repr(self[0])

    @property
    def legacy(self) -> Any:
        return self[0]

    def __repr__(self) -> str:
        return repr(self[0])


#: kind -> its record classes, in declaration order (filled by ``Event.__init_subclass__``).
#: Every trace kind with a one-line description (the docs' headings, in this order).
EVENT_KINDS = {
    "broker_start": "a broker process started (ZooKeeper mode: and registered in ZooKeeper; "
                    "KRaft: it now registers with the active controller)",
    "controller_elected": "a broker won the /controller election",
    "controller": "the controller changed partition state",
    "send": "a message left a node: detail = (type, destination, message id)",
    "recv": "a message arrived: detail = (type, source, message id)",
    "drop": "a message was lost: detail = (type, peer, message id, reason)",
    "hold": "a message was held in flight by a scenario filter",
    "connect_failed": "a client's connect was refused (a KRaft broker's listeners are not open "
                      "yet, or the broker's process is gone): detail = (destination, reconnect "
                      "backoff ms, reason)",
    "append": "the leader appended records: detail = (first offset, last offset, leader epoch)",
    "replicate": "a follower appended fetched records: detail = (first offset, last offset)",
    "hw": "a replica's high watermark changed: detail = new HW",
    "isr_proposed": "a leader sent AlterPartition/AlterIsr with a new ISR",
    "isr": "an ISR change was committed: detail = (old ISR, new ISR)",
    "isr_update_failed": "an ISR change was rejected or failed",
    "isr_change_notification": "pre-2.7: a broker queued ISR changes for the controller",
    "leader_and_isr_ignored": "a LeaderAndIsr state with an older partition epoch was skipped",
    "broker_start_failed": "KafkaServer.startup failed: the broker process exited",
    "broker_registration_failed": "a broker could not register: /brokers/ids/<id> is held by "
                                  "another ZooKeeper session (NodeExists), or the KRaft "
                                  "controller refused it",
    "broker_registration_backoff": "0.8.2: a broker backs off and retries its registration",
    "stop_replica": "a broker handled StopReplica for a partition",
    "stray_log": "a broker found a stray log (a partition the metadata no longer gives it: "
                 "reassigned away or deleted while it was down): deleted (KRaft 3.3-3.6), "
                 "renamed -stray and kept (3.7+), or it could not tell (a log without a "
                 "topic id before 3.9)",
    "consumer_truncation": "KIP-320: a consumer found the log truncated below its position: "
                           "detail = (position, end offset, action)",
    "become_leader": "a replica became leader",
    "become_follower": "a replica became follower",
    "truncate": "a replica truncated its log",
    "produce_rejected": "a produce was refused before append (NOT_ENOUGH_REPLICAS)",
    "produce_timed_out": "a delayed produce expired (REQUEST_TIMED_OUT)",
    "produce_result": "a producer got the final outcome of a record",
    "consume": "a consumer received records: detail = (first offset, last offset, served HW)",
    "offset_commit": "a consumer group committed offsets",
    "fetch_failed": "a replica fetcher's request failed",
    "fetch_out_of_range": "a follower's fetch was answered OFFSET_OUT_OF_RANGE and left its "
                          "position unchanged: it sends the same fetch again at once",
    "fault": "a fault was injected or healed",
    "alter_config": "kafka-configs --alter changed a topic or broker config",
    "broker_crash": "a broker process was killed (the page cache survives)",
    "broker_power_loss": "a broker lost power: every log kept only its flushed prefix",
    "broker_shutdown": "a broker finished a clean shutdown (logs flushed, checkpoints written)",
    "controlled_shutdown": "a broker asked the controller to move its leaders away",
    "controller_resigned": "a broker stopped being controller (session expired, epoch moved)",
    "zk_session_expired": "a ZooKeeper session expired: its ephemeral znodes are gone",
    "log_recovery": "a restarted broker loaded a log: LEO, HW and epochs from its checkpoints",
    "checkpoint_warning": "a starting broker could not read a checkpoint it may do without and "
    "went on as if it were empty (LogManager.loadLogs: recovery point, log start offset), or "
    "found a log start offset past the log end and deleted the log's segments",
    "produce_duplicate": "an idempotent producer's retried batch was already in the log",
    "fetch_redirect": "a consumer was told to fetch from a preferred read replica (KIP-392)",
    "rule_swapped": "a learner replaced one of Kafka's rules (Cluster.swap_rule): detail = "
                    "'name -> module.function'",
    # KRaft (KIP-500, KIP-595, KIP-631)
    "metadata_quorum": "KRaft: the cluster's controller quorum (the voters of __cluster_metadata)",
    "controller_node_start": "KRaft: a controller node process started",
    "controller_node_stop": "KRaft: a controller node process stopped (crash or shutdown)",
    "controller_active": "KRaft: a controller became active (it leads the metadata quorum and "
                         "its epoch's LeaderChange record is committed)",
    "controller_renounce": "KRaft: a controller stopped being active and reverted to the "
                           "committed metadata",
    "broker_fenced": "KRaft: the active controller fenced a broker whose heartbeats stopped "
                     "for broker.session.timeout.ms",
    "broker_registered": "KRaft: a broker registered with the active controller (broker epoch "
                         "= the offset of its RegisterBrokerRecord)",
    "broker_fencing": "KRaft: a broker learnt from a heartbeat answer that it is fenced or "
                      "unfenced",
    "leader_recovered": "a leader elected uncleanly marked its partition RECOVERED (KIP-704; "
                        "KRaft, and ZooKeeper mode since 3.2)",
    "raft_transition": "KRaft: a node of the metadata quorum changed Raft state (QuorumState "
                       "transitionTo*)",
    "raft_vote": "KRaft: a voter answered a Vote or PreVote request",
    "raft_high_watermark": "KRaft: a node's __cluster_metadata high watermark moved (records "
                           "below it are committed)",
    "raft_truncate": "KRaft: a follower truncated uncommitted metadata records after a "
                     "diverging epoch",
    "raft_resign": "KRaft: the quorum leader resigned (shutdown, or check quorum expired)",
    "raft_fetch_timeout": "KRaft: a follower heard nothing from the leader for "
                          "controller.quorum.fetch.timeout.ms and starts an election",
    "raft_ignored_response": "KRaft: a stale quorum response was ignored",
    "raft_voters": "KRaft: the voter set in force changed (a VotersRecord appended or "
                   "truncated, KIP-853)",
    "raft_voter_change": "KRaft: the quorum leader answered AddRaftVoter / RemoveRaftVoter "
                         "(KIP-853)",
    "raft_snapshot": "KRaft: a metadata snapshot was generated, loaded, fetched from the "
                     "leader (FetchSnapshot), or the metadata log start offset moved past old "
                     "snapshots (KIP-630)",
}

EVENT_TYPES: dict[str, list[type[Event]]] = {}


def typed(row: tuple) -> Event | Any:
    """The record of a trace row's detail: itself when it is one, the named view of a plain
    data-path tuple (or int), else the detail unchanged (e.g. a row written by hand)."""
    kind, detail = row[1], row[5]
    if isinstance(detail, Event):
        return detail
    types = EVENT_TYPES.get(kind, ())
    if len(types) == 1:
        cls = types[0]
        if issubclass(cls, ValueEvent) or \
                issubclass(cls, TupleEvent) and isinstance(detail, tuple) and \
                len(detail) == len(cls.fields):
            return cls.of(detail)
    return detail


# ----------------------------------------------------------------------------- messages (network)
class Send(TupleEvent):
    """A message left ``node`` for ``destination`` (recorded when ``trace_messages``)."""
    __slots__ = ()
    kind = "send"
    fields = ("type", "destination", "message_id")
    field_docs = ("wire name, e.g. FetchRequest", "receiving node", "network-wide message number")


class Recv(TupleEvent):
    """A message from ``source`` arrived at ``node``."""
    __slots__ = ()
    kind = "recv"
    fields = ("type", "source", "message_id")
    field_docs = ("wire name", "sending node", "the number its send row carried")


class Drop(TupleEvent):
    """A message was lost (network partition, drop filter, dead destination, a KRaft broker whose
    listeners are not open yet, random loss)."""
    __slots__ = ()
    kind = "drop"
    fields = ("type", "peer", "message_id", "reason")
    field_docs = ("wire name", "the other end", "message number", "why it was lost")


class ConnectFailed(TupleEvent):
    """``node``'s NetworkClient could not connect to ``destination`` (the peer refused it: a
    KRaft broker opens its listeners only once unfenced, and a dead broker's host has no
    process listening: "connection refused"). No request left: the node is blacked out for its
    reconnect backoff (ClusterConnectionStates.disconnected)."""
    __slots__ = ()
    kind = "connect_failed"
    fields = ("destination", "reconnect_backoff_ms", "reason")
    field_docs = ("the node it tried to connect to",
                  "how long before it may try again (reconnect.backoff.ms, doubling up to "
                  "reconnect.backoff.max.ms, jittered)", "why the connect failed")


class Hold(TupleEvent):
    """A scenario filter keeps a message in flight until ``release``."""
    __slots__ = ()
    kind = "hold"
    fields = ("type", "destination", "message_id")
    field_docs = ("wire name", "receiving node", "message number")


# ---------------------------------------------------------------------------------- log and HW
class Append(TupleEvent):
    """The leader appended a produced batch (Log.appendAsLeader)."""
    __slots__ = ()
    kind = "append"
    fields = ("first_offset", "last_offset", "leader_epoch")
    field_docs = ("offset of the first record", "offset of the last record",
                  "the leader epoch the records were written in")


class Replicate(TupleEvent):
    """A follower appended records it fetched (Log.appendAsFollower)."""
    __slots__ = ()
    kind = "replicate"
    fields = ("first_offset", "last_offset")
    field_docs = ("offset of the first record", "offset of the last record")


class HighWatermark(ValueEvent):
    """A replica's high watermark changed (leader: Partition.maybeIncrementLeaderHW; follower:
    the fetch response; restart: replication-offset-checkpoint)."""
    __slots__ = ()
    kind = "hw"
    fields = ("high_watermark",)
    field_docs = ("the new high watermark",)


class Truncate(TextEvent):
    """A replica truncated its log to ``offset`` (Log.truncateTo): becoming follower,
    OffsetsForLeaderEpoch / diverging epoch, OFFSET_OUT_OF_RANGE."""
    __slots__ = ()
    kind = "truncate"
    fields = ("offset", "removed", "reason")
    field_docs = ("the new log end offset", "records removed", "why (the fetcher's rule)")

    def render(self) -> str:
        return f"to {self.offset} ({self.removed} removed): {self.reason}"


class PowerLossTruncate(TextEvent):
    """A power loss cut a log back to its flushed prefix (the recovery point)."""
    __slots__ = ()
    kind = "truncate"
    fields = ("lost", "offset")
    field_docs = ("unflushed records lost", "the new log end offset (the recovery point)")

    def render(self) -> str:
        return f"power loss: {self.lost} unflushed record(s) lost, log ends at {self.offset}"


class LogWiped(TextEvent):
    """The whole log was deleted and restarts empty (Log.truncateFullyAndStartAt)."""
    __slots__ = ()
    kind = "truncate"
    fields = ("offset",)
    field_docs = ("the new log start (and end) offset",)

    def render(self) -> str:
        return f"log wiped, restarts at {self.offset}"


class LogRecovery(TextEvent):
    """A restarted broker loaded a log and its checkpoints (LogManager.loadLogs)."""
    __slots__ = ()
    kind = "log_recovery"
    fields = ("log_end_offset", "high_watermark", "checkpoint", "epochs")
    field_docs = ("LEO after recovery", "HW read back", "the HW checkpoint file's name",
                  "leader epoch cache entries: (epoch, start offset) tuples")

    def render(self) -> str:
        return (f"LEO {self.log_end_offset}, HW {self.high_watermark} from {self.checkpoint}, "
                f"epochs {list(self.epochs)}")


# ---------------------------------------------------------------------------------- roles, ISR
class BecomeLeader(TextEvent):
    """A replica became leader (Partition.makeLeader)."""
    __slots__ = ()
    kind = "become_leader"
    fields = ("leader_epoch", "isr")
    field_docs = ("its leader epoch", "the ISR it starts with")

    def render(self) -> str:
        return f"epoch {self.leader_epoch}, ISR {list(self.isr)}"


class BecomeFollower(TextEvent):
    """A replica became follower (Partition.makeFollower)."""
    __slots__ = ()
    kind = "become_follower"
    fields = ("leader", "leader_epoch")
    field_docs = ("the leader it follows (-1: none)", "the leader epoch")

    def render(self) -> str:
        return f"leader {self.leader}, epoch {self.leader_epoch}"


class BecomeFollowerSkipped(BecomeFollower):
    """Before 2.1 (KAFKA-7164): same leader, so Partition.makeFollower returned false and the
    follower kept its fetcher and position (no truncation)."""
    __slots__ = ()

    def render(self) -> str:
        return (f"leader {self.leader}, epoch {self.leader_epoch} (become-follower steps "
                "skipped: same leader)")


class IsrProposed(TextEvent):
    """The leader asked to change the ISR (AlterPartition / AlterIsr, or before 2.7 it wrote
    ZooKeeper itself)."""
    __slots__ = ()
    kind = "isr_proposed"
    fields = ("change", "replicas", "old_isr", "new_isr")
    field_docs = ('"shrink" or "expand"', "the replicas leaving or joining", "ISR before",
                  "ISR proposed")

    def render(self) -> str:
        return (f"{self.change} {list(self.replicas)}: {list(self.old_isr)} -> "
                f"{list(self.new_isr)}")


class IsrChange(TupleEvent):
    """The leader applied a committed ISR change."""
    __slots__ = ()
    kind = "isr"
    fields = ("old_isr", "new_isr")
    field_docs = ("ISR before", "ISR after")


class IsrUpdateFailed(TextEvent):
    """An ISR change was rejected or failed (an error name, or the zkVersion conflict)."""
    __slots__ = ()
    kind = "isr_update_failed"
    fields = ("error",)
    field_docs = ("Kafka's error name, or why the write failed",)

    def render(self) -> str:
        return self.error


class AlterPartitionFailed(TextEvent):
    """Partition.handleAlterPartitionError: the error and what the leader does about it."""
    __slots__ = ()
    kind = "isr_update_failed"
    fields = ("error", "outcome")
    field_docs = ("Kafka's error name", "rolled back / pending until new metadata / retrying")

    def render(self) -> str:
        return f"{self.error}: {self.outcome}"


class AlterPartitionAnswerIgnored(TextEvent):
    """Partition.handleAlterPartitionUpdate ignored an answer for other epochs."""
    __slots__ = ()
    kind = "isr_update_failed"
    fields = ("leader_epoch", "partition_epoch", "current_leader_epoch",
              "current_partition_epoch")
    field_docs = ("leader epoch in the answer", "partition epoch in the answer",
                  "the leader's leader epoch", "the leader's partition epoch")

    def render(self) -> str:
        return (f"answer for leader epoch {self.leader_epoch}, partition epoch "
                f"{self.partition_epoch} ignored (have {self.current_leader_epoch}, "
                f"{self.current_partition_epoch})")


class LeaderAndIsrIgnored(TextEvent):
    """makeLeader / makeFollower skipped a state with an older partition epoch."""
    __slots__ = ()
    kind = "leader_and_isr_ignored"
    fields = ("partition_epoch", "current_partition_epoch")
    field_docs = ("partition epoch in the request", "the replica's partition epoch")

    def render(self) -> str:
        return (f"partition epoch {self.partition_epoch} is older than "
                f"{self.current_partition_epoch}")


class IsrChangeNotification(TextEvent):
    """Before 2.7: the broker queued ISR changes for the controller
    (ReplicaManager.maybePropagateIsrChanges)."""
    __slots__ = ()
    kind = "isr_change_notification"
    fields = ("partitions",)
    field_docs = ("the (topic, partition) pairs notified",)

    def render(self) -> str:
        return f"{len(self.partitions)} partition(s)"


# ---------------------------------------------------------------------------------- controller
class PartitionStateChange(TextEvent):
    """A controller write of one partition's (leader, leader epoch, ISR)."""
    __slots__ = ()

    def partition_state(self) -> tuple[int | None, int | None, tuple]:
        """(new leader or None when unchanged, new leader epoch or None, new ISR)."""
        raise NotImplementedError


class BrokersFailed(TextEvent):
    """The controller saw brokers die or re-register (onBrokerFailure)."""
    __slots__ = ()
    kind = "controller"
    fields = ("brokers",)
    field_docs = ("the brokers, sorted",)

    def render(self) -> str:
        return f"brokers failed: {list(self.brokers)}"


class BrokersStarted(TextEvent):
    """The controller saw brokers register (onBrokerStartup)."""
    __slots__ = ()
    kind = "controller"
    fields = ("brokers",)
    field_docs = ("the brokers, sorted",)

    def render(self) -> str:
        return f"brokers started: {list(self.brokers)}"


class DeadRemovedFromIsr(PartitionStateChange):
    """The controller removed a dead broker from an ISR (OfflineReplica; leader unchanged)."""
    __slots__ = ()
    kind = "controller"
    fields = ("dead", "old_isr", "new_isr", "leader_epoch")
    field_docs = ("the dead ISR members, sorted", "ISR before", "ISR after", "new leader epoch")

    def render(self) -> str:
        return (f"removed dead {list(self.dead)} from ISR: {list(self.old_isr)} -> "
                f"{list(self.new_isr)}, epoch {self.leader_epoch}")

    def partition_state(self):
        return None, self.leader_epoch, tuple(self.new_isr)


class PartitionOffline(PartitionStateChange):
    """No live in-sync replica and unclean election disabled: the partition has no leader (ZooKeeper
    mode: the dead leader's OfflineReplica after the failed election)."""
    __slots__ = ()
    kind = "controller"
    fields = ("isr", "leader_epoch")
    field_docs = ("the ISR kept (the last leader)", "new leader epoch")

    def render(self) -> str:
        return (f"no live in-sync replica and unclean election disabled: offline (Leader: none, "
                f"ISR {list(self.isr)}), epoch {self.leader_epoch}")

    def partition_state(self):
        return -1, self.leader_epoch, tuple(self.isr)


class LeaderElection(PartitionStateChange):
    """The controller elected a leader (PartitionLeaderElectionAlgorithms); ``unclean``: one
    outside the ISR (unclean.leader.election.enable)."""
    __slots__ = ()
    kind = "controller"
    fields = ("strategy", "unclean", "old_leader", "new_leader", "isr", "leader_epoch")
    field_docs = ('"offline", "preferred", "controlled shutdown", ...', "elected outside the ISR",
                  "leader before (-1: none)", "leader elected", "new ISR", "new leader epoch")

    def render(self) -> str:
        return (f"{'UNCLEAN ' if self.unclean else ''}{self.strategy} election: leader "
                f"{self.old_leader} -> {self.new_leader}, ISR {list(self.isr)}, "
                f"epoch {self.leader_epoch}")

    def partition_state(self):
        return self.new_leader, self.leader_epoch, tuple(self.isr)


class AutoLeaderRebalance(TextEvent):
    """auto.leader.rebalance.enable: preferred elections for imbalanced partitions."""
    __slots__ = ()
    kind = "controller"
    fields = ("partitions",)
    field_docs = ("how many partitions",)

    def render(self) -> str:
        return f"auto leader rebalance: {self.partitions} partition(s)"


class ShutdownRemovedFromIsr(PartitionStateChange):
    """Controlled shutdown removed the stopping broker from a follower ISR."""
    __slots__ = ()
    kind = "controller"
    fields = ("broker", "old_isr", "new_isr", "leader_epoch")
    field_docs = ("the broker shutting down", "ISR before", "ISR after", "new leader epoch")

    def render(self) -> str:
        return (f"controlled shutdown of {self.broker}: ISR {list(self.old_isr)} -> "
                f"{list(self.new_isr)}, epoch {self.leader_epoch}")

    def partition_state(self):
        return None, self.leader_epoch, tuple(self.new_isr)


class ReplicaOffline(PartitionStateChange):
    """ReplicaStateMachine -> OfflineReplica: a replica leaves the ISR (controlled shutdown of a
    follower, reassignment removing it, a dead broker's replica at controller failover), the
    leader epoch bumped."""
    __slots__ = ()
    kind = "controller"
    fields = ("reason", "replica", "old_isr", "new_isr", "leader", "leader_epoch")
    field_docs = ("why", "the replica going offline", "ISR before", "ISR after",
                  "leader after (-1: none)", "new leader epoch")

    def render(self) -> str:
        return (f"{self.reason}: replica {self.replica} offline, ISR {list(self.old_isr)} -> "
                f"{list(self.new_isr)}, epoch {self.leader_epoch}")

    def partition_state(self):
        return self.leader, self.leader_epoch, tuple(self.new_isr)


class ReassignmentStarted(TextEvent):
    """KafkaController.onPartitionReassignment (U1): the full replica set RS = ORS + TRS."""
    __slots__ = ()
    kind = "controller"
    fields = ("replicas", "adding", "removing")
    field_docs = ("RS: every replica during the move", "AR: replicas being added",
                  "RR: replicas being removed")

    def render(self) -> str:
        return (f"reassignment: replicas {list(self.replicas)}, adding {list(self.adding)}, "
                f"removing {list(self.removing)}")


class ReassignmentEpochBump(TextEvent):
    """updateLeaderEpochAndSendRequest during a reassignment."""
    __slots__ = ()
    kind = "controller"
    fields = ("leader_epoch", "replicas")
    field_docs = ("new leader epoch", "the replicas told")

    def render(self) -> str:
        return f"reassignment: leader epoch {self.leader_epoch} for replicas {list(self.replicas)}"


class ReassignmentComplete(TextEvent):
    """Every target replica is in the ISR: the reassignment completes (B1-B6)."""
    __slots__ = ()
    kind = "controller"
    fields = ("target",)
    field_docs = ("TRS: the target replicas",)

    def render(self) -> str:
        return f"reassignment complete: target replicas {list(self.target)} all in the ISR"


class NewPartition(PartitionStateChange):
    """The controller created a partition (leader: first live assigned replica)."""
    __slots__ = ()
    kind = "controller"
    fields = ("leader", "isr", "leader_epoch")
    field_docs = ("its first leader", "its first ISR", "leader epoch (0)")

    def render(self) -> str:
        return (f"new partition: leader {self.leader}, ISR {list(self.isr)}, "
                f"epoch {self.leader_epoch}")

    def partition_state(self):
        return self.leader, self.leader_epoch, tuple(self.isr)


class AlterPartitionCommitted(TextEvent):
    """The controller committed a leader's AlterPartition (applied when the leader learns it:
    its "isr" row)."""
    __slots__ = ()
    kind = "controller"
    fields = ("broker", "old_isr", "new_isr", "recovered")
    field_docs = ("the leader that asked", "ISR before", "ISR after",
                  "the leader reported RECOVERED for a RECOVERING partition (KIP-704)")

    def render(self) -> str:
        return (f"AlterPartition from {self.broker}: ISR {list(self.old_isr)} -> "
                f"{list(self.new_isr)}"
                + (", leader recovery state RECOVERING -> RECOVERED" if self.recovered else ""))


class ControllerReelection(TextEvent):
    """/controller was deleted (its session expired): every broker tries to become controller."""
    __slots__ = ()
    kind = "controller"
    fields = ()

    def render(self) -> str:
        return "/controller deleted: re-election"


class ControllerElected(TextEvent):
    """A broker won the /controller election."""
    __slots__ = ()
    kind = "controller_elected"
    fields = ("controller_epoch",)
    field_docs = ("the new controller epoch",)

    def render(self) -> str:
        return f"controller epoch {self.controller_epoch}"


class ControllerResigned(TextEvent):
    """A broker stopped being controller."""
    __slots__ = ()
    kind = "controller_resigned"
    fields = ("reason",)
    field_docs = ("why (session expired, process stopped, controller epoch moved)",)

    def render(self) -> str:
        return self.reason


# ------------------------------------------------------------------------ broker lifecycle
class BrokerStart(TextEvent):
    """A broker process started and registered in ZooKeeper."""
    __slots__ = ()
    kind = "broker_start"
    fields = ("broker_epoch",)
    field_docs = ("its broker epoch (the czxid of its /brokers/ids znode)",)

    def render(self) -> str:
        return f"registered, broker epoch {self.broker_epoch}"


class KRaftBrokerStart(TextEvent):
    """A KRaft broker process started: it fetches the metadata log and registers with the
    active controller (BrokerLifecycleManager STARTING)."""
    __slots__ = ()
    kind = "broker_start"
    fields = ()

    def render(self) -> str:
        return "process started: registering with the active controller"


class BrokerStartFailed(TextEvent):
    """KafkaServer.startup failed (the registration was refused): the process exited."""
    __slots__ = ()
    kind = "broker_start_failed"
    fields = ()

    def render(self) -> str:
        return "Fatal error during KafkaServer startup: the process shut down and exited"


class KRaftRegistrationTimeout(TextEvent):
    """BrokerLifecycleManager's RegistrationTimeoutEvent: a starting KRaft broker was not
    registered within initial.broker.registration.timeout.ms; BrokerServer.startup fails and
    the process exits."""
    __slots__ = ()
    kind = "broker_start_failed"
    fields = ("timeout_ms",)
    field_docs = ("initial.broker.registration.timeout.ms",)

    def render(self) -> str:
        return (f"not registered with the controller quorum within {self.timeout_ms} ms: "
                "the process shut down and exited")


class KRaftStartupFault(TextEvent):
    """BrokerMetadataPublisher's fatal fault handler (ProcessTerminatingFaultHandler): a step of
    the first metadata publish failed (``message``: which) and the broker process exited
    (Exit.halt: no clean shutdown)."""
    __slots__ = ()
    kind = "broker_start_failed"
    fields = ("message",)
    field_docs = ("the fault handler's message",)

    def render(self) -> str:
        return f"{self.message}: the process exited"


class BrokerRegistrationFailed(TextEvent):
    """KafkaZkClient.checkedEphemeralCreate: /brokers/ids/<id> is owned by another session."""
    __slots__ = ()
    kind = "broker_registration_failed"
    fields = ("path", "owner", "session")
    field_docs = ("the znode", "the session owning it", "this broker's session")

    def render(self) -> str:
        return (f"Error while creating ephemeral at {self.path}, node already exists and owner "
                f"'0x{self.owner:x}' does not match current session '0x{self.session:x}' "
                "(KeeperErrorCode = NodeExists)")


class BrokerRegistrationBackoff(TextEvent):
    """0.8.2 (ZKCheckedEphemeral's predecessor): back off and retry the registration."""
    __slots__ = ()
    kind = "broker_registration_backoff"
    fields = ("path", "owner")
    field_docs = ("the znode", "the session owning it")

    def render(self) -> str:
        return (f"I wrote this conflicted ephemeral node at {self.path} a while back in a "
                f"different session (0x{self.owner:x}), hence I will backoff for this node to be "
                "deleted by Zookeeper and retry")


class CheckpointWarning(TextEvent):
    """LogManager.loadLogs: a checkpoint the broker can do without was unreadable (it warns and
    goes on as if the file were empty)."""
    __slots__ = ()
    kind = "checkpoint_warning"
    fields = ("file", "action", "error")
    field_docs = ("the checkpoint file", "what the broker does instead", "the reader's error")

    def render(self) -> str:
        return f"Error occurred while reading {self.file} file, {self.action}: {self.error}"


class LogStartPastLogEnd(TextEvent):
    """LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd (2.3+, KAFKA-8306): the
    log-start-offset-checkpoint is past the log end, so loading deletes every segment and the
    log restarts empty at the checkpointed offset."""
    __slots__ = ()
    kind = "checkpoint_warning"
    fields = ("topic_partition", "log_end_offset", "log_start_offset")
    field_docs = ("the partition whose log is emptied", "its log end offset on disk",
                  "the log start offset in log-start-offset-checkpoint")

    def render(self) -> str:
        return (f"{self.topic_partition}: Deleting all segments because logEndOffset "
                f"({self.log_end_offset}) is smaller than logStartOffset ({self.log_start_offset})"
                ". This could happen if segment files were deleted from the file system.")


class BrokerCrash(TextEvent):
    """A broker process was killed; the page cache survives."""
    __slots__ = ()
    kind = "broker_crash"
    fields = ()

    def render(self) -> str:
        return "process killed; page cache survives"


class PowerLoss(TextEvent):
    """A broker lost power: every log kept only its flushed prefix."""
    __slots__ = ()
    kind = "broker_power_loss"
    fields = ("lost",)
    field_docs = ("unflushed records lost over all its logs",)

    def render(self) -> str:
        return f"{self.lost} unflushed record(s) lost"


class BrokerShutdown(TextEvent):
    """A broker finished a clean shutdown."""
    __slots__ = ()
    kind = "broker_shutdown"
    fields = ()

    def render(self) -> str:
        return "clean shutdown complete"


class ControlledShutdown(TextEvent):
    """A broker asked the controller to move its leaders away (``error`` empty), or got the
    answer (KafkaServer.controlledShutdown)."""
    __slots__ = ()
    kind = "controlled_shutdown"
    fields = ("controller", "error", "remaining")
    field_docs = ("the controller asked (-1: none)", 'the answer\'s error ("": not answered yet)',
                  "partitions still led here (answer)")

    def render(self) -> str:
        if not self.error:
            return f"asking controller {self.controller}"
        return f"controller answered {self.error}, {self.remaining} partition(s) still led here"


class ControlledShutdownRetry(TextEvent):
    """A controlled shutdown attempt failed; the broker retries after the back-off."""
    __slots__ = ()
    kind = "controlled_shutdown"
    fields = ("why", "backoff_ms", "retries_left")
    field_docs = ("why the attempt failed", "controlled.shutdown.retry.backoff.ms",
                  "attempts left")

    def render(self) -> str:
        return (f"{self.why}; retrying in {self.backoff_ms} ms ({self.retries_left} retries "
                "remaining)")


class ControlledShutdownGaveUp(TextEvent):
    """Every controlled shutdown attempt failed: the broker shuts down anyway."""
    __slots__ = ()
    kind = "controlled_shutdown"
    fields = ("why",)
    field_docs = ("why the last attempt failed",)

    def render(self) -> str:
        return (f"{self.why}; proceeding to do an unclean shutdown as all the controlled "
                "shutdown attempts failed")


class StopReplica(TextEvent):
    """A broker handled StopReplica for a partition."""
    __slots__ = ()
    kind = "stop_replica"
    fields = ("delete",)
    field_docs = ("deletePartition",)

    def render(self) -> str:
        return "deletePartition=true: log deleted" if self.delete \
            else "deletePartition=false: fetcher stopped"


class StrayLog(TextEvent):
    """A stray log: at a KRaft broker's start, LogManager.isStrayKraftReplica (3.7+) or
    BrokerMetadataPublisher.findStrayPartitions (3.3-3.6); during a ZooKeeper migration, a full
    LeaderAndIsr (LogManager.findStrayReplicas, 3.7-3.9); or a ``-stray`` directory loaded again
    at a restart."""
    __slots__ = ()
    kind = "stray_log"
    fields = ("reason", "action", "dir_name")
    field_docs = ("why it is stray (Kafka's \"Found stray log dir\" line)",
                  "'deleted' (KRaft 3.3-3.6: ReplicaManager.deleteStrayReplicas), 'renamed' "
                  "(3.7+: moved aside and kept) or 'loaded' (a -stray directory found at a "
                  "restart: kept, not loaded as a replica)",
                  "the log's directory now")

    def render(self) -> str:
        if self.action == "renamed":
            return f"{self.reason.rstrip('.')}: marked stray and renamed to {self.dir_name}"
        if self.action == "loaded":
            return f"Loaded stray log: {self.dir_name}"
        return f"{self.reason.rstrip('.')}: deleted (ReplicaManager.deleteStrayReplicas)"


class StrayLogWithoutTopicId(TextEvent):
    """Before 3.9 (KAFKA-16814) a KRaft broker could not judge a log without a topic id: the
    stray check threw. 3.3-3.6 the publishing fault handler logged it and no stray log was
    deleted; 3.7-3.8 the fatal fault handler stopped the broker."""
    __slots__ = ()
    kind = "stray_log"
    fields = ("topic_partition", "fatal")
    field_docs = ("the log without a topic id (no partition.metadata)",
                  "True: 'Error starting LogManager', the broker process exits (3.7-3.8)")

    def render(self) -> str:
        head = (f"The log dir {self.topic_partition} does not have a topic ID, which is not "
                "allowed when running in KRaft mode")
        if self.fatal:
            return f"{head}: Error starting LogManager, the broker process exits"
        return f"{head}: Error deleting stray partitions during startup (none deleted)"


class ZkSessionExpired(TextEvent):
    """A ZooKeeper session expired: ``cause`` "timeout" (not heard from for
    zookeeper.session.timeout.ms), "request" (expired by hand) or "notified" (the broker
    learnt it)."""
    __slots__ = ()
    kind = "zk_session_expired"
    fields = ("session_id", "broker", "cause", "silent_ms")
    field_docs = ("the session", "its owner", '"timeout", "request" or "notified"',
                  "ms not heard from (timeout; else -1)")

    def render(self) -> str:
        if self.cause == "timeout":
            return (f"session {self.session_id} of broker {self.broker} not heard from for "
                    f"{self.silent_ms} ms (zookeeper.session.timeout.ms)")
        if self.cause == "request":
            return f"session {self.session_id} of broker {self.broker} expired by request"
        return f"session {self.session_id} expired"


class FetchFailed(TextEvent):
    """A replica fetcher thread's request failed (it backs off replica.fetch.backoff.ms)."""
    __slots__ = ()
    kind = "fetch_failed"
    fields = ("thread", "reason")
    field_docs = ("the fetcher thread's name", "why")

    def render(self) -> str:
        return f"{self.thread}: {self.reason}"


class FetchOutOfRange(TextEvent):
    """A follower's fetch was answered OFFSET_OUT_OF_RANGE and handling it (AbstractFetcherThread
    .handleOutOfRangeError / fetchOffsetAndTruncate) left its fetch offset and last fetched
    epoch as they were, so the next fetch is the same request, sent at once (no backoff): Kafka
    loops here too. Traced once per stuck position. When the last fetched epoch is above the
    leader's epoch, only this replica's leader-epoch-checkpoint can have put it there."""
    __slots__ = ()
    kind = "fetch_out_of_range"
    fields = ("fetch_offset", "last_fetched_epoch", "leader", "leader_epoch")
    field_docs = ("the offset fetched", "the fetch's LastFetchedEpoch (this log's latest epoch)",
                  "the leader asked", "the leader epoch this follower knows")

    def render(self) -> str:
        head = (f"fetch from leader {self.leader} at offset {self.fetch_offset} with last "
                f"fetched epoch {self.last_fetched_epoch} answered OFFSET_OUT_OF_RANGE; ")
        if self.last_fetched_epoch > self.leader_epoch:
            head += (f"epoch {self.last_fetched_epoch} is above the leader's epoch "
                     f"{self.leader_epoch}, so the leader cannot place it (Partition.readRecords"
                     ": 'Could not determine the end offset of the last fetched epoch') and it "
                     "comes from this replica's leader-epoch-checkpoint; ")
        return head + ("the follower keeps its log and epoch and fetches again at once, as "
                       "Kafka's AbstractFetcherThread does: it stays out of the ISR until the "
                       "file is repaired or the log changes")


# ---------------------------------------------------------------------------------- clients
class ProduceRejected(TextEvent):
    """NOT_ENOUGH_REPLICAS before append: acks=all and the ISR is below min.insync.replicas."""
    __slots__ = ()
    kind = "produce_rejected"
    fields = ("min_insync_replicas", "isr")
    field_docs = ("the partition's min.insync.replicas", "the leader's ISR")

    def render(self) -> str:
        return (f"NOT_ENOUGH_REPLICAS: acks=all needs {self.min_insync_replicas} in-sync "
                f"replicas, ISR is {list(self.isr)}")


class ProduceTimedOut(TextEvent):
    """A delayed produce expired (REQUEST_TIMED_OUT)."""
    __slots__ = ()
    kind = "produce_timed_out"
    fields = ("high_watermark", "required_offset")
    field_docs = ("the HW when it expired", "the offset it waited for")

    def render(self) -> str:
        return (f"HW {self.high_watermark} did not reach {self.required_offset} within the "
                f"request timeout")


class ProduceDuplicate(TextEvent):
    """An idempotent producer's retried batch was already in the log (ProducerStateManager)."""
    __slots__ = ()
    kind = "produce_duplicate"
    fields = ("producer_id", "first_sequence", "last_sequence", "offset")
    field_docs = ("producer id", "first sequence", "last sequence", "where the batch already is")

    def render(self) -> str:
        return (f"producer {self.producer_id} sequence {self.first_sequence}-"
                f"{self.last_sequence} already at offset {self.offset}")


class ConsumerTruncation(TupleEvent):
    """KIP-320: a consumer's position validation found the log truncated below it."""
    __slots__ = ()
    kind = "consumer_truncation"
    fields = ("position", "end_offset", "action")
    field_docs = ("the consumer's position", "the leader's end offset for its epoch (None: "
                  "unknown)", "seek / reset / LogTruncationException")


class ProduceResult(TupleEvent):
    """A producer got the final outcome of a record."""
    __slots__ = ()
    kind = "produce_result"
    fields = ("record_id", "status", "outcome")
    field_docs = ("the record id", '"acked" or "failed"', "acked: its offset; failed: the error")


class Consume(TupleEvent):
    """A consumer received records."""
    __slots__ = ()
    kind = "consume"
    fields = ("first_offset", "last_offset", "high_watermark")
    field_docs = ("first offset", "last offset", "the HW served with them")


class OffsetCommit(TextEvent):
    """A consumer group committed offsets."""
    __slots__ = ()
    kind = "offset_commit"
    fields = ("group", "offsets")
    field_docs = ("group id", "(topic, partition, offset) tuples")

    def render(self) -> str:
        return f"group {self.group}: {list(self.offsets)}"


class FetchRedirect(TextEvent):
    """A consumer was told to fetch from a preferred read replica (KIP-392)."""
    __slots__ = ()
    kind = "fetch_redirect"
    fields = ("preferred_read_replica",)
    field_docs = ("the replica to fetch from",)

    def render(self) -> str:
        return f"preferred read replica {self.preferred_read_replica}"


class AlterConfig(TextEvent):
    """kafka-configs --alter changed a topic or broker config."""
    __slots__ = ()
    kind = "alter_config"
    fields = ("entity_type", "name", "configs")
    field_docs = ('"topics" or "brokers"', "topic, broker id, or default",
                  "(key, value) pairs set, in the order given")

    def render(self) -> str:
        return f"{self.entity_type} {self.name}: {dict(self.configs)}"


class RuleSwapped(TextEvent):
    """A learner replaced one of Kafka's rules (Cluster.swap_rule)."""
    __slots__ = ()
    kind = "rule_swapped"
    fields = ("rule", "function")
    field_docs = ("the rule's name (kafkasim.core.rules.RULES)",
                  "module.qualname of the function now in force")

    def render(self) -> str:
        return f"{self.rule} -> {self.function}"


# ---------------------------------------------------------------------------------- faults
class Pause(TextEvent):
    """A broker process was paused (a GC pause or SIGSTOP)."""
    __slots__ = ()
    kind = "fault"
    fields = ("ms",)
    field_docs = ("how long",)

    def render(self) -> str:
        return f"pause {self.ms} ms"


class Slow(TextEvent):
    """A broker's links and/or disk were slowed."""
    __slots__ = ()
    kind = "fault"
    fields = ("network_ms", "disk_ms")
    field_docs = ("added to every link each way", "per record written (fractions allowed)")

    def render(self) -> str:
        return f"slow network +{self.network_ms} ms, disk +{self.disk_ms} ms"


class NetworkPartition(TextEvent):
    """Nodes were split into groups that cannot reach each other."""
    __slots__ = ()
    kind = "fault"
    fields = ("groups",)
    field_docs = ("tuples of nodes",)

    def render(self) -> str:
        return f"partition {[list(g) for g in self.groups]}"


class Cut(TextEvent):
    """A link was cut (both ways or one way)."""
    __slots__ = ()
    kind = "fault"
    fields = ("a", "b", "both_ways")
    field_docs = ("one end", "other end", "both directions")

    def render(self) -> str:
        return f"cut {self.a}{'<->' if self.both_ways else '->'}{self.b}"


class Heal(TextEvent):
    """Every network partition and cut link was healed."""
    __slots__ = ()
    kind = "fault"
    fields = ()

    def render(self) -> str:
        return "heal"


def _describe_filter(type: str | None, src, dst, where: str = "") -> str:
    # the text of kafkasim.runtime.network.MessageFilter.describe
    from kafkasim.core.match import MessageFilter
    text = MessageFilter(type, src, dst).describe()
    return f"{text} where {where}" if where else text


class HoldMessages(TextEvent):
    """Matching messages are held in flight from now on."""
    __slots__ = ()
    kind = "fault"
    fields = ("type", "src", "dst", "where")
    field_docs = ("message type (None: any)", "sender (None: any)", "receiver (None: any)",
                  "content selector as written (kafkasim/core/match.py), '' for none")

    def render(self) -> str:
        return f"hold {_describe_filter(self.type, self.src, self.dst, self.where)}"


class ReleaseMessages(TextEvent):
    """Held messages were released."""
    __slots__ = ()
    kind = "fault"
    fields = ("count",)
    field_docs = ("how many",)

    def render(self) -> str:
        return f"release {self.count} message(s)"


class DropMessages(TextEvent):
    """Matching messages are dropped from now on."""
    __slots__ = ()
    kind = "fault"
    fields = ("type", "src", "dst", "where")
    field_docs = ("message type (None: any)", "sender (None: any)", "receiver (None: any)",
                  "content selector as written (kafkasim/core/match.py), '' for none")

    def render(self) -> str:
        return f"drop {_describe_filter(self.type, self.src, self.dst, self.where)}"


class DelayMessages(TextEvent):
    """Matching messages get extra latency from now on."""
    __slots__ = ()
    kind = "fault"
    fields = ("type", "src", "dst", "where", "ms")
    field_docs = ("message type (None: any)", "sender (None: any)", "receiver (None: any)",
                  "content selector as written, '' for none", "added latency in ms")

    def render(self) -> str:
        sel = _describe_filter(self.type, self.src, self.dst, self.where)
        return f"delay {sel} by {self.ms} ms"


class SkippedFault(TextEvent):
    """A random fault of a sweep was skipped (nothing to hit, or too many brokers down)."""
    __slots__ = ()
    kind = "fault"
    fields = ("fault", "down")
    field_docs = ("the fault kind", "brokers down (-1: none running)")

    def render(self) -> str:
        if self.down < 0:
            return f"skipped random {self.fault}"
        return f"skipped random {self.fault}: {self.down} down"


# ---------------------------------------------------------------------------------- KRaft
class MetadataQuorum(TextEvent):
    """The controller quorum a KRaft cluster starts with."""
    __slots__ = ()
    kind = "metadata_quorum"
    fields = ("voters",)
    field_docs = ("controller node ids voting in the __cluster_metadata quorum",)

    def render(self) -> str:
        return f"controller quorum voters {list(self.voters)}"


class ControllerNodeStart(TextEvent):
    """A controller node process started (its metadata log and quorum-state reloaded)."""
    __slots__ = ()
    kind = "controller_node_start"

    def render(self) -> str:
        return "controller process started"


class ControllerNodeStop(TextEvent):
    """A controller node process stopped."""
    __slots__ = ()
    kind = "controller_node_stop"
    fields = ("how",)
    field_docs = ("crash or clean shutdown",)

    def render(self) -> str:
        return f"controller process stopped ({self.how})"


class ControllerActive(TextEvent):
    """QuorumController claim: this node is now the active controller."""
    __slots__ = ()
    kind = "controller_active"
    fields = ("epoch",)
    field_docs = ("the Raft epoch of __cluster_metadata it leads",)

    def render(self) -> str:
        return f"active controller in epoch {self.epoch}"


class ControllerRenounce(TextEvent):
    """QuorumController renounce: back to standby, state reverted to the committed records."""
    __slots__ = ()
    kind = "controller_renounce"
    fields = ("high_watermark",)
    field_docs = ("the committed offset (exclusive) it reverted to",)

    def render(self) -> str:
        return f"no longer active: reverted to the {self.high_watermark} committed records"


class BrokerSessionExpired(TextEvent):
    """ReplicationControlManager.maybeFenceOneStaleBroker: one stale broker fenced."""
    __slots__ = ()
    kind = "broker_fenced"
    fields = ("broker",)
    field_docs = ("the broker fenced",)

    def render(self) -> str:
        return (f"fencing broker {self.broker}: no heartbeat for broker.session.timeout.ms")


class BrokerRegistered(TextEvent):
    """The active controller accepted the broker's registration."""
    __slots__ = ()
    kind = "broker_registered"
    fields = ("broker_epoch",)
    field_docs = ("the broker epoch: offset of the RegisterBrokerRecord",)

    def render(self) -> str:
        return f"registered with broker epoch {self.broker_epoch}"


class BrokerRegistrationRefused(TextEvent):
    """The controller refused a KRaft broker registration."""
    __slots__ = ()
    kind = "broker_registration_failed"
    fields = ("error", "message")
    field_docs = ("Kafka's error name", "the controller's message")

    def render(self) -> str:
        return f"registration refused: {self.error}" + (f" ({self.message})"
                                                         if self.message else "")


class BrokerFencing(TextEvent):
    """A heartbeat answer changed whether this broker is fenced."""
    __slots__ = ()
    kind = "broker_fencing"
    fields = ("fenced",)
    field_docs = ("True once fenced, False once unfenced",)

    def render(self) -> str:
        return "fenced" if self.fenced else "unfenced"


class KRaftControlledShutdown(TextEvent):
    """BrokerLifecycleManager: heartbeats now carry wantShutDown."""
    __slots__ = ()
    kind = "controlled_shutdown"
    fields = ("broker_epoch",)
    field_docs = ("the broker epoch",)

    def render(self) -> str:
        return "controlled shutdown: heartbeats carry wantShutDown"


class PartitionChangeRecorded(PartitionStateChange):
    """KRaft: the active controller wrote a PartitionChangeRecord (or a new partition's
    PartitionRecord) that changes a partition's ISR, ELR or replicas but not its leader."""
    __slots__ = ()
    kind = "controller"
    fields = ("reason", "leader", "leader_epoch", "isr", "elr", "last_known_elr",
              "partition_epoch")
    field_docs = ("what caused it", "leader (-1: none)", "leader epoch", "ISR", "ELR (KIP-966)",
                  "LastKnownElr", "partition epoch")

    def render(self) -> str:
        out = (f"{self.reason}: leader {self.leader}, ISR {list(self.isr)}, epoch "
               f"{self.leader_epoch}, partition epoch {self.partition_epoch}")
        if self.elr or self.last_known_elr:
            out += f", ELR {list(self.elr)}, LastKnownElr {list(self.last_known_elr)}"
        return out

    def partition_state(self):
        return self.leader, self.leader_epoch, tuple(self.isr)


class LeaderRecovered(TextEvent):
    """Partition.makeLeader after an unclean election: RECOVERING -> RECOVERED (KIP-704)."""
    __slots__ = ()
    kind = "leader_recovered"
    fields = ("leader_epoch",)
    field_docs = ("the leader epoch",)

    def render(self) -> str:
        return f"leader epoch {self.leader_epoch}: partition marked RECOVERED"


class RaftTransition(TextEvent):
    """QuorumState: a metadata-quorum node moved to another Raft state."""
    __slots__ = ()
    kind = "raft_transition"
    fields = ("from_state", "to_state", "epoch", "leader", "voted")
    field_docs = ("state before (None at start)", "state after", "epoch", "known leader (-1)",
                  "voted for (-1)")

    def render(self) -> str:
        out = f"{self.from_state or 'start'} -> {self.to_state} in epoch {self.epoch}"
        if self.leader >= 0:
            out += f", leader {self.leader}"
        if self.voted >= 0:
            out += f", voted for {self.voted}"
        return out


class RaftVote(TextEvent):
    """A voter answered a (Pre)Vote request."""
    __slots__ = ()
    kind = "raft_vote"
    fields = ("candidate", "epoch", "pre_vote", "granted")
    field_docs = ("the candidate", "its epoch", "a PreVote (KIP-996)", "granted or not")

    def render(self) -> str:
        what = "PreVote" if self.pre_vote else "vote"
        return f"{what} for {self.candidate} in epoch {self.epoch}: " + \
            ("granted" if self.granted else "rejected")


class RaftHighWatermark(TextEvent):
    """The node's metadata high watermark moved."""
    __slots__ = ()
    kind = "raft_high_watermark"
    fields = ("epoch", "high_watermark")
    field_docs = ("the epoch", "new high watermark (records below it committed)")

    def render(self) -> str:
        return f"metadata high watermark {self.high_watermark} (epoch {self.epoch})"


class RaftTruncate(TextEvent):
    """A follower cut uncommitted entries the leader does not have (diverging epoch)."""
    __slots__ = ()
    kind = "raft_truncate"
    fields = ("from_offset", "to_offset", "leader", "epoch")
    field_docs = ("log end before", "log end after", "the leader", "the epoch")

    def render(self) -> str:
        return (f"truncated the metadata log {self.from_offset} -> {self.to_offset} "
                f"(leader {self.leader}, epoch {self.epoch})")


class RaftResign(TextEvent):
    """The quorum leader stepped down."""
    __slots__ = ()
    kind = "raft_resign"
    fields = ("epoch", "check_quorum_expired")
    field_docs = ("the epoch", "True when no majority fetched within 1.5 x fetch timeout")

    def render(self) -> str:
        why = "no majority fetched within check-quorum time" if self.check_quorum_expired \
            else "asked to resign"
        return f"resigned leadership of epoch {self.epoch}: {why}"


class RaftFetchTimeout(TextEvent):
    """A follower's fetch timeout expired: it starts an election."""
    __slots__ = ()
    kind = "raft_fetch_timeout"
    fields = ("leader", "epoch")
    field_docs = ("the silent leader", "the epoch")

    def render(self) -> str:
        return (f"no fetch answer from leader {self.leader} for "
                f"controller.quorum.fetch.timeout.ms (epoch {self.epoch}): election")


class RaftIgnoredResponse(TextEvent):
    """A response the RequestManager did not expect (stale)."""
    __slots__ = ()
    kind = "raft_ignored_response"
    fields = ("source", "type")
    field_docs = ("sender", "response type")

    def render(self) -> str:
        return f"ignored stale {self.type} from {self.source}"


class RaftVoters(TextEvent):
    """A VotersRecord reached this node's metadata log (or left it by truncation): the voter
    set it uses from now on, committed or not (KIP-853, kraft.version 1)."""
    __slots__ = ()
    kind = "raft_voters"
    fields = ("offset", "voters")
    field_docs = ("offset of the VotersRecord in force (-1: the bootstrap checkpoint)",
                  "the voter ids")

    def render(self) -> str:
        return f"voter set {list(self.voters)} (VotersRecord at offset {self.offset})"


class RaftVoterChange(TextEvent):
    """The quorum leader answered an AddRaftVoter / RemoveRaftVoter (KIP-853) or UpdateRaftVoter
    (KIP-853; on a static quorum since 4.1, KAFKA-16538) request."""
    __slots__ = ()
    kind = "raft_voter_change"
    fields = ("operation", "voter", "error", "message")
    field_docs = ("add, remove or update", "the voter id", "Kafka's error name (NONE: done)",
                  "Kafka's error message")

    def render(self) -> str:
        text = f"{self.operation} voter {self.voter}: {self.error}"
        return f"{text} ({self.message})" if self.message else text


class RaftSnapshot(TextEvent):
    """A KRaft snapshot of ``__cluster_metadata`` (KIP-630): ``generated`` by the node's
    SnapshotGenerator, ``loaded`` by a listener that starts from it, ``fetching`` / ``fetched``
    with FetchSnapshot from the leader, or the log start offset moved (``log start``)."""
    __slots__ = ()
    kind = "raft_snapshot"
    fields = ("action", "offset", "epoch", "peer")
    field_docs = ("generated, loaded, fetching, fetched or log start",
                  "the snapshot's end offset (the log start offset for log start)",
                  "the snapshot's epoch (-1 for log start)",
                  "the leader fetched from (-1 otherwise; log start: the new start)")

    def render(self) -> str:
        if self.action == "log start":
            return f"metadata log start offset now {self.offset} (older snapshots deleted)"
        name = f"{self.offset:020d}-{self.epoch:010d}.checkpoint"
        if self.action in ("fetching", "fetched"):
            return f"{self.action} snapshot {name} from leader {self.peer}"
        return f"{self.action} snapshot {name}"


# ---------------------------------------------------------------------------------- docs
def markdown() -> str:
    """docs/trace-events.md: every kind, its record classes and their fields."""
    out = ["# Trace events", "",
           "Generated from `kafkasim/core/events.py` (`python -m kafkasim.core.events > "
           "docs/trace-events.md`).", "",
           "A trace row is `(time_ms, kind, node, topic, partition, detail)`. `detail` is a",
           "record of `kafkasim.core.events` with the named fields below. Sentence records",
           "(`TextEvent`) render the text shown in the trace table (`str(detail)`); data-path",
           "kinds keep a plain tuple (or int) in the row, named by their record class",
           "(`Append.of(detail)`, or `kafkasim.core.events.typed(row)`).", ""]
    for kind, description in EVENT_KINDS.items():
        out.append(f"## `{kind}`")
        out.append("")
        out.append(description[0].upper() + description[1:] + ".")
        out.append("")
        for cls in EVENT_TYPES.get(kind, ()):
            family = "plain value" if issubclass(cls, ValueEvent) else \
                "plain tuple" if issubclass(cls, TupleEvent) else "sentence"
            doc = " ".join((cls.__doc__ or "").split())
            out.append(f"### `{cls.__name__}` ({family})")
            out.append("")
            out.append(doc)
            out.append("")
            if cls.fields:
                out.append("| field | meaning |")
                out.append("|---|---|")
                docs = cls.field_docs or ("",) * len(cls.fields)
                for name, text in zip(cls.fields, docs, strict=True):
                    out.append(f"| `{name}` | {text} |")
                out.append("")
    return "\n".join(out).rstrip() + "\n"


if __name__ == "__main__":
    print(markdown(), end="")
