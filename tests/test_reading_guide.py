"""docs/reading-the-core.md walks one produced record through the code: every function it names
must exist (so the guide cannot drift from the code), and the walk stays about twelve steps."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "reading-the-core.md"
NAME = re.compile(r"`(kafkasim(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")
SHORT = re.compile(r"`((?:rules|Partition|ReplicaManager|ReplicaFetcherThread|Log|Producer|"
                   r"Sender|RecordAccumulator|ProducerBatch|"
                   r"Broker|KafkaController|Cluster)\.[a-z_]+)`")
SHORT_HOME = {
    "rules": "kafkasim.core.rules",
    "Partition": "kafkasim.core.partition.Partition",
    "ReplicaManager": "kafkasim.core.replica_manager.ReplicaManager",
    "ReplicaFetcherThread": "kafkasim.core.fetcher.ReplicaFetcherThread",
    "Log": "kafkasim.core.log.Log",
    "Producer": "kafkasim.runtime.clients.producer.Producer",
    "Sender": "kafkasim.runtime.clients.sender.Sender",
    "RecordAccumulator": "kafkasim.runtime.clients.record_accumulator.RecordAccumulator",
    "ProducerBatch": "kafkasim.runtime.clients.producer_batch.ProducerBatch",
    "Broker": "kafkasim.runtime.broker.Broker",
    "KafkaController": "kafkasim.control.controller.KafkaController",
    "Cluster": "kafkasim.runtime.cluster.Cluster",
}


def _resolve(dotted: str):
    parts = dotted.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ModuleNotFoundError:
            continue
        for attr in parts[i:]:
            obj = getattr(obj, attr)
        return obj
    raise ModuleNotFoundError(dotted)


def test_every_function_the_guide_names_exists():
    text = GUIDE.read_text()
    names = set(NAME.findall(text))
    for short in SHORT.findall(text):
        head, _, tail = short.partition(".")
        names.add(f"{SHORT_HOME[head]}.{tail}")
    assert len(names) >= 20
    missing = []
    for n in sorted(names):
        try:
            _resolve(n)
        except (AttributeError, ModuleNotFoundError):
            missing.append(n)
    assert not missing, f"docs/reading-the-core.md names functions that do not exist: {missing}"


def test_the_walk_is_about_twelve_steps():
    rows = [line for line in GUIDE.read_text().splitlines() if re.match(r"\| \d+ \|", line)]
    assert 8 <= len(rows) <= 13


# -- proven by execution --------------------------------------------------------------------------
PACKAGE = GUIDE.parent.parent / "kafkasim"
MODULE_LINE = re.compile(r"^- `(kafkasim/[a-z_/]+\.py)`", re.M)


def _walk_one_record() -> tuple[set[str], set[str]]:
    """Run one acks=all record, from Producer.send to its ack, in a default 3-broker cluster
    (replication factor 3) that has settled; return the qualified names of the kafkasim
    functions that ran (``module.Class.method``) and the files they are in."""
    import sys

    from kafkasim.runtime.cluster import Cluster

    c = Cluster(brokers=3, seed=1)
    c.create_topic("t", partitions=1, replication_factor=3)
    producer = c.producer(acks="all")
    c.run(5000)
    ran: set[tuple[str, str]] = set()
    root = str(PACKAGE) + "/"

    def profile(frame, event, arg):
        if event == "call" and frame.f_code.co_filename.startswith(root):
            ran.add((frame.f_code.co_filename, frame.f_code.co_qualname))

    sys.setprofile(profile)
    try:
        record = producer.send("t", "v", partition=0)
        for _ in range(1000):
            if record.acked:
                break
            c.run(1)
    finally:
        sys.setprofile(None)
    assert record.acked, f"the record was not acknowledged within 1 s: {record}"
    functions, files = set(), set()
    for filename, qualname in ran:
        rel = Path(filename).relative_to(PACKAGE.parent)
        files.add(rel.as_posix())
        functions.add(".".join(rel.with_suffix("").parts) + "." + qualname)
    return functions, files


def _table_functions() -> list[str]:
    names = []
    for line in GUIDE.read_text().splitlines():
        if re.match(r"\| \d+ \|", line):
            names += NAME.findall(line.split("|")[3])
    return names


def test_every_function_of_the_walk_runs_for_one_record():
    ran, _ = _walk_one_record()
    named = _table_functions()
    assert len(named) >= 12
    missing = [n for n in named if n not in ran]
    assert not missing, ("docs/reading-the-core.md names functions that did not run for one "
                         f"acks=all record: {missing}")


def test_the_walk_crosses_exactly_the_modules_the_guide_names():
    _, files = _walk_one_record()
    listed = set(MODULE_LINE.findall(GUIDE.read_text()))
    assert listed, "the guide lists no modules (lines '- `kafkasim/....py`')"
    assert files <= listed, ("one acks=all record runs code in modules the guide does not name: "
                             f"{sorted(files - listed)}")
    assert listed <= files, \
        f"the guide names modules the walk does not cross: {sorted(listed - files)}"
