"""LogOffsetMetadata and LocalLog's directory names, ported from Kafka's
storage/src/test/java/org/apache/kafka/storage/internals/log/LogOffsetMetadataTest.java
(3.9.0-rc3; the same at 4.1.0), against ``kafkasim.core.log.LogOffsetMetadata``.

``new LogOffsetMetadata(offset)`` is ``LogOffsetMetadata(offset)`` (only the message offset
known), ``new LogOffsetMetadata(offset, segmentBaseOffset, position)`` the three fields;
Kafka's KafkaException is ``kafkasim.core.errors.KafkaException``. Scenarios and code are our
own; each test names the Kafka test it follows."""

from __future__ import annotations

import re

import pytest

from kafkasim.core.errors import KafkaException
from kafkasim.core.log import (
    UNKNOWN_OFFSET_METADATA,
    LogOffsetMetadata,
    log_delete_dir_name,
    log_dir_name,
    parse_topic_partition_name,
)


def test_on_older_segment():
    """LogOffsetMetadataTest.testOnOlderSegment @3.9.0."""
    m1 = LogOffsetMetadata(1, 0, 1)
    m2 = LogOffsetMetadata(5, 4, 2)
    only = LogOffsetMetadata(1)
    assert not UNKNOWN_OFFSET_METADATA.on_older_segment(UNKNOWN_OFFSET_METADATA)
    assert not m1.on_older_segment(only)
    assert not only.on_older_segment(m1)
    assert not m1.on_older_segment(m1)
    assert not m2.on_older_segment(m1)
    assert m1.on_older_segment(m2)


def test_position_diff():
    """LogOffsetMetadataTest.testPositionDiff @3.9.0."""
    m1 = LogOffsetMetadata(1)
    m2 = LogOffsetMetadata(5, 0, 5)
    with pytest.raises(KafkaException, match="since it only has message offset info$"):
        m1.position_diff(m2)
    with pytest.raises(KafkaException, match="since it only has message offset info$"):
        m2.position_diff(m1)
    m3 = LogOffsetMetadata(15, 10, 5)
    with pytest.raises(KafkaException, match="since they are not on the same segment$"):
        m3.position_diff(m2)
    m4 = LogOffsetMetadata(40, 10, 100)
    assert m4.position_diff(m3) == 95


def test_message_offset_only():
    """LogOffsetMetadataTest.testMessageOffsetOnly @3.9.0."""
    assert UNKNOWN_OFFSET_METADATA.message_offset_only()
    assert not LogOffsetMetadata(1, 0, 1).message_offset_only()
    assert LogOffsetMetadata(1).message_offset_only()
    assert UNKNOWN_OFFSET_METADATA == LogOffsetMetadata(-1, -1, -1)


def test_on_same_segment():
    """LogOffsetMetadataTest.testOnSameSegment @3.9.0."""
    m1 = LogOffsetMetadata(1, 0, 1)
    m2 = LogOffsetMetadata(5, 4, 2)
    m3 = LogOffsetMetadata(10, 4, 200)
    assert not m1.on_same_segment(m2)
    assert m2.on_same_segment(m3)
    assert not LogOffsetMetadata(50).on_same_segment(LogOffsetMetadata(100))


def test_to_string():
    """LogOffsetMetadata.toString (the text positionDiff's messages start with)."""
    assert str(LogOffsetMetadata(40, 10, 100)) == "(offset=40, segment=[10:100])"
    assert str(LogOffsetMetadata(7)) == "(offset=7, segment=[-1:-1])"


# --- LocalLogTest's directory names (storage LocalLogTest.java @4.1.0; LocalLogTest.scala
# @3.9.0): LocalLog.parseTopicPartitionName / logDeleteDirName are module functions of
# kafkasim.core.log taking the directory's name (Kafka: a File) ----------------------------------

UID = "0123456789abcdef0123456789abcdef"   # Kafka: a random UUID without its dashes


def test_parse_topic_partition_name():
    """LocalLogTest.testParseTopicPartitionName @4.1.0."""
    assert parse_topic_partition_name(f"/tmp/kafka-logs/{log_dir_name('test_topic', 143)}") == \
        ("test_topic", 143)


def test_parse_topic_partition_name_with_period_for_deleted_topic():
    """LocalLogTest.testParseTopicPartitionNameWithPeriodForDeletedTopic @4.1.0."""
    name = log_delete_dir_name("foo.bar-testtopic", 42, UID)
    assert parse_topic_partition_name(name) == ("foo.bar-testtopic", 42)


@pytest.mark.parametrize("name", [
    "",                                   # ForEmptyName
    None,                                 # ForNull
    "test_topic1999",                     # ForMissingSeparator
    "test_topic1999.-delete",
    "-1999",                              # ForMissingTopic
    log_delete_dir_name("", 1999, UID),
    "kafka-logstest_topic-",              # ForMissingPartition
    "test_topic-.-delete",
    "test_topic-1999a",                   # ForInvalidPartition
    "test_topic1999a.-delete",
    "non_kafka_dir",                      # ForExistingInvalidDir
    "non_kafka_dir-delete",
])
def test_parse_topic_partition_name_refuses(name):
    """LocalLogTest.testParseTopicPartitionNameForEmptyName / ForNull / ForMissingSeparator /
    ForMissingTopic / ForMissingPartition / ForInvalidPartition / ForExistingInvalidDir @4.1.0:
    a KafkaException."""
    with pytest.raises(KafkaException):
        parse_topic_partition_name(name)


def test_log_delete_dir_name():
    """LocalLogTest.testLogDeleteDirName @4.1.0: ``topic-partition.uniqueId-delete``, at most
    255 characters (a long topic is cut)."""
    name = log_delete_dir_name("foo", 3, UID)
    assert re.fullmatch(r"foo-3\.[0-9a-z]{32}-delete", name)
    long_name = log_delete_dir_name("n" + "o" * 248, 5, UID)
    assert len(long_name) == 255
    assert re.fullmatch(r"n[o]{212}-5\.[0-9a-z]{32}-delete", long_name)
    assert parse_topic_partition_name(long_name) == ("n" + "o" * 212, 5)
