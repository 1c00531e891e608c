"""KRaft replica placement: ``org.apache.kafka.metadata.placement.StripedReplicaPlacer``.

The placer used by the quorum controller for new topics and partitions (KIP-631, Kafka 2.8+;
fact sheet §9b). Bit-exact given the ``java.util.Random`` it is handed: the draws happen in
Kafka's order (``RackList`` constructor: one ``nextInt(size)`` per non-empty fenced then
unfenced broker list of each rack, in ``HashMap`` iteration order over the ``Optional<String>``
rack keys, then ``nextInt(#racks)``; later ``Collections.shuffle`` of the rack names and of
every broker list). Real Kafka seeds the Random with ``new Random()``; the simulator supplies a
seeded ``JavaRandom`` so placement is reproducible. The algorithm is unchanged since 3.0.0
(KAFKA-12788, KAFKA-12897); later commits only changed its return type.

A rack is ``str | None``; ``None`` stands for ``Optional.empty()`` (a broker without
``broker.rack``), whose ``hashCode`` is 0 and which sorts first (``OptionalStringComparator``).
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkasim.control.placement import PlacementError
from kafkasim.core import errors
from kafkasim.settings.javautil import (
    JavaRandom,
    collections_shuffle,
    java_hashmap_iteration_order,
    java_string_hash,
)


class InvalidReplicationFactorException(PlacementError):
    """``org.apache.kafka.common.errors.InvalidReplicationFactorException``: the error
    ``INVALID_REPLICATION_FACTOR`` of a CreateTopics / CreatePartitions response."""

    error = errors.INVALID_REPLICATION_FACTOR


@dataclass(frozen=True, slots=True)
class UsableBroker:
    """``org.apache.kafka.metadata.placement.UsableBroker``: a registered broker the placer
    may use (``rack`` None = ``Optional.empty()``)."""

    id: int
    rack: str | None = None
    fenced: bool = False


def optional_string_hash(rack: str | None) -> int:
    """``Optional<String>.hashCode()``: 0 when empty, else ``String.hashCode`` of the value."""
    return 0 if rack is None else java_string_hash(rack)


def optional_string_sort_key(rack: str | None) -> tuple[int, bytes]:
    """``OptionalStringComparator``: empty first, then ``String.compareTo`` (UTF-16 code units,
    which is the byte order of UTF-16BE)."""
    return (0, b"") if rack is None else (1, rack.encode("utf-16-be"))


class BrokerList:
    """``StripedReplicaPlacer.BrokerList``: a sorted broker list walked round-robin from an
    offset that moves by one at each new iteration epoch."""

    __slots__ = ("brokers", "index", "offset", "epoch")

    def __init__(self) -> None:
        self.brokers: list[int] = []
        self.index = 0
        self.offset = 0
        self.epoch = 0

    def add(self, broker: int) -> BrokerList:
        self.brokers.append(broker)
        return self

    def initialize(self, random: JavaRandom) -> None:
        """Sort, then draw the start offset ``nextInt(size)`` (only when non-empty)."""
        if self.brokers:
            self.brokers.sort()
            self.offset = random.next_int(len(self.brokers))

    def shuffle(self, random: JavaRandom) -> None:
        collections_shuffle(self.brokers, random)

    def size(self) -> int:
        return len(self.brokers)

    def next(self, epoch: int) -> int:
        """The next broker of this epoch, or -1 once every broker was returned in it."""
        if not self.brokers:
            return -1
        if self.epoch != epoch:
            self.epoch = epoch
            self.index = 0
            self.offset = (self.offset + 1) % len(self.brokers)
        if self.index >= len(self.brokers):
            return -1
        broker = self.brokers[(self.index + self.offset) % len(self.brokers)]
        self.index += 1
        return broker


#: ``BrokerList.EMPTY``: Kafka's shared empty list (a rack's list until a broker is added)
BrokerList.EMPTY = BrokerList()


class Rack:
    """``StripedReplicaPlacer.Rack``: the fenced and unfenced brokers of one rack."""

    __slots__ = ("fenced", "unfenced")

    def __init__(self) -> None:
        self.fenced = BrokerList()
        self.unfenced = BrokerList()

    def initialize(self, random: JavaRandom) -> None:
        self.fenced.initialize(random)
        self.unfenced.initialize(random)

    def shuffle(self, random: JavaRandom) -> None:
        self.fenced.shuffle(random)
        self.unfenced.shuffle(random)

    def next_unfenced(self, epoch: int) -> int:
        return self.unfenced.next(epoch)

    def next(self, epoch: int) -> int:
        """Unfenced brokers first, then fenced ones."""
        result = self.unfenced.next(epoch)
        return result if result >= 0 else self.fenced.next(epoch)


def _check_positive(replication_factor: int) -> None:
    if replication_factor <= 0:
        raise InvalidReplicationFactorException(
            f"Invalid replication factor {replication_factor}: "
            "the replication factor must be positive.")


def all_fenced_message(cordoned_dirs_named: bool) -> str:
    """The refusal when no usable broker is unfenced; from 4.3 (KIP-1066) it also names
    brokers whose log directories are all cordoned."""
    if cordoned_dirs_named:
        return "All brokers are currently fenced, or have all their log directories cordoned."
    return "All brokers are currently fenced."


def not_enough_brokers_message(replication_factor: int, num_total: int,
                               cordoned_dirs_named: bool) -> str:
    """The refusal when fewer brokers are usable than the replication factor (4.3 wording
    with ``cordoned_dirs_named``, KIP-1066)."""
    why = (f"The target replication factor of {replication_factor} cannot be reached "
           f"because only {num_total} broker(s) are registered")
    if cordoned_dirs_named:
        return why + " or some brokers have all their log directories cordoned."
    return why + "."


def _check_some_unfenced(num_unfenced: int, cordoned_dirs_named: bool) -> None:
    if num_unfenced == 0:
        raise InvalidReplicationFactorException(all_fenced_message(cordoned_dirs_named))


def _check_enough_brokers(replication_factor: int, num_total: int,
                          cordoned_dirs_named: bool) -> None:
    if replication_factor > num_total:
        raise InvalidReplicationFactorException(
            not_enough_brokers_message(replication_factor, num_total, cordoned_dirs_named))


class RackList:
    """``StripedReplicaPlacer.RackList``: the racks of the usable brokers and the striping
    state (iteration epoch, rack offset) shared by the partitions of one placement."""

    def __init__(self, random: JavaRandom, usable_brokers,
                 cordoned_dirs_in_messages: bool = False) -> None:
        self.random = random
        self.cordoned_dirs_in_messages = cordoned_dirs_in_messages   # 4.3 wording (KIP-1066)
        self.racks: dict[str | None, Rack] = {}
        self.rack_names: list[str | None] = []
        total = unfenced = 0
        for broker in usable_brokers:
            rack = self.racks.get(broker.rack)
            if rack is None:
                self.rack_names.append(broker.rack)
                rack = self.racks[broker.rack] = Rack()
            if broker.fenced:
                rack.fenced.add(broker.id)
            else:
                unfenced += 1
                rack.unfenced.add(broker.id)
            total += 1
        # racks.values() of Kafka's HashMap<Optional<String>, Rack>
        self._hash_order = java_hashmap_iteration_order(self.rack_names, optional_string_hash)
        for name in self._hash_order:
            self.racks[name].initialize(random)
        self.rack_names.sort(key=optional_string_sort_key)
        self.num_total_brokers = total
        self.num_unfenced_brokers = unfenced
        self.epoch = 0
        self.offset = random.next_int(len(self.rack_names)) if self.rack_names else 0

    def place(self, replication_factor: int) -> list[int]:
        """``RackList.place``: the replicas of the next partition, leader first."""
        _check_positive(replication_factor)
        _check_enough_brokers(replication_factor, self.num_total_brokers,
                              self.cordoned_dirs_in_messages)
        _check_some_unfenced(self.num_unfenced_brokers, self.cordoned_dirs_in_messages)
        # After as many partitions as unfenced brokers, reshuffle (not for a single unfenced
        # broker, which would loop forever).
        if self.epoch == self.num_unfenced_brokers and self.num_unfenced_brokers > 1:
            self.shuffle()
            self.epoch = 0
        if self.offset == len(self.rack_names):
            self.offset = 0
        n = len(self.rack_names)
        brokers: list[int] = []
        first_rack_index = self.offset
        while True:   # the leader: the first rack (from offset) with an unfenced broker left
            result = self.racks[self.rack_names[first_rack_index]].next_unfenced(self.epoch)
            if result >= 0:
                brokers.append(result)
                break
            first_rack_index = (first_rack_index + 1) % n
        rack_index = self.offset
        for _ in range(1, replication_factor):
            result = -1
            while result < 0:
                if rack_index == first_rack_index:
                    first_rack_index = -1   # skip the leader's rack once
                else:
                    result = self.racks[self.rack_names[rack_index]].next(self.epoch)
                rack_index = (rack_index + 1) % n
            brokers.append(result)
        self.epoch += 1
        self.offset += 1
        return brokers

    def shuffle(self) -> None:
        """``RackList.shuffle``: the rack names, then each rack's fenced and unfenced lists in
        HashMap order, all with the same Random."""
        collections_shuffle(self.rack_names, self.random)
        for name in self._hash_order:
            self.racks[name].shuffle(self.random)


class StripedReplicaPlacer:
    """``org.apache.kafka.metadata.placement.StripedReplicaPlacer`` (ReplicaPlacer of the
    KRaft controller). The same Random serves every ``place`` call, as in Kafka where the
    controller keeps one placer. ``cordoned_dirs_in_messages``: the refusals' 4.3 wording
    (KIP-1066, rule ``placement_messages_name_cordoned_dirs``)."""

    def __init__(self, random: JavaRandom, cordoned_dirs_in_messages: bool = False) -> None:
        self.random = random
        self.cordoned_dirs_in_messages = cordoned_dirs_in_messages

    def place(self, start_partition: int, num_partitions: int, num_replicas: int,
              usable_brokers: list[UsableBroker]) -> list[list[int]]:
        """``place(PlacementSpec(startPartition, numPartitions, numReplicas), cluster)``:
        one replica list per partition. ``start_partition`` is part of Kafka's PlacementSpec
        but does not influence this placer. Raises InvalidReplicationFactorException (checks in
        Kafka's order: positive, some broker unfenced, enough brokers)."""
        del start_partition
        cordoned = self.cordoned_dirs_in_messages
        rack_list = RackList(self.random, usable_brokers, cordoned)
        _check_positive(num_replicas)
        _check_some_unfenced(rack_list.num_unfenced_brokers, cordoned)
        _check_enough_brokers(num_replicas, rack_list.num_total_brokers, cordoned)
        return [rack_list.place(num_replicas) for _ in range(num_partitions)]
