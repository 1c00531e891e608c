"""Resource limits: how large a simulation kafkasim accepts, checked before anything runs.

The simulator keeps every broker, partition, record and event of a run in memory and runs on
one core, so input that asks for more than these bounds is refused up front with an error
naming the limit (and, for the event budget, how to raise it) instead of running for hours or
exhausting memory. The bounds are far above what the course and the shipped sweeps use (the
largest shipped runs have 9 brokers, 50 partitions and a few simulated minutes).
"""

from __future__ import annotations

#: brokers (and KRaft controller nodes) in one cluster
MAX_BROKERS = 100
#: partitions of one topic, and of all topics of a cluster together
MAX_PARTITIONS = 10_000
#: any simulated time or duration in a scenario or sweep file: one simulated day
MAX_TIME_MS = 24 * 3600 * 1000
#: records one produce step or one sweep run may send (``count``, ``values``, rate x duration)
MAX_RECORDS = 1_000_000
#: produce rate of a workload, records per simulated second
MAX_RATE = 100_000
#: runs in one sweep (grid size x seeds)
MAX_RUNS = 1_000_000
#: a broker id, node id or partition index is a Java int
INT_MAX = 2**31 - 1
#: seeds are Java longs
LONG_MAX = 2**63 - 1
#: events one Cluster may process in total before its run stops with EventLimitExceeded;
#: ``Cluster(max_events=...)`` / ``Scenario.run(max_events=...)`` raise or lower it
DEFAULT_MAX_EVENTS = 50_000_000
