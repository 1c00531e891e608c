"""docs/reading-the-core.md walks one produced record through the code: every function it names
must exist (so the guide cannot drift from the code), and the walk stays about twelve steps."""

from __future__ import annotations

import importlib
import re
from pathlib import Path

GUIDE = Path(__file__).resolve().parent.parent / "docs" / "reading-the-core.md"
NAME = re.compile(r"`(kafkasim(?:\.[A-Za-z_][A-Za-z0-9_]*)+)`")
SHORT = re.compile(r"`((?:rules|Partition|ReplicaManager|ReplicaFetcherThread|Log|Producer|"
                   r"Broker|KafkaController|Cluster)\.[a-z_]+)`")
SHORT_HOME = {
    "rules": "kafkasim.core.rules",
    "Partition": "kafkasim.core.partition.Partition",
    "ReplicaManager": "kafkasim.core.replica_manager.ReplicaManager",
    "ReplicaFetcherThread": "kafkasim.core.fetcher.ReplicaFetcherThread",
    "Log": "kafkasim.core.log.Log",
    "Producer": "kafkasim.runtime.clients.producer.Producer",
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
