"""Matplotlib drawings of a simulated cluster, for notebooks and projected workshops.

Each drawing is one function that returns a ``matplotlib.figure.Figure`` (made without pyplot, so
nothing global to close and widgets can redraw quickly). The data behind each drawing comes from
a plain function next to it, so tests and exercises can check what is drawn::

    replica_logs(c, "t", 0)          replica_log_rows(c, "t", 0)
    isr_timeline(c, "t", 0)          isr_intervals(c, "t", 0), leader_changes(c, "t", 0)
    hw_leo_timeline(c, "t", 0)       hw_leo_series(c, "t", 0)
    spacetime(c, 0, 500)             message_arrows(c, 0, 500)
    cluster_map(c)                   cluster_layout(c)
    metrics(c, ["UnderReplicatedPartitions"])   metric_series(c, ...)
    quorum_timeline(c)               quorum_intervals(c), fencing_intervals(c)   (KRaft)
    metadata_log_table(c)            metadata_log_rows(c)                        (KRaft)

Kafka's words throughout: HW and LEO are exclusive offsets (a marker at x = 7 is the boundary
before offset 7), "leader epoch", "ISR", and metrics under their JMX MBean names.
"""

from kafkasim.viz.events import BrokerStatus, broker_status_intervals
from kafkasim.viz.export import save, trace_frame, trace_to_csv, trace_to_parquet
from kafkasim.viz.isr import (
    IsrInterval,
    LeaderChange,
    PartitionChange,
    isr_intervals,
    isr_timeline,
    leader_changes,
    partition_history,
)
from kafkasim.viz.logs import ReplicaLogView, ReplicaRow, replica_log_rows, replica_logs
from kafkasim.viz.mbeans import metric_series, metrics, resolve_mbeans
from kafkasim.viz.messages import MessageArrow, message_arrows, spacetime
from kafkasim.viz.quorum import (
    FencingInterval,
    QuorumInterval,
    fencing_intervals,
    metadata_log_rows,
    metadata_log_table,
    quorum_intervals,
    quorum_timeline,
)
from kafkasim.viz.racks import BrokerBox, RackGroup, ReplicaBadge, cluster_layout, cluster_map
from kafkasim.viz.style import epoch_color
from kafkasim.viz.watermarks import WatermarkPoint, hw_leo_series, hw_leo_timeline

__all__ = [
    "BrokerBox", "BrokerStatus", "FencingInterval", "IsrInterval", "LeaderChange", "MessageArrow",
    "PartitionChange", "QuorumInterval", "RackGroup", "ReplicaBadge", "ReplicaLogView",
    "ReplicaRow",
    "WatermarkPoint",
    "broker_status_intervals", "cluster_layout", "cluster_map", "epoch_color",
    "fencing_intervals", "hw_leo_series",
    "hw_leo_timeline", "isr_intervals", "isr_timeline", "leader_changes", "message_arrows",
    "metadata_log_rows", "metadata_log_table", "metric_series", "metrics", "partition_history",
    "quorum_intervals", "quorum_timeline", "replica_log_rows", "replica_logs",
    "resolve_mbeans", "save", "spacetime", "trace_frame", "trace_to_csv", "trace_to_parquet",
]
