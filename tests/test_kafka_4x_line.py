"""The Kafka 4.1-4.4 line (issue 30): the 4.4 profile, what each 4.x change touches, and the
changes kafkasim names as not modelled (docs/kraft.md, "Kafka 4.1 to 4.4")."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkasim.runtime.cluster import Cluster
from kafkasim.scenarios.scenario import Scenario, builtin_dir, builtin_names
from kafkasim.settings import versions
from kafkasim.settings.versions import rule_names, rules_for

DOC = Path(__file__).resolve().parents[1] / "docs" / "kraft.md"

#: the 4.1-4.4 changes kafkasim does not model: the first cell of their row in docs/kraft.md
#: (KAFKA-16538's kraft.version upgrade and controller.quorum.auto.join.enable are modelled since
#: the KIP-853 voter set: tests/test_kraft_reconfig.py)
NOT_MODELLED_4X = (
    "KIP-1066",
    "KIP-1241",
)


def _four_x_rows() -> list[list[str]]:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Kafka 4.1 to 4.4", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    return [[cell.strip() for cell in row.strip("|").split("|")] for row in rows[1:]
            if not set(row) <= {"|", "-", " "}]


@pytest.mark.parametrize("change", NOT_MODELLED_4X)
def test_each_unmodelled_4x_change_is_named_in_the_docs(change):
    rows = [r for r in _four_x_rows() if change in r[0]]
    assert len(rows) == 1, change
    assert rows[0][-1].startswith("not modelled"), rows[0]


def test_each_modelled_4x_change_names_a_rule_or_a_test_that_exists():
    """A modelled row names its rule (``rule `name```, a rule of the version table) or, for the
    quorum's features, which are not rules, the test file that drives them."""
    modelled = [r for r in _four_x_rows() if not r[-1].startswith("not modelled")]
    assert len(modelled) >= 6
    tests_dir = Path(__file__).resolve().parent
    for row in modelled:
        if row[-1].startswith("rule "):
            named = re.findall(r"`([a-z_0-9]+)`", row[-1].split(";")[0])
            assert named and all(n in rule_names() for n in named), row
        else:
            files = re.findall(r"`tests/(test_[a-z_0-9]+\.py)`", row[-1])
            assert files and all((tests_dir / f).is_file() for f in files), row


def test_a_4_4_version_maps_to_its_own_profile_and_4_3_stays_the_default():
    assert versions.normalize_version("4.4.0") == "4.4"
    assert versions.check_known_version("4.4.1") == "4.4"
    assert versions.DEFAULT_VERSION == "4.3"
    assert rules_for("4.4").version == "4.4"


def test_4_4_clusters_format_with_the_4_4_metadata_version():
    # MetadataVersion: IBP_4_4_IV2(33) is the 4.4 line's latest level (unverified by tag)
    c = Cluster(3, seed=2, kafka_version="4.4")
    assert c.kraft.settings["metadata.version"] == "4.4-IV2"


@pytest.mark.parametrize("name", [n for n in builtin_names()
                                  if versions.version_at_least(
                                      Scenario.load(builtin_dir() / f"{n}.toml").data
                                      .get("kafka_version") or versions.DEFAULT_VERSION, "4.1")])
def test_4_1_scenarios_hold_on_4_4(name):
    """4.1 -> 4.4 changes no modelled replication rule but the 4.2 heartbeat-interval check, so
    every 4.1+ scenario's expectations hold on 4.4 too. (4.0's KIP-966 story without ELR does
    not: ELR is on by default from 4.1.)"""
    sc = Scenario.load(builtin_dir() / f"{name}.toml")
    sc.data["kafka_version"] = "4.4"
    run = sc.run()
    assert run.expectations and all(e["ok"] for e in run.expectations)


def test_the_4_0_scenario_runs_on_4_4_where_elr_keeps_the_acked_records():
    """The one 4.0 scenario, KIP-966's "last replica standing" without ELR, on 4.4: it runs,
    and the expectations that fail are exactly the two that say ELR is off (ELR is on by
    default from 4.1: broker 2 is recorded in the ELR, and once broker 1 is fenced broker 2
    leads from it with ISR [2, 3]). Instead of broker 1's re-election with its shortened log
    (the story's end, which the await for it would wait for in vain) broker 2 keeps leading,
    cleanly, and no acknowledged record is lost."""
    sc = Scenario.load(builtin_dir() / "kip966-last-replica-standing-elr-off.toml")
    sc.data["kafka_version"] = "4.4"
    steps = sc.data["steps"]
    start = max(i for i, st in enumerate(steps) if st.get("do") == "start")
    sc.data["steps"] = steps[:start + 1] + [
        {"do": "run", "ms": 30000},
        {"do": "expect", "label": "ELR", "that": {
            "lost_acked": {"equals": 0}, "unclean_elections": {"equals": 0},
            "leader": {"topic": "payments", "partition": 0, "is": 2}}}]
    run = sc.run()
    failed = [(e["label"], e["actual"]) for e in run.expectations if not e["ok"]]
    assert failed == [
        ("ELR is off in 4.0: broker 2 left the ISR below min ISR but no ELR records it",
         {"elr": [2], "lost_acked": 0}),
        ("fenced after broker.session.timeout.ms: no leader, the ISR stays [1] although "
         "broker 2 has every committed record", {"leader": 2, "isr": [2, 3]})]
    assert run.expectations[-1]["ok"]


@pytest.mark.parametrize("version", ["4.0", "4.4"])
def test_kip_1166_leaves_data_partition_fetches_parked(version):
    """KIP-1166 (4.1) lets a KRaft leader answer a parked Fetch when only the follower's HW is
    stale (``raft_fast_hwm_replication``, KafkaRaftClient). The broker's data partitions are not
    part of it: a follower still learns a new HW from the fetch the leader parks for
    replica.fetch.wait.max.ms (500 ms), on 4.4 as on 4.0."""
    c = Cluster(2, seed=1, kafka_version=version)
    c.create_topic("t", 1, 2)
    c.run(3000)
    t0 = c.now
    c.producer(acks=1).send("t", "x")
    c.run(2000)
    hw_rows = [(r[0] - t0, r[2], r[5]) for r in c.trace.rows if r[1] == "hw" and r[0] >= t0]
    leader = c.leader("t")
    follower = 3 - leader
    t_leader = next(t for t, b, hw in hw_rows if b == leader and hw == 1)
    t_follower = next(t for t, b, hw in hw_rows if b == follower and hw == 1)
    assert t_follower - t_leader >= 500 - 5
    assert rules_for(version).raft_fast_hwm_replication is (version == "4.4")
