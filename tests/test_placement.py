"""Behaviour tests for replica placement and the Java-exact helpers (fact sheet §4 threads, §9a).

murmur2 vectors are Kafka's own: clients/src/test/java/org/apache/kafka/common/utils/UtilsTest.java
(``testMurmur2``), read from github:apache/kafka at commit f55581dc7395.
"""

from __future__ import annotations

import pytest

from kafkasim.control.placement import (
    PlacementError,
    assign_replicas_to_brokers,
    rack_alternated_broker_list,
)
from kafkasim.core.fetcher import fetcher_id_for
from kafkasim.settings.javautil import JavaRandom, java_string_hash, murmur2, to_positive

RACKS = {0: "r1", 1: "r3", 2: "r3", 3: "r2", 4: "r2", 5: "r1"}


# ------------------------------------------------------------------------------ rack-unaware


def test_rack_unaware_fact_sheet_check():
    a = assign_replicas_to_brokers([0, 1, 2, 3, 4], 6, 3, fixed_start_index=0)
    assert a[0] == [0, 1, 2]
    assert a[4] == [4, 0, 1]
    assert a[5] == [0, 2, 3]  # p5 mod 5 == 0: shift became 1


def test_rack_unaware_full_layout_and_leader_spread():
    a = assign_replicas_to_brokers([0, 1, 2, 3, 4], 10, 3, fixed_start_index=0)
    assert a == {
        0: [0, 1, 2], 1: [1, 2, 3], 2: [2, 3, 4], 3: [3, 4, 0], 4: [4, 0, 1],
        5: [0, 2, 3], 6: [1, 3, 4], 7: [2, 4, 0], 8: [3, 0, 1], 9: [4, 1, 2],
    }
    for reps in a.values():
        assert len(set(reps)) == 3


def test_broker_list_is_sorted_by_id_first():
    assert assign_replicas_to_brokers([4, 2, 0, 3, 1], 6, 3, fixed_start_index=0) == \
        assign_replicas_to_brokers([0, 1, 2, 3, 4], 6, 3, fixed_start_index=0)


def test_broker_ids_are_used_not_indexes():
    a = assign_replicas_to_brokers([10, 20, 30], 2, 2, fixed_start_index=0)
    assert a == {0: [10, 20], 1: [20, 30]}


def test_start_partition_id_continues_the_layout():
    full = assign_replicas_to_brokers([0, 1, 2, 3, 4], 8, 3, fixed_start_index=0)
    tail = assign_replicas_to_brokers([0, 1, 2, 3, 4], 3, 3, fixed_start_index=0,
                                      start_partition_id=5)
    assert tail == {5: full[5], 6: full[6], 7: full[7]}


def test_random_start_uses_two_java_draws_start_then_shift():
    # JavaRandom(42).nextInt(10) gives 0 then 3: start index 0, shift 3
    a = assign_replicas_to_brokers(list(range(10)), 2, 3, rng=JavaRandom(42))
    # replicaIndex(0, 3, j, 10) = (0 + 1 + (3 + j) % 9) % 10 -> 4, 5
    assert a[0] == [0, 4, 5]
    assert a[1] == [1, 5, 6]


def test_same_seed_same_placement():
    a = assign_replicas_to_brokers([1, 2, 3, 4], 8, 3, rng=JavaRandom(7))
    b = assign_replicas_to_brokers([1, 2, 3, 4], 8, 3, rng=JavaRandom(7))
    assert a == b


# ------------------------------------------------------------------------------ rack-aware


def test_rack_alternated_list():
    assert rack_alternated_broker_list(list(RACKS), RACKS) == [0, 3, 1, 5, 4, 2]


def test_rack_alternated_list_with_uneven_racks():
    racks = {1: "a", 2: "a", 3: "a", 4: "b"}
    assert rack_alternated_broker_list([1, 2, 3, 4], racks) == [1, 4, 2, 3]


def test_rack_aware_fact_sheet_check():
    a = assign_replicas_to_brokers(list(RACKS), 7, 3, racks=RACKS, fixed_start_index=0)
    assert a[0] == [0, 3, 1]
    assert a[1] == [3, 1, 5]
    assert a[5] == [2, 0, 3]
    assert a[6] == [0, 4, 2]


def test_rack_aware_spreads_each_partition_over_all_racks():
    a = assign_replicas_to_brokers(list(RACKS), 12, 3, racks=RACKS, fixed_start_index=0)
    for reps in a.values():
        assert len({RACKS[b] for b in reps}) == 3
        assert len(set(reps)) == 3


def test_partial_rack_information_is_an_error():
    with pytest.raises(PlacementError, match="rack"):
        assign_replicas_to_brokers([0, 1, 2], 1, 2, racks={0: "a", 1: "b"})


# ------------------------------------------------------------------------------ errors


def test_replication_factor_larger_than_brokers():
    with pytest.raises(PlacementError) as info:
        assign_replicas_to_brokers([1, 2, 3], 1, 4)
    assert str(info.value) == "Replication factor: 4 larger than available brokers: 3."


@pytest.mark.parametrize(("parts", "rf", "word"), [(0, 1, "partitions"), (1, 0, "Replication")])
def test_non_positive_counts(parts, rf, word):
    with pytest.raises(PlacementError, match=word):
        assign_replicas_to_brokers([1, 2, 3], parts, rf)


# ------------------------------------------------------------------------------ java.util.Random


def test_java_random_seed_42_next_int():
    assert JavaRandom(42).next_int() == -1170105035


def test_java_random_seed_42_bounded():
    r = JavaRandom(42)
    assert [r.next_int(10) for _ in range(5)] == [0, 3, 8, 4, 0]


def test_java_random_power_of_two_bound_uses_high_bits():
    # nextInt(2^k) = (2^k * next(31)) >> 31, i.e. the top k bits of next(31)
    r1, r2 = JavaRandom(42), JavaRandom(42)
    v = r1.next_int(16)
    top31 = r2.next_int() & 0xFFFFFFFF  # next(32) as unsigned; next(31) is its top 31 bits
    assert v == (16 * (top31 >> 1)) >> 31


def test_java_random_bound_must_be_positive():
    with pytest.raises(ValueError):
        JavaRandom(1).next_int(0)


# ------------------------------------------------------------------------------ String.hashCode


@pytest.mark.parametrize(("s", "h"), [
    ("", 0),
    ("a", 97),
    ("hello", 99162322),
    ("Aa", 2112),
    ("BB", 2112),                      # the classic collision
    ("polygenelubricants", -2**31),    # hashes to Integer.MIN_VALUE
    ("\u00e9", 233),                   # one UTF-16 unit
    ("\U0001F600", 55357 * 31 + 56832),  # surrogate pair: two UTF-16 units
])
def test_java_string_hash(s, h):
    assert java_string_hash(s) == h


def _reference_hash(s: str) -> int:
    units = [int.from_bytes(s.encode("utf-16-be")[i:i + 2], "big")
             for i in range(0, len(s.encode("utf-16-be")), 2)]
    n = len(units)
    h = sum(u * 31 ** (n - 1 - i) for i, u in enumerate(units)) % 2**32
    return h - 2**32 if h >= 2**31 else h


@pytest.mark.parametrize("s", ["orders", "__consumer_offsets", "a-much-longer-topic-name.v2"])
def test_java_string_hash_matches_the_polynomial_definition(s):
    assert java_string_hash(s) == _reference_hash(s)


# ------------------------------------------------------------------------------ murmur2


@pytest.mark.parametrize(("data", "h"), [
    (b"21", -973932308),
    (b"foobar", -790332482),
    (b"a-little-bit-long-string", -985981536),
    (b"a-little-bit-longer-string", -1486304829),
    (b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971),
    (b"abc", 479470107),
])
def test_murmur2_kafka_utils_test_vectors(data, h):
    assert murmur2(data) == h


def test_to_positive():
    assert to_positive(-790332482) == 1357151166
    assert to_positive(-2**31) == 0
    assert to_positive(5) == 5


# ------------------------------------------------------------------------------ fetcher id


def _reference_fetcher_id(topic: str, partition: int, n: int) -> int:
    v = (31 * _reference_hash(topic) + partition) % 2**32
    v = v - 2**32 if v >= 2**31 else v
    v = 0 if v == -2**31 else abs(v)  # Utils.abs(Integer.MIN_VALUE) == 0
    return v % n


@pytest.mark.parametrize("topic", ["orders", "t", "__consumer_offsets"])
@pytest.mark.parametrize("n", [1, 2, 3, 7])
def test_fetcher_id_for(topic, n):
    got = [fetcher_id_for(topic, p, n) for p in range(12)]
    assert got == [_reference_fetcher_id(topic, p, n) for p in range(12)]
    assert all(0 <= f < n for f in got)


def test_fetcher_id_single_fetcher_is_always_zero():
    assert {fetcher_id_for("orders", p, 1) for p in range(50)} == {0}


def test_fetcher_id_integer_overflow_cases():
    # hashCode == MIN_VALUE, so 31 * h + 0 overflows back to MIN_VALUE: Utils.abs gives 0
    assert fetcher_id_for("polygenelubricants", 0, 3) == 0
    # MIN_VALUE + 1 -> abs = 2147483647, and 2147483647 % 3 == 1
    assert fetcher_id_for("polygenelubricants", 1, 3) == 1
    # "orders" with 3 fetchers (same numbers as the reference formula above)
    assert [fetcher_id_for("orders", p, 3) for p in range(6)] == [2, 1, 0, 2, 1, 0]
