"""StripedReplicaPlacer's BrokerList by Kafka's names (StripedReplicaPlacerTest.testBrokerList,
trunk 1eb7644; the rest of the class is ported in tests/test_striped_placer.py)."""

from __future__ import annotations

from kafkasim.control.kraft.striped_placer import BrokerList


# StripedReplicaPlacerTest.testBrokerList: the shared empty list
def test_the_empty_broker_list():
    assert BrokerList.EMPTY.size() == 0
    assert BrokerList.EMPTY.next(1) == -1 and BrokerList.EMPTY.next(2) == -1
    brokers = BrokerList().add(0).add(1)
    assert brokers is not BrokerList.EMPTY and BrokerList.EMPTY.size() == 0
