"""The core data path: Kafka's replication rules and the objects that run them on one broker.

Partition, ReplicaManager (produce, fetch, the purgatories), the replica fetcher, fetch sessions,
the log and its leader-epoch cache and checkpoint files, producer state, the RPC messages and
error codes. It does no I/O and imports nothing from the runtime: ``interfaces`` declares what it
needs from the broker around it, and ``fake.FakeContext`` drives one piece alone in tests.
"""
