"""Memory: bytes per record per replica once 1,000,000 records are replicated to 3 replicas.

Notebooks keep whole clusters alive (and Spark ships them around), so the per-record cost of a
log bounds how long an experiment can run. The logs are built directly, not by simulating 1M
produce requests: the leader's ``Log.append_as_leader`` takes batches of 163 records (batch.size
16384 / the producer's 100-byte records), and after every batch each of the 2 followers does
what its fetcher does, ``leader.read(its LEO, leader LEO, 1 MiB)`` then ``append_as_follower``.
Those are the code paths the simulation uses; only the network and the timers are skipped.

Measured with ``tracemalloc`` (bytes still allocated once the logs are built, temporaries
freed), cross-checked with ``sys.getsizeof`` over the logs' array columns. The record registry
(``kafkasim.runtime.cluster.RecordRegistry``: the value of each record, held once per
cluster) is measured separately with the values the reference workload sends
(``"workload-producer-1-bench-<n>"``, no key) and shared among the 3 replicas in the second figure.

Target (issue 3): <= 200 bytes per record per replica.
"""

from __future__ import annotations

import gc
import sys
import tracemalloc

from kafkasim.core.log import Log
from kafkasim.runtime.cluster import RecordRegistry

TARGET_BYTES = 200.0
REPLICAS = 3
RECORD_SIZE = 100                      # Producer.record_size
BATCH = 16384 // RECORD_SIZE           # records per produce batch (batch.size default)
FETCH_MAX_BYTES = 1024 * 1024          # replica.fetch.max.bytes default
VALUE_PREFIX = "workload-producer-1-bench-"


def build_logs(records: int) -> list[Log]:
    """A leader and its followers holding ``records`` records, built batch by batch."""
    leader = Log("bench", 0)
    followers = [Log("bench", 0) for _ in range(REPLICAS - 1)]
    sizes = [RECORD_SIZE] * BATCH
    next_id = 1
    t = 0
    while next_id <= records:
        n = min(BATCH, records - next_id + 1)
        leader.append_as_leader(list(range(next_id, next_id + n)), sizes[:n], 0, t)
        next_id += n
        t += 5
        for f in followers:
            leo = leader.log_end_offset
            while f.log_end_offset < leo:
                f.append_as_follower(leader.read(f.log_end_offset, leo, FETCH_MAX_BYTES))
    return [leader, *followers]


def build_registry(records: int) -> RecordRegistry:
    reg = RecordRegistry()
    reg.producer_index("producer-1")
    for n in range(1, records + 1):
        reg.new(f"{VALUE_PREFIX}{n}")
    return reg


def _traced(build, records: int):
    """(object built, bytes it holds) by tracemalloc."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        obj = build(records)
        gc.collect()
        held = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    return obj, held


def _sizeof_logs(logs: list[Log]) -> int:
    total = 0
    for log in logs:
        total += sys.getsizeof(log)
        total += sum(sys.getsizeof(col) for col in (log.epochs, log.ids, log.timestamps,
                                                    log.sizes))
        entries = log.leader_epoch_cache.entries
        total += sys.getsizeof(entries) + sum(sys.getsizeof(e) for e in entries)
    return total


def run(quick: bool = False) -> dict:
    records = 100_000 if quick else 1_000_000
    logs, log_bytes = _traced(build_logs, records)
    if any(len(log) != records for log in logs):
        raise AssertionError(f"logs hold {[len(log) for log in logs]} records, not {records}")
    sizeof_bytes = _sizeof_logs(logs)
    del logs
    registry, registry_bytes = _traced(build_registry, records)
    if len(registry) != records:
        raise AssertionError(f"registry holds {len(registry)} records, not {records}")
    del registry
    per = records * REPLICAS
    out = {
        "records": records,
        "replicas": REPLICAS,
        "method": "Log.append_as_leader / read / append_as_follower, measured with tracemalloc",
        "log_bytes": log_bytes,
        "registry_bytes": registry_bytes,
        "bytes_per_record_per_replica": round(log_bytes / per, 2),
        "bytes_per_record_per_replica_sizeof": round(sizeof_bytes / per, 2),
        "registry_bytes_per_record": round(registry_bytes / records, 2),
        "bytes_per_record_per_replica_with_registry": round((log_bytes + registry_bytes) / per, 2),
        "target_bytes_per_record_per_replica": TARGET_BYTES,
    }
    out["meets_target"] = out["bytes_per_record_per_replica"] <= TARGET_BYTES
    out["meets_target_with_registry"] = (
        out["bytes_per_record_per_replica_with_registry"] <= TARGET_BYTES)
    return out


if __name__ == "__main__":
    for key, value in run(quick="--quick" in sys.argv).items():
        print(f"{key:44} {value}")
