"""Cost per event against the number of partitions (issue 17): does a Fetch cost what changed?

3 brokers, one topic with 1, 10, 100 and 1,000 partitions (replication factor 3), a producer
(acks=all, linger.ms=5) sending 1,000 records/s to partition 0 for 10 simulated seconds: the same
traffic, hence about the same events, whatever the partition count; the other partitions are
idle. With incremental fetch sessions (KIP-227, Kafka 1.1+) a follower's Fetch names, and the
leader's answer carries, only the partitions that changed; before 1.1 every Fetch carries all of
them. Figures: ``p<N>_us_per_event`` (CPU time of this process inside ``Cluster.run`` /
events, best of ``repeats`` rounds over the four counts; CPU rather than wall time so that
other load on the machine does not skew the ratio), ``p1000_vs_p1`` (the median of the rounds'
own ratios, 1 and 1,000 measured back to back; goal <= 1.5), and the same
at Kafka 1.0 (sessionless) for comparison. Building the cluster and creating the topic are
not timed.
"""

from __future__ import annotations

import statistics
import time

from benchmarks.skeleton import collector_paused, settle_collector
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

COUNTS = (1, 10, 100, 1000)
RATE = 1000
GOAL_P1000_VS_P1 = 1.5


def measure(partitions: int, duration_ms: int, repeats: int, version: str = "3.7") -> dict:
    best = None
    for _ in range(repeats):
        c = Cluster(brokers=3, seed=1, kafka_version=version)
        c.create_topic("bench", partitions=partitions, replication_factor=3)
        c.run(1000)     # leaders elected, followers fetching: not timed
        p = c.producer(acks="all", linger_ms=5)
        RateWorkload(c, p, "bench", rate=RATE, duration_ms=duration_ms, partition=0)
        events = c.engine.events_processed
        # the collector paused for the run, then one young-generation pass over what it
        # allocated (skeleton.settle_collector): left to itself it runs whatever collection
        # the process's counters pick after the run, at the end of `make bench` a full one
        with collector_paused():
            t0 = time.process_time()
            c.run(duration_ms)
            settle_collector()
            wall = time.process_time() - t0   # CPU seconds
        run = {"wall_s": wall, "events": c.engine.events_processed - events}
        if best is None or wall < best["wall_s"]:
            best = run
    return best


def run(quick: bool = False) -> dict:
    duration_ms = 2_000 if quick else 10_000
    repeats = 1 if quick else 5
    out: dict = {"duration_ms": duration_ms, "rate_records_per_s": RATE, "repeats": repeats}
    # the counts in rounds, 1 and 1,000 back to back, each count's best run kept, and the ratio
    # taken within each round (the rounds' median is the figure): this host runs the same code
    # at two speeds a few seconds apart (here p1 read 9.4 and 15 us per event within the hour),
    # and measuring one count's repeats back to back let a slow spell land on one count only
    best: dict[int, dict] = {}
    ratios = []
    for _ in range(repeats):
        this_round = {}
        for n in (1, 1000, 10, 100):
            m = this_round[n] = measure(n, duration_ms, 1)
            if n not in best or m["wall_s"] < best[n]["wall_s"]:
                best[n] = m
        ratios.append((this_round[1000]["wall_s"] / this_round[1000]["events"])
                      / (this_round[1]["wall_s"] / this_round[1]["events"]))
    for n in COUNTS:
        out[f"p{n}_events"] = best[n]["events"]
        out[f"p{n}_us_per_event"] = round(best[n]["wall_s"] / best[n]["events"] * 1e6, 1)
    for n in COUNTS:
        if quick and n == 1000:
            continue
        m = measure(n, duration_ms, 1, "1.0")
        out[f"sessionless_p{n}_events"] = m["events"]
        out[f"sessionless_p{n}_us_per_event"] = round(m["wall_s"] / m["events"] * 1e6, 1)
    out["p1000_vs_p1"] = round(statistics.median(ratios), 2)
    out["p1000_vs_p1_rounds"] = " ".join(f"{r:.2f}" for r in ratios)
    out["p1000_vs_p1_best_vs_best"] = round(
        out["p1000_us_per_event"] / out["p1_us_per_event"], 2)
    out["goal_p1000_vs_p1"] = GOAL_P1000_VS_P1
    out["meets_target_p1000_vs_p1"] = out["p1000_vs_p1"] <= GOAL_P1000_VS_P1
    return out


if __name__ == "__main__":
    import sys

    for key, value in run(quick="--quick" in sys.argv).items():
        print(f"{key:32} {value}")
