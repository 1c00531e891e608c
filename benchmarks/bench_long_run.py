"""Memory of a long run (issues 16, 31): 9 brokers, one topic of 50 partitions with replication
factor 3, a producer (acks=all, linger.ms 5) sending 1,000 records/s, message tracing on.

Each variant runs in a fresh process and reports its resident memory (VmRSS) above what it held
once the cluster was built, sampled every 20 simulated seconds:

* ``kept``: the default (no ``spill_to`` call, what the course's notebooks use): the trace and
  metrics rows are ``CompactRows`` (``kafkasim.runtime.rows``), whose older rows are compacted
  into a nameless temporary file at each metrics sample once 60,000 are held (then in chunks
  of 4,000, ``CHUNK_ROWS``);
* ``history``: the default, driven by a ``History`` (a snapshot a simulated second, as the
  course's players keep);
* ``spill``: ``cluster.trace.spill_to(tmpdir, 100_000)``: at most ~100,000 rows in memory, older
  ones in Parquet files (``kafkasim.runtime.trace``). pyarrow's libraries (imported by
  ``spill_to``) and its first Parquet write (~20 simulated s in) are a fixed cost, ~130-180 MB:
  ``spill_fixed_mb`` plus ``spill_first_sample_mb`` (the first sample comes after the first
  spill).

``*_mb_per_sim_min`` is the growth per simulated minute between the first and the last sample
(after start-up, the first compaction and the first spill), ``*_growth_late_vs_early`` the growth
of the second half of the run over the first half (1.0 = linear; a spilled run's memory is a
sawtooth, so for it the second half's growth per minute, ``spill_late_mb_per_sim_min``, is held to
the budget instead).

Budgets: by default (``kept``) at most ``BUDGET_DEFAULT_MB_PER_MIN`` (10) MB per simulated minute
(issue 31). What still grows is compact: the logs' columns (three replicas of every record, 20
bytes a record a replica: ``kafkasim.core.log``), the idempotent batch headers as columns
(``ProducerBatches``, 26 bytes a batch a replica), the producer's settled results as columns
(``ProduceResults.compact``, ~50 bytes a run) and the record registry as runs (``RunList``: a
generated run of records holds its value once). A History adds one compressed
snapshot a simulated second (``snapshots.dump(compress=True)``, ~57 KB here). With the trace
spilled, at most ``BUDGET_MB_PER_MIN`` MB per simulated minute above ``BUDGET_FIXED_MB``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET_DEFAULT_MB_PER_MIN = 10.0
BUDGET_MB_PER_MIN = 40.0
BUDGET_FIXED_MB = 250.0
SAMPLE_S = 20

_RUN = """
import json, sys, tempfile
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload

def rss_mb():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

secs, variant, sample, max_rows = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4])
spill = variant == "spill"
c = Cluster(brokers=9, seed=1, trace_messages=True)
c.create_topic("t", partitions=50, replication_factor=3)
RateWorkload(c, c.producer(acks="all", linger_ms=5), "t", rate=1000, duration_ms=secs * 1000)
pre = rss_mb()
if spill:   # imports pyarrow: its libraries are the fixed cost
    c.trace.spill_to(tempfile.mkdtemp(prefix="kafkasim-bench-"), max_rows)
driver = c
if variant == "history":
    from kafkasim.observe.history import History
    driver = History(c)
base = rss_mb()
out = []
for _ in range(secs // sample):
    driver.run(sample * 1000)
    out.append(rss_mb() - base)
c = driver.cluster if variant == "history" else c
print(json.dumps({"samples": out, "fixed": base - pre, "rows_in_memory": list.__len__(c.trace.rows),
                  "rows_total": c.trace.total}))
"""


def _variant(secs: int, variant: str, max_rows: int) -> dict:
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    sample = min(SAMPLE_S, secs // 4) or 1
    out = subprocess.run([sys.executable, "-c", _RUN, str(secs), variant, str(sample),
                          str(max_rows)],
                         capture_output=True, text=True, check=True, cwd=ROOT, env=env)
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res["sample_s"] = sample
    return res


def run(quick: bool = False) -> dict:
    secs = 20 if quick else 180
    out: dict = {"simulated_s": secs, "brokers": 9, "partitions": 50, "replication_factor": 3,
                 "records_per_s": 1000, "load_average_1min": round(os.getloadavg()[0], 2)}
    for variant in ("kept", "history", "spill"):
        r = _variant(secs, variant, 10_000 if quick else 100_000)
        s, step = r["samples"], r["sample_s"]
        per_min = (s[-1] - s[0]) / ((len(s) - 1) * step) * 60 if len(s) > 1 else 0.0
        half = len(s) // 2
        early = s[half] - s[0]
        late = s[-1] - s[half]
        out[f"{variant}_fixed_mb"] = round(r["fixed"], 1)
        out[f"{variant}_first_sample_mb"] = round(s[0], 1)
        out[f"{variant}_end_mb"] = round(s[-1], 1)
        out[f"{variant}_mb_per_sim_min"] = round(per_min, 1)
        out[f"{variant}_growth_late_vs_early"] = round(
            (late / (len(s) - 1 - half)) / (early / half), 2) if early > 0 and half else 0.0
        out[f"{variant}_late_mb_per_sim_min"] = round(
            late / ((len(s) - 1 - half) * step) * 60, 1) if len(s) - 1 > half else 0.0
        out[f"{variant}_rows_in_memory"] = r["rows_in_memory"]
    out["budget_default_mb_per_sim_min"] = BUDGET_DEFAULT_MB_PER_MIN
    out["meets_target_default_budget"] = out["kept_mb_per_sim_min"] <= BUDGET_DEFAULT_MB_PER_MIN
    out["budget_mb_per_sim_min"] = BUDGET_MB_PER_MIN
    out["budget_fixed_mb"] = BUDGET_FIXED_MB
    out["meets_target_spill_budget"] = (out["spill_mb_per_sim_min"] <= BUDGET_MB_PER_MIN
                                        and out["spill_fixed_mb"] + out["spill_first_sample_mb"]
                                        <= BUDGET_FIXED_MB)
    # the spilled run's memory is a sawtooth (a spill every ~20 simulated s), so its linearity
    # is judged by the second half's growth staying within the budget, not by a ratio
    out["meets_target_linear"] = (out["kept_growth_late_vs_early"] <= 1.5
                                  and out["spill_late_mb_per_sim_min"] <= BUDGET_MB_PER_MIN)
    return out


if __name__ == "__main__":
    for key, value in run(quick="--quick" in sys.argv).items():
        print(f"{key:36} {value}")
