"""Bit-exact reimplementations of the few Java library functions whose results Kafka exposes.

``java.util.Random`` (48-bit LCG) drives replica placement; ``String.hashCode`` picks a partition's
fetcher thread; ``murmur2`` is the producer's key partitioner. Python's own ``hash`` is never used:
it changes with PYTHONHASHSEED.
"""

from __future__ import annotations

_MULT = 0x5DEECE66D
_MASK48 = (1 << 48) - 1


def _to_int32(v: int) -> int:
    v &= 0xFFFFFFFF
    return v - (1 << 32) if v & 0x80000000 else v


def java_string_hash(s: str) -> int:
    """``String.hashCode``: s[0]*31^(n-1) + ... + s[n-1] in 32-bit arithmetic (UTF-16 units)."""
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + ((data[i] << 8) | data[i + 1])) & 0xFFFFFFFF
    return _to_int32(h)


class JavaRandom:
    """``java.util.Random`` with an explicit seed."""

    __slots__ = ("_seed",)

    def __init__(self, seed: int) -> None:
        self._seed = (seed ^ _MULT) & _MASK48

    def _next(self, bits: int) -> int:
        self._seed = (self._seed * _MULT + 0xB) & _MASK48
        return _to_int32(self._seed >> (48 - bits))

    def next_int(self, bound: int | None = None) -> int:
        if bound is None:
            return self._next(32)
        if bound <= 0:
            raise ValueError("bound must be positive")
        if bound & (-bound) == bound:  # power of two
            return _to_int32((bound * self._next(31)) >> 31)
        while True:
            r = self._next(31)
            v = r % bound
            if r - v + (bound - 1) < (1 << 31):
                return v


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
    return _to_int32(h)


def to_positive(n: int) -> int:
    """Kafka's ``Utils.toPositive``: n & 0x7fffffff."""
    return n & 0x7FFFFFFF
