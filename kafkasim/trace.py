"""The event trace: one typed row per thing that happened, convertible to a pandas DataFrame.

A row is ``(time_ms, kind, node, topic, partition, detail)`` made of ints, strings and tuples only,
so the trace digest is identical in every process. ``kind`` values are documented in
``EVENT_KINDS``; ``detail`` is a record of ``kafkasim.events`` (named fields, the text in
``str(detail)``), or for the hot data-path kinds the plain tuple / int its record class names.
Every kind, record and field: docs/trace-events.md.
"""

from __future__ import annotations

import hashlib

from kafkasim.events import TextEvent, typed

EVENT_KINDS = {
    "broker_start": "a broker process started and registered in ZooKeeper",
    "controller_elected": "a broker won the /controller election",
    "controller": "the controller changed partition state",
    "send": "a message left a node: detail = (type, destination, message id)",
    "recv": "a message arrived: detail = (type, source, message id)",
    "drop": "a message was lost: detail = (type, peer, message id, reason)",
    "hold": "a message was held in flight by a scenario filter",
    "append": "the leader appended records: detail = (first offset, last offset, leader epoch)",
    "replicate": "a follower appended fetched records: detail = (first offset, last offset)",
    "hw": "a replica's high watermark changed: detail = new HW",
    "isr_proposed": "a leader sent AlterPartition/AlterIsr with a new ISR",
    "isr": "an ISR change was committed: detail = (old ISR, new ISR)",
    "isr_update_failed": "an ISR change was rejected or failed",
    "isr_change_notification": "pre-2.7: a broker queued ISR changes for the controller",
    "leader_and_isr_ignored": "a LeaderAndIsr state with an older partition epoch was skipped",
    "broker_start_failed": "KafkaServer.startup failed: the broker process exited",
    "broker_registration_failed": "/brokers/ids/<id> is held by another ZooKeeper session "
                                  "(NodeExists)",
    "broker_registration_backoff": "0.8.2: a broker backs off and retries its registration",
    "stop_replica": "a broker handled StopReplica for a partition",
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
    "went on as if it were empty (LogManager.loadLogs: recovery point, log start offset)",
    "produce_duplicate": "an idempotent producer's retried batch was already in the log",
    "fetch_redirect": "a consumer was told to fetch from a preferred read replica (KIP-392)",
    "rule_swapped": "a learner replaced one of Kafka's rules (Cluster.swap_rule): detail = "
                    "'name -> module.function'",
}

COLUMNS = ["time_ms", "event", "node", "topic", "partition", "detail"]


class Trace:
    __slots__ = ("rows", "enabled", "messages")

    def __init__(self, enabled: bool = True, messages: bool = True) -> None:
        self.rows: list[tuple] = []
        self.enabled = enabled
        self.messages = messages  # record send/recv of every RPC (needed for space-time diagrams)

    def __len__(self) -> int:
        return len(self.rows)

    def digest(self) -> str:
        """SHA-256 over every row's repr: equal digests mean identical runs.

        A record's repr is the repr of the plain detail rows held before records existed (the
        sentence, or the tuple), so digests of the same run are the same as then."""
        h = hashlib.sha256()
        for row in self.rows:
            h.update(repr(row).encode())
            h.update(b"\n")
        return h.hexdigest()

    def to_frame(self):
        import pandas as pd

        rows = [(t, k, n, tp, p, d if isinstance(d, str) else d.text if isinstance(d, TextEvent)
                 else ("" if d is None else repr(d)))
                for (t, k, n, tp, p, d) in self.rows]
        df = pd.DataFrame(rows, columns=COLUMNS)
        df["node"] = df["node"].astype(str)
        return df

    def events(self, kind: str | None = None) -> list[tuple]:
        """Rows (of ``kind``) with ``detail`` as its record (``kafkasim.events.typed``): the
        plain data-path tuples get their field names."""
        return [(*r[:5], typed(r)) for r in self.rows if kind is None or r[1] == kind]

    def where(self, kind: str | None = None, topic: str | None = None,
              partition: int | None = None, node=None) -> list[tuple]:
        return [r for r in self.rows
                if (kind is None or r[1] == kind) and (topic is None or r[3] == topic)
                and (partition is None or r[4] == partition) and (node is None or r[2] == node)]
