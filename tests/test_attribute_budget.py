"""The objects the core reads on every message keep fewer than 30 instance attributes.

CPython 3.11 specializes attribute access (LOAD_ATTR_INSTANCE_VALUE) only while an instance's
attributes fit its class's shared keys, at most 30 (SHARED_KEYS_MAX_SIZE). Past that every
attribute read of the object takes the slow path: the Cluster's 31st attribute cost the
reference workload 5.3 M of 305 M instructions (issue 17, benchmarks/bench_instructions.py).
Rarely used state goes into a group read through ``kafkasim.runtime.broker.InGroup`` instead."""

from __future__ import annotations

import pytest

from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

LIMIT = 30


@pytest.mark.parametrize("version", ["3.7", None], ids=["zookeeper-3.7", "kraft-default"])
def test_hot_objects_stay_under_the_shared_keys_limit(version):
    c = Cluster(brokers=3, seed=1, kafka_version=version)
    c.create_topic("t", partitions=2, replication_factor=3)
    p = c.producer(acks="all", linger_ms=5)
    RateWorkload(c, p, "t", rate=200, duration_ms=3000, partition=0)
    c.crash(3)
    c.run(5000)
    c.restart(3)
    c.run(20000)   # a crash, a restart and their ISR changes: the attributes made lazily too
    objects = {"Cluster": c, "producer": p, **{f"broker {b}": c.brokers[b] for b in c.brokers}}
    for name, obj in objects.items():
        n = len(getattr(obj, "__dict__", ()))
        assert n < LIMIT, (f"{name} has {n} instance attributes: CPython 3.11 specializes "
                           f"attribute reads only below {LIMIT} (group rarely used ones with "
                           f"kafkasim.runtime.broker.InGroup)")
