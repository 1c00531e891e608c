"""Shared set-up for the consumer truncation tests (KIP-320): a leader that holds records its only
follower never got, about to be replaced by an unclean election."""

from __future__ import annotations

from kafkasim.runtime.cluster import Cluster


def leader_ahead_of_its_follower(version: str):
    """Broker 1 leads t-0 (epoch 0) with offsets 0-9; broker 2, out of the ISR since its
    FetchResponses from 1 are held, has only 0-4. Unclean election is on, min ISR 1.
    Returns (cluster, producer)."""
    c = Cluster([4, 1, 2], seed=1, kafka_version=version,
                config={"replica.lag.time.max.ms": 2000})
    c.create_topic("t", 1, 2, assignment=[[1, 2]],
                   config={"unclean.leader.election.enable": True, "min.insync.replicas": 1})
    p = c.producer(acks="1", retries=5)
    for i in range(5):
        p.send("t", f"r{i}", partition=0)
    c.run(1000)
    c.hold("FetchResponse", 1, 2)
    for i in range(5, 10):
        p.send("t", f"r{i}", partition=0)
    c.run(6000)
    assert c.isr("t", 0) == [1]
    return c, p


def elect_the_follower_uncleanly(c, p, new_records: int) -> None:
    """Broker 1 dies; broker 2 is elected uncleanly (epoch 1) and takes ``new_records`` new
    records from offset 5: offsets 5-9 of epoch 0 are gone."""
    c.crash(1)
    c.run_until(lambda cl: cl.leader("t", 0) == 2, 30000)
    c.release()
    c.run(500)
    for i in range(5, 5 + new_records):
        p.send("t", f"n{i}", partition=0)
    c.run(1000)
    assert c.inspect.partition_state("t", 0)["leader_epoch"] == 1
