"""StripedReplicaPlacer, bit for bit (metadata/src/test/java/org/apache/kafka/metadata/placement/
StripedReplicaPlacerTest.java at trunk 1eb7644349c), plus the fact-sheet checks of §9b and the
java.util.HashMap iteration order the placer's Random draws follow."""

from __future__ import annotations

from collections import Counter

import pytest

from kafkasim.control.kraft.striped_placer import (
    BrokerList,
    InvalidReplicationFactorException,
    RackList,
    StripedReplicaPlacer,
    UsableBroker,
    optional_string_hash,
)
from kafkasim.control.placement import PlacementError
from kafkasim.core import errors
from kafkasim.settings.javautil import (
    JavaHashMap,
    JavaRandom,
    java_hashmap_iteration_order,
    java_string_hash,
)


class MockRandom(JavaRandom):
    """org.apache.kafka.server.util.MockRandom: a java.util.Random whose next(bits) is a 64-bit
    LCG (state * 2862933555777941757 + 3037000493), default state 17."""

    __slots__ = ("state",)

    def __init__(self, state: int = 17) -> None:
        self.state = state

    def _next(self, bits: int) -> int:
        self.state = (self.state * 2862933555777941757 + 3037000493) & ((1 << 64) - 1)
        v = (self.state >> (64 - bits)) & 0xFFFFFFFF
        return v - (1 << 32) if v & 0x80000000 else v


def ub(broker_id, rack=None, fenced=False):
    return UsableBroker(broker_id, rack, fenced)


# -- StripedReplicaPlacerTest ------------------------------------------------------------------
def test_broker_list():
    """StripedReplicaPlacerTest.testBrokerList."""
    empty = BrokerList()
    assert empty.size() == 0
    assert empty.next(1) == -1
    brokers = BrokerList().add(0).add(1).add(2).add(3)
    assert brokers.size() == 4
    assert [brokers.next(0) for _ in range(6)] == [0, 1, 2, 3, -1, -1]
    assert [brokers.next(1) for _ in range(5)] == [1, 2, 3, 0, -1]


def test_avoid_fenced_replica_if_possible_on_single_rack():
    """StripedReplicaPlacerTest.testAvoidFencedReplicaIfPossibleOnSingleRack."""
    rack_list = RackList(MockRandom(), [ub(3), ub(1, fenced=True), ub(0), ub(4), ub(2)])
    assert rack_list.num_total_brokers == 5
    assert rack_list.num_unfenced_brokers == 4
    assert rack_list.rack_names == [None]
    with pytest.raises(InvalidReplicationFactorException):
        rack_list.place(0)
    with pytest.raises(InvalidReplicationFactorException):
        rack_list.place(-1)
    assert rack_list.place(4) == [3, 4, 0, 2]
    assert rack_list.place(4) == [4, 0, 2, 3]
    assert rack_list.place(4) == [0, 2, 3, 4]
    assert rack_list.place(4) == [2, 3, 4, 0]
    assert rack_list.place(4) == [0, 4, 3, 2]


def test_multi_partition_topic_placement_on_single_unfenced_broker():
    """StripedReplicaPlacerTest.testMultiPartitionTopicPlacementOnSingleUnfencedBroker: one
    unfenced broker never triggers the reshuffle (no endless loop)."""
    placer = StripedReplicaPlacer(MockRandom())
    assert placer.place(0, 3, 1, [ub(0), ub(1, fenced=True)]) == [[0], [0], [0]]


def test_placement_on_fenced_replica_on_single_rack():
    """StripedReplicaPlacerTest.testPlacementOnFencedReplicaOnSingleRack."""
    rack_list = RackList(MockRandom(), [ub(3), ub(1, fenced=True), ub(2)])
    assert rack_list.num_total_brokers == 3
    assert rack_list.num_unfenced_brokers == 2
    assert rack_list.rack_names == [None]
    assert [rack_list.place(3) for _ in range(4)] == [[3, 2, 1], [2, 3, 1], [3, 2, 1], [2, 3, 1]]


def test_rack_list_with_multiple_racks():
    """StripedReplicaPlacerTest.testRackListWithMultipleRacks."""
    rack_list = RackList(MockRandom(), [
        ub(11, "1"), ub(10, "1"), ub(30, "3"), ub(31, "3"), ub(21, "2"), ub(20, "2", True)])
    assert rack_list.num_total_brokers == 6
    assert rack_list.num_unfenced_brokers == 5
    assert rack_list.rack_names == ["1", "2", "3"]
    assert rack_list.place(4) == [11, 21, 31, 10]
    assert rack_list.place(4) == [21, 30, 10, 20]
    assert rack_list.place(4) == [31, 11, 21, 30]


def test_rack_list_with_invalid_racks():
    """StripedReplicaPlacerTest.testRackListWithInvalidRacks: racks with only fenced brokers
    never provide a leader."""
    rack_list = RackList(MockRandom(), [
        ub(11, "1"), ub(10, "1"), ub(30, "3", True), ub(31, "3", True), ub(20, "2", True),
        ub(21, "2", True), ub(41, "4"), ub(40, "4", True)])
    assert rack_list.num_total_brokers == 8
    assert rack_list.num_unfenced_brokers == 3
    assert rack_list.rack_names == ["1", "2", "3", "4"]
    assert rack_list.place(4) == [41, 11, 21, 30]
    assert rack_list.place(4) == [10, 20, 31, 41]
    assert rack_list.place(4) == [41, 21, 30, 11]


def _message(excinfo) -> str:
    return str(excinfo.value)


def test_all_brokers_fenced():
    """StripedReplicaPlacerTest.testAllBrokersFenced."""
    placer = StripedReplicaPlacer(MockRandom())
    with pytest.raises(InvalidReplicationFactorException) as e:
        placer.place(0, 1, 1, [ub(11, "1", True), ub(10, "1", True)])
    assert _message(e) == "All brokers are currently fenced."
    assert e.value.error == errors.INVALID_REPLICATION_FACTOR
    assert isinstance(e.value, PlacementError)


def test_not_enough_brokers():
    """StripedReplicaPlacerTest.testNotEnoughBrokers."""
    placer = StripedReplicaPlacer(MockRandom())
    with pytest.raises(InvalidReplicationFactorException) as e:
        placer.place(0, 1, 3, [ub(11, "1"), ub(10, "1")])
    assert _message(e) == ("The target replication factor of 3 cannot be reached because "
                           "only 2 broker(s) are registered.")


def test_non_positive_replication_factor():
    """StripedReplicaPlacerTest.testNonPositiveReplicationFactor."""
    placer = StripedReplicaPlacer(MockRandom())
    with pytest.raises(InvalidReplicationFactorException) as e:
        placer.place(0, 1, 0, [ub(11, "1"), ub(10, "1")])
    assert _message(e) == "Invalid replication factor 0: the replication factor must be positive."


def test_placer_checks_fenced_before_broker_count():
    """StripedReplicaPlacer.place checks 'all fenced' before 'too few brokers' (RackList.place
    the other way round)."""
    with pytest.raises(InvalidReplicationFactorException) as e:
        StripedReplicaPlacer(MockRandom()).place(0, 1, 3, [ub(1, fenced=True)])
    assert _message(e) == "All brokers are currently fenced."
    with pytest.raises(InvalidReplicationFactorException) as e:
        RackList(MockRandom(), [ub(1, fenced=True)]).place(3)
    assert "cannot be reached because only 1 broker(s)" in _message(e)


def test_successful_placement():
    """StripedReplicaPlacerTest.testSuccessfulPlacement."""
    placer = StripedReplicaPlacer(MockRandom())
    assert placer.place(0, 5, 3, [ub(0), ub(3), ub(2), ub(1)]) == [
        [2, 3, 0], [3, 0, 1], [0, 1, 2], [1, 2, 3], [1, 0, 2]]


def test_even_distribution():
    """StripedReplicaPlacerTest.testEvenDistribution: 200 partitions, RF 2, 4 brokers."""
    placer = StripedReplicaPlacer(MockRandom())
    counts = Counter(tuple(r) for r in placer.place(0, 200, 2, [ub(0), ub(1), ub(2), ub(3)]))
    assert counts == {
        (0, 1): 14, (0, 2): 22, (0, 3): 14, (1, 0): 17, (1, 2): 17, (1, 3): 16,
        (2, 0): 13, (2, 1): 17, (2, 3): 20, (3, 0): 20, (3, 1): 19, (3, 2): 11}


def test_rack_list_all_brokers_fenced():
    """StripedReplicaPlacerTest.testRackListAllBrokersFenced."""
    rack_list = RackList(MockRandom(), [ub(0, fenced=True), ub(1, fenced=True),
                                        ub(2, fenced=True)])
    assert (rack_list.num_total_brokers, rack_list.num_unfenced_brokers) == (3, 0)
    assert rack_list.rack_names == [None]
    with pytest.raises(InvalidReplicationFactorException) as e:
        rack_list.place(3)
    assert _message(e) == "All brokers are currently fenced."


def test_rack_list_not_enough_brokers():
    """StripedReplicaPlacerTest.testRackListNotEnoughBrokers."""
    rack_list = RackList(MockRandom(), [ub(11, "1"), ub(10, "1")])
    with pytest.raises(InvalidReplicationFactorException) as e:
        rack_list.place(3)
    assert _message(e) == ("The target replication factor of 3 cannot be reached because "
                           "only 2 broker(s) are registered.")


def test_rack_list_non_positive_replication_factor():
    """StripedReplicaPlacerTest.testRackListNonPositiveReplicationFactor."""
    rack_list = RackList(MockRandom(), [ub(11, "1"), ub(10, "1")])
    with pytest.raises(InvalidReplicationFactorException) as e:
        rack_list.place(-1)
    assert _message(e) == ("Invalid replication factor -1: the replication factor must be "
                           "positive.")


# -- fact sheet §9b ----------------------------------------------------------------------------
class ZeroRandom(JavaRandom):
    """A Random whose next(bits) is always 0: every nextInt(bound) is 0 (all offsets zero)."""

    __slots__ = ()

    def __init__(self) -> None:
        pass

    def _next(self, bits: int) -> int:
        return 0


def test_single_rack_offset_zero_rotates_by_one():
    """§9b: 4 brokers, offsets 0 -> [0,1,2], [1,2,3], [2,3,0], [3,0,1]."""
    placer = StripedReplicaPlacer(ZeroRandom())
    assert placer.place(0, 4, 3, [ub(2), ub(0), ub(3), ub(1)]) == [
        [0, 1, 2], [1, 2, 3], [2, 3, 0], [3, 0, 1]]


def test_three_racks_zero_offsets_match_javadoc():
    """§9b / StripedReplicaPlacer Javadoc: racks A, B, C x 3 brokers with all offsets 0 give
    A0 B0 C0, B1 C1 A1, C2 A2 B2."""
    ids = {"A": (0, 1, 2), "B": (10, 11, 12), "C": (20, 21, 22)}
    brokers = [ub(b, rack) for rack, bs in ids.items() for b in bs]
    placer = StripedReplicaPlacer(ZeroRandom())
    assert placer.place(0, 3, 3, brokers) == [[0, 10, 20], [11, 21, 1], [22, 2, 12]]


def test_leader_is_never_fenced_and_replicas_distinct():
    """§9b: the leader is never a fenced broker; no broker twice in one partition."""
    brokers = [ub(i, f"r{i % 3}", fenced=i in (1, 4, 7)) for i in range(9)]
    placement = StripedReplicaPlacer(JavaRandom(5)).place(0, 50, 4, brokers)
    for replicas in placement:
        assert replicas[0] not in (1, 4, 7)
        assert len(set(replicas)) == 4


def test_random_draws_in_kafka_order():
    """RackList constructor: for each rack in HashMap order, fenced.initialize then
    unfenced.initialize (each nextInt(size) when non-empty), then nextInt(#racks)."""
    rnd = JavaRandom(11)
    rack_list = RackList(rnd, [ub(1, "b"), ub(2, "a", True), ub(3, "a"), ub(4, "b")])
    ref = JavaRandom(11)
    # HashMap<Optional<String>> order for "b" (hash 98), "a" (hash 97): bucket 97&15=1, 98&15=2
    expected_a_fenced = ref.next_int(1)
    expected_a_unfenced = ref.next_int(1)
    expected_b_unfenced = ref.next_int(2)
    expected_offset = ref.next_int(2)
    assert rack_list.racks["a"].fenced.offset == expected_a_fenced
    assert rack_list.racks["a"].unfenced.offset == expected_a_unfenced
    assert rack_list.racks["b"].unfenced.offset == expected_b_unfenced
    assert rack_list.offset == expected_offset
    assert rnd._seed == ref._seed   # no other draw


# -- java.util.HashMap iteration order ----------------------------------------------------------
def test_optional_hash_codes():
    """Optional.empty().hashCode() == 0; Optional.of(s).hashCode() == s.hashCode()."""
    assert optional_string_hash(None) == 0
    assert optional_string_hash("rack-1") == java_string_hash("rack-1")


def test_hashmap_order_by_bucket_then_insertion():
    """HashMap iterates buckets in index order (hash ^ hash >>> 16, & 15 at capacity 16);
    "Aa" and "BB" share String.hashCode 2112, so they share a bucket in insertion order."""
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    order = java_hashmap_iteration_order(["c", "BB", "a", None, "Aa"], optional_string_hash)
    # buckets: None 0, "BB"/"Aa" 2112 & 15 = 0, "a" 97 & 15 = 1, "c" 99 & 15 = 3
    assert order == ["BB", None, "Aa", "a", "c"]


def test_hashmap_order_after_resize():
    """The 13th key exceeds the threshold 12 (16 * 0.75): the table doubles to 32. 'q' (113)
    shares bucket 1 with nothing at capacity 16 and comes before 'b' (98, bucket 2); at
    capacity 32 it moves to bucket 17, behind 'b'."""
    assert java_hashmap_iteration_order(["b", "q"], optional_string_hash) == ["q", "b"]
    others = [chr(c) for c in range(ord("c"), ord("c") + 11)]   # c..m, buckets 3..13
    order = java_hashmap_iteration_order(["b", "q", *others], optional_string_hash)
    assert order == ["b", *others, "q"]
    order12 = java_hashmap_iteration_order(["b", "q", *others[:10]], optional_string_hash)
    assert order12 == ["q", "b", *others[:10]]


def test_hashmap_treeify_resize_below_64():
    """putVal: a ninth node in one bucket calls treeifyBin, which resizes while capacity < 64;
    keys 16 apart in hash share bucket 0 at capacity 16 but not at 32."""
    def h(k):
        return k
    keys = [16 * i for i in range(9)] + [1]
    order = java_hashmap_iteration_order(keys, h)
    # capacity 32 after the ninth key: buckets 0 (0, 32, 64, 96, 128) then 1, then 16 (16, ...)
    assert order == [0, 32, 64, 96, 128, 1, 16, 48, 80, 112]


def test_java_hashmap_remove_and_reput_goes_to_bucket_tail():
    """HashMap.remove unlinks the node; putting the key again appends it at its bucket's tail
    (behind keys put meanwhile); the table never shrinks."""
    m = JavaHashMap(lambda k: k)
    for k in (0, 16, 32):
        m.put(k, str(k))
    m.remove(0)
    m.put(0, "again")
    assert m.keys() == [16, 32, 0]
    assert m.get(0) == "again"
    m.put(16, "replaced")     # a present key keeps its place
    assert m.items() == [(16, "replaced"), (32, "32"), (0, "again")]
    for k in range(1, 14):
        m.put(k, None)
    assert m.capacity() == 32   # 16 entries > threshold 12
    for k in range(1, 14):
        m.remove(k)
    assert m.capacity() == 32
    # capacity 32: 32 and 0 share bucket 0 in put order (resize keeps it), 16 is bucket 16
    assert m.keys() == [32, 0, 16]
