"""Bit-exact reimplementations of the few Java library functions whose results Kafka exposes.

``java.util.Random`` (48-bit LCG) drives replica placement; ``String.hashCode`` picks a partition's
fetcher thread; ``murmur2`` is the producer's key partitioner; ``Integer.parseInt`` /
``Long.parseLong`` and ``Pattern.compile("\\s+").split`` are how Kafka reads checkpoint files;
``java.util.HashMap`` / ``HashSet`` and ``Hashtable`` iteration orders show in what Kafka prints
and writes (describe output, ConfigRecords, the ELR, the placer's Random draws);
``java.time.Duration.parse`` / ``toString`` read and show the consumer's
``auto.offset.reset=by_duration:...``. Each lives
here once. Python's own ``hash`` is never used: it changes with PYTHONHASHSEED.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata
from collections.abc import Iterable

_MULT = 0x5DEECE66D
_MASK48 = (1 << 48) - 1


def to_int32(v: int) -> int:
    """Java's ``(int)`` narrowing: the low 32 bits of ``v`` as a signed int (int overflow)."""
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def java_string_length(s: str) -> int:
    """``String.length``: the number of UTF-16 code units (a character outside the Basic
    Multilingual Plane, an emoji say, counts 2)."""
    return len(s.encode("utf-16-le")) // 2


def java_string_hash(s: str) -> int:
    """``String.hashCode``: s[0]*31^(n-1) + ... + s[n-1] in 32-bit arithmetic (UTF-16 units)."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return to_int32(h)


def integer_hash_code(value: int) -> int:
    """``Integer.hashCode``: the value itself (a module function, so maps holding it pickle)."""
    return value


class JavaRandom:
    """``java.util.Random`` with an explicit seed."""

    __slots__ = ("_seed",)

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ _MULT) & _MASK48

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * _MULT + 0xB) & _MASK48
        return to_int32(self._seed >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        """``nextInt()`` (32 random bits) or ``nextInt(bound)`` (uniform in [0, bound))."""
        if bound is None:
            return self._next(32)
        if bound <= 0:
            raise ValueError("bound must be positive")
        if bound & (-bound) == bound:  # power of two
            return to_int32((bound * self._next(31)) >> 31)
        while True:
            r = self._next(31)
            v = r % bound
            if r - v + (bound - 1) < (1 << 31):
                return v

    def next_long(self) -> int:
        """``nextLong()``: ``((long) next(32) << 32) + next(32)``, in 64-bit arithmetic."""
        v = (self._next(32) << 32) + self._next(32)
        v &= 0xFFFFFFFFFFFFFFFF
        return v - (1 << 64) if v & (1 << 63) else v

    def next_boolean(self) -> bool:
        """``nextBoolean()``: ``next(1) != 0``."""
        return self._next(1) != 0

    def next_double(self) -> float:
        """``nextDouble()``: ``(((long) next(26) << 27) + next(27)) * 0x1.0p-53``."""
        return ((self._next(26) << 27) + self._next(27)) * (1.0 / (1 << 53))


def collections_shuffle(items: list, rnd: JavaRandom) -> None:
    """``java.util.Collections.shuffle(list, rnd)`` in place: for i from size-1 down to 1, swap
    item i with item ``rnd.nextInt(i + 1)`` (the same order for RandomAccess lists and the
    array-copy path used for larger sequential lists)."""
    for i in range(len(items) - 1, 0, -1):
        j = rnd.next_int(i + 1)
        items[i], items[j] = items[j], items[i]


def _java_digit(ch: str) -> int:
    """``Character.digit(char, 10)``: the value of a decimal digit (Unicode category Nd, so also
    e.g. Arabic-Indic or full-width digits), -1 otherwise. Java's ``charAt`` yields UTF-16 units,
    so a digit outside the Basic Multilingual Plane is two surrogates and no digit at all."""
    if ord(ch) > 0xFFFF:
        return -1
    return unicodedata.decimal(ch, -1)


def _java_parse(s: str, bits: int) -> int:
    if not s:
        raise ValueError(f'For input string: "{s}"')
    first = s[0]
    start = 1 if first in "+-" else 0
    if start == len(s):  # a lone sign
        raise ValueError(f'For input string: "{s}"')
    value = 0
    for ch in s[start:]:
        d = _java_digit(ch)
        if d < 0:
            raise ValueError(f'For input string: "{s}"')
        value = value * 10 + d
    if first == "-":
        value = -value
    if not -(1 << (bits - 1)) <= value < (1 << (bits - 1)):
        raise ValueError(f'For input string: "{s}"')
    return value


def java_parse_int(s: str) -> int:
    """``Integer.parseInt(s)``: an optional ``+``/``-`` then decimal digits, nothing else (no
    spaces, no ``_``, no ``0x``), within [-2^31, 2^31 - 1]; otherwise ValueError carrying Java's
    NumberFormatException message ``For input string: "s"``."""
    return _java_parse(s, 32)


def java_parse_long(s: str) -> int:
    """``Long.parseLong(s)``: as :func:`java_parse_int`, within [-2^63, 2^63 - 1]."""
    return _java_parse(s, 64)


# java.time.Duration's PATTERN (CASE_INSENSITIVE): [-+]P[nD][T[nH][nM][n[.n]S]]
_JAVA_DURATION = re.compile(
    r"([-+]?)P(?:([-+]?[0-9]+)D)?"
    r"(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?",
    re.IGNORECASE)
_LONG_MIN, _LONG_MAX = -(1 << 63), (1 << 63) - 1


def java_duration_parse(text: str) -> int:
    """``java.time.Duration.parse(text)`` in nanoseconds: ISO-8601 ``PnDTnHnMn.nS`` (days of
    24 hours, no years, months nor weeks; each number and the whole may carry a sign; a ``T``
    needs a part after it, and at least one part is needed). ValueError with Java's
    DateTimeParseException message otherwise, or when the seconds overflow a long."""
    m = _JAVA_DURATION.fullmatch(text) if isinstance(text, str) else None
    if m is None or (m.group(3) or "").upper() == "T" or \
            not any(m.group(i) is not None for i in (2, 4, 5, 6)):
        raise ValueError(f"Text cannot be parsed to a Duration: {text!r}")
    days, hours, minutes, secs, fraction = (m.group(i) for i in (2, 4, 5, 6, 7))
    seconds = sum(int(v) * unit for v, unit in
                  ((days, 86_400), (hours, 3_600), (minutes, 60), (secs, 1)) if v is not None)
    nanos = int((fraction or "").ljust(9, "0")) if fraction else 0
    if secs is not None and secs.startswith("-"):
        nanos = -nanos
    total = seconds * 1_000_000_000 + nanos
    if m.group(1) == "-":
        total = -total
    if not _LONG_MIN <= total // 1_000_000_000 <= _LONG_MAX:
        raise ValueError(f"Text cannot be parsed to a Duration: overflow: {text!r}")
    return total


def java_duration_string(nanos: int) -> str:
    """``java.time.Duration.toString()`` of a non-negative duration in nanoseconds: hours,
    minutes and seconds with the fraction's trailing zeros dropped (``PT1H``, ``PT48H``,
    ``PT1.5S``, ``PT0S``); days are written as hours."""
    seconds, frac = divmod(nanos, 1_000_000_000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    out = "PT" + (f"{hours}H" if hours else "") + (f"{minutes}M" if minutes else "")
    if secs or frac or out == "PT":
        out += str(secs) + (f".{frac:09d}".rstrip("0") if frac else "") + "S"
    return out


# java.util.regex "\\s" without UNICODE_CHARACTER_CLASS: the six ASCII whitespace characters only
_JAVA_WHITESPACES = re.compile(r"[ \t\n\x0b\f\r]+")


def java_split_whitespaces(line: str) -> list[str]:
    """``Pattern.compile("\\s+").split(line)`` (limit 0): a leading separator gives a leading
    empty string, trailing empty strings are dropped, and no match returns ``[line]``."""
    parts = _JAVA_WHITESPACES.split(line)
    if len(parts) == 1:
        return parts
    while parts and parts[-1] == "":
        parts.pop()
    return parts


def murmur2(data: bytes) -> int:
    """Kafka's ``Utils.murmur2`` (seed 0x9747b28c), as a signed 32-bit int."""
    length = len(data)
    m = 0x5BD1E995
    r = 24
    h = (0x9747B28C ^ length) & 0xFFFFFFFF
    length4 = length // 4
    for i in range(length4):
        i4 = i * 4
        k = (data[i4] | (data[i4 + 1] << 8) | (data[i4 + 2] << 16) | (data[i4 + 3] << 24))
        k = (k * m) & 0xFFFFFFFF
        k ^= k >> r
        k = (k * m) & 0xFFFFFFFF
        h = (h * m) & 0xFFFFFFFF
        h ^= k
    rest = length % 4
    tail = length4 * 4
    if rest == 3:
        h ^= data[tail + 2] << 16
    if rest >= 2:
        h ^= data[tail + 1] << 8
    if rest >= 1:
        h ^= data[tail]
        h = (h * m) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * m) & 0xFFFFFFFF
    h ^= h >> 15
    return to_int32(h)


def to_positive(n: int) -> int:
    """Kafka's ``Utils.toPositive``: n & 0x7fffffff."""
    return n & 0x7FFFFFFF


def utils_abs(n: int) -> int:
    """Kafka's ``Utils.abs``: ``Math.abs`` of an int, except that ``Integer.MIN_VALUE`` (whose
    absolute value overflows back to itself) gives 0."""
    return 0 if n == -(1 << 31) else abs(n)


def topic_partition_hash_code(tp: tuple[str, int]) -> int:
    """``TopicPartition.hashCode``: 31 * (31 + partition) + topic.hashCode(), as a Java int
    (TopicPartition.java:46-54@3.9.0-rc3)."""
    return to_int32(31 * (31 + tp[1]) + java_string_hash(tp[0]))


def uuid_hash_code(uuid: str) -> int:
    """``Uuid.hashCode`` of a Uuid printed as Kafka prints it (URL-safe base64 of its 16 bytes,
    no padding): the high and low 32 bits of most ^ least significant bits, xored
    (Uuid.java:120-123@3.9.0-rc3). A string that is no such Uuid hashes as a String."""
    try:
        raw = base64.urlsafe_b64decode(uuid + "=" * (-len(uuid) % 4))
    except (binascii.Error, ValueError):
        raw = b""
    if len(raw) != 16:
        return java_string_hash(uuid)
    xor = int.from_bytes(raw[:8], "big") ^ int.from_bytes(raw[8:], "big")
    return to_int32((xor >> 32) ^ (xor & 0xFFFFFFFF))


def java_hashmap_spread(hash_code: int) -> int:
    """``HashMap.hash(key)``: ``h ^ (h >>> 16)`` on the key's 32-bit ``hashCode``, unsigned."""
    h = hash_code & 0xFFFFFFFF
    return h ^ (h >> 16)


def table_size_for(cap: int) -> int:
    """``HashMap.tableSizeFor``: the smallest power of two >= ``cap`` (at least 1)."""
    n = 1
    while n < cap:
        n <<= 1
    return n


class JavaHashMap:
    """A map that iterates like ``java.util.HashMap`` (load factor 0.75; the default constructor
    allocates 16 buckets on the first put, ``HashMap(initialCapacity)``
    ``tableSizeFor(initialCapacity)``), for the places where Kafka's behaviour follows a
    HashMap's iteration order (e.g. the Random draws of StripedReplicaPlacer). ``hash_code(key)``
    is the key's Java ``hashCode``.

    HashMap iterates its table bucket by bucket (bucket = ``hash(key) & (capacity - 1)``), each
    bucket's nodes in the order they were put (a new key is appended to its bucket; ``resize``
    splits a bucket keeping relative order; ``remove`` unlinks). The table doubles when the size
    exceeds the threshold (capacity * 0.75), and also when a ninth node lands in one bucket
    while the capacity is below 64 (``treeifyBin``'s ``MIN_TREEIFY_CAPACITY``); it never
    shrinks. Limitation: a bucket that really becomes a red-black tree bin (nine colliding keys
    at capacity >= 64) keeps put order here; Java's order there depends on
    ``System.identityHashCode`` for equal hashes, so it is not reproducible in Java either."""

    __slots__ = ("_hash_code", "_entries", "_capacity", "_threshold", "_initial")

    def __init__(self, hash_code, initial_capacity: int | None = None) -> None:
        self._hash_code = hash_code
        self._entries: dict = {}          # key -> (spread hash, value), in put order
        self._capacity = 0                # the table is allocated on the first put
        self._threshold = 0
        self._initial = 16 if initial_capacity is None else table_size_for(initial_capacity)

    def put(self, key, value):
        """``put``: replaces the value of a present key in place; returns the previous value."""
        old = self._entries.get(key)
        h = java_hashmap_spread(self._hash_code(key)) if old is None else old[0]
        self._entries[key] = (h, value)
        if old is not None:
            return old[1]
        if self._capacity == 0:   # resize(): the first table
            self._capacity = self._initial
            self._threshold = int(self._initial * 0.75)
        bucket = h & (self._capacity - 1)
        bin_count = sum(1 for k, (ph, _) in self._entries.items()
                        if ph & (self._capacity - 1) == bucket and k != key)
        if bin_count >= 8 and self._capacity < 64:   # putVal: binCount >= TREEIFY_THRESHOLD - 1
            self._resize()
        if len(self._entries) > self._threshold:
            self._resize()
        return None

    def _resize(self) -> None:
        """``resize``: double the table; the threshold doubles too, or is recomputed from the
        load factor while the table is smaller than the default 16 buckets."""
        old = self._capacity
        self._capacity = old * 2
        self._threshold = self._threshold * 2 if old >= 16 else int(self._capacity * 0.75)

    def remove(self, key):
        entry = self._entries.pop(key, None)
        return None if entry is None else entry[1]

    def get(self, key, default=None):
        entry = self._entries.get(key)
        return default if entry is None else entry[1]

    def __contains__(self, key) -> bool:
        return key in self._entries

    def __len__(self) -> int:
        return len(self._entries)

    def capacity(self) -> int:
        return self._capacity

    def keys(self) -> list:
        """``keySet()`` in HashMap iteration order."""
        mask = self._capacity - 1
        order = sorted(enumerate(self._entries.items()), key=lambda e: (e[1][1][0] & mask, e[0]))
        return [k for _, (k, _) in order]

    def values(self) -> list:
        return [self._entries[k][1] for k in self.keys()]

    def items(self) -> list:
        return [(k, self._entries[k][1]) for k in self.keys()]

    def __iter__(self):
        return iter(self.keys())


def java_hashmap_iteration_order(keys: list, hash_code,
                                 initial_capacity: int | None = None) -> list:
    """The order in which a new ``java.util.HashMap`` (``new HashMap<>()``, or
    ``new HashMap<>(initial_capacity)``) iterates ``keys`` (distinct, in the order they were
    first put); see :class:`JavaHashMap`."""
    m = JavaHashMap(hash_code, initial_capacity)
    for key in keys:
        m.put(key, None)
    return m.keys()


class JavaIntHashSet:
    """Iteration order of ``java.util.HashSet<Integer>``: a :class:`JavaHashMap` of its elements
    (``HashSet.add`` is ``map.put(e, PRESENT)``; ``new HashSet<>(c)`` sizes the map
    ``max((int) (c.size() / .75f) + 1, 16)``). Kafka streams such sets into the ELR /
    LastKnownElr lists, so their order is observable."""

    __slots__ = ("_map",)

    def __init__(self, initial: Iterable[int] = ()) -> None:
        initial = list(initial)
        self._map = JavaHashMap(integer_hash_code, max(int(len(initial) / 0.75) + 1, 16))
        for x in initial:
            self.add(x)

    def add(self, x: int) -> None:
        self._map.put(x, True)

    def __contains__(self, x: int) -> bool:
        return x in self._map

    def __iter__(self):
        return iter(self._map.keys())


def java_hashtable_iteration_order(keys: list, hash_code) -> list:
    """The order in which a new ``java.util.Hashtable`` (default constructor: 11 buckets, load
    factor 0.75) enumerates ``keys`` (distinct, in the order they were put): Java 8's
    ``java.util.Properties`` is such a Hashtable. ``put`` adds an entry at the head of bucket
    ``(hash & 0x7FFFFFFF) % capacity``, and when the count has reached the threshold
    (``addEntry``) first rehashes into capacity * 2 + 1 buckets, walking the old buckets from
    the last, each chain from its head, onto the heads of the new ones; the Enumerator walks the
    buckets from the last to the first."""
    capacity, threshold = 11, 8
    table: list[list[tuple[int, object]]] = [[] for _ in range(capacity)]
    count = 0
    for key in keys:
        h = hash_code(key)
        if count >= threshold:  # Hashtable.addEntry -> rehash: capacity * 2 + 1
            new_capacity = capacity * 2 + 1
            new_table: list[list[tuple[int, object]]] = [[] for _ in range(new_capacity)]
            for i in range(capacity - 1, -1, -1):
                for entry in table[i]:
                    new_table[(entry[0] & 0x7FFFFFFF) % new_capacity].insert(0, entry)
            table, capacity = new_table, new_capacity
            threshold = int(capacity * 0.75)
        table[(h & 0x7FFFFFFF) % capacity].insert(0, (h, key))
        count += 1
    # Hashtable's Enumerator walks the buckets from the last to the first.
    return [key for bucket in reversed(table) for _, key in bucket]
