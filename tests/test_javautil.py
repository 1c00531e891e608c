"""java.util.Random, Collections.shuffle, Java's number parsing, String.hashCode and the
iteration orders of HashMap and Hashtable, bit for bit.

Reference numbers were printed by a Java 17 program (``new Random(seed).nextLong()`` etc.,
``Integer.parseInt``, ``Pattern.compile("\\s+").split``); the LCG tests below also recompute the
first draws independently from the algorithm documented in java.util.Random's Javadoc:
seed = (seed ^ 0x5DEECE66D) mod 2^48, next(bits): seed = seed * 0x5DEECE66D + 0xB mod 2^48,
return the top ``bits`` of the 48-bit seed as a signed int.
"""

from __future__ import annotations

import pytest

from kafkasim.settings.javautil import (
    JavaRandom,
    collections_shuffle,
    java_hashmap_iteration_order,
    java_hashtable_iteration_order,
    java_parse_int,
    java_parse_long,
    java_split_whitespaces,
    java_string_hash,
    to_int32,
    utils_abs,
)


def _lcg_draws(seed: int, bits: list[int]) -> list[int]:
    """next(bits) for each entry of ``bits``, straight from the Javadoc (unsigned results)."""
    s = (seed ^ 0x5DEECE66D) % (1 << 48)
    out = []
    for b in bits:
        s = (s * 0x5DEECE66D + 0xB) % (1 << 48)
        out.append(s // (1 << (48 - b)))
    return out


def _signed(v: int, width: int) -> int:
    return v - (1 << width) if v >= 1 << (width - 1) else v


# -- java.util.Random (seed 42 values printed by Java 17) --------------------------------------
def test_next_int_seed_42():
    assert JavaRandom(42).next_int() == -1170105035
    assert _signed(_lcg_draws(42, [32])[0], 32) == -1170105035


def test_next_long_seed_42():
    # Random.nextLong: ((long) next(32) << 32) + next(32)
    hi, lo = (_signed(v, 32) for v in _lcg_draws(42, [32, 32]))
    assert _signed(((hi << 32) + lo) % (1 << 64), 64) == -5025562857975149833
    assert JavaRandom(42).next_long() == -5025562857975149833


def test_next_double_seed_42():
    # Random.nextDouble: (((long) next(26) << 27) + next(27)) * 2^-53
    a, b = _lcg_draws(42, [26, 27])
    assert ((a << 27) + b) / 2.0 ** 53 == 0.7275636800328681
    assert JavaRandom(42).next_double() == 0.7275636800328681


def test_next_boolean_seed_42():
    assert _lcg_draws(42, [1]) == [1]
    assert JavaRandom(42).next_boolean() is True


def test_sequences_match_java_17():
    r = JavaRandom(-7)
    assert [r.next_long() for _ in range(5)] == [
        4964420944606563203, -6028743012628894217, -8826958116857042465,
        -2732364192705608872, 1581709715777812225]
    r = JavaRandom(123456789)
    assert [r.next_double() for _ in range(5)] == [
        0.664038103272266, 0.45695178590520646, 0.39050647939140426,
        0.8933411602003871, 0.749641708001546]
    r = JavaRandom(0)
    assert [r.next_boolean() for _ in range(8)] == [
        True, True, False, True, True, False, True, False]
    r = JavaRandom(42)
    assert [r.next_int(10), r.next_int(7), r.next_int(1 << 20), r.next_int(2**31 - 1)] == [
        0, 5, 716411, 102948884]


def test_collections_shuffle_matches_java_17():
    items = list(range(10))
    collections_shuffle(items, JavaRandom(42))
    assert items == [4, 6, 2, 1, 7, 9, 8, 5, 3, 0]
    items = list(range(6))
    collections_shuffle(items, JavaRandom(7))
    assert items == [3, 0, 1, 2, 5, 4]
    one = [0]
    collections_shuffle(one, JavaRandom(7))
    assert one == [0]


def test_collections_shuffle_draws_next_int_from_size_down_to_2():
    # Collections.shuffle: for i = size..2: swap(i - 1, rnd.nextInt(i))
    items = list("abcde")
    expected = list(items)
    r = JavaRandom(99)
    for i in range(len(expected), 1, -1):
        j = r.next_int(i)
        expected[i - 1], expected[j] = expected[j], expected[i - 1]
    collections_shuffle(items, JavaRandom(99))
    assert items == expected


# -- Integer.parseInt / Long.parseLong (results printed by Java 17) ----------------------------
@pytest.mark.parametrize("text, value", [
    ("+5", 5), ("-0", 0), ("-2147483648", -2147483648), ("2147483647", 2147483647),
    ("\u0663\u0664", 34),          # Arabic-Indic digits: Character.digit accepts category Nd
    ("\uff11\uff12", 12),          # full-width digits, likewise
])
def test_parse_int_accepts_what_java_accepts(text, value):
    assert java_parse_int(text) == value


@pytest.mark.parametrize("text", [
    " 5", "5 ", "1_000", "2147483648", "-2147483649", "+", "-", "", "0x1",
    "\u00b2",                      # superscript two: a digit to Python's isdigit, not to Java
    "\u2167",                      # Roman numeral eight
    "\U0001d7ce",                  # mathematical bold zero: two UTF-16 surrogates to Java
])
def test_parse_int_refuses_what_java_refuses(text):
    with pytest.raises(ValueError, match="For input string"):
        java_parse_int(text)


def test_parse_long_range():
    assert java_parse_long("-9223372036854775808") == -(2**63)
    assert java_parse_long("9223372036854775807") == 2**63 - 1
    with pytest.raises(ValueError):
        java_parse_long("9223372036854775808")


@pytest.mark.parametrize("line, parts", [
    (" foo 0 1", ["", "foo", "0", "1"]),       # a leading separator: leading empty string
    ("foo 0 1 ", ["foo", "0", "1"]),           # trailing empty strings are dropped
    ("foo\x0b0\x0c1", ["foo", "0", "1"]),      # \s is [ \t\n\x0B\f\r]
    ("foo\u00a00 1", ["foo\u00a00", "1"]),     # no-break space is not \s in Java
    ("foo\u20020 1", ["foo\u20020", "1"]),
    ("foo\x1c0 1", ["foo\x1c0", "1"]),         # Python's str.split would split here
    ("", [""]),                                # no match: the input itself
    ("   ", []),
])
def test_split_whitespaces_matches_java_pattern_split(line, parts):
    assert java_split_whitespaces(line) == parts


# -- String.hashCode, int arithmetic, HashMap / Hashtable iteration (printed by Java 17) ---------
def test_string_hash_code_matches_java():
    assert java_string_hash("") == 0
    assert java_string_hash("a") == 97
    assert java_string_hash("hello") == 99162322


def test_int_overflow_and_utils_abs():
    assert to_int32(2**31) == -(2**31)
    assert to_int32(2**32 + 5) == 5
    assert utils_abs(-(2**31)) == 0         # Math.abs(MIN_VALUE) overflows: Utils.abs gives 0
    assert utils_abs(-7) == 7


_KEYS = ["k0", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9", "k10", "k11", "Aa", "BB",
         "zz", "min.insync.replicas", "segment.bytes"]


@pytest.mark.parametrize(("keys", "java"), [
    # new Hashtable<>(), put in this order, Collections.list(t.keys()), Java 17
    ([f"k{i}" for i in range(12)],            # the ninth put rehashes 11 -> 23 buckets
     [f"k{i}" for i in range(11, -1, -1)]),
    (["min.insync.replicas", "segment.bytes", "cleanup.policy", "retention.ms",
      "unclean.leader.election.enable"],
     ["segment.bytes", "retention.ms", "unclean.leader.election.enable", "cleanup.policy",
      "min.insync.replicas"]),
    (list("abcdefghijklmnopqrst"), list("tsrqponmlkjihgfedcba")),
])
def test_hashtable_iteration_order_matches_java(keys, java):
    assert java_hashtable_iteration_order(keys, java_string_hash) == java


@pytest.mark.parametrize(("capacity", "java"), [
    # new HashMap<>(capacity), put _KEYS in order, keySet(), Java 17
    (1, ["Aa", "BB", "zz", "k0", "k1", "k2", "k3", "k4", "k5", "k11", "min.insync.replicas",
         "k6", "k10", "k7", "k8", "k9", "segment.bytes"]),
    (3, ["Aa", "BB", "zz", "k0", "k1", "k2", "k3", "k4", "k5", "k11", "min.insync.replicas",
         "k6", "k10", "k7", "k8", "k9", "segment.bytes"]),
    (64, ["Aa", "BB", "zz", "k11", "min.insync.replicas", "k10", "segment.bytes", "k0", "k1",
          "k2", "k3", "k4", "k5", "k6", "k7", "k8", "k9"]),
])
def test_hashmap_with_an_initial_capacity_iterates_like_java(capacity, java):
    assert java_hashmap_iteration_order(_KEYS, java_string_hash, capacity) == java
