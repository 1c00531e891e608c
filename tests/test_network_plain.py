"""``Network.plain`` (the one flag Transport.send reads per message) follows every fault that can
change a message's fate or latency, set and cleared through the Cluster's fault API."""

from clusters import make_cluster

from kafkasim.runtime.cluster import Cluster


def _cluster() -> Cluster:
    return make_cluster(seed=3, kafka_version="3.7", topic="t", settle_ms=1000)


def _consistent(net) -> bool:
    return net.plain == (not (net.groups or net.cut_links or net.holds or net.drops
                              or net.delays or net.extra_latency))


def test_plain_follows_each_fault_and_its_undoing():
    c = _cluster()
    net = c.transport.network
    assert net.plain
    steps = [
        (lambda: c.partition_network([1], [2, 3]), False),
        (c.heal, True),
        (lambda: c.cut(1, 2), False),
        (c.heal, True),
        (lambda: c.hold("FetchResponse", dst=2), False),
        (lambda: c.release("FetchResponse", dst=2), True),
        (lambda: c.transport.drop("FetchRequest", src=3), False),
        (net.undrop, True),
        (lambda: c.delay(40, "FetchRequest"), False),
        (net.undelay, True),
        (lambda: c.slow(2, network_ms=30), False),
        (lambda: c.slow(2, network_ms=0), True),
    ]
    for step, plain in steps:
        step()
        assert net.plain is plain, step
        assert _consistent(net)
        c.run(50)


def test_a_delay_set_while_plain_changes_delivery_times():
    # the fast path of Transport.send skips delays and extra latency only while plain
    fast, slow = _cluster(), _cluster()
    slow.delay(40, "FetchRequest")
    slow.run(200)
    fast.run(200)
    def fetch_recv(c):
        return [r[0] for r in c.trace.rows if r[1] == "recv" and r[5][0] == "FetchRequest"]
    assert fetch_recv(slow) != fetch_recv(fast)


def test_deliver_events_carry_the_envelope_fields_flat_on_both_paths():
    """A "deliver" event's args are kafkasim.runtime.network.DELIVERY, whether the send took the
    plain
    path or Network.envelope (a delay is set), and for a held message released later; the
    Envelope rebuilt from them is the one messages_in_flight shows."""
    from kafkasim.runtime.network import DELIVERY, delivery_envelope

    c = _cluster()
    p = c.producer(acks="all", linger_ms=0)
    for setup in (lambda: None, lambda: c.delay(3, "FetchRequest"),
                  lambda: (c.hold("FetchResponse"), c.run(20), c.release("FetchResponse"))):
        p.send("t", "v")
        setup()
        assert c.run_until(lambda cl: any(e.kind == "deliver"
                                          for e in cl.engine.pending_events()), 100)
        events = [e for e in c.engine.pending_events() if e[2] == "deliver"]
        assert events
        for t, _seq, _kind, args in events:
            assert len(args) in (len(DELIVERY), len(DELIVERY) - 1)
            env = delivery_envelope(args)
            assert (env.src, env.dst, env.msg, env.sent_ms, env.msg_id) == tuple(args[:5])
            assert env.sent_ms <= t and args[5] == c.transport.network.incarnations.get(env.dst, 0)
        shown = {r["msg_id"]: r for r in c.inspect.messages_in_flight() if not r["held"]}
        for t, _seq, _kind, args in events:
            assert shown[args[4]]["arrives_ms"] == t and shown[args[4]]["src"] == args[0]
        c.heal()
        c.run(50)
