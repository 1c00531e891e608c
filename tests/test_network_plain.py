"""``Network.plain`` (the one flag Cluster.send reads per message) follows every fault that can
change a message's fate or latency, set and cleared through the Cluster's fault API."""

from kafkasim.cluster import Cluster


def _cluster() -> Cluster:
    c = Cluster(brokers=3, seed=3, kafka_version="3.7")
    c.create_topic("t", partitions=1, replication_factor=3)
    c.run(1000)
    return c


def _consistent(net) -> bool:
    return net.plain == (not (net.groups or net.cut_links or net.holds or net.drops
                              or net.delays or net.extra_latency))


def test_plain_follows_each_fault_and_its_undoing():
    c = _cluster()
    net = c.network
    assert net.plain
    steps = [
        (lambda: c.partition_network([1], [2, 3]), False),
        (c.heal, True),
        (lambda: c.cut(1, 2), False),
        (c.heal, True),
        (lambda: c.hold("FetchResponse", dst=2), False),
        (lambda: c.release("FetchResponse", dst=2), True),
        (lambda: c.drop("FetchRequest", src=3), False),
        (c.undrop, True),
        (lambda: c.delay(40, "FetchRequest"), False),
        (c.undelay, True),
        (lambda: c.slow(2, network_ms=30), False),
        (lambda: c.slow(2, network_ms=0), True),
    ]
    for step, plain in steps:
        step()
        assert net.plain is plain, step
        assert _consistent(net)
        c.run(50)


def test_a_delay_set_while_plain_changes_delivery_times():
    # the fast path of Cluster.send skips delays and extra latency only while plain
    fast, slow = _cluster(), _cluster()
    slow.delay(40, "FetchRequest")
    slow.run(200)
    fast.run(200)
    def fetch_recv(c):
        return [r[0] for r in c.trace.rows if r[1] == "recv" and r[5][0] == "FetchRequest"]
    assert fetch_recv(slow) != fetch_recv(fast)
