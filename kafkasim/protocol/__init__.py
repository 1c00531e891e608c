"""The replication protocol: Kafka's rules as I/O-free state machines driven by the broker layer."""
