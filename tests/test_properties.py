"""Property tests: random workloads and faults, every invariant checked after every event.

Examples are derandomized (the same on every run) and every scenario is plain data
(``Scenario``), so a failure prints the exact scenario and seed that reproduce it:

    python tests/test_properties.py '<scenario json from the failure message>'

``KAFKASIM_PROPERTY_EXAMPLES=200 pytest tests/test_properties.py`` explores more examples.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, note, settings
from hypothesis import strategies as st

from kafkasim.observe.checks import InvariantViolation, make_suite
from kafkasim.runtime.cluster import Cluster
from kafkasim.runtime.workload import RateWorkload
from kafkasim.settings.config import ConfigError
from kafkasim.settings.versions import version_at_least

EXAMPLES = int(os.environ.get("KAFKASIM_PROPERTY_EXAMPLES", "40"))
PROPERTY_SETTINGS = settings(
    max_examples=EXAMPLES,
    derandomize=True,
    database=None,
    deadline=None,
    print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
HERE = Path(__file__).resolve()
VERSIONS = ("3.7", "3.9", "2.8", "2.4", "1.0", "0.10.2", "0.8.2")
ROLES = ("leader", "f1", "f2")   # resolved against partition 0's leader when the fault fires


@dataclass(frozen=True)
class Scenario:
    """One reproducible run: cluster, workload, faults at simulated times (plain data)."""

    seed: int
    kafka_version: str = "3.7"
    partitions: int = 1
    acks: str = "all"                # "all", "1" or "0"
    min_isr: int = 2
    linger_ms: int = 0
    retries: int | None = 0          # None: the version's default
    rate: int = 100                  # records/s per partition
    duration_ms: int = 2000
    lag_ms: int = 10000              # replica.lag.time.max.ms
    fetch_max_bytes: int = 1048576   # replica.fetch.max.bytes (records count 100 bytes each)
    consumers: int = 2
    faults: tuple = ()               # ((at_ms, kind, *args), ...), at_ms relative to start
    settle_ms: int = 2000            # after healing everything

    def to_json(self) -> str:
        return json.dumps(dataclasses.asdict(self), separators=(",", ":"))

    @staticmethod
    def from_json(text: str) -> Scenario:
        d = json.loads(text)
        d["faults"] = tuple(tuple(f) for f in d["faults"])
        return Scenario(**d)

    def reproduce(self) -> str:
        return f"python tests/test_properties.py '{self.to_json()}'"


@dataclass
class Outcome:
    cluster: Cluster
    suite: object
    digest: str
    producer: object = None
    consumers: list = dataclasses.field(default_factory=list)


def _role(c: Cluster, role: str) -> int:
    st_ = c.inspect.partition_state("t", 0)
    leader = st_["leader"]
    followers = sorted(b for b in st_["replicas"] if b != leader)
    if role == "leader":
        return leader
    return followers[int(role[1:]) - 1]


def apply_fault(c: Cluster, fault: tuple) -> None:
    kind, args = fault[1], fault[2:]
    if kind == "pause":
        c.pause(_role(c, args[0]), args[1])
    elif kind == "slow":
        c.slow(_role(c, args[0]), network_ms=args[1], disk_ms=args[2])
    elif kind == "isolate":
        b = _role(c, args[0])
        c.partition_network([b], [o for o in sorted(c.brokers) if o != b])
    elif kind == "cut":
        a, b = _role(c, args[0]), _role(c, args[1])
        if a != b:
            c.cut(a, b)
    elif kind == "hold_fetch":
        c.hold(type="FetchResponse", dst=_role(c, args[0]))
    elif kind == "drop_fetch":
        c.transport.drop(type="FetchRequest", src=_role(c, args[0]), count=args[1])
    elif kind == "hold_alter":      # ISR changes stay pending (KIP-497 maximal ISR)
        c.hold(type="AlterPartitionRequest")
    elif kind == "drop_alter_response":
        c.transport.drop(type="AlterPartitionResponse", count=args[0])
    elif kind == "heal":
        c.heal()
    elif kind == "release":
        c.release()
    else:
        raise ValueError(f"unknown fault {fault!r}")


def _checked_polls(c: Cluster, suite) -> None:
    """Consumers (and producer.flush) run the cluster through run_until: check those events too."""
    plain = c.run_until

    def run_until(condition, timeout_ms=60000, *, check=None):
        return plain(condition, timeout_ms, check=check or suite)

    c.run_until = run_until


def run_scenario(sc: Scenario, *, check: bool = True, on_violation: str = "raise") -> Outcome:
    config = {"replica.lag.time.max.ms": sc.lag_ms}
    if version_at_least(sc.kafka_version, "0.10.1"):
        # before KIP-74 (0.10.1) it had to be at least message.max.bytes
        config["replica.fetch.max.bytes"] = sc.fetch_max_bytes
    c = Cluster(brokers=3, seed=sc.seed, kafka_version=sc.kafka_version, config=config,
                latency_ms=1, jitter_ms=1)
    suite = make_suite(on_violation=on_violation) if check else None
    if suite is not None:
        _checked_polls(c, suite)
    c.create_topic("t", partitions=sc.partitions, replication_factor=3,
                   config={"min.insync.replicas": sc.min_isr})
    pcfg = {"acks": sc.acks if sc.acks == "all" else int(sc.acks), "linger_ms": sc.linger_ms}
    if sc.retries is not None:
        pcfg["retries"] = sc.retries
    producer = c.producer(**pcfg)
    for p in range(sc.partitions):
        RateWorkload(c, producer, "t", rate=sc.rate, duration_ms=sc.duration_ms, partition=p,
                     name=f"workload-{p}")
    consumers = []
    for i in range(sc.consumers):
        try:
            cons = c.consumer(group=f"g{i}", auto_offset_reset="earliest")
        except ConfigError:   # before 0.9 the values were smallest/largest
            cons = c.consumer(group=f"g{i}", name=f"consumer-old-{i}",
                              auto_offset_reset="smallest")
        cons.assign("t")
        consumers.append(cons)
    start = c.now

    def advance_to(t: int) -> None:
        while c.now < t:
            step = min(t, c.now + 500)
            c.run_to(step, check=suite)
            for cons in consumers:
                cons.poll(timeout_ms=50)

    for fault in sorted(sc.faults, key=lambda f: f[0]):
        advance_to(start + fault[0])
        apply_fault(c, fault)
    advance_to(start + sc.duration_ms)
    c.heal()
    c.release()
    c.transport.network.undrop()
    for b in sorted(c.brokers):
        c.slow(b, 0, 0)
    advance_to(c.now + sc.settle_ms)
    for cons in consumers:
        cons.poll(timeout_ms=500)
    if suite is not None:
        suite.check_now(c)
    return Outcome(c, suite, c.trace.digest(), producer, consumers)


# ------------------------------------------------------------------------------ strategies
def fault_strategy(duration_ms: int):
    at = st.integers(0, duration_ms)
    role = st.sampled_from(ROLES)
    follower = st.sampled_from(ROLES[1:])
    return st.one_of(
        st.tuples(at, st.just("pause"), follower, st.integers(50, 3000)),
        st.tuples(at, st.just("pause"), st.just("leader"), st.integers(50, 1500)),
        st.tuples(at, st.just("slow"), follower, st.integers(0, 300), st.integers(0, 300)),
        st.tuples(at, st.just("isolate"), role),
        st.tuples(at, st.just("cut"), role, follower),
        st.tuples(at, st.just("hold_fetch"), follower),
        st.tuples(at, st.just("drop_fetch"), follower, st.integers(1, 20)),
        st.tuples(at, st.just("hold_alter")),
        st.tuples(at, st.just("drop_alter_response"), st.integers(1, 3)),
        st.tuples(at, st.just("heal")),
        st.tuples(at, st.just("release")),
    )


@st.composite
def scenarios(draw):
    duration = draw(st.integers(500, 2500))
    return Scenario(
        seed=draw(st.integers(0, 2**31 - 1)),
        kafka_version=draw(st.sampled_from(VERSIONS)),
        partitions=draw(st.integers(1, 3)),
        acks=draw(st.sampled_from(["all", "1", "0"])),
        min_isr=draw(st.integers(1, 3)),
        linger_ms=draw(st.sampled_from([0, 0, 5, 20])),
        retries=draw(st.sampled_from([0, None])),
        rate=draw(st.integers(10, 300)),
        duration_ms=duration,
        lag_ms=draw(st.sampled_from([500, 1000, 3000, 10000])),
        fetch_max_bytes=draw(st.sampled_from([1048576, 1048576, 2000, 500])),
        consumers=draw(st.integers(0, 2)),
        faults=tuple(draw(st.lists(fault_strategy(duration), max_size=4))),
    )


def _fail_message(sc: Scenario, err: BaseException) -> str:
    return (f"seed={sc.seed}: {err}\n  scenario: {sc!r}\n  reproduce: {sc.reproduce()}")


# ------------------------------------------------------------------------------ properties
@PROPERTY_SETTINGS
@given(scenarios())
def test_invariants_hold_after_every_event(sc):
    note(f"seed={sc.seed} scenario={sc.to_json()}")
    try:
        out = run_scenario(sc)
    except InvariantViolation as err:
        raise AssertionError(_fail_message(sc, err)) from err
    suite = out.suite
    assert suite.ok, _fail_message(sc, suite.first)
    # the run did something, and the checkers saw it (they follow the trace: a change of its
    # row format must not make them vacuous)
    assert len(out.cluster.records) > 0, f"seed={sc.seed}: no record was produced ({sc!r})"
    g = suite.ghost
    assert sum(map(len, g.acked.values())) == len(out.producer.acked()), \
        f"seed={sc.seed}: the ghost missed acknowledgements\n  {sc.reproduce()}"
    read = {(r.partition, r.offset) for cons in out.consumers for r in cons.consumed}
    assert sum(map(len, g.consumed.values())) == len(read), \
        f"seed={sc.seed}: the ghost missed consumed records\n  {sc.reproduce()}"


FIXED = Scenario(seed=20240607, partitions=2, acks="all", min_isr=2, linger_ms=5, rate=150,
                 duration_ms=1500, lag_ms=1000, consumers=2,
                 faults=((200, "pause", "f1", 1200), (400, "slow", "f2", 40, 10),
                         (700, "hold_fetch", "f2"), (900, "release"),
                         (1000, "isolate", "f1"), (1300, "heal")))


def test_invariants_hold_in_a_fixed_fault_scenario():
    out = run_scenario(FIXED, on_violation="collect")
    assert out.suite.ok, _fail_message(FIXED, out.suite.first)
    kinds = {row[1] for row in out.cluster.trace.rows}
    assert "isr" in kinds, "the scenario should shrink and expand the ISR"


@settings(PROPERTY_SETTINGS, max_examples=max(5, EXAMPLES // 4))
@given(scenarios())
def test_same_seed_and_actions_give_the_same_trace(sc):
    sc = dataclasses.replace(sc, duration_ms=min(sc.duration_ms, 1000), settle_ms=500)
    note(f"seed={sc.seed} scenario={sc.to_json()}")
    a = run_scenario(sc, check=False).digest
    b = run_scenario(sc, check=False).digest
    assert a == b, f"seed={sc.seed}: two runs of the same scenario differ\n  {sc.reproduce()}"


def test_checking_does_not_change_the_run():
    assert run_scenario(FIXED, check=False).digest == run_scenario(FIXED).digest, \
        f"seed={FIXED.seed}: the checkers changed the simulation"


def _digest_in_subprocess(sc: Scenario, hashseed: str) -> str:
    env = dict(os.environ, PYTHONHASHSEED=hashseed)
    repo = str(HERE.parents[1])
    env["PYTHONPATH"] = repo + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run([sys.executable, str(HERE), sc.to_json()], capture_output=True,
                          text=True, env=env, cwd=repo, timeout=300)
    assert proc.returncode == 0, (f"seed={sc.seed}, PYTHONHASHSEED={hashseed}: subprocess "
                                  f"failed\n{proc.stderr[-3000:]}")
    return proc.stdout.strip().splitlines()[-1]


def test_trace_digest_does_not_depend_on_string_hashing():
    sc = dataclasses.replace(FIXED, duration_ms=1000, settle_ms=500)
    here = run_scenario(sc, check=False).digest
    d0 = _digest_in_subprocess(sc, "0")
    d1 = _digest_in_subprocess(sc, "12345")
    assert d0 == d1 == here, (f"seed={sc.seed}: digests differ across PYTHONHASHSEED "
                              f"(0: {d0}, 12345: {d1}, this process: {here})\n  {sc.reproduce()}")


def test_different_seeds_give_different_traces():
    a = run_scenario(dataclasses.replace(FIXED, duration_ms=600), check=False).digest
    b = run_scenario(dataclasses.replace(FIXED, duration_ms=600, seed=FIXED.seed + 1),
                     check=False).digest
    assert a != b, f"seeds {FIXED.seed} and {FIXED.seed + 1} gave the same trace"


@pytest.mark.parametrize("text", [FIXED.to_json()])
def test_scenarios_round_trip_through_json(text):
    assert Scenario.from_json(text) == FIXED


if __name__ == "__main__":   # python tests/test_properties.py '<scenario json>' [--check]
    scenario = Scenario.from_json(sys.argv[1])
    outcome = run_scenario(scenario, check="--check" in sys.argv[2:])
    print(outcome.digest)
