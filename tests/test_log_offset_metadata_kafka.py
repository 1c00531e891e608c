"""LogOffsetMetadata, ported from Kafka's
storage/src/test/java/org/apache/kafka/storage/internals/log/LogOffsetMetadataTest.java
(3.9.0-rc3; the same at 4.1.0), against ``kafkasim.core.log.LogOffsetMetadata``.

``new LogOffsetMetadata(offset)`` is ``LogOffsetMetadata(offset)`` (only the message offset
known), ``new LogOffsetMetadata(offset, segmentBaseOffset, position)`` the three fields;
Kafka's KafkaException is ``kafkasim.core.errors.KafkaException``. Scenarios and code are our
own; each test names the Kafka test it follows."""

from __future__ import annotations

import pytest

from kafkasim.core.errors import KafkaException
from kafkasim.core.log import UNKNOWN_OFFSET_METADATA, LogOffsetMetadata


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
