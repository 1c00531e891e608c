"""Experiments at scale: sweeps of seeded simulations, serially or as Spark jobs.

    >>> from kafkasim.experiments import Sweep
    >>> sweep = Sweep.load("examples/sweeps/loss-vs-acks.toml")     # or Sweep(base, grid, seeds)
    >>> results = sweep.run()                  # pandas, one row per run ("auto": Spark if it pays)
    >>> results = sweep.run(mode="serial")     # same rows, this process, no Spark
    >>> results.to_parquet("results.parquet")

From the command line: ``kafkasim sweep SPEC.toml [--out results.parquet] [--serial]
[--master URL] [--runs N]`` (prints a summary per combination; exit status 2 for a bad spec,
1 when a run failed).

API: ``Sweep(base, grid, seeds, cases)`` / ``Sweep.load(path)`` / ``Sweep.loads(text)``;
``sweep.specs`` (``RunSpec`` objects), ``sweep.table()`` (inputs), ``sweep.validate()``,
``sweep.with_runs(n)``, ``sweep.run(mode=...)``; ``run_sweep(sweep_or_specs, mode="auto" |
"serial" | "spark", spark=None, master=None, progress=None, chunk_size=None, parallelism=None)``
("auto": the first runs serially, timed; the rest on Spark only when the measured costs say it
finishes sooner: ``kafkasim.experiments.costs``); ``run_one(spec)`` (one row, as a dict);
``summary(results)`` (one row per combination); ``write_parquet(results, path)``.

A sweep is a table of run specs. A run is a pure function of its spec (cluster and workload or a
scenario, Kafka config overrides, fault plan, seed), so a sweep gives the same rows serially, on
``local[*]``, on a Spark cluster or through Spark Connect (``kafkasim.experiments.spark.session()``
chooses:
``SPARK_REMOTE``, ``KAFKASIM_SPARK_MASTER`` or local). Every spec is validated before anything
runs; a run that fails at run time becomes a row with ``status = "error"`` and its error text.

Sweep files (TOML)
==================

::

    name = "loss-vs-acks"
    description = "Lost acknowledged writes under random broker power losses"
    seeds = 20                     # 20 seeds (0..19); or [1, 5, 9]; or { start = 100, count = 50 }

    [base]                         # what every run starts from
    kafka_version = "3.7"          # version profile (default 3.7)
    duration_ms = 60000            # how long the workload produces (default 60000)
    drain_ms = 10000               # then run this much longer, for retries to finish (10000)
    check = true                   # run the invariant checkers after every event (true)
    trace_digest = false           # add the SHA-256 of the event trace to the row (false)

    [base.cluster]                 # the generated cluster and its one topic
    brokers = 3                    # (3)
    partitions = 1                 # (1)
    replication_factor = 3         # (min(3, brokers)); more than brokers is an error
    topic = "sweep"                # topic name ("sweep")
    latency_ms = 1                 # per-message network latency, plus uniform 0..jitter_ms (1, 1)
    jitter_ms = 1
    slow = [{ broker = 2, network_ms = 250, disk_ms = 0 }]   # slowed brokers ([])

    [base.broker]                  # broker configs: server.properties keys, checked by version
    "zookeeper.session.timeout.ms" = 6000

    [base.topic]                   # topic configs (kafka-configs --entity-type topics)
    "min.insync.replicas" = 2

    [base.producer]                # producer configs
    acks = "all"

    [base.workload]                # one producer: a steady rate (records/s, default 10) ...
    rate = 20
    # segments = [[0, 10000, 3], [10000, 12000, 10]]    # ... or [start_ms, end_ms, rate] pieces
    # burst = { every_ms = 7000, length_ms = 2100, rate = 10 }
                                   # ... or a burst at the start of every period, `rate`
                                   # (default 0 with a burst) in between, for duration_ms

    [base.faults]                  # the fault plan (none by default)
    kind = "crash"                 # crash | power_loss | shutdown | pause
    rate_per_min = 2.0             # random faults: a Poisson process over the whole cluster
    down_ms = [5000, 20000]        # downtime (pause length): uniform in [low, high], or one value
    start_ms = 5000                # no random fault before (0) ...
    end_ms = 50000                 # ... or from this time (default: end of the workload)
    max_down = 1                   # skip a fault while this many brokers are down (1)
    brokers = [1, 2, 3]            # candidates (all)
    steps = [{ at_ms = 20000, do = "crash", broker = 1 },
             { at_ms = 30000, do = "start", broker = 1 }]
                                   # scripted faults: crash, power_loss, shutdown, start,
                                   # pause (ms), slow (network_ms, disk_ms), cut (a, b, one_way),
                                   # heal

    [grid]                         # every combination of these values
    "producer.acks" = ["1", "all"]
    "topic.min.insync.replicas" = [1, 2]
    "topic.unclean.leader.election.enable" = [false, true]

    [[cases]]                      # optional named variants, each crossed with the grid
    label = "0.8.2, lag > 5 messages"
    kafka_version = "0.8.2"
    "broker.replica.lag.max.messages" = 5

A parameter name (in ``[grid]`` and ``[[cases]]``) is a top-level field (``kafka_version``,
``duration_ms``, ``drain_ms``, ``check``, ``scenario``, ``scenario_text``) or
``<section>.<key>``: ``cluster.<field>``, ``workload.<field>``, ``faults.<field>``, or
``broker.<Kafka key>``, ``topic.<Kafka key>``, ``producer.<Kafka key>`` (everything after the
first dot is the Kafka key, dots included).

Scenario runs: ``scenario = "seed-lag-messages-burst"`` (a built-in name or a .toml path) or
``scenario_text = '''...'''`` instead of a generated cluster and workload. ``kafka_version``
replaces the scenario's; ``[broker]`` merges into its ``[cluster].config``, ``[topic]`` into every
topic's config, ``[producer]`` into every declared producer client; ``cluster.latency_ms`` /
``jitter_ms`` replace the scenario's; the fault plan is added; after the steps the run continues
to ``duration_ms`` if that is later. ``[workload]`` is an error there.

Runs are numbered seed-major (every combination for the first seed, then the next seed...), so
``--runs N`` / ``Sweep.with_runs(N)`` (extend or cut the seeds, then keep the first N runs) still
covers every combination evenly.

Results
=======

One row per run, in ``run_id`` order: ``run_id``, ``seed``, the varied parameters (``case`` and
one column per case or grid key), then ``RESULT_COLUMNS``: ``scenario``, ``kafka_version``,
``status`` ("ok" or "error"), ``error``, ``sim_ms`` (simulated end time), ``events``; producer
counts ``sent``, ``acked``, ``failed``, ``pending``; ``lost_acked`` (acknowledged records absent
from the partition's current leader at their offset), ``committed`` (acked records that reached
the HW); final produce errors by Kafka name (``err_NOT_ENOUGH_REPLICAS``, ...,
``err_TimeoutException`` for delivery.timeout.ms, ``err_other``) and ``attempt_errors`` (failed
attempts, retried ones included); ``isr_shrinks`` / ``isr_expands`` / ``failed_isr_updates``
(IsrShrinksPerSec... meter counts summed over brokers), ``unclean_elections``,
``broker_failures`` (crashes, power losses, shutdowns); ``offline_ms`` (simulated time during
which some partition had no leader: "Leader: none") and ``unavailable_ms`` (no *running* leader:
also the time before a dead leader is noticed and replaced); latency percentiles (nearest rank,
ms) ``ack_p50_ms`` / ``ack_p99_ms`` (send to acknowledgement) and ``hw_p50_ms`` / ``hw_p99_ms``
(send until the high watermark passed the record); ``first_violation`` /
``first_violation_ms`` (the first invariant of ``kafkasim.observe.checks`` violated, and when;
None if none), ``violations``, ``allowed_violations``, ``check_error``; ``expectations_failed``
(scenario ``expect`` steps that failed); ``trace_digest``; ``spec`` (the run's full spec as JSON).
"""

from kafkasim.experiments.report import summary
from kafkasim.experiments.runner import (
    PRODUCE_ERRORS,
    RESULT_COLUMNS,
    run_one,
    run_serial,
    run_specs,
    run_sweep,
    schedule_faults,
)
from kafkasim.experiments.spec import RunSpec, Sweep, SweepError, validate_spec, validate_specs

__all__ = [
    "PRODUCE_ERRORS",
    "RESULT_COLUMNS",
    "RunSpec",
    "Sweep",
    "SweepError",
    "load",
    "run_one",
    "run_serial",
    "run_specs",
    "run_sweep",
    "schedule_faults",
    "summary",
    "validate_spec",
    "validate_specs",
    "write_parquet",
]


def load(path) -> Sweep:
    """``Sweep.load(path)``: read a sweep file."""
    return Sweep.load(path)


def write_parquet(results, path) -> None:
    """Write a results table as Parquet (``pandas.read_parquet`` reads it back, ``attrs``
    included: sweep name, mode, wall time, varied parameters)."""
    results.to_parquet(path, index=False)
