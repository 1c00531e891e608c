"""auto.offset.reset=by_duration (KIP-1106, clients 4.0): Kafka's AutoOffsetResetStrategyTest
(clients/src/test/java/org/apache/kafka/clients/consumer/internals/, the 4.0 branch at
4ae681446f), ported to ``kafkasim.runtime.clients.subscription_state.AutoOffsetResetStrategy``
and the consumer config's validator, then the strategy end to end: a consumer without a
committed offset starts at the first record at most that long ago (ListOffsets with now less
the duration; ``OffsetFetcherUtils.handleListOffsetResponse`` leaves out an UNKNOWN_OFFSET
answer, so a partition with no such record keeps waiting for its reset).

How they are adapted: ``fromString`` is ``from_string`` and raises IllegalArgumentException (a
ValueError); the Validator is the consumer config's (``consumer_config`` at 4.0 raises
ConfigError); ``timestamp()`` takes the simulated clock (Kafka reads Instant.now()), and Java's
``Optional.empty()`` is None. Record timestamps are the leader's append times (the simulated
ms), so "PT3S" means three simulated seconds.
"""

from __future__ import annotations

import pytest

from kafkasim.core.errors import IllegalArgumentException
from kafkasim.runtime.clients.subscription_state import AutoOffsetResetStrategy as S
from kafkasim.runtime.cluster import Cluster
from kafkasim.settings.config import CONSUMER, ConfigError, consumer_config
from kafkasim.settings.javautil import java_duration_parse, java_duration_string

INVALID = ["invalid", "by_duration:invalid", "by_duration:-PT1H", "by_duration:", "by_duration",
           "LATEST", "EARLIEST", "NONE", "", None]


def test_from_string():
    """testFromString."""
    assert S.from_string("earliest") == S.EARLIEST
    assert S.from_string("latest") == S.LATEST
    assert S.from_string("none") == S.NONE
    for value in INVALID:
        with pytest.raises(IllegalArgumentException):
            S.from_string(value)
    assert S.from_string("by_duration:PT1H").name == "by_duration"


@pytest.mark.parametrize("value", ["earliest", "latest", "none", "by_duration:PT1H"])
def test_validator_accepts(value):
    """testValidator, the values it accepts."""
    assert consumer_config({"auto.offset.reset": value}, "4.0")["auto.offset.reset"] == value


@pytest.mark.parametrize("value", INVALID)
def test_validator_refuses(value):
    """testValidator, the values it refuses, with Kafka's message."""
    with pytest.raises(ConfigError, match="The value must be either 'earliest', 'latest', "
                                          "'none' or of the format 'by_duration:<PnDTnHnMn.nS.>'"):
        consumer_config({"auto.offset.reset": value}, "4.0")


def test_validator_describes_itself_like_kafka():
    """Validator.toString: the strategy types in their declared order."""
    validator = CONSUMER["auto.offset.reset"].validator_for("4.0")
    assert str(validator) == "[latest, earliest, none, by_duration:PnDTnHnMn.nS]"


def test_before_4_0_the_value_is_refused():
    """The ValidString of latest, earliest and none before 4.0 (ConsumerConfig @3.9)."""
    with pytest.raises(ConfigError, match="String must be one of: latest, earliest, none"):
        consumer_config({"auto.offset.reset": "by_duration:PT1H"}, "3.9")


def test_equals_and_hash_code():
    """testEqualsAndHashCode."""
    earliest1, earliest2 = S.from_string("earliest"), S.from_string("earliest")
    latest1 = S.from_string("latest")
    duration1, duration2 = S.from_string("by_duration:P2D"), S.from_string("by_duration:P2D")
    assert earliest1 == earliest2 and hash(earliest1) == hash(earliest2)
    assert earliest1 != latest1 and hash(earliest1) != hash(latest1)
    assert latest1 != duration2
    assert duration1 == duration2 and hash(duration1) == hash(duration2)


def test_timestamp():
    """testTimestamp: EARLIEST_TIMESTAMP, LATEST_TIMESTAMP, none, and now less the duration."""
    assert S.from_string("earliest").timestamp() == -2
    assert S.from_string("latest").timestamp() == -1
    assert S.from_string("none").timestamp() is None
    by_duration = S.from_string("by_duration:PT1H")
    assert by_duration.timestamp(10_000_000) == 10_000_000 - 3_600_000
    assert by_duration == S.from_string("by_duration:PT1H") != S.from_string("by_duration:PT2H")
    # Instant.minus then toEpochMilli: a part of a millisecond rounds towards the past
    assert S.from_string("by_duration:PT0.0005S").timestamp(100) == 99
    with pytest.raises(ValueError, match=r"timestamp\(cluster.now\)"):
        by_duration.timestamp()


@pytest.mark.parametrize("text,nanos", [
    ("PT1H", 3_600 * 10**9), ("P2D", 2 * 86_400 * 10**9), ("pt1m", 60 * 10**9),
    ("PT1H2M3.25S", 3_723_250_000_000), ("PT-1.5S", -1_500_000_000), ("-PT1H", -3_600 * 10**9),
    ("P-1DT25H", 3_600 * 10**9), ("PT1.S", 10**9), ("+P1D", 86_400 * 10**9)])
def test_java_duration_parse(text, nanos):
    """java.time.Duration.parse: days of 24 h, signed parts, a fraction of seconds."""
    assert java_duration_parse(text) == nanos


@pytest.mark.parametrize("text", ["P", "PT", "P1DT", "P1W", "P1Y", "PT.5S", "1H", "PT1H ", ""])
def test_java_duration_parse_refuses(text):
    with pytest.raises(ValueError, match="Text cannot be parsed to a Duration"):
        java_duration_parse(text)


# ------------------------------------------------------------------------------ end to end
def _cluster_with_records_every_second(n: int) -> Cluster:
    """A 4.0 cluster whose topic t got one record a second, the last one now."""
    c = Cluster(brokers=3, seed=1, kafka_version="4.0", controllers=3, latency_ms=1,
                jitter_ms=0)
    assert c.run_until(lambda cl: cl.controller_id() >= 0 and not any(
        b.lifecycle.is_fenced for b in cl.brokers.values()), 30_000)
    c.create_topic("t", 1, 3)
    p = c.producer(acks="all", linger_ms=0)
    for i in range(n):
        c.run(1000)
        p.send("t", f"v{i}", partition=0)
    p.flush()
    return c


def test_by_duration_starts_at_the_first_record_at_most_that_long_ago():
    """A consumer of group g (no committed offset) with by_duration:PT3.5S reads from the record
    appended at most 3.5 s before its ListOffsets; earliest reads everything, latest nothing."""
    c = _cluster_with_records_every_second(10)
    log = c.brokers[c.leader("t")].logs[("t", 0)]
    target = c.now - 3500
    first = next(i for i, ts in enumerate(log.timestamps) if ts >= target)
    assert 0 < first < 9
    cons = c.consumer(group="g", auto_offset_reset="by_duration:PT3.5S")
    cons.assign("t")
    got = cons.poll(2000)
    assert [r.offset for r in got] == list(range(first, 10))
    for policy, expected in (("earliest", list(range(10))), ("latest", [])):
        other = c.consumer(group=f"g-{policy}", auto_offset_reset=policy)
        other.assign("t")
        assert [r.offset for r in other.poll(2000)] == expected


def test_by_duration_past_every_record_waits_for_one():
    """No record is that recent: the ListOffsets answer is UNKNOWN_OFFSET (-1), which leaves the
    partition awaiting its reset (no position of -1); once a record is appended, the next poll's
    ListOffsets finds it and the consumer starts there."""
    c = _cluster_with_records_every_second(3)
    c.run(5000)
    cons = c.consumer(group="g", auto_offset_reset="by_duration:PT2S")
    cons.assign("t")
    assert cons.poll(500) == []
    subs = cons.subscriptions
    assert subs.is_offset_reset_needed(("t", 0)) and subs.position(("t", 0)) is None
    answers = [r for r in c.trace.rows if r[1] == "recv" and r[2] == cons.client_id
               and r[5][0] == "ListOffsetsResponse"]
    assert answers, "the consumer asked ListOffsets"
    c.producer(acks="all").send("t", "late", partition=0)
    c.run(100)
    got = cons.poll(2000)
    assert [(r.offset, r.value) for r in got] == [(3, "late")]


def test_strategies_survive_a_snapshot():
    """A pickled strategy (history snapshots, Spark) comes back equal; the three named ones as
    themselves, as the enum before 4.0's class did."""
    import pickle

    for value in ("earliest", "latest", "none"):
        strategy = S.from_string(value)
        assert pickle.loads(pickle.dumps(strategy)) is strategy
    by_duration = S.from_string("by_duration:PT1.5S")
    again = pickle.loads(pickle.dumps(by_duration))
    assert again == by_duration and again.duration_ns == 1_500_000_000


@pytest.mark.parametrize("text,shown", [("PT1H", "PT1H"), ("P2D", "PT48H"), ("PT90M", "PT1H30M"),
                                        ("PT1.5S", "PT1.5S"), ("PT0S", "PT0S"),
                                        ("PT0.000000001S", "PT0.000000001S")])
def test_java_duration_string(text, shown):
    """Duration.toString: hours, minutes, seconds (days as hours), the fraction's zeros dropped;
    the strategy's toString shows it."""
    assert java_duration_string(java_duration_parse(text)) == shown
    assert repr(S.from_string(f"by_duration:{text}")) == \
        f"AutoOffsetResetStrategy{{type=by_duration, duration={shown}}}"
