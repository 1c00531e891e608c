"""The KRaft client's errors (org.apache.kafka.raft.errors): ``NotLeaderError``, Kafka's
NotLeaderException. ``kafkasim.control.kraft.raft`` re-exports it; it lives here so the leader's
epoch states and the kraft.version upgrade can raise it without importing the client."""

from __future__ import annotations


class NotLeaderError(RuntimeError):
    """org.apache.kafka.raft.errors.NotLeaderException: append on a replica that is not the
    current leader."""
