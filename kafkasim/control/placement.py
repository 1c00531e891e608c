"""Replica placement: Kafka's ``AdminUtils.assignReplicasToBrokers`` (fact sheet §9a).

Rack-unaware and rack-aware variants, bit-exact given the start index and shift. Real Kafka draws
them from an unseeded static ``java.util.Random``; we draw them from a ``JavaRandom`` seeded by the
simulation seed, so placement is reproducible.
"""

from __future__ import annotations

from kafkasim.settings.javautil import JavaRandom


class PlacementError(ValueError):
    """Impossible assignment: InvalidReplicationFactorException, or with ``error``
    INVALID_PARTITIONS an InvalidPartitionsException (Kafka's error name in ``error``)."""

    def __init__(self, message: str, error: str = "INVALID_REPLICATION_FACTOR") -> None:
        super().__init__(message)
        self.error = error


def _replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def _check(n_partitions: int, rf: int, n_brokers: int) -> None:
    if n_partitions <= 0:
        raise PlacementError(f"Number of partitions must be larger than 0, got {n_partitions}",
                             "INVALID_PARTITIONS")
    if rf <= 0:
        raise PlacementError(f"Replication factor must be larger than 0, got {rf}")
    if rf > n_brokers:
        raise PlacementError(
            f"Replication factor: {rf} larger than available brokers: {n_brokers}.")


def assign_replicas_to_brokers(
    broker_ids: list[int], n_partitions: int, rf: int, *,
    racks: dict[int, str] | None = None, rng: JavaRandom | None = None,
    fixed_start_index: int = -1, start_partition_id: int = -1,
) -> dict[int, list[int]]:
    """Partition id -> replica list (first = preferred leader), as Kafka would assign it."""
    brokers = sorted(broker_ids)
    _check(n_partitions, rf, len(brokers))
    racks = racks or {}
    with_rack = [b for b in brokers if b in racks]
    if with_rack and len(with_rack) != len(brokers):
        missing = [b for b in brokers if b not in racks]
        raise PlacementError(
            f"Not all brokers have rack information for replica rack aware assignment. "
            f"Brokers without a rack: {missing}")
    rng = rng or JavaRandom(0)
    if with_rack:
        return _assign_rack_aware(brokers, racks, n_partitions, rf, rng,
                                  fixed_start_index, start_partition_id)
    return _assign_rack_unaware(brokers, n_partitions, rf, rng,
                                fixed_start_index, start_partition_id)


def _draws(n: int, rng: JavaRandom, fixed_start_index: int) -> tuple[int, int]:
    start = fixed_start_index if fixed_start_index >= 0 else rng.next_int(n)
    shift = fixed_start_index if fixed_start_index >= 0 else rng.next_int(n)
    return start, shift


def _partitions(n, n_partitions, rng, fixed_start_index, start_partition_id):
    """(partition, index of its first replica, shift) in AdminUtils' order: the shift grows
    by one each time the partition id wraps around the broker list."""
    start_index, shift = _draws(n, rng, fixed_start_index)
    p = max(0, start_partition_id)
    for _ in range(n_partitions):
        if p > 0 and p % n == 0:
            shift += 1
        yield p, (p + start_index) % n, shift
        p += 1


def _assign_rack_unaware(brokers, n_partitions, rf, rng, fixed_start_index, start_partition_id):
    n = len(brokers)
    out: dict[int, list[int]] = {}
    for p, first, shift in _partitions(n, n_partitions, rng, fixed_start_index,
                                       start_partition_id):
        out[p] = [brokers[first]] + [brokers[_replica_index(first, shift, j, n)]
                                     for j in range(rf - 1)]
    return out


def rack_alternated_broker_list(brokers: list[int], racks: dict[int, str]) -> list[int]:
    """Brokers interleaved by rack: one per rack in rack-name order, round robin."""
    by_rack: dict[str, list[int]] = {}
    for b in sorted(brokers):
        by_rack.setdefault(racks[b], []).append(b)
    names = sorted(by_rack)
    out: list[int] = []
    i = 0
    while len(out) < len(brokers):
        for name in names:
            group = by_rack[name]
            if i < len(group):
                out.append(group[i])
        i += 1
    return out


def _assign_rack_aware(brokers, racks, n_partitions, rf, rng, fixed_start_index,
                       start_partition_id):
    alternated = rack_alternated_broker_list(brokers, racks)
    n = len(alternated)
    num_racks = len({racks[b] for b in brokers})
    out: dict[int, list[int]] = {}
    for p, first, shift in _partitions(n, n_partitions, rng, fixed_start_index,
                                       start_partition_id):
        leader = alternated[first]
        replicas = [leader]
        racks_with = [racks[leader]]
        k = 0
        for _j in range(rf - 1):
            while True:
                broker = alternated[_replica_index(first, shift * num_racks, k, n)]
                rack = racks[broker]
                k += 1
                rack_ok = rack not in racks_with or len(racks_with) == num_racks
                broker_ok = broker not in replicas or len(replicas) == n
                if rack_ok and broker_ok:
                    replicas.append(broker)
                    if rack not in racks_with:
                        racks_with.append(rack)
                    break
        out[p] = replicas
    return out
