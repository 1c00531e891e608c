"""Issue 33, "the stories on the page": notebooks 07-09 build their headline failure stories in
visible cells with the Cluster API (a function of the cluster the learner can edit and re-run),
and the player records such a function (``Player(cluster, story=fn)``).

Each story is taken from the notebook itself (its cell tagged "story"; only the top-level
functions are run here) and must tell what the scenario file under ``kafkasim/scenarios`` tells,
which stays for the CLI and the golden traces: the same acknowledged, refused and lost records,
the same leaders, the same replica logs and the same checker verdicts."""

from __future__ import annotations

import ast
import json
import re
from pathlib import Path

import pytest
from clusters import make_cluster

from kafkasim.observe.checks import attach
from kafkasim.runtime.cluster import Cluster
from kafkasim.scenarios.scenario import Scenario, lost_acked
from kafkasim.widgets import Player

NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks"
OWNED = ("07-controller-and-failover", "08-clean-and-unclean-election",
         "09-leader-epoch-and-truncation", "02a-in-sync-replicas")
#: what loading a scenario file looks like in a code cell
SCENARIO_LOAD = re.compile(r"Scenario\s*\.\s*(named|load|from_\w+|parse)\s*\(|\.toml\b|"
                           r"\bScenario\s*\(")


def _cells(stem: str, lang: str = "") -> list[dict]:
    path = NOTEBOOKS / lang / f"{stem}.ipynb" if lang else NOTEBOOKS / f"{stem}.ipynb"
    return json.loads(path.read_text())["cells"]


def _tags(cell: dict) -> list[str]:
    return cell.get("metadata", {}).get("tags", [])


@pytest.mark.parametrize("lang", ["", "ko"])
@pytest.mark.parametrize("stem", OWNED)
def test_no_scenario_file_is_loaded_outside_cli_demos(stem, lang):
    """A story is a cell the learner can change: no code cell loads a scenario file, except a
    cell tagged "cli-demo" that shows the command-line tool."""
    loads = [i for i, c in enumerate(_cells(stem, lang))
             if c["cell_type"] == "code" and "cli-demo" not in _tags(c)
             and SCENARIO_LOAD.search("".join(c["source"]))]
    assert loads == [], f"{lang or 'en'}/{stem}: cells {loads} load a scenario file"


def test_the_scenario_load_pattern_finds_loads():
    for src in ('Scenario.named("jepsen-2013-unsafe").run()', "Scenario.load('x.toml')",
                "Player(Scenario.named('kip101-scenario2-old'))"):
        assert SCENARIO_LOAD.search(src), src
    assert not SCENARIO_LOAD.search("from kafkasim.scenarios.scenario import lost_acked")


def _namespace() -> dict:
    ns: dict = {}
    exec("from kafkasim.course import *\n"
         "from kafkasim.observe.checks import attach\n"
         "from kafkasim.scenarios.scenario import lost_acked\n"
         "KAFKA_VERSION = '4.3'\nSEED = 8\n", ns)
    return ns


def _story_functions(stem: str, *names: str) -> dict:
    """The named top-level functions of ``stem``'s cells tagged "story", defined in a fresh
    namespace (the notebook's code as it stands, not a copy kept in the tests)."""
    ns = _namespace()
    found = set()
    for cell in _cells(stem):
        if cell["cell_type"] != "code" or "story" not in _tags(cell):
            continue
        tree = ast.parse("".join(cell["source"]))
        defs = [n for n in tree.body if isinstance(n, ast.FunctionDef)]
        exec(compile(ast.Module(body=defs, type_ignores=[]), stem, "exec"), ns)
        found |= {d.name for d in defs}
    missing = set(names) - found
    assert not missing, f"{stem}: no story cell defines {sorted(missing)}"
    return ns


def _scenario(name: str):
    run = Scenario.named(name).run(check=True)
    assert all(e["ok"] for e in run.expectations), name
    return run


def _log(c: Cluster, broker: int, topic: str) -> list:
    return [value for _offset, _epoch, value in c.log_records(broker, topic)]


@pytest.mark.parametrize("args, name", [
    (("0.8.2", {"replica.lag.max.messages": 5, "replica.lag.time.max.ms": 10000}, 3),
     "seed-lag-messages-steady"),
    (("0.8.2", {"replica.lag.max.messages": 5, "replica.lag.time.max.ms": 10000}, 10),
     "seed-lag-messages-burst"),
    (("3.7", {"replica.lag.time.max.ms": 10000}, 10), "seed-lag-time-burst"),
])
def test_notebook_02a_lag_rule_runs_tell_the_scenarios(args, name):
    """02a's lag_run (its cell tagged "story") gives the ISR meters of the seed-lag-* files."""
    from kafkasim.course.common import meter_counts

    ns: dict = {}
    exec("from kafkasim.course import *\nfrom kafkasim.course.isr import *\n", ns)
    for cell in _cells(OWNED[3]):
        if cell["cell_type"] == "code" and "story" in _tags(cell):
            exec("".join(cell["source"]), ns)
    c = ns["lag_run"](*args)
    assert meter_counts(c) == meter_counts(_scenario(name).cluster)
    assert c.kafka_version == args[0]


@pytest.mark.parametrize("kw, name", [
    ({}, "jepsen-2013-unsafe"),
    ({"min_isr": 2}, "jepsen-2013-min-isr-2"),
    ({"unclean": False}, "jepsen-2013-unclean-off"),
])
def test_notebook_08_jepsen_story_tells_the_scenario(kw, name):
    ns = _story_functions(OWNED[1], "jepsen_cluster", "jepsen_2013")
    c = ns["jepsen_cluster"](**kw)
    p = ns["jepsen_2013"](c)
    run = _scenario(name)
    q = run.producers["p"]
    assert (len(p.acked()), len(p.failed()), len(lost_acked(c, [p])), c.leader("jepsen")) == \
        (len(q.acked()), len(q.failed()), len(lost_acked(run.cluster, [q])),
         run.cluster.leader("jepsen"))


def test_notebook_08_jepsen_story_loses_the_k_writes_by_an_unclean_election():
    ns = _story_functions(OWNED[1], "jepsen_cluster", "jepsen_2013")
    c = ns["jepsen_cluster"]()
    suite = attach(c, on_violation="collect")
    p = ns["jepsen_2013"](c)
    lost = {c.records.value(r) for r in lost_acked(c, [p])}
    assert lost == {f"k{i}" for i in range(5)}
    assert suite.violations == []                      # every loss is allowed: unclean on
    assert {v.invariant for v in suite.allowed} >= {"NoAckedLoss"}
    assert _log(c, 1, "jepsen") == ["w0", "w1", "w2"]   # broker 1 came back and truncated


@pytest.mark.parametrize("version, name", [("4.0", "kip966-last-replica-standing-elr-off"),
                                           ("4.1", "kip966-last-replica-standing-elr-on")])
def test_notebook_08_elr_story_tells_the_scenario(version, name):
    ns = _story_functions(OWNED[1], "payments_cluster", "last_replica_standing")
    c = ns["payments_cluster"](version)
    p, seen = ns["last_replica_standing"](c)
    run = _scenario(name)
    lost = len(lost_acked(c, [p]))
    assert lost == len(lost_acked(run.cluster, list(run.producers.values())))
    assert (lost > 0) == (version == "4.0")            # ELR off loses, ELR on does not
    assert c.leader("payments") == run.cluster.leader("payments")
    # who leads once broker 1 is fenced: nobody without ELR, broker 2 (from the ELR) with it
    fenced = dict(seen)["broker 1 fenced"]
    assert ("Leader: none" if version == "4.0" else "Leader: 2") in fenced
    assert "Elr: 2" in dict(seen)["broker 1 is the last replica standing"] or version == "4.0"


@pytest.mark.parametrize("unclean", [False, True])
def test_notebook_08_zookeeper_era_offline_pair_tells_the_scenario(unclean):
    ns = _namespace()
    for cell in _cells(OWNED[1]):
        src = "".join(cell["source"])
        if cell["cell_type"] == "code" and src.startswith(("def orders_cluster",
                                                            "def isolate_then_kill_leader")):
            exec(src, ns)
    c, p, _ = ns["orders_cluster"](unclean, version="3.7")
    ns["isolate_then_kill_leader"](c, p, ["only-on-1"])
    run = _scenario("offline-unclean-on" if unclean else "offline-unclean-off")
    assert c.leader("orders") == run.cluster.leader("events")
    assert c.isr("orders") == ([2] if unclean else [1])   # ZooKeeper keeps the dead member


@pytest.mark.parametrize("version, name", [("0.10.2", "kip101-scenario2-old"),
                                           ("0.11.0", "kip101-scenario2-fixed")])
def test_notebook_09_kip101_scenario2_story_tells_the_scenario(version, name):
    ns = _story_functions(OWNED[2], "both_lose_power", "kip101_scenario2")
    c = ns["both_lose_power"](version)
    suite = attach(c, on_violation="collect")
    ns["kip101_scenario2"](c)
    run = _scenario(name)
    for b in (1, 2):
        assert _log(c, b, "kip101") == _log(run.cluster, b, "kip101")
    bad = sorted({v.invariant for v in suite.violations})
    assert bad == sorted({v.invariant for v in run.check.violations})
    assert bad == (["LogMatching"] if version == "0.10.2" else [])


@pytest.mark.parametrize("version, name", [("0.11.0", "kip279-fast-failovers-old"),
                                           ("2.0", "kip279-fast-failovers-fixed")])
def test_notebook_09_kip279_story_tells_the_scenario(version, name):
    ns = _story_functions(OWNED[2], "fast_failovers", "kip279")
    c = ns["fast_failovers"](version)
    suite = attach(c, on_violation="collect")
    ns["kip279"](c)
    run = _scenario(name)
    for b in (1, 2):
        assert _log(c, b, "t") == _log(run.cluster, b, "t")
    assert (_log(c, 2, "t")[3] == "B-only") == (version == "0.11.0")
    assert sorted({v.invariant for v in suite.violations}) == \
        sorted({v.invariant for v in run.check.violations})


def test_notebook_07_failover_story_tells_the_scenario():
    ns = _story_functions(OWNED[0], "failover_cluster", "controller_failover")
    c = ns["failover_cluster"]()
    first = []
    c.at(10000, lambda cl: first.append(cl.controller_id()))
    p = ns["controller_failover"](c)
    run = _scenario("kraft-controller-failover")
    rc = run.cluster
    assert c.kafka_version == "4.3"
    assert first == [3002]                             # seed 4: the quorum elected 3002 first
    # after the second failover: 3001 at 4.1 (the voters send UpdateRaftVoter to each new
    # leader); 3000 from 4.2, whose leader skips the BeginQuorumEpoch heartbeat to voters that
    # fetched (KAFKA-16926): the standbys time out together and split epoch 2
    assert (c.controller_id(), rc.controller_id()) == (3000, 3001)
    assert [c.leader("orders", i) for i in range(3)] == [rc.leader("orders", i) for i in range(3)]
    assert lost_acked(c, [p]) == [] and len(p.failed()) == 0
    assert c.isr("orders") == rc.isr("orders") == [2, 3, 1]



def _controller_story(*names: str) -> dict:
    """07's story functions with the notebook's own helper module (kafkasim.course.controller)."""
    import kafkasim.course.controller as helpers

    ns = _story_functions(OWNED[0], *names)
    ns.update({k: getattr(helpers, k) for k in helpers.__all__})
    return ns


def test_notebook_07_quorum_loss_story_tells_the_scenario():
    """Section 6's player story: two controllers down freeze the metadata (dead broker 2 still
    leads events-0) until one returns; then broker 1 leads and the waiting write is acknowledged,
    as scenario kraft-quorum-loss tells it (the notebook runs 4.3, the file 4.1)."""
    ns = _controller_story("events_cluster", "lose_two_controllers", "frozen_then_back")
    c = ns["events_cluster"]()
    frozen = []
    c.at(29000, lambda cl: frozen.append((cl.controller_id(), cl.leader("events", 0))))
    ns["frozen_then_back"](c)
    run = _scenario("kraft-quorum-loss")
    assert frozen == [(-1, 2)]
    assert c.leader("events", 0) == run.cluster.leader("events", 0) == 1
    p = c.clients["p"]
    assert len(p.acked()) == 1 and lost_acked(c, [p]) == []
    assert lost_acked(run.cluster, [run.cluster.clients["p"]]) == []


def test_notebook_07_dynamic_quorum_story_tells_the_scenario():
    """Section 7's KIP-853 story: 3003 added (four voters), then the active controller removes
    itself and another voter leads in a higher epoch, every acks=all write acknowledged: the
    voter sets and the removed leader of scenario kraft-dynamic-quorum (same seed, 4.3 not 4.1)."""
    ns = _controller_story("dynamic_cluster", "add_then_remove")
    c = ns["dynamic_cluster"]()
    first = c.controller_id()
    grown = ns["add_then_remove"](c)
    run = _scenario("kraft-dynamic-quorum")
    assert first == 3001 and grown == [3000, 3001, 3002, 3003]
    assert list(c.kraft.voters) == list(run.cluster.kraft.voters) == [3000, 3002, 3003]
    assert c.controller_id() in (3000, 3002, 3003) and c.kraft.describe_quorum(status=True) \
        .split("LeaderEpoch:")[1].split()[0] == "2"
    p = c.clients["p"]
    assert len(p.acked()) == 4 and not p.failed() and lost_acked(c, [p]) == []


def test_notebook_07_failover_prose_names_the_runs_figures():
    """Section 9's reading of the player ("fenced at 28.57 s ... 3001 is active in epoch 3 from
    12.8 s") is the story's own run: a change of behaviour that moves them fails here, not in a
    reader's eyes (the paragraph once named 3000 and 29.26 s from an older run)."""
    ns = _story_functions(OWNED[0], "failover_cluster", "controller_failover")
    c = ns["failover_cluster"]()
    ns["controller_failover"](c)
    rows = list(c.trace.rows)
    fenced = next(r[0] for r in rows if r[1] == "broker_fenced" and r[0] > 20000
                  and "broker 1" in str(r[5]))
    active = next(r for r in rows if r[1] == "controller_active" and r[0] > 10000)
    epoch = re.search(r"epoch (\d+)", str(active[5])).group(1)
    prose = re.sub(r"\s+", " ", " ".join("".join(cell["source"]) for cell in _cells(OWNED[0])
                                          if cell["cell_type"] == "markdown"))
    assert f"fenced at {fenced / 1000:.2f} s" in prose
    assert f"{active[2]} is active in epoch {epoch} from {active[0] / 1000:.1f} s" in prose

def test_notebook_07_split_vote_details_name_the_runs_standbys():
    """Section 5's details ("What the standbys did") tell the raft events its own cell prints:
    the two standbys that became Candidates in epoch 2 (the split vote) and the one that won
    epoch 3. The saved output is the run's (nbval re-runs the notebook and compares); the
    paragraph once named the other story's controllers."""
    cells = _cells(OWNED[0])
    texts = ["".join(o.get("text", "")) for c in cells if c["cell_type"] == "code"
             for o in c.get("outputs", [])]
    out = "\n".join(t for t in texts if "raft_transition" in t)
    split = sorted(set(re.findall(r"(\d{4})\s+Prospective -> Candidate in epoch 2", out)))
    winner = re.search(r"(\d{4})\s+Candidate -> Leader in epoch 3", out).group(1)
    assert len(split) == 2 and winner in split, (split, winner)
    prose = re.sub(r"\s+", " ", " ".join("".join(cell["source"]) for cell in cells
                                          if cell["cell_type"] == "markdown"))
    assert f"{split[0]} and {split[1]} asked for a **Pre-Vote**" in prose
    assert f"{winner}'s ended first and it won epoch 3" in prose


def test_notebook_07_reregistration_prose_names_the_runs_figures():
    """Section 7: after a controlled shutdown the old incarnation's session (Kafka 4.0+,
    BrokerHeartbeatTracker: fenced or not) refuses the new one until 9 s after its last heartbeat;
    the registration retries back off. The prose's figures are this run's (section 7's cell)."""
    from kafkasim.runtime.workload import RateWorkload

    c = Cluster(brokers=3, seed=1, kafka_version="4.3")
    c.create_topic("orders", 1, 3, assignment=[[2, 3, 1]], config={"min.insync.replicas": 2})
    RateWorkload(c, c.producer("p", acks="all"), "orders", rate=20, duration_ms=60000)
    c.run_to(5000)
    c.shutdown(2)
    c.run(3000)
    c.start(2)
    c.run_until(lambda cl: len(cl.isr("orders")) == 3, 30000)
    rows = list(c.trace.rows)
    beat = max(r[0] for r in rows if r[0] < 8000 and r[1] == "recv"
               and r[5][:2] == ("BrokerHeartbeatRequest", 2))
    refused = [r[0] for r in rows if r[1] == "broker_registration_failed" and r[2] == 2]
    registered = next(r[0] for r in rows if r[1] == "broker_registered" and r[0] > 8000)
    rejoined = next(r[0] for r in rows if r[1] == "controller" and "ISR [3, 1, 2]" in str(r[5]))
    session_end = beat + 9000
    assert refused and max(refused) <= session_end < registered
    assert all("DUPLICATE_BROKER_REGISTRATION" in str(r[5]) for r in rows
               if r[1] == "broker_registration_failed")
    prose = re.sub(r"\s+", " ", " ".join("".join(cell["source"]) for cell in _cells(OWNED[0])
                                          if cell["cell_type"] == "markdown"))
    assert f"to {session_end / 1000:.2f} s: its last heartbeat + 9 s" in prose
    assert f"rejoins the ISR at {rejoined / 1000:.2f} s" in prose


# -- the player records a story ----------------------------------------------------------------
def _small_cluster() -> Cluster:
    return make_cluster(seed=3, kafka_version="3.7", topic="t", assignment=[[1, 2, 3]])


def _crash_story(c: Cluster):
    p = c.producer("p", acks="all")
    p.send("t", "a", partition=0)
    c.run(2000)
    c.crash(1)
    c.run(20000)
    return p


def test_player_records_a_story_and_can_scrub_back_to_its_start():
    direct = _small_cluster()
    _crash_story(direct)
    c = _small_cluster()
    start = c.now
    player = Player(c, story=_crash_story)
    assert player.start_ms == start and player.horizon == direct.now
    assert player.cluster.trace.digest() == direct.trace.digest()
    assert "_crash_story" in player.about
    player.seek(start + 1000)
    assert player.cluster.brokers[1].state == "running"
    player.seek(player.horizon)
    assert player.cluster.brokers[1].state == "stopped"
    assert player.cluster.leader("t") == direct.leader("t") != 1
    player.seek(start + 1000)          # acting in the past forks a new future
    player.crash(2)
    player.run(5000)
    assert player.cluster.brokers[2].state == "stopped"


def test_player_story_needs_a_cluster_and_a_function():
    with pytest.raises(TypeError, match="story must be a function"):
        Player(_small_cluster(), story="jepsen")
    with pytest.raises(TypeError, match="needs a Cluster"):
        Player(Scenario.named("jepsen-2013-unsafe"), story=_crash_story)
